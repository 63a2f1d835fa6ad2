/* H5MD 1.1 trajectories through the HDF5 C library (h5md.h).
 *
 * Built in every configuration: with RICOCHET_HAVE_HDF5 the functions
 * write files, without it they return RC_H5MD_UNSUPPORTED, so callers
 * never need an #ifdef of their own. */
#define _POSIX_C_SOURCE 200809L
#include "h5md.h"
#include "xyz.h"

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void h5md_set_msg(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    if (!msg || size == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

int rc_h5md_is_hdf5(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F',
                                         '\r', '\n', 0x1a, '\n'};
    unsigned char head[8];
    FILE *f = fopen(path, "rb");
    int is = 0;
    if (!f)
        return 0;
    is = fread(head, 1, sizeof head, f) == sizeof head &&
         memcmp(head, sig, sizeof sig) == 0;
    fclose(f);
    return is;
}

#ifdef RICOCHET_HAVE_HDF5

#include <hdf5.h>

/* Chunks of the per-particle time series hold one frame, split into
 * pieces of at most this many bytes: a frame of 10^6 particles in 3-D
 * (24 MB of doubles) becomes 6 chunks of 4 MB, large enough for
 * streaming writes, small enough that a reader of a few particles or
 * one frame does not pull in a whole trajectory.  Chunks above HDF5's
 * default 1 MiB chunk cache are written straight to the file. */
#define H5MD_CHUNK_BYTES ((hsize_t)4 << 20)
/* Frames per chunk of the small series (step, time, box edges). */
#define H5MD_SERIES_CHUNK ((hsize_t)1024)

#define H5MD_NO_ID ((hid_t)H5I_INVALID_HID)

struct rc_h5md {
    hid_t file;
    hid_t pos, step, time; /* position/{value,step,time} */
    hid_t vel;             /* velocity/value, or H5MD_NO_ID */
    hid_t img;             /* image/value */
    hid_t edges;           /* box/edges/value */
    hid_t *obs;            /* observables/<name>/value [nobs] */
    hid_t obs_step, obs_time;
    int n, dim, with_velocity, nobs;
    hsize_t frames;        /* frames written completely */
    hsize_t rows;          /* observable rows written completely */
    int broken;            /* an append failed part-way */
    double box[3];
    char path[512];        /* for messages (truncated if longer) */
};

/* Where messages go, and whether one was already written (the first
 * failure is the one reported; clean-up failures after it are not). */
typedef struct h5md_ctx {
    char *msg;
    size_t size;
    const char *path;
    int failed;
} h5md_ctx;

/* HDF5's automatic error printing, switched off for the duration of one
 * public call and restored after it (the library never prints). */
typedef struct h5md_quiet {
    H5E_auto2_t func;
    void *data;
} h5md_quiet;

static void h5md_quiet_on(h5md_quiet *q)
{
    if (H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data) < 0) {
        q->func = NULL;
        q->data = NULL;
    }
    /* A failure here only means HDF5 may print; nothing to recover. */
    (void)H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void h5md_quiet_off(const h5md_quiet *q)
{
    (void)H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

/* The most specific entry of HDF5's error stack (walked upward: the
 * first entry is where the error was detected, e.g. the errno text of a
 * failed open). */
typedef struct h5md_reason {
    char text[320];
    int got;
} h5md_reason;

static herr_t h5md_walk(unsigned n, const H5E_error2_t *e, void *data)
{
    h5md_reason *r = (h5md_reason *)data;
    (void)n;
    if (!r->got && e && e->desc && e->desc[0]) {
        /* a failed write(2) comes as "file write failed: time = ...,
         * filename = ..., errno = 28, error message = 'No space left on
         * device', buf = 0x..., ...": keep the operating system's words */
        const char *os = strstr(e->desc, "error message = '");
        if (os) {
            /* what failed (the words before the first ',' or ':', e.g.
             * "file write failed", "unable to lock file") and why */
            const char *end;
            int what = (int)strcspn(e->desc, ",:");
            os += strlen("error message = '");
            end = strchr(os, '\'');
            snprintf(r->text, sizeof r->text, "%.*s: %.*s",
                     what < 120 ? what : 120, e->desc,
                     end ? (int)(end - os) : 200, os);
        } else {
            snprintf(r->text, sizeof r->text, "%s", e->desc);
        }
        r->got = 1;
    }
    return 0;
}

/* HDF5 cannot close a file whose metadata it cannot write (a full disk):
 * the file stays open in the library, whose exit handler would then print
 * "HDF5: infinite loop closing library" and a line of object codes to the
 * user's terminal.  After such a failure the library is shut down here,
 * its stderr muted for the call (the library never prints): every HDF5
 * object of the process is released, and the next HDF5 call starts the
 * library afresh. */
static void h5md_release_library(void)
{
    int saved, devnull;
    fflush(stderr);
    saved = dup(2);
    devnull = open("/dev/null", O_WRONLY);
    if (saved >= 0 && devnull >= 0)
        dup2(devnull, 2);
    (void)H5close();
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
    if (devnull >= 0)
        close(devnull);
}

/* Record "PATH: CALL failed: REASON" once, and clear HDF5's stack. */
static void h5md_fail(h5md_ctx *c, const char *call)
{
    h5md_reason r;
    r.text[0] = '\0';
    r.got = 0;
    if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5md_walk, &r) < 0)
        r.got = 0;
    (void)H5Eclear2(H5E_DEFAULT);
    if (c->failed)
        return;
    c->failed = 1;
    if (r.got)
        h5md_set_msg(c->msg, c->size, "%s: %s failed: %s", c->path, call,
                     r.text);
    else
        h5md_set_msg(c->msg, c->size, "%s: %s failed", c->path, call);
}

/* Evaluate an HDF5 call (hid_t or herr_t); negative: record, go to done. */
#define H5MD_TRY(c, expr, call)                                              \
    do {                                                                     \
        if ((expr) < 0) {                                                    \
            h5md_fail((c), (call));                                          \
            goto done;                                                       \
        }                                                                    \
    } while (0)

/* Close an id in a clean-up path; a failure is recorded unless an
 * earlier one was. */
static void h5md_close_id(h5md_ctx *c, hid_t *id, herr_t (*fn)(hid_t),
                          const char *call)
{
    if (*id >= 0 && fn(*id) < 0)
        h5md_fail(c, call);
    *id = H5MD_NO_ID;
}

/* ------------------------------------------------------------ attributes */

/* Integer attribute: count 0 is a scalar, else a vector of count. */
static int h5md_attr_int(h5md_ctx *c, hid_t loc, const char *name,
                         const int *vals, int count)
{
    hid_t space = H5MD_NO_ID, attr = H5MD_NO_ID;
    hsize_t dims[1];
    int rc = -1;
    dims[0] = (hsize_t)count;
    if (count > 0)
        H5MD_TRY(c, space = H5Screate_simple(1, dims, NULL),
                 "H5Screate_simple (attribute)");
    else
        H5MD_TRY(c, space = H5Screate(H5S_SCALAR), "H5Screate (attribute)");
    H5MD_TRY(c,
             attr = H5Acreate2(loc, name, H5T_STD_I32LE, space, H5P_DEFAULT,
                               H5P_DEFAULT),
             name);
    H5MD_TRY(c, H5Awrite(attr, H5T_NATIVE_INT, vals), "H5Awrite");
    rc = 0;
done:
    h5md_close_id(c, &attr, H5Aclose, "H5Aclose");
    h5md_close_id(c, &space, H5Sclose, "H5Sclose");
    return c->failed ? -1 : rc;
}

/* Variable-length ASCII string attribute: count 0 is a scalar of s[0],
 * else a vector of count strings.  Variable length, because h5py hands
 * such attributes to Python as str (fixed-length ones come as bytes,
 * which MDAnalysis's H5MD reader does not take for a unit). */
static int h5md_attr_str(h5md_ctx *c, hid_t loc, const char *name,
                         const char *const *s, int count)
{
    hid_t type = H5MD_NO_ID, space = H5MD_NO_ID, attr = H5MD_NO_ID;
    hsize_t dims[1];
    int rc = -1;
    H5MD_TRY(c, type = H5Tcopy(H5T_C_S1), "H5Tcopy");
    H5MD_TRY(c, H5Tset_size(type, H5T_VARIABLE), "H5Tset_size");
    H5MD_TRY(c, H5Tset_cset(type, H5T_CSET_ASCII), "H5Tset_cset");
    dims[0] = (hsize_t)count;
    if (count > 0)
        H5MD_TRY(c, space = H5Screate_simple(1, dims, NULL),
                 "H5Screate_simple (attribute)");
    else
        H5MD_TRY(c, space = H5Screate(H5S_SCALAR), "H5Screate (attribute)");
    H5MD_TRY(c,
             attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT,
                               H5P_DEFAULT),
             name);
    /* the buffer of a variable-length string type is the array of
     * pointers (HDF5 only reads through them) */
    H5MD_TRY(c, H5Awrite(attr, type, (const void *)s), "H5Awrite");
    rc = 0;
done:
    h5md_close_id(c, &attr, H5Aclose, "H5Aclose");
    h5md_close_id(c, &space, H5Sclose, "H5Sclose");
    h5md_close_id(c, &type, H5Tclose, "H5Tclose");
    return c->failed ? -1 : rc;
}

/* ------------------------------------------------------------- datasets */

/* Rows per chunk when n rows of row_bytes each are split into the fewest
 * chunks of at most H5MD_CHUNK_BYTES, balanced (n >= 1). */
static hsize_t h5md_chunk_rows(hsize_t n, hsize_t row_bytes)
{
    hsize_t per = H5MD_CHUNK_BYTES / row_bytes, pieces;
    if (per < 1)
        per = 1;
    pieces = (n + per - 1) / per;
    return (n + pieces - 1) / pieces;
}

/* An empty extensible dataset [0][tail...] (ntail <= 2) in loc, chunked
 * by chunk[0..ntail], file type ftype (elem bytes); fill 0 when asked
 * (frames not written read as 0). */
static int h5md_series(h5md_ctx *c, hid_t loc, const char *name,
                       hid_t ftype, int ntail, const hsize_t *tail,
                       const hsize_t *chunk, int fill_zero, hid_t *out)
{
    hid_t space = H5MD_NO_ID, dcpl = H5MD_NO_ID, d = H5MD_NO_ID;
    hsize_t dims[3], maxd[3];
    int k, zero = 0, rc = -1;
    dims[0] = 0;
    maxd[0] = H5S_UNLIMITED;
    for (k = 0; k < ntail; ++k)
        dims[k + 1] = maxd[k + 1] = tail[k];
    H5MD_TRY(c, space = H5Screate_simple(ntail + 1, dims, maxd),
             "H5Screate_simple");
    H5MD_TRY(c, dcpl = H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate (dcpl)");
    H5MD_TRY(c, H5Pset_chunk(dcpl, ntail + 1, chunk), "H5Pset_chunk");
    if (fill_zero)
        H5MD_TRY(c, H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &zero),
                 "H5Pset_fill_value");
    H5MD_TRY(c,
             d = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl,
                            H5P_DEFAULT),
             name);
    *out = d;
    d = H5MD_NO_ID;
    rc = 0;
done:
    h5md_close_id(c, &d, H5Dclose, "H5Dclose");
    h5md_close_id(c, &dcpl, H5Pclose, "H5Pclose");
    h5md_close_id(c, &space, H5Sclose, "H5Sclose");
    return c->failed ? -1 : rc;
}

/* Grow dataset d [frame][tail...] to frame + 1 rows and, when buf is
 * given, write row `frame` from buf (memory type mtype). */
static int h5md_put_row(h5md_ctx *c, hid_t d, hsize_t frame, int ntail,
                        const hsize_t *tail, hid_t mtype, const void *buf,
                        const char *what)
{
    hid_t fs = H5MD_NO_ID, ms = H5MD_NO_ID;
    hsize_t dims[3], start[3], count[3];
    int k, rc = -1;
    dims[0] = frame + 1;
    start[0] = frame;
    count[0] = 1;
    for (k = 0; k < ntail; ++k) {
        dims[k + 1] = count[k + 1] = tail[k];
        start[k + 1] = 0;
    }
    H5MD_TRY(c, H5Dset_extent(d, dims), what);
    if (buf) {
        H5MD_TRY(c, fs = H5Dget_space(d), "H5Dget_space");
        H5MD_TRY(c,
                 H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count,
                                     NULL),
                 "H5Sselect_hyperslab");
        H5MD_TRY(c, ms = H5Screate_simple(ntail + 1, count, NULL),
                 "H5Screate_simple");
        H5MD_TRY(c, H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, buf), what);
    }
    rc = 0;
done:
    h5md_close_id(c, &ms, H5Sclose, "H5Sclose");
    h5md_close_id(c, &fs, H5Sclose, "H5Sclose");
    return c->failed ? -1 : rc;
}

/* step and time of group g: hard links to position's (H5MD lets data
 * elements sampled together share them; one dataset to extend). */
static int h5md_link_clock(h5md_ctx *c, hid_t file, hid_t g)
{
    H5MD_TRY(c,
             H5Lcreate_hard(file, "particles/all/position/step", g, "step",
                            H5P_DEFAULT, H5P_DEFAULT),
             "H5Lcreate_hard (step)");
    H5MD_TRY(c,
             H5Lcreate_hard(file, "particles/all/position/time", g, "time",
                            H5P_DEFAULT, H5P_DEFAULT),
             "H5Lcreate_hard (time)");
    return 0;
done:
    return -1;
}

/* The H5MD `unit` attribute of dataset d (nothing when unit is NULL). */
static int h5md_unit(h5md_ctx *c, hid_t d, const char *unit)
{
    if (!unit)
        return 0;
    return h5md_attr_str(c, d, "unit", &unit, 0);
}

/* A time-independent dataset name[n] of loc (file type ftype) written
 * from buf (memory type mtype); *out keeps it open when out is given. */
static int h5md_fixed(h5md_ctx *c, hid_t loc, const char *name, hid_t ftype,
                      hid_t mtype, hsize_t n, const void *buf, hid_t *out)
{
    hid_t space = H5MD_NO_ID, d = H5MD_NO_ID;
    H5MD_TRY(c, space = H5Screate_simple(1, &n, NULL), "H5Screate_simple");
    H5MD_TRY(c,
             d = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT),
             name);
    H5MD_TRY(c, H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf),
             name);
    if (out) {
        *out = d;
        d = H5MD_NO_ID;
    }
done:
    h5md_close_id(c, &d, H5Dclose, "H5Dclose");
    h5md_close_id(c, &space, H5Sclose, "H5Sclose");
    return c->failed ? -1 : 0;
}

static void h5md_free(h5md_ctx *c, rc_h5md *h)
{
    h5md_close_id(c, &h->pos, H5Dclose, "H5Dclose (position)");
    h5md_close_id(c, &h->step, H5Dclose, "H5Dclose (step)");
    h5md_close_id(c, &h->time, H5Dclose, "H5Dclose (time)");
    h5md_close_id(c, &h->vel, H5Dclose, "H5Dclose (velocity)");
    h5md_close_id(c, &h->img, H5Dclose, "H5Dclose (image)");
    h5md_close_id(c, &h->edges, H5Dclose, "H5Dclose (edges)");
    if (h->obs) {
        int k;
        for (k = 0; k < h->nobs; ++k)
            h5md_close_id(c, &h->obs[k], H5Dclose, "H5Dclose (observable)");
    }
    h5md_close_id(c, &h->obs_step, H5Dclose, "H5Dclose (observable step)");
    h5md_close_id(c, &h->obs_time, H5Dclose, "H5Dclose (observable time)");
    h5md_close_id(c, &h->file, H5Fclose, "H5Fclose");
    free(h->obs);
    free(h);
}

/* A handle with no HDF5 object open yet (NULL when out of memory). */
static rc_h5md *h5md_new(const char *path, int n, int dim,
                         const double *box_lengths, int with_velocity,
                         int nobs)
{
    rc_h5md *h = (rc_h5md *)calloc(1, sizeof *h);
    int k;
    if (!h)
        return NULL;
    h->file = h->pos = h->step = h->time = H5MD_NO_ID;
    h->vel = h->img = h->edges = H5MD_NO_ID;
    h->obs_step = h->obs_time = H5MD_NO_ID;
    if (nobs > 0) {
        h->obs = (hid_t *)malloc(sizeof(hid_t) * (size_t)nobs);
        if (!h->obs) {
            free(h);
            return NULL;
        }
        for (k = 0; k < nobs; ++k)
            h->obs[k] = H5MD_NO_ID;
        h->nobs = nobs;
    }
    h->n = n;
    h->dim = dim;
    h->with_velocity = with_velocity != 0;
    for (k = 0; k < dim; ++k)
        h->box[k] = box_lengths[k];
    snprintf(h->path, sizeof h->path, "%s", path);
    return h;
}

int rc_h5md_available(void) { return 1; }

int rc_h5md_create(rc_h5md **out, const char *path, int n, int dim,
                   const double *box_lengths, const int *periodic,
                   int with_velocity, const rc_h5md_meta *meta, char *msg,
                   size_t msg_size)
{
    h5md_ctx ctx;
    h5md_quiet quiet;
    rc_h5md *h = NULL;
    rc_h5md_meta none;
    hid_t fapl = H5MD_NO_ID, g = H5MD_NO_ID, sub = H5MD_NO_ID;
    hid_t all = H5MD_NO_ID, box = H5MD_NO_ID, d = H5MD_NO_ID;
    hsize_t tail[2], chunk[3], one[1];
    const char *names[3], *lu = NULL, *tu = NULL;
    char vel_unit[160];
    int version_attr[2] = {1, 1};
    int *ids = NULL;
    int k, created = 0, rc = -1;

    ctx.msg = msg;
    ctx.size = msg_size;
    ctx.path = path ? path : "(null)";
    ctx.failed = 0;
    if (msg && msg_size)
        msg[0] = '\0';
    if (!out) {
        h5md_set_msg(msg, msg_size, "rc_h5md_create: out is NULL");
        return -1;
    }
    *out = NULL;
    if (!meta) {
        memset(&none, 0, sizeof none);
        meta = &none;
    }
    if (!path || !box_lengths || !periodic || n < 1 || dim < 2 || dim > 3 ||
        (meta->species && (!meta->species_names || meta->nspecies < 1)) ||
        (meta->nobs > 0 && !meta->obs_names) || meta->nobs < 0 ||
        (!meta->length_unit != !meta->time_unit)) {
        h5md_set_msg(msg, msg_size,
                     "rc_h5md_create: invalid arguments (path, box and "
                     "periodic required, n >= 1, dim 2 or 3, species with "
                     "their names, both units or none)");
        return -1;
    }
    for (k = 0; k < dim; ++k)
        if (!(box_lengths[k] > 0.0)) {
            h5md_set_msg(msg, msg_size,
                         "rc_h5md_create: box length %d is not positive", k);
            return -1;
        }
    if (meta->species)
        for (k = 0; k < n; ++k)
            if (meta->species[k] < 0 || meta->species[k] >= meta->nspecies) {
                h5md_set_msg(msg, msg_size,
                             "rc_h5md_create: species[%d] = %d is not one of "
                             "the %d names",
                             k, meta->species[k], meta->nspecies);
                return -1;
            }
    if (meta->length_unit) {
        lu = meta->length_unit;
        tu = meta->time_unit;
        snprintf(vel_unit, sizeof vel_unit, "%s %s-1", lu, tu);
    }
    h = h5md_new(path, n, dim, box_lengths, with_velocity, meta->nobs);
    ids = (int *)malloc(sizeof(int) * (size_t)n);
    if (!h || !ids) {
        free(ids);
        if (h)
            h5md_free(&ctx, h);
        h5md_set_msg(msg, msg_size, "%s: out of memory", ctx.path);
        return -1;
    }
    for (k = 0; k < n; ++k)
        ids[k] = k;

    h5md_quiet_on(&quiet);
    H5MD_TRY(&ctx, fapl = H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate (fapl)");
    /* Objects in the 1.8 format: readable by every HDF5 >= 1.8 (h5py,
     * OVITO, VMD plugins), and file format version 2 as H5MD asks. */
#if H5_VERSION_GE(1, 10, 2)
    H5MD_TRY(&ctx,
             H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18),
             "H5Pset_libver_bounds");
#else
    H5MD_TRY(&ctx,
             H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST),
             "H5Pset_libver_bounds");
#endif
    /* Closing the file closes whatever a failed path left open. */
    H5MD_TRY(&ctx, H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG),
             "H5Pset_fclose_degree");
    H5MD_TRY(&ctx, h->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
             "H5Fcreate");
    created = 1;

    /* h5md/: version, author, creator. */
    H5MD_TRY(&ctx,
             g = H5Gcreate2(h->file, "h5md", H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT),
             "H5Gcreate2 (h5md)");
    if (h5md_attr_int(&ctx, g, "version", version_attr, 2) < 0)
        goto done;
    H5MD_TRY(&ctx,
             sub = H5Gcreate2(g, "author", H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT),
             "H5Gcreate2 (h5md/author)");
    names[0] = "ricochet";
    if (h5md_attr_str(&ctx, sub, "name", names, 0) < 0)
        goto done;
    h5md_close_id(&ctx, &sub, H5Gclose, "H5Gclose");
    H5MD_TRY(&ctx,
             sub = H5Gcreate2(g, "creator", H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT),
             "H5Gcreate2 (h5md/creator)");
    if (h5md_attr_str(&ctx, sub, "name", names, 0) < 0)
        goto done;
    names[0] = meta->version && meta->version[0] ? meta->version : "unknown";
    if (h5md_attr_str(&ctx, sub, "version", names, 0) < 0)
        goto done;
    h5md_close_id(&ctx, &sub, H5Gclose, "H5Gclose");
    h5md_close_id(&ctx, &g, H5Gclose, "H5Gclose");
    if (ctx.failed)
        goto done;

    /* particles/all/box: dimension, boundary, edges [frames][D]. */
    H5MD_TRY(&ctx,
             g = H5Gcreate2(h->file, "particles", H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT),
             "H5Gcreate2 (particles)");
    H5MD_TRY(&ctx,
             all = H5Gcreate2(g, "all", H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT),
             "H5Gcreate2 (particles/all)");
    H5MD_TRY(&ctx,
             box = H5Gcreate2(all, "box", H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT),
             "H5Gcreate2 (particles/all/box)");
    if (h5md_attr_int(&ctx, box, "dimension", &dim, 0) < 0)
        goto done;
    for (k = 0; k < dim; ++k)
        names[k] = periodic[k] ? "periodic" : "none";
    if (h5md_attr_str(&ctx, box, "boundary", names, dim) < 0)
        goto done;
    H5MD_TRY(&ctx,
             sub = H5Gcreate2(box, "edges", H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT),
             "H5Gcreate2 (box/edges)");
    tail[0] = (hsize_t)dim;
    chunk[0] = H5MD_SERIES_CHUNK;
    chunk[1] = (hsize_t)dim;
    if (h5md_series(&ctx, sub, "value", H5T_IEEE_F64LE, 1, tail, chunk, 0,
                    &h->edges) < 0 ||
        h5md_unit(&ctx, h->edges, lu) < 0)
        goto done;
    h5md_close_id(&ctx, &sub, H5Gclose, "H5Gclose");

    /* particles/all/{radius,mass,species,id} [N], time-independent. */
    if (meta->radius) {
        if (h5md_fixed(&ctx, all, "radius", H5T_IEEE_F64LE,
                       H5T_NATIVE_DOUBLE, (hsize_t)n, meta->radius, &d) < 0 ||
            h5md_unit(&ctx, d, lu) < 0)
            goto done;
        h5md_close_id(&ctx, &d, H5Dclose, "H5Dclose");
    }
    if (meta->mass &&
        h5md_fixed(&ctx, all, "mass", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                   (hsize_t)n, meta->mass, NULL) < 0)
        goto done;
    if (meta->species) {
        if (h5md_fixed(&ctx, all, "species", H5T_STD_I32LE, H5T_NATIVE_INT,
                       (hsize_t)n, meta->species, &d) < 0 ||
            h5md_attr_str(&ctx, d, "names", meta->species_names,
                          meta->nspecies) < 0)
            goto done;
        h5md_close_id(&ctx, &d, H5Dclose, "H5Dclose");
    }
    if (h5md_fixed(&ctx, all, "id", H5T_STD_I32LE, H5T_NATIVE_INT,
                   (hsize_t)n, ids, NULL) < 0)
        goto done;

    /* particles/all/position: value [frames][N][D], step, time. */
    tail[0] = (hsize_t)n;
    tail[1] = (hsize_t)dim;
    chunk[0] = 1;
    chunk[1] = h5md_chunk_rows((hsize_t)n, (hsize_t)dim * sizeof(double));
    chunk[2] = (hsize_t)dim;
    H5MD_TRY(&ctx,
             sub = H5Gcreate2(all, "position", H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT),
             "H5Gcreate2 (position)");
    if (h5md_series(&ctx, sub, "value", H5T_IEEE_F64LE, 2, tail, chunk, 0,
                    &h->pos) < 0 ||
        h5md_unit(&ctx, h->pos, lu) < 0)
        goto done;
    one[0] = H5MD_SERIES_CHUNK;
    if (h5md_series(&ctx, sub, "step", H5T_STD_I64LE, 0, NULL, one, 0,
                    &h->step) < 0 ||
        h5md_series(&ctx, sub, "time", H5T_IEEE_F64LE, 0, NULL, one, 0,
                    &h->time) < 0 ||
        h5md_unit(&ctx, h->time, tu) < 0)
        goto done;
    h5md_close_id(&ctx, &sub, H5Gclose, "H5Gclose");

    if (h->with_velocity) {
        H5MD_TRY(&ctx,
                 sub = H5Gcreate2(all, "velocity", H5P_DEFAULT, H5P_DEFAULT,
                                  H5P_DEFAULT),
                 "H5Gcreate2 (velocity)");
        if (h5md_series(&ctx, sub, "value", H5T_IEEE_F64LE, 2, tail, chunk,
                        0, &h->vel) < 0 ||
            h5md_unit(&ctx, h->vel, lu ? vel_unit : NULL) < 0 ||
            h5md_link_clock(&ctx, h->file, sub) < 0)
            goto done;
        h5md_close_id(&ctx, &sub, H5Gclose, "H5Gclose");
    }

    /* particles/all/image [frames][N][D] int32, 0 where not given. */
    chunk[1] = h5md_chunk_rows((hsize_t)n, (hsize_t)dim * 4);
    H5MD_TRY(&ctx,
             sub = H5Gcreate2(all, "image", H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT),
             "H5Gcreate2 (image)");
    if (h5md_series(&ctx, sub, "value", H5T_STD_I32LE, 2, tail, chunk, 1,
                    &h->img) < 0 ||
        h5md_link_clock(&ctx, h->file, sub) < 0)
        goto done;
    h5md_close_id(&ctx, &sub, H5Gclose, "H5Gclose");

    H5MD_TRY(&ctx,
             sub = H5Gopen2(box, "edges", H5P_DEFAULT), "H5Gopen2 (edges)");
    if (h5md_link_clock(&ctx, h->file, sub) < 0)
        goto done;
    h5md_close_id(&ctx, &sub, H5Gclose, "H5Gclose");

    /* observables/<name>/{value,step,time}: the first observable's step
     * and time, hard-linked into the others (sampled together) */
    if (meta->nobs > 0) {
        h5md_close_id(&ctx, &g, H5Gclose, "H5Gclose");
        H5MD_TRY(&ctx,
                 g = H5Gcreate2(h->file, "observables", H5P_DEFAULT,
                                H5P_DEFAULT, H5P_DEFAULT),
                 "H5Gcreate2 (observables)");
        one[0] = H5MD_SERIES_CHUNK;
        for (k = 0; k < meta->nobs; ++k) {
            const char *name = meta->obs_names[k];
            if (!name || !name[0] || strchr(name, '/') || !strcmp(name, ".")) {
                h5md_set_msg(msg, msg_size,
                             "rc_h5md_create: observable %d has no usable "
                             "name",
                             k);
                ctx.failed = 1;
                goto done;
            }
            H5MD_TRY(&ctx,
                     sub = H5Gcreate2(g, name, H5P_DEFAULT, H5P_DEFAULT,
                                      H5P_DEFAULT),
                     name);
            if (h5md_series(&ctx, sub, "value", H5T_IEEE_F64LE, 0, NULL, one,
                            0, &h->obs[k]) < 0)
                goto done;
            if (k == 0) {
                if (h5md_series(&ctx, sub, "step", H5T_STD_I64LE, 0, NULL,
                                one, 0, &h->obs_step) < 0 ||
                    h5md_series(&ctx, sub, "time", H5T_IEEE_F64LE, 0, NULL,
                                one, 0, &h->obs_time) < 0 ||
                    h5md_unit(&ctx, h->obs_time, tu) < 0)
                    goto done;
            } else {
                char from[300];
                snprintf(from, sizeof from, "observables/%s/step",
                         meta->obs_names[0]);
                H5MD_TRY(&ctx,
                         H5Lcreate_hard(h->file, from, sub, "step",
                                        H5P_DEFAULT, H5P_DEFAULT),
                         "H5Lcreate_hard (observable step)");
                snprintf(from, sizeof from, "observables/%s/time",
                         meta->obs_names[0]);
                H5MD_TRY(&ctx,
                         H5Lcreate_hard(h->file, from, sub, "time",
                                        H5P_DEFAULT, H5P_DEFAULT),
                         "H5Lcreate_hard (observable time)");
            }
            h5md_close_id(&ctx, &sub, H5Gclose, "H5Gclose");
        }
    }

    H5MD_TRY(&ctx, H5Fflush(h->file, H5F_SCOPE_LOCAL), "H5Fflush");
    rc = ctx.failed ? -1 : 0;
done:
    free(ids);
    h5md_close_id(&ctx, &d, H5Dclose, "H5Dclose");
    h5md_close_id(&ctx, &sub, H5Gclose, "H5Gclose");
    h5md_close_id(&ctx, &box, H5Gclose, "H5Gclose");
    h5md_close_id(&ctx, &all, H5Gclose, "H5Gclose");
    h5md_close_id(&ctx, &g, H5Gclose, "H5Gclose");
    h5md_close_id(&ctx, &fapl, H5Pclose, "H5Pclose");
    if (rc == 0 && ctx.failed)
        rc = -1;
    if (rc == 0) {
        *out = h;
    } else {
        h5md_free(&ctx, h);
        if (created)
            remove(path); /* no half-written trajectory left behind */
    }
    h5md_quiet_off(&quiet);
    return rc;
}

int rc_h5md_append(rc_h5md *h, long step, double time, const double *q,
                   const double *v, const int *image, char *msg,
                   size_t msg_size)
{
    h5md_ctx ctx;
    h5md_quiet quiet;
    hsize_t tail[2], f;
    long long step64 = step;
    int rc = -1;

    if (msg && msg_size)
        msg[0] = '\0';
    if (!h || !q) {
        h5md_set_msg(msg, msg_size, "rc_h5md_append: %s is NULL",
                     h ? "q" : "handle");
        return -1;
    }
    if (h->with_velocity && !v) {
        h5md_set_msg(msg, msg_size,
                     "%s: created with velocities, but v is NULL", h->path);
        return -1;
    }
    if (h->broken) {
        h5md_set_msg(msg, msg_size,
                     "%s: an earlier append failed; the file is closed for "
                     "appends", h->path);
        return -1;
    }
    ctx.msg = msg;
    ctx.size = msg_size;
    ctx.path = h->path;
    ctx.failed = 0;
    f = h->frames;
    tail[0] = (hsize_t)h->n;
    tail[1] = (hsize_t)h->dim;

    h5md_quiet_on(&quiet);
    if (h5md_put_row(&ctx, h->pos, f, 2, tail, H5T_NATIVE_DOUBLE, q,
                     "H5Dset_extent/H5Dwrite (position)") < 0 ||
        h5md_put_row(&ctx, h->step, f, 0, NULL, H5T_NATIVE_LLONG, &step64,
                     "H5Dset_extent/H5Dwrite (step)") < 0 ||
        h5md_put_row(&ctx, h->time, f, 0, NULL, H5T_NATIVE_DOUBLE, &time,
                     "H5Dset_extent/H5Dwrite (time)") < 0)
        goto done;
    if (h->with_velocity &&
        h5md_put_row(&ctx, h->vel, f, 2, tail, H5T_NATIVE_DOUBLE, v,
                     "H5Dset_extent/H5Dwrite (velocity)") < 0)
        goto done;
    if (h5md_put_row(&ctx, h->img, f, 2, tail, H5T_NATIVE_INT, image,
                     "H5Dset_extent/H5Dwrite (image)") < 0 ||
        h5md_put_row(&ctx, h->edges, f, 1, tail + 1, H5T_NATIVE_DOUBLE,
                     h->box, "H5Dset_extent/H5Dwrite (box/edges)") < 0)
        goto done;
    H5MD_TRY(&ctx, H5Fflush(h->file, H5F_SCOPE_LOCAL), "H5Fflush");
    h->frames = f + 1;
    rc = 0;
done:
    if (rc != 0)
        h->broken = 1;
    h5md_quiet_off(&quiet);
    return rc;
}

int rc_h5md_observe(rc_h5md *h, long step, double time, const double *vals,
                    char *msg, size_t msg_size)
{
    h5md_ctx ctx;
    h5md_quiet quiet;
    long long step64 = step;
    int k, rc = -1;
    if (msg && msg_size)
        msg[0] = '\0';
    if (!h || (!vals && h && h->nobs > 0)) {
        h5md_set_msg(msg, msg_size, "rc_h5md_observe: %s is NULL",
                     h ? "vals" : "handle");
        return -1;
    }
    if (h->broken) {
        h5md_set_msg(msg, msg_size,
                     "%s: an earlier append failed; the file is closed for "
                     "appends", h->path);
        return -1;
    }
    if (h->nobs == 0)
        return 0;
    ctx.msg = msg;
    ctx.size = msg_size;
    ctx.path = h->path;
    ctx.failed = 0;
    h5md_quiet_on(&quiet);
    if (h5md_put_row(&ctx, h->obs_step, h->rows, 0, NULL, H5T_NATIVE_LLONG,
                     &step64, "H5Dset_extent/H5Dwrite (observable step)") <
            0 ||
        h5md_put_row(&ctx, h->obs_time, h->rows, 0, NULL, H5T_NATIVE_DOUBLE,
                     &time, "H5Dset_extent/H5Dwrite (observable time)") < 0)
        goto done;
    for (k = 0; k < h->nobs; ++k)
        if (h5md_put_row(&ctx, h->obs[k], h->rows, 0, NULL,
                         H5T_NATIVE_DOUBLE, &vals[k],
                         "H5Dset_extent/H5Dwrite (observable)") < 0)
            goto done;
    H5MD_TRY(&ctx, H5Fflush(h->file, H5F_SCOPE_LOCAL), "H5Fflush");
    h->rows++;
    rc = 0;
done:
    if (rc != 0)
        h->broken = 1;
    h5md_quiet_off(&quiet);
    return rc;
}

int rc_h5md_close(rc_h5md *h, char *msg, size_t msg_size)
{
    h5md_ctx ctx;
    h5md_quiet quiet;
    if (msg && msg_size)
        msg[0] = '\0';
    if (!h)
        return 0;
    ctx.msg = msg;
    ctx.size = msg_size;
    ctx.path = h->path;
    ctx.failed = 0;
    h5md_quiet_on(&quiet);
    if (h->file >= 0 && H5Fflush(h->file, H5F_SCOPE_LOCAL) < 0)
        h5md_fail(&ctx, "H5Fflush");
    {
        int broken = h->broken;
        h5md_free(&ctx, h);
        h5md_quiet_off(&quiet);
        if (ctx.failed || broken)
            h5md_release_library();
    }
    return ctx.failed ? -1 : 0;
}

/* Open dataset name of h's file as *id and cut it to `keep` rows; its
 * shape: rank 3 [.][n][dim] when per_particle, else any rank. */
static int h5md_reopen_one(h5md_ctx *c, rc_h5md *h, const char *name,
                           hid_t *id, hsize_t keep, int per_particle,
                           const char *what)
{
    hid_t space = H5MD_NO_ID;
    hsize_t dims[3];
    int nd;
    H5MD_TRY(c, *id = H5Dopen2(h->file, name, H5P_DEFAULT), name);
    H5MD_TRY(c, space = H5Dget_space(*id), "H5Dget_space");
    nd = H5Sget_simple_extent_ndims(space);
    if (nd < 1 || nd > 3 ||
        H5Sget_simple_extent_dims(space, dims, NULL) < 0 || dims[0] < keep ||
        (per_particle && (nd != 3 || dims[1] != (hsize_t)h->n ||
                          dims[2] != (hsize_t)h->dim))) {
        if (!c->failed)
            h5md_set_msg(c->msg, c->size,
                         "%s: %s does not hold the %llu %s of %d spheres "
                         "the checkpoint was taken with",
                         c->path, name, (unsigned long long)keep, what,
                         h->n);
        c->failed = 1;
        goto done;
    }
    /* rows written after the checkpoint are cut off */
    dims[0] = keep;
    H5MD_TRY(c, H5Dset_extent(*id, dims), "H5Dset_extent");
done:
    h5md_close_id(c, &space, H5Sclose, "H5Sclose");
    return c->failed ? -1 : 0;
}

int rc_h5md_reopen(rc_h5md **out, const char *path, int n, int dim,
                   const double *box_lengths, int with_velocity, long frames,
                   const char *const *obs_names, int nobs, long rows,
                   char *msg, size_t msg_size)
{
    static const char *const names[6] = {
        "particles/all/position/value", "particles/all/position/step",
        "particles/all/position/time",  "particles/all/velocity/value",
        "particles/all/image/value",    "particles/all/box/edges/value"};
    h5md_ctx ctx;
    h5md_quiet quiet;
    rc_h5md *h = NULL;
    hid_t fapl = H5MD_NO_ID, *ids[6];
    int k, rc = -1;
    ctx.msg = msg;
    ctx.size = msg_size;
    ctx.path = path ? path : "(null)";
    ctx.failed = 0;
    if (msg && msg_size)
        msg[0] = '\0';
    *out = NULL;
    if (frames < 0 || rows < 0 || nobs < 0 || (nobs > 0 && !obs_names)) {
        h5md_set_msg(msg, msg_size, "rc_h5md_reopen: invalid arguments");
        return -1;
    }
    h = h5md_new(path, n, dim, box_lengths, with_velocity, nobs);
    if (!h) {
        h5md_set_msg(msg, msg_size, "%s: out of memory", ctx.path);
        return -1;
    }
    ids[0] = &h->pos;
    ids[1] = &h->step;
    ids[2] = &h->time;
    ids[3] = &h->vel;
    ids[4] = &h->img;
    ids[5] = &h->edges;
    h5md_quiet_on(&quiet);
    H5MD_TRY(&ctx, fapl = H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate (fapl)");
    H5MD_TRY(&ctx, H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG),
             "H5Pset_fclose_degree");
    H5MD_TRY(&ctx, h->file = H5Fopen(path, H5F_ACC_RDWR, fapl), "H5Fopen");
    for (k = 0; k < 6; ++k) {
        if (k == 3 && !h->with_velocity)
            continue;
        if (h5md_reopen_one(&ctx, h, names[k], ids[k], (hsize_t)frames,
                            k == 0 || k == 3 || k == 4, "frames") < 0)
            goto done;
    }
    for (k = 0; k < nobs; ++k) {
        char name[300];
        snprintf(name, sizeof name, "observables/%s/value", obs_names[k]);
        if (h5md_reopen_one(&ctx, h, name, &h->obs[k], (hsize_t)rows, 0,
                            "rows") < 0)
            goto done;
        if (k == 0) {
            snprintf(name, sizeof name, "observables/%s/step", obs_names[0]);
            if (h5md_reopen_one(&ctx, h, name, &h->obs_step, (hsize_t)rows,
                                0, "rows") < 0)
                goto done;
            snprintf(name, sizeof name, "observables/%s/time", obs_names[0]);
            if (h5md_reopen_one(&ctx, h, name, &h->obs_time, (hsize_t)rows,
                                0, "rows") < 0)
                goto done;
        }
    }
    H5MD_TRY(&ctx, H5Fflush(h->file, H5F_SCOPE_LOCAL), "H5Fflush");
    h->frames = (hsize_t)frames;
    h->rows = (hsize_t)rows;
    rc = 0;
done:
    h5md_close_id(&ctx, &fapl, H5Pclose, "H5Pclose");
    if (rc == 0 && ctx.failed)
        rc = -1;
    if (rc == 0)
        *out = h;
    else
        h5md_free(&ctx, h);
    h5md_quiet_off(&quiet);
    return rc;
}

long rc_h5md_frames(const rc_h5md *h)
{
    return h ? (long)h->frames : 0;
}

long rc_h5md_rows(const rc_h5md *h)
{
    return h ? (long)h->rows : 0;
}

/* ---------------------------------------------------------------- reading */

/* Most particles a frame may hold: xyz.c's cap (the engine indexes
 * particles with int). */
#define H5MD_READ_MAX_N 100000000LL

/* The first particle group (in name order) with a position element,
 * into name; 1 found, 0 none, -1 an HDF5 failure.  (Links walked by
 * index: the same calls in HDF5 1.10 and 1.12+.) */
static int h5md_find_group(h5md_ctx *c, hid_t parts, char *name,
                           size_t size)
{
    H5G_info_t gi;
    hsize_t k;
    char probe[300];
    H5MD_TRY(c, H5Gget_info(parts, &gi), "H5Gget_info (particles)");
    for (k = 0; k < gi.nlinks; ++k) {
        ssize_t len = H5Lget_name_by_idx(parts, ".", H5_INDEX_NAME,
                                         H5_ITER_INC, k, name, size,
                                         H5P_DEFAULT);
        if (len < 0)
            H5MD_TRY(c, -1, "H5Lget_name_by_idx (particles)");
        if ((size_t)len >= size)
            continue;
        snprintf(probe, sizeof probe, "%s/position", name);
        if (H5Lexists(parts, probe, H5P_DEFAULT) > 0)
            return 1;
    }
    return 0;
done:
    return -1;
}

/* An element `name` of group g: a time-dependent one (a group with
 * value[frames][...]) or a time-independent dataset.  Reads its entry
 * for `frame` (the whole dataset when time-independent) into out as
 * doubles (or ints when as_int), which must hold exactly `count` values
 * after the leading frame index; *present 0 when the element is absent.
 * *frames_out (may be NULL): the element's frame count (-1 when
 * time-independent). */
static int h5md_read_element(h5md_ctx *c, hid_t g, const char *gname,
                             const char *name, long frame, hsize_t count,
                             int as_int, void *out, int *present,
                             long *frames_out)
{
    hid_t d = H5MD_NO_ID, fs = H5MD_NO_ID, ms = H5MD_NO_ID;
    hid_t obj = H5MD_NO_ID;
    hsize_t dims[4], start[4], cnt[4], total = 1;
    char vpath[300];
    int nd, k, timed;
    *present = 0;
    if (frames_out)
        *frames_out = -1;
    if (H5Lexists(g, name, H5P_DEFAULT) <= 0)
        return 0;
    H5MD_TRY(c, obj = H5Oopen(g, name, H5P_DEFAULT), name);
    timed = H5Iget_type(obj) == H5I_GROUP;
    h5md_close_id(c, &obj, H5Oclose, "H5Oclose");
    snprintf(vpath, sizeof vpath, timed ? "%s/value" : "%s", name);
    H5MD_TRY(c, d = H5Dopen2(g, vpath, H5P_DEFAULT), vpath);
    H5MD_TRY(c, fs = H5Dget_space(d), "H5Dget_space");
    nd = H5Sget_simple_extent_ndims(fs);
    if (nd < (timed ? 1 : 0) || nd > 4 ||
        H5Sget_simple_extent_dims(fs, dims, NULL) < 0) {
        h5md_set_msg(c->msg, c->size, "%s: particles/%s/%s: unexpected "
                     "shape (rank %d)", c->path, gname, vpath, nd);
        c->failed = 1;
        goto done;
    }
    for (k = timed ? 1 : 0; k < nd; ++k)
        total *= dims[k];
    if (timed && frames_out)
        *frames_out = (long)dims[0];
    if (timed && (hsize_t)frame >= dims[0]) {
        /* sampled less often than position: not at this frame */
        goto done;
    }
    if (total != count) {
        h5md_set_msg(c->msg, c->size,
                     "%s: particles/%s/%s: %llu values per frame, expected "
                     "%llu",
                     c->path, gname, vpath, (unsigned long long)total,
                     (unsigned long long)count);
        c->failed = 1;
        goto done;
    }
    for (k = 0; k < nd; ++k) {
        start[k] = 0;
        cnt[k] = dims[k];
    }
    if (timed) {
        start[0] = (hsize_t)frame;
        cnt[0] = 1;
    }
    if (nd > 0)
        H5MD_TRY(c,
                 H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt,
                                     NULL),
                 "H5Sselect_hyperslab");
    H5MD_TRY(c, ms = H5Screate_simple(1, &count, NULL), "H5Screate_simple");
    H5MD_TRY(c,
             H5Dread(d, as_int ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE, ms,
                     nd > 0 ? fs : H5S_ALL, H5P_DEFAULT, out),
             vpath);
    *present = 1;
done:
    h5md_close_id(c, &ms, H5Sclose, "H5Sclose");
    h5md_close_id(c, &fs, H5Sclose, "H5Sclose");
    h5md_close_id(c, &d, H5Dclose, "H5Dclose");
    return c->failed ? -1 : 0;
}

int rc_h5md_read(const char *path, int dim, long frame, struct rc_xyz *x,
                 char *msg, size_t msg_size)
{
    h5md_ctx ctx;
    h5md_quiet quiet;
    char gname[256];
    hid_t file = H5MD_NO_ID, parts = H5MD_NO_ID, g = H5MD_NO_ID;
    hid_t d = H5MD_NO_ID, space = H5MD_NO_ID;
    hsize_t dims[3];
    long frames = 0, vframes = 0, i;
    double *edges = NULL;
    int k, present, rc = -1;
    ctx.msg = msg;
    ctx.size = msg_size;
    ctx.path = path ? path : "(null)";
    ctx.failed = 0;
    if (msg && msg_size)
        msg[0] = '\0';
    memset(x, 0, sizeof *x);
    if (!path || (dim != 2 && dim != 3)) {
        h5md_set_msg(msg, msg_size, "%s: dimension %d (2 or 3)", ctx.path,
                     dim);
        return -1;
    }
    h5md_quiet_on(&quiet);
    H5MD_TRY(&ctx, file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT),
             "H5Fopen");
    if (H5Lexists(file, "particles", H5P_DEFAULT) <= 0) {
        h5md_set_msg(msg, msg_size,
                     "%s: particles: no particles group (not an H5MD "
                     "trajectory)",
                     ctx.path);
        ctx.failed = 1;
        goto done;
    }
    H5MD_TRY(&ctx, parts = H5Gopen2(file, "particles", H5P_DEFAULT),
             "H5Gopen2 (particles)");
    k = h5md_find_group(&ctx, parts, gname, sizeof gname);
    if (k < 0)
        goto done;
    if (k == 0) {
        h5md_set_msg(msg, msg_size,
                     "%s: particles: no group with a position element",
                     ctx.path);
        ctx.failed = 1;
        goto done;
    }
    H5MD_TRY(&ctx, g = H5Gopen2(parts, gname, H5P_DEFAULT), gname);
    H5MD_TRY(&ctx, d = H5Dopen2(g, "position/value", H5P_DEFAULT),
             "position/value");
    H5MD_TRY(&ctx, space = H5Dget_space(d), "H5Dget_space");
    if (H5Sget_simple_extent_ndims(space) != 3 ||
        H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
        h5md_set_msg(msg, msg_size,
                     "%s: particles/%s/position/value: expected "
                     "[frames][particles][dimension]",
                     ctx.path, gname);
        ctx.failed = 1;
        goto done;
    }
    h5md_close_id(&ctx, &space, H5Sclose, "H5Sclose");
    h5md_close_id(&ctx, &d, H5Dclose, "H5Dclose");
    frames = (long)dims[0];
    if (dims[2] != (hsize_t)dim) {
        h5md_set_msg(msg, msg_size,
                     "%s: particles/%s/position/value: %llu-dimensional "
                     "positions, the scenario's dimension is %d",
                     ctx.path, gname, (unsigned long long)dims[2], dim);
        ctx.failed = 1;
        goto done;
    }
    if (dims[1] < 1 || (long long)dims[1] > H5MD_READ_MAX_N) {
        h5md_set_msg(msg, msg_size,
                     "%s: particles/%s/position/value: %llu particles (1 to "
                     "%lld)",
                     ctx.path, gname, (unsigned long long)dims[1],
                     H5MD_READ_MAX_N);
        ctx.failed = 1;
        goto done;
    }
    if (frame < -frames || frame >= frames) {
        h5md_set_msg(msg, msg_size,
                     "%s: frame %ld does not exist (the file has %ld frame%s: "
                     "0 to %ld, or -1 to -%ld from the end)",
                     ctx.path, frame, frames, frames == 1 ? "" : "s",
                     frames - 1, frames);
        ctx.failed = 1;
        goto done;
    }
    if (frame < 0)
        frame += frames;
    x->n = (long)dims[1];
    x->first_line = 0;
    x->frame = frame;
    x->frames = frames;
    x->q = (double *)malloc(sizeof(double) * (size_t)x->n * (size_t)dim);
    x->v = (double *)malloc(sizeof(double) * (size_t)x->n * (size_t)dim);
    x->radius = (double *)malloc(sizeof(double) * (size_t)x->n);
    x->mass = (double *)malloc(sizeof(double) * (size_t)x->n);
    edges = (double *)malloc(sizeof(double) * 9);
    if (!x->q || !x->v || !x->radius || !x->mass || !edges) {
        h5md_set_msg(msg, msg_size, "%s: out of memory for %ld particles",
                     ctx.path, x->n);
        ctx.failed = 1;
        goto done;
    }
    if (h5md_read_element(&ctx, g, gname, "position", frame,
                          (hsize_t)x->n * (hsize_t)dim, 0, x->q, &present,
                          NULL) < 0)
        goto done;
    /* velocities taken only when sampled with every position frame (the
     * same row is then the same step) */
    if (h5md_read_element(&ctx, g, gname, "velocity", frame,
                          (hsize_t)x->n * (hsize_t)dim, 0, x->v, &present,
                          &vframes) < 0)
        goto done;
    if (!present || vframes != frames) {
        free(x->v);
        x->v = NULL;
    }
    if (h5md_read_element(&ctx, g, gname, "radius", frame,
                          (hsize_t)x->n, 0, x->radius, &present, NULL) < 0)
        goto done;
    if (!present) {
        free(x->radius);
        x->radius = NULL;
    }
    if (h5md_read_element(&ctx, g, gname, "mass", frame, (hsize_t)x->n,
                          0, x->mass, &present, NULL) < 0)
        goto done;
    if (!present) {
        free(x->mass);
        x->mass = NULL;
    }
    /* box/edges: a vector [D] or a matrix [D][D] (its diagonal) */
    if (H5Lexists(g, "box", H5P_DEFAULT) > 0) {
        hid_t box = H5MD_NO_ID;
        int ok = 1;
        H5MD_TRY(&ctx, box = H5Gopen2(g, "box", H5P_DEFAULT), "box");
        if (h5md_read_element(&ctx, box, gname, "edges", frame,
                              (hsize_t)dim, 0, edges, &present, NULL) < 0) {
            /* a matrix: try again for D x D values */
            ctx.failed = 0;
            ok = h5md_read_element(&ctx, box, gname, "edges", frame,
                                   (hsize_t)dim * (hsize_t)dim, 0, edges,
                                   &present, NULL) == 0;
            if (ok && present)
                for (k = 0; k < dim; ++k)
                    edges[k] = edges[k * dim + k];
        }
        h5md_close_id(&ctx, &box, H5Gclose, "H5Gclose");
        if (!ok)
            goto done;
        if (present) {
            for (k = 0; k < dim; ++k) {
                if (!(edges[k] > 0.0) || !isfinite(edges[k])) {
                    h5md_set_msg(msg, msg_size,
                                 "%s: particles/%s/box/edges: edge %d must "
                                 "be positive and finite, got %g",
                                 ctx.path, gname, k + 1, edges[k]);
                    ctx.failed = 1;
                    goto done;
                }
                x->box[k] = edges[k];
            }
            x->have_box = 1;
        }
    }
    /* the values a run uses are checked as the XYZ reader checks them */
    for (i = 0; i < x->n; ++i) {
        for (k = 0; k < dim; ++k) {
            if (!isfinite(x->q[i * dim + k])) {
                h5md_set_msg(msg, msg_size,
                             "%s: particles/%s/position: particle %ld, "
                             "component %d is not finite (%g)",
                             ctx.path, gname, i, k + 1,
                             x->q[i * dim + k]);
                ctx.failed = 1;
                goto done;
            }
            if (x->v && !isfinite(x->v[i * dim + k])) {
                h5md_set_msg(msg, msg_size,
                             "%s: particles/%s/velocity: particle %ld, "
                             "component %d is not finite (%g)",
                             ctx.path, gname, i, k + 1,
                             x->v[i * dim + k]);
                ctx.failed = 1;
                goto done;
            }
        }
        if (x->radius && (!(x->radius[i] > 0.0) || !isfinite(x->radius[i]))) {
            h5md_set_msg(msg, msg_size,
                         "%s: particles/%s/radius: particle %ld: must be "
                         "positive and finite, got %g",
                         ctx.path, gname, i, x->radius[i]);
            ctx.failed = 1;
            goto done;
        }
        if (x->mass && (!(x->mass[i] > 0.0) || !isfinite(x->mass[i]))) {
            h5md_set_msg(msg, msg_size,
                         "%s: particles/%s/mass: particle %ld: must be "
                         "positive and finite, got %g",
                         ctx.path, gname, i, x->mass[i]);
            ctx.failed = 1;
            goto done;
        }
    }
    rc = 0;
done:
    free(edges);
    h5md_close_id(&ctx, &space, H5Sclose, "H5Sclose");
    h5md_close_id(&ctx, &d, H5Dclose, "H5Dclose");
    h5md_close_id(&ctx, &g, H5Gclose, "H5Gclose");
    h5md_close_id(&ctx, &parts, H5Gclose, "H5Gclose");
    h5md_close_id(&ctx, &file, H5Fclose, "H5Fclose");
    if (ctx.failed)
        rc = -1;
    if (rc != 0)
        rc_xyz_free(x);
    h5md_quiet_off(&quiet);
    return rc;
}

#else /* !RICOCHET_HAVE_HDF5 */

static const char h5md_none[] =
    "this build has no HDF5: install libhdf5-dev and configure with "
    "-DRICOCHET_HDF5=AUTO or ON";

int rc_h5md_available(void) { return 0; }

int rc_h5md_create(rc_h5md **out, const char *path, int n, int dim,
                   const double *box_lengths, const int *periodic,
                   int with_velocity, const rc_h5md_meta *meta, char *msg,
                   size_t msg_size)
{
    (void)path;
    (void)n;
    (void)dim;
    (void)box_lengths;
    (void)periodic;
    (void)with_velocity;
    (void)meta;
    if (out)
        *out = NULL;
    h5md_set_msg(msg, msg_size, "%s", h5md_none);
    return RC_H5MD_UNSUPPORTED;
}

int rc_h5md_observe(rc_h5md *h, long step, double time, const double *vals,
                    char *msg, size_t msg_size)
{
    (void)h;
    (void)step;
    (void)time;
    (void)vals;
    h5md_set_msg(msg, msg_size, "%s", h5md_none);
    return RC_H5MD_UNSUPPORTED;
}

int rc_h5md_read(const char *path, int dim, long frame, struct rc_xyz *x,
                 char *msg, size_t msg_size)
{
    (void)dim;
    (void)frame;
    memset(x, 0, sizeof *x);
    h5md_set_msg(msg, msg_size, "%s: %s", path ? path : "(null)", h5md_none);
    return RC_H5MD_UNSUPPORTED;
}

int rc_h5md_append(rc_h5md *h, long step, double time, const double *q,
                   const double *v, const int *image, char *msg,
                   size_t msg_size)
{
    (void)h;
    (void)step;
    (void)time;
    (void)q;
    (void)v;
    (void)image;
    h5md_set_msg(msg, msg_size, "%s", h5md_none);
    return RC_H5MD_UNSUPPORTED;
}

int rc_h5md_close(rc_h5md *h, char *msg, size_t msg_size)
{
    if (msg && msg_size)
        msg[0] = '\0';
    return h ? RC_H5MD_UNSUPPORTED : 0;
}


int rc_h5md_reopen(rc_h5md **out, const char *path, int n, int dim,
                   const double *box_lengths, int with_velocity, long frames,
                   const char *const *obs_names, int nobs, long rows,
                   char *msg, size_t msg_size)
{
    (void)path;
    (void)n;
    (void)dim;
    (void)box_lengths;
    (void)with_velocity;
    (void)frames;
    (void)obs_names;
    (void)nobs;
    (void)rows;
    if (out)
        *out = NULL;
    h5md_set_msg(msg, msg_size, "%s", h5md_none);
    return RC_H5MD_UNSUPPORTED;
}

long rc_h5md_frames(const rc_h5md *h)
{
    (void)h;
    return 0;
}

long rc_h5md_rows(const rc_h5md *h)
{
    (void)h;
    return 0;
}

#endif

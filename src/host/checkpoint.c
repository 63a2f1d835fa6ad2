/* Checkpoint files (checkpoint.h): a tagged, CRC-checked container,
 * written atomically, and the continuation of output files. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "checkpoint.h"
#include "scenario_impl.h"

#ifndef RICOCHET_VERSION
#define RICOCHET_VERSION "unknown"
#endif

static const char rc_ckpt_magic[8] = {'R', 'C', 'C', 'K', 'P', 'T', '\r', '\n'};
#define RC_CKPT_BOM 0x01020304u
#define RC_CKPT_HEADER (8 + 4 * 4 + 32)
#define RC_CKPT_SECTION 16 /* tag[8] + u64 length */
/* The largest checkpoint the reader takes into memory: a 10^7-sphere
 * system's state is about 1 GiB; beyond 64 GiB the file is not ours. */
#define RC_CKPT_MAX_BYTES (64ULL << 30)

static rc_status rc_ckpt_fail(rc_error *err, rc_status st, const char *path,
                              const char *fmt, const char *detail)
{
    err->status = st;
    snprintf(err->file, sizeof err->file, "%s", path);
    err->line = err->column = 0;
    err->field[0] = '\0';
    snprintf(err->message, sizeof err->message, fmt, detail ? detail : "");
    return st;
}

/* ------------------------------------------------------------ writing */

/* A tag as its 8 stored bytes (longer tags are cut, shorter padded). */
static void rc_ckpt_tag(char t[8], const char *tag)
{
    size_t n = strlen(tag);
    memset(t, 0, 8);
    memcpy(t, tag, n < 8 ? n : 8);
}

/* crc32 over any length (zlib's takes a uInt: large blocks in pieces). */
static unsigned long rc_crc_update(unsigned long crc, const void *data,
                                   size_t bytes)
{
    while (bytes > 0) {
        uInt piece = bytes > (1u << 30) ? (1u << 30) : (uInt)bytes;
        crc = crc32(crc, (const Bytef *)data, piece);
        data = (const unsigned char *)data + piece;
        bytes -= piece;
    }
    return crc;
}

static void rc_ckpt_raw(rc_ckpt_writer *w, const void *data, size_t bytes)
{
    if (w->bad || !w->f)
        return;
    if (bytes > 0 && fwrite(data, 1, bytes, w->f) != bytes) {
        w->bad = errno ? errno : EIO;
        return;
    }
    w->crc = rc_crc_update(w->crc, data, bytes);
}

rc_status rc_ckpt_begin(rc_ckpt_writer *w, const char *dir, rc_ckpt_kind kind,
                        rc_error *err)
{
    uint32_t head[4];
    char version[32];
    memset(w, 0, sizeof *w);
    snprintf(w->path, sizeof w->path, "%s/%s", dir, RC_CKPT_NAME);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp", w->path);
    w->crc = crc32(0L, Z_NULL, 0);
    w->f = fopen(w->tmp, "wb");
    if (!w->f)
        return rc_ckpt_fail(err, RC_ERR_IO, w->tmp,
                            "cannot create checkpoint: %s", strerror(errno));
    rc_out_fault_redirect_(RC_CKPT_NAME, &w->f);
    head[0] = RC_CKPT_FORMAT;
    head[1] = RC_CKPT_BOM;
    head[2] = (uint32_t)kind;
    head[3] = 0;
    memset(version, 0, sizeof version);
    snprintf(version, sizeof version, "%s", RICOCHET_VERSION);
    errno = 0;
    rc_ckpt_raw(w, rc_ckpt_magic, sizeof rc_ckpt_magic);
    rc_ckpt_raw(w, head, sizeof head);
    rc_ckpt_raw(w, version, sizeof version);
    return RC_OK;
}

void rc_ckpt_put(rc_ckpt_writer *w, const char *tag, const void *data,
                 size_t bytes)
{
    char t[8];
    uint64_t len = (uint64_t)bytes;
    rc_ckpt_tag(t, tag);
    rc_ckpt_raw(w, t, sizeof t);
    rc_ckpt_raw(w, &len, sizeof len);
    rc_ckpt_raw(w, data, bytes);
}

void rc_ckpt_put_long(rc_ckpt_writer *w, const char *tag, long v)
{
    int64_t x = (int64_t)v;
    rc_ckpt_put(w, tag, &x, sizeof x);
}

void rc_ckpt_put_string(rc_ckpt_writer *w, const char *tag, const char *s)
{
    rc_ckpt_put(w, tag, s ? s : "", s ? strlen(s) + 1 : 1);
}

rc_status rc_ckpt_put_scenario(rc_ckpt_writer *w, const rc_scenario *scn,
                               const char *out_dir, rc_error *err)
{
    int k;
    char tag[32]; /* "SET" and a long */
    if (!scn->source)
        return rc_ckpt_fail(err, RC_ERR_IO, scn->path,
                            "cannot checkpoint: the scenario's text was not "
                            "kept when it was loaded%s",
                            NULL);
    rc_ckpt_put_string(w, "SCNPATH", scn->path);
    rc_ckpt_put_string(w, "SCNTEXT", scn->source);
    rc_ckpt_put_long(w, "NSETS", scn->n_overrides);
    for (k = 0; k < scn->n_overrides; ++k) {
        snprintf(tag, sizeof tag, "SET%d", k);
        rc_ckpt_put_string(w, tag, scn->overrides[k]);
    }
    rc_ckpt_put_string(w, "OUTDIR", out_dir);
    return RC_OK;
}

/* CRC-32 of the first `len` bytes of the file at path; 0 on success. */
static int rc_file_crc(const char *path, uint64_t len, unsigned long *crc)
{
    unsigned char buf[65536];
    FILE *f = fopen(path, "rb");
    uint64_t left = len;
    *crc = crc32(0L, Z_NULL, 0);
    if (!f)
        return -1;
    while (left > 0) {
        size_t want = left > sizeof buf ? sizeof buf : (size_t)left;
        size_t got = fread(buf, 1, want, f);
        if (got != want) {
            fclose(f);
            return -1;
        }
        *crc = crc32(*crc, buf, (uInt)got);
        left -= got;
    }
    fclose(f);
    return 0;
}

rc_status rc_ckpt_put_output(rc_ckpt_writer *w, const char *tag,
                             rc_outfile *of, rc_error *err)
{
    uint64_t rec[2];
    unsigned long crc;
    long pos;
    if (!of->f) { /* not written by this run: length 0, no file */
        rec[0] = 0;
        rec[1] = UINT64_MAX;
        rc_ckpt_put(w, tag, rec, sizeof rec);
        return RC_OK;
    }
    if (fflush(of->f) != 0 || ferror(of->f) || fsync(fileno(of->f)) != 0)
        return rc_ckpt_fail(err, RC_ERR_IO, of->partial_path,
                            "error writing output file: %s", strerror(errno));
    pos = ftell(of->f);
    if (pos < 0 || rc_file_crc(of->partial_path, (uint64_t)pos, &crc) != 0)
        return rc_ckpt_fail(err, RC_ERR_IO, of->partial_path,
                            "cannot read back output file: %s",
                            strerror(errno));
    rec[0] = (uint64_t)pos;
    rec[1] = (uint64_t)crc;
    rc_ckpt_put(w, tag, rec, sizeof rec);
    return RC_OK;
}

rc_status rc_ckpt_finish(rc_ckpt_writer *w, rc_error *err)
{
    uint32_t crc;
    char t[8];
    uint64_t len = 4;
    int e = 0, dfd;
    char dir[1100], *slash;
    if (!w->f)
        return rc_ckpt_fail(err, RC_ERR_IO, w->tmp, "checkpoint not open%s",
                            NULL);
    memset(t, 0, sizeof t);
    memcpy(t, "END", 3);
    rc_ckpt_raw(w, t, sizeof t);
    rc_ckpt_raw(w, &len, sizeof len);
    crc = (uint32_t)w->crc;
    if (!w->bad && fwrite(&crc, 1, sizeof crc, w->f) != sizeof crc)
        w->bad = errno ? errno : EIO;
    if (!w->bad && (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0))
        w->bad = errno ? errno : EIO;
    if (fclose(w->f) != 0 && !w->bad)
        w->bad = errno ? errno : EIO;
    w->f = NULL;
    if (!w->bad && rename(w->tmp, w->path) != 0)
        w->bad = errno ? errno : EIO;
    if (w->bad) {
        e = w->bad;
        unlink(w->tmp);
        return rc_ckpt_fail(err, RC_ERR_IO, w->path,
                            "cannot write checkpoint: %s", strerror(e));
    }
    /* the rename itself survives a crash only once the directory is
     * synced */
    snprintf(dir, sizeof dir, "%s", w->path);
    slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    dfd = open(slash ? dir : ".", O_RDONLY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return RC_OK;
}

void rc_ckpt_abandon(rc_ckpt_writer *w)
{
    if (w->f) {
        fclose(w->f);
        w->f = NULL;
        unlink(w->tmp);
    }
}

/* ------------------------------------------------------------ reading */

rc_status rc_ckpt_corrupt(const rc_ckpt *c, rc_error *err, const char *what)
{
    return rc_ckpt_fail(err, RC_ERR_PARSE, c->path,
                        "not a usable ricochet checkpoint: %s", what);
}

rc_status rc_ckpt_load(const char *path, rc_ckpt *c, rc_error *err)
{
    FILE *f;
    struct stat sb;
    uint32_t head[4], crc;
    char version[33], msg[300];
    size_t pos;
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    f = fopen(path, "rb");
    if (!f)
        return rc_ckpt_fail(err, RC_ERR_IO, path, "cannot open checkpoint: %s",
                            strerror(errno));
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return rc_ckpt_corrupt(c, err, "not a regular file");
    }
    if ((unsigned long long)sb.st_size < RC_CKPT_HEADER + RC_CKPT_SECTION + 4 ||
        (unsigned long long)sb.st_size > RC_CKPT_MAX_BYTES) {
        fclose(f);
        return rc_ckpt_corrupt(c, err, "its size is not that of a checkpoint");
    }
    c->len = (size_t)sb.st_size;
    c->buf = (unsigned char *)malloc(c->len);
    if (!c->buf) {
        fclose(f);
        return rc_ckpt_fail(err, RC_ERR_NOMEM, path,
                            "out of memory reading the checkpoint%s", NULL);
    }
    if (fread(c->buf, 1, c->len, f) != c->len) {
        fclose(f);
        rc_ckpt_free(c);
        return rc_ckpt_fail(err, RC_ERR_IO, path,
                            "cannot read checkpoint: %s",
                            errno ? strerror(errno) : "short read");
    }
    fclose(f);
    if (memcmp(c->buf, rc_ckpt_magic, sizeof rc_ckpt_magic) != 0) {
        rc_ckpt_free(c);
        return rc_ckpt_corrupt(c, err, "no checkpoint header");
    }
    memcpy(head, c->buf + 8, sizeof head);
    memcpy(version, c->buf + 8 + sizeof head, 32);
    version[32] = '\0';
    if (head[1] != RC_CKPT_BOM) {
        rc_ckpt_free(c);
        return rc_ckpt_corrupt(c, err,
                               "written on a machine of another byte order");
    }
    if (head[0] != RC_CKPT_FORMAT) {
        snprintf(msg, sizeof msg,
                 "format version %u, this ricochet reads version %d",
                 (unsigned)head[0], RC_CKPT_FORMAT);
        rc_ckpt_free(c);
        return rc_ckpt_corrupt(c, err, msg);
    }
    memcpy(&crc, c->buf + c->len - 4, 4);
    {
        unsigned long got = rc_crc_update(crc32(0L, Z_NULL, 0), c->buf,
                                          c->len - 4);
        if ((uint32_t)got != crc) {
            rc_ckpt_free(c);
            return rc_ckpt_corrupt(c, err,
                                   "its checksum does not match (the file is "
                                   "damaged or was cut short)");
        }
    }
    if (strcmp(version, RICOCHET_VERSION) != 0) {
        snprintf(msg, sizeof msg,
                 "written by ricochet %s; this is ricochet %s, and a run "
                 "continues exactly only in the version that began it",
                 version, RICOCHET_VERSION);
        rc_ckpt_free(c);
        return rc_ckpt_corrupt(c, err, msg);
    }
    if (head[2] < RC_CKPT_SINGLE || head[2] > RC_CKPT_LARGE) {
        rc_ckpt_free(c);
        return rc_ckpt_corrupt(c, err, "unknown kind of run");
    }
    c->kind = (rc_ckpt_kind)head[2];
    /* every section must lie inside the file and the last be END */
    for (pos = RC_CKPT_HEADER;;) {
        uint64_t len;
        if (c->len - 4 - pos < RC_CKPT_SECTION) {
            rc_ckpt_free(c);
            return rc_ckpt_corrupt(c, err, "a section runs past the end");
        }
        memcpy(&len, c->buf + pos + 8, sizeof len);
        if (!memcmp(c->buf + pos, "END\0\0\0\0\0", 8)) {
            if (len != 4 || pos + RC_CKPT_SECTION + 4 != c->len) {
                rc_ckpt_free(c);
                return rc_ckpt_corrupt(c, err, "bad trailer");
            }
            break;
        }
        if (len > c->len - 4 - pos - RC_CKPT_SECTION) {
            rc_ckpt_free(c);
            return rc_ckpt_corrupt(c, err, "a section runs past the end");
        }
        pos += RC_CKPT_SECTION + (size_t)len;
    }
    return RC_OK;
}

void rc_ckpt_free(rc_ckpt *c)
{
    free(c->buf);
    c->buf = NULL;
    c->len = 0;
}

const void *rc_ckpt_find(const rc_ckpt *c, const char *tag, size_t *bytes)
{
    char t[8];
    size_t pos = RC_CKPT_HEADER;
    rc_ckpt_tag(t, tag);
    if (!c->buf)
        return NULL;
    /* the layout was checked by rc_ckpt_load */
    while (memcmp(c->buf + pos, "END\0\0\0\0\0", 8) != 0) {
        uint64_t len;
        memcpy(&len, c->buf + pos + 8, sizeof len);
        if (!memcmp(c->buf + pos, t, 8)) {
            if (bytes)
                *bytes = (size_t)len;
            return c->buf + pos + RC_CKPT_SECTION;
        }
        pos += RC_CKPT_SECTION + (size_t)len;
    }
    return NULL;
}

rc_status rc_ckpt_get(const rc_ckpt *c, const char *tag, void *dst,
                      size_t bytes, rc_error *err)
{
    size_t have = 0;
    const void *src = rc_ckpt_find(c, tag, &have);
    char msg[200];
    if (!src || have != bytes) {
        if (src)
            snprintf(msg, sizeof msg,
                     "section %s has %zu bytes where this scenario needs %zu",
                     tag, have, bytes);
        else
            snprintf(msg, sizeof msg, "section %s is missing", tag);
        return rc_ckpt_corrupt(c, err, msg);
    }
    if (bytes > 0)
        memcpy(dst, src, bytes);
    return RC_OK;
}

rc_status rc_ckpt_get_long(const rc_ckpt *c, const char *tag, long *v,
                           rc_error *err)
{
    int64_t x;
    rc_status st = rc_ckpt_get(c, tag, &x, sizeof x, err);
    if (st == RC_OK)
        *v = (long)x;
    return st;
}

int rc_ckpt_find_long(const rc_ckpt *c, const char *tag, long *v)
{
    size_t n = 0;
    const void *src = rc_ckpt_find(c, tag, &n);
    int64_t x;
    if (!src || n != sizeof x)
        return 0;
    memcpy(&x, src, sizeof x);
    *v = (long)x;
    return 1;
}

/* A NUL-terminated string section (NULL when absent or not terminated). */
static const char *rc_ckpt_string(const rc_ckpt *c, const char *tag)
{
    size_t n = 0;
    const char *s = (const char *)rc_ckpt_find(c, tag, &n);
    if (!s || n == 0 || s[n - 1] != '\0')
        return NULL;
    return s;
}

rc_status rc_ckpt_scenario(const rc_ckpt *c, rc_scenario **out,
                           char *out_dir, size_t out_dir_size, rc_error *err)
{
    const char *path = rc_ckpt_string(c, "SCNPATH");
    const char *text = rc_ckpt_string(c, "SCNTEXT");
    const char *dir = rc_ckpt_string(c, "OUTDIR");
    const char **sets = NULL;
    long nsets = 0, k;
    rc_status st;
    char tag[32]; /* "SET" and a long */
    *out = NULL;
    if (!path || !text || !dir ||
        rc_ckpt_get_long(c, "NSETS", &nsets, err) != RC_OK || nsets < 0 ||
        nsets > 100000)
        return rc_ckpt_corrupt(c, err, "its scenario is missing");
    sets = (const char **)calloc((size_t)nsets + 1, sizeof *sets);
    if (!sets)
        return rc_ckpt_fail(err, RC_ERR_NOMEM, c->path, "out of memory%s",
                            NULL);
    for (k = 0; k < nsets; ++k) {
        snprintf(tag, sizeof tag, "SET%ld", k);
        if (!(sets[k] = rc_ckpt_string(c, tag))) {
            free(sets);
            return rc_ckpt_corrupt(c, err, "a --set of its scenario is "
                                           "missing");
        }
    }
    st = rc_scenario_load_text_(path, text, sets, (int)nsets, out, err);
    free(sets);
    if (st != RC_OK)
        return st;
    if (out_dir)
        snprintf(out_dir, out_dir_size, "%s", dir);
    return RC_OK;
}

rc_status rc_ckpt_reopen_output(const rc_ckpt *c, const char *tag,
                                rc_outfile *of, const char *dir,
                                const char *name, rc_error *err)
{
    uint64_t rec[2];
    unsigned long crc;
    rc_status st;
    char msg[1400];
    memset(of, 0, sizeof *of);
    if ((st = rc_ckpt_get(c, tag, rec, sizeof rec, err)) != RC_OK)
        return st;
    if (rec[1] == UINT64_MAX) /* the run did not write this file */
        return RC_OK;
    snprintf(of->final_path, sizeof of->final_path, "%s/%s", dir, name);
    snprintf(of->partial_path, sizeof of->partial_path, "%s.partial",
             of->final_path);
    if (rc_file_crc(of->partial_path, rec[0], &crc) != 0 ||
        (uint64_t)crc != rec[1]) {
        snprintf(msg, sizeof msg,
                 "%.900s does not hold the %llu bytes the checkpoint was taken "
                 "with (moved, edited or from another run); restart in the "
                 "directory the run wrote",
                 of->partial_path, (unsigned long long)rec[0]);
        return rc_ckpt_fail(err, RC_ERR_STATE, c->path, "%.1000s", msg);
    }
    if (truncate(of->partial_path, (off_t)rec[0]) != 0 ||
        !(of->f = fopen(of->partial_path, "ab")))
        return rc_ckpt_fail(err, RC_ERR_IO, of->partial_path,
                            "cannot reopen output file: %s", strerror(errno));
    return RC_OK;
}

rc_status rc_checkpoint_scenario(const char *path, rc_scenario **out,
                                 char *out_dir, size_t out_dir_size,
                                 rc_error *err)
{
    rc_ckpt c;
    rc_status st = rc_ckpt_load(path, &c, err);
    if (st != RC_OK)
        return st;
    st = rc_ckpt_scenario(&c, out, out_dir, out_dir_size, err);
    rc_ckpt_free(&c);
    return st;
}

int rc_ckpt_due(const rc_scenario *scn, long step, double dt,
                double *next_time, double *next_wall, double now)
{
    int due = 0;
    /* relative 1e-12: step * dt reaching a multiple of the interval up to
     * the rounding of the product */
    if (scn->checkpoint_every > 0.0 &&
        (double)step * dt >= *next_time * (1.0 - 1e-12)) {
        /* the next one a whole interval on, so that an interval shorter
         * than dt checkpoints every step and never twice in one */
        while (*next_time <= (double)step * dt * (1.0 + 1e-12))
            *next_time += scn->checkpoint_every;
        due = 1;
    }
    if (scn->checkpoint_wall > 0.0 && now >= *next_wall) {
        *next_wall = now + scn->checkpoint_wall;
        due = 1;
    }
    return due;
}

rc_status rc_ckpt_clear_stale(const char *dir, const char *const *names,
                              int restart, rc_error *err)
{
    int k;
    rc_status st;
    for (k = 0; names[k]; ++k) {
        /* a restart keeps the data files it continues and its checkpoint;
         * summary.json.partial is written anew at the end either way */
        int keep = restart && (strcmp(names[k], RC_CKPT_NAME) == 0 ||
                               (strstr(names[k], ".partial") &&
                                strcmp(names[k], "summary.json.partial")));
        if (!keep && (st = rc_out_remove_stale(dir, names[k], err)) != RC_OK)
            return st;
    }
    /* a checkpoint whose writing was cut short (SIGKILL, power loss) is
     * never read: its rename never happened */
    return rc_out_remove_stale(dir, RC_CKPT_NAME ".tmp", err);
}

void rc_ckpt_stop_message(char *buf, size_t size, long steps, long total,
                          const char *out_dir, rc_status written,
                          const rc_error *why)
{
    if (written == RC_OK)
        snprintf(buf, size,
                 "interrupted at step %ld of %ld; continue with ricochet run "
                 "--restart %.300s/%s",
                 steps, total, out_dir, RC_CKPT_NAME);
    else
        snprintf(buf, size,
                 "interrupted at step %ld of %ld; no checkpoint: %.300s",
                 steps, total, why->message);
}

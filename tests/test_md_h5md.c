/* H5MD trajectories (src/host/md/h5md.c).
 *
 * Writes 3 frames of n = 5 particles in 3-D (with velocities and images,
 * one frame without images) and in 2-D (no velocities, one axis walled),
 * closes the file, reopens it with the HDF5 C API and checks:
 *  - the H5MD 1.1 layout: h5md/version = [1, 1]; h5md/author/name and
 *    h5md/creator/{name,version}; particles/all/box dimension and
 *    boundary attributes; box/edges/value [3][D] holding the lengths;
 *    particles/all/radius [n];
 *  - position/value of shape [3][n][D], position/step and position/time
 *    of shape [3] with the values given; velocity present only when asked;
 *    image/value [3][n][D] with zeros for the frame written without;
 *  - positions and velocities read back bit-identical (memcmp);
 *  - step/time of velocity, image and box/edges equal position's (links);
 *  - failures: a file in a directory that does not exist (message names
 *    H5Fcreate), bad arguments, v missing when velocities were asked for.
 * Without HDF5 in the build: the functions return -2, the test exits 77. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/md/h5md.h"
#include "rc_test.h"

#ifdef RICOCHET_HAVE_HDF5
#include <hdf5.h>

#define N 5
#define FRAMES 3

/* Shape of dataset path in f into dims (up to 3); its rank, or -1. */
static int shape_of(hid_t f, const char *path, hsize_t *dims)
{
    hid_t d, s;
    int rank = -1;
    d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0)
        return -1;
    s = H5Dget_space(d);
    if (s >= 0) {
        rank = H5Sget_simple_extent_ndims(s);
        if (rank < 0 || rank > 3 || H5Sget_simple_extent_dims(s, dims, NULL) < 0)
            rank = -1;
        H5Sclose(s);
    }
    H5Dclose(d);
    return rank;
}

/* Read all of dataset path as mtype into buf; 0 or -1. */
static int read_all(hid_t f, const char *path, hid_t mtype, void *buf)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    int rc;
    if (d < 0)
        return -1;
    rc = H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ? -1 : 0;
    H5Dclose(d);
    return rc;
}

/* Integer attribute name of object obj: its element count (0 scalar) in
 * *count, values into v (up to 4); 0 or -1. */
static int int_attr(hid_t f, const char *obj, const char *name, int *v,
                    int *count)
{
    hid_t a, s;
    int rc = -1, rank;
    hsize_t dims[1] = {0};
    a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0)
        return -1;
    s = H5Aget_space(a);
    if (s >= 0) {
        rank = H5Sget_simple_extent_ndims(s);
        if (rank == 0 || (rank == 1 && H5Sget_simple_extent_dims(s, dims, NULL) == 1 &&
                          dims[0] <= 4)) {
            *count = rank == 0 ? 0 : (int)dims[0];
            if (H5Aread(a, H5T_NATIVE_INT, v) >= 0)
                rc = 0;
        }
        H5Sclose(s);
    }
    H5Aclose(a);
    return rc;
}

/* String attribute (fixed or variable length, scalar or vector of up to
 * 3): element k, NUL-terminated, into out[k] (64 chars); count as above. */
static int str_attr(hid_t f, const char *obj, const char *name,
                    char out[3][64], int *count)
{
    hid_t a, s = -1, t = -1, mt = -1;
    int rc = -1, rank, k, m;
    hsize_t dims[1] = {1};
    a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0)
        return -1;
    s = H5Aget_space(a);
    t = H5Aget_type(a);
    if (s < 0 || t < 0 || H5Tget_class(t) != H5T_STRING)
        goto done;
    rank = H5Sget_simple_extent_ndims(s);
    if (rank == 1 && H5Sget_simple_extent_dims(s, dims, NULL) != 1)
        goto done;
    if (rank > 1 || dims[0] > 3)
        goto done;
    m = rank == 0 ? 1 : (int)dims[0];
    *count = rank == 0 ? 0 : m;
    memset(out, 0, 3 * 64);
    if (H5Tis_variable_str(t) > 0) {
        char *p[3] = {NULL, NULL, NULL};
        mt = H5Tcopy(H5T_C_S1);
        if (mt < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 ||
            H5Aread(a, mt, p) < 0)
            goto done;
        for (k = 0; k < m; ++k) {
            snprintf(out[k], 64, "%s", p[k] ? p[k] : "");
            H5free_memory(p[k]);
        }
    } else {
        size_t len = H5Tget_size(t);
        char buf[3 * 64];
        if (len == 0 || len >= 64)
            goto done;
        memset(buf, 0, sizeof buf);
        if (H5Aread(a, t, buf) < 0)
            goto done;
        for (k = 0; k < m; ++k)
            memcpy(out[k], buf + (size_t)k * len, len);
    }
    rc = 0;
done:
    if (mt >= 0)
        H5Tclose(mt);
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    H5Aclose(a);
    return rc;
}

/* One system: write FRAMES frames, close, read back, check. */
static void check_system(const char *dir, int dim, int with_velocity)
{
    char path[1024], msg[512], s[3][64];
    double box[3] = {4.0, 5.5, 7.25}, radius[N];
    int periodic[3] = {1, 0, 1};
    double q[FRAMES][N][3], v[FRAMES][N][3];
    int img[FRAMES][N][3];
    long steps[FRAMES] = {0, 100, 250};
    double times[FRAMES] = {0.0, 0.1, 0.3333333333333333};
    unsigned long long seed = 12345u + (unsigned)dim;
    rc_h5md *h = NULL;
    int f, i, k, rc, cnt, iv[4];
    hid_t file;
    hsize_t dims[3];

    snprintf(path, sizeof path, "%s/traj%dd.h5", dir, dim);
    for (i = 0; i < N; ++i)
        radius[i] = 0.5 + 0.1 * i;
    for (f = 0; f < FRAMES; ++f)
        for (i = 0; i < N; ++i)
            for (k = 0; k < 3; ++k) {
                /* random bits in every mantissa: a conversion or a float
                 * round trip would show */
                q[f][i][k] = box[k] * rc_test_uniform(&seed);
                v[f][i][k] = 2.0 * rc_test_uniform(&seed) - 1.0;
                img[f][i][k] = (f + 1) * (i - 2) * (k + 1);
            }

    rc = rc_h5md_create(&h, path, N, dim, box, periodic, radius,
                        with_velocity, "0.1.0-test", msg, sizeof msg);
    RC_CHECK(rc == 0 && h, "%dD create: rc %d: %s", dim, rc, msg);
    if (rc != 0 || !h)
        return;
    /* q, v and images are [N][3] per frame: pack to [N][dim]. */
    for (f = 0; f < FRAMES; ++f) {
        double qf[N * 3], vf[N * 3];
        int imf[N * 3];
        for (i = 0; i < N; ++i)
            for (k = 0; k < dim; ++k) {
                qf[i * dim + k] = q[f][i][k];
                vf[i * dim + k] = v[f][i][k];
                imf[i * dim + k] = img[f][i][k];
            }
        rc = rc_h5md_append(h, steps[f], times[f], qf,
                            with_velocity ? vf : NULL,
                            f == 1 ? NULL : imf, msg, sizeof msg);
        RC_CHECK(rc == 0, "%dD append %d: rc %d: %s", dim, f, rc, msg);
    }
    if (with_velocity) {
        /* v missing: refused before anything is written. */
        double qf[N * 3] = {0};
        rc = rc_h5md_append(h, 300, 0.5, qf, NULL, NULL, msg, sizeof msg);
        RC_CHECK(rc == -1 && msg[0], "append without v: rc %d", rc);
    }
    rc = rc_h5md_close(h, msg, sizeof msg);
    RC_CHECK(rc == 0, "%dD close: rc %d: %s", dim, rc, msg);

    file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    RC_CHECK(file >= 0, "%dD: H5Fopen %s", dim, path);
    if (file < 0)
        return;

    /* h5md metadata group */
    rc = int_attr(file, "h5md", "version", iv, &cnt);
    RC_CHECK(rc == 0 && cnt == 2 && iv[0] == 1 && iv[1] == 1,
             "h5md/version: rc %d count %d", rc, cnt);
    rc = str_attr(file, "h5md/author", "name", s, &cnt);
    RC_CHECK(rc == 0 && cnt == 0 && strcmp(s[0], "ricochet") == 0,
             "h5md/author/name: rc %d '%s'", rc, s[0]);
    rc = str_attr(file, "h5md/creator", "name", s, &cnt);
    RC_CHECK(rc == 0 && strcmp(s[0], "ricochet") == 0,
             "h5md/creator/name: rc %d '%s'", rc, s[0]);
    rc = str_attr(file, "h5md/creator", "version", s, &cnt);
    RC_CHECK(rc == 0 && strcmp(s[0], "0.1.0-test") == 0,
             "h5md/creator/version: rc %d '%s'", rc, s[0]);

    /* box */
    rc = int_attr(file, "particles/all/box", "dimension", iv, &cnt);
    RC_CHECK(rc == 0 && cnt == 0 && iv[0] == dim,
             "box/dimension: rc %d count %d value %d", rc, cnt, iv[0]);
    rc = str_attr(file, "particles/all/box", "boundary", s, &cnt);
    RC_CHECK(rc == 0 && cnt == dim, "box/boundary: rc %d count %d", rc, cnt);
    for (k = 0; rc == 0 && k < dim; ++k)
        RC_CHECK(strcmp(s[k], periodic[k] ? "periodic" : "none") == 0,
                 "box/boundary[%d] = '%s'", k, s[k]);
    RC_CHECK(shape_of(file, "particles/all/box/edges/value", dims) == 2 &&
                 dims[0] == FRAMES && dims[1] == (hsize_t)dim,
             "box/edges/value shape");
    {
        double e[FRAMES][3];
        rc = read_all(file, "particles/all/box/edges/value",
                      H5T_NATIVE_DOUBLE, e);
        RC_CHECK(rc == 0, "read box/edges/value");
        for (f = 0; rc == 0 && f < FRAMES; ++f)
            for (k = 0; k < dim; ++k)
                RC_CHECK(((double *)e)[f * dim + k] == box[k],
                         "edges[%d][%d] = %.17g", f, k,
                         ((double *)e)[f * dim + k]);
    }

    /* radius */
    {
        double r[N];
        RC_CHECK(shape_of(file, "particles/all/radius", dims) == 1 &&
                     dims[0] == N, "radius shape");
        rc = read_all(file, "particles/all/radius", H5T_NATIVE_DOUBLE, r);
        RC_CHECK(rc == 0 && memcmp(r, radius, sizeof r) == 0,
                 "radius read back");
    }

    /* position, velocity, image */
    {
        double qr[FRAMES * N * 3], vr[FRAMES * N * 3], tr[FRAMES];
        long long sr[FRAMES];
        int ir[FRAMES * N * 3], bad = 0;
        const char *clock_of[3] = {"particles/all/velocity",
                                   "particles/all/image",
                                   "particles/all/box/edges"};
        RC_CHECK(shape_of(file, "particles/all/position/value", dims) == 3 &&
                     dims[0] == FRAMES && dims[1] == N &&
                     dims[2] == (hsize_t)dim,
                 "position/value shape [%d][%d][%d]", FRAMES, N, dim);
        RC_CHECK(shape_of(file, "particles/all/position/step", dims) == 1 &&
                     dims[0] == FRAMES, "position/step shape");
        RC_CHECK(shape_of(file, "particles/all/position/time", dims) == 1 &&
                     dims[0] == FRAMES, "position/time shape");
        rc = read_all(file, "particles/all/position/value", H5T_NATIVE_DOUBLE,
                      qr);
        RC_CHECK(rc == 0, "read position/value");
        for (f = 0; rc == 0 && f < FRAMES; ++f)
            for (i = 0; i < N; ++i)
                bad += memcmp(&qr[(f * N + i) * dim], q[f][i],
                              (size_t)dim * sizeof(double)) != 0;
        RC_CHECK(rc == 0 && bad == 0, "positions bit-identical (%d rows differ)",
                 bad);
        rc = read_all(file, "particles/all/position/step", H5T_NATIVE_LLONG,
                      sr);
        RC_CHECK(rc == 0 && sr[0] == steps[0] && sr[1] == steps[1] &&
                     sr[2] == steps[2], "position/step values");
        rc = read_all(file, "particles/all/position/time", H5T_NATIVE_DOUBLE,
                      tr);
        RC_CHECK(rc == 0 && memcmp(tr, times, sizeof tr) == 0,
                 "position/time values");
        /* the other elements share position's clock */
        for (k = with_velocity ? 0 : 1; k < 3; ++k) {
            char p[128];
            long long s2[FRAMES] = {-1, -1, -1};
            double t2[FRAMES] = {-1, -1, -1};
            snprintf(p, sizeof p, "%s/step", clock_of[k]);
            rc = read_all(file, p, H5T_NATIVE_LLONG, s2);
            RC_CHECK(rc == 0 && memcmp(s2, sr, sizeof s2) == 0, "%s", p);
            snprintf(p, sizeof p, "%s/time", clock_of[k]);
            rc = read_all(file, p, H5T_NATIVE_DOUBLE, t2);
            RC_CHECK(rc == 0 && memcmp(t2, tr, sizeof t2) == 0, "%s", p);
        }

        if (with_velocity) {
            RC_CHECK(shape_of(file, "particles/all/velocity/value", dims) ==
                             3 && dims[0] == FRAMES && dims[1] == N &&
                         dims[2] == (hsize_t)dim, "velocity/value shape");
            rc = read_all(file, "particles/all/velocity/value",
                          H5T_NATIVE_DOUBLE, vr);
            bad = 0;
            for (f = 0; rc == 0 && f < FRAMES; ++f)
                for (i = 0; i < N; ++i)
                    bad += memcmp(&vr[(f * N + i) * dim], v[f][i],
                                  (size_t)dim * sizeof(double)) != 0;
            RC_CHECK(rc == 0 && bad == 0, "velocities bit-identical (%d)",
                     bad);
        } else {
            RC_CHECK(H5Lexists(file, "particles/all/velocity", H5P_DEFAULT) ==
                         0, "no velocity group when not asked for");
        }

        RC_CHECK(shape_of(file, "particles/all/image/value", dims) == 3 &&
                     dims[0] == FRAMES && dims[1] == N &&
                     dims[2] == (hsize_t)dim, "image/value shape");
        rc = read_all(file, "particles/all/image/value", H5T_NATIVE_INT, ir);
        RC_CHECK(rc == 0, "read image/value");
        bad = 0;
        for (f = 0; rc == 0 && f < FRAMES; ++f)
            for (i = 0; i < N; ++i)
                for (k = 0; k < dim; ++k)
                    bad += ir[(f * N + i) * dim + k] !=
                           (f == 1 ? 0 : img[f][i][k]);
        RC_CHECK(rc == 0 && bad == 0, "images (0 in frame 1): %d wrong", bad);
    }
    RC_CHECK(H5Fclose(file) >= 0, "H5Fclose");
    remove(path);
}

int main(void)
{
    char dir[] = "/tmp/rc_h5md_XXXXXX", path[256], msg[512];
    double box[3] = {1, 1, 1}, q[3] = {0.5, 0.5, 0.5};
    int periodic[3] = {1, 1, 1}, rc;
    rc_h5md *h = (rc_h5md *)&rc; /* must be reset to NULL on failure */

    if (!rc_h5md_available())
        return 1; /* a build with HDF5 must say so */
    if (!mkdtemp(dir)) {
        fprintf(stderr, "mkdtemp failed\n");
        return 1;
    }
    /* HDF5 would print its error stacks for the failed opens in the
     * readers below; the library's own calls silence it themselves. */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

    check_system(dir, 3, 1);
    check_system(dir, 2, 0);

    /* A directory that does not exist. */
    snprintf(path, sizeof path, "%s/no/such/dir/t.h5", dir);
    msg[0] = '\0';
    rc = rc_h5md_create(&h, path, 1, 3, box, periodic, NULL, 0, "x", msg,
                        sizeof msg);
    RC_CHECK(rc == -1 && h == NULL, "missing directory: rc %d", rc);
    RC_CHECK(strstr(msg, "H5Fcreate") != NULL, "message: '%s'", msg);
    printf("missing directory: %s\n", msg);
    /* Bad arguments. */
    rc = rc_h5md_create(&h, path, 1, 4, box, periodic, NULL, 0, "x", msg,
                        sizeof msg);
    RC_CHECK(rc == -1 && h == NULL && msg[0], "dim 4: rc %d", rc);
    rc = rc_h5md_create(&h, path, 0, 3, box, periodic, NULL, 0, "x", msg,
                        sizeof msg);
    RC_CHECK(rc == -1 && h == NULL && msg[0], "n 0: rc %d", rc);
    rc = rc_h5md_append(NULL, 0, 0.0, q, NULL, NULL, msg, sizeof msg);
    RC_CHECK(rc == -1 && msg[0], "append to NULL: rc %d", rc);
    RC_CHECK(rc_h5md_close(NULL, msg, sizeof msg) == 0, "close NULL");

    if (rmdir(dir) != 0)
        fprintf(stderr, "note: could not remove %s\n", dir);
    return rc_test_finish("test_md_h5md");
}

#else /* !RICOCHET_HAVE_HDF5 */

int main(void)
{
    char msg[256] = "";
    double box[3] = {1, 1, 1};
    int periodic[3] = {1, 1, 1};
    rc_h5md *h = NULL;
    int rc;
    if (rc_h5md_available())
        return 1; /* the header and the build disagree */
    /* The interface exists and declines explicitly. */
    rc = rc_h5md_create(&h, "/tmp/never.h5", 1, 3, box, periodic, NULL, 0,
                        "x", msg, sizeof msg);
    if (rc != RC_H5MD_UNSUPPORTED || h != NULL || !msg[0]) {
        fprintf(stderr, "stub create: rc %d, msg '%s'\n", rc, msg);
        return 1;
    }
    printf("test_md_h5md: skipped (%s)\n", msg);
    return 77;
}

#endif

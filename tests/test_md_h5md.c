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
 *  - particles/all/{mass,species,id} [n] (species with its `names`
 *    attribute), the H5MD `unit` attributes (3-D: Angstrom / ps /
 *    "Angstrom ps-1" where MDAnalysis looks; 2-D written without units:
 *    none anywhere), observables/<name>/{value,step,time} with the rows
 *    given and the second observable's clock linked to the first's;
 *  - rc_h5md_read gives back frame 0, 1, 2, -1 and -3 bit for bit
 *    (positions, velocities, radius, mass, box edges); frame 3 and -4
 *    refused naming the frame count; a 3-D file read as 2-D refused
 *    naming the dimension; a file without particles/ refused;
 *  - rc_h5md_reopen at 2 frames and 1 row, one more frame and row
 *    appended: 3 frames whose last is the new one, 2 rows;
 *  - failures: a file in a directory that does not exist (message names
 *    H5Fcreate), bad arguments, v missing when velocities were asked for.
 * Without HDF5 in the build: the functions return -2, the test exits 77. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/md/h5md.h"
#include "host/md/xyz.h"
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

/* mass, species (+ names) and id of particles/all. */
static void check_particle_data(hid_t file, int dim, const double *mass,
                                const int *species,
                                const char *const *species_names)
{
    double m[N];
    int sp[N], id[N], i, rc, cnt;
    char s[3][64];
    hsize_t dims[3];
    RC_CHECK(shape_of(file, "particles/all/mass", dims) == 1 && dims[0] == N,
             "%dD mass shape", dim);
    rc = read_all(file, "particles/all/mass", H5T_NATIVE_DOUBLE, m);
    RC_CHECK(rc == 0 && memcmp(m, mass, sizeof m) == 0, "mass read back");
    rc = read_all(file, "particles/all/species", H5T_NATIVE_INT, sp);
    RC_CHECK(rc == 0 && memcmp(sp, species, sizeof sp) == 0,
             "species read back");
    rc = str_attr(file, "particles/all/species", "names", s, &cnt);
    RC_CHECK(rc == 0 && cnt == 2 && !strcmp(s[0], species_names[0]) &&
                 !strcmp(s[1], species_names[1]),
             "species names: rc %d count %d '%s' '%s'", rc, cnt, s[0], s[1]);
    rc = read_all(file, "particles/all/id", H5T_NATIVE_INT, id);
    for (i = 0; rc == 0 && i < N; ++i)
        RC_CHECK(id[i] == i, "id[%d] = %d", i, id[i]);
    RC_CHECK(rc == 0, "read id");
}

/* The unit attributes: 3-D where MDAnalysis reads them, 2-D none. */
static void check_units(hid_t file, int dim, int with_velocity)
{
    static const char *const where[6][2] = {
        {"particles/all/position/value", "Angstrom"},
        {"particles/all/position/time", "ps"},
        {"particles/all/box/edges/value", "Angstrom"},
        {"particles/all/radius", "Angstrom"},
        {"observables/temperature/time", "ps"},
        {"particles/all/velocity/value", "Angstrom ps-1"}};
    char s[3][64];
    int k, cnt, rc;
    for (k = 0; k < (with_velocity ? 6 : 5); ++k) {
        if (dim == 3) {
            rc = str_attr(file, where[k][0], "unit", s, &cnt);
            RC_CHECK(rc == 0 && cnt == 0 && !strcmp(s[0], where[k][1]),
                     "%s unit: rc %d '%s'", where[k][0], rc, s[0]);
        } else {
            RC_CHECK(H5Aexists_by_name(file, where[k][0], "unit",
                                       H5P_DEFAULT) == 0,
                     "%s: no unit without units", where[k][0]);
        }
    }
    /* dimensionless or counted: never a unit */
    RC_CHECK(H5Aexists_by_name(file, "particles/all/mass", "unit",
                               H5P_DEFAULT) == 0 &&
                 H5Aexists_by_name(file, "observables/Z/value", "unit",
                                   H5P_DEFAULT) == 0,
             "mass and observables carry no unit");
}

/* rc_h5md_read: every frame, counted from both ends, bit for bit; the
 * refusals. */
static void check_read_back(const char *path, int dim, int with_velocity,
                            double q[FRAMES][N][3], double v[FRAMES][N][3],
                            const double *radius, const double *mass,
                            const double *box)
{
    static const long frames[5] = {0, 1, 2, -1, -3};
    char msg[600];
    rc_xyz x;
    int t, i, k, rc, bad;
    for (t = 0; t < 5; ++t) {
        long f = frames[t] < 0 ? frames[t] + FRAMES : frames[t];
        rc = rc_h5md_read(path, dim, frames[t], &x, msg, sizeof msg);
        RC_CHECK(rc == 0 && x.n == N && x.frame == f && x.frames == FRAMES,
                 "%dD read frame %ld: rc %d n %ld frame %ld: %s", dim,
                 frames[t], rc, x.n, x.frame, msg);
        if (rc != 0)
            continue;
        bad = 0;
        for (i = 0; i < N; ++i)
            for (k = 0; k < dim; ++k) {
                bad += memcmp(&x.q[i * dim + k], &q[f][i][k],
                              sizeof(double)) != 0;
                if (with_velocity)
                    bad += !x.v || memcmp(&x.v[i * dim + k], &v[f][i][k],
                                          sizeof(double)) != 0;
            }
        RC_CHECK(bad == 0, "%dD frame %ld: %d values differ", dim, frames[t],
                 bad);
        RC_CHECK(with_velocity ? x.v != NULL && !x.momenta : x.v == NULL,
                 "%dD velocities present only when written", dim);
        RC_CHECK(x.radius && x.mass &&
                     memcmp(x.radius, radius, sizeof(double) * N) == 0 &&
                     memcmp(x.mass, mass, sizeof(double) * N) == 0,
                 "%dD radius and mass read back", dim);
        RC_CHECK(x.have_box && memcmp(x.box, box, sizeof(double) * (size_t)dim)
                                       == 0,
                 "%dD box read back", dim);
        rc_xyz_free(&x);
    }
    rc = rc_h5md_read(path, dim, FRAMES, &x, msg, sizeof msg);
    RC_CHECK(rc == -1 && x.q == NULL && strstr(msg, path) &&
                 strstr(msg, "frame 3 does not exist (the file has 3"),
             "frame 3 refused: '%s'", msg);
    rc = rc_h5md_read(path, dim, -FRAMES - 1, &x, msg, sizeof msg);
    RC_CHECK(rc == -1 && strstr(msg, "frame -4 does not exist"),
             "frame -4 refused: '%s'", msg);
    rc = rc_h5md_read(path, 5 - dim, 0, &x, msg, sizeof msg);
    RC_CHECK(rc == -1 && strstr(msg, "position/value") &&
                 strstr(msg, "dimension"),
             "%dD file read as %dD refused: '%s'", dim, 5 - dim, msg);
}

/* Reopen after 2 frames and 1 row (a checkpoint's counts), append one
 * of each: 3 frames, the last the new one, 2 rows. */
static void check_reopen(const char *path, int dim, int with_velocity,
                         const double *box, const char *const *obs_names)
{
    char msg[600];
    rc_h5md *h = NULL;
    double q[N * 3], v[N * 3], ov[2] = {7.0, 8.0};
    rc_xyz x;
    hsize_t dims[3];
    hid_t file;
    int i, rc;
    for (i = 0; i < N * dim; ++i) {
        q[i] = 0.125 * (i + 1);
        v[i] = -0.5 * i;
    }
    rc = rc_h5md_reopen(&h, path, N, dim, box, with_velocity, 2, obs_names,
                        2, 1, msg, sizeof msg);
    RC_CHECK(rc == 0 && h && rc_h5md_frames(h) == 2 && rc_h5md_rows(h) == 1,
             "%dD reopen: rc %d: %s", dim, rc, msg);
    if (rc != 0)
        return;
    rc = rc_h5md_append(h, 400, 0.4, q, v, NULL, msg, sizeof msg);
    RC_CHECK(rc == 0, "append after reopen: %s", msg);
    rc = rc_h5md_observe(h, 400, 0.4, ov, msg, sizeof msg);
    RC_CHECK(rc == 0, "observe after reopen: %s", msg);
    RC_CHECK(rc_h5md_close(h, msg, sizeof msg) == 0, "close: %s", msg);
    rc = rc_h5md_read(path, dim, -1, &x, msg, sizeof msg);
    RC_CHECK(rc == 0 && x.frames == 3 &&
                 memcmp(x.q, q, sizeof(double) * N * (size_t)dim) == 0,
             "%dD last frame after reopen is the appended one: %s", dim,
             msg);
    if (rc == 0)
        rc_xyz_free(&x);
    file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    RC_CHECK(file >= 0 &&
                 shape_of(file, "observables/Z/value", dims) == 1 &&
                 dims[0] == 2,
             "%dD 2 observable rows after reopen", dim);
    if (file >= 0)
        H5Fclose(file);
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
    double mass[N], obs[2][2] = {{1.5, -2.25}, {0.125, 1e300}};
    int species[N];
    const char *species_names[2] = {"Ar", "X"};
    const char *obs_names[2] = {"temperature", "Z"};
    long obs_steps[2] = {0, 250};
    double obs_times[2] = {0.0, 0.3333333333333333};
    rc_h5md_meta meta;
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

    for (i = 0; i < N; ++i) {
        mass[i] = 1.0 + 0.25 * i;
        species[i] = i % 2;
    }
    memset(&meta, 0, sizeof meta);
    meta.radius = radius;
    meta.mass = mass;
    meta.species = species;
    meta.species_names = species_names;
    meta.nspecies = 2;
    meta.version = "0.1.0-test";
    /* 3-D with units, 2-D without: both ways are checked */
    meta.length_unit = dim == 3 ? "Angstrom" : NULL;
    meta.time_unit = dim == 3 ? "ps" : NULL;
    meta.obs_names = obs_names;
    meta.nobs = 2;
    rc = rc_h5md_create(&h, path, N, dim, box, periodic, with_velocity, &meta,
                        msg, sizeof msg);
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
        if (f != 1) {
            int r = f == 0 ? 0 : 1;
            rc = rc_h5md_observe(h, obs_steps[r], obs_times[r], obs[r], msg,
                                 sizeof msg);
            RC_CHECK(rc == 0, "%dD observe %d: rc %d: %s", dim, r, rc, msg);
        }
    }
    RC_CHECK(rc_h5md_frames(h) == FRAMES && rc_h5md_rows(h) == 2,
             "%dD counts: %ld frames, %ld rows", dim, rc_h5md_frames(h),
             rc_h5md_rows(h));
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
    check_particle_data(file, dim, mass, species, species_names);
    check_units(file, dim, with_velocity);
    {
        double ov[2], ot[2];
        long long os[2];
        int r;
        for (k = 0; k < 2; ++k) {
            char p[128];
            snprintf(p, sizeof p, "observables/%s/value", obs_names[k]);
            RC_CHECK(shape_of(file, p, dims) == 1 && dims[0] == 2,
                     "%s shape", p);
            rc = read_all(file, p, H5T_NATIVE_DOUBLE, ov);
            for (r = 0; rc == 0 && r < 2; ++r)
                RC_CHECK(ov[r] == obs[r][k], "%s[%d] = %.17g", p, r, ov[r]);
            snprintf(p, sizeof p, "observables/%s/step", obs_names[k]);
            rc = read_all(file, p, H5T_NATIVE_LLONG, os);
            RC_CHECK(rc == 0 && os[0] == obs_steps[0] && os[1] == obs_steps[1],
                     "%s", p);
            snprintf(p, sizeof p, "observables/%s/time", obs_names[k]);
            rc = read_all(file, p, H5T_NATIVE_DOUBLE, ot);
            RC_CHECK(rc == 0 && memcmp(ot, obs_times, sizeof ot) == 0, "%s",
                     p);
        }
    }
    RC_CHECK(H5Fclose(file) >= 0, "H5Fclose");

    check_read_back(path, dim, with_velocity, q, v, radius, mass, box);
    check_reopen(path, dim, with_velocity, box, obs_names);
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
    rc = rc_h5md_create(&h, path, 1, 3, box, periodic, 0, NULL, msg,
                        sizeof msg);
    RC_CHECK(rc == -1 && h == NULL, "missing directory: rc %d", rc);
    RC_CHECK(strstr(msg, "H5Fcreate") != NULL, "message: '%s'", msg);
    printf("missing directory: %s\n", msg);
    /* Bad arguments. */
    rc = rc_h5md_create(&h, path, 1, 4, box, periodic, 0, NULL, msg,
                        sizeof msg);
    RC_CHECK(rc == -1 && h == NULL && msg[0], "dim 4: rc %d", rc);
    rc = rc_h5md_create(&h, path, 0, 3, box, periodic, 0, NULL, msg,
                        sizeof msg);
    RC_CHECK(rc == -1 && h == NULL && msg[0], "n 0: rc %d", rc);
    rc = rc_h5md_append(NULL, 0, 0.0, q, NULL, NULL, msg, sizeof msg);
    RC_CHECK(rc == -1 && msg[0], "append to NULL: rc %d", rc);
    RC_CHECK(rc_h5md_close(NULL, msg, sizeof msg) == 0, "close NULL");
    /* Reading what is not an H5MD trajectory. */
    {
        rc_xyz x;
        hid_t f;
        snprintf(path, sizeof path, "%s/plain.h5", dir);
        f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        RC_CHECK(f >= 0 && H5Fclose(f) >= 0, "plain HDF5 file");
        RC_CHECK(rc_h5md_is_hdf5(path) == 1, "HDF5 signature found");
        rc = rc_h5md_read(path, 3, 0, &x, msg, sizeof msg);
        RC_CHECK(rc == -1 && strstr(msg, "particles"),
                 "no particles group: '%s'", msg);
        remove(path);
        snprintf(path, sizeof path, "%s/none.h5md", dir);
        rc = rc_h5md_read(path, 3, 0, &x, msg, sizeof msg);
        RC_CHECK(rc == -1 && strstr(msg, "H5Fopen") && strstr(msg, path),
                 "missing file: '%s'", msg);
        RC_CHECK(rc_h5md_is_hdf5(path) == 0, "no signature in no file");
    }

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
    rc = rc_h5md_create(&h, "/tmp/never.h5", 1, 3, box, periodic, 0, NULL,
                        msg, sizeof msg);
    if (rc != RC_H5MD_UNSUPPORTED || h != NULL || !msg[0]) {
        fprintf(stderr, "stub create: rc %d, msg '%s'\n", rc, msg);
        return 1;
    }
    printf("test_md_h5md: skipped (%s)\n", msg);
    return 77;
}

#endif

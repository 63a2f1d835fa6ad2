/* `read:` (DESIGN §8): a large system started from a frame of any
 * trajectory, through the `ricochet` binary and the scenario loader.
 *
 *  1. One scenario (108 spheres, 30 steps, a frame every 10 steps) runs
 *     twice, writing trajectory.xyz and trajectory.h5md; a large-system
 *     session of the same scenario steps 10 and 30 steps and gives the
 *     reference states (the engine rc_run uses, not the files).
 *  2. `read: {file, frame}` of either file, frame -1 (the last), 3 (the
 *     same, from the start) and 1 (step 10) and -3 (the same from the
 *     end): positions and momenta of the loaded scenario equal the
 *     session's bit for bit (XYZ keeps momenta with %.17g, H5MD
 *     velocities in binary and the masses are 1, so m v = p exactly); the
 *     frame number resolved is recorded.
 *  3. A run from the last H5MD frame says on stderr and in
 *     summary.json (initial_state) that the velocities came from the
 *     file; a run from an XYZ file without velocities says they were
 *     drawn, and its temperature is the one asked for.
 *  4. output.species with a blank, output.units neither `none` nor a
 *     {length, time} mapping: exit 2 naming the field.
 *  5. Refusals, each exit 2 naming read.file and the file: a missing
 *     file (XYZ and H5MD), frame 4 and -5 of 4 frames (both formats), a
 *     2-D scenario reading the 3-D files, an XYZ frame with fewer
 *     particle lines than its count (N mismatch) and, with HDF5, an
 *     H5MD file whose velocity holds fewer particles than its position
 *     (N mismatch). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/h5md.h"
#include "host/md/xyz.h"
#include "host/scenario_impl.h"
#include "rc_cli_test.h"
#include "ricochet/md.h"
#include "ricochet/scenario.h"

#ifdef RICOCHET_HAVE_HDF5
#include <hdf5.h>
#endif

#define NP 108
#define D 3

static const char src_fmt[] =
    "name: src\n"
    "dimension: 3\n"
    "box: {periodic: true}\n"
    "lattice: {kind: fcc, n: 108, packing_fraction: 0.3, seed: 7}\n"
    "integrator: {method: gvi, dt: 0.01, duration: 0.3}\n"
    "output: {every: 5, trajectory: %s, trajectory_every: 10}\n";

static double g_q10[NP * D], g_p10[NP * D], g_q30[NP * D], g_p30[NP * D];

/* The reference states after 10 and 30 steps, from a session. */
static int reference(const char *scn_path)
{
    rc_scenario *scn = NULL;
    rc_md_session *s = NULL;
    rc_error err;
    char buf[3000];
    int ok = 0;
    if (rc_scenario_load(scn_path, NULL, 0, &scn, &err) != RC_OK) {
        RC_CHECK(0, "load %s: %s", scn_path,
                 rc_error_format(&err, buf, sizeof buf));
        return -1;
    }
    if (rc_md_session_create(scn, 1, &s, &err) == RC_OK &&
        rc_md_session_step(s, 10) == RC_OK &&
        rc_md_session_state(s, g_q10, g_p10, NULL) == RC_OK &&
        rc_md_session_step(s, 20) == RC_OK &&
        rc_md_session_state(s, g_q30, g_p30, NULL) == RC_OK)
        ok = 1;
    RC_CHECK(ok, "session: %s", rc_error_format(&err, buf, sizeof buf));
    rc_md_session_free(s);
    rc_scenario_free(scn);
    return ok ? 0 : -1;
}

/* A scenario reading `read` (a YAML flow mapping) in dimension dim. */
static void read_scenario(const char *path, int dim, const char *read)
{
    char text[3000];
    snprintf(text, sizeof text,
             "name: again\n"
             "dimension: %d\n"
             "box: {periodic: true}\n"
             "read: %s\n"
             "integrator: {method: gvi, dt: 0.01, duration: 0.1}\n"
             "output: {every: 5}\n",
             dim, read);
    write_text(path, text);
}

/* The JSON echo of a scenario that reads a frame (summary.json's
 * `scenario`) gives `read:` with the file and the resolved frame, not the
 * particles, and loading it gives the same particles bit for bit. */
static void echo_round_trip(const rc_scenario *a, const char *file,
                            long frame)
{
    char path[1400], buf[3000];
    char *json = rc_scenario_to_json(a);
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    const cJSON *rd = cJSON_GetObjectItemCaseSensitive(root, "read");
    rc_scenario *b = NULL;
    rc_error err;
    int i, k, bad = 0;
    RC_CHECK(rd && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rd, "file")) &&
                 num(rd, "frame") == (double)a->md.read_frame &&
                 !cJSON_GetObjectItemCaseSensitive(root, "particles"),
             "%s frame %ld: the echo has no read: {file, frame} or lists "
             "the particles",
             file, frame);
    snprintf(path, sizeof path, "%s/echo.json", g_dir);
    if (json)
        write_text(path, json);
    if (!json || rc_scenario_load(path, NULL, 0, &b, &err) != RC_OK) {
        RC_CHECK(0, "%s frame %ld: the echo does not load: %s", file, frame,
                 json ? rc_error_format(&err, buf, sizeof buf) : "no JSON");
        cJSON_Delete(root);
        free(json);
        return;
    }
    RC_CHECK(b->n == a->n, "%s frame %ld: echo %d particles, %d read", file,
             frame, b->n, a->n);
    for (i = 0; i < a->n && b->n == a->n; ++i)
        for (k = 0; k < D; ++k)
            bad += memcmp(&b->particles[i].q[k], &a->particles[i].q[k],
                          sizeof(double)) != 0 ||
                   memcmp(&b->particles[i].p[k], &a->particles[i].p[k],
                          sizeof(double)) != 0;
    RC_CHECK(bad == 0, "%s frame %ld: %d coordinates of the echo's load "
             "differ", file, frame, bad);
    rc_scenario_free(b);
    cJSON_Delete(root);
    free(json);
}

/* read: FILE frame: the loaded particles against the reference. */
static void check_frame(const char *file, long frame, long resolved,
                        const double *q, const double *p, int h5md)
{
    char path[1400], read[1300], buf[3000];
    rc_scenario *scn = NULL;
    rc_error err;
    int i, k, bad = 0;
    snprintf(path, sizeof path, "%s/read.yaml", g_dir);
    snprintf(read, sizeof read, "{file: %s, frame: %ld}", file, frame);
    read_scenario(path, D, read);
    if (rc_scenario_load(path, NULL, 0, &scn, &err) != RC_OK) {
        RC_CHECK(0, "%s frame %ld: %s", file, frame,
                 rc_error_format(&err, buf, sizeof buf));
        return;
    }
    RC_CHECK(scn->n == NP, "%s frame %ld: %d particles", file, frame, scn->n);
    for (i = 0; i < scn->n && scn->n == NP; ++i)
        for (k = 0; k < D; ++k)
            bad += memcmp(&scn->particles[i].q[k], &q[i * D + k],
                          sizeof(double)) != 0 ||
                   memcmp(&scn->particles[i].p[k], &p[i * D + k],
                          sizeof(double)) != 0;
    RC_CHECK(bad == 0, "%s frame %ld: %d coordinates differ from the "
             "session's", file, frame, bad);
    RC_CHECK(scn->md.read_frame == resolved && scn->md.read_velocities == 1 &&
                 scn->md.read_h5md == h5md,
             "%s frame %ld: recorded frame %ld (want %ld), velocities %d, "
             "h5md %d",
             file, frame, scn->md.read_frame, resolved,
             scn->md.read_velocities, scn->md.read_h5md);
    echo_round_trip(scn, file, frame);
    rc_scenario_free(scn);
}

/* `ricochet validate` of a scenario reading `read` in dimension dim:
 * exit 2, naming read.file and every string in want (NULL-ended). */
static void refused(const char *what, int dim, const char *read,
                    const char *const *want)
{
    char path[1400];
    int rc, k;
    snprintf(path, sizeof path, "%s/bad.yaml", g_dir);
    read_scenario(path, dim, read);
    rc = cli("validate '%s'", path);
    RC_CHECK(rc == 2 && strstr(g_stderr, "read.file"),
             "%s: exit %d (want 2 naming read.file): %s", what, rc,
             g_stderr);
    for (k = 0; want[k]; ++k)
        RC_CHECK(strstr(g_stderr, want[k]) != NULL,
                 "%s: the message should name '%s': %s", what, want[k],
                 g_stderr);
}

int main(void)
{
    char path[1400], xyz[1200], h5[1200], text[2000], read[2600];
    int rc, have_h5 = rc_h5md_available();
    cJSON *sum;

    if (cli_test_start("test_md_read"))
        return 1;
    snprintf(path, sizeof path, "%s/src_xyz.yaml", g_dir);
    snprintf(text, sizeof text, src_fmt, "xyz");
    write_text(path, text);
    rc = cli("run '%s' --out '%s/xyz' --threads 1 --quiet", path, g_dir);
    RC_CHECK(rc == 0, "source run (xyz): exit %d: %s", rc, g_stderr);
    if (reference(path) != 0)
        return cli_test_finish("test_md_read");
    snprintf(xyz, sizeof xyz, "%s/xyz/trajectory.xyz", g_dir);
    snprintf(h5, sizeof h5, "%s/h5/trajectory.h5md", g_dir);

    /* 2. the frames of the XYZ file */
    check_frame(xyz, -1, 3, g_q30, g_p30, 0);
    check_frame(xyz, 3, 3, g_q30, g_p30, 0);
    check_frame(xyz, 1, 1, g_q10, g_p10, 0);
    check_frame(xyz, -3, 1, g_q10, g_p10, 0);

    /* 5. refusals of XYZ files */
    {
        const char *missing[] = {"nothing.xyz", "No such file", NULL};
        const char *range[] = {"trajectory.xyz", "frame -5 does not exist",
                               "the file has 4 frames", NULL};
        const char *range2[] = {"trajectory.xyz", "frame 4 does not exist",
                                NULL};
        const char *dim2[] = {"trajectory.xyz", "a 2-D run needs 0", NULL};
        const char *nmis[] = {"short.xyz:5", "ends after 2 of 3", NULL};
        snprintf(read, sizeof read, "{file: %s/nothing.xyz}", g_dir);
        refused("missing XYZ", D, read, missing);
        snprintf(read, sizeof read, "{file: %s, frame: -5}", xyz);
        refused("XYZ frame -5", D, read, range);
        snprintf(read, sizeof read, "{file: %s, frame: 4}", xyz);
        refused("XYZ frame 4", D, read, range2);
        snprintf(read, sizeof read, "{file: %s, frame: -1}", xyz);
        refused("3-D XYZ read in 2-D", 2, read, dim2);
        snprintf(path, sizeof path, "%s/short.xyz", g_dir);
        /* long lines: the count passes the size check, the lines end */
        write_text(path, "3\nLattice=\"9 0 0 0 9 0 0 0 9\" "
                         "Properties=species:S:1:pos:R:3\n"
                         "X 1.000000000000 1.000000000000 1.000000000000\n"
                         "X 2.000000000000 2.000000000000 2.000000000000\n");
        snprintf(read, sizeof read, "{file: %s}", path);
        refused("XYZ N mismatch", D, read, nmis);
    }

    /* output.species and output.units: names that fit the files */
    {
        static const char *const sets[3][2] = {
            {"output.species=a b", "output.species"},
            {"output.units=parsec", "output.units"},
            {"output.units={length: nm, time: ps, mass: kg}", "mass"}};
        int k;
        snprintf(path, sizeof path, "%s/src_xyz.yaml", g_dir);
        for (k = 0; k < 3; ++k) {
            rc = cli("validate '%s' --set '%s'", path, sets[k][0]);
            RC_CHECK(rc == 2 && strstr(g_stderr, sets[k][1]),
                     "--set %s: exit %d (want 2 naming %s): %s", sets[k][0],
                     rc, sets[k][1], g_stderr);
        }
        rc = cli("validate '%s' --set output.species=Ar --set "
                 "'output.units={length: nm, time: fs}'",
                 path);
        RC_CHECK(rc == 0, "species Ar, units nm/fs: exit %d: %s", rc,
                 g_stderr);
    }

    /* 3. an XYZ file without velocities: drawn at the temperature asked */
    snprintf(path, sizeof path, "%s/novel.xyz", g_dir);
    write_text(path, "2\nLattice=\"9 0 0 0 9 0 0 0 9\" "
                     "Properties=species:S:1:pos:R:3\nX 1 1 1\nX 4 4 4\n");
    snprintf(read, sizeof read, "{file: %s, temperature: 2.5, frame: -1}",
             path);
    snprintf(path, sizeof path, "%s/novel.yaml", g_dir);
    read_scenario(path, D, read);
    { /* the echo keeps the drawing's temperature and seed */
        rc_scenario *drawn = NULL;
        rc_error err;
        RC_CHECK(rc_scenario_load(path, NULL, 0, &drawn, &err) == RC_OK,
                 "novel.yaml does not load");
        if (drawn)
            echo_round_trip(drawn, "novel.xyz", -1);
        rc_scenario_free(drawn);
    }
    rc = cli("run '%s' --out '%s/novel' --threads 1", path, g_dir);
    RC_CHECK(rc == 0 && strstr(g_stderr, "velocities drawn"),
             "run from an XYZ file without velocities: exit %d: %s", rc,
             g_stderr);
    snprintf(path, sizeof path, "%s/novel", g_dir);
    sum = json_file(path, "summary.json");
    {
        const cJSON *is = cJSON_GetObjectItemCaseSensitive(sum,
                                                           "initial_state");
        RC_CHECK(!strcmp(str(is, "velocities"), "drawn") &&
                     !strcmp(str(is, "format"), "xyz") &&
                     num(is, "frame") == 0 && num(is, "frames") == 1,
                 "summary.json initial_state of the drawn run");
    }
    cJSON_Delete(sum);

    if (!have_h5) {
        printf("test_md_read: H5MD parts skipped (no HDF5 in this build)\n");
        return cli_test_finish("test_md_read");
    }
    snprintf(path, sizeof path, "%s/src_h5.yaml", g_dir);
    snprintf(text, sizeof text, src_fmt, "h5md");
    write_text(path, text);
    rc = cli("run '%s' --out '%s/h5' --threads 1 --quiet", path, g_dir);
    RC_CHECK(rc == 0, "source run (h5md): exit %d: %s", rc, g_stderr);
    check_frame(h5, -1, 3, g_q30, g_p30, 1);
    check_frame(h5, 3, 3, g_q30, g_p30, 1);
    check_frame(h5, 1, 1, g_q10, g_p10, 1);
    check_frame(h5, -3, 1, g_q10, g_p10, 1);
    {
        /* the run's file carries every particle's mass and radius (the
         * lattice's: 1 and 0.5), which the run had freed its own copies
         * of by the time it created the file */
        rc_xyz x;
        char msg[512];
        long i, bad = -1;
        rc = rc_h5md_read(h5, D, -1, &x, msg, sizeof msg);
        RC_CHECK(rc == 0, "rc_h5md_read of the run's file: %s", msg);
        if (rc == 0) {
            RC_CHECK(x.mass && x.radius, "the run's H5MD has %s%s",
                     x.mass ? "" : "no mass ", x.radius ? "" : "no radius");
            for (i = 0; x.mass && x.radius && i < NP && bad < 0; ++i)
                if (x.mass[i] != 1.0 || x.radius[i] != 0.5)
                    bad = i;
            RC_CHECK(bad < 0, "particle %ld: mass %g radius %g, want 1, 0.5",
                     bad, bad >= 0 ? x.mass[bad] : 0.0,
                     bad >= 0 ? x.radius[bad] : 0.0);
            rc_xyz_free(&x);
        }
    }

    /* 3. a run from the last H5MD frame says where its velocities came
     * from */
    snprintf(read, sizeof read, "{file: %s, frame: -1}", h5);
    snprintf(path, sizeof path, "%s/again.yaml", g_dir);
    read_scenario(path, D, read);
    rc = cli("run '%s' --out '%s/again' --threads 1", path, g_dir);
    RC_CHECK(rc == 0 && strstr(g_stderr, "started from frame 3 of") &&
                 strstr(g_stderr, "velocities from the file"),
             "run from the last H5MD frame: exit %d: %s", rc, g_stderr);
    snprintf(path, sizeof path, "%s/again", g_dir);
    sum = json_file(path, "summary.json");
    {
        const cJSON *is = cJSON_GetObjectItemCaseSensitive(sum,
                                                           "initial_state");
        RC_CHECK(!strcmp(str(is, "source"), "read") &&
                     !strcmp(str(is, "velocities"), "from the file") &&
                     !strcmp(str(is, "format"), "h5md") &&
                     num(is, "frame") == 3 && num(is, "frames") == 4 &&
                     !strcmp(str(is, "file"), h5),
                 "summary.json initial_state of the H5MD run");
    }
    cJSON_Delete(sum);

    {
        const char *missing[] = {"nothing.h5md", "H5Fopen", NULL};
        const char *range[] = {"trajectory.h5md", "frame -5 does not exist",
                               "the file has 4 frames", NULL};
        const char *range2[] = {"trajectory.h5md", "frame 4 does not exist",
                                NULL};
        const char *dim2[] = {"trajectory.h5md", "position/value",
                              "the scenario's dimension is 2", NULL};
        snprintf(read, sizeof read, "{file: %s/nothing.h5md}", g_dir);
        refused("missing H5MD", D, read, missing);
        snprintf(read, sizeof read, "{file: %s, frame: -5}", h5);
        refused("H5MD frame -5", D, read, range);
        snprintf(read, sizeof read, "{file: %s, frame: 4}", h5);
        refused("H5MD frame 4", D, read, range2);
        snprintf(read, sizeof read, "{file: %s}", h5);
        refused("3-D H5MD read in 2-D", 2, read, dim2);
    }
#ifdef RICOCHET_HAVE_HDF5
    {
        /* position of 3 particles, velocity of 2: an N mismatch */
        const char *nmis[] = {"nmismatch.h5", "velocity/value",
                              "6 values per frame, expected 9", NULL};
        hid_t f, s, d;
        hsize_t pd[3] = {1, 3, 3}, vd[3] = {1, 2, 3};
        double z[9] = {1, 1, 1, 2, 2, 2, 3, 3, 3};
        snprintf(path, sizeof path, "%s/nmismatch.h5", g_dir);
        f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        H5Gclose(H5Gcreate2(f, "particles", H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT));
        H5Gclose(H5Gcreate2(f, "particles/a", H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT));
        H5Gclose(H5Gcreate2(f, "particles/a/position", H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT));
        H5Gclose(H5Gcreate2(f, "particles/a/velocity", H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT));
        s = H5Screate_simple(3, pd, NULL);
        d = H5Dcreate2(f, "particles/a/position/value", H5T_IEEE_F64LE, s,
                       H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, z);
        H5Dclose(d);
        H5Sclose(s);
        s = H5Screate_simple(3, vd, NULL);
        d = H5Dcreate2(f, "particles/a/velocity/value", H5T_IEEE_F64LE, s,
                       H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, z);
        H5Dclose(d);
        H5Sclose(s);
        RC_CHECK(H5Fclose(f) >= 0, "write %s", path);
        snprintf(read, sizeof read, "{file: %s}", path);
        /* box.lengths not needed: the reader refuses first */
        refused("H5MD N mismatch", D, read, nmis);
    }
#endif
    return cli_test_finish("test_md_read");
}

/* A large system in memory (include/ricochet/md.h) against rc_run() of
 * the same scenario: the session's observables at every row equal
 * observables.csv's; and rc_scenario_load_string, the loader of text in
 * memory (the label stands for the file in errors). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ricochet/ricochet.h"
#include "rc_test.h"

static const char *const FLUID =
    "name: session_fluid\n"
    "dimension: 3\n"
    "box: {periodic: true}\n"
    "lattice: {kind: fcc, n: 256, packing_fraction: 0.3, temperature: 1, "
    "seed: 3}\n"
    "integrator: {method: gvi, dt: 0.01, duration: 0.4}\n"
    "output: {every: 5, equilibrate: 0}\n";

static void test_load_string(void)
{
    rc_scenario *scn = NULL;
    rc_error err;
    const char *bad = "dimension: 1\nparticles:\n  - {mass: -1, position: [1]}\n"
                      "integrator: {dt: 0.1, duration: 1}\n";
    const char *set = "integrator.dt=0.02";
    rc_scenario_run info;
    RC_CHECK(rc_scenario_load_string(FLUID, "<mem>", &set, 1, &scn, &err) ==
                 RC_OK,
             "load_string: %s", err.message);
    if (scn) {
        rc_scenario_run_info(scn, &info);
        RC_CHECK(info.dt == 0.02 && info.steps == 20,
                 "override: dt %g, %ld steps", info.dt, info.steps);
        RC_CHECK(!strcmp(rc_scenario_path(scn), "<mem>"), "path %s",
                 rc_scenario_path(scn));
        RC_CHECK(rc_scenario_is_large_system(scn), "a box");
        rc_scenario_free(scn);
        scn = NULL;
    }
    RC_CHECK(rc_scenario_load_string(bad, "<mem>", NULL, 0, &scn, &err) ==
                 RC_ERR_PARSE && !scn,
             "a bad mass is refused");
    RC_CHECK(!strcmp(err.file, "<mem>") && err.line == 3 &&
                 err.column == 12 && !strcmp(err.field, "particles[0].mass"),
             "error place %s:%d:%d %s", err.file, err.line, err.column,
             err.field);
    /* without a name, the label's base name less its extension */
    if (rc_scenario_load_string("dimension: 1\nparticles:\n"
                                "  - {mass: 1, position: [1]}\n"
                                "integrator: {dt: 0.1, duration: 1}\n",
                                "dir/x.yaml", NULL, 0, &scn, &err) == RC_OK) {
        rc_scenario_run_info(scn, &info);
        RC_CHECK(!strcmp(info.name, "x"), "name %s", info.name);
        rc_scenario_free(scn);
        scn = NULL;
    } else {
        RC_CHECK(0, "unnamed: %s", err.message);
    }
    RC_CHECK(rc_scenario_load_string(NULL, "<mem>", NULL, 0, &scn, &err) ==
                 RC_ERR_INVALID && !scn,
             "NULL text is refused, not read as a file");
}

/* Column `name` of a CSV header line: its index, or -1. */
static int column(const char *header, const char *name)
{
    char buf[1024], *tok, *save = NULL;
    int k = 0;
    snprintf(buf, sizeof buf, "%s", header);
    buf[strcspn(buf, "\r\n")] = '\0';
    for (tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save), ++k)
        if (!strcmp(tok, name))
            return k;
    return -1;
}

static double field(const char *line, int col)
{
    const char *s = line;
    int k;
    for (k = 0; k < col && s; ++k) {
        s = strchr(s, ',');
        if (s)
            ++s;
    }
    return s ? strtod(s, NULL) : NAN;
}

static void test_session_follows_run(void)
{
    rc_scenario *scn = NULL;
    rc_md_session *s = NULL;
    rc_error err;
    rc_run_options ro;
    rc_run_result res;
    char dir[] = "/tmp/rc_test_md_session_XXXXXX", path[256], line[4096];
    char header[4096];
    FILE *f;
    int c_step, c_kin, c_z, c_coll, c_msd, rows = 0;
    double L[3];
    int per[3];
    if (rc_scenario_load_string(FLUID, "<mem>", NULL, 0, &scn, &err) !=
        RC_OK) {
        RC_CHECK(0, "load: %s", err.message);
        return;
    }
    RC_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    memset(&ro, 0, sizeof ro);
    ro.out_dir = dir;
    ro.backend = RC_BACKEND_CPU;
    ro.threads = 1;
    RC_CHECK(rc_run(scn, &ro, &res, &err) == RC_OK, "run: %s", err.message);
    RC_CHECK(rc_md_session_create(scn, 1, &s, &err) == RC_OK, "session: %s",
             err.message);
    snprintf(path, sizeof path, "%s/observables.csv", dir);
    f = fopen(path, "r");
    RC_CHECK(f && s, "observables.csv and a session");
    if (f && s && fgets(header, sizeof header, f)) {
        RC_CHECK(rc_md_session_count(s) == 256 &&
                     rc_md_session_dimension(s) == 3,
                 "256 spheres in 3-D");
        rc_md_session_box(s, L, per);
        RC_CHECK(per[0] && per[1] && per[2] && L[0] > 0 && L[0] == L[2],
                 "a periodic cube");
        c_step = column(header, "step");
        c_kin = column(header, "kinetic_energy");
        c_z = column(header, "Z");
        c_coll = column(header, "collisions");
        c_msd = column(header, "msd");
        RC_CHECK(c_step >= 0 && c_kin >= 0 && c_z >= 0 && c_coll >= 0 &&
                     c_msd >= 0,
                 "columns in %s", header);
        while (fgets(line, sizeof line, f)) {
            rc_md_observables o;
            long step = (long)field(line, c_step);
            if (rc_md_session_step(s, step - rc_md_session_steps(s)) !=
                    RC_OK ||
                rc_md_session_observe(s, &o) != RC_OK) {
                RC_CHECK(0, "step/observe: %s", rc_md_session_message(s));
                break;
            }
            ++rows;
            /* %.17g: equal; Z and msd are printed %.10g (1e-9 relative);
             * 1e-12 absolute where they are 0 */
            RC_CHECK(o.step == step && o.kinetic == field(line, c_kin),
                     "step %ld: kinetic %.17g vs %.17g", step, o.kinetic,
                     field(line, c_kin));
            RC_CHECK(rc_test_close(o.z, field(line, c_z), 1e-9, 1e-12),
                     "step %ld: Z %.17g vs %.17g", step, o.z,
                     field(line, c_z));
            RC_CHECK(rc_test_close(o.msd, field(line, c_msd), 1e-9, 1e-12),
                     "step %ld: msd %.17g vs %.17g", step, o.msd,
                     field(line, c_msd));
            RC_CHECK(o.collisions == (long)field(line, c_coll),
                     "step %ld: collisions %ld vs %g", step, o.collisions,
                     field(line, c_coll));
        }
        RC_CHECK(rows == 9, "%d rows (0, 5, ..., 40)", rows);
    }
    if (f)
        fclose(f);
    if (s) {
        /* the state: positions in the box, zero total momentum (to the
         * round-off of 256 unit momenta, 1e-12) */
        double *q = (double *)malloc(sizeof(double) * 768);
        double *p = (double *)malloc(sizeof(double) * 768);
        double mom[3] = {0, 0, 0};
        int i, k, inside = 1;
        if (q && p && rc_md_session_state(s, q, p, NULL) == RC_OK) {
            for (i = 0; i < 256; ++i)
                for (k = 0; k < 3; ++k) {
                    inside &= q[3 * i + k] >= 0.0 && q[3 * i + k] < L[k];
                    mom[k] += p[3 * i + k];
                }
            RC_CHECK(inside, "positions inside the box");
            RC_CHECK(fabs(mom[0]) < 1e-12 && fabs(mom[1]) < 1e-12 &&
                         fabs(mom[2]) < 1e-12,
                     "momentum %g %g %g", mom[0], mom[1], mom[2]);
        } else {
            RC_CHECK(0, "state");
        }
        free(q);
        free(p);
        rc_md_session_free(s);
    }
    rc_scenario_free(scn);
    /* the run's files, then the directory */
    {
        const char *names[] = {"observables.csv", "rdf.csv", "msd.csv",
                               "summary.json", NULL};
        int k;
        for (k = 0; names[k]; ++k) {
            snprintf(path, sizeof path, "%s/%s", dir, names[k]);
            remove(path);
        }
        rmdir(dir);
    }
}

static void test_refusals(void)
{
    rc_scenario *scn = NULL;
    rc_md_session *s = NULL;
    rc_error err;
    const char *small = "dimension: 1\nparticles:\n  - {mass: 1, position: [1]}\n"
                        "integrator: {dt: 0.1, duration: 1}\n";
    const char *set = "lattice.packing_fraction=0.9";
    RC_CHECK(rc_scenario_load_string(small, "<mem>", NULL, 0, &scn, &err) ==
                 RC_OK, "small: %s", err.message);
    RC_CHECK(rc_md_session_create(scn, 0, &s, &err) == RC_ERR_INVALID && !s,
             "a small system is refused");
    rc_scenario_free(scn);
    scn = NULL;
    /* a lattice that does not fit: the set-up's error with its field */
    if (rc_scenario_load_string(FLUID, "<mem>", &set, 1, &scn, &err) ==
        RC_OK) {
        RC_CHECK(rc_md_session_create(scn, 0, &s, &err) == RC_ERR_PARSE &&
                     !s && !strncmp(err.field, "lattice", 7),
                 "an impossible packing: %d %s", err.status, err.field);
        rc_scenario_free(scn);
    } else {
        RC_CHECK(err.status == RC_ERR_PARSE &&
                     !strncmp(err.field, "lattice", 7),
                 "an impossible packing at load: %s", err.field);
    }
}

int main(void)
{
    test_load_string();
    test_session_follows_run();
    test_refusals();
    return rc_test_finish("test_md_session");
}

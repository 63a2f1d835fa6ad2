/* The CLI's exit-code contract (README; issue 15), from the reproducers
 * of the defects found:
 *
 *   exit 2  bad input, refused before anything is written, the message
 *           naming file:line:column and the field;
 *   exit 1  a failure of the run itself;
 *   exit 0  success (a run that took at least one step).
 *
 * 1. Initial states a run would refuse are input errors: a constraint
 *    violated at the start, a lattice that does not fit its box, a box
 *    smaller than the first step's contact range; `validate` sets up the
 *    large-system examples (and accepts them) without running.
 * 2. dt > duration and a zero duration are refused naming the field; an
 *    ensemble whose every member is invalid is refused, not a success.
 * 3. `name` cannot put outputs outside out/ (.., ., a/b, empty, and a
 *    file name that gives such a name).
 * 4. A scenario whose memory estimate exceeds the memory available is
 *    refused at once with the estimate, before allocating. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "rc_cli_test.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* `file:LINE:COLUMN: ` somewhere in s. */
static int has_place(const char *s, const char *file)
{
    const char *p = s;
    while ((p = strstr(p, file)) != NULL) {
        int line = 0, col = 0;
        p += strlen(file);
        if (sscanf(p, ":%d:%d: ", &line, &col) == 2 && line > 0 && col > 0)
            return 1;
    }
    return 0;
}

/* A refusal: exit 2, the place in `file` (or "--set" for an override's
 * own node), every needle in stderr, and nothing written in dir. */
static void refused(int rc, const char *what, const char *file,
                    const char *needle1, const char *needle2,
                    const char *dir)
{
    RC_CHECK(rc == 2, "%s: exit %d, want 2; stderr: %s", what, rc, g_stderr);
    RC_CHECK(has_place(g_stderr, file) || has_place(g_stderr, "--set"),
             "%s: no %s:line:column in '%s'", what, file, g_stderr);
    RC_CHECK(!needle1 || strstr(g_stderr, needle1),
             "%s: '%s' not in '%s'", what, needle1, g_stderr);
    RC_CHECK(!needle2 || strstr(g_stderr, needle2),
             "%s: '%s' not in '%s'", what, needle2, g_stderr);
    if (dir)
        RC_CHECK(count_entries(dir) <= 0,
                 "%s: %d files written into %s by a refused run", what,
                 count_entries(dir), dir);
}

static void initial_states(void)
{
    char dir[600];
    int rc;
    snprintf(dir, sizeof dir, "%s/pogo", g_dir);
    /* the reproducer: the bottom mass 2 below its floor */
    rc = cli("run '%s/pogo_stick.yaml' --out '%s' --quiet --set "
             "'constraints[0].offset=3'",
             RC_EXAMPLES_DIR, dir);
    refused(rc, "pogo offset 3 (run)", "pogo_stick.yaml", "constraints[0]",
            "violated", dir);
    rc = cli("validate '%s/pogo_stick.yaml' --set 'constraints[0].offset=3'",
             RC_EXAMPLES_DIR);
    refused(rc, "pogo offset 3 (validate)", "pogo_stick.yaml",
            "constraints[0]", "violated", NULL);
    /* a pendulum rod of the wrong length: the item of that pendulum */
    rc = cli("validate '%s/newtons_cradle.yaml' --set "
             "'particles[1].position=[0.1, -1]'",
             RC_EXAMPLES_DIR);
    refused(rc, "cradle pendulum", "newtons_cradle.yaml", "constraints[1]",
            NULL, NULL);
    /* a constraint direction whose length overflows */
    rc = cli("validate '%s/bouncing_ball.yaml' --set "
             "'constraints[0].normal=[1e300]'",
             RC_EXAMPLES_DIR);
    refused(rc, "normal 1e300", "bouncing_ball.yaml", "constraints[0].normal",
            NULL, NULL);

    /* the reproducer: 10 spheres at packing fraction 0.3 make a
     * box too small for an fcc lattice of diameter-1 spheres */
    snprintf(dir, sizeof dir, "%s/fluid", g_dir);
    rc = cli("run '%s/hard_sphere_fluid.yaml' --out '%s' --quiet --set "
             "lattice.n=10",
             RC_EXAMPLES_DIR, dir);
    refused(rc, "lattice n 10 (run)", "hard_sphere_fluid.yaml", "lattice.n",
            "overlap", dir);
    rc = cli("validate '%s/hard_sphere_fluid.yaml' --set lattice.n=10",
             RC_EXAMPLES_DIR);
    refused(rc, "lattice n 10 (validate)", "hard_sphere_fluid.yaml",
            "lattice.n", NULL, NULL);
    /* spheres too large for the fill height of their box */
    rc = cli("validate '%s/granular_column.yaml' --set lattice.radius=2",
             RC_EXAMPLES_DIR);
    refused(rc, "lattice radius 2", "granular_column.yaml",
            "lattice.fill_height", NULL, NULL);
    /* listed spheres that overlap in a box */
    {
        char path[700];
        snprintf(path, sizeof path, "%s/overlap.yaml", g_dir);
        write_text(path, "dimension: 2\n"
                         "box: {lengths: [10, 10]}\n"
                         "particles:\n"
                         "  - {mass: 1, radius: 0.5, position: [2, 2], "
                         "momentum: [1, 0]}\n"
                         "  - {mass: 1, radius: 0.5, position: [2.5, 2], "
                         "momentum: [0, 1]}\n"
                         "integrator: {method: gvi, dt: 0.01, duration: 1}\n");
        rc = cli("validate '%s'", path);
        refused(rc, "listed spheres overlap", "overlap.yaml", "particles",
                "overlap", NULL);
    }
    /* the first step moves spheres further than the box allows */
    snprintf(dir, sizeof dir, "%s/column", g_dir);
    rc = cli("run '%s/granular_column.yaml' --out '%s' --quiet --set "
             "lattice.temperature=1e6",
             RC_EXAMPLES_DIR, dir);
    refused(rc, "temperature 1e6 (run)", "granular_column.yaml",
            "integrator.dt", "contact range", dir);

    /* every bundled large system validates through its set-up */
    {
        static const char *const large[] = {"granular_column.yaml",
                                            "hard_sphere_fluid.yaml",
                                            "lj_hard_core.yaml"};
        int k;
        for (k = 0; k < 3; ++k) {
            rc = cli("validate '%s/%s'", RC_EXAMPLES_DIR, large[k]);
            RC_CHECK(rc == 0 && strstr(g_stdout, "set up and checked"),
                     "validate %s: exit %d; %s%s", large[k], rc, g_stdout,
                     g_stderr);
        }
    }
}

static void zero_steps(void)
{
    char dir[600];
    int rc;
    snprintf(dir, sizeof dir, "%s/zero", g_dir);
    /* the reproducer: dt 1 over 0.5 ran no step and said ok */
    rc = cli("run '%s/pogo_stick.yaml' --out '%s' --quiet --set "
             "integrator.dt=1 --set integrator.duration=0.5",
             RC_EXAMPLES_DIR, dir);
    refused(rc, "dt > duration", "--set", "integrator.dt", "duration", dir);
    rc = cli("run '%s/pogo_stick.yaml' --out '%s' --quiet --set "
             "integrator.duration=0",
             RC_EXAMPLES_DIR, dir);
    refused(rc, "duration 0", "--set", "integrator.duration", NULL, dir);
    /* an ensemble member with dt > duration is invalid, never ok (the
     * first and last members are checked at load: the middle ones) */
    rc = cli("run '%s/cradle_ensemble.yaml' --out '%s' --quiet --set "
             "integrator.duration=0.05 --set 'ensemble.vary[0].values=[0.01, "
             "1, 0.02]' --set 'ensemble.vary[1].count=2'",
             RC_EXAMPLES_DIR, dir);
    RC_CHECK(rc == 0, "ensemble with dt > duration in the middle: exit %d; "
             "%s", rc, g_stderr);
    {
        cJSON *js = json_file(dir, "ensemble.json");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(js, "status");
        RC_CHECK(js && num(c, "ok") == 4.0 && num(c, "invalid") == 2.0,
                 "ensemble with dt 1 over 0.05: counts ok %g invalid %g, "
                 "want 4 and 2", num(c, "ok"), num(c, "invalid"));
        cJSON_Delete(js);
    }
    /* probed at load: member 0 with dt > duration */
    rc = cli("run '%s/cradle_ensemble.yaml' --out '%s' --quiet --set "
             "integrator.duration=0.05 --set 'ensemble.vary[0].values=[1, "
             "2]' --set 'ensemble.vary[1].count=2'",
             RC_EXAMPLES_DIR, dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "integrator.dt"),
             "ensemble of dt > duration: exit %d, want 2; %s", rc, g_stderr);
    /* every member violates a constraint at the start */
    rc = cli("run '%s/cradle_ensemble.yaml' --out '%s' --quiet --set "
             "integrator.duration=0.05 --set 'ensemble.vary[1].count=2' "
             "--set 'constraints[0].length=0.1'",
             RC_EXAMPLES_DIR, dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "every member") &&
                 strstr(g_stderr, "constraints[0]"),
             "ensemble of invalid members: exit %d, want 2; %s", rc,
             g_stderr);
    RC_CHECK(!exists(dir, "members.csv"),
             "ensemble of invalid members: members.csv written");
}

static void names(void)
{
    static const char *const bad[] = {"..", ".", "../x", "a/b", "''",
                                      "'/tmp/x'"};
    char scratch[600], cd[700], path[800];
    int k, rc;
    snprintf(scratch, sizeof scratch, "%s/names", g_dir);
    RC_CHECK(mkdir(scratch, 0777) == 0, "cannot make %s", scratch);
    /* no --out: the output directory is out/<name>, from the scratch
     * directory */
    snprintf(cd, sizeof cd, "cd '%s' &&", scratch);
    for (k = 0; k < (int)(sizeof bad / sizeof bad[0]); ++k) {
        rc = cli_env(cd, "run '%s/bouncing_ball.yaml' --quiet --set "
                         "integrator.duration=0.1 --set \"name=%s\"",
                     RC_EXAMPLES_DIR, bad[k]);
        RC_CHECK(rc == 2 && strstr(g_stderr, "name"),
                 "name %s: exit %d, want 2; %s", bad[k], rc, g_stderr);
        RC_CHECK(!exists(scratch, "diagnostics.csv") &&
                     !exists(scratch, "summary.json") &&
                     !exists(scratch, "diagnostics.csv.partial"),
                 "name %s: outputs written outside out/", bad[k]);
    }
    /* a file whose base name gives ".." and no `name` */
    snprintf(path, sizeof path, "%s/...yaml", scratch);
    write_text(path, "dimension: 1\n"
                     "particles: [{mass: 1, position: [0], momentum: [1]}]\n"
                     "integrator: {method: sv, dt: 0.1, duration: 1}\n");
    rc = cli_env(cd, "run '%s' --quiet", path);
    RC_CHECK(rc == 2 && strstr(g_stderr, "name"),
             "file ...yaml: exit %d, want 2; %s", rc, g_stderr);
    RC_CHECK(!exists(scratch, "diagnostics.csv"),
             "file ...yaml: outputs written outside out/");
    /* a plain name still runs into out/<name> */
    rc = cli_env(cd, "run '%s/bouncing_ball.yaml' --quiet --set "
                     "integrator.duration=0.1 --set name=ball",
                 RC_EXAMPLES_DIR);
    snprintf(path, sizeof path, "%s/out/ball", scratch);
    RC_CHECK(rc == 0 && exists(path, "summary.json"),
             "name ball: exit %d, %s/summary.json missing; %s", rc, path,
             g_stderr);
}

static void memory(void)
{
    char dir[600];
    double t0, dt;
    int rc;
    snprintf(dir, sizeof dir, "%s/huge", g_dir);
    /* 10^7 spheres need about 6.5 GiB; 1 GiB is allowed (the variable
     * makes the test independent of the machine's memory) */
    t0 = now_s();
    rc = cli_env("RICOCHET_MEMORY_LIMIT=1G",
                 "run '%s/hard_sphere_fluid.yaml' --out '%s' --quiet --set "
                 "lattice.n=10000000",
                 RC_EXAMPLES_DIR, dir);
    dt = now_s() - t0;
    refused(rc, "lattice n 1e7 over 1 GiB", "--set", "lattice.n",
            "needs about", dir);
    RC_CHECK(strstr(g_stderr, "GiB") && strstr(g_stderr, "1.0 GiB") &&
                 strstr(g_stderr, "RICOCHET_MEMORY_LIMIT"),
             "the message gives the estimate and what is available: %s",
             g_stderr);
    /* refused before allocating: placing 10^7 spheres takes seconds, the
     * refusal a process start (5 s: a sanitizer build's start is slow) */
    RC_CHECK(dt < 5.0, "the refusal took %.1f s", dt);
    /* a box of 10^300 per side needs more cells than any machine holds */
    rc = cli("validate '%s/granular_column.yaml' --set 'box.lengths[0]=1e300'",
             RC_EXAMPLES_DIR);
    refused(rc, "box 1e300", "granular_column.yaml", "box.lengths",
            "needs about", NULL);
    /* 10^8 ensemble members over 1 GiB */
    rc = cli_env("RICOCHET_MEMORY_LIMIT=1G",
                 "validate '%s/pogo_ensemble.yaml' --set "
                 "ensemble.members=100000000",
                 RC_EXAMPLES_DIR);
    refused(rc, "10^8 members over 1 GiB", "--set", "ensemble.members",
            "members", NULL);
    /* the example itself fits */
    rc = cli_env("RICOCHET_MEMORY_LIMIT=1G", "validate '%s/hard_sphere_fluid.yaml'",
                 RC_EXAMPLES_DIR);
    RC_CHECK(rc == 0, "hard_sphere_fluid under 1 GiB: exit %d; %s", rc,
             g_stderr);
}

int main(void)
{
    if (cli_test_start("test_cli_contract"))
        return 1;
    initial_states();
    zero_steps();
    names();
    memory();
    return cli_test_finish("test_cli_contract");
}

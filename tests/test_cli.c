/* The `ricochet` command end to end (DESIGN §8): exit codes (0 ok, 2 bad
 * input, 1 runtime failure), the output directory (diagnostics.csv
 * columns and row count, summary.json keys, trajectory.xyz frames), the
 * .partial protocol on failure, and the info/examples commands.
 *
 * The binary is the one CMake built (RC_CLI); expected row and frame
 * counts come from loading the same scenario through the library. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ricochet/run.h"
#include "ricochet/scenario.h"
#include "rc_cli_test.h"

#define SPRING RC_EXAMPLES_DIR "/two_particle_spring.yaml"

/* Run info of a scenario loaded through the library, with overrides. */
static int scenario_info(const char *path, const char *const *sets,
                         int nsets, rc_scenario_run *info, int *n)
{
    rc_scenario *scn = NULL;
    rc_error err;
    char buf[3000];
    if (rc_scenario_load(path, sets, nsets, &scn, &err) != RC_OK) {
        RC_CHECK(0, "cannot load %s: %s", path,
                 rc_error_format(&err, buf, sizeof buf));
        return -1;
    }
    rc_scenario_run_info(scn, info);
    /* The name points into scn; the tests need only counts. */
    info->name = NULL;
    info->method = NULL;
    if (n) {
        char *json = rc_scenario_to_json(scn);
        cJSON *root = json ? cJSON_Parse(json) : NULL;
        *n = cJSON_GetArraySize(
            cJSON_GetObjectItemCaseSensitive(root, "particles"));
        cJSON_Delete(root);
        free(json);
    }
    rc_scenario_free(scn);
    return 0;
}

/* Rows a run of `steps` steps writes with one row every `every` steps,
 * the first at step 0 and the last at the final step. */
static long expected_rows(long steps, long every)
{
    return steps / every + 1 + (steps % every ? 1 : 0);
}

/* ------------------------------------------------------------------ */

static const char *const columns[] = {
    "step",    "time",    "energy",  "modified_energy",    "kinetic",
    "potential", "px",    "py",      "pz",                 "lx",
    "ly",      "lz",      "min_gap", "max_equality_error", "active_contacts",
    "reflections", "solver_iterations"};
#define NCOL 17

/* diagnostics.csv: header, field counts, numbers, rows at the right steps. */
static void check_diagnostics(const char *dir, long steps, long every,
                              double *energy0)
{
    char path[1024], *text, *line, *next;
    char *fields[64];
    long rows = 0, want = expected_rows(steps, every), last_step = -1;
    int k, n, bad_row = 0;
    snprintf(path, sizeof path, "%s/diagnostics.csv", dir);
    text = slurp(path);
    RC_CHECK(text != NULL, "%s missing", path);
    if (!text)
        return;
    next = strchr(text, '\n');
    RC_CHECK(next != NULL, "%s: no header line", path);
    if (!next) {
        free(text);
        return;
    }
    *next++ = '\0';
    n = split(text, fields, 64);
    RC_CHECK(n == NCOL, "%s: header has %d columns, want %d", path, n, NCOL);
    for (k = 0; k < NCOL && k < n; ++k)
        RC_CHECK(!strcmp(fields[k], columns[k]),
                 "%s: column %d is '%s', want '%s'", path, k + 1, fields[k],
                 columns[k]);
    for (line = next; line && *line; line = next) {
        char *end;
        long step;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        n = split(line, fields, 64);
        if (n != NCOL) {
            RC_CHECK(n == NCOL, "%s: row %ld has %d fields, want %d", path,
                     rows + 1, n, NCOL);
            bad_row = 1;
            break;
        }
        for (k = 0; k < NCOL; ++k) {
            double v = strtod(fields[k], &end);
            /* min_gap is +inf without constraints; everything else finite */
            if (*end != '\0' || fields[k][0] == '\0' ||
                !(isfinite(v) || (k == 12 && v == INFINITY))) {
                RC_CHECK(0, "%s: row %ld column %s = '%s'", path, rows + 1,
                         columns[k], fields[k]);
                bad_row = 1;
            }
        }
        step = strtol(fields[0], NULL, 10);
        if (rows == 0 && energy0)
            *energy0 = strtod(fields[2], NULL);
        /* Steps 0, every, 2 every, ..., then the final step. */
        if (!(step == (rows * every < steps ? rows * every : steps))) {
            RC_CHECK(0, "%s: row %ld is step %ld", path, rows + 1, step);
            bad_row = 1;
        }
        last_step = step;
        ++rows;
        if (bad_row)
            break;
    }
    if (!bad_row) {
        RC_CHECK(rows == want,
                 "%s: %ld rows, want %ld (steps %ld, every %ld)", path, rows,
                 want, steps, every);
        RC_CHECK(last_step == steps, "%s: last row is step %ld, want %ld",
                 path, last_step, steps);
    }
    free(text);
}

/* summary.json (or .partial): parses, has the keys, status as given. */
static cJSON *check_summary(const char *path, const char *status)
{
    static const char *const keys[] = {
        "method", "backend", "steps", "wall_seconds", "energy_initial",
        "max_rel_energy_error", "final_rel_energy_error",
        "energy_drift_per_time", "max_momentum_error", "status", "scenario"};
    char *text = slurp(path);
    cJSON *root, *st;
    int k;
    RC_CHECK(text != NULL, "%s missing", path);
    if (!text)
        return NULL;
    root = cJSON_Parse(text);
    free(text);
    RC_CHECK(root != NULL && cJSON_IsObject(root), "%s is not JSON", path);
    if (!root)
        return NULL;
    for (k = 0; k < (int)(sizeof keys / sizeof keys[0]); ++k)
        RC_CHECK(cJSON_GetObjectItemCaseSensitive(root, keys[k]) != NULL,
                 "%s: no key '%s'", path, keys[k]);
    st = cJSON_GetObjectItemCaseSensitive(root, "status");
    RC_CHECK(cJSON_IsString(st) && !strcmp(st->valuestring, status),
             "%s: status %s, want %s", path,
             cJSON_IsString(st) ? st->valuestring : "(not a string)", status);
    RC_CHECK(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root,
                                                              "scenario")),
             "%s: scenario is not an object", path);
    return root;
}

/* trajectory.xyz: frames of N + 2 lines with an extended-XYZ comment. */
static void check_xyz(const char *dir, int n, long steps, long every)
{
    char path[1024], *text, *line, *next;
    long frames = 0, lines = 0, want = expected_rows(steps, every);
    int ok = 1;
    snprintf(path, sizeof path, "%s/trajectory.xyz", dir);
    text = slurp(path);
    RC_CHECK(text != NULL, "%s missing", path);
    if (!text)
        return;
    for (line = text; line && *line && ok; line = next) {
        long pos;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        pos = lines % (n + 2);
        if (pos == 0) {
            char *end;
            long count = strtol(line, &end, 10);
            if (*end || count != n) {
                RC_CHECK(0, "%s line %ld: '%s', want the count %d", path,
                         lines + 1, line, n);
                ok = 0;
            }
            ++frames;
        } else if (pos == 1) {
            if (!strstr(line, "Properties=") || !strstr(line, "time=")) {
                RC_CHECK(0, "%s line %ld: comment '%s' lacks Properties=",
                         path, lines + 1, line);
                ok = 0;
            }
        } else {
            /* species, 3 positions, radius, mass, 3 momenta */
            int tokens = 0;
            char *tok = strtok(line, " ");
            for (; tok; tok = strtok(NULL, " "))
                ++tokens;
            if (tokens != 9) {
                RC_CHECK(0, "%s line %ld has %d columns, want 9", path,
                         lines + 1, tokens);
                ok = 0;
            }
        }
        ++lines;
    }
    RC_CHECK(ok && lines % (n + 2) == 0, "%s: %ld lines, not whole frames",
             path, lines);
    RC_CHECK(frames == want, "%s: %ld frames, want %ld", path, frames, want);
    free(text);
}

/* A successful run of the spring example with `extra` options into dir,
 * checked against the library's view of the same scenario. */
static void run_ok(const char *dir, const char *const *sets, int nsets,
                   const char *extra)
{
    rc_scenario_run info;
    char args[2048];
    int rc, k, n = 0;
    double e0 = NAN;
    cJSON *sum;
    char path[1024], partial[256];
    if (scenario_info(SPRING, sets, nsets, &info, &n))
        return;
    snprintf(args, sizeof args, "run '%s' --out '%s' --quiet %s", SPRING,
             dir, extra);
    for (k = 0; k < nsets; ++k) {
        size_t len = strlen(args);
        snprintf(args + len, sizeof args - len, " --set '%s'", sets[k]);
    }
    rc = cli("%s", args);
    RC_CHECK(rc == 0, "run %s: exit %d, want 0; stderr: %s", args, rc,
             g_stderr);
    if (rc != 0)
        return;
    check_diagnostics(dir, info.steps, info.every, &e0);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    sum = check_summary(path, "ok");
    if (sum) {
        RC_CHECK(num(sum, "steps") == (double)info.steps,
                 "summary steps %g, want %ld", num(sum, "steps"), info.steps);
        RC_CHECK(num(sum, "energy_initial") == e0,
                 "summary energy_initial %.17g, first row %.17g",
                 num(sum, "energy_initial"), e0);
        RC_CHECK(num(sum, "wall_seconds") >= 0.0, "wall_seconds %g",
                 num(sum, "wall_seconds"));
        /* Störmer–Verlet at dt 0.01 on this spring keeps the relative
         * energy error near 3e-4 (run output); 1e-2 flags a broken run. */
        RC_CHECK(num(sum, "max_rel_energy_error") < 1e-2,
                 "max_rel_energy_error %g", num(sum, "max_rel_energy_error"));
        /* Only an internal force: momentum is conserved to round-off,
         * about 1e-14 (a few ulps of |p| ~ 1 summed over 10^4 steps). */
        RC_CHECK(num(sum, "max_momentum_error") < 1e-10,
                 "max_momentum_error %g", num(sum, "max_momentum_error"));
        RC_CHECK(isfinite(num(sum, "final_rel_energy_error")) &&
                     isfinite(num(sum, "energy_drift_per_time")),
                 "energy error fields not finite");
        RC_CHECK(!strcmp(str(sum, "backend"), "cpu") ||
                     !strcmp(str(sum, "backend"), "reference"),
                 "backend '%s'", str(sum, "backend"));
        cJSON_Delete(sum);
    }
    if (info.trajectory == RC_TRAJECTORY_XYZ)
        check_xyz(dir, n, info.steps, info.trajectory_every);
    else
        RC_CHECK(!exists(dir, "trajectory.xyz"),
                 "trajectory.xyz written with trajectory: none");
    RC_CHECK(count_suffix(dir, ".partial", partial, sizeof partial) == 0,
             "%s: '%s' left after a successful run", dir, partial);
}

/* A run that fails at run time: exit 1, .partial files, no final names. */
static void run_fails(const char *dir, const char *what, const char *sets)
{
    char path[1024];
    cJSON *sum;
    int rc = cli("run '%s' --out '%s' --quiet %s", SPRING, dir, sets);
    RC_CHECK(rc == 1, "%s: exit %d, want 1; stderr: %s", what, rc, g_stderr);
    RC_CHECK(strstr(g_stderr, "error") != NULL, "%s: stderr '%s'", what,
             g_stderr);
    RC_CHECK(exists(dir, "diagnostics.csv.partial") &&
                 exists(dir, "summary.json.partial"),
             "%s: .partial files missing", what);
    RC_CHECK(!exists(dir, "summary.json") && !exists(dir, "diagnostics.csv") &&
                 !exists(dir, "trajectory.xyz"),
             "%s: a file with a final name is left after the failure", what);
    snprintf(path, sizeof path, "%s/summary.json.partial", dir);
    sum = check_summary(path, "failed");
    if (sum) {
        RC_CHECK(str(sum, "message")[0] != '\0',
                 "%s: summary.json.partial has no message", what);
        cJSON_Delete(sum);
    }
}

static void test_runs(void)
{
    char dir[512], keep[600];
    int n;
    /* The example as it is. */
    snprintf(dir, sizeof dir, "%s/spring", g_dir);
    run_ok(dir, NULL, 0, "");
    /* A row interval that does not divide the step count (10000 % 7 = 4):
     * the final step gets its own row; trajectory frames likewise. */
    {
        const char *sets[] = {"output.every=7",
                              "output.trajectory_every=300"};
        snprintf(dir, sizeof dir, "%s/every7", g_dir);
        run_ok(dir, sets, 2, "--backend reference --threads 1");
    }

    /* Runtime failures in a directory that holds a good run and a file
     * of the user's: the old results go, the user's file stays. */
    snprintf(dir, sizeof dir, "%s/fail", g_dir);
    run_ok(dir, NULL, 0, "");
    snprintf(keep, sizeof keep, "%s/notes.txt", dir);
    write_text(keep, "mine\n");
    run_fails(dir, "explicit blow-up",
              "--set integrator.dt=50 --set integrator.duration=100000");
    run_fails(dir, "Newton failure",
              "--set integrator.method=midpoint "
              "--set integrator.newton_max_iter=1 --set potentials[0].k=1e6");
    /* Rerunning succeeds, leaves no stale .partial (also when this run
     * writes no trajectory) and keeps the user's file. */
    {
        const char *sets[] = {"output.trajectory=none"};
        run_ok(dir, sets, 1, "");
    }
    RC_CHECK(exists(dir, "notes.txt"), "a run removed the user's notes.txt");
    run_ok(dir, NULL, 0, "--backend cpu --threads 2");
    n = count_entries(dir);
    RC_CHECK(n == 4, "%s holds %d entries, want 4", dir, n);
}

static void test_bad_input(void)
{
    char bad[512], dir[512], needle[700];
    static const char text[] =
        "dimension: 2\n"
        "particles:\n"
        "  - {mass: 1, position: [0, 0]}\n"
        "  - {mass: -1, position: [1, 0]}\n"
        "integrator: {dt: 0.01, duration: 1}\n";
    int rc;
    snprintf(bad, sizeof bad, "%s/bad.yaml", g_dir);
    write_text(bad, text);

    rc = cli("validate '%s'", bad);
    RC_CHECK(rc == 2, "validate broken file: exit %d, want 2", rc);
    /* particles[1].mass: line 4, column 12 (the value -1) */
    snprintf(needle, sizeof needle, "%s:4:12", bad);
    RC_CHECK(strstr(g_stderr, needle) != NULL,
             "validate: stderr lacks '%s': %s", needle, g_stderr);
    RC_CHECK(strstr(g_stderr, "particles[1].mass") != NULL,
             "validate: stderr lacks the field: %s", g_stderr);

    snprintf(dir, sizeof dir, "%s/bad_out", g_dir);
    rc = cli("run '%s' --out '%s'", bad, dir);
    RC_CHECK(rc == 2, "run broken file: exit %d, want 2", rc);
    RC_CHECK(strstr(g_stderr, needle) != NULL, "run: stderr lacks '%s': %s",
             needle, g_stderr);
    RC_CHECK(count_entries(dir) <= 0, "run broken file wrote into %s", dir);

    /* A bad override: field and "--set" named. */
    rc = cli("validate '%s' --set integrator.dt=fast", SPRING);
    RC_CHECK(rc == 2 && strstr(g_stderr, "integrator.dt") &&
                 strstr(g_stderr, "--set"),
             "bad --set: exit %d, stderr %s", rc, g_stderr);
    rc = cli("validate '%s' --set 'particles[9].mass=1'", SPRING);
    RC_CHECK(rc == 2 && strstr(g_stderr, "particles[9].mass"),
             "--set index out of range: exit %d, stderr %s", rc, g_stderr);
    rc = cli("validate '%s' --set integrator.dt", SPRING);
    RC_CHECK(rc == 2 && g_stderr[0], "--set without '=': exit %d", rc);
    /* A good override validates and takes effect. */
    rc = cli("validate '%s' --set integrator.dt=0.02", SPRING);
    RC_CHECK(rc == 0 && strstr(g_stdout, "5000 steps"),
             "validate --set dt=0.02: exit %d, stdout %s", rc, g_stdout);

    /* Missing scenario file: bad input, the file named. */
    snprintf(bad, sizeof bad, "%s/no_such.yaml", g_dir);
    rc = cli("validate '%s'", bad);
    RC_CHECK(rc == 2 && strstr(g_stderr, bad),
             "missing file: exit %d, stderr %s", rc, g_stderr);

    /* Command-line mistakes. */
    rc = cli("run '%s' --bogus", SPRING);
    RC_CHECK(rc == 2 && strstr(g_stderr, "--bogus"),
             "unknown option: exit %d, stderr %s", rc, g_stderr);
    rc = cli("frobnicate");
    RC_CHECK(rc == 2, "unknown command: exit %d", rc);
    rc = cli("run");
    RC_CHECK(rc == 2, "run without a scenario: exit %d", rc);
    rc = cli("run '%s' --threads 0 --out '%s'", SPRING, dir);
    RC_CHECK(rc == 2, "--threads 0: exit %d", rc);
    rc = cli("run '%s' --backend fpga --out '%s'", SPRING, dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "fpga"),
             "unknown backend: exit %d, stderr %s", rc, g_stderr);
    rc = cli("run '%s' --out", SPRING);
    RC_CHECK(rc == 2, "--out without a value: exit %d", rc);
    RC_CHECK(count_entries(dir) <= 0, "a refused command wrote into %s", dir);
    rc = cli("");
    RC_CHECK(rc == 2, "no command: exit %d", rc);
    rc = cli("--help");
    RC_CHECK(rc == 0 && strstr(g_stdout, "usage"), "--help: exit %d", rc);
    {
        /* every command answers --help on stdout with exit 0, with its
         * own lines (not another command's) and the options */
        static const char *const cmds[] = {"run",      "compare", "validate",
                                           "info",     "examples", "merge",
                                           "plot"};
        int k;
        for (k = 0; k < 7; ++k) {
            char own[32];
            rc = cli("%s --help", cmds[k]);
            snprintf(own, sizeof own, "%s", cmds[k]);
            RC_CHECK(rc == 0 && strstr(g_stdout, own) &&
                         strstr(g_stdout, "--"),
                     "%s --help: exit %d, stdout %s", cmds[k], rc, g_stdout);
            if (k < 6) /* plot's help is its own text */
                RC_CHECK(strstr(g_stdout, k == 0 ? "\n  compare S" : "\n  run S") ==
                             NULL,
                         "%s --help shows another command: %s", cmds[k],
                         g_stdout);
        }
        rc = cli("run '%s' -h", SPRING);
        RC_CHECK(rc == 0 && strstr(g_stdout, "run SCENARIO"),
                 "run SCENARIO -h: exit %d", rc);
    }
}

/* output.rdf_every through the command: `validate` accepts good values
 * and refuses bad ones with exit 2 and the place; a run samples g(r) at
 * equilibrate + k rdf_every steps (summary.json rdf_every, rdf_samples),
 * 0 writes rdf.csv with its header only, the default takes at least 10
 * samples here; summary.json times every phase. */
static void test_rdf_every(void)
{
    static const char text[] =
        "name: box\n"
        "dimension: 3\n"
        "box: {periodic: true}\n"
        "lattice: {kind: fcc, n: 32, packing_fraction: 0.3, temperature: 1, "
        "seed: 1}\n"
        "integrator: {method: gvi, dt: 0.002, duration: 0.5}\n"
        "output:\n"
        "  every: 10\n"
        "  equilibrate: 0.1\n"
        "  rdf_every: 25\n";
    static const char *const phases[] = {
        "observables", "rdf", "trajectory", "output", "other"};
    char path[512], bad[512], dir[600], needle[700];
    int rc, k;
    cJSON *sum;
    snprintf(path, sizeof path, "%s/box.yaml", g_dir);
    write_text(path, text);
    rc = cli("validate '%s'", path);
    RC_CHECK(rc == 0, "validate rdf_every 25: exit %d, stderr %s", rc,
             g_stderr);
    rc = cli("validate '%s' --set output.rdf_every=0", path);
    RC_CHECK(rc == 0, "validate rdf_every 0: exit %d", rc);
    rc = cli("validate '%s' --set output.rdf_every=-1", path);
    RC_CHECK(rc == 2 && strstr(g_stderr, "output.rdf_every"),
             "validate rdf_every -1: exit %d, stderr %s", rc, g_stderr);
    {
        /* the value on line 9, column 14 */
        char *t = (char *)malloc(sizeof text + 8);
        if (t) {
            memcpy(t, text, sizeof text);
            strcpy(strstr(t, "rdf_every: 25"), "rdf_every: often\n");
            snprintf(bad, sizeof bad, "%s/box_bad.yaml", g_dir);
            write_text(bad, t);
            free(t);
            rc = cli("validate '%s'", bad);
            snprintf(needle, sizeof needle, "%s:9:14", bad);
            RC_CHECK(rc == 2 && strstr(g_stderr, needle) &&
                         strstr(g_stderr, "output.rdf_every"),
                     "validate rdf_every often: exit %d, stderr %s (want "
                     "%s)", rc, g_stderr, needle);
            snprintf(dir, sizeof dir, "%s/box_bad_out", g_dir);
            rc = cli("run '%s' --out '%s'", bad, dir);
            RC_CHECK(rc == 2, "run rdf_every often: exit %d", rc);
        }
    }

    /* 250 steps, 50 of equilibration: samples at 75, 100, ..., 250 */
    snprintf(dir, sizeof dir, "%s/box_25", g_dir);
    rc = cli("run '%s' --out '%s'", path, dir);
    RC_CHECK(rc == 0, "run rdf_every 25: exit %d, stderr %s", rc, g_stderr);
    sum = json_file(dir, "summary.json");
    RC_CHECK(sum && num(sum, "rdf_every") == 25.0 &&
                 num(sum, "rdf_samples") == 8.0,
             "rdf_every 25: summary says every %g, samples %g (want 8)",
             sum ? num(sum, "rdf_every") : NAN,
             sum ? num(sum, "rdf_samples") : NAN);
    if (sum) {
        /* the named phases and the rest add up to what the engine's
         * phases leave: other is that difference, so only the rounding
         * of six sums of seconds remains (1e-9 s) */
        const cJSON *sec = cJSON_GetObjectItemCaseSensitive(sum, "seconds");
        double total = 0.0;
        for (k = 0; k < 5; ++k) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(sec, phases[k]);
            RC_CHECK(cJSON_IsNumber(v), "summary.json seconds.%s missing",
                     phases[k]);
            if (v)
                total += v->valuedouble;
        }
        RC_CHECK(fabs(total - num(sec, "observables_and_output")) <= 1e-9,
                 "seconds: observables + rdf + trajectory + output + other "
                 "= %.17g, observables_and_output %.17g", total,
                 num(sec, "observables_and_output"));
        RC_CHECK(num(sec, "rdf") > 0.0 && num(sec, "observables") > 0.0,
                 "seconds: rdf %g, observables %g", num(sec, "rdf"),
                 num(sec, "observables"));
        cJSON_Delete(sum);
    }

    snprintf(dir, sizeof dir, "%s/box_0", g_dir);
    rc = cli("run '%s' --out '%s' --set output.rdf_every=0", path, dir);
    RC_CHECK(rc == 0, "run rdf_every 0: exit %d", rc);
    {
        char rp[700], *rdf;
        snprintf(rp, sizeof rp, "%s/rdf.csv", dir);
        rdf = slurp(rp);
        RC_CHECK(rdf && !strcmp(rdf, "r,g\n"),
                 "rdf_every 0: rdf.csv is '%s', want the header only",
                 rdf ? rdf : "(missing)");
        free(rdf);
    }
    sum = json_file(dir, "summary.json");
    RC_CHECK(sum && num(sum, "rdf_every") == 0.0 &&
                 num(sum, "rdf_samples") == 0.0,
             "rdf_every 0: summary every %g samples %g",
             sum ? num(sum, "rdf_every") : NAN,
             sum ? num(sum, "rdf_samples") : NAN);
    cJSON_Delete(sum);

    /* the default: 200 steps after equilibration, so at most 20 steps
     * apart (at least 10 samples) */
    {
        char *t = (char *)malloc(sizeof text);
        if (t) {
            memcpy(t, text, sizeof text);
            *strstr(t, "  rdf_every: 25") = '\0';
            snprintf(bad, sizeof bad, "%s/box_default.yaml", g_dir);
            write_text(bad, t);
            free(t);
        }
        snprintf(dir, sizeof dir, "%s/box_default", g_dir);
        rc = cli("run '%s' --out '%s'", bad, dir);
        RC_CHECK(rc == 0, "run default rdf_every: exit %d", rc);
        sum = json_file(dir, "summary.json");
        RC_CHECK(sum && num(sum, "rdf_every") >= 1.0 &&
                     num(sum, "rdf_every") <= 20.0 &&
                     num(sum, "rdf_samples") ==
                         floor(200.0 / num(sum, "rdf_every")),
                 "default: every %g, samples %g",
                 sum ? num(sum, "rdf_every") : NAN,
                 sum ? num(sum, "rdf_samples") : NAN);
        cJSON_Delete(sum);
    }
}

static void test_cuda_backend(void)
{
    char dir[512];
    int count = 0, rc;
    snprintf(dir, sizeof dir, "%s/cuda", g_dir);
    rc_cuda_devices(NULL, 0, &count, NULL, 0);
    rc = cli("run '%s' --backend cuda --out '%s' --quiet", SPRING, dir);
    if (count == 0) {
        RC_CHECK(rc == 2, "--backend cuda without a GPU: exit %d, want 2",
                 rc);
        RC_CHECK(strstr(g_stderr, "cuda") != NULL,
                 "--backend cuda without a GPU: stderr '%s'", g_stderr);
        RC_CHECK(count_entries(dir) <= 0,
                 "--backend cuda without a GPU wrote into %s", dir);
    } else {
        /* With a GPU the run either works or is declined as bad input,
         * never a runtime failure or a crash. */
        RC_CHECK(rc == 0 || rc == 2, "--backend cuda with a GPU: exit %d",
                 rc);
    }
}

static void test_info_examples(void)
{
    char dir[512], src[1024], dst[1024];
    DIR *d;
    struct dirent *e;
    int rc, listed = 0;
    char *a, *b;

    rc = cli("info");
    RC_CHECK(rc == 0, "info: exit %d", rc);
    RC_CHECK(strstr(g_stdout, "cuda") != NULL, "info does not mention cuda: %s",
             g_stdout);
    RC_CHECK(strstr(g_stdout, "cpu") != NULL, "info does not mention cpu: %s",
             g_stdout);
    rc = cli("--version");
    RC_CHECK(rc == 0 && strstr(g_stdout, "ricochet") &&
                 strstr(g_stdout, "backends:"),
             "--version: exit %d, %s", rc, g_stdout);

    rc = cli("examples list");
    RC_CHECK(rc == 0, "examples list: exit %d; %s", rc, g_stderr);
    d = opendir(RC_EXAMPLES_DIR);
    RC_CHECK(d != NULL, "cannot open %s", RC_EXAMPLES_DIR);
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
            continue;
        RC_CHECK(strstr(g_stdout, e->d_name) != NULL,
                 "examples list lacks %s", e->d_name);
        ++listed;
    }
    if (d)
        closedir(d);
    RC_CHECK(listed >= 2, "only %d examples", listed);
    rc = cli("examples");
    RC_CHECK(rc == 0 && strstr(g_stdout, "two_particle_spring.yaml"),
             "examples (no subcommand): exit %d", rc);

    snprintf(dir, sizeof dir, "%s/copied", g_dir);
    rc = cli("examples copy two_particle_spring '%s'", dir);
    RC_CHECK(rc == 0, "examples copy: exit %d; %s", rc, g_stderr);
    snprintf(src, sizeof src, "%s", SPRING);
    snprintf(dst, sizeof dst, "%s/two_particle_spring.yaml", dir);
    a = slurp(src);
    b = slurp(dst);
    RC_CHECK(a && b && !strcmp(a, b), "copied example %s differs from %s",
             dst, src);
    free(a);
    free(b);
    RC_CHECK(count_entries(dir) == 1, "examples copy wrote %d files",
             count_entries(dir));
    /* The copy is a valid scenario. */
    rc = cli("validate '%s'", dst);
    RC_CHECK(rc == 0, "copied example does not validate: %s", g_stderr);
    rc = cli("examples copy no_such_example '%s'", dir);
    RC_CHECK(rc == 2, "examples copy of an unknown name: exit %d", rc);
    rc = cli("examples frobnicate");
    RC_CHECK(rc == 2, "unknown examples subcommand: exit %d", rc);
}

/* With stderr not a terminal (the harness captures it, as a batch job's
 * log does), a run writes status lines every output.log_every seconds and
 * one at the end; --quiet writes none; a log_every that is not positive is
 * bad input. */
static void test_status_lines(void)
{
    char dir[1100];
    int rc;
    const char *line;
    snprintf(dir, sizeof dir, "%s/statuslog", g_dir);
    /* the pogo stick's 2e5 steps take about half a second here (more
     * under the sanitizers): several lines at 0.05 s, and always the last */
    rc = cli("run '%s/pogo_stick.yaml' --set output.log_every=0.05 --out '%s'",
             RC_EXAMPLES_DIR, dir);
    line = g_stderr ? strstr(g_stderr, "200000/200000 steps (100.0%)") : NULL;
    RC_CHECK(rc == 0 && line && strstr(line, "dE/E0"),
             "status lines: exit %d, stderr %s", rc, g_stderr);
    rc = cli("run '%s/pogo_stick.yaml' --set output.log_every=0.05 --quiet "
             "--out '%s'",
             RC_EXAMPLES_DIR, dir);
    RC_CHECK(rc == 0 && g_stderr && !strstr(g_stderr, "steps ("),
             "--quiet still wrote status lines: %s", g_stderr);
    rc = cli("validate '%s' --set output.log_every=0", SPRING);
    RC_CHECK(rc == 2 && strstr(g_stderr, "output.log_every"),
             "log_every 0: exit %d, %s", rc, g_stderr);
}

int main(void)
{
    if (cli_test_start("test_cli"))
        return 1;
    /* The bundled examples, not whatever the environment points at. */
    unsetenv("RICOCHET_EXAMPLES");

    test_runs();
    test_bad_input();
    test_rdf_every();
    test_cuda_backend();
    test_info_examples();
    test_status_lines();

    return cli_test_finish("test_cli");
}

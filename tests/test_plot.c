/* `ricochet plot` end to end: the images of a run directory
 * (energy.png/.svg, min_gap.png/.svg), of a comparison directory
 * (compare_energy, compare_momentum), of a large system (observables,
 * rdf, msd), of an ensemble (energy_errors) and of a model run (energy,
 * min_gap, coordinates); --format and --out, the exit codes (2 bad or
 * incomplete directory or CSV, 1 no gnuplot or gnuplot failed) and the
 * .partial protocol (nothing half-written is left behind).
 *
 * What gnuplot was asked to draw is read from the script plot sent it:
 * a gnuplot wrapper on the PATH copies its stdin to a file (the data
 * plot computes itself, such as the MSD fit line and the empirical
 * distributions, are datablocks in that script).
 *
 * Skipped (77) when gnuplot is not on the PATH.  The binary is the one
 * CMake built (RC_CLI). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rc_cli_test.h"

/* A PNG: the 8-byte signature and more than a kilobyte (an image with
 * axes and text; an empty or truncated file is smaller). */
static void check_png(const char *dir, const char *name)
{
    char path[1024];
    long size = -1;
    char *s;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    s = slurp_n(path, &size);
    RC_CHECK(s != NULL, "%s not written", path);
    if (s) {
        RC_CHECK(size > 1024, "%s: %ld bytes", path, size);
        RC_CHECK(size >= 8 && !memcmp(s, "\x89PNG\r\n\x1a\n", 8),
                 "%s lacks the PNG signature", path);
    }
    free(s);
}

static void check_svg(const char *dir, const char *name)
{
    char path[1024];
    char *s;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    s = slurp(path);
    RC_CHECK(s != NULL, "%s not written", path);
    RC_CHECK(s && strstr(s, "<svg") && strstr(s, "</svg>"),
             "%s is not a whole SVG document", path);
    free(s);
}

/* Both images of one plot: stem.png, then stem.svg. */
static void check_png_svg(const char *dir, const char *stem)
{
    char name[256];
    snprintf(name, sizeof name, "%s.png", stem);
    check_png(dir, name);
    snprintf(name, sizeof name, "%s.svg", stem);
    check_svg(dir, name);
}

/* Contains every one of the NULL-terminated strings; else names the
 * first missing one. */
static void check_has(const char *path, const char *text,
                      const char *const *want)
{
    int k;
    for (k = 0; want[k]; ++k)
        RC_CHECK(text && strstr(text, want[k]), "%s lacks '%s'", path,
                 want[k]);
}

static void check_file_has(const char *dir, const char *name,
                           const char *const *want)
{
    char path[1024];
    char *s;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    s = slurp(path);
    RC_CHECK(s != NULL, "%s not written", path);
    check_has(path, s, want);
    free(s);
}

/* The real gnuplot, found by main(); and the wrapper that records the
 * script: PATH=g_dir/teebin, the script lands in g_dir/last.gp. */
static char g_gnuplot[1024];
static char g_tee_env[700];

static void make_tee_gnuplot(void)
{
    char bin[512], script[600], text[2400];
    snprintf(bin, sizeof bin, "%s/teebin", g_dir);
    mkdir(bin, 0777);
    snprintf(script, sizeof script, "%s/gnuplot", bin);
    snprintf(text, sizeof text,
             "#!/bin/sh\ntee '%s/last.gp' | '%s' \"$@\"\n", g_dir,
             g_gnuplot);
    write_text(script, text);
    chmod(script, 0755);
    snprintf(g_tee_env, sizeof g_tee_env, "PATH='%s':\"$PATH\"", bin);
}

/* The rows "x y" of datablock `name` in the recorded script, up to max;
 * the count, -1 if the block is absent. */
static int datablock(const char *script, const char *name, double *x,
                     double *y, int max)
{
    char head[64];
    const char *s;
    int n = 0;
    snprintf(head, sizeof head, "%s << EOD\n", name);
    s = script ? strstr(script, head) : NULL;
    if (!s)
        return -1;
    s += strlen(head);
    while (strncmp(s, "EOD\n", 4) != 0 && *s) {
        double a, b;
        if (sscanf(s, "%lf %lf", &a, &b) == 2 && n < max) {
            x[n] = a;
            y[n] = b;
            n++;
        }
        s = strchr(s, '\n');
        if (!s)
            break;
        s++;
    }
    return n;
}

/* ------------------------------------------------------------------ */

static void test_run_dir(void)
{
    char run[512], pre[512];
    int rc;
    snprintf(run, sizeof run, "%s/run", g_dir);
    rc = cli("run '%s/newtons_cradle.yaml' --set integrator.duration=2 "
             "--out '%s' --quiet",
             RC_EXAMPLES_DIR, run);
    RC_CHECK(rc == 0, "run: exit %d: %s", rc, g_stderr);
    if (rc != 0)
        return;

    rc = cli("plot '%s'", run);
    RC_CHECK(rc == 0, "plot run: exit %d: %s", rc, g_stderr);
    check_png_svg(run, "energy");
    /* the cradle has contacts (inequalities), so min_gap is drawn */
    check_png_svg(run, "min_gap");
    RC_CHECK(strstr(g_stdout, "/energy.png\n") &&
                 strstr(g_stdout, "/min_gap.svg\n"),
             "plot does not list the images: %s", g_stdout);
    RC_CHECK(count_suffix(run, ".partial", NULL, 0) == 0,
             ".partial left in %s", run);

    /* --format png --out PREFIX: PREFIX_energy.png only */
    snprintf(pre, sizeof pre, "%s/pre", g_dir);
    rc = cli("plot '%s' --format png --out '%s'", run, pre);
    RC_CHECK(rc == 0, "plot --out: exit %d: %s", rc, g_stderr);
    RC_CHECK(exists(g_dir, "pre_energy.png") &&
                 exists(g_dir, "pre_min_gap.png"),
             "--out %s: images missing", pre);
    RC_CHECK(!exists(g_dir, "pre_energy.svg"),
             "--format png wrote an svg");
    check_png(g_dir, "pre_energy.png");

    rc = cli("plot '%s' --format gif", run);
    RC_CHECK(rc == 2, "--format gif: exit %d", rc);
}

static void test_compare_dir(void)
{
    char cmp[512], path[600];
    int rc;
    snprintf(cmp, sizeof cmp, "%s/cmp", g_dir);
    mkdir(cmp, 0777);
    snprintf(path, sizeof path, "%s/compare.csv", cmp);
    /* two methods in contiguous blocks, 2-D (lx = ly = 0) */
    write_text(path,
               "method,step,time,energy,modified_energy,rel_energy_error,"
               "lx,ly,lz,min_gap\n"
               "sv,0,0,-2,-2,0,0,0,1.5,inf\n"
               "sv,10,0.1,-2.0002,-2.00001,-1e-4,0,0,1.5,inf\n"
               "sv,20,0.2,-1.9998,-1.99999,1e-4,0,0,1.5000000000000002,inf\n"
               "sv,30,0.3,-2.0001,-2.000005,-5e-5,0,0,1.5,inf\n"
               "gvi,0,0,-2,-2,0,0,0,1.5,0.25\n"
               "gvi,10,0.1,-2.00000001,-2,-5e-9,0,0,1.4999999999999998,0.2\n"
               "gvi,20,0.2,-2,-2,0,0,0,1.5,0.1\n"
               "gvi,30,0.3,-1.99999999,-2,5e-9,0,0,1.5,0.05\n");
    snprintf(path, sizeof path, "%s/compare.json", cmp);
    write_text(path, "{\"name\": \"hand_made\"}\n");
    rc = cli("plot '%s'", cmp);
    RC_CHECK(rc == 0, "plot compare: exit %d: %s", rc, g_stderr);
    check_png_svg(cmp, "compare_energy");
    check_png_svg(cmp, "compare_momentum");
    /* the legend names both methods; the title the scenario */
    snprintf(path, sizeof path, "%s/compare_energy.svg", cmp);
    {
        char *svg = slurp(path);
        RC_CHECK(svg && strstr(svg, ">sv<") && strstr(svg, ">gvi<") &&
                     strstr(svg, "hand_made"),
                 "%s lacks the method names or the title", path);
        free(svg);
    }
    RC_CHECK(count_suffix(cmp, ".partial", NULL, 0) == 0,
             ".partial left in %s", cmp);

    /* a method that blew up (inf and nan in its last row, as compare
     * writes them) is drawn up to the blow-up and named in the key */
    snprintf(path, sizeof path, "%s/blowup", g_dir);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/blowup/compare.csv", g_dir);
    write_text(path,
               "method,step,time,energy,modified_energy,rel_energy_error,"
               "lx,ly,lz,min_gap\n"
               "sv,0,0,4.6,3.4,0,0,0,2.8,inf\n"
               "sv,10,3,inf,-nan,inf,0,0,1.9e286,inf\n"
               "midpoint,0,0,4.6,3.4,0,0,0,2.8,inf\n"
               "midpoint,10,3,4.59,3.4,-0.0021739130434782609,0,0,2.8,inf\n"
               "midpoint,20,6,4.58,3.4,-0.0043478260869565218,0,0,2.8,inf\n");
    rc = cli("plot '%s/blowup' --format svg", g_dir);
    RC_CHECK(rc == 0, "plot with a blown-up method: exit %d: %s", rc,
             g_stderr);
    snprintf(path, sizeof path, "%s/blowup", g_dir);
    check_svg(path, "compare_energy.svg");
    check_svg(path, "compare_momentum.svg");
    snprintf(path, sizeof path, "%s/blowup/compare_energy.svg", g_dir);
    {
        char *svg = slurp(path);
        RC_CHECK(svg && strstr(svg, "sv (non-finite from t = 3)"),
                 "%s does not mark the blow-up", path);
        free(svg);
    }

    /* a method whose rows are split in two blocks is bad input */
    snprintf(path, sizeof path, "%s/split", g_dir);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/split/compare.csv", g_dir);
    write_text(path,
               "method,step,time,energy,modified_energy,rel_energy_error,"
               "lx,ly,lz,min_gap\n"
               "sv,0,0,-2,-2,0,0,0,1,inf\n"
               "gvi,0,0,-2,-2,0,0,0,1,inf\n"
               "sv,1,1,-2,-2,0,0,0,1,inf\n");
    rc = cli("plot '%s/split'", g_dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "compare.csv"),
             "split method blocks: exit %d: %s", rc, g_stderr);
}

static void test_bad_input(void)
{
    char path[600];
    int rc;
    rc = cli("plot '%s/no_such_dir'", g_dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "no_such_dir"),
             "missing dir: exit %d: %s", rc, g_stderr);

    snprintf(path, sizeof path, "%s/empty", g_dir);
    mkdir(path, 0777);
    rc = cli("plot '%s'", path);
    RC_CHECK(rc == 2 && strstr(g_stderr, "diagnostics.csv"),
             "dir without CSV: exit %d: %s", rc, g_stderr);

    snprintf(path, sizeof path, "%s/badhdr", g_dir);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/badhdr/diagnostics.csv", g_dir);
    write_text(path, "step,time,energy\n0,0,1\n1,1,1\n");
    rc = cli("plot '%s/badhdr'", g_dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "badhdr/diagnostics.csv"),
             "wrong header: exit %d: %s", rc, g_stderr);
    RC_CHECK(count_suffix(g_dir, ".partial", NULL, 0) == 0 &&
                 !exists(g_dir, "badhdr/energy.png"),
             "wrong header left an image");
}

static void test_gnuplot_missing_or_failing(void)
{
    char bin[512], env[700], script[600], out[600];
    int rc;
    /* PATH without gnuplot */
    snprintf(bin, sizeof bin, "%s/emptybin", g_dir);
    mkdir(bin, 0777);
    snprintf(env, sizeof env, "PATH='%s'", bin);
    rc = cli_env(env, "plot '%s/run'", g_dir);
    RC_CHECK(rc == 1 && strstr(g_stderr, "gnuplot-nox"),
             "no gnuplot: exit %d: %s", rc, g_stderr);

    /* a gnuplot that fails: exit 1, its status reported, no image */
    snprintf(bin, sizeof bin, "%s/fakebin", g_dir);
    mkdir(bin, 0777);
    snprintf(script, sizeof script, "%s/gnuplot", bin);
    write_text(script, "#!/bin/sh\nexit 3\n");
    chmod(script, 0755);
    snprintf(out, sizeof out, "%s/failed", g_dir);
    mkdir(out, 0777);
    snprintf(env, sizeof env, "PATH='%s'", bin);
    rc = cli_env(env, "plot '%s/run' --out '%s/x'", g_dir, out);
    RC_CHECK(rc == 1 && strstr(g_stderr, "status 3"),
             "failing gnuplot: exit %d: %s", rc, g_stderr);
    RC_CHECK(count_suffix(out, ".partial", NULL, 0) == 0 &&
                 count_suffix(out, ".png", NULL, 0) == 0 &&
                 count_suffix(out, ".svg", NULL, 0) == 0,
             "failing gnuplot left files in %s", out);
}


/* A large system, cut short: observables (Z with its mean and the
 * Carnahan-Starling value, temperature, collision rate), g(r), and the
 * MSD with the run's fit: a line of slope 2 d D (D from summary.json)
 * through the mean of the second half of msd.csv's rows, which is where
 * the run's least-squares line passes. */
static void test_large_dir(void)
{
    static const char *const obs_want[] = {
        "Z of each row", "Carnahan-Starling", "kT of each row",
        "collision rate per particle", "hard_sphere_fluid", NULL};
    static const char *const rdf_want[] = {"g(r)", "10 configurations",
                                           NULL};
    char dir[512], path[2800], *script, *msd;
    double fx[4], fy[4], t[4096], m[4096], d_coef, st = 0, sm = 0, slope;
    int rc, n = 0, k, from;
    cJSON *summary;
    snprintf(dir, sizeof dir, "%s/fluid", g_dir);
    /* 500 spheres for 1 time unit: 14 MSD rows, 10 g(r) samples */
    rc = cli("run '%s/hard_sphere_fluid.yaml' --set lattice.n=500 "
             "--set integrator.duration=1 --set output.equilibrate=0.3 "
             "--set output.rdf_every=7 --out '%s' --quiet",
             RC_EXAMPLES_DIR, dir);
    RC_CHECK(rc == 0, "fluid run: exit %d: %s", rc, g_stderr);
    if (rc != 0)
        return;
    rc = cli_env(g_tee_env, "plot '%s'", dir);
    RC_CHECK(rc == 0, "plot fluid: exit %d: %s", rc, g_stderr);
    check_png_svg(dir, "observables");
    check_png_svg(dir, "rdf");
    check_png_svg(dir, "msd");
    RC_CHECK(count_suffix(dir, ".partial", NULL, 0) == 0,
             ".partial left in %s", dir);
    check_file_has(dir, "observables.svg", obs_want);
    check_file_has(dir, "rdf.svg", rdf_want);

    /* the fit line against the test's own mean of msd.csv's second half */
    summary = json_file(dir, "summary.json");
    d_coef = num(summary, "diffusion_coefficient");
    cJSON_Delete(summary);
    RC_CHECK(d_coef > 0, "summary.json: diffusion_coefficient %g", d_coef);
    snprintf(path, sizeof path, "%s/msd.csv", dir);
    msd = slurp(path);
    if (msd) {
        char *line = strchr(msd, '\n');
        while (line && n < 4096 &&
               sscanf(line + 1, "%lf,%lf", &t[n], &m[n]) == 2) {
            n++;
            line = strchr(line + 1, '\n');
        }
    }
    free(msd);
    RC_CHECK(n >= 4, "msd.csv: %d rows", n);
    snprintf(path, sizeof path, "%s/last.gp", g_dir);
    script = slurp(path);
    k = datablock(script, "$F", fx, fy, 4);
    RC_CHECK(k == 2, "the script has no two-point fit line $F (%d)", k);
    if (k == 2 && n >= 4) {
        from = n / 2;
        for (k = from; k < n; ++k) {
            st += t[k];
            sm += m[k];
        }
        st /= n - from;
        sm /= n - from;
        slope = (fy[1] - fy[0]) / (fx[1] - fx[0]);
        /* 1e-9: summary.json and msd.csv carry 10 to 17 digits */
        RC_CHECK(fabs(slope - 6.0 * d_coef) <= 1e-9 * 6.0 * d_coef,
                 "fit slope %.12g, want 6 D = %.12g", slope, 6.0 * d_coef);
        RC_CHECK(fabs(fy[0] + slope * (st - fx[0]) - sm) <= 1e-9 * sm,
                 "the fit line misses the mean (%g, %g) of the fitted rows",
                 st, sm);
        RC_CHECK(fx[0] == t[from] && fx[1] == t[n - 1],
                 "the fit line spans [%g, %g], the fitted rows [%g, %g]",
                 fx[0], fx[1], t[from], t[n - 1]);
    }
    free(script);

    /* incomplete: without msd.csv, the message names it */
    snprintf(path, sizeof path, "mkdir '%s/fluid_cut' && cp '%s'/summary.json "
             "'%s'/observables.csv '%s'/rdf.csv '%s/fluid_cut/'",
             g_dir, dir, dir, dir, g_dir);
    RC_CHECK(system(path) == 0, "cannot copy %s", dir);
    rc = cli("plot '%s/fluid_cut'", g_dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "msd.csv") &&
                 strstr(g_stderr, "large-system"),
             "large system without msd.csv: exit %d: %s", rc, g_stderr);
    RC_CHECK(count_suffix(path, ".png", NULL, 0) == 0, "images written");
}

/* The empirical distributions of one quantity: every curve a rising
 * staircase of fractions in [0, 1] that ends at 1; returns how many. */
static int check_ecdf_blocks(const char *script, int q)
{
    static double x[4096], y[4096];
    int k, n, i;
    for (k = 0;; ++k) {
        char name[32];
        snprintf(name, sizeof name, "$C%d_%d", q, k);
        n = datablock(script, name, x, y, 4096);
        if (n < 0)
            return k;
        RC_CHECK(n >= 2, "%s: %d points", name, n);
        for (i = 1; i < n; ++i)
            RC_CHECK(x[i] >= x[i - 1] && y[i] >= y[i - 1] && x[i] > 0,
                     "%s is not a rising curve at point %d", name, i);
        /* exact: the last point's fraction is count/count */
        RC_CHECK(n > 0 && y[n - 1] == 1.0 && y[0] >= 0.0,
                 "%s runs from %g to %g, not to 1", name, y[0], y[n - 1]);
    }
}

/* Ensembles: one curve per method and step of a sweep that varies them
 * (members.csv's integrator.* columns), one curve named from
 * ensemble.json otherwise; refusals of incomplete directories. */
static void test_ensemble_dir(void)
{
    static const char *const sweep_want[] = {
        "gvi, dt 0.032", "gvi, dt 0.01",  "cva, dt 0.032", "cva, dt 0.01",
        "mcva, dt 0.032", "mcva, dt 0.01", "windowed energy drift",
        "largest relative energy error", "median", NULL};
    static const char *const pogo_want[] = {"gvi, dt 0.1: median",
                                            "(200 members)", NULL};
    char dir[512], path[2800], *script;
    int rc;
    snprintf(dir, sizeof dir, "%s/sweep", g_dir);
    /* 306 members of 0.5 time units, the reference at 1e-3 */
    rc = cli("run '%s/cart_pendulum_sweep.yaml' --set integrator.duration=0.5 "
             "--set ensemble.reference.dt=0.001 --out '%s' --quiet",
             RC_EXAMPLES_DIR, dir);
    RC_CHECK(rc == 0, "sweep run: exit %d: %s", rc, g_stderr);
    if (rc == 0) {
        rc = cli_env(g_tee_env, "plot '%s'", dir);
        RC_CHECK(rc == 0, "plot sweep: exit %d: %s", rc, g_stderr);
        check_png_svg(dir, "energy_errors");
        check_file_has(dir, "energy_errors.svg", sweep_want);
        snprintf(path, sizeof path, "%s/last.gp", g_dir);
        script = slurp(path);
        RC_CHECK(check_ecdf_blocks(script, 0) == 6 &&
                     check_ecdf_blocks(script, 1) == 6,
                 "want 6 curves (3 methods x 2 steps) per panel");
        RC_CHECK(script && strstr(script, "set logscale x"),
                 "the distributions are not on a log axis");
        free(script);
    }

    snprintf(dir, sizeof dir, "%s/pogo", g_dir);
    rc = cli("run '%s/pogo_ensemble.yaml' --set ensemble.members=200 "
             "--set integrator.duration=10 --out '%s' --quiet",
             RC_EXAMPLES_DIR, dir);
    RC_CHECK(rc == 0, "pogo run: exit %d: %s", rc, g_stderr);
    if (rc == 0) {
        rc = cli_env(g_tee_env, "plot '%s' --format svg", dir);
        RC_CHECK(rc == 0, "plot pogo: exit %d: %s", rc, g_stderr);
        check_svg(dir, "energy_errors.svg");
        RC_CHECK(!exists(dir, "energy_errors.png"), "--format svg wrote a png");
        check_file_has(dir, "energy_errors.svg", pogo_want);
        snprintf(path, sizeof path, "%s/last.gp", g_dir);
        script = slurp(path);
        RC_CHECK(check_ecdf_blocks(script, 0) == 1,
                 "an ensemble with one setting: want one curve");
        free(script);

        /* no gnuplot: exit 1 */
        snprintf(path, sizeof path, "PATH='%s/emptybin'", g_dir);
        rc = cli_env(path, "plot '%s'", dir);
        RC_CHECK(rc == 1 && strstr(g_stderr, "gnuplot-nox"),
                 "ensemble, no gnuplot: exit %d: %s", rc, g_stderr);

        /* members.csv without ensemble.json (an interrupted run leaves
         * ensemble.json.partial): exit 2 naming it */
        snprintf(path, sizeof path,
                 "mkdir '%s/ens_cut' && cp '%s/members.csv' '%s/ens_cut/' && "
                 "cp '%s/ensemble.json' '%s/ens_cut/ensemble.json.partial'",
                 g_dir, dir, g_dir, dir, g_dir);
        RC_CHECK(system(path) == 0, "cannot copy %s", dir);
        rc = cli("plot '%s/ens_cut'", g_dir);
        RC_CHECK(rc == 2 && strstr(g_stderr, "has no ensemble.json") &&
                     strstr(g_stderr, "ensemble.json.partial"),
                 "ensemble without ensemble.json: exit %d: %s", rc,
                 g_stderr);
    }

    /* members.csv whose header lacks windowed_drift */
    snprintf(dir, sizeof dir, "%s/ens_bad", g_dir);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/members.csv", dir);
    write_text(path, "member,max_rel_energy_error,status\n0,1e-3,ok\n");
    snprintf(path, sizeof path, "%s/ensemble.json", dir);
    write_text(path, "{\"name\": \"x\", \"method\": \"gvi\", \"dt\": 0.1}\n");
    rc = cli("plot '%s'", dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "members.csv:1") &&
                 strstr(g_stderr, "windowed_drift"),
             "members.csv without windowed_drift: exit %d: %s", rc,
             g_stderr);
    RC_CHECK(count_suffix(dir, ".partial", NULL, 0) == 0 &&
                 count_suffix(dir, ".png", NULL, 0) == 0,
             "a refused ensemble left files in %s", dir);
}

/* Model runs: energies (H, -D3Ld, H~ where the method defines them),
 * the constraint error of a constrained kind, the gap of a model with
 * impacts, and the coordinates named in summary.json. */
static void test_model_dir(void)
{
    static const char *const cp_energy[] = {
        "H (energy)", "-D3Ld (discrete energy)",
        "H~ (truncated modified Hamiltonian)", NULL};
    static const char *const cp_coords[] = {">y<", ">theta<", NULL};
    static const char *const hb_energy[] = {"H (energy)", "max |constraint|",
                                            NULL};
    static const char *const hb_coords[] = {">x<", ">y<", ">z<", NULL};
    char dir[512], path[2800], *svg;
    int rc;
    snprintf(dir, sizeof dir, "%s/cartpend", g_dir);
    /* 1.5 time units: the first impact (at t = 0.73) included */
    rc = cli("run '%s/cart_pendulum_gc.yaml' --set integrator.duration=1.5 "
             "--out '%s' --quiet",
             RC_EXAMPLES_DIR, dir);
    RC_CHECK(rc == 0, "cart-pendulum run: exit %d: %s", rc, g_stderr);
    if (rc == 0) {
        rc = cli("plot '%s'", dir);
        RC_CHECK(rc == 0, "plot model: exit %d: %s", rc, g_stderr);
        check_png_svg(dir, "energy");
        check_png_svg(dir, "min_gap");
        check_png_svg(dir, "coordinates");
        check_file_has(dir, "energy.svg", cp_energy);
        check_file_has(dir, "coordinates.svg", cp_coords);
        RC_CHECK(count_suffix(dir, ".partial", NULL, 0) == 0,
                 ".partial left in %s", dir);
    }

    snprintf(dir, sizeof dir, "%s/heis", g_dir);
    rc = cli("run '%s/heisenberg.yaml' --set integrator.duration=2 "
             "--out '%s' --quiet",
             RC_EXAMPLES_DIR, dir);
    RC_CHECK(rc == 0, "heisenberg run: exit %d: %s", rc, g_stderr);
    if (rc == 0) {
        rc = cli("plot '%s' --format svg", dir);
        RC_CHECK(rc == 0, "plot index-1 model: exit %d: %s", rc, g_stderr);
        check_file_has(dir, "energy.svg", hb_energy);
        check_file_has(dir, "coordinates.svg", hb_coords);
        /* Gauss methods define no discrete or modified energy, and the
         * kind has no inequality: neither curve, no min_gap image */
        snprintf(path, sizeof path, "%s/energy.svg", dir);
        svg = slurp(path);
        RC_CHECK(svg && !strstr(svg, "D3Ld") && !strstr(svg, "H~"),
                 "%s draws an energy the method does not define", path);
        free(svg);
        RC_CHECK(!exists(dir, "min_gap.svg"), "min_gap drawn without gaps");

        /* summary.json without diagnostics.csv: exit 2 naming it */
        snprintf(path, sizeof path,
                 "mkdir '%s/model_cut' && cp '%s/summary.json' '%s/model_cut/'",
                 g_dir, dir, g_dir);
        RC_CHECK(system(path) == 0, "cannot copy %s", dir);
        rc = cli("plot '%s/model_cut'", g_dir);
        RC_CHECK(rc == 2 && strstr(g_stderr, "model run") &&
                     strstr(g_stderr, "diagnostics.csv"),
                 "model without diagnostics.csv: exit %d: %s", rc, g_stderr);
    }

    /* hand-made: 25000 rows (thinned to every 2nd), H constant, the
     * other energies, the constraint, the gap and coordinate b never
     * defined (empty fields) */
    snprintf(dir, sizeof dir, "%s/synthetic", g_dir);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    write_text(path, "{\"name\": \"synthetic\", \"model\": {\"kind\": "
                     "\"lagrangian\", \"coordinates\": [\"a\", \"b\"]}}\n");
    snprintf(path, sizeof path, "%s/diagnostics.csv", dir);
    {
        FILE *f = fopen(path, "w");
        int i;
        RC_CHECK(f != NULL, "cannot write %s", path);
        if (f) {
            fputs("step,time,energy,kinetic,potential,discrete_energy,"
                  "modified_energy,max_constraint_error,min_gap,impacts,"
                  "solver_iterations,a,b,p_a,p_b\n",
                  f);
            for (i = 0; i < 25000; ++i)
                fprintf(f, "%d,%g,1.5,1,0.5,,,,,0,0,%g,,0,0\n", i, 0.01 * i,
                        sin(0.01 * i));
            fclose(f);
        }
    }
    {
        static const char *const syn_energy[] = {
            "H (energy) (exactly 0)", "every 2nd of 25000 rows", NULL};
        rc = cli("plot '%s' --format svg", dir);
        RC_CHECK(rc == 0, "plot synthetic model: exit %d: %s", rc, g_stderr);
        check_file_has(dir, "energy.svg", syn_energy);
        check_svg(dir, "coordinates.svg");
        RC_CHECK(!exists(dir, "min_gap.svg"), "min_gap drawn without gaps");
    }

    /* a summary.json that is not JSON */
    snprintf(dir, sizeof dir, "%s/badjson", g_dir);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    write_text(path, "{\"name\": \n");
    rc = cli("plot '%s'", dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "summary.json"),
             "broken summary.json: exit %d: %s", rc, g_stderr);
}

/* gnuplot on the PATH, as the CLI looks for it. */
static int have_gnuplot(void)
{
    const char *path = getenv("PATH");
    char *buf = g_gnuplot;
    const char *s = path ? path : "/usr/bin:/bin";
    for (;;) {
        const char *e = strchr(s, ':');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        snprintf(buf, sizeof g_gnuplot, "%.*s/gnuplot", (int)len,
                 len ? s : ".");
        if (access(buf, X_OK) == 0)
            return 1;
        if (!e)
            return 0;
        s = e + 1;
    }
}

int main(void)
{
    if (!have_gnuplot()) {
        fprintf(stderr, "test_plot: gnuplot is not on the PATH; skipped "
                        "(install gnuplot-nox)\n");
        return 77;
    }
    if (cli_test_start("test_plot"))
        return 1;

    test_run_dir();
    test_compare_dir();
    test_bad_input();
    test_gnuplot_missing_or_failing(); /* makes g_dir/emptybin */
    make_tee_gnuplot();
    test_large_dir();
    test_ensemble_dir();
    test_model_dir();

    return cli_test_finish("test_plot");
}

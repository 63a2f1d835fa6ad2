/* `ricochet plot` end to end: the images of a run directory
 * (energy.png/.svg, min_gap.png/.svg) and of a comparison directory
 * (compare_energy, compare_momentum), --format and --out, the exit codes
 * (2 bad directory or CSV, 1 no gnuplot or gnuplot failed) and the
 * .partial protocol (nothing half-written is left behind).
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

/* gnuplot on the PATH, as the CLI looks for it. */
static int have_gnuplot(void)
{
    const char *path = getenv("PATH");
    char buf[1024];
    const char *s = path ? path : "/usr/bin:/bin";
    for (;;) {
        const char *e = strchr(s, ':');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)len,
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
    test_gnuplot_missing_or_failing();

    return cli_test_finish("test_plot");
}

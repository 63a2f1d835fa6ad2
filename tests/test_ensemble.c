/* Ensembles (DESIGN §5): the `ensemble` scenario block and
 * rc_ensemble_run().
 *
 *  1. bad input is refused with the exact field path, file, line and
 *     column (computed from the text written, never typed in by hand);
 *  2. member values: linspace endpoints and spacing, grid order (first
 *     rule fastest), values, uniform and normal samples against their
 *     distributions, seeds, and members keyed by (seed, member, rule);
 *     an interrupted run leaves only .partial files;
 *  3. determinism: threads 1 and 2 give byte-identical members.csv and
 *     traces, and a member re-run alone as a plain scenario gives the same
 *     bits as its row and its trace;
 *  4. failure isolation: a member that blows up is `failed` with its step,
 *     the others are `ok`, and the ensemble still returns RC_OK;
 *  5. the L2 error against a finer reference is second order in dt;
 *  6. the cart_pendulum and cart_pendulum_xi maps (positions, momenta
 *     and E0 against the analytic ones), examples/cart_pendulum_sweep.yaml
 *     shortened (grid order, word values, groups.csv);
 *  7. the output files (members.csv, ensemble.json, traces/), no stale or
 *     .partial files, and the CLI dispatch.
 *
 * Checks whose message starts with "BUG:" describe behaviour the
 * ensemble code did not have when they were written (a blown-up member
 * counted ok, stale traces, groups.csv committed on interruption); the
 * trace_members-without-ensemble check expects the error at the key.
 *
 * Scenarios are short (a few hundred steps, mostly one particle), so the
 * whole test takes under a second on 2 cores. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "host/scenario_impl.h" /* rc_scenario_member_ (map check) */
#include "rc_cli_test.h"
#include "ricochet/ensemble.h"
#include "ricochet/run.h"
#include "ricochet/scenario.h"
#include "ricochet/system.h"

#define CART_PENDULUM RC_EXAMPLES_DIR "/cart_pendulum_sweep.yaml"

static int g_files = 0;

/* ------------------------------------------------------------------ */
/* Text helpers.                                                        */

/* `text` with the unique substring `from` replaced by `to` (malloc'd). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    size_t nb = strlen(text), nf = strlen(from), nt = strlen(to);
    char *s;
    if (!at || strstr(at + 1, from)) {
        fprintf(stderr, "test bug: '%s' is not a unique substring\n", from);
        exit(1);
    }
    s = (char *)malloc(nb - nf + nt + 1);
    if (!s)
        exit(1);
    memcpy(s, text, (size_t)(at - text));
    memcpy(s + (at - text), to, nt);
    memcpy(s + (at - text) + nt, at + nf, nb - (size_t)(at - text) - nf + 1);
    return s;
}

/* 1-based line and column of `needle` + skip in text; 0, 0 if absent. */
static void locate(const char *text, const char *needle, int skip, int *line,
                   int *col)
{
    const char *at = strstr(text, needle), *s;
    *line = *col = 0;
    if (!at)
        return;
    at += skip;
    *line = *col = 1;
    for (s = text; s < at; ++s) {
        if (*s == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* Write text to a fresh scenario file in g_dir; its path goes to path. */
static void write_scenario(const char *text, char *path, size_t size)
{
    snprintf(path, size, "%s/s%03d.yaml", g_dir, g_files++);
    write_text(path, text);
}

/* ------------------------------------------------------------------ */
/* members.csv                                                          */

typedef struct csv {
    char *text;
    int ncol;
    char *head[64];
    long nrows;
    char **cell; /* nrows * ncol */
    int bad_rows; /* rows whose field count differs from the header's */
} csv;

static void csv_free(csv *c)
{
    free(c->text);
    free(c->cell);
    memset(c, 0, sizeof *c);
}

/* Load a CSV file with a header row; 0 on success. */
static int csv_load(const char *path, csv *c)
{
    char *line, *next;
    long lines = 0, r = 0;
    memset(c, 0, sizeof *c);
    c->text = slurp(path);
    if (!c->text)
        return -1;
    for (line = c->text; *line; ++line)
        lines += *line == '\n';
    c->cell = (char **)calloc((size_t)lines + 1, 64 * sizeof(char *));
    if (!c->cell)
        return -1;
    line = c->text;
    next = strchr(line, '\n');
    if (!next)
        return -1;
    *next = '\0';
    c->ncol = split(line, c->head, 64);
    for (line = next + 1; *line; line = next + 1) {
        char *f[64];
        int n, k;
        next = strchr(line, '\n');
        if (!next)
            break;
        *next = '\0';
        n = split(line, f, 64);
        if (n != c->ncol) {
            c->bad_rows++;
            continue;
        }
        for (k = 0; k < n; ++k)
            c->cell[r * c->ncol + k] = f[k];
        ++r;
    }
    c->nrows = r;
    return 0;
}

static int csv_col(const csv *c, const char *name)
{
    int k;
    for (k = 0; k < c->ncol; ++k)
        if (!strcmp(c->head[k], name))
            return k;
    return -1;
}

static const char *csv_str(const csv *c, long r, const char *name)
{
    int k = csv_col(c, name);
    return k < 0 || r < 0 || r >= c->nrows ? "" : c->cell[r * c->ncol + k];
}

/* Cell as a number; NaN when missing or not a whole number. */
static double csv_num(const csv *c, long r, const char *name)
{
    const char *s = csv_str(c, r, name);
    char *end;
    double v;
    if (!*s)
        return NAN;
    v = strtod(s, &end);
    return *end ? NAN : v;
}

/* ------------------------------------------------------------------ */
/* Running ensembles.                                                   */

/* Load `path` with overrides; NULL (and a failed check) on error. */
static rc_scenario *load(const char *what, const char *path,
                         const char *const *sets, int nsets)
{
    rc_scenario *scn = NULL;
    rc_error err;
    char buf[3000];
    if (rc_scenario_load(path, sets, nsets, &scn, &err) != RC_OK) {
        RC_CHECK(0, "%s: cannot load %s: %s", what, path,
                 rc_error_format(&err, buf, sizeof buf));
        return NULL;
    }
    return scn;
}

/* Run a loaded ensemble into g_dir/<name>; the directory goes to dir. */
static rc_status run_loaded(const char *what, const rc_scenario *scn,
                            const char *name, int threads,
                            rc_ensemble_result *res, char *dir, size_t size)
{
    rc_ensemble_options eo;
    rc_error err;
    char buf[3000];
    rc_status st;
    snprintf(dir, size, "%s/%s", g_dir, name);
    memset(&eo, 0, sizeof eo);
    eo.out_dir = dir;
    eo.threads = threads;
    memset(res, 0, sizeof *res);
    st = rc_ensemble_run(scn, &eo, res, &err);
    RC_CHECK(st == RC_OK, "%s: rc_ensemble_run: %s", what,
             rc_error_format(&err, buf, sizeof buf));
    return st;
}

/* Write `text`, load it (with overrides) and run it into g_dir/<name>;
 * members.csv is loaded into *c.  0 on success. */
static int run_text(const char *what, const char *text,
                    const char *const *sets, int nsets, const char *name,
                    int threads, rc_ensemble_result *res, char *dir,
                    size_t size, csv *c)
{
    char path[512], file[1100];
    rc_scenario *scn;
    rc_status st;
    memset(c, 0, sizeof *c);
    write_scenario(text, path, sizeof path);
    scn = load(what, path, sets, nsets);
    if (!scn)
        return -1;
    st = run_loaded(what, scn, name, threads, res, dir, size);
    rc_scenario_free(scn);
    if (st != RC_OK)
        return -1;
    snprintf(file, sizeof file, "%s/members.csv", dir);
    if (csv_load(file, c) != 0) {
        RC_CHECK(0, "%s: cannot read %s", what, file);
        return -1;
    }
    RC_CHECK(c->bad_rows == 0, "%s: %d rows of members.csv have the wrong "
             "number of fields", what, c->bad_rows);
    return 0;
}

/* ------------------------------------------------------------------ */
/* 1. Bad input.                                                        */

/* A 1-D oscillator ensemble: three members, a linspace and a values
 * rule, a reference and two traced members. */
static const char ens_text[] =
    "# base ensemble for test_ensemble\n"
    "name: ens\n"
    "dimension: 1\n"
    "particles:\n"
    "  - {mass: 1, position: [1], momentum: [0]}\n"
    "potentials:\n"
    "  - {type: anchor, particles: 0, k: 1, point: [0]}\n"
    "integrator:\n"
    "  method: sv\n"
    "  dt: 0.1\n"
    "  duration: 2\n"
    "output:\n"
    "  every: 3\n"
    "  trace_members: [0, 2]\n"
    "ensemble:\n"
    "  members: 3\n"
    "  seed: 7\n"
    "  vary:\n"
    "    - {path: \"particles[0].position[0]\", linspace: [0.5, 1.5]}\n"
    "    - {path: \"potentials[0].k\", values: [1, 2, 3]}\n"
    "  reference: {dt: 0.01}\n";

/* Load `text` and expect an error on `field` in this file at the line of
 * `needle` + skip, and (check_col) at its column. */
static void expect_error(const char *what, const char *text,
                         const char *field, const char *needle, int skip,
                         int check_col, rc_error *out)
{
    char path[512], buf[3000];
    rc_scenario *scn = (rc_scenario *)1;
    rc_error err;
    rc_status st;
    int line, col;
    write_scenario(text, path, sizeof path);
    memset(&err, 0x5a, sizeof err);
    st = rc_scenario_load(path, NULL, 0, &scn, &err);
    RC_CHECK(st < 0, "%s: status %d (%s), want an error", what, (int)st,
             rc_status_str(st));
    RC_CHECK(scn == NULL, "%s: *out not NULL on failure", what);
    if (st >= 0) {
        rc_scenario_free(scn);
        return;
    }
    rc_error_format(&err, buf, sizeof buf);
    RC_CHECK(err.status == st, "%s: err.status %d != returned %d", what,
             (int)err.status, (int)st);
    RC_CHECK(!strcmp(err.field, field), "%s: field '%s', want '%s' (%s)",
             what, err.field, field, buf);
    RC_CHECK(err.message[0] != '\0', "%s: empty message", what);
    if (needle) {
        RC_CHECK(!strcmp(err.file, path), "%s: file '%s', want '%s'", what,
                 err.file, path);
        locate(text, needle, skip, &line, &col);
        if (line == 0) {
            fprintf(stderr, "test bug: '%s' not in the text\n", needle);
            exit(1);
        }
        RC_CHECK(err.line == line, "%s: at line %d, want %d (%s)", what,
                 err.line, line, buf);
        if (check_col)
            RC_CHECK(err.column == col, "%s: at column %d, want %d (%s)",
                     what, err.column, col, buf);
    }
    if (out)
        *out = err;
}

/* ens_text with one replacement, expecting `field` at `at` + skip. */
static void bad(const char *what, const char *from, const char *to,
                const char *field, const char *at, int skip, int check_col)
{
    char *text = replace(ens_text, from, to);
    expect_error(what, text, field, at, skip, check_col, NULL);
    free(text);
}

static void test_bad_input(void)
{
    char path[512], buf[3000], *t, *t2;
    rc_scenario *scn;
    rc_error err;

    /* The base loads: the variants below each break one thing. */
    write_scenario(ens_text, path, sizeof path);
    scn = load("base ensemble", path, NULL, 0);
    RC_CHECK(scn && rc_scenario_is_ensemble(scn) &&
                 rc_scenario_ensemble_members(scn) == 3,
             "base ensemble: is_ensemble %d, members %ld",
             scn ? rc_scenario_is_ensemble(scn) : -1,
             scn ? rc_scenario_ensemble_members(scn) : -1L);
    rc_scenario_free(scn);

    bad("unknown key in ensemble", "  seed: 7\n", "  seed: 7\n  colour: red\n",
        "ensemble.colour", "colour", 0, 1);
    bad("unknown key in a rule", "linspace: [0.5, 1.5]}",
        "linspace: [0.5, 1.5], step: 2}", "ensemble.vary[0].step", "step", 0,
        1);
    bad("a rule with two kinds", "linspace: [0.5, 1.5]}",
        "linspace: [0.5, 1.5], uniform: [0, 1]}", "ensemble.vary[0]",
        "{path: \"particles", 0, 1);
    bad("a rule with no kind", ", linspace: [0.5, 1.5]}", "}",
        "ensemble.vary[0]", "{path: \"particles", 0, 1);
    bad("values count != members", "values: [1, 2, 3]", "values: [1, 2]",
        "ensemble.vary[1].values", "values: [1, 2]", 0, 0);
    bad("grid linspace without count", "  seed: 7\n",
        "  seed: 7\n  grid: true\n", "ensemble.vary[0]",
        "{path: \"particles", 0, 1);
    bad("count outside a grid", "linspace: [0.5, 1.5]}",
        "linspace: [0.5, 1.5], count: 3}", "ensemble.vary[0].count",
        "count: 3", 7, 1);
    bad("reference dt not dividing dt", "{dt: 0.01}", "{dt: 0.03}",
        "ensemble.reference.dt", "0.03", 0, 1);
    bad("reference dt larger than dt", "{dt: 0.01}", "{dt: 0.2}",
        "ensemble.reference.dt", "0.2}", 0, 1);
    bad("unknown reference method", "{dt: 0.01}", "{dt: 0.01, method: rk4}",
        "ensemble.reference.method", "rk4", 0, 1);
    bad("trace_members out of range", "[0, 2]", "[0, 3]",
        "output.trace_members", "[0, 3]", 0, 0);
    bad("trace_members not a list", "[0, 2]", "2", "output.trace_members",
        "trace_members: 2", 15, 1);
    bad("map parameter without a map", "path: \"particles[0].position[0]\"",
        "path: map.y", "ensemble.vary[0].path", "map.y", 0, 1);
    bad("unknown map type", "  seed: 7\n",
        "  seed: 7\n  map: {type: pendulum}\n", "ensemble.map.type",
        "pendulum", 0, 1);
    bad("map on one particle in 1-D", "  seed: 7\n",
        "  seed: 7\n  map: {type: cart_pendulum}\n", "ensemble.map.type",
        "cart_pendulum", 0, 1);
    bad("zero members", "members: 3", "members: 0", "ensemble.members",
        "members: 0", 9, 1);
    bad("missing members", "  members: 3\n", "", "ensemble.members",
        "  seed: 7", 2, 0);
    bad("negative sigma", "linspace: [0.5, 1.5]",
        "normal: {mean: 1, sigma: -1}", "ensemble.vary[0].normal",
        "{mean: 1", 0, 0);
    bad("empty vary", "  vary:\n    - {path: \"particles[0].position[0]\", "
                      "linspace: [0.5, 1.5]}\n    - {path: \"potentials[0].k\", "
                      "values: [1, 2, 3]}\n",
        "  vary: []\n", "ensemble.vary", "[]", 0, 1);

    /* A grid whose product (3 x 3) is not the members given. */
    t = replace(ens_text, "  seed: 7\n", "  seed: 7\n  grid: true\n");
    t2 = replace(t, "linspace: [0.5, 1.5]}", "linspace: [0.5, 1.5], count: 3}");
    expect_error("grid product != members", t2, "ensemble.members",
                 "members: 3", 9, 1, NULL);
    free(t);
    free(t2);

    /* trace_members without an ensemble: at trace_members, not at the
     * top of the file. */
    t = (char *)malloc(sizeof ens_text);
    if (!t)
        exit(1);
    memcpy(t, ens_text, sizeof ens_text);
    *strstr(t, "ensemble:\n") = '\0';
    expect_error("trace_members without an ensemble", t,
                 "output.trace_members", "trace_members", 0, 0, NULL);
    free(t);

    /* A rule path that names no field: the first member fails to build,
     * and the error says which member and what is wrong with the path. */
    t = replace(ens_text, "\"particles[0].position[0]\"",
                "\"particles[4].position[0]\"");
    write_scenario(t, path, sizeof path);
    scn = (rc_scenario *)1;
    memset(&err, 0, sizeof err);
    RC_CHECK(rc_scenario_load(path, NULL, 0, &scn, &err) < 0 && scn == NULL,
             "bad rule path: loaded");
    rc_error_format(&err, buf, sizeof buf);
    RC_CHECK(strstr(buf, "member 0") && strstr(buf, "particles[4]") &&
                 strstr(buf, "does not exist"),
             "bad rule path: '%s' should name member 0, the path and the "
             "problem", buf);
    free(t);

    /* A value the scenario refuses (mass -1) on the first member. */
    t = replace(ens_text, "\"potentials[0].k\", values: [1, 2, 3]",
                "\"particles[0].mass\", values: [-1, 2, 3]");
    write_scenario(t, path, sizeof path);
    scn = (rc_scenario *)1;
    memset(&err, 0, sizeof err);
    RC_CHECK(rc_scenario_load(path, NULL, 0, &scn, &err) < 0 && scn == NULL,
             "mass -1 on member 0: loaded");
    rc_error_format(&err, buf, sizeof buf);
    RC_CHECK(strstr(buf, "member 0") && !strcmp(err.field, "particles[0].mass"),
             "mass -1 on member 0: '%s' should name member 0 and the field",
             buf);
    free(t);
}

/* ------------------------------------------------------------------ */
/* 2. Member values.                                                    */

/* One step of a 1-D oscillator per member: cheap, and E0 tells whether
 * the values reached the system.  N members. */
#define NV 2001
static const char values_text[] =
    "name: values\n"
    "dimension: 1\n"
    "particles:\n"
    "  - {mass: 1, position: [1], momentum: [0]}\n"
    "potentials:\n"
    "  - {type: anchor, particles: 0, k: 1, point: [0]}\n"
    "integrator: {method: sv, dt: 0.1, duration: 0.1}\n"
    "output: {every: 1}\n"
    "ensemble:\n"
    "  members: 2001\n"
    "  seed: 7\n"
    "  vary:\n"
    "    - {path: \"particles[0].position[0]\", linspace: [0.5, 1.5]}\n"
    "    - {path: \"particles[0].momentum[0]\", uniform: [-2, 3]}\n"
    "    - {path: \"potentials[0].k\", normal: {mean: 4, sigma: 0.5}}\n"
    "    - {path: \"particles[0].mass\", uniform: [1, 2]}\n";

#define XCOL "particles[0].position[0]"
#define PCOL "particles[0].momentum[0]"
#define KCOL "potentials[0].k"
#define MCOL "particles[0].mass"

static void test_values(void)
{
    char dir[1100];
    rc_ensemble_result res;
    csv c, c2;
    long k, n, worst = -1;
    double su = 0, sm = 0, sk = 0, skk = 0, supm = 0, smm = 0, suu = 0;
    double werr = 0.0, a, b, mu, sd, se, r, inside = 0;
    const char *sets[2];

    if (run_text("values", values_text, NULL, 0, "values", 2, &res, dir,
                 sizeof dir, &c))
        return;
    n = c.nrows;
    RC_CHECK(n == NV && res.members == NV && res.ok == NV,
             "values: %ld rows, %ld members, %ld ok; want %d", n, res.members,
             res.ok, NV);
    if (n != NV) {
        csv_free(&c);
        return;
    }

    /* linspace: the endpoints are the given numbers exactly, and the
     * points are a + (b - a) k / (n - 1) to rounding (1 ulp of 1.5). */
    a = csv_num(&c, 0, XCOL);
    b = csv_num(&c, n - 1, XCOL);
    RC_CHECK(a == 0.5 && b == 1.5, "linspace endpoints %.17g, %.17g; want "
             "0.5, 1.5 exactly", a, b);
    for (k = 0; k < n; ++k) {
        double x = csv_num(&c, k, XCOL), want = 0.5 + (double)k / (n - 1);
        double e = fabs(x - want);
        if (!(e <= werr)) {
            werr = isfinite(e) ? e : INFINITY;
            worst = k;
        }
        RC_CHECK(atol(csv_str(&c, k, "member")) == k,
                 "row %ld is member %s", k, csv_str(&c, k, "member"));
    }
    /* the step of 1/2000 is exact to the rounding of a + (b-a) k/(n-1) */
    RC_CHECK(werr <= 4.5e-16, "linspace not evenly spaced: member %ld off "
             "by %.3g (tolerance 2 ulp of 1.5)", worst, werr);

    /* E0 = p^2 / (2 m) + k x^2 / 2: the values are the member's. */
    werr = 0.0;
    for (k = 0; k < n; ++k) {
        double x = csv_num(&c, k, XCOL), p = csv_num(&c, k, PCOL);
        double kk = csv_num(&c, k, KCOL), m = csv_num(&c, k, MCOL);
        double e0 = csv_num(&c, k, "E0"), want = p * p / (2 * m) + kk * x * x / 2;
        double e = fabs(e0 - want) / fabs(want);
        if (!(e <= werr)) {
            werr = isfinite(e) ? e : INFINITY;
            worst = k;
        }
    }
    RC_CHECK(werr <= 1e-14, "E0 differs from p^2/2m + k x^2/2 of the row's "
             "values by %.3g relative at member %ld (tolerance: rounding)",
             werr, worst);

    /* uniform [-2, 3) and [1, 2): every value inside; the mean within 4
     * standard errors (b - a) / sqrt(12 n) of the middle (a fixed seed:
     * the check is deterministic; for a good generator a 4-sigma miss
     * has probability 6e-5); the two rules of one member are
     * uncorrelated: |r| < 4 / sqrt(n). */
    for (k = 0; k < n; ++k) {
        double u = csv_num(&c, k, PCOL), m = csv_num(&c, k, MCOL);
        RC_CHECK(u >= -2 && u < 3, "uniform value %.17g of member %ld "
                 "outside [-2, 3)", u, k);
        RC_CHECK(m >= 1 && m < 2, "uniform value %.17g of member %ld "
                 "outside [1, 2)", m, k);
        su += u;
        sm += m;
        suu += u * u;
        smm += m * m;
        supm += u * m;
    }
    mu = su / n;
    se = 5.0 / sqrt(12.0 * n);
    RC_CHECK(fabs(mu - 0.5) <= 4 * se, "uniform [-2, 3): mean %.5f, want "
             "0.5 within 4 standard errors (%.4f)", mu, 4 * se);
    se = 1.0 / sqrt(12.0 * n);
    RC_CHECK(fabs(sm / n - 1.5) <= 4 * se, "uniform [1, 2): mean %.5f, "
             "want 1.5 within 4 standard errors (%.4f)", sm / n, 4 * se);
    r = (supm / n - mu * (sm / n)) /
        sqrt((suu / n - mu * mu) * (smm / n - (sm / n) * (sm / n)));
    RC_CHECK(fabs(r) <= 4 / sqrt((double)n), "two uniform rules of the same "
             "members correlate: r = %.4f (bound 4/sqrt(n) = %.4f)", r,
             4 / sqrt((double)n));

    /* normal(4, 0.5): sample mean within 4 sigma/sqrt(n) of 4; sample
     * standard deviation within 4 standard errors of 0.5, the standard
     * error of s being sigma / sqrt(2 (n - 1)) for normal samples; the
     * fraction within one sigma within 4 binomial standard errors of
     * 0.6827 (the shape, not only two moments). */
    for (k = 0; k < n; ++k) {
        double x = csv_num(&c, k, KCOL);
        sk += x;
        skk += x * x;
        inside += fabs(x - 4) < 0.5;
    }
    mu = sk / n;
    sd = sqrt((skk - n * mu * mu) / (n - 1));
    RC_CHECK(fabs(mu - 4) <= 4 * 0.5 / sqrt((double)n), "normal: mean %.5f, "
             "want 4 within 4 standard errors (%.4f)", mu,
             4 * 0.5 / sqrt((double)n));
    RC_CHECK(fabs(sd - 0.5) <= 4 * 0.5 / sqrt(2.0 * (n - 1)), "normal: "
             "standard deviation %.5f, want 0.5 within 4 standard errors "
             "(%.4f)", sd, 4 * 0.5 / sqrt(2.0 * (n - 1)));
    RC_CHECK(fabs(inside / n - 0.682689) <=
                 4 * sqrt(0.682689 * 0.317311 / n),
             "normal: %.4f of the values within one sigma, want 0.6827 "
             "within %.4f", inside / n, 4 * sqrt(0.682689 * 0.317311 / n));

    /* Seeds: the same seed gives the same values; member k's random
     * values do not depend on how many members there are (keyed by
     * seed, member, rule); another seed changes every random value. */
    sets[0] = "ensemble.members=50";
    sets[1] = "ensemble.seed=7";
    if (run_text("seed 7, 50 members", values_text, sets, 2, "seed7", 1, &res,
                 dir, sizeof dir, &c2) == 0) {
        int same = c2.nrows == 50;
        for (k = 0; same && k < 50; ++k)
            same = !strcmp(csv_str(&c, k, PCOL), csv_str(&c2, k, PCOL)) &&
                   !strcmp(csv_str(&c, k, KCOL), csv_str(&c2, k, KCOL)) &&
                   !strcmp(csv_str(&c, k, MCOL), csv_str(&c2, k, MCOL));
        RC_CHECK(same, "seed 7: the first 50 of 2001 members and an "
                 "ensemble of 50 differ in their random values (row %ld)",
                 k - 1);
    }
    csv_free(&c2);
    sets[1] = "ensemble.seed=8";
    if (run_text("seed 8, 50 members", values_text, sets, 2, "seed8", 1, &res,
                 dir, sizeof dir, &c2) == 0) {
        int differ = c2.nrows == 50;
        for (k = 0; differ && k < 50; ++k)
            differ = strcmp(csv_str(&c, k, PCOL), csv_str(&c2, k, PCOL)) &&
                     strcmp(csv_str(&c, k, KCOL), csv_str(&c2, k, KCOL)) &&
                     strcmp(csv_str(&c, k, MCOL), csv_str(&c2, k, MCOL));
        RC_CHECK(differ, "seeds 7 and 8 give a common random value "
                 "(member %ld)", k - 1);
        /* linspace does not depend on the seed */
        RC_CHECK(!strcmp(csv_str(&c2, 49, XCOL), "1.5"),
                 "linspace of 50 members ends at %s, want 1.5",
                 csv_str(&c2, 49, XCOL));
    }
    csv_free(&c2);
    csv_free(&c);
}

/* A grid: axes 3 (linspace), 2 (values), 2 (linspace), first fastest. */
static const char grid_text[] =
    "name: grid\n"
    "dimension: 1\n"
    "particles:\n"
    "  - {mass: 1, position: [1], momentum: [0]}\n"
    "potentials:\n"
    "  - {type: anchor, particles: 0, k: 1, point: [0]}\n"
    "integrator: {method: sv, dt: 0.1, duration: 0.1}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  vary:\n"
    "    - {path: \"particles[0].position[0]\", linspace: [1, 2], count: 3}\n"
    "    - {path: \"potentials[0].k\", values: [1, 4]}\n"
    "    - {path: \"particles[0].momentum[0]\", linspace: [0, 1], count: 2}\n";

static void test_grid(void)
{
    static const double xs[3] = {1, 1.5, 2}, ks[2] = {1, 4}, ps[2] = {0, 1};
    char dir[1100];
    rc_ensemble_result res;
    csv c;
    long k;
    int ok = 1;
    char *t;
    if (run_text("grid", grid_text, NULL, 0, "grid", 2, &res, dir, sizeof dir,
                 &c))
        return;
    RC_CHECK(c.nrows == 12 && res.members == 12,
             "grid 3 x 2 x 2: %ld rows, %ld members; want 12", c.nrows,
             res.members);
    for (k = 0; k < c.nrows && k < 12; ++k) {
        double x = csv_num(&c, k, XCOL), kk = csv_num(&c, k, KCOL),
               p = csv_num(&c, k, PCOL);
        if (!(x == xs[k % 3] && kk == ks[(k / 3) % 2] && p == ps[k / 6])) {
            ok = 0;
            RC_CHECK(0, "grid member %ld: (%g, %g, %g), want (%g, %g, %g) "
                     "(first rule fastest)", k, x, kk, p, xs[k % 3],
                     ks[(k / 3) % 2], ps[k / 6]);
        }
    }
    RC_CHECK(ok, "grid order");
    csv_free(&c);
    /* members may be given when it is the product */
    t = replace(grid_text, "  grid: true\n", "  grid: true\n  members: 12\n");
    if (run_text("grid with members: 12", t, NULL, 0, "grid12", 1, &res, dir,
                 sizeof dir, &c) == 0)
        RC_CHECK(c.nrows == 12, "grid with members: 12: %ld rows", c.nrows);
    csv_free(&c);
    free(t);
}

/* Interrupted (the progress callback asks to stop): RC_ERR_STATE, and
 * nothing left looking complete: members.csv and ensemble.json stay
 * .partial, and so must the groups table. */
static int stop_now(void *ctx, long done, long total, double elapsed)
{
    (void)done;
    (void)total;
    (void)elapsed;
    ++*(int *)ctx;
    return 1;
}

static void test_interrupted(void)
{
    char path[512], dir[1100], buf[3000], *json, file[1200];
    rc_scenario *scn;
    rc_ensemble_options eo;
    rc_ensemble_result res;
    rc_error err;
    rc_status st;
    cJSON *root;
    int calls = 0;
    write_scenario(grid_text, path, sizeof path);
    scn = load("interrupted", path, NULL, 0);
    if (!scn)
        return;
    snprintf(dir, sizeof dir, "%s/interrupted", g_dir);
    memset(&eo, 0, sizeof eo);
    eo.out_dir = dir;
    eo.threads = 1;
    eo.progress = stop_now;
    eo.progress_ctx = &calls;
    st = rc_ensemble_run(scn, &eo, &res, &err);
    /* A tiny ensemble reports progress first when its last member is
     * done (the callback runs at most ten times a second, and at the
     * end): the stop asked for then finds nothing left to stop, and the
     * run must not be reported as interrupted (it once said "interrupted
     * after N of N members").  Real interruptions: test_restart.c. */
    RC_CHECK(calls >= 1, "interrupted: the callback never ran");
    if (res.finished == res.members) {
        RC_CHECK(st == RC_OK && !res.interrupted,
                 "a stop after every member finished: status %d (%s), "
                 "interrupted %d; want a completed run",
                 (int)st, rc_error_format(&err, buf, sizeof buf),
                 res.interrupted);
        RC_CHECK(exists(dir, "members.csv") && exists(dir, "ensemble.json") &&
                     !exists(dir, "checkpoint.rcp"),
                 "a completed run commits its outputs and removes its "
                 "checkpoint");
    } else {
        RC_CHECK(st == RC_ERR_STATE && res.interrupted,
                 "interrupted: status %d (%s); want RC_ERR_STATE", (int)st,
                 rc_error_format(&err, buf, sizeof buf));
        RC_CHECK(exists(dir, "members.csv.partial") &&
                     exists(dir, "ensemble.json.partial") &&
                     !exists(dir, "members.csv") &&
                     !exists(dir, "ensemble.json") &&
                     !exists(dir, "groups.csv"),
                 "interrupted: outputs should stay .partial");
        snprintf(file, sizeof file, "%s/ensemble.json.partial", dir);
        json = slurp(file);
        root = json ? cJSON_Parse(json) : NULL;
        RC_CHECK(root && *str(root, "interrupted"), "interrupted: "
                 "ensemble.json.partial lacks 'interrupted'");
        cJSON_Delete(root);
        free(json);
    }
    rc_scenario_free(scn);
}

/* ------------------------------------------------------------------ */
/* 3. Determinism, and a member re-run alone.                           */

/* Sextic well, SV: nonlinear enough that a wrong bit would show. */
static const char det_text[] =
    "name: det\n"
    "dimension: 1\n"
    "particles:\n"
    "  - {mass: 1, position: [1.2], momentum: [0]}\n"
    "potentials:\n"
    "  - {type: sextic_well, strength: 1}\n"
    "integrator: {method: sv, dt: 0.01, duration: 5}\n"
    "output: {every: 7, trace_members: [0, 17, 39]}\n"
    "ensemble:\n"
    "  members: 40\n"
    "  seed: 2026\n"
    "  vary:\n"
    "    - {path: \"particles[0].position[0]\", uniform: [1.0, 1.25]}\n"
    "    - {path: \"particles[0].momentum[0]\", normal: {mean: 0, sigma: 0.1}}\n";

static void test_determinism(void)
{
    char d1[1100], d2[1100], a[1200], b[1200], path[512], text[1200];
    rc_ensemble_result r1, r2;
    csv c1, c2;
    rc_scenario *scn;
    rc_run_options ro;
    rc_run_result rr;
    rc_error err;
    int k;
    static const int traced[3] = {0, 17, 39};
    if (run_text("threads 1", det_text, NULL, 0, "det1", 1, &r1, d1,
                 sizeof d1, &c1))
        return;
    if (run_text("threads 2", det_text, NULL, 0, "det2", 2, &r2, d2,
                 sizeof d2, &c2)) {
        csv_free(&c1);
        return;
    }
    RC_CHECK(r1.ok == 40 && r2.ok == 40, "determinism: %ld and %ld ok of 40",
             r1.ok, r2.ok);
    snprintf(a, sizeof a, "%s/members.csv", d1);
    snprintf(b, sizeof b, "%s/members.csv", d2);
    RC_CHECK(same_file(a, b), "members.csv differs between 1 and 2 threads "
             "(%s, %s)", a, b);
    for (k = 0; k < 3; ++k) {
        snprintf(a, sizeof a, "%s/traces/member_%d.csv", d1, traced[k]);
        snprintf(b, sizeof b, "%s/traces/member_%d.csv", d2, traced[k]);
        RC_CHECK(same_file(a, b), "trace of member %d differs between 1 and "
                 "2 threads (%s, %s)", traced[k], a, b);
    }

    /* Member 17 alone, as a plain scenario with its values written in
     * (the %.17g text of members.csv round-trips): the same trace, byte
     * for byte, and the same statistics, bit for bit. */
    snprintf(text, sizeof text,
             "name: det17\n"
             "dimension: 1\n"
             "particles:\n"
             "  - {mass: 1, position: [%s], momentum: [%s]}\n"
             "potentials:\n"
             "  - {type: sextic_well, strength: 1}\n"
             "integrator: {method: sv, dt: 0.01, duration: 5}\n"
             "output: {every: 7}\n",
             csv_str(&c1, 17, XCOL), csv_str(&c1, 17, PCOL));
    write_scenario(text, path, sizeof path);
    scn = load("member 17 alone", path, NULL, 0);
    if (scn) {
        char out[1100], buf[3000];
        rc_status st;
        snprintf(out, sizeof out, "%s/det17", g_dir);
        memset(&ro, 0, sizeof ro);
        ro.out_dir = out;
        ro.backend = RC_BACKEND_CPU;
        ro.threads = 1;
        st = rc_run(scn, &ro, &rr, &err);
        RC_CHECK(st == RC_OK, "member 17 alone: %s",
                 rc_error_format(&err, buf, sizeof buf));
        snprintf(a, sizeof a, "%s/traces/member_17.csv", d1);
        snprintf(b, sizeof b, "%s/diagnostics.csv", out);
        RC_CHECK(st == RC_OK && same_file(a, b), "trace of member 17 differs "
                 "from its plain run (%s, %s)", a, b);
        RC_CHECK(csv_num(&c1, 17, "E0") == rr.energy_initial &&
                     csv_num(&c1, 17, "max_rel_energy_error") ==
                         rr.max_rel_energy_error &&
                     csv_num(&c1, 17, "final_rel_energy_error") ==
                         rr.final_rel_energy_error &&
                     csv_num(&c1, 17, "windowed_drift") == rr.windowed_drift &&
                     csv_num(&c1, 17, "drift_per_time") ==
                         rr.energy_drift_per_time &&
                     csv_num(&c1, 17, "momentum_error") ==
                         rr.max_momentum_error &&
                     csv_num(&c1, 17, "angular_momentum_error") ==
                         rr.max_angular_momentum_error &&
                     csv_num(&c1, 17, "steps") == (double)rr.steps,
                 "member 17's row differs from its plain run: max_rel "
                 "%s vs %.17g, windowed %s vs %.17g, drift %s vs %.17g",
                 csv_str(&c1, 17, "max_rel_energy_error"),
                 rr.max_rel_energy_error, csv_str(&c1, 17, "windowed_drift"),
                 rr.windowed_drift, csv_str(&c1, 17, "drift_per_time"),
                 rr.energy_drift_per_time);
        rc_scenario_free(scn);
    }
    csv_free(&c1);
    csv_free(&c2);
}

/* ------------------------------------------------------------------ */
/* 4. Failure isolation.                                                */

/* SV in the sextic well from x = 1.3: fine at small dt; at dt = 0.8 the
 * state overflows at step 5; at dt = 0.4 the momentum stays finite but
 * the kinetic energy overflows at the last step. */
static const char fail_text[] =
    "name: fail\n"
    "dimension: 1\n"
    "particles:\n"
    "  - {mass: 1, position: [1.3], momentum: [0]}\n"
    "potentials:\n"
    "  - {type: sextic_well, strength: 1}\n"
    "integrator: {method: sv, dt: 0.01, duration: 4}\n"
    "output: {every: 1, trace_members: [1, 2]}\n"
    "ensemble:\n"
    "  members: 4\n"
    "  vary:\n"
    "    - {path: integrator.dt, values: [0.01, 0.05, 0.8, 0.02]}\n";

static void test_failure(void)
{
    char dir[1100], file[1200];
    rc_ensemble_result res;
    csv c;
    cJSON *root, *counts, *fails, *q;
    char *json;
    long k;
    double fail_step_alone = NAN;

    /* the failing step of dt = 0.8 in a plain run */
    {
        char path[512], out[1100];
        char *t = replace(fail_text, "dt: 0.01", "dt: 0.8");
        rc_scenario *scn;
        rc_run_options ro;
        rc_run_result rr;
        rc_error err;
        *strstr(t, "output:") = '\0';
        write_scenario(t, path, sizeof path);
        scn = load("dt 0.8 alone", path, NULL, 0);
        if (scn) {
            snprintf(out, sizeof out, "%s/fail_alone", g_dir);
            memset(&ro, 0, sizeof ro);
            ro.out_dir = out;
            ro.backend = RC_BACKEND_CPU;
            RC_CHECK(rc_run(scn, &ro, &rr, &err) != RC_OK,
                     "dt 0.8 alone did not fail: the test needs a failing "
                     "member");
            fail_step_alone = floor(rr.failure_time / 0.8 + 0.5);
            rc_scenario_free(scn);
        }
        free(t);
    }

    if (run_text("failure", fail_text, NULL, 0, "fail", 2, &res, dir,
                 sizeof dir, &c))
        return;
    RC_CHECK(res.members == 4 && res.ok == 3 && res.failed == 1 &&
                 res.invalid == 0,
             "failure: result %ld members, %ld ok, %ld failed, %ld invalid; "
             "want 4, 3, 1, 0", res.members, res.ok, res.failed, res.invalid);
    for (k = 0; k < c.nrows; ++k) {
        const char *status = csv_str(&c, k, "status");
        double dt = csv_num(&c, k, "integrator.dt");
        if (k == 2) {
            RC_CHECK(!strcmp(status, "failed"), "member 2 (dt 0.8): status "
                     "%s, want failed", status);
            RC_CHECK(csv_num(&c, k, "fail_step") == fail_step_alone,
                     "member 2: fail_step %s, want %g (the plain run's)",
                     csv_str(&c, k, "fail_step"), fail_step_alone);
            RC_CHECK(csv_num(&c, k, "steps") == fail_step_alone - 1,
                     "member 2: steps %s, want %g (the steps completed)",
                     csv_str(&c, k, "steps"), fail_step_alone - 1);
        } else {
            RC_CHECK(!strcmp(status, "ok") &&
                         csv_num(&c, k, "fail_step") == -1 &&
                         csv_num(&c, k, "steps") == floor(4 / dt + 0.5) &&
                         csv_num(&c, k, "max_rel_energy_error") < 0.05,
                     "member %ld (dt %g): status %s, fail_step %s, steps %s, "
                     "max error %s; want ok, -1, %g, < 0.05", k, dt, status,
                     csv_str(&c, k, "fail_step"), csv_str(&c, k, "steps"),
                     csv_str(&c, k, "max_rel_energy_error"),
                     floor(4 / dt + 0.5));
        }
    }
    RC_CHECK(c.nrows == 4, "failure: %ld rows", c.nrows);
    csv_free(&c);
    /* the failed member's trace is kept as .partial, the ok one's
     * committed */
    RC_CHECK(exists(dir, "traces/member_1.csv") &&
                 !exists(dir, "traces/member_1.csv.partial"),
             "failure: trace of ok member 1 not committed");
    RC_CHECK(exists(dir, "traces/member_2.csv.partial") &&
                 !exists(dir, "traces/member_2.csv"),
             "failure: trace of failed member 2 should stay .partial");

    snprintf(file, sizeof file, "%s/ensemble.json", dir);
    json = slurp(file);
    root = json ? cJSON_Parse(json) : NULL;
    RC_CHECK(root != NULL, "failure: %s does not parse", file);
    counts = cJSON_GetObjectItemCaseSensitive(root, "status");
    RC_CHECK(num(counts, "ok") == 3 && num(counts, "failed") == 1 &&
                 num(counts, "invalid") == 0,
             "failure: ensemble.json status %g ok, %g failed, %g invalid",
             num(counts, "ok"), num(counts, "failed"), num(counts, "invalid"));
    fails = cJSON_GetObjectItemCaseSensitive(root, "first_failures");
    RC_CHECK(cJSON_GetArraySize(fails) == 1 &&
                 num(cJSON_GetArrayItem(fails, 0), "member") == 2 &&
                 num(cJSON_GetArrayItem(fails, 0), "fail_step") ==
                     fail_step_alone &&
                 !strcmp(str(cJSON_GetArrayItem(fails, 0), "status"),
                         "failed") &&
                 strstr(str(cJSON_GetArrayItem(fails, 0), "message"),
                        "non-finite"),
             "failure: first_failures should list member 2 at step %g with "
             "its message", fail_step_alone);
    q = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "quantiles_over_ok_members"),
        "max_rel_energy_error");
    RC_CHECK(num(q, "count") == 3, "failure: quantiles over %g members, "
             "want the 3 ok", num(q, "count"));
    cJSON_Delete(root);
    free(json);

    /* A member whose energy overflows (dt 0.4: finite state, infinite
     * kinetic energy at the last step) has blown up too: it must not be
     * `ok` with an infinite error that the quantiles then leave out. */
    {
        const char *sets[1] = {
            "ensemble.vary[0].values=[0.01, 0.05, 0.4, 0.02]"};
        if (run_text("energy overflow", fail_text, sets, 1, "fail_inf", 1,
                     &res, dir, sizeof dir, &c) == 0) {
            const char *status = csv_str(&c, 2, "status");
            double e = csv_num(&c, 2, "max_rel_energy_error");
            RC_CHECK(strcmp(status, "ok") || isfinite(e),
                     "BUG: member 2 (dt 0.4) is '%s' with "
                     "max_rel_energy_error %s: a member whose energy is not "
                     "finite must be failed (ensemble.json quantiles over "
                     "ok members silently drop it)", status,
                     csv_str(&c, 2, "max_rel_energy_error"));
            RC_CHECK(res.ok + res.failed + res.invalid == 4,
                     "energy overflow: counts %ld + %ld + %ld != 4", res.ok,
                     res.failed, res.invalid);
        }
        csv_free(&c);
    }
}

/* An `invalid` member: a value the scenario refuses on a middle member
 * (member 0 and the last load, so the file is accepted). */
static void test_invalid_member(void)
{
    char dir[1100];
    rc_ensemble_result res;
    csv c;
    char *t = replace(ens_text, "\"potentials[0].k\", values: [1, 2, 3]",
                      "\"particles[0].mass\", values: [1, -1, 3]");
    if (run_text("invalid member", t, NULL, 0, "invalid", 2, &res, dir,
                 sizeof dir, &c) == 0) {
        RC_CHECK(res.ok == 2 && res.invalid == 1 && res.failed == 0,
                 "invalid member: %ld ok, %ld invalid, %ld failed; want 2, "
                 "1, 0", res.ok, res.invalid, res.failed);
        RC_CHECK(!strcmp(csv_str(&c, 1, "status"), "invalid") &&
                     !strcmp(csv_str(&c, 0, "status"), "ok") &&
                     !strcmp(csv_str(&c, 2, "status"), "ok"),
                 "invalid member: statuses %s %s %s", csv_str(&c, 0, "status"),
                 csv_str(&c, 1, "status"), csv_str(&c, 2, "status"));
    }
    csv_free(&c);
    free(t);
}

/* ------------------------------------------------------------------ */
/* 5. Error against a finer reference.                                  */

/* A harmonic oscillator (omega = 1) over 10 time units at dt 0.04 and
 * 0.02, the reference at dt 0.002 (dt/20 and dt/10). */
static const char ref_text[] =
    "name: ref\n"
    "dimension: 1\n"
    "particles:\n"
    "  - {mass: 1, position: [1], momentum: [0]}\n"
    "potentials:\n"
    "  - {type: anchor, particles: 0, k: 1, point: [0]}\n"
    "integrator: {method: sv, dt: 0.04, duration: 10}\n"
    "output: {every: 5}\n"
    "ensemble:\n"
    "  members: 2\n"
    "  vary:\n"
    "    - {path: integrator.dt, values: [0.04, 0.02]}\n"
    "  reference: {dt: 0.002}\n";

static void test_reference(double *ratio_out)
{
    char dir[1100];
    rc_ensemble_result res;
    csv c;
    double e1, e2, ratio;
    if (run_text("reference", ref_text, NULL, 0, "ref", 2, &res, dir,
                 sizeof dir, &c))
        return;
    e1 = csv_num(&c, 0, "l2_error");
    e2 = csv_num(&c, 1, "l2_error");
    ratio = e1 / e2;
    *ratio_out = ratio;
    RC_CHECK(isfinite(e1) && isfinite(e2) && e1 > 0 && e2 > 0,
             "l2_error %s, %s: want finite and positive",
             csv_str(&c, 0, "l2_error"), csv_str(&c, 1, "l2_error"));
    /* SV is second order: e(h) ~ C h^2, and the reference's own error
     * (h_ref = 0.002) shifts the ratio to (h1^2 - r^2)/(h2^2 - r^2) =
     * 4.03; at omega h <= 0.04 the next terms are O((omega h)^2) = 2e-3
     * of it.  Allow 3.8 to 4.25 (a first-order error would give 2). */
    RC_CHECK(ratio >= 3.8 && ratio <= 4.25, "l2_error ratio for dt 0.04 / "
             "0.02 is %.4f (%.3g / %.3g), want about 4 (second order)",
             ratio, e1, e2);
    csv_free(&c);
}

/* ------------------------------------------------------------------ */
/* 6. The cart-pendulum maps.                                           */

/* The cart (mass 1) on the line x = 0 above the ground, the bob (0.2)
 * on a rod of length 2, gravity 10 (as in cart_pendulum_sweep.yaml). */
#define CP_SYSTEM                                                        \
    "name: cp\n"                                                         \
    "dimension: 2\n"                                                     \
    "particles:\n"                                                       \
    "  - {mass: 1.0, position: [0, 4.2], momentum: [0, 0]}\n"            \
    "  - {mass: 0.2, position: [0, 2.2], momentum: [0, 0]}\n"            \
    "potentials:\n"                                                      \
    "  - {type: gravity, g: 10}\n"                                       \
    "constraints:\n"                                                     \
    "  - {type: line, point: [0, 0], direction: [0, 1], particles: 0}\n" \
    "  - {type: rod, particles: [0, 1], length: 2}\n"                    \
    "  - {type: wall, normal: [0, 1], offset: 0, particles: 0}\n"        \
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 0.05}\n"

static const char cp_text[] =
    CP_SYSTEM
    "ensemble:\n"
    "  members: 5\n"
    "  map: {type: cart_pendulum, length: 2, y: 4, theta: 0.3, ydot: -0.7, "
    "thetadot: 2}\n"
    "  vary:\n"
    "    - {path: map.y, linspace: [3.2, 5.2]}\n"
    "    - {path: map.thetadot, linspace: [2.924, 2.564]}\n";

static const double cp_g = 10, cp_L = 2, cp_m1 = 1, cp_m2 = 0.2;

/* Member k of a loaded cart-pendulum ensemble, built through the
 * library: the cart on x = 0 at height y, the bob at the rod's length
 * at angle theta, momenta from (ydot, thetadot), and its energy
 * m1 g y + m2 g (y - L cos theta) + T. */
static void check_cp_member(const char *what, const rc_scenario *scn, long k,
                            double y, double th, double yd, double thd)
{
    const double L = cp_L, m1 = cp_m1, m2 = cp_m2, g = cp_g;
    rc_scenario *m = NULL;
    rc_system *sys = NULL;
    rc_error err;
    rc_diagnostics d;
    double v[16], q[4], p[4], rod, eq, ep, T, V;
    double want_q[4], want_p[4];
    char buf[3000];
    int w;
    if (rc_scenario_member_(scn, k, v, &m, &err) != RC_OK ||
        rc_scenario_build(m, &sys, &err) != RC_OK) {
        RC_CHECK(0, "%s member %ld: %s", what, k,
                 rc_error_format(&err, buf, sizeof buf));
        rc_scenario_free(m);
        return;
    }
    rc_system_get_state(sys, q, p);
    rc_system_diagnostics(sys, &d);
    want_q[0] = 0;
    want_q[1] = y;
    want_q[2] = L * sin(th);
    want_q[3] = y - L * cos(th);
    want_p[0] = 0;
    want_p[1] = m1 * yd;
    want_p[2] = m2 * L * cos(th) * thd;
    want_p[3] = m2 * (yd + L * sin(th) * thd);
    rod = hypot(q[2] - q[0], q[3] - q[1]);
    eq = rc_test_max_rel(4, q, want_q, 1.0, &w);
    ep = rc_test_max_rel(4, p, want_p, 1.0, &w);
    T = 0.5 * m1 * yd * yd +
        0.5 * m2 * (pow(L * cos(th) * thd, 2) + pow(yd + L * sin(th) * thd, 2));
    V = m1 * g * y + m2 * g * (y - L * cos(th));
    /* positions and momenta: rounding of sin, cos and one product each */
    RC_CHECK(q[0] == 0.0 && fabs(rod - L) <= 4e-16 * L && eq <= 1e-15 &&
                 ep <= 1e-15,
             "%s member %ld (y %g, theta %g, ydot %g, thetadot %g): cart x "
             "%.3g, rod %.17g, position error %.3g, momentum error %.3g",
             what, k, y, th, yd, thd, q[0], rod, eq, ep);
    RC_CHECK(rc_test_close(d.energy, T + V, 1e-12, 0),
             "%s member %ld: E0 %.17g, analytic %.17g (tolerance 1e-12 "
             "relative: rounding)", what, k, d.energy, T + V);
    rc_system_free(sys);
    rc_scenario_free(m);
}

static void test_cart_pendulum_map(void)
{
    char path[512], dir[1100];
    rc_scenario *scn;
    rc_ensemble_result res;
    csv c;
    long k;
    char *t;

    /* cart_pendulum: (y, theta, ydot, thetadot), two rules on y and
     * thetadot, theta and ydot from the map block */
    write_scenario(cp_text, path, sizeof path);
    scn = load("cart_pendulum map", path, NULL, 0);
    if (!scn)
        return;
    for (k = 0; k < 5; ++k)
        check_cp_member("cart_pendulum", scn, k, 3.2 + 0.5 * k, 0.3, -0.7,
                        2.924 + (2.564 - 2.924) * k / 4.0);
    if (run_loaded("cart_pendulum map", scn, "cp", 2, &res, dir,
                   sizeof dir) == RC_OK) {
        char file[1200];
        snprintf(file, sizeof file, "%s/members.csv", dir);
        RC_CHECK(csv_load(file, &c) == 0 && c.nrows == 5 && res.ok == 5 &&
                     !strcmp(c.head[1], "map.y") &&
                     !strcmp(c.head[2], "map.thetadot") &&
                     csv_num(&c, 4, "map.y") == 5.2,
                 "cart_pendulum map: %ld rows, %ld ok, columns %s, %s",
                 c.nrows, res.ok, c.ncol > 2 ? c.head[1] : "",
                 c.ncol > 2 ? c.head[2] : "");
        csv_free(&c);
    }
    rc_scenario_free(scn);

    /* parameters of the other map are refused */
    t = replace(cp_text, "path: map.y,", "path: map.beta,");
    expect_error("map.beta on a cart_pendulum map", t,
                 "ensemble.vary[0].path", "map.beta", 0, 1, NULL);
    free(t);
    t = replace(cp_text, "type: cart_pendulum,", "type: cart_pendulum_xi,");
    expect_error("map.y on a cart_pendulum_xi map", t,
                 "ensemble.vary[0].path", "map.y", 0, 1, NULL);
    free(t);
    t = replace(cp_text, "length: 2, y: 4", "length: 0, y: 4");
    expect_error("map length 0", t, "ensemble.map.length", "{type: cart_p", 0,
                 0, NULL);
    free(t);
}

/* examples/cart_pendulum_sweep.yaml, shortened to a step or a few: the
 * cart_pendulum_xi map, Xi(beta) = (beta, 0, 0, 3.5 - 0.18 beta), over
 * a 51 x 2 x 3 grid (beta, dt, method). */
static void test_cart_pendulum_sweep(void)
{
    const char *sets[2] = {"integrator.duration=0.064",
                           "output.trace_members=[0, 305]"};
    const double g = cp_g, L = cp_L, m1 = cp_m1, m2 = cp_m2;
    static const char *const methods[3] = {"gvi", "cva", "mcva"};
    char dir[1100], file[1200];
    rc_scenario *scn;
    rc_ensemble_result res;
    csv c, tr;
    long k, worst = -1;
    double werr = 0.0;
    int order = 1;

    scn = load("cart_pendulum_sweep", CART_PENDULUM, sets, 2);
    if (!scn)
        return;
    RC_CHECK(rc_scenario_ensemble_members(scn) == 306,
             "cart_pendulum_sweep: %ld members, want 51 x 2 x 3 = 306",
             rc_scenario_ensemble_members(scn));
    for (k = 0; k < 306; k += 101)
        check_cp_member("cart_pendulum_sweep", scn, k,
                        3.2 + 2.0 * (k % 51) / 50, 0, 0,
                        3.5 - 0.18 * (3.2 + 2.0 * (k % 51) / 50));
    if (run_loaded("cart_pendulum_sweep", scn, "cart", 2, &res, dir,
                   sizeof dir) != RC_OK) {
        rc_scenario_free(scn);
        return;
    }
    snprintf(file, sizeof file, "%s/members.csv", dir);
    if (csv_load(file, &c) != 0) {
        RC_CHECK(0, "cannot read %s", file);
        rc_scenario_free(scn);
        return;
    }
    RC_CHECK(c.nrows == 306 && res.ok == 306, "cart_pendulum_sweep: %ld "
             "rows, %ld ok (%ld failed, %ld invalid); want 306 ok", c.nrows,
             res.ok, res.failed, res.invalid);
    RC_CHECK(csv_num(&c, 0, "map.beta") == 3.2 &&
                 csv_num(&c, 50, "map.beta") == 5.2,
             "cart_pendulum_sweep: beta from %s to %s, want 3.2 to 5.2",
             csv_str(&c, 0, "map.beta"), csv_str(&c, 50, "map.beta"));
    for (k = 0; k < c.nrows; ++k) {
        /* E0 = m1 g y + m2 g (y - L) + m2 L^2 thetadot^2 / 2 at Xi(beta) */
        double y = csv_num(&c, k, "map.beta"), thd = 3.5 - 0.18 * y;
        double want = m1 * g * y + m2 * g * (y - L) + 0.5 * m2 * L * L * thd * thd;
        double e = fabs(csv_num(&c, k, "E0") - want) / want;
        if (!(e <= werr)) {
            werr = isfinite(e) ? e : INFINITY;
            worst = k;
        }
        /* grid order: beta fastest, then dt, then method */
        if (!(y == csv_num(&c, k % 51, "map.beta") &&
              csv_num(&c, k, "integrator.dt") == (k / 51 % 2 ? 0.01 : 0.032) &&
              !strcmp(csv_str(&c, k, "integrator.method"), methods[k / 102])))
            order = 0;
        RC_CHECK(!strcmp(csv_str(&c, k, "status"), "ok") &&
                     isfinite(csv_num(&c, k, "l2_error")) &&
                     csv_num(&c, k, "l2_error") >= 0,
                 "cart_pendulum_sweep member %ld: status %s, l2_error %s", k,
                 csv_str(&c, k, "status"), csv_str(&c, k, "l2_error"));
    }
    RC_CHECK(order, "cart_pendulum_sweep: members not in grid order (beta, "
             "dt, method)");
    RC_CHECK(werr <= 1e-12, "cart_pendulum_sweep: E0 differs from the "
             "analytic energy of Xi(beta) by %.3g relative at member %ld "
             "(tolerance 1e-12: rounding)", werr, worst);

    /* The first row of member 0's trace is its initial state. */
    snprintf(file, sizeof file, "%s/traces/member_0.csv", dir);
    if (csv_load(file, &tr) == 0) {
        double e = csv_num(&tr, 0, "energy");
        RC_CHECK(tr.nrows == 3 && csv_num(&tr, 0, "step") == 0 &&
                     e == csv_num(&c, 0, "E0") &&
                     csv_num(&tr, 0, "max_equality_error") <= 1e-15,
                 "cart_pendulum_sweep trace of member 0: %ld rows (want 3: "
                 "2 steps of 0.032), energy %.17g (E0 %s), equality error %s",
                 tr.nrows, e, csv_str(&c, 0, "E0"),
                 csv_str(&tr, 0, "max_equality_error"));
    } else {
        RC_CHECK(0, "cannot read %s", file);
    }
    csv_free(&tr);
    csv_free(&c);

    /* groups.csv: one row per (dt, method), the medians of its members */
    snprintf(file, sizeof file, "%s/groups.csv", dir);
    if (csv_load(file, &c) == 0) {
        RC_CHECK(c.nrows == 6 && c.ncol == 7 &&
                     !strcmp(c.head[0], "integrator.dt") &&
                     !strcmp(c.head[1], "integrator.method") &&
                     !strcmp(c.head[2], "members") &&
                     !strcmp(c.head[6], "median_l2_error"),
                 "groups.csv: %ld rows, %d columns (%s,...)", c.nrows, c.ncol,
                 c.ncol ? c.head[0] : "");
        for (k = 0; k < c.nrows; ++k)
            RC_CHECK(csv_num(&c, k, "members") == 51 &&
                         csv_num(&c, k, "ok") == 51 &&
                         csv_num(&c, k, "integrator.dt") ==
                             (k % 2 ? 0.01 : 0.032) &&
                         !strcmp(csv_str(&c, k, "integrator.method"),
                                 methods[k / 2]) &&
                         isfinite(csv_num(&c, k, "median_l2_error")),
                     "groups.csv row %ld: dt %s, method %s, members %s, ok "
                     "%s, median l2 %s", k, csv_str(&c, k, "integrator.dt"),
                     csv_str(&c, k, "integrator.method"),
                     csv_str(&c, k, "members"), csv_str(&c, k, "ok"),
                     csv_str(&c, k, "median_l2_error"));
    } else {
        RC_CHECK(0, "cannot read %s", file);
    }
    csv_free(&c);
    rc_scenario_free(scn);
}

/* ------------------------------------------------------------------ */
/* 7. Output files.                                                     */

static const char *const member_columns[] = {
    "member", XCOL, KCOL, "E0", "max_rel_energy_error",
    "final_rel_energy_error", "windowed_drift", "drift_per_time",
    "momentum_error", "angular_momentum_error", "impacts", "steps", "status",
    "fail_step", "l2_error", NULL};

static const char diag_header[] =
    "step,time,energy,modified_energy,kinetic,potential,px,py,pz,lx,ly,lz,"
    "min_gap,max_equality_error,active_contacts,reflections,"
    "solver_iterations";

/* ensemble.json's quantiles against a second computation from
 * members.csv: each column's finite values of the ok members sorted
 * (qsort) and interpolated linearly between order statistics.  The
 * engine selects its order statistics instead of sorting, so the two
 * agree only if the selection finds the same values; they must agree
 * bit for bit (members.csv's numbers read back exactly, and both take
 * the same two order statistics through the same formula).  Two
 * ensembles of 1001 members: one with 13 distinct initial positions in a
 * scrambled order (ties everywhere), one with normal draws. */
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_quantiles(void)
{
    static const char *const qcols[] = {
        "max_rel_energy_error", "final_rel_energy_error", "windowed_drift",
        "drift_per_time", "momentum_error", NULL};
    static const char *const qn[] = {"min", "q1", "median", "q3", "p99",
                                     "max"};
    static const double fr[] = {0.0, 0.25, 0.5, 0.75, 0.99, 1.0};
    const long members = 1001;
    int run;
    for (run = 0; run < 2; ++run) {
        size_t cap = 4096 + 24 * (size_t)members;
        char *text = (char *)malloc(cap), dir[1100], file[1300];
        size_t len;
        long k;
        rc_ensemble_result res;
        csv c;
        if (!text) {
            RC_CHECK(0, "quantiles: out of memory");
            return;
        }
        len = (size_t)snprintf(
            text, cap,
            "name: quant\ndimension: 1\n"
            "particles:\n  - {mass: 1, position: [1], momentum: [0]}\n"
            "potentials:\n  - {type: anchor, particles: 0, k: 1, point: [0]}\n"
            "integrator: {method: sv, dt: 0.3, duration: 3}\n"
            "ensemble:\n  members: %ld\n  seed: 11\n  vary:\n", members);
        if (run == 1) {
            snprintf(text + len, cap - len,
                     "    - {path: \"particles[0].position[0]\", normal: "
                     "{mean: 1, sigma: 0.4}}\n");
        } else {
            len += (size_t)snprintf(text + len, cap - len,
                                    "    - {path: \"particles[0].position[0]\", "
                                    "values: [");
            for (k = 0; k < members; ++k)
                len += (size_t)snprintf(text + len, cap - len, "%s%g",
                                        k ? ", " : "",
                                        0.5 + 0.1 * (double)(k * 7919 % 13));
            snprintf(text + len, cap - len, "]}\n");
        }
        if (run_text("quantiles", text, NULL, 0, run ? "quant_normal"
                                                     : "quant_ties",
                     2, &res, dir, sizeof dir, &c) == 0) {
            cJSON *root, *quant;
            char *json;
            int col;
            double *x = (double *)malloc(sizeof(double) * (size_t)members);
            snprintf(file, sizeof file, "%s/ensemble.json", dir);
            json = slurp(file);
            root = json ? cJSON_Parse(json) : NULL;
            quant = cJSON_GetObjectItemCaseSensitive(
                root, "quantiles_over_ok_members");
            RC_CHECK(x && quant && c.nrows == members,
                     "quantiles: ensemble.json or %ld rows missing", members);
            for (col = 0; x && quant && qcols[col]; ++col) {
                cJSON *q = cJSON_GetObjectItemCaseSensitive(quant, qcols[col]);
                long m = 0;
                int j;
                for (k = 0; k < c.nrows; ++k) {
                    double v = csv_num(&c, k, qcols[col]);
                    if (!strcmp(csv_str(&c, k, "status"), "ok") && isfinite(v))
                        x[m++] = v;
                }
                qsort(x, (size_t)m, sizeof(double), cmp_dbl);
                RC_CHECK(num(q, "count") == (double)m,
                         "quantiles %s: count %g, members.csv has %ld",
                         qcols[col], num(q, "count"), m);
                for (j = 0; j < 6 && m > 0; ++j) {
                    double pos = fr[j] * (double)(m - 1), want;
                    long i = (long)floor(pos);
                    want = i >= m - 1 ? x[m - 1]
                                      : x[i] + (pos - (double)i) *
                                                   (x[i + 1] - x[i]);
                    RC_CHECK(num(q, qn[j]) == want,
                             "quantiles (%s run) %s %s: ensemble.json %.17g, "
                             "sorted members.csv %.17g",
                             run ? "normal" : "ties", qcols[col], qn[j],
                             num(q, qn[j]), want);
                }
            }
            free(x);
            cJSON_Delete(root);
            free(json);
        }
        csv_free(&c);
        free(text);
    }
}

static void test_outputs(void)
{
    static const char *const keys[] = {
        "scenario_file", "name", "method", "dt", "members", "status",
        "quantiles_over_ok_members", "first_failures", "threads",
        "wall_seconds", "member_steps_per_second", "scenario", NULL};
    static const char *const qcols[] = {
        "max_rel_energy_error", "final_rel_energy_error", "windowed_drift",
        "drift_per_time", "momentum_error", "angular_momentum_error",
        "l2_error", NULL};
    static const char *const qn[] = {"min", "q1", "median", "q3", "p99",
                                     "max", NULL};
    char dir[1100], file[1300], tdir[1200], first[256];
    rc_ensemble_result res;
    csv c, tr;
    cJSON *root, *counts, *quant;
    char *json;
    int k, j;
    if (run_text("outputs", ens_text, NULL, 0, "outputs", 2, &res, dir,
                 sizeof dir, &c))
        return;
    for (k = 0; member_columns[k]; ++k)
        RC_CHECK(k < c.ncol && !strcmp(c.head[k], member_columns[k]),
                 "members.csv column %d is '%s', want '%s'", k,
                 k < c.ncol ? c.head[k] : "(none)", member_columns[k]);
    RC_CHECK(c.ncol == k, "members.csv has %d columns, want %d", c.ncol, k);
    RC_CHECK(c.nrows == 3, "members.csv has %ld rows, want 3", c.nrows);
    for (k = 0; k < c.nrows; ++k)
        RC_CHECK(!strcmp(csv_str(&c, k, "status"), "ok") &&
                     csv_num(&c, k, "steps") == 20 &&
                     csv_num(&c, k, "impacts") == 0 &&
                     isfinite(csv_num(&c, k, "l2_error")),
                 "member %d: status %s, steps %s, impacts %s, l2 %s", k,
                 csv_str(&c, k, "status"), csv_str(&c, k, "steps"),
                 csv_str(&c, k, "impacts"), csv_str(&c, k, "l2_error"));
    csv_free(&c);

    snprintf(file, sizeof file, "%s/ensemble.json", dir);
    json = slurp(file);
    root = json ? cJSON_Parse(json) : NULL;
    RC_CHECK(root != NULL, "%s does not parse", file);
    for (k = 0; keys[k]; ++k)
        RC_CHECK(cJSON_GetObjectItemCaseSensitive(root, keys[k]) != NULL,
                 "ensemble.json lacks '%s'", keys[k]);
    counts = cJSON_GetObjectItemCaseSensitive(root, "status");
    RC_CHECK(num(root, "members") == 3 &&
                 num(counts, "ok") + num(counts, "failed") +
                         num(counts, "invalid") == 3 &&
                 num(counts, "ok") == 3,
             "ensemble.json: members %g, status %g + %g + %g",
             num(root, "members"), num(counts, "ok"), num(counts, "failed"),
             num(counts, "invalid"));
    RC_CHECK(!strcmp(str(root, "method"), "sv") && num(root, "dt") == 0.1 &&
                 num(root, "threads") == 2 && num(root, "wall_seconds") >= 0 &&
                 num(root, "member_steps_per_second") > 0,
             "ensemble.json: method %s, dt %g, threads %g, wall %g, rate %g",
             str(root, "method"), num(root, "dt"), num(root, "threads"),
             num(root, "wall_seconds"), num(root, "member_steps_per_second"));
    quant = cJSON_GetObjectItemCaseSensitive(root, "quantiles_over_ok_members");
    for (k = 0; qcols[k]; ++k) {
        cJSON *q = cJSON_GetObjectItemCaseSensitive(quant, qcols[k]);
        int ordered = q != NULL && num(q, "count") == 3;
        for (j = 0; qn[j]; ++j) {
            double v = num(q, qn[j]);
            ordered = ordered && isfinite(v) &&
                      (j == 0 || num(q, qn[j - 1]) <= v);
        }
        RC_CHECK(ordered, "ensemble.json %s: quantiles min %g q1 %g median "
                 "%g q3 %g p99 %g max %g count %g: want finite, ordered, "
                 "count 3", qcols[k], num(q, "min"), num(q, "q1"),
                 num(q, "median"), num(q, "q3"), num(q, "p99"), num(q, "max"),
                 num(q, "count"));
    }
    RC_CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
                 root, "first_failures")) == 0,
             "ensemble.json: first_failures not empty");
    cJSON_Delete(root);
    free(json);

    /* traces of members 0 and 2: the diagnostics columns, a row every 3
     * of 20 steps plus the last (8 rows); none of member 1 */
    snprintf(tdir, sizeof tdir, "%s/traces", dir);
    for (k = 0; k < 3; k += 2) {
        snprintf(file, sizeof file, "%s/member_%d.csv", tdir, k);
        if (csv_load(file, &tr) != 0) {
            RC_CHECK(0, "trace %s missing", file);
            continue;
        }
        {
            char head[512] = "";
            for (j = 0; j < tr.ncol; ++j) {
                strcat(head, j ? "," : "");
                strncat(head, tr.head[j], sizeof head - strlen(head) - 2);
            }
            RC_CHECK(!strcmp(head, diag_header), "trace header '%s'", head);
        }
        RC_CHECK(tr.nrows == 8 && tr.bad_rows == 0 &&
                     csv_num(&tr, 7, "step") == 20,
                 "trace of member %d: %ld rows (last step %s), want 8 "
                 "ending at step 20", k, tr.nrows, csv_str(&tr, 7, "step"));
        csv_free(&tr);
    }
    RC_CHECK(!exists(tdir, "member_1.csv"), "member 1 traced, not asked");
    RC_CHECK(count_suffix(dir, ".partial", first, sizeof first) == 0 &&
                 count_suffix(tdir, ".partial", NULL, 0) == 0,
             "partial files left: %s", first);
    RC_CHECK(count_entries(dir) == 3 && count_entries(tdir) == 2,
             "output directory has %d entries (want members.csv, "
             "ensemble.json, traces/) and traces/ %d (want 2)",
             count_entries(dir), count_entries(tdir));

    /* Again into the same directory, tracing member 1 only: nothing of
     * the first run may remain to pass for output of this one. */
    {
        const char *sets[1] = {"output.trace_members=[1]"};
        if (run_text("outputs again", ens_text, sets, 1, "outputs", 1, &res,
                     dir, sizeof dir, &c) == 0) {
            RC_CHECK(exists(tdir, "member_1.csv"),
                     "second run: member 1 not traced");
            RC_CHECK(!exists(tdir, "member_0.csv") &&
                         !exists(tdir, "member_2.csv"),
                     "BUG: a second run into %s left the first run's "
                     "traces/member_0.csv and member_2.csv in place", dir);
        }
        csv_free(&c);
    }
}

/* The CLI: `run` dispatches an ensemble; --backend cuda is refused
 * without a CUDA device (tests/test_ensemble_backend.c has the rest). */
static void test_cli(void)
{
    char path[512], dir[1100];
    int rc, devices = 0;
    write_scenario(ens_text, path, sizeof path);
    snprintf(dir, sizeof dir, "%s/cli", g_dir);
    rc = cli("run '%s' --out '%s' --threads 2", path, dir);
    RC_CHECK(rc == 0, "ricochet run (ensemble): exit %d: %s", rc, g_stderr);
    RC_CHECK(strstr(g_stdout, "ensemble of 3 members: 3 ok, 0 failed, 0 "
                              "invalid") != NULL,
             "ricochet run (ensemble) printed: %s", g_stdout);
    RC_CHECK(exists(dir, "members.csv") && exists(dir, "ensemble.json") &&
                 exists(dir, "traces/member_2.csv"),
             "ricochet run (ensemble): outputs missing in %s", dir);
    rc = cli("run '%s' --out '%s' --backend cuda --quiet", path, dir);
    rc_cuda_devices(NULL, 0, &devices, NULL, 0);
    RC_CHECK(rc == (devices > 0 ? 0 : 2),
             "ricochet run (ensemble) --backend cuda: exit %d, want %d", rc,
             devices > 0 ? 0 : 2);
    rc = cli("validate '%s'", path);
    RC_CHECK(rc == 0, "ricochet validate (ensemble): exit %d: %s", rc,
             g_stderr);
}

int main(void)
{
    double ratio = NAN;
    if (cli_test_start("test_ensemble"))
        return 1;
    test_bad_input();
    test_values();
    test_grid();
    test_interrupted();
    test_determinism();
    test_failure();
    test_invalid_member();
    test_reference(&ratio);
    test_cart_pendulum_map();
    test_cart_pendulum_sweep();
    test_outputs();
    test_quantiles();
    test_cli();
    printf("test_ensemble: l2 error ratio dt 0.04/0.02 = %.4f\n", ratio);
    return cli_test_finish("test_ensemble");
}

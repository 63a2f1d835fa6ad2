/* `ricochet compare` end to end: exit codes, compare.csv (header, one
 * contiguous block per method in the order given, rows identical to each
 * method's own diagnostics.csv), compare.json (keys, statuses, numbers
 * that agree with each method's summary.json), per-method run
 * directories, and the .partial protocol.
 *
 * The binary is the one CMake built (RC_CLI), run on the bundled
 * nonlinear oscillator (two particles in a sextic well, no constraints,
 * so both sv and midpoint can run it). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rc_cli_test.h"

#define OSC RC_EXAMPLES_DIR "/nonlinear_oscillator.yaml"

/* The lines of a file after its header, as a malloc'd array of pointers
 * into *text (free both); -1 if the file is missing. */
static long read_rows(const char *path, char **text, char ***rows,
                      char **header)
{
    char *s, *next;
    long n = 0, cap = 64;
    *rows = NULL;
    *header = NULL;
    *text = slurp(path);
    if (!*text)
        return -1;
    *rows = (char **)malloc(sizeof(char *) * (size_t)cap);
    if (!*rows)
        return -1;
    for (s = *text; s && *s; s = next) {
        next = strchr(s, '\n');
        if (next)
            *next++ = '\0';
        if (!*header) {
            *header = s;
            continue;
        }
        if (n == cap) {
            char **nr = (char **)realloc(*rows, sizeof(char *) *
                                                    (size_t)(cap *= 2));
            if (!nr)
                return -1;
            *rows = nr;
        }
        (*rows)[n++] = s;
    }
    return n;
}

static cJSON *read_json(const char *path)
{
    char *text = slurp(path);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    RC_CHECK(root != NULL && cJSON_IsObject(root), "%s missing or not JSON",
             path);
    return root;
}

static int is_null(const cJSON *o, const char *key)
{
    return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* ------------------------------------------------------------------ */

#define NCMP 10
static const char cmp_header[] =
    "method,step,time,energy,modified_energy,rel_energy_error,lx,ly,lz,"
    "min_gap";
/* compare.csv column -> diagnostics.csv column for the copied values
 * (step, time, energy, modified_energy, lx, ly, lz, min_gap). */
static const int copied_cmp[] = {1, 2, 3, 4, 6, 7, 8, 9};
static const int copied_diag[] = {0, 1, 2, 3, 9, 10, 11, 12};

/* The methods of compare.json, looked up by name. */
static const cJSON *method_of(const cJSON *root, const char *name)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "methods");
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (!strcmp(str(e, "method"), name))
            return e;
    }
    return NULL;
}

/* compare.csv in `dir`: header, one contiguous block per method in the
 * order `names` (blocks of invalid methods are empty), and each block
 * equal, value for value, to the method's own diagnostics file. */
static void check_csv(const char *dir, const char *const *names, int n,
                      const cJSON *json)
{
    char path[1024], *text = NULL, **rows = NULL, *header = NULL;
    long nrows, r = 0;
    int k;
    snprintf(path, sizeof path, "%s/compare.csv", dir);
    nrows = read_rows(path, &text, &rows, &header);
    RC_CHECK(nrows >= 0, "%s missing", path);
    if (nrows < 0)
        goto out;
    RC_CHECK(header && !strcmp(header, cmp_header), "%s: header '%s'", path,
             header ? header : "(none)");
    for (k = 0; k < n; ++k) {
        const cJSON *m = method_of(json, names[k]);
        const char *status = m ? str(m, "status") : "";
        char dpath[1024], *dtext = NULL, **drows = NULL, *dheader = NULL;
        long dn, i, block = 0;
        double e0 = NAN, scale = NAN;
        cJSON *sum = NULL;
        /* The block: every row from r on that names this method. */
        while (r + block < nrows &&
               !strncmp(rows[r + block], names[k], strlen(names[k])) &&
               rows[r + block][strlen(names[k])] == ',')
            ++block;
        if (!strcmp(status, "invalid")) {
            RC_CHECK(block == 0, "%s: %ld rows for invalid method %s", path,
                     block, names[k]);
            continue;
        }
        /* A failed run keeps its rows as diagnostics.csv.partial. */
        snprintf(dpath, sizeof dpath, "%s/%s/diagnostics.csv%s", dir,
                 names[k], !strcmp(status, "ok") ? "" : ".partial");
        dn = read_rows(dpath, &dtext, &drows, &dheader);
        RC_CHECK(dn > 0, "%s missing or empty", dpath);
        RC_CHECK(block == dn,
                 "%s: method %s has %ld rows at row %ld, its %s has %ld",
                 path, names[k], block, r + 1, dpath, dn);
        snprintf(dpath, sizeof dpath, "%s/%s/summary.json%s", dir, names[k],
                 !strcmp(status, "ok") ? "" : ".partial");
        sum = read_json(dpath);
        scale = sum ? num(sum, "energy_scale") : NAN;
        for (i = 0; i < block && i < dn; ++i) {
            char *f[16], *g[32];
            int nf = split(rows[r + i], f, 16), ng = split(drows[i], g, 32);
            int c;
            double e, rel;
            if (nf != NCMP || ng < 13) {
                RC_CHECK(0, "%s row %ld: %d fields (want %d); %s: %d", path,
                         r + i + 1, nf, NCMP, dpath, ng);
                break;
            }
            for (c = 0; c < 8; ++c)
                if (strcmp(f[copied_cmp[c]], g[copied_diag[c]])) {
                    RC_CHECK(0, "%s row %ld (%s): column %d is '%s', its "
                                "diagnostics row %ld says '%s'",
                             path, r + i + 1, names[k], copied_cmp[c] + 1,
                             f[copied_cmp[c]], i + 1, g[copied_diag[c]]);
                    break;
                }
            e = strtod(f[3], NULL);
            if (i == 0)
                e0 = e;
            rel = strtod(f[5], NULL);
            /* The same subtraction and division on the same round-tripped
             * doubles (%.17g, cJSON's 17 digits): equal, bit for bit.
             * Rows of a blown-up run may hold inf/nan: skip those. */
            if (isfinite(e) && !(rel == (e - e0) / scale)) {
                RC_CHECK(0, "%s row %ld (%s): rel_energy_error %.17g, want "
                            "(H - H0)/energy_scale = %.17g",
                         path, r + i + 1, names[k], rel, (e - e0) / scale);
                break;
            }
        }
        RC_CHECK(isfinite(scale) && scale > 0, "%s: energy_scale %g", dpath,
                 scale);
        cJSON_Delete(sum);
        free(dtext);
        free(drows);
        r += block;
    }
    RC_CHECK(r == nrows, "%s: %ld rows, blocks account for %ld (a block out "
                         "of order or split?)",
             path, nrows, r);
out:
    free(text);
    free(rows);
}

/* compare.json: the top-level keys and one entry per method in order. */
static cJSON *check_json(const char *dir, const char *const *names, int n)
{
    static const char *const keys[] = {
        "method", "status", "steps", "time", "max_rel_energy_error",
        "final_rel_energy_error", "windowed_drift", "energy_drift_per_time",
        "max_momentum_error", "max_angular_momentum_error", "failure_time",
        "wall_seconds"};
    char path[1024];
    cJSON *root, *arr, *e;
    int k = 0, j;
    snprintf(path, sizeof path, "%s/compare.json", dir);
    root = read_json(path);
    if (!root)
        return NULL;
    RC_CHECK(!strcmp(str(root, "scenario"), OSC), "%s: scenario '%s'", path,
             str(root, "scenario"));
    RC_CHECK(!strcmp(str(root, "name"), "nonlinear_oscillator"),
             "%s: name '%s'", path, str(root, "name"));
    arr = cJSON_GetObjectItemCaseSensitive(root, "methods");
    RC_CHECK(cJSON_GetArraySize(arr) == n, "%s: %d methods, want %d", path,
             cJSON_GetArraySize(arr), n);
    cJSON_ArrayForEach(e, arr)
    {
        if (k < n)
            RC_CHECK(!strcmp(str(e, "method"), names[k]),
                     "%s: method %d is '%s', want '%s'", path, k + 1,
                     str(e, "method"), names[k]);
        for (j = 0; j < (int)(sizeof keys / sizeof keys[0]); ++j)
            RC_CHECK(cJSON_GetObjectItemCaseSensitive(e, keys[j]) != NULL,
                     "%s: %s has no '%s'", path, str(e, "method"), keys[j]);
        ++k;
    }
    return root;
}

/* A method that completed: finite numbers that agree with its own
 * summary.json (the same rc_run_result, printed by cJSON both times). */
static void check_ok_method(const char *dir, const cJSON *m, long steps,
                            double duration)
{
    static const char *const same[] = {
        "max_rel_energy_error", "final_rel_energy_error", "windowed_drift",
        "energy_drift_per_time", "max_momentum_error",
        "max_angular_momentum_error", "steps"};
    char path[1024];
    cJSON *sum;
    const char *name = str(m, "method");
    int k;
    RC_CHECK(!strcmp(str(m, "status"), "ok"), "%s: status '%s' (%s)", name,
             str(m, "status"), str(m, "message"));
    RC_CHECK(num(m, "steps") == (double)steps, "%s: steps %g, want %ld", name,
             num(m, "steps"), steps);
    /* steps * dt against the duration: one rounding of the product. */
    RC_CHECK(rc_test_close(num(m, "time"), duration, 1e-14, 0.0),
             "%s: time %.17g, want %g", name, num(m, "time"), duration);
    RC_CHECK(is_null(m, "failure_time"), "%s: failure_time is not null",
             name);
    RC_CHECK(num(m, "wall_seconds") >= 0.0, "%s: wall_seconds %g", name,
             num(m, "wall_seconds"));
    snprintf(path, sizeof path, "%s/%s/summary.json", dir, name);
    sum = read_json(path);
    for (k = 0; k < (int)(sizeof same / sizeof same[0]); ++k) {
        double a = num(m, same[k]), b = sum ? num(sum, same[k]) : NAN;
        RC_CHECK(isfinite(a) && a == b, "%s: %s = %.17g, summary.json %.17g",
                 name, same[k], a, b);
    }
    cJSON_Delete(sum);
}

/* No *.partial left in dir or in the named method directories. */
static void check_no_partial(const char *dir, const char *const *names,
                             int n)
{
    char sub[1024], first[256];
    int k;
    RC_CHECK(count_suffix(dir, ".partial", first, sizeof first) == 0,
             "%s: '%s' left after success", dir, first);
    for (k = 0; k < n; ++k) {
        snprintf(sub, sizeof sub, "%s/%s", dir, names[k]);
        RC_CHECK(count_suffix(sub, ".partial", first, sizeof first) == 0,
                 "%s: '%s' left after success", sub, first);
    }
}

/* ------------------------------------------------------------------ */

static void test_two_methods(void)
{
    static const char *const names[] = {"sv", "midpoint"};
    char dir[512];
    cJSON *root;
    int rc;
    snprintf(dir, sizeof dir, "%s/ok", g_dir);
    rc = cli("compare '%s' --methods sv,midpoint --set integrator.duration=20 "
             "--out '%s'",
             OSC, dir);
    RC_CHECK(rc == 0, "compare sv,midpoint: exit %d; stderr: %s", rc,
             g_stderr);
    if (rc != 0)
        return;
    RC_CHECK(exists(dir, "sv/summary.json") &&
                 exists(dir, "midpoint/summary.json"),
             "%s: a method's summary.json is missing", dir);
    RC_CHECK(strstr(g_stdout, "sv") && strstr(g_stdout, "midpoint") &&
                 strstr(g_stdout, "windowed drift"),
             "the table lacks a method or a column: %s", g_stdout);
    root = check_json(dir, names, 2);
    if (root) {
        const cJSON *sv = method_of(root, "sv");
        const cJSON *mp = method_of(root, "midpoint");
        /* duration 20 at the example's dt 0.01: 2000 steps. */
        if (sv && mp) {
            check_ok_method(dir, sv, 2000, 20.0);
            check_ok_method(dir, mp, 2000, 20.0);
            /* Both methods are second order at dt 0.01 on this well: the
             * README measures 5.7e-4 for sv; 1e-2 flags a broken run. */
            RC_CHECK(num(sv, "max_rel_energy_error") < 1e-2 &&
                         num(mp, "max_rel_energy_error") < 1e-2,
                     "energy errors %g (sv), %g (midpoint)",
                     num(sv, "max_rel_energy_error"),
                     num(mp, "max_rel_energy_error"));
            /* A central potential: L is conserved to round-off, ~1e-14
             * here (the README's table: 2e-13 over 1000 time units). */
            RC_CHECK(num(sv, "max_angular_momentum_error") < 1e-10 &&
                         num(mp, "max_angular_momentum_error") < 1e-10,
                     "angular momentum errors %g, %g",
                     num(sv, "max_angular_momentum_error"),
                     num(mp, "max_angular_momentum_error"));
        } else {
            RC_CHECK(0, "compare.json lacks sv or midpoint");
        }
        check_csv(dir, names, 2, root);
        cJSON_Delete(root);
    }
    check_no_partial(dir, names, 2);
}

/* sv blows up at dt = 2 (non-finite at step 4, t = 8); midpoint survives
 * the 10 steps: sv is recorded as failed and the comparison goes on. */
static void test_blow_up(void)
{
    static const char *const names[] = {"sv", "midpoint"};
    char dir[512], first[256];
    cJSON *root;
    int rc;
    snprintf(dir, sizeof dir, "%s/blowup", g_dir);
    rc = cli("compare '%s' --methods sv,midpoint --set integrator.dt=2 "
             "--set integrator.duration=20 --set output.every=1 --out '%s' "
             "--quiet",
             OSC, dir);
    RC_CHECK(rc == 0, "compare with a blow-up: exit %d, want 0; stderr: %s",
             rc, g_stderr);
    if (rc != 0)
        return;
    RC_CHECK(strstr(g_stderr, "sv") && strstr(g_stderr, "non-finite"),
             "stderr does not say sv failed: %s", g_stderr);
    RC_CHECK(g_stdout[0] == '\0', "--quiet printed: %s", g_stdout);
    root = check_json(dir, names, 2);
    if (root) {
        const cJSON *sv = method_of(root, "sv");
        const cJSON *mp = method_of(root, "midpoint");
        if (sv && mp) {
            double ft = num(sv, "failure_time");
            RC_CHECK(!strcmp(str(sv, "status"), "failed"),
                     "sv: status '%s', want failed", str(sv, "status"));
            RC_CHECK(str(sv, "message")[0] != '\0', "sv: no message");
            RC_CHECK(isfinite(ft) && ft > 0.0 && ft <= 20.0,
                     "sv: failure_time %g, want in (0, 20]", ft);
            RC_CHECK(num(sv, "steps") < 10.0 &&
                         num(sv, "steps") * 2.0 < ft + 1e-9,
                     "sv: steps %g before failing at t = %g",
                     num(sv, "steps"), ft);
            check_ok_method(dir, mp, 10, 20.0);
        } else {
            RC_CHECK(0, "compare.json lacks sv or midpoint");
        }
        check_csv(dir, names, 2, root);
        cJSON_Delete(root);
    }
    RC_CHECK(!exists(dir, "sv/summary.json") &&
                 exists(dir, "sv/summary.json.partial"),
             "the failed sv run is not left as .partial");
    RC_CHECK(count_suffix(dir, ".partial", first, sizeof first) == 0,
             "%s: '%s' left after the comparison completed", dir, first);
}

static void test_invalid_methods(void)
{
    static const char *const names[] = {"sv", "bogus"};
    char dir[512];
    cJSON *root;
    int rc;
    snprintf(dir, sizeof dir, "%s/mixed", g_dir);
    rc = cli("compare '%s' --methods sv,bogus --set integrator.duration=1 "
             "--out '%s' --quiet",
             OSC, dir);
    RC_CHECK(rc == 0, "sv,bogus: exit %d, want 0; stderr: %s", rc, g_stderr);
    root = rc == 0 ? check_json(dir, names, 2) : NULL;
    if (root) {
        const cJSON *bad = method_of(root, "bogus");
        const cJSON *sv = method_of(root, "sv");
        RC_CHECK(bad && !strcmp(str(bad, "status"), "invalid") &&
                     strstr(str(bad, "message"), "bogus"),
                 "bogus: status '%s', message '%s'",
                 bad ? str(bad, "status") : "(missing)",
                 bad ? str(bad, "message") : "");
        RC_CHECK(bad && is_null(bad, "steps") &&
                     is_null(bad, "max_rel_energy_error"),
                 "bogus: numbers are not null");
        if (sv)
            check_ok_method(dir, sv, 100, 1.0);
        check_csv(dir, names, 2, root);
        cJSON_Delete(root);
    }
    RC_CHECK(!exists(dir, "bogus"), "a directory was made for 'bogus'");
    check_no_partial(dir, names, 1);

    /* Nothing valid: bad input, nothing written. */
    snprintf(dir, sizeof dir, "%s/none", g_dir);
    rc = cli("compare '%s' --methods bogus,other --out '%s'", OSC, dir);
    RC_CHECK(rc == 2, "only unknown methods: exit %d, want 2", rc);
    RC_CHECK(strstr(g_stderr, "bogus") && strstr(g_stderr, "other"),
             "only unknown methods: stderr %s", g_stderr);
    RC_CHECK(count_entries(dir) <= 0,
             "only unknown methods wrote into %s", dir);
}

static void test_bad_command_lines(void)
{
    char dir[512];
    int rc;
    snprintf(dir, sizeof dir, "%s/refused", g_dir);
    rc = cli("compare '%s' --out '%s'", OSC, dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "--methods"),
             "no --methods: exit %d, stderr %s", rc, g_stderr);
    rc = cli("compare '%s' --methods '' --out '%s'", OSC, dir);
    RC_CHECK(rc == 2, "empty --methods: exit %d", rc);
    rc = cli("compare '%s' --methods sv, --out '%s'", OSC, dir);
    RC_CHECK(rc == 2, "--methods with an empty name: exit %d", rc);
    rc = cli("compare '%s' --methods sv,midpoint,sv --out '%s'", OSC, dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "sv"),
             "duplicate method: exit %d, stderr %s", rc, g_stderr);
    rc = cli("compare '%s' --methods", OSC);
    RC_CHECK(rc == 2, "--methods without a value: exit %d", rc);
    rc = cli("compare --methods sv,midpoint --out '%s'", dir);
    RC_CHECK(rc == 2, "no scenario: exit %d", rc);
    rc = cli("compare '%s' --methods sv --bogus --out '%s'", OSC, dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "--bogus"),
             "unknown option: exit %d, stderr %s", rc, g_stderr);
    /* A bad --set or a missing file is bad input before anything runs. */
    rc = cli("compare '%s' --methods sv,midpoint --set integrator.dt=fast "
             "--out '%s'",
             OSC, dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "integrator.dt"),
             "bad --set: exit %d, stderr %s", rc, g_stderr);
    rc = cli("compare '%s/no_such.yaml' --methods sv,midpoint --out '%s'",
             g_dir, dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "no_such.yaml"),
             "missing scenario: exit %d, stderr %s", rc, g_stderr);
    RC_CHECK(count_entries(dir) <= 0,
             "a refused command wrote into %s", dir);
}

int main(void)
{
    if (cli_test_start("test_compare"))
        return 1;

    test_two_methods();
    test_blow_up();
    test_invalid_methods();
    test_bad_command_lines();

    return cli_test_finish("test_compare");
}

/* The lagrangian kind through the `ricochet` binary (issue 16): both
 * examples validate and run (exit 0) and write diagnostics.csv with the
 * energy columns and the coordinates; the cart-pendulum from Xi(3.2)
 * ends with the seed's three impacts; `ricochet compare` runs the four
 * impact methods side by side; bad input exits 2 naming file, line and
 * field (an unknown name in a formula, an unknown builtin, a smooth
 * method on a model with a constraint). */
#define _POSIX_C_SOURCE 200809L
#include "rc_cli_test.h"
#include "rc_test.h"

/* The last data row's field `col` of DIR/diagnostics.csv. */
static double last_field(const char *dir, const char *col)
{
    char path[1024], *text, *line, *hdr, *f[64], *v[64];
    int nf, nv, k;
    double r = NAN;
    snprintf(path, sizeof path, "%s/diagnostics.csv", dir);
    text = slurp(path);
    if (!text)
        return NAN;
    hdr = text;
    line = strchr(text, '\n');
    if (!line) {
        free(text);
        return NAN;
    }
    *line = '\0';
    nf = split(hdr, f, 64);
    {
        char *last = NULL, *s = line + 1, *e;
        while ((e = strchr(s, '\n')) != NULL) {
            *e = '\0';
            if (*s)
                last = s;
            s = e + 1;
        }
        if (last) {
            nv = split(last, v, 64);
            for (k = 0; k < nf && k < nv; ++k)
                if (!strcmp(f[k], col))
                    r = v[k][0] ? atof(v[k]) : NAN;
        }
    }
    free(text);
    return r;
}

int main(void)
{
    char out[600], bad[600], text[2000];
    int rc;
    if (cli_test_start("test_vi_cli"))
        return 1;
    rc = cli("validate '%s/cart_pendulum_gc.yaml'", RC_EXAMPLES_DIR);
    RC_CHECK(rc == 0, "validate cart_pendulum_gc: exit %d: %s", rc, g_stderr);
    rc = cli("validate '%s/double_pendulum_impacts.yaml'", RC_EXAMPLES_DIR);
    RC_CHECK(rc == 0, "validate double_pendulum_impacts: exit %d: %s", rc,
             g_stderr);

    snprintf(out, sizeof out, "%s/cart", g_dir);
    rc = cli("run '%s/cart_pendulum_gc.yaml' --out '%s' --quiet",
             RC_EXAMPLES_DIR, out);
    RC_CHECK(rc == 0, "run cart_pendulum_gc: exit %d: %s", rc, g_stderr);
    /* seed 001 §5.2: three impacts from Xi(3.2) at h = 1e-2 in 5 s */
    RC_CHECK(last_field(out, "impacts") == 3.0, "impacts %g",
             last_field(out, "impacts"));
    RC_CHECK(isfinite(last_field(out, "discrete_energy")) &&
                 isfinite(last_field(out, "modified_energy")) &&
                 fabs(last_field(out, "time") - 5.0) < 1e-9,
             "cart_pendulum_gc: energy columns or final time missing");

    snprintf(out, sizeof out, "%s/dp", g_dir);
    rc = cli("run '%s/double_pendulum_impacts.yaml' --out '%s' --quiet",
             RC_EXAMPLES_DIR, out);
    RC_CHECK(rc == 0, "run double_pendulum_impacts: exit %d: %s", rc,
             g_stderr);
    RC_CHECK(last_field(out, "impacts") >= 1.0, "double pendulum: no impact");

    snprintf(out, sizeof out, "%s/cmp", g_dir);
    rc = cli("compare '%s/cart_pendulum_gc.yaml' --methods cva,vci,mcva-a,"
             "mcva-c --out '%s' --quiet",
             RC_EXAMPLES_DIR, out);
    RC_CHECK(rc == 0 && exists(out, "compare.csv") && exists(out, "mcva-c"),
             "compare: exit %d: %s", rc, g_stderr);

    /* bad input: exit 2, file:line:column and the field */
    snprintf(bad, sizeof bad, "%s/bad.yaml", g_dir);
    snprintf(text, sizeof text,
             "model:\n  kind: lagrangian\n  coordinates: [x]\n"
             "  mass_matrix: [[\"1\"]]\n  potential: \"x^2 + kk\"\n"
             "  initial: {q: [0], qdot: [1]}\n"
             "integrator: {method: cva, dt: 0.01, duration: 1}\n");
    write_text(bad, text);
    rc = cli("run '%s' --out '%s/o1'", bad, g_dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "bad.yaml:5:") &&
                 strstr(g_stderr, "model.potential") &&
                 strstr(g_stderr, "kk"),
             "unknown name: exit %d: %s", rc, g_stderr);
    snprintf(text, sizeof text,
             "model:\n  kind: lagrangian\n  builtin: triple_pendulum\n"
             "  initial: {q: [0, 0], qdot: [1, 0]}\n"
             "integrator: {method: cva, dt: 0.01, duration: 1}\n");
    write_text(bad, text);
    rc = cli("validate '%s'", bad);
    RC_CHECK(rc == 2 && strstr(g_stderr, "bad.yaml:3:") &&
                 strstr(g_stderr, "model.builtin"),
             "unknown builtin: exit %d: %s", rc, g_stderr);
    rc = cli("run '%s/cart_pendulum_gc.yaml' --set integrator.method=svc "
             "--out '%s/o2'",
             RC_EXAMPLES_DIR, g_dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "integrator.method") &&
                 strstr(g_stderr, "does not handle impacts"),
             "svc with a ground: exit %d: %s", rc, g_stderr);
    return cli_test_finish("test_vi_cli");
}

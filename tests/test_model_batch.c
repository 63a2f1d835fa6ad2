/* Ensembles of built-in Lagrangian models (seed 001) through the batch
 * engine's member body (src/host/batch_vi.c, src/kernels/rc_vi_member.h:
 * the function a GPU thread runs, here on the CPU) against the
 * per-member engine (--per-member: each member its own model and
 * method, stepped by vi.c): members.csv byte for byte, at 1 and 2
 * threads, for a cart-pendulum sweep over the initial map Xi(beta), a
 * parameter and the method, one whose member fails at once (re-run
 * alone and worded), and a double pendulum over an initial coordinate and the
 * wall; ensemble.json names the engine that ran.  A model given by
 * expressions runs per member and says why.
 *
 * With ensemble.reference (the seed's L2 error against a finer run) the
 * references are members of the batch engine too: a sweep over beta,
 * the method and the step whose members share one reference per beta
 * (recorded at every reference step, an output grid whose last row is
 * not on `every`), and one whose members each run their own (no step or
 * method rule; one member fails at once): members.csv byte for byte,
 * every ok member's l2_error finite and positive.  A reference method
 * the model cannot run is refused at load (exit 2, the field named). */
#define _POSIX_C_SOURCE 200809L
#include "rc_cli_test.h"

static const char *const k_cart =
    "name: cp_batch\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  builtin: cart_pendulum\n"
    "  initial: {xi: 3.2}\n"
    "integrator: {method: cva, dt: 0.01, duration: 1.5}\n"
    "output: {every: 5}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  vary:\n"
    "    - {path: model.initial.xi, values: [2.6, 4.4]}\n"
    "    - {path: model.parameters.m2, values: [0.2, 0.5]}\n"
    "    - {path: integrator.method, values: [cva, vci, mcva-a, mcva-c]}\n";

static const char *const k_double =
    "name: dp_batch\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  builtin: double_pendulum\n"
    "  initial: {q: [-1.2, -1.5], qdot: [0, 0]}\n"
    "integrator: {method: mcva-c, dt: 0.01, duration: 1.5}\n"
    "output: {every: 3}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  vary:\n"
    "    - {path: \"model.initial.q[0]\", linspace: [-1.6, -0.8], count: 3}\n"
    "    - {path: model.parameters.d, values: [0.9, 1.2]}\n"
    "    - {path: integrator.method, values: [cva, mcva-a]}\n";

/* xi = 0: the cart starts on the ground, moving into it: the member
 * fails at once (test_model_ensemble) and is re-run alone, to be worded;
 * CVA, whose failure is found fast. */
static const char *const k_fail =
    "name: cp_fail\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  builtin: cart_pendulum\n"
    "  initial: {xi: 3.2}\n"
    "integrator: {method: cva, dt: 0.01, duration: 1}\n"
    "output: {every: 5}\n"
    "ensemble:\n"
    "  members: 3\n"
    "  vary:\n"
    "    - {path: model.initial.xi, values: [0, 3.2, 0.7]}\n";

/* The smooth methods on the double pendulum without its wall. */
static const char *const k_smooth =
    "name: dp_smooth\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  builtin: double_pendulum\n"
    "  constraints: []\n"
    "  initial: {q: [0.5, -0.3], qdot: [0, 1]}\n"
    "integrator: {method: svc, dt: 0.02, duration: 2}\n"
    "output: {every: 4}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  vary:\n"
    "    - {path: model.parameters.m2, values: [0.5, 2]}\n"
    "    - {path: integrator.method, values: [sva, svb, svc, "
    "vi-midpoint]}\n";

/* Shared references (slots by beta): 2 x 4 x 2 members, 2 references at
 * dt 0.001 and CVA; every 7 steps of 50 and 150: the last row is off the
 * grid. */
static const char *const k_ref_shared =
    "name: cp_ref\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  builtin: cart_pendulum\n"
    "  initial: {xi: 3.2}\n"
    "integrator: {method: cva, dt: 0.01, duration: 1.5}\n"
    "output: {every: 7}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  reference: {dt: 0.001, method: cva}\n"
    "  vary:\n"
    "    - {path: model.initial.xi, values: [2.6, 4.4]}\n"
    "    - {path: integrator.method, values: [cva, vci, mcva-a, mcva-c]}\n"
    "    - {path: integrator.dt, values: [0.03, 0.01]}\n";

/* Each member its own reference (the scenario's method, VCI, at dt
 * 0.002); xi = 0 fails at once. */
static const char *const k_ref_own =
    "name: cp_ref_own\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  builtin: cart_pendulum\n"
    "  initial: {xi: 3.2}\n"
    "integrator: {method: vci, dt: 0.01, duration: 1.5}\n"
    "output: {every: 7}\n"
    "ensemble:\n"
    "  members: 4\n"
    "  reference: {dt: 0.002}\n"
    "  vary:\n"
    "    - {path: model.initial.xi, values: [2.6, 4.4, 0, 3.0]}\n";

static const char *const k_expr =
    "name: expr_batch\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  coordinates: [x]\n"
    "  parameters: {k: 1}\n"
    "  mass_matrix: [[\"1\"]]\n"
    "  potential: \"0.5*k*x^2\"\n"
    "  constraints: []\n"
    "  initial: {q: [1], qdot: [0]}\n"
    "integrator: {method: svc, dt: 0.05, duration: 1}\n"
    "ensemble:\n"
    "  members: 2\n"
    "  vary:\n"
    "    - {path: model.parameters.k, values: [1, 2]}\n";

/* engine.<key> of DIR/ensemble.json, or "" */
static void engine_field(const char *dir, const char *key, char *out,
                         size_t size)
{
    cJSON *root = json_file(dir, "ensemble.json"), *eng, *v;
    out[0] = '\0';
    if (!root)
        return;
    eng = cJSON_GetObjectItemCaseSensitive(root, "engine");
    v = eng ? cJSON_GetObjectItemCaseSensitive(eng, key) : NULL;
    if (cJSON_IsString(v))
        snprintf(out, size, "%s", v->valuestring);
    else if (cJSON_IsNumber(v))
        snprintf(out, size, "%.17g", v->valuedouble);
    cJSON_Delete(root);
}

/* The scenario through both engines at `threads`; members.csv equal;
 * the batch run's engine is the member body. */
static void both(const char *name, const char *text, int threads,
                 int want_rerun)
{
    char path[700], bdir[700], pdir[700], a[800], b[800], buf[300];
    int rc;
    snprintf(path, sizeof path, "%s/%s.yaml", g_dir, name);
    write_text(path, text);
    snprintf(bdir, sizeof bdir, "%s/%s_batch_%d", g_dir, name, threads);
    snprintf(pdir, sizeof pdir, "%s/%s_pm_%d", g_dir, name, threads);
    rc = cli("run '%s' --threads %d --out '%s' --quiet", path, threads, bdir);
    RC_CHECK(rc == 0, "%s batch: exit %d, %s", name, rc, g_stderr);
    rc = cli("run '%s' --threads %d --per-member --out '%s' --quiet", path,
             threads, pdir);
    RC_CHECK(rc == 0, "%s per-member: exit %d, %s", name, rc, g_stderr);
    snprintf(a, sizeof a, "%s/members.csv", bdir);
    snprintf(b, sizeof b, "%s/members.csv", pdir);
    RC_CHECK(same_file(a, b), "%s at %d threads: members.csv differ (%s, %s)",
             name, threads, a, b);
    engine_field(bdir, "name", buf, sizeof buf);
    RC_CHECK(!strcmp(buf, "batch"), "%s: engine.name %s, want batch", name,
             buf);
    engine_field(bdir, "step", buf, sizeof buf);
    RC_CHECK(!strcmp(buf, "vi-member"), "%s: engine.step %s, want vi-member",
             name, buf);
    engine_field(bdir, "members_rerun_alone", buf, sizeof buf);
    RC_CHECK(want_rerun ? strtod(buf, NULL) >= 1.0 : strtod(buf, NULL) == 0.0,
             "%s: members_rerun_alone %s (want %s)", name, buf,
             want_rerun ? ">= 1: a failed member is worded alone" : "0");
    engine_field(pdir, "name", buf, sizeof buf);
    RC_CHECK(!strcmp(buf, "per-member"), "%s --per-member: engine.name %s",
             name, buf);
}

/* Every ok member of g_dir/SUB/members.csv has a finite, positive
 * l2_error (its last column), and there are want_ok of them. */
static void l2_finite(const char *what, const char *sub, int want_ok)
{
    char path[800], *text, *line, *save = NULL;
    int ok = 0, header = 1;
    snprintf(path, sizeof path, "%s/%s/members.csv", g_dir, sub);
    text = slurp(path);
    RC_CHECK(text != NULL, "%s: no %s", what, path);
    if (!text)
        return;
    for (line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        const char *last = strrchr(line, ',');
        if (header) {
            RC_CHECK(last && !strcmp(last, ",l2_error"),
                     "%s: members.csv's last column is not l2_error: %s",
                     what, line);
            header = 0;
            continue;
        }
        if (strstr(line, ",ok,")) {
            double l2 = last ? strtod(last + 1, NULL) : NAN;
            ++ok;
            RC_CHECK(isfinite(l2) && l2 > 0.0, "%s: l2_error %s in %s", what,
                     last ? last + 1 : "(none)", line);
        }
    }
    RC_CHECK(ok == want_ok, "%s: %d ok members, want %d", what, ok, want_ok);
    free(text);
}

/* A reference method that cannot run the model (a smooth method and the
 * cart-pendulum's ground): exit 2, naming ensemble.reference.method. */
static void reference_refused(void)
{
    char path[700], dir[700];
    char *text = strdup(k_ref_shared), *at = strstr(text, "method: cva}");
    int rc;
    memcpy(at, "method: svc}", 12);
    snprintf(path, sizeof path, "%s/ref_bad.yaml", g_dir);
    write_text(path, text);
    free(text);
    snprintf(dir, sizeof dir, "%s/ref_bad_out", g_dir);
    rc = cli("run '%s' --out '%s' --quiet", path, dir);
    RC_CHECK(rc == 2, "smooth reference method: exit %d, want 2", rc);
    RC_CHECK(strstr(g_stderr, "ensemble.reference.method") != NULL,
             "smooth reference method: stderr does not name the field: %s",
             g_stderr);
}

static void expressions(void)
{
    char path[700], dir[700], buf[300];
    int rc;
    snprintf(path, sizeof path, "%s/expr.yaml", g_dir);
    write_text(path, k_expr);
    snprintf(dir, sizeof dir, "%s/expr_out", g_dir);
    rc = cli("run '%s' --threads 2 --out '%s' --quiet", path, dir);
    RC_CHECK(rc == 0, "expressions: exit %d, %s", rc, g_stderr);
    engine_field(dir, "name", buf, sizeof buf);
    RC_CHECK(!strcmp(buf, "per-member"), "expressions: engine.name %s", buf);
    engine_field(dir, "why", buf, sizeof buf);
    RC_CHECK(strstr(buf, "expressions") != NULL,
             "expressions: engine.why '%s' does not say why", buf);
}

int main(void)
{
    if (cli_test_start("test_model_batch"))
        return 1;
    both("cart", k_cart, 1, 0);
    both("cart", k_cart, 2, 0);
    both("fail", k_fail, 2, 1);
    both("double", k_double, 2, 0);
    both("smooth", k_smooth, 1, 0);
    both("ref", k_ref_shared, 1, 0);
    both("ref", k_ref_shared, 2, 0);
    l2_finite("ref", "ref_batch_2", 16);
    both("refown", k_ref_own, 1, 1);
    both("refown", k_ref_own, 2, 1);
    l2_finite("refown", "refown_batch_1", 3);
    reference_refused();
    expressions();
    return cli_test_finish("test_model_batch");
}

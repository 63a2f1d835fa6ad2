/* The expression route (M, V, g as formulas differentiated by libmatheval)
 * against the built-in bodies of src/kernels/rc_lagrangian.h, on both
 * built-in models: the jets agree to round-off at random configurations,
 * and whole runs (a smooth VI and the impact methods) give the same
 * trajectories to round-off.  Also: bad formulas are refused at load
 * with the field named. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rc_vi_test.h"

static const char *cart_builtin =
    "builtin: cart_pendulum\n"
    "initial: {q: [3.2, 0.0], qdot: [0.0, 2.924]}\n";
static const char *cart_expr =
    "coordinates: [y, theta]\n"
    "parameters: {m1: 1, m2: 0.2, L: 2, g: 10}\n"
    "mass_matrix: [[\"m1+m2\", \"m2*L*sin(theta)\"], "
    "[\"m2*L*sin(theta)\", \"m2*L^2\"]]\n"
    "potential: \"(m1+m2)*g*y - m2*g*L*cos(theta)\"\n"
    "constraints: [\"y\"]\n"
    "initial: {q: [3.2, 0.0], qdot: [0.0, 2.924]}\n";
static const char *dp_builtin =
    "builtin: double_pendulum\n"
    "initial: {q: [-1.0, -1.3], qdot: [0.5, 0.0]}\n";
static const char *dp_expr =
    "coordinates: [theta1, theta2]\n"
    "parameters: {m1: 1, m2: 1, l1: 1, l2: 1, g: 10, d: 1.2}\n"
    "mass_matrix: [[\"(m1+m2)*l1^2\", \"m2*l1*l2*cos(theta1-theta2)\"], "
    "[\"m2*l1*l2*cos(theta1-theta2)\", \"m2*l2^2\"]]\n"
    "potential: \"-(m1+m2)*g*l1*cos(theta1) - m2*g*l2*cos(theta2)\"\n"
    "constraints: [\"d - l1*sin(theta1) - l2*sin(theta2)\"]\n"
    "initial: {q: [-1.0, -1.3], qdot: [0.5, 0.0]}\n";

/* every entry of the jet, relative to the largest of its kind */
static void compare_jets(const rc_model *a, const rc_model *b,
                         const char *what)
{
    unsigned long long seed = 16;
    int t;
    double worst = 0.0;
    static rc_lag_jet ja, jb;
    for (t = 0; t < 50; ++t) {
        double q[2];
        int w;
        q[0] = -3.0 + 6.0 * rc_test_uniform(&seed);
        q[1] = -3.0 + 6.0 * rc_test_uniform(&seed);
        rc_lag_eval(a, q, 2, &ja);
        rc_lag_eval(b, q, 2, &jb);
        worst = fmax(worst, rc_test_max_rel(4, jb.M, ja.M, 1.0, &w));
        worst = fmax(worst, rc_test_max_rel(8, jb.dM, ja.dM, 1.0, &w));
        worst = fmax(worst, rc_test_max_rel(16, jb.d2M, ja.d2M, 1.0, &w));
        worst = fmax(worst, rc_test_max_rel(1, &jb.V, &ja.V, 1.0, &w));
        worst = fmax(worst, rc_test_max_rel(2, jb.dV, ja.dV, 1.0, &w));
        worst = fmax(worst, rc_test_max_rel(4, jb.d2V, ja.d2V, 1.0, &w));
        worst = fmax(worst, rc_test_max_rel(1, jb.g, ja.g, 1.0, &w));
        worst = fmax(worst, rc_test_max_rel(2, jb.dg, ja.dg, 1.0, &w));
    }
    printf("%-16s jets: worst relative difference %.2e\n", what, worst);
    /* the same closed forms, rounded in a different order: a few ulps */
    RC_CHECK(worst <= 1e-14, "%s: jets differ by %g", what, worst);
}

static void compare_runs(const rc_model *a, const rc_model *b,
                         const rc_model_method *meth, const char *what)
{
    void *wa = vi_method(meth, a, 0.01), *wb = vi_method(meth, b, 0.01);
    double qa[2], pa[2], qb[2], pb[2], za[4], zb[4], d;
    int w;
    memcpy(qa, a->q0, sizeof qa);
    memcpy(pa, a->p0, sizeof pa);
    memcpy(qb, b->q0, sizeof qb);
    memcpy(pb, b->p0, sizeof pb);
    RC_CHECK(wa && wb && vi_run(meth, wa, 2, qa, pa, 200) == RC_OK &&
                 vi_run(meth, wb, 2, qb, pb, 200) == RC_OK,
             "%s %s ran", what, meth->name);
    memcpy(za, qa, sizeof qa);
    memcpy(za + 2, pa, sizeof pa);
    memcpy(zb, qb, sizeof qb);
    memcpy(zb + 2, pb, sizeof pb);
    d = rc_test_max_rel(4, zb, za, 1.0, &w);
    printf("%-16s %-7s 200 steps, %ld impacts: worst relative difference "
           "%.2e\n",
           what, meth->name, rc_vi_impacts(wa), d);
    /* round-off of the jets (1e-15) carried through 200 Newton solves
     * and the impacts' root finding (to 1e-15 h); the chaotic double
     * pendulum amplifies it over 2 s by at most ~1e3 */
    RC_CHECK(d <= 1e-11, "%s %s: trajectories differ by %g", what,
             meth->name, d);
    RC_CHECK(rc_vi_impacts(wa) == rc_vi_impacts(wb),
             "%s %s: impact counts differ", what, meth->name);
    meth->destroy(wa);
    meth->destroy(wb);
}

static void check_pair(const char *ytext_b, const char *ytext_e,
                       const char *what)
{
    rc_model a, b;
    rc_error err;
    const rc_model_method *meths[3] = {&rc_model_method_cva,
                                       &rc_model_method_vci,
                                       &rc_model_method_mcva_a};
    int k;
    if (vi_model_load(ytext_b, &a, &err) || vi_model_load(ytext_e, &b, &err)) {
        RC_CHECK(0, "%s: load: %s: %s", what, err.field, err.message);
        return;
    }
    compare_jets(&a, &b, what);
    for (k = 0; k < 3; ++k)
        compare_runs(&a, &b, meths[k], what);
    vi_model_free(&a);
    vi_model_free(&b);
}

/* Bad input: refused at load, the field named. */
static void check_refusals(void)
{
    static const struct {
        const char *text, *field, *words;
    } bad[] = {
        {"coordinates: [x]\nmass_matrix: [[\"1\"]]\npotential: \"x^2 + k\"\n"
         "initial: {q: [0], qdot: [1]}\n",
         "model.potential", "unknown name"},
        {"coordinates: [x]\nmass_matrix: [[\"1\"]]\npotential: \"x^2 +\"\n"
         "initial: {q: [0], qdot: [1]}\n",
         "model.potential", ""},
        {"coordinates: [x, y]\nmass_matrix: [[\"1\", \"x\"], [\"0\", \"1\"]]\n"
         "potential: \"0\"\ninitial: {q: [0.5, 0], qdot: [1, 0]}\n",
         "model.mass_matrix[1][0]", "symmetric"},
        {"coordinates: [x]\nmass_matrix: [[\"-1\"]]\npotential: \"0\"\n"
         "initial: {q: [0], qdot: [1]}\n",
         "model.initial.q", "positive definite"},
        {"coordinates: [x]\nmass_matrix: [[\"1\"]]\npotential: \"0\"\n"
         "constraints: [\"x\"]\ninitial: {q: [-1], qdot: [1]}\n",
         "model.initial.q", "violates"},
        {"builtin: cart_pendulum\ninitial: {q: [1, 0]}\n", "model.initial",
         "qdot"},
        {"builtin: triple_pendulum\ninitial: {q: [1, 0], qdot: [0, 0]}\n",
         "model.builtin", "unknown builtin"},
        {"builtin: double_pendulum\ninitial: {xi: 3}\n", "model.initial.xi",
         "cart_pendulum"},
        {"coordinates: [x]\nmass_matrix: [[\"1\"]]\ninitial: {q: [0], qdot: "
         "[1]}\n",
         "model.potential", "missing"},
    };
    int k;
    for (k = 0; k < (int)(sizeof bad / sizeof bad[0]); ++k) {
        rc_model m;
        rc_error err;
        int rc;
        memset(&err, 0, sizeof err);
        rc = vi_model_load(bad[k].text, &m, &err);
        RC_CHECK(rc != 0 && err.status == RC_ERR_PARSE &&
                     !strcmp(err.field, bad[k].field) &&
                     strstr(err.message, bad[k].words) && err.line > 0,
                 "bad model %d: rc %d field '%s' line %d message '%s'", k,
                 rc, err.field, err.line, err.message);
        if (rc == 0)
            vi_model_free(&m);
    }
}

int main(void)
{
    check_pair(cart_builtin, cart_expr, "cart_pendulum");
    check_pair(dp_builtin, dp_expr, "double_pendulum");
    check_refusals();
    return rc_test_finish("test_vi_expr");
}

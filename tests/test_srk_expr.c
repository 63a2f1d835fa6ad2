/* Seed 002 models written as expressions in the scenario, RATTLE for an
 * added holonomic constraint, and the loader's errors.
 *   a. The vehicle given as the Lagrange problem of Prop. 1 (mass,
 *      potential, velocity_constraints) and as a Hamiltonian H(q, p, λ),
 *      and the Heisenberg problem as expressions, follow the built-in
 *      bodies' trajectories to round-off (symbolic derivatives against
 *      the hand-written ones).
 *   b. RATTLE (Prop. 7) with the steering locked, sin(φ − θ) = 0.2, holds
 *      h(q) = 0 and Dh(q)·q̇ = 0 to 1e-12 and the velocity constraints
 *      too; its error falls 4x per halving of Δt (self-convergence).
 *   c. Bad input: every error names the field and a line. */
#include "rc_srk_test.h"

#define IC "  initial: {q: [0.5, 0.2, 0.3, 0.8], p: [0.3, -0.2, 0.4, 0.5]}\n"
#define VPOT "-cos(sqrt((x - L/2*cos(theta))^2 + (y - L/2*sin(theta))^2))"

static const char *VEHICLE = "model:\n"
                             "  kind: index1\n"
                             "  builtin: vehicle\n" IC;

static const char *VEHICLE_LAGRANGE =
    "model:\n"
    "  kind: index1\n"
    "  coordinates: [x, y, theta, phi]\n"
    "  parameters: {L: 0.3}\n"
    "  mass: [1, 1, 1, 1]\n"
    "  potential: \"" VPOT "\"\n"
    "  velocity_constraints:\n"
    "    - [sin(phi), -cos(phi), 0, 0]\n"
    "    - [sin(theta), -cos(theta), L, 0]\n" IC;

static const char *VEHICLE_H =
    "model:\n"
    "  kind: index1\n"
    "  coordinates: [x, y, theta, phi]\n"
    "  parameters: {L: 0.3}\n"
    "  multipliers: [l1, l2]\n"
    "  hamiltonian: \"0.5*((p_x + l1*sin(phi) + l2*sin(theta))^2"
    " + (p_y - l1*cos(phi) - l2*cos(theta))^2 + (p_theta + l2*L)^2"
    " + p_phi^2) " VPOT "\"\n" IC;

#define HIC "  initial: {q: [0, 0, 0], p: [0.1, 0.3, 1], lambda: [1]}\n"
static const char *HEIS = "model:\n"
                          "  kind: index1\n"
                          "  builtin: heisenberg\n" HIC;
static const char *HEIS_EXPR = "model:\n"
                               "  kind: index1\n"
                               "  coordinates: [x, y, z]\n"
                               "  velocity_constraints: [[-y, x, 1]]\n" HIC;

static double traj_diff(const char *ya, const char *yb, const char *meth,
                        double dt, long n)
{
    srk_run a, b;
    double worst = INFINITY;
    long i;
    int k, ok = srk_open(&a, ya, meth, dt) == 0;
    ok = (srk_open(&b, yb, meth, dt) == 0) && ok;
    if (ok) {
        worst = 0.0;
        for (i = 0; i < n && ok; ++i) {
            ok = srk_steps(&a, 1) == 0 && srk_steps(&b, 1) == 0;
            for (k = 0; k < a.m->n; ++k) {
                worst = fmax(worst, fabs(a.s.q[k] - b.s.q[k]));
                worst = fmax(worst, fabs(a.s.p[k] - b.s.p[k]));
            }
            for (k = 0; k < a.m->naux; ++k)
                worst = fmax(worst, fabs(a.s.aux[k] - b.s.aux[k]));
        }
        if (!ok || !isfinite(worst))
            worst = INFINITY;
    }
    srk_close(&a);
    srk_close(&b);
    return worst;
}

/* libmatheval walks a tree per entry of ∇²H: ~1 ms a step on the vehicle;
 * the sanitizer build checks the same over fewer steps */
#ifdef RICOCHET_SANITIZE_BUILD
#define NEXPR 40
#else
#define NEXPR 200
#endif

static void test_expressions(void)
{
    double d;
    /* 200 steps of gauss2 to t = 10: round-off of ~1e-16 per step,
     * amplified by the chaotic flow (Lyapunov time ~ a few units) to
     * well below 1e-10; a wrong derivative gives O(Δt) = 1e-2 */
    d = traj_diff(VEHICLE, VEHICLE_LAGRANGE, "gauss2", 0.05, NEXPR);
    printf("vehicle: built-in vs Lagrange expressions: %.3e\n", d);
    RC_CHECK(d <= 1e-10, "vehicle Lagrange expressions differ by %.3g", d);
    d = traj_diff(VEHICLE, VEHICLE_H, "gauss2", 0.05, NEXPR);
    printf("vehicle: built-in vs hamiltonian expression: %.3e\n", d);
    RC_CHECK(d <= 1e-10, "vehicle hamiltonian expression differs by %.3g",
             d);
    d = traj_diff(HEIS, HEIS_EXPR, "gauss3", 0.1, NEXPR);
    printf("heisenberg: built-in vs expressions: %.3e\n", d);
    RC_CHECK(d <= 1e-10, "heisenberg expressions differ by %.3g", d);
    d = traj_diff(VEHICLE, VEHICLE_LAGRANGE, "rk4", 0.05, NEXPR);
    RC_CHECK(d <= 1e-10, "vehicle rk4 expressions differ by %.3g", d);
}

/* The vehicle in the bowl with its steering locked: sin(φ − θ) = 0.2. */
static const char *LOCKED =
    "model:\n"
    "  kind: index1\n"
    "  builtin: vehicle\n"
    "  holonomic: [\"sin(phi - theta) - 0.2\"]\n"
    "  initial: {q: [0.8, 0.0, 0.0, 0.2013579207903308], "
    "p: [0.4, 0.3, 0.2, 0.1]}\n";

static double locked_constraints(srk_run *r)
{
    double par[4] = {0.3, 1.0, 1.0, 1.0}, g[2][4], qd[4], h, dh;
    int l;
    double e = srk_vehicle_constraint(par, r->s.q, r->s.p, r->s.aux);
    srk_vehicle_g(par, r->s.q, g);
    for (l = 0; l < 4; ++l)
        qd[l] = r->s.p[l] + r->s.aux[0] * g[0][l] + r->s.aux[1] * g[1][l];
    h = sin(r->s.q[3] - r->s.q[2]) - 0.2;
    dh = cos(r->s.q[3] - r->s.q[2]) * (qd[3] - qd[2]);
    e = fmax(e, fmax(fabs(h), fabs(dh)));
    return isfinite(e) ? e : INFINITY;
}

static void test_rattle(void)
{
    srk_run r;
    double worst = 0.0, e[3];
    long i;
    int ok, h;
    rc_error err;
    void *ws = NULL;
    rc_integrator_desc in;
    ok = srk_open(&r, LOCKED, "rattle", 0.05) == 0;
    RC_CHECK(ok, "open rattle");
    if (ok)
        worst = locked_constraints(&r); /* the loader's projection */
    for (i = 0; ok && i < 2000; ++i) {
        ok = srk_steps(&r, 1) == 0;
        worst = fmax(worst, locked_constraints(&r));
    }
    RC_CHECK(ok, "rattle ran");
    printf("rattle: h, Dh.qdot, g.qdot over 2000 steps: %.3e\n", worst);
    /* terms of size ~1: round-off 1e-16; the bound 1e-12 */
    RC_CHECK(worst <= 1e-12, "rattle constraints %.3g", worst);
    /* gauss methods refuse a model with holonomic constraints */
    if (r.m) {
        memset(&err, 0, sizeof err);
        rc_integrator_desc_init(&in);
        in.dt = 0.05;
        RC_CHECK(rc_model_method_gauss2.create(r.m, &in, &ws, &err) ==
                         RC_ERR_PARSE &&
                     strstr(err.message, "rattle"),
                 "gauss2 on a holonomic model: %s", err.message);
        if (ws)
            rc_model_method_gauss2.destroy(ws);
    }
    srk_close(&r);
    /* self-convergence at T = 2: (x_Δt − x_Δt/2) / (x_Δt/2 − x_Δt/4) */
    {
        double x[4][8];
        static const long N[4] = {20, 40, 80, 160};
        for (h = 0; h < 4; ++h) {
            int k;
            ok = srk_open(&r, LOCKED, "rattle", 2.0 / N[h]) == 0 &&
                 srk_steps(&r, N[h]) == 0;
            for (k = 0; k < 4; ++k) {
                x[h][k] = ok ? r.s.q[k] : NAN;
                x[h][4 + k] = ok ? r.s.p[k] : NAN;
            }
            srk_close(&r);
        }
        for (h = 0; h < 3; ++h)
            e[h] = rc_test_max_rel(8, x[h], x[h + 1], 1.0, NULL);
        printf("rattle: successive differences %.3e %.3e %.3e, ratios %.2f "
               "%.2f\n",
               e[0], e[1], e[2], e[0] / e[1], e[1] / e[2]);
        /* order 2: 4 per halving, 15 % as for the Gauss methods */
        RC_CHECK(fabs(e[0] / e[1] / 4.0 - 1.0) <= 0.15, "ratio %.3f",
                 e[0] / e[1]);
        RC_CHECK(fabs(e[1] / e[2] / 4.0 - 1.0) <= 0.15, "ratio %.3f",
                 e[1] / e[2]);
    }
}

static void bad(const char *yaml, const char *field, const char *what)
{
    rc_error err;
    rc_model *m;
    memset(&err, 0, sizeof err);
    m = srk_model(yaml, &err);
    RC_CHECK(m == NULL, "%s: accepted", what);
    RC_CHECK(!strcmp(err.field, field) && err.line > 0,
             "%s: field '%s' line %d (want '%s'): %s", what, err.field,
             err.line, field, err.message);
    if (m)
        rc_model_free_(m);
}

static void test_errors(void)
{
    bad("model:\n  kind: index1\n  builtin: bicycle\n"
        "  initial: {q: [0,0,0], p: [0,0,0]}\n",
        "model.builtin", "unknown builtin");
    bad("model:\n  kind: index1\n  builtin: heisenberg\n"
        "  initial: {q: [0,0], p: [0,0,0]}\n",
        "model.initial.q", "short q");
    bad("model:\n  kind: index1\n  builtin: heisenberg\n",
        "model.initial", "no initial");
    bad("model:\n  kind: index1\n  coordinates: [x, y, z]\n"
        "  velocity_constraints: [[-y, xx, 1]]\n" HIC,
        "model.velocity_constraints[0][1]", "unknown name");
    bad("model:\n  kind: index1\n  coordinates: [x, y, z]\n"
        "  hamiltonian: \"p_x^2\"\n" HIC,
        "model.multipliers", "hamiltonian without multipliers");
    bad("model:\n  kind: index1\n  coordinates: [x, y, z]\n"
        "  velocity_constraints: [[-y, x, 1]]\n"
        "  potential: \"p_x\"\n" HIC,
        "model.potential", "potential of p");
    bad("model:\n  kind: index1\n  builtin: heisenberg\n"
        "  mass: [1, 1, 1]\n" HIC,
        "model.mass", "mass with a builtin");
    bad("model:\n  kind: index1\n  builtin: vehicle\n"
        "  holonomic: [\"x - 1\"]\n"
        "  initial: {q: [0, 0, 0, 0], p: [0, 0, 0, 0]}\n",
        "model.initial.q", "h(q0) != 0");
    bad("model:\n  kind: index1\n  builtin: vehicle\n"
        "  holonomic: [\"x - p_x\"]\n"
        "  initial: {q: [0, 0, 0, 0], p: [0, 0, 0, 0]}\n",
        "model.holonomic[0]", "h of p");
    bad("model:\n  kind: index1\n  builtin: vehicle\n"
        "  parameters: {L: 0}\n"
        "  initial: {q: [0, 0, 0, 0], p: [0, 0, 0, 0]}\n",
        "model.parameters", "L = 0");
    /* H_λλ = 0: λ appears linearly, not index 1 */
    bad("model:\n  kind: index1\n  coordinates: [x, y]\n"
        "  multipliers: [l]\n  hamiltonian: \"0.5*(p_x^2+p_y^2) + l*x\"\n"
        "  initial: {q: [0, 0], p: [1, 0]}\n",
        "model.initial", "not index 1");
}

int main(void)
{
    test_expressions();
    test_rattle();
    test_errors();
    return rc_test_finish("test_srk_expr");
}

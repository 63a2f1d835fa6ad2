/* Seed 002 models written as expressions in the scenario, RATTLE for an
 * added holonomic constraint, and the loader's errors.
 *   a. The vehicle given as the Lagrange problem of Prop. 1 (mass,
 *      potential, velocity_constraints) and as a Hamiltonian H(q, p, λ),
 *      and the Heisenberg problem as expressions, follow the built-in
 *      bodies' trajectories to round-off (symbolic derivatives against
 *      the hand-written ones).
 *   b. RATTLE (Prop. 7) with the steering linked, φ = θ + 0.5 sin θ, holds
 *      h(q) = 0 and Dh(q)·q̇ = 0 to 1e-12 and the velocity constraints
 *      too; its error falls 4x per halving of Δt (self-convergence); one
 *      step preserves ω = dq ∧ dp on the tangent space of its constraint
 *      manifold to 1e-9.
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
#define NEXPR 100
#endif

static void test_expressions(void)
{
    double d;
    /* 100 steps of gauss2 to t = 5: round-off of ~1e-16 per step,
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

/* The vehicle in the bowl with its steering linked to its heading,
 * h = φ − θ − 0.5 sin θ = 0: nonlinear (Dh depends on θ) and never
 * degenerate (Dh has a φ component, g_1 and g_2 none). */
static const char *LINKAGE =
    "model:\n"
    "  kind: index1\n"
    "  builtin: vehicle\n"
    "  holonomic: [\"phi - theta - 0.5*sin(theta)\"]\n"
    "  initial: {q: [0.8, 0.0, 0.3, 0.44776010333066973], "
    "p: [0.4, 0.3, 0.2, 0.1]}\n";

static double linkage_constraints(srk_run *r)
{
    double par[4] = {0.3, 1.0, 1.0, 1.0}, g[2][4], qd[4], h, dh;
    int l;
    double e = srk_vehicle_constraint(par, r->s.q, r->s.p, r->s.aux);
    srk_vehicle_g(par, r->s.q, g);
    for (l = 0; l < 4; ++l)
        qd[l] = r->s.p[l] + r->s.aux[0] * g[0][l] + r->s.aux[1] * g[1][l];
    h = r->s.q[3] - r->s.q[2] - 0.5 * sin(r->s.q[2]);
    dh = qd[3] - (1.0 + 0.5 * cos(r->s.q[2])) * qd[2];
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
    ok = srk_open(&r, LINKAGE, "rattle", 0.05) == 0;
    RC_CHECK(ok, "open rattle");
    if (ok)
        worst = linkage_constraints(&r); /* the loader's projection */
    for (i = 0; ok && i < 2000; ++i) {
        ok = srk_steps(&r, 1) == 0;
        worst = fmax(worst, linkage_constraints(&r));
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
            ok = srk_open(&r, LINKAGE, "rattle", 2.0 / N[h]) == 0 &&
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

/* Symplecticity of RATTLE on its constraint manifold (Prop. 7): for a
 * basis u_1..u_6 of the tangent space at z0 = (q0, p0) of
 * {h(q) = 0, Dh(q)·q̇(q, p) = 0} ⊂ R⁸, ω(Φu_i, Φu_j) = ω(u_i, u_j) with
 * ω(a, b) = a_qᵀb_p − a_pᵀb_q and Φu by central differences of the step. */
static double linkage_constraint_fn(srk_run *r, rc_i1_ev *ev, const double *z,
                                   double *c)
{
    double q[4], p[4], lam[2], g[2][4], qd[4], par[4] = {0.3, 1, 1, 1};
    int l;
    memcpy(q, z, sizeof q);
    memcpy(p, z + 4, sizeof p);
    memcpy(lam, r->m->aux0, sizeof lam);
    if (rc_i1_ev_solve_lambda(ev, q, p, lam, 1e-15, 50) < 0)
        return -1;
    srk_vehicle_g(par, q, g);
    for (l = 0; l < 4; ++l)
        qd[l] = p[l] + lam[0] * g[0][l] + lam[1] * g[1][l];
    c[0] = q[3] - q[2] - 0.5 * sin(q[2]);
    c[1] = qd[3] - (1.0 + 0.5 * cos(q[2])) * qd[2];
    return 0;
}

static void test_rattle_symplectic(void)
{
    srk_run r;
    rc_i1_ev *ev = NULL;
    rc_error err;
    double z0[8], C[2][8], B[8][8], U[6][8], PU[6][8], worst = 0.0;
    double eps = 1e-5;
    int a, b, i, nb = 0, sg;
    if (srk_open(&r, LINKAGE, "rattle", 0.1) ||
        rc_i1_ev_create(r.m, &ev, &err) != RC_OK) {
        RC_CHECK(0, "open rattle");
        srk_close(&r);
        return;
    }
    memcpy(z0, r.s.q, 4 * sizeof(double));
    memcpy(z0 + 4, r.s.p, 4 * sizeof(double));
    /* C = ∂c/∂z by central differences (step 1e-6: error ~1e-12) */
    for (b = 0; b < 8; ++b) {
        double zp[8], zm[8], cp[2], cm[2];
        memcpy(zp, z0, sizeof zp);
        memcpy(zm, z0, sizeof zm);
        zp[b] += 1e-6;
        zm[b] -= 1e-6;
        linkage_constraint_fn(&r, ev, zp, cp);
        linkage_constraint_fn(&r, ev, zm, cm);
        for (a = 0; a < 2; ++a)
            C[a][b] = (cp[a] - cm[a]) / 2e-6;
    }
    /* orthonormal rows of C, then the unit vectors with them projected
     * out and orthonormalized: a basis of the tangent space */
    for (a = 0; a < 2; ++a) {
        double nrm = 0.0;
        for (i = 0; i < a; ++i) {
            double d = 0.0;
            for (b = 0; b < 8; ++b)
                d += C[a][b] * B[i][b];
            for (b = 0; b < 8; ++b)
                C[a][b] -= d * B[i][b];
        }
        for (b = 0; b < 8; ++b)
            nrm += C[a][b] * C[a][b];
        for (b = 0; b < 8; ++b)
            B[a][b] = C[a][b] / sqrt(nrm);
    }
    for (i = 0; i < 8 && nb < 6; ++i) {
        double v[8], nrm = 0.0;
        int k;
        for (b = 0; b < 8; ++b)
            v[b] = b == i ? 1.0 : 0.0;
        for (k = 0; k < 2 + nb; ++k) {
            const double *w = k < 2 ? B[k] : U[k - 2];
            double d = 0.0;
            for (b = 0; b < 8; ++b)
                d += v[b] * w[b];
            for (b = 0; b < 8; ++b)
                v[b] -= d * w[b];
        }
        for (b = 0; b < 8; ++b)
            nrm += v[b] * v[b];
        if (nrm < 1e-6)
            continue;
        for (b = 0; b < 8; ++b)
            U[nb][b] = v[b] / sqrt(nrm);
        ++nb;
    }
    RC_CHECK(nb == 6, "tangent basis of %d vectors", nb);
    for (i = 0; i < nb; ++i) {
        double out[2][8];
        for (sg = 0; sg < 2; ++sg) {
            for (b = 0; b < 4; ++b) {
                r.s.q[b] = z0[b] + (sg ? -eps : eps) * U[i][b];
                r.s.p[b] = z0[4 + b] + (sg ? -eps : eps) * U[i][4 + b];
            }
            memcpy(r.s.aux, r.m->aux0, 2 * sizeof(double));
            if (srk_steps(&r, 1)) {
                worst = INFINITY;
                break;
            }
            memcpy(out[sg], r.s.q, 4 * sizeof(double));
            memcpy(out[sg] + 4, r.s.p, 4 * sizeof(double));
        }
        for (b = 0; b < 8; ++b)
            PU[i][b] = (out[0][b] - out[1][b]) / (2 * eps);
    }
    for (i = 0; i < nb; ++i)
        for (a = 0; a < nb; ++a) {
            double w0 = 0.0, w1 = 0.0;
            for (b = 0; b < 4; ++b) {
                w0 += U[i][b] * U[a][4 + b] - U[i][4 + b] * U[a][b];
                w1 += PU[i][b] * PU[a][4 + b] - PU[i][4 + b] * PU[a][b];
            }
            worst = fmax(worst, fabs(w1 - w0));
        }
    printf("rattle: max |omega(Phi u, Phi v) - omega(u, v)| on the tangent "
           "space = %.2e\n",
           worst);
    /* as for the Gauss methods: ε = 1e-5 gives ~1e-10 truncation and
     * ~1e-11 round-off; an off-manifold start costs O(ε²) in h, which
     * the central difference cancels.  Kicking along Dh(q1)ᵀ instead of
     * Dh(q0)ᵀ (SHAKE-like, not symplectic) measured 1e-4 here */
    RC_CHECK(worst <= 1e-9, "rattle symplectic defect %.3g", worst);
    rc_i1_ev_free(ev);
    srk_close(&r);
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
    test_rattle_symplectic();
    test_errors();
    return rc_test_finish("test_srk_expr");
}

/* Symplectic Runge–Kutta methods for index-1 constraints (seed 002:
 * McLachlan, Modin, Verdier, Wilkins, "Symplectic integrators for index
 * one constraints", 2013), on the built-in vehicle (§5) and Heisenberg
 * problem (§6).
 *   a. The bodies' H_p and −H_q at λ̃ equal the seed's (8)–(10) written
 *      independently in rc_srk_test.h, and their ∇H and ∇²H equal central
 *      differences of H and ∇H.
 *   b. g_i(q)·q̇ = 0 (q̇ by the Legendre transform) to 1e-12 at every
 *      stage and endpoint of gauss1/2/3 (Cor. 5).
 *   c. Order: the error at T = 2 against an independent fine reference
 *      falls by 2^(2s) per halving of Δt, within 15 % (Prop. 4).
 *   d. Symplecticity on the constraint manifold: the Jacobian Φ of one
 *      step in the coordinates (q, p) of the manifold has ΦᵀJΦ = J to
 *      1e-9; the RK4 baseline misses it (the test can fail).
 *   e. Heisenberg: p_z (translation in z) and L_z = x p_y − y p_x
 *      (rotation about z) are conserved by gauss1/2/3 to round-off,
 *      L_z is not by RK4; H stays within its first stretch's band.
 *   f. Newton's failure is reported (status and message) and leaves the
 *      state of the last completed step; no hang. */
#include "rc_srk_test.h"

static const double VPAR[4] = {0.3, 1.0, 1.0, 1.0}; /* built-in defaults */

/* In the bowl, started away from the symmetric states (both wheels off
 * the axes, turning). */
static const char *VEHICLE =
    "model:\n"
    "  kind: index1\n"
    "  builtin: vehicle\n"
    "  initial: {q: [0.5, 0.2, 0.3, 0.8], p: [0.3, -0.2, 0.4, 0.5]}\n";

static const char *HEIS =
    "model:\n"
    "  kind: index1\n"
    "  builtin: heisenberg\n"
    "  initial: {q: [0, 0, 0], p: [0.1, 0.3, 1], lambda: [1]}\n";

static void test_bodies(void)
{
    srk_run r;
    rc_i1_ev *ev = NULL;
    rc_error err;
    unsigned long long seed = 17;
    int trial, a, b;
    /* a1: against (8)–(10), at λ̃ */
    RC_CHECK(srk_open(&r, VEHICLE, "gauss1", 0.1) == 0, "open vehicle");
    if (!r.m)
        return;
    RC_CHECK(rc_i1_ev_create(r.m, &ev, &err) == RC_OK, "evaluator");
    for (trial = 0; trial < 20 && ev; ++trial) {
        double q[4], p[4], lam[2] = {0, 0}, lref[2], qd[4], pd[4];
        double grad[10], hess[100], Hp[10], Hm[10], worst = 0.0, wh = 0.0;
        for (a = 0; a < 4; ++a) {
            q[a] = 4.0 * rc_test_uniform(&seed) - 2.0;
            p[a] = 2.0 * rc_test_uniform(&seed) - 1.0;
        }
        srk_vehicle_rhs(VPAR, q, p, qd, pd, lref);
        RC_CHECK(rc_i1_ev_solve_lambda(ev, q, p, lam, 1e-15, 50) > 0,
                 "lambda solve");
        rc_i1_ev_hamiltonian(ev, q, p, lam, NULL, grad, hess, NULL, NULL);
        for (a = 0; a < 4; ++a) {
            worst = fmax(worst, fabs(grad[4 + a] - qd[a]));
            worst = fmax(worst, fabs(-grad[a] - pd[a]));
        }
        for (a = 0; a < 2; ++a)
            worst = fmax(worst, fabs(lam[a] - lref[a]));
        /* terms of size ~1-10 summed in different orders: 1e-13 is a
         * few hundred ulps, far below any formula error */
        RC_CHECK(worst <= 1e-13, "trial %d: body vs seed (8)-(10): %.3g",
                 trial, worst);
        /* a2: ∇H, ∇²H by central differences, step 1e-5: truncation
         * ~1e-10·|H'''|, round-off ~1e-16/1e-5; 1e-7 relative to the
         * entry's size separates a wrong term (O(1)) from noise */
        for (a = 0; a < 10; ++a) {
            double z[10], zp[10], hp, hm, e = 1e-5;
            for (b = 0; b < 4; ++b) {
                z[b] = q[b];
                z[4 + b] = p[b];
            }
            z[8] = lam[0] + 0.3;
            z[9] = lam[1] - 0.2;
            rc_i1_ev_hamiltonian(ev, z, z + 4, z + 8, NULL, grad, hess, NULL,
                                 NULL);
            memcpy(zp, z, sizeof z);
            zp[a] += e;
            rc_i1_ev_hamiltonian(ev, zp, zp + 4, zp + 8, &hp, Hp, NULL, NULL,
                                 NULL);
            zp[a] -= 2 * e;
            rc_i1_ev_hamiltonian(ev, zp, zp + 4, zp + 8, &hm, Hm, NULL, NULL,
                                 NULL);
            wh = fmax(wh, fabs((hp - hm) / (2 * e) - grad[a]) /
                              fmax(1.0, fabs(grad[a])));
            for (b = 0; b < 10; ++b)
                wh = fmax(wh, fabs((Hp[b] - Hm[b]) / (2 * e) -
                                   hess[b * 10 + a]) /
                                  fmax(1.0, fabs(hess[b * 10 + a])));
        }
        RC_CHECK(wh <= 1e-7, "trial %d: derivatives vs differences: %.3g",
                 trial, wh);
    }
    rc_i1_ev_free(ev);
    ev = NULL;
    srk_close(&r);
    /* Heisenberg: (30), (31) and λ = −g·p/g·g */
    RC_CHECK(srk_open(&r, HEIS, "gauss1", 0.1) == 0, "open heisenberg");
    if (!r.m)
        return;
    RC_CHECK(rc_i1_ev_create(r.m, &ev, &err) == RC_OK, "evaluator");
    /* the seed prints λ = 1 for this state, from Benito & de Diego's
     * sign convention; with Prop. 1's H, ż = p_z + λ = 0 gives λ = −1 */
    RC_CHECK(fabs(r.m->aux0[0] + 1.0) <= 1e-15, "initial lambda %.17g",
             r.m->aux0[0]);
    for (trial = 0; trial < 20 && ev; ++trial) {
        double q[3], p[3], lam[1] = {0}, g[3], grad[7], worst = 0.0, gg, gp;
        double qd[3];
        for (a = 0; a < 3; ++a) {
            q[a] = 4.0 * rc_test_uniform(&seed) - 2.0;
            p[a] = 2.0 * rc_test_uniform(&seed) - 1.0;
        }
        g[0] = -q[1];
        g[1] = q[0];
        g[2] = 1.0;
        gg = g[0] * g[0] + g[1] * g[1] + 1.0;
        gp = g[0] * p[0] + g[1] * p[1] + p[2];
        RC_CHECK(rc_i1_ev_solve_lambda(ev, q, p, lam, 1e-15, 50) > 0,
                 "lambda");
        worst = fabs(lam[0] + gp / gg);
        rc_i1_ev_hamiltonian(ev, q, p, lam, NULL, grad, NULL, NULL, NULL);
        for (a = 0; a < 3; ++a) {
            qd[a] = p[a] + lam[0] * g[a];
            worst = fmax(worst, fabs(grad[3 + a] - qd[a]));
        }
        /* (31): ṗ = −λ [[0,1,0],[−1,0,0],[0,0,0]] q̇ */
        worst = fmax(worst, fabs(-grad[0] + lam[0] * qd[1]));
        worst = fmax(worst, fabs(-grad[1] - lam[0] * qd[0]));
        worst = fmax(worst, fabs(grad[2]));
        RC_CHECK(worst <= 1e-13, "heisenberg trial %d: %.3g", trial, worst);
    }
    rc_i1_ev_free(ev);
    srk_close(&r);
}

static void test_constraints(void)
{
    static const char *meth[3] = {"gauss1", "gauss2", "gauss3"};
    int s;
    for (s = 0; s < 3; ++s) {
        srk_run r;
        double worst_stage = 0.0, worst_end = 0.0;
        long i;
        int ok = srk_open(&r, VEHICLE, meth[s], 0.05) == 0;
        RC_CHECK(ok, "open %s", meth[s]);
        for (i = 0; ok && i < 400; ++i) {
            double st;
            if (srk_steps(&r, 1)) {
                ok = 0;
                break;
            }
            st = rc_i1_stage_constraint(r.ws);
            worst_stage = fmax(worst_stage, isfinite(st) ? st : INFINITY);
            worst_end = fmax(worst_end, srk_vehicle_constraint(
                                            VPAR, r.s.q, r.s.p, r.s.aux));
        }
        RC_CHECK(ok, "%s ran", meth[s]);
        /* g·q̇ sums products of size |p| ~ 1: round-off ~1e-16; 1e-12
         * is the bound and leaves Newton's stopping room */
        RC_CHECK(worst_stage <= 1e-12, "%s: stages |g.qdot| = %.3g", meth[s],
                 worst_stage);
        RC_CHECK(worst_end <= 1e-12, "%s: endpoints |g.qdot| = %.3g",
                 meth[s], worst_end);
        printf("%s: constraints: stages %.2e, endpoints %.2e\n", meth[s],
               worst_stage, worst_end);
        srk_close(&r);
    }
}

static double vehicle_error(const char *meth, long nsteps, const double *qr,
                            const double *pr)
{
    srk_run r;
    double e = INFINITY, got[8], ref[8];
    int a;
    if (srk_open(&r, VEHICLE, meth, 2.0 / (double)nsteps) == 0 &&
        srk_steps(&r, nsteps) == 0) {
        for (a = 0; a < 4; ++a) {
            got[a] = r.s.q[a];
            got[4 + a] = r.s.p[a];
            ref[a] = qr[a];
            ref[4 + a] = pr[a];
        }
        e = rc_test_max_rel(8, got, ref, 1.0, NULL);
    }
    srk_close(&r);
    return e;
}

static void test_order(void)
{
    static const char *meth[3] = {"gauss1", "gauss2", "gauss3"};
    /* step counts over T = 2 whose errors lie between ~1e-3 and ~1e-11,
     * well above the reference's own error (RK4 with h = 1e-4: ~1e-14) */
    static const long N0[3] = {20, 5, 4};
    double q[4] = {0.5, 0.2, 0.3, 0.8}, p[4] = {0.3, -0.2, 0.4, 0.5};
    int s, h;
    srk_vehicle_reference(VPAR, q, p, 2.0, 20000);
    for (s = 0; s < 3; ++s) {
        double e[4], want = pow(2.0, 2.0 * (s + 1));
        for (h = 0; h < 4; ++h)
            e[h] = vehicle_error(meth[s], N0[s] << h, q, p);
        printf("%s: errors at T=2:", meth[s]);
        for (h = 0; h < 4; ++h)
            printf(" %.3e", e[h]);
        printf("  ratios:");
        for (h = 1; h < 4; ++h)
            printf(" %.2f", e[h - 1] / e[h]);
        printf(" (want %.0f)\n", want);
        for (h = 1; h < 4; ++h) {
            double ratio = e[h - 1] / e[h];
            /* 15 %: the bound; the asymptotic regime's next term
             * is one power of Δt smaller */
            RC_CHECK(fabs(ratio / want - 1.0) <= 0.15,
                     "%s: halving %d: ratio %.3f, want %.0f", meth[s], h,
                     ratio, want);
        }
    }
}

/* max |ΦᵀJΦ − J| for one step of `meth` from the vehicle's initial state,
 * Φ by central differences of (q0, p0) ↦ (q1, p1). */
static double symplectic_defect(const char *meth, double dt, double eps)
{
    srk_run r;
    double Phi[8][8], J[8][8], q0[4], p0[4], l0[2], worst = 0.0;
    int a, b, c, sg;
    if (srk_open(&r, VEHICLE, meth, dt))
        return INFINITY;
    memcpy(q0, r.s.q, sizeof q0);
    memcpy(p0, r.s.p, sizeof p0);
    memcpy(l0, r.s.aux, sizeof l0);
    for (b = 0; b < 8; ++b) {
        double out[2][8];
        for (sg = 0; sg < 2; ++sg) {
            memcpy(r.s.q, q0, sizeof q0);
            memcpy(r.s.p, p0, sizeof p0);
            memcpy(r.s.aux, l0, sizeof l0);
            if (b < 4)
                r.s.q[b] += sg ? -eps : eps;
            else
                r.s.p[b - 4] += sg ? -eps : eps;
            if (srk_steps(&r, 1)) {
                srk_close(&r);
                return INFINITY;
            }
            for (a = 0; a < 4; ++a) {
                out[sg][a] = r.s.q[a];
                out[sg][4 + a] = r.s.p[a];
            }
        }
        for (a = 0; a < 8; ++a)
            Phi[a][b] = (out[0][a] - out[1][a]) / (2 * eps);
    }
    for (a = 0; a < 8; ++a)
        for (b = 0; b < 8; ++b)
            J[a][b] = (b == a + 4) ? 1.0 : (a == b + 4) ? -1.0 : 0.0;
    for (a = 0; a < 8; ++a)
        for (b = 0; b < 8; ++b) {
            double s = 0.0;
            for (c = 0; c < 8; ++c) {
                int d;
                for (d = 0; d < 8; ++d)
                    s += Phi[c][a] * J[c][d] * Phi[d][b];
            }
            worst = fmax(worst, fabs(s - J[a][b]));
        }
    srk_close(&r);
    return isfinite(worst) ? worst : INFINITY;
}

static void test_symplectic(void)
{
    static const char *meth[3] = {"gauss1", "gauss2", "gauss3"};
    int s;
    /* ε = 1e-5: truncation ~ε²|∂³Φ| ~1e-10, round-off ~1e-16/ε ~1e-11;
     * the 1e-9 sits above both */
    for (s = 0; s < 3; ++s) {
        double d = symplectic_defect(meth[s], 0.2, 1e-5);
        printf("%s: max|Phi^T J Phi - J| = %.2e\n", meth[s], d);
        RC_CHECK(d <= 1e-9, "%s: symplectic defect %.3g", meth[s], d);
    }
    {
        /* RK4's defect is O(Δt⁵): ~1e-5 at Δt = 0.4, far above 1e-7 */
        double d = symplectic_defect("rk4", 0.4, 1e-5);
        printf("rk4: max|Phi^T J Phi - J| = %.2e\n", d);
        RC_CHECK(d > 1e-7 && isfinite(d), "rk4 defect %.3g should be large",
                 d);
    }
}

static void test_heisenberg(void)
{
    static const char *meth[4] = {"gauss1", "gauss2", "gauss3", "rk4"};
    int s;
    for (s = 0; s < 4; ++s) {
        srk_run r;
        double pz0, lz0, H0, dpz = 0.0, dlz = 0.0, dH1 = 0.0, dH2 = 0.0;
        long i, n = 4000;
        int ok = srk_open(&r, HEIS, meth[s], 0.1) == 0;
        RC_CHECK(ok, "open %s", meth[s]);
        if (!ok) {
            srk_close(&r);
            continue;
        }
        pz0 = r.s.p[2];
        lz0 = r.s.q[0] * r.s.p[1] - r.s.q[1] * r.s.p[0];
        H0 = srk_energy(&r);
        for (i = 0; i < n && ok; ++i) {
            double dh;
            ok = srk_steps(&r, 1) == 0;
            dpz = fmax(dpz, fabs(r.s.p[2] - pz0));
            dlz = fmax(dlz,
                       fabs(r.s.q[0] * r.s.p[1] - r.s.q[1] * r.s.p[0] - lz0));
            dh = fabs(srk_energy(&r) - H0);
            if (i < n / 2)
                dH1 = fmax(dH1, dh);
            else
                dH2 = fmax(dH2, dh);
        }
        RC_CHECK(ok, "%s ran", meth[s]);
        printf("%s: heisenberg over t=%g: |dp_z| %.2e |dL_z| %.2e "
               "|dH| %.2e then %.2e\n",
               meth[s], n * 0.1, dpz, dlz, dH1, dH2);
        /* H_z = 0 exactly, so every RK method keeps p_z bit for bit */
        RC_CHECK(dpz == 0.0, "%s: p_z moved by %.3g", meth[s], dpz);
        if (s < 3) {
            /* L_z is a quadratic invariant qᵀCp of the eliminated system,
             * kept by Gauss methods (b_i a_ij + b_j a_ji = b_i b_j);
             * round-off over 4000 steps of |x p_y| ~ 1: 1e-12 */
            RC_CHECK(dlz <= 1e-12, "%s: L_z moved by %.3g", meth[s], dlz);
            /* no drift: the second half's band within 2x the first's
             * (plus round-off) */
            RC_CHECK(dH2 <= 2.0 * dH1 + 1e-14, "%s: H band %.3g then %.3g",
                     meth[s], dH1, dH2);
        } else {
            /* RK4 does not keep quadratic invariants: its O(Δt⁴) error
             * in L_z is ~1e-6 here, far above round-off */
            RC_CHECK(dlz > 1e-10, "rk4: L_z moved only %.3g", dlz);
        }
        srk_close(&r);
    }
}

static void test_failure(void)
{
    srk_run r;
    rc_error err;
    rc_integrator_desc in;
    void *ws = NULL;
    double q0;
    rc_status st;
    memset(&err, 0, sizeof err);
    if (srk_open(&r, VEHICLE, "gauss2", 0.1)) {
        RC_CHECK(0, "open");
        return;
    }
    rc_integrator_desc_init(&in);
    in.dt = 0.1;
    in.newton_max_iter = 1; /* one iteration cannot reach 1e-14 */
    RC_CHECK(r.meth->create(r.m, &in, &ws, &err) == RC_OK, "create");
    q0 = r.s.q[0];
    st = ws ? r.meth->step(ws, &r.s, &err) : RC_ERR_INVALID;
    RC_CHECK(st == RC_ERR_NOT_CONVERGED, "status %d", (int)st);
    RC_CHECK(strstr(err.message, "did not converge") != NULL, "message: %s",
             err.message);
    RC_CHECK(r.s.t == 0.0 && r.s.steps == 0 && r.s.q[0] == q0,
             "state kept: t %g steps %ld", r.s.t, r.s.steps);
    if (ws)
        r.meth->destroy(ws);
    /* a hopeless step (Δt = 200, the orbit's period ~ 6) ends with a
     * status after newton_max_iter iterations */
    ws = NULL;
    in.newton_max_iter = 50;
    in.dt = 200.0;
    RC_CHECK(r.meth->create(r.m, &in, &ws, &err) == RC_OK, "create");
    st = ws ? r.meth->step(ws, &r.s, &err) : RC_ERR_INVALID;
    RC_CHECK(st != RC_OK, "a step of 200 should fail, got %d", (int)st);
    RC_CHECK(r.s.t == 0.0 && r.s.q[0] == q0, "state kept");
    if (ws)
        r.meth->destroy(ws);
    srk_close(&r);
}

int main(void)
{
    test_bodies();
    test_constraints();
    test_order();
    test_symplectic();
    test_heisenberg();
    test_failure();
    return rc_test_finish("test_srk");
}

/* Base integrators (DESIGN §2).
 *   a. Störmer–Verlet and implicit midpoint converge at order 2 on a smooth
 *      nonlinear system; SV on the harmonic oscillator matches the exact
 *      discrete solution and converges to the exact continuous one.
 *   b. Along an SV trajectory the spread of H falls 4x and the spread of
 *      the modified energy H~ 16x when h halves.
 *   c. Implicit midpoint reports its Newton iterations, and a hopeless step
 *      fails with a status and a message instead of hanging; a failed
 *      step leaves the state of the last completed step. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ricochet/system.h"
#include "rc_test.h"

/* ---------------------------------------------------------------- */
/* The test system: two particles (masses 1 and 2) in 2-D, each in the
 * sextic well |q|^2 (|q|^2 - 1)^2 of seed 000 §8.0.1, joined by a spring
 * k = 2, rest length 2.  V grows like |q|^6, so the motion is bounded;
 * V is a polynomial in q away from the spring's r = 0, so the flow is
 * smooth; the spring couples the two radial motions, so the system is
 * not integrable and exercises every term of H~.  Linearised
 * frequencies are ~2-4, so h = 0.02 gives h*omega <= 0.08. */
static rc_system *nonlinear_system(rc_method method, double h)
{
    static const double q0[4] = {0.3, -1.0, -0.1, 1.05};
    static const double p0[4] = {0.4, 0.2, -0.3, 0.5};
    rc_system *sys = NULL;
    rc_potential_desc pd;
    rc_integrator_desc in;
    if (rc_system_create(2, &sys) != RC_OK)
        return NULL;
    rc_system_add_particle(sys, 1.0, 0.0, q0, p0, NULL);
    rc_system_add_particle(sys, 2.0, 0.0, q0 + 2, p0 + 2, NULL);
    rc_potential_desc_init(&pd, RC_POT_SEXTIC_WELL);
    rc_system_add_potential(sys, &pd);
    rc_potential_desc_init(&pd, RC_POT_SPRING);
    pd.i = 0;
    pd.j = 1;
    pd.k = 2.0;
    pd.rest_length = 2.0;
    rc_system_add_potential(sys, &pd);
    rc_integrator_desc_init(&in);
    in.method = method;
    in.dt = h;
    if (rc_system_set_integrator(sys, &in) != RC_OK) {
        rc_system_free(sys);
        return NULL;
    }
    return sys;
}

/* Integrate to time T = nsteps*h; out = (q, p) at T. */
static int run_to(rc_method method, double h, long nsteps, double *out)
{
    rc_system *sys = nonlinear_system(method, h);
    rc_status st;
    if (!sys)
        return 0;
    st = rc_system_step(sys, nsteps);
    RC_CHECK(st == RC_OK, "%s h=%g: %s", rc_method_name(method), h,
             rc_system_message(sys));
    rc_system_get_state(sys, out, out + 4);
    rc_system_free(sys);
    return st == RC_OK;
}

static double max_diff(int n, const double *a, const double *b)
{
    double e = 0.0;
    int k;
    for (k = 0; k < n; ++k) {
        double d = fabs(a[k] - b[k]);
        if (!(d <= e)) /* NaN propagates as NaN */
            e = d;
    }
    return e;
}

/* Order-2 error ratio window.  err(h) = C h^2 + D h^4 + ..., so
 * err(h)/err(h/2) = 4 (1 + (3/4)(D/C) h^2 + ...); with h*omega <= 0.08
 * the correction is a few percent, and the reference (h/256) adds a
 * relative error of 256^-2 ~ 2e-5.  An order-1 method gives 2, order 3
 * gives 8: [3.5, 4.5] separates them with room for the h^2 correction. */
static const double ORDER2_LO = 3.5, ORDER2_HI = 4.5;

static void convergence(rc_method method)
{
    const double T = 4.0, h0 = 0.02;
    double ref[8], x[3][8], err[3];
    int l;
    long n0 = (long)(T / h0 + 0.5);
    if (!run_to(method, h0 / 256.0, n0 * 256, ref))
        return;
    for (l = 0; l < 3; ++l) {
        if (!run_to(method, h0 / (1 << l), n0 << l, x[l]))
            return;
        err[l] = max_diff(8, x[l], ref);
    }
    printf("%-8s T=%g: err(h=%g) %.3e, err(h/2) %.3e, err(h/4) %.3e; "
           "ratios %.3f %.3f\n",
           rc_method_name(method), T, h0, err[0], err[1], err[2],
           err[0] / err[1], err[1] / err[2]);
    for (l = 0; l < 2; ++l)
        RC_CHECK(err[l] / err[l + 1] >= ORDER2_LO &&
                     err[l] / err[l + 1] <= ORDER2_HI,
                 "%s: err ratio %.4f at level %d not in [%g, %g]",
                 rc_method_name(method), err[l] / err[l + 1], l, ORDER2_LO,
                 ORDER2_HI);
}

/* Harmonic oscillator m = 1, V = k/2 q^2 (anchor, rest 0), q(0) = A,
 * p(0) = 0.  SV is then the leapfrog recursion
 *   q_{n+1} - 2 q_n + q_{n-1} = -(h omega)^2 q_n,  q_1 = A cos(theta),
 * so exactly q_n = A cos(n theta), p_n = -omega A sqrt(1 - (h omega)^2/4)
 * sin(n theta), cos(theta) = 1 - (h omega)^2/2. */
static void harmonic(void)
{
    const double k = 4.0, w = 2.0, A = 0.7, T = 10.0, h0 = 0.05;
    double errc[3], edmax = 0.0;
    int l;
    for (l = 0; l < 3; ++l) {
        rc_system *sys = NULL;
        rc_potential_desc pd;
        rc_integrator_desc in;
        double q = A, p = 0.0, h = h0 / (1 << l), hw = h * w, th;
        double qd, pd_, ed;
        long n = (long)(T / h + 0.5);
        rc_system_create(1, &sys);
        rc_system_add_particle(sys, 1.0, 0.0, &q, &p, NULL);
        rc_potential_desc_init(&pd, RC_POT_ANCHOR);
        pd.k = k;
        rc_system_add_potential(sys, &pd);
        rc_integrator_desc_init(&in);
        in.dt = h;
        rc_system_set_integrator(sys, &in);
        RC_CHECK(rc_system_step(sys, n) == RC_OK, "HO: %s",
                 rc_system_message(sys));
        rc_system_get_state(sys, &q, &p);
        /* cos(theta) = 1 - 2 sin^2(theta/2): asin keeps theta to full
         * relative precision, acos of a number near 1 would not */
        th = 2.0 * asin(0.5 * hw);
        qd = A * cos((double)n * th);
        pd_ = -w * A * sqrt(1.0 - 0.25 * hw * hw) * sin((double)n * th);
        /* Discrete solution: each step rounds q and p at relative eps,
         * a phase error of ~eps per step, accumulating at most linearly:
         * n eps A ~ 800 * 1.1e-16 A ~ 1e-13 A for n <= 800; 1e-12 A
         * leaves 10x. */
        ed = fmax(fabs(q - qd), fabs(p - pd_) / w);
        RC_CHECK(ed <= 1e-12 * A,
                 "HO h=%g: SV differs from its exact discrete solution by "
                 "%.3e",
                 h, ed);
        errc[l] = fmax(fabs(q - A * cos(w * (double)n * h)),
                       fabs(p + w * A * sin(w * (double)n * h)) / w);
        edmax = fmax(edmax, ed);
        rc_system_free(sys);
    }
    printf("sv HO     T=%g: max diff from the exact discrete solution "
           "%.2e; err vs exact (h=%g) %.3e %.3e %.3e; ratios %.3f %.3f\n",
           T, edmax, h0, errc[0], errc[1], errc[2], errc[0] / errc[1],
           errc[1] / errc[2]);
    for (l = 0; l < 2; ++l)
        RC_CHECK(errc[l] / errc[l + 1] >= ORDER2_LO &&
                     errc[l] / errc[l + 1] <= ORDER2_HI,
                 "HO: err ratio %.4f not in [%g, %g]",
                 errc[l] / errc[l + 1], ORDER2_LO, ORDER2_HI);
}

/* ---------------------------------------------------------------- */
/* b. Energy and modified-energy spreads along SV trajectories. */

static void spread(double h, double T, double *sH, double *sHt)
{
    rc_system *sys = nonlinear_system(RC_METHOD_SV, h);
    rc_diagnostics dg;
    double hmin = INFINITY, hmax = -INFINITY, tmin = INFINITY,
           tmax = -INFINITY;
    long s, n = (long)(T / h + 0.5);
    *sH = *sHt = NAN;
    if (!sys)
        return;
    for (s = 0; s <= n; ++s) {
        if (s > 0 && rc_system_step(sys, 1) != RC_OK) {
            RC_CHECK(0, "SV step failed: %s", rc_system_message(sys));
            rc_system_free(sys);
            return;
        }
        rc_system_diagnostics(sys, &dg);
        hmin = fmin(hmin, dg.energy);
        hmax = fmax(hmax, dg.energy);
        tmin = fmin(tmin, dg.modified_energy);
        tmax = fmax(tmax, dg.modified_energy);
        if (!isfinite(dg.energy) || !isfinite(dg.modified_energy)) {
            RC_CHECK(0, "non-finite energy at step %ld", s);
            rc_system_free(sys);
            return;
        }
    }
    *sH = hmax - hmin;
    *sHt = tmax - tmin;
    rc_system_free(sys);
}

/* Spread windows.  Along the trajectory H - H0 = h^2 f(q, p) + O(h^4)
 * and H~ - H~0 = h^4 g(q, p) + O(h^6) (H~ is the modified Hamiltonian
 * truncated after h^2), the trajectories for h and h/2 differ by O(h^2),
 * and sampling the extrema on the step grid misses them by O(h^2)
 * relative (the samples sit on a flat maximum).  So the ratios are
 * 4 (1 + O((h omega)^2)) and 16 (1 + O((h omega)^2)) with
 * (h omega)^2 <= 6.4e-3 at h = 0.02.  [14, 18] admits a correction
 * coefficient up to ~20 and rejects 4 (a wrong coefficient in H~ leaves
 * an h^2 residue) as well as 8 or 32. */
static const double HT_LO = 14.0, HT_HI = 18.0;

static void modified_energy(void)
{
    const double T = 30.0, h0 = 0.02;
    double sH[3], sHt[3];
    int l;
    for (l = 0; l < 3; ++l)
        spread(h0 / (1 << l), T, &sH[l], &sHt[l]);
    printf("sv spread T=%g h=%g,h/2,h/4: H %.3e %.3e %.3e (ratios %.3f "
           "%.3f); H~ %.3e %.3e %.3e (ratios %.3f %.3f)\n",
           T, h0, sH[0], sH[1], sH[2], sH[0] / sH[1], sH[1] / sH[2], sHt[0],
           sHt[1], sHt[2], sHt[0] / sHt[1], sHt[1] / sHt[2]);
    for (l = 0; l < 2; ++l) {
        double rh = sH[l] / sH[l + 1], rt = sHt[l] / sHt[l + 1];
        RC_CHECK(rh >= ORDER2_LO && rh <= ORDER2_HI,
                 "spread of H ratio %.4f (level %d) not in [%g, %g]", rh, l,
                 ORDER2_LO, ORDER2_HI);
        RC_CHECK(rt >= HT_LO && rt <= HT_HI,
                 "spread of H~ ratio %.4f (level %d) not in [%g, %g]", rt, l,
                 HT_LO, HT_HI);
    }
}

/* ---------------------------------------------------------------- */
/* c. Midpoint solver reporting and failure. */

static void midpoint_solver(void)
{
    rc_system *sys = nonlinear_system(RC_METHOD_MIDPOINT, 0.02);
    rc_diagnostics dg;
    if (!sys) {
        RC_CHECK(0, "midpoint system");
        return;
    }
    RC_CHECK(rc_system_step(sys, 10) == RC_OK, "midpoint: %s",
             rc_system_message(sys));
    rc_system_diagnostics(sys, &dg);
    printf("midpoint h=0.02: %d Newton iterations in the last step\n",
           dg.solver_iterations);
    /* Newton from the SV predictor converges quadratically: the update
     * drops from ~h^3 to round-off in a handful of iterations. */
    RC_CHECK(dg.solver_iterations > 0 && dg.solver_iterations <= 10,
             "solver_iterations %d", dg.solver_iterations);
    rc_system_free(sys);
}

/* A stiff nonlinear spring (k = 1e8, rest 1) stretched and kicked, with
 * dt = 10 (h*omega ~ 1e5): Newton cannot converge from the predictor.
 * The call must return an error with a message within newton_max_iter
 * iterations, and keep the state of the last completed step. */
static void midpoint_failure(void)
{
    static const double q0[4] = {0.0, 0.0, 1.7, 0.3};
    static const double p0[4] = {3.0, -1.0, -2.0, 4.0};
    rc_system *sys = NULL;
    rc_potential_desc pd;
    rc_integrator_desc in;
    rc_status st;
    double q[4], p[4];
    clock_t t0;
    double secs;
    rc_system_create(2, &sys);
    rc_system_add_particle(sys, 1.0, 0.0, q0, p0, NULL);
    rc_system_add_particle(sys, 1.0, 0.0, q0 + 2, p0 + 2, NULL);
    rc_potential_desc_init(&pd, RC_POT_SPRING);
    pd.i = 0;
    pd.j = 1;
    pd.k = 1e8;
    pd.rest_length = 1.0;
    rc_system_add_potential(sys, &pd);
    rc_potential_desc_init(&pd, RC_POT_SEXTIC_WELL);
    rc_system_add_potential(sys, &pd);
    rc_integrator_desc_init(&in);
    in.method = RC_METHOD_MIDPOINT;
    in.dt = 10.0;
    rc_system_set_integrator(sys, &in);
    t0 = clock();
    st = rc_system_step(sys, 5);
    secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("midpoint dt=10, k=1e8: %s (%s) after %.3f s: \"%s\"\n",
           rc_status_name(st), rc_status_str(st), secs,
           rc_system_message(sys));
    RC_CHECK(st == RC_ERR_NOT_CONVERGED || st == RC_ERR_NONFINITE,
             "pathological midpoint step returned %s", rc_status_name(st));
    RC_CHECK(strlen(rc_system_message(sys)) > 0, "no message");
    /* 50 iterations of a 4x4 Newton solve take microseconds */
    RC_CHECK(secs < 1.0, "failure took %.3f s", secs);
    rc_system_get_state(sys, q, p);
    if (rc_system_steps_taken(sys) == 0)
        RC_CHECK(memcmp(q, q0, sizeof q) == 0 && memcmp(p, p0, sizeof p) == 0,
                 "state changed by a failed first step");
    RC_CHECK(isfinite(q[0]) && isfinite(q[3]) && isfinite(p[0]) &&
                 isfinite(p[3]),
             "non-finite state left after a failed step");
    rc_system_free(sys);
}

/* Blow-up: a particle 1e-160 from the centre of 1/|q|^2 gets a force
 * that overflows; the step must fail with RC_ERR_NONFINITE (SV) or
 * RC_ERR_NOT_CONVERGED / RC_ERR_NONFINITE (midpoint, whose Newton sees
 * the overflow first), with a message, and leave the state of the last
 * completed step (system.h, rc_system_step). */
static void overflow_failure(rc_method method)
{
    double q0[2] = {1e-160, 0.0}, p0[2] = {0.0, 1.0}, q[2], p[2];
    rc_system *sys = NULL;
    rc_potential_desc pd;
    rc_integrator_desc in;
    rc_status st;
    rc_system_create(2, &sys);
    rc_system_add_particle(sys, 1.0, 0.0, q0, p0, NULL);
    rc_potential_desc_init(&pd, RC_POT_INVERSE_SQUARE);
    rc_system_add_potential(sys, &pd);
    rc_integrator_desc_init(&in);
    in.method = method;
    in.dt = 0.01;
    rc_system_set_integrator(sys, &in);
    st = rc_system_step(sys, 3);
    printf("%-8s overflow: %s: \"%s\"\n", rc_method_name(method),
           rc_status_name(st), rc_system_message(sys));
    RC_CHECK(st == RC_ERR_NONFINITE ||
                 (method == RC_METHOD_MIDPOINT && st == RC_ERR_NOT_CONVERGED),
             "%s overflow returned %s", rc_method_name(method),
             rc_status_name(st));
    RC_CHECK(strlen(rc_system_message(sys)) > 0, "no message");
    RC_CHECK(rc_system_steps_taken(sys) == 0, "steps %ld",
             rc_system_steps_taken(sys));
    rc_system_get_state(sys, q, p);
    RC_CHECK(memcmp(q, q0, sizeof q) == 0 && memcmp(p, p0, sizeof p) == 0,
             "%s: failed step left q = (%g, %g), p = (%g, %g), not the last "
             "completed state",
             rc_method_name(method), q[0], q[1], p[0], p[1]);
    rc_system_free(sys);
}

int main(void)
{
    convergence(RC_METHOD_SV);
    convergence(RC_METHOD_MIDPOINT);
    harmonic();
    modified_energy();
    midpoint_solver();
    midpoint_failure();
    overflow_failure(RC_METHOD_SV);
    overflow_failure(RC_METHOD_MIDPOINT);
    return rc_test_finish("test_integrators");
}

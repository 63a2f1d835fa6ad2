/* The baseline integrators (src/host/baselines.c) against exact answers
 * and against GVI on the bundled examples (seed 000 §6.1.1, §1.3, §8;
 * seed 001 Algorithm 1):
 *
 *   1. CVA/MCVA event time on a falling particle: one step equals the
 *      exact piecewise parabola with an elastic reflection.
 *   2. Two events in one step are processed in time order.
 *   3. A ball resting on the floor is reported as Zeno, not looped, and
 *      the failed step leaves the state alone.
 *   4. pogo_stick: CVA's energy drifts, GVI's does not (MCVA reported).
 *   5. bouncing_ball: direct-endpoint loses energy at the first bounce;
 *      GVI's apex stays near 1.
 *   6. nonlinear_oscillator_contact: direct-endpoint loses energy; GVI
 *      keeps lz to round-off, linearized GVI does not.
 *   7. spring_sphere_combined under MCVA: where the H~ mirror leaves a
 *      grazing contact approaching, the H mirror's fallback reflects it,
 *      so the run goes on (without it: Zeno at the second step).
 *
 * Windowed drift as in test_gvi_examples: the samples are cut into ten
 * equal windows and the largest |mean(window) - mean(first window)| is
 * reported relative to |H0|. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ricochet/scenario.h"
#include "ricochet/system.h"
#include "rc_example_test.h"

/* ---------------------------------------------------------------- */
/* Running an example (rc_example_test.h): the run may fail, and the
 * failure is recorded rather than asserted, because the baselines are
 * allowed to break down (MCVA's Zeno on the pogo stick).  Returns 1 when
 * the example loaded and at least the first sample was taken. */
static int run_example(const char *file, const char *const *ov, int nov,
                       long every, trace *tr)
{
    return run_trace(file, ov, nov, every, tr, NULL, NULL) && tr->n >= 1;
}

/* ---------------------------------------------------------------- */
/* Small hand-built systems for cases 1-3.                            */

/* A 1-D unit mass at q with momentum p, optional gravity g (> 0 pulls
 * toward -x), a floor wall at 0 and optionally a ceiling wall at L. */
static rc_system *make_1d(int nparticles, const double *q, const double *p,
                          double g, int with_ceiling, double L,
                          rc_method method, double dt, int max_events,
                          double eps_g)
{
    rc_system *sys = NULL;
    rc_potential_desc pot;
    rc_constraint_desc con;
    rc_integrator_desc integ;
    int k;
    if (rc_system_create(1, &sys) != RC_OK)
        return NULL;
    for (k = 0; k < nparticles; ++k)
        if (rc_system_add_particle(sys, 1.0, 0.0, &q[k], &p[k], NULL) !=
            RC_OK)
            goto fail;
    if (g != 0.0) {
        rc_potential_desc_init(&pot, RC_POT_GRAVITY);
        pot.vector[0] = -g;
        if (rc_system_add_potential(sys, &pot) != RC_OK)
            goto fail;
    }
    rc_constraint_desc_init(&con, RC_CON_WALL);
    con.i = RC_ALL;
    con.normal[0] = 1.0;
    con.offset = 0.0;
    if (rc_system_add_constraint(sys, &con) != RC_OK)
        goto fail;
    if (with_ceiling) {
        /* g = -q - (-L) = L - q >= 0 */
        rc_constraint_desc_init(&con, RC_CON_WALL);
        con.i = RC_ALL;
        con.normal[0] = -1.0;
        con.offset = -L;
        if (rc_system_add_constraint(sys, &con) != RC_OK)
            goto fail;
    }
    rc_integrator_desc_init(&integ);
    integ.method = method;
    integ.dt = dt;
    if (max_events > 0)
        integ.max_events = max_events;
    integ.eps_g = eps_g; /* 0 = automatic */
    if (rc_system_set_integrator(sys, &integ) != RC_OK)
        goto fail;
    return sys;
fail:
    fprintf(stderr, "make_1d: %s\n", rc_system_message(sys));
    rc_system_free(sys);
    return NULL;
}

/* ---------------------------------------------------------------- */
/* 1. Event time of a falling particle.                               */

/* The CVA event search finds the root of g itself (the exact root of
 * the quadratic for a wall), so the exact solution must hold to 1e-12
 * with the automatic eps_g as well as with a tiny one (eps_g only
 * decides which terms count as "in contact" for the reflection).  Each
 * case is run with both. */
static const double EPS_G_TIGHT = 1e-15;

/* Same tolerance with the automatic eps_g: rounding only. */
static double slack_tol(rc_system *sys)
{
    (void)sys;
    return 1e-12;
}

static void test_falling_particle(void)
{
    /* The event time is the closed-form root of a quadratic and
     * Störmer–Verlet is exact for a constant force, so the only error is
     * rounding (a few ulps of O(1) numbers). */
    const double tol = 1e-12;
    const double g = 9.8, q0 = 0.01, v0 = -1.0, h = 0.05;
    static const rc_method methods[2] = {RC_METHOD_CVA, RC_METHOD_MCVA};
    /* exact: q0 + v0 t - g t^2 / 2 = 0, positive root in stable form */
    const double s = sqrt(v0 * v0 + 2.0 * g * q0);
    const double tstar = 2.0 * q0 / (s - v0);
    const double vimp = v0 - g * tstar;  /* < 0 */
    const double rem = h - tstar;
    const double qx = -vimp * rem - 0.5 * g * rem * rem;
    const double px = -vimp - g * rem;
    int m, tight;
    for (m = 0; m < 2; ++m)
        for (tight = 1; tight >= 0; --tight) {
            const char *name = rc_method_name(methods[m]);
            rc_system *sys = make_1d(1, &q0, &v0, g, 0, 0.0, methods[m], h,
                                     0, tight ? EPS_G_TIGHT : 0.0);
            double q = NAN, p = NAN, eq, ep, tl;
            rc_diagnostics dg;
            rc_status st;
            RC_CHECK(sys != NULL, "falling particle: system not built");
            if (!sys)
                continue;
            tl = tight ? tol : slack_tol(sys);
            st = rc_system_step(sys, 1);
            RC_CHECK(st == RC_OK, "falling particle %s: step: %s", name,
                     rc_system_message(sys));
            rc_system_get_state(sys, &q, &p);
            memset(&dg, 0, sizeof dg);
            rc_system_diagnostics(sys, &dg);
            eq = fabs(q - qx);
            ep = fabs(p - px);
            printf("case 1 falling particle %s eps_g %s: t* = %.15f, q "
                   "%.17g (exact %.17g, err %.2e), p %.17g (exact %.17g, "
                   "err %.2e), tol %.1e, events %d\n",
                   name, tight ? "1e-15" : "auto", tstar, q, qx, eq, p, px,
                   ep, tl, dg.active_contacts);
            RC_CHECK(eq <= tl && ep <= tl,
                     "falling particle %s eps_g %s: |q - q*| = %.3e, "
                     "|p - p*| = %.3e > %.1e",
                     name, tight ? "1e-15" : "auto", eq, ep, tl);
            RC_CHECK(dg.active_contacts == 1,
                     "falling particle %s: %d events, expected 1", name,
                     dg.active_contacts);
            rc_system_free(sys);
        }
}

/* ---------------------------------------------------------------- */
/* 2. Two events in one step, in time order.                          */

static void test_two_events(void)
{
    /* Free flight between flat walls: positions are linear in time, the
     * event times exact quotients, so only rounding remains (with the
     * automatic eps_g, plus the slack of slack_tol()). */
    const double tol = 1e-12;
    const double L = 1.0, q0 = 0.5, v0 = 3.0, h = 0.6;
    /* unfold: free position 2.3, mirrored at L then at 0: 0.3, p = +3 */
    const double qx = -(2.0 * L - (q0 + v0 * h)), px = v0;
    int tight;
    for (tight = 1; tight >= 0; --tight) {
        rc_system *sys = make_1d(1, &q0, &v0, 0.0, 1, L, RC_METHOD_CVA, h,
                                 0, tight ? EPS_G_TIGHT : 0.0);
        double q = NAN, p = NAN, eq, ep, tl;
        rc_diagnostics dg;
        rc_status st;
        RC_CHECK(sys != NULL, "two events: system not built");
        if (!sys)
            return;
        tl = tight ? tol : slack_tol(sys);
        st = rc_system_step(sys, 1);
        RC_CHECK(st == RC_OK, "two events: step: %s",
                 rc_system_message(sys));
        rc_system_get_state(sys, &q, &p);
        memset(&dg, 0, sizeof dg);
        rc_system_diagnostics(sys, &dg);
        eq = fabs(q - qx);
        ep = fabs(p - px);
        printf("case 2 two events (walls 0 and %g, q0 %g, v %g, dt %g) "
               "eps_g %s: q %.17g (exact %.17g, err %.2e), p %.17g (err "
               "%.2e), tol %.1e, events %d\n",
               L, q0, v0, h, tight ? "1e-15" : "auto", q, qx, eq, p, ep, tl,
               dg.active_contacts);
        RC_CHECK(eq <= tl && ep <= tl,
                 "two events eps_g %s: |q - q*| = %.3e, |p - p*| = %.3e > "
                 "%.1e",
                 tight ? "1e-15" : "auto", eq, ep, tl);
        RC_CHECK(dg.active_contacts == 2,
                 "two events: %d events, expected 2", dg.active_contacts);
        rc_system_free(sys);
    }
}

/* ---------------------------------------------------------------- */
/* 3. Zeno: a ball resting on the floor.                              */

static void test_zeno(void)
{
    /* "quickly": 50 events of a 1-D particle are microseconds; a second
     * means the event loop did not stop at max_events. */
    const double tol_seconds = 1.0;
    const double q0 = 0.0, p0 = 0.0, h = 0.01;
    rc_system *sys = make_1d(1, &q0, &p0, 9.8, 0, 0.0, RC_METHOD_CVA, h, 50,
                             0.0);
    double q = NAN, p = NAN, t0, dt_wall, t_sys;
    const char *msg;
    rc_status st;
    RC_CHECK(sys != NULL, "zeno: system not built");
    if (!sys)
        return;
    t0 = wall_seconds();
    st = rc_system_step(sys, 1);
    dt_wall = wall_seconds() - t0;
    msg = rc_system_message(sys);
    rc_system_get_state(sys, &q, &p);
    t_sys = rc_system_time(sys);
    printf("case 3 zeno (resting ball, CVA, max_events 50): status %s, "
           "%.2e s, state after q %.3g p %.3g t %g steps %ld, message "
           "\"%s\"\n",
           rc_status_name(st), dt_wall, q, p, t_sys,
           rc_system_steps_taken(sys), msg);
    RC_CHECK(st == RC_ERR_ZENO, "zeno: status %s, expected RC_ERR_ZENO",
             rc_status_name(st));
    RC_CHECK(strstr(msg, "Zeno") != NULL,
             "zeno: message does not name Zeno: \"%s\"", msg);
    RC_CHECK(dt_wall <= tol_seconds, "zeno: the failed step took %.3f s",
             dt_wall);
    RC_CHECK(q == q0 && p == p0 && t_sys == 0.0 &&
                 rc_system_steps_taken(sys) == 0,
             "zeno: the failed step changed the state: q %.17g p %.17g t "
             "%g steps %ld",
             q, p, t_sys, rc_system_steps_taken(sys));
    rc_system_free(sys);
}

/* ---------------------------------------------------------------- */
/* 4. Pogo stick: CVA drifts, GVI does not, MCVA reported.            */

static void test_pogo(void)
{
    /* CVA: seed 000 Fig. 4 shows collision Verlet gaining energy on the
     * pogo stick.  Ours, with event times exact to round-off, random-walks
     * instead (windowed drift 4.4 % of H0 over 2e4, 17 % by 6e4); with
     * event times biased by 1e-12 into the wall it grew by 70 %, so the
     * size of CVA's drift depends on details a test should not pin.  What
     * is robust is the contrast: CVA's windowed drift is thousands of
     * times GVI's (measured 6000x).  Assert at least 100x GVI's and at
     * least 1 % of H0 (a quarter of the measured value). */
    const double tol_cva = 0.01, min_ratio = 100.0;
    double drift_cva = NAN;
    /* GVI: the 0.5 % of |H0| (measured ~7e-6). */
    const double tol_gvi = 5e-3;
    static const char *const methods[3] = {"cva", "gvi", "mcva"};
    int m;
    for (m = 0; m < 3; ++m) {
        char o1[64];
        const char *ov[1];
        trace tr;
        double drift;
        snprintf(o1, sizeof o1, "integrator.method=%s", methods[m]);
        ov[0] = o1;
        if (!run_example("pogo_stick.yaml", ov, 1, 10, &tr)) {
            trace_free(&tr);
            continue;
        }
        drift = window_drift(&tr, tr.H, tr.H[0]) / fabs(tr.H[0]);
        printf("case 4 pogo_stick %s: H0 %.6g, %ld samples to t = %g, "
               "window drift %.3e H0, status %s, %.2f s\n",
               methods[m], tr.H[0], tr.n, tr.t[tr.n - 1], drift,
               rc_status_name(tr.st), tr.seconds);
        if (tr.st != RC_OK)
            printf("case 4 pogo_stick %s: stopped at t = %g: %s\n",
                   methods[m], tr.t_fail, tr.msg);
        if (m == 0) {
            drift_cva = drift;
            RC_CHECK(drift > tol_cva && isfinite(drift),
                     "pogo_stick cva: windowed drift only %.3e H0", drift);
        }
        if (m == 1) {
            RC_CHECK(tr.st == RC_OK, "pogo_stick gvi: step failed at t = "
                     "%g: %s", tr.t_fail, tr.msg);
            RC_CHECK(drift < tol_gvi,
                     "pogo_stick gvi: windowed drift %.3e H0", drift);
            RC_CHECK(drift_cva > min_ratio * drift,
                     "pogo_stick: cva drift %.3e is not %gx gvi's %.3e",
                     drift_cva, min_ratio, drift);
        }
        trace_free(&tr);
    }
}

/* ---------------------------------------------------------------- */
/* 5. Bouncing ball.                                                  */

static void test_bouncing_ball(void)
{
    /* direct-endpoint: seed 000 App. B, the end-point constraint force
     * dissipates at impact (measured ~0.42 H0 after the first bounce);
     * 0.9 H0 is well clear of both that and of energy conservation. */
    const double tol_loss = 0.9;
    /* GVI apex: the O(h) bound of test_gvi_examples, 2 h sqrt(2 g) (twice
     * the height covered in one step at impact speed). */
    const double g = 9.8, h = 0.01, tol_apex = 2.0 * h * sqrt(2.0 * g);
    const char *ov_d[3] = {"integrator.method=direct-endpoint",
                           "integrator.dt=0.01", "integrator.duration=2"};
    const char *ov_g[3] = {"integrator.method=gvi", "integrator.dt=0.01",
                           "integrator.duration=95"};
    trace tr;
    long i;
    double hmax = -INFINITY, apex = -INFINITY, worst = 0.0;
    int bounces = 0;
    if (run_example("bouncing_ball.yaml", ov_d, 3, 1, &tr)) {
        for (i = 0; i < tr.n; ++i)
            if (tr.t[i] >= 0.6 - 1e-9 && !(tr.H[i] <= hmax))
                hmax = isfinite(tr.H[i]) ? tr.H[i] : INFINITY;
        printf("case 5 bouncing_ball direct-endpoint: H0 %.6g, max H over "
               "t in [0.6, %g] = %.4f H0, status %s, %.2f s\n",
               tr.H[0], tr.t[tr.n - 1], hmax / tr.H[0],
               rc_status_name(tr.st), tr.seconds);
        RC_CHECK(tr.st == RC_OK, "bouncing_ball direct-endpoint: %s",
                 tr.msg);
        RC_CHECK(hmax < tol_loss * tr.H[0],
                 "bouncing_ball direct-endpoint: H after t = 0.6 reaches "
                 "%.4f H0",
                 hmax / tr.H[0]);
    }
    trace_free(&tr);
    if (run_example("bouncing_ball.yaml", ov_g, 3, 1, &tr)) {
        /* a bounce is p going from < 0 to > 0; a flight's apex is the
         * largest q between two bounces */
        for (i = 1; i < tr.n; ++i) {
            if (tr.p0[i - 1] < 0.0 && tr.p0[i] > 0.0) {
                if (bounces >= 1 && bounces <= 100) {
                    double e = fabs(apex - 1.0);
                    if (!(e <= worst))
                        worst = isfinite(e) ? e : INFINITY;
                }
                bounces++;
                apex = tr.q0[i];
            }
            if (!(tr.q0[i] <= apex))
                apex = isfinite(tr.q0[i]) ? tr.q0[i] : INFINITY;
        }
        printf("case 5 bouncing_ball gvi: %d complete flights, max |apex "
               "- 1| over the first 100 %.3e (O(h) bound %.3e), %.2f s\n",
               bounces - 1, worst, tol_apex, tr.seconds);
        RC_CHECK(tr.st == RC_OK, "bouncing_ball gvi: %s", tr.msg);
        RC_CHECK(bounces - 1 >= 100, "bouncing_ball gvi: only %d bounces",
                 bounces - 1);
        RC_CHECK(worst <= tol_apex, "bouncing_ball gvi: apex off by %.3e",
                 worst);
    }
    trace_free(&tr);
}

/* ---------------------------------------------------------------- */
/* 6. Nonlinear oscillator with contact.                              */

static void test_nonlinear_oscillator(void)
{
    /* direct-endpoint dissipates at every contact (measured E(100)/E0 ~
     * 0.68); 0.9 separates that from a conserving method's O(h^2). */
    const double tol_loss = 0.9;
    /* GVI: rotation invariance keeps lz to round-off (measured ~1e-13 in
     * test_gvi_examples); 1e-10 leaves room and is far below O(h^2). */
    const double tol_l = 1e-10;
    /* Linearized constraints break rotation invariance (seed 000 Fig.
     * 8(d)); measured O(1) change; 1e-3 is far above round-off. */
    const double tol_lin = 1e-3;
    const char *ov_d[4] = {"integrator.method=direct-endpoint",
                           "integrator.base=midpoint", "integrator.dt=0.1",
                           "integrator.duration=100"};
    const char *ov_g[4] = {"integrator.method=gvi",
                           "integrator.base=midpoint", "integrator.dt=0.1",
                           "integrator.duration=100"};
    const char *ov_l[5] = {"integrator.method=gvi",
                           "integrator.base=midpoint", "integrator.dt=0.1",
                           "integrator.duration=100",
                           "integrator.linearized=true"};
    trace tr;
    double r, dl;
    if (run_example("nonlinear_oscillator_contact.yaml", ov_d, 4, 1, &tr)) {
        r = tr.H[tr.n - 1] / tr.H[0];
        printf("case 6 nonlinear_oscillator_contact direct-endpoint: H0 "
               "%.6g, E(%g)/E0 = %.4f, status %s, %.2f s\n",
               tr.H[0], tr.t[tr.n - 1], r, rc_status_name(tr.st),
               tr.seconds);
        RC_CHECK(tr.st == RC_OK, "oscillator direct-endpoint: %s", tr.msg);
        RC_CHECK(r < tol_loss, "oscillator direct-endpoint: E(100)/E0 = "
                 "%.4f", r);
    }
    trace_free(&tr);
    if (run_example("nonlinear_oscillator_contact.yaml", ov_g, 4, 1, &tr)) {
        dl = max_dev(&tr, tr.lz, tr.lz[0]) / fabs(tr.lz[0]);
        printf("case 6 nonlinear_oscillator_contact gvi: lz0 %.6g, max "
               "|lz - lz0| %.3e lz0, status %s, %.2f s\n",
               tr.lz[0], dl, rc_status_name(tr.st), tr.seconds);
        RC_CHECK(tr.st == RC_OK, "oscillator gvi: %s", tr.msg);
        RC_CHECK(dl <= tol_l, "oscillator gvi: lz moved %.3e lz0", dl);
    }
    trace_free(&tr);
    if (run_example("nonlinear_oscillator_contact.yaml", ov_l, 5, 1, &tr)) {
        dl = max_dev(&tr, tr.lz, tr.lz[0]) / fabs(tr.lz[0]);
        printf("case 6 nonlinear_oscillator_contact gvi linearized: max "
               "|lz - lz0| %.3e lz0, status %s, %.2f s\n",
               dl, rc_status_name(tr.st), tr.seconds);
        RC_CHECK(tr.st == RC_OK, "oscillator gvi linearized: %s", tr.msg);
        RC_CHECK(dl > tol_lin && isfinite(dl),
                 "oscillator gvi linearized: lz moved only %.3e lz0", dl);
    }
    trace_free(&tr);
}

/* ---------------------------------------------------------------- */
/* 7. MCVA's H-mirror fallback.                                       */

static void test_mcva_fallback(void)
{
    /* The second particle slides on the container while the spring
     * couples it to the first: the H~ metric's normal speed can keep a
     * grazing contact approaching after its reflection, and only the
     * fallback to the H mirror (rc_k_cva_step) lets the step end.
     * Measured: with it, 148 steps (t = 74) before MCVA's own Zeno on
     * this example; without it, Zeno in step 2.  Assert at least 100
     * steps (t >= 50), and no penetration beyond round-off (measured
     * min_gap 0; 1e-9 of the radius 5 is far below a step's motion). */
    const char *ov[1] = {"integrator.method=mcva"};
    const double min_t = 50.0, tol_gap = 5e-9;
    trace tr;
    long i;
    double gap = INFINITY;
    if (!run_example("spring_sphere_combined.yaml", ov, 1, 1, &tr)) {
        RC_CHECK(0, "spring_sphere_combined mcva: did not run: %s", tr.msg);
        trace_free(&tr);
        return;
    }
    for (i = 0; i < tr.n; ++i)
        gap = fmin(gap, tr.gap[i]);
    printf("case 7 spring_sphere_combined mcva: %ld samples to t = %g, "
           "min gap %.3e, status %s\n",
           tr.n, tr.t[tr.n - 1], gap, rc_status_name(tr.st));
    RC_CHECK(tr.t[tr.n - 1] >= min_t,
             "spring_sphere_combined mcva: stopped at t = %g (want >= %g): "
             "%s",
             tr.t[tr.n - 1], min_t, tr.msg);
    RC_CHECK(gap >= -tol_gap, "spring_sphere_combined mcva: min gap %.3e",
             gap);
    trace_free(&tr);
}

int main(void)
{
    double t0 = wall_seconds();
    test_falling_particle();
    test_two_events();
    test_zeno();
    test_pogo();
    test_bouncing_ball();
    test_nonlinear_oscillator();
    test_mcva_fallback();
    printf("total %.1f s\n", wall_seconds() - t0);
    return rc_test_finish("test_baselines");
}

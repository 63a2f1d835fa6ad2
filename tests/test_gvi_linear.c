/* The midpoint base with a linear potential (src/host/gvi.c,
 * rc_gvi_view_method_).  With gravity alone V((q+x)/2) = (V(q) + V(x))/2,
 * so the midpoint discrete Lagrangian (seed 000 eq. 51) is the Verlet one
 * (eq. 52) and ricochet solves the step by the Verlet form's multiplier
 * Newton (SHAKE) instead of the (N + m) Newton with a Hessian.  Checked on
 * Newton's cradle (pendulum equalities, impacts through a touching row),
 * 400 steps of 0.005 (three impacts):
 *
 *   1. base: midpoint and base: verlet give the same bits at every step
 *      (the two bases are one function here, and one solver runs both);
 *   2. the two solvers agree: the same cradle with a spring of stiffness
 *      0 added (V unchanged, but no longer "gravity only", so the step
 *      runs the (N + m) Newton of the midpoint base) follows the same
 *      trajectory to round-off, with the same reflections;
 *   3. a spring of stiffness 0 really is inert: the Verlet base runs it
 *      through the same multiplier Newton as without it and gives the
 *      same bits (so 2 compares solvers, not models).
 * Case 2 fails if the linear model is sent to the (N + m) Newton with a
 * wrong residual or Jacobian, or if the multiplier form solves the wrong
 * equations: either moves the state far beyond round-off in 400 steps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ricochet/scenario.h"
#include "ricochet/system.h"
#include "rc_model_text.h"
#include "rc_test.h"

#define NSTEPS 400
#define NC 10 /* 5 balls x 2 coordinates */

/* Two solvers of the same equations over 400 steps with three impacts:
 * measured differences 4e-15 in position and 2e-14 in momentum (round-off
 * of two Newton forms, carried through the impacts); 1e-11 leaves room
 * for platform differences and is far below the 1e-4 an O(h) error in
 * either solver's equations would give at h = 0.005. */
static const double TOL_SOLVERS = 1e-11;

/* The cradle with a heavier fourth ball (particles[3].mass = 1.5, an
 * override below), so the impacts do not pass through the row exactly. */
static const char cradle_head[] =
    "name: cradle_linear\n"
    "dimension: 2\n" RC_CRADLE_PARTICLES
    "potentials:\n"
    "  - {type: gravity, g: 9.8}\n";
static const char cradle_zero_spring[] =
    "  - {type: spring, k: 0, rest_length: 0.5, particles: [2, 3]}\n";
static const char cradle_tail[] =
    RC_CRADLE_CONSTRAINTS
    "integrator: {method: gvi, dt: 0.005, duration: 2}\n";

/* The states after each step: q and p, [NSTEPS+1][NC] each, and the
 * reflection passes of each step. */
typedef struct run_rec {
    double q[NSTEPS + 1][NC], p[NSTEPS + 1][NC];
    int refl[NSTEPS + 1];
} run_rec;

/* Runs the cradle on `base`, with the k = 0 spring or not, into r.
 * Returns 1 when every step ran. */
static int run_cradle(const char *base, int zero_spring, run_rec *r)
{
    char text[4096], ov[64], msg[512];
    const char *ovs[2];
    rc_scenario *scn = NULL;
    rc_system *sys = NULL;
    rc_error err;
    rc_diagnostics dg;
    long s;
    int ok = 1;
    snprintf(text, sizeof text, "%s%s%s", cradle_head,
             zero_spring ? cradle_zero_spring : "", cradle_tail);
    snprintf(ov, sizeof ov, "integrator.base=%s", base);
    ovs[0] = ov;
    ovs[1] = "particles[3].mass=1.5";
    if (rc_scenario_load_string(text, "<cradle_linear>", ovs, 2, &scn,
                                &err) != RC_OK ||
        rc_scenario_build(scn, &sys, &err) != RC_OK) {
        RC_CHECK(0, "cradle %s%s: %s", base, zero_spring ? " + k=0" : "",
                 rc_error_format(&err, msg, sizeof msg));
        rc_scenario_free(scn);
        return 0;
    }
    RC_CHECK(rc_system_count(sys) * rc_system_dimension(sys) == NC,
             "cradle: %d coordinates", rc_system_count(sys) *
                                           rc_system_dimension(sys));
    for (s = 0; s <= NSTEPS && ok; ++s) {
        if (s > 0 && rc_system_step(sys, 1) != RC_OK) {
            RC_CHECK(0, "cradle %s%s: step %ld failed: %s", base,
                     zero_spring ? " + k=0" : "", s,
                     rc_system_message(sys));
            ok = 0;
            break;
        }
        if (rc_system_get_state(sys, r->q[s], r->p[s]) != RC_OK ||
            rc_system_diagnostics(sys, &dg) != RC_OK) {
            RC_CHECK(0, "cradle %s: state at step %ld", base, s);
            ok = 0;
            break;
        }
        r->refl[s] = dg.reflections;
    }
    rc_system_free(sys);
    rc_scenario_free(scn);
    return ok;
}

/* Largest |a - b| over the run's q (or p). */
static double worst(double (*a)[NC], double (*b)[NC])
{
    double w = 0.0;
    int s, c;
    for (s = 0; s <= NSTEPS; ++s)
        for (c = 0; c < NC; ++c)
            w = fmax(w, fabs(a[s][c] - b[s][c]));
    return w;
}

int main(void)
{
    static run_rec mid, ver, mid_k0, ver_k0;
    long impacts = 0, s;
    double dq, dp;
    if (!run_cradle("midpoint", 0, &mid) || !run_cradle("verlet", 0, &ver) ||
        !run_cradle("midpoint", 1, &mid_k0) ||
        !run_cradle("verlet", 1, &ver_k0))
        return rc_test_finish("test_gvi_linear");
    for (s = 1; s <= NSTEPS; ++s)
        impacts += mid.refl[s] > 0;
    printf("cradle: %ld steps with reflections (the trajectory has impacts "
           "to carry differences through)\n", impacts);
    RC_CHECK(impacts >= 2, "cradle: only %ld impact steps", impacts);

    /* 1. one function, one solver: the same bits */
    RC_CHECK(memcmp(mid.q, ver.q, sizeof mid.q) == 0 &&
                 memcmp(mid.p, ver.p, sizeof mid.p) == 0,
             "midpoint and verlet bases differ on a gravity-only model "
             "(worst |dq| %.3e, |dp| %.3e)", worst(mid.q, ver.q),
             worst(mid.p, ver.p));
    /* 3. the k = 0 spring is inert under the multiplier Newton */
    RC_CHECK(memcmp(ver.q, ver_k0.q, sizeof ver.q) == 0 &&
                 memcmp(ver.p, ver_k0.p, sizeof ver.p) == 0,
             "verlet base: a spring of stiffness 0 changed the bits");
    /* 2. the (N + m) Newton and the multiplier Newton on one problem */
    dq = worst(mid.q, mid_k0.q);
    dp = worst(mid.p, mid_k0.p);
    printf("midpoint base, multiplier Newton vs (N + m) Newton: worst "
           "|dq| %.3e, |dp| %.3e over %d steps\n", dq, dp, NSTEPS);
    RC_CHECK(dq <= TOL_SOLVERS && dp <= TOL_SOLVERS,
             "the two midpoint solvers differ: |dq| %.3e, |dp| %.3e", dq, dp);
    RC_CHECK(memcmp(mid.refl, mid_k0.refl, sizeof mid.refl) == 0,
             "the two midpoint solvers reflect at different steps");
    RC_CHECK(dq > 0.0 || dp > 0.0,
             "the k = 0 spring did not send the midpoint step to the "
             "(N + m) Newton (identical bits): case 2 compared nothing");
    return rc_test_finish("test_gvi_linear");
}

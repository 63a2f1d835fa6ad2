/* Baseline integrators, so users can compare (DESIGN §4):
 *
 *  - CVA, collision Verlet (seed 001 Algorithm 1 with Phi = Störmer–
 *    Verlet): Störmer–Verlet sub-steps; when a sub-step would violate an
 *    inequality constraint, the earliest constraint time inside it is
 *    found, the state is moved there, the momenta are reflected, and the
 *    remainder of the step follows.  MCVA (Bond & Leimkuhler) is the same
 *    with reflections that conserve the modified Hamiltonian H~.
 *  - Direct substitution (seed 000 App. B.1.1, B.2): the implicit
 *    midpoint rule with the constraint force evaluated at the end point
 *    (direct-endpoint) or at the midpoint (direct-midpoint), i.e. the
 *    constrained minimisation of eq. 75, solved as a complementarity
 *    problem by the same Newton/active-set solver as the GVI position
 *    update, and the momentum of eq. 76.
 *
 * Both reuse the GVI machinery (gvi_impl.h): constraint evaluation,
 * generalized reflections, the constrained Newton solve. */
#include <math.h>
#include <string.h>

#include "gvi_impl.h"

/* ------------------------------------------------------------------ */
/* Collision Verlet.                                                   */

/* The Störmer–Verlet sub-step of length s from (q, p) with the force at
 * q frozen (w->g0): q(s) = q + s v - s^2/2 a, v = M^-1 p, a = M^-1 grad
 * V(q).  Every position along a sub-step is therefore a quadratic
 * polynomial in s, and so is every wall or plane constraint.  With
 * equality constraints the sub-step is RATTLE's (the multipliers of the
 * equalities solved for this s), no longer a polynomial: then every
 * constraint is found by sampling.  Leaves the sub-step's constraint
 * impulse in w->imp. */
static rc_status rc_cva_position(rc_system *sys, const double *q,
                                 const double *p, double s, double *out,
                                 int *iters)
{
    struct rc_gvi_work *w = sys->gvi;
    int i;
    rc_status st;
    double h = sys->integ.dt;
    for (i = 0; i < w->N; ++i)
        out[i] = q[i] + s * sys->inv_mass_c[i] * (p[i] - 0.5 * s * w->g0[i]);
    if (w->neq == 0 || s == 0.0)
        return RC_OK;
    /* the constrained Newton solve takes its step from integ.dt */
    sys->integ.dt = s;
    st = rc_gvi_newton(sys, q, p, NULL, 0, out, iters);
    sys->integ.dt = h;
    return st;
}

/* Smallest root in (0, tau] of c + b s + a s^2 where the polynomial goes
 * from >= 0 to < 0 (derivative b + 2 a s < 0); +inf if none.  Stable
 * quadratic formula. */
static double rc_cva_quadratic_entry(double a, double b, double c, double tau)
{
    double r[2], best = INFINITY;
    int k, nr = 0;
    if (a == 0.0) {
        if (b < 0.0)
            r[nr++] = -c / b;
    } else {
        double disc = b * b - 4.0 * a * c, qq;
        if (disc < 0.0)
            return INFINITY;
        qq = -0.5 * (b + (b >= 0.0 ? sqrt(disc) : -sqrt(disc)));
        if (qq != 0.0) {
            r[nr++] = qq / a;
            r[nr++] = c / qq;
        } else {
            r[nr++] = 0.0;
        }
    }
    for (k = 0; k < nr; ++k)
        if (r[k] >= 0.0 && r[k] <= tau && b + 2.0 * a * r[k] < 0.0 &&
            r[k] < best)
            best = r[k];
    return best;
}

/* First time in (0, tau] at which inequality term k is entered along the
 * sub-step; +inf if none.  qend is the position at s = tau.
 *  - Walls without equalities: the exact root of the quadratic.
 *  - Otherwise: if g stays positive at both ends and a quadratic through
 *    g(0), g'(0) and g(tau) stays positive in between, no entry;
 *    else g is sampled at RC_CVA_SAMPLES points to bracket the first
 *    entry and bisected to round-off.  A grazing excursion that both
 *    tests miss (shorter than tau / RC_CVA_SAMPLES, or hidden from the
 *    quadratic model) is missed: the documented limit of this baseline.
 * A term that starts inside (g < 0, e.g. -1e-17 after the reflection
 * that ended the previous sub-step) counts as entered now only if it is
 * approaching; otherwise the search looks past its exit. */
#define RC_CVA_SAMPLES 32
static rc_status rc_cva_entry(rc_system *sys, int k, const double *q,
                              const double *p, double tau, const double *qend,
                              int *evals, double *entry)
{
    struct rc_gvi_work *w = sys->gvi;
    const rc_k_constraint *c = &sys->con[k];
    double *qs = w->t2, lo, hi, g0, g0dot, gend;
    int i, it, inside;
    rc_status st;
    *entry = INFINITY;
    if (c->type == RC_K_WALL && w->neq == 0) {
        /* g(s) = n.q_i(s) - offset - r_i: c0 + b s + a s^2 */
        int d = sys->dim, j;
        double c0 = rc_con_value(sys, k, q), b = 0.0, a = 0.0;
        for (j = 0; j < d; ++j) {
            b += c->a[j] * p[c->i * d + j] * sys->inv_mass[c->i];
            a -= 0.5 * c->a[j] * w->g0[c->i * d + j] * sys->inv_mass[c->i];
        }
        ++*evals;
        /* inside (or on the wall) and approaching, or at rest on it
         * and pushed in: entered now */
        if (c0 <= 0.0 && (b < 0.0 || (b == 0.0 && a < 0.0)))
            *entry = 0.0;
        else /* the first entering root; an exit root is skipped */
            *entry = rc_cva_quadratic_entry(a, b, c0, tau);
        return RC_OK;
    }
    g0 = rc_con_value(sys, k, q);
    g0dot = rc_con_speed(sys, k, q, p);
    gend = rc_con_value(sys, k, qend);
    if (g0 < 0.0 && g0dot < 0.0) {
        *entry = 0.0; /* inside and approaching: now */
        return RC_OK;
    }
    if (g0 >= 0.0 && gend >= 0.0) {
        /* quadratic model g0 + g0dot s + cc s^2 through g(tau) */
        double cc = (gend - g0 - g0dot * tau) / (tau * tau), smin, gmin;
        smin = cc > 0.0 ? -g0dot / (2.0 * cc) : -1.0;
        gmin = smin > 0.0 && smin < tau
                   ? g0 + g0dot * smin + cc * smin * smin
                   : fmin(g0, gend);
        if (gmin > 0.0)
            return RC_OK;
    }
    lo = 0.0;
    inside = g0 < 0.0; /* inside but leaving: look past the exit */
    for (i = 1; i <= RC_CVA_SAMPLES; ++i) {
        double s = tau * i / RC_CVA_SAMPLES, g;
        if ((st = rc_cva_position(sys, q, p, s, qs, evals)) != RC_OK)
            return st;
        g = rc_con_value(sys, k, qs);
        ++*evals;
        if (inside) {
            if (g >= 0.0) {
                inside = 0;
                lo = s;
            }
            continue;
        }
        if (g < 0.0) {
            hi = s;
            /* bisect [lo, hi]: g(lo) >= 0 > g(hi), to round-off */
            for (it = 0; it < 200 && hi - lo > 4.0 * 2.2e-16 * tau; ++it) {
                double mid = 0.5 * (lo + hi);
                if ((st = rc_cva_position(sys, q, p, mid, qs, evals)) != RC_OK)
                    return st;
                ++*evals;
                if (rc_con_value(sys, k, qs) >= 0.0)
                    lo = mid;
                else
                    hi = mid;
            }
            *entry = lo;
            return RC_OK;
        }
        lo = s;
    }
    return RC_OK;
}

rc_status rc_step_cva_(rc_system *sys)
{
    struct rc_gvi_work *w = sys->gvi;
    rc_k_model model = rc_system_model_(sys);
    double *q = sys->q, *p = sys->p, h = sys->integ.dt, tau = h;
    int N = w->N, i, a, events = 0, passes = 0, evals = 0;
    rc_status st = RC_OK;

    /* keep the start of the step: a failed step leaves the state alone */
    memcpy(w->backup, q, sizeof(double) * (size_t)N);
    memcpy(w->backup + N, p, sizeof(double) * (size_t)N);
    while (tau > 0.0) {
        double sstar = INFINITY;
        rc_cpu_gradient(model, q, w->g0, sys->threads);
        /* where the whole remaining sub-step would end */
        if ((st = rc_cva_position(sys, q, p, tau, w->qp, &evals)) != RC_OK)
            break;
        for (a = 0; a < w->nineq; ++a) {
            double s;
            if ((st = rc_cva_entry(sys, w->ineq[a], q, p, tau, w->qp, &evals,
                                   &s)) != RC_OK)
                break;
            if (s < sstar)
                sstar = s;
        }
        if (st != RC_OK)
            break;
        if (!(sstar <= tau))
            sstar = tau;
        /* velocity-Verlet (RATTLE with equalities) sub-step of length
         * sstar */
        if (sstar < tau &&
            (st = rc_cva_position(sys, q, p, sstar, w->qp, &evals)) != RC_OK)
            break;
        if (w->neq == 0) {
            rc_cpu_gradient(model, w->qp, w->g1, sys->threads);
            for (i = 0; i < N; ++i)
                p[i] -= 0.5 * sstar * (w->g0[i] + w->g1[i]);
        } else if (sstar > 0.0) {
            /* RATTLE's momentum: kick with the constraint impulse of the
             * position solve, then project on the equalities at x */
            double h = sys->integ.dt;
            if (sstar == tau &&
                (st = rc_cva_position(sys, q, p, sstar, w->qp, &evals)) !=
                    RC_OK)
                break; /* refresh w->imp: the entry search overwrote it */
            sys->integ.dt = sstar;
            st = rc_gvi_momentum(sys, q, p, w->qp, NULL, 0, w->y);
            sys->integ.dt = h;
            if (st != RC_OK)
                break;
            memcpy(p, w->y, sizeof(double) * (size_t)N);
        }
        memcpy(q, w->qp, sizeof(double) * (size_t)N);
        tau -= sstar;
        if (tau <= 1e-14 * h)
            break; /* the step ended on (or within round-off of) an event */
        /* an event: reflect against every term in contact */
        {
            int nc = 0, np = 0;
            if (++events > sys->integ.max_events) {
                st = rc_fail_(sys, RC_ERR_ZENO,
                              "%s: more than %d events in step %ld (t = %g): "
                              "Zeno behaviour; reduce dt or raise "
                              "integrator.max_events",
                              rc_method_name(sys->integ.method),
                              sys->integ.max_events, sys->steps + 1,
                              sys->time);
                break;
            }
            for (a = 0; a < w->nineq; ++a)
                if (rc_con_value(sys, w->ineq[a], q) <= sys->eps_g)
                    w->setA[nc++] = w->ineq[a];
            if ((st = rc_gvi_reflect(sys, q, p, w->setA, nc,
                                     sys->integ.max_reflection_passes,
                                     &np)) != RC_OK)
                break;
            passes += np;
            /* MCVA: the H~ mirror uses the metric M^-1 + h^2/6 M^-1 Hess V
             * M^-1, whose normal "velocity" can disagree in sign with the
             * physical one at a grazing impact of coupled particles; then
             * the contact would stay approaching and the particle pass
             * through.  There the H mirror is used instead (counted in
             * the reflections column like any pass). */
            if (sys->integ.method == RC_METHOD_MCVA) {
                int still = 0;
                for (a = 0; a < nc; ++a)
                    if (rc_con_speed(sys, w->setA[a], q, p) < -sys->eps_v)
                        still = 1;
                if (still) {
                    w->energy_override = RC_ENERGY_HAMILTONIAN;
                    st = rc_gvi_reflect(sys, q, p, w->setA, nc,
                                        sys->integ.max_reflection_passes,
                                        &np);
                    w->energy_override = -1;
                    if (st != RC_OK)
                        break;
                    passes += np;
                }
            }
        }
    }
    if (st == RC_OK)
        for (i = 0; i < N; ++i)
            if (!isfinite(q[i]) || !isfinite(p[i])) {
                st = rc_fail_(sys, RC_ERR_NONFINITE,
                              "state became non-finite at step %ld (t = %g)",
                              sys->steps + 1, sys->time + h);
                break;
            }
    if (st != RC_OK) {
        memcpy(q, w->backup, sizeof(double) * (size_t)N);
        memcpy(p, w->backup + N, sizeof(double) * (size_t)N);
        return st;
    }
    sys->last_active = events;
    sys->last_reflections = passes;
    sys->last_iterations = evals;
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Direct substitution.                                                */

rc_status rc_step_direct_(rc_system *sys)
{
    struct rc_gvi_work *w = sys->gvi;
    rc_k_model model = rc_system_model_(sys);
    double *q = sys->q, *p = sys->p, h = sys->integ.dt;
    int N = w->N, i, a, nS = 0, nact = 0, iters = 0;
    rc_status st;

    /* predictor: the unconstrained midpoint step (equalities held) */
    rc_cpu_gradient(model, q, w->g0, sys->threads);
    for (i = 0; i < N; ++i)
        w->qp[i] = q[i] + h * sys->inv_mass_c[i] * (p[i] - 0.5 * h * w->g0[i]);
    if ((st = rc_gvi_newton(sys, q, p, NULL, 0, w->qp, &iters)) != RC_OK)
        return st;
    /* candidates: terms the free step violates (where the method
     * evaluates them) or that are in contact now */
    for (a = 0; a < w->nineq; ++a) {
        int k = w->ineq[a];
        double gp;
        if (w->colmode == RC_COLS_AT_MID) {
            for (i = 0; i < N; ++i)
                w->t1[i] = 0.5 * (q[i] + w->qp[i]);
            gp = rc_con_value(sys, k, w->t1);
        } else {
            gp = rc_con_value(sys, k, w->qp);
        }
        if (gp <= 0.0 || rc_con_value(sys, k, q) <= sys->eps_g)
            w->setS[nS++] = k;
    }
    /* eq. 75 as complementarity: 0 <= lam _|_ g(y) >= 0 */
    if ((st = rc_gvi_position(sys, q, p, w->setS, nS, w->x, &nact,
                              &iters)) != RC_OK)
        return st;
    /* eq. 76: p' = 2/h M (x - q) - p = p - h grad V(mid) + 2 C mu */
    for (i = 0; i < N; ++i)
        w->t1[i] = 0.5 * (q[i] + w->x[i]);
    rc_cpu_gradient(model, w->t1, w->g1, sys->threads);
    for (i = 0; i < N; ++i)
        w->y[i] = p[i] - h * w->g1[i] + 2.0 * w->imp[i];
    return rc_gvi_commit(sys, nact, 0, iters);
}

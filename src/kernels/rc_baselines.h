/* The baseline integrators' steps (DESIGN §4), written once for the
 * single-system path (src/host/baselines.c), the ensemble batch engine
 * (src/host/batch.c, through rc_k_member_run) and the GPU (one thread a
 * member), on the GVI kernel's view and scratch (rc_gvi.h):
 *
 *  - CVA, collision Verlet (seed 001 Algorithm 1 with Phi = Störmer–
 *    Verlet): Störmer–Verlet sub-steps; when a sub-step would violate an
 *    inequality constraint, the earliest constraint time inside it is
 *    found, the state is moved there, the momenta are reflected, and the
 *    remainder of the step follows.  MCVA (Bond & Leimkuhler) is the same
 *    with reflections that conserve the modified Hamiltonian H~ (the
 *    view's `modified`).
 *  - Direct substitution (seed 000 App. B.1.1, B.2): the implicit
 *    midpoint rule with the constraint force evaluated at the end point
 *    (direct-endpoint) or at the midpoint (direct-midpoint; the view's
 *    colmode), i.e. the constrained minimisation of eq. 75, solved as a
 *    complementarity problem by the same Newton/active-set solver as the
 *    GVI position update, and the momentum of eq. 76.
 *
 * Both are built from the GVI pieces: constraint evaluation, generalized
 * reflections, the constrained Newton solve.  As rc_k_gvi_step, a step
 * reads (q, p), leaves the new state in (w->x, w->y) and returns an
 * RC_K_GVI_* code; nothing allocates, nothing prints.  Unlike GVI's, the
 * baselines' steps leave q and p alone. */
#ifndef RC_BASELINES_H
#define RC_BASELINES_H

#include "rc_constraint.h"
#include "rc_gvi.h"
#include "rc_hd.h"
#include "rc_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Collision Verlet.                                                   */

/* The Störmer–Verlet sub-step of length s from (q, p) with the force at
 * q frozen (w->g0): q(s) = q + s v - s^2/2 a, v = M^-1 p, a = M^-1 grad
 * V(q).  Every position along a sub-step is therefore a quadratic
 * polynomial in s, and so is every wall or plane constraint.  With
 * equality constraints the sub-step is RATTLE's (the multipliers of the
 * equalities solved for this s: the Newton solve with step s), no longer
 * a polynomial: then every constraint is found by sampling.  Leaves the
 * sub-step's constraint impulse in w->imp. */
RC_HD static inline int rc_k_cva_position(const rc_k_gvi *g,
                                          rc_k_gvi_work *w, const double *q,
                                          const double *p, double s,
                                          double *out, int *iters)
{
    rc_k_gvi gs;
    int i;
    for (i = 0; i < g->N; ++i)
        out[i] = q[i] + s * g->inv_mass_c[i] * (p[i] - 0.5 * s * w->g0[i]);
    if (g->neq == 0 || s == 0.0)
        return RC_K_GVI_OK;
    gs = *g;
    gs.h = s;
    return rc_k_gvi_newton(&gs, w, q, p, (const int *)0, 0, out, iters);
}

/* Smallest root in (0, tau] of c + b s + a s^2 where the polynomial goes
 * from >= 0 to < 0 (derivative b + 2 a s < 0); +inf if none.  Stable
 * quadratic formula. */
RC_HD static inline double rc_k_cva_quadratic_entry(double a, double b,
                                                    double c, double tau)
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
        qq = -0.5 * (b + (b >= 0.0 ? rc_sqrt(disc) : -rc_sqrt(disc)));
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
 * approaching; otherwise the search looks past its exit.  Uses t2. */
#define RC_CVA_SAMPLES 32
RC_HD static inline int rc_k_cva_entry(const rc_k_gvi *g, rc_k_gvi_work *w,
                                       int k, const double *q,
                                       const double *p, double tau,
                                       const double *qend, int *evals,
                                       double *entry)
{
    const rc_k_constraint *c = &g->con[k];
    double *qs = w->t2, lo, hi, g0, g0dot, gend;
    int i, it, inside, code;
    *entry = INFINITY;
    if (c->type == RC_K_WALL && g->neq == 0) {
        /* g(s) = n.q_i(s) - offset - r_i: c0 + b s + a s^2 */
        int d = g->m.dim, j;
        double c0 = rc_k_gvi_value(g, k, q), b = 0.0, a = 0.0;
        for (j = 0; j < d; ++j) {
            b += c->a[j] * p[c->i * d + j] * g->m.inv_mass[c->i];
            a -= 0.5 * c->a[j] * w->g0[c->i * d + j] * g->m.inv_mass[c->i];
        }
        ++*evals;
        /* inside (or on the wall) and approaching, or at rest on it
         * and pushed in: entered now */
        if (c0 <= 0.0 && (b < 0.0 || (b == 0.0 && a < 0.0)))
            *entry = 0.0;
        else /* the first entering root; an exit root is skipped */
            *entry = rc_k_cva_quadratic_entry(a, b, c0, tau);
        return RC_K_GVI_OK;
    }
    g0 = rc_k_gvi_value(g, k, q);
    g0dot = rc_k_gvi_speed(g, k, q, p);
    gend = rc_k_gvi_value(g, k, qend);
    if (g0 < 0.0 && g0dot < 0.0) {
        *entry = 0.0; /* inside and approaching: now */
        return RC_K_GVI_OK;
    }
    if (g0 >= 0.0 && gend >= 0.0) {
        /* quadratic model g0 + g0dot s + cc s^2 through g(tau) */
        double cc = (gend - g0 - g0dot * tau) / (tau * tau), smin, gmin;
        smin = cc > 0.0 ? -g0dot / (2.0 * cc) : -1.0;
        gmin = smin > 0.0 && smin < tau
                   ? g0 + g0dot * smin + cc * smin * smin
                   : rc_fmin(g0, gend);
        if (gmin > 0.0)
            return RC_K_GVI_OK;
    }
    lo = 0.0;
    inside = g0 < 0.0; /* inside but leaving: look past the exit */
    for (i = 1; i <= RC_CVA_SAMPLES; ++i) {
        double s = tau * i / RC_CVA_SAMPLES, gs;
        if ((code = rc_k_cva_position(g, w, q, p, s, qs, evals)) !=
            RC_K_GVI_OK)
            return code;
        gs = rc_k_gvi_value(g, k, qs);
        ++*evals;
        if (inside) {
            if (gs >= 0.0) {
                inside = 0;
                lo = s;
            }
            continue;
        }
        if (gs < 0.0) {
            hi = s;
            /* bisect [lo, hi]: g(lo) >= 0 > g(hi), to round-off */
            for (it = 0; it < 200 && hi - lo > 4.0 * 2.2e-16 * tau; ++it) {
                double mid = 0.5 * (lo + hi);
                if ((code = rc_k_cva_position(g, w, q, p, mid, qs, evals)) !=
                    RC_K_GVI_OK)
                    return code;
                ++*evals;
                if (rc_k_gvi_value(g, k, qs) >= 0.0)
                    lo = mid;
                else
                    hi = mid;
            }
            *entry = lo;
            return RC_K_GVI_OK;
        }
        lo = s;
    }
    return RC_K_GVI_OK;
}

/* One CVA or MCVA step from (q0, p0): sub-steps to each event, a
 * reflection at each, the remainder of the step after the last.  The
 * state being stepped is (w->x, w->y) throughout; info: active = events,
 * reflections = reflection passes, iterations = constraint evaluations
 * and Newton iterations. */
RC_HD static inline int rc_k_cva_step(const rc_k_gvi *g, rc_k_gvi_work *w,
                                      const double *q0, const double *p0,
                                      rc_k_gvi_step_info *info)
{
    double *q = w->x, *p = w->y, h = g->h, tau = h;
    int N = g->N, i, a, events = 0, passes = 0, evals = 0, code;

    for (i = 0; i < N; ++i) {
        q[i] = q0[i];
        p[i] = p0[i];
    }
    while (tau > 0.0) {
        double sstar = INFINITY;
        rc_k_gvi_gradient(g, q, w->g0);
        /* where the whole remaining sub-step would end */
        if ((code = rc_k_cva_position(g, w, q, p, tau, w->qp, &evals)) !=
            RC_K_GVI_OK)
            return code;
        for (a = 0; a < g->nineq; ++a) {
            double s;
            if ((code = rc_k_cva_entry(g, w, g->ineq[a], q, p, tau, w->qp,
                                       &evals, &s)) != RC_K_GVI_OK)
                return code;
            if (s < sstar)
                sstar = s;
        }
        if (!(sstar <= tau))
            sstar = tau;
        /* velocity-Verlet (RATTLE with equalities) sub-step of length
         * sstar */
        if (sstar < tau &&
            (code = rc_k_cva_position(g, w, q, p, sstar, w->qp, &evals)) !=
                RC_K_GVI_OK)
            return code;
        if (g->neq == 0) {
            rc_k_gvi_gradient(g, w->qp, w->g1);
            for (i = 0; i < N; ++i)
                p[i] -= 0.5 * sstar * (w->g0[i] + w->g1[i]);
        } else if (sstar > 0.0) {
            /* RATTLE's momentum (the momentum update with step sstar):
             * kick with the constraint impulse of the position solve,
             * then project on the equalities at the new position */
            rc_k_gvi gs = *g;
            if (sstar == tau &&
                (code = rc_k_cva_position(g, w, q, p, sstar, w->qp,
                                          &evals)) != RC_K_GVI_OK)
                return code; /* refresh w->imp: the entry search
                                overwrote it */
            gs.h = sstar;
            /* into t0 (the momentum update does not use it), not over p,
             * which it reads */
            if ((code = rc_k_gvi_momentum(&gs, w, q, p, w->qp, (const int *)0,
                                          0, w->t0)) != RC_K_GVI_OK)
                return code;
            for (i = 0; i < N; ++i)
                p[i] = w->t0[i];
        }
        for (i = 0; i < N; ++i)
            q[i] = w->qp[i];
        tau -= sstar;
        if (tau <= 1e-14 * h)
            break; /* the step ended on (or within round-off of) an event */
        /* an event: reflect against every term in contact */
        {
            int nc = 0, np = 0;
            if (++events > g->max_events) {
                w->fail_detail = g->max_events;
                return RC_K_GVI_ZENO;
            }
            for (a = 0; a < g->nineq; ++a)
                if (rc_k_gvi_value(g, g->ineq[a], q) <= g->eps_g)
                    w->setA[nc++] = g->ineq[a];
            if ((code = rc_k_gvi_reflect(g, w, q, p, w->setA, nc,
                                         g->max_passes, &np)) != RC_K_GVI_OK)
                return code;
            passes += np;
            /* MCVA: the H~ mirror uses the metric M^-1 + h^2/6 M^-1 Hess V
             * M^-1, whose normal "velocity" can disagree in sign with the
             * physical one at a grazing impact of coupled particles; then
             * the contact would stay approaching and the particle pass
             * through.  There the H mirror is used instead (counted in
             * the reflections column like any pass). */
            if (g->method == RC_K_METHOD_MCVA) {
                int still = 0;
                for (a = 0; a < nc; ++a)
                    if (rc_k_gvi_speed(g, w->setA[a], q, p) < -g->eps_v)
                        still = 1;
                if (still) {
                    rc_k_gvi gh = *g;
                    gh.modified = 0;
                    if ((code = rc_k_gvi_reflect(&gh, w, q, p, w->setA, nc,
                                                 g->max_passes, &np)) !=
                        RC_K_GVI_OK)
                        return code;
                    passes += np;
                }
            }
        }
    }
    for (i = 0; i < N; ++i)
        if (!rc_isfinite(q[i]) || !rc_isfinite(p[i]))
            return RC_K_GVI_NONFINITE;
    info->active = events;
    info->reflections = passes;
    info->iterations = evals;
    return RC_K_GVI_OK;
}

/* ------------------------------------------------------------------ */
/* Direct substitution.                                                */

/* One direct-endpoint or direct-midpoint step (the view's colmode says
 * where the constraint forces act).  info: active = terms held by the
 * complementarity, no reflections, Newton iterations. */
RC_HD static inline int rc_k_direct_step(const rc_k_gvi *g, rc_k_gvi_work *w,
                                         const double *q, const double *p,
                                         rc_k_gvi_step_info *info)
{
    int N = g->N, i, a, nS = 0, nact = 0, iters = 0, code;
    double h = g->h;

    /* predictor: the unconstrained midpoint step (equalities held) */
    rc_k_gvi_gradient(g, q, w->g0);
    for (i = 0; i < N; ++i)
        w->qp[i] = q[i] + h * g->inv_mass_c[i] * (p[i] - 0.5 * h * w->g0[i]);
    if ((code = rc_k_gvi_newton(g, w, q, p, (const int *)0, 0, w->qp,
                                &iters)) != RC_K_GVI_OK)
        return code;
    /* candidates: terms the free step violates (where the method
     * evaluates them) or that are in contact now */
    for (a = 0; a < g->nineq; ++a) {
        int k = g->ineq[a];
        double gp;
        if (g->colmode == RC_COLS_AT_MID) {
            for (i = 0; i < N; ++i)
                w->t1[i] = 0.5 * (q[i] + w->qp[i]);
            gp = rc_k_gvi_value(g, k, w->t1);
        } else {
            gp = rc_k_gvi_value(g, k, w->qp);
        }
        if (gp <= 0.0 || rc_k_gvi_value(g, k, q) <= g->eps_g)
            w->setS[nS++] = k;
    }
    /* eq. 75 as complementarity: 0 <= lam _|_ g(y) >= 0 */
    if ((code = rc_k_gvi_position(g, w, q, p, w->setS, nS, w->x, &nact,
                                  &iters)) != RC_K_GVI_OK)
        return code;
    /* eq. 76: p' = 2/h M (x - q) - p = p - h grad V(mid) + 2 C mu */
    for (i = 0; i < N; ++i)
        w->t1[i] = 0.5 * (q[i] + w->x[i]);
    rc_k_gvi_gradient(g, w->t1, w->g1);
    for (i = 0; i < N; ++i)
        w->y[i] = p[i] - h * w->g1[i] + 2.0 * w->imp[i];
    for (i = 0; i < N; ++i)
        if (!rc_isfinite(w->x[i]) || !rc_isfinite(w->y[i]))
            return RC_K_GVI_NONFINITE;
    info->active = nact;
    info->reflections = 0;
    info->iterations = iters;
    return RC_K_GVI_OK;
}

/* ------------------------------------------------------------------ */
/* The step of the view's method.                                      */

/* One step of g->method from (q, p), the new state in (w->x, w->y).  GVI
 * reflects p in place (rc_k_gvi_step); the baselines leave it. */
RC_HD static inline int rc_k_method_step(const rc_k_gvi *g, rc_k_gvi_work *w,
                                         const double *q, double *p,
                                         rc_k_gvi_step_info *info)
{
    switch (g->method) {
    case RC_K_METHOD_CVA:
    case RC_K_METHOD_MCVA:
        return rc_k_cva_step(g, w, q, p, info);
    case RC_K_METHOD_DIRECT_ENDPOINT:
    case RC_K_METHOD_DIRECT_MIDPOINT:
        return rc_k_direct_step(g, w, q, p, info);
    default:
        return rc_k_gvi_step(g, w, q, p, info);
    }
}

#ifdef __cplusplus
}
#endif
#endif

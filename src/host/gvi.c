/* GVI: Kaufman & Pai's generalized variational integrator (seed 000,
 * Algorithm 1, with the bilateral extension of §7.2), DESIGN §3.
 *
 * One step from (q, p):
 *   1. predictor q^p: the unconstrained base step (eq. 50);
 *   2. extended active set A = {g(q^p) <= 0} u {g(q) <= eps_g};
 *   3. reflection of p against A at q (Algorithm 2 or 3), with the
 *      gradients projected on the equality manifold's cotangent space
 *      (eq. 47) and the metric of the conserved energy;
 *   4. smooth set S = {k in A : g_k(q) <= eps_g, |grad g_k . M^-1 p| <=
 *      eps_v};
 *   5. position update D1 Ld(q,x) + p + G_S(q) lam + F(q) nu = 0,
 *      0 <= lam _|_ g_S(x) >= 0, f(x) = 0 (eq. 48): Newton on (x, lam, nu)
 *      inside an active-set loop for the complementarity;
 *   6. momentum update p' = D2 Ld(q,x) + G_S'(x) mu + F(x) xi with
 *      G_S'(x)^T M^-1 p' = 0 for the members of S still active and
 *      F(x)^T M^-1 p' = 0 (eq. 49; RATTLE's velocity projection).
 *
 * Conventions: constraint gradients point into the admissible set, so a
 * positive multiplier pushes a particle away from the boundary.  The
 * discrete Lagrangians are the Verlet (eq. 52) and midpoint (eq. 51)
 * quadratures of L = 1/2 v^T M v - V(q):
 *   Verlet:   D1 Ld = -M (x-q)/h - h/2 grad V(q),
 *             D2 Ld =  M (x-q)/h - h/2 grad V(x);
 *   midpoint: D1 Ld = -M (x-q)/h - h/2 grad V((q+x)/2),
 *             D2 Ld =  M (x-q)/h - h/2 grad V((q+x)/2).
 * Dense linear algebra throughout: this is the small-system path (a few
 * hundred coordinates); large systems use islands (DESIGN §6).
 *
 * Three refinements of Algorithm 1, on unless integrator.seed_exact is
 * set; each was added for a failure measured on the seed's examples:
 *   R1. Equality constraints are part of the predictor (they are "active
 *       at all times", §7.2).  The free drift misses contacts that a rod
 *       or pendulum swings a sphere into: LJ chain overlaps of 2e-3
 *       (0.7 % of a radius) without it, none with it.
 *   R2. The extended set is closed under the reflected predictor: after
 *       a reflection the predictor is re-evaluated with the new momenta
 *       and terms it now finds violated join A, until none does.  An
 *       impulse passed along a row (Newton's cradle) otherwise reaches a
 *       neighbour a hair beyond eps_g one step late, after an overlap of
 *       |v| h (1e-2 at dt = 5e-3).  Likewise a term that the position
 *       update ends up violating joins A and the step is redone from the
 *       reflection (spring and sphere: an overlap of 1.2e-3 otherwise).
 *   R3. A term of A that the reflected predictor still finds violated
 *       cannot be resolved by a reflection in this step (the force, not
 *       the velocity, drives it through), so it joins S: the position
 *       update's complementarity keeps it from passing through, and if it
 *       ends held (multiplier > 0) the momentum update removes its normal
 *       speed as for a resting contact.  Without it a particle pressed
 *       onto a curved wall chatters outside it (spring and sphere at
 *       dt = 0.5: penetration 0.057 and a 19 % energy drift; with it, no
 *       penetration and 2.6 %). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gvi_impl.h"
#include "../kernels/rc_dense.h"
#include "../kernels/rc_nnls.h"

/* ------------------------------------------------------------------ */
/* Constraint evaluation on dense vectors.                             */

/* Value and sparse gradient blocks of term k at q, as the integrator
 * sees it: the exact constraint, or for GVI with linearized constraints
 * (an inequality, seed 000 Fig. 8(d)) its linearization about the
 * initial configuration q0, g(q0) + grad g(q0).(q - q0) — the reference-
 * configuration gap of small-displacement contact mechanics.  Its normal
 * is fixed in space, so it is not rotation invariant: that is the point
 * of the comparison. */
static int rc_con_eval(const rc_system *sys, int k, const double *q,
                       double *v, int *idx, double grad[2][3])
{
    const rc_k_constraint *c = &sys->con[k];
    int nb, b, j, d = sys->dim;
    if (sys->gvi && sys->gvi->linearized && !rc_k_constraint_is_equality(c)) {
        const double *q0 = sys->gvi->q0;
        nb = rc_k_constraint_eval(c, d, q0, sys->radius, v, idx, grad);
        for (b = 0; b < nb; ++b)
            for (j = 0; j < d; ++j)
                *v += grad[b][j] * (q[idx[b] * d + j] - q0[idx[b] * d + j]);
        return nb;
    }
    return rc_k_constraint_eval(c, d, q, sys->radius, v, idx, grad);
}

double rc_con_value(const rc_system *sys, int k, const double *q)
{
    int idx[2];
    double grad[2][3], v;
    rc_con_eval(sys, k, q, &v, idx, grad);
    return v;
}

/* col (N doubles) = grad of constraint k at q. */
double rc_con_column(const rc_system *sys, int k, const double *q,
                     double *col)
{
    int idx[2], nb, b, c, d = sys->dim;
    double grad[2][3], v;
    memset(col, 0, sizeof(double) * (size_t)sys->n * (size_t)d);
    nb = rc_con_eval(sys, k, q, &v, idx, grad);
    for (b = 0; b < nb; ++b)
        for (c = 0; c < d; ++c)
            col[idx[b] * d + c] += grad[b][c];
    return v;
}

/* grad g_k(q) . M^-1 p, from the sparse blocks. */
double rc_con_speed(const rc_system *sys, int k, const double *q,
                    const double *p)
{
    int idx[2], nb, b, c, d = sys->dim;
    double grad[2][3], v, s = 0.0;
    nb = rc_con_eval(sys, k, q, &v, idx, grad);
    for (b = 0; b < nb; ++b)
        for (c = 0; c < d; ++c)
            s += grad[b][c] * p[idx[b] * d + c] * sys->inv_mass[idx[b]];
    return s;
}

void rc_constraint_extremes_(const rc_system *sys, const double *q,
                             double *min_gap, double *max_eq)
{
    int k;
    *min_gap = INFINITY;
    *max_eq = 0.0;
    for (k = 0; k < sys->ncon; ++k) {
        /* the true constraint, also when the integrator linearizes */
        int idx[2];
        double grad[2][3], v;
        rc_k_constraint_eval(&sys->con[k], sys->dim, q, sys->radius, &v, idx,
                             grad);
        if (rc_k_constraint_is_equality(&sys->con[k]))
            *max_eq = fmax(*max_eq, fabs(v));
        else
            *min_gap = fmin(*min_gap, v);
    }
}

/* ------------------------------------------------------------------ */
/* Scratch.                                                            */

void rc_gvi_free_(rc_system *sys)
{
    struct rc_gvi_work *w = sys->gvi;
    if (!w)
        return;
    free(w->qp);
    free(w->val);
    free(w->cols);
    free(w->wcols);
    free(w->gram);
    free(w->bvec);
    free(w->nnls_w);
    free(w->nnls_iw);
    free(w->F);
    free(w->ftmf);
    free(w->fpiv);
    free(w->jac);
    free(w->rhs);
    free(w->jpiv);
    free(w->mcols);
    free(w->ineq);
    free(w->setA);
    free(w->mu);
    free(w->imp);
    free(w->q0);
    free(w->backup);
    free(w);
    sys->gvi = NULL;
}

#define RC_ALLOC(ptr, type, count)                                          \
    do {                                                                    \
        (ptr) = (type *)calloc((size_t)((count) > 0 ? (count) : 1),         \
                               sizeof(type));                               \
        if (!(ptr))                                                         \
            goto nomem;                                                     \
    } while (0)

/* Length scale: the largest of the radii, rod and pendulum lengths,
 * container radii and the initial configuration's extent. */
static double rc_length_scale(const rc_system *sys)
{
    int i, k, d = sys->dim;
    double ell = 0.0, c[3] = {0.0, 0.0, 0.0};
    for (i = 0; i < sys->n; ++i) {
        ell = fmax(ell, sys->radius[i]);
        for (k = 0; k < d; ++k)
            c[k] += sys->q[i * d + k] / sys->n;
    }
    for (i = 0; i < sys->n; ++i) {
        double s = 0.0;
        for (k = 0; k < d; ++k)
            s += (sys->q[i * d + k] - c[k]) * (sys->q[i * d + k] - c[k]);
        ell = fmax(ell, sqrt(s));
    }
    for (k = 0; k < sys->ncon; ++k) {
        const rc_k_constraint *cn = &sys->con[k];
        if (cn->type == RC_K_ROD || cn->type == RC_K_PENDULUM ||
            cn->type == RC_K_CONTAINER || cn->type == RC_K_OBSTACLE)
            ell = fmax(ell, cn->a[3]);
    }
    return ell > 0.0 ? ell : 1.0;
}

/* Speed scale: the initial rms speed sqrt(2T/M), or the speed one step
 * of the initial forces gives, or ell/h for a system at rest without
 * forces. */
static double rc_speed_scale(rc_system *sys, double ell)
{
    int i, k, d = sys->dim;
    double T = 0.0, mt = 0.0, a = 0.0, h = sys->integ.dt, v;
    rc_cpu_gradient(rc_system_model_(sys), sys->q, sys->grad, sys->threads);
    for (i = 0; i < sys->n; ++i) {
        double g2 = 0.0;
        mt += sys->mass[i];
        for (k = 0; k < d; ++k) {
            T += 0.5 * sys->p[i * d + k] * sys->p[i * d + k] *
                 sys->inv_mass[i];
            g2 += sys->grad[i * d + k] * sys->grad[i * d + k];
        }
        a = fmax(a, sqrt(g2) * sys->inv_mass[i]);
    }
    v = fmax(sqrt(2.0 * T / mt), h * a);
    return v > 0.0 ? v : ell / h;
}

rc_status rc_gvi_prepare_(rc_system *sys)
{
    struct rc_gvi_work *w;
    int N = sys->n * sys->dim, nc = sys->ncon, k, mm;
    if (!sys->have_integrator || !rc_method_uses_constraints_(sys->integ.method))
        return RC_OK;
    w = (struct rc_gvi_work *)calloc(1, sizeof *w);
    if (!w)
        return rc_fail_(sys, RC_ERR_NOMEM, "out of memory");
    sys->gvi = w;
    w->N = N;
    w->nc = nc;
    w->neq = sys->n_eq;
    w->mmax = mm = sys->n_eq + N;
    RC_ALLOC(w->qp, double, 8 * N);
    w->x = w->qp + N;
    w->y = w->qp + 2 * N;
    w->g0 = w->qp + 3 * N;
    w->g1 = w->qp + 4 * N;
    w->t0 = w->qp + 5 * N;
    w->t1 = w->qp + 6 * N;
    w->t2 = w->qp + 7 * N;
    RC_ALLOC(w->val, double, nc);
    RC_ALLOC(w->cols, double, (long)N * nc);
    RC_ALLOC(w->wcols, double, (long)N * nc);
    RC_ALLOC(w->gram, double, (long)nc * nc);
    RC_ALLOC(w->bvec, double, 2 * nc);
    w->lam = w->bvec + nc;
    RC_ALLOC(w->nnls_w, double, rc_k_nnls_work_doubles(nc));
    RC_ALLOC(w->nnls_iw, int, rc_k_nnls_work_ints(nc));
    RC_ALLOC(w->F, double, (long)N * sys->n_eq);
    RC_ALLOC(w->ftmf, double, (long)sys->n_eq * sys->n_eq);
    RC_ALLOC(w->fpiv, int, sys->n_eq);
    RC_ALLOC(w->jac, double, (long)(N + mm) * (N + mm));
    RC_ALLOC(w->rhs, double, N + mm);
    RC_ALLOC(w->jpiv, int, N + mm);
    RC_ALLOC(w->mcols, double, (long)N * mm);
    RC_ALLOC(w->mu, double, mm);
    RC_ALLOC(w->imp, double, N);
    RC_ALLOC(w->q0, double, N);
    RC_ALLOC(w->backup, double, 2 * N);
    memcpy(w->q0, sys->q, sizeof(double) * (size_t)N);
    RC_ALLOC(w->ineq, int, 2 * nc);
    w->eq = w->ineq + nc;
    RC_ALLOC(w->setA, int, 5 * nc);
    w->setS = w->setA + nc;
    w->setV = w->setA + 2 * nc;
    w->active = w->setA + 3 * nc;
    w->inA = w->setA + 4 * nc;
    w->nineq = 0;
    {
        int ne = 0;
        for (k = 0; k < nc; ++k) {
            if (rc_k_constraint_is_equality(&sys->con[k]))
                w->eq[ne++] = k;
            else
                w->ineq[w->nineq++] = k;
        }
    }
    w->energy_override = -1;
    w->midpoint = sys->integ.base == RC_BASE_MIDPOINT;
    w->colmode = RC_COLS_AT_Q;
    w->linearized = sys->integ.method == RC_METHOD_GVI && sys->integ.linearized;
    if (sys->integ.method == RC_METHOD_CVA ||
        sys->integ.method == RC_METHOD_MCVA)
        w->midpoint = 0; /* collision Verlet is Störmer–Verlet based */
    if (sys->integ.method == RC_METHOD_DIRECT_ENDPOINT ||
        sys->integ.method == RC_METHOD_DIRECT_MIDPOINT) {
        /* Seed 000 App. B.1.1: implicit midpoint with the constraint
         * force at the end point or at the midpoint. */
        w->midpoint = 1;
        w->colmode = sys->integ.method == RC_METHOD_DIRECT_ENDPOINT
                         ? RC_COLS_AT_X
                         : RC_COLS_AT_MID;
    }
    w->length_scale = rc_length_scale(sys);
    w->speed_scale = rc_speed_scale(sys, w->length_scale);
    sys->eps_g = sys->integ.eps_g > 0.0 ? sys->integ.eps_g
                                        : 1e-9 * w->length_scale;
    sys->eps_v = sys->integ.eps_v > 0.0 ? sys->integ.eps_v
                                        : 1e-8 * w->speed_scale;
    return RC_OK;
nomem:
    rc_gvi_free_(sys);
    return rc_fail_(sys, RC_ERR_NOMEM,
                    "out of memory sizing GVI scratch (%d coordinates, %d "
                    "constraint terms)",
                    N, nc);
}

/* ------------------------------------------------------------------ */
/* Equality projection (eq. 47) and the reflection metric.             */

/* F = equality columns at q, and the LU factors of F^T M^-1 F. */
static rc_status rc_gvi_equalities_at(rc_system *sys, const double *q)
{
    struct rc_gvi_work *w = sys->gvi;
    int N = w->N, ne = w->neq, a, b, i;
    if (ne == 0)
        return RC_OK;
    for (a = 0; a < ne; ++a)
        rc_con_column(sys, w->eq[a], q, w->F + (long)a * N);
    for (a = 0; a < ne; ++a)
        for (b = 0; b < ne; ++b) {
            double s = 0.0;
            for (i = 0; i < N; ++i)
                s += w->F[(long)a * N + i] * sys->inv_mass_c[i] *
                     w->F[(long)b * N + i];
            w->ftmf[a * ne + b] = s;
        }
    /* factor once; rc_gvi_project solves with the factors per column */
    if (rc_k_lu_solve(ne, w->ftmf, NULL, w->fpiv) != 0)
        return rc_fail_(sys, RC_ERR_CONSTRAINT,
                        "equality constraints are redundant or degenerate "
                        "at step %ld (F^T M^-1 F is singular)",
                        sys->steps + 1);
    return RC_OK;
}

/* u <- (I - F (F^T M^-1 F)^-1 F^T M^-1) u. */
static void rc_gvi_project(rc_system *sys, double *u)
{
    struct rc_gvi_work *w = sys->gvi;
    int N = w->N, ne = w->neq, a, i;
    double coef[64], *cf = coef;
    if (ne == 0)
        return;
    if (ne > 64)
        cf = w->rhs + N; /* rhs has N + mmax >= N + ne entries */
    for (a = 0; a < ne; ++a) {
        double s = 0.0;
        for (i = 0; i < N; ++i)
            s += w->F[(long)a * N + i] * sys->inv_mass_c[i] * u[i];
        cf[a] = s;
    }
    rc_k_lu_resolve(ne, w->ftmf, w->fpiv, cf);
    for (a = 0; a < ne; ++a)
        for (i = 0; i < N; ++i)
            u[i] -= w->F[(long)a * N + i] * cf[a];
}

/* out = W u: M^-1 u, plus (h^2/6) M^-1 Hess V(q) M^-1 u for the modified
 * Hamiltonian (DESIGN §3).  Uses t2 as scratch. */
static void rc_gvi_apply_W(rc_system *sys, const double *q, const double *u,
                           double *out)
{
    struct rc_gvi_work *w = sys->gvi;
    int N = w->N, i;
    double h = sys->integ.dt;
    for (i = 0; i < N; ++i)
        out[i] = sys->inv_mass_c[i] * u[i];
    if (rc_reflection_energy_(sys) == RC_ENERGY_MODIFIED) {
        rc_cpu_hessian_vector(rc_system_model_(sys), q, out, w->t2,
                              sys->threads);
        for (i = 0; i < N; ++i)
            out[i] += h * h / 6.0 * sys->inv_mass_c[i] * w->t2[i];
    }
}

/* ------------------------------------------------------------------ */
/* Reflection (Algorithms 2 and 3).                                    */

rc_status rc_gvi_reflect(rc_system *sys, const double *q, double *p,
                                const int *set, int m, int max_passes,
                                int *passes_out)
{
    struct rc_gvi_work *w = sys->gvi;
    int N = w->N, pass = 0, a, b, i, nv;
    int moreau = sys->integ.reflection == RC_REFLECT_MOREAU;
    rc_status st = RC_OK;
    double *wp = w->t0;
    *passes_out = 0;
    if (m == 0)
        return RC_OK;
    if ((st = rc_gvi_equalities_at(sys, q)) != RC_OK)
        return st;
    /* Projected columns and their W-images are fixed for the call (q
     * does not move); compute them once for the whole set. */
    for (a = 0; a < m; ++a) {
        double *col = w->cols + (long)a * N;
        rc_con_column(sys, set[a], q, col);
        rc_gvi_project(sys, col);
        rc_gvi_apply_W(sys, q, col, w->wcols + (long)a * N);
    }
    for (;;) {
        rc_k_nnls_result r;
        int *V = w->setV;
        /* approaching members: (W n_k).p < -eps_v */
        nv = 0;
        for (a = 0; a < m; ++a) {
            double s = 0.0;
            for (i = 0; i < N; ++i)
                s += w->wcols[(long)a * N + i] * p[i];
            if (moreau || s < -sys->eps_v)
                V[nv++] = a;
        }
        if (nv == 0 || (moreau && pass == 1))
            break;
        if (pass >= max_passes) {
            *passes_out = pass;
            return rc_fail_(sys, RC_ERR_NOT_CONVERGED,
                            "generalized reflection did not terminate in %d "
                            "passes at step %ld (t = %g)",
                            max_passes, sys->steps + 1, sys->time);
        }
        /* Gram A = N_V^T W N_V, b = 2 N_V^T W p (eq. 61). */
        for (a = 0; a < nv; ++a) {
            const double *wa = w->wcols + (long)V[a] * N;
            double s = 0.0;
            for (i = 0; i < N; ++i)
                s += wa[i] * p[i];
            w->bvec[a] = 2.0 * s;
            for (b = 0; b <= a; ++b) {
                const double *cb = w->cols + (long)V[b] * N;
                double g = 0.0;
                for (i = 0; i < N; ++i)
                    g += wa[i] * cb[i];
                w->gram[a * nv + b] = g;
                w->gram[b * nv + a] = g;
            }
        }
        /* solver tolerance: 1e-12 of its own scale (rc_nnls.h) */
        r = rc_k_nnls_gram(nv, w->gram, w->bvec, w->lam, w->nnls_w,
                           w->nnls_iw, 0, 1e-12);
        w->nnls_iterations += r.iterations;
        if (r.status != 0)
            return rc_fail_(sys, RC_ERR_NOT_CONVERGED,
                            "reflection NNLS %s (%d constraints) at step %ld "
                            "(t = %g)",
                            r.status == 1 ? "hit its iteration cap"
                                          : "broke down numerically",
                            nv, sys->steps + 1, sys->time);
        for (a = 0; a < nv; ++a) {
            const double *ca = w->cols + (long)V[a] * N;
            if (w->lam[a] != 0.0)
                for (i = 0; i < N; ++i)
                    p[i] += w->lam[a] * ca[i];
        }
        ++pass;
    }
    (void)wp;
    *passes_out = pass;
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Position update (eq. 48) by Newton inside an active-set loop.       */

/* The failure of a constrained Newton solve that ran out of iterations. */
static rc_status rc_newton_failed(rc_system *sys)
{
    return rc_fail_(sys, RC_ERR_NOT_CONVERGED,
                    "%s position update: Newton did not converge in %d "
                    "iterations at step %ld (t = %g); reduce dt",
                    rc_method_name(sys->integ.method),
                    sys->integ.newton_max_iter, sys->steps + 1, sys->time);
}

/* w->imp = C mu for the m columns in w->mcols. */
static void rc_gvi_impulse(struct rc_gvi_work *w, int m)
{
    int i, a, N = w->N;
    for (i = 0; i < N; ++i) {
        double s = 0.0;
        for (a = 0; a < m; ++a)
            s += w->mcols[(long)a * N + i] * w->mu[a];
        w->imp[i] = s;
    }
}

/* Value of term k as the Newton solve sees it at the iterate x, with
 * its derivative d(value)/dx in row (N doubles):
 *   GVI:             g(x) (linearized or not: see rc_con_eval);
 *   direct-endpoint: g(x);
 *   direct-midpoint: g((q + x)/2), derivative halved.
 * Uses t2 as scratch. */
static double rc_gvi_row(rc_system *sys, int k, const double *q,
                         const double *x, double *row)
{
    struct rc_gvi_work *w = sys->gvi;
    int i, N = w->N;
    double v;
    if (w->colmode == RC_COLS_AT_MID) {
        for (i = 0; i < N; ++i)
            w->t2[i] = 0.5 * (q[i] + x[i]);
        v = rc_con_column(sys, k, w->t2, row);
        for (i = 0; i < N; ++i)
            row[i] *= 0.5;
        return v;
    }
    return rc_con_column(sys, k, x, row);
}

/* Verlet base: the position update is linear in the multipliers,
 *   x(mu) = x0 + h M^-1 C mu,   x0 = q + h M^-1 (p - h/2 grad V(q)),
 * so Newton runs on mu alone (SHAKE): J = grad c(x)^T h M^-1 C, m x m.
 * Needs w->g0 = grad V(q) and the columns C in w->mcols. */
static rc_status rc_gvi_newton_verlet(rc_system *sys, const double *q,
                                      const double *p, const int *act,
                                      int nact, double *x, int *iters)
{
    struct rc_gvi_work *w = sys->gvi;
    int N = w->N, m = nact + w->neq;
    int i, a, b, it, finite = 1;
    double h = sys->integ.dt, tol = sys->integ.newton_tol, prev = INFINITY;
    double *x0 = w->t0, *row = w->t1;
    for (i = 0; i < N; ++i) {
        x0[i] = q[i] + h * sys->inv_mass_c[i] * (p[i] - 0.5 * h * w->g0[i]);
        x[i] = x0[i];
        w->imp[i] = 0.0;
    }
    if (m == 0)
        return RC_OK;
    for (it = 1; it <= sys->integ.newton_max_iter; ++it) {
        double dmax = 0.0, xmax = 0.0;
        for (a = 0; a < m; ++a) {
            int k = a < nact ? act[a] : w->eq[a - nact];
            w->rhs[a] = -rc_gvi_row(sys, k, q, x, row);
            for (b = 0; b < m; ++b) {
                const double *cb = w->mcols + (long)b * N;
                double s = 0.0;
                for (i = 0; i < N; ++i)
                    s += row[i] * sys->inv_mass_c[i] * cb[i];
                w->jac[a * m + b] = h * s;
            }
        }
        if (rc_k_lu_solve(m, w->jac, w->rhs, w->jpiv) != 0) {
            *iters += it;
            return rc_fail_(sys, RC_ERR_CONSTRAINT,
                            "%s position update: singular constraint "
                            "Jacobian at step %ld (t = %g); contacts and "
                            "equalities are degenerate",
                            rc_method_name(sys->integ.method),
                            sys->steps + 1, sys->time);
        }
        for (a = 0; a < m; ++a)
            w->mu[a] += w->rhs[a];
        /* x from x0 afresh (no accumulation of updates) */
        rc_gvi_impulse(w, m);
        for (i = 0; i < N; ++i) {
            double xn = x0[i] + h * sys->inv_mass_c[i] * w->imp[i];
            if (!isfinite(xn))
                finite = 0;
            dmax = fmax(dmax, fabs(xn - x[i]));
            xmax = fmax(xmax, fabs(xn));
            x[i] = xn;
        }
        if (!finite)
            break;
        if (rc_newton_converged_(dmax, prev, xmax, tol)) {
            *iters += it;
            return RC_OK;
        }
        prev = dmax;
    }
    *iters += sys->integ.newton_max_iter;
    return rc_newton_failed(sys);
}

/* Newton on (x, mu) for the columns `act` (inequality term indices,
 * nact of them) plus every equality.  x holds the initial guess and the
 * result; w->mu the multipliers (inequalities first), w->imp = C mu.
 * *iters adds the iterations done.  The Verlet base goes to the
 * multiplier-only solve above; the midpoint base, nonlinear in x through
 * grad V((q+x)/2), solves the full (N+m) system. */
rc_status rc_gvi_newton(rc_system *sys, const double *q,
                               const double *p, const int *act, int nact,
                               double *x, int *iters)
{
    struct rc_gvi_work *w = sys->gvi;
    rc_k_model model = rc_system_model_(sys);
    int N = w->N, m = nact + w->neq, K = N + m;
    int i, a, c, it, finite = 1, midpoint = w->midpoint;
    int moving = w->colmode != RC_COLS_AT_Q; /* columns depend on x */
    double h = sys->integ.dt, tol = sys->integ.newton_tol, prev = INFINITY;
    double *xi = w->t1, *e = w->t0, *hcol = w->y;

    if (m > w->mmax)
        return rc_fail_(sys, RC_ERR_CONSTRAINT,
                        "%d simultaneous smooth contacts and equalities "
                        "exceed the %d coordinates at step %ld",
                        m, N, sys->steps + 1);
    /* Columns at q: active inequalities, then equalities. */
    for (a = 0; a < m; ++a)
        rc_con_column(sys, a < nact ? act[a] : w->eq[a - nact], q,
                      w->mcols + (long)a * N);
    for (a = 0; a < m; ++a)
        w->mu[a] = 0.0;
    if (!midpoint && !moving)
        return rc_gvi_newton_verlet(sys, q, p, act, nact, x, iters);
    for (it = 1; it <= sys->integ.newton_max_iter; ++it) {
        double dmax = 0.0, xmax = 0.0;
        const double *gV;
        if (midpoint) {
            for (i = 0; i < N; ++i)
                xi[i] = 0.5 * (q[i] + x[i]);
            rc_cpu_gradient(model, xi, w->g1, sys->threads);
            gV = w->g1;
        } else {
            gV = w->g0;
        }
        if (moving) {
            /* direct methods: force directions at the end point or the
             * midpoint, re-evaluated at every iterate */
            for (i = 0; i < N; ++i)
                w->t2[i] = w->colmode == RC_COLS_AT_X ? x[i]
                                                      : 0.5 * (q[i] + x[i]);
            for (a = 0; a < m; ++a)
                rc_con_column(sys, a < nact ? act[a] : w->eq[a - nact], w->t2,
                              w->mcols + (long)a * N);
        }
        /* residual r1 = M(x-q)/h - p + h/2 gradV - C mu, r2 = c(x) */
        for (i = 0; i < N; ++i) {
            double s = sys->mass_c[i] * (x[i] - q[i]) / h - p[i] +
                       0.5 * h * gV[i];
            for (a = 0; a < m; ++a)
                s -= w->mcols[(long)a * N + i] * w->mu[a];
            w->rhs[i] = -s;
        }
        memset(w->jac, 0, sizeof(double) * (size_t)K * (size_t)K);
        for (a = 0; a < m; ++a) {
            double *row = w->jac + (long)(N + a) * K;
            int k = a < nact ? act[a] : w->eq[a - nact];
            w->rhs[N + a] = -rc_gvi_row(sys, k, q, x, row);
        }
        for (i = 0; i < N; ++i) {
            w->jac[(long)i * K + i] = sys->mass_c[i] / h;
            for (a = 0; a < m; ++a)
                w->jac[(long)i * K + N + a] = -w->mcols[(long)a * N + i];
        }
        if (midpoint || moving) {
            /* + (h/4) Hess V((q+x)/2) - sum_a mu_a Hess c_a(y) dy/dx,
             * column by column (the second term only when the force
             * directions move with x) */
            double dydx = w->colmode == RC_COLS_AT_MID ? 0.5 : 1.0;
            memset(e, 0, sizeof(double) * (size_t)N);
            for (c = 0; c < N; ++c) {
                e[c] = 1.0;
                if (midpoint)
                    rc_cpu_hessian_vector(model, xi, e, hcol, sys->threads);
                else
                    memset(hcol, 0, sizeof(double) * (size_t)N);
                for (i = 0; i < N; ++i)
                    hcol[i] *= 0.25 * h;
                if (moving)
                    for (a = 0; a < m; ++a)
                        rc_k_constraint_hessian_vector(
                            &sys->con[a < nact ? act[a] : w->eq[a - nact]],
                            sys->dim, w->t2, -w->mu[a] * dydx, e, hcol);
                e[c] = 0.0;
                for (i = 0; i < N; ++i)
                    w->jac[(long)i * K + c] += hcol[i];
            }
        }
        if (rc_k_lu_solve(K, w->jac, w->rhs, w->jpiv) != 0) {
            *iters += it;
            return rc_fail_(sys, RC_ERR_CONSTRAINT,
                            "%s position update: singular Newton matrix at "
                            "step %ld (t = %g); contacts and equalities are "
                            "degenerate",
                            rc_method_name(sys->integ.method),
                            sys->steps + 1, sys->time);
        }
        for (i = 0; i < N; ++i) {
            x[i] += w->rhs[i];
            /* fmax drops NaN, so test finiteness element by element */
            if (!isfinite(x[i]))
                finite = 0;
            dmax = fmax(dmax, fabs(w->rhs[i]));
            xmax = fmax(xmax, fabs(x[i]));
        }
        for (a = 0; a < m; ++a)
            w->mu[a] += w->rhs[N + a];
        if (!finite)
            break;
        if (rc_newton_converged_(dmax, prev, xmax, tol)) {
            *iters += it;
            rc_gvi_impulse(w, m);
            return RC_OK;
        }
        prev = dmax;
    }
    *iters += sys->integ.newton_max_iter;
    return rc_newton_failed(sys);
}

/* Eq. 48 with complementarity: start with every member of S held at
 * g = 0; release a member whose multiplier is negative, re-admit one
 * that the free step pushes through.  Leaves the final active list in
 * w->active (count in *nact_out). */
rc_status rc_gvi_position(rc_system *sys, const double *q,
                                 const double *p, const int *S, int nS,
                                 double *x, int *nact_out, int *iters)
{
    struct rc_gvi_work *w = sys->gvi;
    int N = w->N, i, a, outer, nact = 0, max_outer = 2 * nS + 4;
    double pscale = 0.0, tau_lam, tau_g = 1e-3 * sys->eps_g;
    char *on = (char *)w->setV; /* reuse as flags: 1 = held at g = 0 */
    rc_status st;

    for (i = 0; i < N; ++i)
        pscale = fmax(pscale, fabs(p[i]));
    /* multipliers are momenta: release only if clearly negative */
    tau_lam = 1e-12 * (pscale > 0.0 ? pscale : 1.0);
    memset(on, 0, (size_t)nS);
    for (a = 0; a < nS; ++a)
        on[a] = 1;
    for (outer = 0; outer < max_outer; ++outer) {
        int worst = -1;
        double worst_v = 0.0;
        nact = 0;
        for (a = 0; a < nS; ++a)
            if (on[a])
                w->active[nact++] = S[a];
        /* initial guess: the predictor of the reflected momentum */
        for (i = 0; i < N; ++i)
            x[i] = w->qp[i];
        if ((st = rc_gvi_newton(sys, q, p, w->active, nact, x, iters)) !=
            RC_OK)
            return st;
        /* most negative multiplier among the held members */
        for (a = 0, i = 0; a < nS; ++a)
            if (on[a]) {
                double lam = w->mu[i++];
                if (lam < -tau_lam && lam < worst_v) {
                    worst_v = lam;
                    worst = a;
                }
            }
        if (worst >= 0) {
            on[worst] = 0;
            continue;
        }
        /* most violated released member */
        worst_v = 0.0;
        for (a = 0; a < nS; ++a)
            if (!on[a]) {
                double g = rc_con_value(sys, S[a], x);
                if (g < -tau_g && g < worst_v) {
                    worst_v = g;
                    worst = a;
                }
            }
        if (worst >= 0) {
            on[worst] = 1;
            continue;
        }
        *nact_out = nact;
        return RC_OK;
    }
    return rc_fail_(sys, RC_ERR_CONSTRAINT,
                    "%s position update: the contact complementarity did "
                    "not settle in %d active-set changes at step %ld "
                    "(t = %g)",
                    rc_method_name(sys->integ.method), max_outer,
                    sys->steps + 1, sys->time);
}

/* ------------------------------------------------------------------ */
/* Momentum update (eq. 49): y = y0 + C mu with C^T M^-1 y = 0.         */

rc_status rc_gvi_momentum(rc_system *sys, const double *q,
                                 const double *p, const double *x,
                                 const int *act, int nact, double *y)
{
    struct rc_gvi_work *w = sys->gvi;
    rc_k_model model = rc_system_model_(sys);
    int N = w->N, m = nact + w->neq, i, a, b;
    double h = sys->integ.dt;
    const double *at = x;
    if (sys->integ.base == RC_BASE_MIDPOINT) {
        for (i = 0; i < N; ++i)
            w->t1[i] = 0.5 * (q[i] + x[i]);
        at = w->t1;
    }
    rc_cpu_gradient(model, at, w->g1, sys->threads);
    /* D2 Ld(q, x) = M (x-q)/h - h/2 grad V(.), with M (x-q)/h replaced by
     * what the position update made it, p - h/2 grad V(.) + C mu: the
     * same number in exact arithmetic, but free of the rounding of x
     * amplified by m/h (which grows with |q|). */
    for (i = 0; i < N; ++i) {
        double kick = sys->integ.base == RC_BASE_MIDPOINT ? w->g1[i] : w->g0[i];
        y[i] = p[i] - 0.5 * h * kick + w->imp[i] - 0.5 * h * w->g1[i];
    }
    if (m == 0)
        return RC_OK;
    for (a = 0; a < m; ++a) {
        int k = a < nact ? act[a] : w->eq[a - nact];
        rc_con_column(sys, k, x, w->mcols + (long)a * N);
    }
    for (a = 0; a < m; ++a) {
        double s = 0.0;
        for (i = 0; i < N; ++i)
            s += w->mcols[(long)a * N + i] * sys->inv_mass_c[i] * y[i];
        w->rhs[a] = -s;
        for (b = 0; b < m; ++b) {
            double g = 0.0;
            for (i = 0; i < N; ++i)
                g += w->mcols[(long)a * N + i] * sys->inv_mass_c[i] *
                     w->mcols[(long)b * N + i];
            w->jac[a * m + b] = g;
        }
    }
    if (rc_k_lu_solve(m, w->jac, w->rhs, w->jpiv) != 0)
        return rc_fail_(sys, RC_ERR_CONSTRAINT,
                        "GVI momentum update: singular constraint Gram "
                        "matrix at step %ld (t = %g)",
                        sys->steps + 1, sys->time);
    for (a = 0; a < m; ++a)
        for (i = 0; i < N; ++i)
            y[i] += w->mcols[(long)a * N + i] * w->rhs[a];
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Initial state check and the step.                                   */

/* Predictor q^p (eq. 50): the base position update with no inequality,
 * D1 Ld(q, x) + p = 0.  Equality constraints are "active at all times"
 * (§7.2), so they are part of it: a rod or pendulum moves particles
 * along curves that the free drift would miss, and a contact that the
 * constrained motion reaches must be seen.  For the Verlet base without
 * equalities this is the explicit drift; otherwise one Newton solve.
 * Needs w->g0 = grad V(q). */
static rc_status rc_gvi_predict(rc_system *sys, const double *q,
                                const double *p, double *qp, int *iters)
{
    struct rc_gvi_work *w = sys->gvi;
    int i, N = w->N;
    double h = sys->integ.dt;
    for (i = 0; i < N; ++i)
        qp[i] = q[i] + h * sys->inv_mass_c[i] * (p[i] - 0.5 * h * w->g0[i]);
    if (sys->integ.base == RC_BASE_MIDPOINT ||
        (w->neq > 0 && !sys->integ.seed_exact))
        return rc_gvi_newton(sys, q, p, NULL, 0, qp, iters);
    return RC_OK;
}

rc_status rc_gvi_check_initial(rc_system *sys)
{
    int k;
    double ell = sys->gvi->length_scale, vs = sys->gvi->speed_scale;
    for (k = 0; k < sys->ncon; ++k) {
        const rc_k_constraint *c = &sys->con[k];
        /* kernel type codes equal the public rc_constraint_type values */
        const char *name = rc_constraint_type_name((rc_constraint_type)c->type);
        char who[64];
        double v = rc_con_value(sys, k, sys->q);
        if (c->type == RC_K_NON_OVERLAP || c->type == RC_K_ROD)
            snprintf(who, sizeof who, "particles %d and %d", c->i, c->j);
        else
            snprintf(who, sizeof who, "particle %d", c->i);
        if (rc_k_constraint_is_equality(c)) {
            double s = rc_con_speed(sys, k, sys->q, sys->p);
            /* 1e-9 of the length scale: a file with ~10 significant
             * digits passes, a wrong position does not */
            if (fabs(v) > 1e-9 * ell)
                return rc_fail_(sys, RC_ERR_INVALID,
                                "%s constraint (term %d) on %s is violated "
                                "by %g at the start",
                                name, k, who, v);
            /* 1e-6 of the speed scale; smaller normal speeds are
             * removed by the first momentum projection */
            if (fabs(s) > 1e-6 * vs)
                return rc_fail_(sys, RC_ERR_INVALID,
                                "%s constraint (term %d) on %s: the initial "
                                "momentum moves off it (speed %g along its "
                                "normal)",
                                name, k, who, s);
        } else if (v < -1e-9 * ell) {
            return rc_fail_(sys, RC_ERR_INVALID,
                            "%s constraint (term %d) on %s is violated by "
                            "%g at the start",
                            name, k, who, -v);
        }
    }
    return RC_OK;
}

rc_status rc_step_gvi_(rc_system *sys)
{
    struct rc_gvi_work *w = sys->gvi;
    rc_k_model model = rc_system_model_(sys);
    int a, nA = 0, nS = 0, nact = 0, passes = 0, iters = 0;
    double *q = sys->q, *p = sys->p;
    rc_status st;

    if (!w)
        return rc_fail_(sys, RC_ERR_STATE, "GVI scratch not prepared");
    if (!w->initial_checked) {
        if ((st = rc_gvi_check_initial(sys)) != RC_OK)
            return st;
        w->initial_checked = 1;
    }
    w->nnls_iterations = 0;
    /* 1. predictor */
    rc_cpu_gradient(model, q, w->g0, sys->threads);
    if ((st = rc_gvi_predict(sys, q, p, w->qp, &iters)) != RC_OK)
        return st;
    /* 2. extended active set */
    for (a = 0; a < w->nineq; ++a) {
        int k = w->ineq[a];
        double gq = rc_con_value(sys, k, q);
        w->val[k] = gq;
        w->inA[k] = 0; /* membership flags of A, by term */
        if (gq <= sys->eps_g || rc_con_value(sys, k, w->qp) <= 0.0) {
            w->setA[nA++] = k;
            w->inA[k] = 1;
        }
    }
    /* 3. reflection at q.  Our one refinement of Algorithm 1: the
     * predictor is re-evaluated with the reflected momentum, and terms it
     * now finds violated join A before the next reflection, until no new
     * term appears.  Without it, an impulse passed on by the reflection
     * (a cradle ball set moving towards a neighbour that sits a hair
     * beyond eps_g) is only seen one step later, after an overlap of
     * about |v| h.  Each round adds a term, so there are at most
     * (number of inequality terms) rounds. */
  again:
    for (;;) {
        int added = 0, np = 0;
        if (nA > 0 &&
            (st = rc_gvi_reflect(sys, q, p, w->setA, nA,
                                 sys->integ.max_reflection_passes, &np)) !=
                RC_OK)
            return st;
        passes += np;
        if (np == 0 || sys->integ.seed_exact)
            break;
        if ((st = rc_gvi_predict(sys, q, p, w->qp, &iters)) != RC_OK)
            return st;
        for (a = 0; a < w->nineq; ++a) {
            int k = w->ineq[a];
            if (!w->inA[k] && rc_con_value(sys, k, w->qp) <= 0.0) {
                w->setA[nA++] = k;
                w->inA[k] = 1;
                added++;
            }
        }
        if (!added)
            break;
    }
    /* 4. smooth set */
    nS = 0;
    for (a = 0; a < nA; ++a) {
        int k = w->setA[a];
        if (w->val[k] <= sys->eps_g &&
            fabs(rc_con_speed(sys, k, q, p)) <= sys->eps_v)
            w->setS[nS++] = k;
        else if (!sys->integ.seed_exact && rc_con_value(sys, k, w->qp) < 0.0)
            w->setS[nS++] = k; /* refinement 3, see below */
    }
    /* w->qp now holds the predictor of the reflected p (the starting
     * guess of the position update), except in seed_exact mode after a
     * reflection, where it is refreshed here. */
    if (sys->integ.seed_exact && passes > 0 &&
        (st = rc_gvi_predict(sys, q, p, w->qp, &iters)) != RC_OK)
        return st;
    /* 5. position update */
    if ((st = rc_gvi_position(sys, q, p, w->setS, nS, w->x, &nact,
                              &iters)) != RC_OK)
        return st;
    /* R2, continued: a term outside A that the position update itself
     * ends up violating (the held contacts changed the motion from the
     * free predictor: a spring partner pinned to a wall) joins A, and
     * the step is redone from the reflection.  Each round adds a term. */
    if (!sys->integ.seed_exact) {
        int added = 0;
        for (a = 0; a < w->nineq; ++a) {
            int k = w->ineq[a];
            if (!w->inA[k] && rc_con_value(sys, k, w->x) < 0.0) {
                w->setA[nA++] = k;
                w->inA[k] = 1;
                added++;
            }
        }
        if (added)
            goto again;
    }
    /* 6. momentum update at x */
    if ((st = rc_gvi_momentum(sys, q, p, w->x, w->active, nact, w->y)) !=
        RC_OK)
        return st;
    return rc_gvi_commit(sys, nA, passes, iters + w->nnls_iterations);
}

/* End of a step: the new state (w->x, w->y) becomes the state if it is
 * finite (otherwise the state stays that of the last step), and the
 * step's counters are recorded. */
rc_status rc_gvi_commit(rc_system *sys, int active, int reflections,
                        int iterations)
{
    struct rc_gvi_work *w = sys->gvi;
    int i, N = w->N;
    for (i = 0; i < N; ++i)
        if (!isfinite(w->x[i]) || !isfinite(w->y[i]))
            return rc_fail_(sys, RC_ERR_NONFINITE,
                            "state became non-finite at step %ld (t = %g)",
                            sys->steps + 1, sys->time + sys->integ.dt);
    memcpy(sys->q, w->x, sizeof(double) * (size_t)N);
    memcpy(sys->p, w->y, sizeof(double) * (size_t)N);
    sys->last_active = active;
    sys->last_reflections = reflections;
    sys->last_iterations = iterations;
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Public tools for tests.                                              */

rc_status rc_system_check_constraints(rc_system *sys)
{
    rc_status st;
    if (!sys)
        return RC_ERR_INVALID;
    if (sys->ncon == 0)
        return RC_OK;
    if (!sys->have_integrator ||
        !rc_method_uses_constraints_(sys->integ.method))
        return rc_fail_(sys, RC_ERR_INVALID,
                        "constraints need a constraint method (gvi, cva, "
                        "mcva, direct-endpoint, direct-midpoint)");
    if ((st = rc_system_prepare_(sys)) != RC_OK)
        return st;
    return rc_gvi_check_initial(sys);
}

rc_status rc_system_tolerances(rc_system *sys, double *eps_g, double *eps_v)
{
    rc_status st;
    if (!sys)
        return RC_ERR_INVALID;
    if ((st = rc_system_prepare_(sys)) != RC_OK)
        return st;
    if (!sys->gvi)
        return rc_fail_(sys, RC_ERR_STATE,
                        "tolerances exist for the constraint methods only");
    if (eps_g)
        *eps_g = sys->eps_g;
    if (eps_v)
        *eps_v = sys->eps_v;
    return RC_OK;
}

rc_status rc_system_reflect(rc_system *sys, const int *set, int m,
                            int max_passes, int *passes)
{
    rc_status st;
    int a, dummy;
    if (!sys || (m > 0 && !set) || m < 0)
        return RC_ERR_INVALID;
    if ((st = rc_system_prepare_(sys)) != RC_OK)
        return st;
    if (!sys->gvi)
        return rc_fail_(sys, RC_ERR_STATE,
                        "reflections need a constraint method (gvi, cva, "
                        "mcva, direct-*)");
    for (a = 0; a < m; ++a)
        if (set[a] < 0 || set[a] >= sys->ncon ||
            rc_k_constraint_is_equality(&sys->con[set[a]]))
            return rc_fail_(sys, RC_ERR_INVALID,
                            "reflection set entry %d is not an inequality "
                            "constraint term",
                            set[a]);
    return rc_gvi_reflect(sys, sys->q, sys->p, set, m,
                          max_passes > 0 ? max_passes
                                         : sys->integ.max_reflection_passes,
                          passes ? passes : &dummy);
}

rc_status rc_system_reflection_energy(rc_system *sys, double *energy)
{
    rc_diagnostics dg;
    rc_status st;
    if (!sys || !energy)
        return RC_ERR_INVALID;
    if ((st = rc_system_diagnostics(sys, &dg)) != RC_OK)
        return st;
    *energy = rc_reflection_energy_(sys) == RC_ENERGY_MODIFIED
                  ? dg.modified_energy
                                                      : dg.energy;
    return RC_OK;
}

rc_status rc_system_constraint_value(rc_system *sys, int k, double *value,
                                     double *normal_speed)
{
    if (!sys || k < 0 || k >= sys->ncon)
        return RC_ERR_INVALID;
    if (value)
        *value = rc_con_value(sys, k, sys->q);
    if (normal_speed)
        *normal_speed = rc_con_speed(sys, k, sys->q, sys->p);
    return RC_OK;
}

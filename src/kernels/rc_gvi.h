/* The GVI step of one small system (seed 000, Algorithm 1; DESIGN §3),
 * written once for the single-system path (src/host/gvi.c), the
 * ensemble batch engine (src/host/batch.c) and the GPU.
 *
 * Item: one system (an ensemble member).  Its state q, p (N = n*dim
 * doubles each, particle-major) is contiguous: the batch engine gathers a
 * member from its structure-of-arrays columns into the workspace, steps
 * it and scatters it back.  The model (potentials, constraints, masses,
 * parameters) is a read-only view shared by all members; the scratch is
 * an rc_k_gvi_work carved from one allocation sized at scenario load
 * (rc_k_gvi_work_doubles/ints); nothing allocates, nothing prints.
 * Failures return an RC_K_GVI_* code (and a detail in work->fail_detail)
 * that the host turns into a status and a message.
 *
 * The algorithm, its refinements R1–R3 and the conventions are described
 * in src/host/gvi.c.  Rounding: dense LU with partial pivoting for the
 * Newton and projection solves (error ~ m eps cond), Lawson–Hanson NNLS
 * at 1e-12 of its own scale for reflections, Newton to integ.newton_tol. */
#ifndef RC_GVI_H
#define RC_GVI_H

#include "rc_constraint.h"
#include "rc_dense.h"
#include "rc_hd.h"
#include "rc_math.h"
#include "rc_nnls.h"
#include "rc_potential.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the constraint forces of a Newton solve are evaluated. */
enum {
    RC_COLS_AT_Q = 0,   /* at the start q (GVI, eq. 48) */
    RC_COLS_AT_X = 1,   /* at the unknown end point (direct-endpoint) */
    RC_COLS_AT_MID = 2  /* at (q + x)/2 (direct-midpoint) */
};

/* What went wrong; the host words it (rc_gvi_fail_ in src/host/gvi.c). */
enum {
    RC_K_GVI_OK = 0,
    RC_K_GVI_EQ_SINGULAR,       /* F^T M^-1 F singular */
    RC_K_GVI_REFLECT_PASSES,    /* reflection passes exhausted */
    RC_K_GVI_NNLS_CAP,          /* NNLS iteration cap (detail: columns) */
    RC_K_GVI_NNLS_BREAKDOWN,    /* NNLS breakdown (detail: columns) */
    RC_K_GVI_NEWTON,            /* position Newton did not converge */
    RC_K_GVI_JAC_SINGULAR,      /* multiplier-only Newton: singular */
    RC_K_GVI_NEWTON_SINGULAR,   /* full Newton matrix singular */
    RC_K_GVI_TOO_MANY,          /* more held terms than coordinates */
    RC_K_GVI_COMPLEMENTARITY,   /* active set did not settle (detail: cap) */
    RC_K_GVI_MOMENTUM_SINGULAR, /* momentum projection singular */
    RC_K_GVI_NONFINITE,         /* the new state is not finite */
    RC_K_GVI_INITIAL_VIOLATED,  /* start violates a term (detail: term) */
    RC_K_GVI_INITIAL_SPEED,     /* start moves off an equality (detail) */
    RC_K_GVI_ZENO               /* CVA: more events in a step than
                                   max_events (detail: max_events) */
};

/* Which step a member body takes (rc_k_method_step, rc_baselines.h):
 * GVI's (rc_k_gvi_step) or a baseline's.  0 is GVI, so a view built
 * without it is GVI's. */
enum {
    RC_K_METHOD_GVI = 0,
    RC_K_METHOD_CVA,            /* collision Verlet */
    RC_K_METHOD_MCVA,           /* modified collision Verlet */
    RC_K_METHOD_DIRECT_ENDPOINT,
    RC_K_METHOD_DIRECT_MIDPOINT
};

/* Read-only view of the model and the method, shared by all members. */
typedef struct rc_k_gvi {
    rc_k_model m;                 /* potentials, masses, radii */
    const rc_k_constraint *con;   /* [ncon] */
    int ncon;
    int N;                        /* coordinates n*dim */
    const double *mass_c;         /* [N] mass per coordinate */
    const double *inv_mass_c;     /* [N] */
    const int *ineq, *eq;         /* term indices of inequalities/equalities */
    int nineq, neq;
    int mmax;                     /* neq + N: most multipliers of a solve */
    const double *q0;             /* [N] linearization point (linearized
                                     GVI only, else NULL) */
    double h;                     /* time step */
    double newton_tol;
    int newton_max_iter;
    int max_passes;               /* reflection passes */
    int midpoint;                 /* midpoint discrete Lagrangian */
    int colmode;                  /* RC_COLS_* */
    int modified;                 /* reflections conserve H~ (else H) */
    int moreau;                   /* Moreau reflection (Algorithm 3) */
    int seed_exact;               /* refinements R1–R3 off */
    double eps_g, eps_v;          /* tolerances of this member */
    int method;                   /* RC_K_METHOD_*: the step taken */
    int max_events;               /* CVA/MCVA: events a step may have */
} rc_k_gvi;

/* Per-member scratch: pointers into one caller-owned block. */
typedef struct rc_k_gvi_work {
    double *qp, *x, *y, *g0, *g1, *t0, *t1, *t2; /* [N] each */
    double *val;    /* [nc] values at q */
    double *cols;   /* [N*nc] dense columns (column c at c*N) */
    double *wcols;  /* [N*nc] W applied to each column */
    double *gram;   /* [nc*nc] */
    double *bvec, *lam; /* [nc] */
    double *nnls_w; /* rc_k_nnls_work_doubles(nc) */
    int *nnls_iw;   /* rc_k_nnls_work_ints(nc) */
    double *F;      /* [N*neq] equality columns at the current q */
    double *ftmf;   /* [neq*neq] F^T M^-1 F, LU-factored in place */
    int *fpiv;      /* [neq] */
    double *jac;    /* [(N+mmax)^2] Newton matrix */
    double *rhs;    /* [N+mmax] */
    int *jpiv;      /* [N+mmax] */
    double *mcols;  /* [N*mmax] columns of the Newton solve */
    double *mu;     /* [mmax] multipliers of the last solve */
    double *imp;    /* [N] its constraint impulse C mu (columns at q) */
    int *setA, *setS, *setV, *active, *inA; /* [nc] each */
    int nnls_iterations; /* NNLS iterations of the current step */
    int fail_detail;     /* detail of the last failure code */
} rc_k_gvi_work;

/* Counters of one step. */
typedef struct rc_k_gvi_step_info {
    int active, reflections, iterations;
} rc_k_gvi_step_info;

/* Sizes of the scratch block of one member. */
RC_HD static inline long rc_k_gvi_work_doubles(int N, int nc, int neq)
{
    long mm = (long)neq + N;
    return 8L * N + nc + 2L * N * nc + (long)nc * nc + 2L * nc +
           rc_k_nnls_work_doubles(nc) + (long)N * neq + (long)neq * neq +
           (N + mm) * (N + mm) + (N + mm) + (long)N * mm + mm + N;
}

RC_HD static inline long rc_k_gvi_work_ints(int N, int nc, int neq)
{
    long mm = (long)neq + N;
    return rc_k_nnls_work_ints(nc) + neq + (N + mm) + 5L * nc;
}

/* Carve w from d (rc_k_gvi_work_doubles) and iw (rc_k_gvi_work_ints). */
RC_HD static inline void rc_k_gvi_work_carve(rc_k_gvi_work *w, int N, int nc,
                                             int neq, double *d, int *iw)
{
    long mm = (long)neq + N;
    w->qp = d; d += N;
    w->x = d; d += N;
    w->y = d; d += N;
    w->g0 = d; d += N;
    w->g1 = d; d += N;
    w->t0 = d; d += N;
    w->t1 = d; d += N;
    w->t2 = d; d += N;
    w->val = d; d += nc;
    w->cols = d; d += (long)N * nc;
    w->wcols = d; d += (long)N * nc;
    w->gram = d; d += (long)nc * nc;
    w->bvec = d; d += nc;
    w->lam = d; d += nc;
    w->nnls_w = d; d += rc_k_nnls_work_doubles(nc);
    w->F = d; d += (long)N * neq;
    w->ftmf = d; d += (long)neq * neq;
    w->jac = d; d += (N + mm) * (N + mm);
    w->rhs = d; d += N + mm;
    w->mcols = d; d += (long)N * mm;
    w->mu = d; d += mm;
    w->imp = d;
    w->nnls_iw = iw; iw += rc_k_nnls_work_ints(nc);
    w->fpiv = iw; iw += neq;
    w->jpiv = iw; iw += N + mm;
    w->setA = iw; iw += nc;
    w->setS = iw; iw += nc;
    w->setV = iw; iw += nc;
    w->active = iw; iw += nc;
    w->inA = iw;
    w->nnls_iterations = 0;
    w->fail_detail = 0;
}

/* ------------------------------------------------------------------ */
/* Potentials and constraints on dense vectors.                        */

RC_HD static inline void rc_k_gvi_gradient(const rc_k_gvi *g, const double *q,
                                           double *grad)
{
    int i;
    for (i = 0; i < g->m.n; ++i)
        rc_k_gradient_particle(g->m, q, i, grad + (long)i * g->m.dim);
}

RC_HD static inline void rc_k_gvi_zero(int n, double *a)
{
    int i;
    for (i = 0; i < n; ++i)
        a[i] = 0.0;
}

/* Value and sparse gradient blocks of term k at q, as the integrator
 * sees it: the exact constraint, or for linearized GVI (an inequality,
 * seed 000 Fig. 8(d)) its linearization about q0. */
RC_HD static inline int rc_k_gvi_con_eval(const rc_k_gvi *g, int k,
                                          const double *q, double *v,
                                          int *idx, double grad[2][3])
{
    const rc_k_constraint *c = &g->con[k];
    int nb, b, j, d = g->m.dim;
    if (g->q0 && !rc_k_constraint_is_equality(c)) {
        const double *q0 = g->q0;
        nb = rc_k_constraint_eval(c, d, q0, g->m.radius, v, idx, grad);
        for (b = 0; b < nb; ++b)
            for (j = 0; j < d; ++j)
                *v += grad[b][j] * (q[idx[b] * d + j] - q0[idx[b] * d + j]);
        return nb;
    }
    return rc_k_constraint_eval(c, d, q, g->m.radius, v, idx, grad);
}

RC_HD static inline double rc_k_gvi_value(const rc_k_gvi *g, int k,
                                          const double *q)
{
    int idx[2];
    double grad[2][3], v;
    rc_k_gvi_con_eval(g, k, q, &v, idx, grad);
    return v;
}

/* col (N doubles) = grad of term k at q; returns its value. */
RC_HD static inline double rc_k_gvi_column(const rc_k_gvi *g, int k,
                                           const double *q, double *col)
{
    int idx[2], nb, b, c, d = g->m.dim;
    double grad[2][3], v;
    rc_k_gvi_zero(g->N, col);
    nb = rc_k_gvi_con_eval(g, k, q, &v, idx, grad);
    for (b = 0; b < nb; ++b)
        for (c = 0; c < d; ++c)
            col[idx[b] * d + c] += grad[b][c];
    return v;
}

/* The particles whose coordinates term k's column touches (its
 * gradient blocks), in increasing order; returns how many (1 or 2). */
RC_HD static inline int rc_k_gvi_parts(const rc_k_gvi *g, int k, int pa[2])
{
    const rc_k_constraint *c = &g->con[k];
    if (c->type == RC_K_NON_OVERLAP || c->type == RC_K_ROD) {
        pa[0] = c->i < c->j ? c->i : c->j;
        pa[1] = c->i < c->j ? c->j : c->i;
        return 2;
    }
    pa[0] = c->i;
    return 1;
}

/* The coordinates of the particles that terms ka and kb both touch, in
 * increasing order, into cs (at most 2 d); returns how many.  Off these
 * coordinates one of the two columns is +0.0 (each column is +0.0 off its
 * blocks). */
RC_HD static inline int rc_k_gvi_shared(const rc_k_gvi *g, int ka, int kb,
                                        int cs[6])
{
    int pa[2], pb[2], na = rc_k_gvi_parts(g, ka, pa);
    int nb = rc_k_gvi_parts(g, kb, pb), x = 0, y = 0, c, n = 0;
    const int d = g->m.dim;
    while (x < na && y < nb) { /* merge the two sorted lists */
        if (pa[x] != pb[y]) {
            int lt = pa[x] < pb[y];
            x += lt;
            y += !lt;
            continue;
        }
        for (c = 0; c < d; ++c)
            cs[n++] = pa[x] * d + c;
        ++x;
        ++y;
    }
    return n;
}

/* sum_i u[i] w[i] v[i] where u is term ka's column and v term kb's (or
 * any vector, with kb = ka), over the coordinates both terms touch
 * (rc_k_gvi_shared), in increasing i.  The dense sum over all N
 * coordinates differs from it only by products with a +0.0 entry (each
 * factor finite), and those change no bit of a sum that starts at +0.0:
 * in round to nearest s + (+-0) = s for s != 0, +0 + (+-0) = +0, and
 * such a sum is never -0.  So this gives the dense sum's bits with 2 d
 * of the N products (the lanes, rc_gvi_lanes.h, sum the same way). */
RC_HD static inline double rc_k_gvi_cdot(const rc_k_gvi *g, int ka, int kb,
                                         const double *u, const double *w,
                                         const double *v)
{
    int cs[6], n = rc_k_gvi_shared(g, ka, kb, cs), t;
    double s = 0.0;
    for (t = 0; t < n; ++t)
        s += u[cs[t]] * w[cs[t]] * v[cs[t]];
    return s;
}

/* grad g_k(q) . M^-1 p, from the sparse blocks. */
RC_HD static inline double rc_k_gvi_speed(const rc_k_gvi *g, int k,
                                          const double *q, const double *p)
{
    int idx[2], nb, b, c, d = g->m.dim;
    double grad[2][3], v, s = 0.0;
    nb = rc_k_gvi_con_eval(g, k, q, &v, idx, grad);
    for (b = 0; b < nb; ++b)
        for (c = 0; c < d; ++c)
            s += grad[b][c] * p[idx[b] * d + c] * g->m.inv_mass[idx[b]];
    return s;
}

/* ------------------------------------------------------------------ */
/* Scales and tolerances (set once per member from its initial state). */

/* Length scale: the largest of the radii, rod and pendulum lengths,
 * container radii and the initial configuration's extent. */
RC_HD static inline double rc_k_gvi_length_scale(const rc_k_gvi *g,
                                                 const double *q)
{
    int i, k, d = g->m.dim, n = g->m.n;
    double ell = 0.0, c[3] = {0.0, 0.0, 0.0};
    for (i = 0; i < n; ++i) {
        ell = rc_fmax(ell, g->m.radius[i]);
        for (k = 0; k < d; ++k)
            c[k] += q[i * d + k] / n;
    }
    for (i = 0; i < n; ++i) {
        double s = 0.0;
        for (k = 0; k < d; ++k)
            s += (q[i * d + k] - c[k]) * (q[i * d + k] - c[k]);
        ell = rc_fmax(ell, rc_sqrt(s));
    }
    for (k = 0; k < g->ncon; ++k) {
        const rc_k_constraint *cn = &g->con[k];
        if (cn->type == RC_K_ROD || cn->type == RC_K_PENDULUM ||
            cn->type == RC_K_CONTAINER || cn->type == RC_K_OBSTACLE)
            ell = rc_fmax(ell, cn->a[3]);
    }
    return ell > 0.0 ? ell : 1.0;
}

/* Speed scale: the initial rms speed sqrt(2T/M), or the speed one step
 * of the initial forces gives, or ell/h for a system at rest without
 * forces.  grad: N doubles of scratch. */
RC_HD static inline double rc_k_gvi_speed_scale(const rc_k_gvi *g,
                                                const double *q,
                                                const double *p, double ell,
                                                double *grad)
{
    int i, k, d = g->m.dim;
    double T = 0.0, mt = 0.0, a = 0.0, h = g->h, v;
    rc_k_gvi_gradient(g, q, grad);
    for (i = 0; i < g->m.n; ++i) {
        double g2 = 0.0;
        mt += g->m.mass[i];
        for (k = 0; k < d; ++k) {
            T += 0.5 * p[i * d + k] * p[i * d + k] * g->m.inv_mass[i];
            g2 += grad[i * d + k] * grad[i * d + k];
        }
        a = rc_fmax(a, rc_sqrt(g2) * g->m.inv_mass[i]);
    }
    v = rc_fmax(rc_sqrt(2.0 * T / mt), h * a);
    return v > 0.0 ? v : ell / h;
}

/* Does the initial state satisfy the constraints?  Equalities to 1e-9 of
 * the length scale (a file with ~10 significant digits passes, a wrong
 * position does not) with a normal speed within 1e-6 of the speed scale
 * (smaller ones are removed by the first momentum projection);
 * inequalities not violated beyond 1e-9 of the length scale.  Returns a
 * code with the term in *term, its value or speed in *amount. */
RC_HD static inline int rc_k_gvi_check_initial(const rc_k_gvi *g,
                                               const double *q,
                                               const double *p, double ell,
                                               double vs, int *term,
                                               double *amount)
{
    int k;
    for (k = 0; k < g->ncon; ++k) {
        double v = rc_k_gvi_value(g, k, q);
        *term = k;
        if (rc_k_constraint_is_equality(&g->con[k])) {
            double s = rc_k_gvi_speed(g, k, q, p);
            *amount = v;
            if (rc_fabs(v) > 1e-9 * ell)
                return RC_K_GVI_INITIAL_VIOLATED;
            *amount = s;
            if (rc_fabs(s) > 1e-6 * vs)
                return RC_K_GVI_INITIAL_SPEED;
        } else if (v < -1e-9 * ell) {
            *amount = -v;
            return RC_K_GVI_INITIAL_VIOLATED;
        }
    }
    return RC_K_GVI_OK;
}

/* ------------------------------------------------------------------ */
/* Equality projection (eq. 47) and the reflection metric.             */

/* F = equality columns at q, and the LU factors of F^T M^-1 F. */
RC_HD static inline int rc_k_gvi_equalities_at(const rc_k_gvi *g,
                                               rc_k_gvi_work *w,
                                               const double *q)
{
    int N = g->N, ne = g->neq, a, b;
    if (ne == 0)
        return RC_K_GVI_OK;
    for (a = 0; a < ne; ++a)
        rc_k_gvi_column(g, g->eq[a], q, w->F + (long)a * N);
    for (a = 0; a < ne; ++a)
        for (b = 0; b < ne; ++b)
            w->ftmf[a * ne + b] =
                rc_k_gvi_cdot(g, g->eq[a], g->eq[b], w->F + (long)a * N,
                              g->inv_mass_c, w->F + (long)b * N);
    /* factor once; rc_k_gvi_project solves with the factors per column */
    if (rc_k_lu_solve(ne, w->ftmf, (double *)0, w->fpiv) != 0)
        return RC_K_GVI_EQ_SINGULAR;
    return RC_K_GVI_OK;
}

/* u <- (I - F (F^T M^-1 F)^-1 F^T M^-1) u.  Uses the tail of rhs (N +
 * mmax >= N + neq entries) for the coefficients. */
RC_HD static inline void rc_k_gvi_project(const rc_k_gvi *g, rc_k_gvi_work *w,
                                          double *u)
{
    int N = g->N, ne = g->neq, a, i;
    double *cf = w->rhs + N;
    if (ne == 0)
        return;
    for (a = 0; a < ne; ++a)
        cf[a] = rc_k_gvi_cdot(g, g->eq[a], g->eq[a], w->F + (long)a * N,
                              g->inv_mass_c, u);
    rc_k_lu_resolve(ne, w->ftmf, w->fpiv, cf);
    for (a = 0; a < ne; ++a)
        for (i = 0; i < N; ++i)
            u[i] -= w->F[(long)a * N + i] * cf[a];
}

/* out = W u: M^-1 u, plus (h^2/6) M^-1 Hess V(q) M^-1 u for the modified
 * Hamiltonian (DESIGN §3).  Uses t2 as scratch. */
RC_HD static inline void rc_k_gvi_apply_W(const rc_k_gvi *g, rc_k_gvi_work *w,
                                          const double *q, const double *u,
                                          double *out)
{
    int N = g->N, i;
    double h = g->h;
    for (i = 0; i < N; ++i)
        out[i] = g->inv_mass_c[i] * u[i];
    if (g->modified) {
        for (i = 0; i < g->m.n; ++i)
            rc_k_hessian_vector_particle(g->m, q, out, i,
                                         w->t2 + (long)i * g->m.dim);
        for (i = 0; i < N; ++i)
            out[i] += h * h / 6.0 * g->inv_mass_c[i] * w->t2[i];
    }
}

/* ------------------------------------------------------------------ */
/* Reflection (Algorithms 2 and 3).                                    */

/* Reflect p against the m terms set[] at q.  *passes_out: passes done. */
RC_HD static inline int rc_k_gvi_reflect(const rc_k_gvi *g, rc_k_gvi_work *w,
                                         const double *q, double *p,
                                         const int *set, int m,
                                         int max_passes, int *passes_out)
{
    int N = g->N, pass = 0, a, b, i, nv, code;
    *passes_out = 0;
    if (m == 0)
        return RC_K_GVI_OK;
    if ((code = rc_k_gvi_equalities_at(g, w, q)) != RC_K_GVI_OK)
        return code;
    /* Projected columns and their W-images are fixed for the call (q
     * does not move); compute them once for the whole set. */
    for (a = 0; a < m; ++a) {
        double *col = w->cols + (long)a * N;
        rc_k_gvi_column(g, set[a], q, col);
        rc_k_gvi_project(g, w, col);
        rc_k_gvi_apply_W(g, w, q, col, w->wcols + (long)a * N);
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
            if (g->moreau || s < -g->eps_v)
                V[nv++] = a;
        }
        if (nv == 0 || (g->moreau && pass == 1))
            break;
        if (pass >= max_passes) {
            *passes_out = pass;
            w->fail_detail = max_passes;
            return RC_K_GVI_REFLECT_PASSES;
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
                double gg = 0.0;
                for (i = 0; i < N; ++i)
                    gg += wa[i] * cb[i];
                w->gram[a * nv + b] = gg;
                w->gram[b * nv + a] = gg;
            }
        }
        /* solver tolerance: 1e-12 of its own scale (rc_nnls.h) */
        r = rc_k_nnls_gram(nv, w->gram, w->bvec, w->lam, w->nnls_w,
                           w->nnls_iw, 0, 1e-12);
        w->nnls_iterations += r.iterations;
        if (r.status != 0) {
            w->fail_detail = nv;
            return r.status == 1 ? RC_K_GVI_NNLS_CAP : RC_K_GVI_NNLS_BREAKDOWN;
        }
        for (a = 0; a < nv; ++a) {
            const double *ca = w->cols + (long)V[a] * N;
            if (w->lam[a] != 0.0)
                for (i = 0; i < N; ++i)
                    p[i] += w->lam[a] * ca[i];
        }
        ++pass;
    }
    *passes_out = pass;
    return RC_K_GVI_OK;
}

/* ------------------------------------------------------------------ */
/* Position update (eq. 48) by Newton inside an active-set loop.       */

/* The stopping rule of every Newton solve (midpoint, GVI, direct): the
 * update dmax is below tol * max(1, |x|inf), or it stopped shrinking
 * (dmax >= the previous update) once within 1e3 tol of that, which is
 * the round-off floor. */
RC_HD static inline int rc_k_newton_converged(double dmax, double prev,
                                              double xmax, double tol)
{
    double scale = xmax > 1.0 ? xmax : 1.0;
    return dmax <= tol * scale || (dmax >= prev && dmax <= 1e3 * tol * scale);
}

/* The term of column a of a Newton solve: the active inequalities
 * act[0..nact), then the equalities. */
RC_HD static inline int rc_k_gvi_col_term(const rc_k_gvi *g, const int *act,
                                          int nact, int a)
{
    return a < nact ? act[a] : g->eq[a - nact];
}

/* w->imp = C mu for the m = nact + neq columns in w->mcols: each
 * coordinate's sum over the columns in column order from +0.0, with the
 * columns' +0.0 entries off their blocks skipped (the same bits: see
 * rc_k_gvi_cdot). */
RC_HD static inline void rc_k_gvi_impulse(const rc_k_gvi *g, rc_k_gvi_work *w,
                                          const int *act, int nact)
{
    int i, a, b, c, pa[2], nb, d = g->m.dim, N = g->N, m = nact + g->neq;
    for (i = 0; i < N; ++i)
        w->imp[i] = 0.0;
    for (a = 0; a < m; ++a) {
        const double *ca = w->mcols + (long)a * N;
        nb = rc_k_gvi_parts(g, rc_k_gvi_col_term(g, act, nact, a), pa);
        for (b = 0; b < nb; ++b)
            for (c = 0; c < d; ++c) {
                long k = (long)pa[b] * d + c;
                w->imp[k] += ca[k] * w->mu[a];
            }
    }
}

/* Value of term k as the Newton solve sees it at the iterate x, with
 * its derivative d(value)/dx in row (N doubles):
 *   GVI:             g(x) (linearized or not: see rc_k_gvi_con_eval);
 *   direct-endpoint: g(x);
 *   direct-midpoint: g((q + x)/2), derivative halved.
 * Uses t2 as scratch. */
RC_HD static inline double rc_k_gvi_row(const rc_k_gvi *g, rc_k_gvi_work *w,
                                        int k, const double *q,
                                        const double *x, double *row)
{
    int i, N = g->N;
    double v;
    if (g->colmode == RC_COLS_AT_MID) {
        for (i = 0; i < N; ++i)
            w->t2[i] = 0.5 * (q[i] + x[i]);
        v = rc_k_gvi_column(g, k, w->t2, row);
        for (i = 0; i < N; ++i)
            row[i] *= 0.5;
        return v;
    }
    return rc_k_gvi_column(g, k, x, row);
}

/* Verlet base: the position update is linear in the multipliers,
 *   x(mu) = x0 + h M^-1 C mu,   x0 = q + h M^-1 (p - h/2 grad V(q)),
 * so Newton runs on mu alone (SHAKE): J = grad c(x)^T h M^-1 C, m x m.
 * Needs w->g0 = grad V(q) and the columns C in w->mcols. */
RC_HD static inline int rc_k_gvi_newton_verlet(const rc_k_gvi *g,
                                               rc_k_gvi_work *w,
                                               const double *q,
                                               const double *p,
                                               const int *act, int nact,
                                               double *x, int *iters)
{
    int N = g->N, m = nact + g->neq;
    int i, a, b, it, finite = 1;
    double h = g->h, tol = g->newton_tol, prev = INFINITY;
    double *x0 = w->t0, *row = w->t1;
    for (i = 0; i < N; ++i) {
        x0[i] = q[i] + h * g->inv_mass_c[i] * (p[i] - 0.5 * h * w->g0[i]);
        x[i] = x0[i];
        w->imp[i] = 0.0;
    }
    if (m == 0)
        return RC_K_GVI_OK;
    for (it = 1; it <= g->newton_max_iter; ++it) {
        double dmax = 0.0, xmax = 0.0;
        for (a = 0; a < m; ++a) {
            int k = rc_k_gvi_col_term(g, act, nact, a);
            w->rhs[a] = -rc_k_gvi_row(g, w, k, q, x, row);
            for (b = 0; b < m; ++b)
                w->jac[a * m + b] =
                    h * rc_k_gvi_cdot(g, k, rc_k_gvi_col_term(g, act, nact, b),
                                      row, g->inv_mass_c,
                                      w->mcols + (long)b * N);
        }
        if (rc_k_lu_solve(m, w->jac, w->rhs, w->jpiv) != 0) {
            *iters += it;
            return RC_K_GVI_JAC_SINGULAR;
        }
        for (a = 0; a < m; ++a)
            w->mu[a] += w->rhs[a];
        /* x from x0 afresh (no accumulation of updates) */
        rc_k_gvi_impulse(g, w, act, nact);
        for (i = 0; i < N; ++i) {
            double xn = x0[i] + h * g->inv_mass_c[i] * w->imp[i];
            if (!rc_isfinite(xn))
                finite = 0;
            dmax = rc_fmax(dmax, rc_fabs(xn - x[i]));
            xmax = rc_fmax(xmax, rc_fabs(xn));
            x[i] = xn;
        }
        if (!finite)
            break;
        if (rc_k_newton_converged(dmax, prev, xmax, tol)) {
            *iters += it;
            return RC_K_GVI_OK;
        }
        prev = dmax;
    }
    *iters += g->newton_max_iter;
    return RC_K_GVI_NEWTON;
}

/* Newton on (x, mu) for the columns `act` (inequality term indices,
 * nact of them) plus every equality.  x holds the initial guess and the
 * result; w->mu the multipliers (inequalities first), w->imp = C mu.
 * *iters adds the iterations done.  The Verlet base goes to the
 * multiplier-only solve above; the midpoint base, nonlinear in x through
 * grad V((q+x)/2), and the direct methods solve the full (N+m) system. */
RC_HD static inline int rc_k_gvi_newton(const rc_k_gvi *g, rc_k_gvi_work *w,
                                        const double *q, const double *p,
                                        const int *act, int nact, double *x,
                                        int *iters)
{
    int N = g->N, m = nact + g->neq, K = N + m;
    int i, a, c, it, finite = 1, midpoint = g->midpoint;
    int moving = g->colmode != RC_COLS_AT_Q; /* columns depend on x */
    double h = g->h, tol = g->newton_tol, prev = INFINITY;
    double *xi = w->t1, *e = w->t0, *hcol = w->y;

    if (m > g->mmax) {
        w->fail_detail = m;
        return RC_K_GVI_TOO_MANY;
    }
    /* Columns at q: active inequalities, then equalities. */
    for (a = 0; a < m; ++a)
        rc_k_gvi_column(g, a < nact ? act[a] : g->eq[a - nact], q,
                        w->mcols + (long)a * N);
    for (a = 0; a < m; ++a)
        w->mu[a] = 0.0;
    if (!midpoint && !moving)
        return rc_k_gvi_newton_verlet(g, w, q, p, act, nact, x, iters);
    for (it = 1; it <= g->newton_max_iter; ++it) {
        double dmax = 0.0, xmax = 0.0;
        const double *gV;
        if (midpoint) {
            for (i = 0; i < N; ++i)
                xi[i] = 0.5 * (q[i] + x[i]);
            rc_k_gvi_gradient(g, xi, w->g1);
            gV = w->g1;
        } else {
            gV = w->g0;
        }
        if (moving) {
            /* direct methods: force directions at the end point or the
             * midpoint, re-evaluated at every iterate */
            for (i = 0; i < N; ++i)
                w->t2[i] = g->colmode == RC_COLS_AT_X ? x[i]
                                                      : 0.5 * (q[i] + x[i]);
            for (a = 0; a < m; ++a)
                rc_k_gvi_column(g, a < nact ? act[a] : g->eq[a - nact], w->t2,
                                w->mcols + (long)a * N);
        }
        /* residual r1 = M(x-q)/h - p + h/2 gradV - C mu, r2 = c(x) */
        for (i = 0; i < N; ++i) {
            double s = g->mass_c[i] * (x[i] - q[i]) / h - p[i] +
                       0.5 * h * gV[i];
            for (a = 0; a < m; ++a)
                s -= w->mcols[(long)a * N + i] * w->mu[a];
            w->rhs[i] = -s;
        }
        rc_k_gvi_zero(K * K, w->jac);
        for (a = 0; a < m; ++a) {
            double *row = w->jac + (long)(N + a) * K;
            int k = a < nact ? act[a] : g->eq[a - nact];
            w->rhs[N + a] = -rc_k_gvi_row(g, w, k, q, x, row);
        }
        for (i = 0; i < N; ++i) {
            w->jac[(long)i * K + i] = g->mass_c[i] / h;
            for (a = 0; a < m; ++a)
                w->jac[(long)i * K + N + a] = -w->mcols[(long)a * N + i];
        }
        {
            /* + (h/4) Hess V((q+x)/2) - sum_a mu_a Hess c_a(y) dy/dx,
             * column by column (the second term only when the force
             * directions move with x) */
            double dydx = g->colmode == RC_COLS_AT_MID ? 0.5 : 1.0;
            rc_k_gvi_zero(N, e);
            for (c = 0; c < N; ++c) {
                e[c] = 1.0;
                if (midpoint)
                    for (i = 0; i < g->m.n; ++i)
                        rc_k_hessian_vector_particle(
                            g->m, xi, e, i, hcol + (long)i * g->m.dim);
                else
                    rc_k_gvi_zero(N, hcol);
                for (i = 0; i < N; ++i)
                    hcol[i] *= 0.25 * h;
                if (moving)
                    for (a = 0; a < m; ++a)
                        rc_k_constraint_hessian_vector(
                            &g->con[a < nact ? act[a] : g->eq[a - nact]],
                            g->m.dim, w->t2, -w->mu[a] * dydx, e, hcol);
                e[c] = 0.0;
                for (i = 0; i < N; ++i)
                    w->jac[(long)i * K + c] += hcol[i];
            }
        }
        if (rc_k_lu_solve(K, w->jac, w->rhs, w->jpiv) != 0) {
            *iters += it;
            return RC_K_GVI_NEWTON_SINGULAR;
        }
        for (i = 0; i < N; ++i) {
            x[i] += w->rhs[i];
            /* rc_fmax keeps a NaN, but test finiteness explicitly */
            if (!rc_isfinite(x[i]))
                finite = 0;
            dmax = rc_fmax(dmax, rc_fabs(w->rhs[i]));
            xmax = rc_fmax(xmax, rc_fabs(x[i]));
        }
        for (a = 0; a < m; ++a)
            w->mu[a] += w->rhs[N + a];
        if (!finite)
            break;
        if (rc_k_newton_converged(dmax, prev, xmax, tol)) {
            *iters += it;
            rc_k_gvi_impulse(g, w, act, nact);
            return RC_K_GVI_OK;
        }
        prev = dmax;
    }
    *iters += g->newton_max_iter;
    return RC_K_GVI_NEWTON;
}

/* Eq. 48 with complementarity: start with every member of S held at
 * g = 0; release a member whose multiplier is negative, re-admit one
 * that the free step pushes through.  Leaves the final active list in
 * w->active (count in *nact_out). */
RC_HD static inline int rc_k_gvi_position(const rc_k_gvi *g, rc_k_gvi_work *w,
                                          const double *q, const double *p,
                                          const int *S, int nS, double *x,
                                          int *nact_out, int *iters)
{
    int N = g->N, i, a, outer, nact = 0, max_outer = 2 * nS + 4, code;
    double pscale = 0.0, tau_lam, tau_g = 1e-3 * g->eps_g;
    int *on = w->setV; /* flags: 1 = held at g = 0 */

    for (i = 0; i < N; ++i)
        pscale = rc_fmax(pscale, rc_fabs(p[i]));
    /* multipliers are momenta: release only if clearly negative */
    tau_lam = 1e-12 * (pscale > 0.0 ? pscale : 1.0);
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
        if ((code = rc_k_gvi_newton(g, w, q, p, w->active, nact, x, iters)) !=
            RC_K_GVI_OK)
            return code;
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
                double gv = rc_k_gvi_value(g, S[a], x);
                if (gv < -tau_g && gv < worst_v) {
                    worst_v = gv;
                    worst = a;
                }
            }
        if (worst >= 0) {
            on[worst] = 1;
            continue;
        }
        *nact_out = nact;
        return RC_K_GVI_OK;
    }
    w->fail_detail = max_outer;
    return RC_K_GVI_COMPLEMENTARITY;
}

/* ------------------------------------------------------------------ */
/* Momentum update (eq. 49): y = y0 + C mu with C^T M^-1 y = 0.         */

RC_HD static inline int rc_k_gvi_momentum(const rc_k_gvi *g, rc_k_gvi_work *w,
                                          const double *q, const double *p,
                                          const double *x, const int *act,
                                          int nact, double *y)
{
    int N = g->N, m = nact + g->neq, i, a, b;
    double h = g->h;
    const double *at = x;
    if (g->midpoint) {
        for (i = 0; i < N; ++i)
            w->t1[i] = 0.5 * (q[i] + x[i]);
        at = w->t1;
    }
    rc_k_gvi_gradient(g, at, w->g1);
    /* D2 Ld(q, x) = M (x-q)/h - h/2 grad V(.), with M (x-q)/h replaced by
     * what the position update made it, p - h/2 grad V(.) + C mu: the
     * same number in exact arithmetic, but free of the rounding of x
     * amplified by m/h (which grows with |q|). */
    for (i = 0; i < N; ++i) {
        double kick = g->midpoint ? w->g1[i] : w->g0[i];
        y[i] = p[i] - 0.5 * h * kick + w->imp[i] - 0.5 * h * w->g1[i];
    }
    if (m == 0)
        return RC_K_GVI_OK;
    for (a = 0; a < m; ++a) {
        int k = a < nact ? act[a] : g->eq[a - nact];
        rc_k_gvi_column(g, k, x, w->mcols + (long)a * N);
    }
    for (a = 0; a < m; ++a) {
        int ka = rc_k_gvi_col_term(g, act, nact, a);
        const double *ca = w->mcols + (long)a * N;
        w->rhs[a] = -rc_k_gvi_cdot(g, ka, ka, ca, g->inv_mass_c, y);
        for (b = 0; b < m; ++b)
            w->jac[a * m + b] =
                rc_k_gvi_cdot(g, ka, rc_k_gvi_col_term(g, act, nact, b), ca,
                              g->inv_mass_c, w->mcols + (long)b * N);
    }
    if (rc_k_lu_solve(m, w->jac, w->rhs, w->jpiv) != 0)
        return RC_K_GVI_MOMENTUM_SINGULAR;
    for (a = 0; a < m; ++a)
        for (i = 0; i < N; ++i)
            y[i] += w->mcols[(long)a * N + i] * w->rhs[a];
    return RC_K_GVI_OK;
}

/* ------------------------------------------------------------------ */
/* The step.                                                           */

/* Predictor q^p (eq. 50): the base position update with no inequality,
 * D1 Ld(q, x) + p = 0.  Equality constraints are "active at all times"
 * (§7.2), so they are part of it (R1): a rod or pendulum moves particles
 * along curves that the free drift would miss.  For the Verlet base
 * without equalities this is the explicit drift; otherwise one Newton
 * solve.  Needs w->g0 = grad V(q). */
RC_HD static inline int rc_k_gvi_predict(const rc_k_gvi *g, rc_k_gvi_work *w,
                                         const double *q, const double *p,
                                         double *qp, int *iters)
{
    int i, N = g->N;
    double h = g->h;
    for (i = 0; i < N; ++i)
        qp[i] = q[i] + h * g->inv_mass_c[i] * (p[i] - 0.5 * h * w->g0[i]);
    if (g->midpoint || (g->neq > 0 && !g->seed_exact))
        return rc_k_gvi_newton(g, w, q, p, (const int *)0, 0, qp, iters);
    return RC_K_GVI_OK;
}

/* One GVI step from (q, p).  The reflection changes p in place (it
 * becomes Algorithm 1's p^+); q is read only.  On success the new state
 * is in (w->x, w->y), finite, and the caller commits it. */
RC_HD static inline int rc_k_gvi_step(const rc_k_gvi *g, rc_k_gvi_work *w,
                                      const double *q, double *p,
                                      rc_k_gvi_step_info *info)
{
    int a, nA = 0, nS = 0, nact = 0, passes = 0, iters = 0, code, i;
    w->nnls_iterations = 0;
    /* 1. predictor */
    rc_k_gvi_gradient(g, q, w->g0);
    if ((code = rc_k_gvi_predict(g, w, q, p, w->qp, &iters)) != RC_K_GVI_OK)
        return code;
    /* 2. extended active set */
    for (a = 0; a < g->nineq; ++a) {
        int k = g->ineq[a];
        double gq = rc_k_gvi_value(g, k, q);
        w->val[k] = gq;
        w->inA[k] = 0; /* membership flags of A, by term */
        if (gq <= g->eps_g || rc_k_gvi_value(g, k, w->qp) <= 0.0) {
            w->setA[nA++] = k;
            w->inA[k] = 1;
        }
    }
    /* 3. reflection at q, with the extended set closed under the
     * reflected predictor (R2).  Each round adds a term, so there are at
     * most (number of inequality terms) rounds. */
    for (;;) {
        for (;;) {
            int added = 0, np = 0;
            if (nA > 0 &&
                (code = rc_k_gvi_reflect(g, w, q, p, w->setA, nA,
                                         g->max_passes, &np)) != RC_K_GVI_OK)
                return code;
            passes += np;
            if (np == 0 || g->seed_exact)
                break;
            if ((code = rc_k_gvi_predict(g, w, q, p, w->qp, &iters)) !=
                RC_K_GVI_OK)
                return code;
            for (a = 0; a < g->nineq; ++a) {
                int k = g->ineq[a];
                if (!w->inA[k] && rc_k_gvi_value(g, k, w->qp) <= 0.0) {
                    w->setA[nA++] = k;
                    w->inA[k] = 1;
                    added++;
                }
            }
            if (!added)
                break;
        }
        /* 4. smooth set (and R3: a term the reflected predictor still
         * violates is held by the complementarity) */
        nS = 0;
        for (a = 0; a < nA; ++a) {
            int k = w->setA[a];
            if (w->val[k] <= g->eps_g &&
                rc_fabs(rc_k_gvi_speed(g, k, q, p)) <= g->eps_v)
                w->setS[nS++] = k;
            else if (!g->seed_exact && rc_k_gvi_value(g, k, w->qp) < 0.0)
                w->setS[nS++] = k;
        }
        /* w->qp holds the predictor of the reflected p (the starting
         * guess of the position update), except in seed_exact mode after
         * a reflection, where it is refreshed here. */
        if (g->seed_exact && passes > 0 &&
            (code = rc_k_gvi_predict(g, w, q, p, w->qp, &iters)) !=
                RC_K_GVI_OK)
            return code;
        /* 5. position update.  With no held term, equalities and the
         * multiplier Newton (the Verlet form, columns at q, not
         * seed-exact) it is the predictor's solve from the same (q, p):
         * that Newton starts from the drift, not from its guess, so its
         * x, mu and C mu, still in w, are taken as they are (the lanes,
         * rc_k_lanes_eq_step, do the same). */
        if (nS == 0 && g->neq > 0 && !g->midpoint &&
            g->colmode == RC_COLS_AT_Q && !g->seed_exact) {
            for (i = 0; i < g->N; ++i)
                w->x[i] = w->qp[i];
            nact = 0;
        } else if ((code = rc_k_gvi_position(g, w, q, p, w->setS, nS, w->x,
                                             &nact, &iters)) != RC_K_GVI_OK)
            return code;
        /* R2, continued: a term outside A that the position update
         * itself ends up violating joins A, and the step is redone from
         * the reflection.  Each round adds a term. */
        if (!g->seed_exact) {
            int added = 0;
            for (a = 0; a < g->nineq; ++a) {
                int k = g->ineq[a];
                if (!w->inA[k] && rc_k_gvi_value(g, k, w->x) < 0.0) {
                    w->setA[nA++] = k;
                    w->inA[k] = 1;
                    added++;
                }
            }
            if (added)
                continue;
        }
        break;
    }
    /* 6. momentum update at x */
    if ((code = rc_k_gvi_momentum(g, w, q, p, w->x, w->active, nact, w->y)) !=
        RC_K_GVI_OK)
        return code;
    for (i = 0; i < g->N; ++i)
        if (!rc_isfinite(w->x[i]) || !rc_isfinite(w->y[i]))
            return RC_K_GVI_NONFINITE;
    info->active = nA;
    info->reflections = passes;
    info->iterations = iters + w->nnls_iterations;
    return RC_K_GVI_OK;
}

#ifdef __cplusplus
}
#endif
#endif

/* The variational integrators and impact methods of seed 001 (Pekarek &
 * Murphey 2014) for L(q, q̇) = ½ q̇ᵀM(q)q̇ − V(q) with unilateral
 * g_k(q) ≥ 0: SVA, SVB, SVC, the midpoint VI, and CVA, VCI, MCVA-A,
 * MCVA-C, written once for the host (src/host/model/vi.c, which words
 * the failures and holds the method tables; the algorithms and their
 * conventions are described there) and the device (one thread per
 * ensemble member, rc_cuda_vi.cu).
 *
 * Item: one member, its workspace an rc_k_vi (fixed sizes, no
 * allocation, nothing printed).  The model's jet comes from a built-in
 * body of rc_lagrangian.h (body = RC_K_LAG_CART or RC_K_LAG_DOUBLE with
 * the member's par[8]) on host and device, or, on the host only, from a
 * callback (expressions, body = RC_K_LAG_EXPR).  Failures return an
 * RC_K_VI_* code with its details in w->fail (rc_vi_fail_text words it). */
#ifndef RC_VI_H
#define RC_VI_H

#include <math.h>
#include <string.h>

#include "rc_hd.h"
#include "rc_lagrangian.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RC_K_VI_NMX RC_K_LAG_MAX_N
#define RC_K_VI_LOG 64 /* impacts kept in the log */

/* A discrete Lagrangian as a quadrature: J sub-steps (1 or 2), nt terms
 * of weight w[s] (Σ w = 1) at the point Σ_node c[s][node] q_node with
 * velocity v_{vel[s]}. */
typedef struct rc_k_vi_form {
    int id; /* RC_K_VI_FORM_* */
    int J, nt;
    double w[2];
    int vel[2];
    double c[2][3];
} rc_k_vi_form;

enum {
    RC_K_VI_FORM_SVC = 0,
    RC_K_VI_FORM_MID,
    RC_K_VI_FORM_SVA,
    RC_K_VI_FORM_SVB
};

/* The impact treatment. */
enum { RC_K_VI_NONE = 0, RC_K_VI_CVA, RC_K_VI_VCI, RC_K_VI_MCVA };

/* What went wrong (details in rc_k_vi_fail). */
enum {
    RC_K_VI_OK = 0,
    RC_K_VI_RESIDUAL_NONFINITE, /* form, x = h */
    RC_K_VI_NEWTON_SINGULAR,    /* form, x = h */
    RC_K_VI_UPDATE_NONFINITE,   /* form */
    RC_K_VI_NEWTON,             /* form, x = h */
    RC_K_VI_MASS_SINGULAR,
    RC_K_VI_MIDDLE_SINGULAR,
    RC_K_VI_D2D2_SINGULAR,
    RC_K_VI_GAUSS,              /* x = τ */
    RC_K_VI_MASS_SINGULAR_IMPACT,
    RC_K_VI_GRAZING,            /* k */
    RC_K_VI_NO_RESET,           /* k, x = approach speed */
    RC_K_VI_ZENO_START,         /* x = time into the step */
    RC_K_VI_SIMULTANEOUS,       /* k, c, x = time into the step */
    RC_K_VI_TOO_MANY,           /* more than max_events */
    RC_K_VI_STATE_NONFINITE     /* x = t */
};

/* The details of a failure (which apply: see the codes above). */
typedef struct rc_k_vi_fail {
    int form, k, c;
    double x;
} rc_k_vi_fail;

/* One impact as the reset saw it: the configuration, the momenta before
 * and after, and the method's own energy before and after (CVA: 0, 0). */
typedef struct rc_k_vi_impact {
    double q[8], p_minus[8], p_plus[8];
    double e_minus, e_plus;
    int constraint;
} rc_k_vi_impact;

/* The jet callback of the expression route (host only). */
typedef void (*rc_k_vi_eval_fn)(const void *ctx, const double *q,
                                int order, rc_k_lag_jet *j);

/* One member's workspace: the model, the method, the scratch. */
typedef struct rc_k_vi {
    int n, ng;
    int body;              /* RC_K_LAG_* */
    double par[8];         /* a built-in's parameters */
    rc_k_vi_eval_fn eval;  /* expressions (host): the jet */
    const void *eval_ctx;
    rc_k_vi_form form;     /* the full step's L_d (and H̃'s) */
    rc_k_vi_form svc;      /* the partial steps of CVA and VCI */
    int impact;            /* RC_K_VI_* */
    int mh_sym;            /* H̃ to O(h⁴) by symmetrization */
    double h, tol;
    int maxit, max_events;
    long impacts;
    int iters;
    rc_k_lag_jet jet;
    /* the last rc_k_vi_ld evaluation */
    double Ld, Ed;
    double G[3 * RC_K_VI_NMX];
    double Hs[9 * RC_K_VI_NMX * RC_K_VI_NMX];
    rc_k_vi_fail fail;     /* the last failure's details */
    /* the last RC_K_VI_LOG impacts */
    rc_k_vi_impact log[RC_K_VI_LOG];
    int nlog;
} rc_k_vi;

/* Form `id`'s quadrature. */
RC_HD static inline void rc_k_vi_form_set(int id, rc_k_vi_form *f)
{
    int s, a;
    f->id = id;
    for (s = 0; s < 2; ++s)
        for (a = 0; a < 3; ++a)
            f->c[s][a] = 0.0;
    f->w[0] = 0.5;
    f->w[1] = 0.5;
    f->nt = 2;
    if (id == RC_K_VI_FORM_SVC || id == RC_K_VI_FORM_MID) {
        f->J = 1;
        f->vel[0] = f->vel[1] = 0;
        if (id == RC_K_VI_FORM_SVC) {
            f->c[0][0] = 1.0;
            f->c[1][1] = 1.0;
        } else {
            f->nt = 1;
            f->w[0] = 1.0;
            f->w[1] = 0.0;
            f->c[0][0] = 0.5;
            f->c[0][1] = 0.5;
        }
    } else {
        f->J = 2;
        f->vel[0] = 0;
        f->vel[1] = 1;
        if (id == RC_K_VI_FORM_SVA) {
            f->c[0][0] = 1.0;
            f->c[1][2] = 1.0;
        } else {
            f->c[0][1] = 1.0;
            f->c[1][1] = 1.0;
        }
    }
}

/* Set up w for a model (n coordinates, ng constraints, body, par[8] or
 * eval/ctx) and a method (form, impact, h, Newton tolerance and
 * iterations, max_events); zero counters. */
RC_HD static inline void rc_k_vi_init(rc_k_vi *w, int n, int ng, int body,
                                      const double *par,
                                      rc_k_vi_eval_fn eval, const void *ctx,
                                      int form, int impact, double h,
                                      double tol, int maxit, int max_events)
{
    int a;
    w->n = n;
    w->ng = ng;
    w->body = body;
    for (a = 0; a < 8; ++a)
        w->par[a] = par ? par[a] : 0.0;
    w->eval = eval;
    w->eval_ctx = ctx;
    rc_k_vi_form_set(form, &w->form);
    rc_k_vi_form_set(RC_K_VI_FORM_SVC, &w->svc);
    w->impact = impact;
    /* O(h⁴) H̃ for the Störmer–Verlet compositions (MCVA-A); the seed's
     * O(h³) truncation for SVC (CVA, VCI, MCVA-C) and the midpoint VI */
    w->mh_sym = form == RC_K_VI_FORM_SVA || form == RC_K_VI_FORM_SVB;
    w->h = h;
    w->tol = tol;
    w->maxit = maxit;
    w->max_events = max_events;
    w->impacts = 0;
    w->iters = 0;
    w->nlog = 0;
    w->fail.form = w->fail.k = w->fail.c = 0;
    w->fail.x = 0.0;
}

/* The jet at q into w->jet. */
RC_HD static inline void rc_k_vi_eval(rc_k_vi *w, const double *q,
                                      int order)
{
#if !defined(__CUDA_ARCH__)
    if (w->body == RC_K_LAG_EXPR) {
        w->eval(w->eval_ctx, q, order, &w->jet);
        return;
    }
#endif
    rc_k_lag_builtin_eval(w->body, w->par, w->ng, q, &w->jet);
}

/* ------------------------------------------------------------------ */
/* Small dense algebra (n <= 2 NMX).                                   */

/* Solve A x = b in place (A is k x k, row-major, destroyed; b becomes x)
 * for nr right-hand sides stored as columns of b (k x nr).  Partial
 * pivoting; 1 when singular. */
RC_HD static inline int rc_k_vi_lsolve(int k, double *A, int nr, double *b)
{
    int i, j, r, c;
    for (c = 0; c < k; ++c) {
        int piv = c;
        double best = fabs(A[c * k + c]);
        for (r = c + 1; r < k; ++r)
            if (fabs(A[r * k + c]) > best) {
                best = fabs(A[r * k + c]);
                piv = r;
            }
        if (!(best > 0.0) || !isfinite(best))
            return 1;
        if (piv != c) {
            for (j = 0; j < k; ++j) {
                double t = A[c * k + j];
                A[c * k + j] = A[piv * k + j];
                A[piv * k + j] = t;
            }
            for (j = 0; j < nr; ++j) {
                double t = b[c * nr + j];
                b[c * nr + j] = b[piv * nr + j];
                b[piv * nr + j] = t;
            }
        }
        for (r = c + 1; r < k; ++r) {
            double f = A[r * k + c] / A[c * k + c];
            if (f == 0.0)
                continue;
            for (j = c; j < k; ++j)
                A[r * k + j] -= f * A[c * k + j];
            for (j = 0; j < nr; ++j)
                b[r * nr + j] -= f * b[c * nr + j];
        }
    }
    for (i = k - 1; i >= 0; --i)
        for (j = 0; j < nr; ++j) {
            double s = b[i * nr + j];
            for (c = i + 1; c < k; ++c)
                s -= A[i * k + c] * b[c * nr + j];
            b[i * nr + j] = s / A[i * k + i];
        }
    return 0;
}

/* x = M⁻¹ b for the n x n M of the jet. */
RC_HD static inline int rc_k_vi_minv(const rc_k_lag_jet *j, const double *b,
                                     double *x)
{
    double A[RC_K_VI_NMX * RC_K_VI_NMX];
    int n = j->n;
    memcpy(A, j->M, sizeof(double) * (size_t)(n * n));
    memcpy(x, b, sizeof(double) * (size_t)n);
    return rc_k_vi_lsolve(n, A, 1, x);
}

RC_HD static inline double rc_k_vi_dot(int n, const double *a,
                                       const double *b)
{
    double s = 0.0;
    int i;
    for (i = 0; i < n; ++i)
        s += a[i] * b[i];
    return s;
}

/* ------------------------------------------------------------------ */
/* The discrete Lagrangian.                                            */

/* L_d of form f with step h at the nodes q0, q0 + (h/J) v0, ... : value
 * w->Ld, discrete energy w->Ed = −D₃L_d, gradient w->G[node*n + i] and,
 * when hess, the Hessian w->Hs (N x N, N = (J+1) n, in node positions). */
RC_HD static inline void rc_k_vi_ld(rc_k_vi *w, const rc_k_vi_form *f,
                                    double h, const double *q0,
                                    const double *v, int hess)
{
    int n = w->n, J = f->J, N = (J + 1) * n, s, i, k, a, b;
    double x[3 * RC_K_VI_NMX], P[RC_K_VI_NMX], Mv[RC_K_VI_NMX];
    double Lq[RC_K_VI_NMX], Lqq[RC_K_VI_NMX * RC_K_VI_NMX];
    double Lqv[RC_K_VI_NMX * RC_K_VI_NMX];
    rc_k_lag_jet *jt = &w->jet;
    for (i = 0; i < n; ++i)
        x[i] = q0[i];
    for (a = 1; a <= J; ++a)
        for (i = 0; i < n; ++i)
            x[a * n + i] = x[(a - 1) * n + i] + (h / J) * v[(a - 1) * n + i];
    w->Ld = 0.0;
    w->Ed = 0.0;
    memset(w->G, 0, sizeof(double) * (size_t)N);
    if (hess)
        memset(w->Hs, 0, sizeof(double) * (size_t)(N * N));
    for (s = 0; s < f->nt; ++s) {
        const double *V = v + f->vel[s] * n;
        double cs[3], bs[3], T, L, E;
        for (i = 0; i < n; ++i) {
            P[i] = 0.0;
            for (a = 0; a <= J; ++a)
                P[i] += f->c[s][a] * x[a * n + i];
        }
        /* a node's own coordinate where it is the point exactly */
        for (a = 0; a <= J; ++a)
            if (f->c[s][a] == 1.0)
                for (i = 0; i < n; ++i)
                    P[i] = x[a * n + i];
        rc_k_vi_eval(w, P, hess ? 2 : 1);
        for (i = 0; i < n; ++i) {
            Mv[i] = 0.0;
            for (k = 0; k < n; ++k)
                Mv[i] += jt->M[i * n + k] * V[k];
        }
        T = 0.5 * rc_k_vi_dot(n, V, Mv);
        L = T - jt->V;
        E = T + jt->V;
        for (k = 0; k < n; ++k) {
            double t = 0.0;
            for (i = 0; i < n; ++i) {
                double r = 0.0;
                for (b = 0; b < n; ++b)
                    r += jt->dM[(k * n + i) * n + b] * V[b];
                Lqv[k * n + i] = r; /* ∂²L/∂q_k∂v_i = (∂_k M v)_i */
                t += V[i] * r;
            }
            Lq[k] = 0.5 * t - jt->dV[k];
        }
        w->Ld += h * f->w[s] * L;
        w->Ed += f->w[s] * E;
        for (a = 0; a <= J; ++a) {
            cs[a] = f->c[s][a];
            bs[a] = 0.0;
        }
        bs[f->vel[s]] = -(double)J / h;
        bs[f->vel[s] + 1] = (double)J / h;
        for (a = 0; a <= J; ++a)
            for (i = 0; i < n; ++i)
                w->G[a * n + i] +=
                    h * f->w[s] * (cs[a] * Lq[i] + bs[a] * Mv[i]);
        if (!hess)
            continue;
        for (k = 0; k < n; ++k)
            for (i = 0; i < n; ++i) {
                double t = 0.0;
                for (a = 0; a < n; ++a)
                    for (b = 0; b < n; ++b)
                        t += V[a] * jt->d2M[((k * n + i) * n + a) * n + b] *
                             V[b];
                Lqq[k * n + i] = 0.5 * t - jt->d2V[k * n + i];
            }
        for (a = 0; a <= J; ++a)
            for (b = 0; b <= J; ++b) {
                double cc = cs[a] * cs[b], cb = cs[a] * bs[b];
                double bc = bs[a] * cs[b], bb = bs[a] * bs[b];
                if (cc == 0.0 && cb == 0.0 && bc == 0.0 && bb == 0.0)
                    continue;
                for (i = 0; i < n; ++i)
                    for (k = 0; k < n; ++k)
                        w->Hs[(a * n + i) * N + b * n + k] +=
                            h * f->w[s] *
                            (cc * Lqq[i * n + k] + cb * Lqv[i * n + k] +
                             bc * Lqv[k * n + i] + bb * jt->M[i * n + k]);
            }
    }
}

/* A failure of form f's solve with detail x. */
RC_HD static inline int rc_k_vi_failed(rc_k_vi *w, int code,
                                     const rc_k_vi_form *f, double x)
{
    w->fail.form = f ? f->id : 0;
    w->fail.x = x;
    return code;
}

/* Newton for the sub-step velocities v (J x n) of form f, step h, from
 * q0 such that node `target` (0 or J) has momentum pt: for target 0,
 * pt = −D1 L_d (the step F⁻ inverted); for target J, pt = D2 L_d (the q̄
 * of Appendix A); interior nodes D_m L_d = 0.  v holds the initial guess.
 * Leaves w->Ld/Ed/G/Hs at the solution; adds the iterations to *iters.
 * Converged when the velocity update is below newton_tol x max(1, |v|),
 * or when it has stopped shrinking below 1e-9 x max(1, |v|) (the
 * rounding floor of the residual). */
RC_HD static inline int rc_k_vi_solve(rc_k_vi *w, const rc_k_vi_form *f,
                                      double h, const double *q0,
                                      int target, const double *pt,
                                      double *v, int *iters)
{
    int n = w->n, J = f->J, N = (J + 1) * n, K = J * n, it, r, c, i, j;
    int rows[2];
    double A[4 * RC_K_VI_NMX * RC_K_VI_NMX], rhs[2 * RC_K_VI_NMX];
    double dx[3 * RC_K_VI_NMX], prev = INFINITY;
    for (r = 0; r < J; ++r)
        rows[r] = (target == 0) ? r : r + 1;
    for (it = 1; it <= w->maxit; ++it) {
        double err = 0.0, scale = 1.0;
        rc_k_vi_ld(w, f, h, q0, v, 1);
        for (r = 0; r < J; ++r)
            for (i = 0; i < n; ++i) {
                double g = w->G[rows[r] * n + i];
                if (rows[r] == target)
                    g += target == 0 ? pt[i] : -pt[i];
                rhs[r * n + i] = -g;
                for (c = 0; c < J; ++c)
                    for (j = 0; j < n; ++j)
                        A[(r * n + i) * K + c * n + j] =
                            w->Hs[(rows[r] * n + i) * N + (c + 1) * n + j];
            }
        for (i = 0; i < K; ++i)
            if (!isfinite(rhs[i]))
                return rc_k_vi_failed(w, RC_K_VI_RESIDUAL_NONFINITE, f, h);
        if (rc_k_vi_lsolve(K, A, 1, rhs))
            return rc_k_vi_failed(w, RC_K_VI_NEWTON_SINGULAR, f, h);
        for (i = 0; i < n; ++i)
            dx[i] = 0.0;
        for (r = 0; r < J; ++r)
            for (i = 0; i < n; ++i)
                dx[(r + 1) * n + i] = rhs[r * n + i];
        for (r = 0; r < J; ++r)
            for (i = 0; i < n; ++i) {
                double dv = (dx[(r + 1) * n + i] - dx[r * n + i]) * J / h;
                v[r * n + i] += dv;
                err = fmax(err, fabs(dv));
                scale = fmax(scale, fabs(v[r * n + i]));
            }
        *iters += 1;
        if (!isfinite(err))
            return rc_k_vi_failed(w, RC_K_VI_UPDATE_NONFINITE, f, h);
        if (err <= w->tol * scale ||
            (it >= 3 && err <= 1e-9 * scale && err >= 0.5 * prev)) {
            rc_k_vi_ld(w, f, h, q0, v, 1);
            return RC_K_VI_OK;
        }
        prev = err;
    }
    return rc_k_vi_failed(w, RC_K_VI_NEWTON, f, h);
}

/* v0 = M(q)⁻¹ p in every sub-step: the first guess of each solve. */
RC_HD static inline int rc_k_vi_guess(rc_k_vi *w, const rc_k_vi_form *f,
                                      const double *q, const double *p,
                                      double *v)
{
    int r;
    rc_k_vi_eval(w, q, 0);
    if (rc_k_vi_minv(&w->jet, p, v))
        return rc_k_vi_failed(w, RC_K_VI_MASS_SINGULAR, f, 0.0);
    for (r = 1; r < f->J; ++r)
        memcpy(v + r * w->n, v, sizeof(double) * (size_t)w->n);
    return RC_K_VI_OK;
}

/* One step of form f and length h: z = (q, p) -> z1.  Leaves w->Ed =
 * −D₃L_d(q, q1, h). */
RC_HD static inline int rc_k_vi_map(rc_k_vi *w, const rc_k_vi_form *f,
                                    double h, const double *z, double *z1,
                                    int *iters)
{
    int n = w->n, J = f->J, i, r, st;
    double v[2 * RC_K_VI_NMX];
    if ((st = rc_k_vi_guess(w, f, z, z + n, v)) != RC_K_VI_OK)
        return st;
    if ((st = rc_k_vi_solve(w, f, h, z, 0, z + n, v, iters)) != RC_K_VI_OK)
        return st;
    for (i = 0; i < n; ++i) {
        double q = z[i];
        for (r = 0; r < J; ++r)
            q += (h / J) * v[r * n + i];
        z1[i] = q;
        z1[n + i] = w->G[J * n + i];
    }
    return RC_K_VI_OK;
}

/* ------------------------------------------------------------------ */
/* Energies.                                                           */

RC_HD static inline void rc_k_vi_hamiltonian(rc_k_vi *w, const double *z,
                                             double *H, double *T,
                                             double *U)
{
    double x[RC_K_VI_NMX];
    rc_k_vi_eval(w, z, 0);
    if (rc_k_vi_minv(&w->jet, z + w->n, x)) {
        *H = *T = *U = NAN;
        return;
    }
    *T = 0.5 * rc_k_vi_dot(w->n, z + w->n, x);
    *U = w->jet.V;
    *H = *T + *U;
}

/* The truncated modified Hamiltonian η + h H2 + h² H3 of form f at z. */
RC_HD static inline int rc_k_vi_mh(rc_k_vi *w, const rc_k_vi_form *f,
                                   double h, const double *z, double *out,
                                   int *iters)
{
    int n = w->n, J = f->J, N = (J + 1) * n, i, j, k, st;
    const double *q = z, *p = z + n;
    double v[2 * RC_K_VI_NMX], vb[RC_K_VI_NMX], eq[RC_K_VI_NMX];
    double A[RC_K_VI_NMX * RC_K_VI_NMX], B[RC_K_VI_NMX * RC_K_VI_NMX];
    double C[RC_K_VI_NMX * RC_K_VI_NMX], Ci[RC_K_VI_NMX * RC_K_VI_NMX];
    double T[RC_K_VI_NMX * RC_K_VI_NMX], BCi[RC_K_VI_NMX * RC_K_VI_NMX];
    double eta, H2, H3, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    if ((st = rc_k_vi_guess(w, f, q, p, v)) != RC_K_VI_OK)
        return st;
    if ((st = rc_k_vi_solve(w, f, h, q, J, p, v, iters)) != RC_K_VI_OK)
        return st;
    /* the Hessian at the solution (the solve left it at its last
     * iterate's re-evaluation, which is this one) */
    for (i = 0; i < n; ++i) {
        vb[i] = 0.0;
        for (k = 0; k < J; ++k)
            vb[i] += v[k * n + i] / J;
        eq[i] = -(p[i] + w->G[i]) / h;
    }
    eta = rc_k_vi_dot(n, p, vb) - w->Ld / h;
#define RC_K_VI_HS(a, i, b, j) w->Hs[((a) * n + (i)) * N + (b) * n + (j)]
    if (J == 1) {
        for (i = 0; i < n; ++i)
            for (j = 0; j < n; ++j) {
                A[i * n + j] = RC_K_VI_HS(0, i, 0, j);
                B[i * n + j] = RC_K_VI_HS(0, i, 1, j);
                C[i * n + j] = RC_K_VI_HS(1, i, 1, j);
            }
    } else {
        /* eliminate the stationary middle node: Schur complements */
        double S[RC_K_VI_NMX * RC_K_VI_NMX];
        double X[RC_K_VI_NMX * 2 * RC_K_VI_NMX];
        for (i = 0; i < n; ++i)
            for (j = 0; j < n; ++j) {
                S[i * n + j] = RC_K_VI_HS(1, i, 1, j);
                X[i * 2 * n + j] = RC_K_VI_HS(1, i, 0, j);
                X[i * 2 * n + n + j] = RC_K_VI_HS(1, i, 2, j);
            }
        if (rc_k_vi_lsolve(n, S, 2 * n, X))
            return rc_k_vi_failed(w, RC_K_VI_MIDDLE_SINGULAR, f, 0.0);
        for (i = 0; i < n; ++i)
            for (j = 0; j < n; ++j) {
                double a = RC_K_VI_HS(0, i, 0, j), b = RC_K_VI_HS(0, i, 2, j),
                       c = RC_K_VI_HS(2, i, 2, j);
                for (k = 0; k < n; ++k) {
                    a -= RC_K_VI_HS(0, i, 1, k) * X[k * 2 * n + j];
                    b -= RC_K_VI_HS(0, i, 1, k) * X[k * 2 * n + n + j];
                    c -= RC_K_VI_HS(2, i, 1, k) * X[k * 2 * n + n + j];
                }
                A[i * n + j] = a;
                B[i * n + j] = b;
                C[i * n + j] = c;
            }
    }
#undef RC_K_VI_HS
    /* Ci = C⁻¹ */
    memcpy(T, C, sizeof(double) * (size_t)(n * n));
    for (i = 0; i < n; ++i)
        for (j = 0; j < n; ++j)
            Ci[i * n + j] = i == j ? 1.0 : 0.0;
    if (rc_k_vi_lsolve(n, T, n, Ci))
        return rc_k_vi_failed(w, RC_K_VI_D2D2_SINGULAR, f, 0.0);
    for (i = 0; i < n; ++i)
        for (j = 0; j < n; ++j) {
            double s = 0.0;
            for (k = 0; k < n; ++k)
                s += B[i * n + k] * Ci[k * n + j];
            BCi[i * n + j] = s;
        }
    for (i = 0; i < n; ++i)
        for (j = 0; j < n; ++j) {
            double bcb = 0.0, qq, qp, pp;
            for (k = 0; k < n; ++k)
                bcb += BCi[i * n + k] * B[j * n + k];
            qq = -(A[i * n + j] - bcb) / h;                    /* η_qq */
            qp = -((i == j ? 1.0 : 0.0) + BCi[i * n + j]) / h; /* η_{q_i p_j} */
            pp = Ci[i * n + j] / h;                            /* η_pp */
            t1 += qq * vb[i] * vb[j];
            t2 += qp * vb[i] * eq[j];
            t3 += pp * eq[i] * eq[j];
        }
    H2 = -0.5 * rc_k_vi_dot(n, eq, vb);
    H3 = (t1 + 4.0 * t2 + t3) / 12.0;
    *out = eta + h * H2 + h * h * H3;
    return RC_K_VI_OK;
}

/* The method's truncated modified Hamiltonian: T(h), or for mh_sym
 * ½[T(h) + T(−h)] (vi.c, vi_mh_method). */
RC_HD static inline int rc_k_vi_mh_method(rc_k_vi *w, const double *z,
                                          double *out, int *iters)
{
    double a, b;
    int st;
    if ((st = rc_k_vi_mh(w, &w->form, w->h, z, &a, iters)) != RC_K_VI_OK)
        return st;
    if (!w->mh_sym) {
        *out = a;
        return RC_K_VI_OK;
    }
    if ((st = rc_k_vi_mh(w, &w->form, -w->h, z, &b, iters)) != RC_K_VI_OK)
        return st;
    *out = 0.5 * (a + b);
    return RC_K_VI_OK;
}

/* Hamilton's vector field of H̃ at z: (∂H̃/∂p, −∂H̃/∂q), by fourth-order
 * central differences of the exact H̃. */
RC_HD static inline int rc_k_vi_mh_field(rc_k_vi *w, const double *z,
                                         double *fz, int *iters)
{
    int n = w->n, i, s, st;
    double zz[2 * RC_K_VI_NMX], e[4];
    double off[4];
    off[0] = 1.0;
    off[1] = -1.0;
    off[2] = 2.0;
    off[3] = -2.0;
    memcpy(zz, z, sizeof(double) * (size_t)(2 * n));
    for (i = 0; i < 2 * n; ++i) {
        double d = 1e-3 * fmax(1.0, fabs(z[i])), g;
        for (s = 0; s < 4; ++s) {
            zz[i] = z[i] + off[s] * d;
            if ((st = rc_k_vi_mh_method(w, zz, &e[s], iters)) != RC_K_VI_OK)
                return st;
        }
        zz[i] = z[i];
        g = (8.0 * (e[0] - e[1]) - (e[2] - e[3])) / (12.0 * d);
        if (i < n)
            fz[n + i] = -g;
        else
            fz[i - n] = g;
    }
    return RC_K_VI_OK;
}

/* The MCVA partial map: one step τ of the 2-stage Gauss–Legendre method
 * (order 4) on ż = J∇H̃(z), stages by fixed-point iteration. */
RC_HD static inline int rc_k_vi_gauss(rc_k_vi *w, const double *z,
                                      double tau, double *z1, int *iters)
{
    const double r3 = 0.28867513459481288225; /* √3/6 */
    double a11 = 0.25, a12 = 0.25 - r3, a21 = 0.25 + r3, a22 = 0.25;
    double K1[2 * RC_K_VI_NMX], K2[2 * RC_K_VI_NMX], Z1[2 * RC_K_VI_NMX];
    double Z2[2 * RC_K_VI_NMX], N1[2 * RC_K_VI_NMX], N2[2 * RC_K_VI_NMX];
    double prev = INFINITY, scale = 1.0;
    int n2 = 2 * w->n, i, it, st;
    if (tau == 0.0) {
        memcpy(z1, z, sizeof(double) * (size_t)n2);
        return RC_K_VI_OK;
    }
    if ((st = rc_k_vi_mh_field(w, z, K1, iters)) != RC_K_VI_OK)
        return st;
    memcpy(K2, K1, sizeof(double) * (size_t)n2);
    for (i = 0; i < n2; ++i)
        scale = fmax(scale, fabs(z[i]));
    for (it = 0; it < 100; ++it) {
        double d = 0.0;
        for (i = 0; i < n2; ++i) {
            Z1[i] = z[i] + tau * (a11 * K1[i] + a12 * K2[i]);
            Z2[i] = z[i] + tau * (a21 * K1[i] + a22 * K2[i]);
        }
        if ((st = rc_k_vi_mh_field(w, Z1, N1, iters)) != RC_K_VI_OK ||
            (st = rc_k_vi_mh_field(w, Z2, N2, iters)) != RC_K_VI_OK)
            return st;
        for (i = 0; i < n2; ++i) {
            d = fmax(d, tau * fmax(fabs(N1[i] - K1[i]), fabs(N2[i] - K2[i])));
            K1[i] = N1[i];
            K2[i] = N2[i];
        }
        if (d <= 1e-15 * scale || (it >= 3 && d >= 0.5 * prev &&
                                   d <= 1e-10 * scale)) {
            for (i = 0; i < n2; ++i)
                z1[i] = z[i] + 0.5 * tau * (K1[i] + K2[i]);
            return RC_K_VI_OK;
        }
        prev = d;
    }
    return rc_k_vi_failed(w, RC_K_VI_GAUSS, (const rc_k_vi_form *)0, tau);
}

/* The partial map of the impact method over τ. */
RC_HD static inline int rc_k_vi_partial(rc_k_vi *w, const double *z,
                                        double tau, double *z1, int *iters)
{
    if (w->impact == RC_K_VI_MCVA)
        return rc_k_vi_gauss(w, z, tau, z1, iters);
    if (tau == 0.0) {
        memcpy(z1, z, sizeof(double) * (size_t)(2 * w->n));
        w->Ed = NAN;
        return RC_K_VI_OK;
    }
    return rc_k_vi_map(w, &w->svc, tau, z, z1, iters);
}

/* min_k g_k(q) and its index. */
RC_HD static inline double rc_k_vi_gmin(rc_k_vi *w, const double *q, int *k)
{
    double g = INFINITY;
    int c;
    rc_k_vi_eval(w, q, 1);
    *k = -1;
    for (c = 0; c < w->ng; ++c)
        if (w->jet.g[c] < g) {
            g = w->jet.g[c];
            *k = c;
        }
    return g;
}

/* ------------------------------------------------------------------ */
/* Resets.                                                             */

/* Record an impact (after = 0: the state before the reset). */
RC_HD static inline void rc_k_vi_log(rc_k_vi *w, const double *z, int k,
                                     double Eb, double Ea, int after)
{
    rc_k_vi_impact *r = &w->log[w->nlog % RC_K_VI_LOG];
    int n = w->n;
    if (!after) {
        memcpy(r->q, z, sizeof(double) * (size_t)n);
        memcpy(r->p_minus, z + n, sizeof(double) * (size_t)n);
        r->constraint = k;
        return;
    }
    memcpy(r->p_plus, z + n, sizeof(double) * (size_t)n);
    r->e_minus = Eb;
    r->e_plus = Ea;
    w->nlog++;
}

/* Energy of the method at the post-impact momentum p + λ G. */
RC_HD static inline int rc_k_vi_reset_energy(rc_k_vi *w, const double *z,
                                             const double *G, double lam,
                                             double tau_fwd, double *E,
                                             int *iters)
{
    double zz[2 * RC_K_VI_NMX], z1[2 * RC_K_VI_NMX], T, U;
    int n = w->n, i, st;
    memcpy(zz, z, sizeof(double) * (size_t)(2 * n));
    for (i = 0; i < n; ++i)
        zz[n + i] += lam * G[i];
    if (w->impact == RC_K_VI_MCVA)
        return rc_k_vi_mh_method(w, zz, E, iters);
    /* VCI: the forward partial step's −D₃L_d; its τ → 0 limit is H */
    if (tau_fwd <= 0.0) {
        rc_k_vi_hamiltonian(w, zz, E, &T, &U);
        return RC_K_VI_OK;
    }
    st = rc_k_vi_map(w, &w->svc, tau_fwd, zz, z1, iters);
    *E = w->Ed;
    return st;
}

/* p⁺ = p⁻ + λ∇g_k with λ ≠ 0 keeping the method's energy.  E_back: VCI's
 * −D₃L_d of the backward partial step (or H when it had zero length).
 * The root is bracketed around the elastic λ_H of H (the mirror image
 * in the M⁻¹ metric) and found by false position with bisection to
 * round-off in λ. */
RC_HD static inline int rc_k_vi_reset(rc_k_vi *w, double *z, int k,
                                      double E_back, double tau_fwd,
                                      int *iters)
{
    int n = w->n, i, it, st;
    double G[RC_K_VI_NMX], MG[RC_K_VI_NMX], lamH, a, b, fa, fb, E0;
    double side = 0;
    rc_k_vi_eval(w, z, 1);
    for (i = 0; i < n; ++i)
        G[i] = w->jet.dg[k * n + i];
    if (rc_k_vi_minv(&w->jet, G, MG))
        return rc_k_vi_failed(w, RC_K_VI_MASS_SINGULAR_IMPACT,
                            (const rc_k_vi_form *)0, 0.0);
    lamH = -2.0 * rc_k_vi_dot(n, MG, z + n) / rc_k_vi_dot(n, MG, G);
    if (!(lamH > 0.0)) {
        w->fail.k = k;
        return RC_K_VI_GRAZING;
    }
    if (w->impact == RC_K_VI_CVA) {
        rc_k_vi_log(w, z, k, 0.0, 0.0, 0);
        for (i = 0; i < n; ++i)
            z[n + i] += lamH * G[i];
        rc_k_vi_log(w, z, k, 0.0, 0.0, 1);
        return RC_K_VI_OK;
    }
    if (w->impact == RC_K_VI_MCVA) {
        if ((st = rc_k_vi_mh_method(w, z, &E0, iters)) != RC_K_VI_OK)
            return st;
    } else {
        E0 = E_back;
    }
    /* F(λ) = E(λ) − E0 ≈ c λ (λ − λ_H) near λ_H: F(λ_H/2) < 0 < F(3λ_H/2)
     * for a small energy change; widen until the signs hold */
    a = 0.5 * lamH;
    b = 1.5 * lamH;
    for (it = 0; it < 60; ++it) {
        if ((st = rc_k_vi_reset_energy(w, z, G, a, tau_fwd, &fa, iters)) !=
                RC_K_VI_OK ||
            (st = rc_k_vi_reset_energy(w, z, G, b, tau_fwd, &fb, iters)) !=
                RC_K_VI_OK)
            return st;
        fa -= E0;
        fb -= E0;
        if (fa < 0.0 && fb > 0.0)
            break;
        if (fa >= 0.0)
            a *= 0.5;
        if (fb <= 0.0)
            b *= 1.5;
    }
    if (!(fa < 0.0 && fb > 0.0)) {
        /* with a slow approach the modified energy's other root can sit
         * at or behind λ = 0: a grazing or resting contact, which an
         * event-driven method cannot resolve */
        w->fail.k = k;
        w->fail.x = -rc_k_vi_dot(n, MG, z + n) / sqrt(rc_k_vi_dot(n, MG, G));
        return RC_K_VI_NO_RESET;
    }
    for (it = 0; it < 200 && b - a > 2e-16 * fabs(b); ++it) {
        double x = b - fb * (b - a) / (fb - fa), fx;
        if (!(x > a && x < b) || it % 3 == 2)
            x = 0.5 * (a + b);
        if ((st = rc_k_vi_reset_energy(w, z, G, x, tau_fwd, &fx, iters)) !=
            RC_K_VI_OK)
            return st;
        fx -= E0;
        if (fx == 0.0) {
            a = b = x;
            break;
        }
        if (fx < 0.0) {
            a = x;
            fa = fx;
            if (side < 0)
                fb *= 0.5;
            side = -1;
        } else {
            b = x;
            fb = fx;
            if (side > 0)
                fa *= 0.5;
            side = 1;
        }
    }
    /* the end with the smaller energy mismatch */
    {
        double lam = fabs(fa) <= fabs(fb) ? a : b, Ea;
        rc_k_vi_log(w, z, k, E0, 0.0, 0);
        if ((st = rc_k_vi_reset_energy(w, z, G, lam, tau_fwd, &Ea, iters)) !=
            RC_K_VI_OK)
            return st;
        for (i = 0; i < n; ++i)
            z[n + i] += lam * G[i];
        rc_k_vi_log(w, z, k, E0, Ea, 1);
    }
    return RC_K_VI_OK;
}

/* ------------------------------------------------------------------ */
/* Steps.                                                              */

/* Algorithm 1 from z over one step h (z updated only on success). */
RC_HD static inline int rc_k_vi_step_impact(rc_k_vi *w, double *z,
                                            int *iters)
{
    int n = w->n, n2 = 2 * n, k, events = 0, i, st;
    double zf[2 * RC_K_VI_NMX], zs[2 * RC_K_VI_NMX], zt[2 * RC_K_VI_NMX];
    double za[2 * RC_K_VI_NMX];
    double tmax = w->h;
    if ((st = rc_k_vi_map(w, &w->form, w->h, z, zf, iters)) != RC_K_VI_OK)
        return st;
    if (rc_k_vi_gmin(w, zf, &k) >= 0.0) {
        memcpy(z, zf, sizeof(double) * (size_t)n2);
        return RC_K_VI_OK;
    }
    memcpy(zs, z, sizeof(double) * (size_t)n2);
    while (tmax > 0.0) {
        double a = 0.0, b = tmax, fa, fb, side = 0, Eb;
        int it, ka;
        if ((st = rc_k_vi_partial(w, zs, tmax, zt, iters)) != RC_K_VI_OK)
            return st;
        if ((fb = rc_k_vi_gmin(w, zt, &k)) >= 0.0) {
            memcpy(zs, zt, sizeof(double) * (size_t)n2);
            break;
        }
        fa = rc_k_vi_gmin(w, zs, &ka);
        memcpy(za, zs, sizeof(double) * (size_t)n2);
        /* the crossing of min_k g_k on the partial map: false position
         * (Illinois) with a bisection every third pass, to round-off */
        for (it = 0; it < 300 && b - a > 1e-15 * w->h; ++it) {
            double x, fx;
            if (fa > 0.0 && it % 3 != 2)
                x = b - fb * (b - a) / (fb - fa);
            else
                x = 0.5 * (a + b);
            if (!(x > a && x < b))
                x = 0.5 * (a + b);
            if ((st = rc_k_vi_partial(w, zs, x, zt, iters)) != RC_K_VI_OK)
                return st;
            fx = rc_k_vi_gmin(w, zt, &k);
            if (fx >= 0.0) {
                a = x;
                fa = fx;
                memcpy(za, zt, sizeof(double) * (size_t)n2);
                if (side > 0)
                    fb *= 0.5;
                side = 1;
            } else {
                b = x;
                fb = fx;
                if (side < 0)
                    fa *= 0.5;
                side = -1;
            }
        }
        if (a == 0.0 && events > 0) {
            w->fail.x = w->h - tmax;
            return RC_K_VI_ZENO_START;
        }
        /* the impact state on the feasible side; VCI's backward energy */
        if (a > 0.0) {
            if ((st = rc_k_vi_partial(w, zs, a, za, iters)) != RC_K_VI_OK)
                return st;
            Eb = w->Ed;
        } else {
            double T, U;
            rc_k_vi_hamiltonian(w, za, &Eb, &T, &U);
        }
        (void)rc_k_vi_gmin(w, za, &k);
        /* which constraint; a second one in contact and approaching is a
         * simultaneous impact, which these methods do not resolve */
        {
            double gk = w->jet.g[k], x[RC_K_VI_NMX];
            const rc_k_lag_jet *jj = &w->jet;
            int c;
            if (rc_k_vi_minv(jj, za + n, x) == 0)
                for (c = 0; c < w->ng; ++c) {
                    double vn = rc_k_vi_dot(n, jj->dg + c * n, x);
                    if (c != k && jj->g[c] <= gk + 1e-9 && vn < 0.0) {
                        w->fail.k = k;
                        w->fail.c = c;
                        w->fail.x = w->h - tmax + a;
                        return RC_K_VI_SIMULTANEOUS;
                    }
                }
        }
        if ((st = rc_k_vi_reset(w, za, k, Eb, tmax - a, iters)) != RC_K_VI_OK)
            return st;
        ++events;
        if (events > w->max_events)
            return RC_K_VI_TOO_MANY;
        memcpy(zs, za, sizeof(double) * (size_t)n2);
        tmax -= a;
    }
    for (i = 0; i < n2; ++i)
        z[i] = zs[i];
    w->impacts += events;
    return RC_K_VI_OK;
}

/* One step of the method from (q, p) at time t: q, p updated on success
 * (RC_K_VI_OK), kept otherwise; w->iters holds the step's Newton
 * iterations. */
RC_HD static inline int rc_k_vi_step(rc_k_vi *w, double *q, double *p,
                                     double t)
{
    int n = w->n, i, st;
    double z[2 * RC_K_VI_NMX], z1[2 * RC_K_VI_NMX];
    w->iters = 0;
    for (i = 0; i < n; ++i) {
        z[i] = q[i];
        z[n + i] = p[i];
    }
    if (w->impact == RC_K_VI_NONE) {
        st = rc_k_vi_map(w, &w->form, w->h, z, z1, &w->iters);
        if (st == RC_K_VI_OK)
            memcpy(z, z1, sizeof z1);
    } else {
        st = rc_k_vi_step_impact(w, z, &w->iters);
    }
    if (st != RC_K_VI_OK)
        return st;
    for (i = 0; i < 2 * n; ++i)
        if (!isfinite(z[i])) {
            w->fail.x = t;
            return RC_K_VI_STATE_NONFINITE;
        }
    for (i = 0; i < n; ++i) {
        q[i] = z[i];
        p[i] = z[n + i];
    }
    return RC_K_VI_OK;
}

/* The diagnostics of (q, p): H (T, U), the discrete energy −D₃L_d of the
 * method's step from there and its truncated modified Hamiltonian (NaN
 * where their solves fail), min_k g_k (NaN without constraints). */
RC_HD static inline void rc_k_vi_diagnose(rc_k_vi *w, const double *q,
                                          const double *p, double *H,
                                          double *T, double *U, double *Ed,
                                          double *Hmod, double *gmin)
{
    int n = w->n, i, it = 0, k;
    double z[2 * RC_K_VI_NMX], z1[2 * RC_K_VI_NMX];
    for (i = 0; i < n; ++i) {
        z[i] = q[i];
        z[n + i] = p[i];
    }
    rc_k_vi_hamiltonian(w, z, H, T, U);
    *Ed = rc_k_vi_map(w, &w->form, w->h, z, z1, &it) == RC_K_VI_OK ? w->Ed
                                                                    : NAN;
    if (rc_k_vi_mh_method(w, z, Hmod, &it) != RC_K_VI_OK)
        *Hmod = NAN;
    *gmin = w->ng > 0 ? rc_k_vi_gmin(w, z, &k) : NAN;
}

#ifdef __cplusplus
}
#endif
#endif

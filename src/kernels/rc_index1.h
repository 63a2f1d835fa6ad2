/* Built-in index-1 constrained Hamiltonian systems (seed 002: McLachlan,
 * Modin, Verdier, Wilkins, "Symplectic integrators for index one
 * constraints", 2013).
 *
 * Both built-ins are Lagrange problems of Prop. 1: L = ½q̇ᵀMq̇ − V(q) with
 * velocity constraints g_i(q)·q̇ = 0, i = 1..k, M constant and diagonal.
 * Their Hamiltonian in Darboux coordinates z = (q, p, λ) ∈ R^(2n+k) is
 *
 *     H(q, p, λ) = ½ uᵀM⁻¹u + V(q),   u = p + Σ_i λ_i g_i(q),
 *
 * so that q̇ = H_p = M⁻¹u (the Legendre transform (8)) and the constraint
 * H_λ = G(q) q̇ = 0 is g_i(q)·q̇ = 0 itself.
 *
 * A model body fills rc_i1_terms (M⁻¹, V and its first two derivatives,
 * g_i and their first two derivatives) at one q; rc_k_i1_hamiltonian
 * assembles H, ∇H and ∇²H from them.  These are the only copies of the
 * formulas: the host methods (src/host/model/srk.c) call them, and a
 * device ensemble would call the same functions.  Items: one state z;
 * sizes at most RC_I1_NMAX coordinates and RC_I1_KMAX multipliers; no
 * allocation.  Rounding: a few ulps of the largest term per entry (sums
 * of at most n·k products), which sets the round-off floors the tests
 * use. */
#ifndef RC_INDEX1_H
#define RC_INDEX1_H

#include "rc_hd.h"
#include "rc_math.h"

/* sin and cos in one spelling for host and device (rc_math.h has none
 * yet; these two move there when another body needs them). */
RC_HD static inline double rc_i1_sin(double x) { return sin(x); }
RC_HD static inline double rc_i1_cos(double x) { return cos(x); }

#define RC_I1_NMAX 4 /* coordinates of the built-ins */
#define RC_I1_KMAX 2 /* velocity constraints of the built-ins */

/* Built-in ids (model.builtin). */
enum { RC_I1_EXPR = 0, RC_I1_VEHICLE = 1, RC_I1_HEISENBERG = 2 };

/* The parts of a Prop. 1 Hamiltonian at one q.  Index conventions:
 * g[i*N + l] = (g_i)_l, dg[(i*N + l)*N + j] = ∂(g_i)_l/∂q_j,
 * d2g[((i*N + l)*N + j)*N + m] = ∂²(g_i)_l/∂q_j∂q_m, d2V[j*N + m],
 * with N = RC_I1_NMAX whatever n is. */
typedef struct rc_i1_terms {
    int n, k;
    double minv[RC_I1_NMAX]; /* diagonal of M⁻¹ */
    double V, dV[RC_I1_NMAX], d2V[RC_I1_NMAX * RC_I1_NMAX];
    double g[RC_I1_KMAX * RC_I1_NMAX];
    double dg[RC_I1_KMAX * RC_I1_NMAX * RC_I1_NMAX];
    double d2g[RC_I1_KMAX * RC_I1_NMAX * RC_I1_NMAX * RC_I1_NMAX];
} rc_i1_terms;

RC_HD static inline void rc_k_i1_terms_zero(rc_i1_terms *t, int n, int k)
{
    int a;
    t->n = n;
    t->k = k;
    t->V = 0.0;
    for (a = 0; a < RC_I1_NMAX; ++a) {
        t->minv[a] = 1.0;
        t->dV[a] = 0.0;
    }
    for (a = 0; a < RC_I1_NMAX * RC_I1_NMAX; ++a)
        t->d2V[a] = 0.0;
    for (a = 0; a < RC_I1_KMAX * RC_I1_NMAX; ++a)
        t->g[a] = 0.0;
    for (a = 0; a < RC_I1_KMAX * RC_I1_NMAX * RC_I1_NMAX; ++a)
        t->dg[a] = 0.0;
    for (a = 0; a < RC_I1_KMAX * RC_I1_NMAX * RC_I1_NMAX * RC_I1_NMAX; ++a)
        t->d2g[a] = 0.0;
}

/* The two-wheeled vehicle of seed 002 §5.  q = (x, y, θ, φ): front wheel
 * at (x, y), body angle θ, front-wheel angle φ.  par = (L, alpha, beta,
 * bowl): wheel base, the inertias of (29), and the depth of the bowl
 * V = −bowl·cos r, r the distance of the vehicle's midpoint
 * (x − ½L cos θ, y − ½L sin θ) from the origin (bowl = 0: free motion).
 * Constraints: (26) g_1 = (sin φ, −cos φ, 0, 0) (the front wheel rolls
 * along φ), (28) g_2 = (sin θ, −cos θ, L, 0) (the back wheel rolls along
 * θ).  V is written through s = r²: f(s) = −cos √s is smooth at r = 0,
 * f'(s) = sin r/(2r), f''(s) = (r cos r − sin r)/(4r³), with their
 * Taylor series below r = 1e-3 (error < r⁶/10⁵). */
RC_HD static inline void rc_k_i1_vehicle(const double *par, const double *q,
                                         rc_i1_terms *t)
{
    const int N = RC_I1_NMAX;
    double L = par[0], bowl = par[3];
    double st = rc_i1_sin(q[2]), ct = rc_i1_cos(q[2]);
    double sp = rc_i1_sin(q[3]), cp = rc_i1_cos(q[3]);
    double m1 = q[0] - 0.5 * L * ct, m2 = q[1] - 0.5 * L * st;
    double s = m1 * m1 + m2 * m2, r = rc_sqrt(s), f1, f2;
    double dm1[RC_I1_NMAX], dm2[RC_I1_NMAX], ds[RC_I1_NMAX];
    int j, m;
    rc_k_i1_terms_zero(t, 4, 2);
    t->minv[2] = 1.0 / par[1];
    t->minv[3] = 1.0 / par[2];
    /* (26) */
    t->g[0 * N + 0] = sp;
    t->g[0 * N + 1] = -cp;
    t->dg[(0 * N + 0) * N + 3] = cp;
    t->dg[(0 * N + 1) * N + 3] = sp;
    t->d2g[((0 * N + 0) * N + 3) * N + 3] = -sp;
    t->d2g[((0 * N + 1) * N + 3) * N + 3] = cp;
    /* (28) */
    t->g[1 * N + 0] = st;
    t->g[1 * N + 1] = -ct;
    t->g[1 * N + 2] = L;
    t->dg[(1 * N + 0) * N + 2] = ct;
    t->dg[(1 * N + 1) * N + 2] = st;
    t->d2g[((1 * N + 0) * N + 2) * N + 2] = -st;
    t->d2g[((1 * N + 1) * N + 2) * N + 2] = ct;
    /* V = bowl · f(s) */
    if (bowl == 0.0)
        return;
    if (r < 1e-3) {
        f1 = 0.5 * (1.0 - s / 6.0 + s * s / 120.0);
        f2 = -1.0 / 12.0 + s / 120.0 - s * s / 3360.0;
    } else {
        f1 = 0.5 * rc_i1_sin(r) / r;
        f2 = (r * rc_i1_cos(r) - rc_i1_sin(r)) / (4.0 * r * s);
    }
    for (j = 0; j < N; ++j)
        dm1[j] = dm2[j] = 0.0;
    dm1[0] = 1.0;
    dm1[2] = 0.5 * L * st;
    dm2[1] = 1.0;
    dm2[2] = -0.5 * L * ct;
    for (j = 0; j < N; ++j)
        ds[j] = 2.0 * (m1 * dm1[j] + m2 * dm2[j]);
    t->V = -bowl * rc_i1_cos(r);
    for (j = 0; j < N; ++j) {
        t->dV[j] = bowl * f1 * ds[j];
        for (m = 0; m < N; ++m)
            t->d2V[j * N + m] =
                bowl * (f2 * ds[j] * ds[m] +
                        f1 * 2.0 * (dm1[j] * dm1[m] + dm2[j] * dm2[m]));
    }
    /* the θθ second derivatives of the midpoint */
    t->d2V[2 * N + 2] +=
        bowl * f1 * 2.0 * (m1 * 0.5 * L * ct + m2 * 0.5 * L * st);
}

/* The Heisenberg problem of seed 002 §6: q = (x, y, z), M = I, V = 0,
 * one constraint g = (−y, x, 1). */
RC_HD static inline void rc_k_i1_heisenberg(const double *q, rc_i1_terms *t)
{
    const int N = RC_I1_NMAX;
    rc_k_i1_terms_zero(t, 3, 1);
    t->g[0] = -q[1];
    t->g[1] = q[0];
    t->g[2] = 1.0;
    t->dg[(0 * N + 0) * N + 1] = -1.0;
    t->dg[(0 * N + 1) * N + 0] = 1.0;
}

/* H, ∇H (dim 2n+k, order q, p, λ) and ∇²H (dim², row-major; NULL to
 * skip) of H = ½ uᵀM⁻¹u + V from the terms at q.  kin (may be NULL)
 * receives ½ uᵀM⁻¹u = ½ q̇ᵀMq̇.  With v = M⁻¹u and U[l][j] = ∂u_l/∂q_j =
 * Σ_i λ_i ∂(g_i)_l/∂q_j:
 *   H_q = ∇V + Uᵀv, H_p = v, H_λi = g_i·v,
 *   H_qq = ∇²V + Σ_i λ_i Σ_l v_l ∇²(g_i)_l + UᵀM⁻¹U,  H_qp = UᵀM⁻¹,
 *   H_qλi = (∂g_i/∂q)ᵀv + UᵀM⁻¹g_i,  H_pp = M⁻¹,  H_pλi = M⁻¹g_i,
 *   H_λiλj = g_i·M⁻¹g_j. */
RC_HD static inline void rc_k_i1_hamiltonian(const rc_i1_terms *t,
                                             const double *p,
                                             const double *lam, double *H,
                                             double *grad, double *hess,
                                             double *kin)
{
    const int N = RC_I1_NMAX;
    int n = t->n, k = t->k, d = 2 * t->n + t->k;
    double u[RC_I1_NMAX], v[RC_I1_NMAX], U[RC_I1_NMAX * RC_I1_NMAX];
    double ke = 0.0;
    int i, j, l, m;
    for (l = 0; l < n; ++l) {
        u[l] = p[l];
        for (i = 0; i < k; ++i)
            u[l] += lam[i] * t->g[i * N + l];
        v[l] = t->minv[l] * u[l];
        ke += 0.5 * u[l] * v[l];
        for (j = 0; j < n; ++j) {
            double s = 0.0;
            for (i = 0; i < k; ++i)
                s += lam[i] * t->dg[(i * N + l) * N + j];
            U[l * N + j] = s;
        }
    }
    if (kin)
        *kin = ke;
    if (H)
        *H = ke + t->V;
    if (grad) {
        for (j = 0; j < n; ++j) {
            double s = t->dV[j];
            for (l = 0; l < n; ++l)
                s += U[l * N + j] * v[l];
            grad[j] = s;
            grad[n + j] = v[j];
        }
        for (i = 0; i < k; ++i) {
            double s = 0.0;
            for (l = 0; l < n; ++l)
                s += t->g[i * N + l] * v[l];
            grad[2 * n + i] = s;
        }
    }
    if (!hess)
        return;
    for (j = 0; j < n; ++j) {
        for (m = j; m < n; ++m) { /* H_qq */
            double s = t->d2V[j * N + m];
            for (i = 0; i < k; ++i)
                for (l = 0; l < n; ++l)
                    s += lam[i] * v[l] * t->d2g[((i * N + l) * N + j) * N + m];
            for (l = 0; l < n; ++l)
                s += U[l * N + j] * t->minv[l] * U[l * N + m];
            hess[j * d + m] = hess[m * d + j] = s;
        }
        for (l = 0; l < n; ++l) /* H_qp */
            hess[j * d + n + l] = hess[(n + l) * d + j] =
                U[l * N + j] * t->minv[l];
        for (i = 0; i < k; ++i) { /* H_qλ */
            double s = 0.0;
            for (l = 0; l < n; ++l)
                s += t->dg[(i * N + l) * N + j] * v[l] +
                     U[l * N + j] * t->minv[l] * t->g[i * N + l];
            hess[j * d + 2 * n + i] = hess[(2 * n + i) * d + j] = s;
        }
    }
    for (l = 0; l < n; ++l) {
        for (m = 0; m < n; ++m) /* H_pp */
            hess[(n + l) * d + n + m] = l == m ? t->minv[l] : 0.0;
        for (i = 0; i < k; ++i) /* H_pλ */
            hess[(n + l) * d + 2 * n + i] = hess[(2 * n + i) * d + n + l] =
                t->minv[l] * t->g[i * N + l];
    }
    for (i = 0; i < k; ++i) /* H_λλ */
        for (j = 0; j < k; ++j) {
            double s = 0.0;
            for (l = 0; l < n; ++l)
                s += t->g[i * N + l] * t->minv[l] * t->g[j * N + l];
            hess[(2 * n + i) * d + 2 * n + j] = s;
        }
}

#endif

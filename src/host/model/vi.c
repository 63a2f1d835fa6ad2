/* Variational integrators for nonseparable L(q, q̇) = ½ q̇ᵀM(q)q̇ − V(q)
 * and the event-driven impact methods of seed 001 (Pekarek & Murphey,
 * "Discrete Lagrangian mechanics for nonseparable nonsmooth systems",
 * 2014), methods of the model kind "lagrangian" (lagrangian.h).
 *
 * Smooth maps (§3.1, §3.3), each Φ_h = F⁺L_d ∘ (F⁻L_d)⁻¹ of a discrete
 * Lagrangian written as a quadrature L_d = h Σ_s w_s L(P_s, V_s) over the
 * nodes q_0, (q_m), q_1 of one step:
 *   svc          L_d^SVC = h/2 [L(q0, v) + L(q1, v)],  v = (q1 − q0)/h
 *   vi-midpoint  L_d = h L((q0 + q1)/2, v)
 *   sva          SE2_{h/2} ∘ SE1_{h/2}: h/2 [L(q0, va) + L(q1, vb)],
 *                va = (qm − q0)/(h/2), vb = (q1 − qm)/(h/2), qm stationary
 *   svb          SE1_{h/2} ∘ SE2_{h/2}: h/2 [L(qm, va) + L(qm, vb)]
 * Unknowns are the sub-step velocities, not positions, so that a partial
 * step τ → 0 keeps its accuracy; the implicit equations (p0 = −D1 L_d,
 * and D_m L_d = 0 for the composed maps) are solved by Newton on the
 * exact Hessian of L_d, with the iteration count reported and
 * RC_ERR_NOT_CONVERGED after integrator.newton_max_iter.
 *
 * Energies: H; the discrete energy −D₃L_d(q_k, q_{k+1}, h) = Σ_s w_s
 * E(P_s, V_s) (E = ½VᵀMV + V) of the forward step; the truncated
 * modified Hamiltonian of Theorem 2 / Appendix A,
 *   H̃ = η + h H2 + h² H3,  η = p·(q̄ − q)/h − L_d(q, q̄)/h,
 *   p = D2 L_d(q, q̄),  H2 = −½ η_q·η_p,
 *   H3 = (1/12)[η_qq(η_p, η_p) + 4 η_qp(η_p, η_q) + η_pp(η_q, η_q)]
 * where η_qp(a, b) = Σ ∂²η/∂q_i∂p_j a_i b_j (the q slot takes η_p, as in
 * Hairer, Lubich & Wanner IX.3; the seed's slot notation is ambiguous)
 * and the second derivatives of η come from the Hessian of L_d through
 * the implicit q̄ (Appendix A, step 2).  For SVC this is the seed's
 * O(h³) truncation.  For SVA the seed takes H4 = 0 (symmetric map, §5.2);
 * the three terms as written still leave an O(h³) remainder (measured),
 * so the SVA methods use their mean over ±h, which is O(h⁴) (see
 * vi_mh_method).
 *
 * Impact methods (§4, Algorithm 1): a full step Φ_h; if it ends with some
 * g_k < 0 the step is redone by partial steps: the first time τ at which
 * min_k g_k(q(τ)) crosses zero on the partial map is found by a
 * safeguarded false-position/bisection to round-off in τ, the state is
 * moved there, the momentum reset p⁺ = p⁻ + λ ∇g_k with λ ≠ 0 chosen so
 * that the method's energy is kept, and the remainder of the step
 * continues:
 *   cva     Φ = SVC, partial = SVC_τ, reset keeps H (closed form)
 *   vci     Φ = SVC, partial = SVC_τ, reset keeps −D₃L_d: the backward
 *           partial step's −D₃L_d^SVC(q_prev, q_i, Δτ) equals the forward
 *           one's −D₃L_d^SVC(q_i, q_next(λ), τ_rest) (Fetecau et al.)
 *   mcva-a  Φ = SVA, partial = 4th-order Gauss–Legendre on the Hamilton
 *           equations of SVA's H̃, reset keeps H̃
 *   mcva-c  the same with SVC and its O(h³) H̃ (generalized MCVA, §4.4)
 * The vector field of H̃ is the gradient of the exact H̃ above by
 * fourth-order central differences (step 1e-3 x max(1, |z_i|): truncation
 * ~1e-12, rounding ~1e-11 of |∇H̃|), far below the O(h⁴) the partial
 * steps are meant to keep; the reset conserves the H̃ function itself to
 * round-off.  Simultaneous impacts (a second constraint within 1e-9 of
 * contact and approaching at the impact) and more than
 * integrator.max_events impacts in one step (Zeno) end the run with
 * RC_ERR_ZENO and a message; an impact found at the very start of a
 * sub-step after a reset (grazing) is reported the same way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lagrangian.h"
#include "vi.h"

#define NMX RC_LAG_MAX_N

/* A discrete Lagrangian as a quadrature: J sub-steps (1 or 2), nt terms
 * of weight w[s] (Σ w = 1) at the point Σ_node c[s][node] q_node with
 * velocity v_{vel[s]}. */
typedef struct vi_form {
    const char *name;
    int J, nt;
    double w[2];
    int vel[2];
    double c[2][3];
} vi_form;

static const vi_form vi_svc = {"svc", 1, 2, {0.5, 0.5}, {0, 0},
                               {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}}};
static const vi_form vi_mid = {"vi-midpoint", 1, 1, {1.0, 0.0}, {0, 0},
                               {{0.5, 0.5, 0.0}, {0.0, 0.0, 0.0}}};
static const vi_form vi_sva = {"sva", 2, 2, {0.5, 0.5}, {0, 1},
                               {{1.0, 0.0, 0.0}, {0.0, 0.0, 1.0}}};
static const vi_form vi_svb = {"svb", 2, 2, {0.5, 0.5}, {0, 1},
                               {{0.0, 1.0, 0.0}, {0.0, 1.0, 0.0}}};

enum { VI_NONE = 0, VI_CVA, VI_VCI, VI_MCVA };

struct vi_ws {
    const rc_model *m;
    int n, ng;
    const vi_form *form; /* the full step's L_d (and H̃'s) */
    int impact;          /* VI_* */
    int mh_sym;          /* H̃ to O(h⁴) by symmetrization (vi_mh_method) */
    double h, tol;
    int maxit, max_events;
    long impacts;
    int iters;
    rc_lag_jet jet;
    /* the last vi_ld evaluation */
    double Ld, Ed;
    double G[3 * NMX];
    double Hs[9 * NMX * NMX];
    char why[600];
    /* the last RC_VI_LOG impacts, for tests and reports */
    rc_vi_impact log[RC_VI_LOG];
    int nlog;
};

/* ------------------------------------------------------------------ */
/* Small dense algebra (n <= 2 NMX).                                   */

/* Solve A x = b in place (A is k x k, row-major, destroyed; b becomes x)
 * for nr right-hand sides stored as columns of b (k x nr).  Partial
 * pivoting; 1 when singular. */
static int vi_lsolve(int k, double *A, int nr, double *b)
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
static int vi_minv(const rc_lag_jet *j, const double *b, double *x)
{
    double A[NMX * NMX];
    int n = j->n;
    memcpy(A, j->M, sizeof(double) * (size_t)(n * n));
    memcpy(x, b, sizeof(double) * (size_t)n);
    return vi_lsolve(n, A, 1, x);
}

static double vi_dot(int n, const double *a, const double *b)
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
static void vi_ld(vi_ws *w, const vi_form *f, double h, const double *q0,
                  const double *v, int hess)
{
    int n = w->n, J = f->J, N = (J + 1) * n, s, i, k, a, b;
    double x[3 * NMX], P[NMX], Mv[NMX], Lq[NMX], Lqq[NMX * NMX];
    double Lqv[NMX * NMX];
    rc_lag_jet *jt = &w->jet;
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
        rc_lag_eval(w->m, P, hess ? 2 : 1, jt);
        for (i = 0; i < n; ++i) {
            Mv[i] = 0.0;
            for (k = 0; k < n; ++k)
                Mv[i] += jt->M[i * n + k] * V[k];
        }
        T = 0.5 * vi_dot(n, V, Mv);
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

/* Newton for the sub-step velocities v (J x n) of form f, step h, from
 * q0 such that node `target` (0 or J) has momentum pt: for target 0,
 * pt = −D1 L_d (the step F⁻ inverted); for target J, pt = D2 L_d (the q̄
 * of Appendix A); interior nodes D_m L_d = 0.  v holds the initial guess.
 * Leaves w->Ld/Ed/G/Hs at the solution; adds the iterations to *iters.
 * Converged when the velocity update is below newton_tol x max(1, |v|),
 * or when it has stopped shrinking below 1e-9 x max(1, |v|) (the
 * rounding floor of the residual). */
static rc_status vi_solve(vi_ws *w, const vi_form *f, double h,
                          const double *q0, int target, const double *pt,
                          double *v, int *iters)
{
    int n = w->n, J = f->J, N = (J + 1) * n, K = J * n, it, r, c, i, j;
    int rows[2];
    double A[4 * NMX * NMX], rhs[2 * NMX], dx[3 * NMX], prev = INFINITY;
    for (r = 0; r < J; ++r)
        rows[r] = (target == 0) ? r : r + 1;
    for (it = 1; it <= w->maxit; ++it) {
        double err = 0.0, scale = 1.0;
        vi_ld(w, f, h, q0, v, 1);
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
            if (!isfinite(rhs[i])) {
                snprintf(w->why, sizeof w->why,
                         "non-finite residual in the implicit %s step "
                         "(h = %g)", f->name, h);
                return RC_ERR_NONFINITE;
            }
        if (vi_lsolve(K, A, 1, rhs)) {
            snprintf(w->why, sizeof w->why,
                     "singular Newton matrix in the implicit %s step "
                     "(h = %g)", f->name, h);
            return RC_ERR_NOT_CONVERGED;
        }
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
        if (!isfinite(err)) {
            snprintf(w->why, sizeof w->why,
                     "non-finite Newton update in the implicit %s step",
                     f->name);
            return RC_ERR_NONFINITE;
        }
        if (err <= w->tol * scale ||
            (it >= 3 && err <= 1e-9 * scale && err >= 0.5 * prev)) {
            vi_ld(w, f, h, q0, v, 1);
            return RC_OK;
        }
        prev = err;
    }
    snprintf(w->why, sizeof w->why,
             "Newton did not converge in %d iterations in the implicit %s "
             "step (h = %g); a smaller integrator.dt, or a larger "
             "integrator.newton_max_iter",
             w->maxit, f->name, h);
    return RC_ERR_NOT_CONVERGED;
}

/* v0 = M(q)⁻¹ p in every sub-step: the first guess of each solve. */
static rc_status vi_guess(vi_ws *w, const vi_form *f, const double *q,
                          const double *p, double *v)
{
    int r;
    rc_lag_eval(w->m, q, 0, &w->jet);
    if (vi_minv(&w->jet, p, v)) {
        snprintf(w->why, sizeof w->why, "singular mass matrix");
        return RC_ERR_NOT_CONVERGED;
    }
    for (r = 1; r < f->J; ++r)
        memcpy(v + r * w->n, v, sizeof(double) * (size_t)w->n);
    return RC_OK;
}

/* One step of form f and length h: z = (q, p) -> z1.  Leaves w->Ed =
 * −D₃L_d(q, q1, h). */
static rc_status vi_map(vi_ws *w, const vi_form *f, double h,
                        const double *z, double *z1, int *iters)
{
    int n = w->n, J = f->J, i, r;
    double v[2 * NMX];
    rc_status st;
    if ((st = vi_guess(w, f, z, z + n, v)) != RC_OK)
        return st;
    if ((st = vi_solve(w, f, h, z, 0, z + n, v, iters)) != RC_OK)
        return st;
    for (i = 0; i < n; ++i) {
        double q = z[i];
        for (r = 0; r < J; ++r)
            q += (h / J) * v[r * n + i];
        z1[i] = q;
        z1[n + i] = w->G[J * n + i];
    }
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Energies.                                                           */

static void vi_hamiltonian(vi_ws *w, const double *z, double *H, double *T,
                           double *U)
{
    double x[NMX];
    rc_lag_eval(w->m, z, 0, &w->jet);
    if (vi_minv(&w->jet, z + w->n, x)) {
        *H = *T = *U = NAN;
        return;
    }
    *T = 0.5 * vi_dot(w->n, z + w->n, x);
    *U = w->jet.V;
    *H = *T + *U;
}

/* The truncated modified Hamiltonian η + h H2 + h² H3 of form f at z. */
static rc_status vi_mh(vi_ws *w, const vi_form *f, double h, const double *z,
                       double *out, int *iters)
{
    int n = w->n, J = f->J, N = (J + 1) * n, i, j, k;
    const double *q = z, *p = z + n;
    double v[2 * NMX], vb[NMX], eq[NMX], A[NMX * NMX], B[NMX * NMX];
    double C[NMX * NMX], Ci[NMX * NMX], T[NMX * NMX], BCi[NMX * NMX];
    double eta, H2, H3, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    rc_status st;
    if ((st = vi_guess(w, f, q, p, v)) != RC_OK)
        return st;
    if ((st = vi_solve(w, f, h, q, J, p, v, iters)) != RC_OK)
        return st;
    /* the Hessian at the solution (vi_solve left it at its last iterate's
     * re-evaluation, which is this one) */
    for (i = 0; i < n; ++i) {
        vb[i] = 0.0;
        for (k = 0; k < J; ++k)
            vb[i] += v[k * n + i] / J;
        eq[i] = -(p[i] + w->G[i]) / h;
    }
    eta = vi_dot(n, p, vb) - w->Ld / h;
#define HS(a, i, b, j) w->Hs[((a) * n + (i)) * N + (b) * n + (j)]
    if (J == 1) {
        for (i = 0; i < n; ++i)
            for (j = 0; j < n; ++j) {
                A[i * n + j] = HS(0, i, 0, j);
                B[i * n + j] = HS(0, i, 1, j);
                C[i * n + j] = HS(1, i, 1, j);
            }
    } else {
        /* eliminate the stationary middle node: Schur complements */
        double S[NMX * NMX], X[NMX * 2 * NMX];
        for (i = 0; i < n; ++i)
            for (j = 0; j < n; ++j) {
                S[i * n + j] = HS(1, i, 1, j);
                X[i * 2 * n + j] = HS(1, i, 0, j);
                X[i * 2 * n + n + j] = HS(1, i, 2, j);
            }
        if (vi_lsolve(n, S, 2 * n, X)) {
            snprintf(w->why, sizeof w->why,
                     "singular middle-node Hessian in the modified energy");
            return RC_ERR_NOT_CONVERGED;
        }
        for (i = 0; i < n; ++i)
            for (j = 0; j < n; ++j) {
                double a = HS(0, i, 0, j), b = HS(0, i, 2, j),
                       c = HS(2, i, 2, j);
                for (k = 0; k < n; ++k) {
                    a -= HS(0, i, 1, k) * X[k * 2 * n + j];
                    b -= HS(0, i, 1, k) * X[k * 2 * n + n + j];
                    c -= HS(2, i, 1, k) * X[k * 2 * n + n + j];
                }
                A[i * n + j] = a;
                B[i * n + j] = b;
                C[i * n + j] = c;
            }
    }
#undef HS
    /* Ci = C⁻¹ */
    memcpy(T, C, sizeof(double) * (size_t)(n * n));
    for (i = 0; i < n; ++i)
        for (j = 0; j < n; ++j)
            Ci[i * n + j] = i == j ? 1.0 : 0.0;
    if (vi_lsolve(n, T, n, Ci)) {
        snprintf(w->why, sizeof w->why,
                 "singular D2D2 L_d in the modified energy");
        return RC_ERR_NOT_CONVERGED;
    }
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
            qq = -(A[i * n + j] - bcb) / h;             /* η_qq */
            qp = -((i == j ? 1.0 : 0.0) + BCi[i * n + j]) / h; /* η_{q_i p_j} */
            pp = Ci[i * n + j] / h;                     /* η_pp */
            t1 += qq * vb[i] * vb[j];
            t2 += qp * vb[i] * eq[j];
            t3 += pp * eq[i] * eq[j];
        }
    H2 = -0.5 * vi_dot(n, eq, vb);
    H3 = (t1 + 4.0 * t2 + t3) / 12.0;
    *out = eta + h * H2 + h * h * H3;
    return RC_OK;
}

/* The method's truncated modified Hamiltonian: T(h) = η + h H2 + h² H3
 * (O(h³)), or for mh_sym ½[T(h) + T(−h)]: the map is symmetric, so its
 * modified Hamiltonian is even in h, and T(±h) = H̃ ∓ h³H4 + O(h⁴) with
 * the same H4 at leading order, so the mean is an O(h⁴) truncation
 * computed from second derivatives of L_d only (the seed's "H4 = 0" for
 * SVA, §5.2). */
static rc_status vi_mh_method(vi_ws *w, const double *z, double *out,
                              int *iters)
{
    double a, b;
    rc_status st;
    if ((st = vi_mh(w, w->form, w->h, z, &a, iters)) != RC_OK)
        return st;
    if (!w->mh_sym) {
        *out = a;
        return RC_OK;
    }
    if ((st = vi_mh(w, w->form, -w->h, z, &b, iters)) != RC_OK)
        return st;
    *out = 0.5 * (a + b);
    return RC_OK;
}

/* Hamilton's vector field of H̃ at z: (∂H̃/∂p, −∂H̃/∂q), by fourth-order
 * central differences of the exact H̃ (see the file comment). */
static rc_status vi_mh_field(vi_ws *w, const double *z, double *fz,
                             int *iters)
{
    int n = w->n, i, s;
    double zz[2 * NMX], e[4];
    static const double off[4] = {1.0, -1.0, 2.0, -2.0};
    rc_status st;
    memcpy(zz, z, sizeof(double) * (size_t)(2 * n));
    for (i = 0; i < 2 * n; ++i) {
        double d = 1e-3 * fmax(1.0, fabs(z[i])), g;
        for (s = 0; s < 4; ++s) {
            zz[i] = z[i] + off[s] * d;
            if ((st = vi_mh_method(w, zz, &e[s], iters)) != RC_OK)
                return st;
        }
        zz[i] = z[i];
        g = (8.0 * (e[0] - e[1]) - (e[2] - e[3])) / (12.0 * d);
        if (i < n)
            fz[n + i] = -g;
        else
            fz[i - n] = g;
    }
    return RC_OK;
}

/* The MCVA partial map: one step τ of the 2-stage Gauss–Legendre method
 * (order 4) on ż = J∇H̃(z), stages by fixed-point iteration (τ L ≪ 1 at
 * the steps used). */
static rc_status vi_gauss(vi_ws *w, const double *z, double tau, double *z1,
                          int *iters)
{
    static const double r3 = 0.28867513459481288225; /* √3/6 */
    double a11 = 0.25, a12 = 0.25 - r3, a21 = 0.25 + r3, a22 = 0.25;
    double K1[2 * NMX], K2[2 * NMX], Z1[2 * NMX], Z2[2 * NMX];
    double N1[2 * NMX], N2[2 * NMX], prev = INFINITY, scale = 1.0;
    int n2 = 2 * w->n, i, it;
    rc_status st;
    if (tau == 0.0) {
        memcpy(z1, z, sizeof(double) * (size_t)n2);
        return RC_OK;
    }
    if ((st = vi_mh_field(w, z, K1, iters)) != RC_OK)
        return st;
    memcpy(K2, K1, sizeof K2);
    for (i = 0; i < n2; ++i)
        scale = fmax(scale, fabs(z[i]));
    for (it = 0; it < 100; ++it) {
        double d = 0.0;
        for (i = 0; i < n2; ++i) {
            Z1[i] = z[i] + tau * (a11 * K1[i] + a12 * K2[i]);
            Z2[i] = z[i] + tau * (a21 * K1[i] + a22 * K2[i]);
        }
        if ((st = vi_mh_field(w, Z1, N1, iters)) != RC_OK ||
            (st = vi_mh_field(w, Z2, N2, iters)) != RC_OK)
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
            return RC_OK;
        }
        prev = d;
    }
    snprintf(w->why, sizeof w->why,
             "the Gauss stages of the modified flow did not converge "
             "(partial step %g)", tau);
    return RC_ERR_NOT_CONVERGED;
}

/* The partial map of the impact method over τ. */
static rc_status vi_partial(vi_ws *w, const double *z, double tau,
                            double *z1, int *iters)
{
    if (w->impact == VI_MCVA)
        return vi_gauss(w, z, tau, z1, iters);
    if (tau == 0.0) {
        memcpy(z1, z, sizeof(double) * (size_t)(2 * w->n));
        w->Ed = NAN;
        return RC_OK;
    }
    return vi_map(w, &vi_svc, tau, z, z1, iters);
}

/* min_k g_k(q) and its index. */
static double vi_gmin(vi_ws *w, const double *q, int *k)
{
    double g = INFINITY;
    int c;
    rc_lag_eval(w->m, q, 1, &w->jet);
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
static void vi_log(vi_ws *w, const double *z, int k, double Eb, double Ea,
                   int after)
{
    rc_vi_impact *r = &w->log[w->nlog % RC_VI_LOG];
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
static rc_status vi_reset_energy(vi_ws *w, const double *z, const double *G,
                                 double lam, double tau_fwd, double *E,
                                 int *iters)
{
    double zz[2 * NMX], z1[2 * NMX], T, U;
    int n = w->n, i;
    rc_status st = RC_OK;
    memcpy(zz, z, sizeof(double) * (size_t)(2 * n));
    for (i = 0; i < n; ++i)
        zz[n + i] += lam * G[i];
    if (w->impact == VI_MCVA)
        return vi_mh_method(w, zz, E, iters);
    /* VCI: the forward partial step's −D₃L_d; its τ → 0 limit is H */
    if (tau_fwd <= 0.0) {
        vi_hamiltonian(w, zz, E, &T, &U);
        return RC_OK;
    }
    st = vi_map(w, &vi_svc, tau_fwd, zz, z1, iters);
    *E = w->Ed;
    return st;
}

/* p⁺ = p⁻ + λ∇g_k with λ ≠ 0 keeping the method's energy.  E_back: VCI's
 * −D₃L_d of the backward partial step (or H when it had zero length).
 * The root is bracketed around the elastic λ_H of H (the mirror image
 * in the M⁻¹ metric) and found by false position with bisection to
 * round-off in λ. */
static rc_status vi_reset(vi_ws *w, double *z, int k, double E_back,
                          double tau_fwd, int *iters)
{
    int n = w->n, i, it;
    double G[NMX], MG[NMX], lamH, a, b, fa, fb, E0, side = 0;
    rc_status st;
    rc_lag_eval(w->m, z, 1, &w->jet);
    for (i = 0; i < n; ++i)
        G[i] = w->jet.dg[k * n + i];
    if (vi_minv(&w->jet, G, MG)) {
        snprintf(w->why, sizeof w->why, "singular mass matrix at an impact");
        return RC_ERR_NOT_CONVERGED;
    }
    lamH = -2.0 * vi_dot(n, MG, z + n) / vi_dot(n, MG, G);
    if (!(lamH > 0.0)) {
        snprintf(w->why, sizeof w->why,
                 "impact on constraint %d with a non-approaching momentum "
                 "(grazing contact)",
                 k);
        return RC_ERR_ZENO;
    }
    if (w->impact == VI_CVA) {
        vi_log(w, z, k, 0.0, 0.0, 0);
        for (i = 0; i < n; ++i)
            z[n + i] += lamH * G[i];
        vi_log(w, z, k, 0.0, 0.0, 1);
        return RC_OK;
    }
    if (w->impact == VI_MCVA) {
        if ((st = vi_mh_method(w, z, &E0, iters)) != RC_OK)
            return st;
    } else {
        E0 = E_back;
    }
    /* F(λ) = E(λ) − E0 ≈ c λ (λ − λ_H) near λ_H: F(λ_H/2) < 0 < F(3λ_H/2)
     * for a small energy change; widen until the signs hold */
    a = 0.5 * lamH;
    b = 1.5 * lamH;
    for (it = 0; it < 60; ++it) {
        if ((st = vi_reset_energy(w, z, G, a, tau_fwd, &fa, iters)) != RC_OK ||
            (st = vi_reset_energy(w, z, G, b, tau_fwd, &fb, iters)) != RC_OK)
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
        snprintf(w->why, sizeof w->why,
                 "no post-impact momentum keeps the method's energy on "
                 "constraint %d (approach speed %.3g: a grazing or resting "
                 "contact)",
                 k, -vi_dot(n, MG, z + n) / sqrt(vi_dot(n, MG, G)));
        return RC_ERR_ZENO;
    }
    for (it = 0; it < 200 && b - a > 2e-16 * fabs(b); ++it) {
        double x = b - fb * (b - a) / (fb - fa), fx;
        if (!(x > a && x < b) || it % 3 == 2)
            x = 0.5 * (a + b);
        if ((st = vi_reset_energy(w, z, G, x, tau_fwd, &fx, iters)) != RC_OK)
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
        vi_log(w, z, k, E0, 0.0, 0);
        if ((st = vi_reset_energy(w, z, G, lam, tau_fwd, &Ea, iters)) !=
            RC_OK)
            return st;
        for (i = 0; i < n; ++i)
            z[n + i] += lam * G[i];
        vi_log(w, z, k, E0, Ea, 1);
    }
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Steps.                                                              */

/* Algorithm 1 from z over one step h (z updated only on success). */
static rc_status vi_step_impact(vi_ws *w, double *z, int *iters)
{
    int n = w->n, n2 = 2 * n, k, events = 0, i;
    double zf[2 * NMX], zs[2 * NMX], zt[2 * NMX], za[2 * NMX];
    double tmax = w->h;
    rc_status st;
    if ((st = vi_map(w, w->form, w->h, z, zf, iters)) != RC_OK)
        return st;
    if (vi_gmin(w, zf, &k) >= 0.0) {
        memcpy(z, zf, sizeof(double) * (size_t)n2);
        return RC_OK;
    }
    memcpy(zs, z, sizeof(double) * (size_t)n2);
    while (tmax > 0.0) {
        double a = 0.0, b = tmax, fa, fb, side = 0, Eb;
        int it, ka;
        if ((st = vi_partial(w, zs, tmax, zt, iters)) != RC_OK)
            return st;
        if ((fb = vi_gmin(w, zt, &k)) >= 0.0) {
            memcpy(zs, zt, sizeof(double) * (size_t)n2);
            break;
        }
        fa = vi_gmin(w, zs, &ka);
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
            if ((st = vi_partial(w, zs, x, zt, iters)) != RC_OK)
                return st;
            fx = vi_gmin(w, zt, &k);
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
            snprintf(w->why, sizeof w->why,
                     "an impact at the start of a sub-step right after "
                     "another (Zeno or simultaneous impacts) at t + %g",
                     w->h - tmax);
            return RC_ERR_ZENO;
        }
        /* the impact state on the feasible side; VCI's backward energy */
        if (a > 0.0) {
            if ((st = vi_partial(w, zs, a, za, iters)) != RC_OK)
                return st;
            Eb = w->Ed;
        } else {
            double T, U;
            vi_hamiltonian(w, za, &Eb, &T, &U);
        }
        (void)vi_gmin(w, za, &k);
        /* which constraint; a second one in contact and approaching is a
         * simultaneous impact, which these methods do not resolve */
        {
            double gk = w->jet.g[k], x[NMX];
            int c;
            rc_lag_jet jj = w->jet;
            if (vi_minv(&jj, za + n, x) == 0)
                for (c = 0; c < w->ng; ++c) {
                    double vn = vi_dot(n, jj.dg + c * n, x);
                    if (c != k && jj.g[c] <= gk + 1e-9 && vn < 0.0) {
                        snprintf(w->why, sizeof w->why,
                                 "simultaneous impacts on constraints %d "
                                 "and %d at t + %g",
                                 k, c, w->h - tmax + a);
                        return RC_ERR_ZENO;
                    }
                }
        }
        if ((st = vi_reset(w, za, k, Eb, tmax - a, iters)) != RC_OK)
            return st;
        ++events;
        if (events > w->max_events) {
            snprintf(w->why, sizeof w->why,
                     "more than %d impacts in one step (Zeno)",
                     w->max_events);
            return RC_ERR_ZENO;
        }
        memcpy(zs, za, sizeof(double) * (size_t)n2);
        tmax -= a;
    }
    for (i = 0; i < n2; ++i)
        z[i] = zs[i];
    w->impacts += events;
    return RC_OK;
}

static rc_status vi_fail(vi_ws *w, rc_status st, rc_error *err)
{
    err->status = st;
    err->file[0] = '\0';
    err->line = err->column = 0;
    snprintf(err->field, sizeof err->field, "integrator.method");
    snprintf(err->message, sizeof err->message, "%s", w->why);
    return st;
}

static rc_status vi_step(void *ws, rc_model_state *s, rc_error *err)
{
    vi_ws *w = (vi_ws *)ws;
    int n = w->n, i;
    double z[2 * NMX], z1[2 * NMX];
    rc_status st;
    w->iters = 0;
    for (i = 0; i < n; ++i) {
        z[i] = s->q[i];
        z[n + i] = s->p[i];
    }
    if (w->impact == VI_NONE) {
        st = vi_map(w, w->form, w->h, z, z1, &w->iters);
        if (st == RC_OK)
            memcpy(z, z1, sizeof z1);
    } else {
        st = vi_step_impact(w, z, &w->iters);
    }
    if (st != RC_OK)
        return vi_fail(w, st, err);
    for (i = 0; i < 2 * n; ++i)
        if (!isfinite(z[i])) {
            snprintf(w->why, sizeof w->why,
                     "non-finite state after the step at t = %g", s->t);
            return vi_fail(w, RC_ERR_NONFINITE, err);
        }
    for (i = 0; i < n; ++i) {
        s->q[i] = z[i];
        s->p[i] = z[n + i];
    }
    s->t += w->h;
    s->steps += 1;
    return RC_OK;
}

static void vi_diagnose(void *ws, const rc_model_state *s, rc_model_diag *d)
{
    vi_ws *w = (vi_ws *)ws;
    int n = w->n, i, it = 0, k;
    double z[2 * NMX], z1[2 * NMX];
    for (i = 0; i < n; ++i) {
        z[i] = s->q[i];
        z[n + i] = s->p[i];
    }
    vi_hamiltonian(w, z, &d->energy, &d->kinetic, &d->potential);
    d->discrete_energy = vi_map(w, w->form, w->h, z, z1, &it) == RC_OK
                             ? w->Ed
                             : NAN;
    if (vi_mh_method(w, z, &d->modified_energy, &it) != RC_OK)
        d->modified_energy = NAN;
    d->constraint_error = NAN;
    d->min_gap = w->ng > 0 ? vi_gmin(w, z, &k) : NAN;
    d->impacts = w->impacts;
    d->iterations = w->iters;
}

static int vi_iterations(void *ws)
{
    return ((vi_ws *)ws)->iters;
}

static void vi_destroy(void *ws)
{
    free(ws);
}

static rc_status vi_create(const rc_model *m, const rc_integrator_desc *integ,
                           void **out, rc_error *err, const vi_form *form,
                           int impact, const char *name)
{
    vi_ws *w;
    *out = NULL;
    memset(err, 0, sizeof *err);
    if (m->kind != &rc_model_kind_lagrangian) {
        err->status = RC_ERR_PARSE;
        snprintf(err->field, sizeof err->field, "integrator.method");
        snprintf(err->message, sizeof err->message,
                 "method %s needs a model of kind lagrangian, not %s", name,
                 m->kind ? m->kind->name : "(none)");
        return RC_ERR_PARSE;
    }
    if (impact == VI_NONE && rc_lag_nconstraints(m) > 0) {
        err->status = RC_ERR_PARSE;
        snprintf(err->field, sizeof err->field, "integrator.method");
        snprintf(err->message, sizeof err->message,
                 "method %s does not handle impacts and the model has %d "
                 "unilateral constraint(s): use cva, vci, mcva-a or "
                 "mcva-c, or drop them (model.constraints: [])",
                 name, rc_lag_nconstraints(m));
        return RC_ERR_PARSE;
    }
    if (!(integ->dt > 0.0)) {
        err->status = RC_ERR_PARSE;
        snprintf(err->field, sizeof err->field, "integrator.dt");
        snprintf(err->message, sizeof err->message, "must be > 0");
        return RC_ERR_PARSE;
    }
    w = calloc(1, sizeof *w);
    if (!w) {
        err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message,
                 "out of memory for the method's workspace");
        return RC_ERR_NOMEM;
    }
    w->m = m;
    w->n = m->n;
    w->ng = rc_lag_nconstraints(m);
    w->form = form;
    w->impact = impact;
    /* O(h⁴) H̃ for the Störmer–Verlet compositions (MCVA-A); the seed's
     * O(h³) truncation for SVC (CVA, VCI, MCVA-C) and the midpoint VI */
    w->mh_sym = form == &vi_sva || form == &vi_svb;
    w->h = integ->dt;
    w->tol = integ->newton_tol > 0.0 ? integ->newton_tol : 1e-14;
    w->maxit = integ->newton_max_iter > 0 ? integ->newton_max_iter : 50;
    w->max_events = integ->max_events > 0 ? integ->max_events : 1000;
    *out = w;
    return RC_OK;
}

#define VI_METHOD(sym, mname, form, impact, what)                           \
    static rc_status sym##_create(const rc_model *m,                         \
                                  const rc_integrator_desc *integ,           \
                                  void **ws, rc_error *err)                  \
    {                                                                        \
        return vi_create(m, integ, ws, err, &form, impact, mname);           \
    }                                                                        \
    const rc_model_method sym = {mname,       &rc_model_kind_lagrangian,     \
                                 what,        sym##_create,                  \
                                 vi_step,     vi_diagnose,                   \
                                 vi_destroy,  vi_iterations}

VI_METHOD(rc_model_method_sva, "sva", vi_sva, VI_NONE,
          "Störmer–Verlet as the composition SE2(h/2) o SE1(h/2) (seed 001 "
          "§3.3); smooth only");
VI_METHOD(rc_model_method_svb, "svb", vi_svb, VI_NONE,
          "Störmer–Verlet as SE1(h/2) o SE2(h/2) (seed 001 §3.3); smooth "
          "only");
VI_METHOD(rc_model_method_svc, "svc", vi_svc, VI_NONE,
          "the VI of L_d^SVC (seed 001 eq. 26); smooth only");
VI_METHOD(rc_model_method_vi_midpoint, "vi-midpoint", vi_mid, VI_NONE,
          "the midpoint VI, L_d = h L((q0+q1)/2, (q1-q0)/h); smooth only");
VI_METHOD(rc_model_method_cva, "cva", vi_svc, VI_CVA,
          "collision Verlet: SVC, impact reset keeps H (seed 001 §4.1)");
VI_METHOD(rc_model_method_vci, "vci", vi_svc, VI_VCI,
          "variational collision integrator: SVC, reset keeps -D3 L_d "
          "(seed 001 §4.2)");
VI_METHOD(rc_model_method_mcva_a, "mcva-a", vi_sva, VI_MCVA,
          "modified collision Verlet on SVA: partial steps on the O(h^4) "
          "modified Hamiltonian, reset keeps it (seed 001 §4.3)");
VI_METHOD(rc_model_method_mcva_c, "mcva-c", vi_svc, VI_MCVA,
          "generalized MCVA on SVC with the O(h^3) modified Hamiltonian "
          "(seed 001 §4.4)");

/* ------------------------------------------------------------------ */
/* For tests: the energies of a method at a state.                     */

rc_status rc_vi_energies(void *ws, const double *q, const double *p,
                         double *H, double *Ed, double *Hmod)
{
    vi_ws *w = (vi_ws *)ws;
    int n = w->n, i, it = 0;
    double z[2 * NMX], z1[2 * NMX], T, U;
    rc_status st;
    for (i = 0; i < n; ++i) {
        z[i] = q[i];
        z[n + i] = p[i];
    }
    vi_hamiltonian(w, z, H, &T, &U);
    if ((st = vi_map(w, w->form, w->h, z, z1, &it)) != RC_OK)
        return st;
    *Ed = w->Ed;
    return vi_mh_method(w, z, Hmod, &it);
}

int rc_vi_impact_log(const void *ws, int k, rc_vi_impact *out)
{
    const vi_ws *w = (const vi_ws *)ws;
    int first = w->nlog > RC_VI_LOG ? w->nlog - RC_VI_LOG : 0;
    if (k < first || k >= w->nlog)
        return 0;
    *out = w->log[k % RC_VI_LOG];
    return 1;
}

long rc_vi_impacts(const void *ws)
{
    return ((const vi_ws *)ws)->impacts;
}

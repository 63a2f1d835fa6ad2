/* Dense non-negative least squares on a Gram matrix (Lawson-Hanson
 * active-set method), the inner solve of the generalized reflection
 * (DESIGN section 3, seed 000 Algorithm 2 and eq. 61).
 *
 * Item: one small dense problem (one contact group; m = number of
 * approaching constraints, up to a few dozen).  It solves
 *
 *     minimise  f(lambda) = 0.5 lambda^T A lambda + b^T lambda,  lambda >= 0,
 *
 * with A = G^T W G and b = 2 G^T W p, i.e. min ||W^{1/2}(G lambda + 2p)||^2
 * up to a constant; on the passive set P = {i : lambda_i > 0} the normal
 * equations are A_PP lambda_P = -b_P (eq. 61).
 *
 * Shapes: A is m x m, row-major, symmetric positive semidefinite (both
 * triangles are read); b, lambda are m; work holds
 * rc_k_nnls_work_doubles(m) = m*m + 2m doubles (the Cholesky factor L of
 * the passive block with leading dimension m, the passive solution z, the
 * dual w); iwork holds rc_k_nnls_work_ints(m) = 2m ints (the passive list
 * in insertion order, a per-column state flag).  Nothing is allocated.
 *
 * Rounding: every passive solve is a Cholesky factorisation of A_PP
 * (grown by one row when a column enters, refactored when columns leave)
 * and two triangular solves, except with one passive column, z = -b/A_tt
 * (one rounding; the pivot test is the factor's, as for more columns).
 * Cholesky is backward stable with
 * |dA| <= c k eps |L||L^T| and (|L||L^T|)_ij <= sqrt(A_ii A_jj), so the
 * passive residual is |A_PP z + b_P|_i <= c k eps max_diag(A) ||z||_1
 * however ill-conditioned A_PP is.  The dual w = -(A lambda + b) is
 * computed with an error of the same order.  Both are bounded by
 * eps * scale with scale = max(||b||_inf, max_diag(A) ||lambda||_1), which
 * is the scale the optimality test uses (see rc_k_nnls_gram).
 *
 * Why: at the optimum lambda_i (A lambda + b)_i = 0 for every i, so
 * p' = p + G lambda has p'^T W p' = p^T W p + lambda^T (A lambda + b)
 * = p^T W p: p' is the mirror image of p through the span of the columns
 * with lambda_i > 0 (G_P^T W p' = -G_P^T W p), and the energy is kept to
 * the size of the passive residual above, independent of how well lambda
 * itself is determined. */
#ifndef RC_NNLS_H
#define RC_NNLS_H

#include "rc_hd.h"
#include "rc_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A column enters the passive set only if its Cholesky pivot (the squared
 * distance, in the A metric, from the column to the span of the passive
 * columns) exceeds this fraction of its own diagonal A_tt, i.e. only if
 * its angle to that span exceeds ~1e-7 rad.  Relative to A_tt rather than
 * to max diag(A) so that the solver is invariant under column scaling
 * G_j -> s_j G_j (lambda_j -> lambda_j / s_j); a short but independent
 * column is not mistaken for a dependent one.  1e-14 is ~45 eps, above the
 * cancellation error of A_tt - |l|^2 (a few eps * A_tt). */
#define RC_K_NNLS_PIVOT_REL 1e-14

typedef struct rc_k_nnls_result {
    int status;     /* 0 converged, 1 iteration cap hit (not converged),
                       2 numerical breakdown (singular passive system or
                       non-finite input / intermediate) */
    int iterations; /* outer iterations: columns that entered the passive
                       set */
} rc_k_nnls_result;

RC_HD static inline int rc_k_nnls_work_doubles(int m)
{
    return m > 0 ? m * m + 2 * m : 0;
}

RC_HD static inline int rc_k_nnls_work_ints(int m)
{
    return m > 0 ? 2 * m : 0;
}

/* Column states in iwork[m .. 2m). */
#define RC_K_NNLS_ZERO 0    /* active (lambda = 0), may enter */
#define RC_K_NNLS_PASSIVE 1 /* passive (lambda > 0) */
#define RC_K_NNLS_SKIP 2    /* lambda = 0, rejected for this outer pass */

/* Row k of the Cholesky factor of A[P,P] (rows 0..k-1 already in L,
 * leading dimension m).  Returns 0, or 1 if the pivot is not finite or
 * not above RC_K_NNLS_PIVOT_REL * A_tt (column t = P[k] numerically in the
 * span of P[0..k-1]). */
RC_HD static inline int rc_k_nnls_chol_row_(int m, const double *A,
                                            const int *P, int k, double *L)
{
    int t = P[k], i, j;
    double s, d, att = A[t * m + t];
    for (j = 0; j < k; ++j) {
        s = A[t * m + P[j]];
        for (i = 0; i < j; ++i)
            s -= L[k * m + i] * L[j * m + i];
        L[k * m + j] = s / L[j * m + j];
    }
    d = att;
    for (i = 0; i < k; ++i)
        d -= L[k * m + i] * L[k * m + i];
    if (!rc_isfinite(d) || !(d > 0.0) || !(d > RC_K_NNLS_PIVOT_REL * att))
        return 1;
    L[k * m + k] = rc_sqrt(d);
    return 0;
}

/* z[0..np) = -(L L^T)^{-1} b[P[0..np)).  Returns 0, or 1 if z is not
 * finite (overflow).  One passive column (the first to enter, and the
 * whole solve of a lone contact, the common case) is z = -b / A_tt: one
 * rounding instead of the factor's square root and two divisions, which
 * are most of a 1x1 solve's time (and of the lane engine's single-term
 * stage, rc_k_lanes_single, which computes the same expression). */
RC_HD static inline int rc_k_nnls_solve_(int m, const double *A,
                                         const double *L, const double *b,
                                         const int *P, int np, double *z)
{
    int i, k, bad = 0;
    double s;
    if (np == 1) {
        z[0] = -b[P[0]] / A[P[0] * m + P[0]];
        return !rc_isfinite(z[0]);
    }
    for (k = 0; k < np; ++k) {
        s = -b[P[k]];
        for (i = 0; i < k; ++i)
            s -= L[k * m + i] * z[i];
        z[k] = s / L[k * m + k];
    }
    for (k = np - 1; k >= 0; --k) {
        s = z[k];
        for (i = k + 1; i < np; ++i)
            s -= L[i * m + k] * z[i];
        z[k] = s / L[k * m + k];
        if (!rc_isfinite(z[k]))
            bad = 1;
    }
    return bad;
}

/* Solve min 0.5 lambda^T A lambda + b^T lambda subject to lambda >= 0.
 *
 * lambda (out, m): the minimiser; exactly 0 off the passive set.  On
 * status 1 it is feasible and optimal on its current passive set but not
 * globally optimal; on status 2 it is set to 0 (no reflection).
 *
 * max_iter caps the outer iterations (one column entering the passive
 * set each); max_iter <= 0 selects the default 3m + 10.  Each outer
 * iteration runs at most |P| inner (removal) steps, and rejected columns
 * are marked, so the solver always returns.
 *
 * tol: optimality test on the dual w = -(A lambda + b).  lambda is
 * declared optimal when w_j <= tol * scale for every j with lambda_j = 0,
 * where scale = max(||b||_inf, max_diag(A) * ||lambda||_1) bounds the
 * magnitude of every term summed into w (|A_jk| <= sqrt(A_jj A_kk) for a
 * PSD A), so eps * scale is the size of the rounding error in w and tol
 * a few hundred eps or more (1e-12 .. 1e-10) is safe.  tol < 0 or NaN is
 * treated as 0.
 *
 * Degeneracy (standard Lawson-Hanson handling): a candidate column whose
 * Cholesky pivot fails the RC_K_NNLS_PIVOT_REL test (dependent on the
 * passive columns), or whose trial solution component is not positive,
 * is skipped for this outer pass and the next best candidate is tried.
 * In exact arithmetic neither happens to a column with w_t > 0 (the new
 * component is w_t / pivot > 0, and a dependent column has w_t = 0 at a
 * passive optimum), so a pass in which every remaining candidate is
 * skipped ends with status 0: their duals are round-off.  Status 2 is
 * reserved for non-finite input or intermediates and for a passive block
 * that fails the pivot test on refactorisation after columns leave (its
 * pivots can only grow then, so that is a breakdown). */
RC_HD static inline rc_k_nnls_result rc_k_nnls_gram(int m, const double *A,
                                                    const double *b,
                                                    double *lambda,
                                                    double *work, int *iwork,
                                                    int max_iter, double tol)
{
    rc_k_nnls_result res;
    double *L, *z, *w;
    int *P, *state;
    int np, i, j, k, t, kmin, added, inner, keep;
    double dmax, bmax, lam1, scale, thr, best, alpha, a, s;

    res.status = 0;
    res.iterations = 0;
    if (m <= 0) {
        res.status = m == 0 ? 0 : 2;
        return res;
    }
    L = work;
    z = work + m * m;
    w = z + m;
    P = iwork;
    state = iwork + m;
    if (max_iter <= 0)
        max_iter = 3 * m + 10;
    if (!(tol >= 0.0))
        tol = 0.0;

    np = 0;
    dmax = 0.0;
    bmax = 0.0;
    for (j = 0; j < m; ++j) {
        lambda[j] = 0.0;
        state[j] = RC_K_NNLS_ZERO;
        if (!rc_isfinite(b[j]))
            res.status = 2;
        bmax = rc_fmax(bmax, rc_fabs(b[j]));
        dmax = rc_fmax(dmax, A[j * m + j]);
        for (k = 0; k < m; ++k)
            if (!rc_isfinite(A[j * m + k]))
                res.status = 2;
    }
    if (res.status != 0)
        goto done;

    for (;;) {
        /* Dual and scale at the current (passive-optimal) lambda. */
        lam1 = 0.0;
        for (k = 0; k < np; ++k)
            lam1 += lambda[P[k]];
        scale = rc_fmax(bmax, dmax * lam1);
        thr = tol * scale;
        for (j = 0; j < m; ++j) {
            s = b[j];
            for (i = 0; i < np; ++i)
                s += A[j * m + P[i]] * lambda[P[i]];
            w[j] = -s;
            if (!rc_isfinite(w[j])) {
                res.status = 2;
                goto done;
            }
            if (state[j] == RC_K_NNLS_SKIP)
                state[j] = RC_K_NNLS_ZERO;
        }

        /* Pick the entering column: largest dual above the threshold that
         * keeps the passive block nonsingular and enters positively. */
        added = 0;
        for (;;) {
            t = -1;
            best = thr;
            for (j = 0; j < m; ++j)
                if (state[j] == RC_K_NNLS_ZERO && w[j] > best) {
                    best = w[j];
                    t = j;
                }
            if (t < 0)
                break;
            if (res.iterations >= max_iter) {
                res.status = 1;
                goto done;
            }
            P[np] = t;
            if (rc_k_nnls_chol_row_(m, A, P, np, L)) {
                state[t] = RC_K_NNLS_SKIP;
                continue;
            }
            if (rc_k_nnls_solve_(m, A, L, b, P, np + 1, z)) {
                res.status = 2;
                goto done;
            }
            if (!(z[np] > 0.0)) {
                state[t] = RC_K_NNLS_SKIP;
                continue;
            }
            state[t] = RC_K_NNLS_PASSIVE;
            ++np;
            added = 1;
            break;
        }
        if (!added)
            goto done; /* optimal: no dual above tol * scale */
        ++res.iterations;

        /* Inner loop: z solves the passive system.  While some z_k <= 0,
         * step from lambda towards z as far as feasibility allows and drop
         * the columns that hit zero (at least kmin, so at most np steps). */
        for (inner = 0; inner <= m; ++inner) {
            kmin = -1;
            alpha = 1.0;
            for (k = 0; k < np; ++k)
                if (!(z[k] > 0.0)) {
                    a = lambda[P[k]] / (lambda[P[k]] - z[k]);
                    if (kmin < 0 || a < alpha) {
                        alpha = a;
                        kmin = k;
                    }
                }
            if (kmin < 0) {
                for (k = 0; k < np; ++k)
                    lambda[P[k]] = z[k];
                break;
            }
            for (k = 0; k < np; ++k)
                lambda[P[k]] += alpha * (z[k] - lambda[P[k]]);
            lambda[P[kmin]] = 0.0;
            keep = 0;
            for (k = 0; k < np; ++k) {
                j = P[k];
                if (lambda[j] > 0.0) {
                    P[keep++] = j;
                } else {
                    lambda[j] = 0.0;
                    state[j] = RC_K_NNLS_ZERO;
                }
            }
            np = keep;
            for (k = 0; k < np; ++k)
                if (rc_k_nnls_chol_row_(m, A, P, k, L)) {
                    res.status = 2;
                    goto done;
                }
            if (rc_k_nnls_solve_(m, A, L, b, P, np, z)) {
                res.status = 2;
                goto done;
            }
        }
        if (inner > m) { /* unreachable: each step removes a column */
            res.status = 2;
            goto done;
        }
    }

done:
    if (res.status == 2)
        for (j = 0; j < m; ++j)
            lambda[j] = 0.0;
    return res;
}

#ifdef __cplusplus
}
#endif
#endif

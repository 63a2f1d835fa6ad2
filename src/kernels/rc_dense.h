/* Small dense linear algebra for per-system solves (Newton steps of
 * implicit methods).  Row-major n x n matrices in caller workspace; no
 * allocation.  Rounding: Gaussian elimination with partial pivoting,
 * backward stable, error ~ n * eps * cond(A). */
#ifndef RC_DENSE_H
#define RC_DENSE_H

#include "rc_hd.h"
#include "rc_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Solve A x = b in place: A (n*n, row-major) is overwritten by its LU
 * factors, b by x; piv is n ints of workspace and keeps the row swaps.
 * b may be NULL to factor only (then solve with rc_k_lu_resolve).
 * Returns 0, or 1 when a pivot is exactly zero or not finite (singular
 * matrix). */
RC_HD static inline int rc_k_lu_solve(int n, double *A, double *b, int *piv)
{
    int r, c, k;
    for (k = 0; k < n; ++k) {
        int best = k;
        double bestv = rc_fabs(A[(long)k * n + k]);
        for (r = k + 1; r < n; ++r) {
            double v = rc_fabs(A[(long)r * n + k]);
            if (v > bestv) {
                bestv = v;
                best = r;
            }
        }
        if (!(bestv > 0.0) || !rc_isfinite(bestv))
            return 1;
        piv[k] = best;
        if (best != k) {
            for (c = 0; c < n; ++c) {
                double t = A[(long)k * n + c];
                A[(long)k * n + c] = A[(long)best * n + c];
                A[(long)best * n + c] = t;
            }
            if (b) {
                double t = b[k];
                b[k] = b[best];
                b[best] = t;
            }
        }
        for (r = k + 1; r < n; ++r) {
            double f = A[(long)r * n + k] / A[(long)k * n + k];
            A[(long)r * n + k] = f;
            for (c = k + 1; c < n; ++c)
                A[(long)r * n + c] -= f * A[(long)k * n + c];
            if (b)
                b[r] -= f * b[k];
        }
    }
    if (!b)
        return 0;
    for (k = n - 1; k >= 0; --k) {
        double s = b[k];
        for (c = k + 1; c < n; ++c)
            s -= A[(long)k * n + c] * b[c];
        b[k] = s / A[(long)k * n + k];
    }
    return 0;
}

/* Solve A x = b in place with the factors and row swaps left by
 * rc_k_lu_solve.  Rows below k are untouched when row k is reached, so
 * applying the swap of step k there equals permuting b first. */
RC_HD static inline void rc_k_lu_resolve(int n, const double *LU,
                                         const int *piv, double *b)
{
    int k, c;
    for (k = 0; k < n; ++k) {
        if (piv[k] != k) {
            double t = b[k];
            b[k] = b[piv[k]];
            b[piv[k]] = t;
        }
        for (c = 0; c < k; ++c)
            b[k] -= LU[(long)k * n + c] * b[c];
    }
    for (k = n - 1; k >= 0; --k) {
        for (c = k + 1; c < n; ++c)
            b[k] -= LU[(long)k * n + c] * b[c];
        b[k] /= LU[(long)k * n + k];
    }
}

#ifdef __cplusplus
}
#endif
#endif

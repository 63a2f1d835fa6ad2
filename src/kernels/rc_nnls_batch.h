/* Batched Lawson-Hanson NNLS with masked passive solves: the per-problem
 * control of the "medium island" tier of the large-system reflection
 * (DESIGN section 6), shared by the CPU launcher (src/host/md/nnls_batch.c,
 * LAPACK dpotrf/dpotrs) and the GPU launcher
 * (src/kernels/rc_cuda_nnls_batch.cu, cuSOLVER potrfBatched/potrsBatched).
 *
 * Problem s of a batch (0 <= s < nprob) is rc_nnls.h's problem
 *
 *     minimise  0.5 lambda^T A lambda + b^T lambda,   lambda >= 0,
 *
 * with A = B B^T (B: the island's scaled contact Jacobian, m_s x k_s) of
 * its own size m_s <= mp, padded to mp.
 *
 * Algorithm (Lawson-Hanson, as rc_k_nnls_gram, one passive solve per
 * round so that every problem of a batch is at the same point of the
 * loop):
 *   1. lambda = 0, passive set P = {}.
 *   2. dual w = -(A lambda + b); if no column j outside P has
 *      w_j > tol * scale: converged.  Else the column t with the largest
 *      w_t enters P ("ADD" round).
 *   3. solve the passive system A_PP z_P = -b_P (below).  In an ADD round
 *      a failed factorisation (t dependent on P) or z_t <= 0 rejects t:
 *      it leaves P, is skipped until the next dual, and the next best
 *      candidate is tried (back to 3 with the same w).
 *   4. if z_P > 0: lambda = z, back to 2.  Else step lambda towards z as
 *      far as lambda >= 0 allows (alpha = min lambda_k / (lambda_k - z_k)
 *      over z_k <= 0), drop the columns that reach 0 ("DROP" round) and
 *      solve again (3, 4).
 * The bodies below run everything between two solves; the launchers run
 *
 *     init;  while (some problem unfinished) { build A^, r^; factor;
 *                                              solve; update; }
 *
 * Masked passive system.  With M = diag(mask), mask_j = 1 iff j in P
 * (padded rows j >= m_s are never in P), the solve is of the full mp x mp
 *
 *     A^ = M A M + (I - M),   r^ = -M b,   A^ z = r^.
 *
 * Permuting P first, A^ = blockdiag(A_PP, I), so A^ is positive definite
 * iff A_PP is, and z = (A_PP^{-1}(-b_P), 0): exactly the passive-set
 * solution.  The same holds for the Cholesky factor in floating point:
 * for a row/column j outside P every off-diagonal entry of A^ is an exact
 * 0, so L_jk = (0 - sum of products with a 0 factor) / L_kk = 0 exactly
 * and L_jj = 1; the passive entries see only these exact zeros added to
 * their sums, so L restricted to P is the Cholesky factor of A_PP (in
 * increasing index order) with the same rounding, z_j = 0 exactly off P,
 * and L_jj (j in P) is the square root of the pivot of column j against
 * the passive columns before it.  Every problem therefore has the same
 * shape (mp x mp, one right-hand side) in every round, which is what a
 * batched factorisation needs; a problem that has finished gets the
 * identity and r^ = 0 (inert: its solve is harmless and ignored).
 *
 * Dependence test.  rc_k_nnls_gram rejects an entering column whose own
 * pivot is <= RC_K_NNLS_PIVOT_REL * A_tt.  Here the factor is in index
 * order, so every passive pivot is tested after the factorisation:
 * L_jj^2 > RC_K_NNLS_PIVOT_REL * A_jj for all j in P.  Adding t leaves
 * the pivots of columns before t unchanged and can only lower those
 * after it (their distance to a larger span), so a failure in an ADD
 * round is caused by t and rejects t; removing columns can only raise
 * pivots, so a failure in a DROP round is a breakdown (status 2), as in
 * rc_k_nnls_gram.  The factorisation's own failure (info != 0: a pivot
 * <= 0 or NaN) counts as a failed test.
 *
 * Scale and tolerance: as rc_k_nnls_gram (rc_nnls.h): a column may enter
 * only if w_j > tol * scale, scale = max(||b||_inf, max_diag(A)
 * ||lambda||_1), recomputed at each dual; tol of 1e-12 .. 1e-10 is safe.
 *
 * Rounding: each passive solve is one Cholesky factorisation of A_PP and
 * two triangular solves (LAPACK or cuSOLVER; blocked, so the summation
 * order differs between the two and from rc_k_nnls_gram's incremental
 * factor), with residual |A_PP z + b_P|_i <= c k eps max_diag(A) ||z||_1
 * as in rc_nnls.h, and lambda differs between implementations by
 * ~cond(A_PP) eps |lambda|.  The dual sums over P in index order.
 *
 * Items and shapes (nprob problems, leading size mp; long offsets):
 *   A     [nprob][mp][mp]  symmetric Gram matrices, both triangles, zero
 *                          padded (only rows/cols < m_s are read)
 *   b     [nprob][mp]
 *   lam   [nprob][mp]      the iterate; the solution at the end
 *   w     [nprob][mp]      the dual at the last passive optimum
 *   Ahat  [nprob][mp][mp]  A^ (column-major, both triangles written);
 *                          the factorisation overwrites it with L in
 *                          the lower triangle (the upper may be used as
 *                          workspace: it is rebuilt every round)
 *   z     [nprob][mp]      r^, overwritten by the solve with z
 *   col   [nprob][mp]      column states RC_K_NB_ZERO/PASSIVE/SKIP
 *   plist [nprob][mp]      scratch: the passive columns in index order
 *   info  [nprob]          the factorisation's info (0: success)
 *   phase, status, enter, np, outer, inner, solves  [nprob] ints and
 *   thr, dmax, bmax  [nprob] doubles: the per-problem control, structure
 *                          of arrays across problems.
 * Bodies of one problem touch only problem s's slices. */
#ifndef RC_NNLS_BATCH_H
#define RC_NNLS_BATCH_H

#include "rc_hd.h"
#include "rc_math.h"
#include "rc_nnls.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Round phases (phase[s]). */
#define RC_K_NB_DONE 0 /* finished (status set); inert identity system */
#define RC_K_NB_ADD 1  /* the pending solve has column enter[s] added */
#define RC_K_NB_DROP 2 /* the pending solve follows a removal step */

/* Column states (col[s][j]), as rc_nnls.h's. */
#define RC_K_NB_ZERO 0    /* lambda_j = 0, may enter */
#define RC_K_NB_PASSIVE 1 /* in P */
#define RC_K_NB_SKIP 2    /* rejected until the next dual */

/* Per-problem status (status[s]), as rc_k_nnls_result.status. */
#define RC_K_NB_CONVERGED 0 /* KKT point to tol */
#define RC_K_NB_CAPPED 1    /* outer-iteration cap: lambda feasible and
                               optimal on its passive set only */
#define RC_K_NB_BREAKDOWN 2 /* non-finite input or intermediate, or a
                               passive block that fails the pivot test
                               after removals; lambda = 0 */

/* The batch: raw pointers (host or device), passed by value. */
typedef struct rc_k_nnls_batch {
    int nprob, mp;
    double tol;    /* optimality tolerance (< 0 or NaN: 0) */
    int max_iter;  /* outer-iteration cap; <= 0: 3 m_s + 10 */
    const int *m;  /* [nprob] problem sizes */
    const double *A, *b;
    double *lam, *w, *Ahat, *z;
    int *col, *plist;
    const int *info;
    int *phase, *status, *enter, *np, *outer, *inner, *solves;
    double *thr, *dmax, *bmax;
} rc_k_nnls_batch;

/* Round bound: problem s needs at most (cap + 1)(2 m_s + 1) solves, cap
 * its outer-iteration cap (each dual is followed by at most m_s rejected
 * candidates, one accepted column and at most m_s removal steps).  The
 * launchers stop a batch past the largest bound (it cannot be reached). */
RC_HD static inline long rc_k_nnls_batch_round_bound(int m, int max_iter)
{
    long cap = max_iter > 0 ? max_iter : 3L * m + 10;
    return m > 0 ? (cap + 1) * (2L * m + 1) : 0;
}

/* r^ = -M b for problem s (0 when finished). */
RC_HD static inline void rc_k_nb_rhs_(rc_k_nnls_batch v, int s)
{
    long o = (long)s * v.mp;
    int j, ms = v.m[s];
    int done = v.phase[s] == RC_K_NB_DONE;
    for (j = 0; j < v.mp; ++j)
        v.z[o + j] = (!done && j < ms && v.col[o + j] == RC_K_NB_PASSIVE)
                         ? -v.b[o + j]
                         : 0.0;
}

/* Finish problem s with status st (returns 0: no more solves). */
RC_HD static inline int rc_k_nb_finish_(rc_k_nnls_batch v, int s, int st)
{
    long o = (long)s * v.mp;
    int j;
    v.status[s] = st;
    v.phase[s] = RC_K_NB_DONE;
    if (st == RC_K_NB_BREAKDOWN)
        for (j = 0; j < v.mp; ++j)
            v.lam[o + j] = 0.0;
    rc_k_nb_rhs_(v, s);
    return 0;
}

/* Choose the entering column from the current dual w (and thr): the
 * largest w_j > thr among RC_K_NB_ZERO columns.  None: converged.  Cap
 * reached: status 1.  Else t enters (phase ADD) and r^ is written.
 * Returns 1 when a solve is needed, 0 when finished. */
RC_HD static inline int rc_k_nb_choose_(rc_k_nnls_batch v, int s)
{
    long o = (long)s * v.mp;
    int j, t = -1, ms = v.m[s];
    int cap = v.max_iter > 0 ? v.max_iter : 3 * ms + 10;
    double best = v.thr[s];
    for (j = 0; j < ms; ++j)
        if (v.col[o + j] == RC_K_NB_ZERO && v.w[o + j] > best) {
            best = v.w[o + j];
            t = j;
        }
    if (t < 0)
        return rc_k_nb_finish_(v, s, RC_K_NB_CONVERGED);
    if (v.outer[s] >= cap)
        return rc_k_nb_finish_(v, s, RC_K_NB_CAPPED);
    v.col[o + t] = RC_K_NB_PASSIVE;
    v.np[s] += 1;
    v.enter[s] = t;
    v.phase[s] = RC_K_NB_ADD;
    rc_k_nb_rhs_(v, s);
    return 1;
}

/* At a passive optimum: the dual w = -(A lambda + b) (sum over P in
 * index order), the threshold tol * scale, skipped columns become
 * candidates again; then choose.  Cost m_s * |P| multiply-adds.
 * Returns as rc_k_nb_choose_. */
RC_HD static inline int rc_k_nb_dual_(rc_k_nnls_batch v, int s)
{
    long o = (long)s * v.mp, oa = o * v.mp;
    int i, j, k, npass = 0, ms = v.m[s];
    int *pl = v.plist + o;
    double lam1 = 0.0, acc, tol = v.tol >= 0.0 ? v.tol : 0.0; /* NaN: 0 */
    for (j = 0; j < ms; ++j)
        if (v.col[o + j] == RC_K_NB_PASSIVE) {
            pl[npass++] = j;
            lam1 += v.lam[o + j];
        }
    v.thr[s] = tol * rc_fmax(v.bmax[s], v.dmax[s] * lam1);
    for (j = 0; j < ms; ++j) {
        acc = v.b[o + j];
        for (i = 0; i < npass; ++i) {
            k = pl[i];
            acc += v.A[oa + (long)j * v.mp + k] * v.lam[o + k];
        }
        v.w[o + j] = -acc;
        if (!rc_isfinite(acc))
            return rc_k_nb_finish_(v, s, RC_K_NB_BREAKDOWN);
        if (v.col[o + j] == RC_K_NB_SKIP)
            v.col[o + j] = RC_K_NB_ZERO;
    }
    return rc_k_nb_choose_(v, s);
}

/* Start problem s: lambda = 0, P = {}, input checks (0 <= m_s <= mp,
 * finite A block and b: else status 2), the scale terms, the first dual
 * and entering column.  Returns 1 if problem s needs a solve (its A^, r^
 * then describe it), 0 if it is already finished (status set). */
RC_HD static inline int rc_k_nnls_batch_init(rc_k_nnls_batch v, int s)
{
    long o = (long)s * v.mp, oa = o * v.mp;
    int j, k, ms = v.m[s], bad = 0;
    double bm = 0.0, dm = 0.0;
    v.status[s] = RC_K_NB_CONVERGED;
    v.phase[s] = RC_K_NB_DROP; /* not DONE while starting */
    v.enter[s] = -1;
    v.np[s] = 0;
    v.outer[s] = 0;
    v.inner[s] = 0;
    v.solves[s] = 0;
    v.thr[s] = 0.0;
    for (j = 0; j < v.mp; ++j) {
        v.lam[o + j] = 0.0;
        v.w[o + j] = 0.0;
        v.col[o + j] = RC_K_NB_ZERO;
    }
    if (ms < 0 || ms > v.mp) {
        v.dmax[s] = 0.0;
        v.bmax[s] = 0.0;
        return rc_k_nb_finish_(v, s, RC_K_NB_BREAKDOWN);
    }
    for (j = 0; j < ms; ++j) {
        if (!rc_isfinite(v.b[o + j]))
            bad = 1;
        bm = rc_fmax(bm, rc_fabs(v.b[o + j]));
        dm = rc_fmax(dm, v.A[oa + (long)j * v.mp + j]);
        for (k = 0; k < ms; ++k)
            if (!rc_isfinite(v.A[oa + (long)j * v.mp + k]))
                bad = 1;
    }
    v.bmax[s] = bm;
    v.dmax[s] = dm;
    if (bad)
        return rc_k_nb_finish_(v, s, RC_K_NB_BREAKDOWN);
    return rc_k_nb_dual_(v, s);
}

/* Entry (i, j) of problem s's A^ (symmetric, so row- and column-major
 * alike): A_ij if both columns are passive, else the identity's.  The
 * item of the GPU build kernel (one thread per entry); the CPU loops it
 * with rc_k_nnls_batch_build. */
RC_HD static inline double rc_k_nnls_batch_entry(rc_k_nnls_batch v, int s,
                                                 int i, int j)
{
    long o = (long)s * v.mp;
    int ms = v.m[s];
    if (v.phase[s] != RC_K_NB_DONE && i < ms && j < ms &&
        v.col[o + i] == RC_K_NB_PASSIVE && v.col[o + j] == RC_K_NB_PASSIVE)
        return v.A[o * v.mp + (long)j * v.mp + i];
    return i == j ? 1.0 : 0.0;
}

/* The whole A^ of problem s (column-major, both triangles). */
RC_HD static inline void rc_k_nnls_batch_build(rc_k_nnls_batch v, int s)
{
    long oa = (long)s * v.mp * v.mp;
    int i, j;
    for (j = 0; j < v.mp; ++j)
        for (i = 0; i < v.mp; ++i)
            v.Ahat[oa + (long)j * v.mp + i] = rc_k_nnls_batch_entry(v, s, i, j);
}

/* After the round's factorisation (info[s], L in Ahat) and solve (z):
 * accept or reject the entering column, take the removal step or the
 * full step, and on a full step compute the dual and choose the next
 * column; write r^ for the next round.  Returns 1 if problem s needs
 * another solve, 0 if finished (or already finished: a no-op).
 * Cost O(m_s |P|) plus O(m_s) per candidate. */
RC_HD static inline int rc_k_nnls_batch_update(rc_k_nnls_batch v, int s)
{
    long o = (long)s * v.mp, oa = o * v.mp;
    int j, kmin, ok, ms = v.m[s], t;
    double alpha, a, d, zj, lj;
    if (v.phase[s] == RC_K_NB_DONE)
        return 0;
    v.solves[s] += 1;

    /* The factorisation and every passive pivot. */
    ok = v.info[s] == 0;
    for (j = 0; ok && j < ms; ++j)
        if (v.col[o + j] == RC_K_NB_PASSIVE) {
            d = v.Ahat[oa + (long)j * v.mp + j];
            if (!rc_isfinite(d) || !(d > 0.0) ||
                !(d * d > RC_K_NNLS_PIVOT_REL * v.A[oa + (long)j * v.mp + j]))
                ok = 0;
        }
    if (v.phase[s] == RC_K_NB_ADD) {
        t = v.enter[s];
        if (ok)
            for (j = 0; j < ms; ++j)
                if (v.col[o + j] == RC_K_NB_PASSIVE && !rc_isfinite(v.z[o + j]))
                    return rc_k_nb_finish_(v, s, RC_K_NB_BREAKDOWN);
        if (!ok || !(v.z[o + t] > 0.0)) { /* t dependent, or enters <= 0 */
            v.col[o + t] = RC_K_NB_SKIP;
            v.np[s] -= 1;
            v.enter[s] = -1;
            return rc_k_nb_choose_(v, s);
        }
        v.outer[s] += 1;
        v.enter[s] = -1;
    } else {
        if (!ok)
            return rc_k_nb_finish_(v, s, RC_K_NB_BREAKDOWN);
        for (j = 0; j < ms; ++j)
            if (v.col[o + j] == RC_K_NB_PASSIVE && !rc_isfinite(v.z[o + j]))
                return rc_k_nb_finish_(v, s, RC_K_NB_BREAKDOWN);
    }

    /* Feasibility: the largest step towards z keeping lambda >= 0. */
    kmin = -1;
    alpha = 1.0;
    for (j = 0; j < ms; ++j)
        if (v.col[o + j] == RC_K_NB_PASSIVE && !(v.z[o + j] > 0.0)) {
            lj = v.lam[o + j]; /* > 0: only the entering column has 0,
                                  and its z is > 0 */
            a = lj / (lj - v.z[o + j]);
            if (kmin < 0 || a < alpha) {
                alpha = a;
                kmin = j;
            }
        }
    if (kmin < 0) { /* z feasible: a passive optimum */
        for (j = 0; j < ms; ++j)
            if (v.col[o + j] == RC_K_NB_PASSIVE)
                v.lam[o + j] = v.z[o + j];
        return rc_k_nb_dual_(v, s);
    }
    /* Removal step: at least column kmin leaves P. */
    for (j = 0; j < ms; ++j)
        if (v.col[o + j] == RC_K_NB_PASSIVE) {
            zj = v.z[o + j];
            v.lam[o + j] += alpha * (zj - v.lam[o + j]);
        }
    v.lam[o + kmin] = 0.0;
    for (j = 0; j < ms; ++j)
        if (v.col[o + j] == RC_K_NB_PASSIVE && !(v.lam[o + j] > 0.0)) {
            v.lam[o + j] = 0.0;
            v.col[o + j] = RC_K_NB_ZERO;
            v.np[s] -= 1;
        }
    v.inner[s] += 1;
    if (v.np[s] == 0) /* lambda = 0 is the (empty) passive optimum */
        return rc_k_nb_dual_(v, s);
    v.phase[s] = RC_K_NB_DROP;
    rc_k_nb_rhs_(v, s);
    return 1;
}

/* Stop an unfinished problem (a launcher past the round bound): status
 * 2, lambda = 0.  No-op on a finished problem. */
RC_HD static inline void rc_k_nnls_batch_abort(rc_k_nnls_batch v, int s)
{
    if (v.phase[s] != RC_K_NB_DONE)
        rc_k_nb_finish_(v, s, RC_K_NB_BREAKDOWN);
}

#ifdef __cplusplus
}
#endif
#endif

/* Batched reflection NNLS: the "medium island" tier of the large-system
 * reflection solver (DESIGN section 6).
 *
 * nprob independent problems
 *
 *     minimise  0.5 lambda^T A lambda + b^T lambda,  lambda >= 0,
 *     A = B B^T,
 *
 * each of its own size m_s <= mp (B: the island's scaled contact
 * Jacobian, m_s x k_s), solved by the masked Lawson-Hanson iteration of
 * src/kernels/rc_nnls_batch.h (algorithm and the masked passive system
 * are described there; same optimality test and tolerance convention as
 * rc_k_nnls_gram in src/kernels/rc_nnls.h).
 *
 * Layout shared by the CPU launcher below and the GPU launcher
 * rc_cuda_nnls_batch (src/kernels/rc_cuda_nnls_batch.h):
 *   m   [nprob]            sizes, 0 <= m[s] <= mp
 *   B   [nprob][mp][kp]    row-major, back to back, ZERO padded (rows
 *                          >= m[s] and columns >= k_s are 0; padding
 *                          enters A = B B^T)
 *   b   [nprob][mp]        entries >= m[s] are not read
 *   lam [nprob][mp]        out: the solutions, exactly 0 off the passive
 *                          sets and in the padding
 *   status [nprob]         out: RC_K_NB_CONVERGED (0), RC_K_NB_CAPPED
 *                          (1: iteration cap; lambda feasible, optimal on
 *                          its passive set only), RC_K_NB_BREAKDOWN (2:
 *                          non-finite input or intermediate, or a
 *                          singular passive block; lambda = 0)
 * tol: optimality tolerance relative to max(||b||_inf, max_diag(A)
 * ||lambda||_1) (1e-12 is the value the engine uses; < 0 or NaN: 0).
 * max_iter: outer iterations (columns entering) per problem; <= 0: the
 * default 3 m_s + 10.  All arrays are borrowed. */
#ifndef RC_MD_NNLS_BATCH_H
#define RC_MD_NNLS_BATCH_H

#include <stddef.h>

#include "ricochet/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest mp: mp * mp must fit the 32-bit sizes of the LAPACK, cuBLAS
 * and cuSOLVER interfaces (46340^2 < 2^31). */
#define RC_NNLS_BATCH_MP_MAX 46340

/* What a call did. */
typedef struct rc_nnls_batch_counts {
    long rounds;      /* factor + solve rounds of the batch: the most
                         solves any one problem needed (the GPU
                         launcher factors all nprob systems each round,
                         finished ones as identities) */
    long solves;      /* passive solves, summed over problems (rejected
                         candidates included) */
    long outer_total; /* columns that entered a passive set */
    long inner_total; /* removal steps */
    int outer_max, inner_max; /* largest per problem */
    int converged, capped, breakdown; /* problems by status */
} rc_nnls_batch_counts;

/* The argument checks of both launchers: nprob >= 0, 1 <= mp <=
 * RC_NNLS_BATCH_MP_MAX, kp >= 1, 0 <= m[s] <= mp, arrays present when
 * nprob > 0.  RC_OK, or RC_ERR_INVALID with the reason in why. */
rc_status rc_nnls_batch_check(int nprob, int mp, int kp, const int *m,
                              const double *B, const double *b,
                              const double *lam, const int *status,
                              char *why, size_t why_size);

/* The CPU launcher: A = B B^T by loops, then each problem at its own
 * size m[s] through the bodies of rc_nnls_batch.h with LAPACK
 * dpotrf/dpotrs as the passive solve.  counts may be NULL.  Returns
 * RC_OK (per-problem outcomes in status), RC_ERR_INVALID, RC_ERR_NOMEM,
 * or RC_ERR_NOT_CONVERGED if a problem ran past its round bound
 * (rc_k_nnls_batch_round_bound; unreachable by construction; that
 * problem gets status 2), with a message in why. */
rc_status rc_nnls_batch_cpu(int nprob, int mp, int kp, const int *m,
                            const double *B, const double *b, double tol,
                            int max_iter, double *lam, int *status,
                            rc_nnls_batch_counts *counts, char *why,
                            size_t why_size);

#ifdef __cplusplus
}
#endif
#endif

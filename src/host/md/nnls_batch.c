/* The CPU launcher of the batched reflection NNLS (nnls_batch.h): the
 * bodies of src/kernels/rc_nnls_batch.h with LAPACK's Cholesky as the
 * passive solve.
 *
 * Problems are independent, so the CPU runs them one after the other,
 * each to completion and at its own size (a view of one problem with
 * leading size m[s]: the padding of the batch layout is exact identity
 * rows that change nothing); the rounds of the GPU's lockstep batch are
 * the largest per-problem solve count.  Work per solve: m_s^3 / 3
 * multiply-adds (dpotrf) + m_s^2 (dpotrs) + O(m_s^2) to build A^. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnls_batch.h"
#include "../../kernels/rc_nnls_batch.h"

/* LAPACK (Fortran symbols; Debian liblapack).  The trailing size_t is
 * gfortran's hidden length of the CHARACTER argument uplo: passed so
 * that the call matches the Fortran interface exactly. */
extern void dpotrf_(const char *uplo, const int *n, double *a,
                    const int *lda, int *info, size_t uplo_len);
extern void dpotrs_(const char *uplo, const int *n, const int *nrhs,
                    const double *a, const int *lda, double *b,
                    const int *ldb, int *info, size_t uplo_len);

rc_status rc_nnls_batch_check(int nprob, int mp, int kp, const int *m,
                              const double *B, const double *b,
                              const double *lam, const int *status,
                              char *why, size_t why_size)
{
    int s;
    if (nprob < 0 || mp < 1 || mp > RC_NNLS_BATCH_MP_MAX || kp < 1) {
        if (why && why_size)
            snprintf(why, why_size,
                     "nnls batch: bad shape nprob=%d mp=%d kp=%d (need "
                     "nprob >= 0, 1 <= mp <= %d, kp >= 1)",
                     nprob, mp, kp, RC_NNLS_BATCH_MP_MAX);
        return RC_ERR_INVALID;
    }
    if (nprob == 0)
        return RC_OK;
    if (!m || !B || !b || !lam || !status) {
        if (why && why_size)
            snprintf(why, why_size, "nnls batch: missing array");
        return RC_ERR_INVALID;
    }
    for (s = 0; s < nprob; ++s)
        if (m[s] < 0 || m[s] > mp) {
            if (why && why_size)
                snprintf(why, why_size,
                         "nnls batch: problem %d has size %d outside "
                         "[0, mp = %d]",
                         s, m[s], mp);
            return RC_ERR_INVALID;
        }
    return RC_OK;
}

rc_status rc_nnls_batch_cpu(int nprob, int mp, int kp, const int *m,
                            const double *B, const double *b, double tol,
                            int max_iter, double *lam, int *status,
                            rc_nnls_batch_counts *counts, char *why,
                            size_t why_size)
{
    rc_status st;
    rc_nnls_batch_counts c;
    rc_k_nnls_batch v;
    double *A = NULL, *Ahat = NULL, *w = NULL, *z = NULL;
    int *col = NULL, *plist = NULL;
    int mmax = 0, s, i, j, k, one = 1, info, info2, need;
    int phase, enter, np, outer, inner, solves;
    double thr, dmax, bmax, acc;
    size_t nn;
    long bound;

    memset(&c, 0, sizeof c);
    if (counts)
        memset(counts, 0, sizeof *counts);
    st = rc_nnls_batch_check(nprob, mp, kp, m, B, b, lam, status, why,
                             why_size);
    if (st != RC_OK || nprob == 0)
        return st;
    for (s = 0; s < nprob; ++s)
        if (m[s] > mmax)
            mmax = m[s];
    /* Scratch of the largest problem (at least one element each). */
    nn = (size_t)(mmax > 0 ? mmax : 1);
    A = (double *)malloc(nn * nn * sizeof(double));
    Ahat = (double *)malloc(nn * nn * sizeof(double));
    w = (double *)malloc(nn * sizeof(double));
    z = (double *)malloc(nn * sizeof(double));
    col = (int *)malloc(nn * sizeof(int));
    plist = (int *)malloc(nn * sizeof(int));
    if (!A || !Ahat || !w || !z || !col || !plist) {
        if (why && why_size)
            snprintf(why, why_size,
                     "nnls batch: out of memory for a %d x %d system", mmax,
                     mmax);
        st = RC_ERR_NOMEM;
        goto done;
    }

    for (s = 0; s < nprob; ++s) {
        const double *Bs = B + (size_t)s * mp * kp;
        int ms = m[s];
        double *ls = lam + (size_t)s * mp;

        /* A = B_s B_s^T at leading size m_s, the lower triangle summed
         * in k order and mirrored (exactly symmetric). */
        for (i = 0; i < ms; ++i)
            for (j = 0; j <= i; ++j) {
                acc = 0.0;
                for (k = 0; k < kp; ++k)
                    acc += Bs[(size_t)i * kp + k] * Bs[(size_t)j * kp + k];
                A[(size_t)i * ms + j] = acc;
                A[(size_t)j * ms + i] = acc;
            }
        for (j = ms; j < mp; ++j)
            ls[j] = 0.0;

        /* A view of this one problem at its own size. */
        v.nprob = 1;
        v.mp = ms;
        v.tol = tol;
        v.max_iter = max_iter;
        v.m = &m[s];
        v.A = A;
        v.b = b + (size_t)s * mp;
        v.lam = ls;
        v.w = w;
        v.Ahat = Ahat;
        v.z = z;
        v.col = col;
        v.plist = plist;
        v.info = &info;
        v.phase = &phase;
        v.status = &status[s];
        v.enter = &enter;
        v.np = &np;
        v.outer = &outer;
        v.inner = &inner;
        v.solves = &solves;
        v.thr = &thr;
        v.dmax = &dmax;
        v.bmax = &bmax;
        info = 0;

        bound = rc_k_nnls_batch_round_bound(ms, max_iter);
        need = rc_k_nnls_batch_init(v, 0);
        while (need) {
            if (solves >= bound) { /* unreachable: see the bound */
                rc_k_nnls_batch_abort(v, 0);
                if (why && why_size)
                    snprintf(why, why_size,
                             "nnls batch: problem %d (m = %d) ran past its "
                             "bound of %ld solves",
                             s, ms, bound);
                st = RC_ERR_NOT_CONVERGED;
                break;
            }
            rc_k_nnls_batch_build(v, 0);
            dpotrf_("L", &ms, Ahat, &ms, &info, (size_t)1);
            if (info == 0) {
                info2 = 0;
                dpotrs_("L", &ms, &one, Ahat, &ms, z, &ms, &info2, (size_t)1);
                if (info2 != 0) /* an argument error: fail the round */
                    info = info2;
            }
            need = rc_k_nnls_batch_update(v, 0);
        }

        c.solves += solves;
        if (solves > c.rounds)
            c.rounds = solves;
        c.outer_total += outer;
        c.inner_total += inner;
        if (outer > c.outer_max)
            c.outer_max = outer;
        if (inner > c.inner_max)
            c.inner_max = inner;
        if (status[s] == RC_K_NB_CONVERGED)
            c.converged++;
        else if (status[s] == RC_K_NB_CAPPED)
            c.capped++;
        else
            c.breakdown++;
    }
    if (counts)
        *counts = c;

done:
    free(A);
    free(Ahat);
    free(w);
    free(z);
    free(col);
    free(plist);
    return st;
}

/* GPU vs CPU: the batched reflection NNLS (rc_cuda_nnls_batched, one
 * thread per problem) against the same body rc_k_nnls_gram on the host,
 * on random problems.  Skips (77) without the CUDA backend or a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ricochet/ricochet.h"
#include "rc_nnls.h"
#include "rc_test.h"

#ifdef RICOCHET_HAVE_CUDA
#include "kernels/rc_cuda.h"
#endif

#define NPROB 4096
#define M 6

int main(void)
{
#ifndef RICOCHET_HAVE_CUDA
    printf("test_gpu_nnls: skipped (CUDA backend not compiled in)\n");
    return 77;
#else
    int gate, b, i, j, k, worst = -1, st_gpu;
    char why[300] = "";
    unsigned long long rng = 7;
    double *A, *rhs, *lg, *lc, work[M * M + 2 * M], err;
    int *sg, iwork[2 * M];
    if ((gate = rc_test_gpu_gate("test_gpu_nnls")) != 0)
        return gate;
    A = (double *)malloc(sizeof(double) * NPROB * M * M);
    rhs = (double *)malloc(sizeof(double) * NPROB * M);
    lg = (double *)malloc(sizeof(double) * NPROB * M);
    lc = (double *)malloc(sizeof(double) * NPROB * M);
    sg = (int *)malloc(sizeof(int) * NPROB);
    for (b = 0; b < NPROB; ++b) {
        double G[M + 2][M], p[M + 2];
        for (i = 0; i < M + 2; ++i) {
            p[i] = rc_test_uniform(&rng) - 0.5;
            for (j = 0; j < M; ++j)
                G[i][j] = rc_test_uniform(&rng) - 0.5;
        }
        for (i = 0; i < M; ++i) {
            double s = 0.0;
            for (k = 0; k < M + 2; ++k)
                s += G[k][i] * p[k];
            rhs[b * M + i] = 2.0 * s;
            for (j = 0; j < M; ++j) {
                s = 0.0;
                for (k = 0; k < M + 2; ++k)
                    s += G[k][i] * G[k][j];
                A[(long)b * M * M + i * M + j] = s;
            }
        }
        rc_k_nnls_gram(M, A + (long)b * M * M, rhs + b * M, lc + b * M, work,
                       iwork, 0, 1e-12);
    }
    st_gpu = rc_cuda_nnls_batched(NPROB, M, A, rhs, lg, sg, why, sizeof why);
    RC_CHECK(st_gpu == RC_OK, "rc_cuda_nnls_batched failed: %s", why);
    for (b = 0; b < NPROB; ++b)
        RC_CHECK(sg[b] == 0, "problem %d: GPU status %d", b, sg[b]);
    /* Same body and operation order; nvcc's FMA fusion (off with
     * RICOCHET_STRICT_FP) perturbs each Cholesky step by ~1 ulp, which
     * the solve amplifies by cond(A_PP) <~ 1e3 here: 1e-10 relative to
     * the largest multiplier. */
    err = rc_test_max_rel(NPROB * M, lg, lc, 1e-300, &worst);
    RC_CHECK(err <= 1e-10, "max relative difference %.3e at %d", err, worst);
    printf("test_gpu_nnls: %d problems of size %d, max rel diff %.3e\n",
           NPROB, M, err);
    free(A);
    free(rhs);
    free(lg);
    free(lc);
    free(sg);
    return rc_test_finish("test_gpu_nnls");
#endif
}

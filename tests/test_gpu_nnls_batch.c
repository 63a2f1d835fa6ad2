/* GPU vs CPU: the batched reflection NNLS (rc_cuda_nnls_batch: cuBLAS
 * Gram matrices, cuSOLVER batched Cholesky, the bodies of
 * rc_nnls_batch.h one thread per problem) against the CPU launcher
 * rc_nnls_batch_cpu on the batches of tests/test_nnls_batch.c (whose
 * generator and checks this file includes): the same statuses, KKT of
 * the GPU answers, and the same objective, impulse and (where unique)
 * lambda as the CPU's and as rc_k_nnls_gram's.  Then NaN isolation and the iteration cap on the
 * device.
 *
 * Tolerances: those of test_nnls_batch.c, for the same reason: the two
 * launchers solve the same passive systems with different summation
 * orders (cuSOLVER's blocked Cholesky vs LAPACK's, cuBLAS's GEMM vs a
 * k-ordered loop, and nvcc's multiply-add fusion), so lambda differs by
 * ~cond(A_PP) eps.  Not bitwise even with RICOCHET_STRICT_FP: that build
 * makes the bodies round alike, but the factorisations still come from
 * two libraries with their own blocking; it prints how many problems
 * match bitwise.
 *
 * RICOCHET_TEST_QUICK=1 (scripts/compute-sanitizer.sh) drops the
 * 300-row batch 1 for batch 3 (its sizes up to 33): the same kernels.
 *
 * Skips (77) without the CUDA backend, or without a device after
 * checking that the launcher then returns RC_ERR_DEVICE (not a crash). */
#include <stdio.h>

#include "ricochet/ricochet.h"

#ifdef RICOCHET_HAVE_CUDA
#define RC_NNLS_BATCH_TEST_LIB
#include "test_nnls_batch.c"
#include "kernels/rc_cuda_nnls_batch.h"

/* One batch on both launchers. */
static void test_gpu_batch(int which)
{
    nb_batch bt;
    nb_stats t, tr;
    rc_nnls_batch_counts cc, cg;
    double *lc = NULL, *lg = NULL, *lr = NULL, maxdiff = 0.0;
    int *sc = NULL, *sg = NULL, s, i, same_status = 0, same_support = 0,
        bitwise = 0, worst = -1;
    char why[400] = "", name[80];
    rc_status st;
    nb_stats_init(&t);
    nb_stats_init(&tr);
    RC_CHECK(nb_make_batch(&bt, which) == 0, "out of memory");
    lc = (double *)malloc(sizeof(double) * (size_t)bt.nprob * bt.mp);
    lg = (double *)malloc(sizeof(double) * (size_t)bt.nprob * bt.mp);
    sc = (int *)malloc(sizeof(int) * (size_t)bt.nprob);
    sg = (int *)malloc(sizeof(int) * (size_t)bt.nprob);
    lr = (double *)malloc(sizeof(double) * (size_t)bt.nprob * bt.mp);
    RC_CHECK(lc && lg && sc && sg && lr, "out of memory");
    if (!lc || !lg || !sc || !sg || !lr || !bt.B)
        goto out;
    st = rc_nnls_batch_cpu(bt.nprob, bt.mp, bt.kp, bt.m, bt.B, bt.b, NB_TOL,
                           0, lc, sc, &cc, why, sizeof why);
    RC_CHECK(st == RC_OK, "rc_nnls_batch_cpu: %s", why);
    st = rc_cuda_nnls_batch(bt.nprob, bt.mp, bt.kp, bt.m, bt.B, bt.b, NB_TOL,
                            0, lg, sg, &cg, why, sizeof why);
    RC_CHECK(st == RC_OK, "rc_cuda_nnls_batch: %s: %s", rc_status_name(st),
             why);
    if (st != RC_OK)
        goto out;
    for (s = 0; s < bt.nprob; ++s) {
        int sup = 1, bits = 1;
        double rmax = 1e-300, e = 0.0;
        same_status += sc[s] == sg[s];
        RC_CHECK(sc[s] == sg[s], "problem %d: status %d on CPU, %d on GPU", s,
                 sc[s], sg[s]);
        for (i = 0; i < bt.mp; ++i) {
            size_t k = (size_t)s * bt.mp + i;
            sup &= (lc[k] > 0.0) == (lg[k] > 0.0);
            bits &= memcmp(&lc[k], &lg[k], sizeof(double)) == 0;
            rmax = fmax(rmax, fabs(lc[k]));
        }
        for (i = 0; i < bt.mp; ++i) {
            size_t k = (size_t)s * bt.mp + i;
            e = fmax(e, fabs(lg[k] - lc[k]) / rmax);
            if (!isfinite(lg[k]))
                e = INFINITY;
        }
        if (!(e <= maxdiff)) {
            maxdiff = e;
            worst = s;
        }
        same_support += sup;
        bitwise += bits;
    }
    /* KKT of the GPU answers, and the CPU's as the reference */
    nb_check_all(&bt, lg, sg, lc, &t, "gpu");
    snprintf(name, sizeof name, "gpu batch %d (nprob %d, mp %d, kp %d)",
             which, bt.nprob, bt.mp, bt.kp);
    nb_print(name, &t, &cg);
    /* and against the dense single-problem solver rc_k_nnls_gram */
    nb_reference(&bt, lr, &tr);
    nb_check_all(&bt, lg, sg, lr, &tr, "gpu vs rc_k_nnls_gram");
    snprintf(name, sizeof name, "gpu batch %d vs rc_k_nnls_gram", which);
    nb_print(name, &tr, NULL);
    printf("  cpu: rounds %ld, solves %ld, outer %ld, inner %ld; "
           "statuses equal %d/%d, supports equal %d, bitwise equal %d; "
           "max |lambda_gpu - lambda_cpu| / max|lambda_cpu| %.2e (p%d)\n",
           cc.rounds, cc.solves, cc.outer_total, cc.inner_total, same_status,
           bt.nprob, same_support, bitwise, maxdiff, worst);
out:
    free(lc);
    free(lg);
    free(lr);
    free(sc);
    free(sg);
    nb_free(&bt);
}

/* NaN isolation and the cap on the device, statuses as on the CPU. */
static void test_gpu_failures(void)
{
    nb_batch bt;
    int ms[3], kinds[3], sc[3], sg[3], i, maxit;
    double lc[3 * 40], lg[3 * 40];
    char why[400] = "";
    rc_status st;
    ms[0] = 7;  kinds[0] = NB_FULL;
    ms[1] = 33; kinds[1] = NB_FULL;
    ms[2] = 20; kinds[2] = NB_CONTACT;
    RC_CHECK(nb_make(&bt, 3, 40, ms, kinds, 99) == 0, "out of memory");
    bt.B[3] = NAN;
    for (maxit = 0; maxit <= 1; ++maxit) {
        st = rc_cuda_nnls_batch(3, 40, bt.kp, bt.m, bt.B, bt.b, NB_TOL, maxit,
                                lg, sg, NULL, why, sizeof why);
        RC_CHECK(st == RC_OK, "failures batch on the GPU: %s", why);
        st = rc_nnls_batch_cpu(3, 40, bt.kp, bt.m, bt.B, bt.b, NB_TOL, maxit,
                               lc, sc, NULL, why, sizeof why);
        RC_CHECK(st == RC_OK, "failures batch on the CPU: %s", why);
        RC_CHECK(sg[0] == RC_K_NB_BREAKDOWN, "NaN problem on the GPU: "
                 "status %d", sg[0]);
        for (i = 0; i < 40; ++i)
            RC_CHECK(lg[i] == 0.0, "NaN problem: lambda[%d] = %g", i, lg[i]);
        for (i = 0; i < 3; ++i)
            RC_CHECK(sg[i] == sc[i], "max_iter %d, problem %d: status %d on "
                     "the GPU, %d on the CPU", maxit, i, sg[i], sc[i]);
        RC_CHECK(maxit == 0 || sg[1] == RC_K_NB_CAPPED,
                 "capped problem: status %d", sg[1]);
    }
    nb_free(&bt);
}
/* One context for many batches, as an engine keeps it: batches of other
 * shapes in turn (the buffers grow, then serve a smaller batch with the
 * larger one's leftovers in them) give exactly the one-shot launcher's
 * answers: nothing of an earlier batch leaks into a later one. */
static void test_gpu_context(void)
{
    rc_cuda_nnls_ctx *ctx = NULL;
    char why[400] = "";
    /* quick (RICOCHET_TEST_QUICK): the 33-row batch for the 300-row one,
     * still growing then shrinking the context's buffers */
    int big = rc_test_quick() ? 3 : 1;
    int order[4] = {2, big, 2, big}, r;
    rc_status st = rc_cuda_nnls_ctx_create(&ctx, NULL, 1, why, sizeof why);
    RC_CHECK(st == RC_OK, "rc_cuda_nnls_ctx_create: %s", why);
    if (st != RC_OK)
        return;
    for (r = 0; r < 4; ++r) {
        nb_batch bt;
        size_t nl;
        double *l1, *l2;
        int *s1, *s2;
        if (nb_make_batch(&bt, order[r]) != 0) {
            RC_CHECK(0, "out of memory");
            break;
        }
        nl = (size_t)bt.nprob * (size_t)bt.mp;
        l1 = (double *)malloc(sizeof(double) * nl);
        l2 = (double *)malloc(sizeof(double) * nl);
        s1 = (int *)malloc(sizeof(int) * (size_t)bt.nprob);
        s2 = (int *)malloc(sizeof(int) * (size_t)bt.nprob);
        if (l1 && l2 && s1 && s2) {
            rc_status a = rc_cuda_nnls_batch(bt.nprob, bt.mp, bt.kp, bt.m,
                                             bt.B, bt.b, NB_TOL, 0, l1, s1,
                                             NULL, why, sizeof why);
            rc_status b = rc_cuda_nnls_batch_on(ctx, bt.nprob, bt.mp, bt.kp,
                                                bt.m, bt.B, bt.b, NB_TOL, 0,
                                                l2, s2, NULL, why,
                                                sizeof why);
            RC_CHECK(a == RC_OK && b == RC_OK, "batch %d on a context: %s",
                     order[r], why);
            RC_CHECK(memcmp(l1, l2, sizeof(double) * nl) == 0 &&
                         memcmp(s1, s2, sizeof(int) * (size_t)bt.nprob) == 0,
                     "batch %d (run %d) on a kept context differs from the "
                     "one-shot launcher",
                     order[r], r);
        } else {
            RC_CHECK(0, "out of memory");
        }
        free(l1);
        free(l2);
        free(s1);
        free(s2);
        nb_free(&bt);
    }
    rc_cuda_nnls_ctx_free(ctx);
    printf("one context, batches 2, 1, 2, 1: equal to the one-shot "
           "launcher bit for bit\n");
}
#endif

int main(void)
{
#ifndef RICOCHET_HAVE_CUDA
    printf("test_gpu_nnls_batch: skipped (CUDA backend not compiled in)\n");
    return 77;
#else
    int count = 0;
    char why[300] = "", why2[400] = "";
    if (rc_cuda_devices(NULL, 0, &count, why, sizeof why) != RC_OK) {
        fprintf(stderr, "test_gpu_nnls_batch: FAILED: %s\n", why);
        return 1;
    }
    if (count == 0) {
        /* without a device the launcher must fail cleanly */
        int m1 = 1, st1 = -1;
        double B1 = 1.0, b1 = -1.0, l1 = 0.0;
        rc_status st = rc_cuda_nnls_batch(1, 1, 1, &m1, &B1, &b1, NB_TOL, 0,
                                          &l1, &st1, NULL, why2, sizeof why2);
        if (st != RC_ERR_DEVICE) {
            fprintf(stderr,
                    "test_gpu_nnls_batch: without a device the launcher "
                    "returned %s (%s), not RC_ERR_DEVICE\n",
                    rc_status_name(st), why2);
            return 1;
        }
        printf("test_gpu_nnls_batch: skipped (%s); the launcher reports: "
               "%s\n",
               why, why2);
        return 77;
    }
    if (!rc_test_quick())
        test_gpu_batch(1);
    test_gpu_batch(3);
    test_gpu_batch(2);
    test_gpu_failures();
    test_gpu_context();
    return rc_test_finish("test_gpu_nnls_batch");
#endif
}

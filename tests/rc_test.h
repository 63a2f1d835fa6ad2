/* Tiny helpers shared by the test programs.
 *
 * A test is a main() that runs checks and ends with
 *     return rc_test_finish("name");
 * which prints "name: N checks, M failed" and returns 0 (pass) or 1
 * (fail, or no check ran: a test that did not run never passes).
 *
 * Every comparison is written so that NaN fails it: `err <= tol` is false
 * for a NaN err, and the error helpers map a non-finite value to +inf. */
#ifndef RC_TEST_H
#define RC_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ricochet/run.h"

static int rc_test_checks_ = 0;
static int rc_test_failed_ = 0;

/* RC_CHECK(cond, fmt, ...): count a check; on failure print file:line,
 * the condition and the printf-style message.  The format is part of
 * __VA_ARGS__ so that a bare message needs no extra argument in C11. */
#define RC_CHECK(cond, ...)                                                  \
    do {                                                                     \
        ++rc_test_checks_;                                                   \
        if (!(cond)) {                                                       \
            ++rc_test_failed_;                                               \
            fprintf(stderr, "%s:%d: FAILED (%s): ", __FILE__, __LINE__,      \
                    #cond);                                                  \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        }                                                                    \
    } while (0)

/* |a - b| <= atol + rtol * max(|a|, |b|), both finite. */
static inline int rc_test_close(double a, double b, double rtol, double atol)
{
    double d = fabs(a - b);
    if (!isfinite(a) || !isfinite(b))
        return 0;
    return d <= atol + rtol * fmax(fabs(a), fabs(b));
}

/* Largest |got_i - ref_i| / scale with scale = max(max_k |ref_k|, floor):
 * every element is checked, and the error is measured against the size
 * of the whole reference vector so that a component that happens to be
 * near zero does not produce a meaningless huge ratio.  *worst receives
 * the index of the largest error (or of the first non-finite value, in
 * which case the result is +inf). */
static inline double rc_test_max_rel(int n, const double *got,
                                     const double *ref, double floor,
                                     int *worst)
{
    double scale = floor, e = 0.0;
    int k, w = n > 0 ? 0 : -1;
    for (k = 0; k < n; ++k)
        scale = fmax(scale, fabs(ref[k]));
    for (k = 0; k < n; ++k) {
        double ek = fabs(got[k] - ref[k]) / scale;
        if (!isfinite(ek) || !isfinite(got[k]) || !isfinite(ref[k])) {
            if (worst)
                *worst = k;
            return INFINITY;
        }
        if (ek > e) {
            e = ek;
            w = k;
        }
    }
    if (worst)
        *worst = w;
    return e;
}

static inline int rc_test_finish(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, rc_test_checks_,
           rc_test_failed_);
    return (rc_test_failed_ == 0 && rc_test_checks_ > 0) ? 0 : 1;
}

/* A GPU test's gate: 0 to run, 77 (skipped, with the reason) when there
 * is no CUDA device, 1 (failed, with the reason) when a GPU or driver is
 * present but cannot be used: a GPU machine never skips silently.
 * Needs ricochet/run.h. */
static inline int rc_test_gpu_gate(const char *name)
{
    int count = 0;
    char why[400] = "";
    if (rc_cuda_devices(NULL, 0, &count, why, sizeof why) != RC_OK) {
        fprintf(stderr, "%s: FAILED: %s\n", name, why);
        return 1;
    }
    if (count == 0) {
        printf("%s: skipped (%s)\n", name, why);
        return 77;
    }
    return 0;
}

/* Deterministic uniform numbers in [0, 1) (splitmix64), so a failure
 * reproduces bit for bit. */
/* 1 under RICOCHET_TEST_QUICK=1 (scripts/compute-sanitizer.sh sets it:
 * the sanitizers slow kernels 10-100x): tests that honour it run fewer
 * steps, members or smaller problems on the same code paths. */
static inline int rc_test_quick(void)
{
    const char *q = getenv("RICOCHET_TEST_QUICK");
    return q && !strcmp(q, "1");
}

static inline double rc_test_uniform(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

#endif

/* Seed 001 Fig. 4's measurement, shared by tests/test_vi_sweep.c and
 * bench/vi_sweep.c: the vertical cart-pendulum from Xi(beta), T = 5, run
 * with a method at step h, and its L² configuration error against a CVA
 * reference at h = 1e-4 on the method's own time grid,
 *   e = sqrt(h Σ_k |q_k − q_ref(k h)|²),  k = 0 .. round(T/h),
 * (0.032 and 0.01 are multiples of 1e-4, so the reference has every grid
 * time exactly).  Needs rc_vi_test.h. */
#ifndef RC_VI_SWEEP_H
#define RC_VI_SWEEP_H

#include <stdlib.h>
#include <time.h>

#define VI_SWEEP_T 5.0
#define VI_SWEEP_HREF 1e-4

static int vi_sweep_model(double beta, rc_model *m)
{
    char text[256];
    rc_error err;
    snprintf(text, sizeof text,
             "builtin: cart_pendulum\ninitial: {xi: %.17g}\n", beta);
    if (vi_model_load(text, m, &err)) {
        fprintf(stderr, "beta %g: %s: %s\n", beta, err.field, err.message);
        return 1;
    }
    return 0;
}

/* The reference trajectory q_ref(j h_ref), j = 0 .. T/h_ref (2 x that
 * many doubles, malloc'd); NULL on failure. */
static double *vi_sweep_reference(const rc_model *m)
{
    long n = (long)(VI_SWEEP_T / VI_SWEEP_HREF + 0.5), j;
    double *r = malloc(sizeof(double) * 2 * (size_t)(n + 1)), q[2], p[2];
    void *ws = vi_method(&rc_model_method_cva, m, VI_SWEEP_HREF);
    if (!r || !ws) {
        free(r);
        return NULL;
    }
    memcpy(q, m->q0, sizeof q);
    memcpy(p, m->p0, sizeof p);
    for (j = 0; j <= n; ++j) {
        if (j > 0 && vi_run(&rc_model_method_cva, ws, 2, q, p, 1) != RC_OK) {
            free(r);
            r = NULL;
            break;
        }
        r[2 * j] = q[0];
        r[2 * j + 1] = q[1];
    }
    rc_model_method_cva.destroy(ws);
    return r;
}

/* L² error of meth at step h; *seconds: the run's wall time; *impacts.
 * NaN when the run fails. */
static double vi_sweep_error(const rc_model_method *meth, const rc_model *m,
                             double h, const double *ref, double *seconds,
                             long *impacts)
{
    long n = (long)(VI_SWEEP_T / h + 0.5), k, stride;
    double q[2], p[2], e = 0.0;
    struct timespec t0, t1;
    void *ws = vi_method(meth, m, h);
    stride = (long)(h / VI_SWEEP_HREF + 0.5);
    if (!ws)
        return NAN;
    memcpy(q, m->q0, sizeof q);
    memcpy(p, m->p0, sizeof p);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (k = 0; k <= n; ++k) {
        double d0, d1;
        if (k > 0 && vi_run(meth, ws, 2, q, p, 1) != RC_OK) {
            e = NAN;
            break;
        }
        d0 = q[0] - ref[2 * k * stride];
        d1 = q[1] - ref[2 * k * stride + 1];
        e += h * (d0 * d0 + d1 * d1);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    *impacts = rc_vi_impacts(ws);
    meth->destroy(ws);
    return sqrt(e);
}

static inline int vi_sweep_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n values (copied); NaN sorts... is excluded by the callers. */
static inline double vi_sweep_median(const double *v, int n)
{
    double *c = malloc(sizeof(double) * (size_t)n), r;
    memcpy(c, v, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), vi_sweep_cmp);
    r = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return r;
}

#endif

/* The device engine's CPU launcher: host memory, and each kernel a
 * serial loop over its body (src/kernels/rc_md.h through rc_dmd_body).
 * It is the GPU launcher with the grid replaced by a loop, so that the
 * device engine's orchestration and bodies are tested against the host
 * engine on machines without a GPU.  Speed is not its purpose: the host
 * engine (engine.c) is the CPU production path. */
#include "dengine.h"
#include "nnls_batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rc_dmd_cpu {
    char why[256];
    int order;        /* item order of every kernel: RC_DMD_CPU_* */
    int *tkey, *tval; /* sort scratch */
    long tcap;
    long *count;      /* [2^bits] counting-sort buckets */
    long ccap;
} rc_dmd_cpu;

static void *cpu_alloc(void *ctx, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        snprintf(((rc_dmd_cpu *)ctx)->why, sizeof ((rc_dmd_cpu *)ctx)->why,
                 "out of memory (%zu bytes)", bytes);
    return p;
}

static void cpu_release(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

static int cpu_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    if (bytes)
        memmove(dst, src, bytes);
    return 0;
}

static int cpu_zero(void *ctx, void *dst, size_t bytes)
{
    (void)ctx;
    memset(dst, 0, bytes);
    return 0;
}

/* Item i of `count` in the launcher's order: a GPU runs items in no
 * particular order, so results that depended on the order would differ
 * there; the tests run the same steps in all three orders. */
static long cpu_item(int order, long i, long count)
{
    if (order == RC_DMD_CPU_REVERSE)
        return count - 1 - i;
    if (order == RC_DMD_CPU_STRIDED && count % 7919 != 0)
        return (long)((i * 7919ULL) % (unsigned long long)count);
    return i; /* 7919 is prime: coprime to count unless it divides it */
}

/* The island bodies write into per-island scratch that the GPU's
 * threads use at the same time, so an island writing past its own block
 * would corrupt a neighbour there but not in a serial loop.  The loop
 * therefore fills the scratch with NaN and checks, after each island,
 * that the neighbouring blocks not yet solved are untouched. */
static int cpu_island_checked(rc_dmd_cpu *c, rc_dmd_kernel k,
                              const rc_k_md *v, long count)
{
    long j, t, total = v->woff[count];
    unsigned char *done = (unsigned char *)calloc((size_t)count + 1, 1);
    if (!done) {
        snprintf(c->why, sizeof c->why, "out of memory");
        return -1;
    }
    for (t = 0; t < total; ++t)
        v->work[t] = NAN;
    for (j = 0; j < count; ++j) {
        long s = cpu_item(c->order, j, count), nb;
        rc_dmd_body(k, v, s);
        done[s] = 1;
        for (nb = s - 1; nb <= s + 1; nb += 2)
            if (nb >= 0 && nb < count && !done[nb])
                for (t = v->woff[nb]; t < v->woff[nb + 1]; ++t)
                    if (!isnan(v->work[t])) {
                        snprintf(c->why, sizeof c->why,
                                 "island %ld wrote past its scratch block "
                                 "(into island %ld's)",
                                 s, nb);
                        free(done);
                        return -1;
                    }
    }
    free(done);
    return 0;
}

static int cpu_run(void *ctx, rc_dmd_kernel k, const rc_k_md *v, long count)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    long i;
    if (k == RC_DMD_REFLECT || k == RC_DMD_HOLD || k == RC_DMD_PROJECT)
        return cpu_island_checked(c, k, v, count);
    for (i = 0; i < count; ++i)
        rc_dmd_body(k, v, cpu_item(c->order, i, count));
    return 0;
}

static int cpu_scan(void *ctx, long *x, long n, long *total)
{
    long i, s = 0;
    (void)ctx;
    for (i = 0; i < n; ++i) {
        long t = x[i];
        x[i] = s;
        s += t;
    }
    x[n] = s;
    *total = s;
    return 0;
}

/* Stable counting sort by key (the GPU's radix sort is stable too, so
 * both give the one order: by key, then by input position). */
static int cpu_sort_by_key(void *ctx, int *key, int *val, long n, int bits)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    long i, nb = 1L << bits, s = 0;
    if (n > c->tcap) {
        free(c->tkey);
        free(c->tval);
        c->tkey = (int *)malloc(sizeof(int) * (size_t)n);
        c->tval = (int *)malloc(sizeof(int) * (size_t)n);
        c->tcap = c->tkey && c->tval ? n : 0;
        if (!c->tcap) {
            snprintf(c->why, sizeof c->why, "out of memory for a sort");
            return -1;
        }
    }
    if (nb > c->ccap) {
        free(c->count);
        c->count = (long *)malloc(sizeof(long) * (size_t)nb);
        c->ccap = c->count ? nb : 0;
        if (!c->count) {
            snprintf(c->why, sizeof c->why, "out of memory for a sort");
            return -1;
        }
    }
    memset(c->count, 0, sizeof(long) * (size_t)nb);
    for (i = 0; i < n; ++i) {
        if (key[i] < 0 || key[i] >= nb) {
            snprintf(c->why, sizeof c->why, "sort key %d out of range",
                     key[i]);
            return -1;
        }
        c->count[key[i]]++;
    }
    for (i = 0; i < nb; ++i) {
        long t = c->count[i];
        c->count[i] = s;
        s += t;
    }
    for (i = 0; i < n; ++i) {
        long slot = c->count[key[i]]++;
        c->tkey[slot] = key[i];
        c->tval[slot] = val[i];
    }
    memcpy(key, c->tkey, sizeof(int) * (size_t)n);
    memcpy(val, c->tval, sizeof(int) * (size_t)n);
    return 0;
}

/* The chunked sum (or max) of rc_k_sum_chunk's association, the GPU's. */
static int cpu_reduce(const double *x, long n, double *out, int is_max)
{
    long c, nc = (n + RC_K_SUM_CHUNK - 1) / RC_K_SUM_CHUNK;
    double s = 0.0;
    for (c = 0; c < nc; ++c)
        s = is_max ? rc_fmax(s, rc_k_max_chunk(x, n, c))
                   : s + rc_k_sum_chunk(x, n, c);
    *out = s;
    return 0;
}

static int cpu_sum(void *ctx, const double *x, long n, double *out)
{
    (void)ctx;
    return cpu_reduce(x, n, out, 0);
}

static int cpu_max(void *ctx, const double *x, long n, double *out)
{
    (void)ctx;
    return cpu_reduce(x, n, out, 1);
}

/* tolerance 1e-12 of the problem's own scale: the dense tier's */
static int cpu_nnls_batch(void *ctx, int nprob, int mp, int kp, const int *m,
                          const double *B, const double *b, double *lam,
                          int *status)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    return rc_nnls_batch_cpu(nprob, mp, kp, m, B, b, 1e-12, 0, lam, status,
                             NULL, c->why, sizeof c->why) == RC_OK
               ? 0
               : -1;
}

static const char *cpu_error(void *ctx)
{
    return ((rc_dmd_cpu *)ctx)->why;
}

static void cpu_destroy(void *ctx)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    if (!c)
        return;
    free(c->tkey);
    free(c->tval);
    free(c->count);
    free(c);
}

static const rc_dmd_ops rc_dmd_cpu_ops = {
    "cpu",      cpu_alloc, cpu_release,     cpu_copy, cpu_copy,
    cpu_copy,   cpu_zero,  cpu_run,         cpu_scan, cpu_sort_by_key,
    cpu_sum,    cpu_max,   cpu_nnls_batch,  cpu_error, cpu_destroy};

void rc_dmd_cpu_order(void *ctx, int order)
{
    ((rc_dmd_cpu *)ctx)->order = order;
}

rc_status rc_dmd_cpu_launcher(const rc_dmd_ops **ops, void **ctx)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)calloc(1, sizeof *c);
    if (!c)
        return RC_ERR_NOMEM;
    *ops = &rc_dmd_cpu_ops;
    *ctx = c;
    return RC_OK;
}

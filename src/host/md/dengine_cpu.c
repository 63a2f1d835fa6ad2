/* The device engine's CPU launcher: host memory, and each kernel a
 * serial loop over its body (src/kernels/rc_md.h through rc_dmd_body).
 * It is the GPU launcher with the grid replaced by a loop, so that the
 * device engine's orchestration and bodies are tested against the host
 * engine on machines without a GPU.  Speed is not its purpose: the host
 * engine (engine.c) is the CPU production path. */
#include "dengine.h"
#include "nnls_batch.h"

#include <math.h>
#include <stdarg.h>
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
    double slot[RC_DMD_SLOTS]; /* reduction results */
    /* fault injection (rc_dmd_cpu_inject): calls so far, the call that
     * fails (-1: none), and whether every later call fails too */
    long calls, fail_at;
    int sticky;
} rc_dmd_cpu;

/* Record a failure: the first one is kept, as on the GPU, where later
 * failures are usually its consequences. */
static int cpu_fail(rc_dmd_cpu *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rc_dmd_keep_first(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return -1;
}

/* Every launcher call passes here first: 1 when an injected fault fails
 * it (the reason recorded). */
static int cpu_injected(rc_dmd_cpu *c, const char *op)
{
    long k = c->calls++;
    if (c->fail_at < 0 || k < c->fail_at || (k > c->fail_at && !c->sticky))
        return 0;
    cpu_fail(c, "injected fault at launcher call %ld (%s)", k, op);
    return 1;
}

static void *cpu_alloc(void *ctx, size_t bytes)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    void *p;
    if (cpu_injected(c, "alloc"))
        return NULL;
    p = malloc(bytes ? bytes : 1);
    if (!p)
        cpu_fail(c, "out of memory (%zu bytes)", bytes);
    return p;
}

static void cpu_release(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

static int cpu_move(rc_dmd_cpu *c, void *dst, const void *src, size_t bytes,
                    const char *op)
{
    if (cpu_injected(c, op))
        return -1;
    if (bytes)
        memmove(dst, src, bytes);
    return 0;
}

static int cpu_put(void *ctx, void *dst, const void *src, size_t bytes)
{
    return cpu_move((rc_dmd_cpu *)ctx, dst, src, bytes, "put");
}

static int cpu_get(void *ctx, void *dst, const void *src, size_t bytes)
{
    return cpu_move((rc_dmd_cpu *)ctx, dst, src, bytes, "get");
}

static int cpu_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    return cpu_move((rc_dmd_cpu *)ctx, dst, src, bytes, "copy");
}

static int cpu_zero(void *ctx, void *dst, size_t bytes)
{
    if (cpu_injected((rc_dmd_cpu *)ctx, "zero"))
        return -1;
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
    if (!done)
        return cpu_fail(c, "out of memory");
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
                        free(done);
                        return cpu_fail(c,
                                        "island %ld wrote past its scratch "
                                        "block (into island %ld's)",
                                        s, nb);
                    }
    }
    free(done);
    return 0;
}

static int cpu_run(void *ctx, rc_dmd_kernel k, const rc_k_md *v, long count)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    long i;
    if (cpu_injected(c, rc_dmd_kernel_name(k)))
        return -1;
    if (k == RC_DMD_REFLECT || k == RC_DMD_HOLD || k == RC_DMD_PROJECT)
        return cpu_island_checked(c, k, v, count);
    for (i = 0; i < count; ++i)
        rc_dmd_body(k, v, cpu_item(c->order, i, count));
    return 0;
}

static int cpu_scan(void *ctx, long *x, long n, long *total)
{
    long i, s = 0;
    if (cpu_injected((rc_dmd_cpu *)ctx, "scan"))
        return -1;
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
    if (cpu_injected(c, "sort_by_key"))
        return -1;
    if (n > c->tcap) {
        free(c->tkey);
        free(c->tval);
        c->tkey = (int *)malloc(sizeof(int) * (size_t)n);
        c->tval = (int *)malloc(sizeof(int) * (size_t)n);
        c->tcap = c->tkey && c->tval ? n : 0;
        if (!c->tcap)
            return cpu_fail(c, "out of memory for a sort");
    }
    if (nb > c->ccap) {
        free(c->count);
        c->count = (long *)malloc(sizeof(long) * (size_t)nb);
        c->ccap = c->count ? nb : 0;
        if (!c->count)
            return cpu_fail(c, "out of memory for a sort");
    }
    memset(c->count, 0, sizeof(long) * (size_t)nb);
    for (i = 0; i < n; ++i) {
        if (key[i] < 0 || key[i] >= nb)
            return cpu_fail(c, "sort key %d out of range", key[i]);
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

/* The chunked sum (or max) in rc_k_reduce's association, the GPU's. */
static int cpu_reduce(void *ctx, const double *x, long n, int is_max,
                      int slot)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    if (cpu_injected(c, "reduce"))
        return -1;
    if (slot < 0 || slot >= RC_DMD_SLOTS)
        return cpu_fail(c, "reduction slot %d out of range", slot);
    c->slot[slot] = rc_k_reduce(x, n, is_max);
    return 0;
}

static int cpu_fetch(void *ctx, double *out, int count)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    if (cpu_injected(c, "fetch"))
        return -1;
    if (count < 0 || count > RC_DMD_SLOTS)
        return cpu_fail(c, "fetch of %d slots", count);
    memcpy(out, c->slot, sizeof(double) * (size_t)count);
    return 0;
}

/* tolerance 1e-12 of the problem's own scale: the dense tier's */
static int cpu_nnls_batch(void *ctx, int nprob, int mp, int kp, const int *m,
                          const double *B, const double *b, double *lam,
                          int *status)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    char why[sizeof c->why];
    if (cpu_injected(c, "nnls_batch"))
        return -1;
    if (rc_nnls_batch_cpu(nprob, mp, kp, m, B, b, 1e-12, 0, lam, status,
                          NULL, why, sizeof why) != RC_OK)
        return cpu_fail(c, "%s", why);
    return 0;
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
    "cpu",      cpu_alloc,  cpu_release,    cpu_put,  cpu_get,
    cpu_copy,   cpu_zero,   cpu_run,        cpu_scan, cpu_sort_by_key,
    cpu_reduce, cpu_fetch,  cpu_nnls_batch, cpu_error, cpu_destroy};

void rc_dmd_cpu_order(void *ctx, int order)
{
    ((rc_dmd_cpu *)ctx)->order = order;
}

void rc_dmd_cpu_inject(void *ctx, long at, int sticky)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    c->calls = 0;
    c->fail_at = at;
    c->sticky = sticky;
    c->why[0] = '\0';
}

long rc_dmd_cpu_calls(const void *ctx)
{
    return ((const rc_dmd_cpu *)ctx)->calls;
}

rc_status rc_dmd_cpu_launcher(const rc_dmd_ops **ops, void **ctx)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)calloc(1, sizeof *c);
    if (!c)
        return RC_ERR_NOMEM;
    c->fail_at = -1;
    *ops = &rc_dmd_cpu_ops;
    *ctx = c;
    return RC_OK;
}

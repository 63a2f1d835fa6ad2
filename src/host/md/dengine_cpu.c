/* The engine's CPU launcher: host memory, each kernel an OpenMP loop
 * over its body (src/kernels/rc_md.h through rc_dmd_bodies), scans and
 * reductions in parallel blocks merged in index order, so that every
 * result is the same bits on any number of threads and the same as the
 * CUDA launcher's.  Where the CPU wants another form of a stage than the
 * GPU's (a blocked scan instead of CUB's, a counting sort), it lives
 * here, not in the orchestration.  For the tests it can also run every
 * loop serially in another item order and check the island kernels'
 * scratch (rc_dmd_cpu_order, rc_dmd_cpu_check). */
#include "dengine.h"
#include "cand_lanes.h"
#include "nnls_batch.h"
#include "../simd_clones.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* The half pair search's functions, inlined into both of its compiled
 * forms (cpu_half_block, cpu_half_block_avx512): a call from the AVX-512
 * form to a function compiled without it clears the vector registers'
 * upper halves (vzeroupper) and spills the lanes' constants, and a call
 * per sphere took as long as the lanes saved. */
#if defined(__GNUC__) || defined(__clang__)
#define RC_CPU_INLINE static inline __attribute__((always_inline))
#else
#define RC_CPU_INLINE static inline
#endif

/* The half pair search's runs in AVX-512 lanes (cpu_run_avx512) where
 * rc_avx512_lanes says so (../simd_clones.h). */
#if RC_HAVE_AVX512_LANES
#include <immintrin.h>
#endif

typedef struct rc_dmd_cpu {
    char why[256];
    int order;        /* item order of every kernel: RC_DMD_CPU_* */
    int threads;      /* OpenMP threads (0: the default) */
    int check;        /* island scratch checks (rc_dmd_cpu_check) */
    double *partial;  /* [pcap] chunk results of a reduction */
    long pcap;
    long *bsum;       /* [threads + 1] block sums of a scan */
    long bcap;
    int *tkey, *tval; /* sort scratch */
    long tcap;
    long *count;      /* [threads 2^bits] counting-sort buckets (one
                         digit over the identity: each thread's) */
    long ccap;
    double slot[RC_DMD_SLOTS]; /* reduction results */
    /* fault injection (rc_dmd_cpu_inject): calls so far, the call that
     * fails (-1: none), and whether every later call fails too */
    long calls, fail_at;
    int sticky;
    /* the pair search in one pass (cpu_pairs): each thread's pairs of the
     * count pass, kept for the write pass */
    int **pbuf;
    long *pcapb;
    int pthreads;     /* threads of the count pass; 0: not kept */
    int pthreads_cap; /* buffers allocated (pbuf, pcapb) */
    int phalf;        /* the count pass searched half the neighbourhood
                         (cpu_half_pairs): pbuf holds pairs (a, b), and
                         phist each thread's count of them by a */
    int **phist;      /* [phist_n][n + 1] (the last: the thread's pairs) */
    int phist_n;
    int **nbhist;     /* the spheres' candidate index (cpu_nb): each
                         thread's count of its positions by sphere, then
                         its cursors; [nbhist_n][n] */
    int nbhist_n;
    /* the hand-written AVX-512 loops on (rc_avx512_lanes: the half
     * search's runs, where cpu_lanes_fit, and the first scan's list); the
     * search's positions by coordinate, xs[k] = soa + k n, copied from
     * cell_q at each count pass and kept between builds (6 MB at 256 000
     * spheres) */
    int avx512;
    double *soa;
    long soa_cap;
    long live;        /* bytes of the arrays cpu_alloc gave, not released */
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

/* The engine's arrays, each after a 16-byte header with its size (the
 * alignment malloc gives), so that the launcher knows the bytes it holds
 * (rc_dmd_cpu_live_bytes: the test of rc_dmd_bytes). */
enum { CPU_HEAD = 16 };

static void *cpu_alloc(void *ctx, size_t bytes)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    char *p;
    if (cpu_injected(c, "alloc"))
        return NULL;
    p = (char *)malloc(CPU_HEAD + (bytes ? bytes : 1));
    if (!p) {
        cpu_fail(c, "out of memory (%zu bytes)", bytes);
        return NULL;
    }
    memcpy(p, &bytes, sizeof bytes);
    c->live += (long)bytes;
    return p + CPU_HEAD;
}

static void cpu_release(void *ctx, void *ptr)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    size_t bytes;
    if (!ptr)
        return;
    memcpy(&bytes, (char *)ptr - CPU_HEAD, sizeof bytes);
    c->live -= (long)bytes;
    free((char *)ptr - CPU_HEAD);
}

static int cpu_nt(const rc_dmd_cpu *c, long count, long grain);

/* Copies and clears of large arrays (the momenta saved every step, the
 * marks cleared) in one block per thread; memmove where they overlap. */
static int cpu_move(rc_dmd_cpu *c, void *dst, const void *src, size_t bytes,
                    const char *op)
{
    int nt;
    if (cpu_injected(c, op))
        return -1;
    if (dst == src) /* an array the engine shares with the host's state */
        return 0;
    nt = cpu_nt(c, (long)(bytes >> 10), 512); /* 512 KiB a thread */
    if (nt > 1 && ((const char *)src + bytes <= (char *)dst ||
                   (char *)dst + bytes <= (const char *)src)) {
        int t;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (t = 0; t < nt; ++t) {
            size_t lo = bytes * (size_t)t / (size_t)nt,
                   hi = bytes * (size_t)(t + 1) / (size_t)nt;
            memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
        }
    } else if (bytes) {
        memmove(dst, src, bytes);
    }
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
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    int nt, t;
    if (cpu_injected(c, "zero"))
        return -1;
    nt = cpu_nt(c, (long)(bytes >> 10), 512);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (t = 0; t < nt; ++t) {
        size_t lo = bytes * (size_t)t / (size_t)nt,
               hi = bytes * (size_t)(t + 1) / (size_t)nt;
        memset((char *)dst + lo, 0, hi - lo);
    }
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

/* This thread's number in the parallel region (0 without OpenMP). */
static int cpu_thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* Threads for a loop of `count` items of cost `grain` each (items per
 * thread below which a parallel region costs more than it saves). */
static int cpu_nt(const rc_dmd_cpu *c, long count, long grain)
{
    int nt = 1;
#ifdef _OPENMP
    nt = c->threads > 0 ? c->threads : omp_get_max_threads();
    if (count < (long)nt * grain)
        nt = (int)(count / grain);
    if (nt < 1)
        nt = 1;
#else
    (void)c;
    (void)count;
    (void)grain;
#endif
    return nt;
}

/* ------------------------------------------- the half-neighbourhood search */

/* The GPU's search (rc_k_md_pairs_of) tests each particle against its
 * whole neighbourhood, 27 cells, and keeps the pairs with j > i: every
 * pair is tested twice.  The CPU launcher tests each pair once: slot t
 * against the slots after it in its own cell and the cells of the
 * forward half of the neighbourhood (offsets (dx, dy, +1), (dx, +1, 0),
 * (+1, 0, 0)), as runs of the cell order; a pair found is (a, b) = (min,
 * max) and goes to a's list.  The same pairs with the same test (the
 * plain differences' squares are the same either way round, and the
 * minimum-image fallback is taken from a's side as the GPU's), each
 * list sorted: the same list, bit for bit.  Cells on a periodic axis
 * must number at least 3 (then each pair of neighbour cells has one
 * offset); else the whole neighbourhood is searched. */
static int cpu_half_ok(const rc_k_md *v)
{
    int k;
    if (v->dim != 2 && v->dim != 3)
        return 0;
    for (k = 0; k < v->dim; ++k)
        if (v->box.periodic[k] && v->nc[k] < 3)
            return 0;
    return 1;
}

/* The forward half-neighbourhood of one cell as runs of the cell order,
 * found once for the slots of the cell: runs [lo[r], hi[r]) of the other
 * rows (r < nrow), then the own row's cell after it along x (own_hi: the
 * own run is [t + 1, own_hi)) and, where x wraps at the row's last cell,
 * the row's first cell [wrap_lo, wrap_hi).  plain[r]: the run's cells
 * are adjacent to the cell without a periodic wrap, on a grid of at
 * least 9 cells along every periodic axis.  Positions are in the box at
 * a build (RC_DMD_WRAP), so every difference to such a run is within
 * two cells, 2 L / 9 < L / 4 = lim: the plain difference is the minimum
 * image bit for bit and the test needs neither lim's compares nor the
 * fallback.  (A NaN position fails both tests alike.)  sh[r]: run r's
 * image shift L m (m = -1, 0 or 1 on each axis; the wrap run's is +L on
 * x), the one rc_k_box_delta's floor gives on such a grid (every
 * difference within two cells of L m, where d / L + 1/2 is at least 2/9
 * from an integer), so (q_i - q_j) - L m is its difference bit for bit,
 * and from b's side its negative (the lanes, cpu_half_pairs). */
typedef struct {
    long lo[12], hi[12], own_hi, wrap_lo, wrap_hi;
    double sh[12][3];
    int nrow;
    unsigned char plain[12];
    unsigned char own_plain;
} cpu_half_cell;

/* Run r's shift: L m on y and z (my, mz: the row's wrap), mx on x. */
RC_CPU_INLINE void cpu_run_shift(const rc_k_md *v, cpu_half_cell *h, int r,
                                 int mx, int my, int mz)
{
    h->sh[r][0] = v->box.L[0] * (double)mx;
    h->sh[r][1] = v->box.L[1] * (double)my;
    h->sh[r][2] = v->box.L[2] * (double)mz;
}

/* The runs of cells [s0 - 1, s0 + 1] of the x row at `row` (its first
 * cell): two where a periodic axis wraps.  my, mz: the box lengths by
 * which the row itself wraps (y, z; 0 where it does not); plain_grid:
 * every periodic axis has 9 cells or more. */
RC_CPU_INLINE int cpu_row_runs(const rc_k_md *v, long row, int s0, int my,
                               int mz, int plain_grid, cpu_half_cell *h)
{
    const long *cs = v->cell_start;
    int nc0 = v->nc[0], r = h->nrow, flat = plain_grid && !my && !mz;
    if (!v->box.periodic[0]) {
        int a = s0 > 0 ? s0 - 1 : 0, b = s0 < nc0 - 1 ? s0 + 1 : s0;
        h->lo[r] = cs[row + a], h->hi[r] = cs[row + b + 1];
        h->plain[r] = (unsigned char)flat;
        cpu_run_shift(v, h, r, 0, my, mz);
        return 1;
    }
    if (s0 == 0 || s0 == nc0 - 1) {
        /* [nc0 - 1, nc0) wrapped and [0, 2) at s0 = 0; [nc0 - 2, nc0)
         * and [0, 1) wrapped at the row's end */
        int first = s0 == 0;
        h->lo[r] = cs[row + nc0 - (first ? 1 : 2)], h->hi[r] = cs[row + nc0];
        h->plain[r] = (unsigned char)(flat && !first);
        cpu_run_shift(v, h, r, first ? -1 : 0, my, mz);
        h->lo[r + 1] = cs[row], h->hi[r + 1] = cs[row + (first ? 2 : 1)];
        h->plain[r + 1] = (unsigned char)(flat && first);
        cpu_run_shift(v, h, r + 1, first ? 0 : 1, my, mz);
        return 2;
    }
    h->lo[r] = cs[row + s0 - 1], h->hi[r] = cs[row + s0 + 2];
    h->plain[r] = (unsigned char)flat;
    cpu_run_shift(v, h, r, 0, my, mz);
    return 1;
}

/* The neighbour row's index along an axis (y: k = 1, z: k = 2) at
 * offset s + ds, or -1 beyond a wall; *m set to the box lengths by which
 * it wraps (-1 below, 1 above; left 0 where it does not). */
RC_CPU_INLINE int cpu_axis_at(const rc_k_md *v, int k, int s, int *m)
{
    int nc = v->nc[k];
    if (s >= 0 && s < nc)
        return s;
    if (!v->box.periodic[k])
        return -1;
    *m = s < 0 ? -1 : 1;
    return s < 0 ? s + nc : s - nc;
}

/* Whether every periodic axis has at least 9 cells (cpu_half_cell). */
static int cpu_plain_grid(const rc_k_md *v)
{
    int k;
    for (k = 0; k < v->dim; ++k)
        if (v->box.periodic[k] && v->nc[k] < 9)
            return 0;
    return 1;
}

/* Cell `cell`'s runs (cpu_half_cell); s[3] its coordinates (s[2] = 0
 * in 2-D).  A cell off every face of a grid of 9 cells or more on each
 * periodic axis (most) takes the first branch: its rows' three cells,
 * every run plain (so no shift is set: only a run that is not plain
 * reads its own). */
RC_CPU_INLINE void cpu_half_cell_runs(const rc_k_md *v, int cell,
                                      const int *s, int plain_grid,
                                      cpu_half_cell *h)
{
    const long *cs = v->cell_start;
    int nc0 = v->nc[0], nc1 = v->nc[1], dy;
    int s0 = s[0], s1 = s[1], s2 = s[2];
    long own = (long)cell - s0; /* the own row's first cell */
    if (plain_grid && s0 >= 1 && s0 + 2 <= nc0 && s1 >= 1 && s1 + 2 <= nc1 &&
        (v->dim == 2 || s2 + 2 <= v->nc[2])) {
        long row = v->dim == 3 ? cell + (long)nc0 * (nc1 - 1) : cell + nc0;
        int r;
        h->nrow = v->dim == 3 ? 4 : 1;
        /* z + 1 at y - 1, y, y + 1, then z at y + 1 (2-D: y + 1) */
        for (r = 0; r < h->nrow; ++r) {
            long at = r == 3 ? cell + nc0 : row + (long)r * nc0;
            h->lo[r] = cs[at - 1];
            h->hi[r] = cs[at + 2];
            h->plain[r] = 1;
        }
        h->own_plain = 1;
        h->own_hi = cs[cell + 2];
        h->wrap_lo = h->wrap_hi = 0;
        return;
    }
    h->nrow = 0;
    if (v->dim == 3) {
        int mz = 0, z = cpu_axis_at(v, 2, s2 + 1, &mz);
        for (dy = -1; dy <= 1 && z >= 0; ++dy) {
            int my = 0, y = cpu_axis_at(v, 1, s1 + dy, &my);
            if (y >= 0)
                h->nrow += cpu_row_runs(v, ((long)z * nc1 + y) * nc0, s0, my,
                                        mz, plain_grid, h);
        }
    }
    {
        int my = 0, y = cpu_axis_at(v, 1, s1 + 1, &my);
        if (y >= 0)
            h->nrow += cpu_row_runs(v, ((long)s2 * nc1 + y) * nc0, s0, my, 0,
                                    plain_grid, h);
    }
    /* the own cell after t and the cell after it along x */
    h->own_plain = (unsigned char)plain_grid;
    h->wrap_lo = h->wrap_hi = 0;
    if (s0 + 1 < nc0) {
        h->own_hi = v->cell_start[cell + 2];
    } else {
        h->own_hi = v->cell_start[cell + 1];
        if (v->box.periodic[0]) {
            h->wrap_lo = v->cell_start[own];
            h->wrap_hi = v->cell_start[own + 1];
        }
    }
}

/* Slots [lo, hi) against particle i at qi: every slot's pair (a, b)
 * stored at out[2 cnt], the count advanced by the test's outcome (no
 * branch on it); plain: the run needs no minimum image (cpu_half_cell).
 * Returns the new count.  A plain run goes CPU_RUN_LANES slots at a
 * time, the slots past its end tested too and not counted (they are the
 * next cells', within the list where the run ends CPU_RUN_LANES before
 * it): a run is 0-6 slots (three cells of 0.8 spheres at eta 0.3), and
 * the loop's exit at its end, mispredicted, took more than the tests
 * (pair_count 0.226 -> 0.211 s, 256 000 spheres, 11 builds; 8 lanes
 * 0.288 s).  The same tests, so the same pairs. */
#define CPU_RUN_LANES 4
RC_CPU_INLINE long cpu_half_run(const rc_k_md *v, const double *qi, int i,
                                long lo, long hi, int plain, const int D,
                                int *out, long cnt)
{
    const double cut2 = v->cut2;
    long u;
    if (plain && lo < hi && hi + CPU_RUN_LANES <= v->n) {
        for (u = lo; u < hi; u += CPU_RUN_LANES) {
            double d2l[CPU_RUN_LANES];
            int l;
            for (l = 0; l < CPU_RUN_LANES; ++l)
                (void)rc_k_pair_plain_d2(v->lim, qi, v->cell_q + (u + l) * D,
                                         D, &d2l[l]);
            for (l = 0; l < CPU_RUN_LANES; ++l) {
                int j = v->cell_idx[u + l];
                out[2 * cnt] = i < j ? i : j;
                out[2 * cnt + 1] = i < j ? j : i;
                cnt += (d2l[l] < cut2) & (u + l < hi);
            }
        }
        return cnt;
    }
    if (plain) {
        for (u = lo; u < hi; ++u) {
            int j = v->cell_idx[u];
            double d2;
            (void)rc_k_pair_plain_d2(v->lim, qi, v->cell_q + u * D, D, &d2);
            out[2 * cnt] = i < j ? i : j;
            out[2 * cnt + 1] = i < j ? j : i;
            cnt += d2 < cut2;
        }
        return cnt;
    }
    for (u = lo; u < hi; ++u) {
        const double *qj = v->cell_q + u * D;
        int j = v->cell_idx[u];
        double d2;
        int ok = rc_k_pair_plain_d2(v->lim, qi, qj, D, &d2),
            in = ok & (d2 < cut2);
        if (!ok) /* near a periodic face, or NaN: from a's side */
            in = i < j ? rc_k_pair_close(&v->box, v->lim, qi, qj, cut2, D)
                       : rc_k_pair_close(&v->box, v->lim, qj, qi, cut2, D);
        out[2 * cnt] = i < j ? i : j;
        out[2 * cnt + 1] = i < j ? j : i;
        cnt += in;
    }
    return cnt;
}

#if RC_HAVE_AVX512_LANES
/* A plain run [lo, hi) against the sphere at qi in eight lanes: a run's
 * slots eight at a time from the positions by coordinate (xs; masked
 * loads past its end), the squared distance as rc_k_pair_plain_d2 sums
 * it ((dx dx + dy dy) + dz dz, from 0: the same bits), and the sphere
 * indices of the slots below cut2 compressed into one store at jb + cnt
 * (eight ints: room for them); returns the new count.  Against the
 * scalar runs (cpu_half_run: every slot stored, about four tested per
 * branch taken) the count pass went 0.213-0.217 -> 0.128-0.133 s
 * (256 000 spheres at eta 0.3, 11 builds: lanes 0.192-0.198, the runs
 * across a periodic face in lanes too 0.187-0.191, the inner cells' runs
 * without divisions or wraps 0.169-0.171, no loop per sphere on its
 * count 0.128-0.133) and 0.66-0.72 -> 0.44-0.47 s (32 000 spheres, 230
 * builds).  (The empty runs' early return is a branch that pays: without
 * it 0.131-0.133.)  The same function called per sphere was no faster
 * (the calls, not the tests, took the time), so it is inlined into a
 * search compiled for AVX-512 as a whole (cpu_half_block_avx512).  The
 * pass now takes 46 ns a sphere, a standalone loop over the same cells
 * 44. */
static inline RC_AVX512_TARGET long
cpu_run_avx512(const double *const *xs, const int *idx, const double *qi,
               long lo, long hi, const int shifted, const double *sh,
               const int D, double cut2, int *jb, long cnt)
{
    const __m512d c2 = _mm512_set1_pd(cut2), xi = _mm512_set1_pd(qi[0]),
                  yi = _mm512_set1_pd(qi[1]);
    long u = lo, len = hi - lo;
    if (len <= 0)
        return cnt;
    for (;;) {
        __mmask8 m = len >= 8 ? (__mmask8)0xff
                              : (__mmask8)((1u << len) - 1u);
        __m512d dx = _mm512_sub_pd(xi, _mm512_maskz_loadu_pd(m, xs[0] + u));
        __m512d dy = _mm512_sub_pd(yi, _mm512_maskz_loadu_pd(m, xs[1] + u));
        __m512d d2;
        __mmask8 k;
        if (shifted) { /* (q_i - q_j) - L m (cpu_half_cell) */
            dx = _mm512_sub_pd(dx, _mm512_set1_pd(sh[0]));
            dy = _mm512_sub_pd(dy, _mm512_set1_pd(sh[1]));
        }
        d2 = _mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy));
        if (D == 3) {
            __m512d dz = _mm512_sub_pd(_mm512_set1_pd(qi[2]),
                                       _mm512_maskz_loadu_pd(m, xs[2] + u));
            if (shifted)
                dz = _mm512_sub_pd(dz, _mm512_set1_pd(sh[2]));
            d2 = _mm512_add_pd(d2, _mm512_mul_pd(dz, dz));
        }
        /* _CMP_LT_OQ: false for NaN, as the scalar < */
        k = _mm512_mask_cmp_pd_mask(m, d2, c2, _CMP_LT_OQ);
        /* the register form of the compress (Zen 4 runs the store form
         * in microcode: the search took twice as long) */
        _mm256_storeu_si256((__m256i *)(jb + cnt),
                            _mm256_maskz_compress_epi32(
                                k, _mm256_maskz_loadu_epi32(m, idx + u)));
        cnt += __builtin_popcount((unsigned)k);
        if (len <= 8)
            return cnt;
        u += 8;
        len -= 8;
    }
}

/* out[2 e], out[2 e + 1] = min and max of i and jb[e], e < 8 */
static inline RC_AVX512_TARGET void cpu_pairs_avx512(int i, const int *jb,
                                                     int *out)
{
    const __m256i iv = _mm256_set1_epi32(i),
                  j8 = _mm256_loadu_si256((const __m256i *)jb);
    const __m256i a8 = _mm256_min_epi32(iv, j8), b8 = _mm256_max_epi32(iv, j8);
    /* a0 b0 a1 b1 | a4 b4 a5 b5 and a2 b2 a3 b3 | a6 b6 a7 b7 */
    const __m256i lo = _mm256_unpacklo_epi32(a8, b8),
                  hi = _mm256_unpackhi_epi32(a8, b8);
    _mm256_storeu_si256((__m256i *)out, _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256((__m256i *)(out + 8),
                        _mm256_permute2x128_si256(lo, hi, 0x31));
}
#endif

/* Slot t (in the cell of runs h) against the forward half of its
 * neighbourhood: its pairs (a, b) appended at out (two ints each, room
 * for every slot tested); returns how many.  D = dim and lanes constants
 * where it is inlined.  lanes (cpu_half_block_avx512): the plain runs in
 * AVX-512 lanes first, their spheres' indices into jb (room for the
 * runs' slots and 8 more: a small buffer that stays in cache; placed in
 * the pair buffer past the pairs, each sphere's indices went to a fresh
 * line there, and the search was no faster than the scalar one), then
 * the other runs as the scalar search's.  A sphere's pairs come in
 * another order; the write pass sorts each list, so the list is the same
 * bit for bit. */
static inline __attribute__((always_inline)) long
cpu_half_pairs(const rc_k_md *v, long t, const cpu_half_cell *h, const int D,
               const double *const *xs, const int lanes, int *jb, int *out)
{
    long cnt = 0;
    int i = v->cell_idx[t], r;
    const double *qi = v->cell_q + t * D;
#if RC_HAVE_AVX512_LANES
    if (lanes) {
        /* own_plain: a grid of 9 cells or more on each periodic axis, so
         * every run in lanes with its shift (cpu_half_cell); else the
         * plain runs, and the rest as the scalar search's */
        const double wrap[3] = {v->box.L[0], 0.0, 0.0};
        long e;
        for (r = 0; r < h->nrow; ++r)
            if (h->plain[r])
                cnt = cpu_run_avx512(xs, v->cell_idx, qi, h->lo[r], h->hi[r],
                                     0, NULL, D, v->cut2, jb, cnt);
            else if (h->own_plain)
                cnt = cpu_run_avx512(xs, v->cell_idx, qi, h->lo[r], h->hi[r],
                                     1, h->sh[r], D, v->cut2, jb, cnt);
        if (h->own_plain) {
            cnt = cpu_run_avx512(xs, v->cell_idx, qi, t + 1, h->own_hi, 0,
                                 NULL, D, v->cut2, jb, cnt);
            if (h->wrap_hi > h->wrap_lo)
                cnt = cpu_run_avx512(xs, v->cell_idx, qi, h->wrap_lo,
                                     h->wrap_hi, 1, wrap, D, v->cut2, jb,
                                     cnt);
        }
        /* the pairs (min, max) of the first eight in lanes, stored whole
         * (16 ints: room past the pairs, cpu_half_block_body): no loop
         * whose exit waits on the count */
        cpu_pairs_avx512(i, jb, out);
        for (e = 8; e < cnt; ++e) {
            int j = jb[e];
            out[2 * e] = i < j ? i : j;
            out[2 * e + 1] = i < j ? j : i;
        }
        if (h->own_plain)
            return cnt;
        for (r = 0; r < h->nrow; ++r)
            if (!h->plain[r])
                cnt = cpu_half_run(v, qi, i, h->lo[r], h->hi[r], 0, D, out,
                                   cnt);
        cnt = cpu_half_run(v, qi, i, t + 1, h->own_hi, 0, D, out, cnt);
        return cpu_half_run(v, qi, i, h->wrap_lo, h->wrap_hi, 0, D, out,
                            cnt);
    }
#else
    (void)xs;
    (void)lanes;
    (void)jb;
#endif
    for (r = 0; r < h->nrow; ++r)
        cnt = cpu_half_run(v, qi, i, h->lo[r], h->hi[r], h->plain[r], D, out,
                           cnt);
    cnt = cpu_half_run(v, qi, i, t + 1, h->own_hi, h->own_plain, D, out, cnt);
    return cpu_half_run(v, qi, i, h->wrap_lo, h->wrap_hi, 0, D, out, cnt);
}

/* Thread t's pair buffer at least `need` ints (doubled as it grows). */
static int cpu_pbuf_grow(rc_dmd_cpu *c, int t, long need)
{
    int *nb;
    if (!(nb = (int *)realloc(c->pbuf[t], sizeof(int) * (size_t)(2 * need))))
        return -1;
    c->pbuf[t] = nb;
    c->pcapb[t] = 2 * need;
    return 0;
}

RC_CPU_INLINE int cpu_pbuf_room(rc_dmd_cpu *c, int t, long need)
{
    return c->pcapb[t] >= need ? 0 : cpu_pbuf_grow(c, t, need);
}

/* Per-thread counts by sphere (the half search's by a, the candidate
 * index's by sphere): nt arrays of n + 1 ints, zeroed; 0 or -1. */
static int cpu_hist_alloc(int ***h, int *hn, int nt, long n)
{
    int t;
    *h = (int **)calloc((size_t)nt, sizeof(int *));
    *hn = *h ? nt : 0;
    for (t = 0; *h && t < nt; ++t)
        if (!((*h)[t] = (int *)calloc((size_t)n + 1, sizeof(int))))
            return -1;
    return *h ? 0 : -1;
}

static void cpu_hist_free(int ***h, int *hn)
{
    int t;
    for (t = 0; t < *hn; ++t)
        free((*h)[t]);
    free(*h);
    *h = NULL;
    *hn = 0;
}

/* sum[s] = the threads' counts at s, s < n. */
static void cpu_hist_sum(int **h, int nt, long n, long *sum)
{
    long s;
#pragma omp parallel for num_threads(nt) if (nt > 1)
    for (s = 0; s < n; ++s) {
        long a = 0;
        int t;
        for (t = 0; t < nt; ++t)
            a += h[t][s];
        sum[s] = a;
    }
}

/* The counts become cursors: thread t's first slot at s is start[s]
 * plus the earlier threads' counts (the threads in order); end[s], when
 * given, the slot after the last thread's. */
static void cpu_hist_cursors(int **h, int nt, long n, const long *start,
                             long *end)
{
    long s;
#pragma omp parallel for num_threads(nt) if (nt > 1)
    for (s = 0; s < n; ++s) {
        long at = start[s];
        int t;
        for (t = 0; t < nt; ++t) {
            int k = h[t][s];
            h[t][s] = (int)at;
            at += k;
        }
        if (end)
            end[s] = at;
    }
}

static void cpu_half_free(rc_dmd_cpu *c)
{
    cpu_hist_free(&c->phist, &c->phist_n);
    c->phalf = 0;
}

/* The lanes' buffer of sphere indices (cpu_half_pairs): room for the
 * slots of a sphere's runs, at most the 14 cells of its half
 * neighbourhood (5 in 2-D) times the fullest cell's count, and 8 more.
 * A grid whose fullest cell holds more than 72 (spheres overlapping by
 * far: no fluid) is searched without the lanes.  (Checked per cell, the
 * test waited on the loads of the cell's runs and cost as much as it
 * guarded.) */
#define CPU_LANES_JB 1024
static int cpu_lanes_fit(const rc_k_md *v, int nt)
{
    long c, most = 0;
#pragma omp parallel for num_threads(nt) if (nt > 1) reduction(max : most)
    for (c = 0; c < v->ncell; ++c)
        if (v->cell_start[c + 1] - v->cell_start[c] > most)
            most = v->cell_start[c + 1] - v->cell_start[c];
    return 14 * most + 8 <= CPU_LANES_JB;
}

/* Thread t's share [lo, hi) of the half search's count pass (slots of
 * the cell order): its pairs into its buffer, counted by a in its phist;
 * 0, or -1 on memory.  lanes: the plain runs in AVX-512 lanes (the
 * positions by coordinate in c->soa). */
static inline __attribute__((always_inline)) int
cpu_half_block_body(rc_dmd_cpu *c, const rc_k_md *v, int t, long lo, long hi,
                    const int lanes)
{
    long it, e, pos = 0, n = v->n;
    int *hist = c->phist[t];
    int cell = lo < hi ? v->cell_of[v->cell_idx[lo]] : 0,
        plain_grid = cpu_plain_grid(v), fail = 0, sc[3];
    int jb[CPU_LANES_JB];
    const double *xs[3] = {NULL, NULL, NULL};
    cpu_half_cell h;
    /* the lanes read jb's first eight whatever the count (cpu_half_pairs) */
    memset(jb, 0, sizeof jb);
    if (lanes) {
        xs[0] = c->soa;
        xs[1] = c->soa + n;
        xs[2] = v->dim == 3 ? c->soa + 2 * n : NULL;
    }
    /* the cell's coordinates, carried along as the cells advance */
    sc[0] = cell % v->nc[0];
    sc[1] = (cell / v->nc[0]) % v->nc[1];
    sc[2] = v->dim == 3 ? cell / (v->nc[0] * v->nc[1]) : 0;
    if (lo < hi)
        cpu_half_cell_runs(v, cell, sc, plain_grid, &h);
    for (it = lo; it < hi; ++it) {
        long cnt;
        if (v->cell_start[cell + 1] <= it) {
            while (v->cell_start[cell + 1] <= it) {
                ++cell;
                if (++sc[0] == v->nc[0]) {
                    sc[0] = 0;
                    if (++sc[1] == v->nc[1]) {
                        sc[1] = 0;
                        ++sc[2];
                    }
                }
            }
            cpu_half_cell_runs(v, cell, sc, plain_grid, &h);
        }
        /* room for a pair with every other particle, and the lanes' 16
         * ints */
        if (cpu_pbuf_room(c, t, pos + 2 * n + 2 + 16)) {
            fail = 1;
            break;
        }
        cnt = v->dim == 3 ? cpu_half_pairs(v, it, &h, 3, xs, lanes, jb,
                                           c->pbuf[t] + pos)
                          : cpu_half_pairs(v, it, &h, 2, xs, lanes, jb,
                                           c->pbuf[t] + pos);
        pos += 2 * cnt;
    }
    /* the pairs counted by a once all are found (counted per sphere, the
     * loop's exit on the sphere's count was mispredicted about once a
     * sphere) */
    for (e = 0; e < pos; e += 2)
        hist[c->pbuf[t][e]]++;
    hist[n] = (int)(pos / 2); /* this thread's pairs */
    return fail ? -1 : 0;
}

static int cpu_half_block(rc_dmd_cpu *c, const rc_k_md *v, int t, long lo,
                          long hi)
{
    return cpu_half_block_body(c, v, t, lo, hi, 0);
}

#if RC_HAVE_AVX512_LANES
/* The same compiled for AVX-512, its plain runs in lanes. */
static RC_AVX512_TARGET int cpu_half_block_avx512(rc_dmd_cpu *c,
                                                  const rc_k_md *v, int t,
                                                  long lo, long hi)
{
    return cpu_half_block_body(c, v, t, lo, hi, 1);
}
#endif

/* The count pass (write 0) and the write pass of the half search, on the
 * threads' buffers (pbuf, made ready by cpu_pairs).  Count: each thread
 * searches its block of slots, keeps the pairs (a, b) and counts them by
 * a (phist); pair_off[a] = their sum over the threads.  Write (pair_off
 * scanned): each thread's count at a becomes its first slot in a's list
 * (the threads in order), its pairs go there, and each list is sorted by
 * b (insertion: a list is about one pair long at fluid densities). */
static int cpu_pairs_half(rc_dmd_cpu *c, const rc_k_md *v, long count,
                          int write, int nt)
{
    long n = v->n;
    int fail = 0, lanes;
    if (write) {
        /* each thread's count at a becomes its first slot in a's list */
        cpu_hist_cursors(c->phist, nt, n, v->pair_off, NULL);
        /* each thread places its own pairs, then sorts the lists of its
         * block of spheres (reading every thread's buffer to write only
         * its own block's lists was no faster: 0.025-0.029 s against
         * 0.024-0.026, 2 threads, 256 000 spheres, 15 builds) */
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int t = cpu_thread_num();
            const int *pb = c->pbuf[t];
            int *first = c->phist[t];
            long e, np = first[n], x;
            for (e = 0; e < np; ++e) {
                long slot = first[pb[2 * e]]++;
                v->cand_i[slot] = pb[2 * e];
                v->cand_j[slot] = pb[2 * e + 1];
            }
#pragma omp barrier
            for (x = n * t / nt; x < n * (t + 1) / nt; ++x)
                rc_k_md_sort_pairs(v->cand_j + v->pair_off[x],
                                   v->pair_off[x + 1] - v->pair_off[x]);
        }
        cpu_half_free(c);
        return 0;
    }
    cpu_half_free(c);
    if (cpu_hist_alloc(&c->phist, &c->phist_n, nt, n)) {
        cpu_half_free(c);
        return -1;
    }
    c->phalf = 1;
    /* the lanes' positions by coordinate (the scalar runs where there is
     * no memory for them) */
    lanes = c->avx512 && v->n > 0 && cpu_lanes_fit(v, nt);
    if (lanes && c->soa_cap < v->dim * n) {
        free(c->soa);
        c->soa = (double *)malloc(sizeof(double) * (size_t)(v->dim * n));
        c->soa_cap = c->soa ? v->dim * n : 0;
        lanes = c->soa != NULL;
    }
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(| : fail)
    {
        int t = cpu_thread_num();
        long lo = count * t / nt, hi = count * (t + 1) / nt;
        if (lanes) {
            long s0 = n * t / nt, s1 = n * (t + 1) / nt, s;
            int k, D = v->dim;
            for (s = s0; s < s1; ++s)
                for (k = 0; k < D; ++k)
                    c->soa[k * n + s] = v->cell_q[s * D + k];
#pragma omp barrier
        }
#if RC_HAVE_AVX512_LANES
        if (lanes)
            fail = cpu_half_block_avx512(c, v, t, lo, hi) != 0;
        else
#endif
            fail = cpu_half_block(c, v, t, lo, hi) != 0;
    }
    if (fail) {
        cpu_half_free(c);
        return -1;
    }
    /* a's count over the threads */
    cpu_hist_sum(c->phist, nt, n, v->pair_off);
    return 0;
}

/* The whole-neighbourhood search (rc_k_md_pairs_of, the GPU's body) of
 * each thread's block of slots, its lists kept in its buffer by the count
 * pass and copied to their offsets by the write pass. */
static int cpu_pairs_whole(rc_dmd_cpu *c, const rc_k_md *v, long count,
                           int write, int nt)
{
    int fail = 0;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(| : fail)
    {
        int t = cpu_thread_num();
        long it, pos = 0, lo = count * t / nt, hi = count * (t + 1) / nt;
        /* the cell of slot it: read for the thread's first slot, then
         * advanced along the cell order (cell_of at each particle is a
         * read at a random place) */
        int cell = !write && lo < hi ? v->cell_of[v->cell_idx[lo]] : 0;
        for (it = lo; it < hi && !fail; ++it) {
            long p = v->cell_idx[it];
            if (!write) {
                while (v->cell_start[cell + 1] <= it)
                    ++cell;
                /* room for any list: a particle has fewer than n pairs */
                if (cpu_pbuf_room(c, t, pos + v->n)) {
                    fail = 1;
                    break;
                }
                /* spare: the room above is n, and p has fewer than n
                 * pairs, so a slot beyond them is there */
                v->pair_off[p] =
                    rc_k_md_pairs_of(v, it, cell, c->pbuf[t] + pos, 1);
                pos += v->pair_off[p];
            } else {
                long e, base = v->pair_off[p],
                        cnt = v->pair_off[p + 1] - base;
                memcpy(v->cand_j + base, c->pbuf[t] + pos,
                       sizeof(int) * (size_t)cnt);
                for (e = 0; e < cnt; ++e)
                    v->cand_i[base + e] = (int)p;
                pos += cnt;
            }
        }
    }
    return fail ? -1 : 0;
}

/* The pair search in one pass instead of the GPU's two (count, scan,
 * search again and write): the count pass (PAIR_COUNT) keeps each
 * thread's pairs in a buffer of its own, and the write pass (PAIR_WRITE,
 * after the scan) puts them at their offsets.  The half search
 * (cpu_pairs_half) where the cells allow, else the GPU's body
 * (cpu_pairs_whole); either way the same list, bit for bit.  Returns 0,
 * or -1 on memory (then the two passes run as on the GPU). */
static int cpu_pairs(rc_dmd_cpu *c, const rc_k_md *v, long count, int write,
                     int nt)
{
    int fail = 0;
    if (!write) {
        if (nt > c->pthreads_cap) {
            int t;
            int **nb = (int **)calloc((size_t)nt, sizeof(int *));
            long *nc = (long *)calloc((size_t)nt, sizeof(long));
            if (!nb || !nc) {
                free(nb);
                free(nc);
                return -1;
            }
            for (t = 0; t < c->pthreads_cap; ++t) {
                nb[t] = c->pbuf[t];
                nc[t] = c->pcapb[t];
            }
            free(c->pbuf);
            free(c->pcapb);
            c->pbuf = nb;
            c->pcapb = nc;
            c->pthreads_cap = nt;
        }
        c->pthreads = nt;
    } else if (c->pthreads != nt) {
        return -1;
    }
    if (write ? c->phalf : cpu_half_ok(v))
        fail = cpu_pairs_half(c, v, count, write, nt) != 0;
    else
        fail = cpu_pairs_whole(c, v, count, write, nt) != 0;
    if (fail)
        c->pthreads = 0;
    if (write && !fail) {
        /* the pairs go once written: a build's scratch (4 bytes a pair
         * and more) that would otherwise stay beside the engine's arrays
         * at their peak, an output between steps (g(r)'s sample) */
        int t;
        for (t = 0; t < c->pthreads_cap; ++t) {
            free(c->pbuf[t]);
            c->pbuf[t] = NULL;
            c->pcapb[t] = 0;
        }
    }
    return fail ? -1 : 0;
}

static void cpu_nb_free(rc_dmd_cpu *c)
{
    cpu_hist_free(&c->nbhist, &c->nbhist_n);
}

/* The spheres' candidate index (NB_COUNT, the scan, NB_FILL;
 * rc_k_md_nb_count) without atomics: on 2 threads the atomic adds at
 * random spheres moved the counters' lines between the cores at every
 * candidate (the fill took longer on 2 threads than on 1).  Count: each
 * thread counts its block of positions by sphere, and nb_end[s] = the
 * sum over the threads.  Fill (nb_end scanned into starts): each
 * thread's first slot at s is the start plus the earlier threads'
 * counts, nb_end[s] becomes s's end, and each thread places its block's
 * positions.  The index the kernels make (each sphere's positions in the
 * order of the atomics, which nothing depends on: rc_k_mdx_forget and
 * rc_k_md_close_fill write or read each whole run). */
static int cpu_nb(rc_dmd_cpu *c, const rc_k_md *v, long count, int fill,
                  int nt)
{
    long n = v->n;
    if (!fill) {
        cpu_nb_free(c);
        if (cpu_hist_alloc(&c->nbhist, &c->nbhist_n, nt, n)) {
            cpu_nb_free(c);
            return -1;
        }
    } else if (c->nbhist_n != nt) {
        cpu_nb_free(c);
        return -1;
    } else {
        /* nb_end, scanned, holds the starts; it ends with the ends */
        cpu_hist_cursors(c->nbhist, nt, n, v->nb_end, v->nb_end);
    }
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t = cpu_thread_num();
        long u, lo = count * t / nt, hi = count * (t + 1) / nt;
        int *h = c->nbhist[t];
        for (u = lo; u < hi; ++u) {
            long e = v->near ? (long)v->near[u] : u;
            int a = v->cand_i[e], b = v->cand_j[e];
            if (fill) {
                v->nb_pos[h[a]++] = (int)u;
                v->nb_pos[h[b]++] = (int)u;
            } else {
                h[a]++;
                h[b]++;
            }
        }
    }
    if (fill)
        cpu_nb_free(c);
    else
        cpu_hist_sum(c->nbhist, nt, n, v->nb_end);
    return 0;
}

/* The pushes of flagged items [lo, hi) (PUSH_HIT): each is a chain of
 * reads at random places (its item's candidate, the candidate's spheres
 * and mark, their positions; 256 000 spheres: 2 600 a step).  The links
 * of later items are asked for in stages, each once the link before it
 * has come: the candidate 16 items on, its spheres and mark 8 on, their
 * positions 4 on: 0.013-0.015 -> 0.009 s of 100 steps on 1 thread (the
 * radius loads, half of the 0.025 s before, are gone: the push takes
 * the one-component radius, rc_k_md_push_pair_at).  Hints only: each
 * item is the body's (rc_k_md_push_hit). */
static void cpu_push_hits(const rc_k_md *v, long lo, long hi)
{
    long u;
    for (u = lo; u < hi; ++u) {
        long t;
        if (u + 16 < hi && v->near && (t = v->hit[u + 16]) < v->nscreen)
            __builtin_prefetch(v->near + t + v->near_off);
        if (u + 8 < hi && (t = v->hit[u + 8]) < v->nscreen) {
            long e = rc_k_md_screened(v, t);
            __builtin_prefetch(v->cand_i + e);
            __builtin_prefetch(v->cand_j + e);
            __builtin_prefetch(v->cand_m + e, 1);
        }
        if (u + 4 < hi && (t = v->hit[u + 4]) < v->nscreen) {
            long e = rc_k_md_screened(v, t);
            int a = v->cand_i[e], b = v->cand_j[e];
            __builtin_prefetch(v->q + (long)a * v->dim);
            __builtin_prefetch(v->q + (long)b * v->dim);
            if (!(v->uni_radius > 0.0)) { /* else no radius is read */
                __builtin_prefetch(v->radius + a);
                __builtin_prefetch(v->radius + b);
            }
        }
        rc_k_md_push_hit(v, u);
    }
}

/* Items [lo, hi) of kernel k on one thread: the body's loop, or for the
 * first scan of exact collisions its lanes (without predictions) or its
 * list of the items tested (with them, in AVX-512 lanes where c->avx512),
 * for GVI's first scan its walk in blocks (cand_lanes.c), or the pushes'
 * pipeline. */
static void cpu_items(const rc_dmd_cpu *c, rc_dmd_kernel k, const rc_k_md *v,
                      long lo, long hi)
{
    if (k == RC_DMD_PUSH_HIT)
        cpu_push_hits(v, lo, hi);
    else if (k == RC_DMD_X_SCREEN_PAIR && v->at_start && !v->pred_t)
        rc_dmd_cpu_first_scan(v, lo, hi);
    else if (k == RC_DMD_X_SCREEN_PAIR && v->at_start && v->reach_skip)
        rc_dmd_cpu_first_scan_pred(v, lo, hi, c->avx512);
    else if (k == RC_DMD_SCREEN_PAIR && v->at_start)
        rc_dmd_cpu_gvi_first_scan(v, lo, hi);
    else
        rc_dmd_bodies(k, v, lo, hi);
}

/* The cells' counts on one thread: plain adds (rc_k_md_cell_count's
 * are atomic). */
RC_CPU_INLINE void cpu_cell_count(const rc_k_md *v, long count)
{
    long i;
    for (i = 0; i < count; ++i)
        v->cell_start[rc_k_md_cell_of(v, i)]++;
}

/* Items [0, count) of kernel k in one block a thread (rc_dmd_bodies: the
 * dimension a constant), threads for a grain of `grain` items. */
static void cpu_bodies_in_blocks(const rc_dmd_cpu *c, rc_dmd_kernel k,
                                 const rc_k_md *v, long count, long grain)
{
    int nt = cpu_nt(c, count, grain);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t = cpu_thread_num();
        rc_dmd_bodies(k, v, count * t / nt, count * (t + 1) / nt);
    }
}

static int cpu_run(void *ctx, rc_dmd_kernel k, const rc_k_md *v, long count)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    long i;
    int nt;
    if (cpu_injected(c, rc_dmd_kernel_name(k)))
        return -1;
    if (c->check && rc_dmd_kernel_islands(k))
        return cpu_island_checked(c, k, v, count);
    if (c->order != RC_DMD_CPU_FORWARD) {
        for (i = 0; i < count; ++i)
            rc_dmd_body(k, v, cpu_item(c->order, i, count));
        return 0;
    }
    if (rc_dmd_kernel_islands(k) || k == RC_DMD_X_REACH ||
        k == RC_DMD_X_END) {
        /* islands: in one block a thread.  They come ordered by label,
         * their smallest sphere, so a block's spheres are mostly in the
         * block of spheres the same thread moves in the passes over the
         * spheres (below), and their states are in its cache; handed out
         * 16 at a time instead, the islands took 0.072-0.075 s against
         * 0.060-0.063 (256 000 spheres, 100 steps, 2 threads).  Their
         * costs are uneven, but a round has thousands.  The islands'
         * reaches and their ends, an island an item too, take the same
         * blocks (with the grain of the passes below, 2048 items a
         * thread, the ends of a step's 2 500 islands ran on one thread:
         * 0.043 s on 2 threads against 0.041 on 1).  A block is one call
         * of rc_dmd_bodies, the dimension a constant (item by item
         * through rc_dmd_body, 256 000 spheres at eta 0.45, 200 steps, 1
         * thread: islands 0.25-0.27 s against 0.24-0.25, their ends
         * 0.12-0.13 against 0.11, their reaches 0.054-0.073 against
         * 0.042) */
        cpu_bodies_in_blocks(c, k, v, count, 64);
        return 0;
    }
    if (k == RC_DMD_PUSH_HIT) {
        /* one block a thread of items that cost alike, 35-60 ns each:
         * the grain of the islands' (2 600 a step ran on one thread with
         * the passes' grain below) */
        nt = cpu_nt(c, count, 64);
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int t = cpu_thread_num();
            cpu_push_hits(v, count * t / nt, count * (t + 1) / nt);
        }
        return 0;
    }
    if (k == RC_DMD_UF_HOOK || k == RC_DMD_CON_KEY || k == RC_DMD_UF_RESET ||
        k == RC_DMD_FINITE_CON || k == RC_DMD_X_UNKEEP) {
        /* passes over A's contacts that read or write their spheres at
         * random places, 10-20 ns an item: a round's few thousand ran on
         * one thread with the grain below.  One block a thread (a hook's
         * compare-and-swap makes each tree's root its smallest index in
         * any order; two contacts of one sphere reset or unkeep it with
         * the same value) */
        cpu_bodies_in_blocks(c, k, v, count, 512);
        return 0;
    }
    /* one block of items per thread, each a loop of the body alone */
    nt = cpu_nt(c, count, 2048);
    if (k == RC_DMD_PAIR_COUNT || k == RC_DMD_PAIR_WRITE) {
        if (cpu_pairs(c, v, count, k == RC_DMD_PAIR_WRITE, nt) == 0)
            return 0;
        c->pthreads = 0; /* the two passes of the GPU's form */
    }
    if ((k == RC_DMD_NB_COUNT || k == RC_DMD_NB_FILL) &&
        cpu_nb(c, v, count, k == RC_DMD_NB_FILL, nt) == 0)
        return 0;
    if (k == RC_DMD_CAND_INFO || k == RC_DMD_X_CAND_INFO_PRED) {
        /* one block a thread: the items cost alike */
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int t = cpu_thread_num();
            rc_dmd_cpu_cand_info(v, count * t / nt, count * (t + 1) / nt,
                                 k == RC_DMD_X_CAND_INFO_PRED);
        }
        return 0;
    }
    if (nt == 1) {
        /* the cells' counts and cursors without the atomic adds that
         * threads need (rc_k_md_cell_fill: a locked add a sphere,
         * cell_fill 0.011 -> 0.005 s, 256 000 spheres, 11 builds;
         * cell_count 0.016-0.017 -> 0.013 s); on one thread the same
         * order */
        if (k == RC_DMD_CELL_FILL && c->order == RC_DMD_CPU_FORWARD) {
            for (i = 0; i < count; ++i)
                v->cell_idx[v->cell_cur[v->cell_of[i]]++] = (int)i;
            return 0;
        }
        if (k == RC_DMD_CELL_COUNT) {
            RC_DMD_CPU_BY_DIM(v, cpu_cell_count, count);
            return 0;
        }
        cpu_items(c, k, v, 0, count);
        return 0;
    }
    if (count == v->n) {
        /* a pass over the spheres: items of even cost, and each thread
         * the same block of spheres in every such pass, so that a
         * sphere's state stays in the cache of the core that last wrote
         * it (with the chunks below handed out anew at each pass, on 2
         * threads the motion pass took 0.24 s, as on 1, and the finish
         * 0.33 s against 0.07 on 1, both read and written across the
         * cores; 0.13 and 0.23 s in blocks: 256 000 spheres, 100 steps,
         * in this VM's slow phase, see the README) */
#pragma omp parallel num_threads(nt)
        {
            int t = cpu_thread_num();
            rc_dmd_bodies(k, v, count * t / nt, count * (t + 1) / nt);
        }
        return 0;
    }
    {
        /* eight chunks a thread, handed out in turn: items cost unevenly
         * along some lists (the screen's candidates come in gap order,
         * and the near ones take the impact-time test), and with one
         * block a thread the other waited for the slower at the end
         * (perf, 256 000 spheres, 2 threads: 5.8 % of the samples in
         * libgomp's wait).  Every item writes only its own outputs, so
         * who runs it changes nothing. */
        long chunk = count / (8L * nt), nch, ch;
        if (chunk < 2048)
            chunk = 2048;
        nch = (count + chunk - 1) / chunk;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (ch = 0; ch < nch; ++ch)
            cpu_items(c, k, v, ch * chunk,
                      ch * chunk + chunk < count ? ch * chunk + chunk
                                                 : count);
    }
    return 0;
}

/* Room for nt threads' block sums (cpu_scan, cpu_select). */
static int cpu_bsum_room(rc_dmd_cpu *c, int nt)
{
    if (nt > c->bcap) {
        long *nb = (long *)realloc(c->bsum, sizeof(long) * (size_t)(nt + 1));
        if (!nb)
            return cpu_fail(c, "out of memory for a scan");
        c->bsum = nb;
        c->bcap = nt;
    }
    return 0;
}

/* The blocks' sums into their offsets, in order; returns the total (one
 * thread, the others waiting: called under omp single). */
static long cpu_bsum_offsets(rc_dmd_cpu *c, int nt)
{
    long s = 0;
    int b;
    for (b = 0; b < nt; ++b) {
        long u = c->bsum[b];
        c->bsum[b] = s;
        s += u;
    }
    return s;
}

/* Exclusive scan in per-thread blocks: each block's sum, the blocks'
 * offsets in order, then each block's scan from its offset (integers:
 * the same result on any thread count). */
static int cpu_scan(void *ctx, long *x, long n, long *total)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    long s = 0;
    int nt;
    if (cpu_injected(c, "scan"))
        return -1;
    nt = cpu_nt(c, n, 1L << 15);
    if (cpu_bsum_room(c, nt))
        return -1;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t = cpu_thread_num();
        long i, lo = n * t / nt, hi = n * (t + 1) / nt, part = 0;
        for (i = lo; i < hi; ++i)
            part += x[i];
        c->bsum[t] = part;
#pragma omp barrier
#pragma omp single
        s = cpu_bsum_offsets(c, nt);
        part = c->bsum[t];
        for (i = lo; i < hi; ++i) {
            long u = x[i];
            x[i] = part;
            part += u;
        }
    }
    x[n] = s;
    *total = s;
    return 0;
}

/* The flagged positions of flag[0, lo .. hi) into hit from hit[0]:
 * eight flags at a time where they are all 0 (the common case: a step's
 * first scan flags about one item in a thousand).  Returns how many. */
static long cpu_select_block(const unsigned char *flag, long lo, long hi,
                             int *hit)
{
    long t = lo, m = 0;
    while (t < hi) {
        if (t + 8 <= hi) {
            uint64_t w;
            memcpy(&w, flag + t, sizeof w);
            if (w == 0) {
                t += 8;
                continue;
            }
        }
        if (flag[t])
            hit[m++] = (int)t;
        ++t;
    }
    return m;
}

static long cpu_count_block(const unsigned char *flag, long lo, long hi)
{
    long t, m = 0;
    for (t = lo; t < hi; ++t)
        m += flag[t] != 0;
    return m;
}

/* The flagged positions in order (rc_dmd_ops.select): each thread's
 * block counted, the blocks' offsets in order, then each block's
 * positions from its offset (the same list on any thread count). */
static int cpu_select(void *ctx, const unsigned char *flag, long n, int *hit,
                      long *total)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    long s = 0;
    int nt;
    if (cpu_injected(c, "select"))
        return -1;
    if (n > INT_MAX) /* positions are ints, as the GPU's scan counts */
        return cpu_fail(c, "selection of %ld items exceeds int", n);
    nt = cpu_nt(c, n, 1L << 16);
    if (nt == 1) {
        *total = cpu_select_block(flag, 0, n, hit);
        return 0;
    }
    if (cpu_bsum_room(c, nt))
        return -1;
#pragma omp parallel num_threads(nt)
    {
        int t = cpu_thread_num();
        long lo = n * t / nt, hi = n * (t + 1) / nt;
        c->bsum[t] = cpu_count_block(flag, lo, hi);
#pragma omp barrier
#pragma omp single
        s = cpu_bsum_offsets(c, nt);
        cpu_select_block(flag, lo, hi, hit + c->bsum[t]);
    }
    *total = s;
    return 0;
}

/* Room for `need` bucket counts of the sorts (c->count). */
static int cpu_sort_counts(rc_dmd_cpu *c, long need)
{
    if (need > c->ccap) {
        free(c->count);
        c->count = (long *)malloc(sizeof(long) * (size_t)need);
        c->ccap = c->count ? need : 0;
        if (!c->count)
            return cpu_fail(c, "out of memory for a sort");
    }
    return 0;
}

/* cpu_sort_by_key's keys of more than one digit (the closing rounds'
 * list, the contacts by island): a pass a digit, each counting per
 * thread over a block of the input, the blocks' cursors in order within
 * each bucket, and each thread placing its block (stable: the one order
 * on any thread count); the passes trade the arrays with the scratch
 * instead of copying back.  Serial, the closing lists' sorts were 0.066
 * of 1.47 s on 2 threads (256 000 spheres, eta 0.45, 200 steps).  The
 * scratch (tkey, tval) is n long; c->count nt digits' counts. */
static int cpu_sort_digits(rc_dmd_cpu *c, int *key, int *val, long n,
                           int bits, int digit, long keep)
{
    long nb = 1L << digit, mask = nb - 1;
    int nt = cpu_nt(c, n, 1L << 12), shift;
    int *ka = key, *va = val, *kb = c->tkey, *vb = c->tval, *sw;
    if (cpu_sort_counts(c, (long)nt * nb))
        return -1;
    for (shift = 0; shift < bits; shift += digit) {
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int u = cpu_thread_num(), t;
            long x, b, lo = n * u / nt, hi = n * (u + 1) / nt;
            long *cnt = c->count + (long)u * nb;
            memset(cnt, 0, sizeof(long) * (size_t)nb);
            for (x = lo; x < hi; ++x)
                cnt[(ka[x] >> shift) & mask]++;
#pragma omp barrier
#pragma omp single
            {
                long s = 0;
                for (b = 0; b < nb; ++b)
                    for (t = 0; t < nt; ++t) {
                        long k = c->count[(long)t * nb + b];
                        c->count[(long)t * nb + b] = s;
                        s += k;
                    }
            }
            for (x = lo; x < hi; ++x) {
                long slot = cnt[(ka[x] >> shift) & mask]++;
                kb[slot] = ka[x];
                vb[slot] = va[x];
            }
        }
        sw = ka, ka = kb, kb = sw;
        sw = va, va = vb, vb = sw;
    }
    if (ka != key) {
        memcpy(key, ka, sizeof(int) * (size_t)n);
        memcpy(val, va, sizeof(int) * (size_t)n);
    }
    if (n > keep) { /* a long sort's scratch goes (cpu_sort_by_key) */
        free(c->tkey);
        free(c->tval);
        c->tkey = c->tval = NULL;
        c->tcap = 0;
    }
    return 0;
}

/* Stable counting sort by key (the GPU's radix sort is stable too, so
 * both give the one order: by key, then by input position). */
/* Stable sort of (key, val) by key in [0, 2^bits): least-significant-
 * digit radix sort, digits of up to 11 bits (2048 buckets), so that a
 * short list with wide keys (the contacts of a round, keyed by a sphere
 * index) costs passes over the list, not over 2^bits buckets.  Stable,
 * so the result is the single counting sort's (and CUB's). */
static int cpu_sort_by_key(void *ctx, int *key, int *val, long n, int bits)
{
    /* DIGIT: see above; KEEP: sorts up to this many items keep their
     * scratch for the next (the contacts of every island round); a longer
     * one (the candidates by gap, at a build) frees it, as cpu_pairs its
     * pairs */
    enum { DIGIT = 11, KEEP = 1 << 16 };
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    long i, nb = 1L << (bits < DIGIT ? bits : DIGIT);
    int one = bits <= DIGIT;
    if (cpu_injected(c, "sort_by_key"))
        return -1;
    for (i = 0; i < n; ++i)
        if (key[i] < 0 || (bits < 31 && key[i] >= (1L << bits)))
            return cpu_fail(c, "sort key %d out of range", key[i]);
    if (one) {
        /* one digit over the identity (val[i] = i: the candidates by gap,
         * the contacts by island, as their kernels set them): the sorted
         * values follow from the keys alone and go straight into val, with
         * no scratch of n ints (4 bytes a candidate beside the engine's
         * arrays at a build, its peak); the same order.  Each thread
         * counts and places a block of the input, the blocks in order
         * within each bucket (its cursors start after the earlier
         * threads'): stable, the one order on any thread count */
        for (i = 0; i < n && val[i] == (int)i; ++i)
            ;
        if (i == n) {
            long s = 0, b;
            int t, nt = cpu_nt(c, n, 1L << 15);
            if (cpu_sort_counts(c, (long)nt * nb))
                return -1;
            memset(c->count, 0, sizeof(long) * (size_t)(nt * nb));
#pragma omp parallel num_threads(nt) if (nt > 1)
            {
                int u = cpu_thread_num();
                long x, lo = n * u / nt, hi = n * (u + 1) / nt;
                long *cnt = c->count + (long)u * nb;
                for (x = lo; x < hi; ++x)
                    cnt[key[x]]++;
#pragma omp barrier
#pragma omp single
                for (b = 0; b < nb; ++b)
                    for (t = 0; t < nt; ++t) {
                        long k = c->count[(long)t * nb + b];
                        c->count[(long)t * nb + b] = s;
                        s += k;
                    }
                for (x = lo; x < hi; ++x)
                    val[cnt[key[x]]++] = (int)x;
            }
            /* bucket b now ends at the last thread's cursor: its keys
             * are b (each thread a range of buckets) */
#pragma omp parallel for num_threads(nt) if (nt > 1)
            for (b = 0; b < nb; ++b) {
                long at = b > 0 ? c->count[(long)(nt - 1) * nb + b - 1] : 0,
                     end = c->count[(long)(nt - 1) * nb + b];
                for (; at < end; ++at)
                    key[at] = (int)b;
            }
            return 0;
        }
    }
    /* any other sort (wider keys, or one digit over other values, which
     * the engine's kernels do not make): through the scratch */
    if (n > c->tcap) {
        free(c->tkey);
        free(c->tval);
        c->tkey = (int *)malloc(sizeof(int) * (size_t)n);
        c->tval = (int *)malloc(sizeof(int) * (size_t)n);
        c->tcap = c->tkey && c->tval ? n : 0;
        if (!c->tcap)
            return cpu_fail(c, "out of memory for a sort");
    }
    return cpu_sort_digits(c, key, val, n, bits, DIGIT, KEEP);
}

/* Room for `need` partial results of a reduction (cpu_reduce,
 * cpu_run_max, cpu_obs_sums). */
static int cpu_partial_room(rc_dmd_cpu *c, long need)
{
    if (need > c->pcap) {
        double *np =
            (double *)realloc(c->partial, sizeof(double) * (size_t)need);
        if (!np)
            return cpu_fail(c, "out of memory for a reduction");
        c->partial = np;
        c->pcap = need;
    }
    return 0;
}

/* The chunked sum (or max) in rc_k_reduce's association, the GPU's: the
 * chunks in parallel, then the tree over their results in order. */
static int cpu_reduce(void *ctx, const double *x, long n, int is_max,
                      int slot)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    long ch, nc = (n + RC_K_SUM_CHUNK - 1) / RC_K_SUM_CHUNK;
    rc_k_tree tr;
    int nt;
    if (cpu_injected(c, "reduce"))
        return -1;
    if (slot < 0 || slot >= RC_DMD_SLOTS)
        return cpu_fail(c, "reduction slot %d out of range", slot);
    nt = cpu_nt(c, nc, 16);
    if (nt == 1) {
        c->slot[slot] = rc_k_reduce(x, n, is_max);
        return 0;
    }
    if (cpu_partial_room(c, nc))
        return -1;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (ch = 0; ch < nc; ++ch)
        c->partial[ch] = is_max ? rc_k_max_chunk(x, n, ch)
                                : rc_k_sum_chunk(x, n, ch);
    rc_k_tree_init(&tr, is_max);
    for (ch = 0; ch < nc; ++ch)
        rc_k_tree_push(&tr, c->partial[ch]);
    c->slot[slot] = rc_k_tree_total(&tr);
    return 0;
}

/* A motion kernel and the max of its values (rc_dmd_ops.run_max): on
 * the forward order, one pass a thread over its block of spheres (the
 * blocks of cpu_run's passes over the spheres) keeping the maxes as it
 * goes, so that no value is written to red and read back by a reduction
 * (0.02 s of the motion pass and 0.02 s of reductions of 100 steps of
 * 256 000 spheres); the threads' maxes are then taken in order, the same
 * bits as the chunks' tree since no value is NaN.  The other orders (a
 * test's, item by item) run and reduce. */
static int cpu_run_max(void *ctx, rc_dmd_kernel k, const rc_k_md *v,
                       long count, int slot0)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    int nval = rc_dmd_kernel_vals(k), nt, t, j;
    if (nval == 0 || slot0 < 0 || slot0 + nval > RC_DMD_SLOTS)
        return cpu_fail(c, "run_max of %s into slot %d", rc_dmd_kernel_name(k),
                        slot0);
    if (c->order != RC_DMD_CPU_FORWARD) {
        if (cpu_run(ctx, k, v, count) != 0)
            return -1;
        for (j = 0; j < nval; ++j)
            if (cpu_reduce(ctx, v->red + (long)j * count, count, 1,
                           slot0 + j) != 0)
                return -1;
        return 0;
    }
    if (cpu_injected(c, rc_dmd_kernel_name(k)))
        return -1;
    nt = count > 0 ? cpu_nt(c, count, 2048) : 1;
    if (cpu_partial_room(c, 2L * nt))
        return -1;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int u = cpu_thread_num();
        if (k == RC_DMD_X_MOTION && rc_dmd_cpu_x_motion_fits(v))
            rc_dmd_cpu_x_motion(v, count * u / nt, count * (u + 1) / nt,
                                c->partial + 2 * u);
        else
            rc_dmd_max_bodies(k, v, count * u / nt, count * (u + 1) / nt,
                              c->partial + 2 * u);
    }
    for (j = 0; j < nval; ++j) {
        double m = 0.0;
        for (t = 0; t < nt; ++t)
            m = rc_fmax(m, c->partial[2 * t + j]);
        c->slot[slot0 + j] = m;
    }
    return 0;
}

/* The observables' sums (rc_dmd_ops.obs_sums): each chunk's sums of
 * every term in one visit (its spheres read from cache for the terms
 * after the first), then each term's tree over the chunks in order, as
 * cpu_reduce's: a row's five or six passes over the spheres, each
 * writing red and reduced on its own, were 0.05 s of 100 steps of 256 000
 * spheres with a row every 20. */
static int cpu_obs_sums(void *ctx, const rc_k_md *v, const int *whats, int nw,
                        int slot0)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)ctx;
    long ch, nc = ((long)v->n + RC_K_SUM_CHUNK - 1) / RC_K_SUM_CHUNK;
    int nt, w;
    if (cpu_injected(c, "observe"))
        return -1;
    if (nw < 1 || slot0 < 0 || slot0 + nw > RC_DMD_SLOTS)
        return cpu_fail(c, "observable sums of %d terms into slot %d", nw,
                        slot0);
    if (cpu_partial_room(c, nc * nw))
        return -1;
    nt = cpu_nt(c, nc, 16);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (ch = 0; ch < nc; ++ch)
        rc_k_md_obs_chunk(v, ch, whats, nw, c->partial + ch * nw);
    for (w = 0; w < nw; ++w) {
        rc_k_tree tr;
        rc_k_tree_init(&tr, 0);
        for (ch = 0; ch < nc; ++ch)
            rc_k_tree_push(&tr, c->partial[ch * nw + w]);
        c->slot[slot0 + w] = rc_k_tree_total(&tr);
    }
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
    free(c->partial);
    free(c->bsum);
    if (c->pbuf) {
        int t;
        for (t = 0; t < c->pthreads_cap; ++t)
            free(c->pbuf[t]);
    }
    cpu_half_free(c);
    cpu_nb_free(c);
    free(c->soa);
    free(c->pbuf);
    free(c->pcapb);
    free(c);
}

static const rc_dmd_ops rc_dmd_cpu_ops = {
    "cpu",      1,          cpu_alloc,  cpu_release,    cpu_put,  cpu_get,
    cpu_copy,   cpu_zero,   cpu_run,        cpu_scan, cpu_select,
    cpu_sort_by_key,
    cpu_reduce, cpu_run_max, cpu_obs_sums, cpu_fetch,  cpu_nnls_batch,
    cpu_error, cpu_destroy};

void rc_dmd_cpu_threads(void *ctx, int threads)
{
    ((rc_dmd_cpu *)ctx)->threads = threads;
}

void rc_dmd_cpu_check(void *ctx, int on)
{
    ((rc_dmd_cpu *)ctx)->check = on;
}

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

long rc_dmd_cpu_live_bytes(const void *ctx)
{
    return ((const rc_dmd_cpu *)ctx)->live;
}

rc_status rc_dmd_cpu_launcher(const rc_dmd_ops **ops, void **ctx)
{
    rc_dmd_cpu *c = (rc_dmd_cpu *)calloc(1, sizeof *c);
    if (!c)
        return RC_ERR_NOMEM;
    c->fail_at = -1;
    c->avx512 = rc_avx512_lanes();
    *ops = &rc_dmd_cpu_ops;
    *ctx = c;
    return RC_OK;
}

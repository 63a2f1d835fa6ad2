/* Broadphase of large systems (DESIGN §6): cell lists, pair lists and
 * islands.  See cells.h for the contract.
 *
 * Determinism: each pair is found once, from the smaller of its two
 * cells, and filed under its smaller index; the per-particle counts are
 * sums (order-free), so every particle's slots are fixed before the fill,
 * and each particle's short list is sorted after it.  The output is
 * therefore the canonical (i, j) order whatever the thread count or the
 * schedule did.
 *
 * Rounding: a pair is taken when the squared minimum-image distance,
 * summed over axes in axis order, is below cutoff^2; the cell list and
 * the brute-force reference share that one test (rc_k_pair_close in
 * src/kernels/rc_md.h, also the device engine's), so they agree bit for
 * bit.  A particle's cell is floor(q / edge), monotone in
 * q; with cutoff == edge to the last bit, a pair whose distance is within
 * a few ulps of the cutoff can fall two cells apart and be missed (the
 * decision "< cutoff" is at rounding level there anyway). */
#include "cells.h"

#include "../../kernels/rc_md.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Below this many particles the pair search runs serially: thread start
 * costs more than the whole search. */
#define RC_PAIRS_SERIAL_N 512
/* Work blocks (runs of cells) of the pair search: 1024 balance 16
 * threads well at any density. */
#define RC_PAIRS_BLOCKS 1024
/* Per-particle lists up to this length are insertion-sorted; longer ones
 * (dense cells) get heapsort so a crowded cell cannot go quadratic. */
#define RC_PAIRS_INSERTION 32
/* Candidates of one cell (its own particles and those of its larger
 * neighbours) gathered into a local array when there are at most this
 * many (6 KiB of stack): ~20 at the usual density. */
#define RC_PAIRS_GATHER 192

/* ------------------------------------------------------------ pair lists */

/* Grow p to hold at least need pairs.  Cost: O(n) copy when it grows,
 * O(1) otherwise.  On failure p keeps its contents and capacity. */
static int pairs_reserve(rc_pairs *p, long need)
{
    int *ni, *nj;
    long cap;
    size_t bytes;
    if (need <= p->cap)
        return 0;
    /* 1/8 headroom: the count drifts a little from step to step, and the
     * arrays should stop moving after the first few steps. */
    cap = need + need / 8 + 64;
    if ((unsigned long)cap > (size_t)-1 / sizeof(int))
        return -1;
    bytes = (size_t)cap * sizeof(int);
    ni = (int *)realloc(p->i, bytes);
    if (!ni)
        return -1;
    p->i = ni;
    nj = (int *)realloc(p->j, bytes);
    if (!nj)
        return -1; /* p->i is larger than p->cap says: harmless */
    p->j = nj;
    p->cap = cap;
    return 0;
}

/* Cost: amortised O(1) (geometric growth). */
int rc_pairs_push(rc_pairs *p, int i, int j)
{
    if (!p || p->n < 0)
        return -1;
    if (p->n >= p->cap && pairs_reserve(p, p->cap < 32 ? 64 : 2 * p->cap))
        return -1;
    p->i[p->n] = i;
    p->j[p->n] = j;
    ++p->n;
    return 0;
}

void rc_pairs_free(rc_pairs *p)
{
    if (!p)
        return;
    free(p->i);
    free(p->j);
    p->i = p->j = NULL;
    p->n = p->cap = 0;
}

static int box_ok(const rc_k_box *b)
{
    int k;
    if (!b || (b->dim != 2 && b->dim != 3))
        return 0;
    for (k = 0; k < b->dim; ++k)
        if (!(b->L[k] > 0.0) || !rc_isfinite(b->L[k]))
            return 0;
    return 1;
}

/* Cost: n (n - 1) / 2 pair tests; the reference, not for production. No
 * L/2 restriction: the minimum-image definition is well posed for any
 * cutoff, and this path is what the cell list is checked against. */
int rc_pairs_brute(const rc_k_box *b, const double *q, int n, double cutoff,
                   rc_pairs *out)
{
    double cut2 = cutoff * cutoff, lim[3];
    int i, j, d;
    if (!out)
        return -1;
    out->n = 0;
    if (!box_ok(b) || n < 0 || (n > 0 && !q) || !(cutoff >= 0.0) ||
        !rc_isfinite(cutoff))
        return -1;
    d = b->dim;
    rc_k_pair_limits(b, lim);
    for (i = 0; i < n; ++i)
        for (j = i + 1; j < n; ++j)
            if (rc_k_pair_close(b, lim, q + (size_t)i * d, q + (size_t)j * d,
                           cut2, d) &&
                rc_pairs_push(out, i, j))
                return -1;
    return 0;
}

/* ------------------------------------------------------------ cell lists */

static int grid_axes(const rc_k_box *b, const double *min_cell,
                     int nc_out[3], double edge[3], long *ncell_out)
{
    int k, d;
    long ncell = 1;
    if (!box_ok(b))
        return -1;
    d = b->dim;
    for (k = 0; k < d; ++k)
        if (!(min_cell[k] > 0.0))
            return -1;
    for (k = 0; k < 3; ++k) {
        int nc = 1;
        if (k < d) {
            double r = rc_floor(b->L[k] / min_cell[k]);
            /* Refuse grids whose cell count does not fit an int (the
             * start array would not fit in memory either). */
            if (!(r < (double)INT_MAX))
                return -1;
            nc = r < 1.0 ? 1 : (int)r;
            /* L / min_cell may round up to an integer: keep the promise
             * edge >= min_cell in the arithmetic the pair search checks. */
            while (nc > 1 && b->L[k] / nc < min_cell[k])
                --nc;
            if (ncell > (INT_MAX - 1) / nc)
                return -1;
            ncell *= nc;
        }
        nc_out[k] = nc;
        edge[k] = k < d ? b->L[k] / nc : 0.0;
    }
    *ncell_out = ncell;
    return 0;
}

int rc_cells_grid(const rc_k_box *b, double min_cell, int nc_out[3],
                  double edge[3], long *ncell_out)
{
    double m[3];
    m[0] = m[1] = m[2] = min_cell;
    return grid_axes(b, m, nc_out, edge, ncell_out);
}

int rc_cells_build(rc_cells *c, const rc_k_box *b, const double *q, int n,
                   double min_cell)
{
    double m[3];
    m[0] = m[1] = m[2] = min_cell;
    return rc_cells_build_axes(c, b, q, n, m);
}

/* Cost: O(n + ncell) time, two passes over n; memory n + n + ncell + 1
 * ints, reallocated only when n or ncell exceeds what c already holds. */
int rc_cells_build_axes(rc_cells *c, const rc_k_box *b, const double *q,
                        int n, const double *min_cell)
{
    int k, i, d;
    long ncell = 1;
    int *start, *index, *cell_of;
    if (!c || !box_ok(b) || n < 0 || (n > 0 && !q) || !min_cell)
        return -1;
    d = b->dim;
    if (grid_axes(b, min_cell, c->nc, c->edge, &ncell) != 0)
        return -1;
    c->dim = d;
    c->ncell = (int)ncell;
    c->n = 0;

    if (n > c->cap_n) {
        int *ni = (int *)realloc(c->index, (size_t)n * sizeof(int));
        if (!ni)
            return -1;
        c->index = ni;
        ni = (int *)realloc(c->cell_of, (size_t)n * sizeof(int));
        if (!ni)
            return -1; /* index larger than cap_n says: harmless */
        c->cell_of = ni;
        c->cap_n = n;
    }
    if (ncell + 1 > c->cap_cell) {
        int *ns = (int *)realloc(c->start, (size_t)(ncell + 1) * sizeof(int));
        if (!ns)
            return -1;
        c->start = ns;
        c->cap_cell = (int)ncell + 1;
    }
    start = c->start;
    index = c->index;
    cell_of = c->cell_of;

    memset(start, 0, (size_t)(ncell + 1) * sizeof(int));
    for (i = 0; i < n; ++i) {
        const double *qi = q + (size_t)i * d;
        int cell = 0;
        for (k = d - 1; k >= 0; --k)
            cell = cell * c->nc[k] +
                   rc_k_cell_coord(qi[k] / c->edge[k], c->nc[k], b->periodic[k]);
        cell_of[i] = cell;
        ++start[cell];
    }
    /* Inclusive prefix sum: start[cell] = end of cell.  Filling from the
     * last particle backwards then leaves start[cell] = its beginning and
     * each cell's indices ascending, with no cursor array. */
    for (i = 1; i < (int)ncell; ++i)
        start[i] += start[i - 1];
    start[ncell] = n;
    for (i = n - 1; i >= 0; --i)
        index[--start[cell_of[i]]] = i;
    c->n = n;
    return 0;
}

void rc_cells_free(rc_cells *c)
{
    if (!c)
        return;
    free(c->start);
    free(c->index);
    free(c->cell_of);
    c->start = c->index = c->cell_of = NULL;
    c->n = c->ncell = 0;
    c->cap_n = c->cap_cell = 0;
}

/* --------------------------------------------------------- pair search */

/* Everything the search reads, by value into each thread. */
typedef struct pair_ctx {
    const rc_cells *c;
    const rc_k_box *b;
    const double *q;
    double cut2, lim[3];
} pair_ctx;

/* The same neighbours on axis 0 as runs of consecutive cells [lo[r],
 * hi[r]]: cells adjacent along x are adjacent in the cell order, so their
 * particles are one slice of c->index, and a row of three cells is one
 * loop, not three (a periodic wrap splits it in two).  Returns the run
 * count. */
static inline int axis0_runs(int s, int nc, int periodic, int *lo, int *hi)
{
    if (periodic && nc >= 3 && (s == 0 || s == nc - 1)) {
        lo[0] = s == 0 ? 0 : nc - 2;
        hi[0] = s == 0 ? 1 : nc - 1;
        lo[1] = hi[1] = s == 0 ? nc - 1 : 0;
        return 2;
    }
    /* Walls, an interior cell, or nc < 3 (where clamping gives the whole
     * row, once). */
    lo[0] = s > 0 ? s - 1 : 0;
    hi[0] = s < nc - 1 ? s + 1 : nc - 1;
    return 1;
}

/* The slices [p0[r], p1[r]) of c->index holding the particles of the
 * neighbour cells of `cell` with a larger cell index (at most 9 rows of
 * at most 2 runs).  The neighbour relation is symmetric and each
 * neighbour is listed once, so taking only larger cells visits every
 * pair of neighbouring cells exactly once: each pair is tested once.
 * Returns the slice count. */
static int neighbour_slices(const rc_cells *c, const rc_k_box *b, int cell,
                            int *p0, int *p1)
{
    int nb1[3], nb2[3], lo[2], hi[2], cnt1, cnt2, nrun, s0, s1, s2;
    int a, e, r, m = 0, self = cell;
    s0 = cell % c->nc[0];
    cell /= c->nc[0];
    s1 = cell % c->nc[1];
    s2 = cell / c->nc[1];
    nrun = axis0_runs(s0, c->nc[0], b->periodic[0], lo, hi);
    cnt1 = rc_k_axis_neighbours(s1, c->nc[1], b->periodic[1], c->nc[0], nb1);
    if (c->dim == 3)
        cnt2 = rc_k_axis_neighbours(s2, c->nc[2], b->periodic[2],
                               c->nc[0] * c->nc[1], nb2);
    else {
        cnt2 = 1;
        nb2[0] = 0;
    }
    for (e = 0; e < cnt2; ++e)
        for (a = 0; a < cnt1; ++a)
            for (r = 0; r < nrun; ++r) {
                int first = nb2[e] + nb1[a] + lo[r];
                int last = nb2[e] + nb1[a] + hi[r];
                if (first <= self)
                    first = self + 1;
                if (first > last)
                    continue;
                p0[m] = c->start[first];
                p1[m] = c->start[last + 1];
                m += p1[m] > p0[m];
            }
    return m;
}

/* File the pair (i, j) found close: count it (pass 1) or write it at
 * its owner's cursor (pass 2).  Returns 1 on an overflow. */
static inline int file_pair(int i, int j, int *cnt, int *cur,
                            const int *lim_of, int *jdst)
{
    int own = i < j ? i : j, other = i < j ? j : i;
    if (cnt) {
#pragma omp atomic update
        cnt[own] += 1;
        return 0;
    } else {
        int slot;
#pragma omp atomic capture
        slot = cur[own]++;
        if (slot >= lim_of[own + 1])
            return 1;
        jdst[slot] = other;
        return 0;
    }
}

/* Item: the particle in slot a of c->index, against the later slots of
 * its own cell and the slices of the larger neighbour cells.  A pair
 * closer than the cutoff belongs to its smaller index: pass 1 counts it
 * there (count[owner] += 1), pass 2 writes the larger index at the
 * owner's cursor (jdst[cur[owner]++]); both atomically, since an owner's
 * pairs are found from several cells.  The order inside an owner's list
 * is then the threads' and is fixed by the sort that follows.  Returns
 * 0, or 1 if a list would overflow the slots pass 1 counted (cannot
 * happen: both passes make the same tests).  Cost: one pair test per
 * candidate, about 27/2 * density * edge^3 in 3-D, with no branch on the
 * index order. */
static inline int scan_slot(const pair_ctx *x, int a, int a_end,
                            const int *p0, const int *p1, int ns, int *cnt,
                            int *cur, const int *lim_of, int *jdst,
                            const int D)
{
    const int *index = x->c->index;
    const int i = index[a];
    int s, p, bad = 0;
    for (s = -1; s < ns; ++s) {
        int pb = s < 0 ? a + 1 : p0[s], pe = s < 0 ? a_end : p1[s];
        for (p = pb; p < pe; ++p) {
            int j = index[p];
            int own = i < j ? i : j, other = i < j ? j : i;
            /* Tested as (smaller, larger), as the reference does: the
             * minimum image of -d can differ from -(image of d) in the
             * last bit near |d| = L/2. */
            if (rc_k_pair_close(x->b, x->lim, x->q + (size_t)own * D,
                           x->q + (size_t)other * D, x->cut2, D))
                bad |= file_pair(i, j, cnt, cur, lim_of, jdst);
        }
    }
    return bad;
}

static void sift_down(int *v, long root, long n)
{
    for (;;) {
        long ch = 2 * root + 1;
        int t;
        if (ch >= n)
            return;
        if (ch + 1 < n && v[ch + 1] > v[ch])
            ++ch;
        if (v[root] >= v[ch])
            return;
        t = v[root];
        v[root] = v[ch];
        v[ch] = t;
        root = ch;
    }
}

/* Sort one particle's neighbours (they arrive in whatever order the
 * threads found them).  Short lists: insertion sort, O(k^2) worst but
 * k ~ 10; long ones (crowded cells): in-place heapsort, O(k log k), no
 * scratch. */
static void sort_ints(int *v, long k)
{
    long a, b;
    if (k <= RC_PAIRS_INSERTION) {
        for (a = 1; a < k; ++a) {
            int t = v[a];
            for (b = a; b > 0 && v[b - 1] > t; --b)
                v[b] = v[b - 1];
            v[b] = t;
        }
        return;
    }
    for (a = k / 2 - 1; a >= 0; --a)
        sift_down(v, a, k);
    for (a = k - 1; a > 0; --a) {
        int t = v[0];
        v[0] = v[a];
        v[a] = t;
        sift_down(v, 0, a);
    }
}

/* One pass over the cells [c0, c1) in cell order.  A cell holding
 * several particles copies its candidates (its own particles, then those
 * of its larger neighbours), indices and positions, once into a small
 * contiguous array shared by all of them: the scattered loads of q
 * happen once per cell, and each particle runs one loop instead of one
 * per slice (short loops of unpredictable length cost a mispredicted
 * exit each).  A lone particle (the copy would not pay) and crowded
 * cells (the copy would not fit) read the slices in place.  Returns
 * nonzero on an overflow. */
static inline int pass_cells(const pair_ctx *x, int c0, int c1, int *cnt,
                             int *cur, const int *off, int *jdst,
                             const int D)
{
    const rc_cells *c = x->c;
    const int *index = c->index;
    int p0[18], p1[18], cj[RC_PAIRS_GATHER], cell, a, bad = 0;
    double cq[RC_PAIRS_GATHER * 3];
    for (cell = c0; cell < c1; ++cell) {
        int ns, s, t, k, m, a0 = c->start[cell], a_end = c->start[cell + 1];
        if (a0 == a_end)
            continue;
        ns = neighbour_slices(c, x->b, cell, p0, p1);
        m = a_end - a0;
        for (s = 0; s < ns; ++s)
            m += p1[s] - p0[s];
        if (a_end - a0 < 2 || m > RC_PAIRS_GATHER) {
            for (a = a0; a < a_end; ++a)
                bad |= scan_slot(x, a, a_end, p0, p1, ns, cnt, cur, off,
                                 jdst, D);
            continue;
        }
        m = 0;
        for (s = -1; s < ns; ++s) {
            int pb = s < 0 ? a0 : p0[s], pe = s < 0 ? a_end : p1[s], p;
            for (p = pb; p < pe; ++p, ++m) {
                const double *qj = x->q + (size_t)index[p] * D;
                cj[m] = index[p];
                for (k = 0; k < D; ++k)
                    cq[m * D + k] = qj[k];
            }
        }
        for (a = 0; a < a_end - a0; ++a) {
            const int i = cj[a];
            const double *qi = cq + a * D;
            for (t = a + 1; t < m; ++t) {
                const int j = cj[t];
                const double *qj = cq + t * D;
                /* (smaller, larger) order, as the reference tests it */
                if (rc_k_pair_close(x->b, x->lim, i < j ? qi : qj,
                               i < j ? qj : qi, x->cut2, D))
                    bad |= file_pair(i, j, cnt, cur, off, jdst);
            }
        }
    }
    return bad;
}

/* Cost: two searches (count, then fill), each one pair test per pair of
 * particles in neighbouring cells; a serial O(n) prefix sum; a sort of
 * each particle's ~10-entry list; an O(pairs) fill of out->i; one atomic
 * increment per pair found in each search.  Scratch lives in out's own
 * arrays: counts, then cursors, in out->i[0..n); offsets in out->j after
 * the pairs (so cap >= pairs + n + 1).  The search therefore allocates
 * nothing once out is large enough, walks the particles in cell order for
 * cache reuse, and still writes each particle's list to its final place
 * (no merge, no global sort).  Pair counts are limited to INT_MAX - n - 1
 * (int offsets). */
int rc_cells_pairs(const rc_cells *c, const rc_k_box *b, const double *q,
                   int n, double cutoff, rc_pairs *out, int threads)
{
    pair_ctx x;
    int k, blk, nblk, nt = 1, d, ncell, bad = 0;
    long total, i;
    int *off;

    if (!out)
        return -1;
    out->n = 0;
    if (!c || !box_ok(b) || c->dim != b->dim || n != c->n || n < 0 ||
        (n > 0 && (!q || !c->index || !c->cell_of)) || !c->start ||
        !(cutoff >= 0.0) || !rc_isfinite(cutoff))
        return -1;
    for (k = 0; k < b->dim; ++k) {
        /* Cells binned for another box (it was resized) are stale. */
        if (c->edge[k] != b->L[k] / c->nc[k])
            return -1;
        /* Minimum image: beyond L/2 a particle meets two images. */
        if (b->periodic[k] && !(cutoff < 0.5 * b->L[k]))
            return -1;
        /* One neighbour cell either side only reaches edge; a single cell
         * on the axis is searched whole, whatever its edge. */
        if (c->nc[k] > 1 && c->edge[k] < cutoff)
            return -1;
    }
    if (n == 0)
        return 0;
    if (pairs_reserve(out, (long)n + 1))
        return -1;

#ifdef _OPENMP
    nt = threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
#endif
    d = b->dim;
    x.c = c;
    x.b = b;
    x.q = q;
    x.cut2 = cutoff * cutoff;
    rc_k_pair_limits(b, x.lim);
    ncell = c->ncell;
    /* Blocks of consecutive cells, taken dynamically: particle density,
     * and so work, varies across the box. */
    nblk = ncell < RC_PAIRS_BLOCKS ? ncell : RC_PAIRS_BLOCKS;

    /* Pass 1: pairs owned by each particle, into out->i[i]. */
    memset(out->i, 0, (size_t)n * sizeof(int));
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) \
    if (n > RC_PAIRS_SERIAL_N)
    for (blk = 0; blk < nblk; ++blk) {
        int c0 = (int)((long)blk * ncell / nblk);
        int c1 = (int)((long)(blk + 1) * ncell / nblk);
        if (d == 3)
            pass_cells(&x, c0, c1, out->i, NULL, NULL, NULL, 3);
        else
            pass_cells(&x, c0, c1, out->i, NULL, NULL, NULL, 2);
    }
    total = 0;
    for (i = 0; i < n; ++i)
        total += out->i[i];
    if (total > (long)INT_MAX - n - 1)
        return -1;
    if (pairs_reserve(out, total + n + 1))
        return -1; /* realloc kept the counts */
    /* Exclusive prefix sum into the tail of out->j: off[i] = first slot
     * of particle i, off[n] = total; the cursors start there. */
    off = out->j + total;
    off[0] = 0;
    for (i = 0; i < n; ++i) {
        off[i + 1] = off[i] + out->i[i];
        out->i[i] = off[i];
    }

    /* Pass 2: every pair's larger index into its owner's slots. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) \
    if (n > RC_PAIRS_SERIAL_N) reduction(| : bad)
    for (blk = 0; blk < nblk; ++blk) {
        int c0 = (int)((long)blk * ncell / nblk);
        int c1 = (int)((long)(blk + 1) * ncell / nblk);
        if (d == 3)
            bad |= pass_cells(&x, c0, c1, NULL, out->i, off, out->j, 3);
        else
            bad |= pass_cells(&x, c0, c1, NULL, out->i, off, out->j, 2);
    }
    /* Every cursor must have reached the next list (cannot fail: both
     * passes make the same tests), else slots hold garbage. */
    for (i = 0; i < n && !bad; ++i)
        bad = out->i[i] != off[i + 1];
    if (bad)
        return -1;

    /* Pass 3: sort each list (canonical whatever the threads did) and
     * write its owner, now that the cursors in out->i are spent. */
#pragma omp parallel for schedule(dynamic, 256) num_threads(nt) \
    if (n > RC_PAIRS_SERIAL_N)
    for (i = 0; i < n; ++i) {
        int e;
        sort_ints(out->j + off[i], off[i + 1] - off[i]);
        for (e = off[i]; e < off[i + 1]; ++e)
            out->i[e] = (int)i;
    }
    out->n = total;
    return 0;
}

/* --------------------------------------------------------------- islands */

/* Root of v, halving the path on the way (every other node skips to its
 * grandparent): amortised near-constant with the union rule below. */
static inline int uf_find(int *parent, int v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

/* Cost: O(n + m log n) worst, near O(n + m) in practice; serial (a few ms
 * for 10^6 edges).  The smaller root always wins a union, so every root
 * is its component's smallest vertex and the labels are canonical
 * whatever the edge order.  Edges naming a vertex outside [0, n) are
 * ignored.  label may be the same array as parent. */
void rc_islands_label(int n, const int *pi, const int *pj, long m,
                      int *label, int *parent)
{
    long e;
    int v;
    if (n <= 0 || !label || !parent)
        return;
    for (v = 0; v < n; ++v)
        parent[v] = v;
    if (pi && pj)
        for (e = 0; e < m; ++e) {
            int a = pi[e], bq = pj[e];
            if (a < 0 || a >= n || bq < 0 || bq >= n)
                continue;
            a = uf_find(parent, a);
            bq = uf_find(parent, bq);
            if (a < bq)
                parent[bq] = a;
            else if (bq < a)
                parent[a] = bq;
        }
    /* label may alias parent: storing v's root in parent[v] is itself a
     * valid compression step. */
    for (v = 0; v < n; ++v)
        label[v] = uf_find(parent, v);
}

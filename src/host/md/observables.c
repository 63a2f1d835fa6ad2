/* Observables of large systems (DESIGN §6): the radial distribution
 * function and the blocking estimate of the standard error of a mean.
 *
 * g(r) from cells: one pass over a cell list, no pair list.  The cells
 * are rows along x: at least rmax wide on the other axes, so a pair
 * within rmax lies in the same or a neighbouring row, and only rmax /
 * RC_RDF_XSPLIT long on x, so that each particle takes from a row just
 * the cells within its window |x - x_i| <= sqrt(rmax^2 - h^2) (h: its
 * distance to the row across the other axes): less than half the
 * candidates of 3^d whole cells of edge rmax, in as many runs.  Positions
 * are copied once per sample into cell order, one array per axis, so a
 * window of cells is a contiguous run; each run is compared with the
 * particle by a loop the compiler vectorises (differences, the run's
 * image shift, squared distance; no branch, no sqrt) into the particle's
 * batch of keys; then the keys below rmax^2 are picked out without a
 * branch and only those take a sqrt and a histogram increment.
 *
 * Rounding: the distance is the one the O(n^2) definition computes, bit
 * for bit: x = q_i - q_j (i < j) less the periodic image L floor(x/L +
 * 1/2) per axis, r^2 summed in axis order, d = sqrt(r^2), bin (long)(d
 * nbins / rmax).  The fast path takes q_own - q_other, which is x or -x
 * exactly, and subtracts its run's image shift s (0 or +-L); wherever
 * the result is below 0.45 L on every periodic axis, s is the value the
 * floor gives (for -x its negative, and -(x - s') = -x + s' exactly), so
 * r^2 is the same bits.  A candidate whose r^2 reaches (0.45 L_min)^2 may
 * have had the wrong shift (a particle a hair outside the box, or fewer
 * than 3 cells on an axis) and is recomputed by the definition itself.
 * No fused multiply-add (-std=c11 turns contraction off), and the
 * vector loop reassociates nothing, so it rounds as the scalar one.  g
 * of a bin is one product of exact counts and a shell volume computed
 * from the bin edges (a few ulp).  The blocking sums are two-pass and shifted by the first element
 * so that a constant series gives exactly 0 and a series with a large
 * offset loses no digits to it. */
#include "observables.h"

#include "../../kernels/rc_md.h"
#include "../simd_clones.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Candidates of one particle gathered before they are binned (a 2 KiB
 * and a 1 KiB buffer on the stack), and runs among them; more (crowded
 * cells, tiny boxes) are binned in several batches. */
#define RC_RDF_CHUNK 256
#define RC_RDF_RUNS 32
/* Cells per rmax along x: windows end within rmax / 8 of their reach,
 * while a row of cells still holds a few particles at fluid densities
 * (fewer and the per-cell bookkeeping costs more than it saves). */
#define RC_RDF_XSPLIT 8
/* The most cells per particle a sample's grid may have (rc_rdf_add). */
#define RC_RDF_CELLS_PER_PARTICLE 8.0
/* Below this many particles a sample runs on one thread. */
#define RC_RDF_SERIAL_N 2048

/* rc_pi_ is POSIX, not C11. */
static const double rc_pi_ = 3.14159265358979323846;

int rc_rdf_init(rc_rdf *r, int dim, int nbins, double rmax)
{
    if (!r)
        return -1;
    r->dim = 0;
    r->nbins = 0;
    r->rmax = 0.0;
    r->hist = NULL;
    r->samples = 0;
    r->n = 0;
    r->volume = 0.0;
    memset(&r->cells, 0, sizeof r->cells);
    r->soa = NULL;
    r->counts = NULL;
    r->cap_n = r->cap_t = 0;
    r->lent = NULL;
    r->lent_n = 0;
    if ((dim != 2 && dim != 3) || nbins < 1 || !(rmax > 0.0) ||
        !isfinite(rmax))
        return -1;
    r->hist = (double *)calloc((size_t)nbins, sizeof(double));
    if (!r->hist)
        return -1;
    r->dim = dim;
    r->nbins = nbins;
    r->rmax = rmax;
    return 0;
}

void rc_rdf_free(rc_rdf *r)
{
    if (!r)
        return;
    free(r->hist);
    if (r->soa != r->lent)
        free(r->soa);
    free(r->counts);
    rc_cells_free(&r->cells);
    r->hist = NULL;
    r->soa = NULL;
    r->counts = NULL;
    r->cap_n = r->cap_t = 0;
    r->lent = NULL;
    r->lent_n = 0;
    r->nbins = 0;
    r->samples = 0;
}

/* Everything the cell walk reads, by value into each thread. */
typedef struct rdf_ctx {
    const rc_k_box *b;
    const double *q;     /* n x dim, the caller's order */
    const int *index;    /* cell order -> particle */
    const double *x[3];  /* cell order, one array per axis */
    double pre2;         /* r^2 below this may be d < rmax */
    double sus2;         /* r^2 from this on: recompute by the definition */
    double rmax, inv_dr;
    int nbins;
    const rc_cells *c;
    double pad;          /* rounding allowance of the windows (length) */
    int lanes;           /* rdf_pick in AVX-512 lanes (rc_avx512_lanes) */
} rdf_ctx;

/* r^2 of particles i and j by the definition (i < j order, the periodic
 * image by rc_k_box_delta, squares summed in axis order). */
static double rdf_r2_exact(const rdf_ctx *x, int i, int j, const int D)
{
    double v[3], r2 = 0.0;
    int k, lo = i < j ? i : j, hi = i < j ? j : i;
    rc_k_box_delta(x->b, x->q + (size_t)lo * D, x->q + (size_t)hi * D, v);
    for (k = 0; k < D; ++k)
        r2 += v[k] * v[k];
    return r2;
}

/* The candidates of one particle, gathered over its runs (windows of
 * cells) before they are picked and binned: one pick loop and one bin
 * loop per particle rather than per run.  key[t]: r^2, or -1 (recompute
 * by the definition); run r holds key[off[r] .. off[r + 1]) for the slots
 * from slot[r] on (to find a candidate's particle, rarely). */
typedef struct rdf_batch {
    double key[RC_RDF_CHUNK];
    int sel[RC_RDF_CHUNK + 8]; /* + 8: rdf_pick's last vector store */
    int off[RC_RDF_RUNS + 1], slot[RC_RDF_RUNS];
    int m, nrun;
} rdf_batch;

/* sel = the t < m with key[t] < bound, ascending; returns how many.
 * sel has room for m + 8.  A branch-free loop: store every index,
 * advance only on a hit (hits are a third of the candidates, a branch
 * would mispredict), about 2 cycles a key; with AVX-512, eight keys
 * compared at once and their hits' indices compressed into one store
 * (a sample of 256 000 spheres at eta 0.3, rmax 3, 1 thread: 0.097-0.099
 * -> 0.086-0.087 s). */
static int rdf_pick_scalar(const double *key, int m, double bound, int *sel)
{
    int t, k = 0;
    for (t = 0; t < m; ++t) {
        sel[k] = t;
        k += key[t] < bound;
    }
    return k;
}

#if RC_HAVE_AVX512_LANES
#include <immintrin.h>
RC_AVX512_TARGET static int
rdf_pick_avx512(const double *key, int m, double bound, int *sel)
{
    const __m512d b = _mm512_set1_pd(bound);
    __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i eight = _mm256_set1_epi32(8);
    int t, k = 0;
    for (t = 0; t < m; t += 8) {
        __mmask8 lm = m - t >= 8 ? (__mmask8)0xff
                                 : (__mmask8)((1u << (m - t)) - 1u);
        /* _CMP_LT_OQ: false for NaN, as the scalar < */
        __mmask8 hit = _mm512_mask_cmp_pd_mask(
            lm, _mm512_maskz_loadu_pd(lm, key + t), b, _CMP_LT_OQ);
        _mm256_storeu_si256((__m256i *)(sel + k),
                            _mm256_maskz_compress_epi32(hit, idx));
        k += __builtin_popcount((unsigned)hit);
        idx = _mm256_add_epi32(idx, eight);
    }
    return k;
}
#endif

/* sel as rdf_pick_scalar's; lanes: rc_avx512_lanes() */
static int rdf_pick(int lanes, const double *key, int m, double bound,
                    int *sel)
{
#if RC_HAVE_AVX512_LANES
    if (lanes)
        return rdf_pick_avx512(key, m, bound, sel);
#else
    (void)lanes;
#endif
    return rdf_pick_scalar(key, m, bound, sel);
}

/* Pick the keys below pre2 (rdf_pick) and bin them: sqrt, the
 * definition's test d < rmax and bin.  Empties the batch.  A sqrt and an
 * increment a hit. */
static void rdf_flush(const rdf_ctx *x, rdf_batch *B, int a, long long *h,
                      const int D)
{
    int u, k = rdf_pick(x->lanes, B->key, B->m, x->pre2, B->sel);
    for (u = 0; u < k; ++u) {
        double r2 = B->key[B->sel[u]], d;
        if (r2 < 0.0) {
            int r = 0, t2 = B->sel[u];
            while (B->off[r + 1] <= t2)
                ++r;
            r2 = rdf_r2_exact(x, x->index[a],
                              x->index[B->slot[r] + t2 - B->off[r]], D);
        }
        d = sqrt(r2);
        if (d < x->rmax) {
            long bin = (long)(d * x->inv_dr);
            if (bin >= x->nbins) /* d just below rmax rounding up */
                bin = x->nbins - 1;
            ++h[bin];
        }
    }
    B->m = 0;
    B->nrun = 0;
}

/* Item: the particle in cell-order slot a against the slots [t0, t1),
 * all with image shift sh[0..D), into the batch (flushed when full).  The
 * loop vectorises: differences, the shift, squared distance, one compare
 * and select; key -1 where r^2 >= sus2 (or NaN).  Cost per candidate: 3
 * loads, 3D flops, a compare and a store. */
static inline void rdf_take(const rdf_ctx *x, rdf_batch *B, int a, int t0,
                            int t1, const double *sh, long long *h,
                            const int D)
{
    const double *X = x->x[0], *Y = x->x[1], *Z = x->x[2];
    const double xi = X[a], yi = Y[a], zi = D == 3 ? Z[a] : 0.0;
    const double sx = sh[0], sy = sh[1], sz = D == 3 ? sh[2] : 0.0;
    const double sus2 = x->sus2;
    while (t0 < t1) {
        int m, t;
        double *key;
        const double *Xs, *Ys, *Zs;
        if (B->m == RC_RDF_CHUNK || B->nrun == RC_RDF_RUNS)
            rdf_flush(x, B, a, h, D);
        m = t1 - t0 < RC_RDF_CHUNK - B->m ? t1 - t0 : RC_RDF_CHUNK - B->m;
        key = B->key + B->m;
        Xs = X + t0;
        Ys = Y + t0;
        Zs = Z + t0;
        if (D == 3)
            for (t = 0; t < m; ++t) {
                double dx = (xi - Xs[t]) - sx;
                double dy = (yi - Ys[t]) - sy;
                double dz = (zi - Zs[t]) - sz;
                double r2 = dx * dx + dy * dy + dz * dz;
                key[t] = r2 < sus2 ? r2 : -1.0;
            }
        else
            for (t = 0; t < m; ++t) {
                double dx = (xi - Xs[t]) - sx;
                double dy = (yi - Ys[t]) - sy;
                double r2 = dx * dx + dy * dy;
                key[t] = r2 < sus2 ? r2 : -1.0;
            }
        B->off[B->nrun] = B->m;
        B->slot[B->nrun] = t0;
        B->m += m;
        B->off[++B->nrun] = B->m;
        t0 += m;
    }
}

/* Position of a particle on axis k relative to the lower face of its
 * cell s (edge e): in [0, e] up to rounding.  A coordinate a hair outside
 * a periodic box sits in the cell across the face (rc_k_cell_coord
 * wraps it), so it is taken a box length further. */
static inline double rdf_in_cell(double p, int s, double e, double L,
                                 int periodic)
{
    double f = p - (double)s * e;
    if (periodic) {
        if (f < -0.5 * e)
            f += L;
        else if (f > 1.5 * e)
            f -= L;
    }
    return f;
}

/* The shift of rdf_take on an axis of nc >= 3 periodic cells for a row at
 * coordinate t seen from s: -L across the lower face (t = nc - 1 from s =
 * 0: q_own - q_other is near -L), +L across the upper one, else 0.  With
 * fewer cells (or walls) 0: on 2 periodic cells the row is neighbour on
 * both sides and no one shift holds, and rdf_take's key sends such a
 * candidate to the definition. */
static inline double rdf_row_shift(int s, int t, int nc, int periodic,
                                   double L)
{
    if (!periodic || nc < 3)
        return 0.0;
    return t - s > 1 ? -L : t - s < -1 ? L : 0.0;
}

/* Distance on one axis from a particle at f in its cell (edge e) to a
 * neighbour row at coordinate t seen from s, at most the true one (the
 * window is then a superset): 0 for its own row and where the row is a
 * neighbour on both sides (2 periodic cells); less the pad. */
static inline double rdf_row_gap(double f, int s, int t, int nc,
                                 int periodic, double e, double pad)
{
    double g;
    if (t == s || (periodic && nc < 3))
        return 0.0;
    /* above: t = s + 1, or the wrap from the top cell to 0 */
    g = (t == s + 1 || (periodic && s == nc - 1 && t == 0)) ? e - f : f;
    g -= pad;
    return g > 0.0 ? g : 0.0;
}

/* One row of cells along x: the particles of row r0 (a y/z coordinate
 * pair) against the rows with a larger index among the neighbouring ones
 * (the index is y + ny z, so each pair of neighbouring rows is visited
 * from one side) and against the later cells of their own row.  Per
 * particle and row, the window |x - x_i| < sqrt(rmax^2 - h^2) + pad in
 * whole cells, split where it crosses a periodic face (image shift +-Lx
 * for the part across), the whole row once when it spans the row (small
 * boxes).  Every pair within rmax is in a window of its particle from the
 * smaller row, or of the smaller cell (then the slot order) in one row,
 * and in no other: each is counted once. */
static void rdf_row(const rdf_ctx *x, int r0, long long *h, const int D)
{
    const rc_cells *c = x->c;
    const rc_k_box *b = x->b;
    const int nx = c->nc[0], ny = c->nc[1], nz = D == 3 ? c->nc[2] : 1;
    const double ex = c->edge[0], ey = c->edge[1];
    const double ez = D == 3 ? c->edge[2] : 0.0;
    const double rmax2 = x->rmax * x->rmax;
    const int sy = r0 % ny, sz = r0 / ny;
    int ys[3], zs[3], cy, cz, e, f, nrow = 0, a, a0, a1;
    int row[9], rty[9], rtz[9];
    double rsh[9][3];
    const double inv_ex = 1.0 / ex;
    rdf_batch B;
    B.m = B.nrun = 0;
    B.off[0] = 0;
    cy = rc_k_axis_neighbours(sy, ny, b->periodic[1], 1, ys);
    if (D == 3)
        cz = rc_k_axis_neighbours(sz, nz, b->periodic[2], 1, zs);
    else {
        cz = 1;
        zs[0] = 0;
    }
    /* own row first (its later cells), then the larger rows */
    row[nrow] = r0;
    rty[nrow] = sy;
    rtz[nrow] = sz;
    rsh[nrow][0] = rsh[nrow][1] = rsh[nrow][2] = 0.0;
    ++nrow;
    for (e = 0; e < cz; ++e)
        for (f = 0; f < cy; ++f) {
            int r = ys[f] + ny * zs[e];
            if (r <= r0)
                continue;
            row[nrow] = r;
            rty[nrow] = ys[f];
            rtz[nrow] = zs[e];
            rsh[nrow][0] = 0.0;
            rsh[nrow][1] = rdf_row_shift(sy, ys[f], ny, b->periodic[1],
                                         b->L[1]);
            rsh[nrow][2] = D == 3 ? rdf_row_shift(sz, zs[e], nz,
                                                  b->periodic[2], b->L[2])
                                  : 0.0;
            ++nrow;
        }
    a0 = c->start[r0 * nx];
    a1 = c->start[r0 * nx + nx];
    for (a = a0; a < a1; ++a) {
        const int sx = c->cell_of[x->index[a]] - r0 * nx;
        const double fx = rdf_in_cell(x->x[0][a], sx, ex, b->L[0],
                                      b->periodic[0]);
        const double fy = rdf_in_cell(x->x[1][a], sy, ey, b->L[1],
                                      b->periodic[1]);
        const double fz = D == 3 ? rdf_in_cell(x->x[2][a], sz, ez, b->L[2],
                                               b->periodic[2])
                                 : 0.0;
        int w;
        for (w = 0; w < nrow; ++w) {
            const int *st = c->start + (size_t)row[w] * (size_t)nx;
            double gy = rdf_row_gap(fy, sy, rty[w], ny, b->periodic[1], ey,
                                    x->pad);
            double gz = D == 3 ? rdf_row_gap(fz, sz, rtz[w], nz,
                                             b->periodic[2], ez, x->pad)
                               : 0.0;
            double g2 = gy * gy + gz * gz, half, sh[3], v;
            long lo, hi;
            if (!(g2 < rmax2))
                continue; /* the whole row beyond rmax */
            half = (g2 > 0.0 ? sqrt(rmax2 - g2) : x->rmax) + x->pad;
            if (half < b->L[0]) {
                /* floor((fx -+ half) / ex), a superset by the pad */
                v = (fx - half) * inv_ex;
                lo = (long)v;
                lo -= (double)lo > v;
                v = (fx + half) * inv_ex;
                hi = (long)v;
                hi -= (double)hi > v;
                lo += sx;
                hi += sx;
            } else {
                lo = 0;
                hi = nx;
            }
            sh[0] = 0.0;
            sh[1] = rsh[w][1];
            sh[2] = rsh[w][2];
            if (hi - lo + 1 >= nx) { /* the whole row, once */
                lo = 0;
                hi = nx - 1;
            } else if (!b->periodic[0]) {
                lo = lo < 0 ? 0 : lo;
                hi = hi > nx - 1 ? nx - 1 : hi;
            } else if (lo < 0) { /* the part across the lower face */
                if (w > 0 || lo + nx > sx) {
                    sh[0] = -b->L[0];
                    rdf_take(x, &B, a, st[lo + nx], st[nx], sh, h, D);
                    sh[0] = 0.0;
                }
                lo = 0;
            } else if (hi > nx - 1) { /* the part across the upper face */
                if (w > 0 || hi - nx > sx) {
                    sh[0] = b->L[0];
                    rdf_take(x, &B, a, st[0], st[hi - nx + 1], sh, h, D);
                    sh[0] = 0.0;
                }
                hi = nx - 1;
            }
            if (w == 0) /* own row: own later slots, then larger cells */
                rdf_take(x, &B, a, a + 1, st[hi + 1], sh, h, D);
            else
                rdf_take(x, &B, a, st[lo], st[hi + 1], sh, h, D);
        }
        rdf_flush(x, &B, a, h, D);
    }
}

/* Cost: a counting sort into cells and a copy of the positions (O(n),
 * serial and parallel), then one test per candidate: with P = density
 * v_d(rmax) / 2 the pairs within rmax a particle, about 3.4 P candidates
 * in 3-D (110 for P = 32 at rows of 1.06 rmax; the windows cut the 8 P
 * of whole cells) in about 5 runs; a sqrt and an increment per pair
 * within rmax; nthreads x nbins counts merged.
 * Memory: the cells (2n + ncell ints), dim x n doubles, nthreads x nbins
 * counts, kept for the next sample.  The rows are wider than rmax by a
 * relative 1e-12, so a pair whose computed distance is below rmax cannot
 * sit two rows apart (the cell coordinates q/edge carry rounding of a few
 * ulp of nc, far below 1e-12 for any grid of fewer than 10^3 cells an
 * axis); the windows have a margin of 1e-9 of the box.  n and the
 * volume are those of the first sample; later samples are assumed to
 * match (the normalisation has one n and one V, so a changing system
 * would need per-sample weights that this histogram does not keep). */
int rc_rdf_add(rc_rdf *r, const rc_k_box *b, const double *q, long n,
               int threads)
{
    rdf_ctx x;
    rc_cells *c;
    long i, t;
    double cell_min[3], Lmax = r->rmax;
    int k, D, nt = 1, nrow, row;
    if (!r || !r->hist || !b || b->dim != r->dim || n < 0 || n > INT_MAX ||
        (n > 0 && !q))
        return -1;
    D = b->dim;
    for (k = 0; k < D; ++k)
        if (!(b->L[k] > 0.0) || !isfinite(b->L[k]))
            return -1;
#ifdef _OPENMP
    nt = threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
#endif
    if (n <= RC_RDF_SERIAL_N)
        nt = 1;
    c = &r->cells;
    cell_min[0] = r->rmax * (1.0 + 1e-12) / RC_RDF_XSPLIT;
    cell_min[1] = cell_min[2] = r->rmax * (1.0 + 1e-12);
    {
        /* A range short against the box (a tiny output.rdf_rmax, or a
         * few spheres in a vast box) would ask for more cells than there
         * are particles, up to more than memory holds: at most
         * RC_RDF_CELLS_PER_PARTICLE cells per particle, by widening
         * every cell alike.  Wider cells find the same pairs (the rows
         * and windows only need edges at least as wide), with more
         * distance tests. */
        double cells = 1.0, budget = RC_RDF_CELLS_PER_PARTICLE * (double)n +
                                     1024.0;
        for (k = 0; k < D; ++k)
            cells *= fmax(1.0, floor(b->L[k] / cell_min[k]));
        if (cells > budget) {
            double grow = pow(cells / budget, 1.0 / D) * (1.0 + 1e-9);
            for (k = 0; k < D; ++k)
                cell_min[k] *= grow;
        }
    }
    if (rc_cells_build_axes(c, b, q, (int)n, cell_min) != 0)
        return -1;
    if (nt > r->cap_t) {
        long long *nc = (long long *)realloc(
            r->counts, sizeof(long long) * (size_t)nt * (size_t)r->nbins);
        if (!nc)
            return -1;
        r->counts = nc;
        r->cap_t = nt;
    }
    if (r->lent && r->lent_n >= (long)D * n) {
        /* the caller's scratch (soa's own, NULL between samples unless
         * a sample failed, goes) */
        free(r->soa);
        r->soa = r->lent;
        r->cap_n = n;
    } else if (n > r->cap_n) {
        double *ns = (double *)realloc(r->soa, sizeof(double) * (size_t)D *
                                                   (size_t)n);
        if (!ns)
            return -1;
        r->soa = ns;
        r->cap_n = n;
    }
    memset(r->counts, 0, sizeof(long long) * (size_t)nt * (size_t)r->nbins);
    x.b = b;
    x.c = c;
    x.q = q;
    x.index = c->index;
    for (k = 0; k < 3; ++k)
        x.x[k] = r->soa + (size_t)(k < D ? k : 0) * (size_t)r->cap_n;
    x.rmax = r->rmax;
    x.inv_dr = (double)r->nbins / r->rmax;
    x.nbins = r->nbins;
    for (k = 0; k < D; ++k)
        Lmax = b->L[k] > Lmax ? b->L[k] : Lmax;
    x.pad = 1e-9 * Lmax;
    /* 1e-12 over rmax^2: r^2 at or past it has sqrt(r^2) >= rmax, however
     * rmax^2 rounded; the sqrt then decides */
    x.pre2 = r->rmax * r->rmax * (1.0 + 1e-12);
    x.lanes = rc_avx512_lanes();
    /* a wrong image shift leaves at least L/2 (1 - ulps) on its axis */
    x.sus2 = HUGE_VAL;
    for (k = 0; k < D; ++k)
        if (b->periodic[k] && (0.45 * b->L[k]) * (0.45 * b->L[k]) < x.sus2)
            x.sus2 = (0.45 * b->L[k]) * (0.45 * b->L[k]);

#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (i = 0; i < n; ++i) {
        int a;
        const double *qi = q + (size_t)c->index[i] * (size_t)D;
        for (a = 0; a < D; ++a)
            r->soa[(size_t)a * (size_t)r->cap_n + (size_t)i] = qi[a];
    }

    /* rows of cells along x, taken dynamically (density, and so work,
     * varies across the box) */
    nrow = c->ncell / c->nc[0];
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nt > 1)
    for (row = 0; row < nrow; ++row) {
        long long *h = r->counts;
#ifdef _OPENMP
        h += (size_t)omp_get_thread_num() * (size_t)r->nbins;
#endif
        if (D == 3)
            rdf_row(&x, row, h, 3);
        else
            rdf_row(&x, row, h, 2);
    }
    /* integer counts: the order of the sum cannot change them; thread
     * order anyway */
    for (t = 0; t < nt; ++t)
        for (k = 0; k < r->nbins; ++k)
            r->hist[k] += (double)r->counts[t * r->nbins + k];
    /* the positions by cell and the cell list (32 bytes a particle) go
     * between samples: a large system samples g(r) rarely, and they
     * would stay beside the engine's arrays at its peak */
    if (r->soa != r->lent)
        free(r->soa);
    r->soa = NULL;
    r->cap_n = 0;
    r->lent = NULL;
    r->lent_n = 0;
    rc_cells_free(&r->cells);
    if (r->samples == 0) {
        r->n = n;
        r->volume = rc_k_box_volume(b);
    }
    ++r->samples;
    return 0;
}

double rc_rdf_value(const rc_rdf *r, int bin)
{
    double dr, r1, r2, shell, norm;
    if (!r || !r->hist || bin < 0 || bin >= r->nbins || r->samples < 1 ||
        r->n < 2 || !(r->volume > 0.0))
        return NAN;
    dr = r->rmax / (double)r->nbins;
    r1 = dr * (double)bin;
    r2 = dr * (double)(bin + 1);
    if (r->dim == 2)
        shell = rc_pi_ * (r2 * r2 - r1 * r1);
    else
        shell = (4.0 / 3.0) * rc_pi_ * (r2 * r2 * r2 - r1 * r1 * r1);
    /* Expected pair count of an ideal gas of n particles in the shell:
     * n(n-1)/2 pairs, each with probability shell / V. */
    norm = (double)r->samples * 0.5 * (double)r->n *
           ((double)(r->n - 1) / r->volume) * shell;
    return r->hist[bin] / norm;
}

int rc_rdf_write(const rc_rdf *r, FILE *f)
{
    double dr;
    int k;
    if (!r || !r->hist || !f)
        return -1;
    if (fprintf(f, "r,g\n") < 0)
        return -1;
    dr = r->rmax / (double)r->nbins;
    for (k = 0; k < r->nbins; ++k)
        if (fprintf(f, "%.10g,%.10g\n", dr * ((double)k + 0.5),
                    rc_rdf_value(r, k)) < 0)
            return -1;
    return 0;
}

/* Biased variance of y[0..m) about its own mean, shifted by y[0]. */
static double rc_var_biased_(const double *y, long m, double *mean)
{
    double s = y[0], acc = 0.0, mu, v = 0.0;
    long i;
    for (i = 0; i < m; ++i)
        acc += y[i] - s;
    mu = s + acc / (double)m;
    for (i = 0; i < m; ++i) {
        double d = y[i] - mu;
        v += d * d;
    }
    if (mean)
        *mean = mu;
    return v / (double)m;
}

double rc_block_stderr(const double *x, long n, double *mean, int *levels)
{
    double err = NAN, mu = NAN, *y = NULL;
    long m, i;
    int used = 0;
    if (!x || n < 1)
        goto done;
    if (n < 2) {
        mu = x[0];
        goto done;
    }
    /* Level 0: the data themselves (the only level when n < 64); the
     * mean is this level's, over all n. */
    err = sqrt(rc_var_biased_(x, n, &mu) / (double)(n - 1));
    used = 1;
    if (n < 64)
        goto done;
    y = (double *)malloc((size_t)(n / 2) * sizeof(double));
    if (!y) {
        err = NAN;
        used = 0;
        goto done;
    }
    /* Level 1 from x (a trailing odd element dropped), the later levels
     * in place: y[i] reads y[2i] and y[2i + 1], both at or after i. */
    m = n / 2;
    for (i = 0; i < m; ++i)
        y[i] = 0.5 * (x[2 * i] + x[2 * i + 1]);
    while (m >= 32) {
        double e = sqrt(rc_var_biased_(y, m, NULL) / (double)(m - 1));
        if (e > err || isnan(e)) /* a NaN level makes the result NaN */
            err = e;
        ++used;
        for (i = 0; i < m / 2; ++i)
            y[i] = 0.5 * (y[2 * i] + y[2 * i + 1]);
        m /= 2;
    }
done:
    free(y);
    if (mean)
        *mean = mu;
    if (levels)
        *levels = used;
    return err;
}

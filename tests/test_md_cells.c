/* Broadphase of large systems (DESIGN §6): the cell-list pair search
 * against the O(n^2) reference (and the reference against an independent
 * distance test), cell-list invariants, boundary cases, thread-count
 * independence, error returns, array reuse, and island labels against
 * breadth-first search.
 *
 * No tolerances except one (cell bounds, see check_cells): pair lists are
 * compared exactly, entry by entry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/cells.h"
#include "rc_test.h"

/* ------------------------------------------------------------- helpers */

static void make_box(rc_k_box *b, int dim, const double *L, const int *per)
{
    int k;
    b->dim = dim;
    for (k = 0; k < 3; ++k) {
        b->L[k] = k < dim ? L[k] : -1.0; /* unused axis: poison */
        b->periodic[k] = k < dim ? per[k] : 1;
    }
}

/* Random positions in the box; about 1 coordinate in 16 is put exactly on
 * 0, and 1 in 16 on the top (just below L on a periodic axis, L itself on
 * a walled one), where the cell index needs clamping or wrapping. */
static void random_positions(const rc_k_box *b, double *q, int n,
                             unsigned long long *st)
{
    int i, k;
    for (i = 0; i < n; ++i)
        for (k = 0; k < b->dim; ++k) {
            double u = rc_test_uniform(st), v = rc_test_uniform(st);
            double x = u * b->L[k];
            if (v < 1.0 / 16)
                x = 0.0;
            else if (v < 2.0 / 16)
                x = b->periodic[k] ? nextafter(b->L[k], 0.0) : b->L[k];
            q[(size_t)i * b->dim + k] = x;
        }
}

/* Exact comparison; prints the first mismatch.  Returns 1 if equal. */
static int same_pairs(const rc_pairs *got, const rc_pairs *ref,
                      const char *what)
{
    long e, m = got->n < ref->n ? got->n : ref->n;
    for (e = 0; e < m; ++e)
        if (got->i[e] != ref->i[e] || got->j[e] != ref->j[e]) {
            fprintf(stderr,
                    "%s: first mismatch at entry %ld: got (%d,%d), "
                    "reference (%d,%d) [counts %ld vs %ld]\n",
                    what, e, got->i[e], got->j[e], ref->i[e], ref->j[e],
                    got->n, ref->n);
            return 0;
        }
    if (got->n != ref->n) {
        fprintf(stderr, "%s: count %ld, reference %ld (first extra entry "
                        "%ld)\n", what, got->n, ref->n, m);
        return 0;
    }
    return 1;
}

/* i < j, strictly increasing (i, j), indices in [0, n). */
static int canonical(const rc_pairs *p, int n)
{
    long e;
    for (e = 0; e < p->n; ++e) {
        if (p->i[e] < 0 || p->j[e] >= n || p->i[e] >= p->j[e])
            return 0;
        if (e > 0 && (p->i[e] < p->i[e - 1] ||
                      (p->i[e] == p->i[e - 1] && p->j[e] <= p->j[e - 1])))
            return 0;
    }
    return 1;
}

/* The reference checked by a second, independently written minimum
 * image (round to nearest instead of floor(x + 1/2)): the listed pairs
 * are exactly those closer than the cutoff.  The two images can differ
 * only for pairs within ulps of the cutoff, which random doubles do not
 * produce. */
static int brute_is_right(const rc_k_box *b, const double *q, int n,
                          double cutoff, const rc_pairs *ref)
{
    long e = 0;
    int i, j, k;
    for (i = 0; i < n; ++i)
        for (j = i + 1; j < n; ++j) {
            double d2 = 0.0;
            int close;
            for (k = 0; k < b->dim; ++k) {
                double d = q[(size_t)i * b->dim + k] -
                           q[(size_t)j * b->dim + k];
                if (b->periodic[k])
                    d -= b->L[k] * nearbyint(d / b->L[k]);
                d2 += d * d;
            }
            close = sqrt(d2) < cutoff;
            if (close) {
                if (e >= ref->n || ref->i[e] != i || ref->j[e] != j) {
                    fprintf(stderr, "brute: pair (%d,%d) missing at %ld\n",
                            i, j, e);
                    return 0;
                }
                ++e;
            }
        }
    if (e != ref->n) {
        fprintf(stderr, "brute: %ld pairs listed, %ld close\n", ref->n, e);
        return 0;
    }
    return 1;
}

/* Invariants of a built cell list. */
static int check_cells(const rc_cells *c, const rc_k_box *b, const double *q,
                       int n, double min_cell)
{
    int k, cell, p, ok = 1, ncell = 1;
    char *seen = (char *)calloc((size_t)n + 1, 1);
    for (k = 0; k < b->dim; ++k) {
        /* The most cells with edge >= min_cell (floor(L / min_cell)
         * unless that quotient rounded up to an integer). */
        int want = (int)floor(b->L[k] / min_cell);
        while (want > 1 && b->L[k] / want < min_cell)
            --want;
        if (want < 1)
            want = 1;
        if (c->nc[k] != want || !(c->edge[k] >= min_cell || c->nc[k] == 1)) {
            fprintf(stderr, "cells: axis %d nc %d (want %d) edge %g\n", k,
                    c->nc[k], want, c->edge[k]);
            ok = 0;
        }
        ncell *= c->nc[k];
    }
    if (c->ncell != ncell || c->n != n || c->start[0] != 0 ||
        c->start[ncell] != n) {
        fprintf(stderr, "cells: ncell %d (%d), n %d, start ends %d %d\n",
                c->ncell, ncell, c->n, c->start[0], c->start[ncell]);
        free(seen);
        return 0;
    }
    for (cell = 0; cell < ncell && ok; ++cell) {
        int s[3], r = cell;
        for (k = 0; k < b->dim; ++k) {
            s[k] = r % c->nc[k];
            r /= c->nc[k];
        }
        if (c->start[cell + 1] < c->start[cell]) {
            ok = 0;
            break;
        }
        for (p = c->start[cell]; p < c->start[cell + 1]; ++p) {
            int i = c->index[p];
            if (i < 0 || i >= n || seen[i] || c->cell_of[i] != cell ||
                (p > c->start[cell] && c->index[p - 1] >= i)) {
                fprintf(stderr, "cells: cell %d slot %d holds %d\n", cell, p,
                        i);
                ok = 0;
                break;
            }
            seen[i] = 1;
            for (k = 0; k < b->dim; ++k) {
                double x = q[(size_t)i * b->dim + k];
                /* Cell bounds s*edge, (s+1)*edge are products with one
                 * rounding each, and q/edge one more: 1e-12 L covers
                 * them with room and is far below any cell edge. */
                double tol = 1e-12 * b->L[k];
                if (!(x >= s[k] * c->edge[k] - tol &&
                      x <= (s[k] + 1) * c->edge[k] + tol)) {
                    fprintf(stderr, "cells: particle %d axis %d at %.17g "
                                    "outside cell %d\n", i, k, x, s[k]);
                    ok = 0;
                }
            }
        }
    }
    free(seen);
    return ok;
}

/* ------------------------------------------------- random comparisons */

static int g_cases = 0;
static long g_longest = 0; /* longest per-particle list met */

static long longest_list(const rc_pairs *p)
{
    long e, run = 0, best = 0;
    for (e = 0; e < p->n; ++e) {
        run = (e > 0 && p->i[e] == p->i[e - 1]) ? run + 1 : 1;
        if (run > best)
            best = run;
    }
    return best;
}

/* One configuration: cells at min_cell (and again at min_cell = cutoff),
 * pairs for threads 1 and 2, both equal to the reference. */
static void run_case(const rc_k_box *b, int n, double min_cell,
                     double cutoff, unsigned long long seed, int verify)
{
    rc_cells c;
    rc_pairs ref, got;
    double *q = (double *)malloc(((size_t)n + 1) * 3 * sizeof(double));
    unsigned long long st = seed;
    int t, pass;
    char what[200];
    memset(&c, 0, sizeof c);
    memset(&ref, 0, sizeof ref);
    memset(&got, 0, sizeof got);
    random_positions(b, q, n, &st);
    ++g_cases;

    RC_CHECK(rc_pairs_brute(b, q, n, cutoff, &ref) == 0, "brute failed");
    RC_CHECK(canonical(&ref, n), "brute list not canonical (n %d)", n);
    if (longest_list(&ref) > g_longest)
        g_longest = longest_list(&ref);
    if (verify)
        RC_CHECK(brute_is_right(b, q, n, cutoff, &ref),
                 "brute wrong: dim %d n %d cutoff %g", b->dim, n, cutoff);

    for (pass = 0; pass < 2; ++pass) {
        double mc = pass == 0 ? min_cell : cutoff;
        if (pass == 1 && mc == min_cell)
            break;
        RC_CHECK(rc_cells_build(&c, b, q, n, mc) == 0, "build failed");
        RC_CHECK(check_cells(&c, b, q, n, mc),
                 "cell invariants: dim %d n %d min_cell %g", b->dim, n, mc);
        /* Two threads only where the search goes parallel (n > 512). */
        for (t = 1; t <= (n > 512 ? 2 : 1); ++t) {
            int threads = t;
            int rc = rc_cells_pairs(&c, b, q, n, cutoff, &got, threads);
            snprintf(what, sizeof what,
                     "dim %d per (%d,%d,%d) L (%g,%g,%g) nc (%d,%d,%d) n %d "
                     "cutoff %.6g threads %d",
                     b->dim, b->periodic[0], b->periodic[1], b->periodic[2],
                     b->L[0], b->L[1], b->L[2], c.nc[0], c.nc[1], c.nc[2], n,
                     cutoff, threads);
            RC_CHECK(rc == 0, "pairs failed: %s", what);
            RC_CHECK(same_pairs(&got, &ref, what), "pairs differ: %s", what);
        }
    }
    rc_pairs_free(&ref);
    rc_pairs_free(&got);
    rc_cells_free(&c);
    free(q);
}

static void test_random(void)
{
    /* Cells per axis wanted at min_cell = 1: L = nc + 0.37. */
    static const int grids[][3] = {{1, 1, 1}, {2, 2, 2}, {3, 3, 3},
                                   {9, 9, 9}, {1, 2, 3}, {3, 9, 2}};
    static const int pers[][3] = {{1, 1, 1}, {0, 0, 0}, {1, 0, 1}, {0, 1, 0}};
    static const int ns[] = {0, 1, 2, 3, 17, 200, 700, 3000};
    unsigned long long seed = 1;
    int dim, g, p, in;
    for (dim = 2; dim <= 3; ++dim)
        for (g = 0; g < (int)(sizeof grids / sizeof grids[0]); ++g)
            for (p = 0; p < (int)(sizeof pers / sizeof pers[0]); ++p)
                for (in = 0; in < (int)(sizeof ns / sizeof ns[0]); ++in) {
                    rc_k_box b;
                    double L[3], rmax = 0.0, cutoff;
                    unsigned long long st = ++seed * 7919;
                    int k, i, n = ns[in], allow_edge = 1;
                    double vol = 1.0;
                    /* The largest n only on the finest grid, periodic
                     * and mixed: its O(n^2) reference is the cost. */
                    if (n > 1000 && (g != 3 || (p != 0 && p != 2)))
                        continue;
                    for (k = 0; k < 3; ++k) {
                        L[k] = grids[g][k] + 0.37;
                        if (k < dim && pers[p][k] && grids[g][k] == 1)
                            allow_edge = 0;
                    }
                    make_box(&b, dim, L, pers[p]);
                    /* At most 40 particles per unit volume: at cutoff 1
                     * the lists reach ~80 (the long-list sort), and the
                     * O(n^2) reference stays fast. */
                    for (k = 0; k < dim; ++k)
                        vol *= L[k];
                    if (n > 40.0 * vol)
                        n = (int)(40.0 * vol);
                    /* Polydisperse radii in [0.1, 0.3]: cutoff = 2 r_max +
                     * margin <= 0.65, below L/2 = 0.685 of the smallest
                     * periodic axis and below the unit cell edge. */
                    for (i = 0; i < (n > 0 ? n : 1); ++i)
                        rmax = fmax(rmax, 0.1 + 0.2 * rc_test_uniform(&st));
                    cutoff = 2.0 * rmax + 0.05 * rc_test_uniform(&st);
                    run_case(&b, n, 1.0, cutoff, seed, n <= 300);
                    /* The limit: cutoff = min_cell, the largest these
                     * cells allow (only where L/2 allows it too), in the
                     * mid-size runs; test_exact_edge has edge == cutoff. */
                    if (allow_edge && n >= 200 && n <= 1000)
                        run_case(&b, n, 1.0, 1.0, seed + 1000003, n <= 300);
                }
}

/* Cells exactly as wide as the cutoff (L / cutoff an integer, the usual
 * min_cell = cutoff call), where a pair can sit a whisker under one edge
 * apart across two cell boundaries. */
static void test_exact_edge(void)
{
    static const double Ls[][3] = {{8.0, 8.0, 8.0}, {6.0, 5.0, 7.0}};
    static const int pers[][3] = {{1, 1, 1}, {0, 1, 0}};
    int a, dim;
    for (dim = 2; dim <= 3; ++dim)
        for (a = 0; a < 2; ++a) {
            rc_k_box b;
            make_box(&b, dim, Ls[a], pers[a]);
            run_case(&b, dim == 3 ? 1500 : 800, 1.0, 1.0, 4242 + 10 * a + dim,
                     0);
        }
}

/* L / min_cell can round up to an integer k although L / k < min_cell:
 * the grid must then have k - 1 cells, or its edge breaks the promise
 * edge >= min_cell (and the pair search at cutoff min_cell). */
static void test_rounded_grid(void)
{
    unsigned long long st = 23;
    int tries, found = 0;
    for (tries = 0; tries < 100000 && !found; ++tries) {
        double m = 0.05 + 3.0 * rc_test_uniform(&st);
        double L = nextafter(5.0 * m, 0.0);
        int s;
        for (s = 0; s < 3 && !found; ++s, L = nextafter(L, 0.0))
            if (floor(L / m) == 5.0 && L / 5.0 < m) {
                rc_k_box b;
                rc_cells c;
                rc_pairs p;
                double Lv[3], q[3 * 40];
                int per[3] = {1, 1, 1};
                unsigned long long s2 = 5;
                found = 1;
                memset(&c, 0, sizeof c);
                memset(&p, 0, sizeof p);
                Lv[0] = Lv[1] = Lv[2] = L;
                make_box(&b, 3, Lv, per);
                random_positions(&b, q, 40, &s2);
                RC_CHECK(rc_cells_build(&c, &b, q, 40, m) == 0, "build");
                RC_CHECK(c.nc[0] == 4 && c.edge[0] >= m,
                         "L %.17g min_cell %.17g: nc %d edge %.17g", L, m,
                         c.nc[0], c.edge[0]);
                RC_CHECK(rc_cells_pairs(&c, &b, q, 40, m, &p, 1) == 0,
                         "pairs at cutoff min_cell refused");
                rc_pairs_free(&p);
                rc_cells_free(&c);
            }
    }
    RC_CHECK(found, "no rounded-up quotient found to test");
}

/* pair_close takes periodic differences up to L/4 as they are, on the
 * premise that rc_k_box_delta leaves them untouched; check that premise
 * (bit for bit) where it is tightest, at |d| = L/4, and at random. */
static void test_image_premise(void)
{
    static const double Ls[] = {1.0, 1.37, 3.0, 10.0, 38.2254, 1e-3, 7e5};
    unsigned long long st = 17;
    int a, r, bad = 0;
    for (a = 0; a < (int)(sizeof Ls / sizeof Ls[0]); ++a) {
        rc_k_box b;
        double L[3], zero[3] = {0.0, 0.0, 0.0};
        int per[3] = {1, 1, 1};
        L[0] = L[1] = L[2] = Ls[a];
        make_box(&b, 3, L, per);
        for (r = 0; r < 2000; ++r) {
            double qi[3], x[3];
            int k;
            for (k = 0; k < 3; ++k) {
                double u = rc_test_uniform(&st);
                qi[k] = r == 0 ? 0.25 * Ls[a] : r == 1 ? -0.25 * Ls[a]
                      : (2.0 * u - 1.0) * 0.25 * Ls[a];
            }
            rc_k_box_delta(&b, qi, zero, x);
            for (k = 0; k < 3; ++k)
                if (memcmp(&x[k], &qi[k], sizeof(double)) != 0 && !bad) {
                    bad = 1;
                    fprintf(stderr, "premise: L %g d %.17g -> %.17g\n",
                            Ls[a], qi[k], x[k]);
                }
        }
    }
    RC_CHECK(!bad, "rc_k_box_delta changes a difference within L/4");
}

/* ----------------------------------------------------- boundary cases */

static void expect_list(const rc_pairs *p, int m, const int *ij,
                        const char *what)
{
    rc_pairs want;
    int e;
    memset(&want, 0, sizeof want);
    for (e = 0; e < m; ++e)
        rc_pairs_push(&want, ij[2 * e], ij[2 * e + 1]);
    RC_CHECK(same_pairs(p, &want, what), "%s", what);
    rc_pairs_free(&want);
}

static void test_boundaries(void)
{
    rc_k_box b;
    rc_cells c;
    rc_pairs p, ref;
    double L[3] = {10.0, 10.0, 10.0};
    int per[3] = {1, 1, 1}, wall[3] = {0, 0, 0};
    double top = nextafter(10.0, 0.0);
    /* 0 and 1: same point up to one ulp across x = 0 / L; 2 and 3: across
     * the corner, distance sqrt(0.18); 4 alone in the middle. */
    double q3[] = {0.0, 5.0, 5.0, top, 5.0, 5.0, 0.3, 0.0, 0.0,
                   9.9, 9.9, 9.9, 5.0, 5.0, 5.0};
    static const int want3[] = {0, 1, 2, 3};
    /* Walled 2-D: 0 at the origin, 1 at the far corner (q == L allowed),
     * 2 next to it; 3 at (L, 5) opposite 4 at (0, 5), which would pair
     * through a periodic x. */
    double q2[] = {0.0, 0.0, 10.0, 10.0, 9.5, 10.0, 10.0, 5.0, 0.0, 5.0};
    static const int want2[] = {1, 2};
    int rc;
    memset(&c, 0, sizeof c);
    memset(&p, 0, sizeof p);
    memset(&ref, 0, sizeof ref);

    make_box(&b, 3, L, per);
    RC_CHECK(rc_cells_build(&c, &b, q3, 5, 1.0) == 0, "build");
    RC_CHECK(c.nc[0] == 10 && c.cell_of[0] % 10 == 0 &&
                 c.cell_of[1] % 10 == 9,
             "x cells of the particles at 0 and below L: %d %d (nc %d)",
             c.cell_of[0] % 10, c.cell_of[1] % 10, c.nc[0]);
    rc = rc_cells_pairs(&c, &b, q3, 5, 1.0, &p, 1);
    RC_CHECK(rc == 0, "pairs rc %d", rc);
    expect_list(&p, 2, want3, "periodic straddle");

    /* A position a hair outside [0, L) on a periodic axis still wraps to
     * the neighbouring cell (robustness, not a promise of the header). */
    q3[0] = -1e-15;
    RC_CHECK(rc_cells_build(&c, &b, q3, 5, 1.0) == 0, "build");
    RC_CHECK(c.cell_of[0] % 10 == 9, "x cell of -1e-15: %d",
             c.cell_of[0] % 10);
    RC_CHECK(rc_cells_pairs(&c, &b, q3, 5, 1.0, &p, 1) == 0, "pairs");
    expect_list(&p, 2, want3, "periodic straddle, -1e-15");

    make_box(&b, 2, L, wall);
    RC_CHECK(rc_cells_build(&c, &b, q2, 5, 1.0) == 0, "build");
    RC_CHECK(c.cell_of[1] == 99 && c.cell_of[0] == 0,
             "cells of (0,0) and (L,L): %d %d", c.cell_of[0], c.cell_of[1]);
    RC_CHECK(rc_cells_pairs(&c, &b, q2, 5, 1.0, &p, 2) == 0, "pairs");
    expect_list(&p, 1, want2, "walled corners");
    RC_CHECK(rc_pairs_brute(&b, q2, 5, 1.0, &ref) == 0, "brute");
    expect_list(&ref, 1, want2, "walled corners, brute");

    rc_pairs_free(&p);
    rc_pairs_free(&ref);
    rc_cells_free(&c);
}

/* ------------------------------------------------------ error returns */

static void test_errors(void)
{
    rc_k_box b;
    rc_cells c;
    rc_pairs p, ref;
    double L[3] = {10.0, 10.0, 10.0}, q[12 * 3];
    int per[3] = {1, 1, 1}, wall[3] = {0, 0, 0}, mixed[3] = {1, 0, 1};
    unsigned long long st = 99;
    memset(&c, 0, sizeof c);
    memset(&p, 0, sizeof p);
    memset(&ref, 0, sizeof ref);

    make_box(&b, 3, L, per);
    random_positions(&b, q, 12, &st);
    RC_CHECK(rc_cells_build(&c, &b, q, 12, 0.0) == -1, "min_cell 0");
    RC_CHECK(rc_cells_build(&c, &b, q, 12, -1.0) == -1, "min_cell < 0");
    RC_CHECK(rc_cells_build(&c, &b, q, 12, NAN) == -1, "min_cell NaN");
    RC_CHECK(rc_cells_build(&c, &b, q, -1, 1.0) == -1, "n < 0");

    /* Cutoff at L/2 on a periodic axis: refused even though the cells
     * (edge 5) would be large enough; one ulp below is accepted. */
    RC_CHECK(rc_cells_build(&c, &b, q, 12, 5.0) == 0 && c.nc[0] == 2,
             "build at 5");
    rc_pairs_push(&p, 0, 1);
    RC_CHECK(rc_cells_pairs(&c, &b, q, 12, 5.0, &p, 1) == -1,
             "cutoff L/2 periodic accepted");
    RC_CHECK(p.n == 0, "list not emptied on error (%ld)", p.n);
    RC_CHECK(rc_cells_pairs(&c, &b, q, 12, nextafter(5.0, 0.0), &p, 1) == 0,
             "cutoff just below L/2 refused");
    RC_CHECK(rc_pairs_brute(&b, q, 12, nextafter(5.0, 0.0), &ref) == 0 &&
                 same_pairs(&p, &ref, "just below L/2"),
             "just below L/2");

    /* Cells smaller than the cutoff. */
    RC_CHECK(rc_cells_build(&c, &b, q, 12, 1.0) == 0, "build at 1");
    RC_CHECK(rc_cells_pairs(&c, &b, q, 12, 1.5, &p, 1) == -1,
             "min_cell 1 < cutoff 1.5 accepted");
    RC_CHECK(rc_cells_pairs(&c, &b, q, 11, 0.5, &p, 1) == -1,
             "n differs from the binned n");
    RC_CHECK(rc_cells_pairs(&c, &b, q, 12, NAN, &p, 1) == -1, "cutoff NaN");
    /* Cells of a box that has since been resized. */
    {
        rc_k_box b2 = b;
        b2.L[1] = 10.5;
        RC_CHECK(rc_cells_pairs(&c, &b2, q, 12, 0.5, &p, 1) == -1,
                 "stale cells accepted");
    }

    /* Walled: cutoff >= L/2 is fine with one cell on the axis; edge below
     * the cutoff is refused with two cells. */
    make_box(&b, 3, L, wall);
    RC_CHECK(rc_cells_build(&c, &b, q, 12, 10.0) == 0 && c.ncell == 1,
             "one cell");
    RC_CHECK(rc_cells_pairs(&c, &b, q, 12, 7.0, &p, 1) == 0,
             "walled cutoff 7 in one cell refused");
    RC_CHECK(rc_pairs_brute(&b, q, 12, 7.0, &ref) == 0 &&
                 same_pairs(&p, &ref, "walled one cell"),
             "walled one cell");
    RC_CHECK(ref.n > 0 && ref.n < 66, "walled one cell: %ld pairs of 66 "
             "(the case should separate near from far)", ref.n);
    RC_CHECK(rc_cells_build(&c, &b, q, 12, 5.0) == 0 && c.nc[0] == 2,
             "two cells");
    RC_CHECK(rc_cells_pairs(&c, &b, q, 12, 6.0, &p, 1) == -1,
             "edge 5 < cutoff 6 accepted");

    /* A thin walled axis with a single cell narrower than the cutoff is
     * searched whole: allowed, and right. */
    L[1] = 0.5;
    make_box(&b, 3, L, mixed);
    st = 5;
    random_positions(&b, q, 12, &st);
    RC_CHECK(rc_cells_build(&c, &b, q, 12, 1.0) == 0 && c.nc[1] == 1,
             "thin axis");
    RC_CHECK(rc_cells_pairs(&c, &b, q, 12, 0.9, &p, 1) == 0,
             "thin walled axis refused");
    RC_CHECK(rc_pairs_brute(&b, q, 12, 0.9, &ref) == 0 &&
                 same_pairs(&p, &ref, "thin walled axis"),
             "thin walled axis");

    rc_pairs_free(&p);
    rc_pairs_free(&ref);
    rc_cells_free(&c);
}

/* ---------------------------------------------- reuse and pair lists */

static void test_reuse(void)
{
    rc_k_box b;
    rc_cells c;
    rc_pairs p;
    double L[3] = {12.0, 12.0, 12.0};
    int per[3] = {1, 1, 1}, e, ok = 1;
    double *q = (double *)malloc(3000 * 3 * sizeof(double));
    unsigned long long st = 3;
    int *si, *sx, *sc, *pi, *pj, cap_n, cap_cell;
    memset(&c, 0, sizeof c);
    memset(&p, 0, sizeof p);
    make_box(&b, 3, L, per);
    random_positions(&b, q, 3000, &st);

    RC_CHECK(rc_cells_build(&c, &b, q, 3000, 1.0) == 0, "build");
    RC_CHECK(rc_cells_pairs(&c, &b, q, 3000, 1.0, &p, 2) == 0, "pairs");
    si = c.start;
    sx = c.index;
    sc = c.cell_of;
    pi = p.i;
    pj = p.j;
    cap_n = c.cap_n;
    cap_cell = c.cap_cell;
    /* Fewer particles, coarser grid, same pair count: nothing moves. */
    RC_CHECK(rc_cells_build(&c, &b, q, 2000, 1.5) == 0, "rebuild");
    RC_CHECK(c.start == si && c.index == sx && c.cell_of == sc &&
                 c.cap_n == cap_n && c.cap_cell == cap_cell,
             "cell arrays reallocated although nothing grew");
    RC_CHECK(rc_cells_build(&c, &b, q, 3000, 1.0) == 0, "rebuild");
    RC_CHECK(rc_cells_pairs(&c, &b, q, 3000, 1.0, &p, 1) == 0, "pairs");
    RC_CHECK(p.i == pi && p.j == pj, "pair arrays reallocated");

    rc_pairs_free(&p);
    for (e = 0; e < 5000; ++e)
        RC_CHECK(rc_pairs_push(&p, e, 2 * e + 1) == 0, "push %d", e);
    for (e = 0; e < 5000; ++e)
        ok &= p.i[e] == e && p.j[e] == 2 * e + 1;
    RC_CHECK(p.n == 5000 && p.cap >= 5000 && ok, "push contents");
    rc_pairs_free(&p);
    RC_CHECK(p.n == 0 && p.cap == 0 && !p.i && !p.j, "free resets");
    rc_cells_free(&c);
    RC_CHECK(!c.start && !c.index && !c.cell_of && c.cap_n == 0, "free");
    free(q);
}

/* ------------------------------------------------------------ islands */

/* Components by breadth-first search over a CSR adjacency; scanning
 * start vertices upwards makes each start the component's minimum. */
static void bfs_labels(int n, const int *pi, const int *pj, long m,
                       int *label)
{
    int *deg = (int *)calloc((size_t)n + 1, sizeof(int));
    int *adj = (int *)malloc((size_t)(2 * m + 1) * sizeof(int));
    int *fill = (int *)calloc((size_t)n + 1, sizeof(int));
    int *queue = (int *)malloc((size_t)n * sizeof(int) + 1);
    long e;
    int v, s;
    for (e = 0; e < m; ++e) {
        ++deg[pi[e] + 1];
        ++deg[pj[e] + 1];
    }
    for (v = 0; v < n; ++v)
        deg[v + 1] += deg[v];
    for (e = 0; e < m; ++e) {
        adj[deg[pi[e]] + fill[pi[e]]++] = pj[e];
        adj[deg[pj[e]] + fill[pj[e]]++] = pi[e];
    }
    for (v = 0; v < n; ++v)
        label[v] = -1;
    for (s = 0; s < n; ++s) {
        int head = 0, tail = 0;
        if (label[s] >= 0)
            continue;
        label[s] = s;
        queue[tail++] = s;
        while (head < tail) {
            int u = queue[head++], a;
            for (a = deg[u]; a < deg[u + 1]; ++a)
                if (label[adj[a]] < 0) {
                    label[adj[a]] = s;
                    queue[tail++] = adj[a];
                }
        }
    }
    free(deg);
    free(adj);
    free(fill);
    free(queue);
}

static void test_islands(void)
{
    static const int ns[] = {0, 1, 2, 7, 100, 2000};
    static const double dens[] = {0.0, 0.1, 0.4, 0.6, 1.0, 3.0};
    unsigned long long st = 77;
    int in, id, comps_seen_many = 0, comps_seen_one = 0;
    for (in = 0; in < (int)(sizeof ns / sizeof ns[0]); ++in)
        for (id = 0; id < (int)(sizeof dens / sizeof dens[0]); ++id) {
            int n = ns[in], v, nbad = -1, ncomp = 0;
            long m = n > 0 ? (long)(dens[id] * n) : 0, e;
            int *pi = (int *)malloc(((size_t)m + 1) * sizeof(int));
            int *pj = (int *)malloc(((size_t)m + 1) * sizeof(int));
            int *lab = (int *)malloc(((size_t)n + 1) * sizeof(int));
            int *par = (int *)malloc(((size_t)n + 1) * sizeof(int));
            int *ref = (int *)malloc(((size_t)n + 1) * sizeof(int));
            for (e = 0; e < m; ++e) { /* self loops and repeats included */
                pi[e] = (int)(rc_test_uniform(&st) * n);
                pj[e] = (int)(rc_test_uniform(&st) * n);
            }
            bfs_labels(n, pi, pj, m, ref);
            rc_islands_label(n, pi, pj, m, lab, par);
            for (v = 0; v < n; ++v) {
                if (lab[v] != ref[v] && nbad < 0)
                    nbad = v;
                ncomp += ref[v] == v;
            }
            RC_CHECK(nbad < 0, "islands n %d m %ld: vertex %d label %d, "
                     "BFS %d", n, m, nbad, nbad >= 0 ? lab[nbad] : 0,
                     nbad >= 0 ? ref[nbad] : 0);
            /* label may alias parent. */
            rc_islands_label(n, pi, pj, m, par, par);
            RC_CHECK(n == 0 || memcmp(par, ref, (size_t)n * sizeof(int)) == 0,
                     "islands with label == parent, n %d m %ld", n, m);
            comps_seen_many += n >= 100 && ncomp > 1 && ncomp < n;
            comps_seen_one += n >= 100 && ncomp == 1;
            free(pi);
            free(pj);
            free(lab);
            free(par);
            free(ref);
        }
    /* The densities must span fragmented and connected graphs, or the
     * comparison above proves little. */
    RC_CHECK(comps_seen_many > 0 && comps_seen_one > 0,
             "graph mix: %d fragmented, %d connected", comps_seen_many,
             comps_seen_one);

    /* Islands of a cell-list contact graph, edge order from the list. */
    {
        rc_k_box b;
        rc_cells c;
        rc_pairs p;
        double L[3] = {8.0, 8.0, 8.0}, q[400 * 3];
        int per[3] = {1, 0, 1}, lab[400], par[400], ref[400];
        unsigned long long s2 = 11;
        memset(&c, 0, sizeof c);
        memset(&p, 0, sizeof p);
        make_box(&b, 3, L, per);
        random_positions(&b, q, 400, &s2);
        RC_CHECK(rc_cells_build(&c, &b, q, 400, 1.0) == 0 &&
                     rc_cells_pairs(&c, &b, q, 400, 1.0, &p, 2) == 0,
                 "contact graph");
        bfs_labels(400, p.i, p.j, p.n, ref);
        rc_islands_label(400, p.i, p.j, p.n, lab, par);
        RC_CHECK(memcmp(lab, ref, sizeof lab) == 0, "contact islands");
        rc_pairs_free(&p);
        rc_cells_free(&c);
    }
}

int main(void)
{
    test_boundaries();
    test_errors();
    test_reuse();
    test_random();
    test_exact_edge();
    test_image_premise();
    test_rounded_grid();
    test_islands();
    /* The sort of long lists (heapsort above 32 entries) must have run. */
    RC_CHECK(g_longest > 32, "longest neighbour list %ld: long-list sort "
             "not exercised", g_longest);
    printf("random configurations: %d\n", g_cases);
    return rc_test_finish("test_md_cells");
}

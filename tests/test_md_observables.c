/* The radial distribution function and the blocking error estimate
 * (src/host/md/observables.c).
 *
 * g(r) is histogrammed from a cell list (rc_rdf_add); its counts are
 * compared bin by bin, exactly, with the definition: a plain O(n^2) loop
 * over i < j, distances by rc_k_box_delta, the bin of the distance
 * (brute_hist below) -- periodic, walled and mixed boxes in 2-D and 3-D,
 * random and lattice positions, contact pairs of mixed radii, pairs at
 * half the box and on bin edges, rmax from a fraction of a sphere to
 * half the box (and beyond on walls), 1 and 2 threads.  No tolerance:
 * counts are integers.  Random numbers are splitmix64 with fixed seeds
 * (rc_test_uniform), so every failure reproduces bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/observables.h"
#include "rc_test.h"

static const double pi_ = 3.14159265358979323846;

static double normal_(unsigned long long *s)
{
    double u1 = rc_test_uniform(s), u2 = rc_test_uniform(s);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * pi_ * u2);
}

static double shell_(int dim, double r1, double r2)
{
    return dim == 2 ? pi_ * (r2 * r2 - r1 * r1)
                    : (4.0 / 3.0) * pi_ * (r2 * r2 * r2 - r1 * r1 * r1);
}

/* The definition, by all n (n - 1) / 2 pairs i < j: x = the minimum
 * image of q_i - q_j (rc_k_box_delta), r^2 summed in axis order, d =
 * sqrt(r^2); pairs with d < rmax counted in bin (long)(d nbins / rmax),
 * the last bin if that rounds to nbins.  Adds into h[nbins]. */
static void brute_hist(const rc_k_box *b, const double *q, long n,
                       double rmax, int nbins, double *h)
{
    double inv_dr = (double)nbins / rmax;
    long i, j;
    int d = b->dim;
    for (i = 0; i < n; ++i)
        for (j = i + 1; j < n; ++j) {
            double x[3], r2 = 0.0, dd;
            long k;
            rc_k_box_delta(b, q + i * d, q + j * d, x);
            for (k = 0; k < d; ++k)
                r2 += x[k] * x[k];
            dd = sqrt(r2);
            if (!(dd < rmax))
                continue;
            k = (long)(dd * inv_dr);
            if (k >= nbins)
                k = nbins - 1;
            h[k] += 1.0;
        }
}

/* Uniform random points in a periodic box: g must be 1 in every bin. */
static void test_ideal_gas(int dim, long n, long samples, int nbins,
                           unsigned long long seed)
{
    rc_k_box b;
    rc_rdf r;
    double *q = (double *)malloc((size_t)(n * dim) * sizeof(double));
    const double rmax = 5.0; /* <= min L / 2, so the minimum-image
                                distance is uniform inside the ball */
    double V, dr, sum = 0.0, worst_z = 0.0, inv_e = 0.0;
    long s, i;
    int k, bad = -1, worst = -1;
    b.dim = dim;
    b.L[0] = 10.0;
    b.L[1] = 11.0;
    b.L[2] = dim == 3 ? 12.0 : 0.0;
    b.periodic[0] = b.periodic[1] = b.periodic[2] = 1;
    V = rc_k_box_volume(&b);
    RC_CHECK(q != NULL, "allocation");
    RC_CHECK(rc_rdf_init(&r, dim, nbins, rmax) == 0, "rdf init %dD", dim);
    if (!q || !r.hist)
        goto done;
    for (s = 0; s < samples; ++s) {
        for (i = 0; i < n; ++i) {
            int a;
            for (a = 0; a < dim; ++a)
                q[i * dim + a] = b.L[a] * rc_test_uniform(&seed);
        }
        RC_CHECK(rc_rdf_add(&r, &b, q, n, 1) == 0, "%dD: rdf add", dim);
    }
    RC_CHECK(r.samples == samples && r.n == n && r.volume == V,
             "%dD: samples %ld n %ld V %g", dim, r.samples, r.n, r.volume);
    dr = rmax / nbins;
    for (k = 0; k < nbins; ++k) {
        /* Expected count of the bin: n(n-1)/2 pairs per sample, each in
         * the shell with probability shell / V.  Pair indicators are
         * binomial with zero covariance (given one particle, the other's
         * position is uniform in a periodic box), so the count's variance
         * is at most its mean (Poisson): 5 standard deviations, over 75
         * bins in all, fail by chance with probability ~4e-5. */
        double E = (double)samples * 0.5 * (double)n * (double)(n - 1) *
                   shell_(dim, k * dr, (k + 1) * dr) / V;
        double g = rc_rdf_value(&r, k);
        double z = fabs(g - 1.0) * sqrt(E);
        if (!(z <= 5.0) && bad < 0)
            bad = k;
        if (!(z <= worst_z)) {
            worst_z = z;
            worst = k;
        }
        sum += g;
        inv_e += 1.0 / E;
    }
    RC_CHECK(bad < 0, "%dD ideal gas: g[%d] = %.6g, worst |g-1| = %.3g sd "
             "at bin %d", dim, bad, bad >= 0 ? rc_rdf_value(&r, bad) : 0.0,
             worst_z, worst);
    /* The bin mean's standard deviation, (1/B) sqrt(sum 1/E_b) (printed),
     * is 0.17 % (3-D) and 0.06 % (2-D) for the sizes in main(), so 1 %
     * is > 5 sd. */
    RC_CHECK(fabs(sum / nbins - 1.0) <= 0.01, "%dD ideal gas: mean g %.6g",
             dim, sum / nbins);
    printf("%dD ideal gas: mean g - 1 = %.2e (sd %.2e), worst bin %d at "
           "%.2f sd\n", dim, sum / nbins - 1.0, sqrt(inv_e) / nbins, worst,
           worst_z);
done:
    rc_rdf_free(&r);
    free(q);
}

/* Simple cubic (square in 2-D) lattice of spacing a, periodic, m cells a
 * side, translated by a random offset per sample.  Bins of
 * 0.15 a put a, sqrt 2 a, sqrt 3 a at 6.67, 9.43, 11.55 bin widths, far
 * from an edge, and rmax = 1.95 a < 2 a < m a / 2 keeps 2 a out. */
static void test_lattice(int dim)
{
    const double a = 0.7;
    const int m = 6, nbins = 13, S = 2;
    const double rmax = 1.95 * a, dr = rmax / nbins;
    /* neighbours per particle at a, sqrt 2 a, sqrt 3 a */
    const int nb3[3] = {6, 12, 8}, nb2[3] = {4, 4, 0};
    const int bin[3] = {6, 9, 11};
    const int *nb = dim == 3 ? nb3 : nb2;
    long n = dim == 3 ? (long)m * m * m : (long)m * m, i;
    unsigned long long seed = 77;
    double *q = (double *)malloc((size_t)(n * dim) * sizeof(double));
    double V;
    rc_k_box b;
    rc_rdf r;
    int s, k, c;
    b.dim = dim;
    b.L[0] = b.L[1] = b.L[2] = m * a;
    b.periodic[0] = b.periodic[1] = b.periodic[2] = 1;
    V = rc_k_box_volume(&b);
    RC_CHECK(q != NULL, "allocation");
    RC_CHECK(rc_rdf_init(&r, dim, nbins, rmax) == 0, "rdf init");
    if (!q || !r.hist)
        goto done;
    for (s = 0; s < S; ++s) {
        double off[3];
        for (c = 0; c < dim; ++c)
            off[c] = a * rc_test_uniform(&seed);
        for (i = 0; i < n; ++i) {
            long t = i;
            for (c = 0; c < dim; ++c) {
                q[i * dim + c] = (double)(t % m) * a + off[c];
                t /= m;
            }
        }
        RC_CHECK(rc_rdf_add(&r, &b, q, n, 2) == 0, "rdf add");
    }
    for (k = 0; k < nbins; ++k) {
        /* Counts are sums of 1.0 (exact); each pair counted once, so a
         * shell holding z neighbours per particle gets n z / 2 a sample. */
        double want = 0.0;
        for (c = 0; c < 3; ++c)
            if (bin[c] == k)
                want = (double)S * (double)n * nb[c] / 2.0;
        RC_CHECK(r.hist[k] == want, "%dD lattice: bin %d count %g, want %g",
                 dim, k, r.hist[k], want);
        if (want > 0.0) {
            /* Independent normalisation; both sides are a handful of
             * rounded operations on the same values: 1e-12. */
            double g = want / ((double)S * 0.5 * (double)n *
                               ((double)(n - 1) / V) *
                               shell_(dim, k * dr, (k + 1) * dr));
            RC_CHECK(rc_test_close(rc_rdf_value(&r, k), g, 1e-12, 0.0),
                     "%dD lattice: g[%d] %.17g, want %.17g", dim, k,
                     rc_rdf_value(&r, k), g);
        }
    }

    /* The CSV: header, then nbins rows of bin centre and g.  %.10g keeps
     * 10 significant digits, so a value read back is within 5e-10
     * relative of the stored one: 1e-9. */
    {
        FILE *f = tmpfile();
        char line[256];
        int rows = 0, ok = 1;
        RC_CHECK(f != NULL, "tmpfile");
        if (f) {
            RC_CHECK(rc_rdf_write(&r, f) == 0, "rdf write");
            rewind(f);
            RC_CHECK(fgets(line, sizeof line, f) && !strcmp(line, "r,g\n"),
                     "csv header");
            while (fgets(line, sizeof line, f)) {
                double rr, gg;
                if (sscanf(line, "%lf,%lf", &rr, &gg) != 2 || rows >= nbins ||
                    !rc_test_close(rr, (rows + 0.5) * dr, 1e-9, 0.0) ||
                    !rc_test_close(gg, rc_rdf_value(&r, rows), 1e-9, 0.0))
                    ok = 0;
                ++rows;
            }
            RC_CHECK(ok && rows == nbins, "csv rows %d (want %d), ok %d",
                     rows, nbins, ok);
            fclose(f);
        }
    }
done:
    rc_rdf_free(&r);
    free(q);
}

/* Position kinds of exact_case. */
enum { POS_RANDOM, POS_CONTACT, POS_LATTICE, POS_HALF };

/* n positions of one kind in box b:
 *   RANDOM   uniform; 1 coordinate in 16 exactly on 0, 1 in 16 on the
 *            top (just below L periodic, L on a wall), and on periodic
 *            axes 1 in 32 a hair outside the box (-1e-15 L or L (1 +
 *            1e-15)), where cells wrap and the image shift of a
 *            neighbour cell is not the particle's;
 *   CONTACT  pairs touching as spheres of mixed radii (0.3, 0.45, 0.5,
 *            0.7: contact distances 0.6 .. 1.4) in random directions,
 *            wrapped into the box (or clamped onto a wall);
 *   LATTICE  the integer lattice (spacing 1; L integers): distances
 *            sqrt(integer), 1, 2, 3 exactly on bin edges when
 *            nbins / rmax is an integer;
 *   HALF     pairs L/2 apart on axis 0 give or take 0 .. 3 ulps, 3 in 4
 *            of them level on the other axes: with L = 12, d/L + 1/2
 *            can round to 1 from below, so the minimum images of q_i -
 *            q_j and of q_j - q_i differ in the last bit and, with rmax
 *            = L/2, fall on either side of rmax (the definition takes
 *            i < j); 1 pair in 8 straddles the middle of axis 1 (1e-9
 *            either side), a cell face when that axis has an even number
 *            of cells, with the larger index in the smaller cell. */
static void positions(int kind, const rc_k_box *b, double *q, long n,
                      unsigned long long *st)
{
    static const double radii[4] = {0.3, 0.45, 0.5, 0.7};
    int d = b->dim, k;
    long i;
    for (i = 0; i < n; ++i)
        for (k = 0; k < d; ++k) {
            double u = rc_test_uniform(st), v = rc_test_uniform(st);
            double x = u * b->L[k];
            if (kind == POS_RANDOM) {
                if (v < 1.0 / 16)
                    x = 0.0;
                else if (v < 2.0 / 16)
                    x = b->periodic[k] ? nextafter(b->L[k], 0.0) : b->L[k];
                else if (b->periodic[k] && v < 2.0 / 16 + 1.0 / 64)
                    x = -1e-15 * b->L[k];
                else if (b->periodic[k] && v < 2.0 / 16 + 1.0 / 32)
                    x = b->L[k] * (1.0 + 1e-15);
            }
            q[i * d + k] = x;
        }
    if (kind == POS_LATTICE) {
        for (i = 0; i < n; ++i) {
            long t = i;
            for (k = 0; k < d; ++k) {
                long m = (long)b->L[k];
                q[i * d + k] = (double)(t % m);
                t /= m;
            }
        }
    }
    if (kind == POS_CONTACT || kind == POS_HALF)
        for (i = 0; i + 1 < n; i += 2) {
            double dir[3], nn = 0.0, dist;
            for (k = 0; k < d; ++k) {
                dir[k] = normal_(st);
                nn += dir[k] * dir[k];
            }
            dist = radii[(int)(4.0 * rc_test_uniform(st))] +
                   radii[(int)(4.0 * rc_test_uniform(st))];
            for (k = 0; k < d; ++k) {
                double x = q[i * d + k] + dist * dir[k] / sqrt(nn);
                if (kind == POS_HALF) {
                    int ulps = (int)(7.0 * rc_test_uniform(st)) - 3;
                    x = q[i * d + k];
                    if (k == 0) {
                        x += 0.5 * b->L[0];
                        for (; ulps > 0; --ulps)
                            x = nextafter(x, HUGE_VAL);
                        for (; ulps < 0; ++ulps)
                            x = nextafter(x, -HUGE_VAL);
                    } else if (i % 8 == 2) {
                        x += 0.3 * (rc_test_uniform(st) - 0.5);
                    } else if (i % 8 == 4 && k == 1) {
                        q[i * d + 1] = 0.5 * b->L[1] + 1e-9;
                        x = 0.5 * b->L[1] - 1e-9;
                    }
                }
                if (b->periodic[k])
                    x -= b->L[k] * floor(x / b->L[k]);
                else
                    x = x < 0.0 ? 0.0 : x > b->L[k] ? b->L[k] : x;
                if (b->periodic[k] && x >= b->L[k])
                    x = 0.0;
                q[(i + 1) * d + k] = x;
            }
        }
}

/* The histogram of rc_rdf_add against brute_hist for one configuration,
 * bin by bin and exactly: on 1 thread, and on 2 threads added twice into
 * one rdf, which must hold twice the counts: the first time lent scratch
 * one double short (ignored: its own scratch), the second lent enough
 * (used for the positions, and left to the caller: freed here). */
static void exact_case(const char *what, int dim, const double *L,
                       const int *per, long n, int kind, double rmax,
                       int nbins, unsigned long long seed)
{
    rc_k_box b;
    rc_rdf r1, r2;
    double *q = (double *)malloc((size_t)(n * dim) * sizeof(double));
    double *ref = (double *)calloc((size_t)nbins, sizeof(double));
    double *lend = NULL;
    double total = 0.0;
    int k, bad1 = -1, bad2 = -1;
    b.dim = dim;
    for (k = 0; k < 3; ++k) {
        b.L[k] = k < dim ? L[k] : 0.0;
        b.periodic[k] = k < dim ? per[k] : 0;
    }
    memset(&r1, 0, sizeof r1);
    memset(&r2, 0, sizeof r2);
    RC_CHECK(q && ref, "%s: allocation", what);
    if (!q || !ref)
        goto done;
    positions(kind, &b, q, n, &seed);
    brute_hist(&b, q, n, rmax, nbins, ref);
    RC_CHECK(rc_rdf_init(&r1, dim, nbins, rmax) == 0 &&
                 rc_rdf_init(&r2, dim, nbins, rmax) == 0,
             "%s: init", what);
    RC_CHECK(rc_rdf_add(&r1, &b, q, n, 1) == 0, "%s: add, 1 thread", what);
    lend = (double *)malloc((size_t)(n * dim) * sizeof(double));
    RC_CHECK(lend != NULL, "%s: allocation", what);
    if (!lend)
        goto done;
    for (k = 0; k < n * dim; ++k)
        lend[k] = NAN;
    r2.lent = lend;
    r2.lent_n = n * dim - 1;
    RC_CHECK(rc_rdf_add(&r2, &b, q, n, 2) == 0 && !r2.lent && !r2.soa &&
                 isnan(lend[0]),
             "%s: add, 2 threads, short lent scratch (not used)", what);
    r2.lent = lend;
    r2.lent_n = n * dim;
    RC_CHECK(rc_rdf_add(&r2, &b, q, n, 2) == 0 && !r2.lent && !r2.soa &&
                 !isnan(lend[0]),
             "%s: add, 2 threads, lent scratch (used)", what);
    for (k = 0; k < nbins; ++k) {
        if (r1.hist[k] != ref[k] && bad1 < 0)
            bad1 = k;
        if (r2.hist[k] != 2.0 * ref[k] && bad2 < 0)
            bad2 = k;
        total += ref[k];
    }
    RC_CHECK(bad1 < 0, "%s, 1 thread: bin %d holds %.0f, definition %.0f",
             what, bad1, bad1 >= 0 ? r1.hist[bad1] : 0.0,
             bad1 >= 0 ? ref[bad1] : 0.0);
    RC_CHECK(bad2 < 0, "%s, 2 threads twice: bin %d holds %.0f, want %.0f",
             what, bad2, bad2 >= 0 ? r2.hist[bad2] : 0.0,
             bad2 >= 0 ? 2.0 * ref[bad2] : 0.0);
    /* not vacuous: pairs were counted */
    RC_CHECK(total > 0.0, "%s: no pairs within rmax", what);
    printf("%s: %ld particles, %.0f pairs below rmax = %g, equal\n", what, n,
           total, rmax);
done:
    rc_rdf_free(&r1);
    rc_rdf_free(&r2);
    free(lend);
    free(q);
    free(ref);
}

static void test_rdf_exact(void)
{
    static const int P3[3] = {1, 1, 1}, W3[3] = {0, 0, 0},
                     M3[3] = {1, 1, 0}, P2[3] = {1, 1, 0},
                     M2[3] = {0, 1, 0};
    const double cube12[3] = {12, 12, 12}, box3[3] = {9, 10, 11},
                 cube9[3] = {9, 9, 9}, slab[3] = {10, 10, 14},
                 cube10[3] = {10, 10, 10}, cube8[3] = {8, 8, 8},
                 sq[3] = {40, 30, 0}, sq12[3] = {12, 12, 0},
                 rect[3] = {20, 25, 0}, sq30[3] = {30, 30, 0},
                 long3[3] = {12, 26, 26}, long2[3] = {12, 26, 0};
    /* periodic 3-D, cells of 2.5..3: the common case (3000 particles, so
     * that 2 threads share the walk) */
    exact_case("3-D periodic random", 3, cube12, P3, 3000, POS_RANDOM, 2.5,
               50, 1);
    exact_case("3-D periodic contacts, mixed radii", 3, box3, P3, 3000,
               POS_CONTACT, 1.5, 60, 2);
    /* rmax a quarter, 0.45 and exactly half the box: 4, 2 and 1 cells an
     * axis (2 cells: the wrapped and the direct neighbour coincide) */
    exact_case("3-D rmax L/4", 3, cube12, P3, 2500, POS_RANDOM, 3.0, 40, 3);
    exact_case("3-D rmax 0.45 L", 3, cube9, P3, 900, POS_RANDOM, 4.05, 45,
               4);
    exact_case("3-D rmax L/2", 3, cube9, P3, 900, POS_RANDOM, 4.5, 45, 5);
    exact_case("3-D pairs at L/2, rmax L/2", 3, cube12, P3, 2000, POS_HALF,
               6.0, 50, 6);
    exact_case("3-D pairs at L/2 across cells", 3, long3, P3, 2000, POS_HALF,
               6.0, 50, 16);
    /* walls: all, and a slab periodic in x and y */
    exact_case("3-D walled, rmax > L", 3, cube8, W3, 800, POS_RANDOM, 10.0,
               20, 7);
    exact_case("3-D walled contacts", 3, cube8, W3, 2200, POS_CONTACT, 2.0,
               40, 8);
    exact_case("3-D slab (walls on z)", 3, slab, M3, 2500, POS_RANDOM, 2.0,
               40, 9);
    /* distances on bin edges: 1, 2, 3 at bins 4, 8, 12 of width 1/4 */
    exact_case("3-D lattice, edges", 3, cube10, P3, 1000, POS_LATTICE, 3.5,
               14, 10);
    /* 2-D */
    exact_case("2-D periodic random", 2, sq, P2, 3000, POS_RANDOM, 5.0, 100,
               11);
    exact_case("2-D rmax L/2", 2, sq12, P2, 600, POS_RANDOM, 6.0, 60, 12);
    exact_case("2-D pairs at L/2", 2, sq12, P2, 2000, POS_HALF, 6.0, 30, 13);
    exact_case("2-D pairs at L/2 across cells", 2, long2, P2, 2000, POS_HALF,
               6.0, 30, 17);
    exact_case("2-D walls on x, contacts", 2, rect, M2, 2500, POS_CONTACT,
               3.0, 60, 14);
    exact_case("2-D lattice, edges", 2, sq30, P2, 900, POS_LATTICE, 5.0, 20,
               15);
    /* a range short against the box: the grid for rmax would hold
     * (60/0.6)^2 (60/0.075) = 8e6 cells for 2000 particles (issue 15: a
     * tiny output.rdf_rmax, or spheres of radius 100 in the example's
     * rdf_rmax 3, failed as "out of memory for g(r)"); the cells widened
     * to the budget must find the same pairs */
    {
        const double big3[3] = {60, 60, 60}, big2[3] = {400, 400, 0};
        exact_case("3-D range short against the box", 3, big3, P3, 2000,
                   POS_CONTACT, 0.6, 30, 18);
        exact_case("2-D range short against the box", 2, big2, P2, 1500,
                   POS_CONTACT, 1.2, 30, 19);
    }
}

static void test_rdf_edges(void)
{
    rc_rdf r;
    rc_k_box b;
    double q[3 * 3] = {0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0};
    RC_CHECK(rc_rdf_init(&r, 4, 10, 1.0) == -1, "dim 4 refused");
    RC_CHECK(rc_rdf_init(&r, 3, 0, 1.0) == -1, "0 bins refused");
    RC_CHECK(rc_rdf_init(&r, 3, 10, 0.0) == -1, "rmax 0 refused");
    RC_CHECK(rc_rdf_init(&r, 3, 10, NAN) == -1, "rmax NaN refused");
    RC_CHECK(rc_rdf_init(&r, 3, 10, 3.0) == 0, "init");
    RC_CHECK(isnan(rc_rdf_value(&r, 0)), "g before any sample is NaN");
    b.dim = 3;
    b.L[0] = b.L[1] = b.L[2] = 10.0;
    b.periodic[0] = b.periodic[1] = b.periodic[2] = 1;
    RC_CHECK(rc_rdf_add(&r, &b, q, 3, 1) == 0, "add");
    /* A later sample with another n: the first n and V are kept. */
    b.L[0] = 20.0;
    RC_CHECK(rc_rdf_add(&r, &b, q, 2, 2) == 0, "add n = 2");
    RC_CHECK(r.n == 3 && r.volume == 1000.0 && r.samples == 2,
             "first n, V kept: n %ld V %g samples %ld", r.n, r.volume,
             r.samples);
    /* distances 1, 2, sqrt 5 in the first sample, 1 in the second; bins
     * of 0.3 */
    RC_CHECK(r.hist[3] == 2.0 && r.hist[6] == 1.0 && r.hist[7] == 1.0,
             "counts at 1, 2, sqrt 5: %g %g %g", r.hist[3], r.hist[6],
             r.hist[7]);
    /* refused: another dimension, no positions, a bad box; nothing
     * added */
    b.dim = 2;
    RC_CHECK(rc_rdf_add(&r, &b, q, 3, 1) == -1, "dim 2 into a 3-D rdf");
    b.dim = 3;
    RC_CHECK(rc_rdf_add(&r, &b, NULL, 3, 1) == -1, "q NULL");
    b.L[1] = 0.0;
    RC_CHECK(rc_rdf_add(&r, &b, q, 3, 1) == -1, "L = 0");
    b.L[1] = 10.0;
    RC_CHECK(r.samples == 2, "refused samples not counted: %ld", r.samples);
    /* no particles: a sample with no pairs */
    RC_CHECK(rc_rdf_add(&r, &b, q, 0, 1) == 0 && r.samples == 3,
             "n = 0: samples %ld", r.samples);
    RC_CHECK(isnan(rc_rdf_value(&r, -1)) && isnan(rc_rdf_value(&r, 10)),
             "bin out of range is NaN");
    rc_rdf_free(&r);
}

/* Blocking written out level by level, unshifted, as the oracle for the
 * exact formula (levels, pairing, dropped odd element, m - 1, maximum). */
static double block_ref_(const double *x, long n, double *mean, int *levels)
{
    double *y = (double *)malloc((size_t)n * sizeof(double)), best = 0.0;
    long m = n, i;
    int lv = 0;
    memcpy(y, x, (size_t)n * sizeof(double));
    *mean = 0.0;
    for (i = 0; i < n; ++i)
        *mean += x[i];
    *mean /= (double)n;
    while (lv == 0 || (n >= 64 && m >= 32)) {
        double mu = 0.0, v = 0.0, e;
        for (i = 0; i < m; ++i)
            mu += y[i];
        mu /= (double)m;
        for (i = 0; i < m; ++i)
            v += (y[i] - mu) * (y[i] - mu);
        e = sqrt(v / (double)m / (double)(m - 1));
        best = e > best ? e : best;
        ++lv;
        for (i = 0; i < m / 2; ++i)
            y[i] = (y[2 * i] + y[2 * i + 1]) / 2.0;
        m /= 2;
    }
    free(y);
    *levels = lv;
    return best;
}

static void test_blocking(void)
{
    const long n = 1L << 16;
    double *x = (double *)malloc((size_t)n * sizeof(double));
    double err, mean, phi = 0.9, sx, exact, ratio;
    unsigned long long seed = 2024;
    int lv, lvr;
    long i, k;
    const long sizes[] = {2, 3, 63, 64, 65, 100, 1000, 4099};
    RC_CHECK(x != NULL, "allocation");
    if (!x)
        return;

    /* Two points: mean 0.5, biased variance 0.25, error sqrt(0.25 / 1). */
    x[0] = 0.0;
    x[1] = 1.0;
    err = rc_block_stderr(x, 2, &mean, &lv);
    RC_CHECK(err == 0.5 && mean == 0.5 && lv == 1, "n=2: %g %g %d", err,
             mean, lv);

    /* Against the oracle.  Both sum at most 4099 terms of O(1) in a
     * different order (and shift): relative rounding <= n eps ~ 1e-12
     * on the variance, half that on its root: 1e-11. */
    for (i = 0; i < n; ++i)
        x[i] = 3.0 + normal_(&seed) + (i % 7 == 0 ? 2.0 : 0.0);
    for (k = 0; k < (long)(sizeof sizes / sizeof sizes[0]); ++k) {
        double mr, er = block_ref_(x, sizes[k], &mr, &lvr);
        err = rc_block_stderr(x, sizes[k], &mean, &lv);
        RC_CHECK(rc_test_close(err, er, 1e-11, 0.0) &&
                     rc_test_close(mean, mr, 1e-11, 0.0) && lv == lvr,
                 "n=%ld: error %.17g (ref %.17g), mean %.17g (ref %.17g), "
                 "levels %d (ref %d)", sizes[k], err, er, mean, mr, lv, lvr);
    }

    /* iid N(0, 1), n = 2^16: levels 0..11 (m = 65536 .. 32).
     * The result is the maximum over levels, and the m = 32 level alone
     * is sigma/sqrt(n) sqrt(chi2_31 / 31), 12.7 % relative scatter (over
     * 1000 seeds, 23 % of them land above +10 %, so a +-10 % check would
     * pass by choice of seed).  Bounds from the estimator's distribution:
     * below, the maximum is at least the level-0 estimate, relative sd
     * 1/sqrt(2n) = 0.28 %: 0.985 is 5 sd; above, P(chi2_31/31 > 1.6^2)
     * ~ 5e-6: 1.6.  (1000 seeds gave 0.992 .. 1.499.) */
    seed = 99;
    for (i = 0; i < n; ++i)
        x[i] = normal_(&seed);
    err = rc_block_stderr(x, n, &mean, &lv);
    ratio = err * sqrt((double)n);
    RC_CHECK(lv == 12, "iid: levels %d", lv);
    RC_CHECK(ratio >= 0.985 && ratio <= 1.6, "iid: error / (sigma/sqrt n) "
             "= %.4f", ratio);
    /* The mean itself: N(0, 1/n), 5 sd. */
    RC_CHECK(fabs(mean) <= 5.0 / sqrt((double)n), "iid: mean %g", mean);
    printf("blocking iid: error / exact = %.4f over %d levels\n", ratio, lv);

    /* AR(1), phi = 0.9, unit innovations, started stationary:
     * sigma_x = 1/sqrt(1 - phi^2), and the error of the mean tends to
     * sigma_x sqrt((1 + phi)/(1 - phi) / n) (the finite-n correction is
     * 1.5e-4 relative).  Below: the maximum is at least the level-7
     * estimate (blocks of 128, m = 512), whose finite-block bias is -3.7 %
     * (variance low by 2 phi / (B (1 - phi)^2) / 19 = 7.4 %) and relative
     * sd 3.1 %: 0.963 - 4 sd = 0.84 (the unblocked error would be
     * 1/sqrt(19) = 0.23).  Above: as for iid data, the blocks of 2048
     * being nearly independent (adjacent correlation 0.2 %): 1.6.  (1000
     * seeds gave 0.894 .. 1.396; 6 % of them fall outside +-20 %.) */
    sx = 1.0 / sqrt(1.0 - phi * phi);
    x[0] = sx * normal_(&seed);
    for (i = 1; i < n; ++i)
        x[i] = phi * x[i - 1] + normal_(&seed);
    exact = sx * sqrt((1.0 + phi) / (1.0 - phi) / (double)n);
    err = rc_block_stderr(x, n, &mean, &lv);
    ratio = err / exact;
    RC_CHECK(ratio >= 0.84 && ratio <= 1.6, "AR(1): error / exact = %.4f",
             ratio);
    printf("blocking AR(1): error / exact = %.4f\n", ratio);

    /* A constant series: every level's values equal the first one, so
     * the shifted sums are exactly 0 (0.1 is not a binary fraction, so an
     * unshifted sum / n would not return it exactly). */
    for (i = 0; i < 1000; ++i)
        x[i] = 0.1;
    err = rc_block_stderr(x, 1000, &mean, &lv);
    RC_CHECK(err == 0.0 && mean == 0.1, "constant: error %g mean %.17g",
             err, mean);

    RC_CHECK(isnan(rc_block_stderr(x, 1, &mean, NULL)), "n = 1: NaN");
    RC_CHECK(isnan(rc_block_stderr(x, 0, NULL, NULL)), "n = 0: NaN");
    free(x);
}

int main(void)
{
    test_ideal_gas(3, 200, 1500, 25, 11);
    test_ideal_gas(2, 200, 500, 50, 12);
    test_lattice(3);
    test_lattice(2);
    test_rdf_edges();
    test_rdf_exact();
    test_blocking();
    return rc_test_finish("test_md_observables");
}

/* Set-up of large systems (src/host/md/setup.h): the box from a packing
 * fraction, fcc / sc / random placements without overlap, Maxwell-
 * Boltzmann momenta with zero total momentum and the exact temperature.
 * Overlaps are checked over all pairs (the O(n^2) reference), never
 * through the grid the placement itself uses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/random.h"
#include "host/md/setup.h"
#include "rc_test.h"

#define PI 3.14159265358979323846

/* Compensated (Neumaier) sum, so the test's own reference sums round
 * only a couple of times whatever n is. */
typedef struct {
    double s, c;
} ksum;

static void ksum_add(ksum *a, double x)
{
    double t = a->s + x;
    a->c += fabs(a->s) >= fabs(x) ? (a->s - t) + x : (x - t) + a->s;
    a->s = t;
}

static double ksum_get(const ksum *a) { return a->s + a->c; }

static double particle_volume(int dim, double r)
{
    return dim == 2 ? PI * r * r : 4.0 / 3.0 * PI * r * r * r;
}

static void fill_radii(long n, double *radius, double lo, double hi,
                       unsigned long long state)
{
    long i;
    for (i = 0; i < n; ++i)
        radius[i] = lo + (hi - lo) * rc_test_uniform(&state);
}

/* All pairs: minimum-image distance >= r_i + r_j (which also makes the
 * sites distinct), every position in [0, L) on periodic axes and in
 * [r_i, L - r_i] on walled ones.  Prints the worst offender. */
static void check_config(const char *what, const rc_k_box *b, long n,
                         const double *radius, const double *q)
{
    const int dim = b->dim;
    long i, j, bad_pairs = 0, bad_pos = 0, wi = -1, wj = -1, same = 0;
    double worst = INFINITY; /* smallest distance / (r_i + r_j) */
    int k;
    for (i = 0; i < n; ++i) {
        const double *qi = q + i * dim;
        for (k = 0; k < dim; ++k) {
            double lo = b->periodic[k] ? 0.0 : radius[i];
            double x = qi[k];
            int in = b->periodic[k] ? (x >= lo && x < b->L[k])
                                    : (x >= lo && x <= b->L[k] - radius[i]);
            if (!in) {
                if (bad_pos == 0)
                    fprintf(stderr, "%s: particle %ld axis %d at %.17g "
                            "outside (L = %.17g, r = %.17g, periodic %d)\n",
                            what, i, k, x, b->L[k], radius[i],
                            b->periodic[k]);
                ++bad_pos;
            }
        }
        for (j = i + 1; j < n; ++j) {
            double x[3], d, s = radius[i] + radius[j];
            rc_k_box_delta(b, qi, q + j * dim, x);
            d = sqrt(rc_dot(dim, x, x));
            if (!(d >= s))
                ++bad_pairs;
            if (d == 0.0)
                ++same;
            if (!(d / s >= worst)) {
                worst = d / s;
                wi = i;
                wj = j;
            }
        }
    }
    RC_CHECK(bad_pairs == 0,
             "%s: %ld overlapping pairs; worst (%ld, %ld) at distance / "
             "(r_i + r_j) = %.17g", what, bad_pairs, wi, wj, worst);
    RC_CHECK(same == 0, "%s: %ld pairs of coincident sites", what, same);
    RC_CHECK(bad_pos == 0, "%s: %ld coordinates outside the box", what,
             bad_pos);
}

/* Place and check; returns the placement status. */
static int place_and_check(const char *what, int kind, int dim, long n,
                           const double *radius, double eta,
                           const int periodic[3], unsigned long long seed,
                           double *q)
{
    rc_k_box b;
    char msg[512] = "";
    int rc = rc_md_box_for_packing(dim, n, radius, eta, periodic, &b);
    RC_CHECK(rc == 0, "%s: box for packing failed", what);
    if (rc)
        return rc;
    rc = rc_md_place(kind, &b, n, radius, seed, q, msg, sizeof msg);
    RC_CHECK(rc == 0, "%s: placement failed: %s", what, msg);
    if (rc == 0)
        check_config(what, &b, n, radius, q);
    return rc;
}

/* Expect a refusal whose message names every word in `words`. */
static void expect_refusal(const char *what, int kind, int dim, long n,
                           const double *radius, double eta,
                           const int periodic[3], double *q,
                           const char *const *words, int nwords)
{
    rc_k_box b;
    char msg[512] = "";
    int rc, w;
    rc = rc_md_box_for_packing(dim, n, radius, eta, periodic, &b);
    RC_CHECK(rc == 0, "%s: box for packing failed", what);
    if (rc)
        return;
    rc = rc_md_place(kind, &b, n, radius, 7, q, msg, sizeof msg);
    RC_CHECK(rc == -1, "%s: expected a refusal, got %d", what, rc);
    for (w = 0; w < nwords; ++w)
        RC_CHECK(strstr(msg, words[w]) != NULL,
                 "%s: message lacks \"%s\": \"%s\"", what, words[w], msg);
    printf("%s refused: %s\n", what, msg);
}

static void test_box(void)
{
    static const int per[3] = {1, 1, 1}, mixed[3] = {1, 0, 1};
    enum { N = 4000 };
    static double radius[N];
    static const double etas[3] = {0.05, 0.3, 0.7};
    int dim, e, poly;
    for (poly = 0; poly < 2; ++poly)
        for (dim = 2; dim <= 3; ++dim)
            for (e = 0; e < 3; ++e) {
                rc_k_box b;
                ksum v = {0.0, 0.0};
                double box, got;
                long i;
                if (poly)
                    fill_radii(N, radius, 0.4, 0.6, 11);
                else
                    for (i = 0; i < N; ++i)
                        radius[i] = 0.5;
                RC_CHECK(rc_md_box_for_packing(dim, N, radius, etas[e],
                                               poly ? mixed : per, &b) == 0,
                         "box dim %d eta %g failed", dim, etas[e]);
                for (i = 0; i < N; ++i)
                    ksum_add(&v, particle_volume(dim, radius[i]));
                box = dim == 2 ? b.L[0] * b.L[1] : b.L[0] * b.L[1] * b.L[2];
                got = ksum_get(&v) / box;
                /* compensated sum (~2 eps), one division, cbrt (<= 1
                 * ulp, tripled by the cube), two products: < 10 eps */
                RC_CHECK(rc_test_close(got, etas[e], 1e-14, 0.0),
                         "dim %d poly %d: packing fraction %.17g, want %g",
                         dim, poly, got, etas[e]);
                RC_CHECK(b.dim == dim && b.L[0] == b.L[1] &&
                             (dim == 2 || b.L[1] == b.L[2]),
                         "dim %d: axes not equal", dim);
                RC_CHECK(b.periodic[1] == (poly ? 0 : 1),
                         "periodic flags not copied");
            }
    {
        rc_k_box b;
        radius[0] = 0.5;
        RC_CHECK(rc_md_box_for_packing(3, 1, radius, 0.0, per, &b) == -1,
                 "eta 0 accepted");
        RC_CHECK(rc_md_box_for_packing(3, 1, radius, 1.0, per, &b) == -1,
                 "eta 1 accepted");
        RC_CHECK(rc_md_box_for_packing(3, 0, radius, 0.3, per, &b) == -1,
                 "n 0 accepted");
        RC_CHECK(rc_md_box_for_packing(4, 1, radius, 0.3, per, &b) == -1,
                 "dim 4 accepted");
    }
}

static void test_lattices(void)
{
    enum { N = 4000 };
    static const int per[3] = {1, 1, 1}, walls[3] = {0, 0, 0},
                     mixed[3] = {1, 0, 1};
    static double radius[N], q[3 * N];
    static const char *const w_fcc[] = {"fcc", "overlap", "0.7405"};
    static const char *const w_sc[] = {"sc", "overlap"};
    static const char *const w_wall[] = {"fcc", "wall", "particle"};
    static const char *const w_2d[] = {"fcc", "3-D"};
    long i;
    for (i = 0; i < N; ++i)
        radius[i] = 0.5;
    place_and_check("fcc eta 0.3", RC_LATTICE_FCC, 3, N, radius, 0.3, per, 0,
                    q);
    place_and_check("fcc eta 0.7", RC_LATTICE_FCC, 3, N, radius, 0.7, per, 0,
                    q);
    /* just below close packing pi/(3 sqrt 2) = 0.74048 */
    place_and_check("fcc eta 0.74", RC_LATTICE_FCC, 3, N, radius, 0.74, per,
                    0, q);
    /* a lattice not filled: 2000 of 2048 sites */
    place_and_check("fcc n 2000 eta 0.6", RC_LATTICE_FCC, 3, 2000, radius,
                    0.6, per, 0, q);
    /* walls: the outermost sites lie a/4 from a wall, so fcc fits
     * between walls up to eta = pi/12 = 0.2618 */
    place_and_check("fcc walls eta 0.25", RC_LATTICE_FCC, 3, N, radius, 0.25,
                    walls, 0, q);
    /* polydisperse: the largest radius decides */
    fill_radii(N, radius, 0.4, 0.6, 3);
    place_and_check("fcc poly eta 0.4", RC_LATTICE_FCC, 3, N, radius, 0.4,
                    per, 0, q);
    place_and_check("fcc poly mixed eta 0.15", RC_LATTICE_FCC, 3, N, radius,
                    0.15, mixed, 0, q);
    for (i = 0; i < N; ++i)
        radius[i] = 0.5;
    expect_refusal("fcc eta 0.75", RC_LATTICE_FCC, 3, N, radius, 0.75, per,
                   q, w_fcc, 3);
    expect_refusal("fcc walls eta 0.3", RC_LATTICE_FCC, 3, N, radius, 0.3,
                   walls, q, w_wall, 3);
    expect_refusal("fcc 2-D", RC_LATTICE_FCC, 2, 100, radius, 0.3, per, q,
                   w_2d, 2);

    place_and_check("sc 2-D eta 0.5", RC_LATTICE_SC, 2, 900, radius, 0.5,
                    per, 0, q);
    /* 1000 of 1024 sites */
    place_and_check("sc 2-D n 1000 walls eta 0.3", RC_LATTICE_SC, 2, 1000,
                    radius, 0.3, walls, 0, q);
    place_and_check("sc 3-D eta 0.4", RC_LATTICE_SC, 3, 1000, radius, 0.4,
                    per, 0, q);
    place_and_check("sc 3-D walls eta 0.3", RC_LATTICE_SC, 3, 3000, radius,
                    0.3, walls, 0, q);
    /* above pi/6 = 0.5236 */
    expect_refusal("sc 3-D eta 0.55", RC_LATTICE_SC, 3, 1000, radius, 0.55,
                   per, q, w_sc, 2);
    /* above pi/4 = 0.7854 */
    expect_refusal("sc 2-D eta 0.8", RC_LATTICE_SC, 2, 900, radius, 0.8, per,
                   q, w_sc, 2);
}

static void test_random(void)
{
    enum { N = 2000 };
    static const int per[3] = {1, 1, 1}, walls[3] = {0, 0, 0},
                     mixed[3] = {0, 1, 0};
    static double radius[N], q[3 * N], q2[3 * N];
    static const char *const w_rsa[] = {"particle", "0.6", "fcc"};
    rc_k_box b;
    char msg[512];
    long i, same;
    for (i = 0; i < N; ++i)
        radius[i] = 0.5;
    place_and_check("random eta 0.2", RC_LATTICE_RANDOM, 3, N, radius, 0.2,
                    per, 1, q);
    place_and_check("random walls eta 0.2", RC_LATTICE_RANDOM, 3, N, radius,
                    0.2, walls, 1, q);
    fill_radii(N, radius, 0.4, 0.6, 5);
    place_and_check("random poly eta 0.2", RC_LATTICE_RANDOM, 3, N, radius,
                    0.2, per, 2, q);
    place_and_check("random poly walls eta 0.2", RC_LATTICE_RANDOM, 3, N,
                    radius, 0.2, walls, 2, q);
    place_and_check("random 2-D poly mixed eta 0.3", RC_LATTICE_RANDOM, 2, N,
                    radius, 0.3, mixed, 3, q);
    /* above the jamming limit of random sequential addition (~0.38) */
    for (i = 0; i < N; ++i)
        radius[i] = 0.5;
    expect_refusal("random eta 0.6", RC_LATTICE_RANDOM, 3, N, radius, 0.6,
                   per, q, w_rsa, 3);

    /* determinism: the same seed gives the same bits; another seed moves
     * every particle (a coincidence has probability ~ n 2^-52) */
    fill_radii(N, radius, 0.4, 0.6, 5);
    rc_md_box_for_packing(3, N, radius, 0.2, mixed, &b);
    RC_CHECK(rc_md_place(RC_LATTICE_RANDOM, &b, N, radius, 42, q, msg,
                         sizeof msg) == 0, "seed 42: %s", msg);
    RC_CHECK(rc_md_place(RC_LATTICE_RANDOM, &b, N, radius, 42, q2, msg,
                         sizeof msg) == 0, "seed 42 again: %s", msg);
    RC_CHECK(memcmp(q, q2, sizeof(double) * 3 * N) == 0,
             "same seed, different positions");
    RC_CHECK(rc_md_place(RC_LATTICE_RANDOM, &b, N, radius, 43, q2, msg,
                         sizeof msg) == 0, "seed 43: %s", msg);
    for (same = 0, i = 0; i < 3 * N; ++i)
        same += q[i] == q2[i];
    RC_CHECK(same == 0, "seeds 42 and 43 share %ld coordinates", same);
}

static void test_random_numbers(void)
{
    /* the extreme bit patterns map strictly inside (0, 1) */
    double lo = rc_md_unit(0ULL), hi = rc_md_unit(~0ULL);
    RC_CHECK(lo > 0.0 && lo == ldexp(1.0, -53), "unit(0) = %.17g", lo);
    RC_CHECK(hi < 1.0 && hi == 1.0 - ldexp(1.0, -53), "unit(max) = %.17g",
             hi);
    /* a key change in any word changes the draw */
    RC_CHECK(rc_md_hash(1, 2, 3, 4) != rc_md_hash(1, 2, 3, 5) &&
                 rc_md_hash(1, 2, 3, 4) != rc_md_hash(1, 2, 4, 4) &&
                 rc_md_hash(1, 2, 3, 4) != rc_md_hash(1, 3, 3, 4) &&
                 rc_md_hash(1, 2, 3, 4) != rc_md_hash(2, 2, 3, 4),
             "hash ignores a key word");
}

/* Maxwell-Boltzmann: n particles in dim, masses from mass_lo..mass_hi. */
static void test_maxwell_case(int dim, long n, double mlo, double mhi,
                              double T, unsigned long long seed, int stats)
{
    double *m = (double *)malloc(sizeof(double) * (size_t)n);
    double *p = (double *)malloc(sizeof(double) * (size_t)(n * dim));
    double *p2 = (double *)malloc(sizeof(double) * (size_t)(n * dim));
    ksum P[3], ke = {0.0, 0.0}, M = {0.0, 0.0};
    double pnorm = 0.0, Tgot;
    long i, same = 0;
    int k;
    if (!m || !p || !p2) {
        RC_CHECK(0, "out of memory");
        free(m);
        free(p);
        free(p2);
        return;
    }
    fill_radii(n, m, mlo, mhi, 9);
    rc_md_maxwell(dim, n, m, T, seed, p);
    for (k = 0; k < 3; ++k)
        P[k].s = P[k].c = 0.0;
    for (i = 0; i < n; ++i) {
        for (k = 0; k < dim; ++k) {
            ksum_add(&P[k], p[i * dim + k]);
            ksum_add(&ke, p[i * dim + k] * p[i * dim + k] / m[i]);
        }
        ksum_add(&M, m[i]);
    }
    for (k = 0; k < dim; ++k)
        pnorm += ksum_get(&P[k]) * ksum_get(&P[k]);
    pnorm = sqrt(pnorm);
    /* each of the n subtractions of m_i P / M (and the rescaling) rounds
     * by ~eps |p_i| ~ eps sqrt(m T): at most n eps sqrt(m T), below
     * 1e-12 sqrt(n m T) for n < 2e7; a missed removal leaves ~sqrt(n m T) */
    RC_CHECK(pnorm <= 1e-12 * sqrt((double)n * mhi * T),
             "dim %d n %ld: |total momentum| %.3g", dim, n, pnorm);
    Tgot = ksum_get(&ke) / ((double)dim * (double)(n - 1));
    /* compensated sums on both sides; the scale factor's division and
     * sqrt and the squared products: a few eps */
    RC_CHECK(rc_test_close(Tgot, T, 1e-14, 0.0),
             "dim %d n %ld: temperature %.17g, want %.17g", dim, n, Tgot, T);
    rc_md_maxwell(dim, n, m, T, seed, p2);
    RC_CHECK(memcmp(p, p2, sizeof(double) * (size_t)(n * dim)) == 0,
             "dim %d: same seed, different momenta", dim);
    rc_md_maxwell(dim, n, m, T, seed + 1, p2);
    for (i = 0; i < n * dim; ++i)
        same += p[i] == p2[i];
    RC_CHECK(same == 0, "dim %d: seeds %llu and %llu share %ld momenta", dim,
             seed, seed + 1, same);
    if (stats)
        for (k = 0; k < dim; ++k) {
            /* per axis, z = p / sqrt(m T) is standard normal */
            ksum s2 = {0.0, 0.0}, s4 = {0.0, 0.0}, s1 = {0.0, 0.0};
            double mean2, kurt, mu, m2, m4;
            for (i = 0; i < n; ++i)
                ksum_add(&s1, p[i * dim + k] / sqrt(m[i] * T));
            mu = ksum_get(&s1) / (double)n;
            for (i = 0; i < n; ++i) {
                double z = p[i * dim + k] / sqrt(m[i] * T) - mu;
                ksum_add(&s2, z * z);
                ksum_add(&s4, z * z * z * z);
            }
            m2 = ksum_get(&s2) / (double)n;
            m4 = ksum_get(&s4) / (double)n;
            mean2 = m2 * T; /* mean of (p - m mu)^2 / m, T expected */
            kurt = m4 / (m2 * m2);
            /* p^2/m has standard deviation sqrt(2) T: standard error of
             * the mean sqrt(2/n) T; 3 of them */
            RC_CHECK(fabs(mean2 - T) <= 3.0 * sqrt(2.0 / (double)n) * T,
                     "axis %d: mean p^2/m %.6g, want %.6g +- %.3g", k, mean2,
                     T, 3.0 * sqrt(2.0 / (double)n) * T);
            /* the sample kurtosis of a normal has standard error
             * sqrt(24/n); 3 of them (uniform draws would give 1.8) */
            RC_CHECK(fabs(kurt - 3.0) <= 3.0 * sqrt(24.0 / (double)n),
                     "axis %d: kurtosis %.6g, want 3 +- %.3g", k, kurt,
                     3.0 * sqrt(24.0 / (double)n));
        }
    free(m);
    free(p);
    free(p2);
}

static void test_maxwell(void)
{
    double p[6] = {1, 1, 1, 1, 1, 1}, m[2] = {1.0, 1.0};
    int k, zero = 1;
    test_maxwell_case(3, 20000, 2.0, 2.0, 1.5, 17, 1);
    test_maxwell_case(2, 20000, 2.0, 2.0, 0.7, 19, 1);
    test_maxwell_case(3, 20000, 0.5, 3.0, 2.0, 23, 1);
    test_maxwell_case(3, 2, 1.0, 1.0, 1.0, 29, 0);
    /* one particle has no temperature: momenta stay zero */
    rc_md_maxwell(3, 1, m, 1.0, 1, p);
    for (k = 0; k < 3; ++k)
        zero &= p[k] == 0.0;
    RC_CHECK(zero, "n = 1: momenta not zero");
}

int main(void)
{
    test_random_numbers();
    test_box();
    test_lattices();
    test_random();
    test_maxwell();
    return rc_test_finish("test_md_setup");
}

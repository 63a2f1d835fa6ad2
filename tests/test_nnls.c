/* rc_k_nnls_gram (src/kernels/rc_nnls.h) against brute force.
 *
 * 1. Random small problems (m = 1..8; G is d x m with d in {m, m+2}, plus
 *    duplicated-column and rank-deficient d < m cases; W diagonal > 0;
 *    A = G^T W G, b = 2 G^T W p): the solver's objective equals the
 *    minimum over all 2^m passive sets of the feasible subset solutions,
 *    and its lambda satisfies the KKT conditions.
 * 2. The same lambda as a reflection: p' = p + G lambda keeps p^T W p
 *    (mirror property), G_P^T W p' = -G_P^T W p on the passive set, and,
 *    when every column approaches (G^T W p < 0, as the set V of
 *    Algorithm 2), G^T W p' >= 0 up to round-off.
 * 3. The iteration cap returns status 1 instead of looping; NaN in A
 *    returns status 2 with lambda = 0. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rc_nnls.h"
#include "rc_test.h"

#define MMAX 8
#define DMAX (MMAX + 2)
#define NPROB 2000

/* Solver tolerance on the dual, relative to the solver's scale: ~4500 eps,
 * far above the round-off in w (~m eps scale), far below any real dual. */
#define SOLVER_TOL 1e-12
/* Objective agreement.  f is stationary at the minimiser, so the
 * solvers' O(eps cond) errors in lambda change f only by ~eps^2 cond(A_PP)
 * relative (< 1e-17 even at the pivot limit cond ~ 1e14), and f is
 * evaluated in long double from G, W, p; the observed differences are a
 * few eps, so 1e-10 is a loose bound that still catches any wrong passive
 * set that costs more than 1e-10 |f|. */
#define OBJ_RTOL 1e-10
/* KKT residuals relative to the solver's scale max(|b|_inf, maxdiag A
 * |lambda|_1): the Cholesky residual and the evaluation of w are both
 * <= c m eps scale (c small), ~1e-14; 1e-12 is the solver's own tol. */
#define KKT_TOL 1e-12
/* Energy p'^T W p' vs p^T W p: the change is lambda^T r with r the
 * passive residual (|r| <= c m eps maxdiag(A) |lambda|_1), plus the
 * rounding of p + G lambda and of the two d-term sums (~d eps E), i.e.
 * ~m eps (E + maxdiag(A) |lambda|_1^2).  For a well-shaped cone lambda ~
 * |p|/|G| and that is ~1e-15 E; nearly degenerate cones (the rank-deficient
 * d < m cases) give lambda up to ~100x that and errors up to ~2e-13 E, so
 * 1e-12 keeps 5x slack there (the error in units of
 * eps (E + maxdiag |lambda|_1^2) is printed to show it is round-off). */
#define ENERGY_RTOL 1e-12
/* Brute force: a subset whose Cholesky pivot is below this fraction of
 * its diagonal is singular (its minimum is reached on a smaller,
 * independent subset, so skipping it loses nothing). */
#define BF_PIVOT_REL 1e-12

static double gauss(unsigned long long *s)
{
    /* Box-Muller; u1 in (0, 1]. */
    double u1 = 1.0 - rc_test_uniform(s), u2 = rc_test_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* f(lambda) = 0.5 lambda^T A lambda + b^T lambda evaluated in the
 * least-squares form 0.5 |W^{1/2}(G lambda + 2p)|^2 - 2 p^T W p, in long
 * double, from G, W, p themselves: the rounded A and b are ill-suited to
 * score a large lambda (on a nearly degenerate cone, lambda ~ 1e3, the
 * terms of the A form are ~1e6 |f| and the ~eps |A| rounding of A and b
 * alone moves f by ~1e-10 |f|).  Both minimisers are scored by it. */
static double objective(int d, int m, const double *G, const double *W,
                        const double *p, const double *lam)
{
    long double f = 0.0L;
    int j, k;
    for (k = 0; k < d; ++k) {
        long double r = 2.0L * p[k], e = (long double)p[k] * W[k] * p[k];
        for (j = 0; j < m; ++j)
            r += (long double)G[k * m + j] * lam[j];
        f += 0.5L * W[k] * r * r - 2.0L * e;
    }
    return (double)f;
}

/* Brute force over all 2^m passive sets.  Returns the minimum objective
 * and writes its lambda. */
static double brute_force(int d, int m, const double *G, const double *W,
                          const double *p, const double *A, const double *b,
                          double *lam_best)
{
    double best = 0.0; /* empty set: lambda = 0, f = 0 */
    double L[MMAX * MMAX], z[MMAX], lam[MMAX];
    int idx[MMAX];
    unsigned mask;
    int i, j, k, n, ok;
    memset(lam_best, 0, sizeof(double) * (size_t)m);
    for (mask = 1; mask < (1u << m); ++mask) {
        n = 0;
        for (i = 0; i < m; ++i)
            if (mask & (1u << i))
                idx[n++] = i;
        ok = 1;
        for (i = 0; i < n && ok; ++i) {
            for (j = 0; j <= i; ++j) {
                double s = A[idx[i] * m + idx[j]];
                for (k = 0; k < j; ++k)
                    s -= L[i * MMAX + k] * L[j * MMAX + k];
                if (j < i) {
                    L[i * MMAX + j] = s / L[j * MMAX + j];
                } else {
                    if (!(s > BF_PIVOT_REL * A[idx[i] * m + idx[i]]))
                        ok = 0;
                    else
                        L[i * MMAX + i] = sqrt(s);
                }
            }
        }
        if (!ok)
            continue;
        for (i = 0; i < n; ++i) {
            double s = -b[idx[i]];
            for (k = 0; k < i; ++k)
                s -= L[i * MMAX + k] * z[k];
            z[i] = s / L[i * MMAX + i];
        }
        for (i = n - 1; i >= 0; --i) {
            double s = z[i];
            for (k = i + 1; k < n; ++k)
                s -= L[k * MMAX + i] * z[k];
            z[i] = s / L[i * MMAX + i];
        }
        for (i = 0; i < n; ++i)
            if (!(z[i] >= 0.0))
                ok = 0;
        if (!ok)
            continue;
        memset(lam, 0, sizeof lam);
        for (i = 0; i < n; ++i)
            lam[idx[i]] = z[i];
        {
            double f = objective(d, m, G, W, p, lam);
            if (f < best) {
                best = f;
                memcpy(lam_best, lam, sizeof(double) * (size_t)m);
            }
        }
    }
    return best;
}

/* A = G^T W G, b = 2 G^T W p; G is d x m row-major, W diagonal (d). */
static void build(int d, int m, const double *G, const double *W,
                  const double *p, double *A, double *b)
{
    int i, j, k;
    for (i = 0; i < m; ++i) {
        for (j = 0; j < m; ++j) {
            double s = 0.0;
            for (k = 0; k < d; ++k)
                s += G[k * m + i] * W[k] * G[k * m + j];
            A[i * m + j] = s;
        }
        {
            double s = 0.0;
            for (k = 0; k < d; ++k)
                s += G[k * m + i] * W[k] * p[k];
            b[i] = 2.0 * s;
        }
    }
}

static double solver_scale(int m, const double *A, const double *b,
                           const double *lam)
{
    double bmax = 0.0, dmax = 0.0, l1 = 0.0;
    int j;
    for (j = 0; j < m; ++j) {
        bmax = fmax(bmax, fabs(b[j]));
        dmax = fmax(dmax, A[j * m + j]);
        l1 += lam[j];
    }
    return fmax(bmax, dmax * l1);
}

int main(void)
{
    unsigned long long rng = 0x5EEDC0FFEE123457ULL;
    double G[DMAX * MMAX], W[DMAX], p[DMAX], pp[DMAX];
    double A[MMAX * MMAX], b[MMAX], lam[MMAX], lam_bf[MMAX];
    double work[MMAX * MMAX + 2 * MMAX];
    int iwork[2 * MMAX];
    double max_obj = 0.0, max_energy = 0.0, max_kkt = 0.0, max_mirror = 0.0;
    double min_vel = INFINITY;
    int worst_obj = -1, worst_energy = -1, n_vel = 0, n_dep = 0, max_it = 0;
    int n_fail = 0, n_nontrivial = 0, hist[MMAX + 1] = {0};
    double max_energy_eps = 0.0, max_obj0 = 0.0;
    int prob;

    for (prob = 0; prob < NPROB; ++prob) {
        int m = 1 + prob % MMAX;
        int kind = (int)(rc_test_uniform(&rng) * 10.0);
        int d = kind < 4 ? m : kind < 7 ? m + 2 : kind < 9 ? m : m - 2;
        int approaching = prob % 2; /* make every column approach */
        int j, k, bad = 0;
        double E, E2, f_s, f_bf, rel, scale;
        rc_k_nnls_result r;
        if (d < 1)
            d = 1;
        for (k = 0; k < d; ++k) {
            W[k] = 0.2 + 2.0 * rc_test_uniform(&rng); /* 1/mass */
            p[k] = gauss(&rng);
            for (j = 0; j < m; ++j)
                G[k * m + j] = gauss(&rng);
        }
        if ((kind == 7 || kind == 8) && m >= 2) {
            /* Column jb duplicates column ja, scaled by c (c < 0 for kind
             * 8: opposite constraints, e.g. a particle between two
             * touching walls). */
            int ja = (int)(rc_test_uniform(&rng) * m);
            int jb = (ja + 1 + (int)(rc_test_uniform(&rng) * (m - 1))) % m;
            double c = kind == 7 ? (rc_test_uniform(&rng) < 0.5 ? 1.0 : 2.5)
                                 : -0.5;
            for (k = 0; k < d; ++k)
                G[k * m + jb] = c * G[k * m + ja];
            ++n_dep;
        } else if (d < m) {
            ++n_dep;
        }
        if (approaching) {
            /* Flip columns so that G_j^T W p < 0 for all j (the set V of
             * Algorithm 2). */
            for (j = 0; j < m; ++j) {
                double v = 0.0;
                for (k = 0; k < d; ++k)
                    v += G[k * m + j] * W[k] * p[k];
                if (v > 0.0)
                    for (k = 0; k < d; ++k)
                        G[k * m + j] = -G[k * m + j];
            }
        }
        build(d, m, G, W, p, A, b);

        r = rc_k_nnls_gram(m, A, b, lam, work, iwork, 0, SOLVER_TOL);
        if (r.iterations > max_it)
            max_it = r.iterations;
        RC_CHECK(r.status == 0, "problem %d (m=%d d=%d kind=%d): status %d",
                 prob, m, d, kind, r.status);
        if (r.status != 0)
            bad = 1;

        /* 1. Objective vs brute force. */
        f_bf = brute_force(d, m, G, W, p, A, b, lam_bf);
        f_s = objective(d, m, G, W, p, lam);
        rel = fabs(f_s - f_bf) / fmax(fmax(fabs(f_s), fabs(f_bf)), 1e-300);
        if (!isfinite(rel))
            rel = INFINITY;
        if (!(rel <= max_obj))
            max_obj = rel, worst_obj = prob;
        RC_CHECK(rel <= OBJ_RTOL,
                 "problem %d (m=%d d=%d kind=%d): objective %.17g vs brute "
                 "force %.17g, rel diff %.3g",
                 prob, m, d, kind, f_s, f_bf, rel);
        if (!(rel <= OBJ_RTOL))
            bad = 1;

        /* 1. KKT at the solver's lambda. */
        scale = solver_scale(m, A, b, lam);
        for (j = 0; j < m; ++j) {
            double wj = -b[j], e;
            for (k = 0; k < m; ++k)
                wj -= A[j * m + k] * lam[k];
            RC_CHECK(lam[j] >= 0.0, "problem %d: lambda[%d] = %g < 0", prob,
                     j, lam[j]);
            /* Zero entries: dual <= tol; positive entries: dual ~ 0, so
             * complementarity lambda_j w_j ~ 0 holds as well. */
            e = lam[j] > 0.0 ? fabs(wj) / scale : wj / scale;
            if (scale == 0.0)
                e = wj == 0.0 || (lam[j] == 0.0 && wj < 0.0) ? 0.0 : INFINITY;
            if (!isfinite(e))
                e = INFINITY;
            if (e > max_kkt)
                max_kkt = e;
            RC_CHECK(e <= KKT_TOL,
                     "problem %d (m=%d): KKT column %d: lambda %.3g dual "
                     "%.3g scale %.3g",
                     prob, m, j, lam[j], wj, scale);
            if (!(e <= KKT_TOL) || !(lam[j] >= 0.0))
                bad = 1;
        }

        /* 2. Reflection: energy and mirror property. */
        for (k = 0; k < d; ++k) {
            pp[k] = p[k];
            for (j = 0; j < m; ++j)
                pp[k] += G[k * m + j] * lam[j];
        }
        E = 0.0;
        E2 = 0.0;
        for (k = 0; k < d; ++k) {
            E += p[k] * W[k] * p[k];
            E2 += pp[k] * W[k] * pp[k];
        }
        rel = fabs(E2 - E) / E;
        {
            double l1 = 0.0, dm = 0.0, u;
            int np = 0;
            for (j = 0; j < m; ++j) {
                l1 += lam[j];
                dm = fmax(dm, A[j * m + j]);
                np += lam[j] > 0.0;
            }
            u = fabs(E2 - E) / (2.220446049250313e-16 * (E + dm * l1 * l1));
            if (u > max_energy_eps)
                max_energy_eps = u;
            hist[np]++;
            n_nontrivial += np > 0;
        }
        if (!isfinite(rel))
            rel = INFINITY;
        if (!(rel <= max_energy))
            max_energy = rel, worst_energy = prob;
        RC_CHECK(rel <= ENERGY_RTOL,
                 "problem %d (m=%d d=%d kind=%d): energy %.17g -> %.17g, "
                 "rel err %.3g",
                 prob, m, d, kind, E, E2, rel);
        if (!(rel <= ENERGY_RTOL))
            bad = 1;
        for (j = 0; j < m; ++j) {
            /* v, v': velocity along column j before and after; the
             * Cauchy-Schwarz bound |G_j|_W |p|_W scales the error. */
            double v = 0.0, v2 = 0.0, gn = 0.0, vs;
            for (k = 0; k < d; ++k) {
                v += G[k * m + j] * W[k] * p[k];
                v2 += G[k * m + j] * W[k] * pp[k];
                gn += G[k * m + j] * W[k] * G[k * m + j];
            }
            vs = sqrt(gn * E);
            if (vs == 0.0)
                continue;
            if (lam[j] > 0.0) {
                double e = fabs(v2 + v) / vs;
                if (!isfinite(e))
                    e = INFINITY;
                if (e > max_mirror)
                    max_mirror = e;
                RC_CHECK(e <= KKT_TOL,
                         "problem %d: column %d not mirrored: v %.17g v' "
                         "%.17g",
                         prob, j, v, v2);
                if (!(e <= KKT_TOL))
                    bad = 1;
            }
            if (approaching) {
                double e = v2 / vs;
                ++n_vel;
                if (e < min_vel)
                    min_vel = e;
                RC_CHECK(e >= -KKT_TOL,
                         "problem %d: column %d still approaching: v' = %.3g",
                         prob, j, v2);
                if (!(e >= -KKT_TOL))
                    bad = 1;
            }
        }
        /* 1b. tol = 0 stresses the degeneracy handling: columns whose
         * dual is round-off-positive become candidates, and in the
         * rank-deficient cases dependent ones must be skipped (the pivot
         * test), not entered.  Same minimum required. */
        {
            double lam0[MMAX], f0, rel0;
            rc_k_nnls_result r0 =
                rc_k_nnls_gram(m, A, b, lam0, work, iwork, 0, 0.0);
            f0 = objective(d, m, G, W, p, lam0);
            rel0 = fabs(f0 - f_bf) / fmax(fmax(fabs(f0), fabs(f_bf)), 1e-300);
            if (!isfinite(rel0))
                rel0 = INFINITY;
            if (!(rel0 <= max_obj0))
                max_obj0 = rel0;
            RC_CHECK(r0.status == 0 && rel0 <= OBJ_RTOL,
                     "problem %d (m=%d d=%d kind=%d) with tol 0: status %d, "
                     "objective rel diff %.3g",
                     prob, m, d, kind, r0.status, rel0);
            if (!(r0.status == 0 && rel0 <= OBJ_RTOL))
                bad = 1;
            for (j = 0; j < m; ++j)
                RC_CHECK(lam0[j] >= 0.0, "problem %d tol 0: lambda[%d] = %g",
                         prob, j, lam0[j]);
        }
        n_fail += bad;
    }

    printf("nnls: %d problems (%d rank-deficient), max rel objective diff "
           "%.3g (problem %d), max energy rel err %.3g (problem %d)\n",
           NPROB, n_dep, max_obj, worst_obj, max_energy, worst_energy);
    printf("nnls: max KKT residual / scale %.3g, max mirror err %.3g, min "
           "post-reflection velocity / scale %.3g over %d columns, max "
           "iterations %d, %d problems failed\n",
           max_kkt, max_mirror, min_vel, n_vel, max_it, n_fail);
    printf("nnls: with tol 0, max rel objective diff %.3g; energy err / "
           "(eps (E + maxdiag |lambda|_1^2)) max %.3g; %d problems with "
           "lambda != 0; passive-set sizes",
           max_obj0, max_energy_eps, n_nontrivial);
    {
        int k;
        for (k = 0; k <= MMAX; ++k)
            printf(" %d:%d", k, hist[k]);
        printf("\n");
    }

    /* 3a. Iteration cap: A = I + 0.1 (ones), b = -1, m = 8: every column
     * enters (lambda_j = 1/1.8 > 0), so it needs 8 outer iterations. */
    {
        const int m = 8;
        int i, j;
        rc_k_nnls_result r;
        for (i = 0; i < m; ++i) {
            b[i] = -1.0;
            for (j = 0; j < m; ++j)
                A[i * m + j] = (i == j ? 1.0 : 0.0) + 0.1;
        }
        r = rc_k_nnls_gram(m, A, b, lam, work, iwork, 1, SOLVER_TOL);
        RC_CHECK(r.status == 1 && r.iterations == 1,
                 "max_iter = 1: status %d iterations %d (want 1, 1)",
                 r.status, r.iterations);
        for (j = 0; j < m; ++j)
            RC_CHECK(lam[j] >= 0.0, "max_iter = 1: lambda[%d] = %g", j,
                     lam[j]);
        r = rc_k_nnls_gram(m, A, b, lam, work, iwork, 0, SOLVER_TOL);
        RC_CHECK(r.status == 0 && r.iterations == m,
                 "default max_iter: status %d iterations %d (want 0, %d)",
                 r.status, r.iterations, m);
        for (j = 0; j < m; ++j)
            RC_CHECK(fabs(lam[j] - 1.0 / 1.8) <= 1e-14,
                     "lambda[%d] = %.17g, want 1/1.8", j, lam[j]);
        printf("nnls: max_iter=1 on m=8 -> status 1; default -> status %d "
               "after %d iterations\n",
               r.status, r.iterations);

        /* 3b. NaN in A: status 2, lambda zeroed. */
        A[3 * m + 5] = NAN;
        for (j = 0; j < m; ++j)
            lam[j] = 7.0;
        r = rc_k_nnls_gram(m, A, b, lam, work, iwork, 0, SOLVER_TOL);
        RC_CHECK(r.status == 2, "NaN in A: status %d (want 2)", r.status);
        for (j = 0; j < m; ++j)
            RC_CHECK(lam[j] == 0.0, "NaN in A: lambda[%d] = %g (want 0)", j,
                     lam[j]);
        A[3 * m + 5] = 0.1;
        b[2] = INFINITY;
        r = rc_k_nnls_gram(m, A, b, lam, work, iwork, 0, SOLVER_TOL);
        RC_CHECK(r.status == 2, "inf in b: status %d (want 2)", r.status);
    }

    /* 3c. Zero column and exact zero problem: converge with lambda = 0. */
    {
        const int m = 2;
        rc_k_nnls_result r;
        A[0] = 0.0; A[1] = 0.0; A[2] = 0.0; A[3] = 1.0;
        b[0] = 0.0; b[1] = -2.0;
        r = rc_k_nnls_gram(m, A, b, lam, work, iwork, 0, SOLVER_TOL);
        RC_CHECK(r.status == 0 && lam[0] == 0.0 && lam[1] == 2.0,
                 "zero column: status %d lambda %g %g", r.status, lam[0],
                 lam[1]);
    }

    return rc_test_finish("test_nnls");
}

/* The batched reflection NNLS on the CPU (rc_nnls_batch_cpu,
 * src/host/md/nnls_batch.h; bodies in src/kernels/rc_nnls_batch.h)
 * against the dense single-problem solver rc_k_nnls_gram (rc_nnls.h)
 * and against the KKT conditions directly.
 *
 * 1. A batch of mixed sizes (1, 2, 7, 33, 64, 100, 300; mp = 300) and
 *    kinds: full-rank Gaussian B (k = m + 3), the same with rows scaled
 *    0.1 .. 10 (masses), rank-deficient B (k = m/2 + 1, 30% exact
 *    duplicate rows: coplanar contacts), hard-sphere contact Jacobians
 *    (unit normals, +n / -n on two particles over sqrt(mass), more
 *    contacts than degrees of freedom, 20% duplicates), all-separating
 *    problems (b >= 0: solution exactly 0), a general b (not of the
 *    reflection form b = 2 B p), and near-duplicate rows (pairs within
 *    1e-10: the candidate-rejection path).  Every problem: status 0; lambda >= 0,
 *    exactly 0 in the padding; dual feasibility, passive stationarity
 *    and complementarity; the reflection p' = p + B^T lambda keeps
 *    |p|^2; the same objective and impulse B^T lambda as rc_k_nnls_gram,
 *    and the same lambda where it is unique (full row rank).
 * 2. 200 problems of random sizes 0 .. 64 (mp = 64), the same checks;
 *    and the GPU launcher's lockstep structure run on the CPU (all
 *    problems at the padded size mp, finished ones inert, LAPACK for
 *    cuSOLVER) against the CPU launcher, on it and on a batch padded to
 *    mp = 100.
 * 3. A problem's answer does not depend on its batch or its padding.
 * 4. Failure isolation: NaN in one problem's B gives it status 2 and
 *    lambda = 0, its neighbours are unaffected; max_iter = 1 on a problem
 *    that needs more columns gives status 1 with a feasible lambda that
 *    is optimal on its passive set; bad arguments give RC_ERR_INVALID.
 *
 * The generator and the checks are shared with tests/test_gpu_nnls_batch.c,
 * which includes this file with RC_NNLS_BATCH_TEST_LIB defined. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/nnls_batch.h"
#include "rc_nnls.h"
#include "rc_nnls_batch.h"
#include "rc_test.h"

/* The optimality tolerance the engine uses (rc_md_solve): ~4500 eps of
 * the solver's scale, far above the rounding in w, far below a real
 * dual. */
#define NB_TOL 1e-12
/* Dual feasibility, (A lambda + b)_i >= -KKT_DUAL * scale: the solver
 * stops when no w_i exceeds NB_TOL * scale, and its w carries rounding
 * <= m eps scale (7e-14 at m = 300); the test's own sum is in long
 * double. */
#define KKT_DUAL 2e-12
/* Near-duplicate rows (NB_NEARDUP): row i = row i-1 times (1 + 1e-10
 * gaussian) entrywise, 30% of rows.  The pivot of such a pair is
 * ~1e-20 of its diagonal, far below RC_K_NNLS_PIVOT_REL (1e-14), so the
 * solver rejects the second column whenever it is a candidate: the
 * rejection path of both solvers. */
#define NEARDUP_REL 1e-10
/* Dual feasibility for NB_NEARDUP: a rejected near-dependent column t
 * keeps its dual w_t = -(B_t - B_r) . (B^T lambda + 2p) (its twin r is
 * passive with w_r = 0), of size ~NEARDUP_REL |B_r| |B^T lambda + 2p|,
 * i.e. ~1e-10 of the |b| scale (observed <= 1.1e-11): by design of the
 * pivot test, not a solver error.  1e-9 leaves ~100x. */
#define KKT_DUAL_NEAR 1e-9
/* Passive stationarity, |(A lambda + b)_i| <= KKT_PASSIVE * scale where
 * lambda_i > 0: Cholesky's backward error bounds the passive residual by
 * c m eps scale whatever cond(A_PP) is (rc_nnls.h); c m eps <= 1e-13 at
 * m = 300 for c ~ 1.5, so 1e-12 leaves ~10x. */
#define KKT_PASSIVE 1e-12
/* Complementarity max_i lambda_i |(A lambda + b)_i| relative to
 * scale * max_i lambda_i: lambda_i = 0 exactly off the passive set, so
 * this is the passive residual again. */
#define KKT_COMPL 1e-12
/* Reflection energy |p'|^2 - |p|^2 = lambda^T (A lambda + b): the
 * passive residual summed against lambda, <= c m eps dmax |lambda|_1^2,
 * plus the rounding of p + B^T lambda (~k eps (E + |B^T lambda|^2)):
 * relative to E + dmax |lambda|_1^2, 1e-12 is ~20x the c m eps at
 * m = 300. */
#define ENERGY_RTOL 1e-12
/* lambda against rc_k_nnls_gram where lambda is unique (full row rank):
 * the same passive systems solved with different summation orders
 * (blocked LAPACK Cholesky in index order vs an incremental Cholesky in
 * insertion order) differ by ~cond(A_PP) eps |lambda|; cond(A) of a
 * Gaussian 300 x 303 B is ~1e5 .. 1e6 (sigma_min ~ (sqrt(303) -
 * sqrt(300)) sigma), and 0.1 .. 10 row scales are compared in unscaled
 * units.  Observed: ~3e-15 (the passive blocks are much better
 * conditioned than A); 1e-10 covers cond(A_PP) up to ~5e5. */
#define LAM_RTOL 1e-10
/* The impulse B^T lambda (unique for every kind: the projection of -2p
 * onto the cone of the rows, or the image of a unique lambda), relative
 * to max(|B^T lambda_ref|_inf, |p|_inf): its error is B^T times the
 * error in lambda, which for the well-determined directions is
 * ~cond(B_P) eps (the ill-determined ones of a rank-deficient cone are
 * annihilated by B^T).  Observed: ~1e-14; 1e-10 as for lambda. */
#define IMPULSE_RTOL 1e-10
/* Objective agreement: f is stationary at the minimiser, so O(eps cond)
 * errors in lambda change f by ~eps^2 cond relative; f is evaluated in
 * long double from B, p (or A, b); 1e-10 is loose yet catches any wrong
 * passive set that costs more than 1e-10 |f|. */
#define OBJ_RTOL 1e-10

#define NB_FULL 0
#define NB_SCALED 1
#define NB_DUP 2
#define NB_CONTACT 3
#define NB_ZERO 4
#define NB_GENERAL 5
#define NB_NEARDUP 6
#define NB_NKIND 7

static const char *nb_kind_name[NB_NKIND] = {
    "full", "scaled", "dup", "contact", "zero", "general", "neardup"};

/* A batch in the launchers' layout, plus what the checks need. */
typedef struct nb_batch {
    int nprob, mp, kp;
    int *m, *k, *kind;
    double *B;  /* [nprob][mp][kp] */
    double *b;  /* [nprob][mp] */
    double *p;  /* [nprob][kp]: b = 2 B p for the reflection kinds */
    double *rs; /* [nprob][mp]: row scales (1 unless NB_SCALED) */
} nb_batch;

static double nb_gauss(unsigned long long *s)
{
    double u1 = 1.0 - rc_test_uniform(s), u2 = rc_test_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int nb_cols(int m, int kind)
{
    if (kind == NB_DUP)
        return m / 2 + 1;
    if (kind == NB_CONTACT)
        return 3 * (m / 4 + 2);
    return m + 3;
}

static void nb_free(nb_batch *bt)
{
    free(bt->m);
    free(bt->k);
    free(bt->kind);
    free(bt->B);
    free(bt->b);
    free(bt->p);
    free(bt->rs);
    memset(bt, 0, sizeof *bt);
}

/* nprob problems of sizes m[] and kinds kind[] (copied), padded to mp. */
static int nb_make(nb_batch *bt, int nprob, int mp, const int *m,
                   const int *kind, unsigned long long seed)
{
    int s, i, c, kp = 1;
    unsigned long long rng = seed;
    memset(bt, 0, sizeof *bt);
    for (s = 0; s < nprob; ++s)
        if (nb_cols(m[s], kind[s]) > kp)
            kp = nb_cols(m[s], kind[s]);
    bt->nprob = nprob;
    bt->mp = mp;
    bt->kp = kp;
    bt->m = (int *)malloc(sizeof(int) * (size_t)nprob);
    bt->k = (int *)malloc(sizeof(int) * (size_t)nprob);
    bt->kind = (int *)malloc(sizeof(int) * (size_t)nprob);
    bt->B = (double *)calloc((size_t)nprob * mp * kp, sizeof(double));
    bt->b = (double *)calloc((size_t)nprob * mp, sizeof(double));
    bt->p = (double *)calloc((size_t)nprob * kp, sizeof(double));
    bt->rs = (double *)calloc((size_t)nprob * mp, sizeof(double));
    if (!bt->m || !bt->k || !bt->kind || !bt->B || !bt->b || !bt->p ||
        !bt->rs)
        return -1;
    for (s = 0; s < nprob; ++s) {
        int ms = m[s], ks = nb_cols(m[s], kind[s]), npart = ks / 3;
        double *B = bt->B + (size_t)s * mp * kp, *p = bt->p + (size_t)s * kp;
        double *b = bt->b + (size_t)s * mp, *rs = bt->rs + (size_t)s * mp;
        bt->m[s] = ms;
        bt->k[s] = ks;
        bt->kind[s] = kind[s];
        for (c = 0; c < ks; ++c)
            p[c] = nb_gauss(&rng);
        for (i = 0; i < ms; ++i) {
            double *row = B + (size_t)i * kp;
            rs[i] = 1.0;
            if (kind[s] == NB_CONTACT) {
                int a = (int)(rc_test_uniform(&rng) * npart), bb, d;
                double n[3], nn = 0.0, ma, mb;
                bb = (a + 1 + (int)(rc_test_uniform(&rng) * (npart - 1))) %
                     npart;
                for (d = 0; d < 3; ++d) {
                    n[d] = nb_gauss(&rng);
                    nn += n[d] * n[d];
                }
                nn = sqrt(nn);
                /* masses 1 .. 3, drawn per contact end (a scaled
                 * Jacobian only needs the 1/sqrt(mass) factors) */
                ma = 1.0 + 2.0 * rc_test_uniform(&rng);
                mb = 1.0 + 2.0 * rc_test_uniform(&rng);
                for (d = 0; d < 3; ++d) {
                    row[3 * a + d] = n[d] / nn / sqrt(ma);
                    row[3 * bb + d] = -n[d] / nn / sqrt(mb);
                }
                if (i > 0 && rc_test_uniform(&rng) < 0.2)
                    memcpy(row, row - kp, sizeof(double) * (size_t)kp);
            } else {
                for (c = 0; c < ks; ++c)
                    row[c] = nb_gauss(&rng);
                if (kind[s] == NB_DUP && i > 0 &&
                    rc_test_uniform(&rng) < 0.3)
                    memcpy(row, row - kp, sizeof(double) * (size_t)kp);
                if (kind[s] == NB_NEARDUP && i > 0 &&
                    rc_test_uniform(&rng) < 0.3)
                    for (c = 0; c < ks; ++c)
                        row[c] = row[c - kp] * (1.0 + NEARDUP_REL *
                                                          nb_gauss(&rng));
                if (kind[s] == NB_SCALED) {
                    rs[i] = pow(10.0, 2.0 * rc_test_uniform(&rng) - 1.0);
                    for (c = 0; c < ks; ++c)
                        row[c] *= rs[i];
                }
            }
            if (kind[s] == NB_GENERAL) {
                b[i] = nb_gauss(&rng);
            } else {
                double acc = 0.0;
                for (c = 0; c < ks; ++c)
                    acc += row[c] * p[c];
                if (kind[s] == NB_ZERO && acc < 0.0) {
                    /* separating: flip the contact (exactly -acc) */
                    for (c = 0; c < ks; ++c)
                        row[c] = -row[c];
                    acc = -acc;
                }
                b[i] = 2.0 * acc;
            }
        }
    }
    return 0;
}

/* Problem s's A (m x m, row-major), in the launchers' summation order
 * (all kp columns, k ascending): the same bits as rc_nnls_batch_cpu. */
static void nb_gram(const nb_batch *bt, int s, double *A)
{
    int i, j, c, ms = bt->m[s], kp = bt->kp;
    const double *B = bt->B + (size_t)s * bt->mp * kp;
    for (i = 0; i < ms; ++i)
        for (j = 0; j <= i; ++j) {
            double acc = 0.0;
            for (c = 0; c < kp; ++c)
                acc += B[(size_t)i * kp + c] * B[(size_t)j * kp + c];
            A[(size_t)i * ms + j] = acc;
            A[(size_t)j * ms + i] = acc;
        }
}

/* Worst values over the checked problems (printed by the tests). */
typedef struct nb_stats {
    double dual, dual_near, passive, compl_, energy, lam, impulse, obj;
    int n_dual, n_dual_near, n_passive, n_compl, n_energy, n_lam,
        n_impulse, n_obj;
    int checked, ref_iter_total, ref_iter_max;
} nb_stats;

static void nb_stats_init(nb_stats *t)
{
    memset(t, 0, sizeof *t);
    t->n_dual = t->n_dual_near = t->n_passive = t->n_compl = t->n_energy = t->n_lam =
        t->n_impulse = t->n_obj = -1;
}

static void nb_worst(double e, int s, double *w, int *ws)
{
    if (!(e <= *w)) { /* NaN also becomes the worst */
        *w = e;
        *ws = s;
    }
}

/* f(lambda) in long double: 0.5 |B^T lambda + 2p|^2 - 2|p|^2 for the
 * reflection kinds (from B, p), 0.5 lambda^T A lambda + b^T lambda for
 * the general one. */
static double nb_objective(const nb_batch *bt, int s, const double *A,
                           const double *lam)
{
    int i, j, c, ms = bt->m[s], kp = bt->kp;
    const double *B = bt->B + (size_t)s * bt->mp * kp;
    const double *p = bt->p + (size_t)s * kp;
    const double *b = bt->b + (size_t)s * bt->mp;
    long double f = 0.0L;
    if (bt->kind[s] == NB_GENERAL) {
        for (i = 0; i < ms; ++i) {
            long double r = 0.0L;
            for (j = 0; j < ms; ++j)
                r += (long double)A[(size_t)i * ms + j] * lam[j];
            f += 0.5L * lam[i] * r + (long double)b[i] * lam[i];
        }
        return (double)f;
    }
    for (c = 0; c < kp; ++c) {
        long double y = 2.0L * p[c];
        for (i = 0; i < ms; ++i)
            y += (long double)B[(size_t)i * kp + c] * lam[i];
        f += 0.5L * y * y - 2.0L * (long double)p[c] * p[c];
    }
    return (double)f;
}

/* Problem s's lambda (slice of the batch output) against KKT and, when
 * lam_ref is given (m_s values from rc_k_nnls_gram), against it.
 * A: the problem's m x m Gram matrix (nb_gram). */
static void nb_check(const nb_batch *bt, int s, const double *A,
                     const double *lam, int status, const double *lam_ref,
                     nb_stats *t, const char *who)
{
    int i, j, c, ms = bt->m[s], kp = bt->kp, mp = bt->mp, neg = 0, pad = 0;
    const double *B = bt->B + (size_t)s * mp * kp;
    const double *p = bt->p + (size_t)s * kp;
    const double *b = bt->b + (size_t)s * mp;
    const double *rs = bt->rs + (size_t)s * mp;
    double bmax = 0.0, dmax = 0.0, l1 = 0.0, lmax = 0.0, scale;
    double dual = 0.0, pass = 0.0, compl_ = 0.0;
    const char *kn = nb_kind_name[bt->kind[s]];

    t->checked++;
    RC_CHECK(status == RC_K_NB_CONVERGED, "%s: problem %d (%s, m=%d): status %d",
             who, s, kn, ms, status);
    for (i = 0; i < mp; ++i) {
        if (i < ms && !(lam[i] >= 0.0 && isfinite(lam[i])))
            neg++;
        if (i >= ms && lam[i] != 0.0)
            pad++;
    }
    RC_CHECK(neg == 0, "%s: problem %d (%s, m=%d): %d entries of lambda "
             "negative or not finite", who, s, kn, ms, neg);
    RC_CHECK(pad == 0, "%s: problem %d: %d padded entries nonzero", who, s,
             pad);
    for (i = 0; i < ms; ++i) {
        bmax = fmax(bmax, fabs(b[i]));
        dmax = fmax(dmax, A[(size_t)i * ms + i]);
        l1 += lam[i];
        lmax = fmax(lmax, lam[i]);
    }
    scale = fmax(fmax(bmax, dmax * l1), 1e-300);
    for (i = 0; i < ms; ++i) {
        long double g = b[i];
        double gi;
        for (j = 0; j < ms; ++j)
            g += (long double)A[(size_t)i * ms + j] * lam[j];
        gi = (double)g / scale;
        if (!isfinite(gi)) {
            dual = pass = compl_ = INFINITY;
            break;
        }
        if (lam[i] > 0.0) {
            pass = fmax(pass, fabs(gi));
            compl_ = fmax(compl_, lam[i] * fabs(gi) / fmax(lmax, 1e-300));
        } else {
            dual = fmax(dual, -gi);
        }
    }
    if (bt->kind[s] == NB_NEARDUP)
        nb_worst(dual, s, &t->dual_near, &t->n_dual_near);
    else
        nb_worst(dual, s, &t->dual, &t->n_dual);
    nb_worst(pass, s, &t->passive, &t->n_passive);
    nb_worst(compl_, s, &t->compl_, &t->n_compl);
    RC_CHECK(dual <= (bt->kind[s] == NB_NEARDUP ? KKT_DUAL_NEAR : KKT_DUAL), "%s: problem %d (%s, m=%d): dual "
             "infeasibility %.3e of scale", who, s, kn, ms, dual);
    RC_CHECK(pass <= KKT_PASSIVE, "%s: problem %d (%s, m=%d): passive "
             "residual %.3e of scale", who, s, kn, ms, pass);
    RC_CHECK(compl_ <= KKT_COMPL, "%s: problem %d (%s, m=%d): "
             "complementarity %.3e", who, s, kn, ms, compl_);

    if (bt->kind[s] != NB_GENERAL) {
        /* the reflection p' = p + B^T lambda keeps |p|^2 */
        long double E = 0.0L, E2 = 0.0L;
        double rel;
        for (c = 0; c < kp; ++c) {
            long double y = p[c];
            for (i = 0; i < ms; ++i)
                y += (long double)B[(size_t)i * kp + c] * lam[i];
            E += (long double)p[c] * p[c];
            E2 += y * y;
        }
        rel = (double)fabsl(E2 - E) / (double)(E + (long double)dmax * l1 * l1);
        nb_worst(rel, s, &t->energy, &t->n_energy);
        RC_CHECK(rel <= ENERGY_RTOL, "%s: problem %d (%s, m=%d): energy "
                 "change %.3e", who, s, kn, ms, rel);
    }
    if (bt->kind[s] == NB_ZERO) {
        int nz = 0;
        for (i = 0; i < ms; ++i)
            nz += lam[i] != 0.0;
        RC_CHECK(nz == 0, "%s: problem %d (all separating, m=%d): %d "
                 "nonzero entries", who, s, ms, nz);
    }
    if (!lam_ref)
        return;

    /* against the reference: objective, impulse, and unique lambda */
    {
        double f = nb_objective(bt, s, A, lam);
        double fr = nb_objective(bt, s, A, lam_ref);
        double e = fabs(f - fr) / fmax(fabs(fr), 1e-300);
        if (f == fr)
            e = 0.0;
        nb_worst(e, s, &t->obj, &t->n_obj);
        RC_CHECK(e <= OBJ_RTOL, "%s: problem %d (%s, m=%d): objective %.17g "
                 "vs reference %.17g (rel %.3e)", who, s, kn, ms, f, fr, e);
    }
    {
        double ymax = 0.0, e = 0.0, pmax = 0.0;
        for (c = 0; c < kp; ++c) {
            long double y = 0.0L, yr = 0.0L;
            for (i = 0; i < ms; ++i) {
                y += (long double)B[(size_t)i * kp + c] * lam[i];
                yr += (long double)B[(size_t)i * kp + c] * lam_ref[i];
            }
            ymax = fmax(ymax, fabs((double)yr));
            pmax = fmax(pmax, fabs(p[c]));
            e = fmax(e, fabs((double)(y - yr)));
            if (!isfinite((double)y))
                e = INFINITY;
        }
        if (bt->kind[s] == NB_GENERAL) /* no p: relative to the impulse */
            pmax = 0.0;
        e /= fmax(fmax(ymax, pmax), 1e-300);
        nb_worst(e, s, &t->impulse, &t->n_impulse);
        RC_CHECK(e <= IMPULSE_RTOL, "%s: problem %d (%s, m=%d): impulse "
                 "differs by %.3e", who, s, kn, ms, e);
    }
    if (bt->kind[s] == NB_FULL || bt->kind[s] == NB_SCALED ||
        bt->kind[s] == NB_GENERAL || bt->kind[s] == NB_ZERO) {
        double rmax = 1e-300, e = 0.0;
        int worst = -1;
        for (i = 0; i < ms; ++i)
            rmax = fmax(rmax, fabs(lam_ref[i] * rs[i]));
        for (i = 0; i < ms; ++i) {
            double ei = fabs(lam[i] - lam_ref[i]) * rs[i] / rmax;
            if (!(ei <= e)) {
                e = ei;
                worst = i;
            }
        }
        nb_worst(e, s, &t->lam, &t->n_lam);
        RC_CHECK(e <= LAM_RTOL, "%s: problem %d (%s, m=%d): lambda differs "
                 "by %.3e of max at %d", who, s, kn, ms, e, worst);
    }
}

/* rc_k_nnls_gram on every problem (lam_ref [nprob][mp]); and, when lam
 * is given, the checks of nb_check on the batch result lam. */
static void nb_reference(const nb_batch *bt, double *lam_ref, nb_stats *t)
{
    int s, mmax = 1;
    double *A, *work;
    int *iwork;
    for (s = 0; s < bt->nprob; ++s)
        if (bt->m[s] > mmax)
            mmax = bt->m[s];
    A = (double *)malloc(sizeof(double) * (size_t)mmax * mmax);
    work = (double *)malloc(sizeof(double) *
                            (size_t)rc_k_nnls_work_doubles(mmax));
    iwork = (int *)malloc(sizeof(int) * (size_t)rc_k_nnls_work_ints(mmax));
    RC_CHECK(A && work && iwork, "out of memory");
    if (!A || !work || !iwork)
        goto out;
    memset(lam_ref, 0, sizeof(double) * (size_t)bt->nprob * bt->mp);
    for (s = 0; s < bt->nprob; ++s) {
        rc_k_nnls_result r;
        nb_gram(bt, s, A);
        r = rc_k_nnls_gram(bt->m[s], A, bt->b + (size_t)s * bt->mp,
                           lam_ref + (size_t)s * bt->mp, work, iwork, 0,
                           NB_TOL);
        RC_CHECK(r.status == 0, "reference: problem %d (m=%d): status %d", s,
                 bt->m[s], r.status);
        t->ref_iter_total += r.iterations;
        if (r.iterations > t->ref_iter_max)
            t->ref_iter_max = r.iterations;
    }
out:
    free(A);
    free(work);
    free(iwork);
}

/* nb_check on every problem of a batch result. */
static void nb_check_all(const nb_batch *bt, const double *lam,
                         const int *status, const double *lam_ref,
                         nb_stats *t, const char *who)
{
    int s, mmax = 1;
    double *A;
    for (s = 0; s < bt->nprob; ++s)
        if (bt->m[s] > mmax)
            mmax = bt->m[s];
    A = (double *)malloc(sizeof(double) * (size_t)mmax * mmax);
    RC_CHECK(A != NULL, "out of memory");
    if (!A)
        return;
    for (s = 0; s < bt->nprob; ++s) {
        nb_gram(bt, s, A);
        nb_check(bt, s, A, lam + (size_t)s * bt->mp, status[s],
                 lam_ref ? lam_ref + (size_t)s * bt->mp : NULL, t, who);
    }
    free(A);
}

static void nb_print(const char *name, const nb_stats *t,
                     const rc_nnls_batch_counts *c)
{
    printf("%s: %d problems checked\n"
           "  KKT (of scale): dual %.2e (p%d) (near-duplicates: %.2e, "
           "p%d), passive %.2e (p%d), complementarity %.2e (p%d)\n"
           "  energy %.2e (p%d); vs reference: lambda %.2e (p%d), impulse "
           "%.2e (p%d), objective %.2e (p%d)\n",
           name, t->checked, t->dual, t->n_dual, t->dual_near,
           t->n_dual_near, t->passive, t->n_passive,
           t->compl_, t->n_compl, t->energy, t->n_energy, t->lam, t->n_lam,
           t->impulse, t->n_impulse, t->obj, t->n_obj);
    if (c)
        printf("  rounds %ld, solves %ld, outer %ld (max %d; reference %d, "
               "max %d), inner %ld (max %d), rejected %ld, status 0/1/2: "
               "%d/%d/%d\n",
               c->rounds, c->solves, c->outer_total, c->outer_max,
               t->ref_iter_total, t->ref_iter_max, c->inner_total,
               c->inner_max, c->solves - c->outer_total - c->inner_total,
               c->converged, c->capped, c->breakdown);
}

/* The batches of the tests: 1 = mixed sizes up to 300 (every size
 * with every kind), 2 = 200 problems of sizes 0 .. 64 (kinds in turn),
 * 3 = batch 1's sizes up to 33 only (every kind; the quick batch for
 * runs under compute-sanitizer, which slows a 300-row solve 10-100x). */
static int nb_make_batch(nb_batch *bt, int which)
{
    static const int sizes[7] = {1, 2, 7, 33, 64, 100, 300};
    int m[7 * NB_NKIND > 200 ? 7 * NB_NKIND : 200], kind[200];
    int s, n = 0;
    unsigned long long rng = 0xB47C4ED5EEDULL;
    if (which == 1 || which == 3) {
        int nsizes = which == 1 ? 7 : 4;
        for (s = 0; s < nsizes * NB_NKIND; ++s) {
            m[n] = sizes[s / NB_NKIND];
            kind[n++] = s % NB_NKIND;
        }
        return nb_make(bt, n, sizes[nsizes - 1], m, kind, 12345);
    }
    for (s = 0; s < 200; ++s) {
        m[n] = (int)(rc_test_uniform(&rng) * 65.0);
        kind[n++] = s % NB_NKIND;
    }
    return nb_make(bt, n, 64, m, kind, 777);
}

#ifndef RC_NNLS_BATCH_TEST_LIB

/* 1 and 2: a batch against the reference and KKT. */
static void test_batch(int which)
{
    nb_batch bt;
    nb_stats t;
    rc_nnls_batch_counts c;
    double *lam = NULL, *lam_ref = NULL;
    int *status = NULL;
    char why[300] = "", name[64];
    rc_status st;
    nb_stats_init(&t);
    RC_CHECK(nb_make_batch(&bt, which) == 0, "out of memory");
    lam = (double *)malloc(sizeof(double) * (size_t)bt.nprob * bt.mp);
    lam_ref = (double *)malloc(sizeof(double) * (size_t)bt.nprob * bt.mp);
    status = (int *)malloc(sizeof(int) * (size_t)bt.nprob);
    RC_CHECK(lam && lam_ref && status, "out of memory");
    if (!lam || !lam_ref || !status || !bt.B)
        goto out;
    st = rc_nnls_batch_cpu(bt.nprob, bt.mp, bt.kp, bt.m, bt.B, bt.b, NB_TOL,
                           0, lam, status, &c, why, sizeof why);
    RC_CHECK(st == RC_OK, "rc_nnls_batch_cpu: %s: %s", rc_status_name(st),
             why);
    if (st != RC_OK)
        goto out;
    RC_CHECK(c.converged == bt.nprob && c.capped == 0 && c.breakdown == 0,
             "batch %d: %d/%d/%d converged/capped/breakdown of %d", which,
             c.converged, c.capped, c.breakdown, bt.nprob);
    RC_CHECK(c.rounds >= c.outer_max && c.solves >= c.outer_total &&
                 c.rounds <= c.solves,
             "batch %d: inconsistent counts", which);
    /* the near-duplicate problems exercise the rejection path */
    RC_CHECK(c.solves > c.outer_total + c.inner_total,
             "batch %d: no candidate was rejected", which);
    nb_reference(&bt, lam_ref, &t);
    nb_check_all(&bt, lam, status, lam_ref, &t, "cpu");
    snprintf(name, sizeof name, "batch %d (nprob %d, mp %d, kp %d)", which,
             bt.nprob, bt.mp, bt.kp);
    nb_print(name, &t, &c);
out:
    free(lam);
    free(lam_ref);
    free(status);
    nb_free(&bt);
}

/* LAPACK, as the CPU launcher declares it (hidden CHARACTER length). */
extern void dpotrf_(const char *uplo, const int *n, double *a,
                    const int *lda, int *info, size_t uplo_len);
extern void dpotrs_(const char *uplo, const int *n, const int *nrhs,
                    const double *a, const int *lda, double *b,
                    const int *ldb, int *info, size_t uplo_len);

/* The GPU launcher's lockstep on the CPU: the bodies over the whole
 * padded batch layout (view of all nprob problems at leading size mp),
 * every round building every masked system entry by entry
 * (rc_k_nnls_batch_entry, column-major), factoring and solving all nprob
 * full mp x mp systems, finished ones as identities, then updating all
 * and counting the unfinished: the structure of rc_cuda_nnls_batch with
 * LAPACK in place of cuSOLVER.  It exercises what the CPU launcher (each
 * problem at its own size) does not: the padding rows, the inert
 * identity systems and the batch offsets.  Returns the rounds, or -1. */
static long nb_lockstep(const nb_batch *bt, double *lam, int *status,
                        long *outer_total)
{
    int np_ = bt->nprob, mp = bt->mp, kp = bt->kp, s, i, j, c, one = 1;
    size_t n2 = (size_t)mp * mp, nv = (size_t)np_ * mp;
    double *A = (double *)calloc((size_t)np_ * n2, sizeof(double));
    double *Ahat = (double *)calloc((size_t)np_ * n2, sizeof(double));
    double *vec = (double *)calloc(3 * nv, sizeof(double));
    double *sc = (double *)calloc(3 * (size_t)np_, sizeof(double));
    int *ivec = (int *)calloc(2 * nv, sizeof(int));
    int *isc = (int *)calloc(7 * (size_t)np_, sizeof(int));
    int *info = (int *)calloc((size_t)np_, sizeof(int));
    long rounds = -1, bound = 0;
    int left = 0;
    rc_k_nnls_batch v;
    if (!A || !Ahat || !vec || !sc || !ivec || !isc || !info)
        goto out;
    for (s = 0; s < np_; ++s) {
        const double *B = bt->B + (size_t)s * mp * kp;
        long bs = rc_k_nnls_batch_round_bound(bt->m[s], 0);
        if (bs > bound)
            bound = bs;
        for (i = 0; i < mp; ++i) /* all mp rows: the padding is 0 */
            for (j = 0; j < mp; ++j) {
                double acc = 0.0;
                for (c = 0; c < kp; ++c)
                    acc += B[(size_t)i * kp + c] * B[(size_t)j * kp + c];
                A[(size_t)s * n2 + (size_t)j * mp + i] = acc;
            }
    }
    v.nprob = np_;
    v.mp = mp;
    v.tol = NB_TOL;
    v.max_iter = 0;
    v.m = bt->m;
    v.A = A;
    v.b = bt->b;
    v.lam = lam;
    v.w = vec;
    v.z = vec + nv;
    v.Ahat = Ahat;
    v.col = ivec;
    v.plist = ivec + nv;
    v.info = info;
    v.phase = isc;
    v.status = status;
    v.enter = isc + np_;
    v.np = isc + 2 * np_;
    v.outer = isc + 3 * np_;
    v.inner = isc + 4 * np_;
    v.solves = isc + 5 * np_;
    v.thr = sc;
    v.dmax = sc + np_;
    v.bmax = sc + 2 * np_;
    for (s = 0; s < np_; ++s)
        left += rc_k_nnls_batch_init(v, s);
    rounds = 0;
    while (left > 0 && rounds < bound) {
        for (s = 0; s < np_; ++s)
            for (j = 0; j < mp; ++j)
                for (i = 0; i < mp; ++i)
                    Ahat[(size_t)s * n2 + (size_t)j * mp + i] =
                        rc_k_nnls_batch_entry(v, s, i, j);
        for (s = 0; s < np_; ++s) {
            dpotrf_("L", &mp, Ahat + (size_t)s * n2, &mp, &info[s],
                    (size_t)1);
            if (info[s] == 0) {
                int info2 = 0;
                dpotrs_("L", &mp, &one, Ahat + (size_t)s * n2, &mp,
                        v.z + (size_t)s * mp, &mp, &info2, (size_t)1);
            }
        }
        left = 0;
        for (s = 0; s < np_; ++s)
            left += rc_k_nnls_batch_update(v, s);
        ++rounds;
    }
    if (left > 0)
        rounds = -1;
    *outer_total = 0;
    for (s = 0; s < np_; ++s)
        *outer_total += v.outer[s];
out:
    free(A);
    free(Ahat);
    free(vec);
    free(sc);
    free(ivec);
    free(isc);
    free(info);
    return rounds;
}

/* 2b: the lockstep (GPU structure) against the CPU launcher and KKT, on
 * batch 2 (mp = 64) and on a mixed batch padded to mp = 100. */
static void test_lockstep(int which)
{
    static const int sizes[6] = {1, 2, 7, 33, 64, 100};
    nb_batch bt;
    nb_stats t;
    rc_nnls_batch_counts c;
    double *lc = NULL, *ll = NULL;
    int *sc = NULL, *sl = NULL, m[6 * NB_NKIND], kind[6 * NB_NKIND], s;
    long rounds, outer = 0;
    char why[300] = "", name[80];
    nb_stats_init(&t);
    if (which == 2) {
        RC_CHECK(nb_make_batch(&bt, 2) == 0, "out of memory");
    } else {
        for (s = 0; s < 6 * NB_NKIND; ++s) {
            m[s] = sizes[s / NB_NKIND];
            kind[s] = s % NB_NKIND;
        }
        RC_CHECK(nb_make(&bt, 6 * NB_NKIND, 100, m, kind, 2024) == 0,
                 "out of memory");
    }
    lc = (double *)malloc(sizeof(double) * (size_t)bt.nprob * bt.mp);
    ll = (double *)malloc(sizeof(double) * (size_t)bt.nprob * bt.mp);
    sc = (int *)malloc(sizeof(int) * (size_t)bt.nprob);
    sl = (int *)malloc(sizeof(int) * (size_t)bt.nprob);
    RC_CHECK(lc && ll && sc && sl, "out of memory");
    if (!lc || !ll || !sc || !sl || !bt.B)
        goto out;
    RC_CHECK(rc_nnls_batch_cpu(bt.nprob, bt.mp, bt.kp, bt.m, bt.B, bt.b,
                               NB_TOL, 0, lc, sc, &c, why,
                               sizeof why) == RC_OK,
             "rc_nnls_batch_cpu: %s", why);
    rounds = nb_lockstep(&bt, ll, sl, &outer);
    RC_CHECK(rounds >= 0, "lockstep did not finish (or out of memory)");
    if (rounds < 0)
        goto out;
    RC_CHECK(rounds == c.rounds, "lockstep: %ld rounds, launcher %ld",
             rounds, c.rounds);
    for (s = 0; s < bt.nprob; ++s)
        RC_CHECK(sl[s] == sc[s], "lockstep problem %d: status %d vs %d", s,
                 sl[s], sc[s]);
    /* KKT of the lockstep answers, the launcher's as the reference
     * (same tolerances: the full mp x mp factorisation blocks the
     * passive block differently from the m_s x m_s one) */
    nb_check_all(&bt, ll, sl, lc, &t, "lockstep");
    snprintf(name, sizeof name, "lockstep batch (nprob %d, mp %d), %ld "
             "rounds, outer %ld", bt.nprob, bt.mp, rounds, outer);
    nb_print(name, &t, NULL);
out:
    free(lc);
    free(ll);
    free(sc);
    free(sl);
    nb_free(&bt);
}

/* 3: a problem alone, at another padding, gives the same bits. */
static void test_isolation(void)
{
    nb_batch big, one;
    int ms[3], kinds[3], s, i, st0, diff = 0;
    double *lb, *l1;
    int *sb, *s1;
    char why[300] = "";
    ms[0] = 33; kinds[0] = NB_CONTACT;
    ms[1] = 64; kinds[1] = NB_FULL;
    ms[2] = 7;  kinds[2] = NB_DUP;
    nb_make(&big, 3, 100, ms, kinds, 4242);
    lb = (double *)malloc(sizeof(double) * 3 * 100);
    sb = (int *)malloc(sizeof(int) * 3);
    l1 = (double *)malloc(sizeof(double) * 64);
    s1 = (int *)malloc(sizeof(int));
    st0 = rc_nnls_batch_cpu(3, 100, big.kp, big.m, big.B, big.b, NB_TOL, 0,
                            lb, sb, NULL, why, sizeof why);
    RC_CHECK(st0 == RC_OK, "isolation batch: %s", why);
    for (s = 0; s < 3 && st0 == RC_OK; ++s) {
        /* problem s alone, padded to its own size, same kp */
        one = big;
        one.nprob = 1;
        one.mp = big.m[s];
        one.m = big.m + s;
        one.B = (double *)calloc((size_t)big.m[s] * big.kp, sizeof(double));
        if (!one.B)
            break;
        memcpy(one.B, big.B + (size_t)s * 100 * big.kp,
               sizeof(double) * (size_t)big.m[s] * big.kp);
        one.b = big.b + (size_t)s * 100;
        RC_CHECK(rc_nnls_batch_cpu(1, one.mp, one.kp, one.m, one.B, one.b,
                                   NB_TOL, 0, l1, s1, NULL, why,
                                   sizeof why) == RC_OK,
                 "alone: %s", why);
        for (i = 0; i < big.m[s]; ++i)
            diff += memcmp(&l1[i], &lb[s * 100 + i], sizeof(double)) != 0;
        RC_CHECK(s1[0] == sb[s], "problem %d: status %d alone, %d in batch",
                 s, s1[0], sb[s]);
        free(one.B);
    }
    RC_CHECK(diff == 0, "%d entries differ between alone and in a batch",
             diff);
    free(lb);
    free(sb);
    free(l1);
    free(s1);
    nb_free(&big);
}

/* 4: failure isolation, the iteration cap, bad arguments. */
static void test_failures(void)
{
    nb_batch bt;
    int ms[3], kinds[3], status[3], i, j, neg = 0;
    double lam[3 * 40], A[33 * 33], pass = 0.0, scale, bmax = 0.0,
           dmax = 0.0, l1 = 0.0;
    char why[300] = "";
    rc_nnls_batch_counts c;
    rc_status st;
    ms[0] = 7;  kinds[0] = NB_FULL;
    ms[1] = 33; kinds[1] = NB_FULL;
    ms[2] = 20; kinds[2] = NB_CONTACT;
    RC_CHECK(nb_make(&bt, 3, 40, ms, kinds, 99) == 0, "out of memory");

    /* NaN in problem 0's B: status 2 there, lambda = 0; others fine */
    bt.B[3] = NAN;
    st = rc_nnls_batch_cpu(3, 40, bt.kp, bt.m, bt.B, bt.b, NB_TOL, 0, lam,
                           status, &c, why, sizeof why);
    RC_CHECK(st == RC_OK, "NaN batch: %s", why);
    RC_CHECK(status[0] == RC_K_NB_BREAKDOWN, "NaN problem: status %d",
             status[0]);
    for (i = 0; i < 40; ++i)
        RC_CHECK(lam[i] == 0.0, "NaN problem: lambda[%d] = %g", i, lam[i]);
    RC_CHECK(status[1] == 0 && status[2] == 0,
             "neighbours of the NaN problem: status %d, %d", status[1],
             status[2]);
    RC_CHECK(c.breakdown == 1 && c.converged == 2, "counts %d/%d/%d",
             c.converged, c.capped, c.breakdown);
    bt.B[3] = 0.5;

    /* the cap: one column may enter, problem 1 needs more */
    st = rc_nnls_batch_cpu(3, 40, bt.kp, bt.m, bt.B, bt.b, NB_TOL, 1, lam,
                           status, &c, why, sizeof why);
    RC_CHECK(st == RC_OK, "capped batch: %s", why);
    RC_CHECK(status[1] == RC_K_NB_CAPPED, "capped problem: status %d",
             status[1]);
    RC_CHECK(c.outer_max <= 1 && c.capped >= 1, "cap: outer_max %d, capped %d",
             c.outer_max, c.capped);
    nb_gram(&bt, 1, A);
    for (i = 0; i < 33; ++i) {
        double li = lam[40 + i];
        if (!(li >= 0.0))
            neg++;
        bmax = fmax(bmax, fabs(bt.b[40 + i]));
        dmax = fmax(dmax, A[i * 33 + i]);
        l1 += li;
    }
    scale = fmax(bmax, dmax * l1);
    for (i = 0; i < 33; ++i)
        if (lam[40 + i] > 0.0) {
            long double g = bt.b[40 + i];
            for (j = 0; j < 33; ++j)
                g += (long double)A[i * 33 + j] * lam[40 + j];
            pass = fmax(pass, fabs((double)g) / scale);
        }
    RC_CHECK(neg == 0 && pass <= KKT_PASSIVE,
             "capped lambda: %d negative, passive residual %.3e", neg, pass);

    /* arguments */
    RC_CHECK(rc_nnls_batch_cpu(0, 40, bt.kp, NULL, NULL, NULL, NB_TOL, 0,
                               NULL, NULL, &c, why, sizeof why) == RC_OK,
             "nprob = 0 must be a no-op");
    RC_CHECK(rc_nnls_batch_cpu(3, 0, bt.kp, bt.m, bt.B, bt.b, NB_TOL, 0, lam,
                               status, &c, why,
                               sizeof why) == RC_ERR_INVALID,
             "mp = 0 accepted");
    RC_CHECK(rc_nnls_batch_cpu(3, 40, bt.kp, bt.m, NULL, bt.b, NB_TOL, 0, lam,
                               status, &c, why,
                               sizeof why) == RC_ERR_INVALID,
             "B = NULL accepted");
    bt.m[2] = 41;
    RC_CHECK(rc_nnls_batch_cpu(3, 40, bt.kp, bt.m, bt.B, bt.b, NB_TOL, 0, lam,
                               status, &c, why,
                               sizeof why) == RC_ERR_INVALID,
             "m > mp accepted");
    nb_free(&bt);
}

int main(void)
{
    test_batch(1);
    test_batch(2);
    test_lockstep(2);
    test_lockstep(3);
    test_isolation();
    test_failures();
    return rc_test_finish("test_nnls_batch");
}

#endif /* RC_NNLS_BATCH_TEST_LIB */

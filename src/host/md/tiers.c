/* The host tiers of the island solves (tiers.h): the islands that the
 * step's per-thread and batched tiers leave, solved on host memory.
 *
 * Island tiers: up to par.dense_max contacts, the dense Lawson–Hanson
 * kernel (src/kernels/rc_nnls.h); up to par.lapack_max, Lawson–Hanson
 * with LAPACK Cholesky solves; above, projected Gauss–Seidel on the
 * sparse Gram matrix to the relative tolerance par.pgs_tol (reported).
 * The metric is M^-1: reflections conserve the kinetic energy exactly in
 * exact arithmetic (to the NNLS residual in floating point). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "tiers.h"
#include "../../kernels/rc_dense.h"
#include "../../kernels/rc_nnls.h"

/* Gram entry n_a^T M^-1 n_b of contacts a and b (shared particles). */
static double rc_md_gram(const rc_k_md *v, const rc_md_contact *a,
                         const rc_md_contact *b)
{
    return rc_k_md_gram(v, a, b);
}

/* Per-thread scratch of the island solves. */
typedef struct rc_md_scratch {
    long cap;
    int *V;           /* [cap] contacts of the solve (indices into A) */
    double *b, *lam, *x; /* [cap] */
    double *gram, *w; /* dense tier: [gram_cap^2], NNLS work */
    int *iw;
    long gram_cap;
    /* sparse tier: CSR of the Gram matrix */
    long *rowp, *inc;  /* [cap+1], incidences [2 cap] */
    long *fill;        /* [cap] next free slot of each CSR row */
    long *col;         /* [ncap] */
    double *val, *diag; /* [ncap], [cap] */
    long ncap;
} rc_md_scratch;

static void rc_md_scratch_free(rc_md_scratch *s)
{
    free(s->V);
    free(s->b);
    free(s->lam);
    free(s->x);
    free(s->gram);
    free(s->w);
    free(s->iw);
    free(s->rowp);
    free(s->inc);
    free(s->fill);
    free(s->col);
    free(s->val);
    free(s->diag);
    memset(s, 0, sizeof *s);
}

#define RC_GROW(ptr, type, count, ok)                                        \
    do {                                                                     \
        type *np_ = (type *)realloc((ptr), sizeof(type) * (size_t)(count));  \
        if (np_)                                                             \
            (ptr) = np_;                                                     \
        else                                                                 \
            (ok) = 0;                                                        \
    } while (0)

static int rc_md_scratch_fit(rc_md_scratch *s, long m, int dense)
{
    int ok = 1;
    if (m > s->cap) {
        long cap = m + m / 2 + 16;
        RC_GROW(s->V, int, cap, ok);
        RC_GROW(s->b, double, cap, ok);
        RC_GROW(s->lam, double, cap, ok);
        RC_GROW(s->x, double, cap, ok);
        RC_GROW(s->rowp, long, cap + 1, ok);
        RC_GROW(s->inc, long, 2 * cap, ok);
        RC_GROW(s->fill, long, cap, ok);
        RC_GROW(s->diag, double, cap, ok);
        if (!ok)
            return -1;
        s->cap = cap;
    }
    if (dense && m > s->gram_cap) {
        RC_GROW(s->gram, double, m * m, ok);
        RC_GROW(s->w, double, rc_k_nnls_work_doubles((int)m), ok);
        RC_GROW(s->iw, int, rc_k_nnls_work_ints((int)m), ok);
        if (!ok)
            return -1;
        s->gram_cap = m;
    }
    return 0;
}

/* Particle of incidence code e (2 contact + end). */
static int rc_md_inc_particle(const rc_k_md *v, const int *V, long e)
{
    const rc_md_contact *c = &v->con[V[e / 2]];
    return e % 2 ? c->j : c->i;
}

static const rc_k_md *g_sort_v;
static const int *g_sort_V;

static int rc_md_cmp_inc(const void *pa, const void *pb)
{
    long a = *(const long *)pa, b = *(const long *)pb;
    int ia = rc_md_inc_particle(g_sort_v, g_sort_V, a);
    int ib = rc_md_inc_particle(g_sort_v, g_sort_V, b);
    return ia != ib ? (ia > ib) - (ia < ib) : (a > b) - (a < b);
}

/* CSR of the Gram matrix of the contacts V[0..m): off-diagonal entries
 * between contacts that share a particle, diagonal apart.  Incidences
 * sorted by particle (qsort: this tier is for the rare large islands;
 * the comparison is a total order, so the result is deterministic). */
static int rc_md_csr(const rc_k_md *v, const int *V, long m,
                     rc_md_scratch *s)
{
    long e, ninc = 0, a, nnz = 0, g0, g1, u, w;
    int ok = 1;
    for (a = 0; a < m; ++a) {
        s->inc[ninc++] = 2 * a;
        if (v->con[V[a]].j >= 0)
            s->inc[ninc++] = 2 * a + 1;
    }
#pragma omp critical(rc_md_qsort)
    {
        g_sort_v = v;
        g_sort_V = V;
        qsort(s->inc, (size_t)ninc, sizeof(long), rc_md_cmp_inc);
    }
    /* count: each group of incidences of one particle links its
     * contacts pairwise */
    for (a = 0; a <= m; ++a)
        s->rowp[a] = 0;
    for (g0 = 0; g0 < ninc; g0 = g1) {
        int part = rc_md_inc_particle(v, V, s->inc[g0]);
        for (g1 = g0 + 1;
             g1 < ninc && rc_md_inc_particle(v, V, s->inc[g1]) == part; ++g1)
            ;
        for (u = g0; u < g1; ++u)
            s->rowp[s->inc[u] / 2 + 1] += g1 - g0 - 1;
    }
    for (a = 0; a < m; ++a)
        s->rowp[a + 1] += s->rowp[a];
    nnz = s->rowp[m];
    if (nnz > s->ncap) {
        long cap = nnz + nnz / 2 + 16;
        RC_GROW(s->col, long, cap, ok);
        RC_GROW(s->val, double, cap, ok);
        if (!ok)
            return -1;
        s->ncap = cap;
    }
    for (a = 0; a < m; ++a) {
        s->fill[a] = s->rowp[a];
        s->diag[a] = rc_md_gram(v, &v->con[V[a]], &v->con[V[a]]);
    }
    for (g0 = 0; g0 < ninc; g0 = g1) {
        int part = rc_md_inc_particle(v, V, s->inc[g0]);
        for (g1 = g0 + 1;
             g1 < ninc && rc_md_inc_particle(v, V, s->inc[g1]) == part; ++g1)
            ;
        for (u = g0; u < g1; ++u)
            for (w = g0; w < g1; ++w) {
                long ra = s->inc[u] / 2, cb = s->inc[w] / 2, pos;
                const rc_md_contact *ca = &v->con[V[ra]],
                                    *cbb = &v->con[V[cb]];
                double nn = 0.0, sa, sb;
                int k;
                if (u == w)
                    continue;
                for (k = 0; k < v->dim; ++k)
                    nn += ca->n[k] * cbb->n[k];
                sa = s->inc[u] % 2 ? -1.0 : 1.0; /* end j: -n */
                sb = s->inc[w] % 2 ? -1.0 : 1.0;
                pos = s->fill[ra]++;
                s->col[pos] = cb;
                s->val[pos] = sa * sb * nn * v->inv_mass[part];
            }
    }
    (void)e;
    return 0;
}

/* LAPACK's Cholesky solve (Fortran symbol; liblapack from Debian). */
extern void dposv_(const char *uplo, const int *n, const int *nrhs, double *a,
                   const int *lda, double *b, const int *ldb, int *info);

/* Medium tier: Lawson–Hanson active set on the dense Gram matrix in
 * s->gram (m x m), each passive solve a LAPACK Cholesky of the passive
 * block (copied: dposv overwrites it).  Same problem and optimality test
 * as rc_k_nnls_gram (1e-12 of max(|b|, max_diag |lam|_1)); a column whose
 * block is not positive definite (dependent on the passive ones) is
 * skipped.  Work: s->w holds m^2 + 2m doubles, s->iw 2m ints.  Returns
 * 0, or 2 when it did not settle in 3m column entries. */
static int rc_md_nnls_lapack(long m, rc_md_scratch *s)
{
    double *G = s->gram, *b = s->b, *lam = s->lam;
    double *A = s->w, *z = s->w + m * m, *wd = z + m;
    int *P = s->iw, *state = s->iw + m; /* 0 free, 1 passive, 2 skipped */
    long np = 0, a, c, iter;
    double bmax = 0.0, dmax = 0.0;
    for (a = 0; a < m; ++a) {
        lam[a] = 0.0;
        state[a] = 0;
        bmax = fmax(bmax, fabs(b[a]));
        dmax = fmax(dmax, G[a * m + a]);
    }
    for (iter = 0; iter < 3 * m + 3; ++iter) {
        long t = -1;
        double best = 0.0, l1 = 0.0, scale;
        for (a = 0; a < m; ++a)
            l1 += fabs(lam[a]);
        scale = fmax(bmax, dmax * l1);
        /* dual w = -(G lam + b) */
        for (a = 0; a < m; ++a) {
            double r = b[a];
            for (c = 0; c < m; ++c)
                r += G[a * m + c] * lam[c];
            wd[a] = -r;
            if (state[a] == 0 && wd[a] > 1e-12 * scale && wd[a] > best) {
                best = wd[a];
                t = a;
            }
        }
        if (t < 0)
            return 0;
        P[np++] = (int)t;
        state[t] = 1;
        for (;;) {
            int n = (int)np, one = 1, info = 0;
            long i, k;
            double alpha = 1.0;
            for (i = 0; i < np; ++i) {
                for (k = 0; k < np; ++k)
                    A[i * np + k] = G[(long)P[i] * m + P[k]];
                z[i] = -b[P[i]];
            }
            dposv_("L", &n, &one, A, &n, z, &n, &info);
            if (info != 0) { /* t depends on the passive columns: skip */
                state[P[np - 1]] = 2;
                --np;
                break;
            }
            for (i = 0; i < np; ++i)
                if (z[i] <= 0.0) {
                    double l = lam[P[i]];
                    alpha = fmin(alpha, l / (l - z[i]));
                }
            if (alpha >= 1.0) {
                for (i = 0; i < np; ++i)
                    lam[P[i]] = z[i];
                break;
            }
            for (i = 0; i < np; ++i)
                lam[P[i]] += alpha * (z[i] - lam[P[i]]);
            for (i = 0, k = 0; i < np; ++i)
                if (lam[P[i]] > 0.0)
                    P[k++] = P[i];
                else {
                    lam[P[i]] = 0.0;
                    state[P[i]] = 0;
                }
            np = k;
            if (np == 0)
                break;
        }
    }
    return 2;
}

/* min 1/2 l^T (scale G) l + b^T l over l >= 0 (inequality) or the
 * solution of scale G l = -b (equality), for the contacts V[0..m) with
 * their normals (con[].n).  Dense tier (m <= dense_max): Lawson–Hanson
 * NNLS / LU; sparse tier: projected Gauss–Seidel on the CSR Gram matrix
 * to the relative residual par.pgs_tol.  Result in s->lam.  Returns 0,
 * or 2 (dense solver failed), 3 (memory), 4 (PGS missed its tolerance). */
static int rc_md_solve(const rc_md_params *par, const rc_k_md *v,
                       const int *V, long m, double scale,
                       int equality, rc_md_scratch *s, rc_md_counts *cnt)
{
    long a, b;
    if (m <= par->dense_max || m <= par->lapack_max) {
        /* the dense tiers: the Gram matrix in full */
        if (rc_md_scratch_fit(s, m, 1) != 0)
            return 3;
        for (a = 0; a < m; ++a)
            for (b = 0; b <= a; ++b) {
                double g = scale * rc_md_gram(v, &v->con[V[a]], &v->con[V[b]]);
                s->gram[a * m + b] = g;
                s->gram[b * m + a] = g;
            }
        if (equality)
            for (a = 0; a < m; ++a)
                s->lam[a] = -s->b[a];
        if (m > par->dense_max) {
            /* medium tier: LAPACK Cholesky */
            cnt->lapack_islands++;
            if (equality) {
                int nn = (int)m, one = 1, info = 0;
                dposv_("L", &nn, &one, s->gram, &nn, s->lam, &nn, &info);
                return info != 0 ? 2 : 0;
            }
            return rc_md_nnls_lapack(m, s);
        }
        if (equality) /* rc_k_lu_solve's piv: the NNLS int work has 2m */
            return rc_k_lu_solve((int)m, s->gram, s->lam, s->iw) != 0 ? 2 : 0;
        {
            /* solver tolerance: 1e-12 of its own scale (rc_nnls.h) */
            rc_k_nnls_result r = rc_k_nnls_gram((int)m, s->gram, s->b, s->lam,
                                                s->w, s->iw, 0, 1e-12);
            return r.status != 0 ? 2 : 0;
        }
    }
    {
        int it;
        double bmax = 0.0, res = INFINITY;
        if (rc_md_csr(v, V, m, s) != 0)
            return 3;
        for (a = 0; a < m; ++a) {
            s->lam[a] = 0.0;
            bmax = fmax(bmax, fabs(s->b[a]));
        }
        cnt->pgs_islands++;
        if (!(bmax > 0.0))
            return 0;
        for (it = 0; it < par->pgs_max_iter && !(res <= par->pgs_tol);
             ++it) {
            res = 0.0;
            for (a = 0; a < m; ++a) {
                double r = s->b[a] + scale * s->diag[a] * s->lam[a], nl;
                double gaa = scale * s->diag[a];
                long e;
                for (e = s->rowp[a]; e < s->rowp[a + 1]; ++e)
                    r += scale * s->val[e] * s->lam[s->col[e]];
                /* complementarity residual (inequality) or residual */
                res = fmax(res, (equality ? fabs(r)
                                          : fabs(fmin(s->lam[a], r))) /
                                    bmax);
                nl = s->lam[a] - r / gaa;
                s->lam[a] = equality ? nl : fmax(0.0, nl);
            }
        }
        cnt->pgs_residual = fmax(cnt->pgs_residual, res);
        return res <= par->pgs_tol ? 0 : 4;
    }
}

/* One island: passes of generalized reflection until no contact
 * approaches, each pass solved by the tier its size takes.  Returns 0 or
 * a failure code (rc_md_island_failed's). */
static int rc_md_reflect_island(const rc_md_params *par, const rc_k_md *v,
                                long s, rc_md_scratch *sc, rc_md_counts *cnt)
{
    long lo = v->istart[s], hi = v->istart[s + 1], m = hi - lo;
    int pass, f;
    if (rc_md_scratch_fit(sc, m, 0) != 0)
        return 3;
    for (pass = 0;; ++pass) {
        long nv = rc_k_md_pass_select(v->dim, v->p, v->inv_mass, v->con,
                                      v->order + lo, m, v->eps_v, v->moreau,
                                      v->max_passes, pass, sc->V, sc->b);
        if (nv == 0)
            break;
        if (nv < 0)
            return 1;
        if ((f = rc_md_solve(par, v, sc->V, nv, 1.0, 0, sc, cnt)) != 0)
            return f;
        rc_k_md_pass_apply(v->dim, v->p, v->touched, v->con, sc->V, nv,
                           sc->lam);
        cnt->passes++;
    }
    if (pass > 0)
        cnt->islands += 1;
    if (m > cnt->largest_island)
        cnt->largest_island = m;
    return 0;
}

/* Island s: if the reflected predictor still violates one of its
 * contacts (a force, not the velocity, drives it through: a sphere resting
 * on a floor under gravity), solve eq. 48 with complementarity,
 *   x = q^p + h M^-1 C mu,  0 <= mu _|_ g(x) >= 0,
 * by successive linearisation (the rules of rc_k_md_hold_start/_rhs/
 * _shift/_kick, shared with the per-thread body): each round solves the
 * LCP min 1/2 mu^T (h G) mu + b^T mu, b = g(x) - h G mu_current, until no
 * contact of the island is violated beyond rc_k_md_hold_tol.  Returns 0
 * or a failure code (5: the linearisation did not settle in 50 rounds). */
static int rc_md_hold_island(const rc_md_params *par, const rc_k_md *v,
                             long s, rc_md_scratch *sc, rc_md_counts *cnt)
{
    long lo = v->istart[s], m = v->istart[s + 1] - lo;
    int round, f;
    if (rc_md_scratch_fit(sc, m, 0) != 0)
        return 3;
    if (!(rc_k_md_hold_start(v, v->order + lo, m, sc->V) < 0.0))
        return 0;
    for (round = 0; round < 50; ++round) {
        double worst = rc_k_md_hold_rhs(v, sc->V, m, sc->b);
        if (round > 0 && worst >= -rc_k_md_hold_tol(v))
            break;
        if ((f = rc_md_solve(par, v, sc->V, m, v->h, 0, sc, cnt)) != 0)
            return f;
        rc_k_md_hold_shift(v, sc->V, m, sc->lam);
    }
    if (round == 50)
        return 5;
    cnt->held += rc_k_md_hold_kick(v, sc->V, m);
    return 0;
}

/* RATTLE's velocity projection for the held contacts of island s: with
 * the normals at x, the normal relative velocities of the contacts held
 * (mu > 0) are set to zero by one equality solve. */
static int rc_md_project_island(const rc_md_params *par, const rc_k_md *v,
                                long s, rc_md_scratch *sc, rc_md_counts *cnt)
{
    long lo = v->istart[s], m = v->istart[s + 1] - lo, nv;
    int f;
    if (rc_md_scratch_fit(sc, m, 0) != 0)
        return 3;
    if ((nv = rc_k_md_project_select(v, v->order + lo, m, sc->V, sc->b)) == 0)
        return 0;
    if ((f = rc_md_solve(par, v, sc->V, nv, 1.0, 1, sc, cnt)) != 0)
        return f;
    rc_k_md_kicks(v, sc->V, nv, sc->lam);
    return 0;
}

rc_status rc_md_tiers_run(rc_md *md, const rc_k_md *v, int stage,
                          const long *isl, long count)
{
    const rc_md_params *par = &md->par;
    long t;
    int fail = 0, nt = 1;
    long fail_island = -1;
    rc_md_counts cnt;
#ifdef _OPENMP
    nt = par->threads > 0 ? par->threads : omp_get_max_threads();
    if (count < 2)
        nt = 1;
#endif
    memset(&cnt, 0, sizeof cnt);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        rc_md_scratch sc;
        rc_md_counts my;
        memset(&sc, 0, sizeof sc);
        memset(&my, 0, sizeof my);
#pragma omp for schedule(dynamic, 1)
        for (t = 0; t < count; ++t) {
            long s = isl[par->reverse_islands ? count - 1 - t : t];
            int f = stage == 0   ? rc_md_reflect_island(par, v, s, &sc, &my)
                    : stage == 1 ? rc_md_hold_island(par, v, s, &sc, &my)
                                 : rc_md_project_island(par, v, s, &sc, &my);
            if (f) {
#pragma omp critical(rc_md_tier_fail)
                if (!fail || s < fail_island) {
                    fail = f;
                    fail_island = s;
                }
            }
        }
#pragma omp critical(rc_md_tier_counts)
        {
            cnt.islands += my.islands;
            cnt.passes += my.passes;
            cnt.held += my.held;
            cnt.pgs_islands += my.pgs_islands;
            cnt.lapack_islands += my.lapack_islands;
            cnt.pgs_residual = fmax(cnt.pgs_residual, my.pgs_residual);
            if (my.largest_island > cnt.largest_island)
                cnt.largest_island = my.largest_island;
        }
        rc_md_scratch_free(&sc);
    }
    md->step.islands += cnt.islands;
    md->step.passes += cnt.passes;
    md->step.held += cnt.held;
    md->step.pgs_islands += cnt.pgs_islands;
    md->step.lapack_islands += cnt.lapack_islands;
    md->step.pgs_residual = fmax(md->step.pgs_residual, cnt.pgs_residual);
    if (cnt.largest_island > md->step.largest_island)
        md->step.largest_island = cnt.largest_island;
    if (fail)
        return rc_md_island_failed(
            md, stage, fail, v->istart[fail_island + 1] - v->istart[fail_island]);
    return RC_OK;
}

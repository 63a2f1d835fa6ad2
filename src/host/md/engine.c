/* The large-system GVI step (DESIGN §6; seed 000 Algorithm 1 for many
 * spheres).  One step of length h from (q, p):
 *
 *   1. predictor q^p = q + h M^-1 (p - h/2 grad V(q)) (uniform gravity is
 *      the only potential of this version);
 *   2. candidate pairs: cell lists at q with a cutoff of the largest
 *      diameter plus twice the largest predictor displacement (no pair
 *      farther apart can touch within the step); wall contacts on walled
 *      axes;
 *   3. extended set A = {g(q) <= eps_g} u {g(q^p) <= 0};
 *   4. islands: connected components of A's pairs (union-find); each
 *      island gets one generalized reflection (seed 000 Algorithm 2:
 *      NNLS on the Gram matrix of its approaching contacts, in passes
 *      until none approaches), islands in parallel — they share no
 *      particle, so the result does not depend on the order;
 *   5. refinement R2: the predictor is re-evaluated with the reflected
 *      momenta and contacts it now finds violated join A (and their
 *      islands are reflected again), until none does;
 *   6. position update x = q^p of the reflected momenta, and the kick
 *      p' = p+ - h/2 grad V(q) - h/2 grad V(x).
 *
 * For hard spheres without forces every contact of A is left
 * non-approaching by its reflection, and the gap of a non-approaching
 * pair on straight lines cannot shrink (|x + t u| is convex in t), so the
 * position update needs no complementarity; contacts held by forces
 * (granular packings under gravity) are not supported yet and are
 * reported when they occur.
 *
 * Island tiers: up to par.dense_max contacts, the dense Lawson–Hanson
 * kernel (src/kernels/rc_nnls.h); above, projected Gauss–Seidel on the
 * sparse Gram matrix to the relative tolerance par.pgs_tol (reported).
 * The metric is M^-1: reflections conserve the kinetic energy exactly in
 * exact arithmetic (to the NNLS residual in floating point). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "../clock.h"
#include "engine.h"
#include "../../kernels/rc_dense.h"
#include "../../kernels/rc_nnls.h"

static rc_status rc_md_fail(rc_md *md, rc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(md->msg, sizeof md->msg, fmt, ap);
    va_end(ap);
    return st;
}

/* ------------------------------------------------------------------ */
/* Set-up.                                                             */

void rc_md_free(rc_md *md)
{
    if (!md)
        return;
    free(md->q);
    free(md->p);
    free(md->mass);
    free(md->inv_mass);
    free(md->radius);
    free(md->image);
    free(md->qp);
    free(md->grad);
    free(md->grad1);
    free(md->dxs);
    free(md->touched);
    free(md->pair_c1);
    free(md->pair_e);
    rc_cells_free(&md->cells);
    rc_pairs_free(&md->cand);
    free(md->con);
    free(md->in_a);
    free(md->label);
    free(md->parent);
    free(md->order);
    free(md->istart);
    free(md->qbuild);
    free(md->wall_in);
    free(md->p_save);
    free(md->pi);
    free(md->pj);
    free(md->cnt);
    memset(md, 0, sizeof *md);
}

rc_status rc_md_init(rc_md *md, const rc_k_box *box, int n, const double *q,
                     const double *p, const double *mass,
                     const double *radius, const rc_md_params *par)
{
    int i, k, d = box->dim;
    size_t N = (size_t)n * (size_t)d;
    double ke = 0.0, mt = 0.0;
    memset(md, 0, sizeof *md);
    md->box = *box;
    md->n = n;
    md->dim = d;
    md->par = *par;
    md->q = (double *)malloc(sizeof(double) * (N + 1));
    md->p = (double *)malloc(sizeof(double) * (N + 1));
    md->qp = (double *)malloc(sizeof(double) * (N + 1));
    md->mass = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    md->inv_mass = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    md->radius = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    md->image = (int *)calloc(N + 1, sizeof(int));
    md->label = (int *)malloc(sizeof(int) * ((size_t)n + 1));
    md->parent = (int *)malloc(sizeof(int) * ((size_t)n + 1));
    md->qbuild = (double *)malloc(sizeof(double) * (N + 1));
    md->grad = (double *)calloc(N + 1, sizeof(double));
    md->grad1 = (double *)calloc(N + 1, sizeof(double));
    md->dxs = (double *)calloc(N + 1, sizeof(double));
    md->touched = (unsigned char *)calloc((size_t)n + 1, 1);
    md->p_save = (double *)malloc(sizeof(double) * (N + 1));
    md->wall_in = (unsigned char *)calloc((size_t)n * 6 + 1, 1);
    md->cnt = (long *)calloc((size_t)n + 1, sizeof(long));
    if (!md->q || !md->p || !md->qp || !md->mass || !md->inv_mass ||
        !md->radius || !md->image || !md->label || !md->parent ||
        !md->qbuild || !md->p_save || !md->wall_in || !md->cnt ||
        !md->grad || !md->grad1 || !md->dxs || !md->touched)
        return rc_md_fail(md, RC_ERR_NOMEM, "out of memory for %d particles",
                          n);
    memcpy(md->q, q, sizeof(double) * N);
    memcpy(md->p, p, sizeof(double) * N);
    for (i = 0; i < n; ++i) {
        if (!(mass[i] > 0.0) || !(radius[i] > 0.0))
            return rc_md_fail(md, RC_ERR_INVALID,
                              "particle %d: mass and radius must be "
                              "positive",
                              i);
        md->mass[i] = mass[i];
        md->inv_mass[i] = 1.0 / mass[i];
        md->radius[i] = radius[i];
        md->rmax = fmax(md->rmax, radius[i]);
        mt += mass[i];
        for (k = 0; k < d; ++k) {
            ke += 0.5 * p[i * d + k] * p[i * d + k] / mass[i];
            if (box->periodic[k])
                rc_k_box_wrap(box, md->q + (long)i * d, md->image + (long)i * d);
        }
    }
    /* Tolerances as for small systems (src/host/gvi.c): 1e-9 of the
     * diameter, 1e-8 of the rms speed (or of diameter/h at rest). */
    if (!(md->par.skin > 0.0))
        md->par.skin = 0.3 * 2.0 * md->rmax;
    md->eps_g = 1e-9 * 2.0 * md->rmax;
    md->eps_v = n > 0 && ke > 0.0 ? 1e-8 * sqrt(2.0 * ke / mt)
                                  : 1e-8 * 2.0 * md->rmax / par->dt;
    for (i = 0; i < n; ++i)
        for (k = 0; k < d; ++k)
            if (!box->periodic[k] &&
                (md->q[i * d + k] < radius[i] - md->eps_g ||
                 md->q[i * d + k] > box->L[k] - radius[i] + md->eps_g))
                return rc_md_fail(md, RC_ERR_INVALID,
                                  "particle %d is outside the walls of axis "
                                  "%d at the start",
                                  i, k);
    if (n > 1 && rc_md_max_overlap(md) > md->eps_g)
        return rc_md_fail(md, RC_ERR_INVALID,
                          "spheres overlap by %g at the start",
                          rc_md_max_overlap(md));
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Contacts.                                                           */

/* Gaps and normals: the kernel bodies (src/kernels/rc_md.h),
 * which the device engine runs too. */
static double rc_md_pair_gap(const rc_md *md, const double *x, int i, int j,
                             double n[3], double *dist)
{
    return rc_k_md_pair_gap(&md->box, md->radius, x, i, j, n, dist);
}

static double rc_md_wall_gap(const rc_md *md, const double *x, int i, int w,
                             double n[3])
{
    return rc_k_md_wall_gap(&md->box, md->radius, x, i, w, n);
}

static int rc_md_push(rc_md *md, int i, int j, double gap, const double n[3],
                      double dist)
{
    rc_md_contact *c;
    if (md->ncon == md->con_cap) {
        long cap = md->con_cap ? 2 * md->con_cap : 1024;
        rc_md_contact *nc = (rc_md_contact *)realloc(
            md->con, sizeof(rc_md_contact) * (size_t)cap);
        if (!nc)
            return -1;
        md->con = nc;
        md->con_cap = cap;
    }
    c = &md->con[md->ncon++];
    c->i = i;
    c->j = j;
    c->gap = gap;
    memcpy(c->n, n, sizeof c->n);
    c->dist = dist;
    c->lam = 0.0;
    c->mu = 0.0;
    return 0;
}

/* q^p for every particle from the current p; returns the largest
 * displacement. */
static double rc_md_predict(rc_md *md)
{
    int i, k, d = md->dim, nt = 1;
    double h = md->par.dt, dmax = 0.0;
#ifdef _OPENMP
    nt = md->par.threads > 0 ? md->par.threads : omp_get_max_threads();
    if (md->n < 4096)
        nt = 1;
#endif
    /* max is exact in any order: the same bits on any thread count */
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1) \
    reduction(max : dmax) private(k)
    for (i = 0; i < md->n; ++i) {
        double s = 0.0;
        for (k = 0; k < d; ++k) {
            double u = h * md->inv_mass[i] *
                       (md->p[i * d + k] - 0.5 * h * md->grad[i * d + k]);
            md->qp[i * d + k] = md->q[i * d + k] + u;
            s += u * u;
        }
        dmax = fmax(dmax, sqrt(s));
    }
    return dmax;
}

/* grad V at x (gravity and the pair potential over the candidate
 * pairs), the pair energy and the force virial sum r_ij . F_ij.  Serial
 * over the sorted candidates: the same sums in the same order on any
 * thread count.  The candidates hold every pair within the cutoff as long
 * as they are valid for x (rc_md_candidates' criterion). */
static void rc_md_forces(rc_md *md, const double *x, double *grad,
                         double *epot, double *virial)
{
    int i, k, d = md->dim, nt = 1;
    long e, nc = md->cand.n;
    double ep_c = 0.0, vir_c = 0.0;
    rc_k_tree ep, vir;
    for (i = 0; i < md->n; ++i)
        for (k = 0; k < d; ++k)
            grad[i * d + k] = -md->mass[i] * md->par.gravity[k];
    if (!md->par.has_pair || nc == 0) {
        *epot = 0.0;
        *virial = 0.0;
        return;
    }
    if (nc > md->pair_cap) {
        double *c1 = (double *)realloc(md->pair_c1, sizeof(double) * (size_t)nc);
        double *pe = c1 ? (double *)realloc(md->pair_e,
                                            sizeof(double) * (size_t)nc)
                        : NULL;
        if (c1)
            md->pair_c1 = c1;
        if (pe)
            md->pair_e = pe;
        md->pair_cap = c1 && pe ? nc : md->pair_cap;
    }
#ifdef _OPENMP
    nt = md->par.threads > 0 ? md->par.threads : omp_get_max_threads();
    if (nc < 8192 || md->pair_cap < nc)
        nt = 1;
#endif
    if (nt > 1) {
        /* the pair terms in parallel (each a pure function of its pair),
         * then summed in candidate order: the same bits on any thread
         * count */
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
        for (e = 0; e < nc; ++e) {
            int a = md->cand.i[e], b = md->cand.j[e];
            double del[3] = {0.0, 0.0, 0.0}, c1 = 0.0, c2;
            double en = 0.0;
            rc_k_box_delta(&md->box, x + (long)a * d, x + (long)b * d, del);
            if (rc_dot(d, del, del) < md->par.pair.a[2])
                en = rc_k_radial_coeffs(&md->par.pair, d, del, &c1, &c2);
            md->pair_c1[e] = c1;
            md->pair_e[e] = en;
        }
    }
    /* energy and virial summed in chunks of RC_K_SUM_CHUNK candidates
     * combined by the launchers' tree (rc_k_reduce's association), so
     * both engines print the same bits */
    rc_k_tree_init(&ep, 0);
    rc_k_tree_init(&vir, 0);
    for (e = 0; e < nc; ++e) {
        int a = md->cand.i[e], b = md->cand.j[e];
        double del[3] = {0.0, 0.0, 0.0}, c1, c2, s;
        rc_k_box_delta(&md->box, x + (long)a * d, x + (long)b * d, del);
        s = rc_dot(d, del, del);
        if (s < md->par.pair.a[2]) {
            if (nt > 1) {
                c1 = md->pair_c1[e];
                ep_c += md->pair_e[e];
            } else { /* one thread (or no memory for the parallel pass):
                      * the same numbers computed here */
                ep_c += rc_k_radial_coeffs(&md->par.pair, d, del, &c1, &c2);
            }
            for (k = 0; k < d; ++k) {
                grad[a * d + k] += c1 * del[k];
                grad[b * d + k] -= c1 * del[k];
            }
            vir_c -= c1 * s; /* r . F with F_a = -c1 del */
        }
        if ((e + 1) % RC_K_SUM_CHUNK == 0 || e + 1 == nc) {
            rc_k_tree_push(&ep, ep_c);
            rc_k_tree_push(&vir, vir_c);
            ep_c = vir_c = 0.0;
        }
    }
    *epot = rc_k_tree_total(&ep);
    *virial = rc_k_tree_total(&vir);
}

/* Largest displacement since the candidate list was built. */
static double rc_md_moved(const rc_md *md)
{
    int i, k, d = md->dim;
    double m2 = 0.0;
    for (i = 0; i < md->n; ++i) {
        double s = 0.0;
        for (k = 0; k < d; ++k) {
            double u = md->q[i * d + k] + md->image[i * d + k] * md->box.L[k] -
                       md->qbuild[i * d + k];
            s += u * u;
        }
        m2 = fmax(m2, s);
    }
    return sqrt(m2);
}

/* Candidate pairs (a Verlet list): every pair within 2 rmax + skin at the
 * build.  A pair left out can touch within this step only if the two
 * spheres together moved more than the skin: 2 (moved since the build +
 * this step's displacement dstep) >= skin.  Rebuilds when that could
 * happen (or `force`); the skin grows when one step alone would use it. */
rc_status rc_md_candidate_cut(rc_md *md, double dstep, double *cut)
{
    int k;
    if (4.0 * dstep >= md->par.skin)
        md->par.skin = 8.0 * dstep; /* a step eats the skin: widen it */
    *cut = fmax(2.0 * md->rmax, md->par.has_pair ? md->par.pair_cut : 0.0) +
           md->par.skin;
    for (k = 0; k < md->dim; ++k)
        if (md->box.periodic[k] && !(*cut < 0.5 * md->box.L[k]))
            return rc_md_fail(md, RC_ERR_INVALID,
                              "the box (L = %g on axis %d) is too small for "
                              "the contact range %g (spheres and their "
                              "motion between list builds); use more "
                              "particles or a smaller dt",
                              md->box.L[k], k, *cut);
    return RC_OK;
}

static rc_status rc_md_candidates(rc_md *md, double dstep, int force)
{
    double cut, t0;
    rc_status st;
    long e;
    int k, i;
    if (md->have_cand && !force &&
        2.0 * (rc_md_moved(md) + dstep) + 2.0 * md->eps_g < md->par.skin) {
        memset(md->in_a, 0, (size_t)md->cand.n + 1);
        return RC_OK;
    }
    if ((st = rc_md_candidate_cut(md, dstep, &cut)) != RC_OK)
        return st;
    t0 = rc_now();
    /* cells a hair wider than the cutoff: at exactly the cutoff a pair
     * within a few ulps of it can fall outside the neighbour cells */
    if (rc_cells_build(&md->cells, &md->box, md->q, md->n,
                       cut * (1.0 + 1e-12)) != 0 ||
        rc_cells_pairs(&md->cells, &md->box, md->q, md->n, cut, &md->cand,
                       md->par.threads) != 0)
        return rc_md_fail(md, RC_ERR_NOMEM, "cell list failed (%d particles, "
                                            "cutoff %g)",
                          md->n, cut);
    md->t_broad += rc_now() - t0;
    free(md->in_a);
    md->in_a = (unsigned char *)calloc((size_t)md->cand.n + 1, 1);
    if (!md->in_a)
        return rc_md_fail(md, RC_ERR_NOMEM, "out of memory");
    for (i = 0; i < md->n; ++i)
        for (k = 0; k < md->dim; ++k)
            md->qbuild[i * md->dim + k] =
                md->q[i * md->dim + k] +
                md->image[i * md->dim + k] * md->box.L[k];
    md->have_cand = 1;
    md->rebuilds++;
    (void)e;
    return RC_OK;
}

/* Add to A the candidates (and walls) violated at q^p (and, when
 * `at_start`, those within eps_g at q).  Returns how many were added, or
 * -1 (out of memory). */
static long rc_md_extend(rc_md *md, int at_start)
{
    long e, added = 0, nc = md->cand.n;
    int i, k, d = md->dim, nt = 1;
    double n[3], dist;
#ifdef _OPENMP
    nt = md->par.threads > 0 ? md->par.threads : omp_get_max_threads();
    if (nc < 8192) /* a parallel region costs more than a short scan */
        nt = 1;
#endif
    /* screen in parallel (a pure function of each candidate, marked 2 in
     * in_a), then add in candidate order: the same A on any thread count.
     * Squared distances first: most candidates are far from contact, and
     * a square root per candidate would be most of the cost. */
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (e = 0; e < nc; ++e) {
        int a = md->cand.i[e], b = md->cand.j[e];
        double del[3] = {0.0, 0.0, 0.0}, sig, sp, sq;
        if (md->in_a[e])
            continue;
        /* after the first scan only pairs with a sphere whose momentum
         * (or held position) changed can have become violated */
        if (!at_start && !md->touched[a] && !md->touched[b])
            continue;
        sig = md->radius[a] + md->radius[b];
        rc_k_box_delta(&md->box, md->qp + (long)a * d, md->qp + (long)b * d,
                       del);
        sp = rc_dot(d, del, del);
        rc_k_box_delta(&md->box, md->q + (long)a * d, md->q + (long)b * d,
                       del);
        sq = rc_dot(d, del, del);
        if (sp <= sig * sig ||
            (at_start && sq <= (sig + md->eps_g) * (sig + md->eps_g)))
            md->in_a[e] = 2;
    }
    for (e = 0; e < nc; ++e) {
        int a = md->cand.i[e], b = md->cand.j[e];
        double gq, gp;
        if (md->in_a[e] != 2)
            continue;
        md->in_a[e] = 0;
        gp = rc_md_pair_gap(md, md->qp, a, b, n, &dist);
        gq = rc_md_pair_gap(md, md->q, a, b, n, &dist);
        if (gp <= 0.0 || (at_start && gq <= md->eps_g)) {
            if (rc_md_push(md, a, b, gq, n, dist) != 0)
                return -1;
            md->in_a[e] = 1;
            ++added;
        }
    }
    for (k = 0; k < d; ++k) {
        if (md->box.periodic[k])
            continue;
        for (i = 0; i < md->n; ++i) {
            int s;
            for (s = 0; s < 2; ++s) {
                int w = 2 * k + s;
                unsigned char *flag = md->wall_in + (long)i * 6 + w;
                double gq, gp;
                if (*flag || (!at_start && !md->touched[i]))
                    continue;
                gp = rc_md_wall_gap(md, md->qp, i, w, n);
                gq = rc_md_wall_gap(md, md->q, i, w, n);
                if (gp <= 0.0 || (at_start && gq <= md->eps_g)) {
                    if (rc_md_push(md, i, -1 - w, gq, n, 0.0) != 0)
                        return -1;
                    *flag = 1;
                    ++added;
                }
            }
        }
    }
    memset(md->touched, 0, (size_t)md->n);
    return added;
}

/* Group A by island: label[] from the pairs, then contacts ordered by
 * (island label, position in A) in order[], island s in
 * order[istart[s] .. istart[s+1]).  Counting sort: deterministic. */
static rc_status rc_md_islands(rc_md *md)
{
    long c, m = md->ncon, np = 0, off = 0;
    int v;
    if (m + 2 > md->isl_cap) {
        long cap = m + m / 2 + 1024;
        int *pi = (int *)realloc(md->pi, sizeof(int) * (size_t)cap);
        int *pj = (int *)realloc(md->pj, sizeof(int) * (size_t)cap);
        int *order = (int *)realloc(md->order, sizeof(int) * (size_t)cap);
        long *istart = (long *)realloc(md->istart, sizeof(long) * (size_t)cap);
        if (pi)
            md->pi = pi;
        if (pj)
            md->pj = pj;
        if (order)
            md->order = order;
        if (istart)
            md->istart = istart;
        if (!pi || !pj || !order || !istart)
            return rc_md_fail(md, RC_ERR_NOMEM, "out of memory for islands");
        md->isl_cap = cap;
    }
    for (c = 0; c < m; ++c)
        if (md->con[c].j >= 0) {
            md->pi[np] = md->con[c].i;
            md->pj[np] = md->con[c].j;
            ++np;
        }
    rc_islands_label(md->n, md->pi, md->pj, np, md->label, md->parent);
    /* islands in label order; contacts in A's order within one */
    memset(md->cnt, 0, sizeof(long) * ((size_t)md->n + 1));
    for (c = 0; c < m; ++c)
        md->cnt[md->label[md->con[c].i]]++;
    md->nisl = 0;
    for (v = 0; v < md->n; ++v)
        if (md->cnt[v] > 0) {
            long k = md->cnt[v];
            md->istart[md->nisl++] = off;
            md->cnt[v] = off; /* now the fill position */
            off += k;
        }
    md->istart[md->nisl] = off;
    for (c = 0; c < m; ++c)
        md->order[md->cnt[md->label[md->con[c].i]]++] = (int)c;
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Reflection of one island.                                           */

/* Gram entry n_a^T M^-1 n_b of contacts a and b (shared particles). */
static double rc_md_gram(const rc_md *md, const rc_md_contact *a,
                         const rc_md_contact *b)
{
    return rc_k_md_gram(md->dim, md->inv_mass, a, b);
}

/* Impulse `imp` along contact c: p_i += imp n, p_j -= imp n. */
static void rc_md_kick(rc_md *md, const rc_md_contact *c, double imp)
{
    rc_k_md_kick(md->dim, md->p, md->touched, c, imp);
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
static int rc_md_inc_particle(const rc_md *md, const int *V, long e)
{
    const rc_md_contact *c = &md->con[V[e / 2]];
    return e % 2 ? c->j : c->i;
}

static const rc_md *g_sort_md;
static const int *g_sort_V;

static int rc_md_cmp_inc(const void *pa, const void *pb)
{
    long a = *(const long *)pa, b = *(const long *)pb;
    int ia = rc_md_inc_particle(g_sort_md, g_sort_V, a);
    int ib = rc_md_inc_particle(g_sort_md, g_sort_V, b);
    return ia != ib ? (ia > ib) - (ia < ib) : (a > b) - (a < b);
}

/* CSR of the Gram matrix of the contacts V[0..m): off-diagonal entries
 * between contacts that share a particle, diagonal apart.  Incidences
 * sorted by particle (qsort: this tier is for the rare large islands;
 * the comparison is a total order, so the result is deterministic). */
static int rc_md_csr(const rc_md *md, const int *V, long m,
                     rc_md_scratch *s)
{
    long e, ninc = 0, a, nnz = 0, g0, g1, u, v;
    int ok = 1;
    for (a = 0; a < m; ++a) {
        s->inc[ninc++] = 2 * a;
        if (md->con[V[a]].j >= 0)
            s->inc[ninc++] = 2 * a + 1;
    }
#pragma omp critical(rc_md_qsort)
    {
        g_sort_md = md;
        g_sort_V = V;
        qsort(s->inc, (size_t)ninc, sizeof(long), rc_md_cmp_inc);
    }
    /* count: each group of incidences of one particle links its
     * contacts pairwise */
    for (a = 0; a <= m; ++a)
        s->rowp[a] = 0;
    for (g0 = 0; g0 < ninc; g0 = g1) {
        int part = rc_md_inc_particle(md, V, s->inc[g0]);
        for (g1 = g0 + 1;
             g1 < ninc && rc_md_inc_particle(md, V, s->inc[g1]) == part; ++g1)
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
        s->diag[a] = rc_md_gram(md, &md->con[V[a]], &md->con[V[a]]);
    }
    for (g0 = 0; g0 < ninc; g0 = g1) {
        int part = rc_md_inc_particle(md, V, s->inc[g0]);
        for (g1 = g0 + 1;
             g1 < ninc && rc_md_inc_particle(md, V, s->inc[g1]) == part; ++g1)
            ;
        for (u = g0; u < g1; ++u)
            for (v = g0; v < g1; ++v) {
                long ra = s->inc[u] / 2, cb = s->inc[v] / 2, pos;
                const rc_md_contact *ca = &md->con[V[ra]],
                                    *cbb = &md->con[V[cb]];
                double nn = 0.0, sa, sb;
                int k;
                if (u == v)
                    continue;
                for (k = 0; k < md->dim; ++k)
                    nn += ca->n[k] * cbb->n[k];
                sa = s->inc[u] % 2 ? -1.0 : 1.0; /* end j: -n */
                sb = s->inc[v] % 2 ? -1.0 : 1.0;
                pos = s->fill[ra]++;
                s->col[pos] = cb;
                s->val[pos] = sa * sb * nn * md->inv_mass[part];
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
static int rc_md_solve(const rc_md *md, const int *V, long m, double scale,
                       int equality, rc_md_scratch *s, rc_md_counts *cnt)
{
    long a, b;
    if (m <= md->par.dense_max || m <= md->par.lapack_max) {
        /* the dense tiers: the Gram matrix in full */
        if (rc_md_scratch_fit(s, m, 1) != 0)
            return 3;
        for (a = 0; a < m; ++a)
            for (b = 0; b <= a; ++b) {
                double g = scale * rc_md_gram(md, &md->con[V[a]],
                                              &md->con[V[b]]);
                s->gram[a * m + b] = g;
                s->gram[b * m + a] = g;
            }
        if (equality)
            for (a = 0; a < m; ++a)
                s->lam[a] = -s->b[a];
        if (m > md->par.dense_max) {
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
        if (rc_md_csr(md, V, m, s) != 0)
            return 3;
        for (a = 0; a < m; ++a) {
            s->lam[a] = 0.0;
            bmax = fmax(bmax, fabs(s->b[a]));
        }
        cnt->pgs_islands++;
        if (!(bmax > 0.0))
            return 0;
        for (it = 0; it < md->par.pgs_max_iter && !(res <= md->par.pgs_tol);
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
        return res <= md->par.pgs_tol ? 0 : 4;
    }
}

/* One island: passes of generalized reflection until no contact
 * approaches.  Returns RC_OK or a failure with md->msg (set under a
 * critical section by the caller). */
static int rc_md_reflect_island(rc_md *md, long s, rc_md_scratch *sc,
                                rc_md_counts *cnt)
{
    long lo = md->istart[s], hi = md->istart[s + 1], m = hi - lo;
    int pass, f;
    if (rc_md_scratch_fit(sc, m, 0) != 0)
        return 3;
    for (pass = 0;; ++pass) {
        long nv = rc_k_md_pass_select(md->dim, md->p, md->inv_mass, md->con,
                                      md->order + lo, m, md->eps_v,
                                      md->par.moreau, md->par.max_passes,
                                      pass, sc->V, sc->b);
        if (nv == 0)
            break;
        if (nv < 0)
            return 1;
        if ((f = rc_md_solve(md, sc->V, nv, 1.0, 0, sc, cnt)) != 0)
            return f;
        rc_k_md_pass_apply(md->dim, md->p, md->touched, md->con, sc->V, nv,
                           sc->lam);
        cnt->passes++;
    }
    if (pass > 0)
        cnt->islands += 1;
    if (m > cnt->largest_island)
        cnt->largest_island = m;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Held contacts (R3): the position update with complementarity.       */

/* The host engine's arrays as the view the shared bodies of
 * src/kernels/rc_md.h read (positions, momenta, contacts; the observables'
 * reference positions when given). */
static rc_k_md rc_md_kview(const rc_md *md, const double *ref)
{
    rc_k_md v;
    memset(&v, 0, sizeof v);
    v.box = md->box;
    v.n = md->n;
    v.dim = md->dim;
    v.h = md->par.dt;
    v.eps_g = md->eps_g;
    v.eps_v = md->eps_v;
    v.rmax = md->rmax;
    v.q = md->q;
    v.p = md->p;
    v.qp = md->qp;
    v.dxs = md->dxs;
    v.image = md->image;
    v.inv_mass = md->inv_mass;
    v.mass = md->mass;
    v.radius = md->radius;
    v.touched = md->touched;
    v.con = md->con;
    v.ncon = md->ncon;
    v.ref = (double *)ref;
    memcpy(v.gravity, md->par.gravity, sizeof v.gravity);
    return v;
}

/* Island s: if the reflected predictor still violates one of its
 * contacts (a force, not the velocity, drives it through: a sphere resting
 * on a floor under gravity), solve eq. 48 with complementarity,
 *   x = q^p + h M^-1 C mu,  0 <= mu _|_ g(x) >= 0,
 * by successive linearisation: each round solves the LCP
 *   min 1/2 mu^T (h G) mu + b^T mu, b = g(x) - h G mu_current,
 * (G = C^T M^-1 C with the normals at q) until no contact of the island
 * is violated beyond 1e-10 of a diameter.  Returns 0 or a failure code
 * (as rc_md_solve; 5: the linearisation did not settle). */
static int rc_md_hold_island(rc_md *md, long s, rc_md_scratch *sc,
                             rc_md_counts *cnt)
{
    long lo = md->istart[s], m = md->istart[s + 1] - lo;
    rc_k_md v = rc_md_kview(md, NULL);
    int round, f;
    if (rc_md_scratch_fit(sc, m, 0) != 0)
        return 3;
    if (!(rc_k_md_hold_start(&v, md->order + lo, m, sc->V) < 0.0))
        return 0;
    for (round = 0; round < 50; ++round) {
        double worst = rc_k_md_hold_rhs(&v, sc->V, m, sc->b);
        if (round > 0 && worst >= -rc_k_md_hold_tol(&v))
            break;
        if ((f = rc_md_solve(md, sc->V, m, md->par.dt, 0, sc, cnt)) != 0)
            return f;
        rc_k_md_hold_shift(&v, sc->V, m, sc->lam);
    }
    if (round == 50)
        return 5;
    cnt->held += rc_k_md_hold_kick(&v, sc->V, m);
    return 0;
}

/* Undo the holding impulses (the step is redone from the reflections
 * when the position update violates a contact outside A). */
static void rc_md_unhold(rc_md *md)
{
    long c;
    for (c = 0; c < md->ncon; ++c) {
        rc_md_contact *cc = &md->con[c];
        if (cc->mu != 0.0) {
            rc_md_kick(md, cc, -cc->mu);
            cc->mu = 0.0;
        }
    }
}

/* RATTLE's velocity projection for the held contacts of island s: with
 * the normals at x, the normal relative velocities of the contacts held
 * (mu > 0) are set to zero by one equality solve. */
static int rc_md_project_island(rc_md *md, long s, rc_md_scratch *sc,
                                rc_md_counts *cnt)
{
    long lo = md->istart[s], m = md->istart[s + 1] - lo, nv;
    rc_k_md v = rc_md_kview(md, NULL);
    int f;
    if (rc_md_scratch_fit(sc, m, 0) != 0)
        return 3;
    if ((nv = rc_k_md_project_select(&v, md->order + lo, m, sc->V, sc->b)) == 0)
        return 0;
    if ((f = rc_md_solve(md, sc->V, nv, 1.0, 1, sc, cnt)) != 0)
        return f;
    rc_k_md_kicks(&v, sc->V, nv, sc->lam);
    return 0;
}

/* Run `stage` (0 reflect, 1 hold, 2 project) on every island, in
 * parallel: islands share no particle, so the order does not matter. */
rc_status rc_md_island_failed(rc_md *md, int stage, int fail, long m)
{
    static const char *const what[] = {"reflection", "position update",
                                       "velocity projection"};
    static const char *const why[] = {
        "", "did not terminate in the allowed passes (a dense "
            "packing: integrator.reflection: moreau reflects in one "
            "pass)",
        "NNLS broke down or hit its iteration cap", "ran out of memory",
        "projected Gauss-Seidel did not reach its tolerance",
        "did not settle in 50 linearisations"};
    if (stage < 0 || stage > 2 || fail < 1 || fail > 5)
        return rc_md_fail(md, RC_ERR_NOT_CONVERGED,
                          "island of %ld contacts failed (code %d) at step "
                          "%ld",
                          m, fail, md->steps + 1);
    return rc_md_fail(md, fail == 3 ? RC_ERR_NOMEM : RC_ERR_NOT_CONVERGED,
                      "%s of an island of %ld contacts %s at step %ld "
                      "(t = %g)",
                      what[stage], m, why[fail], md->steps + 1, md->time);
}

static rc_status rc_md_islands_run(rc_md *md, int stage)
{
    long s;
    int fail = 0, nt = 1;
    long fail_island = -1;
    rc_md_counts cnt;
#ifdef _OPENMP
    nt = md->par.threads > 0 ? md->par.threads : omp_get_max_threads();
    /* a parallel region costs more than a few hundred small islands
     * (pairs, triples) take to solve */
    if (md->nisl < 512)
        nt = 1;
#endif
    memset(&cnt, 0, sizeof cnt);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        rc_md_scratch sc;
        rc_md_counts my;
        memset(&sc, 0, sizeof sc);
        memset(&my, 0, sizeof my);
#pragma omp for schedule(dynamic, 16)
        for (s = 0; s < md->nisl; ++s) {
            long isl = md->par.reverse_islands ? md->nisl - 1 - s : s;
            int f = stage == 0   ? rc_md_reflect_island(md, isl, &sc, &my)
                    : stage == 1 ? rc_md_hold_island(md, isl, &sc, &my)
                                 : rc_md_project_island(md, isl, &sc, &my);
            if (f) {
#pragma omp critical(rc_md_fail)
                if (!fail || isl < fail_island) {
                    fail = f;
                    fail_island = isl;
                }
            }
        }
#pragma omp critical(rc_md_counts)
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
    if (fail) {
        long m = md->istart[fail_island + 1] - md->istart[fail_island];
        return rc_md_island_failed(md, stage, fail, m);
    }
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* The step.                                                           */

rc_status rc_md_prepare(rc_md *md)
{
    rc_status st;
    if (md->have_grad)
        return RC_OK;
    if ((st = rc_md_candidates(md, 0.0, 0)) != RC_OK)
        return st;
    rc_md_forces(md, md->q, md->grad, &md->epot_pair, &md->virial_force);
    md->have_grad = 1;
    return RC_OK;
}

/* Re-mark the contacts of A among freshly built candidates. */
static void rc_md_remark(rc_md *md)
{
    long c, e = 0;
    for (c = 0; c < md->ncon; ++c) {
        const rc_md_contact *cc = &md->con[c];
        if (cc->j < 0)
            continue;
        /* candidates are sorted by (i, j), and so are A's pairs within
         * one round; search from the start when A's order steps back */
        if (e > 0 && e <= md->cand.n &&
            (md->cand.i[e - 1] > cc->i ||
             (md->cand.i[e - 1] == cc->i && md->cand.j[e - 1] > cc->j)))
            e = 0;
        while (e < md->cand.n &&
               (md->cand.i[e] < cc->i ||
                (md->cand.i[e] == cc->i && md->cand.j[e] < cc->j)))
            ++e;
        if (e < md->cand.n && md->cand.i[e] == cc->i &&
            md->cand.j[e] == cc->j)
            md->in_a[e] = 1;
    }
}

void rc_md_step_done(rc_md *md)
{
    md->steps++;
    md->time = (double)md->steps * md->par.dt;
    md->total.collisions += md->step.collisions;
    md->total.wall_collisions += md->step.wall_collisions;
    md->total.virial += md->step.virial;
    md->total.islands += md->step.islands;
    md->total.passes += md->step.passes;
    md->total.held += md->step.held;
    md->total.rounds += md->step.rounds;
    md->total.pgs_islands += md->step.pgs_islands;
    md->total.lapack_islands += md->step.lapack_islands;
    md->total.pgs_residual =
        fmax(md->total.pgs_residual, md->step.pgs_residual);
    if (md->step.largest_island > md->total.largest_island)
        md->total.largest_island = md->step.largest_island;
}

rc_status rc_md_step(rc_md *md)
{
    int i, k, d = md->dim;
    long c, added;
    double h = md->par.dt, dmax, ep1, vir1;
    rc_status st;
    size_t N = (size_t)md->n * (size_t)d;
    double t0 = rc_now(), t1;

    memset(&md->step, 0, sizeof md->step);
    memset(md->wall_in, 0, (size_t)md->n * 6 + 1);
    /* keep p: a failed step leaves the state of the last step */
    memcpy(md->p_save, md->p, sizeof(double) * N);

    /* 1-3. forces at q (once; then carried over from the last step's x),
     * predictor, candidates, extended set */
    md->ncon = 0;
    if ((st = rc_md_prepare(md)) != RC_OK)
        goto fail;
    dmax = rc_md_predict(md);
    t1 = rc_now();
    md->t_update += t1 - t0;
    if ((st = rc_md_candidates(md, dmax, 0)) != RC_OK)
        goto fail;
    t0 = rc_now();
    if ((added = rc_md_extend(md, 1)) < 0) {
        st = rc_md_fail(md, RC_ERR_NOMEM, "out of memory for contacts");
        goto fail;
    }
    md->t_contacts += rc_now() - t0;
    for (;;) {
        /* 4-5. islands and reflections, with the set closed under the
         * reflected predictor (R2); each round adds a contact */
        while (added > 0) {
            t0 = rc_now();
            if ((st = rc_md_islands(md)) != RC_OK)
                goto fail;
            t1 = rc_now();
            md->t_contacts += t1 - t0;
            if ((st = rc_md_islands_run(md, 0)) != RC_OK)
                goto fail;
            md->t_reflect += rc_now() - t1;
            dmax = rc_md_predict(md);
            if (2.0 * (rc_md_moved(md) + dmax) + 2.0 * md->eps_g >=
                md->par.skin) {
                /* the reflections sped a sphere up beyond the candidates'
                 * reach: rebuild them (A keeps its contacts) */
                if ((st = rc_md_candidates(md, dmax, 1)) != RC_OK)
                    goto fail;
                rc_md_remark(md);
            }
            t0 = rc_now();
            if ((added = rc_md_extend(md, 0)) < 0) {
                st = rc_md_fail(md, RC_ERR_NOMEM,
                                "out of memory for contacts");
                goto fail;
            }
            md->t_contacts += rc_now() - t0;
            if (added > 0)
                md->step.rounds++;
        }
        /* 6. position update: x = q^p, with complementarity where the
         * reflected predictor still violates a contact (R3) */
        if (md->ncon == 0)
            break;
        t1 = rc_now();
        if ((st = rc_md_islands(md)) != RC_OK ||
            (st = rc_md_islands_run(md, 1)) != RC_OK)
            goto fail;
        md->t_reflect += rc_now() - t1;
        if (md->step.held == 0)
            break;
        /* R2, continued: a contact outside A that the held position
         * update violates joins A and the step is redone from the
         * reflections (without the holding impulses) */
        if ((added = rc_md_extend(md, 0)) < 0) {
            st = rc_md_fail(md, RC_ERR_NOMEM, "out of memory for contacts");
            goto fail;
        }
        if (added == 0)
            break;
        rc_md_unhold(md);
        md->step.held = 0;
        dmax = rc_md_predict(md);
        md->step.rounds++;
    }
    t0 = rc_now();
    for (i = 0; i < (int)N; ++i)
        if (!isfinite(md->qp[i]) || !isfinite(md->p[i])) {
            st = rc_md_fail(md, RC_ERR_NONFINITE,
                            "state became non-finite at step %ld (t = %g)",
                            md->steps + 1, md->time + h);
            goto fail;
        }
    /* 7. forces at x and the kick p' = p+ + C mu - h/2 (gradV(q) +
     * gradV(x)); then RATTLE's projection for the held contacts */
    rc_md_forces(md, md->qp, md->grad1, &ep1, &vir1);
    for (i = 0; i < (int)N; ++i)
        md->p[i] -= 0.5 * h * (md->grad[i] + md->grad1[i]);
    if (md->step.held > 0 && (st = rc_md_islands_run(md, 2)) != RC_OK)
        goto fail;
    for (i = 0; i < md->n; ++i) {
        for (k = 0; k < d; ++k)
            md->q[i * d + k] = md->qp[i * d + k];
        rc_k_box_wrap(&md->box, md->q + (long)i * d, md->image + (long)i * d);
    }
    {
        double *tmp = md->grad;
        md->grad = md->grad1;
        md->grad1 = tmp;
    }
    md->epot_pair = ep1;
    md->virial_force = vir1;
    /* counters: a pair that received an impulse collided once; holding
     * impulses count in the virial (they are contact forces times h) */
    for (c = 0; c < md->ncon; ++c) {
        const rc_md_contact *cc = &md->con[c];
        if (cc->lam > 0.0) {
            if (cc->j >= 0)
                md->step.collisions++;
            else
                md->step.wall_collisions++;
        }
        if (cc->j >= 0)
            md->step.virial += (cc->lam + cc->mu) * cc->dist;
    }
    rc_md_step_done(md);
    md->t_update += rc_now() - t0;
    return RC_OK;
fail:
    memcpy(md->p, md->p_save, sizeof(double) * N);
    return st;
}

/* Sums over particles in the device engine's association (chunks of
 * rc_k_sum_chunk), so both engines print the same bits. */
void rc_md_energy(const rc_md *md, double *kin, double *pot, double mom[3])
{
    rc_k_md v = rc_md_kview(md, NULL);
    int k;
    *kin = rc_k_md_obs_sum(&v, RC_K_MD_OBS_KE);
    for (k = 0; k < 3; ++k)
        mom[k] = rc_k_md_obs_sum(&v, RC_K_MD_OBS_P0 + k);
    *pot = rc_k_md_obs_sum(&v, RC_K_MD_OBS_POT) + md->epot_pair;
}

double rc_md_msd(const rc_md *md, const double *ref)
{
    rc_k_md v = rc_md_kview(md, ref);
    return md->n > 0 ? rc_k_md_obs_sum(&v, RC_K_MD_OBS_MSD) / md->n : 0.0;
}

double rc_md_max_overlap(rc_md *md)
{
    long e;
    double worst = 0.0, n[3], dist;
    double cut = 2.0 * md->rmax;
    rc_pairs pr;
    rc_cells cl;
    int k, i;
    if (md->have_cand) {
        /* the candidates hold every pair within 2 rmax at q (the step's
         * rebuild criterion), so no cell search is needed */
        for (e = 0; e < md->cand.n; ++e)
            worst = fmax(worst, -rc_md_pair_gap(md, md->q, md->cand.i[e],
                                                md->cand.j[e], n, &dist));
        for (k = 0; k < md->dim; ++k)
            if (!md->box.periodic[k])
                for (i = 0; i < md->n; ++i) {
                    worst = fmax(worst, -rc_md_wall_gap(md, md->q, i, 2 * k, n));
                    worst = fmax(worst,
                                 -rc_md_wall_gap(md, md->q, i, 2 * k + 1, n));
                }
        return worst;
    }
    memset(&pr, 0, sizeof pr);
    memset(&cl, 0, sizeof cl);
    for (k = 0; k < md->dim; ++k)
        if (md->box.periodic[k] && !(cut < 0.5 * md->box.L[k]))
            cut = 0.49 * md->box.L[k]; /* tiny boxes: nearest images only */
    if (rc_cells_build(&cl, &md->box, md->q, md->n, cut * (1.0 + 1e-12)) ==
            0 &&
        rc_cells_pairs(&cl, &md->box, md->q, md->n, cut, &pr,
                       md->par.threads) == 0)
        for (e = 0; e < pr.n; ++e)
            worst = fmax(worst, -rc_md_pair_gap(md, md->q, pr.i[e], pr.j[e],
                                                n, &dist));
    rc_pairs_free(&pr);
    rc_cells_free(&cl);
    return worst;
}

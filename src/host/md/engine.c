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

#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine.h"
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
    md->p_save = (double *)malloc(sizeof(double) * (N + 1));
    md->wall_in = (unsigned char *)calloc((size_t)n * 6 + 1, 1);
    md->cnt = (long *)calloc((size_t)n + 1, sizeof(long));
    if (!md->q || !md->p || !md->qp || !md->mass || !md->inv_mass ||
        !md->radius || !md->image || !md->label || !md->parent ||
        !md->qbuild || !md->p_save || !md->wall_in || !md->cnt)
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

/* Gap, normal and distance of pair (i, j) at positions x. */
static double rc_md_pair_gap(const rc_md *md, const double *x, int i, int j,
                             double n[3], double *dist)
{
    int k, d = md->dim;
    double del[3] = {0.0, 0.0, 0.0}, r;
    rc_k_box_delta(&md->box, x + (long)i * d, x + (long)j * d, del);
    r = sqrt(rc_dot(d, del, del));
    for (k = 0; k < 3; ++k)
        n[k] = k < d && r > 0.0 ? del[k] / r : (k == 0 && !(r > 0.0));
    *dist = r;
    return r - md->radius[i] - md->radius[j];
}

/* Gap and normal of wall contact w (2 axis + side) of particle i. */
static double rc_md_wall_gap(const rc_md *md, const double *x, int i, int w,
                             double n[3])
{
    int ax = w / 2, side = w % 2;
    double xi = x[(long)i * md->dim + ax];
    n[0] = n[1] = n[2] = 0.0;
    n[ax] = side ? -1.0 : 1.0;
    return side ? md->box.L[ax] - md->radius[i] - xi : xi - md->radius[i];
}

/* Normal speed n . (v_i - v_j) of contact c. */
static double rc_md_speed(const rc_md *md, const rc_md_contact *c)
{
    int k, d = md->dim;
    double s = 0.0;
    for (k = 0; k < d; ++k) {
        double v = md->p[(long)c->i * d + k] * md->inv_mass[c->i];
        if (c->j >= 0)
            v -= md->p[(long)c->j * d + k] * md->inv_mass[c->j];
        s += c->n[k] * v;
    }
    return s;
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
    return 0;
}

/* q^p for every particle from the current p; returns the largest
 * displacement. */
static double rc_md_predict(rc_md *md)
{
    int i, k, d = md->dim;
    double h = md->par.dt, dmax = 0.0;
    for (i = 0; i < md->n; ++i) {
        double s = 0.0;
        for (k = 0; k < d; ++k) {
            /* grad V = -m g for uniform gravity */
            double u = h * md->inv_mass[i] *
                       (md->p[i * d + k] +
                        0.5 * h * md->mass[i] * md->par.gravity[k]);
            md->qp[i * d + k] = md->q[i * d + k] + u;
            s += u * u;
        }
        dmax = fmax(dmax, sqrt(s));
    }
    return dmax;
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
static rc_status rc_md_candidates(rc_md *md, double dstep, int force)
{
    double cut;
    long e;
    int k, i;
    if (md->have_cand && !force &&
        2.0 * (rc_md_moved(md) + dstep) + 2.0 * md->eps_g < md->par.skin) {
        memset(md->in_a, 0, (size_t)md->cand.n + 1);
        return RC_OK;
    }
    if (4.0 * dstep >= md->par.skin)
        md->par.skin = 8.0 * dstep; /* a step eats the skin: widen it */
    cut = 2.0 * md->rmax + md->par.skin;
    for (k = 0; k < md->dim; ++k)
        if (md->box.periodic[k] && !(cut < 0.5 * md->box.L[k]))
            return rc_md_fail(md, RC_ERR_INVALID,
                              "the box (L = %g on axis %d) is too small for "
                              "the contact range %g (spheres and their "
                              "motion between list builds); use more "
                              "particles or a smaller dt",
                              md->box.L[k], k, cut);
    if (rc_cells_build(&md->cells, &md->box, md->q, md->n, cut) != 0 ||
        rc_cells_pairs(&md->cells, &md->box, md->q, md->n, cut, &md->cand,
                       md->par.threads) != 0)
        return rc_md_fail(md, RC_ERR_NOMEM, "cell list failed (%d particles, "
                                            "cutoff %g)",
                          md->n, cut);
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
    long e, added = 0;
    int i, k, d = md->dim;
    double n[3], dist;
    for (e = 0; e < md->cand.n; ++e) {
        int a = md->cand.i[e], b = md->cand.j[e];
        double gq, gp;
        double del[3] = {0.0, 0.0, 0.0}, sig, sp, sq;
        if (md->in_a[e])
            continue;
        /* squared distances first: most candidates are far from contact,
         * and a square root per candidate is most of this loop's cost */
        sig = md->radius[a] + md->radius[b];
        rc_k_box_delta(&md->box, md->qp + (long)a * d, md->qp + (long)b * d,
                       del);
        sp = rc_dot(d, del, del);
        rc_k_box_delta(&md->box, md->q + (long)a * d, md->q + (long)b * d,
                       del);
        sq = rc_dot(d, del, del);
        if (sp > sig * sig && !(at_start && sq <= (sig + md->eps_g) *
                                                       (sig + md->eps_g)))
            continue;
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
                if (*flag)
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
        long *order = (long *)realloc(md->order, sizeof(long) * (size_t)cap);
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
        md->order[md->cnt[md->label[md->con[c].i]]++] = c;
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Reflection of one island.                                           */

/* Gram entry n_a^T M^-1 n_b of contacts a and b (shared particles). */
static double rc_md_gram(const rc_md *md, const rc_md_contact *a,
                         const rc_md_contact *b)
{
    int k, d = md->dim;
    double nn = 0.0, s = 0.0;
    for (k = 0; k < d; ++k)
        nn += a->n[k] * b->n[k];
    /* particle of a (sign +1 for i, -1 for j) against each of b's */
    if (a->i == b->i)
        s += md->inv_mass[a->i];
    if (b->j >= 0 && a->i == b->j)
        s -= md->inv_mass[a->i];
    if (a->j >= 0) {
        if (a->j == b->i)
            s -= md->inv_mass[a->j];
        if (b->j >= 0 && a->j == b->j)
            s += md->inv_mass[a->j];
    }
    return s * nn;
}

static void rc_md_apply(rc_md *md, rc_md_contact *c, double lam)
{
    int k, d = md->dim;
    for (k = 0; k < d; ++k) {
        md->p[(long)c->i * d + k] += lam * c->n[k];
        if (c->j >= 0)
            md->p[(long)c->j * d + k] -= lam * c->n[k];
    }
    c->lam += lam;
}

/* Per-thread scratch of the island solves. */
typedef struct rc_md_scratch {
    long cap;
    long *V;          /* [cap] approaching contacts (indices into A) */
    double *gram, *b, *lam, *w; /* dense tier */
    int *iw;
    long gram_cap;
} rc_md_scratch;

static int rc_md_scratch_fit(rc_md_scratch *s, long m, int dense)
{
    if (m > s->cap) {
        long cap = m + m / 2 + 16;
        long *V = (long *)realloc(s->V, sizeof(long) * (size_t)cap);
        double *b = (double *)realloc(s->b, sizeof(double) * (size_t)cap);
        double *lam = (double *)realloc(s->lam, sizeof(double) * (size_t)cap);
        if (V)
            s->V = V;
        if (b)
            s->b = b;
        if (lam)
            s->lam = lam;
        if (!V || !b || !lam)
            return -1;
        s->cap = cap;
    }
    if (dense && m > s->gram_cap) {
        long g = m;
        double *gram = (double *)realloc(s->gram, sizeof(double) * (size_t)(g * g));
        double *w = (double *)realloc(
            s->w, sizeof(double) * (size_t)rc_k_nnls_work_doubles((int)g));
        int *iw = (int *)realloc(
            s->iw, sizeof(int) * (size_t)rc_k_nnls_work_ints((int)g));
        if (gram)
            s->gram = gram;
        if (w)
            s->w = w;
        if (iw)
            s->iw = iw;
        if (!gram || !w || !iw)
            return -1;
        s->gram_cap = g;
    }
    return 0;
}

/* Projected Gauss–Seidel for min 1/2 l^T G l + b^T l, l >= 0, on the
 * contacts V[0..m) (G from rc_md_gram, formed on the fly from each
 * contact's neighbours in the island).  Stops when the complementarity
 * residual max_a |min(l_a, (G l + b)_a)| (in units of |b|_inf) is below
 * tol.  Returns the final relative residual. */
static double rc_md_pgs(const rc_md *md, const rc_md_contact *con,
                        const long *V, long m, const double *b, double *lam,
                        double tol, int max_iter)
{
    long a, c;
    int it;
    double bmax = 0.0, res = INFINITY;
    for (a = 0; a < m; ++a) {
        lam[a] = 0.0;
        bmax = fmax(bmax, fabs(b[a]));
    }
    if (!(bmax > 0.0))
        return 0.0;
    for (it = 0; it < max_iter && !(res <= tol); ++it) {
        res = 0.0;
        for (a = 0; a < m; ++a) {
            /* O(m) row; islands in this tier are the rare large ones */
            double r = b[a], gaa = 0.0, nl;
            for (c = 0; c < m; ++c) {
                double g = rc_md_gram(md, &con[V[a]], &con[V[c]]);
                if (c == a)
                    gaa = g;
                r += g * lam[c];
            }
            nl = gaa > 0.0 ? fmax(0.0, lam[a] - r / gaa) : lam[a];
            res = fmax(res, fabs(fmin(lam[a], r)) / bmax);
            lam[a] = nl;
        }
    }
    return res;
}

/* One island: passes of generalized reflection until no contact
 * approaches.  Returns RC_OK or a failure with md->msg (set under a
 * critical section by the caller). */
static int rc_md_reflect_island(rc_md *md, long s, rc_md_scratch *sc,
                                rc_md_counts *cnt)
{
    long lo = md->istart[s], hi = md->istart[s + 1], m = hi - lo, a, b;
    int pass;
    int dense = m <= md->par.dense_max;
    if (rc_md_scratch_fit(sc, m, dense) != 0)
        return 3;
    for (pass = 0;; ++pass) {
        long nv = 0;
        for (a = lo; a < hi; ++a) {
            long c = md->order[a];
            if (rc_md_speed(md, &md->con[c]) < -md->eps_v)
                sc->V[nv++] = c;
        }
        if (nv == 0)
            break;
        if (pass >= md->par.max_passes)
            return 1;
        for (a = 0; a < nv; ++a)
            sc->b[a] = 2.0 * rc_md_speed(md, &md->con[sc->V[a]]);
        if (dense) {
            rc_k_nnls_result r;
            for (a = 0; a < nv; ++a)
                for (b = 0; b <= a; ++b) {
                    double g = rc_md_gram(md, &md->con[sc->V[a]],
                                          &md->con[sc->V[b]]);
                    sc->gram[a * nv + b] = g;
                    sc->gram[b * nv + a] = g;
                }
            /* solver tolerance: 1e-12 of its own scale (rc_nnls.h) */
            r = rc_k_nnls_gram((int)nv, sc->gram, sc->b, sc->lam, sc->w,
                               sc->iw, 0, 1e-12);
            if (r.status != 0)
                return 2;
        } else {
            double res = rc_md_pgs(md, md->con, sc->V, nv, sc->b, sc->lam,
                                   md->par.pgs_tol, md->par.pgs_max_iter);
            cnt->pgs_islands++;
            cnt->pgs_residual = fmax(cnt->pgs_residual, res);
            if (!(res <= md->par.pgs_tol))
                return 4;
        }
        for (a = 0; a < nv; ++a)
            if (sc->lam[a] != 0.0)
                rc_md_apply(md, &md->con[sc->V[a]], sc->lam[a]);
        cnt->passes++;
    }
    if (pass > 0)
        cnt->islands += 1;
    if (m > cnt->largest_island)
        cnt->largest_island = m;
    return 0;
}

/* Reflect every island (in parallel: islands share no particle). */
static rc_status rc_md_reflect_all(rc_md *md)
{
    long s;
    int fail = 0, nt = 1;
    long fail_island = -1;
    rc_md_counts cnt;
#ifdef _OPENMP
    nt = md->par.threads > 0 ? md->par.threads : omp_get_max_threads();
    if (md->nisl < 64)
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
            int f = rc_md_reflect_island(md, isl, &sc, &my);
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
            cnt.pgs_islands += my.pgs_islands;
            cnt.pgs_residual = fmax(cnt.pgs_residual, my.pgs_residual);
            if (my.largest_island > cnt.largest_island)
                cnt.largest_island = my.largest_island;
        }
        free(sc.V);
        free(sc.gram);
        free(sc.b);
        free(sc.lam);
        free(sc.w);
        free(sc.iw);
    }
    md->step.islands += cnt.islands;
    md->step.passes += cnt.passes;
    md->step.pgs_islands += cnt.pgs_islands;
    md->step.pgs_residual = fmax(md->step.pgs_residual, cnt.pgs_residual);
    if (cnt.largest_island > md->step.largest_island)
        md->step.largest_island = cnt.largest_island;
    if (fail) {
        long m = md->istart[fail_island + 1] - md->istart[fail_island];
        static const char *const why[] = {
            "", "did not terminate in the allowed passes",
            "NNLS broke down or hit its iteration cap", "ran out of memory",
            "projected Gauss-Seidel did not reach its tolerance"};
        return rc_md_fail(md, fail == 3 ? RC_ERR_NOMEM : RC_ERR_NOT_CONVERGED,
                          "reflection of an island of %ld contacts %s at "
                          "step %ld (t = %g)",
                          m, why[fail], md->steps + 1, md->time);
    }
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* The step.                                                           */

rc_status rc_md_step(rc_md *md)
{
    int i, k, d = md->dim;
    long c, added;
    double h = md->par.dt, dmax;
    rc_status st;
    size_t N = (size_t)md->n * (size_t)d;

    memset(&md->step, 0, sizeof md->step);
    memset(md->wall_in, 0, (size_t)md->n * 6 + 1);
    /* keep p: a failed step leaves the state of the last step */
    memcpy(md->p_save, md->p, sizeof(double) * N);

    /* 1-3. predictor, candidates, extended set */
    dmax = rc_md_predict(md);
    md->ncon = 0;
    if ((st = rc_md_candidates(md, dmax, 0)) != RC_OK)
        goto fail;
    if ((added = rc_md_extend(md, 1)) < 0) {
        st = rc_md_fail(md, RC_ERR_NOMEM, "out of memory for contacts");
        goto fail;
    }
    /* 4-5. islands and reflections, with the set closed under the
     * reflected predictor (R2); each round adds a contact */
    while (added > 0) {
        if ((st = rc_md_islands(md)) != RC_OK ||
            (st = rc_md_reflect_all(md)) != RC_OK)
            goto fail;
        dmax = rc_md_predict(md);
        if (2.0 * (rc_md_moved(md) + dmax) + 2.0 * md->eps_g >= md->par.skin) {
            /* the reflections sped a sphere up beyond the candidates'
             * reach: rebuild them (A keeps its contacts; re-mark them) */
            long e = 0;
            if ((st = rc_md_candidates(md, dmax, 1)) != RC_OK)
                goto fail;
            for (c = 0; c < md->ncon; ++c) {
                const rc_md_contact *cc = &md->con[c];
                if (cc->j < 0)
                    continue;
                /* candidates are sorted by (i, j): advance to cc's pair */
                while (e < md->cand.n &&
                       (md->cand.i[e] < cc->i ||
                        (md->cand.i[e] == cc->i && md->cand.j[e] < cc->j)))
                    ++e;
                if (e < md->cand.n && md->cand.i[e] == cc->i &&
                    md->cand.j[e] == cc->j)
                    md->in_a[e] = 1;
            }
        }
        if ((added = rc_md_extend(md, 0)) < 0) {
            st = rc_md_fail(md, RC_ERR_NOMEM, "out of memory for contacts");
            goto fail;
        }
        if (added > 0)
            md->step.rounds++;
    }
    /* 6. position update and kick (uniform gravity: grad V is the same
     * at q and x) */
    for (i = 0; i < (int)N; ++i)
        if (!isfinite(md->qp[i]) || !isfinite(md->p[i])) {
            st = rc_md_fail(md, RC_ERR_NONFINITE,
                            "state became non-finite at step %ld (t = %g)",
                            md->steps + 1, md->time + h);
            goto fail;
        }
    for (i = 0; i < md->n; ++i) {
        for (k = 0; k < d; ++k) {
            md->q[i * d + k] = md->qp[i * d + k];
            md->p[i * d + k] += h * md->mass[i] * md->par.gravity[k];
        }
        rc_k_box_wrap(&md->box, md->q + (long)i * d, md->image + (long)i * d);
    }
    /* counters: a pair that received an impulse collided once */
    for (c = 0; c < md->ncon; ++c) {
        const rc_md_contact *cc = &md->con[c];
        if (cc->lam > 0.0) {
            if (cc->j >= 0) {
                md->step.collisions++;
                md->step.virial += cc->lam * cc->dist;
            } else {
                md->step.wall_collisions++;
            }
        }
    }
    md->steps++;
    md->time = (double)md->steps * h;
    md->total.collisions += md->step.collisions;
    md->total.wall_collisions += md->step.wall_collisions;
    md->total.virial += md->step.virial;
    md->total.islands += md->step.islands;
    md->total.passes += md->step.passes;
    md->total.rounds += md->step.rounds;
    md->total.pgs_islands += md->step.pgs_islands;
    md->total.pgs_residual =
        fmax(md->total.pgs_residual, md->step.pgs_residual);
    if (md->step.largest_island > md->total.largest_island)
        md->total.largest_island = md->step.largest_island;
    return RC_OK;
fail:
    memcpy(md->p, md->p_save, sizeof(double) * N);
    return st;
}

void rc_md_energy(const rc_md *md, double *kin, double *pot, double mom[3])
{
    int i, k, d = md->dim;
    double t = 0.0, v = 0.0;
    mom[0] = mom[1] = mom[2] = 0.0;
    for (i = 0; i < md->n; ++i)
        for (k = 0; k < d; ++k) {
            double pk = md->p[i * d + k];
            t += 0.5 * pk * pk * md->inv_mass[i];
            mom[k] += pk;
            /* V = -m g . x, with the unwrapped coordinate */
            v -= md->mass[i] * md->par.gravity[k] *
                 (md->q[i * d + k] + md->image[i * d + k] * md->box.L[k]);
        }
    *kin = t;
    *pot = v;
}

double rc_md_max_overlap(rc_md *md)
{
    long e;
    double worst = 0.0, n[3], dist;
    double cut = 2.0 * md->rmax;
    rc_pairs pr;
    rc_cells cl;
    int k;
    memset(&pr, 0, sizeof pr);
    memset(&cl, 0, sizeof cl);
    for (k = 0; k < md->dim; ++k)
        if (md->box.periodic[k] && !(cut < 0.5 * md->box.L[k]))
            cut = 0.49 * md->box.L[k]; /* tiny boxes: nearest images only */
    if (rc_cells_build(&cl, &md->box, md->q, md->n, cut) == 0 &&
        rc_cells_pairs(&cl, &md->box, md->q, md->n, cut, &pr,
                       md->par.threads) == 0)
        for (e = 0; e < pr.n; ++e)
            worst = fmax(worst, -rc_md_pair_gap(md, md->q, pr.i[e], pr.j[e],
                                                n, &dist));
    rc_pairs_free(&pr);
    rc_cells_free(&cl);
    return worst;
}

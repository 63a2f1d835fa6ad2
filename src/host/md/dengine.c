/* The device-shaped large-system engine (dengine.h): rc_md_step's
 * algorithm as a sequence of kernels over the launcher's arrays.  Every
 * numbered stage below is the stage of the same number in engine.c; the
 * host reads back only scalars (counts for the next allocation, the
 * largest displacement, flags, sums) and, per island round (reflection,
 * holding, projection), the per-island results; a round with medium
 * islands also copies the momenta and contacts for the batched tier. */
#include "dengine.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../clock.h"

static rc_status rc_dmd_fail(rc_dmd *g, rc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->md->msg, sizeof g->md->msg, fmt, ap);
    va_end(ap);
    return st;
}

/* A launcher call failed: its reason, with the stage. */
static rc_status rc_dmd_ops_fail(rc_dmd *g, const char *what)
{
    return rc_dmd_fail(g, RC_ERR_DEVICE, "%s launcher: %s: %s",
                       g->ops->name, what, g->ops->error(g->ctx));
}

#define RUN(kern, count)                                                     \
    do {                                                                     \
        if ((count) > 0 && g->ops->run(g->ctx, (kern), &g->v, (count)))     \
            return rc_dmd_ops_fail(g, #kern);                                \
    } while (0)
#define OP(call, what)                                                       \
    do {                                                                     \
        if (call)                                                            \
            return rc_dmd_ops_fail(g, what);                                 \
    } while (0)

/* (Re)allocate a launcher array of `need` elements of `size` bytes when
 * `*cap` is short; the contents are not kept unless `keep` elements are
 * asked for (copied on the launcher). */
static int rc_dmd_grow(rc_dmd *g, void **ptr, long *cap, long need,
                       size_t size, long keep)
{
    void *np;
    long nc;
    if (need <= *cap && *ptr)
        return 0;
    nc = need + need / 4 + 1024;
    np = g->ops->alloc(g->ctx, (size_t)nc * size);
    if (!np)
        return -1;
    if (keep > 0 && *ptr &&
        g->ops->copy(g->ctx, np, *ptr, (size_t)keep * size) != 0) {
        g->ops->release(g->ctx, np);
        return -1;
    }
    g->ops->release(g->ctx, *ptr);
    *ptr = np;
    *cap = nc;
    return 0;
}

/* Arrays that share one capacity (per cell, per candidate, per contact
 * of the island solve): when `need` exceeds it, every one is replaced by
 * an array of the new capacity times its element size (contents not
 * kept). */
static int rc_dmd_grow_set(rc_dmd *g, long need, long *cap, void **ptrs[],
                           const size_t *sizes, int count)
{
    long nc;
    int a;
    if (need <= *cap)
        return 0;
    nc = need + need / 4 + 1024;
    for (a = 0; a < count; ++a) {
        g->ops->release(g->ctx, *ptrs[a]);
        *ptrs[a] = g->ops->alloc(g->ctx, (size_t)nc * sizes[a]);
        if (!*ptrs[a]) {
            *cap = 0; /* the others are reallocated on the next call */
            return -1;
        }
    }
    *cap = nc;
    return 0;
}

static int rc_dmd_put_long(rc_dmd *g, long *dst, long x)
{
    return g->ops->put(g->ctx, dst, &x, sizeof x);
}

void rc_dmd_free(rc_dmd *g)
{
    rc_k_md *v = &g->v;
    void *arrays[] = {v->mass,     v->ref,      v->toff,     v->tcur,
                      v->dxs,
                      v->pair_c1,  v->pair_en,  v->pair_vir, v->tlist,
                      v->grad1 != v->grad ? v->grad1 : NULL,
                      v->q,        v->p,        v->qp,       v->grad,
                      v->inv_mass, v->radius,   v->qbuild,   v->image,
                      v->touched,  v->wall_in,  v->red,      v->cell_of,
                      v->cell_start, v->cell_cur, v->cell_idx, v->pair_off,
                      v->cand_i,   v->cand_j,   v->in_a,     v->flag,
                      v->con,      v->parent,   v->key,      v->order,
                      v->head,     v->istart,   v->woff,     v->work,
                      v->cwork,    v->iwork,    v->isl_fail, v->isl_passes,
                      g->p_save};
    size_t a;
    if (g->ops) {
        for (a = 0; a < sizeof arrays / sizeof arrays[0]; ++a)
            if (arrays[a])
                g->ops->release(g->ctx, arrays[a]);
        g->ops->destroy(g->ctx);
    }
    free(g->h_fail);
    free(g->h_passes);
    free(g->h_istart);
    memset(g, 0, sizeof *g);
}

rc_status rc_dmd_init(rc_dmd *g, rc_md *md, const rc_dmd_ops *ops,
                      void *ctx)
{
    rc_k_md *v = &g->v;
    long n = md->n, N = n * md->dim;
    rc_status st;
    memset(g, 0, sizeof *g);
    g->md = md;
    g->ops = ops;
    g->ctx = ctx;
    if ((st = rc_md_prepare(md)) != RC_OK) {
        rc_dmd_free(g);
        g->md = md;
        return st;
    }
    v->box = md->box;
    v->n = md->n;
    v->dim = md->dim;
    v->h = md->par.dt;
    v->eps_g = md->eps_g;
    v->eps_v = md->eps_v;
    v->moreau = md->par.moreau;
    v->max_passes = md->par.max_passes;
    v->dense_max = md->par.dense_max;
    v->rmax = md->rmax;
    memcpy(v->gravity, md->par.gravity, sizeof v->gravity);
    v->has_pair = md->par.has_pair;
    v->pair = md->par.pair;
#define ALLOC(field, count, type)                                            \
    (g->v.field = (type *)ops->alloc(ctx, sizeof(type) * (size_t)(count)))
    if (!ALLOC(q, N + 1, double) || !ALLOC(p, N + 1, double) ||
        !ALLOC(qp, N + 1, double) || !ALLOC(grad, N + 1, double) ||
        !ALLOC(dxs, N + 1, double) ||
        !ALLOC(inv_mass, n + 1, double) || !ALLOC(radius, n + 1, double) ||
        !ALLOC(mass, n + 1, double) ||
        !ALLOC(qbuild, N + 1, double) || !ALLOC(image, N + 1, int) ||
        !ALLOC(touched, n + 1, unsigned char) ||
        !ALLOC(wall_in, 6 * n + 1, unsigned char) ||
        !ALLOC(cell_of, n + 1, int) || !ALLOC(cell_idx, n + 1, int) ||
        !ALLOC(pair_off, n + 1, long) || !ALLOC(parent, n + 1, int) ||
        (md->par.has_pair &&
         (!ALLOC(grad1, N + 1, double) || !ALLOC(toff, n + 1, long) ||
          !ALLOC(tcur, n + 1, long))) ||
        !(g->p_save = (double *)ops->alloc(ctx, sizeof(double) *
                                                    (size_t)(N + 1))) ||
        rc_dmd_grow(g, (void **)&v->red, &g->cap_red, 6 * n + 1,
                    sizeof(double), 0)) {
        st = rc_dmd_ops_fail(g, "memory for the particles");
        goto fail;
    }
#undef ALLOC
    if (!md->par.has_pair)
        v->grad1 = v->grad; /* the uniform field: the same at q and x */
    if (rc_dmd_load(g) != RC_OK ||
        ops->put(ctx, v->grad, md->grad, sizeof(double) * (size_t)N) ||
        ops->put(ctx, v->inv_mass, md->inv_mass, sizeof(double) * (size_t)n) ||
        ops->put(ctx, v->mass, md->mass, sizeof(double) * (size_t)n) ||
        ops->put(ctx, v->radius, md->radius, sizeof(double) * (size_t)n) ||
        ops->zero(ctx, v->touched, (size_t)n + 1)) {
        st = rc_dmd_ops_fail(g, "copying the state in");
        goto fail;
    }
    return RC_OK;
fail:
    {
        char keep[sizeof md->msg];
        memcpy(keep, md->msg, sizeof keep);
        rc_dmd_free(g);
        memcpy(md->msg, keep, sizeof keep);
    }
    return st;
}

rc_status rc_dmd_sync(rc_dmd *g)
{
    rc_md *md = g->md;
    size_t N = (size_t)md->n * (size_t)md->dim;
    if (g->ops->get(g->ctx, md->q, g->v.q, sizeof(double) * N) ||
        g->ops->get(g->ctx, md->p, g->v.p, sizeof(double) * N) ||
        g->ops->get(g->ctx, md->image, g->v.image, sizeof(int) * N))
        return rc_dmd_ops_fail(g, "copying the state out");
    /* the host's candidate list describes an older q */
    md->have_cand = 0;
    return RC_OK;
}

rc_status rc_dmd_load(rc_dmd *g)
{
    rc_md *md = g->md;
    size_t N = (size_t)md->n * (size_t)md->dim;
    if (g->ops->put(g->ctx, g->v.q, md->q, sizeof(double) * N) ||
        g->ops->put(g->ctx, g->v.p, md->p, sizeof(double) * N) ||
        g->ops->put(g->ctx, g->v.image, md->image, sizeof(int) * N))
        return rc_dmd_ops_fail(g, "copying the state in");
    return RC_OK;
}

static rc_status rc_dmd_candidates(rc_dmd *g, double dstep, int force,
                                   int *rebuilt);

rc_status rc_dmd_set_ref(rc_dmd *g, const double *ref)
{
    size_t N = (size_t)g->md->n * (size_t)g->md->dim;
    if (!g->v.ref &&
        !(g->v.ref = (double *)g->ops->alloc(g->ctx, sizeof(double) * (N + 1))))
        return rc_dmd_ops_fail(g, "memory for reference positions");
    if (g->ops->put(g->ctx, g->v.ref, ref, sizeof(double) * N))
        return rc_dmd_ops_fail(g, "copying reference positions in");
    return RC_OK;
}

/* One observable sum: term `what` of every particle, then the launcher's
 * chunked sum (rc_k_md_obs_sum's association on the host). */
static rc_status rc_dmd_obs_sum(rc_dmd *g, int what, double *out)
{
    g->v.obs = what;
    RUN(RC_DMD_OBSERVE, g->v.n);
    OP(g->ops->sum(g->ctx, g->v.red, g->v.n, out), "observable sum");
    return RC_OK;
}

rc_status rc_dmd_observe(rc_dmd *g, double *kin, double *pot, double mom[3],
                         double *msd, double *overlap)
{
    rc_k_md *v = &g->v;
    rc_status st;
    int k, rebuilt;
    if ((st = rc_dmd_obs_sum(g, RC_K_MD_OBS_KE, kin)) != RC_OK ||
        (st = rc_dmd_obs_sum(g, RC_K_MD_OBS_POT, pot)) != RC_OK)
        return st;
    for (k = 0; k < 3; ++k)
        if ((st = rc_dmd_obs_sum(g, RC_K_MD_OBS_P0 + k, mom + k)) != RC_OK)
            return st;
    *pot += g->md->epot_pair;
    if (msd) {
        *msd = 0.0;
        if (v->ref && v->n > 0) {
            if ((st = rc_dmd_obs_sum(g, RC_K_MD_OBS_MSD, msd)) != RC_OK)
                return st;
            *msd /= v->n;
        }
    }
    if (overlap) {
        double w = 0.0, ww = 0.0;
        /* every overlapping pair is a candidate while the spheres have
         * moved less than half the skin since the build (rebuilt if not:
         * a step handed to the host engine may have moved them) */
        if ((st = rc_dmd_candidates(g, 0.0, 0, &rebuilt)) != RC_OK)
            return st;
        if (v->ncand > 0) {
            if (rc_dmd_grow(g, (void **)&v->red, &g->cap_red, v->ncand + 1,
                            sizeof(double), 0))
                return rc_dmd_ops_fail(g, "memory for reductions");
            RUN(RC_DMD_OVERLAP_PAIR, v->ncand);
            OP(g->ops->max(g->ctx, v->red, v->ncand, &w), "overlap");
        }
        RUN(RC_DMD_OVERLAP_WALL, v->n);
        OP(g->ops->max(g->ctx, v->red, v->n, &ww), "wall overlap");
        *overlap = w > ww ? w : ww;
    }
    return RC_OK;
}

/* ------------------------------------------------------------------ */

/* Largest displacement this step (q^p from p, as rc_md_predict). */
static rc_status rc_dmd_predict(rc_dmd *g, double *dmax)
{
    double m2;
    RUN(RC_DMD_PREDICT, g->v.n);
    OP(g->ops->max(g->ctx, g->v.red, g->v.n, &m2), "largest displacement");
    *dmax = sqrt(m2); /* sqrt is monotone: the max of the roots */
    return RC_OK;
}

static rc_status rc_dmd_moved(rc_dmd *g, double *moved)
{
    double m2;
    RUN(RC_DMD_MOVED, g->v.n);
    OP(g->ops->max(g->ctx, g->v.red, g->v.n, &m2), "displacement");
    *moved = sqrt(m2);
    return RC_OK;
}

/* Candidate pairs, as rc_md_candidates: rebuilt when the spheres could
 * have used up the skin. */
static rc_status rc_dmd_candidates(rc_dmd *g, double dstep, int force,
                                   int *rebuilt)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    double cut, moved, t0;
    long ncell, total;
    *rebuilt = 0;
    if (g->have_cand && !force) {
        rc_status st = rc_dmd_moved(g, &moved);
        if (st != RC_OK)
            return st;
        if (2.0 * (moved + dstep) + 2.0 * md->eps_g < g->cand_skin) {
            OP(g->ops->zero(g->ctx, v->in_a, (size_t)v->ncand + 1),
               "clearing marks");
            return RC_OK;
        }
    }
    {
        rc_status st = rc_md_candidate_cut(md, dstep, &cut);
        if (st != RC_OK)
            return st;
    }
    t0 = rc_now();
    /* the host cell list's grid for the same cutoff (rc_md_candidates) */
    if (rc_cells_grid(&md->box, cut * (1.0 + 1e-12), v->nc, v->edge,
                      &ncell) != 0)
        return rc_dmd_fail(g, RC_ERR_INVALID,
                           "no cell grid for cutoff %g", cut);
    v->ncell = (int)ncell;
    v->cut2 = cut * cut;
    rc_k_pair_limits(&md->box, v->lim);
    {
        void **ptrs[2];
        size_t sizes[2] = {sizeof(long), sizeof(long)};
        ptrs[0] = (void **)&v->cell_start;
        ptrs[1] = (void **)&v->cell_cur;
        if (rc_dmd_grow_set(g, ncell + 1, &g->cap_cell, ptrs, sizes, 2))
            return rc_dmd_ops_fail(g, "memory for cells");
    }
    OP(g->ops->zero(g->ctx, v->cell_start, sizeof(long) * (size_t)(ncell + 1)),
       "clearing cells");
    RUN(RC_DMD_CELL_COUNT, v->n);
    OP(g->ops->scan(g->ctx, v->cell_start, ncell, &total), "cell scan");
    OP(g->ops->copy(g->ctx, v->cell_cur, v->cell_start,
                    sizeof(long) * (size_t)ncell),
       "cell cursors");
    RUN(RC_DMD_CELL_FILL, v->n);
    RUN(RC_DMD_PAIR_COUNT, v->n);
    OP(g->ops->scan(g->ctx, v->pair_off, v->n, &total), "pair scan");
    {
        void **ptrs[3];
        size_t sizes[3] = {sizeof(int), sizeof(int), 1};
        ptrs[0] = (void **)&v->cand_i;
        ptrs[1] = (void **)&v->cand_j;
        ptrs[2] = (void **)&v->in_a;
        if (rc_dmd_grow_set(g, total + 1, &g->cap_cand, ptrs, sizes, 3))
            return rc_dmd_ops_fail(g, "memory for candidate pairs");
    }
    if (v->has_pair) {
        void **ptrs[4];
        size_t sizes[4] = {sizeof(double), sizeof(double), sizeof(double),
                           sizeof(int)};
        ptrs[0] = (void **)&v->pair_c1;
        ptrs[1] = (void **)&v->pair_en;
        ptrs[2] = (void **)&v->pair_vir;
        ptrs[3] = (void **)&v->tlist;
        if (rc_dmd_grow_set(g, total + 1, &g->cap_pair, ptrs, sizes, 4))
            return rc_dmd_ops_fail(g, "memory for pair terms");
    }
    v->ncand = total;
    RUN(RC_DMD_PAIR_WRITE, v->n);
    if (v->has_pair) {
        /* each sphere's pairs as the larger index, for the force gather */
        long tt;
        OP(g->ops->zero(g->ctx, v->toff, sizeof(long) * (size_t)(v->n + 1)),
           "clearing the transposed list");
        RUN(RC_DMD_TCOUNT, total);
        OP(g->ops->scan(g->ctx, v->toff, v->n, &tt), "transposed scan");
        OP(g->ops->copy(g->ctx, v->tcur, v->toff,
                        sizeof(long) * (size_t)v->n),
           "transposed cursors");
        RUN(RC_DMD_TFILL, total);
        RUN(RC_DMD_TSORT, v->n);
    }
    OP(g->ops->zero(g->ctx, v->in_a, (size_t)total + 1), "clearing marks");
    RUN(RC_DMD_SNAPSHOT, v->n);
    g->cand_skin = md->par.skin;
    g->have_cand = 1;
    g->rebuilds++;
    md->rebuilds++;
    md->t_broad += rc_now() - t0;
    *rebuilt = 1;
    return RC_OK;
}

/* Room in A for `more` contacts (kept across growth). */
static int rc_dmd_con_room(rc_dmd *g, long more)
{
    return rc_dmd_grow(g, (void **)&g->v.con, &g->cap_con, g->v.ncon + more,
                       sizeof(rc_k_md_contact), g->v.ncon);
}

/* The flags array for `count` items (+1 for the scan's total). */
static int rc_dmd_flag_room(rc_dmd *g, long count)
{
    return rc_dmd_grow(g, (void **)&g->v.flag, &g->cap_flag, count + 1,
                       sizeof(long), 0);
}

/* Add to A the candidates and walls violated at q^p, as rc_md_extend:
 * flags, a scan for the slots, then the pushes in candidate order. */
static rc_status rc_dmd_extend(rc_dmd *g, int at_start, long *added)
{
    rc_k_md *v = &g->v;
    long np = 0, nw = 0, nwall = 2L * v->n * v->dim;
    int k, walls = 0;
    v->at_start = at_start;
    *added = 0;
    if (rc_dmd_flag_room(g, v->ncand > nwall ? v->ncand : nwall))
        return rc_dmd_ops_fail(g, "memory for contact flags");
    if (v->ncand > 0) {
        RUN(RC_DMD_SCREEN_PAIR, v->ncand);
        OP(g->ops->scan(g->ctx, v->flag, v->ncand, &np), "contact scan");
        if (np > 0) {
            if (rc_dmd_con_room(g, np))
                return rc_dmd_ops_fail(g, "memory for contacts");
            RUN(RC_DMD_PUSH_PAIR, v->ncand);
            v->ncon += np;
        }
    }
    for (k = 0; k < v->dim; ++k)
        walls |= !v->box.periodic[k];
    if (walls) {
        RUN(RC_DMD_SCREEN_WALL, nwall);
        OP(g->ops->scan(g->ctx, v->flag, nwall, &nw), "wall scan");
        if (nw > 0) {
            if (rc_dmd_con_room(g, nw))
                return rc_dmd_ops_fail(g, "memory for contacts");
            RUN(RC_DMD_PUSH_WALL, nwall);
            v->ncon += nw;
        }
    }
    OP(g->ops->zero(g->ctx, v->touched, (size_t)v->n), "clearing marks");
    *added = np + nw;
    return RC_OK;
}

/* Islands of A, as rc_md_islands: union-find labels (the smallest
 * sphere of each component), contacts stably sorted by label. */
static rc_status rc_dmd_islands(rc_dmd *g)
{
    rc_k_md *v = &g->v;
    long m = v->ncon, nisl;
    int bits = 1;
    {
        void **ptrs[9];
        size_t sizes[9] = {sizeof(int),  sizeof(int),     sizeof(long),
                           sizeof(long), sizeof(long),    sizeof(int),
                           sizeof(int),  3 * sizeof(int), 2 * sizeof(double)};
        ptrs[0] = (void **)&v->key;
        ptrs[1] = (void **)&v->order;
        ptrs[2] = (void **)&v->head;
        ptrs[3] = (void **)&v->istart;
        ptrs[4] = (void **)&v->woff;
        ptrs[5] = (void **)&v->isl_fail;
        ptrs[6] = (void **)&v->isl_passes;
        ptrs[7] = (void **)&v->iwork;
        ptrs[8] = (void **)&v->cwork;
        if (rc_dmd_grow_set(g, m + 1, &g->cap_isl, ptrs, sizes, 9))
            return rc_dmd_ops_fail(g, "memory for islands");
    }
    if (g->h_cap < g->cap_isl) {
        free(g->h_fail);
        free(g->h_passes);
        free(g->h_istart);
        g->h_fail = (int *)malloc(sizeof(int) * (size_t)g->cap_isl);
        g->h_passes = (int *)malloc(sizeof(int) * (size_t)g->cap_isl);
        g->h_istart = (long *)malloc(sizeof(long) * (size_t)(g->cap_isl + 1));
        if (!g->h_fail || !g->h_passes || !g->h_istart) {
            g->h_cap = 0;
            return rc_dmd_fail(g, RC_ERR_NOMEM, "out of memory for islands");
        }
        g->h_cap = g->cap_isl;
    }
    if (rc_dmd_grow(g, (void **)&v->red, &g->cap_red, m + 1, sizeof(double),
                    0))
        return rc_dmd_ops_fail(g, "memory for reductions");
    RUN(RC_DMD_UF_INIT, v->n);
    RUN(RC_DMD_UF_HOOK, m);
    RUN(RC_DMD_CON_KEY, m);
    while (bits < 31 && (1L << bits) < v->n)
        ++bits;
    OP(g->ops->sort_by_key(g->ctx, v->key, v->order, m, bits),
       "sorting contacts by island");
    RUN(RC_DMD_ISL_HEAD, m);
    OP(g->ops->scan(g->ctx, v->head, m, &nisl), "island scan");
    RUN(RC_DMD_ISL_START, m);
    OP(rc_dmd_put_long(g, v->istart + nisl, m), "island ends");
    v->nisl = nisl;
    return RC_OK;
}

/* Every island's dense scratch (rc_k_md_isl_size), sized and placed by a
 * scan, for the island bodies that follow. */
static rc_status rc_dmd_island_work(rc_dmd *g)
{
    rc_k_md *v = &g->v;
    long wtotal;
    RUN(RC_DMD_ISL_SIZE, v->nisl);
    OP(g->ops->scan(g->ctx, v->woff, v->nisl, &wtotal), "scratch scan");
    if (rc_dmd_grow(g, (void **)&v->work, &g->cap_work, wtotal + 1,
                    sizeof(double), 0))
        return rc_dmd_ops_fail(g, "memory for island solves");
    return RC_OK;
}

/* The island bodies' per-island results (failure codes, counts, island
 * starts) into the host's arrays. */
static rc_status rc_dmd_island_results(rc_dmd *g)
{
    rc_k_md *v = &g->v;
    size_t nisl = (size_t)v->nisl;
    OP(g->ops->get(g->ctx, g->h_fail, v->isl_fail, sizeof(int) * nisl) ||
           g->ops->get(g->ctx, g->h_passes, v->isl_passes,
                       sizeof(int) * nisl) ||
           g->ops->get(g->ctx, g->h_istart, v->istart,
                       sizeof(long) * (nisl + 1)),
       "island results");
    return RC_OK;
}

/* Stage 6: the position update of every island whose contacts the
 * reflected predictor still violates (R3), counted in md->step.held.
 * *big: such an island is beyond the per-thread tier (the step goes to
 * the host engine). */
static rc_status rc_dmd_hold(rc_dmd *g, int *big)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    long s;
    rc_status st;
    *big = 0;
    if (v->nisl == 0)
        return RC_OK;
    if ((st = rc_dmd_island_work(g)) != RC_OK)
        return st;
    RUN(RC_DMD_HOLD, v->nisl);
    if ((st = rc_dmd_island_results(g)) != RC_OK)
        return st;
    for (s = 0; s < v->nisl; ++s)
        if (g->h_fail[s] == RC_K_MD_BIG) {
            *big = 1;
            return RC_OK;
        }
    for (s = 0; s < v->nisl; ++s) {
        if (g->h_fail[s])
            return rc_md_island_failed(md, 1, g->h_fail[s],
                                       g->h_istart[s + 1] - g->h_istart[s]);
        md->step.held += g->h_passes[s];
    }
    return RC_OK;
}

/* Stage 7's velocity projection (RATTLE) for the held contacts. */
static rc_status rc_dmd_project(rc_dmd *g)
{
    rc_k_md *v = &g->v;
    long s;
    rc_status st;
    RUN(RC_DMD_PROJECT, v->nisl);
    if ((st = rc_dmd_island_results(g)) != RC_OK)
        return st;
    for (s = 0; s < v->nisl; ++s)
        if (g->h_fail[s])
            return rc_md_island_failed(g->md, 2, g->h_fail[s],
                                       g->h_istart[s + 1] - g->h_istart[s]);
    return RC_OK;
}

/* Islands beyond the per-thread tier, up to lapack_max contacts: the
 * passes of rc_k_md_reflect_island with the launcher's batched NNLS (the
 * medium tier: cuBLAS Gram matrices and cuSOLVER batched Cholesky on the
 * GPU), every such island of the round one problem of each batch.  The
 * pass logic runs on host copies of the momenta and contacts: these
 * islands are rare (dense clusters), and the copies cost two transfers
 * of the momenta per round that has one.  The island's Jacobian, scaled
 * by M^-1/2, is B: row a holds n_a / sqrt(m_i) in sphere i's columns and
 * -n_a / sqrt(m_j) in j's, so B B^T is the Gram matrix of the dense
 * tier.  *handed: an island beyond lapack_max (the host engine's sparse
 * tier takes the step). */
static rc_status rc_dmd_medium(rc_dmd *g, int *handed)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    int d = md->dim, n = md->n, mp = 0, kp = 0, ns = 0, a, k, pass, t;
    long s, ncon = v->ncon, N = (long)n * d;
    rc_status st = RC_OK;
    rc_k_md_contact *con = NULL;
    int *order = NULL, *isl = NULL, *m = NULL, *V = NULL, *status = NULL;
    int *slot = NULL, *passes = NULL, *done = NULL, *fail_code = NULL;
    unsigned char *touched = NULL;
    double *p = NULL, *B = NULL, *b = NULL, *lam = NULL, *sqinv = NULL;
    *handed = 0;
    for (s = 0; s < v->nisl; ++s)
        if (g->h_fail[s] == RC_K_MD_BIG) {
            long ms = g->h_istart[s + 1] - g->h_istart[s];
            if (ms > md->par.lapack_max) {
                *handed = 1;
                return RC_OK;
            }
            ++ns;
        }
    con = (rc_k_md_contact *)malloc(sizeof *con * (size_t)(ncon + 1));
    order = (int *)malloc(sizeof(int) * (size_t)(ncon + 1));
    p = (double *)malloc(sizeof(double) * (size_t)(N + 1));
    touched = (unsigned char *)malloc((size_t)n + 1);
    slot = (int *)malloc(sizeof(int) * (size_t)(n + 1));
    sqinv = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    isl = (int *)malloc(sizeof(int) * (size_t)ns);
    m = (int *)calloc((size_t)ns, sizeof(int));
    status = (int *)calloc((size_t)ns, sizeof(int));
    passes = (int *)calloc((size_t)ns, sizeof(int));
    done = (int *)calloc((size_t)ns, sizeof(int));
    fail_code = (int *)calloc((size_t)ns, sizeof(int));
    if (!con || !order || !p || !touched || !slot || !sqinv || !isl || !m ||
        !status || !passes || !done || !fail_code) {
        st = rc_dmd_fail(g, RC_ERR_NOMEM, "out of memory for the medium "
                                          "island tier");
        goto done;
    }
    if (g->ops->get(g->ctx, con, v->con, sizeof *con * (size_t)ncon) ||
        g->ops->get(g->ctx, order, v->order, sizeof(int) * (size_t)ncon) ||
        g->ops->get(g->ctx, p, v->p, sizeof(double) * (size_t)N) ||
        g->ops->get(g->ctx, touched, v->touched, (size_t)n)) {
        st = rc_dmd_ops_fail(g, "medium tier: copying islands out");
        goto done;
    }
    for (t = 0; t < n; ++t) {
        slot[t] = -1;
        sqinv[t] = sqrt(md->inv_mass[t]);
    }
    /* the batch shape: most contacts and spheres of one island */
    for (ns = 0, s = 0; s < v->nisl; ++s) {
        long lo = g->h_istart[s], hi = g->h_istart[s + 1], e;
        int ks = 0;
        if (g->h_fail[s] != RC_K_MD_BIG)
            continue;
        isl[ns++] = (int)s;
        for (e = lo; e < hi; ++e) {
            const rc_k_md_contact *c = con + order[e];
            if (slot[c->i] < 0)
                slot[c->i] = ks++;
            if (c->j >= 0 && slot[c->j] < 0)
                slot[c->j] = ks++;
        }
        for (e = lo; e < hi; ++e) { /* reset for the next island */
            slot[con[order[e]].i] = -1;
            if (con[order[e]].j >= 0)
                slot[con[order[e]].j] = -1;
        }
        if (hi - lo > mp)
            mp = (int)(hi - lo);
        if (ks * d > kp)
            kp = ks * d;
    }
    V = (int *)malloc(sizeof(int) * (size_t)ns * (size_t)mp);
    B = (double *)malloc(sizeof(double) * (size_t)ns * (size_t)mp *
                         (size_t)kp);
    b = (double *)malloc(sizeof(double) * (size_t)ns * (size_t)mp);
    lam = (double *)malloc(sizeof(double) * (size_t)ns * (size_t)mp);
    if (!V || !B || !b || !lam) {
        st = rc_dmd_fail(g, RC_ERR_NOMEM,
                         "out of memory for the medium island tier (%d "
                         "islands of up to %d contacts)",
                         ns, mp);
        goto done;
    }
    for (pass = 0;; ++pass) {
        int any = 0;
        for (t = 0; t < ns; ++t) {
            long lo = g->h_istart[isl[t]], hi = g->h_istart[isl[t] + 1], nv;
            int ks = 0, *Vt = V + (size_t)t * mp;
            double *Bt = B + (size_t)t * mp * kp, *bt = b + (size_t)t * mp;
            m[t] = 0;
            if (done[t])
                continue;
            nv = rc_k_md_pass_select(d, p, md->inv_mass, con, order + lo,
                                     hi - lo, md->eps_v, md->par.moreau,
                                     md->par.max_passes, pass, Vt, bt);
            if (nv <= 0) { /* done; -1: out of passes */
                fail_code[t] = nv < 0 ? RC_K_MD_PASSES : 0;
                done[t] = 1;
                continue;
            }
            memset(Bt, 0, sizeof(double) * (size_t)mp * (size_t)kp);
            for (a = 0; a < nv; ++a) {
                const rc_k_md_contact *c = con + Vt[a];
                if (slot[c->i] < 0)
                    slot[c->i] = ks++;
                for (k = 0; k < d; ++k)
                    Bt[(size_t)a * kp + slot[c->i] * d + k] =
                        c->n[k] * sqinv[c->i];
                if (c->j >= 0) {
                    if (slot[c->j] < 0)
                        slot[c->j] = ks++;
                    for (k = 0; k < d; ++k)
                        Bt[(size_t)a * kp + slot[c->j] * d + k] =
                            -c->n[k] * sqinv[c->j];
                }
            }
            for (a = 0; a < nv; ++a) {
                slot[con[Vt[a]].i] = -1;
                if (con[Vt[a]].j >= 0)
                    slot[con[Vt[a]].j] = -1;
            }
            m[t] = (int)nv;
            any = 1;
        }
        if (!any)
            break;
        if (g->ops->nnls_batch(g->ctx, ns, mp, kp, m, B, b, lam, status)) {
            st = rc_dmd_ops_fail(g, "medium island tier");
            goto done;
        }
        for (t = 0; t < ns; ++t) {
            int *Vt = V + (size_t)t * mp;
            double *lt = lam + (size_t)t * mp;
            if (m[t] == 0)
                continue;
            if (status[t] != 0) {
                fail_code[t] = RC_K_MD_NNLS;
                done[t] = 1;
                continue;
            }
            rc_k_md_pass_apply(d, p, touched, con, Vt, m[t], lt);
            passes[t] = pass + 1;
        }
    }
    for (t = 0; t < ns; ++t) {
        long ms = g->h_istart[isl[t] + 1] - g->h_istart[isl[t]];
        if (fail_code[t]) {
            st = rc_md_island_failed(md, 0, fail_code[t], ms);
            goto done;
        }
        md->step.passes += passes[t];
        md->step.islands += passes[t] > 0;
        md->step.lapack_islands += passes[t]; /* solves, as the host */
        if (ms > md->step.largest_island)
            md->step.largest_island = ms;
    }
    if (g->ops->put(g->ctx, v->con, con, sizeof *con * (size_t)ncon) ||
        g->ops->put(g->ctx, v->p, p, sizeof(double) * (size_t)N) ||
        g->ops->put(g->ctx, v->touched, touched, (size_t)n))
        st = rc_dmd_ops_fail(g, "medium tier: copying islands in");
done:
    free(con);
    free(order);
    free(p);
    free(touched);
    free(slot);
    free(sqinv);
    free(isl);
    free(m);
    free(status);
    free(passes);
    free(done);
    free(fail_code);
    free(V);
    free(B);
    free(b);
    free(lam);
    return st;
}

/* Stage 4: reflect every island.  *big: an island needs the sparse tier
 * (beyond lapack_max; the step goes to the host engine). */
static rc_status rc_dmd_reflect(rc_dmd *g, int *big)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    long s, nisl = v->nisl, fail_island = -1;
    int fail = 0, medium = 0;
    rc_status st;
    *big = 0;
    if (nisl == 0)
        return RC_OK;
    if ((st = rc_dmd_island_work(g)) != RC_OK)
        return st;
    RUN(RC_DMD_REFLECT, nisl);
    if ((st = rc_dmd_island_results(g)) != RC_OK)
        return st;
    for (s = 0; s < nisl; ++s) {
        long m = g->h_istart[s + 1] - g->h_istart[s];
        if (g->h_fail[s] == RC_K_MD_BIG) {
            medium = 1;
            continue;
        }
        if (g->h_fail[s] && !fail) {
            fail = g->h_fail[s];
            fail_island = s;
        }
        md->step.passes += g->h_passes[s];
        md->step.islands += g->h_passes[s] > 0;
        if (m > md->step.largest_island)
            md->step.largest_island = m;
    }
    if (fail)
        return rc_md_island_failed(
            md, 0, fail,
            g->h_istart[fail_island + 1] - g->h_istart[fail_island]);
    if (medium)
        return rc_dmd_medium(g, big);
    return RC_OK;
}

/* The step on the host engine, from the state at the start of the step
 * (g->p_save; q is untouched until the step's end). */
static rc_status rc_dmd_fallback(rc_dmd *g)
{
    rc_md *md = g->md;
    size_t N = (size_t)md->n * (size_t)md->dim;
    rc_status st;
    OP(g->ops->copy(g->ctx, g->v.p, g->p_save, sizeof(double) * N),
       "restoring momenta");
    if ((st = rc_dmd_sync(g)) != RC_OK)
        return st;
    /* with a pair potential, grad V(q) lives on the launcher */
    if (g->v.has_pair &&
        g->ops->get(g->ctx, md->grad, g->v.grad, sizeof(double) * N))
        return rc_dmd_ops_fail(g, "copying forces out");
    g->fallbacks++;
    if ((st = rc_md_step(md)) != RC_OK || (st = rc_dmd_load(g)) != RC_OK)
        return st;
    if (g->v.has_pair &&
        g->ops->put(g->ctx, g->v.grad, md->grad, sizeof(double) * N))
        return rc_dmd_ops_fail(g, "copying forces in");
    /* the device candidates stay valid: their criterion compares q with
     * the positions at their build, whoever moved the spheres */
    return RC_OK;
}

/* Restore the momenta of the step's start after a failure. */
static rc_status rc_dmd_abort(rc_dmd *g, rc_status st)
{
    size_t N = (size_t)g->md->n * (size_t)g->md->dim;
    if (g->ops->copy(g->ctx, g->v.p, g->p_save, sizeof(double) * N) != 0)
        return rc_dmd_ops_fail(g, "restoring momenta");
    return st;
}

static rc_status rc_dmd_step_(rc_dmd *g, int *handed)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    size_t N = (size_t)md->n * (size_t)md->dim;
    long added;
    double dmax, moved, t0 = rc_now(), t1, sum;
    int big = 0, rebuilt;
    rc_status st;

    *handed = 0;
    memset(&md->step, 0, sizeof md->step);
    OP(g->ops->zero(g->ctx, v->wall_in, (size_t)md->n * 6 + 1),
       "clearing wall marks");
    OP(g->ops->copy(g->ctx, g->p_save, v->p, sizeof(double) * N),
       "saving momenta");
    v->ncon = 0;
    /* 1-3. predictor, candidates, extended set */
    if ((st = rc_dmd_predict(g, &dmax)) != RC_OK)
        return st;
    t1 = rc_now();
    md->t_update += t1 - t0;
    if ((st = rc_dmd_candidates(g, dmax, 0, &rebuilt)) != RC_OK)
        return st;
    t0 = rc_now();
    if ((st = rc_dmd_extend(g, 1, &added)) != RC_OK)
        return st;
    md->t_contacts += rc_now() - t0;
    for (;;) {
        /* 4-5. islands and reflections until the set is closed (R2) */
        while (added > 0) {
            t0 = rc_now();
            if ((st = rc_dmd_islands(g)) != RC_OK)
                return st;
            t1 = rc_now();
            md->t_contacts += t1 - t0;
            if ((st = rc_dmd_reflect(g, &big)) != RC_OK)
                return st;
            md->t_reflect += rc_now() - t1;
            if (big) {
                g->fallback_big++;
                *handed = 1;
                return RC_OK;
            }
            if ((st = rc_dmd_predict(g, &dmax)) != RC_OK ||
                (st = rc_dmd_moved(g, &moved)) != RC_OK)
                return st;
            if (2.0 * (moved + dmax) + 2.0 * md->eps_g >= g->cand_skin) {
                if ((st = rc_dmd_candidates(g, dmax, 1, &rebuilt)) != RC_OK)
                    return st;
                RUN(RC_DMD_REMARK, v->ncon);
            }
            t0 = rc_now();
            if ((st = rc_dmd_extend(g, 0, &added)) != RC_OK)
                return st;
            md->t_contacts += rc_now() - t0;
            if (added > 0)
                md->step.rounds++;
        }
        /* 6. position update: x = q^p, with complementarity where the
         * reflected predictor still violates a contact (R3) */
        if (v->ncon == 0)
            break;
        t1 = rc_now();
        if ((st = rc_dmd_islands(g)) != RC_OK ||
            (st = rc_dmd_hold(g, &big)) != RC_OK)
            return st;
        md->t_reflect += rc_now() - t1;
        if (big) {
            g->fallback_held++;
            *handed = 1;
            return RC_OK;
        }
        if (md->step.held == 0)
            break;
        /* R2, continued: a contact outside A that the held position update
         * violates joins A, and the step is redone from the reflections
         * without the holding impulses */
        if ((st = rc_dmd_extend(g, 0, &added)) != RC_OK)
            return st;
        if (added == 0)
            break;
        RUN(RC_DMD_UNHOLD, v->nisl);
        md->step.held = 0;
        if ((st = rc_dmd_predict(g, &dmax)) != RC_OK)
            return st;
        md->step.rounds++;
    }
    t0 = rc_now();
    RUN(RC_DMD_FINITE, v->n);
    OP(g->ops->max(g->ctx, v->red, v->n, &sum), "finiteness");
    if (sum > 0.0)
        return rc_dmd_fail(g, RC_ERR_NONFINITE,
                           "state became non-finite at step %ld (t = %g), "
                           "first at particle %ld",
                           md->steps + 1, md->time + md->par.dt,
                           (long)v->n - (long)sum);
    /* 7. forces at x (the pair potential), the kick and the new
     * positions */
    if (v->has_pair) {
        double ep1 = 0.0, vir1 = 0.0;
        if (v->ncand > 0) {
            RUN(RC_DMD_PAIR_TERM, v->ncand);
            OP(g->ops->sum(g->ctx, v->pair_en, v->ncand, &ep1), "pair energy");
            OP(g->ops->sum(g->ctx, v->pair_vir, v->ncand, &vir1),
               "pair virial");
        }
        RUN(RC_DMD_FORCE, v->n);
        md->epot_pair = ep1;
        md->virial_force = vir1;
    }
    if (md->step.held > 0) {
        /* the kick, RATTLE's projection for the held contacts, and x */
        RUN(RC_DMD_KICK_FORCES, v->n);
        if ((st = rc_dmd_project(g)) != RC_OK)
            return st;
        RUN(RC_DMD_ADVANCE, v->n);
    } else {
        RUN(RC_DMD_FINISH, v->n);
    }
    if (v->has_pair) {
        double *tmp = v->grad;
        v->grad = v->grad1;
        v->grad1 = tmp;
    }
    /* counters */
    if (v->ncon > 0) {
        RUN(RC_DMD_COLLIDED, v->ncon);
        OP(g->ops->sum(g->ctx, v->red, v->ncon, &sum), "collisions");
        md->step.collisions = (long)sum;
        RUN(RC_DMD_WALL_COLLIDED, v->ncon);
        OP(g->ops->sum(g->ctx, v->red, v->ncon, &sum), "wall collisions");
        md->step.wall_collisions = (long)sum;
        RUN(RC_DMD_VIRIAL, v->ncon);
        OP(g->ops->sum(g->ctx, v->red, v->ncon, &md->step.virial),
           "virial");
    }
    rc_md_step_done(md);
    md->t_update += rc_now() - t0;
    return RC_OK;
}

rc_status rc_dmd_step(rc_dmd *g)
{
    int handed = 0;
    rc_status st = rc_dmd_step_(g, &handed);
    if (st != RC_OK)
        return rc_dmd_abort(g, st);
    if (handed)
        return rc_dmd_fallback(g);
    return RC_OK;
}

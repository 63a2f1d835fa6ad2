/* The large-system GVI step (DESIGN §6; seed 000 Algorithm 1 for many
 * spheres), the one orchestration (dengine.h): a sequence of kernels over
 * the launcher's arrays.  One step of length h from (q, p):
 *
 *   1. predictor q^p = q + h M^-1 (p - h/2 grad V(q));
 *   2. candidate pairs (a Verlet list with a skin, rebuilt from cell
 *      lists when the spheres could have used the skin up); wall
 *      contacts on walled axes;
 *   3. extended set A = {g(q) <= eps_g} u {g(q^p) <= 0};
 *   4. islands: connected components of A's pairs (union-find); each
 *      island gets one generalized reflection (seed 000 Algorithm 2:
 *      NNLS on the Gram matrix of its approaching contacts, in passes
 *      until none approaches; with Moreau reflection Algorithm 3), islands
 *      in parallel: they share no sphere, so the result does not depend
 *      on the order;
 *   5. refinement R2: the predictor is re-evaluated with the reflected
 *      momenta and contacts it now finds violated join A (and their
 *      islands are reflected again), until none does;
 *   6. position update x = q^p of the reflected momenta, with
 *      complementarity where a force drives a contact through (R3: held
 *      contacts, a sphere resting on a floor);
 *   7. forces at x and the kick p' = p+ + C mu - h/2 (grad V(q) +
 *      grad V(x)); RATTLE's projection for the held contacts.
 *
 * With exact collision times (ballistic spheres, src/kernels/rc_md_exact.h)
 * steps 3-6 are the islands' impacts at their times within the step and
 * the set closed along the deflected paths: rc_dmd_step_exact_.
 *
 * Island tiers: up to dense_max contacts the per-thread dense NNLS of the
 * island kernels; reflections up to lapack_max the launcher's batched
 * tier (rc_dmd_medium); everything larger the host tiers (tiers.h:
 * LAPACK, projected Gauss–Seidel), on host memory.
 *
 * What crosses to the host.  Reductions leave their results in the
 * launcher's slots, and the host fetches the scalars of one decision
 * together: one round trip for the step's motion (largest displacement of
 * the predictor and since the candidate build), one per island round
 * (the island summary: beyond the tier, failed, passes, islands, largest
 * island), one for the end of the step (finiteness, collision counts,
 * virial, pair energy and virial).  The scans' totals size the next
 * allocation and the next launch, so each is a round trip too.  Per-
 * island results are read only when an island failed or needs the
 * medium tier, whose rounds also copy the momenta and contacts.  A gas
 * step with collisions makes 9-16 round trips (4 000 spheres: 9.4; the
 * 256 000-sphere fluid, 1.4 extra rounds a step: 16.1); the counts are
 * kept (g->step_syncs, g->step_launches and the work behind them) and
 * reported (summary.json, bench/gpu/dengine_counts.c). */
/* clock_gettime and CLOCK_MONOTONIC (../clock.h) are POSIX: -std=c11
 * without extensions declares them only with this (clang insists). */
#define _POSIX_C_SOURCE 200809L
#include "dengine.h"
#include "../checkpoint.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../clock.h"
#include "tiers.h"

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

/* The launcher's calls, counted: those that queue work and those that
 * wait for the launcher (host synchronisations). */
static void rc_dmd_count(rc_dmd *g, int sync)
{
    if (sync) {
        g->syncs++;
        g->step_syncs++;
    } else {
        g->launches++;
        g->step_launches++;
    }
}

/* The profile's rows after the kernels' (rc_dmd.prof_seconds). */
enum {
    RC_DMD_PROF_SCAN = RC_DMD_NKERNELS,
    RC_DMD_PROF_SORT,
    RC_DMD_PROF_REDUCE,
    RC_DMD_PROF_FETCH,
    RC_DMD_PROF_MEMORY,
    RC_DMD_PROF_ROWS
};

/* A launcher call's result, and with the profile on its time until the
 * launcher is idle (a fetch of one slot waits for what is queued) into
 * row `row`. */
#define RC_DMD_TIMED(g, row, call)                                           \
    ((g)->profile                                                            \
         ? ((g)->prof_t0 = rc_now(), rc_dmd_timed_end((g), (row), (call)))  \
         : (call))

static int rc_dmd_timed_end(rc_dmd *g, int row, int rc)
{
    double slot;
    if (rc == 0 && !g->ops->host_memory)
        rc = g->ops->fetch(g->ctx, &slot, 1);
    g->prof_seconds[row] += rc_now() - g->prof_t0;
    return rc;
}

static int rc_dmd_run(rc_dmd *g, rc_dmd_kernel k, long count)
{
    if (count <= 0)
        return 0;
    rc_dmd_count(g, 0);
    g->kernel_items[k] += count;
    g->kernel_calls[k]++;
    return RC_DMD_TIMED(g, (int)k, g->ops->run(g->ctx, k, &g->v, count));
}

static int rc_dmd_get(rc_dmd *g, void *dst, const void *src, size_t bytes)
{
    rc_dmd_count(g, 1);
    g->gets++;
    g->get_bytes += (long)bytes;
    return RC_DMD_TIMED(g, RC_DMD_PROF_MEMORY,
                        g->ops->get(g->ctx, dst, src, bytes));
}

static int rc_dmd_put(rc_dmd *g, void *dst, const void *src, size_t bytes)
{
    rc_dmd_count(g, 0);
    g->puts++;
    g->put_bytes += (long)bytes;
    return RC_DMD_TIMED(g, RC_DMD_PROF_MEMORY,
                        g->ops->put(g->ctx, dst, src, bytes));
}

static int rc_dmd_copy(rc_dmd *g, void *dst, const void *src, size_t bytes)
{
    rc_dmd_count(g, 0);
    g->copies++;
    g->copy_bytes += (long)bytes;
    return RC_DMD_TIMED(g, RC_DMD_PROF_MEMORY,
                        g->ops->copy(g->ctx, dst, src, bytes));
}

static int rc_dmd_zero(rc_dmd *g, void *dst, size_t bytes)
{
    rc_dmd_count(g, 0);
    g->zeros++;
    g->zero_bytes += (long)bytes;
    return RC_DMD_TIMED(g, RC_DMD_PROF_MEMORY,
                        g->ops->zero(g->ctx, dst, bytes));
}

static int rc_dmd_scan(rc_dmd *g, long *x, long n, long *total)
{
    rc_dmd_count(g, 1);
    g->scans++;
    g->scan_items += n;
    return RC_DMD_TIMED(g, RC_DMD_PROF_SCAN,
                        g->ops->scan(g->ctx, x, n, total));
}

/* A selection of the flagged items: a scan on the GPU (counted and timed
 * as one). */
static int rc_dmd_select(rc_dmd *g, long n, long *total)
{
    rc_dmd_count(g, 1);
    g->scans++;
    g->scan_items += n;
    return RC_DMD_TIMED(g, RC_DMD_PROF_SCAN,
                        g->ops->select(g->ctx, g->v.flag, n, g->v.hit, total));
}

static int rc_dmd_sort(rc_dmd *g, int *key, int *val, long n, int key_bits)
{
    rc_dmd_count(g, 0);
    g->sorts++;
    g->sort_items += n;
    return RC_DMD_TIMED(g, RC_DMD_PROF_SORT,
                        g->ops->sort_by_key(g->ctx, key, val, n, key_bits));
}

static int rc_dmd_reduce(rc_dmd *g, const double *x, long n, int is_max,
                         int slot)
{
    rc_dmd_count(g, 0);
    g->reduces++;
    g->reduce_items += n;
    return RC_DMD_TIMED(g, RC_DMD_PROF_REDUCE,
                        g->ops->reduce(g->ctx, x, n, is_max, slot));
}

/* A motion kernel and its values' maxes into slots slot0 .. (one launch
 * and a reduction a value, as the CUDA launcher queues them; timed in
 * the kernel's row). */
static int rc_dmd_run_max(rc_dmd *g, rc_dmd_kernel k, long count, int slot0)
{
    int j, nval = rc_dmd_kernel_vals(k);
    rc_dmd_count(g, 0);
    for (j = 0; j < nval; ++j) {
        rc_dmd_count(g, 0);
        g->reduces++;
        g->reduce_items += count;
    }
    g->kernel_items[k] += count;
    g->kernel_calls[k]++;
    return RC_DMD_TIMED(g, (int)k,
                        g->ops->run_max(g->ctx, k, &g->v, count, slot0));
}

static int rc_dmd_fetch(rc_dmd *g, double *out, int count)
{
    rc_dmd_count(g, 1);
    g->fetches++;
    return RC_DMD_TIMED(g, RC_DMD_PROF_FETCH,
                        g->ops->fetch(g->ctx, out, count));
}

#define RUN(kern, count)                                                     \
    do {                                                                     \
        if (rc_dmd_run(g, (kern), (count)))                                  \
            return rc_dmd_ops_fail(g, rc_dmd_kernel_name(kern));             \
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
        rc_dmd_copy(g, np, *ptr, (size_t)keep * size) != 0) {
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
    long nc = need + need / 4 + 1024;
    int a;
    if (need <= *cap)
        return 0;
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

/* As rc_dmd_grow_set, and also anew at the size it would grow to when
 * the capacity exceeds that by more than an eighth of `need`: for the
 * candidate arrays at a build (their contents are all rewritten), whose
 * count falls as a lattice melts (at eta = 0.45 from 6 a sphere to 4.4),
 * so that the pages the first builds wrote are given back (the CPU
 * launcher's arrays are mmap'ed; 16 bytes a candidate).  The margin
 * keeps a count that wanders from reallocating at every build. */
static int rc_dmd_fit_set(rc_dmd *g, long need, long *cap, void **ptrs[],
                          const size_t *sizes, int count)
{
    long nc = need + need / 4 + 1024;
    if (*cap > nc + need / 8) {
        int a;
        for (a = 0; a < count; ++a) {
            g->ops->release(g->ctx, *ptrs[a]);
            *ptrs[a] = NULL;
        }
        *cap = 0;
    }
    return rc_dmd_grow_set(g, need, cap, ptrs, sizes, count);
}

static int rc_dmd_put_long(rc_dmd *g, long *dst, long x)
{
    return rc_dmd_put(g, dst, &x, sizeof x);
}

/* The profile's table (RICOCHET_PROFILE_KERNELS), largest first. */
static void rc_dmd_profile_report(const rc_dmd *g)
{
    static const char *const other[] = {"(scans)", "(sorts)",
                                        "(reductions)", "(fetches)",
                                        "(memory)"};
    int row[RC_DMD_PROF_ROWS], nr = 0, a, b;
    double all = 0.0;
    for (a = 0; a < RC_DMD_PROF_ROWS; ++a)
        if (g->prof_seconds[a] > 0.0) {
            all += g->prof_seconds[a];
            for (b = nr++; b > 0 && g->prof_seconds[row[b - 1]] <
                                        g->prof_seconds[a]; --b)
                row[b] = row[b - 1];
            row[b] = a;
        }
    fprintf(stderr,
            "ricochet: launcher calls timed (%s launcher), %.3f s in all\n"
            "  %-18s %10s %14s %10s %6s\n",
            g->ops ? g->ops->name : "?", all, "call", "calls", "items",
            "seconds", "share");
    if (!(all > 0.0))
        return;
    for (a = 0; a < nr; ++a) {
        int k = row[a];
        if (k < RC_DMD_NKERNELS)
            fprintf(stderr, "  %-18s %10ld %14ld %10.4f %5.1f%%\n",
                    rc_dmd_kernel_name((rc_dmd_kernel)k), g->kernel_calls[k],
                    g->kernel_items[k], g->prof_seconds[k],
                    100.0 * g->prof_seconds[k] / all);
        else
            fprintf(stderr, "  %-18s %10s %14s %10.4f %5.1f%%\n",
                    other[k - RC_DMD_NKERNELS], "", "", g->prof_seconds[k],
                    100.0 * g->prof_seconds[k] / all);
    }
}

void rc_dmd_free(rc_dmd *g)
{
    rc_k_md *v = &g->v;
    size_t a;
    if (g->profile)
        rc_dmd_profile_report(g);
    /* the arrays g shares with md (rc_dmd_init) are md's to free; cell_cur,
     * cell_q, near_key and flag are red's (rc_dmd_candidates,
     * rc_dmd_flag_room);
     * md's q and image, when
     * lent, go with
     * p_save */
    if (g->lent && g->md) {
        g->md->q = NULL;
        g->md->image = NULL;
        g->md->state_lent = 0;
    }
    if (g->alias)
        v->p = v->mass = v->inv_mass = v->radius = NULL;
    if (v->near == (int *)v->qbuild) /* a failed build's, qbuild's */
        v->near = NULL;
    void *arrays[] = {v->mass,     v->ref,      v->toff,     v->tcur,
                      v->dxs,
                      v->pair_c1,  v->pair_en,  v->pair_vir, v->tlist,
                      v->grad1 != v->grad ? v->grad1 : NULL,
                      v->q,        v->p,        v->qp,       v->grad,
                      v->inv_mass, v->radius,   v->qbuild,   v->image,
                      v->touched,  v->wall_in,  v->red,      g->own_cell_of,
                      g->own_cell_start, g->own_cell_idx, g->own_pair_off,
                      v->cand_i,   v->cand_j,
                      v->cand_m,   v->near,     v->near_count, v->reach,
                      v->pred_t,   v->nb_pos,   v->nb_end,
                      v->con,      v->parent,   v->key,      v->order,
                      v->head,     v->istart,   v->woff,     v->work,
                      v->cwork,    v->iwork,    v->isl_fail, v->isl_passes,
                      v->ev_head,  v->eoff,     v->ev,       v->p_kept,
                      v->close_cnt, v->close_key, v->close_val,
                      g->p_save};
    if (g->ops) {
        for (a = 0; a < sizeof arrays / sizeof arrays[0]; ++a)
            if (arrays[a])
                g->ops->release(g->ctx, arrays[a]);
        g->ops->destroy(g->ctx);
    }
    free(g->h_fail);
    free(g->h_passes);
    free(g->h_istart);
    free(g->h_con);
    free(g->h_order);
    free(g->h_p);
    free(g->h_qp);
    free(g->h_dxs);
    free(g->h_touched);
    memset(g, 0, sizeof *g);
}

static rc_status rc_dmd_candidates(rc_dmd *g, double dstep, double moved,
                                   int force, int *rebuilt);
static void rc_dmd_release_steps(rc_dmd *g);

/* grad V at the start: the uniform field (rc_md_init's), plus the pair
 * potential's part by the step's own kernels (candidates, pair terms and
 * the per-sphere gather at q^p = q), with its energy and virial. */
static rc_status rc_dmd_prepare(rc_dmd *g)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    size_t N = (size_t)md->n * (size_t)md->dim;
    double r[2] = {0.0, 0.0};
    double *tmp;
    int rebuilt;
    rc_status st;
    md->epot_pair = md->virial_force = 0.0;
    if (!v->has_pair) /* the uniform field: rc_k_md_grad */
        return RC_OK;
    OP(rc_dmd_put(g, v->grad, md->grad, sizeof(double) * N),
       "copying forces in");
    if ((st = rc_dmd_candidates(g, 0.0, -1.0, 1, &rebuilt)) != RC_OK)
        return st;
    OP(rc_dmd_copy(g, v->qp, v->q, sizeof(double) * N), "copying positions");
    if (v->ncand > 0) {
        RUN(RC_DMD_PAIR_TERM, v->ncand);
        OP(rc_dmd_reduce(g, v->pair_en, v->ncand, 0, 0), "pair energy");
        OP(rc_dmd_reduce(g, v->pair_vir, v->ncand, 0, 1), "pair virial");
        OP(rc_dmd_fetch(g, r, 2), "pair energy");
    }
    RUN(RC_DMD_FORCE, v->n);
    tmp = v->grad;
    v->grad = v->grad1;
    v->grad1 = tmp;
    md->epot_pair = r[0];
    md->virial_force = r[1];
    return RC_OK;
}

rc_status rc_dmd_init(rc_dmd *g, rc_md *md, const rc_dmd_ops *ops,
                      void *ctx)
{
    rc_k_md *v = &g->v;
    long n = md->n, N = n * md->dim;
    int k;
    rc_status st;
    memset(g, 0, sizeof *g);
    g->md = md;
    g->ops = ops;
    g->ctx = ctx;
    {
        const char *prof = getenv("RICOCHET_PROFILE_KERNELS");
        g->profile = prof && *prof && strcmp(prof, "0") != 0;
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
    v->exact = md->par.exact;
    for (k = 0; k < md->dim; ++k)
        g->walls |= !md->box.periodic[k];
    v->g_len = sqrt(v->gravity[0] * v->gravity[0] +
                    v->gravity[1] * v->gravity[1] +
                    v->gravity[2] * v->gravity[2]);
    /* impacts closer in time than this are resolved together: round-off
     * in the impact times of a step of length h */
    v->t_tol = 1e-13 * v->h;
    if (v->exact && v->has_pair) {
        snprintf(md->msg, sizeof md->msg,
                 "exact collision times need ballistic spheres: a pair "
                 "potential is present (integrator.collisions: gvi)");
        return RC_ERR_INVALID;
    }
    /* a launcher on host memory works on md's momenta and its constant
     * arrays (masses, radii) in place: one
     * copy of each in the process (rc_dmd_sync and rc_dmd_load then copy
     * an array onto itself, which the CPU launcher skips).  Not q and
     * image: the host's copy is wrapped into the box at every sync, the
     * launcher's only at candidate builds. */
    g->alias = ops->host_memory;
    if (g->alias) {
        v->p = md->p;
        v->mass = md->mass;
        v->inv_mass = md->inv_mass;
        v->radius = md->radius;
    }
    /* red: the largest per-item reduction of every step (the motion's two
     * lanes over the spheres), and the positions by cell of the candidate
     * builds (cell_q, N doubles), which use no reduction; exactly that
     * size (it grows, with room to spare, only for more contacts or
     * candidates) */
    g->cap_red = (N > 2 * n ? N : 2 * n) + 1;
#define ALLOC(field, count, type)                                            \
    (g->v.field || (g->v.field = (type *)ops->alloc(                          \
                        ctx, sizeof(type) * (size_t)(count))))
    if (!ALLOC(q, N + 1, double) || !ALLOC(p, N + 1, double) ||
        !ALLOC(qp, N + 1, double) ||
        /* grad V: arrays for a pair potential; the uniform field alone is
         * computed where it is used (rc_k_md_grad) */
        (md->par.has_pair && !ALLOC(grad, N + 1, double)) ||
        /* the held contacts' shifts: exact collisions hold none */
        (!md->par.exact && !ALLOC(dxs, N + 1, double)) ||
        !ALLOC(inv_mass, n + 1, double) || !ALLOC(radius, n + 1, double) ||
        !ALLOC(mass, n + 1, double) ||
        !ALLOC(qbuild, N + 1, double) || !ALLOC(image, N + 1, int) ||
        !ALLOC(touched, n + 1, unsigned char) ||
        (g->walls && !ALLOC(wall_in, 6 * n + 1, unsigned char)) ||
        !ALLOC(red, g->cap_red, double) ||
        !ALLOC(parent, n + 1, int) ||
        !ALLOC(near_count, RC_K_MD_NEAR + 1, long) ||
        !ALLOC(reach, RC_K_MD_REACH * n + 1, float) ||
        (md->par.has_pair &&
         (!ALLOC(grad1, N + 1, double) || !ALLOC(toff, n + 1, long) ||
          !ALLOC(tcur, n + 1, long))) ||
        (md->par.exact && (!ALLOC(ev_head, n + 1, int) ||
                           !ALLOC(p_kept, n + 1, unsigned char))) ||
        (!md->par.has_pair && !ALLOC(nb_end, n + 1, long)) ||
        /* with host memory also the host's image (below) */
        !(g->p_save = (double *)ops->alloc(
              ctx, (sizeof(double) + (g->alias ? sizeof(int) : 0)) *
                       (size_t)(N + 1)))) {
        st = rc_dmd_ops_fail(g, "memory for the particles");
        goto fail;
    }
#undef ALLOC
    v->p0 = g->p_save;
    if (v->exact && rc_dmd_run(g, RC_DMD_X_LOG_RESET, n)) {
        st = rc_dmd_ops_fail(g, "clearing the impact logs");
        goto fail;
    }
    if (rc_dmd_load(g) != RC_OK ||
        ops->put(ctx, v->inv_mass, md->inv_mass, sizeof(double) * (size_t)n) ||
        ops->put(ctx, v->mass, md->mass, sizeof(double) * (size_t)n) ||
        ops->put(ctx, v->radius, md->radius, sizeof(double) * (size_t)n) ||
        ops->zero(ctx, v->touched, (size_t)n + 1)) {
        st = rc_dmd_ops_fail(g, "copying the state in");
        goto fail;
    }
    {
        /* one radius and one mass for all (a one-component fluid): the
         * screens take them from here, not from two gathers a sphere */
        long i;
        v->uni_radius = n > 0 && md->radius[0] > 0.0 ? md->radius[0] : 0.0;
        v->uni_inv_mass =
            n > 0 && md->inv_mass[0] > 0.0 ? md->inv_mass[0] : 0.0;
        v->uni_mass = n > 0 && md->mass[0] > 0.0 ? md->mass[0] : 0.0;
        for (i = 1; i < n; ++i) {
            if (md->radius[i] != v->uni_radius)
                v->uni_radius = 0.0;
            if (md->inv_mass[i] != v->uni_inv_mass)
                v->uni_inv_mass = 0.0;
            if (md->mass[i] != v->uni_mass)
                v->uni_mass = 0.0;
        }
    }
    if ((st = rc_dmd_prepare(g)) != RC_OK)
        goto fail;
    /* without a pair potential md's grad V (the uniform field) is not
     * read again: the kernels compute it (rc_k_md_grad) */
    if (!md->par.has_pair) {
        free(md->grad);
        md->grad = NULL;
    }
    /* on host memory the host's copy of the state (wrapped q and its
     * image, for outputs) needs no arrays of its own: between steps it
     * lives in p_save's block, which a step uses only while it runs
     * (the momenta of its start); md's arrays go */
    if (g->alias) {
        int *img = (int *)(g->p_save + N + 1);
        memcpy(g->p_save, md->q, sizeof(double) * (size_t)N);
        memcpy(img, md->image, sizeof(int) * (size_t)N);
        if (!md->state_lent) {
            free(md->q);
            free(md->image);
        }
        md->q = g->p_save;
        md->image = img;
        md->state_lent = 1;
        g->lent = 1;
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

rc_status rc_dmd_init_cpu(rc_dmd *g, rc_md *md)
{
    const rc_dmd_ops *ops;
    void *ctx;
    memset(g, 0, sizeof *g);
    if (rc_dmd_cpu_launcher(&ops, &ctx) != RC_OK) {
        snprintf(md->msg, sizeof md->msg, "out of memory for the launcher");
        return RC_ERR_NOMEM;
    }
    rc_dmd_cpu_threads(ctx, md->par.threads);
    return rc_dmd_init(g, md, ops, ctx);
}

rc_status rc_dmd_sync(rc_dmd *g)
{
    rc_md *md = g->md;
    size_t N = (size_t)md->n * (size_t)md->dim;
    int i;
    if (rc_dmd_get(g, md->q, g->v.q, sizeof(double) * N) ||
        rc_dmd_get(g, md->p, g->v.p, sizeof(double) * N) ||
        rc_dmd_get(g, md->image, g->v.image, sizeof(int) * N))
        return rc_dmd_ops_fail(g, "copying the state out");
    /* the launcher wraps positions only at candidate builds: the host's
     * copy into the box (the unwrapped positions q + image L unchanged) */
    for (i = 0; i < md->n; ++i)
        rc_k_box_wrap(&md->box, md->q + (size_t)i * md->dim,
                      md->image + (size_t)i * md->dim);
    return RC_OK;
}

rc_status rc_dmd_load(rc_dmd *g)
{
    rc_md *md = g->md;
    size_t N = (size_t)md->n * (size_t)md->dim;
    if (rc_dmd_put(g, g->v.q, md->q, sizeof(double) * N) ||
        rc_dmd_put(g, g->v.p, md->p, sizeof(double) * N) ||
        rc_dmd_put(g, g->v.image, md->image, sizeof(int) * N))
        return rc_dmd_ops_fail(g, "copying the state in");
    /* the candidates' image shifts describe the old positions */
    g->have_cand = 0;
    return RC_OK;
}

double rc_dmd_bytes(const rc_dmd *g)
{
    const rc_k_md *v = &g->v;
    double n = g->md ? g->md->n : 0, N = g->md ? n * g->md->dim : 0;
    /* the arrays rc_dmd_init allocated: q, qp, qbuild, p_save; dxs
     * (without exact collisions); p unless it is md's (g->alias); grad
     * and grad1 (pairs); ref (MSD) */
    double b = N * sizeof(double) *
               (4.0 + (v->exact ? 0 : 1) + (g->alias ? 0 : 1) +
                (v->has_pair ? 2 : 0) + (v->ref ? 1 : 0));
    b += N * sizeof(int) * (g->lent ? 2 : 1); /* image; md's (lent) */
    /* inv_mass, radius, mass unless md's; touched; wall_in (walls);
     * parent; reach; cell_of, cell_idx and pair_off unless in qbuild */
    b += n * ((g->alias ? 0 : 3.0 * sizeof(double)) + 1 + (g->walls ? 6 : 0) +
              sizeof(int) + RC_K_MD_REACH * sizeof(float) +
              (g->own_cell_of ? 2.0 * sizeof(int) + sizeof(long) : 0.0));
    if (v->has_pair) /* toff, tcur; pair_c1, pair_en, pair_vir, tlist */
        b += n * 2.0 * sizeof(long) +
             (double)g->cap_pair * (3.0 * sizeof(double) + sizeof(int));
    b += (double)g->cap_cell * sizeof(long); /* cell_start (cell_cur: red) */
    /* cand_i, cand_j, near (with a pair potential; near_key is red's);
     * cand_m with the marks */
    b += (double)g->cap_cand * ((v->has_pair ? 3.0 : 2.0) * sizeof(int) + 1);
    /* exact collisions: the predictions (pred_t); without a pair
     * potential each sphere's candidates (nb_pos, two ints a candidate;
     * nb_end) */
    b += (double)g->cap_pred * sizeof(float) +
         (double)g->cap_nb * 2 * sizeof(int) +
         (v->has_pair ? 0.0 : n * sizeof(long));
    b += (double)g->cap_con * sizeof(rc_k_md_contact);
    /* the closing rounds' list: close_cnt; close_key, close_val */
    b += (double)g->cap_close_cnt * sizeof(long) +
         (double)g->cap_close * 2.0 * sizeof(int);
    /* key, order, isl_fail, isl_passes; head, istart, woff; iwork (3
     * ints); cwork (3 doubles) */
    b += (double)g->cap_isl *
         (4.0 * sizeof(int) + 3.0 * sizeof(long) + 3 * sizeof(int) +
          3 * sizeof(double));
    /* work; red, which holds cell_q and near_key during the candidate
     * builds and the contact flags during the screens */
    b += (double)(g->cap_work + g->cap_red) * sizeof(double);
    if (v->exact) /* ev_head, p_kept; the impact logs; eoff */
        b += n * (sizeof(int) + 1) +
             (double)g->cap_ev * sizeof(rc_k_md_event) +
             (double)g->cap_isl * sizeof(long);
    return b;
}

rc_status rc_dmd_set_ref(rc_dmd *g, const double *ref)
{
    size_t N = (size_t)g->md->n * (size_t)g->md->dim;
    if (!g->v.ref &&
        !(g->v.ref = (double *)g->ops->alloc(g->ctx, sizeof(double) * (N + 1))))
        return rc_dmd_ops_fail(g, "memory for reference positions");
    if (rc_dmd_put(g, g->v.ref, ref, sizeof(double) * N))
        return rc_dmd_ops_fail(g, "copying reference positions in");
    return RC_OK;
}

double *rc_dmd_idle(rc_dmd *g, long *count)
{
    *count = g->alias ? g->cap_red : 0;
    return g->alias ? g->v.red : NULL;
}

rc_status rc_dmd_set_ref_state(rc_dmd *g)
{
    rc_md *md = g->md;
    size_t N = (size_t)md->n * (size_t)md->dim;
    double *ref;
    rc_status st;
    if (!g->v.ref &&
        !(g->v.ref = (double *)g->ops->alloc(g->ctx, sizeof(double) * (N + 1))))
        return rc_dmd_ops_fail(g, "memory for reference positions");
    if (g->alias) {
        /* in place; the put (a copy onto itself, skipped) keeps the
         * launcher's counters those of a launcher with its own memory */
        rc_md_unwrapped(md, g->v.ref);
        return rc_dmd_put(g, g->v.ref, g->v.ref, sizeof(double) * N)
                   ? rc_dmd_ops_fail(g, "copying reference positions in")
                   : RC_OK;
    }
    if (!(ref = (double *)malloc(sizeof(double) * (N + 1))))
        return rc_dmd_fail(g, RC_ERR_NOMEM,
                           "out of memory for reference positions");
    rc_md_unwrapped(md, ref);
    st = rc_dmd_set_ref(g, ref);
    free(ref);
    return st;
}

rc_status rc_dmd_get_ref(rc_dmd *g, const double **ref, double **buf)
{
    size_t N = (size_t)g->md->n * (size_t)g->md->dim;
    *ref = NULL;
    *buf = NULL;
    if (!g->v.ref)
        return RC_OK;
    if (g->alias) {
        *ref = g->v.ref;
        return RC_OK;
    }
    if (!(*buf = (double *)malloc(sizeof(double) * (N + 1))))
        return rc_dmd_fail(g, RC_ERR_NOMEM,
                           "out of memory for the checkpoint");
    if (g->ops->get(g->ctx, *buf, g->v.ref, sizeof(double) * N) != 0)
        return rc_dmd_ops_fail(g, "copying reference positions out");
    *ref = *buf;
    return RC_OK;
}

/* The observables: terms whats[0 .. nw) of every particle, summed into
 * slots 0 .. nw - 1 (rc_k_md_obs_sum's association on the host). */
static rc_status rc_dmd_obs_sums(rc_dmd *g, const int *whats, int nw)
{
    int w;
    /* counted as the observe kernel and a sum a term (the CUDA
     * launcher's calls), timed in the kernel's row */
    for (w = 0; w < nw; ++w) {
        rc_dmd_count(g, 0);
        rc_dmd_count(g, 0);
        g->reduces++;
        g->reduce_items += g->v.n;
    }
    g->kernel_items[RC_DMD_OBSERVE] += (long)nw * g->v.n;
    g->kernel_calls[RC_DMD_OBSERVE] += nw;
    OP(RC_DMD_TIMED(g, (int)RC_DMD_OBSERVE,
                    g->ops->obs_sums(g->ctx, &g->v, whats, nw, 0)),
       "observable sums");
    return RC_OK;
}

/* The largest displacement since the candidate list was built, in a
 * round trip of its own: only the observables need it alone (a step reads
 * it with the predictor's, rc_dmd_motion). */
static rc_status rc_dmd_moved(rc_dmd *g, double *moved)
{
    double m2;
    RUN(RC_DMD_MOVED, g->v.n);
    OP(rc_dmd_reduce(g, g->v.red, g->v.n, 1, 0) || rc_dmd_fetch(g, &m2, 1),
       "displacement");
    *moved = sqrt(m2);
    return RC_OK;
}

rc_status rc_dmd_observe(rc_dmd *g, double *kin, double *pot, double mom[3],
                         double *msd, double *overlap)
{
    rc_k_md *v = &g->v;
    rc_status st;
    double r[9] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, moved = 0.0;
    int k, rebuilt, nslot = 5;
    rc_dmd_release_steps(g); /* between steps: A is the last step's */
    /* every overlapping pair is a candidate while the spheres have moved
     * less than half the skin since the build (rebuilt if not) */
    if (overlap) {
        if (g->have_cand && (st = rc_dmd_moved(g, &moved)) != RC_OK)
            return st;
        if ((st = rc_dmd_candidates(g, 0.0, g->have_cand ? moved : -1.0, 0,
                                    &rebuilt)) != RC_OK)
            return st;
        if (rebuilt)
            moved = 0.0;
        /* and only a pair whose gap at the build the motion since can
         * have closed may overlap: the buckets up to 2 moved (+ eps_g at
         * each end, the first scan's margin), a prefix of the bucket
         * order (rc_dmd_extend's bound without the step) */
        v->over_n = v->ncand;
        if (v->ncand > 0 && !g->screen_all &&
            2.0 * moved + 2.0 * g->md->eps_g < (RC_K_MD_NEAR - 1) * v->near_w)
            v->over_n = g->near_start[(long)((2.0 * moved +
                                              2.0 * g->md->eps_g) /
                                             v->near_w) +
                                      1];
    }
    {
        /* slots 0-5: kinetic and potential energy, momentum, the mean
         * squared displacement */
        static const int whats[6] = {RC_K_MD_OBS_KE,     RC_K_MD_OBS_POT,
                                     RC_K_MD_OBS_P0,     RC_K_MD_OBS_P0 + 1,
                                     RC_K_MD_OBS_P0 + 2, RC_K_MD_OBS_MSD};
        if (msd && v->ref && v->n > 0)
            nslot = 6;
        if ((st = rc_dmd_obs_sums(g, whats, nslot)) != RC_OK)
            return st;
    }
    if (overlap) {
        if (v->over_n > 0) {
            /* per sphere: red's n slots (rc_k_md_overlap_pair) */
            RUN(RC_DMD_OVERLAP_PAIR, v->n);
            OP(rc_dmd_reduce(g, v->red, v->n, 1, 6), "overlap");
        }
        RUN(RC_DMD_OVERLAP_WALL, v->n);
        OP(rc_dmd_reduce(g, v->red, v->n, 1, 7), "wall overlap");
        nslot = 8;
    }
    OP(rc_dmd_fetch(g, r, nslot), "observables");
    if (!(overlap && v->over_n > 0))
        r[6] = 0.0; /* slot 6 not written this time */
    *kin = r[0];
    *pot = r[1] + g->md->epot_pair;
    for (k = 0; k < 3; ++k)
        mom[k] = r[2 + k];
    if (msd)
        *msd = v->ref && v->n > 0 ? r[5] / v->n : 0.0;
    if (overlap)
        *overlap = r[6] > r[7] ? r[6] : r[7];
    return RC_OK;
}

/* ------------------------------------------------------------------ */

/* The failure of a step whose state became non-finite: bad is
 * rc_k_md_bad's largest, n - the first bad particle. */
static rc_status rc_dmd_nonfinite(rc_dmd *g, double bad)
{
    rc_md *md = g->md;
    return rc_dmd_fail(g, RC_ERR_NONFINITE,
                       "state became non-finite at step %ld (t = %g), "
                       "first at particle %ld",
                       md->steps + 1, md->time + md->par.dt,
                       (long)g->v.n - (long)bad);
}

/* The step's motion in one round trip: the predictor q^p from p (as
 * rc_md_predict) and its largest displacement, and, when there are
 * candidates, the largest displacement since their build (*moved; -1
 * without candidates). */
static rc_status rc_dmd_motion(rc_dmd *g, double *dmax, double *moved)
{
    double m2[2] = {0.0, 0.0};
    int two = g->have_cand;
    rc_dmd_kernel k;
    if (two) {
        /* one pass: the predictor (exact collisions: the bound of the
         * whole flight) into slot 0, the displacement since the build
         * into slot 1; the spheres' reaches unless the first
         * scan has predictions, which read none (a build that drops them
         * sets the flights' reaches: rc_dmd_candidates) */
        g->v.reach_set = !g->v.exact || !g->v.pred_t;
        k = g->v.exact ? RC_DMD_X_MOTION : RC_DMD_MOTION;
    } else {
        /* exact collisions bound the whole flight, not its end point */
        g->v.reach_set = 1;
        k = g->v.exact ? RC_DMD_X_PREDICT : RC_DMD_PREDICT;
    }
    /* the kernel with its values' maxes (the CPU launcher in one pass,
     * writing no red) */
    if (rc_dmd_run_max(g, k, g->v.n, 0) != 0) {
        g->v.save_p = 0;
        return rc_dmd_ops_fail(g, rc_dmd_kernel_name(k));
    }
    g->v.save_p = 0;
    OP(rc_dmd_fetch(g, m2, two ? 2 : 1), "the step's motion");
    if (!(m2[0] < (double)INFINITY)) {
        /* a sphere's q^p or p may not be finite (rc_k_md_max_guard):
         * which is the first such sphere (none where a finite square
         * overflowed) */
        double bad = 0.0;
        RUN(RC_DMD_FINITE, g->v.n);
        OP(rc_dmd_reduce(g, g->v.red, g->v.n, 1, 0) ||
               rc_dmd_fetch(g, &bad, 1),
           "finiteness");
        if (bad > 0.0)
            return rc_dmd_nonfinite(g, bad);
    }
    g->v.reach_fresh = 0; /* the reaches' displacements are since the
                             build the step starts with, unless one
                             follows (rc_dmd_candidates) */
    *dmax = sqrt(m2[0]); /* sqrt is monotone: the max of the roots */
    *moved = two ? sqrt(m2[1]) : -1.0;
    g->move_step = *dmax;
    g->move_build = two ? *moved : 0.0;
    g->held_shift = 0.0;
    return RC_OK;
}

/* After an island round (kernel k: PREDICT_ISL, the predictor of the
 * islands' spheres anew after their reflections, or HELD_ISL, the
 * position update's shifts), the largest squared displacement among the
 * islands' spheres, in one round trip: only they moved.  Returns its
 * root. */
static rc_status rc_dmd_island_motion(rc_dmd *g, rc_dmd_kernel k,
                                      double *dmax)
{
    rc_k_md *v = &g->v;
    double m2 = 0.0;
    if (v->nisl > 0) {
        RUN(k, v->nisl);
        OP(rc_dmd_reduce(g, v->red, v->nisl, 1, 0) || rc_dmd_fetch(g, &m2, 1),
           "the islands' motion");
    }
    *dmax = sqrt(m2);
    return RC_OK;
}

/* Candidate pairs, as rc_md_candidates: rebuilt when the spheres could
 * have used up the skin.  moved: their largest displacement since the
 * build, or < 0 to measure it here. */
/* On a launcher on host memory, between steps or at a step's start
 * (A then holds nothing the next step reads: it starts empty): the
 * islands' scratch and the impact logs given back, so that a candidate
 * build (the search's pairs beside the new list) and g(r)'s sample do
 * not have their pages beside them at the run's peak; the step's first
 * island round allocates them anew for what it uses.  The contacts
 * stay: A grows keeping its contents, and regrown every step its copies
 * stood beside the new arrays. */
static void rc_dmd_release_steps(rc_dmd *g)
{
    rc_k_md *v = &g->v;
    void **isl[] = {(void **)&v->key,
                    (void **)&v->order,    (void **)&v->head,
                    (void **)&v->istart,   (void **)&v->woff,
                    (void **)&v->isl_fail, (void **)&v->isl_passes,
                    (void **)&v->iwork,    (void **)&v->cwork,
                    (void **)&v->eoff,     (void **)&v->work,
                    (void **)&v->ev};
    size_t a;
    if (!g->ops->host_memory)
        return;
    for (a = 0; a < sizeof isl / sizeof isl[0]; ++a) {
        g->ops->release(g->ctx, *isl[a]);
        *isl[a] = NULL;
    }
    g->cap_isl = g->cap_work = g->cap_ev = 0;
    g->ev_next = v->ev_base = 0;
    v->ncon = 0;
    v->nisl = 0;
    g->isl_current = 0;
}

static rc_status rc_dmd_candidates(rc_dmd *g, double dstep, double moved,
                                   int force, int *rebuilt)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    double cut, t0;
    long ncell, total;
    int predict = 0, keep_pred;
    *rebuilt = 0;
    if (g->have_cand && !force) {
        if (moved < 0.0) {
            rc_status st = rc_dmd_moved(g, &moved);
            if (st != RC_OK)
                return st;
        }
        if (2.0 * (moved + dstep) + 2.0 * md->eps_g < g->cand_skin) {
            /* A starts empty: the candidates' marks cleared */
            RUN(RC_DMD_UNMARK, v->ncand);
            return RC_OK;
        }
    }
    if (g->restore_cut > 0.0) {
        cut = g->restore_cut; /* a restart rebuilds the checkpoint's list */
    } else {
        rc_status st = rc_md_candidate_cut(md, dstep, &cut);
        if (st != RC_OK)
            return st;
    }
    g->cand_cut = cut;
    t0 = rc_now();
    /* a build that failed may have left its bucket order's array (near,
     * without a pair potential a build's alone) */
    if (!v->has_pair && v->near) {
        if (v->near != (int *)v->qbuild)
            g->ops->release(g->ctx, v->near);
        v->near = NULL;
    }
    g->have_cand = 0; /* until this build is through */
    if (g->ops->host_memory && g->cap_cand > 0) {
        /* the old list's pages back before the pair search: nothing reads
         * it from here on, and resident it stood beside the search's
         * pairs (the CPU launcher's) at the build, the run's peak; the
         * new arrays are fresh pages, resident as the build writes them */
        void *old[6];
        int a;
        old[0] = v->cand_i, old[1] = v->cand_j, old[2] = v->cand_m,
        old[3] = v->near, old[4] = v->pred_t, old[5] = v->nb_pos;
        for (a = 0; a < 6; ++a)
            g->ops->release(g->ctx, old[a]);
        v->cand_i = v->cand_j = v->near = v->nb_pos = NULL;
        v->cand_m = NULL;
        v->pred_t = NULL;
        v->ncand = 0;
        g->cap_cand = g->cap_pred = g->cap_nb = 0;
        g->have_cand = 0;
    }
    if (v->ncon == 0) /* a step's start */
        rc_dmd_release_steps(g);
    /* positions into the box (the only place they are wrapped: the
     * candidates' image shifts hold until the next build) */
    RUN(RC_DMD_WRAP, v->n);
    /* the cell grid for the cutoff (rc_cells_grid, as the host's) */
    if (rc_cells_grid(&md->box, cut * (1.0 + 1e-12), v->nc, v->edge,
                      &ncell) != 0)
        return rc_dmd_fail(g, RC_ERR_INVALID,
                           "no cell grid for cutoff %g", cut);
    v->ncell = (int)ncell;
    v->cut2 = cut * cut;
    rc_k_pair_limits(&md->box, v->lim);
    /* the cell list and the pair offsets: without a pair potential a
     * build's alone, in qbuild (idle from the decision to rebuild to the
     * snapshot) when they fit (ncell up to about n in 3-D), else arrays
     * of their own, kept (the force gather reads pair_off) */
    if (!v->has_pair &&
        sizeof(long) * (size_t)(ncell + v->n + 2) +
                2 * sizeof(int) * (size_t)v->n <=
            sizeof(double) * (size_t)v->n * (size_t)v->dim) {
        char *s = (char *)v->qbuild;
        v->cell_start = (long *)s;
        s += sizeof(long) * (size_t)(ncell + 1);
        v->pair_off = (long *)s;
        s += sizeof(long) * (size_t)(v->n + 1);
        v->cell_of = (int *)s;
        v->cell_idx = v->cell_of + v->n;
    } else {
        size_t n1 = (size_t)v->n + 1;
        if (rc_dmd_grow(g, (void **)&g->own_cell_start, &g->cap_cell,
                        ncell + 1, sizeof(long), 0) ||
            (!g->own_pair_off &&
             !(g->own_pair_off =
                   (long *)g->ops->alloc(g->ctx, sizeof(long) * n1))) ||
            (!g->own_cell_of &&
             !(g->own_cell_of =
                   (int *)g->ops->alloc(g->ctx, sizeof(int) * n1))) ||
            (!g->own_cell_idx &&
             !(g->own_cell_idx =
                   (int *)g->ops->alloc(g->ctx, sizeof(int) * n1))))
            return rc_dmd_ops_fail(g, "memory for cells");
        v->cell_start = g->own_cell_start;
        v->pair_off = g->own_pair_off;
        v->cell_of = g->own_cell_of;
        v->cell_idx = g->own_cell_idx;
    }
    /* the fill cursors in red, idle until cell_q (a long a double) */
    if (rc_dmd_grow(g, (void **)&v->red, &g->cap_red, ncell + 1,
                    sizeof(double), 0))
        return rc_dmd_ops_fail(g, "memory for cells");
    v->cell_cur = (long *)v->red;
    OP(rc_dmd_zero(g, v->cell_start, sizeof(long) * (size_t)(ncell + 1)),
       "clearing cells");
    RUN(RC_DMD_CELL_COUNT, v->n);
    OP(rc_dmd_scan(g, v->cell_start, ncell, &total), "cell scan");
    OP(rc_dmd_copy(g, v->cell_cur, v->cell_start,
                   sizeof(long) * (size_t)ncell),
       "cell cursors");
    RUN(RC_DMD_CELL_FILL, v->n);
    /* the positions by cell in red, which no kernel of the build reduces
     * (rc_dmd_init sized it): read only by the pair search below */
    v->cell_q = v->red;
    v->cell_cur = NULL;
    RUN(RC_DMD_CELL_POS, v->n);
    RUN(RC_DMD_PAIR_COUNT, v->n);
    OP(rc_dmd_scan(g, v->pair_off, v->n, &total), "pair scan");
    {
        /* near, the bucket order's index, only with a pair potential (the
         * list then keeps the (i, j) order the force gather reads) */
        void **ptrs[4];
        size_t sizes[4] = {sizeof(int), sizeof(int), 1, sizeof(int)};
        ptrs[0] = (void **)&v->cand_i;
        ptrs[1] = (void **)&v->cand_j;
        ptrs[2] = (void **)&v->cand_m;
        ptrs[3] = (void **)&v->near;
        if (rc_dmd_fit_set(g, total + 1, &g->cap_cand, ptrs, sizes,
                           v->has_pair ? 4 : 3))
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
        if (rc_dmd_fit_set(g, total + 1, &g->cap_pair, ptrs, sizes, 4))
            return rc_dmd_ops_fail(g, "memory for pair terms");
    }
    v->ncand = total;
    RUN(RC_DMD_PAIR_WRITE, v->n);
    if (v->has_pair) {
        /* each sphere's pairs as the larger index, for the force gather */
        long tt;
        OP(rc_dmd_zero(g, v->toff, sizeof(long) * (size_t)(v->n + 1)),
           "clearing the transposed list");
        RUN(RC_DMD_TCOUNT, total);
        OP(rc_dmd_scan(g, v->toff, v->n, &tt), "transposed scan");
        OP(rc_dmd_copy(g, v->tcur, v->toff, sizeof(long) * (size_t)v->n),
           "transposed cursors");
        RUN(RC_DMD_TFILL, total);
        RUN(RC_DMD_TSORT, v->n);
    }
    /* the candidates by their gap now (rc_k_md_cand_info), so that a step
     * screens only those its motion can close (rc_dmd_extend) */
    v->near_w = md->par.skin / (RC_K_MD_NEAR - 1);
    /* their buckets, sort keys read by nothing after the sort, in red:
     * idle from here to the build's end (cell_q was the pair search's
     * alone), and as many ints as candidates for a fluid of up to 6 a
     * sphere without growing */
    if (rc_dmd_grow(g, (void **)&v->red, &g->cap_red, (total + 1) / 2,
                    sizeof(double), 0))
        return rc_dmd_ops_fail(g, "memory for the candidates' buckets");
    v->cell_q = NULL;
    v->near_key = (int *)v->red;
    if (v->cell_of != g->own_cell_of) /* qbuild's, which near takes now */
        v->cell_start = v->pair_off = NULL, v->cell_of = v->cell_idx = NULL;
    if (!v->has_pair) {
        /* the sort's index array, a build's alone: in qbuild, idle from
         * the decision to rebuild to the snapshot below (2 dim ints a
         * sphere: a fluid up to 6 candidates a sphere in 3-D), else an
         * array of its own for the build */
        if (total <= 2L * v->n * v->dim)
            v->near = (int *)v->qbuild;
        else if (!(v->near = (int *)g->ops->alloc(
                       g->ctx, sizeof(int) * (size_t)(total + 1))))
            return rc_dmd_ops_fail(g, "memory for the candidates' order");
    }
    /* Exact collisions keep the first scan's predictions while the list
     * is expected to live at least about six steps (the skin at least 12
     * times the step's largest displacement): each build then predicts
     * every pair, which a list
     * rebuilt every two or three steps does not repay (32 000 spheres
     * from the lattice, dt = 0.01, a build every 2.6 steps: 1.07-1.08 s
     * with them against 0.97-1.00 s without; 256 000 molten, dt = 0.002,
     * one every 6.7: 3.36-3.39 against 3.60).  Either way the same bits:
     * without them the spheres' reaches rule pairs out
     * (rc_k_md_out_of_reach). */
    keep_pred = v->exact && md->par.skin >= 12.0 * g->move_step;
    if (g->restore_cut > 0.0 && g->restore_pred >= 0)
        keep_pred = v->exact && g->restore_pred; /* as the run had it */
    else if (g->pred_alternate)
        keep_pred = v->exact && g->rebuilds % 2 == 0;
    if (!keep_pred && v->pred_t) {
        g->ops->release(g->ctx, v->pred_t);
        v->pred_t = NULL;
        g->cap_pred = 0;
    }
    if (!v->has_pair) {
        /* each sphere's candidates (rc_k_md_nb_count), for the closing
         * rounds' list (rc_dmd_close) and for forgetting predictions */
        void **ptrs[1] = {(void **)&v->nb_pos};
        size_t sizes[1] = {2 * sizeof(int)};
        if (rc_dmd_fit_set(g, total + 1, &g->cap_nb, ptrs, sizes, 1))
            return rc_dmd_ops_fail(g, "memory for the spheres' candidates");
    }
    if (keep_pred) {
        /* the predictions: times from this build; made here along with
         * the list, in its (i, j) order (the first scan's tests go in the
         * bucket order, a sphere's state a cache miss), when the build is
         * at a step's start with the state it starts from (not within a
         * step, where momenta are the islands', or a restart's, whose
         * state comes after) */
        void **ptrs[1] = {(void **)&v->pred_t};
        size_t sizes[1] = {sizeof(float)};
        if (rc_dmd_fit_set(g, total + 1, &g->cap_pred, ptrs, sizes, 1))
            return rc_dmd_ops_fail(g, "memory for the pairs' predictions");
        predict = !force && g->restore_cut <= 0.0 && total > 0;
        if (!predict)
            OP(rc_dmd_zero(g, v->pred_t, sizeof(float) * (size_t)(total + 1)),
               "clearing the predictions");
        g->ptime_next = 0.0;
    }
    if (predict)
        RUN(RC_DMD_X_CAND_INFO_PRED, total); /* with the info */
    else
        RUN(RC_DMD_CAND_INFO, total);
    OP(total > 0 && rc_dmd_sort(g, v->near_key, v->near, total,
                                RC_K_MD_NEAR_BITS),
       "sorting candidates by gap");
    /* the buckets' starts from the sorted keys (all 0 without
     * candidates) */
    if (total > 0)
        RUN(RC_DMD_NEAR_STARTS, total);
    else
        OP(rc_dmd_zero(g, v->near_count, sizeof(long) * (RC_K_MD_NEAR + 1)),
           "clearing buckets");
    OP(rc_dmd_get(g, g->near_start, v->near_count,
                  sizeof(long) * (RC_K_MD_NEAR + 1)),
       "bucket starts");
    if (!v->has_pair) {
        /* the list permuted into the bucket order, through red (the
         * sorted keys are read by nothing; it holds total ints): the
         * screens then read it in order, with no index array of 4 bytes a
         * candidate beside it (rc_k_md_screened) */
        if (total > 0) {
            RUN(RC_DMD_GATHER_I, total);
            OP(rc_dmd_copy(g, v->cand_i, v->red, sizeof(int) * (size_t)total),
               "ordering candidates");
            RUN(RC_DMD_GATHER_J, total);
            OP(rc_dmd_copy(g, v->cand_j, v->red, sizeof(int) * (size_t)total),
               "ordering candidates");
            RUN(RC_DMD_GATHER_M, total);
            OP(rc_dmd_copy(g, v->cand_m, v->red, (size_t)total),
               "ordering candidates");
            if (predict) {
                RUN(RC_DMD_GATHER_P, total);
                OP(rc_dmd_copy(g, v->pred_t, v->red,
                               sizeof(float) * (size_t)total),
                   "ordering candidates");
            }
        }
        if (v->near != (int *)v->qbuild)
            g->ops->release(g->ctx, v->near);
        v->near = NULL;
    }
    v->near_key = NULL;
    if (v->nb_pos) {
        /* each sphere's candidates (none without candidates: the walls'
         * contacts of A forget nothing) */
        long nb;
        OP(rc_dmd_zero(g, v->nb_end, sizeof(long) * (size_t)(v->n + 1)),
           "clearing the spheres' candidates");
        if (total > 0) {
            RUN(RC_DMD_NB_COUNT, total);
            OP(rc_dmd_scan(g, v->nb_end, v->n, &nb),
               "the spheres' candidates' scan");
            RUN(RC_DMD_NB_FILL, total);
        }
    }
    RUN(RC_DMD_SNAPSHOT, v->n);
    if (v->exact && !v->pred_t && !v->reach_set) {
        /* the first scan reads the reaches now, which the motion pass
         * left unset */
        RUN(RC_DMD_X_REACH_ONLY, v->n);
        v->reach_set = 1;
    }
    v->reach_fresh = 1; /* no sphere has moved since this build */
    g->move_build = 0.0;
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

/* The flags of `count` items (a byte each) and the selection of the
 * flagged ones (an int each, room for all), in red: no kernel touches
 * red from the screens to the pushes, and nothing reads the flags after
 * them (the reductions that follow overwrite them), so they and the
 * largest other use of red (the pairs' overlaps, cell_q, the buckets)
 * share one capacity.  Five bytes an item: a screen of a step's first
 * scan writes a byte a candidate, where a long a candidate, scanned in
 * place and read again by the pushes, had been a third of the scan's
 * time (256 000 spheres at eta 0.3). */
#define RC_DMD_FLAG_BYTES (sizeof(int) + 1)

/* Items whose flags and selection fit in red as it is. */
static long rc_dmd_flag_fit(const rc_dmd *g)
{
    long bytes = (long)sizeof(double) * (g->cap_red - 1);
    return bytes > 0 ? bytes / (long)RC_DMD_FLAG_BYTES : 0;
}

static int rc_dmd_flag_room(rc_dmd *g, long count)
{
    long need = ((long)RC_DMD_FLAG_BYTES * count + sizeof(double) - 1) /
                    (long)sizeof(double) +
                1;
    if (rc_dmd_grow(g, (void **)&g->v.red, &g->cap_red, need,
                    sizeof(double), 0))
        return -1;
    g->v.hit = (int *)g->v.red;
    g->v.flag = (unsigned char *)(g->v.hit + count);
    return 0;
}

/* A wall kernel over the flags after the screened pairs' (flag + nscreen):
 * the walls' flags follow the pairs' in one array, so one scan gives
 * every slot, the walls' after the pairs' as A orders them. */
static int rc_dmd_run_walls(rc_dmd *g, rc_dmd_kernel k, long nwall)
{
    unsigned char *base = g->v.flag;
    int rc;
    g->v.flag = base + g->v.nscreen;
    rc = rc_dmd_run(g, k, nwall);
    g->v.flag = base;
    return rc;
}

/* One round of rc_dmd_extend: the screened candidates near[0, nscreen)
 * of the view (a window of the sorted list) and `nwall` walls, flagged,
 * scanned and pushed after the contacts A holds. */
static rc_status rc_dmd_extend_round(rc_dmd *g, long nwall, long *added)
{
    rc_k_md *v = &g->v;
    long nflag = v->nscreen + nwall, total = 0;
    *added = 0;
    if (rc_dmd_flag_room(g, nflag))
        return rc_dmd_ops_fail(g, "memory for contact flags");
    if (nflag > 0) {
        /* exact collisions: the pairs and walls that meet along their
         * paths within the step */
        rc_dmd_kernel kp = v->exact ? RC_DMD_X_SCREEN_PAIR : RC_DMD_SCREEN_PAIR,
                      kw = v->exact ? RC_DMD_X_SCREEN_WALL : RC_DMD_SCREEN_WALL;
        if (g->count_reach && v->at_start && v->nscreen > 0) {
            double skipped = 0.0;
            /* (a test's count, a double an item in red: the flags' room
             * is five bytes an item) */
            if (rc_dmd_grow(g, (void **)&v->red, &g->cap_red, v->nscreen + 1,
                            sizeof(double), 0) ||
                rc_dmd_flag_room(g, nflag))
                return rc_dmd_ops_fail(g, "memory for the count");
            RUN(RC_DMD_SKIP_COUNT, v->nscreen);
            OP(rc_dmd_reduce(g, v->red, v->nscreen, 0, 0) ||
                   rc_dmd_fetch(g, &skipped, 1),
               "counting the pairs passed over");
            g->reach_skipped += (long)skipped;
        }
        RUN(kp, v->nscreen);
        if (rc_dmd_run_walls(g, kw, nwall))
            return rc_dmd_ops_fail(g, rc_dmd_kernel_name(kw));
        OP(rc_dmd_select(g, nflag, &total), "contact selection");
    }
    if (total > 0) {
        if (rc_dmd_con_room(g, total))
            return rc_dmd_ops_fail(g, "memory for contacts");
        RUN(RC_DMD_PUSH_HIT, total);
        v->ncon += total;
        g->isl_current = 0;
    }
    *added = total;
    return RC_OK;
}

/* A closing round from the short list of the items of the spheres
 * touched since the last scan (rc_k_md_close_count): the endpoints of A's
 * contacts count their keys, a scan places them, a sort orders them, and
 * the screen, the slots' scan and the pushes go over the list; the same
 * contacts in the same order as the screen of the whole prefix and the
 * walls.  *done 0 (nothing run after the count) when the list is not
 * much shorter than what it replaces (`full` items: the prefix nscreen
 * and the walls; a granular pile whose every sphere is touched), or
 * without the spheres' index of their candidates. */
static rc_status rc_dmd_close(rc_dmd *g, long nscreen, long full,
                              long *added, int *done)
{
    rc_k_md *v = &g->v;
    long nend = 2 * v->ncon, nkey = 0, total = 0, maxkey = v->ncand;
    int k, bits = 1;
    *done = 0;
    *added = 0;
    v->close_nwall = 0;
    for (k = 0; k < v->dim; ++k)
        v->close_nwall += v->box.periodic[k] ? 0 : 2;
    if (v->close_nwall > 0)
        maxkey += 2L * v->n * v->dim;
    if (!v->nb_pos || nend == 0 || maxkey >= INT_MAX)
        return RC_OK;
    if (rc_dmd_grow(g, (void **)&v->close_cnt, &g->cap_close_cnt, nend + 1,
                    sizeof(long), 0))
        return rc_dmd_ops_fail(g, "memory for the closing list");
    RUN(RC_DMD_CLOSE_COUNT, nend);
    OP(rc_dmd_scan(g, v->close_cnt, nend, &nkey), "closing list scan");
    /* the list's own passes (fill, sort) cost about what screening as
     * many items does */
    if (2 * nkey >= full)
        return RC_OK;
    *done = 1;
    g->screened += nkey;
    if (nkey == 0)
        return RC_OK;
    {
        void **ptrs[2] = {(void **)&v->close_key, (void **)&v->close_val};
        size_t sizes[2] = {sizeof(int), sizeof(int)};
        if (rc_dmd_grow_set(g, nkey, &g->cap_close, ptrs, sizes, 2) ||
            rc_dmd_flag_room(g, nkey))
            return rc_dmd_ops_fail(g, "memory for the closing list");
    }
    RUN(RC_DMD_CLOSE_FILL, nend);
    while (bits < 31 && (1L << bits) < maxkey)
        ++bits;
    OP(rc_dmd_sort(g, v->close_key, v->close_val, nkey, bits),
       "sorting the closing list");
    v->near_off = 0;
    v->nscreen = nscreen;
    v->nclose = nkey;
    RUN(RC_DMD_CLOSE_SCREEN, nkey);
    OP(rc_dmd_select(g, nkey, &total), "contact selection");
    if (total > 0) {
        if (rc_dmd_con_room(g, total))
            return rc_dmd_ops_fail(g, "memory for contacts");
        RUN(RC_DMD_CLOSE_PUSH, total);
        v->ncon += total;
        g->isl_current = 0;
    }
    *added = total;
    return RC_OK;
}

/* Add to A the candidates and walls violated at q^p (at the step's first
 * scan also those within eps_g at q): flags (the pairs', then the
 * walls'), one scan for the slots (one round trip; one a window of
 * screened candidates, below), then the pushes in the screened order and
 * the walls after them.
 *
 * Which pairs are screened.  A pair's gap at the build was g0 (its
 * bucket); since then each sphere moved at most move_build, and within
 * the step at most move_step more (the predictor) and held_shift (the
 * position update's held contacts).  The gap can have closed only if
 * g0 <= 2 (move_build + move_step + held_shift) (+ eps_g at the first
 * scan): only the buckets up to that bound are screened, a prefix of the
 * sorted candidates (bounds in the style of event-driven MD; the rest is
 * never read). */
static rc_status rc_dmd_extend(rc_dmd *g, int at_start, long *added)
{
    rc_k_md *v = &g->v;
    long nwall = 0, nscreen, off, room, total;
    double reach = 2.0 * (g->move_build + g->move_step + g->held_shift) +
                   2.0 * g->md->eps_g;
    int k;
    v->at_start = at_start;
    v->reach_skip = !g->screen_all;
    *added = 0;
    for (k = 0; k < v->dim; ++k)
        if (!v->box.periodic[k])
            nwall = 2L * v->n * v->dim;
    nscreen = v->ncand;
    if (v->ncand > 0 && !g->screen_all &&
        reach < (RC_K_MD_NEAR - 1) * v->near_w) {
        long b = (long)(reach / v->near_w); /* the bucket of the bound */
        nscreen = g->near_start[b + 1];
    }
    if (!at_start && !g->screen_all && g->screen_window == 0) {
        /* a closing round: the touched spheres' items alone when they
         * are few */
        int done;
        rc_status st = rc_dmd_close(g, nscreen, nscreen + nwall, added, &done);
        if (st != RC_OK)
            return st;
        if (done) {
            v->nscreen = nscreen;
            OP(rc_dmd_zero(g, v->touched, (size_t)v->n), "clearing marks");
            return RC_OK;
        }
    }
    g->screened += nscreen;
    /* The screened candidates in windows that fit the flags in red as it
     * is (rc_dmd_init: 3 n + 1 doubles for 3D, flags and selection for
     * 4.8 n items), not red grown to a flag a screened candidate: at eta
     * = 0.45 a step screens 3.5-6 candidates a sphere, and red grown for
     * them (8 bytes each, when the flags were longs) stayed at the first
     * steps' size for the run.  The windows go in the sorted order and a
     * screen reads only its own candidates' marks (cand_m) and the spheres'
     * (touched, which no push writes), so A gets the same contacts in the
     * same order as from one window.  The walls' flags follow the last
     * window's.  At least n candidates a window (walls can take all of
     * red; then it grows).  A launcher with memory of its own (a GPU)
     * screens in one window as before: the process's memory is not its,
     * and each window costs a round trip. */
    room = rc_dmd_flag_fit(g) - nwall;
    if (room < v->n)
        room = v->n;
    if (!g->alias)
        room = nscreen > 0 ? nscreen : 1;
    if (g->screen_window != 0) /* tests/test_md_dengine.c */
        room = g->screen_window > 0 ? g->screen_window
                                    : (nscreen > 0 ? nscreen : 1);
    off = 0;
    do {
        long len = nscreen - off < room ? nscreen - off : room;
        int last = off + len >= nscreen;
        rc_status st;
        v->near_off = off;
        v->nscreen = len;
        st = rc_dmd_extend_round(g, last ? nwall : 0, &total);
        v->near_off = 0;
        if (st != RC_OK)
            return st;
        *added += total;
        off += len;
    } while (off < nscreen);
    v->nscreen = nscreen;
    OP(rc_dmd_zero(g, v->touched, (size_t)v->n), "clearing marks");
    return RC_OK;
}

/* Islands of A, as rc_md_islands: union-find labels (the smallest
 * sphere of each component), contacts stably sorted by label; then every
 * island's dense scratch (rc_k_md_isl_size), sized and placed by a scan,
 * for the island bodies that follow.  Nothing to do while A is unchanged
 * since the last call (the reflected momenta do not enter the
 * partition). */
static rc_status rc_dmd_island_scratch(rc_dmd *g);

static rc_status rc_dmd_islands(rc_dmd *g)
{
    rc_k_md *v = &g->v;
    long m = v->ncon, nisl;
    int bits = 1;
    if (g->isl_current)
        return RC_OK;
    {
        void **ptrs[10];
        size_t sizes[10] = {sizeof(int),  sizeof(int),     sizeof(long),
                            sizeof(long), sizeof(long),    sizeof(int),
                            sizeof(int),  3 * sizeof(int), 3 * sizeof(double),
                            sizeof(long)};
        ptrs[0] = (void **)&v->key;
        ptrs[1] = (void **)&v->order;
        ptrs[2] = (void **)&v->head;
        ptrs[3] = (void **)&v->istart;
        ptrs[4] = (void **)&v->woff;
        ptrs[5] = (void **)&v->isl_fail;
        ptrs[6] = (void **)&v->isl_passes;
        ptrs[7] = (void **)&v->iwork;
        ptrs[8] = (void **)&v->cwork;
        ptrs[9] = (void **)&v->eoff;
        if (rc_dmd_grow_set(g, m + 1, &g->cap_isl, ptrs, sizes,
                            v->exact ? 10 : 9))
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
    /* the island summary's five lanes (rc_k_md_isl_summary) */
    if (rc_dmd_grow(g, (void **)&v->red, &g->cap_red, 5 * m + 1,
                    sizeof(double), 0))
        return rc_dmd_ops_fail(g, "memory for reductions");
    /* the forest is the identity between calls (each call resets the
     * spheres of its contacts, the only ones its hooks touch), so a full
     * pass over the spheres is needed only the first time and after a
     * failure in between */
    if (!g->uf_clean)
        RUN(RC_DMD_UF_INIT, v->n);
    g->uf_clean = 0;
    RUN(RC_DMD_UF_HOOK, m);
    RUN(RC_DMD_CON_KEY, m);
    RUN(RC_DMD_UF_RESET, m);
    g->uf_clean = 1;
    while (bits < 31 && (1L << bits) < v->n)
        ++bits;
    OP(rc_dmd_sort(g, v->key, v->order, m, bits),
       "sorting contacts by island");
    RUN(RC_DMD_ISL_HEAD, m);
    OP(rc_dmd_scan(g, v->head, m, &nisl), "island scan");
    RUN(RC_DMD_ISL_START, m);
    OP(rc_dmd_put_long(g, v->istart + nisl, m), "island ends");
    v->nisl = nisl;
    return rc_dmd_island_scratch(g);
}

/* The islands' dense scratch and (exact collisions) impact logs, sized
 * and placed by scans (rc_k_md_isl_size, rc_k_mdx_isl_size). */
static rc_status rc_dmd_island_scratch(rc_dmd *g)
{
    rc_k_md *v = &g->v;
    long wtotal;
    RUN(v->exact ? RC_DMD_X_ISL_SIZE : RC_DMD_ISL_SIZE, v->nisl);
    OP(rc_dmd_scan(g, v->woff, v->nisl, &wtotal), "scratch scan");
    if (v->exact) {
        long etotal;
        OP(rc_dmd_scan(g, v->eoff, v->nisl, &etotal), "impact log scan");
        /* after the step's logs so far: an island taken as it was keeps
         * its logs of an earlier round (rc_k_mdx_island), kept by the
         * growth too.  The spheres' latest entries are ints (ev_head: 4
         * bytes a sphere, not 8) */
        v->ev_base = g->ev_next;
        if (v->ev_base + etotal >= INT_MAX)
            return rc_dmd_fail(g, RC_ERR_NOMEM,
                               "impact logs of %ld entries (at most %d)",
                               v->ev_base + etotal, INT_MAX - 1);
        if (rc_dmd_grow(g, (void **)&v->ev, &g->cap_ev,
                        v->ev_base + etotal + 1, sizeof(rc_k_md_event),
                        v->ev_base))
            return rc_dmd_ops_fail(g, "memory for impact logs");
        g->ev_next = v->ev_base + etotal;
    }
    if (rc_dmd_grow(g, (void **)&v->work, &g->cap_work, wtotal + 1,
                    sizeof(double), 0))
        return rc_dmd_ops_fail(g, "memory for island solves");
    g->isl_current = 1;
    return RC_OK;
}

/* The island bodies' per-island results (failure codes, counts, island
 * starts) into the host's arrays: only for a failure's details and the
 * medium tier. */
static rc_status rc_dmd_island_results(rc_dmd *g)
{
    rc_k_md *v = &g->v;
    size_t nisl = (size_t)v->nisl;
    OP(rc_dmd_get(g, g->h_fail, v->isl_fail, sizeof(int) * nisl) ||
           rc_dmd_get(g, g->h_passes, v->isl_passes, sizeof(int) * nisl) ||
           rc_dmd_get(g, g->h_istart, v->istart, sizeof(long) * (nisl + 1)),
       "island results");
    return RC_OK;
}

/* What an island round left, in one round trip (rc_k_md_isl_summary). */
typedef struct rc_dmd_isl_sum {
    int big;       /* an island beyond the tier */
    long failed;   /* the first island that failed otherwise, or -1 */
    long passes;   /* passes (reflect) or held contacts (hold), summed */
    long islands;  /* islands that took a pass */
    long largest;  /* contacts of the largest island within the tier */
} rc_dmd_isl_sum;

static rc_status rc_dmd_island_summary(rc_dmd *g, rc_dmd_isl_sum *out)
{
    rc_k_md *v = &g->v;
    long n = v->nisl;
    double r[5];
    int lane;
    RUN(RC_DMD_ISL_SUMMARY, n);
    for (lane = 0; lane < 5; ++lane)
        OP(rc_dmd_reduce(g, v->red + lane * n, n, lane != 2 && lane != 3,
                         lane),
           "island summary");
    OP(rc_dmd_fetch(g, r, 5), "island summary");
    out->big = r[0] > 0.0;
    out->failed = r[1] > 0.0 ? n - (long)r[1] : -1;
    out->passes = (long)r[2];
    out->islands = (long)r[3];
    out->largest = (long)r[4];
    return RC_OK;
}

/* The failure of island s (stage 0 reflect, 1 hold, 2 project), worded
 * by the host engine. */
static rc_status rc_dmd_island_failed(rc_dmd *g, int stage, long s)
{
    rc_status st = rc_dmd_island_results(g);
    if (st != RC_OK)
        return st;
    return rc_md_island_failed(g->md, stage, g->h_fail[s],
                               g->h_istart[s + 1] - g->h_istart[s]);
}

/* The host's copies of the arrays an island round reads and writes, for
 * launchers whose memory the host cannot touch (NULL-safe grow). */
static int rc_dmd_host_grow(void **ptr, size_t bytes)
{
    void *np = realloc(*ptr, bytes ? bytes : 1);
    if (!np)
        return -1;
    *ptr = np;
    return 0;
}

/* Islands beyond the per-thread tier, reflections up to lapack_max: the
 * passes of rc_k_md_reflect_island with the launcher's batched NNLS (the
 * medium tier: LAPACK on the CPU, cuBLAS Gram matrices and cuSOLVER
 * batched Cholesky on the GPU), every such island of the round one
 * problem of each batch.  The pass logic runs on the host view hv (host
 * memory).  The island's Jacobian, scaled by M^-1/2, is B: row a holds
 * n_a / sqrt(m_i) in sphere i's columns and -n_a / sqrt(m_j) in j's, so
 * B B^T is the Gram matrix of the dense tier. */
static rc_status rc_dmd_medium(rc_dmd *g, const rc_k_md *hv, const long *isl,
                               int ns)
{
    rc_md *md = g->md;
    int d = md->dim, n = md->n, mp = 0, kp = 0, a, k, pass, t;
    rc_status st = RC_OK;
    rc_k_md_contact *con = hv->con;
    const int *order = hv->order;
    double *p = hv->p;
    unsigned char *touched = hv->touched;
    int *m = NULL, *V = NULL, *status = NULL;
    int *slot = NULL, *passes = NULL, *done = NULL, *fail_code = NULL;
    double *B = NULL, *b = NULL, *lam = NULL, *sqinv = NULL;
    slot = (int *)malloc(sizeof(int) * (size_t)(n + 1));
    sqinv = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    m = (int *)calloc((size_t)ns, sizeof(int));
    status = (int *)calloc((size_t)ns, sizeof(int));
    passes = (int *)calloc((size_t)ns, sizeof(int));
    done = (int *)calloc((size_t)ns, sizeof(int));
    fail_code = (int *)calloc((size_t)ns, sizeof(int));
    if (!slot || !sqinv || !m || !status || !passes || !done || !fail_code) {
        st = rc_dmd_fail(g, RC_ERR_NOMEM, "out of memory for the medium "
                                          "island tier");
        goto done;
    }
    for (t = 0; t < n; ++t) {
        slot[t] = -1;
        sqinv[t] = sqrt(md->inv_mass[t]);
    }
    /* the batch shape: most contacts and spheres of one island */
    for (t = 0; t < ns; ++t) {
        long lo = g->h_istart[isl[t]], hi = g->h_istart[isl[t] + 1], e;
        int ks = 0;
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
        rc_dmd_count(g, 1);
        g->batches++;
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
done:
    free(slot);
    free(sqinv);
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

/* The islands of round `stage` (0 reflect, 1 position update, 2
 * projection) that the per-thread tier left (RC_K_MD_BIG): reflections up
 * to lapack_max in the launcher's batched tier, everything else in the
 * host tiers (tiers.h).  Both work on host memory: the launcher's own
 * when it is the host's (the CPU launcher), else copies of the arrays the
 * round reads and writes (contacts, their island order, momenta, marks;
 * the predictor and the held displacements for the position update and
 * the projection), taken and put back here.  Such islands are rare
 * (dense clusters, piles), so the copies are too. */
static rc_status rc_dmd_host_round(rc_dmd *g, int stage)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v, hv = g->v;
    long s, nmed = 0, nbig = 0, *list = NULL;
    size_t N = (size_t)md->n * (size_t)md->dim, n = (size_t)md->n;
    size_t ncon = (size_t)v->ncon;
    int copies = !g->ops->host_memory;
    rc_status st;
    if ((st = rc_dmd_island_results(g)) != RC_OK)
        return st;
    if (!(list = (long *)malloc(sizeof(long) * (size_t)(v->nisl + 1))))
        return rc_dmd_fail(g, RC_ERR_NOMEM, "out of memory for islands");
    /* the batched tier's islands, then the host tiers' (each ascending) */
    for (s = 0; s < v->nisl; ++s)
        if (g->h_fail[s] == RC_K_MD_BIG && stage == 0 &&
            g->h_istart[s + 1] - g->h_istart[s] <= md->par.lapack_max)
            list[nmed++] = s;
    for (s = 0; s < v->nisl; ++s)
        if (g->h_fail[s] == RC_K_MD_BIG &&
            !(stage == 0 &&
              g->h_istart[s + 1] - g->h_istart[s] <= md->par.lapack_max))
            list[nmed + nbig++] = s;
    hv.istart = g->h_istart;
    hv.inv_mass = md->inv_mass;
    hv.radius = md->radius;
    if (copies) {
        if (rc_dmd_host_grow((void **)&g->h_con, sizeof *v->con * ncon) ||
            rc_dmd_host_grow((void **)&g->h_order, sizeof(int) * ncon) ||
            rc_dmd_host_grow((void **)&g->h_p, sizeof(double) * N) ||
            rc_dmd_host_grow((void **)&g->h_touched, n) ||
            (stage > 0 &&
             (rc_dmd_host_grow((void **)&g->h_qp, sizeof(double) * N) ||
              rc_dmd_host_grow((void **)&g->h_dxs, sizeof(double) * N)))) {
            st = rc_dmd_fail(g, RC_ERR_NOMEM,
                             "out of memory for the host island tiers");
            goto done;
        }
        hv.con = g->h_con;
        hv.order = g->h_order;
        hv.p = g->h_p;
        hv.touched = g->h_touched;
        hv.qp = stage > 0 ? g->h_qp : NULL;
        hv.dxs = stage > 0 ? g->h_dxs : NULL;
        if (rc_dmd_get(g, hv.con, v->con, sizeof *v->con * ncon) ||
            rc_dmd_get(g, hv.order, v->order, sizeof(int) * ncon) ||
            rc_dmd_get(g, hv.p, v->p, sizeof(double) * N) ||
            rc_dmd_get(g, hv.touched, v->touched, n) ||
            (stage > 0 &&
             (rc_dmd_get(g, hv.qp, v->qp, sizeof(double) * N) ||
              rc_dmd_get(g, hv.dxs, v->dxs, sizeof(double) * N)))) {
            st = rc_dmd_ops_fail(g, "host island tiers: copying islands out");
            goto done;
        }
    }
    g->host_rounds++;
    if (nmed > 0 && (st = rc_dmd_medium(g, &hv, list, (int)nmed)) != RC_OK)
        goto done;
    if (nbig > 0 &&
        (st = rc_md_tiers_run(md, &hv, stage, list + nmed, nbig)) !=
            RC_OK)
        goto done;
    g->host_islands += nbig;
    if (copies &&
        (rc_dmd_put(g, v->con, hv.con, sizeof *v->con * ncon) ||
         rc_dmd_put(g, v->p, hv.p, sizeof(double) * N) ||
         rc_dmd_put(g, v->touched, hv.touched, n) ||
         (stage > 0 &&
          (rc_dmd_put(g, v->qp, hv.qp, sizeof(double) * N) ||
           rc_dmd_put(g, v->dxs, hv.dxs, sizeof(double) * N)))))
        st = rc_dmd_ops_fail(g, "host island tiers: copying islands in");
done:
    free(list);
    return st;
}

/* One island round: kernel k (REFLECT, HOLD or PROJECT, stage 0, 1, 2)
 * over every island, its summary in one round trip, the counters, and
 * the islands it left to the larger tiers. */
static rc_status rc_dmd_island_round(rc_dmd *g, rc_dmd_kernel k, int stage)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    rc_dmd_isl_sum sum = {0, -1, 0, 0, 0};
    rc_status st;
    if ((st = rc_dmd_islands(g)) != RC_OK || v->nisl == 0)
        return st;
    RUN(k, v->nisl);
    if ((st = rc_dmd_island_summary(g, &sum)) != RC_OK)
        return st;
    if (sum.failed >= 0 && k == RC_DMD_X_ISLAND) {
        /* an island outgrew its impact log's first room (or failed for
         * good): the round again, the islands that failed in the full
         * room (rc_k_mdx_log_first) */
        v->log_full = 1;
        g->ev_next = v->ev_base; /* the failed run's room taken again */
        st = rc_dmd_island_scratch(g);
        v->log_full = 0;
        if (st != RC_OK)
            return st;
        g->log_retries++;
        RUN(k, v->nisl);
        if ((st = rc_dmd_island_summary(g, &sum)) != RC_OK)
            return st;
    }
    if (sum.failed >= 0)
        return rc_dmd_island_failed(g, stage, sum.failed);
    if (stage == 0) {
        md->step.passes += sum.passes;
        md->step.islands += sum.islands;
        if (sum.largest > md->step.largest_island)
            md->step.largest_island = sum.largest;
    } else if (stage == 1) {
        md->step.held += sum.passes;
    }
    return sum.big ? rc_dmd_host_round(g, stage) : RC_OK;
}

/* Restore the momenta of the step's start after a failure.  The step's
 * own failure is the one reported: if the restore fails too (after a
 * device fault every call does), that is added to its message. */
static rc_status rc_dmd_abort(rc_dmd *g, rc_status st)
{
    size_t N = (size_t)g->md->n * (size_t)g->md->dim;
    /* the candidates or islands may be half rebuilt: the next step
     * builds them anew (q is untouched: rc_dmd_finish, which alone moves
     * the spheres, trading q for q^p, is the step's last call) */
    g->have_cand = 0;
    g->isl_current = 0;
    /* exact collisions: logs may be open; the next step closes them
     * first (here the launcher may be failing) */
    g->logs_open = g->v.exact;
    /* (a step that failed before saving them has not changed them; p_save
     * may then hold the host's copy of the state, g->lent) */
    if (g->p_saved &&
        (g->v.p_lazy ? rc_dmd_run(g, RC_DMD_X_RESTORE_P, g->md->n)
                    : g->ops->copy(g->ctx, g->v.p, g->p_save,
                                   sizeof(double) * N)) != 0) {
        size_t len = strlen(g->md->msg);
        snprintf(g->md->msg + len, sizeof g->md->msg - len,
                 "; the momenta of the step's start could not be restored "
                 "either");
    }
    return st;
}

static rc_status rc_dmd_totals(rc_dmd *g, double r[6], int *nslot);

/* After an island round: the islands' motion (kernel k: PREDICT_ISL, the
 * predictor of their spheres anew, or X_REACH, their flights' bound)
 * grows the step's bound; when the spheres could now reach beyond the
 * candidates, they are rebuilt (A keeps its contacts, REMARK marks them
 * and takes their shifts in the wrapped positions).  *rebuilt: whether
 * that happened. */
static rc_status rc_dmd_island_reach(rc_dmd *g, rc_dmd_kernel k,
                                     int *rebuilt)
{
    rc_k_md *v = &g->v;
    double dmax = 0.0;
    rc_status st;
    *rebuilt = 0;
    if ((st = rc_dmd_island_motion(g, k, &dmax)) != RC_OK)
        return st;
    g->move_step = fmax(g->move_step, dmax);
    if (2.0 * (g->move_build + g->move_step) + 2.0 * g->md->eps_g <
        g->cand_skin)
        return RC_OK;
    if ((st = rc_dmd_candidates(g, g->move_step, g->move_build, 1,
                                rebuilt)) != RC_OK)
        return st;
    /* (after a round that may have taken islands as they were) */
    g->isl_rebuilds += *rebuilt && v->con_new > 0;
    RUN(RC_DMD_REMARK, v->ncon);
    return RC_OK;
}

/* Steps 1-3 of both forms of the step: the step's counters cleared, the
 * momenta saved (the abort's restore, and the exact step's start), the
 * predictor and the motion bound, the candidates, and A's first scan
 * (*added: the contacts it found). */
static rc_status rc_dmd_step_start(rc_dmd *g, long *added)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    double dmax = 0.0, moved = 0.0, t0 = rc_now(), t1;
    int rebuilt;
    rc_status st;

    memset(&md->step, 0, sizeof md->step);
    if (g->walls) /* a periodic box has no wall contacts to mark */
        OP(rc_dmd_zero(g, v->wall_in, (size_t)md->n * 6 + 1),
           "clearing wall marks");
    v->ncon = 0;
    g->isl_current = 0;
    if (g->logs_open) { /* exact collisions: a failed step left them */
        RUN(RC_DMD_X_LOG_RESET, v->n);
        g->logs_open = 0;
    }
    /* the momenta saved by the motion pass, which reads them (p0 is
     * p_save; the abort's restore): nothing before it changes them, and
     * a failed pass leaves them as they were, so the abort restores them
     * only once it is through.  Exact collisions without a kick (no
     * field: only the islands change momenta) keep only the momenta an
     * island changes, at its first run (p_lazy, rc_k_mdx_keep_p); their
     * restore is X_RESTORE_P's */
    v->p_lazy = v->exact && v->g_len == 0.0 && !v->has_pair;
    v->save_p = !v->p_lazy;
    if ((st = rc_dmd_motion(g, &dmax, &moved)) != RC_OK)
        return st;
    g->p_saved = 1;
    t1 = rc_now();
    md->t_update += t1 - t0;
    if ((st = rc_dmd_candidates(g, dmax, moved, 0, &rebuilt)) != RC_OK)
        return st;
    /* this step's start since the candidates' build, for the first
     * scan's predictions */
    v->ptime = g->ptime_next;
    g->ptime_next += v->h;
    t0 = rc_now();
    if ((st = rc_dmd_extend(g, 1, added)) != RC_OK)
        return st;
    md->t_contacts += rc_now() - t0;
    return RC_OK;
}

/* The step's end: the kick, and x = q^p as the new q.  The two arrays
 * trade places instead of a pass copying every position (the next
 * step's motion pass writes every q^p anew; 0.032 s of 100 steps of
 * 256 000 spheres on 1 thread).  No kick where it adds nothing (no
 * uniform field, no pair potential: the spheres fly freely between
 * impacts): skipping its writes of every momentum took the step's last
 * pass from 0.20 to 0.085 s on 2 threads; the momenta keep their bits
 * (p - 0 is p, except that -0 became +0).  kicked: the kick is done
 * (the held contacts' projection follows it). */
static rc_status rc_dmd_finish(rc_dmd *g, int kicked)
{
    rc_k_md *v = &g->v;
    double *x = v->qp;
    if (!kicked && (v->g_len != 0.0 || v->has_pair))
        RUN(RC_DMD_KICK_FORCES, v->n);
    v->qp = v->q;
    v->q = x;
    return RC_OK;
}

static rc_status rc_dmd_step_(rc_dmd *g)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    long added;
    double t0, t1, r[6];
    int rebuilt, nslot;
    rc_status st;

    /* 1-3. predictor, candidates, extended set */
    if ((st = rc_dmd_step_start(g, &added)) != RC_OK)
        return st;
    for (;;) {
        /* 4-5. islands and reflections until the set is closed (R2) */
        while (added > 0) {
            t1 = rc_now();
            if ((st = rc_dmd_island_round(g, RC_DMD_REFLECT, 0)) != RC_OK)
                return st;
            md->t_reflect += rc_now() - t1;
            /* the predictor anew where the momenta changed: the
             * islands' spheres */
            if ((st = rc_dmd_island_reach(g, RC_DMD_PREDICT_ISL,
                                          &rebuilt)) != RC_OK)
                return st;
            t0 = rc_now();
            if ((st = rc_dmd_extend(g, 0, &added)) != RC_OK)
                return st;
            md->t_contacts += rc_now() - t0;
            if (added > 0)
                md->step.rounds++;
        }
        /* 6. position update: x = q^p, with complementarity where the
         * reflected predictor still violates a contact (R3); the islands
         * of the last reflection round serve while A is unchanged */
        if (v->ncon == 0)
            break;
        t1 = rc_now();
        if ((st = rc_dmd_island_round(g, RC_DMD_HOLD, 1)) != RC_OK)
            return st;
        md->t_reflect += rc_now() - t1;
        if (md->step.held == 0)
            break;
        /* R2, continued: a contact outside A that the held position update
         * violates joins A, and the step is redone from the reflections
         * without the holding impulses */
        if ((st = rc_dmd_island_motion(g, RC_DMD_HELD_ISL,
                                       &g->held_shift)) != RC_OK)
            return st;
        if ((st = rc_dmd_extend(g, 0, &added)) != RC_OK)
            return st;
        if (added == 0)
            break;
        RUN(RC_DMD_UNHOLD, v->nisl);
        g->held_shift = 0.0;
        md->step.held = 0;
        /* q^p from the momenta without the holding impulses (its
         * displacement is measured again after the next reflections) */
        RUN(RC_DMD_PREDICT, v->n);
        md->step.rounds++;
    }
    t0 = rc_now();
    /* the end of the step in one round trip: finiteness, the counters
     * (which the kick and the projection do not change) and the pair
     * terms at x */
    if ((st = rc_dmd_totals(g, r, &nslot)) != RC_OK)
        return st;
    /* 7. forces at x (the pair potential), the kick and the new
     * positions */
    if (v->has_pair) {
        RUN(RC_DMD_FORCE, v->n);
        md->epot_pair = nslot == 6 ? r[4] : 0.0;
        md->virial_force = nslot == 6 ? r[5] : 0.0;
    }
    if (md->step.held > 0) {
        /* the kick, RATTLE's projection for the held contacts, and x */
        RUN(RC_DMD_KICK_FORCES, v->n);
        if ((st = rc_dmd_island_round(g, RC_DMD_PROJECT, 2)) != RC_OK)
            return st;
    }
    if ((st = rc_dmd_finish(g, md->step.held > 0)) != RC_OK)
        return st;
    if (v->has_pair) {
        double *tmp = v->grad;
        v->grad = v->grad1;
        v->grad1 = tmp;
    }
    rc_md_step_done(md);
    md->t_update += rc_now() - t0;
    return RC_OK;
}

/* The end of a step in one round trip: finiteness, collision counts and
 * the collision virial (the pair terms at x: with a pair potential);
 * fails on a non-finite state.  *nslot: the slots read. */
static rc_status rc_dmd_totals(rc_dmd *g, double r[6], int *nslot)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    r[0] = r[1] = r[2] = r[3] = r[4] = r[5] = 0.0;
    *nslot = 0;
    if (!v->exact) {
        RUN(RC_DMD_FINITE, v->n);
        OP(rc_dmd_reduce(g, v->red, v->n, 1, 0), "finiteness");
        *nslot = 1;
    } else if (v->ncon > 0) {
        /* exact collisions: the motion pass checked every sphere, and
         * since then only A's endpoints changed (none without contacts:
         * nothing to fetch) */
        RUN(RC_DMD_FINITE_CON, v->ncon);
        OP(rc_dmd_reduce(g, v->red, v->ncon, 1, 0), "finiteness");
        *nslot = 1;
    }
    if (v->ncon > 0) {
        RUN(RC_DMD_COLLIDED, v->ncon);
        OP(rc_dmd_reduce(g, v->red, v->ncon, 0, 1), "collisions");
        RUN(RC_DMD_WALL_COLLIDED, v->ncon);
        OP(rc_dmd_reduce(g, v->red, v->ncon, 0, 2), "wall collisions");
        RUN(RC_DMD_VIRIAL, v->ncon);
        OP(rc_dmd_reduce(g, v->red, v->ncon, 0, 3), "virial");
        *nslot = 4;
    }
    if (v->has_pair && v->ncand > 0) {
        RUN(RC_DMD_PAIR_TERM, v->ncand);
        OP(rc_dmd_reduce(g, v->pair_en, v->ncand, 0, 4), "pair energy");
        OP(rc_dmd_reduce(g, v->pair_vir, v->ncand, 0, 5), "pair virial");
        *nslot = 6;
    }
    if (*nslot > 0)
        OP(rc_dmd_fetch(g, r, *nslot), "the step's totals");
    if (r[0] > 0.0)
        return rc_dmd_nonfinite(g, r[0]);
    if (v->ncon > 0) {
        md->step.collisions = (long)r[1];
        md->step.wall_collisions = (long)r[2];
        md->step.virial = r[3];
    }
    return RC_OK;
}

/* The step with exact collision times (rc_md_exact.h): the flight of
 * every sphere; A = the contacts that meet within the step; each island's
 * impacts in time order; the contacts that the deflected spheres' paths
 * meet join A and the islands are processed again from the step's start,
 * until none joins; then the spheres' positions at h and the kick of the
 * uniform field. */
static rc_status rc_dmd_step_exact_(rc_dmd *g)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    long added;
    double t0, t1, r[6];
    int rebuilt, nslot;
    rc_status st;

    if ((st = rc_dmd_step_start(g, &added)) != RC_OK)
        return st;
    v->con_new = 0; /* every contact is new to the first island round */
    g->ev_next = 0; /* and the step's logs start anew */
    while (added > 0) {
        long seen = v->ncon;
        /* every island's impacts from the step's start (counted anew:
         * the last round's are the step's) */
        t1 = rc_now();
        md->step.passes = md->step.islands = 0;
        if ((st = rc_dmd_island_round(g, RC_DMD_X_ISLAND, 0)) != RC_OK)
            return st;
        md->t_reflect += rc_now() - t1;
        if ((st = rc_dmd_island_reach(g, RC_DMD_X_REACH, &rebuilt)) != RC_OK)
            return st;
        if (rebuilt) {
            /* the islands' logs are in the positions before the wrap:
             * process them again, every island marking its spheres (the
             * new list's pairs have not been screened along their
             * paths) */
            OP(rc_dmd_zero(g, v->touched, (size_t)v->n), "clearing marks");
            v->con_new = 0;
            /* and every island's scratch and log room laid out anew: the
             * last layout gave none to the islands it took as they were
             * (rc_k_mdx_isl_size), which run again now */
            g->isl_current = 0;
            continue;
        }
        v->con_new = seen;
        t0 = rc_now();
        if ((st = rc_dmd_extend(g, 0, &added)) != RC_OK)
            return st;
        md->t_contacts += rc_now() - t0;
        if (added > 0)
            md->step.rounds++;
    }
    t0 = rc_now();
    if (v->ncon > 0)
        RUN(RC_DMD_X_END, v->nisl);
    if ((st = rc_dmd_totals(g, r, &nslot)) != RC_OK)
        return st;
    (void)nslot;
    /* the marks of the momenta the islands kept, cleared by the step's
     * last call (until then a failure restores them) */
    if (v->p_lazy && v->ncon > 0)
        RUN(RC_DMD_X_UNKEEP, v->ncon);
    if ((st = rc_dmd_finish(g, 0)) != RC_OK)
        return st;
    rc_md_step_done(md);
    md->t_update += rc_now() - t0;
    return RC_OK;
}

rc_status rc_dmd_step(rc_dmd *g)
{
    rc_status st;
    g->step_launches = g->step_syncs = 0;
    g->p_saved = 0;
    st = g->v.exact ? rc_dmd_step_exact_(g) : rc_dmd_step_(g);
    return st == RC_OK ? RC_OK : rc_dmd_abort(g, st);
}

/* ------------------------------------------------------------------ */
/* Checkpoints (checkpoint.h).  Between steps the launcher holds, besides
 * q, p and image, the candidate list, built at the last build from the
 * positions of then (qbuild, wrapped into the box there) with the cutoff
 * of then; q stays unwrapped until the next build.  A restart rebuilds
 * that list from qbuild with that cutoff, then takes q, p, image and the
 * forces at q as they were: the launcher is then in the state the
 * interrupted run had, and the steps that follow are the same bits.
 * (Rebuilding from the state at the checkpoint instead would wrap q and
 * order the list at another step than the run did: the same physics,
 * other round-off.) */

/* The counters reported in summary.json, which a restart carries on. */
#define RC_DMD_CKPT_LONGS 9
#define RC_DMD_CKPT_DOUBLES 4

rc_status rc_dmd_checkpoint(rc_dmd *g, struct rc_ckpt_writer *w)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    size_t N = (size_t)md->n * (size_t)md->dim;
    int64_t ctr[RC_DMD_CKPT_LONGS];
    double sc[RC_DMD_CKPT_DOUBLES];
    double *buf = (double *)malloc(sizeof(double) * (N + 1));
    int *ibuf = (int *)malloc(sizeof(int) * (N + 1));
    rc_status st = RC_OK;
    /* the counters first: the copies below are not the run's own work */
    ctr[0] = g->have_cand;
    ctr[1] = g->rebuilds;
    ctr[2] = g->host_rounds;
    ctr[3] = g->host_islands;
    ctr[4] = g->launches;
    ctr[5] = g->syncs;
    ctr[6] = g->screened;
    ctr[7] = md->rebuilds;
    ctr[8] = g->uf_clean;
    sc[0] = g->cand_cut;
    sc[1] = md->par.skin;
    sc[2] = md->epot_pair;
    sc[3] = md->virial_force;
    if (!buf || !ibuf) {
        st = rc_dmd_fail(g, RC_ERR_NOMEM, "out of memory for the checkpoint");
        goto done;
    }
    rc_ckpt_put(w, "DCTR", ctr, sizeof ctr);
    rc_ckpt_put(w, "DSCAL", sc, sizeof sc);
    /* whether the list kept predictions: the restart's build does as the
     * run's did (its own bound, from a step's motion, it has not got), so
     * the steps that follow make the same passes */
    rc_ckpt_put_long(w, "DPRED", v->pred_t != NULL);
    /* exact collisions' island rounds run again (summary.json's
     * impact_log_retries), a section of its own: checkpoints written
     * before it was saved still load (their retries then count from the
     * restart) */
    rc_ckpt_put_long(w, "DRETRY", g->log_retries);
    /* copies without the counters of rc_dmd_get (see above) */
#define RC_DMD_SAVE(tag, dst, src, bytes)                                    \
    do {                                                                     \
        if (g->ops->get(g->ctx, dst, src, bytes) != 0) {                     \
            st = rc_dmd_ops_fail(g, "copying the state out");               \
            goto done;                                                       \
        }                                                                    \
        rc_ckpt_put(w, tag, dst, bytes);                                     \
    } while (0)
    RC_DMD_SAVE("DQ", buf, v->q, sizeof(double) * N);
    RC_DMD_SAVE("DP", buf, v->p, sizeof(double) * N);
    RC_DMD_SAVE("DIMAGE", ibuf, v->image, sizeof(int) * N);
    if (g->have_cand)
        RC_DMD_SAVE("DQBUILD", buf, v->qbuild, sizeof(double) * N);
    if (v->has_pair)
        RC_DMD_SAVE("DGRAD", buf, v->grad, sizeof(double) * N);
#undef RC_DMD_SAVE
done:
    free(buf);
    free(ibuf);
    return st;
}

rc_status rc_dmd_restore(rc_dmd *g, const struct rc_ckpt *c, rc_error *err)
{
    rc_md *md = g->md;
    rc_k_md *v = &g->v;
    size_t N = (size_t)md->n * (size_t)md->dim;
    int64_t ctr[RC_DMD_CKPT_LONGS];
    double sc[RC_DMD_CKPT_DOUBLES];
    double *buf = (double *)malloc(sizeof(double) * (N + 1));
    int *ibuf = (int *)malloc(sizeof(int) * (N + 1));
    rc_status st;
    int rebuilt;
    if (!buf || !ibuf) {
        free(buf);
        free(ibuf);
        err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message,
                 "out of memory reading the checkpoint");
        return RC_ERR_NOMEM;
    }
    if ((st = rc_ckpt_get(c, "DCTR", ctr, sizeof ctr, err)) != RC_OK ||
        (st = rc_ckpt_get(c, "DSCAL", sc, sizeof sc, err)) != RC_OK)
        goto done;
    md->par.skin = sc[1];
    if (ctr[0]) {
        /* the list of the last build: from its positions, its cutoff */
        if ((st = rc_ckpt_get(c, "DQBUILD", buf, sizeof(double) * N, err)) !=
            RC_OK)
            goto done;
        if (g->ops->put(g->ctx, v->q, buf, sizeof(double) * N) != 0) {
            st = rc_dmd_ops_fail(g, "copying the state in");
            goto fail;
        }
        g->restore_cut = sc[0];
        {
            long pred;
            g->restore_pred = rc_ckpt_find_long(c, "DPRED", &pred)
                                  ? (int)(pred != 0)
                                  : -1;
        }
        st = rc_dmd_candidates(g, 0.0, -1.0, 1, &rebuilt);
        g->restore_cut = 0.0;
        if (st != RC_OK)
            goto fail;
    }
    g->have_cand = (int)ctr[0];
    /* the union-find forest as the run had it: the identity (its first
     * full pass then is not the restarted run's to count) */
    if (ctr[8] && !g->uf_clean) {
        if (rc_dmd_run(g, RC_DMD_UF_INIT, v->n)) {
            st = rc_dmd_ops_fail(g, "resetting the islands' forest");
            goto fail;
        }
        g->uf_clean = 1;
    }
    if ((st = rc_ckpt_get(c, "DQ", buf, sizeof(double) * N, err)) != RC_OK)
        goto done;
    if (g->ops->put(g->ctx, v->q, buf, sizeof(double) * N) != 0)
        goto copy_fail;
    if ((st = rc_ckpt_get(c, "DP", buf, sizeof(double) * N, err)) != RC_OK)
        goto done;
    if (g->ops->put(g->ctx, v->p, buf, sizeof(double) * N) != 0)
        goto copy_fail;
    if ((st = rc_ckpt_get(c, "DIMAGE", ibuf, sizeof(int) * N, err)) != RC_OK)
        goto done;
    if (g->ops->put(g->ctx, v->image, ibuf, sizeof(int) * N) != 0)
        goto copy_fail;
    if (v->has_pair) {
        if ((st = rc_ckpt_get(c, "DGRAD", buf, sizeof(double) * N, err)) !=
            RC_OK)
            goto done;
        if (g->ops->put(g->ctx, v->grad, buf, sizeof(double) * N) != 0)
            goto copy_fail;
    }
    md->epot_pair = sc[2];
    md->virial_force = sc[3];
    g->rebuilds = (long)ctr[1];
    g->host_rounds = (long)ctr[2];
    g->host_islands = (long)ctr[3];
    g->launches = (long)ctr[4];
    g->syncs = (long)ctr[5];
    g->screened = (long)ctr[6];
    md->rebuilds = (long)ctr[7];
    g->log_retries = 0;
    rc_ckpt_find_long(c, "DRETRY", &g->log_retries);
    st = RC_OK;
    goto done;
copy_fail:
    st = rc_dmd_ops_fail(g, "copying the state in");
fail:
    err->status = st;
    snprintf(err->message, sizeof err->message, "%s", md->msg);
done:
    free(buf);
    free(ibuf);
    return st;
}

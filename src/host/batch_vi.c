/* The batch engine's members of a built-in Lagrangian model (seed 001,
 * src/host/model/vi.c's methods): each member is described on the host
 * from its own scenario (rc_scenario_member_: any parameter, initial
 * coordinate, method or step a rule sets), then run start to finish by
 * rc_k_vi_member_thread (src/kernels/rc_vi_member.h), the function a GPU
 * thread runs (rc_cuda_vi.cu), here one member after another on the
 * calling CPU thread (OpenMP runs batches on all cores, ensemble.c).
 *
 * The member body is the step of vi.c (rc_k_vi_step) with the row
 * statistics of the per-member engine, in the same order of operations,
 * so a member's record is the same bits by either engine (tests:
 * test_model_batch).  A member that cannot start or fails is re-run by
 * the per-member engine, which words why (rc_batch_member_from_out_).
 *
 * With ensemble.reference (each member's L2 error against the same
 * member at a finer step and maybe another method) the reference runs
 * are members too: the references shared by several members
 * (rc_shared_refs, ensemble.c's slots) run first, each a member at the
 * reference step recording q at every step (rc_batch_vi_refs_); then
 * each member records q at its rows and its L2 error is rc_l2_strided_
 * against its slot's record, as the per-member engine computes it.
 * Without slots each member's own reference, on its own output grid,
 * runs in the same call as the member, one description after it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensemble_impl.h"
#include "model/lagrangian.h"
#include "model/model.h"
#include "model/vi.h"
#include "ricochet/run.h"
#include "scenario_impl.h"
#include "../kernels/rc_vi_member.h"

#ifdef RICOCHET_HAVE_CUDA
#include "../kernels/rc_cuda_vi.h"
#endif

int rc_batch_vi_plan_(const rc_scenario *scn, char *why, size_t why_size)
{
    if (!scn->model_method ||
        !rc_vi_kernel_ready(scn->model_method, scn->model)) {
        if (scn->model->kind == &rc_model_kind_lagrangian &&
            rc_lag_body(scn->model) == RC_K_LAG_EXPR)
            snprintf(why, why_size,
                     "a model given by expressions (its jet is evaluated "
                     "on the host: members run one by one on the cpu)");
        else
            snprintf(why, why_size,
                     "a model whose method has no member body (members run "
                     "one by one on the cpu)");
        return 0;
    }
    if (scn->ens.has_reference &&
        !rc_vi_kernel_ready(scn->ens.ref_model_method, scn->model)) {
        snprintf(why, why_size,
                 "the reference method %s has no member body (members run "
                 "one by one on the cpu)",
                 scn->ens.ref_model_method->name);
        return 0;
    }
    return 1;
}

/* Rows of a run of `steps` steps, a row every `every` and at the last. */
static long rc_batch_vi_rows(long steps, long every)
{
    return steps / every + 1 + (steps % every != 0);
}

/* Scenario m's description into d for `steps` steps, a row every
 * `every`; d->steps = -1 when it cannot start (the per-member engine
 * says why). */
static void rc_batch_vi_fill(const rc_scenario *m, long steps, long every,
                             rc_k_vi_member *d)
{
    rc_error err;
    if (m && m->model && m->model_method &&
        rc_vi_member_setup(m->model_method, m->model, &m->integ, d, &err) ==
            RC_OK) {
        d->steps = steps;
        d->every = every;
        d->rows = rc_batch_vi_rows(steps, every);
    } else {
        memset(d, 0, sizeof *d);
        d->steps = -1;
        d->every = 1;
        d->rec = -1;
    }
}

/* What the members of one call need besides their descriptions: member
 * j's L2 grid (rc_l2_grid_), and without slots the index of its own
 * reference's description. */
typedef struct rc_batch_vi_ref {
    long stride, own;  /* own: description of its own reference, or -1 */
    double dt_out;
} rc_batch_vi_ref;

/* Member k's description into d (values[] receives its rule values) and,
 * with a reference, what its L2 error needs into *r; without slots its
 * own reference's description into *own_d. */
static void rc_batch_vi_describe(const rc_scenario *scn,
                                 const rc_shared_refs *sr, long k,
                                 double *values, rc_k_vi_member *d,
                                 rc_batch_vi_ref *r, rc_k_vi_member *own_d)
{
    const rc_ensemble_spec *e = &scn->ens;
    rc_scenario *m = NULL;
    rc_error err;
    rc_scenario_run info;
    int ok = rc_scenario_member_(scn, k, values, &m, &err) == RC_OK;
    if (ok)
        rc_scenario_run_info(m, &info);
    rc_batch_vi_fill(ok ? m : NULL, ok ? info.steps : 0, ok ? info.every : 1,
                     d);
    if (ok && e->has_reference && d->steps >= 0) {
        int shared = sr && sr->nslots > 0;
        rc_l2_grid_(e, &info, shared, &r->stride, &r->dt_out);
        d->rec = 0; /* placed by the caller */
        if (!shared) {
            long steps, every;
            rc_own_reference_(e, m, &info, &steps, &every);
            rc_batch_vi_fill(m, steps, every, own_d);
            own_d->rec = 0;
        }
    }
    rc_scenario_free(m);
}

/* Place the records of d[0 .. nd) one after another (those with
 * rec >= 0); the doubles they need in all. */
static long rc_batch_vi_place(rc_k_vi_member *d, long nd)
{
    long j, at = 0;
    for (j = 0; j < nd; ++j) {
        long len = rc_k_vi_member_rec_doubles(&d[j]);
        d[j].rec = len > 0 ? at : -1;
        at += len;
    }
    return at;
}

/* d's record as a trace (its rows, q) for rc_l2_strided_. */
static rc_trace rc_batch_vi_trace(const rc_k_vi_member *d, double *rec)
{
    rc_trace t;
    memset(&t, 0, sizeof t);
    t.rows = t.cap = d->rows;
    t.N = d->n;
    t.q = rec + d->rec;
    return t;
}

/* One call's members and references: descriptions d[0 .. nd) (members
 * k0 .. k0+count-1 first, then, without slots, their own references),
 * results out[], records rec[] and the members' L2 grids. */
typedef struct rc_batch_vi_call {
    long count, nd, nrec;
    rc_k_vi_member *d;
    rc_k_member_out *out;
    rc_batch_vi_ref *ref;
    double *rec;
} rc_batch_vi_call;

static void rc_batch_vi_call_free(rc_batch_vi_call *c)
{
    free(c->d);
    free(c->out);
    free(c->ref);
    free(c->rec);
    memset(c, 0, sizeof *c);
}

/* Describe members k0 .. k0+count-1 (threads > 1: in parallel) and
 * place their records.  RC_ERR_NOMEM when out of memory. */
static rc_status rc_batch_vi_call_make(const rc_scenario *scn,
                                       const rc_shared_refs *sr, long k0,
                                       long count, double *values,
                                       int threads, rc_batch_vi_call *c)
{
    const rc_ensemble_spec *e = &scn->ens;
    long j, nd = e->has_reference && !(sr && sr->nslots > 0) ? 2 * count
                                                               : count;
    memset(c, 0, sizeof *c);
    c->count = count;
    c->d = (rc_k_vi_member *)calloc((size_t)nd + 1, sizeof *c->d);
    c->out = (rc_k_member_out *)calloc((size_t)nd + 1, sizeof *c->out);
    c->ref = (rc_batch_vi_ref *)calloc((size_t)count + 1, sizeof *c->ref);
    if (!c->d || !c->out || !c->ref) {
        rc_batch_vi_call_free(c);
        return RC_ERR_NOMEM;
    }
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads > 0 ? threads : 1)
    for (j = 0; j < count; ++j) {
        c->ref[j].own = -1;
        rc_batch_vi_describe(scn, sr, k0 + j, values + (k0 + j) * e->nrules,
                             &c->d[j], &c->ref[j],
                             nd > count ? &c->d[count + j] : NULL);
    }
    /* own references (described: n > 0); none for a member that cannot
     * start, whose slot then runs nothing */
    for (j = 0; nd > count && j < count; ++j) {
        if (c->d[j].steps >= 0 && c->d[count + j].n > 0)
            c->ref[j].own = count + j;
        else
            c->d[count + j].steps = -1;
    }
    c->nd = nd;
    c->nrec = rc_batch_vi_place(c->d, nd);
    if (c->nrec > 0 &&
        !(c->rec = (double *)malloc(sizeof(double) * (size_t)c->nrec))) {
        rc_batch_vi_call_free(c);
        return RC_ERR_NOMEM;
    }
    return RC_OK;
}

/* The members' rows from what the bodies left, with their L2 errors. */
static void rc_batch_vi_call_finish(const rc_scenario *scn,
                                    const rc_shared_refs *sr,
                                    const rc_batch_vi_call *c, long k0,
                                    rc_member *mb, unsigned char *redo)
{
    long j;
    for (j = 0; j < c->count; ++j) {
        rc_trace tr, tref;
        const rc_batch_vi_ref *r = &c->ref[j];
        rc_batch_member_from_out_(&c->out[j], &mb[j], &redo[j]);
        if (!scn->ens.has_reference || redo[j])
            continue;
        tr = rc_batch_vi_trace(&c->d[j], c->rec);
        if (sr && sr->nslots > 0) {
            long slot = sr->slot[k0 + j];
            if (sr->ok[slot])
                mb[j].l2 = rc_l2_strided_(&tr, &sr->traj[slot], r->stride,
                                          r->dt_out);
        } else if (r->own >= 0 && c->out[r->own].ok) {
            tref = rc_batch_vi_trace(&c->d[r->own], c->rec);
            mb[j].l2 = rc_l2_strided_(&tr, &tref, r->stride, r->dt_out);
        } else {
            /* its reference did not finish in the body: the per-member
             * engine runs both again and words what happened */
            redo[j] = 1;
        }
    }
}

/* Every description of a call, one after another on this thread (what
 * GPU thread j runs for each j). */
static rc_status rc_batch_vi_call_cpu(rc_batch_vi_call *c)
{
    rc_k_vi *w = (rc_k_vi *)calloc(1, sizeof *w);
    long j;
    if (!w)
        return RC_ERR_NOMEM;
    for (j = 0; j < c->nd; ++j)
        rc_k_vi_member_thread(w, c->d, c->out, c->rec, 0, j);
    free(w);
    return RC_OK;
}

rc_status rc_batch_run_vi_(const rc_scenario *scn, const rc_shared_refs *sr,
                           long k0, long count, double *values, rc_member *mb,
                           unsigned char *redo)
{
    rc_batch_vi_call c;
    rc_status st;
    if ((st = rc_batch_vi_call_make(scn, sr, k0, count, values, 1, &c)) !=
        RC_OK)
        return st;
    if ((st = rc_batch_vi_call_cpu(&c)) == RC_OK)
        rc_batch_vi_call_finish(scn, sr, &c, k0, mb, redo);
    rc_batch_vi_call_free(&c);
    return st;
}

/* Members a GPU call takes at most when they record their configuration
 * (a reference): bounds the host and device copies of the records. */
#define RC_VI_RECORD_CALL 4096L

rc_status rc_batch_run_cuda_vi_(const rc_scenario *scn,
                                const rc_shared_refs *sr, long k0,
                                long count, double *values, rc_member *mb,
                                unsigned char *redo, int threads,
                                rc_cuda_member_stats *stats, char *why,
                                size_t why_size)
{
#ifndef RICOCHET_HAVE_CUDA
    (void)scn;
    (void)sr;
    (void)k0;
    (void)count;
    (void)values;
    (void)mb;
    (void)redo;
    (void)threads;
    (void)stats;
    snprintf(why, why_size, "this build has no CUDA backend");
    return RC_ERR_UNSUPPORTED;
#else
    long step = scn->ens.has_reference ? RC_VI_RECORD_CALL : count, a;
    rc_status st = RC_OK;
    for (a = 0; a < count && st == RC_OK; a += step) {
        long cnt = count - a < step ? count - a : step;
        rc_cuda_member_stats one;
        rc_batch_vi_call c;
        if (rc_batch_vi_call_make(scn, sr, k0 + a, cnt, values, threads,
                                  &c) != RC_OK) {
            snprintf(why, why_size, "out of host memory for %ld members",
                     cnt);
            return RC_ERR_NOMEM;
        }
        st = rc_cuda_vi_run(c.d, c.out, c.rec, c.nd, &one, why, why_size);
        if (st == RC_OK)
            rc_batch_vi_call_finish(scn, sr, &c, k0 + a, mb + a, redo + a);
        rc_batch_vi_call_free(&c);
        if (stats && a == 0)
            *stats = one;
        else if (stats)
            stats->chunks += one.chunks;
    }
    return st;
#endif
}

void rc_batch_vi_refs_(const rc_scenario *scn, const long *rep,
                       rc_shared_refs *sr, int threads, int gpu)
{
    rc_batch_vi_call c;
    long s, *slot_of;
    rc_status st = RC_OK;
    memset(&c, 0, sizeof c);
    c.d = (rc_k_vi_member *)calloc((size_t)sr->nslots + 1, sizeof *c.d);
    c.out = (rc_k_member_out *)calloc((size_t)sr->nslots + 1, sizeof *c.out);
    slot_of = (long *)malloc(sizeof(long) * ((size_t)sr->nslots + 1));
    if (!c.d || !c.out || !slot_of) { /* the per-member engine's way */
        rc_batch_vi_call_free(&c);
        free(slot_of);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads > 0 ? threads : 1)
        for (s = 0; s < sr->nslots; ++s)
            if (rep[s] >= 0)
                rc_shared_ref_run_(scn, rep[s], &sr->traj[s], &sr->ok[s]);
        return;
    }
    /* the slots with a member in the range, in slot order */
    for (s = 0; s < sr->nslots; ++s)
        if (rep[s] >= 0)
            slot_of[c.nd++] = s;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads > 0 ? threads : 1)
    for (s = 0; s < c.nd; ++s) {
        rc_scenario *m = NULL;
        rc_error err;
        long steps = 0;
        rc_status rs =
            rc_shared_ref_scenario_(scn, rep[slot_of[s]], &m, &steps, &err);
        rc_batch_vi_fill(rs == RC_OK ? m : NULL, steps, 1, &c.d[s]);
        c.d[s].rec = 0;
        rc_scenario_free(m);
    }
    c.nrec = rc_batch_vi_place(c.d, c.nd);
    if (c.nrec > 0 &&
        !(c.rec = (double *)malloc(sizeof(double) * (size_t)c.nrec))) {
        st = RC_ERR_NOMEM;
    } else if (gpu) {
#ifdef RICOCHET_HAVE_CUDA
        char why[400]; /* a failed device: the per-member engine below */
        st = rc_cuda_vi_run(c.d, c.out, c.rec, c.nd, NULL, why, sizeof why);
#else
        st = RC_ERR_UNSUPPORTED;
#endif
    } else {
        /* one reference a thread (each its own workspace) */
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
        {
            rc_k_vi *w = (rc_k_vi *)calloc(1, sizeof *w);
            long j;
#pragma omp for schedule(dynamic, 1)
            for (j = 0; j < c.nd; ++j)
                if (w)
                    rc_k_vi_member_thread(w, c.d, c.out, c.rec, 0, j);
            free(w);
        }
    }
    /* each slot's trajectory from its record; a reference the body did
     * not finish (or one that did not run: no memory, the device failed)
     * runs in the per-member engine, which says the same or better */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads > 0 ? threads : 1)
    for (s = 0; s < c.nd; ++s) {
        long sl = slot_of[s];
        rc_trace *t = &sr->traj[sl];
        if (st == RC_OK && c.out[s].ok &&
            (t->q = (double *)malloc(sizeof(double) *
                                     (size_t)rc_k_vi_member_rec_doubles(
                                         &c.d[s]))) != NULL) {
            t->N = c.d[s].n;
            t->rows = t->cap = c.d[s].rows;
            memcpy(t->q, c.rec + c.d[s].rec,
                   sizeof(double) *
                       (size_t)rc_k_vi_member_rec_doubles(&c.d[s]));
            sr->ok[sl] = 1;
        } else {
            rc_shared_ref_run_(scn, rep[sl], t, &sr->ok[sl]);
        }
    }
    rc_batch_vi_call_free(&c);
    free(slot_of);
}

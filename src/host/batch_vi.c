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
 * the per-member engine, which words why (rc_batch_member_from_out_). */
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
    if (scn->ens.has_reference) {
        snprintf(why, why_size, "a reference run per member");
        return 0;
    }
    return 1;
}

/* Member k's description into d (values[] receives its rule values);
 * d->steps = -1 when it cannot start (the per-member engine says why). */
static void rc_batch_vi_describe(const rc_scenario *scn, long k,
                                 double *values, rc_k_vi_member *d)
{
    rc_scenario *m = NULL;
    rc_error err;
    rc_scenario_run info;
    if (rc_scenario_member_(scn, k, values, &m, &err) == RC_OK &&
        m->model && m->model_method &&
        rc_vi_member_setup(m->model_method, m->model, &m->integ, d, &err) ==
            RC_OK) {
        rc_scenario_run_info(m, &info);
        d->steps = info.steps;
        d->every = info.every;
        /* rows: every `every` steps and the last one */
        d->rows =
            info.steps / info.every + 1 + (info.steps % info.every != 0);
    } else {
        memset(d, 0, sizeof *d);
        d->steps = -1;
        d->every = 1;
    }
    rc_scenario_free(m);
}

/* The members' descriptions and results of one call. */
static rc_status rc_batch_vi_alloc(long count, rc_k_vi_member **d,
                                   rc_k_member_out **out)
{
    *d = (rc_k_vi_member *)calloc((size_t)count + 1, sizeof **d);
    *out = (rc_k_member_out *)calloc((size_t)count + 1, sizeof **out);
    if (!*d || !*out) {
        free(*d);
        free(*out);
        *d = NULL;
        *out = NULL;
        return RC_ERR_NOMEM;
    }
    return RC_OK;
}

rc_status rc_batch_run_vi_(const rc_scenario *scn, long k0, long count,
                           double *values, rc_member *mb, unsigned char *redo)
{
    const rc_ensemble_spec *e = &scn->ens;
    rc_k_vi_member *d;
    rc_k_member_out *out;
    rc_k_vi *w = (rc_k_vi *)calloc(1, sizeof *w);
    long j;
    if (!w || rc_batch_vi_alloc(count, &d, &out) != RC_OK) {
        free(w);
        return RC_ERR_NOMEM;
    }
    for (j = 0; j < count; ++j)
        rc_batch_vi_describe(scn, k0 + j, values + (k0 + j) * e->nrules,
                             &d[j]);
    /* each member start to finish: what GPU thread j runs */
    for (j = 0; j < count; ++j)
        rc_k_vi_member_thread(w, d, out, j);
    for (j = 0; j < count; ++j)
        rc_batch_member_from_out_(&out[j], &mb[j], &redo[j]);
    free(w);
    free(d);
    free(out);
    return RC_OK;
}

rc_status rc_batch_run_cuda_vi_(const rc_scenario *scn, long k0, long count,
                                double *values, rc_member *mb,
                                unsigned char *redo, int threads,
                                rc_cuda_member_stats *stats, char *why,
                                size_t why_size)
{
#ifndef RICOCHET_HAVE_CUDA
    (void)scn;
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
    const rc_ensemble_spec *e = &scn->ens;
    rc_k_vi_member *d;
    rc_k_member_out *out;
    rc_status st;
    long j;
    if (rc_batch_vi_alloc(count, &d, &out) != RC_OK) {
        snprintf(why, why_size, "out of host memory for %ld members", count);
        return RC_ERR_NOMEM;
    }
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads > 0 ? threads : 1)
    for (j = 0; j < count; ++j)
        rc_batch_vi_describe(scn, k0 + j, values + (k0 + j) * e->nrules,
                             &d[j]);
    st = rc_cuda_vi_run(d, out, count, stats, why, why_size);
    for (j = 0; st == RC_OK && j < count; ++j)
        rc_batch_member_from_out_(&out[j], &mb[j], &redo[j]);
    free(d);
    free(out);
    return st;
#endif
}

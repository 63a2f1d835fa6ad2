/* Ensemble batch engine (DESIGN §5).
 *
 * Members that differ from member 0 only in their initial state (the
 * sweeps and perturbations of positions and momenta that make up most
 * ensembles) share one model: potentials, constraints, masses and the
 * method are built once.  A batch of B members holds its state as
 * structure-of-arrays columns (coordinate c of member j at c*B + j) — the
 * layout in which one GPU thread per member reads coalesced — and each
 * member runs start to finish through rc_k_member_run
 * (src/kernels/rc_member.h): the GVI kernel body of the single-system
 * path, step after step, with the diagnostics rows' statistics.  The same
 * body is what a GPU thread runs.
 *
 * GVI's step branches per member (active sets, reflections, Newton), so
 * the CPU does not vectorise across members: each member step is scalar
 * code, and OpenMP runs batches on all cores.  What the batch buys on the
 * CPU is that a member costs a kernel call and no system object.
 *
 * Determinism: member k's arithmetic is that of the kernel body on its
 * own state, in the same order as the single-system path, so its bits do
 * not depend on the batch it is in, the batch size or the thread. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensemble_impl.h"
#include "gvi_impl.h"
#include "ricochet/run.h"
#include "../kernels/rc_member.h"

int rc_batch_plan_make_(const rc_scenario *scn, rc_batch_plan *plan,
                        char *why, size_t why_size)
{
    rc_scenario *m0 = NULL;
    rc_error err;
    rc_scenario_run info;
    memset(plan, 0, sizeof *plan);
    if (scn->integ.method != RC_METHOD_GVI) {
        snprintf(why, why_size, "method %s (the batch engine runs gvi)",
                 rc_method_name(scn->integ.method));
        return 0;
    }
    if (scn->integ.linearized) {
        snprintf(why, why_size, "linearized constraints");
        return 0;
    }
    if (scn->ens.has_reference) {
        snprintf(why, why_size, "a reference run per member");
        return 0;
    }
    if (scn->ncon == 0) {
        snprintf(why, why_size, "no constraints");
        return 0;
    }
    if (!rc_member_state_supported_(scn)) {
        snprintf(why, why_size,
                 "a rule sets a field other than a particle position or "
                 "momentum component");
        return 0;
    }
    if (rc_scenario_member_(scn, 0, NULL, &m0, &err) != RC_OK ||
        rc_scenario_build(m0, &plan->sys, &err) != RC_OK ||
        rc_system_prepare_(plan->sys) != RC_OK || !plan->sys->gvi) {
        snprintf(why, why_size, "member 0 does not build");
        rc_scenario_free(m0);
        rc_batch_plan_free_(plan);
        return 0;
    }
    rc_scenario_run_info(m0, &info);
    rc_scenario_free(m0);
    plan->view = rc_gvi_view_(plan->sys);
    plan->n = plan->sys->n;
    plan->dim = plan->sys->dim;
    plan->N = plan->n * plan->dim;
    plan->steps = info.steps;
    plan->every = info.every;
    plan->dt = scn->integ.dt;
    /* rows: every `every` steps and the last one */
    plan->rows = info.steps / info.every + 1 + (info.steps % info.every != 0);
    plan->work_doubles = rc_k_gvi_work_doubles(plan->N, plan->sys->ncon,
                                               plan->sys->n_eq);
    plan->work_ints =
        rc_k_gvi_work_ints(plan->N, plan->sys->ncon, plan->sys->n_eq);
    return 1;
}

void rc_batch_plan_free_(rc_batch_plan *plan)
{
    rc_system_free(plan->sys);
    plan->sys = NULL;
}

rc_status rc_batch_run_(const rc_scenario *scn, const rc_batch_plan *plan,
                        long k0, long B, double *values, rc_member *mb,
                        unsigned char *redo)
{
    const rc_ensemble_spec *e = &scn->ens;
    const rc_system *sys = plan->sys;
    rc_k_gvi_work w;
    int N = plan->N, c;
    long j;
    double *Q, *P, *q, *p, *block;
    int *iblock;

    Q = (double *)malloc(sizeof(double) * (size_t)(2 * N) * (size_t)B + 1);
    block = (double *)calloc((size_t)(plan->work_doubles + 2 * N + 1),
                             sizeof(double));
    iblock = (int *)calloc((size_t)(plan->work_ints + 1), sizeof(int));
    if (!Q || !block || !iblock) {
        free(Q);
        free(block);
        free(iblock);
        return RC_ERR_NOMEM;
    }
    P = Q + (long)N * B;
    q = block + plan->work_doubles; /* the member's gathered state */
    p = q + N;
    rc_k_gvi_work_carve(&w, N, sys->ncon, sys->n_eq, block, iblock);
    /* initial states into the structure-of-arrays columns */
    for (j = 0; j < B; ++j) {
        rc_member_state_(scn, k0 + j, values + (k0 + j) * e->nrules, q, p);
        for (c = 0; c < N; ++c) {
            Q[(long)c * B + j] = q[c];
            P[(long)c * B + j] = p[c];
        }
    }
    /* each member start to finish: the body a GPU thread runs */
    for (j = 0; j < B; ++j) {
        rc_k_member_out out;
        rc_k_member_run(plan->view, scn->integ.eps_g, scn->integ.eps_v, &w, q,
                        p, Q, P, B, j, plan->steps, plan->every, plan->rows,
                        plan->dt, &out);
        memset(&mb[j], 0, sizeof mb[j]);
        mb[j].fail_step = -1;
        mb[j].l2 = NAN;
        redo[j] = !out.ok;
        if (!out.ok)
            continue;
        mb[j].status = RC_MEMBER_OK;
        mb[j].steps = out.steps;
        mb[j].e0 = out.e0;
        mb[j].max_rel = out.max_rel;
        mb[j].final_rel = out.final_rel;
        mb[j].windowed = out.windowed;
        mb[j].slope = out.slope;
        mb[j].dp = out.dp;
        mb[j].dl = out.dl;
        mb[j].impacts = out.impacts;
    }
    free(Q);
    free(block);
    free(iblock);
    return RC_OK;
}

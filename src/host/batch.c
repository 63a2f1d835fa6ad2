/* Ensemble batch engine (DESIGN §5).
 *
 * Members that differ from member 0 only in their initial state (the
 * sweeps and perturbations of positions and momenta that make up most
 * ensembles) share one model: potentials, constraints, masses and the
 * method are built once.  A batch of B members holds its state as
 * structure-of-arrays columns (coordinate c of member j at c*B + j) — the
 * layout in which one GPU thread per member reads coalesced — and each
 * member runs start to finish through rc_k_member_run
 * (src/kernels/rc_member.h): the kernel body of the single-system path
 * for its method (GVI, or CVA, MCVA and the direct methods of
 * rc_baselines.h), step after step, with the diagnostics rows'
 * statistics.  The same body is what a GPU thread runs.
 *
 * GVI's step branches per member (active sets, reflections, Newton), so
 * the CPU does not vectorise across members: each member step is scalar
 * code, and OpenMP runs batches on all cores.  What the batch buys on the
 * CPU is that a member costs a kernel call and no system object.
 *
 * A model in generalized coordinates with a member body (a built-in
 * Lagrangian model of seed 001) takes the engine through batch_vi.c.
 *
 * With ensemble.reference (each member's L2 error against the same
 * member at a finer step), the design of batch_vi.c: the reference runs
 * are members of the body too.  The references shared by several members
 * (ensemble.c's slots) run first, one member each at the reference step
 * recording q at every step (rc_batch_refs_, in parallel over slots);
 * then each member records q at its rows (rc_k_member_run_rec) and its
 * L2 error is rc_l2_strided_ against its slot's record, or, without
 * slots, against its own reference run right after it in the same
 * batch, on its own output grid: the per-member engine's numbers
 * (rc_member_run), from the same grids (rc_l2_grid_,
 * rc_own_reference_grid_, rc_shared_ref_steps_).  Members that record
 * run in the scalar body (not in lanes), and on the CPU: the GPU member
 * kernels do not record.
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

/* Does the member body run this method (rc_k_method_step)?  (The
 * members' and the references' method; the lanes are GVI's:
 * rc_k_lanes_ok declines the others.) */
static int rc_batch_body_method(rc_method method)
{
    return method == RC_METHOD_GVI || method == RC_METHOD_CVA ||
           method == RC_METHOD_MCVA || method == RC_METHOD_DIRECT_ENDPOINT ||
           method == RC_METHOD_DIRECT_MIDPOINT;
}

/* Rows of a run of `steps` steps, a row every `every` and at the last. */
static long rc_batch_rows(long steps, long every)
{
    return steps / every + 1 + (steps % every != 0);
}

/* plan's model from the scenario m of one member (its system built once,
 * its kernel view and the scratch sizes), run for `steps` steps of dt, a
 * row every `every`.  0 when m does not build. */
static int rc_batch_plan_model(rc_batch_plan *plan, const rc_scenario *m,
                               long steps, long every, double dt)
{
    rc_error err;
    if (rc_scenario_build(m, &plan->sys, &err) != RC_OK ||
        rc_system_prepare_(plan->sys) != RC_OK || !plan->sys->gvi)
        return 0;
    plan->view = rc_gvi_view_(plan->sys);
    plan->n = plan->sys->n;
    plan->dim = plan->sys->dim;
    plan->N = plan->n * plan->dim;
    plan->steps = steps;
    plan->every = every;
    plan->dt = dt;
    plan->rows = rc_batch_rows(steps, every);
    plan->work_doubles = rc_k_gvi_work_doubles(plan->N, plan->sys->ncon,
                                               plan->sys->n_eq);
    plan->work_ints =
        rc_k_gvi_work_ints(plan->N, plan->sys->ncon, plan->sys->n_eq);
    return 1;
}

int rc_batch_plan_make_(const rc_scenario *scn, rc_batch_plan *plan,
                        char *why, size_t why_size)
{
    rc_scenario *m0 = NULL;
    rc_error err;
    rc_scenario_run info;
    int built;
    memset(plan, 0, sizeof *plan);
    if (scn->model) {
        /* members of a built-in model: batch_vi.c */
        plan->vi = rc_batch_vi_plan_(scn, why, why_size);
        return plan->vi;
    }
    if (!rc_batch_body_method(scn->integ.method)) {
        snprintf(why, why_size,
                 "method %s (the batch engine runs gvi, cva, mcva, "
                 "direct-endpoint and direct-midpoint)",
                 rc_method_name(scn->integ.method));
        return 0;
    }
    if (scn->integ.linearized) {
        snprintf(why, why_size, "linearized constraints");
        return 0;
    }
    if (scn->ens.has_reference &&
        !rc_batch_body_method(scn->ens.ref_method)) {
        snprintf(why, why_size,
                 "the reference method %s has no member body",
                 rc_method_name(scn->ens.ref_method));
        return 0;
    }
    if (scn->ncon == 0) {
        snprintf(why, why_size, "no constraints");
        return 0;
    }
    if (!rc_member_state_supported_(scn, &plan->params)) {
        snprintf(why, why_size,
                 "a rule sets a field other than a particle position, "
                 "momentum component, mass or radius, integrator.dt, or "
                 "integrator.method among the batch engine's methods");
        return 0;
    }
    if (rc_scenario_member_(scn, 0, NULL, &m0, &err) != RC_OK) {
        snprintf(why, why_size, "member 0 does not build");
        return 0;
    }
    rc_scenario_run_info(m0, &info);
    built = rc_batch_plan_model(plan, m0, info.steps, info.every,
                                scn->integ.dt);
    rc_scenario_free(m0);
    if (!built) {
        snprintf(why, why_size, "member 0 does not build");
        rc_batch_plan_free_(plan);
        return 0;
    }
    plan->ref = scn->ens.has_reference;
    /* lanes take a member's dt (a block's members share one) and, with
     * equality constraints, its masses; radii, methods and the masses
     * of models without equalities are the scalar body's, as are
     * members that record their configuration for a reference */
    plan->lanes = rc_batch_lanes_ok_(plan) && !plan->ref &&
                  !(plan->params & (RC_PARAM_RADIUS | RC_PARAM_METHOD)) &&
                  (!(plan->params & RC_PARAM_MASS) || plan->view.neq > 0);
    plan->dt_points = 1;
    {
        const rc_ensemble_spec *e = &scn->ens;
        int r;
        for (r = 0; r < e->nrules; ++r)
            if (!strcmp(e->rules[r].path, "integrator.dt"))
                plan->dt_points = e->grid ? rc_rule_points_(e, r) : 16;
        if (plan->dt_points > 16)
            plan->dt_points = 16;
    }
    {
        const char *one = getenv("RICOCHET_LANES_ONE_BY_ONE");
        plan->lanes_one_by_one = one && !strcmp(one, "1");
    }
    return 1;
}

void rc_batch_params_carve_(rc_member_params *mp, double *pm, int n, int N)
{
    memset(mp, 0, sizeof *mp);
    if (!pm)
        return;
    mp->mass = pm;
    mp->inv_mass = pm + n;
    mp->radius = pm + 2 * n;
    mp->mass_c = pm + 3 * n;
    mp->inv_mass_c = pm + 3 * n + N;
}

int rc_batch_member_view_(const rc_scenario *scn, const rc_batch_plan *plan,
                          long k, rc_member_params *mp, rc_k_gvi *gv)
{
    if (!plan->params) {
        mp->dt = plan->dt;
        mp->steps = plan->steps;
        mp->every = plan->every;
        mp->rows = plan->rows;
        return 1;
    }
    if (!rc_member_params_(scn, k, mp))
        return 0;
    gv->h = mp->dt;
    if (plan->params & RC_PARAM_METHOD)
        rc_gvi_view_method_(gv, &scn->integ, mp->method);
    gv->m.mass = mp->mass;
    gv->m.inv_mass = mp->inv_mass;
    gv->m.radius = mp->radius;
    gv->mass_c = mp->mass_c;
    gv->inv_mass_c = mp->inv_mass_c;
    return 1;
}

void rc_batch_plan_free_(rc_batch_plan *plan)
{
    rc_system_free(plan->sys);
    plan->sys = NULL;
}

void rc_batch_member_from_out_(const rc_k_member_out *out, rc_member *mb,
                               unsigned char *redo)
{
    memset(mb, 0, sizeof *mb);
    mb->fail_step = -1;
    mb->l2 = NAN;
    *redo = !out->ok;
    if (!out->ok)
        return;
    mb->status = RC_MEMBER_OK;
    mb->steps = out->steps;
    mb->e0 = out->e0;
    mb->max_rel = out->max_rel;
    mb->final_rel = out->final_rel;
    mb->windowed = out->windowed;
    mb->slope = out->slope;
    mb->dp = out->dp;
    mb->dl = out->dl;
    mb->impacts = out->impacts;
}

/* Grow *buf to hold n doubles; 0 when out of memory. */
static int rc_batch_grow(double **buf, long *cap, long n)
{
    double *nb;
    if (n <= *cap)
        return 1;
    nb = (double *)realloc(*buf, sizeof(double) * (size_t)n);
    if (!nb)
        return 0;
    *buf = nb;
    *cap = n;
    return 1;
}

/* Member k's reference run as a member of the body: view gv (the
 * member's model, masses and radii) at the reference step, from the
 * member's initial state (col: 2N doubles, its columns as a batch of
 * one), `steps` steps recording q at a row every `every` into rec
 * (rows x N).  1 when it finished (else the per-member engine runs it
 * and says what happened). */
static int rc_batch_ref_run(const rc_scenario *scn, rc_k_gvi gv, long k,
                            long steps, long every, rc_k_gvi_work *w,
                            double *q, double *p, double *col, double *rec)
{
    const rc_ensemble_spec *e = &scn->ens;
    rc_k_member_out out;
    int N = gv.N;
    /* rc_reference_scenario_: the reference's step and method (one the
     * body runs, rc_batch_body_method), whatever the member's */
    gv.h = e->ref_dt;
    rc_gvi_view_method_(&gv, &scn->integ, e->ref_method);
    rc_member_state_(scn, k, NULL, col, col + N);
    rc_k_member_run_rec(gv, scn->integ.eps_g, scn->integ.eps_v, w, q, p, col,
                        col + N, 1, 0, steps, every,
                        rc_batch_rows(steps, every), e->ref_dt, &out, rec);
    return out.ok;
}

/* Member k's own reference grid (ref_steps steps of the reference dt, a
 * row every ref_every) for a member run of dt, steps and every. */
static void rc_batch_own_ref_grid(const rc_ensemble_spec *e, double dt,
                                  long steps, long every, long *ref_steps,
                                  long *ref_every)
{
    rc_scenario_run info;
    memset(&info, 0, sizeof info);
    info.dt = dt;
    info.steps = steps;
    info.every = every;
    rc_own_reference_grid_(e, &info, ref_steps, ref_every);
}

/* A finished member's L2 error (rc_member_run's) from its record rec
 * (rows of q on the grid of dt, steps, every): against its slot's
 * trajectory when the plan has slots, else against rec_own, its own
 * reference's record (the grid of rc_batch_own_ref_grid).  The CPU
 * member loop and the GPU launcher both end here. */
static void rc_batch_l2_of_records(const rc_scenario *scn,
                                   const rc_batch_plan *plan, long k,
                                   double dt, long steps, long every,
                                   long rows, const double *rec,
                                   const double *rec_own, rc_member *mb)
{
    const rc_ensemble_spec *e = &scn->ens;
    const rc_shared_refs *sr = plan->refs;
    rc_scenario_run info;
    rc_trace tr, tref;
    long stride;
    double dt_out;
    memset(&info, 0, sizeof info);
    memset(&tr, 0, sizeof tr);
    info.dt = dt;
    info.steps = steps;
    info.every = every;
    tr.rows = tr.cap = rows;
    tr.N = plan->N;
    tr.q = (double *)rec;
    if (sr && sr->nslots > 0) {
        long slot = sr->slot[k];
        rc_l2_grid_(e, &info, 1, &stride, &dt_out);
        if (sr->ok[slot])
            mb->l2 = rc_l2_strided_(&tr, &sr->traj[slot], stride, dt_out);
        return;
    }
    rc_l2_grid_(e, &info, 0, &stride, &dt_out);
    tref = tr;
    tref.q = (double *)rec_own;
    mb->l2 = rc_l2_strided_(&tr, &tref, stride, dt_out);
}

/* A finished member's L2 error on the CPU: without slots its own
 * reference runs here first, into rec_own (mp->rows x N, the same
 * grid).  0 when its own reference did not finish: the per-member engine
 * then runs both and words what happened. */
static int rc_batch_member_l2(const rc_scenario *scn,
                              const rc_batch_plan *plan, long k,
                              const rc_member_params *mp, rc_k_gvi gv,
                              rc_k_gvi_work *w, double *q, double *p,
                              double *col, double *rec, double *rec_own,
                              rc_member *mb)
{
    const rc_shared_refs *sr = plan->refs;
    if (!(sr && sr->nslots > 0)) {
        long steps, every;
        rc_batch_own_ref_grid(&scn->ens, mp->dt, mp->steps, mp->every,
                              &steps, &every);
        if (!rc_batch_ref_run(scn, gv, k, steps, every, w, q, p, col,
                              rec_own))
            return 0;
    }
    rc_batch_l2_of_records(scn, plan, k, mp->dt, mp->steps, mp->every,
                           mp->rows, rec, rec_own, mb);
    return 1;
}

/* The guards of the checked mode: a neighbour's block on each side of
 * the member's, doubles NaN and ints a sentinel, as the GPU's global
 * scratch lays one member's block beside the next. */
#define RC_BATCH_GUARD_INT 0x7eadbeef

static void rc_batch_poison(double *d, long nd, int *iw, long ni)
{
    long k;
    for (k = 0; k < nd; ++k)
        d[k] = NAN;
    for (k = 0; k < ni; ++k)
        iw[k] = RC_BATCH_GUARD_INT;
}

/* The first guard entry a member changed, or -1. */
static long rc_batch_guard_changed(const double *d, long nd, const int *iw,
                                   long ni)
{
    long k;
    for (k = 0; k < nd; ++k)
        if (!isnan(d[k]))
            return k;
    for (k = 0; k < ni; ++k)
        if (iw[k] != RC_BATCH_GUARD_INT)
            return nd + k;
    return -1;
}

/* rc_batch_run_ and, with `checked`, its overrun check: the member's
 * work block (declared `shrink` doubles shorter than it needs: a test of
 * the check) between guard blocks, compared after every member. */
static rc_status rc_batch_run_impl(const rc_scenario *scn,
                                   const rc_batch_plan *plan, long k0, long B,
                                   double *values, rc_member *mb,
                                   unsigned char *redo, int checked,
                                   long shrink, char *why, size_t why_size)
{
    const rc_ensemble_spec *e = &scn->ens;
    const rc_system *sys = plan->sys;
    rc_k_gvi_work w;
    int N = plan->N, c;
    long j, nd = plan->work_doubles + 2L * N, ni = plan->work_ints;
    long gd = checked ? nd : 0, gi = checked ? ni : 0; /* guard sizes */
    long own = nd - (checked ? shrink : 0);  /* the block it may use */
    double *Q, *P, *q, *p, *block, *mine, *pm = NULL;
    double *rec = NULL, *col = NULL; /* with a reference: the member's */
    long rec_cap = 0;                /* record and its own reference's */
    int *iblock, *imine;
    rc_member_params mp;

    Q = (double *)malloc(sizeof(double) * (size_t)(2 * N) * (size_t)B + 1);
    block = (double *)calloc((size_t)(own + 2 * gd + 1), sizeof(double));
    iblock = (int *)calloc((size_t)(ni + 2 * gi + 1), sizeof(int));
    if (plan->params) /* the member's masses and radii (its view's) */
        pm = (double *)malloc(sizeof(double) * (size_t)(3 * plan->n + 2 * N));
    if (plan->ref) /* a reference's initial state, as a batch of one */
        col = (double *)malloc(sizeof(double) * (size_t)(2 * N) + 1);
    if (!Q || !block || !iblock || own < 1 || (plan->params && !pm) ||
        (plan->ref && !col)) {
        free(Q);
        free(block);
        free(iblock);
        free(pm);
        free(col);
        return RC_ERR_NOMEM;
    }
    rc_batch_params_carve_(&mp, pm, plan->n, N);
    mine = block + gd;
    imine = iblock + gi;
    if (checked) {
        rc_batch_poison(block, gd, iblock, gi);
        rc_batch_poison(mine + own, gd, imine + ni, gi);
    }
    P = Q + (long)N * B;
    q = mine + plan->work_doubles; /* the member's gathered state */
    p = q + N;
    rc_k_gvi_work_carve(&w, N, sys->ncon, sys->n_eq, mine, imine);
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
        rc_k_gvi gv = plan->view;
        if (!rc_batch_member_view_(scn, plan, k0 + j, &mp, &gv)) {
            memset(&mb[j], 0, sizeof mb[j]); /* the per-member engine */
            redo[j] = 1;                     /* words it */
            continue;
        }
        if (plan->ref && !rc_batch_grow(&rec, &rec_cap, 2 * mp.rows * N)) {
            memset(&mb[j], 0, sizeof mb[j]); /* no memory: the per-member */
            redo[j] = 1;                     /* engine runs it */
            continue;
        }
        rc_k_member_run_rec(gv, scn->integ.eps_g, scn->integ.eps_v, &w, q, p,
                            Q, P, B, j, mp.steps, mp.every, mp.rows, mp.dt,
                            &out, plan->ref ? rec : NULL);
        rc_batch_member_from_out_(&out, &mb[j], &redo[j]);
        if (plan->ref && !redo[j] &&
            !rc_batch_member_l2(scn, plan, k0 + j, &mp, gv, &w, q, p, col,
                                rec, rec + mp.rows * N, &mb[j]))
            redo[j] = 1;
        if (checked) {
            long before = rc_batch_guard_changed(block, gd, iblock, gi);
            long after =
                rc_batch_guard_changed(mine + own, gd, imine + ni, gi);
            if (before >= 0 || after >= 0) {
                snprintf(why, why_size,
                         "member %ld wrote past its scratch block (%ld "
                         "doubles, %ld ints) into the %s neighbour's, at "
                         "guard entry %ld",
                         k0 + j, own, ni, before >= 0 ? "preceding" : "next",
                         before >= 0 ? before : after);
                free(Q);
                free(block);
                free(iblock);
                free(pm);
                free(col);
                free(rec);
                return RC_ERR_STATE;
            }
        }
    }
    free(Q);
    free(block);
    free(iblock);
    free(pm);
    free(col);
    free(rec);
    return RC_OK;
}

rc_status rc_batch_run_(const rc_scenario *scn, const rc_batch_plan *plan,
                        long k0, long B, double *values, rc_member *mb,
                        unsigned char *redo)
{
    if (plan->vi)
        return rc_batch_run_vi_(scn, plan->refs, k0, B, values, mb, redo);
    if (plan->lanes)
        return rc_batch_run_lanes_(scn, plan, k0, B, values, mb, redo);
    return rc_batch_run_impl(scn, plan, k0, B, values, mb, redo, 0, 0, NULL,
                             0);
}

rc_status rc_batch_run_checked_(const rc_scenario *scn,
                                const rc_batch_plan *plan, long k0, long B,
                                double *values, rc_member *mb,
                                unsigned char *redo, long shrink, char *why,
                                size_t why_size)
{
    return rc_batch_run_impl(scn, plan, k0, B, values, mb, redo, 1, shrink,
                             why, why_size);
}

rc_status rc_batch_cuda_prepare_(char *why, size_t why_size)
{
#ifndef RICOCHET_HAVE_CUDA
    snprintf(why, why_size, "this build has no CUDA backend");
    return RC_ERR_UNSUPPORTED;
#else
    return rc_cuda_member_prepare(why, why_size);
#endif
}

#ifdef RICOCHET_HAVE_CUDA
/* The member kernel's job for n members of the plan's model from the
 * structure-of-arrays states Q0, P0 (stride n), results into out. */
static void rc_batch_member_job(rc_cuda_member_job *job,
                                const rc_scenario *scn,
                                const rc_batch_plan *plan, long n,
                                const double *Q0, const double *P0,
                                rc_k_member_out *out, long max_chunk)
{
    memset(job, 0, sizeof *job);
    job->view = plan->view;
    job->eps_g = scn->integ.eps_g;
    job->eps_v = scn->integ.eps_v;
    job->steps = plan->steps;
    job->every = plan->every;
    job->rows = plan->rows;
    job->dt = plan->dt;
    job->members = n;
    job->Q0 = Q0;
    job->P0 = P0;
    job->out = out;
    job->max_chunk = max_chunk;
}

/* Host memory for the records of one sub-batch of members with a
 * reference on the GPU (their rows, and their own references' rows). */
#define RC_BATCH_CUDA_REC_BYTES (256L << 20)

/* Members k0 .. k0+count-1 with a reference (plan->ref) on the GPU, from
 * their initial states Q, P (structure-of-arrays over count members):
 * the member kernel records q at their rows (rc_k_member_run_rec, as the
 * CPU loop); without slots a second launch runs the same members as
 * their own references (the reference's dt and method: one view, since
 * plan->params is 0 here) recording on their grid; then each member's
 * L2 error on the host, the CPU loop's rc_batch_l2_of_records.  Slots'
 * trajectories were run before (rc_batch_refs_).  In sub-batches whose
 * records fit RC_BATCH_CUDA_REC_BYTES.  mb and redo are filled here. */
static rc_status rc_batch_cuda_refs(const rc_scenario *scn,
                                    const rc_batch_plan *plan, long k0,
                                    long count, const double *Q,
                                    const double *P, rc_k_member_out *out,
                                    rc_member *mb, unsigned char *redo,
                                    int threads, long max_chunk,
                                    rc_cuda_member_stats *stats, char *why,
                                    size_t why_size)
{
    const rc_ensemble_spec *e = &scn->ens;
    const int N = plan->N;
    const int own = !(plan->refs && plan->refs->nslots > 0);
    long ref_steps = 0, ref_every = 1, ref_rows = 0, sub, j0, per;
    double *Qs, *rec, *rec_own = NULL;
    rc_k_member_out *out_ref = NULL;
    rc_k_gvi rv = plan->view;
    rc_status st = RC_OK;
    if (own) {
        rc_batch_own_ref_grid(e, plan->dt, plan->steps, plan->every,
                              &ref_steps, &ref_every);
        ref_rows = rc_batch_rows(ref_steps, ref_every);
        rv.h = e->ref_dt; /* rc_batch_ref_run's view */
        rc_gvi_view_method_(&rv, &scn->integ, e->ref_method);
    }
    per = (plan->rows + ref_rows) * N * (long)sizeof(double);
    sub = RC_BATCH_CUDA_REC_BYTES / (per > 0 ? per : 1);
    sub = sub < 1 ? 1 : sub > count ? count : sub;
    Qs = (double *)malloc(sizeof(double) * (size_t)(2 * N) * (size_t)sub + 1);
    rec = (double *)malloc(sizeof(double) * (size_t)plan->rows *
                               (size_t)N * (size_t)sub + 1);
    if (own) {
        rec_own = (double *)malloc(sizeof(double) * (size_t)ref_rows *
                                       (size_t)N * (size_t)sub + 1);
        out_ref = (rc_k_member_out *)malloc(sizeof *out_ref * (size_t)sub +
                                            1);
    }
    if (!Qs || !rec || (own && (!rec_own || !out_ref))) {
        snprintf(why, why_size,
                 "out of host memory for the records of %ld members", sub);
        st = RC_ERR_NOMEM;
    }
    for (j0 = 0; st == RC_OK && j0 < count; j0 += sub) {
        long n = count - j0 < sub ? count - j0 : sub, j;
        int c;
        rc_cuda_member_job job;
        for (c = 0; c < N; ++c) {
            memcpy(Qs + (long)c * n, Q + (long)c * count + j0,
                   sizeof(double) * (size_t)n);
            memcpy(Qs + (long)(N + c) * n, P + (long)c * count + j0,
                   sizeof(double) * (size_t)n);
        }
        rc_batch_member_job(&job, scn, plan, n, Qs, Qs + (long)N * n,
                            out + j0, max_chunk);
        job.qrec = rec;
        st = rc_cuda_member_run(&job, j0 == 0 ? stats : NULL, why,
                                why_size);
        if (st == RC_OK && own) {
            job.view = rv;
            job.steps = ref_steps;
            job.every = ref_every;
            job.rows = ref_rows;
            job.dt = e->ref_dt;
            job.out = out_ref;
            job.qrec = rec_own;
            st = rc_cuda_member_run(&job, NULL, why, why_size);
        }
        if (st != RC_OK)
            break;
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : 1)
        for (j = 0; j < n; ++j) {
            long m = j0 + j;
            rc_batch_member_from_out_(&out[m], &mb[m], &redo[m]);
            if (redo[m])
                continue;
            if (own && !out_ref[j].ok) { /* the per-member engine runs */
                redo[m] = 1;             /* both and words it */
                continue;
            }
            rc_batch_l2_of_records(scn, plan, k0 + m, plan->dt, plan->steps,
                                   plan->every, plan->rows,
                                   rec + j * plan->rows * N,
                                   own ? rec_own + j * ref_rows * N : NULL,
                                   &mb[m]);
        }
    }
    free(Qs);
    free(rec);
    free(rec_own);
    free(out_ref);
    return st;
}
#endif

rc_status rc_batch_run_cuda_(const rc_scenario *scn, const rc_batch_plan *plan,
                             long k0, long count, double *values,
                             rc_member *mb, unsigned char *redo, int threads,
                             rc_cuda_member_stats *stats, char *why,
                             size_t why_size)
{
#ifndef RICOCHET_HAVE_CUDA
    (void)scn;
    (void)plan;
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
    /* the GPU's lane kernels: models without equalities (the CPU's lane
     * path also steps equality-constrained ones, rc_k_lanes_eq_step) */
    int N = plan->N, c, lanes = plan->lanes && plan->view.neq == 0;
    long j, max_chunk;
    double *Q, *P, *qp, *eps = NULL;
    unsigned char *live = NULL;
    rc_k_member_out *out;
    rc_cuda_member_job job;
    rc_status st = RC_ERR_UNSUPPORTED;
    if (plan->vi)
        return rc_batch_run_cuda_vi_(scn, plan->refs, k0, count, values,
                                     mb, redo,
                                     threads, stats, why, why_size);
    if (plan->params) {
        snprintf(why, why_size,
                 "the GPU member kernels take one dt, one method and one "
                 "set of masses and radii per ensemble");
        return RC_ERR_UNSUPPORTED;
    }
    if (plan->ref) /* the member kernel records; the lanes do not */
        lanes = 0;
    Q = (double *)malloc(sizeof(double) * (size_t)(2 * N) * (size_t)count + 1);
    /* member j's q, p at j*3N, and a gradient's scratch after them */
    qp = (double *)malloc(sizeof(double) * (size_t)(3 * N) * (size_t)count + 1);
    out = (rc_k_member_out *)malloc(sizeof *out * (size_t)count + 1);
    if (lanes) {
        eps = (double *)malloc(sizeof(double) * 2 * (size_t)count + 1);
        live = (unsigned char *)malloc((size_t)count + 1);
    }
    if (!Q || !qp || !out || (lanes && (!eps || !live))) {
        free(Q);
        free(qp);
        free(out);
        free(eps);
        free(live);
        snprintf(why, why_size, "out of host memory for %ld members", count);
        return RC_ERR_NOMEM;
    }
    P = Q + (long)N * count;
    /* initial states, member by member, then into the structure-of-arrays
     * columns the device reads; for the lane kernels also each member's
     * tolerances and start check (rc_k_member_start, as the CPU's lane
     * path makes them) */
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : 1)
    for (j = 0; j < count; ++j) {
        double *q = qp + j * 3 * N, *p = q + N;
        rc_member_state_(scn, k0 + j, values + (k0 + j) * e->nrules, q, p);
        if (lanes) {
            rc_k_gvi gj = plan->view;
            rc_k_gvi_work w;
            memset(&w, 0, sizeof w);
            w.g0 = p + N;
            live[j] = (unsigned char)rc_k_member_start(
                &gj, scn->integ.eps_g, scn->integ.eps_v, &w, q, p);
            eps[j] = gj.eps_g;
            eps[count + j] = gj.eps_v;
        }
    }
    for (c = 0; c < N; ++c)
        for (j = 0; j < count; ++j) {
            Q[(long)c * count + j] = qp[j * 3 * N + c];
            P[(long)c * count + j] = qp[j * 3 * N + N + c];
        }
    /* RICOCHET_GPU_MAX_CHUNK: most members a launch (a test's knob: the
     * chunked path of an ensemble that would fit one launch) */
    max_chunk = getenv("RICOCHET_GPU_MAX_CHUNK")
                    ? atol(getenv("RICOCHET_GPU_MAX_CHUNK"))
                    : 0;
    if (plan->ref) /* fills mb and redo itself */
        st = rc_batch_cuda_refs(scn, plan, k0, count, Q, P, out, mb, redo,
                                threads, max_chunk, stats, why, why_size);
    else if (lanes) {
        rc_cuda_lanes_job lj;
        memset(&lj, 0, sizeof lj);
        lj.max_chunk = max_chunk;
        lj.view = plan->view;
        lj.steps = plan->steps;
        lj.every = plan->every;
        lj.rows = plan->rows;
        lj.dt = plan->dt;
        lj.members = count;
        lj.Q0 = Q;
        lj.P0 = P;
        lj.eps_g = eps;
        lj.eps_v = eps + count;
        lj.live0 = live;
        lj.out = out;
        st = rc_cuda_lanes_run(&lj, stats, why, why_size);
    }
    if (st == RC_ERR_UNSUPPORTED) { /* not in lanes, or too large for them */
        rc_batch_member_job(&job, scn, plan, count, Q, P, out, max_chunk);
        st = rc_cuda_member_run(&job, stats, why, why_size);
    }
    for (j = 0; st == RC_OK && !plan->ref && j < count; ++j)
        rc_batch_member_from_out_(&out[j], &mb[j], &redo[j]);
    free(Q);
    free(qp);
    free(out);
    free(eps);
    free(live);
    return st;
#endif
}

int rc_batch_refs_(const rc_scenario *scn, const long *rep,
                   rc_shared_refs *sr, int threads, char *why,
                   size_t why_size)
{
    const rc_ensemble_spec *e = &scn->ens;
    rc_batch_plan rp;
    rc_scenario *m = NULL;
    rc_error err;
    long steps = 0, s;
    int params = 0, built;
    memset(&rp, 0, sizeof rp);
    if (scn->model) {
        snprintf(why, why_size, "a model (batch_vi.c runs its references)");
        return 0;
    }
    if (!e->has_reference || !rc_batch_body_method(e->ref_method)) {
        snprintf(why, why_size, "the reference method %s has no member body",
                 rc_method_name(e->ref_method));
        return 0;
    }
    if (scn->ncon == 0 || scn->integ.linearized ||
        !rc_reference_state_supported_(scn, &params)) {
        snprintf(why, why_size,
                 "%s", scn->ncon == 0 ? "no constraints"
                       : scn->integ.linearized
                           ? "linearized constraints"
                           : "a rule sets a field other than a particle "
                             "position, momentum component, mass or "
                             "radius, integrator.dt or integrator.method");
        return 0;
    }
    /* the model once, from member 0's reference (the slots differ only in
     * their initial states, masses and radii) */
    if (rc_shared_ref_scenario_(scn, 0, &m, &steps, &err) != RC_OK) {
        snprintf(why, why_size, "member 0's reference does not build");
        return 0;
    }
    built = rc_batch_plan_model(&rp, m, steps, 1, e->ref_dt);
    rc_scenario_free(m);
    if (!built) {
        snprintf(why, why_size, "member 0's reference does not build");
        rc_batch_plan_free_(&rp);
        return 0;
    }
    rp.params = params;
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
        /* each thread its own scratch: the work block, q and p, the
         * initial state's columns (2N), the member's masses and radii
         * (3n + 2N, rc_batch_params_carve_) */
        int N = rp.N;
        double *block = (double *)malloc(
            sizeof(double) * (size_t)(rp.work_doubles + 6 * N + 3 * rp.n) +
            1);
        int *iblock = (int *)malloc(sizeof(int) * (size_t)rp.work_ints + 1);
        rc_k_gvi_work w;
        rc_member_params mp;
        if (block && iblock) {
            rc_k_gvi_work_carve(&w, N, rp.sys->ncon, rp.sys->n_eq, block,
                                iblock);
            rc_batch_params_carve_(&mp, block + rp.work_doubles + 4 * N,
                                   rp.n, N);
        }
#pragma omp for schedule(dynamic, 1)
        for (s = 0; s < sr->nslots; ++s) {
            rc_trace *t = &sr->traj[s];
            rc_k_gvi gv = rp.view;
            double *q = block ? block + rp.work_doubles : NULL;
            if (rep[s] < 0)
                continue;
            if (q && iblock &&
                rc_batch_member_view_(scn, &rp, rep[s], &mp, &gv) &&
                (t->q = (double *)malloc(sizeof(double) * (size_t)rp.rows *
                                         (size_t)N)) != NULL &&
                rc_batch_ref_run(scn, gv, rep[s], rp.steps, 1, &w, q, q + N,
                                 q + 2 * N, t->q)) {
                t->N = N;
                t->rows = t->cap = rp.rows;
                sr->ok[s] = 1;
            } else {
                /* the per-member engine's way (no memory, or it did not
                 * finish in the body: that engine says the same) */
                free(t->q);
                memset(t, 0, sizeof *t);
                rc_shared_ref_run_(scn, rep[s], t, &sr->ok[s]);
            }
        }
        free(block);
        free(iblock);
    }
    rc_batch_plan_free_(&rp);
    return 1;
}

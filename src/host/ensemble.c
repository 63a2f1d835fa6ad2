/* Ensemble driver: every member of an ensemble scenario, in parallel
 * (OpenMP), each member sequential and independent, so member k's
 * results are the same bits for any thread count and batch size.
 *
 * Two engines run members, with the same kernel body per step:
 *   batch       members that differ only in their initial state run in
 *               structure-of-arrays batches on one shared model
 *               (batch.c); failed, invalid and traced members are re-run
 *               by the per-member engine, which words their messages
 *               and writes their traces;
 *   per-member  every other ensemble (a varied method or solver
 *               setting, reference runs, avi): each member is its own
 *               small rc_system built from its own scenario.
 * Members of a built-in Lagrangian model (seed 001) take the batch
 * engine's place through batch_vi.c (each member described from its own
 * scenario, then run by one member body, CPU or GPU thread); models given
 * by expressions run per member.
 * The batch engine's members run on the CPU (OpenMP across batches) or,
 * when opt->device asks for it, on a GPU (rc_batch_run_cuda_: one
 * thread per member, the same kernel body); the per-member engine, and
 * the re-runs, are always on the CPU.
 *
 * A run is two halves (ensemble_impl.h): the members of a range run
 * (rc_ensemble_run_members_, every member without --members), then the
 * outputs are written from the members' records (rc_ensemble_write_).
 * `ricochet merge` (rc_ensemble_merge) fills the records from the
 * ranges' range.rcp and MPI rank 0 (src/host/cli/mpi.c) from the other
 * ranks; both then write through the same rc_ensemble_write_, so their
 * statistics are a single run's by construction. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dirent.h>
#include <sys/stat.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <cjson/cJSON.h>

#include "clock.h"
#include "fmt_double.h"
#include "ricochet/ensemble.h"
#include "checkpoint.h"
#include "output.h"
#include "ensemble_impl.h"
#include "model/model.h"
#include "tables.h"

int rc_scenario_is_ensemble(const rc_scenario *scn)
{
    return scn && scn->ens.present;
}

long rc_scenario_ensemble_members(const rc_scenario *scn)
{
    return scn && scn->ens.present ? scn->ens.members : 0;
}

static const char *const rc_member_status[] = {"ok", "failed", "invalid"};

static int rc_trace_push(rc_trace *t, double rel, const double *q)
{
    if (t->rows == t->cap) {
        long cap = t->cap ? 2 * t->cap : 256;
        double *nr = (double *)realloc(t->rel, sizeof(double) * (size_t)cap);
        if (!nr)
            return -1;
        t->rel = nr;
        if (t->N > 0) {
            double *nq = (double *)realloc(
                t->q, sizeof(double) * (size_t)cap * (size_t)t->N);
            if (!nq)
                return -1;
            t->q = nq;
        }
        t->cap = cap;
    }
    t->rel[t->rows] = rel;
    if (t->N > 0)
        memcpy(t->q + t->rows * t->N, q, sizeof(double) * (size_t)t->N);
    t->rows++;
    return 0;
}

/* What a member runs: a particle system, or a model in generalized
 * coordinates stepped by its method (src/host/model/).  The member loop
 * below is the same for both. */
typedef struct rc_member_sim {
    rc_system *sys;                /* a particle system, or NULL */
    const rc_model *model;         /* a model: its method, workspace and */
    const rc_model_method *method; /* state */
    void *ws;
    rc_model_state st;
    rc_model_diag last;            /* the model's latest diagnostics row */
    rc_error err;                  /* the model step's failure */
} rc_member_sim;

/* The member's simulation from its scenario (m outlives it). */
static rc_status rc_sim_make(const rc_scenario *m, rc_member_sim *sim,
                             rc_error *err)
{
    rc_status st;
    memset(sim, 0, sizeof *sim);
    if (!m->model) {
        if ((st = rc_scenario_build(m, &sim->sys, err)) == RC_OK)
            rc_system_set_threads(sim->sys, 1); /* parallel across members */
        return st;
    }
    sim->model = m->model;
    sim->method = m->model_method;
    if ((st = sim->method->create(m->model, &m->integ, &sim->ws, err)) !=
        RC_OK)
        return st;
    if (rc_model_state_init(m->model, &sim->st) != RC_OK) {
        err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return RC_ERR_NOMEM;
    }
    return RC_OK;
}

static void rc_sim_free(rc_member_sim *sim)
{
    rc_system_free(sim->sys);
    if (sim->ws)
        sim->method->destroy(sim->ws);
    rc_model_state_free(&sim->st);
    memset(sim, 0, sizeof *sim);
}

/* Coordinates the member's trace records per row. */
static int rc_sim_coords(const rc_scenario *m)
{
    return m->model ? m->model->n : m->n * m->dimension;
}

static rc_status rc_sim_diagnostics(rc_member_sim *sim, rc_diagnostics *d)
{
    if (sim->sys)
        return rc_system_diagnostics(sim->sys, d);
    sim->method->diagnose(sim->ws, &sim->st, &sim->last);
    rc_model_diag_to_row(&sim->st, &sim->last, d);
    return RC_OK;
}

static rc_status rc_sim_step(rc_member_sim *sim)
{
    if (sim->sys)
        return rc_system_step(sim->sys, 1);
    memset(&sim->err, 0, sizeof sim->err);
    return sim->method->step(sim->ws, &sim->st, &sim->err);
}

static const char *rc_sim_message(const rc_member_sim *sim)
{
    return sim->sys ? rc_system_message(sim->sys) : sim->err.message;
}

static void rc_sim_get_q(const rc_member_sim *sim, double *q)
{
    if (sim->sys)
        rc_system_get_state(sim->sys, q, NULL);
    else
        memcpy(q, sim->st.q, sizeof(double) * (size_t)sim->model->n);
}

static void rc_sim_csv_header(const rc_member_sim *sim, FILE *csv)
{
    if (sim->sys)
        rc_out_diagnostics_header(csv);
    else
        rc_model_csv_header(csv, sim->model);
}

/* The row rc_sim_diagnostics just made, into a traced member's CSV. */
static void rc_sim_csv_row(const rc_member_sim *sim, FILE *csv,
                           const rc_diagnostics *d)
{
    if (sim->sys)
        rc_out_diagnostics_row(csv, d);
    else
        rc_model_csv_row(csv, sim->model, &sim->st, &sim->last);
}

/* Run a member's simulation for `steps` steps, a row every `every`;
 * fills the member's energy/momentum statistics and the trace.  Optional
 * CSV of the rows (traced members). */
static void rc_member_integrate(rc_member_sim *sim, long steps, long every,
                                rc_member *mb, rc_trace *tr, FILE *csv)
{
    rc_diagnostics d, d0;
    double st = 0.0, sy = 0.0, stt = 0.0, sty = 0.0, scale = 1.0;
    long step;
    double *qbuf = tr->N > 0 ? (double *)malloc(sizeof(double) * (size_t)tr->N)
                             : NULL;
    if (csv)
        rc_sim_csv_header(sim, csv);
    mb->fail_step = -1;
    for (step = 0;; ++step) {
        int last = step == steps;
        if (step % every == 0 || last) {
            double rel;
            int k;
            if (rc_sim_diagnostics(sim, &d) != RC_OK) {
                mb->status = RC_MEMBER_FAILED;
                mb->fail_step = step;
                snprintf(mb->message, sizeof mb->message,
                         "diagnostics failed: %.170s", rc_sim_message(sim));
                break;
            }
            if (step == 0) {
                d0 = d;
                scale = rc_energy_scale(&d0);
                mb->e0 = d.energy;
            }
            rel = (d.energy - d0.energy) / scale;
            mb->max_rel = fmax(mb->max_rel, fabs(rel));
            mb->final_rel = rel;
            {
                double dp = 0.0, dl = 0.0;
                for (k = 0; k < 3; ++k) {
                    dp += (d.momentum[k] - d0.momentum[k]) *
                          (d.momentum[k] - d0.momentum[k]);
                    dl += (d.angular_momentum[k] - d0.angular_momentum[k]) *
                          (d.angular_momentum[k] - d0.angular_momentum[k]);
                }
                mb->dp = fmax(mb->dp, sqrt(dp));
                mb->dl = fmax(mb->dl, sqrt(dl));
            }
            st += d.time;
            sy += rel;
            stt += d.time * d.time;
            sty += d.time * rel;
            if (qbuf)
                rc_sim_get_q(sim, qbuf);
            if (rc_trace_push(tr, rel, qbuf) != 0) {
                mb->status = RC_MEMBER_FAILED;
                snprintf(mb->message, sizeof mb->message, "out of memory");
                break;
            }
            if (csv)
                rc_sim_csv_row(sim, csv, &d);
            mb->impacts = d.reflections_total;
            if (!isfinite(d.energy)) {
                /* finite state, overflowing energy: blown up all the
                 * same (ok members must have finite errors) */
                mb->status = RC_MEMBER_FAILED;
                mb->fail_step = step;
                snprintf(mb->message, sizeof mb->message,
                         "energy became non-finite at step %ld (t = %g); "
                         "the time step is probably too large",
                         step, d.time);
                break;
            }
        }
        if (last)
            break;
        if (rc_sim_step(sim) != RC_OK) {
            mb->status = RC_MEMBER_FAILED;
            mb->fail_step = step + 1;
            snprintf(mb->message, sizeof mb->message, "%.199s",
                     rc_sim_message(sim));
            break;
        }
        mb->steps = step + 1;
    }
    free(qbuf);
    {
        double n = (double)tr->rows, den = n * stt - st * st;
        mb->slope = tr->rows >= 2 && fabs(den) > 0.0
                        ? (n * sty - st * sy) / den
                        : 0.0;
    }
    /* windowed drift: ten equal windows of rows, as in summary.json */
    {
        long w = tr->rows / 10, a, i;
        double first = 0.0;
        mb->windowed = 0.0;
        for (a = 0; w >= 1 && a < 10; ++a) {
            double mean = 0.0;
            for (i = a * w; i < (a + 1) * w; ++i)
                mean += tr->rel[i];
            mean /= (double)w;
            if (a == 0)
                first = mean;
            mb->windowed = fmax(mb->windowed, fabs(mean - first));
        }
    }
}

/* Remove traces/member_*.csv and .partial of an earlier run in out_dir,
 * so that no trace can pass for output of this run. */
static rc_status rc_remove_stale_traces(const char *out_dir, rc_error *err)
{
    char dir[1100], names[64][256];
    DIR *d;
    struct dirent *ent;
    rc_status st = RC_OK;
    int n, k;
    snprintf(dir, sizeof dir, "%s/traces", out_dir);
    do { /* in batches: no unlink while readdir walks the directory */
        n = 0;
        if (!(d = opendir(dir)))
            return RC_OK;
        while (n < 64 && (ent = readdir(d)) != NULL)
            if (!strncmp(ent->d_name, "member_", 7) &&
                strstr(ent->d_name, ".csv") &&
                strlen(ent->d_name) < sizeof names[0])
                snprintf(names[n++], sizeof names[0], "%s", ent->d_name);
        closedir(d);
        for (k = 0; k < n && st == RC_OK; ++k)
            st = rc_out_remove_stale(dir, names[k], err);
    } while (n == 64 && st == RC_OK);
    return st;
}

/* Does rule r change the reference?  (The step and the method do not.) */
static int rc_rule_keys_reference(const rc_ensemble_spec *e, int r)
{
    return strcmp(e->rules[r].path, "integrator.dt") &&
           strcmp(e->rules[r].path, "integrator.method");
}

/* An exact key of member k's reference: members with equal keys differ
 * only in integrator.dt and integrator.method.  In a grid, the mixed-
 * radix number of the other axes' indices; a random rule, or any other
 * rule outside a grid, makes every member its own key. */
static long rc_reference_key(const rc_ensemble_spec *e, long k)
{
    long key = 0;
    int r;
    for (r = e->nrules - 1; r >= 0; --r) {
        if (!rc_rule_keys_reference(e, r))
            continue;
        if (!e->grid || e->rules[r].kind == RC_VARY_UNIFORM ||
            e->rules[r].kind == RC_VARY_NORMAL)
            return k;
        key = key * rc_rule_points_(e, r) + rc_rule_index_(e, k, r);
    }
    return key;
}

typedef struct rc_keyed {
    long key, member;
} rc_keyed;

static int rc_cmp_keyed(const void *pa, const void *pb)
{
    const rc_keyed *a = (const rc_keyed *)pa, *b = (const rc_keyed *)pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->member > b->member) - (a->member < b->member);
}

/* The reference runs, as both engines make them (ensemble_impl.h says
 * what each function does): one definition of each grid and step count,
 * so that the batch engine's references (batch_vi.c) are the per-member
 * engine's. */
void rc_reference_scenario_(const rc_ensemble_spec *e, rc_scenario *m)
{
    m->integ.dt = e->ref_dt;
    m->integ.method = e->ref_method;
    if (m->model)
        m->model_method = e->ref_model_method;
}

rc_status rc_shared_ref_scenario_(const rc_scenario *base, long rep,
                                  rc_scenario **m, long *steps,
                                  rc_error *err)
{
    rc_scenario_run info;
    rc_status st;
    *m = NULL;
    *steps = 0;
    if ((st = rc_scenario_member_(base, rep, NULL, m, err)) != RC_OK)
        return st;
    rc_scenario_run_info(*m, &info);
    *steps = rc_shared_ref_steps_(&base->ens, info.duration);
    rc_reference_scenario_(&base->ens, *m);
    (*m)->every = 1;
    return RC_OK;
}

long rc_shared_ref_steps_(const rc_ensemble_spec *e, double duration)
{
    /* the whole duration at the reference step, so that members with any
     * step size (whose own step count rounds T/dt) find their rows in it */
    return (long)llround(duration / e->ref_dt);
}

void rc_own_reference_grid_(const rc_ensemble_spec *e,
                            const rc_scenario_run *info, long *steps,
                            long *every)
{
    long ratio = (long)floor(info->dt / e->ref_dt + 0.5);
    *every = info->every * ratio;
    *steps = info->steps * ratio;
}

void rc_own_reference_(const rc_ensemble_spec *e, rc_scenario *m,
                       const rc_scenario_run *info, long *steps,
                       long *every)
{
    rc_reference_scenario_(e, m);
    rc_own_reference_grid_(e, info, steps, every);
    m->every = *every;
}

void rc_l2_grid_(const rc_ensemble_spec *e, const rc_scenario_run *info,
                 int shared, long *stride, double *dt_out)
{
    long ratio = (long)floor(info->dt / e->ref_dt + 0.5);
    *stride = shared ? info->every * ratio : 1;
    *dt_out = (double)info->every * info->dt;
}

void rc_shared_ref_run_(const rc_scenario *base, long rep, rc_trace *traj,
                        int *ok)
{
    rc_scenario *m = NULL;
    rc_member_sim sim;
    rc_error err;
    rc_member ref;
    long steps;
    *ok = 0;
    memset(&sim, 0, sizeof sim);
    memset(&ref, 0, sizeof ref);
    if (rc_shared_ref_scenario_(base, rep, &m, &steps, &err) == RC_OK) {
        traj->N = rc_sim_coords(m);
        if (rc_sim_make(m, &sim, &err) == RC_OK) {
            rc_member_integrate(&sim, steps, 1, &ref, traj, NULL);
            *ok = ref.status == RC_MEMBER_OK;
        }
    }
    rc_sim_free(&sim);
    rc_scenario_free(m);
}

/* Slots for the members, when at least two members share one and the
 * recorded trajectories fit in 1 GiB; otherwise nslots = 0 and every
 * member runs its own reference. */
void rc_shared_refs_plan_(const rc_scenario *base, rc_shared_refs *sr)
{
    const rc_ensemble_spec *e = &base->ens;
    long n = e->members, k, s = -1;
    rc_keyed *order = NULL;
    double bytes;
    rc_scenario_run info;
    memset(sr, 0, sizeof *sr);
    if (!e->has_reference || n < 2)
        return;
    order = (rc_keyed *)malloc(sizeof(rc_keyed) * (size_t)n);
    sr->slot = (long *)malloc(sizeof(long) * (size_t)n);
    if (!order || !sr->slot)
        goto none;
    for (k = 0; k < n; ++k) {
        order[k].key = rc_reference_key(e, k);
        order[k].member = k;
    }
    qsort(order, (size_t)n, sizeof(rc_keyed), rc_cmp_keyed);
    for (k = 0; k < n; ++k) {
        if (k == 0 || order[k - 1].key != order[k].key)
            ++s;
        sr->slot[order[k].member] = s;
    }
    sr->nslots = s + 1;
    rc_scenario_run_info(base, &info);
    bytes = (double)sr->nslots * (info.duration / e->ref_dt + 1.0) *
            (double)rc_sim_coords(base) * 8.0;
    if (sr->nslots == n || bytes > 1073741824.0)
        goto none;
    sr->traj = (rc_trace *)calloc((size_t)sr->nslots, sizeof(rc_trace));
    sr->ok = (int *)calloc((size_t)sr->nslots, sizeof(int));
    if (!sr->traj || !sr->ok)
        goto none;
    free(order);
    return;
none:
    free(order);
    free(sr->slot);
    free(sr->traj);
    free(sr->ok);
    memset(sr, 0, sizeof *sr);
}

void rc_shared_refs_free_(rc_shared_refs *sr)
{
    long s;
    for (s = 0; sr->traj && s < sr->nslots; ++s) {
        free(sr->traj[s].rel);
        free(sr->traj[s].q);
    }
    free(sr->slot);
    free(sr->traj);
    free(sr->ok);
    memset(sr, 0, sizeof *sr);
}

double rc_l2_strided_(const rc_trace *a, const rc_trace *ref, long stride,
                      double dt_out)
{
    long r;
    int i;
    double s = 0.0;
    for (r = 0; r < a->rows && r * stride < ref->rows; ++r)
        for (i = 0; i < a->N; ++i) {
            double x = a->q[r * a->N + i] - ref->q[r * stride * a->N + i];
            s += x * x;
        }
    return sqrt(s * dt_out);
}

static int rc_is_traced(const rc_ensemble_spec *e, long k)
{
    int j;
    for (j = 0; j < e->ntrace; ++j)
        if (e->trace[j] == k)
            return 1;
    return 0;
}

/* Member k from start to finish. */
static void rc_member_run(const rc_scenario *base, long k, double *values,
                          const char *out_dir, const rc_shared_refs *sr,
                          rc_member *mb)
{
    const rc_ensemble_spec *e = &base->ens;
    rc_scenario *m = NULL;
    rc_member_sim sim;
    rc_error err;
    rc_scenario_run info;
    rc_trace tr, tref;
    rc_outfile tf;
    memset(&sim, 0, sizeof sim);
    memset(mb, 0, sizeof *mb);
    memset(&tr, 0, sizeof tr);
    memset(&tref, 0, sizeof tref);
    memset(&tf, 0, sizeof tf);
    mb->fail_step = -1;
    mb->l2 = NAN;
    if (rc_scenario_member_(base, k, values, &m, &err) != RC_OK ||
        rc_sim_make(m, &sim, &err) != RC_OK) {
        char buf[1500];
        mb->status = RC_MEMBER_INVALID;
        snprintf(mb->message, sizeof mb->message, "%s",
                 rc_error_format(&err, buf, sizeof buf));
        rc_sim_free(&sim);
        rc_scenario_free(m);
        return;
    }
    rc_scenario_run_info(m, &info);
    if (e->has_reference)
        tr.N = tref.N = rc_sim_coords(m);
    if (rc_is_traced(e, k)) {
        char name[64];
        rc_error werr;
        snprintf(name, sizeof name, "traces/member_%ld.csv", k);
        if (rc_out_open(&tf, out_dir, name, &werr) != RC_OK)
            tf.f = NULL;
    }
    rc_member_integrate(&sim, info.steps, info.every, mb, &tr, tf.f);
    if (tf.f) {
        rc_error werr;
        if (mb->status == RC_MEMBER_OK) {
            /* complete, but named .partial until the ensemble commits
             * its outputs (rc_ensemble_run); a trace that cannot be
             * written fails the run (it is an output), not the member */
            errno = 0;
            if (rc_out_finish(&tf, &werr) != RC_OK)
                mb->trace_errno = errno ? errno : EIO;
        } else {
            rc_out_abandon(&tf);
        }
    }
    rc_sim_free(&sim);
    if (e->has_reference && mb->status == RC_MEMBER_OK && sr->nslots > 0) {
        long slot = sr->slot[k], stride;
        double dt_out;
        rc_l2_grid_(e, &info, 1, &stride, &dt_out);
        if (sr->ok[slot])
            mb->l2 = rc_l2_strided_(&tr, &sr->traj[slot], stride, dt_out);
    } else if (e->has_reference && mb->status == RC_MEMBER_OK) {
        /* the same member at the reference step and method, sampled on
         * the same output grid */
        long steps, every, stride;
        double dt_out;
        rc_member ref;
        memset(&ref, 0, sizeof ref);
        rc_own_reference_(e, m, &info, &steps, &every);
        rc_l2_grid_(e, &info, 0, &stride, &dt_out);
        if (rc_sim_make(m, &sim, &err) == RC_OK) {
            rc_member_integrate(&sim, steps, every, &ref, &tref, NULL);
            if (ref.status == RC_MEMBER_OK)
                mb->l2 = rc_l2_strided_(&tr, &tref, stride, dt_out);
        }
        rc_sim_free(&sim);
    }
    free(tr.rel);
    free(tr.q);
    free(tref.rel);
    free(tref.q);
    rc_scenario_free(m);
}

static int rc_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Reorders x[lo..n) so that x[k] (lo <= k < n) holds the value that
 * sorting x[lo..n) would put there, with no larger value before it and
 * no smaller one after (Hoare's FIND with a median-of-three pivot: O(n)
 * where a sort is O(n log n), and for the quantiles of 10^5..10^6
 * members the sort was most of the time after the integration).  x
 * holds no NaN.  After 64 partitions the rest is sorted, so no input
 * makes it quadratic. */
static void rc_select(double *x, long lo, long n, long k)
{
    long hi = n - 1, rounds = 0;
    while (hi > lo) {
        long i = lo, j = hi, mid = lo + (hi - lo) / 2;
        double a = x[lo], b = x[mid], c = x[hi], p;
        if (++rounds > 64) {
            qsort(x + lo, (size_t)(hi - lo + 1), sizeof(double),
                  rc_cmp_double);
            return;
        }
        /* the median of three: a value in the range, so both scans stop
         * inside it */
        p = a < b ? (b < c ? b : (a < c ? c : a))
                  : (a < c ? a : (b < c ? c : b));
        while (i <= j) {
            double t;
            while (x[i] < p)
                ++i;
            while (p < x[j])
                --j;
            if (i <= j) {
                t = x[i];
                x[i] = x[j];
                x[j] = t;
                ++i;
                --j;
            }
        }
        /* x[lo..j] <= p <= x[i..hi], and x[j+1..i-1] == p */
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* The smallest (top 0) or largest (top 1) of x[lo..n) swapped into
 * x[lo] (x[n - 1]): rc_select of an end, in one branch-free scan. */
static void rc_select_end(double *x, long lo, long n, int top)
{
    long k, at = top ? n - 1 : lo;
    double t;
    for (k = lo; k < n; ++k)
        at = (top ? x[k] > x[at] : x[k] < x[at]) ? k : at;
    t = x[at];
    x[at] = x[top ? n - 1 : lo];
    x[top ? n - 1 : lo] = t;
}

/* Quantiles fr[0..nf) (ascending; linear interpolation between order
 * statistics, as of the sorted values) of x[0..n), which is reordered:
 * each fraction needs its two order statistics, selected in the part
 * above the previous one (the ends by a scan). */
static void rc_quantiles(double *x, long n, const double *fr, int nf,
                         double *out)
{
    long lo = 0;
    int k;
    for (k = 0; k < nf; ++k) {
        double pos = fr[k] * (double)(n - 1);
        long i = (long)floor(pos);
        if (n == 0) {
            out[k] = NAN;
            continue;
        }
        if (i >= n - 1) {
            rc_select_end(x, lo, n, 1);
            out[k] = x[n - 1];
            continue;
        }
        if (i == lo)
            rc_select_end(x, lo, n, 0);
        else
            rc_select(x, lo, n, i);
        rc_select_end(x, i + 1, n, 0);
        out[k] = x[i] + (pos - (double)i) * (x[i + 1] - x[i]);
        lo = i;
    }
}

/* Quantiles and count of x[0..n) (reordered). */
static cJSON *rc_stats_json(double *x, long n)
{
    cJSON *o = cJSON_CreateObject();
    static const char *const names[] = {"min", "q1", "median", "q3", "p99",
                                        "max"};
    static const double fr[] = {0.0, 0.25, 0.5, 0.75, 0.99, 1.0};
    double q[6];
    int k;
    rc_quantiles(x, n, fr, 6, q);
    for (k = 0; k < 6; ++k) {
        /* raw text that reads back as the same double (members.csv's):
         * cJSON's printer takes 15 digits whenever they land within a
         * relative DBL_EPSILON, which is not always the same double */
        char buf[RC_FMT_DOUBLE_MAX];
        if (isfinite(q[k])) {
            rc_fmt_double(q[k], buf);
            cJSON_AddRawToObject(o, names[k], buf);
        } else {
            cJSON_AddNullToObject(o, names[k]);
        }
    }
    cJSON_AddNumberToObject(o, "count", (double)n);
    return o;
}

/* Median of the finite values of member column `col` over the ok
 * members of group g (NaN when none).  col: 0 max_rel, 1 windowed,
 * 2 l2. */
static double rc_group_median(const rc_ensemble_spec *e, const rc_member *mb,
                              const long *group, long g, int col,
                              double *scratch)
{
    static const double half = 0.5;
    long k, m = 0;
    double med;
    for (k = 0; k < e->members; ++k) {
        double v;
        if (group[k] != g || mb[k].status != RC_MEMBER_OK)
            continue;
        v = col == 0 ? mb[k].max_rel : col == 1 ? mb[k].windowed : mb[k].l2;
        if (isfinite(v))
            scratch[m++] = v;
    }
    rc_quantiles(scratch, m, &half, 1, &med);
    return med;
}

/* groups.csv (and the JSON array *out) when the ensemble is a grid with
 * `values` axes; nothing otherwise. */
static rc_status rc_write_groups(const rc_scenario *scn, const rc_member *mb,
                                 const char *out_dir, cJSON **out,
                                 rc_outfile *fp, rc_error *err)
{
    const rc_ensemble_spec *e = &scn->ens;
    int r, axes[16], na = 0;
    long ng = 1, g, k, *group = NULL;
    double *scratch = NULL;
    rc_outfile f;
    rc_status st = RC_OK;
    *out = NULL;
    memset(&f, 0, sizeof f);
    memset(fp, 0, sizeof *fp);
    if (!e->grid)
        return RC_OK;
    for (r = 0; r < e->nrules && na < 16; ++r)
        if (e->rules[r].kind == RC_VARY_VALUES) {
            axes[na++] = r;
            ng *= e->rules[r].nvalues;
        }
    if (na == 0)
        return RC_OK;
    group = (long *)malloc(sizeof(long) * (size_t)e->members);
    scratch = (double *)malloc(sizeof(double) * (size_t)e->members);
    if (!group || !scratch) {
        free(group);
        free(scratch);
        err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return RC_ERR_NOMEM;
    }
    for (k = 0; k < e->members; ++k) {
        long id = 0;
        int a;
        for (a = na - 1; a >= 0; --a)
            id = id * e->rules[axes[a]].nvalues + rc_rule_index_(e, k, axes[a]);
        group[k] = id;
    }
    if ((st = rc_out_open(&f, out_dir, "groups.csv", err)) != RC_OK)
        goto done;
    *out = cJSON_CreateArray();
    for (r = 0; r < na; ++r)
        fprintf(f.f, "%s,", e->rules[axes[r]].path);
    fprintf(f.f, "members,ok,median_max_rel_energy_error,"
                 "median_windowed_drift%s\n",
            e->has_reference ? ",median_l2_error" : "");
    for (g = 0; g < ng; ++g) {
        long cnt = 0, ok = 0, first = -1;
        double med[3];
        int c;
        cJSON *o = cJSON_CreateObject(), *vals = cJSON_AddObjectToObject(o, "values");
        for (k = 0; k < e->members; ++k)
            if (group[k] == g) {
                if (first < 0)
                    first = k;
                cnt++;
                ok += mb[k].status == RC_MEMBER_OK;
            }
        for (r = 0; r < na; ++r) {
            const rc_vary_rule *ru = &e->rules[axes[r]];
            long idx = first >= 0 ? rc_rule_index_(e, first, axes[r]) : 0;
            if (ru->texts) {
                fprintf(f.f, "%s,", ru->texts[idx]);
                cJSON_AddStringToObject(vals, ru->path, ru->texts[idx]);
            } else {
                char buf[RC_FMT_DOUBLE_MAX]; /* 0.03, not 0.0299...9 */
                rc_fmt_double(ru->values[idx], buf);
                fprintf(f.f, "%s,", buf);
                cJSON_AddNumberToObject(vals, ru->path, ru->values[idx]);
            }
        }
        for (c = 0; c < 3; ++c)
            med[c] = rc_group_median(e, mb, group, g, c, scratch);
        fprintf(f.f, "%ld,%ld,%.6g,%.6g", cnt, ok, med[0], med[1]);
        if (e->has_reference)
            fprintf(f.f, ",%.6g", med[2]);
        fputc('\n', f.f);
        cJSON_AddNumberToObject(o, "members", (double)cnt);
        cJSON_AddNumberToObject(o, "ok", (double)ok);
        for (c = 0; c < (e->has_reference ? 3 : 2); ++c) {
            static const char *const names[] = {"median_max_rel_energy_error",
                                                "median_windowed_drift",
                                                "median_l2_error"};
            if (isfinite(med[c]))
                cJSON_AddNumberToObject(o, names[c], med[c]);
            else
                cJSON_AddNullToObject(o, names[c]);
        }
        cJSON_AddItemToArray(*out, o);
    }
    *fp = f; /* committed with members.csv, left .partial otherwise */
    f.f = NULL;
done:
    rc_out_abandon(&f);
    free(group);
    free(scratch);
    return st;
}

/* What the workers share while members run: which members have
 * finished (fin[k] = 1 once member k's record and values are complete),
 * the progress count and the periodic checkpoint. */
typedef struct rc_ens_run {
    const rc_scenario *scn;
    const rc_ensemble_options *opt;
    rc_member *mb;
    double *values;
    unsigned char *fin;  /* [n] */
    long n, done;        /* done = members with fin set */
    long first, end;     /* the members this run runs (--members) */
    int is_range;        /* 1: a range's run (recorded in its checkpoint) */
    int no_checkpoint;   /* 1: no periodic checkpoint (MPI ranks) */
    double t0, t_last, next_ckpt;
    int stop;
    rc_status ckpt_st;   /* the last periodic checkpoint's status */
    rc_error ckpt_err;
} rc_ens_run;

/* 1 when members k0 .. k0+cnt-1 all finished (a batch or GPU chunk that
 * a restart does not run again). */
static int rc_ens_all_finished(const unsigned char *fin, long k0, long cnt)
{
    long j;
    for (j = 0; j < cnt; ++j)
        if (!fin[k0 + j])
            return 0;
    return 1;
}

/* One finished member's numbers in a checkpoint (its message, when it
 * has one, goes in section EMSG). */
#define RC_ENS_REC_LONGS 5
#define RC_ENS_REC_DOUBLES 8

/* OUT/checkpoint.rcp with the finished members: their records, rule
 * values and messages.  Called with no worker changing a finished
 * member (inside the progress critical section, or after the loops). */
static rc_status rc_ens_checkpoint_to(const rc_ens_run *r, const char *meta,
                                      rc_error *err);
static rc_status rc_ens_checkpoint(const rc_ens_run *r, rc_error *err)
{
    return rc_ens_checkpoint_to(r, NULL, err);
}

/* The same records with a range's run metadata (JSON text, section
 * META): the range record range.rcp that `ricochet merge` reads. */
static rc_status rc_ens_checkpoint_to(const rc_ens_run *r, const char *meta,
                                      rc_error *err)
{
    const rc_ensemble_spec *e = &r->scn->ens;
    rc_ckpt_writer w;
    rc_status st;
    long k, m = 0, nmsg = 0;
    int64_t *idx = NULL, *lng = NULL, *midx = NULL;
    double *dbl = NULL, *val = NULL;
    char *msg = NULL;
    size_t msz = sizeof r->mb[0].message;
    for (k = 0; k < r->n; ++k)
        if (r->fin[k]) {
            ++m;
            nmsg += r->mb[k].message[0] != '\0';
        }
    idx = (int64_t *)malloc(sizeof(int64_t) * (size_t)(m + 1));
    lng = (int64_t *)malloc(sizeof(int64_t) * (size_t)(m + 1) *
                            RC_ENS_REC_LONGS);
    dbl = (double *)malloc(sizeof(double) * (size_t)(m + 1) *
                           RC_ENS_REC_DOUBLES);
    val = (double *)malloc(sizeof(double) * (size_t)(m + 1) *
                           (size_t)(e->nrules + 1));
    midx = (int64_t *)malloc(sizeof(int64_t) * (size_t)(nmsg + 1));
    msg = (char *)calloc((size_t)(nmsg + 1), msz);
    if (!idx || !lng || !dbl || !val || !midx || !msg) {
        st = err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message,
                 "out of memory writing the checkpoint");
        goto done;
    }
    for (k = 0, m = 0, nmsg = 0; k < r->n; ++k) {
        const rc_member *b = &r->mb[k];
        if (!r->fin[k])
            continue;
        idx[m] = k;
        lng[m * RC_ENS_REC_LONGS + 0] = b->status;
        lng[m * RC_ENS_REC_LONGS + 1] = b->fail_step;
        lng[m * RC_ENS_REC_LONGS + 2] = b->steps;
        lng[m * RC_ENS_REC_LONGS + 3] = b->impacts;
        lng[m * RC_ENS_REC_LONGS + 4] = 0;
        dbl[m * RC_ENS_REC_DOUBLES + 0] = b->e0;
        dbl[m * RC_ENS_REC_DOUBLES + 1] = b->max_rel;
        dbl[m * RC_ENS_REC_DOUBLES + 2] = b->final_rel;
        dbl[m * RC_ENS_REC_DOUBLES + 3] = b->windowed;
        dbl[m * RC_ENS_REC_DOUBLES + 4] = b->slope;
        dbl[m * RC_ENS_REC_DOUBLES + 5] = b->dp;
        dbl[m * RC_ENS_REC_DOUBLES + 6] = b->dl;
        dbl[m * RC_ENS_REC_DOUBLES + 7] = b->l2;
        if (e->nrules > 0)
            memcpy(val + m * e->nrules, r->values + k * e->nrules,
                   sizeof(double) * (size_t)e->nrules);
        if (b->message[0]) {
            midx[nmsg] = k;
            memcpy(msg + (size_t)nmsg * msz, b->message, msz);
            ++nmsg;
        }
        ++m;
    }
    if ((st = rc_ckpt_begin(&w, r->opt->out_dir, RC_CKPT_ENSEMBLE, err)) !=
        RC_OK)
        goto done;
    if ((st = rc_ckpt_put_scenario(&w, r->scn, r->opt->out_dir, err)) !=
        RC_OK) {
        rc_ckpt_abandon(&w);
        goto done;
    }
    rc_ckpt_put_long(&w, "MEMBERS", r->n);
    rc_ckpt_put_long(&w, "NRULES", e->nrules);
    if (r->is_range) {
        /* --members A:B: the range this run covers, so that a restart
         * runs the same range and merge knows which members it holds */
        int64_t range[2];
        range[0] = r->first;
        range[1] = r->end;
        rc_ckpt_put(&w, "RANGE", range, sizeof range);
    }
    if (meta)
        rc_ckpt_put_string(&w, "META", meta);
    rc_ckpt_put(&w, "EIDX", idx, sizeof(int64_t) * (size_t)m);
    rc_ckpt_put(&w, "ELONG", lng, sizeof(int64_t) * (size_t)m *
                                      RC_ENS_REC_LONGS);
    rc_ckpt_put(&w, "EDBL", dbl, sizeof(double) * (size_t)m *
                                     RC_ENS_REC_DOUBLES);
    rc_ckpt_put(&w, "EVAL", val, sizeof(double) * (size_t)m *
                                     (size_t)e->nrules);
    rc_ckpt_put(&w, "EMIDX", midx, sizeof(int64_t) * (size_t)nmsg);
    rc_ckpt_put(&w, "EMSG", msg, msz * (size_t)nmsg);
    st = rc_ckpt_finish(&w, err);
done:
    free(idx);
    free(lng);
    free(dbl);
    free(val);
    free(midx);
    free(msg);
    return st;
}

/* The range [first, end) a checkpoint records (section RANGE, written by
 * a --members run); 0 when it has none (a whole ensemble's), -1 when
 * the section is damaged. */
static int rc_ens_ckpt_range(const rc_ckpt *c, long n, long *first,
                             long *end)
{
    size_t bytes = 0;
    const int64_t *r = (const int64_t *)rc_ckpt_find(c, "RANGE", &bytes);
    if (!r)
        return 0;
    if (bytes != 2 * sizeof(int64_t) || r[0] < 0 || r[1] <= r[0] || r[1] > n)
        return -1;
    *first = (long)r[0];
    *end = (long)r[1];
    return 1;
}

/* The finished members of a loaded checkpoint into r (fin, mb, values). */
static rc_status rc_ens_restore_from(rc_ens_run *r, const rc_ckpt *c,
                                     rc_error *err)
{
    const rc_ensemble_spec *e = &r->scn->ens;
    rc_status st = RC_OK;
    long members = 0, nrules = 0, m, nmsg, j;
    size_t bytes = 0, mbytes = 0;
    const int64_t *idx, *lng, *midx;
    const double *dbl, *val;
    const char *msg;
    size_t msz = sizeof r->mb[0].message;
    if (c->kind != RC_CKPT_ENSEMBLE)
        return rc_ckpt_corrupt(c, err, "it is not an ensemble's checkpoint");
    if ((st = rc_ckpt_get_long(c, "MEMBERS", &members, err)) != RC_OK ||
        (st = rc_ckpt_get_long(c, "NRULES", &nrules, err)) != RC_OK)
        return st;
    if (members != r->n || nrules != e->nrules)
        return rc_ckpt_corrupt(c, err, "its ensemble has other members");
    idx = (const int64_t *)rc_ckpt_find(c, "EIDX", &bytes);
    m = (long)(bytes / sizeof(int64_t));
    lng = (const int64_t *)rc_ckpt_find(c, "ELONG", &mbytes);
    if (!idx || !lng || mbytes != (size_t)m * RC_ENS_REC_LONGS * 8 ||
        !(dbl = (const double *)rc_ckpt_find(c, "EDBL", &mbytes)) ||
        mbytes != (size_t)m * RC_ENS_REC_DOUBLES * 8 ||
        !(val = (const double *)rc_ckpt_find(c, "EVAL", &mbytes)) ||
        mbytes != (size_t)m * (size_t)e->nrules * 8 ||
        !(midx = (const int64_t *)rc_ckpt_find(c, "EMIDX", &bytes)) ||
        !(msg = (const char *)rc_ckpt_find(c, "EMSG", &mbytes)) ||
        mbytes != bytes / 8 * msz)
        return rc_ckpt_corrupt(c, err, "its member records are damaged");
    nmsg = (long)(bytes / 8);
    for (j = 0; j < m; ++j) {
        long k = (long)idx[j];
        rc_member *b;
        if (k < 0 || k >= r->n || lng[j * RC_ENS_REC_LONGS] < 0 ||
            lng[j * RC_ENS_REC_LONGS] > RC_MEMBER_INVALID)
            return rc_ckpt_corrupt(c, err, "its member records are damaged");
        b = &r->mb[k];
        b->status = (int)lng[j * RC_ENS_REC_LONGS + 0];
        b->fail_step = (long)lng[j * RC_ENS_REC_LONGS + 1];
        b->steps = (long)lng[j * RC_ENS_REC_LONGS + 2];
        b->impacts = (long)lng[j * RC_ENS_REC_LONGS + 3];
        b->e0 = dbl[j * RC_ENS_REC_DOUBLES + 0];
        b->max_rel = dbl[j * RC_ENS_REC_DOUBLES + 1];
        b->final_rel = dbl[j * RC_ENS_REC_DOUBLES + 2];
        b->windowed = dbl[j * RC_ENS_REC_DOUBLES + 3];
        b->slope = dbl[j * RC_ENS_REC_DOUBLES + 4];
        b->dp = dbl[j * RC_ENS_REC_DOUBLES + 5];
        b->dl = dbl[j * RC_ENS_REC_DOUBLES + 6];
        b->l2 = dbl[j * RC_ENS_REC_DOUBLES + 7];
        if (e->nrules > 0)
            memcpy(r->values + k * e->nrules, val + j * e->nrules,
                   sizeof(double) * (size_t)e->nrules);
        if (!r->fin[k]) {
            r->fin[k] = 1;
            r->done++;
        }
    }
    for (j = 0; j < nmsg; ++j) {
        long k = (long)midx[j];
        if (k < 0 || k >= r->n || !r->fin[k])
            return rc_ckpt_corrupt(c, err, "its member messages are damaged");
        memcpy(r->mb[k].message, msg + (size_t)j * msz, msz);
        r->mb[k].message[msz - 1] = '\0';
    }
    return st;
}

/* --restart: the checkpoint's finished members, and the range it was
 * written for (a --members run continues its own range). */
static rc_status rc_ens_restore(rc_ens_run *r, rc_error *err)
{
    rc_ckpt c;
    rc_status st;
    long first = 0, end = 0;
    int has;
    if ((st = rc_ckpt_load(r->opt->restart, &c, err)) != RC_OK)
        return st;
    has = rc_ens_ckpt_range(&c, r->n, &first, &end);
    if (has < 0) {
        st = rc_ckpt_corrupt(&c, err, "its member range is damaged");
    } else if (r->is_range && (!has || first != r->first || end != r->end)) {
        char what[200];
        snprintf(what, sizeof what,
                 "it was written for members %ld:%ld, not for the --members "
                 "given (%ld:%ld); restart without --members",
                 has ? first : 0, has ? end : r->n, r->first, r->end);
        st = rc_ckpt_corrupt(&c, err, what);
    } else {
        if (has) {
            r->first = first;
            r->end = end;
            r->is_range = 1;
        }
        st = rc_ens_restore_from(r, &c, err);
    }
    rc_ckpt_free(&c);
    return st;
}

/* Members k0 .. k0+cnt-1 ran; those not to be run again (skip[k] == 0,
 * or every one when skip is NULL) and not traced are finished.  Progress
 * at most ten calls a second (a nonzero return of the callback asks the
 * run to stop); a periodic checkpoint when one is due. */
static void rc_ensemble_tick_(rc_ens_run *r, long k0, long cnt,
                              const unsigned char *skip, int traced_too)
{
    const rc_ensemble_spec *e = &r->scn->ens;
#pragma omp critical(rc_ensemble_progress)
    {
        long k;
        long count = r->end - r->first;
        for (k = k0; k < k0 + cnt; ++k)
            if (!r->fin[k] && !(skip && skip[k - k0]) &&
                (traced_too || !rc_is_traced(e, k))) {
                r->fin[k] = 1;
                r->done++;
            }
        if (r->opt->progress || r->scn->checkpoint_wall > 0.0) {
            double now = rc_now();
            if (r->opt->progress && (now - r->t_last >= 0.1 || r->done == count)) {
                r->t_last = now;
                if (r->opt->progress(r->opt->progress_ctx, r->done, count,
                                     now - r->t0))
#pragma omp atomic write
                    r->stop = 1;
            }
            if (r->scn->checkpoint_wall > 0.0 && !r->no_checkpoint &&
                now >= r->next_ckpt && r->done < count) {
                r->ckpt_st = rc_ens_checkpoint(r, &r->ckpt_err);
                r->next_ckpt = rc_now() + r->scn->checkpoint_wall;
            }
        }
    }
}

/* Members per call of the GPU engine: bounds the host copies of the
 * initial states and lets progress (and an interrupt) through between
 * calls; the launcher cuts each call into launches that fit the device. */
#define RC_CUDA_HOST_CHUNK 262144L

/* The batch engine's members on the GPU, RC_CUDA_HOST_CHUNK at a time.
 * Members after a stop are marked for the per-member loop (which says
 * "not run").  *gpu sums the launcher's reports.  RC_OK, or the first
 * call's error with the reason in why. */
static rc_status rc_ensemble_cuda_(const rc_scenario *scn,
                                   const rc_batch_plan *plan,
                                   const rc_ensemble_options *opt, int nt,
                                   double *values, rc_member *mb,
                                   unsigned char *redo, rc_ens_run *r,
                                   rc_cuda_member_stats *gpu, char *why,
                                   size_t why_size)
{
    long n = r->end, k0;
    rc_status st = RC_OK;
    memset(gpu, 0, sizeof *gpu);
    for (k0 = r->first; k0 < n && st == RC_OK; k0 += RC_CUDA_HOST_CHUNK) {
        long cnt = n - k0 < RC_CUDA_HOST_CHUNK ? n - k0 : RC_CUDA_HOST_CHUNK;
        rc_cuda_member_stats one;
        int halt;
#pragma omp atomic read
        halt = r->stop;
        if (halt) {
            memset(redo + k0, 1, (size_t)(n - k0));
            break;
        }
        if (rc_ens_all_finished(r->fin, k0, cnt)) /* before a restart: */
            continue;                  /* its records are the checkpoint's */
        st = rc_batch_run_cuda_(scn, plan, k0, cnt, values, mb + k0,
                                redo + k0, nt, &one, why, why_size);
        if (st != RC_OK)
            break;
        if (k0 == r->first) {
            *gpu = one;
        } else {
            gpu->chunks += one.chunks;
            gpu->seconds_setup += one.seconds_setup;
            gpu->seconds_copies += one.seconds_copies;
            gpu->seconds_steps += one.seconds_steps;
        }
        rc_ensemble_tick_(r, k0, cnt, redo + k0, 0);
    }
    (void)opt;
    return st;
}

/* A growing text buffer (one per chunk of members.csv rows). */
typedef struct rc_text {
    char *buf;
    size_t len, cap;
} rc_text;

/* Room for `need` more bytes in t; 0 when out of memory. */
static int rc_text_reserve(rc_text *t, size_t need)
{
    if (t->cap - t->len < need) {
        size_t cap = 2 * t->cap + need + 4096;
        char *nb = (char *)realloc(t->buf, cap);
        if (!nb)
            return 0;
        t->buf = nb;
        t->cap = cap;
    }
    return 1;
}

/* Append ",v" (rc_fmt_double's text) to t, without printf's format
 * parsing (a row has seven of them); 0 when out of memory. */
static int rc_text_double(rc_text *t, double v)
{
    if (!rc_text_reserve(t, RC_FMT_DOUBLE_MAX + 1))
        return 0;
    t->buf[t->len++] = ',';
    t->len += (size_t)rc_fmt_double(v, t->buf + t->len);
    return 1;
}

/* Append ",str"; 0 when out of memory. */
static int rc_text_field(rc_text *t, const char *str)
{
    size_t n = strlen(str);
    if (!rc_text_reserve(t, n + 1))
        return 0;
    t->buf[t->len++] = ',';
    memcpy(t->buf + t->len, str, n);
    t->len += n;
    return 1;
}

/* Append `sep` (a character, or 0 for none) and v in decimal, as
 * printf's %ld, without its format parsing (a row has four of them); 0
 * when out of memory. */
static int rc_text_long(rc_text *t, char sep, long v)
{
    char dig[24];
    int n = 0;
    unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    if (!rc_text_reserve(t, sizeof dig + 2))
        return 0;
    if (sep)
        t->buf[t->len++] = sep;
    if (v < 0)
        t->buf[t->len++] = '-';
    do {
        dig[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n > 0)
        t->buf[t->len++] = dig[--n];
    return 1;
}

/* Member k's row of members.csv into t: every float the shortest text
 * that reads back as the same double (rc_fmt_double). */
static int rc_member_row(rc_text *t, const rc_ensemble_spec *e,
                         const double *values, const rc_member *b, long k)
{
    int r, ok = rc_text_long(t, 0, k);
    for (r = 0; ok && r < e->nrules; ++r) {
        if (rc_rule_text_(e, k, r))
            ok = rc_text_field(t, rc_rule_text_(e, k, r));
        else
            ok = rc_text_double(t, values[k * e->nrules + r]);
    }
    ok = ok && rc_text_double(t, b->e0) && rc_text_double(t, b->max_rel) &&
         rc_text_double(t, b->final_rel) && rc_text_double(t, b->windowed) &&
         rc_text_double(t, b->slope) && rc_text_double(t, b->dp) &&
         rc_text_double(t, b->dl) && rc_text_long(t, ',', b->impacts) &&
         rc_text_long(t, ',', b->steps) &&
         rc_text_field(t, rc_member_status[b->status]) &&
         rc_text_long(t, ',', b->fail_step);
    if (ok && e->has_reference)
        ok = rc_text_double(t, b->l2);
    if (ok && rc_text_reserve(t, 1))
        t->buf[t->len++] = '\n';
    else
        ok = 0;
    return ok;
}

/* members.csv's rows, formatted by nt threads (text formatting of 10^5
 * to 10^6 rows costs as much as integrating them) in chunks of
 * consecutive members, written in member order: the same bytes as one
 * thread writing row after row. */
#define RC_ROWS_PER_CHUNK 2048
static void rc_ens_members_header(FILE *f, const rc_ensemble_spec *e)
{
    int r;
    fprintf(f, "member");
    for (r = 0; r < e->nrules; ++r)
        fprintf(f, ",%s", e->rules[r].path);
    fprintf(f, ",E0,max_rel_energy_error,final_rel_energy_error,"
               "windowed_drift,drift_per_time,momentum_error,"
               "angular_momentum_error,impacts,steps,status,fail_step%s\n",
            e->has_reference ? ",l2_error" : "");
}

/* The rows of members first .. end-1; only: NULL, or [n] flags (indexed
 * by member) of the members to write */
static rc_status rc_write_member_rows(rc_outfile *out,
                                      const rc_ensemble_spec *e,
                                      const double *values,
                                      const rc_member *mb,
                                      const unsigned char *only, long first,
                                      long end, int nt, rc_error *err)
{
    long n = end - first;
    long nchunks = (n + RC_ROWS_PER_CHUNK - 1) / RC_ROWS_PER_CHUNK, c;
    rc_text *chunks = (rc_text *)calloc((size_t)nchunks + 1, sizeof *chunks);
    int failed = 0;
    rc_status st = RC_OK;
    if (!chunks) {
        snprintf(err->message, sizeof err->message,
                 "out of memory formatting the %ld rows of members.csv", n);
        return err->status = RC_ERR_NOMEM;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) reduction(|:failed)
    for (c = 0; c < nchunks; ++c) {
        long k, k1 = (c + 1) * RC_ROWS_PER_CHUNK < n
                         ? (c + 1) * RC_ROWS_PER_CHUNK
                         : n;
        for (k = c * RC_ROWS_PER_CHUNK; k < k1 && !failed; ++k)
            if (!only || only[first + k])
                failed |= !rc_member_row(&chunks[c], e, values,
                                         &mb[first + k], first + k);
    }
    for (c = 0; c < nchunks && !failed; ++c)
        if (chunks[c].len > 0 &&
            fwrite(chunks[c].buf, 1, chunks[c].len, out->f) != chunks[c].len)
            failed = 2;
    if (failed) {
        int e = errno;
        st = err->status = failed == 2 ? RC_ERR_IO : RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message,
                 failed == 2 ? "cannot write the rows of %s: %s"
                             : "out of memory formatting the rows of %s%s",
                 out->partial_path, failed == 2 ? strerror(e) : "");
    }
    for (c = 0; c < nchunks; ++c)
        free(chunks[c].buf);
    free(chunks);
    return st;
}

/* ------------------------------------------------------------------ */
/* Ranges of members, their records, and the outputs written from them */

/* FNV-1a (64 bits) of the scenario's input: its source text and its
 * --set overrides, each closed by a NUL.  Range outputs carry it, and
 * merge refuses ranges whose hashes differ (a member's results depend on
 * nothing else but the ricochet version, which range.rcp records). */
static void rc_ens_hash_input(const char *text, const char *const *sets,
                              long nsets, char *out, size_t size)
{
    unsigned long long h = 1469598103934665603ULL;
    long k;
    const char *s;
    for (k = -1; k < nsets; ++k) {
        s = k < 0 ? (text ? text : "") : sets[k];
        do {
            h ^= (unsigned char)*s;
            h *= 1099511628211ULL;
        } while (*s++);
    }
    snprintf(out, size, "fnv1a64:%016llx", h);
}

static void rc_ens_scenario_hash(const rc_scenario *scn, char *out,
                                 size_t size)
{
    rc_ens_hash_input(scn->source, (const char *const *)scn->overrides,
                      scn->n_overrides, out, size);
}

void rc_ens_records_free_(rc_ens_records *rec)
{
    free(rec->mb);
    free(rec->values);
    free(rec->fin);
    memset(rec, 0, sizeof *rec);
}

rc_status rc_ens_records_alloc_(rc_ens_records *rec, const rc_scenario *scn,
                                rc_error *err)
{
    long n = scn->ens.members;
    memset(rec, 0, sizeof *rec);
    rec->n = n;
    rec->end = n;
    rec->mb = (rc_member *)calloc((size_t)n + 1, sizeof *rec->mb);
    rec->values = (double *)calloc(((size_t)n + 1) * (size_t)scn->ens.nrules,
                                   sizeof(double));
    rec->fin = (unsigned char *)calloc((size_t)n + 1, 1);
    if (!rec->mb || (!rec->values && scn->ens.nrules > 0) || !rec->fin) {
        rc_ens_records_free_(rec);
        snprintf(err->message, sizeof err->message,
                 "out of memory for %ld members", n);
        return err->status = RC_ERR_NOMEM;
    }
    return RC_OK;
}

void rc_ens_meta_free_(rc_ens_meta *m)
{
    free(m->engine);
    m->engine = NULL;
}

/* A range's metadata as the JSON text of range.rcp's META section. */
static char *rc_ens_meta_text(const rc_ens_meta *m)
{
    cJSON *o = cJSON_CreateObject(), *eng = m->engine ? cJSON_Parse(m->engine)
                                                     : NULL;
    char *text;
    cJSON_AddNumberToObject(o, "threads", m->threads);
    cJSON_AddNumberToObject(o, "wall_seconds", m->wall_seconds);
    cJSON_AddNumberToObject(o, "member_steps", m->steps);
    if (eng)
        cJSON_AddItemToObject(o, "engine", eng);
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* ... and back; 0 when the text is not such an object. */
static int rc_ens_meta_parse(const char *text, rc_ens_meta *m)
{
    cJSON *o = cJSON_Parse(text);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "threads"),
                *w = cJSON_GetObjectItemCaseSensitive(o, "wall_seconds"),
                *s = cJSON_GetObjectItemCaseSensitive(o, "member_steps"),
                *eng = cJSON_GetObjectItemCaseSensitive(o, "engine");
    int ok = cJSON_IsNumber(t) && cJSON_IsNumber(w) && cJSON_IsNumber(s) &&
             cJSON_IsObject(eng);
    if (ok) {
        m->threads = (int)t->valuedouble;
        m->wall_seconds = w->valuedouble;
        m->steps = s->valuedouble;
        m->engine = cJSON_PrintUnformatted(eng);
        ok = m->engine != NULL;
    }
    cJSON_Delete(o);
    return ok;
}

/* The range of opt (--members A:B): [first, end) and whether one was
 * asked for; RC_ERR_PARSE when it does not lie in the ensemble. */
static rc_status rc_ens_range_of(const rc_ensemble_options *opt, long n,
                                 long *first, long *end, int *is_range,
                                 rc_error *err)
{
    *first = 0;
    *end = n;
    *is_range = 0;
    if (opt->member_first == 0 && opt->member_end == 0)
        return RC_OK;
    if (opt->member_first < 0 || opt->member_end <= opt->member_first ||
        opt->member_end > n) {
        snprintf(err->message, sizeof err->message,
                 "--members %ld:%ld: the ensemble has members 0 to %ld; a "
                 "range A:B runs members A to B-1 (B excluded, 0 <= A < B "
                 "<= %ld)",
                 opt->member_first, opt->member_end, n - 1, n);
        return err->status = RC_ERR_PARSE;
    }
    *first = opt->member_first;
    *end = opt->member_end;
    *is_range = 1;
    return RC_OK;
}

/* The output names of an ensemble run (with their .partial), removed from
 * the output directory before a run writes there. */
static const char *const rc_ens_outputs[] = {
    "members.csv",           "ensemble.json",         "groups.csv",
    "range.rcp",             "members.csv.partial",   "ensemble.json.partial",
    "groups.csv.partial",    "range.rcp.partial",     NULL};

rc_status rc_ensemble_prepare_out_(const rc_scenario *scn, const char *out_dir,
                                   int restart, rc_error *err)
{
    rc_status st;
    int r;
    if ((st = rc_out_mkdirs(out_dir, err)) != RC_OK)
        return st;
    for (r = 0; rc_ens_outputs[r]; ++r)
        if ((st = rc_out_remove_stale(out_dir, rc_ens_outputs[r], err)))
            return st;
    /* a restart keeps its checkpoint and the traces of finished members
     * (the others are written again) */
    if (!restart &&
        ((st = rc_out_remove_stale(out_dir, RC_CKPT_NAME, err)) ||
         (st = rc_remove_stale_traces(out_dir, err)) != RC_OK))
        return st;
    if (scn->ens.ntrace > 0) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/traces", out_dir);
        if ((st = rc_out_mkdirs(dir, err)) != RC_OK)
            return st;
    }
    return RC_OK;
}

rc_status rc_ensemble_run_members_(const rc_scenario *scn,
                                   const rc_ensemble_options *opt, int flags,
                                   rc_ens_records *rec, rc_ens_meta *meta,
                                   rc_ensemble_result *resp, rc_error *err)
{
    const rc_ensemble_spec *e;
    rc_ensemble_result res;
    rc_member *mb = NULL;
    double *values = NULL;
    unsigned char *fin = NULL;
    rc_ens_run run;
    long n, k, total_steps = 0, not_run = 0, first, end;
    int nt = 1, is_range;
    rc_status st = RC_OK;
    rc_outfile mcsv, ejson;
    rc_shared_refs shared;
    rc_batch_plan plan;
    int batched = 0, in_lanes = 0;
    long bsize = opt && opt->batch > 0 ? opt->batch : RC_BATCH_DEFAULT;
    long nredo = 0, lane_held = 0, lane_scalar = 0;
    unsigned char *redo = NULL;
    char why[200] = "", refs_why[200] = "";
    int refs_batched = 0; /* the reference runs were batch-engine members */
    /* the device: `device` names where the batch engine ran, device_note
     * says why it is not the one asked for (empty when it is) */
    int want_cuda = 0, on_cuda = 0;
    char device[300] = "cpu", device_note[600] = "";
    rc_cuda_member_stats gpu;
    double gpu_setup = 0.0;

    memset(err, 0, sizeof *err);
    memset(&res, 0, sizeof res);
    memset(rec, 0, sizeof *rec);
    memset(meta, 0, sizeof *meta);
    memset(&mcsv, 0, sizeof mcsv);
    memset(&ejson, 0, sizeof ejson);
    memset(&shared, 0, sizeof shared);
    memset(&plan, 0, sizeof plan);
    if (resp)
        memset(resp, 0, sizeof *resp);
    if (!scn || !opt || !opt->out_dir || !scn->ens.present) {
        snprintf(err->message, sizeof err->message,
                 "rc_ensemble_run: needs a scenario with an ensemble block "
                 "and an output directory");
        return err->status = RC_ERR_INVALID;
    }
    e = &scn->ens;
    n = e->members;
    if ((flags & RC_ENS_EMPTY_OK) && opt->member_first == opt->member_end &&
        opt->member_end > 0) {
        first = end = opt->member_first; /* an MPI rank with no member */
        is_range = 1;
    } else if ((st = rc_ens_range_of(opt, n, &first, &end, &is_range, err)) !=
               RC_OK) {
        return st;
    }
    memset(&gpu, 0, sizeof gpu);
    /* before anything is written: cuda without a device fails */
    if (end > first &&
        (opt->device == RC_ENSEMBLE_CUDA || opt->device == RC_ENSEMBLE_AUTO)) {
        rc_device_info dev;
        int count = 0;
        char dwhy[300] = "";
        memset(&dev, 0, sizeof dev);
        rc_cuda_devices(&dev, 1, &count, dwhy, sizeof dwhy);
        if (count > 0) {
            /* context and kernel now, outside wall_seconds (reported as
             * engine.gpu.setup_seconds) */
            double ts = rc_now();
            rc_status pst = rc_batch_cuda_prepare_(dwhy, sizeof dwhy);
            gpu_setup = rc_now() - ts;
            if (pst == RC_OK) {
                want_cuda = 1;
                snprintf(device, sizeof device, "cuda: %s", dev.name);
            } else if (opt->device == RC_ENSEMBLE_CUDA) {
                snprintf(err->message, sizeof err->message,
                         "backend cuda: device %s cannot be used: %s",
                         dev.name, dwhy);
                return err->status = pst;
            } else {
                snprintf(device_note, sizeof device_note,
                         "auto chose the cpu: device %s cannot be used: %s",
                         dev.name, dwhy);
            }
        } else if (opt->device == RC_ENSEMBLE_CUDA) {
            snprintf(err->message, sizeof err->message,
                     "backend cuda requested but %s",
                     dwhy[0] ? dwhy : "no CUDA device is usable");
            return err->status = RC_ERR_UNSUPPORTED;
        } else {
            snprintf(device_note, sizeof device_note,
                     "auto chose the cpu: %s",
                     dwhy[0] ? dwhy : "no CUDA device is usable");
        }
    }
    if (flags & RC_ENS_PREPARED) {
        /* another process cleared the directory (MPI rank 0): only the
         * directories this one writes traces into */
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/traces", opt->out_dir);
        if ((st = rc_out_mkdirs(opt->out_dir, err)) != RC_OK ||
            (e->ntrace > 0 && (st = rc_out_mkdirs(dir, err)) != RC_OK))
            return st;
    } else if ((st = rc_ensemble_prepare_out_(scn, opt->out_dir,
                                              opt->restart != NULL, err)) !=
               RC_OK) {
        return st;
    }
    if ((st = rc_ens_records_alloc_(rec, scn, err)) != RC_OK)
        return st;
    mb = rec->mb;
    values = rec->values;
    fin = rec->fin;
#ifdef _OPENMP
    nt = opt->threads > 0 ? opt->threads : omp_get_max_threads();
#endif
    memset(&run, 0, sizeof run);
    run.scn = scn;
    run.opt = opt;
    run.mb = mb;
    run.values = values;
    run.fin = fin;
    run.n = n;
    run.first = first;
    run.end = end;
    run.is_range = is_range;
    run.no_checkpoint = (flags & RC_ENS_NO_CHECKPOINT) != 0;
    run.t0 = run.t_last = rc_now();
    run.next_ckpt = run.t0 + scn->checkpoint_wall;
    if (opt->restart && (st = rc_ens_restore(&run, err)) != RC_OK) {
        rc_ens_records_free_(rec);
        return st;
    }
    first = run.first; /* a range's checkpoint gives its range */
    end = run.end;
    is_range = run.is_range;
    if (!opt->per_member)
        batched = rc_batch_plan_make_(scn, &plan, why, sizeof why);
    else
        snprintf(why, sizeof why, "asked for");
    rc_shared_refs_plan_(scn, &shared);
    if (shared.nslots > 0) {
        long sl;
        /* one representative member per slot: the first of the range in
         * index order (any member of a slot gives the same reference:
         * they differ only in the step and the method, which the
         * reference replaces) */
        long *rep = (long *)malloc(sizeof(long) * (size_t)shared.nslots);
        if (rep) {
            for (sl = 0; sl < shared.nslots; ++sl)
                rep[sl] = -1;
            for (k = end - 1; k >= first; --k)
                rep[shared.slot[k]] = k;
            if (batched && plan.vi) {
                /* the references are members of the batch engine too */
                rc_batch_vi_refs_(scn, rep, &shared, nt, want_cuda);
                refs_batched = 1;
            } else if (!opt->per_member &&
                       rc_batch_refs_(scn, rep, &shared, nt, refs_why,
                                      sizeof refs_why)) {
                /* ... also when the members are not (a method rule) */
                refs_batched = 1;
            } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
                for (sl = 0; sl < shared.nslots; ++sl)
                    if (rep[sl] >= 0)
                        rc_shared_ref_run_(scn, rep[sl], &shared.traj[sl],
                                           &shared.ok[sl]);
            }
            free(rep);
        } else {
            rc_shared_refs_free_(&shared);
        }
    }
    if (batched)
        plan.refs = &shared;
    if (e->has_reference && shared.nslots == 0) /* each member its own, */
        refs_batched = batched;                 /* beside it */
    if (batched && opt->scalar_batch)
        plan.lanes = 0;
    if (batched && plan.params && want_cuda) {
        /* the GPU kernels take one model: members with their own dt,
         * method, masses or radii run in the CPU batch engine */
        want_cuda = 0;
        snprintf(device_note, sizeof device_note,
                 "the GPU engine takes one dt, one method and one set of "
                 "masses and radii per ensemble: these members (rules on "
                 "them) ran in the cpu batch engine");
        snprintf(device, sizeof device, "cpu");
    }
    /* a model's member costs many GVI members (Newton solves in every
     * step, root finding at impacts) and members differ widely: one a
     * batch keeps the threads balanced */
    if (batched && plan.vi && !(opt->batch > 0))
        bsize = 1;
    in_lanes = batched && plan.lanes;
    /* lanes hold members of one dt (batch_lanes.c groups a batch by
     * it): a batch of 64 per dt value fills them, when there are members
     * enough for such a batch per thread (else 64: the threads share the
     * work) */
    if (in_lanes && (plan.params & RC_PARAM_DT) && !(opt->batch > 0) &&
        end - first >= RC_BATCH_DEFAULT * plan.dt_points * nt)
        bsize = RC_BATCH_DEFAULT * plan.dt_points;
    if (batched) {
        /* batches of the range: member k's bits do not depend on the
         * batch it runs in, so a range's members equal the whole run's */
        long nb = (end - first + bsize - 1) / bsize, b;
        redo = (unsigned char *)calloc((size_t)n + 1, 1);
        if (!redo) {
            rc_batch_plan_free_(&plan);
            batched = 0;
            snprintf(why, sizeof why, "out of memory for the batch plan");
        } else {
            if (want_cuda) {
                char gwhy[400] = "";
                rc_status gst = rc_ensemble_cuda_(
                    scn, &plan, opt, nt, values, mb, redo, &run, &gpu, gwhy,
                    sizeof gwhy);
                if (gst == RC_OK) {
                    on_cuda = 1;
                    nb = 0; /* the CPU batches have nothing left to do */
                } else if (opt->device == RC_ENSEMBLE_CUDA) {
                    rc_batch_plan_free_(&plan);
                    free(redo);
                    st = err->status = gst;
                    snprintf(err->message, sizeof err->message,
                             "GPU ensemble engine (%s): %s", device, gwhy);
                    goto done;
                } else {
                    /* auto: the CPU runs every member again */
                    snprintf(device_note, sizeof device_note,
                             "auto fell back to the cpu: the GPU engine "
                             "failed on %.200s: %.300s",
                             device, gwhy);
                    snprintf(device, sizeof device, "cpu");
                    memset(redo, 0, (size_t)n);
                }
            }
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
            for (b = 0; b < nb; ++b) {
                long k0 = first + b * bsize,
                     cnt = end - k0 < bsize ? end - k0 : bsize;
                int halt;
#pragma omp atomic read
                halt = run.stop;
                if (rc_ens_all_finished(fin, k0, cnt)) /* before a restart */
                    continue;
                if (halt) { /* not run: left to the loop below */
                    memset(redo + k0, 1, (size_t)cnt);
                    continue;
                }
                if (rc_batch_run_(scn, &plan, k0, cnt, values, mb + k0,
                                  redo + k0) != RC_OK)
                    memset(redo + k0, 1, (size_t)cnt); /* no memory: */
                                                       /* re-run alone */
                rc_ensemble_tick_(&run, k0, cnt, redo + k0, 0);
            }
            rc_batch_plan_free_(&plan);
            for (k = first; k < end; ++k) {
                if (redo[k] || rc_is_traced(e, k))
                    nredo++;
                lane_held += mb[k].lane_held;
                lane_scalar += mb[k].lane_scalar;
            }
        }
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (k = first; k < end; ++k) {
        int halt;
        if (fin[k])
            continue;
#pragma omp atomic read
        halt = run.stop;
        if (halt)
            continue;
        rc_member_run(scn, k, values + k * e->nrules, opt->out_dir, &shared,
                      &mb[k]);
        rc_ensemble_tick_(&run, k, 1, NULL, 1);
    }
    free(redo);
    /* members that did not run (a stop): counted apart, never as ok */
    for (k = first; k < end; ++k)
        if (!fin[k]) {
            memset(&mb[k], 0, sizeof mb[k]);
            mb[k].status = RC_MEMBER_INVALID;
            mb[k].fail_step = -1;
            snprintf(mb[k].message, sizeof mb[k].message, "not run");
            ++not_run;
        }
    if (want_cuda && !on_cuda && !device_note[0]) {
        snprintf(device_note, sizeof device_note,
                 "the batch engine did not take this ensemble (%s): its "
                 "members ran one by one on the cpu",
                 why);
        snprintf(device, sizeof device, "cpu");
    }
    res.wall_seconds = rc_now() - run.t0;
    res.batched = batched;
    res.cuda = on_cuda;
    res.rerun = nredo;
    res.members = end - first;
    res.first = first;
    res.end = end;
    res.finished = end - first - not_run;
    res.interrupted = not_run > 0;
    for (k = first; k < end; ++k) {
        if (!fin[k])
            continue;
        /* a member that took no step has no result to count as ok (nor
         * to enter the quantiles over the ok members) */
        if (mb[k].status == RC_MEMBER_OK && mb[k].steps == 0) {
            mb[k].status = RC_MEMBER_INVALID;
            snprintf(mb[k].message, sizeof mb[k].message,
                     "the member took no step");
        }
        total_steps += mb[k].steps;
        if (mb[k].status == RC_MEMBER_OK)
            res.ok++;
        else if (mb[k].status == RC_MEMBER_FAILED)
            res.failed++;
        else
            res.invalid++;
    }
    if (not_run > 0) {
        /* stopped: the checkpoint, then the finished members' rows as
         * .partial files (no quantiles over a part of the ensemble) */
        rc_error cerr;
        char how[700];
        memset(&cerr, 0, sizeof cerr);
        if (run.no_checkpoint)
            snprintf(how, sizeof how, "no checkpoint (a rank of an MPI run)");
        else if (rc_ens_checkpoint(&run, &cerr) == RC_OK)
            snprintf(how, sizeof how, "continue with ricochet run --restart "
                                      "%.300s/%s",
                     opt->out_dir, RC_CKPT_NAME);
        else
            snprintf(how, sizeof how, "no checkpoint: %.500s", cerr.message);
        if (!run.no_checkpoint &&
            (st = rc_out_open(&mcsv, opt->out_dir, "members.csv", err)) ==
                RC_OK) {
            rc_ens_members_header(mcsv.f, e);
            st = rc_write_member_rows(&mcsv, e, values, mb, fin, first, end,
                                      nt, err);
        }
        rc_table_members_(opt->on_table, opt->table_ctx, e, values, mb, fin,
                          first, end);
        st = err->status = RC_ERR_STATE;
        snprintf(err->message, sizeof err->message,
                 "interrupted: %ld of %ld members finished (%ld ok, %ld "
                 "failed, %ld invalid), %ld not run; %s",
                 end - first - not_run, end - first, res.ok, res.failed,
                 res.invalid, not_run, how);
        if (!run.no_checkpoint) {
            /* ensemble.json.partial: how far it got, no statistics */
            cJSON *root = cJSON_CreateObject(), *counts;
            char *text;
            cJSON_AddStringToObject(root, "scenario_file", scn->path);
            cJSON_AddStringToObject(root, "name", scn->name);
            cJSON_AddStringToObject(root, "interrupted", err->message);
            cJSON_AddNumberToObject(root, "members", (double)(end - first));
            cJSON_AddNumberToObject(root, "finished",
                                    (double)(end - first - not_run));
            cJSON_AddNumberToObject(root, "not_run", (double)not_run);
            counts = cJSON_AddObjectToObject(root, "status");
            cJSON_AddNumberToObject(counts, "ok", (double)res.ok);
            cJSON_AddNumberToObject(counts, "failed", (double)res.failed);
            cJSON_AddNumberToObject(counts, "invalid", (double)res.invalid);
            cJSON_AddNumberToObject(root, "wall_seconds", res.wall_seconds);
            text = cJSON_Print(root);
            cJSON_Delete(root);
            if (text) {
                rc_error jerr;
                if (rc_out_open(&ejson, opt->out_dir, "ensemble.json",
                                &jerr) == RC_OK)
                    fprintf(ejson.f, "%s\n", text);
                free(text);
            }
        }
        goto done;
    }
    res.member_steps_per_second =
        res.wall_seconds > 0.0 ? (double)total_steps / res.wall_seconds : 0.0;
    /* what differs between runs of the same members: the metadata */
    {
        cJSON *eng = cJSON_CreateObject();
        cJSON_AddStringToObject(eng, "name", batched ? "batch" : "per-member");
        cJSON_AddStringToObject(eng, "device", device);
        if (device_note[0])
            cJSON_AddStringToObject(eng, "device_note", device_note);
        if (batched && on_cuda) {
            cJSON *g = cJSON_AddObjectToObject(eng, "gpu");
            cJSON_AddNumberToObject(g, "launches", (double)gpu.chunks);
            cJSON_AddNumberToObject(g, "members_per_launch",
                                    (double)gpu.chunk_size);
            cJSON_AddNumberToObject(g, "buffers_in_flight", gpu.slots);
            cJSON_AddNumberToObject(g, "threads_per_block", gpu.block);
            cJSON_AddNumberToObject(g, "blocks", gpu.grid);
            cJSON_AddNumberToObject(g, "device_bytes_per_member",
                                    (double)gpu.bytes_per_member);
            cJSON_AddStringToObject(g, "scratch",
                                    gpu.local_scratch ? "local (interleaved)"
                                                      : "global blocks");
            cJSON_AddNumberToObject(g, "registers_per_thread", gpu.registers);
            if (gpu.lanes) /* registers above: the fast lane kernel's */
                cJSON_AddNumberToObject(g, "slow_kernel_registers",
                                        gpu.slow_registers);
            cJSON_AddNumberToObject(g, "local_bytes_per_thread",
                                    (double)gpu.local_bytes);
            cJSON_AddNumberToObject(g, "blocks_per_multiprocessor",
                                    gpu.blocks_per_sm);
            cJSON_AddNumberToObject(g, "resident_threads",
                                    (double)gpu.resident);
            cJSON_AddNumberToObject(g, "waves_per_launch", (double)gpu.waves);
            cJSON_AddNumberToObject(g, "setup_seconds", gpu_setup);
            if (gpu.lanes) { /* the lane launcher's share of wall_seconds */
                cJSON *ph = cJSON_AddObjectToObject(g, "lane_seconds");
                cJSON_AddNumberToObject(ph, "allocation", gpu.seconds_setup);
                cJSON_AddNumberToObject(ph, "copies", gpu.seconds_copies);
                cJSON_AddNumberToObject(ph, "steps", gpu.seconds_steps);
            }
        }
        if (batched) {
            if (!on_cuda)
                cJSON_AddNumberToObject(eng, "batch_size", (double)bsize);
            /* lanes: a batch's members stepped together in SIMD lanes
             * (batch_lanes.c) or, on a GPU, by the lane kernels;
             * scalar: each member by the scalar body */
            /* vi-member: a built-in Lagrangian model's members, each by
             * the member body of rc_vi_member.h (batch_vi.c) */
            cJSON_AddStringToObject(
                eng, "step",
                plan.vi ? "vi-member"
                        : (on_cuda ? gpu.lanes : in_lanes) ? "lanes"
                                                           : "scalar");
            cJSON_AddNumberToObject(eng, "members_rerun_alone", (double)nredo);
            if (in_lanes && !on_cuda) { /* the CPU lane path's steps with
                                           a non-empty A: in lanes
                                           (rc_k_lanes_held), by the
                                           scalar body */
                cJSON *ls = cJSON_AddObjectToObject(eng, "lane_steps");
                cJSON_AddNumberToObject(ls, "held", (double)lane_held);
                cJSON_AddNumberToObject(ls, "scalar_body",
                                        (double)lane_scalar);
            }
        } else {
            cJSON_AddStringToObject(eng, "why", why);
        }
        /* where the reference runs ran: batch (members of the body, also
         * when the members ran one by one) or per-member */
        if (e->has_reference) {
            cJSON_AddStringToObject(eng, "references",
                                    refs_batched ? "batch" : "per-member");
            if (!refs_batched && shared.nslots > 0 && refs_why[0])
                cJSON_AddStringToObject(eng, "references_why", refs_why);
        }
        meta->engine = cJSON_PrintUnformatted(eng);
        cJSON_Delete(eng);
        if (!meta->engine) {
            st = err->status = RC_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "out of memory");
            goto done;
        }
    }
    meta->first = first;
    meta->end = end;
    meta->threads = nt;
    meta->wall_seconds = res.wall_seconds;
    meta->steps = (double)total_steps;
    rec->first = first;
    rec->end = end;
    rec->is_range = is_range;
    /* a periodic checkpoint that could not be written (a full disk)
     * fails the run once its outputs are written, as .partial */
    rec->deferred = run.ckpt_st;
    rec->deferred_err = run.ckpt_err;
done:
    rc_shared_refs_free_(&shared);
    rc_out_abandon(&mcsv);
    rc_out_abandon(&ejson);
    if (st != RC_OK) {
        rc_ens_records_free_(rec);
        rc_ens_meta_free_(meta);
    }
    if (resp)
        *resp = res;
    return st;
}

/* A range's metadata into o (ensemble.json's "ranges" entries). */
static void rc_ens_meta_json(cJSON *o, const rc_ens_meta *m)
{
    cJSON *mem = cJSON_AddArrayToObject(o, "members");
    cJSON *eng = m->engine ? cJSON_Parse(m->engine) : NULL;
    cJSON_AddItemToArray(mem, cJSON_CreateNumber((double)m->first));
    cJSON_AddItemToArray(mem, cJSON_CreateNumber((double)m->end));
    if (m->where[0])
        cJSON_AddStringToObject(o, "from", m->where);
    if (eng)
        cJSON_AddItemToObject(o, "engine", eng);
    cJSON_AddNumberToObject(o, "threads", m->threads);
    cJSON_AddNumberToObject(o, "wall_seconds", m->wall_seconds);
    cJSON_AddNumberToObject(o, "member_steps_per_second",
                            m->wall_seconds > 0.0 ? m->steps / m->wall_seconds
                                                  : 0.0);
}

rc_status rc_ensemble_write_(const rc_scenario *scn, const char *out_dir,
                             int threads, rc_ens_records *rec,
                             const rc_ens_meta *ranges, int nranges,
                             const rc_ens_meta *total,
                             rc_table_fn on_table, void *table_ctx,
                             rc_ensemble_result *res, rc_error *err)
{
    const rc_ensemble_spec *e = &scn->ens;
    const long n = rec->n, first = rec->first, end = rec->end;
    const rc_member *mb = rec->mb;
    const double *values = rec->values;
    rc_outfile mcsv, ejson, gcsv, rcp;
    rc_scenario_run info;
    cJSON *groups = NULL;
    rc_status st = RC_OK;
    long k;
    int nt = 1;
    char hash[64];

    memset(err, 0, sizeof *err);
    memset(&mcsv, 0, sizeof mcsv);
    memset(&ejson, 0, sizeof ejson);
    memset(&gcsv, 0, sizeof gcsv);
    memset(&rcp, 0, sizeof rcp);
#ifdef _OPENMP
    nt = threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
#endif
    rc_scenario_run_info(scn, &info);
    rc_ens_scenario_hash(scn, hash, sizeof hash);
    res->members = end - first;
    res->first = first;
    res->end = end;
    res->ok = res->failed = res->invalid = 0;
    for (k = first; k < end; ++k) {
        if (mb[k].status == RC_MEMBER_OK)
            res->ok++;
        else if (mb[k].status == RC_MEMBER_FAILED)
            res->failed++;
        else
            res->invalid++;
    }
    res->wall_seconds = total->wall_seconds;
    res->member_steps_per_second =
        total->wall_seconds > 0.0 ? total->steps / total->wall_seconds : 0.0;

    /* members.csv */
    if ((st = rc_out_open(&mcsv, out_dir, "members.csv", err)))
        goto done;
    rc_ens_members_header(mcsv.f, e);
    if ((st = rc_write_member_rows(&mcsv, e, values, mb, NULL, first, end, nt,
                                   err)))
        goto done;
    rc_table_members_(on_table, table_ctx, e, values, mb, NULL, first, end);
    /* groups: the combinations of the `values` axes of a grid (e.g. method
     * x dt), with the medians of the error columns over their members;
     * a range has none (merge computes them over every member) */
    if (!rec->is_range &&
        (st = rc_write_groups(scn, mb, out_dir, &groups, &gcsv, err)) != RC_OK)
        goto done;
    /* ensemble.json */
    {
        cJSON *root = cJSON_CreateObject(), *counts, *cols, *fails;
        /* the columns' finite values over the ok members, one block of
         * the range's size each, sorted in parallel (a column of 10^6
         * members is a noticeable sort) */
        long m = end - first;
        int ncols = e->has_reference ? 7 : 6;
        double *col =
            (double *)malloc(sizeof(double) * (size_t)(m + 1) * 7);
        long cnt[7];
        char *text, *echo = rc_scenario_to_json(scn);
        static const char *const names[] = {
            "max_rel_energy_error", "final_rel_energy_error", "windowed_drift",
            "drift_per_time", "momentum_error", "angular_momentum_error",
            "l2_error"};
        int c;
        cJSON_AddStringToObject(root, "scenario_file", scn->path);
        cJSON_AddStringToObject(root, "name", scn->name);
        cJSON_AddStringToObject(root, "scenario_hash", hash);
        cJSON_AddStringToObject(root, "method", info.method);
        cJSON_AddNumberToObject(root, "dt", info.dt);
        {
            /* run metadata: the first range's engine */
            cJSON *eng = nranges > 0 && ranges[0].engine
                             ? cJSON_Parse(ranges[0].engine)
                             : NULL;
            cJSON_AddItemToObject(root, "engine",
                                  eng ? eng : cJSON_CreateObject());
        }
        cJSON_AddNumberToObject(root, "members", (double)m);
        if (rec->is_range) {
            cJSON *rg = cJSON_AddObjectToObject(root, "range");
            cJSON_AddNumberToObject(rg, "first", (double)first);
            cJSON_AddNumberToObject(rg, "end", (double)end);
            cJSON_AddNumberToObject(rg, "ensemble_members", (double)n);
        }
        counts = cJSON_AddObjectToObject(root, "status");
        cJSON_AddNumberToObject(counts, "ok", (double)res->ok);
        cJSON_AddNumberToObject(counts, "failed", (double)res->failed);
        cJSON_AddNumberToObject(counts, "invalid", (double)res->invalid);
        cols = cJSON_AddObjectToObject(root, "quantiles_over_ok_members");
        /* (no quantiles when the columns could not be allocated, as
         * before) */
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (c = 0; c < (col ? ncols : 0); ++c) {
            long mm = 0, kk;
            double *x = col + (long)c * (m + 1);
            for (kk = first; kk < end; ++kk) {
                const rc_member *b = &mb[kk];
                double v = c == 0   ? b->max_rel
                           : c == 1 ? b->final_rel
                           : c == 2 ? b->windowed
                           : c == 3 ? b->slope
                           : c == 4 ? b->dp
                           : c == 5 ? b->dl
                                    : b->l2;
                if (b->status == RC_MEMBER_OK && isfinite(v))
                    x[mm++] = v;
            }
            cnt[c] = mm;
        }
        for (c = 0; col && c < ncols; ++c)
            cJSON_AddItemToObject(cols, names[c],
                                  rc_stats_json(col + (long)c * (m + 1),
                                                cnt[c]));
        fails = cJSON_AddArrayToObject(root, "first_failures");
        for (k = first, c = 0; k < end && c < 20; ++k)
            if (mb[k].status != RC_MEMBER_OK) {
                cJSON *f = cJSON_CreateObject();
                cJSON_AddNumberToObject(f, "member", (double)k);
                cJSON_AddStringToObject(f, "status",
                                        rc_member_status[mb[k].status]);
                cJSON_AddNumberToObject(f, "fail_step",
                                        (double)mb[k].fail_step);
                cJSON_AddStringToObject(f, "message", mb[k].message);
                cJSON_AddItemToArray(fails, f);
                ++c;
            }
        if (groups)
            cJSON_AddItemToObject(root, "groups", groups);
        groups = NULL;
        /* run metadata (README: the fields that differ between runs of
         * the same members) */
        cJSON_AddNumberToObject(root, "threads", total->threads);
        cJSON_AddNumberToObject(root, "wall_seconds", res->wall_seconds);
        cJSON_AddNumberToObject(root, "member_steps_per_second",
                                res->member_steps_per_second);
        if (nranges > 1) {
            int r;
            cJSON *arr = cJSON_AddArrayToObject(root, "ranges");
            for (r = 0; r < nranges; ++r) {
                cJSON *o = cJSON_CreateObject();
                rc_ens_meta_json(o, &ranges[r]);
                cJSON_AddItemToArray(arr, o);
            }
        }
        if (echo) {
            cJSON *sc = cJSON_Parse(echo);
            if (sc)
                cJSON_AddItemToObject(root, "scenario", sc);
            free(echo);
        }
        text = cJSON_Print(root);
        cJSON_Delete(root);
        free(col);
        if (!text) {
            st = err->status = RC_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "out of memory");
            goto done;
        }
        if ((st = rc_out_open(&ejson, out_dir, "ensemble.json", err))) {
            free(text);
            goto done;
        }
        fprintf(ejson.f, "%s\n", text);
        free(text);
    }
    if (end > first && res->invalid == end - first) {
        /* nothing ran: bad input (every member refused at its start, e.g.
         * a constraint the base state violates), not a result */
        memset(err, 0, sizeof *err);
        st = err->status = RC_ERR_PARSE;
        snprintf(err->message, sizeof err->message,
                 "every member of the ensemble is invalid, none ran "
                 "(member %ld: %.700s)",
                 first, mb[first].message);
        goto done; /* keep the .partial files */
    }
    for (k = first; k < end; ++k)
        if (mb[k].trace_errno) {
            memset(err, 0, sizeof *err);
            st = err->status = RC_ERR_IO;
            snprintf(err->file, sizeof err->file,
                     "%.900s/traces/member_%ld.csv.partial", out_dir, k);
            snprintf(err->message, sizeof err->message,
                     "error writing output file: %s",
                     strerror(mb[k].trace_errno));
            goto done;
        }
    if (rec->deferred != RC_OK) {
        /* the members all ran, but a periodic checkpoint could not be
         * written (a full disk): the outputs stay .partial, as for any
         * write that failed */
        *err = rec->deferred_err;
        st = err->status;
        goto done;
    }
    if (rec->is_range) {
        /* range.rcp: the range's member records at full precision, with
         * their messages, the scenario and the run metadata, in the
         * container of checkpoint.rcp (written there, then named
         * range.rcp with the other outputs) */
        rc_ens_run r;
        rc_ensemble_options o;
        char *meta = rc_ens_meta_text(total);
        memset(&r, 0, sizeof r);
        memset(&o, 0, sizeof o);
        o.out_dir = out_dir;
        r.scn = scn;
        r.opt = &o;
        r.mb = rec->mb;
        r.values = rec->values;
        r.fin = rec->fin;
        r.n = n;
        r.first = first;
        r.end = end;
        r.is_range = 1;
        st = meta ? rc_ens_checkpoint_to(&r, meta, err) : RC_ERR_NOMEM;
        if (!meta) {
            err->status = st;
            snprintf(err->message, sizeof err->message, "out of memory");
        }
        free(meta);
        if (st != RC_OK)
            goto done;
        snprintf(rcp.final_path, sizeof rcp.final_path, "%s/range.rcp",
                 out_dir);
        snprintf(rcp.partial_path, sizeof rcp.partial_path,
                 "%s/range.rcp.partial", out_dir);
        {
            char ck[1200];
            snprintf(ck, sizeof ck, "%s/%s", out_dir, RC_CKPT_NAME);
            if (rename(ck, rcp.partial_path) != 0) {
                st = err->status = RC_ERR_IO;
                snprintf(err->file, sizeof err->file, "%s", ck);
                snprintf(err->message, sizeof err->message,
                         "cannot rename to range.rcp.partial: %s",
                         strerror(errno));
                goto done;
            }
        }
        rcp.external = 1;
    }
    {
        /* members.csv, groups.csv, the ok members' traces, range.rcp,
         * then ensemble.json, as one */
        rc_outfile **all = (rc_outfile **)calloc((size_t)e->ntrace + 4,
                                                 sizeof *all);
        rc_outfile *tr = (rc_outfile *)calloc((size_t)e->ntrace + 1,
                                              sizeof *tr);
        int nall = 0, t;
        if (!all || !tr) {
            free(all);
            free(tr);
            st = err->status = RC_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "out of memory");
            goto done;
        }
        all[nall++] = &mcsv;
        all[nall++] = &gcsv;
        for (t = 0; t < e->ntrace; ++t) {
            long kt = e->trace[t];
            int seen = 0, u;
            for (u = 0; u < t; ++u) /* a member listed twice: one file */
                seen |= e->trace[u] == kt;
            if (seen || kt < first || kt >= end ||
                mb[kt].status != RC_MEMBER_OK)
                continue;
            snprintf(tr[t].final_path, sizeof tr[t].final_path,
                     "%s/traces/member_%ld.csv", out_dir, kt);
            snprintf(tr[t].partial_path, sizeof tr[t].partial_path,
                     "%s.partial", tr[t].final_path);
            tr[t].external = 1;
            all[nall++] = &tr[t];
        }
        if (rec->is_range)
            all[nall++] = &rcp;
        all[nall++] = &ejson;
        if ((st = rc_out_commit_all(all, nall, err)) == RC_OK)
            rc_out_remove_stale(out_dir, RC_CKPT_NAME, err);
        free(all);
        free(tr);
    }
done:
    rc_out_abandon(&gcsv);
    cJSON_Delete(groups);
    rc_out_abandon(&mcsv);
    rc_out_abandon(&ejson);
    return st;
}

rc_status rc_ensemble_run(const rc_scenario *scn,
                          const rc_ensemble_options *opt,
                          rc_ensemble_result *result, rc_error *err)
{
    rc_error local;
    rc_ensemble_result res;
    rc_ens_records rec;
    rc_ens_meta meta;
    rc_status st;
    if (!err)
        err = &local;
    st = rc_ensemble_run_members_(scn, opt, 0, &rec, &meta, &res, err);
    if (st == RC_OK) {
        st = rc_ensemble_write_(scn, opt->out_dir, opt->threads, &rec, &meta,
                                1, &meta, opt->on_table, opt->table_ctx,
                                &res, err);
        rc_ens_records_free_(&rec);
        rc_ens_meta_free_(&meta);
    }
    if (result)
        *result = res;
    return st;
}

/* ------------------------------------------------------------------ */
/* merge: range outputs into the outputs of the whole ensemble         */

/* A merge refusal: bad input (exit 2), the file or directory named. */
static rc_status rc_merge_fail(rc_error *err, const char *file,
                               const char *fmt, ...)
{
    va_list ap;
    memset(err, 0, sizeof *err);
    err->status = RC_ERR_PARSE;
    snprintf(err->file, sizeof err->file, "%s", file);
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return RC_ERR_PARSE;
}

/* The NUL-terminated string of section tag, or NULL. */
static const char *rc_merge_string(const rc_ckpt *c, const char *tag)
{
    size_t bytes = 0;
    const char *s = (const char *)rc_ckpt_find(c, tag, &bytes);
    return s && bytes > 0 && s[bytes - 1] == '\0' ? s : NULL;
}

/* The scenario hash of a range record, from the scenario text and the
 * --set overrides it holds (what rc_ens_scenario_hash hashes). */
static int rc_merge_hash(const rc_ckpt *c, char *out, size_t size)
{
    const char *text = rc_merge_string(c, "SCNTEXT");
    const char **sets = NULL;
    long nsets = 0, k;
    char tag[32];
    rc_error e;
    if (!text || rc_ckpt_get_long(c, "NSETS", &nsets, &e) != RC_OK ||
        nsets < 0 || nsets > 100000)
        return 0;
    sets = (const char **)calloc((size_t)nsets + 1, sizeof *sets);
    if (!sets)
        return 0;
    for (k = 0; k < nsets; ++k) {
        snprintf(tag, sizeof tag, "SET%ld", k);
        if (!(sets[k] = rc_merge_string(c, tag))) {
            free(sets);
            return 0;
        }
    }
    rc_ens_hash_input(text, sets, nsets, out, size);
    free(sets);
    return 1;
}

static rc_status rc_merge_copy(const char *src, const char *dst,
                               rc_error *err)
{
    FILE *in = fopen(src, "rb"), *out;
    char buf[65536];
    size_t got;
    int bad = 0;
    if (!in)
        return rc_merge_fail(err, src,
                             "cannot open the trace of a traced member: %s",
                             strerror(errno));
    if (!(out = fopen(dst, "wb"))) {
        int e = errno;
        fclose(in);
        memset(err, 0, sizeof *err);
        snprintf(err->file, sizeof err->file, "%s", dst);
        snprintf(err->message, sizeof err->message,
                 "cannot create output file: %s", strerror(e));
        return err->status = RC_ERR_IO;
    }
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, got, out) != got)
            bad = errno ? errno : EIO;
    if (ferror(in))
        bad = bad ? bad : EIO;
    fclose(in);
    if (fclose(out) != 0 && !bad)
        bad = errno ? errno : EIO;
    if (bad) {
        memset(err, 0, sizeof *err);
        snprintf(err->file, sizeof err->file, "%s", dst);
        snprintf(err->message, sizeof err->message,
                 "error writing output file: %s", strerror(bad));
        return err->status = RC_ERR_IO;
    }
    return RC_OK;
}

typedef struct rc_merge_part {
    const char *dir;
    rc_ckpt ck;
    int loaded;
    long first, end;
} rc_merge_part;

static int rc_merge_cmp(const void *pa, const void *pb)
{
    const rc_merge_part *a = (const rc_merge_part *)pa,
                        *b = (const rc_merge_part *)pb;
    return (a->first > b->first) - (a->first < b->first);
}

rc_status rc_ensemble_merge(const char *const *dirs, int ndirs,
                            const char *out_dir, rc_ensemble_result *result,
                            rc_error *err)
{
    rc_error local;
    rc_merge_part *part = NULL;
    rc_scenario *scn = NULL;
    rc_ens_records rec;
    rc_ens_meta *meta = NULL, total;
    rc_ensemble_result res;
    rc_status st = RC_OK;
    char hash0[64], hash[64], path[1200];
    long n = 0, k;
    int i;
    struct stat so;
    int have_out;

    if (!err)
        err = &local;
    memset(err, 0, sizeof *err);
    memset(&rec, 0, sizeof rec);
    memset(&total, 0, sizeof total);
    memset(&res, 0, sizeof res);
    if (result)
        memset(result, 0, sizeof *result);
    if (!dirs || ndirs < 1 || !out_dir) {
        snprintf(err->message, sizeof err->message,
                 "rc_ensemble_merge: needs range directories and an output "
                 "directory");
        return err->status = RC_ERR_INVALID;
    }
    part = (rc_merge_part *)calloc((size_t)ndirs, sizeof *part);
    meta = (rc_ens_meta *)calloc((size_t)ndirs, sizeof *meta);
    if (!part || !meta) {
        free(part);
        free(meta);
        snprintf(err->message, sizeof err->message, "out of memory");
        return err->status = RC_ERR_NOMEM;
    }
    have_out = stat(out_dir, &so) == 0;
    /* every range record loaded and checked before anything is written */
    for (i = 0; i < ndirs; ++i) {
        struct stat sd;
        long members = 0;
        int has;
        part[i].dir = dirs[i];
        if (stat(dirs[i], &sd) != 0 || !S_ISDIR(sd.st_mode)) {
            st = rc_merge_fail(err, dirs[i], "no such directory");
            goto done;
        }
        if (have_out && sd.st_dev == so.st_dev && sd.st_ino == so.st_ino) {
            st = rc_merge_fail(err, dirs[i],
                               "the output directory is one of the ranges: "
                               "merge into another --out");
            goto done;
        }
        snprintf(path, sizeof path, "%s/range.rcp", dirs[i]);
        if (stat(path, &sd) != 0) {
            st = rc_merge_fail(err, path,
                               "missing: %.600s is not the output of a "
                               "finished 'ricochet run --members A:B' (an "
                               "interrupted range has none)",
                               dirs[i]);
            goto done;
        }
        if ((st = rc_ckpt_load(path, &part[i].ck, err)) != RC_OK) {
            if (st != RC_ERR_NOMEM)
                st = err->status = RC_ERR_PARSE;
            goto done;
        }
        part[i].loaded = 1;
        if (part[i].ck.kind != RC_CKPT_ENSEMBLE ||
            rc_ckpt_get_long(&part[i].ck, "MEMBERS", &members, err) !=
                RC_OK ||
            (has = rc_ens_ckpt_range(&part[i].ck, members, &part[i].first,
                                     &part[i].end)) <= 0 ||
            !rc_merge_hash(&part[i].ck, hash, sizeof hash)) {
            st = rc_merge_fail(err, path, "not a range record of ricochet "
                                          "run --members (damaged?)");
            goto done;
        }
        if (i == 0) {
            n = members;
            snprintf(hash0, sizeof hash0, "%s", hash);
        } else if (strcmp(hash, hash0) != 0 || members != n) {
            st = rc_merge_fail(
                err, path,
                "its scenario (%s, %ld members) is not the scenario of %.400s "
                "(%s, %ld members): ranges of different scenarios or --set "
                "overrides cannot be merged",
                hash, members, dirs[0], hash0, n);
            goto done;
        }
    }
    qsort(part, (size_t)ndirs, sizeof *part, rc_merge_cmp);
    /* the ranges must tile 0 .. n-1: no gap, no overlap */
    for (i = 0; i <= ndirs; ++i) {
        long prev_end = i > 0 ? part[i - 1].end : 0;
        long next_first = i < ndirs ? part[i].first : n;
        if (next_first < prev_end) {
            st = rc_merge_fail(err, part[i].dir,
                               "its members %ld:%ld overlap those of %.500s "
                               "(%ld:%ld)",
                               part[i].first, part[i].end, part[i - 1].dir,
                               part[i - 1].first, part[i - 1].end);
            goto done;
        }
        if (next_first > prev_end) {
            st = rc_merge_fail(err, i < ndirs ? part[i].dir : part[i - 1].dir,
                               "members %ld:%ld (A:B, B excluded) are in no "
                               "range given: the ranges must cover 0:%ld",
                               prev_end, next_first, n);
            goto done;
        }
    }
    if ((st = rc_ckpt_scenario(&part[0].ck, &scn, NULL, 0, err)) != RC_OK)
        goto done;
    rc_ens_scenario_hash(scn, hash, sizeof hash);
    if (!scn->ens.present || scn->ens.members != n || strcmp(hash, hash0)) {
        st = rc_merge_fail(err, part[0].dir,
                           "its range record's scenario does not load as "
                           "the ensemble it records");
        goto done;
    }
    if ((st = rc_ens_records_alloc_(&rec, scn, err)) != RC_OK)
        goto done;
    for (i = 0; i < ndirs; ++i) {
        rc_ens_run r;
        const char *mt = rc_merge_string(&part[i].ck, "META");
        memset(&r, 0, sizeof r);
        r.scn = scn;
        r.mb = rec.mb;
        r.values = rec.values;
        r.fin = rec.fin;
        r.n = n;
        if ((st = rc_ens_restore_from(&r, &part[i].ck, err)) != RC_OK)
            goto done;
        for (k = part[i].first; k < part[i].end; ++k)
            if (!rec.fin[k]) {
                snprintf(path, sizeof path, "%s/range.rcp", part[i].dir);
                st = rc_merge_fail(err, path,
                                   "member %ld of its range has no record",
                                   k);
                goto done;
            }
        if (r.done != part[i].end - part[i].first) {
            snprintf(path, sizeof path, "%s/range.rcp", part[i].dir);
            st = rc_merge_fail(err, path,
                               "it holds records of members outside its "
                               "range %ld:%ld",
                               part[i].first, part[i].end);
            goto done;
        }
        if (!mt || !rc_ens_meta_parse(mt, &meta[i])) {
            snprintf(path, sizeof path, "%s/range.rcp", part[i].dir);
            st = rc_merge_fail(err, path, "its run metadata is damaged");
            goto done;
        }
        meta[i].first = part[i].first;
        meta[i].end = part[i].end;
        snprintf(meta[i].where, sizeof meta[i].where, "%.250s", part[i].dir);
        /* the merged run's metadata: the ranges' threads, wall seconds
         * and member steps summed (README, "Distributed ensembles") */
        total.threads += meta[i].threads;
        total.wall_seconds += meta[i].wall_seconds;
        total.steps += meta[i].steps;
    }
    total.first = 0;
    total.end = n;
    /* the traces of the ok traced members must be there before anything
     * is written */
    for (i = 0; i < scn->ens.ntrace; ++i) {
        long kt = scn->ens.trace[i];
        int j;
        struct stat sd;
        if (kt < 0 || kt >= n || rec.mb[kt].status != RC_MEMBER_OK)
            continue;
        for (j = 0; j < ndirs && !(kt >= part[j].first && kt < part[j].end);
             ++j)
            ;
        snprintf(path, sizeof path, "%s/traces/member_%ld.csv", part[j].dir,
                 kt);
        if (stat(path, &sd) != 0) {
            st = rc_merge_fail(err, path,
                               "missing: the trace of member %ld "
                               "(output.trace_members)",
                               kt);
            goto done;
        }
    }
    if ((st = rc_ensemble_prepare_out_(scn, out_dir, 0, err)) != RC_OK)
        goto done;
    for (i = 0; i < scn->ens.ntrace; ++i) {
        long kt = scn->ens.trace[i];
        int j;
        char dst[1200];
        if (kt < 0 || kt >= n || rec.mb[kt].status != RC_MEMBER_OK)
            continue;
        for (j = 0; j < ndirs && !(kt >= part[j].first && kt < part[j].end);
             ++j)
            ;
        snprintf(path, sizeof path, "%s/traces/member_%ld.csv", part[j].dir,
                 kt);
        snprintf(dst, sizeof dst, "%s/traces/member_%ld.csv.partial",
                 out_dir, kt);
        if ((st = rc_merge_copy(path, dst, err)) != RC_OK)
            goto done;
    }
    rec.first = 0;
    rec.end = n;
    rec.is_range = 0;
    st = rc_ensemble_write_(scn, out_dir, 0, &rec, meta, ndirs, &total, NULL,
                            NULL, &res, err);
    res.finished = n;
done:
    for (i = 0; i < ndirs; ++i) {
        if (part && part[i].loaded)
            rc_ckpt_free(&part[i].ck);
        if (meta)
            rc_ens_meta_free_(&meta[i]);
    }
    free(part);
    free(meta);
    rc_ens_records_free_(&rec);
    rc_scenario_free(scn);
    if (result)
        *result = res;
    return st;
}

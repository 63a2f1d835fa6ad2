/* Run driver: scenario -> system -> steps -> output directory. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "clock.h"
#include "ricochet/run.h"
#include "checkpoint.h"
#include "output.h"
#include "run_impl.h"
#include "model/model.h"
#include "../kernels/rc_member.h"
#include "md/run_md.h"
#include "scenario_impl.h"
#include "system_impl.h"
#include "tables.h"

#ifndef RICOCHET_VERSION
#define RICOCHET_VERSION "unknown"
#endif

const char *rc_backend_name(rc_backend backend)
{
    switch (backend) {
    case RC_BACKEND_AUTO:
        return "auto";
    case RC_BACKEND_CPU:
        return "cpu";
    case RC_BACKEND_REFERENCE:
        return "reference";
    case RC_BACKEND_CUDA:
        return "cuda";
    }
    return "unknown";
}


static double rc_norm3(const double *a, const double *b)
{
    double s = 0.0;
    int k;
    for (k = 0; k < 3; ++k)
        s += (a[k] - b[k]) * (a[k] - b[k]);
    return sqrt(s);
}

void rc_stats_add(rc_stats *s, const rc_diagnostics *d)
{
    double rel;
    if (s->rows == 0) {
        s->e0 = d->energy;
        s->scale = rc_energy_scale(d);
        memcpy(s->p0, d->momentum, sizeof s->p0);
        memcpy(s->l0, d->angular_momentum, sizeof s->l0);
        s->min_gap = INFINITY;
    }
    rel = (d->energy - s->e0) / s->scale;
    s->last_rel = rel;
    s->max_rel = fmax(s->max_rel, fabs(rel));
    s->max_dp = fmax(s->max_dp, rc_norm3(d->momentum, s->p0));
    s->max_dl = fmax(s->max_dl, rc_norm3(d->angular_momentum, s->l0));
    s->min_gap = fmin(s->min_gap, d->min_gap);
    s->max_eq = fmax(s->max_eq, d->max_equality_error);
    if (s->rows == s->rel_cap) {
        long cap = s->rel_cap ? 2 * s->rel_cap : 1024;
        double *nr = (double *)realloc(s->rel, sizeof(double) * (size_t)cap);
        if (nr) {
            s->rel = nr;
            s->rel_cap = cap;
        }
    }
    if (s->rows < s->rel_cap)
        s->rel[s->rows] = rel;
    s->st += d->time;
    s->sy += rel;
    s->stt += d->time * d->time;
    s->sty += d->time * rel;
    s->rows++;
}

double rc_energy_scale(const rc_diagnostics *first)
{
    /* |H0|; when H0 is (nearly) zero, T0 + |V0| so that the ratio stays
     * meaningful (the kernel body the ensembles use) */
    return rc_k_energy_scale(first->kinetic, first->potential, first->energy);
}

double rc_stats_windowed_drift(const rc_stats *s)
{
    long w = s->rows / 10, k, i;
    double first = 0.0, worst = 0.0;
    if (w < 1 || s->rel_cap < s->rows)
        return 0.0;
    for (k = 0; k < 10; ++k) {
        double m = 0.0;
        for (i = k * w; i < (k + 1) * w; ++i)
            m += s->rel[i];
        m /= (double)w;
        if (k == 0)
            first = m;
        worst = fmax(worst, fabs(m - first));
    }
    return worst;
}

double rc_stats_slope(const rc_stats *s)
{
    double n = (double)s->rows;
    double den = n * s->stt - s->st * s->st;
    if (s->rows < 2 || !(fabs(den) > 0.0))
        return 0.0;
    return (n * s->sty - s->st * s->sy) / den;
}

/* One diagnostics row: to the CSV, the statistics and the caller. */
void rc_emit_row(FILE *f, rc_stats *stats, const rc_run_options *opt,
                        const rc_diagnostics *d)
{
    rc_out_diagnostics_row(f, d);
    rc_table_diagnostics_row_(opt, d);
    rc_stats_add(stats, d);
    if (opt->on_row)
        opt->on_row(opt->row_ctx, d);
}

void rc_json_number_or_null(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

/* Method avi: the layers opened and the ticks per layer (issue 18), as
 * an "avi" object in `extra` (created when NULL; returned). */
static cJSON *rc_json_avi(cJSON *extra, const rc_system *sys)
{
    rc_avi_stats a;
    cJSON *o, *arr;
    int l, last = 0;
    if (!sys || rc_system_avi_stats(sys, &a) != RC_OK)
        return extra;
    if (!extra && !(extra = cJSON_CreateObject()))
        return NULL;
    o = cJSON_AddObjectToObject(extra, "avi");
    if (!o)
        return extra;
    cJSON_AddNumberToObject(o, "ticks", (double)a.ticks);
    cJSON_AddNumberToObject(o, "term_ticks", (double)a.term_ticks);
    cJSON_AddNumberToObject(o, "layer_activations", (double)a.activations);
    cJSON_AddNumberToObject(o, "certificates", (double)a.certificates);
    cJSON_AddNumberToObject(o, "neighbour_rebuilds", (double)a.rebuilds);
    cJSON_AddNumberToObject(o, "active_contacts_end", a.active_contacts);
    cJSON_AddNumberToObject(o, "active_layers_end", a.active_layers);
    cJSON_AddNumberToObject(o, "deepest_layer", a.deepest_layer);
    rc_json_number_or_null(o, "min_gap_at_layer_ticks", a.min_gap);
    for (l = 0; l < RC_AVI_STATS_LAYERS; ++l)
        if (a.layer_ticks[l])
            last = l + 1;
    /* [l-1]: ticks of layer l; the last entry sums layers >= 16 */
    arr = cJSON_AddArrayToObject(o, "layer_ticks");
    for (l = 0; arr && l < last; ++l)
        cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)a.layer_ticks[l]));
    return extra;
}

rc_status rc_write_summary(const rc_scenario *scn,
                                  const rc_run_options *opt,
                                  const rc_run_result *res,
                                  const rc_stats *s, const char *message,
                                  int threads, cJSON *extra, rc_outfile *of,
                                  rc_error *err)
{
    cJSON *root = cJSON_CreateObject(), *echo;
    char *scenario_json = rc_scenario_to_json(scn), *text;
    rc_scenario_run info;
    rc_status st;
    if (!root || !scenario_json) {
        cJSON_Delete(root);
        free(scenario_json);
        err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return RC_ERR_NOMEM;
    }
    rc_scenario_run_info(scn, &info);
    cJSON_AddStringToObject(root, "ricochet_version", RICOCHET_VERSION);
    cJSON_AddStringToObject(root, "scenario_file", scn->path);
    cJSON_AddStringToObject(root, "name", info.name);
    cJSON_AddStringToObject(root, "status", res->status);
    if (message && message[0])
        cJSON_AddStringToObject(root, "message", message);
    cJSON_AddStringToObject(root, "method", info.method);
    cJSON_AddStringToObject(root, "backend", rc_backend_name(res->backend));
    cJSON_AddNumberToObject(root, "threads", threads);
    if (!rc_scenario_is_model(scn)) { /* a particle system */
        cJSON_AddNumberToObject(root, "dimension", scn->dimension);
        cJSON_AddNumberToObject(root, "particles", scn->n);
    }
    cJSON_AddNumberToObject(root, "dt", info.dt);
    cJSON_AddNumberToObject(root, "steps_requested", (double)info.steps);
    cJSON_AddNumberToObject(root, "steps", (double)res->steps);
    cJSON_AddNumberToObject(root, "time", (double)res->steps * info.dt);
    cJSON_AddNumberToObject(root, "wall_seconds", res->wall_seconds);
    cJSON_AddNumberToObject(root, "diagnostics_rows", (double)s->rows);
    rc_json_number_or_null(root, "energy_initial", res->energy_initial);
    rc_json_number_or_null(root, "energy_scale", s->scale);
    rc_json_number_or_null(root, "max_rel_energy_error",
                           res->max_rel_energy_error);
    rc_json_number_or_null(root, "final_rel_energy_error",
                           res->final_rel_energy_error);
    rc_json_number_or_null(root, "energy_drift_per_time",
                           res->energy_drift_per_time);
    rc_json_number_or_null(root, "windowed_drift", res->windowed_drift);
    rc_json_number_or_null(root, "failure_time", res->failure_time);
    if (!rc_scenario_is_model(scn)) {
        rc_json_number_or_null(root, "max_momentum_error",
                               res->max_momentum_error);
        rc_json_number_or_null(root, "max_angular_momentum_error",
                               res->max_angular_momentum_error);
    }
    rc_json_number_or_null(root, "min_gap", s->min_gap);
    rc_json_number_or_null(root, "max_equality_error", s->max_eq);
    if (extra) { /* the run's own fields (a model run; avi's counters) */
        cJSON *item;
        while ((item = extra->child) != NULL)
            cJSON_AddItemToObject(root, item->string,
                                  cJSON_DetachItemViaPointer(extra, item));
    }
    /* Raw, not parsed and printed again: cJSON's printer would round
     * numbers to 15 digits and the echo would no longer load back to the
     * scenario that ran (rc_scenario_to_json writes exact numbers). */
    echo = cJSON_CreateRaw(scenario_json);
    free(scenario_json);
    if (echo)
        cJSON_AddItemToObject(root, "scenario", echo);
    (void)opt;
    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return RC_ERR_NOMEM;
    }
    fputs(text, of->f);
    fputc('\n', of->f);
    free(text);
    st = ferror(of->f) ? RC_ERR_IO : RC_OK;
    if (st != RC_OK) {
        err->status = st;
        snprintf(err->file, sizeof err->file, "%s", of->partial_path);
        snprintf(err->message, sizeof err->message, "error writing summary");
    }
    return st;
}

rc_status rc_run_settle(rc_status st, int stopped, rc_status wst,
                        const rc_error *werr, rc_outfile *const *files,
                        int nfiles, const char *out_dir, const char *message,
                        rc_run_result *res, rc_error *err)
{
    if (st == RC_OK && !stopped) {
        /* Success: the data files and the summary as one, summary last;
         * the checkpoint has nothing left to continue. */
        rc_error cerr = *werr;
        if (wst == RC_OK)
            wst = rc_out_commit_all(files, nfiles, &cerr);
        if (wst == RC_OK)
            rc_out_remove_stale(out_dir, RC_CKPT_NAME, &cerr);
        if (wst != RC_OK) {
            if (!cerr.message[0])
                snprintf(cerr.message, sizeof cerr.message, "%s",
                         rc_status_str(wst));
            *err = cerr;
            snprintf(res->status, sizeof res->status, "failed");
            return wst;
        }
        return RC_OK;
    }
    if (st == RC_OK) { /* interrupted */
        err->status = RC_ERR_STATE;
        snprintf(err->message, sizeof err->message, "%.1000s", message);
        return RC_ERR_STATE;
    }
    if (!err->message[0]) {
        err->status = st;
        snprintf(err->message, sizeof err->message, "%.1000s",
                 message[0] ? message : rc_status_str(st));
    }
    return st;
}

static rc_status rc_backend_choose(const rc_run_options *opt,
                                   rc_backend *chosen, rc_error *err)
{
    switch (opt->backend) {
    case RC_BACKEND_AUTO:
    case RC_BACKEND_CPU:
        *chosen = RC_BACKEND_CPU;
        return RC_OK;
    case RC_BACKEND_REFERENCE:
        *chosen = RC_BACKEND_REFERENCE;
        return RC_OK;
    case RC_BACKEND_CUDA: {
        int count = 0;
        char why[256] = "";
        rc_cuda_devices(NULL, 0, &count, why, sizeof why);
        err->status = RC_ERR_UNSUPPORTED;
        if (count == 0)
            snprintf(err->message, sizeof err->message,
                     "backend cuda requested but %s", why);
        else
            snprintf(err->message, sizeof err->message,
                     "backend cuda does not run single systems in this "
                     "version; use --backend cpu");
        return RC_ERR_UNSUPPORTED;
    }
    }
    err->status = RC_ERR_INVALID;
    snprintf(err->message, sizeof err->message, "unknown backend");
    return RC_ERR_INVALID;
}

/* The statistics' fixed part, as doubles, for checkpoints. */
#define RC_STATS_DOUBLES 19
static void rc_stats_pack(const rc_stats *s, double *x)
{
    int k;
    x[0] = s->e0;
    x[1] = s->scale;
    for (k = 0; k < 3; ++k) {
        x[2 + k] = s->p0[k];
        x[5 + k] = s->l0[k];
    }
    x[8] = s->max_rel;
    x[9] = s->last_rel;
    x[10] = s->max_dp;
    x[11] = s->max_dl;
    x[12] = s->min_gap;
    x[13] = s->max_eq;
    x[14] = s->st;
    x[15] = s->sy;
    x[16] = s->stt;
    x[17] = s->sty;
    x[18] = (double)s->rows;
}

static void rc_stats_unpack(rc_stats *s, const double *x)
{
    int k;
    s->e0 = x[0];
    s->scale = x[1];
    for (k = 0; k < 3; ++k) {
        s->p0[k] = x[2 + k];
        s->l0[k] = x[5 + k];
    }
    s->max_rel = x[8];
    s->last_rel = x[9];
    s->max_dp = x[10];
    s->max_dl = x[11];
    s->min_gap = x[12];
    s->max_eq = x[13];
    s->st = x[14];
    s->sy = x[15];
    s->stt = x[16];
    s->sty = x[17];
    s->rows = (long)x[18];
}

/* OUT/checkpoint.rcp at a step boundary: before the rows of that step
 * are written, so that a restart writes them again at the same place. */
static rc_status rc_run_checkpoint(const rc_scenario *scn,
                                   const rc_run_options *opt, rc_system *sys,
                                   const rc_stats *stats, rc_outfile *diag,
                                   rc_outfile *traj, double wall,
                                   rc_error *err)
{
    rc_ckpt_writer w;
    double packed[RC_STATS_DOUBLES];
    rc_status st;
    if ((st = rc_ckpt_begin(&w, opt->out_dir, RC_CKPT_SINGLE, err)) != RC_OK)
        return st;
    if ((st = rc_ckpt_put_scenario(&w, scn, opt->out_dir, err)) != RC_OK ||
        (st = rc_ckpt_put_output(&w, "DIAG", diag, err)) != RC_OK ||
        (st = rc_ckpt_put_output(&w, "TRAJ", traj, err)) != RC_OK) {
        rc_ckpt_abandon(&w);
        return st;
    }
    rc_system_checkpoint_(sys, &w);
    rc_stats_pack(stats, packed);
    rc_ckpt_put(&w, "STATS", packed, sizeof packed);
    rc_ckpt_put(&w, "STATREL", stats->rel,
                sizeof(double) *
                    (size_t)(stats->rows < stats->rel_cap ? stats->rows
                                                          : stats->rel_cap));
    rc_ckpt_put(&w, "WALL", &wall, sizeof wall);
    return rc_ckpt_finish(&w, err);
}

/* The state, statistics and outputs of a checkpoint; *wall receives the
 * wall seconds the run had taken. */
static rc_status rc_run_restore(const rc_run_options *opt, rc_system *sys,
                                rc_stats *stats, rc_outfile *diag,
                                rc_outfile *traj, int want_traj, double *wall,
                                rc_error *err)
{
    rc_ckpt c;
    double packed[RC_STATS_DOUBLES];
    const void *rel;
    size_t rel_bytes = 0;
    rc_status st;
    if ((st = rc_ckpt_load(opt->restart, &c, err)) != RC_OK)
        return st;
    if (c.kind != RC_CKPT_SINGLE) {
        rc_ckpt_free(&c);
        err->status = RC_ERR_PARSE;
        snprintf(err->file, sizeof err->file, "%s", opt->restart);
        snprintf(err->message, sizeof err->message,
                 "this checkpoint is of an %s, not of a single run",
                 c.kind == RC_CKPT_ENSEMBLE ? "ensemble" : "large system");
        return RC_ERR_PARSE;
    }
    if ((st = rc_system_restore_(sys, &c, err)) != RC_OK ||
        (st = rc_ckpt_get(&c, "STATS", packed, sizeof packed, err)) !=
            RC_OK ||
        (st = rc_ckpt_get(&c, "WALL", wall, sizeof *wall, err)) != RC_OK)
        goto done;
    rc_stats_unpack(stats, packed);
    rel = rc_ckpt_find(&c, "STATREL", &rel_bytes);
    if (!rel || rel_bytes % sizeof(double) != 0 ||
        (long)(rel_bytes / sizeof(double)) > stats->rows) {
        st = rc_ckpt_corrupt(&c, err, "its energy-error series is damaged");
        goto done;
    }
    stats->rel_cap = (long)(rel_bytes / sizeof(double)) + 1024;
    stats->rel = (double *)malloc(sizeof(double) * (size_t)stats->rel_cap);
    if (!stats->rel) {
        st = err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        goto done;
    }
    if (rel_bytes > 0)
        memcpy(stats->rel, rel, rel_bytes);
    if ((st = rc_ckpt_reopen_output(&c, "DIAG", diag, opt->out_dir,
                                    "diagnostics.csv", err)) != RC_OK)
        goto done;
    if ((st = rc_ckpt_reopen_output(&c, "TRAJ", traj, opt->out_dir,
                                    "trajectory.xyz", err)) != RC_OK)
        goto done;
    if (!diag->f || (want_traj && !traj->f)) {
        st = rc_ckpt_corrupt(&c, err, "it records no diagnostics.csv (or "
                                      "no trajectory.xyz) for this scenario");
        goto done;
    }
done:
    rc_ckpt_free(&c);
    return st;
}

rc_status rc_run(const rc_scenario *scn, const rc_run_options *opt,
                 rc_run_result *result, rc_error *err)
{
    /* Every name a run writes, final and partial: a .partial left by an
     * earlier failed run must not sit next to this run's results. */
    static const char *const outputs[] = {"summary.json", "diagnostics.csv",
                                          "trajectory.xyz",
                                          "summary.json.partial",
                                          "diagnostics.csv.partial",
                                          "trajectory.xyz.partial",
                                          RC_CKPT_NAME, NULL};
    rc_error local;
    rc_run_result res;
    rc_stats stats;
    rc_scenario_run info;
    rc_system *sys = NULL;
    rc_outfile diag, traj, summ;
    rc_diagnostics d;
    rc_status st = RC_OK;
    double *qbuf = NULL, *pbuf = NULL, *mass = NULL, *radius = NULL;
    double t_start, t_last_cb, wall_before = 0.0, next_ckpt_time = 0.0,
                                 next_ckpt_wall = 0.0;
    char message[600] = "";
    long step, first_step = 0;
    int threads = 0, stopped = 0;

    if (!err)
        err = &local;
    memset(err, 0, sizeof *err);
    memset(&res, 0, sizeof res);
    memset(&stats, 0, sizeof stats);
    memset(&diag, 0, sizeof diag);
    memset(&traj, 0, sizeof traj);
    memset(&summ, 0, sizeof summ);
    snprintf(res.status, sizeof res.status, "failed");
    res.failure_time = NAN;
    if (!scn || !opt || !opt->out_dir) {
        snprintf(err->message, sizeof err->message, "rc_run: bad arguments");
        return err->status = RC_ERR_INVALID;
    }
    rc_scenario_run_info(scn, &info);
    if (scn->model) /* generalized coordinates: src/host/model/ */
        return rc_model_run_(scn, opt, result, err);
    if (scn->md.present) { /* a box: the large-system engines
                            * (src/host/md/), which choose their backend
                            * themselves; a start they would refuse is
                            * bad input, refused before anything is
                            * written */
        if ((st = rc_scenario_check(scn, err)) != RC_OK) {
            if (result)
                *result = res;
            return st;
        }
        return rc_md_run_(scn, opt, NULL, result, err);
    }
    if ((st = rc_backend_choose(opt, &res.backend, err)) != RC_OK)
        return st;
    if ((st = rc_scenario_build(scn, &sys, err)) != RC_OK)
        return st;
    threads = res.backend == RC_BACKEND_REFERENCE ? 1 : opt->threads;
    rc_system_set_threads(sys, threads);

    /* Output directory: clear stale results first, so that nothing from
     * an earlier run can pass for the output of this one; a restart
     * keeps the .partial files it continues (and its checkpoint). */
    if ((st = rc_out_mkdirs(opt->out_dir, err)) != RC_OK)
        goto done;
    if ((st = rc_ckpt_clear_stale(opt->out_dir, outputs, opt->restart != NULL,
                                  err)) != RC_OK)
        goto done;
    if (opt->restart) {
        if ((st = rc_run_restore(opt, sys, &stats, &diag, &traj,
                                 info.trajectory == RC_TRAJECTORY_XYZ,
                                 &wall_before, err)) != RC_OK)
            goto done;
        first_step = rc_system_steps_taken(sys);
        res.steps = first_step;
    } else {
        if ((st = rc_out_open(&diag, opt->out_dir, "diagnostics.csv", err)))
            goto done;
        if (info.trajectory == RC_TRAJECTORY_XYZ &&
            (st = rc_out_open(&traj, opt->out_dir, "trajectory.xyz", err)))
            goto done;
    }
    {
        size_t N = (size_t)scn->n * (size_t)scn->dimension;
        qbuf = (double *)malloc(sizeof(double) * N);
        pbuf = (double *)malloc(sizeof(double) * N);
        mass = (double *)malloc(sizeof(double) * (size_t)scn->n);
        radius = (double *)malloc(sizeof(double) * (size_t)scn->n);
        if (!qbuf || !pbuf || !mass || !radius) {
            st = err->status = RC_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "out of memory");
            goto done;
        }
        rc_system_get_particles(sys, mass, radius);
    }

    if (!opt->restart)
        rc_out_diagnostics_header(diag.f);
    rc_table_put_(opt->on_table, opt->table_ctx, &rc_table_diagnostics_, 0,
                  NULL);
    t_start = t_last_cb = rc_now();
    next_ckpt_wall = t_start + scn->checkpoint_wall;
    next_ckpt_time = scn->checkpoint_every;
    if (opt->restart) /* the checkpoint that restarts is not written again */
        rc_ckpt_due(scn, first_step, info.dt, &next_ckpt_time,
                          &next_ckpt_wall, t_start);
    for (step = first_step;; ++step) {
        int last = step == info.steps;
        if (step > first_step && !last &&
            rc_ckpt_due(scn, step, info.dt, &next_ckpt_time,
                              &next_ckpt_wall, rc_now()) &&
            (st = rc_run_checkpoint(scn, opt, sys, &stats, &diag, &traj,
                                    wall_before + rc_now() - t_start,
                                    err)) != RC_OK) {
            snprintf(message, sizeof message, "%.500s", err->message);
            break;
        }
        if (step % info.every == 0 || last) {
            if ((st = rc_system_diagnostics(sys, &d)) != RC_OK)
                break;
            rc_emit_row(diag.f, &stats, opt, &d);
        }
        if (traj.f && (step % info.trajectory_every == 0 || last))
            rc_out_xyz_frame(traj.f, sys, mass, radius, qbuf, pbuf);
        if (last)
            break;
        if ((st = rc_system_step(sys, 1)) != RC_OK) {
            /* The failed step did not complete: the state stays at the
             * last good step; say where it happened. */
            snprintf(message, sizeof message, "%s", rc_system_message(sys));
            res.failure_time = (double)(step + 1) * info.dt;
            break;
        }
        res.steps = step + 1;
        if ((step & 15) == 0 &&
            rc_progress_due(opt, &t_last_cb, step + 1, info.steps, t_start,
                            diag.f, NULL)) {
            stopped = 1;
            break;
        }
    }
    res.wall_seconds = wall_before + rc_now() - t_start;
    if (opt->progress && st == RC_OK && !stopped)
        opt->progress(opt->progress_ctx, info.steps, info.steps,
                      res.wall_seconds);
    if (stopped) {
        /* The checkpoint first (it records the outputs up to here), then
         * one last row so the partial output ends at the stop. */
        rc_error cerr;
        memset(&cerr, 0, sizeof cerr);
        rc_ckpt_stop_message(message, sizeof message, res.steps, info.steps,
                             opt->out_dir,
                             rc_run_checkpoint(scn, opt, sys, &stats, &diag,
                                               &traj, res.wall_seconds,
                                               &cerr),
                             &cerr);
        if (rc_system_diagnostics(sys, &d) == RC_OK)
            rc_emit_row(diag.f, &stats, opt, &d);
        snprintf(res.status, sizeof res.status, "interrupted");
    } else if (st == RC_OK) {
        snprintf(res.status, sizeof res.status, "ok");
    }
    res.energy_initial = stats.e0;
    res.max_rel_energy_error = stats.max_rel;
    res.final_rel_energy_error = stats.last_rel;
    res.energy_drift_per_time = rc_stats_slope(&stats);
    res.max_momentum_error = stats.max_dp;
    res.max_angular_momentum_error = stats.max_dl;
    res.windowed_drift = rc_stats_windowed_drift(&stats);

    {
        rc_error werr;
        rc_status wst;
        rc_outfile *all[3];
        memset(&werr, 0, sizeof werr);
        wst = rc_out_open(&summ, opt->out_dir, "summary.json", &werr);
        if (wst == RC_OK) {
            cJSON *extra = rc_json_avi(NULL, sys);
            wst = rc_write_summary(scn, opt, &res, &stats, message, threads,
                                   extra, &summ, &werr);
            cJSON_Delete(extra);
        }
        all[0] = &diag;
        all[1] = &traj;
        all[2] = &summ;
        st = rc_run_settle(st, stopped, wst, &werr, all, 3, opt->out_dir,
                           message, &res, err);
    }

done:
    rc_out_abandon(&diag);
    rc_out_abandon(&traj);
    rc_out_abandon(&summ);
    free(qbuf);
    free(pbuf);
    free(mass);
    free(radius);
    rc_system_free(sys);
    free(stats.rel);
    if (result)
        *result = res;
    return st;
}

/* The one run loop of the generalized-coordinate models (model.h): every
 * method of every kind is stepped here, through its type object, with
 * the outputs, statistics, progress and failure handling of rc_run. */
#define _POSIX_C_SOURCE 200809L
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../checkpoint.h"
#include "../clock.h"
#include "../output.h"
#include "../run_impl.h"
#include "../scenario_impl.h"
#include "../tables.h"

/* A number, or an empty field for a quantity the method does not define
 * (pandas reads it as NaN). */
static void rc_model_csv_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, ",%.17g", v);
    else if (isnan(v))
        fputc(',', f);
    else
        fprintf(f, ",%s", v > 0 ? "inf" : "-inf");
}

void rc_model_csv_header(FILE *f, const rc_model *m)
{
    int k;
    fputs("step,time,energy,kinetic,potential,discrete_energy,"
          "modified_energy,max_constraint_error,min_gap,impacts,"
          "solver_iterations",
          f);
    for (k = 0; k < m->n; ++k)
        fprintf(f, ",%s", m->coord[k]);
    for (k = 0; k < m->n; ++k)
        fprintf(f, ",p_%s", m->coord[k]);
    for (k = 0; k < m->naux; ++k)
        fprintf(f, ",%s", m->aux_name[k]);
    fputc('\n', f);
}

void rc_model_csv_row(FILE *f, const rc_model *m,
                             const rc_model_state *s, const rc_model_diag *d)
{
    int k;
    fprintf(f, "%ld,%.17g", s->steps, s->t);
    rc_model_csv_num(f, d->energy);
    rc_model_csv_num(f, d->kinetic);
    rc_model_csv_num(f, d->potential);
    rc_model_csv_num(f, d->discrete_energy);
    rc_model_csv_num(f, d->modified_energy);
    rc_model_csv_num(f, d->constraint_error);
    rc_model_csv_num(f, d->min_gap);
    fprintf(f, ",%ld,%d", d->impacts, d->iterations);
    for (k = 0; k < m->n; ++k)
        rc_model_csv_num(f, s->q[k]);
    for (k = 0; k < m->n; ++k)
        rc_model_csv_num(f, s->p[k]);
    for (k = 0; k < m->naux; ++k)
        rc_model_csv_num(f, s->aux[k]);
    fputc('\n', f);
}

/* diagnostics.csv as the table "diagnostics" (run.h): the columns of
 * rc_model_csv_header, the values of rc_model_csv_row (a NaN where the
 * file leaves the field empty). */
#define RC_MODEL_FIXED_COLS 11
#define RC_MODEL_MAX_COLS (RC_MODEL_FIXED_COLS + 3 * RC_MODEL_MAX_DIM)
typedef struct rc_model_table {
    rc_table t;
    const char *cols[RC_MODEL_MAX_COLS];
    rc_column_kind kinds[RC_MODEL_MAX_COLS];
    char p_name[RC_MODEL_MAX_DIM][RC_MODEL_NAME_MAX + 2];
    double row[RC_MODEL_MAX_COLS];
} rc_model_table;

static void rc_model_table_init(rc_model_table *T, const rc_model *m)
{
    static const char *const fixed[RC_MODEL_FIXED_COLS] = {
        "step", "time", "energy", "kinetic", "potential", "discrete_energy",
        "modified_energy", "max_constraint_error", "min_gap", "impacts",
        "solver_iterations"};
    int k, c = 0;
    for (k = 0; k < RC_MODEL_FIXED_COLS; ++k) {
        T->kinds[c] = k == 0 || k >= 9 ? RC_COLUMN_INTEGER : RC_COLUMN_REAL;
        T->cols[c++] = fixed[k];
    }
    for (k = 0; k < m->n; ++k)
        T->cols[c++] = m->coord[k];
    for (k = 0; k < m->n; ++k) {
        snprintf(T->p_name[k], sizeof T->p_name[k], "p_%s", m->coord[k]);
        T->cols[c++] = T->p_name[k];
    }
    for (k = 0; k < m->naux; ++k)
        T->cols[c++] = m->aux_name[k];
    for (k = RC_MODEL_FIXED_COLS; k < c; ++k)
        T->kinds[k] = RC_COLUMN_REAL;
    T->t.name = "diagnostics";
    T->t.ncols = c;
    T->t.columns = T->cols;
    T->t.kinds = T->kinds;
    T->t.words = NULL;
}

static void rc_model_table_row(rc_model_table *T, const rc_run_options *opt,
                               const rc_model *m, const rc_model_state *s,
                               const rc_model_diag *d)
{
    double *v = T->row;
    int k, c = 0;
    if (!opt->on_table)
        return;
    v[c++] = (double)s->steps;
    v[c++] = s->t;
    v[c++] = d->energy;
    v[c++] = d->kinetic;
    v[c++] = d->potential;
    v[c++] = d->discrete_energy;
    v[c++] = d->modified_energy;
    v[c++] = d->constraint_error;
    v[c++] = d->min_gap;
    v[c++] = (double)d->impacts;
    v[c++] = (double)d->iterations;
    for (k = 0; k < m->n; ++k)
        v[c++] = s->q[k];
    for (k = 0; k < m->n; ++k)
        v[c++] = s->p[k];
    for (k = 0; k < m->naux; ++k)
        v[c++] = s->aux[k];
    opt->on_table(opt->table_ctx, &T->t, 1, v);
}

/* The energy-like quantities besides H: largest and final relative
 * change against the first row, on H's scale. */
typedef struct rc_model_energy_stats {
    double first, max_rel, last_rel;
    int have;
} rc_model_energy_stats;

static void rc_model_energy_add(rc_model_energy_stats *e, double v,
                                double scale)
{
    double rel;
    if (!isfinite(v))
        return;
    if (!e->have) {
        e->first = v;
        e->have = 1;
    }
    rel = (v - e->first) / scale;
    e->last_rel = rel;
    e->max_rel = fmax(e->max_rel, fabs(rel));
}

typedef struct rc_model_loop {
    rc_stats stats;
    rc_model_energy_stats discrete, modified;
    long impacts;
    long iterations_total;
    int iterations_max;
    double max_constraint_error;
    rc_model_table table;
} rc_model_loop;

void rc_model_diag_to_row(const rc_model_state *s, const rc_model_diag *md,
                          rc_diagnostics *out)
{
    rc_diagnostics d;
    memset(&d, 0, sizeof d);
    d.step = s->steps;
    d.time = s->t;
    d.energy = md->energy;
    d.kinetic = isfinite(md->kinetic) ? md->kinetic : 0.0;
    d.potential = isfinite(md->potential) ? md->potential : 0.0;
    d.modified_energy = md->modified_energy;
    d.min_gap = isnan(md->min_gap) ? INFINITY : md->min_gap;
    d.max_equality_error =
        isfinite(md->constraint_error) ? md->constraint_error : 0.0;
    d.solver_iterations = md->iterations;
    d.reflections_total = md->impacts;
    *out = d;
}

static void rc_model_emit(FILE *f, rc_model_loop *L, const rc_run_options *opt,
                          const rc_model *m, const rc_model_state *s,
                          const rc_model_diag *md)
{
    rc_diagnostics d;
    rc_model_diag_to_row(s, md, &d);
    rc_model_csv_row(f, m, s, md);
    rc_model_table_row(&L->table, opt, m, s, md);
    rc_stats_add(&L->stats, &d);
    rc_model_energy_add(&L->discrete, md->discrete_energy, L->stats.scale);
    rc_model_energy_add(&L->modified, md->modified_energy, L->stats.scale);
    L->impacts = md->impacts;
    if (isfinite(md->constraint_error))
        L->max_constraint_error =
            isnan(L->max_constraint_error)
                ? md->constraint_error
                : fmax(L->max_constraint_error, md->constraint_error);
    if (opt->on_row)
        opt->on_row(opt->row_ctx, &d);
}

/* The model run's own fields of summary.json. */
static cJSON *rc_model_summary_extra(const rc_model *m,
                                     const rc_model_method *method,
                                     const rc_model_loop *L)
{
    cJSON *x = cJSON_CreateObject(), *mo, *arr, *par;
    int k;
    if (!x)
        return NULL;
    mo = cJSON_AddObjectToObject(x, "model");
    if (mo) {
        cJSON_AddStringToObject(mo, "kind", m->kind->name);
        if (m->builtin[0])
            cJSON_AddStringToObject(mo, "builtin", m->builtin);
        else
            cJSON_AddStringToObject(mo, "builtin", "");
        arr = cJSON_AddArrayToObject(mo, "coordinates");
        for (k = 0; arr && k < m->n; ++k)
            cJSON_AddItemToArray(arr, cJSON_CreateString(m->coord[k]));
        par = cJSON_AddObjectToObject(mo, "parameters");
        for (k = 0; par && k < m->npar; ++k)
            cJSON_AddNumberToObject(par, m->par_name[k], m->par[k]);
    }
    cJSON_AddStringToObject(x, "method_description", method->what);
    cJSON_AddNumberToObject(x, "impacts", (double)L->impacts);
    cJSON_AddNumberToObject(x, "solver_iterations_total",
                            (double)L->iterations_total);
    cJSON_AddNumberToObject(x, "solver_iterations_max_per_step",
                            L->iterations_max);
    rc_json_number_or_null(x, "max_constraint_error",
                           L->max_constraint_error);
    rc_json_number_or_null(x, "max_rel_discrete_energy_error",
                           L->discrete.have ? L->discrete.max_rel : NAN);
    rc_json_number_or_null(x, "final_rel_discrete_energy_error",
                           L->discrete.have ? L->discrete.last_rel : NAN);
    rc_json_number_or_null(x, "max_rel_modified_energy_error",
                           L->modified.have ? L->modified.max_rel : NAN);
    rc_json_number_or_null(x, "final_rel_modified_energy_error",
                           L->modified.have ? L->modified.last_rel : NAN);
    return x;
}

rc_status rc_model_run_(const rc_scenario *scn, const rc_run_options *opt,
                        rc_run_result *result, rc_error *err)
{
    static const char *const outputs[] = {"summary.json", "diagnostics.csv",
                                          "summary.json.partial",
                                          "diagnostics.csv.partial",
                                          RC_CKPT_NAME, NULL};
    const rc_model *m = scn->model;
    const rc_model_method *method = scn->model_method;
    rc_run_result res;
    rc_model_loop L;
    rc_model_state s;
    rc_model_diag d;
    rc_scenario_run info;
    rc_outfile diag, summ;
    void *ws = NULL;
    rc_status st = RC_OK;
    double t_start, t_last_cb;
    char message[1100] = "";
    long step;
    int stopped = 0;

    memset(&res, 0, sizeof res);
    memset(&L, 0, sizeof L);
    memset(&s, 0, sizeof s);
    memset(&diag, 0, sizeof diag);
    memset(&summ, 0, sizeof summ);
    snprintf(res.status, sizeof res.status, "failed");
    res.failure_time = NAN;
    res.backend = RC_BACKEND_CPU;
    L.max_constraint_error = NAN; /* null until a method reports one */
    rc_scenario_run_info(scn, &info);
    if (!m || !method) {
        snprintf(err->message, sizeof err->message,
                 "rc_run: the scenario has no model or no method");
        return err->status = RC_ERR_INVALID;
    }
    if (opt->backend == RC_BACKEND_CUDA) {
        snprintf(err->message, sizeof err->message,
                 "a single run of a model in generalized coordinates is "
                 "on the CPU; --backend cuda takes particle ensembles, "
                 "ensembles of built-in lagrangian models and large "
                 "systems");
        return err->status = RC_ERR_INVALID;
    }
    if (opt->restart) {
        snprintf(err->message, sizeof err->message,
                 "model runs write no checkpoints, so there is nothing to "
                 "restart from");
        return err->status = RC_ERR_INVALID;
    }
    if ((st = method->create(m, &scn->integ, &ws, err)) != RC_OK)
        return st;
    if (rc_model_state_init(m, &s) != RC_OK) {
        st = err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        goto done;
    }
    if ((st = rc_out_mkdirs(opt->out_dir, err)) != RC_OK ||
        (st = rc_ckpt_clear_stale(opt->out_dir, outputs, 0, err)) != RC_OK ||
        (st = rc_out_open(&diag, opt->out_dir, "diagnostics.csv", err)) !=
            RC_OK)
        goto done;
    rc_model_csv_header(diag.f, m);
    rc_model_table_init(&L.table, m);
    rc_table_put_(opt->on_table, opt->table_ctx, &L.table.t, 0, NULL);
    t_start = t_last_cb = rc_now();
    for (step = 0;; ++step) {
        int last = step == info.steps;
        if (step % info.every == 0 || last) {
            method->diagnose(ws, &s, &d);
            rc_model_emit(diag.f, &L, opt, m, &s, &d);
        }
        if (last)
            break;
        if ((st = method->step(ws, &s, err)) != RC_OK) {
            /* the state is that of the last completed step */
            snprintf(message, sizeof message, "%.1000s",
                     err->message[0] ? err->message : rc_status_str(st));
            res.failure_time = (double)(step + 1) * info.dt;
            break;
        }
        {
            int it;
            if (method->iterations) {
                it = method->iterations(ws);
            } else {
                method->diagnose(ws, &s, &d);
                it = d.iterations;
            }
            L.iterations_total += it;
            if (it > L.iterations_max)
                L.iterations_max = it;
        }
        res.steps = step + 1;
        if ((step & 15) == 0 &&
            rc_progress_due(opt, &t_last_cb, step + 1, info.steps, t_start,
                            diag.f, NULL)) {
            stopped = 1;
            break;
        }
    }
    res.wall_seconds = rc_now() - t_start;
    if (opt->progress && st == RC_OK && !stopped)
        opt->progress(opt->progress_ctx, info.steps, info.steps,
                      res.wall_seconds);
    if (stopped) {
        /* one last row so the partial output ends at the stop */
        method->diagnose(ws, &s, &d);
        rc_model_emit(diag.f, &L, opt, m, &s, &d);
        snprintf(message, sizeof message,
                 "stopped after %ld of %ld steps (model runs write no "
                 "checkpoint: run again to continue)",
                 res.steps, info.steps);
        snprintf(res.status, sizeof res.status, "interrupted");
    } else if (st == RC_OK) {
        snprintf(res.status, sizeof res.status, "ok");
    }
    res.energy_initial = L.stats.e0;
    res.max_rel_energy_error = L.stats.max_rel;
    res.final_rel_energy_error = L.stats.last_rel;
    res.energy_drift_per_time = rc_stats_slope(&L.stats);
    res.windowed_drift = rc_stats_windowed_drift(&L.stats);
    {
        rc_error werr;
        rc_status wst;
        rc_outfile *all[2];
        cJSON *extra = rc_model_summary_extra(m, method, &L);
        memset(&werr, 0, sizeof werr);
        wst = extra ? rc_out_open(&summ, opt->out_dir, "summary.json", &werr)
                    : RC_ERR_NOMEM;
        if (wst == RC_OK)
            wst = rc_write_summary(scn, opt, &res, &L.stats, message, 1,
                                   extra, &summ, &werr);
        cJSON_Delete(extra);
        all[0] = &diag;
        all[1] = &summ;
        st = rc_run_settle(st, stopped, wst, &werr, all, 2, opt->out_dir,
                           message, &res, err);
    }
done:
    rc_out_abandon(&diag);
    rc_out_abandon(&summ);
    rc_model_state_free(&s);
    if (ws)
        method->destroy(ws);
    free(L.stats.rel);
    if (result)
        *result = res;
    return st;
}

/* The CSV outputs of a run as tables in memory (tables.h). */
#include "tables.h"

#include <math.h>
#include <stdlib.h>

#include "ensemble_impl.h"
#include "md/observables.h"
#include "scenario_impl.h"

#define RC_R RC_COLUMN_REAL
#define RC_I RC_COLUMN_INTEGER

void rc_table_put_(rc_table_fn fn, void *ctx, const rc_table *t, long nrows,
                   const double *v)
{
    if (fn)
        fn(ctx, t, nrows, nrows > 0 ? v : NULL);
}

/* ---- a particle system's diagnostics.csv (output.c) */

static const char *const rc_diag_cols[] = {
    "step", "time", "energy", "modified_energy", "kinetic", "potential",
    "px", "py", "pz", "lx", "ly", "lz", "min_gap", "max_equality_error",
    "active_contacts", "reflections", "solver_iterations"};
static const rc_column_kind rc_diag_kinds[] = {
    RC_I, RC_R, RC_R, RC_R, RC_R, RC_R, RC_R, RC_R, RC_R,
    RC_R, RC_R, RC_R, RC_R, RC_R, RC_I, RC_I, RC_I};
const rc_table rc_table_diagnostics_ = {"diagnostics", 17, rc_diag_cols,
                                        rc_diag_kinds, NULL};

void rc_table_diagnostics_row_(const rc_run_options *opt,
                               const rc_diagnostics *d)
{
    double v[17];
    int a;
    if (!opt->on_table)
        return;
    v[0] = (double)d->step;
    v[1] = d->time;
    v[2] = d->energy;
    v[3] = d->modified_energy;
    v[4] = d->kinetic;
    v[5] = d->potential;
    for (a = 0; a < 3; ++a) {
        v[6 + a] = d->momentum[a];
        v[9 + a] = d->angular_momentum[a];
    }
    v[12] = d->min_gap;
    v[13] = d->max_equality_error;
    v[14] = d->active_contacts;
    v[15] = d->reflections;
    v[16] = d->solver_iterations;
    opt->on_table(opt->table_ctx, &rc_table_diagnostics_, 1, v);
}

/* ---- a large system's observables.csv, msd.csv, rdf.csv (run_md.c) */

static const char *const rc_obs_cols[] = {
    "step", "time", "temperature", "kinetic_energy", "potential_energy",
    "energy", "momentum_x", "momentum_y", "momentum_z", "pressure",
    "pressure_kinetic", "pressure_virial", "pressure_collision", "Z",
    "collisions", "wall_collisions", "largest_island", "msd", "max_overlap"};
static const rc_column_kind rc_obs_kinds[] = {
    RC_I, RC_R, RC_R, RC_R, RC_R, RC_R, RC_R, RC_R, RC_R, RC_R,
    RC_R, RC_R, RC_R, RC_R, RC_I, RC_I, RC_I, RC_R, RC_R};
const rc_table rc_table_observables_ = {"observables", 19, rc_obs_cols,
                                        rc_obs_kinds, NULL};

void rc_table_observables_row_(const rc_run_options *opt, long step,
                               double time, double temperature,
                               double kinetic, double potential,
                               const double *momentum, double pk, double pv,
                               double pc, double z, long collisions,
                               long wall_collisions, long largest_island,
                               double msd, double max_overlap)
{
    double v[19];
    if (!opt->on_table)
        return;
    v[0] = (double)step;
    v[1] = time;
    v[2] = temperature;
    v[3] = kinetic;
    v[4] = potential;
    v[5] = kinetic + potential;
    v[6] = momentum[0];
    v[7] = momentum[1];
    v[8] = momentum[2];
    v[9] = pk + pv + pc;
    v[10] = pk;
    v[11] = pv;
    v[12] = pc;
    v[13] = z;
    v[14] = (double)collisions;
    v[15] = (double)wall_collisions;
    v[16] = (double)largest_island;
    v[17] = msd;
    v[18] = max_overlap;
    opt->on_table(opt->table_ctx, &rc_table_observables_, 1, v);
}

static const char *const rc_msd_cols[] = {"time", "msd"};
static const rc_column_kind rc_real2[] = {RC_R, RC_R};
const rc_table rc_table_msd_ = {"msd", 2, rc_msd_cols, rc_real2, NULL};

void rc_table_msd_row_(const rc_run_options *opt, double time, double msd)
{
    double v[2];
    if (!opt->on_table)
        return;
    v[0] = time;
    v[1] = msd;
    opt->on_table(opt->table_ctx, &rc_table_msd_, 1, v);
}

static const char *const rc_rdf_cols[] = {"r", "g"};
const rc_table rc_table_rdf_ = {"rdf", 2, rc_rdf_cols, rc_real2, NULL};

void rc_table_rdf_rows_(const rc_run_options *opt, const rc_rdf *rdf)
{
    double *v;
    double dr;
    int k;
    if (!opt->on_table)
        return;
    opt->on_table(opt->table_ctx, &rc_table_rdf_, 0, NULL);
    if (!rdf || !rdf->hist || rdf->nbins <= 0)
        return;
    dr = rdf->rmax / (double)rdf->nbins;
    v = (double *)malloc(sizeof(double) * 2 * (size_t)rdf->nbins);
    /* without memory, bin by bin (the same rows) */
    for (k = 0; k < rdf->nbins; ++k) {
        double row[2];
        row[0] = dr * ((double)k + 0.5); /* rc_rdf_write's r */
        row[1] = rc_rdf_value(rdf, k);
        if (v) {
            v[2 * k] = row[0];
            v[2 * k + 1] = row[1];
        } else {
            opt->on_table(opt->table_ctx, &rc_table_rdf_, 1, row);
        }
    }
    if (v)
        opt->on_table(opt->table_ctx, &rc_table_rdf_, rdf->nbins, v);
    free(v);
}

/* ---- an ensemble's members.csv (ensemble.c: rc_ens_members_header,
 * rc_member_row) */

/* RC_MEMBER_OK, RC_MEMBER_FAILED, RC_MEMBER_INVALID, as members.csv
 * words them */
static const char *const rc_status_words[] = {"ok", "failed", "invalid",
                                              NULL};
static const char *const rc_member_fixed[] = {
    "E0", "max_rel_energy_error", "final_rel_energy_error", "windowed_drift",
    "drift_per_time", "momentum_error", "angular_momentum_error", "impacts",
    "steps", "status", "fail_step", "l2_error"};
static const rc_column_kind rc_member_fixed_kinds[] = {
    RC_R, RC_R, RC_R, RC_R, RC_R, RC_R, RC_R, RC_I, RC_I,
    RC_COLUMN_WORD, RC_I, RC_R};
#define RC_MEMBER_ROWS 2048 /* rows per call */

void rc_table_members_(rc_table_fn fn, void *ctx, const rc_ensemble_spec *e,
                       const double *values, const rc_member *mb,
                       const unsigned char *only, long first, long end)
{
    /* member, one column per rule, then the fixed ones (l2_error only
     * with a reference run) */
    int nr = e->nrules, nfix = e->has_reference ? 12 : 11;
    int ncols = 1 + nr + nfix, c, r;
    const char **cols = (const char **)calloc((size_t)ncols, sizeof *cols);
    rc_column_kind *kinds =
        (rc_column_kind *)calloc((size_t)ncols, sizeof *kinds);
    const char *const **words =
        (const char *const **)calloc((size_t)ncols, sizeof *words);
    const char ***rule_words =
        (const char ***)calloc((size_t)nr + 1, sizeof *rule_words);
    double *v = (double *)malloc(sizeof(double) * (size_t)ncols *
                                 RC_MEMBER_ROWS);
    rc_table t;
    long k, rows = 0;
    int ok = cols && kinds && words && rule_words && v;
    if (!fn)
        goto done;
    cols[0] = "member";
    kinds[0] = RC_I;
    for (r = 0; ok && r < nr; ++r) {
        const rc_vary_rule *ru = &e->rules[r];
        cols[1 + r] = ru->path;
        kinds[1 + r] = ru->texts ? RC_COLUMN_WORD : RC_R;
        if (ru->texts) {
            long w;
            rule_words[r] =
                (const char **)calloc((size_t)ru->nvalues + 1, sizeof(char *));
            if (!rule_words[r]) {
                ok = 0;
                break;
            }
            for (w = 0; w < ru->nvalues; ++w)
                rule_words[r][w] = ru->texts[w];
            words[1 + r] = rule_words[r];
        }
    }
    for (c = 0; c < nfix; ++c) {
        cols[1 + nr + c] = rc_member_fixed[c];
        kinds[1 + nr + c] = rc_member_fixed_kinds[c];
    }
    if (!ok) /* no memory: the caller gets no members table */
        goto done;
    words[1 + nr + 9] = rc_status_words;
    t.name = "members";
    t.ncols = ncols;
    t.columns = cols;
    t.kinds = kinds;
    t.words = words;
    fn(ctx, &t, 0, NULL);
    for (k = first; k < end; ++k) {
        const rc_member *b = &mb[k];
        double *x = v + rows * ncols;
        if (only && !only[k])
            continue;
        x[0] = (double)k;
        for (r = 0; r < nr; ++r)
            x[1 + r] = e->rules[r].texts ? (double)rc_rule_index_(e, k, r)
                                         : values[k * nr + r];
        x += 1 + nr;
        x[0] = b->e0;
        x[1] = b->max_rel;
        x[2] = b->final_rel;
        x[3] = b->windowed;
        x[4] = b->slope;
        x[5] = b->dp;
        x[6] = b->dl;
        x[7] = (double)b->impacts;
        x[8] = (double)b->steps;
        x[9] = (double)b->status;
        x[10] = (double)b->fail_step;
        if (e->has_reference)
            x[11] = b->l2;
        if (++rows == RC_MEMBER_ROWS) {
            fn(ctx, &t, rows, v);
            rows = 0;
        }
    }
    if (rows > 0)
        fn(ctx, &t, rows, v);
done:
    for (r = 0; rule_words && r < nr; ++r)
        free((void *)rule_words[r]);
    free(rule_words);
    free(words);
    free(kinds);
    free(cols);
    free(v);
}

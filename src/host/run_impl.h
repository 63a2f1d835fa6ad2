/* What rc_run (run.c) shares with the model runs (model/run_model.c):
 * the energy statistics over diagnostics rows and summary.json. */
#ifndef RC_RUN_IMPL_H
#define RC_RUN_IMPL_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "ricochet/run.h"
#include "output.h"

/* Running statistics over the recorded diagnostics rows. */
typedef struct rc_stats {
    double e0, scale;
    double p0[3], l0[3];
    double max_rel, last_rel;
    double max_dp, max_dl;
    double min_gap, max_eq;
    /* least-squares fit of rel error against time */
    double st, sy, stt, sty;
    long rows;
    double *rel;  /* [rows] relative energy error of every row */
    long rel_cap;
} rc_stats;

void rc_stats_add(rc_stats *s, const rc_diagnostics *d);
/* Largest |mean of a window - mean of the first| over ten equal windows
 * of the recorded rows (relative errors); 0 with fewer than ten rows. */
double rc_stats_windowed_drift(const rc_stats *s);
/* Least-squares slope of the relative energy error against time. */
double rc_stats_slope(const rc_stats *s);
/* One diagnostics row (particle runs' CSV): to the file, the statistics
 * and the caller's on_row. */
void rc_emit_row(FILE *f, rc_stats *stats, const rc_run_options *opt,
                 const rc_diagnostics *d);
/* key: v, or key: null when v is not finite (JSON has no inf or NaN). */
void rc_json_number_or_null(cJSON *o, const char *key, double v);
/* summary.json into `of`.  extra (may be NULL: a particle system) holds
 * the run's own fields, moved into the summary; with it the particle
 * fields (dimension, particles, momentum errors) are left out. */
rc_status rc_write_summary(const rc_scenario *scn, const rc_run_options *opt,
                           const rc_run_result *res, const rc_stats *s,
                           const char *message, int threads, cJSON *extra,
                           rc_outfile *of, rc_error *err);

/* The end of a run once its summary is written (wst: how that went, werr
 * its error).  A run that ended ok commits the files as one (summary
 * last) and removes its checkpoint; one stopped through the progress
 * callback ends RC_ERR_STATE with `message`; a failed one keeps its error
 * (or takes `message`).  Returns the run's final status; res->status
 * becomes "failed" when the commit fails. */
rc_status rc_run_settle(rc_status st, int stopped, rc_status wst,
                        const rc_error *werr, rc_outfile *const *files,
                        int nfiles, const char *out_dir, const char *message,
                        rc_run_result *res, rc_error *err);

#endif

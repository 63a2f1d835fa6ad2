/* The CSV outputs of a run as tables in memory (run.h: rc_table,
 * rc_table_fn): what each table is, and the calls that hand its rows to
 * the caller.  Each is called next to the fprintf of the same row, with
 * the same numbers, so that the table and the file cannot disagree (the
 * Python tests compare them). */
#ifndef RC_TABLES_H
#define RC_TABLES_H

#include "ricochet/run.h"

/* fn(ctx, t, nrows, v) when fn is set: nrows = 0 (v NULL) announces t. */
void rc_table_put_(rc_table_fn fn, void *ctx, const rc_table *t, long nrows,
                   const double *v);

/* A particle system's diagnostics.csv (rc_out_diagnostics_header). */
extern const rc_table rc_table_diagnostics_;
void rc_table_diagnostics_row_(const rc_run_options *opt,
                               const rc_diagnostics *d);

/* A large system's observables.csv, msd.csv and rdf.csv. */
extern const rc_table rc_table_observables_;
extern const rc_table rc_table_msd_;
extern const rc_table rc_table_rdf_;
/* One observables.csv row: its fields in the file's order. */
void rc_table_observables_row_(const rc_run_options *opt, long step,
                               double time, double temperature,
                               double kinetic, double potential,
                               const double *momentum, double pk, double pv,
                               double pc, double z, long collisions,
                               long wall_collisions, long largest_island,
                               double msd, double max_overlap);
void rc_table_msd_row_(const rc_run_options *opt, double time, double msd);
/* rdf.csv's rows at the end (announced, then every bin; rdf NULL: no
 * configuration was sampled, the file has its header only). */
struct rc_rdf;
void rc_table_rdf_rows_(const rc_run_options *opt, const struct rc_rdf *rdf);

/* An ensemble's members.csv: announced, then the rows of members
 * first..end-1 (a range's, or 0..n) flagged in `only` (NULL: every
 * one), in member order, in blocks.  values[k * nrules + r] is rule r's value for member k (ensemble.c's
 * rc_member_row prints the same fields). */
struct rc_ensemble_spec;
struct rc_member;
void rc_table_members_(rc_table_fn fn, void *ctx,
                       const struct rc_ensemble_spec *e,
                       const double *values, const struct rc_member *mb,
                       const unsigned char *only, long first, long end);

#endif

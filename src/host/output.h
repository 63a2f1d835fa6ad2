/* Output files written as NAME.partial and renamed into place only on
 * success, so that an output directory never looks complete after a
 * failure. */
#ifndef RC_OUTPUT_H
#define RC_OUTPUT_H

#include <stdio.h>

#include "ricochet/scenario.h"
#include "ricochet/system.h"

typedef struct rc_outfile {
    FILE *f;
    char final_path[1100];
    char partial_path[1120];
    int external; /* written and closed by another library (HDF5):
                     rc_out_commit_all only syncs and renames it */
} rc_outfile;

/* Create directory `dir` (and parents).  Fills err on failure. */
rc_status rc_out_mkdirs(const char *dir, rc_error *err);
/* Remove DIR/NAME if it exists (stale output from an earlier run). */
rc_status rc_out_remove_stale(const char *dir, const char *name,
                              rc_error *err);
rc_status rc_out_open(rc_outfile *of, const char *dir, const char *name,
                      rc_error *err);
/* Flush, fsync and close NAME.partial, keeping that name (a file that
 * rc_out_commit_all renames later as an external entry). */
rc_status rc_out_finish(rc_outfile *of, rc_error *err);
/* Close and rename NAME.partial -> NAME. */
rc_status rc_out_commit(rc_outfile *of, rc_error *err);
/* Commit several files as one: all flushed, fsync'ed and closed first,
 * then renamed in the order given (summary last); an error at any file
 * leaves every one under its .partial name (renames already made are
 * undone).  Files that were never opened are skipped. */
rc_status rc_out_commit_all(rc_outfile *const *files, int count,
                            rc_error *err);
/* Fault injection for the tests: 1 when the environment variable
 * RICOCHET_FAULT_ENOSPC (a comma-separated list of output names, e.g.
 * "rdf.csv,trajectory.h5md") names `name`, whose writes then fail as on a
 * full disk. */
int rc_out_fault_(const char *name);
/* When rc_out_fault_(name): *f (open on the file) is closed and replaced
 * by a stream on /dev/full. */
void rc_out_fault_redirect_(const char *name, FILE **f);
/* Close, keeping NAME.partial for inspection. */
void rc_out_abandon(rc_outfile *of);

/* diagnostics.csv */
void rc_out_diagnostics_header(FILE *f);
void rc_out_diagnostics_row(FILE *f, const rc_diagnostics *d);

/* One extended-XYZ frame of the current state. */
rc_status rc_out_xyz_frame(FILE *f, rc_system *sys, const double *mass,
                           const double *radius, double *qbuf,
                           double *pbuf);

#endif

/* ricochet — running a scenario to an output directory (DESIGN §8).
 *
 * rc_run() integrates a loaded scenario and writes, into opt->out_dir:
 *   diagnostics.csv   one row every output.every steps (and the last step)
 *   trajectory.xyz    extended XYZ frames, when output.trajectory = xyz
 *   summary.json      scenario echo, method, backend, timings, energy and
 *                     momentum errors, status
 * Files are written as NAME.partial and renamed only when the run
 * succeeds, summary.json last; a failed or interrupted run leaves the
 * .partial files (and summary.json.partial saying why) and no file with
 * a final name; an interrupted one also leaves checkpoint.rcp, from which
 * rc_run continues it (rc_run_options.restart). */
#ifndef RICOCHET_RUN_H
#define RICOCHET_RUN_H

#include "ricochet/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rc_backend {
    RC_BACKEND_AUTO = 0, /* the fastest available for this scenario */
    RC_BACKEND_CPU,      /* OpenMP CPU path */
    RC_BACKEND_REFERENCE,/* plain single-threaded CPU reference path */
    RC_BACKEND_CUDA      /* NVIDIA GPU */
} rc_backend;

const char *rc_backend_name(rc_backend backend);

/* Progress callback: step done of total, seconds since the start.
 * Return nonzero to stop the run early (it ends as "interrupted").
 * Before each call the run flushes its CSV outputs (diagnostics.csv,
 * observables.csv, msd.csv: fflush, no fsync), so that what the
 * callback reports (the CLI's status lines) is already in the files,
 * every row up to step - 1 (tail -f follows a batch job).  Ensembles
 * write members.csv at their end: nothing to flush before. */
typedef int (*rc_progress_fn)(void *ctx, long step, long total,
                              double elapsed);

/* Row callback: called with every diagnostics row as it is written. */
typedef void (*rc_row_fn)(void *ctx, const rc_diagnostics *row);

/* Tables in memory.  The CSV outputs a run writes row by row reach the
 * caller as tables too, with the file's column names and rows:
 *   "diagnostics"  diagnostics.csv: a particle system's, or a model's
 *                  (its columns name the coordinates)
 *   "observables"  a large system's observables.csv
 *   "msd"          its msd.csv (time, msd), rows as they are written
 *   "rdf"          its rdf.csv (r, g), at the end of the run
 *   "members"      an ensemble's members.csv (rc_ensemble_options), at
 *                  the end, in member order
 * The values are the doubles the file's text was printed from: equal to
 * the file where it prints 17 significant digits (diagnostics, members),
 * the unrounded values where it prints fewer (observables, msd, rdf: see
 * the README's "Outputs").  An ensemble's traces and groups.csv, and
 * trajectories, are files only. */
typedef enum rc_column_kind {
    RC_COLUMN_REAL = 0, /* a double (NaN where the CSV field is empty) */
    RC_COLUMN_INTEGER,  /* an integer, exact in the double */
    RC_COLUMN_WORD      /* a word (a member's status, a varied method):
                           the value is its index in words[c] */
} rc_column_kind;

typedef struct rc_table {
    const char *name;            /* "diagnostics", "observables", ... */
    int ncols;
    const char *const *columns;  /* [ncols] the CSV header's names */
    const rc_column_kind *kinds; /* [ncols] */
    /* [ncols]: a RC_COLUMN_WORD column's words, NULL-terminated; NULL
     * for the other columns */
    const char *const *const *words;
} rc_table;

/* Table callback: `nrows` rows of `table`, row-major (values[r * ncols +
 * c]).  The first call for each table has nrows = 0 and values = NULL:
 * it announces the table (its CSV header was written), so that a table
 * without rows still has its columns; the rows follow in file order,
 * one per call as they are written, or in blocks of rows at the end.
 * Called on the thread that called rc_run or rc_ensemble_run, never
 * concurrently.  Everything it receives is borrowed: valid during the
 * call only (copy what you keep); every call for one table in one run
 * has the same columns, kinds and words. */
typedef void (*rc_table_fn)(void *ctx, const rc_table *table, long nrows,
                            const double *values);

typedef struct rc_run_options {
    const char *out_dir;      /* required; created if missing */
    rc_backend backend;
    int threads;              /* CPU threads; 0 = OpenMP default */
    rc_progress_fn progress;  /* may be NULL */
    void *progress_ctx;
    rc_row_fn on_row;         /* may be NULL */
    void *row_ctx;
    /* Continue the run a checkpoint file recorded (NULL: start afresh).
     * The scenario must be the one rc_checkpoint_scenario() loads from
     * that file and out_dir the directory holding the run's .partial
     * files; the outputs then end byte for byte as an uninterrupted run
     * writes them (timings aside). */
    const char *restart;
    rc_table_fn on_table;     /* may be NULL: the CSV rows as tables */
    void *table_ctx;
} rc_run_options;

/* Checkpoints.  A run writes OUT/checkpoint.rcp (atomically: a .tmp
 * file, fsync, rename) every output.checkpoint_every of simulated time
 * or wall-clock seconds, and when it is stopped through the progress
 * callback; a run that ends ok removes it.  This loads the scenario a
 * checkpoint was written for (its file's text as it was then, with the
 * same --set overrides) and the output directory it wrote to (out_dir,
 * may be NULL).  A damaged checkpoint, or one from another version of
 * ricochet, is refused with RC_ERR_PARSE and a message. */
rc_status rc_checkpoint_scenario(const char *path, rc_scenario **out,
                                 char *out_dir, size_t out_dir_size,
                                 rc_error *err);

typedef struct rc_run_result {
    long steps;                  /* steps completed */
    double wall_seconds;
    double energy_initial;
    double max_rel_energy_error;   /* max |H - H0| / scale over rows */
    double final_rel_energy_error; /* (H_end - H0) / scale */
    double energy_drift_per_time;  /* least-squares slope of (H-H0)/scale */
    double max_momentum_error;     /* max |P - P0| over rows */
    double max_angular_momentum_error; /* max |L - L0| over rows */
    double windowed_drift; /* max over ten equal windows of rows of
                              |mean(H - H0) - mean of the first window| /
                              scale (0 with fewer than 10 rows) */
    double failure_time;   /* time of the failed step; NaN when none */
    rc_backend backend;            /* the backend that ran */
    char status[32];               /* "ok", "failed", "interrupted" */
} rc_run_result;

rc_status rc_run(const rc_scenario *scn, const rc_run_options *opt,
                 rc_run_result *result, rc_error *err);

/* The scale relative energy errors are taken against, from the first
 * diagnostics row: |H0|, or T0 + |V0| when H0 is (nearly) zero, or 1
 * for a system with no energy at all (summary.json's energy_scale). */
double rc_energy_scale(const rc_diagnostics *first);

/* Devices and backends compiled into this build. */
typedef struct rc_device_info {
    char name[256];
    double memory_gib;
    int cc_major, cc_minor;
} rc_device_info;

/* 1 when the CUDA backend was compiled in. */
int rc_cuda_compiled(void);
/* Query CUDA devices: *count receives how many can be used (0 when none
 * or not compiled); up to `max` entries are filled.  `why` (may be NULL)
 * gets a sentence when there is none.  Returns RC_OK when the devices
 * can be used or there are none (no GPU, no driver, no CUDA backend),
 * and RC_ERR_DEVICE when a GPU or a driver is present but cannot be used
 * (a driver older than the runtime needs, a GPU without its driver):
 * `why` then says why, with the driver's and the runtime's versions. */
rc_status rc_cuda_devices(rc_device_info *out, int max, int *count,
                          char *why, size_t why_size);
/* The CUDA versions the driver supports and this build's runtime is, as
 * 1000 major + 10 minor (0: no driver installed, or no CUDA backend). */
void rc_cuda_versions(int *driver, int *runtime);

#ifdef __cplusplus
}
#endif
#endif

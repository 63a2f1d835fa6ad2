/* ricochet — ensembles: one scenario, many members (DESIGN §5).
 *
 * A scenario with an `ensemble` block describes N members, each the base
 * scenario with some fields set by the rules of `ensemble.vary`.
 * rc_ensemble_run() integrates every member independently and writes,
 * into opt->out_dir:
 *   members.csv      one row per member: its varied values, E0, energy
 *                    and momentum errors, impacts, status (and the L2
 *                    error against a finer reference when asked)
 *   ensemble.json    counts by status, quantiles of each error column,
 *                    wall seconds, member-steps per second
 *   traces/member_K.csv  full diagnostics of the members listed in
 *                    output.trace_members
 * Member k gives the same bits whatever the thread count: members are
 * independent and random values are keyed by (seed, member, rule). */
#ifndef RICOCHET_ENSEMBLE_H
#define RICOCHET_ENSEMBLE_H

#include "ricochet/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the batch engine runs the members.  Zero, what a zeroed
 * rc_ensemble_options holds, is the CPU: callers written before the GPU
 * engine keep their behaviour.  Members the batch engine cannot run
 * (its plan declines the scenario, or --per-member) run per member on
 * the CPU whatever the device; ensemble.json's `engine` says where the
 * members ran and why. */
typedef enum rc_ensemble_device {
    RC_ENSEMBLE_CPU = 0, /* OpenMP batches on the CPU */
    RC_ENSEMBLE_AUTO,    /* CUDA when the build has it and a device is
                            present, else the CPU */
    RC_ENSEMBLE_CUDA     /* one GPU thread per member; without a usable
                            device the run fails with RC_ERR_UNSUPPORTED
                            before writing anything */
} rc_ensemble_device;

typedef struct rc_ensemble_options {
    const char *out_dir;     /* required; created if missing */
    int threads;             /* members run in parallel; 0 = OpenMP's */
    rc_progress_fn progress; /* step = members done, total = members */
    void *progress_ctx;
    long batch;              /* members per batch of the batch engine;
                                0 = 64.  Results do not depend on it. */
    int per_member;          /* 1: run every member as its own system
                                (the per-member engine), even where the
                                batch engine could; for comparisons */
    int scalar_batch;        /* 1: the batch engine steps its members one
                                at a time by the scalar body, even where
                                the lane path (members in SIMD lanes)
                                could; same bits, for comparisons */
    rc_ensemble_device device; /* 0 = RC_ENSEMBLE_CPU; see above */
    /* Continue from a checkpoint (NULL: start afresh): the members it
     * records as finished are kept, the others run.  The scenario must be
     * the one rc_checkpoint_scenario() loads from it.  An ensemble writes
     * OUT/checkpoint.rcp every output.checkpoint_every wall-clock seconds
     * (600s) and when the progress callback stops it. */
    const char *restart;
    /* may be NULL: members.csv's rows as the table "members" (run.h),
     * at the end of the run (those of the finished members when it is
     * interrupted) */
    rc_table_fn on_table;
    void *table_ctx;
    /* Run only members member_first .. member_end-1 (the Python slice
     * A:B, B excluded; both 0: every member).  Each member gets exactly
     * the values, seed stream and step sequence it has in the whole run,
     * so its members.csv row is the same bytes.  The outputs are a
     * range's: members.csv with the range's rows, ensemble.json with
     * "range" and the range's own statistics, no groups.csv, and
     * range.rcp (the records at full precision) for
     * rc_ensemble_merge(). */
    long member_first, member_end;
} rc_ensemble_options;

typedef struct rc_ensemble_result {
    long members;
    long ok, failed, invalid; /* members by status */
    double wall_seconds;
    double member_steps_per_second;
    int batched;              /* 1 when the batch engine ran the members */
    long rerun;               /* members the per-member engine re-ran
                                 (failed, invalid or traced) */
    int cuda;                 /* 1 when the batch engine ran on a GPU */
    int interrupted;          /* 1 when the progress callback stopped it */
    long finished;            /* members that ran to their end (restored
                                 from a checkpoint included); the others
                                 did not run */
    long first, end;          /* the members run (--members A:B), or
                                 0 and the ensemble's size */
} rc_ensemble_result;

/* 1 when the scenario has an `ensemble` block. */
int rc_scenario_is_ensemble(const rc_scenario *scn);
long rc_scenario_ensemble_members(const rc_scenario *scn);

/* Run every member.  A member that fails (non-finite state, solver
 * failure, Zeno) is recorded with its status and step; the others go
 * on.  Returns RC_OK when the ensemble ran (whatever the members did). */
rc_status rc_ensemble_run(const rc_scenario *scn,
                          const rc_ensemble_options *opt,
                          rc_ensemble_result *result, rc_error *err);

/* Combine the outputs of `ricochet run --members` ranges (directories
 * holding range.rcp, and the traces of their traced members) into
 * out_dir: members.csv, groups.csv, ensemble.json and the traces of the
 * whole ensemble, the same bytes as one run of every member except the
 * run metadata of ensemble.json (engine: the first range's; threads,
 * wall_seconds: the ranges' summed; member_steps_per_second; and
 * "ranges", each range's own).  The statistics are computed from the
 * members' full-precision records by the code a single run uses.
 * Refused with RC_ERR_PARSE, before anything is written: a directory
 * without range.rcp, ranges of different scenarios (their scenario
 * hashes differ), ranges that overlap or leave members out, a missing
 * trace, out_dir being one of the ranges. */
rc_status rc_ensemble_merge(const char *const *dirs, int ndirs,
                            const char *out_dir, rc_ensemble_result *result,
                            rc_error *err);

#ifdef __cplusplus
}
#endif
#endif

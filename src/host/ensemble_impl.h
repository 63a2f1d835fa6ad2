/* Private interface between the ensemble driver (ensemble.c) and its
 * structure-of-arrays batch engine (batch.c). */
#ifndef RC_ENSEMBLE_IMPL_H
#define RC_ENSEMBLE_IMPL_H

#include "ricochet/ensemble.h"
#include "scenario_impl.h"
#include "system_impl.h"
#include "../kernels/rc_cuda_ensemble.h"

enum { RC_MEMBER_OK = 0, RC_MEMBER_FAILED, RC_MEMBER_INVALID };

/* What one member leaves behind (members.csv row). */
typedef struct rc_member {
    int status;
    long fail_step;   /* -1 when none */
    long steps;
    double e0, max_rel, final_rel, windowed, slope, dp, dl, l2;
    long impacts;
    /* the CPU lane path's steps of this member: by rc_k_lanes_held (A
     * not empty, nothing approaching) and by the scalar body (counts
     * for ensemble.json's engine.lane_steps; 0 elsewhere) */
    long lane_held, lane_scalar;
    char message[200];
    int trace_errno;  /* its trace could not be written (errno, or EIO):
                         the run fails */
} rc_member;

/* A member's run: diagnostics every `every` steps; relative energy
 * errors and (when N > 0) the configuration at every row. */
typedef struct rc_trace {
    long rows, cap;
    double *rel;  /* [cap] */
    double *q;    /* [cap * N] or NULL */
    int N;
} rc_trace;

/* ---- reference runs (ensemble.reference: each member's L2 error against
 * the same member at a finer step), shared by both engines so that their
 * members.csv are the same bytes.
 *
 * References shared by members that differ only in integrator.dt and
 * integrator.method (a step-size or method study): each distinct
 * initial condition's reference runs once, recorded at every reference
 * step, and each member samples it on its own output grid.  Without
 * slots (nslots = 0: every member its own initial condition, or the
 * recorded trajectories would pass 1 GiB) each member runs its own
 * reference on its own output grid. */
typedef struct rc_shared_refs {
    long nslots;
    long *slot;        /* [members] the member's reference, or -1 */
    rc_trace *traj;    /* [nslots] q at every reference step */
    int *ok;           /* [nslots] the reference run completed */
} rc_shared_refs;

/* The slots of base's members (rc_reference_key: the same key, the same
 * reference), trajectories not yet run; free with rc_shared_refs_free_. */
void rc_shared_refs_plan_(const rc_scenario *base, rc_shared_refs *sr);
void rc_shared_refs_free_(rc_shared_refs *sr);
/* Member scenario m made to run at ensemble.reference's step and method
 * (a model's: ref_model_method). */
void rc_reference_scenario_(const rc_ensemble_spec *e, rc_scenario *m);
/* The reference of a slot, from its member `rep`: *m its scenario
 * (rc_scenario_free), a row every step, for *steps steps (the whole
 * duration at the reference step).  RC_OK or the member's error. */
rc_status rc_shared_ref_scenario_(const rc_scenario *base, long rep,
                                  rc_scenario **m, long *steps,
                                  rc_error *err);
/* Steps of a shared reference: the whole duration at the reference
 * step. */
long rc_shared_ref_steps_(const rc_ensemble_spec *e, double duration);
/* ... and run by the per-member engine: q at every reference step into
 * traj, *ok = 1 when it completed. */
void rc_shared_ref_run_(const rc_scenario *base, long rep, rc_trace *traj,
                        int *ok);
/* Member scenario m (whose run is info) made its own reference, on its
 * output grid: *steps steps, a row every *every. */
void rc_own_reference_(const rc_ensemble_spec *e, rc_scenario *m,
                       const rc_scenario_run *info, long *steps,
                       long *every);
/* Its grid alone (info's dt, steps and every are read): *steps steps at
 * the reference step, a row every *every. */
void rc_own_reference_grid_(const rc_ensemble_spec *e,
                            const rc_scenario_run *info, long *steps,
                            long *every);
/* Where a member (whose run is info) finds its rows in its reference:
 * row r at reference row r * stride (shared: the slot's trajectory at
 * every reference step; else its own reference, stride 1); dt_out the
 * time between its rows. */
void rc_l2_grid_(const rc_ensemble_spec *e, const rc_scenario_run *info,
                 int shared, long *stride, double *dt_out);
/* L2 distance of a member's configuration trajectory against a
 * reference, sqrt(sum_rows |q - q_ref|^2 dt_out): row r of a is row
 * r * stride of the reference. */
double rc_l2_strided_(const rc_trace *a, const rc_trace *ref, long stride,
                      double dt_out);

/* Members per batch when the caller does not choose. */
#define RC_BATCH_DEFAULT 64

/* The batch engine's plan: the model built once (from member 0), its
 * kernel view and the sizes of the per-thread scratch. */
typedef struct rc_batch_plan {
    rc_system *sys;   /* member 0's system: the model every member shares */
    rc_k_gvi view;    /* its GVI view; eps_g/eps_v are set per member */
    int n, dim, N;
    long steps, every, rows;
    double dt;
    long work_doubles, work_ints;
    int lanes;        /* 1: batches run in SIMD lanes (batch_lanes.c) */
    int lanes_one_by_one; /* developer switch RICOCHET_LANES_ONE_BY_ONE=1:
                             the CPU runs each lane's stages alone, in
                             the form a GPU thread does (tests) */
    int params;       /* RC_PARAM_* bits: rules set a member's dt,
                         method, masses or radii (rc_member_params_): each
                         member runs with its own view (h, method, masses,
                         radii) and its own steps and rows */
    long dt_points;   /* with RC_PARAM_DT: the dt values a batch may
                         hold (the grid axis' points; 16 otherwise), so
                         that batches of lanes grouped by dt fill up */
    int vi;           /* 1: members of a built-in Lagrangian model, each
                         described from its own scenario and run by the
                         member body of rc_vi_member.h (batch_vi.c); the
                         fields above are unused */
    int ref;          /* GVI members with ensemble.reference: each records
                         q at its rows for its L2 error (against its
                         slot's trajectory in refs, or its own reference
                         run in the same batch), in the scalar body */
    const rc_shared_refs *refs; /* with a reference: the slots (set by
                         the driver once their trajectories ran) */
} rc_batch_plan;

/* 1 when the ensemble can run in the batch engine (members differ from
 * member 0 only in their initial state and run parameters; method GVI
 * with exact constraints, CVA, MCVA, direct-endpoint or direct-midpoint;
 * a reference run (if any) by a method of the member body; or members of
 * a built-in model), with the plan made; 0 otherwise, with the reason in
 * why. */
int rc_batch_plan_make_(const rc_scenario *scn, rc_batch_plan *plan,
                        char *why, size_t why_size);
void rc_batch_plan_free_(rc_batch_plan *plan);

/* 1 when the plan's model can run in lanes (rc_k_lanes_ok: the Verlet
 * base without equalities, exact inequalities; or rc_k_lanes_eq_ok: the
 * Verlet base with equalities, on the CPU). */
int rc_batch_lanes_ok_(const rc_batch_plan *plan);

/* rc_batch_run_ in SIMD lanes (batch_lanes.c): the members of the batch
 * stepped together by the stage bodies of rc_gvi_lanes.h, a member whose
 * step those do not cover by the scalar body; the same bits as the
 * scalar path.  Needs plan->lanes. */
rc_status rc_batch_run_lanes_(const rc_scenario *scn,
                              const rc_batch_plan *plan, long k0, long count,
                              double *values, rc_member *mb,
                              unsigned char *redo);

/* The model case of rc_batch_plan_make_ (batch_vi.c): 1 when the
 * scenario's model and method (and its reference method) have a member
 * body (a built-in model, a method of seed 001); else 0 and why. */
int rc_batch_vi_plan_(const rc_scenario *scn, char *why, size_t why_size);
/* rc_batch_run_ and rc_batch_run_cuda_ for such a plan: every member
 * described from its own scenario (rc_scenario_member_) and run by
 * rc_k_vi_member_thread, on this CPU thread or one GPU thread each
 * (rc_cuda_vi_run); the same redo rule.  With a reference, sr is the
 * plan's slots (their trajectories run, rc_batch_vi_refs_) or NULL or
 * empty: then each member's own reference runs in the same call. */
rc_status rc_batch_run_vi_(const rc_scenario *scn, const rc_shared_refs *sr,
                           long k0, long count, double *values, rc_member *mb,
                           unsigned char *redo);
rc_status rc_batch_run_cuda_vi_(const rc_scenario *scn,
                                const rc_shared_refs *sr, long k0,
                                long count, double *values, rc_member *mb,
                                unsigned char *redo, int threads,
                                rc_cuda_member_stats *stats, char *why,
                                size_t why_size);
/* The trajectories of sr's slots with a member in the range (rep[s] >= 0:
 * the slot's first member), each a member of the body at the reference
 * step and method recording q at every step, on `threads` CPU threads
 * or (gpu) the device.  A reference the body did not finish, or that
 * did not run (no memory, a failed device), runs in the per-member
 * engine (rc_shared_ref_run_), so every slot is filled as that engine
 * fills it. */
void rc_batch_vi_refs_(const rc_scenario *scn, const long *rep,
                       rc_shared_refs *sr, int threads, int gpu);

/* The trajectories of sr's slots with a member in the range (rep[s] >=
 * 0) for a particle scenario whose reference method has a member body
 * (GVI): each reference a member of the body (rc_k_member_run_rec) at
 * the reference step recording q at every step, in parallel over slots
 * on `threads` CPU threads; a reference the body did not finish runs in
 * the per-member engine (rc_shared_ref_run_), so every slot is filled as
 * that engine fills it.  The members themselves need not run in the
 * batch engine.  1 when done; 0 (sr untouched) when the references
 * cannot run in the body (a model: rc_batch_vi_refs_; another method,
 * rules on other fields than the initial state, masses and radii), with
 * the reason in why. */
int rc_batch_refs_(const rc_scenario *scn, const long *rep,
                   rc_shared_refs *sr, int threads, char *why,
                   size_t why_size);

/* A member's run parameters and its view: with plan->params, mp (its
 * arrays carved by rc_batch_params_carve_ from 3n + 2N doubles pm) from
 * rc_member_params_ and gv's h, method (rc_gvi_view_method_), masses and
 * radii pointed at them (0 when
 * the member's values are invalid: the per-member engine words it);
 * else the plan's steps, rows and dt, gv unchanged. */
void rc_batch_params_carve_(rc_member_params *mp, double *pm, int n, int N);
int rc_batch_member_view_(const rc_scenario *scn, const rc_batch_plan *plan,
                          long k, rc_member_params *mp, rc_k_gvi *gv);

/* A member's row from what the kernel body left; a member that is not
 * ok is marked for the per-member engine to re-run and word. */
void rc_batch_member_from_out_(const rc_k_member_out *out, rc_member *mb,
                               unsigned char *redo);

/* Members k0 .. k0+count-1 in one batch: state in structure-of-arrays
 * columns (coordinate c of member j at c*count + j), each member run by
 * the kernel body rc_k_member_run (the GVI step and the row statistics).  Fills mb[] and
 * values[] (nrules per member).  A member that is invalid at the start
 * or fails sets redo[j] = 1 (its other fields are then not final): the
 * driver re-runs it through the single-system path, which reproduces
 * the same steps (same kernel body) and words the failure. */
rc_status rc_batch_run_(const rc_scenario *scn, const rc_batch_plan *plan,
                        long k0, long count, double *values, rc_member *mb,
                        unsigned char *redo);

/* rc_batch_run_ with its scratch overrun check (tests): the member's
 * work block lies between two blocks of its own size, as on the GPU
 * where member j's block is followed by member j+1's, poisoned (NaN,
 * and a sentinel int) and compared after every member; a member that
 * wrote outside its block fails the batch with RC_ERR_STATE and `why`
 * names it.  compute-sanitizer's memcheck cannot see such a write, an
 * address inside one allocation.  `shrink` > 0 declares the block that
 * many doubles shorter than the member needs, which must trip the check
 * (a test of the test). */
rc_status rc_batch_run_checked_(const rc_scenario *scn,
                                const rc_batch_plan *plan, long k0, long B,
                                double *values, rc_member *mb,
                                unsigned char *redo, long shrink, char *why,
                                size_t why_size);

/* The GPU's context and the member kernel, made ready before the clock
 * starts (rc_cuda_member_prepare).  RC_ERR_UNSUPPORTED without CUDA. */
rc_status rc_batch_cuda_prepare_(char *why, size_t why_size);

/* The same members on the GPU (rc_cuda_member_run: one thread per
 * member, the same kernel body, the same redo rule); `threads` host
 * threads make the initial states.  stats (may be NULL) receives what
 * the launcher did.  RC_ERR_UNSUPPORTED in a build without CUDA;
 * RC_ERR_DEVICE or RC_ERR_NOMEM with the reason in why, when mb[] and
 * redo[] are not valid. */
rc_status rc_batch_run_cuda_(const rc_scenario *scn, const rc_batch_plan *plan,
                             long k0, long count, double *values,
                             rc_member *mb, unsigned char *redo, int threads,
                             rc_cuda_member_stats *stats, char *why,
                             size_t why_size);

/* ---- ranges of members, merge and MPI (ensemble.c; the CLI's MPI
 * driver src/host/cli/mpi.c).  A run is two halves: the members of a
 * range run (rc_ensemble_run_members_), then the outputs are written
 * from their records (rc_ensemble_write_).  rc_ensemble_run does both;
 * merge fills the records from range.rcp files and MPI rank 0 from the
 * other ranks, and both then write through the same rc_ensemble_write_,
 * so that the statistics are those of a single run by construction. */

/* The members' records: arrays of the whole ensemble's size, indexed by
 * member; entries first .. end-1 are the range's. */
typedef struct rc_ens_records {
    long n;              /* members of the ensemble */
    long first, end;     /* the range the records hold */
    int is_range;        /* 1: the outputs are a range's (--members):
                            ensemble.json says which, range.rcp is
                            written, groups.csv is not */
    rc_member *mb;       /* [n] */
    double *values;      /* [n * nrules] */
    unsigned char *fin;  /* [n] 1 once a member's record is final */
    rc_status deferred;  /* a periodic checkpoint failed: written as */
    rc_error deferred_err; /* .partial, the run then fails with it */
} rc_ens_records;

/* Run metadata of a range: the fields of ensemble.json that differ
 * between runs of the same members (engine, threads, wall_seconds,
 * member_steps_per_second). */
typedef struct rc_ens_meta {
    long first, end;     /* the members it ran */
    int threads;
    double wall_seconds;
    double steps;        /* the members' own steps */
    char *engine;        /* ensemble.json's engine object, JSON (malloc'd) */
    char where[256];     /* the range's directory (merge) or rank (MPI) */
} rc_ens_meta;

enum {
    RC_ENS_PREPARED = 1,      /* the output directory was cleared by
                                 another process (MPI rank 0) */
    RC_ENS_NO_CHECKPOINT = 2, /* no checkpoint, no .partial outputs (MPI
                                 ranks: one file, several writers) */
    RC_ENS_EMPTY_OK = 4       /* member_first == member_end is an empty
                                 range (an MPI rank with no member) */
};

rc_status rc_ens_records_alloc_(rc_ens_records *rec, const rc_scenario *scn,
                                rc_error *err);
void rc_ens_records_free_(rc_ens_records *rec);
void rc_ens_meta_free_(rc_ens_meta *m);

/* Create out_dir, remove an earlier run's outputs (and, unless a
 * restart, its checkpoint and traces), create traces/ when needed. */
rc_status rc_ensemble_prepare_out_(const rc_scenario *scn, const char *out_dir,
                                   int restart, rc_error *err);

/* Run the members of opt's range (every member without one): traces of
 * ok traced members are left as OUT/traces/member_K.csv.partial, the
 * records in *rec (allocated here; free with rc_ens_records_free_), the
 * metadata in *meta.  An interrupted run returns RC_ERR_STATE after
 * writing its checkpoint and .partial rows (not with
 * RC_ENS_NO_CHECKPOINT); *res has the counts either way. */
rc_status rc_ensemble_run_members_(const rc_scenario *scn,
                                   const rc_ensemble_options *opt, int flags,
                                   rc_ens_records *rec, rc_ens_meta *meta,
                                   rc_ensemble_result *res, rc_error *err);

/* members.csv, groups.csv, ensemble.json (range.rcp for a range) of the
 * records' members, committed as one with the ok traced members'
 * OUT/traces/member_K.csv.partial.  ranges[0..nranges) are the runs the
 * records came from (more than one: listed under ensemble.json's
 * "ranges"); total is the metadata of the whole (threads, wall seconds
 * and steps).  on_table (may be NULL) gets members.csv's rows as the
 * table "members" (tables.h).  Fills res's counts. */
rc_status rc_ensemble_write_(const rc_scenario *scn, const char *out_dir,
                             int threads, rc_ens_records *rec,
                             const rc_ens_meta *ranges, int nranges,
                             const rc_ens_meta *total,
                             rc_table_fn on_table, void *table_ctx,
                             rc_ensemble_result *res, rc_error *err);

#endif

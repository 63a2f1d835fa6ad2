/* The large-system engine: the one orchestration of the GVI step
 * (dengine.c), a sequence of data-parallel kernels over particles,
 * candidate pairs, contacts and islands, with the state resident in a
 * launcher's memory.  Two launchers run it:
 *
 *   - the CPU launcher (dengine_cpu.c): host memory, each kernel an
 *     OpenMP loop over the bodies of src/kernels/rc_md.h, scans and
 *     reductions in parallel blocks merged in index order (the same bits
 *     on any thread count);
 *   - the CUDA launcher (src/kernels/rc_cuda_md.cu): device memory, each
 *     kernel a grid-stride wrapper around the same body, CUB for scans
 *     and sorts.
 *
 * What runs where.  Hard spheres with walls, periodic axes, uniform
 * gravity and a Lennard-Jones or WCA pair potential (forces gathered per
 * sphere over the candidate list and its transpose); generalized or
 * Moreau reflection; held contacts (R3) and RATTLE's projection.  Islands
 * up to dense_max contacts are solved one thread per island by the shared
 * dense NNLS; reflection islands up to lapack_max by the launcher's
 * batched medium tier (nnls_batch.h: LAPACK on the CPU, cuBLAS +
 * cuSOLVER batched on the GPU); anything larger (reflections beyond
 * lapack_max, held contacts and projections beyond dense_max) by the host
 * tiers (tiers.h), on host memory.  The launchers give the same bits in
 * strict-FP builds (tests/test_gpu_md.c). */
#ifndef RC_MD_DENGINE_H
#define RC_MD_DENGINE_H

#include <stddef.h>

#include "ricochet/scenario.h" /* rc_error */
#include "ricochet/status.h"
#include "../../kernels/rc_md_ops.h"
#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rc_dmd {
    rc_md *md;             /* parameters, counters and the host copy of
                              the state */
    const rc_dmd_ops *ops;
    void *ctx;
    rc_k_md v;             /* the view of the launcher's arrays */
    double *p_save;        /* [n dim] momenta at the start of the step;
                              with `lent`, then [n dim] ints */
    int p_saved;           /* p_save holds this step's start (a failed
                              step restores it) */
    int lent;              /* a launcher on host memory: md's q and image
                              are p_save's block between steps (rc_dmd_init,
                              rc_dmd_sync) */
    long cap_cand, cap_con, cap_isl, cap_work, cap_red, cap_pair;
    long cap_pred;        /* the first scan's predictions (exact) */
    long cap_nb;          /* each sphere's candidates (no pair
                             potential) */
    long cap_close_cnt, cap_close; /* the closing rounds' list */
    double ptime_next;    /* the next step's start since the build */
    long cap_ev;          /* impact logs (exact collisions) */
    long isl_rebuilds;    /* candidate builds within a step, after an
                             island round (rc_dmd_island_reach; a test's
                             count) */
    long ev_next;         /* the step's logs so far: the next round's
                             from here on (rc_dmd_island_scratch) */
    int walls;            /* a walled axis (wall contacts possible) */
    int alias;            /* p, mass, inv_mass, radius and (without a pair
                             potential) grad are md's arrays (a launcher on
                             host memory; rc_dmd_init) */
    int uf_clean;         /* the union-find forest is the identity */
    int logs_open;        /* a failed step may have left impact logs open:
                             the next step closes them first */
    long cap_cell;        /* own_cell_start's */
    /* the builds' cell list and pair offsets, when they do not go in
     * qbuild (rc_dmd_candidates: with a pair potential, or more cells
     * than fit); NULL until then */
    long *own_cell_start, *own_pair_off;
    int *own_cell_of, *own_cell_idx;
    double cand_skin;      /* the skin the candidates were built with */
    double cand_cut;       /* ... and their cutoff */
    int restore_pred;      /* while a restart rebuilds a checkpoint's
                              candidates: 1 (0) when the list it rebuilds
                              kept (dropped) the first scan's predictions,
                              -1 not known (an older checkpoint) */
    double restore_cut;    /* > 0 while a restart rebuilds a checkpoint's
                              candidates (rc_dmd_restore) */
    long near_start[RC_K_MD_NEAR + 1]; /* the candidates' gap buckets'
                              starts (host copy) */
    /* bounds of the step's motion (rc_dmd_extend): largest displacement
     * since the candidate build at the step's start, of the predictor,
     * and of the position update's held shifts */
    double move_build, move_step, held_shift;
    long screened;         /* candidates screened, in all (a closing
                              round from its list: the items of the list) */
    int screen_all;        /* a test's switch: screen every candidate,
                              not only those the bounds leave (the
                              prefix, and the pairs out of reach) */
    int count_reach;       /* a test's switch: count the pairs the first
                              scans pass over untested, out of reach or
                              (exact collisions) predicted for later
                              (reach_skipped) */
    long reach_skipped;
    int pred_alternate;    /* a test's switch: exact collisions' builds
                              keep the predictions every other build and
                              drop them in between, whatever the bound
                              (the path of a build that drops them after
                              a motion pass without reaches) */
    long screen_window;    /* a test's switch: candidates a screen window
                              takes (rc_dmd_extend); 0: as many as red
                              holds, < 0: all in one window (red grows) */
    int have_cand;
    long rebuilds;
    long host_rounds;      /* island rounds that needed the host tiers or
                              the batched tier */
    long host_islands;     /* islands solved by the host tiers */
    /* host scratch: island results of one round, and (launchers without
     * host memory) the host tiers' copies of the arrays they work on */
    int *h_fail, *h_passes;
    long *h_istart;
    long h_cap;
    rc_k_md_contact *h_con;
    int *h_order;
    double *h_p, *h_qp, *h_dxs;
    unsigned char *h_touched;
    int isl_current;       /* the islands and their scratch describe A as
                              it is (no contact added since) */
    /* what crosses to the host (summary.json's device_engine): calls of
       the launcher that queue work (kernels, scans, sorts, reductions,
       copies on the launcher), and host synchronisations (get, fetch,
       the scans' totals, the medium tier's batches), in all and in the
       last step */
    long launches, syncs, step_launches, step_syncs;
    /* the work behind them, in all (the performance model's inputs,
       bench/gpu/dengine_counts.c): items of each kernel, and the items
       or bytes of the launcher's other calls */
    long kernel_items[RC_DMD_NKERNELS], kernel_calls[RC_DMD_NKERNELS];
    long scans, scan_items, reduces, reduce_items, sorts, sort_items;
    long copies, copy_bytes, zeros, zero_bytes, puts, put_bytes, gets,
        get_bytes, fetches;
    long batches;          /* medium-tier batches */
    /* RICOCHET_PROFILE_KERNELS=1 in the environment: every launcher call
       timed (waiting for it to finish, so on the GPU a host
       synchronisation each; slower there), the table written to stderr
       by rc_dmd_free.  Index RC_DMD_NKERNELS + 0..4: scans, sorts,
       reductions, fetches, memory (put, get, copy, zero) */
    int profile;
    double prof_t0; /* the timed call's start */
    double prof_seconds[RC_DMD_NKERNELS + 5];
    long log_retries;      /* exact collisions: rounds run again for an
                              island that outgrew its impact log's first
                              room (rc_k_mdx_log_first) */
} rc_dmd;

/* Start on the state of md (after rc_md_init): candidates and the
 * forces at q (the pair potential's energy and virial into md); md
 * stays owned by the caller and must outlive g.  ops/ctx: a launcher
 * (rc_dmd_cpu_launcher, rc_cuda_md_launcher); g owns ctx from here on
 * (destroyed by rc_dmd_free, also when this fails). */
rc_status rc_dmd_init(rc_dmd *g, rc_md *md, const rc_dmd_ops *ops,
                      void *ctx);
/* rc_dmd_init on the CPU launcher with md->par.threads threads. */
rc_status rc_dmd_init_cpu(rc_dmd *g, rc_md *md);
/* One step; the counters into md->step and md->total, md->steps and
 * md->time advanced.  On failure md->msg says why and the state is that
 * of the last step. */
rc_status rc_dmd_step(rc_dmd *g);
/* Copy the state (q, p, image) into md, for observables and outputs.  On
 * a launcher on host memory md's q and image are the launcher's saved
 * momenta's block (g->lent): valid until the next step, and what
 * rc_dmd_load reads when written. */
rc_status rc_dmd_sync(rc_dmd *g);
/* The reverse: md's state (q, p, image) replaces the launcher's. */
rc_status rc_dmd_load(rc_dmd *g);
/* Observables reduced by the launcher (chunked sums in the association
 * of rc_md_energy and rc_md_msd, so the same bits as the host's):
 * kinetic and potential energy, momentum, and when asked the mean-squared
 * displacement from the reference set by rc_dmd_set_ref (0 before) and
 * the largest overlap of a pair or with a wall (as rc_md_max_overlap). */
rc_status rc_dmd_observe(rc_dmd *g, double *kin, double *pot, double mom[3],
                         double *msd, double *overlap);
/* The unwrapped reference positions [n dim] of the displacement. */
rc_status rc_dmd_set_ref(rc_dmd *g, const double *ref);
/* The reference from md's state, the unwrapped positions (rc_md_unwrapped
 * after rc_dmd_sync, or md's start): on a launcher on host memory written
 * into the launcher's array itself (the process holds one copy). */
rc_status rc_dmd_set_ref_state(rc_dmd *g);
/* The reference on the host for a checkpoint (*ref NULL if none is set):
 * the launcher's array on host memory, else a copy into *buf (malloc'd,
 * the caller frees it); not counted as the run's work (as
 * rc_dmd_checkpoint's copies). */
rc_status rc_dmd_get_ref(rc_dmd *g, const double **ref, double **buf);
void rc_dmd_free(rc_dmd *g);
/* Checkpoints: the launcher's state between steps (state, the candidate
 * list's build positions and cutoff, forces, counters) into w; and back,
 * after rc_dmd_init on the scenario's initial state, so that the next
 * steps are those the checkpointed run would have taken. */
struct rc_ckpt_writer;
struct rc_ckpt;
rc_status rc_dmd_checkpoint(rc_dmd *g, struct rc_ckpt_writer *w);
rc_status rc_dmd_restore(rc_dmd *g, const struct rc_ckpt *c, rc_error *err);
/* Bytes of the launcher's arrays (state, lists, scratch) at their
 * present capacities. */
double rc_dmd_bytes(const rc_dmd *g);
/* Host scratch idle until the launcher's next call, for a caller's own
 * between steps (g(r)'s positions): the reduction array, *count doubles
 * (at least n dim), on a launcher on host memory; NULL elsewhere. */
double *rc_dmd_idle(rc_dmd *g, long *count);

/* The CPU launcher (host memory, OpenMP loops on `threads` threads, 0:
 * OpenMP's default). */
rc_status rc_dmd_cpu_launcher(const rc_dmd_ops **ops, void **ctx);
void rc_dmd_cpu_threads(void *ctx, int threads);
/* Checks for the tests: with `on`, every island kernel runs serially with
 * its scratch filled with NaN, and fails if an island wrote into a
 * neighbour's scratch block (a race on a GPU).  Off by default. */
void rc_dmd_cpu_check(void *ctx, int on);
/* The order in which its loops visit items (a test that no result
 * depends on it, as none may on a GPU): forward (the default, in
 * parallel), reverse, or strided (item i * 7919 mod count), both
 * serial. */
enum { RC_DMD_CPU_FORWARD = 0, RC_DMD_CPU_REVERSE = 1, RC_DMD_CPU_STRIDED = 2 };
void rc_dmd_cpu_order(void *ctx, int order);
/* Fault injection, for the tests of every failure path: counting from
 * this call, launcher call number `at` (0-based; -1: none) fails with
 * "injected fault at launcher call K (OP)", and with `sticky` every later
 * call fails too (as every call does after a GPU fault).  Also clears the
 * recorded error and restarts the count. */
void rc_dmd_cpu_inject(void *ctx, long at, int sticky);
/* Launcher calls since the last rc_dmd_cpu_inject (or creation). */
long rc_dmd_cpu_calls(const void *ctx);
/* Bytes of the arrays the launcher holds for the engine (its allocations
 * not yet released; not its own scratch), for the test of rc_dmd_bytes. */
long rc_dmd_cpu_live_bytes(const void *ctx);

/* The CUDA launcher on device 0 (src/kernels/rc_cuda_md.cu; only in
 * builds with RICOCHET_HAVE_CUDA).  RC_ERR_DEVICE with `why` when no
 * device can be used. */
rc_status rc_cuda_md_launcher(const rc_dmd_ops **ops, void **ctx, char *why,
                              size_t why_size);

#ifdef __cplusplus
}
#endif
#endif

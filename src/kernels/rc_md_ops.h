/* The device engine's kernels and its launcher interface
 * (src/host/md/dengine.h), in a header the CUDA launcher can include
 * without the host engine: the kernel list, the one dispatch from a
 * kernel to its body (src/kernels/rc_md.h), and the table of operations
 * a launcher provides. */
#ifndef RC_MD_OPS_H
#define RC_MD_OPS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "rc_md.h"
#include "rc_md_exact.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels of a step, one row each: the enum name (RC_DMD_<NAME>),
 * the name in messages, 1 for the island kernels (one item per island:
 * long, uneven items with scratch of their own; the launchers schedule
 * them apart), and the body item i runs.  The one list from which the
 * enum, the names and both launchers' dispatch are made, so a kernel
 * cannot be added to one and missed by another. */
#define RC_DMD_KERNELS(X) \
    X(PREDICT, "predict", 0, rc_k_md_predict(v, i)) \
    X(MOVED, "moved", 0, rc_k_md_moved(v, i)) \
    X(MOTION, "motion", 0, rc_k_md_motion(v, i)) \
    X(X_MOTION, "exact_motion", 0, rc_k_mdx_motion(v, i)) \
    X(SNAPSHOT, "snapshot", 0, rc_k_md_snapshot(v, i)) \
    X(CELL_COUNT, "cell_count", 0, rc_k_md_cell_count(v, i)) \
    X(CELL_FILL, "cell_fill", 0, rc_k_md_cell_fill(v, i)) \
    X(CELL_POS, "cell_pos", 0, rc_k_md_cell_pos(v, i)) \
    X(PAIR_COUNT, "pair_count", 0, rc_k_md_pairs(v, i, 0)) \
    X(PAIR_WRITE, "pair_write", 0, rc_k_md_pairs(v, i, 1)) \
    X(CAND_INFO, "cand_info", 0, rc_k_md_cand_info(v, i)) \
    X(NEAR_STARTS, "near_starts", 0, rc_k_md_near_starts(v, i)) \
    X(GATHER_I, "gather_i", 0, rc_k_md_gather(v, i, 0)) \
    X(GATHER_J, "gather_j", 0, rc_k_md_gather(v, i, 1)) \
    X(GATHER_M, "gather_m", 0, rc_k_md_gather(v, i, 2)) \
    X(GATHER_P, "gather_p", 0, rc_k_md_gather(v, i, 3)) \
    X(X_CAND_INFO_PRED, "exact_cand_info_pred", 0, \
      rc_k_mdx_cand_info_pred(v, i)) \
    X(WRAP, "wrap", 0, rc_k_md_wrap(v, i)) \
    X(PREDICT_ISL, "predict_island", 0, rc_k_md_predict_island(v, i)) \
    X(HELD_ISL, "held_island", 0, rc_k_md_held_island(v, i)) \
    X(SCREEN_PAIR, "screen_pair", 0, rc_k_md_screen_pair(v, i)) \
    X(SKIP_COUNT, "skip_count", 0, rc_k_md_skip_count(v, i)) \
    X(PUSH_HIT, "push_hit", 0, rc_k_md_push_hit(v, i)) \
    X(SCREEN_WALL, "screen_wall", 0, rc_k_md_screen_wall(v, i)) \
    X(REMARK, "remark", 0, rc_k_md_remark(v, i)) \
    X(UNMARK, "unmark", 0, v->cand_m[i] &= (unsigned char)~RC_K_MD_IN_A) \
    X(UF_INIT, "uf_init", 0, v->parent[i] = (int)i) \
    X(UF_HOOK, "uf_hook", 0, rc_k_md_uf_hook(v, i)) \
    X(UF_RESET, "uf_reset", 0, rc_k_md_uf_reset(v, i)) \
    X(CON_KEY, "con_key", 0, rc_k_md_con_key(v, i)) \
    X(ISL_HEAD, "isl_head", 0, rc_k_md_isl_head(v, i)) \
    X(ISL_START, "isl_start", 0, rc_k_md_isl_start(v, i)) \
    X(ISL_SIZE, "isl_size", 0, rc_k_md_isl_size(v, i)) \
    X(REFLECT, "reflect_island", 1, rc_k_md_reflect_island(v, i)) \
    X(FINITE, "finite", 0, rc_k_md_finite(v, i)) \
    X(FINITE_CON, "finite_contacts", 0, rc_k_md_finite_con(v, i)) \
    X(VIRIAL, "virial", 0, rc_k_md_virial(v, i)) \
    X(COLLIDED, "collided", 0, rc_k_md_collided(v, i, 1)) \
    X(WALL_COLLIDED, "wall_collided", 0, rc_k_md_collided(v, i, 0)) \
    X(OBSERVE, "observe", 0, rc_k_md_observe(v, i)) \
    X(OVERLAP_PAIR, "overlap_pair", 0, rc_k_md_overlap_pair(v, i)) \
    X(OVERLAP_WALL, "overlap_wall", 0, rc_k_md_overlap_wall(v, i)) \
    X(PAIR_TERM, "pair_term", 0, rc_k_md_pair_term(v, i)) \
    X(TCOUNT, "tcount", 0, rc_k_md_tcount(v, i)) \
    X(TFILL, "tfill", 0, rc_k_md_tfill(v, i)) \
    X(TSORT, "tsort", 0, rc_k_md_tsort(v, i)) \
    X(FORCE, "force", 0, rc_k_md_force(v, i)) \
    X(HOLD, "hold_island", 1, rc_k_md_hold_island(v, i)) \
    X(UNHOLD, "unhold_island", 0, rc_k_md_unhold_island(v, i)) \
    X(PROJECT, "project_island", 1, rc_k_md_project_island(v, i)) \
    X(KICK_FORCES, "kick_forces", 0, rc_k_md_kick_forces(v, i)) \
    X(ISL_SUMMARY, "isl_summary", 0, rc_k_md_isl_summary(v, i)) \
    X(X_PREDICT, "exact_predict", 0, rc_k_mdx_predict(v, i)) \
    X(X_REACH_ONLY, "exact_reach_only", 0, rc_k_mdx_reach_only(v, i)) \
    X(X_SCREEN_PAIR, "exact_screen_pair", 0, rc_k_mdx_screen_pair(v, i)) \
    X(X_SCREEN_WALL, "exact_screen_wall", 0, rc_k_mdx_screen_wall(v, i)) \
    X(X_ISL_SIZE, "exact_isl_size", 0, rc_k_mdx_isl_size(v, i)) \
    X(X_ISLAND, "exact_island", 1, rc_k_mdx_island(v, i)) \
    X(X_REACH, "exact_reach", 0, rc_k_mdx_island_reach(v, i)) \
    X(X_END, "exact_end", 0, rc_k_mdx_island_end(v, i)) \
    X(X_LOG_RESET, "exact_log_reset", 0, rc_k_mdx_log_reset(v, i)) \
    X(X_RESTORE_P, "exact_restore_p", 0, rc_k_mdx_restore_p(v, i)) \
    X(X_UNKEEP, "exact_unkeep", 0, rc_k_mdx_unkeep(v, i)) \
    X(NB_COUNT, "nb_count", 0, rc_k_md_nb_count(v, i)) \
    X(NB_FILL, "nb_fill", 0, rc_k_md_nb_fill(v, i)) \
    X(CLOSE_COUNT, "close_count", 0, rc_k_md_close_count(v, i)) \
    X(CLOSE_FILL, "close_fill", 0, rc_k_md_close_fill(v, i)) \
    X(CLOSE_SCREEN, "close_screen", 0, rc_k_md_close_screen(v, i)) \
    X(CLOSE_PUSH, "close_push", 0, rc_k_md_close_push(v, i))

typedef enum rc_dmd_kernel {
#define RC_DMD_ENUM_(E, name, isl, body) RC_DMD_##E,
    RC_DMD_KERNELS(RC_DMD_ENUM_)
#undef RC_DMD_ENUM_
    RC_DMD_NKERNELS
} rc_dmd_kernel;

/* The kernel's name in messages (the body it runs). */
static inline const char *rc_dmd_kernel_name(rc_dmd_kernel k)
{
    switch (k) {
#define RC_DMD_NAME_(E, name, isl, body)                                     \
    case RC_DMD_##E:                                                         \
        return name;
        RC_DMD_KERNELS(RC_DMD_NAME_)
#undef RC_DMD_NAME_
    case RC_DMD_NKERNELS:
        break;
    }
    return "unknown kernel";
}

/* 1 for the island kernels (the list's third column). */
static inline int rc_dmd_kernel_islands(rc_dmd_kernel k)
{
    switch (k) {
#define RC_DMD_ISL_(E, name, isl, body)                                      \
    case RC_DMD_##E:                                                         \
        return isl;
        RC_DMD_KERNELS(RC_DMD_ISL_)
#undef RC_DMD_ISL_
    case RC_DMD_NKERNELS:
        break;
    }
    return 0;
}

/* One body call: the dispatch both launchers share. */
RC_HD static inline void rc_dmd_body(rc_dmd_kernel k, const rc_k_md *v,
                                     long i)
{
    switch (k) {
#define RC_DMD_BODY_(E, name, isl, body)                                     \
    case RC_DMD_##E:                                                         \
        body;                                                                \
        break;
        RC_DMD_KERNELS(RC_DMD_BODY_)
#undef RC_DMD_BODY_
    case RC_DMD_NKERNELS:
        break;
    }
}

/* Items [lo, hi) of kernel k in index order: the CPU launcher's form,
 * the switch outside the loop so that each loop is its body's alone (and
 * the compiler can vectorise it).  The view is copied with the dimension
 * a constant (rc_dmd_bodies), so that the bodies' loops over coordinates
 * unroll and the loops over items can vectorise. */
static inline void rc_dmd_bodies_dim(rc_dmd_kernel k, const rc_k_md *v0,
                                     long lo, long hi, const int dim)
{
    rc_k_md w = *v0;
    const rc_k_md *v = &w;
    long i;
    w.dim = dim;
    switch (k) {
#define RC_DMD_LOOP_(E, name, isl, body)                                     \
    case RC_DMD_##E:                                                         \
        for (i = lo; i < hi; ++i)                                            \
            body;                                                            \
        break;
        RC_DMD_KERNELS(RC_DMD_LOOP_)
#undef RC_DMD_LOOP_
    case RC_DMD_NKERNELS:
        break;
    }
}

static inline void rc_dmd_bodies(rc_dmd_kernel k, const rc_k_md *v, long lo,
                                 long hi)
{
    if (v->dim == 3)
        rc_dmd_bodies_dim(k, v, lo, hi, 3);
    else
        rc_dmd_bodies_dim(k, v, lo, hi, 2);
}

/* The motion kernels, whose item i leaves values in red[i] (and
 * red[count + i]) that the step reduces by their max at once
 * (rc_dmd_motion): the number of values, 0 for any other kernel. */
static inline int rc_dmd_kernel_vals(rc_dmd_kernel k)
{
    return k == RC_DMD_PREDICT || k == RC_DMD_X_PREDICT  ? 1
           : k == RC_DMD_MOTION || k == RC_DMD_X_MOTION ? 2
                                                          : 0;
}

/* Items [lo, hi) of such a kernel with their values' maxes in m[0..1]
 * instead of red (the CPU launcher's fused pass, run_max): the bodies'
 * values are never NaN (rc_k_md_max_guard), so a max in any grouping is
 * the bits of the reduction's.  As rc_dmd_bodies_dim: the dimension a
 * constant. */
static inline void rc_dmd_max_bodies_dim(rc_dmd_kernel k, const rc_k_md *v0,
                                         long lo, long hi, const int dim,
                                         double m[2])
{
    rc_k_md w = *v0;
    const rc_k_md *v = &w;
    double o[2] = {0.0, 0.0}, a = 0.0, b = 0.0;
    long i;
    w.dim = dim;
#define RC_DMD_MAX_LOOP_(body)                                               \
    for (i = lo; i < hi; ++i) {                                              \
        body;                                                                \
        a = rc_fmax(a, o[0]);                                                \
        b = rc_fmax(b, o[1]);                                                \
    }
    switch (k) {
    case RC_DMD_PREDICT:
        RC_DMD_MAX_LOOP_(rc_k_md_predict_vals(v, i, o))
        break;
    case RC_DMD_X_PREDICT:
        RC_DMD_MAX_LOOP_(rc_k_mdx_predict_vals(v, i, o))
        break;
    case RC_DMD_MOTION:
        RC_DMD_MAX_LOOP_(rc_k_md_motion_vals(v, i, o))
        break;
    case RC_DMD_X_MOTION:
        RC_DMD_MAX_LOOP_(rc_k_mdx_motion_vals(v, i, o))
        break;
    default:
        break;
    }
#undef RC_DMD_MAX_LOOP_
    m[0] = a;
    m[1] = b;
}

static inline void rc_dmd_max_bodies(rc_dmd_kernel k, const rc_k_md *v,
                                     long lo, long hi, double m[2])
{
    if (v->dim == 3)
        rc_dmd_max_bodies_dim(k, v, lo, hi, 3, m);
    else
        rc_dmd_max_bodies_dim(k, v, lo, hi, 2, m);
}

/* A launcher's error message: the first failure is kept (later ones are
 * usually its consequences); why[0] == 0 means none yet. */
static inline void rc_dmd_keep_first(char *why, size_t size, const char *fmt,
                                     va_list ap)
{
    if (why[0] == '\0')
        vsnprintf(why, size, fmt, ap);
}

/* Result slots of the reductions: the scalars the host reads together
 * with one fetch (one round trip) per decision of the step. */
#define RC_DMD_SLOTS 16
#if RC_DMD_SLOTS > RC_K_OBS_MAX /* a row's terms in one chunk pass */
#error "rc_k_md_obs_chunk holds fewer sums than RC_DMD_SLOTS"
#endif

/* A launcher: memory, the kernels, and the few whole-array algorithms
 * (scan, stable sort by key, deterministic sum and max).  Each returns 0,
 * or -1 with the reason in error(ctx).  Memory returned by alloc is the
 * launcher's (device memory for CUDA); only put/get/fetch and the scan's
 * total cross to the host, and those are the step's host
 * synchronisations (get, fetch, scan, nnls_batch); every other call is
 * queued in order behind the ones before it.  The first failure is the
 * one error(ctx) reports: later failures are usually its consequences. */
typedef struct rc_dmd_ops {
    const char *name; /* "cpu" or "cuda" */
    int host_memory;  /* alloc returns host memory that the host may read
                         and write between calls (the CPU launcher): the
                         host tiers then work in place, without copies */
    void *(*alloc)(void *ctx, size_t bytes);
    void (*release)(void *ctx, void *ptr);
    int (*put)(void *ctx, void *dst, const void *src, size_t bytes);
    int (*get)(void *ctx, void *dst, const void *src, size_t bytes);
    int (*copy)(void *ctx, void *dst, const void *src, size_t bytes);
    int (*zero)(void *ctx, void *dst, size_t bytes);
    int (*run)(void *ctx, rc_dmd_kernel k, const rc_k_md *v, long count);
    /* x[0..n] (n + 1 entries, x[n] ignored on input): exclusive prefix
     * sum in place; *total = x[n] = the sum of the n inputs */
    int (*scan)(void *ctx, long *x, long n, long *total);
    /* the positions t < n with flag[t] != 0, in increasing order, into
     * hit[0 .. *total) (room for n); *total crosses to the host, as the
     * scan's */
    int (*select)(void *ctx, const unsigned char *flag, long n, int *hit,
                  long *total);
    /* stable sort of (key, val) by key; keys in [0, 2^key_bits) */
    int (*sort_by_key)(void *ctx, int *key, int *val, long n, int key_bits);
    /* the sum (is_max 0) or max (1) of x[0..n) in rc_k_reduce's
     * association into result slot `slot` (< RC_DMD_SLOTS), left on the
     * launcher; 0 for n = 0 */
    int (*reduce)(void *ctx, const double *x, long n, int is_max, int slot);
    /* a motion kernel k (rc_dmd_kernel_vals(k) = nval values an item)
     * over count items, then the max of each value into slots slot0 ..
     * slot0 + nval - 1: the slots and every other output of run then
     * reduce, except that red may not be written (the CPU launcher's
     * one pass keeps the maxes as it goes; the CUDA launcher runs and
     * reduces) */
    int (*run_max)(void *ctx, rc_dmd_kernel k, const rc_k_md *v, long count,
                   int slot0);
    /* the sums over the n spheres of terms whats[0 .. nw) (RC_K_MD_OBS_*,
     * rc_k_md_obs_term) into slots slot0 .. slot0 + nw - 1, each the bits
     * of the observe kernel (obs = whats[w]) then reduce (sum): the CPU
     * launcher in one pass (rc_k_md_obs_chunk), the CUDA launcher a
     * kernel and a reduction a term; red may be written */
    int (*obs_sums)(void *ctx, const rc_k_md *v, const int *whats, int nw,
                    int slot0);
    /* slots 0 .. count-1 into out[]: one host synchronisation */
    int (*fetch)(void *ctx, double *out, int count);
    /* the medium-island tier: nprob reflection NNLS problems in host
     * arrays, laid out as rc_nnls_batch_cpu takes them
     * (src/host/md/nnls_batch.h); solved by LAPACK (cpu) or by cuBLAS and
     * cuSOLVER batched routines (cuda) */
    int (*nnls_batch)(void *ctx, int nprob, int mp, int kp, const int *m,
                      const double *B, const double *b, double *lam,
                      int *status);
    const char *(*error)(void *ctx);
    void (*destroy)(void *ctx);
} rc_dmd_ops;

#ifdef __cplusplus
}
#endif
#endif

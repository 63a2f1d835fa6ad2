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

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels of a step; each runs its body over `count` items. */
typedef enum rc_dmd_kernel {
    RC_DMD_PREDICT,
    RC_DMD_MOVED,
    RC_DMD_SNAPSHOT,
    RC_DMD_CELL_COUNT,
    RC_DMD_CELL_FILL,
    RC_DMD_PAIR_COUNT,
    RC_DMD_PAIR_WRITE,
    RC_DMD_SCREEN_PAIR,
    RC_DMD_PUSH_PAIR,
    RC_DMD_SCREEN_WALL,
    RC_DMD_PUSH_WALL,
    RC_DMD_REMARK,
    RC_DMD_UF_INIT,
    RC_DMD_UF_HOOK,
    RC_DMD_CON_KEY,
    RC_DMD_ISL_HEAD,
    RC_DMD_ISL_START,
    RC_DMD_ISL_SIZE,
    RC_DMD_REFLECT,
    RC_DMD_FINITE,
    RC_DMD_FINISH,
    RC_DMD_VIRIAL,
    RC_DMD_COLLIDED,
    RC_DMD_WALL_COLLIDED,
    RC_DMD_OBSERVE,
    RC_DMD_OVERLAP_PAIR,
    RC_DMD_OVERLAP_WALL,
    RC_DMD_PAIR_TERM,
    RC_DMD_TCOUNT,
    RC_DMD_TFILL,
    RC_DMD_TSORT,
    RC_DMD_FORCE,
    RC_DMD_HOLD,
    RC_DMD_UNHOLD,
    RC_DMD_PROJECT,
    RC_DMD_KICK_FORCES,
    RC_DMD_ADVANCE,
    RC_DMD_ISL_SUMMARY,
    RC_DMD_NKERNELS
} rc_dmd_kernel;

/* The kernel's name in messages (the body it runs). */
static inline const char *rc_dmd_kernel_name(rc_dmd_kernel k)
{
    switch (k) {
    case RC_DMD_PREDICT: return "predict";
    case RC_DMD_MOVED: return "moved";
    case RC_DMD_SNAPSHOT: return "snapshot";
    case RC_DMD_CELL_COUNT: return "cell_count";
    case RC_DMD_CELL_FILL: return "cell_fill";
    case RC_DMD_PAIR_COUNT: return "pair_count";
    case RC_DMD_PAIR_WRITE: return "pair_write";
    case RC_DMD_SCREEN_PAIR: return "screen_pair";
    case RC_DMD_PUSH_PAIR: return "push_pair";
    case RC_DMD_SCREEN_WALL: return "screen_wall";
    case RC_DMD_PUSH_WALL: return "push_wall";
    case RC_DMD_REMARK: return "remark";
    case RC_DMD_UF_INIT: return "uf_init";
    case RC_DMD_UF_HOOK: return "uf_hook";
    case RC_DMD_CON_KEY: return "con_key";
    case RC_DMD_ISL_HEAD: return "isl_head";
    case RC_DMD_ISL_START: return "isl_start";
    case RC_DMD_ISL_SIZE: return "isl_size";
    case RC_DMD_REFLECT: return "reflect_island";
    case RC_DMD_FINITE: return "finite";
    case RC_DMD_FINISH: return "finish";
    case RC_DMD_VIRIAL: return "virial";
    case RC_DMD_COLLIDED: return "collided";
    case RC_DMD_WALL_COLLIDED: return "wall_collided";
    case RC_DMD_OBSERVE: return "observe";
    case RC_DMD_OVERLAP_PAIR: return "overlap_pair";
    case RC_DMD_OVERLAP_WALL: return "overlap_wall";
    case RC_DMD_PAIR_TERM: return "pair_term";
    case RC_DMD_TCOUNT: return "tcount";
    case RC_DMD_TFILL: return "tfill";
    case RC_DMD_TSORT: return "tsort";
    case RC_DMD_FORCE: return "force";
    case RC_DMD_HOLD: return "hold_island";
    case RC_DMD_UNHOLD: return "unhold_island";
    case RC_DMD_PROJECT: return "project_island";
    case RC_DMD_KICK_FORCES: return "kick_forces";
    case RC_DMD_ADVANCE: return "advance";
    case RC_DMD_ISL_SUMMARY: return "isl_summary";
    case RC_DMD_NKERNELS: break;
    }
    return "unknown kernel";
}

/* One body call: the dispatch both launchers share (a switch, so a
 * kernel added to the enum and not here is a compile-time warning). */
RC_HD static inline void rc_dmd_body(rc_dmd_kernel k, const rc_k_md *v,
                                     long i)
{
    switch (k) {
    case RC_DMD_PREDICT: rc_k_md_predict(v, i); break;
    case RC_DMD_MOVED: rc_k_md_moved(v, i); break;
    case RC_DMD_SNAPSHOT: rc_k_md_snapshot(v, i); break;
    case RC_DMD_CELL_COUNT: rc_k_md_cell_count(v, i); break;
    case RC_DMD_CELL_FILL: rc_k_md_cell_fill(v, i); break;
    case RC_DMD_PAIR_COUNT: rc_k_md_pairs(v, i, 0); break;
    case RC_DMD_PAIR_WRITE: rc_k_md_pairs(v, i, 1); break;
    case RC_DMD_SCREEN_PAIR: rc_k_md_screen_pair(v, i); break;
    case RC_DMD_PUSH_PAIR: rc_k_md_push_pair(v, i); break;
    case RC_DMD_SCREEN_WALL: rc_k_md_screen_wall(v, i); break;
    case RC_DMD_PUSH_WALL: rc_k_md_push_wall(v, i); break;
    case RC_DMD_REMARK: rc_k_md_remark(v, i); break;
    case RC_DMD_UF_INIT: v->parent[i] = (int)i; break;
    case RC_DMD_UF_HOOK: rc_k_md_uf_hook(v, i); break;
    case RC_DMD_CON_KEY: rc_k_md_con_key(v, i); break;
    case RC_DMD_ISL_HEAD: rc_k_md_isl_head(v, i); break;
    case RC_DMD_ISL_START: rc_k_md_isl_start(v, i); break;
    case RC_DMD_ISL_SIZE: rc_k_md_isl_size(v, i); break;
    case RC_DMD_REFLECT: rc_k_md_reflect_island(v, i); break;
    case RC_DMD_FINITE: rc_k_md_finite(v, i); break;
    case RC_DMD_FINISH: rc_k_md_finish(v, i); break;
    case RC_DMD_VIRIAL: rc_k_md_virial(v, i); break;
    case RC_DMD_COLLIDED: rc_k_md_collided(v, i, 1); break;
    case RC_DMD_WALL_COLLIDED: rc_k_md_collided(v, i, 0); break;
    case RC_DMD_OBSERVE: rc_k_md_observe(v, i); break;
    case RC_DMD_OVERLAP_PAIR: rc_k_md_overlap_pair(v, i); break;
    case RC_DMD_OVERLAP_WALL: rc_k_md_overlap_wall(v, i); break;
    case RC_DMD_PAIR_TERM: rc_k_md_pair_term(v, i); break;
    case RC_DMD_TCOUNT: rc_k_md_tcount(v, i); break;
    case RC_DMD_TFILL: rc_k_md_tfill(v, i); break;
    case RC_DMD_TSORT: rc_k_md_tsort(v, i); break;
    case RC_DMD_FORCE: rc_k_md_force(v, i); break;
    case RC_DMD_HOLD: rc_k_md_hold_island(v, i); break;
    case RC_DMD_UNHOLD: rc_k_md_unhold_island(v, i); break;
    case RC_DMD_PROJECT: rc_k_md_project_island(v, i); break;
    case RC_DMD_KICK_FORCES: rc_k_md_kick_forces(v, i); break;
    case RC_DMD_ADVANCE: rc_k_md_advance(v, i); break;
    case RC_DMD_ISL_SUMMARY: rc_k_md_isl_summary(v, i); break;
    case RC_DMD_NKERNELS: break;
    }
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
    /* stable sort of (key, val) by key; keys in [0, 2^key_bits) */
    int (*sort_by_key)(void *ctx, int *key, int *val, long n, int key_bits);
    /* the sum (is_max 0) or max (1) of x[0..n) in rc_k_reduce's
     * association into result slot `slot` (< RC_DMD_SLOTS), left on the
     * launcher; 0 for n = 0 */
    int (*reduce)(void *ctx, const double *x, long n, int is_max, int slot);
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

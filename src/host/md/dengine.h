/* The device-shaped large-system engine: the step of the host engine
 * (engine.c, rc_md_step) cut into data-parallel kernels over particles,
 * candidate pairs, contacts and islands, with the state resident in the
 * launcher's memory.  Two launchers run it:
 *
 *   - the CPU launcher (dengine_cpu.c): host memory, each kernel a loop
 *     over the bodies of src/kernels/rc_md.h.  It exists to verify the
 *     orchestration and the bodies against the host engine without a GPU
 *     (tests/test_md_dengine.c);
 *   - the CUDA launcher (src/kernels/rc_cuda_md.cu): device memory, each
 *     kernel a grid-stride wrapper around the same body, CUB for scans
 *     and sorts.
 *
 * What runs where.  Hard spheres with walls, periodic axes and uniform
 * gravity; generalized or Moreau reflection.  Islands up to dense_max
 * contacts are solved one thread per island by the shared dense NNLS.  A
 * step that needs anything else (an island beyond dense_max, contacts
 * held by the position update, a pair potential) is handed whole to the
 * host engine, from the state at its start, and counted in `fallbacks`;
 * its results are the host engine's.  Outputs equal the host engine's
 * bit for bit in strict-FP builds (the tests check this for the CPU
 * launcher). */
#ifndef RC_MD_DENGINE_H
#define RC_MD_DENGINE_H

#include <stddef.h>

#include "ricochet/status.h"
#include "../../kernels/rc_md.h"
#include "engine.h"

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
    RC_DMD_VIOLATED,
    RC_DMD_FINITE,
    RC_DMD_FINISH,
    RC_DMD_VIRIAL,
    RC_DMD_COLLIDED,
    RC_DMD_WALL_COLLIDED,
    RC_DMD_NKERNELS
} rc_dmd_kernel;

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
    case RC_DMD_VIOLATED: rc_k_md_violated(v, i); break;
    case RC_DMD_FINITE: rc_k_md_finite(v, i); break;
    case RC_DMD_FINISH: rc_k_md_finish(v, i); break;
    case RC_DMD_VIRIAL: rc_k_md_virial(v, i); break;
    case RC_DMD_COLLIDED: rc_k_md_collided(v, i, 1); break;
    case RC_DMD_WALL_COLLIDED: rc_k_md_collided(v, i, 0); break;
    case RC_DMD_NKERNELS: break;
    }
}

/* A launcher: memory, the kernels, and the few whole-array algorithms
 * (scan, stable sort by key, deterministic sum and max).  Each returns 0,
 * or -1 with the reason in error(ctx).  Memory returned by alloc is the
 * launcher's (device memory for CUDA); only put/get cross to the host. */
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
    /* sum (rc_k_sum_chunk's association) and max of x[0..n) */
    int (*sum)(void *ctx, const double *x, long n, double *out);
    int (*max)(void *ctx, const double *x, long n, double *out);
    const char *(*error)(void *ctx);
    void (*destroy)(void *ctx);
} rc_dmd_ops;

typedef struct rc_dmd {
    rc_md *md;             /* the host engine: parameters, the host copy
                              of the state, and the fallback */
    const rc_dmd_ops *ops;
    void *ctx;
    rc_k_md v;             /* the view of the launcher's arrays */
    double *p_save;        /* [n dim] momenta at the start of the step */
    long cap_cand, cap_flag, cap_con, cap_isl, cap_work, cap_red;
    long cap_cell;
    double cand_skin;      /* the skin the candidates were built with */
    int have_cand;
    long rebuilds;
    long fallbacks;        /* steps handed to the host engine */
    long fallback_big, fallback_held; /* ... because of an island beyond
                                         the per-thread tier, held
                                         contacts */
    /* host scratch: island results of one reflection round */
    int *h_fail, *h_passes;
    long *h_istart;
    long h_cap;
} rc_dmd;

/* Start on the state of md (after rc_md_init and rc_md_prepare); md
 * stays owned by the caller and must outlive g.  ops/ctx: a launcher
 * (rc_dmd_cpu_launcher, rc_cuda_md_launcher); g owns ctx from here on
 * (destroyed by rc_dmd_free, also when this fails).  Refuses pair
 * potentials (RC_ERR_UNSUPPORTED). */
rc_status rc_dmd_init(rc_dmd *g, rc_md *md, const rc_dmd_ops *ops,
                      void *ctx);
/* One step; md->step, md->total, md->steps and md->time as rc_md_step
 * keeps them.  On failure md->msg says why and the state is that of the
 * last step. */
rc_status rc_dmd_step(rc_dmd *g);
/* Copy the state (q, p, image) into md, for observables and outputs. */
rc_status rc_dmd_sync(rc_dmd *g);
void rc_dmd_free(rc_dmd *g);

/* The CPU launcher (host memory, serial loops). */
rc_status rc_dmd_cpu_launcher(const rc_dmd_ops **ops, void **ctx);

#ifdef __cplusplus
}
#endif
#endif

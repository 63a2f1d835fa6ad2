/* Launch configuration of the GPU ensemble engine as pure functions.
 *
 * Plain C, compiled in every build (no CUDA types), so that the sizes a
 * CUDA launcher uses are unit-tested on any machine
 * (tests/test_launch_config.c).  The launcher in
 * src/kernels/rc_cuda_ensemble.cu asks these functions for its grid,
 * its chunks and its per-member device workspace; nothing here touches
 * a device. */
#ifndef RC_LAUNCH_H
#define RC_LAUNCH_H

#include "ricochet/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks of a grid-stride launch over `items` items with `block`
 * threads a block and at most `max_grid` blocks:
 *     grid = min(ceil(items / block), max_grid)
 * (at least 1 for items > 0; 0 for items = 0, when the caller launches
 * nothing).  A grid-stride loop (item = block_index * block + thread;
 * item += grid * block) then visits every item exactly once, whatever
 * the cap.  RC_ERR_INVALID for items < 0, block < 1 or max_grid < 1. */
rc_status rc_launch_grid(long items, int block, int max_grid, int *grid);

/* A member range cut into launches whose device workspace fits a
 * budget: `count` chunks, each of `size` members but the last, which
 * holds the remainder (members - (count - 1) * size, in 1..size). */
typedef struct rc_launch_chunking {
    long members; /* members in all */
    long size;    /* members of every chunk but the last */
    long count;   /* chunks (0 when members = 0) */
} rc_launch_chunking;

/* Chunk `members` members of `bytes_per_member` device bytes each so
 * that one chunk needs at most `budget_bytes`, with at most
 * `max_members_per_chunk` members a chunk (0: no cap).  The size is the
 * largest that fits: min(budget / bytes_per_member, cap, members).
 * RC_ERR_NOMEM when the budget cannot hold one member (nothing can be
 * launched); RC_ERR_INVALID for negative members, bytes_per_member < 1,
 * a negative budget or cap.  0 members: count = 0, size = 0, RC_OK. */
rc_status rc_launch_chunks(long members, long bytes_per_member,
                           long budget_bytes, long max_members_per_chunk,
                           rc_launch_chunking *out);

/* The most members a launch should take so that it is whole waves:
 * `resident` is the threads the device keeps resident for the kernel
 * (multiprocessors x blocks per multiprocessor at the kernel's real
 * occupancy x threads a block), `cap` the most the memory budget or the
 * caller allows.  The result is the largest multiple of `resident` not
 * above cap (each grid-stride pass of a launch a full wave), or cap when
 * not even one wave fits; chunks of this size leave only the last chunk
 * of a call with a partial wave.  RC_ERR_INVALID for resident < 1 or
 * cap < 1. */
rc_status rc_launch_wave_cap(long resident, long cap, long *out);

/* Chunk k of c: its first member and member count.  RC_ERR_INVALID for
 * k outside 0 .. c->count - 1. */
rc_status rc_launch_chunk_range(const rc_launch_chunking *c, long k,
                                long *first, long *count);

/* Device workspace of one ensemble member of a system with N = n*dim
 * coordinates, nc constraint terms and neq equalities, as the kernel
 * rc_g_member_run (src/kernels/rc_cuda_ensemble.cu) lays it out:
 *   doubles  its scratch block: rc_k_gvi_work_doubles(N, nc, neq) for
 *            the GVI work (rc_k_gvi_work_carve), then the gathered state
 *            q, p (2N): the block the CPU batch engine gives a member;
 *   ints     rc_k_gvi_work_ints(N, nc, neq);
 *   bytes    everything a member costs on the device: the scratch
 *            (8 doubles + 4 ints bytes), its columns of the
 *            structure-of-arrays state Q, P (2N doubles) and its
 *            rc_k_member_out;
 *   state_bytes  the same without the scratch.
 * RC_ERR_INVALID for N < 1, nc < 0, neq < 0 or neq > nc. */
typedef struct rc_launch_workspace {
    long doubles, ints, bytes;
    long state_bytes; /* what a member costs when its scratch is in the
                         kernel's local memory (rc_cuda_ensemble.cu):
                         its columns of Q, P and its rc_k_member_out */
} rc_launch_workspace;

rc_status rc_launch_member_workspace(int N, int nc, int neq,
                                     rc_launch_workspace *ws);

#ifdef __cplusplus
}
#endif
#endif

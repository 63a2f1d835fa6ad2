/* The host tiers of the island solves: islands too large for the step's
 * per-thread tier (dense_max contacts) and, for reflections, for the
 * launcher's batched tier (lapack_max), solved on the host by LAPACK
 * (medium) or projected Gauss–Seidel on the sparse Gram matrix (large).
 * The one step orchestration (dengine.c) calls them for the islands its
 * kernels mark RC_K_MD_BIG; they run the rules the per-thread bodies run
 * (rc_k_md_pass_select/_apply, rc_k_md_hold_*, rc_k_md_project_select),
 * with a solver for the size.  Private to the library. */
#ifndef RC_MD_TIERS_H
#define RC_MD_TIERS_H

#include "engine.h"

/* Stage `stage` (0 reflect, 1 position update with held contacts, 2
 * RATTLE's projection) of the islands isl[0 .. count) of the view v,
 * whose arrays (con, order, istart, p, touched; qp and dxs for stages 1
 * and 2) are in host memory.  Islands share no sphere: they run in
 * parallel on md->par.threads, and the result does not depend on the
 * order.  Counters into md->step; on failure the first failing island's
 * message (rc_md_island_failed) in md->msg. */
rc_status rc_md_tiers_run(rc_md *md, const rc_k_md *v, int stage,
                          const long *isl, long count);

#endif

/* GPU launcher of the members of a built-in Lagrangian model (seed 001):
 * one thread per member runs rc_k_vi_member_thread
 * (src/kernels/rc_vi_member.h), the function the CPU batch engine
 * (src/host/batch_vi.c) runs for each member.  Defined only when the
 * CUDA backend is compiled in (RICOCHET_HAVE_CUDA). */
#ifndef RC_CUDA_VI_H
#define RC_CUDA_VI_H

#include <stddef.h>

#include "ricochet/status.h"
#include "rc_cuda_ensemble.h"
#include "rc_vi_member.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Members d[0 .. count) on the current device, results into out[] (both
 * host arrays; d's final states are not copied back).  rec: the host
 * record array of the members with d[j].rec >= 0 (q at their rows; NULL
 * when none records), laid out one after another in member order; each
 * launch copies its part back.  Each member's
 * rc_k_vi workspace is a global block of the launch (zeroed first),
 * chunks cut to half the free device memory.  RC_ERR_DEVICE with the
 * failing call in `why`, RC_ERR_NOMEM when not one member fits; stats
 * (may be NULL) says what the launcher did. */
rc_status rc_cuda_vi_run(const rc_k_vi_member *d, rc_k_member_out *out,
                         double *rec, long count, rc_cuda_member_stats *stats,
                         char *why, size_t why_size);

#ifdef __cplusplus
}
#endif
#endif

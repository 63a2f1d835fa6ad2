/* GPU ensemble engine: the host launcher of rc_cuda_ensemble.cu.
 * Defined only when the CUDA backend is compiled in
 * (RICOCHET_HAVE_CUDA); callers guard their calls with it. */
#ifndef RC_CUDA_ENSEMBLE_H
#define RC_CUDA_ENSEMBLE_H

#include <stddef.h>

#include "ricochet/status.h"
#include "rc_member.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most members per launch unless the job says otherwise; the launcher
 * rounds it down to whole waves of the threads the device keeps
 * resident for the kernel (rc_launch_wave_cap), so a launch fills the
 * device and the next chunk's copies overlap its compute. */
#define RC_CUDA_MEMBER_CHUNK 65536L

/* Most lanes per chunk of the lane path (rc_cuda_lanes_run) unless the
 * job says otherwise, within half the free device memory.  A lane costs
 * about half a kilobyte, and every chunk costs its own two launches a
 * step whatever its size: at 65536 lanes a step's kernels are too short
 * to hide them, so a job of up to 2^20 members runs as one chunk (the
 * ensemble's jobs are at most 262144, src/host/ensemble.c). */
#define RC_CUDA_LANES_CHUNK 1048576L

/* One call of rc_cuda_member_run: members 0 .. members-1, each run by
 * rc_k_member_run (src/kernels/rc_member.h) as the CPU batch engine
 * (src/host/batch.c) runs it.  Host arrays are structure-of-arrays
 * across the call's members: coordinate c of member j at
 * c * members + j. */
typedef struct rc_cuda_member_job {
    rc_k_gvi view;          /* the model with HOST pointers (m.mass,
                               m.inv_mass, m.radius, m.pot, con, mass_c,
                               inv_mass_c, ineq, eq, q0 or NULL); the
                               launcher copies them to the device */
    double eps_g, eps_v;    /* given tolerances; 0: from each member */
    long steps, every, rows;
    double dt;
    long members;
    const double *Q0, *P0;  /* [N * members] initial states (borrowed) */
    double *Q, *P;          /* [N * members] final states, or NULL for
                               none; may alias Q0, P0 */
    rc_k_member_out *out;   /* [members] (borrowed) */
    double *qrec;           /* [members * rows * N] or NULL: member j's q
                               at each of its rows, row-major from
                               j * rows * N (rc_k_member_run_rec's record,
                               for an L2 error against a reference) */
    long budget_bytes;      /* device bytes the chunks may use; 0: half
                               of the free device memory */
    long max_chunk;         /* most members per launch; 0:
                               RC_CUDA_MEMBER_CHUNK */
} rc_cuda_member_job;

/* What the launcher did (for ensemble.json and benchmarks). */
typedef struct rc_cuda_member_stats {
    char device[256];       /* the device's name */
    long chunks, chunk_size;
    int slots;              /* chunk buffers in flight (1 or 2) */
    int block, grid;        /* threads a block; blocks of a full chunk */
    long bytes_per_member;  /* device memory of one member in the chunk
                               buffers */
    /* occupancy, as the device reports it for the kernel */
    int registers;          /* per thread */
    long local_bytes;       /* per thread (the local scratch, spills) */
    int blocks_per_sm;      /* resident blocks a multiprocessor */
    long resident;          /* threads the device keeps resident */
    long waves;             /* grid-stride passes of a full chunk */
    int local_scratch;      /* 1: scratch in local memory (coalesced),
                               0: in global blocks (member too large) */
    int lanes;              /* 1: the lane kernels ran (rc_cuda_lanes_run);
                               registers are then the fast kernel's */
    int slow_registers;     /* the lane path's scalar-body kernel's */
    /* where the lane path's wall time went (host clock; 0 for the member
     * kernel): device allocation and the model's copy; the chunks' states
     * laid out and copied in, results copied out and read; the steps
     * (launch of the first kernel to the end of the last) */
    double seconds_setup, seconds_copies, seconds_steps;
} rc_cuda_member_stats;

/* Create the current device's context and load rc_g_member_run, which
 * the CUDA runtime does lazily on first use (a fraction of a second, or
 * more for this large kernel), so that a timed run does not include
 * them.  RC_ERR_DEVICE with the failing call in `why`. */
rc_status rc_cuda_member_prepare(char *why, size_t why_size);

/* The lane path on the GPU: the members of a model that runs in lanes
 * (rc_k_lanes_ok), with their tolerances and start checks made on the
 * host (rc_k_member_start), stepped by the orchestration of the CPU's
 * lane path (rc_lanes_drive) over the lane kernels of
 * rc_cuda_ensemble.cu: one thread a lane, the common case of a step in
 * one kernel, the lanes that need the scalar body compacted onto a list
 * for a second.  out[] as rc_cuda_member_run's.  RC_ERR_UNSUPPORTED
 * (with why) when a member's scratch does not fit the kernels' local
 * buffers: the caller then uses rc_cuda_member_run. */
typedef struct rc_cuda_lanes_job {
    rc_k_gvi view;          /* HOST pointers, as rc_cuda_member_job's */
    long steps, every, rows;
    double dt;
    long members;
    const double *Q0, *P0;  /* [N * members] initial states (borrowed) */
    const double *eps_g, *eps_v; /* [members] each member's tolerances */
    const unsigned char *live0;  /* [members] 1: passed its start check */
    rc_k_member_out *out;   /* [members] (borrowed) */
    long max_chunk;         /* most members per chunk; 0:
                               RC_CUDA_LANES_CHUNK */
} rc_cuda_lanes_job;

rc_status rc_cuda_lanes_run(const rc_cuda_lanes_job *job,
                            rc_cuda_member_stats *stats, char *why,
                            size_t why_size);

/* Run the job on the current CUDA device.  Every CUDA call is checked:
 * on failure returns RC_ERR_DEVICE (RC_ERR_NOMEM when the budget cannot
 * hold one member) with the file, line and call in `why`, and the
 * outputs are not valid.  stats may be NULL. */
rc_status rc_cuda_member_run(const rc_cuda_member_job *job,
                             rc_cuda_member_stats *stats, char *why,
                             size_t why_size);

#ifdef __cplusplus
}
#endif
#endif

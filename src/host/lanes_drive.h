/* The one orchestration of the ensemble lane path (batch_lanes.c), run
 * by two launchers: the CPU's blocks of 64 lanes (batch_lanes.c) and the
 * GPU's chunks of members, one thread a lane
 * (src/kernels/rc_cuda_ensemble.cu).  A launcher supplies the stages as
 * operations on its own context; the loop over steps, the row cadence
 * and the sums over time that every lane shares live here once.
 * Each operation returns 0, or a nonzero launcher error that ends the
 * run (the CPU's never fail). */
#ifndef RC_LANES_DRIVE_H
#define RC_LANES_DRIVE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rc_lanes_ops {
    /* g = grad V(q) of every lane (after the states are in) */
    int (*start)(void *ctx);
    /* a diagnostics row at the state (rc_k_lanes_row) */
    int (*row)(void *ctx, int first, double time, long wslot);
    /* the lane stages of step `step`: screen, single reflection, kick
     * (with equalities: SHAKE, the screen, RATTLE) */
    int (*fast)(void *ctx, long step);
    /* the live SLOW lanes by the scalar body, and the counters
     * (rc_k_lanes_counters).  A lane's counters read only that lane and
     * come after the last stage of its step: the CPU counts every lane
     * here; the GPU counts a lane that did not go to the scalar body in
     * the fast kernel, which saves a launch a step. */
    int (*slow)(void *ctx, long step);
    /* (q, p, g) <- (x, y, g1) */
    int (*swap)(void *ctx);
} rc_lanes_ops;

/* What the rows' time sums come to (the same for every live lane). */
typedef struct rc_lanes_time {
    double s_t, s_tt;
    long rows;
} rc_lanes_time;

/* `steps` steps of every lane with a row every `every` steps and after
 * the last (rows in all, their first tenths summed by window):
 * rc_k_member_run's loop.  Returns the first nonzero operation result. */
int rc_lanes_drive(const rc_lanes_ops *ops, void *ctx, long steps,
                   long every, long rows, double dt, rc_lanes_time *t);

#ifdef __cplusplus
}
#endif
#endif

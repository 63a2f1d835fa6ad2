/* Baseline integrators, so users can compare (DESIGN §4): collision
 * Verlet (CVA, MCVA) and the direct-substitution methods
 * (direct-endpoint, direct-midpoint).
 *
 * The steps themselves are the kernel bodies of src/kernels/rc_baselines.h,
 * shared with the ensemble batch engine and the GPU (as gvi.c wraps
 * rc_gvi.h); this file runs them on a system's view and scratch, commits
 * the new state and words their failures. */
#include "gvi_impl.h"
#include "../kernels/rc_baselines.h"

/* The step of the system's method (rc_gvi_view_ sets it) from its state;
 * the state changes only when the step succeeds. */
rc_status rc_step_baseline_(rc_system *sys)
{
    rc_k_gvi g;
    rc_k_gvi_step_info info;
    int code;
    if (!sys->gvi)
        return rc_fail_(sys, RC_ERR_STATE, "GVI scratch not prepared");
    g = rc_gvi_view_(sys);
    code = rc_k_method_step(&g, &sys->gvi->k, sys->q, sys->p, &info);
    if (code != RC_K_GVI_OK)
        return rc_gvi_fail_(sys, code);
    return rc_gvi_commit(sys, info.active, info.reflections, info.iterations);
}

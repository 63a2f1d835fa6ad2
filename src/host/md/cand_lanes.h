/* The CPU launcher's loops in lanes (cand_lanes.c), the bits of their
 * bodies: CAND_INFO and X_CAND_INFO_PRED over candidates [lo, hi) (pred:
 * with the predictions), X_SCREEN_PAIR at the step's start over items
 * [lo, hi), without predictions and with them, SCREEN_PAIR (GVI) at the
 * step's start, and X_MOTION. */
#ifndef RC_MD_CAND_LANES_H
#define RC_MD_CAND_LANES_H

#include "../../kernels/rc_md_exact.h"

/* fn(&w, ...) on w, a copy of *v whose dimension is a constant in each
 * of the two calls (3 or 2), as rc_dmd_bodies runs the bodies
 * (src/kernels/rc_md_ops.h): fn inlined, the bodies' loops over
 * coordinates unroll. */
#define RC_DMD_CPU_BY_DIM(v, fn, ...)                                        \
    do {                                                                     \
        rc_k_md w_ = *(v);                                                   \
        if ((v)->dim == 3) {                                                 \
            w_.dim = 3;                                                      \
            fn(&w_, __VA_ARGS__);                                            \
        } else {                                                             \
            w_.dim = 2;                                                      \
            fn(&w_, __VA_ARGS__);                                            \
        }                                                                    \
    } while (0)

void rc_dmd_cpu_cand_info(const rc_k_md *v, long lo, long hi, int pred);
void rc_dmd_cpu_first_scan(const rc_k_md *v, long lo, long hi);
/* avx512: the items to test listed in AVX-512 lanes (rc_avx512_lanes) */
void rc_dmd_cpu_first_scan_pred(const rc_k_md *v, long lo, long hi,
                                int avx512);
/* SCREEN_PAIR (GVI's reflection) at the step's start over items [lo, hi) */
void rc_dmd_cpu_gvi_first_scan(const rc_k_md *v, long lo, long hi);
/* X_MOTION with its two maxes (m) over spheres [lo, hi): where
 * rc_dmd_cpu_x_motion_fits (3-D, one mass, no field, so no p0 copy) */
void rc_dmd_cpu_x_motion(const rc_k_md *v, long lo, long hi, double m[2]);

static inline int rc_dmd_cpu_x_motion_fits(const rc_k_md *v)
{
    return v->dim == 3 && !v->grad && v->g_len == 0.0 &&
           v->uni_inv_mass > 0.0 && !v->save_p;
}

#endif

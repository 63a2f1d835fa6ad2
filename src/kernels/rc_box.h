/* The simulation box of large systems (DESIGN §6): edge lengths per
 * axis, each axis periodic or closed by hard walls at 0 and L.
 *
 * Item: one pair or one particle.  Positions are dim doubles; on a
 * periodic axis they live in [0, L), on a walled axis in [r, L - r].
 * Rounding: the minimum image is one floor and one multiply-add per axis,
 * exact for |x| < 1.5 L. */
#ifndef RC_BOX_H
#define RC_BOX_H

#include "rc_hd.h"
#include "rc_math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rc_k_box {
    int dim;         /* 2 or 3 */
    double L[3];     /* edge lengths (L[2] unused in 2-D) */
    int periodic[3]; /* 1: periodic axis, 0: hard walls at 0 and L */
} rc_k_box;

/* x = qi - qj, the minimum image on periodic axes. */
RC_HD static inline void rc_k_box_delta(const rc_k_box *b, const double *qi,
                                        const double *qj, double *x)
{
    int k;
    for (k = 0; k < b->dim; ++k) {
        double d = qi[k] - qj[k];
        if (b->periodic[k])
            d -= b->L[k] * rc_floor(d / b->L[k] + 0.5);
        x[k] = d;
    }
}

/* Bring q back into [0, L) on periodic axes; image[k] counts the box
 * lengths removed (for unwrapped coordinates), may be NULL. */
RC_HD static inline void rc_k_box_wrap(const rc_k_box *b, double *q,
                                       int *image)
{
    int k;
    for (k = 0; k < b->dim; ++k)
        if (b->periodic[k]) {
            double s;
            /* inside the box nothing moves (q / L then rounds below 1,
             * so the floor is 0): the division and floor, a call where
             * the target has no rounding instruction, only for the few
             * that crossed a face since the last wrap */
            if (q[k] >= 0.0 && q[k] < b->L[k])
                continue;
            s = rc_floor(q[k] / b->L[k]);
            if (s != 0.0) {
                q[k] -= s * b->L[k];
                if (q[k] >= b->L[k]) { /* -tiny + L rounds to L: one more
                                          box length crossed */
                    q[k] -= b->L[k];
                    s += 1.0;
                }
                if (q[k] < 0.0)
                    q[k] = 0.0;
                if (image)
                    image[k] += (int)s;
            }
        }
}

RC_HD static inline double rc_k_box_volume(const rc_k_box *b)
{
    return b->dim == 2 ? b->L[0] * b->L[1] : b->L[0] * b->L[1] * b->L[2];
}

#ifdef __cplusplus
}
#endif
#endif

/* Per-particle pieces of the base integrators (DESIGN §2).
 *
 * Item: one particle i.  Arrays q, p, grad are n*dim doubles,
 * particle-major.  Each body writes only particle i's entries. */
#ifndef RC_INTEGRATE_H
#define RC_INTEGRATE_H

#include "rc_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kick: p_i -= tau * grad_i. */
RC_HD static inline void rc_k_kick_particle(int d, int i, double tau,
                                            const double *grad, double *p)
{
    int k;
    for (k = 0; k < d; ++k)
        p[(long)i * d + k] -= tau * grad[(long)i * d + k];
}

/* Drift: q_i += tau * p_i / m_i. */
RC_HD static inline void rc_k_drift_particle(int d, int i, double tau,
                                             double inv_mass, const double *p,
                                             double *q)
{
    int k;
    for (k = 0; k < d; ++k)
        q[(long)i * d + k] += tau * inv_mass * p[(long)i * d + k];
}

#ifdef __cplusplus
}
#endif
#endif

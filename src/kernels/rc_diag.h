/* Conserved quantities of one system, for the diagnostics of the single
 * system (rc_system_diagnostics) and of every ensemble member (the batch
 * engine), so that both give the same bits.
 *
 * Item: one system.  q, p are n*dim doubles, particle-major.  Sums run in
 * coordinate (particle) order; rounding: one add per term. */
#ifndef RC_DIAG_H
#define RC_DIAG_H

#include "rc_hd.h"
#include "rc_potential.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kinetic energy p^T M^-1 p / 2, momentum and angular momentum (z only
 * in 2-D, none in 1-D). */
RC_HD static inline void rc_k_kinetic_momenta(int d, int n,
                                              const double *inv_mass,
                                              const double *q,
                                              const double *p, double *kin,
                                              double mom[3], double ang[3])
{
    int i, k;
    double t = 0.0;
    for (k = 0; k < 3; ++k)
        mom[k] = ang[k] = 0.0;
    for (i = 0; i < n; ++i)
        for (k = 0; k < d; ++k) {
            double v = p[i * d + k] * inv_mass[i];
            t += 0.5 * p[i * d + k] * v;
        }
    *kin = t;
    for (i = 0; i < n; ++i) {
        const double *qi = q + i * d, *pi = p + i * d;
        for (k = 0; k < d; ++k)
            mom[k] += pi[k];
        if (d == 2) {
            ang[2] += qi[0] * pi[1] - qi[1] * pi[0];
        } else if (d == 3) {
            ang[0] += qi[1] * pi[2] - qi[2] * pi[1];
            ang[1] += qi[2] * pi[0] - qi[0] * pi[2];
            ang[2] += qi[0] * pi[1] - qi[1] * pi[0];
        }
    }
}

/* Potential energy: the per-particle shares summed in index order (the
 * order rc_cpu_energy sums them in). */
RC_HD static inline double rc_k_potential_energy(const rc_k_model m,
                                                 const double *q)
{
    int i;
    double e = 0.0;
    for (i = 0; i < m.n; ++i)
        e += rc_k_energy_particle(m, q, i);
    return e;
}

#ifdef __cplusplus
}
#endif
#endif

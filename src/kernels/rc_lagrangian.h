/* Built-in Lagrangian models in generalized coordinates (seed 001,
 * Pekarek & Murphey): L(q, q̇) = ½ q̇ᵀ M(q) q̇ − V(q) with unilateral
 * constraints g_k(q) ≥ 0.  Each body evaluates, for one configuration q,
 * the jet the variational integrators need:
 *
 *   M[i*n+j]                 M(q), symmetric
 *   dM[(k*n+i)*n+j]          ∂M_ij/∂q_k
 *   d2M[((k*n+l)*n+i)*n+j]   ∂²M_ij/∂q_k∂q_l
 *   V, dV[k], d2V[k*n+l]     V(q) and its derivatives
 *   g[c], dg[c*n+k]          g_c(q) and ∂g_c/∂q_k
 *
 * with n = 2 for both bodies here.  Written once for the host and the
 * device (rc_hd.h); every quantity is a closed form in sin and cos, so a
 * body rounds like the few products it does (a few ulps).  The expression
 * route (src/host/model/lagrangian.c) evaluates the same jet from
 * formulas and is tested against these bodies to round-off. */
#ifndef RC_LAGRANGIAN_H
#define RC_LAGRANGIAN_H

#include <math.h>

#include "rc_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Vertical cart-pendulum, seed 001 §5.1, q = (y, theta): a cart of mass
 * m1 on a vertical track at height y, a point mass m2 on a massless rod
 * of length L at angle theta from the downward vertical (the bob sits at
 * (L sin θ, y − L cos θ)), gravity g, ground y ≥ 0 (one constraint, on
 * the cart only).  par = {m1, m2, L, g}.
 *   M = [[m1+m2, m2 L sin θ], [m2 L sin θ, m2 L²]],
 *   V = (m1+m2) g y − m2 g L cos θ. */
RC_HD static inline void rc_k_lag_cart_pendulum(const double *par,
                                                const double *q, double *M,
                                                double *dM, double *d2M,
                                                double *V, double *dV,
                                                double *d2V, double *g,
                                                double *dg)
{
    double m1 = par[0], m2 = par[1], L = par[2], gr = par[3];
    double s = sin(q[1]), c = cos(q[1]);
    int k;
    M[0] = m1 + m2;
    M[1] = m2 * L * s;
    M[2] = m2 * L * s;
    M[3] = m2 * L * L;
    for (k = 0; k < 8; ++k)
        dM[k] = 0.0;
    dM[4 + 1] = m2 * L * c; /* k = 1 (theta) */
    dM[4 + 2] = m2 * L * c;
    for (k = 0; k < 16; ++k)
        d2M[k] = 0.0;
    d2M[12 + 1] = -m2 * L * s; /* k = l = 1 */
    d2M[12 + 2] = -m2 * L * s;
    *V = (m1 + m2) * gr * q[0] - m2 * gr * L * c;
    dV[0] = (m1 + m2) * gr;
    dV[1] = m2 * gr * L * s;
    d2V[0] = 0.0;
    d2V[1] = 0.0;
    d2V[2] = 0.0;
    d2V[3] = m2 * gr * L * c;
    g[0] = q[0];
    dg[0] = 1.0;
    dg[1] = 0.0;
}

/* The seed's initial map Ξ(β) = FL([β, 0], [0, 3.5 − 0.18 β]) (§5.2):
 * q = (β, 0), q̇ = (0, 3.5 − 0.18 β); p = M(q) q̇ with par as above. */
RC_HD static inline void rc_k_lag_cart_pendulum_xi(const double *par,
                                                   double beta, double *q,
                                                   double *qdot, double *p)
{
    double m2 = par[1], L = par[2];
    q[0] = beta;
    q[1] = 0.0;
    qdot[0] = 0.0;
    qdot[1] = 3.5 - 0.18 * beta;
    /* M(q) at theta = 0: off-diagonal m2 L sin 0 = 0 */
    p[0] = (par[0] + m2) * qdot[0] + m2 * L * sin(q[1]) * qdot[1];
    p[1] = m2 * L * sin(q[1]) * qdot[0] + m2 * L * L * qdot[1];
}

/* Planar double pendulum with a wall (seed 001 Fig. 1's system; the seed
 * does not give its geometry, this is ours), q = (theta1, theta2), both
 * angles from the downward vertical: point masses m1, m2 on massless
 * rods l1, l2 from a pivot at the origin, gravity g; the lower bob must
 * stay left of the vertical wall x = d:
 *   g(q) = d − l1 sin θ1 − l2 sin θ2 ≥ 0.
 * par = {m1, m2, l1, l2, g, d}.
 *   M = [[(m1+m2) l1², m2 l1 l2 cos(θ1−θ2)], [·, m2 l2²]],
 *   V = −(m1+m2) g l1 cos θ1 − m2 g l2 cos θ2. */
RC_HD static inline void rc_k_lag_double_pendulum(const double *par,
                                                  const double *q, double *M,
                                                  double *dM, double *d2M,
                                                  double *V, double *dV,
                                                  double *d2V, double *g,
                                                  double *dg)
{
    double m1 = par[0], m2 = par[1], l1 = par[2], l2 = par[3];
    double gr = par[4], d = par[5];
    double c12 = cos(q[0] - q[1]), s12 = sin(q[0] - q[1]);
    double k12 = m2 * l1 * l2;
    int k;
    M[0] = (m1 + m2) * l1 * l1;
    M[1] = k12 * c12;
    M[2] = k12 * c12;
    M[3] = m2 * l2 * l2;
    for (k = 0; k < 8; ++k)
        dM[k] = 0.0;
    /* ∂/∂θ1 cos(θ1−θ2) = −sin(θ1−θ2); ∂/∂θ2 = +sin(θ1−θ2) */
    dM[0 + 1] = -k12 * s12;
    dM[0 + 2] = -k12 * s12;
    dM[4 + 1] = k12 * s12;
    dM[4 + 2] = k12 * s12;
    for (k = 0; k < 16; ++k)
        d2M[k] = 0.0;
    /* second derivatives of cos(θ1−θ2): −cos (11, 22), +cos (12, 21) */
    d2M[0 + 1] = -k12 * c12;
    d2M[0 + 2] = -k12 * c12;
    d2M[4 + 1] = k12 * c12;
    d2M[4 + 2] = k12 * c12;
    d2M[8 + 1] = k12 * c12;
    d2M[8 + 2] = k12 * c12;
    d2M[12 + 1] = -k12 * c12;
    d2M[12 + 2] = -k12 * c12;
    *V = -(m1 + m2) * gr * l1 * cos(q[0]) - m2 * gr * l2 * cos(q[1]);
    dV[0] = (m1 + m2) * gr * l1 * sin(q[0]);
    dV[1] = m2 * gr * l2 * sin(q[1]);
    d2V[0] = (m1 + m2) * gr * l1 * cos(q[0]);
    d2V[1] = 0.0;
    d2V[2] = 0.0;
    d2V[3] = m2 * gr * l2 * cos(q[1]);
    g[0] = d - l1 * sin(q[0]) - l2 * sin(q[1]);
    dg[0] = -l1 * cos(q[0]);
    dg[1] = -l2 * cos(q[1]);
}

/* The jet of M, V and g at one configuration, in the layout above, for
 * n <= RC_K_LAG_MAX_N coordinates and ng <= RC_K_LAG_MAX_G constraints
 * (fixed sizes: a member's workspace is one block, host or device). */
#define RC_K_LAG_MAX_N 6 /* coordinates (d2M has n^4 entries) */
#define RC_K_LAG_MAX_G 8 /* unilateral constraints */
typedef struct rc_k_lag_jet {
    int n, ng;
    double M[RC_K_LAG_MAX_N * RC_K_LAG_MAX_N];
    double dM[RC_K_LAG_MAX_N * RC_K_LAG_MAX_N * RC_K_LAG_MAX_N];
    double d2M[RC_K_LAG_MAX_N * RC_K_LAG_MAX_N * RC_K_LAG_MAX_N *
               RC_K_LAG_MAX_N];
    double V, dV[RC_K_LAG_MAX_N], d2V[RC_K_LAG_MAX_N * RC_K_LAG_MAX_N];
    double g[RC_K_LAG_MAX_G], dg[RC_K_LAG_MAX_G * RC_K_LAG_MAX_N];
} rc_k_lag_jet;

/* Which body: expressions (host only), or a built-in above. */
enum { RC_K_LAG_EXPR = 0, RC_K_LAG_CART = 1, RC_K_LAG_DOUBLE = 2 };

/* The jet of built-in body `body` (RC_K_LAG_CART or RC_K_LAG_DOUBLE) with
 * parameters par[8] at q, keeping its first ng constraints (a built-in
 * has one; ng = 0 runs it without).  Every order is filled. */
RC_HD static inline void rc_k_lag_builtin_eval(int body, const double *par,
                                               int ng, const double *q,
                                               rc_k_lag_jet *j)
{
    /* a body writes its one constraint into g[0], dg[0..1]; with ng = 0
     * they are there but not read */
    j->n = 2;
    j->ng = ng;
    if (body == RC_K_LAG_CART)
        rc_k_lag_cart_pendulum(par, q, j->M, j->dM, j->d2M, &j->V, j->dV,
                               j->d2V, j->g, j->dg);
    else
        rc_k_lag_double_pendulum(par, q, j->M, j->dM, j->d2M, &j->V, j->dV,
                                 j->d2V, j->g, j->dg);
}

#ifdef __cplusplus
}
#endif
#endif

/* Nested penalty layers of the asynchronous variational integrator
 * (seed 003 §5; Harmon et al.'s asynchronous contact mechanics).
 *
 * Item: one layer l (1-based) of one contact (a sphere pair, or a sphere
 * and a wall, container or obstacle), whose gap g and unit gradient come
 * from the constraint bodies of rc_constraint.h (one body per gap).
 *     V_l(g) = k_l/2 (eta_l - g)^2   for g < eta_l,   0 beyond,
 *     eta_l  = eta1 l^(-e),  h_l = h1 l^(-p/2),  k_l = mu (c/h_l)^2.
 * V_l is C^1 at g = eta_l (value and force vanish there), so a layer tick
 * taken while g >= eta_l is an exact zero impulse: opening a layer early
 * is harmless, only opening it late is not (the proximity test below
 * opens it before g crosses eta_l).  Rounding: a few flops and one pow. */
#ifndef RC_AVI_H
#define RC_AVI_H

#include "rc_hd.h"
#include "rc_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Layer geometry and clock shared by every contact of a run. */
typedef struct rc_k_layers {
    double eta1;   /* outermost thickness */
    double eexp;   /* eta_l = eta1 l^-eexp */
    double h1;     /* outermost step */
    double pexp;   /* k_l ~ l^pexp, h_l = h1 l^(-pexp/2) */
    double c;      /* h_l sqrt(k_l/mu) */
} rc_k_layers;

RC_HD static inline double rc_k_layer_eta(const rc_k_layers *L, int l)
{
    return L->eta1 * pow((double)l, -L->eexp);
}

RC_HD static inline double rc_k_layer_step(const rc_k_layers *L, int l)
{
    return L->h1 * pow((double)l, -0.5 * L->pexp);
}

/* k_l for reduced mass mu, given the layer's step h_l. */
RC_HD static inline double rc_k_layer_stiffness(const rc_k_layers *L,
                                                double mu, double h_l)
{
    return mu * (L->c / h_l) * (L->c / h_l);
}

/* Energy of layer (eta, k) at gap g; *force (may be NULL) receives
 * -dV/dg = k (eta - g) >= 0, the push along the gap's gradient. */
RC_HD static inline double rc_k_layer_energy(double eta, double k, double g,
                                             double *force)
{
    double d = eta - g;
    int on = d > 0.0;
    if (force)
        *force = on ? k * d : 0.0;
    return on ? 0.5 * k * d * d : 0.0;
}

/* Proximity certificate: the first tau >= 0 at which |x + v tau| reaches
 * D, for a gap that closes while |x| falls (outside = 1: a sphere pair or
 * an obstacle) or while |x| grows (outside = 0: inside a container).
 * Returns 0 when the gap is at or past D now, +inf when linear motion
 * never reaches it.  d <= 3. */
RC_HD static inline double rc_k_cert_radial(int d, const double *x,
                                            const double *v, double D,
                                            int outside)
{
    double a = rc_dot(d, v, v), b = rc_dot(d, x, v), c, disc, sq;
    c = rc_dot(d, x, x) - D * D;
    if (outside ? c <= 0.0 : c >= 0.0)
        return 0.0;
    if (!(a > 0.0))
        return INFINITY;
    disc = b * b - a * c;
    if (outside) {
        if (b >= 0.0 || disc < 0.0)
            return INFINITY;
        sq = rc_sqrt(disc);
        /* smaller root c/(-b + sq) without cancellation */
        return c / (-b + sq);
    }
    sq = rc_sqrt(disc < 0.0 ? 0.0 : disc); /* c < 0: disc >= 0 anyway */
    return b >= 0.0 ? (-c) / (b + sq) : (sq - b) / a;
}

/* Planar gap closing linearly: gap value gv, its rate gdot; time to
 * reach D (0 when already at or below, +inf when not closing). */
RC_HD static inline double rc_k_cert_linear(double gv, double gdot, double D)
{
    if (gv <= D)
        return 0.0;
    if (!(gdot < 0.0))
        return INFINITY;
    return (gv - D) / (-gdot);
}

#ifdef __cplusplus
}
#endif
#endif

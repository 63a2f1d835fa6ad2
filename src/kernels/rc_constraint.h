/* Constraint bodies: value and gradient of one hard constraint.
 *
 * Item: one constraint term.  Inequality constraints g(q) >= 0 (sphere
 * pairs, walls, containers, obstacles) and equality constraints f(q) = 0
 * (rods, pendulum rods, planes).  Every constraint touches one or two
 * particles, so its gradient is returned as up to two dim-blocks:
 *     dg/dq_{idx[b]} = grad[b][0..dim-1],  b < returned count.
 * Gradients of distance constraints are unit vectors (|grad| = 1 per
 * block), so values are true distances and velocities along a gradient
 * are true normal speeds.  Rounding: a handful of flops, one sqrt. */
#ifndef RC_CONSTRAINT_H
#define RC_CONSTRAINT_H

#include "rc_hd.h"
#include "rc_math.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    /* inequalities g >= 0 */
    RC_K_NON_OVERLAP = 0, /* |q_i - q_j| - r_i - r_j              (i, j)   */
    RC_K_WALL = 1,        /* n.q_i - a[3] - r_i, n = a[0..2] unit  (i)      */
    RC_K_CONTAINER = 2,   /* a[3] - r_i - |q_i - c|, c = a[0..2]   (i)      */
    RC_K_OBSTACLE = 3,    /* |q_i - c| - a[3] - r_i                (i)      */
    /* equalities f = 0 */
    RC_K_ROD = 4,         /* |q_i - q_j| - a[3]                    (i, j)   */
    RC_K_PENDULUM = 5,    /* |q_i - c| - a[3], c = a[0..2]         (i)      */
    RC_K_PLANE = 6        /* n.q_i - a[3], n = a[0..2] unit        (i)      */
};

typedef struct rc_k_constraint {
    int type;
    int i, j;      /* particles (j unused by one-particle types) */
    double a[4];   /* see the enum */
} rc_k_constraint;

RC_HD static inline int rc_k_constraint_is_equality(const rc_k_constraint *c)
{
    return c->type >= RC_K_ROD;
}

/* The forms by type.  qi, qj: a particle's dim coordinates, `st` doubles
 * apart (1 in a particle-major array; the lane count in the
 * structure-of-arrays blocks of rc_gvi_lanes.h, so one body serves
 * both).  Each returns the value and writes the first gradient block;
 * branch-free, so SIMD lanes run them unmasked.  At a coincident pair or
 * centre the direction is undefined; the first axis is used so the
 * result stays finite. */

/* Sphere pair (|q_i - q_j| - r_i - r_j) or rod (|q_i - q_j| - len);
 * the second block is -u. */
RC_HD static inline double rc_k_con_pair(int type, int d, const double *qi,
                                         const double *qj, long st,
                                         double ri, double rj, double len0,
                                         double u[3])
{
    double x[3], s, len, inv;
    int k, pos;
    for (k = 0; k < d; ++k)
        x[k] = qi[k * st] - qj[k * st];
    s = rc_dot(d, x, x);
    len = rc_sqrt(s);
    pos = len > 0.0;
    inv = pos ? len : 1.0;
    for (k = 0; k < d; ++k) {
        double xk = x[k] / inv; /* computed, then selected: no branch */
        u[k] = pos ? xk : (k == 0 ? 1.0 : 0.0);
    }
    return type == RC_K_ROD ? len - len0 : len - ri - rj;
}

/* Wall (n.q_i - a[3] - r_i) or plane (n.q_i - a[3]); gradient n. */
RC_HD static inline double rc_k_con_plane(int type, int d, const double *a,
                                          const double *qi, long st,
                                          double ri, double u[3])
{
    double s = 0.0;
    int k;
    for (k = 0; k < d; ++k) {
        s += a[k] * qi[k * st];
        u[k] = a[k];
    }
    return s - a[3] - (type == RC_K_WALL ? ri : 0.0);
}

/* Container, obstacle, pendulum: radial about the centre a[0..2]. */
RC_HD static inline double rc_k_con_radial(int type, int d, const double *a,
                                           const double *qi, long st,
                                           double ri, double u[3])
{
    double x[3], s, len, inv;
    double sign = type == RC_K_CONTAINER ? -1.0 : 1.0;
    int k, pos;
    for (k = 0; k < d; ++k)
        x[k] = qi[k * st] - a[k];
    s = rc_dot(d, x, x);
    len = rc_sqrt(s);
    pos = len > 0.0;
    inv = pos ? len : 1.0;
    for (k = 0; k < d; ++k) {
        double xk = x[k] / inv;
        u[k] = sign * (pos ? xk : (k == 0 ? 1.0 : 0.0));
    }
    return type == RC_K_CONTAINER  ? a[3] - ri - len
           : type == RC_K_OBSTACLE ? len - a[3] - ri
                                   : len - a[3];
}

/* Value at q (n*dim, particle-major), radii r; fills idx/grad and
 * returns the number of gradient blocks (1 or 2). */
RC_HD static inline int rc_k_constraint_eval(const rc_k_constraint *c, int d,
                                             const double *q, const double *r,
                                             double *value, int *idx,
                                             double grad[2][3])
{
    int k;
    const double *qi = q + (long)c->i * d;
    idx[0] = c->i;
    switch (c->type) {
    case RC_K_NON_OVERLAP:
    case RC_K_ROD:
        *value = rc_k_con_pair(c->type, d, qi, q + (long)c->j * d, 1,
                               r[c->i], r[c->j], c->a[3], grad[0]);
        for (k = 0; k < d; ++k)
            grad[1][k] = -grad[0][k];
        idx[1] = c->j;
        return 2;
    case RC_K_WALL:
    case RC_K_PLANE:
        *value = rc_k_con_plane(c->type, d, c->a, qi, 1, r[c->i], grad[0]);
        return 1;
    default: /* container, obstacle, pendulum: radial about a centre */
        *value = rc_k_con_radial(c->type, d, c->a, qi, 1, r[c->i], grad[0]);
        return 1;
    }
}

/* out (n*dim, accumulated) += lam * Hess(c)(q) u for one constraint
 * term.  Distance-type terms (|x| with x = q_i - q_j or q_i - c) have
 * Hess |x| = (I - n n^T)/|x| (sign flipped for the container); walls and
 * planes are linear.  Used by the Newton solves whose constraint forces
 * are evaluated at the unknown end point (direct methods). */
RC_HD static inline void rc_k_constraint_hessian_vector(
    const rc_k_constraint *c, int d, const double *q, double lam,
    const double *u, double *out)
{
    double x[3], du[3], len, s = 0.0, nu = 0.0, sign = 1.0;
    int k, two = c->type == RC_K_NON_OVERLAP || c->type == RC_K_ROD;
    const double *qi = q + (long)c->i * d;
    if (c->type == RC_K_WALL || c->type == RC_K_PLANE)
        return;
    if (c->type == RC_K_CONTAINER)
        sign = -1.0;
    for (k = 0; k < d; ++k) {
        x[k] = qi[k] - (two ? q[(long)c->j * d + k] : c->a[k]);
        du[k] = u[(long)c->i * d + k] - (two ? u[(long)c->j * d + k] : 0.0);
        s += x[k] * x[k];
    }
    len = rc_sqrt(s);
    if (!(len > 0.0))
        return;
    for (k = 0; k < d; ++k)
        nu += x[k] / len * du[k];
    for (k = 0; k < d; ++k) {
        double hk = sign * lam * (du[k] - nu * x[k] / len) / len;
        out[(long)c->i * d + k] += hk;
        if (two)
            out[(long)c->j * d + k] -= hk;
    }
}

#ifdef __cplusplus
}
#endif
#endif

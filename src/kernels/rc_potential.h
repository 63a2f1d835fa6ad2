/* Potential energy bodies: value, gradient and Hessian-vector product of
 * V(q), one particle at a time.
 *
 * Item: one particle i of one system.  Arrays: q, u are n*dim doubles,
 * particle-major (q[i*dim + k]); the body writes only the dim entries of
 * particle i, so a loop over i (OpenMP on the CPU, one thread per particle
 * on the GPU) needs no atomics and gives the same bits in any order.
 *
 * Two-body terms are evaluated from both ends (each particle sums the
 * forces acting on it), which doubles their arithmetic but keeps every
 * item independent.  Energies are split half/half between the two ends.
 *
 * Radial forms: for a term that depends on x (x = q_i - q_j or q_i - c)
 * only through s = |x|^2 or r = |x|, we compute c1, c2 with
 *     grad_x V = c1 x,    Hess_x V = c1 I + c2 x x^T,
 * so the gradient and the Hessian-vector product share one code path.
 * Rounding: a handful of flops per term; gradients match central finite
 * differences to ~1e-9 relative at step 1e-6 (tests/test_potentials.c). */
#ifndef RC_POTENTIAL_H
#define RC_POTENTIAL_H

#include "rc_hd.h"
#include "rc_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Potential type codes; equal to the public rc_potential_type values. */
enum {
    RC_K_GRAVITY = 0,
    RC_K_SPRING = 1,
    RC_K_ANCHOR = 2,
    RC_K_LJ = 3,
    RC_K_WCA = 4,
    RC_K_INVERSE_SQUARE = 5,
    RC_K_SEXTIC_WELL = 6
};

/* One potential term in kernel form.  Parameters a[] by type:
 *   GRAVITY          a[0..2] acceleration
 *   SPRING           a[0] k, a[1] rest length
 *   ANCHOR           a[0] k, a[1] rest length, a[2..4] anchor point
 *   LJ, WCA          a[0] epsilon, a[1] sigma^2, a[2] cutoff^2,
 *                    a[3] unshifted LJ value at the cutoff (subtracted)
 *   INVERSE_SQUARE   a[0] strength, a[1..3] centre
 *   SEXTIC_WELL      a[0] strength, a[1..3] centre
 * i (and j for springs) are particle indices; i = -1 means every
 * particle for one-body terms; LJ/WCA always act on all pairs. */
typedef struct rc_k_potential {
    int type;
    int i, j;
    double a[6];
} rc_k_potential;

/* Read-only view of a system's model, passed by value to bodies. */
typedef struct rc_k_model {
    int dim;                    /* 1, 2 or 3 */
    int n;                      /* particles */
    int npot;                   /* potential terms */
    const double *mass;         /* [n] */
    const double *inv_mass;     /* [n] */
    const double *radius;       /* [n] */
    const rc_k_potential *pot;  /* [npot] */
} rc_k_model;

/* The radial forms by type, as functions of s = |x|^2 alone: they write
 * (c1, c2) and return the energy.  Branch-free (a guard selects, a
 * division by a substituted 1 is discarded), so a loop over ensemble
 * members in SIMD lanes (rc_gvi_lanes.h) runs them unmasked and gives
 * the bits of the scalar call.  a: the term's parameters (see above). */
/* Spring or anchor of rest length l > 0 (rc_k_spring_radial picks). */
RC_HD static inline double rc_k_spring_radial_l(const double *a, double s,
                                                double *c1, double *c2)
{
    double k = a[0], l = a[1], r, dr, f1, f2;
    int pos;
    r = rc_sqrt(s);
    dr = r - l;
    /* phi' = k (r-l), phi'' = k; c1 = phi'/r, c2 = (phi''-c1)/r^2;
     * 0 at r = 0 (and for a NaN r, as the branch it replaces) */
    pos = r > 0.0;
    f1 = k * dr / (pos ? r : 1.0);
    f2 = (k - f1) / (pos ? s : 1.0);
    *c1 = pos ? f1 : 0.0;
    *c2 = pos ? f2 : 0.0;
    return 0.5 * k * dr * dr;
}

/* Rest length 0: V = k/2 s, exactly quadratic, smooth at 0. */
RC_HD static inline double rc_k_spring_radial_0(const double *a, double s,
                                                double *c1, double *c2)
{
    *c1 = a[0];
    *c2 = 0.0;
    return 0.5 * a[0] * s;
}

RC_HD static inline double rc_k_spring_radial(const double *a, double s,
                                              double *c1, double *c2)
{
    return a[1] == 0.0 ? rc_k_spring_radial_0(a, s, c1, c2)
                       : rc_k_spring_radial_l(a, s, c1, c2);
}

RC_HD static inline double rc_k_lj_radial(const double *a, double s,
                                          double *c1, double *c2)
{
    double eps = a[0], sig2 = a[1], tt, t3, t6, ss, f1, f2, v;
    /* inside the cutoff, off 0 (| : no branch in a lane loop) */
    int on = !((s >= a[2]) | (s <= 0.0));
    ss = on ? s : 1.0;
    tt = sig2 / ss;
    t3 = tt * tt * tt;
    t6 = t3 * t3;
    /* V(s) = 4 eps (t^6 - t^3), t = sigma^2/s;
     * V_s = -4 eps (6 t^6 - 3 t^3)/s, V_ss = 4 eps (42 t^6 - 12 t^3)/s^2 */
    f1 = 2.0 * (-4.0 * eps * (6.0 * t6 - 3.0 * t3) / ss);
    f2 = 4.0 * (4.0 * eps * (42.0 * t6 - 12.0 * t3) / (ss * ss));
    v = 4.0 * eps * (t6 - t3) - a[3];
    *c1 = on ? f1 : 0.0;
    *c2 = on ? f2 : 0.0;
    return on ? v : 0.0;
}

RC_HD static inline double rc_k_inverse_square_radial(const double *a,
                                                      double s, double *c1,
                                                      double *c2)
{
    double st = a[0], f1, f2, v;
    int on = !(s <= 0.0); /* singular at 0; callers keep particles off */
    double ss = on ? s : 1.0;
    /* V = a/s, V_s = -a/s^2, V_ss = 2a/s^3 */
    f1 = 2.0 * (-st / (ss * ss));
    f2 = 4.0 * (2.0 * st / (ss * ss * ss));
    v = st / ss;
    *c1 = on ? f1 : 0.0;
    *c2 = on ? f2 : 0.0;
    return on ? v : 0.0;
}

RC_HD static inline double rc_k_sextic_radial(const double *a, double s,
                                              double *c1, double *c2)
{
    double st = a[0];
    /* V = a s (s-1)^2, V_s = a (s-1)(3s-1), V_ss = a (6s - 4) */
    *c1 = 2.0 * st * (s - 1.0) * (3.0 * s - 1.0);
    *c2 = 4.0 * st * (6.0 * s - 4.0);
    return st * s * (s - 1.0) * (s - 1.0);
}

/* Coefficients (c1, c2) of one radial term at separation x (see the file
 * comment) and its energy.  Returns the energy. */
RC_HD static inline double rc_k_radial_coeffs(const rc_k_potential *t, int d,
                                              const double *x, double *c1,
                                              double *c2)
{
    double s = rc_dot(d, x, x);
    switch (t->type) {
    case RC_K_SPRING:
    case RC_K_ANCHOR:
        return rc_k_spring_radial(t->a, s, c1, c2);
    case RC_K_LJ:
    case RC_K_WCA:
        return rc_k_lj_radial(t->a, s, c1, c2);
    case RC_K_INVERSE_SQUARE:
        return rc_k_inverse_square_radial(t->a, s, c1, c2);
    case RC_K_SEXTIC_WELL:
        return rc_k_sextic_radial(t->a, s, c1, c2);
    default:
        *c1 = 0.0;
        *c2 = 0.0;
        return 0.0;
    }
}

/* Centre point of a one-body radial term (anchor or external well). */
RC_HD static inline const double *rc_k_centre(const rc_k_potential *t)
{
    return t->type == RC_K_ANCHOR ? t->a + 2 : t->a + 1;
}

/* Is V linear in q (every term gravity, or no term)?  Then grad V is
 * the same bits at every q and Hess V is zero. */
RC_HD static inline int rc_k_model_linear(const rc_k_model *m)
{
    int t;
    for (t = 0; t < m->npot; ++t)
        if (m->pot[t].type != RC_K_GRAVITY)
            return 0;
    return 1;
}

/* Does term t act on particle i as a one-body term? */
RC_HD static inline int rc_k_one_body_on(const rc_k_potential *t, int i)
{
    return t->i < 0 || t->i == i;
}

/* Energy share of particle i: its one-body terms plus half of each
 * two-body term it belongs to.  Summing over i gives V(q). */
RC_HD static inline double rc_k_energy_particle(const rc_k_model m,
                                                const double *q, int i)
{
    int d = m.dim, t, j, k;
    double e = 0.0, x[3], c1, c2;
    const double *qi = q + (long)i * d;
    for (t = 0; t < m.npot; ++t) {
        const rc_k_potential *p = m.pot + t;
        switch (p->type) {
        case RC_K_GRAVITY:
            if (rc_k_one_body_on(p, i))
                e -= m.mass[i] * rc_dot(d, p->a, qi);
            break;
        case RC_K_SPRING:
            if (p->i == i || p->j == i) {
                const double *qj = q + (long)(p->i == i ? p->j : p->i) * d;
                for (k = 0; k < d; ++k)
                    x[k] = qi[k] - qj[k];
                e += 0.5 * rc_k_radial_coeffs(p, d, x, &c1, &c2);
            }
            break;
        case RC_K_LJ:
        case RC_K_WCA:
            for (j = 0; j < m.n; ++j) {
                if (j == i)
                    continue;
                for (k = 0; k < d; ++k)
                    x[k] = qi[k] - q[(long)j * d + k];
                e += 0.5 * rc_k_radial_coeffs(p, d, x, &c1, &c2);
            }
            break;
        default: /* anchor, inverse square, sextic well: one-body radial */
            if (rc_k_one_body_on(p, i)) {
                const double *c = rc_k_centre(p);
                for (k = 0; k < d; ++k)
                    x[k] = qi[k] - c[k];
                e += rc_k_radial_coeffs(p, d, x, &c1, &c2);
            }
            break;
        }
    }
    return e;
}

/* g_i = dV/dq_i (dim entries). */
RC_HD static inline void rc_k_gradient_particle(const rc_k_model m,
                                                const double *q, int i,
                                                double *g_i)
{
    int d = m.dim, t, j, k;
    double x[3], c1, c2;
    const double *qi = q + (long)i * d;
    for (k = 0; k < d; ++k)
        g_i[k] = 0.0;
    for (t = 0; t < m.npot; ++t) {
        const rc_k_potential *p = m.pot + t;
        switch (p->type) {
        case RC_K_GRAVITY:
            if (rc_k_one_body_on(p, i))
                for (k = 0; k < d; ++k)
                    g_i[k] -= m.mass[i] * p->a[k];
            break;
        case RC_K_SPRING:
            if (p->i == i || p->j == i) {
                const double *qj = q + (long)(p->i == i ? p->j : p->i) * d;
                for (k = 0; k < d; ++k)
                    x[k] = qi[k] - qj[k];
                rc_k_radial_coeffs(p, d, x, &c1, &c2);
                for (k = 0; k < d; ++k)
                    g_i[k] += c1 * x[k];
            }
            break;
        case RC_K_LJ:
        case RC_K_WCA:
            for (j = 0; j < m.n; ++j) {
                if (j == i)
                    continue;
                for (k = 0; k < d; ++k)
                    x[k] = qi[k] - q[(long)j * d + k];
                rc_k_radial_coeffs(p, d, x, &c1, &c2);
                for (k = 0; k < d; ++k)
                    g_i[k] += c1 * x[k];
            }
            break;
        default:
            if (rc_k_one_body_on(p, i)) {
                const double *c = rc_k_centre(p);
                for (k = 0; k < d; ++k)
                    x[k] = qi[k] - c[k];
                rc_k_radial_coeffs(p, d, x, &c1, &c2);
                for (k = 0; k < d; ++k)
                    g_i[k] += c1 * x[k];
            }
            break;
        }
    }
}

/* out_i = rows of particle i of (Hess V(q)) u.  For a two-body term the
 * block acts on u_i - u_j; for a one-body term on u_i. */
RC_HD static inline void rc_k_hessian_vector_particle(const rc_k_model m,
                                                      const double *q,
                                                      const double *u, int i,
                                                      double *out_i)
{
    int d = m.dim, t, j, k;
    double x[3], du[3], c1, c2, xu;
    const double *qi = q + (long)i * d;
    const double *ui = u + (long)i * d;
    for (k = 0; k < d; ++k)
        out_i[k] = 0.0;
    for (t = 0; t < m.npot; ++t) {
        const rc_k_potential *p = m.pot + t;
        int other = -1, two_body = 0, lo = 0, hi = 0;
        switch (p->type) {
        case RC_K_GRAVITY:
            continue; /* linear: zero Hessian */
        case RC_K_SPRING:
            if (p->i != i && p->j != i)
                continue;
            other = p->i == i ? p->j : p->i;
            two_body = 1;
            lo = other;
            hi = other + 1;
            break;
        case RC_K_LJ:
        case RC_K_WCA:
            two_body = 1;
            lo = 0;
            hi = m.n;
            break;
        default:
            if (!rc_k_one_body_on(p, i))
                continue;
            break;
        }
        if (two_body) {
            for (j = lo; j < hi; ++j) {
                const double *qj = q + (long)j * d;
                const double *uj = u + (long)j * d;
                if (j == i)
                    continue;
                for (k = 0; k < d; ++k) {
                    x[k] = qi[k] - qj[k];
                    du[k] = ui[k] - uj[k];
                }
                rc_k_radial_coeffs(p, d, x, &c1, &c2);
                xu = rc_dot(d, x, du);
                for (k = 0; k < d; ++k)
                    out_i[k] += c1 * du[k] + c2 * xu * x[k];
            }
        } else {
            const double *c = rc_k_centre(p);
            for (k = 0; k < d; ++k)
                x[k] = qi[k] - c[k];
            rc_k_radial_coeffs(p, d, x, &c1, &c2);
            xu = rc_dot(d, x, ui);
            for (k = 0; k < d; ++k)
                out_i[k] += c1 * ui[k] + c2 * xu * x[k];
        }
    }
}

#ifdef __cplusplus
}
#endif
#endif

/* The GVI step of many ensemble members at once, members in SIMD lanes
 * (DESIGN §5; the member body is rc_gvi.h, the member run rc_member.h).
 *
 * Item: lane l of a block of L members that share one model (the batch
 * engine's plan).  State is structure-of-arrays: coordinate c of lane l
 * at c*L + l, so the same coordinate of consecutive members is
 * consecutive in memory — the SIMD lanes of a CPU loop over l, the
 * threads of a GPU warp.  Every body below loops over a lane range
 * [l0, l1) with RC_LANES: on the CPU the range is the whole block and the
 * loop vectorises; a GPU thread passes its own lane.  The loops over the
 * model (potential terms, constraint terms, particles) are outside the
 * lane loop, so the model's lists are walked once per block and call,
 * never switched per member.
 *
 * What runs here is the common case of a member's step, branch-free:
 *   free     no inequality term in the extended set A (seed 000 eq. 50):
 *            the explicit Verlet drift and kick;
 *   single   exactly one term in A: its reflection (one column, the 1x1
 *            NNLS in closed form), the re-predicted drift, the kick.
 * Anything else — two or more terms in A, a term the step would hold
 * (resting contact), a second reflection pass, a non-finite result —
 * marks the lane `slow`, and the caller steps that member by the scalar
 * body rc_k_gvi_step from the same start.  Each stage repeats the scalar
 * body's arithmetic in its order, so a lane's bits are the scalar
 * body's bits (tests/test_ensemble_lanes.c checks members.csv byte for
 * byte); where the scalar body sums over all N coordinates of a dense
 * column, so does the lane form, signed zeros included.
 *
 * Which models: the Verlet base without equality constraints, exact
 * (not linearized) inequalities, GVI's columns at q (rc_k_lanes_ok).
 * The single-term reflection also needs the plain metric W = M^-1 and
 * the reflection that stops when nothing approaches (not Moreau, not
 * seed-exact mode); otherwise every lane with a term in A goes slow.
 * With equality constraints on the Verlet base (rc_k_lanes_eq_ok, the
 * CPU only) a lane's step is `free` or `slow`: the predictor is SHAKE,
 * the momentum RATTLE, their m x m solves an LU in lanes whose row
 * exchanges are per-lane moves (rc_k_lanes_eq_step); any term in A,
 * Newton past its cap or a singular matrix is slow.  (The midpoint base
 * with gravity only, Newton's cradle, is the Verlet base: see
 * rc_gvi_view_method_.)  As elsewhere in this file every lane loop is
 * straight-line (& and | for && and ||, selects for branches, per-lane
 * [L] accumulators for sums over the model), and -fopt-info-vec reports
 * each one vectorised (batch_lanes.c
 * is built with -fno-tree-loop-distribute-patterns, so the zeroing loops
 * stay vector stores, not memset calls).
 *
 * `d` (the dimension) is passed as a literal by the caller's dispatch
 * (1, 2 or 3), so the loops over coordinates unroll and the lane loop is
 * innermost; so is L on the CPU. */
#ifndef RC_GVI_LANES_H
#define RC_GVI_LANES_H

#include "rc_constraint.h"
#include "rc_gvi.h"
#include "rc_hd.h"
#include "rc_math.h"
#include "rc_member.h"
#include "rc_potential.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define RC_LANES_INLINE __forceinline__
#define RC_LANES(l, l0, l1) for (long l = (l0); l < (l1); ++l)
#else
#define RC_LANES_INLINE inline __attribute__((always_inline))
/* ivdep: lanes are independent members (no loop-carried dependence).
 * Not `omp simd`: GCC 12 turns the per-lane local arrays of the bodies
 * (x[3], u[3]) into "simd arrays" indexed by the lane, which it then
 * fails to vectorise ("control flow in loop"); under ivdep the same
 * loops vectorise (-fopt-info-vec).  Neither reassociates anything. */
#define RC_LANES(l, l0, l1)                                                   \
    _Pragma("GCC ivdep") for (long l = (l0); l < (l1); ++l)
#endif

/* Most inequality terms a lane holds in lanes (rc_k_lanes_held); a lane
 * that holds more is stepped by the scalar body. */
#define RC_K_LANES_HELD_MAX 4

/* Lane kinds after the screen. */
enum { RC_LANE_FREE = 0, RC_LANE_SINGLE = 1, RC_LANE_SLOW = 2 };

/* Are the model's potentials all ones the lane bodies evaluate? */
RC_HD static inline int rc_k_lanes_pots_ok(const rc_k_gvi *g)
{
    int t;
    for (t = 0; t < g->m.npot; ++t)
        if (g->m.pot[t].type < RC_K_GRAVITY ||
            g->m.pot[t].type > RC_K_SEXTIC_WELL)
            return 0;
    return 1;
}

/* Can a model's members run in lanes (on either device)?  0 sends them
 * member by member. */
RC_HD static inline int rc_k_lanes_ok(const rc_k_gvi *g)
{
    /* the lanes' stages are GVI's; the baselines' members take the
     * scalar body (rc_k_method_step) */
    if (g->method != RC_K_METHOD_GVI || g->neq != 0 || g->midpoint || g->q0 ||
        g->colmode != RC_COLS_AT_Q || g->m.dim < 1 || g->m.dim > 3)
        return 0;
    return rc_k_lanes_pots_ok(g);
}

/* Can a model with equality constraints run in lanes (the CPU launcher;
 * the GPU's lane kernels take rc_k_lanes_ok models only)?  The Verlet
 * base (the midpoint base with gravity only is one: rc_gvi_view_method_)
 * with the predictor's SHAKE solve; not seed-exact, exact inequalities,
 * columns at q: a step with no term in A is then SHAKE for x and RATTLE
 * for y (rc_k_lanes_eq_step); a lane with a term in A is stepped by the
 * scalar body. */
RC_HD static inline int rc_k_lanes_eq_ok(const rc_k_gvi *g)
{
    if (g->method != RC_K_METHOD_GVI || g->neq < 1 || g->midpoint || g->q0 ||
        g->seed_exact || g->colmode != RC_COLS_AT_Q || g->m.dim < 1 ||
        g->m.dim > 3)
        return 0;
    return rc_k_lanes_pots_ok(g);
}

/* Can a lane with one term in A be reflected in lanes (else slow)? */
RC_HD static inline int rc_k_lanes_reflect_ok(const rc_k_gvi *g)
{
    return !g->modified && !g->moreau && !g->seed_exact && g->max_passes >= 1;
}

/* ------------------------------------------------------------------ */
/* Potentials: gradient and energy shares in lanes.                    */

/* One radial pair contribution in lanes: x = q_self - q_other (or minus
 * the centre c when other < 0), then into the gradient (grad != NULL:
 * grad_self += c1 x) or the energy share (else e_self += w V).  With
 * `both` (a pair, other >= 0) the other end gets its contribution from
 * the same evaluation: its x is -x exactly (IEEE subtraction is
 * antisymmetric), so s, c1 and V are the bits the other end would
 * compute, and c1 (-x) = -(c1 x).  The type, the target and the kind of
 * partner are decided outside the lane loop. */
#define RC_LANES_RADIAL_LOOP(FORM, XK, OUT)                                   \
    RC_LANES(l, l0, l1)                                                       \
    {                                                                         \
        double x[3], s, c1, c2, v;                                            \
        int k;                                                                \
        for (k = 0; k < d; ++k)                                               \
            x[k] = qs[k * L + l] - (XK);                                      \
        s = rc_dot(d, x, x);                                                  \
        v = FORM(a, s, &c1, &c2);                                             \
        OUT;                                                                  \
    }
/* the gradient needs c1 only (the energy and c2 are dead code) */
#define RC_LANES_RADIAL_GRAD_LOOP(FORM, XK, OUT)                              \
    RC_LANES(l, l0, l1)                                                       \
    {                                                                         \
        double x[3], s, c1, c2;                                               \
        int k;                                                                \
        for (k = 0; k < d; ++k)                                               \
            x[k] = qs[k * L + l] - (XK);                                      \
        s = rc_dot(d, x, x);                                                  \
        (void)FORM(a, s, &c1, &c2);                                           \
        OUT;                                                                  \
    }
#define RC_LANES_RADIAL_OUT(FORM, XK)                                         \
    if (grad && both) {                                                       \
        RC_LANES_RADIAL_GRAD_LOOP(                                            \
            FORM, XK, for (k = 0; k < d; ++k) {                               \
                grad[((long)self * d + k) * L + l] += c1 * x[k];              \
                grad[((long)other * d + k) * L + l] += c1 * -x[k];            \
            })                                                                \
    } else if (grad) {                                                        \
        RC_LANES_RADIAL_GRAD_LOOP(FORM, XK,                                   \
                                  for (k = 0; k < d; ++k)                     \
                                      grad[((long)self * d + k) * L + l] +=   \
                                      c1 * x[k])                              \
    } else if (both) {                                                        \
        RC_LANES_RADIAL_LOOP(FORM, XK, {                                      \
            e[(long)self * L + l] += w * v;                                   \
            e[(long)other * L + l] += w * v;                                  \
        })                                                                    \
    } else if (w == 1.0) {                                                    \
        RC_LANES_RADIAL_LOOP(FORM, XK, e[(long)self * L + l] += v)            \
    } else {                                                                  \
        RC_LANES_RADIAL_LOOP(FORM, XK, e[(long)self * L + l] += w * v)        \
    }
#define RC_LANES_RADIAL_FORM(FORM)                                            \
    if (other >= 0) {                                                         \
        RC_LANES_RADIAL_OUT(FORM, qo[k * L + l])                              \
    } else {                                                                  \
        RC_LANES_RADIAL_OUT(FORM, cc[k])                                      \
    }

RC_HD static RC_LANES_INLINE void
rc_k_lanes_radial_term(const rc_k_potential *p, const int d, const double *q,
                       long L, int self, int other, int both,
                       const double *c, double w, double *grad, double *e,
                       long l0, long l1)
{
    const double *qs = q + (long)self * d * L;
    const double *qo = q + (long)(other >= 0 ? other : self) * d * L;
    /* the parameters and the centre in locals: a store into grad or e
     * cannot change them, so the lane loop keeps them in registers */
    double a[4], cc[3];
    int t;
    for (t = 0; t < 4; ++t)
        a[t] = p->a[t];
    for (t = 0; t < 3; ++t)
        cc[t] = other >= 0 || t >= d ? 0.0 : c[t];
    switch (p->type) {
    case RC_K_SPRING:
    case RC_K_ANCHOR:
        if (p->a[1] == 0.0) {
            RC_LANES_RADIAL_FORM(rc_k_spring_radial_0)
        } else {
            RC_LANES_RADIAL_FORM(rc_k_spring_radial_l)
        }
        break;
    case RC_K_LJ:
    case RC_K_WCA:
        RC_LANES_RADIAL_FORM(rc_k_lj_radial)
        break;
    case RC_K_INVERSE_SQUARE:
        RC_LANES_RADIAL_FORM(rc_k_inverse_square_radial)
        break;
    default:
        RC_LANES_RADIAL_FORM(rc_k_sextic_radial)
        break;
    }
}
#undef RC_LANES_RADIAL_FORM
#undef RC_LANES_RADIAL_OUT
#undef RC_LANES_RADIAL_LOOP
#undef RC_LANES_RADIAL_GRAD_LOOP

/* The model's terms in rc_k_gradient_particle's order for each particle
 * (terms in index order; a pair term from each end; LJ/WCA over the
 * other particles in index order): grad (grad != NULL, N*L, zeroed here)
 * or the energy shares e (n*L, zeroed here; rc_k_energy_particle's
 * order and halving).  A particle's sum sees its terms in the same order
 * whichever loop is outside, so the bits are the scalar bits. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_terms_m(const rc_k_model m, const double *lmass, const int d,
                   const double *q, long L, double *grad, double *e, long l0,
                   long l1)
{
    int t, i, j, k, n = m.n;
    if (grad) {
        for (i = 0; i < n * d; ++i)
            RC_LANES(l, l0, l1) grad[(long)i * L + l] = 0.0;
    } else {
        for (i = 0; i < n; ++i)
            RC_LANES(l, l0, l1) e[(long)i * L + l] = 0.0;
    }
    for (t = 0; t < m.npot; ++t) {
        const rc_k_potential *p = m.pot + t;
        switch (p->type) {
        case RC_K_GRAVITY:
            for (i = 0; i < n; ++i) {
                if (!rc_k_one_body_on(p, i))
                    continue;
                if (grad && lmass) { /* each lane's own mass */
                    const double *mi = lmass + (long)i * L;
                    for (k = 0; k < d; ++k) {
                        double ak = p->a[k];
                        double *gi = grad + ((long)i * d + k) * L;
                        RC_LANES(l, l0, l1) gi[l] -= mi[l] * ak;
                    }
                } else if (grad) {
                    for (k = 0; k < d; ++k) {
                        double f = m.mass[i] * p->a[k];
                        double *gi = grad + ((long)i * d + k) * L;
                        RC_LANES(l, l0, l1) gi[l] -= f;
                    }
                } else {
                    const double *qi = q + (long)i * d * L;
                    const double *lm = lmass ? lmass + (long)i * L
                                             : (const double *)0;
                    double mi = m.mass[i];
                    RC_LANES(l, l0, l1)
                    {
                        double s = 0.0;
                        int kk;
                        for (kk = 0; kk < d; ++kk)
                            s += p->a[kk] * qi[kk * L + l];
                        e[(long)i * L + l] -= (lm ? lm[l] : mi) * s;
                    }
                }
            }
            break;
        case RC_K_SPRING:
            /* both ends from one evaluation (the centre argument is
             * unused for a pair) */
            rc_k_lanes_radial_term(p, d, q, L, p->i, p->j, p->j != p->i,
                                   p->a, 0.5, grad, e, l0, l1);
            break;
        case RC_K_LJ:
        case RC_K_WCA:
            /* each pair once, both ends: particle m still receives its
             * pair terms in the scalar order, others 0..m-1 (while the
             * outer loop is below m) then m+1..n-1 (at m) */
            for (i = 0; i < n; ++i)
                for (j = i + 1; j < n; ++j)
                    rc_k_lanes_radial_term(p, d, q, L, i, j, 1, p->a, 0.5,
                                           grad, e, l0, l1);
            break;
        default: /* anchor, inverse square, sextic well: one-body radial */
            for (i = 0; i < n; ++i)
                if (rc_k_one_body_on(p, i))
                    rc_k_lanes_radial_term(p, d, q, L, i, -1, 0,
                                           rc_k_centre(p), 1.0, grad, e, l0,
                                           l1);
            break;
        }
    }
}

/* rc_k_lanes_terms_m with the model's masses (lmass NULL) for all lanes:
 * the GPU's lane kernels call this. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_terms(const rc_k_model m, const int d, const double *q, long L,
                 double *grad, double *e, long l0, long l1)
{
    rc_k_lanes_terms_m(m, (const double *)0, d, q, L, grad, e, l0, l1);
}

/* Kinetic energy, momentum, angular momentum (rc_k_kinetic_momenta) and
 * potential energy (rc_k_potential_energy) per lane: kin, pot [L] and
 * mom, ang [3*L] (component k of lane l at k*L + l).  e: n*L scratch.
 * lmass, linv: each lane's masses and inverses ([n*L], particle i of
 * lane l at i*L + l), or NULL for the model's. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_energies(const rc_k_model m, const double *lmass,
                    const double *linv, const int d, const double *q,
                    const double *p, long L, double *e, double *kin,
                    double *pot, double *mom, double *ang, long l0, long l1)
{
    int n = m.n, ii, kk;
    rc_k_lanes_terms_m(m, lmass, d, q, L, (double *)0, e, l0, l1);
    /* the sums advance particle by particle (and component by component)
     * in the scalar order, one [L] accumulator per sum */
    RC_LANES(l, l0, l1)
    {
        kin[l] = 0.0;
        pot[l] = 0.0;
    }
    for (kk = 0; kk < 3; ++kk)
        RC_LANES(l, l0, l1)
        {
            mom[kk * L + l] = 0.0;
            ang[kk * L + l] = 0.0;
        }
    for (ii = 0; ii < n; ++ii) {
        const double im = m.inv_mass[ii];
        const double *li = linv ? linv + (long)ii * L : (const double *)0;
        for (kk = 0; kk < d; ++kk) {
            const double *pk = p + ((long)ii * d + kk) * L;
            if (li) {
                RC_LANES(l, l0, l1)
                {
                    double vel = pk[l] * li[l];
                    kin[l] += 0.5 * pk[l] * vel;
                }
            } else {
                RC_LANES(l, l0, l1)
                {
                    double vel = pk[l] * im;
                    kin[l] += 0.5 * pk[l] * vel;
                }
            }
        }
    }
    for (ii = 0; ii < n; ++ii) {
        const double *qi = q + (long)ii * d * L;
        const double *pi = p + (long)ii * d * L;
        for (kk = 0; kk < d; ++kk)
            RC_LANES(l, l0, l1) mom[kk * L + l] += pi[kk * L + l];
        if (d == 2) {
            RC_LANES(l, l0, l1)
            ang[2 * L + l] += qi[l] * pi[L + l] - qi[L + l] * pi[l];
        } else if (d == 3) {
            RC_LANES(l, l0, l1)
            {
                ang[l] += qi[L + l] * pi[2 * L + l] - qi[2 * L + l] * pi[L + l];
                ang[L + l] += qi[2 * L + l] * pi[l] - qi[l] * pi[2 * L + l];
                ang[2 * L + l] += qi[l] * pi[L + l] - qi[L + l] * pi[l];
            }
        }
    }
    for (ii = 0; ii < n; ++ii)
        RC_LANES(l, l0, l1) pot[l] += e[(long)ii * L + l];
}

/* ------------------------------------------------------------------ */
/* Constraints in lanes.                                                */

/* Term c at every lane of q: its value into val[l] and, when ub is not
 * NULL, its first gradient block u into ub[k*L + l] (k < d; a pair's
 * second block is -u) — rc_k_constraint_eval's forms; with x (not NULL)
 * also its value at x into xval[l], in the same lane loop (g(q) and g(x)
 * of the screen and of the single reflection's checks: one pass over the
 * lanes, not two; ub is that at q).  The type switch,
 * the particle rows, the radii and the parameters are taken outside the
 * lane loop, so the loop is straight-line and vectorises. */
#define RC_LANES_CON_LOOP(EXPR, EXPRX)                                        \
    if (ub && xval) {                                                         \
        RC_LANES(l, l0, l1)                                                   \
        {                                                                     \
            double u[3];                                                      \
            int kk;                                                           \
            xval[l] = EXPRX;                                                  \
            val[l] = EXPR;                                                    \
            for (kk = 0; kk < d; ++kk)                                        \
                ub[kk * L + l] = u[kk];                                       \
        }                                                                     \
    } else if (ub) {                                                          \
        RC_LANES(l, l0, l1)                                                   \
        {                                                                     \
            double u[3];                                                      \
            int kk;                                                           \
            val[l] = EXPR;                                                    \
            for (kk = 0; kk < d; ++kk)                                        \
                ub[kk * L + l] = u[kk];                                       \
        }                                                                     \
    } else if (xval) {                                                        \
        RC_LANES(l, l0, l1)                                                   \
        {                                                                     \
            double u[3];                                                      \
            val[l] = EXPR;                                                    \
            xval[l] = EXPRX;                                                  \
        }                                                                     \
    } else {                                                                  \
        RC_LANES(l, l0, l1)                                                   \
        {                                                                     \
            double u[3];                                                      \
            val[l] = EXPR;                                                    \
        }                                                                     \
    }

RC_HD static RC_LANES_INLINE void
rc_k_lanes_con_eval2(const rc_k_constraint *c, const int d, const double *q,
                     const double *x, const double *r, long L, double *val,
                     double *ub, double *xval, long l0, long l1)
{
    const int type = c->type;
    const int two = type == RC_K_NON_OVERLAP || type == RC_K_ROD;
    const long oi = (long)c->i * d * L;
    const long oj = (long)(two ? c->j : c->i) * d * L;
    const double *qi = q + oi, *qj = q + oj;
    const double *xi = (x ? x : q) + oi, *xj = (x ? x : q) + oj;
    const double ri = r[c->i], rj = r[two ? c->j : c->i];
    double a[4];
    int t;
    for (t = 0; t < 4; ++t)
        a[t] = c->a[t];
    if (two) {
        RC_LANES_CON_LOOP(
            rc_k_con_pair(type, d, qi + l, qj + l, L, ri, rj, a[3], u),
            rc_k_con_pair(type, d, xi + l, xj + l, L, ri, rj, a[3], u))
    } else if (type == RC_K_WALL || type == RC_K_PLANE) {
        RC_LANES_CON_LOOP(rc_k_con_plane(type, d, a, qi + l, L, ri, u),
                          rc_k_con_plane(type, d, a, xi + l, L, ri, u))
    } else {
        RC_LANES_CON_LOOP(rc_k_con_radial(type, d, a, qi + l, L, ri, u),
                          rc_k_con_radial(type, d, a, xi + l, L, ri, u))
    }
}

RC_HD static RC_LANES_INLINE void
rc_k_lanes_con_eval(const rc_k_constraint *c, const int d, const double *q,
                    const double *r, long L, double *val, double *ub,
                    long l0, long l1)
{
    rc_k_lanes_con_eval2(c, d, q, (const double *)0, r, L, val, ub,
                         (double *)0, l0, l1);
}
#undef RC_LANES_CON_LOOP

/* ------------------------------------------------------------------ */
/* The stages of the step.                                              */

/* Per-block work arrays (caller-owned; N*L doubles unless noted).  The
 * stage bodies take the lane count L (the stride between coordinates)
 * as an argument: the CPU passes a compile-time constant, so every lane
 * loop has a fixed trip count (no remainder loop, no run-time checks). */
typedef struct rc_k_lanes {
    long L;
    double *q, *p, *g;    /* state and grad V(q) */
    double *x, *y, *g1;   /* the step's end point, momentum, grad V(x) */
    double *pr;           /* momentum after the reflection (p^+) */
    double *col;          /* the single term's dense column */
    double *wcol;         /* [N*L] scratch (rc_k_lanes_held's u) */
    /* [N] 1 where some inequality term acts on coordinate c, 0 where
     * none does (its column entry is +0.0 in every lane, and
     * rc_k_lanes_single leaves it out), or NULL: every coordinate */
    const unsigned char *touch;
    double *v0, *v1;      /* [L] scratch values */
    double *sp, *aa, *z, *s2; /* [L] the single reflection's sums */
    double *u;            /* [3L] a term's gradient block, lane-major */
    double *eps_g, *eps_v;/* [L] the members' tolerances */
    double *aval;         /* [L] value at q of the single A term */
    int *nA, *aterm;      /* [L] terms in A, the last of them */
    int *kind;            /* [L] RC_LANE_* */
    int *refl;            /* [L] reflection passes of the step (0 or 1) */
    /* equality constraints (rc_k_lanes_eq_step; NULL without them): ne
     * = neq multipliers per lane, m x m solves in lanes, row-major with
     * entry (r, c) of lane l at (r*ne + c)*L + l */
    double *ecol;         /* [ne*N*L] the equality columns (at q, then x) */
    double *erow;         /* [N*L] one column at the Newton iterate */
    double *ex0, *eimp;   /* [N*L] the drift x0 and the impulse C mu */
    double *ejac;         /* [ne*ne*L] the Newton / projection matrix */
    double *erhs, *emu;   /* [ne*L] right-hand side, multipliers */
    double *edmax, *exmax, *eprev, *ebest; /* [L] */
    int *eact, *ebad, *epiv; /* [L] iterating, failed, pivot row */
    /* lanes whose A does not approach (rc_k_lanes_held): the held
     * solve's x, C mu, y, grad V(x) ([N*L] each); [L] flags and masks;
     * the factors' pivot rows [ne*L]; the terms of one solve [ne +
     * RC_K_LANES_HELD_MAX] */
    double *hx, *himp, *hy, *hg1;
    int *hcand, *amask, *smask, *hok, *hfine, *hpiv, *hterms;
    /* each lane's masses (the equality path always; members with their
     * own masses, rc_member_params_): [n*L] mass and inverse of particle
     * i at i*L + l, [N*L] per coordinate */
    double *lmass, *linv, *lmass_c, *linv_c;
} rc_k_lanes;

/* x = q + h M^-1 (p - h/2 grad V(q)): the predictor and the free position
 * update (rc_k_gvi_predict, rc_k_gvi_newton_verlet with no columns), one
 * coordinate of one lane in rc_k_lanes_x (hm = h/m).
 * linv_c: each lane's inverse masses per coordinate ([N*L]), or NULL for
 * the model's. */
RC_HD static RC_LANES_INLINE double rc_k_lanes_x(double q, double hm,
                                                 double p, double h,
                                                 double g)
{
    return q + hm * (p - 0.5 * h * g);
}

RC_HD static RC_LANES_INLINE void
rc_k_lanes_drift(const rc_k_gvi *g, const double *linv_c, const double *q,
                 const double *p, const double *gq, long L, double *x,
                 long l0, long l1)
{
    int c;
    double h = g->h;
    for (c = 0; c < g->N; ++c) {
        double hm = h * g->inv_mass_c[c];
        const double *qc = q + (long)c * L, *pc = p + (long)c * L;
        const double *gc = gq + (long)c * L;
        double *xc = x + (long)c * L;
        if (linv_c) {
            const double *ic = linv_c + (long)c * L;
            RC_LANES(l, l0, l1)
            xc[l] = rc_k_lanes_x(qc[l], h * ic[l], pc[l], h, gc[l]);
        } else {
            RC_LANES(l, l0, l1)
            xc[l] = rc_k_lanes_x(qc[l], hm, pc[l], h, gc[l]);
        }
    }
}

/* Steps 1-2 of rc_k_gvi_step: the predictor x and the extended set A
 * (g(q) <= eps_g or g(x) <= 0), counted per lane; the kind of each lane
 * (slow where `live` is 0: a finished member is left alone).  Returns
 * whether some lane of [l0, l1) is SINGLE. */
RC_HD static RC_LANES_INLINE int
rc_k_lanes_screen(const rc_k_gvi *g, const int d, const long L, rc_k_lanes *s,
                  const unsigned char *live, long l0, long l1)
{
    /* the arrays in locals: a store through one of them cannot change
     * the struct's pointers, so the lane loops keep them in registers */
    int *const nA = s->nA, *const aterm = s->aterm, *const kind = s->kind;
    int *const refl = s->refl;
    double *const aval = s->aval, *const v0 = s->v0, *const v1 = s->v1;
    const double *const eps_g = s->eps_g;
    int a, any = 0;
    rc_k_lanes_drift(g, (const double *)0, s->q, s->p, s->g, L, s->x, l0,
                     l1);
    /* the counts start at nA 0, aterm -1, aval 0.0: set by the first
     * term's pass (not stored, then read back) */
    if (g->nineq == 0)
        RC_LANES(l, l0, l1)
        {
            nA[l] = 0;
            aterm[l] = -1;
            aval[l] = 0.0;
        }
    for (a = 0; a < g->nineq; ++a) {
        const int k = g->ineq[a], first = a == 0;
        rc_k_lanes_con_eval2(&g->con[k], d, s->q, s->x, g->m.radius, L, v0,
                             (double *)0, v1, l0, l1);
        RC_LANES(l, l0, l1)
        {
            int in = (v0[l] <= eps_g[l]) | (v1[l] <= 0.0);
            nA[l] = (first ? 0 : nA[l]) + in;
            aterm[l] = in ? k : (first ? -1 : aterm[l]);
            aval[l] = in ? v0[l] : (first ? 0.0 : aval[l]);
        }
    }
    RC_LANES(l, l0, l1)
    {
        int kl = nA[l] == 0 ? RC_LANE_FREE : RC_LANE_SINGLE;
        kl = live[l] & (nA[l] <= 1) ? kl : RC_LANE_SLOW;
        kind[l] = kl;
        refl[l] = 0;
        any |= kl == RC_LANE_SINGLE;
    }
    return any;
}

/* Steps 3-5 for the lanes with one term in A (rc_k_gvi_reflect with one
 * column, rc_k_nnls_gram's 1x1 solve, the re-predicted drift and the
 * checks that would make the scalar body hold a term or reflect again):
 * pr = p^+ and x = the position update for SINGLE lanes (pr = p
 * elsewhere); a lane the closed form does not cover becomes SLOW.
 * Every sum over coordinates is a per-lane accumulator ([L] arrays)
 * advanced coordinate by coordinate in the scalar body's order, so the
 * loops over the model stay outside the lane loops.
 *
 * A coordinate that no inequality term acts on (s->touch[c] == 0) has
 * +0.0 in every lane's column, and it is left out of the sums: its term
 * w p (w = +0.0, p finite in a live lane) is a zero, and adding a zero
 * to a sum that starts at 0.0 + its first term (never -0.0) leaves its
 * bits; a sum's first term is taken at the first coordinate summed,
 * 0.0 + it, the bits of the dense sum after its zeros.  Its p^+ is p +
 * z (+0.0) = p + 0.0 where the lane reflects (z finite and positive in
 * a lane that stays SINGLE), written as that.  A lane whose values are
 * not finite becomes SLOW, and the scalar body redoes its step. */
RC_HD static RC_LANES_INLINE void rc_k_lanes_single(const rc_k_gvi *g,
                                                    const int d, const long L,
                                                    rc_k_lanes *s, long l0,
                                                    long l1)
{
    const int N = g->N, reflect_ok = rc_k_lanes_reflect_ok(g);
    const unsigned char *const touch = s->touch;
    double *const col = s->col, *const pr = s->pr;
    double *const sp = s->sp, *const aa = s->aa, *const z = s->z;
    double *const s2 = s->s2, *const ub = s->u;
    const double *const p = s->p;
    int *const kind = s->kind, *const refl = s->refl;
    const int *const aterm = s->aterm;
    const double *const eps_g = s->eps_g, *const eps_v = s->eps_v;
    const double *const aval = s->aval;
    double *const v0 = s->v0, *const v1 = s->v1;
    int a, c, kk, first;
    /* the dense column of each SINGLE lane's term: 0.0 + gradient block
     * entries, +0.0 elsewhere (rc_k_gvi_column) */
    for (c = 0; c < N; ++c)
        if (!touch || touch[c])
            RC_LANES(l, l0, l1) col[(long)c * L + l] = 0.0;
    for (a = 0; a < g->nineq; ++a) {
        const int k = g->ineq[a];
        const rc_k_constraint *cn = &g->con[k];
        const int two = cn->type == RC_K_NON_OVERLAP || cn->type == RC_K_ROD;
        rc_k_lanes_con_eval(cn, d, s->q, g->m.radius, L, v0, ub, l0, l1);
        for (kk = 0; kk < d; ++kk) {
            double *ci = col + ((long)cn->i * d + kk) * L;
            double *cj = col + ((long)(two ? cn->j : cn->i) * d + kk) * L;
            const double *uk = ub + (long)kk * L;
            RC_LANES(l, l0, l1)
            {
                int mine = (kind[l] == RC_LANE_SINGLE) & (aterm[l] == k);
                ci[l] = mine ? 0.0 + uk[l] : ci[l];
            }
            if (two)
                RC_LANES(l, l0, l1)
                {
                    int mine = (kind[l] == RC_LANE_SINGLE) & (aterm[l] == k);
                    cj[l] = mine ? 0.0 + -uk[l] : cj[l];
                }
        }
    }
    /* sp = (M^-1 col).p and aa = (M^-1 col).col, both summed over c in
     * order, in one pass (each sum is its own per-lane accumulator, so
     * the bits are those of two passes) */
    for (c = 0, first = 1; c < N; ++c) {
        /* the sums start at 0.0: the first coordinate's pass stores 0.0 +
         * its term (the same bits, and no zeroed array read back) */
        const double im = g->inv_mass_c[c];
        const double *cc = col + (long)c * L, *pc = p + (long)c * L;
        if (touch && !touch[c])
            continue;
        RC_LANES(l, l0, l1)
        {
            double w = im * cc[l];
            sp[l] = (first ? 0.0 : sp[l]) + w * pc[l];
            aa[l] = (first ? 0.0 : aa[l]) + w * cc[l];
        }
        first = 0;
    }
    /* rc_k_nnls_gram with m = 1: finite inputs, the pivot test, one
     * entering column with z = -b / a > 0 (rc_k_nnls_solve_'s one-column
     * form) */
    RC_LANES(l, l0, l1)
    {
        double b = 2.0 * sp[l], al = aa[l], zl;
        int single = kind[l] == RC_LANE_SINGLE, approach, ok;
        approach = single & (sp[l] < -eps_v[l]);
        zl = -b / (al > 0.0 ? al : 1.0);
        /* & and |, not && and ||: every operand is a plain comparison,
         * and without short-circuit branches the loop vectorises */
        ok = rc_isfinite(b) & rc_isfinite(al) & (al > 0.0) &
             (al > RC_K_NNLS_PIVOT_REL * al) & rc_isfinite(zl) & (zl > 0.0) &
             rc_isfinite(-(b + al * zl)); /* the dual of its second pass */
        z[l] = approach ? zl : 0.0;
        refl[l] = approach;
        kind[l] = single & ((reflect_ok == 0) | (approach & (ok == 0))) ? RC_LANE_SLOW
                                                            : kind[l];
    }
    /* in one pass per coordinate: p^+ (pr; p where nothing reflected),
     * its speed along the column (s2: a second pass would follow if p^+
     * still approaches) and the position update of p^+ (x; rc_k_lanes_x
     * as rc_k_lanes_drift, so equal to the predictor where pr = p) */
    for (c = 0, first = 1; c < N; ++c) {
        const double im = g->inv_mass_c[c];
        const double hm = g->h * im, h = g->h;
        const double *cc = col + (long)c * L, *pc = p + (long)c * L;
        const double *qc = s->q + (long)c * L;
        const double *gc = s->g + (long)c * L;
        double *rc = pr + (long)c * L, *xc = s->x + (long)c * L;
        if (touch && !touch[c]) {
            RC_LANES(l, l0, l1)
            {
                double r = refl[l] ? pc[l] + 0.0 : pc[l];
                rc[l] = r;
                xc[l] = rc_k_lanes_x(qc[l], hm, r, h, gc[l]);
            }
            continue;
        }
        RC_LANES(l, l0, l1)
        {
            double pn = pc[l] + z[l] * cc[l], r = refl[l] ? pn : pc[l];
            rc[l] = r;
            s2[l] = (first ? 0.0 : s2[l]) + im * cc[l] * r; /* as sp */
            xc[l] = rc_k_lanes_x(qc[l], hm, r, h, gc[l]);
        }
        first = 0;
    }
    RC_LANES(l, l0, l1)
    {
        kind[l] = (kind[l] == RC_LANE_SINGLE) & refl[l] & (s2[l] < -eps_v[l])
                      ? RC_LANE_SLOW
                      : kind[l];
    }
    /* R2: a term outside A that the new drift reaches joins A (slow); R3
     * and step 4: the A term held (resting, or still violated) is slow */
    for (a = 0; a < g->nineq; ++a) {
        const int k = g->ineq[a];
        const rc_k_constraint *cn = &g->con[k];
        const int two = cn->type == RC_K_NON_OVERLAP || cn->type == RC_K_ROD;
        const double imi = g->m.inv_mass[cn->i];
        const double imj = g->m.inv_mass[two ? cn->j : cn->i];
        const double *pi = pr + (long)cn->i * d * L;
        const double *pj = pr + (long)(two ? cn->j : cn->i) * d * L;
        rc_k_lanes_con_eval2(cn, d, s->q, s->x, g->m.radius, L, v0, ub, v1,
                             l0, l1);
        /* the term's speed at p^+, grad g . M^-1 p^+ (particle i's block,
         * then j's), and the checks, in one lane loop */
#define RC_LANES_HELD(SPJ)                                                    \
    RC_LANES(l, l0, l1)                                                       \
    {                                                                         \
        double spl = 0.0;                                                     \
        int q2, mine = aterm[l] == k, held;                                   \
        for (q2 = 0; q2 < d; ++q2)                                            \
            spl += ub[q2 * L + l] * pi[q2 * L + l] * imi;                     \
        SPJ;                                                                  \
        held = ((aval[l] <= eps_g[l]) & (rc_fabs(spl) <= eps_v[l])) |         \
               (v1[l] < 0.0);                                                 \
        kind[l] = (kind[l] == RC_LANE_SINGLE) &                               \
                          ((mine & held) |                                    \
                           ((mine == 0) & refl[l] & (v1[l] <= 0.0)))          \
                      ? RC_LANE_SLOW                                          \
                      : kind[l];                                              \
    }
        if (two) {
            RC_LANES_HELD(for (q2 = 0; q2 < d; ++q2) spl +=
                          -ub[q2 * L + l] * pj[q2 * L + l] * imj)
        } else {
            RC_LANES_HELD((void)0)
        }
#undef RC_LANES_HELD
    }
}

/* Step 6 for FREE and SINGLE lanes (rc_k_gvi_momentum with no columns):
 * g1 = grad V(x), y = p^+ - h/2 grad V(q) + 0 - h/2 grad V(x); a lane
 * whose x or y is not finite becomes SLOW (the scalar body fails it). */
RC_HD static RC_LANES_INLINE void rc_k_lanes_kick(const rc_k_gvi *g,
                                                  const int d, const long L,
                                                  rc_k_lanes *s, long l0,
                                                  long l1)
{
    int *const kind = s->kind;
    int c;
    double h = g->h;
    rc_k_lanes_terms(g->m, d, s->x, L, s->g1, (double *)0, l0, l1);
    for (c = 0; c < g->N; ++c) {
        const double *pc = s->pr + (long)c * L, *gc = s->g + (long)c * L;
        const double *g1c = s->g1 + (long)c * L, *xc = s->x + (long)c * L;
        double *yc = s->y + (long)c * L;
        RC_LANES(l, l0, l1)
        {
            double y = pc[l] - 0.5 * h * gc[l] + 0.0 - 0.5 * h * g1c[l];
            yc[l] = y;
            kind[l] = rc_isfinite(y) & rc_isfinite(xc[l]) ? kind[l]
                                                          : RC_LANE_SLOW;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Equality constraints in lanes: SHAKE and RATTLE, m x m per lane.    */

/* col (N*L) = the dense gradient of term k at every lane of q, val[l]
 * its value (rc_k_gvi_column: +0.0 everywhere, then 0.0 + each
 * gradient block entry; a pair's second block 0.0 + -u).
 * rc_k_lanes_blocks writes the blocks only, for a column that is read
 * at its term's particles only (the entries elsewhere are left). */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_blocks(const rc_k_gvi *g, const int d, const long L, int k,
                  const double *q, double *col, double *val, double *ub,
                  long l0, long l1)
{
    const rc_k_constraint *cn = &g->con[k];
    const int two = cn->type == RC_K_NON_OVERLAP || cn->type == RC_K_ROD;
    int kk;
    rc_k_lanes_con_eval(cn, d, q, g->m.radius, L, val, ub, l0, l1);
    for (kk = 0; kk < d; ++kk) {
        double *ci = col + ((long)cn->i * d + kk) * L;
        const double *uk = ub + (long)kk * L;
        RC_LANES(l, l0, l1) ci[l] = 0.0 + uk[l];
        if (two) {
            double *cj = col + ((long)cn->j * d + kk) * L;
            RC_LANES(l, l0, l1) cj[l] = 0.0 + -uk[l];
        }
    }
}

RC_HD static RC_LANES_INLINE void
rc_k_lanes_column(const rc_k_gvi *g, const int d, const long L, int k,
                  const double *q, double *col, double *val, double *ub,
                  long l0, long l1)
{
    int c;
    for (c = 0; c < g->N; ++c)
        RC_LANES(l, l0, l1) col[(long)c * L + l] = 0.0;
    rc_k_lanes_blocks(g, d, L, k, q, col, val, ub, l0, l1);
}

/* rc_k_gvi_cdot's sum in lanes: out = the sum over the nc coordinates cs
 * that two columns share (rc_k_gvi_shared, increasing) of
 * A[c] * M^-1[c] * B[c], from +0.0 as the scalar sum (A, B, linv_c
 * [N*L] coordinate-major). */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_cdot(const long L, const int *cs, const int nc, const double *A,
                const double *linv_c, const double *B, double *out, long l0,
                long l1)
{
    int t;
    RC_LANES(l, l0, l1) out[l] = 0.0;
    for (t = 0; t < nc; ++t) {
        const double *ac = A + (long)cs[t] * L;
        const double *ic = linv_c + (long)cs[t] * L;
        const double *bc = B + (long)cs[t] * L;
        RC_LANES(l, l0, l1) out[l] += ac[l] * ic[l] * bc[l];
    }
}

/* The back substitution of rc_k_lu_solve / rc_k_lu_resolve in lanes:
 * b ([m*L]) <- U^-1 b, U the upper triangle of LU (as in rc_k_lanes). */
RC_HD static RC_LANES_INLINE void rc_k_lanes_lu_back(const int m,
                                                     const long L,
                                                     const double *LU,
                                                     double *b, long l0,
                                                     long l1)
{
    int k, c;
    for (k = m - 1; k >= 0; --k) {
        double *bk = b + (long)k * L;
        const double *ukk = LU + ((long)k * m + k) * L;
        for (c = k + 1; c < m; ++c) {
            const double *ukc = LU + ((long)k * m + c) * L;
            const double *bc = b + (long)c * L;
            RC_LANES(l, l0, l1) bk[l] -= ukc[l] * bc[l];
        }
        RC_LANES(l, l0, l1) bk[l] = bk[l] / ukk[l];
    }
}

/* rc_k_lu_solve of every lane's m x m system (A as in rc_k_lanes, b
 * [m*L]) in its order: the pivot search (the first largest |A(r,k)|),
 * the row exchange (each lane moves its own pivot row: m moves per
 * column step, not the m^2 selects over every candidate row), the
 * elimination, the back substitution.  bad[l] |= 1 where the scalar
 * solve would report a singular matrix; such a lane's numbers are then
 * meaningless (its step goes to the scalar body, which fails it).  piv
 * ([m*L], or NULL): each lane's pivot row of each column step. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_lu_solve(const int m, const long L, double *A, double *b,
                    double *bestv, int *best, int *bad, int *piv, long l0,
                    long l1)
{
    int k, r, c, swap;
    for (k = 0; k < m; ++k) {
        const double *akk = A + ((long)k * m + k) * L;
        RC_LANES(l, l0, l1)
        {
            bestv[l] = rc_fabs(akk[l]);
            best[l] = k;
        }
        for (r = k + 1; r < m; ++r) {
            const double *ark = A + ((long)r * m + k) * L;
            RC_LANES(l, l0, l1)
            {
                double v = rc_fabs(ark[l]);
                int up = v > bestv[l];
                bestv[l] = up ? v : bestv[l];
                best[l] = up ? r : best[l];
            }
        }
        RC_LANES(l, l0, l1)
        bad[l] |= (!(bestv[l] > 0.0)) | (rc_isfinite(bestv[l]) == 0);
        if (piv) /* the pivot rows, for rc_k_lanes_lu_resolve */
            RC_LANES(l, l0, l1) piv[(long)k * L + l] = best[l];
        /* the exchange of rows k and best[l], each lane at its own
         * pivot row (an exact move; with best[l] == k both addresses
         * are one and it writes the value back, so when no lane moves a
         * row it is skipped: the gathers and scatters cost more than
         * the rest of a column step) */
        swap = 0;
        RC_LANES(l, l0, l1) swap |= best[l] != k;
        for (c = 0; swap && c < m; ++c) {
            double *ak = A + ((long)k * m + c) * L;
            double *a0 = A + (long)c * L;
            RC_LANES(l, l0, l1)
            {
                double *ar = a0 + (long)best[l] * m * L;
                double t = ak[l], u = ar[l];
                ar[l] = t;
                ak[l] = u;
            }
        }
        if (swap) {
            double *bk = b + (long)k * L;
            RC_LANES(l, l0, l1)
            {
                double *br = b + (long)best[l] * L;
                double t = bk[l], u = br[l];
                br[l] = t;
                bk[l] = u;
            }
        }
        for (r = k + 1; r < m; ++r) {
            double *ark = A + ((long)r * m + k) * L;
            double *br = b + (long)r * L;
            const double *bk = b + (long)k * L;
            RC_LANES(l, l0, l1) ark[l] = ark[l] / akk[l];
            for (c = k + 1; c < m; ++c) {
                double *arc = A + ((long)r * m + c) * L;
                const double *akc = A + ((long)k * m + c) * L;
                RC_LANES(l, l0, l1) arc[l] -= ark[l] * akc[l];
            }
            RC_LANES(l, l0, l1) br[l] -= ark[l] * bk[l];
        }
    }
    rc_k_lanes_lu_back(m, L, A, b, l0, l1);
}

/* rc_k_lu_resolve in lanes: b ([m*L]) <- A^-1 b from the factors LU of
 * rc_k_lanes_lu_solve and its pivot rows piv, in the scalar order (each
 * lane's exchange a move, as there). */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_lu_resolve(const int m, const long L, const double *LU,
                      const int *piv, double *b, long l0, long l1)
{
    int k, c, swap;
    for (k = 0; k < m; ++k) {
        double *bk = b + (long)k * L;
        const int *pk = piv + (long)k * L;
        swap = 0; /* as in rc_k_lanes_lu_solve: no move, no exchange */
        RC_LANES(l, l0, l1) swap |= pk[l] != k;
        if (swap)
            RC_LANES(l, l0, l1)
            {
                double *br = b + (long)pk[l] * L;
                double t = bk[l], v = br[l];
                br[l] = t;
                bk[l] = v;
            }
        for (c = 0; c < k; ++c) {
            const double *lkc = LU + ((long)k * m + c) * L;
            const double *bc = b + (long)c * L;
            RC_LANES(l, l0, l1) bk[l] -= lkc[l] * bc[l];
        }
    }
    rc_k_lanes_lu_back(m, L, LU, b, l0, l1);
}

/* The start of a Newton solve in lanes: the live lanes iterate, none
 * has failed, and no update came before. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_newton_start(const unsigned char *live, int *act, int *bad,
                        double *prev, long l0, long l1)
{
    RC_LANES(l, l0, l1)
    {
        act[l] = live[l];
        bad[l] = 0;
        prev[l] = INFINITY;
    }
}

/* The multiplier part of a SHAKE Newton update: mu += dmu ([ne*L], the
 * solve's rows for mu) on the lanes still iterating and not failed (a
 * lane that is done keeps its numbers: every update is a select on act);
 * then the update sizes of the coming position update start over (dmax,
 * xmax 0; v0 1: finite so far).  The position update that follows reads
 * none of mu. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_newton_mu(const int ne, const long L, const double *dmu,
                     double *mu, const int *act, const int *bad,
                     double *dmax, double *xmax, double *v0, long l0,
                     long l1)
{
    int a;
    for (a = 0; a < ne; ++a) {
        double *mua = mu + (long)a * L;
        const double *da = dmu + (long)a * L;
        RC_LANES(l, l0, l1)
        {
            int on = act[l] & (bad[l] == 0);
            mua[l] = on ? mua[l] + da[l] : mua[l];
        }
    }
    RC_LANES(l, l0, l1)
    {
        dmax[l] = 0.0;
        xmax[l] = 0.0;
        v0[l] = 1.0;
    }
}

/* After an update of size dmax (iterate size xmax), lane by lane: the
 * scalar Newton's convergence rule (rc_gvi.h: within tol of the scale,
 * or stalled within 1e3 tol, the same comparisons); a lane whose update
 * was not finite (v0 == 0) fails (bad: the scalar body gives up on it);
 * prev takes dmax.  Returns whether a lane still iterates. */
RC_HD static RC_LANES_INLINE int
rc_k_lanes_newton_check(double tol, const double *dmax, const double *xmax,
                        const double *v0, double *prev, int *act, int *bad,
                        long l0, long l1)
{
    int any = 0;
    RC_LANES(l, l0, l1)
    {
        double scale = xmax[l] > 1.0 ? xmax[l] : 1.0;
        int on = act[l] & (bad[l] == 0), conv;
        conv = (dmax[l] <= tol * scale) |
               ((dmax[l] >= prev[l]) & (dmax[l] <= 1e3 * tol * scale));
        bad[l] |= on & (v0[l] == 0.0);
        on = on & (v0[l] != 0.0);
        act[l] = on & (conv == 0);
        prev[l] = dmax[l];
        any |= act[l];
    }
    return any;
}

/* nA[l] += the inequality terms in the extended set at (q, x): g(q) <=
 * eps_g or g(x) <= 0 (step 2 of rc_k_gvi_step); amask[l]: which (bit a
 * for g->ineq[a], a < 31). */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_eq_screen(const rc_k_gvi *g, const int d, const long L,
                     rc_k_lanes *s, const double *x, long l0, long l1)
{
    double *const v0 = s->v0, *const v1 = s->v1;
    const double *const eps_g = s->eps_g;
    int *const nA = s->nA, *const amask = s->amask;
    int a;
    RC_LANES(l, l0, l1) amask[l] = 0;
    for (a = 0; a < g->nineq; ++a) {
        const rc_k_constraint *cn = &g->con[g->ineq[a]];
        const int bit = a < 31 ? a : 31;
        rc_k_lanes_con_eval(cn, d, s->q, g->m.radius, L, v0, (double *)0, l0,
                            l1);
        rc_k_lanes_con_eval(cn, d, x, g->m.radius, L, v1, (double *)0, l0,
                            l1);
        RC_LANES(l, l0, l1)
        {
            int in = (v0[l] <= eps_g[l]) | (v1[l] <= 0.0);
            nA[l] += in;
            amask[l] |= bit < 31 ? in << bit : 0;
        }
    }
}

/* The columns at q of the m terms T[0..m) into ecol (column a at a*N*L),
 * the drift x0, and the Newton solve of the Verlet base's position
 * update on them (rc_k_gvi_newton_verlet; T in the scalar body's order:
 * the held inequalities, then the equalities): x = x0 + h M^-1 C mu,
 * Newton on mu, the lanes iterating together, each stopping at its own
 * convergence.  It runs on the lanes where live[l] and, with grp (not
 * NULL), grp[l] == key; x, imp = C mu and mu (emu, [m*L]) of the other
 * lanes in [l0, l1) are meaningless.  Then act[l] | bad[l] is 1 where a
 * lane did not converge in newton_max_iter iterations, turned
 * non-finite or met a singular matrix. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_shake(const rc_k_gvi *g, const int d, const long L, rc_k_lanes *s,
                 const int *T, const int m, const unsigned char *live,
                 const int *grp, const int key, double *x, double *imp,
                 long l0, long l1)
{
    const int N = g->N;
    const double h = g->h, tol = g->newton_tol;
    double *const x0 = s->ex0, *const row = s->erow, *const jac = s->ejac;
    double *const rhs = s->erhs, *const mu = s->emu, *const ecol = s->ecol;
    double *const dmax = s->edmax, *const xmax = s->exmax;
    double *const prev = s->eprev, *const v0 = s->v0, *const v1 = s->v1;
    const double *const linv_c = s->linv_c;
    int *const act = s->eact, *const bad = s->ebad;
    int a, b, c, it, any;

    /* the columns are read at their terms' particles only (the
     * Jacobian's shared coordinates, the impulse's blocks): their blocks
     * suffice */
    for (a = 0; a < m; ++a)
        rc_k_lanes_blocks(g, d, L, T[a], s->q, ecol + (long)a * N * L, v0,
                          s->u, l0, l1);
    rc_k_lanes_drift(g, linv_c, s->q, s->p, s->g, L, x0, l0, l1);
    for (c = 0; c < N; ++c) {
        const double *x0c = x0 + (long)c * L;
        double *xc = x + (long)c * L, *ic = imp + (long)c * L;
        RC_LANES(l, l0, l1)
        {
            xc[l] = x0c[l];
            ic[l] = 0.0;
        }
    }
    for (a = 0; a < m; ++a) {
        double *mua = mu + (long)a * L;
        RC_LANES(l, l0, l1) mua[l] = 0.0;
    }
    rc_k_lanes_newton_start(live, act, bad, prev, l0, l1);
    if (grp)
        RC_LANES(l, l0, l1) act[l] = act[l] & (grp[l] == key);
    for (it = 1, any = 1; any && it <= g->newton_max_iter; ++it) {
        for (a = 0; a < m; ++a) {
            double *ra = rhs + (long)a * L;
            rc_k_lanes_blocks(g, d, L, T[a], x, row, v1, s->u, l0, l1);
            RC_LANES(l, l0, l1) ra[l] = -v1[l];
            for (b = 0; b < m; ++b) {
                const double *cb = ecol + (long)b * N * L;
                double *jab = jac + ((long)a * m + b) * L;
                int cs[6];
                int nc = rc_k_gvi_shared(g, T[a], T[b], cs);
                if (nc == 0) { /* h * (an empty sum) */
                    const double z = h * 0.0;
                    RC_LANES(l, l0, l1) jab[l] = z;
                    continue;
                }
                rc_k_lanes_cdot(L, cs, nc, row, linv_c, cb, jab, l0, l1);
                RC_LANES(l, l0, l1) jab[l] = h * jab[l];
            }
        }
        rc_k_lanes_lu_solve(m, L, jac, rhs, s->ebest, s->epiv, bad,
                            (int *)0, l0, l1);
        rc_k_lanes_newton_mu(m, L, rhs, mu, act, bad, dmax, xmax, v0, l0,
                             l1);
        for (c = 0; c < N; ++c) {
            const double *icm = linv_c + (long)c * L;
            const double *x0c = x0 + (long)c * L;
            double *xc = x + (long)c * L, *ic = imp + (long)c * L;
            /* w->imp = C mu (rc_k_gvi_impulse: from 0.0, the columns
             * whose term touches this coordinate's particle, a in
             * order) */
            RC_LANES(l, l0, l1) v1[l] = 0.0;
            for (a = 0; a < m; ++a) {
                const double *cac = ecol + ((long)a * N + c) * L;
                int pa[2], np = rc_k_gvi_parts(g, T[a], pa);
                if (pa[0] != c / d && (np < 2 || pa[1] != c / d))
                    continue;
                const double *mua = mu + (long)a * L;
                RC_LANES(l, l0, l1) v1[l] += cac[l] * mua[l];
            }
            RC_LANES(l, l0, l1)
            {
                int on = act[l] & (bad[l] == 0);
                double xn = x0c[l] + h * icm[l] * v1[l];
                v0[l] = rc_isfinite(xn) ? v0[l] : 0.0;
                dmax[l] = rc_fmax(dmax[l], rc_fabs(xn - xc[l]));
                xmax[l] = rc_fmax(xmax[l], rc_fabs(xn));
                ic[l] = on ? v1[l] : ic[l];
                xc[l] = on ? xn : xc[l];
            }
        }
        any = rc_k_lanes_newton_check(tol, dmax, xmax, v0, prev, act, bad,
                                      l0, l1);
    }
}

/* The momentum update of the Verlet base at x on the m columns of T
 * (rc_k_gvi_momentum): g1 = grad V(x), y = p - h/2 grad V(q) + imp -
 * h/2 g1, then y += C(x) z with C(x)^T M^-1 C(x) z = -C(x)^T M^-1 y
 * (C(x) into ecol); bad[l] |= 1 where that matrix is singular. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_rattle(const rc_k_gvi *g, const int d, const long L,
                  rc_k_lanes *s, const int *T, const int m, const double *x,
                  const double *imp, double *y, double *g1, long l0, long l1)
{
    const int N = g->N;
    const double h = g->h;
    double *const jac = s->ejac, *const rhs = s->erhs, *const ecol = s->ecol;
    const double *const linv_c = s->linv_c;
    int a, b, c;
    rc_k_lanes_terms_m(g->m, s->lmass, d, x, L, g1, (double *)0, l0, l1);
    for (c = 0; c < N; ++c) {
        const double *pc = s->p + (long)c * L, *gc = s->g + (long)c * L;
        const double *g1c = g1 + (long)c * L;
        const double *ic = imp + (long)c * L;
        double *yc = y + (long)c * L;
        RC_LANES(l, l0, l1)
        yc[l] = pc[l] - 0.5 * h * gc[l] + ic[l] - 0.5 * h * g1c[l];
    }
    for (a = 0; a < m; ++a)
        rc_k_lanes_column(g, d, L, T[a], x, ecol + (long)a * N * L, s->v0,
                          s->u, l0, l1);
    for (a = 0; a < m; ++a) { /* rc_k_gvi_cdot's sums */
        const double *ca = ecol + (long)a * N * L;
        double *ra = rhs + (long)a * L;
        int cs[6], nc = rc_k_gvi_shared(g, T[a], T[a], cs);
        rc_k_lanes_cdot(L, cs, nc, ca, linv_c, y, ra, l0, l1);
        RC_LANES(l, l0, l1) ra[l] = -ra[l];
        for (b = 0; b < m; ++b) {
            const double *cb = ecol + (long)b * N * L;
            double *jab = jac + ((long)a * m + b) * L;
            nc = rc_k_gvi_shared(g, T[a], T[b], cs);
            rc_k_lanes_cdot(L, cs, nc, ca, linv_c, cb, jab, l0, l1);
        }
    }
    rc_k_lanes_lu_solve(m, L, jac, rhs, s->ebest, s->epiv, s->ebad,
                        (int *)0, l0, l1);
    for (a = 0; a < m; ++a) {
        const double *ra = rhs + (long)a * L;
        for (c = 0; c < N; ++c) {
            const double *cac = ecol + ((long)a * N + c) * L;
            double *yc = y + (long)c * L;
            RC_LANES(l, l0, l1) yc[l] += cac[l] * ra[l];
        }
    }
}

/* ok[l] &= x and y of lane l are finite in every coordinate. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_finite(const int N, const long L, const double *x,
                  const double *y, int *ok, long l0, long l1)
{
    int c;
    for (c = 0; c < N; ++c) {
        const double *xc = x + (long)c * L, *yc = y + (long)c * L;
        RC_LANES(l, l0, l1)
        ok[l] = ok[l] & rc_isfinite(yc[l]) & rc_isfinite(xc[l]);
    }
}

/* Can lanes whose extended set A is not empty be stepped in lanes when
 * nothing in A approaches (rc_k_lanes_held)?  The approach test needs
 * the plain metric W = M^-1 and the reflection that stops when nothing
 * approaches (not Moreau); A's terms are bits of an int. */
RC_HD static inline int rc_k_lanes_held_ok(const rc_k_gvi *g)
{
    return !g->modified && !g->moreau && g->nineq <= 30;
}

/* The lanes of rc_k_lanes_eq_step whose SHAKE predictor converged but
 * whose extended set A is not empty (hcand; amask: A's terms, bit a for
 * g->ineq[a]).  The scalar body then calls rc_k_gvi_reflect; where no
 * term of A approaches (its projected column's W-image . p >= -eps_v)
 * that returns without a pass, and the step is:
 *   - no term held (S empty: rc_k_gvi_step's step 5 takes the
 *     predictor): the step rc_k_lanes_eq_step computed (hfine: its
 *     RATTLE was regular and finite), FREE;
 *   - S not empty, at most RC_K_LANES_HELD_MAX terms: SHAKE on S's
 *     columns then the equalities' (rc_k_gvi_position's first solve),
 *     kept when no held multiplier is below -tau_lam (nothing released)
 *     and no term outside A is violated at x (R2 adds none), then
 *     RATTLE on the same columns; FREE when regular and finite.
 * Lanes are grouped by S (one solve per distinct S over the block: the
 * solve's sums depend on S's terms).  Anything else stays SLOW.  The
 * approach test repeats rc_k_gvi_reflect's arithmetic: F and the LU
 * factors of F^T M^-1 F at q, each column projected (rc_k_gvi_project:
 * the coefficients, rc_k_lu_resolve, the dense update) and multiplied
 * by M^-1, its dense product with p. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_held(const rc_k_gvi *g, const int d, const long L, rc_k_lanes *s,
                const unsigned char *live, long l0, long l1)
{
    const int N = g->N, ne = g->neq;
    double *const ecol = s->ecol, *const jac = s->ejac, *const rhs = s->erhs;
    double *const col = s->col, *const u = s->wcol, *const sp = s->sp;
    double *const v0 = s->v0, *const v1 = s->v1, *const tau = s->s2;
    double *const acc = s->aa;
    double *const hx = s->hx, *const himp = s->himp, *const hy = s->hy;
    double *const hg1 = s->hg1;
    const double *const linv_c = s->linv_c, *const linv = s->linv;
    const double *const eps_g = s->eps_g, *const eps_v = s->eps_v;
    int *const cand = s->hcand, *const amask = s->amask;
    int *const smask = s->smask, *const ok = s->hok, *const fine = s->hfine;
    int *const bad = s->ebad, *const act = s->eact, *const kind = s->kind;
    int *const nA = s->nA, *const T = s->hterms;
    int a, e, c, any = 0, anyA = 0;
    long j;

    RC_LANES(l, l0, l1)
    {
        int cl = cand[l] & (nA[l] > 0) & (kind[l] == RC_LANE_SLOW);
        cand[l] = cl;
        ok[l] = cl;
        smask[l] = 0;
        any |= cl;
        anyA |= cl ? amask[l] : 0;
    }
    if (!any)
        return;
    /* F and F^T M^-1 F at q, factored (rc_k_gvi_equalities_at) */
    for (e = 0; e < ne; ++e)
        rc_k_lanes_column(g, d, L, g->eq[e], s->q, ecol + (long)e * N * L,
                          v0, s->u, l0, l1);
    for (a = 0; a < ne; ++a) {
        const double *ca = ecol + (long)a * N * L;
        double *ra = rhs + (long)a * L;
        int b;
        RC_LANES(l, l0, l1) ra[l] = 0.0;
        for (b = 0; b < ne; ++b) {
            const double *cb = ecol + (long)b * N * L;
            double *jab = jac + ((long)a * ne + b) * L;
            int cs[6], nc = rc_k_gvi_shared(g, g->eq[a], g->eq[b], cs);
            rc_k_lanes_cdot(L, cs, nc, ca, linv_c, cb, jab, l0, l1);
        }
    }
    RC_LANES(l, l0, l1) bad[l] = 0;
    rc_k_lanes_lu_solve(ne, L, jac, rhs, s->ebest, s->epiv, bad, s->hpiv,
                        l0, l1);
    RC_LANES(l, l0, l1) ok[l] = ok[l] & (bad[l] == 0);
    /* each term of some lane's A: the approach test, and whether the
     * lane holds it (rc_k_gvi_step's step 4) */
    for (a = 0; a < g->nineq; ++a) {
        const int k = g->ineq[a];
        const rc_k_constraint *cn = &g->con[k];
        const int two = cn->type == RC_K_NON_OVERLAP || cn->type == RC_K_ROD;
        int kk;
        if (!((anyA >> a) & 1))
            continue;
        rc_k_lanes_column(g, d, L, k, s->q, col, v0, s->u, l0, l1);
        rc_k_lanes_con_eval(cn, d, s->x, g->m.radius, L, v1, (double *)0, l0,
                            l1);
        /* rc_k_gvi_speed: the blocks' products in order, inverse masses
         * per particle */
        RC_LANES(l, l0, l1) sp[l] = 0.0;
        for (kk = 0; kk < d; ++kk) {
            const double *uk = s->u + (long)kk * L;
            const double *pi = s->p + ((long)cn->i * d + kk) * L;
            const double *mi = linv + (long)cn->i * L;
            RC_LANES(l, l0, l1) sp[l] += uk[l] * pi[l] * mi[l];
        }
        if (two)
            for (kk = 0; kk < d; ++kk) {
                const double *uk = s->u + (long)kk * L;
                const double *pj = s->p + ((long)cn->j * d + kk) * L;
                const double *mj = linv + (long)cn->j * L;
                RC_LANES(l, l0, l1) sp[l] += -uk[l] * pj[l] * mj[l];
            }
        /* rc_k_gvi_project: coefficients, the resolve, the update */
        for (c = 0; c < N; ++c) {
            const double *cc = col + (long)c * L;
            double *uc = u + (long)c * L;
            RC_LANES(l, l0, l1) uc[l] = cc[l];
        }
        for (e = 0; e < ne; ++e) {
            const double *fe = ecol + (long)e * N * L;
            double *re = rhs + (long)e * L;
            int cs[6], nc = rc_k_gvi_shared(g, g->eq[e], g->eq[e], cs);
            rc_k_lanes_cdot(L, cs, nc, fe, linv_c, u, re, l0, l1);
        }
        rc_k_lanes_lu_resolve(ne, L, jac, s->hpiv, rhs, l0, l1);
        for (e = 0; e < ne; ++e) {
            const double *re = rhs + (long)e * L;
            for (c = 0; c < N; ++c) {
                const double *fc = ecol + ((long)e * N + c) * L;
                double *uc = u + (long)c * L;
                RC_LANES(l, l0, l1) uc[l] -= fc[l] * re[l];
            }
        }
        /* (W n).p, W = M^-1 (rc_k_gvi_apply_W), over all N in order */
        RC_LANES(l, l0, l1) acc[l] = 0.0;
        for (c = 0; c < N; ++c) {
            const double *ic = linv_c + (long)c * L;
            const double *uc = u + (long)c * L, *pc = s->p + (long)c * L;
            RC_LANES(l, l0, l1) acc[l] += ic[l] * uc[l] * pc[l];
        }
        RC_LANES(l, l0, l1)
        {
            int in = (amask[l] >> a) & 1;
            int held = ((v0[l] <= eps_g[l]) & (rc_fabs(sp[l]) <= eps_v[l])) |
                       (v1[l] < 0.0);
            ok[l] = ok[l] & !(in & (acc[l] < -eps_v[l]));
            smask[l] |= (in & held) << a;
        }
    }
    /* nothing held: the predictor's step (if its RATTLE was fine); too
     * many held: the scalar body; tau_lam of rc_k_gvi_position */
    RC_LANES(l, l0, l1)
    {
        int ns = 0, b;
        for (b = 0; b < 31; ++b)
            ns += (smask[l] >> b) & 1;
        kind[l] = ok[l] & (smask[l] == 0) & fine[l] ? RC_LANE_FREE : kind[l];
        smask[l] = ok[l] & (ns <= RC_K_LANES_HELD_MAX) ? smask[l] : 0;
        tau[l] = 0.0;
    }
    for (c = 0; c < N; ++c) {
        const double *pc = s->p + (long)c * L;
        RC_LANES(l, l0, l1) tau[l] = rc_fmax(tau[l], rc_fabs(pc[l]));
    }
    RC_LANES(l, l0, l1) tau[l] = 1e-12 * (tau[l] > 0.0 ? tau[l] : 1.0);
    /* one group per distinct S, each lane's S cleared when its group is
     * done */
    for (;;) {
        int key = 0, m = 0, nS;
        for (j = l0; j < l1 && !key; ++j)
            key = smask[j];
        if (!key)
            break;
        for (a = 0; a < g->nineq; ++a)
            if ((key >> a) & 1)
                T[m++] = g->ineq[a];
        nS = m;
        for (e = 0; e < ne; ++e)
            T[m++] = g->eq[e];
        rc_k_lanes_shake(g, d, L, s, T, m, live, smask, key, hx, himp, l0,
                         l1);
        RC_LANES(l, l0, l1)
        ok[l] = (smask[l] == key) & ((act[l] | bad[l]) == 0);
        /* no held multiplier clearly negative (nothing released) */
        for (a = 0; a < nS; ++a) {
            const double *mua = s->emu + (long)a * L;
            RC_LANES(l, l0, l1) ok[l] = ok[l] & !(mua[l] < -tau[l]);
        }
        /* R2: no term outside A violated at x */
        for (a = 0; a < g->nineq; ++a) {
            rc_k_lanes_con_eval(&g->con[g->ineq[a]], d, hx, g->m.radius, L,
                                v0, (double *)0, l0, l1);
            RC_LANES(l, l0, l1)
            ok[l] = ok[l] & !((((amask[l] >> a) & 1) == 0) & (v0[l] < 0.0));
        }
        RC_LANES(l, l0, l1) bad[l] = 0;
        rc_k_lanes_rattle(g, d, L, s, T, m, hx, himp, hy, hg1, l0, l1);
        RC_LANES(l, l0, l1) ok[l] = ok[l] & (bad[l] == 0);
        rc_k_lanes_finite(N, L, hx, hy, ok, l0, l1);
        for (c = 0; c < N; ++c) {
            double *xc = s->x + (long)c * L, *yc = s->y + (long)c * L;
            double *gc = s->g1 + (long)c * L;
            const double *hxc = hx + (long)c * L, *hyc = hy + (long)c * L;
            const double *hgc = hg1 + (long)c * L;
            RC_LANES(l, l0, l1)
            {
                xc[l] = ok[l] ? hxc[l] : xc[l];
                yc[l] = ok[l] ? hyc[l] : yc[l];
                gc[l] = ok[l] ? hgc[l] : gc[l];
            }
        }
        RC_LANES(l, l0, l1)
        {
            kind[l] = ok[l] ? RC_LANE_FREE : kind[l];
            smask[l] = smask[l] == key ? 0 : smask[l];
        }
    }
}

/* One step of every lane of a model with equality constraints
 * (rc_k_lanes_eq_ok):
 *   1. the predictor by SHAKE (rc_k_lanes_shake with the equalities
 *      only; a lane that does not converge in newton_max_iter
 *      iterations, turns non-finite or meets a singular matrix is SLOW);
 *   2. A: g(q) <= eps_g or g(x) <= 0 for any inequality term makes the
 *      lane SLOW, for now;
 *   3. the position update is then the same Newton solve from the same
 *      inputs (rc_k_gvi_position with no held term), so x, mu and C mu
 *      are the predictor's bits;
 *   4. RATTLE (rc_k_lanes_rattle on the equalities);
 *   5. a non-finite x or y is SLOW;
 *   6. the lanes SLOW only because A is not empty go to rc_k_lanes_held
 *      (where rc_k_lanes_held_ok), which steps those whose A does not
 *      approach.
 * Masses are each lane's (lmass, linv, linv_c, lmass_c).  Every sum
 * runs in the scalar body's order (signed zeros included), so a lane's
 * bits are the scalar body's. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_eq_step(const rc_k_gvi *g, const int d, const long L,
                   rc_k_lanes *s, const unsigned char *live, long l0, long l1)
{
    const int N = g->N, ne = g->neq;
    int *const act = s->eact, *const bad = s->ebad, *const kind = s->kind;
    int *const nA = s->nA, *const refl = s->refl, *const cand = s->hcand;
    int *const fine = s->hfine;

    /* 1. SHAKE */
    rc_k_lanes_shake(g, d, L, s, g->eq, ne, live, (const int *)0, 0, s->x,
                     s->eimp, l0, l1);
    /* 2. A is empty, and the lane converged */
    RC_LANES(l, l0, l1)
    {
        nA[l] = act[l] | bad[l];
        cand[l] = live[l] & (nA[l] == 0);
    }
    rc_k_lanes_eq_screen(g, d, L, s, s->x, l0, l1);
    RC_LANES(l, l0, l1)
    {
        kind[l] = live[l] & (nA[l] == 0) ? RC_LANE_FREE : RC_LANE_SLOW;
        refl[l] = 0;
        bad[l] = 0;
    }
    /* 4. RATTLE: the kick (p^+ = p), then the projection at x */
    rc_k_lanes_rattle(g, d, L, s, g->eq, ne, s->x, s->eimp, s->y, s->g1, l0,
                      l1);
    /* 5. a singular projection or a non-finite state: the scalar body */
    RC_LANES(l, l0, l1) fine[l] = bad[l] == 0;
    rc_k_lanes_finite(N, L, s->x, s->y, fine, l0, l1);
    RC_LANES(l, l0, l1) kind[l] = fine[l] ? kind[l] : RC_LANE_SLOW;
    /* 6. */
    if (rc_k_lanes_held_ok(g))
        rc_k_lanes_held(g, d, L, s, live, l0, l1);
}

/* Lane l's stages as one GPU thread runs them (rc_g_lanes_fast): the
 * screen, the single-term reflection only where the lane has one (else
 * p^+ = p, copied), the kick.  1 when the live lane needs the scalar
 * body.  The CPU launcher runs the same per-lane form under
 * RICOCHET_LANES_ONE_BY_ONE=1, so the tests check it without a GPU. */
RC_HD static inline int rc_k_lanes_fast_one(const rc_k_gvi *g, const int d,
                                            const long L, rc_k_lanes *s,
                                            const unsigned char *live, long l)
{
    int c;
#if !defined(__CUDACC__)
    /* the CPU only (rc_k_lanes_eq_ok): the GPU's lane kernels take no
     * equalities, and leaving the solves out keeps their registers */
    if (g->neq > 0) {
        rc_k_lanes_eq_step(g, d, L, s, live, l, l + 1);
        return live[l] && s->kind[l] == RC_LANE_SLOW;
    }
#endif
    rc_k_lanes_screen(g, d, L, s, live, l, l + 1);
    if (s->kind[l] == RC_LANE_SINGLE)
        rc_k_lanes_single(g, d, L, s, l, l + 1);
    else
        for (c = 0; c < g->N; ++c)
            s->pr[(long)c * L + l] = s->p[(long)c * L + l];
    rc_k_lanes_kick(g, d, L, s, l, l + 1);
    return live[l] && s->kind[l] == RC_LANE_SLOW;
}

/* ------------------------------------------------------------------ */
/* Rows, counters and the scalar step of a lane (both launchers).       */

/* The per-lane statistics of the diagnostics rows (rc_k_member_run's),
 * [L] arrays unless noted.  The sums over time and the row count are the
 * same for every live lane and kept once by the caller. */
typedef struct rc_k_lanes_stats {
    double *e, *kin, *pot, *mom, *ang; /* row scratch: [n*L], [L], [L],
                                          [3L], [3L] */
    double *e0, *scale, *mom0, *ang0;  /* at step 0: [L], [L], [3L], [3L] */
    double *s_y, *s_ty, *wins;         /* [L], [L], [10L] */
    double *max_rel, *final_rel, *dp, *dl;
    unsigned char *live;
    long *impacts, *steps;
} rc_k_lanes_stats;

/* One diagnostics row of lanes [l0, l1) at (q, p): the energies, then
 * rc_k_member_run's statistics in its order.  first: the row of step 0;
 * wslot: the tenth of the run whose window sum this row joins, or -1.  A
 * lane that is no longer live is updated too and ignored (its member is
 * re-run alone). */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_row_m(const rc_k_model m, const double *lmass,
                 const double *linv, const int d, const long L,
                 const double *q, const double *p,
                 const rc_k_lanes_stats *st, int first, double time,
                 long wslot, long l0, long l1)
{
    double *const kin = st->kin, *const pot = st->pot;
    double *const mom = st->mom, *const ang = st->ang;
    double *const e0 = st->e0, *const scale = st->scale;
    double *const mom0 = st->mom0, *const ang0 = st->ang0;
    double *const max_rel = st->max_rel, *const final_rel = st->final_rel;
    double *const dp = st->dp, *const dl = st->dl;
    double *const s_y = st->s_y, *const s_ty = st->s_ty;
    double *const wsum = wslot >= 0 ? st->wins + wslot * L : (double *)0;
    unsigned char *const live = st->live;
    rc_k_lanes_energies(m, lmass, linv, d, q, p, L, st->e, kin, pot, mom,
                        ang, l0, l1);
    if (first)
        RC_LANES(l, l0, l1)
        {
            int k;
            e0[l] = kin[l] + pot[l];
            scale[l] = rc_k_energy_scale(kin[l], pot[l], e0[l]);
            for (k = 0; k < 3; ++k) {
                mom0[k * L + l] = mom[k * L + l];
                ang0[k * L + l] = ang[k * L + l];
            }
        }
    RC_LANES(l, l0, l1)
    {
        double energy = kin[l] + pot[l], rel, sp = 0.0, sl = 0.0;
        int k;
        rel = (energy - e0[l]) / scale[l];
        max_rel[l] = rc_fmax(max_rel[l], rc_fabs(rel));
        final_rel[l] = rel;
        for (k = 0; k < 3; ++k) {
            double a = mom[k * L + l] - mom0[k * L + l];
            double c = ang[k * L + l] - ang0[k * L + l];
            sp += a * a;
            sl += c * c;
        }
        dp[l] = rc_fmax(dp[l], rc_sqrt(sp));
        dl[l] = rc_fmax(dl[l], rc_sqrt(sl));
        s_y[l] += rel;
        s_ty[l] += time * rel;
        live[l] = live[l] & rc_isfinite(energy);
    }
    if (wsum)
        RC_LANES(l, l0, l1) wsum[l] += final_rel[l];
}

/* rc_k_lanes_row_m with the model's masses (the GPU's lane kernels). */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_row(const rc_k_model m, const int d, const long L,
               const double *q, const double *p, const rc_k_lanes_stats *st,
               int first, double time, long wslot, long l0, long l1)
{
    rc_k_lanes_row_m(m, (const double *)0, (const double *)0, d, L, q, p, st,
                     first, time, wslot, l0, l1);
}

/* After a step (the lane stages and the scalar steps of the SLOW lanes):
 * a lane that is not SLOW is live (the screen marks dead lanes SLOW) and
 * adds its reflection; a live lane has done step + 1 steps. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_counters(const rc_k_lanes *s, const rc_k_lanes_stats *st,
                    long step, long l0, long l1)
{
    const int *const kind = s->kind, *const refl = s->refl;
    const unsigned char *const live = st->live;
    long *const impacts = st->impacts, *const steps = st->steps;
    RC_LANES(l, l0, l1)
    {
        impacts[l] += kind[l] != RC_LANE_SLOW ? refl[l] : 0;
        steps[l] = live[l] ? step + 1 : steps[l];
    }
}

/* Lane l's step by the scalar body rc_k_gvi_step from (q, p) of the
 * lanes, through the member scratch w and qs, ps, gs ([N] each): the
 * result into (x, y), grad V(x) into g1, its reflections into *impacts.
 * 0 when the member failed. */
RC_HD static inline int rc_k_lanes_slow_step(rc_k_gvi g, const long L,
                                             const rc_k_lanes *s,
                                             rc_k_gvi_work *w, double *qs,
                                             double *ps, double *gs, long l,
                                             long *impacts)
{
    int c, N = g.N;
    rc_k_gvi_step_info info;
    for (c = 0; c < N; ++c) {
        qs[c] = s->q[(long)c * L + l];
        ps[c] = s->p[(long)c * L + l];
    }
    g.eps_g = s->eps_g[l];
    g.eps_v = s->eps_v[l];
    if (rc_k_gvi_step(&g, w, qs, ps, &info) != RC_K_GVI_OK)
        return 0;
    rc_k_gvi_gradient(&g, w->x, gs);
    for (c = 0; c < N; ++c) {
        s->x[(long)c * L + l] = w->x[c];
        s->y[(long)c * L + l] = w->y[c];
        s->g1[(long)c * L + l] = gs[c];
    }
    *impacts += info.reflections;
    return 1;
}

/* After a step: (q, p, g) <- (x, y, g1), by exchanging the arrays. */
RC_HD static inline void rc_k_lanes_swap(rc_k_lanes *s)
{
    double *t;
    t = s->q, s->q = s->x, s->x = t;
    t = s->p, s->p = s->y, s->y = t;
    t = s->g, s->g = s->g1, s->g1 = t;
}

/* Lane l's results after the run (rc_k_member_run's epilogue): ok only
 * while the lane is live; s_t, s_tt and rows from the caller's rows. */
RC_HD static inline void rc_k_lanes_out(const rc_k_lanes_stats *st, long L,
                                        long l, long rows, double s_t,
                                        double s_tt, rc_k_member_out *out)
{
    out->ok = 0;
    out->steps = out->impacts = 0;
    out->e0 = out->max_rel = out->final_rel = out->windowed = 0.0;
    out->slope = out->dp = out->dl = 0.0;
    if (!st->live[l])
        return;
    out->steps = st->steps[l];
    out->impacts = st->impacts[l];
    out->e0 = st->e0[l];
    out->max_rel = st->max_rel[l];
    out->final_rel = st->final_rel[l];
    out->dp = st->dp[l];
    out->dl = st->dl[l];
    rc_k_member_finish(out, rows, s_t, st->s_y[l], s_tt, st->s_ty[l],
                       st->wins + l, L);
    out->ok = 1;
}

/* The lane arrays of L lanes of a model of n particles (N coordinates):
 * doubles, ints and longs, and their carving from d, iw and lw (live
 * from bytes).  One layout for both launchers. */
RC_HD static inline long rc_k_lanes_doubles(int N, int n, long L)
{
    /* 9 N-by-L arrays, 9 [L], a 3L gradient block; rows: n*L energy
     * shares, kin, pot, 3L + 3L momenta; statistics: 2 + 6 + 2 + 10 + 4 L */
    return 9L * N * L + 9L * L + 3L * L + (long)n * L + 8L * L + 24L * L;
}
#define RC_K_LANES_INTS 4  /* [L] int arrays: nA, aterm, kind, refl */

/* The equality arrays of L lanes (rc_k_lanes_eq_step) with ne
 * equalities for n particles (N coordinates), and their carving into s
 * from d and iw. */
RC_HD static inline long rc_k_lanes_eq_doubles(int N, int n, int ne, long L)
{
    long m = (long)ne + RC_K_LANES_HELD_MAX; /* columns of a solve */
    return m * N * L + 3L * N * L + m * m * L + 2L * m * L + 4L * L +
           2L * n * L + 2L * N * L + 4L * N * L;
}
/* int arrays: eact, ebad, epiv, hcand, amask, smask, hok, hfine ([L]
 * each), hpiv [ne*L], hterms */
RC_HD static inline long rc_k_lanes_eq_ints(int ne, long L)
{
    return 8L * L + (long)ne * L + ne + RC_K_LANES_HELD_MAX;
}

RC_HD static inline void rc_k_lanes_eq_carve(rc_k_lanes *s, int N, int n,
                                             int ne, long L, double *d,
                                             int *iw)
{
    long m = (long)ne + RC_K_LANES_HELD_MAX;
    s->ecol = d; d += m * N * L;
    s->erow = d; d += (long)N * L;
    s->ex0 = d; d += (long)N * L;
    s->eimp = d; d += (long)N * L;
    s->ejac = d; d += m * m * L;
    s->erhs = d; d += m * L;
    s->emu = d; d += m * L;
    s->edmax = d; d += L;
    s->exmax = d; d += L;
    s->eprev = d; d += L;
    s->ebest = d; d += L;
    s->lmass = d; d += (long)n * L;
    s->linv = d; d += (long)n * L;
    s->lmass_c = d; d += (long)N * L;
    s->linv_c = d; d += (long)N * L;
    s->hx = d; d += (long)N * L;
    s->himp = d; d += (long)N * L;
    s->hy = d; d += (long)N * L;
    s->hg1 = d;
    s->eact = iw;
    s->ebad = iw + L;
    s->epiv = iw + 2L * L;
    s->hcand = iw + 3L * L;
    s->amask = iw + 4L * L;
    s->smask = iw + 5L * L;
    s->hok = iw + 6L * L;
    s->hfine = iw + 7L * L;
    s->hpiv = iw + 8L * L;
    s->hterms = s->hpiv + (long)ne * L;
}
#define RC_K_LANES_LONGS 2 /* [L] long arrays: impacts, steps */

/* The GPU launcher (rc_cuda_lanes_run) copies q with p, eps_g with
 * eps_v, and the statistics from e0 to the end, as three blocks: keep
 * each contiguous and in this order (it checks). */
RC_HD static inline void rc_k_lanes_carve(rc_k_lanes *s, rc_k_lanes_stats *st,
                                          int N, int n, long L, double *d,
                                          int *iw, long *lw,
                                          unsigned char *live)
{
    s->L = L;
    s->touch = (const unsigned char *)0; /* every coordinate */
    s->q = d; d += (long)N * L;
    s->p = d; d += (long)N * L;
    s->g = d; d += (long)N * L;
    s->x = d; d += (long)N * L;
    s->y = d; d += (long)N * L;
    s->g1 = d; d += (long)N * L;
    s->pr = d; d += (long)N * L;
    s->col = d; d += (long)N * L;
    s->wcol = d; d += (long)N * L;
    s->v0 = d; d += L;
    s->v1 = d; d += L;
    s->eps_g = d; d += L;
    s->eps_v = d; d += L;
    s->aval = d; d += L;
    s->sp = d; d += L;
    s->aa = d; d += L;
    s->z = d; d += L;
    s->s2 = d; d += L;
    s->u = d; d += 3L * L;
    st->e = d; d += (long)n * L;
    st->kin = d; d += L;
    st->pot = d; d += L;
    st->mom = d; d += 3L * L;
    st->ang = d; d += 3L * L;
    st->e0 = d; d += L;
    st->scale = d; d += L;
    st->mom0 = d; d += 3L * L;
    st->ang0 = d; d += 3L * L;
    st->s_y = d; d += L;
    st->s_ty = d; d += L;
    st->wins = d; d += 10L * L;
    st->max_rel = d; d += L;
    st->final_rel = d; d += L;
    st->dp = d; d += L;
    st->dl = d;
    s->nA = iw;
    s->aterm = iw + L;
    s->kind = iw + 2L * L;
    s->refl = iw + 3L * L;
    st->impacts = lw;
    st->steps = lw + L;
    st->live = live;
}

#ifdef __cplusplus
}
#endif
#endif

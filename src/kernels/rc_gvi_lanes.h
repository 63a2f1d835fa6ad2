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
 *
 * `d` (the dimension) is passed as a literal by the caller's dispatch
 * (1, 2 or 3), so the loops over coordinates unroll and the lane loop is
 * innermost. */
#ifndef RC_GVI_LANES_H
#define RC_GVI_LANES_H

#include "rc_constraint.h"
#include "rc_gvi.h"
#include "rc_hd.h"
#include "rc_math.h"
#include "rc_potential.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define RC_LANES_INLINE __forceinline__
#define RC_LANES(l, l0, l1) for (long l = (l0); l < (l1); ++l)
#else
#define RC_LANES_INLINE inline __attribute__((always_inline))
/* omp simd: lanes are independent members (no loop-carried dependence) */
#define RC_LANES(l, l0, l1)                                                   \
    _Pragma("omp simd") for (long l = (l0); l < (l1); ++l)
#endif

/* Lane kinds after the screen. */
enum { RC_LANE_FREE = 0, RC_LANE_SINGLE = 1, RC_LANE_SLOW = 2 };

/* Can a model's members run in lanes?  0 sends them member by member. */
RC_HD static inline int rc_k_lanes_ok(const rc_k_gvi *g)
{
    int t;
    if (g->neq != 0 || g->midpoint || g->q0 || g->colmode != RC_COLS_AT_Q ||
        g->m.dim < 1 || g->m.dim > 3)
        return 0;
    for (t = 0; t < g->m.npot; ++t)
        if (g->m.pot[t].type < RC_K_GRAVITY ||
            g->m.pot[t].type > RC_K_SEXTIC_WELL)
            return 0;
    return 1;
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
 * grad_self += c1 x) or the energy share (else e_self += w V).  The
 * type, the target and the kind of partner are decided outside the lane
 * loop. */
#define RC_LANES_RADIAL_LOOP(FORM, XK, OUT)                                   \
    RC_LANES(l, l0, l1)                                                       \
    {                                                                         \
        double x[3], s, c1, c2, v;                                            \
        int k;                                                                \
        for (k = 0; k < d; ++k)                                               \
            x[k] = qs[k * L + l] - (XK);                                      \
        s = rc_dot(d, x, x);                                                  \
        v = FORM(p->a, s, &c1, &c2);                                          \
        OUT;                                                                  \
        (void)v;                                                              \
    }
#define RC_LANES_RADIAL_OUT(FORM, XK)                                         \
    if (grad) {                                                               \
        RC_LANES_RADIAL_LOOP(FORM, XK,                                        \
                             for (k = 0; k < d; ++k)                          \
                                 grad[((long)self * d + k) * L + l] +=        \
                                 c1 * x[k])                                   \
    } else if (w == 1.0) {                                                    \
        RC_LANES_RADIAL_LOOP(FORM, XK, e[(long)self * L + l] += v)            \
    } else {                                                                  \
        RC_LANES_RADIAL_LOOP(FORM, XK, e[(long)self * L + l] += w * v)        \
    }
#define RC_LANES_RADIAL_FORM(FORM)                                            \
    if (other >= 0) {                                                         \
        RC_LANES_RADIAL_OUT(FORM, qo[k * L + l])                              \
    } else {                                                                  \
        RC_LANES_RADIAL_OUT(FORM, c[k])                                       \
    }

RC_HD static RC_LANES_INLINE void
rc_k_lanes_radial_term(const rc_k_potential *p, const int d, const double *q,
                       long L, int self, int other, const double *c,
                       double w, double *grad, double *e, long l0, long l1)
{
    const double *qs = q + (long)self * d * L;
    const double *qo = q + (long)(other >= 0 ? other : self) * d * L;
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

/* The model's terms in rc_k_gradient_particle's order for each particle
 * (terms in index order; a pair term from each end; LJ/WCA over the
 * other particles in index order): grad (grad != NULL, N*L, zeroed here)
 * or the energy shares e (n*L, zeroed here; rc_k_energy_particle's
 * order and halving).  A particle's sum sees its terms in the same order
 * whichever loop is outside, so the bits are the scalar bits. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_terms(const rc_k_model m, const int d, const double *q, long L,
                 double *grad, double *e, long l0, long l1)
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
                if (grad) {
                    for (k = 0; k < d; ++k) {
                        double f = m.mass[i] * p->a[k];
                        double *gi = grad + ((long)i * d + k) * L;
                        RC_LANES(l, l0, l1) gi[l] -= f;
                    }
                } else {
                    const double *qi = q + (long)i * d * L;
                    double mi = m.mass[i];
                    RC_LANES(l, l0, l1)
                    {
                        double s = 0.0;
                        int kk;
                        for (kk = 0; kk < d; ++kk)
                            s += p->a[kk] * qi[kk * L + l];
                        e[(long)i * L + l] -= mi * s;
                    }
                }
            }
            break;
        case RC_K_SPRING:
            /* (the centre argument is unused for a pair) */
            rc_k_lanes_radial_term(p, d, q, L, p->i, p->j, p->a, 0.5, grad,
                                   e, l0, l1);
            if (p->j != p->i)
                rc_k_lanes_radial_term(p, d, q, L, p->j, p->i, p->a, 0.5,
                                       grad, e, l0, l1);
            break;
        case RC_K_LJ:
        case RC_K_WCA:
            for (i = 0; i < n; ++i)
                for (j = 0; j < n; ++j)
                    if (j != i)
                        rc_k_lanes_radial_term(p, d, q, L, i, j, p->a, 0.5,
                                               grad, e, l0, l1);
            break;
        default: /* anchor, inverse square, sextic well: one-body radial */
            for (i = 0; i < n; ++i)
                if (rc_k_one_body_on(p, i))
                    rc_k_lanes_radial_term(p, d, q, L, i, -1, rc_k_centre(p),
                                           1.0, grad, e, l0, l1);
            break;
        }
    }
}

/* Kinetic energy, momentum, angular momentum (rc_k_kinetic_momenta) and
 * potential energy (rc_k_potential_energy) per lane: kin, pot [L] and
 * mom, ang [3*L] (component k of lane l at k*L + l).  e: n*L scratch. */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_energies(const rc_k_model m, const int d, const double *q,
                    const double *p, long L, double *e, double *kin,
                    double *pot, double *mom, double *ang, long l0, long l1)
{
    int n = m.n;
    rc_k_lanes_terms(m, d, q, L, (double *)0, e, l0, l1);
    RC_LANES(l, l0, l1)
    {
        double t = 0.0, v = 0.0, mo[3] = {0.0, 0.0, 0.0};
        double an[3] = {0.0, 0.0, 0.0};
        int ii, kk;
        for (ii = 0; ii < n; ++ii)
            for (kk = 0; kk < d; ++kk) {
                double pk = p[((long)ii * d + kk) * L + l];
                double vel = pk * m.inv_mass[ii];
                t += 0.5 * pk * vel;
            }
        for (ii = 0; ii < n; ++ii) {
            const double *qi = q + (long)ii * d * L + l;
            const double *pi = p + (long)ii * d * L + l;
            for (kk = 0; kk < d; ++kk)
                mo[kk] += pi[kk * L];
            if (d == 2) {
                an[2] += qi[0] * pi[L] - qi[L] * pi[0];
            } else if (d == 3) {
                an[0] += qi[L] * pi[2 * L] - qi[2 * L] * pi[L];
                an[1] += qi[2 * L] * pi[0] - qi[0] * pi[2 * L];
                an[2] += qi[0] * pi[L] - qi[L] * pi[0];
            }
        }
        for (ii = 0; ii < n; ++ii)
            v += e[(long)ii * L + l];
        kin[l] = t;
        pot[l] = v;
        for (kk = 0; kk < 3; ++kk) {
            mom[kk * L + l] = mo[kk];
            ang[kk * L + l] = an[kk];
        }
    }
}

/* ------------------------------------------------------------------ */
/* Constraints in lanes.                                                */

/* Value of inequality term c at lane l of q, and its first gradient
 * block u (rc_k_constraint_eval's forms). */
RC_HD static RC_LANES_INLINE double
rc_k_lanes_con(const rc_k_constraint *c, const int d, const double *q,
               const double *r, long L, long l, double u[3])
{
    const double *qi = q + (long)c->i * d * L + l;
    switch (c->type) {
    case RC_K_NON_OVERLAP:
    case RC_K_ROD:
        return rc_k_con_pair(c->type, d, qi, q + (long)c->j * d * L + l, L,
                             r[c->i], r[c->j], c->a[3], u);
    case RC_K_WALL:
    case RC_K_PLANE:
        return rc_k_con_plane(c->type, d, c->a, qi, L, r[c->i], u);
    default:
        return rc_k_con_radial(c->type, d, c->a, qi, L, r[c->i], u);
    }
}

/* val[l] = value of term c at lane l of q, for every lane (the type
 * switch outside the lane loop). */
RC_HD static RC_LANES_INLINE void
rc_k_lanes_con_values(const rc_k_constraint *c, const int d, const double *q,
                      const double *r, long L, double *val, long l0, long l1)
{
    const double *qi = q + (long)c->i * d * L;
    const double *qj = q + (long)(c->type == RC_K_NON_OVERLAP ||
                                          c->type == RC_K_ROD
                                      ? c->j
                                      : c->i) *
                               d * L;
    switch (c->type) {
    case RC_K_NON_OVERLAP:
    case RC_K_ROD:
        RC_LANES(l, l0, l1)
        {
            double u[3];
            val[l] = rc_k_con_pair(c->type, d, qi + l, qj + l, L, r[c->i],
                                   r[c->j], c->a[3], u);
        }
        break;
    case RC_K_WALL:
    case RC_K_PLANE:
        RC_LANES(l, l0, l1)
        {
            double u[3];
            val[l] = rc_k_con_plane(c->type, d, c->a, qi + l, L, r[c->i], u);
        }
        break;
    default:
        RC_LANES(l, l0, l1)
        {
            double u[3];
            val[l] = rc_k_con_radial(c->type, d, c->a, qi + l, L, r[c->i],
                                     u);
        }
        break;
    }
}

/* ------------------------------------------------------------------ */
/* The stages of the step.                                              */

/* Per-block work arrays (caller-owned; N*L doubles unless noted). */
typedef struct rc_k_lanes {
    long L;
    double *q, *p, *g;    /* state and grad V(q) */
    double *x, *y, *g1;   /* the step's end point, momentum, grad V(x) */
    double *pr;           /* momentum after the reflection (p^+) */
    double *col, *wcol;   /* the single term's dense column, M^-1 col */
    double *v0, *v1;      /* [L] scratch values */
    double *eps_g, *eps_v;/* [L] the members' tolerances */
    double *aval;         /* [L] value at q of the single A term */
    int *nA, *aterm;      /* [L] terms in A, the last of them */
    int *kind;            /* [L] RC_LANE_* */
    int *refl;            /* [L] reflection passes of the step (0 or 1) */
} rc_k_lanes;

/* x = q + h M^-1 (p - h/2 grad V(q)): the predictor and the free position
 * update (rc_k_gvi_predict, rc_k_gvi_newton_verlet with no columns). */
RC_HD static RC_LANES_INLINE void rc_k_lanes_drift(const rc_k_gvi *g,
                                                   const double *q,
                                                   const double *p,
                                                   const double *gq, long L,
                                                   double *x, long l0,
                                                   long l1)
{
    int c;
    double h = g->h;
    for (c = 0; c < g->N; ++c) {
        double hm = h * g->inv_mass_c[c];
        const double *qc = q + (long)c * L, *pc = p + (long)c * L;
        const double *gc = gq + (long)c * L;
        double *xc = x + (long)c * L;
        RC_LANES(l, l0, l1) xc[l] = qc[l] + hm * (pc[l] - 0.5 * h * gc[l]);
    }
}

/* Steps 1-2 of rc_k_gvi_step: the predictor x and the extended set A
 * (g(q) <= eps_g or g(x) <= 0), counted per lane; the kind of each lane
 * (slow where `live` is 0: a finished member is left alone). */
RC_HD static RC_LANES_INLINE void rc_k_lanes_screen(const rc_k_gvi *g,
                                                    const int d,
                                                    rc_k_lanes *s,
                                                    const unsigned char *live,
                                                    long l0, long l1)
{
    long L = s->L;
    int a;
    rc_k_lanes_drift(g, s->q, s->p, s->g, L, s->x, l0, l1);
    RC_LANES(l, l0, l1)
    {
        s->nA[l] = 0;
        s->aterm[l] = -1;
        s->aval[l] = 0.0;
    }
    for (a = 0; a < g->nineq; ++a) {
        int k = g->ineq[a];
        rc_k_lanes_con_values(&g->con[k], d, s->q, g->m.radius, L, s->v0, l0,
                              l1);
        rc_k_lanes_con_values(&g->con[k], d, s->x, g->m.radius, L, s->v1, l0,
                              l1);
        RC_LANES(l, l0, l1)
        {
            int in = s->v0[l] <= s->eps_g[l] || s->v1[l] <= 0.0;
            s->nA[l] += in;
            s->aterm[l] = in ? k : s->aterm[l];
            s->aval[l] = in ? s->v0[l] : s->aval[l];
        }
    }
    RC_LANES(l, l0, l1)
    {
        int kind = s->nA[l] == 0 ? RC_LANE_FREE : RC_LANE_SINGLE;
        s->kind[l] = live[l] && s->nA[l] <= 1 ? kind : RC_LANE_SLOW;
        s->refl[l] = 0;
    }
}

/* Steps 3-5 for the lanes with one term in A (rc_k_gvi_reflect with one
 * column, rc_k_nnls_gram's 1x1 solve, the re-predicted drift and the
 * checks that would make the scalar body hold a term or reflect again):
 * pr = p^+ and x = the position update for SINGLE lanes (pr = p
 * elsewhere); a lane the closed form does not cover becomes SLOW. */
RC_HD static RC_LANES_INLINE void rc_k_lanes_single(const rc_k_gvi *g,
                                                    const int d,
                                                    rc_k_lanes *s, long l0,
                                                    long l1)
{
    long L = s->L;
    int N = g->N, a, c, reflect_ok = rc_k_lanes_reflect_ok(g);
    /* the dense column of each SINGLE lane's term: 0.0 + gradient block
     * entries, +0.0 elsewhere (rc_k_gvi_column) */
    for (c = 0; c < N; ++c)
        RC_LANES(l, l0, l1) s->col[(long)c * L + l] = 0.0;
    for (a = 0; a < g->nineq; ++a) {
        int k = g->ineq[a];
        const rc_k_constraint *cn = &g->con[k];
        int two = cn->type == RC_K_NON_OVERLAP || cn->type == RC_K_ROD;
        RC_LANES(l, l0, l1)
        {
            double u[3];
            int kk, mine = s->kind[l] == RC_LANE_SINGLE && s->aterm[l] == k;
            rc_k_lanes_con(cn, d, s->q, g->m.radius, L, l, u);
            for (kk = 0; kk < d; ++kk) {
                long ci = ((long)cn->i * d + kk) * L + l;
                s->col[ci] = mine ? 0.0 + u[kk] : s->col[ci];
                if (two) {
                    long cj = ((long)cn->j * d + kk) * L + l;
                    s->col[cj] = mine ? 0.0 + -u[kk] : s->col[cj];
                }
            }
        }
    }
    RC_LANES(l, l0, l1)
    {
        double sp = 0.0, aa = 0.0, b, z, rt, s2 = 0.0;
        int cc, single = s->kind[l] == RC_LANE_SINGLE, approach, ok;
        for (cc = 0; cc < N; ++cc) {
            double wc = g->inv_mass_c[cc] * s->col[(long)cc * L + l];
            s->wcol[(long)cc * L + l] = wc;
            sp += wc * s->p[(long)cc * L + l];
        }
        approach = single && sp < -s->eps_v[l];
        for (cc = 0; cc < N; ++cc)
            aa += s->wcol[(long)cc * L + l] * s->col[(long)cc * L + l];
        /* rc_k_nnls_gram with m = 1: finite inputs, the pivot test, one
         * entering column with z = -b / sqrt(a) / sqrt(a) > 0 */
        b = 2.0 * sp;
        rt = rc_sqrt(aa > 0.0 ? aa : 1.0);
        z = -b / rt;
        z = z / rt;
        ok = rc_isfinite(b) && rc_isfinite(aa) && aa > 0.0 &&
             aa > RC_K_NNLS_PIVOT_REL * aa && rc_isfinite(z) && z > 0.0 &&
             rc_isfinite(-(b + aa * z)); /* the dual of its second pass */
        for (cc = 0; cc < N; ++cc) {
            double pc = s->p[(long)cc * L + l];
            double pn = pc + z * s->col[(long)cc * L + l];
            s->pr[(long)cc * L + l] = approach ? pn : pc;
        }
        /* a second pass would follow if p^+ still approaches */
        for (cc = 0; cc < N; ++cc)
            s2 += s->wcol[(long)cc * L + l] * s->pr[(long)cc * L + l];
        s->refl[l] = approach;
        s->kind[l] = single && (approach && (!reflect_ok || !ok ||
                                             s2 < -s->eps_v[l]))
                         ? RC_LANE_SLOW
                         : s->kind[l];
        s->kind[l] = single && !reflect_ok ? RC_LANE_SLOW : s->kind[l];
    }
    /* the position update of the reflected momentum (equal to x where
     * nothing reflected: pr = p there) */
    rc_k_lanes_drift(g, s->q, s->pr, s->g, L, s->x, l0, l1);
    /* R2: a term outside A that the new drift reaches joins A (slow); R3
     * and step 4: the A term held (resting, or still violated) is slow */
    for (a = 0; a < g->nineq; ++a) {
        int k = g->ineq[a];
        const rc_k_constraint *cn = &g->con[k];
        rc_k_lanes_con_values(cn, d, s->x, g->m.radius, L, s->v1, l0, l1);
        RC_LANES(l, l0, l1)
        {
            double u[3], sp = 0.0;
            int kk, mine = s->aterm[l] == k, held;
            rc_k_lanes_con(cn, d, s->q, g->m.radius, L, l, u);
            for (kk = 0; kk < d; ++kk)
                sp += u[kk] * s->pr[((long)cn->i * d + kk) * L + l] *
                      g->m.inv_mass[cn->i];
            if (cn->type == RC_K_NON_OVERLAP || cn->type == RC_K_ROD)
                for (kk = 0; kk < d; ++kk)
                    sp += -u[kk] * s->pr[((long)cn->j * d + kk) * L + l] *
                          g->m.inv_mass[cn->j];
            held = (s->aval[l] <= s->eps_g[l] &&
                    rc_fabs(sp) <= s->eps_v[l]) ||
                   s->v1[l] < 0.0;
            s->kind[l] = s->kind[l] == RC_LANE_SINGLE &&
                                 ((mine && held) ||
                                  (!mine && s->refl[l] && s->v1[l] <= 0.0))
                             ? RC_LANE_SLOW
                             : s->kind[l];
        }
    }
}

/* Step 6 for FREE and SINGLE lanes (rc_k_gvi_momentum with no columns):
 * g1 = grad V(x), y = p^+ - h/2 grad V(q) + 0 - h/2 grad V(x); a lane
 * whose x or y is not finite becomes SLOW (the scalar body fails it). */
RC_HD static RC_LANES_INLINE void rc_k_lanes_kick(const rc_k_gvi *g,
                                                  const int d, rc_k_lanes *s,
                                                  long l0, long l1)
{
    long L = s->L;
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
            s->kind[l] = rc_isfinite(y) && rc_isfinite(xc[l])
                             ? s->kind[l]
                             : RC_LANE_SLOW;
        }
    }
}

#ifdef __cplusplus
}
#endif
#endif

/* Exact collision times for ballistic hard spheres (integrator.collisions:
 * exact): the bodies of the large-system step that processes each
 * island's impacts at their times within the step, in time order, with
 * free flight (or uniform gravity) between them, which is exact.
 *
 * Transported coordinates.  Between impacts a sphere moves as
 *
 *     x(t) = y + t p/m + t^2 g / 2,   momentum p + t m g,
 *
 * with y and p constant: at the step's start y = q and p is the
 * momentum; an impulse J at time t changes p by J and y by -t J / m, so
 * x is continuous.  p is kept in the engine's momentum array and y in
 * its predictor array (qp) while an island is processed; the end of the
 * step is then the Störmer–Verlet step from (y, p), which for a uniform
 * field is the exact flight: x(h) = y + h M^-1 (p - h/2 grad V) and the
 * kick p - h grad V.  A sphere without impacts keeps y = q and its
 * momentum, so its step is the predictor's, bit for bit.  Gravity is the
 * same for every sphere, so the relative motion of a pair is a straight
 * line, r(t) = (y_i - y_j - L m) + t (p_i/m_i - p_j/m_j).
 *
 * The island's impacts.  Islands are the connected components of the
 * contacts that can impact within the step (rc_k_mdx_screen_pair: the
 * pair's relative path reaches contact while approaching; walls the
 * same with the parabola).  Each island (one thread) repeats: the next
 * impact time of every contact from the current time; the earliest, and
 * every contact within t_tol of it (simultaneous impacts), resolved
 * together at that time by the generalized reflection (seed 000
 * Algorithm 2: NNLS on the Gram matrix of the approaching ones, in
 * passes; for one contact this is the elastic collision); until no
 * contact impacts before h.  Each impact logs the state its spheres had
 * before it (rc_k_md_event), so their paths over the step can be read
 * back.
 *
 * Closing the set.  A sphere deflected inside its island may meet a
 * sphere that was not in A.  The engine screens again every candidate
 * pair with a deflected sphere along both spheres' logged paths
 * (piecewise straight relative motion; rc_k_mdx_path_pair), and a pair
 * that meets joins A; the islands are then formed anew and every island
 * is processed again from the step's start.  When nothing joins, every
 * pair not in A provably did not meet within the step, and the island
 * results are the exact event-driven trajectory (up to the resolution of
 * simultaneous impacts). */
#ifndef RC_MD_EXACT_H
#define RC_MD_EXACT_H

#include "rc_md.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Impacts an island of m contacts may log in one step (a sphere trapped
 * between walls and gravity bounces without end: the step fails with
 * RC_K_MD_EVENTS instead), and the log entries that needs (each impact
 * logs at most two spheres). */
RC_HD static inline long rc_k_mdx_max_events(long m)
{
    return 4 * m + 16;
}

RC_HD static inline long rc_k_mdx_log_room(long m)
{
    return 2 * rc_k_mdx_max_events(m);
}

/* The log's first room: an island of m contacts mostly has about m
 * impacts, and the full room above (8 m + 32 entries of 64 bytes) for
 * every island would be most of the engine's memory.  A lone pair (one
 * contact, two spheres; most islands of a fluid) gets the 2 entries of
 * its one impact: under a uniform field its relative motion is
 * ballistic, so once reflected it recedes for the rest of the step (a
 * second impact, from round-off, only costs the run again below);
 * 2 (m + 2) otherwise, which a sphere bouncing on a wall may need.  An island that
 * outgrows this room fails; the engine then runs the round again with
 * the full room for the islands that failed (rc_dmd_island_round).  Each
 * run starts the islands from the step's start and the room changes
 * nothing but where the log ends, so the second run is what one run in
 * the full room would have been, bit for bit. */
RC_HD static inline long rc_k_mdx_log_first(long m, int lone_pair)
{
    return lone_pair ? 2 : 2 * (m + 2);
}

/* First time in [lo, hi] at which a pair with relative path r0 + t w
 * touches (|r| = sig) while approaching; -1 if none.  At lo already
 * touching or overlapping and approaching: lo.  r0 = (ya - yb) - s and
 * w = pa ia - pb ib, the spheres' flights from ya and yb with momenta
 * pa and pb (inverse masses ia, ib) and the pair's shift s, are taken
 * coordinate by coordinate in the loop of the sums (through arrays, r0
 * and w went to the stack and the sums waited on their reload: as
 * rc_k_mdx_first_fill). */
RC_HD static inline double rc_k_mdx_pair_time(int d, const double *ya,
                                              const double *yb,
                                              const double *s,
                                              const double *pa,
                                              const double *pb, double ia,
                                              double ib, double sig,
                                              double lo, double hi)
{
    double b = 0.0, c = 0.0, ww = 0.0, disc, dt;
    int k;
    for (k = 0; k < d; ++k) {
        double r0 = (ya[k] - yb[k]) - s[k], w = pa[k] * ia - pb[k] * ib;
        double rn = r0 + w * lo;
        b += rn * w;
        c += rn * rn;
        ww += w * w;
    }
    if (!(b < 0.0)) /* receding (or at rest): |r| grows from here */
        return -1.0;
    c -= sig * sig;
    if (c <= 0.0)
        return lo;
    disc = b * b - ww * c;
    if (disc < 0.0)
        return -1.0;
    dt = c / (-b + rc_sqrt(disc)); /* the smaller root, without cancellation */
    return lo + dt <= hi ? lo + dt : -1.0;
}

/* First time in [lo, hi] at which sphere i's wall gap (wall w = 2 axis +
 * side) reaches 0 while closing, for the flight from (y, p); -1 if
 * none. */
RC_HD static inline double rc_k_mdx_wall_time(const rc_k_md *v, int i, int w,
                                              const double *y,
                                              const double *p, double lo,
                                              double hi)
{
    int ax = w / 2, side = w % 2;
    double sg = side ? -1.0 : 1.0, g = v->gravity[ax];
    double vel = p[ax] * rc_k_md_im(v, i);
    double x = y[ax] + lo * vel + 0.5 * g * lo * lo;
    double g0 = side ? v->box.L[ax] - v->radius[i] - x : x - v->radius[i];
    double u0 = sg * (vel + g * lo), al = 0.5 * sg * g, best = -1.0;
    if (g0 <= 0.0 && u0 < 0.0)
        return lo;
    if (al == 0.0) {
        if (u0 < 0.0)
            best = -g0 / u0;
    } else {
        double disc = u0 * u0 - 4.0 * al * g0, sq, qq, r1, r2;
        if (disc < 0.0)
            return -1.0;
        sq = rc_sqrt(disc);
        qq = -0.5 * (u0 + (u0 < 0.0 ? -sq : sq));
        r1 = qq / al;
        r2 = qq != 0.0 ? g0 / qq : r1;
        if (r1 > r2) {
            double t = r1;
            r1 = r2;
            r2 = t;
        }
        /* the first root ahead at which the gap is closing (a root at
         * 0 with the gap opening is the impact just made) */
        if (r1 >= 0.0 && u0 + 2.0 * al * r1 < 0.0)
            best = r1;
        else if (r2 >= 0.0 && u0 + 2.0 * al * r2 < 0.0)
            best = r2;
    }
    if (!(best >= 0.0) || lo + best > hi)
        return -1.0;
    return lo + best;
}

/* The flight segments of sphere i, latest first: the current one ends at
 * h; *e walks the log.  Returns 0 when there is no earlier segment. */
typedef struct rc_k_mdx_seg {
    double t0, t1;
    const double *y, *p;
    long next; /* the log entry of the segment before, -1 none */
} rc_k_mdx_seg;

RC_HD static inline void rc_k_mdx_seg_last(const rc_k_md *v, int i,
                                           rc_k_mdx_seg *s)
{
    long e = v->ev_head[i];
    int d = v->dim;
    s->t1 = v->h;
    s->t0 = e >= 0 ? v->ev[e].t : 0.0;
    s->y = e >= 0 ? v->qp + (long)i * d : v->q + (long)i * d;
    s->p = v->p + (long)i * d;
    s->next = e;
}

RC_HD static inline int rc_k_mdx_seg_back(const rc_k_md *v, rc_k_mdx_seg *s)
{
    long e = s->next;
    if (e < 0)
        return 0;
    s->t1 = v->ev[e].t;
    s->y = v->ev[e].y;
    s->p = v->ev[e].pv;
    s->next = v->ev[e].next;
    s->t0 = s->next >= 0 ? v->ev[s->next].t : 0.0;
    return 1;
}

/* Whether spheres a and b (shift s: r = x_a - x_b - s) meet within the
 * step along their logged paths: every pair of overlapping segments
 * tested for an approaching contact. */
RC_HD static inline int rc_k_mdx_path_pair(const rc_k_md *v, int a, int b,
                                           const double *s)
{
    rc_k_mdx_seg A, B;
    int d = v->dim;
    double sig = rc_k_md_rad(v, a) + rc_k_md_rad(v, b);
    double ia = rc_k_md_im(v, a), ib = rc_k_md_im(v, b);
    rc_k_mdx_seg_last(v, a, &A);
    rc_k_mdx_seg_last(v, b, &B);
    for (;;) {
        double lo = A.t0 > B.t0 ? A.t0 : B.t0,
               hi = A.t1 < B.t1 ? A.t1 : B.t1;
        if (lo <= hi &&
            rc_k_mdx_pair_time(d, A.y, B.y, s, A.p, B.p, ia, ib, sig, lo,
                               hi) >= 0.0)
            return 1;
        /* step back the segment that starts later (both at 0: done) */
        if (A.t0 >= B.t0) {
            if (!rc_k_mdx_seg_back(v, &A) && !rc_k_mdx_seg_back(v, &B))
                return 0;
        } else if (!rc_k_mdx_seg_back(v, &B)) {
            return 0;
        }
    }
}

/* Whether sphere i meets wall w within the step along its path. */
RC_HD static inline int rc_k_mdx_path_wall(const rc_k_md *v, int i, int w)
{
    rc_k_mdx_seg S;
    rc_k_mdx_seg_last(v, i, &S);
    do {
        if (rc_k_mdx_wall_time(v, i, w, S.y, S.p, S.t0, S.t1) >= 0.0)
            return 1;
    } while (rc_k_mdx_seg_back(v, &S));
    return 0;
}

/* rc_k_mdx_pair_time(d, r0, w, sig, 0, hi) from its sums (bb = rn . w,
 * c = |rn|^2, ww = |w|^2, rn = r0 + w 0: rc_k_mdx_pred_sums): the same
 * value, its outcomes selected instead of branched on (about half the
 * pairs recede, at random), so that the CPU launcher's lanes vectorise
 * it (cand_lanes.c).  A NaN or negative disc misses, as there; its root
 * is taken of max(disc, 0) and discarded. */
RC_HD static inline double rc_k_mdx_time_of(double bb, double c, double ww,
                                           double sig, double hi)
{
    double disc, dt, t;
    c -= sig * sig;
    disc = bb * bb - ww * c;
    dt = c / (-bb + rc_sqrt(disc > 0.0 ? disc : 0.0));
    t = 0.0 + dt <= hi ? 0.0 + dt : -1.0;
    t = disc >= 0.0 ? t : -1.0;
    t = c <= 0.0 ? 0.0 : t;
    return bb < 0.0 ? t : -1.0;
}

/* A prediction from those sums: the contact time from t0 as a float
 * rounded down, +inf where there is none.  With the contact distance of
 * rc_k_mdx_pred_sig, the earliest contact along straight flights from q
 * with p for a diameter larger by 1e-9 relative, beyond the round-off by
 * which the steps' positions leave those paths (1e-13 in a box of 100
 * over tens of steps). */
RC_HD static inline float rc_k_mdx_pred_of(double bb, double c, double ww,
                                           double sig, double t0)
{
    double tp = rc_k_mdx_time_of(bb, c, ww, sig, (double)INFINITY),
           r = (t0 + tp) * (1.0 - 2.0e-7) - 1e-30;
    return (float)(tp < 0.0 ? (double)INFINITY : r);
}

/* rc_k_mdx_pair_time's sums for lo = 0 (rc_k_mdx_pred_of's bb, c, ww). */
RC_HD static inline void rc_k_mdx_pred_sums(int d, const double *r0,
                                            const double *w, double *bb,
                                            double *c, double *ww)
{
    int k;
    *bb = *c = *ww = 0.0;
    for (k = 0; k < d; ++k) {
        double rn = r0[k] + w[k] * 0.0;
        *bb += rn * w[k];
        *c += rn * rn;
        *ww += w[k] * w[k];
    }
}

/* The contact distance of a prediction: larger by 1e-9 relative
 * (rc_k_mdx_pred_of). */
RC_HD static inline double rc_k_mdx_pred_sig(double ra, double rb)
{
    return (ra + rb) * (1.0 + 1e-9);
}

/* Spheres a and b's relative velocity w = p_a / m_a - p_b / m_b. */
RC_HD static inline void rc_k_mdx_rel_vel(const rc_k_md *v, int a, int b,
                                          double *w)
{
    int d = v->dim, k;
    double ia = rc_k_md_im(v, a), ib = rc_k_md_im(v, b);
    for (k = 0; k < d; ++k)
        w[k] = v->p[(long)a * d + k] * ia - v->p[(long)b * d + k] * ib;
}

/* Candidate e at a build at a step's start: rc_k_md_cand_info, and its
 * prediction (by candidate, pred_t; gathered into the bucket order after
 * the sort) from the flight the first scan takes.  One pass, so the
 * spheres' states it reads twice are in cache the second time.  In two
 * parts, the one that reads the spheres and the one that computes
 * (rc_k_md_gap_key, rc_k_mdx_pred_of): the CPU launcher runs the first
 * over a block of candidates and the second as a vector loop over the
 * block (rc_dmd_cpu's cpu_cand_info), with the same bits.  The relative
 * position is cand_image's x, which is rc_k_mdx_first_fill's r0 bit for
 * bit (x - L 0 is x; the image is the same m). */
typedef struct rc_k_mdx_cand_in {
    double s, ra, rb, bb, c, ww;
} rc_k_mdx_cand_in;

RC_HD static inline void rc_k_mdx_cand_gather(const rc_k_md *v, long e,
                                             int pred, rc_k_mdx_cand_in *o)
{
    double x[3], w[3];
    int a = v->cand_i[e], b = v->cand_j[e];
    rc_k_md_prefetch_ahead(v, e);
    o->s = rc_k_md_cand_image(v, e, x);
    o->ra = rc_k_md_rad(v, a);
    o->rb = rc_k_md_rad(v, b);
    o->bb = o->c = o->ww = 0.0;
    if (pred) {
        rc_k_mdx_rel_vel(v, a, b, w);
        rc_k_mdx_pred_sums(v->dim, x, w, &o->bb, &o->c, &o->ww);
    }
}

RC_HD static inline void rc_k_mdx_cand_info_pred(const rc_k_md *v, long e)
{
    rc_k_mdx_cand_in o;
    rc_k_mdx_cand_gather(v, e, 1, &o);
    v->near_key[e] = rc_k_md_gap_key(o.s, o.ra, o.rb, v->near_w);
    v->pred_t[e] = rc_k_mdx_pred_of(o.bb, o.c, o.ww,
                                    rc_k_mdx_pred_sig(o.ra, o.rb), 0.0);
}

/* The time (since the build) beyond which a prediction lies after this
 * step, with a margin for the sums' round-off. */
RC_HD static inline double rc_k_mdx_pred_after(const rc_k_md *v)
{
    return v->ptime + v->h * (1.0 + 1e-9);
}

/* Whether screened item t has a prediction (kept, not forgotten) for
 * after this step: then the pair does not meet in it. */
RC_HD static inline int rc_k_mdx_predicted(const rc_k_md *v, long t)
{
    return v->pred_t && v->reach_skip &&
           (double)v->pred_t[t + v->near_off] > rc_k_mdx_pred_after(v);
}

/* red[t] = 1 when the first scan passes over screened item t untested:
 * predicted (exact collisions), or out of reach (a test's count:
 * tests/test_md_dengine.c). */
RC_HD static inline void rc_k_md_skip_count(const rc_k_md *v, long t)
{
    long e = rc_k_md_screened(v, t);
    v->red[t] = v->at_start && !(v->cand_m[e] & RC_K_MD_IN_A) &&
                        (v->pred_t ? rc_k_mdx_predicted(v, t)
                                   : rc_k_md_out_of_reach(v, t, v->cand_i[e],
                                                          v->cand_j[e]))
                    ? 1.0
                    : 0.0;
}

/* Items ahead at which the first scan asks for a tested pair's states
 * (16 and 64 measured the same, 128 slower) */
#define RC_K_MDX_AHEAD 32

/* The step's first scan where the list keeps no predictions (a list too
 * short-lived to repay them, rc_dmd_candidates), in two parts: the one
 * that reads (rc_k_mdx_first_gather: screened item t, candidate e,
 * spheres a and b, not in A; 0 when the spheres' reaches rule the pair
 * out, else 1 and the flight's r0 . w, the contact-time sums and the
 * contact distance) and the one that computes (rc_k_mdx_first_meets:
 * approaching and meeting within [0, h]).  rc_k_mdx_screen_pair_at runs
 * both per item; the CPU launcher runs the second as a vector loop over
 * a block (src/host/md/cand_lanes.c). */
typedef struct rc_k_mdx_first_in {
    double bf, bb, c, ww, sig;
} rc_k_mdx_first_in;

/* Candidate e's flight at the step's start (no sphere has an impact
 * yet): relative position r0 (the build's image) and velocity w =
 * p_a / m_a - p_b / m_b from q and p, and in the same loop over the
 * coordinates bf = r0 . w (< 0: approaching) and the contact-time sums
 * of rc_k_mdx_pred_sums, the same bits (through arrays, perf put a
 * sixth of the CPU's first scan on the sums' reload of r0 and w from the
 * stack: 32 000 spheres, dt = 0.01, that scan 0.41-0.45 -> 0.36-0.38 s). */
RC_HD static inline void rc_k_mdx_first_fill(const rc_k_md *v, long e,
                                            int a, int b,
                                            rc_k_mdx_first_in *o)
{
    int d = v->dim, k;
    double ia = rc_k_md_im(v, a), ib = rc_k_md_im(v, b);
    double bf = 0.0, bb = 0.0, c = 0.0, ww = 0.0;
    const double *qa = v->q + (long)a * d, *qb = v->q + (long)b * d;
    for (k = 0; k < d; ++k) {
        double wk = v->p[(long)a * d + k] * ia - v->p[(long)b * d + k] * ib;
        double rk = (qa[k] - qb[k]) -
                    v->box.L[k] * (double)rc_k_md_cand_img(v->cand_m, e, k);
        double rn = rk + wk * 0.0;
        bf += rk * wk;
        bb += rn * wk;
        c += rn * rn;
        ww += wk * wk;
    }
    o->bf = bf;
    o->bb = bb;
    o->c = c;
    o->ww = ww;
    o->sig = rc_k_md_rad(v, a) + rc_k_md_rad(v, b);
}

RC_HD static inline int rc_k_mdx_first_gather(const rc_k_md *v, long t,
                                             long e, int a, int b,
                                             rc_k_mdx_first_in *o)
{
    if (rc_k_md_out_of_reach(v, t, a, b))
        return 0;
    rc_k_mdx_first_fill(v, e, a, b, o); /* the pair within reach */
    return 1;
}

RC_HD static inline int rc_k_mdx_first_meets(double bf, double bb, double c,
                                            double ww, double sig, double h)
{
    return (bf < 0.0) & (rc_k_mdx_time_of(bb, c, ww, sig, h) >= 0.0);
}

/* The screen of exact collisions (rc_k_md_screen_pair's place): 1 when
 * candidate rc_k_md_screened(v, t) is not in A, one of its
 * spheres was deflected since the last scan (or this is the step's first
 * scan), and the two meet along their paths within the step.  The first
 * scan passes over a pair predicted for after the step, and keeps a
 * prediction for each pair it tests. */
RC_HD static inline long rc_k_mdx_screen_pair_at(const rc_k_md *v, long t)
{
    long e;
    int a, b;
    double s[3];
    if (v->at_start && rc_k_mdx_predicted(v, t))
        return 0; /* nothing else read */
    e = rc_k_md_screened(v, t);
    a = v->cand_i[e];
    b = v->cand_j[e];
    if (v->cand_m[e] & RC_K_MD_IN_A)
        return 0;
    if (!v->at_start) {
        if (!v->touched[a] && !v->touched[b])
            return 0;
        rc_k_md_cand_shift(v, e, s);
        return rc_k_mdx_path_pair(v, a, b, s);
    }
    {
        /* the step's first scan: no sphere has an impact yet, so both fly
         * from q with p over [0, h] (rc_k_mdx_path_pair's one segment),
         * most pairs leave at the first test (receding) */
        long pos = t + v->near_off;
        rc_k_mdx_first_in o;
        int hit;
        /* without predictions the spheres' reaches may rule the pair out
         * (rc_k_mdx_first_gather); with them the pair is tested, once for
         * as long as its prediction holds */
        if (!v->pred_t)
            return rc_k_mdx_first_gather(v, t, e, a, b, &o) &&
                   rc_k_mdx_first_meets(o.bf, o.bb, o.c, o.ww, o.sig, v->h);
        rc_k_mdx_first_fill(v, e, a, b, &o);
        if (!(o.bf < 0.0)) {
            /* receding along straight paths: apart until deflected */
            v->pred_t[pos] = (float)INFINITY;
            return 0;
        }
        hit = rc_k_mdx_time_of(o.bb, o.c, o.ww, o.sig, v->h) >= 0.0;
        v->pred_t[pos] = rc_k_mdx_pred_of(
            o.bb, o.c, o.ww,
            rc_k_mdx_pred_sig(rc_k_md_rad(v, a), rc_k_md_rad(v, b)), v->ptime);
        return hit;
    }
}

/* The kernel's item: the common case (a pair predicted for after the
 * step, 98-99 % of a first scan's items) here, where the loop inlines
 * it, and the test of the rest in rc_k_mdx_screen_pair_at. */
RC_HD static inline void rc_k_mdx_screen_pair(const rc_k_md *v, long t)
{
#if !defined(__CUDA_ARCH__) && defined(__GNUC__)
    /* the CPU: the spheres' states of the pair due RC_K_MDX_AHEAD items
     * on, asked for now.  Of the first scan's items 1-2 % are tested
     * (the rest are predicted for after the step), each reading four
     * cache lines at random places, and that latency was half of the
     * scan (256 000 spheres at eta 0.3: 0.24 -> 0.17 s of 2.7).  A hint
     * only: nothing it reads changes a result */
    if (v->at_start && v->pred_t && t + RC_K_MDX_AHEAD < v->nscreen &&
        !rc_k_mdx_predicted(v, t + RC_K_MDX_AHEAD)) {
        long e2 = rc_k_md_screened(v, t + RC_K_MDX_AHEAD);
        rc_k_md_prefetch_state(v, v->cand_i[e2]);
        rc_k_md_prefetch_state(v, v->cand_j[e2]);
    }
#endif
    v->flag[t] = v->at_start && rc_k_mdx_predicted(v, t)
                     ? 0
                     : (unsigned char)rc_k_mdx_screen_pair_at(v, t);
}

RC_HD static inline long rc_k_mdx_screen_wall_at(const rc_k_md *v, long t)
{
    int ax = (int)(t / (2L * v->n)), i = (int)((t / 2) % v->n);
    int w = 2 * ax + (int)(t % 2);
    if (ax >= v->dim || v->box.periodic[ax] || v->wall_in[(long)i * 6 + w])
        return 0;
    if (!v->at_start && !v->touched[i])
        return 0;
    return rc_k_mdx_path_wall(v, i, w);
}

RC_HD static inline void rc_k_mdx_screen_wall(const rc_k_md *v, long t)
{
    v->flag[t] = (unsigned char)rc_k_mdx_screen_wall_at(v, t);
}

/* The predictor of exact collisions: q^p as rc_k_md_predict (the flight
 * to h without impacts); returns the farthest the sphere gets from q
 * within the step, |v| h + |g| h^2 / 2 (the flight can turn back under
 * gravity, so the end point alone does not bound it). */
RC_HD static inline double rc_k_mdx_flight_reach(const rc_k_md *v, long i)
{
    int k, d = v->dim;
    double s = 0.0;
    for (k = 0; k < d; ++k)
        s += v->p[i * d + k] * v->p[i * d + k];
    return rc_sqrt(s) * rc_k_md_im(v, i) * v->h + 0.5 * v->g_len * v->h * v->h;
}

RC_HD static inline double rc_k_mdx_predict_one(const rc_k_md *v, long i)
{
    rc_k_md_predict_one(v, i);
    return rc_k_mdx_flight_reach(v, i);
}

/* Sphere i's reach of the flight alone (a build at the step's start that
 * dropped the predictions, after a motion pass that set no reaches:
 * rc_dmd_candidates). */
RC_HD static inline void rc_k_mdx_reach_only(const rc_k_md *v, long i)
{
    rc_k_md_reach_set(v, i, rc_k_mdx_flight_reach(v, i), -1.0);
}

/* red[i] the square of that reach (rc_k_md_predict's place). */
RC_HD static inline void rc_k_mdx_predict_vals(const rc_k_md *v, long i,
                                               double out[2])
{
    double r = rc_k_mdx_predict_one(v, i);
    out[0] = rc_k_md_max_guard(r * r);
    rc_k_md_reach_set(v, i, r, -1.0);
    rc_k_md_save_p(v, i);
}

RC_HD static inline void rc_k_mdx_predict(const rc_k_md *v, long i)
{
    double o[2];
    rc_k_mdx_predict_vals(v, i, o);
    v->red[i] = o[0];
}

/* One sphere's motion at the step's start on its rows: q^p = q + h im (p
 * - h/2 grad) (rc_k_md_predict_one's), the flight's reach *r
 * (rc_k_mdx_flight_reach's; hg2 = 0.5 g_len h h) and the squared
 * displacement since the build *m2 (rc_k_md_moved_one's), the same
 * operations in the same order.  The X_MOTION body's arithmetic, and
 * the CPU launcher's loop over the spheres in lanes (cand_lanes.c). */
RC_HD static inline void rc_k_mdx_motion_rows(
    const int D, double h, double im, const double *grad, double hg2,
    const double *L, const double *q, const double *p, const double *qb,
    const int *img, double *qp, double *r, double *m2)
{
    int k;
    double s = 0.0, w = 0.0;
    for (k = 0; k < D; ++k)
        qp[k] = q[k] + h * im * (p[k] - 0.5 * h * grad[k]);
    for (k = 0; k < D; ++k)
        s += p[k] * p[k];
    *r = rc_sqrt(s) * im * h + hg2;
    for (k = 0; k < D; ++k) {
        double u = q[k] + img[k] * L[k] - qb[k];
        w += u * u;
    }
    *m2 = w;
}

/* rc_k_md_motion with the flight's bound (rc_k_mdx_predict). */
RC_HD static inline void rc_k_mdx_motion_vals(const rc_k_md *v, long i,
                                              double out[2])
{
    int k, d = v->dim;
    double r, m2, g[3];
    for (k = 0; k < d; ++k)
        g[k] = rc_k_md_grad(v, v->grad, i, k);
    rc_k_mdx_motion_rows(d, v->h, rc_k_md_im(v, i), g,
                         0.5 * v->g_len * v->h * v->h, v->box.L,
                         v->q + i * d, v->p + i * d, v->qbuild + i * d,
                         v->image + i * d, v->qp + i * d, &r, &m2);
    out[0] = rc_k_md_max_guard(r * r);
    out[1] = rc_k_md_max_guard(m2); /* as rc_k_md_motion_vals */
    if (v->reach_set) /* else nothing reads them: a square root saved */
        rc_k_md_reach_set(v, i, r, rc_sqrt(m2));
    rc_k_md_save_p(v, i);
}

RC_HD static inline void rc_k_mdx_motion(const rc_k_md *v, long i)
{
    double o[2];
    rc_k_mdx_motion_vals(v, i, o);
    v->red[i] = o[0];
    v->red[v->n + i] = o[1];
}

/* Contact c's next impact at or after t from the spheres' current
 * flights; -1 if none before h. */
RC_HD static inline double rc_k_mdx_contact_time(const rc_k_md *v,
                                                 const rc_k_md_contact *c,
                                                 double t)
{
    int d = v->dim;
    const double *yi = v->qp + (long)c->i * d, *pi = v->p + (long)c->i * d;
    if (c->j >= 0) {
        const double *yj = v->qp + (long)c->j * d,
                     *pj = v->p + (long)c->j * d;
        return rc_k_mdx_pair_time(d, yi, yj, c->s, pi, pj,
                                  rc_k_md_im(v, c->i), rc_k_md_im(v, c->j),
                                  rc_k_md_rad(v, c->i) + rc_k_md_rad(v, c->j),
                                  t, v->h);
    }
    return rc_k_mdx_wall_time(v, c->i, -1 - c->j, yi, pi, t, v->h);
}

/* Contact c's normal (into c->n), distance (pairs) and normal speed
 * n . (v_i - v_j) at time t. */
RC_HD static inline double rc_k_mdx_contact_at(const rc_k_md *v,
                                               rc_k_md_contact *c, double t)
{
    int d = v->dim, k, i = c->i;
    double sp = 0.0;
    if (c->j >= 0) {
        int j = c->j;
        double r[3] = {0.0, 0.0, 0.0}, w[3] = {0.0, 0.0, 0.0}, rr = 0.0,
               rw = 0.0;
        for (k = 0; k < d; ++k) {
            w[k] = v->p[(long)i * d + k] * rc_k_md_im(v, i) -
                   v->p[(long)j * d + k] * rc_k_md_im(v, j);
            r[k] = ((v->qp[(long)i * d + k] - v->qp[(long)j * d + k]) -
                    c->s[k]) + t * w[k];
            rr += r[k] * r[k];
            rw += r[k] * w[k];
        }
        rr = rc_sqrt(rr);
        for (k = 0; k < 3; ++k)
            c->n[k] = k < d && rr > 0.0 ? r[k] / rr : (double)(k == 0);
        /* r . w / |r|: its sign is that of rc_k_mdx_pair_time's test (the
         * same sum), so a contact it finds approaching is reflected and
         * cannot be found again at the same time */
        sp = rr > 0.0 ? rw / rr : 0.0;
        c->dist = rr;
    } else {
        int w = -1 - c->j, ax = w / 2;
        for (k = 0; k < 3; ++k)
            c->n[k] = 0.0;
        c->n[ax] = w % 2 ? -1.0 : 1.0;
        sp = c->n[ax] * (v->p[(long)i * d + ax] * rc_k_md_im(v, i) +
                         v->gravity[ax] * t);
        c->dist = 0.0;
    }
    return sp;
}

/* Log sphere x's state before an impact at time t (once per time), in
 * the island's log ev[base, base + room); 0 when the log is full. */
RC_HD static inline int rc_k_mdx_log(const rc_k_md *v, int x, double t,
                                     long base, long room, long *used)
{
    int d = v->dim, k;
    long h = v->ev_head[x];
    rc_k_md_event *e;
    if (h >= 0 && v->ev[h].t == t)
        return 1;
    if (*used >= room)
        return 0;
    e = v->ev + base + *used;
    e->t = t;
    for (k = 0; k < 3; ++k) {
        e->y[k] = k < d ? v->qp[(long)x * d + k] : 0.0;
        e->pv[k] = k < d ? v->p[(long)x * d + k] : 0.0;
    }
    e->next = h;
    v->ev_head[x] = (int)(base + *used); /* < 2^31: rc_dmd_island_scratch */
    ++*used;
    return 1;
}

/* Impulse lam along contact c at time t: momenta and transported
 * positions (y -= t J / m), the contact's totals; its spheres marked in
 * touched unless that is NULL. */
RC_HD static inline void rc_k_mdx_impulse(const rc_k_md *v,
                                          rc_k_md_contact *c, double lam,
                                          double t, unsigned char *touched)
{
    int d = v->dim, k;
    rc_k_md_kick(d, v->p, touched, c, lam);
    for (k = 0; k < d; ++k) {
        v->qp[(long)c->i * d + k] -= t * rc_k_md_im(v, c->i) * lam * c->n[k];
        if (c->j >= 0)
            v->qp[(long)c->j * d + k] +=
                t * rc_k_md_im(v, c->j) * lam * c->n[k];
    }
    c->lam += lam;
    c->vir += lam * c->dist;
    c->hits++;
}

/* Whether island s (contacts [lo, lo + m) of the order) has a contact
 * that joined A since the last island round (con_new): else it is one
 * of the last round's, taken as it was (rc_k_mdx_island), and given no
 * scratch or log room (rc_k_mdx_isl_size). */
RC_HD static inline int rc_k_mdx_isl_fresh(const rc_k_md *v, long lo, long m)
{
    long a;
    int fresh = 0;
    for (a = lo; a < lo + m; ++a)
        fresh |= v->order[a] >= v->con_new;
    return fresh;
}

/* The momenta of sphere x at the step's start kept in p0, before its
 * first island run of the step changes them (p_kept): only an island
 * run changes a sphere's momenta within an exact step, so until then p
 * holds them.  The motion pass then writes no copy of every sphere's
 * (48 of its 180 bytes a sphere, on a pass bound by memory); a step
 * has islands for about 2 % of the spheres.  Only without a kick
 * (p_lazy: no field; with one the motion pass keeps them all, as a
 * failed kick is restored from them).  The step's last call clears the
 * marks (rc_k_mdx_unkeep over its contacts), so a step that fails
 * before is restored (rc_k_mdx_restore_p, which clears them too). */
RC_HD static inline void rc_k_mdx_keep_p(const rc_k_md *v, int x)
{
    int k, d = v->dim;
    if (!v->p_lazy || v->p_kept[x])
        return;
    for (k = 0; k < d; ++k)
        v->p0[(long)x * d + k] = v->p[(long)x * d + k];
    v->p_kept[x] = 1;
}

/* Contact c of A: its spheres' marks cleared at the step's end (every
 * sphere an island ran is in one of its contacts).  Two contacts of a
 * sphere write the same 0. */
RC_HD static inline void rc_k_mdx_unkeep(const rc_k_md *v, long c)
{
    v->p_kept[v->con[c].i] = 0;
    if (v->con[c].j >= 0)
        v->p_kept[v->con[c].j] = 0;
}

/* Sphere i's log closed and its kept momenta forgotten: at the start,
 * and at the step after a failed one (whose restore may have failed
 * too). */
RC_HD static inline void rc_k_mdx_log_reset(const rc_k_md *v, long i)
{
    v->ev_head[i] = -1;
    v->p_kept[i] = 0;
}

/* A failed exact step: sphere i's momenta of the step's start back from
 * p0 where an island changed them, and the mark cleared. */
RC_HD static inline void rc_k_mdx_restore_p(const rc_k_md *v, long i)
{
    int k, d = v->dim;
    if (!v->p_kept[i])
        return;
    for (k = 0; k < d; ++k)
        v->p[i * d + k] = v->p0[i * d + k];
    v->p_kept[i] = 0;
}

/* Island s: its impacts in time order within the step (see the top of
 * this file).  isl_passes[s]: impacts resolved; isl_fail[s]: 0,
 * RC_K_MD_EVENTS (more than rc_k_mdx_max_events), RC_K_MD_GROUP
 * (simultaneous impacts beyond the per-thread NNLS), RC_K_MD_PASSES or
 * RC_K_MD_NNLS (their reflection). */
RC_HD static inline void rc_k_mdx_island(const rc_k_md *v, long s)
{
    long lo = v->istart[s], m = v->istart[s + 1] - lo, a;
    long base = v->ev_base + v->eoff[s], room = v->eoff[s + 1] - v->eoff[s],
         used = 0;
    long impacts = 0, limit = rc_k_mdx_max_events(m);
    double *b, *lam, *gram, *w, *te, t = 0.0;
    int *V, *iw, d = v->dim, k;
    const int *order = v->order + lo;
    unsigned char *touched = NULL;
#if !defined(__CUDA_ARCH__) && defined(__GNUC__)
    /* the CPU: an island first reads its contacts and their spheres'
     * states at random places; the first contact of the island 4 on, and
     * the states of that of the island 2 on, asked for now (most islands
     * are one or two contacts, and a thread takes them in runs of 16; a
     * hint: no result changes) */
    if (s + 4 < v->nisl)
        __builtin_prefetch(v->con + v->order[v->istart[s + 4]]);
    if (s + 2 < v->nisl) {
        const rc_k_md_contact *c2 = v->con + v->order[v->istart[s + 2]];
        int e2;
        for (e2 = 0; e2 < 2; ++e2) {
            long x2 = (long)(e2 ? c2->j : c2->i) * v->dim;
            if (x2 < 0)
                continue;
            __builtin_prefetch(v->q + x2);
            __builtin_prefetch(v->p0 + x2, 1);
            __builtin_prefetch(v->p_kept + x2 / v->dim);
            __builtin_prefetch(v->p + x2, 1);
            __builtin_prefetch(v->qp + x2, 1);
        }
    }
#endif
    rc_k_md_island_scratch(v, s, &b, &lam, &gram, &w, &V, &iw);
    te = lam + m;
    v->isl_fail[s] = 0;
    v->isl_passes[s] = 0;
    /* An island without a contact that joined A since the last round is
     * one of the last round's, with its contacts in the same order (an
     * island only grows by a joining contact): it has the same impacts
     * and paths as then, which the closing round after the last one
     * screened, so its spheres are not marked (the engine's next closing
     * round screens only what changed). */
    if (rc_k_mdx_isl_fresh(v, lo, m))
        touched = v->touched;
    /* Not processed again, then: its spheres' states and logs, and its
     * contacts' impulses and hits, are those its last run left (no other
     * island touches its spheres, and the logs of a round lie beyond the
     * last's: ev_base), and its impacts are kept in its first contact.
     * About half of a step's island runs were these (two rounds a step,
     * most islands unchanged in the second). */
    if (!touched) {
        v->isl_passes[s] = v->con[order[0]].isl_impacts;
        return;
    }
    /* from the step's start (the islands may be processed again after
     * the set grew) */
    for (a = 0; a < m; ++a) {
        rc_k_md_contact *c = v->con + order[a];
        int x, e;
        c->lam = c->vir = 0.0;
        c->hits = 0;
        for (e = 0; e < 2; ++e) {
            x = e ? c->j : c->i;
            if (x < 0)
                continue;
            rc_k_mdx_keep_p(v, x);
            for (k = 0; k < d; ++k) {
                v->qp[(long)x * d + k] = v->q[(long)x * d + k];
                v->p[(long)x * d + k] = v->p0[(long)x * d + k];
            }
            v->ev_head[x] = -1;
        }
    }
    for (;;) {
        double tmin = -1.0;
        long ns = 0;
        for (a = 0; a < m; ++a) {
            te[a] = rc_k_mdx_contact_time(v, v->con + order[a], t);
            if (te[a] >= 0.0 && (tmin < 0.0 || te[a] < tmin))
                tmin = te[a];
        }
        if (tmin < 0.0)
            break;
        for (a = 0; a < m; ++a)
            if (te[a] >= 0.0 && te[a] <= tmin + v->t_tol)
                V[ns++] = order[a];
        impacts += ns;
        if (impacts > limit) {
            v->isl_fail[s] = RC_K_MD_EVENTS;
            return;
        }
        t = tmin;
        /* the state before the impacts, for the paths */
        for (a = 0; a < ns; ++a) {
            const rc_k_md_contact *c = v->con + V[a];
            if (!rc_k_mdx_log(v, c->i, t, base, room, &used) ||
                (c->j >= 0 && !rc_k_mdx_log(v, c->j, t, base, room, &used))) {
                v->isl_fail[s] = RC_K_MD_EVENTS;
                return;
            }
        }
        if (ns == 1) {
            /* one impact: the elastic collision, lam = -2 n.v / G */
            rc_k_md_contact *c = v->con + V[0];
            double sp = rc_k_mdx_contact_at(v, c, t);
            double gm = rc_k_md_gram(v, c, c);
            if (sp < 0.0)
                rc_k_mdx_impulse(v, c, -2.0 * sp / gm, t, touched);
            continue;
        }
        /* simultaneous impacts: generalized reflection in passes over
         * those still approaching (seed 000 Algorithm 2) */
        if (ns > v->dense_max) {
            v->isl_fail[s] = RC_K_MD_GROUP;
            return;
        }
        {
            int pass;
            long nv, q;
            for (pass = 0;; ++pass) {
                /* approaching contacts to the front of V */
                for (nv = 0, q = 0; q < ns; ++q) {
                    rc_k_md_contact *c = v->con + V[q];
                    double sp = rc_k_mdx_contact_at(v, c, t);
                    if (sp < 0.0) {
                        int tmp = V[nv];
                        V[nv] = V[q];
                        V[q] = tmp;
                        b[nv++] = 2.0 * sp;
                    }
                }
                if (nv == 0)
                    break;
                if (pass >= v->max_passes) {
                    v->isl_fail[s] = RC_K_MD_PASSES;
                    return;
                }
                rc_k_md_gram_fill(v, V, nv, 1.0, gram);
                {
                    /* solver tolerance: 1e-12 of its own scale, as the
                     * reflection islands */
                    rc_k_nnls_result r = rc_k_nnls_gram((int)nv, gram, b, lam,
                                                        w, iw, 0, 1e-12);
                    if (r.status != 0) {
                        v->isl_fail[s] = RC_K_MD_NNLS;
                        return;
                    }
                }
                for (q = 0; q < nv; ++q)
                    if (lam[q] != 0.0)
                        rc_k_mdx_impulse(v, v->con + V[q], lam[q], t,
                                         touched);
            }
        }
    }
    v->isl_passes[s] = (int)impacts;
    v->con[order[0]].isl_impacts = (int)impacts;
}

/* Island s after its impacts: red[s] = the square of the farthest any of
 * its spheres can have got from q within the step (its fastest flight
 * segment), as rc_k_mdx_predict bounds a free flight. */
RC_HD static inline void rc_k_mdx_island_reach(const rc_k_md *v, long s)
{
    long a;
    int d = v->dim, k, e;
    double vmax = 0.0, r;
    for (a = v->istart[s]; a < v->istart[s + 1]; ++a) {
        const rc_k_md_contact *c = v->con + v->order[a];
        for (e = 0; e < 2; ++e) {
            int x = e ? c->j : c->i;
            rc_k_mdx_seg S;
            if (x < 0)
                continue;
            rc_k_mdx_seg_last(v, x, &S);
            do {
                double sp = 0.0;
                for (k = 0; k < d; ++k)
                    sp += S.p[k] * S.p[k];
                vmax = rc_fmax(vmax, rc_sqrt(sp) * rc_k_md_im(v, x));
            } while (rc_k_mdx_seg_back(v, &S));
        }
    }
    r = vmax * v->h + 0.5 * v->g_len * v->h * v->h;
    v->red[s] = r * r;
}

/* Sphere x has been in A this step, so it may have left its straight
 * path: its pairs' predictions are forgotten (0).  Two islands may write
 * one pair's: the same value. */
RC_HD static inline void rc_k_mdx_forget(const rc_k_md *v, int x)
{
    long u;
    for (u = rc_k_md_nb_first(v, x); u < v->nb_end[x]; ++u)
        v->pred_t[v->nb_pos[u]] = 0.0f;
}

/* Island s at the end of the step: each sphere's position at h from its
 * last flight, x = y + h M^-1 (p - h/2 grad V) (the predictor's
 * expression with y for q; the kick that follows adds -h grad V to p),
 * its pairs' predictions forgotten, and the logs closed (ev_head back to
 * -1).  A sphere in several contacts is moved and forgotten once: -2
 * marks it done until the second loop (forgotten at each of its
 * contacts before, an island's spheres' lists walked up to twice over
 * at eta 0.45). */
RC_HD static inline void rc_k_mdx_island_end(const rc_k_md *v, long s)
{
    long a;
    int d = v->dim, k, e;
    for (a = v->istart[s]; a < v->istart[s + 1]; ++a) {
        const rc_k_md_contact *c = v->con + v->order[a];
        for (e = 0; e < 2; ++e) {
            int x = e ? c->j : c->i;
            if (x < 0 || v->ev_head[x] == -2)
                continue;
            for (k = 0; k < d; ++k)
                v->qp[(long)x * d + k] +=
                    v->h * rc_k_md_im(v, x) *
                    (v->p[(long)x * d + k] -
                     0.5 * v->h * rc_k_md_grad(v, v->grad, x, k));
            if (v->pred_t)
                rc_k_mdx_forget(v, x);
            v->ev_head[x] = -2;
        }
    }
    for (a = v->istart[s]; a < v->istart[s + 1]; ++a) {
        const rc_k_md_contact *c = v->con + v->order[a];
        v->ev_head[c->i] = -1;
        if (c->j >= 0)
            v->ev_head[c->j] = -1;
    }
}

/* Island s's scratch with exact collisions: the NNLS of a group of
 * simultaneous impacts (up to dense_max contacts) and the log's room. */
RC_HD static inline void rc_k_mdx_isl_size(const rc_k_md *v, long s)
{
    long m = v->istart[s + 1] - v->istart[s];
    long g = rc_k_md_dense_m(v, m);
    if (!rc_k_mdx_isl_fresh(v, v->istart[s], m)) { /* no room */
        v->woff[s] = 0;
        v->eoff[s] = 0;
        return;
    }
    v->woff[s] = g * g + rc_k_nnls_work_doubles((int)g);
    /* the full room for an island whose last run failed (log_full: the
     * engine's second run of a round) */
    v->eoff[s] = v->log_full && v->isl_fail[s]
                     ? rc_k_mdx_log_room(m)
                     : rc_k_mdx_log_first(
                           m, m == 1 && v->con[v->order[v->istart[s]]].j >= 0);
}

/* ------------------------------------------ the closing rounds' list */

/* A closing round (rc_dmd_extend after a step's first scan) needs only
 * the pairs and walls of the spheres touched since the last scan: every
 * other item's flag is 0 (rc_k_md_screen_pair_at, rc_k_mdx_screen_pair_at
 * and the walls').  A touched sphere is an endpoint of a contact of A
 * (only A's impulses change momenta), so the endpoints of A's contacts
 * list them: each touched one adds its candidates' screened positions t
 * (the index nb_end, nb_pos) and its wall items ncand + t as sort keys.
 * Sorted, they are the items of the full screen that can flag, in its
 * order (the pairs', then the walls'), so A gets the same contacts in the
 * same order.  Keys repeat (a sphere in several contacts, a pair of two
 * touched spheres): the first of equal keys is screened. */

/* close_cnt[u] for endpoint u = 2 c + side of contact c: the keys it
 * adds. */
RC_HD static inline void rc_k_md_close_count(const rc_k_md *v, long u)
{
    const rc_k_md_contact *c = v->con + u / 2;
    int x = u % 2 ? c->j : c->i;
    v->close_cnt[u] = x >= 0 && v->touched[x]
                          ? v->nb_end[x] - rc_k_md_nb_first(v, x) +
                                v->close_nwall
                          : 0;
}

/* Endpoint u's keys at close_cnt[u] (scanned). */
RC_HD static inline void rc_k_md_close_fill(const rc_k_md *v, long u)
{
    const rc_k_md_contact *c = v->con + u / 2;
    int x = u % 2 ? c->j : c->i, ax, side;
    long at = v->close_cnt[u], a;
    if (v->close_cnt[u + 1] == at)
        return;
    for (a = rc_k_md_nb_first(v, x); a < v->nb_end[x]; ++a, ++at) {
        v->close_key[at] = v->nb_pos[a];
        v->close_val[at] = (int)at;
    }
    for (ax = 0; ax < v->dim; ++ax)
        for (side = 0; side < 2 && !v->box.periodic[ax]; ++side, ++at) {
            v->close_key[at] =
                (int)(v->ncand + 2L * (ax * (long)v->n + x) + side);
            v->close_val[at] = (int)at;
        }
}

/* Item u of the sorted keys: flag[u], the screen's of its pair (a
 * position within the screened prefix nscreen) or wall. */
RC_HD static inline void rc_k_md_close_screen(const rc_k_md *v, long u)
{
    long key = v->close_key[u], f = 0;
#if !defined(__CUDA_ARCH__) && defined(__GNUC__)
    /* the CPU: each item reads its candidate, then its spheres' states,
     * at places apart; asked for 16 and 8 items on (a hint: no result
     * changes) */
    if (u + 16 < v->nclose && v->close_key[u + 16] < v->nscreen) {
        long k2 = v->close_key[u + 16];
        __builtin_prefetch(v->cand_i + k2);
        __builtin_prefetch(v->cand_j + k2);
        __builtin_prefetch(v->cand_m + k2);
    }
    if (u + 8 < v->nclose && v->close_key[u + 8] < v->nscreen) {
        long k1 = v->close_key[u + 8];
        int a = v->cand_i[k1], b = v->cand_j[k1];
        rc_k_md_prefetch_state(v, a);
        rc_k_md_prefetch_state(v, b);
        __builtin_prefetch(v->qp + (long)a * v->dim);
        __builtin_prefetch(v->qp + (long)b * v->dim);
        __builtin_prefetch(v->ev_head + a);
        __builtin_prefetch(v->ev_head + b);
    }
#endif
    if (u == 0 || v->close_key[u - 1] != key) {
        if (key < v->nscreen)
            f = v->exact ? rc_k_mdx_screen_pair_at(v, key)
                         : rc_k_md_screen_pair_at(v, key);
        else if (key >= v->ncand)
            f = v->exact ? rc_k_mdx_screen_wall_at(v, key - v->ncand)
                         : rc_k_md_screen_wall_at(v, key - v->ncand);
    }
    v->flag[u] = (unsigned char)f;
}

/* Flagged item u of the closing list (hit[u], an item of the sorted
 * keys): its contact into A at slot ncon + u. */
RC_HD static inline void rc_k_md_close_push(const rc_k_md *v, long u)
{
    long key = v->close_key[v->hit[u]];
    if (key < v->ncand)
        rc_k_md_push_pair_at(v, key, u);
    else
        rc_k_md_push_wall_at(v, key - v->ncand, u);
}

#ifdef __cplusplus
}
#endif

#endif

/* Per-particle, per-pair, per-contact and per-island bodies of the
 * large-system GVI step (DESIGN §6), shared by the device-shaped engine's
 * two launchers: a CPU loop (src/host/md/dengine_cpu.c) and a CUDA grid
 * (src/kernels/rc_cuda_md.cu).  The host engine (src/host/md/engine.c)
 * uses the same contact, Gram, speed and pair-test bodies.
 *
 * Everything the bodies read or write is in one view, rc_k_md, passed by
 * value: plain pointers into the launcher's memory (host or device) and
 * the step's parameters.  A body touches only its own item's outputs,
 * except where it says "atomic": counts into a cell or a particle, and
 * union-find hooks.  Where atomics could make an order depend on the
 * schedule, a sort (per particle list) or a stable sort by key (contacts
 * by island) that follows restores one canonical order, so both
 * launchers produce the same arrays bit for bit (see the notes at each
 * body).
 *
 * Rounding: each body does the same operations in the same order as the
 * host engine's code for the same quantity (rc_md_step in engine.c):
 * pair gaps, normals, speeds, Gram entries and impulses are bitwise equal
 * to the host engine's as long as the compiler does not contract a*b+c
 * (strict-FP builds). */
#ifndef RC_MD_H
#define RC_MD_H

#include <float.h>

#include "rc_box.h"
#include "rc_dense.h"
#include "rc_hd.h"
#include "rc_math.h"
#include "rc_nnls.h"
#include "rc_potential.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ atomics */

/* Relaxed atomic add (returns the old value) and compare-and-swap
 * (returns the old value).  The CPU launcher runs these loops serially,
 * but the GCC builtins keep the bodies correct under OpenMP too. */
RC_HD static inline long rc_k_atomic_add_long(long *p, long v)
{
#if defined(__CUDA_ARCH__)
    return (long)atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

RC_HD static inline int rc_k_atomic_cas_int(int *p, int expect, int val)
{
#if defined(__CUDA_ARCH__)
    return atomicCAS(p, expect, val);
#else
    __atomic_compare_exchange_n(p, &expect, val, 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
    return expect;
#endif
}

/* ----------------------------------------------------------- contacts */

/* One contact: a sphere pair (j >= 0) or a sphere and a wall (j < 0:
 * wall = -1 - j = 2 axis + side, side 0 the wall at 0, 1 the wall at L). */
typedef struct rc_k_md_contact {
    int i, j;
    double gap;  /* g at the start of the step */
    double n[3]; /* unit normal: d g / d q_i (d g / d q_j = -n) */
    double dist; /* centre distance (pairs) */
    double lam;  /* impulse received in this step (reflections) */
    double mu;   /* impulse holding it in the position update */
    double s[3]; /* pairs: the periodic shift L m with x_i - x_j - L m the
                    minimum image (the candidate's cand_m) */
    double vir;  /* exact collisions: sum of impulse times distance */
    int hits;    /* exact collisions: impacts in this step */
    int isl_impacts; /* exact collisions: the impacts of the island whose
                        first contact this is, as its last run found them
                        (the island taken as it was: rc_k_mdx_island) */
} rc_k_md_contact;

/* Gap, normal and centre distance of the pair (i, j) at positions x. */
RC_HD static inline double rc_k_md_pair_gap_r(const rc_k_box *b, double ri,
                                              double rj, const double *x,
                                              int i, int j, double n[3],
                                              double *dist)
{
    int k, d = b->dim;
    double del[3] = {0.0, 0.0, 0.0}, r;
    rc_k_box_delta(b, x + (long)i * d, x + (long)j * d, del);
    r = rc_sqrt(rc_dot(d, del, del));
    for (k = 0; k < 3; ++k)
        n[k] = k < d && r > 0.0 ? del[k] / r : (double)(k == 0 && !(r > 0.0));
    *dist = r;
    return r - ri - rj;
}

RC_HD static inline double rc_k_md_pair_gap(const rc_k_box *b,
                                            const double *radius,
                                            const double *x, int i, int j,
                                            double n[3], double *dist)
{
    return rc_k_md_pair_gap_r(b, radius[i], radius[j], x, i, j, n, dist);
}

/* Gap and normal of wall contact w (2 axis + side) of particle i. */
RC_HD static inline double rc_k_md_wall_gap(const rc_k_box *b,
                                            const double *radius,
                                            const double *x, int i, int w,
                                            double n[3])
{
    int ax = w / 2, side = w % 2;
    double xi = x[(long)i * b->dim + ax];
    n[0] = n[1] = n[2] = 0.0;
    n[ax] = side ? -1.0 : 1.0;
    return side ? b->L[ax] - radius[i] - xi : xi - radius[i];
}

/* Gap of contact c at x (its normal into n). */
RC_HD static inline double rc_k_md_gap(const rc_k_box *b,
                                       const double *radius, const double *x,
                                       const rc_k_md_contact *c, double n[3])
{
    double dist;
    return c->j >= 0 ? rc_k_md_pair_gap(b, radius, x, c->i, c->j, n, &dist)
                     : rc_k_md_wall_gap(b, radius, x, c->i, -1 - c->j, n);
}

/* Normal speed n . (v_i - v_j) of contact c. */
RC_HD static inline double rc_k_md_speed(int d, const double *p,
                                         const double *inv_mass,
                                         const rc_k_md_contact *c)
{
    int k;
    double s = 0.0;
    for (k = 0; k < d; ++k) {
        double v = p[(long)c->i * d + k] * inv_mass[c->i];
        if (c->j >= 0)
            v -= p[(long)c->j * d + k] * inv_mass[c->j];
        s += c->n[k] * v;
    }
    return s;
}

/* Impulse `imp` along contact c: p_i += imp n, p_j -= imp n; marks the
 * particles touched (their contacts must be screened again) unless
 * touched is NULL. */
RC_HD static inline void rc_k_md_kick(int d, double *p,
                                      unsigned char *touched,
                                      const rc_k_md_contact *c, double imp)
{
    int k;
    if (touched) {
        touched[c->i] = 1;
        if (c->j >= 0)
            touched[c->j] = 1;
    }
    for (k = 0; k < d; ++k) {
        p[(long)c->i * d + k] += imp * c->n[k];
        if (c->j >= 0)
            p[(long)c->j * d + k] -= imp * c->n[k];
    }
}

/* ----------------------------------------------------- the pair search */

/* The fast path alone: *d2 = |qi - qj|^2 by plain differences, and 1
 * when every |difference| is within lim (then *d2 is the minimum image's
 * bit for bit), 0 otherwise (near a periodic face, or NaN). */
RC_HD static inline int rc_k_pair_plain_d2(const double *lim, const double *qi,
                                           const double *qj, const int D,
                                           double *d2)
{
    double s = 0.0;
    int k, ok = 1;
    for (k = 0; k < D; ++k) {
        double d = qi[k] - qj[k];
        ok &= rc_fabs(d) <= lim[k];
        s += d * d;
    }
    *d2 = s;
    return ok;
}

/* The one pair test of the cell list, the reference and the device
 * engine, so all decide identically.  D = dim (a constant at inlined call
 * sites).  lim[k] = L/4 on a periodic axis, +inf on a walled one.
 *
 * Fast path: rc_k_box_delta leaves a periodic difference with |d| <= L/4
 * untouched (floor of a number in [1/4, 3/4] is 0, and d - L*0 == d), so
 * while every |d| is within lim the plain differences are its result bit
 * for bit and the division and floor are skipped.  The fast path has no
 * data-dependent branch: with ~1 particle per cell, mispredicted
 * branches, not arithmetic, set the cost of the search. */
RC_HD static inline int rc_k_pair_close(const rc_k_box *b, const double *lim,
                                        const double *qi, const double *qj,
                                        double cut2, const int D)
{
    double d2;
    int k;
    if (!rc_k_pair_plain_d2(lim, qi, qj, D, &d2)) {
        /* near a periodic face, or NaN */
        double x[3] = {0.0, 0.0, 0.0};
        rc_k_box_delta(b, qi, qj, x);
        d2 = 0.0;
        for (k = 0; k < D; ++k)
            d2 += x[k] * x[k];
    }
    return d2 < cut2;
}

/* The lim[] of rc_k_pair_close for box b. */
RC_HD static inline void rc_k_pair_limits(const rc_k_box *b, double *lim)
{
    int k;
    for (k = 0; k < 3; ++k)
        lim[k] = k < b->dim && b->periodic[k] ? 0.25 * b->L[k] : HUGE_VAL;
}

/* Cell coordinate of x = q / edge on an axis of nc cells.  Inside
 * [0, nc] it is floor(x) clamped to nc - 1 (q == L on a walled axis, and
 * q/edge rounding up to nc for q just below L).  Outside, periodic axes
 * wrap (a position a hair below 0 belongs next to L) and walled axes
 * clamp; NaN goes to cell 0 so that a bad position cannot index out of
 * range. */
RC_HD static inline int rc_k_cell_coord(double x, int nc, int periodic)
{
    if (x >= 0.0 && x <= (double)nc) /* q/edge rounds up to nc below L */
        return x < (double)nc ? (int)x : nc - 1;
    if (periodic && rc_isfinite(x)) {
        double f = rc_floor(x);
        double s = f - (double)nc * rc_floor(f / (double)nc);
        if (s >= 0.0 && s < (double)nc)
            return (int)s;
    }
    return x >= (double)nc ? nc - 1 : 0;
}

/* Neighbour-cell coordinates of s on one axis: s-1, s, s+1 wrapped on a
 * periodic axis and cut at the walls otherwise, each at most once (with
 * nc < 3 on a periodic axis the wrapped offsets coincide, and visiting a
 * cell twice would report its pairs twice).  Returns the count, writes
 * coordinate * stride. */
RC_HD static inline int rc_k_axis_neighbours(int s, int nc, int periodic,
                                             int stride, int *out)
{
    int m = 0;
    if (periodic) {
        if (nc == 1) {
            out[m++] = 0;
        } else if (nc == 2) {
            out[m++] = 0;
            out[m++] = stride;
        } else {
            out[m++] = (s == 0 ? nc - 1 : s - 1) * stride;
            out[m++] = s * stride;
            out[m++] = (s == nc - 1 ? 0 : s + 1) * stride;
        }
    } else {
        if (s > 0)
            out[m++] = (s - 1) * stride;
        out[m++] = s * stride;
        if (s < nc - 1)
            out[m++] = (s + 1) * stride;
    }
    return m;
}

/* Chunk length of the deterministic sums (rc_k_sum_chunk). */
#define RC_K_SUM_CHUNK 1024

/* ------------------------------------------------------------- the view */

/* Failure codes of an island (rc_k_md_reflect_island), as the host
 * engine numbers them, plus RC_K_MD_BIG: the island has more contacts
 * than the per-thread tier takes and goes to a larger tier. */
#define RC_K_MD_PASSES 1
#define RC_K_MD_NNLS 2
#define RC_K_MD_SETTLE 5 /* the position update's linearisation */
#define RC_K_MD_BIG 6
#define RC_K_MD_EVENTS 7 /* exact collisions: more impacts than allowed */
#define RC_K_MD_GROUP 8  /* exact collisions: simultaneous impacts beyond
                            the per-thread NNLS */

/* Exact collisions (rc_md_exact.h): one entry of an island's impact log,
 * the state of sphere `who` before its impact at time t (transported
 * coordinates: position y + t p/m + t^2 g / 2, momentum p + t m g), and
 * the sphere's previous entry (-1: none; its first state is q, p0). */
typedef struct rc_k_md_event {
    double t;
    double y[3], pv[3];
    long next;
} rc_k_md_event;

/* A candidate's byte (cand_m): bit 7 set while the pair is in A, below
 * it the image m in base 3, (m_0 + 1) + 3 (m_1 + 1) + 9 (m_2 + 1).  Each
 * m_k is -1, 0 or 1: the build wraps the positions into [0, L] and takes
 * m = floor(x / L + 1/2) of their difference x in [-L, L].  One byte a
 * candidate, where three for m and one for the mark were 4 MiB of the
 * peak at 256 000 spheres (eta 0.45). */
#define RC_K_MD_IN_A 0x80

/* Component k of candidate e's image m, as the int the build computed. */
RC_HD static inline int rc_k_md_cand_img(const unsigned char *cand_m, long e,
                                         int k)
{
    int c = cand_m[e] & 0x7f;
    return (k == 0 ? c : k == 1 ? c / 3 : c / 9) % 3 - 1;
}

/* Floats a sphere in the reach array (rc_k_md.reach). */
#define RC_K_MD_REACH 2

/* Buckets of the candidates by gap (rc_k_md_cand_info), 2^RC_K_MD_NEAR_BITS:
 * the finer they are, the closer a bucket's lower bound is to its gaps
 * (rc_k_md_out_of_reach). */
#define RC_K_MD_NEAR_BITS 6
#define RC_K_MD_NEAR (1 << RC_K_MD_NEAR_BITS)

typedef struct rc_k_md {
    rc_k_box box;
    int n, dim;
    double h, eps_g, eps_v, rmax;
    int moreau, max_passes, dense_max;
    int at_start;          /* the first contact scan of a step */
    /* particles [n] or [n dim] */
    double *q, *p, *qp, *grad, *inv_mass, *radius, *qbuild;
    double *mass;           /* [n] (gravity; observables) */
    double *dxs;            /* [n dim] displacement of the held contacts
                               (the position update, R3) */
    double *grad1;          /* [n dim] grad V at q^p (the pair potential's
                               step); grad and grad1 NULL without one (the
                               uniform field: rc_k_md_grad) */
    int has_pair;           /* a Lennard-Jones or WCA pair potential */
    rc_k_potential pair;    /* its kernel form; a[2] the squared cutoff */
    double *pair_c1, *pair_en, *pair_vir; /* [ncand]: per-candidate force
                               factor, energy and -c1 r^2 at q^p */
    long *toff, *tcur;      /* [n + 1]: each sphere's pairs as the larger
                               index (the transposed list), offsets and
                               fill cursors */
    int *tlist;             /* [ncand]: those pairs, ascending */
    double gravity[3];      /* uniform acceleration */
    double *ref;            /* [n dim] unwrapped reference positions of
                               the mean-squared displacement (or NULL) */
    int obs;                /* RC_K_MD_OBS_*: the term rc_k_md_observe
                               writes */
    int *image;
    unsigned char *touched; /* momentum changed since the last scan */
    unsigned char *wall_in; /* [6 n]: wall contact already in A */
    double *red;            /* [max(n, ncon) + 1] one value per item, for
                               the reductions that follow a body */
    /* cell list */
    int nc[3];
    double edge[3], lim[3], cut2;
    int ncell;
    int *cell_of;           /* [n] */
    long *cell_start;       /* [ncell + 1]: counts, then (scan) starts */
    long *cell_cur;         /* [ncell]: fill cursors; in red, a build's
                               alone (rc_dmd_candidates) */
    int *cell_idx;          /* [n] particles by cell */
    double *cell_q;         /* [n dim]: their positions, in that order (the
                               pair search reads runs of them) */
    /* candidate pairs (i < j), sorted by (i, j) as the build writes them;
     * without a pair potential then permuted into their gap buckets'
     * order (each bucket sorted by (i, j)), which the screens read
     * directly, with no index array (near NULL) */
    long *pair_off;         /* [n + 1]: counts, then (scan) offsets (the
                               build's; with a pair potential, the list's) */
    int *cand_i, *cand_j;   /* [ncand] */
    long ncand;
    unsigned char *cand_m;  /* [ncand]: the periodic image of the pair at
                               the build, m with x_i - x_j - L m the
                               minimum image (positions are wrapped into
                               the box only at builds, so m holds until the
                               next; 0 on walled axes), in one byte with
                               the pair's mark of A (rc_k_md_cand_img) */
    /* the candidates by their gap at the build (rc_k_md_cand_info):
     * RC_K_MD_NEAR buckets of width near_w, the last one every gap from
     * (RC_K_MD_NEAR - 1) near_w, the skin, on */
    int *near_key;          /* [ncand]: bucket, then (sorted) scratch; a
                               build's alone, in red (rc_dmd_candidates) */
    int *near;              /* [ncand]: candidates by bucket, stably; with a
                               pair potential (the force gather reads the
                               list by (i, j)), else a build's alone
                               (rc_dmd_candidates) and NULL after */
    long *near_count;       /* [RC_K_MD_NEAR + 1]: the buckets' starts in
                               the sorted order (rc_k_md_near_starts), the
                               last one ncand */
    double near_w;
    long nscreen;           /* the step screens items [0 .. nscreen) of
                               the bucket order (while a screen runs,
                               near_off and nscreen are the window it
                               screens: rc_dmd_extend) */
    long near_off;          /* the window's first item */
    long over_n;            /* the overlap check reads items [0 .. over_n)
                               of the bucket order: the buckets that the
                               spheres' motion since the build can have
                               closed (rc_dmd_observe) */
    /* each sphere's reach at the step's start (rc_k_md_reach_set): the
     * farthest it gets from q within the step, and its displacement since
     * the build (0 read for it after a build at this step's start,
     * reach_fresh), as floats rounded up; the first scan skips a pair
     * whose gap at the build exceeds the two spheres' reaches
     * (rc_k_md_out_of_reach) without reading its spheres' states */
    float *reach;           /* [RC_K_MD_REACH n] */
    int reach_fresh;
    int reach_set;          /* 1: the exact collisions' motion pass sets
                               the reaches (0 while the first scan has
                               predictions, which then read none;
                               rc_k_mdx_motion) */
    int reach_skip;         /* 1: the first scan skips the pairs out of
                               reach (0: a test's full screen) */
    /* the radius, inverse mass and mass every sphere has, 0 when they
     * differ: the kernels then read no per-sphere array for them
     * (rc_k_md_rad, rc_k_md_im, rc_k_md_mass; the same values, so the
     * same bits) */
    double uni_radius, uni_inv_mass, uni_mass;
    unsigned char *flag;    /* [nscreen + 6 n]: screen results, 1 where
                               the item's contact joins A (the pairs',
                               then the walls'); in red
                               (rc_dmd_flag_room) */
    int *hit;               /* [nflag]: the flagged items, in order
                               (rc_dmd_ops.select): contact ncon + u of A
                               is item hit[u]'s; in red */
    /* the extended set A */
    rc_k_md_contact *con;
    long ncon;
    /* islands */
    int *parent;            /* [n] union-find forest, then labels */
    int *key, *order;       /* [ncon]: island label and contact, sorted
                               by label (stable) */
    long *head;             /* [ncon + 1]: 1 where an island starts, then
                               (scan) its island number */
    long *istart;           /* [nisl + 1] */
    long nisl;
    long *woff;             /* [nisl + 1]: scratch sizes, then offsets */
    double *work;           /* per-island dense scratch (woff) */
    double *cwork;          /* [3 ncon]: b, lambda and impact times by
                               contact slot */
    int *iwork;             /* [3 ncon]: contact list and NNLS ints */
    int *isl_fail, *isl_passes; /* [nisl]: failure code; reflection passes
                               (stage 0) or contacts held (stage 1) */
    /* exact collisions (rc_md_exact.h) */
    int exact;              /* impacts at their times within the step */
    /* the first scan's predictions (exact collisions;
     * rc_k_mdx_screen_pair): a tested pair's earliest possible contact
     * along straight flights, as a time since the candidates' build,
     * rounded down (+inf: none; 0: none made, or one of its spheres has
     * been in A since, rc_k_mdx_forget) */
    float *pred_t;          /* [ncand] by screened position */
    double ptime;           /* this step's start, since the build */
    /* each sphere's candidates (rc_k_md_nb_count), in no order: the
     * positions of sphere s's at [nb_end[s - 1], nb_end[s]) (from 0 for
     * s = 0) of nb_pos */
    long *nb_end;           /* [n + 1]: counts, starts, then ends */
    int *nb_pos;            /* [2 ncand] */
    /* a closing round's short list (rc_k_md_close_count): per endpoint of
     * A's contacts the keys it adds, then (scan) offsets; the keys,
     * sorted; the sort's values (read by nothing); wall items a sphere
     * has (2 a walled axis) */
    long *close_cnt;        /* [2 ncon + 1] */
    int *close_key, *close_val; /* [nclose] */
    long nclose;
    int close_nwall;
    long con_new;           /* A's contacts from this slot on joined it
                               since the last island round: an island
                               with none of them has the same impacts and
                               paths as then, and marks nothing touched
                               (rc_k_mdx_island) */
    double *p0;             /* [n dim] momenta at the step's start */
    int save_p;             /* 1: the step's motion pass keeps them
                               (rc_k_md_save_p; GVI) */
    int p_lazy;             /* 1: exact collisions without a kick, whose
                               islands keep p0 (rc_k_mdx_keep_p) */
    unsigned char *p_kept;  /* [n] exact collisions: 1 where p0 holds the
                               sphere's momenta of the step's start, kept
                               by its first island run of the step; 0
                               between steps (rc_k_mdx_unkeep) */
    int *ev_head;           /* [n]: the sphere's latest log entry, -1 none
                               (then it flies from q with p) */
    long *eoff;             /* [nisl + 1]: log room, then offsets */
    rc_k_md_event *ev;      /* the islands' impact logs */
    int log_full;           /* 1: the islands that failed their last run
                               get the full log room (rc_k_mdx_isl_size) */
    long ev_base;           /* this round's logs from ev[ev_base] on; an
                               island taken as it was keeps its logs of
                               an earlier round, below */
    double g_len;           /* |gravity| */
    double t_tol;           /* impacts this close in time are one */
} rc_k_md;

/* ------------------------------------------------------ particle bodies */

/* Sphere i's radius and inverse mass for the screens (uni_radius). */
RC_HD static inline double rc_k_md_rad(const rc_k_md *v, int i)
{
    return v->uni_radius > 0.0 ? v->uni_radius : v->radius[i];
}

RC_HD static inline double rc_k_md_im(const rc_k_md *v, int i)
{
    return v->uni_inv_mass > 0.0 ? v->uni_inv_mass : v->inv_mass[i];
}

RC_HD static inline double rc_k_md_mass(const rc_k_md *v, long i)
{
    return v->uni_mass > 0.0 ? v->uni_mass : v->mass[i];
}

/* Gram entry n_a^T M^-1 n_b of contacts a and b (shared particles);
 * the inverse masses by rc_k_md_im (one mass: none read). */
RC_HD static inline double rc_k_md_gram(const rc_k_md *v,
                                        const rc_k_md_contact *a,
                                        const rc_k_md_contact *b)
{
    int k, d = v->dim;
    double nn = 0.0, s = 0.0;
    for (k = 0; k < d; ++k)
        nn += a->n[k] * b->n[k];
    /* particle of a (sign +1 for i, -1 for j) against each of b's */
    if (a->i == b->i)
        s += rc_k_md_im(v, a->i);
    if (b->j >= 0 && a->i == b->j)
        s -= rc_k_md_im(v, a->i);
    if (a->j >= 0) {
        if (a->j == b->i)
            s -= rc_k_md_im(v, a->j);
        if (b->j >= 0 && a->j == b->j)
            s += rc_k_md_im(v, a->j);
    }
    return s * nn;
}

/* Component k of particle i's grad V in g (grad, at q, or grad1, at
 * q^p): the array with a pair potential; without one (g NULL) the
 * uniform field alone, -m g, computed as rc_md_init's host copy was (the
 * same bits, and no [n dim] array read or held). */
RC_HD static inline double rc_k_md_grad(const rc_k_md *v, const double *g,
                                        long i, int k)
{
    return g ? g[i * v->dim + k] : -rc_k_md_mass(v, i) * v->gravity[k];
}

/* q^p = q + h M^-1 (p - h/2 grad V) for particle i; red[i] = its squared
 * displacement (the largest one bounds the step's motion). */
RC_HD static inline double rc_k_md_predict_one(const rc_k_md *v, long i)
{
    int k, d = v->dim;
    double s = 0.0;
    for (k = 0; k < d; ++k) {
        double u = v->h * v->inv_mass[i] *
                   (v->p[i * d + k] -
                    0.5 * v->h * rc_k_md_grad(v, v->grad, i, k));
        v->qp[i * d + k] = v->q[i * d + k] + u;
        s += u * u;
    }
    return s;
}

/* x >= 0 as a float no smaller than x: x raised by more than the
 * float's relative rounding (2^-24), and by 1e-30 for the floats below
 * the normal range; no branch or call, so the loops around it
 * vectorise. */
RC_HD static inline float rc_k_float_up(double x)
{
    return (float)(x * (1.0 + 2.0e-7) + 1e-30);
}

/* Sphere i's reach (the reach array): f the farthest it gets from q
 * within the step, m its displacement since the build (< 0: not
 * measured; a build follows, and reach_fresh holds). */
RC_HD static inline void rc_k_md_reach_set(const rc_k_md *v, long i,
                                           double f, double m)
{
    v->reach[RC_K_MD_REACH * i] = rc_k_float_up(f);
    v->reach[RC_K_MD_REACH * i + 1] = m >= 0.0 ? rc_k_float_up(m) : 0.0f;
}

/* A square x for the motion's max reduction, or +inf where it is not
 * finite (a NaN would be lost in the max): the motion pass's check of
 * the state at the step's start.  A sphere's displacement (its reach) is
 * not finite where its momentum is not, and its q^p = q + u is then
 * finite too (q was checked before, and lies within a skin of the box
 * since the last build wrapped it).  +inf makes rc_dmd_motion look for
 * the first sphere that is not finite (where a finite square overflowed
 * there is none, and the run goes on).  One compare and no branch: the
 * pass vectorises as before. */
RC_HD static inline double rc_k_md_max_guard(double x)
{
    return x <= DBL_MAX ? x : (double)INFINITY;
}

/* The momenta of the step's start kept in p0 by the step's motion pass
 * (save_p: rc_dmd_motion), which reads them anyway: a copy of its own
 * read them again (0.05 s of 100 steps of 256 000 spheres). */
RC_HD static inline void rc_k_md_save_p(const rc_k_md *v, long i)
{
    int k;
    if (v->save_p)
        for (k = 0; k < v->dim; ++k)
            v->p0[i * v->dim + k] = v->p[i * v->dim + k];
}

/* The predictor's item: its value, red[i] (rc_dmd_max_bodies). */
RC_HD static inline void rc_k_md_predict_vals(const rc_k_md *v, long i,
                                              double out[2])
{
    out[0] = rc_k_md_max_guard(rc_k_md_predict_one(v, i));
    rc_k_md_reach_set(v, i, rc_sqrt(out[0]), -1.0);
    rc_k_md_save_p(v, i);
}

RC_HD static inline void rc_k_md_predict(const rc_k_md *v, long i)
{
    double o[2];
    rc_k_md_predict_vals(v, i, o);
    v->red[i] = o[0];
}

/* Particle i wrapped into the box at a candidate build (the only place
 * positions are wrapped: between builds they move freely, and the
 * candidates' image shifts cand_m stay valid), with the predictor moved
 * by the same box lengths. */
RC_HD static inline void rc_k_md_wrap(const rc_k_md *v, long i)
{
    int k, d = v->dim, im[3];
    for (k = 0; k < d; ++k)
        im[k] = v->image[i * d + k];
    rc_k_box_wrap(&v->box, v->q + i * d, v->image + i * d);
    for (k = 0; k < d; ++k)
        if (v->image[i * d + k] != im[k]) /* the few that crossed a face:
                                             the others' q^p unwritten */
            v->qp[i * d + k] -=
                (double)(v->image[i * d + k] - im[k]) * v->box.L[k];
}

/* The squared displacement of particle i since the candidate list was
 * built (unwrapped coordinates). */
RC_HD static inline double rc_k_md_moved_one(const rc_k_md *v, long i)
{
    int k, d = v->dim;
    double s = 0.0;
    for (k = 0; k < d; ++k) {
        double u = v->q[i * d + k] + v->image[i * d + k] * v->box.L[k] -
                   v->qbuild[i * d + k];
        s += u * u;
    }
    return s;
}

/* A hint that sphere i's state (q, p) is read soon: the CPU's passes in
 * candidate order read the spheres' states at random places, and ask
 * for the lines some items ahead (nothing on the GPU; a hint changes no
 * result). */
#define RC_K_MD_AHEAD 32
RC_HD static inline void rc_k_md_prefetch_state(const rc_k_md *v, long i)
{
#if !defined(__CUDA_ARCH__) && defined(__GNUC__)
    __builtin_prefetch(v->q + i * v->dim);
    __builtin_prefetch(v->p + i * v->dim);
#else
    (void)v;
    (void)i;
#endif
}

/* The hint for sphere j of candidate e + RC_K_MD_AHEAD, for the passes
 * over the list in its (i, j) order (i runs in order, j at random); on
 * the GPU nothing, not even the index's load. */
RC_HD static inline void rc_k_md_prefetch_ahead(const rc_k_md *v, long e)
{
#if !defined(__CUDA_ARCH__) && defined(__GNUC__)
    if (e + RC_K_MD_AHEAD < v->ncand)
        rc_k_md_prefetch_state(v, v->cand_j[e + RC_K_MD_AHEAD]);
#else
    (void)v;
    (void)e;
#endif
}

/* red[i] = that displacement (rc_k_md_moved_one). */
RC_HD static inline void rc_k_md_moved(const rc_k_md *v, long i)
{
    v->red[i] = rc_k_md_moved_one(v, i);
}

/* The step's motion in one pass over the particles: the predictor
 * (red[i], rc_k_md_predict) and the displacement since the build
 * (red[n + i], rc_k_md_moved). */
RC_HD static inline void rc_k_md_motion_vals(const rc_k_md *v, long i,
                                             double out[2])
{
    double m2;
    out[0] = rc_k_md_max_guard(rc_k_md_predict_one(v, i));
    m2 = rc_k_md_moved_one(v, i);
    /* guarded too, so that no value is NaN: the max of the values is then
     * the same bits in any grouping (the fused pass, rc_dmd_max_bodies) */
    out[1] = rc_k_md_max_guard(m2);
    rc_k_md_reach_set(v, i, rc_sqrt(out[0]), rc_sqrt(m2));
    rc_k_md_save_p(v, i);
}

RC_HD static inline void rc_k_md_motion(const rc_k_md *v, long i)
{
    double o[2];
    rc_k_md_motion_vals(v, i, o);
    v->red[i] = o[0];
    v->red[v->n + i] = o[1];
}

/* Unwrapped position of particle i at the candidate build. */
RC_HD static inline void rc_k_md_snapshot(const rc_k_md *v, long i)
{
    int k, d = v->dim;
    for (k = 0; k < d; ++k)
        v->qbuild[i * d + k] =
            v->q[i * d + k] + v->image[i * d + k] * v->box.L[k];
}

/* Cell of particle i, into cell_of[i] and returned. */
RC_HD static inline int rc_k_md_cell_of(const rc_k_md *v, long i)
{
    int k, cell = 0, d = v->dim;
    const double *qi = v->q + i * d;
    for (k = d - 1; k >= 0; --k)
        cell = cell * v->nc[k] +
               rc_k_cell_coord(qi[k] / v->edge[k], v->nc[k],
                               v->box.periodic[k]);
    v->cell_of[i] = cell;
    return cell;
}

/* Cell of particle i, counted into cell_start[cell] (atomic). */
RC_HD static inline void rc_k_md_cell_count(const rc_k_md *v, long i)
{
    rc_k_atomic_add_long(v->cell_start + rc_k_md_cell_of(v, i), 1);
}

/* Slot t of the particles by cell: its position copied into cell_q, so
 * that the pair search reads neighbour cells as contiguous runs. */
RC_HD static inline void rc_k_md_cell_pos(const rc_k_md *v, long t)
{
    int k, d = v->dim;
    long i = v->cell_idx[t];
    for (k = 0; k < d; ++k)
        v->cell_q[t * d + k] = v->q[i * d + k];
}

/* Particle i into its cell's next slot (atomic cursor: the order inside
 * a cell is the schedule's, and nothing downstream depends on it). */
RC_HD static inline void rc_k_md_cell_fill(const rc_k_md *v, long i)
{
    long slot = rc_k_atomic_add_long(v->cell_cur + v->cell_of[i], 1);
    v->cell_idx[slot] = (int)i;
}

/* Slots [lo, hi) of the cell order against particle i (at qi): each j >
 * i within the cutoff appended to out[cnt ...] (when out is not NULL, in
 * slot order); returns the new count.  The test is rc_k_pair_close's,
 * with no branch in the common case: the minimum-image fallback runs only
 * for a pair that some component puts beyond lim (near a periodic face,
 * or NaN), and with `spare` (out has a slot beyond the pairs: the CPU
 * launcher's buffer) every j is stored and the count advanced by the
 * test's outcome, where a branch on it would mispredict at about one pair
 * in six. */
RC_HD static inline long rc_k_md_run_pairs(const rc_k_box *box,
                                           const double *lim,
                                           const double *qi, const double *cq,
                                           const int *idx, long lo, long hi,
                                           long i, double cut2, const int D,
                                           int *out, int spare, long cnt)
{
    long t;
    for (t = lo; t < hi; ++t) {
        const double *qj = cq + t * D;
        double d2;
        int j = idx[t], ok = rc_k_pair_plain_d2(lim, qi, qj, D, &d2), in;
        in = (j > i) & ok & (d2 < cut2);
        if ((j > i) & !ok)
            in = rc_k_pair_close(box, lim, qi, qj, cut2, D);
        if (out && (spare || in))
            out[cnt] = j;
        cnt += in;
    }
    return cnt;
}

/* The neighbourhood of a cell (itself and its neighbour cells, each
 * once) as runs [lo[r], hi[r]) of the cell order, r < the count
 * returned (at most RC_K_MD_RUNS).  Along x the neighbour cells are
 * adjacent in the cell order, so their particles are one run of cell_idx
 * (two where a periodic axis wraps): a few longer loops instead of many
 * of about one particle. */
#define RC_K_MD_RUNS 18
RC_HD static inline int rc_k_md_cell_runs(const rc_k_md *v, int cell,
                                          long *lo, long *hi)
{
    int nb1[3], nb2[3], lo0[2], hi0[2], c1, c2, e, f, r, n0, s0, s1, s2;
    int nc0 = v->nc[0], nr = 0;
    const long *cs = v->cell_start;
    s0 = cell % nc0;
    s1 = (cell / nc0) % v->nc[1];
    s2 = cell / (nc0 * v->nc[1]);
    if (v->box.periodic[0] && nc0 >= 3 && (s0 == 0 || s0 == nc0 - 1)) {
        n0 = 2;
        lo0[0] = s0 == 0 ? nc0 - 1 : s0 - 1;
        hi0[0] = s0 == 0 ? nc0 - 1 : s0;
        lo0[1] = 0;
        hi0[1] = s0 == 0 ? 1 : 0;
    } else {
        n0 = 1;
        lo0[0] = v->box.periodic[0] && nc0 < 3 ? 0 : (s0 > 0 ? s0 - 1 : 0);
        hi0[0] = v->box.periodic[0] && nc0 < 3 ? nc0 - 1
                                               : (s0 < nc0 - 1 ? s0 + 1 : s0);
    }
    c1 = rc_k_axis_neighbours(s1, v->nc[1], v->box.periodic[1], nc0, nb1);
    if (v->dim == 3) {
        c2 = rc_k_axis_neighbours(s2, v->nc[2], v->box.periodic[2],
                                  nc0 * v->nc[1], nb2);
    } else {
        c2 = 1;
        nb2[0] = 0;
    }
    for (f = 0; f < c2; ++f)
        for (e = 0; e < c1; ++e)
            for (r = 0; r < n0; ++r) {
                int row = nb2[f] + nb1[e];
                lo[nr] = cs[row + lo0[r]];
                hi[nr] = cs[row + hi0[r] + 1];
                ++nr;
            }
    return nr;
}

/* out[0 .. cnt) into ascending order (insertion sort: a particle's list
 * is ~10 long at fluid densities). */
RC_HD static inline void rc_k_md_sort_pairs(int *out, long cnt)
{
    long e;
    for (e = 1; e < cnt; ++e) {
        int j = out[e];
        long u = e;
        while (u > 0 && out[u - 1] > j) {
            out[u] = out[u - 1];
            --u;
        }
        out[u] = j;
    }
}

/* The particle in slot t of the cell order (its index i = cell_idx[t],
 * at cell_q + t dim, in cell `cell`) against every particle j > i of its
 * cell and its neighbour cells (each cell once): returns their count
 * and, with `out`, writes the j in ascending order there (sorted after
 * the search); `spare` as rc_k_md_run_pairs.  Its position is read from
 * cell_q, the copy in cell order (the same values as q, read in order
 * where q at i is a cache miss).  Tested as (i, j) with i < j, as the
 * host's cell list and its reference do, so the lists are the same bits.
 * Cost: about 27 density edge^3 pair tests. */
RC_HD static inline long rc_k_md_pairs_of(const rc_k_md *v, long t,
                                          int cell, int *out, int spare)
{
    long lo[RC_K_MD_RUNS], hi[RC_K_MD_RUNS], cnt = 0, i = v->cell_idx[t];
    int r, nr = rc_k_md_cell_runs(v, cell, lo, hi), d = v->dim;
    const double *qi = v->cell_q + t * d;
    const rc_k_box box = v->box;
    const double lim[3] = {v->lim[0], v->lim[1], v->lim[2]}, cut2 = v->cut2;
    for (r = 0; r < nr; ++r)
        cnt = d == 3 ? rc_k_md_run_pairs(&box, lim, qi, v->cell_q, v->cell_idx,
                                         lo[r], hi[r], i, cut2, 3, out, spare,
                                         cnt)
                     : rc_k_md_run_pairs(&box, lim, qi, v->cell_q, v->cell_idx,
                                         lo[r], hi[r], i, cut2, 2, out, spare,
                                         cnt);
    if (out)
        rc_k_md_sort_pairs(out, cnt);
    return cnt;
}

/* Item t of the pair search (slot t of the cell order, particle i =
 * cell_idx[t]): its count into pair_off[i] (write 0), or (write 1,
 * pair_off scanned) its pairs at cand_j[pair_off[i] ...], i at cand_i. */
RC_HD static inline void rc_k_md_pairs(const rc_k_md *v, long t, int write)
{
    long i = v->cell_idx[t];
    int cell = v->cell_of[i];
    if (!write) {
        v->pair_off[i] = rc_k_md_pairs_of(v, t, cell, (int *)0, 0);
    } else {
        long e, base = v->pair_off[i],
                cnt = rc_k_md_pairs_of(v, t, cell, v->cand_j + base, 0);
        for (e = 0; e < cnt; ++e)
            v->cand_i[base + e] = (int)i;
    }
}

/* ------------------------------------------------- pair potential bodies */

/* Candidate e's term of the pair potential at q^p: the force factor c1
 * (F_i = -c1 (q_i - q_j)), the energy and -c1 r^2 (its virial r . F), 0
 * beyond the cutoff, as the host engine's rc_md_forces computes them. */
RC_HD static inline void rc_k_md_pair_term(const rc_k_md *v, long e)
{
    int a = v->cand_i[e], b = v->cand_j[e], d = v->dim;
    double del[3] = {0.0, 0.0, 0.0}, c1 = 0.0, c2, s, en = 0.0, vir = 0.0;
    rc_k_box_delta(&v->box, v->qp + (long)a * d, v->qp + (long)b * d, del);
    s = rc_dot(d, del, del);
    if (s < v->pair.a[2]) {
        en = rc_k_radial_coeffs(&v->pair, d, del, &c1, &c2);
        vir = -(c1 * s);
    }
    v->pair_c1[e] = c1;
    v->pair_en[e] = en;
    v->pair_vir[e] = vir;
}

/* The transposed candidate list: pair e counted for (then filed under)
 * its larger sphere j (atomic), and each sphere's list sorted, so that
 * the order is the list's and not the schedule's. */
RC_HD static inline void rc_k_md_tcount(const rc_k_md *v, long e)
{
    rc_k_atomic_add_long(v->toff + v->cand_j[e], 1);
}

RC_HD static inline void rc_k_md_tfill(const rc_k_md *v, long e)
{
    long slot = rc_k_atomic_add_long(v->tcur + v->cand_j[e], 1);
    v->tlist[slot] = (int)e;
}

RC_HD static inline void rc_k_md_tsort(const rc_k_md *v, long j)
{
    long a, b, lo = v->toff[j], hi = v->toff[j + 1];
    for (a = lo + 1; a < hi; ++a) {
        int t = v->tlist[a];
        for (b = a; b > lo && v->tlist[b - 1] > t; --b)
            v->tlist[b] = v->tlist[b - 1];
        v->tlist[b] = t;
    }
}

/* Each sphere's candidates (nb_end, nb_pos), made at a build from the
 * list in the screened order: each position counted at both its spheres
 * (nb_end zeroed, then scanned into starts), then placed through the
 * starts as cursors, which leaves each sphere's end where its start was.
 * The order within a sphere's run is the atomics' (what reads it takes
 * the whole run, whatever its order: rc_k_mdx_forget, rc_k_md_close_fill). */
RC_HD static inline void rc_k_md_nb_count(const rc_k_md *v, long t)
{
    long e = v->near ? (long)v->near[t] : t;
    rc_k_atomic_add_long(v->nb_end + v->cand_i[e], 1);
    rc_k_atomic_add_long(v->nb_end + v->cand_j[e], 1);
}

RC_HD static inline void rc_k_md_nb_fill(const rc_k_md *v, long t)
{
    long e = v->near ? (long)v->near[t] : t;
    v->nb_pos[rc_k_atomic_add_long(v->nb_end + v->cand_i[e], 1)] = (int)t;
    v->nb_pos[rc_k_atomic_add_long(v->nb_end + v->cand_j[e], 1)] = (int)t;
}

/* The first of sphere x's positions in nb_pos (its run ends at
 * nb_end[x], once the index is made). */
RC_HD static inline long rc_k_md_nb_first(const rc_k_md *v, int x)
{
    return x > 0 ? v->nb_end[x - 1] : 0;
}

/* grad V at q^p for sphere i, gathered: the uniform field, then its
 * pairs as the larger index, then as the smaller, each in candidate
 * order.  That is the order in which the host engine's scatter over the
 * sorted candidates (rc_md_forces) adds into sphere i, so the sums are
 * the same bits; no two threads write one sphere. */
RC_HD static inline void rc_k_md_force(const rc_k_md *v, long i)
{
    int k, d = v->dim;
    long t, e;
    double g[3] = {0.0, 0.0, 0.0};
    for (k = 0; k < d; ++k)
        g[k] = -v->mass[i] * v->gravity[k];
    for (t = v->toff[i]; t < v->toff[i + 1]; ++t) {
        double del[3] = {0.0, 0.0, 0.0}, c1;
        e = v->tlist[t];
        rc_k_box_delta(&v->box, v->qp + (long)v->cand_i[e] * d,
                       v->qp + i * d, del);
        if (!(rc_dot(d, del, del) < v->pair.a[2]))
            continue;
        c1 = v->pair_c1[e];
        for (k = 0; k < d; ++k)
            g[k] -= c1 * del[k];
    }
    for (e = v->pair_off[i]; e < v->pair_off[i + 1]; ++e) {
        double del[3] = {0.0, 0.0, 0.0}, c1;
        rc_k_box_delta(&v->box, v->qp + i * d,
                       v->qp + (long)v->cand_j[e] * d, del);
        if (!(rc_dot(d, del, del) < v->pair.a[2]))
            continue;
        c1 = v->pair_c1[e];
        for (k = 0; k < d; ++k)
            g[k] += c1 * del[k];
    }
    for (k = 0; k < d; ++k)
        v->grad1[i * d + k] = g[k];
}

/* ------------------------------------------------------ contact bodies */

/* Candidate e at its build, the part that reads the spheres: its image
 * shift cand_m (the minimum image at q, as rc_k_box_delta takes it; the
 * mark of A cleared), near[e] = e for the stable sort that follows, its
 * relative position x = q_a - q_b - shift (3 entries, 0 beyond dim), and
 * the return value s = |x|^2 (the squares summed over all 3 axes). */
RC_HD static inline double rc_k_md_cand_image(const rc_k_md *v, long e,
                                              double *x)
{
    int a = v->cand_i[e], b = v->cand_j[e], d = v->dim, k, code = 0;
    double s = 0.0;
    for (k = 0; k < 3; ++k) {
        double m = 0.0;
        x[k] = k < d ? v->q[(long)a * d + k] - v->q[(long)b * d + k] : 0.0;
        /* within lim (a quarter box) x / L + 0.5 lies in [1/4, 3/4], so
         * the image is 0 and x - L 0 is x: most pairs skip the divide
         * and the floor, with the same bits */
        if (k < d && v->box.periodic[k] && !(rc_fabs(x[k]) <= v->lim[k])) {
            m = rc_floor(x[k] / v->box.L[k] + 0.5);
            x[k] -= v->box.L[k] * m;
        }
        code += (k == 0 ? 1 : k == 1 ? 3 : 9) * ((int)m + 1);
        s += x[k] * x[k];
    }
    v->cand_m[e] = (unsigned char)code; /* not in A */
    v->near[e] = (int)e;
    return s;
}

/* The gap bucket of a candidate whose spheres (radii ra, rb) are sqrt(s)
 * apart at the build: 0 for a gap g <= 0, floor(g / near_w) up to
 * RC_K_MD_NEAR - 1.  Its outcomes selected, not branched on, so that the
 * CPU launcher's lanes vectorise it (src/host/md/cand_lanes.c; the cast
 * only ever sees [0, RC_K_MD_NEAR - 1]). */
RC_HD static inline int rc_k_md_gap_key(double s, double ra, double rb,
                                        double near_w)
{
    const int top = RC_K_MD_NEAR - 1;
    double g = rc_sqrt(s) - ra - rb, t = g / near_w;
    /* selects of doubles, one conversion (GCC if-converts them in every
     * width) */
    t = t > 0.0 ? t : 0.0;
    t = t < (double)top ? t : (double)top;
    t = g >= top * near_w ? (double)top : t;
    t = g > 0.0 ? t : 0.0; /* and NaN */
    return (int)t;
}

/* Candidate e at its build: rc_k_md_cand_image and its bucket by the gap
 * at q (rc_k_md_gap_key). */
RC_HD static inline void rc_k_md_cand_info(const rc_k_md *v, long e)
{
    double x[3], s;
    rc_k_md_prefetch_ahead(v, e);
    s = rc_k_md_cand_image(v, e, x);
    v->near_key[e] = rc_k_md_gap_key(s, rc_k_md_rad(v, v->cand_i[e]),
                                     rc_k_md_rad(v, v->cand_j[e]), v->near_w);
}

/* Position t of the candidates sorted by bucket (near_key sorted, ncand
 * of them): the starts of the buckets from the one after its
 * predecessor's to its own, and after the last one those of the buckets
 * beyond it (ncand).  Every start written once, without atomics (a
 * count by atomic adds on the 64 buckets' counters, at each candidate,
 * took the cache lines between the cores at every add). */
RC_HD static inline void rc_k_md_near_starts(const rc_k_md *v, long t)
{
    int b, key = v->near_key[t], prev = t > 0 ? v->near_key[t - 1] : -1;
    for (b = prev + 1; b <= key; ++b)
        v->near_count[b] = t;
    if (t == v->ncand - 1)
        for (b = key + 1; b <= RC_K_MD_NEAR; ++b)
            v->near_count[b] = v->ncand;
}

/* The candidate of screened item t of the window: item near_off + t of
 * the bucket order, through near when the list keeps the (i, j) order. */
RC_HD static inline long rc_k_md_screened(const rc_k_md *v, long t)
{
    t += v->near_off;
    return v->near ? (long)v->near[t] : t;
}

/* Whether screened item t of the first scan (candidate e, spheres a and
 * b) is provably out of reach: its gap at the build, at least its
 * bucket's lower bound, exceeds what the two spheres' motion since the
 * build and within the step can close, plus eps_g at each end (the
 * first scan's margin; as rc_dmd_extend's bound for the prefix, with
 * each sphere's own motion for the largest).  The triangle inequality
 * bounds the gap along both paths (exact collisions: the relative path
 * within the farthest reaches) and at q^p (GVI); a margin of 1e-9
 * relative takes the round-off of the bucket and the sums.  Reads two
 * floats a sphere, not the spheres' states. */
RC_HD static inline int rc_k_md_bucket_at(const rc_k_md *v, long pos)
{
    int lo = 0, hi = RC_K_MD_NEAR - 1;
    /* the bucket of position pos: the last with near_count[.] <= pos */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (v->near_count[mid] <= pos)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The test with the item's bucket known (a launcher walking the order
 * keeps it as it goes: rc_dmd_cpu_first_scan). */
RC_HD static inline int rc_k_md_out_of_reach_in(const rc_k_md *v,
                                                int bucket, int a, int b)
{
    double reach = (double)v->reach[RC_K_MD_REACH * a] +
                   (double)v->reach[RC_K_MD_REACH * b] + 2.0 * v->eps_g,
           bound;
    if (!v->reach_fresh)
        reach += (double)v->reach[RC_K_MD_REACH * a + 1] +
                 (double)v->reach[RC_K_MD_REACH * b + 1];
    bound = (double)bucket * v->near_w;
    return bound - 1e-9 * (bound + reach) > reach;
}

RC_HD static inline int rc_k_md_out_of_reach(const rc_k_md *v, long t, int a,
                                             int b)
{
    if (!v->reach_skip)
        return 0;
    return rc_k_md_out_of_reach_in(v, rc_k_md_bucket_at(v, t + v->near_off),
                                   a, b);
}

/* Candidate e = (a, b), not in A and within reach: 1 when the pair
 * joins A now, violated at q^p (or, at the step's first scan, within
 * eps_g at q).  The differences are rc_k_box_delta's bit for bit (x_i -
 * x_j - L m with the build's m, the same operations), so the gaps here
 * are rc_k_md_pair_gap's; no division or floor. */
RC_HD static inline int rc_k_md_screen_pair_meets(const rc_k_md *v, long e,
                                                 int a, int b)
{
    int d = v->dim, k;
    double sig, sp = 0.0, sq = 0.0, gp, gq, ra, rb;
    const double *pa = v->qp + (long)a * d, *pb = v->qp + (long)b * d;
    const double *qa = v->q + (long)a * d, *qb = v->q + (long)b * d;
    for (k = 0; k < d; ++k) {
        double lm = v->box.L[k] * (double)rc_k_md_cand_img(v->cand_m, e, k);
        double xp = (pa[k] - pb[k]) - lm, xq = (qa[k] - qb[k]) - lm;
        sp += xp * xp;
        sq += xq * xq;
    }
    ra = rc_k_md_rad(v, a);
    rb = rc_k_md_rad(v, b);
    sig = ra + rb;
    if (!(sp <= sig * sig ||
          (v->at_start && sq <= (sig + v->eps_g) * (sig + v->eps_g))))
        return 0;
    gp = rc_sqrt(sp) - ra - rb;
    gq = rc_sqrt(sq) - ra - rb;
    return gp <= 0.0 || (v->at_start && gq <= v->eps_g);
}

/* The first scan's hint for sphere i: its q and q^p (those the test
 * reads). */
RC_HD static inline void rc_k_md_prefetch_flight(const rc_k_md *v, long i)
{
#if !defined(__CUDA_ARCH__) && defined(__GNUC__)
    __builtin_prefetch(v->q + i * v->dim);
    __builtin_prefetch(v->qp + i * v->dim);
#else
    (void)v;
    (void)i;
#endif
}

/* Screened item t, candidate e = rc_k_md_screened: 1 when the pair
 * joins A now (rc_k_md_screen_pair: into flag[t]): not in A yet, one of
 * its spheres touched since the last scan (or the step's first scan,
 * within reach), and rc_k_md_screen_pair_meets.  The CPU launcher's
 * first scan walks the items in blocks instead (src/host/md/cand_lanes.c,
 * rc_dmd_cpu_gvi_first_scan): the same tests. */
RC_HD static inline long rc_k_md_screen_pair_at(const rc_k_md *v, long t)
{
    long e = rc_k_md_screened(v, t);
    int a = v->cand_i[e], b = v->cand_j[e];
#if !defined(__CUDA_ARCH__) && defined(__GNUC__)
    /* the CPU: the first scan reads both spheres' reaches for every
     * item, and for most then their q and q^p, at random places; those
     * of the item due RC_K_MD_AHEAD on, asked for now (a hint: no result
     * changes) */
    if (v->at_start && t + RC_K_MD_AHEAD < v->nscreen) {
        long e2 = rc_k_md_screened(v, t + RC_K_MD_AHEAD);
        __builtin_prefetch(v->reach + RC_K_MD_REACH * (long)v->cand_i[e2]);
        __builtin_prefetch(v->reach + RC_K_MD_REACH * (long)v->cand_j[e2]);
        rc_k_md_prefetch_flight(v, v->cand_i[e2]);
        rc_k_md_prefetch_flight(v, v->cand_j[e2]);
    }
#endif
    if (v->cand_m[e] & RC_K_MD_IN_A)
        return 0;
    if (!v->at_start && !v->touched[a] && !v->touched[b])
        return 0;
    if (v->at_start && rc_k_md_out_of_reach(v, t, a, b))
        return 0;
    return rc_k_md_screen_pair_meets(v, e, a, b);
}

RC_HD static inline void rc_k_md_screen_pair(const rc_k_md *v, long t)
{
    v->flag[t] = (unsigned char)rc_k_md_screen_pair_at(v, t);
}

/* Candidate e's periodic shift L m (0 on walled axes). */
RC_HD static inline void rc_k_md_cand_shift(const rc_k_md *v, long e,
                                            double s[3])
{
    int k;
    for (k = 0; k < 3; ++k)
        s[k] = k < v->dim
                   ? v->box.L[k] * (double)rc_k_md_cand_img(v->cand_m, e, k)
                   : 0.0;
}

/* Screened item t, flagged: its contact into A at slot ncon + u (u: its
 * place among the flagged items, rc_k_md_push_hit, rc_k_md_close_push). */
RC_HD static inline void rc_k_md_push_pair_at(const rc_k_md *v, long t,
                                              long u)
{
    rc_k_md_contact *c;
    long e;
    int a, b;
    e = rc_k_md_screened(v, t);
    a = v->cand_i[e];
    b = v->cand_j[e];
    c = v->con + v->ncon + u;
    c->i = a;
    c->j = b;
    /* the radii as the screens take them (rc_k_md_rad): of a
     * one-component fluid without two loads at random places, which were
     * half of a push's time (perf: 110 ns a push) */
    c->gap = rc_k_md_pair_gap_r(&v->box, rc_k_md_rad(v, a), rc_k_md_rad(v, b),
                                v->q, a, b, c->n, &c->dist);
    c->lam = 0.0;
    c->mu = 0.0;
    c->vir = 0.0;
    c->hits = 0;
    rc_k_md_cand_shift(v, e, c->s);
    v->cand_m[e] |= RC_K_MD_IN_A;
}

/* Wall item t = (axis n + i) 2 + side, in the host engine's order (axis,
 * particle, side): 1 when the wall contact joins A now. */
RC_HD static inline long rc_k_md_screen_wall_at(const rc_k_md *v, long t)
{
    int ax = (int)(t / (2L * v->n)), i = (int)((t / 2) % v->n);
    int w = 2 * ax + (int)(t % 2);
    double n[3], gp, gq;
    if (ax >= v->dim || v->box.periodic[ax] || v->wall_in[(long)i * 6 + w])
        return 0;
    if (!v->at_start && !v->touched[i])
        return 0;
    gp = rc_k_md_wall_gap(&v->box, v->radius, v->qp, i, w, n);
    gq = rc_k_md_wall_gap(&v->box, v->radius, v->q, i, w, n);
    return gp <= 0.0 || (v->at_start && gq <= v->eps_g);
}

RC_HD static inline void rc_k_md_screen_wall(const rc_k_md *v, long t)
{
    v->flag[t] = (unsigned char)rc_k_md_screen_wall_at(v, t);
}

/* Wall item t, flagged: its contact at slot ncon + u (as
 * rc_k_md_push_pair_at). */
RC_HD static inline void rc_k_md_push_wall_at(const rc_k_md *v, long t,
                                              long u)
{
    int ax, i, w;
    rc_k_md_contact *c;
    ax = (int)(t / (2L * v->n));
    i = (int)((t / 2) % v->n);
    w = 2 * ax + (int)(t % 2);
    c = v->con + v->ncon + u;
    c->i = i;
    c->j = -1 - w;
    c->gap = rc_k_md_wall_gap(&v->box, v->radius, v->q, i, w, c->n);
    c->dist = 0.0;
    c->lam = 0.0;
    c->mu = 0.0;
    c->vir = 0.0;
    c->hits = 0;
    c->s[0] = c->s[1] = c->s[2] = 0.0;
    v->wall_in[(long)i * 6 + w] = 1;
}

/* Flagged item u of a screen (hit[u]: the screened pairs' items, then
 * the walls' after nscreen): its contact into A at slot ncon + u, so A
 * takes them in the screen's order. */
RC_HD static inline void rc_k_md_push_hit(const rc_k_md *v, long u)
{
    long t = v->hit[u];
    if (t < v->nscreen)
        rc_k_md_push_pair_at(v, t, u);
    else
        rc_k_md_push_wall_at(v, t - v->nscreen, u);
}

/* Contact c of A (a pair) marks its candidate in a freshly built list:
 * binary search in each range sorted by (i, j), the list (near set) or
 * each of its gap buckets (the list permuted into their order). */
RC_HD static inline void rc_k_md_remark(const rc_k_md *v, long c)
{
    const rc_k_md_contact *cc = v->con + c;
    int b, nb = v->near ? 1 : RC_K_MD_NEAR;
    if (cc->j < 0)
        return;
    for (b = 0; b < nb; ++b) {
        long lo = v->near ? 0 : v->near_count[b],
             end = v->near ? v->ncand : v->near_count[b + 1], hi = end;
        while (lo < hi) {
            long mid = lo + (hi - lo) / 2;
            if (v->cand_i[mid] < cc->i ||
                (v->cand_i[mid] == cc->i && v->cand_j[mid] < cc->j))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < end && v->cand_i[lo] == cc->i && v->cand_j[lo] == cc->j) {
            v->cand_m[lo] |= RC_K_MD_IN_A;
            /* the build wrapped the positions: the pair's shift anew */
            rc_k_md_cand_shift(v, lo, v->con[c].s);
            return;
        }
    }
}

/* Item t of the bucket order gathered from the build's (i, j) order into
 * red, as ints (which 0: cand_i, 1: cand_j) or bytes (2: cand_m), for
 * the copy back that permutes the list (rc_dmd_candidates). */
RC_HD static inline void rc_k_md_gather(const rc_k_md *v, long t, int which)
{
    long e = v->near[t];
    if (which == 3)
        ((float *)v->red)[t] = v->pred_t[e];
    else if (which == 2)
        ((unsigned char *)v->red)[t] = v->cand_m[e];
    else
        ((int *)v->red)[t] = which ? v->cand_j[e] : v->cand_i[e];
}

/* ------------------------------------------------------------ islands */

/* Root of x: parents point to smaller indices, so the walk ends.  Reads
 * through volatile: other threads hook roots while this one walks. */
RC_HD static inline int rc_k_uf_find(const int *parent, int x)
{
    const volatile int *pv = parent;
    int px = pv[x];
    while (px != x) {
        x = px;
        px = pv[x];
    }
    return x;
}

/* Contact c (a pair) joins its spheres' trees: the larger root is hooked
 * under the smaller by compare-and-swap, retried when another thread
 * hooked that root first.  Every root is hooked only under a smaller
 * index, so each tree's root is its smallest vertex whatever the order:
 * the labels are the host's (rc_islands_label). */
RC_HD static inline void rc_k_md_uf_hook(const rc_k_md *v, long c)
{
    int a, b;
    if (v->con[c].j < 0)
        return;
    a = v->con[c].i;
    b = v->con[c].j;
    for (;;) {
        int t;
        a = rc_k_uf_find(v->parent, a);
        b = rc_k_uf_find(v->parent, b);
        if (a == b)
            return;
        if (a > b) {
            t = a;
            a = b;
            b = t;
        }
        if (rc_k_atomic_cas_int(v->parent + b, b, a) == b)
            return;
    }
}

/* Contact c's spheres back to roots of their own, after the labels are
 * taken (the forest is the identity again; a sphere in several contacts
 * is reset by each, with the same value). */
RC_HD static inline void rc_k_md_uf_reset(const rc_k_md *v, long c)
{
    v->parent[v->con[c].i] = v->con[c].i;
    if (v->con[c].j >= 0)
        v->parent[v->con[c].j] = v->con[c].j;
}

/* Key of contact c: its island label (the smallest sphere index of its
 * component; parent holds the forest, read only here). */
RC_HD static inline void rc_k_md_con_key(const rc_k_md *v, long c)
{
    v->key[c] = rc_k_uf_find(v->parent, v->con[c].i);
    v->order[c] = (int)c;
}

/* Slot a of the contacts sorted by island: 1 where an island starts. */
RC_HD static inline void rc_k_md_isl_head(const rc_k_md *v, long a)
{
    v->head[a] = a == 0 || v->key[a] != v->key[a - 1];
}

/* head holds the scan: island head[a] starts at slot a.  Island s's
 * dense scratch, m^2 doubles of Gram matrix and the NNLS work
 * (rc_k_nnls_work_doubles: m^2 + 2 m), is sized by rc_k_md_isl_size; 0
 * for islands beyond the per-thread tier. */
RC_HD static inline void rc_k_md_isl_start(const rc_k_md *v, long a)
{
    if (v->head[a + 1] != v->head[a])
        v->istart[v->head[a]] = a;
}

RC_HD static inline void rc_k_md_isl_size(const rc_k_md *v, long s)
{
    long m = v->istart[s + 1] - v->istart[s];
    v->woff[s] =
        m <= v->dense_max ? m * m + rc_k_nnls_work_doubles((int)m) : 0;
}

/* What the host needs of island s's result after an island round
 * (reflect, hold, project), as five lanes of red, each reduced into a
 * slot so that one fetch replaces reading every island's result:
 *   red[s]          1 when it is beyond the tier (RC_K_MD_BIG)     (max)
 *   red[nisl + s]   nisl - s when it failed otherwise: the max is the
 *                   first failed island                           (max)
 *   red[2 nisl + s] its passes (reflect) or held contacts (hold),
 *                   0 beyond the tier                             (sum)
 *   red[3 nisl + s] 1 when it took a pass, 0 beyond the tier      (sum)
 *   red[4 nisl + s] its contacts, 0 beyond the tier               (max)
 * red holds 5 nisl + 1 values. */
RC_HD static inline void rc_k_md_isl_summary(const rc_k_md *v, long s)
{
    long n = v->nisl, m = v->istart[s + 1] - v->istart[s];
    int f = v->isl_fail[s], big = f == RC_K_MD_BIG;
    v->red[s] = big ? 1.0 : 0.0;
    v->red[n + s] = f && !big ? (double)(n - s) : 0.0;
    v->red[2 * n + s] = big ? 0.0 : (double)v->isl_passes[s];
    v->red[3 * n + s] = !big && v->isl_passes[s] > 0 ? 1.0 : 0.0;
    v->red[4 * n + s] = big ? 0.0 : (double)m;
}

/* The rules of one reflection pass over an island's m contacts (order:
 * their indices into A), shared by every tier of both engines: the
 * contacts of the solve into V with b = 2 n . v (those approaching, or
 * with Moreau every contact of the island once one approaches).  Returns
 * their count, 0 when the island is done (nothing approaches; or the
 * Moreau passes ran out, and the position update holds what still
 * approaches, R3), or -1 when generalized reflection ran out of passes
 * (RC_K_MD_PASSES). */
RC_HD static inline long rc_k_md_pass_select(
    int d, const double *p, const double *inv_mass,
    const rc_k_md_contact *con, const int *order, long m, double eps_v,
    int moreau, int max_passes, int pass, int *V, double *b)
{
    long a, nv = 0;
    for (a = 0; a < m; ++a)
        if (rc_k_md_speed(d, p, inv_mass, con + order[a]) < -eps_v)
            V[nv++] = order[a];
    if (nv == 0)
        return 0;
    /* Moreau passes repeat while a contact approaches (each keeps the
     * energy); when they run out, the position update holds what still
     * approaches (R3) instead of failing */
    if (moreau && pass >= max_passes)
        return 0;
    if (moreau) /* every contact of the island, one pass */
        for (nv = 0, a = 0; a < m; ++a)
            V[nv++] = order[a];
    if (pass >= max_passes)
        return -1;
    for (a = 0; a < nv; ++a)
        b[a] = 2.0 * rc_k_md_speed(d, p, inv_mass, con + V[a]);
    return nv;
}

/* The pass's impulses lam along the contacts V (counted in their lam:
 * collisions and the virial). */
RC_HD static inline void rc_k_md_pass_apply(int d, double *p,
                                            unsigned char *touched,
                                            rc_k_md_contact *con,
                                            const int *V, long nv,
                                            const double *lam)
{
    long a;
    for (a = 0; a < nv; ++a)
        if (lam[a] != 0.0) {
            rc_k_md_kick(d, p, touched, con + V[a], lam[a]);
            con[V[a]].lam += lam[a];
        }
}

/* The Gram matrix scale * n_a^T M^-1 n_b of the m contacts V, both
 * triangles, row-major m x m: the host engine's dense tiers build it the
 * same way (rc_md_solve in engine.c). */
RC_HD static inline void rc_k_md_gram_fill(const rc_k_md *v, const int *V,
                                           long m, double scale,
                                           double *gram)
{
    long a, b;
    for (a = 0; a < m; ++a)
        for (b = 0; b <= a; ++b) {
            double g = scale * rc_k_md_gram(v, v->con + V[a], v->con + V[b]);
            gram[a * m + b] = g;
            gram[b * m + a] = g;
        }
}

/* The most contacts of an island of m that one dense NNLS takes: m, and
 * at most dense_max (a larger island goes to the other tiers; with exact
 * collisions a larger group of simultaneous impacts fails the island,
 * RC_K_MD_GROUP).  The Gram matrix of the island's scratch is this many
 * contacts' (rc_k_md_island_scratch, rc_k_mdx_isl_size). */
RC_HD static inline long rc_k_md_dense_m(const rc_k_md *v, long m)
{
    return m < v->dense_max ? m : v->dense_max;
}

/* Island s's dense scratch, as every island body carves it: b, lambda
 * (and the impact times of exact collisions) by contact slot, the Gram
 * matrix of up to rc_k_md_dense_m contacts and NNLS work (woff), the
 * contact list and the NNLS ints (by contact slot). */
RC_HD static inline void rc_k_md_island_scratch(const rc_k_md *v, long s,
                                                double **b, double **lam,
                                                double **gram, double **w,
                                                int **V, int **iw)
{
    long lo = v->istart[s], m = v->istart[s + 1] - lo;
    *b = v->cwork + 3 * lo;
    *lam = *b + m;
    *gram = v->work + v->woff[s];
    *w = *gram + rc_k_md_dense_m(v, m) * rc_k_md_dense_m(v, m);
    *V = v->iwork + 3 * lo;
    *iw = *V + m;
}

/* Island s: passes of generalized reflection (seed 000 Algorithm 2; with
 * `moreau`, Algorithm 3's passes over every contact) until no contact
 * approaches, each pass one NNLS solve of the approaching contacts by the
 * per-thread dense solver.  The host engine's rc_md_reflect_island, dense
 * tier.  isl_fail[s]: 0, RC_K_MD_PASSES, RC_K_MD_NNLS or RC_K_MD_BIG (left
 * for a larger tier, momenta untouched); isl_passes[s]: reflection
 * passes made.  Islands share no sphere, so no two threads write the
 * same momentum. */
RC_HD static inline void rc_k_md_reflect_island(const rc_k_md *v, long s)
{
    long lo = v->istart[s], hi = v->istart[s + 1], m = hi - lo, nv;
    double *b, *lam, *gram, *w;
    int *V, *iw, pass, d = v->dim;
    v->isl_passes[s] = 0;
    v->isl_fail[s] = 0;
    if (m > v->dense_max) {
        v->isl_fail[s] = RC_K_MD_BIG;
        return;
    }
    rc_k_md_island_scratch(v, s, &b, &lam, &gram, &w, &V, &iw);
    for (pass = 0;; ++pass) {
        nv = rc_k_md_pass_select(d, v->p, v->inv_mass, v->con, v->order + lo,
                                 m, v->eps_v, v->moreau, v->max_passes, pass,
                                 V, b);
        if (nv == 0)
            break;
        if (nv < 0) {
            v->isl_fail[s] = RC_K_MD_PASSES;
            return;
        }
        rc_k_md_gram_fill(v, V, nv, 1.0, gram);
        {
            /* solver tolerance: 1e-12 of its own scale (rc_nnls.h), as
             * the host engine's dense tier */
            rc_k_nnls_result r =
                rc_k_nnls_gram((int)nv, gram, b, lam, w, iw, 0, 1e-12);
            if (r.status != 0) {
                v->isl_fail[s] = RC_K_MD_NNLS;
                return;
            }
        }
        rc_k_md_pass_apply(d, v->p, v->touched, v->con, V, nv, lam);
        v->isl_passes[s] = pass + 1;
    }
}

/* x += h M^-1 C mu along contact c (the position update's shift), with
 * dxs keeping the displacement; the host engine's rc_md_shift. */
RC_HD static inline void rc_k_md_shift(const rc_k_md *v,
                                       const rc_k_md_contact *c, double mu)
{
    int k, d = v->dim;
    v->touched[c->i] = 1;
    if (c->j >= 0)
        v->touched[c->j] = 1;
    for (k = 0; k < d; ++k) {
        double u = v->h * v->inv_mass[c->i] * mu * c->n[k];
        v->qp[(long)c->i * d + k] += u;
        v->dxs[(long)c->i * d + k] += u;
        if (c->j >= 0) {
            u = v->h * v->inv_mass[c->j] * mu * c->n[k];
            v->qp[(long)c->j * d + k] -= u;
            v->dxs[(long)c->j * d + k] -= u;
        }
    }
}

/* The rules of the position update with complementarity (R3), shared by
 * the per-thread body and the host engine's tiers (rc_md_hold_island):
 * eq. 48, x = q^p + h M^-1 C mu, 0 <= mu _|_ g(x) >= 0, solved by
 * successive linearisation, each round the LCP with h G and
 * b = g(x) - h G mu_current (G with the normals at q; h G mu is the
 * displacement dxs along the normals).
 *
 * Start: the most negative gap at q^p of the island's m contacts (order);
 * when one is violated (< 0), also V = order and the spheres' dxs = 0. */
RC_HD static inline double rc_k_md_hold_start(const rc_k_md *v,
                                              const int *order, long m,
                                              int *V)
{
    long a;
    int k, d = v->dim;
    double n[3], worst = 0.0;
    for (a = 0; a < m; ++a) {
        double g = rc_k_md_gap(&v->box, v->radius, v->qp, v->con + order[a],
                               n);
        worst = g < worst ? g : worst; /* fmin: a NaN gap is passed over */
    }
    if (!(worst < 0.0))
        return worst;
    for (a = 0; a < m; ++a) {
        const rc_k_md_contact *c = v->con + order[a];
        V[a] = order[a];
        for (k = 0; k < d; ++k) {
            v->dxs[(long)c->i * d + k] = 0.0;
            if (c->j >= 0)
                v->dxs[(long)c->j * d + k] = 0.0;
        }
    }
    return worst;
}

/* A round's right-hand side b = g(x) - n . (dx_i - dx_j); returns the most
 * negative gap. */
RC_HD static inline double rc_k_md_hold_rhs(const rc_k_md *v, const int *V,
                                            long m, double *b)
{
    long a;
    int k, d = v->dim;
    double n[3], worst = 0.0;
    for (a = 0; a < m; ++a) {
        const rc_k_md_contact *c = v->con + V[a];
        double g = rc_k_md_gap(&v->box, v->radius, v->qp, c, n), dn = 0.0;
        /* h (G mu)_a = n_a . (dx_i - dx_j) with the normals at q */
        for (k = 0; k < d; ++k) {
            double u = v->dxs[(long)c->i * d + k];
            if (c->j >= 0)
                u -= v->dxs[(long)c->j * d + k];
            dn += c->n[k] * u;
        }
        b[a] = g - dn;
        worst = g < worst ? g : worst;
    }
    return worst;
}

/* After a round's solve: shift x by the change of mu, mu = lam. */
RC_HD static inline void rc_k_md_hold_shift(const rc_k_md *v, const int *V,
                                            long m, const double *lam)
{
    long a;
    for (a = 0; a < m; ++a) {
        rc_k_md_contact *c = v->con + V[a];
        double dmu = lam[a] - c->mu;
        if (dmu != 0.0) {
            rc_k_md_shift(v, c, dmu);
            c->mu = lam[a];
        }
    }
}

/* Settled: the holding impulses enter the momenta (eq. 48: p + C mu);
 * returns the contacts held. */
RC_HD static inline int rc_k_md_hold_kick(const rc_k_md *v, const int *V,
                                          long m)
{
    long a;
    int held = 0;
    for (a = 0; a < m; ++a) {
        const rc_k_md_contact *c = v->con + V[a];
        if (c->mu != 0.0) {
            rc_k_md_kick(v->dim, v->p, v->touched, c, c->mu);
            ++held;
        }
    }
    return held;
}

/* The tolerance of the linearisation: no contact violated beyond 1e-10
 * of a diameter. */
RC_HD static inline double rc_k_md_hold_tol(const rc_k_md *v)
{
    return 1e-10 * 2.0 * v->rmax;
}

/* Island s, the position update, per-thread tier (the host engine's
 * rc_md_hold_island, dense tier).  isl_passes[s] = contacts held;
 * isl_fail[s]: 0, RC_K_MD_NNLS, RC_K_MD_SETTLE (50 rounds) or
 * RC_K_MD_BIG (beyond the tier: the step goes to the host engine). */
RC_HD static inline void rc_k_md_hold_island(const rc_k_md *v, long s)
{
    long lo = v->istart[s], m = v->istart[s + 1] - lo;
    double *b, *lam, *gram, *w;
    int *V, *iw, round;
    v->isl_fail[s] = 0;
    v->isl_passes[s] = 0;
    rc_k_md_island_scratch(v, s, &b, &lam, &gram, &w, &V, &iw);
    /* (V and dxs are island-local whatever the tier: safe to start) */
    if (!(rc_k_md_hold_start(v, v->order + lo, m, V) < 0.0))
        return;
    if (m > v->dense_max) {
        v->isl_fail[s] = RC_K_MD_BIG;
        return;
    }
    for (round = 0; round < 50; ++round) {
        double worst = rc_k_md_hold_rhs(v, V, m, b);
        if (round > 0 && worst >= -rc_k_md_hold_tol(v))
            break;
        rc_k_md_gram_fill(v, V, m, v->h, gram);
        {
            rc_k_nnls_result r =
                rc_k_nnls_gram((int)m, gram, b, lam, w, iw, 0, 1e-12);
            if (r.status != 0) {
                v->isl_fail[s] = RC_K_MD_NNLS;
                return;
            }
        }
        rc_k_md_hold_shift(v, V, m, lam);
    }
    if (round == 50) {
        v->isl_fail[s] = RC_K_MD_SETTLE;
        return;
    }
    v->isl_passes[s] = rc_k_md_hold_kick(v, V, m);
}

/* Island s: undo its holding impulses (the step is redone from the
 * reflections when the position update violated a contact outside A);
 * in A's order within the island, as the host's rc_md_unhold over A. */
RC_HD static inline void rc_k_md_unhold_island(const rc_k_md *v, long s)
{
    long a;
    for (a = v->istart[s]; a < v->istart[s + 1]; ++a) {
        rc_k_md_contact *c = v->con + v->order[a];
        if (c->mu != 0.0) {
            rc_k_md_kick(v->dim, v->p, v->touched, c, -c->mu);
            c->mu = 0.0;
        }
    }
}

/* RATTLE's velocity projection (shared with the host engine's
 * rc_md_project_island): the held contacts of an island (mu > 0) into V,
 * their normals renewed at x, b = their normal relative speeds; returns
 * their count.  One equality solve G lam = -b then sets those speeds to
 * zero (rc_k_md_kicks applies lam). */
RC_HD static inline long rc_k_md_project_select(const rc_k_md *v,
                                               const int *order, long m,
                                               int *V, double *b)
{
    long a, nv = 0;
    double dist;
    for (a = 0; a < m; ++a) {
        rc_k_md_contact *c = v->con + order[a];
        if (!(c->mu > 0.0))
            continue;
        /* normals at x from here on */
        if (c->j >= 0)
            rc_k_md_pair_gap(&v->box, v->radius, v->qp, c->i, c->j, c->n,
                             &dist);
        V[nv++] = order[a];
    }
    for (a = 0; a < nv; ++a)
        b[a] = rc_k_md_speed(v->dim, v->p, v->inv_mass, v->con + V[a]);
    return nv;
}

/* Impulses lam along the contacts V (not counted as collisions). */
RC_HD static inline void rc_k_md_kicks(const rc_k_md *v, const int *V,
                                       long m, const double *lam)
{
    long a;
    for (a = 0; a < m; ++a)
        if (lam[a] != 0.0)
            rc_k_md_kick(v->dim, v->p, v->touched, v->con + V[a], lam[a]);
}

/* Island s: the projection, per-thread tier.  isl_fail[s]: 0,
 * RC_K_MD_NNLS (singular system) or RC_K_MD_BIG (beyond the tier with a
 * contact held: the host tiers project it). */
RC_HD static inline void rc_k_md_project_island(const rc_k_md *v, long s)
{
    long lo = v->istart[s], m = v->istart[s + 1] - lo, a, nv;
    double *b, *lam, *gram, *w;
    int *V, *iw;
    v->isl_fail[s] = 0;
    if (m > v->dense_max) {
        /* no scratch of its own: an island beyond the tier that holds a
         * contact (the host tiers held it) goes back to them */
        for (a = lo; a < lo + m; ++a)
            if (v->con[v->order[a]].mu > 0.0) {
                v->isl_fail[s] = RC_K_MD_BIG;
                break;
            }
        return;
    }
    rc_k_md_island_scratch(v, s, &b, &lam, &gram, &w, &V, &iw);
    nv = rc_k_md_project_select(v, v->order + lo, m, V, b);
    if (nv == 0)
        return;
    rc_k_md_gram_fill(v, V, nv, 1.0, gram);
    for (a = 0; a < nv; ++a)
        lam[a] = -b[a];
    if (rc_k_lu_solve((int)nv, gram, lam, iw) != 0) {
        v->isl_fail[s] = RC_K_MD_NNLS;
        return;
    }
    rc_k_md_kicks(v, V, nv, lam);
}

/* Island s after a reflection round: the predictor of its spheres (the
 * only ones whose momenta changed) anew, red[s] = the largest squared
 * displacement among them.  A sphere in several of the island's contacts
 * is predicted again with the same result; islands share no sphere. */
RC_HD static inline void rc_k_md_predict_island(const rc_k_md *v, long s)
{
    long a;
    double w = 0.0;
    for (a = v->istart[s]; a < v->istart[s + 1]; ++a) {
        const rc_k_md_contact *c = v->con + v->order[a];
        w = rc_fmax(w, rc_k_md_predict_one(v, c->i));
        if (c->j >= 0)
            w = rc_fmax(w, rc_k_md_predict_one(v, c->j));
    }
    v->red[s] = w;
}

/* Island s after the position update: red[s] = the largest squared
 * displacement dxs of its spheres by the held contacts (0 where none). */
RC_HD static inline void rc_k_md_held_island(const rc_k_md *v, long s)
{
    long a;
    int k, d = v->dim;
    double w = 0.0;
    for (a = v->istart[s]; a < v->istart[s + 1]; ++a) {
        const rc_k_md_contact *c = v->con + v->order[a];
        double si = 0.0, sj = 0.0;
        if (c->mu == 0.0)
            continue;
        for (k = 0; k < d; ++k) {
            double ui = v->dxs[(long)c->i * d + k];
            si += ui * ui;
            if (c->j >= 0) {
                double uj = v->dxs[(long)c->j * d + k];
                sj += uj * uj;
            }
        }
        w = rc_fmax(w, rc_fmax(si, sj));
    }
    v->red[s] = w;
}

/* n - i if particle i's predicted position or momentum is not finite
 * (the step fails before anything is kept), else 0: the max over
 * particles names the first bad one (red[i], rc_k_md_finite). */
RC_HD static inline double rc_k_md_bad(const rc_k_md *v, long i)
{
    int k, d = v->dim, bad = 0;
    for (k = 0; k < d; ++k)
        bad |= !rc_isfinite(v->qp[i * d + k]) || !rc_isfinite(v->p[i * d + k]);
    return bad ? (double)(v->n - i) : 0.0;
}

RC_HD static inline void rc_k_md_finite(const rc_k_md *v, long i)
{
    v->red[i] = rc_k_md_bad(v, i);
}

/* red[c] = rc_k_md_bad's largest over contact c's spheres: with exact
 * collisions only A's endpoints change q^p or p after the motion pass,
 * which checked every sphere (rc_k_md_max_guard), so the step's end checks
 * them alone. */
RC_HD static inline void rc_k_md_finite_con(const rc_k_md *v, long c)
{
    const rc_k_md_contact *cc = v->con + c;
    double bi = rc_k_md_bad(v, cc->i);
    v->red[c] = cc->j >= 0 ? rc_fmax(bi, rc_k_md_bad(v, cc->j)) : bi;
}

/* The kick p -= h/2 (grad V(q) + grad V(x)) of particle i (grad1 = grad
 * with the uniform field alone). */
RC_HD static inline void rc_k_md_kick_forces(const rc_k_md *v, long i)
{
    int k, d = v->dim;
    for (k = 0; k < d; ++k)
        v->p[i * d + k] -=
            0.5 * v->h * (rc_k_md_grad(v, v->grad, i, k) +
                          rc_k_md_grad(v, v->grad1, i, k));
}

/* red[c] = 1 when contact c received a reflection impulse this step and
 * is a pair (pairs = 1) or a wall contact (pairs = 0). */
RC_HD static inline void rc_k_md_collided(const rc_k_md *v, long c, int pairs)
{
    const rc_k_md_contact *cc = v->con + c;
    /* exact collisions count impacts (a contact can take two) */
    double hits = v->exact ? (double)cc->hits : cc->lam > 0.0 ? 1.0 : 0.0;
    v->red[c] = (cc->j >= 0) == pairs ? hits : 0.0;
}

/* Per-contact terms of the step's counters: red[c] = (lam + mu) dist for
 * pairs (the collision virial). */
RC_HD static inline void rc_k_md_virial(const rc_k_md *v, long c)
{
    const rc_k_md_contact *cc = v->con + c;
    /* exact collisions: each impulse times the distance at its impact */
    v->red[c] = cc->j < 0 ? 0.0
                : v->exact ? cc->vir
                           : (cc->lam + cc->mu) * cc->dist;
}

/* ---------------------------------------------------------- reductions */

/* The deterministic sum (and max) of both launchers and of the host
 * engine: chunks of RC_K_SUM_CHUNK values summed in index order
 * (rc_k_sum_chunk), then the chunk results combined by one fixed binary
 * tree: at level s = 1, 2, 4, ... partial c (c a multiple of 2 s) takes
 * partial c + s when that exists,
 *
 *     partial[c] = partial[c] + partial[c + s]   (c + s < nchunk),
 *
 * and the total is partial[0] (0 for no values).  A GPU runs each level
 * in parallel (rc_k_tree_level, one item per c); the CPU launcher and the
 * host engine fold the same tree as a stream (rc_k_tree_push/_total: a
 * binary counter, which pairs exactly the same operands in the same
 * order; tests/test_md_dengine.c checks the two forms bitwise for every
 * count up to several thousand).  The same association everywhere, so
 * the same bits. */

RC_HD static inline double rc_k_sum_chunk(const double *x, long n, long c)
{
    long a, lo = c * RC_K_SUM_CHUNK,
            hi = lo + RC_K_SUM_CHUNK < n ? lo + RC_K_SUM_CHUNK : n;
    double s = 0.0;
    for (a = lo; a < hi; ++a)
        s += x[a];
    return s;
}

/* The max of a chunk: four running maxima over the items by index mod 4,
 * then combined; the largest value either way (a max rounds nothing),
 * in four independent chains instead of one (the compare's latency at
 * every item was 2 % of a fluid's run). */
RC_HD static inline double rc_k_max_chunk(const double *x, long n, long c)
{
    long a, lo = c * RC_K_SUM_CHUNK,
            hi = lo + RC_K_SUM_CHUNK < n ? lo + RC_K_SUM_CHUNK : n;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (a = lo; a + 4 <= hi; a += 4) {
        s0 = rc_fmax(s0, x[a]);
        s1 = rc_fmax(s1, x[a + 1]);
        s2 = rc_fmax(s2, x[a + 2]);
        s3 = rc_fmax(s3, x[a + 3]);
    }
    for (; a < hi; ++a)
        s0 = rc_fmax(s0, x[a]);
    return rc_fmax(rc_fmax(s0, s1), rc_fmax(s2, s3));
}

RC_HD static inline double rc_k_tree_op(double a, double b, int is_max)
{
    return is_max ? rc_fmax(a, b) : a + b;
}

/* Item t of tree level s over partial[0..n): c = 2 s t. */
RC_HD static inline void rc_k_tree_level(double *partial, long n, long s,
                                         long t, int is_max)
{
    long c = 2 * s * t;
    if (c + s < n)
        partial[c] = rc_k_tree_op(partial[c], partial[c + s], is_max);
}

/* The same tree folded as a stream: push the chunk results in chunk
 * order, then take the total.  The stack holds one subtree per set bit
 * of the count (64 bits: any count). */
typedef struct rc_k_tree {
    double v[64];
    long w[64]; /* leaves under each subtree */
    int depth, is_max;
} rc_k_tree;

RC_HD static inline void rc_k_tree_init(rc_k_tree *t, int is_max)
{
    t->depth = 0;
    t->is_max = is_max;
}

RC_HD static inline void rc_k_tree_push(rc_k_tree *t, double x)
{
    t->v[t->depth] = x;
    t->w[t->depth] = 1;
    t->depth++;
    while (t->depth >= 2 && t->w[t->depth - 1] == t->w[t->depth - 2]) {
        t->v[t->depth - 2] =
            rc_k_tree_op(t->v[t->depth - 2], t->v[t->depth - 1], t->is_max);
        t->w[t->depth - 2] *= 2;
        t->depth--;
    }
}

/* Right to left: the deepest unfinished subtree is the right operand of
 * the one before it, as in the levels above. */
RC_HD static inline double rc_k_tree_total(const rc_k_tree *t)
{
    int k;
    double acc;
    if (t->depth == 0)
        return 0.0;
    acc = t->v[t->depth - 1];
    for (k = t->depth - 2; k >= 0; --k)
        acc = rc_k_tree_op(t->v[k], acc, t->is_max);
    return acc;
}

/* The whole reduction of x[0..n), serially (the CPU launcher's). */
RC_HD static inline double rc_k_reduce(const double *x, long n, int is_max)
{
    long c, nc = (n + RC_K_SUM_CHUNK - 1) / RC_K_SUM_CHUNK;
    rc_k_tree t;
    rc_k_tree_init(&t, is_max);
    for (c = 0; c < nc; ++c)
        rc_k_tree_push(&t, is_max ? rc_k_max_chunk(x, n, c)
                                  : rc_k_sum_chunk(x, n, c));
    return rc_k_tree_total(&t);
}

/* --------------------------------------------------------- observables */

/* Per-particle terms of the observables, each summed over particles in
 * chunks (rc_k_sum_chunk's association) by both engines: kinetic energy
 * p.p / 2m, momentum component k, potential energy of the uniform field
 * -m g . x (x unwrapped), squared displacement from ref (unwrapped). */
enum {
    RC_K_MD_OBS_KE = 0,
    RC_K_MD_OBS_P0 = 1, /* P1, P2 follow */
    RC_K_MD_OBS_POT = 4,
    RC_K_MD_OBS_MSD = 5
};

RC_HD static inline double rc_k_md_obs_term(const rc_k_md *v, long i,
                                            int what)
{
    int k, d = v->dim;
    double s = 0.0;
    switch (what) {
    case RC_K_MD_OBS_KE:
        for (k = 0; k < d; ++k) {
            double pk = v->p[i * d + k];
            s += 0.5 * pk * pk * v->inv_mass[i];
        }
        return s;
    case RC_K_MD_OBS_POT:
        for (k = 0; k < d; ++k)
            s -= v->mass[i] * v->gravity[k] *
                 (v->q[i * d + k] + v->image[i * d + k] * v->box.L[k]);
        return s;
    case RC_K_MD_OBS_MSD:
        for (k = 0; k < d; ++k) {
            double u = v->q[i * d + k] + v->image[i * d + k] * v->box.L[k] -
                       v->ref[i * d + k];
            s += u * u;
        }
        return s;
    default: /* a momentum component */
        k = what - RC_K_MD_OBS_P0;
        return k < d ? v->p[i * d + k] : 0.0;
    }
}

/* red[i] = term v->obs of particle i. */
RC_HD static inline void rc_k_md_observe(const rc_k_md *v, long i)
{
    v->red[i] = rc_k_md_obs_term(v, i, v->obs);
}

/* Chunk c's sums of terms whats[0 .. nw) into out[0 .. nw): each the sum
 * of rc_k_sum_chunk over red as the observe kernel writes it (index
 * order from 0.0), so the chunks' tree gives rc_k_md_obs_sum's bits (the
 * CPU launcher's one pass over the spheres for all the terms of a row:
 * rc_dmd_ops.obs_sums).  The terms side by side, a sphere at a time:
 * each sum's additions are in the same order, and the nw chains of
 * dependent additions overlap instead of following one another (a row's
 * six sums of 256 000 spheres 2.9 -> 2.4 ms).  nw at most RC_K_OBS_MAX
 * (RC_DMD_SLOTS, which the launchers check). */
#define RC_K_OBS_MAX 16
RC_HD static inline void rc_k_md_obs_chunk(const rc_k_md *v, long c,
                                           const int *whats, int nw,
                                           double *out)
{
    long i, lo = c * RC_K_SUM_CHUNK,
            hi = lo + RC_K_SUM_CHUNK < v->n ? lo + RC_K_SUM_CHUNK : (long)v->n;
    double s[RC_K_OBS_MAX];
    int w;
    for (w = 0; w < nw; ++w)
        s[w] = 0.0;
    for (i = lo; i < hi; ++i)
        for (w = 0; w < nw; ++w)
            s[w] += rc_k_md_obs_term(v, i, whats[w]);
    for (w = 0; w < nw; ++w)
        out[w] = s[w];
}

/* The sum over particles of term `what` in the launchers' association
 * (chunks in index order, then the tree): the host's form of
 * RUN(observe) + the launcher's sum, the same bits. */
RC_HD static inline double rc_k_md_obs_sum(const rc_k_md *v, int what)
{
    long c, i, nc = ((long)v->n + RC_K_SUM_CHUNK - 1) / RC_K_SUM_CHUNK;
    rc_k_tree t;
    rc_k_tree_init(&t, 0);
    for (c = 0; c < nc; ++c) {
        long hi = (c + 1) * RC_K_SUM_CHUNK < v->n ? (c + 1) * RC_K_SUM_CHUNK
                                                   : (long)v->n;
        double s = 0.0;
        for (i = c * RC_K_SUM_CHUNK; i < hi; ++i)
            s += rc_k_md_obs_term(v, i, what);
        rc_k_tree_push(&t, s);
    }
    return rc_k_tree_total(&t);
}

/* red[i] = the largest overlap (minus the gap, 0 if apart) at q of the
 * items i k .. i k + k - 1 of the bucket order, k = ceil(over_n / n): the
 * candidates whose gap at the build the motion since can have closed
 * (every other pair is apart and adds 0).  A slot per sphere, not per
 * pair: the reduction then needs n slots, not one a candidate (at eta =
 * 0.45 six a sphere from the lattice, which made red, and the process's
 * peak, 24 bytes a sphere larger); a max of maxes is the same bits in
 * any grouping, and so in either order of the list. */
RC_HD static inline void rc_k_md_overlap_pair(const rc_k_md *v, long i)
{
    double n[3], dist, w = 0.0;
    long k = (v->over_n + v->n - 1) / v->n, t,
         hi = (i + 1) * k < v->over_n ? (i + 1) * k : v->over_n;
    const int d = v->dim;
    for (t = i * k; t < hi; ++t) {
        const long e = v->near ? (long)v->near[t] : t;
        const int a = v->cand_i[e], b = v->cand_j[e];
        const double *qa = v->q + (long)a * d, *qb = v->q + (long)b * d;
        const double sum = rc_k_md_rad(v, a) + rc_k_md_rad(v, b);
        double s;
#if !defined(__CUDA_ARCH__) && defined(__GNUC__)
        /* the list is in gap order, so both spheres are read at places
         * the hardware does not foresee: asked for some pairs ahead (a
         * hint only) */
        if (t + RC_K_MD_AHEAD < v->over_n) {
            const long e2 = v->near ? (long)v->near[t + RC_K_MD_AHEAD]
                                    : t + RC_K_MD_AHEAD;
            __builtin_prefetch(v->q + (long)v->cand_i[e2] * d);
            __builtin_prefetch(v->q + (long)v->cand_j[e2] * d);
        }
#endif
        /* a pair clearly apart adds nothing: rc_k_md_pair_gap's gap is
         * then positive, and max(0, -gap) is 0.  Its distance by plain
         * differences where every component is within lim (where the
         * minimum image is the plain difference, rc_k_pair_plain_d2),
         * compared with the contact distance squared raised far beyond
         * its rounding; any other pair (near contact, across a periodic
         * face, NaN) takes the gap as before, with its divide and floor
         * per component and its normal's divisions */
        if (rc_k_pair_plain_d2(v->lim, qa, qb, d, &s) &&
            s > sum * sum * (1.0 + 1e-9))
            continue;
        w = rc_fmax(w, rc_fmax(0.0, -rc_k_md_pair_gap(&v->box, v->radius,
                                                       v->q, a, b, n,
                                                       &dist)));
    }
    v->red[i] = w;
}

/* red[i] = overlap of particle i with any wall. */
RC_HD static inline void rc_k_md_overlap_wall(const rc_k_md *v, long i)
{
    int k;
    double n[3], w = 0.0;
    for (k = 0; k < v->dim; ++k)
        if (!v->box.periodic[k]) {
            w = rc_fmax(w, -rc_k_md_wall_gap(&v->box, v->radius, v->q,
                                             (int)i, 2 * k, n));
            w = rc_fmax(w, -rc_k_md_wall_gap(&v->box, v->radius, v->q,
                                             (int)i, 2 * k + 1, n));
        }
    v->red[i] = w;
}

#ifdef __cplusplus
}
#endif
#endif

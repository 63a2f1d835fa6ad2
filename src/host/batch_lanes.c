/* The batch engine's lane path (DESIGN §5): a batch of members stepped
 * together, members in SIMD lanes, by the stage bodies of
 * src/kernels/rc_gvi_lanes.h; the members whose step needs more than
 * those stages cover are stepped by the scalar body rc_k_gvi_step, each
 * from its own start, and go on in lanes at the next step.
 *
 * What it replaces is rc_k_member_run (src/kernels/rc_member.h) called
 * once per member: the same start check, the same steps, the same
 * diagnostics rows and statistics, in the same order of operations per
 * member, so members.csv is byte-identical to the scalar engine's
 * (tests/test_ensemble_lanes.c) for any batch size and thread count.
 *
 * The block's work is one function compiled for AVX-512, AVX2 and the
 * baseline (GCC target_clones: the loader picks the widest the CPU has).
 * The C build never contracts a*b+c into an FMA (-std=c11; see
 * CMakeLists.txt), so every clone rounds as the scalar body does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ensemble_impl.h"
#include "../kernels/rc_gvi_lanes.h"
#include "../kernels/rc_member.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&       \
    defined(__linux__)
#define RC_LANES_CLONES                                                       \
    __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RC_LANES_CLONES
#endif

/* Lanes per block: every lane loop runs this many iterations (a
 * compile-time count: no remainder loop, no run-time checks).  A batch
 * is stepped 64 members at a time, the last block padded with lanes that
 * are not live.  64 doubles of each array are one kilobyte and the
 * block's arrays stay in L1 (measured: 32 and 128 are about 10 % slower
 * on the pogo ensemble). */
#define RC_LANE_BLOCK 64L

int rc_batch_lanes_ok_(const rc_batch_plan *plan)
{
    return rc_k_lanes_ok(&plan->view);
}

/* Everything a block needs, carved from one allocation.  The row
 * statistics of rc_k_member_run are per-lane arrays ([L] unless noted),
 * so a diagnostics row is one vectorised pass over the lanes; the sums
 * over time (s_t, s_tt) and the row count are the same for every live
 * lane and kept once. */
typedef struct rc_lane_block {
    rc_k_lanes s;
    double *e, *kin, *pot, *mom, *ang; /* rows: [n*L], [L], [L], [3L], [3L] */
    double *qs, *ps, *gs;              /* one member, contiguous: [N] */
    unsigned char *live;               /* [L] */
    double *e0, *scale, *p0, *l0;      /* [L], [L], [3L], [3L] */
    double *s_y, *s_ty, *wins;         /* [L], [L], [10L] */
    double *max_rel, *final_rel, *dp, *dl;
    long *impacts, *steps;
    int *slow;                         /* [L] lanes for the scalar body */
    double s_t, s_tt;
    long row;
    rc_k_gvi_work w;                   /* the scalar body's scratch */
} rc_lane_block;

/* One diagnostics row of every lane (rc_k_member_run's row, the same
 * operations in the same order per lane).  A lane that is no longer live
 * is updated too and ignored: its member is re-run alone. */
static inline __attribute__((always_inline)) void
rc_lanes_row(rc_lane_block *b, long step, double dt, long win)
{
    const long L = RC_LANE_BLOCK;
    const double time = (double)step * dt;
    double *const kin = b->kin, *const pot = b->pot;
    double *const mom = b->mom, *const ang = b->ang;
    double *const e0 = b->e0, *const scale = b->scale;
    double *const p0 = b->p0, *const l0 = b->l0;
    double *const max_rel = b->max_rel, *const final_rel = b->final_rel;
    double *const dp = b->dp, *const dl = b->dl;
    double *const s_y = b->s_y, *const s_ty = b->s_ty;
    double *const wsum = win >= 1 && b->row < 10 * win
                             ? b->wins + (b->row / win) * L
                             : (double *)0;
    unsigned char *const live = b->live;
    if (step == 0)
        RC_LANES(l0i, 0, L)
        {
            int k;
            e0[l0i] = kin[l0i] + pot[l0i];
            scale[l0i] = rc_k_energy_scale(kin[l0i], pot[l0i], e0[l0i]);
            for (k = 0; k < 3; ++k) {
                p0[k * L + l0i] = mom[k * L + l0i];
                l0[k * L + l0i] = ang[k * L + l0i];
            }
        }
    RC_LANES(li, 0, L)
    {
        double energy = kin[li] + pot[li], rel, sp = 0.0, sl = 0.0;
        int k;
        rel = (energy - e0[li]) / scale[li];
        max_rel[li] = rc_fmax(max_rel[li], rc_fabs(rel));
        final_rel[li] = rel;
        for (k = 0; k < 3; ++k) {
            double a = mom[k * L + li] - p0[k * L + li];
            double c = ang[k * L + li] - l0[k * L + li];
            sp += a * a;
            sl += c * c;
        }
        dp[li] = rc_fmax(dp[li], rc_sqrt(sp));
        dl[li] = rc_fmax(dl[li], rc_sqrt(sl));
        s_y[li] += rel;
        s_ty[li] += time * rel;
        live[li] = live[li] & rc_isfinite(energy);
    }
    if (wsum)
        RC_LANES(lw, 0, L) wsum[lw] += final_rel[lw];
    b->s_t += time;
    b->s_tt += time * time;
    ++b->row;
}

/* Lane l's step by the scalar body, from (q, p) of the block; the result
 * into (x, y) and grad V(x) into g1.  0 when the member failed. */
static int rc_lane_slow_step(rc_k_gvi g, rc_lane_block *b, long l,
                             long *impacts)
{
    rc_k_lanes *s = &b->s;
    long L = s->L;
    int c, N = g.N;
    rc_k_gvi_step_info info;
    for (c = 0; c < N; ++c) {
        b->qs[c] = s->q[(long)c * L + l];
        b->ps[c] = s->p[(long)c * L + l];
    }
    g.eps_g = s->eps_g[l];
    g.eps_v = s->eps_v[l];
    if (rc_k_gvi_step(&g, &b->w, b->qs, b->ps, &info) != RC_K_GVI_OK)
        return 0;
    rc_k_gvi_gradient(&g, b->w.x, b->gs);
    for (c = 0; c < N; ++c) {
        s->x[(long)c * L + l] = b->w.x[c];
        s->y[(long)c * L + l] = b->w.y[c];
        s->g1[(long)c * L + l] = b->gs[c];
    }
    *impacts += info.reflections;
    return 1;
}

/* The block's steps and rows, d a literal of the dispatch below. */
static inline __attribute__((always_inline)) void
rc_lanes_steps(const rc_batch_plan *plan, rc_lane_block *b, const int d)
{
    const rc_k_gvi *g = &plan->view;
    rc_k_lanes *s = &b->s;
    const long L = RC_LANE_BLOCK;
    long step, l, win = plan->rows / 10;
    long steps = plan->steps, every = plan->every, nslow;
    unsigned char *const live = b->live;
    int *const slow = b->slow;
    const int *const kind = s->kind, *const refl = s->refl;
    long *const impacts = b->impacts, *const nsteps = b->steps;
    int any_single, any_slow;
    rc_k_lanes_terms(g->m, d, s->q, L, s->g, (double *)0, 0, L);
    for (step = 0;; ++step) {
        int last = step == steps;
        if (step % every == 0 || last) {
            rc_k_lanes_energies(g->m, d, s->q, s->p, L, b->e, b->kin, b->pot,
                                b->mom, b->ang, 0, L);
            rc_lanes_row(b, step, plan->dt, win);
        }
        if (last)
            break;
        rc_k_lanes_screen(g, d, L, s, b->live, 0, L);
        any_single = 0;
        for (l = 0; l < L; ++l)
            any_single |= kind[l] == RC_LANE_SINGLE;
        if (any_single) {
            rc_k_lanes_single(g, d, L, s, 0, L);
            rc_k_lanes_kick(g, d, L, s, 0, L);
        } else { /* nothing reflects: p^+ is p */
            double *pr = s->pr;
            s->pr = s->p;
            rc_k_lanes_kick(g, d, L, s, 0, L);
            s->pr = pr;
        }
        /* the live SLOW lanes compacted onto a list (branch-free), each
         * stepped by the scalar body; then the lanes' counters (a lane
         * that is not SLOW is live: the screen marks dead lanes SLOW) */
        any_slow = 0;
        for (l = 0; l < L; ++l) /* vectorised: most steps have none */
            any_slow |= live[l] & (kind[l] == RC_LANE_SLOW);
        nslow = 0;
        for (l = 0; any_slow && l < L; ++l) {
            slow[nslow] = (int)l;
            nslow += live[l] & (kind[l] == RC_LANE_SLOW);
        }
        for (l = 0; l < nslow; ++l)
            if (!rc_lane_slow_step(*g, b, slow[l], &b->impacts[slow[l]]))
                live[slow[l]] = 0;
        RC_LANES(li, 0, L)
        {
            impacts[li] += kind[li] != RC_LANE_SLOW ? refl[li] : 0;
            nsteps[li] = live[li] ? step + 1 : nsteps[li];
        }
        {
            double *t;
            t = s->q, s->q = s->x, s->x = t;
            t = s->p, s->p = s->y, s->y = t;
            t = s->g, s->g = s->g1, s->g1 = t;
        }
    }
}

void RC_LANES_CLONES rc_lanes_block_run_(const rc_batch_plan *plan,
                                        rc_lane_block *b)
{
    switch (plan->dim) {
    case 1:
        rc_lanes_steps(plan, b, 1);
        break;
    case 2:
        rc_lanes_steps(plan, b, 2);
        break;
    default:
        rc_lanes_steps(plan, b, 3);
        break;
    }
}

rc_status rc_batch_run_lanes_(const rc_scenario *scn,
                              const rc_batch_plan *plan, long k0, long B,
                              double *values, rc_member *mb,
                              unsigned char *redo)
{
    const rc_ensemble_spec *e = &scn->ens;
    const rc_k_gvi *g = &plan->view;
    int N = plan->N, n = plan->n, c;
    const long L = RC_LANE_BLOCK;
    long j, j0, nd, ni;
    long wd = plan->work_doubles, wi = plan->work_ints;
    double *d, *base;
    int *iw;
    rc_lane_block b;
    rc_k_lanes *s = &b.s;

    memset(&b, 0, sizeof b);
    /* 9 N-by-L arrays, 11 L arrays, a 3L gradient block, n*L energy
     * shares, 6 L momenta, the row statistics (2 + 6 + 2 + 10 + 4 L),
     * 3 N member vectors, the scalar body's scratch */
    nd = 9L * N * L + 11L * L + 3L * L + (long)n * L + 6L * L + 24L * L +
         3L * N + wd;
    ni = 5L * L + wi + 1;
    base = (double *)calloc((size_t)nd, sizeof(double));
    iw = (int *)malloc(sizeof(int) * (size_t)ni);
    b.live = (unsigned char *)calloc((size_t)L, 1);
    b.impacts = (long *)calloc((size_t)(2 * L), sizeof(long));
    if (!base || !iw || !b.live || !b.impacts) {
        free(base);
        free(iw);
        free(b.live);
        free(b.impacts);
        return RC_ERR_NOMEM;
    }
    b.steps = b.impacts + L;
    d = base;
    s->L = L;
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
    b.kin = d; d += L;
    b.pot = d; d += L;
    b.e = d; d += (long)n * L;
    b.mom = d; d += 3L * L;
    b.ang = d; d += 3L * L;
    b.e0 = d; d += L;
    b.scale = d; d += L;
    b.p0 = d; d += 3L * L;
    b.l0 = d; d += 3L * L;
    b.s_y = d; d += L;
    b.s_ty = d; d += L;
    b.wins = d; d += 10L * L;
    b.max_rel = d; d += L;
    b.final_rel = d; d += L;
    b.dp = d; d += L;
    b.dl = d; d += L;
    b.qs = d; d += N;
    b.ps = d; d += N;
    b.gs = d; d += N;
    rc_k_gvi_work_carve(&b.w, N, plan->sys->ncon, plan->sys->n_eq, d,
                        iw + 5L * L);
    b.slow = iw + 4L * L;
    s->nA = iw;
    s->aterm = iw + L;
    s->kind = iw + 2L * L;
    s->refl = iw + 3L * L;

    for (j0 = 0; j0 < B; j0 += L) {
        long m = B - j0 < L ? B - j0 : L; /* members in this block */
        memset(base, 0, sizeof(double) * (size_t)nd);
        memset(b.live, 0, (size_t)L);
        memset(b.impacts, 0, sizeof(long) * (size_t)(2 * L));
        b.s_t = b.s_tt = 0.0;
        b.row = 0;
        /* initial states, tolerances and the start check, member by
         * member (rc_k_member_run's prologue) */
        for (j = 0; j < m; ++j) {
            rc_k_gvi gj = *g;
            long km = k0 + j0 + j;
            rc_member_state_(scn, km, values + km * e->nrules, b.qs, b.ps);
            for (c = 0; c < N; ++c) {
                s->q[(long)c * L + j] = b.qs[c];
                s->p[(long)c * L + j] = b.ps[c];
            }
            b.live[j] = rc_k_member_start(&gj, scn->integ.eps_g,
                                          scn->integ.eps_v, &b.w, b.qs, b.ps);
            s->eps_g[j] = gj.eps_g;
            s->eps_v[j] = gj.eps_v;
        }
        /* lanes past the last member: copies of the first lane that are
         * not live (stepped in lanes, never reported) */
        for (j = m; j < L; ++j) {
            for (c = 0; c < N; ++c) {
                s->q[(long)c * L + j] = s->q[(long)c * L];
                s->p[(long)c * L + j] = s->p[(long)c * L];
            }
            s->eps_g[j] = s->eps_g[0];
            s->eps_v[j] = s->eps_v[0];
        }
        rc_lanes_block_run_(plan, &b);
        for (j = 0; j < m; ++j) {
            rc_k_member_out out;
            memset(&out, 0, sizeof out);
            if (b.live[j]) {
                out.steps = b.steps[j];
                out.impacts = b.impacts[j];
                out.e0 = b.e0[j];
                out.max_rel = b.max_rel[j];
                out.final_rel = b.final_rel[j];
                out.dp = b.dp[j];
                out.dl = b.dl[j];
                rc_k_member_finish(&out, plan->rows, b.s_t, b.s_y[j], b.s_tt,
                                   b.s_ty[j], b.wins + j, L);
                out.ok = 1;
            }
            rc_batch_member_from_out_(&out, &mb[j0 + j], &redo[j0 + j]);
        }
    }
    free(base);
    free(iw);
    free(b.live);
    free(b.impacts);
    return RC_OK;
}

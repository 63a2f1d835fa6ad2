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
 * This file is the CPU launcher of the lane path's one orchestration
 * (rc_lanes_drive, lanes_drive.h; the GPU's is rc_cuda_lanes_run): its
 * operations run a block of 64 lanes each, compiled for AVX-512, AVX2
 * and the baseline (GCC target_clones: the loader picks the widest the
 * CPU has).  The C build never contracts a*b+c into an FMA (-std=c11;
 * see CMakeLists.txt), so every clone rounds as the scalar body does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ensemble_impl.h"
#include "lanes_drive.h"
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
    return rc_k_lanes_ok(&plan->view) || rc_k_lanes_eq_ok(&plan->view);
}

int rc_lanes_drive(const rc_lanes_ops *ops, void *ctx, long steps,
                   long every, long rows, double dt, rc_lanes_time *t)
{
    long step, row = 0, win = rows / 10;
    int rc;
    t->s_t = t->s_tt = 0.0;
    t->rows = 0;
    if ((rc = ops->start(ctx)) != 0)
        return rc;
    for (step = 0;; ++step) {
        int last = step == steps;
        if (step % every == 0 || last) {
            double time = (double)step * dt;
            long wslot = win >= 1 && row < 10 * win ? row / win : -1;
            if ((rc = ops->row(ctx, step == 0, time, wslot)) != 0)
                return rc;
            t->s_t += time;
            t->s_tt += time * time;
            ++row;
        }
        if (last)
            break;
        if ((rc = ops->fast(ctx)) != 0 || (rc = ops->slow(ctx, step)) != 0 ||
            (rc = ops->swap(ctx)) != 0)
            return rc;
    }
    t->rows = row;
    return 0;
}

/* The CPU launcher's block: everything carved from one allocation. */
typedef struct rc_lane_block {
    const rc_batch_plan *plan;
    rc_k_lanes s;
    rc_k_lanes_stats st;
    double *qs, *ps, *gs;              /* one member, contiguous: [N] */
    int *slow;                         /* [L] lanes for the scalar body */
    rc_k_gvi_work w;                   /* the scalar body's scratch */
} rc_lane_block;

/* Each operation is compiled for AVX-512, AVX2 and the baseline, with
 * the dimension a literal (the loops over coordinates unroll) through
 * this dispatch. */
#define RC_LANES_BY_DIM(b, CALL)                                              \
    switch ((b)->plan->dim) {                                                 \
    case 1: {                                                                 \
        const int d = 1;                                                      \
        CALL;                                                                 \
        break;                                                                \
    }                                                                         \
    case 2: {                                                                 \
        const int d = 2;                                                      \
        CALL;                                                                 \
        break;                                                                \
    }                                                                         \
    default: {                                                                \
        const int d = 3;                                                      \
        CALL;                                                                 \
        break;                                                                \
    }                                                                         \
    }

int RC_LANES_CLONES rc_cpu_lanes_start_(void *ctx)
{
    rc_lane_block *b = (rc_lane_block *)ctx;
    const rc_k_gvi *g = &b->plan->view;
    const long L = RC_LANE_BLOCK;
    RC_LANES_BY_DIM(b, rc_k_lanes_terms(g->m, d, b->s.q, L, b->s.g,
                                        (double *)0, 0, L))
    return 0;
}

int RC_LANES_CLONES rc_cpu_lanes_row_(void *ctx, int first, double time,
                                      long wslot)
{
    rc_lane_block *b = (rc_lane_block *)ctx;
    const rc_k_gvi *g = &b->plan->view;
    const long L = RC_LANE_BLOCK;
    RC_LANES_BY_DIM(b, rc_k_lanes_row(g->m, d, L, b->s.q, b->s.p, &b->st,
                                      first, time, wslot, 0, L))
    return 0;
}

/* The screen, then the single-term reflection only when some lane has
 * one (else p^+ is p), then the kick. */
static inline __attribute__((always_inline)) void
rc_cpu_lanes_fast_d(rc_lane_block *b, const int d)
{
    const rc_k_gvi *g = &b->plan->view;
    const long L = RC_LANE_BLOCK;
    rc_k_lanes *s = &b->s;
    const int *const kind = s->kind;
    int any_single = 0;
    long l;
    rc_k_lanes_screen(g, d, L, s, b->st.live, 0, L);
    for (l = 0; l < L; ++l)
        any_single |= kind[l] == RC_LANE_SINGLE;
    if (any_single) {
        rc_k_lanes_single(g, d, L, s, 0, L);
        rc_k_lanes_kick(g, d, L, s, 0, L);
    } else {
        double *pr = s->pr;
        s->pr = s->p;
        rc_k_lanes_kick(g, d, L, s, 0, L);
        s->pr = pr;
    }
}

int RC_LANES_CLONES rc_cpu_lanes_fast_(void *ctx)
{
    rc_lane_block *b = (rc_lane_block *)ctx;
    long l;
    if (b->plan->lanes_one_by_one) { /* the GPU thread's form, lane by lane */
        for (l = 0; l < RC_LANE_BLOCK; ++l)
            (void)rc_k_lanes_fast_one(&b->plan->view, b->plan->dim,
                                      RC_LANE_BLOCK, &b->s, b->st.live, l);
        return 0;
    }
    if (b->plan->view.neq > 0) { /* SHAKE and RATTLE in lanes */
        RC_LANES_BY_DIM(b, rc_k_lanes_eq_step(&b->plan->view, d,
                                              RC_LANE_BLOCK, &b->s,
                                              b->st.live, 0, RC_LANE_BLOCK))
        return 0;
    }
    RC_LANES_BY_DIM(b, rc_cpu_lanes_fast_d(b, d))
    return 0;
}

/* The live SLOW lanes compacted onto a list (branch-free, and only when
 * a vectorised check finds one: most steps have none), each stepped by
 * the scalar body; then the counters. */
int RC_LANES_CLONES rc_cpu_lanes_slow_(void *ctx, long step)
{
    rc_lane_block *b = (rc_lane_block *)ctx;
    const long L = RC_LANE_BLOCK;
    const int *const kind = b->s.kind;
    unsigned char *const live = b->st.live;
    int *const slow = b->slow, any_slow = 0;
    long l, nslow = 0;
    for (l = 0; l < L; ++l)
        any_slow |= live[l] & (kind[l] == RC_LANE_SLOW);
    for (l = 0; any_slow && l < L; ++l) {
        slow[nslow] = (int)l;
        nslow += live[l] & (kind[l] == RC_LANE_SLOW);
    }
    for (l = 0; l < nslow; ++l)
        if (!rc_k_lanes_slow_step(b->plan->view, L, &b->s, &b->w, b->qs,
                                  b->ps, b->gs, slow[l],
                                  &b->st.impacts[slow[l]]))
            live[slow[l]] = 0;
    rc_k_lanes_counters(&b->s, &b->st, step, 0, L);
    return 0;
}

static int rc_cpu_lanes_swap(void *ctx)
{
    rc_k_lanes_swap(&((rc_lane_block *)ctx)->s);
    return 0;
}

static const rc_lanes_ops rc_cpu_lanes_ops = {
    rc_cpu_lanes_start_, rc_cpu_lanes_row_, rc_cpu_lanes_fast_,
    rc_cpu_lanes_slow_, rc_cpu_lanes_swap};

rc_status rc_batch_run_lanes_(const rc_scenario *scn,
                              const rc_batch_plan *plan, long k0, long B,
                              double *values, rc_member *mb,
                              unsigned char *redo)
{
    const rc_ensemble_spec *e = &scn->ens;
    const rc_k_gvi *g = &plan->view;
    int N = plan->N, c, ne = g->neq;
    const long L = RC_LANE_BLOCK;
    long j, j0, nd, ni, nl, neqd = ne > 0 ? rc_k_lanes_eq_doubles(N, ne, L) : 0;
    long neqi = ne > 0 ? RC_K_LANES_EQ_INTS * L : 0;
    double *base;
    int *iw;
    long *lw;
    unsigned char *live;
    rc_lane_block b;
    rc_k_lanes *s = &b.s;

    memset(&b, 0, sizeof b);
    b.plan = plan;
    /* the lane arrays, 3 N member vectors, the scalar body's scratch */
    nd = rc_k_lanes_doubles(N, plan->n, L) + 3L * N + plan->work_doubles +
         neqd;
    ni = RC_K_LANES_INTS * L + L + plan->work_ints + 1 + neqi;
    nl = RC_K_LANES_LONGS * L;
    base = (double *)calloc((size_t)nd, sizeof(double));
    iw = (int *)calloc((size_t)ni, sizeof(int));
    lw = (long *)calloc((size_t)nl, sizeof(long));
    live = (unsigned char *)calloc((size_t)L, 1);
    if (!base || !iw || !lw || !live) {
        free(base);
        free(iw);
        free(lw);
        free(live);
        return RC_ERR_NOMEM;
    }
    b.qs = base + rc_k_lanes_doubles(N, plan->n, L);
    b.ps = b.qs + N;
    b.gs = b.ps + N;
    b.slow = iw + RC_K_LANES_INTS * L;
    rc_k_gvi_work_carve(&b.w, N, plan->sys->ncon, plan->sys->n_eq,
                        b.gs + N, b.slow + L);

    for (j0 = 0; j0 < B; j0 += L) {
        long m = B - j0 < L ? B - j0 : L; /* members in this block */
        rc_lanes_time t;
        /* a fresh block, carved anew (the last block's steps swapped the
         * state pointers) */
        memset(base, 0, sizeof(double) * (size_t)nd);
        memset(lw, 0, sizeof(long) * (size_t)nl);
        memset(live, 0, (size_t)L);
        rc_k_lanes_carve(s, &b.st, N, plan->n, L, base, iw, lw, live);
        if (ne > 0) /* after the member vectors and the scalar scratch */
            rc_k_lanes_eq_carve(s, N, ne, L, base + nd - neqd,
                                iw + ni - neqi);
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
            live[j] = (unsigned char)rc_k_member_start(
                &gj, scn->integ.eps_g, scn->integ.eps_v, &b.w, b.qs, b.ps);
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
        rc_lanes_drive(&rc_cpu_lanes_ops, &b, plan->steps, plan->every,
                       plan->rows, plan->dt, &t);
        for (j = 0; j < m; ++j) {
            rc_k_member_out out;
            rc_k_lanes_out(&b.st, L, j, t.rows, t.s_t, t.s_tt, &out);
            rc_batch_member_from_out_(&out, &mb[j0 + j], &redo[j0 + j]);
        }
    }
    free(base);
    free(iw);
    free(lw);
    free(live);
    return RC_OK;
}

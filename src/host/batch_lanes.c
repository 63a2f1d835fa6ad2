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
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ensemble_impl.h"
#include "lanes_drive.h"
#include "simd_clones.h"
#include "../kernels/rc_gvi_lanes.h"
#include "../kernels/rc_member.h"

/* Lanes per block: every lane loop runs this many iterations (a
 * compile-time count: no remainder loop, no run-time checks).  A batch
 * is stepped 64 members at a time, the last block padded with lanes that
 * are not live.  64 doubles of each array are one kilobyte and the
 * block's arrays stay in L1 (measured: 32 and 128 are about 10 % slower
 * on the pogo ensemble). */
#define RC_LANE_BLOCK 64L

/* Zeroed memory on a 64-byte boundary, or NULL; free() releases it.
 * Every lane array starts a multiple of RC_LANE_BLOCK elements into its
 * allocation, so on this boundary each 8-double vector of a lane loop
 * is one cache line: calloc's 16-byte alignment split every AVX-512
 * load and store across two lines (measured on the pogo ensemble, whose
 * block happened to start 48 bytes into a line in every run). */
static void *rc_lanes_calloc_aligned(size_t bytes)
{
    void *p = NULL;
    size_t rounded = (bytes + 63) / 64 * 64;
    if (posix_memalign(&p, 64, rounded > 0 ? rounded : 64) != 0)
        return NULL;
    memset(p, 0, rounded > 0 ? rounded : 64);
    return p;
}

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
        if ((rc = ops->fast(ctx, step)) != 0 ||
            (rc = ops->slow(ctx, step)) != 0 || (rc = ops->swap(ctx)) != 0)
            return rc;
    }
    t->rows = row;
    return 0;
}

/* The CPU launcher's block: everything carved from one allocation. */
typedef struct rc_lane_block {
    const rc_batch_plan *plan;
    rc_k_gvi view;                     /* the plan's, h the block's dt */
    rc_member_params *lane_mp;         /* [L] each lane's own masses, or
                                          NULL (the model's) */
    rc_k_lanes s;
    rc_k_lanes_stats st;
    double *qs, *ps, *gs;              /* one member, contiguous: [N] */
    int *slow;                         /* [L] lanes for the scalar body */
    long *nheld, *nscalar;             /* [L] each lane's steps by
                                          rc_k_lanes_held and by the
                                          scalar body */
    rc_k_gvi_work w;                   /* the scalar body's scratch */
    unsigned char *touch;              /* [N] rc_k_lanes.touch */
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
    const rc_k_gvi *g = &b->view;
    const long L = RC_LANE_BLOCK;
    RC_LANES_BY_DIM(b, rc_k_lanes_terms_m(g->m, b->s.lmass, d, b->s.q, L,
                                          b->s.g, (double *)0, 0, L))
    return 0;
}

int RC_LANES_CLONES rc_cpu_lanes_row_(void *ctx, int first, double time,
                                      long wslot)
{
    rc_lane_block *b = (rc_lane_block *)ctx;
    const rc_k_gvi *g = &b->view;
    const long L = RC_LANE_BLOCK;
    RC_LANES_BY_DIM(b, rc_k_lanes_row_m(g->m, b->s.lmass, b->s.linv, d, L,
                                        b->s.q, b->s.p, &b->st, first, time,
                                        wslot, 0, L))
    return 0;
}

/* The screen, then the single-term reflection only when some lane has
 * one (else p^+ is p), then the kick. */
static inline __attribute__((always_inline)) void
rc_cpu_lanes_fast_d(rc_lane_block *b, const int d)
{
    const rc_k_gvi *g = &b->view;
    const long L = RC_LANE_BLOCK;
    rc_k_lanes *s = &b->s;
    if (rc_k_lanes_screen(g, d, L, s, b->st.live, 0, L)) {
        rc_k_lanes_single(g, d, L, s, 0, L);
        rc_k_lanes_kick(g, d, L, s, 0, L);
    } else {
        double *pr = s->pr;
        s->pr = s->p;
        rc_k_lanes_kick(g, d, L, s, 0, L);
        s->pr = pr;
    }
}

/* After rc_k_lanes_eq_step: the live lanes with a non-empty A that it
 * stepped (rc_k_lanes_held) are counted. */
static void rc_cpu_lanes_count_held(rc_lane_block *b)
{
    const rc_k_lanes *s = &b->s;
    long l;
    if (!rc_k_lanes_held_ok(&b->view))
        return;
    for (l = 0; l < RC_LANE_BLOCK; ++l)
        b->nheld[l] += b->st.live[l] & s->hcand[l] & (s->nA[l] > 0) &
                       (s->kind[l] != RC_LANE_SLOW);
}

int RC_LANES_CLONES rc_cpu_lanes_fast_(void *ctx, long step)
{
    rc_lane_block *b = (rc_lane_block *)ctx;
    long l;
    (void)step; /* counted after the slow lanes (rc_cpu_lanes_slow_) */
    if (b->plan->lanes_one_by_one) { /* the GPU thread's form, lane by lane */
        for (l = 0; l < RC_LANE_BLOCK; ++l)
            (void)rc_k_lanes_fast_one(&b->view, b->plan->dim, RC_LANE_BLOCK,
                                      &b->s, b->st.live, l);
        if (b->view.neq > 0)
            rc_cpu_lanes_count_held(b);
        return 0;
    }
    if (b->view.neq > 0) { /* SHAKE and RATTLE */
        RC_LANES_BY_DIM(b, rc_k_lanes_eq_step(&b->view, d, RC_LANE_BLOCK,
                                              &b->s, b->st.live, 0,
                                              RC_LANE_BLOCK))
        rc_cpu_lanes_count_held(b);
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
    for (l = 0; l < nslow; ++l) {
        rc_k_gvi g = b->view;
        b->nscalar[slow[l]]++;
        if (b->lane_mp) { /* the member's own masses and radii */
            const rc_member_params *mp = &b->lane_mp[slow[l]];
            g.m.mass = mp->mass;
            g.m.inv_mass = mp->inv_mass;
            g.m.radius = mp->radius;
            g.mass_c = mp->mass_c;
            g.inv_mass_c = mp->inv_mass_c;
        }
        if (!rc_k_lanes_slow_step(g, L, &b->s, &b->w, b->qs, b->ps, b->gs,
                                  slow[l], &b->st.impacts[slow[l]]))
            live[slow[l]] = 0;
    }
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

/* Members in the order the blocks take them: by dt (a block's members
 * share one), then by index. */
typedef struct rc_lane_order {
    double dt;
    long j;
} rc_lane_order;

static int rc_lane_order_cmp(const void *a, const void *b)
{
    const rc_lane_order *x = (const rc_lane_order *)a;
    const rc_lane_order *y = (const rc_lane_order *)b;
    if (x->dt != y->dt)
        return x->dt < y->dt ? -1 : 1;
    return x->j < y->j ? -1 : x->j > y->j;
}

rc_status rc_batch_run_lanes_(const rc_scenario *scn,
                              const rc_batch_plan *plan, long k0, long B,
                              double *values, rc_member *mb,
                              unsigned char *redo)
{
    const rc_ensemble_spec *e = &scn->ens;
    const rc_k_gvi *g = &plan->view;
    int N = plan->N, n = plan->n, c, i, ne = g->neq;
    const long L = RC_LANE_BLOCK, npm = 3L * n + 2L * N;
    long j, j0, nd, ni, nl, no = 0;
    long neqd = ne > 0 ? rc_k_lanes_eq_doubles(N, n, ne, L) : 0;
    long neqi = ne > 0 ? rc_k_lanes_eq_ints(ne, L) : 0;
    double *base, *pm = NULL;
    int *iw;
    long *lw;
    unsigned char *live;
    rc_member_params *mps = NULL, *lane_mp = NULL;
    rc_lane_order *ord;
    rc_lane_block b;
    rc_k_lanes *s = &b.s;
    rc_status st = RC_OK;

    memset(&b, 0, sizeof b);
    b.plan = plan;
    /* the lane arrays, 5 N member vectors, the scalar body's scratch */
    nd = rc_k_lanes_doubles(N, n, L) + 5L * N + plan->work_doubles + neqd;
    ni = RC_K_LANES_INTS * L + L + plan->work_ints + 1 + neqi;
    nl = RC_K_LANES_LONGS * L + 2 * L;
    base = (double *)rc_lanes_calloc_aligned((size_t)nd * sizeof(double));
    iw = (int *)rc_lanes_calloc_aligned((size_t)ni * sizeof(int));
    lw = (long *)calloc((size_t)nl, sizeof(long));
    live = (unsigned char *)calloc((size_t)L, 1);
    b.touch = (unsigned char *)calloc((size_t)N + 1, 1);
    ord = (rc_lane_order *)malloc(sizeof *ord * (size_t)B + 1);
    if (plan->params) { /* every member's run parameters, and a block's */
        pm = (double *)malloc(sizeof(double) * (size_t)(npm * B) + 1);
        mps = (rc_member_params *)malloc(sizeof *mps * (size_t)B + 1);
        lane_mp = (rc_member_params *)malloc(sizeof *lane_mp * (size_t)L);
    }
    if (!base || !iw || !lw || !live || !ord || !b.touch ||
        (plan->params && (!pm || !mps || !lane_mp))) {
        st = RC_ERR_NOMEM;
        goto done;
    }
    /* the coordinates some inequality term acts on (the single-term
     * reflection leaves the others out of its sums) */
    for (i = 0; i < g->nineq; ++i) {
        int pa[2], np = rc_k_gvi_parts(g, g->ineq[i], pa), t;
        for (t = 0; t < np; ++t)
            for (c = 0; c < plan->dim; ++c)
                b.touch[pa[t] * plan->dim + c] = 1;
    }
    b.qs = base + rc_k_lanes_doubles(N, n, L);
    b.ps = b.qs + N;
    b.gs = b.ps + N;
    b.slow = iw + RC_K_LANES_INTS * L;
    b.nheld = lw + RC_K_LANES_LONGS * L;
    b.nscalar = b.nheld + L;
    rc_k_gvi_work_carve(&b.w, N, plan->sys->ncon, plan->sys->n_eq,
                        b.gs + 3 * N, b.slow + L);
    /* the members in block order; one whose parameters are invalid is
     * left to the per-member engine, which words it */
    for (j = 0; j < B; ++j) {
        double dt = plan->dt;
        if (plan->params) {
            rc_batch_params_carve_(&mps[j], pm + npm * j, n, N);
            if (!rc_member_params_(scn, k0 + j, &mps[j])) {
                memset(&mb[j], 0, sizeof mb[j]);
                redo[j] = 1;
                continue;
            }
            dt = mps[j].dt;
        }
        ord[no].dt = dt;
        ord[no].j = j;
        ++no;
    }
    if (plan->params & RC_PARAM_DT)
        qsort(ord, (size_t)no, sizeof *ord, rc_lane_order_cmp);

    for (j0 = 0; j0 < no;) {
        long m = 0; /* members in this block: up to L of one dt */
        rc_lanes_time t;
        long steps = plan->steps, every = plan->every, rows = plan->rows;
        while (m < L && j0 + m < no && ord[j0 + m].dt == ord[j0].dt)
            ++m;
        b.view = *g;
        b.lane_mp = NULL;
        if (plan->params) {
            const rc_member_params *m0 = &mps[ord[j0].j];
            b.view.h = m0->dt;
            steps = m0->steps;
            every = m0->every;
            rows = m0->rows;
            if (plan->params & (RC_PARAM_MASS | RC_PARAM_RADIUS))
                b.lane_mp = lane_mp;
        }
        /* a fresh block, carved anew (the last block's steps swapped the
         * state pointers) */
        memset(base, 0, sizeof(double) * (size_t)nd);
        memset(lw, 0, sizeof(long) * (size_t)nl);
        memset(live, 0, (size_t)L);
        rc_k_lanes_carve(s, &b.st, N, n, L, base, iw, lw, live);
        s->touch = b.touch;
        if (ne > 0) /* after the member vectors and the scalar scratch */
            rc_k_lanes_eq_carve(s, N, n, ne, L, base + nd - neqd,
                                iw + ni - neqi);
        /* initial states, masses, tolerances and the start check, member
         * by member (rc_k_member_run's prologue); lanes past the last
         * member are copies of the first that are not live (stepped in
         * lanes, never reported) */
        for (j = 0; j < L; ++j) {
            long jb = ord[j0 + (j < m ? j : 0)].j, km = k0 + jb;
            rc_k_gvi gj = b.view;
            if (plan->params) {
                const rc_member_params *mp = &mps[jb];
                lane_mp[j] = *mp;
                gj.m.mass = mp->mass;
                gj.m.inv_mass = mp->inv_mass;
                gj.m.radius = mp->radius;
                gj.mass_c = mp->mass_c;
                gj.inv_mass_c = mp->inv_mass_c;
            }
            if (ne > 0) { /* each lane's masses (rc_k_lanes_eq_step) */
                for (i = 0; i < n; ++i) {
                    s->lmass[(long)i * L + j] = gj.m.mass[i];
                    s->linv[(long)i * L + j] = gj.m.inv_mass[i];
                }
                for (c = 0; c < N; ++c) {
                    s->lmass_c[(long)c * L + j] = gj.mass_c[c];
                    s->linv_c[(long)c * L + j] = gj.inv_mass_c[c];
                }
            }
            if (j > 0 && j >= m) { /* padding: lane 0's state */
                for (c = 0; c < N; ++c) {
                    s->q[(long)c * L + j] = s->q[c * L];
                    s->p[(long)c * L + j] = s->p[c * L];
                }
                s->eps_g[j] = s->eps_g[0];
                s->eps_v[j] = s->eps_v[0];
                continue;
            }
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
        rc_lanes_drive(&rc_cpu_lanes_ops, &b, steps, every, rows, b.view.h,
                       &t);
        for (j = 0; j < m; ++j) {
            rc_k_member_out out;
            long jb = ord[j0 + j].j;
            rc_k_lanes_out(&b.st, L, j, t.rows, t.s_t, t.s_tt, &out);
            rc_batch_member_from_out_(&out, &mb[jb], &redo[jb]);
            mb[jb].lane_held = b.nheld[j];
            mb[jb].lane_scalar = b.nscalar[j];
        }
        j0 += m;
    }
done:
    free(base);
    free(b.touch);
    free(iw);
    free(lw);
    free(live);
    free(ord);
    free(pm);
    free(mps);
    free(lane_mp);
    return st;
}

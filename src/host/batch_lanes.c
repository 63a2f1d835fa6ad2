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

int rc_batch_lanes_ok_(const rc_batch_plan *plan)
{
    return rc_k_lanes_ok(&plan->view);
}

/* Per-lane statistics of the diagnostics rows (rc_k_member_run's). */
typedef struct rc_lane_stats {
    double e0, scale, p0[3], l0[3];
    double s_t, s_y, s_tt, s_ty, wins[10];
    long row;
} rc_lane_stats;

/* Everything a block needs, carved from one allocation. */
typedef struct rc_lane_block {
    rc_k_lanes s;
    double *e, *kin, *pot, *mom, *ang; /* rows: [n*L], [L], [L], [3L], [3L] */
    double *qs, *ps, *gs;              /* one member, contiguous: [N] */
    unsigned char *live;               /* [L] */
    rc_lane_stats *st;                 /* [L] */
    rc_k_member_out *out;              /* [L] */
    rc_k_gvi_work w;                   /* the scalar body's scratch */
} rc_lane_block;

/* One diagnostics row of lane l (rc_k_member_run's row, same order). */
static void rc_lane_row(rc_lane_block *b, long l, long step, double dt,
                        long win)
{
    long L = b->s.L;
    rc_lane_stats *st = &b->st[l];
    rc_k_member_out *out = &b->out[l];
    double kin = b->kin[l], pot = b->pot[l], energy, rel, dp = 0.0, dl = 0.0;
    double time = (double)step * dt;
    int k;
    energy = kin + pot;
    if (step == 0) {
        st->e0 = energy;
        st->scale = rc_k_energy_scale(kin, pot, energy);
        for (k = 0; k < 3; ++k) {
            st->p0[k] = b->mom[k * L + l];
            st->l0[k] = b->ang[k * L + l];
        }
        out->e0 = energy;
    }
    rel = (energy - st->e0) / st->scale;
    out->max_rel = rc_fmax(out->max_rel, rc_fabs(rel));
    out->final_rel = rel;
    for (k = 0; k < 3; ++k) {
        double a = b->mom[k * L + l] - st->p0[k];
        double c = b->ang[k * L + l] - st->l0[k];
        dp += a * a;
        dl += c * c;
    }
    out->dp = rc_fmax(out->dp, rc_sqrt(dp));
    out->dl = rc_fmax(out->dl, rc_sqrt(dl));
    st->s_t += time;
    st->s_y += rel;
    st->s_tt += time * time;
    st->s_ty += time * rel;
    if (win >= 1 && st->row < 10 * win)
        st->wins[st->row / win] += rel;
    ++st->row;
    if (!rc_isfinite(energy))
        b->live[l] = 0;
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
    long L = s->L, step, l, win = plan->rows / 10;
    long steps = plan->steps, every = plan->every;
    int any_single;
    rc_k_lanes_terms(g->m, d, s->q, L, s->g, (double *)0, 0, L);
    for (step = 0;; ++step) {
        int last = step == steps;
        if (step % every == 0 || last) {
            rc_k_lanes_energies(g->m, d, s->q, s->p, L, b->e, b->kin, b->pot,
                                b->mom, b->ang, 0, L);
            for (l = 0; l < L; ++l)
                if (b->live[l])
                    rc_lane_row(b, l, step, plan->dt, win);
        }
        if (last)
            break;
        rc_k_lanes_screen(g, d, s, b->live, 0, L);
        any_single = 0;
        for (l = 0; l < L; ++l)
            any_single |= s->kind[l] == RC_LANE_SINGLE;
        if (any_single) {
            rc_k_lanes_single(g, d, s, 0, L);
            rc_k_lanes_kick(g, d, s, 0, L);
        } else { /* nothing reflects: p^+ is p */
            double *pr = s->pr;
            s->pr = s->p;
            rc_k_lanes_kick(g, d, s, 0, L);
            s->pr = pr;
        }
        for (l = 0; l < L; ++l) {
            if (!b->live[l])
                continue;
            if (s->kind[l] == RC_LANE_SLOW) {
                if (!rc_lane_slow_step(*g, b, l, &b->out[l].impacts)) {
                    b->live[l] = 0;
                    continue;
                }
            } else {
                b->out[l].impacts += s->refl[l];
            }
            b->out[l].steps = step + 1;
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
    int N = plan->N, n = plan->n, c, k;
    long L = B, j, nd, ni;
    long wd = plan->work_doubles, wi = plan->work_ints;
    double *d, *base;
    int *iw;
    rc_lane_block b;
    rc_k_lanes *s = &b.s;

    memset(&b, 0, sizeof b);
    /* 9 N-by-L arrays, 11 L arrays, a 3L gradient block, n*L energy
     * shares, 6 L momenta, 3 N member vectors, the scalar body's scratch */
    nd = 9L * N * L + 11L * L + 3L * L + (long)n * L + 6L * L + 3L * N + wd;
    ni = 4L * L + wi + 1;
    base = (double *)malloc(sizeof(double) * (size_t)nd);
    iw = (int *)malloc(sizeof(int) * (size_t)ni);
    b.live = (unsigned char *)calloc((size_t)L, 1);
    b.st = (rc_lane_stats *)calloc((size_t)L, sizeof *b.st);
    b.out = (rc_k_member_out *)calloc((size_t)L, sizeof *b.out);
    if (!base || !iw || !b.live || !b.st || !b.out) {
        free(base);
        free(iw);
        free(b.live);
        free(b.st);
        free(b.out);
        return RC_ERR_NOMEM;
    }
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
    b.qs = d; d += N;
    b.ps = d; d += N;
    b.gs = d; d += N;
    rc_k_gvi_work_carve(&b.w, N, plan->sys->ncon, plan->sys->n_eq, d,
                        iw + 4L * L);
    s->nA = iw;
    s->aterm = iw + L;
    s->kind = iw + 2L * L;
    s->refl = iw + 3L * L;

    /* initial states, tolerances and the start check, member by member
     * (rc_k_member_run's prologue) */
    for (j = 0; j < L; ++j) {
        rc_k_gvi gj = *g;
        double ell, vs, amount = 0.0;
        int term = 0;
        rc_member_state_(scn, k0 + j, values + (k0 + j) * e->nrules, b.qs,
                         b.ps);
        for (c = 0; c < N; ++c) {
            s->q[(long)c * L + j] = b.qs[c];
            s->p[(long)c * L + j] = b.ps[c];
        }
        ell = rc_k_gvi_length_scale(&gj, b.qs);
        vs = rc_k_gvi_speed_scale(&gj, b.qs, b.ps, ell, b.w.g0);
        gj.eps_g = scn->integ.eps_g > 0.0 ? scn->integ.eps_g : 1e-9 * ell;
        gj.eps_v = scn->integ.eps_v > 0.0 ? scn->integ.eps_v : 1e-8 * vs;
        s->eps_g[j] = gj.eps_g;
        s->eps_v[j] = gj.eps_v;
        b.live[j] = rc_k_gvi_check_initial(&gj, b.qs, b.ps, ell, vs, &term,
                                           &amount) == RC_K_GVI_OK;
    }
    rc_lanes_block_run_(plan, &b);
    for (j = 0; j < L; ++j) {
        rc_k_member_out *out = &b.out[j];
        rc_lane_stats *st = &b.st[j];
        long rows = plan->rows, win = rows / 10;
        out->ok = 0;
        if (b.live[j]) {
            double nr = (double)rows, den = nr * st->s_tt - st->s_t * st->s_t;
            double first = 0.0;
            out->slope = rows >= 2 && rc_fabs(den) > 0.0
                             ? (nr * st->s_ty - st->s_t * st->s_y) / den
                             : 0.0;
            for (k = 0; win >= 1 && k < 10; ++k) {
                double mean = st->wins[k] / (double)win;
                if (k == 0)
                    first = mean;
                out->windowed = rc_fmax(out->windowed, rc_fabs(mean - first));
            }
            out->ok = 1;
        }
        rc_batch_member_from_out_(out, &mb[j], &redo[j]);
    }
    free(base);
    free(iw);
    free(b.live);
    free(b.st);
    free(b.out);
    return RC_OK;
}

/* One ensemble member of a built-in Lagrangian model (seed 001) from
 * start to finish: every step of its variational integrator (rc_vi.h)
 * and the statistics of its diagnostics rows, written once for the CPU
 * batch engine (src/host/batch_vi.c) and the GPU (rc_cuda_vi.cu, one
 * thread per member).
 *
 * Item: member j of a call, described by a compact rc_k_vi_member (the
 * built-in body and its parameters, the method, the step, the initial
 * state); the thread builds its rc_k_vi workspace from it in its own
 * scratch (a GPU thread's local memory, a CPU thread's block), so that
 * nothing per member but the description and the result crosses to the
 * device.  The statistics are those of the per-member engine
 * (src/host/ensemble.c, rc_member_integrate over rc_model_diag_to_row),
 * in the same order of operations, so both give the same bits; the
 * diagnostics a row of the member record does not use (the discrete and
 * modified energies) are not computed: they do not change the state. */
#ifndef RC_VI_MEMBER_H
#define RC_VI_MEMBER_H

#include "rc_hd.h"
#include "rc_member.h"
#include "rc_vi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one member runs. */
typedef struct rc_k_vi_member {
    int body;                 /* RC_K_LAG_CART or RC_K_LAG_DOUBLE */
    int n, ng;
    double par[8];
    int form, impact;         /* RC_K_VI_FORM_*, RC_K_VI_* */
    double h, tol;
    int maxit, max_events;
    long steps, every, rows;  /* rows: every `every` steps and the last;
                                 steps < 0: the member cannot start */
    double q[RC_K_VI_NMX], p[RC_K_VI_NMX]; /* initial state; the final
                                               one after a finished run */
} rc_k_vi_member;

/* Run the member described by d in workspace w: out as rc_k_member_run's
 * (ok = 0 when it could not start, a step failed or the energy is not
 * finite: the host re-runs it alone, which words why; a failed member's
 * windowed drift needs the number of its rows, known only at its end). */
RC_HD static inline void rc_k_vi_member_run(rc_k_vi *w, rc_k_vi_member *d,
                                            rc_k_member_out *out)
{
    long step, row = 0, win = d->rows / 10;
    double e0 = 0.0, scale = 1.0, t = 0.0;
    double s_t = 0.0, s_y = 0.0, s_tt = 0.0, s_ty = 0.0, wins[10];
    int k;
    out->ok = 0;
    out->steps = 0;
    out->e0 = out->max_rel = out->final_rel = out->windowed = 0.0;
    out->slope = out->dp = out->dl = 0.0;
    out->impacts = 0;
    for (k = 0; k < 10; ++k)
        wins[k] = 0.0;
    if (d->steps < 0) /* could not be described: not started */
        return;
    rc_k_vi_init(w, d->n, d->ng, d->body, d->par, (rc_k_vi_eval_fn)0,
                 (const void *)0, d->form, d->impact, d->h, d->tol, d->maxit,
                 d->max_events);
    for (step = 0;; ++step) {
        int last = step == d->steps;
        if (step % d->every == 0 || last) {
            double z[2 * RC_K_VI_NMX], energy, kin, pot, rel;
            for (k = 0; k < d->n; ++k) {
                z[k] = d->q[k];
                z[d->n + k] = d->p[k];
            }
            /* the row's H, T, V as rc_model_diag_to_row takes them */
            rc_k_vi_hamiltonian(w, z, &energy, &kin, &pot);
            kin = isfinite(kin) ? kin : 0.0;
            pot = isfinite(pot) ? pot : 0.0;
            if (step == 0) {
                e0 = energy;
                scale = rc_k_energy_scale(kin, pot, energy);
                out->e0 = energy;
            }
            rel = (energy - e0) / scale;
            out->max_rel = fmax(out->max_rel, fabs(rel));
            out->final_rel = rel;
            /* no momenta: the per-member engine's dp, dl are sqrt(0) */
            out->dp = fmax(out->dp, sqrt(0.0));
            out->dl = fmax(out->dl, sqrt(0.0));
            s_t += t;
            s_y += rel;
            s_tt += t * t;
            s_ty += t * rel;
            if (win >= 1 && row < 10 * win)
                wins[row / win] += rel;
            ++row;
            out->impacts = w->impacts;
            if (!isfinite(energy))
                return;
        }
        if (last)
            break;
        if (rc_k_vi_step(w, d->q, d->p, t) != RC_K_VI_OK)
            return;
        t += w->h;
        out->steps = step + 1;
    }
    rc_k_member_finish(out, d->rows, s_t, s_y, s_tt, s_ty, wins, 1);
    out->ok = 1;
}

/* What thread j of a call runs (members d[0 .. count), results out[]),
 * with w its own workspace (zeroed once): the GPU kernel calls it with its thread
 * index, the CPU launcher with every j in turn. */
RC_HD static inline void rc_k_vi_member_thread(rc_k_vi *w, rc_k_vi_member *d,
                                               rc_k_member_out *out, long j)
{
    rc_k_vi_member_run(w, &d[j], &out[j]);
}

#ifdef __cplusplus
}
#endif
#endif

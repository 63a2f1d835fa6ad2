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
 * nothing per member but the description, the result and (for an L2
 * error against a reference run) the configuration at its rows crosses
 * the device's boundary.  The statistics are those of the per-member
 * engine (src/host/ensemble.c, rc_member_integrate over
 * rc_model_diag_to_row), in the same order of operations (rc_k_rows of
 * rc_member.h, the GVI member's too), so both give the same bits; the
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
    long rec;                 /* where its configuration record starts in
                                 the call's record array (doubles), or -1
                                 for none: q (n doubles) at each of its
                                 rows, rows * n in all, what an L2 error
                                 against a reference run needs (the
                                 reference runs are members too) */
    double q[RC_K_VI_NMX], p[RC_K_VI_NMX]; /* initial state; the final
                                               one after a finished run */
} rc_k_vi_member;

/* Doubles of d's configuration record (0 without one). */
RC_HD static inline long rc_k_vi_member_rec_doubles(const rc_k_vi_member *d)
{
    return d->rec >= 0 && d->steps >= 0 ? d->rows * (long)d->n : 0;
}

/* Run the member described by d in workspace w: out as rc_k_member_run's
 * (ok = 0 when it could not start, a step failed or the energy is not
 * finite: the host re-runs it alone, which words why; a failed member's
 * windowed drift needs the number of its rows, known only at its end).
 * qrec (NULL for none) receives q at every row, row-major (rows x n). */
RC_HD static inline void rc_k_vi_member_run(rc_k_vi *w, rc_k_vi_member *d,
                                            rc_k_member_out *out,
                                            double *qrec)
{
    long step, row = 0;
    double t = 0.0;
    int k;
    rc_k_rows r;
    rc_k_rows_start(&r, d->rows, out);
    if (d->steps < 0) /* could not be described: not started */
        return;
    rc_k_vi_init(w, d->n, d->ng, d->body, d->par, (rc_k_vi_eval_fn)0,
                 (const void *)0, d->form, d->impact, d->h, d->tol, d->maxit,
                 d->max_events);
    for (step = 0;; ++step) {
        int last = step == d->steps;
        if (step % d->every == 0 || last) {
            double z[2 * RC_K_VI_NMX], energy, kin, pot;
            for (k = 0; k < d->n; ++k) {
                z[k] = d->q[k];
                z[d->n + k] = d->p[k];
            }
            /* the row's H, T, V as rc_model_diag_to_row takes them */
            rc_k_vi_hamiltonian(w, z, &energy, &kin, &pot);
            kin = rc_isfinite(kin) ? kin : 0.0;
            pot = rc_isfinite(pot) ? pot : 0.0;
            if (qrec)
                for (k = 0; k < d->n; ++k)
                    qrec[row * d->n + k] = d->q[k];
            ++row;
            out->impacts = w->impacts;
            /* no momenta: the per-member engine's dp, dl are sqrt(0) */
            if (!rc_k_rows_add(&r, out, t, energy, kin, pot, 0.0, 0.0))
                return;
        }
        if (last)
            break;
        if (rc_k_vi_step(w, d->q, d->p, t) != RC_K_VI_OK)
            return;
        t += w->h;
        out->steps = step + 1;
    }
    rc_k_rows_finish(&r, out);
}

/* What thread j of a call runs (members d[0 .. count), results out[]),
 * with w its own workspace (zeroed once): the GPU kernel calls it with
 * its thread index, the CPU launcher with every j in turn.  rec is the
 * call's record array from offset rec_base on (a launch holds a part of
 * the call's records: member j's starts at rec + d[j].rec - rec_base);
 * NULL when no member of the call records. */
RC_HD static inline void rc_k_vi_member_thread(rc_k_vi *w, rc_k_vi_member *d,
                                               rc_k_member_out *out,
                                               double *rec, long rec_base,
                                               long j)
{
    rc_k_vi_member_run(w, &d[j], &out[j],
                       rec && d[j].rec >= 0 ? rec + (d[j].rec - rec_base)
                                            : (double *)0);
}

#ifdef __cplusplus
}
#endif
#endif

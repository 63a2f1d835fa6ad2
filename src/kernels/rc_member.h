/* One ensemble member from start to finish: tolerances, the start check,
 * every step of its method (rc_k_method_step: GVI's of rc_gvi.h or a
 * baseline's of rc_baselines.h) and the statistics of its diagnostics
 * rows, written once for the CPU batch engine (src/host/batch.c) and the
 * GPU (one thread per member).
 *
 * Item: member j of a batch of B.  Its state lives in structure-of-arrays
 * columns Q, P (coordinate c of member j at c*B + j: consecutive members
 * are adjacent, so a GPU warp reads them coalesced); the body gathers it
 * into contiguous scratch q, p (N doubles each) once, steps there, and
 * scatters the final state back.  Scratch w is the member's GVI work
 * block.  The statistics are those of the per-member engine
 * (src/host/ensemble.c, rc_member_integrate), in the same order of
 * operations, so both give the same bits. */
#ifndef RC_MEMBER_H
#define RC_MEMBER_H

#include "rc_baselines.h"
#include "rc_diag.h"
#include "rc_gvi.h"
#include "rc_hd.h"
#include "rc_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The scale relative energy errors are taken against: |H0|, or T0 + |V0|
 * when H0 is (nearly) zero, or 1 for a system without energy. */
RC_HD static inline double rc_k_energy_scale(double kinetic, double potential,
                                             double energy)
{
    double scale = rc_fabs(energy);
    if (!(scale > 1e-12 * (kinetic + rc_fabs(potential))))
        scale = kinetic + rc_fabs(potential);
    return scale > 0.0 ? scale : 1.0;
}

/* What a member leaves behind. */
typedef struct rc_k_member_out {
    int ok;          /* 0: invalid at the start, failed, or non-finite
                        energy (the host re-runs it to word why) */
    long steps;      /* steps completed */
    double e0, max_rel, final_rel, windowed, slope, dp, dl;
    long impacts;    /* reflection passes */
} rc_k_member_out;

/* A member's tolerances and its start check, as rc_gvi_prepare_ and the
 * first step do for one system: g->eps_g/eps_v from the member's own
 * length and speed scales where not given (> 0).  1 when it may start. */
RC_HD static inline int rc_k_member_start(rc_k_gvi *g, double eps_g_given,
                                         double eps_v_given,
                                         rc_k_gvi_work *w, const double *q,
                                         const double *p)
{
    int term = 0;
    double amount = 0.0;
    double ell = rc_k_gvi_length_scale(g, q);
    double vs = rc_k_gvi_speed_scale(g, q, p, ell, w->g0);
    g->eps_g = eps_g_given > 0.0 ? eps_g_given : 1e-9 * ell;
    g->eps_v = eps_v_given > 0.0 ? eps_v_given : 1e-8 * vs;
    return rc_k_gvi_check_initial(g, q, p, ell, vs, &term, &amount) ==
           RC_K_GVI_OK;
}

/* The drift slope (least squares of the rows' relative energy errors
 * against time, from the sums over the rows) and the windowed drift (the
 * largest distance of a tenth's mean from the first tenth's; wins: the
 * sums of the first 10*(rows/10) rows by tenth) into out. */
RC_HD static inline void rc_k_member_finish(rc_k_member_out *out, long rows,
                                           double s_t, double s_y,
                                           double s_tt, double s_ty,
                                           const double *wins, long wstride)
{
    double n = (double)rows, den = n * s_tt - s_t * s_t, first = 0.0;
    long win = rows / 10;
    int k;
    out->slope =
        rows >= 2 && rc_fabs(den) > 0.0 ? (n * s_ty - s_t * s_y) / den : 0.0;
    for (k = 0; win >= 1 && k < 10; ++k) {
        double mean = wins[k * wstride] / (double)win;
        if (k == 0)
            first = mean;
        out->windowed = rc_fmax(out->windowed, rc_fabs(mean - first));
    }
}

/* The statistics of one member's diagnostics rows as they come, the one
 * body of the scalar members (rc_k_member_run here, rc_k_vi_member_run
 * in rc_vi_member.h): the per-member engine's (src/host/ensemble.c,
 * rc_member_integrate) in its order of operations.  The lanes
 * (rc_gvi_lanes.h) keep the same sums per lane in their own columns. */
typedef struct rc_k_rows {
    long rows, row, win;  /* rows the run will have; rows so far; rows a
                             tenth of the windowed drift */
    double e0, scale;     /* the first row's energy, the error's scale */
    double s_t, s_y, s_tt, s_ty, wins[10];
} rc_k_rows;

/* Ready for a run of `rows` rows; out's statistics zeroed. */
RC_HD static inline void rc_k_rows_start(rc_k_rows *r, long rows,
                                         rc_k_member_out *out)
{
    int k;
    r->rows = rows;
    r->row = 0;
    r->win = rows / 10;
    r->e0 = 0.0;
    r->scale = 1.0;
    r->s_t = r->s_y = r->s_tt = r->s_ty = 0.0;
    for (k = 0; k < 10; ++k)
        r->wins[k] = 0.0;
    out->ok = 0;
    out->steps = 0;
    out->e0 = out->max_rel = out->final_rel = out->windowed = 0.0;
    out->slope = out->dp = out->dl = 0.0;
    out->impacts = 0;
}

/* One row at `time`: its energy = kinetic + potential (the first row's
 * sets the reference and the scale), dp2 and dl2 the squared distances
 * of its momentum and angular momentum from the first row's.  0 when
 * the energy is not finite (the member has blown up). */
RC_HD static inline int rc_k_rows_add(rc_k_rows *r, rc_k_member_out *out,
                                      double time, double energy,
                                      double kinetic, double potential,
                                      double dp2, double dl2)
{
    double rel;
    if (r->row == 0) {
        r->e0 = energy;
        r->scale = rc_k_energy_scale(kinetic, potential, energy);
        out->e0 = energy;
    }
    rel = (energy - r->e0) / r->scale;
    out->max_rel = rc_fmax(out->max_rel, rc_fabs(rel));
    out->final_rel = rel;
    out->dp = rc_fmax(out->dp, rc_sqrt(dp2));
    out->dl = rc_fmax(out->dl, rc_sqrt(dl2));
    r->s_t += time;
    r->s_y += rel;
    r->s_tt += time * time;
    r->s_ty += time * rel;
    /* window sums in row order (the per-member engine keeps the rows and
     * sums them in the same order) */
    if (r->win >= 1 && r->row < 10 * r->win)
        r->wins[r->row / r->win] += rel;
    ++r->row;
    return rc_isfinite(energy);
}

/* The end of a run whose rows all came: slope, windowed drift, ok. */
RC_HD static inline void rc_k_rows_finish(const rc_k_rows *r,
                                          rc_k_member_out *out)
{
    rc_k_member_finish(out, r->rows, r->s_t, r->s_y, r->s_tt, r->s_ty,
                       r->wins, 1);
    out->ok = 1;
}

/* Run member j for `steps` steps of g's method (whose eps_g/eps_v are set here from
 * the member's own start when eps_g_given/eps_v_given are 0), a
 * diagnostics row every `every` steps and at the end (`rows` of them).
 * qrec (NULL for none) receives q at every row, row-major (rows x N):
 * what an L2 error against a reference run needs (the reference runs
 * are members too, recording at every reference step: batch.c). */
RC_HD static inline void rc_k_member_run_rec(rc_k_gvi g, double eps_g_given,
                                             double eps_v_given,
                                             rc_k_gvi_work *w, double *q,
                                             double *p, double *Q, double *P,
                                             long B, long j, long steps,
                                             long every, long rows, double dt,
                                             rc_k_member_out *out,
                                             double *qrec)
{
    int N = g.N, c, k;
    long step;
    double p0[3] = {0.0, 0.0, 0.0}, l0[3] = {0.0, 0.0, 0.0};
    rc_k_rows r;
    rc_k_gvi_step_info info;
    rc_k_rows_start(&r, rows, out);
    for (c = 0; c < N; ++c) {
        q[c] = Q[(long)c * B + j];
        p[c] = P[(long)c * B + j];
    }
    if (!rc_k_member_start(&g, eps_g_given, eps_v_given, w, q, p))
        return;
    for (step = 0;; ++step) {
        int last = step == steps;
        if (step % every == 0 || last) {
            double kin, pot, mom[3], ang[3], dp = 0.0, dl = 0.0;
            rc_k_kinetic_momenta(g.m.dim, g.m.n, g.m.inv_mass, q, p, &kin, mom,
                                 ang);
            pot = rc_k_potential_energy(g.m, q);
            if (step == 0)
                for (k = 0; k < 3; ++k) {
                    p0[k] = mom[k];
                    l0[k] = ang[k];
                }
            if (qrec) /* row r.row, before rc_k_rows_add counts it */
                for (c = 0; c < N; ++c)
                    qrec[r.row * N + c] = q[c];
            for (k = 0; k < 3; ++k) {
                double a = mom[k] - p0[k], b = ang[k] - l0[k];
                dp += a * a;
                dl += b * b;
            }
            if (!rc_k_rows_add(&r, out, (double)step * dt, kin + pot, kin,
                               pot, dp, dl))
                return;
        }
        if (last)
            break;
        if (rc_k_method_step(&g, w, q, p, &info) != RC_K_GVI_OK)
            return;
        out->impacts += info.reflections;
        out->steps = step + 1;
        for (c = 0; c < N; ++c) {
            q[c] = w->x[c];
            p[c] = w->y[c];
        }
    }
    for (c = 0; c < N; ++c) {
        Q[(long)c * B + j] = q[c];
        P[(long)c * B + j] = p[c];
    }
    rc_k_rows_finish(&r, out);
}

/* rc_k_member_run_rec recording nothing (the GPU's members, the lanes'
 * scalar fallback). */
RC_HD static inline void rc_k_member_run(rc_k_gvi g, double eps_g_given,
                                         double eps_v_given,
                                         rc_k_gvi_work *w, double *q,
                                         double *p, double *Q, double *P,
                                         long B, long j, long steps,
                                         long every, long rows, double dt,
                                         rc_k_member_out *out)
{
    rc_k_member_run_rec(g, eps_g_given, eps_v_given, w, q, p, Q, P, B, j,
                        steps, every, rows, dt, out, (double *)0);
}

#ifdef __cplusplus
}
#endif
#endif

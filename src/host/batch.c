/* Ensemble batch engine (DESIGN §5).
 *
 * Members that differ from member 0 only in their initial state (the
 * sweeps and perturbations of positions and momenta that make up most
 * ensembles) share one model: potentials, constraints, masses and the
 * method are built once, and a batch of members advances in lockstep,
 * its state held as structure-of-arrays columns (coordinate c of member
 * j at c*B + j) — the layout in which one GPU thread per member reads
 * coalesced.  Each member step gathers the member's column into
 * contiguous scratch, calls the GVI kernel body (src/kernels/rc_gvi.h,
 * the same body the single-system path runs) and scatters the result
 * back.  The diagnostics rows use the shared bodies of rc_diag.h.
 *
 * GVI's step branches per member (active sets, reflections, Newton), so
 * the CPU does not vectorise across members here: each member step is
 * scalar code; OpenMP runs batches on all cores.  What the batch buys
 * on the CPU is that a member costs a kernel call and no system object.
 *
 * Determinism: member k's arithmetic is that of the kernel body on its
 * own state, in the same order as the single-system path, so its bits do
 * not depend on the batch it is in, the batch size or the thread. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensemble_impl.h"
#include "gvi_impl.h"
#include "ricochet/run.h"
#include "../kernels/rc_diag.h"

int rc_batch_plan_make_(const rc_scenario *scn, rc_batch_plan *plan,
                        char *why, size_t why_size)
{
    rc_scenario *m0 = NULL;
    rc_error err;
    rc_scenario_run info;
    memset(plan, 0, sizeof *plan);
    if (scn->integ.method != RC_METHOD_GVI) {
        snprintf(why, why_size, "method %s (the batch engine runs gvi)",
                 rc_method_name(scn->integ.method));
        return 0;
    }
    if (scn->integ.linearized) {
        snprintf(why, why_size, "linearized constraints");
        return 0;
    }
    if (scn->ens.has_reference) {
        snprintf(why, why_size, "a reference run per member");
        return 0;
    }
    if (scn->ncon == 0) {
        snprintf(why, why_size, "no constraints");
        return 0;
    }
    if (!rc_member_state_supported_(scn)) {
        snprintf(why, why_size,
                 "a rule sets a field other than a particle position or "
                 "momentum component");
        return 0;
    }
    if (rc_scenario_member_(scn, 0, NULL, &m0, &err) != RC_OK ||
        rc_scenario_build(m0, &plan->sys, &err) != RC_OK ||
        rc_system_prepare_(plan->sys) != RC_OK || !plan->sys->gvi) {
        snprintf(why, why_size, "member 0 does not build");
        rc_scenario_free(m0);
        rc_batch_plan_free_(plan);
        return 0;
    }
    rc_scenario_run_info(m0, &info);
    rc_scenario_free(m0);
    plan->view = rc_gvi_view_(plan->sys);
    plan->n = plan->sys->n;
    plan->dim = plan->sys->dim;
    plan->N = plan->n * plan->dim;
    plan->steps = info.steps;
    plan->every = info.every;
    plan->dt = scn->integ.dt;
    /* rows: every `every` steps and the last one */
    plan->rows = info.steps / info.every + 1 + (info.steps % info.every != 0);
    plan->work_doubles = rc_k_gvi_work_doubles(plan->N, plan->sys->ncon,
                                               plan->sys->n_eq);
    plan->work_ints =
        rc_k_gvi_work_ints(plan->N, plan->sys->ncon, plan->sys->n_eq);
    return 1;
}

void rc_batch_plan_free_(rc_batch_plan *plan)
{
    rc_system_free(plan->sys);
    plan->sys = NULL;
}

/* Per-member running statistics, one array of B entries each (the
 * structure-of-arrays layout of the state, kept for the rest too). */
enum {
    ST_E0, ST_SCALE, ST_P0, ST_L0 = ST_P0 + 3, ST_MAXREL = ST_L0 + 3,
    ST_FINAL, ST_DP, ST_DL, ST_T, ST_Y, ST_TT, ST_TY, ST_WIN,
    ST_COUNT = ST_WIN + 10
};

rc_status rc_batch_run_(const rc_scenario *scn, const rc_batch_plan *plan,
                        long k0, long B, double *values, rc_member *mb,
                        unsigned char *redo)
{
    const rc_ensemble_spec *e = &scn->ens;
    const rc_system *sys = plan->sys;
    rc_k_gvi g = plan->view;
    rc_k_gvi_work w;
    int N = plan->N, d = plan->dim, c;
    long j, step, row = 0, win = plan->rows / 10;
    double *Q, *P, *S, *eps, *q, *p, *block;
    long *refl;
    int *iblock;
    unsigned char *alive;
    rc_status st = RC_OK;

    Q = (double *)malloc(sizeof(double) * (size_t)(2 * N + ST_COUNT + 2) *
                         (size_t)B);
    refl = (long *)calloc((size_t)B, sizeof(long));
    alive = (unsigned char *)calloc((size_t)B, 1);
    block = (double *)calloc((size_t)(plan->work_doubles + 2 * N + 1),
                             sizeof(double));
    iblock = (int *)calloc((size_t)(plan->work_ints + 1), sizeof(int));
    if (!Q || !refl || !alive || !block || !iblock) {
        st = RC_ERR_NOMEM;
        goto done;
    }
    P = Q + (long)N * B;
    S = P + (long)N * B;           /* [ST_COUNT][B] statistics */
    eps = S + (long)ST_COUNT * B;  /* [2][B] eps_g, eps_v */
    q = block + plan->work_doubles; /* gathered member state */
    p = q + N;
    rc_k_gvi_work_carve(&w, N, sys->ncon, sys->n_eq, block, iblock);
    memset(S, 0, sizeof(double) * (size_t)ST_COUNT * (size_t)B);

    /* Initial states, tolerances and the start check, member by member
     * (what rc_gvi_prepare_ and the first step do for one system). */
    for (j = 0; j < B; ++j) {
        double ell, vs;
        int term = 0, code;
        double amount = 0.0;
        memset(&mb[j], 0, sizeof mb[j]);
        mb[j].fail_step = -1;
        mb[j].l2 = NAN;
        redo[j] = 0;
        rc_member_state_(scn, k0 + j, values + (k0 + j) * e->nrules, q, p);
        for (c = 0; c < N; ++c) {
            Q[(long)c * B + j] = q[c];
            P[(long)c * B + j] = p[c];
        }
        ell = rc_k_gvi_length_scale(&g, q);
        vs = rc_k_gvi_speed_scale(&g, q, p, ell, w.g0);
        eps[j] = scn->integ.eps_g > 0.0 ? scn->integ.eps_g : 1e-9 * ell;
        eps[B + j] = scn->integ.eps_v > 0.0 ? scn->integ.eps_v : 1e-8 * vs;
        code = rc_k_gvi_check_initial(&g, q, p, ell, vs, &term, &amount);
        alive[j] = code == RC_K_GVI_OK;
        if (!alive[j])
            redo[j] = 1;
    }

    /* Lockstep: a diagnostics row every `every` steps and at the end,
     * then one kernel step per live member. */
    for (step = 0;; ++step) {
        int last = step == plan->steps, is_row = step % plan->every == 0 || last;
        double time = (double)step * plan->dt;
        for (j = 0; j < B; ++j) {
            rc_k_gvi_step_info info;
            if (!alive[j])
                continue;
            for (c = 0; c < N; ++c) {
                q[c] = Q[(long)c * B + j];
                p[c] = P[(long)c * B + j];
            }
            if (is_row) {
                /* as rc_member_integrate does with rc_system_diagnostics */
                double kin, pot, mom[3], ang[3], energy, rel, dp = 0.0,
                                                        dl = 0.0;
                int k;
                rc_k_kinetic_momenta(d, plan->n, sys->inv_mass, q, p, &kin,
                                     mom, ang);
                pot = rc_k_potential_energy(g.m, q);
                energy = kin + pot;
                if (step == 0) {
                    rc_diagnostics d0;
                    memset(&d0, 0, sizeof d0);
                    d0.kinetic = kin;
                    d0.potential = pot;
                    d0.energy = energy;
                    S[ST_E0 * B + j] = energy;
                    S[ST_SCALE * B + j] = rc_energy_scale(&d0);
                    for (k = 0; k < 3; ++k) {
                        S[(ST_P0 + k) * B + j] = mom[k];
                        S[(ST_L0 + k) * B + j] = ang[k];
                    }
                    mb[j].e0 = energy;
                }
                rel = (energy - S[ST_E0 * B + j]) / S[ST_SCALE * B + j];
                S[ST_MAXREL * B + j] = fmax(S[ST_MAXREL * B + j], fabs(rel));
                S[ST_FINAL * B + j] = rel;
                for (k = 0; k < 3; ++k) {
                    double a = mom[k] - S[(ST_P0 + k) * B + j];
                    double b = ang[k] - S[(ST_L0 + k) * B + j];
                    dp += a * a;
                    dl += b * b;
                }
                S[ST_DP * B + j] = fmax(S[ST_DP * B + j], sqrt(dp));
                S[ST_DL * B + j] = fmax(S[ST_DL * B + j], sqrt(dl));
                S[ST_T * B + j] += time;
                S[ST_Y * B + j] += rel;
                S[ST_TT * B + j] += time * time;
                S[ST_TY * B + j] += time * rel;
                /* window sums in row order (the per-member path keeps
                 * the rows and sums them in the same order) */
                if (win >= 1 && row < 10 * win)
                    S[(ST_WIN + row / win) * B + j] += rel;
                mb[j].impacts = refl[j];
                if (!isfinite(energy)) {
                    alive[j] = 0;
                    redo[j] = 1;
                    continue;
                }
            }
            if (last)
                continue;
            g.eps_g = eps[j];
            g.eps_v = eps[B + j];
            if (rc_k_gvi_step(&g, &w, q, p, &info) != RC_K_GVI_OK) {
                alive[j] = 0;
                redo[j] = 1;
                continue;
            }
            refl[j] += info.reflections;
            mb[j].steps = step + 1;
            for (c = 0; c < N; ++c) {
                Q[(long)c * B + j] = w.x[c];
                P[(long)c * B + j] = w.y[c];
            }
        }
        if (is_row)
            ++row;
        if (last)
            break;
    }

    /* The members' rows of members.csv. */
    for (j = 0; j < B; ++j) {
        double n = (double)plan->rows;
        double st_ = S[ST_T * B + j], sy = S[ST_Y * B + j];
        double den = n * S[ST_TT * B + j] - st_ * st_, first = 0.0;
        int a;
        if (redo[j])
            continue;
        mb[j].status = RC_MEMBER_OK;
        mb[j].max_rel = S[ST_MAXREL * B + j];
        mb[j].final_rel = S[ST_FINAL * B + j];
        mb[j].dp = S[ST_DP * B + j];
        mb[j].dl = S[ST_DL * B + j];
        mb[j].slope = plan->rows >= 2 && fabs(den) > 0.0
                          ? (n * S[ST_TY * B + j] - st_ * sy) / den
                          : 0.0;
        mb[j].windowed = 0.0;
        for (a = 0; win >= 1 && a < 10; ++a) {
            double mean = S[(ST_WIN + a) * B + j] / (double)win;
            if (a == 0)
                first = mean;
            mb[j].windowed = fmax(mb[j].windowed, fabs(mean - first));
        }
    }
done:
    free(Q);
    free(refl);
    free(alive);
    free(block);
    free(iblock);
    return st;
}

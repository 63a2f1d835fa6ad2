/* The large-system state (engine.h): set-up, the checks of the start,
 * the pieces of the step that the one orchestration (dengine.c) takes
 * from here (the candidates' cutoff, the end-of-step counters, the
 * wording of an island's failure) and the host's observables.  The step
 * itself is dengine.c's, on either launcher; the island tiers beyond the
 * launchers' are tiers.c's. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "../../kernels/rc_md_exact.h"

static rc_status rc_md_fail(rc_md *md, rc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(md->msg, sizeof md->msg, fmt, ap);
    va_end(ap);
    return st;
}

/* ------------------------------------------------------------------ */
/* Set-up.                                                             */

void rc_md_free(rc_md *md)
{
    if (!md)
        return;
    if (!md->state_lent) {
        free(md->q);
        free(md->image);
    }
    free(md->p);
    free(md->mass);
    free(md->inv_mass);
    free(md->radius);
    free(md->grad);
    memset(md, 0, sizeof *md);
}

rc_status rc_md_init(rc_md *md, const rc_k_box *box, int n, const double *q,
                     const double *p, const double *mass,
                     const double *radius, const rc_md_params *par)
{
    int i, k, d = box->dim;
    size_t N = (size_t)n * (size_t)d;
    double ke = 0.0, mt = 0.0, vrms;
    memset(md, 0, sizeof *md);
    md->box = *box;
    md->n = n;
    md->dim = d;
    md->par = *par;
    md->q = (double *)malloc(sizeof(double) * (N + 1));
    md->p = (double *)malloc(sizeof(double) * (N + 1));
    md->mass = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    md->inv_mass = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    md->radius = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    md->image = (int *)calloc(N + 1, sizeof(int));
    md->grad = (double *)calloc(N + 1, sizeof(double));
    if (!md->q || !md->p || !md->mass || !md->inv_mass || !md->radius ||
        !md->image || !md->grad)
        return rc_md_fail(md, RC_ERR_NOMEM, "out of memory for %d particles",
                          n);
    memcpy(md->q, q, sizeof(double) * N);
    memcpy(md->p, p, sizeof(double) * N);
    /* A zero, infinite or NaN edge would divide by zero (or by inf) in
     * rc_k_box_wrap and convert the result to int. */
    for (k = 0; k < d; ++k)
        if (!(box->L[k] > 0.0) || !isfinite(box->L[k]))
            return rc_md_fail(md, RC_ERR_INVALID,
                              "box edge %d must be positive and finite, "
                              "got %g",
                              k, box->L[k]);
    for (i = 0; i < n; ++i) {
        if (!(mass[i] > 0.0) || !(radius[i] > 0.0) || !isfinite(mass[i]) ||
            !isfinite(radius[i]))
            return rc_md_fail(md, RC_ERR_INVALID,
                              "particle %d: mass and radius must be "
                              "positive and finite",
                              i);
        for (k = 0; k < d; ++k) {
            double qk = q[i * d + k];
            /* image counts are int: a periodic coordinate must be within
             * 2^30 box lengths of the box (a finite one, like momenta) */
            if (!isfinite(qk) || !isfinite(p[i * d + k]) ||
                (box->periodic[k] && !(fabs(qk / box->L[k]) < 1073741824.0)))
                return rc_md_fail(md, RC_ERR_INVALID,
                                  "particle %d: position %g or momentum %g "
                                  "on axis %d is not finite or is more than "
                                  "2^30 box lengths away",
                                  i, qk, p[i * d + k], k);
        }
        md->mass[i] = mass[i];
        md->inv_mass[i] = 1.0 / mass[i];
        md->radius[i] = radius[i];
        md->rmax = fmax(md->rmax, radius[i]);
        mt += mass[i];
        for (k = 0; k < d; ++k) {
            ke += 0.5 * p[i * d + k] * p[i * d + k] / mass[i];
            if (box->periodic[k])
                rc_k_box_wrap(box, md->q + (long)i * d, md->image + (long)i * d);
        }
    }
    /* grad V at q: the uniform field (the pair potential's part is added
     * by the engine, which has the candidates) */
    for (i = 0; i < n; ++i)
        for (k = 0; k < d; ++k)
            md->grad[(size_t)i * d + k] = -md->mass[i] * md->par.gravity[k];
    /* Tolerances as for small systems (src/host/gvi.c): 1e-9 of the
     * diameter, 1e-8 of the rms speed (or of diameter/h at rest). */
    vrms = n > 0 && ke > 0.0 ? sqrt(2.0 * ke / mt) : 0.0;
    if (!(md->par.skin > 0.0)) {
        /* the skin: 60 rms displacements of a step, within 0.1 and 0.3
         * diameters.  A thinner skin costs more builds, a thicker one
         * more candidates a step screens; the fastest measured (256 000
         * spheres, molten, 1 thread): 0.15 diameters at eta = 0.3 and
         * dt = 0.002 (3.4-3.5 s against 3.9-4.0 at 0.3), 0.1 at eta =
         * 0.45 and dt = 0.001 (4.1-4.6 s against 5.1-6.1), both about
         * 45-60 rms displacements; once a screen wrote a byte a
         * candidate (2026-11-28), 60 against 45: 1.370 against 1.414 s
         * (eta 0.3) and 3.11 against 3.23 (eta 0.45), medians of 5 and 3
         * alternated, 1 thread; 80 no better.  Larger steps widen it
         * beyond 0.3 (rc_md_candidate_cut). */
        md->par.skin = 2.0 * md->rmax *
                       fmin(0.3, fmax(0.1, 60.0 * vrms * par->dt /
                                               (2.0 * md->rmax)));
    }
    md->eps_g = 1e-9 * 2.0 * md->rmax;
    md->eps_v = vrms > 0.0 ? 1e-8 * vrms : 1e-8 * 2.0 * md->rmax / par->dt;
    for (i = 0; i < n; ++i)
        for (k = 0; k < d; ++k)
            if (!box->periodic[k] &&
                (md->q[i * d + k] < radius[i] - md->eps_g ||
                 md->q[i * d + k] > box->L[k] - radius[i] + md->eps_g))
                return rc_md_fail(md, RC_ERR_INVALID,
                                  "particle %d is outside the walls of axis "
                                  "%d at the start",
                                  i, k);
    if (n > 1 && rc_md_max_overlap(md) > md->eps_g)
        return rc_md_fail(md, RC_ERR_INVALID,
                          "spheres overlap by %g at the start",
                          rc_md_max_overlap(md));
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Pieces of the step.                                                 */

/* Candidate pairs (a Verlet list): every pair within 2 rmax + skin at the
 * build.  A pair left out can touch within this step only if the two
 * spheres together moved more than the skin: 2 (moved since the build +
 * this step's displacement dstep) >= skin.  Rebuilds when that could
 * happen (or `force`); the skin grows when one step alone would use it. */
rc_status rc_md_candidate_cut(rc_md *md, double dstep, double *cut)
{
    int k;
    if (4.0 * dstep >= md->par.skin)
        md->par.skin = 8.0 * dstep; /* a step eats the skin: widen it */
    *cut = fmax(2.0 * md->rmax, md->par.has_pair ? md->par.pair_cut : 0.0) +
           md->par.skin;
    for (k = 0; k < md->dim; ++k)
        if (md->box.periodic[k] && !(*cut < 0.5 * md->box.L[k]))
            return rc_md_fail(md, RC_ERR_INVALID,
                              "the box (L = %g on axis %d) is too small for "
                              "the contact range %g (spheres and their "
                              "motion between list builds); use more "
                              "particles or a smaller dt",
                              md->box.L[k], k, *cut);
    return RC_OK;
}

/* The message of a failed island. */
rc_status rc_md_island_failed(rc_md *md, int stage, int fail, long m)
{
    static const char *const what[] = {"reflection", "position update",
                                       "velocity projection"};
    static const char *const why[] = {
        "", "did not terminate in the allowed passes (a dense "
            "packing: integrator.reflection: moreau reflects in one "
            "pass)",
        "NNLS broke down or hit its iteration cap", "ran out of memory",
        "projected Gauss-Seidel did not reach its tolerance",
        "did not settle in 50 linearisations"};
    if (fail == RC_K_MD_EVENTS)
        return rc_md_fail(md, RC_ERR_NOT_CONVERGED,
                          "exact collisions: an island of %ld contacts had "
                          "more than %ld impacts in step %ld (t = %g): a "
                          "sphere resting or trapped under gravity bounces "
                          "without end; use integrator.collisions: gvi "
                          "(resting contact), or a smaller dt",
                          m, rc_k_mdx_max_events(m), md->steps + 1,
                          md->time);
    if (fail == RC_K_MD_GROUP)
        return rc_md_fail(md, RC_ERR_NOT_CONVERGED,
                          "exact collisions: more than %d simultaneous "
                          "impacts in an island of %ld contacts at step %ld "
                          "(t = %g); use integrator.collisions: gvi",
                          md->par.dense_max, m, md->steps + 1, md->time);
    if (stage < 0 || stage > 2 || fail < 1 || fail > 5)
        return rc_md_fail(md, RC_ERR_NOT_CONVERGED,
                          "island of %ld contacts failed (code %d) at step "
                          "%ld",
                          m, fail, md->steps + 1);
    return rc_md_fail(md, fail == 3 ? RC_ERR_NOMEM : RC_ERR_NOT_CONVERGED,
                      "%s of an island of %ld contacts %s at step %ld "
                      "(t = %g)",
                      what[stage], m, why[fail], md->steps + 1, md->time);
}

void rc_md_step_done(rc_md *md)
{
    md->steps++;
    md->time = (double)md->steps * md->par.dt;
    md->total.collisions += md->step.collisions;
    md->total.wall_collisions += md->step.wall_collisions;
    md->total.virial += md->step.virial;
    md->total.islands += md->step.islands;
    md->total.passes += md->step.passes;
    md->total.held += md->step.held;
    md->total.rounds += md->step.rounds;
    md->total.pgs_islands += md->step.pgs_islands;
    md->total.lapack_islands += md->step.lapack_islands;
    md->total.pgs_residual =
        fmax(md->total.pgs_residual, md->step.pgs_residual);
    if (md->step.largest_island > md->total.largest_island)
        md->total.largest_island = md->step.largest_island;
}

/* The state as the view the shared observable bodies of
 * src/kernels/rc_md.h read (the reference positions when given). */
static rc_k_md rc_md_kview(const rc_md *md, const double *ref)
{
    rc_k_md v;
    memset(&v, 0, sizeof v);
    v.box = md->box;
    v.n = md->n;
    v.dim = md->dim;
    v.q = md->q;
    v.p = md->p;
    v.image = md->image;
    v.inv_mass = md->inv_mass;
    v.mass = md->mass;
    v.ref = (double *)ref;
    memcpy(v.gravity, md->par.gravity, sizeof v.gravity);
    return v;
}

/* Sums over particles in the device engine's association (chunks of
 * rc_k_sum_chunk), so both engines print the same bits. */
void rc_md_energy(const rc_md *md, double *kin, double *pot, double mom[3])
{
    rc_k_md v = rc_md_kview(md, NULL);
    int k;
    *kin = rc_k_md_obs_sum(&v, RC_K_MD_OBS_KE);
    for (k = 0; k < 3; ++k)
        mom[k] = rc_k_md_obs_sum(&v, RC_K_MD_OBS_P0 + k);
    *pot = rc_k_md_obs_sum(&v, RC_K_MD_OBS_POT) + md->epot_pair;
}

void rc_md_unwrapped(const rc_md *md, double *out)
{
    int i, k, d = md->dim;
    for (i = 0; i < md->n; ++i)
        for (k = 0; k < d; ++k)
            out[i * d + k] =
                md->q[i * d + k] + md->image[i * d + k] * md->box.L[k];
}

double rc_md_msd(const rc_md *md, const double *ref)
{
    rc_k_md v = rc_md_kview(md, ref);
    return md->n > 0 ? rc_k_md_obs_sum(&v, RC_K_MD_OBS_MSD) / md->n : 0.0;
}

double rc_md_max_overlap(const rc_md *md)
{
    long e;
    double worst = 0.0, n[3], dist;
    double cut = 2.0 * md->rmax;
    rc_pairs pr;
    rc_cells cl;
    int k;
    memset(&pr, 0, sizeof pr);
    memset(&cl, 0, sizeof cl);
    for (k = 0; k < md->dim; ++k)
        if (md->box.periodic[k] && !(cut < 0.5 * md->box.L[k]))
            cut = 0.49 * md->box.L[k]; /* tiny boxes: nearest images only */
    if (rc_cells_build(&cl, &md->box, md->q, md->n, cut * (1.0 + 1e-12)) ==
            0 &&
        rc_cells_pairs(&cl, &md->box, md->q, md->n, cut, &pr,
                       md->par.threads) == 0)
        for (e = 0; e < pr.n; ++e)
            worst = fmax(worst, -rc_k_md_pair_gap(&md->box, md->radius, md->q, pr.i[e],
                                                pr.j[e], n, &dist));
    rc_pairs_free(&pr);
    rc_cells_free(&cl);
    return worst;
}

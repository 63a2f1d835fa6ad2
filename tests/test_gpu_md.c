/* The engine on the GPU (CUDA launcher) against the same engine through
 * its CPU launcher (which tests/test_md_dengine.c holds to its own
 * invariants and tests/test_md_reference.c to an independent dense
 * implementation).  Skips (77) without the CUDA backend or a device.
 *
 * Step by step from one state: before every step both engines are loaded
 * with the CPU launcher's state (a load discards the candidate list, and
 * A's order follows the candidates' gap buckets at the list's build, so
 * both must build it at the same step), both take the step, and then
 *   - the contact sets A agree (the same pairs and walls in the same
 *     order) and so do the island partitions (the same island starts);
 *   - the counters agree exactly (collisions, passes, islands, rounds);
 *   - positions and momenta agree bitwise in a strict-FP build
 *     (RICOCHET_STRICT_FP: no multiply-add contraction on either side),
 *     else to 1e-10 (contraction changes the last bit of single
 *     operations; one step chains a few hundred of them through NNLS
 *     solves of small, well-conditioned islands, and a lost or doubled
 *     impulse would show at 1e-2).
 * Then 300 steps without reloading: in strict FP the two stay bitwise
 * equal throughout; otherwise chaos separates the trajectories, and the
 * GPU run must keep kinetic energy to 1e-11 for hard spheres and momentum
 * to 1e-10 (the CPU run's own errors are ~1e-14), and with a pair
 * potential an energy error within 10x the CPU run's.  Cases: a hard-
 * sphere gas, walls with gravity, a 2-D mixed gas, a Lennard-Jones gas,
 * Moreau reflection under gravity with contacts held on the device, and
 * a settling walled packing under gravity with generalized reflection
 * whose islands grow to hundreds of contacts: islands of 65-512 contacts
 * go to the medium tier, cuBLAS and cuSOLVER on the GPU against LAPACK
 * on the CPU launcher.  Those are two exact solvers that round
 * differently (a Cholesky factor of a different blocking, a Gram matrix
 * of a different summation order), so a step that used the medium tier
 * is compared to 1e-10 even in a strict-FP build (islands of a few
 * hundred well-conditioned contacts: a few hundred ulps of growth), and
 * the free run of that case is held to the energy checks only.
 *
 * RICOCHET_TEST_QUICK=1 (set by scripts/compute-sanitizer.sh, whose
 * tools slow kernels 10-100x) takes 10 reloaded and 30 free steps
 * instead of 100 and 300, and requires neither collisions in every case
 * nor the medium tier (the
 * packing has not settled into large islands that soon). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/dengine.h"
#include "rc_test.h"
#include "rc_md_test.h"
#include "ricochet/run.h"

#ifdef RICOCHET_HAVE_CUDA
static double max_abs_diff(const double *a, const double *b, size_t n)
{
    size_t k;
    double w = 0.0;
    for (k = 0; k < n; ++k) {
        double d = fabs(a[k] - b[k]);
        if (!(d <= w))
            w = isfinite(d) ? d : INFINITY;
    }
    return w;
}

/* A's contacts and island starts (through its launcher) into host
 * arrays; 0 or -1. */
static int contacts_of(rc_dmd *g, rc_k_md_contact **con, long **istart)
{
    *con = (rc_k_md_contact *)malloc(sizeof(rc_k_md_contact) *
                                     (size_t)(g->v.ncon + 1));
    *istart = (long *)malloc(sizeof(long) * (size_t)(g->v.nisl + 1));
    if (!*con || !*istart)
        return -1;
    if (g->ops->get(g->ctx, *con, g->v.con,
                    sizeof(rc_k_md_contact) * (size_t)g->v.ncon) ||
        (g->v.nisl > 0 &&
         g->ops->get(g->ctx, *istart, g->v.istart,
                     sizeof(long) * (size_t)(g->v.nisl + 1))))
        return -1;
    return 0;
}

static int cmp_pair(const void *x, const void *y)
{
    const rc_k_md_contact *a = (const rc_k_md_contact *)x,
                          *b = (const rc_k_md_contact *)y;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

/* The same pairs in any order (the diagnosis of an order difference);
 * sorts both arrays. */
static int same_multiset(rc_k_md_contact *a, rc_k_md_contact *b, long n)
{
    long c;
    qsort(a, (size_t)n, sizeof *a, cmp_pair);
    qsort(b, (size_t)n, sizeof *b, cmp_pair);
    for (c = 0; c < n; ++c)
        if (a[c].i != b[c].i || a[c].j != b[c].j)
            return 0;
    return 1;
}

/* medium: the case must reach the medium island tier with islands beyond
 * the per-thread tier */
static void compare(const setup *s, int medium_case)
{
    rc_md ma, mb;
    rc_dmd a, b;
    const rc_dmd_ops *oa, *ob;
    void *ca, *cb;
    char why[400] = "";
    size_t N = (size_t)s->n * (size_t)s->dim;
    int step, k, same_sets = 1, same_counts = 1, strict = 0;
    double worst = 0.0, worst_med = 0.0, ke0 = 0.0, ke = 0.0, pot, mom0[3],
           mom[3], pdev = 0.0;
    long coll = 0, medium = 0, largest = 0;
#ifdef RICOCHET_STRICT_FP
    strict = 1;
#endif
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&ma, 0, sizeof ma);
    memset(&mb, 0, sizeof mb);
    if (make(s, &ma, &mb) != 0)
        goto done;
    if (rc_dmd_cpu_launcher(&oa, &ca) != RC_OK ||
        rc_dmd_init(&a, &ma, oa, ca) != RC_OK) {
        RC_CHECK(0, "%s: cpu launcher: %s", s->what, ma.msg);
        goto done;
    }
    if (rc_cuda_md_launcher(&ob, &cb, why, sizeof why) != RC_OK) {
        RC_CHECK(0, "%s: cuda launcher: %s", s->what, why);
        goto done;
    }
    if (rc_dmd_init(&b, &mb, ob, cb) != RC_OK) {
        RC_CHECK(0, "%s: cuda engine: %s", s->what, mb.msg);
        goto done;
    }
    /* step by step from the CPU launcher's state */
    for (step = 0; step < (rc_test_quick() ? 10 : 100); ++step) {
        rc_k_md_contact *ka = NULL, *kb = NULL;
        long *ia = NULL, *ib = NULL, c, med0 = mb.total.lapack_islands;
        rc_status sa, sb;
        double d;
        if (rc_dmd_sync(&a) != RC_OK) {
            RC_CHECK(0, "%s: sync: %s", s->what, ma.msg);
            break;
        }
        memcpy(mb.q, ma.q, sizeof(double) * N);
        memcpy(mb.p, ma.p, sizeof(double) * N);
        memcpy(mb.image, ma.image, sizeof(int) * N);
        if (rc_dmd_load(&a) != RC_OK || rc_dmd_load(&b) != RC_OK) {
            RC_CHECK(0, "%s: load: %s", s->what, mb.msg);
            break;
        }
        sa = rc_dmd_step(&a);
        sb = rc_dmd_step(&b);
        if (sa != RC_OK || sb != RC_OK) {
            RC_CHECK(0, "%s: step %d: cpu %d (%s), cuda %d (%s)", s->what,
                     step, sa, ma.msg, sb, mb.msg);
            break;
        }
        same_counts &= ma.step.collisions == mb.step.collisions &&
                       ma.step.wall_collisions == mb.step.wall_collisions &&
                       ma.step.passes == mb.step.passes &&
                       ma.step.islands == mb.step.islands &&
                       ma.step.rounds == mb.step.rounds &&
                       a.host_islands == b.host_islands;
        if (a.v.ncon != b.v.ncon || a.v.nisl != b.v.nisl ||
            contacts_of(&a, &ka, &ia) || contacts_of(&b, &kb, &ib)) {
            if (same_sets)
                printf("%s: step %d: first difference: contacts %ld (cpu) "
                       "vs %ld (gpu), islands %ld vs %ld\n",
                       s->what, step, a.v.ncon, b.v.ncon, a.v.nisl, b.v.nisl);
            same_sets = 0;
        } else {
            long bad_c = -1, bad_i = -1;
            for (c = 0; c < a.v.ncon; ++c)
                if (bad_c < 0 && (ka[c].i != kb[c].i || ka[c].j != kb[c].j))
                    bad_c = c;
            for (c = 0; c <= a.v.nisl && a.v.nisl > 0; ++c)
                if (bad_i < 0 && ia[c] != ib[c])
                    bad_i = c;
            if (same_sets && bad_c >= 0)
                printf("%s: step %d: first difference: contact %ld of %ld: "
                       "(%d,%d) cpu vs (%d,%d) gpu; the same set in another "
                       "order: %s\n",
                       s->what, step, bad_c, a.v.ncon, ka[bad_c].i,
                       ka[bad_c].j, kb[bad_c].i, kb[bad_c].j,
                       same_multiset(ka, kb, a.v.ncon) ? "yes" : "no");
            else if (same_sets && bad_i >= 0)
                printf("%s: step %d: first difference: island start %ld of "
                       "%ld: %ld cpu vs %ld gpu\n",
                       s->what, step, bad_i, a.v.nisl, ia[bad_i], ib[bad_i]);
            same_sets &= bad_c < 0 && bad_i < 0;
        }
        free(ka);
        free(kb);
        free(ia);
        free(ib);
        if (rc_dmd_sync(&a) != RC_OK || rc_dmd_sync(&b) != RC_OK)
            break;
        d = fmax(max_abs_diff(ma.q, mb.q, N), max_abs_diff(ma.p, mb.p, N));
        if (mb.total.lapack_islands > med0) /* the medium tier: LAPACK on
                                               one side, cuSOLVER on the
                                               other */
            worst_med = fmax(worst_med, d);
        else
            worst = fmax(worst, d);
        medium += mb.total.lapack_islands - med0;
        /* the largest island of a step the medium tier solved */
        if (mb.total.lapack_islands > med0 &&
            mb.step.largest_island > largest)
            largest = mb.step.largest_island;
        coll += ma.step.collisions;
    }
    RC_CHECK(same_sets, "%s: contact sets or island partitions differ",
             s->what);
    RC_CHECK(same_counts, "%s: step counters differ", s->what);
    if (!rc_test_quick()) /* 10 steps of the Lennard-Jones gas may have none */
        RC_CHECK(coll > 0, "%s: no collisions: nothing was compared",
                 s->what);
    if (strict)
        RC_CHECK(worst == 0.0, "%s: strict FP, state differs by %.3g",
                 s->what, worst);
    else
        RC_CHECK(worst <= 1e-10, "%s: state differs by %.3g after one step",
                 s->what, worst);
    RC_CHECK(worst_med <= 1e-10,
             "%s: state differs by %.3g after a step with the medium tier",
             s->what, worst_med);
    if (medium_case && !rc_test_quick())
        RC_CHECK(medium > 0 && largest > 64,
                 "%s: the medium tier must take islands of 65-%d contacts "
                 "on the GPU (%ld solves, largest such island %ld)",
                 s->what, s->lapack_max, medium, largest);
    printf("%-26s one step x 100: %ld collisions, |dq|,|dp| <= %.2g; "
           "medium tier: %ld solves, largest island %ld, |dq|,|dp| <= "
           "%.2g\n",
           s->what, coll, worst, medium, largest, worst_med);

    /* observables reduced on each launcher from one state, with the
     * initial positions as the MSD reference: the same chunked sums,
     * bitwise in strict FP, else to 1e-12 relative (contraction inside
     * the per-particle terms) */
    if (rc_dmd_sync(&a) == RC_OK) {
        double oa[7], ob[7], *ref = (double *)malloc(sizeof(double) * N);
        int k, same_obs = 1;
        memcpy(mb.q, ma.q, sizeof(double) * N);
        memcpy(mb.p, ma.p, sizeof(double) * N);
        memcpy(mb.image, ma.image, sizeof(int) * N);
        for (k = 0; ref && k < (int)N; ++k)
            ref[k] = ma.q[k] + 0.01 * (k % 7);
        /* both loaded (a with its own state): a load discards the
         * candidate list, and the free run below needs both lists built
         * at the same step (A's order follows the gap buckets of the
         * build; with only b reloaded, a's older list ordered the
         * islands' contacts differently and the strict-FP runs parted
         * by an ulp within a few steps, H200, 2026-11-27) */
        if (!ref || rc_dmd_load(&a) != RC_OK || rc_dmd_load(&b) != RC_OK ||
            rc_dmd_set_ref(&a, ref) ||
            rc_dmd_set_ref(&b, ref) ||
            rc_dmd_observe(&a, oa, oa + 1, oa + 2, oa + 5, oa + 6) ||
            rc_dmd_observe(&b, ob, ob + 1, ob + 2, ob + 5, ob + 6)) {
            RC_CHECK(0, "%s: observables: %s / %s", s->what, ma.msg, mb.msg);
        } else {
            for (k = 0; k < 7; ++k)
                same_obs &= strict ? oa[k] == ob[k]
                                   : rc_test_close(oa[k], ob[k], 1e-12, 1e-14);
            RC_CHECK(same_obs,
                     "%s: observables differ: KE %.17g/%.17g MSD %.17g/%.17g "
                     "overlap %.3g/%.3g",
                     s->what, oa[0], ob[0], oa[5], ob[5], oa[6], ob[6]);
        }
        free(ref);
    }

    /* free running */
    {
        double ka0, pa0, ma0[3], ka, pa, e0b, eb, e0a, ea;
        int first_diff = -1;
        if (rc_dmd_sync(&a) != RC_OK)
            goto done;
        rc_md_energy(&ma, &ka0, &pa0, ma0);
        rc_md_energy(&mb, &ke0, &pot, mom0);
        e0a = ka0 + pa0;
        e0b = ke0 + pot;
        worst = 0.0;
        if (medium > 0)
            strict = 0; /* the solvers round apart: chaos follows */
        for (step = 0; step < (rc_test_quick() ? 30 : 300); ++step) {
            if (rc_dmd_step(&a) != RC_OK || rc_dmd_step(&b) != RC_OK) {
                RC_CHECK(0, "%s: free run step %d: %s / %s", s->what, step,
                         ma.msg, mb.msg);
                break;
            }
            if (strict && rc_dmd_sync(&a) == RC_OK &&
                rc_dmd_sync(&b) == RC_OK) {
                worst = fmax(worst, max_abs_diff(ma.q, mb.q, N));
                worst = fmax(worst, max_abs_diff(ma.p, mb.p, N));
                if (worst > 0.0 && first_diff < 0)
                    first_diff = step;
            }
        }
        if (strict)
            RC_CHECK(worst == 0.0,
                     "%s: strict FP, free steps differ by %.3g (from step "
                     "%d)",
                     s->what, worst, first_diff);
        if (rc_dmd_sync(&a) != RC_OK || rc_dmd_sync(&b) != RC_OK)
            goto done;
        rc_md_energy(&ma, &ka, &pa, mom);
        ea = ka + pa;
        rc_md_energy(&mb, &ke, &pot, mom);
        eb = ke + pot;
        for (k = 0; k < 3; ++k)
            pdev = fmax(pdev, fabs(mom[k] - mom0[k]));
        if (s->gravity == 0.0 && !s->pair)
            RC_CHECK(fabs(ke - ke0) <= 1e-11 * ke0,
                     "%s: GPU run kinetic energy drifted by %.3g relative",
                     s->what, fabs(ke - ke0) / ke0);
        /* with forces the energy error is GVI's own (an O(dt^2)
         * oscillation), which the CPU run shows too: the trajectories
         * separate chaotically, the error's size must not (10x its
         * size, and round-off for a vanishing one) */
        RC_CHECK(fabs(eb - e0b) <= 10.0 * fabs(ea - e0a) + 1e-10 * fabs(e0b),
                 "%s: GPU run energy error %.3g against the CPU run's %.3g",
                 s->what, fabs(eb - e0b), fabs(ea - e0a));
        if (s->periodic && s->gravity == 0.0)
            RC_CHECK(pdev <= 1e-10, "%s: GPU run momentum moved by %.3g",
                     s->what, pdev);
        printf("%-26s 300 free steps: |dE|/E %.2g (cpu %.2g), |dP| %.2g, "
               "host-tier islands %ld\n",
               s->what, fabs(eb - e0b) / fabs(e0b), fabs(ea - e0a) / fabs(e0a),
               pdev, b.host_islands);
    }
done:
    rc_dmd_free(&a);
    rc_dmd_free(&b);
    rc_md_free(&ma);
    rc_md_free(&mb);
}
#endif

int main(void)
{
#ifndef RICOCHET_HAVE_CUDA
    printf("test_gpu_md: skipped (built without the CUDA backend)\n");
    return 77;
#else
    int gate;
    /* what, dim, n, lattice, periodic, moreau, max_passes, dense_max,
     * mixed, eta, gravity, dt, steps (unused here), lapack_max, reload,
     * order */
    setup gas = {"periodic gas 3-D", 3, 4000, RC_LATTICE_FCC, 1, 0, 0, 0, 0,
                 0.3, 0.0, 0.02, 0, 0, 0, 0, 0, 0};
    setup walls = {"walls + gravity, mixed", 3, 2000, RC_LATTICE_RANDOM, 0, 0,
                   0, 0, 1, 0.25, 2.0, 0.01, 0, 0, 0, 0, 0, 0};
    setup flat = {"periodic 2-D, mixed", 2, 3000, RC_LATTICE_RANDOM, 1, 0, 0,
                  0, 1, 0.4, 0.0, 0.02, 0, 0, 0, 0, 0, 0};
    setup lj = {"Lennard-Jones 3-D", 3, 4000, RC_LATTICE_FCC, 1, 0, 0, 0, 0,
                0.3, 0.0, 0.005, 0, 0, 0, 0, RC_POT_LENNARD_JONES, 0};
    /* Moreau reflection under gravity: contacts held on the device
     * (islands beyond 64 contacts go to the host tiers) */
    setup held = {"walls, Moreau, held", 2, 900, RC_LATTICE_RANDOM, 0, 1, 1,
                  0, 1, 0.45, 5.0, 0.02, 0, 64, 0, 0, 0, 0};
    /* a walled packing settling under gravity, generalized reflection:
     * by step ~60 its islands pass 64 contacts and go to the medium tier
     * (largest ~430 by step 80 through the CPU launcher) */
    setup settle = {"walls, generalized, medium", 2, 900, RC_LATTICE_RANDOM,
                    0, 0, 100, 64, 1, 0.45, 5.0, 0.02, 0, 512, 0, 0, 0, 0};
    if ((gate = rc_test_gpu_gate("test_gpu_md")) != 0)
        return gate;
    compare(&gas, 0);
    compare(&walls, 0);
    compare(&flat, 0);
    compare(&lj, 0);
    compare(&held, 0);
    compare(&settle, 1);
    {
        /* exact collision times: impact loops, path screens and logs on
         * the device */
        setup xgas = gas;
        xgas.what = "exact, periodic gas 3-D";
        xgas.exact = 1;
        xgas.dt = 0.06;
        compare(&xgas, 0);
    }
    return rc_test_finish("test_gpu_md");
#endif
}

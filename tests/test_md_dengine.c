/* The device-shaped engine (src/host/md/dengine.c) through its CPU
 * launcher against the host engine (engine.c), step by step.
 *
 * The two run the same algorithm with the same bodies for every number
 * that enters the state (gaps, normals, speeds, Gram entries, the dense
 * NNLS, impulses, predictor and kick), and the device engine's contact
 * set A and its island order are built to be the host's (pairs in
 * candidate order, then walls; islands by smallest sphere; contacts in
 * A's order within one).  So positions and momenta must agree bit for bit
 * after every step, with the same collision, pass, island and round
 * counts.  Only the collision virial may differ, in its last bits: the
 * device sums it in chunks of 1024 combined by a tree (rc_k_reduce), the
 * host in one running sum.  The reduction's two forms (the GPU's tree
 * levels and the CPU's stream fold) are checked bitwise first.
 *
 * Cases: a periodic gas, walls with gravity and mixed radii (2-D and
 * 3-D), a dense fluid with both dense tiers cut to 2 contacts (islands
 * beyond them go to the host engine: the fallback path), Moreau
 * reflection with one pass (held contacts: the other fallback), and a
 * Lennard-Jones gas and a walled WCA fluid under gravity (forces gathered
 * per sphere on the device engine, scattered over the candidates on the
 * host: the same sums in the same order).  One case is not bitwise: the dense fluid
 * with the per-thread tier cut to 2 and the batched medium tier above it
 * (nnls_batch.h) against the host's LAPACK tier, two different exact
 * solvers of the same NNLS; it is compared one step at a time from the
 * host's state, to round-off.  The gas and the walls run again with the
 * launcher's loops reversed and strided: no result may depend on the
 * order in which items run, as none can on a GPU; and the launcher checks
 * that no island writes outside its scratch block (a race on a GPU). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/dengine.h"
#include "rc_test.h"
#include "rc_md_test.h"

/* contacts the last compare's device engine held in steps it kept */
static long g_held = 0;

/* The reduction's two forms of one association (rc_md.h): the GPU's
 * tree levels (rc_k_tree_level, run here serially level by level) and
 * the stream fold of the CPU launcher and the host engine
 * (rc_k_tree_push/_total), bitwise, for every count of chunk results up
 * to 4100 (all shapes of the tree up to 2^12 and past it), sums of
 * values of mixed sign and magnitude (so that a different pairing would
 * round differently) and maxima. */
static void tree_forms(void)
{
    enum { NMAX = 4100 };
    static double x[NMAX], a[NMAX];
    unsigned long long seed = 12345;
    long n, i, s, t, bad = 0, rounding_seen = 0;
    int is_max;
    for (i = 0; i < NMAX; ++i)
        x[i] = (rc_test_uniform(&seed) - 0.5) *
               pow(10.0, 8.0 * rc_test_uniform(&seed));
    for (is_max = 0; is_max < 2; ++is_max)
        for (n = 0; n <= NMAX; ++n) {
            rc_k_tree tr;
            double lv, st, seq = 0.0;
            memcpy(a, x, sizeof(double) * (size_t)n);
            for (s = 1; s < n; s *= 2)
                for (t = 0; t < (n + 2 * s - 1) / (2 * s); ++t)
                    rc_k_tree_level(a, n, s, t, is_max);
            lv = n > 0 ? a[0] : 0.0;
            rc_k_tree_init(&tr, is_max);
            for (i = 0; i < n; ++i) {
                rc_k_tree_push(&tr, x[i]);
                seq = is_max ? rc_fmax(seq, x[i]) : seq + x[i];
            }
            st = rc_k_tree_total(&tr);
            bad += memcmp(&lv, &st, sizeof lv) != 0;
            rounding_seen += !is_max && st != seq;
        }
    RC_CHECK(bad == 0, "reduction tree: %ld counts where the level form "
                       "and the stream form differ", bad);
    /* the test can tell pairings apart: the tree and a running sum
     * round differently for most counts */
    RC_CHECK(rounding_seen > 1000, "reduction tree: only %ld counts where "
                                   "the tree and a running sum differ",
             rounding_seen);
    printf("reduction tree: level and stream forms bitwise equal for 0..%d "
           "chunk results (tree != running sum for %ld counts)\n",
           NMAX, rounding_seen);
}

static void compare(const setup *s, long *fallbacks, long *medium)
{
    rc_md host, dev;
    rc_dmd g;
    const rc_dmd_ops *ops;
    void *ctx;
    int step, same = 1;
    size_t N = (size_t)s->n * (size_t)s->dim;
    double vir_rel = 0.0, worst = 0.0;
    memset(&g, 0, sizeof g);
    memset(&host, 0, sizeof host);
    memset(&dev, 0, sizeof dev);
    *fallbacks = 0;
    *medium = 0;
    g_held = 0;
    if (make(s, &host, &dev) != 0)
        goto done;
    RC_CHECK(rc_dmd_cpu_launcher(&ops, &ctx) == RC_OK, "launcher");
    rc_dmd_cpu_order(ctx, s->order);
    if (rc_dmd_init(&g, &dev, ops, ctx) != RC_OK) {
        RC_CHECK(0, "%s: device engine: %s", s->what, dev.msg);
        goto done;
    }
    for (step = 0; step < s->steps && same; ++step) {
        rc_status sh, sd;
        if (s->reload) {
            memcpy(dev.q, host.q, sizeof(double) * N);
            memcpy(dev.p, host.p, sizeof(double) * N);
            memcpy(dev.image, host.image, sizeof(int) * N);
            if (rc_dmd_load(&g) != RC_OK) {
                RC_CHECK(0, "%s: load: %s", s->what, dev.msg);
                break;
            }
        }
        sh = rc_md_step(&host);
        {
            long fb0 = g.fallbacks;
            sd = rc_dmd_step(&g);
            if (sd == RC_OK && g.fallbacks == fb0)
                g_held += dev.step.held;
        }
        if (sh != RC_OK || sd != RC_OK) {
            RC_CHECK(sh == sd, "%s: step %d: host %d (%s), device %d (%s)",
                     s->what, step, sh, host.msg, sd, dev.msg);
            break;
        }
        if (rc_dmd_sync(&g) != RC_OK) {
            RC_CHECK(0, "%s: sync: %s", s->what, dev.msg);
            break;
        }
        if (s->reload) {
            /* the medium tier (masked batched active set) against the
             * host's LAPACK tier: the same impulses up to the solvers'
             * rounding, ~1e-15 of the momenta for these well-conditioned
             * islands; 1e-11 keeps a margin and still sees any impulse
             * lost or doubled (O(1)) */
            size_t a;
            double dq = 0.0, dp = 0.0;
            for (a = 0; a < N; ++a) {
                dq = fmax(dq, fabs(host.q[a] - dev.q[a]));
                dp = fmax(dp, fabs(host.p[a] - dev.p[a]));
            }
            worst = fmax(worst, fmax(dq, dp));
            same = dq <= 1e-11 && dp <= 1e-11;
        } else {
            same = memcmp(host.q, dev.q, sizeof(double) * N) == 0 &&
                   memcmp(host.p, dev.p, sizeof(double) * N) == 0;
        }
        same = same && memcmp(host.image, dev.image, sizeof(int) * N) == 0 &&
               /* the pair energy and virial are chunked sums over the
                * candidates, whose out-of-range entries shift the chunk
                * boundaries once a handed step has rebuilt its own list:
                * a few ulps; bitwise otherwise */
               (g.fallbacks > 0
                    ? rc_test_close(host.epot_pair, dev.epot_pair, 1e-13, 1e-14) &&
                          rc_test_close(host.virial_force, dev.virial_force,
                                        1e-13, 1e-14)
                    : host.epot_pair == dev.epot_pair &&
                          host.virial_force == dev.virial_force) &&
               host.step.collisions == dev.step.collisions &&
               host.step.wall_collisions == dev.step.wall_collisions &&
               host.step.passes == dev.step.passes &&
               host.step.islands == dev.step.islands &&
               host.step.largest_island == dev.step.largest_island &&
               host.step.rounds == dev.step.rounds &&
               host.step.held == dev.step.held;
        RC_CHECK(same,
                 "%s: step %d differs: collisions %ld/%ld walls %ld/%ld "
                 "passes %ld/%ld islands %ld/%ld largest %ld/%ld rounds "
                 "%ld/%ld held %ld/%ld",
                 s->what, step, host.step.collisions, dev.step.collisions,
                 host.step.wall_collisions, dev.step.wall_collisions,
                 host.step.passes, dev.step.passes, host.step.islands,
                 dev.step.islands, host.step.largest_island,
                 dev.step.largest_island, host.step.rounds, dev.step.rounds,
                 host.step.held, dev.step.held);
        if (host.step.virial != 0.0 && !s->reload)
            vir_rel = fmax(vir_rel, fabs(dev.step.virial - host.step.virial) /
                                        fabs(host.step.virial));
    }
    /* the virial's two summation orders: a few ulps per 1024 terms */
    RC_CHECK(vir_rel <= 1e-12, "%s: virial differs by %.3g relative",
             s->what, vir_rel);
    RC_CHECK(host.total.collisions > 0,
             "%s: no collisions: the comparison would be empty", s->what);
    *fallbacks = g.fallbacks;
    printf("%-28s %4d steps, %7ld collisions, %5ld wall collisions, "
           "largest island %3ld, medium-tier solves %ld, fallbacks %ld (big "
           "%ld, held %ld), virial rel %.1e%s",
           s->what, step, host.total.collisions, host.total.wall_collisions,
           host.total.largest_island, dev.total.lapack_islands, g.fallbacks,
           g.fallback_big, g.fallback_held, vir_rel,
           s->reload ? "" : ", bitwise\n");
    if (s->reload)
        printf(", one step at a time: |dq|, |dp| <= %.2g\n", worst);
    *medium = dev.total.lapack_islands;
done:
    rc_dmd_free(&g);
    rc_md_free(&host);
    rc_md_free(&dev);
}

int main(void)
{
    long fb, med;
    tree_forms();
    /* a gas, many collisions per step (dt near the mean free time) */
    setup gas = {"periodic gas 3-D", 3, 2048, RC_LATTICE_FCC, 1, 0, 100, 64,
                 0, 0.3, 0.0, 0.02, 150, 0, 0, 0, 0};
    setup gas2 = {"periodic gas 2-D, mixed", 2, 1600, RC_LATTICE_RANDOM, 1, 0,
                  100, 64, 1, 0.4, 0.0, 0.02, 150, 0, 0, 0, 0};
    setup walls = {"walls + gravity 3-D, strided", 3, 1000, RC_LATTICE_RANDOM, 0,
                   0, 100, 64, 1, 0.2, 2.0, 0.01, 200, 0, 0, 0, 0};
    setup dense = {"dense, tiers cut to 2", 3, 864, RC_LATTICE_FCC, 1, 0, 100,
                   2, 0, 0.45, 0.0, 0.02, 80, 2, 0, 0, 0};
    setup medium = {"dense, medium tier from 3", 3, 864, RC_LATTICE_FCC, 1,
                    0, 100, 2, 0, 0.45, 0.0, 0.02, 80, 512, 1, 0, 0};
    setup lj = {"Lennard-Jones gas 3-D", 3, 2048, RC_LATTICE_FCC, 1, 0, 100,
                64, 0, 0.3, 0.0, 0.005, 150, 0, 0, RC_DMD_CPU_STRIDED,
                RC_POT_LENNARD_JONES};
    setup wca = {"WCA, walls + gravity 2-D", 2, 1200, RC_LATTICE_RANDOM, 0, 0,
                 100, 64, 1, 0.35, 1.0, 0.005, 150, 0, 0, 0, RC_POT_WCA};
    setup ljdense = {"Lennard-Jones dense, handed", 3, 864, RC_LATTICE_FCC,
                     1, 0, 100, 2, 0, 0.45, 0.0, 0.02, 60, 2, 0, 0,
                     RC_POT_LENNARD_JONES};
    /* held contacts on the device; islands beyond 64 contacts go to the
     * host engine (lapack_max 64: the medium tier, a different exact
     * solver, would end the bitwise agreement) */
    setup moreau = {"walls, moreau 1 pass", 2, 900, RC_LATTICE_RANDOM, 0, 1, 1,
                    64, 1, 0.45, 5.0, 0.02, 120, 64, 0, 0, 0};
    /* the same with the medium tier, one step at a time */
    setup moreau_med = {"walls, moreau, medium tier", 2, 900,
                        RC_LATTICE_RANDOM, 0, 1, 1, 64, 1, 0.45, 5.0, 0.02,
                        120, 0, 1, 0, 0};
    compare(&gas, &fb, &med);
    /* the launcher's loops in other orders: a GPU keeps none */
    gas.what = "periodic gas 3-D, reversed";
    gas.order = RC_DMD_CPU_REVERSE;
    compare(&gas, &fb, &med);
    gas.what = "periodic gas 3-D, strided";
    gas.order = RC_DMD_CPU_STRIDED;
    compare(&gas, &fb, &med);
    compare(&gas2, &fb, &med);
    walls.order = RC_DMD_CPU_STRIDED;
    compare(&walls, &fb, &med);
    medium.order = RC_DMD_CPU_REVERSE;
    compare(&dense, &fb, &med);
    RC_CHECK(fb > 0, "the dense case must exercise the fallback to the host "
                     "engine (islands beyond the tiers)");
    compare(&medium, &fb, &med);
    RC_CHECK(med > 0 && fb == 0,
             "the medium case must solve islands in the batched tier (%ld "
             "solves) without the host engine (%ld fallbacks)",
             med, fb);
    compare(&moreau, &fb, &med);
    RC_CHECK(g_held > 0, "the Moreau case must hold contacts on the device");
    compare(&moreau_med, &fb, &med);
    RC_CHECK(g_held > 0 && med > 0,
             "the Moreau case with the medium tier must use both");
    compare(&lj, &fb, &med);
    compare(&wca, &fb, &med);
    compare(&ljdense, &fb, &med);
    RC_CHECK(fb > 0, "the dense Lennard-Jones case must hand steps (and its "
                     "forces) to the host engine and back");
    return rc_test_finish("test_md_dengine");
}

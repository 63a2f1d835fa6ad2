/* Every failure path of the engine, driven by the CPU launcher's
 * fault injection (rc_dmd_cpu_inject): launcher call number K of a step,
 * of the engine's set-up and of the observables fails, for every K the
 * clean run makes, once alone and once with every later call failing too
 * (as every call does after a GPU fault).  Each time:
 *   - the step (set-up, observables) returns an error, never RC_OK: no
 *     failure is swallowed;
 *   - the message names the launcher and a stage, and carries the
 *     injected failure K, the first one (later failures do not overwrite
 *     it);
 *   - after a single failure the momenta of the step's start are
 *     restored, and the same step taken again without the fault gives
 *     exactly (bitwise) the state and counters of the clean step: the
 *     engine recovers, nothing half-built survives.
 * Cases reach every kind of call: a fresh engine's first step (the
 * allocations), a gas (islands, reflections), held contacts under
 * Moreau (holding and projection), the medium island tier (the batched
 * NNLS), islands beyond both in the host tiers, and a pair potential
 * (forces and their sums).  Run under the sanitizer build it also shows that no
 * failure path leaks or touches freed memory. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/dengine.h"
#include "rc_test.h"
#include "rc_md_test.h"

/* The message of an injected failure at call k: the launcher and a stage
 * before it, the first injected failure in it. */
static int names_fault(const char *msg, long k)
{
    char tag[80];
    snprintf(tag, sizeof tag, "injected fault at launcher call %ld (", k);
    return strncmp(msg, "cpu launcher: ", 14) == 0 && strstr(msg, tag) &&
           strstr(msg, tag) > msg + 14 &&
           !strstr(strstr(msg, tag) + strlen(tag), "injected fault");
}

typedef struct state {
    double *q, *p, *grad; /* grad V(q) on the launcher (pair potentials) */
    int *image;
    long collisions, wall_collisions, passes, held, host_islands;
} state;

static int grab(rc_dmd *g, state *s)
{
    size_t N = (size_t)g->md->n * (size_t)g->md->dim;
    if (!s->q) {
        s->q = (double *)malloc(sizeof(double) * N);
        s->p = (double *)malloc(sizeof(double) * N);
        s->image = (int *)malloc(sizeof(int) * N);
        s->grad = (double *)malloc(sizeof(double) * N);
        if (!s->q || !s->p || !s->image || !s->grad)
            return -1;
    }
    if (rc_dmd_sync(g) != RC_OK ||
        (g->v.has_pair &&
         g->ops->get(g->ctx, s->grad, g->v.grad, sizeof(double) * N)))
        return -1;
    memcpy(s->q, g->md->q, sizeof(double) * N);
    memcpy(s->p, g->md->p, sizeof(double) * N);
    memcpy(s->image, g->md->image, sizeof(int) * N);
    s->collisions = g->md->step.collisions;
    s->wall_collisions = g->md->step.wall_collisions;
    s->passes = g->md->step.passes;
    s->held = g->md->step.held;
    s->host_islands = g->host_islands;
    return 0;
}

static int same(const state *a, const state *b, size_t N)
{
    return memcmp(a->q, b->q, sizeof(double) * N) == 0 &&
           memcmp(a->p, b->p, sizeof(double) * N) == 0 &&
           memcmp(a->image, b->image, sizeof(int) * N) == 0 &&
           a->collisions == b->collisions &&
           a->wall_collisions == b->wall_collisions &&
           a->passes == b->passes && a->held == b->held;
}

static void drop(state *s)
{
    free(s->q);
    free(s->p);
    free(s->image);
    free(s->grad);
    memset(s, 0, sizeof *s);
}

/* Load `start` (with a pair potential also grad V(q), which a step
 * keeps on the launcher) and take one step from freshly built candidates
 * (every run of a case begins alike).  The load makes LOAD_CALLS(g)
 * launcher calls before the step's. */
#define LOAD_CALLS(g) ((g)->v.has_pair ? 4 : 3)
static rc_status step_from(rc_dmd *g, const state *start)
{
    size_t N = (size_t)g->md->n * (size_t)g->md->dim;
    memcpy(g->md->q, start->q, sizeof(double) * N);
    memcpy(g->md->p, start->p, sizeof(double) * N);
    memcpy(g->md->image, start->image, sizeof(int) * N);
    if (rc_dmd_load(g) != RC_OK ||
        (g->v.has_pair &&
         g->ops->put(g->ctx, g->v.grad, start->grad, sizeof(double) * N)))
        return RC_ERR_DEVICE;
    g->have_cand = 0;
    return rc_dmd_step(g);
}

/* A case: `warm` clean steps, then every call of the next step faulted.
 * *covered: the OR of what the clean step used (1 held contacts, 2 the
 * medium tier, 4 the host tiers). */
static void faults_in_step(const setup *s, int warm, int *covered)
{
    rc_md md;
    rc_dmd g;
    const rc_dmd_ops *ops;
    void *ctx;
    state start, clean, again;
    size_t N = (size_t)s->n * (size_t)s->dim;
    long k, calls = 0, bad_status = 0, bad_msg = 0, bad_recovery = 0;
    long medium0;
    int sticky, w;
    memset(&md, 0, sizeof md);
    memset(&g, 0, sizeof g);
    memset(&start, 0, sizeof start);
    memset(&clean, 0, sizeof clean);
    memset(&again, 0, sizeof again);
    if (make(s, &md, NULL) != 0)
        return;
    if (rc_dmd_cpu_launcher(&ops, &ctx) != RC_OK ||
        rc_dmd_init(&g, &md, ops, ctx) != RC_OK) {
        RC_CHECK(0, "%s: set-up: %s", s->what, md.msg);
        goto done;
    }
    for (w = 0; w < warm; ++w)
        if (rc_dmd_step(&g) != RC_OK) {
            RC_CHECK(0, "%s: warm-up step %d: %s", s->what, w, md.msg);
            goto done;
        }
    if (grab(&g, &start) != 0)
        goto done;
    medium0 = md.total.lapack_islands;
    /* twice: the first may allocate, and the faulted runs are counted
     * against the second */
    for (w = 0; w < 2; ++w) {
        rc_dmd_cpu_inject(g.ctx, -1, 0);
        if (step_from(&g, &start) != RC_OK) {
            RC_CHECK(0, "%s: clean step: %s", s->what, md.msg);
            goto done;
        }
        calls = rc_dmd_cpu_calls(g.ctx); /* with the load's */
        if (grab(&g, &clean) != 0)
            goto done;
    }
    *covered |= (clean.held > 0 ? 1 : 0) |
                (md.total.lapack_islands > medium0 ? 2 : 0) |
                (clean.host_islands > start.host_islands ? 4 : 0);
    for (sticky = 0; sticky < 2; ++sticky)
        for (k = LOAD_CALLS(&g); k < calls; ++k) {
            rc_status st;
            rc_dmd_cpu_inject(g.ctx, k, sticky);
            st = step_from(&g, &start);
            if (st == RC_OK) {
                if (bad_status++ < 4)
                    printf("  call %ld%s: the step succeeded\n", k,
                           sticky ? " (sticky)" : "");
            }
            else if (!names_fault(md.msg, k)) {
                if (bad_msg++ == 0)
                    printf("  call %ld%s: \"%s\"\n", k,
                           sticky ? " (sticky)" : "", md.msg);
            }
            if (sticky)
                continue;
            /* the momenta of the step's start are back */
            rc_dmd_cpu_inject(g.ctx, -1, 0);
            if (grab(&g, &again) != 0 ||
                memcmp(again.p, start.p, sizeof(double) * N) != 0 ||
                memcmp(again.q, start.q, sizeof(double) * N) != 0)
                bad_recovery++;
            /* and the step again, without the fault */
            else if (step_from(&g, &start) != RC_OK ||
                     grab(&g, &again) != 0 || !same(&again, &clean, N)) {
                if (bad_recovery++ < 4)
                    printf("  call %ld: no bitwise recovery (%s)\n", k,
                           md.msg);
            }
        }
    RC_CHECK(bad_status == 0, "%s: %ld faulted steps returned RC_OK",
             s->what, bad_status);
    RC_CHECK(bad_msg == 0,
             "%s: %ld faulted steps did not report the first injected fault "
             "with the launcher and a stage",
             s->what, bad_msg);
    RC_CHECK(bad_recovery == 0,
             "%s: %ld steps did not restore the start or recover bitwise",
             s->what, bad_recovery);
    printf("%-34s %3ld launcher calls in the step, each faulted alone and "
           "sticky (%ld, %ld, %ld bad)\n",
           s->what, calls - LOAD_CALLS(&g), bad_status, bad_msg,
           bad_recovery);
done:
    drop(&start);
    drop(&clean);
    drop(&again);
    rc_dmd_free(&g);
    rc_md_free(&md);
}

/* A fresh engine: every call of rc_dmd_init, then of the first step (its
 * allocations), then of the observables. */
static void faults_fresh(const setup *s)
{
    long k, calls_init = 0, calls_step = 0, calls_obs = 0, bad = 0;
    int phase, sticky;
    for (phase = 0; phase < 3; ++phase)
        for (sticky = 0; sticky < 2; ++sticky)
            for (k = -1;; ++k) {
                rc_md md;
                rc_dmd g;
                const rc_dmd_ops *ops;
                void *ctx;
                rc_status st = RC_OK;
                double kin, pot, mom[3], msd, ov;
                long *total = phase == 0 ? &calls_init
                              : phase == 1 ? &calls_step
                                           : &calls_obs;
                memset(&md, 0, sizeof md);
                memset(&g, 0, sizeof g);
                if (make(s, &md, NULL) != 0 ||
                    rc_dmd_cpu_launcher(&ops, &ctx) != RC_OK)
                    return;
                if (phase == 0)
                    rc_dmd_cpu_inject(ctx, k, sticky);
                st = rc_dmd_init(&g, &md, ops, ctx);
                if (phase > 0 && st == RC_OK) {
                    if (phase == 2 && rc_dmd_step(&g) != RC_OK)
                        st = RC_ERR_INVALID; /* the clean step must work */
                    rc_dmd_cpu_inject(g.ctx, k, sticky);
                    if (st == RC_OK)
                        st = phase == 1 ? rc_dmd_step(&g)
                                        : rc_dmd_observe(&g, &kin, &pot, mom,
                                                         &msd, &ov);
                }
                if (k == -1) { /* the clean run: its calls */
                    RC_CHECK(st == RC_OK, "%s: clean phase %d: %s", s->what,
                             phase, md.msg);
                    *total = phase == 0 ? rc_dmd_cpu_calls(ctx)
                                        : rc_dmd_cpu_calls(g.ctx);
                } else if (st == RC_OK || !names_fault(md.msg, k)) {
                    if (bad++ == 0)
                        printf("  phase %d call %ld%s: status %d \"%s\"\n",
                               phase, k, sticky ? " (sticky)" : "", (int)st,
                               md.msg);
                }
                if (phase > 0 || st == RC_OK)
                    rc_dmd_free(&g); /* init frees ctx itself on failure */
                rc_md_free(&md);
                if (k + 1 >= *total)
                    break;
            }
    RC_CHECK(calls_init > 0 && calls_step > 0 && calls_obs > 0,
             "%s: the clean runs made no launcher calls", s->what);
    RC_CHECK(bad == 0,
             "%s: %ld faulted set-ups, first steps or observables did not "
             "fail with the first injected fault",
             s->what, bad);
    printf("%-34s set-up %ld, first step %ld, observables %ld launcher "
           "calls, each faulted alone and sticky (%ld bad)\n",
           s->what, calls_init, calls_step, calls_obs, bad);
}

int main(void)
{
    int covered = 0;
    /* what, dim, n, lattice, periodic, moreau, max_passes, dense_max,
     * mixed, eta, gravity, dt, steps (unused), lapack_max, reload, order,
     * pair */
    setup gas = {"periodic gas 3-D", 3, 500, RC_LATTICE_FCC, 1, 0, 100, 64,
                 0, 0.3, 0.0, 0.02, 0, 0, 0, 0, 0, 0};
    setup held = {"walls, Moreau, held", 2, 400, RC_LATTICE_RANDOM, 0, 1, 1,
                  64, 1, 0.45, 5.0, 0.02, 0, 64, 0, 0, 0, 0};
    setup medium = {"dense, medium tier from 3", 3, 256, RC_LATTICE_FCC, 1,
                    0, 100, 2, 0, 0.45, 0.0, 0.02, 0, 512, 0, 0, 0, 0};
    setup handed = {"dense, host tiers beyond 2", 3, 256,
                    RC_LATTICE_FCC, 1, 0, 100, 2, 0, 0.45, 0.0, 0.02, 0, 2,
                    0, 0, 0, 0};
    setup lj = {"Lennard-Jones gas 3-D", 3, 500, RC_LATTICE_FCC, 1, 0, 100,
                64, 0, 0.3, 0.0, 0.005, 0, 0, 0, 0, RC_POT_LENNARD_JONES, 0};
    faults_fresh(&gas);
    faults_fresh(&lj);
    faults_in_step(&gas, 0, &covered);
    faults_in_step(&lj, 5, &covered);
    faults_in_step(&held, 60, &covered);
    faults_in_step(&medium, 3, &covered);
    faults_in_step(&handed, 3, &covered);
    {
        /* exact collision times: a step of several impacts per island,
         * closing rounds and the logs, every launcher call failed */
        setup xgas = gas;
        xgas.what = "exact, periodic gas 3-D";
        xgas.exact = 1;
        xgas.dt = 0.06;
        faults_fresh(&xgas);
        faults_in_step(&xgas, 2, &covered);
    }
    RC_CHECK((covered & 7) == 7,
             "the cases must reach held contacts, the medium tier and the "
             "host tiers (reached: %d of 1|2|4)",
             covered);
    return rc_test_finish("test_md_faults");
}

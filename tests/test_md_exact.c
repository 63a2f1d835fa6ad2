/* Exact collision times in large systems (integrator.collisions: exact,
 * src/kernels/rc_md_exact.h) against an independent event-by-event
 * reference written here: a plain event-driven simulation that advances
 * every sphere to the next impact of the whole system (all pairs by
 * minimum image, all walls, parabolic flights under gravity), collides
 * it elastically, and repeats.
 *
 *  1. Periodic 3-D gas (mixed radii and masses), periodic 2-D gas, a
 *     walled 2-D box under gravity and a walled 3-D box: the engine on
 *     its CPU launcher, with steps from many impacts per island (the set
 *     closed over deflected paths, islands processed again) to a few per
 *     step, gives the reference's positions and momenta to round-off
 *     amplified by the collisions (1e-8: the runs are a few collisions
 *     per sphere, where a 1e-16 difference grows by at most ~1e6), and
 *     the same number of collisions, exactly.
 *  2. Kinetic energy (plus gravity's potential) and momentum (periodic,
 *     no gravity) conserved to round-off.
 *  3. The step length does not change the dynamics: the hard-sphere
 *     fluid's collision count over a run is the same at dt, 5 dt and
 *     25 dt (a mean free time, where islands outgrow their impact logs'
 *     first room and their rounds run again in the full room).
 *  4. A checkpoint carries the engine's counters that summary.json
 *     reports, the rounds run again included: restored into a fresh
 *     engine, they are the interrupted run's.
 * Z and the collision rate against theory at a single dt are in
 * tests/test_md_fluid.c; the launcher rules (threads, item orders,
 * scratch checks, the bounded screen) in tests/test_md_dengine.c. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/checkpoint.h"
#include "host/md/dengine.h"
#include "rc_test.h"
#include "rc_md_test.h"

/* ---------------------------------------------------------- reference */

typedef struct ref_sys {
    int n, d, periodic[3];
    double L[3], g[3];
    double *x, *v, *m, *r; /* unwrapped positions, velocities */
    long collisions, wall_collisions;
} ref_sys;

static void ref_delta(const ref_sys *s, int i, int j, double *del)
{
    int k;
    for (k = 0; k < s->d; ++k) {
        double u = s->x[i * s->d + k] - s->x[j * s->d + k];
        if (s->periodic[k])
            u -= s->L[k] * floor(u / s->L[k] + 0.5);
        del[k] = u;
    }
}

/* Time until pair (i, j) touches while approaching, or INFINITY. */
static double ref_pair_time(const ref_sys *s, int i, int j)
{
    double del[3] = {0, 0, 0}, w[3] = {0, 0, 0}, b = 0, c = 0, a = 0, disc,
           sig = s->r[i] + s->r[j];
    int k;
    ref_delta(s, i, j, del);
    for (k = 0; k < s->d; ++k) {
        w[k] = s->v[i * s->d + k] - s->v[j * s->d + k];
        a += w[k] * w[k];
        b += del[k] * w[k];
        c += del[k] * del[k];
    }
    c -= sig * sig;
    if (b >= 0.0)
        return INFINITY;
    if (c <= 0.0)
        return 0.0;
    disc = b * b - a * c;
    if (disc < 0.0)
        return INFINITY;
    return (-b - sqrt(disc)) / a;
}

/* Time until sphere i reaches wall (axis, side) while closing. */
static double ref_wall_time(const ref_sys *s, int i, int axis, int side)
{
    double x = s->x[i * s->d + axis], u = s->v[i * s->d + axis],
           g = s->g[axis], gap, rate, acc, best = INFINITY;
    int root;
    /* gap(t) = gap + rate t + acc t^2 */
    gap = side ? s->L[axis] - s->r[i] - x : x - s->r[i];
    rate = side ? -u : u;
    acc = 0.5 * (side ? -g : g);
    if (gap <= 0.0 && rate < 0.0)
        return 0.0;
    if (acc == 0.0)
        return rate < 0.0 ? -gap / rate : INFINITY;
    for (root = 0; root < 2; ++root) {
        double disc = rate * rate - 4.0 * acc * gap, t;
        if (disc < 0.0)
            return INFINITY;
        t = (-rate + (root ? 1.0 : -1.0) * sqrt(disc)) / (2.0 * acc);
        if (t > 1e-15 && rate + 2.0 * acc * t < 0.0 && t < best)
            best = t;
    }
    return best;
}

static void ref_advance(ref_sys *s, double t)
{
    int i, k;
    for (i = 0; i < s->n; ++i)
        for (k = 0; k < s->d; ++k) {
            s->x[i * s->d + k] += s->v[i * s->d + k] * t + 0.5 * s->g[k] * t * t;
            s->v[i * s->d + k] += s->g[k] * t;
        }
}

/* Event by event up to time T. */
static void ref_run(ref_sys *s, double T)
{
    double now = 0.0;
    for (;;) {
        double best = INFINITY;
        int bi = -1, bj = -1, bax = -1, bside = 0, i, j, ax, side, k;
        for (i = 0; i < s->n; ++i) {
            for (j = i + 1; j < s->n; ++j) {
                double t = ref_pair_time(s, i, j);
                if (t < best) {
                    best = t;
                    bi = i;
                    bj = j;
                    bax = -1;
                }
            }
            for (ax = 0; ax < s->d; ++ax)
                if (!s->periodic[ax])
                    for (side = 0; side < 2; ++side) {
                        double t = ref_wall_time(s, i, ax, side);
                        if (t < best) {
                            best = t;
                            bi = i;
                            bj = -1;
                            bax = ax;
                            bside = side;
                        }
                    }
        }
        if (bi < 0 || now + best > T) {
            ref_advance(s, T - now);
            return;
        }
        ref_advance(s, best);
        now += best;
        if (bj >= 0) {
            double del[3] = {0, 0, 0}, dist = 0, vn = 0, lam;
            ref_delta(s, bi, bj, del);
            for (k = 0; k < s->d; ++k)
                dist += del[k] * del[k];
            dist = sqrt(dist);
            for (k = 0; k < s->d; ++k)
                vn += del[k] / dist *
                      (s->v[bi * s->d + k] - s->v[bj * s->d + k]);
            /* elastic: the relative normal velocity reverses */
            lam = -2.0 * vn / (1.0 / s->m[bi] + 1.0 / s->m[bj]);
            for (k = 0; k < s->d; ++k) {
                s->v[bi * s->d + k] += lam * del[k] / dist / s->m[bi];
                s->v[bj * s->d + k] -= lam * del[k] / dist / s->m[bj];
            }
            s->collisions++;
        } else {
            s->v[bi * s->d + bax] = -s->v[bi * s->d + bax];
            s->wall_collisions++;
            (void)bside;
        }
    }
}

/* ------------------------------------------------------------ compare */

static double energy(int n, int d, const double *q, const double *p,
                     const double *m, const double *g)
{
    double e = 0.0;
    int i, k;
    for (i = 0; i < n; ++i)
        for (k = 0; k < d; ++k)
            e += 0.5 * p[i * d + k] * p[i * d + k] / m[i] -
                 m[i] * g[k] * q[i * d + k];
    return e;
}

/* Case s (exact) for T = steps dt under several step lengths against the
 * reference. */
static void against_reference(setup s, double T, const int *steps, int nst)
{
    rc_md md;
    ref_sys rs;
    int a, i, k;
    size_t N = (size_t)s.n * (size_t)s.dim;
    memset(&md, 0, sizeof md);
    memset(&rs, 0, sizeof rs);
    s.exact = 1;
    s.steps = 1;
    s.dt = T;
    if (make(&s, &md, NULL) != 0)
        return;
    /* the reference from the same start */
    rs.n = s.n;
    rs.d = s.dim;
    rs.x = (double *)malloc(sizeof(double) * N);
    rs.v = (double *)malloc(sizeof(double) * N);
    rs.m = md.mass;
    rs.r = md.radius;
    for (k = 0; k < s.dim; ++k) {
        rs.periodic[k] = md.box.periodic[k];
        rs.L[k] = md.box.L[k];
        rs.g[k] = md.par.gravity[k];
    }
    for (i = 0; i < s.n; ++i)
        for (k = 0; k < s.dim; ++k) {
            rs.x[i * s.dim + k] = md.q[i * s.dim + k] +
                                  md.image[i * s.dim + k] * md.box.L[k];
            rs.v[i * s.dim + k] = md.p[i * s.dim + k] / md.mass[i];
        }
    ref_run(&rs, T);
    printf("%s: reference over T = %g: %ld collisions, %ld with walls\n",
           s.what, T, rs.collisions, rs.wall_collisions);
    RC_CHECK(rs.collisions > s.n / 4,
             "%s: the reference run must collide (%ld)", s.what,
             rs.collisions);
    for (a = 0; a < nst; ++a) {
        rc_md m2;
        rc_dmd g;
        const rc_dmd_ops *ops;
        void *ctx;
        double dq = 0.0, dp = 0.0, e0, e1, p0[3] = {0, 0, 0},
               p1[3] = {0, 0, 0}, dpm = 0.0;
        int st, ok = 1;
        long rounds = 0, most = 0;
        memset(&m2, 0, sizeof m2);
        memset(&g, 0, sizeof g);
        s.dt = T / steps[a];
        if (make(&s, &m2, NULL) != 0)
            continue;
        for (i = 0; i < s.n; ++i)
            for (k = 0; k < s.dim; ++k)
                p0[k] += m2.p[i * s.dim + k];
        e0 = energy(s.n, s.dim, m2.q, m2.p, m2.mass, m2.par.gravity);
        if (rc_dmd_cpu_launcher(&ops, &ctx) != RC_OK ||
            rc_dmd_init(&g, &m2, ops, ctx) != RC_OK) {
            RC_CHECK(0, "%s: engine: %s", s.what, m2.msg);
            rc_md_free(&m2);
            continue;
        }
        for (st = 0; st < steps[a] && ok; ++st) {
            ok = rc_dmd_step(&g) == RC_OK;
            rounds += m2.step.rounds;
            if (m2.step.largest_island > most)
                most = m2.step.largest_island;
        }
        RC_CHECK(ok, "%s, %d steps: %s", s.what, steps[a], m2.msg);
        if (ok && rc_dmd_sync(&g) == RC_OK) {
            for (i = 0; i < s.n; ++i)
                for (k = 0; k < s.dim; ++k) {
                    double x = m2.q[i * s.dim + k] +
                               m2.image[i * s.dim + k] * m2.box.L[k];
                    dq = fmax(dq, fabs(x - rs.x[i * s.dim + k]));
                    dp = fmax(dp, fabs(m2.p[i * s.dim + k] / m2.mass[i] -
                                       rs.v[i * s.dim + k]));
                    p1[k] += m2.p[i * s.dim + k];
                }
            e1 = energy(s.n, s.dim, m2.q, m2.p, m2.mass, m2.par.gravity);
            for (k = 0; k < s.dim; ++k)
                dpm = fmax(dpm, fabs(p1[k] - p0[k]));
            printf("%s: %d steps of %g: %ld collisions (%ld with walls), "
                   "largest island %ld, %ld closing rounds; |dx| %.2e, "
                   "|dv| %.2e from the reference; energy %.2e relative, "
                   "momentum %.2e\n",
                   s.what, steps[a], s.dt, m2.total.collisions,
                   m2.total.wall_collisions, most, rounds, dq, dp,
                   fabs(e1 - e0) / fabs(e0), dpm);
            /* round-off amplified by a few collisions per sphere */
            RC_CHECK(dq < 1e-8 && dp < 1e-8,
                     "%s, %d steps: |dx| %.3g |dv| %.3g from the "
                     "event-by-event reference",
                     s.what, steps[a], dq, dp);
            RC_CHECK(m2.total.collisions == rs.collisions &&
                         m2.total.wall_collisions == rs.wall_collisions,
                     "%s, %d steps: %ld + %ld collisions, reference %ld + "
                     "%ld",
                     s.what, steps[a], m2.total.collisions,
                     m2.total.wall_collisions, rs.collisions,
                     rs.wall_collisions);
            /* energy: round-off of a few hundred impacts and flights */
            RC_CHECK(fabs(e1 - e0) <= 1e-12 * fabs(e0),
                     "%s: energy changed by %.3g relative", s.what,
                     fabs(e1 - e0) / fabs(e0));
            if (s.periodic && s.gravity == 0.0)
                /* momentum: round-off of the impulses' sums */
                RC_CHECK(dpm <= 1e-12 * s.n, "%s: momentum changed by %.3g",
                         s.what, dpm);
        }
        rc_dmd_free(&g);
        rc_md_free(&m2);
    }
    free(rs.x);
    free(rs.v);
    rc_md_free(&md);
}

/* The hard-sphere fluid's collisions over one interval at three step
 * lengths: exact impact times make the trajectory independent of dt
 * (up to round-off, which the count does not see over a short run). */
static void step_independence(void)
{
    setup s = {"fluid eta 0.3", 3, 500, RC_LATTICE_FCC, 1, 0, 100, 64, 0, 0.3,
               0.0, 0.004, 100, 0, 0, 0, 0, 1};
    long counts[3], retries = 0;
    int a;
    for (a = 0; a < 3; ++a) {
        rc_md md;
        rc_dmd g;
        int st, ok = 1;
        memset(&md, 0, sizeof md);
        memset(&g, 0, sizeof g);
        s.dt = a == 2 ? 0.1 : a ? 0.02 : 0.004;
        s.steps = a == 2 ? 4 : a ? 20 : 100;
        counts[a] = -1;
        if (make(&s, &md, NULL) != 0)
            return;
        if (rc_dmd_init_cpu(&g, &md) != RC_OK) {
            RC_CHECK(0, "fluid: engine: %s", md.msg);
            rc_md_free(&md);
            return;
        }
        for (st = 0; st < s.steps && ok; ++st)
            ok = rc_dmd_step(&g) == RC_OK;
        RC_CHECK(ok, "fluid dt %g: %s", s.dt, md.msg);
        counts[a] = md.total.collisions;
        retries = g.log_retries; /* the last (longest) step's */
        rc_dmd_free(&g);
        rc_md_free(&md);
    }
    printf("fluid eta 0.3, 500 spheres, t = 0.4: %ld collisions at dt 0.004, "
           "%ld at dt 0.02, %ld at dt 0.1 (%ld island rounds run again with "
           "the full impact log)\n",
           counts[0], counts[1], counts[2], retries);
    RC_CHECK(counts[0] > 500 && counts[0] == counts[1] &&
                 counts[0] == counts[2],
             "exact collisions: the collision count depends on dt (%ld at "
             "0.004, %ld at 0.02, %ld at 0.1)",
             counts[0], counts[1], counts[2]);
    /* steps of a mean free time: islands with more impacts than their
     * log's first room, run again in the full room (the count above is
     * then that path's) */
    RC_CHECK(retries > 0,
             "dt 0.1: no island outgrew its impact log's first room");
}

/* 4.  The fluid of step_independence at dt 0.1 (4 steps of a mean free
 * time, islands run again in the full room) checkpointed, and the
 * checkpoint restored into a fresh engine: the counters summary.json
 * reports are the run's.  The rounds run again were not carried before
 * 2026-11-28 (a run stopped after one reported 0 after --restart). */
static void checkpoint_counters(void)
{
    setup s = {"fluid eta 0.3", 3, 500, RC_LATTICE_FCC, 1, 0, 100, 64, 0, 0.3,
               0.0, 0.1, 4, 0, 0, 0, 0, 1};
    char dir[] = "/tmp/rc_test_md_exact_XXXXXX", path[64];
    rc_md md, m2;
    rc_dmd g, g2;
    rc_ckpt_writer w;
    rc_ckpt c;
    rc_error err;
    int st, ok = 1;
    memset(&md, 0, sizeof md);
    memset(&m2, 0, sizeof m2);
    memset(&g, 0, sizeof g);
    memset(&g2, 0, sizeof g2);
    memset(&err, 0, sizeof err);
    if (!mkdtemp(dir)) {
        RC_CHECK(0, "checkpoint: mkdtemp failed");
        return;
    }
    snprintf(path, sizeof path, "%s/%s", dir, RC_CKPT_NAME);
    if (make(&s, &md, NULL) != 0 || make(&s, &m2, NULL) != 0)
        goto out;
    if (rc_dmd_init_cpu(&g, &md) != RC_OK ||
        rc_dmd_init_cpu(&g2, &m2) != RC_OK) {
        RC_CHECK(0, "checkpoint: engine: %s %s", md.msg, m2.msg);
        goto out;
    }
    for (st = 0; st < s.steps && ok; ++st)
        ok = rc_dmd_step(&g) == RC_OK;
    RC_CHECK(ok, "checkpoint: step: %s", md.msg);
    RC_CHECK(g.log_retries > 0,
             "checkpoint: no island round was run again (nothing to carry)");
    if (!ok)
        goto out;
    if (rc_ckpt_begin(&w, dir, RC_CKPT_LARGE, &err) != RC_OK) {
        RC_CHECK(0, "checkpoint: %s", err.message);
        goto out;
    }
    if (rc_dmd_checkpoint(&g, &w) != RC_OK) {
        rc_ckpt_abandon(&w);
        RC_CHECK(0, "checkpoint: writing: %s", md.msg);
        goto out;
    }
    if (rc_ckpt_finish(&w, &err) != RC_OK ||
        rc_ckpt_load(path, &c, &err) != RC_OK) {
        RC_CHECK(0, "checkpoint: %s", err.message);
        goto out;
    }
    RC_CHECK(rc_dmd_restore(&g2, &c, &err) == RC_OK, "checkpoint: restore: %s",
             err.message);
    rc_ckpt_free(&c);
    RC_CHECK(g2.log_retries == g.log_retries,
             "checkpoint: rounds run again %ld after the restore, %ld in the "
             "run",
             g2.log_retries, g.log_retries);
    RC_CHECK(g2.rebuilds == g.rebuilds && g2.host_rounds == g.host_rounds &&
                 g2.host_islands == g.host_islands,
             "checkpoint: builds %ld / %ld, host rounds %ld / %ld, host "
             "islands %ld / %ld after the restore / in the run",
             g2.rebuilds, g.rebuilds, g2.host_rounds, g.host_rounds,
             g2.host_islands, g.host_islands);
out:
    rc_dmd_free(&g);
    rc_dmd_free(&g2);
    rc_md_free(&md);
    rc_md_free(&m2);
    remove(path);
    rmdir(dir);
}

/* The impact logs' first room by island (rc_k_mdx_isl_size): 2 entries
 * for a lone pair (its one impact: the relative motion is ballistic), 2
 * (m + 2) for anything else (a lone wall contact under gravity bounces),
 * the full room for an island that failed its first run.  Sized by use:
 * at eta = 0.45 most islands are lone pairs, whose 6 entries of 64 bytes
 * each were 4 MB of 256 000 spheres' peak. */
static void log_first_room(void)
{
    rc_k_md v;
    rc_k_md_contact con[4];
    int order[4] = {0, 1, 2, 3}, fail[3] = {0, 0, 0}, s;
    long istart[4] = {0, 1, 2, 4}, eoff[4], woff[4];
    const long want[3] = {2, 6, 8};
    memset(&v, 0, sizeof v);
    memset(con, 0, sizeof con);
    con[0].i = 0, con[0].j = 1;  /* a lone pair */
    con[1].i = 2, con[1].j = -1; /* a lone wall contact */
    con[2].i = 3, con[2].j = 4;  /* a chain of two pairs */
    con[3].i = 4, con[3].j = 5;
    v.con = con;
    v.order = order;
    v.istart = istart;
    v.eoff = eoff;
    v.woff = woff;
    v.isl_fail = fail;
    v.dense_max = 64;
    for (s = 0; s < 3; ++s) {
        rc_k_mdx_isl_size(&v, s);
        RC_CHECK(eoff[s] == want[s], "island %d: first log room %ld, want %ld",
                 s, eoff[s], want[s]);
    }
    v.log_full = 1;
    fail[0] = 1;
    rc_k_mdx_isl_size(&v, 0);
    RC_CHECK(eoff[0] == rc_k_mdx_log_room(1),
             "a failed lone pair: room %ld, want the full %ld", eoff[0],
             rc_k_mdx_log_room(1));
}

int main(void)
{
    /* what, dim, n, lattice, periodic, moreau, max_passes, dense_max,
     * mixed, eta, gravity, dt, steps, lapack_max, reload, order, pair,
     * exact */
    setup gas3 = {"periodic gas 3-D, mixed", 3, 500, RC_LATTICE_FCC, 1, 0,
                  100, 64, 1, 0.25, 0.0, 0.0, 1, 0, 0, 0, 0, 1};
    setup gas2 = {"periodic gas 2-D", 2, 400, RC_LATTICE_RANDOM, 1, 0, 100,
                  64, 0, 0.35, 0.0, 0.0, 1, 0, 0, 0, 0, 1};
    setup grav2 = {"walled 2-D, gravity", 2, 100, RC_LATTICE_RANDOM, 0, 0,
                   100, 64, 1, 0.2, 1.5, 0.0, 1, 0, 0, 0, 0, 1};
    setup box3 = {"walled 3-D, mixed", 3, 64, RC_LATTICE_RANDOM, 0, 0, 100, 64,
                  1, 0.2, 0.0, 0.0, 1, 0, 0, 0, 0, 1};
    const int steps[] = {1, 4, 25, 200};
    /* (one step of 0.25 would need a box of more than 8 diameters for
     * the candidates' reach) */
    against_reference(gas3, 0.25, steps + 1, 3);
    against_reference(gas2, 0.3, steps, 4);
    against_reference(grav2, 1.0, steps, 4);
    against_reference(box3, 0.4, steps, 4);
    step_independence();
    checkpoint_counters();
    log_first_room();
    return rc_test_finish("test_md_exact");
}

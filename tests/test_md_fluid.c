/* Large systems (DESIGN §6): the hard-sphere fluid against theory, and
 * the engine's invariants.
 *
 *  1. Two spheres, head on, in a periodic box: the velocities swap
 *     exactly (the elastic collision of equal masses), one collision, the
 *     collision virial equals the impulse times the distance.
 *  2. Hard-sphere fluid, N = 4000, eta = 0.2 and 0.35, three step sizes:
 *     Z from the collision virial, extrapolated linearly in dt to dt = 0,
 *     within 1 % of Carnahan–Starling; the collision rate per particle,
 *     extrapolated the same way, within 2 % of the Enskog value
 *     6 (Z_CS - 1) / sqrt(pi) (sigma = m = kT = 1).  GVI reflects at the
 *     start of the step in which a pair would touch, so both carry an
 *     O(dt) bias: the extrapolation removes it.
 *  3. Conservation in those runs: kinetic energy to 1e-12 relative over
 *     the run, total momentum below 1e-10.
 *  4. Determinism: 1 and 2 threads give byte-identical observables.csv;
 *     islands reflected in reverse order give the same bits.
 *  5. Walls: polydisperse disks (radii uniform in [0.4, 0.6]) in a box
 *     walled on one axis hit the walls, never overlap, keep their kinetic
 *     energy.
 *  6. The sparse island tier (projected Gauss–Seidel) and the LAPACK
 *     Cholesky tier against the dense kernel on the same dense start: the
 *     same kinetic energy, and momenta within round-off (amplified by 40
 *     steps of collisions).
 *  7. examples/granular_column.yaml (gravity, a floor, held contacts, an
 *     island of the whole column): no overlap beyond 1e-3 of a radius,
 *     horizontal momentum conserved to round-off, the sparse tier ran, the
 *     energy never rises, and after the first steps of the exactly
 *     touching start the windowed energy means are flat.
 *  8. read: a frame of a run's extended XYZ output starts another run;
 *     a broken file is refused with its file and line. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/dengine.h"
#include "host/md/engine.h"
#include "host/md/run_md.h"
#include "host/md/setup.h"
#include "rc_cli_test.h"
#include "ricochet/run.h"
#include "ricochet/scenario.h"

static int g_files = 0;

static rc_scenario *load_text(const char *what, const char *text)
{
    char path[512], buf[3000];
    rc_scenario *scn = NULL;
    rc_error err;
    snprintf(path, sizeof path, "%s/s%03d.yaml", g_dir, g_files++);
    write_text(path, text);
    if (rc_scenario_load(path, NULL, 0, &scn, &err) != RC_OK) {
        RC_CHECK(0, "%s: cannot load: %s", what,
                 rc_error_format(&err, buf, sizeof buf));
        return NULL;
    }
    return scn;
}

static int run_md(const char *what, const char *text, int threads,
                  const char *name, rc_md_run_info *info)
{
    rc_scenario *scn = load_text(what, text);
    rc_run_options ro;
    rc_run_result rr;
    rc_error err;
    char dir[1100], buf[3000];
    rc_status st;
    if (!scn)
        return -1;
    snprintf(dir, sizeof dir, "%s/%s", g_dir, name);
    memset(&ro, 0, sizeof ro);
    ro.out_dir = dir;
    ro.backend = RC_BACKEND_CPU;
    ro.threads = threads;
    st = rc_md_run_(scn, &ro, info, &rr, &err);
    RC_CHECK(st == RC_OK && !strcmp(rr.status, "ok"), "%s: %s", what,
             rc_error_format(&err, buf, sizeof buf));
    rc_scenario_free(scn);
    return st == RC_OK ? 0 : -1;
}

/* ------------------------------------------------------------------ */

static void head_on(void)
{
    rc_md md;
    rc_dmd g;
    rc_md_params par;
    rc_k_box box;
    double q[6] = {2.0, 5.0, 5.0, 3.5, 5.0, 5.0};
    double p[6] = {1.0, 0.0, 0.0, -0.5, 0.0, 0.0};
    double m[2] = {1.0, 1.0}, r[2] = {0.5, 0.5};
    int s, ok = 1;
    memset(&box, 0, sizeof box);
    box.dim = 3;
    box.L[0] = box.L[1] = box.L[2] = 10.0;
    box.periodic[0] = box.periodic[1] = box.periodic[2] = 1;
    memset(&par, 0, sizeof par);
    par.dt = 0.01;
    par.max_passes = 100;
    par.dense_max = 64;
    par.pgs_tol = 1e-12;
    par.pgs_max_iter = 1000;
    if (rc_md_init(&md, &box, 2, q, p, m, r, &par) != RC_OK ||
        rc_dmd_init_cpu(&g, &md) != RC_OK) {
        RC_CHECK(0, "head on: init: %s", md.msg);
        rc_md_free(&md);
        return;
    }
    /* the gap 0.5 closes at relative speed 1.5 in 1/3 time unit */
    for (s = 0; s < 100 && ok; ++s)
        ok = rc_dmd_step(&g) == RC_OK;
    ok = ok && rc_dmd_sync(&g) == RC_OK;
    RC_CHECK(ok, "head on: step failed: %s", md.msg);
    /* exact swap: the reflection of equal masses along the line of
     * centres exchanges the normal momenta (to round-off, 1e-15) */
    RC_CHECK(fabs(md.p[0] + 0.5) <= 1e-15 && fabs(md.p[3] - 1.0) <= 1e-15 &&
                 md.p[1] == 0.0 && md.p[4] == 0.0,
             "head on: momenta %.17g %.17g after the collision, want -0.5, 1",
             md.p[0], md.p[3]);
    RC_CHECK(md.total.collisions == 1,
             "head on: %ld collisions, want 1 (then they fly apart)",
             md.total.collisions);
    /* virial = impulse (1.5) times the centre distance at the reflection
     * (between 1 and 1 + relative speed * dt) */
    RC_CHECK(md.total.virial >= 1.5 * 1.0 &&
                 md.total.virial <= 1.5 * (1.0 + 1.5 * 0.01),
             "head on: virial %.17g, want 1.5 x distance in [1, 1.015]",
             md.total.virial);
    rc_dmd_free(&g);
    rc_md_free(&md);
}

/* ------------------------------------------------------------------ */

static const char fluid_fmt[] =
    "name: hs_test\n"
    "dimension: 3\n"
    "box: {periodic: true}\n"
    "lattice: {kind: fcc, n: 4000, packing_fraction: %g, temperature: 1, "
    "seed: 5}\n"
    "integrator: {method: gvi, collisions: gvi, dt: %g, duration: %g}\n"
    "output: {every: 10, equilibrate: 0.5}\n";

/* The same fluid with exact collision times, one step length */
static const char exact_fmt[] =
    "name: hs_exact\n"
    "dimension: 3\n"
    "box: {periodic: true}\n"
    "lattice: {kind: fcc, n: 4000, packing_fraction: %g, temperature: 1, "
    "seed: 5}\n"
    "integrator: {method: gvi, collisions: exact, dt: %g, duration: %g}\n"
    "output: {every: %d, equilibrate: 1}\n";

/* Linear fit y = a + b x; returns a and its standard error from the
 * points' own standard errors (weighted least squares). */
static double fit_intercept(const double *x, const double *y,
                            const double *se, int n, double *a_err)
{
    double S = 0, Sx = 0, Sy = 0, Sxx = 0, Sxy = 0, den;
    int k;
    for (k = 0; k < n; ++k) {
        double w = 1.0 / (se[k] * se[k]);
        S += w;
        Sx += w * x[k];
        Sy += w * y[k];
        Sxx += w * x[k] * x[k];
        Sxy += w * x[k] * y[k];
    }
    den = S * Sxx - Sx * Sx;
    *a_err = sqrt(Sxx / den);
    return (Sxx * Sy - Sx * Sxy) / den;
}

static void fluid(double eta, double duration)
{
    static const double dts[3] = {0.001, 0.002, 0.003};
    double z[3], ze[3], g[3], ge[3], z0, z0e, g0, g0e, zcs, gcs;
    int k;
    for (k = 0; k < 3; ++k) {
        char text[600], name[64];
        rc_md_run_info info;
        snprintf(text, sizeof text, fluid_fmt, eta, dts[k], duration);
        snprintf(name, sizeof name, "fluid_%g_%g", eta, dts[k]);
        if (run_md("fluid", text, 0, name, &info))
            return;
        z[k] = info.z_mean;
        ze[k] = info.z_err;
        g[k] = info.gamma_mean;
        ge[k] = info.gamma_err;
        zcs = info.z_reference;
        printf("test_md_fluid: eta %.2f dt %.3f: Z = %.4f +- %.4f, Gamma = "
               "%.4f +- %.4f, %ld collisions, max KE error %.2e, max |dP| "
               "%.2e, %.3g particle-steps/s\n",
               eta, dts[k], z[k], ze[k], g[k], ge[k], info.collisions,
               info.energy_error, info.momentum_error,
               info.particle_steps_per_second);
        /* each reflection keeps the kinetic energy to the NNLS residual
         * (~1e-16 relative); 1e5 collisions of random-sign round-off stay
         * near 1e-14, so 1e-12 has room and still catches a lost
         * impulse (1e-4 and up) */
        RC_CHECK(info.energy_error <= 1e-12,
                 "eta %g dt %g: kinetic energy changed by %.3e relative",
                 eta, dts[k], info.energy_error);
        /* pair impulses cancel exactly up to round-off of |p| ~ 1 sums
         * over 4000 particles: ~1e-13 */
        RC_CHECK(info.momentum_error <= 1e-10,
                 "eta %g dt %g: total momentum changed by %.3e", eta, dts[k],
                 info.momentum_error);
        RC_CHECK(info.collisions > 10000 && ze[k] > 0.0,
                 "eta %g dt %g: %ld collisions, Z error %g: the run must "
                 "collide and average", eta, dts[k], info.collisions, ze[k]);
    }
    zcs = (1.0 + eta + eta * eta - eta * eta * eta) / pow(1.0 - eta, 3);
    gcs = 6.0 * (zcs - 1.0) / sqrt(3.14159265358979323846);
    z0 = fit_intercept(dts, z, ze, 3, &z0e);
    g0 = fit_intercept(dts, g, ge, 3, &g0e);
    printf("test_md_fluid: eta %.2f: Z(dt -> 0) = %.4f +- %.4f vs "
           "Carnahan-Starling %.4f (%+.2f %%); Gamma(dt -> 0) = %.4f +- "
           "%.4f vs Enskog %.4f (%+.2f %%)\n",
           eta, z0, z0e, zcs, 100.0 * (z0 / zcs - 1.0), g0, g0e, gcs,
           100.0 * (g0 / gcs - 1.0));
    /* the acceptance: 1 % for Z, 2 % for Gamma; the fits' own
     * standard errors are about 0.3 % and 0.2 % */
    RC_CHECK(fabs(z0 / zcs - 1.0) <= 0.01,
             "eta %g: extrapolated Z %.4f differs from Carnahan-Starling "
             "%.4f by more than 1 %%", eta, z0, zcs);
    RC_CHECK(fabs(g0 / gcs - 1.0) <= 0.02,
             "eta %g: extrapolated collision rate %.4f differs from "
             "6 (Z_CS - 1)/sqrt(pi) = %.4f by more than 2 %%", eta, g0, gcs);
    /* and the bias is real: the largest step overestimates Z */
    RC_CHECK(z[2] > z[0], "eta %g: Z should grow with dt (O(dt) bias of "
             "reflecting at the step start): %g at 0.003, %g at 0.001", eta,
             z[2], z[0]);
}

/* Exact collision times (integrator.collisions: exact): Z and the
 * collision rate carry no dt bias, so one run at a step of a tenth of the
 * mean free time, with no extrapolation, must give the equation of state:
 * Kolafa's form of Carnahan-Starling, Z = (1 + e + e^2 - 2/3 e^3 (1 + e))
 * / (1 - e)^3 (0.13 % above CS at eta 0.2, 0.30 % at 0.35, where CS is
 * known to be low), within 0.3 %; the collision rate within 0.5 % of
 * Enskog's 6 (Z - 1) / sqrt(pi) with that Z (its relative error is that
 * of Z - 1, a third larger than that of Z at eta 0.35). */
static void exact_fluid(double eta, double duration)
{
    char text[600], name[64];
    rc_md_run_info info;
    double e = eta, zk, zcs, gk, mft, dt;
    int every;
    zk = (1.0 + e + e * e - 2.0 / 3.0 * e * e * e * (1.0 + e)) /
         pow(1.0 - e, 3);
    zcs = (1.0 + e + e * e - e * e * e) / pow(1.0 - e, 3);
    gk = 6.0 * (zk - 1.0) / sqrt(3.14159265358979323846);
    mft = 1.0 / gk;
    dt = 0.1 * mft;
    every = (int)ceil(0.2 / dt); /* rows about every 0.2 */
    snprintf(text, sizeof text, exact_fmt, eta, dt, duration, every);
    snprintf(name, sizeof name, "exact_%g", eta);
    if (run_md("exact fluid", text, 0, name, &info))
        return;
    printf("test_md_fluid: exact collisions, eta %.2f, dt %.4f (mean free "
           "time / 10), one run: Z = %.4f +- %.4f vs Kolafa %.4f (%+.2f %%; "
           "Carnahan-Starling %.4f), Gamma = %.4f +- %.4f vs Enskog %.4f "
           "(%+.2f %%), %ld collisions, max KE error %.2e, %.3g "
           "particle-steps/s\n",
           eta, dt, info.z_mean, info.z_err, zk,
           100.0 * (info.z_mean / zk - 1.0), zcs, info.gamma_mean,
           info.gamma_err, gk, 100.0 * (info.gamma_mean / gk - 1.0),
           info.collisions, info.energy_error,
           info.particle_steps_per_second);
    /* the test means something only if its own error is well below the
     * tolerance */
    RC_CHECK(info.z_err <= 0.001 * zk,
             "eta %g: Z's standard error %.4f is not below 0.1 %%: run "
             "longer", eta, info.z_err);
    RC_CHECK(fabs(info.z_mean / zk - 1.0) <= 0.003,
             "eta %g: exact collisions: Z %.4f differs from Kolafa %.4f by "
             "more than 0.3 %%", eta, info.z_mean, zk);
    RC_CHECK(fabs(info.gamma_mean / gk - 1.0) <= 0.005,
             "eta %g: exact collisions: collision rate %.4f differs from "
             "Enskog %.4f by more than 0.5 %%", eta, info.gamma_mean, gk);
    /* as for GVI above: round-off of the impacts */
    RC_CHECK(info.energy_error <= 1e-12,
             "eta %g: exact collisions: kinetic energy changed by %.3e",
             eta, info.energy_error);
    RC_CHECK(info.momentum_error <= 1e-10,
             "eta %g: exact collisions: momentum changed by %.3e", eta,
             info.momentum_error);
}

/* ------------------------------------------------------------------ */

static void determinism(void)
{
    static const char text[] =
        "name: hs_det\n"
        "dimension: 3\n"
        "box: {periodic: true}\n"
        "lattice: {kind: fcc, n: 2048, packing_fraction: 0.4, temperature: "
        "1, seed: 9}\n"
        "integrator: {method: gvi, dt: 0.002, duration: 0.6}\n"
        "output: {every: 5, equilibrate: 0.1}\n";
    rc_md_run_info a, b, c;
    char fa[1200], fb[1200], fc[1200];
    if (run_md("det 1", text, 1, "det1", &a) ||
        run_md("det 2", text, 2, "det2", &b) ||
        run_md("det 2 again", text, 2, "det2b", &c))
        return;
    snprintf(fa, sizeof fa, "%s/det1/observables.csv", g_dir);
    snprintf(fb, sizeof fb, "%s/det2/observables.csv", g_dir);
    snprintf(fc, sizeof fc, "%s/det2b/observables.csv", g_dir);
    RC_CHECK(same_file(fa, fb), "observables.csv differs between 1 and 2 "
             "threads (%s, %s)", fa, fb);
    RC_CHECK(same_file(fb, fc), "observables.csv differs between two runs "
             "on 2 threads");
    RC_CHECK(a.collisions > 1000 && a.z_mean == b.z_mean,
             "det: %ld collisions, Z %.17g vs %.17g", a.collisions, a.z_mean,
             b.z_mean);
}

/* Islands in reverse order, and the sparse tier against the dense one,
 * through the engine directly on a dense random start. */
static int make_dense(rc_md *md, rc_dmd *g, int reverse, int dense_max,
                      int lapack_max, int n, double eta)
{
    rc_k_box box;
    rc_md_params par;
    double *q = (double *)malloc(sizeof(double) * 3 * (size_t)n);
    double *p = (double *)malloc(sizeof(double) * 3 * (size_t)n);
    double *m = (double *)malloc(sizeof(double) * (size_t)n);
    double *r = (double *)malloc(sizeof(double) * (size_t)n);
    int per[3] = {1, 1, 1}, i, st = -1;
    char msg[300];
    for (i = 0; i < n; ++i) {
        m[i] = 1.0 + 0.5 * (i % 3); /* unequal masses: a real Gram matrix */
        r[i] = 0.5;
    }
    if (q && p && m && r && rc_md_box_for_packing(3, n, r, eta, per, &box) == 0 &&
        rc_md_place(RC_LATTICE_FCC, &box, n, r, 3, q, msg, sizeof msg) == 0) {
        rc_md_maxwell(3, n, m, 1.0, 4, p);
        memset(&par, 0, sizeof par);
        par.dt = 0.004;
        par.max_passes = 1000;
        par.dense_max = dense_max;
        par.lapack_max = lapack_max;
        par.pgs_tol = 1e-13;
        par.pgs_max_iter = 200000;
        par.reverse_islands = reverse;
        par.threads = 2;
        st = rc_md_init(md, &box, n, q, p, m, r, &par) == RC_OK &&
                     rc_dmd_init_cpu(g, md) == RC_OK
                 ? 0
                 : -1;
    }
    free(q);
    free(p);
    free(m);
    free(r);
    return st;
}

/* Steps of every engine in ga[0 .. count), then their states into
 * their md; 0 when all went well. */
static int step_all(rc_dmd *const *ga, int count, int steps)
{
    int s, k;
    for (s = 0; s < steps; ++s)
        for (k = 0; k < count; ++k)
            if (rc_dmd_step(ga[k]) != RC_OK)
                return -1;
    for (k = 0; k < count; ++k)
        if (rc_dmd_sync(ga[k]) != RC_OK)
            return -1;
    return 0;
}

static void island_order_and_tiers(void)
{
    /* a, b: dense tier, islands forward and reversed; c: every island in
     * the sparse host tier; e: every island in the batched LAPACK tier */
    rc_md m[4];
    rc_dmd g[4];
    rc_md *a = &m[0], *b = &m[1], *c = &m[2], *e = &m[3];
    int ok, n = 864, i;
    long worst_island = 0;
    double dp = 0.0, dpl = 0.0, pmax = 0.0, kin[3], pot, mom[3];
    memset(m, 0, sizeof m);
    memset(g, 0, sizeof g);
    if (make_dense(a, &g[0], 0, 64, 0, n, 0.5) ||
        make_dense(b, &g[1], 1, 64, 0, n, 0.5)) {
        RC_CHECK(0, "tiers: set-up failed");
        goto done;
    }
    {
        rc_dmd *const run[2] = {&g[0], &g[1]};
        ok = step_all(run, 2, 50) == 0;
    }
    RC_CHECK(ok, "order: step failed: %s %s", a->msg, b->msg);
    RC_CHECK(memcmp(a->p, b->p, sizeof(double) * 3 * (size_t)n) == 0 &&
                 memcmp(a->q, b->q, sizeof(double) * 3 * (size_t)n) == 0,
             "islands in reverse order changed the state");
    RC_CHECK(a->total.collisions > 100 && a->total.largest_island >= 2,
             "order: %ld collisions, largest island %ld; the test needs "
             "islands", a->total.collisions, a->total.largest_island);
    /* the sparse tier and the LAPACK tier from the dense tier's start
     * (fresh engines: the same start), 40 steps each */
    rc_dmd_free(&g[0]);
    rc_md_free(a);
    rc_dmd_free(&g[1]);
    rc_md_free(b);
    if (make_dense(a, &g[0], 0, 64, 0, n, 0.5) ||
        make_dense(c, &g[2], 0, 0, 0, n, 0.5) ||
        make_dense(e, &g[3], 0, 0, 1000000, n, 0.5)) {
        RC_CHECK(0, "tiers: set-up failed");
        goto done;
    }
    /* the fcc start at eta 0.5 has gaps of 0.14: the first collisions
     * come after about 10 steps; 40 steps give a few hundred */
    {
        rc_dmd *const run[3] = {&g[0], &g[2], &g[3]};
        ok = step_all(run, 3, 40) == 0;
    }
    RC_CHECK(ok, "tiers: step failed: %s %s %s", a->msg, c->msg, e->msg);
    for (i = 0; i < 3 * n; ++i) {
        dp = fmax(dp, fabs(a->p[i] - c->p[i]));
        dpl = fmax(dpl, fabs(a->p[i] - e->p[i]));
        pmax = fmax(pmax, fabs(a->p[i]));
    }
    /* the batched LAPACK tier solves the same NNLS by an active-set
     * method with another factorisation: round-off, amplified as above */
    RC_CHECK(e->total.lapack_islands > 0 && dpl <= 1e-9 * pmax,
             "tiers: LAPACK tier ran on %ld islands, momenta differ by "
             "%.3e from the dense kernel's", e->total.lapack_islands, dpl);
    worst_island = c->total.largest_island;
    rc_md_energy(a, &kin[0], &pot, mom);
    rc_md_energy(c, &kin[1], &pot, mom);
    RC_CHECK(c->total.pgs_islands > 0 && c->total.pgs_residual <= 1e-13,
             "tiers: the sparse tier did not run (%ld islands) or missed "
             "its tolerance (%g)", c->total.pgs_islands, c->total.pgs_residual);
    /* both solve the same complementarity problem per island: momenta
     * agree to the PGS tolerance times the momentum scale (1e-13), grown
     * by the islands' conditioning and by 40 steps of chaotic
     * amplification (a few collision times): 1e-9 */
    RC_CHECK(dp <= 1e-9 * pmax,
             "tiers: momenta differ by %.3e (scale %.3g) between the dense "
             "and the sparse tier; largest island %ld", dp, pmax,
             worst_island);
    /* PGS is not an exact solve, but an exact reflection keeps the
     * energy: both to 1e-12 relative */
    RC_CHECK(fabs(kin[1] / kin[0] - 1.0) <= 1e-12,
             "tiers: kinetic energy %.17g (sparse) vs %.17g (dense)", kin[1],
             kin[0]);
done:
    for (i = 0; i < 4; ++i) {
        rc_dmd_free(&g[i]);
        rc_md_free(&m[i]);
    }
}

static void walls(void)
{
    static const char text[] =
        "name: hs_walls\n"
        "dimension: 2\n"
        "box: {periodic: [true, false]}\n"
        "lattice: {kind: random, n: 800, packing_fraction: 0.3, temperature: "
        "1, seed: 2, radius: {distribution: uniform, min: 0.4, max: 0.6}}\n"
        "integrator: {method: gvi, dt: 0.002, duration: 1}\n"
        "output: {every: 10, equilibrate: 0.2}\n";
    rc_md_run_info info;
    char file[1200];
    char *obs;
    if (run_md("walls", text, 2, "walls", &info))
        return;
    /* polydisperse disks between walls: energy as in the fluid runs, and
     * no overlap (the contacts are reflected before they close) */
    RC_CHECK(info.energy_error <= 1e-12 && info.collisions > 100 &&
                 info.max_overlap <= 1e-9,
             "walls: KE error %.3e, %ld collisions, overlap %.3e",
             info.energy_error, info.collisions, info.max_overlap);
    snprintf(file, sizeof file, "%s/walls/observables.csv", g_dir);
    obs = slurp(file);
    RC_CHECK(obs != NULL, "walls: no observables.csv");
    if (obs) {
        /* the last row's wall_collisions column (16th) */
        char *last = strrchr(obs, '\n'), *line, *f[20];
        int nf;
        *last = '\0';
        line = strrchr(obs, '\n') + 1;
        nf = split(line, f, 20);
        RC_CHECK(nf == 19 && atol(f[15]) > 10,
                 "walls: wall collisions %s, want some", nf == 19 ? f[15] : "?");
        free(obs);
    }
}

/* read: an extended XYZ frame written by a run starts another run; bad
 * files are refused with file and line. */
static void read_xyz(void)
{
    static const char src[] =
        "name: src\n"
        "dimension: 3\n"
        "box: {periodic: true}\n"
        "lattice: {kind: fcc, n: 256, packing_fraction: 0.3, seed: 3}\n"
        "integrator: {method: gvi, dt: 0.002, duration: 0.2}\n"
        "output: {every: 10, trajectory: xyz, trajectory_every: 50}\n";
    char text[1400], file[1200], bad[1200], buf[3000];
    rc_md_run_info info;
    rc_scenario *scn = NULL;
    rc_error err;
    if (run_md("read source", src, 1, "xyzsrc", &info))
        return;
    snprintf(file, sizeof file, "%s/xyzsrc/trajectory.xyz", g_dir);
    snprintf(text, sizeof text,
             "name: from_file\n"
             "dimension: 3\n"
             "box: {periodic: true}\n"
             "read: {file: %s, frame: 2, temperature: 1, seed: 4}\n"
             "integrator: {method: gvi, dt: 0.002, duration: 0.2}\n"
             "output: {every: 10}\n",
             file);
    if (run_md("read", text, 1, "fromxyz", &info) == 0)
        RC_CHECK(info.energy_error <= 1e-12 && info.max_overlap <= 1e-9,
                 "read: KE error %.3e, overlap %.3e", info.energy_error,
                 info.max_overlap);
    /* a frame that does not exist, and a broken particle line */
    snprintf(bad, sizeof bad, "%s/bad.xyz", g_dir);
    write_text(bad, "2\nLattice=\"9 0 0 0 9 0 0 0 9\" "
                    "Properties=species:S:1:pos:R:3\nS 1 1 1\nS 2 x 2\n");
    snprintf(text, sizeof text,
             "name: bad\ndimension: 3\nbox: {periodic: true}\n"
             "read: %s\nintegrator: {method: gvi, dt: 0.01, duration: 1}\n",
             bad);
    snprintf(file, sizeof file, "%s/bad.yaml", g_dir);
    write_text(file, text);
    RC_CHECK(rc_scenario_load(file, NULL, 0, &scn, &err) != RC_OK &&
                 strstr(err.message, "bad.xyz:4") &&
                 strstr(err.message, "expected a number") &&
                 !strcmp(err.field, "read.file"),
             "read: a broken line should be refused at bad.xyz:4, got: %s",
             rc_error_format(&err, buf, sizeof buf));
    rc_scenario_free(scn);
}

static void granular(void)
{
    char path[1400], file[1100];
    rc_scenario *scn = NULL;
    rc_run_options ro;
    rc_run_result rr;
    rc_md_run_info info;
    rc_error err;
    char buf[3000], *obs, *line, *save = NULL;
    double e0 = NAN, emax = -INFINITY, elast = NAN, px0 = NAN, py0 = NAN,
           dpx = 0.0, e_after[400], wmean[10], wdrift = 0.0;
    long rows = 0, nafter = 0, w, a, i;
    snprintf(path, sizeof path, "%s/granular_column.yaml", RC_EXAMPLES_DIR);
    if (rc_scenario_load(path, NULL, 0, &scn, &err) != RC_OK) {
        RC_CHECK(0, "granular: %s", rc_error_format(&err, buf, sizeof buf));
        return;
    }
    snprintf(file, sizeof file, "%s/granular", g_dir);
    memset(&ro, 0, sizeof ro);
    ro.out_dir = file;
    ro.backend = RC_BACKEND_CPU;
    RC_CHECK(rc_md_run_(scn, &ro, &info, &rr, &err) == RC_OK,
             "granular: %s", rc_error_format(&err, buf, sizeof buf));
    rc_scenario_free(scn);
    /* 1e-3 of a radius (0.5): the bound; measured ~1e-10 */
    RC_CHECK(info.max_overlap <= 0.5e-3,
             "granular: overlap %.3e beyond 1e-3 of a radius",
             info.max_overlap);
    RC_CHECK(info.pgs_islands > 0 && info.largest_island >= 600 &&
                 info.pgs_residual <= 1e-10,
             "granular: sparse tier ran on %ld islands (largest %ld "
             "contacts), residual %.3e; want the whole-column island",
             info.pgs_islands, info.largest_island, info.pgs_residual);
    snprintf(path, sizeof path, "%s/observables.csv", file);
    obs = slurp(path);
    RC_CHECK(obs != NULL, "granular: no observables.csv");
    if (!obs)
        return;
    line = strtok_r(obs, "\n", &save); /* header */
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        char *f[24];
        if (split(line, f, 24) < 9)
            continue;
        if (rows == 0) {
            e0 = atof(f[5]);
            px0 = atof(f[6]);
            py0 = atof(f[7]);
        }
        elast = atof(f[5]);
        emax = fmax(emax, elast);
        /* after the first steps of the exactly touching start (below) */
        if (atof(f[1]) >= 0.1 && nafter < 400)
            e_after[nafter++] = elast;
        dpx = fmax(dpx, fmax(fabs(atof(f[6]) - px0), fabs(atof(f[7]) - py0)));
        ++rows;
    }
    free(obs);
    /* pair impulses cancel and gravity and the floor act along z only:
     * x and y momenta change by round-off of ~200 terms of size ~1 */
    RC_CHECK(rows > 100 && dpx <= 1e-10,
             "granular: horizontal momentum changed by %.3e over %ld rows",
             dpx, rows);
    /* reflections keep the energy; the held contacts' velocity projection
     * removes normal speeds: the energy may fall, never rise (1e-9: the
     * round-off of the potential energy sum) */
    RC_CHECK(emax <= e0 + 1e-9 * fabs(e0),
             "granular: energy rose from %.17g to %.17g", e0, emax);
    /* windowed drift after t = 0.1: ten equal windows of rows, the
     * largest |mean - first window's mean| relative to E0.  The spheres
     * start exactly touching (648 simultaneous contacts): in its first
     * steps the reflection passes cannot separate them all and the
     * position update holds the rest, an inelastic start (about 1.4 % of
     * E0); from then on every contact is resolved by reflections, which
     * keep the energy to the solvers' tolerances (1e-10 relative per
     * island solve, ~1e4 solves): 1e-6 is far above that and far below a
     * percent-level drift */
    w = nafter / 10;
    for (a = 0; w > 0 && a < 10; ++a) {
        wmean[a] = 0.0;
        for (i = a * w; i < (a + 1) * w; ++i)
            wmean[a] += e_after[i] / (double)w;
        wdrift = fmax(wdrift, fabs(wmean[a] - wmean[0]) / fabs(e0));
    }
    RC_CHECK(w > 5 && wdrift <= 1e-6,
             "granular: windowed energy drift %.3e after t = 0.1 (%ld rows)",
             wdrift, nafter);
    printf("test_md_granular: %ld rows, energy %.6g -> %.6g (%.2f %%, all "
           "in the first steps of the touching start), windowed drift after "
           "t = 0.1: %.2e, max overlap %.2e, horizontal momentum change "
           "%.2e, largest island %ld contacts\n",
           rows, e0, elast, 100.0 * (elast / e0 - 1.0), wdrift,
           info.max_overlap, dpx, info.largest_island);
}

int main(void)
{
    if (cli_test_start("test_md_fluid"))
        return 1;
    head_on();
    walls();
    determinism();
    island_order_and_tiers();
    granular();
    read_xyz();
    fluid(0.2, 4.0);
    fluid(0.35, 4.0);
    exact_fluid(0.2, 60.0);
    exact_fluid(0.35, 50.0);
    return cli_test_finish("test_md_fluid");
}

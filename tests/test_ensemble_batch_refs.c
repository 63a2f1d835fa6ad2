/* The ensemble's reference runs through the batch engine (src/host/batch.c,
 * rc_batch_refs_ and rc_batch_member_l2; README "Reference"): each
 * member's L2 error against the same member at a finer step.
 *
 *  1. engines agree: members.csv (with its l2_error column) and groups.csv
 *     of the batch engine are byte-identical to the per-member engine's
 *     (every member its own rc_system, every reference through
 *     rc_member_integrate) on 1 and 2 threads and two batch sizes, for a
 *     pogo stick (an inequality) and the cart-pendulum (a line and a rod
 *     as equalities, the ground), both with references shared by slots
 *     (a grid over the step) and with each member its own reference;
 *     ensemble.json says the batch engine ran the members and the
 *     references.  The L2 errors must be real numbers (finite, > 0, and
 *     smaller at the smaller step), so that the comparison is not one of
 *     empty columns;
 *  2. the same with members of CVA against a GVI reference, GVI members
 *     against an MCVA reference, and the cart-pendulum sweep's method
 *     rule (gvi, cva, mcva: each member its own method, its reference by
 *     GVI): the reference runs by its own method whatever the member's;
 *  3. a reference method without a member body (midpoint) keeps the
 *     ensemble per member, saying why (its l2_error is NaN there: the
 *     unconstrained midpoint reference fails at the wall). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rc_cli_test.h"
#include "rc_ens_test.h"
#include "rc_model_text.h"
#include "ricochet/ensemble.h"
#include "ricochet/scenario.h"


/* Pogo stick (seed 000 §6.1.1), 3 s of GVI steps with contacts. */
#define POGO_HEAD                                                           \
    "name: pogo_refs\n" RC_POGO_MODEL                                        \
    "integrator: {method: gvi, base: verlet, dt: 0.04, duration: 3}\n"

/* slots: 2 masses x 6 heights x 2 steps, the reference shared by each
 * (mass, height)'s two members (each slot's reference with its own
 * masses); output every 2 steps (the stride into the slot's record is
 * then every * dt / ref_dt) */
static const char pogo_shared[] =
    POGO_HEAD
    "output: {every: 2}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  vary:\n"
    "    - {path: \"particles[0].mass\", values: [1, 1.5]}\n"
    "    - {path: \"particles[1].position[0]\", linspace: [0.5, 1.5], "
    "count: 6}\n"
    "    - {path: integrator.dt, values: [0.04, 0.02]}\n"
    "  reference: {dt: 0.005}\n";

/* every member its own initial condition (and mass): its own
 * reference */
static const char pogo_own[] =
    POGO_HEAD
    "output: {every: 3}\n"
    "ensemble:\n"
    "  members: 20\n"
    "  seed: 3\n"
    "  vary:\n"
    "    - {path: \"particles[1].position[0]\", normal: {mean: 1, sigma: "
    "0.3}}\n"
    "    - {path: \"particles[0].momentum[0]\", uniform: [-1, 1]}\n"
    "    - {path: \"particles[1].mass\", uniform: [0.8, 1.2]}\n"
    "  reference: {dt: 0.01, method: gvi}\n";

/* The vertical cart-pendulum of seed 001 §5.1
 * (examples/cart_pendulum_sweep.yaml), members from Xi(beta). */
#define CP_HEAD                                                             \
    "name: cp_refs\n"                                                       \
    "dimension: 2\n"                                                        \
    "particles:\n"                                                          \
    "  - {mass: 1.0, position: [0, 4.2], momentum: [0, 0]}\n"              \
    "  - {mass: 0.2, position: [0, 2.2], momentum: [0, 0]}\n"              \
    "potentials:\n"                                                         \
    "  - {type: gravity, g: 10}\n"                                          \
    "constraints:\n"                                                        \
    "  - {type: line, point: [0, 0], direction: [0, 1], particles: 0}\n"   \
    "  - {type: rod, particles: [0, 1], length: 2}\n"                       \
    "  - {type: wall, normal: [0, 1], offset: 0, particles: 0}\n"          \
    "integrator: {method: gvi, base: verlet, dt: 0.02, duration: 2}\n"

static const char cp_shared[] =
    CP_HEAD
    "output: {every: 1}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  map: {type: cart_pendulum_xi, length: 2, beta: 4.2}\n"
    "  vary:\n"
    "    - {path: map.beta, linspace: [3.2, 5.2], count: 5}\n"
    "    - {path: integrator.dt, values: [0.02, 0.01]}\n"
    "  reference: {dt: 0.001, method: gvi}\n";

static const char cp_own[] =
    CP_HEAD
    "output: {every: 4}\n"
    "ensemble:\n"
    "  members: 7\n"
    "  map: {type: cart_pendulum_xi, length: 2, beta: 4.2}\n"
    "  vary:\n"
    "    - {path: map.beta, linspace: [3.2, 5.2]}\n"
    "  reference: {dt: 0.002}\n";

/* the sweep's three methods, each member its own (the references by
 * GVI whatever the member's method) */
static const char cp_methods[] =
    CP_HEAD
    "output: {every: 1}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  map: {type: cart_pendulum_xi, length: 2, beta: 4.2}\n"
    "  vary:\n"
    "    - {path: map.beta, linspace: [3.2, 5.2], count: 4}\n"
    "    - {path: integrator.method, values: [gvi, cva, mcva]}\n"
    "  reference: {dt: 0.002, method: gvi}\n";




/* The engine object of dir's ensemble.json (free the root). */
static cJSON *engine_of(const char *dir, cJSON **root)
{
    *root = json_file(dir, "ensemble.json");
    return cJSON_GetObjectItemCaseSensitive(*root, "engine");
}

/* The l2_error column of dir's members.csv and, when dt_col is found,
 * the integrator.dt column: into l2[] and dt[] (at most max rows); the
 * rows read, or -1. */
static long read_l2(const char *dir, double *l2, double *dt, long max)
{
    char file[1400], *text, *line, *save = NULL, *fields[64];
    int ncol, c, cl = -1, cd = -1;
    long r = 0;
    snprintf(file, sizeof file, "%s/members.csv", dir);
    if (!(text = slurp(file)))
        return -1;
    line = strtok_r(text, "\n", &save);
    ncol = line ? split(line, fields, 64) : 0;
    for (c = 0; c < ncol; ++c) {
        if (!strcmp(fields[c], "l2_error"))
            cl = c;
        if (!strcmp(fields[c], "integrator.dt"))
            cd = c;
    }
    while (cl >= 0 && r < max && (line = strtok_r(NULL, "\n", &save))) {
        if (split(line, fields, 64) != ncol)
            break;
        l2[r] = strtod(fields[cl], NULL);
        dt[r] = cd >= 0 ? strtod(fields[cd], NULL) : NAN;
        ++r;
    }
    free(text);
    return cl >= 0 ? r : -1;
}

/* The L2 errors are numbers of a real run: finite and > 0 for every
 * member, and with a step rule (the grid's second axis, two values,
 * after `stride` initial conditions: members k and k + stride share the
 * reference), smaller in sum at the smaller step (GVI converges; member
 * by member an impact a step earlier or later can reverse the order of
 * two errors of a chaotic pendulum, so the check is over the axis).  The
 * comparison of the engines is then not one of NaN columns. */
static void l2_real(const char *what, const char *dir, long members,
                    long stride)
{
    double l2[64], dt[64], big = 0.0, small = 0.0;
    long n = read_l2(dir, l2, dt, 64), k, bad = -1;
    RC_CHECK(n == members, "%s: %ld rows with l2_error in %s, want %ld",
             what, n, dir, members);
    for (k = 0; k < n; ++k)
        if (!(isfinite(l2[k]) && l2[k] > 0.0) && bad < 0)
            bad = k;
    RC_CHECK(bad < 0, "%s: member %ld's l2_error %g is not a positive "
             "number", what, bad, bad >= 0 ? l2[bad] : 0.0);
    if (stride <= 0 || n != 2 * stride)
        return;
    for (k = 0; k < stride; ++k) {
        RC_CHECK(dt[k] > dt[k + stride], "%s: member %ld's dt %g, member "
                 "%ld's %g: the grid's order is not the one assumed",
                 what, k, dt[k], k + stride, dt[k + stride]);
        big += l2[k];
        small += l2[k + stride];
    }
    RC_CHECK(small < big, "%s: the L2 errors sum to %g at dt %g and %g at "
             "dt %g: the smaller step should have the smaller error", what,
             small, dt[stride], big, dt[0]);
}

/* ------------------------------------------------------------------ */
/* 1. Engines agree.                                                   */

static void engines_agree(const char *what, const char *text,
                          const char *const *sets, int nsets, long members,
                          long stride)
{
    static const struct {
        int threads;
        long batch;
    } runs[] = {{1, 64}, {2, 3}};
    char ref[1100], dir[1100], name[64];
    rc_ensemble_result rr, res;
    rc_scenario *scn = load_text(what, text, sets, nsets);
    cJSON *root, *eng;
    int r;
    if (!scn)
        return;
    snprintf(name, sizeof name, "%s_member", what);
    if (run_engine(what, scn, name, 2, 0, 1, &rr, ref, sizeof ref)) {
        rc_scenario_free(scn);
        return;
    }
    RC_CHECK(rr.ok == members && !rr.batched,
             "%s per-member: %ld ok of %ld, batched %d", what, rr.ok,
             members, rr.batched);
    eng = engine_of(ref, &root);
    RC_CHECK(!strcmp(str(eng, "name"), "per-member") &&
                 !strcmp(str(eng, "references"), "per-member"),
             "%s per-member: engine %s, references %s; want per-member "
             "both", what, str(eng, "name"), str(eng, "references"));
    cJSON_Delete(root);
    l2_real(what, ref, members, stride);
    for (r = 0; r < (int)(sizeof runs / sizeof runs[0]); ++r) {
        snprintf(name, sizeof name, "%s_b%ld_t%d", what, runs[r].batch,
                 runs[r].threads);
        if (run_engine(what, scn, name, runs[r].threads, runs[r].batch, 0,
                       &res, dir, sizeof dir))
            continue;
        RC_CHECK(res.batched && res.ok == members && res.rerun == 0,
                 "%s batch %ld threads %d: batched %d, %ld ok of %ld, %ld "
                 "re-run alone (want 1, all, 0)", what, runs[r].batch,
                 runs[r].threads, res.batched, res.ok, members, res.rerun);
        RC_CHECK(same_in(ref, dir, "members.csv"),
                 "%s: members.csv of the batch engine (batch %ld, %d "
                 "threads) differs from the per-member engine's (%s, %s)",
                 what, runs[r].batch, runs[r].threads, dir, ref);
        RC_CHECK(exists(ref, "groups.csv") == exists(dir, "groups.csv") &&
                     (!exists(ref, "groups.csv") ||
                      same_in(ref, dir, "groups.csv")),
                 "%s: groups.csv differs between the engines (batch %ld)",
                 what, runs[r].batch);
        eng = engine_of(dir, &root);
        RC_CHECK(!strcmp(str(eng, "name"), "batch") &&
                     !strcmp(str(eng, "step"), "scalar") &&
                     !strcmp(str(eng, "references"), "batch"),
                 "%s: ensemble.json engine %s, step %s, references %s; "
                 "want batch, scalar (members that record), batch", what,
                 str(eng, "name"), str(eng, "step"), str(eng, "references"));
        cJSON_Delete(root);
    }
    rc_scenario_free(scn);
}

/* ------------------------------------------------------------------ */
/* 3. A reference method without a member body.                        */

static void declined(void)
{
    static const char *const sets[] = {
        "ensemble.reference={dt: 0.01, method: midpoint}"};
    char dir[1100];
    rc_ensemble_result res;
    rc_scenario *scn = load_text("midpoint reference", pogo_own, sets, 1);
    cJSON *root, *eng;
    if (!scn)
        return;
    if (run_engine("midpoint reference", scn, "midref", 2, 0, 0, &res, dir,
                   sizeof dir) == 0) {
        eng = engine_of(dir, &root);
        RC_CHECK(!res.batched && res.ok == 20 &&
                     strstr(str(eng, "why"),
                            "reference method midpoint has no member body") &&
                     !strcmp(str(eng, "references"), "per-member"),
                 "midpoint reference: batched %d, %ld ok, why '%s', "
                 "references %s; want per member, the reason named",
                 res.batched, res.ok, str(eng, "why"),
                 str(eng, "references"));
        cJSON_Delete(root);
    }
    rc_scenario_free(scn);
}

int main(void)
{
    if (cli_test_start("test_ensemble_batch_refs"))
        return 1;
    static const char *const cva[] = {"integrator.method=cva"};
    static const char *const mcva_ref[] = {
        "ensemble.reference={dt: 0.01, method: mcva}"};
    engines_agree("pogo_shared", pogo_shared, NULL, 0, 24, 12);
    engines_agree("pogo_own", pogo_own, NULL, 0, 20, 0);
    /* a baseline's members against a GVI reference, and GVI members
     * against a baseline's reference: the reference's method is its own */
    engines_agree("pogo_own_cva", pogo_own, cva, 1, 20, 0);
    engines_agree("pogo_own_mcva_ref", pogo_own, mcva_ref, 1, 20, 0);
    engines_agree("cp_shared", cp_shared, NULL, 0, 10, 5);
    engines_agree("cp_own", cp_own, NULL, 0, 7, 0);
    engines_agree("cp_methods", cp_methods, NULL, 0, 12, 0);
    declined();
    return cli_test_finish("test_ensemble_batch_refs");
}

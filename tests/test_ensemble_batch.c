/* The ensemble batch engine (src/host/batch.c, DESIGN §5): members that
 * differ only in their initial state run in structure-of-arrays batches
 * through the GVI kernel body.
 *
 *  1. engines agree: the batch engine at batch sizes 1, 7, 64 and 1000
 *     (more than the members) on 1 and 2 threads writes members.csv and
 *     traces byte-identical to the per-member engine (every member its
 *     own rc_system) — for a pogo-stick ensemble (inequality only) and a
 *     cart-pendulum ensemble (line and rod equalities, the ground, the
 *     map's initial states);
 *  2. a member equals the same member run alone: its row's statistics
 *     are the bits rc_run() reports for the plain scenario with the
 *     member's values written in (run.c computes them independently of
 *     the ensemble code);
 *  3. failure isolation inside a batch: a member that starts below the
 *     floor is `invalid` with the constraint named, one whose kinetic
 *     energy overflows is `failed`, and every other member of the same
 *     batch is `ok` with the row the per-member engine gives;
 *  4. the plan declines what it cannot run (a varied newton_tol,
 *     linearized constraints) and says why in ensemble.json (the
 *     baselines run in it: test_ensemble_methods). */
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
#include "ricochet/run.h"
#include "ricochet/scenario.h"


/* Pogo stick (seed 000 §6.1.1): 200 drops from perturbed heights with
 * perturbed momenta, 300 GVI steps, two traced members. */
static const char pogo_text[] =
    "name: pogo_batch\n"
    RC_POGO_MODEL
    "integrator: {method: gvi, base: verlet, dt: 0.1, duration: 30}\n"
    "output: {every: 7, trace_members: [3, 150]}\n"
    "ensemble:\n"
    "  members: 200\n"
    "  seed: 11\n"
    "  vary:\n"
    "    - {path: \"particles[1].position[0]\", normal: {mean: 1, sigma: 0.3}}\n"
    "    - {path: \"particles[0].momentum[0]\", uniform: [-1, 1]}\n";

/* The vertical cart-pendulum of seed 001 §5.1 as in
 * examples/cart_pendulum_sweep.yaml (a line and a rod as equalities, the
 * ground as an inequality), members from Xi(beta). */
static const char cp_text[] =
    "name: cp_batch\n"
    "dimension: 2\n"
    "particles:\n"
    "  - {mass: 1.0, position: [0, 4.2], momentum: [0, 0]}\n"
    "  - {mass: 0.2, position: [0, 2.2], momentum: [0, 0]}\n"
    "potentials:\n"
    "  - {type: gravity, g: 10}\n"
    "constraints:\n"
    "  - {type: line, point: [0, 0], direction: [0, 1], particles: 0}\n"
    "  - {type: rod, particles: [0, 1], length: 2}\n"
    "  - {type: wall, normal: [0, 1], offset: 0, particles: 0}\n"
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"
    "output: {every: 5, trace_members: [4]}\n"
    "ensemble:\n"
    "  members: 9\n"
    "  map: {type: cart_pendulum_xi, length: 2, beta: 4.2}\n"
    "  vary:\n"
    "    - {path: map.beta, linspace: [3.2, 5.2]}\n";

static cJSON *load_json(const char *dir, const char *name)
{
    char file[1400];
    char *text;
    cJSON *root;
    snprintf(file, sizeof file, "%s/%s", dir, name);
    text = slurp(file);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
    return root;
}

/* Field `col` of row `row` (0-based, header excluded) of members.csv. */
static int csv_field(const char *dir, long row, const char *col, char *out,
                     size_t size)
{
    char file[1400], *text, *line, *save = NULL, *fields[64];
    int ncol, c, target = -1, found = 0;
    long r = -1;
    snprintf(file, sizeof file, "%s/members.csv", dir);
    text = slurp(file);
    if (!text)
        return -1;
    line = strtok_r(text, "\n", &save);
    ncol = line ? split(line, fields, 64) : 0;
    for (c = 0; c < ncol; ++c)
        if (!strcmp(fields[c], col))
            target = c;
    while (target >= 0 && (line = strtok_r(NULL, "\n", &save)) != NULL)
        if (++r == row) {
            if (split(line, fields, 64) == ncol) {
                snprintf(out, size, "%s", fields[target]);
                found = 1;
            }
            break;
        }
    free(text);
    return found ? 0 : -1;
}

static double csv_num(const char *dir, long row, const char *col)
{
    char buf[64];
    return csv_field(dir, row, col, buf, sizeof buf) == 0 ? strtod(buf, NULL)
                                                          : NAN;
}

/* ------------------------------------------------------------------ */
/* 1. Engines agree.                                                   */

static void engines_agree(const char *what, const char *text, long members,
                          const long *traced, int ntraced)
{
    static const struct {
        int threads;
        long batch;
    } runs[] = {{1, 64}, {2, 7}, {2, 1}, {1, 1000}};
    char ref[1100], dir[1100], name[64];
    rc_ensemble_result rr, res;
    rc_scenario *scn = load_text(what, text, NULL, 0);
    cJSON *root, *eng;
    int r, t;
    if (!scn)
        return;
    snprintf(name, sizeof name, "%s_member", what);
    if (run_engine(what, scn, name, 2, 0, 1, &rr, ref, sizeof ref)) {
        rc_scenario_free(scn);
        return;
    }
    RC_CHECK(rr.ok == members && !rr.batched,
             "%s per-member: %ld ok of %ld, batched %d; want all ok, not "
             "batched", what, rr.ok, members, rr.batched);
    root = load_json(ref, "ensemble.json");
    eng = cJSON_GetObjectItemCaseSensitive(root, "engine");
    RC_CHECK(root && !strcmp(str(eng, "name"), "per-member"),
             "%s: ensemble.json engine of the per-member run is '%s'", what,
             str(eng, "name"));
    cJSON_Delete(root);
    for (r = 0; r < (int)(sizeof runs / sizeof runs[0]); ++r) {
        snprintf(name, sizeof name, "%s_b%ld_t%d", what, runs[r].batch,
                 runs[r].threads);
        if (run_engine(what, scn, name, runs[r].threads, runs[r].batch, 0,
                       &res, dir, sizeof dir))
            continue;
        RC_CHECK(res.batched && res.ok == members,
                 "%s batch %ld threads %d: batched %d, %ld ok of %ld", what,
                 runs[r].batch, runs[r].threads, res.batched, res.ok,
                 members);
        RC_CHECK(same_in(ref, dir, "members.csv"),
                 "%s: members.csv of the batch engine (batch %ld, %d "
                 "threads) differs from the per-member engine's (%s, %s)",
                 what, runs[r].batch, runs[r].threads, dir, ref);
        for (t = 0; t < ntraced; ++t) {
            char tn[64];
            snprintf(tn, sizeof tn, "traces/member_%ld.csv", traced[t]);
            RC_CHECK(same_in(ref, dir, tn),
                     "%s: %s differs between engines (batch %ld)", what, tn,
                     runs[r].batch);
        }
        root = load_json(dir, "ensemble.json");
        eng = cJSON_GetObjectItemCaseSensitive(root, "engine");
        RC_CHECK(root && !strcmp(str(eng, "name"), "batch") &&
                     num(eng, "batch_size") == (double)runs[r].batch &&
                     num(eng, "members_rerun_alone") == (double)ntraced,
                 "%s: ensemble.json engine %s, batch_size %g, rerun %g; want "
                 "batch, %ld, %d (the traced members)", what,
                 str(eng, "name"), num(eng, "batch_size"),
                 num(eng, "members_rerun_alone"), runs[r].batch, ntraced);
        cJSON_Delete(root);
    }
    rc_scenario_free(scn);
}

/* ------------------------------------------------------------------ */
/* 2. A member alone.                                                  */

static void member_alone(void)
{
    char dir[1100], x[64], pm[64], text[2000], out[1100], buf[3000];
    rc_ensemble_result res;
    rc_scenario *scn = load_text("pogo alone", pogo_text, NULL, 0), *one;
    rc_run_options ro;
    rc_run_result rr;
    rc_error err;
    const long k = 123; /* not traced: its row comes from the batch */
    if (!scn)
        return;
    if (run_engine("pogo alone", scn, "alone_ens", 1, 16, 0, &res, dir,
                   sizeof dir) ||
        csv_field(dir, k, "particles[1].position[0]", x, sizeof x) ||
        csv_field(dir, k, "particles[0].momentum[0]", pm, sizeof pm)) {
        RC_CHECK(0, "pogo alone: no row %ld", k);
        rc_scenario_free(scn);
        return;
    }
    rc_scenario_free(scn);
    snprintf(text, sizeof text,
             "name: pogo_one\n"
             "dimension: 1\n"
             "particles:\n"
             "  - {mass: 1, position: [6], momentum: [%s]}\n"
             "  - {mass: 1, position: [%s], momentum: [0]}\n"
             "potentials:\n"
             "  - {type: gravity, g: 9.8}\n"
             "  - {type: spring, particles: [0, 1], k: 10, rest_length: 5}\n"
             "constraints:\n"
             "  - {type: wall, normal: [1], offset: 0, particles: 1}\n"
             "integrator: {method: gvi, base: verlet, dt: 0.1, duration: "
             "30}\n"
             "output: {every: 7}\n",
             pm, x);
    one = load_text("pogo member alone", text, NULL, 0);
    if (!one)
        return;
    snprintf(out, sizeof out, "%s/alone_one", g_dir);
    memset(&ro, 0, sizeof ro);
    ro.out_dir = out;
    ro.backend = RC_BACKEND_CPU;
    ro.threads = 1;
    RC_CHECK(rc_run(one, &ro, &rr, &err) == RC_OK, "member alone: %s",
             rc_error_format(&err, buf, sizeof buf));
    RC_CHECK(csv_num(dir, k, "E0") == rr.energy_initial &&
                 csv_num(dir, k, "max_rel_energy_error") ==
                     rr.max_rel_energy_error &&
                 csv_num(dir, k, "final_rel_energy_error") ==
                     rr.final_rel_energy_error &&
                 csv_num(dir, k, "windowed_drift") == rr.windowed_drift &&
                 csv_num(dir, k, "drift_per_time") ==
                     rr.energy_drift_per_time &&
                 csv_num(dir, k, "momentum_error") == rr.max_momentum_error &&
                 csv_num(dir, k, "steps") == (double)rr.steps,
             "member %ld of the batch differs from its plain run: E0 %.17g "
             "vs %.17g, max_rel %.17g vs %.17g, final %.17g vs %.17g, "
             "windowed %.17g vs %.17g, drift %.17g vs %.17g", k,
             csv_num(dir, k, "E0"), rr.energy_initial,
             csv_num(dir, k, "max_rel_energy_error"), rr.max_rel_energy_error,
             csv_num(dir, k, "final_rel_energy_error"),
             rr.final_rel_energy_error, csv_num(dir, k, "windowed_drift"),
             rr.windowed_drift, csv_num(dir, k, "drift_per_time"),
             rr.energy_drift_per_time);
    /* the statistics must be those of a real run, not zeros */
    RC_CHECK(rr.max_rel_energy_error > 1e-6 && csv_num(dir, k, "impacts") > 0,
             "member alone: max error %g, impacts %g; the pogo stick should "
             "bounce", rr.max_rel_energy_error, csv_num(dir, k, "impacts"));
    rc_scenario_free(one);
}

/* ------------------------------------------------------------------ */
/* 3. Failure isolation inside a batch.                                */

static void failure_in_batch(void)
{
    /* members 2 (below the floor) and 5 (kinetic energy 1e400/2 = inf)
     * sit in the same batch of 8 as six good members */
    static const char *const sets[] = {
        "ensemble.members=8",
        "ensemble.vary=[{path: \"particles[1].position[0]\", values: [1, "
        "0.9, -0.5, 1.1, 0.8, 1, 1.2, 0.7]}, {path: "
        "\"particles[0].momentum[0]\", values: [0, 0, 0, 0, 0, 1e200, 0, "
        "0.5]}]",
        "output.trace_members=[]"};
    char db[1100], dm[1100], st[64];
    rc_ensemble_result rb, rm;
    rc_scenario *scn = load_text("failure", pogo_text, sets, 3);
    cJSON *root, *fails;
    long k;
    int ok_same = 1;
    if (!scn)
        return;
    if (run_engine("failure batch", scn, "fail_b", 2, 8, 0, &rb, db,
                   sizeof db) ||
        run_engine("failure member", scn, "fail_m", 1, 0, 1, &rm, dm,
                   sizeof dm)) {
        rc_scenario_free(scn);
        return;
    }
    RC_CHECK(rb.batched && rb.ok == 6 && rb.failed == 1 && rb.invalid == 1 &&
                 rb.rerun == 2,
             "failure: batched %d, %ld ok, %ld failed, %ld invalid, %ld "
             "re-run; want 1, 6, 1, 1, 2", rb.batched, rb.ok, rb.failed,
             rb.invalid, rb.rerun);
    RC_CHECK(csv_field(db, 2, "status", st, sizeof st) == 0 &&
                 !strcmp(st, "invalid"),
             "failure: member 2 (below the floor) is '%s', want invalid", st);
    RC_CHECK(csv_field(db, 5, "status", st, sizeof st) == 0 &&
                 !strcmp(st, "failed") && csv_num(db, 5, "fail_step") == 0,
             "failure: member 5 (energy overflow) is '%s' at step %g, want "
             "failed at 0", st, csv_num(db, 5, "fail_step"));
    for (k = 0; k < 8; ++k)
        if (k != 2 && k != 5)
            ok_same &= csv_field(db, k, "status", st, sizeof st) == 0 &&
                       !strcmp(st, "ok") &&
                       csv_num(db, k, "steps") == 300.0;
    RC_CHECK(ok_same, "failure: the six good members must be ok with 300 "
             "steps");
    RC_CHECK(same_in(db, dm, "members.csv"),
             "failure: members.csv differs between the engines (%s, %s)", db,
             dm);
    root = load_json(db, "ensemble.json");
    fails = cJSON_GetObjectItemCaseSensitive(root, "first_failures");
    RC_CHECK(cJSON_GetArraySize(fails) == 2 &&
                 strstr(str(cJSON_GetArrayItem(fails, 0), "message"),
                        "wall") &&
                 strstr(str(cJSON_GetArrayItem(fails, 0), "message"),
                        "violated") &&
                 strstr(str(cJSON_GetArrayItem(fails, 1), "message"),
                        "non-finite"),
             "failure: first_failures should name the violated wall of "
             "member 2 and the non-finite energy of member 5");
    cJSON_Delete(root);
    rc_scenario_free(scn);
}

/* ------------------------------------------------------------------ */
/* 4. What the plan declines.                                          */

static void declined(void)
{
    static const struct {
        const char *set, *why;
    } cases[] = {
        /* (a varied dt or mass is the batch engine's since the
         * member's run parameters: test_ensemble_lanes' cradle_params) */
        {"ensemble.vary[1]={path: integrator.newton_tol, values: [1e-14, "
         "1e-13]}",
         "rule sets a field other than"},
        {"integrator.linearized=true", "linearized constraints"}};
    int c;
    for (c = 0; c < 2; ++c) {
        const char *sets[3];
        char dir[1100], name[32];
        rc_ensemble_result res;
        rc_scenario *scn;
        cJSON *root, *eng;
        sets[0] = "ensemble.members=2";
        sets[1] = cases[c].set;
        sets[2] = "output.trace_members=[]";
        scn = load_text("declined", pogo_text, sets, 3);
        if (!scn)
            continue;
        snprintf(name, sizeof name, "declined%d", c);
        if (run_engine("declined", scn, name, 1, 0, 0, &res, dir,
                       sizeof dir) == 0) {
            root = load_json(dir, "ensemble.json");
            eng = cJSON_GetObjectItemCaseSensitive(root, "engine");
            RC_CHECK(!res.batched && res.ok == 2 &&
                         !strcmp(str(eng, "name"), "per-member") &&
                         strstr(str(eng, "why"), cases[c].why),
                     "declined (%s): batched %d, %ld ok, engine %s (%s); "
                     "want per-member because '%s'", cases[c].set,
                     res.batched, res.ok, str(eng, "name"), str(eng, "why"),
                     cases[c].why);
            cJSON_Delete(root);
        }
        rc_scenario_free(scn);
    }
}

int main(void)
{
    static const long pogo_traced[2] = {3, 150}, cp_traced[1] = {4};
    if (cli_test_start("test_ensemble_batch"))
        return 1;
    engines_agree("pogo", pogo_text, 200, pogo_traced, 2);
    engines_agree("cart_pendulum", cp_text, 9, cp_traced, 1);
    member_alone();
    failure_in_batch();
    declined();
    return cli_test_finish("test_ensemble_batch");
}

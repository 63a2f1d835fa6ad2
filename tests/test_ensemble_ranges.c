/* Ensembles across machines (issue 19): `ricochet run --members A:B`
 * runs members A to B-1 with the bits they have in the whole run, and
 * `ricochet merge` combines ranges into the outputs of one run.
 *
 * For three ensembles of different engines — pogo sticks (batch engine,
 * SIMD lanes, a traced member), Newton's cradle (per-member engine, a
 * grid with groups.csv, the traced member alone in a range) and the
 * cart-pendulum sweep (every member against a shared reference run:
 * ranges whose first member of a reference slot is not the whole run's)
 * — uneven ranges, given to merge out of order, must give members.csv,
 * groups.csv and the traces byte for byte and ensemble.json identical
 * but for the run metadata; each range's own members.csv rows must be
 * the whole run's rows.  Then the refusals: overlapping and missing
 * ranges, ranges of another scenario, a directory that is no range, a
 * missing trace, a bad --members: exit 2 and nothing written.  And an
 * interrupted range restarts its own range (library). */
#define _POSIX_C_SOURCE 200809L
#include "rc_cli_test.h"
#include "rc_ensemble_same.h"

#include "ricochet/ricochet.h"

/* The rows of dir/members.csv after its header (malloc'd). */
static char *rows_of(const char *dir)
{
    char path[1100], *text, *nl, *rows;
    snprintf(path, sizeof path, "%s/members.csv", dir);
    text = slurp(path);
    if (!text)
        return NULL;
    nl = strchr(text, '\n');
    rows = strdup(nl ? nl + 1 : "");
    free(text);
    return rows;
}

/* Run `scenario` whole into g_dir/<tag>-full and as the ranges cuts[0]:
 * cuts[1], cuts[1]:cuts[2], ... into <tag>-r<i>; merge them (listed last
 * to first) into <tag>-merged and compare.  cuts ends at the member
 * count. */
static void check_ranges(const char *tag, const char *scenario,
                         const char *sets, const long *cuts, int ncuts)
{
    char full[600], merged[600], dirs[4000] = "", what[200], *whole;
    size_t used = 0;
    int i, rc;
    cJSON *j;
    snprintf(full, sizeof full, "%s/%s-full", g_dir, tag);
    snprintf(merged, sizeof merged, "%s/%s-merged", g_dir, tag);
    rc = cli("run '%s' %s --quiet --out '%s'", scenario, sets, full);
    RC_CHECK(rc == 0, "%s: whole run exit %d: %s", tag, rc, g_stderr);
    whole = rows_of(full);
    for (i = ncuts - 2; i >= 0; --i) {
        char dir[600];
        snprintf(dir, sizeof dir, "%s/%s-r%d", g_dir, tag, i);
        rc = cli("run '%s' %s --quiet --members %ld:%ld --out '%s'", scenario,
                 sets, cuts[i], cuts[i + 1], dir);
        RC_CHECK(rc == 0, "%s: range %ld:%ld exit %d: %s", tag, cuts[i],
                 cuts[i + 1], rc, g_stderr);
        used += (size_t)snprintf(dirs + used, sizeof dirs - used, " '%s'",
                                 dir);
        /* the range's own rows are the whole run's rows of its members */
        {
            char *mine = rows_of(dir), *at = whole;
            long k;
            for (k = 0; at && k < cuts[i]; ++k)
                at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL;
            RC_CHECK(mine && at && !strncmp(at, mine, strlen(mine)) &&
                         (cuts[i + 1] == cuts[ncuts - 1] ||
                          at[strlen(mine)] != '\0'),
                     "%s: rows of range %ld:%ld differ from the whole run's",
                     tag, cuts[i], cuts[i + 1]);
            free(mine);
        }
        j = json_file(dir, "ensemble.json");
        {
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "range");
            RC_CHECK(num(r, "first") == (double)cuts[i] &&
                         num(r, "end") == (double)cuts[i + 1] &&
                         num(r, "ensemble_members") ==
                             (double)cuts[ncuts - 1] &&
                         num(j, "members") == (double)(cuts[i + 1] - cuts[i]),
                     "%s: range %ld:%ld: ensemble.json's range and members",
                     tag, cuts[i], cuts[i + 1]);
            RC_CHECK(exists(dir, "range.rcp") && !exists(dir, "groups.csv"),
                     "%s: range %ld:%ld: range.rcp, and no groups.csv", tag,
                     cuts[i], cuts[i + 1]);
        }
        cJSON_Delete(j);
    }
    free(whole);
    rc = cli("merge%s --out '%s'", dirs, merged);
    RC_CHECK(rc == 0, "%s: merge exit %d: %s", tag, rc, g_stderr);
    snprintf(what, sizeof what, "%s: merge of %d ranges", tag, ncuts - 1);
    same_ensemble(full, merged, what);
    j = json_file(merged, "ensemble.json");
    {
        const cJSON *ranges = cJSON_GetObjectItemCaseSensitive(j, "ranges");
        const cJSON *full_j = NULL;
        cJSON *fj = json_file(full, "ensemble.json");
        full_j = cJSON_GetObjectItemCaseSensitive(fj, "scenario_hash");
        RC_CHECK(cJSON_GetArraySize(ranges) == (ncuts > 2 ? ncuts - 1 : 0),
                 "%s: merged ensemble.json lists %d ranges, want %d", tag,
                 cJSON_GetArraySize(ranges), ncuts - 1);
        RC_CHECK(cJSON_IsString(full_j) &&
                     !strncmp(full_j->valuestring, "fnv1a64:", 8) &&
                     !strcmp(str(j, "scenario_hash"), full_j->valuestring),
                 "%s: scenario_hash of the merged file", tag);
        cJSON_Delete(fj);
    }
    cJSON_Delete(j);
}

/* Progress callback that stops the run at its first call (the library
 * calls it at most ten times a second, so after 0.1 s). */
static int stop_at_once(void *ctx, long step, long total, double elapsed)
{
    (void)ctx;
    (void)step;
    (void)total;
    (void)elapsed;
    return 1;
}

/* An interrupted range continues its own range from its checkpoint (the
 * checkpoint records it; a restart need not repeat --members) and ends
 * as the uninterrupted range: rc_ensemble_run through the library. */
static void check_range_restart(const char *pogo)
{
    /* the per-member engine on one thread: 3000 members x 500 steps take
     * seconds, so the stop at 0.1 s comes with most members not run */
    static const char *const sets[] = {"ensemble.members=5000",
                                       "integrator.duration=50"};
    rc_scenario *scn = NULL;
    rc_error err;
    rc_ensemble_options eo;
    rc_ensemble_result er;
    rc_status st;
    char dir[600], ref[600], ck[700];
    if (rc_scenario_load(pogo, sets, 2, &scn, &err) != RC_OK) {
        RC_CHECK(0, "cannot load %s: %s", pogo, err.message);
        return;
    }
    snprintf(dir, sizeof dir, "%s/restart-range", g_dir);
    snprintf(ref, sizeof ref, "%s/restart-ref", g_dir);
    snprintf(ck, sizeof ck, "%s/checkpoint.rcp", dir);
    memset(&eo, 0, sizeof eo);
    eo.out_dir = dir;
    eo.threads = 1;
    eo.per_member = 1;
    eo.member_first = 100;
    eo.member_end = 3100;
    eo.progress = stop_at_once;
    st = rc_ensemble_run(scn, &eo, &er, &err);
    RC_CHECK(st == RC_ERR_STATE && er.interrupted && er.finished < 3000 &&
                 exists(dir, "checkpoint.rcp") && !exists(dir, "range.rcp"),
             "range 100:3100 stopped: status %d, interrupted %d, %ld "
             "finished",
             (int)st, er.interrupted, er.finished);
    /* a restart asking for another range is refused */
    memset(&eo, 0, sizeof eo);
    eo.out_dir = dir;
    eo.restart = ck;
    eo.member_first = 0;
    eo.member_end = 3100;
    st = rc_ensemble_run(scn, &eo, &er, &err);
    RC_CHECK(st == RC_ERR_PARSE && strstr(err.message, "100:3100"),
             "restart with another range: status %d, '%s'", (int)st,
             err.message);
    /* without --members it runs the checkpoint's range */
    eo.member_first = eo.member_end = 0;
    eo.threads = 2;
    st = rc_ensemble_run(scn, &eo, &er, &err);
    RC_CHECK(st == RC_OK && er.first == 100 && er.end == 3100 &&
                 exists(dir, "range.rcp"),
             "restarted range: status %d (%s), members %ld:%ld", (int)st,
             err.message, er.first, er.end);
    memset(&eo, 0, sizeof eo);
    eo.out_dir = ref;
    eo.member_first = 100;
    eo.member_end = 3100;
    st = rc_ensemble_run(scn, &eo, &er, &err);
    RC_CHECK(st == RC_OK, "uninterrupted range: %s", err.message);
    same_ensemble(ref, dir, "range 100:3100 stopped and restarted");
    rc_scenario_free(scn);
}

/* A merge that must be refused: exit 2, stderr names `word`, nothing in
 * out. */
static void check_refused(const char *args, const char *word,
                          const char *what)
{
    char out[600];
    int rc;
    snprintf(out, sizeof out, "%s/refused", g_dir);
    rc = cli("merge %s --out '%s'", args, out);
    RC_CHECK(rc == 2, "%s: exit %d, want 2 (%s)", what, rc, g_stderr);
    RC_CHECK(strstr(g_stderr, word) != NULL, "%s: stderr '%s' lacks '%s'",
             what, g_stderr, word);
    RC_CHECK(count_entries(out) <= 0, "%s: wrote into %s", what, out);
}

int main(void)
{
    char pogo[600], cradle[600], cart[600];
    static const long pogo_cuts[] = {0, 7, 8, 150, 300};
    static const long cradle_cuts[] = {0, 3, 4, 20};
    static const long cart_cuts[] = {0, 5, 6, 24};
    char a[800], b[800], args[3000];
    int rc;
    if (cli_test_start("test_ensemble_ranges"))
        return 1;
    snprintf(pogo, sizeof pogo, "%s/pogo_ensemble.yaml", RC_EXAMPLES_DIR);
    snprintf(cradle, sizeof cradle, "%s/cradle_ensemble.yaml",
             RC_EXAMPLES_DIR);
    snprintf(cart, sizeof cart, "%s/cart_pendulum_sweep.yaml",
             RC_EXAMPLES_DIR);
    /* members 0 and 150 traced: one in the first range, one the first
     * member of a range */
    check_ranges("pogo", pogo,
                 "--set ensemble.members=300 --set integrator.duration=10 "
                 "--set 'output.trace_members=[0,150]'",
                 pogo_cuts, 5);
    /* member 3 (traced) is the range 3:4 alone */
    check_ranges("cradle", cradle, "--set integrator.duration=2",
                 cradle_cuts, 4);
    /* 4 x 2 x 3 members; members 1 and 5 share a reference (same beta),
     * 5 is the first of its slot in range 5:6 */
    check_ranges("cart", cart,
                 "--set ensemble.vary[0].count=4 --set integrator.duration=1",
                 cart_cuts, 4);
    check_range_restart(pogo);
    /* one range that is the whole ensemble merges into the whole run */
    snprintf(a, sizeof a, "%s/cradle-one", g_dir);
    rc = cli("run '%s' --set integrator.duration=2 --quiet --members 0:20 "
             "--out '%s'",
             cradle, a);
    RC_CHECK(rc == 0, "cradle 0:20: exit %d", rc);
    snprintf(b, sizeof b, "%s/cradle-one-merged", g_dir);
    rc = cli("merge '%s' --out '%s' --quiet", a, b);
    RC_CHECK(rc == 0, "merge of one range: exit %d: %s", rc, g_stderr);
    snprintf(args, sizeof args, "%s/cradle-full", g_dir);
    same_ensemble(args, b, "cradle: one range 0:20");

    /* refusals */
    snprintf(args, sizeof args, "'%s/pogo-r0' '%s/pogo-r1' '%s/pogo-r3'",
             g_dir, g_dir, g_dir);
    check_refused(args, "members 8:150", "missing range");
    snprintf(a, sizeof a, "%s/pogo-overlap", g_dir);
    rc = cli("run '%s' --set ensemble.members=300 --set integrator.duration=10 "
             "--set 'output.trace_members=[0,150]' --quiet --members 100:160 "
             "--out '%s'",
             pogo, a);
    RC_CHECK(rc == 0, "pogo 100:160: exit %d", rc);
    snprintf(args, sizeof args,
             "'%s/pogo-r0' '%s/pogo-r1' '%s/pogo-r2' '%s/pogo-r3' '%s'", g_dir,
             g_dir, g_dir, g_dir, a);
    check_refused(args, "overlap", "overlapping ranges");
    snprintf(a, sizeof a, "%s/pogo-other", g_dir);
    rc = cli("run '%s' --set ensemble.members=300 --set integrator.duration=10 "
             "--set 'output.trace_members=[0,150]' --set ensemble.seed=7 "
             "--quiet --members 8:150 --out '%s'",
             pogo, a);
    RC_CHECK(rc == 0, "pogo seed 7: exit %d", rc);
    snprintf(args, sizeof args, "'%s/pogo-r0' '%s/pogo-r1' '%s' '%s/pogo-r3'",
             g_dir, g_dir, a, g_dir);
    check_refused(args, "different scenarios", "another scenario");
    snprintf(args, sizeof args, "'%s/pogo-full'", g_dir);
    check_refused(args, "range.rcp", "a whole run is no range");
    snprintf(args, sizeof args, "'%s/pogo-r0' '%s/nowhere'", g_dir, g_dir);
    check_refused(args, "no such directory", "missing directory");
    /* member 150's trace gone from its range */
    snprintf(a, sizeof a, "%s/pogo-r3/traces/member_150.csv", g_dir);
    RC_CHECK(unlink(a) == 0, "cannot remove %s", a);
    snprintf(args, sizeof args,
             "'%s/pogo-r0' '%s/pogo-r1' '%s/pogo-r2' '%s/pogo-r3'", g_dir,
             g_dir, g_dir, g_dir);
    check_refused(args, "member_150.csv", "missing trace");
    /* the output directory may not be one of the ranges */
    rc = cli("merge '%s/cradle-r0' '%s/cradle-r1' '%s/cradle-r2' --out "
             "'%s/cradle-r2'",
             g_dir, g_dir, g_dir, g_dir);
    RC_CHECK(rc == 2 && strstr(g_stderr, "one of the ranges"),
             "merge into a range: exit %d, '%s'", rc, g_stderr);
    snprintf(a, sizeof a, "%s/cradle-r2", g_dir);
    RC_CHECK(exists(a, "range.rcp") && exists(a, "members.csv") &&
                 !exists(a, "groups.csv"),
             "merge into a range changed the range's files");
    /* --members that is no range of the ensemble: exit 2, nothing run */
    {
        static const char *const bad[] = {"5:3", "0:21", "7:7", "x:3", "3",
                                          "-1:4"};
        int k;
        for (k = 0; k < 6; ++k) {
            snprintf(a, sizeof a, "%s/badrange", g_dir);
            rc = cli("run '%s' --set integrator.duration=2 --quiet --members "
                     "'%s' --out '%s'",
                     cradle, bad[k], a);
            RC_CHECK(rc == 2 && strstr(g_stderr, "--members"),
                     "--members %s: exit %d, '%s'", bad[k], rc, g_stderr);
            RC_CHECK(count_entries(a) <= 0, "--members %s wrote into %s",
                     bad[k], a);
        }
    }
    /* the commands' help: exit 0, their own lines */
    rc = cli("merge --help");
    RC_CHECK(rc == 0 && strstr(g_stdout, "merge DIR... --out DIR") &&
                 !strstr(g_stdout, "\n  run S"),
             "merge --help: exit %d, '%s'", rc, g_stdout);
    rc = cli("run --help");
    RC_CHECK(rc == 0 && strstr(g_stdout, "--members A:B") &&
                 strstr(g_stdout, "mpirun"),
             "run --help: exit %d, '%s'", rc, g_stdout);
    rc = cli("merge --out '%s/x'", g_dir);
    RC_CHECK(rc == 2, "merge without ranges: exit %d", rc);
    rc = cli("merge '%s/cradle-r0'", g_dir);
    RC_CHECK(rc == 2, "merge without --out: exit %d", rc);
    return cli_test_finish("test_ensemble_ranges");
}

/* Helpers of the ensemble engine tests (test_ensemble_batch,
 * test_ensemble_batch_refs, test_ensemble_lanes, test_ensemble_methods):
 * a scenario from its text, an ensemble run into the scratch directory
 * with given engine settings, and byte comparison of two runs' files.
 * Include after rc_cli_test.h. */
#ifndef RC_ENS_TEST_H
#define RC_ENS_TEST_H

#include "ricochet/ensemble.h"
#include "ricochet/scenario.h"

static int g_files = 0; /* scenario files written so far */

/* `text` written to g_dir/sNNN.yaml and loaded with nsets overrides;
 * NULL (a failed check) when it does not load. */
static inline rc_scenario *load_text(const char *what, const char *text,
                                     const char *const *sets, int nsets)
{
    char path[512], buf[3000];
    rc_scenario *scn = NULL;
    rc_error err;
    snprintf(path, sizeof path, "%s/s%03d.yaml", g_dir, g_files++);
    write_text(path, text);
    if (rc_scenario_load(path, sets, nsets, &scn, &err) != RC_OK) {
        RC_CHECK(0, "%s: cannot load: %s", what,
                 rc_error_format(&err, buf, sizeof buf));
        return NULL;
    }
    return scn;
}

/* Run into g_dir/<name> with the given engine settings (dir receives
 * the path); 0 when it ran. */
static inline int run_engine(const char *what, const rc_scenario *scn,
                             const char *name, int threads, long batch,
                             int per_member, rc_ensemble_result *res,
                             char *dir, size_t size)
{
    rc_ensemble_options eo;
    rc_error err;
    char buf[3000];
    rc_status st;
    snprintf(dir, size, "%s/%s", g_dir, name);
    memset(&eo, 0, sizeof eo);
    eo.out_dir = dir;
    eo.threads = threads;
    eo.batch = batch;
    eo.per_member = per_member;
    memset(res, 0, sizeof *res);
    st = rc_ensemble_run(scn, &eo, res, &err);
    RC_CHECK(st == RC_OK, "%s: rc_ensemble_run: %s", what,
             rc_error_format(&err, buf, sizeof buf));
    return st == RC_OK ? 0 : -1;
}

/* d1/name and d2/name have the same bytes. */
static inline int same_in(const char *d1, const char *d2,
                          const char *name)
{
    char a[1400], b[1400];
    snprintf(a, sizeof a, "%s/%s", d1, name);
    snprintf(b, sizeof b, "%s/%s", d2, name);
    return same_file(a, b);
}

#endif

/* Ensembles against the seeds and against single runs.
 *
 * 1. Cart-pendulum sweep (seed 001 §5, examples/cart_pendulum_sweep.yaml
 *    with 11 values of beta instead of 51, to keep the test short):
 *    collision Verlet and modified collision Verlet are second order, so
 *    their median L2 trajectory error against the fine reference falls
 *    by 3.2^2 ~ 10 from dt = 3.2e-2 to 1e-2 (asserted in [5, 20], the
 *    issue's bracket around 10.24); GVI's ratio is printed (it reflects at
 *    the start of a step: first order after impacts).  GVI's and MCVA's
 *    windowed energy drift is flat (median below 0.5 % of |H0|).
 * 2. A member run inside an ensemble equals the same member run alone as
 *    a single scenario, bit for bit: the trace of member 3 of a pogo
 *    ensemble against `rc_run` of the base scenario with member 3's value
 *    set by override. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ricochet/ricochet.h"
#include "rc_test.h"
#include "rc_ensemble_json_test.h"

static char g_dir[256];

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    char *buf;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (char *)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static int run_ensemble(const char *file, const char *const *ov, int nov,
                        const char *out)
{
    rc_scenario *scn = NULL;
    rc_error err;
    rc_ensemble_options eo;
    rc_ensemble_result er;
    char path[512], buf[2000];
    int ok;
    snprintf(path, sizeof path, "%s/%s", RC_EXAMPLES_DIR, file);
    if (rc_scenario_load(path, ov, nov, &scn, &err) != RC_OK) {
        RC_CHECK(0, "load %s: %s", file, rc_error_format(&err, buf, sizeof buf));
        return 0;
    }
    memset(&eo, 0, sizeof eo);
    eo.out_dir = out;
    ok = rc_ensemble_run(scn, &eo, &er, &err) == RC_OK;
    RC_CHECK(ok, "ensemble %s: %s", file, rc_error_format(&err, buf, sizeof buf));
    RC_CHECK(er.failed == 0 && er.invalid == 0,
             "ensemble %s: %ld failed, %ld invalid", file, er.failed,
             er.invalid);
    rc_scenario_free(scn);
    return ok;
}

static double num(cJSON *o, const char *key)
{
    cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void test_cart_pendulum(void)
{
    static const char *const methods[3] = {"gvi", "cva", "mcva"};
    const char *ov[1] = {"ensemble.vary[0].count=11"};
    char out[300], path[400], *text;
    cJSON *root, *groups;
    int m;
    snprintf(out, sizeof out, "%s/cart", g_dir);
    if (!run_ensemble("cart_pendulum_sweep.yaml", ov, 1, out))
        return;
    snprintf(path, sizeof path, "%s/ensemble.json", out);
    text = slurp(path);
    root = text ? cJSON_Parse(text) : NULL;
    groups = cJSON_GetObjectItem(root, "groups");
    RC_CHECK(cJSON_GetArraySize(groups) == 6, "expected 6 groups, got %d",
             cJSON_GetArraySize(groups));
    printf("cart-pendulum sweep, 11 beta values, medians per method:\n");
    printf("  method  L2(dt 3.2e-2)  L2(dt 1e-2)  ratio   windowed drift "
           "(3.2e-2, 1e-2)\n");
    for (m = 0; m < 3; ++m) {
        cJSON *coarse = rc_test_find_group(groups, 0.032, methods[m]);
        cJSON *fine = rc_test_find_group(groups, 0.01, methods[m]);
        double lc = num(coarse, "median_l2_error");
        double lf = num(fine, "median_l2_error");
        double wc = num(coarse, "median_windowed_drift");
        double wf = num(fine, "median_windowed_drift");
        double ratio = lc / lf;
        printf("  %-6s  %12.4e  %11.4e  %6.2f   %.2e  %.2e\n", methods[m], lc,
               lf, ratio, wc, wf);
        RC_CHECK(coarse && fine, "%s: groups missing", methods[m]);
        if (m > 0) /* cva, mcva: second order, 3.2^2 = 10.24 */
            RC_CHECK(ratio >= 5.0 && ratio <= 20.0,
                     "%s: L2 ratio %.3f outside [5, 20]", methods[m], ratio);
        if (m != 1) /* gvi and mcva: no drift, as for the single systems */
            RC_CHECK(wc < 5e-3 && wf < 5e-3,
                     "%s: windowed drift %.3e / %.3e above 0.5 %%",
                     methods[m], wc, wf);
        RC_CHECK(isfinite(ratio) && ratio > 1.0,
                 "%s: the error does not fall with dt (ratio %.3f)",
                 methods[m], ratio);
    }
    cJSON_Delete(root);
    free(text);
}

/* Member 3 of a short pogo ensemble (8 members, 200 time units) against
 * the same pogo stick run alone. */
static void test_member_equals_single(void)
{
    const char *ov[4] = {"ensemble.members=8", "integrator.duration=200",
                         "output.trace_members=[3]", "output.every=10"};
    char out[300], path[400], *members, *trace, *single, value[64] = "";
    char setv[128];
    const char *sov[3];
    rc_scenario *scn = NULL;
    rc_run_options ro;
    rc_run_result rr;
    rc_error err;
    int i;
    snprintf(out, sizeof out, "%s/pogo", g_dir);
    if (!run_ensemble("pogo_ensemble.yaml", ov, 4, out))
        return;
    /* member 3's value: the second column of its row in members.csv */
    snprintf(path, sizeof path, "%s/members.csv", out);
    members = slurp(path);
    RC_CHECK(members != NULL, "no members.csv");
    if (!members)
        return;
    {
        char *line = members;
        for (i = 0; i < 4 && line; ++i) /* header, members 0..2 */
            line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
        if (line && !strncmp(line, "3,", 2)) {
            size_t n = strcspn(line + 2, ",");
            if (n < sizeof value) {
                memcpy(value, line + 2, n);
                value[n] = '\0';
            }
        }
    }
    RC_CHECK(value[0] != '\0', "member 3's value not found");
    snprintf(setv, sizeof setv, "particles[1].position[0]=%s", value);
    sov[0] = setv;
    sov[1] = ov[1];
    sov[2] = ov[3];
    snprintf(path, sizeof path, "%s/pogo_ensemble.yaml", RC_EXAMPLES_DIR);
    if (rc_scenario_load(path, sov, 3, &scn, &err) != RC_OK) {
        RC_CHECK(0, "single load failed: %s", err.message);
        free(members);
        return;
    }
    memset(&ro, 0, sizeof ro);
    snprintf(out, sizeof out, "%s/single", g_dir);
    ro.out_dir = out;
    ro.threads = 1;
    RC_CHECK(rc_run(scn, &ro, &rr, &err) == RC_OK, "single run: %s",
             err.message);
    rc_scenario_free(scn);
    snprintf(path, sizeof path, "%s/pogo/traces/member_3.csv", g_dir);
    trace = slurp(path);
    snprintf(path, sizeof path, "%s/single/diagnostics.csv", g_dir);
    single = slurp(path);
    RC_CHECK(trace && single && !strcmp(trace, single),
             "member 3 inside the ensemble differs from the same run alone");
    printf("member 3 (particles[1].position[0]=%s): ensemble trace and "
           "single run %s (%zu bytes)\n",
           value, trace && single && !strcmp(trace, single) ? "identical"
                                                             : "DIFFER",
           single ? strlen(single) : (size_t)0);
    free(trace);
    free(single);
    free(members);
}

int main(void)
{
    char cmd[300];
    snprintf(g_dir, sizeof g_dir, "/tmp/rc_test_ensemble_seed_XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_cart_pendulum();
    test_member_equals_single();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (rc_test_failed_ == 0 && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return rc_test_finish("test_ensemble_seed");
}

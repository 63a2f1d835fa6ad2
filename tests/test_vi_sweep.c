/* Seed 001 Fig. 4 on a subset, by the route that draws the figure: the
 * CLI's run of examples/cart_pendulum_gc_sweep.yaml (11 of its 51 values of
 * beta in [3.2, 5.2]; 6 under the sanitizers), whose members (CVA, VCI,
 * MCVA-A and MCVA-C at h = 0.032 and 0.01) and their CVA references at
 * h = 1e-4 run through the batch engine's member body:
 *   - the batch engine ran it (ensemble.json engine.step = vi-member);
 *   - each member's L2 error equals the direct measurement of
 *     tests/rc_vi_sweep.h (the method stepped alone through vi.c, its
 *     sum taken in another order) for the first and the last beta, to
 *     1e-12 relative (round-off of ~500 terms summed in another order;
 *     measured 9e-16 over all 408 members of the example);
 *   - MCVA-A has the smallest median error of the four at both steps
 *     (the seed's finding: the SVA smooth map matters most);
 *   - CVA is second order: its median error falls by 5-20x from 0.032 to
 *     0.01 (10.24x for exactly second order; the band allows the
 *     impacts' share);
 *   - every method is convergent: its median error falls by more than 4x
 *     between the two steps.
 * The medians are the groups' median_l2_error of ensemble.json. */
#define _POSIX_C_SOURCE 200809L
#include "rc_cli_test.h"
#include "rc_ensemble_json_test.h"
#include "rc_vi_test.h"
#include "rc_vi_sweep.h"

#ifdef RICOCHET_SANITIZE_BUILD
#define NBETA 6
#else
#define NBETA 11
#endif

static const char *const k_meth[4] = {"cva", "vci", "mcva-a", "mcva-c"};
static const double k_h[2] = {0.032, 0.01};

/* l2[b][k][j] from members.csv (member = b + NBETA * (k + 4 * j): the
 * grid's first axis varies fastest); 1 when every row was read. */
static int read_members(const char *dir, double l2[NBETA][4][2])
{
    char path[700], *text, *line, *save = NULL;
    int rows = 0;
    snprintf(path, sizeof path, "%s/members.csv", dir);
    if (!(text = slurp(path)))
        return 0;
    line = strtok_r(text, "\n", &save); /* header */
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        long k = strtol(line, NULL, 10);
        const char *last = strrchr(line, ',');
        if (k < 0 || k >= NBETA * 8 || !last)
            break;
        l2[k % NBETA][(k / NBETA) % 4][k / (4 * NBETA)] =
            strtod(last + 1, NULL);
        ++rows;
    }
    free(text);
    return rows == NBETA * 8;
}

/* The L2 errors of beta number b, measured directly, against the
 * ensemble's. */
static void check_direct(int b, double l2[NBETA][4][2])
{
    static const rc_model_method *const meths[4] = {
        &rc_model_method_cva, &rc_model_method_vci, &rc_model_method_mcva_a,
        &rc_model_method_mcva_c};
    double beta = 3.2 + 2.0 * b / (NBETA - 1), *ref, sec;
    long imp;
    int k, j;
    rc_model m;
    if (vi_sweep_model(beta, &m)) {
        RC_CHECK(0, "beta %g: model", beta);
        return;
    }
    ref = vi_sweep_reference(&m);
    RC_CHECK(ref != NULL, "beta %g: reference run failed", beta);
    for (k = 0; k < 4 && ref; ++k)
        for (j = 0; j < 2; ++j) {
            double e = vi_sweep_error(meths[k], &m, k_h[j], ref, &sec, &imp);
            RC_CHECK(fabs(l2[b][k][j] - e) <= 1e-12 * e,
                     "%s h %g beta %g: ensemble L2 %.17g, direct %.17g",
                     k_meth[k], k_h[j], beta, l2[b][k][j], e);
        }
    free(ref);
    vi_model_free(&m);
}

int main(void)
{
    char dir[600];
    double l2[NBETA][4][2], med[4][2];
    cJSON *root, *groups, *eng, *step;
    int k, j, rc, ok;
    if (cli_test_start("test_vi_sweep"))
        return 1;
    snprintf(dir, sizeof dir, "%s/sweep", g_dir);
    rc = cli("run '%s/cart_pendulum_gc_sweep.yaml' --set "
             "'ensemble.vary[0].count=%d' --threads 2 --out '%s' --quiet",
             RC_EXAMPLES_DIR, NBETA, dir);
    RC_CHECK(rc == 0, "run: exit %d, %s", rc, g_stderr);
    root = json_file(dir, "ensemble.json");
    RC_CHECK(root != NULL, "no ensemble.json in %s", dir);
    RC_CHECK(num(cJSON_GetObjectItem(root, "status"), "ok") == NBETA * 8,
             "%g of %d members ok",
             num(cJSON_GetObjectItem(root, "status"), "ok"), NBETA * 8);
    eng = cJSON_GetObjectItem(root, "engine");
    step = cJSON_GetObjectItem(eng, "step");
    RC_CHECK(cJSON_IsString(step) && !strcmp(step->valuestring, "vi-member"),
             "engine.step %s, want vi-member",
             cJSON_IsString(step) ? step->valuestring : "(none)");
    groups = cJSON_GetObjectItem(root, "groups");
    for (k = 0; k < 4; ++k) {
        for (j = 0; j < 2; ++j) {
            cJSON *g = rc_test_find_group(groups, k_h[j], k_meth[k]);
            cJSON *v = cJSON_GetObjectItem(g, "median_l2_error");
            med[k][j] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
            RC_CHECK(isfinite(med[k][j]), "%s h %g: no median L2", k_meth[k],
                     k_h[j]);
        }
        printf("%-7s median L2 error  h=0.032: %.3e  h=0.01: %.3e  ratio "
               "%.2f\n",
               k_meth[k], med[k][0], med[k][1], med[k][0] / med[k][1]);
        RC_CHECK(med[k][0] / med[k][1] > 4.0, "%s: ratio %g", k_meth[k],
                 med[k][0] / med[k][1]);
    }
    for (j = 0; j < 2; ++j)
        for (k = 0; k < 4; ++k)
            if (k != 2)
                RC_CHECK(med[2][j] < med[k][j],
                         "h %g: MCVA-A median %g not below %s's %g", k_h[j],
                         med[2][j], k_meth[k], med[k][j]);
    RC_CHECK(med[0][0] / med[0][1] >= 5.0 && med[0][0] / med[0][1] <= 20.0,
             "CVA ratio %g", med[0][0] / med[0][1]);
    ok = read_members(dir, l2);
    RC_CHECK(ok, "members.csv: not %d rows", NBETA * 8);
    if (ok) {
        check_direct(0, l2);
        check_direct(NBETA - 1, l2);
    }
    cJSON_Delete(root);
    return cli_test_finish("test_vi_sweep");
}

/* Ensembles of models in generalized coordinates through the CLI: every
 * member of a sweep over the cart-pendulum's Xi(beta) (Pekarek & Murphey
 * 2014 §5.1) equals the single run of the same beta (members.csv against
 * summary.json: the same method, the same steps), at 1 and 2
 * threads; a member that cannot start is reported, the others finish. */
#define _POSIX_C_SOURCE 200809L
#include "rc_cli_test.h"

static const char *const k_scenario =
    "name: cp_gc_sweep\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  builtin: cart_pendulum\n"
    "  initial: {xi: 3.2}\n"
    "integrator: {method: METHOD, dt: 0.01, duration: 3}\n"
    "output: {every: 10}\n"
    "ensemble:\n"
    "  members: 6\n"
    "  vary:\n"
    "    - {path: model.initial.xi, values: [0, 0.7, 1.9, 2.6, 3.2, 4.4]}\n";

/* Column `name` of members.csv row `member` (1-based data row = member). */
static int member_field(const char *csv, long member, const char *name,
                        char *out, size_t size)
{
    const char *line = csv, *hdr_end = strchr(csv, '\n');
    int col = -1, c = 0;
    const char *p = csv;
    long row = -1;
    if (!hdr_end)
        return -1;
    while (p < hdr_end) { /* the column's index in the header */
        const char *e = memchr(p, ',', (size_t)(hdr_end - p));
        size_t n = (size_t)((e ? e : hdr_end) - p);
        if (n == strlen(name) && !strncmp(p, name, n))
            col = c;
        ++c;
        p = e ? e + 1 : hdr_end;
    }
    if (col < 0)
        return -1;
    for (line = hdr_end + 1; *line && row < member; ++row) {
        const char *nl = strchr(line, '\n');
        if (row + 1 == member) {
            const char *f = line;
            for (c = 0; c < col && f; ++c) {
                f = strchr(f, ',');
                f = f ? f + 1 : NULL;
            }
            if (!f)
                return -1;
            snprintf(out, size, "%.*s", (int)strcspn(f, ",\n"), f);
            return 0;
        }
        line = nl ? nl + 1 : line + strlen(line);
    }
    return -1;
}

static void sweep(const char *method, int threads)
{
    static const char *const betas[] = {"0", "0.7", "1.9", "2.6", "3.2",
                                        "4.4"};
    char path[700], dir[600], text[2048], *csv, buf[64];
    char *at;
    FILE *f;
    long k;
    int rc;
    snprintf(text, sizeof text, "%s", k_scenario);
    at = strstr(text, "METHOD");
    memmove(at + strlen(method), at + 6, strlen(at + 6) + 1);
    memcpy(at, method, strlen(method));
    snprintf(path, sizeof path, "%s/sweep_%s.yaml", g_dir, method);
    f = fopen(path, "w");
    if (!f) {
        RC_CHECK(0, "cannot write %s", path);
        return;
    }
    fputs(text, f);
    fclose(f);
    snprintf(dir, sizeof dir, "%s/ens_%s_%d", g_dir, method, threads);
    rc = cli("run '%s' --threads %d --out '%s' --quiet", path, threads, dir);
    RC_CHECK(rc == 0, "%s ensemble: exit %d, %s", method, rc, g_stderr);
    snprintf(path, sizeof path, "%s/members.csv", dir);
    csv = slurp(path);
    RC_CHECK(csv != NULL, "no %s", path);
    if (!csv)
        return;
    /* beta = 0: the cart starts on the ground, moving into it: the
     * impact method reports a grazing contact at once */
    RC_CHECK(member_field(csv, 0, "status", buf, sizeof buf) == 0 &&
                 strcmp(buf, "ok") != 0,
             "%s: member 0 (cart on the ground) should fail, got %s", method,
             buf);
    for (k = 1; k < 6; ++k) {
        char single[600], sum[700], *js, got[64];
        cJSON *root;
        snprintf(single, sizeof single, "%s/single_%s_%ld", g_dir, method, k);
        snprintf(path, sizeof path, "%s/sweep_%s.yaml", g_dir, method);
        rc = cli("run '%s' --set model.initial.xi=%s --set ensemble= "
                 "--out '%s' --quiet",
                 path, betas[k], single);
        if (rc != 0) { /* --set cannot delete a block: a file without it */
            char spath[600];
            FILE *g;
            snprintf(spath, sizeof spath, "%s/single_%s.yaml", g_dir, method);
            g = fopen(spath, "w");
            if (g) {
                fwrite(text, 1, (size_t)(strstr(text, "ensemble:") - text), g);
                fclose(g);
            }
            rc = cli("run '%s' --set model.initial.xi=%s --out '%s' --quiet",
                     spath, betas[k], single);
        }
        RC_CHECK(rc == 0, "%s single run beta %s: exit %d, %s", method,
                 betas[k], rc, g_stderr);
        snprintf(sum, sizeof sum, "%s/summary.json", single);
        js = slurp(sum);
        root = js ? cJSON_Parse(js) : NULL;
        RC_CHECK(root != NULL, "no %s", sum);
        if (root) {
            double want = cJSON_GetObjectItem(root, "max_rel_energy_error")
                              ->valuedouble;
            double imp = cJSON_GetObjectItem(root, "impacts")->valuedouble;
            /* 4e-16 relative: members.csv prints %.17g, but cJSON writes
             * summary.json's numbers to within an ulp (its round-trip test
             * compares with DBL_EPSILON) */
            RC_CHECK(member_field(csv, k, "max_rel_energy_error", got,
                                  sizeof got) == 0 &&
                         rc_test_close(strtod(got, NULL), want, 4e-16, 0.0),
                     "%s beta %s: member %s, single %.17g", method, betas[k],
                     got, want);
            RC_CHECK(member_field(csv, k, "impacts", got, sizeof got) == 0 &&
                         strtod(got, NULL) == imp,
                     "%s beta %s: member impacts %s, single %g", method,
                     betas[k], got, imp);
            cJSON_Delete(root);
        }
        free(js);
    }
    free(csv);
}

int main(void)
{
    if (cli_test_start("test_model_ensemble"))
        return 1;
    sweep("cva", 1);
    sweep("mcva-a", 2);
    return cli_test_finish("test_model_ensemble");
}

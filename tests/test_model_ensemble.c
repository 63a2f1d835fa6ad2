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

/* Field `name` of members.csv's row for `member` (the rows follow the
 * members), split with the harness's split(); 0 when found. */
static int member_field(const char *csv, long member, const char *name,
                        char *out, size_t size)
{
    char *copy = malloc(strlen(csv) + 1), *line, *next, *fields[64];
    int col = -1, k, n, found = -1;
    long row = -1;
    if (!copy)
        return -1;
    strcpy(copy, csv);
    for (line = copy; line && *line; line = next, ++row) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        n = split(line, fields, 64);
        if (row < 0) { /* the header: the column's index */
            for (k = 0; k < n && k < 64; ++k)
                if (!strcmp(fields[k], name))
                    col = k;
            if (col < 0)
                break;
        } else if (row == member) {
            if (col < n && col < 64) {
                snprintf(out, size, "%s", fields[col]);
                found = 0;
            }
            break;
        }
    }
    free(copy);
    return found;
}

static void sweep(const char *method, int threads)
{
    static const char *const betas[] = {"0", "0.7", "1.9", "2.6", "3.2",
                                        "4.4"};
    char path[700], single_path[700], dir[600], text[2048], *csv, buf[64];
    char *at;
    long k;
    int rc;
    snprintf(text, sizeof text, "%s", k_scenario);
    at = strstr(text, "METHOD");
    memmove(at + strlen(method), at + 6, strlen(at + 6) + 1);
    memcpy(at, method, strlen(method));
    snprintf(path, sizeof path, "%s/sweep_%s.yaml", g_dir, method);
    write_text(path, text);
    /* the same scenario without its ensemble block, for the single runs */
    snprintf(single_path, sizeof single_path, "%s/single_%s.yaml", g_dir,
             method);
    *strstr(text, "ensemble:") = '\0';
    write_text(single_path, text);
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
        char single[600], got[64];
        cJSON *root;
        snprintf(single, sizeof single, "%s/single_%s_%ld", g_dir, method, k);
        rc = cli("run '%s' --set model.initial.xi=%s --out '%s' --quiet",
                 single_path, betas[k], single);
        RC_CHECK(rc == 0, "%s single run beta %s: exit %d, %s", method,
                 betas[k], rc, g_stderr);
        root = json_file(single, "summary.json");
        RC_CHECK(root != NULL, "no %s/summary.json", single);
        if (root) {
            double want = num(root, "max_rel_energy_error");
            double imp = num(root, "impacts");
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

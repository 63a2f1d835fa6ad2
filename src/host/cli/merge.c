/* `ricochet merge DIR... --out DIR`: the outputs of ensemble ranges
 * (`run --members A:B`) combined into those of one run of the whole
 * ensemble (rc_ensemble_merge). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ricochet/ricochet.h"
#include "cli.h"

int rc_cli_merge(int argc, char **argv)
{
    const char **dirs = (const char **)calloc((size_t)argc + 1, sizeof *dirs);
    const char *out = NULL;
    int ndirs = 0, quiet = 0, k, rc = EXIT_OK;
    rc_ensemble_result res;
    rc_error err;
    if (!dirs)
        return EXIT_RUNTIME;
    for (k = 0; k < argc; ++k) {
        const char *a = argv[k];
        if (!strcmp(a, "--out") || !strncmp(a, "--out=", 6)) {
            if (a[5] == '=') {
                out = a + 6;
            } else if (k + 1 < argc) {
                out = argv[++k];
            } else {
                rc_cli_usage_error("%s", "option --out needs a value");
                rc = EXIT_INPUT;
                goto done;
            }
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            rc_cli_usage_error("unknown option '%s' for merge", a);
            rc = EXIT_INPUT;
            goto done;
        } else {
            dirs[ndirs++] = a;
        }
    }
    if (ndirs == 0 || !out || !*out) {
        rc_cli_usage_error("%s", ndirs == 0
                                     ? "merge needs the range directories "
                                       "(DIR...)"
                                     : "merge needs --out DIR");
        rc = EXIT_INPUT;
        goto done;
    }
    if (rc_ensemble_merge(dirs, ndirs, out, &res, &err) != RC_OK) {
        rc_cli_print_error(&err);
        rc = rc_cli_exit_code(err.status);
        goto done;
    }
    if (!quiet) {
        printf("merged %d range%s: ensemble of %ld members: %ld ok, %ld "
               "failed, %ld invalid\n",
               ndirs, ndirs == 1 ? "" : "s", res.members, res.ok, res.failed,
               res.invalid);
        printf("  output: %s/{members.csv,ensemble.json}\n", out);
    }
done:
    free(dirs);
    return rc;
}

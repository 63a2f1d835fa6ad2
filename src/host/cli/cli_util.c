#define _POSIX_C_SOURCE 200809L
/* Helpers shared by the ricochet subcommands: error printing, the
 * progress bar and Ctrl-C handling. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ricochet/run.h"

void rc_cli_print_error(const rc_error *err)
{
    char buf[3000];
    fprintf(stderr, "ricochet: error: %s\n",
            rc_error_format(err, buf, sizeof buf));
}

void rc_cli_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "ricochet: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'ricochet --help' for usage)\n");
}

/* ---------------------------------------------------------------- */
/* Progress bar and Ctrl-C.                                          */

static volatile sig_atomic_t g_interrupted = 0;

static void on_stop_signal(int sig)
{
    g_interrupted = sig;
}

void rc_cli_catch_sigint(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    /* SA_RESETHAND: the first signal asks for a clean stop; the default
     * action is back for the second, which ends the process at once */
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int rc_cli_interrupted(void)
{
    return (int)g_interrupted;
}

void rc_cli_progress_init(rc_cli_progress *ps, int quiet, double log_every,
                          const char *label)
{
    int tty = isatty(STDERR_FILENO);
    memset(ps, 0, sizeof *ps);
    ps->enabled = !quiet && tty;
    ps->log = !quiet && !tty;
    ps->log_every = log_every > 0.0 ? log_every : 30.0;
    ps->label = label;
    ps->unit = "steps";
    ps->rel = NAN;
}

void rc_cli_on_row(void *ctx, const rc_diagnostics *row)
{
    rc_cli_progress *ps = (rc_cli_progress *)ctx;
    if (ps->rows++ == 0) {
        ps->e0 = row->energy;
        ps->scale = rc_energy_scale(row);
    }
    ps->rel = (row->energy - ps->e0) / ps->scale;
}

/* One status line of a run whose stderr is a log, not a terminal. */
static void rc_cli_status_line(rc_cli_progress *ps, long step, long total,
                               double elapsed)
{
    double f = total > 0 ? (double)step / (double)total : 0.0;
    double rate = elapsed > 0.0 ? (double)step / elapsed : 0.0;
    double eta = f > 0.0 ? elapsed * (1.0 - f) / f : 0.0;
    fprintf(stderr,
            "ricochet: %s%ld/%ld %s (%.1f%%)  %.3g %s/s  elapsed %.1f s  "
            "eta %.1f s",
            ps->label && strcmp(ps->unit, "members") ? ps->label : "", step,
            total, ps->unit, 100.0 * f,
            rate, ps->unit, elapsed, eta);
    if (ps->rows > 0 && isfinite(ps->rel))
        fprintf(stderr, "  dE/E0 %.3e", ps->rel);
    fputc('\n', stderr);
    fflush(stderr);
    ps->last_log = elapsed;
    ps->logged++;
}

int rc_cli_on_progress(void *ctx, long step, long total, double elapsed)
{
    rc_cli_progress *ps = (rc_cli_progress *)ctx;
    /* a log: every log_every seconds, and the end of a run that logged
     * (or that took as long as one interval) */
    if (ps->log && (elapsed - ps->last_log >= ps->log_every ||
                    (step == total && total > 0 &&
                     (ps->logged > 0 || elapsed >= ps->log_every))))
        rc_cli_status_line(ps, step, total, elapsed);
    /* Only long runs get a bar: nothing for runs under a second. */
    if (ps->enabled && total > 0 && (elapsed > 1.0 || ps->drawn)) {
        double f = (double)step / (double)total;
        int width = 30, k, fill = (int)(f * width);
        double eta = f > 0 ? elapsed * (1.0 - f) / f : 0.0;
        fprintf(stderr, "\r%s[", ps->label ? ps->label : "");
        for (k = 0; k < width; ++k)
            fputc(k < fill ? '#' : '-', stderr);
        fprintf(stderr, "] %5.1f%%  step %ld/%ld  %.1fs elapsed  eta %.1fs ",
                100.0 * f, step, total, elapsed, eta);
        fflush(stderr);
        ps->drawn = 1;
    }
    return g_interrupted ? 1 : 0;
}

int rc_cli_parse_opts(int argc, char **argv, unsigned allowed,
                      const char *command, rc_cli_opts *o)
{
    static const struct {
        const char *name;
        unsigned bit; /* 0: always allowed */
        int takes_value;
    } known[] = {{"--set", 0, 1},
                 {"--out", RC_CLI_OPT_OUT, 1},
                 {"--backend", RC_CLI_OPT_BACKEND, 1},
                 {"--threads", RC_CLI_OPT_THREADS, 1},
                 {"--methods", RC_CLI_OPT_METHODS, 1},
                 {"--quiet", RC_CLI_OPT_QUIET, 0},
                 {"--batch", RC_CLI_OPT_ENSEMBLE, 1},
                 {"--restart", RC_CLI_OPT_RESTART, 1},
                 {"--per-member", RC_CLI_OPT_ENSEMBLE, 0},
                 {"--members", RC_CLI_OPT_ENSEMBLE, 1}};
    int k, j;
    memset(o, 0, sizeof *o);
    o->sets = (const char **)calloc((size_t)argc + 1, sizeof(char *));
    if (!o->sets)
        return EXIT_RUNTIME;
    for (k = 0; k < argc; ++k) {
        const char *a = argv[k], *val = NULL, *eq;
        size_t len;
        int which = -1;
        if (a[0] != '-' || !a[1]) {
            if (o->scenario) {
                rc_cli_usage_error("unexpected argument '%s'", a);
                return EXIT_INPUT;
            }
            o->scenario = a;
            continue;
        }
        eq = strchr(a, '=');
        len = eq ? (size_t)(eq - a) : strlen(a);
        for (j = 0; j < (int)(sizeof known / sizeof known[0]); ++j)
            if (strlen(known[j].name) == len && !strncmp(a, known[j].name, len) &&
                (known[j].bit == 0 || (allowed & known[j].bit)))
                which = j;
        if (which < 0 || (eq && !known[which].takes_value)) {
            char what[300];
            snprintf(what, sizeof what, "%s' for %s", a, command);
            rc_cli_usage_error("unknown option '%s", what);
            return EXIT_INPUT;
        }
        if (known[which].takes_value) {
            if (eq)
                val = eq + 1;
            else if (k + 1 < argc)
                val = argv[++k];
            else {
                rc_cli_usage_error("option %s needs a value", a);
                return EXIT_INPUT;
            }
        }
        if (!strcmp(known[which].name, "--batch")) {
            char *end;
            long b = strtol(val, &end, 10);
            if (*end || b < 1 || b > 1000000) {
                rc_cli_usage_error("--batch needs a positive integer (members "
                                   "per batch), got '%s'", val);
                return EXIT_INPUT;
            }
            o->batch = b;
            continue;
        }
        if (!strcmp(known[which].name, "--per-member")) {
            o->per_member = 1;
            continue;
        }
        if (!strcmp(known[which].name, "--members")) {
            /* checked against the ensemble's size once it is loaded */
            o->members = val;
            continue;
        }
        if (!strcmp(known[which].name, "--restart")) {
            o->restart = val;
            continue;
        }
        switch (known[which].bit) {
        case 0:
            o->sets[o->nsets++] = val;
            break;
        case RC_CLI_OPT_OUT:
            o->out = val;
            break;
        case RC_CLI_OPT_BACKEND:
            o->backend = val;
            break;
        case RC_CLI_OPT_METHODS:
            if (o->methods) {
                rc_cli_usage_error("%s", "--methods given twice; list every "
                                         "method in one --methods M1,M2,...");
                return EXIT_INPUT;
            }
            o->methods = val;
            break;
        case RC_CLI_OPT_THREADS: {
            char *end;
            long t = strtol(val, &end, 10);
            if (*end || t < 1 || t > 4096) {
                rc_cli_usage_error(
                    "--threads needs a positive integer, got '%s'", val);
                return EXIT_INPUT;
            }
            o->threads = (int)t;
            break;
        }
        case RC_CLI_OPT_QUIET:
            o->quiet = 1;
            break;
        }
    }
    if (o->restart && (o->scenario || o->nsets > 0)) {
        rc_cli_usage_error("%s", "--restart continues the scenario its "
                                 "checkpoint holds: give no SCENARIO and no "
                                 "--set");
        return EXIT_INPUT;
    }
    if (!o->scenario && !o->restart) {
        rc_cli_usage_error("%s", "missing SCENARIO file");
        return EXIT_INPUT;
    }
    return 0;
}

int rc_cli_members(const char *text, long n, long *first, long *end)
{
    const char *colon = strchr(text, ':');
    char *stop;
    long a = 0, b = n;
    if (!colon)
        goto bad;
    if (colon > text) {
        a = strtol(text, &stop, 10);
        if (stop != colon || text[0] == '-' || text[0] == '+')
            goto bad;
    }
    if (colon[1]) {
        b = strtol(colon + 1, &stop, 10);
        if (*stop || colon[1] == '-' || colon[1] == '+')
            goto bad;
    }
    if (a < 0 || b > n || a >= b) {
        char what[300];
        snprintf(what, sizeof what,
                 "--members %.100s: the ensemble has members 0 to %ld; A:B "
                 "runs members A to B-1 (B excluded), 0 <= A < B <= %ld",
                 text, n - 1, n);
        rc_cli_usage_error("%s", what);
        return EXIT_INPUT;
    }
    *first = a;
    *end = b;
    return 0;
bad:
    rc_cli_usage_error("--members needs A:B (members A to B-1, B excluded; "
                       "A or B may be left out), got '%s'",
                       text);
    return EXIT_INPUT;
}

int rc_cli_exit_code(int st)
{
    if (st == RC_OK)
        return EXIT_OK;
    return st == RC_ERR_PARSE || st == RC_ERR_UNSUPPORTED ? EXIT_INPUT
                                                          : EXIT_RUNTIME;
}

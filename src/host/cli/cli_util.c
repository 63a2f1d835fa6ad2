/* Helpers shared by the ricochet subcommands: error printing, the
 * progress bar and Ctrl-C handling. */
#include <signal.h>
#include <stdio.h>

#include "cli.h"

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

static void on_sigint(int sig)
{
    (void)sig;
    g_interrupted = 1;
}

void rc_cli_catch_sigint(void)
{
    signal(SIGINT, on_sigint);
}

int rc_cli_interrupted(void)
{
    return g_interrupted != 0;
}

int rc_cli_on_progress(void *ctx, long step, long total, double elapsed)
{
    rc_cli_progress *ps = (rc_cli_progress *)ctx;
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

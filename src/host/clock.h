/* Wall-clock seconds for timings and progress (monotonic).  The files
 * that include it define _POSIX_C_SOURCE for clock_gettime. */
#ifndef RC_CLOCK_H
#define RC_CLOCK_H

#include <stdio.h>
#include <time.h>

#include "ricochet/run.h"

static inline double rc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A run's progress report: at most ten calls of opt->progress a second
 * (t_last: the time of the last one); 1 when the callback asks the run
 * to stop.  The run's CSV outputs csv and csv2 (either may be NULL) are
 * flushed first, so that a status line the callback prints (the CLI's,
 * in a batch job's log) never runs ahead of the files: a run killed
 * after it leaves every row before `done` on disk (run.h). */
static inline int rc_progress_due(const rc_run_options *opt, double *t_last,
                                  long done, long total, double t0,
                                  FILE *csv, FILE *csv2)
{
    double now;
    if (!opt->progress)
        return 0;
    now = rc_now();
    if (now - *t_last < 0.1)
        return 0;
    *t_last = now;
    if (csv)
        fflush(csv);
    if (csv2)
        fflush(csv2);
    return opt->progress(opt->progress_ctx, done, total, now - t0) != 0;
}

#endif

/* Wall-clock seconds for timings and progress (monotonic).  The files
 * that include it define _POSIX_C_SOURCE for clock_gettime. */
#ifndef RC_CLOCK_H
#define RC_CLOCK_H

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
 * to stop. */
static inline int rc_progress_due(const rc_run_options *opt, double *t_last,
                                  long done, long total, double t0)
{
    double now;
    if (!opt->progress)
        return 0;
    now = rc_now();
    if (now - *t_last < 0.1)
        return 0;
    *t_last = now;
    return opt->progress(opt->progress_ctx, done, total, now - t0) != 0;
}

#endif

/* Helpers shared by the tests that run the bundled examples through the
 * scenario API as a user would (test_gvi_examples, test_baselines):
 * rc_scenario_load with overrides, rc_scenario_build, rc_system_step and
 * rc_system_diagnostics every k steps, recorded as a trace.
 *
 * CMake sets RC_EXAMPLES_DIR.  The helpers are static inline so that a
 * test that does not use one gets no unused-function warning. */
#ifndef RC_EXAMPLE_TEST_H
#define RC_EXAMPLE_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ricochet/scenario.h"
#include "ricochet/system.h"
#include "rc_test.h"

#ifndef RC_EXAMPLES_DIR
#error "RC_EXAMPLES_DIR must name the examples directory"
#endif

/* Windows of window_drift. */
#define NWIN 10

/* Wall-clock seconds (for reporting run times). */
static inline double wall_seconds(void)
{
    struct timespec ts;
    if (timespec_get(&ts, TIME_UTC) != TIME_UTC)
        return (double)clock() / CLOCKS_PER_SEC;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The samples of one run, one entry per sample in each array. */
typedef struct {
    long n, cap;
    double *t, *H, *Ht, *lz; /* time, energy, modified energy, L_z */
    double *gap, *feq;       /* min_gap, max_equality_error */
    double *q0, *p0;         /* first coordinate of particle 0 */
    int *refl;               /* reflections */
    double H0, Ht0, lz0;     /* the first sample's H, H~, L_z */
    double seconds;          /* wall time of the run */
    int ok;                  /* every sample and step succeeded */
    rc_status st;     /* RC_OK, or the status of a failed load/build/step */
    double t_fail;    /* time after the failed step (NaN if none) */
    long steps_fail;  /* steps taken after the failed step */
    char msg[2048];   /* what the failed load/build/step said */
} trace;

/* Called at every sample (after the diagnostics are recorded), for
 * example-specific checks; `sys` may be queried. */
typedef void (*sample_fn)(rc_system *sys, const rc_diagnostics *dg,
                          void *user);

static inline void trace_free(trace *tr)
{
    free(tr->t);
    free(tr->H);
    free(tr->Ht);
    free(tr->lz);
    free(tr->gap);
    free(tr->feq);
    free(tr->q0);
    free(tr->p0);
    free(tr->refl);
    memset(tr, 0, sizeof *tr);
}

/* Load examples/<file> with overrides, build, step the scenario's
 * duration and sample every `every` steps (and at the start), calling fn
 * (may be NULL) at each sample.  A failed load, build or allocation is a
 * failed check and returns 0; a failed diagnostics or state query is a
 * failed check and ends the run (ok = 0).  A failed step ends the run
 * too (ok = 0) and is recorded in st, t_fail, steps_fail and msg, not
 * checked: the caller decides.  Returns 1 when the sampling ran. */
static inline int run_trace(const char *file, const char *const *ov,
                            int nov, long every, trace *tr, sample_fn fn,
                            void *user)
{
    char path[1024];
    rc_scenario *scn = NULL;
    rc_system *sys = NULL;
    rc_scenario_run info;
    rc_error err;
    rc_diagnostics dg;
    long s, cap, todo;
    double *q, *p, t0 = wall_seconds();
    int n;
    memset(tr, 0, sizeof *tr);
    tr->t_fail = NAN;
    snprintf(path, sizeof path, "%s/%s", RC_EXAMPLES_DIR, file);
    if (rc_scenario_load(path, ov, nov, &scn, &err) != RC_OK) {
        RC_CHECK(0, "load %s: %s", file,
                 rc_error_format(&err, tr->msg, sizeof tr->msg));
        tr->st = err.status;
        return 0;
    }
    if (rc_scenario_build(scn, &sys, &err) != RC_OK) {
        RC_CHECK(0, "build %s: %s", file,
                 rc_error_format(&err, tr->msg, sizeof tr->msg));
        tr->st = err.status;
        rc_scenario_free(scn);
        return 0;
    }
    rc_scenario_run_info(scn, &info);
    cap = info.steps / every + 2;
    tr->t = (double *)malloc(sizeof(double) * (size_t)cap);
    tr->H = (double *)malloc(sizeof(double) * (size_t)cap);
    tr->Ht = (double *)malloc(sizeof(double) * (size_t)cap);
    tr->lz = (double *)malloc(sizeof(double) * (size_t)cap);
    tr->gap = (double *)malloc(sizeof(double) * (size_t)cap);
    tr->feq = (double *)malloc(sizeof(double) * (size_t)cap);
    tr->q0 = (double *)malloc(sizeof(double) * (size_t)cap);
    tr->p0 = (double *)malloc(sizeof(double) * (size_t)cap);
    tr->refl = (int *)malloc(sizeof(int) * (size_t)cap);
    tr->cap = cap;
    if (!tr->t || !tr->H || !tr->Ht || !tr->lz || !tr->gap || !tr->feq ||
        !tr->q0 || !tr->p0 || !tr->refl) {
        RC_CHECK(0, "%s: out of memory for %ld samples", file, cap);
        rc_system_free(sys);
        rc_scenario_free(scn);
        trace_free(tr);
        return 0;
    }
    n = rc_system_count(sys) * rc_system_dimension(sys);
    q = (double *)malloc(sizeof(double) * (size_t)n);
    p = (double *)malloc(sizeof(double) * (size_t)n);
    tr->ok = 1;
    for (s = 0;;) {
        if (rc_system_diagnostics(sys, &dg) != RC_OK) {
            RC_CHECK(0, "%s: diagnostics: %s", file, rc_system_message(sys));
            tr->ok = 0;
            break;
        }
        if (!q || !p || rc_system_get_state(sys, q, p) != RC_OK) {
            RC_CHECK(0, "%s: get_state failed", file);
            tr->ok = 0;
            break;
        }
        tr->t[tr->n] = dg.time;
        tr->H[tr->n] = dg.energy;
        tr->Ht[tr->n] = dg.modified_energy;
        tr->lz[tr->n] = dg.angular_momentum[2];
        tr->gap[tr->n] = dg.min_gap;
        tr->feq[tr->n] = dg.max_equality_error;
        tr->q0[tr->n] = q[0];
        tr->p0[tr->n] = p[0];
        tr->refl[tr->n] = dg.reflections;
        tr->n++;
        if (fn)
            fn(sys, &dg, user);
        if (s >= info.steps)
            break;
        todo = info.steps - s < every ? info.steps - s : every;
        if ((tr->st = rc_system_step(sys, todo)) != RC_OK) {
            tr->t_fail = rc_system_time(sys);
            tr->steps_fail = rc_system_steps_taken(sys);
            snprintf(tr->msg, sizeof tr->msg, "%s", rc_system_message(sys));
            tr->ok = 0;
            break;
        }
        s += todo;
    }
    free(q);
    free(p);
    if (tr->n > 0) {
        tr->H0 = tr->H[0];
        tr->Ht0 = tr->Ht[0];
        tr->lz0 = tr->lz[0];
    }
    tr->seconds = wall_seconds() - t0;
    rc_system_free(sys);
    rc_scenario_free(scn);
    return 1;
}

/* Largest |mean of x - x0 over a window - the first window's|, NWIN
 * equal windows (the last absorbs the remainder); +inf for NaN or fewer
 * than NWIN samples. */
static inline double window_drift(const trace *tr, const double *x,
                                  double x0)
{
    double mean[NWIN], worst = 0.0;
    long len = tr->n / NWIN, i;
    int w;
    if (len < 1)
        return INFINITY;
    for (w = 0; w < NWIN; ++w) {
        long a = w * len, b = w == NWIN - 1 ? tr->n : (w + 1) * len;
        double s = 0.0;
        for (i = a; i < b; ++i)
            s += x[i] - x0;
        mean[w] = s / (double)(b - a);
    }
    for (w = 1; w < NWIN; ++w) {
        double e = fabs(mean[w] - mean[0]);
        if (!(e <= worst))
            worst = isfinite(e) ? e : INFINITY;
    }
    return worst;
}

/* Largest |x - x0| over the trace (NaN-safe: a NaN gives +inf). */
static inline double max_dev(const trace *tr, const double *x, double x0)
{
    double m = 0.0;
    long i;
    for (i = 0; i < tr->n; ++i) {
        double e = fabs(x[i] - x0);
        if (!(e <= m))
            m = isfinite(e) ? e : INFINITY;
    }
    return m;
}

#endif

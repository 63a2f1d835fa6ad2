/* AVI (penalty layers, per-term clocks) against GVI (reflections) on the
 * granular column and the small hard-sphere gas (issue 18).
 *
 *   bench_avi_vs_gvi [out.json]   (default bench/results/avi_vs_gvi.json;
 *                                  the table goes to stdout)
 *
 * Workloads: examples/avi_granular_column.yaml (72 spheres in a walled
 * shaft under gravity, 20 time units) and examples/avi_gas.yaml (27
 * spheres in a closed box, 200 time units), each under
 *   avi          the file's settings (layer_resolution 0.1, the default)
 *   avi-fine     layer_resolution 0.025 (layers resolved 4x finer in
 *                time; max_layers 256 since softer layers open more)
 *   gvi          generalized reflection
 *   gvi-moreau   Moreau reflection (the large-system example's choice)
 * all from the same start with the same output interval dt; and the
 * multi-rate case examples/avi_shell_plate.yaml (springs ticking at
 * 2e-6, layers from 2e-5; 0.001 time units, through the impact) under
 * avi and under gvi at dt 2e-5 and at the spring step 2e-6.
 *
 * Reported per run: energy drift per unit time (least-squares slope of
 * (H - H0)/|H0| over all output rows), max |H - H0|/|H0|, windowed drift
 * (largest difference of ten window means of (H - H0)/|H0| from the
 * first), max overlap (max(0, -min_gap) over the rows), smallest gap,
 * wall seconds per simulated time unit (median of REPEATS repeats, the
 * methods alternating within each repeat so that load from elsewhere
 * falls on all alike; the first pass is the validation and warm-up),
 * and for avi the ticks and layers.  Validation before timing: every run
 * completes, every row is finite, the repeats give the same energies bit
 * for bit.  Nothing is written when a validation fails (exit 1). */
#define _DEFAULT_SOURCE /* getloadavg */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ricochet/ricochet.h"

#define REPEATS 3
#define NWIN 10

/* One run: a workload (example file, duration) under a method (the
 * overrides). */
typedef struct {
    const char *file;
    const char *duration;
    const char *name;
    const char *ov[4];
    int nov;
} run_case;

#define AVI_FINE                                                           \
    {"integrator.method=avi", "integrator.avi.layer_resolution=0.025",     \
     "integrator.avi.max_layers=256"},                                      \
        3
static const run_case cases[] = {
    {"avi_granular_column.yaml", "20", "avi", {"integrator.method=avi"}, 1},
    {"avi_granular_column.yaml", "20", "avi-fine", AVI_FINE},
    {"avi_granular_column.yaml", "20", "gvi",
     {"integrator.method=gvi", "integrator.reflection=generalized"}, 2},
    {"avi_granular_column.yaml", "20", "gvi-moreau",
     {"integrator.method=gvi", "integrator.reflection=moreau"}, 2},
    {"avi_gas.yaml", "200", "avi", {"integrator.method=avi"}, 1},
    {"avi_gas.yaml", "200", "avi-fine", AVI_FINE},
    {"avi_gas.yaml", "200", "gvi",
     {"integrator.method=gvi", "integrator.reflection=generalized"}, 2},
    {"avi_gas.yaml", "200", "gvi-moreau",
     {"integrator.method=gvi", "integrator.reflection=moreau"}, 2},
    /* multi-rate: springs at 2e-6, contact layers from 2e-5; gvi at the
     * output step 2e-5 and at the spring step 2e-6 */
    {"avi_shell_plate.yaml", "0.001", "avi", {"integrator.method=avi"}, 1},
    {"avi_shell_plate.yaml", "0.001", "gvi dt 2e-5",
     {"integrator.method=gvi"}, 1},
    {"avi_shell_plate.yaml", "0.001", "gvi dt 2e-6",
     {"integrator.method=gvi", "integrator.dt=2e-6", "output.every=20"}, 3},
};
#define NCASE ((int)(sizeof cases / sizeof cases[0]))

typedef struct {
    int ok;
    char msg[1100];
    long rows;
    double *t, *H;
    double min_gap, seconds, sim_time;
    rc_avi_stats avi;
    int have_avi;
} result;

static double now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run_one(const run_case *w, result *r)
{
    char path[1024], dur[64];
    const char *ov[6];
    rc_scenario *scn = NULL;
    rc_system *sys = NULL;
    rc_error err;
    rc_scenario_run info;
    long s;
    int k;
    double t0;
    memset(r, 0, sizeof *r);
    snprintf(path, sizeof path, "%s/%s", RICOCHET_EXAMPLES_DIR, w->file);
    snprintf(dur, sizeof dur, "integrator.duration=%s", w->duration);
    for (k = 0; k < w->nov; ++k)
        ov[k] = w->ov[k];
    ov[w->nov] = dur;
    if (rc_scenario_load(path, ov, w->nov + 1, &scn, &err) != RC_OK ||
        rc_scenario_build(scn, &sys, &err) != RC_OK) {
        snprintf(r->msg, sizeof r->msg, "%.1000s", err.message);
        rc_scenario_free(scn);
        return 0;
    }
    rc_scenario_run_info(scn, &info);
    rc_system_set_threads(sys, 1);
    r->t = (double *)malloc(sizeof(double) * (size_t)(info.steps + 1));
    r->H = (double *)malloc(sizeof(double) * (size_t)(info.steps + 1));
    r->min_gap = INFINITY;
    t0 = now();
    for (s = 0;; ++s) {
        rc_diagnostics d;
        if (s % info.every == 0 || s == info.steps) {
            rc_system_diagnostics(sys, &d);
            r->t[r->rows] = d.time;
            r->H[r->rows++] = d.energy;
            r->min_gap = fmin(r->min_gap, d.min_gap);
        }
        if (s == info.steps)
            break;
        if (rc_system_step(sys, 1) != RC_OK) {
            snprintf(r->msg, sizeof r->msg, "%.1000s", rc_system_message(sys));
            break;
        }
    }
    r->seconds = now() - t0;
    r->sim_time = (double)s * info.dt;
    r->ok = s == info.steps;
    r->have_avi = rc_system_avi_stats(sys, &r->avi) == RC_OK;
    rc_system_free(sys);
    rc_scenario_free(scn);
    return r->ok;
}

static void result_free(result *r)
{
    free(r->t);
    free(r->H);
    r->t = r->H = NULL;
}

/* slope of (H - H0)/|H0| against t, max |.|, windowed drift */
static void energy_stats(const result *r, double *slope, double *maxrel,
                         double *wdrift)
{
    double H0 = r->H[0], sc = fabs(H0), st = 0, sy = 0, stt = 0, sty = 0;
    double mean[NWIN];
    long i, n = r->rows, len = n / NWIN;
    int w;
    *maxrel = 0.0;
    for (i = 0; i < n; ++i) {
        double y = (r->H[i] - H0) / sc;
        st += r->t[i];
        sy += y;
        stt += r->t[i] * r->t[i];
        sty += r->t[i] * y;
        *maxrel = fmax(*maxrel, fabs(y));
    }
    *slope = (n * sty - st * sy) / (n * stt - st * st);
    *wdrift = 0.0;
    for (w = 0; w < NWIN && len > 0; ++w) {
        long a = w * len, b = w == NWIN - 1 ? n : (w + 1) * len;
        double s = 0.0;
        for (i = a; i < b; ++i)
            s += (r->H[i] - H0) / sc;
        mean[w] = s / (double)(b - a);
        if (w > 0)
            *wdrift = fmax(*wdrift, fabs(mean[w] - mean[0]));
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : RICOCHET_BENCH_DIR
                          "/results/avi_vs_gvi.json";
    static result first[NCASE];
    static double secs[NCASE][REPEATS];
    double load0[3] = {0, 0, 0}, load1[3] = {0, 0, 0};
    struct utsname un;
    cJSON *root = cJSON_CreateObject(), *arr, *mach;
    int c, rep, okall = 1;
    char *text;
    FILE *f;
    getloadavg(load0, 3);
    /* validation and warm-up */
    for (c = 0; c < NCASE; ++c) {
        long i;
        if (!run_one(&cases[c], &first[c])) {
            fprintf(stderr, "%s %s failed: %s\n", cases[c].file,
                    cases[c].name, first[c].msg);
            okall = 0;
        }
        for (i = 0; i < first[c].rows; ++i)
            if (!isfinite(first[c].H[i]))
                okall = 0;
    }
    if (!okall) {
        fprintf(stderr, "validation failed: nothing written\n");
        return 1;
    }
    for (rep = 0; rep < REPEATS; ++rep)
        for (c = 0; c < NCASE; ++c) {
            result r;
            if (!run_one(&cases[c], &r) || r.rows != first[c].rows ||
                memcmp(r.H, first[c].H, sizeof(double) * (size_t)r.rows)) {
                fprintf(stderr, "%s %s: repeat %d differs from the first "
                                "run\n",
                        cases[c].file, cases[c].name, rep);
                return 1;
            }
            secs[c][rep] = r.seconds / r.sim_time;
            result_free(&r);
        }
    getloadavg(load1, 3);
    uname(&un);
    mach = cJSON_AddObjectToObject(root, "machine");
    cJSON_AddStringToObject(mach, "uname", un.machine);
    cJSON_AddStringToObject(mach, "system", un.sysname);
    cJSON_AddNumberToObject(mach, "online_cpus",
                            (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddNumberToObject(mach, "loadavg_start", load0[0]);
    cJSON_AddNumberToObject(mach, "loadavg_end", load1[0]);
    cJSON_AddNumberToObject(root, "repeats", REPEATS);
    cJSON_AddStringToObject(root, "threads", "1 (avi is sequential)");
    arr = cJSON_AddArrayToObject(root, "runs");
    printf("AVI vs GVI, 1 thread, wall time: median of %d repeats; load "
           "average %.2f at start, %.2f at end (%ld CPUs)\n",
           REPEATS, load0[0], load1[0], sysconf(_SC_NPROCESSORS_ONLN));
    printf("%-26s %-12s %11s %11s %11s %11s %11s %11s %9s %6s\n",
           "workload", "method", "drift/time", "max|dH|/H0", "win.drift",
           "max overlap", "min gap", "wall s/time", "ticks", "layers");
    for (c = 0; c < NCASE; ++c) {
        result *r = &first[c];
        double slope, maxrel, wd, med;
        cJSON *o = cJSON_CreateObject();
        energy_stats(r, &slope, &maxrel, &wd);
        qsort(secs[c], REPEATS, sizeof(double), cmp_double);
        med = secs[c][REPEATS / 2];
        cJSON_AddStringToObject(o, "workload", cases[c].file);
        cJSON_AddStringToObject(o, "method", cases[c].name);
        cJSON_AddNumberToObject(o, "simulated_time", r->sim_time);
        cJSON_AddNumberToObject(o, "rows", (double)r->rows);
        cJSON_AddNumberToObject(o, "energy_drift_per_time", slope);
        cJSON_AddNumberToObject(o, "max_rel_energy_error", maxrel);
        cJSON_AddNumberToObject(o, "windowed_drift", wd);
        cJSON_AddNumberToObject(o, "max_overlap", fmax(0.0, -r->min_gap));
        cJSON_AddNumberToObject(o, "min_gap", r->min_gap);
        cJSON_AddNumberToObject(o, "wall_seconds_per_time", med);
        if (r->have_avi) {
            cJSON_AddNumberToObject(o, "ticks", (double)r->avi.ticks);
            cJSON_AddNumberToObject(o, "layer_activations",
                                    (double)r->avi.activations);
            cJSON_AddNumberToObject(o, "deepest_layer", r->avi.deepest_layer);
        }
        cJSON_AddItemToArray(arr, o);
        printf("%-26s %-12s %11.3e %11.3e %11.3e %11.3e %11.3e %11.4g %9ld "
               "%6d\n",
               cases[c].file, cases[c].name, slope, maxrel, wd,
               fmax(0.0, -r->min_gap), r->min_gap, med,
               r->have_avi ? r->avi.ticks : 0L,
               r->have_avi ? r->avi.deepest_layer : 0);
        result_free(r);
    }
    text = cJSON_Print(root);
    f = fopen(out, "w");
    if (!f || !text) {
        fprintf(stderr, "cannot write %s\n", out);
        return 1;
    }
    fputs(text, f);
    fputc('\n', f);
    fclose(f);
    free(text);
    cJSON_Delete(root);
    printf("wrote %s\n", out);
    return 0;
}

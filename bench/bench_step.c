/* Step throughput on the CPU: Störmer–Verlet on a Lennard-Jones cluster
 * (all pairs, O(n^2)) at 1 and 2 threads, and the GVI step on the seed
 * examples.  Validates first (the threaded run must match the serial run
 * bit for bit), warms up, repeats, reports the median.
 *
 *   bench_step [out.json]      (default bench/results/cpu_step.json)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "ricochet/ricochet.h"

#define REPEATS 5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static rc_system *lj_cluster(int n, int threads)
{
    rc_system *sys = NULL;
    rc_potential_desc pd;
    rc_integrator_desc id;
    int i, side = (int)ceil(cbrt((double)n));
    rc_system_create(3, &sys);
    for (i = 0; i < n; ++i) {
        double q[3], p[3];
        q[0] = 1.12 * (i % side);
        q[1] = 1.12 * ((i / side) % side);
        q[2] = 1.12 * (i / (side * side));
        p[0] = 0.1 * sin(1.0 + i);
        p[1] = 0.1 * cos(2.0 + i);
        p[2] = 0.1 * sin(3.0 * i);
        rc_system_add_particle(sys, 1.0, 0.5, q, p, NULL);
    }
    rc_potential_desc_init(&pd, RC_POT_LENNARD_JONES);
    pd.epsilon = 1.0;
    pd.sigma = 1.0;
    pd.cutoff = 2.5;
    rc_system_add_potential(sys, &pd);
    rc_integrator_desc_init(&id);
    id.dt = 0.002;
    rc_system_set_integrator(sys, &id);
    rc_system_set_threads(sys, threads);
    return sys;
}

/* Median seconds per step over REPEATS runs of `steps` steps. */
static double time_steps(rc_system *sys, long steps)
{
    double t[REPEATS];
    int r;
    rc_system_step(sys, steps / 4 + 1); /* warm-up */
    for (r = 0; r < REPEATS; ++r) {
        double t0 = now();
        if (rc_system_step(sys, steps) != RC_OK) {
            fprintf(stderr, "bench: step failed: %s\n",
                    rc_system_message(sys));
            exit(1);
        }
        t[r] = (now() - t0) / (double)steps;
    }
    qsort(t, REPEATS, sizeof t[0], cmp);
    return t[REPEATS / 2];
}

static double time_scenario(const char *path, long steps)
{
    rc_scenario *scn = NULL;
    rc_system *sys = NULL;
    rc_error err;
    double t;
    if (rc_scenario_load(path, NULL, 0, &scn, &err) != RC_OK ||
        rc_scenario_build(scn, &sys, &err) != RC_OK) {
        char buf[2000];
        fprintf(stderr, "bench: %s\n", rc_error_format(&err, buf, sizeof buf));
        exit(1);
    }
    t = time_steps(sys, steps);
    rc_system_free(sys);
    rc_scenario_free(scn);
    return t;
}

int main(int argc, char **argv)
{
    static const int sizes[] = {64, 256, 1024};
    static const char *const examples[] = {"pogo_stick", "newtons_cradle",
                                           "nonlinear_oscillator_contact",
                                           "lj_chain"};
    const char *out = argc > 1 ? argv[1] : "bench/results/cpu_step.json";
    cJSON *root = cJSON_CreateObject(), *arr;
    struct utsname un;
    char *text;
    FILE *f;
    int s, k;
    uname(&un);
    cJSON_AddStringToObject(root, "machine", un.machine);
    cJSON_AddStringToObject(root, "kernel", un.release);
    cJSON_AddNumberToObject(root, "repeats", REPEATS);
    cJSON_AddStringToObject(root, "statistic", "median seconds per step");
    arr = cJSON_AddArrayToObject(root, "sv_lennard_jones");
    for (s = 0; s < 3; ++s) {
        int n = sizes[s];
        long steps = n <= 64 ? 2000 : n <= 256 ? 200 : 20;
        rc_system *a = lj_cluster(n, 1), *b = lj_cluster(n, 2);
        double *qa = (double *)malloc(sizeof(double) * 3 * n),
               *qb = (double *)malloc(sizeof(double) * 3 * n);
        double t1, t2;
        cJSON *o = cJSON_CreateObject();
        /* validate: threads must not change a bit */
        rc_system_step(a, 10);
        rc_system_step(b, 10);
        rc_system_get_state(a, qa, NULL);
        rc_system_get_state(b, qb, NULL);
        if (memcmp(qa, qb, sizeof(double) * 3 * n) != 0) {
            fprintf(stderr, "bench: 1- and 2-thread runs differ (n=%d)\n", n);
            return 1;
        }
        t1 = time_steps(a, steps);
        t2 = time_steps(b, steps);
        printf("SV + LJ, n = %4d: %.3e s/step (1 thread), %.3e s/step (2 "
               "threads), speed-up %.2f\n",
               n, t1, t2, t1 / t2);
        cJSON_AddNumberToObject(o, "particles", n);
        cJSON_AddNumberToObject(o, "seconds_per_step_1_thread", t1);
        cJSON_AddNumberToObject(o, "seconds_per_step_2_threads", t2);
        cJSON_AddNumberToObject(o, "speedup_2_threads", t1 / t2);
        cJSON_AddItemToArray(arr, o);
        free(qa);
        free(qb);
        rc_system_free(a);
        rc_system_free(b);
    }
    arr = cJSON_AddArrayToObject(root, "gvi_examples");
    for (k = 0; k < 4; ++k) {
        char path[512];
        double t;
        cJSON *o = cJSON_CreateObject();
        snprintf(path, sizeof path, "%s/%s.yaml", RICOCHET_EXAMPLES_DIR,
                 examples[k]);
        t = time_scenario(path, 2000);
        printf("GVI %-30s %.3e s/step\n", examples[k], t);
        cJSON_AddStringToObject(o, "example", examples[k]);
        cJSON_AddNumberToObject(o, "seconds_per_step", t);
        cJSON_AddItemToArray(arr, o);
    }
    /* ensemble throughput: the pogo ensemble, 2000 members of 500 steps,
     * on 1 and 2 threads (member-steps per second, median of 3) */
    {
        static const char *const ov[2] = {"ensemble.members=2000",
                                          "output.trace_members=[]"};
        rc_scenario *scn = NULL;
        rc_error err;
        char path[512];
        cJSON *o = cJSON_AddObjectToObject(root, "pogo_ensemble");
        int th;
        snprintf(path, sizeof path, "%s/pogo_ensemble.yaml",
                 RICOCHET_EXAMPLES_DIR);
        if (rc_scenario_load(path, ov, 2, &scn, &err) != RC_OK) {
            fprintf(stderr, "bench: %s\n", err.message);
            return 1;
        }
        cJSON_AddNumberToObject(o, "members", 2000);
        for (th = 1; th <= 2; ++th) {
            double r3[3];
            int rep;
            char key[64];
            for (rep = 0; rep < 3; ++rep) {
                rc_ensemble_options eo;
                rc_ensemble_result er;
                memset(&eo, 0, sizeof eo);
                eo.out_dir = "/tmp/rc_bench_ensemble";
                eo.threads = th;
                if (rc_ensemble_run(scn, &eo, &er, &err) != RC_OK ||
                    er.ok != 2000) {
                    fprintf(stderr, "bench: ensemble failed: %s\n",
                            err.message);
                    return 1;
                }
                r3[rep] = er.member_steps_per_second;
            }
            qsort(r3, 3, sizeof r3[0], cmp);
            printf("GVI pogo ensemble, %d thread%s: %.3e member-steps/s\n",
                   th, th > 1 ? "s" : "", r3[1]);
            snprintf(key, sizeof key, "member_steps_per_second_%d_thread%s",
                     th, th > 1 ? "s" : "");
            cJSON_AddNumberToObject(o, key, r3[1]);
        }
        rc_scenario_free(scn);
    }
    text = cJSON_Print(root);
    f = fopen(out, "w");
    if (!f) {
        perror(out);
        return 1;
    }
    fprintf(f, "%s\n", text);
    fclose(f);
    printf("wrote %s\n", out);
    free(text);
    cJSON_Delete(root);
    return 0;
}

/* Large-system throughput on the CPU: particle-steps per second of the
 * hard-sphere fluid (examples/hard_sphere_fluid.yaml through rc_run) at
 * N = 32000 and 256000, packing fraction 0.3 and 0.45, on 1 and 2
 * threads, against LAMMPS on the WCA fluid at the same N, number density
 * and step size on 1 and 2 MPI ranks (bench/peers/lammps_wca.sh).
 *
 *   bench_large_throughput [out.json]
 *       (default bench/results/large_throughput.json)
 *   RC_BENCH_STEPS=S   S steps per run instead of 100 (N = 32000) and
 *                      40 (N = 256000), for quick runs
 *
 * Each configuration: dt 0.002 at eta 0.3 and 0.001 at eta 0.45, a row
 * of observables every 20 steps, no equilibration (output.equilibrate=0;
 * the run starts from the fcc lattice either way, so the first steps see
 * fewer collisions than the molten fluid: collisions per particle-step is
 * reported so the reader can tell).  One warm-up run and 3 timed repeats,
 * the median reported.  Every run is a forked child, so the maximum
 * resident set size wait4() returns is that run's own (lattice, engine,
 * rdf, output buffers and the process image), not the largest so far.
 *
 * Validation comes first: every run, warm-up included, must end "ok"
 * with the requested steps and particles, max_rel_energy_error < 1e-10
 * and max_momentum_error < 1e-8; otherwise nothing is written (exit 1).
 *
 * Figures, from each run's summary.json:
 *   particle_steps_per_second  N x steps / loop wall time (setup excluded,
 *                              observables every 20 steps included): the
 *                              library's own figure, and the one the
 *                              targets are judged on;
 *   engine rate                N x steps / (wall - observables_and_output):
 *                              the integrator alone (rdf, msd, energy rows
 *                              and file output taken out), reported next
 *                              to it because LAMMPS with thermo 0 writes
 *                              nothing inside its timed loop.
 * LAMMPS's figure is N x steps / its "Loop time" (setup excluded). */
#define _DEFAULT_SOURCE   /* wait4 */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw, popen */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ricochet/ricochet.h"

#define REPEATS 3
#define N_CONFIGS 8
#define OUTPUT_EVERY 20
/* Elastic hard-sphere collisions conserve kinetic energy exactly; what is
 * left is rounding in the energy sums (N terms of O(1): ~1e-15 relative,
 * 3e-15 measured at N = 256000).  One wrongly reflected pair changes the
 * energy by O(kT) out of 1.5 N kT: 2.6e-6 relative at N = 256000, far
 * above this. */
#define MAX_REL_ENERGY_ERROR 1e-10
/* Total momentum starts at 0 and each collision exchanges an equal and
 * opposite impulse; rounding in the N-term sum is ~N eps ~ 1e-11 (3e-12
 * measured).  One wrong impulse is O(1). */
#define MAX_MOMENTUM_ERROR 1e-8
/* From the issue: particle-steps/s at N = 256000, eta = 0.3, 2 cores, and
 * the ratio to LAMMPS (WCA) at the same N, density and core count. */
#define TARGET_PARTICLE_STEPS_PER_SECOND 2e7
#define TARGET_RATIO_TO_LAMMPS 2.0

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Temporary output directory (removed at exit on every path).          */

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static char g_tmp[64];
static pid_t g_parent;

static void rm_tmp(void)
{
    /* children leave with _exit(), but guard anyway: only the parent
     * removes the tree */
    if (g_tmp[0] && getpid() == g_parent &&
        nftw(g_tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "bench: could not remove %s completely\n", g_tmp);
}

/* ------------------------------------------------------------------ */
/* Machine.                                                             */

static void cpu_model(char *out, size_t size)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(out, size, "unknown");
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10)) {
            char *v = strchr(line, ':');
            if (v) {
                v += 1 + (v[1] == ' ');
                v[strcspn(v, "\n")] = '\0';
                snprintf(out, size, "%s", v);
            }
            break;
        }
    }
    if (f)
        fclose(f);
}

/* 1-, 5- and 15-minute load averages from /proc/loadavg (NaN if absent). */
static void load_average(double la[3])
{
    FILE *f = fopen("/proc/loadavg", "r");
    la[0] = la[1] = la[2] = NAN;
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &la[0], &la[1], &la[2]) != 3)
            la[0] = la[1] = la[2] = NAN;
        fclose(f);
    }
}

static double mem_total_gib(void)
{
    char line[256];
    double kib = NAN;
    FILE *f = fopen("/proc/meminfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %lf kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib / (1024.0 * 1024.0);
}

/* ------------------------------------------------------------------ */
/* One ricochet run in a child process.                                 */

typedef struct run_rec {
    char status[32], message[512];
    long steps, particles, threads;
    double rate;          /* summary particle_steps_per_second */
    double wall;          /* summary wall_seconds (the step loop) */
    double sec[5];        /* summary seconds, in the order of kSplit */
    double bytes_per_particle, collisions, emax, pmax;
    double z_mean, z_err, z_cs;
    double child_seconds; /* fork to exit: setup + loop + summary */
    long maxrss_kib;      /* the child's ru_maxrss */
    char version[32];
} run_rec;

static const char *const kSplit[5] = {
    "predictor_and_update", "broadphase", "contacts_and_islands",
    "reflections", "observables_and_output"};

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(j) ? j->valuedouble : NAN;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long size;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 &&
        (buf = (char *)malloc((size_t)size + 1)) != NULL) {
        if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
            free(buf);
            buf = NULL;
        } else {
            buf[size] = '\0';
        }
    }
    fclose(f);
    return buf;
}

/* Fill r from dir/summary.json (or summary.json.partial after a failed
 * run, for its status and message); -1 when neither can be read. */
static int read_summary(const char *dir, run_rec *r)
{
    char path[600];
    char *text;
    cJSON *root, *o;
    const cJSON *j;
    int k;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (!(text = slurp(path))) {
        snprintf(path, sizeof path, "%s/summary.json.partial", dir);
        text = slurp(path);
    }
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!root)
        return -1;
    j = cJSON_GetObjectItemCaseSensitive(root, "status");
    snprintf(r->status, sizeof r->status, "%s",
             cJSON_IsString(j) ? j->valuestring : "?");
    j = cJSON_GetObjectItemCaseSensitive(root, "message");
    if (cJSON_IsString(j))
        snprintf(r->message, sizeof r->message, "%s", j->valuestring);
    j = cJSON_GetObjectItemCaseSensitive(root, "ricochet_version");
    snprintf(r->version, sizeof r->version, "%s",
             cJSON_IsString(j) ? j->valuestring : "?");
    r->steps = (long)jnum(root, "steps");
    r->particles = (long)jnum(root, "particles");
    r->threads = (long)jnum(root, "threads");
    r->rate = jnum(root, "particle_steps_per_second");
    r->wall = jnum(root, "wall_seconds");
    o = cJSON_GetObjectItemCaseSensitive(root, "seconds");
    for (k = 0; k < 5; ++k)
        r->sec[k] = jnum(o, kSplit[k]);
    r->bytes_per_particle = jnum(root, "engine_bytes_per_particle");
    r->collisions = jnum(root, "collisions");
    r->emax = jnum(root, "max_rel_energy_error");
    r->pmax = jnum(root, "max_momentum_error");
    o = cJSON_GetObjectItemCaseSensitive(root, "compressibility_factor");
    r->z_mean = jnum(o, "mean");
    r->z_err = jnum(o, "stderr");
    r->z_cs = jnum(o, "carnahan_starling");
    cJSON_Delete(root);
    return 0;
}

/* Run scn into dir on `threads` threads in a forked child; the parent
 * starts no OpenMP threads, so the child's runtime starts clean. */
static int run_child(const rc_scenario *scn, const char *dir, int threads,
                     run_rec *r)
{
    struct rusage ru;
    int wst = 0;
    pid_t pid;
    double t0;
    memset(r, 0, sizeof *r);
    snprintf(r->status, sizeof r->status, "not run");
    fflush(NULL); /* no buffered text duplicated into the child */
    t0 = now();
    pid = fork();
    if (pid < 0) {
        perror("bench: fork");
        return -1;
    }
    if (pid == 0) {
        rc_run_options opt;
        rc_run_result res;
        rc_error err;
        memset(&opt, 0, sizeof opt); /* zero = default for later fields */
        memset(&err, 0, sizeof err);
        opt.out_dir = dir;
        opt.backend = RC_BACKEND_CPU;
        opt.threads = threads;
        if (rc_run(scn, &opt, &res, &err) != RC_OK) {
            char buf[2600];
            fprintf(stderr, "bench: run in %s: %s\n", dir,
                    rc_error_format(&err, buf, sizeof buf));
            fflush(stderr);
            _exit(1);
        }
        _exit(0);
    }
    while (wait4(pid, &wst, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("bench: wait4");
            return -1;
        }
    }
    r->child_seconds = now() - t0;
    if (read_summary(dir, r) != 0)
        snprintf(r->message, sizeof r->message, "no summary.json in %s", dir);
    r->maxrss_kib = ru.ru_maxrss; /* KiB on Linux */
    if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
        if (!strcmp(r->status, "ok"))
            snprintf(r->status, sizeof r->status, "failed");
        if (!r->message[0])
            snprintf(r->message, sizeof r->message,
                     "child %s %d", WIFEXITED(wst) ? "exit" : "signal",
                     WIFEXITED(wst) ? WEXITSTATUS(wst) : WTERMSIG(wst));
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Configurations.                                                      */

typedef struct config {
    long n;
    double eta, dt;
    int threads;
    long steps;
    run_rec rep[REPEATS + 1]; /* [0] warm-up */
    int med;                  /* index into rep of the median rate */
    long maxrss_kib;          /* largest over all its runs */
    double engine_rate;       /* of the median run */
    /* LAMMPS at the same n, eta, ranks = threads */
    int lammps_ok;
    double lammps_rate, lammps_loop;
} config;

static int validate(const config *c, const run_rec *r, const char *which)
{
    /* NaN fails every comparison below */
    if (strcmp(r->status, "ok") != 0 || r->steps != c->steps ||
        r->particles != c->n || r->threads != c->threads ||
        !(r->emax < MAX_REL_ENERGY_ERROR) || !(r->pmax < MAX_MOMENTUM_ERROR) ||
        !(r->rate > 0.0)) {
        fprintf(stderr,
                "bench: N %ld eta %g threads %d (%s): status %s%s%s, steps "
                "%ld of %ld, particles %ld, threads %ld, max rel energy "
                "error %.3e (< %g), max momentum error %.3e (< %g)\n",
                c->n, c->eta, c->threads, which, r->status,
                r->message[0] ? ": " : "", r->message, r->steps, c->steps,
                r->particles, r->threads, r->emax, MAX_REL_ENERGY_ERROR,
                r->pmax, MAX_MOMENTUM_ERROR);
        return -1;
    }
    return 0;
}

static int by_rate(const run_rec *a, const run_rec *b)
{
    return (a->rate > b->rate) - (a->rate < b->rate);
}

/* ------------------------------------------------------------------ */
/* LAMMPS peer.                                                         */

/* Run the peer script once; 0 ok (*rate, *loop, version set), 77 LAMMPS
 * not installed, -1 failure. */
static int lammps_once(const char *script, long n, double eta, int ranks,
                       long steps, double *rate, double *loop, char *version,
                       size_t vsize)
{
    char cmd[1400], line[2048] = "";
    FILE *p;
    int st, got = 0;
    cJSON *j;
    snprintf(cmd, sizeof cmd, "'%s' %ld %g %d %ld", script, n, eta, ranks,
             steps);
    fflush(NULL);
    if (!(p = popen(cmd, "r"))) {
        perror("bench: popen");
        return -1;
    }
    {
        /* the JSON line is the script's only stdout; keep the last one */
        char buf[2048];
        while (fgets(buf, sizeof buf, p))
            if (buf[0] == '{') {
                snprintf(line, sizeof line, "%s", buf);
                got = 1;
            }
    }
    st = pclose(p);
    if (st == -1 || !WIFEXITED(st))
        return -1;
    if (WEXITSTATUS(st) == 77)
        return 77;
    if (WEXITSTATUS(st) != 0)
        return -1;
    if (!got || !(j = cJSON_Parse(line)))
        return -1;
    *rate = jnum(j, "atom_steps_per_second");
    *loop = jnum(j, "loop_seconds");
    {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "lammps_version");
        if (cJSON_IsString(v))
            snprintf(version, vsize, "%s", v->valuestring);
    }
    st = jnum(j, "n") == (double)n && jnum(j, "ranks") == (double)ranks &&
                 jnum(j, "steps") == (double)steps && *rate > 0.0
             ? 0
             : -1;
    cJSON_Delete(j);
    return st;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------------ */

static cJSON *run_json(const run_rec *r, long n, long steps)
{
    cJSON *o = cJSON_CreateObject(), *s;
    int k;
    cJSON_AddNumberToObject(o, "particle_steps_per_second", r->rate);
    cJSON_AddNumberToObject(o, "engine_particle_steps_per_second",
                            (double)n * steps / (r->wall - r->sec[4]));
    cJSON_AddNumberToObject(o, "wall_seconds", r->wall);
    cJSON_AddNumberToObject(o, "process_seconds", r->child_seconds);
    cJSON_AddNumberToObject(o, "max_rss_bytes", 1024.0 * (double)r->maxrss_kib);
    s = cJSON_AddObjectToObject(o, "seconds");
    for (k = 0; k < 5; ++k)
        cJSON_AddNumberToObject(s, kSplit[k], r->sec[k]);
    cJSON_AddNumberToObject(o, "collisions", r->collisions);
    cJSON_AddNumberToObject(o, "max_rel_energy_error", r->emax);
    cJSON_AddNumberToObject(o, "max_momentum_error", r->pmax);
    return o;
}

static void add_num_or_null(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1]
                               : "bench/results/large_throughput.json";
    const char *env = getenv("RC_BENCH_STEPS");
    const char *script = RICOCHET_BENCH_DIR "/peers/lammps_wca.sh";
    char tmp[] = "/tmp/rc_bench_large_XXXXXX", scn_path[512], cpu[256],
         lammps_version[128] = "", version[32] = "?", lammps_why[256] = "";
    static const long sizes[2] = {32000, 256000};
    static const long default_steps[2] = {100, 40};
    static const double etas[2] = {0.3, 0.45}, dts[2] = {0.002, 0.001};
    config cfg[N_CONFIGS];
    long steps_override = 0;
    int ci, k, lammps_state = 0; /* 0 not tried, 1 ok, 77 absent, -1 failed */
    double la0[3], la1[3], t_start, t_total;
    struct utsname un;
    cJSON *root, *o, *arr;
    char *text;
    FILE *f;

    t_start = now();
    load_average(la0);
    g_parent = getpid();
    snprintf(scn_path, sizeof scn_path, "%s/hard_sphere_fluid.yaml",
             RICOCHET_EXAMPLES_DIR);
    if (env && *env) {
        char *end;
        steps_override = strtol(env, &end, 10);
        if (*end || steps_override < 1) {
            fprintf(stderr, "bench: RC_BENCH_STEPS must be a positive "
                            "integer\n");
            return 1;
        }
    }
    if (!mkdtemp(tmp)) {
        perror("bench: mkdtemp");
        return 1;
    }
    snprintf(g_tmp, sizeof g_tmp, "%s", tmp);
    atexit(rm_tmp);

    /* configurations, smallest first */
    memset(cfg, 0, sizeof cfg);
    for (ci = 0; ci < N_CONFIGS; ++ci) {
        config *c = &cfg[ci];
        c->n = sizes[ci / 4];
        c->eta = etas[(ci / 2) % 2];
        c->dt = dts[(ci / 2) % 2];
        c->threads = 1 + ci % 2;
        c->steps = steps_override ? steps_override : default_steps[ci / 4];
    }
    printf("hard-sphere fluid (%s), runs in %s; load average %.2f %.2f "
           "%.2f\n",
           scn_path, tmp, la0[0], la0[1], la0[2]);

    /* 1. ricochet: warm-up + REPEATS per configuration, each validated */
    for (ci = 0; ci < N_CONFIGS; ++ci) {
        config *c = &cfg[ci];
        char ov[6][96], dir[128];
        const char *ovs[6];
        rc_scenario *scn = NULL;
        rc_scenario_run info;
        rc_error err;
        int rep;
        run_rec sorted[REPEATS];
        snprintf(ov[0], sizeof ov[0], "lattice.n=%ld", c->n);
        snprintf(ov[1], sizeof ov[1], "lattice.packing_fraction=%.17g",
                 c->eta);
        snprintf(ov[2], sizeof ov[2], "integrator.dt=%.17g", c->dt);
        snprintf(ov[3], sizeof ov[3], "integrator.duration=%.17g",
                 (double)c->steps * c->dt);
        snprintf(ov[4], sizeof ov[4], "output.equilibrate=0");
        snprintf(ov[5], sizeof ov[5], "output.every=%d", OUTPUT_EVERY);
        for (k = 0; k < 6; ++k)
            ovs[k] = ov[k];
        if (rc_scenario_load(scn_path, ovs, 6, &scn, &err) != RC_OK) {
            char buf[2600];
            fprintf(stderr, "bench: %s: %s\n", scn_path,
                    rc_error_format(&err, buf, sizeof buf));
            return 1;
        }
        rc_scenario_run_info(scn, &info);
        if (!rc_scenario_is_large_system(scn) || info.steps != c->steps ||
            info.every != OUTPUT_EVERY || info.dt != c->dt) {
            fprintf(stderr, "bench: scenario gives %ld steps every %ld "
                            "(dt %g), expected %ld every %d (dt %g) in a box\n",
                    info.steps, info.every, info.dt, c->steps, OUTPUT_EVERY,
                    c->dt);
            rc_scenario_free(scn);
            return 1;
        }
        snprintf(dir, sizeof dir, "%s/n%ld_eta%g_t%d", tmp, c->n, c->eta,
                 c->threads);
        for (rep = 0; rep <= REPEATS; ++rep) {
            run_rec *r = &c->rep[rep];
            if (run_child(scn, dir, c->threads, r) != 0 ||
                validate(c, r, rep ? "timed run" : "warm-up") != 0) {
                fprintf(stderr, "bench: validation failed; nothing "
                                "written\n");
                rc_scenario_free(scn);
                return 1;
            }
            if (r->maxrss_kib > c->maxrss_kib)
                c->maxrss_kib = r->maxrss_kib;
            snprintf(version, sizeof version, "%s", r->version);
        }
        rc_scenario_free(scn);
        /* median of the timed repeats by rate */
        for (rep = 0; rep < REPEATS; ++rep)
            sorted[rep] = c->rep[rep + 1];
        for (rep = 1; rep < REPEATS; ++rep) { /* insertion sort, 3 items */
            run_rec x = sorted[rep];
            int m = rep - 1;
            while (m >= 0 && by_rate(&sorted[m], &x) > 0) {
                sorted[m + 1] = sorted[m];
                --m;
            }
            sorted[m + 1] = x;
        }
        for (rep = 1; rep <= REPEATS; ++rep)
            if (c->rep[rep].rate == sorted[REPEATS / 2].rate)
                c->med = rep;
        {
            const run_rec *m = &c->rep[c->med];
            c->engine_rate = (double)c->n * c->steps / (m->wall - m->sec[4]);
            printf("N %6ld  eta %.2f  %d thread%s  %3ld steps: %.4g "
                   "particle-steps/s (engine %.4g), max RSS %.0f MiB, "
                   "%.1f s per run incl. setup\n",
                   c->n, c->eta, c->threads, c->threads > 1 ? "s" : " ",
                   c->steps, m->rate, c->engine_rate,
                   (double)c->maxrss_kib / 1024.0, m->child_seconds);
        }
    }

    /* 2. LAMMPS, same N, density, dt and steps; ranks = threads */
    for (ci = 0; ci < N_CONFIGS && lammps_state >= 0; ++ci) {
        config *c = &cfg[ci];
        double r[REPEATS], l[REPEATS];
        int rep, st = 0;
        /* warm-up (rep -1), then REPEATS */
        for (rep = -1; rep < REPEATS; ++rep) {
            double rate = NAN, loop = NAN;
            st = lammps_once(script, c->n, c->eta, c->threads, c->steps,
                             &rate, &loop, lammps_version,
                             sizeof lammps_version);
            if (st != 0)
                break;
            if (rep >= 0) {
                r[rep] = rate;
                l[rep] = loop;
            }
        }
        if (st == 77) {
            lammps_state = 77;
            snprintf(lammps_why, sizeof lammps_why,
                     "not installed (%s exited 77: no lmp)", script);
            printf("LAMMPS: not installed; no ratio\n");
            break;
        }
        if (st != 0) {
            lammps_state = -1;
            snprintf(lammps_why, sizeof lammps_why,
                     "failed at N %ld eta %g ranks %d (%s)", c->n, c->eta,
                     c->threads, script);
            fprintf(stderr, "bench: LAMMPS %s\n", lammps_why);
            break;
        }
        qsort(r, REPEATS, sizeof r[0], cmp_d);
        qsort(l, REPEATS, sizeof l[0], cmp_d);
        c->lammps_ok = 1;
        c->lammps_rate = r[REPEATS / 2];
        c->lammps_loop = l[REPEATS / 2];
        lammps_state = 1;
        printf("LAMMPS WCA N %6ld  eta %.2f  %d rank%s: %.4g atom-steps/s\n",
               c->n, c->eta, c->threads, c->threads > 1 ? "s" : " ",
               c->lammps_rate);
    }
    load_average(la1);
    t_total = now() - t_start;

    /* 3. table */
    printf("\n%6s %5s %3s %5s %11s %11s %6s %6s %6s %6s %6s %7s %8s %9s "
           "%11s %7s %7s\n",
           "N", "eta", "thr", "steps", "p-steps/s", "engine/s", "upd%",
           "broad%", "cont%", "refl%", "obs%", "B/part", "RSS MiB",
           "coll/p-st", "LAMMPS/s", "ratio", "ratio_e");
    for (ci = 0; ci < N_CONFIGS; ++ci) {
        const config *c = &cfg[ci];
        const run_rec *m = &c->rep[c->med];
        printf("%6ld %5.2f %3d %5ld %11.4g %11.4g %6.1f %6.1f %6.1f %6.1f "
               "%6.1f %7.1f %8.1f %9.3e ",
               c->n, c->eta, c->threads, c->steps, m->rate, c->engine_rate,
               100 * m->sec[0] / m->wall, 100 * m->sec[1] / m->wall,
               100 * m->sec[2] / m->wall, 100 * m->sec[3] / m->wall,
               100 * m->sec[4] / m->wall, m->bytes_per_particle,
               (double)c->maxrss_kib / 1024.0,
               m->collisions / ((double)c->n * c->steps));
        if (c->lammps_ok)
            printf("%11.4g %7.3f %7.3f\n", c->lammps_rate,
                   m->rate / c->lammps_rate, c->engine_rate / c->lammps_rate);
        else
            printf("%11s %7s %7s\n", "-", "-", "-");
    }
    printf("(p-steps/s: summary.json particle_steps_per_second, observables "
           "every %d steps included; engine/s: without observables_and_"
           "output; ratio, ratio_e: each over LAMMPS at ranks = threads)\n",
           OUTPUT_EVERY);

    uname(&un);
    cpu_model(cpu, sizeof cpu);
    root = cJSON_CreateObject();
    o = cJSON_AddObjectToObject(root, "machine");
    cJSON_AddStringToObject(o, "machine", un.machine);
    cJSON_AddStringToObject(o, "system", un.sysname);
    cJSON_AddStringToObject(o, "kernel", un.release);
    cJSON_AddStringToObject(o, "cpu_model", cpu);
    cJSON_AddNumberToObject(o, "online_cpus",
                            (double)sysconf(_SC_NPROCESSORS_ONLN));
    add_num_or_null(o, "memory_gib", mem_total_gib());
    cJSON_AddItemToObject(o, "load_average_start",
                          cJSON_CreateDoubleArray(la0, 3));
    cJSON_AddItemToObject(o, "load_average_end",
                          cJSON_CreateDoubleArray(la1, 3));
    cJSON_AddStringToObject(o, "load_note",
                            "1-, 5- and 15-minute load averages from "
                            "/proc/loadavg; the machine is shared, so "
                            "2-thread figures are sensitive to other load");
    cJSON_AddStringToObject(root, "ricochet_version", version);
    cJSON_AddStringToObject(root, "scenario", "examples/hard_sphere_fluid.yaml");
    cJSON_AddStringToObject(root, "overrides",
                            "lattice.n, lattice.packing_fraction, "
                            "integrator.dt, integrator.duration = steps x "
                            "dt, output.equilibrate=0, output.every=20");
    cJSON_AddStringToObject(root, "backend", "cpu");
    cJSON_AddNumberToObject(root, "repeats", REPEATS);
    cJSON_AddStringToObject(root, "statistic",
                            "median of 3 timed runs after 1 warm-up; each "
                            "run a forked process");
    cJSON_AddBoolToObject(root, "steps_overridden", steps_override != 0);
    cJSON_AddNumberToObject(root, "total_seconds", t_total);
    o = cJSON_AddObjectToObject(root, "validation");
    cJSON_AddStringToObject(o, "checked",
                            "every run (warm-up included): status ok, "
                            "requested steps, particles and threads");
    cJSON_AddNumberToObject(o, "max_rel_energy_error_below",
                            MAX_REL_ENERGY_ERROR);
    cJSON_AddNumberToObject(o, "max_momentum_error_below", MAX_MOMENTUM_ERROR);
    cJSON_AddBoolToObject(o, "passed", 1);
    cJSON_AddStringToObject(root, "note",
                            "runs start from the fcc lattice (no "
                            "equilibration), so collisions per particle-step "
                            "are those of the first steps of melting, not of "
                            "the equilibrium fluid; the compressibility "
                            "factor is likewise not an equation-of-state "
                            "value");

    arr = cJSON_AddArrayToObject(root, "configurations");
    for (ci = 0; ci < N_CONFIGS; ++ci) {
        const config *c = &cfg[ci];
        const run_rec *m = &c->rep[c->med];
        cJSON *e = cJSON_CreateObject(), *s, *runs;
        cJSON_AddNumberToObject(e, "n", (double)c->n);
        cJSON_AddNumberToObject(e, "packing_fraction", c->eta);
        cJSON_AddNumberToObject(e, "threads", c->threads);
        cJSON_AddNumberToObject(e, "dt", c->dt);
        cJSON_AddNumberToObject(e, "steps", (double)c->steps);
        cJSON_AddNumberToObject(e, "output_every", OUTPUT_EVERY);
        cJSON_AddNumberToObject(e, "particle_steps_per_second", m->rate);
        cJSON_AddNumberToObject(e, "engine_particle_steps_per_second",
                                c->engine_rate);
        cJSON_AddNumberToObject(e, "wall_seconds", m->wall);
        s = cJSON_AddObjectToObject(e, "seconds");
        for (k = 0; k < 5; ++k)
            cJSON_AddNumberToObject(s, kSplit[k], m->sec[k]);
        cJSON_AddNumberToObject(e, "observables_fraction", m->sec[4] / m->wall);
        cJSON_AddNumberToObject(e, "engine_bytes_per_particle",
                                m->bytes_per_particle);
        cJSON_AddNumberToObject(e, "max_rss_bytes",
                                1024.0 * (double)c->maxrss_kib);
        cJSON_AddNumberToObject(e, "max_rss_bytes_per_particle",
                                1024.0 * (double)c->maxrss_kib / (double)c->n);
        cJSON_AddNumberToObject(e, "collisions", m->collisions);
        cJSON_AddNumberToObject(e, "collisions_per_particle_step",
                                m->collisions / ((double)c->n * c->steps));
        cJSON_AddNumberToObject(e, "max_rel_energy_error", m->emax);
        cJSON_AddNumberToObject(e, "max_momentum_error", m->pmax);
        s = cJSON_AddObjectToObject(e, "compressibility_factor");
        add_num_or_null(s, "mean", m->z_mean);
        add_num_or_null(s, "stderr", m->z_err);
        add_num_or_null(s, "carnahan_starling", m->z_cs);
        if (c->lammps_ok) {
            s = cJSON_AddObjectToObject(e, "lammps");
            cJSON_AddNumberToObject(s, "ranks", c->threads);
            cJSON_AddNumberToObject(s, "atom_steps_per_second", c->lammps_rate);
            cJSON_AddNumberToObject(s, "loop_seconds", c->lammps_loop);
            cJSON_AddNumberToObject(s, "ratio_ricochet_to_lammps",
                                    m->rate / c->lammps_rate);
            cJSON_AddNumberToObject(s, "ratio_engine_to_lammps",
                                    c->engine_rate / c->lammps_rate);
        }
        runs = cJSON_AddArrayToObject(e, "timed_runs");
        for (k = 1; k <= REPEATS; ++k)
            cJSON_AddItemToArray(runs, run_json(&c->rep[k], c->n, c->steps));
        cJSON_AddItemToObject(e, "warm_up",
                              run_json(&c->rep[0], c->n, c->steps));
        cJSON_AddItemToArray(arr, e);
    }

    /* targets: judged on the library's particle_steps_per_second; the
     * engine-only figure is given beside it, never in its place */
    o = cJSON_AddObjectToObject(root, "targets");
    {
        const config *h = &cfg[5]; /* N 256000, eta 0.3, 2 threads */
        cJSON *t = cJSON_AddObjectToObject(o, "throughput");
        int met = h->rep[h->med].rate >= TARGET_PARTICLE_STEPS_PER_SECOND;
        cJSON_AddStringToObject(t, "what",
                                "particle-steps/s at N = 256000, eta = 0.3, "
                                "2 threads");
        cJSON_AddNumberToObject(t, "target", TARGET_PARTICLE_STEPS_PER_SECOND);
        cJSON_AddNumberToObject(t, "measured", h->rep[h->med].rate);
        cJSON_AddNumberToObject(t, "measured_engine_only", h->engine_rate);
        cJSON_AddStringToObject(t, "status", met ? "met" : "not met");
        printf("target %.0e particle-steps/s at N 256000, eta 0.3, 2 "
               "threads: %.4g (engine only %.4g): %s\n",
               TARGET_PARTICLE_STEPS_PER_SECOND, h->rep[h->med].rate,
               h->engine_rate, met ? "met" : "not met");
        t = cJSON_AddObjectToObject(o, "ratio_to_lammps");
        cJSON_AddStringToObject(t, "what",
                                "ricochet / LAMMPS WCA particle-steps/s at "
                                "the same N and density, threads = MPI "
                                "ranks, at every configuration");
        cJSON_AddNumberToObject(t, "target", TARGET_RATIO_TO_LAMMPS);
        if (lammps_state == 1) {
            double worst = INFINITY, worst_e = INFINITY;
            for (ci = 0; ci < N_CONFIGS; ++ci) {
                worst = fmin(worst, cfg[ci].rep[cfg[ci].med].rate /
                                        cfg[ci].lammps_rate);
                worst_e = fmin(worst_e,
                               cfg[ci].engine_rate / cfg[ci].lammps_rate);
            }
            cJSON_AddNumberToObject(t, "smallest_ratio", worst);
            cJSON_AddNumberToObject(t, "smallest_ratio_engine_only", worst_e);
            cJSON_AddNumberToObject(
                t, "ratio_at_256000_eta_0.3_2_threads",
                h->rep[h->med].rate / h->lammps_rate);
            cJSON_AddStringToObject(t, "status",
                                    worst >= TARGET_RATIO_TO_LAMMPS
                                        ? "met"
                                        : "not met");
            printf("target %.0fx LAMMPS at every configuration: smallest "
                   "ratio %.3f (engine only %.3f): %s\n",
                   TARGET_RATIO_TO_LAMMPS, worst, worst_e,
                   worst >= TARGET_RATIO_TO_LAMMPS ? "met" : "not met");
        } else {
            cJSON_AddStringToObject(t, "status", "not measured");
            printf("target %.0fx LAMMPS: not measured (LAMMPS %s)\n",
                   TARGET_RATIO_TO_LAMMPS, lammps_why);
        }
    }
    if (lammps_state == 1) {
        o = cJSON_AddObjectToObject(root, "lammps");
        cJSON_AddStringToObject(o, "version", lammps_version);
        cJSON_AddStringToObject(o, "script", "bench/peers/lammps_wca.sh");
        cJSON_AddStringToObject(o, "model",
                                "WCA: lj/cut 2^(1/6) sigma, shifted; fcc at "
                                "rho = 6 eta / pi, T = 1, neighbor 0.3 bin "
                                "every 1 check yes, fix nve, thermo 0; "
                                "mpirun --bind-to none, OMP_NUM_THREADS=1");
        cJSON_AddStringToObject(o, "statistic",
                                "median of 3 loop times after 1 warm-up");
    } else {
        cJSON_AddStringToObject(root, "lammps",
                                lammps_state == 77 ? "not installed"
                                                   : lammps_why);
    }
    {
        cJSON *t = cJSON_AddObjectToObject(root, "timing_note");
        cJSON_AddStringToObject(t, "ricochet",
                                "particle_steps_per_second = N x steps / "
                                "step-loop wall time (setup excluded, "
                                "observables every 20 steps included); "
                                "engine = without observables_and_output");
        cJSON_AddStringToObject(t, "lammps",
                                "N x steps / LAMMPS Loop time (setup "
                                "excluded; thermo 0 writes nothing in the "
                                "loop)");
    }

    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text || !(f = fopen(out, "w"))) {
        perror(out);
        free(text);
        return 1;
    }
    fprintf(f, "%s\n", text);
    fclose(f);
    free(text);
    printf("load average %.2f %.2f %.2f at start, %.2f %.2f %.2f at end; "
           "%.0f s in all; wrote %s\n",
           la0[0], la0[1], la0[2], la1[0], la1[1], la1[2], t_total, out);
    return 0;
}

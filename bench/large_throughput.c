/* Large-system throughput on the CPU, side by side with the peers, in one
 * run: ricochet's hard-sphere fluid (examples/hard_sphere_fluid.yaml
 * through rc_run, in forked children) against DynamO (event-driven hard
 * spheres, bench/peers/dynamo_hs.sh) at equal accuracy, and against LAMMPS
 * (the WCA fluid, bench/peers/lammps_wca.sh) per step.
 *
 *   bench_large_throughput [options] [out.json]
 *     out.json        default bench/results/large_throughput.json (with
 *                     --quick: /tmp/large_throughput_quick.json); the
 *                     printed table also goes to the same name with .txt
 *     --quick         a smoke run: per-step section at N = 32000, DynamO
 *                     section at N = 4000, 4 tau, 1 repeat, 40 steps
 *     --repeats R     timed repeats per figure (default 3; env
 *                     RC_BENCH_REPEATS)
 *     --sizes N1,N2   per-step section sizes, 4 k^3 each (default 256000;
 *                     env RC_BENCH_SIZES)
 *     --steps S       steps per per-step run (default 100; env
 *                     RC_BENCH_STEPS)
 *     --every E       output.every of the per-step runs (default 20)
 *     --rdf-every G   output.rdf_every of the per-step runs (default: the
 *                     run's steps, one g(r) sample at its end; 0: none;
 *                     -1: the scenario's default, as many samples as
 *                     hold 10^6 distances, up to 10: one at 256 000)
 *     --dynamo-n N    DynamO section size (default 32000; env
 *                     RC_BENCH_DYNAMO_N)
 *     --sim-time T    DynamO section simulated time after equilibration
 *                     (default 16 tau; env RC_BENCH_SIM_TIME)
 *     --equil-time T  equilibration before it, both codes (default 2 tau,
 *                     about 20 Enskog mean free times at eta = 0.3)
 *     --melt-time T   per-step section: melt the lattice for T tau before
 *                     the timed runs (default 1; 0: start them from the
 *                     fcc lattice, as this bench did before)
 *     --dts a,b,...   ricochet step sizes tried for the DynamO section
 *                     (default 0.005,0.01,0.02,0.04,0.08)
 *     --no-dynamo, --no-lammps   leave a peer out (the JSON says so)
 *   DynamO binaries: env RICOCHET_DYNAMO (the directory holding dynarun and
 *   dynamod); else, when RICOCHET_DYNAMO_SRC names a DynamO source tree,
 *   bench/peers/build_dynamo.sh builds it into RICOCHET_DYNAMO_BUILD
 *   (default SRC/../dynamo-build); else /work/peers/dynamo-build.  Missing
 *   or unbuildable: the DynamO peer is skipped with a message and the JSON
 *   says "skipped" and why.  LAMMPS: `lmp` on the PATH (Debian: apt-get
 *   install lammps); missing: skipped likewise.
 *
 * 1. Equal accuracy against DynamO (N = 32000, eta = 0.3, 1 thread each).
 *    ricochet runs with exact collision times (integrator.collisions:
 *    exact: impacts at their times within a step, so Z has no dt bias and
 *    dt is free to be chosen for speed).  A dt scan first: one run of
 *    equil-time tau from the fcc lattice at each of the --dts, in
 *    increasing order, stopping once one is less than half as fast as the
 *    best so far; the fastest run that succeeds (validated as below) gives
 *    the dt.  Then, alternating, R times: ricochet for equil + sim tau
 *    (output.equilibrate = equil, Z averaged over the rows after it, rows
 *    about 0.2 tau apart, g(r) sparse: output.rdf_every = steps in about
 *    2 tau when the scenario loader knows the key, otherwise its own
 *    default of about 20 samples), and DynamO (dynamo_hs.sh: untimed
 *    equilibration of the same length from its own fcc start, then sim
 *    tau timed by DynamO's own loop timer).  Figures, medians over the
 *    repeats: particle-tau per wall second, ricochet N x (equil + sim) /
 *    its step-loop wall time (equilibration included, setup excluded;
 *    the engine-only figure also takes out the summary's
 *    observables_and_output), DynamO N x sim / its loop time; Z (and
 *    ricochet's block-averaged stderr) against 3.984, within 0.5 % or
 *    not.
 * 2. Per step against LAMMPS at each --sizes N, eta = 0.3 (dt 0.002) and
 *    0.45 (dt 0.001), ricochet in its default collision mode (exact) on 1
 *    and 2 threads and LAMMPS on as many MPI ranks: a warm-up of each, then
 *    R repeats alternating ricochet and LAMMPS; medians.  ricochet:
 *    particle_steps_per_second of summary.json (N x steps / step-loop wall
 *    time, observables every E steps and g(r) per --rdf-every included;
 *    LAMMPS computes neither) and the engine-only
 *    figure; LAMMPS: N x steps / its Loop time.  ricochet starts from the
 *    molten fluid: per (N, eta) the fcc lattice is run for --melt-time tau
 *    first (exact collisions, dt 0.01, 2 threads, untimed, last frame
 *    written as xyz) and the timed runs read those positions with fresh
 *    Maxwell-Boltzmann velocities (a scenario written to the temporary
 *    directory); from the lattice the first ~0.2 tau have next to no
 *    collisions (0 to 1e-4 per particle-step against ~0.01 in the fluid
 *    at eta = 0.3), which is not the hard-sphere fluid's per-step cost.
 *    LAMMPS starts from fcc (its WCA step costs about the same in the
 *    lattice and the fluid); ricochet's warm-up does too.  Peak RSS:
 *    ricochet's from wait4() of its forked child, the warm-up's (from the
 *    lattice, like LAMMPS; the timed runs' reading of the xyz file costs
 *    memory of its own, reported apart); LAMMPS's the sum over ranks of each
 *    rank's peak (GNU time in lammps_wca.sh; without it, the largest
 *    process in the script's tree from wait4(), which undercounts on 2
 *    ranks, and the JSON says which).  Collisions per particle-step are
 *    reported.
 * 3. The load average before each section and at the end; a table on
 *    stdout (and .txt) and the JSON with a `targets` object: each target,
 *    the figure measured, met true/false (null when not measured), and
 *    whether it was measured at the target's N.
 *
 * Validation comes first: every ricochet run of the timed sections, warm-ups
 * included, must end "ok" with the requested steps, particles and threads,
 * max_rel_energy_error < 1e-10 and max_momentum_error < 1e-8 (and exact
 * collision times in section 1); otherwise nothing is written (exit 1).  A
 * dt-scan run that fails is recorded and not chosen. */
#define _DEFAULT_SOURCE   /* wait4 */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw, open_memstream */
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

#define MAX_REPEATS 15
#define MAX_SIZES 4
#define MAX_DTS 8
#define MAX_PHASES 16
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
/* The targets (issue 12; the throughput figure from the issue before it) */
#define TARGET_N_PER_STEP 256000L
#define TARGET_N_DYNAMO 32000L
#define TARGET_RATIO_LAMMPS_03 2.0
#define TARGET_RATIO_LAMMPS_045 1.5
#define TARGET_RATIO_DYNAMO 8.0
#define TARGET_SPEEDUP 1.8
#define TARGET_PARTICLE_STEPS_PER_SECOND 2e7
#define Z_REFERENCE 3.984
#define Z_TOLERANCE 0.005
#define ROW_SPACING_TAU 0.2 /* section 1: diagnostics rows this far apart */
#define RDF_SPACING_TAU 2.0 /* section 1: g(r) samples, if configurable */
#define DEFAULT_DYNAMO_BIN "/work/peers/dynamo-build"

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
/* JSON helpers.                                                        */

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(j) ? j->valuedouble : NAN;
}

static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static void add_met(cJSON *o, int met) /* 1, 0, or -1 = not measured */
{
    if (met < 0)
        cJSON_AddNullToObject(o, "met");
    else
        cJSON_AddBoolToObject(o, "met", met);
}

static cJSON *load_json(const double la[3])
{
    return cJSON_CreateDoubleArray(la, 3);
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

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (NaN-free); n >= 1. */
static double median(const double *v, int n)
{
    double s[MAX_REPEATS];
    int k;
    for (k = 0; k < n; ++k)
        s[k] = v[k];
    qsort(s, (size_t)n, sizeof s[0], cmp_d);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* Index of the element whose value is the (upper) median. */
static int median_index(const double *v, int n)
{
    double s[MAX_REPEATS];
    int k;
    for (k = 0; k < n; ++k)
        s[k] = v[k];
    qsort(s, (size_t)n, sizeof s[0], cmp_d);
    for (k = 0; k < n; ++k)
        if (v[k] == s[n / 2])
            return k;
    return 0;
}

/* ------------------------------------------------------------------ */
/* One ricochet run in a child process.                                 */

typedef struct run_rec {
    char status[32], message[512], collision_times[16], version[32];
    long steps, particles, threads;
    double rate;     /* summary particle_steps_per_second */
    double wall;     /* summary wall_seconds (the step loop) */
    double out_sec;  /* observables and output (see read_summary) */
    int nphase;      /* summary `seconds`, whatever keys it has */
    char phase[MAX_PHASES][40];
    double phase_sec[MAX_PHASES];
    double bytes_per_particle, collisions, emax, pmax;
    double z_mean, z_err, z_cs;
    double child_seconds; /* fork to exit: setup + loop + summary */
    long maxrss_kib;      /* the child's ru_maxrss */
} run_rec;

/* Fill r from dir/summary.json (or summary.json.partial after a failed
 * run, for its status and message); -1 when neither can be read.  The
 * time outside the engine is seconds.observables_and_output when the
 * summary has it, else the sum of whichever of observables, rdf,
 * trajectory and output it has (NaN when none). */
static int read_summary(const char *dir, run_rec *r)
{
    static const char *const parts[] = {"observables", "rdf", "trajectory",
                                        "output", NULL};
    char path[600];
    char *text;
    cJSON *root, *o, *it;
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
    j = cJSON_GetObjectItemCaseSensitive(root, "collision_times");
    snprintf(r->collision_times, sizeof r->collision_times, "%s",
             cJSON_IsString(j) ? j->valuestring : "");
    r->steps = (long)jnum(root, "steps");
    r->particles = (long)jnum(root, "particles");
    r->threads = (long)jnum(root, "threads");
    r->rate = jnum(root, "particle_steps_per_second");
    r->wall = jnum(root, "wall_seconds");
    o = cJSON_GetObjectItemCaseSensitive(root, "seconds");
    r->nphase = 0;
    cJSON_ArrayForEach(it, o)
    {
        if (cJSON_IsNumber(it) && it->string && r->nphase < MAX_PHASES) {
            snprintf(r->phase[r->nphase], sizeof r->phase[0], "%s",
                     it->string);
            r->phase_sec[r->nphase++] = it->valuedouble;
        }
    }
    r->out_sec = jnum(o, "observables_and_output");
    if (!isfinite(r->out_sec)) {
        double s = 0.0;
        int got = 0;
        for (k = 0; parts[k]; ++k) {
            double v = jnum(o, parts[k]);
            if (isfinite(v)) {
                s += v;
                got = 1;
            }
        }
        r->out_sec = got ? s : NAN;
    }
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
/* What one ricochet run is asked for.                                  */

typedef struct rspec {
    long n;
    double eta, dt;
    int threads;
    long steps;     /* in all, equilibration included */
    long every;     /* output.every */
    long eq_steps;  /* output.equilibrate = eq_steps x dt */
    long rdf_every; /* output.rdf_every when >= 0 (0: no g(r)) and the
                       loader knows the key; -1: the scenario's default */
    int exact;      /* set integrator.collisions: exact (and require it) */
    int from_file;  /* the scenario reads its particles: no lattice.* */
    int trajectory; /* write an xyz frame at the start and at the end */
} rspec;

/* -1 not yet known, 0 the loader rejects output.rdf_every, 1 accepts */
static int g_rdf_every_ok = -1;
static char g_rdf_every_why[400] = "";

static rc_scenario *load_spec(const char *scn_path, const rspec *s,
                              int *rdf_used)
{
    char ov[10][96];
    const char *ovs[10];
    int k, nov, attempt;
    rc_scenario *scn = NULL;
    rc_scenario_run info;
    rc_error err;
    *rdf_used = 0;
    for (attempt = 0; attempt < 2; ++attempt) {
        int want_rdf = s->rdf_every >= 0 && g_rdf_every_ok != 0;
        nov = 0;
        if (!s->from_file) {
            snprintf(ov[nov++], sizeof ov[0], "lattice.n=%ld", s->n);
            snprintf(ov[nov++], sizeof ov[0],
                     "lattice.packing_fraction=%.17g", s->eta);
        }
        snprintf(ov[nov++], sizeof ov[0], "integrator.dt=%.17g", s->dt);
        snprintf(ov[nov++], sizeof ov[0], "integrator.duration=%.17g",
                 (double)s->steps * s->dt);
        snprintf(ov[nov++], sizeof ov[0], "output.equilibrate=%.17g",
                 (double)s->eq_steps * s->dt);
        snprintf(ov[nov++], sizeof ov[0], "output.every=%ld", s->every);
        if (s->exact)
            snprintf(ov[nov++], sizeof ov[0], "integrator.collisions=exact");
        if (s->trajectory) {
            snprintf(ov[nov++], sizeof ov[0], "output.trajectory=xyz");
            snprintf(ov[nov++], sizeof ov[0], "output.trajectory_every=%ld",
                     s->steps);
        }
        if (want_rdf)
            snprintf(ov[nov++], sizeof ov[0], "output.rdf_every=%ld",
                     s->rdf_every);
        for (k = 0; k < nov; ++k)
            ovs[k] = ov[k];
        memset(&err, 0, sizeof err);
        if (rc_scenario_load(scn_path, ovs, nov, &scn, &err) == RC_OK) {
            if (want_rdf && g_rdf_every_ok < 0) {
                g_rdf_every_ok = 1;
                printf("  (output.rdf_every accepted by the scenario "
                       "loader)\n");
            }
            *rdf_used = want_rdf;
            break;
        }
        if (!want_rdf) {
            char buf[2600];
            fprintf(stderr, "bench: %s: %s\n", scn_path,
                    rc_error_format(&err, buf, sizeof buf));
            return NULL;
        }
        /* retry without output.rdf_every, and never ask again */
        {
            char buf[2600];
            g_rdf_every_ok = 0;
            snprintf(g_rdf_every_why, sizeof g_rdf_every_why, "%s",
                     rc_error_format(&err, buf, sizeof buf));
            printf("  (output.rdf_every not accepted by the scenario "
                   "loader: g(r) at its default sampling)\n");
        }
    }
    rc_scenario_run_info(scn, &info);
    if (!rc_scenario_is_large_system(scn) || info.steps != s->steps ||
        info.every != s->every || info.dt != s->dt) {
        fprintf(stderr, "bench: scenario gives %ld steps every %ld (dt %g), "
                        "expected %ld every %ld (dt %g) in a box\n",
                info.steps, info.every, info.dt, s->steps, s->every, s->dt);
        rc_scenario_free(scn);
        return NULL;
    }
    return scn;
}

static int validate(const rspec *s, const run_rec *r, const char *which,
                    int quiet)
{
    /* NaN fails every comparison below */
    int bad_mode = s->exact && r->collision_times[0] &&
                   strcmp(r->collision_times, "exact") != 0;
    if (strcmp(r->status, "ok") != 0 || r->steps != s->steps ||
        r->particles != s->n || r->threads != s->threads ||
        !(r->emax < MAX_REL_ENERGY_ERROR) || !(r->pmax < MAX_MOMENTUM_ERROR) ||
        !(r->rate > 0.0) || bad_mode) {
        if (!quiet)
            fprintf(stderr,
                    "bench: N %ld eta %g dt %g threads %d (%s): status "
                    "%s%s%s, steps %ld of %ld, particles %ld, threads %ld, "
                    "max rel energy error %.3e (< %g), max momentum error "
                    "%.3e (< %g), collision times '%s'\n",
                    s->n, s->eta, s->dt, s->threads, which, r->status,
                    r->message[0] ? ": " : "", r->message, r->steps,
                    s->steps, r->particles, r->threads, r->emax,
                    MAX_REL_ENERGY_ERROR, r->pmax, MAX_MOMENTUM_ERROR,
                    r->collision_times);
        return -1;
    }
    return 0;
}

/* N x steps / (wall - time outside the engine) */
static double engine_rate(const run_rec *r)
{
    return (double)r->particles * (double)r->steps / (r->wall - r->out_sec);
}

static cJSON *run_json(const run_rec *r, double dt)
{
    cJSON *o = cJSON_CreateObject(), *s;
    int k;
    cJSON_AddStringToObject(o, "status", r->status);
    if (r->message[0])
        cJSON_AddStringToObject(o, "message", r->message);
    if (r->collision_times[0])
        cJSON_AddStringToObject(o, "collision_times", r->collision_times);
    add_num(o, "particle_steps_per_second", r->rate);
    add_num(o, "engine_particle_steps_per_second", engine_rate(r));
    if (dt > 0.0) {
        add_num(o, "particle_tau_per_second", r->rate * dt);
        add_num(o, "engine_particle_tau_per_second", engine_rate(r) * dt);
    }
    add_num(o, "wall_seconds", r->wall);
    add_num(o, "process_seconds", r->child_seconds);
    add_num(o, "max_rss_bytes", 1024.0 * (double)r->maxrss_kib);
    s = cJSON_AddObjectToObject(o, "seconds");
    for (k = 0; k < r->nphase; ++k)
        add_num(s, r->phase[k], r->phase_sec[k]);
    add_num(o, "outside_engine_seconds", r->out_sec);
    add_num(o, "collisions", r->collisions);
    add_num(o, "max_rel_energy_error", r->emax);
    add_num(o, "max_momentum_error", r->pmax);
    s = cJSON_AddObjectToObject(o, "compressibility_factor");
    add_num(s, "mean", r->z_mean);
    add_num(s, "stderr", r->z_err);
    return o;
}

/* The molten start of the per-step runs: the fcc lattice at (n, eta)
 * run for tau with exact collisions at dt MELT_DT on `threads` threads
 * (untimed), its last frame written as xyz, and a scenario in tmp that
 * reads those positions with fresh Maxwell-Boltzmann velocities at kT = 1
 * (in equilibrium velocities are independent of positions); g(r) settings
 * as in the example.  0, or -1 (the run failed validation, or the file
 * could not be written). */
#define MELT_DT 0.01
static int melt(const char *scn_path, const char *tmp, long n, double eta,
                double tau, int threads, char *yaml, size_t ysize,
                run_rec *r)
{
    rspec s;
    rc_scenario *scn;
    char dir[160];
    int dummy;
    FILE *f;
    memset(&s, 0, sizeof s);
    s.n = n;
    s.eta = eta;
    s.dt = MELT_DT;
    s.threads = threads;
    s.steps = llround(tau / MELT_DT);
    if (s.steps < 1)
        s.steps = 1;
    s.every = s.steps;
    s.rdf_every = 0;
    s.exact = 1;
    s.trajectory = 1;
    if (!(scn = load_spec(scn_path, &s, &dummy)))
        return -1;
    snprintf(dir, sizeof dir, "%s/melt_n%ld_eta%g", tmp, n, eta);
    if (run_child(scn, dir, threads, r) != 0 ||
        validate(&s, r, "melt", 0) != 0) {
        rc_scenario_free(scn);
        return -1;
    }
    rc_scenario_free(scn);
    snprintf(yaml, ysize, "%s/molten_n%ld_eta%g.yaml", tmp, n, eta);
    if (!(f = fopen(yaml, "w"))) {
        perror(yaml);
        return -1;
    }
    fprintf(f,
            "# written by bench_large_throughput: the fluid after %g tau\n"
            "name: hard_sphere_fluid_molten\n"
            "dimension: 3\n"
            "box: {periodic: true}\n"
            "read: {file: \"%s/trajectory.xyz\", frame: 1, temperature: 1, "
            "seed: 2}\n"
            "integrator: {method: gvi, dt: 0.002, duration: 0.2}\n"
            "output: {every: 10, equilibrate: 0, rdf_bins: 150, "
            "rdf_rmax: 3}\n",
            (double)s.steps * s.dt, dir);
    return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Peer scripts: bash SCRIPT ARGS, stdout read for its last JSON line,   */
/* stderr passed through, wait4() for the tree's largest peak RSS.       */

typedef struct peer_run {
    int code;         /* exit status; -1 when it did not exit normally */
    char line[4096];  /* last stdout line starting with '{' ("" if none) */
    char last[1024];  /* last stdout line of any kind */
    long maxrss_kib;  /* largest single process of the tree */
    double seconds;   /* spawn to exit */
} peer_run;

static int run_peer(const char *const argv[], peer_run *p)
{
    int fd[2], wst = 0;
    struct rusage ru;
    pid_t pid;
    FILE *in;
    char buf[4096];
    double t0;
    memset(p, 0, sizeof *p);
    p->code = -1;
    fflush(NULL);
    if (pipe(fd) != 0) {
        perror("bench: pipe");
        return -1;
    }
    t0 = now();
    pid = fork();
    if (pid < 0) {
        perror("bench: fork");
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], STDOUT_FILENO) < 0)
            _exit(127);
        close(fd[1]);
        execvp(argv[0], (char *const *)argv);
        perror("bench: exec");
        _exit(127);
    }
    close(fd[1]);
    if ((in = fdopen(fd[0], "r")) != NULL) {
        while (fgets(buf, sizeof buf, in)) {
            buf[strcspn(buf, "\n")] = '\0';
            if (buf[0] == '{')
                snprintf(p->line, sizeof p->line, "%s", buf);
            if (buf[0])
                snprintf(p->last, sizeof p->last, "%.1000s", buf);
        }
        fclose(in);
    } else {
        close(fd[0]);
    }
    while (wait4(pid, &wst, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("bench: wait4");
            return -1;
        }
    }
    p->seconds = now() - t0;
    p->maxrss_kib = ru.ru_maxrss;
    p->code = WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
    return 0;
}

/* A peer script's run and its one JSON line: 0 with *j (the caller
 * deletes it), 77 (the peer is not installed: the script's skip code) or
 * -1; why names the script and, when it failed, `at` (the run's size). */
static int peer_json(const char *const argv[], const char *script,
                     const char *at, const char *missing, peer_run *p,
                     cJSON **j, char *why, size_t wsize)
{
    *j = NULL;
    if (run_peer(argv, p) != 0 || p->code < 0) {
        snprintf(why, wsize, "could not run %s", script);
        return -1;
    }
    if (p->code == 77) {
        snprintf(why, wsize, "%s exited 77 (%s)", script, missing);
        return 77;
    }
    if (p->code != 0 || !(*j = cJSON_Parse(p->line))) {
        snprintf(why, wsize, "%s exited %d at %s", script, p->code, at);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* LAMMPS.                                                              */

typedef struct lmp_rec {
    double rate, loop;
    double rss_total_kib;   /* sum over ranks (GNU time), or NaN */
    double rss_largest_kib; /* largest process of the tree (wait4) */
    double seconds;
} lmp_rec;

/* 0 ok, 77 LAMMPS not installed, -1 failure (why set) */
static int lammps_once(const char *script, long n, double eta, int ranks,
                       long steps, lmp_rec *out, char *version, size_t vsize,
                       char *why, size_t wsize)
{
    char sn[32], se[32], sr[16], ss[32], at[96];
    const char *argv[8];
    peer_run p;
    cJSON *j, *v;
    int ok, rc;
    snprintf(sn, sizeof sn, "%ld", n);
    snprintf(se, sizeof se, "%g", eta);
    snprintf(sr, sizeof sr, "%d", ranks);
    snprintf(ss, sizeof ss, "%ld", steps);
    argv[0] = "bash";
    argv[1] = script;
    argv[2] = sn;
    argv[3] = se;
    argv[4] = sr;
    argv[5] = ss;
    argv[6] = NULL;
    snprintf(at, sizeof at, "N %ld eta %g ranks %d", n, eta, ranks);
    if ((rc = peer_json(argv, script, at, "LAMMPS missing", &p, &j, why,
                        wsize)) != 0)
        return rc;
    out->rate = jnum(j, "atom_steps_per_second");
    out->loop = jnum(j, "loop_seconds");
    out->rss_total_kib = jnum(j, "max_rss_kib_total");
    out->rss_largest_kib = (double)p.maxrss_kib;
    out->seconds = p.seconds;
    v = cJSON_GetObjectItemCaseSensitive(j, "lammps_version");
    if (cJSON_IsString(v))
        snprintf(version, vsize, "%s", v->valuestring);
    ok = jnum(j, "n") == (double)n && jnum(j, "ranks") == (double)ranks &&
         jnum(j, "steps") == (double)steps && out->rate > 0.0;
    cJSON_Delete(j);
    if (!ok) {
        snprintf(why, wsize, "%s gave an unexpected line: %.300s", script,
                 p.line);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* DynamO.                                                              */

typedef struct dyn_rec {
    double ptps, wall, z, z_cs, events, process_seconds, sim_time,
        equil_time, mean_free_time;
    double rss_largest_kib, seconds;
} dyn_rec;

static int dynamo_once(const char *script, const char *bin, long n,
                       double eta, double sim, double equil, dyn_rec *out,
                       char *why, size_t wsize)
{
    char sn[32], se[32], st[40], sq[40], at[96];
    const char *argv[9];
    peer_run p;
    cJSON *j;
    int ok, rc;
    snprintf(sn, sizeof sn, "%ld", n);
    snprintf(se, sizeof se, "%g", eta);
    snprintf(st, sizeof st, "%.10g", sim);
    snprintf(sq, sizeof sq, "%.10g", equil);
    argv[0] = "bash";
    argv[1] = script;
    argv[2] = bin;
    argv[3] = sn;
    argv[4] = se;
    argv[5] = st;
    argv[6] = sq;
    argv[7] = NULL;
    snprintf(at, sizeof at, "N %ld eta %g", n, eta);
    if ((rc = peer_json(argv, script, at, "DynamO or python3 missing", &p,
                        &j, why, wsize)) != 0)
        return rc;
    out->ptps = jnum(j, "particle_tau_per_second");
    out->wall = jnum(j, "wall_seconds");
    out->z = jnum(j, "z");
    out->z_cs = jnum(j, "z_cs");
    out->events = jnum(j, "events");
    out->process_seconds = jnum(j, "process_seconds");
    out->sim_time = jnum(j, "sim_time");
    out->equil_time = jnum(j, "equil_time");
    out->mean_free_time = jnum(j, "mean_free_time");
    out->rss_largest_kib = (double)p.maxrss_kib;
    out->seconds = p.seconds;
    ok = jnum(j, "n") == (double)n && out->ptps > 0.0 && isfinite(out->z);
    cJSON_Delete(j);
    if (!ok) {
        snprintf(why, wsize, "%s gave an unexpected line: %.300s", script,
                 p.line);
        return -1;
    }
    return 0;
}

/* Find (or build) the DynamO binaries; 0 and bin set, or 77 and why. */
static int locate_dynamo(char *bin, size_t bsize, char *how, size_t hsize,
                         char *why, size_t wsize)
{
    const char *e = getenv("RICOCHET_DYNAMO");
    const char *src = getenv("RICOCHET_DYNAMO_SRC");
    char path[700];
    const char *const need[2] = {"dynarun", "dynamod"};
    int k;
    if (e && *e) {
        snprintf(bin, bsize, "%s", e);
        snprintf(how, hsize, "RICOCHET_DYNAMO");
    } else if (src && *src) {
        const char *b = getenv("RICOCHET_DYNAMO_BUILD");
        char build[600];
        const char *argv[5];
        peer_run p;
        if (b && *b)
            snprintf(build, sizeof build, "%s", b);
        else
            snprintf(build, sizeof build, "%s/../dynamo-build", src);
        printf("DynamO: building %s into %s (bench/peers/build_dynamo.sh; "
               "minutes the first time)\n",
               src, build);
        argv[0] = "bash";
        argv[1] = RICOCHET_BENCH_DIR "/peers/build_dynamo.sh";
        argv[2] = src;
        argv[3] = build;
        argv[4] = NULL;
        if (run_peer(argv, &p) != 0 || p.code != 0) {
            snprintf(why, wsize,
                     "bench/peers/build_dynamo.sh %s %s exited %d (77: cannot "
                     "be built; its message is above)",
                     src, build, p.code);
            return 77;
        }
        /* it prints the binaries' paths; their directory is the bin dir */
        snprintf(bin, bsize, "%.*s", (int)bsize - 1, p.last);
        {
            char *slash = strrchr(bin, '/');
            if (slash)
                *slash = '\0';
            else
                snprintf(bin, bsize, "%s", build);
        }
        snprintf(how, hsize, "built from RICOCHET_DYNAMO_SRC by "
                             "bench/peers/build_dynamo.sh");
    } else {
        snprintf(bin, bsize, "%s", DEFAULT_DYNAMO_BIN);
        snprintf(how, hsize, "default directory");
    }
    for (k = 0; k < 2; ++k) {
        snprintf(path, sizeof path, "%s/%s", bin, need[k]);
        if (access(path, X_OK) != 0) {
            snprintf(why, wsize,
                     "no executable %s (%s); set RICOCHET_DYNAMO=BIN_DIR, or "
                     "RICOCHET_DYNAMO_SRC=SRC_DIR (a DynamO clone) to build "
                     "one with bench/peers/build_dynamo.sh",
                     path, how);
            return 77;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Options.                                                             */

typedef struct options {
    int quick, repeats, nsizes, ndts, every, no_dynamo, no_lammps;
    long rdf_every; /* per-step runs: output.rdf_every; -2 = steps */
    long sizes[MAX_SIZES], steps, dyn_n;
    double sim_time, equil_time, melt_time, dts[MAX_DTS];
    const char *out;
} options;

static int parse_longs(const char *s, long *v, int max, int *n)
{
    char *end;
    *n = 0;
    while (*s) {
        if (*n == max)
            return -1;
        v[*n] = strtol(s, &end, 10);
        if (end == s || v[*n] < 1)
            return -1;
        ++*n;
        s = end;
        if (*s == ',')
            ++s;
        else if (*s)
            return -1;
    }
    return *n > 0 ? 0 : -1;
}

static int parse_doubles(const char *s, double *v, int max, int *n)
{
    char *end;
    *n = 0;
    while (*s) {
        if (*n == max)
            return -1;
        v[*n] = strtod(s, &end);
        if (end == s || !(v[*n] > 0.0))
            return -1;
        ++*n;
        s = end;
        if (*s == ',')
            ++s;
        else if (*s)
            return -1;
    }
    return *n > 0 ? 0 : -1;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: bench_large_throughput [--quick] [--repeats R] "
            "[--sizes N1,N2] [--steps S] [--every E] [--rdf-every G] "
            "[--dynamo-n N] "
            "[--sim-time T] [--equil-time T] [--melt-time T] [--dts a,b,...] "
            "[--no-dynamo] "
            "[--no-lammps] [out.json]\n");
    return 1;
}

static int parse_options(int argc, char **argv, options *o)
{
    const char *e;
    long v;
    int k, quick = 0, n;
    char *end;
    for (k = 1; k < argc; ++k)
        if (!strcmp(argv[k], "--quick"))
            quick = 1;
    memset(o, 0, sizeof *o);
    o->quick = quick;
    o->repeats = quick ? 1 : 3;
    o->nsizes = 1;
    o->sizes[0] = quick ? 32000 : TARGET_N_PER_STEP;
    o->steps = quick ? 40 : 100;
    o->every = 20;
    o->rdf_every = -2;
    o->dyn_n = quick ? 4000 : TARGET_N_DYNAMO;
    o->sim_time = quick ? 4.0 : 16.0;
    o->equil_time = 2.0;
    o->melt_time = 1.0;
    o->ndts = 5;
    o->dts[0] = 0.005;
    o->dts[1] = 0.01;
    o->dts[2] = 0.02;
    o->dts[3] = 0.04;
    o->dts[4] = 0.08;
    o->out = quick ? "/tmp/large_throughput_quick.json"
                   : RICOCHET_BENCH_DIR "/results/large_throughput.json";
    /* environment first, the command line over it */
    if ((e = getenv("RC_BENCH_REPEATS")) && *e) {
        v = strtol(e, &end, 10);
        if (*end || v < 1 || v > MAX_REPEATS)
            return fprintf(stderr, "bench: RC_BENCH_REPEATS in 1..%d\n",
                           MAX_REPEATS),
                   -1;
        o->repeats = (int)v;
    }
    if ((e = getenv("RC_BENCH_SIZES")) && *e &&
        parse_longs(e, o->sizes, MAX_SIZES, &o->nsizes) != 0)
        return fprintf(stderr, "bench: bad RC_BENCH_SIZES\n"), -1;
    if ((e = getenv("RC_BENCH_STEPS")) && *e) {
        v = strtol(e, &end, 10);
        if (*end || v < 1)
            return fprintf(stderr, "bench: bad RC_BENCH_STEPS\n"), -1;
        o->steps = v;
    }
    if ((e = getenv("RC_BENCH_DYNAMO_N")) && *e) {
        v = strtol(e, &end, 10);
        if (*end || v < 1)
            return fprintf(stderr, "bench: bad RC_BENCH_DYNAMO_N\n"), -1;
        o->dyn_n = v;
    }
    if ((e = getenv("RC_BENCH_SIM_TIME")) && *e) {
        o->sim_time = strtod(e, &end);
        if (*end || !(o->sim_time > 0.0))
            return fprintf(stderr, "bench: bad RC_BENCH_SIM_TIME\n"), -1;
    }
    for (k = 1; k < argc; ++k) {
        const char *a = argv[k], *val = k + 1 < argc ? argv[k + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--quick"))
            continue;
        if (!strcmp(a, "--no-dynamo")) {
            o->no_dynamo = 1;
            continue;
        }
        if (!strcmp(a, "--no-lammps")) {
            o->no_lammps = 1;
            continue;
        }
        if (a[0] != '-') {
            o->out = a;
            continue;
        }
        if (!val)
            return fprintf(stderr, "bench: %s needs a value\n", a), -1;
        ++k;
        if (!strcmp(a, "--repeats")) {
            v = strtol(val, &end, 10);
            bad = *end || v < 1 || v > MAX_REPEATS;
            o->repeats = (int)v;
        } else if (!strcmp(a, "--sizes")) {
            bad = parse_longs(val, o->sizes, MAX_SIZES, &o->nsizes) != 0;
        } else if (!strcmp(a, "--steps")) {
            o->steps = strtol(val, &end, 10);
            bad = *end || o->steps < 1;
        } else if (!strcmp(a, "--every")) {
            v = strtol(val, &end, 10);
            bad = *end || v < 1;
            o->every = (int)v;
        } else if (!strcmp(a, "--dynamo-n")) {
            o->dyn_n = strtol(val, &end, 10);
            bad = *end || o->dyn_n < 1;
        } else if (!strcmp(a, "--sim-time")) {
            o->sim_time = strtod(val, &end);
            bad = *end || !(o->sim_time > 0.0);
        } else if (!strcmp(a, "--rdf-every")) {
            o->rdf_every = strtol(val, &end, 10);
            bad = *end || o->rdf_every < -1;
        } else if (!strcmp(a, "--melt-time")) {
            o->melt_time = strtod(val, &end);
            bad = *end || !(o->melt_time >= 0.0);
        } else if (!strcmp(a, "--equil-time")) {
            o->equil_time = strtod(val, &end);
            bad = *end || !(o->equil_time > 0.0);
        } else if (!strcmp(a, "--dts")) {
            bad = parse_doubles(val, o->dts, MAX_DTS, &n) != 0;
            o->ndts = n;
            if (!bad)
                qsort(o->dts, (size_t)n, sizeof o->dts[0], cmp_d);
        } else {
            fprintf(stderr, "bench: unknown option %s\n", a);
            return -1;
        }
        if (bad)
            return fprintf(stderr, "bench: bad value '%s' for %s\n", val, a),
                   -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Per-step configurations.                                             */

typedef struct config {
    rspec s;
    run_rec rep[MAX_REPEATS + 1]; /* [0] warm-up */
    int med;                      /* index into rep of the median rate */
    long maxrss_kib;              /* largest over its timed runs */
    long maxrss_lattice_kib;      /* of its run(s) from the lattice */
    double engine_rate;           /* of the median run */
    double la[3];                 /* load average before its runs */
    run_rec melt;                 /* the untimed melt it starts from */
    int molten;
    /* LAMMPS at the same n, eta, dt, steps; ranks = threads */
    int lammps_ok;
    lmp_rec lmp[MAX_REPEATS + 1]; /* [0] warm-up */
    double lammps_rate, lammps_loop, lammps_rss_total_kib,
        lammps_rss_largest_kib;
} config;

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    options opt;
    const char *lmp_script = RICOCHET_BENCH_DIR "/peers/lammps_wca.sh";
    const char *dyn_script = RICOCHET_BENCH_DIR "/peers/dynamo_hs.sh";
    char tmp[] = "/tmp/rc_bench_large_XXXXXX", scn_path[512], cpu[256],
         lammps_version[128] = "", version[32] = "?", lammps_why[512] = "",
         dyn_bin[600] = "", dyn_how[160] = "", dyn_why[1024] = "",
         txt_path[600], melt_yaml[200] = "";
    static const double etas[2] = {0.3, 0.45}, step_dts[2] = {0.002, 0.001};
    config *cfg;
    int ncfg, ci, k, R;
    int lammps_state = 0; /* 0 not tried, 1 ok, 77 absent, -1 failed */
    int dyn_state = 0;    /* 0 not tried, 1 ok, 77 skipped, -1 failed */
    double la_start[3], la_dyn[3], la_step[3], la_end[3], t_start, t_total;
    struct utsname un;
    cJSON *root, *o, *arr, *tg;
    char *text, *table = NULL;
    size_t table_size = 0;
    FILE *f, *tf;
    /* section 1 */
    rspec ds;
    run_rec scan[MAX_DTS], drun[MAX_REPEATS];
    int scan_state[MAX_DTS]; /* 0 not run, 1 ok, -1 failed */
    int scan_rdf[MAX_DTS], scan_stop = 0, best = -1, drun_rdf = 0, dmed = 0;
    double dtau, d_rate[MAX_REPEATS], d_erate[MAX_REPEATS],
        d_prate[MAX_REPEATS], dyn_ptps[MAX_REPEATS];
    dyn_rec dyn[MAX_REPEATS];
    int ndyn = 0;
    double ric_rate = NAN, ric_erate = NAN, ric_prate = NAN, dyn_rate = NAN,
           ric_z = NAN, ric_zerr = NAN, ric_zdev = NAN, dyn_z = NAN,
           dyn_zdev = NAN, scan_time, sim_actual = NAN, equil_actual = NAN;

    if (parse_options(argc, argv, &opt) != 0)
        return usage();
    R = opt.repeats;
    t_start = now();
    load_average(la_start);
    g_parent = getpid();
    snprintf(scn_path, sizeof scn_path, "%s/hard_sphere_fluid.yaml",
             RICOCHET_EXAMPLES_DIR);
    if (!mkdtemp(tmp)) {
        perror("bench: mkdtemp");
        return 1;
    }
    snprintf(g_tmp, sizeof g_tmp, "%s", tmp);
    atexit(rm_tmp);
    printf("hard-sphere fluid (%s), runs in %s; %d repeat%s%s; load average "
           "%.2f %.2f %.2f\n",
           scn_path, tmp, R, R > 1 ? "s" : "", opt.quick ? " (--quick)" : "",
           la_start[0], la_start[1], la_start[2]);

    /* ============================================================== */
    /* 1. Equal accuracy against DynamO.                                */
    load_average(la_dyn);
    printf("\n1. equal accuracy: N %ld, eta 0.3, 1 thread, %.3g tau after "
           "%.3g tau equilibration (load average %.2f)\n",
           opt.dyn_n, opt.sim_time, opt.equil_time, la_dyn[0]);
    if (opt.no_dynamo) {
        dyn_state = 77;
        snprintf(dyn_why, sizeof dyn_why, "left out (--no-dynamo)");
    } else if (locate_dynamo(dyn_bin, sizeof dyn_bin, dyn_how, sizeof dyn_how,
                             dyn_why, sizeof dyn_why) != 0) {
        dyn_state = 77;
    }
    if (dyn_state == 77)
        printf("DynamO: skipped: %s\n", dyn_why);
    else
        printf("DynamO: %s (%s)\n", dyn_bin, dyn_how);

    /* dt scan: equil_time tau from the lattice at each dt */
    memset(&ds, 0, sizeof ds);
    ds.n = opt.dyn_n;
    ds.eta = 0.3;
    ds.threads = 1;
    ds.exact = 1;
    scan_time = opt.equil_time;
    for (k = 0; k < opt.ndts; ++k) {
        rspec s = ds;
        rc_scenario *scn;
        char dir[128];
        scan_state[k] = 0;
        scan_rdf[k] = 0;
        memset(&scan[k], 0, sizeof scan[k]);
        if (!scan_stop && k > 0 && scan_state[k - 1] == 1 &&
            scan[best].rate * opt.dts[best] >
                2.0 * scan[k - 1].rate * opt.dts[k - 1])
            scan_stop = 1;
        if (scan_stop) {
            printf("  dt %-6g not run (a smaller dt was under half as fast "
                   "as the best)\n",
                   opt.dts[k]);
            continue;
        }
        s.dt = opt.dts[k];
        s.steps = llround(scan_time / s.dt);
        if (s.steps < 1)
            s.steps = 1;
        s.eq_steps = 0;
        s.every = llround(ROW_SPACING_TAU / s.dt);
        if (s.every < 1)
            s.every = 1;
        s.rdf_every = llround(RDF_SPACING_TAU / s.dt);
        if (!(scn = load_spec(scn_path, &s, &scan_rdf[k])))
            return 1;
        snprintf(dir, sizeof dir, "%s/scan_dt%g", tmp, s.dt);
        if (run_child(scn, dir, 1, &scan[k]) != 0) {
            rc_scenario_free(scn);
            return 1;
        }
        rc_scenario_free(scn);
        scan_state[k] = validate(&s, &scan[k], "dt scan", 0) == 0 ? 1 : -1;
        if (scan_state[k] == 1) {
            snprintf(version, sizeof version, "%s", scan[k].version);
            if (best < 0 ||
                scan[k].rate * s.dt > scan[best].rate * opt.dts[best])
                best = k;
        }
        printf("  dt %-6g %4ld steps: %s, %.4g particle-tau/s (engine "
               "%.4g), %.1f s\n",
               s.dt, s.steps, scan_state[k] == 1 ? "ok" : "FAILED",
               scan[k].rate * s.dt, engine_rate(&scan[k]) * s.dt,
               scan[k].wall);
    }
    if (best < 0) {
        fprintf(stderr, "bench: every dt of the scan failed; nothing "
                        "written\n");
        return 1;
    }
    ds.dt = opt.dts[best];
    ds.eq_steps = llround(opt.equil_time / ds.dt);
    ds.steps = ds.eq_steps + llround(opt.sim_time / ds.dt);
    ds.every = llround(ROW_SPACING_TAU / ds.dt);
    if (ds.every < 1)
        ds.every = 1;
    ds.rdf_every = llround(RDF_SPACING_TAU / ds.dt);
    equil_actual = (double)ds.eq_steps * ds.dt;
    sim_actual = (double)(ds.steps - ds.eq_steps) * ds.dt;
    dtau = (double)ds.steps * ds.dt;
    printf("  chosen dt %g: %ld steps (%ld equilibration), rows every %ld "
           "steps\n",
           ds.dt, ds.steps, ds.eq_steps, ds.every);
    {
        rc_scenario *scn = load_spec(scn_path, &ds, &drun_rdf);
        int rep;
        char dir[128];
        if (!scn)
            return 1;
        snprintf(dir, sizeof dir, "%s/dynamo_cmp", tmp);
        for (rep = 0; rep < R; ++rep) {
            run_rec *r = &drun[rep];
            if (run_child(scn, dir, 1, r) != 0 ||
                validate(&ds, r, "equal-accuracy run", 0) != 0) {
                fprintf(stderr, "bench: validation failed; nothing "
                                "written\n");
                rc_scenario_free(scn);
                return 1;
            }
            d_rate[rep] = r->rate * ds.dt; /* N x steps x dt / wall */
            d_erate[rep] = engine_rate(r) * ds.dt;
            d_prate[rep] = (double)ds.n * dtau / r->child_seconds;
            printf("  ricochet run %d: %.4g particle-tau/s (engine %.4g), "
                   "Z %.4f +- %.4f, %.1f s\n",
                   rep + 1, d_rate[rep], d_erate[rep], r->z_mean, r->z_err,
                   r->wall);
            if (dyn_state == 0 || dyn_state == 1) {
                int st = dynamo_once(dyn_script, dyn_bin, ds.n, ds.eta,
                                     sim_actual, equil_actual, &dyn[ndyn],
                                     dyn_why, sizeof dyn_why);
                if (st == 0) {
                    dyn_state = 1;
                    dyn_ptps[ndyn] = dyn[ndyn].ptps;
                    printf("  DynamO   run %d: %.4g particle-tau/s, Z %.4f, "
                           "%.1f s\n",
                           rep + 1, dyn[ndyn].ptps, dyn[ndyn].z,
                           dyn[ndyn].wall);
                    ++ndyn;
                } else {
                    dyn_state = st == 77 ? 77 : -1;
                    printf("DynamO: %s: %s\n",
                           st == 77 ? "skipped" : "FAILED", dyn_why);
                }
            }
        }
        rc_scenario_free(scn);
        dmed = median_index(d_rate, R);
        ric_rate = median(d_rate, R);
        ric_erate = median(d_erate, R);
        ric_prate = median(d_prate, R);
        ric_z = drun[dmed].z_mean;
        ric_zerr = drun[dmed].z_err;
        ric_zdev = fabs(ric_z / Z_REFERENCE - 1.0);
        if (dyn_state == 1 && ndyn > 0) {
            int m = median_index(dyn_ptps, ndyn);
            dyn_rate = median(dyn_ptps, ndyn);
            dyn_z = dyn[m].z;
            dyn_zdev = fabs(dyn_z / Z_REFERENCE - 1.0);
        } else if (dyn_state == 1) {
            dyn_state = -1;
        }
    }

    /* ============================================================== */
    /* 2. Per step against LAMMPS.                                      */
    load_average(la_step);
    ncfg = opt.nsizes * 4;
    cfg = (config *)calloc((size_t)ncfg, sizeof *cfg);
    if (!cfg) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    if (opt.no_lammps) {
        lammps_state = 77;
        snprintf(lammps_why, sizeof lammps_why, "left out (--no-lammps)");
    }
    printf("\n2. per step against LAMMPS: %ld steps, output every %d steps, "
           "from %s (load average %.2f)\n",
           opt.steps, opt.every,
           opt.melt_time > 0.0 ? "the molten fluid" : "the fcc lattice",
           la_step[0]);
    for (ci = 0; ci < ncfg; ++ci) {
        config *c = &cfg[ci];
        rc_scenario *scn, *scn_lat;
        char dir[128];
        int rep, dummy;
        double rates[MAX_REPEATS], lr[MAX_REPEATS], ll[MAX_REPEATS],
            lrss[MAX_REPEATS], lbig[MAX_REPEATS];
        c->s.n = opt.sizes[ci / 4];
        c->s.eta = etas[(ci / 2) % 2];
        c->s.dt = step_dts[(ci / 2) % 2];
        c->s.threads = 1 + ci % 2;
        c->s.steps = opt.steps;
        c->s.every = opt.every;
        c->s.eq_steps = 0;
        c->s.rdf_every = opt.rdf_every < -1 ? opt.steps : opt.rdf_every;
        c->s.exact = 0;     /* the default collision mode */
        if (opt.melt_time > 0.0 && ci % 2 == 0) {
            printf("  N %6ld eta %.2f: melting the lattice for %g tau "
                   "(untimed)...",
                   c->s.n, c->s.eta, opt.melt_time);
            if (melt(scn_path, tmp, c->s.n, c->s.eta, opt.melt_time, 2,
                     melt_yaml, sizeof melt_yaml, &c->melt) != 0) {
                fprintf(stderr, "bench: the melt failed; nothing written\n");
                return 1;
            }
            printf(" %.1f s, %.3g collisions per particle-tau\n",
                   c->melt.child_seconds,
                   c->melt.collisions / ((double)c->s.n * opt.melt_time));
        } else if (opt.melt_time > 0.0) {
            c->melt = cfg[ci - 1].melt;
        }
        c->molten = opt.melt_time > 0.0;
        c->s.from_file = c->molten;
        load_average(c->la);
        /* the warm-up from the lattice: with a molten start, its peak RSS
         * is the one set beside LAMMPS's (both build an fcc lattice;
         * reading an xyz file costs memory of its own).  The molten
         * scenario is loaded only after it: a forked child's peak RSS
         * counts the pages it shares with this process, and the loaded
         * frame's particle records (64 bytes each: 16 MiB at N = 256 000)
         * were in the warm-up's figure (its 2026-11-27 runs: 86.5 and
         * 103.5 MiB at eta 0.3 and 0.45 on 1 thread, where GNU time of
         * `ricochet run` gives 78-79 and 89-90) */
        if (c->molten) {
            rspec ls = c->s;
            ls.from_file = 0;
            scn = NULL;
            if (!(scn_lat = load_spec(scn_path, &ls, &dummy)))
                return 1;
        } else {
            if (!(scn = load_spec(scn_path, &c->s, &dummy)))
                return 1;
            scn_lat = scn;
        }
        snprintf(dir, sizeof dir, "%s/n%ld_eta%g_t%d", tmp, c->s.n, c->s.eta,
                 c->s.threads);
        for (rep = 0; rep <= R; ++rep) {
            run_rec *r = &c->rep[rep];
            if (rep == 1 && !scn &&
                !(scn = load_spec(melt_yaml, &c->s, &dummy))) {
                rc_scenario_free(scn_lat);
                return 1;
            }
            if (run_child(rep ? scn : scn_lat, dir, c->s.threads, r) != 0 ||
                validate(&c->s, r, rep ? "timed run" : "warm-up", 0) != 0) {
                fprintf(stderr, "bench: validation failed; nothing "
                                "written\n");
                rc_scenario_free(scn);
                if (scn_lat != scn)
                    rc_scenario_free(scn_lat);
                return 1;
            }
            if (rep == 0)
                c->maxrss_lattice_kib = r->maxrss_kib;
            else if (r->maxrss_kib > c->maxrss_kib)
                c->maxrss_kib = r->maxrss_kib;
            snprintf(version, sizeof version, "%s", r->version);
            if (rep > 0)
                rates[rep - 1] = r->rate;
            /* LAMMPS right after, same n, eta, dt, steps; ranks = threads */
            if (lammps_state == 0 || lammps_state == 1) {
                int st = lammps_once(lmp_script, c->s.n, c->s.eta,
                                     c->s.threads, c->s.steps, &c->lmp[rep],
                                     lammps_version, sizeof lammps_version,
                                     lammps_why, sizeof lammps_why);
                if (st == 0) {
                    lammps_state = 1;
                    if (rep > 0) {
                        lr[rep - 1] = c->lmp[rep].rate;
                        ll[rep - 1] = c->lmp[rep].loop;
                        lrss[rep - 1] = c->lmp[rep].rss_total_kib;
                        lbig[rep - 1] = c->lmp[rep].rss_largest_kib;
                    }
                } else if (st == 77) {
                    lammps_state = 77;
                    snprintf(lammps_why, sizeof lammps_why,
                             "not installed (%s exited 77: no lmp; Debian: "
                             "apt-get install lammps)",
                             lmp_script);
                    printf("LAMMPS: skipped: %s\n", lammps_why);
                } else {
                    lammps_state = -1;
                    fprintf(stderr, "bench: LAMMPS failed: %s\n", lammps_why);
                }
            }
        }
        rc_scenario_free(scn);
        if (scn_lat != scn)
            rc_scenario_free(scn_lat);
        if (!c->molten && c->maxrss_lattice_kib > c->maxrss_kib)
            c->maxrss_kib = c->maxrss_lattice_kib;
        if (!c->molten)
            c->maxrss_lattice_kib = c->maxrss_kib;
        c->med = 1 + median_index(rates, R);
        c->engine_rate = engine_rate(&c->rep[c->med]);
        if (lammps_state == 1) {
            c->lammps_ok = 1;
            c->lammps_rate = median(lr, R);
            c->lammps_loop = median(ll, R);
            c->lammps_rss_largest_kib = lbig[0];
            c->lammps_rss_total_kib = lrss[0];
            for (rep = 1; rep < R; ++rep) { /* peak over the repeats */
                c->lammps_rss_largest_kib =
                    fmax(c->lammps_rss_largest_kib, lbig[rep]);
                c->lammps_rss_total_kib =
                    isfinite(c->lammps_rss_total_kib)
                        ? fmax(c->lammps_rss_total_kib, lrss[rep])
                        : NAN;
            }
        }
        {
            const run_rec *m = &c->rep[c->med];
            printf("  N %6ld eta %.2f %d thread%s: ricochet %.4g "
                   "particle-steps/s (engine %.4g), RSS %.0f MiB",
                   c->s.n, c->s.eta, c->s.threads, c->s.threads > 1 ? "s" : " ",
                   m->rate, c->engine_rate,
                   (double)c->maxrss_lattice_kib / 1024.0);
            if (c->lammps_ok)
                printf("; LAMMPS %.4g, RSS %.0f MiB; ratio %.3f\n",
                       c->lammps_rate,
                       (isfinite(c->lammps_rss_total_kib)
                            ? c->lammps_rss_total_kib
                            : c->lammps_rss_largest_kib) /
                           1024.0,
                       m->rate / c->lammps_rate);
            else
                printf("\n");
        }
    }
    load_average(la_end);
    t_total = now() - t_start;

    /* ============================================================== */
    /* 3. Report.                                                       */
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
    add_num(o, "memory_gib", mem_total_gib());
    cJSON_AddItemToObject(o, "load_average_start", load_json(la_start));
    cJSON_AddItemToObject(o, "load_average_end", load_json(la_end));
    {
        static const char *const envs[] = {"OMP_WAIT_POLICY", "OMP_NUM_THREADS",
                                           "OMP_PROC_BIND", NULL};
        cJSON *ev = cJSON_AddObjectToObject(o, "environment");
        for (k = 0; envs[k]; ++k) {
            const char *v = getenv(envs[k]);
            if (v)
                cJSON_AddStringToObject(ev, envs[k], v);
            else
                cJSON_AddNullToObject(ev, envs[k]);
        }
    }
    cJSON_AddStringToObject(o, "load_note",
                            "1-, 5- and 15-minute load averages from "
                            "/proc/loadavg (also before each section and "
                            "each per-step configuration); the machine is "
                            "shared, so 2-thread and 2-rank figures are "
                            "sensitive to other load");
    cJSON_AddStringToObject(root, "ricochet_version", version);
    cJSON_AddStringToObject(root, "scenario", "examples/hard_sphere_fluid.yaml");
    cJSON_AddStringToObject(root, "backend", "cpu");
    o = cJSON_AddObjectToObject(root, "options");
    cJSON_AddBoolToObject(o, "quick", opt.quick);
    cJSON_AddNumberToObject(o, "repeats", R);
    {
        cJSON *sz = cJSON_AddArrayToObject(o, "sizes");
        for (k = 0; k < opt.nsizes; ++k)
            cJSON_AddItemToArray(sz, cJSON_CreateNumber((double)opt.sizes[k]));
    }
    cJSON_AddNumberToObject(o, "steps", (double)opt.steps);
    cJSON_AddNumberToObject(o, "output_every", opt.every);
    if (opt.rdf_every >= -1)
        cJSON_AddNumberToObject(o, "output_rdf_every", (double)opt.rdf_every);
    else
        cJSON_AddStringToObject(o, "output_rdf_every", "steps (one sample)");
    cJSON_AddNumberToObject(o, "dynamo_n", (double)opt.dyn_n);
    cJSON_AddNumberToObject(o, "sim_time", opt.sim_time);
    cJSON_AddNumberToObject(o, "equil_time", opt.equil_time);
    cJSON_AddNumberToObject(o, "melt_time", opt.melt_time);
    cJSON_AddItemToObject(o, "dts", cJSON_CreateDoubleArray(opt.dts, opt.ndts));
    cJSON_AddStringToObject(root, "statistic",
                            "median of the timed repeats; per-step section "
                            "after 1 warm-up of each code; ricochet and the "
                            "peer alternate; every ricochet run a forked "
                            "process");
    cJSON_AddNumberToObject(root, "total_seconds", t_total);
    o = cJSON_AddObjectToObject(root, "validation");
    cJSON_AddStringToObject(o, "checked",
                            "every ricochet run of the timed sections "
                            "(warm-ups included): status ok, requested "
                            "steps, particles and threads; exact collision "
                            "times in the equal-accuracy section");
    cJSON_AddNumberToObject(o, "max_rel_energy_error_below",
                            MAX_REL_ENERGY_ERROR);
    cJSON_AddNumberToObject(o, "max_momentum_error_below", MAX_MOMENTUM_ERROR);
    cJSON_AddBoolToObject(o, "passed", 1);

    /* section 1 */
    o = cJSON_AddObjectToObject(root, "dynamo_comparison");
    cJSON_AddStringToObject(o, "what",
                            "particle-tau per wall second at equal accuracy "
                            "(Z against 3.984), hard spheres, 1 thread each");
    cJSON_AddNumberToObject(o, "n", (double)ds.n);
    cJSON_AddNumberToObject(o, "packing_fraction", ds.eta);
    cJSON_AddNumberToObject(o, "threads", 1);
    cJSON_AddNumberToObject(o, "equil_time", equil_actual);
    cJSON_AddNumberToObject(o, "sim_time", sim_actual);
    cJSON_AddItemToObject(o, "load_average_before", load_json(la_dyn));
    {
        cJSON *sc = cJSON_AddArrayToObject(o, "dt_scan");
        for (k = 0; k < opt.ndts; ++k) {
            cJSON *e;
            if (scan_state[k] == 0) {
                e = cJSON_CreateObject();
                cJSON_AddNumberToObject(e, "dt", opt.dts[k]);
                cJSON_AddStringToObject(e, "result",
                                        "not run: a smaller dt was under "
                                        "half as fast as the best");
            } else {
                e = run_json(&scan[k], opt.dts[k]);
                cJSON_AddNumberToObject(e, "dt", opt.dts[k]);
                cJSON_AddNumberToObject(e, "steps", (double)scan[k].steps);
                cJSON_AddStringToObject(e, "result",
                                        scan_state[k] == 1 ? "ok" : "failed");
                cJSON_AddBoolToObject(e, "output_rdf_every_set", scan_rdf[k]);
            }
            cJSON_AddItemToArray(sc, e);
        }
        cJSON_AddStringToObject(o, "dt_scan_note",
                                "each dt: one run of equil_time from the fcc "
                                "lattice, no equilibration, exact collisions, "
                                "rows about 0.2 tau apart; increasing dt, "
                                "stopped once one is under half as fast as "
                                "the best; the fastest that succeeds is "
                                "chosen");
    }
    {
        cJSON *r = cJSON_AddObjectToObject(o, "ricochet"), *runs, *z;
        cJSON_AddNumberToObject(r, "dt", ds.dt);
        cJSON_AddStringToObject(r, "collision_times",
                                drun[dmed].collision_times[0]
                                    ? drun[dmed].collision_times
                                    : "exact (requested)");
        cJSON_AddNumberToObject(r, "steps", (double)ds.steps);
        cJSON_AddNumberToObject(r, "equilibration_steps", (double)ds.eq_steps);
        cJSON_AddNumberToObject(r, "output_every", (double)ds.every);
        if (drun_rdf)
            cJSON_AddNumberToObject(r, "output_rdf_every",
                                    (double)ds.rdf_every);
        else
            cJSON_AddStringToObject(r, "output_rdf_every",
                                    g_rdf_every_why[0]
                                        ? "not accepted by the scenario "
                                          "loader (g(r) at its default "
                                          "sampling)"
                                        : "not set");
        add_num(r, "particle_tau_per_second", ric_rate);
        add_num(r, "engine_particle_tau_per_second", ric_erate);
        add_num(r, "particle_tau_per_process_second", ric_prate);
        add_num(r, "wall_seconds", drun[dmed].wall);
        add_num(r, "max_rss_bytes", 1024.0 * (double)drun[dmed].maxrss_kib);
        add_num(r, "collisions", drun[dmed].collisions);
        z = cJSON_AddObjectToObject(r, "compressibility_factor");
        add_num(z, "mean", ric_z);
        add_num(z, "stderr", ric_zerr);
        add_num(z, "carnahan_starling", drun[dmed].z_cs);
        cJSON_AddNumberToObject(z, "reference", Z_REFERENCE);
        add_num(z, "rel_deviation_from_reference", ric_zdev);
        cJSON_AddBoolToObject(z, "within_0.5_percent",
                              ric_zdev <= Z_TOLERANCE);
        cJSON_AddStringToObject(
            r, "timing_note",
            "particle_tau_per_second = N x (equil + sim) / step-loop wall "
            "time (equilibration and observables included, setup "
            "excluded); engine_ = without the summary's time outside the "
            "engine (observables_and_output); per_process_second = over "
            "the whole forked run, setup and summary included");
        runs = cJSON_AddArrayToObject(r, "timed_runs");
        for (k = 0; k < R; ++k)
            cJSON_AddItemToArray(runs, run_json(&drun[k], ds.dt));
    }
    if (dyn_state == 1) {
        cJSON *d = cJSON_AddObjectToObject(o, "dynamo"), *runs;
        cJSON_AddStringToObject(d, "status", "measured");
        cJSON_AddStringToObject(d, "bin_dir", dyn_bin);
        cJSON_AddStringToObject(d, "found_by", dyn_how);
        cJSON_AddStringToObject(d, "script", "bench/peers/dynamo_hs.sh");
        cJSON_AddNumberToObject(d, "particle_tau_per_second", dyn_rate);
        add_num(d, "z", dyn_z);
        add_num(d, "rel_deviation_from_reference", dyn_zdev);
        cJSON_AddBoolToObject(d, "within_0.5_percent",
                              dyn_zdev <= Z_TOLERANCE);
        cJSON_AddStringToObject(d, "timing_note",
                                "N x sim_time / DynamO's own loop timer "
                                "(RuntimeSeconds; its equilibration run and "
                                "XML input/output outside it)");
        runs = cJSON_AddArrayToObject(d, "timed_runs");
        for (k = 0; k < ndyn; ++k) {
            cJSON *e = cJSON_CreateObject();
            add_num(e, "particle_tau_per_second", dyn[k].ptps);
            add_num(e, "wall_seconds", dyn[k].wall);
            add_num(e, "process_seconds", dyn[k].process_seconds);
            add_num(e, "script_seconds", dyn[k].seconds);
            add_num(e, "events", dyn[k].events);
            add_num(e, "z", dyn[k].z);
            add_num(e, "z_cs", dyn[k].z_cs);
            add_num(e, "sim_time", dyn[k].sim_time);
            add_num(e, "equil_time", dyn[k].equil_time);
            add_num(e, "mean_free_time", dyn[k].mean_free_time);
            add_num(e, "max_rss_bytes_largest_process",
                    1024.0 * dyn[k].rss_largest_kib);
            cJSON_AddItemToArray(runs, e);
        }
        add_num(o, "ratio_ricochet_to_dynamo", ric_rate / dyn_rate);
        add_num(o, "ratio_engine_to_dynamo", ric_erate / dyn_rate);
    } else {
        cJSON *d = cJSON_AddObjectToObject(o, "dynamo");
        cJSON_AddStringToObject(d, "status",
                                dyn_state == 77 ? "skipped" : "failed");
        cJSON_AddStringToObject(d, "reason", dyn_why);
    }

    /* section 2 */
    o = cJSON_AddObjectToObject(root, "lammps_comparison");
    cJSON_AddStringToObject(o, "what",
                            "particle-steps per second, ricochet threads "
                            "against LAMMPS WCA MPI ranks at the same N, "
                            "density, dt and steps");
    cJSON_AddItemToObject(o, "load_average_before", load_json(la_step));
    if (lammps_state == 1) {
        cJSON *l = cJSON_AddObjectToObject(o, "lammps");
        cJSON_AddStringToObject(l, "status", "measured");
        cJSON_AddStringToObject(l, "version", lammps_version);
        cJSON_AddStringToObject(l, "script", "bench/peers/lammps_wca.sh");
        cJSON_AddStringToObject(l, "model",
                                "WCA: lj/cut 2^(1/6) sigma, shifted; fcc at "
                                "rho = 6 eta / pi, T = 1, neighbor 0.3 bin "
                                "every 1 check yes, fix nve, thermo 0; "
                                "mpirun --bind-to none, OMP_NUM_THREADS=1");
        cJSON_AddStringToObject(l, "timing_note",
                                "N x steps / LAMMPS Loop time (setup "
                                "excluded; thermo 0 writes nothing in the "
                                "loop)");
        cJSON_AddStringToObject(l, "rss_note",
                                "max_rss_bytes: the sum over ranks of each "
                                "rank's peak RSS (GNU time in the script; "
                                "null without it); max_rss_bytes_largest_"
                                "process: the largest single process "
                                "(wait4 of the script's tree); peaks over "
                                "the timed repeats");
    } else {
        cJSON *l = cJSON_AddObjectToObject(o, "lammps");
        cJSON_AddStringToObject(l, "status",
                                lammps_state == 77 ? "skipped" : "failed");
        cJSON_AddStringToObject(l, "reason", lammps_why);
    }
    cJSON_AddStringToObject(o, "ricochet_timing_note",
                            "particle_steps_per_second = N x steps / "
                            "step-loop wall time (setup excluded, "
                            "observables every output_every steps and g(r) "
                            "every output_rdf_every steps included); "
                            "engine_ = without the time outside "
                            "the engine; start: molten = the fcc lattice "
                            "run for melt_time tau (exact collisions, dt "
                            "0.01, 2 threads, untimed), its last positions "
                            "read with fresh Maxwell-Boltzmann velocities at "
                            "kT = 1, so the timed steps see the fluid's "
                            "collision rate; fcc lattice (--melt-time 0): "
                            "the first steps of melting, with far fewer "
                            "collisions. LAMMPS starts from fcc either way "
                            "(a WCA step costs about the same in the "
                            "lattice and the fluid)");
    arr = cJSON_AddArrayToObject(o, "configurations");
    for (ci = 0; ci < ncfg; ++ci) {
        const config *c = &cfg[ci];
        const run_rec *m = &c->rep[c->med];
        cJSON *e = cJSON_CreateObject(), *s, *runs;
        int rep;
        cJSON_AddNumberToObject(e, "n", (double)c->s.n);
        cJSON_AddNumberToObject(e, "packing_fraction", c->s.eta);
        cJSON_AddNumberToObject(e, "threads", c->s.threads);
        cJSON_AddNumberToObject(e, "dt", c->s.dt);
        cJSON_AddNumberToObject(e, "steps", (double)c->s.steps);
        cJSON_AddNumberToObject(e, "output_every", (double)c->s.every);
        if (c->s.rdf_every >= 0 && g_rdf_every_ok == 1)
            cJSON_AddNumberToObject(e, "output_rdf_every",
                                    (double)c->s.rdf_every);
        else
            cJSON_AddStringToObject(e, "output_rdf_every",
                                    "the scenario's default");
        cJSON_AddItemToObject(e, "load_average_before", load_json(c->la));
        if (c->molten) {
            cJSON *mj = cJSON_AddObjectToObject(e, "start");
            cJSON_AddStringToObject(mj, "kind", "molten");
            cJSON_AddNumberToObject(mj, "melt_time", opt.melt_time);
            cJSON_AddNumberToObject(mj, "melt_dt", MELT_DT);
            add_num(mj, "melt_process_seconds", c->melt.child_seconds);
            add_num(mj, "melt_collisions_per_particle_tau",
                    c->melt.collisions / ((double)c->s.n * opt.melt_time));
        } else {
            cJSON_AddStringToObject(e, "start", "fcc lattice");
        }
        cJSON_AddStringToObject(e, "collision_times", m->collision_times);
        add_num(e, "particle_steps_per_second", m->rate);
        add_num(e, "engine_particle_steps_per_second", c->engine_rate);
        add_num(e, "wall_seconds", m->wall);
        s = cJSON_AddObjectToObject(e, "seconds");
        for (k = 0; k < m->nphase; ++k)
            add_num(s, m->phase[k], m->phase_sec[k]);
        add_num(e, "outside_engine_fraction", m->out_sec / m->wall);
        add_num(e, "engine_bytes_per_particle", m->bytes_per_particle);
        add_num(e, "max_rss_bytes", 1024.0 * (double)c->maxrss_lattice_kib);
        add_num(e, "max_rss_bytes_per_particle",
                1024.0 * (double)c->maxrss_lattice_kib / (double)c->s.n);
        add_num(e, "max_rss_bytes_timed_runs", 1024.0 * (double)c->maxrss_kib);
        cJSON_AddStringToObject(e, "max_rss_note",
                                c->molten
                                    ? "max_rss_bytes: the warm-up, started "
                                      "from the fcc lattice like LAMMPS; "
                                      "_timed_runs: the timed runs, which "
                                      "read the molten positions from an "
                                      "xyz file (its reading included)"
                                    : "all runs start from the fcc lattice");
        add_num(e, "collisions_per_particle_step",
                m->collisions / ((double)c->s.n * c->s.steps));
        add_num(e, "max_rel_energy_error", m->emax);
        add_num(e, "max_momentum_error", m->pmax);
        if (c->lammps_ok) {
            cJSON *l = cJSON_AddObjectToObject(e, "lammps"), *lr;
            cJSON_AddNumberToObject(l, "ranks", c->s.threads);
            add_num(l, "atom_steps_per_second", c->lammps_rate);
            add_num(l, "loop_seconds", c->lammps_loop);
            add_num(l, "max_rss_bytes", 1024.0 * c->lammps_rss_total_kib);
            add_num(l, "max_rss_bytes_largest_process",
                    1024.0 * c->lammps_rss_largest_kib);
            lr = cJSON_AddArrayToObject(l, "timed_atom_steps_per_second");
            for (rep = 1; rep <= R; ++rep)
                cJSON_AddItemToArray(lr, cJSON_CreateNumber(c->lmp[rep].rate));
            add_num(l, "warm_up_atom_steps_per_second", c->lmp[0].rate);
            add_num(e, "ratio_ricochet_to_lammps", m->rate / c->lammps_rate);
            add_num(e, "ratio_engine_to_lammps",
                    c->engine_rate / c->lammps_rate);
        }
        runs = cJSON_AddArrayToObject(e, "timed_runs");
        for (rep = 1; rep <= R; ++rep)
            cJSON_AddItemToArray(runs, run_json(&c->rep[rep], 0.0));
        {
            cJSON *w = run_json(&c->rep[0], 0.0);
            cJSON_AddStringToObject(w, "start", "fcc lattice");
            cJSON_AddItemToObject(e, "warm_up", w);
        }
        cJSON_AddItemToArray(arr, e);
    }

    /* targets, judged at the largest per-step size; table alongside */
    tf = open_memstream(&table, &table_size);
    if (!tf)
        tf = stdout;
    fprintf(tf, "\nEqual accuracy: N %ld, eta 0.3, 1 thread, %.4g tau after "
                "%.4g tau equilibration (Z reference %.3f)\n",
            ds.n, sim_actual, equil_actual, Z_REFERENCE);
    fprintf(tf, "  %-9s %7s %14s %14s %18s %9s\n", "code", "dt",
            "particle-tau/s", "engine only", "Z (stderr)", "|Z/ref-1|");
    fprintf(tf, "  %-9s %7g %14.4g %14.4g %9.4f (%6.4f) %8.3f%%\n",
            "ricochet", ds.dt, ric_rate, ric_erate, ric_z, ric_zerr,
            100 * ric_zdev);
    if (dyn_state == 1) {
        fprintf(tf, "  %-9s %7s %14.4g %14s %9.4f %8s %8.3f%%\n", "DynamO",
                "events", dyn_rate, "-", dyn_z, "", 100 * dyn_zdev);
        fprintf(tf, "  ratio ricochet/DynamO %.3f (engine only %.3f)\n",
                ric_rate / dyn_rate, ric_erate / dyn_rate);
    } else {
        fprintf(tf, "  DynamO: %s: %s\n",
                dyn_state == 77 ? "skipped" : "failed", dyn_why);
    }
    fprintf(tf, "\nPer step against LAMMPS WCA (threads = MPI ranks)\n");
    fprintf(tf, "  %7s %5s %3s %5s %11s %11s %11s %7s %7s %8s %8s %9s\n", "N",
            "eta", "thr", "steps", "p-steps/s", "engine/s", "LAMMPS/s",
            "ratio", "ratio_e", "RSS MiB", "LMP MiB", "coll/p-st");
    for (ci = 0; ci < ncfg; ++ci) {
        const config *c = &cfg[ci];
        const run_rec *m = &c->rep[c->med];
        fprintf(tf, "  %7ld %5.2f %3d %5ld %11.4g %11.4g ", c->s.n, c->s.eta,
                c->s.threads, c->s.steps, m->rate, c->engine_rate);
        if (c->lammps_ok)
            fprintf(tf, "%11.4g %7.3f %7.3f ", c->lammps_rate,
                    m->rate / c->lammps_rate, c->engine_rate / c->lammps_rate);
        else
            fprintf(tf, "%11s %7s %7s ", "-", "-", "-");
        fprintf(tf, "%8.1f ", (double)c->maxrss_lattice_kib / 1024.0);
        if (c->lammps_ok)
            fprintf(tf, "%8.1f ",
                    (isfinite(c->lammps_rss_total_kib)
                         ? c->lammps_rss_total_kib
                         : c->lammps_rss_largest_kib) /
                        1024.0);
        else
            fprintf(tf, "%8s ", "-");
        fprintf(tf, "%9.3e\n", m->collisions / ((double)c->s.n * c->s.steps));
    }
    fprintf(tf, "  (p-steps/s: summary particle_steps_per_second, "
                "observables every %d steps and g(r) included; engine/s: "
                "without "
                "them; RSS MiB: peak of a run from the fcc lattice; LMP "
                "MiB: sum over ranks)\n",
            opt.every);

    tg = cJSON_AddObjectToObject(root, "targets");
    fprintf(tf, "\nTargets\n  %-34s %9s %10s  %s\n", "target", "goal",
            "measured", "met");
    {
        long nbig = opt.sizes[0];
        int at_n;
        const config *c03[2] = {NULL, NULL}, *c045[2] = {NULL, NULL};
        cJSON *t;
        for (k = 1; k < opt.nsizes; ++k)
            if (opt.sizes[k] > nbig)
                nbig = opt.sizes[k];
        at_n = nbig == TARGET_N_PER_STEP;
        for (ci = 0; ci < ncfg; ++ci) {
            const config *c = &cfg[ci];
            if (c->s.n != nbig)
                continue;
            if (c->s.eta == 0.3)
                c03[c->s.threads - 1] = c;
            else
                c045[c->s.threads - 1] = c;
        }
#define TARGET_ROW(key, what, goal, meas, met_)                               \
    do {                                                                      \
        int m_ = (met_);                                                      \
        t = cJSON_AddObjectToObject(tg, key);                                 \
        cJSON_AddStringToObject(t, "what", what);                             \
        cJSON_AddNumberToObject(t, "target", goal);                           \
        add_num(t, "measured", meas);                                         \
        add_met(t, m_);                                                       \
        fprintf(tf, "  %-34s %9.3g %10.4g  %s\n", key, (double)(goal),       \
                (double)(meas), m_ < 0 ? "not measured" : m_ ? "yes" : "no"); \
    } while (0)
        {
            const config *const *pair[2] = {c03, c045};
            static const char *const keys[2][3] = {
                {"ratio_to_lammps_eta_0.3", "speedup_2_threads_eta_0.3",
                 "peak_rss_vs_lammps_eta_0.3"},
                {"ratio_to_lammps_eta_0.45", "speedup_2_threads_eta_0.45",
                 "peak_rss_vs_lammps_eta_0.45"}};
            static const double goals[2] = {TARGET_RATIO_LAMMPS_03,
                                            TARGET_RATIO_LAMMPS_045};
            int w;
            for (w = 0; w < 2; ++w) {
                const config *one = pair[w][0], *two = pair[w][1];
                double ratio = NAN, sp = NAN, rss_r = NAN, rss_l = NAN;
                char what[256];
                if (two && two->lammps_ok)
                    ratio = two->rep[two->med].rate / two->lammps_rate;
                snprintf(what, sizeof what,
                         "ricochet / LAMMPS WCA particle-steps/s, N %ld, eta "
                         "%g, 2 threads vs 2 MPI ranks, same run",
                         nbig, etas[w]);
                TARGET_ROW(keys[w][0], what, goals[w], ratio,
                           isfinite(ratio) ? ratio >= goals[w] : -1);
                cJSON_AddNumberToObject(t, "n", (double)nbig);
                cJSON_AddBoolToObject(t, "at_target_n", at_n);
                if (two && two->lammps_ok)
                    add_num(t, "measured_engine_only",
                            two->engine_rate / two->lammps_rate);
                if (one && two)
                    sp = two->rep[two->med].rate / one->rep[one->med].rate;
                snprintf(what, sizeof what,
                         "ricochet particle-steps/s on 2 threads / 1 thread, "
                         "N %ld, eta %g",
                         nbig, etas[w]);
                TARGET_ROW(keys[w][1], what, TARGET_SPEEDUP, sp,
                           isfinite(sp) ? sp >= TARGET_SPEEDUP : -1);
                cJSON_AddNumberToObject(t, "n", (double)nbig);
                cJSON_AddBoolToObject(t, "at_target_n", at_n);
                if (one && two)
                    add_num(t, "measured_engine_only",
                            two->engine_rate / one->engine_rate);
                if (two) {
                    rss_r = (double)two->maxrss_lattice_kib;
                    if (two->lammps_ok)
                        rss_l = isfinite(two->lammps_rss_total_kib)
                                    ? two->lammps_rss_total_kib
                                    : two->lammps_rss_largest_kib;
                }
                snprintf(what, sizeof what,
                         "ricochet peak RSS / LAMMPS's (sum over ranks), N "
                         "%ld, eta %g, 2 threads vs 2 ranks; at most 1",
                         nbig, etas[w]);
                TARGET_ROW(keys[w][2], what, 1.0, rss_r / rss_l,
                           isfinite(rss_r / rss_l) ? rss_r <= rss_l : -1);
                add_num(t, "ricochet_max_rss_bytes", 1024.0 * rss_r);
                add_num(t, "lammps_max_rss_bytes", 1024.0 * rss_l);
                if (two && two->lammps_ok)
                    cJSON_AddStringToObject(
                        t, "lammps_rss_from",
                        isfinite(two->lammps_rss_total_kib)
                            ? "sum of each rank's peak (GNU time)"
                            : "largest process only (no GNU time): "
                              "undercounts 2 ranks");
                if (one && one->lammps_ok)
                    add_num(t, "ratio_1_thread_vs_1_rank",
                            (double)one->maxrss_lattice_kib /
                                (isfinite(one->lammps_rss_total_kib)
                                     ? one->lammps_rss_total_kib
                                     : one->lammps_rss_largest_kib));
                cJSON_AddNumberToObject(t, "n", (double)nbig);
                cJSON_AddBoolToObject(t, "at_target_n", at_n);
            }
        }
        {
            double ratio = dyn_state == 1 ? ric_rate / dyn_rate : NAN;
            int zok = ric_zdev <= Z_TOLERANCE;
            char what[300];
            snprintf(what, sizeof what,
                     "ricochet / DynamO particle-tau per wall second, N %ld, "
                     "eta 0.3, 1 thread each, ricochet's Z within 0.5 %% of "
                     "3.984",
                     ds.n);
            TARGET_ROW("ratio_to_dynamo", what, TARGET_RATIO_DYNAMO, ratio,
                       isfinite(ratio) ? ratio >= TARGET_RATIO_DYNAMO && zok
                                       : -1);
            cJSON_AddNumberToObject(t, "n", (double)ds.n);
            cJSON_AddBoolToObject(t, "at_target_n", ds.n == TARGET_N_DYNAMO);
            add_num(t, "measured_engine_only",
                    dyn_state == 1 ? ric_erate / dyn_rate : NAN);
            add_num(t, "z", ric_z);
            add_num(t, "z_stderr", ric_zerr);
            add_num(t, "z_rel_deviation", ric_zdev);
            cJSON_AddBoolToObject(t, "z_within_0.5_percent", zok);
            add_num(t, "dynamo_z", dyn_z);
            if (dyn_state != 1)
                cJSON_AddStringToObject(t, "not_measured_because", dyn_why);
            fprintf(tf, "  %-34s %9s %10.4f  %s\n", "  ricochet Z (|Z/3.984-1|)",
                    "<= 0.5%", ric_z, zok ? "yes" : "no");
        }
        {
            const config *two = c03[1];
            double v = two ? two->rep[two->med].rate : NAN;
            TARGET_ROW("throughput_eta_0.3_2_threads",
                       "particle-steps/s at N 256000, eta 0.3, 2 threads "
                       "(earlier issue)",
                       TARGET_PARTICLE_STEPS_PER_SECOND, v,
                       isfinite(v) ? v >= TARGET_PARTICLE_STEPS_PER_SECOND
                                   : -1);
            cJSON_AddNumberToObject(t, "n", (double)nbig);
            cJSON_AddBoolToObject(t, "at_target_n", at_n);
        }
#undef TARGET_ROW
        if (!at_n || ds.n != TARGET_N_DYNAMO)
            fprintf(tf, "  (not at the targets' N: per-step N %ld, DynamO "
                        "N %ld; the full run is N 256000 and 32000)\n",
                    nbig, ds.n);
    }
    fprintf(tf, "\nload average %.2f %.2f %.2f at start, %.2f %.2f %.2f at "
                "end; %.0f s in all\n",
            la_start[0], la_start[1], la_start[2], la_end[0], la_end[1],
            la_end[2], t_total);
    if (tf != stdout) {
        fclose(tf);
        fputs(table, stdout);
    }

    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text || !(f = fopen(opt.out, "w"))) {
        perror(opt.out);
        free(text);
        free(table);
        free(cfg);
        return 1;
    }
    fprintf(f, "%s\n", text);
    fclose(f);
    free(text);
    snprintf(txt_path, sizeof txt_path, "%s", opt.out);
    {
        size_t len = strlen(txt_path);
        if (len > 5 && !strcmp(txt_path + len - 5, ".json"))
            txt_path[len - 5] = '\0';
        strncat(txt_path, ".txt", sizeof txt_path - strlen(txt_path) - 1);
    }
    if (table && (f = fopen(txt_path, "w")) != NULL) {
        fputs(table + 1, f); /* without the leading blank line */
        fclose(f);
    }
    printf("wrote %s and %s\n", opt.out, txt_path);
    free(table);
    free(cfg);
    return 0;
}

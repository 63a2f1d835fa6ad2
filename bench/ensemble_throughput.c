/* Ensemble throughput on the CPU: member-steps per second of the library's
 * ensemble engines, a plain scalar C version of the pogo-stick GVI step,
 * the machine's measured double-precision FMA peak, and end-to-end times
 * of the ensemble examples through the CLI.
 *
 *   bench_ensemble_throughput [out.json]
 *       (default bench/results/ensemble_throughput.json)
 *   RC_BENCH_MEMBERS=N   run N pogo members instead of the file's 10^5
 *                        (library, C loop and CLI alike; a quick check)
 *   RC_BENCH_CLI=PATH    the ricochet binary (default: the build's
 *                        ricochet_cli, RICOCHET_CLI from CMake)
 *   RC_BENCH_ONLY=cradle_lanes | cart_pendulum_lanes
 *                        run only that section (3c or 3b: validation and
 *                        timing, the table's rows on stdout); no JSON is
 *                        written (a quick measurement)
 *
 * In order:
 *  1. Pogo validation (examples/pogo_ensemble.yaml); these runs are also
 *     the warm-up.  The lane engine (the default: a batch's members in
 *     SIMD lanes), the batch engine's scalar body (scalar_batch = 1) and
 *     the lane engine at 2 threads must write byte-identical members.csv;
 *     the per-member engine (per_member = 1, on the first PER_MEMBER_MAX
 *     members) the same energy errors and impacts; the scalar C loop
 *     (pogo_member()) the same energy errors within FINAL_REL_TOL and the
 *     same impacts, member by member.  ensemble.json's engine.step says
 *     which path each run took ("lanes" or "scalar") and goes into the
 *     JSON.
 *  2. Pogo timing: each of REPEATS repeats runs the lane engine (1
 *     thread), the scalar body (1 thread), the C loop and the lane engine
 *     (2 threads) one after another, so that load from elsewhere falls on
 *     all four alike; medians, ratios lanes/scalar body and lanes/C loop,
 *     and each one's useful flops (flops_per_member_step, counted by hand
 *     below) as a fraction of the measured peak.  members.csv is checked
 *     identical again after the timed runs.
 *  3. Cradle (cradle_ensemble.yaml) and cart-pendulum
 *     (cart_pendulum_sweep.yaml): the default engine at 1 and 2 threads,
 *     and the scalar body at 1 thread when the default engine is the
 *     batch engine (otherwise scalar_batch changes nothing and the JSON
 *     says why, from engine.why: today both run per member).
 *  3b. Equality constraints in lanes: the cart-pendulum of
 *     cart_pendulum_sweep.yaml as the batch engine takes it (GVI at dt
 *     0.01, members differing only in Xi(beta), no reference; CP_MEMBERS
 *     members x 500 steps): the lane engine (1 thread), the scalar body
 *     (1 thread) and the lane engine (2 threads) must write byte-identical
 *     members.csv (checked before and after timing); each of REPEATS
 *     repeats runs the three one after another, and the lanes/scalar-body
 *     ratio is reported per repeat with the load average.
 *  3c. The cradle in the batch engine: cradle_ensemble.yaml's model and
 *     dt x mass grid at CR_MEMBERS members (midpoint base, per-member dt
 *     and masses), timed and checked as 3b.
 *  4. End to end: wall time from spawn to exit of `ricochet run EXAMPLE
 *     --out TMPDIR --quiet --threads 2` for the three examples, after a
 *     `ricochet validate` of each (warm-up), alternating; the CLI's pogo
 *     members.csv must equal the library's.
 *  5. Peak: 12 independent FMA chains per thread, at the widest width the
 *     CPU has (AVX-512, else AVX2, else scalar) and at AVX2, 1 and 2
 *     threads; fractions divide by the larger.
 *  6. Report: a table on stdout and the JSON (machine with the load
 *     average at start and end, one object per workload, end_to_end,
 *     peak, and `targets`: the targets and whether each is met).
 * Every figure is the median of REPEATS repeats after a warm-up run.
 * Nothing is written when a validation fails (exit 1). */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw, posix_spawn */
#define _DEFAULT_SOURCE   /* getloadavg */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RC_BENCH_X86 1
#endif

#include <cjson/cJSON.h>

#include "ricochet/ricochet.h"

#define REPEATS 3
/* Members the per-member engine runs (the first ones): it is about ten
 * times slower than the batch engine, and member k does not depend on
 * the member count. */
#define PER_MEMBER_MAX 10000L
/* Scalar and library relative energy errors must agree to this.  Both
 * integrate the same map with the same contact decisions; only the order
 * of operations differs (spring gradient k (r-l)/r x against k (x-l),
 * energy summed per particle): a few ulps per step, 5e-15 at most after
 * 500 steps over 2000 members.  A wrong contact decision is far above it
 * (leaving out the predictor update after a reflection: 0.2). */
#define FINAL_REL_TOL 1e-9

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

static double median3(double *t)
{
    qsort(t, REPEATS, sizeof t[0], cmp);
    return t[REPEATS / 2];
}

static void die_err(const char *what, const rc_error *err)
{
    char buf[2600];
    fprintf(stderr, "bench: %s: %s\n", what,
            rc_error_format(err, buf, sizeof buf));
    exit(1);
}

/* ------------------------------------------------------------------ */
/* Temporary output directory.                                         */

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(const char *dir)
{
    /* depth first, so directories are empty when removed; no symlink
     * following (FTW_PHYS): only what the ensemble runs wrote goes */
    if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "bench: could not remove %s completely\n", dir);
}

/* The run's temporary directory, removed at exit on every path (die_err
 * and the validation failures exit from inside helpers). */
static char g_tmp[64];

static void rm_tmp(void)
{
    if (g_tmp[0])
        rm_tree(g_tmp);
}

/* ------------------------------------------------------------------ */
/* members.csv                                                         */

/* The columns of members.csv this program reads (names from
 * src/host/ensemble.c).  value is the first varied value (the pogo drop
 * height); NULL arrays are not read. */
typedef struct members_csv {
    long n;
    double *value, *final_rel, *max_rel;
    long *impacts, *steps;
    long not_ok; /* members whose status is not "ok" */
} members_csv;

static void members_free(members_csv *m)
{
    free(m->value);
    free(m->final_rel);
    free(m->max_rel);
    free(m->impacts);
    free(m->steps);
    memset(m, 0, sizeof *m);
}

/* Column index of `name` in a header line (split in place), or -1. */
static int csv_split(char *line, char **fields, int max)
{
    int n = 0;
    char *s = line;
    line[strcspn(line, "\r\n")] = '\0';
    while (n < max) {
        fields[n++] = s;
        s = strchr(s, ',');
        if (!s)
            break;
        *s++ = '\0';
    }
    return n;
}

static int csv_col(char **fields, int n, const char *name)
{
    int i;
    for (i = 0; i < n; ++i)
        if (!strcmp(fields[i], name))
            return i;
    return -1;
}

/* Read dir/members.csv, expecting `n` members; value_col is the varied
 * column's header (NULL: not read). */
static int members_read(const char *dir, long n, const char *value_col,
                        members_csv *m)
{
    char path[1200], line[4096], *f[64];
    int nf, cv, cf, cm, ci, cs, cst;
    long k = 0;
    FILE *fp;
    memset(m, 0, sizeof *m);
    snprintf(path, sizeof path, "%s/members.csv", dir);
    if (!(fp = fopen(path, "r")) || !fgets(line, sizeof line, fp)) {
        fprintf(stderr, "bench: cannot read %s\n", path);
        if (fp)
            fclose(fp);
        return -1;
    }
    nf = csv_split(line, f, 64);
    cv = value_col ? csv_col(f, nf, value_col) : -1;
    cf = csv_col(f, nf, "final_rel_energy_error");
    cm = csv_col(f, nf, "max_rel_energy_error");
    ci = csv_col(f, nf, "impacts");
    cs = csv_col(f, nf, "steps");
    cst = csv_col(f, nf, "status");
    if ((value_col && cv < 0) || cf < 0 || cm < 0 || ci < 0 || cs < 0 ||
        cst < 0) {
        fprintf(stderr, "bench: %s lacks an expected column\n", path);
        fclose(fp);
        return -1;
    }
    m->n = n;
    m->value = (double *)calloc((size_t)n, sizeof(double));
    m->final_rel = (double *)calloc((size_t)n, sizeof(double));
    m->max_rel = (double *)calloc((size_t)n, sizeof(double));
    m->impacts = (long *)calloc((size_t)n, sizeof(long));
    m->steps = (long *)calloc((size_t)n, sizeof(long));
    if (!m->value || !m->final_rel || !m->max_rel || !m->impacts ||
        !m->steps) {
        fclose(fp);
        members_free(m);
        return -1;
    }
    while (k < n && fgets(line, sizeof line, fp)) {
        if (csv_split(line, f, 64) != nf || strtol(f[0], NULL, 10) != k)
            break;
        /* rc_short in ensemble.c writes the shortest text that reads back
         * as the same double: strtod gives the member's exact value */
        if (cv >= 0)
            m->value[k] = strtod(f[cv], NULL);
        m->final_rel[k] = strtod(f[cf], NULL);
        m->max_rel[k] = strtod(f[cm], NULL);
        m->impacts[k] = strtol(f[ci], NULL, 10);
        m->steps[k] = strtol(f[cs], NULL, 10);
        m->not_ok += strcmp(f[cst], "ok") != 0;
        ++k;
    }
    fclose(fp);
    if (k != n) {
        fprintf(stderr, "bench: %s: %ld member rows, expected %ld\n", path,
                k, n);
        members_free(m);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Library ensembles.                                                  */

/* Median member-steps/s of REPEATS runs of `scn` into dir at `threads`
 * (per_member: with the per-member engine instead of the batch engine);
 * every member must end ok. */
/* How the library runs an ensemble: the default engine (batch, lanes
 * where the plan allows), the batch engine's scalar body (scalar_batch),
 * or every member its own system (per_member). */
enum { ENG_DEFAULT, ENG_SCALAR_BODY, ENG_PER_MEMBER };

/* One run of `scn` into dir at `threads`; every member must end ok.
 * Returns the library's member-steps/s (member steps over the wall time
 * of the integration, members.csv writing excluded). */
static double library_run(const rc_scenario *scn, const char *dir,
                          int threads, int engine)
{
    rc_ensemble_options eo;
    rc_ensemble_result er;
    rc_error err;
    memset(&eo, 0, sizeof eo); /* zero = default for fields added later */
    eo.out_dir = dir;
    eo.threads = threads;
    eo.per_member = engine == ENG_PER_MEMBER;
    eo.scalar_batch = engine == ENG_SCALAR_BODY;
    if (rc_ensemble_run(scn, &eo, &er, &err) != RC_OK)
        die_err("ensemble run", &err);
    if (er.ok != er.members) {
        fprintf(stderr,
                "bench: %s: %ld of %ld members did not end ok (%ld "
                "failed, %ld invalid); see %s/ensemble.json\n",
                rc_scenario_path(scn), er.members - er.ok, er.members,
                er.failed, er.invalid, dir);
        exit(1);
    }
    return er.member_steps_per_second;
}

/* Median member-steps/s of REPEATS runs (after one warm-up run, which
 * also leaves dir/ensemble.json for engine_of()). */
static double library_rate(const rc_scenario *scn, const char *dir,
                           int threads, int engine)
{
    double r[REPEATS];
    int rep;
    library_run(scn, dir, threads, engine);
    for (rep = 0; rep < REPEATS; ++rep)
        r[rep] = library_run(scn, dir, threads, engine);
    return median3(r);
}

/* The whole of a small file, NUL-terminated (NULL if unreadable). */
static char *slurp(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = (char *)malloc((size_t)n + 1))) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = '\0';
            if (len)
                *len = n;
        }
    }
    fclose(f);
    return buf;
}

/* 1 when dir_a/members.csv and dir_b/members.csv have the same bytes. */
static int members_identical(const char *dir_a, const char *dir_b)
{
    char pa[1200], pb[1200], *a, *b;
    long na = -1, nb = -2;
    int same;
    snprintf(pa, sizeof pa, "%s/members.csv", dir_a);
    snprintf(pb, sizeof pb, "%s/members.csv", dir_b);
    a = slurp(pa, &na);
    b = slurp(pb, &nb);
    same = a && b && na == nb && memcmp(a, b, (size_t)na) == 0;
    free(a);
    free(b);
    return same;
}

/* The `engine` object of dir/ensemble.json (name, and step for the CPU
 * batch engine or why for the per-member one): which path ran.  The
 * caller owns it; a {"name": "unknown"} object when the file is
 * unreadable. */
static cJSON *engine_of(const char *dir)
{
    char path[1200], *text;
    cJSON *root, *eng = NULL;
    snprintf(path, sizeof path, "%s/ensemble.json", dir);
    text = slurp(path, NULL);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (root)
        eng = cJSON_DetachItemFromObjectCaseSensitive(root, "engine");
    cJSON_Delete(root);
    if (!eng) {
        eng = cJSON_CreateObject();
        cJSON_AddStringToObject(eng, "name", "unknown");
    }
    return eng;
}

/* "lanes", "scalar", or the engine's name when it is not the CPU batch
 * engine (e.g. "per-member"). */
static const char *engine_step(const cJSON *eng)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(eng, "step");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(eng, "name");
    if (cJSON_IsString(s))
        return s->valuestring;
    return cJSON_IsString(n) ? n->valuestring : "unknown";
}

/* wall_seconds of dir/ensemble.json: the integration alone, without
 * process start, scenario parsing and the writing of members.csv (NAN
 * when unreadable). */
static double ensemble_wall(const char *dir)
{
    char path[1200], *text;
    cJSON *root;
    const cJSON *w;
    double x = NAN;
    snprintf(path, sizeof path, "%s/ensemble.json", dir);
    text = slurp(path, NULL);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
    w = cJSON_GetObjectItemCaseSensitive(root, "wall_seconds");
    if (cJSON_IsNumber(w))
        x = w->valuedouble;
    cJSON_Delete(root);
    return x;
}

static int engine_is_batch(const cJSON *eng)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(eng, "name");
    return cJSON_IsString(n) && !strcmp(n->valuestring, "batch");
}

/* ------------------------------------------------------------------ */
/* End to end: the CLI.                                                */

/* Wall seconds of `cli run scenario --out dir --quiet --threads 2
 * [--set set]` (or `cli validate scenario` when dir is NULL: the
 * warm-up), from spawn to exit, its stdout discarded; -1 when it does not
 * exit 0. */
static double cli_seconds(const char *cli, const char *scenario,
                          const char *dir, const char *set)
{
    char *argv[12];
    int a = 0, status = 0;
    pid_t pid;
    double t0, t;
    posix_spawn_file_actions_t fa;
    argv[a++] = (char *)cli;
    if (dir) {
        argv[a++] = (char *)"run";
        argv[a++] = (char *)scenario;
        argv[a++] = (char *)"--out";
        argv[a++] = (char *)dir;
        argv[a++] = (char *)"--quiet";
        argv[a++] = (char *)"--threads";
        argv[a++] = (char *)"2";
        if (set) {
            argv[a++] = (char *)"--set";
            argv[a++] = (char *)set;
        }
    } else {
        argv[a++] = (char *)"validate";
        argv[a++] = (char *)scenario;
    }
    argv[a] = NULL;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1.0;
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    t0 = now();
    if (posix_spawn(&pid, cli, &fa, NULL, argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        fprintf(stderr, "bench: cannot start %s\n", cli);
        return -1.0;
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            break;
    t = now() - t0;
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench: %s %s %s failed (status %d)\n", cli,
                dir ? "run" : "validate", scenario, status);
        return -1.0;
    }
    return t;
}

/* ------------------------------------------------------------------ */
/* Scalar C baseline: one pogo stick by GVI with the Verlet base.       */

/* The pogo stick of examples/pogo_ensemble.yaml, written out: particle 0
 * (upper) and 1 (lower) on a vertical line, V = m0 g q0 + m1 g q1 +
 * k/2 (q0 - q1 - L)^2 (gravity, spring; q0 > q1 throughout, so
 * |q0 - q1| = q0 - q1), wall g(q) = q1 >= 0 on particle 1.  check_pogo()
 * compares these constants with the loaded scenario. */
#define POGO_M0 1.0
#define POGO_M1 1.0
#define POGO_G 9.8
#define POGO_K 10.0
#define POGO_L 5.0
#define POGO_Q0 6.0 /* upper mass starts here; the lower one at the member's
                       drop height; both at rest */

typedef struct pogo_params {
    double im0, im1;   /* inverse masses */
    double mg0, mg1;   /* m_i g: gradient of the gravity term */
    double k, hk, L;   /* spring constant, k/2, rest length */
    double h, hh;      /* dt, dt/2 */
    double hm0, hm1;   /* dt/m_i */
    long steps, every; /* steps per member, steps between diagnostics */
} pogo_params;

typedef struct pogo_out {
    double final_rel, max_rel;
    long impacts;            /* reflections (the library's "impacts") */
    long in_a, in_s, rows;   /* counts for the flop estimate */
} pogo_out;

/* Flops (add, sub, mul, div; not fabs, compare, sign change) of the
 * scalar member-step below, counted by hand:
 *   every step                                              22
 *     grad V(q): d = q0-q1-L (2), f = k d (1), g0, g1 (2)     5
 *     predictor of particle 1: pk1 = p1 - h/2 g1, qp1 (2+2)   4
 *     particle 0: pk0 = p0 - h/2 g0, x0 = q0 + h/m0 pk0       4
 *     grad V(x)                                               5
 *     momenta: p0 = pk0 - h/2 g0(x), p1 likewise (2+2)        4
 *   a step in the extended set A (contact candidate)     +2
 *     normal speed p1/m1 for the approach and resting tests (counted
 *     twice even where || skips the second)
 *   a reflection                                         +4
 *     predictor of particle 1 again with the reflected p1 (p1 -> -p1 is
 *     a sign change)
 *   a step in the smooth set S                           +2
 *     multiplier mu = -qp1/(h/m1) (1), release threshold (1)
 *   a diagnostics row (every `every` steps, and step 0)  17
 *     d (2), kinetic 1/2 (p0^2/m0 + p1^2/m1) (6), potential
 *     m0 g q0 + m1 g q1 + k/2 d^2 (7), (H - E0)/scale (2)
 * flops_per_member_step in the JSON is the average of these over the
 * validated members, with the counts the baseline records. */
#define FLOPS_STEP 22.0
#define FLOPS_IN_A 2.0
#define FLOPS_REFLECT 4.0
#define FLOPS_IN_S 2.0
#define FLOPS_ROW 17.0

static double pogo_energy(const pogo_params *P, double q0, double q1,
                          double p0, double p1)
{
    double d = q0 - q1 - P->L;
    return 0.5 * (P->im0 * p0 * p0 + P->im1 * p1 * p1) + P->mg0 * q0 +
           P->mg1 * q1 + P->hk * d * d;
}

/* The library's automatic contact tolerances for a pogo stick at rest
 * with the lower mass at z (rc_gvi_prepare_ in src/host/gvi.c): eps_g =
 * 1e-9 x the length scale (largest distance of a particle from the
 * centroid; the radii are 0), eps_v = 1e-8 x the speed scale (at rest:
 * h x the largest |grad V|/m). */
static void pogo_tolerances(const pogo_params *P, double z, double *eps_g,
                            double *eps_v)
{
    double c = POGO_Q0 / 2.0 + z / 2.0, f = P->k * (POGO_Q0 - z - P->L);
    double ell = fmax(fabs(POGO_Q0 - c), fabs(z - c));
    double a = fmax(fabs(P->mg0 + f) * P->im0, fabs(P->mg1 - f) * P->im1);
    double v = P->h * a;
    *eps_g = 1e-9 * (ell > 0.0 ? ell : 1.0);
    *eps_v = 1e-8 * (v > 0.0 ? v : ell / P->h);
}

/* One member: `steps` GVI steps from the drop height z, with the
 * library's diagnostics (relative energy error every `every` steps).
 *
 * The GVI step of src/host/gvi.c for this system: one inequality, no
 * equality, Verlet base, metric M^-1 (energy: hamiltonian).
 *   1. predictor qp = q + h M^-1 (p - h/2 grad V(q)) (explicit drift);
 *   2. the wall is in A if q1 <= eps_g or qp1 <= 0;
 *   3. if in A and approaching (p1/m1 < -eps_v) the generalized
 *      reflection: one column n = e1, Gram n^T M^-1 n = 1/m1, multiplier
 *      -2 p1, so p1 -> -p1 (and particle 0 untouched); a second pass finds
 *      it leaving, and the closure of A (R2) re-evaluates the predictor;
 *   4. in S if resting (q1 <= eps_g and |p1/m1| <= eps_v) or if the
 *      predictor still crosses the wall (R3: qp1 < 0);
 *   5. position update: in S, hold x1 = 0; the Verlet position update is
 *      linear in the multiplier, x1 = qp1 + (h/m1) mu, so mu = -qp1 m1/h;
 *      release (x1 = qp1) when mu < -1e-12 max|p|, as the library does;
 *   6. momentum update p' = p - h/2 grad V(q) + mu n - h/2 grad V(x), and
 *      for a held contact the projection removing the normal momentum,
 *      which sets p1' = 0 whatever mu was (so mu enters only the release
 *      test). */
static void pogo_member(const pogo_params *P, double z, pogo_out *o)
{
    double q0 = POGO_Q0, q1 = z, p0 = 0.0, p1 = 0.0;
    double eps_g, eps_v, e0 = 0.0, scale = 1.0;
    long step;
    pogo_tolerances(P, z, &eps_g, &eps_v);
    memset(o, 0, sizeof *o);
    for (step = 0;; ++step) {
        double d, f, g0, g1, pk0, pk1, qp1;
        int in_a, held = 0;
        if (step % P->every == 0 || step == P->steps) {
            double e = pogo_energy(P, q0, q1, p0, p1), rel;
            if (step == 0) {
                /* rc_energy_scale: |H0|, or T0 + |V0| when H0 ~ 0; at
                 * rest T0 = 0, so that is |H0| unless it is 0 */
                e0 = e;
                scale = e0 != 0.0 ? fabs(e0) : 1.0;
            }
            rel = (e - e0) / scale;
            o->max_rel = fmax(o->max_rel, fabs(rel));
            o->final_rel = rel;
            o->rows++;
        }
        if (step == P->steps)
            break;
        d = q0 - q1 - P->L;
        f = P->k * d;
        g0 = P->mg0 + f;
        g1 = P->mg1 - f;
        pk1 = p1 - P->hh * g1;
        qp1 = q1 + P->hm1 * pk1;
        in_a = q1 <= eps_g || qp1 <= 0.0;
        if (in_a) {
            o->in_a++;
            if (P->im1 * p1 < -eps_v) {
                p1 = -p1;
                o->impacts++;
                pk1 = p1 - P->hh * g1;
                qp1 = q1 + P->hm1 * pk1;
            }
            if ((q1 <= eps_g && fabs(P->im1 * p1) <= eps_v) || qp1 < 0.0) {
                double mu = -qp1 / P->hm1;
                double ps = fmax(fabs(p0), fabs(p1));
                o->in_s++;
                held = !(mu < -1e-12 * (ps > 0.0 ? ps : 1.0));
            }
        }
        pk0 = p0 - P->hh * g0;
        q0 = q0 + P->hm0 * pk0;
        q1 = held ? 0.0 : qp1;
        d = q0 - q1 - P->L;
        f = P->k * d;
        g0 = P->mg0 + f;
        g1 = P->mg1 - f;
        p0 = pk0 - P->hh * g0;
        p1 = held ? 0.0 : pk1 - P->hh * g1;
    }
}

static double pogo_flops(const pogo_out *o, long steps)
{
    return FLOPS_STEP * (double)steps + FLOPS_IN_A * (double)o->in_a +
           FLOPS_REFLECT * (double)o->impacts + FLOPS_IN_S * (double)o->in_s +
           FLOPS_ROW * (double)o->rows;
}

/* The scalar model's constants must be those of the scenario (the
 * canonical JSON of the loaded file, defaults filled in). */
static const cJSON *jpath(const cJSON *j, const char *path)
{
    char buf[128], *tok, *save = NULL;
    snprintf(buf, sizeof buf, "%s", path);
    for (tok = strtok_r(buf, "/", &save); tok && j;
         tok = strtok_r(NULL, "/", &save))
        j = cJSON_IsArray(j) ? cJSON_GetArrayItem(j, atoi(tok))
                             : cJSON_GetObjectItemCaseSensitive(j, tok);
    return j;
}

static int check_pogo(const rc_scenario *scn)
{
    static const struct {
        const char *path;
        double num;
        const char *str;
    } want[] = {
        {"dimension", 1, NULL},
        {"particles/0/mass", POGO_M0, NULL},
        {"particles/1/mass", POGO_M1, NULL},
        {"particles/0/radius", 0, NULL},
        {"particles/1/radius", 0, NULL},
        {"particles/0/position/0", POGO_Q0, NULL},
        {"particles/0/momentum/0", 0, NULL},
        {"particles/1/momentum/0", 0, NULL},
        {"potentials/0/type", 0, "gravity"},
        {"potentials/0/acceleration/0", -POGO_G, NULL},
        {"potentials/0/particles", 0, "all"},
        {"potentials/1/type", 0, "spring"},
        {"potentials/1/particles/0", 0, NULL},
        {"potentials/1/particles/1", 1, NULL},
        {"potentials/1/k", POGO_K, NULL},
        {"potentials/1/rest_length", POGO_L, NULL},
        {"constraints/0/type", 0, "wall"},
        {"constraints/0/normal/0", 1, NULL},
        {"constraints/0/offset", 0, NULL},
        {"constraints/0/particles", 1, NULL},
        {"integrator/method", 0, "gvi"},
        {"integrator/base", 0, "verlet"},
        {"integrator/reflection", 0, "generalized"},
        {"integrator/energy", 0, "hamiltonian"},
        {"integrator/eps_g", 0, NULL},
        {"integrator/eps_v", 0, NULL},
        {"ensemble/vary/0/path", 0, "particles[1].position[0]"},
    };
    char *text = rc_scenario_to_json(scn);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    size_t i;
    int bad = root == NULL;
    for (i = 0; root && i < sizeof want / sizeof want[0]; ++i) {
        const cJSON *j = jpath(root, want[i].path);
        int ok = want[i].str ? cJSON_IsString(j) &&
                                   !strcmp(j->valuestring, want[i].str)
                             : cJSON_IsNumber(j) && j->valuedouble == want[i].num;
        if (!ok) {
            fprintf(stderr,
                    "bench: pogo scenario field %s is not what the scalar "
                    "baseline integrates\n",
                    want[i].path);
            bad = 1;
        }
    }
    {
        const cJSON *e = jpath(root, "integrator/seed_exact");
        const cJSON *l = jpath(root, "integrator/linearized");
        if (!cJSON_IsFalse(e) || !cJSON_IsFalse(l) ||
            cJSON_GetArraySize(jpath(root, "potentials")) != 2 ||
            cJSON_GetArraySize(jpath(root, "constraints")) != 1 ||
            cJSON_GetArraySize(jpath(root, "ensemble/vary")) != 1) {
            fprintf(stderr, "bench: pogo scenario has refinements off, "
                            "linearized constraints or extra terms\n");
            bad = 1;
        }
    }
    cJSON_Delete(root);
    free(text);
    return bad ? -1 : 0;
}

/* Largest relative difference between pogo_tolerances() and the
 * library's rc_system_tolerances() over a few members' systems (the
 * scenario with the drop height set by an override). */
static double check_tolerances(const char *path, const pogo_params *P,
                               const double *z, long n)
{
    long pick[3], i;
    double worst = 0.0;
    pick[0] = 0;
    pick[1] = n / 2;
    pick[2] = n - 1;
    for (i = 0; i < 3; ++i) {
        char ov[80];
        const char *ovs[1];
        rc_scenario *scn = NULL;
        rc_system *sys = NULL;
        rc_error err;
        double lg, lv, sg, sv;
        snprintf(ov, sizeof ov, "particles[1].position[0]=%.17g", z[pick[i]]);
        ovs[0] = ov;
        if (rc_scenario_load(path, ovs, 1, &scn, &err) != RC_OK ||
            rc_scenario_build(scn, &sys, &err) != RC_OK)
            die_err("tolerance check", &err);
        if (rc_system_tolerances(sys, &lg, &lv) != RC_OK) {
            fprintf(stderr, "bench: rc_system_tolerances: %s\n",
                    rc_system_message(sys));
            exit(1);
        }
        pogo_tolerances(P, z[pick[i]], &sg, &sv);
        worst = fmax(worst, fabs(sg - lg) / lg);
        worst = fmax(worst, fabs(sv - lv) / lv);
        rc_system_free(sys);
        rc_scenario_free(scn);
    }
    return worst;
}

/* ------------------------------------------------------------------ */
/* Peak: independent FMA chains.                                        */

/* 12 chains: an FMA has a latency of 4 cycles and 2 issue ports on
 * current x86 cores, so at least 8 independent accumulators are needed
 * to keep both busy; 12 (+2 constants) fit in 16 vector registers. */
#define PEAK_CHAINS 12

typedef double v4d __attribute__((vector_size(32)));

#ifdef RC_BENCH_X86
/* 4 lanes x 2 flops per FMA per chain per iteration.  The explicit
 * intrinsic: -std=c11 turns FMA contraction off, so a*b+c would not
 * fuse. */
__attribute__((target("avx2,fma"))) static double peak_avx2(long iters)
{
    v4d acc[PEAK_CHAINS], a = {0.9999999, 0.9999998, 0.9999997, 0.9999996},
                          b = {1e-7, 2e-7, 3e-7, 4e-7}, s = {0, 0, 0, 0};
    long it;
    int c;
    for (c = 0; c < PEAK_CHAINS; ++c) {
        v4d init = {0.1 * c, 0.2 * c, 0.3 * c, 0.4 * c};
        acc[c] = init;
    }
    for (it = 0; it < iters; ++it)
        for (c = 0; c < PEAK_CHAINS; ++c)
            acc[c] = _mm256_fmadd_pd(acc[c], a, b);
    for (c = 0; c < PEAK_CHAINS; ++c)
        s += acc[c];
    return s[0] + s[1] + s[2] + s[3];
}

/* 8 lanes x 2 flops: the width the lane path's avx512f clone uses (two
 * FMA ports on most AVX-512 server cores, one on some; measured, not
 * assumed). */
typedef double v8d __attribute__((vector_size(64)));

__attribute__((target("avx512f"))) static double peak_avx512(long iters)
{
    v8d acc[PEAK_CHAINS], s = {0, 0, 0, 0, 0, 0, 0, 0};
    v8d a = {0.9999999, 0.9999998, 0.9999997, 0.9999996,
             0.9999995, 0.9999994, 0.9999993, 0.9999992};
    v8d b = {1e-7, 2e-7, 3e-7, 4e-7, 5e-7, 6e-7, 7e-7, 8e-7};
    long it;
    int c, l;
    for (c = 0; c < PEAK_CHAINS; ++c)
        for (l = 0; l < 8; ++l)
            acc[c][l] = 0.1 * c + 0.01 * l;
    for (it = 0; it < iters; ++it)
        for (c = 0; c < PEAK_CHAINS; ++c)
            acc[c] = _mm512_fmadd_pd(acc[c], a, b);
    for (c = 0; c < PEAK_CHAINS; ++c)
        s += acc[c];
    return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}
#endif

/* Fallback: separate multiply and add, 2 flops per chain per iteration. */
static double peak_scalar(long iters)
{
    double acc[PEAK_CHAINS], s = 0.0;
    long it;
    int c;
    for (c = 0; c < PEAK_CHAINS; ++c)
        acc[c] = 0.1 * c;
    for (it = 0; it < iters; ++it)
        for (c = 0; c < PEAK_CHAINS; ++c)
            acc[c] = acc[c] * 0.9999999 + 1e-7;
    for (c = 0; c < PEAK_CHAINS; ++c)
        s += acc[c];
    return s;
}

static int have_avx2_fma(void)
{
#ifdef RC_BENCH_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

static int have_avx512f(void)
{
#ifdef RC_BENCH_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}

/* Median flops/s of `threads` threads each running the kernel of `width`
 * doubles (8: AVX-512 FMA, 4: AVX2 FMA, 1: scalar multiply and add). */
static double peak_flops(int threads, int width)
{
    const long iters = 20000000; /* ~0.1-0.3 s per repeat on one core */
    double flops_per_thread = (double)iters * PEAK_CHAINS * 2.0 * width;
    double r[REPEATS], sink = 0.0;
    int rep;
    for (rep = -1; rep < REPEATS; ++rep) { /* rep -1: warm-up */
        double t0 = now(), t;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
        {
#ifdef RC_BENCH_X86
            sink += width == 8   ? peak_avx512(iters)
                    : width == 4 ? peak_avx2(iters)
                                 : peak_scalar(iters);
#else
            sink += peak_scalar(iters);
#endif
        }
        t = now() - t0;
        if (rep >= 0)
            r[rep] = flops_per_thread * threads / t;
    }
    if (!(sink == sink)) /* keeps the result live */
        fprintf(stderr, "bench: peak kernel gave NaN\n");
    return median3(r);
}

/* ------------------------------------------------------------------ */

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

/* A JSON number, or null when x is not finite (a run that was skipped). */
static cJSON *num_or_null(double x)
{
    return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
}

static cJSON *loadavg_json(void)
{
    double la[3];
    if (getloadavg(la, 3) != 3)
        return cJSON_CreateNull();
    return cJSON_CreateDoubleArray(la, 3);
}

/* A target: {"target", "measured", "met"} (met null when not judged). */
static void add_target(cJSON *t, const char *name, double target,
                       double measured, int at_least, int judged,
                       const char *what)
{
    cJSON *o = cJSON_AddObjectToObject(t, name);
    cJSON_AddStringToObject(o, "what", what);
    cJSON_AddNumberToObject(o, "target", target);
    cJSON_AddItemToObject(o, "measured", num_or_null(measured));
    if (judged && isfinite(measured))
        cJSON_AddBoolToObject(o, "met", at_least ? measured >= target
                                                 : measured <= target);
    else
        cJSON_AddNullToObject(o, "met");
}

/* 3b: the cart-pendulum in the batch engine (see the header). */
#define CP_MEMBERS 2000
static const char cp_lanes_text[] =
    "name: cart_pendulum_lanes\n"
    "dimension: 2\n"
    "particles:\n"
    "  - {mass: 1.0, position: [0, 4.2], momentum: [0, 0]}\n"
    "  - {mass: 0.2, position: [0, 2.2], momentum: [0, 0]}\n"
    "potentials:\n"
    "  - {type: gravity, g: 10}\n"
    "constraints:\n"
    "  - {type: line, point: [0, 0], direction: [0, 1], particles: 0}\n"
    "  - {type: rod, particles: [0, 1], length: 2}\n"
    "  - {type: wall, normal: [0, 1], offset: 0, particles: 0}\n"
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 5}\n"
    "output: {every: 1}\n"
    "ensemble:\n"
    "  members: 2000\n" /* CP_MEMBERS */
    "  map: {type: cart_pendulum_xi, length: 2, beta: 4.2}\n"
    "  vary:\n"
    "    - {path: map.beta, linspace: [3.2, 5.2]}\n";

/* 3c: Newton's cradle in the batch engine: cradle_ensemble.yaml's model
 * and its grid over integrator.dt (4 values: each member's own step and
 * row counts, lanes grouped by dt) and the last ball's mass (500 values:
 * per-lane masses), 2 time units instead of 20 so that the scalar body's
 * run takes seconds. */
#define CR_MEMBERS 2000
static const char cr_lanes_text[] =
    "name: cradle_lanes\n"
    "dimension: 2\n"
    "particles:\n"
    "  - {mass: 1, radius: 0.25, position: [-0.5877852522924731, "
    "-0.8090169943749475], momentum: [0, 0]}\n"
    "  - {mass: 1, radius: 0.25, position: [-0.08778525229247314, "
    "-0.8090169943749475], momentum: [0, 0]}\n"
    "  - {mass: 1, radius: 0.25, position: [1.0, -1.0], momentum: [0, 0]}\n"
    "  - {mass: 1, radius: 0.25, position: [1.5, -1.0], momentum: [0, 0]}\n"
    "  - {mass: 1, radius: 0.25, position: [2.0, -1.0], momentum: [0, 0]}\n"
    "potentials:\n"
    "  - {type: gravity, g: 9.8}\n"
    "constraints:\n"
    "  - {type: pendulum, pivot: [0.0, 0.0], length: 1, particles: 0}\n"
    "  - {type: pendulum, pivot: [0.5, 0.0], length: 1, particles: 1}\n"
    "  - {type: pendulum, pivot: [1.0, 0.0], length: 1, particles: 2}\n"
    "  - {type: pendulum, pivot: [1.5, 0.0], length: 1, particles: 3}\n"
    "  - {type: pendulum, pivot: [2.0, 0.0], length: 1, particles: 4}\n"
    "  - {type: non_overlap, particles: all}\n"
    "integrator: {method: gvi, base: midpoint, dt: 0.01, duration: 2}\n"
    "output: {every: 10}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  vary:\n"
    "    - {path: integrator.dt, values: [0.03, 0.02, 0.01, 0.005]}\n"
    "    - {path: \"particles[4].mass\", linspace: [1, 2], count: 500}\n";

/* 3b and 3c: an ensemble the batch engine takes, lanes vs scalar body. */
typedef struct lanes_bench {
    const char *name, *text, *tag;
    long members;
    double l1[REPEATS], s1[REPEATS], l2[REPEATS], ratio[REPEATS];
    double lanes1, scalar1, lanes2, load[3];
    long member_steps;
    cJSON *engine, *engine_scalar;
} lanes_bench;

/* One lanes_bench's rows of the printed table. */
static void lanes_print(const lanes_bench *r)
{
    int rep;
    printf("%-38s %14.4g %14.4g\n", "  lane engine member-steps/s",
           r->lanes1, r->lanes2);
    printf("%-38s %14.4g %14s\n", "  scalar body member-steps/s",
           r->scalar1, "-");
    printf("  lanes/scalar body (1 thread) per repeat, alternated:");
    for (rep = 0; rep < REPEATS; ++rep)
        printf(" %.2f", r->ratio[rep]);
    printf("; load average %.2f %.2f %.2f; members.csv identical\n",
           r->load[0], r->load[1], r->load[2]);
}

/* One lanes_bench's object in the results JSON, under `key`. */
static void lanes_json(cJSON *root, const char *key, const char *scenario,
                       long members, const lanes_bench *r)
{
    cJSON *o = cJSON_AddObjectToObject(root, key);
    cJSON_AddStringToObject(o, "scenario", scenario);
    cJSON_AddNumberToObject(o, "members", (double)members);
    cJSON_AddNumberToObject(o, "member_steps", (double)r->member_steps);
    cJSON_AddItemToObject(o, "engine", cJSON_Duplicate(r->engine, 1));
    cJSON_AddItemToObject(o, "engine_scalar_body",
                          cJSON_Duplicate(r->engine_scalar, 1));
    cJSON_AddNumberToObject(o, "lanes_member_steps_per_second_1_thread",
                            r->lanes1);
    cJSON_AddNumberToObject(o, "scalar_body_member_steps_per_second_1_thread",
                            r->scalar1);
    cJSON_AddNumberToObject(o, "lanes_member_steps_per_second_2_threads",
                            r->lanes2);
    cJSON_AddItemToObject(o, "repeats_lanes_1_thread",
                          cJSON_CreateDoubleArray(r->l1, REPEATS));
    cJSON_AddItemToObject(o, "repeats_scalar_body_1_thread",
                          cJSON_CreateDoubleArray(r->s1, REPEATS));
    cJSON_AddItemToObject(o, "repeats_lanes_2_threads",
                          cJSON_CreateDoubleArray(r->l2, REPEATS));
    cJSON_AddItemToObject(o, "lanes_over_scalar_body_per_repeat",
                          cJSON_CreateDoubleArray(r->ratio, REPEATS));
    cJSON_AddItemToObject(o, "load_average_after",
                          cJSON_CreateDoubleArray(r->load, 3));
    cJSON_AddBoolToObject(o, "members_csv_identical", 1);
}


/* A secondary ensemble (cradle, cart-pendulum): default engine at 1 and 2
 * threads, and the batch engine's scalar body at 1 thread when the
 * default engine is the batch engine (otherwise scalar_batch changes
 * nothing and is not timed). */
typedef struct other_ens {
    const char *name, *file;
    rc_scenario *scn;
    char dir[80];
    double rate[3], scalar_body; /* [1], [2]: threads; NAN: not run */
    long members, member_steps;
    cJSON *engine, *engine_scalar;
} other_ens;

static int other_run(other_ens *o)
{
    members_csv cm;
    long k;
    o->rate[1] = library_rate(o->scn, o->dir, 1, ENG_DEFAULT);
    o->engine = engine_of(o->dir);
    o->rate[2] = library_rate(o->scn, o->dir, 2, ENG_DEFAULT);
    o->members = rc_scenario_ensemble_members(o->scn);
    if (members_read(o->dir, o->members, NULL, &cm) != 0)
        return -1;
    o->member_steps = 0;
    for (k = 0; k < cm.n; ++k)
        o->member_steps += cm.steps[k];
    members_free(&cm);
    o->scalar_body = NAN;
    if (engine_is_batch(o->engine)) {
        char sdir[100];
        snprintf(sdir, sizeof sdir, "%s_scalar", o->dir);
        o->scalar_body = library_rate(o->scn, sdir, 1, ENG_SCALAR_BODY);
        o->engine_scalar = engine_of(sdir);
        if (!members_identical(o->dir, sdir)) {
            fprintf(stderr, "bench: %s: members.csv of the default engine "
                            "and of the scalar body differ; nothing "
                            "written\n", o->file);
            return -1;
        }
    }
    return 0;
}

static void other_json(cJSON *root, const other_ens *o, const char *note)
{
    cJSON *j = cJSON_AddObjectToObject(root, o->name);
    cJSON *d;
    cJSON_AddStringToObject(j, "scenario", o->file);
    cJSON_AddNumberToObject(j, "members", (double)o->members);
    cJSON_AddNumberToObject(j, "member_steps", (double)o->member_steps);
    if (note)
        cJSON_AddStringToObject(j, "note", note);
    d = cJSON_AddObjectToObject(j, "default_engine");
    cJSON_AddItemToObject(d, "engine",
                          cJSON_Duplicate(o->engine, 1));
    cJSON_AddNumberToObject(d, "member_steps_per_second_1_thread",
                            o->rate[1]);
    cJSON_AddNumberToObject(d, "member_steps_per_second_2_threads",
                            o->rate[2]);
    d = cJSON_AddObjectToObject(j, "scalar_body");
    if (o->engine_scalar) {
        cJSON_AddStringToObject(d, "option", "scalar_batch = 1");
        cJSON_AddItemToObject(d, "engine",
                              cJSON_Duplicate(o->engine_scalar, 1));
        cJSON_AddNumberToObject(d, "member_steps_per_second_1_thread",
                                o->scalar_body);
        cJSON_AddNumberToObject(d, "default_over_scalar_body_1_thread",
                                o->rate[1] / o->scalar_body);
        cJSON_AddBoolToObject(d, "members_csv_identical", 1);
    } else {
        cJSON_AddStringToObject(d, "not_run",
                                "the default engine is not the batch "
                                "engine (see default_engine.engine.why), "
                                "so scalar_batch would change nothing");
    }
}

static int lanes_run(const char *tmp, lanes_bench *b)
{
    char path[160], dl[120], ds[120], dl2[120];
    rc_scenario *scn = NULL;
    rc_error err;
    members_csv cm;
    FILE *f;
    long k;
    int rep, ok = 0;
    snprintf(path, sizeof path, "%s/%s.yaml", tmp, b->name);
    snprintf(dl, sizeof dl, "%s/%s_lanes", tmp, b->tag);
    snprintf(ds, sizeof ds, "%s/%s_scalar_body", tmp, b->tag);
    snprintf(dl2, sizeof dl2, "%s/%s_lanes_2", tmp, b->tag);
    if (!(f = fopen(path, "w")) || fputs(b->text, f) < 0 ||
        fclose(f) != 0) {
        perror(path);
        return -1;
    }
    if (rc_scenario_load(path, NULL, 0, &scn, &err) != RC_OK)
        die_err(b->name, &err);
    /* validation and warm-up */
    library_run(scn, dl, 1, ENG_DEFAULT);
    library_run(scn, ds, 1, ENG_SCALAR_BODY);
    library_run(scn, dl2, 2, ENG_DEFAULT);
    b->engine = engine_of(dl);
    b->engine_scalar = engine_of(ds);
    if (strcmp(engine_step(b->engine), "lanes") != 0 ||
        strcmp(engine_step(b->engine_scalar), "scalar") != 0) {
        fprintf(stderr, "bench: %s: engine.step %s and %s, want lanes and "
                        "scalar; nothing written\n",
                b->name, engine_step(b->engine),
                engine_step(b->engine_scalar));
        goto out;
    }
    if (!members_identical(dl, ds) || !members_identical(dl, dl2)) {
        fprintf(stderr, "bench: %s: members.csv of the lanes and the "
                        "scalar body differ; nothing written\n", b->name);
        goto out;
    }
    if (members_read(dl, b->members, NULL, &cm) != 0)
        goto out;
    b->member_steps = 0;
    for (k = 0; k < cm.n; ++k)
        b->member_steps += cm.steps[k];
    members_free(&cm);
    for (rep = 0; rep < REPEATS; ++rep) {
        b->l1[rep] = library_run(scn, dl, 1, ENG_DEFAULT);
        b->s1[rep] = library_run(scn, ds, 1, ENG_SCALAR_BODY);
        b->l2[rep] = library_run(scn, dl2, 2, ENG_DEFAULT);
        b->ratio[rep] = b->l1[rep] / b->s1[rep];
    }
    if (getloadavg(b->load, 3) != 3)
        b->load[0] = b->load[1] = b->load[2] = NAN;
    if (!members_identical(dl, ds) || !members_identical(dl, dl2)) {
        fprintf(stderr, "bench: %s: members.csv differ after the timed "
                        "runs; nothing written\n", b->name);
        goto out;
    }
    {
        double c[REPEATS];
        memcpy(c, b->l1, sizeof c);
        b->lanes1 = median3(c);
        memcpy(c, b->s1, sizeof c);
        b->scalar1 = median3(c);
        memcpy(c, b->l2, sizeof c);
        b->lanes2 = median3(c);
    }
    ok = 1;
out:
    rc_scenario_free(scn);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1]
                               : "bench/results/ensemble_throughput.json";
    const char *env = getenv("RC_BENCH_MEMBERS");
    const char *cli = getenv("RC_BENCH_CLI");
    const char *only = getenv("RC_BENCH_ONLY");
    char tmp[] = "/tmp/rc_bench_ensemble_XXXXXX", dir_lanes[80],
         dir_scalar[80], dir_lanes2[80], dir_pm[80], pogo_path[512],
         cradle_path[512], cart_path[512], ov_members[64], ov_pm[64],
         cpu[256];
    static const int thread_counts[2] = {1, 2};
    const char *ovs[1], *ovs_pm[1];
    int n_ov = 0, width_avx2, width_wide, rep, full_size;
    rc_scenario *pogo = NULL, *pogo_pm = NULL;
    other_ens cradle, cart;
    lanes_bench cpl, crl;
    rc_scenario_run info;
    rc_error err;
    pogo_params P;
    members_csv ref, ref_pm;
    pogo_out *po = NULL;
    long n, n_file, n_pm, k, worst_k = 0, impact_mismatch = 0,
         nonfinite = 0;
    double t_lanes1[REPEATS], t_scalar1[REPEATS], t_cloop[REPEATS],
        t_lanes2[REPEATS], lanes1, lanes2, scalar1, cloop, per_member,
        peak_wide[3], peak_avx2_[3] = {NAN, NAN, NAN}, peak[3],
        worst = 0.0, worst_max = 0.0, flops = 0.0, fpms, tol_diff,
        e2e[3][REPEATS], e2e_med[3], e2e_wall[3][REPEATS], e2e_wall_med[3];
    cJSON *eng_lanes = NULL, *eng_scalar = NULL, *load_start, *load_end;
    struct utsname un;
    cJSON *root, *o, *o2, *v;
    char *text;
    FILE *f;

    load_start = loadavg_json();
    memset(&cradle, 0, sizeof cradle);
    memset(&cart, 0, sizeof cart);
    memset(&cpl, 0, sizeof cpl);
    memset(&crl, 0, sizeof crl);
    cpl.name = "cart_pendulum_lanes";
    cpl.text = cp_lanes_text;
    cpl.tag = "cp";
    cpl.members = CP_MEMBERS;
    crl.name = "cradle_lanes";
    crl.text = cr_lanes_text;
    crl.tag = "cr";
    crl.members = CR_MEMBERS;
    memset(&ref, 0, sizeof ref);
    memset(&ref_pm, 0, sizeof ref_pm);
#ifdef RICOCHET_CLI
    if (!cli || !*cli)
        cli = RICOCHET_CLI;
#endif
    if (!cli || !*cli) {
        fprintf(stderr, "bench: no ricochet CLI (set RC_BENCH_CLI)\n");
        return 1;
    }
    snprintf(pogo_path, sizeof pogo_path, "%s/pogo_ensemble.yaml",
             RICOCHET_EXAMPLES_DIR);
    snprintf(cradle_path, sizeof cradle_path, "%s/cradle_ensemble.yaml",
             RICOCHET_EXAMPLES_DIR);
    snprintf(cart_path, sizeof cart_path, "%s/cart_pendulum_sweep.yaml",
             RICOCHET_EXAMPLES_DIR);
    if (rc_scenario_load(pogo_path, NULL, 0, &pogo, &err) != RC_OK)
        die_err("pogo scenario", &err);
    n_file = rc_scenario_ensemble_members(pogo);
    rc_scenario_free(pogo);
    pogo = NULL;
    if (env && *env) {
        char *end;
        long m = strtol(env, &end, 10);
        if (*end || m < 1) {
            fprintf(stderr, "bench: RC_BENCH_MEMBERS must be a positive "
                            "integer\n");
            return 1;
        }
        snprintf(ov_members, sizeof ov_members, "ensemble.members=%ld", m);
        ovs[n_ov++] = ov_members;
    }
    if (rc_scenario_load(pogo_path, ovs, n_ov, &pogo, &err) != RC_OK)
        die_err("pogo scenario", &err);
    n = rc_scenario_ensemble_members(pogo);
    full_size = n == n_file;
    /* the per-member engine on the first members only (member k is the
     * same whatever the member count: counter-based draws keyed by k):
     * it is ten times slower than the batch engine */
    n_pm = n < PER_MEMBER_MAX ? n : PER_MEMBER_MAX;
    snprintf(ov_pm, sizeof ov_pm, "ensemble.members=%ld", n_pm);
    ovs_pm[0] = ov_pm;
    if (rc_scenario_load(pogo_path, ovs_pm, 1, &pogo_pm, &err) != RC_OK)
        die_err("pogo scenario", &err);
    if (rc_scenario_load(cradle_path, NULL, 0, &cradle.scn, &err) != RC_OK)
        die_err("cradle scenario", &err);
    if (rc_scenario_load(cart_path, NULL, 0, &cart.scn, &err) != RC_OK)
        die_err("cart-pendulum scenario", &err);
    cradle.name = "cradle_ensemble";
    cradle.file = "examples/cradle_ensemble.yaml";
    cart.name = "cart_pendulum_sweep";
    cart.file = "examples/cart_pendulum_sweep.yaml";
    if (check_pogo(pogo) != 0)
        return 1;
    rc_scenario_run_info(pogo, &info);
    P.im0 = 1.0 / POGO_M0;
    P.im1 = 1.0 / POGO_M1;
    P.mg0 = POGO_M0 * POGO_G;
    P.mg1 = POGO_M1 * POGO_G;
    P.k = POGO_K;
    P.hk = 0.5 * POGO_K;
    P.L = POGO_L;
    P.h = info.dt;
    P.hh = 0.5 * info.dt;
    P.hm0 = info.dt * P.im0;
    P.hm1 = info.dt * P.im1;
    P.steps = info.steps;
    P.every = info.every;

    if (!mkdtemp(tmp)) {
        perror("bench: mkdtemp");
        return 1;
    }
    snprintf(g_tmp, sizeof g_tmp, "%s", tmp);
    atexit(rm_tmp);
    snprintf(dir_lanes, sizeof dir_lanes, "%s/pogo_lanes", tmp);
    snprintf(dir_scalar, sizeof dir_scalar, "%s/pogo_scalar_body", tmp);
    snprintf(dir_lanes2, sizeof dir_lanes2, "%s/pogo_lanes_2", tmp);
    snprintf(dir_pm, sizeof dir_pm, "%s/pogo_per_member", tmp);
    snprintf(cradle.dir, sizeof cradle.dir, "%s/cradle", tmp);
    snprintf(cart.dir, sizeof cart.dir, "%s/cart", tmp);
    printf("pogo ensemble: %ld members x %ld steps (dt %g); cradle: %ld "
           "members; cart-pendulum: %ld members; CLI %s; temporary output "
           "in %s\n",
           n, info.steps, info.dt, rc_scenario_ensemble_members(cradle.scn),
           rc_scenario_ensemble_members(cart.scn), cli, tmp);

    if (only && *only) { /* one lanes section, printed, nothing written */
        lanes_bench *r = strcmp(only, crl.name) == 0   ? &crl
                         : strcmp(only, cpl.name) == 0 ? &cpl
                                                       : NULL;
        if (!r) {
            fprintf(stderr, "bench: RC_BENCH_ONLY must be %s or %s\n",
                    crl.name, cpl.name);
            return 2;
        }
        if (lanes_run(tmp, r) != 0)
            goto fail;
        printf("%s (%ld members, %ld member-steps)%24s %14s\n", r->name,
               r->members, r->member_steps, "1 thread", "2 threads");
        lanes_print(r);
        cJSON_Delete(r->engine);
        cJSON_Delete(r->engine_scalar);
        cJSON_Delete(load_start);
        rc_scenario_free(pogo);
        rc_scenario_free(pogo_pm);
        rc_scenario_free(cradle.scn);
        rc_scenario_free(cart.scn);
        return 0;
    }

    /* 1. pogo, validation (these runs are also the warm-up): the lane
     * engine, the scalar body and the lane engine at 2 threads must give
     * the same members.csv bytes; the per-member engine the same values
     * for its members; the scalar C loop the same energy errors and
     * impacts within FINAL_REL_TOL */
    library_run(pogo, dir_lanes, 1, ENG_DEFAULT);
    library_run(pogo, dir_scalar, 1, ENG_SCALAR_BODY);
    library_run(pogo, dir_lanes2, 2, ENG_DEFAULT);
    eng_lanes = engine_of(dir_lanes);
    eng_scalar = engine_of(dir_scalar);
    printf("pogo engine.step: default %s, scalar_batch %s\n",
           engine_step(eng_lanes), engine_step(eng_scalar));
    if (!members_identical(dir_lanes, dir_scalar) ||
        !members_identical(dir_lanes, dir_lanes2)) {
        fprintf(stderr, "bench: pogo members.csv differs between the lane "
                        "engine (1 or 2 threads) and the scalar body; "
                        "nothing written\n");
        goto fail;
    }
    if (members_read(dir_lanes, n, "particles[1].position[0]", &ref) != 0)
        goto fail;
    if (ref.not_ok) {
        fprintf(stderr, "bench: %ld pogo members not ok\n", ref.not_ok);
        goto fail;
    }
    {
        double r[REPEATS];
        library_run(pogo_pm, dir_pm, 1, ENG_PER_MEMBER); /* warm-up */
        for (rep = 0; rep < REPEATS; ++rep)
            r[rep] = library_run(pogo_pm, dir_pm, 1, ENG_PER_MEMBER);
        per_member = median3(r);
    }
    if (members_read(dir_pm, n_pm, "particles[1].position[0]", &ref_pm) != 0)
        goto fail;
    for (k = 0; k < n_pm; ++k)
        if (ref.final_rel[k] != ref_pm.final_rel[k] ||
            ref.max_rel[k] != ref_pm.max_rel[k] ||
            ref.value[k] != ref_pm.value[k] ||
            ref.impacts[k] != ref_pm.impacts[k])
            break;
    members_free(&ref_pm);
    if (k < n_pm) {
        fprintf(stderr, "bench: member %ld differs between the batch and "
                        "the per-member engines; nothing written\n", k);
        goto fail;
    }
    tol_diff = check_tolerances(pogo_path, &P, ref.value, n);
    po = (pogo_out *)malloc(sizeof(pogo_out) * (size_t)n);
    if (!po)
        goto fail;
    for (k = 0; k < n; ++k) {
        double dfin, dmax;
        pogo_member(&P, ref.value[k], &po[k]);
        dfin = fabs(po[k].final_rel - ref.final_rel[k]);
        dmax = fabs(po[k].max_rel - ref.max_rel[k]);
        if (!isfinite(dfin) || !isfinite(dmax))
            nonfinite++; /* NaN never passes */
        if (dfin > worst) {
            worst = dfin;
            worst_k = k;
        }
        worst_max = fmax(worst_max, dmax);
        impact_mismatch += po[k].impacts != ref.impacts[k];
        flops += pogo_flops(&po[k], P.steps);
    }
    fpms = flops / ((double)n * (double)P.steps);
    printf("validation, scalar C loop vs library over %ld members: worst "
           "|final rel. energy error difference| %.3e (member %ld, drop "
           "height %.17g: C loop %.17g, library %.17g); worst max-rel "
           "difference %.3e; impact counts differing: %ld; non-finite: %ld; "
           "eps_g/eps_v vs library: %.1e relative; lanes, scalar body and "
           "2 threads: members.csv identical; per-member engine (%ld "
           "members): same values\n",
           n, worst, worst_k, ref.value[worst_k], po[worst_k].final_rel,
           ref.final_rel[worst_k], worst_max, impact_mismatch, nonfinite,
           tol_diff, n_pm);
    /* eps: 1e-12 relative, far above the few ulps between the two
     * gradient formulas, far below a wrong scale (factor 2 or more) */
    if (!(worst <= FINAL_REL_TOL) || !(worst_max <= FINAL_REL_TOL) ||
        impact_mismatch != 0 || nonfinite != 0 || !(tol_diff <= 1e-12)) {
        fprintf(stderr, "bench: scalar baseline does not reproduce the "
                        "library (tolerance %g); nothing written\n",
                FINAL_REL_TOL);
        goto fail;
    }

    /* 2. pogo, timing: the four alternate within each repeat, so that a
     * burst of load from elsewhere falls on all of them alike */
    for (rep = 0; rep < REPEATS; ++rep) {
        double t0;
        t_lanes1[rep] = library_run(pogo, dir_lanes, 1, ENG_DEFAULT);
        t_scalar1[rep] = library_run(pogo, dir_scalar, 1, ENG_SCALAR_BODY);
        t0 = now();
        for (k = 0; k < n; ++k)
            pogo_member(&P, ref.value[k], &po[k]);
        t_cloop[rep] = (double)n * (double)P.steps / (now() - t0);
        t_lanes2[rep] = library_run(pogo, dir_lanes2, 2, ENG_DEFAULT);
        printf("repeat %d: member-steps/s lanes %.4g, scalar body %.4g, C "
               "loop %.4g, lanes 2 threads %.4g\n",
               rep, t_lanes1[rep], t_scalar1[rep], t_cloop[rep],
               t_lanes2[rep]);
    }
    /* the timed runs too: same bytes */
    if (!members_identical(dir_lanes, dir_scalar) ||
        !members_identical(dir_lanes, dir_lanes2)) {
        fprintf(stderr, "bench: pogo members.csv differs between timed "
                        "runs; nothing written\n");
        goto fail;
    }
    lanes1 = median3(t_lanes1);
    scalar1 = median3(t_scalar1);
    cloop = median3(t_cloop);
    lanes2 = median3(t_lanes2);
    free(po);
    po = NULL;

    /* 3. cradle and cart-pendulum */
    if (other_run(&cradle) != 0 || other_run(&cart) != 0)
        goto fail;
    /* 3b. the cart-pendulum's equality-constrained steps in lanes */
    if (lanes_run(tmp, &cpl) != 0)
        goto fail;
    /* 3c. the cradle (midpoint base, per-member dt and mass) in lanes */
    if (lanes_run(tmp, &crl) != 0)
        goto fail;

    /* 4. end to end: the CLI on each example at 2 threads, alternating;
     * the pogo run must write the library's members.csv */
    {
        static const char *const names[3] = {"pogo_ensemble",
                                              "cradle_ensemble",
                                              "cart_pendulum_sweep"};
        const char *paths[3];
        char dirs[3][96];
        int e;
        paths[0] = pogo_path;
        paths[1] = cradle_path;
        paths[2] = cart_path;
        for (e = 0; e < 3; ++e) {
            snprintf(dirs[e], sizeof dirs[e], "%s/cli_%s", tmp, names[e]);
            /* warm-up: the binary and the file in the page cache */
            if (cli_seconds(cli, paths[e], NULL, NULL) < 0.0)
                goto fail;
        }
        for (rep = 0; rep < REPEATS; ++rep)
            for (e = 0; e < 3; ++e) {
                if ((e2e[e][rep] = cli_seconds(cli, paths[e], dirs[e],
                                               e == 0 && n_ov ? ov_members
                                                              : NULL)) < 0.0)
                    goto fail;
                e2e_wall[e][rep] = ensemble_wall(dirs[e]);
            }
        for (e = 0; e < 3; ++e) {
            double c[REPEATS];
            memcpy(c, e2e[e], sizeof c);
            e2e_med[e] = median3(c);
            memcpy(c, e2e_wall[e], sizeof c);
            e2e_wall_med[e] = median3(c);
        }
        if (!members_identical(dirs[0], dir_lanes)) {
            fprintf(stderr, "bench: the CLI's pogo members.csv differs from "
                            "the library's; nothing written\n");
            goto fail;
        }
    }

    /* 5. peak: the widest FMA the CPU has (the lane path's widest clone),
     * and AVX2 for comparison */
    width_avx2 = have_avx2_fma();
    width_wide = have_avx512f() ? 8 : width_avx2 ? 4 : 1;
    peak_wide[1] = peak_flops(1, width_wide);
    peak_wide[2] = peak_flops(2, width_wide);
    if (width_wide == 8 && width_avx2) {
        peak_avx2_[1] = peak_flops(1, 4);
        peak_avx2_[2] = peak_flops(2, 4);
    } else if (width_wide == 4) {
        peak_avx2_[1] = peak_wide[1];
        peak_avx2_[2] = peak_wide[2];
    }
    /* the peak the fractions use: the largest measured at that count */
    peak[1] = isfinite(peak_avx2_[1]) ? fmax(peak_wide[1], peak_avx2_[1])
                                      : peak_wide[1];
    peak[2] = isfinite(peak_avx2_[2]) ? fmax(peak_wide[2], peak_avx2_[2])
                                      : peak_wide[2];
    load_end = loadavg_json();

    /* 6. report */
    uname(&un);
    cpu_model(cpu, sizeof cpu);
    printf("\npogo (%ld members), median of %d      %14s %14s %12s\n", n,
           REPEATS, "1 thread", "2 threads", "of peak(1t)");
    printf("%-38s %14.4g %14.4g %12.3e\n", "  lane engine member-steps/s",
           lanes1, lanes2, lanes1 * fpms / peak[1]);
    printf("%-38s %14.4g %14s %12.3e\n", "  scalar body member-steps/s",
           scalar1, "-", scalar1 * fpms / peak[1]);
    printf("%-38s %14.4g %14s %12.3e\n", "  scalar C loop member-steps/s",
           cloop, "-", cloop * fpms / peak[1]);
    printf("%-38s %14.4g %14s\n", "  per-member engine member-steps/s",
           per_member, "-");
    printf("  lanes/scalar body %.3f, lanes/C loop %.3f (1 thread); lanes "
           "2 threads: %.3e of the 2-thread peak; %.2f flops per "
           "member-step\n",
           lanes1 / scalar1, lanes1 / cloop, lanes2 * fpms / peak[2], fpms);
    printf("%-38s %14.4g %14.4g  (engine %s)\n",
           "cradle member-steps/s", cradle.rate[1], cradle.rate[2],
           engine_step(cradle.engine));
    printf("%-38s %14.4g %14.4g  (engine %s)\n",
           "cart-pendulum member-steps/s", cart.rate[1], cart.rate[2],
           engine_step(cart.engine));
    printf("cart-pendulum in the batch engine (%d members x 500 GVI steps, "
           "equality constraints), median of %d:\n", CP_MEMBERS, REPEATS);
    lanes_print(&cpl);
    printf("cradle in the batch engine (%d members, dt 0.03/0.02/0.01/0.005 "
           "x 500 masses, T 2, midpoint GVI), median of %d:\n", CR_MEMBERS,
           REPEATS);
    lanes_print(&crl);
    printf("%-38s %14.4g %14.4g\n",
           width_wide == 8   ? "peak flops/s (AVX-512 FMA, 8 doubles)"
           : width_wide == 4 ? "peak flops/s (AVX2 FMA, 4 doubles)"
                             : "peak flops/s (scalar)",
           peak_wide[1], peak_wide[2]);
    if (width_wide == 8 && width_avx2)
        printf("%-38s %14.4g %14.4g\n", "peak flops/s (AVX2 FMA, 4 doubles)",
               peak_avx2_[1], peak_avx2_[2]);
    printf("end to end, ricochet run --threads 2, median of %d: pogo %.3f "
           "s, cradle %.3f s, cart-pendulum %.3f s (of which integration, "
           "ensemble.json wall_seconds: %.3f, %.3f, %.3f s)\n",
           REPEATS, e2e_med[0], e2e_med[1], e2e_med[2], e2e_wall_med[0],
           e2e_wall_med[1], e2e_wall_med[2]);

    root = cJSON_CreateObject();
    o = cJSON_AddObjectToObject(root, "machine");
    cJSON_AddStringToObject(o, "arch", un.machine);
    cJSON_AddStringToObject(o, "system", un.sysname);
    cJSON_AddStringToObject(o, "kernel", un.release);
    cJSON_AddStringToObject(o, "cpu_model", cpu);
    cJSON_AddItemToObject(o, "load_average_at_start", load_start);
    cJSON_AddItemToObject(o, "load_average_at_end", load_end);
    cJSON_AddItemToObject(root, "threads",
                          cJSON_CreateIntArray(thread_counts, 2));
    cJSON_AddNumberToObject(root, "repeats", REPEATS);
    cJSON_AddStringToObject(root, "statistic",
                            "median of 3, after a warm-up run");

    o = cJSON_AddObjectToObject(root, "pogo_ensemble");
    cJSON_AddStringToObject(o, "scenario", "examples/pogo_ensemble.yaml");
    cJSON_AddNumberToObject(o, "members", (double)n);
    cJSON_AddNumberToObject(o, "members_in_file", (double)n_file);
    cJSON_AddNumberToObject(o, "steps_per_member", (double)P.steps);
    cJSON_AddNumberToObject(o, "dt", P.h);
    cJSON_AddNumberToObject(o, "diagnostics_every", (double)P.every);
    cJSON_AddNumberToObject(o, "flops_per_member_step", fpms);
    cJSON_AddStringToObject(o, "timing_order",
                            "each repeat: lanes 1 thread, scalar body 1 "
                            "thread, scalar C loop, lanes 2 threads");
    o2 = cJSON_AddObjectToObject(o, "lanes");
    cJSON_AddStringToObject(o2, "option", "default");
    cJSON_AddStringToObject(o2, "engine_step", engine_step(eng_lanes));
    cJSON_AddItemToObject(o2, "engine", eng_lanes);
    cJSON_AddNumberToObject(o2, "member_steps_per_second_1_thread", lanes1);
    cJSON_AddNumberToObject(o2, "member_steps_per_second_2_threads", lanes2);
    cJSON_AddNumberToObject(o2, "fraction_of_peak_1_thread",
                            lanes1 * fpms / peak[1]);
    cJSON_AddNumberToObject(o2, "fraction_of_peak_2_threads",
                            lanes2 * fpms / peak[2]);
    cJSON_AddItemToObject(o2, "repeats_1_thread",
                          cJSON_CreateDoubleArray(t_lanes1, REPEATS));
    cJSON_AddItemToObject(o2, "repeats_2_threads",
                          cJSON_CreateDoubleArray(t_lanes2, REPEATS));
    o2 = cJSON_AddObjectToObject(o, "scalar_body");
    cJSON_AddStringToObject(o2, "option", "scalar_batch = 1");
    cJSON_AddStringToObject(o2, "engine_step", engine_step(eng_scalar));
    cJSON_AddItemToObject(o2, "engine", eng_scalar);
    cJSON_AddNumberToObject(o2, "member_steps_per_second_1_thread", scalar1);
    cJSON_AddNumberToObject(o2, "fraction_of_peak_1_thread",
                            scalar1 * fpms / peak[1]);
    cJSON_AddItemToObject(o2, "repeats_1_thread",
                          cJSON_CreateDoubleArray(t_scalar1, REPEATS));
    o2 = cJSON_AddObjectToObject(o, "scalar_c_loop");
    cJSON_AddStringToObject(o2, "what",
                            "pogo_member() in bench/ensemble_throughput.c: "
                            "one member at a time, plain C");
    cJSON_AddNumberToObject(o2, "member_steps_per_second_1_thread", cloop);
    cJSON_AddNumberToObject(o2, "fraction_of_peak_1_thread",
                            cloop * fpms / peak[1]);
    cJSON_AddItemToObject(o2, "repeats_1_thread",
                          cJSON_CreateDoubleArray(t_cloop, REPEATS));
    o2 = cJSON_AddObjectToObject(o, "per_member_engine");
    cJSON_AddStringToObject(o2, "option", "per_member = 1");
    cJSON_AddNumberToObject(o2, "members", (double)n_pm);
    cJSON_AddNumberToObject(o2, "member_steps_per_second_1_thread",
                            per_member);
    o2 = cJSON_AddObjectToObject(o, "ratios");
    cJSON_AddNumberToObject(o2, "lanes_over_scalar_body_1_thread",
                            lanes1 / scalar1);
    cJSON_AddNumberToObject(o2, "lanes_over_scalar_c_loop_1_thread",
                            lanes1 / cloop);
    cJSON_AddNumberToObject(o2, "lanes_over_per_member_engine_1_thread",
                            lanes1 / per_member);
    cJSON_AddNumberToObject(o2, "lanes_2_threads_over_1_thread",
                            lanes2 / lanes1);
    v = cJSON_AddObjectToObject(o, "validation");
    cJSON_AddStringToObject(v, "compared",
                            "members.csv of lanes (1 and 2 threads) and "
                            "scalar body byte for byte; per-member engine "
                            "values on its members; scalar C loop vs "
                            "library members.csv, every member");
    cJSON_AddBoolToObject(v, "lanes_scalar_body_2_threads_identical", 1);
    cJSON_AddBoolToObject(v, "cli_members_csv_identical", 1);
    cJSON_AddNumberToObject(v, "tolerance_final_rel_energy_error",
                            FINAL_REL_TOL);
    cJSON_AddNumberToObject(v, "worst_abs_diff_final_rel_energy_error",
                            worst);
    cJSON_AddNumberToObject(v, "worst_member", (double)worst_k);
    cJSON_AddNumberToObject(v, "worst_abs_diff_max_rel_energy_error",
                            worst_max);
    cJSON_AddNumberToObject(v, "members_with_different_impacts",
                            (double)impact_mismatch);
    cJSON_AddNumberToObject(v, "tolerances_max_rel_diff", tol_diff);
    cJSON_AddBoolToObject(v, "passed", 1);

    other_json(root, &cradle, NULL);
    other_json(root, &cart,
               "member_steps counts the members' steps only; the wall "
               "time also holds the shared reference runs at "
               "ensemble.reference.dt, which is why the batch engine does "
               "not take this ensemble and why its rate is low");

    lanes_json(root, "cart_pendulum_lanes",
               "cart_pendulum_sweep.yaml's model, GVI at dt 0.01, T 5, "
               "members Xi(beta) over [3.2, 5.2], no reference (cp_lanes_text "
               "in bench/ensemble_throughput.c)",
               CP_MEMBERS, &cpl);
    lanes_json(root, "cradle_lanes",
               "cradle_ensemble.yaml's model, midpoint GVI, T 2, grid dt "
               "{0.03, 0.02, 0.01, 0.005} x particles[4].mass linspace [1, 2] "
               "count 500 (cr_lanes_text in bench/ensemble_throughput.c)",
               CR_MEMBERS, &crl);

    o = cJSON_AddObjectToObject(root, "end_to_end");
    cJSON_AddStringToObject(o, "command",
                            "ricochet run EXAMPLE --out TMPDIR --quiet "
                            "--threads 2");
    cJSON_AddStringToObject(o, "timed",
                            "seconds: spawn to exit, wall clock; the three "
                            "examples alternate; integration_seconds: the "
                            "run's ensemble.json wall_seconds (without "
                            "process start, parsing and writing "
                            "members.csv)");
    {
        static const char *const keys[3] = {"pogo_ensemble",
                                            "cradle_ensemble",
                                            "cart_pendulum_sweep"};
        int e;
        for (e = 0; e < 3; ++e) {
            o2 = cJSON_AddObjectToObject(o, keys[e]);
            cJSON_AddNumberToObject(o2, "seconds", e2e_med[e]);
            cJSON_AddItemToObject(o2, "repeats_seconds",
                                  cJSON_CreateDoubleArray(e2e[e], REPEATS));
            cJSON_AddItemToObject(o2, "integration_seconds",
                                  num_or_null(e2e_wall_med[e]));
            if (e == 0) {
                cJSON_AddNumberToObject(o2, "members", (double)n);
                if (n_ov)
                    cJSON_AddStringToObject(o2, "set", ov_members);
            }
        }
    }

    o = cJSON_AddObjectToObject(root, "peak");
    cJSON_AddStringToObject(o, "kernel",
                            width_wide == 8
                                ? "12 chains of 8-double AVX-512 FMA"
                            : width_wide == 4
                                ? "12 chains of 4-double AVX2 FMA"
                                : "12 chains of scalar multiply-add");
    cJSON_AddNumberToObject(o, "flops_per_second_1_thread", peak[1]);
    cJSON_AddNumberToObject(o, "flops_per_second_2_threads", peak[2]);
    cJSON_AddItemToObject(o, "widest_flops_per_second_1_thread",
                          num_or_null(peak_wide[1]));
    cJSON_AddItemToObject(o, "widest_flops_per_second_2_threads",
                          num_or_null(peak_wide[2]));
    cJSON_AddItemToObject(o, "avx2_flops_per_second_1_thread",
                          num_or_null(peak_avx2_[1]));
    cJSON_AddItemToObject(o, "avx2_flops_per_second_2_threads",
                          num_or_null(peak_avx2_[2]));
    cJSON_AddStringToObject(o, "used",
                            "flops_per_second_*: the larger of the widest "
                            "and the AVX2 kernel; every fraction_of_peak "
                            "divides by it");
    cJSON_AddStringToObject(o, "flops_counted",
                            "useful flops of the scalar pogo step (add, "
                            "sub, mul, div), averaged over the members' "
                            "contact and diagnostics steps "
                            "(pogo_ensemble.flops_per_member_step); see "
                            "the comment in bench/ensemble_throughput.c");

    o = cJSON_AddObjectToObject(root, "targets");
    cJSON_AddBoolToObject(o, "full_size", full_size);
    add_target(o, "pogo_member_steps_per_second_2_threads", 3e8, lanes2, 1,
               1, "lane engine, pogo_ensemble, 2 threads");
    add_target(o, "pogo_fraction_of_peak_2_threads", 0.10,
               lanes2 * fpms / peak[2], 1, 1,
               "lane engine's useful flops/s over the measured 2-thread "
               "FP64 peak");
    add_target(o, "cradle_member_steps_per_second_2_threads", 1.6e6,
               crl.lanes2, 1, 1,
               "lane engine, the cradle of cradle_lanes (2000 members of "
               "cradle_ensemble.yaml's model and grid), 2 threads");
    add_target(o, "pogo_end_to_end_seconds", 0.73, e2e_med[0], 0, full_size,
               "ricochet run examples/pogo_ensemble.yaml --threads 2; 10x "
               "the 7.3 s the issue measured; judged only at the file's "
               "member count");

    members_free(&ref);
    rc_scenario_free(pogo);
    rc_scenario_free(pogo_pm);
    rc_scenario_free(cradle.scn);
    rc_scenario_free(cart.scn);
    cJSON_Delete(cradle.engine);
    cJSON_Delete(cradle.engine_scalar);
    cJSON_Delete(cart.engine);
    cJSON_Delete(cart.engine_scalar);
    cJSON_Delete(cpl.engine);
    cJSON_Delete(cpl.engine_scalar);
    cJSON_Delete(crl.engine);
    cJSON_Delete(crl.engine_scalar);

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
    printf("wrote %s\n", out);
    return 0;

fail:
    free(po);
    cJSON_Delete(load_start);
    cJSON_Delete(eng_lanes);
    cJSON_Delete(eng_scalar);
    cJSON_Delete(cradle.engine);
    cJSON_Delete(cradle.engine_scalar);
    cJSON_Delete(cart.engine);
    cJSON_Delete(cart.engine_scalar);
    cJSON_Delete(cpl.engine);
    cJSON_Delete(cpl.engine_scalar);
    cJSON_Delete(crl.engine);
    cJSON_Delete(crl.engine_scalar);
    members_free(&ref);
    rc_scenario_free(pogo);
    rc_scenario_free(pogo_pm);
    rc_scenario_free(cradle.scn);
    rc_scenario_free(cart.scn);
    return 1;
}

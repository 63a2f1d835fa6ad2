/* Ensemble throughput on the CPU: member-steps per second of the library's
 * ensemble driver on the pogo-stick and Newton's-cradle ensembles at 1 and
 * 2 threads, against a plain scalar C version of the same pogo-stick GVI
 * step and against the machine's measured double-precision FMA peak.
 *
 *   bench_ensemble_throughput [out.json]
 *       (default bench/results/ensemble_throughput.json)
 *   RC_BENCH_MEMBERS=N   run N pogo members instead of the file's 10^5
 *
 * Order: the library pogo runs (their members.csv is the reference), then
 * the scalar baseline is validated member by member against it (final and
 * maximum relative energy error, number of impacts) and only then timed;
 * the cradle runs; the peak kernel.  Every figure is the median of 3
 * repeats.  Nothing is written when a validation fails (exit 1). */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RC_BENCH_X86 1
#endif

#include <cjson/cJSON.h>

#include "ricochet/ricochet.h"

#define REPEATS 3
#define TARGET_MEMBER_STEPS_PER_SECOND 1e8
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
static double library_rate(const rc_scenario *scn, const char *dir,
                           int threads, int per_member)
{
    double r[REPEATS];
    int rep;
    for (rep = 0; rep < REPEATS; ++rep) {
        rc_ensemble_options eo;
        rc_ensemble_result er;
        rc_error err;
        memset(&eo, 0, sizeof eo); /* zero = default for fields added later */
        eo.out_dir = dir;
        eo.threads = threads;
        eo.per_member = per_member;
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
        r[rep] = er.member_steps_per_second;
    }
    return median3(r);
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

/* Median flops/s of `threads` threads each running the kernel. */
static double peak_flops(int threads, int vec)
{
    const long iters = 20000000; /* ~0.1-0.3 s per repeat on one core */
    double flops_per_thread = (double)iters * PEAK_CHAINS * (vec ? 8.0 : 2.0);
    double r[REPEATS], sink = 0.0;
    int rep;
    for (rep = -1; rep < REPEATS; ++rep) { /* rep -1: warm-up */
        double t0 = now(), t;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
        {
#ifdef RC_BENCH_X86
            sink += vec ? peak_avx2(iters) : peak_scalar(iters);
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

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1]
                               : "bench/results/ensemble_throughput.json";
    const char *env = getenv("RC_BENCH_MEMBERS");
    char tmp[] = "/tmp/rc_bench_ensemble_XXXXXX", pogo_dir[64],
         cradle_dir[64], pogo_path[512], cradle_path[512], ov_members[64],
         cpu[256];
    static const int thread_counts[2] = {1, 2};
    const char *ovs[1];
    int n_ov = 0, vec;
    rc_scenario *pogo = NULL, *cradle = NULL;
    rc_scenario_run info;
    rc_error err;
    pogo_params P;
    members_csv ref, ref2, cm;
    pogo_out *po;
    long n, k, worst_k = 0, impact_mismatch = 0, nonfinite = 0,
         cradle_steps = 0;
    double lib_pogo_per_member, lib_pogo[3], lib_cradle[3], scalar_rate, peak[3], worst = 0.0,
           worst_max = 0.0, flops = 0.0, fpms, tol_diff;
    struct utsname un;
    cJSON *root, *o;
    char *text;
    FILE *f;

    snprintf(pogo_path, sizeof pogo_path, "%s/pogo_ensemble.yaml",
             RICOCHET_EXAMPLES_DIR);
    snprintf(cradle_path, sizeof cradle_path, "%s/cradle_ensemble.yaml",
             RICOCHET_EXAMPLES_DIR);
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
    if (rc_scenario_load(cradle_path, NULL, 0, &cradle, &err) != RC_OK)
        die_err("cradle scenario", &err);
    if (check_pogo(pogo) != 0)
        return 1;
    n = rc_scenario_ensemble_members(pogo);
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
    snprintf(pogo_dir, sizeof pogo_dir, "%s/pogo", tmp);
    snprintf(cradle_dir, sizeof cradle_dir, "%s/cradle", tmp);
    printf("pogo ensemble: %ld members x %ld steps (dt %g), cradle "
           "ensemble: %ld members; temporary output in %s\n",
           n, info.steps, info.dt, rc_scenario_ensemble_members(cradle), tmp);

    /* 1. library ensembles; the 2-thread members.csv must equal the
     * 1-thread one (members are independent: same bits) */
    lib_pogo[1] = library_rate(pogo, pogo_dir, 1, 0);
    if (members_read(pogo_dir, n, "particles[1].position[0]", &ref) != 0)
        goto fail;
    lib_pogo[2] = library_rate(pogo, pogo_dir, 2, 0);
    /* the per-member engine (each member its own rc_system), for the
     * batch engine's speed-up; its members.csv is checked equal in
     * tests/test_ensemble_batch.c */
    lib_pogo_per_member = library_rate(pogo, pogo_dir, 1, 1);
    if (members_read(pogo_dir, n, "particles[1].position[0]", &ref2) != 0)
        goto fail;
    for (k = 0; k < n; ++k)
        if (ref.final_rel[k] != ref2.final_rel[k] ||
            ref.value[k] != ref2.value[k] || ref.impacts[k] != ref2.impacts[k])
            break;
    members_free(&ref2);
    if (k < n) {
        fprintf(stderr, "bench: member %ld differs between the 1- and "
                        "2-thread library runs\n", k);
        goto fail;
    }
    if (ref.not_ok) {
        fprintf(stderr, "bench: %ld pogo members not ok\n", ref.not_ok);
        goto fail;
    }

    /* 2. scalar baseline: validate every member, then time */
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
    printf("validation, scalar vs library over %ld members: worst |final "
           "rel. energy error difference| %.3e (member %ld, drop height "
           "%.17g: scalar %.17g, library %.17g); worst max-rel difference "
           "%.3e; impact counts differing: %ld; non-finite: %ld; "
           "eps_g/eps_v vs library: %.1e relative\n",
           n, worst, worst_k, ref.value[worst_k], po[worst_k].final_rel,
           ref.final_rel[worst_k], worst_max, impact_mismatch, nonfinite,
           tol_diff);
    /* eps: 1e-12 relative, far above the few ulps between the two
     * gradient formulas, far below a wrong scale (factor 2 or more) */
    if (!(worst <= FINAL_REL_TOL) || !(worst_max <= FINAL_REL_TOL) ||
        impact_mismatch != 0 || nonfinite != 0 || !(tol_diff <= 1e-12)) {
        fprintf(stderr, "bench: scalar baseline does not reproduce the "
                        "library (tolerance %g); nothing written\n",
                FINAL_REL_TOL);
        free(po);
        goto fail;
    }
    {
        double r[REPEATS];
        int rep;
        for (rep = 0; rep < REPEATS; ++rep) {
            double t0 = now();
            for (k = 0; k < n; ++k)
                pogo_member(&P, ref.value[k], &po[k]);
            r[rep] = (double)n * (double)P.steps / (now() - t0);
        }
        scalar_rate = median3(r);
    }
    free(po);

    /* cradle: 20 members with different step counts; the rate is the
     * library's (sum of member steps / wall) */
    lib_cradle[1] = library_rate(cradle, cradle_dir, 1, 0);
    lib_cradle[2] = library_rate(cradle, cradle_dir, 2, 0);
    if (members_read(cradle_dir, rc_scenario_ensemble_members(cradle), NULL,
                     &cm) != 0)
        goto fail;
    for (k = 0; k < cm.n; ++k)
        cradle_steps += cm.steps[k];

    /* 3. peak */
    vec = have_avx2_fma();
    peak[1] = peak_flops(1, vec);
    peak[2] = peak_flops(2, vec);

    /* 4-5. report */
    uname(&un);
    cpu_model(cpu, sizeof cpu);
    printf("\n%-44s %14s %14s\n", "", "1 thread", "2 threads");
    printf("%-44s %14.4g %14.4g\n", "library pogo member-steps/s", lib_pogo[1],
           lib_pogo[2]);
    printf("%-44s %14.4g %14s\n", "scalar C pogo member-steps/s", scalar_rate,
           "-");
    printf("%-44s %14.4g %14.4g\n", "library cradle member-steps/s",
           lib_cradle[1], lib_cradle[2]);
    printf("%-44s %14.4g %14.4g\n",
           vec ? "peak flops/s (AVX2 FMA, 4 doubles)" : "peak flops/s (scalar)",
           peak[1], peak[2]);
    printf("%-44s %14.4g %14s\n", "per-member engine pogo member-steps/s",
           lib_pogo_per_member, "-");
    printf("%-44s %14.4g %14.4g\n", "library pogo useful flops/s",
           lib_pogo[1] * fpms, lib_pogo[2] * fpms);
    printf("%-44s %14.3e %14.3e\n", "  fraction of peak",
           lib_pogo[1] * fpms / peak[1], lib_pogo[2] * fpms / peak[2]);
    printf("%-44s %14.4g %14s\n", "scalar pogo flops/s", scalar_rate * fpms,
           "-");
    printf("%-44s %14.3e %14s\n", "  fraction of peak",
           scalar_rate * fpms / peak[1], "-");
    printf("flops per pogo member-step %.2f; library/scalar at 1 thread "
           "%.4f; target %.0e pogo member-steps/s %s\n",
           fpms, lib_pogo[1] / scalar_rate, TARGET_MEMBER_STEPS_PER_SECOND,
           fmax(lib_pogo[1], lib_pogo[2]) >= TARGET_MEMBER_STEPS_PER_SECOND
               ? "met"
               : "not met");

    root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "machine", un.machine);
    cJSON_AddStringToObject(root, "system", un.sysname);
    cJSON_AddStringToObject(root, "kernel", un.release);
    cJSON_AddStringToObject(root, "cpu_model", cpu);
    cJSON_AddItemToObject(root, "threads", cJSON_CreateIntArray(thread_counts, 2));
    cJSON_AddNumberToObject(root, "repeats", REPEATS);
    cJSON_AddStringToObject(root, "statistic", "median of 3");
    o = cJSON_AddObjectToObject(root, "pogo_ensemble");
    cJSON_AddStringToObject(o, "scenario", "examples/pogo_ensemble.yaml");
    cJSON_AddNumberToObject(o, "members", (double)n);
    cJSON_AddNumberToObject(o, "steps_per_member", (double)P.steps);
    cJSON_AddNumberToObject(o, "dt", P.h);
    cJSON_AddNumberToObject(o, "diagnostics_every", (double)P.every);
    cJSON_AddNumberToObject(o, "library_member_steps_per_second_1_thread",
                            lib_pogo[1]);
    cJSON_AddNumberToObject(o, "library_member_steps_per_second_2_threads",
                            lib_pogo[2]);
    cJSON_AddStringToObject(o, "library_engine", "batch (64 members)");
    cJSON_AddNumberToObject(o,
                            "per_member_engine_member_steps_per_second_1_thread",
                            lib_pogo_per_member);
    cJSON_AddNumberToObject(o, "batch_over_per_member_1_thread",
                            lib_pogo[1] / lib_pogo_per_member);
    cJSON_AddNumberToObject(o, "scalar_member_steps_per_second_1_thread",
                            scalar_rate);
    cJSON_AddNumberToObject(o, "ratio_library_to_scalar_1_thread",
                            lib_pogo[1] / scalar_rate);
    cJSON_AddNumberToObject(o, "target_member_steps_per_second",
                            TARGET_MEMBER_STEPS_PER_SECOND);
    /* met if either thread count reaches it */
    cJSON_AddBoolToObject(o, "target_met",
                          fmax(lib_pogo[1], lib_pogo[2]) >=
                              TARGET_MEMBER_STEPS_PER_SECOND);
    {
        cJSON *v = cJSON_AddObjectToObject(o, "validation");
        cJSON_AddStringToObject(v, "compared",
                                "scalar baseline vs library members.csv, "
                                "every member");
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
        cJSON_AddBoolToObject(v, "threads_1_and_2_identical", 1);
        cJSON_AddBoolToObject(v, "passed", 1);
    }
    o = cJSON_AddObjectToObject(root, "cradle_ensemble");
    cJSON_AddStringToObject(o, "scenario", "examples/cradle_ensemble.yaml");
    cJSON_AddNumberToObject(o, "members", (double)cm.n);
    cJSON_AddNumberToObject(o, "member_steps", (double)cradle_steps);
    cJSON_AddNumberToObject(o, "library_member_steps_per_second_1_thread",
                            lib_cradle[1]);
    cJSON_AddNumberToObject(o, "library_member_steps_per_second_2_threads",
                            lib_cradle[2]);
    o = cJSON_AddObjectToObject(root, "peak");
    cJSON_AddStringToObject(o, "kernel",
                            vec ? "12 chains of 4-double AVX2 FMA"
                                : "12 chains of scalar multiply-add");
    cJSON_AddNumberToObject(o, "flops_per_second_1_thread", peak[1]);
    cJSON_AddNumberToObject(o, "flops_per_second_2_threads", peak[2]);
    o = cJSON_AddObjectToObject(root, "arithmetic");
    cJSON_AddStringToObject(o, "counted",
                            "useful flops of the scalar pogo step (add, "
                            "sub, mul, div), averaged over the members' "
                            "contact and diagnostics steps; see the "
                            "comment in bench/ensemble_throughput.c");
    cJSON_AddNumberToObject(o, "flops_per_member_step", fpms);
    cJSON_AddNumberToObject(o, "library_flops_per_second_1_thread",
                            lib_pogo[1] * fpms);
    cJSON_AddNumberToObject(o, "library_flops_per_second_2_threads",
                            lib_pogo[2] * fpms);
    cJSON_AddNumberToObject(o, "library_fraction_of_peak_1_thread",
                            lib_pogo[1] * fpms / peak[1]);
    cJSON_AddNumberToObject(o, "library_fraction_of_peak_2_threads",
                            lib_pogo[2] * fpms / peak[2]);
    cJSON_AddNumberToObject(o, "scalar_flops_per_second_1_thread",
                            scalar_rate * fpms);
    cJSON_AddNumberToObject(o, "scalar_fraction_of_peak_1_thread",
                            scalar_rate * fpms / peak[1]);
    members_free(&ref);
    members_free(&cm);
    rc_scenario_free(pogo);
    rc_scenario_free(cradle);

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
    members_free(&ref);
    rc_scenario_free(pogo);
    rc_scenario_free(cradle);
    return 1;
}

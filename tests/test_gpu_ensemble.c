/* GPU vs CPU: the ensemble batch engine on the GPU against the CPU batch
 * engine, through both of its paths.  Two ensembles: the pogo stick
 * (examples/pogo_ensemble.yaml, 2000 members, random drop heights, 500
 * steps with impacts), which runs in lanes (the CPU's SIMD lanes, the
 * GPU's lane kernels rc_cuda_lanes_run: the fast kernel and the
 * compacted scalar-body kernel), and the cart-pendulum GVI sweep of
 * map.beta (the batch engine's equality case: a line and a rod), which
 * the CPU runs in lanes (rc_k_lanes_eq_step) and the GPU member by member
 * through rc_k_member_run (rc_cuda_member_run: one thread per member), and a built-in Lagrangian model's sweep (seed 001:
 * the cart-pendulum in generalized coordinates over Xi(beta), a mass and
 * the impact methods), whose members run through rc_k_vi_member_thread
 * (rc_cuda_vi_run: one thread per member; the GPU's sin and cos are not
 * glibc's, so that case is never bitwise, strict-FP or not), the same
 * model with ensemble.reference twice (references shared by the members
 * of a beta, run first as members recording q at every step; and each
 * member's own reference in the same launch as the member): l2_error is
 * one of the float columns compared; and the baselines' members (a CVA
 * pogo ensemble, MCVA and direct-midpoint cart-pendulums), which both
 * devices step by the scalar body (rc_k_method_step).  members.csv is
 * compared member by member:
 *   strict-FP build (RICOCHET_STRICT_FP: no FMA contraction on either
 *     side): every line bitwise identical;
 *   otherwise: nvcc fuses multiply-adds, so each step rounds differently.
 *     Status, steps and fail_step must agree exactly; the float columns
 *     within RC_GPU_TOL (below); impacts exactly, except that at most
 *     RC_GPU_EVENT_FRACTION of the members may differ by a reflection
 *     decided within round-off of the contact tolerance (those members
 *     are reported and their float columns not compared); the CVA pogo
 *     sticks and the direct-midpoint cart-pendulums, whose methods
 *     amplify a rounding difference (CMP_SENSITIVE below), by the
 *     ensemble's sums instead;
 *   the Lagrangian model (sin and cos): within RC_GPU_TOL in both builds.
 * Initial states are made on the host for both engines, so the varied
 * values and the statuses of invalid members agree exactly.
 * Skips (77) when the CUDA backend is not compiled in or no device is
 * present.  RICOCHET_TEST_QUICK=1 (set by scripts/compute-sanitizer.sh,
 * whose tools slow kernels 10-100x) runs 500 pogo sticks and 128
 * cart-pendulums instead of 2000 and 512, and the Lagrangian model for
 * 0.3 s instead of 2. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <cjson/cJSON.h>

#include "ricochet/ricochet.h"
#include "ricochet/ensemble.h"
#include "rc_test.h"

#ifndef RICOCHET_HAVE_CUDA
int main(void)
{
    printf("test_gpu_ensemble: skipped (CUDA backend not compiled in)\n");
    return 77;
}
#else

/* Float columns agree to 1e-12 * max(1, |cpu|, |gpu|).  The energy-error
 * columns are relative errors (order 1e-2 .. 1e-8 here), so this is an
 * absolute 1e-12 on them.  Measured on the host with the CPU engine
 * compiled with and without FMA contraction (-mfma -ffp-contract=fast,
 * which perturbs the same operations nvcc fuses): at most 6e-15 on any
 * energy-error column and 1e-14 relative on E0 and the momentum columns,
 * for both ensembles; neither system is chaotic over its duration, so
 * round-off grows slowly.  1e-12 leaves a factor ~200 for the GPU's
 * different fusion pattern, while any real difference (a wrong step,
 * a missed reflection) moves these columns by the size of the errors
 * themselves, 1e-8 and up. */
#define RC_GPU_TOL 1e-12
/* Members whose impact count may differ: none did in the host FMA
 * experiment; a grazing contact within round-off of eps_g could flip
 * one reflection in a rare member, which is round-off, not a bug. */
#define RC_GPU_EVENT_FRACTION 0.01
/* How two members.csv are compared (see the file comment):
 *   CMP_ROUNDOFF   bitwise in strict FP; otherwise member by member
 *                  within RC_GPU_TOL;
 *   CMP_LIBM       the members call sin/cos (the GPU's are not glibc's):
 *                  within RC_GPU_TOL even in strict FP;
 *   CMP_SENSITIVE  bitwise in strict FP; otherwise the ensemble's
 *                  distribution (below), because the method itself
 *                  amplifies a rounding difference: the CPU engine built
 *                  with -march=native -ffp-contract=fast (the multiply-adds
 *                  nvcc fuses) against the same engine without, 2026-11-27:
 *                  CVA pogo sticks, 91 of 500 members with another impact
 *                  count (their stick re-bounces on a contact decided
 *                  within round-off), and direct-midpoint cart-pendulums
 *                  whose energy errors reach 1e5 (the explicit method goes
 *                  unstable) differing by up to 0.97 scaled member by
 *                  member; the GPU's differences on an H100 were the same
 *                  members and the same sizes
 *                  (bench/results/gpu_baselines_h100.txt). */
enum rc_cmp_mode { CMP_ROUNDOFF, CMP_LIBM, CMP_SENSITIVE };
/* CMP_SENSITIVE outside strict FP: status, steps and fail_step exactly,
 * and over the ensemble the sum of |x| of every float column within
 * RC_GPU_SUM_TOL relative and the total impact count within
 * RC_GPU_IMPACT_SUM_TOL.  The host FMA experiment above moved those sums
 * by at most 3.3e-2 (the direct method's angular-momentum error) and the
 * impacts by 1.4e-3; the H200 against the CPU, 4.5e-2 and 1.3e-3
 * (bench/results/gpu_strict_h200.txt); a wrong step or a missed
 * reflection moves them by their own size. */
#define RC_GPU_SUM_TOL 0.2
#define RC_GPU_IMPACT_SUM_TOL 0.01

/* g_dir, slurp, split, write_text and the scratch directory's set-up
 * and clean-up (RC_EXAMPLES_DIR and RC_CLI come from CMake) */
#include "rc_cli_test.h"

static const char cp_text[] =
    "name: cp_gpu\n"
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
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"
    "output: {every: 5, trace_members: [4]}\n"
    "ensemble:\n"
    "  members: 512\n"
    "  map: {type: cart_pendulum_xi, length: 2, beta: 4.2}\n"
    "  vary:\n"
    "    - {path: map.beta, linspace: [3.2, 5.2]}\n";

static const char vi_text[] =
    "name: vi_gpu\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  builtin: cart_pendulum\n"
    "  initial: {xi: 4.2}\n"
    "integrator: {method: cva, dt: 0.01, duration: 2}\n"
    "output: {every: 5}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  vary:\n"
    "    - {path: model.initial.xi, linspace: [3.2, 5.2], count: 32}\n"
    "    - {path: model.parameters.m2, values: [0.2, 0.4]}\n"
    "    - {path: integrator.method, values: [cva, vci, mcva-a, mcva-c]}\n";

/* The model with the seed's L2 error: references shared per beta (the
 * step and the method vary), then each member its own (only beta).
 * Short (0.3 s, references of 60 steps): a GPU thread runs a member's
 * steps one after another, ~0.1 s a step on the H200 (2026-11-26), so
 * the longest member sets the time. */
static const char vi_ref_text[] =
    "name: vi_ref_gpu\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  builtin: cart_pendulum\n"
    "  initial: {xi: 4.2}\n"
    "integrator: {method: cva, dt: 0.01, duration: 0.3}\n"
    "output: {every: 5}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  reference: {dt: 0.005, method: cva}\n"
    "  vary:\n"
    "    - {path: model.initial.xi, linspace: [3.2, 5.2], count: 16}\n"
    "    - {path: integrator.method, values: [cva, vci, mcva-a, mcva-c]}\n"
    "    - {path: integrator.dt, values: [0.02, 0.01]}\n";

static const char vi_own_text[] =
    "name: vi_own_gpu\n"
    "model:\n"
    "  kind: lagrangian\n"
    "  builtin: cart_pendulum\n"
    "  initial: {xi: 4.2}\n"
    "integrator: {method: mcva-c, dt: 0.01, duration: 0.3}\n"
    "output: {every: 5}\n"
    "ensemble:\n"
    "  members: 64\n"
    "  reference: {dt: 0.005}\n"
    "  vary:\n"
    "    - {path: model.initial.xi, linspace: [3.2, 5.2]}\n";

/* Lines of text, split in place: up to max pointers; returns the count. */
static int split_lines(char *text, char **lines, int max)
{
    int n = 0;
    char *s = text;
    while (*s && n < max) {
        char *e = strchr(s, '\n');
        lines[n++] = s;
        if (!e)
            break;
        *e = '\0';
        s = e + 1;
    }
    return n;
}

/* Run scn on `device` into g_dir/name. */
static int run(const rc_scenario *scn, rc_ensemble_device device,
               const char *name, char *dir, size_t size,
               rc_ensemble_result *res)
{
    rc_ensemble_options eo;
    rc_error err;
    char buf[3000];
    rc_status st;
    snprintf(dir, size, "%s/%s", g_dir, name);
    memset(&eo, 0, sizeof eo);
    eo.out_dir = dir;
    eo.device = device;
    memset(res, 0, sizeof *res);
    st = rc_ensemble_run(scn, &eo, res, &err);
    RC_CHECK(st == RC_OK, "%s: rc_ensemble_run: %s", name,
             rc_error_format(&err, buf, sizeof buf));
    return st == RC_OK ? 0 : -1;
}

/* members.csv of the two runs, member by member (see the file comment). */
static void compare_members(const char *what, const char *dcpu,
                            const char *dgpu, long members,
                            enum rc_cmp_mode mode)
{
    enum { MAXL = 4096, MAXF = 32 };
    char pa[700], pb[700], *ta, *tb, **la, **lb, *fa[MAXF], *fb[MAXF],
        *hdr[MAXF];
    int na, nb, nf, k, c;
    int c_status = -1, c_steps = -1, c_fail = -1, c_imp = -1, c_e0 = -1;
    long event_diff = 0, line_diff = 0, first_line_diff = -1;
    double worst[MAXF], sum_a[MAXF], sum_b[MAXF];
    long worst_at[MAXF], imp_a = 0, imp_b = 0;
    snprintf(pa, sizeof pa, "%s/members.csv", dcpu);
    snprintf(pb, sizeof pb, "%s/members.csv", dgpu);
    ta = slurp(pa);
    tb = slurp(pb);
    la = (char **)malloc(sizeof(char *) * MAXL);
    lb = (char **)malloc(sizeof(char *) * MAXL);
    RC_CHECK(ta && tb && la && lb, "%s: cannot read %s or %s", what, pa, pb);
    if (!ta || !tb || !la || !lb)
        goto done;
    na = split_lines(ta, la, MAXL);
    nb = split_lines(tb, lb, MAXL);
    RC_CHECK(na == members + 1 && nb == na,
             "%s: members.csv has %d (cpu) and %d (gpu) lines, want %ld",
             what, na, nb, members + 1);
    if (na != nb || na < 2)
        goto done;
    RC_CHECK(!strcmp(la[0], lb[0]), "%s: headers differ:\n  %s\n  %s", what,
             la[0], lb[0]);
    nf = split(la[0], hdr, MAXF);
    if (nf > MAXF)
        goto done;
    for (c = 0; c < nf; ++c) {
        worst[c] = sum_a[c] = sum_b[c] = 0.0;
        worst_at[c] = -1;
        if (!strcmp(hdr[c], "status"))
            c_status = c;
        else if (!strcmp(hdr[c], "steps"))
            c_steps = c;
        else if (!strcmp(hdr[c], "fail_step"))
            c_fail = c;
        else if (!strcmp(hdr[c], "impacts"))
            c_imp = c;
        else if (!strcmp(hdr[c], "E0"))
            c_e0 = c;
    }
    RC_CHECK(c_status >= 0 && c_steps >= 0 && c_fail >= 0 && c_imp >= 0 &&
                 c_e0 >= 0,
             "%s: members.csv lacks a column: %s", what, la[0]);
    if (c_status < 0 || c_steps < 0 || c_fail < 0 || c_imp < 0 || c_e0 < 0)
        goto done;
    for (k = 1; k < na; ++k) {
        if (strcmp(la[k], lb[k])) {
            ++line_diff;
            if (first_line_diff < 0)
                first_line_diff = k - 1;
        }
#ifdef RICOCHET_STRICT_FP
        if (mode != CMP_LIBM)
            continue;
#endif
        RC_CHECK(split(la[k], fa, MAXF) == nf &&
                     split(lb[k], fb, MAXF) == nf,
                 "%s: member line %d has the wrong number of fields", what,
                 k - 1);
        /* everything before E0 (member, varied values) and the discrete
         * columns exactly */
        for (c = 0; c < c_e0; ++c)
            RC_CHECK(!strcmp(fa[c], fb[c]), "%s: member %d: %s '%s' vs '%s'",
                     what, k - 1, hdr[c], fa[c], fb[c]);
        RC_CHECK(!strcmp(fa[c_status], fb[c_status]) &&
                     !strcmp(fa[c_steps], fb[c_steps]) &&
                     !strcmp(fa[c_fail], fb[c_fail]),
                 "%s: member %d: status/steps/fail_step %s/%s/%s (cpu) vs "
                 "%s/%s/%s (gpu)",
                 what, k - 1, fa[c_status], fa[c_steps], fa[c_fail],
                 fb[c_status], fb[c_steps], fb[c_fail]);
        imp_a += atol(fa[c_imp]);
        imp_b += atol(fb[c_imp]);
        /* a member with another impact count is not compared column by
         * column (its columns count in a sensitive case's sums) */
        if (strcmp(fa[c_imp], fb[c_imp])) {
            if (event_diff++ < 5)
                printf("%s: member %d: impacts %s (cpu) vs %s (gpu)\n", what,
                       k - 1, fa[c_imp], fb[c_imp]);
            if (mode != CMP_SENSITIVE)
                continue;
        }
        for (c = c_e0; c < nf; ++c) {
            double x, y, d;
            char *ex, *ey;
            if (c == c_status || c == c_steps || c == c_fail || c == c_imp)
                continue;
            x = strtod(fa[c], &ex);
            y = strtod(fb[c], &ey);
            if (*ex || *ey) { /* not a number: must be the same text */
                RC_CHECK(!strcmp(fa[c], fb[c]),
                         "%s: member %d: %s '%s' vs '%s'", what, k - 1,
                         hdr[c], fa[c], fb[c]);
                continue;
            }
            if (isnan(x) && isnan(y)) /* l2_error of a member without one */
                continue;
            sum_a[c] += fabs(x);
            sum_b[c] += fabs(y);
            d = fabs(x - y) / fmax(1.0, fmax(fabs(x), fabs(y)));
            if (!isfinite(d))
                d = INFINITY;
            if (worst_at[c] < 0 || d > worst[c]) {
                worst[c] = d;
                worst_at[c] = k - 1;
            }
        }
    }
#ifdef RICOCHET_STRICT_FP
    if (mode != CMP_LIBM) {
        RC_CHECK(line_diff == 0,
                 "%s (strict FP): %ld member lines differ, the first member "
                 "%ld",
                 what, line_diff, first_line_diff);
        printf("%s: %ld members, bitwise identical (strict FP)\n", what,
               members);
        goto done;
    }
#endif
    if (mode == CMP_SENSITIVE) {
        double di = fabs((double)(imp_a - imp_b)) /
                    fmax(1.0, (double)(imp_a > imp_b ? imp_a : imp_b));
        RC_CHECK(di <= RC_GPU_IMPACT_SUM_TOL,
                 "%s: %ld impacts (cpu) vs %ld (gpu): %.3e relative, "
                 "tolerance %.0e",
                 what, imp_a, imp_b, di, RC_GPU_IMPACT_SUM_TOL);
        for (c = c_e0; c < nf; ++c) {
            double ds;
            if (worst_at[c] < 0)
                continue;
            ds = fabs(sum_a[c] - sum_b[c]) /
                 fmax(1e-300, fmax(sum_a[c], sum_b[c]));
            RC_CHECK(ds <= RC_GPU_SUM_TOL,
                     "%s: the sum of |%s| over the members differs by %.3e "
                     "(relative), tolerance %.1g",
                     what, hdr[c], ds, RC_GPU_SUM_TOL);
            printf("%s: %-24s sum over members %.6e (cpu) %.6e (gpu); "
                   "largest member difference %.3e (member %ld)\n",
                   what, hdr[c], sum_a[c], sum_b[c], worst[c], worst_at[c]);
        }
        printf("%s: %ld members, %ld lines not bitwise identical (FMA), %ld "
               "with another impact count; %ld impacts (cpu), %ld (gpu)\n",
               what, members, line_diff, event_diff, imp_a, imp_b);
        goto done;
    }
    RC_CHECK((double)event_diff <= RC_GPU_EVENT_FRACTION * (double)members,
             "%s: %ld members differ in their impact count (at most %.0f)",
             what, event_diff, RC_GPU_EVENT_FRACTION * (double)members);
    for (c = c_e0; c < nf; ++c) {
        if (worst_at[c] < 0)
            continue;
        RC_CHECK(worst[c] <= RC_GPU_TOL,
                 "%s: %s differs by %.3e (scaled) at member %ld, tolerance "
                 "%.0e",
                 what, hdr[c], worst[c], worst_at[c], RC_GPU_TOL);
        printf("%s: %-24s max scaled diff %.3e (member %ld)\n", what, hdr[c],
               worst[c], worst_at[c]);
    }
    printf("%s: %ld members, %ld lines not bitwise identical (FMA), %ld "
           "with another impact count\n",
           what, members, line_diff, event_diff);
done:
    free(ta);
    free(tb);
    free(la);
    free(lb);
}

/* engine.<key> of dir/ensemble.json starts with `prefix`. */
static void check_engine(const char *what, const char *dir, const char *key,
                         const char *prefix)
{
    char path[700], *text;
    cJSON *root;
    const cJSON *eng, *dev;
    snprintf(path, sizeof path, "%s/ensemble.json", dir);
    text = slurp(path);
    root = text ? cJSON_Parse(text) : NULL;
    eng = cJSON_GetObjectItemCaseSensitive(root, "engine");
    dev = cJSON_GetObjectItemCaseSensitive(eng, key);
    RC_CHECK(cJSON_IsString(dev) &&
                 !strncmp(dev->valuestring, prefix, strlen(prefix)),
             "%s: engine.%s '%s', want '%s...'", what, key,
             cJSON_IsString(dev) ? dev->valuestring : "?", prefix);
    cJSON_Delete(root);
    free(text);
}

/* engine.gpu.launches of the GPU run `what` (the chunks it took). */
static void check_launches(const char *what, long want)
{
    char path[700], *text;
    cJSON *root;
    const cJSON *g;
    snprintf(path, sizeof path, "%s/%s_gpu/ensemble.json", g_dir, what);
    text = slurp(path);
    root = text ? cJSON_Parse(text) : NULL;
    g = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "engine"), "gpu"),
        "launches");
    RC_CHECK(cJSON_IsNumber(g) && (long)g->valuedouble == want,
             "%s: engine.gpu.launches %g, want %ld", what,
             cJSON_IsNumber(g) ? g->valuedouble : -1.0, want);
    cJSON_Delete(root);
    free(text);
}

/* cpu_step, gpu_step: the path each engine must report (engine.step):
 * "lanes" for a model that runs in lanes (the CPU's SIMD lanes, the
 * GPU's lane kernels), "scalar" for one that does not (the GPU's lane
 * kernels have no equality constraints; the CPU's lanes do). */
/* The ensemble on the CPU and asked of the GPU, into dcpu and dgpu (size
 * bytes each; output directories WHAT_cpu and WHAT_gpu).  Returns 0 when
 * both ran (run() counts a failure as a failed check). */
static int run_both(const char *what, const rc_scenario *scn, char *dcpu,
                    char *dgpu, size_t size, rc_ensemble_result *rc_cpu,
                    rc_ensemble_result *rc_gpu)
{
    char name[64];
    snprintf(name, sizeof name, "%s_cpu", what);
    if (run(scn, RC_ENSEMBLE_CPU, name, dcpu, size, rc_cpu))
        return 1;
    snprintf(name, sizeof name, "%s_gpu", what);
    return run(scn, RC_ENSEMBLE_CUDA, name, dgpu, size, rc_gpu);
}

/* Both devices run scn; their members.csv compared as `mode` says. */
static void compare(const char *what, const rc_scenario *scn,
                    const char *cpu_step, const char *gpu_step,
                    enum rc_cmp_mode mode)
{
    char dcpu[600], dgpu[600];
    rc_ensemble_result rc_cpu, rc_gpu;
    long n = rc_scenario_ensemble_members(scn);
    if (run_both(what, scn, dcpu, dgpu, sizeof dcpu, &rc_cpu, &rc_gpu))
        return;
    RC_CHECK(rc_cpu.batched && rc_gpu.batched && rc_gpu.cuda && !rc_cpu.cuda,
             "%s: batched %d/%d, cuda %d/%d (cpu/gpu)", what, rc_cpu.batched,
             rc_gpu.batched, rc_cpu.cuda, rc_gpu.cuda);
    RC_CHECK(rc_cpu.ok == rc_gpu.ok && rc_cpu.failed == rc_gpu.failed &&
                 rc_cpu.invalid == rc_gpu.invalid,
             "%s: ok/failed/invalid %ld/%ld/%ld (cpu) vs %ld/%ld/%ld (gpu)",
             what, rc_cpu.ok, rc_cpu.failed, rc_cpu.invalid, rc_gpu.ok,
             rc_gpu.failed, rc_gpu.invalid);
    check_engine(what, dcpu, "device", "cpu");
    check_engine(what, dgpu, "device", "cuda: ");
    check_engine(what, dcpu, "step", cpu_step);
    check_engine(what, dgpu, "step", gpu_step);
    compare_members(what, dcpu, dgpu, n, mode);
    printf("%s: cpu %.3g, gpu %.3g member-steps/s (%ld members)\n", what,
           rc_cpu.member_steps_per_second, rc_gpu.member_steps_per_second,
           n);
}

/* compare() of the scenario file at path, with nsets overrides. */
static void compare_file(const char *what, const char *path,
                         const char *const *sets, int nsets,
                         const char *cpu_step, const char *gpu_step,
                         enum rc_cmp_mode mode)
{
    char buf[3000];
    rc_scenario *scn = NULL;
    rc_error err;
    if (rc_scenario_load(path, sets, nsets, &scn, &err) != RC_OK)
        RC_CHECK(0, "%s: %s", what, rc_error_format(&err, buf, sizeof buf));
    else
        compare(what, scn, cpu_step, gpu_step, mode);
    rc_scenario_free(scn);
}

/* compare_file() of the scenario given by its text. */
static void compare_text(const char *what, const char *text,
                         const char *const *sets, int nsets,
                         const char *cpu_step, const char *gpu_step,
                         enum rc_cmp_mode mode)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s.yaml", g_dir, what);
    write_text(path, text);
    compare_file(what, path, sets, nsets, cpu_step, gpu_step, mode);
}

int main(void)
{
    int quick = rc_test_quick();
    const char *const pogo_sets[] = {quick ? "ensemble.members=500"
                                     : "ensemble.members=2000"};
    const char *const cp_sets[] = {"ensemble.members=128"};
    const char *const vi_sets[] = {"integrator.duration=0.3"};
    char buf[3000];
    int gate;
    rc_scenario *scn = NULL;
    rc_error err;
    if ((gate = rc_test_gpu_gate("test_gpu_ensemble")) != 0)
        return gate;
    if (cli_test_start("test_gpu_ensemble"))
        return 1;
    if (rc_scenario_load(RC_EXAMPLES_DIR "/pogo_ensemble.yaml", pogo_sets, 1,
                         &scn, &err) != RC_OK) {
        RC_CHECK(0, "pogo: %s", rc_error_format(&err, buf, sizeof buf));
    } else {
        compare("pogo", scn, "lanes", "lanes", CMP_ROUNDOFF);
        /* the same members in three chunks (two full, one short): a
         * chunk's lanes are carved with its own stride */
        setenv("RICOCHET_GPU_MAX_CHUNK", quick ? "200" : "700", 1);
        compare("pogo_chunked", scn, "lanes", "lanes", CMP_ROUNDOFF);
        check_launches("pogo_chunked", 3);
        unsetenv("RICOCHET_GPU_MAX_CHUNK");
    }
    rc_scenario_free(scn);
    compare_text("cart_pendulum", cp_text, cp_sets, quick, "lanes", "scalar",
                 CMP_ROUNDOFF);
    /* the baselines' members (issue 13) in the GPU member kernel: the
     * scalar body of their method (rc_k_method_step) on both devices */
    {
        const char *const pogo_cva[] = {quick ? "ensemble.members=300"
                                              : "ensemble.members=500",
                                        "integrator.method=cva"};
        const char *const cp_mcva[] = {"ensemble.members=128",
                                       "integrator.method=mcva"};
        const char *const cp_direct[] = {"ensemble.members=128",
                                         "integrator.method=direct-midpoint"};
        compare_file("pogo_cva", RC_EXAMPLES_DIR "/pogo_ensemble.yaml",
                     pogo_cva, 2, "scalar", "scalar", CMP_SENSITIVE);
        compare_text("cart_pendulum_mcva", cp_text, cp_mcva, 2, "scalar",
                     "scalar", CMP_ROUNDOFF);
        compare_text("cart_pendulum_direct", cp_text, cp_direct, 2, "scalar",
                     "scalar", CMP_SENSITIVE);
    }
    /* GVI members with ensemble.reference (issue 13): the member kernel
     * records q at their rows, their own references run as a second
     * launch recording on their grid, and each L2 error comes from the
     * two records (rc_batch_cuda_refs); l2_error is one of the float
     * columns compared.  The pogo stick without equalities, the
     * cart-pendulum with them. */
    {
        const char *const pogo_ref[] = {"ensemble.members=256",
                                        "integrator.duration=5",
                                        "ensemble.reference={dt: 0.05}"};
        const char *const cp_ref[] = {"ensemble.members=128",
                                      "ensemble.reference={dt: 0.0025}"};
        compare_file("pogo_ref", RC_EXAMPLES_DIR "/pogo_ensemble.yaml",
                     pogo_ref, 3, "scalar", "scalar", CMP_ROUNDOFF);
        compare_text("cart_pendulum_ref", cp_text, cp_ref, 2, "scalar",
                     "scalar", CMP_ROUNDOFF);
    }
    compare_text("lagrangian_model", vi_text, vi_sets, quick, "vi-member",
                 "vi-member", CMP_LIBM);
    compare_text("lagrangian_model_ref", vi_ref_text, NULL, 0, "vi-member",
                 "vi-member", CMP_LIBM);
    compare_text("lagrangian_model_own_ref", vi_own_text, NULL, 0,
                 "vi-member", "vi-member", CMP_LIBM);
    return cli_test_finish("test_gpu_ensemble");
}
#endif /* RICOCHET_HAVE_CUDA */

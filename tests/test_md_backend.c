/* --backend and --threads for a large system (a scenario with a box),
 * through the CLI, in every build and on any machine:
 *   (none)     the engine on its CPU launcher (summary.json
 *              engine.launcher "cpu"); no backend_note;
 *   --threads  1 and 2 threads write byte-identical observables, rdf and
 *              msd, for a periodic gas, a Lennard-Jones fluid, and a
 *              walled granular column whose islands of held contacts go
 *              to the host tiers (engine.host_tier_islands > 0);
 *   reference  one thread: the same bytes again;
 *   cuda       without a usable device: exit 2, a message saying why, and
 *              nothing written; with one: the engine ran on the GPU
 *              (engine.launcher "cuda") and kept the energy;
 *   auto       the GPU when there is one, else the cpu with a note, and
 *              then the same observables as the default run;
 *   gravity (the granular column): auto keeps it on the cpu, saying why;
 *   g(r) beside the engine (what the GPU backend does; forced on the CPU
 *              launcher by RICOCHET_RDF_BESIDE=1): the same bytes as in
 *              line, with a sample every 2 steps, frames, and checkpoints
 *              between samples. */
#define _POSIX_C_SOURCE 200809L
#include "rc_cli_test.h"
#include "ricochet/run.h"

#define FLUID RC_EXAMPLES_DIR "/hard_sphere_fluid.yaml"
#define FLUID_SMALL                                                          \
    "--set lattice.n=500 --set integrator.duration=0.4 "                     \
    "--set output.equilibrate=0.1"
#define COLUMN RC_EXAMPLES_DIR "/granular_column.yaml"
#define LJ RC_EXAMPLES_DIR "/lj_hard_core.yaml"
#define LJ_SMALL                                                             \
    "--set lattice.n=500 --set integrator.duration=0.1 "                     \
    "--set output.equilibrate=0 --set output.every=5"

/* dir/summary.json parsed (NULL if unreadable); delete it after use. */
static cJSON *summary_of(const char *dir)
{
    return json_file(dir, "summary.json");
}

/* The files of a large-system run that must not depend on the launcher's
 * threads, on the CPU backend's name, or on where g(r) is taken. */
static void same_outputs(const char *what, const char *a, const char *b,
                         int with_rdf)
{
    static const char *const files[] = {"observables.csv", "msd.csv",
                                        "rdf.csv"};
    int k;
    for (k = 0; k < (with_rdf ? 3 : 2); ++k) {
        char pa[1100], pb[1100];
        snprintf(pa, sizeof pa, "%s/%s", a, files[k]);
        snprintf(pb, sizeof pb, "%s/%s", b, files[k]);
        RC_CHECK(exists(a, files[k]) && same_file(pa, pb),
                 "%s: %s differs between the two runs", what, files[k]);
    }
}

/* Run `scenario` with `opts` on 1 and 2 threads into dir/one and dir/two
 * and compare their outputs; returns the 2-thread run's summary. */
static cJSON *threads_agree(const char *what, const char *scenario,
                            const char *opts, const char *dir, int with_rdf)
{
    char one[700], two[700];
    int rc;
    snprintf(one, sizeof one, "%s/one", dir);
    snprintf(two, sizeof two, "%s/two", dir);
    rc = cli("run '%s' %s --threads 1 --out '%s' --quiet", scenario, opts,
             one);
    RC_CHECK(rc == 0, "%s, 1 thread: exit %d: %s", what, rc, g_stderr);
    rc = cli("run '%s' %s --threads 2 --out '%s' --quiet", scenario, opts,
             two);
    RC_CHECK(rc == 0, "%s, 2 threads: exit %d: %s", what, rc, g_stderr);
    same_outputs(what, one, two, with_rdf);
    return summary_of(two);
}

int main(void)
{
    char dhost[600], dref[600], dauto[600], dcuda[600], dgas[600],
        dcol[600], dcolauto[600], dlj[600], dljcuda[600];
    char why[300] = "";
    int rc, devices = 0;
    cJSON *root;
    const cJSON *o;
    if (cli_test_start("test_md_backend"))
        return 1;
    rc_cuda_devices(NULL, 0, &devices, why, sizeof why);
    printf("test_md_backend: %d CUDA device(s)%s%s\n", devices,
           devices ? "" : ": ", devices ? "" : why);
    snprintf(dhost, sizeof dhost, "%s/host", g_dir);
    snprintf(dref, sizeof dref, "%s/ref", g_dir);
    snprintf(dauto, sizeof dauto, "%s/auto", g_dir);
    snprintf(dcuda, sizeof dcuda, "%s/cuda", g_dir);
    snprintf(dgas, sizeof dgas, "%s/gas", g_dir);
    snprintf(dcol, sizeof dcol, "%s/col", g_dir);
    snprintf(dcolauto, sizeof dcolauto, "%s/colauto", g_dir);
    snprintf(dlj, sizeof dlj, "%s/lj", g_dir);
    snprintf(dljcuda, sizeof dljcuda, "%s/ljcuda", g_dir);

    /* no --backend: the CPU launcher */
    rc = cli("run '%s' " FLUID_SMALL " --out '%s' --quiet", FLUID, dhost);
    RC_CHECK(rc == 0, "default backend: exit %d: %s", rc, g_stderr);
    root = summary_of(dhost);
    o = root ? cJSON_GetObjectItemCaseSensitive(root, "engine") : NULL;
    RC_CHECK(root && !strcmp(str(root, "backend"), "cpu") &&
                 !cJSON_GetObjectItemCaseSensitive(root, "backend_note") &&
                 o && !strcmp(str(o, "launcher"), "cpu"),
             "default backend: backend '%s', no engine.launcher cpu",
             root ? str(root, "backend") : "?");
    cJSON_Delete(root);

    /* threads: the same bytes */
    root = threads_agree("periodic gas", FLUID, FLUID_SMALL, dgas, 1);
    cJSON_Delete(root);
    rc = cli("run '%s' " FLUID_SMALL " --backend reference --out '%s' "
             "--quiet",
             FLUID, dref);
    RC_CHECK(rc == 0, "reference backend: exit %d: %s", rc, g_stderr);
    {
        char two[700];
        snprintf(two, sizeof two, "%s/two", dgas);
        same_outputs("reference backend", two, dref, 1);
    }
    /* walls, gravity and a settling pile: islands of held contacts in the
     * host tiers */
    root = threads_agree("granular column", COLUMN,
                         "--set integrator.duration=0.6", dcol, 0);
    o = root ? cJSON_GetObjectItemCaseSensitive(root, "engine") : NULL;
    RC_CHECK(o && num(o, "host_tier_islands") > 0,
             "granular column: no island went to the host tiers; the path "
             "is not exercised");
    cJSON_Delete(root);
    rc = cli("run '%s' --set integrator.duration=0.02 --out '%s' --quiet "
             "--backend auto",
             COLUMN, dcolauto);
    RC_CHECK(rc == 0, "granular column, auto: exit %d: %s", rc, g_stderr);
    root = summary_of(dcolauto);
    RC_CHECK(root && !strcmp(str(root, "backend"), "cpu") &&
                 strstr(str(root, "backend_note"), "resting contacts"),
             "granular column, auto: backend '%s', note '%s'",
             root ? str(root, "backend") : "?",
             root ? str(root, "backend_note") : "?");
    cJSON_Delete(root);
    /* g(r) beside the engine: samples in flight across frames and
     * checkpoints (each waits for the sample first) */
    {
        char inl[700], bes[700];
        char pa[1100], pb[1100];
        const char *opts = FLUID_SMALL " --set output.rdf_every=2 "
                           "--set output.trajectory=xyz "
                           "--set output.trajectory_every=3 "
                           "--set output.checkpoint_every=0.05";
        cJSON *ri, *rb;
        snprintf(inl, sizeof inl, "%s/rdf_inline", g_dir);
        snprintf(bes, sizeof bes, "%s/rdf_beside", g_dir);
        rc = cli("run '%s' %s --threads 2 --out '%s' --quiet", FLUID, opts,
                 inl);
        RC_CHECK(rc == 0, "g(r) in line: exit %d: %s", rc, g_stderr);
        setenv("RICOCHET_RDF_BESIDE", "1", 1);
        rc = cli("run '%s' %s --threads 2 --out '%s' --quiet", FLUID, opts,
                 bes);
        unsetenv("RICOCHET_RDF_BESIDE");
        RC_CHECK(rc == 0, "g(r) beside the engine: exit %d: %s", rc,
                 g_stderr);
        same_outputs("g(r) beside the engine", inl, bes, 1);
        /* and the frames (checkpoint.rcp holds wall seconds, so it is
         * not compared) */
        snprintf(pa, sizeof pa, "%s/trajectory.xyz", inl);
        snprintf(pb, sizeof pb, "%s/trajectory.xyz", bes);
        RC_CHECK(exists(inl, "trajectory.xyz") && same_file(pa, pb),
                 "g(r) beside the engine: trajectory.xyz differs from the "
                 "run with g(r) in line");
        ri = summary_of(inl);
        rb = summary_of(bes);
        RC_CHECK(ri && rb && num(rb, "rdf_samples") >= 10 &&
                     num(ri, "rdf_samples") == num(rb, "rdf_samples") &&
                     cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(
                         ri, "rdf_beside_engine")) &&
                     cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
                         rb, "rdf_beside_engine")),
                 "g(r) beside the engine: samples %g / %g, or "
                 "rdf_beside_engine not false / true",
                 ri ? num(ri, "rdf_samples") : NAN,
                 rb ? num(rb, "rdf_samples") : NAN);
        cJSON_Delete(ri);
        cJSON_Delete(rb);
    }
    /* a pair potential */
    root = threads_agree("Lennard-Jones", LJ, LJ_SMALL, dlj, 1);
    cJSON_Delete(root);
    /* cuda */
    rc = cli("run '%s' " FLUID_SMALL " --out '%s' --quiet --backend cuda",
             FLUID, dcuda);
    if (devices == 0) {
        check_cuda_refused(rc, dcuda, "--backend cuda");
    } else {
        RC_CHECK(rc == 0, "--backend cuda: exit %d: %s", rc, g_stderr);
        root = summary_of(dcuda);
        o = root ? cJSON_GetObjectItemCaseSensitive(root, "engine") : NULL;
        RC_CHECK(root && !strcmp(str(root, "backend"), "cuda") && o &&
                     !strcmp(str(o, "launcher"), "cuda"),
                 "--backend cuda: backend '%s'",
                 root ? str(root, "backend") : "?");
        /* elastic collisions keep the kinetic energy to round-off; 1e-10
         * leaves room for 10^4 collisions' rounding, and a lost or
         * doubled impulse would be visible at 1e-3 */
        RC_CHECK(root && num(root, "max_rel_energy_error") < 1e-10,
                 "--backend cuda: energy error %g",
                 root ? num(root, "max_rel_energy_error") : NAN);
        cJSON_Delete(root);
    }

    /* auto */
    rc = cli("run '%s' " FLUID_SMALL " --out '%s' --quiet --backend auto",
             FLUID, dauto);
    RC_CHECK(rc == 0, "--backend auto: exit %d: %s", rc, g_stderr);
    root = summary_of(dauto);
    if (devices == 0) {
        RC_CHECK(root && !strcmp(str(root, "backend"), "cpu") &&
                     strstr(str(root, "backend_note"), "auto chose the cpu: "),
                 "--backend auto without a device: backend '%s', note '%s'",
                 root ? str(root, "backend") : "?",
                 root ? str(root, "backend_note") : "?");
        same_outputs("--backend auto on the cpu", dhost, dauto, 1);
    } else {
        RC_CHECK(root && !strcmp(str(root, "backend"), "cuda"),
                 "--backend auto with a device: backend '%s'",
                 root ? str(root, "backend") : "?");
    }
    cJSON_Delete(root);

    rc = cli("run '%s' --set lattice.n=256 --set integrator.duration=0.02 "
             "--set output.equilibrate=0 --out '%s' --quiet --backend cuda",
             LJ, dljcuda);
    if (devices == 0)
        check_cuda_refused(rc, dljcuda, "--backend cuda with a pair potential");
    else
        RC_CHECK(rc == 0, "--backend cuda with a pair potential: exit %d: %s",
                 rc, g_stderr);
    return cli_test_finish("test_md_backend");
}

/* --backend for a large system (a scenario with a box), through the CLI,
 * in every build and on any machine:
 *   (none)     the host engine on the cpu; no backend_note;
 *   cuda       without a usable device: exit 2, a message saying why, and
 *              nothing written; with one: the device engine ran on the
 *              GPU (summary.json device_engine.launcher "cuda") and kept
 *              the energy;
 *   auto       the GPU when there is one, else the cpu with a note, and
 *              then the same observables as the default run;
 *   gravity (the granular column): auto keeps it on the cpu, saying why;
 *   RICOCHET_DEVICE_ENGINE_ON_CPU=1: the device engine through its CPU
 *              launcher writes byte-identical observables, rdf and msd to
 *              the host engine's, for a periodic gas, a Lennard-Jones
 *              fluid, and a walled granular column whose held contacts
 *              send steps back to the host engine. */
#define _POSIX_C_SOURCE 200809L
#include "rc_cli_test.h"
#include "ricochet/run.h"

#define FLUID RC_EXAMPLES_DIR "/hard_sphere_fluid.yaml"
#define FLUID_SMALL                                                          \
    "--set lattice.n=500 --set integrator.duration=0.4 "                     \
    "--set output.equilibrate=0.1"
#define COLUMN RC_EXAMPLES_DIR "/granular_column.yaml"
#define LJ RC_EXAMPLES_DIR "/lj_hard_core.yaml"
#define DEVICE_ON_CPU "RICOCHET_DEVICE_ENGINE_ON_CPU=1"

/* dir/summary.json parsed (NULL if unreadable); delete it after use. */
static cJSON *summary_of(const char *dir)
{
    return json_file(dir, "summary.json");
}

/* The files of a large-system run that must not depend on the engine. */
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
                 "%s: %s differs from the host engine's", what, files[k]);
    }
}

int main(void)
{
    char dhost[600], ddev[600], dauto[600], dcuda[600], dcol[600],
        dcoldev[600], dcolauto[600], dlj[600], dljdev[600], dljcuda[600];
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
    snprintf(ddev, sizeof ddev, "%s/dev", g_dir);
    snprintf(dauto, sizeof dauto, "%s/auto", g_dir);
    snprintf(dcuda, sizeof dcuda, "%s/cuda", g_dir);
    snprintf(dcol, sizeof dcol, "%s/col", g_dir);
    snprintf(dcoldev, sizeof dcoldev, "%s/coldev", g_dir);
    snprintf(dcolauto, sizeof dcolauto, "%s/colauto", g_dir);
    snprintf(dlj, sizeof dlj, "%s/lj", g_dir);
    snprintf(dljdev, sizeof dljdev, "%s/ljdev", g_dir);
    snprintf(dljcuda, sizeof dljcuda, "%s/ljcuda", g_dir);

    /* no --backend: the host engine */
    rc = cli("run '%s' " FLUID_SMALL " --out '%s' --quiet", FLUID, dhost);
    RC_CHECK(rc == 0, "default backend: exit %d: %s", rc, g_stderr);
    root = summary_of(dhost);
    RC_CHECK(root && !strcmp(str(root, "backend"), "cpu") &&
                 !cJSON_GetObjectItemCaseSensitive(root, "backend_note") &&
                 !cJSON_GetObjectItemCaseSensitive(root, "device_engine"),
             "default backend: backend '%s'", root ? str(root, "backend") : "?");
    cJSON_Delete(root);

    /* the device engine through its CPU launcher: the same bytes */
    rc = cli_env(DEVICE_ON_CPU, "run '%s' " FLUID_SMALL " --out '%s' --quiet",
                 FLUID, ddev);
    RC_CHECK(rc == 0, "device engine on the cpu: exit %d: %s", rc, g_stderr);
    root = summary_of(ddev);
    o = root ? cJSON_GetObjectItemCaseSensitive(root, "device_engine") : NULL;
    RC_CHECK(o && !strcmp(str(o, "launcher"), "cpu"),
             "device engine on the cpu: summary.json has no device_engine "
             "with launcher cpu");
    cJSON_Delete(root);
    same_outputs("periodic gas", dhost, ddev, 1);

    /* walls, gravity and a settling pile: held contacts go back to the
     * host engine, and the outputs are still the host engine's */
    rc = cli("run '%s' --set integrator.duration=0.6 --out '%s' --quiet",
             COLUMN, dcol);
    RC_CHECK(rc == 0, "granular column: exit %d: %s", rc, g_stderr);
    rc = cli_env(DEVICE_ON_CPU,
                 "run '%s' --set integrator.duration=0.6 --out '%s' --quiet",
                 COLUMN, dcoldev);
    RC_CHECK(rc == 0, "granular column, device engine: exit %d: %s", rc,
             g_stderr);
    root = summary_of(dcoldev);
    o = root ? cJSON_GetObjectItemCaseSensitive(root, "device_engine") : NULL;
    RC_CHECK(o && num(o, "steps_on_host_engine") > 0,
             "granular column: no step went to the host engine; the "
             "fallback path is not exercised");
    cJSON_Delete(root);
    same_outputs("granular column", dcol, dcoldev, 0);
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

    /* cuda */
    rc = cli("run '%s' " FLUID_SMALL " --out '%s' --quiet --backend cuda",
             FLUID, dcuda);
    if (devices == 0) {
        check_cuda_refused(rc, dcuda, "--backend cuda");
    } else {
        RC_CHECK(rc == 0, "--backend cuda: exit %d: %s", rc, g_stderr);
        root = summary_of(dcuda);
        o = root ? cJSON_GetObjectItemCaseSensitive(root, "device_engine")
                 : NULL;
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

    /* a pair potential: the device engine through its CPU launcher
     * writes the host engine's bytes; cuda as for hard spheres */
    rc = cli("run '%s' --set lattice.n=500 --set integrator.duration=0.1 "
             "--set output.equilibrate=0 --set output.every=5 --out '%s' "
             "--quiet",
             LJ, dlj);
    RC_CHECK(rc == 0, "Lennard-Jones: exit %d: %s", rc, g_stderr);
    rc = cli_env(DEVICE_ON_CPU,
                 "run '%s' --set lattice.n=500 --set integrator.duration=0.1 "
                 "--set output.equilibrate=0 --set output.every=5 --out '%s' "
                 "--quiet",
                 LJ, dljdev);
    RC_CHECK(rc == 0, "Lennard-Jones, device engine: exit %d: %s", rc,
             g_stderr);
    same_outputs("Lennard-Jones", dlj, dljdev, 1);
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

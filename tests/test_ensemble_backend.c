/* --backend for an ensemble, through the CLI (DESIGN §5, §8): in every
 * build and on any machine.
 *   cuda       without a usable device: exit 2, a message saying why, and
 *              nothing written; with one: the GPU ran the batch engine
 *              and ensemble.json's engine.device says "cuda: <name>";
 *   auto       the GPU when there is one, else the cpu, with
 *              engine.device_note saying why (and the same members.csv
 *              as the cpu run);
 *   (none)     the cpu, as before the GPU engine; no note;
 *   cuda with --per-member (the batch engine not taking the ensemble):
 *              runs per member on the cpu and says so;
 *   cuda with a GVI reference (members that record q for their L2
 *              error): the GPU's member kernel, recording (the values
 *              against the CPU's: tests/test_gpu_ensemble.c);
 *   reference  refused for ensembles (exit 2). */
#define _POSIX_C_SOURCE 200809L
#include "rc_cli_test.h"
#include "ricochet/run.h"

#define POGO RC_EXAMPLES_DIR "/pogo_ensemble.yaml"
#define SMALL "--set ensemble.members=64 --set integrator.duration=5"

/* dir/ensemble.json's engine object (NULL if unreadable); *root must be
 * deleted by the caller. */
static const cJSON *engine_of(const char *dir, cJSON **root)
{
    *root = json_file(dir, "ensemble.json");
    return *root ? cJSON_GetObjectItemCaseSensitive(*root, "engine") : NULL;
}

int main(void)
{
    char dcpu[600], dauto[600], dcuda[600], dper[600], pa[700], pb[700];
    char why[300] = "";
    int rc, devices = 0;
    cJSON *root = NULL;
    const cJSON *eng;
    if (cli_test_start("test_ensemble_backend"))
        return 1;
    rc_cuda_devices(NULL, 0, &devices, why, sizeof why);
    printf("test_ensemble_backend: %d CUDA device(s)%s%s\n", devices,
           devices ? "" : ": ", devices ? "" : why);
    snprintf(dcpu, sizeof dcpu, "%s/cpu", g_dir);
    snprintf(dauto, sizeof dauto, "%s/auto", g_dir);
    snprintf(dcuda, sizeof dcuda, "%s/cuda", g_dir);
    snprintf(dper, sizeof dper, "%s/per", g_dir);

    /* no --backend: the cpu */
    rc = cli("run '%s' " SMALL " --out '%s' --quiet --threads 2", POGO, dcpu);
    RC_CHECK(rc == 0, "default backend: exit %d: %s", rc, g_stderr);
    eng = engine_of(dcpu, &root);
    RC_CHECK(eng && !strcmp(str(eng, "device"), "cpu") &&
                 !strcmp(str(eng, "name"), "batch") &&
                 !cJSON_GetObjectItemCaseSensitive(eng, "device_note"),
             "default backend: engine device '%s', name '%s'",
             eng ? str(eng, "device") : "?", eng ? str(eng, "name") : "?");
    cJSON_Delete(root);

    /* cuda */
    rc = cli("run '%s' " SMALL " --out '%s' --quiet --backend cuda", POGO,
             dcuda);
    if (devices == 0) {
        check_cuda_refused(rc, dcuda, "--backend cuda");
    } else {
        RC_CHECK(rc == 0, "--backend cuda: exit %d: %s", rc, g_stderr);
        eng = engine_of(dcuda, &root);
        RC_CHECK(eng && !strncmp(str(eng, "device"), "cuda: ", 6) &&
                     cJSON_GetObjectItemCaseSensitive(eng, "gpu"),
                 "--backend cuda: engine device '%s'",
                 eng ? str(eng, "device") : "?");
        cJSON_Delete(root);
    }

    /* auto */
    rc = cli("run '%s' " SMALL " --out '%s' --quiet --threads 2 --backend "
             "auto",
             POGO, dauto);
    RC_CHECK(rc == 0, "--backend auto: exit %d: %s", rc, g_stderr);
    eng = engine_of(dauto, &root);
    if (devices == 0) {
        const char *note = eng ? str(eng, "device_note") : "";
        RC_CHECK(eng && !strcmp(str(eng, "device"), "cpu") &&
                     strstr(note, "auto chose the cpu: ") != NULL,
                 "--backend auto without a device: device '%s', note '%s'",
                 eng ? str(eng, "device") : "?", note);
        snprintf(pa, sizeof pa, "%s/members.csv", dcpu);
        snprintf(pb, sizeof pb, "%s/members.csv", dauto);
        RC_CHECK(same_file(pa, pb),
                 "--backend auto on the cpu: members.csv differs from the "
                 "default run's");
    } else {
        RC_CHECK(eng && !strncmp(str(eng, "device"), "cuda: ", 6),
                 "--backend auto with a device: device '%s'",
                 eng ? str(eng, "device") : "?");
    }
    cJSON_Delete(root);

    /* cuda, but the per-member engine: the cpu, saying so */
    rc = cli("run '%s' " SMALL " --out '%s' --quiet --backend cuda "
             "--per-member",
             POGO, dper);
    if (devices == 0) {
        RC_CHECK(rc == 2, "--backend cuda --per-member without a device: "
                          "exit %d, want 2",
                 rc);
    } else {
        RC_CHECK(rc == 0, "--backend cuda --per-member: exit %d: %s", rc,
                 g_stderr);
        eng = engine_of(dper, &root);
        RC_CHECK(eng && !strcmp(str(eng, "device"), "cpu") &&
                     strstr(str(eng, "device_note"), "one by one on the cpu"),
                 "--backend cuda --per-member: device '%s', note '%s'",
                 eng ? str(eng, "device") : "?",
                 eng ? str(eng, "device_note") : "?");
        cJSON_Delete(root);
    }

    /* cuda and a GVI reference: the GPU member kernels do not record the
     * configuration the L2 error needs, so the cpu batch engine runs
     * them, saying so (members.csv as without --backend) */
    {
        char dref[600], drefc[600];
        snprintf(dref, sizeof dref, "%s/ref_cpu", g_dir);
        snprintf(drefc, sizeof drefc, "%s/ref_cuda", g_dir);
        rc = cli("run '%s' " SMALL " --set 'ensemble.reference={dt: 0.05}' "
                 "--out '%s' --quiet --threads 2",
                 POGO, dref);
        RC_CHECK(rc == 0, "reference on the cpu: exit %d: %s", rc,
                 g_stderr);
        rc = cli("run '%s' " SMALL " --set 'ensemble.reference={dt: 0.05}' "
                 "--out '%s' --quiet --threads 2 --backend cuda",
                 POGO, drefc);
        if (devices == 0) {
            RC_CHECK(rc == 2, "--backend cuda with a reference, without a "
                              "device: exit %d, want 2",
                     rc);
        } else {
            RC_CHECK(rc == 0, "--backend cuda with a reference: exit %d: %s",
                     rc, g_stderr);
            eng = engine_of(drefc, &root);
            RC_CHECK(eng && !strncmp(str(eng, "device"), "cuda: ", 6) &&
                         !strcmp(str(eng, "name"), "batch") &&
                         !strcmp(str(eng, "references"), "batch"),
                     "--backend cuda with a reference: device '%s', name "
                     "'%s', references '%s'",
                     eng ? str(eng, "device") : "?",
                     eng ? str(eng, "name") : "?",
                     eng ? str(eng, "references") : "?");
            cJSON_Delete(root);
        }
    }

    /* reference: refused for ensembles */
    rc = cli("run '%s' " SMALL " --out '%s' --quiet --backend reference",
             POGO, dper);
    RC_CHECK(rc == 2, "--backend reference (ensemble): exit %d, want 2", rc);
    return cli_test_finish("test_ensemble_backend");
}

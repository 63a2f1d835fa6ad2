/* libFuzzer harness: YAML text -> rc_scenario_load (the scenario file a
 * user gives `ricochet run`), then the canonical JSON of what loaded.
 * Seeds: tests/fuzz/corpus/scenario/ (bundled examples). */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_common.h"

#include "ricochet/scenario.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Loading only: the memory check (src/host/resources.h) is told 2 GiB,
 * so no input makes the loader allocate past libFuzzer's malloc limit
 * (lattice.n may be 10^8, 6.4 GB of particles on a large machine). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("RICOCHET_MEMORY_LIMIT", "2G", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = rc_fuzz_file("scenario", data, size);
    rc_scenario *scn = NULL;
    rc_error err;
    char buf[4096];
    if (!path)
        return 0;
    if (rc_scenario_load(path, NULL, 0, &scn, &err) == RC_OK) {
        char *json = rc_scenario_to_json(scn);
        free(json);
        rc_scenario_free(scn);
    } else {
        /* the message is what the CLI prints: it must be formattable */
        rc_error_format(&err, buf, sizeof buf);
    }
    return 0;
}

/* libFuzzer harness: `--set PATH=VALUE` overrides (the CLI passes them to
 * rc_scenario_load) on a fixed small scenario.  The input is split at
 * newlines into up to 8 overrides.  Seeds: tests/fuzz/corpus/set/.
 * The base files are written to $TMPDIR once and removed at exit. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Two small scenarios with mappings, sequences and nested fields to set:
 * a small system, and (inputs starting with '!') a large one. */
static const char base_small[] =
    "name: set_small\n"
    "dimension: 2\n"
    "particles:\n"
    "  - {mass: 1, radius: 0.5, position: [0, 0], momentum: [0, 1]}\n"
    "  - {mass: 2, radius: 0.5, position: [6, 0], momentum: [0.5, -0.5]}\n"
    "potentials:\n"
    "  - {type: spring, particles: [0, 1], k: 10, rest_length: 5}\n"
    "integrator: {method: sv, dt: 0.01, duration: 1}\n"
    "output: {every: 10}\n";
static const char base_large[] =
    "name: set_large\n"
    "dimension: 3\n"
    "box: {periodic: true}\n"
    "lattice: {kind: fcc, n: 32, packing_fraction: 0.3, temperature: 1, "
    "seed: 1}\n"
    "integrator: {method: gvi, dt: 0.01, duration: 0.1}\n"
    "output: {every: 5}\n";

static char paths[2][512];

static void base_cleanup(void)
{
    if (paths[0][0])
        unlink(paths[0]);
    if (paths[1][0])
        unlink(paths[1]);
}

/* the base `text` in its own file, written once */
static const char *base_file(const char *tag, const char *text)
{
    char *path = paths[tag[0] == 'l'];
    if (!path[0]) {
        const char *tmp = getenv("TMPDIR");
        FILE *f;
        int fd;
        snprintf(path, 512, "%s/rc_fuzz_set_%s_XXXXXX",
                 tmp && *tmp ? tmp : "/tmp", tag);
        fd = mkstemp(path);
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
            path[0] = '\0';
            return NULL;
        }
        fputs(text, f);
        fclose(f);
        if (!paths[0][0] || !paths[1][0])
            atexit(base_cleanup); /* once */
    }
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path, *sets[8];
    char *text;
    size_t k, start = 0;
    int n = 0;
    rc_scenario *scn = NULL;
    rc_error err;
    char buf[4096];
    if (size > 0 && data[0] == '!') {
        path = base_file("large", base_large);
        ++data;
        --size;
    } else {
        path = base_file("small", base_small);
    }
    if (!path)
        return 0;
    text = (char *)malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    for (k = 0; k <= size && n < 8; ++k)
        if (k == size || text[k] == '\n') {
            text[k] = '\0';
            sets[n++] = text + start;
            start = k + 1;
        }
    if (rc_scenario_load(path, sets, n, &scn, &err) == RC_OK) {
        char *json = rc_scenario_to_json(scn);
        free(json);
        rc_scenario_free(scn);
    } else {
        rc_error_format(&err, buf, sizeof buf);
    }
    free(text);
    return 0;
}

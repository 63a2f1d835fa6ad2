/* libFuzzer harness: an extended XYZ file -> rc_xyz_read (the reader of
 * the scenario key `read:`), in 2-D and 3-D and for frames 0, 1 and -1
 * (the last: a counting pass first).
 * Seeds: tests/fuzz/corpus/xyz/. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "fuzz_common.h"

#include "host/md/xyz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* nothing to set up (replay.c calls it for every harness) */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int dims[4] = {2, 3, 3, 3};
    static const long frames[4] = {0, 0, 1, -1};
    const char *path = rc_fuzz_file("xyz", data, size);
    char msg[1200];
    int t;
    if (!path)
        return 0;
    for (t = 0; t < 4; ++t) {
        rc_xyz x;
        if (rc_xyz_read(path, dims[t], frames[t], &x, msg, sizeof msg) == 0) {
            /* the promises of xyz.h: every value read and checked */
            long i, n = x.n * dims[t];
            for (i = 0; i < n; ++i)
                if (!isfinite(x.q[i]) || (x.v && !isfinite(x.v[i])))
                    abort();
            for (i = 0; i < x.n; ++i)
                if ((x.radius && !(x.radius[i] > 0.0 && isfinite(x.radius[i]))) ||
                    (x.mass && !(x.mass[i] > 0.0 && isfinite(x.mass[i]))))
                    abort();
            for (i = 0; x.have_box && i < dims[t]; ++i)
                if (!(x.box[i] > 0.0 && isfinite(x.box[i])))
                    abort();
            rc_xyz_free(&x);
        } else if (!strchr(msg, ':')) {
            abort(); /* an error always names the file */
        }
    }
    return 0;
}

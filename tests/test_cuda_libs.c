/* cuBLAS and cuSOLVER are loaded when the GPU reflection tier is first
 * set up, not when a process starts (src/kernels/rc_cuda_nnls_batch.cu,
 * rc_cuda_la_load): a process of a CUDA build that never uses the tier
 * does not map them (they made 262 MiB resident in every run), and
 * loading them needs no device, only the toolkit.  CUDA builds only. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "rc_cuda_nnls_batch.h"
#include "rc_test.h"

/* 1 when /proc/self/maps lists a file whose name contains `lib`. */
static int mapped(const char *lib)
{
    char line[4096];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, lib) != NULL;
    fclose(f);
    return found;
}

int main(void)
{
    char why[512] = "";
    rc_status st;
    RC_CHECK(mapped("libcublas") == 0 && mapped("libcusolver") == 0,
             "cuBLAS or cuSOLVER mapped before the GPU tier was set up "
             "(cublas %d, cusolver %d)",
             mapped("libcublas"), mapped("libcusolver"));
    st = rc_cuda_la_load(why, sizeof why);
    RC_CHECK(st == RC_OK, "rc_cuda_la_load: %d: %s", (int)st, why);
    RC_CHECK(mapped("libcublas") == 1 && mapped("libcusolver") == 1,
             "after loading: cublas %d, cusolver %d mapped",
             mapped("libcublas"), mapped("libcusolver"));
    /* once per process: the second call answers the first's result */
    st = rc_cuda_la_load(why, sizeof why);
    RC_CHECK(st == RC_OK, "second rc_cuda_la_load: %d: %s", (int)st, why);
    return rc_test_finish("test_cuda_libs");
}

/* "No device" and "a device that cannot be used" told apart
 * (src/host/backend.h): the rule as a table, and what this build says
 * of this machine.  GPU tests skip (77) only when there is no device; a
 * GPU or a driver that is present but refuses (a driver older than the
 * CUDA 13 runtime needs: cudaErrorInsufficientDriver with a driver
 * version; a GPU on the PCI bus without its driver) fails them, and
 * `ricochet info` says so with both versions.  Runs on any machine. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/backend.h"
#include "rc_test.h"
#include "ricochet/run.h"

/* cudaError_t codes used below beside the two the rule names: 35
 * cudaErrorInsufficientDriver, 999 cudaErrorUnknown, 3
 * cudaErrorInitializationError (CUDA runtime API, driver_types.h). */
enum { INSUFFICIENT_DRIVER = 35, UNKNOWN = 999, INIT_ERROR = 3 };

static void rule(void)
{
    /* error, driver version, count, NVIDIA GPUs on the bus -> state */
    static const int table[][5] = {
        {RC_CUDA_SUCCESS, 13000, 1, 1, RC_CUDA_USABLE},
        {RC_CUDA_SUCCESS, 13000, 8, 8, RC_CUDA_USABLE},
        /* CUDA_VISIBLE_DEVICES="" or a driver without devices */
        {RC_CUDA_SUCCESS, 13000, 0, 0, RC_CUDA_NO_DEVICE},
        {RC_CUDA_ERROR_NO_DEVICE, 13000, 0, 1, RC_CUDA_NO_DEVICE},
        {RC_CUDA_ERROR_NO_DEVICE, 0, 0, 0, RC_CUDA_NO_DEVICE},
        /* this CPU machine: no driver installed, no GPU on the bus */
        {INSUFFICIENT_DRIVER, 0, 0, 0, RC_CUDA_NO_DEVICE},
        /* a GPU whose driver is missing */
        {INSUFFICIENT_DRIVER, 0, 0, 1, RC_CUDA_UNUSABLE},
        /* an R570 driver (CUDA 12.8) under the CUDA 13 runtime */
        {INSUFFICIENT_DRIVER, 12080, 0, 1, RC_CUDA_UNUSABLE},
        {INSUFFICIENT_DRIVER, 12080, 0, 0, RC_CUDA_UNUSABLE},
        {UNKNOWN, 13000, 0, 1, RC_CUDA_UNUSABLE},
        {INIT_ERROR, 13000, 0, 1, RC_CUDA_UNUSABLE}};
    size_t k;
    for (k = 0; k < sizeof table / sizeof table[0]; ++k) {
        const int *t = table[k];
        rc_cuda_state got = rc_cuda_classify(t[0], t[1], t[2], t[3]);
        RC_CHECK((int)got == t[4],
                 "error %d, driver %d, count %d, %d GPUs on the bus: state "
                 "%d, expected %d",
                 t[0], t[1], t[2], t[3], (int)got, t[4]);
    }
}

/* This machine, through the library and the CLI. */
static void here(void)
{
    int count = -1, drv = -1, rt = -1, pci = rc_nvidia_pci_devices();
    char why[400] = "", cmd[600], line[600];
    int saw_devices = 0, saw_runtime = 0;
    FILE *f;
    rc_status st = rc_cuda_devices(NULL, 0, &count, why, sizeof why);
    rc_cuda_versions(&drv, &rt);
    RC_CHECK(count >= 0, "count not set");
    RC_CHECK(st == RC_OK || (st == RC_ERR_DEVICE && count == 0 && why[0]),
             "status %d with count %d and reason '%s'", (int)st, count, why);
    RC_CHECK(count > 0 || why[0], "no device and no reason given");
    if (!rc_cuda_compiled()) {
        RC_CHECK(st == RC_OK && count == 0 && drv == 0 && rt == 0,
                 "a build without CUDA reports status %d, %d devices, "
                 "versions %d/%d",
                 (int)st, count, drv, rt);
    } else {
        RC_CHECK(rt >= 13000, "runtime version %d", rt);
        /* no driver and no GPU: the skip, never the failure */
        if (drv == 0 && pci == 0)
            RC_CHECK(st == RC_OK && count == 0,
                     "no driver and no GPU must read as no device "
                     "(status %d: %s)",
                     (int)st, why);
    }
    snprintf(cmd, sizeof cmd, "%s info", RC_CLI);
    f = popen(cmd, "r");
    RC_CHECK(f != NULL, "cannot run %s", cmd);
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "cuda devices: ", 14) == 0) {
            saw_devices = 1;
            if (st != RC_OK)
                RC_CHECK(strncmp(line + 14, "unusable (", 10) == 0,
                         "info says '%s' for an unusable device", line);
            else if (count == 0)
                RC_CHECK(strncmp(line + 14, "none (", 6) == 0 &&
                             strstr(line, why),
                         "info says '%s', the library '%s'", line, why);
        }
        if (strncmp(line, "cuda runtime ", 13) == 0)
            saw_runtime = 1;
    }
    RC_CHECK(f && pclose(f) == 0, "ricochet info did not exit 0");
    RC_CHECK(saw_devices, "ricochet info printed no 'cuda devices' line");
    RC_CHECK(saw_runtime == rc_cuda_compiled(),
             "ricochet info: runtime line %s in a build %s CUDA",
             saw_runtime ? "present" : "missing",
             rc_cuda_compiled() ? "with" : "without");
    printf("this machine: status %d, %d devices, driver %d, runtime %d, %d "
           "NVIDIA GPUs on the PCI bus: %s\n",
           (int)st, count, drv, rt, pci, why[0] ? why : "usable");
}

int main(void)
{
    rule();
    here();
    return rc_test_finish("test_cuda_devices");
}

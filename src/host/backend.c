/* Backend discovery.  With the CUDA backend compiled in, the device
 * queries live in src/kernels/rc_cuda.cu; without it, these report that
 * no device can be used.  The rule that tells "no device" (skip, fall
 * back) from "a device that cannot be used" (an error) is here, in plain
 * C, so that it is tested on any machine. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "ricochet/run.h"

rc_cuda_state rc_cuda_classify(int error, int driver_version, int count,
                               int nvidia_pci)
{
    if (error == RC_CUDA_SUCCESS)
        return count > 0 ? RC_CUDA_USABLE : RC_CUDA_NO_DEVICE;
    if (error == RC_CUDA_ERROR_NO_DEVICE)
        return RC_CUDA_NO_DEVICE;
    /* no driver at all: a machine without a GPU, unless one is on the
     * bus (then its driver is missing) */
    if (driver_version == 0)
        return nvidia_pci > 0 ? RC_CUDA_UNUSABLE : RC_CUDA_NO_DEVICE;
    return RC_CUDA_UNUSABLE; /* a driver answered, and refused */
}

/* Read a small sysfs file's first line into buf; 0 or -1. */
static int rc_read_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    int ok = f && fgets(buf, (int)size, f) != NULL;
    if (f)
        fclose(f);
    return ok ? 0 : -1;
}

int rc_nvidia_pci_devices(void)
{
    const char *root = "/sys/bus/pci/devices";
    DIR *d = opendir(root);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char path[512], vendor[32], cls[32];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/vendor", root, e->d_name);
        if (rc_read_line(path, vendor, sizeof vendor) != 0 ||
            strncmp(vendor, "0x10de", 6) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s/class", root, e->d_name);
        /* class 0x03xxxx: display controllers (VGA 0x0300, 3-D 0x0302) */
        if (rc_read_line(path, cls, sizeof cls) == 0 &&
            strncmp(cls, "0x03", 4) == 0)
            ++n;
    }
    closedir(d);
    return n;
}

#ifdef RICOCHET_HAVE_CUDA
rc_status rc_cuda_devices_impl_(rc_device_info *out, int max, int *count,
                                char *why, size_t why_size);
#endif

int rc_cuda_compiled(void)
{
#ifdef RICOCHET_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

#ifdef RICOCHET_HAVE_CUDA
void rc_cuda_versions_impl_(int *driver, int *runtime);
#endif

void rc_cuda_versions(int *driver, int *runtime)
{
    *driver = *runtime = 0;
#ifdef RICOCHET_HAVE_CUDA
    rc_cuda_versions_impl_(driver, runtime);
#endif
}

rc_status rc_cuda_devices(rc_device_info *out, int max, int *count,
                          char *why, size_t why_size)
{
    if (!count)
        return RC_ERR_INVALID;
    *count = 0;
#ifdef RICOCHET_HAVE_CUDA
    return rc_cuda_devices_impl_(out, max, count, why, why_size);
#else
    (void)out;
    (void)max;
    if (why && why_size)
        snprintf(why, why_size,
                 "this build has no CUDA backend (nvcc was not found when "
                 "it was configured, or RICOCHET_CUDA=OFF)");
    return RC_OK;
#endif
}

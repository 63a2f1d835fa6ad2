/* Backend discovery.  With the CUDA backend compiled in, the device
 * queries live in src/kernels/rc_cuda.cu; without it, these report that
 * no device can be used. */
#include <stdio.h>

#include "ricochet/run.h"

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

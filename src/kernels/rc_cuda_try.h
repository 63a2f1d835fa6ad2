/* The one CUDA error check of the launchers (.cu files only): a failed
 * runtime call becomes RC_ERR_DEVICE in the caller's `st`, with the file,
 * line, call and CUDA's reason in its `why` buffer (why_size bytes; may
 * be NULL), and jumps to the caller's `done:` label, where everything is
 * released. */
#ifndef RC_CUDA_TRY_H
#define RC_CUDA_TRY_H

#include <stdio.h>

#include <cuda_runtime.h>

#define RC_CUDA_TRY(call)                                                    \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            if (why && why_size)                                             \
                snprintf(why, why_size, "%s:%d: %s failed: %s", __FILE__,    \
                         __LINE__, #call, cudaGetErrorString(e_));           \
            st = RC_ERR_DEVICE;                                              \
            goto done;                                                       \
        }                                                                    \
    } while (0)

#endif

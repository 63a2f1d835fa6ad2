/* Device memory bandwidth, as a yardstick for the GPU ensemble numbers
 * (bench/gpu/run.sh): cudaMemcpy device-to-device of a 256 MiB buffer
 * and host-to-device from pinned memory, timed with CUDA events after a
 * warm-up; the median of 20 repeats.  Device-to-device moves each byte
 * twice (read and write), counted as 2 * bytes per copy, the convention
 * of NVIDIA's bandwidthTest.  Prints one JSON object; exit 77 without a
 * device, 1 on a CUDA error.
 * Build: nvcc -O2 -o copy_bandwidth bench/gpu/copy_bandwidth.cu */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#define TRY(call)                                                            \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            fprintf(stderr, "copy_bandwidth: %s:%d: %s failed: %s\n",       \
                    __FILE__, __LINE__, #call, cudaGetErrorString(e_));      \
            rc = 1;                                                          \
            goto done;                                                       \
        }                                                                    \
    } while (0)

enum { REPEATS = 20 };

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    const size_t bytes = (size_t)256 << 20;
    int rc = 0, n = 0, k;
    char *d_a = NULL, *d_b = NULL, *h = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    cudaDeviceProp prop;
    float d2d[REPEATS], h2d[REPEATS];
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("{\"skipped\": \"no CUDA device\"}\n");
        return 77;
    }
    TRY(cudaGetDeviceProperties(&prop, 0));
    TRY(cudaMalloc((void **)&d_a, bytes));
    TRY(cudaMalloc((void **)&d_b, bytes));
    TRY(cudaMallocHost((void **)&h, bytes));
    TRY(cudaEventCreate(&t0));
    TRY(cudaEventCreate(&t1));
    TRY(cudaMemset(d_a, 1, bytes));
    TRY(cudaMemcpy(d_b, d_a, bytes, cudaMemcpyDeviceToDevice)); /* warm-up */
    TRY(cudaMemcpy(d_a, h, bytes, cudaMemcpyHostToDevice));
    for (k = 0; k < REPEATS; ++k) {
        TRY(cudaEventRecord(t0, 0));
        TRY(cudaMemcpy(d_b, d_a, bytes, cudaMemcpyDeviceToDevice));
        TRY(cudaEventRecord(t1, 0));
        TRY(cudaEventSynchronize(t1));
        TRY(cudaEventElapsedTime(&d2d[k], t0, t1));
        TRY(cudaEventRecord(t0, 0));
        TRY(cudaMemcpy(d_a, h, bytes, cudaMemcpyHostToDevice));
        TRY(cudaEventRecord(t1, 0));
        TRY(cudaEventSynchronize(t1));
        TRY(cudaEventElapsedTime(&h2d[k], t0, t1));
    }
    qsort(d2d, REPEATS, sizeof(float), cmp_float);
    qsort(h2d, REPEATS, sizeof(float), cmp_float);
    printf("{\"device\": \"%s\", \"bytes\": %zu, \"repeats\": %d, "
           "\"d2d_gb_per_s\": %.1f, \"h2d_pinned_gb_per_s\": %.1f}\n",
           prop.name, bytes, REPEATS,
           2.0 * (double)bytes / (d2d[REPEATS / 2] * 1e-3) / 1e9,
           (double)bytes / (h2d[REPEATS / 2] * 1e-3) / 1e9);
done:
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    cudaFree(d_a);
    cudaFree(d_b);
    if (h)
        cudaFreeHost(h);
    return rc;
}

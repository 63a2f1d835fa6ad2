/* The device engine's CUDA launcher (src/host/md/dengine.h): device
 * memory, one grid-stride wrapper per kernel around the body the CPU
 * launcher loops over (rc_dmd_body, src/kernels/rc_md_ops.h), CUB for the
 * scans and the stable sort of contacts by island, and a two-level
 * chunked sum whose association is the CPU launcher's (rc_k_sum_chunk),
 * so the reductions are deterministic and equal on both.
 *
 * Only launch plumbing lives here.  Every CUDA call is checked and its
 * failure recorded with file, line and call (error()); every launch is
 * followed by cudaGetLastError.  All work goes to one stream; the
 * host reads scalars back with synchronous copies, which also order the
 * work.  The engine's in-kernel problems (islands that fail, non-finite
 * states) come back as per-item values the engine reduces and reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include "host/launch.h"
#include "rc_cuda_nnls_batch.h"
#include "rc_md_ops.h"

/* Threads a block: the particle and pair kernels are memory-bound and
 * light; island solves branch (passes, NNLS active sets), so they get
 * small blocks, as the ensemble kernel does. */
#define RC_MD_BLOCK 256
#define RC_MD_ISLAND_BLOCK 64
#define RC_MD_MAX_GRID 65535

typedef struct rc_cuda_md {
    char why[512];
    void *temp;          /* CUB temporary storage */
    size_t temp_bytes;
    int *alt_key, *alt_val; /* the radix sort's second buffers */
    long alt_cap;
    double *partial;     /* chunk sums */
    long partial_cap;
    double *d_out;       /* one reduction result */
} rc_cuda_md;

/* Record a failed CUDA call (the first one wins: later failures are
 * usually its consequences). */
static int rc_md_cuda_fail(rc_cuda_md *c, cudaError_t e, const char *file,
                           int line, const char *call)
{
    snprintf(c->why, sizeof c->why, "%s:%d: %s failed: %s", file, line, call,
             cudaGetErrorString(e));
    return -1;
}

#define CTRY(call)                                                           \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess)                                               \
            return rc_md_cuda_fail(c, e_, __FILE__, __LINE__, #call);        \
    } while (0)

template <int K>
__global__ void rc_g_dmd(const rc_k_md v, long n)
{
    long i, stride = (long)blockDim.x * gridDim.x;
    for (i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        rc_dmd_body((rc_dmd_kernel)K, &v, i);
}

/* Level one of the sum and max: chunk c of x (one thread a chunk). */
__global__ void rc_g_chunks(const double *x, long n, long nchunk,
                            double *partial, int is_max)
{
    long c, stride = (long)blockDim.x * gridDim.x;
    for (c = (long)blockIdx.x * blockDim.x + threadIdx.x; c < nchunk;
         c += stride)
        partial[c] = is_max ? rc_k_max_chunk(x, n, c) : rc_k_sum_chunk(x, n, c);
}

/* Level two: the chunk results in chunk order, by one thread, as the CPU
 * launcher adds them. */
__global__ void rc_g_chunks_total(const double *partial, long nchunk,
                                  double *out, int is_max)
{
    long c;
    double s = 0.0;
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    for (c = 0; c < nchunk; ++c)
        s = is_max ? rc_fmax(s, partial[c]) : s + partial[c];
    *out = s;
}

static void *md_alloc(void *ctx, size_t bytes)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        snprintf(c->why, sizeof c->why,
                 "cudaMalloc of %zu bytes failed: %s (the system may not fit "
                 "in device memory)",
                 bytes, cudaGetErrorString(e));
        cudaGetLastError(); /* out of memory is not sticky: clear it */
        return NULL;
    }
    return p;
}

static void md_release(void *ctx, void *ptr)
{
    (void)ctx;
    if (ptr)
        cudaFree(ptr);
}

static int md_put(void *ctx, void *dst, const void *src, size_t bytes)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (bytes)
        CTRY(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return 0;
}

static int md_get(void *ctx, void *dst, const void *src, size_t bytes)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (bytes)
        CTRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return 0;
}

static int md_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (bytes)
        CTRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
    return 0;
}

static int md_zero(void *ctx, void *dst, size_t bytes)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (bytes)
        CTRY(cudaMemset(dst, 0, bytes));
    return 0;
}

template <int K>
static int md_launch(rc_cuda_md *c, const rc_k_md *v, long count, int block)
{
    int grid = 0;
    if (rc_launch_grid(count, block, RC_MD_MAX_GRID, &grid) != RC_OK) {
        snprintf(c->why, sizeof c->why, "bad launch size %ld", count);
        return -1;
    }
    if (grid == 0)
        return 0;
    rc_g_dmd<K><<<grid, block>>>(*v, count);
    CTRY(cudaGetLastError());
    return 0;
}

static int md_run(void *ctx, rc_dmd_kernel k, const rc_k_md *v, long count)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    switch (k) {
#define CASE(K, B)                                                           \
    case K:                                                                  \
        return md_launch<K>(c, v, count, B);
        CASE(RC_DMD_PREDICT, RC_MD_BLOCK)
        CASE(RC_DMD_MOVED, RC_MD_BLOCK)
        CASE(RC_DMD_SNAPSHOT, RC_MD_BLOCK)
        CASE(RC_DMD_CELL_COUNT, RC_MD_BLOCK)
        CASE(RC_DMD_CELL_FILL, RC_MD_BLOCK)
        CASE(RC_DMD_PAIR_COUNT, RC_MD_BLOCK)
        CASE(RC_DMD_PAIR_WRITE, RC_MD_BLOCK)
        CASE(RC_DMD_SCREEN_PAIR, RC_MD_BLOCK)
        CASE(RC_DMD_PUSH_PAIR, RC_MD_BLOCK)
        CASE(RC_DMD_SCREEN_WALL, RC_MD_BLOCK)
        CASE(RC_DMD_PUSH_WALL, RC_MD_BLOCK)
        CASE(RC_DMD_REMARK, RC_MD_BLOCK)
        CASE(RC_DMD_UF_INIT, RC_MD_BLOCK)
        CASE(RC_DMD_UF_HOOK, RC_MD_BLOCK)
        CASE(RC_DMD_CON_KEY, RC_MD_BLOCK)
        CASE(RC_DMD_ISL_HEAD, RC_MD_BLOCK)
        CASE(RC_DMD_ISL_START, RC_MD_BLOCK)
        CASE(RC_DMD_ISL_SIZE, RC_MD_BLOCK)
        CASE(RC_DMD_REFLECT, RC_MD_ISLAND_BLOCK)
        CASE(RC_DMD_FINITE, RC_MD_BLOCK)
        CASE(RC_DMD_FINISH, RC_MD_BLOCK)
        CASE(RC_DMD_VIRIAL, RC_MD_BLOCK)
        CASE(RC_DMD_COLLIDED, RC_MD_BLOCK)
        CASE(RC_DMD_WALL_COLLIDED, RC_MD_BLOCK)
        CASE(RC_DMD_OBSERVE, RC_MD_BLOCK)
        CASE(RC_DMD_OVERLAP_PAIR, RC_MD_BLOCK)
        CASE(RC_DMD_OVERLAP_WALL, RC_MD_BLOCK)
        CASE(RC_DMD_PAIR_TERM, RC_MD_BLOCK)
        CASE(RC_DMD_TCOUNT, RC_MD_BLOCK)
        CASE(RC_DMD_TFILL, RC_MD_BLOCK)
        CASE(RC_DMD_TSORT, RC_MD_BLOCK)
        CASE(RC_DMD_FORCE, RC_MD_BLOCK)
        CASE(RC_DMD_HOLD, RC_MD_ISLAND_BLOCK)
        CASE(RC_DMD_UNHOLD, RC_MD_BLOCK)
        CASE(RC_DMD_PROJECT, RC_MD_ISLAND_BLOCK)
        CASE(RC_DMD_KICK_FORCES, RC_MD_BLOCK)
        CASE(RC_DMD_ADVANCE, RC_MD_BLOCK)
#undef CASE
    case RC_DMD_NKERNELS:
        break;
    }
    snprintf(c->why, sizeof c->why, "unknown kernel %d", (int)k);
    return -1;
}

/* CUB's temporary storage, grown to `bytes`. */
static int md_temp(rc_cuda_md *c, size_t bytes)
{
    if (bytes <= c->temp_bytes && c->temp)
        return 0;
    if (c->temp)
        cudaFree(c->temp);
    c->temp = NULL;
    c->temp_bytes = 0;
    CTRY(cudaMalloc(&c->temp, bytes + bytes / 4 + 256));
    c->temp_bytes = bytes + bytes / 4 + 256;
    return 0;
}

static int md_scan(void *ctx, long *x, long n, long *total)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    size_t bytes = 0;
    /* CUB counts items in int: offsets beyond it are refused (the host
     * engine's pair lists have the same limit) */
    if (n + 1 > 2147483647L) {
        snprintf(c->why, sizeof c->why, "scan of %ld items exceeds int", n);
        return -1;
    }
    CTRY(cub::DeviceScan::ExclusiveSum(NULL, bytes, x, x, (int)(n + 1)));
    if (md_temp(c, bytes))
        return -1;
    bytes = c->temp_bytes;
    CTRY(cub::DeviceScan::ExclusiveSum(c->temp, bytes, x, x, (int)(n + 1)));
    CTRY(cudaGetLastError());
    CTRY(cudaMemcpy(total, x + n, sizeof(long), cudaMemcpyDeviceToHost));
    return 0;
}

static int md_sort_by_key(void *ctx, int *key, int *val, long n, int bits)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    size_t bytes = 0;
    if (n <= 1)
        return 0;
    if (n > 2147483647L) {
        snprintf(c->why, sizeof c->why, "sort of %ld items exceeds int", n);
        return -1;
    }
    if (n > c->alt_cap) {
        long cap = n + n / 4 + 1024;
        if (c->alt_key)
            cudaFree(c->alt_key);
        if (c->alt_val)
            cudaFree(c->alt_val);
        c->alt_key = NULL;
        c->alt_val = NULL;
        c->alt_cap = 0;
        CTRY(cudaMalloc(&c->alt_key, sizeof(int) * (size_t)cap));
        CTRY(cudaMalloc(&c->alt_val, sizeof(int) * (size_t)cap));
        c->alt_cap = cap;
    }
    /* stable LSD radix sort into the second buffers, then back */
    CTRY(cub::DeviceRadixSort::SortPairs(NULL, bytes, key, c->alt_key, val,
                                         c->alt_val, (int)n, 0, bits));
    if (md_temp(c, bytes))
        return -1;
    bytes = c->temp_bytes;
    CTRY(cub::DeviceRadixSort::SortPairs(c->temp, bytes, key, c->alt_key, val,
                                         c->alt_val, (int)n, 0, bits));
    CTRY(cudaGetLastError());
    CTRY(cudaMemcpy(key, c->alt_key, sizeof(int) * (size_t)n,
                    cudaMemcpyDeviceToDevice));
    CTRY(cudaMemcpy(val, c->alt_val, sizeof(int) * (size_t)n,
                    cudaMemcpyDeviceToDevice));
    return 0;
}

static int md_reduce(rc_cuda_md *c, const double *x, long n, double *out,
                     int is_max)
{
    long nchunk = (n + RC_K_SUM_CHUNK - 1) / RC_K_SUM_CHUNK;
    int grid = 0;
    if (n <= 0) {
        *out = 0.0;
        return 0;
    }
    if (nchunk > c->partial_cap) {
        long cap = nchunk + nchunk / 4 + 64;
        if (c->partial)
            cudaFree(c->partial);
        c->partial = NULL;
        c->partial_cap = 0;
        CTRY(cudaMalloc(&c->partial, sizeof(double) * (size_t)cap));
        c->partial_cap = cap;
    }
    if (rc_launch_grid(nchunk, RC_MD_BLOCK, RC_MD_MAX_GRID, &grid) != RC_OK) {
        snprintf(c->why, sizeof c->why, "bad reduction size %ld", n);
        return -1;
    }
    rc_g_chunks<<<grid, RC_MD_BLOCK>>>(x, n, nchunk, c->partial, is_max);
    CTRY(cudaGetLastError());
    rc_g_chunks_total<<<1, 1>>>(c->partial, nchunk, c->d_out, is_max);
    CTRY(cudaGetLastError());
    CTRY(cudaMemcpy(out, c->d_out, sizeof(double), cudaMemcpyDeviceToHost));
    return 0;
}

static int md_sum(void *ctx, const double *x, long n, double *out)
{
    return md_reduce((rc_cuda_md *)ctx, x, n, out, 0);
}

static int md_max(void *ctx, const double *x, long n, double *out)
{
    return md_reduce((rc_cuda_md *)ctx, x, n, out, 1);
}

/* tolerance 1e-12 of the problem's own scale: the dense tier's */
static int md_nnls_batch(void *ctx, int nprob, int mp, int kp, const int *m,
                         const double *B, const double *b, double *lam,
                         int *status)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    return rc_cuda_nnls_batch(nprob, mp, kp, m, B, b, 1e-12, 0, lam, status,
                              NULL, c->why, sizeof c->why) == RC_OK
               ? 0
               : -1;
}

static const char *md_error(void *ctx)
{
    return ((rc_cuda_md *)ctx)->why;
}

static void md_destroy(void *ctx)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (!c)
        return;
    if (c->temp)
        cudaFree(c->temp);
    if (c->alt_key)
        cudaFree(c->alt_key);
    if (c->alt_val)
        cudaFree(c->alt_val);
    if (c->partial)
        cudaFree(c->partial);
    if (c->d_out)
        cudaFree(c->d_out);
    free(c);
}

static const rc_dmd_ops rc_cuda_md_ops = {
    "cuda",  md_alloc, md_release,     md_put,  md_get, md_copy,
    md_zero, md_run,   md_scan,        md_sort_by_key,  md_sum,
    md_max,  md_nnls_batch,    md_error, md_destroy};

extern "C" rc_status rc_cuda_md_launcher(const rc_dmd_ops **ops, void **ctx,
                                         char *why, size_t why_size)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    rc_cuda_md *c;
    if (e != cudaSuccess || n == 0) {
        if (why && why_size)
            snprintf(why, why_size, "no usable CUDA device (%s)",
                     e != cudaSuccess ? cudaGetErrorString(e)
                                      : "none present");
        cudaGetLastError();
        return RC_ERR_DEVICE;
    }
    c = (rc_cuda_md *)calloc(1, sizeof *c);
    if (!c)
        return RC_ERR_NOMEM;
    e = cudaSetDevice(0);
    if (e == cudaSuccess)
        e = cudaMalloc(&c->d_out, sizeof(double));
    if (e != cudaSuccess) {
        if (why && why_size)
            snprintf(why, why_size, "%s:%d: setting up device 0 failed: %s",
                     __FILE__, __LINE__, cudaGetErrorString(e));
        md_destroy(c);
        return RC_ERR_DEVICE;
    }
    *ops = &rc_cuda_md_ops;
    *ctx = c;
    return RC_OK;
}

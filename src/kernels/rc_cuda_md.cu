/* The device engine's CUDA launcher (src/host/md/dengine.h): device
 * memory, one grid-stride wrapper per kernel around the body the CPU
 * launcher loops over (rc_dmd_body, src/kernels/rc_md_ops.h), CUB for the
 * scans and the stable sort of contacts by island, a deterministic
 * reduction whose association is the CPU launcher's (rc_k_reduce), and
 * the medium island tier's cuBLAS/cuSOLVER context.
 *
 * One stream.  Everything the launcher does is queued on its own
 * non-blocking stream (kernels, CUB, cuBLAS and cuSOLVER, copies), so
 * the order is the stream's; the host waits only where it reads
 * something back (get, fetch, a scan's total, a medium-tier batch).
 *
 * Errors.  Every CUDA call is checked; the first failure is kept, with
 * file, line and call (later failures are usually its consequences).  A
 * kernel that faults (an illegal address) surfaces at the next call that
 * waits, so that message also names the last kernel launched; with
 * RICOCHET_CUDA_SYNC_CHECK=1 in the environment the launcher waits after
 * every launch and names the kernel that failed (slow: for diagnosis).
 * The engine's in-kernel problems (islands that fail, non-finite states)
 * come back as per-item values the engine reduces and reports. */
#include <stdarg.h>
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
/* The reduction: a block loads a chunk coalesced into shared memory
 * (RC_K_SUM_CHUNK doubles, 8 KiB); one block of RC_MD_TREE_BLOCK
 * threads folds the chunk results level by level. */
#define RC_MD_CHUNK_BLOCK 256
#define RC_MD_TREE_BLOCK 1024

typedef struct rc_cuda_md {
    char why[512];
    cudaStream_t stream;
    int has_stream;
    int sync_check;      /* RICOCHET_CUDA_SYNC_CHECK=1 */
    const char *last_kernel;
    void *temp;          /* CUB temporary storage */
    size_t temp_bytes;
    int *alt_key, *alt_val; /* the radix sort's second buffers */
    long alt_cap;
    double *partial;     /* chunk results of one reduction */
    long partial_cap;
    double *d_slot;      /* [RC_DMD_SLOTS] reduction results */
    double *h_slot;      /* pinned: their copy */
    long *h_total;       /* pinned: a scan's total */
    long *sel;           /* a selection's flags widened, then scanned */
    long sel_cap;
    rc_cuda_nnls_ctx *nb; /* the medium tier's stream-bound libraries */
} rc_cuda_md;

/* Record a failure; the first one is kept. */
static int md_fail(rc_cuda_md *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rc_dmd_keep_first(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return -1;
}

/* A failed CUDA call; an error that a kernel raised surfaces at a call
 * that waits, so name the last kernel launched as well. */
static int md_cuda_fail(rc_cuda_md *c, cudaError_t e, const char *file,
                        int line, const char *call)
{
    return md_fail(c,
                   "%s:%d: %s failed: %s (last kernel launched: %s%s)", file,
                   line, call, cudaGetErrorString(e),
                   c->last_kernel ? c->last_kernel : "none",
                   c->sync_check ? ""
                                 : "; RICOCHET_CUDA_SYNC_CHECK=1 names the "
                                   "kernel that failed");
}

#define CTRY(call)                                                           \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess)                                               \
            return md_cuda_fail(c, e_, __FILE__, __LINE__, #call);           \
    } while (0)

/* After a launch: its own error, and with the sync check the kernel's. */
static int md_launched(rc_cuda_md *c, const char *name)
{
    cudaError_t e = cudaGetLastError();
    c->last_kernel = name;
    if (e == cudaSuccess && c->sync_check)
        e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess)
        return md_fail(c, "kernel %s failed: %s", name,
                       cudaGetErrorString(e));
    return 0;
}

template <int K>
__global__ void rc_g_dmd(const rc_k_md v, long n)
{
    long i, stride = (long)blockDim.x * gridDim.x;
    for (i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        rc_dmd_body((rc_dmd_kernel)K, &v, i);
}

/* Level one of the reduction: chunk c of x, loaded coalesced into shared
 * memory by the block, then summed (or maxed) in index order by one
 * thread: rc_k_sum_chunk's association, so the CPU launcher's bits. */
__global__ void rc_g_chunks(const double *x, long n, long nchunk,
                            double *partial, int is_max)
{
    __shared__ double buf[RC_K_SUM_CHUNK];
    long c;
    for (c = blockIdx.x; c < nchunk; c += gridDim.x) {
        long lo = c * RC_K_SUM_CHUNK,
             len = n - lo < RC_K_SUM_CHUNK ? n - lo : RC_K_SUM_CHUNK, a;
        for (a = threadIdx.x; a < len; a += blockDim.x)
            buf[a] = x[lo + a];
        __syncthreads();
        if (threadIdx.x == 0)
            partial[c] = is_max ? rc_k_max_chunk(buf, len, 0)
                                : rc_k_sum_chunk(buf, len, 0);
        __syncthreads(); /* buf is refilled for the next chunk */
    }
}

/* Level two: the chunk results folded by rc_k_tree_level, level after
 * level, in place, by one block (each level in parallel; __syncthreads
 * makes one level's writes visible to the next); the total into *slot. */
__global__ void rc_g_tree(double *partial, long n, double *slot, int is_max)
{
    long s, t;
    for (s = 1; s < n; s *= 2) {
        long items = (n + 2 * s - 1) / (2 * s);
        for (t = threadIdx.x; t < items; t += blockDim.x)
            rc_k_tree_level(partial, n, s, t, is_max);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *slot = n > 0 ? partial[0] : 0.0;
}

static void *md_alloc(void *ctx, size_t bytes)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        md_fail(c,
                "cudaMalloc of %zu bytes failed: %s (the system may not fit "
                "in device memory)",
                bytes, cudaGetErrorString(e));
        cudaGetLastError(); /* out of memory is not sticky: clear it */
        return NULL;
    }
    /* Zeroed once, on the engine's stream: the bytes no kernel writes
     * (a struct's padding, a scan's spare last item) are then defined
     * when they are copied or read (compute-sanitizer initcheck), for
     * one memset per growth of a buffer. */
    e = cudaMemsetAsync(p, 0, bytes ? bytes : 1, c->stream);
    if (e != cudaSuccess) {
        md_fail(c, "cudaMemsetAsync of %zu bytes failed: %s", bytes,
                cudaGetErrorString(e));
        cudaFree(p);
        return NULL;
    }
    return p;
}

static void md_release(void *ctx, void *ptr)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (!ptr)
        return;
    /* work queued on the stream may still read it */
    cudaStreamSynchronize(c->stream);
    cudaFree(ptr);
}

/* Host to device from pageable memory: staged at once, so the source may
 * change when the call returns; ordered in the stream. */
static int md_put(void *ctx, void *dst, const void *src, size_t bytes)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (bytes)
        CTRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
                             c->stream));
    return 0;
}

static int md_get(void *ctx, void *dst, const void *src, size_t bytes)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (bytes) {
        CTRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,
                             c->stream));
        CTRY(cudaStreamSynchronize(c->stream));
    }
    return 0;
}

static int md_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (bytes)
        CTRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                             c->stream));
    return 0;
}

static int md_zero(void *ctx, void *dst, size_t bytes)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (bytes)
        CTRY(cudaMemsetAsync(dst, 0, bytes, c->stream));
    return 0;
}

template <int K>
static int md_launch(rc_cuda_md *c, const rc_k_md *v, long count, int block)
{
    int grid = 0;
    if (rc_launch_grid(count, block, RC_MD_MAX_GRID, &grid) != RC_OK)
        return md_fail(c, "bad launch size %ld of kernel %s", count,
                       rc_dmd_kernel_name((rc_dmd_kernel)K));
    if (grid == 0)
        return 0;
    rc_g_dmd<K><<<grid, block, 0, c->stream>>>(*v, count);
    return md_launched(c, rc_dmd_kernel_name((rc_dmd_kernel)K));
}

static int md_run(void *ctx, rc_dmd_kernel k, const rc_k_md *v, long count)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    switch (k) {
#define CASE(E, name, isl, body)                                             \
    case RC_DMD_##E:                                                         \
        return md_launch<RC_DMD_##E>(c, v, count, isl ? RC_MD_ISLAND_BLOCK   \
                                                      : RC_MD_BLOCK);
        RC_DMD_KERNELS(CASE)
#undef CASE
    case RC_DMD_NKERNELS:
        break;
    }
    return md_fail(c, "unknown kernel %d", (int)k);
}

/* CUB's temporary storage, grown to `bytes`. */
static int md_temp(rc_cuda_md *c, size_t bytes)
{
    if (bytes <= c->temp_bytes && c->temp)
        return 0;
    md_release(c, c->temp);
    c->temp = NULL;
    c->temp_bytes = 0;
    CTRY(cudaMalloc(&c->temp, bytes + bytes / 4 + 256));
    c->temp_bytes = bytes + bytes / 4 + 256;
    /* CUB's single-pass scan polls its predecessors' {status, value}
     * descriptors whole and initialises only the status (by design,
     * NVIDIA/cub issue 98): zeroed once so that initcheck sees no read
     * of memory never written */
    CTRY(cudaMemsetAsync(c->temp, 0, c->temp_bytes, c->stream));
    return 0;
}

static int md_scan(void *ctx, long *x, long n, long *total)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    size_t bytes = 0;
    /* CUB counts items in int: offsets beyond it are refused (the host
     * engine's pair lists have the same limit) */
    if (n + 1 > 2147483647L)
        return md_fail(c, "scan of %ld items exceeds int", n);
    CTRY(cub::DeviceScan::ExclusiveSum(NULL, bytes, x, x, (int)(n + 1),
                                       c->stream));
    if (md_temp(c, bytes))
        return -1;
    bytes = c->temp_bytes;
    CTRY(cub::DeviceScan::ExclusiveSum(c->temp, bytes, x, x, (int)(n + 1),
                                       c->stream));
    if (md_launched(c, "cub::DeviceScan::ExclusiveSum"))
        return -1;
    CTRY(cudaMemcpyAsync(c->h_total, x + n, sizeof(long),
                         cudaMemcpyDeviceToHost, c->stream));
    CTRY(cudaStreamSynchronize(c->stream));
    *total = *c->h_total;
    return 0;
}

/* A device scratch array of at least `need` elements of `size` bytes,
 * grown with a quarter (and `slack`) to spare: its contents go. */
static int md_scratch(rc_cuda_md *c, void **ptr, long *cap, long need,
                      size_t size, long slack)
{
    long n;
    if (need <= *cap)
        return 0;
    n = need + need / 4 + slack;
    md_release(c, *ptr);
    *ptr = NULL;
    *cap = 0;
    CTRY(cudaMalloc(ptr, size * (size_t)n));
    *cap = n;
    return 0;
}

/* A selection's two passes around the scan: the flags as 0/1 counts,
 * then each flagged position to its slot. */
__global__ void rc_g_sel_widen(const unsigned char *flag, long n, long *x)
{
    long i, stride = (long)blockDim.x * gridDim.x;
    for (i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        x[i] = flag[i] != 0;
}

__global__ void rc_g_sel_scatter(const unsigned char *flag, long n,
                                 const long *x, int *hit)
{
    long i, stride = (long)blockDim.x * gridDim.x;
    for (i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        if (flag[i])
            hit[x[i]] = (int)i;
}

/* The flagged positions in order (rc_dmd_ops.select): widened to counts,
 * scanned (the total crosses to the host), scattered to their slots. */
static int md_select(void *ctx, const unsigned char *flag, long n, int *hit,
                     long *total)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    int grid = 0;
    *total = 0;
    if (n <= 0)
        return 0;
    if (md_scratch(c, (void **)&c->sel, &c->sel_cap, n + 1, sizeof(long),
                   1024))
        return -1;
    if (rc_launch_grid(n, RC_MD_BLOCK, RC_MD_MAX_GRID, &grid) != RC_OK)
        return md_fail(c, "bad selection size %ld", n);
    rc_g_sel_widen<<<grid, RC_MD_BLOCK, 0, c->stream>>>(flag, n, c->sel);
    if (md_launched(c, "selection flags"))
        return -1;
    if (md_scan(ctx, c->sel, n, total) != 0)
        return -1;
    if (*total > 0) {
        rc_g_sel_scatter<<<grid, RC_MD_BLOCK, 0, c->stream>>>(flag, n, c->sel,
                                                             hit);
        if (md_launched(c, "selection scatter"))
            return -1;
    }
    return 0;
}

static int md_sort_by_key(void *ctx, int *key, int *val, long n, int bits)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    size_t bytes = 0;
    if (n <= 1)
        return 0;
    if (n > 2147483647L)
        return md_fail(c, "sort of %ld items exceeds int", n);
    if (n > c->alt_cap) {
        long cap = n + n / 4 + 1024;
        md_release(c, c->alt_key);
        md_release(c, c->alt_val);
        c->alt_key = NULL;
        c->alt_val = NULL;
        c->alt_cap = 0;
        CTRY(cudaMalloc(&c->alt_key, sizeof(int) * (size_t)cap));
        CTRY(cudaMalloc(&c->alt_val, sizeof(int) * (size_t)cap));
        c->alt_cap = cap;
    }
    /* stable LSD radix sort into the second buffers, then back */
    CTRY(cub::DeviceRadixSort::SortPairs(NULL, bytes, key, c->alt_key, val,
                                         c->alt_val, (int)n, 0, bits,
                                         c->stream));
    if (md_temp(c, bytes))
        return -1;
    bytes = c->temp_bytes;
    CTRY(cub::DeviceRadixSort::SortPairs(c->temp, bytes, key, c->alt_key, val,
                                         c->alt_val, (int)n, 0, bits,
                                         c->stream));
    if (md_launched(c, "cub::DeviceRadixSort::SortPairs"))
        return -1;
    CTRY(cudaMemcpyAsync(key, c->alt_key, sizeof(int) * (size_t)n,
                         cudaMemcpyDeviceToDevice, c->stream));
    CTRY(cudaMemcpyAsync(val, c->alt_val, sizeof(int) * (size_t)n,
                         cudaMemcpyDeviceToDevice, c->stream));
    return 0;
}

/* The reduction into a slot: chunks, then the tree; nothing waits.  The
 * chunk results of successive reductions share one buffer, which the
 * stream's order keeps apart. */
static int md_reduce(void *ctx, const double *x, long n, int is_max,
                     int slot)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    long nchunk = n > 0 ? (n + RC_K_SUM_CHUNK - 1) / RC_K_SUM_CHUNK : 0;
    int grid = 0;
    if (slot < 0 || slot >= RC_DMD_SLOTS)
        return md_fail(c, "reduction slot %d out of range", slot);
    if (md_scratch(c, (void **)&c->partial, &c->partial_cap, nchunk + 1,
                   sizeof(double), 64))
        return -1;
    if (nchunk > 0) {
        if (rc_launch_grid(nchunk, 1, RC_MD_MAX_GRID, &grid) != RC_OK)
            return md_fail(c, "bad reduction size %ld", n);
        rc_g_chunks<<<grid, RC_MD_CHUNK_BLOCK, 0, c->stream>>>(
            x, n, nchunk, c->partial, is_max);
        if (md_launched(c, "reduction chunks"))
            return -1;
    }
    rc_g_tree<<<1, RC_MD_TREE_BLOCK, 0, c->stream>>>(c->partial, nchunk,
                                                     c->d_slot + slot, is_max);
    return md_launched(c, "reduction tree");
}

/* A motion kernel, then its values' maxes (rc_dmd_ops.run_max): the
 * kernel and one reduction a value, queued. */
static int md_run_max(void *ctx, rc_dmd_kernel k, const rc_k_md *v,
                      long count, int slot0)
{
    int nval = rc_dmd_kernel_vals(k), j;
    if (nval == 0 || slot0 < 0 || slot0 + nval > RC_DMD_SLOTS)
        return md_fail((rc_cuda_md *)ctx, "run_max of %s into slot %d",
                       rc_dmd_kernel_name(k), slot0);
    if (count > 0 && md_run(ctx, k, v, count) != 0)
        return -1;
    for (j = 0; j < nval; ++j)
        if (md_reduce(ctx, v->red + (long)j * count, count, 1, slot0 + j) !=
            0)
            return -1;
    return 0;
}

/* The observables' sums (rc_dmd_ops.obs_sums): the observe kernel and a
 * reduction a term, queued. */
static int md_obs_sums(void *ctx, const rc_k_md *v, const int *whats, int nw,
                       int slot0)
{
    rc_k_md w = *v;
    int a;
    if (nw < 1 || slot0 < 0 || slot0 + nw > RC_DMD_SLOTS)
        return md_fail((rc_cuda_md *)ctx,
                       "observable sums of %d terms into slot %d", nw, slot0);
    for (a = 0; a < nw; ++a) {
        w.obs = whats[a];
        if ((v->n > 0 && md_run(ctx, RC_DMD_OBSERVE, &w, v->n) != 0) ||
            md_reduce(ctx, v->red, v->n, 0, slot0 + a) != 0)
            return -1;
    }
    return 0;
}

static int md_fetch(void *ctx, double *out, int count)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    if (count < 0 || count > RC_DMD_SLOTS)
        return md_fail(c, "fetch of %d slots", count);
    if (count == 0)
        return 0;
    CTRY(cudaMemcpyAsync(c->h_slot, c->d_slot, sizeof(double) * (size_t)count,
                         cudaMemcpyDeviceToHost, c->stream));
    CTRY(cudaStreamSynchronize(c->stream));
    memcpy(out, c->h_slot, sizeof(double) * (size_t)count);
    return 0;
}

/* tolerance 1e-12 of the problem's own scale: the dense tier's */
static int md_nnls_batch(void *ctx, int nprob, int mp, int kp, const int *m,
                         const double *B, const double *b, double *lam,
                         int *status)
{
    rc_cuda_md *c = (rc_cuda_md *)ctx;
    char why[sizeof c->why];
    if (rc_cuda_nnls_batch_on(c->nb, nprob, mp, kp, m, B, b, 1e-12, 0, lam,
                              status, NULL, why, sizeof why) != RC_OK)
        return md_fail(c, "%s", why);
    return 0;
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
    if (c->has_stream)
        cudaStreamSynchronize(c->stream);
    rc_cuda_nnls_ctx_free(c->nb);
    if (c->temp)
        cudaFree(c->temp);
    if (c->alt_key)
        cudaFree(c->alt_key);
    if (c->alt_val)
        cudaFree(c->alt_val);
    if (c->partial)
        cudaFree(c->partial);
    if (c->sel)
        cudaFree(c->sel);
    if (c->d_slot)
        cudaFree(c->d_slot);
    if (c->h_slot)
        cudaFreeHost(c->h_slot);
    if (c->h_total)
        cudaFreeHost(c->h_total);
    if (c->has_stream)
        cudaStreamDestroy(c->stream);
    cudaGetLastError(); /* a failure while freeing is not the next run's */
    free(c);
}

static const rc_dmd_ops rc_cuda_md_ops = {
    "cuda",  0 /* device memory */, md_alloc, md_release,     md_put,  md_get, md_copy,
    md_zero, md_run,   md_scan,        md_select,       md_sort_by_key,
    md_reduce,
    md_run_max, md_obs_sums, md_fetch, md_nnls_batch,   md_error, md_destroy};

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
    {
        const char *sc = getenv("RICOCHET_CUDA_SYNC_CHECK");
        c->sync_check = sc && sc[0] && strcmp(sc, "0") != 0;
    }
    e = cudaSetDevice(0);
    if (e == cudaSuccess &&
        (e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) ==
            cudaSuccess)
        c->has_stream = 1;
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&c->d_slot, sizeof(double) * RC_DMD_SLOTS);
    /* zeroed: a fetch of the step's totals reads slots that a step with
     * no contacts leaves unwritten (their values unused; initcheck) */
    if (e == cudaSuccess)
        e = cudaMemsetAsync(c->d_slot, 0, sizeof(double) * RC_DMD_SLOTS,
                            c->stream);
    if (e == cudaSuccess)
        e = cudaMallocHost((void **)&c->h_slot, sizeof(double) * RC_DMD_SLOTS);
    if (e == cudaSuccess)
        e = cudaMallocHost((void **)&c->h_total, sizeof(long));
    if (e != cudaSuccess) {
        if (why && why_size)
            snprintf(why, why_size, "%s:%d: setting up device 0 failed: %s",
                     __FILE__, __LINE__, cudaGetErrorString(e));
        md_destroy(c);
        return RC_ERR_DEVICE;
    }
    /* the medium tier's libraries on the same stream, created and warmed
     * now, before the first timed step */
    if (rc_cuda_nnls_ctx_create(&c->nb, (void *)c->stream, 1, why,
                                why_size) != RC_OK) {
        md_destroy(c);
        return RC_ERR_DEVICE;
    }
    *ops = &rc_cuda_md_ops;
    *ctx = c;
    return RC_OK;
}

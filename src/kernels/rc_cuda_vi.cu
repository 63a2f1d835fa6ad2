/* GPU launcher of the members of a built-in Lagrangian model (seed 001):
 * rc_cuda_vi.h.  A grid-stride kernel over the members of a chunk, each
 * run start to finish by rc_k_vi_member_thread: the step body of
 * rc_vi.h that src/host/model/vi.c calls for every single run, and the
 * row statistics of the per-member engine.  Members that record their
 * configuration (reference runs, and the members whose L2 error the
 * host computes against them) write q at their rows into a device copy
 * of their part of the call's record array, copied back per launch.
 *
 * The GPU's sin and cos are not glibc's (both within an ulp or two, not
 * the same bits), so a member's record agrees with the CPU's to the
 * integrator's sensitivity to round-off, not bit for bit
 * (tests/test_gpu_ensemble.c compares them with a tolerance). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "rc_cuda_vi.h"
#include "host/launch.h"

#include "rc_cuda_try.h"

/* Threads a block: the workspace is global, so occupancy is bounded by
 * registers alone.  The body's larger functions are not inlined (their
 * frames, a few kB each, are on the thread's stack); the device code
 * has no recursion and no indirect call (the expression callback is
 * host-only), so the call graph is static and the driver raises the
 * per-thread stack for the launch as needed (cuCtxSetLimit). */
#define RC_VI_BLOCK 64

__global__ void rc_g_vi_member_run(rc_k_vi *ws, rc_k_vi_member *d,
                                   rc_k_member_out *out, double *rec,
                                   long rec_base, long B)
{
    long j, stride = (long)blockDim.x * gridDim.x;
    for (j = (long)blockIdx.x * blockDim.x + threadIdx.x; j < B; j += stride)
        rc_k_vi_member_thread(&ws[j], d, out, rec, rec_base, j);
}

extern "C" rc_status rc_cuda_vi_run(const rc_k_vi_member *d,
                                    rc_k_member_out *out, double *rec,
                                    long count, rc_cuda_member_stats *stats,
                                    char *why, size_t why_size)
{
    rc_status st = RC_OK;
    rc_cuda_member_stats info;
    cudaDeviceProp prop;
    cudaFuncAttributes attr;
    rc_launch_chunking ch;
    rc_k_vi *d_ws = NULL;
    rc_k_vi_member *d_d = NULL;
    rc_k_member_out *d_out = NULL;
    double *d_rec = NULL;
    size_t freeb = 0, totalb = 0;
    long member_bytes, budget, k, max_rec = 0;
    int dev = 0, per_sm = 0;
    memset(&info, 0, sizeof info);
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (count < 0 || (count > 0 && (!d || !out))) {
        if (why && why_size)
            snprintf(why, why_size, "rc_cuda_vi_run: bad arguments");
        return RC_ERR_INVALID;
    }
    if (count == 0)
        return RC_OK;
    RC_CUDA_TRY(cudaGetDevice(&dev));
    RC_CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
    snprintf(info.device, sizeof info.device, "%s", prop.name);
    RC_CUDA_TRY(cudaFuncGetAttributes(&attr, rc_g_vi_member_run));
    RC_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, rc_g_vi_member_run, RC_VI_BLOCK, 0));
    if (per_sm < 1)
        per_sm = 1;
    info.registers = attr.numRegs;
    info.local_bytes = (long)attr.localSizeBytes;
    info.blocks_per_sm = per_sm;
    info.resident = (long)prop.multiProcessorCount * per_sm * RC_VI_BLOCK;
    info.local_scratch = 0;
    /* a member's configuration record (reference runs and the members
     * measured against them): the call's longest, counted for every
     * member of a launch (a call's records are of one length or close:
     * the shared references, or members with their own references on
     * the same rows) */
    for (k = 0; k < count; ++k) {
        long r = rc_k_vi_member_rec_doubles(&d[k]);
        max_rec = r > max_rec ? r : max_rec;
    }
    if (max_rec > 0 && !rec) {
        if (why && why_size)
            snprintf(why, why_size, "rc_cuda_vi_run: members record their "
                                    "configuration but no record array");
        return RC_ERR_INVALID;
    }
    member_bytes = (long)(sizeof(rc_k_vi) + sizeof(rc_k_vi_member) +
                          sizeof(rc_k_member_out)) +
                   max_rec * (long)sizeof(double);
    RC_CUDA_TRY(cudaMemGetInfo(&freeb, &totalb));
    budget = (long)(freeb / 2);
    if (rc_launch_chunks(count, member_bytes, budget, RC_CUDA_MEMBER_CHUNK,
                         &ch) != RC_OK) {
        if (why && why_size)
            snprintf(why, why_size,
                     "one member needs %ld bytes of device memory, more than "
                     "the %ld bytes available to it",
                     member_bytes, budget);
        st = RC_ERR_NOMEM;
        goto done;
    }
    info.block = RC_VI_BLOCK;
    rc_launch_grid(ch.size, RC_VI_BLOCK, prop.multiProcessorCount * per_sm,
                   &info.grid);
    info.chunks = ch.count;
    info.chunk_size = ch.size;
    info.waves = (ch.size + info.resident - 1) / info.resident;
    info.slots = 1;
    info.bytes_per_member = member_bytes;
    RC_CUDA_TRY(cudaMalloc((void **)&d_ws, (size_t)ch.size * sizeof *d_ws));
    RC_CUDA_TRY(cudaMalloc((void **)&d_d, (size_t)ch.size * sizeof *d_d));
    RC_CUDA_TRY(cudaMalloc((void **)&d_out, (size_t)ch.size * sizeof *d_out));
    /* the records' padding is never written, and it is copied back with
     * them (compute-sanitizer initcheck); likewise the tails of records
     * shorter than the call's longest */
    RC_CUDA_TRY(cudaMemset(d_out, 0, (size_t)ch.size * sizeof *d_out));
    if (max_rec > 0) {
        RC_CUDA_TRY(cudaMalloc((void **)&d_rec, (size_t)ch.size *
                                                    (size_t)max_rec *
                                                    sizeof *d_rec));
        RC_CUDA_TRY(cudaMemset(d_rec, 0, (size_t)ch.size * (size_t)max_rec *
                                             sizeof *d_rec));
    }
    for (k = 0; k < ch.count; ++k) {
        long first = 0, cnt = 0;
        int grid = 1;
        long lo = -1, hi = 0, j;
        rc_launch_chunk_range(&ch, k, &first, &cnt);
        /* the launch's part of the record array: [lo, hi) */
        for (j = first; j < first + cnt; ++j) {
            long r = rc_k_vi_member_rec_doubles(&d[j]);
            if (r > 0) {
                lo = lo < 0 || d[j].rec < lo ? d[j].rec : lo;
                hi = d[j].rec + r > hi ? d[j].rec + r : hi;
            }
        }
        if (lo >= 0 && hi - lo > ch.size * max_rec) {
            if (why && why_size)
                snprintf(why, why_size,
                         "rc_cuda_vi_run: the records of members %ld to %ld "
                         "are not laid out one after another",
                         first, first + cnt - 1);
            st = RC_ERR_INVALID;
            goto done;
        }
        rc_launch_grid(cnt, RC_VI_BLOCK, prop.multiProcessorCount * per_sm,
                       &grid);
        RC_CUDA_TRY(cudaMemcpy(d_d, d + first, (size_t)cnt * sizeof *d_d,
                               cudaMemcpyHostToDevice));
        /* zeroed as the CPU engine's calloc'd workspace */
        RC_CUDA_TRY(cudaMemset(d_ws, 0, (size_t)cnt * sizeof *d_ws));
        rc_g_vi_member_run<<<grid, RC_VI_BLOCK>>>(
            d_ws, d_d, d_out, lo >= 0 ? d_rec : NULL, lo >= 0 ? lo : 0, cnt);
        RC_CUDA_TRY(cudaGetLastError());
        RC_CUDA_TRY(cudaDeviceSynchronize());
        RC_CUDA_TRY(cudaMemcpy(out + first, d_out,
                               (size_t)cnt * sizeof *d_out,
                               cudaMemcpyDeviceToHost));
        if (lo >= 0)
            RC_CUDA_TRY(cudaMemcpy(rec + lo, d_rec,
                                   (size_t)(hi - lo) * sizeof *d_rec,
                                   cudaMemcpyDeviceToHost));
    }
done:
    cudaFree(d_ws);
    cudaFree(d_d);
    cudaFree(d_out);
    cudaFree(d_rec);
    if (stats)
        *stats = info;
    return st;
}

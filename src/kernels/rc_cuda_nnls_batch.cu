/* GPU launcher of the batched reflection NNLS: the bodies of
 * rc_nnls_batch.h (one thread per problem, or per matrix entry for the
 * masked system) around cuBLAS and cuSOLVER batched calls.
 *
 * Only launch plumbing lives here.  Every CUDA, cuBLAS and cuSOLVER call
 * is checked and turned into an rc_status with the file, line and call;
 * every resource is released on every path (one exit, `done`).
 *
 * Column-major conventions: a row-major mp x kp B is the column-major
 * kp x mp matrix B^T (leading dimension kp), so A = B B^T is
 * op(B^T)^T op(B^T): gemm(transa = T, transb = N, m = n = mp, k = kp).
 * A and the masked systems are symmetric, stored in full; the lower
 * triangle is what potrf(LOWER) reads, and a symmetric matrix reads the
 * same in either order.
 *
 * cuSOLVER limits respected (cuSOLVER documentation, potrfBatched /
 * potrsBatched):
 *   - Aarray / B are device arrays of device pointers (d_ptr below).
 *   - potrsBatched supports nrhs = 1 only: one right-hand side per
 *     problem, which is all the passive solve needs.
 *   - potrfBatched's infoArray (one int per matrix) is the only report
 *     of a non-positive-definite matrix; potrsBatched's single d_info
 *     reports only invalid arguments (read back each round, must be 0).
 *   - the triangle not named by uplo may be used as workspace: the
 *     masked systems are rebuilt in full before every factorisation, and
 *     only the factor's diagonal (L_jj, same place in either layout) is
 *     read back by the update body.
 *   - batchSize >= 1, n >= 0, lda >= max(1, n): calls are made only for
 *     nprob >= 1, with n = lda = ldb = mp >= 1; batches are cut into
 *     calls of RC_CUDA_NNLS_BATCH_CALL problems.
 *
 * Per round: build 8 mp^2 bytes written per problem, potrf mp^3/3 and
 * potrs 2 mp^2 flops per problem, the update O(m_s |P|) per problem, one
 * 8-byte copy back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "rc_cuda_nnls_batch.h"
#include "rc_nnls_batch.h"

#include "rc_cuda_try.h"

#define RC_CUBLAS_TRY(call)                                                  \
    do {                                                                     \
        cublasStatus_t e_ = (call);                                          \
        if (e_ != CUBLAS_STATUS_SUCCESS) {                                   \
            if (why && why_size)                                             \
                snprintf(why, why_size, "%s:%d: %s failed: %s", __FILE__,    \
                         __LINE__, #call, cublasGetStatusString(e_));        \
            st = RC_ERR_DEVICE;                                              \
            goto done;                                                       \
        }                                                                    \
    } while (0)

#define RC_CUSOLVER_TRY(call)                                                \
    do {                                                                     \
        cusolverStatus_t e_ = (call);                                        \
        if (e_ != CUSOLVER_STATUS_SUCCESS) {                                 \
            if (why && why_size)                                             \
                snprintf(why, why_size, "%s:%d: %s failed: %s (%d)",         \
                         __FILE__, __LINE__, #call,                          \
                         rc_cusolver_status_name(e_), (int)e_);              \
            st = RC_ERR_DEVICE;                                              \
            goto done;                                                       \
        }                                                                    \
    } while (0)

/* cuSOLVER has no status-to-string function. */
static const char *rc_cusolver_status_name(cusolverStatus_t e)
{
    switch (e) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "cuSOLVER error";
    }
}

/* Threads a block of the one-thread-per-problem kernels: problems branch
 * apart (different phases and sizes), so small blocks. */
#define RC_NB_BLOCK 128
/* Threads a block and most blocks per problem of the per-entry kernels
 * (grid-stride within a problem: 64 x 256 threads cover mp = 128 in one
 * pass, mp = 512 in 16). */
#define RC_NB_ENTRY_BLOCK 256
#define RC_NB_ENTRY_GRID_X 64
/* Most problems along gridDim.y (its hardware limit); grid-stride past. */
#define RC_NB_GRID_Y 65535

/* Start every problem; count the unfinished ones into *left. */
__global__ void rc_g_nnls_batch_init(rc_k_nnls_batch v, int *left)
{
    int s, mine = 0;
    for (s = blockIdx.x * blockDim.x + threadIdx.x; s < v.nprob;
         s += blockDim.x * gridDim.x)
        mine += rc_k_nnls_batch_init(v, s);
    if (mine)
        atomicAdd(left, mine);
}

/* One thread per entry (i, j) of problem s's masked system, column-major
 * (entry e = j mp + i, so consecutive threads write consecutive
 * addresses); problems along y. */
__global__ void rc_g_nnls_batch_build(rc_k_nnls_batch v)
{
    long n2 = (long)v.mp * v.mp, e;
    int s, i, j;
    for (s = blockIdx.y; s < v.nprob; s += gridDim.y)
        for (e = (long)blockIdx.x * blockDim.x + threadIdx.x; e < n2;
             e += (long)blockDim.x * gridDim.x) {
            j = (int)(e / v.mp);
            i = (int)(e - (long)j * v.mp);
            v.Ahat[(long)s * n2 + e] = rc_k_nnls_batch_entry(v, s, i, j);
        }
}

/* Make each Gram matrix exactly symmetric: entry (i, j), i < j (upper,
 * at j mp + i) := entry (j, i) (lower, at i mp + j).  Reads only the
 * lower triangle and writes only the upper, so threads do not race.
 * GEMM computes the two triangles independently and need not round them
 * alike; the bodies read both. */
__global__ void rc_g_nnls_batch_symmetrize(double *A, int mp, int nprob)
{
    long n2 = (long)mp * mp, e;
    int s, i, j;
    for (s = blockIdx.y; s < nprob; s += gridDim.y)
        for (e = (long)blockIdx.x * blockDim.x + threadIdx.x; e < n2;
             e += (long)blockDim.x * gridDim.x) {
            j = (int)(e / mp);
            i = (int)(e - (long)j * mp);
            if (i < j)
                A[(long)s * n2 + e] = A[(long)s * n2 + (long)i * mp + j];
        }
}

/* After the round's factor and solve: advance every problem; count the
 * unfinished ones into *left. */
__global__ void rc_g_nnls_batch_update(rc_k_nnls_batch v, int *left)
{
    int s, mine = 0;
    for (s = blockIdx.x * blockDim.x + threadIdx.x; s < v.nprob;
         s += blockDim.x * gridDim.x)
        mine += rc_k_nnls_batch_update(v, s);
    if (mine)
        atomicAdd(left, mine);
}

/* Past the round bound (unreachable): stop the unfinished problems. */
__global__ void rc_g_nnls_batch_abort(rc_k_nnls_batch v)
{
    int s;
    for (s = blockIdx.x * blockDim.x + threadIdx.x; s < v.nprob;
         s += blockDim.x * gridDim.x)
        rc_k_nnls_batch_abort(v, s);
}

extern "C" rc_status rc_cuda_nnls_batch(int nprob, int mp, int kp,
                                        const int *m, const double *B,
                                        const double *b, double tol,
                                        int max_iter, double *lam,
                                        int *status,
                                        rc_nnls_batch_counts *counts,
                                        char *why, size_t why_size)
{
    rc_status st = RC_OK;
    rc_k_nnls_batch v;
    rc_nnls_batch_counts c;
    cudaStream_t stream = NULL;
    cublasHandle_t blas = NULL;
    cusolverDnHandle_t solver = NULL;
    int has_stream = 0, has_blas = 0, has_solver = 0;
    /* device: B; A; A^ (then L); b, lam, w, z; thr, dmax, bmax; m;
     * col, plist; info, phase, status, enter, np, outer, inner, solves;
     * {unfinished count, potrs info}; pointers to each A^ then each z */
    double *d_B = NULL, *d_A = NULL, *d_Ahat = NULL, *d_vec = NULL,
           *d_sc = NULL;
    int *d_m = NULL, *d_ivec = NULL, *d_isc = NULL, *d_flags = NULL;
    double **d_ptr = NULL, **h_ptr = NULL;
    int *h_isc = NULL;
    int h_flags[2] = {0, 0};
    size_t n2, nv, nB;
    long rounds = 0, bound = 0, bs;
    int s, left = 0, ndev = 0, first, cnt, grid1, gx, gy;
    const double one = 1.0, zero = 0.0;
    dim3 egrid, eblock;

    memset(&c, 0, sizeof c);
    if (counts)
        memset(counts, 0, sizeof *counts);
    st = rc_nnls_batch_check(nprob, mp, kp, m, B, b, lam, status, why,
                             why_size);
    if (st != RC_OK || nprob == 0)
        return st;
    for (s = 0; s < nprob; ++s) {
        bs = rc_k_nnls_batch_round_bound(m[s], max_iter);
        if (bs > bound)
            bound = bs;
    }
    n2 = (size_t)mp * (size_t)mp;
    nv = (size_t)nprob * (size_t)mp;
    nB = nv * (size_t)kp;
    grid1 = (nprob + RC_NB_BLOCK - 1) / RC_NB_BLOCK;
    gx = (int)((n2 + RC_NB_ENTRY_BLOCK - 1) / RC_NB_ENTRY_BLOCK);
    if (gx > RC_NB_ENTRY_GRID_X)
        gx = RC_NB_ENTRY_GRID_X;
    gy = nprob < RC_NB_GRID_Y ? nprob : RC_NB_GRID_Y;
    egrid = dim3((unsigned)gx, (unsigned)gy, 1u);
    eblock = dim3(RC_NB_ENTRY_BLOCK, 1u, 1u);

    /* The device, the stream and the library handles: no device is an
     * error here, not a crash (cudaErrorNoDevice / InsufficientDriver). */
    RC_CUDA_TRY(cudaGetDeviceCount(&ndev));
    if (ndev < 1) {
        if (why && why_size)
            snprintf(why, why_size, "%s:%d: no CUDA device is present",
                     __FILE__, __LINE__);
        st = RC_ERR_DEVICE;
        goto done;
    }
    RC_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    has_stream = 1;
    RC_CUBLAS_TRY(cublasCreate(&blas));
    has_blas = 1;
    RC_CUBLAS_TRY(cublasSetStream(blas, stream));
    RC_CUSOLVER_TRY(cusolverDnCreate(&solver));
    has_solver = 1;
    RC_CUSOLVER_TRY(cusolverDnSetStream(solver, stream));

    RC_CUDA_TRY(cudaMalloc((void **)&d_B, nB * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_A, (size_t)nprob * n2 * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_Ahat,
                           (size_t)nprob * n2 * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_vec, 4 * nv * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_sc, 3 * (size_t)nprob * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_m, (size_t)nprob * sizeof(int)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_ivec, 2 * nv * sizeof(int)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_isc, 8 * (size_t)nprob * sizeof(int)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_flags, 2 * sizeof(int)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_ptr, 2 * (size_t)nprob * sizeof(double *)));
    h_ptr = (double **)malloc(2 * (size_t)nprob * sizeof(double *));
    h_isc = (int *)malloc(8 * (size_t)nprob * sizeof(int));
    if (!h_ptr || !h_isc) {
        if (why && why_size)
            snprintf(why, why_size, "nnls batch: out of host memory");
        st = RC_ERR_NOMEM;
        goto done;
    }

    /* The view: device pointers into the allocations above. */
    v.nprob = nprob;
    v.mp = mp;
    v.tol = tol;
    v.max_iter = max_iter;
    v.m = d_m;
    v.A = d_A;
    v.b = d_vec;
    v.lam = d_vec + nv;
    v.w = d_vec + 2 * nv;
    v.z = d_vec + 3 * nv;
    v.Ahat = d_Ahat;
    v.col = d_ivec;
    v.plist = d_ivec + nv;
    v.info = d_isc;
    v.phase = d_isc + nprob;
    v.status = d_isc + 2 * (size_t)nprob;
    v.enter = d_isc + 3 * (size_t)nprob;
    v.np = d_isc + 4 * (size_t)nprob;
    v.outer = d_isc + 5 * (size_t)nprob;
    v.inner = d_isc + 6 * (size_t)nprob;
    v.solves = d_isc + 7 * (size_t)nprob;
    v.thr = d_sc;
    v.dmax = d_sc + nprob;
    v.bmax = d_sc + 2 * (size_t)nprob;
    for (s = 0; s < nprob; ++s) {
        h_ptr[s] = d_Ahat + (size_t)s * n2;
        h_ptr[nprob + s] = v.z + (size_t)s * mp;
    }

    /* Inputs in; the int state zeroed (the bodies write before they
     * read; this keeps every byte defined). */
    RC_CUDA_TRY(cudaMemcpyAsync(d_B, B, nB * sizeof(double),
                                cudaMemcpyHostToDevice, stream));
    RC_CUDA_TRY(cudaMemcpyAsync(d_vec, b, nv * sizeof(double),
                                cudaMemcpyHostToDevice, stream));
    RC_CUDA_TRY(cudaMemcpyAsync(d_m, m, (size_t)nprob * sizeof(int),
                                cudaMemcpyHostToDevice, stream));
    RC_CUDA_TRY(cudaMemcpyAsync(d_ptr, h_ptr,
                                2 * (size_t)nprob * sizeof(double *),
                                cudaMemcpyHostToDevice, stream));
    RC_CUDA_TRY(cudaMemsetAsync(d_ivec, 0, 2 * nv * sizeof(int), stream));
    RC_CUDA_TRY(cudaMemsetAsync(d_isc, 0, 8 * (size_t)nprob * sizeof(int),
                                stream));

    /* A = B B^T, made exactly symmetric; then B is no longer needed. */
    for (first = 0; first < nprob; first += RC_CUDA_NNLS_BATCH_CALL) {
        cnt = nprob - first < RC_CUDA_NNLS_BATCH_CALL
                  ? nprob - first
                  : RC_CUDA_NNLS_BATCH_CALL;
        RC_CUBLAS_TRY(cublasDgemmStridedBatched(
            blas, CUBLAS_OP_T, CUBLAS_OP_N, mp, mp, kp, &one,
            d_B + (size_t)first * mp * kp, kp, (long long)mp * kp,
            d_B + (size_t)first * mp * kp, kp, (long long)mp * kp, &zero,
            d_A + (size_t)first * n2, mp, (long long)n2, cnt));
    }
    rc_g_nnls_batch_symmetrize<<<egrid, eblock, 0, stream>>>(d_A, mp, nprob);
    RC_CUDA_TRY(cudaGetLastError());
    RC_CUDA_TRY(cudaStreamSynchronize(stream));
    RC_CUDA_TRY(cudaFree(d_B));
    d_B = NULL;

    /* Start: the first entering columns (or finished problems). */
    RC_CUDA_TRY(cudaMemsetAsync(d_flags, 0, 2 * sizeof(int), stream));
    rc_g_nnls_batch_init<<<grid1, RC_NB_BLOCK, 0, stream>>>(v, d_flags);
    RC_CUDA_TRY(cudaGetLastError());
    RC_CUDA_TRY(cudaMemcpyAsync(h_flags, d_flags, 2 * sizeof(int),
                                cudaMemcpyDeviceToHost, stream));
    RC_CUDA_TRY(cudaStreamSynchronize(stream));
    left = h_flags[0];

    /* Rounds: every problem's masked system factored and solved. */
    while (left > 0) {
        if (rounds >= bound) { /* unreachable: see the bound */
            rc_g_nnls_batch_abort<<<grid1, RC_NB_BLOCK, 0, stream>>>(v);
            RC_CUDA_TRY(cudaGetLastError());
            if (why && why_size)
                snprintf(why, why_size,
                         "nnls batch: %d problems still unfinished after "
                         "their bound of %ld rounds",
                         left, bound);
            st = RC_ERR_NOT_CONVERGED;
            break;
        }
        RC_CUDA_TRY(cudaMemsetAsync(d_flags, 0, 2 * sizeof(int), stream));
        rc_g_nnls_batch_build<<<egrid, eblock, 0, stream>>>(v);
        RC_CUDA_TRY(cudaGetLastError());
        for (first = 0; first < nprob; first += RC_CUDA_NNLS_BATCH_CALL) {
            cnt = nprob - first < RC_CUDA_NNLS_BATCH_CALL
                      ? nprob - first
                      : RC_CUDA_NNLS_BATCH_CALL;
            RC_CUSOLVER_TRY(cusolverDnDpotrfBatched(
                solver, CUBLAS_FILL_MODE_LOWER, mp, d_ptr + first, mp,
                d_isc + first, cnt));
            RC_CUSOLVER_TRY(cusolverDnDpotrsBatched(
                solver, CUBLAS_FILL_MODE_LOWER, mp, 1, d_ptr + first, mp,
                d_ptr + nprob + first, mp, d_flags + 1, cnt));
        }
        rc_g_nnls_batch_update<<<grid1, RC_NB_BLOCK, 0, stream>>>(v, d_flags);
        RC_CUDA_TRY(cudaGetLastError());
        RC_CUDA_TRY(cudaMemcpyAsync(h_flags, d_flags, 2 * sizeof(int),
                                    cudaMemcpyDeviceToHost, stream));
        RC_CUDA_TRY(cudaStreamSynchronize(stream));
        ++rounds;
        if (h_flags[1] != 0) {
            if (why && why_size)
                snprintf(why, why_size,
                         "%s:%d: cusolverDnDpotrsBatched reported invalid "
                         "argument %d",
                         __FILE__, __LINE__, -h_flags[1]);
            st = RC_ERR_DEVICE;
            goto done;
        }
        left = h_flags[0];
    }

    /* Outputs back. */
    RC_CUDA_TRY(cudaMemcpyAsync(lam, v.lam, nv * sizeof(double),
                                cudaMemcpyDeviceToHost, stream));
    RC_CUDA_TRY(cudaMemcpyAsync(h_isc, d_isc, 8 * (size_t)nprob * sizeof(int),
                                cudaMemcpyDeviceToHost, stream));
    RC_CUDA_TRY(cudaStreamSynchronize(stream));
    c.rounds = rounds;
    for (s = 0; s < nprob; ++s) {
        int sst = h_isc[2 * (size_t)nprob + s];
        int outer = h_isc[5 * (size_t)nprob + s];
        int inner = h_isc[6 * (size_t)nprob + s];
        status[s] = sst;
        c.solves += h_isc[7 * (size_t)nprob + s];
        c.outer_total += outer;
        c.inner_total += inner;
        if (outer > c.outer_max)
            c.outer_max = outer;
        if (inner > c.inner_max)
            c.inner_max = inner;
        if (sst == RC_K_NB_CONVERGED)
            c.converged++;
        else if (sst == RC_K_NB_CAPPED)
            c.capped++;
        else
            c.breakdown++;
    }
    if (counts)
        *counts = c;

done:
    if (st != RC_OK && st != RC_ERR_NOT_CONVERGED)
        cudaGetLastError(); /* clear a non-sticky error for later calls */
    if (has_stream)
        cudaStreamSynchronize(stream); /* nothing in flight into memory
                                          freed below */
    if (has_solver)
        cusolverDnDestroy(solver);
    if (has_blas)
        cublasDestroy(blas);
    if (has_stream)
        cudaStreamDestroy(stream);
    cudaFree(d_B);
    cudaFree(d_A);
    cudaFree(d_Ahat);
    cudaFree(d_vec);
    cudaFree(d_sc);
    cudaFree(d_m);
    cudaFree(d_ivec);
    cudaFree(d_isc);
    cudaFree(d_flags);
    cudaFree(d_ptr);
    free(h_ptr);
    free(h_isc);
    if (st != RC_OK && st != RC_ERR_NOT_CONVERGED)
        cudaGetLastError();
    return st;
}

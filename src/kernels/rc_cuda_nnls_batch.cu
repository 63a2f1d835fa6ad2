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
 * 8-byte copy back.
 *
 * Set-up once: an engine keeps one rc_cuda_nnls_ctx (stream, handles,
 * grow-only buffers), because creating handles and cudaMalloc/cudaFree
 * (each cudaFree synchronises the device) on every reflection pass would
 * cost more than the batch itself.
 *
 * cuBLAS and cuSOLVER are loaded with dlopen when the first context is
 * made, not linked: linked, the dynamic loader maps and relocates them
 * (with cusparse and nvJitLink, which cuSOLVER needs) in every process,
 * and that alone made 262 MiB of resident memory in every run of a CUDA
 * build, CPU runs and `ricochet validate` included (issue 12's memory
 * target).  The ten entry points are resolved into rc_cuda_la, typed by
 * the toolkit's own declarations (decltype), so a signature that
 * changes between toolkit versions is a compile error, not a crash. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "rc_cuda_nnls_batch.h"
#include "rc_nnls_batch.h"

#include "rc_cuda_try.h"

/* The library functions this file calls, resolved by rc_cuda_la_load. */
static struct rc_cuda_la {
    decltype(&cublasCreate_v2) blas_create;
    decltype(&cublasDestroy_v2) blas_destroy;
    decltype(&cublasSetStream_v2) blas_set_stream;
    decltype(&cublasGetStatusString) blas_status_string;
    decltype(&cublasDgemmStridedBatched) dgemm_strided_batched;
    decltype(&cusolverDnCreate) solver_create;
    decltype(&cusolverDnDestroy) solver_destroy;
    decltype(&cusolverDnSetStream) solver_set_stream;
    decltype(&cusolverDnDpotrfBatched) dpotrf_batched;
    decltype(&cusolverDnDpotrsBatched) dpotrs_batched;
} rc_cuda_la;
static pthread_once_t rc_cuda_la_once = PTHREAD_ONCE_INIT;
static char rc_cuda_la_error[512]; /* empty once everything resolved */

/* The sonames the toolkit this was compiled with gives (the major
 * versions in its headers), tried first in the toolkit's library
 * directory that CMake found (RC_CUDA_LIBRARY_DIR), then wherever the
 * dynamic loader looks (LD_LIBRARY_PATH, the run path, ld.so.cache). */
#define RC_STR2(x) #x
#define RC_STR(x) RC_STR2(x)
#define RC_CUBLAS_SONAME "libcublas.so." RC_STR(CUBLAS_VER_MAJOR)
#define RC_CUSOLVER_SONAME "libcusolver.so." RC_STR(CUSOLVER_VER_MAJOR)

static void *rc_cuda_la_open(const char *soname)
{
    void *h = NULL;
#ifdef RC_CUDA_LIBRARY_DIR
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", RC_CUDA_LIBRARY_DIR, soname);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!h)
        h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        snprintf(rc_cuda_la_error, sizeof rc_cuda_la_error,
                 "cannot load %s (the CUDA toolkit's library, needed by the "
                 "GPU reflection tier): %s",
                 soname, dlerror());
    return h;
}

/* dlsym into a typed pointer; records the first symbol missing. */
template <typename F>
static void rc_cuda_la_sym(void *lib, const char *soname, const char *name,
                           F *out)
{
    void *f = lib ? dlsym(lib, name) : NULL;
    *out = (F)f;
    if (lib && !f && !rc_cuda_la_error[0])
        snprintf(rc_cuda_la_error, sizeof rc_cuda_la_error,
                 "%s has no symbol %s: %s", soname, name, dlerror());
}

static void rc_cuda_la_resolve(void)
{
    /* never closed: the handles live until the process ends, as a
     * linked library would */
    void *b = rc_cuda_la_open(RC_CUBLAS_SONAME);
    void *s = b ? rc_cuda_la_open(RC_CUSOLVER_SONAME) : NULL;
#define RC_LA_BLAS(field, name)                                              \
    rc_cuda_la_sym(b, RC_CUBLAS_SONAME, name, &rc_cuda_la.field)
#define RC_LA_SOLVER(field, name)                                            \
    rc_cuda_la_sym(s, RC_CUSOLVER_SONAME, name, &rc_cuda_la.field)
    RC_LA_BLAS(blas_create, "cublasCreate_v2");
    RC_LA_BLAS(blas_destroy, "cublasDestroy_v2");
    RC_LA_BLAS(blas_set_stream, "cublasSetStream_v2");
    RC_LA_BLAS(blas_status_string, "cublasGetStatusString");
    RC_LA_BLAS(dgemm_strided_batched, "cublasDgemmStridedBatched");
    RC_LA_SOLVER(solver_create, "cusolverDnCreate");
    RC_LA_SOLVER(solver_destroy, "cusolverDnDestroy");
    RC_LA_SOLVER(solver_set_stream, "cusolverDnSetStream");
    RC_LA_SOLVER(dpotrf_batched, "cusolverDnDpotrfBatched");
    RC_LA_SOLVER(dpotrs_batched, "cusolverDnDpotrsBatched");
#undef RC_LA_BLAS
#undef RC_LA_SOLVER
}

extern "C" rc_status rc_cuda_la_load(char *why, size_t why_size)
{
    pthread_once(&rc_cuda_la_once, rc_cuda_la_resolve);
    if (!rc_cuda_la_error[0])
        return RC_OK;
    if (why && why_size)
        snprintf(why, why_size, "%s", rc_cuda_la_error);
    return RC_ERR_DEVICE;
}

#define RC_CUBLAS_TRY(call)                                                  \
    do {                                                                     \
        cublasStatus_t e_ = (call);                                          \
        if (e_ != CUBLAS_STATUS_SUCCESS) {                                   \
            if (why && why_size)                                             \
                snprintf(why, why_size, "%s:%d: %s failed: %s", __FILE__,    \
                         __LINE__, #call, rc_cuda_la.blas_status_string(e_));        \
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

/* A buffer that only grows (contents not kept): device memory, or
 * pinned host memory with `host`. */
static cudaError_t rc_nb_grow(void **p, size_t *cap, size_t bytes, int host)
{
    cudaError_t e;
    if (bytes <= *cap && *p)
        return cudaSuccess;
    if (*p)
        host ? cudaFreeHost(*p) : cudaFree(*p);
    *p = NULL;
    *cap = 0;
    e = host ? cudaMallocHost(p, bytes + bytes / 4 + 256)
             : cudaMalloc(p, bytes + bytes / 4 + 256);
    if (e == cudaSuccess)
        *cap = bytes + bytes / 4 + 256;
    return e;
}

/* Device: B; A; A^ (then L); b, lam, w, z; thr, dmax, bmax; m; col,
 * plist; info, phase, status, enter, np, outer, inner, solves;
 * {unfinished count, potrs info}; pointers to each A^ then each z.
 * Pinned host: the pointers, the int state read back, the flags. */
enum { NB_B, NB_A, NB_AHAT, NB_VEC, NB_SC, NB_M, NB_IVEC, NB_ISC, NB_FLAGS,
       NB_PTR, NB_NDEV };
enum { NB_HPTR, NB_HISC, NB_HFLAGS, NB_NHOST };

struct rc_cuda_nnls_ctx {
    cudaStream_t stream;
    int own_stream, has_blas, has_solver;
    cublasHandle_t blas;
    cusolverDnHandle_t solver;
    void *d[NB_NDEV];
    size_t dcap[NB_NDEV];
    void *h[NB_NHOST];
    size_t hcap[NB_NHOST];
};

extern "C" void rc_cuda_nnls_ctx_free(rc_cuda_nnls_ctx *c)
{
    int k;
    if (!c)
        return;
    if (c->stream || c->own_stream)
        cudaStreamSynchronize(c->stream); /* nothing in flight into
                                             memory freed below */
    if (c->has_solver)
        rc_cuda_la.solver_destroy(c->solver);
    if (c->has_blas)
        rc_cuda_la.blas_destroy(c->blas);
    if (c->own_stream)
        cudaStreamDestroy(c->stream);
    for (k = 0; k < NB_NDEV; ++k)
        if (c->d[k])
            cudaFree(c->d[k]);
    for (k = 0; k < NB_NHOST; ++k)
        if (c->h[k])
            cudaFreeHost(c->h[k]);
    free(c);
    cudaGetLastError(); /* a failure while freeing is not the caller's */
}

extern "C" rc_status rc_cuda_nnls_ctx_create(rc_cuda_nnls_ctx **out,
                                             void *stream, int warm,
                                             char *why, size_t why_size)
{
    rc_status st = RC_OK;
    int ndev = 0;
    rc_cuda_nnls_ctx *c = (rc_cuda_nnls_ctx *)calloc(1, sizeof *c);
    *out = NULL;
    if (!c) {
        if (why && why_size)
            snprintf(why, why_size, "nnls batch: out of host memory");
        return RC_ERR_NOMEM;
    }
    /* no device is an error here, not a crash (cudaErrorNoDevice /
     * InsufficientDriver) */
    RC_CUDA_TRY(cudaGetDeviceCount(&ndev));
    if (ndev < 1) {
        if (why && why_size)
            snprintf(why, why_size, "%s:%d: no CUDA device is present",
                     __FILE__, __LINE__);
        st = RC_ERR_DEVICE;
        goto done;
    }
    if (stream) {
        c->stream = (cudaStream_t)stream;
    } else {
        RC_CUDA_TRY(cudaStreamCreateWithFlags(&c->stream,
                                              cudaStreamNonBlocking));
        c->own_stream = 1;
    }
    st = rc_cuda_la_load(why, why_size);
    if (st != RC_OK)
        goto done;
    RC_CUBLAS_TRY(rc_cuda_la.blas_create(&c->blas));
    c->has_blas = 1;
    RC_CUBLAS_TRY(rc_cuda_la.blas_set_stream(c->blas, c->stream));
    RC_CUSOLVER_TRY(rc_cuda_la.solver_create(&c->solver));
    c->has_solver = 1;
    RC_CUSOLVER_TRY(rc_cuda_la.solver_set_stream(c->solver, c->stream));
    if (warm) {
        /* min (2 lam + 2 (-1))^2 ... one column, one contact: every call
         * of a batch (gemm, build, potrf, potrs, update) runs once */
        int m1 = 1, s1 = 0;
        double B1 = 1.0, b1 = -1.0, lam1 = 0.0;
        st = rc_cuda_nnls_batch_on(c, 1, 1, 1, &m1, &B1, &b1, 1e-12, 0,
                                   &lam1, &s1, NULL, why, why_size);
        if (st != RC_OK)
            goto done;
    }
done:
    if (st != RC_OK) {
        cudaGetLastError(); /* clear a non-sticky error for later calls */
        rc_cuda_nnls_ctx_free(c);
        return st;
    }
    *out = c;
    return RC_OK;
}

extern "C" rc_status rc_cuda_nnls_batch_on(rc_cuda_nnls_ctx *ctx, int nprob,
                                           int mp, int kp, const int *m,
                                           const double *B, const double *b,
                                           double tol, int max_iter,
                                           double *lam, int *status,
                                           rc_nnls_batch_counts *counts,
                                           char *why, size_t why_size)
{
    rc_status st = RC_OK;
    rc_k_nnls_batch v;
    rc_nnls_batch_counts c;
    cudaStream_t stream = ctx->stream;
    double *d_B, *d_A, *d_Ahat, *d_vec, *d_sc;
    int *d_m, *d_ivec, *d_isc, *d_flags, *h_isc, *h_flags;
    double **d_ptr, **h_ptr;
    size_t n2, nv, nB;
    long rounds = 0, bound = 0, bs;
    int s, left = 0, first, cnt, grid1, gx, gy;
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

    /* The buffers, grown to this batch (a no-op once they are large
     * enough: no cudaMalloc, no implicit synchronisation). */
#define NB_DEV(k, bytes) RC_CUDA_TRY(rc_nb_grow(&ctx->d[k], &ctx->dcap[k], (bytes), 0))
#define NB_HOST(k, bytes) RC_CUDA_TRY(rc_nb_grow(&ctx->h[k], &ctx->hcap[k], (bytes), 1))
    NB_DEV(NB_B, nB * sizeof(double));
    NB_DEV(NB_A, (size_t)nprob * n2 * sizeof(double));
    NB_DEV(NB_AHAT, (size_t)nprob * n2 * sizeof(double));
    NB_DEV(NB_VEC, 4 * nv * sizeof(double));
    NB_DEV(NB_SC, 3 * (size_t)nprob * sizeof(double));
    NB_DEV(NB_M, (size_t)nprob * sizeof(int));
    NB_DEV(NB_IVEC, 2 * nv * sizeof(int));
    NB_DEV(NB_ISC, 8 * (size_t)nprob * sizeof(int));
    NB_DEV(NB_FLAGS, 2 * sizeof(int));
    NB_DEV(NB_PTR, 2 * (size_t)nprob * sizeof(double *));
    NB_HOST(NB_HPTR, 2 * (size_t)nprob * sizeof(double *));
    NB_HOST(NB_HISC, 8 * (size_t)nprob * sizeof(int));
    NB_HOST(NB_HFLAGS, 2 * sizeof(int));
#undef NB_DEV
#undef NB_HOST
    d_B = (double *)ctx->d[NB_B];
    d_A = (double *)ctx->d[NB_A];
    d_Ahat = (double *)ctx->d[NB_AHAT];
    d_vec = (double *)ctx->d[NB_VEC];
    d_sc = (double *)ctx->d[NB_SC];
    d_m = (int *)ctx->d[NB_M];
    d_ivec = (int *)ctx->d[NB_IVEC];
    d_isc = (int *)ctx->d[NB_ISC];
    d_flags = (int *)ctx->d[NB_FLAGS];
    d_ptr = (double **)ctx->d[NB_PTR];
    h_ptr = (double **)ctx->h[NB_HPTR];
    h_isc = (int *)ctx->h[NB_HISC];
    h_flags = (int *)ctx->h[NB_HFLAGS];

    /* The view: device pointers into the buffers above. */
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
    /* the pinned pointer table may still be in a copy of the previous
     * batch: every call ends with a stream synchronisation, so it is not */
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

    /* A = B B^T, made exactly symmetric. */
    for (first = 0; first < nprob; first += RC_CUDA_NNLS_BATCH_CALL) {
        cnt = nprob - first < RC_CUDA_NNLS_BATCH_CALL
                  ? nprob - first
                  : RC_CUDA_NNLS_BATCH_CALL;
        RC_CUBLAS_TRY(rc_cuda_la.dgemm_strided_batched(
            ctx->blas, CUBLAS_OP_T, CUBLAS_OP_N, mp, mp, kp, &one,
            d_B + (size_t)first * mp * kp, kp, (long long)mp * kp,
            d_B + (size_t)first * mp * kp, kp, (long long)mp * kp, &zero,
            d_A + (size_t)first * n2, mp, (long long)n2, cnt));
    }
    rc_g_nnls_batch_symmetrize<<<egrid, eblock, 0, stream>>>(d_A, mp, nprob);
    RC_CUDA_TRY(cudaGetLastError());

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
            RC_CUSOLVER_TRY(rc_cuda_la.dpotrf_batched(
                ctx->solver, CUBLAS_FILL_MODE_LOWER, mp, d_ptr + first, mp,
                d_isc + first, cnt));
            RC_CUSOLVER_TRY(rc_cuda_la.dpotrs_batched(
                ctx->solver, CUBLAS_FILL_MODE_LOWER, mp, 1, d_ptr + first,
                mp, d_ptr + nprob + first, mp, d_flags + 1, cnt));
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
    if (st != RC_OK && st != RC_ERR_NOT_CONVERGED) {
        /* nothing may still run on the buffers the next call reuses */
        cudaStreamSynchronize(stream);
        cudaGetLastError(); /* clear a non-sticky error for later calls */
    }
    return st;
}

extern "C" rc_status rc_cuda_nnls_batch(int nprob, int mp, int kp,
                                        const int *m, const double *B,
                                        const double *b, double tol,
                                        int max_iter, double *lam,
                                        int *status,
                                        rc_nnls_batch_counts *counts,
                                        char *why, size_t why_size)
{
    rc_cuda_nnls_ctx *c = NULL;
    rc_status st;
    if (counts)
        memset(counts, 0, sizeof *counts);
    st = rc_nnls_batch_check(nprob, mp, kp, m, B, b, lam, status, why,
                             why_size);
    if (st != RC_OK || nprob == 0)
        return st;
    st = rc_cuda_nnls_ctx_create(&c, NULL, 0, why, why_size);
    if (st != RC_OK)
        return st;
    st = rc_cuda_nnls_batch_on(c, nprob, mp, kp, m, B, b, tol, max_iter, lam,
                               status, counts, why, why_size);
    rc_cuda_nnls_ctx_free(c);
    return st;
}

/* CUDA launchers for the shared kernel bodies.
 *
 * Only launch plumbing lives here: the physics is the `rc_k_*` bodies of
 * src/kernels/ headers that the CPU loops also call.  Every CUDA call is
 * checked and turned into an rc_status with the file, line and call. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "host/backend.h"
#include "ricochet/run.h"
#include "rc_cuda.h"
#include "rc_nnls.h"
#include "rc_potential.h"

#include "rc_cuda_try.h"

/* One thread per particle, grid-stride: grad_i = dV/dq_i. */
__global__ void rc_g_gradient(rc_k_model m, const double *q, double *grad)
{
    int i;
    for (i = blockIdx.x * blockDim.x + threadIdx.x; i < m.n;
         i += blockDim.x * gridDim.x)
        rc_k_gradient_particle(m, q, i, grad + (long)i * m.dim);
}

/* One thread per small dense problem: the reflection NNLS of many
 * independent contact groups (ensemble members, islands).  Problem b has
 * its m x m Gram matrix at A + b*m*m, right-hand side at rhs + b*m, and
 * writes lambda + b*m and status[b]; work/iwork are per-thread slices. */
__global__ void rc_g_nnls_batched(int nprob, int m, const double *A,
                                  const double *rhs, double *lambda,
                                  double *work, int *iwork, int *status)
{
    int b;
    for (b = blockIdx.x * blockDim.x + threadIdx.x; b < nprob;
         b += blockDim.x * gridDim.x) {
        rc_k_nnls_result r = rc_k_nnls_gram(
            m, A + (long)b * m * m, rhs + (long)b * m, lambda + (long)b * m,
            work + (long)b * rc_k_nnls_work_doubles(m),
            iwork + (long)b * rc_k_nnls_work_ints(m), 0, 1e-12);
        status[b] = r.status;
    }
}

/* The rule of src/host/backend.h names these codes by number. */
static_assert(cudaSuccess == RC_CUDA_SUCCESS, "cudaSuccess");
static_assert(cudaErrorNoDevice == RC_CUDA_ERROR_NO_DEVICE,
              "cudaErrorNoDevice");

extern "C" void rc_cuda_versions_impl_(int *driver, int *runtime)
{
    if (cudaDriverGetVersion(driver) != cudaSuccess)
        *driver = 0;
    if (cudaRuntimeGetVersion(runtime) != cudaSuccess)
        *runtime = 0;
    cudaGetLastError();
}

extern "C" rc_status rc_cuda_devices_impl_(rc_device_info *out, int max,
                                           int *count, char *why,
                                           size_t why_size)
{
    int n = 0, k, drv = 0, rt = 0, pci;
    rc_status st = RC_OK;
    cudaError_t e = cudaGetDeviceCount(&n);
    *count = 0;
    cudaGetLastError(); /* clear the sticky error for later calls */
    rc_cuda_versions_impl_(&drv, &rt);
    pci = rc_nvidia_pci_devices();
    switch (rc_cuda_classify((int)e, drv, e == cudaSuccess ? n : 0, pci)) {
    case RC_CUDA_NO_DEVICE:
        if (why && why_size) {
            if (e == cudaSuccess)
                snprintf(why, why_size, "no CUDA device is present");
            else if (drv == 0)
                snprintf(why, why_size,
                         "no usable CUDA device (no NVIDIA driver is "
                         "installed and no NVIDIA GPU is on the PCI bus; "
                         "runtime CUDA %d.%d)",
                         rt / 1000, rt % 1000 / 10);
            else
                snprintf(why, why_size, "no usable CUDA device (%s)",
                         cudaGetErrorString(e));
        }
        return RC_OK;
    case RC_CUDA_UNUSABLE:
        if (why && why_size) {
            if (drv == 0)
                snprintf(why, why_size,
                         "%d NVIDIA GPU(s) on the PCI bus but no NVIDIA "
                         "driver is loaded (cudaGetDeviceCount: %s; "
                         "runtime CUDA %d.%d)",
                         pci, cudaGetErrorString(e), rt / 1000,
                         rt % 1000 / 10);
            else
                snprintf(why, why_size,
                         "the CUDA driver cannot be used: "
                         "cudaGetDeviceCount: %s (driver supports CUDA "
                         "%d.%d, this build's runtime is CUDA %d.%d; the "
                         "CUDA 13 runtime needs an R580 or newer driver)",
                         cudaGetErrorString(e), drv / 1000,
                         drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
        }
        return RC_ERR_DEVICE;
    case RC_CUDA_USABLE:
        break;
    }
    for (k = 0; k < n && k < max && out; ++k) {
        cudaDeviceProp prop;
        RC_CUDA_TRY(cudaGetDeviceProperties(&prop, k));
        snprintf(out[k].name, sizeof out[k].name, "%s", prop.name);
        out[k].memory_gib = (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0);
        out[k].cc_major = prop.major;
        out[k].cc_minor = prop.minor;
    }
    *count = n;
done:
    return st;
}

extern "C" rc_status rc_cuda_gradient(const rc_k_model m, const double *q,
                                      double *grad, char *why,
                                      size_t why_size)
{
    rc_status st = RC_OK;
    rc_k_model dm = m;
    double *d_q = NULL, *d_grad = NULL, *d_mass = NULL, *d_inv = NULL,
           *d_rad = NULL;
    rc_k_potential *d_pot = NULL;
    size_t nq = (size_t)m.n * (size_t)m.dim;
    int threads = 128, blocks;
    if (m.n == 0)
        return RC_OK;
    blocks = (m.n + threads - 1) / threads;
    RC_CUDA_TRY(cudaMalloc((void **)&d_q, nq * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_grad, nq * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_mass, (size_t)m.n * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_inv, (size_t)m.n * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_rad, (size_t)m.n * sizeof(double)));
    if (m.npot > 0)
        RC_CUDA_TRY(cudaMalloc((void **)&d_pot,
                               (size_t)m.npot * sizeof(rc_k_potential)));
    RC_CUDA_TRY(cudaMemcpy(d_q, q, nq * sizeof(double), cudaMemcpyHostToDevice));
    RC_CUDA_TRY(cudaMemcpy(d_mass, m.mass, (size_t)m.n * sizeof(double),
                           cudaMemcpyHostToDevice));
    RC_CUDA_TRY(cudaMemcpy(d_inv, m.inv_mass, (size_t)m.n * sizeof(double),
                           cudaMemcpyHostToDevice));
    RC_CUDA_TRY(cudaMemcpy(d_rad, m.radius, (size_t)m.n * sizeof(double),
                           cudaMemcpyHostToDevice));
    if (m.npot > 0)
        RC_CUDA_TRY(cudaMemcpy(d_pot, m.pot,
                               (size_t)m.npot * sizeof(rc_k_potential),
                               cudaMemcpyHostToDevice));
    dm.mass = d_mass;
    dm.inv_mass = d_inv;
    dm.radius = d_rad;
    dm.pot = d_pot;
    rc_g_gradient<<<blocks, threads>>>(dm, d_q, d_grad);
    RC_CUDA_TRY(cudaGetLastError());
    RC_CUDA_TRY(cudaDeviceSynchronize());
    RC_CUDA_TRY(cudaMemcpy(grad, d_grad, nq * sizeof(double),
                           cudaMemcpyDeviceToHost));
done:
    cudaFree(d_q);
    cudaFree(d_grad);
    cudaFree(d_mass);
    cudaFree(d_inv);
    cudaFree(d_rad);
    cudaFree(d_pot);
    return st;
}

extern "C" rc_status rc_cuda_nnls_batched(int nprob, int m, const double *A,
                                          const double *rhs, double *lambda,
                                          int *status, char *why,
                                          size_t why_size)
{
    rc_status st = RC_OK;
    double *d_A = NULL, *d_rhs = NULL, *d_lam = NULL, *d_work = NULL;
    int *d_iwork = NULL, *d_status = NULL;
    size_t nA = (size_t)nprob * m * m, nv = (size_t)nprob * m;
    int threads = 64, blocks;
    if (nprob <= 0 || m <= 0)
        return RC_OK;
    blocks = (nprob + threads - 1) / threads;
    RC_CUDA_TRY(cudaMalloc((void **)&d_A, nA * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_rhs, nv * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_lam, nv * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_work, (size_t)nprob *
                                                 rc_k_nnls_work_doubles(m) *
                                                 sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_iwork, (size_t)nprob *
                                                  rc_k_nnls_work_ints(m) *
                                                  sizeof(int)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_status, (size_t)nprob * sizeof(int)));
    RC_CUDA_TRY(cudaMemcpy(d_A, A, nA * sizeof(double), cudaMemcpyHostToDevice));
    RC_CUDA_TRY(cudaMemcpy(d_rhs, rhs, nv * sizeof(double),
                           cudaMemcpyHostToDevice));
    rc_g_nnls_batched<<<blocks, threads>>>(nprob, m, d_A, d_rhs, d_lam,
                                           d_work, d_iwork, d_status);
    RC_CUDA_TRY(cudaGetLastError());
    RC_CUDA_TRY(cudaDeviceSynchronize());
    RC_CUDA_TRY(cudaMemcpy(lambda, d_lam, nv * sizeof(double),
                           cudaMemcpyDeviceToHost));
    RC_CUDA_TRY(cudaMemcpy(status, d_status, (size_t)nprob * sizeof(int),
                           cudaMemcpyDeviceToHost));
done:
    cudaFree(d_A);
    cudaFree(d_rhs);
    cudaFree(d_lam);
    cudaFree(d_work);
    cudaFree(d_iwork);
    cudaFree(d_status);
    return st;
}

/* Host launchers of the CUDA backend (defined in rc_cuda.cu).  Only
 * declared when the backend is compiled in (RICOCHET_HAVE_CUDA). */
#ifndef RC_CUDA_H
#define RC_CUDA_H

#include <stddef.h>

#include "ricochet/status.h"
#include "rc_potential.h"

#ifdef __cplusplus
extern "C" {
#endif

/* grad = dV/dq for every particle, computed on device 0 by the same body
 * as rc_cpu_gradient.  `why` receives the failing call on error. */
rc_status rc_cuda_gradient(const rc_k_model m, const double *q, double *grad,
                           char *why, size_t why_size);

/* nprob independent reflection NNLS problems of size m (rc_nnls.h), one
 * GPU thread each: A is nprob m x m Gram matrices back to back, rhs and
 * lambda nprob m-vectors, status nprob ints (0 converged). */
rc_status rc_cuda_nnls_batched(int nprob, int m, const double *A,
                               const double *rhs, double *lambda,
                               int *status, char *why, size_t why_size);

#ifdef __cplusplus
}
#endif
#endif

/* GPU launcher of the batched reflection NNLS (rc_cuda_nnls_batch.cu).
 * Defined only when the CUDA backend is compiled in
 * (RICOCHET_HAVE_CUDA); callers guard their calls with it. */
#ifndef RC_CUDA_NNLS_BATCH_H
#define RC_CUDA_NNLS_BATCH_H

#include <stddef.h>

#include "ricochet/status.h"
#include "host/md/nnls_batch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Problems per cuBLAS / cuSOLVER batched call (larger batches are cut
 * into calls of this many; no documented limit is relied on). */
#define RC_CUDA_NNLS_BATCH_CALL 32768

/* Load cuBLAS and cuSOLVER (dlopen, once per process; later calls
 * return the first call's result) and resolve the functions this tier
 * calls.  rc_cuda_nnls_ctx_create calls it; it needs no device.
 * RC_OK, or RC_ERR_DEVICE with the library or symbol that is missing
 * and the loader's reason in `why`. */
rc_status rc_cuda_la_load(char *why, size_t why_size);

/* The library state of the GPU tier, made once per engine: a stream
 * (the caller's, or its own), the cuBLAS and cuSOLVER handles bound to
 * it, and device and pinned host buffers that only grow, so a batch
 * costs no allocation, no handle creation and no implicit device
 * synchronisation once the buffers have reached the largest batch.  The
 * stream is a cudaStream_t passed as a pointer (this header is plain
 * C); NULL makes the context create (and later destroy) its own
 * non-blocking stream.  `warm`: run one 1 x 1 problem through every
 * library call, so that the first real batch does not pay for loading
 * the libraries' kernels. */
typedef struct rc_cuda_nnls_ctx rc_cuda_nnls_ctx;

rc_status rc_cuda_nnls_ctx_create(rc_cuda_nnls_ctx **out, void *stream,
                                  int warm, char *why, size_t why_size);
void rc_cuda_nnls_ctx_free(rc_cuda_nnls_ctx *c);

/* The CPU launcher's contract (host/md/nnls_batch.h: same arguments,
 * layout, per-problem statuses and counts) on the context's device and
 * stream: A = B B^T by cublasDgemmStridedBatched, then rounds of: build
 * every masked system (one thread per matrix entry),
 * cusolverDnDpotrfBatched and cusolverDnDpotrsBatched on all nprob
 * mp x mp systems, and the per-problem update (one thread per problem),
 * until no problem is unfinished (one 8-byte read-back per round).  Host
 * arrays are borrowed and ordinary (pageable) memory; the call returns
 * when the outputs are in them.
 *
 * Device memory (kept by the context): nprob (mp kp + 2 mp^2 + 4 mp)
 * doubles + nprob (2 mp + 9) ints + 2 nprob pointers.
 *
 * Returns RC_OK; RC_ERR_INVALID (bad arguments); RC_ERR_DEVICE with the
 * file, line and failing CUDA / cuBLAS / cuSOLVER call in `why` (out of
 * device memory, a launch or library failure: outputs not valid);
 * RC_ERR_NOT_CONVERGED if the batch ran past its round bound
 * (unreachable; the unfinished problems get status 2, other outputs
 * valid).  counts may be NULL. */
rc_status rc_cuda_nnls_batch_on(rc_cuda_nnls_ctx *c, int nprob, int mp,
                                int kp, const int *m, const double *B,
                                const double *b, double tol, int max_iter,
                                double *lam, int *status,
                                rc_nnls_batch_counts *counts, char *why,
                                size_t why_size);

/* One batch on a context of its own (created, used, freed): for a
 * single call; an engine keeps a context. */
rc_status rc_cuda_nnls_batch(int nprob, int mp, int kp, const int *m,
                             const double *B, const double *b, double tol,
                             int max_iter, double *lam, int *status,
                             rc_nnls_batch_counts *counts, char *why,
                             size_t why_size);

#ifdef __cplusplus
}
#endif
#endif

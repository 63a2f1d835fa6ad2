/* The one file that knows about __host__ __device__.
 *
 * Every physics body in src/kernels/ is a `RC_HD static inline` function:
 * plain C11 when compiled by the host compiler, a host+device function
 * when compiled by nvcc.  Keep bodies to the C subset nvcc accepts: no
 * VLAs, no compound literals, no designated initializers, explicit casts
 * from void *. */
#ifndef RC_HD_H
#define RC_HD_H

#if defined(__CUDACC__)
#define RC_HD __host__ __device__
#else
#define RC_HD
#endif

#endif

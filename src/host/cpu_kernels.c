/* CPU launchers: OpenMP loops over particles that call the shared
 * kernel bodies of src/kernels/.  Each item writes only its own outputs
 * and sums are taken serially in index order, so results are
 * bit-identical for any thread count.  Small systems stay serial: a
 * parallel region costs more than it saves there. */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "system_impl.h"

#define RC_CPU_PARALLEL_MIN 64 /* particles below which loops run serially */

static int rc_cpu_threads(int requested, int n)
{
    if (n < RC_CPU_PARALLEL_MIN)
        return 1;
#ifdef _OPENMP
    return requested > 0 ? requested : omp_get_max_threads();
#else
    (void)requested;
    return 1;
#endif
}

void rc_cpu_gradient(const rc_k_model m, const double *q, double *grad,
                     int threads)
{
    int i;
    int nt = rc_cpu_threads(threads, m.n);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (i = 0; i < m.n; ++i)
        rc_k_gradient_particle(m, q, i, grad + (long)i * m.dim);
}

double rc_cpu_energy(const rc_k_model m, const double *q, double *share,
                     int threads)
{
    int i;
    double e = 0.0;
    int nt = rc_cpu_threads(threads, m.n);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (i = 0; i < m.n; ++i)
        share[i] = rc_k_energy_particle(m, q, i);
    for (i = 0; i < m.n; ++i)
        e += share[i];
    return e;
}

void rc_cpu_hessian_vector(const rc_k_model m, const double *q,
                           const double *u, double *out, int threads)
{
    int i;
    int nt = rc_cpu_threads(threads, m.n);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (i = 0; i < m.n; ++i)
        rc_k_hessian_vector_particle(m, q, u, i, out + (long)i * m.dim);
}

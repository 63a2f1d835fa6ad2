/* CPU launchers: OpenMP loops over particles that call the shared
 * kernel bodies of src/kernels/.  Each item writes only its own outputs
 * and sums are taken serially in index order, so results are
 * bit-identical for any thread count.  Small systems stay serial: a
 * parallel region costs more than it saves there.
 *
 * Serial means not entering OpenMP at all.  A construct with a false
 * `if` clause still calls GOMP_parallel, and inside an ensemble's own
 * parallel loop that starts and frees a nested team of one for every
 * gradient: in the cart-pendulum sweep's per-member reference runs
 * (examples/cart_pendulum_sweep.yaml) that took 37 % of the run in
 * GOMP_parallel, futex wake-ups and malloc_consolidate (perf record -e
 * cpu-clock -g).  So the loops below run the plain loop when one thread
 * would, and inside an enclosing parallel region (whose threads already
 * own the cores) they run one thread. */
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
    if (omp_in_parallel())
        return 1;
    return requested > 0 ? requested : omp_get_max_threads();
#else
    (void)requested;
    return 1;
#endif
}

/* for (i = 0; i < n; ++i) body, on nt threads when nt > 1 (static
 * schedule), else as a plain loop */
#define RC_CPU_FOR(nt, i, n, body)                                           \
    do {                                                                     \
        if ((nt) > 1) {                                                      \
            _Pragma("omp parallel for schedule(static) num_threads(nt)")     \
            for (i = 0; i < (n); ++i)                                        \
                body;                                                        \
        } else {                                                             \
            for (i = 0; i < (n); ++i)                                        \
                body;                                                        \
        }                                                                    \
    } while (0)

void rc_cpu_gradient(const rc_k_model m, const double *q, double *grad,
                     int threads)
{
    int i;
    int nt = rc_cpu_threads(threads, m.n);
    RC_CPU_FOR(nt, i, m.n,
               rc_k_gradient_particle(m, q, i, grad + (long)i * m.dim));
}

double rc_cpu_energy(const rc_k_model m, const double *q, double *share,
                     int threads)
{
    int i;
    double e = 0.0;
    int nt = rc_cpu_threads(threads, m.n);
    RC_CPU_FOR(nt, i, m.n, share[i] = rc_k_energy_particle(m, q, i));
    for (i = 0; i < m.n; ++i)
        e += share[i];
    return e;
}

void rc_cpu_hessian_vector(const rc_k_model m, const double *q,
                           const double *u, double *out, int threads)
{
    int i;
    int nt = rc_cpu_threads(threads, m.n);
    RC_CPU_FOR(nt, i, m.n,
               rc_k_hessian_vector_particle(m, q, u, i,
                                            out + (long)i * m.dim));
}

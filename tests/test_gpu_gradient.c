/* GPU vs CPU: the potential gradient computed by the CUDA launcher
 * (rc_cuda_gradient, src/kernels/rc_cuda.cu) against the CPU loop, both
 * calling the same body rc_k_gradient_particle.  Skips (77) when the
 * CUDA backend is not compiled in or no device is present. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ricochet/ricochet.h"
#include "host/system_impl.h"
#include "rc_test.h"

#ifdef RICOCHET_HAVE_CUDA
#include "kernels/rc_cuda.h"
#endif

int main(void)
{
#ifndef RICOCHET_HAVE_CUDA
    printf("test_gpu_gradient: skipped (CUDA backend not compiled in)\n");
    return 77;
#else
    int gate, i, k, n = 300, worst = -1;
    char why[300] = "";
    rc_system *sys = NULL;
    rc_potential_desc pd;
    double *cpu, *gpu, err;
    unsigned long long rng = 12345;
    if ((gate = rc_test_gpu_gate("test_gpu_gradient")) != 0)
        return gate;
    rc_system_create(3, &sys);
    for (i = 0; i < n; ++i) {
        double q[3], p[3] = {0.0, 0.0, 0.0};
        /* a jittered cubic lattice, spacing 1.1 sigma: no pair at r ~ 0 */
        q[0] = 1.1 * (i % 7) + 0.1 * rc_test_uniform(&rng);
        q[1] = 1.1 * ((i / 7) % 7) + 0.1 * rc_test_uniform(&rng);
        q[2] = 1.1 * (i / 49) + 0.1 * rc_test_uniform(&rng);
        rc_system_add_particle(sys, 1.0 + 0.5 * rc_test_uniform(&rng), 0.5, q, p,
                               NULL);
    }
    rc_potential_desc_init(&pd, RC_POT_LENNARD_JONES);
    pd.epsilon = 1.0;
    pd.sigma = 1.0;
    pd.cutoff = 2.5;
    rc_system_add_potential(sys, &pd);
    rc_potential_desc_init(&pd, RC_POT_GRAVITY);
    pd.vector[2] = -9.8;
    rc_system_add_potential(sys, &pd);
    rc_potential_desc_init(&pd, RC_POT_SEXTIC_WELL);
    pd.strength = 1e-3;
    rc_system_add_potential(sys, &pd);
    cpu = (double *)malloc(sizeof(double) * 3 * n);
    gpu = (double *)malloc(sizeof(double) * 3 * n);
    rc_system_potential(sys, sys->q, NULL, cpu);
    RC_CHECK(rc_cuda_gradient(rc_system_model_(sys), sys->q, gpu, why,
                              sizeof why) == RC_OK,
             "rc_cuda_gradient failed: %s", why);
    /* Same body, same operation order; only nvcc's multiply-add fusion
     * (off in RICOCHET_STRICT_FP builds) changes the rounding: a few ulp
     * per term over ~100 neighbours, so 1e-12 of the largest component. */
    err = rc_test_max_rel(3 * n, gpu, cpu, 1e-300, &worst);
    RC_CHECK(err <= 1e-12, "max relative difference %.3e at index %d", err,
             worst);
    printf("test_gpu_gradient: %d particles, max rel diff %.3e (index %d)\n",
           n, err, worst);
    for (k = 0; k < 3 * n; ++k)
        RC_CHECK(isfinite(gpu[k]), "non-finite GPU gradient at %d", k);
    free(cpu);
    free(gpu);
    rc_system_free(sys);
    return rc_test_finish("test_gpu_gradient");
#endif
}

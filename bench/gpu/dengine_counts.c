/* What the engine asks of a launcher per step: each kernel's
 * items, the scans, reductions, sorts and copies with their sizes, the
 * launches and the host synchronisations.  The engine runs through its
 * CPU launcher (the GPU's orchestration, so the same calls),
 * on the hard-sphere fluid of examples/hard_sphere_fluid.yaml (fcc,
 * eta 0.3, kT 1, dt 0.002, periodic; the example equilibrates 0.5 time
 * units, 250 steps: the fcc start has no close pairs and no collisions
 * for its first steps); after `warm` steps it counts
 * `steps` steps and prints the per-step means as JSON.  These are the
 * inputs of the performance model (bench/gpu/perf_model.py,
 * docs/gpu_performance_model.md): counts measured from the code, not
 * times.
 * usage: bench_dengine_counts [N (4 k^3)] [warm] [steps] [dt] [eta]
 *        [exact (1: exact collision times, as the example's default)] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/dengine.h"
#include "rc_test.h"
#include "rc_md_test.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 256000;
    int warm = argc > 2 ? atoi(argv[2]) : 250;
    int steps = argc > 3 ? atoi(argv[3]) : 20;
    double dt = argc > 4 ? atof(argv[4]) : 0.002;
    double eta = argc > 5 ? atof(argv[5]) : 0.3;
    int exact = argc > 6 ? atoi(argv[6]) : 0;
    setup s = {"hard-sphere fluid", 3, 0, RC_LATTICE_FCC, 1, 0, 100, 64, 0,
               0.3, 0.0, 0.002, 0, 0, 0, 0, 0, 0};
    rc_md md;
    rc_dmd g, before;
    const rc_dmd_ops *ops;
    void *ctx;
    long coll0 = 0, rounds0 = 0, k;
    int i;
    s.n = (int)n;
    s.dt = dt;
    s.eta = eta;
    s.exact = exact;
    memset(&md, 0, sizeof md);
    if (n < 4 || steps < 1 || make(&s, &md, NULL) != 0)
        return 2;
    if (rc_dmd_cpu_launcher(&ops, &ctx) != RC_OK ||
        rc_dmd_init(&g, &md, ops, ctx) != RC_OK) {
        fprintf(stderr, "dengine_counts: %s\n", md.msg);
        return 1;
    }
    before = g;
    for (i = 0; i < warm + steps; ++i) {
        if (i == warm) {
            before = g;
            coll0 = md.total.collisions;
            rounds0 = 0;
        }
        if (rc_dmd_step(&g) != RC_OK) {
            fprintf(stderr, "dengine_counts: step %d: %s\n", i, md.msg);
            return 1;
        }
        if (i >= warm)
            rounds0 += md.step.rounds;
    }
#define PER(field) ((double)(g.field - before.field) / steps)
    printf("{\n  \"what\": \"engine, per step, through the CPU "
           "launcher (bench/gpu/dengine_counts.c)\",\n");
    printf("  \"particles\": %ld, \"packing_fraction\": %g, \"dt\": %g, "
           "\"warm_steps\": %d, \"steps\": %d,\n",
           n, eta, dt, warm, steps);
    printf("  \"collisions\": %.1f, \"rounds\": %.2f, "
           "\"candidate_builds\": %.3f, \"host_tier_islands\": %.3f,\n",
           (double)(md.total.collisions - coll0) / steps,
           (double)rounds0 / steps, PER(rebuilds), PER(host_islands));
    printf("  \"candidates\": %ld, \"contacts_last_step\": %ld,\n",
           g.v.ncand, g.v.ncon);
    printf("  \"launches\": %.2f, \"host_syncs\": %.2f,\n", PER(launches),
           PER(syncs));
    printf("  \"scans\": %.2f, \"scan_items\": %.1f, \"reduces\": %.2f, "
           "\"reduce_items\": %.1f, \"sorts\": %.2f, \"sort_items\": %.1f,\n",
           PER(scans), PER(scan_items), PER(reduces), PER(reduce_items),
           PER(sorts), PER(sort_items));
    printf("  \"copies\": %.2f, \"copy_bytes\": %.1f, \"zeros\": %.2f, "
           "\"zero_bytes\": %.1f, \"puts\": %.2f, \"put_bytes\": %.1f, "
           "\"gets\": %.2f, \"get_bytes\": %.1f, \"fetches\": %.2f, "
           "\"batches\": %.2f,\n",
           PER(copies), PER(copy_bytes), PER(zeros), PER(zero_bytes),
           PER(puts), PER(put_bytes), PER(gets), PER(get_bytes),
           PER(fetches), PER(batches));
    printf("  \"kernels\": {");
    for (k = 0; k < RC_DMD_NKERNELS; ++k)
        printf("%s\n    \"%s\": {\"calls\": %.2f, \"items\": %.1f}",
               k ? "," : "", rc_dmd_kernel_name((rc_dmd_kernel)k),
               PER(kernel_calls[k]), PER(kernel_items[k]));
    printf("\n  }\n}\n");
#undef PER
    rc_dmd_free(&g);
    rc_md_free(&md);
    return 0;
}

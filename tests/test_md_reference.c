/* The large-system engine (src/host/md/dengine.c on the CPU launcher, cell
 * lists and islands) against
 * the CPU reference path: the dense small-system GVI of src/kernels/
 * rc_gvi.h, which sees every sphere pair and every wall as one constraint
 * term (O(n^2), dense NNLS over the whole extended set).
 *
 * Spheres in a walled box (no periodic axis: the dense path has walls but
 * no periodic images), with and without gravity, run side by side with
 * the same tolerances eps_g and eps_v.  Both implement Algorithm 1 with
 * the refinements R1–R3; they differ in the order of their sums (sparse
 * normals against dense columns), so the trajectories agree to round-off
 * amplified by the collisions: positions within 1e-9 after 200 steps,
 * the same number of reflections. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/dengine.h"
#include "host/md/engine.h"
#include "host/md/setup.h"
#include "rc_test.h"
#include "ricochet/system.h"

static void compare(const char *what, int dim, int n, double eta, double g,
                    int steps)
{
    rc_k_box box;
    rc_md md;
    rc_dmd eng;
    rc_md_params par;
    rc_system *sys = NULL;
    rc_integrator_desc id;
    rc_constraint_desc cd;
    rc_potential_desc pd;
    int per[3] = {0, 0, 0}, i, k, s, ok = 1;
    double *q = (double *)malloc(sizeof(double) * (size_t)(n * dim));
    double *p = (double *)malloc(sizeof(double) * (size_t)(n * dim));
    double *qd = (double *)malloc(sizeof(double) * (size_t)(n * dim));
    double *m = (double *)malloc(sizeof(double) * (size_t)n);
    double *r = (double *)malloc(sizeof(double) * (size_t)n);
    double worst = 0.0, lscale = 0.0;
    long refl_dense = 0;
    char msg[300];
    rc_diagnostics dg;
    memset(&md, 0, sizeof md);
    memset(&eng, 0, sizeof eng);
    for (i = 0; i < n; ++i) {
        m[i] = 1.0 + 0.25 * (i % 4);
        r[i] = 0.5;
    }
    if (rc_md_box_for_packing(dim, n, r, eta, per, &box) != 0 ||
        rc_md_place(RC_LATTICE_RANDOM, &box, n, r, 11, q, msg, sizeof msg) !=
            0) {
        RC_CHECK(0, "%s: set-up: %s", what, msg);
        goto done;
    }
    rc_md_maxwell(dim, n, m, 1.0, 12, p);
    memset(&par, 0, sizeof par);
    par.dt = 0.01;
    par.gravity[dim - 1] = -g;
    par.max_passes = 100;
    par.dense_max = 64;
    par.pgs_tol = 1e-13;
    par.pgs_max_iter = 100000;
    par.threads = 1;
    if (rc_md_init(&md, &box, n, q, p, m, r, &par) != RC_OK ||
        rc_dmd_init_cpu(&eng, &md) != RC_OK) {
        RC_CHECK(0, "%s: engine: %s", what, md.msg);
        goto done;
    }

    /* the reference: every pair, every wall as a constraint term */
    rc_system_create(dim, &sys);
    for (i = 0; i < n; ++i)
        rc_system_add_particle(sys, m[i], r[i], q + i * dim, p + i * dim,
                               NULL);
    if (g != 0.0) {
        rc_potential_desc_init(&pd, RC_POT_GRAVITY);
        pd.vector[dim - 1] = -g;
        rc_system_add_potential(sys, &pd);
    }
    rc_constraint_desc_init(&cd, RC_CON_NON_OVERLAP);
    cd.i = RC_ALL;
    rc_system_add_constraint(sys, &cd);
    for (k = 0; k < dim; ++k) {
        rc_constraint_desc_init(&cd, RC_CON_WALL);
        cd.i = RC_ALL;
        cd.normal[k] = 1.0;
        cd.offset = 0.0;
        rc_system_add_constraint(sys, &cd);
        rc_constraint_desc_init(&cd, RC_CON_WALL);
        cd.i = RC_ALL;
        cd.normal[k] = -1.0;
        cd.offset = -box.L[k];
        rc_system_add_constraint(sys, &cd);
    }
    rc_integrator_desc_init(&id);
    id.method = RC_METHOD_GVI;
    id.dt = par.dt;
    id.eps_g = md.eps_g; /* the same tolerances: the same contact sets */
    id.eps_v = md.eps_v;
    if (rc_system_set_integrator(sys, &id) != RC_OK) {
        RC_CHECK(0, "%s: reference: %s", what, rc_system_message(sys));
        goto done;
    }
    for (s = 0; s < steps && ok; ++s) {
        ok = rc_dmd_step(&eng) == RC_OK && rc_system_step(sys, 1) == RC_OK;
        if (!ok)
            RC_CHECK(0, "%s: step %d failed: engine '%s', reference '%s'",
                     what, s, md.msg, rc_system_message(sys));
    }
    if (!ok || rc_dmd_sync(&eng) != RC_OK)
        goto done;
    rc_system_get_state(sys, qd, NULL);
    rc_system_diagnostics(sys, &dg);
    refl_dense = dg.reflections_total;
    for (i = 0; i < n * dim; ++i) {
        worst = fmax(worst, fabs(qd[i] - md.q[i]));
        lscale = fmax(lscale, fabs(qd[i]));
    }
    printf("test_md_reference: %s: %d spheres, %d steps, %ld collisions + "
           "%ld wall hits (engine), %ld reflection passes (reference), "
           "max |dq| %.3e\n",
           what, n, steps, md.total.collisions, md.total.wall_collisions,
           refl_dense, worst);
    /* round-off (1e-16 relative) amplified by each collision's
     * sensitivity over ~100 collisions of a dilute gas: 1e-9 of the box */
    RC_CHECK(worst <= 1e-9 * lscale,
             "%s: positions differ by %.3e from the reference path", what,
             worst);
    RC_CHECK(md.total.collisions + md.total.wall_collisions > 20,
             "%s: only %ld collisions: the comparison needs impacts", what,
             md.total.collisions + md.total.wall_collisions);
done:
    rc_dmd_free(&eng);
    rc_md_free(&md);
    rc_system_free(sys);
    free(q);
    free(p);
    free(qd);
    free(m);
    free(r);
}

int main(void)
{
    compare("3-D gas", 3, 24, 0.15, 0.0, 200);
    compare("2-D gas", 2, 30, 0.25, 0.0, 200);
    compare("3-D under gravity", 3, 16, 0.1, 1.0, 200);
    return rc_test_finish("test_md_reference");
}

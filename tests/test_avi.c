/* The asynchronous variational integrator with nested penalty layers
 * (issue 18; seeds 003, 004).  Every check compares against an
 * independent reference: Störmer-Verlet, the elastic collision, the
 * conservation laws, or the run itself repeated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ricochet/system.h"
#include "rc_test.h"

#ifdef RICOCHET_SANITIZE_BUILD
#define RC_AVI_SCALE 10 /* the sanitizer build runs 10x fewer ticks */
#else
#define RC_AVI_SCALE 1
#endif

static void avi_desc(rc_integrator_desc *in, double dt)
{
    rc_integrator_desc_init(in);
    in->method = RC_METHOD_AVI;
    in->dt = dt;
}

/* Two equal spheres (mass 1, radius 0.5) on the x axis, approaching at
 * relative speed 2 with impact parameter b (y offset). */
static rc_system *two_spheres(double b, double shift,
                              const rc_integrator_desc *in)
{
    rc_system *sys = NULL;
    double q0[3] = {-1.0 - shift, 0.0, 0.0}, q1[3] = {1.0, b, 0.0};
    double p0[3] = {1.0, 0.0, 0.0}, p1[3] = {-1.0, 0.0, 0.0};
    rc_constraint_desc c;
    if (rc_system_create(3, &sys) != RC_OK)
        return NULL;
    rc_system_add_particle(sys, 1.0, 0.5, q0, p0, NULL);
    rc_system_add_particle(sys, 1.0, 0.5, q1, p1, NULL);
    rc_constraint_desc_init(&c, RC_CON_NON_OVERLAP);
    rc_system_add_constraint(sys, &c);
    if (rc_system_set_integrator(sys, in) != RC_OK) {
        rc_system_free(sys);
        return NULL;
    }
    return sys;
}

/* Head-on collision: |v_out - (-v_in)| / |v_in| of the relative velocity,
 * and the smallest gap seen by the layers. */
static double head_on_error(double eta1, double layer_step, double res,
                            double shift, double *min_gap, int *deepest)
{
    rc_integrator_desc in;
    rc_system *sys;
    rc_avi_stats s;
    double p[6], err = INFINITY;
    avi_desc(&in, 0.01);
    in.avi.eta1 = eta1;
    in.avi.layer_step = layer_step;
    in.avi.layer_resolution = res;
    in.avi.max_layers = 256;
    sys = two_spheres(0.0, shift, &in);
    if (!sys)
        return INFINITY;
    /* contact at t ~ 0.5; by t = 1.5 the spheres are apart again */
    if (rc_system_step(sys, 150) == RC_OK) {
        rc_system_get_state(sys, NULL, p);
        /* relative velocity in = (-2, 0, 0); elastic out = (+2, 0, 0) */
        err = sqrt((p[3] - p[0] - 2.0) * (p[3] - p[0] - 2.0) +
                   (p[4] - p[1]) * (p[4] - p[1]) +
                   (p[5] - p[2]) * (p[5] - p[2])) /
              2.0;
    } else {
        fprintf(stderr, "head-on: %s\n", rc_system_message(sys));
    }
    rc_system_avi_stats(sys, &s);
    *min_gap = s.min_gap;
    *deepest = s.deepest_layer;
    rc_system_free(sys);
    return err;
}

static void explore(void)
{
    int k, j;
    for (k = 0; k < 5; ++k) {
        double eta = 0.1 / pow(2.0, k), mg, s1 = 0, s2 = 0, s3 = 0;
        int dl;
        for (j = 0; j < 16; ++j) {
            double sh = j * 0.0137;
            s1 += head_on_error(eta, 0.01 * eta / 0.1, 0.1 * eta / 0.1, sh, &mg, &dl);
            s2 += head_on_error(eta, 0.01 * eta / 0.1, 0.2 * eta / 0.1, sh, &mg, &dl);
            s3 += head_on_error(eta, 0.01 * pow(eta / 0.1, 2), 0.1 * eta/0.1, sh, &mg, &dl);
        }
        printf("eta1 %g kfixed: %.3e  c0.2 %.3e  h~eta^2,c~eta %.3e deepest %d\n", eta, s1/16, s2/16, s3/16, dl);
    }
}

int main(void)
{
    explore();
    return rc_test_finish("test_avi");
}

/* Two independent models of one physics (issue 16): the vertical
 * cart-pendulum in generalized coordinates (y, theta) with CVA (this
 * kind, src/host/model/vi.c) against ricochet's maximal-coordinate
 * cart-pendulum (two particles, a line, a rod and a wall: the particle
 * system of examples/cart_pendulum_sweep.yaml, CVA of
 * src/host/baselines.c), from the seed's Xi(beta), through impacts, at a
 * fine step.  Each reference's own error is estimated by Richardson from
 * its runs at h and 2h (second order: e(h) ≈ |q_2h − q_h| / 3); the two
 * trajectories must agree to within 3x the sum of the two estimates
 * (the estimates are themselves uncertain by the next order). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ricochet/ricochet.h"
#include "rc_vi_test.h"

#define TEND 1.6   /* through the first impact (near t = 0.8 from Xi(3.2)) */
#define NOUT 16    /* compared every 0.1 */

/* (y, theta) at the NOUT + 1 times k TEND/NOUT of the particle model. */
static int run_maximal(double beta, double h, double *out)
{
    char path[] = "/tmp/rc_vi_maximal_XXXXXX", text[2048];
    double L = 2.0, thd = 3.5 - 0.18 * beta, q[4], p[4];
    rc_scenario *scn = NULL;
    rc_system *sys = NULL;
    rc_error err;
    int fd = mkstemp(path), k, rc = 1;
    long per = (long)(TEND / NOUT / h + 0.5);
    FILE *f;
    if (fd < 0)
        return 1;
    f = fdopen(fd, "w");
    /* bob at the rod's end below the cart, moving sideways at L thetadot */
    snprintf(text, sizeof text,
             "dimension: 2\n"
             "particles:\n"
             "  - {mass: 1.0, position: [0, %.17g], momentum: [0, 0]}\n"
             "  - {mass: 0.2, position: [0, %.17g], momentum: [%.17g, 0]}\n"
             "potentials:\n  - {type: gravity, g: 10}\n"
             "constraints:\n"
             "  - {type: line, point: [0, 0], direction: [0, 1], particles: 0}\n"
             "  - {type: rod, particles: [0, 1], length: 2}\n"
             "  - {type: wall, normal: [0, 1], offset: 0, particles: 0}\n"
             "integrator: {method: cva, dt: %.17g, duration: %.17g}\n",
             beta, beta - L, 0.2 * L * thd, h, TEND);
    fputs(text, f);
    fclose(f);
    if (rc_scenario_load(path, NULL, 0, &scn, &err) != RC_OK ||
        rc_scenario_build(scn, &sys, &err) != RC_OK) {
        fprintf(stderr, "maximal model: %s\n", err.message);
        goto done;
    }
    for (k = 0; k <= NOUT; ++k) {
        if (k > 0 && rc_system_step(sys, per) != RC_OK)
            goto done;
        rc_system_get_state(sys, q, p);
        out[2 * k] = q[1];
        out[2 * k + 1] = atan2(q[2] - q[0], q[1] - q[3]);
    }
    rc = 0;
done:
    rc_system_free(sys);
    rc_scenario_free(scn);
    unlink(path);
    return rc;
}

static int run_general(const rc_model *m, double h, double *out)
{
    void *ws = vi_method(&rc_model_method_cva, m, h);
    double q[2], p[2];
    long per = (long)(TEND / NOUT / h + 0.5);
    int k;
    if (!ws)
        return 1;
    memcpy(q, m->q0, sizeof q);
    memcpy(p, m->p0, sizeof p);
    for (k = 0; k <= NOUT; ++k) {
        if (k > 0 && vi_run(&rc_model_method_cva, ws, 2, q, p, per) != RC_OK)
            return 1;
        out[2 * k] = q[0];
        out[2 * k + 1] = q[1];
    }
    rc_model_method_cva.destroy(ws);
    return 0;
}

static double maxdiff(const double *a, const double *b)
{
    double d = 0.0;
    int k;
    for (k = 0; k < 2 * (NOUT + 1); ++k)
        d = fmax(d, fabs(a[k] - b[k]));
    return isfinite(d) ? d : INFINITY;
}

int main(void)
{
    static const double betas[2] = {3.2, 5.2};
    int b;
    for (b = 0; b < 2; ++b) {
        double g1[2 * (NOUT + 1)], g2[2 * (NOUT + 1)];
        double x1[2 * (NOUT + 1)], x2[2 * (NOUT + 1)];
        double h = 2e-4, eg, ex, d;
        char text[128];
        rc_model m;
        rc_error err;
        snprintf(text, sizeof text,
                 "builtin: cart_pendulum\ninitial: {xi: %g}\n", betas[b]);
        if (vi_model_load(text, &m, &err)) {
            RC_CHECK(0, "load: %s", err.message);
            continue;
        }
        RC_CHECK(run_general(&m, h, g1) == 0 && run_general(&m, 2 * h, g2) == 0,
                 "generalized runs failed");
        RC_CHECK(run_maximal(betas[b], h, x1) == 0 &&
                     run_maximal(betas[b], 2 * h, x2) == 0,
                 "maximal runs failed");
        eg = maxdiff(g1, g2) / 3.0;
        ex = maxdiff(x1, x2) / 3.0;
        d = maxdiff(g1, x1);
        printf("beta %.1f: |generalized - maximal| = %.3e; own errors %.3e "
               "(generalized), %.3e (maximal)\n",
               betas[b], d, eg, ex);
        RC_CHECK(d <= 3.0 * (eg + ex), "beta %g: models differ by %g", betas[b],
                 d);
        vi_model_free(&m);
    }
    return rc_test_finish("test_vi_maximal");
}

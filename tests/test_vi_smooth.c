/* The smooth variational integrators of seed 001 §3 (sva, svb, svc,
 * vi-midpoint) on the nonseparable cart-pendulum without its ground and
 * the double pendulum without its wall:
 *   a. each is second order: the error at T = 1 against an RK4 solution
 *      of Hamilton's equations written here independently (h = 1e-4)
 *      falls 3.5-4.5x per halving of h, on both models;
 *   b. each is symplectic: the Jacobian of one step (central differences)
 *      satisfies PhiᵀJPhi = J to 1e-10;
 *   c. along a smooth run, the spread of H falls ~4x per halving of h,
 *      the spread of the truncated modified Hamiltonian is smaller than
 *      H's and falls faster (the order the seed states: 8x for SVC's
 *      O(h³) truncation, 16x for SVA's O(h⁴) one);
 *   d. a Newton solve that cannot converge within newton_max_iter fails
 *      the step with RC_ERR_NOT_CONVERGED and a message, leaving the
 *      state of the last completed step. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rc_vi_test.h"

static const char *dp_smooth =
    "builtin: double_pendulum\n"
    "constraints: []\n"
    "initial: {q: [1.0, 0.5], qdot: [0.3, -0.8]}\n";

static const char *cart_smooth =
    "builtin: cart_pendulum\n"
    "constraints: []\n"
    "initial: {q: [1.0, 0.5], qdot: [0.3, -0.8]}\n";

/* Hamilton's equations of the cart-pendulum (m1 = 1, m2 = 0.2, L = 2,
 * g = 10), written from seed 001 §5.1, not from the library's body. */
static void cart_rhs(const double *z, double *dz)
{
    double m1 = 1.0, m2 = 0.2, L = 2.0, g = 10.0;
    double s = sin(z[1]), c = cos(z[1]);
    double a = m1 + m2, b = m2 * L * s, d = m2 * L * L, det = a * d - b * b;
    double yd = (d * z[2] - b * z[3]) / det, td = (a * z[3] - b * z[2]) / det;
    dz[0] = yd;
    dz[1] = td;
    dz[2] = -(m1 + m2) * g;
    dz[3] = m2 * L * c * yd * td - m2 * g * L * s;
}

/* Hamilton's equations of the double pendulum (m1 = m2 = 1, l1 = l2 = 1,
 * g = 10), written from the Lagrangian in src/kernels/rc_lagrangian.h's
 * comment, not from its body. */
static void dp_rhs(const double *z, double *dz)
{
    double g = 10.0, c = cos(z[0] - z[1]), s = sin(z[0] - z[1]);
    double a = 2.0, b = c, d = 1.0, det = a * d - b * b;
    double t1 = (d * z[2] - b * z[3]) / det, t2 = (a * z[3] - b * z[2]) / det;
    dz[0] = t1;
    dz[1] = t2;
    dz[2] = -s * t1 * t2 - 2.0 * g * sin(z[0]);
    dz[3] = s * t1 * t2 - g * sin(z[1]);
}

static void (*rhs)(const double *z, double *dz) = cart_rhs;

static void rk4(double *z, double h, long n)
{
    double k1[4], k2[4], k3[4], k4[4], t[4];
    long s;
    int i;
    for (s = 0; s < n; ++s) {
        rhs(z, k1);
        for (i = 0; i < 4; ++i)
            t[i] = z[i] + 0.5 * h * k1[i];
        rhs(t, k2);
        for (i = 0; i < 4; ++i)
            t[i] = z[i] + 0.5 * h * k2[i];
        rhs(t, k3);
        for (i = 0; i < 4; ++i)
            t[i] = z[i] + h * k3[i];
        rhs(t, k4);
        for (i = 0; i < 4; ++i)
            z[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
}

static const rc_model_method *const smooth[] = {
    &rc_model_method_sva, &rc_model_method_svb, &rc_model_method_svc,
    &rc_model_method_vi_midpoint};

/* a. order 2 */
static void check_order(const rc_model *m)
{
    double ref[4];
    int k, j;
    memcpy(ref, m->q0, 2 * sizeof(double));
    memcpy(ref + 2, m->p0, 2 * sizeof(double));
    /* RK4 at h = 1e-4: error ~ (1e-4)^4 x O(10), far below the VIs' */
    rk4(ref, 1e-4, 10000);
    for (k = 0; k < 4; ++k) {
        double e[3];
        for (j = 0; j < 3; ++j) {
            double h = 0.02 / (1 << j), q[2], p[2], d = 0.0;
            void *ws = vi_method(smooth[k], m, h);
            int i;
            memcpy(q, m->q0, sizeof q);
            memcpy(p, m->p0, sizeof p);
            RC_CHECK(ws && vi_run(smooth[k], ws, 2, q, p,
                                  (long)(1.0 / h + 0.5)) == RC_OK,
                     "%s ran", smooth[k]->name);
            for (i = 0; i < 2; ++i)
                d = fmax(d, fmax(fabs(q[i] - ref[i]), fabs(p[i] - ref[2 + i])));
            e[j] = d;
            smooth[k]->destroy(ws);
        }
        printf("%-15s %-12s errors %.3e %.3e %.3e ratios %.3f %.3f\n",
               m->builtin, smooth[k]->name, e[0], e[1], e[2], e[0] / e[1],
               e[1] / e[2]);
        /* second order: 4 per halving, within the 3.5-4.5 */
        RC_CHECK(e[0] / e[1] >= 3.5 && e[0] / e[1] <= 4.5 &&
                     e[1] / e[2] >= 3.5 && e[1] / e[2] <= 4.5,
                 "%s ratios %g %g", smooth[k]->name, e[0] / e[1],
                 e[1] / e[2]);
    }
}

/* b. symplectic */
static void check_symplectic(const rc_model *m)
{
    int k;
    for (k = 0; k < 4; ++k) {
        void *ws = vi_method(smooth[k], m, 0.05);
        double z0[4] = {1.0, 0.5, 0.6, -0.4}, D[4][4], worst = 0.0;
        int i, a, b;
        /* Jacobian column i by 4th-order central differences, step 1e-3:
         * truncation ~1e-12, rounding ~1e-15/1e-3 */
        for (i = 0; i < 4; ++i) {
            double out[4][4], off[4] = {1, -1, 2, -2}, d = 1e-3;
            int s;
            for (s = 0; s < 4; ++s) {
                double q[2], p[2];
                double z[4];
                memcpy(z, z0, sizeof z);
                z[i] += off[s] * d;
                q[0] = z[0];
                q[1] = z[1];
                p[0] = z[2];
                p[1] = z[3];
                vi_run(smooth[k], ws, 2, q, p, 1);
                out[s][0] = q[0];
                out[s][1] = q[1];
                out[s][2] = p[0];
                out[s][3] = p[1];
            }
            for (a = 0; a < 4; ++a)
                D[a][i] = (8.0 * (out[0][a] - out[1][a]) -
                           (out[2][a] - out[3][a])) / (12.0 * d);
        }
        /* (DᵀJD)_ab with J = [[0, I], [-I, 0]] */
        for (a = 0; a < 4; ++a)
            for (b = 0; b < 4; ++b) {
                double s = 0.0, jab;
                int r;
                for (r = 0; r < 2; ++r)
                    s += D[r][a] * D[2 + r][b] - D[2 + r][a] * D[r][b];
                jab = (b == a + 2) ? 1.0 : (a == b + 2) ? -1.0 : 0.0;
                worst = fmax(worst, fabs(s - jab));
            }
        printf("%-12s |PhiᵀJPhi - J| = %.2e\n", smooth[k]->name, worst);
        RC_CHECK(worst <= 1e-10, "%s symplecticity defect %g",
                 smooth[k]->name, worst);
        smooth[k]->destroy(ws);
    }
}

/* c. spreads of H and H~ */
static void spreads(const rc_model_method *meth, const rc_model *m, double h,
                    double T, double *sH, double *sM)
{
    void *ws = vi_method(meth, m, h);
    double q[2], p[2], H, Ed, Hm, hmin = INFINITY, hmax = -INFINITY;
    double mmin = INFINITY, mmax = -INFINITY;
    long s, n = (long)(T / h + 0.5);
    memcpy(q, m->q0, sizeof q);
    memcpy(p, m->p0, sizeof p);
    for (s = 0; s <= n; ++s) {
        if (s > 0)
            vi_run(meth, ws, 2, q, p, 1);
        rc_vi_energies(ws, q, p, &H, &Ed, &Hm);
        hmin = fmin(hmin, H);
        hmax = fmax(hmax, H);
        mmin = fmin(mmin, Hm);
        mmax = fmax(mmax, Hm);
    }
    *sH = hmax - hmin;
    *sM = mmax - mmin;
    meth->destroy(ws);
}

static void check_modified(const rc_model *m)
{
    const rc_model_method *meths[2] = {&rc_model_method_svc,
                                       &rc_model_method_sva};
    int k, j;
    for (k = 0; k < 2; ++k) {
        double sH[3], sM[3];
        for (j = 0; j < 3; ++j)
            spreads(meths[k], m, 0.02 / (1 << j), 4.0, &sH[j], &sM[j]);
        printf("%-6s spread H %.3e %.3e %.3e (ratios %.2f %.2f); H~ %.3e "
               "%.3e %.3e (ratios %.2f %.2f)\n",
               meths[k]->name, sH[0], sH[1], sH[2], sH[0] / sH[1],
               sH[1] / sH[2], sM[0], sM[1], sM[2], sM[0] / sM[1],
               sM[1] / sM[2]);
        for (j = 0; j < 3; ++j)
            RC_CHECK(sM[j] < sH[j], "%s: H~ spread %g not below H's %g at "
                     "h = %g", meths[k]->name, sM[j], sH[j], 0.02 / (1 << j));
        for (j = 0; j < 2; ++j) {
            double rH = sH[j] / sH[j + 1], rM = sM[j] / sM[j + 1];
            /* H is second order: 4x, within 3.5-4.5 */
            RC_CHECK(rH >= 3.5 && rH <= 4.5, "%s: H spread ratio %g",
                     meths[k]->name, rH);
            /* SVC's O(h³) truncation: 8x, SVA's O(h⁴): 16x; the bands
             * allow the next order's share at h = 0.02 (measured 7.9 and
             * 15.0 there) */
            if (k == 0)
                RC_CHECK(rM >= 6.5 && rM <= 9.5, "svc: H~ ratio %g", rM);
            else
                RC_CHECK(rM >= 13.0 && rM <= 19.0, "sva: H~ ratio %g", rM);
        }
    }
}

static void check_newton_failure(const rc_model *m)
{
    int k;
    for (k = 0; k < 4; ++k) {
        rc_integrator_desc in;
        rc_error err;
        rc_model_state s;
        void *ws = NULL;
        double q[2], p[2];
        rc_status st;
        rc_integrator_desc_init(&in);
        in.dt = 0.5;            /* a large step: Newton needs several passes */
        in.newton_max_iter = 1; /* ... and is allowed one */
        if (smooth[k]->create(m, &in, &ws, &err) != RC_OK) {
            RC_CHECK(0, "%s create", smooth[k]->name);
            continue;
        }
        memcpy(q, m->q0, sizeof q);
        memcpy(p, m->p0, sizeof p);
        s.t = 0.0;
        s.steps = 0;
        s.q = q;
        s.p = p;
        s.aux = NULL;
        st = smooth[k]->step(ws, &s, &err);
        RC_CHECK(st == RC_ERR_NOT_CONVERGED && strstr(err.message, "Newton") &&
                     s.steps == 0 && q[0] == m->q0[0] && p[1] == m->p0[1],
                 "%s: status %d, message '%s'", smooth[k]->name, (int)st,
                 err.message);
        smooth[k]->destroy(ws);
    }
}

int main(void)
{
    rc_model m;
    rc_error err;
    if (vi_model_load(cart_smooth, &m, &err)) {
        fprintf(stderr, "load: %s: %s\n", err.field, err.message);
        return 1;
    }
    check_order(&m);
    check_symplectic(&m);
    vi_model_free(&m);
    if (vi_model_load(dp_smooth, &m, &err)) {
        fprintf(stderr, "load: %s: %s\n", err.field, err.message);
        return 1;
    }
    rhs = dp_rhs;
    check_order(&m);
    check_symplectic(&m);
    /* the cart-pendulum without ground falls without bound (p_y grows
     * like 12 t), so its modified-Hamiltonian series is checked on the
     * bounded double pendulum */
    check_modified(&m);
    check_newton_failure(&m);
    vi_model_free(&m);
    return rc_test_finish("test_vi_smooth");
}

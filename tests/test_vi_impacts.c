/* The impact methods of seed 001 §4 (cva, vci, mcva-a, mcva-c) on the
 * vertical cart-pendulum from the seed's Xi(3.2), h = 1e-2, T = 5 (three
 * impacts in the seed's Fig. 3):
 *   a. each reset conserves its own energy to 1e-12 relative at every
 *      impact: CVA H (evaluated here from M(q) and p, a second
 *      implementation), VCI the backward and forward -D3 L_d, MCVA-A/C
 *      their truncated modified Hamiltonian; the momentum jump is along
 *      grad g (the ground: p_y only) and reverses the cart's velocity;
 *   b. each method's own conserved quantity shows no drift over the run:
 *      the truncated MH of MCVA-A/C stays within a band far narrower than
 *      H's swing, and its mean over the last second equals that over the
 *      first to the band's width; over 50 s (about 40 impacts) the
 *      windowed means of MCVA-A's H~ stay within 1e-3 (printed for all
 *      four methods);
 *   c. the impact time is resolved to round-off: the gap at each impact
 *      is below 1e-12 (relative to L);
 *   d. methods without impacts refuse the model with a field-named error;
 *      a Zeno run (the cart resting on the ground) is reported, never
 *      looped on. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rc_vi_test.h"

static const char *cart_xi =
    "builtin: cart_pendulum\n"
    "initial: {xi: 3.2}\n";

static const rc_model_method *const impact[] = {
    &rc_model_method_cva, &rc_model_method_vci, &rc_model_method_mcva_a,
    &rc_model_method_mcva_c};

/* H from the seed's §5.1 formulas (m1 = 1, m2 = 0.2, L = 2, g = 10). */
static double cart_H(const double *q, const double *p)
{
    double m1 = 1.0, m2 = 0.2, L = 2.0, g = 10.0;
    double a = m1 + m2, b = m2 * L * sin(q[1]), d = m2 * L * L;
    double det = a * d - b * b;
    double v0 = (d * p[0] - b * p[1]) / det, v1 = (a * p[1] - b * p[0]) / det;
    return 0.5 * (p[0] * v0 + p[1] * v1) + (m1 + m2) * g * q[0] -
           m2 * g * L * cos(q[1]);
}

static void run_method(const rc_model_method *meth, const rc_model *m)
{
    void *ws = vi_method(meth, m, 0.01);
    double q[2], p[2], H, Ed, Hm;
    double first = 0.0, last = 0.0, mmin = INFINITY, mmax = -INFINITY;
    double hmin = INFINITY, hmax = -INFINITY, worst = 0.0;
    long s, n = 500, nimp;
    int k, nf = 0, nl = 0;
    memcpy(q, m->q0, sizeof q);
    memcpy(p, m->p0, sizeof p);
    for (s = 0; s <= n; ++s) {
        if (s > 0 && vi_run(meth, ws, 2, q, p, 1) != RC_OK) {
            RC_CHECK(0, "%s failed at step %ld", meth->name, s);
            break;
        }
        rc_vi_energies(ws, q, p, &H, &Ed, &Hm);
        hmin = fmin(hmin, H);
        hmax = fmax(hmax, H);
        mmin = fmin(mmin, Hm);
        mmax = fmax(mmax, Hm);
        if (s <= 100) {
            first += Hm;
            ++nf;
        }
        if (s >= n - 100) {
            last += Hm;
            ++nl;
        }
    }
    nimp = rc_vi_impacts(ws);
    for (k = 0; k < nimp; ++k) {
        rc_vi_impact r;
        double e0, e1, rel;
        if (!rc_vi_impact_log(ws, k, &r))
            continue;
        if (meth == &rc_model_method_cva) {
            e0 = cart_H(r.q, r.p_minus);
            e1 = cart_H(r.q, r.p_plus);
        } else {
            e0 = r.e_minus;
            e1 = r.e_plus;
        }
        rel = fabs(e1 - e0) / fabs(e0);
        worst = fmax(worst, rel);
        RC_CHECK(rel <= 1e-12, "%s impact %d: energy %.17g -> %.17g", meth->name,
                 k, e0, e1);
        /* the ground's gradient is (1, 0): p_theta unchanged, p_y flips
         * sign (approaching before, leaving after) */
        RC_CHECK(r.p_plus[1] == r.p_minus[1] && r.p_minus[0] < 0.0 &&
                     r.p_plus[0] > 0.0,
                 "%s impact %d: momentum jump not along grad g", meth->name, k);
        RC_CHECK(r.q[0] >= 0.0 && r.q[0] <= 2e-12,
                 "%s impact %d: gap %g not at round-off", meth->name, k,
                 r.q[0]);
    }
    printf("%-7s impacts %ld  worst reset energy error %.2e  H spread %.3e  "
           "H~ spread %.3e  H~ mean first/last second %.12f %.12f\n",
           meth->name, nimp, worst, hmax - hmin, mmax - mmin, first / nf,
           last / nl);
    /* the seed reports three impacts from Xi(3.2) at h = 1e-2 */
    RC_CHECK(nimp == 3, "%s: %ld impacts, the seed has 3", meth->name, nimp);
    if (meth == &rc_model_method_mcva_a || meth == &rc_model_method_mcva_c) {
        /* Fig. 3: the truncated MH is the best-kept energy through the
         * impacts; measured spread/H-spread 0.018 (MCVA-A, O(h⁴)) and
         * 0.12 (MCVA-C, O(h³)); the bounds leave 2x */
        double lim = meth == &rc_model_method_mcva_a ? 0.04 : 0.25;
        RC_CHECK(mmax - mmin <= lim * (hmax - hmin),
                 "%s: H~ spread %g vs H spread %g", meth->name, mmax - mmin,
                 hmax - hmin);
        /* no drift: the first and last second's means agree to within
         * the spread of H~ itself */
        RC_CHECK(fabs(last / nl - first / nf) <= mmax - mmin,
                 "%s: H~ mean drifts %g -> %g", meth->name, first / nf,
                 last / nl);
    }
    meth->destroy(ws);
}

/* b, long: windowed means of H and H~ over NWIN windows of 5 time units
 * from Xi(3.2), h = 1e-2 (about 3 impacts per window). */
#ifdef RICOCHET_SANITIZE_BUILD
#define NWIN 3
#else
#define NWIN 10
#endif
static void long_run(const rc_model_method *meth, const rc_model *m)
{
    void *ws = vi_method(meth, m, 0.01);
    double q[2], p[2], H, Ed, Hm, wH[NWIN], wM[NWIN], s0 = INFINITY,
                                                      s1 = -INFINITY;
    double dH = 0.0, dM = 0.0;
    int w, s;
    memcpy(q, m->q0, sizeof q);
    memcpy(p, m->p0, sizeof p);
    for (w = 0; w < NWIN; ++w) {
        wH[w] = wM[w] = 0.0;
        for (s = 0; s < 500; ++s) {
            if (vi_run(meth, ws, 2, q, p, 1) != RC_OK) {
                RC_CHECK(0, "%s long run failed", meth->name);
                meth->destroy(ws);
                return;
            }
            rc_vi_energies(ws, q, p, &H, &Ed, &Hm);
            wH[w] += H / 500;
            wM[w] += Hm / 500;
            s0 = fmin(s0, Hm);
            s1 = fmax(s1, Hm);
        }
        dH = fmax(dH, fabs(wH[w] - wH[0]));
        dM = fmax(dM, fabs(wM[w] - wM[0]));
    }
    printf("%-7s %d windows of 5 s, %ld impacts: windowed means move by "
           "H %.2e, H~ %.2e (H~ spread %.2e)\n",
           meth->name, NWIN, rc_vi_impacts(ws), dH, dM, s1 - s0);
    if (meth == &rc_model_method_mcva_a)
        /* the O(h⁴) H~ is kept at every impact and moves ~5e-5 within 5 s
         * (its spread above); over ~40 impacts its windowed means moved
         * 3.2e-4 (CVA's H: 8e-3, VCI's: 2e-2): 1e-3 leaves 3x */
        RC_CHECK(dM <= 1e-3, "mcva-a: windowed means of H~ move by %g", dM);
    meth->destroy(ws);
}

int main(void)
{
    rc_model m;
    rc_error err;
    int k;
    if (vi_model_load(cart_xi, &m, &err)) {
        fprintf(stderr, "load: %s: %s\n", err.field, err.message);
        return 1;
    }
    for (k = 0; k < 4; ++k)
        run_method(impact[k], &m);
    for (k = 0; k < 4; ++k)
        long_run(impact[k], &m);
    {
        /* d. a smooth method refuses a model with a constraint */
        rc_integrator_desc in;
        void *ws = NULL;
        rc_status st;
        rc_integrator_desc_init(&in);
        in.dt = 0.01;
        st = rc_model_method_svc.create(&m, &in, &ws, &err);
        RC_CHECK(st == RC_ERR_PARSE && ws == NULL &&
                     !strcmp(err.field, "integrator.method") &&
                     strstr(err.message, "does not handle impacts"),
                 "svc accepted a model with a ground (%d, %s)", (int)st,
                 err.message);
    }
    vi_model_free(&m);
    /* d. the cart at rest on the ground: every step would need an impact
     * with no approach speed; reported as RC_ERR_ZENO at the first step */
    if (vi_model_load("builtin: cart_pendulum\n"
                      "initial: {q: [0.0, 0.0], qdot: [0.0, 0.0]}\n",
                      &m, &err) == 0) {
        for (k = 0; k < 4; ++k) {
            void *ws = vi_method(impact[k], &m, 0.01);
            rc_model_state st;
            double q[2] = {0.0, 0.0}, p[2] = {0.0, 0.0};
            rc_status rs;
            st.t = 0.0;
            st.steps = 0;
            st.q = q;
            st.p = p;
            st.aux = NULL;
            rs = impact[k]->step(ws, &st, &err);
            RC_CHECK(rs == RC_ERR_ZENO && st.steps == 0 && q[0] == 0.0,
                     "%s on a resting cart: status %d (%s)", impact[k]->name,
                     (int)rs, err.message);
            printf("%-7s resting cart: %s\n", impact[k]->name, err.message);
            impact[k]->destroy(ws);
        }
        vi_model_free(&m);
    } else {
        RC_CHECK(0, "load resting cart: %s", err.message);
    }
    /* d. two constraints reached at the same instant (the ground given
     * twice, as y >= 0 and 2y >= 0): reported as simultaneous impacts */
    if (vi_model_load("coordinates: [y, theta]\n"
                      "parameters: {m1: 1, m2: 0.2, L: 2, g: 10}\n"
                      "mass_matrix: [[\"m1+m2\", \"m2*L*sin(theta)\"], "
                      "[\"m2*L*sin(theta)\", \"m2*L^2\"]]\n"
                      "potential: \"(m1+m2)*g*y - m2*g*L*cos(theta)\"\n"
                      "constraints: [\"y\", \"2*y\"]\n"
                      "initial: {q: [0.1, 0.0], qdot: [0.0, 1.0]}\n",
                      &m, &err) == 0) {
        for (k = 0; k < 4; ++k) {
            void *ws = vi_method(impact[k], &m, 0.01);
            double q[2], p[2];
            rc_status rs;
            memcpy(q, m.q0, sizeof q);
            memcpy(p, m.p0, sizeof p);
            rs = vi_run(impact[k], ws, 2, q, p, 100);
            RC_CHECK(rs == RC_ERR_ZENO && q[0] > 0.0,
                     "%s: two grounds gave status %d", impact[k]->name,
                     (int)rs);
            impact[k]->destroy(ws);
        }
        vi_model_free(&m);
    } else {
        RC_CHECK(0, "load two grounds: %s", err.message);
    }
    return rc_test_finish("test_vi_impacts");
}

/* Potentials (DESIGN §1): for every potential type, in 1, 2 and 3
 * dimensions, on random configurations,
 *   - the gradient of rc_system_potential against central differences of
 *     the energy, and
 *   - rc_system_hessian_vector against central differences of the
 *     gradient along a random direction u;
 * plus one analytic value (and force) per potential.
 *
 * Errors are reported as max_k |got_k - ref_k| / max_k |ref_k| (every
 * element checked, worst index printed; rc_test_max_rel). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ricochet/system.h"
#include "rc_test.h"

#define MAXN 12
#define MAXD 3

/* Finite-difference step.  Coordinates, lengths and energies are O(1)
 * here, so with step h the central-difference error relative to the
 * derivative being checked is
 *   truncation  (h^2/6) |f'''| |u|^2 / |f'|,
 *   round-off   eps |f| / (h |f'|).
 * The steepest term is the LJ core (r >= 0.9 sigma): for the Hessian
 * check V''''/V'' ~ 210/r^2 ~ 260 and |u_i - u_j|^2 <= 4 d <= 12, so the
 * truncation is <= (h^2/6) * 3e3 ~ 2e-9 at h = 2e-6 (measured 1.8e-8 at
 * h = 1e-5, as this predicts); round-off is ~ 1e-10 x (f/f').  h = 2e-6
 * is near the optimum (3 eps / 3e3)^(1/3) ~ 6e-7. */
static const double FD_STEP = 2e-6;
/* Gradient and Hessian-vector tolerance: 50x the worst-case estimate
 * above (2e-9); a genuine formula error (O(1) relative, a missing factor
 * 2) is still caught by six orders of magnitude. */
static const double FD_TOL = 1e-7;
/* Scale floor of rc_test_max_rel: values here are O(1..1e3); a reference
 * vector below 1e-12 is exactly zero (gravity has a zero Hessian). */
static const double FD_FLOOR = 1e-12;

/* Configuration rules: keep every pair off zero separation, away from the
 * steep LJ core and off every cutoff by more than FD_STEP by a wide
 * margin, and every particle away from the (singular) centres. */
static const double PAIR_MIN = 0.9;    /* sigma = 1 (or 0.9) in the LJ cases */
static const double CUT_GAP = 0.02;    /* |r - cutoff| >= this, >> FD_STEP */
static const double CENTRE_MIN = 0.5;  /* |q - c| >= this */

typedef enum {
    CASE_GRAVITY,
    CASE_SPRING,
    CASE_ANCHOR0,
    CASE_ANCHOR_L,
    CASE_LJ,
    CASE_WCA,
    CASE_INVSQ,
    CASE_SEXTIC,
    CASE_ALL,
    CASE_COUNT
} case_id;

static const char *const case_names[CASE_COUNT] = {
    "gravity",       "spring",        "anchor(l=0)",
    "anchor(l>0)",   "lennard_jones", "wca",
    "inverse_square", "sextic_well",  "all together"};

static const double centre[3] = {0.2, -0.1, 0.3};
static const double cutoffs[] = {2.5, 1.8, 1.122462048309373};

static int far_from_cutoffs(double r)
{
    size_t c;
    for (c = 0; c < sizeof cutoffs / sizeof cutoffs[0]; ++c)
        if (fabs(r - cutoffs[c]) < CUT_GAP)
            return 0;
    return 1;
}

/* n random points in [-L/2, L/2]^d obeying the configuration rules. */
static int random_config(int d, int n, double L, unsigned long long *rng,
                         double *q)
{
    int i, j, k, tries;
    for (i = 0; i < n; ++i) {
        for (tries = 0; tries < 100000; ++tries) {
            int ok = 1;
            double rc2 = 0.0;
            for (k = 0; k < d; ++k) {
                q[i * d + k] = L * (rc_test_uniform(rng) - 0.5);
                rc2 += (q[i * d + k] - centre[k]) * (q[i * d + k] - centre[k]);
            }
            if (sqrt(rc2) < CENTRE_MIN)
                ok = 0;
            for (j = 0; j < i && ok; ++j) {
                double r2 = 0.0, r;
                for (k = 0; k < d; ++k)
                    r2 += (q[i * d + k] - q[j * d + k]) *
                          (q[i * d + k] - q[j * d + k]);
                r = sqrt(r2);
                if (r < PAIR_MIN || !far_from_cutoffs(r))
                    ok = 0;
            }
            if (ok)
                break;
        }
        if (tries == 100000)
            return 0;
    }
    return 1;
}

static void add_case(rc_system *sys, case_id c, int n)
{
    rc_potential_desc pd;
    int i, k;
    switch (c) {
    case CASE_GRAVITY:
        rc_potential_desc_init(&pd, RC_POT_GRAVITY);
        pd.vector[0] = 0.3;
        pd.vector[1] = -9.81;
        pd.vector[2] = 1.2;
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "gravity: %s",
                 rc_system_message(sys));
        pd.i = 1; /* a second field on one particle only */
        pd.vector[0] = -2.0;
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "gravity: %s",
                 rc_system_message(sys));
        break;
    case CASE_SPRING:
        for (i = 0; i + 1 < n; ++i) {
            rc_potential_desc_init(&pd, RC_POT_SPRING);
            pd.i = i;
            pd.j = (i * 3 + 1) % n == i ? i + 1 : (i * 3 + 1) % n;
            pd.k = 1.0 + 0.5 * i;
            pd.rest_length = (i % 3 == 2) ? 0.0 : 0.5 + 0.25 * i;
            RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK,
                     "spring: %s", rc_system_message(sys));
        }
        break;
    case CASE_ANCHOR0:
    case CASE_ANCHOR_L:
        rc_potential_desc_init(&pd, RC_POT_ANCHOR);
        pd.k = 2.5;
        pd.rest_length = c == CASE_ANCHOR0 ? 0.0 : 0.7;
        for (k = 0; k < 3; ++k)
            pd.vector[k] = centre[k];
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "anchor: %s",
                 rc_system_message(sys));
        pd.i = 0; /* one more on a single particle */
        pd.k = 7.0;
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "anchor: %s",
                 rc_system_message(sys));
        break;
    case CASE_LJ:
        rc_potential_desc_init(&pd, RC_POT_LENNARD_JONES);
        pd.epsilon = 1.0;
        pd.sigma = 1.0; /* default cutoff 2.5 sigma */
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "lj: %s",
                 rc_system_message(sys));
        pd.epsilon = 0.7;
        pd.sigma = 0.9;
        pd.cutoff = 1.8;
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "lj: %s",
                 rc_system_message(sys));
        break;
    case CASE_WCA:
        rc_potential_desc_init(&pd, RC_POT_WCA);
        pd.epsilon = 1.3;
        pd.sigma = 1.0;
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "wca: %s",
                 rc_system_message(sys));
        break;
    case CASE_INVSQ:
        rc_potential_desc_init(&pd, RC_POT_INVERSE_SQUARE);
        pd.strength = 25.0;
        for (k = 0; k < 3; ++k)
            pd.vector[k] = centre[k];
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "invsq: %s",
                 rc_system_message(sys));
        break;
    case CASE_SEXTIC:
        rc_potential_desc_init(&pd, RC_POT_SEXTIC_WELL);
        pd.strength = 1.5;
        for (k = 0; k < 3; ++k)
            pd.vector[k] = centre[k];
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "sextic: %s",
                 rc_system_message(sys));
        break;
    case CASE_ALL: {
        int cc;
        for (cc = 0; cc < CASE_ALL; ++cc)
            add_case(sys, (case_id)cc, n);
        break;
    }
    default:
        break;
    }
}

/* Worst errors of one case over all trials. */
typedef struct {
    double grad_err, hv_err;
    int grad_worst, hv_worst;
} fd_result;

static void fd_check(rc_system *sys, int N, const double *q0,
                     unsigned long long *rng, fd_result *res)
{
    double q[MAXN * MAXD], g[MAXN * MAXD], fd[MAXN * MAXD];
    double u[MAXN * MAXD], hu[MAXN * MAXD], gp[MAXN * MAXD],
        gm[MAXN * MAXD];
    double e, ep, em, err;
    int k, w;
    const double h = FD_STEP;

    memcpy(q, q0, sizeof(double) * (size_t)N);
    RC_CHECK(rc_system_potential(sys, q, &e, g) == RC_OK, "potential");
    RC_CHECK(isfinite(e), "energy not finite");
    for (k = 0; k < N; ++k) {
        q[k] = q0[k] + h;
        rc_system_potential(sys, q, &ep, NULL);
        q[k] = q0[k] - h;
        rc_system_potential(sys, q, &em, NULL);
        q[k] = q0[k];
        fd[k] = (ep - em) / (2.0 * h);
    }
    err = rc_test_max_rel(N, g, fd, FD_FLOOR, &w);
    if (!(err <= res->grad_err) || res->grad_worst < 0) {
        res->grad_err = err;
        res->grad_worst = w;
    }

    for (k = 0; k < N; ++k)
        u[k] = 2.0 * rc_test_uniform(rng) - 1.0;
    RC_CHECK(rc_system_hessian_vector(sys, q, u, hu) == RC_OK, "hv");
    for (k = 0; k < N; ++k)
        q[k] = q0[k] + h * u[k];
    rc_system_potential(sys, q, NULL, gp);
    for (k = 0; k < N; ++k)
        q[k] = q0[k] - h * u[k];
    rc_system_potential(sys, q, NULL, gm);
    for (k = 0; k < N; ++k)
        fd[k] = (gp[k] - gm[k]) / (2.0 * h);
    err = rc_test_max_rel(N, hu, fd, FD_FLOOR, &w);
    if (!(err <= res->hv_err) || res->hv_worst < 0) {
        res->hv_err = err;
        res->hv_worst = w;
    }
}

static void fd_all(void)
{
    /* particles and box side per dimension: dense enough that many pairs
     * are inside the LJ cutoff, loose enough for the rejection sampler */
    static const int nper[4] = {0, 5, 8, 10};
    static const double box[4] = {0.0, 9.0, 4.0, 3.2};
    const int trials = 4;
    int d, c, t;
    unsigned long long rng = 12345;
    for (d = 1; d <= 3; ++d) {
        for (c = 0; c < CASE_COUNT; ++c) {
            fd_result res;
            res.grad_err = res.hv_err = 0.0;
            res.grad_worst = res.hv_worst = -1;
            for (t = 0; t < trials; ++t) {
                rc_system *sys = NULL;
                double q[MAXN * MAXD], p[MAXD] = {0.0, 0.0, 0.0};
                int n = nper[d], i;
                if (!random_config(d, n, box[d], &rng, q)) {
                    RC_CHECK(0, "d=%d: could not place particles", d);
                    continue;
                }
                if (rc_system_create(d, &sys) != RC_OK) {
                    RC_CHECK(0, "create failed");
                    continue;
                }
                for (i = 0; i < n; ++i)
                    RC_CHECK(rc_system_add_particle(sys, 1.0 + 0.25 * i, 0.0,
                                                    q + i * d, p,
                                                    NULL) == RC_OK,
                             "add particle: %s", rc_system_message(sys));
                add_case(sys, (case_id)c, n);
                fd_check(sys, n * d, q, &rng, &res);
                rc_system_free(sys);
            }
            printf("d=%d %-15s grad max rel err %.2e (index %d)   "
                   "Hv max rel err %.2e (index %d)\n",
                   d, case_names[c], res.grad_err, res.grad_worst,
                   res.hv_err, res.hv_worst);
            RC_CHECK(res.grad_err <= FD_TOL,
                     "d=%d %s: gradient vs finite differences %.3e at index "
                     "%d", d, case_names[c], res.grad_err, res.grad_worst);
            RC_CHECK(res.hv_err <= FD_TOL,
                     "d=%d %s: Hessian-vector vs finite differences %.3e at "
                     "index %d", d, case_names[c], res.hv_err, res.hv_worst);
        }
    }
}

/* ---------------------------------------------------------------- */
/* Analytic values.                                                  */

/* Round-off tolerance for closed-form values: a few dozen flops on O(1)
 * numbers, each rounding by eps/2; 1e-13 relative leaves ~500 eps. */
static const double EXACT_RTOL = 1e-13;

/* A 3-D system of two particles at q0, q1 with masses 2 and 3. */
static rc_system *pair_system(int d, const double *q0, const double *q1)
{
    rc_system *sys = NULL;
    double p[3] = {0.0, 0.0, 0.0};
    if (rc_system_create(d, &sys) != RC_OK)
        return NULL;
    rc_system_add_particle(sys, 2.0, 0.0, q0, p, NULL);
    rc_system_add_particle(sys, 3.0, 0.0, q1, p, NULL);
    return sys;
}

/* Energy and gradient at the system's own state. */
static double energy_at_state(rc_system *sys, double *g)
{
    double q[2 * MAXD], e = NAN;
    rc_system_get_state(sys, q, NULL);
    if (rc_system_potential(sys, q, &e, g) != RC_OK)
        return NAN;
    return e;
}

/* Energy of two particles at distance r along a fixed 3-D direction. */
static double pair_energy_at(rc_system *sys, double r, double *g)
{
    /* unit vector (2, 3, 6)/7 */
    double q[6] = {0.1, -0.2, 0.3, 0.0, 0.0, 0.0};
    double e = NAN;
    q[3] = q[0] + r * 2.0 / 7.0;
    q[4] = q[1] + r * 3.0 / 7.0;
    q[5] = q[2] + r * 6.0 / 7.0;
    if (rc_system_potential(sys, q, &e, g) != RC_OK)
        return NAN;
    return e;
}

static void analytic(void)
{
    rc_potential_desc pd;
    rc_system *sys;
    double g[2 * MAXD], e, ref;
    const double a = 1.122462048309373095; /* 2^(1/6) */

    /* gravity: V = -sum m a.q */
    {
        double q0[3] = {1.0, 2.0, 3.0}, q1[3] = {4.0, 5.0, 6.0};
        sys = pair_system(3, q0, q1);
        rc_potential_desc_init(&pd, RC_POT_GRAVITY);
        pd.vector[1] = -9.81;
        rc_system_add_potential(sys, &pd);
        e = energy_at_state(sys, g);
        ref = 9.81 * (2.0 * 2.0 + 3.0 * 5.0);
        RC_CHECK(rc_test_close(e, ref, EXACT_RTOL, 0.0),
                 "gravity energy %.17g, expected %.17g", e, ref);
        RC_CHECK(g[0] == 0.0 && rc_test_close(g[1], 2.0 * 9.81, EXACT_RTOL,
                                              0.0) &&
                     rc_test_close(g[4], 3.0 * 9.81, EXACT_RTOL, 0.0),
                 "gravity gradient (%g, %g) (%g, %g)", g[0], g[1], g[3],
                 g[4]);
        rc_system_free(sys);
    }
    /* spring k = 3, rest 1.5, stretched to 2.5: V = 3/2 * 1^2 = 1.5,
     * force on particle 0 = k (r - l) towards particle 1 */
    {
        double q0[3] = {0.0, 0.0, 0.0}, q1[3] = {1.5, 2.0, 0.0};
        sys = pair_system(3, q0, q1);
        rc_potential_desc_init(&pd, RC_POT_SPRING);
        pd.i = 0;
        pd.j = 1;
        pd.k = 3.0;
        pd.rest_length = 1.5;
        rc_system_add_potential(sys, &pd);
        e = energy_at_state(sys, g);
        RC_CHECK(rc_test_close(e, 1.5, EXACT_RTOL, 0.0),
                 "spring energy %.17g, expected 1.5", e);
        RC_CHECK(rc_test_close(g[0], -1.8, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[1], -2.4, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[3], 1.8, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[4], 2.4, EXACT_RTOL, 0.0),
                 "spring gradient (%g, %g) (%g, %g), expected (-1.8, -2.4) "
                 "(1.8, 2.4)",
                 g[0], g[1], g[3], g[4]);
        rc_system_free(sys);
    }
    /* spring in 1-D: compressed from rest 2 to 0.5, V = 0.5*4*1.5^2 */
    {
        double q0[1] = {1.0}, q1[1] = {0.5};
        sys = pair_system(1, q0, q1);
        rc_potential_desc_init(&pd, RC_POT_SPRING);
        pd.i = 0;
        pd.j = 1;
        pd.k = 4.0;
        pd.rest_length = 2.0;
        rc_system_add_potential(sys, &pd);
        e = energy_at_state(sys, g);
        RC_CHECK(rc_test_close(e, 4.5, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[0], -6.0, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[1], 6.0, EXACT_RTOL, 0.0),
                 "1-D spring: V %.17g (4.5), g (%g, %g) (-6, 6)", e, g[0],
                 g[1]);
        rc_system_free(sys);
    }
    /* anchor, rest 0: k/2 |q - c|^2, and rest 0.5: k/2 (|q - c| - 0.5)^2 */
    {
        double q0[3] = {2.0, 3.0, 1.0}, q1[3] = {4.0, 5.0, 1.0};
        sys = pair_system(3, q0, q1);
        rc_potential_desc_init(&pd, RC_POT_ANCHOR);
        pd.i = 0;
        pd.k = 4.0;
        pd.vector[0] = pd.vector[1] = pd.vector[2] = 1.0;
        rc_system_add_potential(sys, &pd);
        e = energy_at_state(sys, g);
        RC_CHECK(rc_test_close(e, 10.0, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[0], 4.0, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[1], 8.0, EXACT_RTOL, 0.0) &&
                     g[2] == 0.0 && g[3] == 0.0,
                 "anchor(l=0): V %.17g (10), g0 (%g, %g, %g) (4, 8, 0)", e,
                 g[0], g[1], g[2]);
        rc_system_free(sys);

        sys = pair_system(3, q0, q1);
        pd.i = 1;
        pd.rest_length = 0.5; /* |q1 - c| = |(3, 4, 0)| = 5 */
        rc_system_add_potential(sys, &pd);
        e = energy_at_state(sys, g);
        RC_CHECK(rc_test_close(e, 40.5, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[3], 4.0 * 4.5 * 0.6, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[4], 4.0 * 4.5 * 0.8, EXACT_RTOL, 0.0),
                 "anchor(l>0): V %.17g (40.5), g1 (%g, %g) (10.8, 14.4)", e,
                 g[3], g[4]);
        rc_system_free(sys);
    }
    /* Lennard-Jones, sigma 1.1, eps 0.8, default cutoff 2.5 sigma:
     * minimum -eps - shift at 2^(1/6) sigma with zero force,
     * -shift at sigma, 0 beyond the cutoff, continuous at it. */
    {
        double q0[3] = {0.0, 0.0, 0.0}, sig = 1.1, eps = 0.8;
        double shift = 4.0 * eps * (pow(2.5, -12.0) - pow(2.5, -6.0));
        double gmax;
        int k;
        sys = pair_system(3, q0, q0);
        rc_potential_desc_init(&pd, RC_POT_LENNARD_JONES);
        pd.sigma = sig;
        pd.epsilon = eps;
        rc_system_add_potential(sys, &pd);
        e = pair_energy_at(sys, a * sig, g);
        ref = -eps - shift;
        gmax = 0.0;
        for (k = 0; k < 6; ++k)
            gmax = fmax(gmax, fabs(g[k]));
        RC_CHECK(rc_test_close(e, ref, EXACT_RTOL, 0.0),
                 "LJ minimum %.17g, expected %.17g", e, ref);
        /* force at the minimum: 24 eps/r (2 t^6 - t^3) cancels to
         * round-off of terms of size 24*2*eps/r ~ 35: 1e-13 absolute */
        RC_CHECK(gmax <= 1e-13, "LJ force at the minimum %.3e, expected 0",
                 gmax);
        e = pair_energy_at(sys, sig, g);
        RC_CHECK(rc_test_close(e, -shift, EXACT_RTOL, 1e-15),
                 "LJ at sigma %.17g, expected %.17g", e, -shift);
        e = pair_energy_at(sys, 2.5 * sig * 1.01, g);
        RC_CHECK(e == 0.0 && g[0] == 0.0 && g[5] == 0.0,
                 "LJ beyond cutoff %.3e, grad %.3e", e, g[0]);
        /* V'(rc) ~ 0.03: at 1e-9 below the cutoff V ~ 3e-11 */
        e = pair_energy_at(sys, 2.5 * sig * (1.0 - 1e-9), g);
        RC_CHECK(fabs(e) <= 1e-10, "LJ not continuous at the cutoff: %.3e",
                 e);
        rc_system_free(sys);
    }
    /* WCA, sigma 1, eps 1.3: eps at r = sigma, 0 at and beyond
     * 2^(1/6) sigma, continuous there. */
    {
        double q0[3] = {0.0, 0.0, 0.0}, eps = 1.3;
        sys = pair_system(3, q0, q0);
        rc_potential_desc_init(&pd, RC_POT_WCA);
        pd.sigma = 1.0;
        pd.epsilon = eps;
        rc_system_add_potential(sys, &pd);
        e = pair_energy_at(sys, 1.0, g);
        RC_CHECK(rc_test_close(e, eps, EXACT_RTOL, 0.0),
                 "WCA at sigma %.17g, expected %.17g", e, eps);
        /* force at sigma: dV/dr = -24 eps / sigma (2 - 1) = -24 eps */
        {
            double f = sqrt(g[3] * g[3] + g[4] * g[4] + g[5] * g[5]);
            RC_CHECK(rc_test_close(f, 24.0 * eps, EXACT_RTOL, 0.0) &&
                         g[3] < 0.0,
                     "WCA force at sigma %.17g, expected %.17g", f,
                     24.0 * eps);
        }
        e = pair_energy_at(sys, 1.5, g);
        RC_CHECK(e == 0.0 && g[0] == 0.0, "WCA beyond 2^(1/6) sigma: %.3e",
                 e);
        /* V ~ (1/2) V''(rc) dr^2 ~ 57 eps * (1e-6)^2 ~ 1e-10 */
        e = pair_energy_at(sys, a * (1.0 - 1e-6), g);
        RC_CHECK(e >= 0.0 && e <= 1e-9,
                 "WCA not continuous at 2^(1/6) sigma: %.3e", e);
        rc_system_free(sys);
    }
    /* inverse square 25/|q - c|^2 at distance 5: 1; force 2*25/5^3 = 0.4
     * pushing away from the centre (gradient points inwards) */
    {
        double q0[2] = {1.0 + 3.0, -1.0 + 4.0}, q1[2] = {0.0, 0.0};
        sys = pair_system(2, q0, q1);
        rc_potential_desc_init(&pd, RC_POT_INVERSE_SQUARE);
        pd.i = 0;
        pd.strength = 25.0;
        pd.vector[0] = 1.0;
        pd.vector[1] = -1.0;
        rc_system_add_potential(sys, &pd);
        e = energy_at_state(sys, g);
        RC_CHECK(rc_test_close(e, 1.0, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[0], -0.4 * 0.6, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[1], -0.4 * 0.8, EXACT_RTOL, 0.0) &&
                     g[2] == 0.0 && g[3] == 0.0,
                 "inverse square: V %.17g (1), g (%g, %g) (-0.24, -0.32)", e,
                 g[0], g[1]);
        rc_system_free(sys);
    }
    /* sextic well a s (s-1)^2, s = |q|^2: 2a at s = 2, zero with zero force
     * on the unit circle */
    {
        double q0[2] = {1.0, 1.0}, q1[2] = {0.6, 0.8};
        sys = pair_system(2, q0, q1);
        rc_potential_desc_init(&pd, RC_POT_SEXTIC_WELL);
        pd.strength = 2.0;
        rc_system_add_potential(sys, &pd);
        e = energy_at_state(sys, g);
        /* V_s = a (s-1)(3s-1) = 10 at s = 2; grad = 2 V_s q */
        RC_CHECK(rc_test_close(e, 4.0, EXACT_RTOL, 1e-15) &&
                     rc_test_close(g[0], 20.0, EXACT_RTOL, 0.0) &&
                     rc_test_close(g[1], 20.0, EXACT_RTOL, 0.0) &&
                     fabs(g[2]) <= 1e-15 && fabs(g[3]) <= 1e-15,
                 "sextic: V %.17g (4), g (%g, %g) (20, 20), g1 (%g, %g) (0, "
                 "0)",
                 e, g[0], g[1], g[2], g[3]);
        rc_system_free(sys);
    }
}

/* cpu_kernels.c: loops go parallel from 64 particles, and every item
 * writes only its own outputs with sums in index order, so energy,
 * gradient and Hessian-vector product are bit-identical for 1 and 2
 * threads (exact comparison: any difference is a race or a reordered
 * sum). */
static void thread_invariance(void)
{
    enum { NB = 120, DB = 3 };
    static double q[NB * DB], u[NB * DB], g[2][NB * DB], hu[2][NB * DB];
    double e[2], p[DB] = {0.0, 0.0, 0.0};
    rc_system *sys = NULL;
    unsigned long long rng = 777;
    int i, k, t;
    rc_system_create(DB, &sys);
    for (i = 0; i < NB; ++i) {
        for (k = 0; k < DB; ++k) {
            q[i * DB + k] = 6.0 * rc_test_uniform(&rng);
            u[i * DB + k] = 2.0 * rc_test_uniform(&rng) - 1.0;
        }
        rc_system_add_particle(sys, 1.0, 0.0, q + i * DB, p, NULL);
    }
    add_case(sys, CASE_ALL, NB);
    for (t = 0; t < 2; ++t) {
        rc_system_set_threads(sys, t + 1);
        rc_system_potential(sys, q, &e[t], g[t]);
        rc_system_hessian_vector(sys, q, u, hu[t]);
    }
    RC_CHECK(memcmp(&e[0], &e[1], sizeof e[0]) == 0 &&
                 memcmp(g[0], g[1], sizeof g[0]) == 0 &&
                 memcmp(hu[0], hu[1], sizeof hu[0]) == 0,
             "results differ between 1 and 2 threads (E %.17g vs %.17g)",
             e[0], e[1]);
    rc_system_free(sys);
}

int main(void)
{
    fd_all();
    analytic();
    thread_invariance();
    return rc_test_finish("test_potentials");
}

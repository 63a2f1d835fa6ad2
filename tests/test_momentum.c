/* Momentum conservation (DESIGN §1-2).
 *
 * With pair forces only (springs, LJ, WCA) both base integrators conserve
 * total linear momentum exactly in exact arithmetic: each step changes
 * P by -h sum_i grad_i V, and pair terms cancel in that sum.  With central
 * forces (pair forces plus inverse-square, sextic-well and anchor terms
 * centred at the origin) they conserve angular momentum about the origin
 * exactly: the kick and the drift of SV each preserve q x p, and implicit
 * midpoint preserves every quadratic invariant.  What is left is
 * round-off, bounded below step by step.
 *
 * The kernels evaluate each pair from both ends with x_ji = -x_ij exactly
 * (negating a rounded difference is exact) and coefficients that depend
 * on |x|^2 only, so the pair forces are exactly antisymmetric; the sum
 * over a particle's partners and the updates of p and q are what round. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ricochet/system.h"
#include "rc_test.h"

#define MAXN 10
#define MAXD 3

static const double EPS = 2.220446049250313e-16; /* DBL_EPSILON */

/* Round-off budget of one step, as a multiple of eps:
 *   linear momentum:  every p_i is updated twice (two kicks) and P is
 *     summed once, each rounding at eps |p_i|: 3 eps sum|p|; the n-term
 *     force sum of each particle rounds at most (n-1) eps sum|f| with
 *     sum|f| <= sum_i |grad_i V|, applied with weight h:
 *       dP <= eps (3 sum|p| + n h sum|g|);
 *   angular momentum: q_i rounds once (drift) and p_i twice, and
 *     |(a x b)_k| <= |a|_1 |b|_1, so
 *       dL <= eps (4 sum |q_i|_1 |p_i|_1 + n h sum |q_i|_1 |g_i|_1).
 * The tolerance is the sum of these budgets over all steps: the linear
 * worst case (random-walk accumulation is ~ sqrt(steps) below it). */

typedef struct {
    double dP, dL;     /* largest deviation of a component */
    double tolP, tolL; /* accumulated round-off budget */
    double sum_p;      /* sum |p| at the start (for scale) */
} result;

static double norm1(int d, const double *v)
{
    double s = 0.0;
    int k;
    for (k = 0; k < d; ++k)
        s += fabs(v[k]);
    return s;
}

/* n particles: random positions in a box of side L, at least 0.95 apart
 * and (for central potentials) 0.6 from the origin; random momenta. */
static void build(rc_system *sys, int d, int n, double L, int central,
                  unsigned long long *rng)
{
    double q[MAXN * MAXD], p[MAXD];
    rc_potential_desc pd;
    int i, j, k;
    for (i = 0; i < n; ++i) {
        int ok = 0;
        while (!ok) {
            double r0 = 0.0;
            ok = 1;
            for (k = 0; k < d; ++k) {
                q[i * d + k] = L * (rc_test_uniform(rng) - 0.5);
                r0 += q[i * d + k] * q[i * d + k];
            }
            if (central && r0 < 0.36)
                ok = 0;
            for (j = 0; j < i && ok; ++j) {
                double r2 = 0.0;
                for (k = 0; k < d; ++k)
                    r2 += (q[i * d + k] - q[j * d + k]) *
                          (q[i * d + k] - q[j * d + k]);
                if (r2 < 0.95 * 0.95)
                    ok = 0;
            }
        }
        for (k = 0; k < d; ++k)
            p[k] = 2.0 * rc_test_uniform(rng) - 1.0;
        rc_system_add_particle(sys, 0.5 + rc_test_uniform(rng), 0.0,
                               q + i * d, p, NULL);
    }
    /* a ring of springs, rest lengths between 0.8 and 1.5 */
    for (i = 0; i < n; ++i) {
        rc_potential_desc_init(&pd, RC_POT_SPRING);
        pd.i = i;
        pd.j = (i + 1) % n;
        pd.k = 2.0 + i;
        pd.rest_length = 0.8 + 0.1 * (i % 8);
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "spring: %s",
                 rc_system_message(sys));
    }
    rc_potential_desc_init(&pd, RC_POT_LENNARD_JONES);
    pd.epsilon = 1.0;
    pd.sigma = 0.9;
    RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "lj: %s",
             rc_system_message(sys));
    rc_potential_desc_init(&pd, RC_POT_WCA);
    pd.epsilon = 0.5;
    pd.sigma = 0.85;
    RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "wca: %s",
             rc_system_message(sys));
    if (central) { /* one-body terms centred at the origin */
        rc_potential_desc_init(&pd, RC_POT_INVERSE_SQUARE);
        pd.strength = 0.5;
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "invsq: %s",
                 rc_system_message(sys));
        rc_potential_desc_init(&pd, RC_POT_SEXTIC_WELL);
        pd.strength = 0.02;
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "sextic: %s",
                 rc_system_message(sys));
        rc_potential_desc_init(&pd, RC_POT_ANCHOR);
        pd.k = 0.5;
        pd.rest_length = 1.0;
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "anchor: %s",
                 rc_system_message(sys));
        rc_potential_desc_init(&pd, RC_POT_ANCHOR);
        pd.i = 0;
        pd.k = 3.0;
        RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "anchor: %s",
                 rc_system_message(sys));
    }
}

static result run(int d, int n, int central, rc_method method, double h,
                  long steps, unsigned long long seed)
{
    rc_system *sys = NULL;
    rc_integrator_desc in;
    rc_diagnostics d0, dg;
    double q[MAXN * MAXD], p[MAXN * MAXD], g[MAXN * MAXD];
    unsigned long long rng = seed;
    result r;
    long s;
    int i, k;
    const double box[4] = {0.0, 0.0, 3.2, 2.6};
    memset(&r, 0, sizeof r);
    r.dP = r.dL = NAN;
    if (rc_system_create(d, &sys) != RC_OK)
        return r;
    build(sys, d, n, box[d], central, &rng);
    rc_integrator_desc_init(&in);
    in.method = method;
    in.dt = h;
    rc_system_set_integrator(sys, &in);
    rc_system_diagnostics(sys, &d0);
    rc_system_get_state(sys, q, p);
    for (i = 0; i < n * d; ++i)
        r.sum_p += fabs(p[i]);
    r.dP = r.dL = 0.0;
    for (s = 0; s < steps; ++s) {
        /* budget of the coming step, from the state at its start */
        double sp = 0.0, sg = 0.0, sqp = 0.0, sqg = 0.0;
        rc_system_get_state(sys, q, p);
        rc_system_potential(sys, q, NULL, g);
        for (i = 0; i < n; ++i) {
            double nq = norm1(d, q + i * d), np = norm1(d, p + i * d),
                   ng = norm1(d, g + i * d);
            sp += np;
            sg += ng;
            sqp += nq * np;
            sqg += nq * ng;
        }
        r.tolP += EPS * (3.0 * sp + n * h * sg);
        r.tolL += EPS * (4.0 * sqp + n * h * sqg);
        if (rc_system_step(sys, 1) != RC_OK) {
            RC_CHECK(0, "%s step %ld: %s", rc_method_name(method), s,
                     rc_system_message(sys));
            r.dP = r.dL = NAN;
            break;
        }
        rc_system_diagnostics(sys, &dg);
        for (k = 0; k < 3; ++k) {
            double e1 = fabs(dg.momentum[k] - d0.momentum[k]);
            double e2 = fabs(dg.angular_momentum[k] -
                             d0.angular_momentum[k]);
            if (!(e1 <= r.dP))
                r.dP = e1;
            if (!(e2 <= r.dL))
                r.dL = e2;
        }
    }
    rc_system_free(sys);
    return r;
}

int main(void)
{
    /* h = 0.002 keeps the LJ cores resolved (|grad| up to ~1e2 at
     * r ~ 0.8 sigma, h |grad| / |p| ~ 0.2); 500 steps make the
     * round-off budget ~1e-13..1e-12 relative, far below any method
     * error (~h^2 = 4e-6) that a broken cancellation would produce. */
    const double h = 0.002;
    const long steps = 500;
    /* the base integrators of DESIGN §2 (the budget above is theirs) */
    static const rc_method methods[2] = {RC_METHOD_SV, RC_METHOD_MIDPOINT};
    int d, m, central;
    for (central = 0; central <= 1; ++central)
        for (d = 2; d <= 3; ++d)
            for (m = 0; m < 2; ++m) {
                int n = d == 3 ? 10 : 8;
                rc_method meth = methods[m];
                result r = run(d, n, central, meth, h, steps,
                               1000 + 10 * d + central);
                printf("%-8s d=%d n=%2d %-7s: max|P-P0| %.2e (budget %.2e, "
                       "%.1e sum|p|)  max|L-L0| %.2e (budget %.2e)\n",
                       rc_method_name(meth), d, n,
                       central ? "central" : "pair", r.dP, r.tolP,
                       r.dP / r.sum_p, r.dL, r.tolL);
                if (!central)
                    RC_CHECK(r.dP <= r.tolP,
                             "%s d=%d: linear momentum moved %.3e > %.3e",
                             rc_method_name(meth), d, r.dP, r.tolP);
                RC_CHECK(r.dL <= r.tolL,
                         "%s d=%d %s: angular momentum moved %.3e > %.3e",
                         rc_method_name(meth), d,
                         central ? "central" : "pair", r.dL, r.tolL);
            }
    return rc_test_finish("test_momentum");
}

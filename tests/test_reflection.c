/* Reflections of GVI (DESIGN §3; seed 000 Algorithms 2 and 3), through the
 * public test hooks rc_system_reflect, rc_system_reflection_energy,
 * rc_system_constraint_value and rc_system_tolerances.
 *
 *   a. One constraint (wall, container, obstacle, sphere pair; 2-D and
 *      3-D): the reflection keeps the chosen energy (H, or Störmer–Verlet's
 *      H~ with a nonlinear potential, where the metric W differs from
 *      M^-1) and turns an approaching normal speed into a separating one;
 *      for H it is the mirror v_n' = -v_n, for H~ the W-mirror
 *      (W n).p' = -(W n).p, and the plain M^-1 mirror would not keep H~.
 *   b. Several constraints at once (random clusters of 3-8 touching
 *      spheres of unequal masses, some inside a touching container):
 *      Algorithm 2 pass by pass (max_passes = 1 per call) keeps the energy
 *      at every pass, ends with no member approaching (normal speed >=
 *      -eps_v), and gives the same momenta as one call with the default
 *      cap; Moreau's single pass (Algorithm 3) keeps the energy.
 *   c. Linear momentum: sphere-sphere columns add equal and opposite
 *      impulses, so reflections against pair constraints keep the total
 *      momentum to round-off, and so does a whole GVI trajectory of a
 *      cluster of hard spheres with Lennard-Jones and WCA pair forces. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ricochet/system.h"
#include "rc_test.h"

#define MAXN 8
#define MAXD 3
#define MAXC (MAXN * (MAXN - 1) / 2 + MAXN)

static const double EPS = 2.220446049250313e-16; /* DBL_EPSILON */
static const int ZERO_SET[1] = {0}; /* the set {term 0} */

/* Energy kept by one reflection, relative: a reflection changes only p,
 * and p' = p + G lam rounds each component at a few eps, so T (and the
 * h^2 term of H~) move by ~1e-15 relative; 1e-12 leaves 1000x room and
 * is still 1e4x below what the wrong metric gives (checked in a.). */
static const double TOL_E = 1e-12;
/* Mirror of the normal speed: same rounding argument as TOL_E. */
static const double TOL_MIRROR = 1e-12;
/* The wrong (M^-1) mirror must miss H~ by at least this much relative,
 * or the modified-energy checks would not tell the metrics apart. */
static const double MIN_METRIC_EFFECT = 1e-8;
/* Pass-by-pass versus one call: both run the same arithmetic on the same
 * data, so they should agree bit for bit; 1e-12 of max|p| allows for a
 * reordering of the sums without hiding a different answer. */
static const double TOL_SAME = 1e-12;

static double dot(int n, const double *a, const double *b)
{
    double s = 0.0;
    int k;
    for (k = 0; k < n; ++k)
        s += a[k] * b[k];
    return s;
}

static void random_unit(int d, unsigned long long *rng, double *u)
{
    double s;
    int k;
    do {
        for (k = 0; k < d; ++k)
            u[k] = 2.0 * rc_test_uniform(rng) - 1.0;
        s = dot(d, u, u);
    } while (s < 0.04 || s > 1.0);
    for (k = 0; k < d; ++k)
        u[k] /= sqrt(s);
}

/* out = W u with W = M^-1 (+ (h^2/6) M^-1 Hess V(q) M^-1 for H~),
 * DESIGN §3; the metric the reflection must use. */
static void apply_W(rc_system *sys, int modified, double h, const double *u,
                    double *out)
{
    double q[MAXN * MAXD], m[MAXN], mu[MAXN * MAXD], hv[MAXN * MAXD];
    int n = rc_system_count(sys), d = rc_system_dimension(sys), i;
    rc_system_get_state(sys, q, NULL);
    rc_system_get_particles(sys, m, NULL);
    for (i = 0; i < n * d; ++i)
        mu[i] = u[i] / m[i / d];
    for (i = 0; i < n * d; ++i)
        out[i] = mu[i];
    if (modified) {
        rc_system_hessian_vector(sys, q, mu, hv);
        for (i = 0; i < n * d; ++i)
            out[i] += h * h / 6.0 * hv[i] / m[i / d];
    }
}

static int set_gvi(rc_system *sys, rc_energy energy, rc_reflection refl,
                   double h)
{
    rc_integrator_desc in;
    rc_integrator_desc_init(&in);
    in.method = RC_METHOD_GVI;
    in.dt = h;
    in.energy = energy;
    in.reflection = refl;
    return rc_system_set_integrator(sys, &in) == RC_OK;
}

/* A nonlinear, nonnegative potential (so H > 0 and H~ != H): a sextic
 * well off the origin on every particle.  Its Hessian is O(10) where the
 * particles sit, so with h = 0.05 the metric term (h^2/6) Hess is a
 * few 1e-3 of M^-1. */
static void add_sextic(rc_system *sys, double strength)
{
    rc_potential_desc pd;
    rc_potential_desc_init(&pd, RC_POT_SEXTIC_WELL);
    pd.strength = strength;
    pd.vector[0] = 0.3;
    pd.vector[1] = -0.2;
    pd.vector[2] = 0.1;
    RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "sextic: %s",
             rc_system_message(sys));
}

/* ---------------------------------------------------------------- */
/* a. One constraint.                                                 */

enum { K_WALL, K_CONTAINER, K_OBSTACLE, K_SPHERE, K_COUNT };
static const char *const kind_name[K_COUNT] = {"wall", "container",
                                               "obstacle", "sphere"};

/* Build the system of `kind` in d dimensions with an approaching
 * particle exactly on the boundary; fills n_vec with grad g (N
 * entries). */
static rc_system *single_system(int kind, int d, rc_energy energy, double h,
                                unsigned long long seed, double *n_vec)
{
    unsigned long long rng = seed;
    double u[3] = {0, 0, 0}, w[3] = {0, 0, 0}, c[3] = {0.2, 0.1, -0.3};
    double q[2 * MAXD], p[2 * MAXD];
    double m0 = 0.7, m1 = 2.3;
    rc_constraint_desc cd;
    rc_system *sys = NULL;
    int k;
    if (rc_system_create(d, &sys) != RC_OK)
        return NULL;
    random_unit(d, &rng, u);
    for (k = 0; k < d; ++k)
        w[k] = rc_test_uniform(&rng) - 0.5; /* random velocity part */
    memset(n_vec, 0, sizeof(double) * 2 * MAXD);
    switch (kind) {
    case K_WALL: {
        /* g = n.q - 0.3 - r; the normal is given unnormalised (x2) */
        double r = 0.2, t[3];
        random_unit(d, &rng, t);
        rc_constraint_desc_init(&cd, RC_CON_WALL);
        cd.i = 0;
        cd.offset = 2.0 * 0.3;
        for (k = 0; k < d; ++k) {
            cd.normal[k] = 2.0 * u[k];
            q[k] = u[k] * (0.3 + r) + 0.7 * (t[k] - dot(d, t, u) * u[k]);
            p[k] = m0 * (w[k] - 1.5 * u[k]);
            n_vec[k] = u[k];
        }
        rc_system_add_particle(sys, m0, r, q, p, NULL);
        break;
    }
    case K_CONTAINER: {
        double R = 3.0, r = 0.4;
        rc_constraint_desc_init(&cd, RC_CON_CONTAINER);
        cd.i = 0;
        cd.radius = R;
        for (k = 0; k < d; ++k) {
            cd.point[k] = c[k];
            q[k] = c[k] + (R - r) * u[k];
            p[k] = m0 * (w[k] + 1.5 * u[k]);
            n_vec[k] = -u[k];
        }
        rc_system_add_particle(sys, m0, r, q, p, NULL);
        break;
    }
    case K_OBSTACLE: {
        double R = 1.0, r = 0.3;
        rc_constraint_desc_init(&cd, RC_CON_OBSTACLE);
        cd.i = 0;
        cd.radius = R;
        for (k = 0; k < d; ++k) {
            cd.point[k] = c[k];
            q[k] = c[k] + (R + r) * u[k];
            p[k] = m0 * (w[k] - 1.5 * u[k]);
            n_vec[k] = u[k];
        }
        rc_system_add_particle(sys, m0, r, q, p, NULL);
        break;
    }
    default: { /* two spheres of unequal mass and radius, touching */
        double r0 = 0.35, r1 = 0.5, w1[3];
        for (k = 0; k < d; ++k)
            w1[k] = rc_test_uniform(&rng) - 0.5;
        rc_constraint_desc_init(&cd, RC_CON_NON_OVERLAP);
        cd.i = 0;
        cd.j = 1;
        for (k = 0; k < d; ++k) {
            q[k] = 0.6 * c[k] - 0.5 * u[k];
            q[d + k] = q[k] + (r0 + r1) * u[k];
            p[k] = m0 * (w[k] + 1.5 * u[k]);
            p[d + k] = m1 * (w1[k] - 1.5 * u[k]);
            n_vec[k] = -u[k];
            n_vec[d + k] = u[k];
        }
        rc_system_add_particle(sys, m0, r0, q, p, NULL);
        rc_system_add_particle(sys, m1, r1, q + d, p + d, NULL);
        break;
    }
    }
    add_sextic(sys, 1.0);
    RC_CHECK(rc_system_add_constraint(sys, &cd) == RC_OK, "%s: %s",
             kind_name[kind], rc_system_message(sys));
    if (!set_gvi(sys, energy, RC_REFLECT_GENERALIZED, h)) {
        RC_CHECK(0, "set_integrator: %s", rc_system_message(sys));
        rc_system_free(sys);
        return NULL;
    }
    return sys;
}

static void test_single(void)
{
    const double h = 0.05;
    int kind, d, e, trial;
    double worst_e[2] = {0, 0}, worst_mirror[2] = {0, 0}, min_metric = 1e300;
    for (kind = 0; kind < K_COUNT; ++kind)
        for (d = 2; d <= 3; ++d)
            for (e = 0; e < 2; ++e)
                for (trial = 0; trial < 5; ++trial) {
                    rc_energy en = e ? RC_ENERGY_MODIFIED
                                     : RC_ENERGY_HAMILTONIAN;
                    double nv[2 * MAXD], wn[2 * MAXD], p0[2 * MAXD],
                        p1[2 * MAXD], p2[2 * MAXD], q[2 * MAXD];
                    double E0 = NAN, E1 = NAN, g = NAN, s0 = NAN, s1 = NAN,
                           s2 = NAN, ws0, ws1, scale;
                    int passes = -1, N, i;
                    rc_status st;
                    rc_system *sys = single_system(
                        kind, d, en, h,
                        0x5eed0000ULL + 1000 * kind + 100 * d + 10 * e + trial,
                        nv);
                    if (!sys) {
                        RC_CHECK(0, "could not build %s d=%d", kind_name[kind],
                                 d);
                        continue;
                    }
                    N = rc_system_count(sys) * d;
                    RC_CHECK(rc_system_constraint_count(sys) == 1,
                             "%s: %d terms", kind_name[kind],
                             rc_system_constraint_count(sys));
                    rc_system_constraint_value(sys, 0, &g, &s0);
                    rc_system_reflection_energy(sys, &E0);
                    rc_system_get_state(sys, q, p0);
                    /* the particle sits on the boundary, approaching */
                    RC_CHECK(fabs(g) <= 1e-14 && s0 < -0.1,
                             "%s d=%d: setup g %.3e speed %.3e",
                             kind_name[kind], d, g, s0);
                    apply_W(sys, e, h, nv, wn);
                    ws0 = dot(N, wn, p0);
                    st = rc_system_reflect(sys, ZERO_SET, 1, 0,
                                           &passes);
                    RC_CHECK(st == RC_OK && passes == 1,
                             "%s d=%d %s: status %s passes %d: %s",
                             kind_name[kind], d, rc_energy_name(en),
                             rc_status_name(st), passes,
                             rc_system_message(sys));
                    rc_system_reflection_energy(sys, &E1);
                    rc_system_constraint_value(sys, 0, NULL, &s1);
                    rc_system_get_state(sys, NULL, p1);
                    ws1 = dot(N, wn, p1);
                    worst_e[e] = fmax(worst_e[e], fabs(E1 - E0) / fabs(E0));
                    RC_CHECK(rc_test_close(E1, E0, TOL_E, 0.0),
                             "%s d=%d %s: energy %.17g -> %.17g (rel %.2e)",
                             kind_name[kind], d, rc_energy_name(en), E0, E1,
                             fabs(E1 - E0) / fabs(E0));
                    /* separating afterwards */
                    RC_CHECK(s1 > 0.0, "%s d=%d %s: normal speed %.6g -> %.6g",
                             kind_name[kind], d, rc_energy_name(en), s0, s1);
                    if (!e) {
                        /* H: the exact mirror of the normal speed */
                        worst_mirror[0] = fmax(worst_mirror[0],
                                               fabs(s1 + s0) / fabs(s0));
                        RC_CHECK(rc_test_close(s1, -s0, TOL_MIRROR, 0.0),
                                 "%s d=%d: v_n %.17g -> %.17g, not mirrored",
                                 kind_name[kind], d, s0, s1);
                    } else {
                        /* H~: the W-mirror, (W n).p' = -(W n).p */
                        worst_mirror[1] = fmax(worst_mirror[1],
                                               fabs(ws1 + ws0) / fabs(ws0));
                        RC_CHECK(rc_test_close(ws1, -ws0, TOL_MIRROR, 0.0),
                                 "%s d=%d: (Wn).p %.17g -> %.17g, not "
                                 "mirrored",
                                 kind_name[kind], d, ws0, ws1);
                    }
                    /* p' - p is along the normal: the tangential part stays */
                    {
                        double dp[2 * MAXD], a, t2 = 0.0, pn = 0.0;
                        for (i = 0; i < N; ++i)
                            dp[i] = p1[i] - p0[i];
                        a = dot(N, dp, nv) / dot(N, nv, nv);
                        for (i = 0; i < N; ++i) {
                            t2 = fmax(t2, fabs(dp[i] - a * nv[i]));
                            pn = fmax(pn, fabs(p0[i]));
                        }
                        /* rounding of p + lam n: a few eps of |p| */
                        RC_CHECK(t2 <= 1e-13 * pn,
                                 "%s d=%d %s: tangential momentum moved "
                                 "%.3e",
                                 kind_name[kind], d, rc_energy_name(en), t2);
                    }
                    /* a separating particle is left alone */
                    passes = -1;
                    st = rc_system_reflect(sys, ZERO_SET, 1, 0,
                                           &passes);
                    rc_system_get_state(sys, NULL, p2);
                    RC_CHECK(st == RC_OK && passes == 0 &&
                                 memcmp(p1, p2, sizeof(double) * N) == 0,
                             "%s d=%d %s: second reflection changed p "
                             "(passes %d)",
                             kind_name[kind], d, rc_energy_name(en), passes);
                    if (e) {
                        /* the metric matters: the plain M^-1 mirror misses
                         * H~, and the library's answer is not it */
                        double Mn[2 * MAXD], Ep = NAN, diff = 0.0;
                        apply_W(sys, 0, h, nv, Mn);
                        for (i = 0; i < N; ++i)
                            p2[i] = p0[i] - 2.0 * nv[i] * dot(N, Mn, p0) /
                                                dot(N, Mn, nv);
                        rc_system_set_state(sys, NULL, p2);
                        rc_system_reflection_energy(sys, &Ep);
                        for (i = 0; i < N; ++i)
                            diff = fmax(diff, fabs(p2[i] - p1[i]));
                        scale = fabs(Ep - E0) / fabs(E0);
                        min_metric = fmin(min_metric, scale);
                        RC_CHECK(scale >= MIN_METRIC_EFFECT &&
                                     diff >= MIN_METRIC_EFFECT,
                                 "%s d=%d: the M^-1 mirror misses H~ by "
                                 "only %.2e (|dp| %.2e): test not "
                                 "discriminating",
                                 kind_name[kind], d, scale, diff);
                        rc_system_constraint_value(sys, 0, NULL, &s2);
                        (void)s2;
                    }
                    rc_system_free(sys);
                }
    printf("a. single reflections (4 kinds x 2-D/3-D x 5): max rel energy "
           "change H %.2e, H~ %.2e; mirror error H %.2e, H~(W) %.2e; the "
           "M^-1 mirror misses H~ by >= %.2e\n",
           worst_e[0], worst_e[1], worst_mirror[0], worst_mirror[1],
           min_metric);
}

/* ---------------------------------------------------------------- */
/* b. Several constraints: random touching clusters.                  */

typedef struct {
    int d, n, container;
    int rod_j; /* > 0: a rod joins particles 0 and rod_j */
    double m[MAXN], r[MAXN], q[MAXN * MAXD], p[MAXN * MAXD];
    double c[MAXD], R;
} cluster;

/* Particle 0 at the origin; each further sphere touches a sphere already
 * placed (0 with probability 1/2, else a random one), in a random
 * direction, without overlapping the others.  Every sphere except 0 moves
 * towards particle 0 plus a random part, so several contacts approach at
 * once and impulses pass along chains.  With `container`, a sphere
 * centred near the cluster encloses it and touches its outermost
 * sphere.  With `rod`, a rod (an equality, DESIGN §3 eq. 47) joins
 * particle 0 to the particle farthest from it, and the momenta are
 * made tangent to it (no relative speed along the rod). */
static void make_cluster(cluster *cl, int d, int n, int container, int rod,
                         unsigned long long seed)
{
    unsigned long long rng = seed;
    int i, j, k;
    memset(cl, 0, sizeof *cl);
    cl->d = d;
    cl->n = n;
    cl->container = container;
    for (i = 0; i < n; ++i) {
        cl->m[i] = 0.5 + 2.5 * rc_test_uniform(&rng);
        cl->r[i] = 0.3 + 0.3 * rc_test_uniform(&rng);
    }
    for (i = 1; i < n; ++i) {
        int tries;
        for (tries = 0; tries < 10000; ++tries) {
            int to = rc_test_uniform(&rng) < 0.5
                         ? 0
                         : (int)(rc_test_uniform(&rng) * i);
            double u[3];
            int ok = 1;
            random_unit(d, &rng, u);
            for (k = 0; k < d; ++k)
                cl->q[i * d + k] =
                    cl->q[to * d + k] + (cl->r[i] + cl->r[to]) * u[k];
            for (j = 0; j < i && ok; ++j) {
                double s = 0.0;
                if (j == to)
                    continue;
                for (k = 0; k < d; ++k)
                    s += (cl->q[i * d + k] - cl->q[j * d + k]) *
                         (cl->q[i * d + k] - cl->q[j * d + k]);
                if (sqrt(s) < cl->r[i] + cl->r[j] + 1e-6)
                    ok = 0;
            }
            if (ok)
                break;
        }
    }
    for (i = 0; i < n; ++i) {
        double s = 0.0;
        for (k = 0; k < d; ++k)
            s += cl->q[i * d + k] * cl->q[i * d + k];
        s = sqrt(s);
        for (k = 0; k < d; ++k)
            cl->p[i * d + k] =
                cl->m[i] * (rc_test_uniform(&rng) - 0.5 -
                            (i > 0 ? cl->q[i * d + k] / s : 0.0));
    }
    if (rod) {
        double best = 0.0, e[3], s = 0.0, vr = 0.0, mu;
        for (i = 1; i < n; ++i) {
            double r2 = 0.0;
            for (k = 0; k < d; ++k)
                r2 += cl->q[i * d + k] * cl->q[i * d + k];
            if (r2 > best) {
                best = r2;
                cl->rod_j = i;
            }
        }
        j = cl->rod_j;
        for (k = 0; k < d; ++k) {
            e[k] = cl->q[k] - cl->q[j * d + k];
            s += e[k] * e[k];
        }
        for (k = 0; k < d; ++k) {
            e[k] /= sqrt(s);
            vr += e[k] * (cl->p[k] / cl->m[0] - cl->p[j * d + k] / cl->m[j]);
        }
        /* equal and opposite impulses remove the relative speed */
        mu = cl->m[0] * cl->m[j] / (cl->m[0] + cl->m[j]);
        for (k = 0; k < d; ++k) {
            cl->p[k] -= mu * vr * e[k];
            cl->p[j * d + k] += mu * vr * e[k];
        }
    }
    if (container) {
        for (k = 0; k < d; ++k)
            cl->c[k] = 0.2 * (rc_test_uniform(&rng) - 0.5);
        cl->R = 0.0;
        for (i = 0; i < n; ++i) {
            double s = 0.0;
            for (k = 0; k < d; ++k)
                s += (cl->q[i * d + k] - cl->c[k]) *
                     (cl->q[i * d + k] - cl->c[k]);
            cl->R = fmax(cl->R, sqrt(s) + cl->r[i]);
        }
    }
}

static rc_system *cluster_system(const cluster *cl, rc_energy energy,
                                 rc_reflection refl, double h)
{
    rc_system *sys = NULL;
    rc_constraint_desc cd;
    rc_potential_desc pd;
    int i;
    if (rc_system_create(cl->d, &sys) != RC_OK)
        return NULL;
    for (i = 0; i < cl->n; ++i)
        rc_system_add_particle(sys, cl->m[i], cl->r[i], cl->q + i * cl->d,
                               cl->p + i * cl->d, NULL);
    add_sextic(sys, 0.2);
    /* pair forces too, so Hess V couples the particles in W */
    rc_potential_desc_init(&pd, RC_POT_LENNARD_JONES);
    pd.epsilon = 0.5;
    pd.sigma = 0.5;
    rc_system_add_potential(sys, &pd);
    rc_potential_desc_init(&pd, RC_POT_SPRING);
    pd.i = 0;
    pd.j = 1;
    pd.k = 3.0;
    pd.rest_length = 1.0;
    rc_system_add_potential(sys, &pd);
    rc_constraint_desc_init(&cd, RC_CON_NON_OVERLAP);
    cd.i = RC_ALL;
    RC_CHECK(rc_system_add_constraint(sys, &cd) == RC_OK, "non_overlap: %s",
             rc_system_message(sys));
    if (cl->container) {
        rc_constraint_desc_init(&cd, RC_CON_CONTAINER);
        cd.i = RC_ALL;
        cd.radius = cl->R;
        memcpy(cd.point, cl->c, sizeof cl->c);
        RC_CHECK(rc_system_add_constraint(sys, &cd) == RC_OK,
                 "container: %s", rc_system_message(sys));
    }
    if (cl->rod_j > 0) { /* the last term */
        rc_constraint_desc_init(&cd, RC_CON_ROD);
        cd.i = 0;
        cd.j = cl->rod_j;
        RC_CHECK(rc_system_add_constraint(sys, &cd) == RC_OK, "rod: %s",
                 rc_system_message(sys));
    }
    if (!set_gvi(sys, energy, refl, h)) {
        RC_CHECK(0, "set_integrator: %s", rc_system_message(sys));
        rc_system_free(sys);
        return NULL;
    }
    return sys;
}

/* Gradient of inequality term k (pairs in (i<j) order, then the
 * container terms), as N numbers, from the cluster's geometry; with a
 * rod, projected on the rod's cotangent space in the M^-1 metric,
 * u - F (F^T M^-1 F)^-1 F^T M^-1 u (eq. 47), as the reflection uses. */
static void cluster_normal(const cluster *cl, const double *q, int k,
                           double *nv)
{
    int d = cl->d, n = cl->n, i, j, c, t = 0, done = 0;
    double x[3], s = 0.0;
    memset(nv, 0, sizeof(double) * (size_t)(n * d));
    for (i = 0; i < n && !done; ++i)
        for (j = i + 1; j < n && !done; ++j, ++t)
            if (t == k) {
                for (c = 0; c < d; ++c) {
                    x[c] = q[i * d + c] - q[j * d + c];
                    s += x[c] * x[c];
                }
                for (c = 0; c < d; ++c) {
                    nv[i * d + c] = x[c] / sqrt(s);
                    nv[j * d + c] = -x[c] / sqrt(s);
                }
                done = 1;
            }
    if (!done) {
        i = k - t; /* container term of particle i: -(q_i-c)/|q_i-c| */
        for (c = 0; c < d; ++c) {
            x[c] = q[i * d + c] - cl->c[c];
            s += x[c] * x[c];
        }
        for (c = 0; c < d; ++c)
            nv[i * d + c] = -x[c] / sqrt(s);
    }
    if (cl->rod_j > 0) {
        double e[3], ftu = 0.0, ftf;
        j = cl->rod_j;
        s = 0.0;
        for (c = 0; c < d; ++c) {
            e[c] = q[c] - q[j * d + c];
            s += e[c] * e[c];
        }
        for (c = 0; c < d; ++c) {
            e[c] /= sqrt(s);
            ftu += e[c] * (nv[c] / cl->m[0] - nv[j * d + c] / cl->m[j]);
        }
        ftf = 1.0 / cl->m[0] + 1.0 / cl->m[j];
        for (c = 0; c < d; ++c) {
            nv[c] -= ftu / ftf * e[c];
            nv[j * d + c] += ftu / ftf * e[c];
        }
    }
}

typedef struct {
    int trials, multi_pass, max_passes, max_set, max_approach;
    double worst_rod, worst_e, worst_same, worst_moreau, worst_P_ratio, min_speed;
} multi_stats;

static void test_multi(void)
{
    const double h = 0.05;
    multi_stats st;
    int trial, e;
    memset(&st, 0, sizeof st);
    st.min_speed = INFINITY;
    for (trial = 0; trial < 60; ++trial) {
        int d = 2 + trial % 2, n = 3 + (trial / 2) % 6;
        int container = trial % 3 == 2, rod = trial % 3 == 1;
        cluster cl;
        make_cluster(&cl, d, n, container, rod, 0xc1a5ULL * (trial + 1));
        for (e = 0; e < 2; ++e) {
            rc_energy en = e ? RC_ENERGY_MODIFIED : RC_ENERGY_HAMILTONIAN;
            rc_system *sys = cluster_system(&cl, en, RC_REFLECT_GENERALIZED,
                                            h);
            rc_system *one = cluster_system(&cl, en, RC_REFLECT_GENERALIZED,
                                            h);
            rc_system *mor = cluster_system(&cl, en, RC_REFLECT_MOREAU, h);
            int set[MAXC], m = 0, k, calls, total = 0, passes = -1, N = n * d;
            int nterms, approaching = 0, i;
            double E0 = NAN, E = NAN, eps_g = NAN, eps_v = NAN;
            double P0[MAXD] = {0}, P1[MAXD] = {0}, sum_p = 0.0;
            double q[MAXN * MAXD], p[MAXN * MAXD], p1[MAXN * MAXD];
            rc_status s;
            if (!sys || !one || !mor) {
                RC_CHECK(0, "trial %d: could not build", trial);
                rc_system_free(sys);
                rc_system_free(one);
                rc_system_free(mor);
                continue;
            }
            st.trials++;
            nterms = rc_system_constraint_count(sys);
            RC_CHECK(rc_system_tolerances(sys, &eps_g, &eps_v) == RC_OK &&
                         eps_v > 0.0,
                     "tolerances: %s", rc_system_message(sys));
            /* the set: every touching inequality term (|g| at
             * round-off); the rod, when there is one, is the last term */
            for (k = 0; k < nterms - (cl.rod_j > 0); ++k) {
                double g, sp;
                rc_system_constraint_value(sys, k, &g, &sp);
                if (fabs(g) <= 1e-12) {
                    set[m++] = k;
                    if (sp < -eps_v)
                        approaching++;
                }
            }
            RC_CHECK(m >= n - 1, "trial %d: only %d touching terms", trial,
                     m);
            st.max_set = m > st.max_set ? m : st.max_set;
            st.max_approach =
                approaching > st.max_approach ? approaching : st.max_approach;
            rc_system_reflection_energy(sys, &E0);
            rc_system_get_state(sys, q, p);
            for (i = 0; i < N; ++i) {
                P0[i % d] += p[i];
                sum_p += fabs(p[i]);
            }
            /* Algorithm 2 one pass per call */
            for (calls = 0; calls < 1000; ++calls) {
                passes = -1;
                s = rc_system_reflect(sys, set, m, 1, &passes);
                RC_CHECK((s == RC_OK || s == RC_ERR_NOT_CONVERGED) &&
                             (passes == 0 || passes == 1),
                         "trial %d: status %s passes %d: %s", trial,
                         rc_status_name(s), passes, rc_system_message(sys));
                if (passes != 1)
                    break;
                total++;
                rc_system_reflection_energy(sys, &E);
                st.worst_e = fmax(st.worst_e, fabs(E - E0) / fabs(E0));
                RC_CHECK(rc_test_close(E, E0, TOL_E, 0.0),
                         "trial %d %s pass %d: energy %.17g -> %.17g", trial,
                         rc_energy_name(en), total, E0, E);
            }
            RC_CHECK(passes == 0 && s == RC_OK,
                     "trial %d: reflection did not end (%d calls)", trial,
                     calls);
            if (total >= 2)
                st.multi_pass++;
            st.max_passes = total > st.max_passes ? total : st.max_passes;
            /* nothing in the set approaches at the end; the speed is
             * the one of the conserved energy's flow, (W n).p */
            rc_system_get_state(sys, q, p1);
            for (k = 0; k < m; ++k) {
                double nv[MAXN * MAXD], wn[MAXN * MAXD], sp, spl = NAN;
                cluster_normal(&cl, q, set[k], nv);
                apply_W(sys, e, h, nv, wn);
                sp = dot(N, wn, p1);
                if (!e) {
                    rc_system_constraint_value(sys, set[k], NULL, &spl);
                    /* the library's speed and ours: same formula */
                    RC_CHECK(fabs(spl - sp) <= 1e-13 * sum_p,
                             "trial %d term %d: speed %.17g vs %.17g",
                             trial, set[k], spl, sp);
                }
                st.min_speed = fmin(st.min_speed, sp / eps_v);
                RC_CHECK(sp >= -eps_v,
                         "trial %d %s: term %d still approaches (%.3e < "
                         "-eps_v = %.3e)",
                         trial, rc_energy_name(en), set[k], sp, -eps_v);
            }
            /* the rod's relative speed is untouched: the projected
             * columns are M^-1-orthogonal to its gradient (eq. 47);
             * rounding of p at eps sum|p|, divided by masses >= 0.5 */
            if (cl.rod_j > 0) {
                double s0 = NAN, s1 = NAN;
                rc_system_constraint_value(one, nterms - 1, NULL, &s0);
                rc_system_constraint_value(sys, nterms - 1, NULL, &s1);
                st.worst_rod = fmax(st.worst_rod, fabs(s1 - s0) / sum_p);
                RC_CHECK(fabs(s1 - s0) <= 1e-13 * sum_p,
                         "trial %d: the rod's speed moved %.3e -> %.3e",
                         trial, s0, s1);
            }
            /* same as one call with the default cap */
            passes = -1;
            s = rc_system_reflect(one, set, m, 0, &passes);
            RC_CHECK(s == RC_OK && passes == total,
                     "trial %d: one call: %s, %d passes (pass by pass %d)",
                     trial, rc_status_name(s), passes, total);
            {
                double pone[MAXN * MAXD], err;
                int worst = -1;
                rc_system_get_state(one, NULL, pone);
                err = rc_test_max_rel(N, pone, p1, 0.0, &worst);
                st.worst_same = fmax(st.worst_same, err);
                RC_CHECK(err <= TOL_SAME,
                         "trial %d: one call and pass by pass differ by "
                         "%.3e at %d",
                         trial, err, worst);
            }
            /* linear momentum: pair columns give equal and opposite
             * impulses (the two blocks of a column are exact negatives,
             * so lam*u and lam*(-u) are too); only the additions
             * p_i += lam u round, at most (n-1) per component per pass
             * plus the n-term sum of P: eps ((n-1) passes + n) sum|p|
             * with sum|p| at most doubled by a reflection. */
            if (!container) {
                double dP = 0.0, tol;
                for (i = 0; i < N; ++i)
                    P1[i % d] += p1[i];
                for (k = 0; k < d; ++k)
                    dP = fmax(dP, fabs(P1[k] - P0[k]));
                tol = EPS * ((n - 1) * total + n) * 2.0 * sum_p;
                st.worst_P_ratio = fmax(st.worst_P_ratio, dP / tol);
                RC_CHECK(dP <= tol && dP <= 1e-13 * sum_p,
                         "trial %d: momentum moved %.3e (budget %.3e, sum|p| "
                         "%.3e)",
                         trial, dP, tol, sum_p);
            }
            /* Moreau: one pass over the whole set, energy kept */
            {
                double Em0 = NAN, Em = NAN;
                rc_system_reflection_energy(mor, &Em0);
                passes = -1;
                s = rc_system_reflect(mor, set, m, 0, &passes);
                rc_system_reflection_energy(mor, &Em);
                st.worst_moreau =
                    fmax(st.worst_moreau, fabs(Em - Em0) / fabs(Em0));
                RC_CHECK(s == RC_OK && passes == 1,
                         "trial %d: Moreau %s, %d passes: %s", trial,
                         rc_status_name(s), passes, rc_system_message(mor));
                RC_CHECK(rc_test_close(Em, Em0, TOL_E, 0.0),
                         "trial %d %s: Moreau energy %.17g -> %.17g", trial,
                         rc_energy_name(en), Em0, Em);
            }
            rc_system_free(sys);
            rc_system_free(one);
            rc_system_free(mor);
        }
    }
    /* the random clusters must exercise the multi-pass path */
    RC_CHECK(st.multi_pass > 0 && st.max_approach >= 3,
             "no configuration needed >= 2 passes (%d) or had >= 3 "
             "approaching contacts (%d)",
             st.multi_pass, st.max_approach);
    printf("b. %d cluster reflections (3-8 spheres, 2-D/3-D, H and H~, "
           "some in a container, some with a rod): up "
           "to %d terms in the set, %d approaching, %d passes (%d runs with "
           ">= 2); max rel energy change per pass %.2e; Moreau %.2e; one "
           "call vs pass by pass %.2e; min final speed / eps_v %.3g; "
           "momentum change / budget <= %.2f; rod speed change %.2e "
           "sum|p|\n",
           st.trials, st.max_set, st.max_approach, st.max_passes,
           st.multi_pass, st.worst_e, st.worst_moreau, st.worst_same,
           st.min_speed, st.worst_P_ratio, st.worst_rod);
}

/* ---------------------------------------------------------------- */
/* c. Linear momentum along a GVI trajectory.                         */

/* A free cluster (no walls: a wall would take momentum) of n hard
 * spheres, radii 0.35-0.45, masses 0.5-3, speeds up to 0.5, held
 * together by Lennard-Jones attraction (epsilon 2, sigma 0.7, so the hard
 * cores meet at r ~ 0.8 where LJ is mildly attractive) and pushed apart near contact by WCA (sigma 0.75,
 * acting below 0.84): the spheres collide often and every collision is a
 * reflection plus a complementarity solve. */
static void momentum_run(int d, int n, rc_base base, double h, long steps,
                         unsigned long long seed)
{
    rc_system *sys = NULL;
    rc_potential_desc pd;
    rc_constraint_desc cd;
    rc_integrator_desc in;
    rc_diagnostics d0, dg;
    unsigned long long rng = seed;
    double q[MAXN * MAXD], p[MAXN * MAXD], g[MAXN * MAXD], m[MAXN];
    double dP = 0.0, tol = 0.0, sum_p0 = 0.0;
    long s, refl = 0;
    int i, j, k, N = n * d, side = d == 2 ? 3 : 2;
    clock_t t0 = clock();
    if (rc_system_create(d, &sys) != RC_OK) {
        RC_CHECK(0, "create");
        return;
    }
    for (i = 0; i < n; ++i) {
        /* a lattice of spacing 0.95 with jitter 0.05: no overlap */
        int cell[3] = {i % side, (i / side) % side, i / (side * side)};
        double qi[3], pi[3];
        for (k = 0; k < d; ++k) {
            qi[k] = 0.95 * cell[k] + 0.05 * (rc_test_uniform(&rng) - 0.5);
            pi[k] = 0.0;
        }
        m[i] = 0.5 + 2.5 * rc_test_uniform(&rng);
        for (k = 0; k < d; ++k)
            pi[k] = m[i] * (rc_test_uniform(&rng) - 0.5);
        rc_system_add_particle(sys, m[i], 0.35 + 0.1 * rc_test_uniform(&rng),
                               qi, pi, NULL);
    }
    rc_potential_desc_init(&pd, RC_POT_LENNARD_JONES);
    pd.epsilon = 2.0;
    pd.sigma = 0.7;
    rc_system_add_potential(sys, &pd);
    rc_potential_desc_init(&pd, RC_POT_WCA);
    pd.epsilon = 0.5;
    pd.sigma = 0.75;
    rc_system_add_potential(sys, &pd);
    rc_constraint_desc_init(&cd, RC_CON_NON_OVERLAP);
    cd.i = RC_ALL;
    rc_system_add_constraint(sys, &cd);
    rc_integrator_desc_init(&in);
    in.method = RC_METHOD_GVI;
    in.base = base;
    in.dt = h;
    RC_CHECK(rc_system_set_integrator(sys, &in) == RC_OK, "integrator: %s",
             rc_system_message(sys));
    rc_system_diagnostics(sys, &d0);
    rc_system_get_state(sys, q, p);
    for (i = 0; i < N; ++i)
        sum_p0 += fabs(p[i]);
    for (s = 0; s < steps; ++s) {
        /* Round-off budget of the coming step (cf. test_momentum.c):
         *   3 eps sum|p| + n h eps sum|grad V| as for Störmer–Verlet
         *     (two kicks, the P sum, the force sums), doubled because a
         *     reflection adds one more rounded update per contact;
         *   plus 4 eps sum_i m_i |q_i|_1 / h: GVI forms the new momentum
         *     from M (x - q)/h, and x carries the rounding of the
         *     position update (eps |x|, a few additions), which the
         *     division by h magnifies. */
        double sp = 0.0, sg = 0.0, smq = 0.0;
        rc_system_get_state(sys, q, p);
        rc_system_potential(sys, q, NULL, g);
        for (i = 0; i < n; ++i)
            for (k = 0; k < d; ++k) {
                sp += fabs(p[i * d + k]);
                sg += fabs(g[i * d + k]);
                smq += m[i] * fabs(q[i * d + k]);
            }
        tol += EPS * (2.0 * (3.0 * sp + n * h * sg) + 4.0 * smq / h);
        if (rc_system_step(sys, 1) != RC_OK) {
            RC_CHECK(0, "momentum run d=%d step %ld: %s", d, s,
                     rc_system_message(sys));
            dP = NAN;
            break;
        }
        rc_system_diagnostics(sys, &dg);
        refl += dg.reflections;
        for (k = 0; k < d; ++k) {
            double e1 = fabs(dg.momentum[k] - d0.momentum[k]);
            if (!(e1 <= dP))
                dP = e1;
        }
    }
    rc_system_diagnostics(sys, &dg);
    (void)j;
    printf("c. GVI %s d=%d n=%d h=%g %ld steps: %ld reflection passes, min "
           "gap %.2e, max|P-P0| %.2e = %.2e sum|p| (budget %.2e), %.2f s\n",
           rc_base_name(base), d, n, h, steps, refl, dg.min_gap, dP,
           dP / sum_p0, tol, (double)(clock() - t0) / CLOCKS_PER_SEC);
    /* the cluster is bound (speeds ~0.5 against an LJ well of depth 2),
     * so its spheres collide again and again */
    RC_CHECK(refl >= 20, "d=%d: only %ld reflection passes, the run tests "
             "too little", d, refl);
    RC_CHECK(dP <= tol, "GVI %s d=%d: momentum moved %.3e > budget %.3e",
             rc_base_name(base), d, dP, tol);
    rc_system_free(sys);
}

int main(void)
{
    test_single();
    test_multi();
    /* h = 0.005: with speeds ~1 a step moves 0.005, far below the 0.8
     * core diameter, and the LJ/WCA forces (|grad| <~ 10 at contact) are
     * resolved (h |grad| / |p| ~ 0.05). */
    momentum_run(2, 8, RC_BASE_VERLET, 0.005, 10000, 71);
    momentum_run(3, 8, RC_BASE_VERLET, 0.005, 10000, 72);
    momentum_run(2, 6, RC_BASE_MIDPOINT, 0.005, 2000, 73);
    momentum_run(3, 8, RC_BASE_MIDPOINT, 0.005, 2000, 74);
    return rc_test_finish("test_reflection");
}

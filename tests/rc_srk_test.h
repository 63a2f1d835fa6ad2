/* Helpers of the seed-002 tests (test_srk*.c): a model of kind index1
 * from a scenario's `model:` block, a state, and a method's workspace.
 *
 * The vehicle's equations are also written here once more, from the
 * seed's formulas (7)–(10) and §5 directly (not through the body in
 * src/kernels/rc_index1.h), so that the tests compare the code against
 * an independent statement of the problem. */
#ifndef RC_SRK_TEST_H
#define RC_SRK_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/model/index1.h"
#include "host/scenario_read.h"
#include "host/yaml_tree.h"
#include "ricochet/system.h"
#include "rc_test.h"

/* The model in `yaml` (a document with a `model:` block) through the
 * common loader.  NULL with err filled on failure. */
static inline rc_model *srk_model(const char *yaml, rc_error *err)
{
    rc_ynode *root = rc_yaml_load_string(yaml, "test.yaml", err), *map;
    rc_model *m = NULL;
    if (!root)
        return NULL;
    map = rc_ynode_get(root, "model", NULL);
    if (!map || rc_model_load_(map, &m, err) != RC_OK)
        m = NULL;
    rc_ynode_free(root);
    return m;
}

typedef struct srk_run {
    rc_model *m;
    const rc_model_method *meth;
    void *ws;
    rc_model_state s;
} srk_run;

static inline int srk_open(srk_run *r, const char *yaml, const char *method,
                    double dt)
{
    rc_error err;
    rc_integrator_desc in;
    memset(r, 0, sizeof *r);
    memset(&err, 0, sizeof err);
    r->m = srk_model(yaml, &err);
    if (!r->m) {
        fprintf(stderr, "model: %s: %s\n", err.field, err.message);
        return -1;
    }
    r->meth = rc_model_method_find(r->m->kind, method);
    if (!r->meth) {
        fprintf(stderr, "no method %s\n", method);
        return -1;
    }
    rc_integrator_desc_init(&in);
    in.dt = dt;
    if (r->meth->create(r->m, &in, &r->ws, &err) != RC_OK) {
        fprintf(stderr, "create %s: %s\n", method, err.message);
        return -1;
    }
    if (rc_model_state_init(r->m, &r->s) != RC_OK)
        return -1;
    return 0;
}

static inline void srk_close(srk_run *r)
{
    if (r->ws)
        r->meth->destroy(r->ws);
    rc_model_state_free(&r->s);
    if (r->m)
        rc_model_free_(r->m);
    memset(r, 0, sizeof *r);
}

static inline int srk_steps(srk_run *r, long nsteps)
{
    rc_error err;
    long i;
    for (i = 0; i < nsteps; ++i)
        if (r->meth->step(r->ws, &r->s, &err) != RC_OK) {
            fprintf(stderr, "step %ld: %s\n", i, err.message);
            return -1;
        }
    return 0;
}

static inline double srk_energy(srk_run *r)
{
    rc_model_diag d;
    r->meth->diagnose(r->ws, &r->s, &d);
    return d.energy;
}

/* ---------------------------------------------------------------- */
/* The vehicle of seed 002 §5 from the seed's formulas.  par: L, alpha,
 * beta, bowl.  g: the rows (26) and (28). */
static inline void srk_vehicle_g(const double *par, const double *q, double g[2][4])
{
    g[0][0] = sin(q[3]);
    g[0][1] = -cos(q[3]);
    g[0][2] = 0.0;
    g[0][3] = 0.0;
    g[1][0] = sin(q[2]);
    g[1][1] = -cos(q[2]);
    g[1][2] = par[0];
    g[1][3] = 0.0;
}

/* λ from (10), q̇ from (8), ṗ from (9): ṗ = −∇V − Σ_i λ_i ∇_q(g_i·q̇)
 * with q̇ held (the transpose of Dg_i, as in (6)). */
static inline void srk_vehicle_rhs(const double *par, const double *q,
                            const double *p, double *qd, double *pd,
                            double *lam_out)
{
    double L = par[0], mi[4] = {1.0, 1.0, 1.0 / par[1], 1.0 / par[2]};
    double g[2][4], A[2][2], b[2], lam[2], det;
    double m1 = q[0] - 0.5 * L * cos(q[2]), m2 = q[1] - 0.5 * L * sin(q[2]);
    double r = sqrt(m1 * m1 + m2 * m2), sr = r > 0 ? sin(r) / r : 1.0;
    int i, j, l;
    srk_vehicle_g(par, q, g);
    for (i = 0; i < 2; ++i) {
        b[i] = 0.0;
        for (l = 0; l < 4; ++l)
            b[i] -= g[i][l] * mi[l] * p[l];
        for (j = 0; j < 2; ++j) {
            A[i][j] = 0.0;
            for (l = 0; l < 4; ++l)
                A[i][j] += g[i][l] * mi[l] * g[j][l];
        }
    }
    det = A[0][0] * A[1][1] - A[0][1] * A[1][0];
    lam[0] = (b[0] * A[1][1] - A[0][1] * b[1]) / det;
    lam[1] = (A[0][0] * b[1] - A[1][0] * b[0]) / det;
    for (l = 0; l < 4; ++l)
        qd[l] = mi[l] * (p[l] + lam[0] * g[0][l] + lam[1] * g[1][l]);
    /* ∇V of V = −bowl cos r */
    pd[0] = -par[3] * sr * m1;
    pd[1] = -par[3] * sr * m2;
    pd[2] = -par[3] * sr * 0.5 * L * (m1 * sin(q[2]) - m2 * cos(q[2]));
    pd[3] = 0.0;
    /* ∇_q(g_1·q̇) = (0, 0, 0, ẋ cos φ + ẏ sin φ),
     * ∇_q(g_2·q̇) = (0, 0, ẋ cos θ + ẏ sin θ, 0) */
    pd[3] -= lam[0] * (qd[0] * cos(q[3]) + qd[1] * sin(q[3]));
    pd[2] -= lam[1] * (qd[0] * cos(q[2]) + qd[1] * sin(q[2]));
    if (lam_out) {
        lam_out[0] = lam[0];
        lam_out[1] = lam[1];
    }
}

/* Classical RK4 of the above, nsteps of h: the test's reference. */
static inline void srk_vehicle_reference(const double *par, double *q, double *p,
                                  double T, long nsteps)
{
    double h = T / (double)nsteps, k[4][8], y[8], yt[8];
    long s;
    int i, a;
    for (a = 0; a < 4; ++a) {
        y[a] = q[a];
        y[4 + a] = p[a];
    }
    for (s = 0; s < nsteps; ++s) {
        for (i = 0; i < 4; ++i) {
            double c = i == 0 ? 0.0 : i == 3 ? 1.0 : 0.5;
            for (a = 0; a < 8; ++a)
                yt[a] = y[a] + (i ? c * h * k[i - 1][a] : 0.0);
            srk_vehicle_rhs(par, yt, yt + 4, k[i], k[i] + 4, NULL);
        }
        for (a = 0; a < 8; ++a)
            y[a] += h / 6.0 * (k[0][a] + 2.0 * k[1][a] + 2.0 * k[2][a] +
                               k[3][a]);
    }
    for (a = 0; a < 4; ++a) {
        q[a] = y[a];
        p[a] = y[4 + a];
    }
}

/* max_i |g_i(q)·q̇| with q̇ = M⁻¹(p + Gᵀλ) (the Legendre transform (8)). */
static inline double srk_vehicle_constraint(const double *par, const double *q,
                                     const double *p, const double *lam)
{
    double mi[4] = {1.0, 1.0, 1.0 / par[1], 1.0 / par[2]}, g[2][4], qd[4];
    double e = 0.0;
    int i, l;
    srk_vehicle_g(par, q, g);
    for (l = 0; l < 4; ++l)
        qd[l] = mi[l] * (p[l] + lam[0] * g[0][l] + lam[1] * g[1][l]);
    for (i = 0; i < 2; ++i) {
        double s = 0.0;
        for (l = 0; l < 4; ++l)
            s += g[i][l] * qd[l];
        e = fmax(e, fabs(s));
    }
    return isfinite(e) ? e : INFINITY;
}

#endif

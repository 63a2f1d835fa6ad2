/* The "lagrangian" model kind (lagrangian.h): built-in bodies of
 * src/kernels/rc_lagrangian.h, or M(q), V(q), g(q) as expressions of the
 * named coordinates and parameters, differentiated symbolically (expr.h)
 * to the second derivatives of M and V the methods of vi.c use (the
 * Hessian of the discrete Lagrangian; the modified Hamiltonian's vector
 * field is differenced from there, see vi.c).
 *
 *   model:
 *     kind: lagrangian
 *     builtin: cart_pendulum | double_pendulum      # or the three keys:
 *     coordinates: [y, theta]
 *     mass_matrix: [["m1+m2", "m2*L*sin(theta)"], ["m2*L*sin(theta)", "m2*L^2"]]
 *     potential: "(m1+m2)*g*y - m2*g*L*cos(theta)"
 *     constraints: ["y"]            # g_k(q) >= 0; [] for none
 *     parameters: {m1: 1, m2: 0.2, L: 2, g: 10}
 *     initial: {q: [1, 0.5], qdot: [0, 0]}   # or p: [...]; or xi: beta
 *
 * A built-in model takes `constraints: []` to drop its constraint (a
 * smooth run), and its parameters default to the seed's values. */
#include "lagrangian.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../expr.h"
#include "../scenario_read.h"
#include "../../kernels/rc_lagrangian.h"

enum {
    RC_LAG_EXPR = RC_K_LAG_EXPR,
    RC_LAG_CART = RC_K_LAG_CART,
    RC_LAG_DOUBLE = RC_K_LAG_DOUBLE
};

typedef struct rc_lag_data {
    int body;                   /* RC_LAG_* */
    int ng;                     /* constraints in use */
    int pidx[8];                /* built-in: body parameter -> m->par */
    /* expression route (n = m->n, ng constraints) */
    int nv;
    const char *names[RC_MODEL_MAX_DIM * 2];
    /* the names, owned here: the expressions borrow them, and a model
     * struct may be moved after loading */
    char namebuf[RC_MODEL_MAX_DIM * 2][RC_MODEL_NAME_MAX];
    double vals[RC_MODEL_MAX_DIM * 2];
    rc_expr **M, **dM, **d2M, *V, **dV, **d2V, **g, **dg;
} rc_lag_data;

typedef struct rc_lag_builtin {
    const char *name;
    int body;
    const char *coord[2];
    int npar;
    const char *par[6];
    double def[6];
    const char *what;
} rc_lag_builtin;

static const rc_lag_builtin rc_lag_builtins[] = {
    {"cart_pendulum", RC_LAG_CART, {"y", "theta"}, 4,
     {"m1", "m2", "L", "g", NULL, NULL}, {1.0, 0.2, 2.0, 10.0, 0.0, 0.0},
     "vertical cart-pendulum of seed 001 §5.1, ground y >= 0"},
    {"double_pendulum", RC_LAG_DOUBLE, {"theta1", "theta2"}, 6,
     {"m1", "m2", "l1", "l2", "g", "d"}, {1.0, 1.0, 1.0, 1.0, 10.0, 1.2},
     "planar double pendulum, wall x = d for the lower bob"},
};
#define RC_LAG_NBUILTIN ((int)(sizeof rc_lag_builtins / sizeof rc_lag_builtins[0]))

static const char *const rc_lag_keys[] = {"initial", "mass_matrix",
                                          "potential", "constraints", NULL};

static int rc_lag_par_index(const rc_model *m, const char *name)
{
    int k;
    for (k = 0; k < m->npar; ++k)
        if (!strcmp(m->par_name[k], name))
            return k;
    return -1;
}

static void rc_lag_free_exprs(rc_expr **e, int count)
{
    int k;
    if (!e)
        return;
    for (k = 0; k < count; ++k)
        rc_expr_free(e[k]);
    free(e);
}

static void rc_lag_free_data(rc_model *m)
{
    rc_lag_data *d = (rc_lag_data *)m->data;
    int n = m->n;
    if (!d)
        return;
    rc_lag_free_exprs(d->M, n * n);
    rc_lag_free_exprs(d->dM, n * n * n);
    rc_lag_free_exprs(d->d2M, n * n * n * n);
    rc_expr_free(d->V);
    rc_lag_free_exprs(d->dV, n);
    rc_lag_free_exprs(d->d2V, n * n);
    rc_lag_free_exprs(d->g, d->ng);
    rc_lag_free_exprs(d->dg, d->ng * n);
    free(d);
    m->data = NULL;
}

int rc_lag_nconstraints(const rc_model *m)
{
    return ((const rc_lag_data *)m->data)->ng;
}

void rc_lag_builtin_params(const rc_model *m, double par[8])
{
    const rc_lag_data *d = (const rc_lag_data *)m->data;
    int a;
    for (a = 0; a < 8; ++a)
        par[a] = d->pidx[a] >= 0 ? m->par[d->pidx[a]] : 0.0;
}

int rc_lag_body(const rc_model *m)
{
    return ((const rc_lag_data *)m->data)->body;
}

void rc_lag_eval(const rc_model *m, const double *q, int order,
                 rc_lag_jet *j)
{
    const rc_lag_data *d = (const rc_lag_data *)m->data;
    rc_lag_data *dw = (rc_lag_data *)m->data; /* scratch values */
    int n = m->n, a, b, c, e;
    j->n = n;
    j->ng = d->ng;
    if (d->body != RC_LAG_EXPR) {
        double par[8];
        rc_lag_builtin_params(m, par);
        rc_k_lag_builtin_eval(d->body, par, d->ng, q, j);
        return;
    }
    for (a = 0; a < n; ++a)
        dw->vals[a] = q[a];
    for (a = 0; a < m->npar; ++a)
        dw->vals[n + a] = m->par[a];
    for (a = 0; a < n; ++a)
        for (b = a; b < n; ++b)
            j->M[a * n + b] = j->M[b * n + a] =
                rc_expr_eval(d->M[a * n + b], dw->vals);
    j->V = rc_expr_eval(d->V, dw->vals);
    for (c = 0; c < d->ng; ++c)
        j->g[c] = rc_expr_eval(d->g[c], dw->vals);
    if (order < 1)
        return;
    for (c = 0; c < n; ++c) {
        for (a = 0; a < n; ++a)
            for (b = a; b < n; ++b)
                j->dM[(c * n + a) * n + b] = j->dM[(c * n + b) * n + a] =
                    rc_expr_eval(d->dM[(c * n + a) * n + b], dw->vals);
        j->dV[c] = rc_expr_eval(d->dV[c], dw->vals);
    }
    for (c = 0; c < d->ng; ++c)
        for (a = 0; a < n; ++a)
            j->dg[c * n + a] = rc_expr_eval(d->dg[c * n + a], dw->vals);
    if (order < 2)
        return;
    for (c = 0; c < n; ++c)
        for (e = 0; e < n; ++e) {
            for (a = 0; a < n; ++a)
                for (b = a; b < n; ++b)
                    j->d2M[((c * n + e) * n + a) * n + b] =
                        j->d2M[((c * n + e) * n + b) * n + a] = rc_expr_eval(
                            d->d2M[((c * n + e) * n + a) * n + b], dw->vals);
            j->d2V[c * n + e] = rc_expr_eval(d->d2V[c * n + e], dw->vals);
        }
}

/* Compile one formula node (a string or a number) of field `field`. */
static rc_status rc_lag_compile(rc_error *err, const rc_ynode *node,
                                const char *field, rc_lag_data *d,
                                rc_expr **out)
{
    char msg[600];
    const char *text;
    if (rc_get_string(err, node, field, &text))
        return RC_ERR_PARSE;
    *out = rc_expr_compile(text, d->nv, d->names, msg, sizeof msg);
    if (!*out)
        return rc_bad(err, node, field, "%s", msg);
    return RC_OK;
}

static rc_status rc_lag_nomem(rc_error *err)
{
    err->status = RC_ERR_NOMEM;
    snprintf(err->message, sizeof err->message,
             "out of memory for the model's expressions");
    return RC_ERR_NOMEM;
}

/* ∂e/∂(coordinate var); e stays owned by the caller. */
static rc_status rc_lag_diff(rc_error *err, const rc_expr *e, int var,
                             rc_expr **out)
{
    *out = rc_expr_derivative(e, var);
    return *out ? RC_OK : rc_lag_nomem(err);
}

static rc_status rc_lag_load_exprs(rc_model *m, const rc_ynode *map,
                                   rc_lag_data *d, rc_error *err)
{
    int n = m->n, a, b, c, e;
    rc_ynode *mm, *pot, *cons, *row;
    char f[200];
    if (n < 1)
        return rc_bad(err, map, "model.coordinates",
                      "an expression model needs coordinates (a list of "
                      "names), or give `builtin`");
    if (n > RC_LAG_MAX_N)
        return rc_bad(err, map, "model.coordinates",
                      "at most %d coordinates for kind lagrangian, got %d",
                      RC_LAG_MAX_N, n);
    if (n + m->npar > RC_MODEL_MAX_DIM * 2)
        return rc_bad(err, map, "model.parameters",
                      "at most %d coordinates and parameters together",
                      RC_MODEL_MAX_DIM * 2);
    d->nv = n + m->npar;
    for (a = 0; a < d->nv; ++a) {
        snprintf(d->namebuf[a], RC_MODEL_NAME_MAX, "%s",
                 a < n ? m->coord[a] : m->par_name[a - n]);
        d->names[a] = d->namebuf[a];
    }
    if (rc_require(err, map, "mass_matrix", "model", &mm) ||
        rc_require(err, map, "potential", "model", &pot))
        return RC_ERR_PARSE;
    if (mm->kind != RC_YNODE_SEQUENCE || mm->n != n)
        return rc_bad(err, mm, "model.mass_matrix",
                      "expected %d rows (one per coordinate), got %s", n,
                      mm->kind == RC_YNODE_SEQUENCE ? "another count"
                                                    : rc_kind_name(mm));
    d->M = calloc((size_t)(n * n), sizeof *d->M);
    d->dM = calloc((size_t)(n * n * n), sizeof *d->dM);
    d->d2M = calloc((size_t)(n * n * n * n), sizeof *d->d2M);
    d->dV = calloc((size_t)n, sizeof *d->dV);
    d->d2V = calloc((size_t)(n * n), sizeof *d->d2V);
    if (!d->M || !d->dM || !d->d2M || !d->dV || !d->d2V)
        return rc_lag_nomem(err);
    for (a = 0; a < n; ++a) {
        row = mm->items[a];
        snprintf(f, sizeof f, "model.mass_matrix[%d]", a);
        if (row->kind != RC_YNODE_SEQUENCE || row->n != n)
            return rc_bad(err, row, f, "expected a row of %d formulas", n);
        /* the upper triangle is used; the lower one must be given and is
         * checked against it at the initial configuration */
        for (b = a; b < n; ++b) {
            snprintf(f, sizeof f, "model.mass_matrix[%d][%d]", a, b);
            if (rc_lag_compile(err, row->items[b], f, d, &d->M[a * n + b]))
                return RC_ERR_PARSE;
        }
    }
    if (rc_lag_compile(err, pot, "model.potential", d, &d->V))
        return RC_ERR_PARSE;
    cons = rc_ynode_get(map, "constraints", NULL);
    if (cons) {
        if (cons->kind != RC_YNODE_SEQUENCE)
            return rc_bad(err, cons, "model.constraints",
                          "expected a list of formulas g(q) >= 0, got %s",
                          rc_kind_name(cons));
        if (cons->n > RC_LAG_MAX_G)
            return rc_bad(err, cons, "model.constraints",
                          "at most %d constraints, got %d", RC_LAG_MAX_G,
                          cons->n);
        d->ng = cons->n;
    }
    d->g = calloc((size_t)(d->ng > 0 ? d->ng : 1), sizeof *d->g);
    d->dg = calloc((size_t)(d->ng > 0 ? d->ng * n : 1), sizeof *d->dg);
    if (!d->g || !d->dg)
        return rc_lag_nomem(err);
    for (c = 0; c < d->ng; ++c) {
        snprintf(f, sizeof f, "model.constraints[%d]", c);
        if (rc_lag_compile(err, cons->items[c], f, d, &d->g[c]))
            return RC_ERR_PARSE;
        for (a = 0; a < n; ++a)
            if (rc_lag_diff(err, d->g[c], a, &d->dg[c * n + a]))
                return err->status;
    }
    for (c = 0; c < n; ++c) {
        if (rc_lag_diff(err, d->V, c, &d->dV[c]))
            return err->status;
        for (e = 0; e < n; ++e)
            if (rc_lag_diff(err, d->dV[c], e, &d->d2V[c * n + e]))
                return err->status;
        for (a = 0; a < n; ++a)
            for (b = a; b < n; ++b) {
                if (rc_lag_diff(err, d->M[a * n + b], c,
                                &d->dM[(c * n + a) * n + b]))
                    return err->status;
                for (e = 0; e < n; ++e)
                    if (rc_lag_diff(err, d->dM[(c * n + a) * n + b], e,
                                    &d->d2M[((c * n + e) * n + a) * n + b]))
                        return err->status;
            }
    }
    /* the lower triangle, compiled only to be checked */
    return RC_OK;
}

/* Check the given lower triangle of mass_matrix equals the upper one at
 * q0 (to 1e-12 relative: the two are formulas of the same number, so
 * only their rounding may differ). */
static rc_status rc_lag_check_symmetry(rc_model *m, const rc_ynode *map,
                                       rc_lag_data *d, rc_error *err)
{
    rc_ynode *mm = rc_ynode_get(map, "mass_matrix", NULL);
    int n = m->n, a, b;
    char f[200];
    for (a = 0; a < n; ++a)
        d->vals[a] = m->q0[a];
    for (a = 0; a < m->npar; ++a)
        d->vals[n + a] = m->par[a];
    for (a = 1; a < n; ++a)
        for (b = 0; b < a; ++b) {
            rc_expr *lo = NULL;
            double x, y;
            snprintf(f, sizeof f, "model.mass_matrix[%d][%d]", a, b);
            if (rc_lag_compile(err, mm->items[a]->items[b], f, d, &lo))
                return RC_ERR_PARSE;
            x = rc_expr_eval(lo, d->vals);
            y = rc_expr_eval(d->M[b * n + a], d->vals);
            rc_expr_free(lo);
            if (!(fabs(x - y) <= 1e-12 * fmax(1.0, fmax(fabs(x), fabs(y)))))
                return rc_bad(err, mm->items[a]->items[b], f,
                              "the mass matrix must be symmetric: %.17g here "
                              "but %.17g at [%d][%d] (at the initial q)",
                              x, y, b, a);
        }
    return RC_OK;
}

/* Cholesky of the n x n M (copied): 0 when positive definite. */
static int rc_lag_not_spd(int n, const double *Min)
{
    double A[RC_LAG_MAX_N * RC_LAG_MAX_N];
    int i, j, k;
    memcpy(A, Min, sizeof(double) * (size_t)(n * n));
    for (j = 0; j < n; ++j) {
        double s = A[j * n + j];
        for (k = 0; k < j; ++k)
            s -= A[j * n + k] * A[j * n + k];
        if (!(s > 0.0))
            return 1;
        A[j * n + j] = sqrt(s);
        for (i = j + 1; i < n; ++i) {
            double t = A[i * n + j];
            for (k = 0; k < j; ++k)
                t -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = t / A[j * n + j];
        }
    }
    return 0;
}

/* Add the built-in's parameters the scenario did not give, with the
 * seed's values (m->par_name and m->par grow). */
static rc_status rc_lag_default_params(rc_model *m, const rc_lag_builtin *bi,
                                       rc_lag_data *d, rc_error *err)
{
    int k;
    for (k = 0; k < bi->npar; ++k) {
        int at = rc_lag_par_index(m, bi->par[k]);
        if (at < 0) {
            char(*nn)[RC_MODEL_NAME_MAX] =
                realloc(m->par_name, sizeof *nn * (size_t)(m->npar + 1));
            double *np;
            if (!nn)
                return rc_lag_nomem(err);
            m->par_name = nn;
            np = realloc(m->par, sizeof *np * (size_t)(m->npar + 1));
            if (!np)
                return rc_lag_nomem(err);
            m->par = np;
            snprintf(m->par_name[m->npar], RC_MODEL_NAME_MAX, "%s",
                     bi->par[k]);
            m->par[m->npar] = bi->def[k];
            at = m->npar++;
        }
        d->pidx[k] = at;
    }
    return RC_OK;
}

static rc_status rc_lag_load_initial(rc_model *m, const rc_ynode *map,
                                     const rc_lag_builtin *bi,
                                     rc_error *err)
{
    rc_ynode *init, *qn, *vn, *pn, *xn;
    double q[RC_MODEL_MAX_DIM + 3], v[RC_MODEL_MAX_DIM + 3];
    int n = m->n, a, b;
    static const char *const keys[] = {"q", "qdot", "p", "xi", NULL};
    rc_lag_jet *j;
    if (rc_require(err, map, "initial", "model", &init) ||
        rc_expect_mapping(err, init, "model.initial") ||
        rc_check_keys(err, init, "model.initial", keys))
        return RC_ERR_PARSE;
    m->q0 = calloc((size_t)n, sizeof(double));
    m->p0 = calloc((size_t)n, sizeof(double));
    j = malloc(sizeof *j);
    if (!m->q0 || !m->p0 || !j) {
        free(j);
        return rc_lag_nomem(err);
    }
    qn = rc_ynode_get(init, "q", NULL);
    vn = rc_ynode_get(init, "qdot", NULL);
    pn = rc_ynode_get(init, "p", NULL);
    xn = rc_ynode_get(init, "xi", NULL);
    if (xn) {
        double beta, par[8], p[2];
        if (!bi || bi->body != RC_LAG_CART || qn || vn || pn) {
            free(j);
            return rc_bad(err, xn, "model.initial.xi",
                          "xi (the seed's map Xi(beta)) is for builtin "
                          "cart_pendulum, alone");
        }
        if (rc_get_number(err, xn, "model.initial.xi", &beta)) {
            free(j);
            return RC_ERR_PARSE;
        }
        for (a = 0; a < 8; ++a)
            par[a] = ((rc_lag_data *)m->data)->pidx[a] >= 0
                         ? m->par[((rc_lag_data *)m->data)->pidx[a]]
                         : 0.0;
        rc_k_lag_cart_pendulum_xi(par, beta, q, v, p);
        m->q0[0] = q[0];
        m->q0[1] = q[1];
        m->p0[0] = p[0];
        m->p0[1] = p[1];
        free(j);
        return RC_OK;
    }
    if (!qn || (!vn == !pn)) {
        free(j);
        return rc_bad(err, init, "model.initial",
                      "give q and one of qdot or p%s",
                      bi && bi->body == RC_LAG_CART ? " (or xi: beta)" : "");
    }
    if (rc_get_numbers(err, qn, "model.initial.q", n, q) ||
        rc_get_numbers(err, vn ? vn : pn,
                      vn ? "model.initial.qdot" : "model.initial.p", n, v)) {
        free(j);
        return RC_ERR_PARSE;
    }
    for (a = 0; a < n; ++a)
        m->q0[a] = q[a];
    rc_lag_eval(m, q, 0, j);
    if (rc_lag_not_spd(n, j->M)) {
        free(j);
        return rc_bad(err, qn, "model.initial.q",
                      "the mass matrix is not positive definite at this q");
    }
    for (a = 0; a < n; ++a) {
        if (pn) {
            m->p0[a] = v[a];
            continue;
        }
        m->p0[a] = 0.0;
        for (b = 0; b < n; ++b)
            m->p0[a] += j->M[a * n + b] * v[b];
    }
    for (a = 0; a < j->ng; ++a)
        if (!(j->g[a] >= 0.0)) {
            double ga = j->g[a];
            free(j);
            return rc_bad(err, qn, "model.initial.q",
                          "the initial q violates constraint %d "
                          "(g = %.6g < 0)",
                          a, ga);
        }
    free(j);
    return RC_OK;
}

static rc_status rc_lag_load(rc_model *m, const rc_ynode *map, rc_error *err)
{
    rc_lag_data *d;
    const rc_lag_builtin *bi = NULL;
    rc_ynode *cons;
    rc_status st;
    int k;
    d = calloc(1, sizeof *d);
    if (!d)
        return rc_lag_nomem(err);
    for (k = 0; k < 8; ++k)
        d->pidx[k] = -1;
    m->data = d;
    m->naux = 0;
    cons = rc_ynode_get(map, "constraints", NULL);
    if (m->builtin[0]) {
        for (k = 0; k < RC_LAG_NBUILTIN; ++k)
            if (!strcmp(m->builtin, rc_lag_builtins[k].name))
                bi = &rc_lag_builtins[k];
        if (!bi)
            return rc_bad(err, rc_ynode_get(map, "builtin", NULL),
                          "model.builtin",
                          "unknown builtin '%s' for kind lagrangian (known: "
                          "cart_pendulum, double_pendulum)",
                          m->builtin);
        if (rc_ynode_get(map, "mass_matrix", NULL) ||
            rc_ynode_get(map, "potential", NULL))
            return rc_bad(err, map, "model.builtin",
                          "give either builtin or mass_matrix and "
                          "potential, not both");
        if (m->n == 0) {
            m->n = 2;
            for (k = 0; k < 2; ++k)
                snprintf(m->coord[k], RC_MODEL_NAME_MAX, "%s",
                         bi->coord[k]);
        } else if (m->n != 2 || strcmp(m->coord[0], bi->coord[0]) ||
                   strcmp(m->coord[1], bi->coord[1])) {
            return rc_bad(err, rc_ynode_get(map, "coordinates", NULL),
                          "model.coordinates",
                          "builtin %s has coordinates [%s, %s]", bi->name,
                          bi->coord[0], bi->coord[1]);
        }
        d->body = bi->body;
        d->ng = 1;
        if (cons) {
            if (cons->kind != RC_YNODE_SEQUENCE || cons->n != 0)
                return rc_bad(err, cons, "model.constraints",
                              "a builtin has its own constraint; give [] "
                              "to run it without");
            d->ng = 0;
        }
        if ((st = rc_lag_default_params(m, bi, d, err)) != RC_OK)
            return st;
    } else {
        d->body = RC_LAG_EXPR;
        if ((st = rc_lag_load_exprs(m, map, d, err)) != RC_OK)
            return st;
    }
    if ((st = rc_lag_load_initial(m, map, bi, err)) != RC_OK)
        return st;
    if (d->body == RC_LAG_EXPR)
        return rc_lag_check_symmetry(m, map, d, err);
    return RC_OK;
}

const rc_model_kind rc_model_kind_lagrangian = {
    "lagrangian",
    "L = 1/2 qdot^T M(q) qdot - V(q) with unilateral g_k(q) >= 0 (seed 001)",
    rc_lag_keys, rc_lag_load, rc_lag_free_data};

/* The kind "index1": generalized Hamiltonian systems with index-1
 * constraints (seed 002, Prop. 1–2, 4, 6), see index1.h.
 *
 *   model:
 *     kind: index1
 *     builtin: vehicle            # or heisenberg; or omit and give
 *     coordinates: [x, y]         #   coordinates and one of
 *     hamiltonian: "..."          #   H over q, p_<q>, multipliers, params
 *     multipliers: [lam]          #   (names of λ; required with it)
 *     mass: [1, 1]                #   or the Lagrange problem of Prop. 1:
 *     potential: "..."            #   M (numbers: diagonal or n rows),
 *     velocity_constraints:       #   V(q), and the rows g_i(q), giving
 *       - ["-y", "x"]             #   H = ½(p+Σλg)ᵀM⁻¹(p+Σλg) + V
 *     holonomic: ["x^2+y^2-1"]    # optional h(q) = 0 (method rattle)
 *     initial: {q: [..], p: [..], lambda: [..]}
 *
 * Every route ends in the same place: H, ∇H, ∇²H at z.  Built-ins call
 * the bodies of src/kernels/rc_index1.h; expressions are differentiated
 * symbolically once (first and second derivatives) and evaluated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index1.h"
#include "../expr.h"
#include "../scenario_read.h"
#include "../../kernels/rc_index1.h"

#define I1_VNAME (RC_MODEL_NAME_MAX + 4)

typedef struct i1_data {
    int builtin;     /* RC_I1_* */
    double bpar[4];  /* built-in parameters (defaults, then overrides) */
    int k, l;        /* multipliers, holonomic constraints */
    int lagrange;    /* H from the Lagrange problem (kin/pot defined) */
    char *htext;     /* H (expressions) */
    char *vtext;     /* V (Lagrange expressions) */
    char **hol;      /* [l] h_j(q) */
    int nvars;       /* q, p_q, λ, parameters */
    int npv;         /* parameters among the names, values in pv */
    const double *pv;
    char (*vname)[I1_VNAME];
    const char **vptr;
} i1_data;

struct rc_i1_ev {
    const rc_model *m;
    const i1_data *d;
    int n, k, l, dim;
    rc_expr *H, *V, **dH, **d2H, **h, **dh; /* d2H: upper triangle */
    double *vals;                          /* [nvars] */
    double *grad, *hess, *A, *r, *Dh;
    int *piv;
};

int rc_i1_nmult(const rc_model *m) { return ((const i1_data *)m->data)->k; }
int rc_i1_nholo(const rc_model *m) { return ((const i1_data *)m->data)->l; }

/* ------------------------------------------------------------------ */
/* Dense LU solve with partial pivoting. */

int rc_i1_solve(int n, double *A, double *b, int *piv)
{
    int i, j, c;
    for (c = 0; c < n; ++c) {
        int p = c;
        double big = fabs(A[c * n + c]);
        for (i = c + 1; i < n; ++i)
            if (fabs(A[i * n + c]) > big) {
                big = fabs(A[i * n + c]);
                p = i;
            }
        if (!(big > 0.0))
            return -1;
        piv[c] = p;
        if (p != c) {
            double t;
            for (j = 0; j < n; ++j) {
                t = A[c * n + j];
                A[c * n + j] = A[p * n + j];
                A[p * n + j] = t;
            }
            t = b[c];
            b[c] = b[p];
            b[p] = t;
        }
        for (i = c + 1; i < n; ++i) {
            double f = A[i * n + c] / A[c * n + c];
            if (f == 0.0)
                continue;
            for (j = c + 1; j < n; ++j)
                A[i * n + j] -= f * A[c * n + j];
            b[i] -= f * b[c];
        }
    }
    for (i = n - 1; i >= 0; --i) {
        double s = b[i];
        for (j = i + 1; j < n; ++j)
            s -= A[i * n + j] * b[j];
        b[i] = s / A[i * n + i];
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Evaluators. */

void rc_i1_ev_free(rc_i1_ev *e)
{
    int a;
    if (!e)
        return;
    rc_expr_free(e->H);
    rc_expr_free(e->V);
    if (e->dH)
        for (a = 0; a < e->dim; ++a)
            rc_expr_free(e->dH[a]);
    if (e->d2H)
        for (a = 0; a < e->dim * e->dim; ++a)
            rc_expr_free(e->d2H[a]);
    if (e->h)
        for (a = 0; a < e->l; ++a)
            rc_expr_free(e->h[a]);
    if (e->dh)
        for (a = 0; a < e->l * e->n; ++a)
            rc_expr_free(e->dh[a]);
    free(e->dH);
    free(e->d2H);
    free(e->h);
    free(e->dh);
    free(e->vals);
    free(e->grad);
    free(e->hess);
    free(e->A);
    free(e->r);
    free(e->Dh);
    free(e->piv);
    free(e);
}

static rc_status i1_nomem(rc_error *err)
{
    err->status = RC_ERR_NOMEM;
    snprintf(err->message, sizeof err->message,
             "out of memory compiling the model's expressions");
    return RC_ERR_NOMEM;
}

rc_status rc_i1_ev_create(const rc_model *m, rc_i1_ev **out, rc_error *err)
{
    const i1_data *d = (const i1_data *)m->data;
    rc_i1_ev *e = calloc(1, sizeof *e);
    char msg[512];
    int a, b, dim, nv;
    *out = NULL;
    if (!e)
        return i1_nomem(err);
    e->m = m;
    e->d = d;
    e->n = m->n;
    e->k = d->k;
    e->l = d->l;
    e->dim = dim = 2 * m->n + d->k;
    nv = d->nvars > 0 ? d->nvars : 1;
    e->vals = calloc((size_t)nv, sizeof(double));
    e->grad = calloc((size_t)dim, sizeof(double));
    e->hess = calloc((size_t)(dim * dim), sizeof(double));
    e->A = calloc((size_t)(dim * dim), sizeof(double));
    e->r = calloc((size_t)dim, sizeof(double));
    e->piv = calloc((size_t)dim, sizeof(int));
    e->Dh = calloc((size_t)(d->l * m->n + 1), sizeof(double));
    if (!e->vals || !e->grad || !e->hess || !e->A || !e->r || !e->piv ||
        !e->Dh)
        goto nomem;
    for (a = 0; a < d->npv; ++a)
        e->vals[2 * m->n + d->k + a] = d->pv[a];
    if (d->htext) {
        e->H = rc_expr_compile(d->htext, d->nvars, d->vptr, msg, sizeof msg);
        if (!e->H)
            goto nomem; /* compiled once at load: only memory can fail */
        if (d->vtext &&
            !(e->V = rc_expr_compile(d->vtext, d->nvars, d->vptr, msg,
                                     sizeof msg)))
            goto nomem;
        e->dH = calloc((size_t)dim, sizeof(rc_expr *));
        e->d2H = calloc((size_t)(dim * dim), sizeof(rc_expr *));
        if (!e->dH || !e->d2H)
            goto nomem;
        for (a = 0; a < dim; ++a) {
            if (rc_expr_independent_of(e->H, a))
                continue;
            if (!(e->dH[a] = rc_expr_derivative(e->H, a)))
                goto nomem;
        }
        for (a = 0; a < dim; ++a)
            for (b = a; b < dim; ++b) {
                if (!e->dH[a] || rc_expr_independent_of(e->dH[a], b))
                    continue;
                if (!(e->d2H[a * dim + b] = rc_expr_derivative(e->dH[a], b)))
                    goto nomem;
            }
    }
    if (d->l > 0) {
        e->h = calloc((size_t)d->l, sizeof(rc_expr *));
        e->dh = calloc((size_t)(d->l * m->n), sizeof(rc_expr *));
        if (!e->h || !e->dh)
            goto nomem;
        for (a = 0; a < d->l; ++a) {
            if (!(e->h[a] = rc_expr_compile(d->hol[a], d->nvars, d->vptr,
                                            msg, sizeof msg)))
                goto nomem;
            for (b = 0; b < m->n; ++b)
                if (!rc_expr_independent_of(e->h[a], b) &&
                    !(e->dh[a * m->n + b] = rc_expr_derivative(e->h[a], b)))
                    goto nomem;
        }
    }
    *out = e;
    return RC_OK;
nomem:
    rc_i1_ev_free(e);
    return i1_nomem(err);
}

static void i1_set_vals(rc_i1_ev *e, const double *q, const double *p,
                        const double *lam)
{
    int a;
    for (a = 0; a < e->n; ++a) {
        e->vals[a] = q[a];
        if (p)
            e->vals[e->n + a] = p[a];
    }
    if (lam)
        for (a = 0; a < e->k; ++a)
            e->vals[2 * e->n + a] = lam[a];
}

static void i1_builtin_terms(const i1_data *d, const double *q,
                             rc_i1_terms *t)
{
    if (d->builtin == RC_I1_VEHICLE)
        rc_k_i1_vehicle(d->bpar, q, t);
    else
        rc_k_i1_heisenberg(q, t);
}

void rc_i1_ev_hamiltonian(rc_i1_ev *e, const double *q, const double *p,
                          const double *lam, double *H, double *grad,
                          double *hess, double *kin, double *pot)
{
    const i1_data *d = e->d;
    int a, b, dim = e->dim;
    if (d->builtin != RC_I1_EXPR) {
        rc_i1_terms t;
        i1_builtin_terms(d, q, &t);
        rc_k_i1_hamiltonian(&t, p, lam, H, grad, hess, kin);
        if (pot)
            *pot = t.V;
        return;
    }
    i1_set_vals(e, q, p, lam);
    if (H || kin) {
        double h = rc_expr_eval(e->H, e->vals);
        if (H)
            *H = h;
        if (kin)
            *kin = e->V ? h - rc_expr_eval(e->V, e->vals) : NAN;
    }
    if (pot)
        *pot = e->V ? rc_expr_eval(e->V, e->vals) : NAN;
    if (grad)
        for (a = 0; a < dim; ++a)
            grad[a] = e->dH[a] ? rc_expr_eval(e->dH[a], e->vals) : 0.0;
    if (hess)
        for (a = 0; a < dim; ++a)
            for (b = a; b < dim; ++b)
                hess[a * dim + b] = hess[b * dim + a] =
                    e->d2H[a * dim + b]
                        ? rc_expr_eval(e->d2H[a * dim + b], e->vals)
                        : 0.0;
}

void rc_i1_ev_holonomic(rc_i1_ev *e, const double *q, double *h, double *Dh)
{
    int a, b;
    if (e->l == 0)
        return;
    i1_set_vals(e, q, NULL, NULL);
    for (a = 0; a < e->l; ++a) {
        if (h)
            h[a] = rc_expr_eval(e->h[a], e->vals);
        if (Dh)
            for (b = 0; b < e->n; ++b)
                Dh[a * e->n + b] =
                    e->dh[a * e->n + b]
                        ? rc_expr_eval(e->dh[a * e->n + b], e->vals)
                        : 0.0;
    }
}

int rc_i1_ev_solve_lambda(rc_i1_ev *e, const double *q, const double *p,
                          double *lam, double tol, int maxit)
{
    int n = e->n, k = e->k, dim = e->dim, it, a, b;
    double prev = INFINITY;
    if (k == 0)
        return 0;
    for (it = 1; it <= maxit; ++it) {
        double du = 0.0, sc = 1.0;
        rc_i1_ev_hamiltonian(e, q, p, lam, NULL, e->grad, e->hess, NULL,
                             NULL);
        for (a = 0; a < k; ++a) {
            e->r[a] = e->grad[2 * n + a];
            for (b = 0; b < k; ++b)
                e->A[a * k + b] = e->hess[(2 * n + a) * dim + 2 * n + b];
        }
        if (rc_i1_solve(k, e->A, e->r, e->piv))
            return -1;
        for (a = 0; a < k; ++a) {
            lam[a] -= e->r[a];
            du = fmax(du, fabs(e->r[a]));
            sc = fmax(sc, fabs(lam[a]));
        }
        if (!isfinite(du))
            return -1;
        if (rc_i1_newton_stop(du, prev, sc, tol))
            return it;
        prev = du;
    }
    return -1;
}

int rc_i1_ev_project(rc_i1_ev *e, const double *q, double *p, double *lam,
                     double *nu, double tol, int maxit)
{
    int n = e->n, k = e->k, l = e->l, dim = e->dim, N = e->l + e->k;
    int it, a, b, c, bb;
    double prev = INFINITY, *Dh = e->Dh, *A = e->A, *r = e->r;
    if (nu)
        for (a = 0; a < l; ++a)
            nu[a] = 0.0;
    rc_i1_ev_holonomic(e, q, NULL, Dh);
    for (it = 1; it <= maxit; ++it) {
        double du = 0.0, sc = 1.0;
        rc_i1_ev_hamiltonian(e, q, p, lam, NULL, e->grad, e->hess, NULL,
                             NULL);
        for (a = 0; a < l; ++a) {
            r[a] = 0.0;
            for (b = 0; b < n; ++b)
                r[a] += Dh[a * n + b] * e->grad[n + b];
            for (c = 0; c < l; ++c) {
                double s = 0.0;
                for (b = 0; b < n; ++b)
                    for (bb = 0; bb < n; ++bb)
                        s += Dh[a * n + b] * e->hess[(n + b) * dim + n + bb] *
                             Dh[c * n + bb];
                A[a * N + c] = s;
            }
            for (c = 0; c < k; ++c) {
                double s = 0.0;
                for (b = 0; b < n; ++b)
                    s += Dh[a * n + b] * e->hess[(n + b) * dim + 2 * n + c];
                A[a * N + l + c] = s;
                A[(l + c) * N + a] = s;
            }
        }
        for (c = 0; c < k; ++c) {
            r[l + c] = e->grad[2 * n + c];
            for (b = 0; b < k; ++b)
                A[(l + c) * N + l + b] = e->hess[(2 * n + c) * dim + 2 * n + b];
        }
        if (rc_i1_solve(N, A, r, e->piv))
            return -1;
        for (a = 0; a < l; ++a) {
            for (b = 0; b < n; ++b)
                p[b] -= Dh[a * n + b] * r[a];
            if (nu)
                nu[a] -= r[a];
            du = fmax(du, fabs(r[a]));
        }
        for (c = 0; c < k; ++c) {
            lam[c] -= r[l + c];
            du = fmax(du, fabs(r[l + c]));
            sc = fmax(sc, fabs(lam[c]));
        }
        if (!isfinite(du))
            return -1;
        if (rc_i1_newton_stop(du, prev, sc, tol))
            return it;
        prev = du;
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Loading. */

static const char *const i1_keys[] = {
    "multipliers", "hamiltonian",  "mass",    "potential",
    "velocity_constraints", "holonomic", "initial", NULL};

static void i1_free_data(rc_model *m)
{
    i1_data *d = (i1_data *)m->data;
    int a;
    if (!d)
        return;
    free(d->htext);
    free(d->vtext);
    if (d->hol)
        for (a = 0; a < d->l; ++a)
            free(d->hol[a]);
    free(d->hol);
    free(d->vname);
    free(d->vptr);
    free(d);
    m->data = NULL;
}

/* A growing string for building H's text. */
typedef struct i1_buf {
    char *s;
    size_t len, cap;
    int bad;
} i1_buf;

static void i1_cat(i1_buf *b, const char *t)
{
    size_t n = strlen(t);
    if (b->bad)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = 2 * (b->len + n + 1) + 256;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->bad = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, t, n + 1);
    b->len += n;
}

static char *i1_strdup(const char *s)
{
    char *c = malloc(strlen(s) + 1);
    if (c)
        strcpy(c, s);
    return c;
}

static const char *const vehicle_par[] = {"L", "alpha", "beta", "bowl"};
/* L = 0.3 and α = β = 1 are what the seed's circle (§5, Fig. 3) implies:
 * p_θ = a(α + L²) = 1.09 with a = p_φ/β = 1. */
static const double vehicle_def[] = {0.3, 1.0, 1.0, 1.0};
static const char *const vehicle_q[] = {"x", "y", "theta", "phi"};
static const char *const heis_q[] = {"x", "y", "z"};

static rc_status i1_builtin(rc_model *m, i1_data *d, const rc_ynode *map,
                            rc_error *err)
{
    const char *const *qn;
    int n, a, b, np = 0;
    const rc_ynode *bn = rc_ynode_get(map, "builtin", NULL);
    static const char *const expr_keys[] = {"multipliers", "hamiltonian",
                                            "mass", "potential",
                                            "velocity_constraints", NULL};
    for (a = 0; expr_keys[a]; ++a) {
        rc_ynode *key = NULL;
        char f[64];
        if (rc_ynode_get(map, expr_keys[a], &key)) {
            snprintf(f, sizeof f, "model.%s", expr_keys[a]);
            return rc_bad(err, key, f,
                          "a built-in model (builtin: %s) takes no '%s'; "
                          "omit builtin to give the model as expressions",
                          m->builtin, expr_keys[a]);
        }
    }
    if (!strcmp(m->builtin, "vehicle")) {
        d->builtin = RC_I1_VEHICLE;
        qn = vehicle_q;
        n = 4;
        d->k = 2;
        np = 4;
    } else if (!strcmp(m->builtin, "heisenberg")) {
        d->builtin = RC_I1_HEISENBERG;
        qn = heis_q;
        n = 3;
        d->k = 1;
    } else {
        return rc_bad(err, bn, "model.builtin",
                      "unknown built-in '%s' for kind index1 (known: "
                      "vehicle, heisenberg)",
                      m->builtin);
    }
    if (m->n == 0) {
        m->n = n;
        for (a = 0; a < n; ++a)
            snprintf(m->coord[a], RC_MODEL_NAME_MAX, "%s", qn[a]);
    } else {
        int same = m->n == n;
        for (a = 0; same && a < n; ++a)
            same = !strcmp(m->coord[a], qn[a]);
        if (!same)
            return rc_bad(err, rc_ynode_get(map, "coordinates", NULL),
                          "model.coordinates",
                          "the built-in '%s' has coordinates [%s, %s, %s%s%s]",
                          m->builtin, qn[0], qn[1], qn[2], n > 3 ? ", " : "",
                          n > 3 ? qn[3] : "");
    }
    /* defaults join the scenario's parameters (summary.json shows all) */
    for (a = 0; a < np; ++a)
        if (rc_model_param_default(m, vehicle_par[a], vehicle_def[a]))
            return i1_nomem(err);
    for (b = 0; b < m->npar; ++b) {
        int found = -1;
        for (a = 0; a < np; ++a)
            if (!strcmp(m->par_name[b], vehicle_par[a]))
                found = a;
        if (found < 0) {
            const rc_ynode *pn = rc_ynode_get(map, "parameters", NULL);
            char f[128];
            snprintf(f, sizeof f, "model.parameters.%s", m->par_name[b]);
            return rc_bad(err, pn, f,
                          "the built-in '%s' has %s", m->builtin,
                          np ? "the parameters L, alpha, beta, bowl"
                             : "no parameters");
        }
        d->bpar[found] = m->par[b];
    }
    if (d->builtin == RC_I1_VEHICLE &&
        !(d->bpar[0] > 0.0 && d->bpar[1] > 0.0 && d->bpar[2] > 0.0))
        return rc_bad(err, rc_ynode_get(map, "parameters", NULL),
                      "model.parameters",
                      "L, alpha and beta must be > 0 (got %g, %g, %g): with "
                      "L = 0 the constraints (26) and (28) are dependent "
                      "when phi = theta, with alpha or beta <= 0 M is not "
                      "a mass matrix",
                      d->bpar[0], d->bpar[1], d->bpar[2]);
    return RC_OK;
}

/* Names: q, p_q, multipliers, parameters; no two alike. */
static rc_status i1_names(rc_model *m, i1_data *d, const rc_ynode *map,
                          const rc_ynode *mult, rc_error *err)
{
    int a, b, n = m->n, k = d->k;
    d->npv = m->npar;
    d->pv = m->par;
    d->nvars = 2 * n + k + d->npv;
    d->vname = calloc((size_t)d->nvars, sizeof *d->vname);
    d->vptr = calloc((size_t)d->nvars, sizeof *d->vptr);
    if (!d->vname || !d->vptr)
        return i1_nomem(err);
    for (a = 0; a < n; ++a) {
        snprintf(d->vname[a], I1_VNAME, "%s", m->coord[a]);
        snprintf(d->vname[n + a], I1_VNAME, "p_%s", m->coord[a]);
    }
    for (a = 0; a < k; ++a) {
        if (mult) {
            const char *s;
            char f[64];
            snprintf(f, sizeof f, "model.multipliers[%d]", a);
            if (rc_get_string(err, mult->items[a], f, &s))
                return RC_ERR_PARSE;
            if (strlen(s) >= RC_MODEL_NAME_MAX)
                return rc_bad(err, mult->items[a], f, "name too long");
            snprintf(d->vname[2 * n + a], I1_VNAME, "%s", s);
        } else {
            snprintf(d->vname[2 * n + a], I1_VNAME, "lambda%d", a + 1);
        }
    }
    for (a = 0; a < d->npv; ++a)
        snprintf(d->vname[2 * n + k + a], I1_VNAME, "%s", m->par_name[a]);
    for (a = 0; a < d->nvars; ++a) {
        d->vptr[a] = d->vname[a];
        for (b = 0; b < a; ++b)
            if (!strcmp(d->vname[a], d->vname[b]))
                return rc_bad(err, map, "model",
                              "the name '%s' is used twice among the "
                              "coordinates, their momenta p_<name>, the "
                              "multipliers and the parameters",
                              d->vname[a]);
    }
    return RC_OK;
}

static rc_status i1_check_expr(rc_error *err, const rc_ynode *node,
                               const char *field, const char *text,
                               const i1_data *d)
{
    char msg[512];
    rc_expr *e = rc_expr_compile(text, d->nvars, d->vptr, msg, sizeof msg);
    if (!e)
        return rc_bad(err, node, field, "%s", msg);
    rc_expr_free(e);
    return RC_OK;
}

/* The Lagrange problem of Prop. 1 as the text of H. */
static rc_status i1_lagrange_text(rc_model *m, i1_data *d,
                                  const rc_ynode *map, rc_error *err)
{
    const rc_ynode *mass = rc_ynode_get(map, "mass", NULL);
    const rc_ynode *pot = rc_ynode_get(map, "potential", NULL);
    const rc_ynode *vc = rc_ynode_get(map, "velocity_constraints", NULL);
    int n = m->n, k = d->k, a, b, c;
    double *M = calloc((size_t)(n * n), sizeof(double));
    double *Mi = calloc((size_t)(n * n), sizeof(double));
    double *col = calloc((size_t)n, sizeof(double));
    int *piv = calloc((size_t)(n + 1), sizeof(int));
    i1_buf B = {NULL, 0, 0, 0};
    char f[128], num[64];
    const char *vt = "0";
    rc_status st = RC_OK;
    if (!M || !Mi || !col || !piv) {
        st = i1_nomem(err);
        goto done;
    }
    for (a = 0; a < n; ++a)
        M[a * n + a] = 1.0;
    if (mass) {
        if (mass->kind != RC_YNODE_SEQUENCE || mass->n != n) {
            st = rc_bad(err, mass, "model.mass",
                        "expected a list of %d numbers (the diagonal of M) "
                        "or %d rows of %d numbers",
                        n, n, n);
            goto done;
        }
        for (a = 0; a < n; ++a) {
            const rc_ynode *it = mass->items[a];
            snprintf(f, sizeof f, "model.mass[%d]", a);
            if (it->kind == RC_YNODE_SEQUENCE) {
                if ((st = rc_get_numbers(err, it, f, n, col)))
                    goto done;
                for (b = 0; b < n; ++b)
                    M[a * n + b] = col[b];
            } else if ((st = rc_get_number(err, it, f, &M[a * n + a]))) {
                goto done;
            }
        }
        for (a = 0; a < n; ++a)
            for (b = 0; b < a; ++b)
                if (M[a * n + b] != M[b * n + a]) {
                    st = rc_bad(err, mass, "model.mass",
                                "M must be symmetric (M[%d][%d] = %g, "
                                "M[%d][%d] = %g)",
                                a, b, M[a * n + b], b, a, M[b * n + a]);
                    goto done;
                }
    }
    for (c = 0; c < n; ++c) { /* M⁻¹, column by column */
        double *A = calloc((size_t)(n * n), sizeof(double));
        if (!A) {
            st = i1_nomem(err);
            goto done;
        }
        memcpy(A, M, (size_t)(n * n) * sizeof(double));
        for (a = 0; a < n; ++a)
            col[a] = a == c ? 1.0 : 0.0;
        if (rc_i1_solve(n, A, col, piv)) {
            free(A);
            st = rc_bad(err, mass ? mass : map, "model.mass",
                        "M is singular");
            goto done;
        }
        free(A);
        for (a = 0; a < n; ++a)
            Mi[a * n + c] = col[a];
    }
    if (pot) {
        if ((st = rc_get_string(err, pot, "model.potential", &vt)) ||
            (st = i1_check_expr(err, pot, "model.potential", vt, d)))
            goto done;
        for (a = n; a < d->nvars - d->npv; ++a)
            if (strstr(vt, d->vname[a])) {
                rc_expr *e = rc_expr_compile(vt, d->nvars, d->vptr, NULL, 0);
                int dep = e && !rc_expr_independent_of(e, a);
                rc_expr_free(e);
                if (dep) {
                    st = rc_bad(err, pot, "model.potential",
                                "V must depend on the coordinates and "
                                "parameters only (it mentions '%s')",
                                d->vname[a]);
                    goto done;
                }
            }
    }
    if (!(d->vtext = i1_strdup(vt))) {
        st = i1_nomem(err);
        goto done;
    }
    /* u_a = p_a + Σ_i λ_i g_ia, as "(p_a+(λ_1)*(g_1a)+...)" */
    i1_cat(&B, "0.5*(0");
    for (a = 0; a < n; ++a)
        for (b = 0; b < n; ++b) {
            int t;
            if (Mi[a * n + b] == 0.0)
                continue;
            snprintf(num, sizeof num, "%.17g", Mi[a * n + b]);
            i1_cat(&B, "+(");
            i1_cat(&B, num);
            i1_cat(&B, ")");
            for (t = 0; t < 2; ++t) {
                int e = t ? b : a, i;
                i1_cat(&B, "*(");
                i1_cat(&B, d->vname[n + e]);
                for (i = 0; i < k; ++i) {
                    const char *gs;
                    const rc_ynode *row = vc->items[i];
                    snprintf(f, sizeof f, "model.velocity_constraints[%d][%d]",
                             i, e);
                    if ((st = rc_get_string(err, row->items[e], f, &gs)) ||
                        (st = i1_check_expr(err, row->items[e], f, gs, d)))
                        goto done;
                    i1_cat(&B, "+(");
                    i1_cat(&B, d->vname[2 * n + i]);
                    i1_cat(&B, ")*(");
                    i1_cat(&B, gs);
                    i1_cat(&B, ")");
                }
                i1_cat(&B, ")");
            }
        }
    i1_cat(&B, ")+(");
    i1_cat(&B, vt);
    i1_cat(&B, ")");
    if (B.bad) {
        st = i1_nomem(err);
        goto done;
    }
    d->htext = B.s;
    B.s = NULL;
    d->lagrange = 1;
    st = i1_check_expr(err, map, "model", d->htext, d);
done:
    free(B.s);
    free(M);
    free(Mi);
    free(col);
    free(piv);
    return st;
}

static rc_status i1_expressions(rc_model *m, i1_data *d, const rc_ynode *map,
                                rc_error *err)
{
    const rc_ynode *hn = rc_ynode_get(map, "hamiltonian", NULL);
    const rc_ynode *mult = rc_ynode_get(map, "multipliers", NULL);
    const rc_ynode *vc = rc_ynode_get(map, "velocity_constraints", NULL);
    rc_ynode *key = NULL;
    const char *text;
    int a;
    rc_status st;
    if (m->n <= 0)
        return rc_bad(err, map, "model.coordinates",
                      "an expression model (no builtin) needs its "
                      "coordinates");
    if (2 * m->n + RC_MODEL_MAX_DIM + m->npar > 4 * RC_MODEL_MAX_DIM)
        return rc_bad(err, map, "model.coordinates", "too many names");
    if (hn) {
        static const char *const lag[] = {"mass", "potential",
                                          "velocity_constraints", NULL};
        for (a = 0; lag[a]; ++a)
            if (rc_ynode_get(map, lag[a], &key)) {
                char f[64];
                snprintf(f, sizeof f, "model.%s", lag[a]);
                return rc_bad(err, key, f,
                              "give either hamiltonian (with multipliers) "
                              "or the Lagrange problem (mass, potential, "
                              "velocity_constraints), not both");
            }
        if (!mult)
            return rc_bad(err, map, "model.multipliers",
                          "a hamiltonian needs the names of its "
                          "multipliers (multipliers: [lam, ...])");
        if (mult->kind != RC_YNODE_SEQUENCE || mult->n < 1 ||
            mult->n > RC_MODEL_MAX_DIM)
            return rc_bad(err, mult, "model.multipliers",
                          "expected a list of 1 to %d names",
                          RC_MODEL_MAX_DIM);
        d->k = mult->n;
        if ((st = i1_names(m, d, map, mult, err)) ||
            (st = rc_get_string(err, hn, "model.hamiltonian", &text)) ||
            (st = i1_check_expr(err, hn, "model.hamiltonian", text, d)))
            return st;
        if (!(d->htext = i1_strdup(text)))
            return i1_nomem(err);
        return RC_OK;
    }
    if (!vc)
        return rc_bad(err, map, "model",
                      "an expression model needs either 'hamiltonian' (with "
                      "'multipliers') or 'velocity_constraints' (with "
                      "optional 'mass' and 'potential')");
    if (vc->kind != RC_YNODE_SEQUENCE || vc->n < 1 || vc->n >= m->n)
        return rc_bad(err, vc, "model.velocity_constraints",
                      "expected a list of 1 to %d rows g_i(q) (fewer than "
                      "the %d coordinates)",
                      m->n - 1, m->n);
    for (a = 0; a < vc->n; ++a)
        if (vc->items[a]->kind != RC_YNODE_SEQUENCE ||
            vc->items[a]->n != m->n) {
            char f[64];
            snprintf(f, sizeof f, "model.velocity_constraints[%d]", a);
            return rc_bad(err, vc->items[a], f,
                          "expected a row of %d expressions (one per "
                          "coordinate)",
                          m->n);
        }
    d->k = vc->n;
    if (mult && (mult->kind != RC_YNODE_SEQUENCE || mult->n != d->k))
        return rc_bad(err, mult, "model.multipliers",
                      "expected a list of %d names (one per velocity "
                      "constraint)",
                      d->k);
    if ((st = i1_names(m, d, map, mult, err)))
        return st;
    return i1_lagrange_text(m, d, map, err);
}

static rc_status i1_holonomic(rc_model *m, i1_data *d, const rc_ynode *map,
                              rc_error *err)
{
    const rc_ynode *hl = rc_ynode_get(map, "holonomic", NULL);
    int a, b;
    if (!hl)
        return RC_OK;
    if (hl->kind != RC_YNODE_SEQUENCE || hl->n < 1 ||
        hl->n + d->k >= m->n)
        return rc_bad(err, hl, "model.holonomic",
                      "expected a list of 1 to %d expressions h_j(q) "
                      "(with the %d velocity constraints, fewer than the %d "
                      "coordinates)",
                      m->n - 1 - d->k, d->k, m->n);
    if (d->nvars == 0) { /* built-in: names q, p_q, λ, parameters */
        rc_status st = i1_names(m, d, map, NULL, err);
        if (st)
            return st;
    }
    d->hol = calloc((size_t)hl->n, sizeof(char *));
    if (!d->hol)
        return i1_nomem(err);
    for (a = 0; a < hl->n; ++a) {
        char f[64], msg[512];
        const char *s;
        rc_expr *e;
        snprintf(f, sizeof f, "model.holonomic[%d]", a);
        if (rc_get_string(err, hl->items[a], f, &s))
            return RC_ERR_PARSE;
        if (!(e = rc_expr_compile(s, d->nvars, d->vptr, msg, sizeof msg)))
            return rc_bad(err, hl->items[a], f, "%s", msg);
        for (b = m->n; b < 2 * m->n + d->k; ++b)
            if (!rc_expr_independent_of(e, b)) {
                rc_expr_free(e);
                return rc_bad(err, hl->items[a], f,
                              "a holonomic constraint depends on q only "
                              "(it mentions '%s')",
                              d->vname[b]);
            }
        rc_expr_free(e);
        if (!(d->hol[a] = i1_strdup(s)))
            return i1_nomem(err);
        d->l = a + 1;
    }
    return RC_OK;
}

/* initial: {q, p, lambda}.  λ is fixed by H_λ(q, p, λ) = 0 (Cor. 5's
 * endpoint rule); a given lambda is the Newton starting guess.  With
 * holonomic constraints q must satisfy h(q) = 0, and p is projected
 * along Dh(q)ᵀ onto the secondary constraint Dh(q)·H_p = 0. */
static rc_status i1_initial(rc_model *m, i1_data *d, const rc_ynode *map,
                            rc_error *err)
{
    rc_ynode *ini, *v;
    rc_i1_ev *e = NULL;
    int n = m->n, k = d->k, l = d->l, a;
    rc_status st = RC_OK;
    double hmax = 0.0;
    if ((st = rc_require(err, map, "initial", "model", &ini)) ||
        (st = rc_expect_mapping(err, ini, "model.initial")))
        return st;
    {
        static const char *const ik[] = {"q", "p", "lambda", NULL};
        if ((st = rc_check_keys(err, ini, "model.initial", ik)))
            return st;
    }
    m->naux = k;
    if (rc_model_alloc_initial(m) != RC_OK)
        return i1_nomem(err);
    for (a = 0; a < k; ++a) /* CSV columns: the multipliers' names */
        if (d->nvars > 0)
            snprintf(m->aux_name[a], RC_MODEL_NAME_MAX, "%s",
                     d->vname[2 * n + a]);
        else
            snprintf(m->aux_name[a], RC_MODEL_NAME_MAX, "lambda%d", a + 1);
    if ((st = rc_require(err, ini, "q", "model.initial", &v)) ||
        (st = rc_get_numbers(err, v, "model.initial.q", n, m->q0)) ||
        (st = rc_require(err, ini, "p", "model.initial", &v)) ||
        (st = rc_get_numbers(err, v, "model.initial.p", n, m->p0)))
        return st;
    for (a = 0; a < k; ++a)
        m->aux0[a] = 0.0;
    if ((v = rc_ynode_get(ini, "lambda", NULL)) &&
        (st = rc_get_numbers(err, v, "model.initial.lambda", k, m->aux0)))
        return st;
    if ((st = rc_i1_ev_create(m, &e, err)))
        return st;
    if (l > 0) {
        double h[RC_MODEL_MAX_DIM];
        rc_i1_ev_holonomic(e, m->q0, h, NULL);
        for (a = 0; a < l; ++a)
            hmax = fmax(hmax, fabs(h[a]));
        if (!(hmax <= 1e-10))
            st = rc_bad(err, ini, "model.initial.q",
                        "the initial position must satisfy the holonomic "
                        "constraints h(q) = 0 (largest |h_j| = %.3g, "
                        "allowed 1e-10)",
                        hmax);
        else if (rc_i1_ev_project(e, m->q0, m->p0, m->aux0, NULL, 1e-15,
                                  50) < 0)
            st = rc_bad(err, ini, "model.initial",
                        "cannot project the initial momentum onto the "
                        "secondary constraints Dh(q)·q̇ = 0: the holonomic "
                        "and velocity constraints are degenerate here");
        if (st) {
            rc_i1_ev_free(e);
            return st;
        }
    }
    if (rc_i1_ev_solve_lambda(e, m->q0, m->p0, m->aux0, 1e-15, 50) < 0) {
        rc_i1_ev_free(e);
        return rc_bad(err, ini, "model.initial",
                      "H_lambda(q, p, lambda) = 0 has no solution near the "
                      "initial lambda: the constraints are not of index 1 "
                      "here (H_lambda,lambda singular)");
    }
    for (a = 0; a < k; ++a)
        if (!isfinite(m->aux0[a])) {
            rc_i1_ev_free(e);
            return rc_bad(err, ini, "model.initial",
                          "the initial multipliers are not finite");
        }
    rc_i1_ev_free(e);
    return RC_OK;
}

static rc_status i1_load(rc_model *m, const rc_ynode *map, rc_error *err)
{
    i1_data *d = calloc(1, sizeof *d);
    rc_status st;
    if (!d)
        return i1_nomem(err);
    m->data = d;
    if (m->builtin[0])
        st = i1_builtin(m, d, map, err);
    else
        st = i1_expressions(m, d, map, err);
    if (!st)
        st = i1_holonomic(m, d, map, err);
    if (!st)
        st = i1_initial(m, d, map, err);
    return st;
}

const rc_model_kind rc_model_kind_index1 = {
    "index1",
    "generalized Hamiltonian system with index-1 constraints, H(q, p, "
    "lambda) (seed 002)",
    i1_keys, i1_load, i1_free_data};

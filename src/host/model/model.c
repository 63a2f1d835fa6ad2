/* The `model:` block: the common keys, the tables of kinds and methods,
 * and the state every method advances (model.h). */
#include "model.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../scenario_read.h"
#include "index1.h"
#include "lagrangian.h"
#include "vi.h"

/* The tables.  A kind or method is added here when it is written. */
const rc_model_kind *const rc_model_kinds[] = {&rc_model_kind_lagrangian,
                                               &rc_model_kind_index1, NULL};
const rc_model_method *const rc_model_methods[] = {
    /* lagrangian (seed 001: Pekarek & Murphey) */
    &rc_model_method_sva,    &rc_model_method_svb,
    &rc_model_method_svc,    &rc_model_method_vi_midpoint,
    &rc_model_method_cva,    &rc_model_method_vci,
    &rc_model_method_mcva_a, &rc_model_method_mcva_c,
    /* index1 (seed 002: McLachlan, Modin, Verdier, Wilkins) */
    &rc_model_method_gauss1,     &rc_model_method_gauss2,
    &rc_model_method_gauss3,     &rc_model_method_i1_rattle,
    &rc_model_method_i1_rk4,     &rc_model_method_i1_projection,
    NULL};

const rc_model_method *rc_model_method_find(const rc_model_kind *k,
                                            const char *name)
{
    int i;
    for (i = 0; rc_model_methods[i]; ++i)
        if (rc_model_methods[i]->kind == k &&
            !strcmp(rc_model_methods[i]->name, name))
            return rc_model_methods[i];
    return NULL;
}

int rc_model_param_index(const rc_model *m, const char *name)
{
    int k;
    for (k = 0; k < m->npar; ++k)
        if (!strcmp(m->par_name[k], name))
            return k;
    return -1;
}

int rc_model_coord_index(const rc_model *m, const char *name)
{
    int k;
    for (k = 0; k < m->n; ++k)
        if (!strcmp(m->coord[k], name))
            return k;
    return -1;
}

static rc_status rc_model_nomem(rc_error *err)
{
    err->status = RC_ERR_NOMEM;
    snprintf(err->message, sizeof err->message, "out of memory");
    return RC_ERR_NOMEM;
}

static rc_status rc_model_add_param(rc_model *m, const char *name,
                                    double value)
{
    char(*nn)[RC_MODEL_NAME_MAX] =
        realloc(m->par_name, sizeof *nn * (size_t)(m->npar + 1));
    double *nv;
    if (!nn)
        return RC_ERR_NOMEM;
    m->par_name = nn;
    nv = realloc(m->par, sizeof *nv * (size_t)(m->npar + 1));
    if (!nv)
        return RC_ERR_NOMEM;
    m->par = nv;
    snprintf(m->par_name[m->npar], RC_MODEL_NAME_MAX, "%s", name);
    m->par[m->npar++] = value;
    return RC_OK;
}

rc_status rc_model_param_default(rc_model *m, const char *name, double value)
{
    if (rc_model_param_index(m, name) >= 0)
        return RC_OK;
    return rc_model_add_param(m, name, value);
}

rc_status rc_model_alloc_initial(rc_model *m)
{
    free(m->q0);
    free(m->p0);
    free(m->aux0);
    m->q0 = calloc((size_t)(m->n > 0 ? m->n : 1), sizeof(double));
    m->p0 = calloc((size_t)(m->n > 0 ? m->n : 1), sizeof(double));
    m->aux0 = calloc((size_t)(m->naux > 0 ? m->naux : 1), sizeof(double));
    return m->q0 && m->p0 && m->aux0 ? RC_OK : RC_ERR_NOMEM;
}

/* A name usable in an expression and as a CSV column: a letter or '_'
 * first, then letters, digits and '_'. */
static const char *rc_model_name_problem(const char *s)
{
    const char *c;
    if (!s[0])
        return "is empty";
    if (strlen(s) >= RC_MODEL_NAME_MAX)
        return "is too long (at most 31 characters)";
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return "must start with a letter or '_'";
    for (c = s; *c; ++c)
        if (!(isalnum((unsigned char)*c) || *c == '_'))
            return "may hold only letters, digits and '_'";
    return NULL;
}

static rc_status rc_model_load_coordinates(rc_model *m, const rc_ynode *seq,
                                           rc_error *err)
{
    int k, j;
    char sub[200];
    if (seq->kind != RC_YNODE_SEQUENCE || seq->n < 1)
        return rc_bad(err, seq, "model.coordinates",
                      "expected a list of coordinate names, e.g. [y, theta]");
    if (seq->n > RC_MODEL_MAX_DIM)
        return rc_bad(err, seq, "model.coordinates",
                      "%d coordinates; at most %d", seq->n, RC_MODEL_MAX_DIM);
    for (k = 0; k < seq->n; ++k) {
        const char *s, *why;
        snprintf(sub, sizeof sub, "model.coordinates[%d]", k);
        if (rc_get_string(err, seq->items[k], sub, &s))
            return RC_ERR_PARSE;
        if ((why = rc_model_name_problem(s)) != NULL)
            return rc_bad(err, seq->items[k], sub, "the name '%s' %s", s,
                          why);
        for (j = 0; j < k; ++j)
            if (!strcmp(m->coord[j], s))
                return rc_bad(err, seq->items[k], sub,
                              "coordinate '%s' is named twice", s);
        snprintf(m->coord[k], RC_MODEL_NAME_MAX, "%s", s);
    }
    m->n = seq->n;
    return RC_OK;
}

static rc_status rc_model_load_parameters(rc_model *m, const rc_ynode *map,
                                          rc_error *err)
{
    int k;
    char sub[200];
    if (rc_expect_mapping(err, map, "model.parameters"))
        return RC_ERR_PARSE;
    for (k = 0; k < map->n; ++k) {
        const char *name = map->keys[k]->value, *why;
        double v;
        rc_join(sub, sizeof sub, "model.parameters", name);
        if ((why = rc_model_name_problem(name)) != NULL)
            return rc_bad(err, map->keys[k], sub, "the name '%s' %s", name,
                          why);
        if (rc_get_number(err, map->items[k], sub, &v))
            return RC_ERR_PARSE;
        if (rc_model_add_param(m, name, v))
            return rc_model_nomem(err);
    }
    return RC_OK;
}

rc_status rc_model_load_(const rc_ynode *map, rc_model **out, rc_error *err)
{
    static const char *const common[] = {"kind", "builtin", "coordinates",
                                         "parameters", "initial", NULL};
    const char *keys[64];
    const rc_model_kind *kind = NULL;
    rc_model *m;
    rc_ynode *v;
    const char *s;
    char known[400] = "";
    int k, nk = 0;
    rc_status st;

    *out = NULL;
    if (rc_expect_mapping(err, map, "model"))
        return RC_ERR_PARSE;
    if (rc_require(err, map, "kind", "model", &v) ||
        rc_get_string(err, v, "model.kind", &s))
        return RC_ERR_PARSE;
    for (k = 0; rc_model_kinds[k]; ++k) {
        if (!strcmp(rc_model_kinds[k]->name, s))
            kind = rc_model_kinds[k];
        strncat(known, k ? ", " : "", sizeof known - strlen(known) - 1);
        strncat(known, rc_model_kinds[k]->name,
                sizeof known - strlen(known) - 1);
    }
    if (!kind)
        return rc_bad(err, v, "model.kind", "unknown kind '%s' (%s%s)", s,
                      k ? "known: " : "this build knows no kind of model",
                      known);
    for (k = 0; common[k]; ++k)
        keys[nk++] = common[k];
    for (k = 0; kind->keys && kind->keys[k] && nk < 63; ++k)
        keys[nk++] = kind->keys[k];
    keys[nk] = NULL;
    if (rc_check_keys(err, map, "model", keys))
        return RC_ERR_PARSE;

    m = calloc(1, sizeof *m);
    if (!m)
        return rc_model_nomem(err);
    m->kind = kind;
    st = RC_ERR_PARSE;
    if ((v = rc_ynode_get(map, "builtin", NULL)) != NULL) {
        if (rc_get_string(err, v, "model.builtin", &s))
            goto fail;
        if (!s[0] || strlen(s) >= sizeof m->builtin) {
            rc_bad(err, v, "model.builtin", "'%s' is not a built-in model",
                   s);
            goto fail;
        }
        snprintf(m->builtin, sizeof m->builtin, "%s", s);
    }
    if ((v = rc_ynode_get(map, "coordinates", NULL)) != NULL &&
        rc_model_load_coordinates(m, v, err))
        goto fail;
    if ((v = rc_ynode_get(map, "parameters", NULL)) != NULL &&
        (st = rc_model_load_parameters(m, v, err)) != RC_OK)
        goto fail;
    st = RC_ERR_PARSE;
    if ((st = kind->load(m, map, err)) != RC_OK)
        goto fail;
    st = RC_ERR_PARSE;
    if (m->n < 1 || m->n > RC_MODEL_MAX_DIM || m->naux < 0 ||
        m->naux > RC_MODEL_MAX_DIM || !m->q0 || !m->p0 ||
        (m->naux > 0 && !m->aux0)) {
        rc_bad(err, map, "model",
               "the %s model has no coordinates or no initial state",
               kind->name);
        goto fail;
    }
    for (k = 0; k < m->npar; ++k)
        if (rc_model_coord_index(m, m->par_name[k]) >= 0) {
            rc_bad(err, rc_ynode_get(map, "parameters", NULL),
                   "model.parameters",
                   "'%s' names both a parameter and a coordinate",
                   m->par_name[k]);
            goto fail;
        }
    for (k = 0; k < m->n; ++k)
        if (!isfinite(m->q0[k]) || !isfinite(m->p0[k])) {
            rc_bad(err, rc_ynode_get(map, "initial", NULL) ? rc_ynode_get(map, "initial", NULL) : map,
                   "model.initial",
                   "the initial state is not finite (coordinate %s)",
                   m->coord[k]);
            goto fail;
        }
    for (k = 0; k < m->naux; ++k) {
        if (!m->aux_name[k][0])
            snprintf(m->aux_name[k], RC_MODEL_NAME_MAX, "aux%d", k);
        if (!isfinite(m->aux0[k])) {
            rc_bad(err, map, "model.initial",
                   "the initial state is not finite (%s)", m->aux_name[k]);
            goto fail;
        }
    }
    *out = m;
    return RC_OK;
fail:
    rc_model_free_(m);
    if (st == RC_ERR_NOMEM && !err->message[0])
        rc_model_nomem(err);
    return st;
}

void rc_model_free_(rc_model *m)
{
    if (!m)
        return;
    if (m->kind && m->kind->free_data)
        m->kind->free_data(m);
    free(m->par_name);
    free(m->par);
    free(m->q0);
    free(m->p0);
    free(m->aux0);
    free(m);
}

rc_status rc_model_state_init(const rc_model *m, rc_model_state *s)
{
    memset(s, 0, sizeof *s);
    s->q = malloc(sizeof(double) * (size_t)m->n);
    s->p = malloc(sizeof(double) * (size_t)m->n);
    s->aux = malloc(sizeof(double) * (size_t)(m->naux > 0 ? m->naux : 1));
    if (!s->q || !s->p || !s->aux) {
        rc_model_state_free(s);
        return RC_ERR_NOMEM;
    }
    memcpy(s->q, m->q0, sizeof(double) * (size_t)m->n);
    memcpy(s->p, m->p0, sizeof(double) * (size_t)m->n);
    if (m->naux > 0)
        memcpy(s->aux, m->aux0, sizeof(double) * (size_t)m->naux);
    return RC_OK;
}

void rc_model_state_free(rc_model_state *s)
{
    free(s->q);
    free(s->p);
    free(s->aux);
    s->q = s->p = s->aux = NULL;
}

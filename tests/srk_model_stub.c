/* TEMPORARY stand-in for src/host/model/model.c (the lead's "Model layer,
 * part 2"), only what the seed-002 tests call, so that they run before the
 * common loader lands.  Deleted when part 2 is merged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/model/index1.h"
#include "host/scenario_read.h"

const rc_model_method *const rc_srk_stub_methods[] = {
    &rc_model_method_gauss1, &rc_model_method_gauss2,
    &rc_model_method_gauss3, &rc_model_method_i1_rattle,
    &rc_model_method_i1_rk4, &rc_model_method_i1_projection, NULL};

const rc_model_method *rc_model_method_find(const rc_model_kind *k,
                                            const char *name)
{
    int a;
    for (a = 0; rc_srk_stub_methods[a]; ++a)
        if (rc_srk_stub_methods[a]->kind == k &&
            !strcmp(rc_srk_stub_methods[a]->name, name))
            return rc_srk_stub_methods[a];
    return NULL;
}

rc_status rc_model_load_(const rc_ynode *map, rc_model **out, rc_error *err)
{
    rc_model *m = calloc(1, sizeof *m);
    const rc_ynode *v;
    const char *s;
    int a;
    *out = NULL;
    m->kind = &rc_model_kind_index1;
    if ((v = rc_ynode_get(map, "kind", NULL)) &&
        (rc_get_string(err, v, "model.kind", &s) || strcmp(s, "index1"))) {
        free(m);
        return rc_bad(err, v, "model.kind", "stub knows index1 only");
    }
    if ((v = rc_ynode_get(map, "builtin", NULL)))
        snprintf(m->builtin, sizeof m->builtin, "%s", v->value);
    if ((v = rc_ynode_get(map, "coordinates", NULL))) {
        m->n = v->n;
        for (a = 0; a < v->n; ++a)
            snprintf(m->coord[a], RC_MODEL_NAME_MAX, "%s", v->items[a]->value);
    }
    if ((v = rc_ynode_get(map, "parameters", NULL))) {
        m->npar = v->n;
        m->par_name = calloc((size_t)v->n + 1, sizeof *m->par_name);
        m->par = calloc((size_t)v->n + 1, sizeof *m->par);
        for (a = 0; a < v->n; ++a) {
            snprintf(m->par_name[a], RC_MODEL_NAME_MAX, "%s",
                     v->keys[a]->value);
            m->par[a] = atof(v->items[a]->value);
        }
    }
    if (m->kind->load(m, map, err) != RC_OK) {
        rc_model_free_(m);
        return err->status;
    }
    *out = m;
    return RC_OK;
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
    s->q = calloc((size_t)m->n, sizeof(double));
    s->p = calloc((size_t)m->n, sizeof(double));
    s->aux = calloc((size_t)m->naux + 1, sizeof(double));
    memcpy(s->q, m->q0, (size_t)m->n * sizeof(double));
    memcpy(s->p, m->p0, (size_t)m->n * sizeof(double));
    memcpy(s->aux, m->aux0, (size_t)m->naux * sizeof(double));
    return RC_OK;
}

void rc_model_state_free(rc_model_state *s)
{
    free(s->q);
    free(s->p);
    free(s->aux);
    memset(s, 0, sizeof *s);
}

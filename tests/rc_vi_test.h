/* Helpers of the tests of the "lagrangian" kind and its methods
 * (tests/test_vi_*.c): a model read from the text of a `model:` mapping,
 * and runs of a method on it. */
#ifndef RC_VI_TEST_H
#define RC_VI_TEST_H

#include <stdlib.h>
#include <string.h>

#include "host/model/lagrangian.h"
#include "host/model/vi.h"
#include "host/scenario_read.h"
#include "host/yaml_tree.h"
#include "rc_test.h"

/* The model of a `model:` mapping given without its `kind:` line, read
 * by the model layer (rc_model_load_); the model's contents move to *m.
 * 0 on success. */
static int vi_model_load(const char *yaml, rc_model *m, rc_error *err)
{
    char text[4096];
    rc_ynode *root;
    rc_model *lm = NULL;
    int rc = 0;
    memset(m, 0, sizeof *m);
    snprintf(text, sizeof text, "kind: lagrangian\n%s", yaml);
    root = rc_yaml_load_string(text, "test", err);
    if (!root)
        return 1;
    if (rc_model_load_(root, &lm, err) != RC_OK)
        rc = 1;
    else {
        *m = *lm;
        free(lm);
    }
    rc_ynode_free(root);
    return rc;
}

static void vi_model_free(rc_model *m)
{
    if (m->data)
        m->kind->free_data(m);
    free(m->q0);
    free(m->p0);
    free(m->aux0);
    free(m->par_name);
    free(m->par);
    memset(m, 0, sizeof *m);
}

/* A method's workspace for step h (other settings: the defaults). */
static void *vi_method(const rc_model_method *meth, const rc_model *m,
                       double h)
{
    rc_integrator_desc in;
    rc_error err;
    void *ws = NULL;
    rc_integrator_desc_init(&in);
    in.dt = h;
    if (meth->create(m, &in, &ws, &err) != RC_OK) {
        fprintf(stderr, "create %s: %s: %s\n", meth->name, err.field,
                err.message);
        return NULL;
    }
    return ws;
}

/* Run nsteps of meth from (q, p) (updated); RC_OK or the failure. */
static rc_status vi_run(const rc_model_method *meth, void *ws, int n,
                        double *q, double *p, long nsteps)
{
    rc_model_state s;
    rc_error err;
    long k;
    rc_status st = RC_OK;
    s.t = 0.0;
    s.steps = 0;
    s.q = q;
    s.p = p;
    s.aux = NULL;
    (void)n;
    for (k = 0; k < nsteps && st == RC_OK; ++k)
        st = meth->step(ws, &s, &err);
    if (st != RC_OK)
        fprintf(stderr, "%s: step %ld: %s\n", meth->name, k, err.message);
    return st;
}

#endif

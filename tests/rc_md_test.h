/* Two large-system states on one start, for the tests that compare the
 * engine on its launchers and tiers (test_md_dengine.c, test_md_faults.c,
 * test_gpu_md.c).  Include after rc_test.h. */
#ifndef RC_MD_TEST_H
#define RC_MD_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/engine.h"
#include "host/md/setup.h"
#include "host/system_impl.h"

/* A start: spheres of diameter 1 (mixed: radii 0.4/0.45/0.5 and masses
 * 1-1.75 by index) on a lattice at packing fraction eta in a box with
 * all axes periodic or all walled, gravity along the last axis,
 * Maxwell-Boltzmann at kT = 1; and the engine's parameters. */
typedef struct setup {
    const char *what;
    int dim, n, kind, periodic, moreau;
    int max_passes, dense_max; /* 0: 100, 64 */
    int mixed;
    double eta, gravity, dt;
    int steps;
    int lapack_max; /* 0: 512 */
    int reload;     /* load the first engine's state into the second
                       before every step and compare one step at a time,
                       to a tolerance */
    int order;      /* the CPU launcher's item order (RC_DMD_CPU_*) */
    int pair;       /* 0 none, else a pair potential of this type
                       (RC_POT_LENNARD_JONES: cutoff 2.5, RC_POT_WCA) with
                       epsilon 1, sigma 1 */
    int exact;      /* exact collision times (rc_md_exact.h) */
} setup;

/* Two engines on one start (b may be NULL).  Returns 0 or -1 (set-up
 * failed, reported). */
static inline int make(const setup *s, rc_md *a, rc_md *b)
{
    rc_k_box box;
    rc_md_params par;
    int per[3], i, ok = -1;
    double *q = (double *)malloc(sizeof(double) * (size_t)(s->n * s->dim));
    double *p = (double *)malloc(sizeof(double) * (size_t)(s->n * s->dim));
    double *m = (double *)malloc(sizeof(double) * (size_t)s->n);
    double *r = (double *)malloc(sizeof(double) * (size_t)s->n);
    char msg[600] = "out of memory";
    per[0] = per[1] = per[2] = s->periodic;
    if (!q || !p || !m || !r)
        goto done;
    for (i = 0; i < s->n; ++i) {
        m[i] = s->mixed ? 1.0 + 0.25 * (i % 4) : 1.0;
        r[i] = s->mixed ? 0.4 + 0.05 * (i % 3) : 0.5;
    }
    if (rc_md_box_for_packing(s->dim, s->n, r, s->eta, per, &box) != 0 ||
        rc_md_place(s->kind, &box, s->n, r, 7, q, msg, sizeof msg) != 0)
        goto done;
    rc_md_maxwell(s->dim, s->n, m, 1.0, 8, p);
    memset(&par, 0, sizeof par);
    par.dt = s->dt;
    par.gravity[s->dim - 1] = -s->gravity;
    par.threads = 1;
    par.max_passes = s->max_passes > 0 ? s->max_passes : 100;
    par.moreau = s->moreau;
    par.exact = s->exact;
    par.dense_max = s->dense_max > 0 ? s->dense_max : 64;
    par.lapack_max = s->lapack_max > 0 ? s->lapack_max : 512;
    if (s->pair) {
        rc_potential_desc pd;
        rc_potential_desc_init(&pd, (rc_potential_type)s->pair);
        pd.epsilon = 1.0;
        pd.sigma = 1.0;
        pd.cutoff = 2.5;
        par.has_pair = 1;
        par.pair_cut = rc_pair_potential_form_(&pd, &par.pair);
    }
    par.pgs_tol = 1e-12;
    par.pgs_max_iter = 100000;
    if (rc_md_init(a, &box, s->n, q, p, m, r, &par) != RC_OK) {
        snprintf(msg, sizeof msg, "%s", a->msg);
        goto done;
    }
    if (b && rc_md_init(b, &box, s->n, q, p, m, r, &par) != RC_OK) {
        snprintf(msg, sizeof msg, "%s", b->msg);
        goto done;
    }
    ok = 0;
done:
    RC_CHECK(ok == 0, "%s: set-up: %s", s->what, msg);
    free(q);
    free(p);
    free(m);
    free(r);
    return ok;
}

#endif

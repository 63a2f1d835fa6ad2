/* The set-up of a large system checked without running it (check.h).
 *
 * rc_run() and `ricochet validate` both come here first, so that an
 * initial state the engine would refuse (spheres that overlap or do not
 * fit, a box smaller than the contact range) is bad input (exit 2, with
 * the field to blame) rather than a failure of the run (exit 1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cells.h"
#include "engine.h"
#include "run_md.h"
#include "../scenario_impl.h"
#include "../system_impl.h"
#include "../yaml_tree.h"

/* The node of a field path "key", "key[i]", "key.sub" or "key[i].sub"
 * in the scenario's tree; the nearest existing ancestor, or NULL when
 * there is no tree (an ensemble member). */
static const rc_ynode *rc_md_node(const rc_scenario *scn, const char *field)
{
    char key[64], sub[64] = "";
    const rc_ynode *v, *u;
    int i = -1;
    const char *s = field;
    size_t n = strcspn(s, ".[");
    if (!scn->tree || n >= sizeof key)
        return scn->tree;
    memcpy(key, s, n);
    key[n] = '\0';
    s += n;
    if (*s == '[') {
        i = atoi(s + 1);
        s = strchr(s, ']');
        s = s ? s + 1 : "";
    }
    if (*s == '.')
        snprintf(sub, sizeof sub, "%s", s + 1);
    if (!(v = rc_ynode_get(scn->tree, key, NULL)))
        return scn->tree;
    if (i >= 0 && v->kind == RC_YNODE_SEQUENCE && i < v->n)
        v = v->items[i];
    if (sub[0] && (u = rc_ynode_get(v, sub, NULL)) != NULL)
        v = u;
    return v;
}

static rc_status rc_md_refuse(const rc_scenario *scn, const char *field,
                              const char *msg, rc_error *err)
{
    const rc_ynode *at = rc_md_node(scn, field);
    memset(err, 0, sizeof *err);
    err->status = RC_ERR_PARSE;
    snprintf(err->file, sizeof err->file, "%s",
             at && at->source ? at->source : scn->path);
    err->line = at ? at->line : 0;
    err->column = at ? at->column : 0;
    snprintf(err->field, sizeof err->field, "%s", field);
    snprintf(err->message, sizeof err->message, "%s", msg);
    return RC_ERR_PARSE;
}

/* Where the particles came from: "lattice", "read" or "particles". */
static const char *rc_md_source(const rc_scenario *scn)
{
    if (scn->md.lattice)
        return "lattice";
    if (scn->tree && rc_ynode_get(scn->tree, "read", NULL))
        return "read";
    return "particles";
}

/* The field that sets the box: its lengths, or (a box sized from the
 * packing fraction) the lattice's n. */
static const char *rc_md_box_field(const rc_scenario *scn)
{
    return scn->md.have_lengths ? "box.lengths" : "lattice.n";
}

rc_status rc_md_check_start_(const rc_scenario *scn, rc_error *err)
{
    int d = scn->dimension, n = scn->n, i, k;
    size_t N = (size_t)n * (size_t)d;
    double *q = (double *)malloc(sizeof(double) * (N + 1));
    double *p = (double *)malloc(sizeof(double) * (N + 1));
    double *mass = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    double *radius = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    rc_k_box box;
    rc_md md;
    rc_md_params par;
    rc_error local;
    rc_status st = RC_OK;
    char msg[1400], field[64];
    memset(&md, 0, sizeof md);
    if (!q || !p || !mass || !radius) {
        memset(err, 0, sizeof *err);
        err->status = st = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message,
                 "out of memory for %d particles", n);
        goto done;
    }
    if ((st = rc_md_initial_(scn, &box, q, p, mass, radius, &local)) !=
        RC_OK) {
        if (st == RC_ERR_NOMEM) {
            *err = local;
            goto done;
        }
        /* a box that cannot be sized, or spheres that do not fit it
         * (the message's own "path: " goes: the place names the file) */
        {
            size_t pl = strlen(scn->path);
            if (!strncmp(local.message, scn->path, pl) &&
                !strncmp(local.message + pl, ": ", 2))
                memmove(local.message, local.message + pl + 2,
                        strlen(local.message + pl + 2) + 1);
        }
        st = rc_md_refuse(scn,
                          scn->md.fill_height > 0.0 ? "lattice.fill_height"
                          : strstr(local.message, "packing fraction") &&
                                  !strstr(local.message, "lattice:")
                              ? "lattice.packing_fraction"
                              : "lattice.n",
                          local.message, err);
        goto done;
    }
    memset(&par, 0, sizeof par);
    par.dt = scn->integ.dt;
    for (k = 0; k < 3; ++k)
        par.gravity[k] = k < d ? scn->md.gravity[k] : 0.0;
    if (scn->md.pair >= 0) {
        par.has_pair = 1;
        par.pair_cut =
            rc_pair_potential_form_(&scn->potentials[scn->md.pair], &par.pair);
    }
    if ((st = rc_md_init(&md, &box, n, q, p, mass, radius, &par)) != RC_OK) {
        const char *src = rc_md_source(scn);
        if (st == RC_ERR_NOMEM) {
            memset(err, 0, sizeof *err);
            err->status = st;
            snprintf(err->message, sizeof err->message, "%s", md.msg);
            goto done;
        }
        /* a listed particle is named by its index */
        if (!strcmp(src, "particles") && sscanf(md.msg, "particle %d", &i) == 1)
            snprintf(field, sizeof field, "particles[%d]", i);
        else
            snprintf(field, sizeof field, "%s", src);
        snprintf(msg, sizeof msg, "%s", md.msg);
        st = rc_md_refuse(scn, field, msg, err);
        goto done;
    }
    {
        /* the candidates of the engine's first build (no motion yet),
         * then of its first step: the predictor moves sphere i by
         * dt |p_i/m_i + dt g / 2| (gravity is the only force known
         * before the pair forces are evaluated) */
        double cut, dstep = 0.0, edge[3];
        int nc[3];
        long ncell;
        rc_status cs = rc_md_candidate_cut(&md, 0.0, &cut);
        if (cs == RC_OK &&
            rc_cells_grid(&md.box, cut * (1.0 + 1e-12), nc, edge, &ncell) !=
                0) {
            snprintf(md.msg, sizeof md.msg,
                     "no cell grid of the box for the contact range %g "
                     "(more than 2^31 cells): the box is too large for its "
                     "spheres",
                     cut);
            cs = RC_ERR_INVALID;
        }
        if (cs != RC_OK) {
            st = rc_md_refuse(scn, rc_md_box_field(scn), md.msg, err);
            goto done;
        }
        for (i = 0; i < n; ++i) {
            double s = 0.0;
            for (k = 0; k < d; ++k) {
                double x = par.dt * (p[(size_t)i * d + k] / mass[i] +
                                     0.5 * par.dt * par.gravity[k]);
                s += x * x;
            }
            dstep = fmax(dstep, sqrt(s));
        }
        if (!isfinite(dstep) ||
            rc_md_candidate_cut(&md, dstep, &cut) != RC_OK) {
            snprintf(msg, sizeof msg,
                     "the first step moves a sphere by %g, which with the "
                     "contact range needs a box larger than this one: %s",
                     dstep, isfinite(dstep) ? md.msg : "not finite");
            st = rc_md_refuse(scn, "integrator.dt", msg, err);
            goto done;
        }
    }
done:
    rc_md_free(&md);
    free(q);
    free(p);
    free(mass);
    free(radius);
    return st;
}

/* Scenario files: YAML tree -> checked, typed rc_scenario -> rc_system.
 *
 * Every check names the file, line, column and field path of what is
 * wrong.  The format is documented in README.md ("Scenario format"). */
/* realpath (POSIX): the echo of `read:` names its file absolutely */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "scenario_impl.h"
#include "system_impl.h"
#include "md/check.h"
#include "md/h5md.h"
#include "md/random.h"
#include "md/setup.h"
#include "md/xyz.h"
#include "yaml_tree.h"
#include "scenario_read.h"
#include "model/model.h"
#include "resources.h"

#define RC_MAX_PARTICLES_LISTED 10000000L

const char *rc_error_format(const rc_error *err, char *buf, size_t size)
{
    size_t used = 0;
    if (!buf || size == 0)
        return buf;
    buf[0] = '\0';
    if (!err)
        return buf;
#define RC_APPEND(...)                                                  \
    do {                                                                \
        int w_ = snprintf(buf + used, size - used, __VA_ARGS__);        \
        if (w_ > 0)                                                     \
            used = used + (size_t)w_ < size ? used + (size_t)w_ : size - 1; \
    } while (0)
    if (err->file[0]) {
        RC_APPEND("%s", err->file);
        if (err->line > 0)
            RC_APPEND(":%d:%d", err->line, err->column);
        RC_APPEND(": ");
    }
    if (err->field[0])
        RC_APPEND("%s: ", err->field);
    RC_APPEND("%s", err->message);
#undef RC_APPEND
    return buf;
}

/* ------------------------------------------------------------------ */
/* Particles.                                                          */

static rc_status rc_load_particles(rc_error *err, const rc_ynode *seq,
                                   rc_scenario *scn)
{
    static const char *const keys[] = {"mass", "radius", "position",
                                       "momentum", "velocity", NULL};
    int i;
    char field[64], sub[200];
    if (seq->kind != RC_YNODE_SEQUENCE)
        return rc_bad(err, seq, "particles", "expected a list, got %s",
                      rc_kind_name(seq));
    if (seq->n == 0)
        return rc_bad(err, seq, "particles", "at least one particle needed");
    scn->particles =
        (rc_scn_particle *)calloc((size_t)seq->n, sizeof(rc_scn_particle));
    if (!scn->particles)
        return rc_bad(err, seq, "particles", "out of memory");
    scn->n = seq->n;
    for (i = 0; i < seq->n; ++i) {
        const rc_ynode *pn = seq->items[i];
        rc_scn_particle *pt = &scn->particles[i];
        rc_ynode *v, *mom, *vel;
        snprintf(field, sizeof field, "particles[%d]", i);
        if (rc_expect_mapping(err, pn, field) ||
            rc_check_keys(err, pn, field, keys))
            return RC_ERR_PARSE;
        pt->mass = 1.0;
        if (rc_opt_number(err, pn, "mass", field, &pt->mass))
            return RC_ERR_PARSE;
        if (!(pt->mass > 0.0)) {
            rc_join(sub, sizeof sub, field, "mass");
            return rc_bad(err, rc_ynode_get(pn, "mass", NULL), sub,
                          "mass must be positive, got %g", pt->mass);
        }
        pt->radius = 0.0;
        if (rc_opt_number(err, pn, "radius", field, &pt->radius))
            return RC_ERR_PARSE;
        if (pt->radius < 0.0) {
            rc_join(sub, sizeof sub, field, "radius");
            return rc_bad(err, rc_ynode_get(pn, "radius", NULL), sub,
                          "radius must be >= 0, got %g", pt->radius);
        }
        if (rc_require(err, pn, "position", field, &v))
            return RC_ERR_PARSE;
        rc_join(sub, sizeof sub, field, "position");
        if (rc_get_vector(err, v, sub, scn->dimension, pt->q))
            return RC_ERR_PARSE;
        mom = rc_ynode_get(pn, "momentum", NULL);
        vel = rc_ynode_get(pn, "velocity", NULL);
        if (mom && vel) {
            rc_join(sub, sizeof sub, field, "velocity");
            return rc_bad(err, vel, sub,
                          "give either momentum or velocity, not both");
        }
        if (mom) {
            rc_join(sub, sizeof sub, field, "momentum");
            if (rc_get_vector(err, mom, sub, scn->dimension, pt->p))
                return RC_ERR_PARSE;
        } else if (vel) {
            int k;
            rc_join(sub, sizeof sub, field, "velocity");
            if (rc_get_vector(err, vel, sub, scn->dimension, pt->p))
                return RC_ERR_PARSE;
            for (k = 0; k < scn->dimension; ++k) {
                pt->p[k] *= pt->mass;
                /* mass * velocity can overflow although both are finite;
                 * catch it here, where the error can name the node. */
                if (!isfinite(pt->p[k])) {
                    char item[220];
                    snprintf(item, sizeof item, "%s[%d]", sub, k);
                    return rc_bad(err, vel->items[k], item,
                                  "momentum mass * velocity overflows");
                }
            }
        }
    }
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Potentials.                                                         */

/* Append one element of `size` bytes to a growable array; 0 or -1 when
 * out of memory. */
static int rc_append(void **arr, int *count, int *cap, const void *elem,
                     size_t size)
{
    if (*count == *cap) {
        int nc = *cap ? 2 * *cap : 8;
        void *np = realloc(*arr, size * (size_t)nc);
        if (!np)
            return -1;
        *arr = np;
        *cap = nc;
    }
    memcpy((char *)*arr + size * (size_t)*count, elem, size);
    ++*count;
    return 0;
}

static rc_status rc_push_potential(rc_error *err, const rc_ynode *at,
                                   const char *field, rc_scenario *scn,
                                   const rc_potential_desc *d, int *cap)
{
    if (rc_append((void **)&scn->potentials, &scn->npot, cap, d, sizeof *d))
        return rc_bad(err, at, field, "out of memory");
    return RC_OK;
}

/* `particles:` of a one-particle term: `all`, an index, or a non-empty
 * list of indices.  Absent means `all` unless `required`.  On success
 * either *all = 1, or *idx (malloc'd, the caller frees) holds *count
 * indices. */
static rc_status rc_get_targets(rc_error *err, const rc_ynode *map,
                                const char *field, int n, int required,
                                int *all, int **idx, int *count)
{
    char sub[200], item[220];
    rc_ynode *v = rc_ynode_get(map, "particles", NULL);
    long li;
    int k;
    *all = 0;
    *idx = NULL;
    *count = 0;
    rc_join(sub, sizeof sub, field, "particles");
    if (!v && required)
        return rc_bad(err, map, sub, "missing required key 'particles'");
    if (!v || (v->kind == RC_YNODE_SCALAR && !strcmp(v->value, "all"))) {
        *all = 1;
        return RC_OK;
    }
    if (v->kind == RC_YNODE_SCALAR) {
        if (rc_get_long(err, v, sub, 0, n - 1, &li))
            return RC_ERR_PARSE;
        *idx = (int *)malloc(sizeof(int));
        if (!*idx)
            return rc_bad(err, v, sub, "out of memory");
        (*idx)[0] = (int)li;
        *count = 1;
        return RC_OK;
    }
    if (v->kind != RC_YNODE_SEQUENCE || v->n == 0)
        return rc_bad(err, v, sub,
                      "expected 'all', a particle index or a non-empty list "
                      "of indices");
    *idx = (int *)malloc(sizeof(int) * (size_t)v->n);
    if (!*idx)
        return rc_bad(err, v, sub, "out of memory");
    for (k = 0; k < v->n; ++k) {
        snprintf(item, sizeof item, "%s[%d]", sub, k);
        if (rc_get_long(err, v->items[k], item, 0, n - 1, &li)) {
            free(*idx);
            *idx = NULL;
            return RC_ERR_PARSE;
        }
        (*idx)[k] = (int)li;
    }
    *count = v->n;
    return RC_OK;
}

/* One potential term per target (or one for all particles). */
static rc_status rc_one_body_targets(rc_error *err, const rc_ynode *pn,
                                     const char *field, rc_scenario *scn,
                                     rc_potential_desc *d, int *cap)
{
    int all, count, k, *idx;
    rc_status st = RC_OK;
    if (rc_get_targets(err, pn, field, scn->n, 0, &all, &idx, &count))
        return RC_ERR_PARSE;
    if (all) {
        d->i = RC_ALL;
        return rc_push_potential(err, pn, field, scn, d, cap);
    }
    for (k = 0; k < count && st == RC_OK; ++k) {
        d->i = idx[k];
        st = rc_push_potential(err, pn, field, scn, d, cap);
    }
    free(idx);
    return st;
}

static rc_status rc_load_potentials(rc_error *err, const rc_ynode *seq,
                                    rc_scenario *scn)
{
    static const char *const k_gravity[] = {"type", "g", "acceleration",
                                            "particles", NULL};
    static const char *const k_spring[] = {"type", "particles", "k",
                                           "rest_length", NULL};
    static const char *const k_anchor[] = {"type", "particles", "k",
                                           "rest_length", "point", NULL};
    static const char *const k_lj[] = {"type", "epsilon", "sigma", "cutoff",
                                       NULL};
    static const char *const k_wca[] = {"type", "epsilon", "sigma", NULL};
    static const char *const k_radial[] = {"type", "strength", "center",
                                           "particles", NULL};
    int i, cap = 0, dim = scn->dimension;
    char field[64], sub[200];
    if (seq->kind != RC_YNODE_SEQUENCE)
        return rc_bad(err, seq, "potentials", "expected a list, got %s",
                      rc_kind_name(seq));
    for (i = 0; i < seq->n; ++i) {
        const rc_ynode *pn = seq->items[i];
        rc_ynode *tn, *v;
        const char *type = NULL;
        rc_potential_desc d;
        int t, found = -1;
        if (rc_typed_item(err, pn, "potentials", i, field, sizeof field, sub,
                          sizeof sub, &tn, &type))
            return RC_ERR_PARSE;
        for (t = 0; t < RC_POT_TYPE_COUNT_; ++t)
            if (!strcmp(type, rc_potential_type_name((rc_potential_type)t)))
                found = t;
        if (found < 0)
            return rc_bad(err, tn, sub,
                          "unknown potential type '%s' (known: gravity, "
                          "spring, anchor, lennard_jones, wca, "
                          "inverse_square, sextic_well)",
                          type);
        rc_potential_desc_init(&d, (rc_potential_type)found);
        switch ((rc_potential_type)found) {
        case RC_POT_GRAVITY: {
            rc_ynode *g = rc_ynode_get(pn, "g", NULL);
            rc_ynode *a = rc_ynode_get(pn, "acceleration", NULL);
            if (rc_check_keys(err, pn, field, k_gravity))
                return RC_ERR_PARSE;
            if (g && a) {
                rc_join(sub, sizeof sub, field, "acceleration");
                return rc_bad(err, a, sub,
                              "give either g (magnitude, pointing down the "
                              "last axis) or acceleration, not both");
            }
            if (!g && !a)
                return rc_bad(err, pn, field,
                              "gravity needs g (magnitude) or acceleration "
                              "(vector)");
            if (g) {
                double gm = 0.0;
                rc_join(sub, sizeof sub, field, "g");
                if (rc_get_number(err, g, sub, &gm))
                    return RC_ERR_PARSE;
                d.vector[dim - 1] = -gm;
            } else {
                rc_join(sub, sizeof sub, field, "acceleration");
                if (rc_get_vector(err, a, sub, dim, d.vector))
                    return RC_ERR_PARSE;
            }
            if (rc_one_body_targets(err, pn, field, scn, &d, &cap))
                return RC_ERR_PARSE;
            break;
        }
        case RC_POT_SPRING: {
            long a, b;
            if (rc_check_keys(err, pn, field, k_spring) ||
                rc_require(err, pn, "particles", field, &v))
                return RC_ERR_PARSE;
            rc_join(sub, sizeof sub, field, "particles");
            if (v->kind != RC_YNODE_SEQUENCE || v->n != 2)
                return rc_bad(err, v, sub,
                              "a spring joins exactly two particles: [i, j]");
            {
                char item[220];
                snprintf(item, sizeof item, "%s[0]", sub);
                if (rc_get_long(err, v->items[0], item, 0, scn->n - 1, &a))
                    return RC_ERR_PARSE;
                snprintf(item, sizeof item, "%s[1]", sub);
                if (rc_get_long(err, v->items[1], item, 0, scn->n - 1, &b))
                    return RC_ERR_PARSE;
            }
            if (a == b)
                return rc_bad(err, v, sub,
                              "a spring needs two different particles");
            d.i = (int)a;
            d.j = (int)b;
            if (rc_req_number(err, pn, "k", field, &d.k) ||
                rc_opt_number(err, pn, "rest_length", field, &d.rest_length))
                return RC_ERR_PARSE;
            if (d.k < 0.0) {
                rc_join(sub, sizeof sub, field, "k");
                return rc_bad(err, rc_ynode_get(pn, "k", NULL), sub,
                              "stiffness must be >= 0, got %g", d.k);
            }
            if (d.rest_length < 0.0) {
                rc_join(sub, sizeof sub, field, "rest_length");
                return rc_bad(err, rc_ynode_get(pn, "rest_length", NULL), sub,
                              "rest length must be >= 0, got %g",
                              d.rest_length);
            }
            if (rc_push_potential(err, pn, field, scn, &d, &cap))
                return RC_ERR_PARSE;
            break;
        }
        case RC_POT_ANCHOR:
            if (rc_check_keys(err, pn, field, k_anchor) ||
                rc_req_number(err, pn, "k", field, &d.k) ||
                rc_opt_number(err, pn, "rest_length", field, &d.rest_length))
                return RC_ERR_PARSE;
            if (d.k < 0.0 || d.rest_length < 0.0)
                return rc_bad(err, pn, field,
                              "k and rest_length must be >= 0");
            if ((v = rc_ynode_get(pn, "point", NULL)) != NULL) {
                rc_join(sub, sizeof sub, field, "point");
                if (rc_get_vector(err, v, sub, dim, d.vector))
                    return RC_ERR_PARSE;
            }
            if (rc_one_body_targets(err, pn, field, scn, &d, &cap))
                return RC_ERR_PARSE;
            break;
        case RC_POT_LENNARD_JONES:
        case RC_POT_WCA:
            if (rc_check_keys(err, pn, field,
                              found == RC_POT_WCA ? k_wca : k_lj) ||
                rc_req_number(err, pn, "epsilon", field, &d.epsilon) ||
                rc_req_number(err, pn, "sigma", field, &d.sigma) ||
                rc_opt_number(err, pn, "cutoff", field, &d.cutoff))
                return RC_ERR_PARSE;
            if (d.epsilon < 0.0) {
                rc_join(sub, sizeof sub, field, "epsilon");
                return rc_bad(err, rc_ynode_get(pn, "epsilon", NULL), sub,
                              "epsilon must be >= 0, got %g", d.epsilon);
            }
            if (!(d.sigma > 0.0)) {
                rc_join(sub, sizeof sub, field, "sigma");
                return rc_bad(err, rc_ynode_get(pn, "sigma", NULL), sub,
                              "sigma must be > 0, got %g", d.sigma);
            }
            if (found == RC_POT_LENNARD_JONES) {
                if (d.cutoff == 0.0)
                    d.cutoff = 2.5 * d.sigma;
                if (!(d.cutoff > 0.0)) {
                    rc_join(sub, sizeof sub, field, "cutoff");
                    return rc_bad(err, rc_ynode_get(pn, "cutoff", NULL), sub,
                                  "cutoff must be > 0, got %g", d.cutoff);
                }
            }
            if (rc_push_potential(err, pn, field, scn, &d, &cap))
                return RC_ERR_PARSE;
            break;
        case RC_POT_INVERSE_SQUARE:
        case RC_POT_SEXTIC_WELL:
            if (rc_check_keys(err, pn, field, k_radial))
                return RC_ERR_PARSE;
            if (found == RC_POT_INVERSE_SQUARE) {
                if (rc_req_number(err, pn, "strength", field, &d.strength))
                    return RC_ERR_PARSE;
            } else if (rc_opt_number(err, pn, "strength", field,
                                     &d.strength)) {
                return RC_ERR_PARSE;
            }
            if ((v = rc_ynode_get(pn, "center", NULL)) != NULL) {
                rc_join(sub, sizeof sub, field, "center");
                if (rc_get_vector(err, v, sub, dim, d.vector))
                    return RC_ERR_PARSE;
            }
            if (rc_one_body_targets(err, pn, field, scn, &d, &cap))
                return RC_ERR_PARSE;
            break;
        default:
            return rc_bad(err, tn, sub, "unhandled potential type");
        }
    }
    return RC_OK;
}


/* ------------------------------------------------------------------ */
/* Constraints.                                                        */

/* Unit-free direction check: a normal/direction must be nonzero. */
static rc_status rc_nonzero(rc_error *err, const rc_ynode *node,
                            const char *field, const double *v, int dim)
{
    double s = 0.0;
    int k;
    for (k = 0; k < dim; ++k)
        s += v[k] * v[k];
    if (!(s > 0.0))
        return rc_bad(err, node, field, "must be a nonzero vector");
    /* normalised by its length: a length that overflows (or underflows
     * to 0 above) leaves no direction */
    if (!isfinite(s))
        return rc_bad(err, node, field,
                      "its length overflows a double: give a direction of "
                      "moderate size");
    return RC_OK;
}

static rc_status rc_push_constraint_desc(rc_error *err, const rc_ynode *at,
                                         const char *field, rc_scenario *scn,
                                         const rc_constraint_desc *d,
                                         int *cap)
{
    if (rc_append((void **)&scn->constraints, &scn->ncon, cap, d, sizeof *d))
        return rc_bad(err, at, field, "out of memory");
    return RC_OK;
}

/* One constraint term per target (or one for all, where allowed). */
static rc_status rc_constraint_targets(rc_error *err, const rc_ynode *cn,
                                       const char *field, rc_scenario *scn,
                                       rc_constraint_desc *d, int *cap,
                                       int allow_all)
{
    int all, count, k, *idx;
    rc_status st = RC_OK;
    /* `all` expands into one term per particle, each with its own default
     * length, and `particles` is required */
    if (rc_get_targets(err, cn, field, scn->n, !allow_all, &all, &idx,
                       &count))
        return RC_ERR_PARSE;
    if (all && allow_all) {
        d->i = RC_ALL;
        return rc_push_constraint_desc(err, cn, field, scn, d, cap);
    }
    for (k = 0; k < (all ? scn->n : count) && st == RC_OK; ++k) {
        d->i = all ? k : idx[k];
        st = rc_push_constraint_desc(err, cn, field, scn, d, cap);
    }
    free(idx);
    return st;
}

/* A pair [i, j] of distinct particle indices. */
static rc_status rc_get_pair(rc_error *err, const rc_ynode *v,
                             const char *field, int n, int *i, int *j)
{
    char item[260];
    long a = 0, b = 0;
    if (v->kind != RC_YNODE_SEQUENCE || v->n != 2)
        return rc_bad(err, v, field, "expected a pair of particle indices [i, j]");
    snprintf(item, sizeof item, "%s[0]", field);
    if (rc_get_long(err, v->items[0], item, 0, n - 1, &a))
        return RC_ERR_PARSE;
    snprintf(item, sizeof item, "%s[1]", field);
    if (rc_get_long(err, v->items[1], item, 0, n - 1, &b))
        return RC_ERR_PARSE;
    if (a == b)
        return rc_bad(err, v, field, "the two particles must differ");
    *i = (int)a;
    *j = (int)b;
    return RC_OK;
}

/* Record item `item` of the constraints list as the place of every term
 * added since the last call (so that a term violated at the start can be
 * reported at its line); item < 0 records nothing. */
static rc_status rc_place_constraints(rc_error *err, const rc_ynode *seq,
                                      rc_scenario *scn, int item)
{
    const rc_ynode *cn;
    rc_scn_place *np;
    int k;
    if (item < 0 || scn->con_placed == scn->ncon)
        return RC_OK;
    np = (rc_scn_place *)realloc(scn->con_place,
                                 sizeof(rc_scn_place) * (size_t)scn->ncon);
    if (!np)
        return rc_bad(err, seq, "constraints", "out of memory");
    scn->con_place = np;
    cn = seq->items[item];
    for (k = scn->con_placed; k < scn->ncon; ++k) {
        np[k].source = cn->source;
        np[k].line = cn->line;
        np[k].column = cn->column;
        np[k].item = item;
    }
    scn->con_placed = scn->ncon;
    return RC_OK;
}

static rc_status rc_load_constraints(rc_error *err, const rc_ynode *seq,
                                     rc_scenario *scn)
{
    static const char *const k_pairs[] = {"type", "particles", "pairs", NULL};
    static const char *const k_wall[] = {"type", "normal", "offset",
                                         "particles", NULL};
    static const char *const k_sphere[] = {"type", "center", "radius",
                                           "particles", NULL};
    static const char *const k_rod[] = {"type", "particles", "length", NULL};
    static const char *const k_pend[] = {"type", "pivot", "length",
                                         "particles", NULL};
    static const char *const k_line[] = {"type", "point", "direction",
                                         "particles", NULL};
    static const char *const names[] = {"non_overlap", "wall", "container",
                                        "obstacle", "rod", "pendulum",
                                        "plane", "line", NULL};
    int i, cap = 0, dim = scn->dimension;
    char field[64], sub[200];
    if (seq->kind != RC_YNODE_SEQUENCE)
        return rc_bad(err, seq, "constraints", "expected a list, got %s",
                      rc_kind_name(seq));
    for (i = 0; i < seq->n; ++i) {
        const rc_ynode *cn = seq->items[i];
        rc_ynode *tn, *v;
        const char *type = NULL;
        rc_constraint_desc d;
        int t, found = -1;
        /* the place of the terms the previous item added */
        if (rc_place_constraints(err, seq, scn, i - 1))
            return RC_ERR_PARSE;
        if (rc_typed_item(err, cn, "constraints", i, field, sizeof field, sub,
                          sizeof sub, &tn, &type))
            return RC_ERR_PARSE;
        for (t = 0; names[t]; ++t)
            if (!strcmp(type, names[t]))
                found = t;
        if (found < 0)
            return rc_bad(err, tn, sub,
                          "unknown constraint type '%s' (known: non_overlap, "
                          "wall, container, obstacle, rod, pendulum, plane, "
                          "line)",
                          type);
        switch (found) {
        case 0: { /* non_overlap: all pairs, or listed pairs */
            rc_ynode *pairs = rc_ynode_get(cn, "pairs", NULL);
            rc_constraint_desc_init(&d, RC_CON_NON_OVERLAP);
            if (rc_check_keys(err, cn, field, k_pairs))
                return RC_ERR_PARSE;
            v = rc_ynode_get(cn, "particles", NULL);
            if (v && pairs) {
                rc_join(sub, sizeof sub, field, "pairs");
                return rc_bad(err, pairs, sub,
                              "give either particles: all or pairs, not both");
            }
            if (v && !(v->kind == RC_YNODE_SCALAR && !strcmp(v->value, "all"))) {
                rc_join(sub, sizeof sub, field, "particles");
                return rc_bad(err, v, sub,
                              "non_overlap takes particles: all, or a list "
                              "of pairs under 'pairs'");
            }
            if (!pairs) {
                d.i = RC_ALL;
                if (rc_push_constraint_desc(err, cn, field, scn, &d, &cap))
                    return RC_ERR_PARSE;
                break;
            }
            rc_join(sub, sizeof sub, field, "pairs");
            if (pairs->kind != RC_YNODE_SEQUENCE || pairs->n == 0)
                return rc_bad(err, pairs, sub,
                              "expected a non-empty list of pairs [[i, j], ...]");
            for (t = 0; t < pairs->n; ++t) {
                char item[230];
                snprintf(item, sizeof item, "%s[%d]", sub, t);
                if (rc_get_pair(err, pairs->items[t], item, scn->n, &d.i, &d.j) ||
                    rc_push_constraint_desc(err, cn, field, scn, &d, &cap))
                    return RC_ERR_PARSE;
            }
            break;
        }
        case 1: /* wall */
        case 6: /* plane */
            rc_constraint_desc_init(&d, found == 1 ? RC_CON_WALL : RC_CON_PLANE);
            if (rc_check_keys(err, cn, field, k_wall) ||
                rc_require(err, cn, "normal", field, &v))
                return RC_ERR_PARSE;
            rc_join(sub, sizeof sub, field, "normal");
            if (rc_get_vector(err, v, sub, dim, d.normal) ||
                rc_nonzero(err, v, sub, d.normal, dim) ||
                rc_opt_number(err, cn, "offset", field, &d.offset) ||
                rc_constraint_targets(err, cn, field, scn, &d, &cap, 1))
                return RC_ERR_PARSE;
            break;
        case 2: /* container */
        case 3: /* obstacle */
            rc_constraint_desc_init(&d, found == 2 ? RC_CON_CONTAINER
                                                   : RC_CON_OBSTACLE);
            if (rc_check_keys(err, cn, field, k_sphere) ||
                rc_req_number(err, cn, "radius", field, &d.radius))
                return RC_ERR_PARSE;
            if (!(d.radius > 0.0)) {
                rc_join(sub, sizeof sub, field, "radius");
                return rc_bad(err, rc_ynode_get(cn, "radius", NULL), sub,
                              "radius must be > 0, got %g", d.radius);
            }
            if ((v = rc_ynode_get(cn, "center", NULL)) != NULL) {
                rc_join(sub, sizeof sub, field, "center");
                if (rc_get_vector(err, v, sub, dim, d.point))
                    return RC_ERR_PARSE;
            }
            if (rc_constraint_targets(err, cn, field, scn, &d, &cap, 1))
                return RC_ERR_PARSE;
            break;
        case 4: /* rod */
            rc_constraint_desc_init(&d, RC_CON_ROD);
            if (rc_check_keys(err, cn, field, k_rod) ||
                rc_require(err, cn, "particles", field, &v))
                return RC_ERR_PARSE;
            rc_join(sub, sizeof sub, field, "particles");
            if (rc_get_pair(err, v, sub, scn->n, &d.i, &d.j) ||
                rc_opt_number(err, cn, "length", field, &d.length))
                return RC_ERR_PARSE;
            if (rc_ynode_get(cn, "length", NULL) && !(d.length > 0.0)) {
                rc_join(sub, sizeof sub, field, "length");
                return rc_bad(err, rc_ynode_get(cn, "length", NULL), sub,
                              "length must be > 0, got %g", d.length);
            }
            if (rc_push_constraint_desc(err, cn, field, scn, &d, &cap))
                return RC_ERR_PARSE;
            break;
        case 5: /* pendulum */
            rc_constraint_desc_init(&d, RC_CON_PENDULUM);
            if (rc_check_keys(err, cn, field, k_pend) ||
                rc_require(err, cn, "pivot", field, &v))
                return RC_ERR_PARSE;
            rc_join(sub, sizeof sub, field, "pivot");
            if (rc_get_vector(err, v, sub, dim, d.point) ||
                rc_opt_number(err, cn, "length", field, &d.length))
                return RC_ERR_PARSE;
            if (rc_ynode_get(cn, "length", NULL) && !(d.length > 0.0)) {
                rc_join(sub, sizeof sub, field, "length");
                return rc_bad(err, rc_ynode_get(cn, "length", NULL), sub,
                              "length must be > 0, got %g", d.length);
            }
            if (rc_constraint_targets(err, cn, field, scn, &d, &cap, 0))
                return RC_ERR_PARSE;
            break;
        case 7: { /* line: the d-1 planes through `point` normal to it */
            double dir[3] = {0.0, 0.0, 0.0}, pt[3] = {0.0, 0.0, 0.0};
            double basis[3][3], len = 0.0;
            int nb = 0, a, k;
            if (rc_check_keys(err, cn, field, k_line) ||
                rc_require(err, cn, "direction", field, &v))
                return RC_ERR_PARSE;
            rc_join(sub, sizeof sub, field, "direction");
            if (rc_get_vector(err, v, sub, dim, dir) ||
                rc_nonzero(err, v, sub, dir, dim))
                return RC_ERR_PARSE;
            if ((v = rc_ynode_get(cn, "point", NULL)) != NULL) {
                rc_join(sub, sizeof sub, field, "point");
                if (rc_get_vector(err, v, sub, dim, pt))
                    return RC_ERR_PARSE;
            }
            if (dim == 1)
                return rc_bad(err, cn, field,
                              "a line constraint needs dimension 2 or 3");
            for (k = 0; k < dim; ++k)
                len += dir[k] * dir[k];
            len = sqrt(len);
            for (k = 0; k < dim; ++k)
                dir[k] /= len;
            /* Gram-Schmidt of the axes against dir: d-1 unit normals */
            for (a = 0; a < dim && nb < dim - 1; ++a) {
                double u[3] = {0.0, 0.0, 0.0}, s, nrm = 0.0;
                int b;
                u[a] = 1.0;
                s = dir[a];
                for (k = 0; k < dim; ++k)
                    u[k] -= s * dir[k];
                for (b = 0; b < nb; ++b) {
                    s = 0.0;
                    for (k = 0; k < dim; ++k)
                        s += u[k] * basis[b][k];
                    for (k = 0; k < dim; ++k)
                        u[k] -= s * basis[b][k];
                }
                for (k = 0; k < dim; ++k)
                    nrm += u[k] * u[k];
                if (nrm < 1e-6)
                    continue;
                for (k = 0; k < dim; ++k)
                    basis[nb][k] = u[k] / sqrt(nrm);
                nb++;
            }
            for (a = 0; a < nb; ++a) {
                rc_constraint_desc_init(&d, RC_CON_PLANE);
                d.offset = 0.0;
                for (k = 0; k < dim; ++k) {
                    d.normal[k] = basis[a][k];
                    d.offset += basis[a][k] * pt[k];
                }
                if (rc_constraint_targets(err, cn, field, scn, &d, &cap, 1))
                    return RC_ERR_PARSE;
            }
            break;
        }
        default:
            return rc_bad(err, tn, sub, "unhandled constraint type");
        }
    }
    return rc_place_constraints(err, seq, scn, seq->n - 1);
}


/* ------------------------------------------------------------------ */
/* Ensembles.                                                          */

/* 1 when the whole of s reads as a number. */
static int strtod_full(const char *s)
{
    char *end;
    if (!*s)
        return 0;
    strtod(s, &end);
    return *end == '\0';
}

/* ru->target, ti, tj from ru->path: "integrator.dt",
 * "particles[i].key[j]" or "particles[i].key" (the syntax the member
 * runs read; RC_TARGET_OTHER for anything else). */
static void rc_rule_target(rc_vary_rule *ru)
{
    char key[16];
    int used = 0, i = -1, j = -1;
    ru->target = RC_TARGET_OTHER;
    ru->ti = ru->tj = -1;
    if (!strcmp(ru->path, "integrator.dt")) {
        ru->target = RC_TARGET_DT;
        return;
    }
    if (sscanf(ru->path, "particles[%d].%15[a-z][%d]%n", &i, key, &j,
               &used) == 3 &&
        ru->path[used] == '\0') {
        ru->ti = i;
        ru->tj = j;
        ru->target = !strcmp(key, "position")   ? RC_TARGET_POSITION
                     : !strcmp(key, "momentum") ? RC_TARGET_MOMENTUM
                                                : RC_TARGET_OTHER;
        return;
    }
    used = 0;
    if (sscanf(ru->path, "particles[%d].%15[a-z]%n", &i, key, &used) == 2 &&
        ru->path[used] == '\0') {
        ru->ti = i;
        ru->target = !strcmp(key, "mass")     ? RC_TARGET_MASS
                     : !strcmp(key, "radius") ? RC_TARGET_RADIUS
                                              : RC_TARGET_OTHER;
    }
}

static rc_status rc_load_ensemble(rc_error *err, const rc_ynode *map,
                                  rc_scenario *scn)
{
    static const char *const keys[] = {"members", "seed", "grid", "vary",
                                       "reference", "map", NULL};
    static const char *const rule_keys[] = {"path", "linspace", "uniform",
                                            "normal", "values", "count",
                                            NULL};
    static const char *const map_keys[] = {"type", "length", "y", "theta",
                                           "ydot", "thetadot", "beta", NULL};
    rc_ensemble_spec *e = &scn->ens;
    rc_ynode *v, *vary;
    char field[96], sub[200];
    long n;
    int r;
    if (rc_expect_mapping(err, map, "ensemble") ||
        rc_check_keys(err, map, "ensemble", keys))
        return RC_ERR_PARSE;
    e->present = 1;
    if ((v = rc_ynode_get(map, "members", NULL)) != NULL &&
        rc_get_long(err, v, "ensemble.members", 1, 100000000L, &e->members))
        return RC_ERR_PARSE;
    if ((v = rc_ynode_get(map, "seed", NULL)) != NULL) {
        if (rc_get_long(err, v, "ensemble.seed", 0, 9007199254740991L, &n))
            return RC_ERR_PARSE;
        e->seed = (unsigned long long)n;
    }
    if (rc_opt_bool(err, map, "grid", "ensemble", &e->grid))
        return RC_ERR_PARSE;
    if ((v = rc_ynode_get(map, "map", NULL)) != NULL) {
        const char *type = NULL;
        rc_ynode *tn;
        if (rc_expect_mapping(err, v, "ensemble.map") ||
            rc_check_keys(err, v, "ensemble.map", map_keys) ||
            rc_require(err, v, "type", "ensemble.map", &tn) ||
            rc_get_string(err, tn, "ensemble.map.type", &type))
            return RC_ERR_PARSE;
        if (strcmp(type, "cart_pendulum") && strcmp(type, "cart_pendulum_xi"))
            return rc_bad(err, tn, "ensemble.map.type",
                          "unknown map '%s' (known: cart_pendulum, "
                          "cart_pendulum_xi)",
                          type);
        if (scn->dimension != 2 || scn->n != 2)
            return rc_bad(err, tn, "ensemble.map.type",
                          "cart_pendulum maps (y, theta, ydot, thetadot) to "
                          "two particles in 2-D (cart, bob)");
        e->map = strcmp(type, "cart_pendulum") ? RC_MAP_CART_PENDULUM_XI
                                               : RC_MAP_CART_PENDULUM;
        e->map_par[0] = 1.0;
        if (rc_opt_number(err, v, "length", "ensemble.map", &e->map_par[0]) ||
            rc_opt_number(err, v, "y", "ensemble.map", &e->map_par[1]) ||
            rc_opt_number(err, v, "theta", "ensemble.map", &e->map_par[2]) ||
            rc_opt_number(err, v, "ydot", "ensemble.map", &e->map_par[3]) ||
            rc_opt_number(err, v, "thetadot", "ensemble.map", &e->map_par[4]) ||
            rc_opt_number(err, v, "beta", "ensemble.map", &e->map_par[5]))
            return RC_ERR_PARSE;
        if (!(e->map_par[0] > 0.0))
            return rc_bad(err, v, "ensemble.map.length", "must be > 0");
    }
    if ((v = rc_ynode_get(map, "reference", NULL)) != NULL) {
        static const char *const ref_keys[] = {"dt", "method", NULL};
        rc_ynode *mn;
        e->has_reference = 1;
        e->ref_method = scn->integ.method;
        if (rc_expect_mapping(err, v, "ensemble.reference") ||
            rc_check_keys(err, v, "ensemble.reference", ref_keys) ||
            rc_req_number(err, v, "dt", "ensemble.reference", &e->ref_dt))
            return RC_ERR_PARSE;
        e->ref_model_method = scn->model ? scn->model_method : NULL;
        if ((mn = rc_ynode_get(v, "method", NULL)) != NULL) {
            const char *name = NULL;
            int m, found = -1;
            if (rc_get_string(err, mn, "ensemble.reference.method", &name))
                return RC_ERR_PARSE;
            for (m = 0; !scn->model && m < RC_METHOD_COUNT_; ++m)
                if (!strcmp(name, rc_method_name((rc_method)m)))
                    found = m;
            if (scn->model) {
                /* a model's reference runs one of its kind's methods */
                e->ref_model_method =
                    rc_model_method_find(scn->model->kind, name);
                if (!e->ref_model_method)
                    return rc_bad(err, mn, "ensemble.reference.method",
                                  "unknown method '%s' for a model of kind "
                                  "'%s'",
                                  name, scn->model->kind->name);
            } else if (found < 0) {
                return rc_bad(err, mn, "ensemble.reference.method",
                              "unknown method '%s'", name);
            } else {
                e->ref_method = (rc_method)found;
            }
        }
        {
            /* the reference must sample the same output grid */
            double ratio = scn->integ.dt / e->ref_dt;
            if (!(e->ref_dt > 0.0) || fabs(ratio - floor(ratio + 0.5)) >
                                          1e-9 * ratio ||
                ratio < 1.0)
                return rc_bad(err, rc_ynode_get(v, "dt", NULL),
                              "ensemble.reference.dt",
                              "must divide integrator.dt (%g) a whole number "
                              "of times, got %g",
                              scn->integ.dt, e->ref_dt);
        }
    }
    if (!(vary = rc_ynode_get(map, "vary", NULL)))
        return rc_bad(err, map, "ensemble.vary",
                      "missing required key 'vary'");
    if (vary->kind != RC_YNODE_SEQUENCE || vary->n == 0)
        return rc_bad(err, vary, "ensemble.vary",
                      "expected a non-empty list of rules");
    e->rules = (rc_vary_rule *)calloc((size_t)vary->n, sizeof(rc_vary_rule));
    if (!e->rules)
        return rc_bad(err, vary, "ensemble.vary", "out of memory");
    e->nrules = vary->n;
    for (r = 0; r < vary->n; ++r) {
        rc_vary_rule *ru = &e->rules[r];
        const rc_ynode *rn = vary->items[r];
        const char *path = NULL;
        rc_ynode *pn, *kn = NULL;
        int kinds = 0, k;
        snprintf(field, sizeof field, "ensemble.vary[%d]", r);
        if (rc_expect_mapping(err, rn, field) ||
            rc_check_keys(err, rn, field, rule_keys) ||
            rc_require(err, rn, "path", field, &pn))
            return RC_ERR_PARSE;
        rc_join(sub, sizeof sub, field, "path");
        if (rc_get_string(err, pn, sub, &path))
            return RC_ERR_PARSE;
        if (strlen(path) >= sizeof ru->path || strchr(path, '='))
            return rc_bad(err, pn, sub, "bad field path '%s'", path);
        if (!strncmp(path, "map.", 4) &&
            (e->map == RC_MAP_NONE ||
             (e->map == RC_MAP_CART_PENDULUM && strcmp(path + 4, "y") &&
              strcmp(path + 4, "theta") && strcmp(path + 4, "ydot") &&
              strcmp(path + 4, "thetadot")) ||
             (e->map == RC_MAP_CART_PENDULUM_XI && strcmp(path + 4, "beta"))))
            return rc_bad(err, pn, sub,
                          "'%s' names no parameter of ensemble.map (y, "
                          "theta, ydot, thetadot of cart_pendulum; beta of "
                          "cart_pendulum_xi)",
                          path);
        snprintf(ru->path, sizeof ru->path, "%s", path);
        rc_rule_target(ru);
        for (k = 0; k < 4; ++k) {
            static const char *const kn_names[] = {"linspace", "uniform",
                                                   "normal", "values"};
            rc_ynode *x = rc_ynode_get(rn, kn_names[k], NULL);
            if (x) {
                kinds++;
                kn = x;
                ru->kind = (rc_vary_kind)k;
            }
        }
        if (kinds != 1)
            return rc_bad(err, rn, field,
                          "a rule needs exactly one of linspace, uniform, "
                          "normal, values");
        snprintf(sub, sizeof sub, "%s.%s", field,
                 ru->kind == RC_VARY_LINSPACE  ? "linspace"
                 : ru->kind == RC_VARY_UNIFORM ? "uniform"
                 : ru->kind == RC_VARY_NORMAL  ? "normal"
                                               : "values");
        if (ru->kind == RC_VARY_LINSPACE || ru->kind == RC_VARY_UNIFORM) {
            double ab[2];
            if (rc_get_numbers(err, kn, sub, 2, ab))
                return RC_ERR_PARSE;
            ru->a = ab[0];
            ru->b = ab[1];
        } else if (ru->kind == RC_VARY_NORMAL) {
            static const char *const nk[] = {"mean", "sigma", NULL};
            if (rc_expect_mapping(err, kn, sub) ||
                rc_check_keys(err, kn, sub, nk) ||
                rc_req_number(err, kn, "mean", sub, &ru->a) ||
                rc_req_number(err, kn, "sigma", sub, &ru->b))
                return RC_ERR_PARSE;
            if (ru->b < 0.0)
                return rc_bad(err, kn, sub, "sigma must be >= 0");
        } else {
            if (kn->kind != RC_YNODE_SEQUENCE || kn->n == 0)
                return rc_bad(err, kn, sub,
                              "expected a non-empty list of numbers");
            ru->values = (double *)malloc(sizeof(double) * (size_t)kn->n);
            if (!ru->values)
                return rc_bad(err, kn, sub, "out of memory");
            ru->nvalues = kn->n;
            /* numbers, or words (a method name) when the first is a word */
            if (kn->items[0]->kind == RC_YNODE_SCALAR &&
                (kn->items[0]->quoted ||
                 !strtod_full(kn->items[0]->value))) {
                ru->texts = (char **)calloc((size_t)kn->n, sizeof(char *));
                if (!ru->texts)
                    return rc_bad(err, kn, sub, "out of memory");
            }
            for (k = 0; k < kn->n; ++k) {
                char item[230];
                snprintf(item, sizeof item, "%s[%d]", sub, k);
                if (ru->texts) {
                    const char *word = NULL;
                    if (rc_get_string(err, kn->items[k], item, &word))
                        return RC_ERR_PARSE;
                    if (!*word || strchr(word, '=') || strchr(word, ','))
                        return rc_bad(err, kn->items[k], item,
                                      "bad value '%s'", word);
                    ru->texts[k] = (char *)malloc(strlen(word) + 1);
                    if (!ru->texts[k])
                        return rc_bad(err, kn, sub, "out of memory");
                    memcpy(ru->texts[k], word, strlen(word) + 1);
                    ru->values[k] = NAN;
                } else if (rc_get_number(err, kn->items[k], item,
                                         &ru->values[k])) {
                    return RC_ERR_PARSE;
                }
            }
        }
        if ((kn = rc_ynode_get(rn, "count", NULL)) != NULL) {
            rc_join(sub, sizeof sub, field, "count");
            if (ru->kind != RC_VARY_LINSPACE || !e->grid)
                return rc_bad(err, kn, sub,
                              "count applies to linspace rules of a grid");
            if (rc_get_long(err, kn, sub, 1, 100000000L, &ru->count))
                return RC_ERR_PARSE;
        }
    }
    /* member count: a grid is the product of its axes (linspace with
     * count, values); otherwise every rule spans `members` */
    if (e->grid) {
        long prod = 1;
        for (r = 0; r < e->nrules; ++r) {
            rc_vary_rule *ru = &e->rules[r];
            long axis = ru->kind == RC_VARY_LINSPACE ? ru->count
                        : ru->kind == RC_VARY_VALUES ? ru->nvalues
                                                     : 1;
            if (ru->kind == RC_VARY_LINSPACE && axis < 1) {
                snprintf(field, sizeof field, "ensemble.vary[%d]", r);
                return rc_bad(err, vary->items[r], field,
                              "a linspace axis of a grid needs count");
            }
            if (prod > 100000000L / axis)
                return rc_bad(err, map, "ensemble",
                              "the grid has more than 1e8 members");
            prod *= axis;
        }
        if (e->members && e->members != prod)
            return rc_bad(err, rc_ynode_get(map, "members", NULL),
                          "ensemble.members",
                          "the grid has %ld members, not %ld", prod,
                          e->members);
        e->members = prod;
    } else {
        if (!e->members)
            return rc_bad(err, map, "ensemble.members",
                          "missing required key 'members'");
        for (r = 0; r < e->nrules; ++r)
            if (e->rules[r].kind == RC_VARY_VALUES &&
                e->rules[r].nvalues != e->members) {
                snprintf(field, sizeof field, "ensemble.vary[%d].values", r);
                return rc_bad(err, vary->items[r], field,
                              "has %ld values for %ld members",
                              e->rules[r].nvalues, e->members);
            }
    }
    return RC_OK;
}

static rc_status rc_load_tree(rc_error *err, const rc_ynode *root,
                              rc_scenario *scn);
static rc_status rc_load_md(rc_error *err, const rc_ynode *root,
                            rc_scenario *scn);
static rc_status rc_check_md_model(rc_error *err, const rc_ynode *root,
                                   rc_scenario *scn);
static rc_status rc_load_read(rc_error *err, const rc_ynode *root,
                              const rc_ynode *rd, rc_scenario *scn);

/* splitmix64: counter-based uniform numbers keyed by (seed, member,
 * rule, draw), so member k's values do not depend on any other member,
 * thread or batch. */
static unsigned long long rc_mix64(unsigned long long z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double rc_member_uniform(unsigned long long seed, long member,
                                int rule, int draw)
{
    unsigned long long z = rc_mix64(seed);
    z = rc_mix64(z ^ (unsigned long long)member);
    z = rc_mix64(z ^ ((unsigned long long)rule << 8 | (unsigned)draw));
    /* 52 random bits, centred in their cell: strictly inside (0, 1)
     * (never 0 for the log of Box-Muller, never 1 for uniform's b);
     * (2^52 - 0.5) 2^-52 is exact in a double */
    return ((double)(z >> 12) + 0.5) * (1.0 / 4503599627370496.0);
}

long rc_rule_points_(const rc_ensemble_spec *e, int r)
{
    const rc_vary_rule *ru = &e->rules[r];
    if (!e->grid)
        return e->members;
    return ru->kind == RC_VARY_LINSPACE ? ru->count
           : ru->kind == RC_VARY_VALUES ? ru->nvalues
                                        : 1;
}

long rc_rule_index_(const rc_ensemble_spec *e, long k, int r)
{
    /* grid: mixed-radix digits of k, first axis fastest */
    long stride = 1;
    int a;
    if (!e->grid)
        return k;
    for (a = 0; a < r; ++a)
        stride *= rc_rule_points_(e, a);
    return (k / stride) % rc_rule_points_(e, r);
}

const char *rc_rule_text_(const rc_ensemble_spec *e, long k, int r)
{
    const rc_vary_rule *ru = &e->rules[r];
    return ru->texts ? ru->texts[rc_rule_index_(e, k, r)] : NULL;
}

/* Value of rule r for member k (NaN for a word-valued rule). */
double rc_rule_value_(const rc_ensemble_spec *e, long k, int r)
{
    const rc_vary_rule *ru = &e->rules[r];
    long idx = rc_rule_index_(e, k, r), n = rc_rule_points_(e, r);
    switch (ru->kind) {
    case RC_VARY_LINSPACE:
        return n > 1 ? ru->a + (ru->b - ru->a) * (double)idx / (double)(n - 1)
                     : ru->a;
    case RC_VARY_VALUES:
        return ru->texts ? NAN : ru->values[idx];
    case RC_VARY_UNIFORM:
        return ru->a + (ru->b - ru->a) * rc_member_uniform(e->seed, k, r, 0);
    case RC_VARY_NORMAL: {
        double u1 = rc_member_uniform(e->seed, k, r, 0);
        double u2 = rc_member_uniform(e->seed, k, r, 1);
        return ru->a +
               ru->b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    }
    }
    return 0.0;
}

/* The particle states of a named initial-condition map from its
 * parameters mp (after the member's rules), seed 001 §5.1 in maximal
 * coordinates: the cart (particle 0) at (0, y) on the line x = 0, the bob
 * (particle 1) at the end of a rod of length L hanging at angle theta
 * from the downward vertical; momenta m v from (ydot, thetadot).  For
 * cart_pendulum_xi, Xi(beta) = (y, theta, ydot, thetadot) = (beta, 0, 0,
 * 3.5 - 0.18 beta) with beta in mp[5]. */
static void rc_map_state(const rc_scenario *base, const double *mp_in,
                         double q0[2], double p0[2], double q1[2],
                         double p1[2])
{
    double mp[6], L, y, th, yd, thd;
    double m0 = base->particles[0].mass, m1 = base->particles[1].mass;
    memcpy(mp, mp_in, sizeof mp);
    if (base->ens.map == RC_MAP_CART_PENDULUM_XI) {
        mp[1] = mp[5];
        mp[2] = 0.0;
        mp[3] = 0.0;
        mp[4] = 3.5 - 0.18 * mp[5];
    }
    L = mp[0];
    y = mp[1];
    th = mp[2];
    yd = mp[3];
    thd = mp[4];
    q0[0] = 0.0;
    q0[1] = y;
    p0[0] = 0.0;
    p0[1] = m0 * yd;
    q1[0] = L * sin(th);
    q1[1] = y - L * cos(th);
    p1[0] = m1 * L * cos(th) * thd;
    p1[1] = m1 * (yd + L * sin(th) * thd);
}

/* Map parameter slot of a rule path "map.<name>". */
static int rc_map_slot(const char *name)
{
    return !strcmp(name, "y") ? 1 : !strcmp(name, "theta") ? 2
           : !strcmp(name, "ydot") ? 3 : !strcmp(name, "thetadot") ? 4 : 5;
}

/* Particle i of the scenario's file is given by `velocity` (or is not
 * there): 1.  Its momentum is m v, so a rule on its momentum or mass is
 * not a plain change of that one number. */
static int rc_particle_by_velocity(const rc_scenario *base, int i)
{
    const rc_ynode *parts = rc_ynode_get(base->tree, "particles", NULL);
    return !parts || i >= parts->n ||
           rc_ynode_get(parts->items[i], "velocity", NULL) != NULL;
}

/* Rule path "particles[i].position[j]" or "particles[i].momentum[j]":
 * 1 with *i, *j, *is_momentum set, else 0. */
static int rc_state_path(const rc_scenario *base, const rc_vary_rule *ru,
                         int *i, int *j, int *is_momentum)
{
    if (ru->target != RC_TARGET_POSITION && ru->target != RC_TARGET_MOMENTUM)
        return 0;
    *i = ru->ti;
    *j = ru->tj;
    if (*i < 0 || *i >= base->n || *j < 0 || *j >= base->dimension)
        return 0;
    *is_momentum = ru->target == RC_TARGET_MOMENTUM;
    /* a particle given by velocity would get both keys */
    return !*is_momentum || !rc_particle_by_velocity(base, *i);
}

/* Rule path of a member's run parameter: "integrator.dt" (*i = -1,
 * *what = 0), "particles[i].mass" (*what = 1) or "particles[i].radius"
 * (*what = 2).  A mass rule on a particle given by velocity is not one
 * (its momentum m v would change with it).  1 with *i and *what set. */
static int rc_param_path(const rc_scenario *base, const rc_vary_rule *ru,
                         int *i, int *what)
{
    if (ru->target == RC_TARGET_DT) {
        *i = -1;
        *what = 0;
        return 1;
    }
    if (ru->target != RC_TARGET_MASS && ru->target != RC_TARGET_RADIUS)
        return 0;
    *i = ru->ti;
    if (*i < 0 || *i >= base->n)
        return 0;
    *what = ru->target == RC_TARGET_MASS ? 1 : 2;
    return *what == 2 || !rc_particle_by_velocity(base, *i);
}

/* The method named `name` if the batch engine's member body steps it
 * (rc_k_method_step), else -1. */
static int rc_batch_method(const char *name)
{
    static const rc_method ok[] = {RC_METHOD_GVI, RC_METHOD_CVA,
                                   RC_METHOD_MCVA, RC_METHOD_DIRECT_ENDPOINT,
                                   RC_METHOD_DIRECT_MIDPOINT};
    int m;
    for (m = 0; m < (int)(sizeof ok / sizeof ok[0]); ++m)
        if (!strcmp(name, rc_method_name(ok[m])))
            return (int)ok[m];
    return -1;
}

/* rc_member_state_supported_, and with `for_reference` the same for the
 * members' reference runs, which replace integrator.dt and
 * integrator.method (rc_reference_scenario_): rules on those two are
 * then passed over. */
static int rc_state_supported(const rc_scenario *base, int for_reference,
                              int *params)
{
    const rc_ensemble_spec *e = &base->ens;
    int r, i, j, mom;
    long v;
    *params = 0;
    for (r = 0; r < e->nrules; ++r) {
        if (for_reference && (!strcmp(e->rules[r].path, "integrator.dt") ||
                              !strcmp(e->rules[r].path, "integrator.method")))
            continue;
        if (e->rules[r].texts) {
            /* the only word-valued rule is a method */
            if (strcmp(e->rules[r].path, "integrator.method"))
                return 0;
            for (v = 0; v < e->rules[r].nvalues; ++v)
                if (rc_batch_method(e->rules[r].texts[v]) < 0)
                    return 0;
            *params |= RC_PARAM_METHOD;
            continue;
        }
        if (!strncmp(e->rules[r].path, "map.", 4))
            continue;
        if (rc_param_path(base, &e->rules[r], &i, &j)) {
            *params |= 1 << j;
            continue;
        }
        if (!rc_state_path(base, &e->rules[r], &i, &j, &mom))
            return 0;
    }
    return 1;
}

int rc_member_state_supported_(const rc_scenario *base, int *params)
{
    return rc_state_supported(base, 0, params);
}

int rc_reference_state_supported_(const rc_scenario *base, int *params)
{
    return rc_state_supported(base, 1, params);
}

int rc_member_params_(const rc_scenario *base, long k, rc_member_params *mp)
{
    const rc_ensemble_spec *e = &base->ens;
    const rc_ynode *out = rc_ynode_get(base->tree, "output", NULL);
    int r, i, what, ok = 1, n = base->n, d = base->dimension, c;
    double dur = base->duration;
    mp->dt = base->integ.dt;
    mp->method = base->integ.method;
    for (i = 0; i < n; ++i) {
        mp->mass[i] = base->particles[i].mass;
        mp->radius[i] = base->particles[i].radius;
    }
    for (r = 0; r < e->nrules; ++r) {
        double v;
        if (e->rules[r].texts && !strcmp(e->rules[r].path,
                                         "integrator.method")) {
            int m = rc_batch_method(rc_rule_text_(e, k, r));
            if (m < 0)
                ok = 0;
            else
                mp->method = (rc_method)m;
            continue;
        }
        if (!rc_param_path(base, &e->rules[r], &i, &what))
            continue;
        v = rc_rule_value_(e, k, r);
        if (what == 0)
            mp->dt = v;
        else if (what == 1)
            mp->mass[i] = v;
        else
            mp->radius[i] = v;
    }
    /* the checks of the loader and rc_system_add_particle: a member that
     * fails one is left to the per-member engine, which words it */
    if (!(mp->dt > 0.0) || !isfinite(mp->dt) || mp->dt > dur ||
        dur / mp->dt > 1e15)
        ok = 0;
    for (i = 0; i < n; ++i) {
        ok &= mp->mass[i] > 0.0 && isfinite(mp->mass[i]);
        ok &= mp->radius[i] >= 0.0 && isfinite(mp->radius[i]);
        mp->inv_mass[i] = 1.0 / mp->mass[i];
    }
    for (c = 0; c < n * d; ++c) {
        mp->mass_c[c] = mp->mass[c / d];
        mp->inv_mass_c[c] = mp->inv_mass[c / d];
    }
    /* rc_total_steps and rc_load_output's default row cadence */
    mp->steps = (long)llround(dur / mp->dt);
    if (out && rc_ynode_get(out, "every", NULL))
        mp->every = base->every;
    else
        mp->every = mp->steps > 1000 ? (mp->steps + 999) / 1000 : 1;
    mp->rows = mp->steps / mp->every + 1 + (mp->steps % mp->every != 0);
    return ok;
}

void rc_member_state_(const rc_scenario *base, long k, double *values,
                      double *q, double *p)
{
    const rc_ensemble_spec *e = &base->ens;
    int r, i, j, mom, d = base->dimension;
    double mp[6];
    memcpy(mp, e->map_par, sizeof mp);
    for (i = 0; i < base->n; ++i)
        for (j = 0; j < d; ++j) {
            q[i * d + j] = base->particles[i].q[j];
            p[i * d + j] = base->particles[i].p[j];
        }
    for (r = 0; r < e->nrules; ++r) {
        double v = rc_rule_value_(e, k, r);
        if (values)
            values[r] = v;
        if (!strncmp(e->rules[r].path, "map.", 4)) {
            mp[rc_map_slot(e->rules[r].path + 4)] = v;
            continue;
        }
        if (rc_state_path(base, &e->rules[r], &i, &j, &mom))
            (mom ? p : q)[i * d + j] = v;
    }
    if (e->map != RC_MAP_NONE) {
        double q0[2], p0[2], q1[2], p1[2];
        rc_map_state(base, mp, q0, p0, q1, p1);
        for (j = 0; j < 2; ++j) {
            q[j] = q0[j];
            p[j] = p0[j];
            q[d + j] = q1[j];
            p[d + j] = p1[j];
        }
    }
}

rc_status rc_scenario_member_(const rc_scenario *base, long k, double *values,
                              rc_scenario **out, rc_error *err)
{
    const rc_ensemble_spec *e = &base->ens;
    rc_scenario *m = NULL;
    rc_ynode *tree = NULL;
    rc_status st = RC_OK;
    double mp[6];
    char assign[400];
    int r;
    *out = NULL;
    memset(err, 0, sizeof *err);
    tree = rc_ynode_clone(base->tree);
    m = (rc_scenario *)calloc(1, sizeof *m);
    if (!tree || !m) {
        st = err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        goto done;
    }
    m->member = 1;
    memcpy(mp, e->map_par, sizeof mp);
    for (r = 0; r < e->nrules; ++r) {
        double v = rc_rule_value_(e, k, r);
        if (values)
            values[r] = v;
        if (!strncmp(e->rules[r].path, "map.", 4)) {
            mp[rc_map_slot(e->rules[r].path + 4)] = v;
            continue;
        }
        if (e->rules[r].texts)
            snprintf(assign, sizeof assign, "%s=%s", e->rules[r].path,
                     rc_rule_text_(e, k, r));
        else
            snprintf(assign, sizeof assign, "%s=%.17g", e->rules[r].path, v);
        if ((st = rc_yaml_apply_override(tree, assign, err)) != RC_OK)
            goto done;
    }
    if (e->map != RC_MAP_NONE) {
        double q0[2], p0[2], q1[2], p1[2];
        rc_map_state(base, mp, q0, p0, q1, p1);
        snprintf(assign, sizeof assign, "particles[0].position=[%.17g, %.17g]",
                 q0[0], q0[1]);
        st = rc_yaml_apply_override(tree, assign, err);
        if (st == RC_OK) {
            snprintf(assign, sizeof assign,
                     "particles[0].momentum=[%.17g, %.17g]", p0[0], p0[1]);
            st = rc_yaml_apply_override(tree, assign, err);
        }
        if (st == RC_OK) {
            snprintf(assign, sizeof assign,
                     "particles[1].position=[%.17g, %.17g]", q1[0], q1[1]);
            st = rc_yaml_apply_override(tree, assign, err);
        }
        if (st == RC_OK) {
            snprintf(assign, sizeof assign,
                     "particles[1].momentum=[%.17g, %.17g]", p1[0], p1[1]);
            st = rc_yaml_apply_override(tree, assign, err);
        }
        if (st != RC_OK)
            goto done;
    }
    snprintf(m->path, sizeof m->path, "%s", base->path);
    if ((st = rc_load_tree(err, tree, m)) != RC_OK)
        goto done;
    snprintf(m->name, sizeof m->name, "%s", base->name);
done:
    rc_ynode_free(tree);
    if (st != RC_OK) {
        rc_scenario_free(m);
        if (!err->status)
            err->status = st;
        return st;
    }
    *out = m;
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Integrator and output.                                              */

/* integrator.avi (method avi only; README "Asynchronous variational
 * integrator"): steps of the potential terms and the penalty layers. */
static rc_status rc_load_avi(rc_error *err, const rc_ynode *map,
                             rc_scenario *scn)
{
    static const char *const keys[] = {
        "gravity_step", "spring_step", "anchor_step", "pair_step",
        "external_step", "eta1", "eta_exponent", "layer_step",
        "layer_resolution", "stiffness_exponent", "max_layers", "skin",
        NULL};
    rc_avi_desc *a = &scn->integ.avi;
    double *num[11];
    int k;
    char sub[200];
    rc_ynode *v;
    /* read and checked under every method, used by avi alone: one file
     * runs under every method in `ricochet compare` */
    if (rc_expect_mapping(err, map, "integrator.avi") ||
        rc_check_keys(err, map, "integrator.avi", keys))
        return RC_ERR_PARSE;
    num[0] = &a->gravity_step;
    num[1] = &a->spring_step;
    num[2] = &a->anchor_step;
    num[3] = &a->pair_step;
    num[4] = &a->external_step;
    num[5] = &a->eta1;
    num[6] = &a->eta_exponent;
    num[7] = &a->layer_step;
    num[8] = &a->layer_resolution;
    num[9] = &a->stiffness_exponent;
    num[10] = &a->skin;
    for (k = 0; k < 11; ++k) {
        const char *key = keys[k < 10 ? k : 11];
        snprintf(sub, sizeof sub, "integrator.avi.%s", key);
        if (rc_opt_positive(err, map, key, sub, num[k]))
            return RC_ERR_PARSE;
        if (isinf(*num[k]))
            return rc_bad(err, rc_ynode_get(map, key, NULL), sub,
                          "must be finite");
    }
    if (a->eta_exponent > 1.0)
        return rc_bad(err, rc_ynode_get(map, "eta_exponent", NULL),
                      "integrator.avi.eta_exponent",
                      "eta(l) = eta1 l^-e with e in (0, 1] (seed 003 §5 "
                      "uses 1 and 0.25), got %g",
                      a->eta_exponent);
    if (a->layer_resolution >= 2.0)
        return rc_bad(err, rc_ynode_get(map, "layer_resolution", NULL),
                      "integrator.avi.layer_resolution",
                      "h_l sqrt(k_l/mu) must be < 2 for a layer to be "
                      "stable (0.1 is the default), got %g",
                      a->layer_resolution);
    if ((v = rc_ynode_get(map, "max_layers", NULL)) != NULL) {
        long ml;
        if (rc_get_long(err, v, "integrator.avi.max_layers", 1, 1024, &ml))
            return RC_ERR_PARSE;
        a->max_layers = (int)ml;
    }
    return RC_OK;
}

/* What avi cannot run: equality constraints (rods, pendulums, planes,
 * lines) and large systems (a box); refused naming the field. */
static rc_status rc_check_avi(rc_error *err, const rc_ynode *root,
                              const rc_scenario *scn)
{
    const rc_ynode *integ = rc_ynode_get(root, "integrator", NULL);
    const rc_ynode *m = integ ? rc_ynode_get(integ, "method", NULL) : NULL;
    const rc_ynode *seq = rc_ynode_get(root, "constraints", NULL);
    int i;
    if (scn->integ.method != RC_METHOD_AVI)
        return RC_OK;
    if (scn->md.present)
        return rc_bad(err, m ? m : integ, "integrator.method",
                      "method avi runs particle systems (a `particles` "
                      "list with walls, containers and non_overlap); large "
                      "systems (box, lattice, read) take gvi");
    if (seq && seq->kind == RC_YNODE_SEQUENCE)
        for (i = 0; i < seq->n; ++i) {
            rc_ynode *tn = rc_ynode_get(seq->items[i], "type", NULL);
            const char *t = tn && tn->kind == RC_YNODE_SCALAR ? tn->value : "";
            char sub[64];
            if (!strcmp(t, "rod") || !strcmp(t, "pendulum") ||
                !strcmp(t, "plane") || !strcmp(t, "line")) {
                snprintf(sub, sizeof sub, "constraints[%d].type", i);
                return rc_bad(err, tn, sub,
                              "method avi replaces inequality constraints "
                              "by penalty layers and cannot hold the "
                              "equality constraint '%s' (use gvi)",
                              t);
            }
        }
    return RC_OK;
}

static rc_status rc_load_integrator(rc_error *err, const rc_ynode *map,
                                    rc_scenario *scn)
{
    static const char *const keys[] = {
        "method",     "dt",    "duration", "newton_tol",
        "newton_max_iter", "base", "reflection", "energy",
        "eps_g",      "eps_v", "max_reflection_passes", "seed_exact",
        "linearized", "max_events", "collisions", "avi", NULL};
    /* Keys of the constraint methods (gvi, cva, mcva, direct-*); a method
     * that does not use one ignores it (README), so that one file can be
     * run under every method by `ricochet compare`. */
    static const char *const gvi_only[] = {"base", "reflection", "energy",
                                           "eps_g", "eps_v",
                                           "max_reflection_passes",
                                           "seed_exact", "linearized",
                                           "max_events", "collisions",
                                           NULL};
    rc_ynode *v;
    const char *name = "sv";
    char sub[200];
    int m, found = -1;
    if (rc_expect_mapping(err, map, "integrator") ||
        rc_check_keys(err, map, "integrator", keys))
        return RC_ERR_PARSE;
    rc_integrator_desc_init(&scn->integ);
    if ((v = rc_ynode_get(map, "method", NULL)) != NULL &&
        rc_get_string(err, v, "integrator.method", &name))
        return RC_ERR_PARSE;
    if (scn->model) {
        /* the model's kind has its own methods (src/host/model/) */
        char known[400] = "";
        int i;
        if (!rc_ynode_get(map, "method", NULL))
            return rc_bad(err, map, "integrator.method",
                          "a model needs integrator.method (one of the "
                          "methods of its kind '%s')",
                          scn->model->kind->name);
        for (i = 0; rc_model_methods[i]; ++i)
            if (rc_model_methods[i]->kind == scn->model->kind) {
                strncat(known, known[0] ? ", " : "",
                        sizeof known - strlen(known) - 1);
                strncat(known, rc_model_methods[i]->name,
                        sizeof known - strlen(known) - 1);
            }
        if (!(scn->model_method = rc_model_method_find(scn->model->kind,
                                                       name)))
            return rc_bad(err, v, "integrator.method",
                          "unknown method '%s' for a model of kind '%s' "
                          "(known: %s)",
                          name, scn->model->kind->name,
                          known[0] ? known : "none in this build");
        for (m = 0; gvi_only[m]; ++m)
            if (strcmp(gvi_only[m], "max_events") &&
                rc_ynode_get(map, gvi_only[m], &v)) {
                snprintf(sub, sizeof sub, "integrator.%s", gvi_only[m]);
                return rc_bad(err, v, sub,
                              "'%s' applies to particle systems, not to "
                              "the model method %s",
                              gvi_only[m], name);
            }
        found = RC_METHOD_SV; /* unused by model runs */
    }
    for (m = 0; found < 0 && m < RC_METHOD_COUNT_; ++m)
        if (!strcmp(name, rc_method_name((rc_method)m)))
            found = m;
    if (found < 0)
        return rc_bad(err, v, "integrator.method",
                      "unknown method '%s' (this build knows: sv, midpoint, "
                      "gvi, cva, mcva, direct-endpoint, direct-midpoint, "
                      "avi)",
                      name);
    scn->integ.method = (rc_method)found;
    if (!scn->model && !rc_method_takes_constraints(scn->integ.method))
        for (m = 0; gvi_only[m]; ++m)
            if (rc_ynode_get(map, gvi_only[m], &v)) {
                snprintf(sub, sizeof sub, "integrator.%s", gvi_only[m]);
                return rc_bad(err, v, sub,
                              "'%s' applies to the constraint methods (gvi, "
                              "cva, mcva, direct-*), not to %s",
                              gvi_only[m], name);
            }
    {
        /* base, reflection, energy: names from the library's tables */
        static const char *const which[] = {"base", "reflection", "energy"};
        int w, c;
        for (w = 0; w < 3; ++w) {
            const char *val = NULL;
            int choice = -1, count = w == 0   ? RC_BASE_COUNT_
                                    : w == 1 ? RC_REFLECT_COUNT_
                                             : RC_ENERGY_COUNT_;
            char known[120] = "";
            if (!(v = rc_ynode_get(map, which[w], NULL)))
                continue;
            snprintf(sub, sizeof sub, "integrator.%s", which[w]);
            if (rc_get_string(err, v, sub, &val))
                return RC_ERR_PARSE;
            for (c = 0; c < count; ++c) {
                const char *nm = w == 0   ? rc_base_name((rc_base)c)
                                 : w == 1 ? rc_reflection_name((rc_reflection)c)
                                          : rc_energy_name((rc_energy)c);
                if (!strcmp(val, nm))
                    choice = c;
                strncat(known, c ? ", " : "", sizeof known - strlen(known) - 1);
                strncat(known, nm, sizeof known - strlen(known) - 1);
            }
            if (choice < 0)
                return rc_bad(err, v, sub, "unknown %s '%s' (known: %s)",
                              which[w], val, known);
            if (w == 0)
                scn->integ.base = (rc_base)choice;
            else if (w == 1)
                scn->integ.reflection = (rc_reflection)choice;
            else
                scn->integ.energy = (rc_energy)choice;
        }
        if (scn->integ.energy == RC_ENERGY_MODIFIED &&
            scn->integ.base != RC_BASE_VERLET)
            return rc_bad(err, rc_ynode_get(map, "energy", NULL),
                          "integrator.energy",
                          "energy 'modified' is Störmer–Verlet's modified "
                          "Hamiltonian: it needs base 'verlet'");
    }
    if (rc_opt_number(err, map, "eps_g", "integrator", &scn->integ.eps_g) ||
        rc_opt_number(err, map, "eps_v", "integrator", &scn->integ.eps_v))
        return RC_ERR_PARSE;
    if (scn->integ.eps_g < 0.0 || scn->integ.eps_v < 0.0)
        return rc_bad(err, map, "integrator",
                      "eps_g and eps_v must be >= 0 (0 = automatic)");
    if (rc_opt_bool(err, map, "seed_exact", "integrator",
                    &scn->integ.seed_exact) ||
        rc_opt_bool(err, map, "linearized", "integrator",
                    &scn->integ.linearized))
        return RC_ERR_PARSE;
    if ((v = rc_ynode_get(map, "collisions", NULL)) != NULL) {
        static const char *const cn[] = {"auto", "gvi", "exact"};
        const char *c = NULL;
        int w, got = -1;
        if (rc_get_string(err, v, "integrator.collisions", &c))
            return RC_ERR_PARSE;
        for (w = 0; w < 3; ++w)
            if (!strcmp(c, cn[w]))
                got = w;
        if (got < 0)
            return rc_bad(err, v, "integrator.collisions",
                          "unknown value '%s' (auto, gvi or exact)", c);
        scn->integ.collisions = got;
    }
    if ((v = rc_ynode_get(map, "max_events", NULL)) != NULL) {
        long me;
        if (rc_get_long(err, v, "integrator.max_events", 1, 100000000L, &me))
            return RC_ERR_PARSE;
        scn->integ.max_events = (int)me;
    }
    if ((v = rc_ynode_get(map, "max_reflection_passes", NULL)) != NULL) {
        long mp;
        if (rc_get_long(err, v, "integrator.max_reflection_passes", 1,
                        100000000L, &mp))
            return RC_ERR_PARSE;
        scn->integ.max_reflection_passes = (int)mp;
    }
    if (rc_req_number(err, map, "dt", "integrator", &scn->integ.dt) ||
        rc_req_number(err, map, "duration", "integrator", &scn->duration) ||
        rc_opt_number(err, map, "newton_tol", "integrator",
                      &scn->integ.newton_tol))
        return RC_ERR_PARSE;
    if (!(scn->integ.dt > 0.0))
        return rc_bad(err, rc_ynode_get(map, "dt", NULL), "integrator.dt",
                      "time step must be > 0, got %g", scn->integ.dt);
    /* a run of no step reports nothing and must not pass for a success */
    if (!(scn->duration > 0.0))
        return rc_bad(err, rc_ynode_get(map, "duration", NULL),
                      "integrator.duration", "duration must be > 0, got %g",
                      scn->duration);
    /* steps = round(duration / dt): a dt longer than the duration would
     * run no step, or one step past the duration */
    if (scn->integ.dt > scn->duration)
        return rc_bad(err, rc_ynode_get(map, "dt", NULL), "integrator.dt",
                      "time step %g is longer than the duration %g (the run "
                      "takes round(duration / dt) steps): make dt <= "
                      "duration",
                      scn->integ.dt, scn->duration);
    if (scn->duration / scn->integ.dt > 1e15)
        return rc_bad(err, rc_ynode_get(map, "duration", NULL),
                      "integrator.duration",
                      "duration/dt = %g steps is more than this tool runs",
                      scn->duration / scn->integ.dt);
    if (!(scn->integ.newton_tol > 0.0))
        return rc_bad(err, rc_ynode_get(map, "newton_tol", NULL),
                      "integrator.newton_tol", "must be > 0");
    if ((v = rc_ynode_get(map, "avi", NULL)) != NULL &&
        rc_load_avi(err, v, scn))
        return RC_ERR_PARSE;
    if ((v = rc_ynode_get(map, "newton_max_iter", NULL)) != NULL) {
        long it;
        snprintf(sub, sizeof sub, "integrator.newton_max_iter");
        if (rc_get_long(err, v, sub, 1, 100000, &it))
            return RC_ERR_PARSE;
        scn->integ.newton_max_iter = (int)it;
    }
    return RC_OK;
}

static long rc_total_steps(const rc_scenario *scn)
{
    return (long)llround(scn->duration / scn->integ.dt);
}

/* A name written into trajectories (a species, a unit): 1 to size - 1
 * characters, letters, digits and _ + - . (no blanks, quotes or '=' that
 * would break an extended XYZ comment line). */
static rc_status rc_get_label(rc_error *err, const rc_ynode *v,
                              const char *field, char *out, size_t size)
{
    const char *s = NULL, *c;
    if (rc_get_string(err, v, field, &s))
        return RC_ERR_PARSE;
    if (!s[0] || strlen(s) >= size)
        return rc_bad(err, v, field, "expected 1 to %d characters, got '%s'",
                      (int)size - 1, s);
    for (c = s; *c; ++c)
        if (!isalnum((unsigned char)*c) && !strchr("_+-.", *c))
            return rc_bad(err, v, field,
                          "'%s': only letters, digits and _ + - . (no "
                          "blanks)",
                          s);
    snprintf(out, size, "%s", s);
    return RC_OK;
}

/* output.units: `none`, or {length: L, time: T} (the labels of the
 * reduced numbers in H5MD files). */
static rc_status rc_load_units(rc_error *err, const rc_ynode *v,
                               rc_md_spec *md)
{
    static const char *const keys[] = {"length", "time", NULL};
    const rc_ynode *w;
    if (v->kind == RC_YNODE_SCALAR && !strcmp(v->value, "none")) {
        md->length_unit[0] = md->time_unit[0] = '\0';
        return RC_OK;
    }
    if (v->kind != RC_YNODE_MAPPING)
        return rc_bad(err, v, "output.units",
                      "expected `none` or {length: UNIT, time: UNIT}");
    if (rc_check_keys(err, v, "output.units", keys))
        return RC_ERR_PARSE;
    if ((w = rc_ynode_get(v, "length", NULL)) != NULL &&
        rc_get_label(err, w, "output.units.length", md->length_unit,
                     sizeof md->length_unit))
        return RC_ERR_PARSE;
    if ((w = rc_ynode_get(v, "time", NULL)) != NULL &&
        rc_get_label(err, w, "output.units.time", md->time_unit,
                     sizeof md->time_unit))
        return RC_ERR_PARSE;
    return RC_OK;
}

static rc_status rc_load_output(rc_error *err, const rc_ynode *map,
                                rc_scenario *scn)
{
    static const char *const keys[] = {"every", "trajectory",
                                       "trajectory_every", "trace_members",
                                       "rdf_bins", "rdf_rmax", "rdf_every",
                                       "equilibrate", "checkpoint_every",
                                       "log_every", "species", "units",
                                       NULL};
    rc_ynode *v;
    long steps = rc_total_steps(scn);
    scn->log_every = 30.0;
    /* Default: about 1000 diagnostics rows over the run. */
    scn->every = steps > 1000 ? (steps + 999) / 1000 : 1;
    scn->trajectory = RC_TRAJECTORY_NONE;
    scn->trajectory_every = 0;
    if (map) {
        if (rc_expect_mapping(err, map, "output") ||
            rc_check_keys(err, map, "output", keys))
            return RC_ERR_PARSE;
        if ((v = rc_ynode_get(map, "every", NULL)) != NULL &&
            rc_get_long(err, v, "output.every", 1, 1000000000000L,
                        &scn->every))
            return RC_ERR_PARSE;
        if ((v = rc_ynode_get(map, "trajectory", NULL)) != NULL) {
            const char *s = NULL;
            if (rc_get_string(err, v, "output.trajectory", &s))
                return RC_ERR_PARSE;
            if (!strcmp(s, "none"))
                scn->trajectory = RC_TRAJECTORY_NONE;
            else if (!strcmp(s, "xyz"))
                scn->trajectory = RC_TRAJECTORY_XYZ;
            else if (!strcmp(s, "h5md")) {
                if (!scn->md.present)
                    return rc_bad(err, v, "output.trajectory",
                                  "h5md trajectories are written for large "
                                  "systems (a `box`); use xyz");
                if (!rc_h5md_available())
                    return rc_bad(err, v, "output.trajectory",
                                  "this build of ricochet has no HDF5 "
                                  "(install libhdf5-dev and rebuild); use "
                                  "xyz");
                scn->trajectory = RC_TRAJECTORY_H5MD;
            }
            else
                return rc_bad(err, v, "output.trajectory",
                              "unknown trajectory format '%s' (known: none, "
                              "xyz, h5md)",
                              s);
        }
        if ((v = rc_ynode_get(map, "trace_members", NULL)) != NULL) {
            int k;
            if (v->kind != RC_YNODE_SEQUENCE)
                return rc_bad(err, v, "output.trace_members",
                              "expected a list of member indices");
            scn->ens.trace = (long *)calloc((size_t)v->n + 1, sizeof(long));
            if (!scn->ens.trace)
                return rc_bad(err, v, "output.trace_members", "out of memory");
            scn->ens.ntrace = v->n;
            for (k = 0; k < v->n; ++k) {
                char item[64];
                snprintf(item, sizeof item, "output.trace_members[%d]", k);
                if (rc_get_long(err, v->items[k], item, 0, 100000000L,
                                &scn->ens.trace[k]))
                    return RC_ERR_PARSE;
            }
        }
        if ((v = rc_ynode_get(map, "checkpoint_every", NULL)) != NULL) {
            /* a number: simulated time; a number with the unit s (600s,
             * "600 s"): wall-clock seconds */
            const char *t = v->kind == RC_YNODE_SCALAR ? v->value : NULL;
            size_t len = t ? strlen(t) : 0;
            if (len > 1 && t[len - 1] == 's') {
                char *end = NULL;
                double w = strtod(t, &end);
                while (end && *end == ' ')
                    ++end;
                if (!end || end == t || strcmp(end, "s") != 0 ||
                    !isfinite(w) || !(w > 0.0))
                    return rc_bad(err, v, "output.checkpoint_every",
                                  "expected a positive simulated time (2.5) "
                                  "or wall-clock seconds (600s), got '%s'",
                                  t);
                scn->checkpoint_wall = w;
            } else {
                if (rc_get_number(err, v, "output.checkpoint_every",
                                  &scn->checkpoint_every))
                    return RC_ERR_PARSE;
                if (!(scn->checkpoint_every > 0.0))
                    return rc_bad(err, v, "output.checkpoint_every",
                                  "must be positive (simulated time, or "
                                  "wall-clock seconds written 600s), got %g",
                                  scn->checkpoint_every);
            }
        }
        if (rc_opt_positive(err, map, "log_every", "output.log_every",
                            &scn->log_every))
            return RC_ERR_PARSE;
        if ((v = rc_ynode_get(map, "trajectory_every", NULL)) != NULL &&
            rc_get_long(err, v, "output.trajectory_every", 1,
                        1000000000000L, &scn->trajectory_every))
            return RC_ERR_PARSE;
        {
            static const char *const md_only[] = {"rdf_bins", "rdf_rmax",
                                                  "rdf_every", "equilibrate",
                                                  "species", "units", NULL};
            int k;
            long bins;
            for (k = 0; md_only[k]; ++k)
                if (!scn->md.present &&
                    (v = rc_ynode_get(map, md_only[k], NULL)) != NULL) {
                    char sub[64];
                    snprintf(sub, sizeof sub, "output.%s", md_only[k]);
                    return rc_bad(err, v, sub,
                                  "'%s' is an output setting of large "
                                  "systems: it needs a `box`",
                                  md_only[k]);
                }
            if ((v = rc_ynode_get(map, "rdf_bins", NULL)) != NULL) {
                if (rc_get_long(err, v, "output.rdf_bins", 1, 100000, &bins))
                    return RC_ERR_PARSE;
                scn->md.rdf_bins = (int)bins;
            }
            if ((v = rc_ynode_get(map, "rdf_rmax", NULL)) != NULL) {
                if (rc_get_number(err, v, "output.rdf_rmax",
                                  &scn->md.rdf_rmax))
                    return RC_ERR_PARSE;
                if (!(scn->md.rdf_rmax > 0.0))
                    return rc_bad(err, v, "output.rdf_rmax",
                                  "must be positive, got %g",
                                  scn->md.rdf_rmax);
            }
            /* any step count: samples at equilibrate + k rdf_every
             * steps, on their own cadence (not tied to output.every) */
            if ((v = rc_ynode_get(map, "rdf_every", NULL)) != NULL &&
                rc_get_long(err, v, "output.rdf_every", 0, 1000000000000L,
                            &scn->md.rdf_every))
                return RC_ERR_PARSE;
            if ((v = rc_ynode_get(map, "species", NULL)) != NULL &&
                rc_get_label(err, v, "output.species", scn->md.species,
                             sizeof scn->md.species))
                return RC_ERR_PARSE;
            if ((v = rc_ynode_get(map, "units", NULL)) != NULL &&
                rc_load_units(err, v, &scn->md))
                return RC_ERR_PARSE;
            if ((v = rc_ynode_get(map, "equilibrate", NULL)) != NULL) {
                if (rc_get_number(err, v, "output.equilibrate",
                                  &scn->md.equilibrate))
                    return RC_ERR_PARSE;
                if (scn->md.equilibrate < 0.0 ||
                    scn->md.equilibrate >= scn->duration)
                    return rc_bad(err, v, "output.equilibrate",
                                  "must be in [0, duration = %g), got %g",
                                  scn->duration, scn->md.equilibrate);
            }
        }
    }
    if (scn->trajectory_every == 0)
        scn->trajectory_every = scn->every;
    return RC_OK;
}

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Large systems: `box` and `lattice` (DESIGN §6).                      */

/* The n particles a file gives a large system must fit in the memory
 * available (resources.h) before the scenario's copy of them is made;
 * the whole run's estimate (rc_check_memory) follows once it is loaded. */
static rc_status rc_check_particle_memory(rc_error *err, const rc_ynode *node,
                                          const char *field, long n)
{
    char what[160];
    double avail = rc_mem_available(what, sizeof what);
    double need = RC_MEM_PER_PARTICLE * (double)n;
    if (need <= avail)
        return RC_OK;
    return rc_bad(err, node, field,
                  "%ld particles need about %.2f GB, more than the %.2f GB "
                  "available (%s)",
                  n, need / 1e9, avail / 1e9, what);
}

static rc_status rc_load_md(rc_error *err, const rc_ynode *root,
                            rc_scenario *scn)
{
    static const char *const box_keys[] = {"lengths", "periodic", NULL};
    static const char *const lat_keys[] = {"kind", "n", "packing_fraction",
                                           "temperature", "seed", "radius",
                                           "mass", "fill_height", NULL};
    rc_md_spec *md = &scn->md;
    rc_ynode *box = rc_ynode_get(root, "box", NULL);
    md->pair = -1;
    rc_ynode *lat = rc_ynode_get(root, "lattice", NULL), *v, *key;
    int d = scn->dimension, k;
    md->present = 1;
    md->rdf_bins = 200;
    md->rdf_every = -1;
    snprintf(md->species, sizeof md->species, "X");
    snprintf(md->length_unit, sizeof md->length_unit, "Angstrom");
    snprintf(md->time_unit, sizeof md->time_unit, "ps");
    if (d < 2)
        return rc_bad(err, rc_ynode_get(root, "dimension", NULL), "dimension",
                      "large systems (box, lattice) are 2-D or 3-D");
    if (!box)
        return rc_bad(err, lat, "box",
                      "a lattice needs a `box` (at least `box: {periodic: "
                      "true}`)");
    if (rc_expect_mapping(err, box, "box") ||
        rc_check_keys(err, box, "box", box_keys))
        return RC_ERR_PARSE;
    for (k = 0; k < 3; ++k)
        md->periodic[k] = 1;
    if ((v = rc_ynode_get(box, "periodic", NULL)) != NULL) {
        if (v->kind == RC_YNODE_SEQUENCE) {
            if (v->n != d)
                return rc_bad(err, v, "box.periodic",
                              "expected %d true/false values (one per "
                              "axis), got %d",
                              d, v->n);
            for (k = 0; k < d; ++k) {
                const rc_ynode *it = v->items[k];
                if (it->kind != RC_YNODE_SCALAR || it->quoted ||
                    (strcmp(it->value, "true") && strcmp(it->value, "false"))) {
                    char sub[64];
                    snprintf(sub, sizeof sub, "box.periodic[%d]", k);
                    return rc_bad(err, it, sub, "expected true or false");
                }
                md->periodic[k] = !strcmp(it->value, "true");
            }
        } else {
            int all = 1;
            if (rc_opt_bool(err, box, "periodic", "box", &all))
                return RC_ERR_PARSE;
            for (k = 0; k < 3; ++k)
                md->periodic[k] = all;
        }
    }
    if ((v = rc_ynode_get(box, "lengths", NULL)) != NULL) {
        if (rc_get_vector(err, v, "box.lengths", d, md->lengths))
            return RC_ERR_PARSE;
        for (k = 0; k < d; ++k)
            if (!(md->lengths[k] > 0.0)) {
                char sub[64];
                snprintf(sub, sizeof sub, "box.lengths[%d]", k);
                return rc_bad(err, v->items[k], sub,
                              "must be positive, got %g", md->lengths[k]);
            }
        md->have_lengths = 1;
    }
    if ((v = rc_ynode_get(root, "read", NULL)) != NULL)
        return rc_load_read(err, root, v, scn);
    if (!lat) {
        if (!md->have_lengths)
            return rc_bad(err, box, "box.lengths",
                          "a box without a lattice needs its lengths");
        if (rc_require(err, root, "particles", "", &v) ||
            rc_load_particles(err, v, scn))
            return RC_ERR_PARSE;
        return RC_OK;
    }
    if (rc_ynode_get(root, "particles", &key))
        return rc_bad(err, key, "particles",
                      "give either `particles` or `lattice`, not both");
    if (rc_expect_mapping(err, lat, "lattice") ||
        rc_check_keys(err, lat, "lattice", lat_keys))
        return RC_ERR_PARSE;
    md->lattice = 1;
    md->kind = RC_MD_FCC;
    if ((v = rc_ynode_get(lat, "kind", NULL)) != NULL) {
        const char *s = NULL;
        if (rc_get_string(err, v, "lattice.kind", &s))
            return RC_ERR_PARSE;
        if (!strcmp(s, "fcc"))
            md->kind = RC_MD_FCC;
        else if (!strcmp(s, "sc"))
            md->kind = RC_MD_SC;
        else if (!strcmp(s, "random"))
            md->kind = RC_MD_RANDOM;
        else
            return rc_bad(err, v, "lattice.kind",
                          "unknown lattice '%s' (known: fcc, sc, random)", s);
        if (md->kind == RC_MD_FCC && d != 3)
            return rc_bad(err, v, "lattice.kind",
                          "fcc is a 3-D lattice; use sc or random in 2-D");
    } else if (d != 3) {
        md->kind = RC_MD_SC;
    }
    if (rc_require(err, lat, "n", "lattice", &v) ||
        rc_get_long(err, v, "lattice.n", 2, 100000000L, &md->n))
        return RC_ERR_PARSE;
    md->radius = 0.5;
    md->mass = 1.0;
    md->temperature = 1.0;
    md->seed = 1;
    if ((v = rc_ynode_get(lat, "radius", NULL)) != NULL &&
        v->kind == RC_YNODE_MAPPING) {
        /* polydisperse: {distribution: uniform, min, max} or
         * {distribution: normal, mean, sigma}, drawn per particle */
        static const char *const rkeys[] = {"distribution", "min", "max",
                                            "mean", "sigma", NULL};
        const char *dist = NULL;
        rc_ynode *x;
        if (rc_check_keys(err, v, "lattice.radius", rkeys) ||
            rc_require(err, v, "distribution", "lattice.radius", &x) ||
            rc_get_string(err, x, "lattice.radius.distribution", &dist))
            return RC_ERR_PARSE;
        if (!strcmp(dist, "uniform")) {
            md->radius_dist = 1;
            if (rc_require(err, v, "min", "lattice.radius", &x) ||
                rc_get_number(err, x, "lattice.radius.min", &md->radius_a) ||
                rc_require(err, v, "max", "lattice.radius", &x) ||
                rc_get_number(err, x, "lattice.radius.max", &md->radius_b))
                return RC_ERR_PARSE;
            if (!(md->radius_a > 0.0 && md->radius_b >= md->radius_a))
                return rc_bad(err, v, "lattice.radius",
                              "needs 0 < min <= max, got [%g, %g]",
                              md->radius_a, md->radius_b);
        } else if (!strcmp(dist, "normal")) {
            md->radius_dist = 2;
            if (rc_require(err, v, "mean", "lattice.radius", &x) ||
                rc_get_number(err, x, "lattice.radius.mean", &md->radius_a) ||
                rc_require(err, v, "sigma", "lattice.radius", &x) ||
                rc_get_number(err, x, "lattice.radius.sigma", &md->radius_b))
                return RC_ERR_PARSE;
            /* a normal draw reaches 8.6 sigma at most (random.h): keep
             * every radius positive */
            if (!(md->radius_a > 0.0 && md->radius_b >= 0.0 &&
                  md->radius_a - 8.6 * md->radius_b > 0.0))
                return rc_bad(err, v, "lattice.radius",
                              "needs mean > 8.6 sigma >= 0 (radii stay "
                              "positive), got mean %g, sigma %g",
                              md->radius_a, md->radius_b);
        } else {
            return rc_bad(err, x, "lattice.radius.distribution",
                          "unknown distribution '%s' (known: uniform, "
                          "normal)",
                          dist);
        }
    } else if (rc_opt_positive(err, lat, "radius", "lattice.radius",
                               &md->radius)) {
        return RC_ERR_PARSE;
    }
    if (rc_opt_positive(err, lat, "mass", "lattice.mass", &md->mass) ||
        rc_opt_positive(err, lat, "temperature", "lattice.temperature",
                        &md->temperature))
        return RC_ERR_PARSE;
    if ((v = rc_ynode_get(lat, "seed", NULL)) != NULL) {
        long seed;
        if (rc_get_long(err, v, "lattice.seed", 0, 2147483647L, &seed))
            return RC_ERR_PARSE;
        md->seed = (unsigned long long)seed;
    }
    if ((v = rc_ynode_get(lat, "fill_height", NULL)) != NULL) {
        if (rc_get_number(err, v, "lattice.fill_height", &md->fill_height))
            return RC_ERR_PARSE;
        if (!md->have_lengths || !(md->fill_height > 0.0) ||
            md->fill_height > md->lengths[d - 1])
            return rc_bad(err, v, "lattice.fill_height",
                          "needs box.lengths and must be in (0, L = %g] (the "
                          "last axis)",
                          md->have_lengths ? md->lengths[d - 1] : 0.0);
    }
    if ((v = rc_ynode_get(lat, "packing_fraction", NULL)) != NULL) {
        if (rc_get_number(err, v, "lattice.packing_fraction", &md->eta))
            return RC_ERR_PARSE;
        if (!(md->eta > 0.0 && md->eta < 1.0))
            return rc_bad(err, v, "lattice.packing_fraction",
                          "must be in (0, 1), got %g", md->eta);
        if (md->have_lengths)
            return rc_bad(err, v, "lattice.packing_fraction",
                          "give the box lengths or the packing fraction, "
                          "not both");
    } else if (!md->have_lengths) {
        return rc_bad(err, lat, "lattice.packing_fraction",
                      "missing: the box size follows from n and the "
                      "packing fraction when box.lengths is not given");
    }
    /* a lattice's particles have no table (scn->particles stays NULL):
     * the run makes their masses and radii (lattice.mass,
     * rc_md_lattice_radius), positions and momenta (rc_md_place,
     * rc_md_maxwell) when it starts, into the engine's arrays */
    scn->n = (int)md->n;
    return RC_OK;
}

/* The radius of a lattice's particle k: lattice.radius, or its draw from
 * lattice.radius's distribution (the particle's own stream, so any
 * particle's radius is known without the others'). */
double rc_md_lattice_radius(const rc_md_spec *md, long k)
{
    if (md->radius_dist == 1)
        return md->radius_a + (md->radius_b - md->radius_a) *
                                  rc_md_uniform(md->seed, (unsigned long long)k,
                                                0, RC_MD_STREAM_RADIUS << 8);
    if (md->radius_dist == 2)
        return md->radius_a +
               md->radius_b * rc_md_normal(md->seed, (unsigned long long)k, 0,
                                           RC_MD_STREAM_RADIUS << 8);
    return md->radius;
}

/* `read: FILE` or `read: {file, frame, temperature, seed}`: the particles
 * of one frame (from 0; negative from the end) of an extended XYZ or an
 * H5MD file (positions; radii, masses and velocities when the file has
 * them, else lattice-like defaults and Maxwell-Boltzmann momenta); the
 * box from box.lengths or the file's Lattice / box edges.  What was
 * taken is recorded in md->read_* (summary.json says it). */
static rc_status rc_load_read(rc_error *err, const rc_ynode *root,
                              const rc_ynode *rd, rc_scenario *scn)
{
    static const char *const keys[] = {"file", "frame", "temperature", "seed",
                                       "radius", "mass", NULL};
    rc_md_spec *md = &scn->md;
    const rc_ynode *fv = rd, *v;
    const char *file = NULL;
    char path[2048], msg[1200];
    long frame = 0, seed = 1, i;
    double T = 1.0, r0 = 0.5, m0 = 1.0;
    int d = scn->dimension, k;
    rc_xyz x;
    if (rc_ynode_get(root, "lattice", NULL) || rc_ynode_get(root, "particles", NULL))
        return rc_bad(err, rd, "read",
                      "give one of `read`, `lattice` or `particles`");
    if (rd->kind == RC_YNODE_MAPPING) {
        if (rc_check_keys(err, rd, "read", keys) ||
            rc_require(err, rd, "file", "read", (rc_ynode **)&fv))
            return RC_ERR_PARSE;
        if ((v = rc_ynode_get(rd, "frame", NULL)) != NULL &&
            rc_get_long(err, v, "read.frame", -1000000000L, 1000000000L,
                        &frame))
            return RC_ERR_PARSE;
        if ((v = rc_ynode_get(rd, "seed", NULL)) != NULL &&
            rc_get_long(err, v, "read.seed", 0, 2147483647L, &seed))
            return RC_ERR_PARSE;
        if (rc_opt_positive(err, rd, "temperature", "read.temperature", &T) ||
            rc_opt_positive(err, rd, "radius", "read.radius", &r0) ||
            rc_opt_positive(err, rd, "mass", "read.mass", &m0))
            return RC_ERR_PARSE;
    }
    if (rc_get_string(err, fv, "read.file", &file))
        return RC_ERR_PARSE;
    /* relative to the scenario file's directory */
    if (file[0] == '/' || !fv->source || !strchr(fv->source, '/')) {
        snprintf(path, sizeof path, "%s", file);
    } else {
        int dl = (int)(strrchr(fv->source, '/') - fv->source);
        snprintf(path, sizeof path, "%.*s/%s", dl, fv->source, file);
    }
    if (rc_md_read_frame(path, d, frame, &x, &md->read_h5md, msg,
                         sizeof msg) != 0)
        return rc_bad(err, fv, "read.file", "%s", msg);
    snprintf(md->read_path, sizeof md->read_path, "%s", path);
    md->read_frame = x.frame;
    md->read_frames = x.frames;
    md->read_velocities = x.v != NULL;
    md->read_seed = seed;
    md->read_temperature = T;
    md->read_radius = r0;
    md->read_mass = m0;
    if (!md->have_lengths) {
        if (!x.have_box) {
            rc_xyz_free(&x);
            return rc_bad(err, fv, "box.lengths",
                          "the file has no Lattice: give box.lengths");
        }
        for (k = 0; k < d; ++k)
            md->lengths[k] = x.box[k];
        md->have_lengths = 1;
    }
    /* image counts are int: a periodic coordinate more than 2^30 box
     * lengths away could not be wrapped into the box */
    for (i = 0; i < x.n; ++i)
        for (k = 0; k < d; ++k)
            if (md->periodic[k] &&
                !(fabs(x.q[i * d + k] / md->lengths[k]) < 1073741824.0)) {
                rc_status st =
                    md->read_h5md
                        ? rc_bad(err, fv, "read.file",
                                 "%s: position: particle %ld, coordinate "
                                 "%d (%g) is more than 2^30 box lengths "
                                 "away",
                                 path, i, k + 1, x.q[i * d + k])
                        : rc_bad(err, fv, "read.file",
                                 "%s:%ld: pos: coordinate %d (%g) is more "
                                 "than 2^30 box lengths away",
                                 path, x.first_line + i, k + 1,
                                 x.q[i * d + k]);
                rc_xyz_free(&x);
                return st;
            }
    if (rc_check_particle_memory(err, fv, "read.file", x.n)) {
        rc_xyz_free(&x);
        return RC_ERR_PARSE;
    }
    scn->n = (int)x.n;
    scn->particles =
        (rc_scn_particle *)calloc((size_t)scn->n, sizeof(rc_scn_particle));
    if (!scn->particles) {
        rc_xyz_free(&x);
        return rc_bad(err, fv, "read.file", "out of memory for %ld particles",
                      x.n);
    }
    {
        double *mass = (double *)malloc(sizeof(double) * (size_t)x.n);
        double *p = (double *)calloc((size_t)x.n * (size_t)d, sizeof(double));
        if (!mass || !p) {
            free(mass);
            free(p);
            rc_xyz_free(&x);
            return rc_bad(err, fv, "read.file", "out of memory");
        }
        for (i = 0; i < x.n; ++i)
            mass[i] = x.mass ? x.mass[i] : m0;
        if (x.v) {
            for (i = 0; i < x.n; ++i)
                for (k = 0; k < d; ++k)
                    p[i * d + k] = x.momenta ? x.v[i * d + k]
                                             : mass[i] * x.v[i * d + k];
        } else if (x.n >= 2) {
            rc_md_maxwell(d, x.n, mass, T, (unsigned long long)seed, p);
        }
        for (i = 0; i < x.n; ++i) {
            rc_scn_particle *pt = &scn->particles[i];
            pt->mass = mass[i];
            pt->radius = x.radius ? x.radius[i] : r0;
            for (k = 0; k < d; ++k) {
                pt->q[k] = x.q[i * d + k];
                pt->p[k] = p[i * d + k];
            }
        }
        free(mass);
        free(p);
    }
    rc_xyz_free(&x);
    return RC_OK;
}

/* A large system's model: gravity only among the potentials, no
 * constraint list (hard cores and walls are implicit), method gvi. */
static rc_status rc_check_md_model(rc_error *err, const rc_ynode *root,
                                   rc_scenario *scn)
{
    int k;
    rc_ynode *key;
    for (k = 0; k < scn->npot; ++k) {
        const rc_potential_desc *pd = &scn->potentials[k];
        char sub[64];
        snprintf(sub, sizeof sub, "potentials[%d]", k);
        if ((pd->type == RC_POT_LENNARD_JONES || pd->type == RC_POT_WCA) &&
            pd->i == RC_ALL) {
            if (scn->md.pair >= 0)
                return rc_bad(err, rc_ynode_get(root, "potentials", NULL), sub,
                              "large systems take one pair potential "
                              "(lennard_jones or wca)");
            scn->md.pair = k;
            continue;
        }
        if (pd->type != RC_POT_GRAVITY || pd->i != RC_ALL)
            return rc_bad(err, rc_ynode_get(root, "potentials", NULL), sub,
                          "large systems take uniform gravity on every "
                          "particle and one lennard_jones or wca pair "
                          "potential");
        {
            int a;
            for (a = 0; a < 3; ++a)
                scn->md.gravity[a] += pd->vector[a];
        }
    }
    if (scn->ncon > 0 && rc_ynode_get(root, "constraints", &key))
        return rc_bad(err, key, "constraints",
                      "a box has its hard cores and walls built in: remove "
                      "the constraint list");
    if (scn->integ.method != RC_METHOD_GVI ||
        scn->integ.base != RC_BASE_VERLET)
        return rc_bad(err, rc_ynode_get(root, "integrator", NULL),
                      "integrator.method",
                      "large systems run method gvi with base verlet");
    if (scn->ens.present)
        return rc_bad(err, rc_ynode_get(root, "ensemble", NULL), "ensemble",
                      "ensembles of large systems are not supported");
    return RC_OK;
}

/* Keys of later capabilities get a plain "not yet" rather than "unknown". */
static rc_status rc_reject_unsupported(rc_error *err, const rc_ynode *root)
{
    static const char *const later[] = {NULL};
    int k;
    rc_ynode *key;
    for (k = 0; later[k]; ++k)
        if (rc_ynode_get(root, later[k], &key))
            return rc_bad(err, key, later[k],
                          "'%s' is not supported by this version of ricochet",
                          later[k]);
    return RC_OK;
}

/* Why `name` cannot name the run's output directory (the CLI writes to
 * out/<name> without --out), or NULL when it can: one plain directory
 * name, so that the outputs land inside out/ and nowhere else. */
static const char *rc_name_problem(const char *s)
{
    size_t n = strlen(s), k;
    if (n == 0)
        return "is empty: the name is the output directory out/<name>";
    /* scn->name's size, less room for the "-compare" of `ricochet compare` */
    if (n > 100)
        return "is longer than 100 characters";
    if (!strcmp(s, ".") || !strcmp(s, ".."))
        return "would put the outputs outside out/ (the name is the output "
               "directory out/<name>)";
    for (k = 0; k < n; ++k) {
        unsigned char c = (unsigned char)s[k];
        if (c == '/' || c == '\\')
            return "contains a path separator: the name is one directory, "
                   "out/<name> (use --out for another place)";
        if (c < 0x20 || c == 0x7f)
            return "contains a control character";
    }
    return NULL;
}

/* Refuse a scenario whose memory estimate (resources.c) exceeds the
 * memory this process may use, before anything is allocated for it. */
static rc_status rc_check_memory(rc_error *err, const rc_ynode *root,
                                 rc_scenario *scn)
{
    rc_mem_estimate e;
    char how[64], need[32], have[32], per[32], other[32];
    double avail;
    const rc_ynode *at = root;
    rc_mem_estimate_scenario(scn, &e);
    avail = rc_mem_available(how, sizeof how);
    if (!(e.bytes > avail))
        return RC_OK;
    {
        /* the node of the field to blame: "lattice.n", "box.lengths",
         * "ensemble.members", "output.every", "constraints" */
        char key[64], *dot;
        const rc_ynode *v;
        snprintf(key, sizeof key, "%s", e.field);
        dot = strchr(key, '.');
        if (dot)
            *dot = '\0';
        if ((v = rc_ynode_get(root, key, NULL)) != NULL) {
            at = v;
            if (dot && (v = rc_ynode_get(v, dot + 1, NULL)) != NULL)
                at = v;
        } else if ((v = rc_ynode_get(root, "read", NULL)) != NULL) {
            at = v;
        }
    }
    return rc_bad(err, at, e.field,
                  "this scenario needs about %s of memory (%.4g %ss x %s + "
                  "%s for the rest) but %s is available (%s)",
                  rc_mem_text(e.bytes, need, sizeof need), e.items, e.item,
                  rc_mem_text(e.per_item, per, sizeof per),
                  rc_mem_text(e.other, other, sizeof other),
                  rc_mem_text(avail, have, sizeof have), how);
}

static rc_status rc_load_tree(rc_error *err, const rc_ynode *root,
                              rc_scenario *scn)
{
    static const char *const keys[] = {"name",       "description",
                                       "dimension",  "particles",
                                       "potentials", "integrator",
                                       "output",     "lattice",
                                       "read",       "box",
                                       "constraints", "ensemble",
                                       "model", NULL};
    rc_ynode *v;
    long dim;
    const char *s = NULL;
    if (root->kind != RC_YNODE_MAPPING)
        return rc_bad(err, root, "",
                      "a scenario is a mapping of keys (dimension, "
                      "particles, ...), got %s",
                      rc_kind_name(root));
    if (rc_check_keys(err, root, "", keys) ||
        rc_reject_unsupported(err, root))
        return RC_ERR_PARSE;
    if ((v = rc_ynode_get(root, "name", NULL)) != NULL) {
        const char *why;
        if (rc_get_string(err, v, "name", &s))
            return RC_ERR_PARSE;
        if ((why = rc_name_problem(s)) != NULL)
            return rc_bad(err, v, "name", "'%s' %s", s, why);
        snprintf(scn->name, sizeof scn->name, "%s", s);
    }
    if ((v = rc_ynode_get(root, "description", NULL)) != NULL) {
        if (rc_get_string(err, v, "description", &s))
            return RC_ERR_PARSE;
        snprintf(scn->description, sizeof scn->description, "%s", s);
    }
    if ((v = rc_ynode_get(root, "model", NULL)) != NULL) {
        /* a model in generalized coordinates (src/host/model/) */
        static const char *const particle_keys[] = {
            "dimension", "particles", "potentials", "constraints",
            "box",       "lattice",   "read",       NULL};
        int k;
        rc_ynode *key;
        rc_status mst;
        for (k = 0; particle_keys[k]; ++k)
            if (rc_ynode_get(root, particle_keys[k], &key))
                return rc_bad(err, key, particle_keys[k],
                              "a scenario with a model: block describes "
                              "its system there; '%s' belongs to particle "
                              "systems",
                              particle_keys[k]);
        if ((mst = rc_model_load_(v, &scn->model, err)) != RC_OK)
            return mst;
        if (!(scn->model_node = rc_ynode_clone(v))) {
            err->status = RC_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "out of memory");
            return RC_ERR_NOMEM;
        }
    } else {
        if (rc_require(err, root, "dimension", "", &v) ||
            rc_get_long(err, v, "dimension", 1, 3, &dim))
            return RC_ERR_PARSE;
        scn->dimension = (int)dim;
        if (rc_ynode_get(root, "box", NULL) || rc_ynode_get(root, "lattice", NULL) ||
            rc_ynode_get(root, "read", NULL)) {
            if (rc_load_md(err, root, scn))
                return RC_ERR_PARSE;
        } else if (rc_require(err, root, "particles", "", &v) ||
                   rc_load_particles(err, v, scn)) {
            return RC_ERR_PARSE;
        }
    }
    if ((v = rc_ynode_get(root, "potentials", NULL)) != NULL &&
        rc_load_potentials(err, v, scn))
        return RC_ERR_PARSE;
    if ((v = rc_ynode_get(root, "constraints", NULL)) != NULL &&
        rc_load_constraints(err, v, scn))
        return RC_ERR_PARSE;
    if (rc_require(err, root, "integrator", "", &v) ||
        rc_load_integrator(err, v, scn))
        return RC_ERR_PARSE;
    if (scn->ncon > 0 && !rc_method_takes_constraints(scn->integ.method))
        return rc_bad(err, rc_ynode_get(v, "method", NULL) ? rc_ynode_get(v, "method", NULL) : v,
                      "integrator.method",
                      "method %s ignores constraints; this scenario has "
                      "constraints: use method gvi",
                      rc_method_name(scn->integ.method));
    if (rc_check_avi(err, root, scn))
        return RC_ERR_PARSE;
    if (scn->md.present && rc_check_md_model(err, root, scn))
        return RC_ERR_PARSE;
    if (scn->model) {
        /* what model runs do not write (yet) */
        rc_ynode *out = rc_ynode_get(root, "output", NULL), *w;
        if ((w = rc_ynode_get(out, "trajectory", NULL)) != NULL &&
            !(w->kind == RC_YNODE_SCALAR && !strcmp(w->value, "none")))
            return rc_bad(err, w, "output.trajectory",
                          "a model run writes its coordinates in "
                          "diagnostics.csv; trajectory files are for "
                          "particle systems");
        if ((w = rc_ynode_get(out, "checkpoint_every", NULL)) != NULL)
            return rc_bad(err, w, "output.checkpoint_every",
                          "model runs write no checkpoints (they are "
                          "short: run again to continue)");
    }
    if (scn->integ.collisions != RC_COLLISIONS_AUTO) {
        /* exact collision times: large systems of ballistic spheres */
        rc_ynode *c = rc_ynode_get(v, "collisions", NULL);
        if (!scn->md.present)
            return rc_bad(err, c, "integrator.collisions",
                          "applies to large systems (a scenario with a "
                          "box); small systems take integrator.method "
                          "cva or mcva for impacts at their times");
        if (scn->integ.collisions == RC_COLLISIONS_EXACT &&
            scn->md.pair >= 0)
            return rc_bad(err, c, "integrator.collisions",
                          "exact collision times need ballistic spheres; "
                          "this scenario has a pair potential (use gvi)");
        if (scn->integ.collisions == RC_COLLISIONS_EXACT &&
            scn->integ.reflection == RC_REFLECT_MOREAU)
            return rc_bad(err, c, "integrator.collisions",
                          "exact collisions resolve simultaneous impacts "
                          "by generalized reflection; reflection: moreau "
                          "needs collisions: gvi");
    }
    if (rc_load_output(err, rc_ynode_get(root, "output", NULL), scn))
        return RC_ERR_PARSE;
    if ((v = rc_ynode_get(root, "ensemble", NULL)) != NULL &&
        rc_load_ensemble(err, v, scn))
        return RC_ERR_PARSE;
    if (scn->model && scn->ens.has_reference) {
        /* what the reference method asks of the model (a smooth method
         * refuses impacts) its create() says, at the reference step */
        rc_ynode *ref = rc_ynode_get(rc_ynode_get(root, "ensemble", NULL),
                                     "reference", NULL);
        rc_integrator_desc integ = scn->integ;
        rc_error merr;
        void *ws = NULL;
        rc_status mst;
        memset(&merr, 0, sizeof merr);
        integ.dt = scn->ens.ref_dt;
        mst = scn->ens.ref_model_method->create(scn->model, &integ, &ws,
                                                &merr);
        if (ws)
            scn->ens.ref_model_method->destroy(ws);
        if (mst != RC_OK)
            return rc_bad(err,
                          rc_ynode_get(ref, "method", NULL)
                              ? rc_ynode_get(ref, "method", NULL)
                              : ref,
                          "ensemble.reference.method",
                          "the reference method %s cannot run this model: "
                          "%.300s",
                          scn->ens.ref_model_method->name, merr.message);
    }
    if (scn->ens.present && scn->checkpoint_every > 0.0)
        return rc_bad(err,
                      rc_ynode_get(rc_ynode_get(root, "output", NULL),
                                   "checkpoint_every", NULL),
                      "output.checkpoint_every",
                      "an ensemble's members each keep their own clock: "
                      "checkpoint it by wall-clock seconds (e.g. 600s)");
    if (!scn->member && !scn->model && rc_check_memory(err, root, scn))
        return RC_ERR_PARSE;
    if (scn->ens.ntrace > 0 && !scn->ens.present)
        return rc_bad(err,
                      rc_ynode_get(rc_ynode_get(root, "output", NULL),
                                   "trace_members", NULL),
                      "output.trace_members",
                      "trace_members needs an ensemble");
    {
        int k;
        for (k = 0; k < scn->ens.ntrace; ++k)
            if (scn->ens.trace[k] >= scn->ens.members)
                return rc_bad(err, rc_ynode_get(rc_ynode_get(root, "output",
                                                             NULL),
                                                "trace_members", NULL),
                              "output.trace_members",
                              "member %ld does not exist (the ensemble has "
                              "%ld)",
                              scn->ens.trace[k], scn->ens.members);
    }
    return RC_OK;
}

/* The text of the scenario file, kept for checkpoints (the file may be
 * edited while a long run goes on); NULL when it cannot be read again or
 * is larger than a scenario has reason to be. */
#define RC_SCENARIO_SOURCE_MAX (64L << 20) /* 64 MiB: far above any scenario */
static char *rc_slurp_source(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    if (!f)
        return NULL;
    for (;;) {
        if (cap - len < 4096) {
            char *nb;
            if (cap >= (size_t)RC_SCENARIO_SOURCE_MAX) {
                free(buf);
                buf = NULL;
                break;
            }
            cap = cap ? 2 * cap : 65536;
            nb = (char *)realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

rc_status rc_scenario_load(const char *path, const char *const *overrides,
                           int n_overrides, rc_scenario **out, rc_error *err)
{
    return rc_scenario_load_text_(path, NULL, overrides, n_overrides, out,
                                  err);
}

rc_status rc_scenario_load_string(const char *text, const char *label,
                                  const char *const *overrides,
                                  int n_overrides, rc_scenario **out,
                                  rc_error *err)
{
    if (!text || !label) {
        /* rc_scenario_load_text_ reads the file `label` when text is NULL */
        if (err) {
            memset(err, 0, sizeof *err);
            err->status = RC_ERR_INVALID;
            snprintf(err->message, sizeof err->message,
                     "rc_scenario_load_string: text and label are required");
        }
        if (out)
            *out = NULL;
        return RC_ERR_INVALID;
    }
    return rc_scenario_load_text_(label, text, overrides, n_overrides, out,
                                  err);
}

rc_status rc_scenario_load_text_(const char *path, const char *text,
                                 const char *const *overrides, int n_overrides,
                                 rc_scenario **out, rc_error *err)
{
    rc_error local;
    rc_scenario *scn = NULL;
    rc_ynode *root = NULL;
    rc_status st = RC_OK;
    int k;
    if (!err)
        err = &local;
    memset(err, 0, sizeof *err);
    if (!out || !path || (n_overrides > 0 && !overrides)) {
        snprintf(err->message, sizeof err->message,
                 "rc_scenario_load: invalid arguments");
        return err->status = RC_ERR_INVALID;
    }
    *out = NULL;
    scn = (rc_scenario *)calloc(1, sizeof *scn);
    if (!scn) {
        snprintf(err->message, sizeof err->message, "out of memory");
        return err->status = RC_ERR_NOMEM;
    }
    snprintf(scn->path, sizeof scn->path, "%s", path);
    /* Nodes borrow scn->path as their source label. */
    if (text) {
        scn->source = (char *)malloc(strlen(text) + 1);
        if (scn->source)
            memcpy(scn->source, text, strlen(text) + 1);
        root = rc_yaml_load_string(text, scn->path, err);
    } else {
        root = rc_yaml_load_file(scn->path, err);
        if (root)
            scn->source = rc_slurp_source(scn->path);
    }
    if (root && n_overrides > 0) {
        scn->overrides = (char **)calloc((size_t)n_overrides, sizeof(char *));
        for (k = 0; scn->overrides && k < n_overrides; ++k) {
            size_t len = strlen(overrides[k]) + 1;
            if ((scn->overrides[k] = (char *)malloc(len)) != NULL)
                memcpy(scn->overrides[k], overrides[k], len);
            scn->n_overrides = k + 1;
        }
    }
    if (!root) {
        st = err->status ? err->status : RC_ERR_PARSE;
        goto done;
    }
    for (k = 0; k < n_overrides; ++k)
        if ((st = rc_yaml_apply_override(root, overrides[k], err)) != RC_OK)
            goto done;
    if ((st = rc_load_tree(err, root, scn)) != RC_OK)
        goto done;
    /* kept: members are built from it, and set-up errors are placed in
     * it (rc_scenario_build, rc_scenario_check) */
    scn->tree = root;
    root = NULL;
    if (scn->ens.present) {
        /* members are built from this tree; check the first and the last
         * now, so a bad rule path is an input error with its place */
        long probe[2];
        int j;
        probe[0] = 0;
        probe[1] = scn->ens.members - 1;
        for (j = 0; j < 2; ++j) {
            rc_scenario *m = NULL;
            rc_error merr;
            if ((st = rc_scenario_member_(scn, probe[j], NULL, &m,
                                          &merr)) != RC_OK) {
                /* the member's fields were set by the rules, not by a
                 * --set option: place the error at the rule that set the
                 * field (or at the ensemble block) in this file */
                const rc_ynode *ens = rc_ynode_get(scn->tree, "ensemble",
                                                   NULL);
                const rc_ynode *vary = rc_ynode_get(ens, "vary", NULL);
                const rc_ynode *at = ens;
                int r;
                *err = merr;
                for (r = 0; vary && r < scn->ens.nrules && r < vary->n;
                     ++r) {
                    size_t n = strlen(scn->ens.rules[r].path);
                    if (!strncmp(merr.field, scn->ens.rules[r].path, n) &&
                        strchr(".[", merr.field[n])) {
                        at = rc_ynode_get(vary->items[r], "path", NULL);
                        break;
                    }
                }
                if (!strcmp(merr.file, "--set") && at) {
                    snprintf(err->file, sizeof err->file, "%s",
                             at->source ? at->source : scn->path);
                    err->line = at->line;
                    err->column = at->column;
                }
                snprintf(err->message, sizeof err->message,
                         "ensemble member %ld: %.900s", probe[j],
                         merr.message);
                goto done;
            }
            rc_scenario_free(m);
        }
    }
    if (!scn->name[0]) {
        const char *base = strrchr(path, '/');
        char *dot;
        snprintf(scn->name, sizeof scn->name, "%s", base ? base + 1 : path);
        dot = strrchr(scn->name, '.');
        if (dot && dot != scn->name)
            *dot = '\0';
        {
            /* the file's base name stands in for `name`: it must also
             * make a plain directory out/<name> */
            const char *why = rc_name_problem(scn->name);
            if (why) {
                memset(err, 0, sizeof *err);
                err->status = st = RC_ERR_PARSE;
                snprintf(err->file, sizeof err->file, "%s", path);
                snprintf(err->field, sizeof err->field, "name");
                snprintf(err->message, sizeof err->message,
                         "no `name`, and the file's name gives '%s', which "
                         "%s: give a `name`",
                         scn->name, why);
                goto done;
            }
        }
    }
done:
    rc_ynode_free(root);
    if (st != RC_OK) {
        if (!err->status)
            err->status = st;
        rc_scenario_free(scn);
        return st;
    }
    *out = scn;
    return RC_OK;
}

void rc_scenario_free(rc_scenario *scn)
{
    if (!scn)
        return;
    free(scn->particles);
    free(scn->potentials);
    free(scn->constraints);
    free(scn->con_place);
    if (scn->ens.rules) {
        int r;
        for (r = 0; r < scn->ens.nrules; ++r) {
            long t;
            for (t = 0; scn->ens.rules[r].texts && t < scn->ens.rules[r].nvalues;
                 ++t)
                free(scn->ens.rules[r].texts[t]);
            free(scn->ens.rules[r].texts);
            free(scn->ens.rules[r].values);
        }
        free(scn->ens.rules);
    }
    free(scn->ens.trace);
    rc_ynode_free(scn->tree);
    rc_model_free_(scn->model);
    rc_ynode_free(scn->model_node);
    free(scn->source);
    {
        int k;
        for (k = 0; k < scn->n_overrides; ++k)
            free(scn->overrides[k]);
        free(scn->overrides);
    }
    free(scn);
}

const char *rc_scenario_path(const rc_scenario *scn)
{
    return scn ? scn->path : "";
}

int rc_scenario_is_large_system(const rc_scenario *scn)
{
    return scn && scn->md.present;
}

int rc_scenario_is_model(const rc_scenario *scn)
{
    return scn && scn->model;
}

void rc_scenario_run_info(const rc_scenario *scn, rc_scenario_run *out)
{
    memset(out, 0, sizeof *out);
    if (!scn)
        return;
    out->dt = scn->integ.dt;
    out->duration = scn->duration;
    out->steps = rc_total_steps(scn);
    out->every = scn->every;
    out->trajectory = scn->trajectory;
    out->trajectory_every = scn->trajectory_every;
    out->log_every = scn->log_every;
    out->method = scn->model_method ? scn->model_method->name
                                    : rc_method_name(scn->integ.method);
    out->name = scn->name;
}

rc_status rc_scenario_check(const rc_scenario *scn, rc_error *err)
{
    rc_error local;
    rc_system *sys = NULL;
    rc_status st;
    if (!err)
        err = &local;
    memset(err, 0, sizeof *err);
    if (!scn)
        return err->status = RC_ERR_INVALID;
    if (scn->md.present)
        return rc_md_check_start_(scn, err);
    if (scn->model) {
        /* the model was checked whole when it was loaded; what the method
         * asks of it (a smooth method refuses impacts, ...) its create()
         * says, as rc_run() would at its start */
        void *ws = NULL;
        st = scn->model_method->create(scn->model, &scn->integ, &ws, err);
        if (ws)
            scn->model_method->destroy(ws);
        return st;
    }
    st = rc_scenario_build(scn, &sys, err);
    rc_system_free(sys);
    return st;
}

rc_status rc_scenario_build(const rc_scenario *scn, rc_system **out,
                            rc_error *err)
{
    rc_error local;
    rc_system *sys = NULL;
    rc_status st;
    int i, *ends = NULL; /* [ncon] terms in the system after each */
    int bad = -1;        /* the constraint description to blame */
    if (!err)
        err = &local;
    memset(err, 0, sizeof *err);
    if (!scn || !out)
        return err->status = RC_ERR_INVALID;
    if (scn->model) {
        snprintf(err->message, sizeof err->message,
                 "the scenario is a model in generalized coordinates, not "
                 "a particle system: rc_run() runs it");
        return err->status = RC_ERR_INVALID;
    }
    *out = NULL;
    if (scn->md.present) {
        snprintf(err->message, sizeof err->message,
                 "%.800s has a `box`: a large system runs through rc_run() "
                 "(the large-system engine), not as an rc_system",
                 scn->path);
        return err->status = RC_ERR_UNSUPPORTED;
    }
    st = rc_system_create(scn->dimension, &sys);
    if (st != RC_OK) {
        snprintf(err->message, sizeof err->message,
                 "cannot create a %d-dimensional system", scn->dimension);
        return err->status = st;
    }
    for (i = 0; i < scn->n && st == RC_OK; ++i)
        st = rc_system_add_particle(sys, scn->particles[i].mass,
                                    scn->particles[i].radius,
                                    scn->particles[i].q, scn->particles[i].p,
                                    NULL);
    for (i = 0; i < scn->npot && st == RC_OK; ++i)
        st = rc_system_add_potential(sys, &scn->potentials[i]);
    ends = scn->ncon > 0 ? (int *)malloc(sizeof(int) * (size_t)scn->ncon)
                         : NULL;
    if (scn->ncon > 0 && !ends && st == RC_OK)
        st = RC_ERR_NOMEM;
    for (i = 0; i < scn->ncon && st == RC_OK; ++i) {
        st = rc_system_add_constraint(sys, &scn->constraints[i]);
        /* a description may add many terms (non_overlap of all) */
        ends[i] = rc_system_constraint_count(sys);
        if (st != RC_OK)
            bad = i;
    }
    if (st == RC_OK)
        st = rc_system_set_integrator(sys, &scn->integ);
    if (st == RC_OK)
        st = rc_system_check_constraints(sys);
    if (st != RC_OK) {
        snprintf(err->file, sizeof err->file, "%s", scn->path);
        snprintf(err->message, sizeof err->message, "%s",
                 st == RC_ERR_NOMEM ? "out of memory"
                                    : rc_system_message(sys));
        err->status = st;
        if (sys->start_term >= 0 && bad < 0) {
            /* the description that made the term violated at the start */
            bad = 0;
            while (bad < scn->ncon - 1 && ends[bad] <= sys->start_term)
                ++bad;
        }
        if (st != RC_ERR_NOMEM && bad >= 0 && scn->con_place) {
            /* a constraint refused, or violated at the start, is bad
             * input: the place of the constraints[] item that made it */
            int c = bad;
            err->status = st = RC_ERR_PARSE;
            if (scn->con_place[c].source)
                snprintf(err->file, sizeof err->file, "%s",
                         scn->con_place[c].source);
            err->line = scn->con_place[c].line;
            err->column = scn->con_place[c].column;
            snprintf(err->field, sizeof err->field, "constraints[%d]",
                     scn->con_place[c].item);
        }
        free(ends);
        rc_system_free(sys);
        return st;
    }
    free(ends);
    *out = sys;
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Canonical JSON echo.                                                */

/* A number that reads back as the very same double.  cJSON prints with
 * 15 significant digits whenever that lands within a relative
 * DBL_EPSILON of the value, which is not always the same double
 * (0.30000000000000004 prints as 0.3), so loading the echo would give a
 * slightly different scenario.  Numbers therefore go in as raw text: the
 * shortest of %.15g, %.16g, %.17g that strtod maps back exactly. */
static cJSON *rc_json_num(double v)
{
    char buf[40];
    int prec;
    if (!isfinite(v))
        return cJSON_CreateNull();
    for (prec = 15; prec < 17; ++prec) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return cJSON_CreateRaw(buf);
    }
    snprintf(buf, sizeof buf, "%.17g", v);
    return cJSON_CreateRaw(buf);
}

static void rc_json_add_num(cJSON *o, const char *key, double v)
{
    cJSON_AddItemToObject(o, key, rc_json_num(v));
}

static cJSON *rc_json_vec(const double *v, int dim)
{
    cJSON *arr = cJSON_CreateArray();
    int k;
    for (k = 0; arr && k < dim; ++k)
        cJSON_AddItemToArray(arr, rc_json_num(v[k]));
    return arr;
}

static void rc_json_targets(cJSON *o, int i)
{
    if (i == RC_ALL)
        cJSON_AddStringToObject(o, "particles", "all");
    else
        cJSON_AddNumberToObject(o, "particles", i);
}

/* The ensemble block, as written (so that the echo is a loadable
 * ensemble scenario). */
static void rc_json_ensemble(cJSON *root, const rc_ensemble_spec *e)
{
    cJSON *o = cJSON_AddObjectToObject(root, "ensemble"), *vary;
    int r;
    long k;
    if (!e->grid)
        cJSON_AddNumberToObject(o, "members", (double)e->members);
    cJSON_AddNumberToObject(o, "seed", (double)e->seed);
    cJSON_AddBoolToObject(o, "grid", e->grid);
    if (e->map != RC_MAP_NONE) {
        cJSON *m = cJSON_AddObjectToObject(o, "map");
        cJSON_AddStringToObject(m, "type",
                                e->map == RC_MAP_CART_PENDULUM
                                    ? "cart_pendulum"
                                    : "cart_pendulum_xi");
        rc_json_add_num(m, "length", e->map_par[0]);
        if (e->map == RC_MAP_CART_PENDULUM) {
            rc_json_add_num(m, "y", e->map_par[1]);
            rc_json_add_num(m, "theta", e->map_par[2]);
            rc_json_add_num(m, "ydot", e->map_par[3]);
            rc_json_add_num(m, "thetadot", e->map_par[4]);
        } else {
            rc_json_add_num(m, "beta", e->map_par[5]);
        }
    }
    vary = cJSON_AddArrayToObject(o, "vary");
    for (r = 0; r < e->nrules; ++r) {
        const rc_vary_rule *ru = &e->rules[r];
        cJSON *rule = cJSON_CreateObject(), *arr;
        cJSON_AddStringToObject(rule, "path", ru->path);
        switch (ru->kind) {
        case RC_VARY_LINSPACE:
        case RC_VARY_UNIFORM:
            arr = cJSON_AddArrayToObject(
                rule, ru->kind == RC_VARY_LINSPACE ? "linspace" : "uniform");
            cJSON_AddItemToArray(arr, rc_json_num(ru->a));
            cJSON_AddItemToArray(arr, rc_json_num(ru->b));
            if (ru->kind == RC_VARY_LINSPACE && e->grid)
                cJSON_AddNumberToObject(rule, "count", (double)ru->count);
            break;
        case RC_VARY_NORMAL: {
            cJSON *nm = cJSON_AddObjectToObject(rule, "normal");
            rc_json_add_num(nm, "mean", ru->a);
            rc_json_add_num(nm, "sigma", ru->b);
            break;
        }
        case RC_VARY_VALUES:
            arr = cJSON_AddArrayToObject(rule, "values");
            for (k = 0; k < ru->nvalues; ++k)
                cJSON_AddItemToArray(arr, ru->texts
                                              ? cJSON_CreateString(ru->texts[k])
                                              : rc_json_num(ru->values[k]));
            break;
        }
        cJSON_AddItemToArray(vary, rule);
    }
    if (e->has_reference) {
        cJSON *ref = cJSON_AddObjectToObject(o, "reference");
        rc_json_add_num(ref, "dt", e->ref_dt);
        cJSON_AddStringToObject(ref, "method",
                                e->ref_model_method
                                    ? e->ref_model_method->name
                                    : rc_method_name(e->ref_method));
    }
}

/* A YAML node as JSON, as it was written: unquoted scalars that are
 * numbers or true/false as such, everything else as strings (the model
 * block's echo, which the kind reads back). */
static cJSON *rc_json_ynode(const rc_ynode *node)
{
    cJSON *o;
    int k;
    if (!node)
        return cJSON_CreateNull();
    if (node->kind == RC_YNODE_SCALAR) {
        char *end;
        double v;
        if (!node->quoted && node->value[0]) {
            if (!strcmp(node->value, "true") || !strcmp(node->value, "false"))
                return cJSON_CreateBool(!strcmp(node->value, "true"));
            v = strtod(node->value, &end);
            if (*end == '\0' && isfinite(v)) {
                /* exact: the number's own text, not a re-printed value */
                return cJSON_CreateRaw(node->value);
            }
        }
        return cJSON_CreateString(node->value);
    }
    o = node->kind == RC_YNODE_SEQUENCE ? cJSON_CreateArray()
                                         : cJSON_CreateObject();
    for (k = 0; o && k < node->n; ++k) {
        if (node->kind == RC_YNODE_SEQUENCE)
            cJSON_AddItemToArray(o, rc_json_ynode(node->items[k]));
        else
            cJSON_AddItemToObject(o, node->keys[k]->value,
                                  rc_json_ynode(node->items[k]));
    }
    return o;
}

char *rc_scenario_to_json(const rc_scenario *scn)
{
    cJSON *root, *arr, *o;
    char *text;
    int i, dim;
    if (!scn)
        return NULL;
    dim = scn->dimension;
    root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "name", scn->name);
    if (scn->description[0])
        cJSON_AddStringToObject(root, "description", scn->description);
    if (scn->model)
        cJSON_AddItemToObject(root, "model", rc_json_ynode(scn->model_node));
    else
        cJSON_AddNumberToObject(root, "dimension", dim);
    if (scn->md.present) {
        static const char *const kinds[] = {"fcc", "sc", "random"};
        const rc_md_spec *ms = &scn->md;
        cJSON *per;
        o = cJSON_AddObjectToObject(root, "box");
        per = cJSON_AddArrayToObject(o, "periodic");
        for (i = 0; i < dim; ++i)
            cJSON_AddItemToArray(per, cJSON_CreateBool(ms->periodic[i]));
        if (ms->have_lengths)
            cJSON_AddItemToObject(o, "lengths", rc_json_vec(ms->lengths, dim));
        if (ms->lattice) {
            o = cJSON_AddObjectToObject(root, "lattice");
            cJSON_AddStringToObject(o, "kind", kinds[ms->kind]);
            cJSON_AddNumberToObject(o, "n", (double)ms->n);
            if (!ms->have_lengths)
                rc_json_add_num(o, "packing_fraction", ms->eta);
            rc_json_add_num(o, "temperature", ms->temperature);
            cJSON_AddNumberToObject(o, "seed", (double)ms->seed);
            if (ms->radius_dist == 0) {
                rc_json_add_num(o, "radius", ms->radius);
            } else {
                cJSON *rd = cJSON_AddObjectToObject(o, "radius");
                cJSON_AddStringToObject(rd, "distribution",
                                        ms->radius_dist == 1 ? "uniform"
                                                             : "normal");
                rc_json_add_num(rd, ms->radius_dist == 1 ? "min" : "mean",
                                ms->radius_a);
                rc_json_add_num(rd, ms->radius_dist == 1 ? "max" : "sigma",
                                ms->radius_b);
            }
            rc_json_add_num(o, "mass", ms->mass);
            if (ms->fill_height > 0.0)
                rc_json_add_num(o, "fill_height", ms->fill_height);
        }
    }
    /* a frame read from a file is echoed as its `read:` (the file
     * absolutely, the frame resolved), not as its particles: loading the
     * echo reads the same frame again while the file is there, and a
     * 10^6-sphere summary.json stays a summary */
    if (scn->md.present && scn->md.read_path[0]) {
        const rc_md_spec *ms = &scn->md;
        char abs_path[4096];
        o = cJSON_AddObjectToObject(root, "read");
        cJSON_AddStringToObject(o, "file",
                                realpath(ms->read_path, abs_path)
                                    ? abs_path
                                    : ms->read_path);
        cJSON_AddNumberToObject(o, "frame", (double)ms->read_frame);
        rc_json_add_num(o, "temperature", ms->read_temperature);
        cJSON_AddNumberToObject(o, "seed", (double)ms->read_seed);
        rc_json_add_num(o, "radius", ms->read_radius);
        rc_json_add_num(o, "mass", ms->read_mass);
    }
    /* the particles themselves only when listed (not a lattice, not a
     * frame read) */
    if (!scn->md.lattice && !scn->md.read_path[0]) {
        arr = cJSON_AddArrayToObject(root, "particles");
        for (i = 0; i < scn->n; ++i) {
            const rc_scn_particle *p = &scn->particles[i];
            o = cJSON_CreateObject();
            rc_json_add_num(o, "mass", p->mass);
            rc_json_add_num(o, "radius", p->radius);
            cJSON_AddItemToObject(o, "position", rc_json_vec(p->q, dim));
            cJSON_AddItemToObject(o, "momentum", rc_json_vec(p->p, dim));
            cJSON_AddItemToArray(arr, o);
        }
    }
    arr = cJSON_AddArrayToObject(root, "potentials");
    for (i = 0; i < scn->npot; ++i) {
        const rc_potential_desc *d = &scn->potentials[i];
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "type", rc_potential_type_name(d->type));
        switch (d->type) {
        case RC_POT_GRAVITY:
            cJSON_AddItemToObject(o, "acceleration", rc_json_vec(d->vector, dim));
            rc_json_targets(o, d->i);
            break;
        case RC_POT_SPRING: {
            int ij[2];
            ij[0] = d->i;
            ij[1] = d->j;
            cJSON_AddItemToObject(o, "particles", cJSON_CreateIntArray(ij, 2));
            rc_json_add_num(o, "k", d->k);
            rc_json_add_num(o, "rest_length", d->rest_length);
            break;
        }
        case RC_POT_ANCHOR:
            rc_json_targets(o, d->i);
            rc_json_add_num(o, "k", d->k);
            rc_json_add_num(o, "rest_length", d->rest_length);
            cJSON_AddItemToObject(o, "point", rc_json_vec(d->vector, dim));
            break;
        case RC_POT_LENNARD_JONES:
            rc_json_add_num(o, "epsilon", d->epsilon);
            rc_json_add_num(o, "sigma", d->sigma);
            rc_json_add_num(o, "cutoff", d->cutoff);
            break;
        case RC_POT_WCA:
            rc_json_add_num(o, "epsilon", d->epsilon);
            rc_json_add_num(o, "sigma", d->sigma);
            break;
        default:
            rc_json_add_num(o, "strength", d->strength);
            cJSON_AddItemToObject(o, "center", rc_json_vec(d->vector, dim));
            rc_json_targets(o, d->i);
            break;
        }
        cJSON_AddItemToArray(arr, o);
    }
    arr = cJSON_AddArrayToObject(root, "constraints");
    for (i = 0; i < scn->ncon; ++i) {
        const rc_constraint_desc *d = &scn->constraints[i];
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "type", rc_constraint_type_name(d->type));
        switch (d->type) {
        case RC_CON_NON_OVERLAP:
        case RC_CON_ROD:
            if (d->i == RC_ALL) {
                cJSON_AddStringToObject(o, "particles", "all");
            } else {
                int ij[2];
                cJSON *pairs;
                ij[0] = d->i;
                ij[1] = d->j;
                if (d->type == RC_CON_ROD) {
                    cJSON_AddItemToObject(o, "particles",
                                          cJSON_CreateIntArray(ij, 2));
                } else {
                    pairs = cJSON_AddArrayToObject(o, "pairs");
                    cJSON_AddItemToArray(pairs, cJSON_CreateIntArray(ij, 2));
                }
            }
            if (d->type == RC_CON_ROD && d->length >= 0.0)
                rc_json_add_num(o, "length", d->length);
            break;
        case RC_CON_WALL:
        case RC_CON_PLANE:
            cJSON_AddItemToObject(o, "normal", rc_json_vec(d->normal, dim));
            rc_json_add_num(o, "offset", d->offset);
            rc_json_targets(o, d->i);
            break;
        case RC_CON_CONTAINER:
        case RC_CON_OBSTACLE:
            cJSON_AddItemToObject(o, "center", rc_json_vec(d->point, dim));
            rc_json_add_num(o, "radius", d->radius);
            rc_json_targets(o, d->i);
            break;
        case RC_CON_PENDULUM:
            cJSON_AddItemToObject(o, "pivot", rc_json_vec(d->point, dim));
            if (d->length >= 0.0)
                rc_json_add_num(o, "length", d->length);
            rc_json_targets(o, d->i);
            break;
        default:
            break;
        }
        cJSON_AddItemToArray(arr, o);
    }
    o = cJSON_AddObjectToObject(root, "integrator");
    cJSON_AddStringToObject(o, "method",
                            scn->model_method
                                ? scn->model_method->name
                                : rc_method_name(scn->integ.method));
    if (scn->model)
        cJSON_AddNumberToObject(o, "max_events", scn->integ.max_events);
    else if (rc_method_takes_constraints(scn->integ.method)) {
        cJSON_AddStringToObject(o, "base", rc_base_name(scn->integ.base));
        cJSON_AddStringToObject(o, "reflection",
                                rc_reflection_name(scn->integ.reflection));
        cJSON_AddStringToObject(o, "energy", rc_energy_name(scn->integ.energy));
        rc_json_add_num(o, "eps_g", scn->integ.eps_g);
        rc_json_add_num(o, "eps_v", scn->integ.eps_v);
        cJSON_AddNumberToObject(o, "max_reflection_passes",
                                scn->integ.max_reflection_passes);
        cJSON_AddBoolToObject(o, "seed_exact", scn->integ.seed_exact);
        cJSON_AddBoolToObject(o, "linearized", scn->integ.linearized);
        cJSON_AddNumberToObject(o, "max_events", scn->integ.max_events);
        if (scn->md.present) {
            static const char *const cn[] = {"auto", "gvi", "exact"};
            cJSON_AddStringToObject(o, "collisions",
                                    cn[scn->integ.collisions]);
        }
    }
    if (scn->integ.method == RC_METHOD_AVI) {
        /* the keys given (0 = default, left out so the echo loads back) */
        const rc_avi_desc *a = &scn->integ.avi;
        static const char *const an[] = {
            "gravity_step", "spring_step", "anchor_step", "pair_step",
            "external_step", "eta1", "eta_exponent", "layer_step",
            "layer_resolution", "stiffness_exponent", "skin"};
        const double av[] = {a->gravity_step, a->spring_step, a->anchor_step,
                             a->pair_step, a->external_step, a->eta1,
                             a->eta_exponent, a->layer_step,
                             a->layer_resolution, a->stiffness_exponent,
                             a->skin};
        int k;
        cJSON *ao = cJSON_AddObjectToObject(o, "avi");
        for (k = 0; ao && k < 11; ++k)
            if (av[k] > 0.0)
                rc_json_add_num(ao, an[k], av[k]);
        if (ao && a->max_layers > 0)
            cJSON_AddNumberToObject(ao, "max_layers", a->max_layers);
    }
    rc_json_add_num(o, "dt", scn->integ.dt);
    rc_json_add_num(o, "duration", scn->duration);
    rc_json_add_num(o, "newton_tol", scn->integ.newton_tol);
    cJSON_AddNumberToObject(o, "newton_max_iter", scn->integ.newton_max_iter);
    o = cJSON_AddObjectToObject(root, "output");
    cJSON_AddNumberToObject(o, "every", (double)scn->every);
    cJSON_AddStringToObject(o, "trajectory",
                            scn->trajectory == RC_TRAJECTORY_XYZ    ? "xyz"
                            : scn->trajectory == RC_TRAJECTORY_H5MD ? "h5md"
                                                                    : "none");
    cJSON_AddNumberToObject(o, "trajectory_every",
                            (double)scn->trajectory_every);
    rc_json_add_num(o, "log_every", scn->log_every);
    if (scn->checkpoint_wall > 0.0) {
        char wall[64];
        snprintf(wall, sizeof wall, "%.17gs", scn->checkpoint_wall);
        cJSON_AddStringToObject(o, "checkpoint_every", wall);
    } else if (scn->checkpoint_every > 0.0) {
        cJSON_AddNumberToObject(o, "checkpoint_every", scn->checkpoint_every);
    }
    if (scn->md.present) {
        cJSON_AddNumberToObject(o, "rdf_bins", scn->md.rdf_bins);
        if (scn->md.rdf_rmax > 0.0)
            rc_json_add_num(o, "rdf_rmax", scn->md.rdf_rmax);
        if (scn->md.rdf_every >= 0)
            cJSON_AddNumberToObject(o, "rdf_every",
                                    (double)scn->md.rdf_every);
        rc_json_add_num(o, "equilibrate", scn->md.equilibrate);
        cJSON_AddStringToObject(o, "species", scn->md.species);
        if (scn->md.length_unit[0]) {
            cJSON *u = cJSON_AddObjectToObject(o, "units");
            cJSON_AddStringToObject(u, "length", scn->md.length_unit);
            cJSON_AddStringToObject(u, "time", scn->md.time_unit);
        } else {
            cJSON_AddStringToObject(o, "units", "none");
        }
    }
    if (scn->ens.ntrace > 0) {
        cJSON *tm = cJSON_AddArrayToObject(o, "trace_members");
        for (i = 0; i < scn->ens.ntrace; ++i)
            cJSON_AddItemToArray(tm, cJSON_CreateNumber(
                                         (double)scn->ens.trace[i]));
    }
    if (scn->ens.present)
        rc_json_ensemble(root, &scn->ens);
    if (scn->model) { /* the model block holds the system */
        cJSON_DeleteItemFromObject(root, "particles");
        cJSON_DeleteItemFromObject(root, "potentials");
        cJSON_DeleteItemFromObject(root, "constraints");
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

/* A large system in memory (include/ricochet/md.h): the set-up and the
 * CPU engine of rc_run() (run_md.c: rc_md_initial_, rc_md_params_,
 * dengine.c), stepped and read by the caller, writing nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ricochet/ensemble.h"
#include "ricochet/md.h"
#include "dengine.h"
#include "engine.h"
#include "run_md.h"
#include "../scenario_impl.h"

struct rc_md_session {
    rc_md md;
    rc_dmd dev;
    int on_dev;          /* dev initialised (rc_dmd_free owes it) */
    double row_virial;   /* impulse virials since the last observe */
    double row_time;     /* time of the last observe */
    long row_coll;       /* collisions since the last observe */
    char msg[600];
};

static rc_status rc_sess_fail(rc_error *err, rc_status st, const char *msg)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->status = st;
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return st;
}

rc_status rc_md_session_create(const rc_scenario *scn, int threads,
                               rc_md_session **out, rc_error *err)
{
    rc_md_session *s = NULL;
    rc_k_box box;
    rc_md_params par;
    double *q = NULL, *p = NULL, *mass = NULL, *radius = NULL;
    rc_status st = RC_OK;
    int n, d;
    if (err)
        memset(err, 0, sizeof *err);
    if (!out || !scn || threads < 0)
        return rc_sess_fail(err, RC_ERR_INVALID,
                            "rc_md_session_create: invalid arguments");
    *out = NULL;
    if (!rc_scenario_is_large_system(scn))
        return rc_sess_fail(err, RC_ERR_INVALID,
                            "a large-system session needs a scenario with "
                            "a `box`");
    if (rc_scenario_is_ensemble(scn))
        return rc_sess_fail(err, RC_ERR_INVALID,
                            "a large-system session takes one system, not "
                            "an ensemble");
    /* what rc_run() refuses before it starts, with the same errors */
    if ((st = rc_scenario_check(scn, err)) != RC_OK)
        return st;
    n = scn->n;
    d = scn->dimension;
    s = (rc_md_session *)calloc(1, sizeof *s);
    q = (double *)malloc(sizeof(double) * (size_t)n * (size_t)d);
    p = (double *)malloc(sizeof(double) * (size_t)n * (size_t)d);
    mass = (double *)malloc(sizeof(double) * (size_t)n);
    radius = (double *)malloc(sizeof(double) * (size_t)n);
    if (!s || !q || !p || !mass || !radius) {
        st = rc_sess_fail(err, RC_ERR_NOMEM, "out of memory for the particles");
        goto done;
    }
    if ((st = rc_md_initial_(scn, &box, q, p, mass, radius, err)) != RC_OK)
        goto done;
    rc_md_params_(scn, threads, &par);
    if ((st = rc_md_init(&s->md, &box, n, q, p, mass, radius, &par)) !=
        RC_OK) {
        rc_sess_fail(err, st, s->md.msg);
        goto done;
    }
    st = rc_dmd_init_cpu(&s->dev, &s->md);
    s->on_dev = 1; /* rc_dmd_free is owed also when the init failed */
    if (st != RC_OK) {
        rc_sess_fail(err, st, s->md.msg);
        goto done;
    }
    /* the msd's reference: the unwrapped positions at the start */
    if ((st = rc_dmd_set_ref_state(&s->dev)) != RC_OK) {
        rc_sess_fail(err, st, s->md.msg);
        goto done;
    }
done:
    free(q);
    free(p);
    free(mass);
    free(radius);
    if (st != RC_OK) {
        rc_md_session_free(s);
        return st;
    }
    *out = s;
    return RC_OK;
}

void rc_md_session_free(rc_md_session *s)
{
    if (!s)
        return;
    if (s->on_dev)
        rc_dmd_free(&s->dev);
    rc_md_free(&s->md);
    free(s);
}

rc_status rc_md_session_step(rc_md_session *s, long steps)
{
    long k;
    rc_status st = RC_OK;
    if (!s || steps < 0)
        return RC_ERR_INVALID;
    s->msg[0] = '\0';
    for (k = 0; k < steps; ++k) {
        if ((st = rc_dmd_step(&s->dev)) != RC_OK) {
            snprintf(s->msg, sizeof s->msg, "step %ld (t = %.17g): %s",
                     s->md.steps + 1, s->md.time, s->md.msg);
            return st;
        }
        s->row_virial += s->md.step.virial;
        s->row_coll += s->md.step.collisions;
    }
    return st;
}

const char *rc_md_session_message(const rc_md_session *s)
{
    return s ? s->msg : "";
}

int rc_md_session_count(const rc_md_session *s)
{
    return s ? s->md.n : 0;
}

int rc_md_session_dimension(const rc_md_session *s)
{
    return s ? s->md.dim : 0;
}

long rc_md_session_steps(const rc_md_session *s)
{
    return s ? s->md.steps : 0;
}

double rc_md_session_time(const rc_md_session *s)
{
    return s ? s->md.time : 0.0;
}

void rc_md_session_box(const rc_md_session *s, double *lengths,
                       int *periodic)
{
    int k;
    for (k = 0; s && k < s->md.dim; ++k) {
        if (lengths)
            lengths[k] = s->md.box.L[k];
        if (periodic)
            periodic[k] = s->md.box.periodic[k];
    }
}

rc_status rc_md_session_state(rc_md_session *s, double *q, double *p,
                              int *image)
{
    size_t N;
    rc_status st;
    if (!s)
        return RC_ERR_INVALID;
    if ((st = rc_dmd_sync(&s->dev)) != RC_OK) {
        snprintf(s->msg, sizeof s->msg, "%s", s->md.msg);
        return st;
    }
    N = (size_t)s->md.n * (size_t)s->md.dim;
    if (q)
        memcpy(q, s->md.q, sizeof(double) * N);
    if (p)
        memcpy(p, s->md.p, sizeof(double) * N);
    if (image)
        memcpy(image, s->md.image, sizeof(int) * N);
    return RC_OK;
}

rc_status rc_md_session_particles(const rc_md_session *s, double *mass,
                                  double *radius)
{
    if (!s)
        return RC_ERR_INVALID;
    if (mass)
        memcpy(mass, s->md.mass, sizeof(double) * (size_t)s->md.n);
    if (radius)
        memcpy(radius, s->md.radius, sizeof(double) * (size_t)s->md.n);
    return RC_OK;
}

rc_status rc_md_session_observe(rc_md_session *s, rc_md_observables *o)
{
    double kin, pot, mom[3], msd, overlap, T, pk, pv, pc, z;
    rc_status st;
    int k;
    if (!s || !o)
        return RC_ERR_INVALID;
    if ((st = rc_dmd_observe(&s->dev, &kin, &pot, mom, &msd, &overlap)) !=
        RC_OK) {
        snprintf(s->msg, sizeof s->msg, "%s", s->md.msg);
        return st;
    }
    rc_md_pressure_(&s->md, kin, s->row_virial, s->md.time - s->row_time,
                    &T, &pk, &pv, &pc, &z);
    memset(o, 0, sizeof *o);
    o->step = s->md.steps;
    o->time = s->md.time;
    o->temperature = T;
    o->kinetic = kin;
    o->potential = pot;
    o->energy = kin + pot;
    for (k = 0; k < 3; ++k)
        o->momentum[k] = mom[k];
    o->pressure = pk + pv + pc;
    o->pressure_kinetic = pk;
    o->pressure_virial = pv;
    o->pressure_collision = pc;
    o->z = z;
    o->collisions = s->row_coll;
    o->collisions_total = s->md.total.collisions;
    o->wall_collisions_total = s->md.total.wall_collisions;
    o->largest_island = s->md.total.largest_island;
    o->msd = msd;
    /* "no overlap" is +0 whatever sign of zero fmax gave (as run_md.c) */
    o->max_overlap = overlap == 0.0 ? 0.0 : overlap;
    s->row_virial = 0.0;
    s->row_coll = 0;
    s->row_time = s->md.time;
    return RC_OK;
}

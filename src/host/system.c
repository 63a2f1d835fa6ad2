/* rc_system: creation, model assembly, state access and diagnostics. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "gvi_impl.h"
#include "../kernels/rc_diag.h"

rc_status rc_fail_(rc_system *sys, rc_status status, const char *fmt, ...)
{
    if (sys) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(sys->msg, sizeof sys->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

static const char *const rc_potential_names[RC_POT_TYPE_COUNT_] = {
    "gravity", "spring", "anchor", "lennard_jones", "wca",
    "inverse_square", "sextic_well"};

const char *rc_potential_type_name(rc_potential_type type)
{
    if ((int)type < 0 || type >= RC_POT_TYPE_COUNT_)
        return NULL;
    return rc_potential_names[type];
}

static const char *const rc_method_names[RC_METHOD_COUNT_] = {
    "sv", "midpoint", "gvi", "cva", "mcva", "direct-endpoint",
    "direct-midpoint", "avi"};
static const char *const rc_base_names[RC_BASE_COUNT_] = {"verlet",
                                                          "midpoint"};
static const char *const rc_reflection_names[RC_REFLECT_COUNT_] = {
    "generalized", "moreau"};
static const char *const rc_energy_names[RC_ENERGY_COUNT_] = {"hamiltonian",
                                                              "modified"};
static const char *const rc_constraint_names[RC_CON_TYPE_COUNT_] = {
    "non_overlap", "wall", "container", "obstacle",
    "rod",         "pendulum", "plane"};

int rc_method_takes_constraints(rc_method method)
{
    return rc_method_uses_constraints_(method);
}

const char *rc_base_name(rc_base base)
{
    return (int)base < 0 || base >= RC_BASE_COUNT_ ? NULL
                                                   : rc_base_names[base];
}

const char *rc_reflection_name(rc_reflection reflection)
{
    return (int)reflection < 0 || reflection >= RC_REFLECT_COUNT_
               ? NULL
               : rc_reflection_names[reflection];
}

const char *rc_energy_name(rc_energy energy)
{
    return (int)energy < 0 || energy >= RC_ENERGY_COUNT_
               ? NULL
               : rc_energy_names[energy];
}

const char *rc_constraint_type_name(rc_constraint_type type)
{
    return (int)type < 0 || type >= RC_CON_TYPE_COUNT_
               ? NULL
               : rc_constraint_names[type];
}

void rc_constraint_desc_init(rc_constraint_desc *desc,
                             rc_constraint_type type)
{
    memset(desc, 0, sizeof *desc);
    desc->type = type;
    desc->i = RC_ALL;
    desc->j = RC_ALL;
    desc->length = -1.0;
}

const char *rc_method_name(rc_method method)
{
    if ((int)method < 0 || method >= RC_METHOD_COUNT_)
        return NULL;
    return rc_method_names[method];
}

void rc_potential_desc_init(rc_potential_desc *desc, rc_potential_type type)
{
    memset(desc, 0, sizeof *desc);
    desc->type = type;
    desc->i = RC_ALL;
    desc->j = RC_ALL;
    desc->strength = 1.0;
}

void rc_integrator_desc_init(rc_integrator_desc *desc)
{
    memset(desc, 0, sizeof *desc);
    desc->method = RC_METHOD_SV;
    desc->dt = 0.0;
    desc->newton_tol = 1e-14;
    desc->newton_max_iter = 50;
    desc->base = RC_BASE_VERLET;
    desc->reflection = RC_REFLECT_GENERALIZED;
    desc->energy = RC_ENERGY_HAMILTONIAN;
    desc->eps_g = 0.0;
    desc->eps_v = 0.0;
    desc->max_reflection_passes = 1000;
    desc->seed_exact = 0;
    desc->linearized = 0;
    desc->max_events = 1000;
}

double rc_pair_potential_form_(const rc_potential_desc *desc,
                               rc_k_potential *t)
{
    double sig = desc->sigma, eps = desc->epsilon, rc, t2, t6;
    if (desc->type == RC_POT_WCA)
        rc = pow(2.0, 1.0 / 6.0) * sig;
    else
        rc = desc->cutoff > 0.0 ? desc->cutoff : 2.5 * sig;
    t->type = (int)desc->type;
    t->a[0] = eps;
    t->a[1] = sig * sig;
    t->a[2] = rc * rc;
    t2 = sig * sig / (rc * rc);
    t6 = t2 * t2 * t2;
    t->a[3] = 4.0 * eps * (t6 * t6 - t6); /* shift: V(rc) = 0 */
    return rc;
}

rc_status rc_system_create(int dimension, rc_system **out)
{
    rc_system *sys;
    if (!out)
        return RC_ERR_INVALID;
    *out = NULL;
    if (dimension < 1 || dimension > 3)
        return RC_ERR_INVALID;
    sys = (rc_system *)calloc(1, sizeof *sys);
    if (!sys)
        return RC_ERR_NOMEM;
    sys->dim = dimension;
    sys->start_term = -1;
    rc_integrator_desc_init(&sys->integ);
    *out = sys;
    return RC_OK;
}

static void rc_free_scratch(rc_system *sys)
{
    free(sys->grad);
    free(sys->work);
    free(sys->jac);
    free(sys->piv);
    free(sys->per_particle);
    free(sys->mass_c);
    sys->grad = sys->work = sys->jac = sys->per_particle = NULL;
    sys->mass_c = sys->inv_mass_c = NULL;
    sys->piv = NULL;
    sys->scratch_n = -1;
    rc_gvi_free_(sys);
    rc_avi_free_(sys);
}

void rc_system_free(rc_system *sys)
{
    if (!sys)
        return;
    free(sys->mass);
    free(sys->inv_mass);
    free(sys->radius);
    free(sys->q);
    free(sys->p);
    free(sys->pot);
    free(sys->con);
    rc_free_scratch(sys);
    free(sys);
}

const char *rc_system_message(const rc_system *sys)
{
    return sys ? sys->msg : "no system";
}

static int rc_all_finite(int n, const double *v)
{
    int k;
    for (k = 0; k < n; ++k)
        if (!isfinite(v[k]))
            return 0;
    return 1;
}

static rc_status rc_grow(void **ptr, size_t elem, int count)
{
    void *np = realloc(*ptr, elem * (size_t)count);
    if (!np)
        return RC_ERR_NOMEM;
    *ptr = np;
    return RC_OK;
}

rc_status rc_system_add_particle(rc_system *sys, double mass, double radius,
                                 const double *q, const double *p, int *index)
{
    int d, k;
    if (!sys)
        return RC_ERR_INVALID;
    if (!q || !p)
        return rc_fail_(sys, RC_ERR_INVALID,
                        "add_particle: position and momentum are required");
    d = sys->dim;
    if (!isfinite(mass) || !(mass > 0.0))
        return rc_fail_(sys, RC_ERR_INVALID,
                        "particle mass must be positive and finite (got %g)",
                        mass);
    if (!isfinite(radius) || radius < 0.0)
        return rc_fail_(sys, RC_ERR_INVALID,
                        "particle radius must be >= 0 and finite (got %g)",
                        radius);
    if (!rc_all_finite(d, q) || !rc_all_finite(d, p))
        return rc_fail_(sys, RC_ERR_INVALID,
                        "particle position and momentum must be finite");
    if (sys->n == sys->cap) {
        int cap = sys->cap ? 2 * sys->cap : 16;
        if (rc_grow((void **)&sys->mass, sizeof(double), cap) ||
            rc_grow((void **)&sys->inv_mass, sizeof(double), cap) ||
            rc_grow((void **)&sys->radius, sizeof(double), cap) ||
            rc_grow((void **)&sys->q, sizeof(double) * (size_t)d, cap) ||
            rc_grow((void **)&sys->p, sizeof(double) * (size_t)d, cap))
            return rc_fail_(sys, RC_ERR_NOMEM, "out of memory adding particle");
        sys->cap = cap;
    }
    sys->mass[sys->n] = mass;
    sys->inv_mass[sys->n] = 1.0 / mass;
    sys->radius[sys->n] = radius;
    for (k = 0; k < d; ++k) {
        sys->q[(long)sys->n * d + k] = q[k];
        sys->p[(long)sys->n * d + k] = p[k];
    }
    if (index)
        *index = sys->n;
    sys->n++;
    sys->dirty = 1;
    return RC_OK;
}

static int rc_valid_index(const rc_system *sys, int i, int allow_all)
{
    return (allow_all && i == RC_ALL) || (i >= 0 && i < sys->n);
}

rc_status rc_system_add_potential(rc_system *sys,
                                  const rc_potential_desc *desc)
{
    rc_k_potential t;
    int d, k;
    const char *name;
    if (!sys)
        return RC_ERR_INVALID;
    if (!desc)
        return rc_fail_(sys, RC_ERR_INVALID, "add_potential: no description");
    name = rc_potential_type_name(desc->type);
    if (!name)
        return rc_fail_(sys, RC_ERR_INVALID, "unknown potential type %d",
                        (int)desc->type);
    d = sys->dim;
    memset(&t, 0, sizeof t);
    t.type = (int)desc->type;
    t.i = desc->i;
    t.j = desc->j;
    for (k = 0; k < 3; ++k)
        if (!isfinite(desc->vector[k]))
            return rc_fail_(sys, RC_ERR_INVALID, "%s: vector not finite",
                            name);
    switch (desc->type) {
    case RC_POT_GRAVITY:
        if (!rc_valid_index(sys, desc->i, 1))
            return rc_fail_(sys, RC_ERR_INVALID, "gravity: bad particle %d",
                            desc->i);
        for (k = 0; k < d; ++k)
            t.a[k] = desc->vector[k];
        break;
    case RC_POT_SPRING:
    case RC_POT_ANCHOR:
        if (!isfinite(desc->k) || desc->k < 0.0 ||
            !isfinite(desc->rest_length) || desc->rest_length < 0.0)
            return rc_fail_(sys, RC_ERR_INVALID,
                            "%s: k and rest_length must be finite and >= 0",
                            name);
        if (desc->type == RC_POT_SPRING &&
            (!rc_valid_index(sys, desc->i, 0) ||
             !rc_valid_index(sys, desc->j, 0) || desc->i == desc->j))
            return rc_fail_(sys, RC_ERR_INVALID,
                            "spring: needs two different particles, got %d "
                            "and %d of %d",
                            desc->i, desc->j, sys->n);
        if (desc->type == RC_POT_ANCHOR && !rc_valid_index(sys, desc->i, 1))
            return rc_fail_(sys, RC_ERR_INVALID, "anchor: bad particle %d",
                            desc->i);
        t.a[0] = desc->k;
        t.a[1] = desc->rest_length;
        if (desc->type == RC_POT_ANCHOR)
            for (k = 0; k < d; ++k)
                t.a[2 + k] = desc->vector[k];
        break;
    case RC_POT_LENNARD_JONES:
    case RC_POT_WCA: {
        double sig = desc->sigma, eps = desc->epsilon, rc, t2, t6;
        if (!isfinite(sig) || !(sig > 0.0) || !isfinite(eps) || eps < 0.0)
            return rc_fail_(sys, RC_ERR_INVALID,
                            "%s: sigma must be > 0 and epsilon >= 0", name);
        /* a NaN or negative cutoff would otherwise fall through to the
         * 2.5 sigma default below */
        if (desc->type == RC_POT_LENNARD_JONES &&
            (!isfinite(desc->cutoff) || desc->cutoff < 0.0))
            return rc_fail_(sys, RC_ERR_INVALID,
                            "%s: cutoff must be finite and >= 0 (0 = 2.5 "
                            "sigma), got %g",
                            name, desc->cutoff);
        (void)t2;
        (void)t6;
        rc = rc_pair_potential_form_(desc, &t);
        if (!isfinite(rc))
            return rc_fail_(sys, RC_ERR_INVALID, "%s: cutoff not finite",
                            name);
        break;
    }
    case RC_POT_INVERSE_SQUARE:
    case RC_POT_SEXTIC_WELL:
        if (!isfinite(desc->strength))
            return rc_fail_(sys, RC_ERR_INVALID, "%s: strength not finite",
                            name);
        if (!rc_valid_index(sys, desc->i, 1))
            return rc_fail_(sys, RC_ERR_INVALID, "%s: bad particle %d", name,
                            desc->i);
        t.a[0] = desc->strength;
        for (k = 0; k < d; ++k)
            t.a[1 + k] = desc->vector[k];
        break;
    default:
        return rc_fail_(sys, RC_ERR_INVALID, "unknown potential type");
    }
    if (sys->npot == sys->pot_cap) {
        int cap = sys->pot_cap ? 2 * sys->pot_cap : 8;
        if (rc_grow((void **)&sys->pot, sizeof(rc_k_potential), cap))
            return rc_fail_(sys, RC_ERR_NOMEM, "out of memory");
        sys->pot_cap = cap;
    }
    sys->pot[sys->npot++] = t;
    sys->dirty = 1;
    return RC_OK;
}

static rc_status rc_push_constraint(rc_system *sys, const rc_k_constraint *c)
{
    if (sys->ncon == sys->con_cap) {
        int cap = sys->con_cap ? 2 * sys->con_cap : 16;
        if (rc_grow((void **)&sys->con, sizeof(rc_k_constraint), cap))
            return rc_fail_(sys, RC_ERR_NOMEM, "out of memory");
        sys->con_cap = cap;
    }
    sys->con[sys->ncon++] = *c;
    if (rc_k_constraint_is_equality(c))
        sys->n_eq++;
    sys->dirty = 1;
    return RC_OK;
}

rc_status rc_system_add_constraint(rc_system *sys,
                                   const rc_constraint_desc *desc)
{
    rc_k_constraint c;
    const char *name;
    int d, k, i, j, lo, hi;
    double nn = 0.0;
    if (!sys)
        return RC_ERR_INVALID;
    if (!desc)
        return rc_fail_(sys, RC_ERR_INVALID, "add_constraint: no description");
    name = rc_constraint_type_name(desc->type);
    if (!name)
        return rc_fail_(sys, RC_ERR_INVALID, "unknown constraint type %d",
                        (int)desc->type);
    d = sys->dim;
    memset(&c, 0, sizeof c);
    for (k = 0; k < 3; ++k)
        if (!isfinite(desc->normal[k]) || !isfinite(desc->point[k]))
            return rc_fail_(sys, RC_ERR_INVALID, "%s: vector not finite",
                            name);
    if (!isfinite(desc->offset) || !isfinite(desc->radius) ||
        !isfinite(desc->length))
        return rc_fail_(sys, RC_ERR_INVALID, "%s: number not finite", name);
    switch (desc->type) {
    case RC_CON_NON_OVERLAP:
    case RC_CON_ROD:
        if (desc->type == RC_CON_NON_OVERLAP && desc->i == RC_ALL) {
            rc_status st;
            c.type = RC_K_NON_OVERLAP;
            for (i = 0; i < sys->n; ++i)
                for (j = i + 1; j < sys->n; ++j) {
                    c.i = i;
                    c.j = j;
                    if ((st = rc_push_constraint(sys, &c)) != RC_OK)
                        return st;
                }
            return RC_OK;
        }
        if (!rc_valid_index(sys, desc->i, 0) ||
            !rc_valid_index(sys, desc->j, 0) || desc->i == desc->j)
            return rc_fail_(sys, RC_ERR_INVALID,
                            "%s: needs two different particles, got %d and "
                            "%d of %d",
                            name, desc->i, desc->j, sys->n);
        c.type = desc->type == RC_CON_ROD ? RC_K_ROD : RC_K_NON_OVERLAP;
        c.i = desc->i;
        c.j = desc->j;
        if (desc->type == RC_CON_ROD) {
            double s = 0.0;
            for (k = 0; k < d; ++k) {
                double x = sys->q[c.i * d + k] - sys->q[c.j * d + k];
                s += x * x;
            }
            c.a[3] = desc->length >= 0.0 ? desc->length : sqrt(s);
            if (!(c.a[3] > 0.0))
                return rc_fail_(sys, RC_ERR_INVALID,
                                "rod: length must be > 0 (particles %d and "
                                "%d coincide)",
                                c.i, c.j);
        }
        return rc_push_constraint(sys, &c);
    case RC_CON_WALL:
    case RC_CON_PLANE:
        for (k = 0; k < d; ++k)
            nn += desc->normal[k] * desc->normal[k];
        if (!(nn > 0.0))
            return rc_fail_(sys, RC_ERR_INVALID, "%s: normal must be nonzero",
                            name);
        c.type = desc->type == RC_CON_WALL ? RC_K_WALL : RC_K_PLANE;
        for (k = 0; k < d; ++k)
            c.a[k] = desc->normal[k] / sqrt(nn);
        c.a[3] = desc->offset / sqrt(nn);
        break;
    case RC_CON_CONTAINER:
    case RC_CON_OBSTACLE:
        if (!(desc->radius > 0.0))
            return rc_fail_(sys, RC_ERR_INVALID, "%s: radius must be > 0",
                            name);
        c.type = desc->type == RC_CON_CONTAINER ? RC_K_CONTAINER
                                                : RC_K_OBSTACLE;
        for (k = 0; k < d; ++k)
            c.a[k] = desc->point[k];
        c.a[3] = desc->radius;
        break;
    case RC_CON_PENDULUM:
        c.type = RC_K_PENDULUM;
        for (k = 0; k < d; ++k)
            c.a[k] = desc->point[k];
        c.a[3] = desc->length;
        break;
    default:
        return rc_fail_(sys, RC_ERR_INVALID, "unknown constraint type");
    }
    /* one-particle types: i or every particle */
    if (!rc_valid_index(sys, desc->i, desc->type != RC_CON_PENDULUM))
        return rc_fail_(sys, RC_ERR_INVALID, "%s: bad particle %d of %d",
                        name, desc->i, sys->n);
    lo = desc->i == RC_ALL ? 0 : desc->i;
    hi = desc->i == RC_ALL ? sys->n : desc->i + 1;
    for (i = lo; i < hi; ++i) {
        rc_status st;
        c.i = i;
        if (desc->type == RC_CON_PENDULUM && desc->length < 0.0) {
            double s = 0.0;
            for (k = 0; k < d; ++k) {
                double x = sys->q[i * d + k] - c.a[k];
                s += x * x;
            }
            c.a[3] = sqrt(s);
        }
        if (desc->type == RC_CON_PENDULUM && !(c.a[3] > 0.0))
            return rc_fail_(sys, RC_ERR_INVALID,
                            "pendulum: length must be > 0 (particle %d sits "
                            "on its pivot)",
                            i);
        if ((st = rc_push_constraint(sys, &c)) != RC_OK)
            return st;
    }
    return RC_OK;
}

int rc_system_constraint_count(const rc_system *sys)
{
    return sys ? sys->ncon : 0;
}

rc_status rc_system_set_integrator(rc_system *sys,
                                   const rc_integrator_desc *desc)
{
    if (!sys || !desc)
        return RC_ERR_INVALID;
    if (!rc_method_name(desc->method))
        return rc_fail_(sys, RC_ERR_INVALID, "unknown integrator method %d",
                        (int)desc->method);
    if (!isfinite(desc->dt) || !(desc->dt > 0.0))
        return rc_fail_(sys, RC_ERR_INVALID,
                        "time step dt must be positive and finite (got %g)",
                        desc->dt);
    if (!isfinite(desc->newton_tol) || !(desc->newton_tol > 0.0) ||
        desc->newton_max_iter < 1)
        return rc_fail_(sys, RC_ERR_INVALID,
                        "newton_tol must be > 0 and newton_max_iter >= 1");
    if (!rc_base_name(desc->base) || !rc_reflection_name(desc->reflection) ||
        !rc_energy_name(desc->energy))
        return rc_fail_(sys, RC_ERR_INVALID,
                        "unknown base, reflection or energy choice");
    if (desc->energy == RC_ENERGY_MODIFIED && desc->base != RC_BASE_VERLET)
        return rc_fail_(sys, RC_ERR_INVALID,
                        "energy 'modified' is the Störmer–Verlet modified "
                        "Hamiltonian: it needs base 'verlet'");
    if (!isfinite(desc->eps_g) || desc->eps_g < 0.0 ||
        !isfinite(desc->eps_v) || desc->eps_v < 0.0)
        return rc_fail_(sys, RC_ERR_INVALID,
                        "eps_g and eps_v must be finite and >= 0 (0 = "
                        "automatic)");
    if (desc->max_events < 1)
        return rc_fail_(sys, RC_ERR_INVALID, "max_events must be >= 1");
    if (desc->max_reflection_passes < 1)
        return rc_fail_(sys, RC_ERR_INVALID,
                        "max_reflection_passes must be >= 1");
    if (desc->method == RC_METHOD_AVI) {
        const rc_avi_desc *a = &desc->avi;
        const double v[] = {a->gravity_step, a->spring_step, a->anchor_step,
                            a->pair_step, a->external_step, a->eta1,
                            a->eta_exponent, a->layer_step,
                            a->layer_resolution, a->stiffness_exponent,
                            a->skin};
        size_t k;
        for (k = 0; k < sizeof v / sizeof v[0]; ++k)
            if (!isfinite(v[k]) || v[k] < 0.0)
                return rc_fail_(sys, RC_ERR_INVALID,
                                "avi settings must be finite and >= 0 (0 = "
                                "default)");
        if (a->max_layers < 0 || a->max_layers > 1024)
            return rc_fail_(sys, RC_ERR_INVALID,
                            "avi max_layers must be in 0..1024 (0 = 64)");
    }
    sys->integ = *desc;
    sys->have_integrator = 1;
    sys->dirty = 1;
    return RC_OK;
}

rc_status rc_system_set_threads(rc_system *sys, int threads)
{
    if (!sys)
        return RC_ERR_INVALID;
    if (threads < 0)
        return rc_fail_(sys, RC_ERR_INVALID, "threads must be >= 0, got %d",
                        threads);
    sys->threads = threads;
    return RC_OK;
}

int rc_system_dimension(const rc_system *sys) { return sys ? sys->dim : 0; }
int rc_system_count(const rc_system *sys) { return sys ? sys->n : 0; }
double rc_system_time(const rc_system *sys) { return sys ? sys->time : 0.0; }
long rc_system_steps_taken(const rc_system *sys)
{
    return sys ? sys->steps : 0;
}

rc_status rc_system_get_state(const rc_system *sys, double *q, double *p)
{
    size_t bytes;
    if (!sys)
        return RC_ERR_INVALID;
    bytes = sizeof(double) * (size_t)sys->n * (size_t)sys->dim;
    if (q && sys->n)
        memcpy(q, sys->q, bytes);
    if (p && sys->n)
        memcpy(p, sys->p, bytes);
    return RC_OK;
}

rc_status rc_system_set_state(rc_system *sys, const double *q, const double *p)
{
    int N;
    if (!sys)
        return RC_ERR_INVALID;
    N = sys->n * sys->dim;
    if ((q && !rc_all_finite(N, q)) || (p && !rc_all_finite(N, p)))
        return rc_fail_(sys, RC_ERR_INVALID, "state must be finite");
    if (q && N)
        memcpy(sys->q, q, sizeof(double) * (size_t)N);
    if (p && N)
        memcpy(sys->p, p, sizeof(double) * (size_t)N);
    return RC_OK;
}

rc_status rc_system_get_particles(const rc_system *sys, double *mass,
                                  double *radius)
{
    if (!sys)
        return RC_ERR_INVALID;
    if (mass && sys->n)
        memcpy(mass, sys->mass, sizeof(double) * (size_t)sys->n);
    if (radius && sys->n)
        memcpy(radius, sys->radius, sizeof(double) * (size_t)sys->n);
    return RC_OK;
}

rc_k_model rc_system_model_(const rc_system *sys)
{
    rc_k_model m;
    m.dim = sys->dim;
    m.n = sys->n;
    m.npot = sys->npot;
    m.mass = sys->mass;
    m.inv_mass = sys->inv_mass;
    m.radius = sys->radius;
    m.pot = sys->pot;
    return m;
}

rc_status rc_system_prepare_(rc_system *sys)
{
    long N;
    rc_status st;
    if (!sys->dirty && sys->scratch_n == sys->n && sys->grad)
        return RC_OK;
    rc_free_scratch(sys);
    N = (long)sys->n * sys->dim;
    if (N == 0)
        N = 1;
    sys->grad = (double *)calloc((size_t)N, sizeof(double));
    sys->work = (double *)calloc((size_t)N * 4, sizeof(double));
    sys->piv = (int *)calloc((size_t)N, sizeof(int));
    sys->per_particle = (double *)calloc((size_t)(sys->n + 1), sizeof(double));
    /* The dense Newton matrix is only needed by implicit methods. */
    if (sys->integ.method == RC_METHOD_MIDPOINT)
        sys->jac = (double *)calloc((size_t)(N * N), sizeof(double));
    sys->mass_c = (double *)calloc((size_t)N * 2, sizeof(double));
    if (!sys->grad || !sys->work || !sys->piv || !sys->per_particle ||
        !sys->mass_c ||
        (sys->integ.method == RC_METHOD_MIDPOINT && !sys->jac)) {
        rc_free_scratch(sys);
        return rc_fail_(sys, RC_ERR_NOMEM,
                        "out of memory sizing scratch for %d particles",
                        sys->n);
    }
    sys->inv_mass_c = sys->mass_c + N;
    {
        long i;
        for (i = 0; i < (long)sys->n * sys->dim; ++i) {
            sys->mass_c[i] = sys->mass[i / sys->dim];
            sys->inv_mass_c[i] = sys->inv_mass[i / sys->dim];
        }
    }
    if ((st = rc_gvi_prepare_(sys)) != RC_OK) {
        rc_free_scratch(sys);
        return st;
    }
    sys->scratch_n = sys->n;
    sys->dirty = 0;
    return RC_OK;
}

rc_status rc_system_potential(rc_system *sys, const double *q, double *energy,
                              double *grad)
{
    rc_status st;
    rc_k_model m;
    if (!sys || !q)
        return RC_ERR_INVALID;
    if ((st = rc_system_prepare_(sys)) != RC_OK)
        return st;
    m = rc_system_model_(sys);
    if (energy)
        *energy = rc_cpu_energy(m, q, sys->per_particle, sys->threads);
    if (grad)
        rc_cpu_gradient(m, q, grad, sys->threads);
    return RC_OK;
}

rc_status rc_system_hessian_vector(rc_system *sys, const double *q,
                                   const double *u, double *out)
{
    if (!sys || !q || !u || !out)
        return RC_ERR_INVALID;
    rc_cpu_hessian_vector(rc_system_model_(sys), q, u, out, sys->threads);
    return RC_OK;
}

rc_status rc_system_step(rc_system *sys, long steps)
{
    rc_status st = RC_OK;
    long s;
    if (!sys)
        return RC_ERR_INVALID;
    if (steps < 0)
        return rc_fail_(sys, RC_ERR_INVALID, "steps must be >= 0, got %ld",
                        steps);
    if (!sys->have_integrator)
        return rc_fail_(sys, RC_ERR_STATE,
                        "no integrator set: call rc_system_set_integrator");
    if (sys->ncon > 0 && !rc_method_uses_constraints_(sys->integ.method))
        return rc_fail_(sys, RC_ERR_INVALID,
                        "method %s ignores constraints; this system has %d "
                        "constraint terms: use method gvi",
                        rc_method_name(sys->integ.method), sys->ncon);

    if ((st = rc_system_prepare_(sys)) != RC_OK)
        return st;
    for (s = 0; s < steps; ++s) {
        switch (sys->integ.method) {
        case RC_METHOD_SV:
            st = rc_step_sv_(sys);
            break;
        case RC_METHOD_MIDPOINT:
            st = rc_step_midpoint_(sys);
            break;
        case RC_METHOD_GVI:
            st = rc_step_gvi_(sys);
            break;
        case RC_METHOD_CVA:
        case RC_METHOD_MCVA:
        case RC_METHOD_DIRECT_ENDPOINT:
        case RC_METHOD_DIRECT_MIDPOINT:
            st = rc_step_baseline_(sys);
            break;
        case RC_METHOD_AVI:
            st = rc_step_avi_(sys);
            break;
        default:
            st = rc_fail_(sys, RC_ERR_UNSUPPORTED, "method not available");
            break;
        }
        if (st != RC_OK)
            return st;
        sys->steps++;
        sys->total_reflections += sys->last_reflections;
        /* time = steps * dt, not a running sum, so no rounding drift */
        sys->time = (double)sys->steps * sys->integ.dt;
    }
    return RC_OK;
}

/* H~ of Störmer–Verlet to O(h^4) (DESIGN §2):
 * H + h^2 [ (1/12) v^T Hess V v - (1/24) grad V^T M^-1 grad V ], v = M^-1 p. */
rc_status rc_system_diagnostics(rc_system *sys, rc_diagnostics *out)
{
    rc_status st;
    rc_k_model m;
    int i, k, d, N;
    double kin = 0.0, vhv = 0.0, gmg = 0.0, h;
    double *v, *hv;
    if (!sys || !out)
        return RC_ERR_INVALID;
    if ((st = rc_system_prepare_(sys)) != RC_OK)
        return st;
    memset(out, 0, sizeof *out);
    m = rc_system_model_(sys);
    d = sys->dim;
    N = sys->n * d;
    v = sys->work;      /* work is [4N]; diagnostics use the first two */
    hv = sys->work + N;
    for (i = 0; i < sys->n; ++i)
        for (k = 0; k < d; ++k)
            v[i * d + k] = sys->p[i * d + k] * sys->inv_mass[i];
    rc_k_kinetic_momenta(d, sys->n, sys->inv_mass, sys->q, sys->p, &kin,
                         out->momentum, out->angular_momentum);
    out->potential = rc_cpu_energy(m, sys->q, sys->per_particle, sys->threads);
    /* under avi the hard constraints are penalty layers: their energy is
     * part of the conserved H */
    if (sys->have_integrator && sys->integ.method == RC_METHOD_AVI)
        out->potential += rc_avi_layer_energy_(sys, sys->q);
    rc_cpu_gradient(m, sys->q, sys->grad, sys->threads);
    rc_cpu_hessian_vector(m, sys->q, v, hv, sys->threads);
    for (i = 0; i < sys->n; ++i)
        for (k = 0; k < d; ++k) {
            double g = sys->grad[i * d + k];
            gmg += g * g * sys->inv_mass[i];
        }
    for (i = 0; i < N; ++i)
        vhv += v[i] * hv[i];
    h = sys->have_integrator ? sys->integ.dt : 0.0;
    out->step = sys->steps;
    out->time = sys->time;
    out->kinetic = kin;
    out->energy = kin + out->potential;
    out->modified_energy =
        out->energy + h * h * (vhv / 12.0 - gmg / 24.0);
    rc_constraint_extremes_(sys, sys->q, &out->min_gap,
                            &out->max_equality_error);
    out->active_contacts = sys->last_active;
    out->reflections = sys->last_reflections;
    out->solver_iterations = sys->last_iterations;
    out->reflections_total = sys->total_reflections;
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Checkpoints (checkpoint.h): what a step reads besides the model.     */

/* Counters a step reads or a diagnostics row reports, in one record. */
enum { RC_SYS_CTR_STEPS, RC_SYS_CTR_ITER, RC_SYS_CTR_REFL, RC_SYS_CTR_ACTIVE,
       RC_SYS_CTR_TOTAL_REFL, RC_SYS_CTR_OVERRIDE, RC_SYS_CTR_CHECKED,
       RC_SYS_CTR_COUNT };

rc_status rc_system_checkpoint_(rc_system *sys, rc_ckpt_writer *w)
{
    int64_t ctr[RC_SYS_CTR_COUNT];
    size_t N = (size_t)sys->n * (size_t)sys->dim;
    ctr[RC_SYS_CTR_STEPS] = sys->steps;
    ctr[RC_SYS_CTR_ITER] = sys->last_iterations;
    ctr[RC_SYS_CTR_REFL] = sys->last_reflections;
    ctr[RC_SYS_CTR_ACTIVE] = sys->last_active;
    ctr[RC_SYS_CTR_TOTAL_REFL] = sys->total_reflections;
    /* the slot of MCVA's reflection-energy override, which no longer
     * outlives a step (rc_k_cva_step): always -1, kept so that the
     * checkpoint format stays */
    ctr[RC_SYS_CTR_OVERRIDE] = -1;
    ctr[RC_SYS_CTR_CHECKED] = sys->gvi ? sys->gvi->initial_checked : 0;
    rc_ckpt_put(w, "SYSCTR", ctr, sizeof ctr);
    rc_ckpt_put(w, "SYSQ", sys->q, sizeof(double) * N);
    rc_ckpt_put(w, "SYSP", sys->p, sizeof(double) * N);
    return RC_OK;
}

rc_status rc_system_restore_(rc_system *sys, const rc_ckpt *c, rc_error *err)
{
    int64_t ctr[RC_SYS_CTR_COUNT];
    size_t N = (size_t)sys->n * (size_t)sys->dim;
    rc_status st;
    /* The scratch, and the scales GVI takes from the state it is sized
     * on (length and speed scales, eps_g and eps_v, the linearization
     * point), are made from the initial state, as in the run that wrote
     * the checkpoint; only then does the state move to the checkpoint's. */
    if ((st = rc_system_prepare_(sys)) != RC_OK) {
        err->status = st;
        snprintf(err->message, sizeof err->message, "%s", sys->msg);
        return st;
    }
    if ((st = rc_ckpt_get(c, "SYSCTR", ctr, sizeof ctr, err)) != RC_OK ||
        (st = rc_ckpt_get(c, "SYSQ", sys->q, sizeof(double) * N, err)) !=
            RC_OK ||
        (st = rc_ckpt_get(c, "SYSP", sys->p, sizeof(double) * N, err)) !=
            RC_OK)
        return st;
    sys->steps = (long)ctr[RC_SYS_CTR_STEPS];
    sys->time = (double)sys->steps * (sys->have_integrator ? sys->integ.dt : 0.0);
    sys->last_iterations = (int)ctr[RC_SYS_CTR_ITER];
    sys->last_reflections = (int)ctr[RC_SYS_CTR_REFL];
    sys->last_active = (int)ctr[RC_SYS_CTR_ACTIVE];
    sys->total_reflections = (long)ctr[RC_SYS_CTR_TOTAL_REFL];
    if (sys->gvi) {
        sys->gvi->initial_checked = (int)ctr[RC_SYS_CTR_CHECKED];
    }
    return RC_OK;
}

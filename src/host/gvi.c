/* GVI: Kaufman & Pai's generalized variational integrator (seed 000,
 * Algorithm 1, with the bilateral extension of §7.2), DESIGN §3.
 *
 * One step from (q, p):
 *   1. predictor q^p: the unconstrained base step (eq. 50);
 *   2. extended active set A = {g(q^p) <= 0} u {g(q) <= eps_g};
 *   3. reflection of p against A at q (Algorithm 2 or 3), with the
 *      gradients projected on the equality manifold's cotangent space
 *      (eq. 47) and the metric of the conserved energy;
 *   4. smooth set S = {k in A : g_k(q) <= eps_g, |grad g_k . M^-1 p| <=
 *      eps_v};
 *   5. position update D1 Ld(q,x) + p + G_S(q) lam + F(q) nu = 0,
 *      0 <= lam _|_ g_S(x) >= 0, f(x) = 0 (eq. 48): Newton on (x, lam, nu)
 *      inside an active-set loop for the complementarity;
 *   6. momentum update p' = D2 Ld(q,x) + G_S'(x) mu + F(x) xi with
 *      G_S'(x)^T M^-1 p' = 0 for the members of S still active and
 *      F(x)^T M^-1 p' = 0 (eq. 49; RATTLE's velocity projection).
 *
 * Conventions: constraint gradients point into the admissible set, so a
 * positive multiplier pushes a particle away from the boundary.  The
 * discrete Lagrangians are the Verlet (eq. 52) and midpoint (eq. 51)
 * quadratures of L = 1/2 v^T M v - V(q):
 *   Verlet:   D1 Ld = -M (x-q)/h - h/2 grad V(q),
 *             D2 Ld =  M (x-q)/h - h/2 grad V(x);
 *   midpoint: D1 Ld = -M (x-q)/h - h/2 grad V((q+x)/2),
 *             D2 Ld =  M (x-q)/h - h/2 grad V((q+x)/2).
 * Dense linear algebra throughout: this is the small-system path (a few
 * hundred coordinates); large systems use islands (DESIGN §6).
 *
 * Three refinements of Algorithm 1, on unless integrator.seed_exact is
 * set; each was added for a failure measured on the seed's examples:
 *   R1. Equality constraints are part of the predictor (they are "active
 *       at all times", §7.2).  The free drift misses contacts that a rod
 *       or pendulum swings a sphere into: LJ chain overlaps of 2e-3
 *       (0.7 % of a radius) without it, none with it.
 *   R2. The extended set is closed under the reflected predictor: after
 *       a reflection the predictor is re-evaluated with the new momenta
 *       and terms it now finds violated join A, until none does.  An
 *       impulse passed along a row (Newton's cradle) otherwise reaches a
 *       neighbour a hair beyond eps_g one step late, after an overlap of
 *       |v| h (1e-2 at dt = 5e-3).  Likewise a term that the position
 *       update ends up violating joins A and the step is redone from the
 *       reflection (spring and sphere: an overlap of 1.2e-3 otherwise).
 *   R3. A term of A that the reflected predictor still finds violated
 *       cannot be resolved by a reflection in this step (the force, not
 *       the velocity, drives it through), so it joins S: the position
 *       update's complementarity keeps it from passing through, and if it
 *       ends held (multiplier > 0) the momentum update removes its normal
 *       speed as for a resting contact.  Without it a particle pressed
 *       onto a curved wall chatters outside it (spring and sphere at
 *       dt = 0.5: penetration 0.057 and a 19 % energy drift; with it, no
 *       penetration and 2.6 %). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gvi_impl.h"

/* The step itself is the kernel body of src/kernels/rc_gvi.h, shared
 * with the ensemble batch engine and the GPU; this file sizes its
 * scratch, builds its view of the system and words its failures. */

rc_k_gvi rc_gvi_view_(const rc_system *sys)
{
    const struct rc_gvi_work *w = sys->gvi;
    rc_k_gvi g;
    memset(&g, 0, sizeof g);
    g.m = rc_system_model_(sys);
    g.con = sys->con;
    g.ncon = sys->ncon;
    g.N = sys->n * sys->dim;
    g.mass_c = sys->mass_c;
    g.inv_mass_c = sys->inv_mass_c;
    g.h = sys->integ.dt;
    g.newton_tol = sys->integ.newton_tol;
    g.newton_max_iter = sys->integ.newton_max_iter;
    g.max_passes = sys->integ.max_reflection_passes;
    g.eps_g = sys->eps_g;
    g.eps_v = sys->eps_v;
    g.moreau = sys->integ.reflection == RC_REFLECT_MOREAU;
    g.seed_exact = sys->integ.seed_exact;
    g.max_events = sys->integ.max_events;
    rc_gvi_view_method_(&g, &sys->integ, sys->integ.method);
    if (!w) /* constraint values only (rc_system_constraint_value) */
        return g;
    g.ineq = w->ineq;
    g.eq = w->eq;
    g.nineq = w->nineq;
    g.neq = w->neq;
    g.mmax = w->neq + w->N;
    g.q0 = w->linearized ? w->q0 : NULL;
    return g;
}

void rc_gvi_view_method_(rc_k_gvi *g, const rc_integrator_desc *integ,
                         rc_method method)
{
    g->midpoint = integ->base == RC_BASE_MIDPOINT;
    g->colmode = RC_COLS_AT_Q;
    g->modified = integ->energy == RC_ENERGY_MODIFIED;
    switch (method) {
    case RC_METHOD_CVA:
    case RC_METHOD_MCVA:
        /* collision Verlet is Störmer–Verlet based; CVA's reflections
         * conserve H, MCVA's H~ */
        g->method = method == RC_METHOD_CVA ? RC_K_METHOD_CVA
                                            : RC_K_METHOD_MCVA;
        g->midpoint = 0;
        g->modified = method == RC_METHOD_MCVA;
        break;
    case RC_METHOD_DIRECT_ENDPOINT:
    case RC_METHOD_DIRECT_MIDPOINT:
        /* Seed 000 App. B.1.1: implicit midpoint with the constraint
         * force at the end point or at the midpoint. */
        g->method = method == RC_METHOD_DIRECT_ENDPOINT
                        ? RC_K_METHOD_DIRECT_ENDPOINT
                        : RC_K_METHOD_DIRECT_MIDPOINT;
        g->midpoint = 1;
        g->colmode = method == RC_METHOD_DIRECT_ENDPOINT ? RC_COLS_AT_X
                                                         : RC_COLS_AT_MID;
        break;
    default:
        g->method = RC_K_METHOD_GVI;
        /* With V linear in q (gravity only), V((q+x)/2) = (V(q) + V(x))/2:
         * the midpoint discrete Lagrangian (eq. 51) is the Verlet one
         * (eq. 52), the same function, so the step solves the same
         * equations.  The Verlet form solves them with Newton on the
         * multipliers alone (SHAKE, m x m) where the midpoint form's
         * Newton is (N + m) x (N + m) with a Hessian, and ensemble
         * members take the SHAKE lanes (Newton's cradle).  The results
         * differ from the (N + m) solve's by round-off
         * (tests/test_gvi_linear.c). */
        if (g->midpoint && rc_k_model_linear(&g->m))
            g->midpoint = 0;
        break;
    }
}

rc_status rc_gvi_fail_(rc_system *sys, int code)
{
    const char *meth = rc_method_name(sys->integ.method);
    long step = sys->steps + 1;
    double t = sys->time;
    int det = sys->gvi ? sys->gvi->k.fail_detail : 0;
    switch (code) {
    case RC_K_GVI_OK:
        return RC_OK;
    case RC_K_GVI_EQ_SINGULAR:
        return rc_fail_(sys, RC_ERR_CONSTRAINT,
                        "equality constraints are redundant or degenerate "
                        "at step %ld (F^T M^-1 F is singular)",
                        step);
    case RC_K_GVI_REFLECT_PASSES:
        return rc_fail_(sys, RC_ERR_NOT_CONVERGED,
                        "generalized reflection did not terminate in %d "
                        "passes at step %ld (t = %g)",
                        det, step, t);
    case RC_K_GVI_NNLS_CAP:
    case RC_K_GVI_NNLS_BREAKDOWN:
        return rc_fail_(sys, RC_ERR_NOT_CONVERGED,
                        "reflection NNLS %s (%d constraints) at step %ld "
                        "(t = %g)",
                        code == RC_K_GVI_NNLS_CAP ? "hit its iteration cap"
                                                  : "broke down numerically",
                        det, step, t);
    case RC_K_GVI_NEWTON:
        return rc_fail_(sys, RC_ERR_NOT_CONVERGED,
                        "%s position update: Newton did not converge in %d "
                        "iterations at step %ld (t = %g); reduce dt",
                        meth, sys->integ.newton_max_iter, step, t);
    case RC_K_GVI_JAC_SINGULAR:
        return rc_fail_(sys, RC_ERR_CONSTRAINT,
                        "%s position update: singular constraint Jacobian "
                        "at step %ld (t = %g); contacts and equalities are "
                        "degenerate",
                        meth, step, t);
    case RC_K_GVI_NEWTON_SINGULAR:
        return rc_fail_(sys, RC_ERR_CONSTRAINT,
                        "%s position update: singular Newton matrix at step "
                        "%ld (t = %g); contacts and equalities are "
                        "degenerate",
                        meth, step, t);
    case RC_K_GVI_TOO_MANY:
        return rc_fail_(sys, RC_ERR_CONSTRAINT,
                        "%d simultaneous smooth contacts and equalities "
                        "exceed the %d coordinates at step %ld",
                        det, sys->gvi ? sys->gvi->N : 0, step);
    case RC_K_GVI_COMPLEMENTARITY:
        return rc_fail_(sys, RC_ERR_CONSTRAINT,
                        "%s position update: the contact complementarity "
                        "did not settle in %d active-set changes at step "
                        "%ld (t = %g)",
                        meth, det, step, t);
    case RC_K_GVI_MOMENTUM_SINGULAR:
        return rc_fail_(sys, RC_ERR_CONSTRAINT,
                        "GVI momentum update: singular constraint Gram "
                        "matrix at step %ld (t = %g)",
                        step, t);
    case RC_K_GVI_ZENO:
        return rc_fail_(sys, RC_ERR_ZENO,
                        "%s: more than %d events in step %ld (t = %g): "
                        "Zeno behaviour; reduce dt or raise "
                        "integrator.max_events",
                        meth, det, step, t);
    case RC_K_GVI_NONFINITE:
        return rc_fail_(sys, RC_ERR_NONFINITE,
                        "state became non-finite at step %ld (t = %g)", step,
                        t + sys->integ.dt);
    default:
        return rc_fail_(sys, RC_ERR_STATE, "internal: GVI failure code %d", code);
    }
}

/* ------------------------------------------------------------------ */
/* Constraint evaluation for the baselines and the public tools.       */

double rc_con_value(const rc_system *sys, int k, const double *q)
{
    rc_k_gvi g = rc_gvi_view_(sys);
    return rc_k_gvi_value(&g, k, q);
}

double rc_con_column(const rc_system *sys, int k, const double *q,
                     double *col)
{
    rc_k_gvi g = rc_gvi_view_(sys);
    return rc_k_gvi_column(&g, k, q, col);
}

double rc_con_speed(const rc_system *sys, int k, const double *q,
                    const double *p)
{
    rc_k_gvi g = rc_gvi_view_(sys);
    return rc_k_gvi_speed(&g, k, q, p);
}

void rc_constraint_extremes_(const rc_system *sys, const double *q,
                             double *min_gap, double *max_eq)
{
    int k;
    *min_gap = INFINITY;
    *max_eq = 0.0;
    for (k = 0; k < sys->ncon; ++k) {
        /* the true constraint, also when the integrator linearizes */
        int idx[2];
        double grad[2][3], v;
        rc_k_constraint_eval(&sys->con[k], sys->dim, q, sys->radius, &v, idx,
                             grad);
        if (rc_k_constraint_is_equality(&sys->con[k]))
            *max_eq = fmax(*max_eq, fabs(v));
        else
            *min_gap = fmin(*min_gap, v);
    }
}

/* ------------------------------------------------------------------ */
/* Scratch.                                                            */

void rc_gvi_free_(rc_system *sys)
{
    struct rc_gvi_work *w = sys->gvi;
    if (!w)
        return;
    free(w->block);
    free(w->iblock);
    free(w->ineq);
    free(w->q0);
    free(w);
    sys->gvi = NULL;
}

#define RC_ALLOC(ptr, type, count)                                          \
    do {                                                                    \
        (ptr) = (type *)calloc((size_t)((count) > 0 ? (count) : 1),         \
                               sizeof(type));                               \
        if (!(ptr))                                                         \
            goto nomem;                                                     \
    } while (0)

rc_status rc_gvi_prepare_(rc_system *sys)
{
    struct rc_gvi_work *w;
    rc_k_gvi g;
    int N = sys->n * sys->dim, nc = sys->ncon, k;
    if (!sys->have_integrator || !rc_method_uses_constraints_(sys->integ.method))
        return RC_OK;
    w = (struct rc_gvi_work *)calloc(1, sizeof *w);
    if (!w)
        return rc_fail_(sys, RC_ERR_NOMEM, "out of memory");
    sys->gvi = w;
    w->N = N;
    w->nc = nc;
    w->neq = sys->n_eq;
    RC_ALLOC(w->block, double, rc_k_gvi_work_doubles(N, nc, sys->n_eq));
    RC_ALLOC(w->iblock, int, rc_k_gvi_work_ints(N, nc, sys->n_eq));
    rc_k_gvi_work_carve(&w->k, N, nc, sys->n_eq, w->block, w->iblock);
    RC_ALLOC(w->q0, double, N);
    memcpy(w->q0, sys->q, sizeof(double) * (size_t)N);
    RC_ALLOC(w->ineq, int, 2 * nc);
    w->eq = w->ineq + nc;
    w->nineq = 0;
    {
        int ne = 0;
        for (k = 0; k < nc; ++k) {
            if (rc_k_constraint_is_equality(&sys->con[k]))
                w->eq[ne++] = k;
            else
                w->ineq[w->nineq++] = k;
        }
    }
    w->linearized = sys->integ.method == RC_METHOD_GVI && sys->integ.linearized;
    g = rc_gvi_view_(sys);
    w->length_scale = rc_k_gvi_length_scale(&g, sys->q);
    w->speed_scale =
        rc_k_gvi_speed_scale(&g, sys->q, sys->p, w->length_scale, sys->grad);
    sys->eps_g = sys->integ.eps_g > 0.0 ? sys->integ.eps_g
                                        : 1e-9 * w->length_scale;
    sys->eps_v = sys->integ.eps_v > 0.0 ? sys->integ.eps_v
                                        : 1e-8 * w->speed_scale;
    return RC_OK;
nomem:
    rc_gvi_free_(sys);
    return rc_fail_(sys, RC_ERR_NOMEM,
                    "out of memory sizing GVI scratch (%d coordinates, %d "
                    "constraint terms)",
                    N, nc);
}

/* ------------------------------------------------------------------ */
/* The reflection (rc_system_reflect), and the step.                    */

rc_status rc_gvi_reflect(rc_system *sys, const double *q, double *p,
                         const int *set, int m, int max_passes,
                         int *passes_out)
{
    rc_k_gvi g = rc_gvi_view_(sys);
    return rc_gvi_fail_(sys, rc_k_gvi_reflect(&g, &sys->gvi->k, q, p, set, m,
                                              max_passes, passes_out));
}

/* The message of a failed initial check (rc_k_gvi_check_initial). */
rc_status rc_gvi_initial_message_(rc_system *sys, int code, int k,
                                  double amount, char *buf, size_t size)
{
    const rc_k_constraint *c = &sys->con[k];
    /* kernel type codes equal the public rc_constraint_type values */
    const char *name = rc_constraint_type_name((rc_constraint_type)c->type);
    char who[64];
    if (c->type == RC_K_NON_OVERLAP || c->type == RC_K_ROD)
        snprintf(who, sizeof who, "particles %d and %d", c->i, c->j);
    else
        snprintf(who, sizeof who, "particle %d", c->i);
    if (code == RC_K_GVI_INITIAL_SPEED)
        snprintf(buf, size,
                 "%s constraint (term %d) on %s: the initial momentum moves "
                 "off it (speed %g along its normal)",
                 name, k, who, amount);
    else
        snprintf(buf, size,
                 "%s constraint (term %d) on %s is violated by %g at the "
                 "start",
                 name, k, who, amount);
    return RC_ERR_INVALID;
}

rc_status rc_gvi_check_initial(rc_system *sys)
{
    rc_k_gvi g = rc_gvi_view_(sys);
    int k = 0, code;
    double amount = 0.0;
    char msg[300];
    code = rc_k_gvi_check_initial(&g, sys->q, sys->p, sys->gvi->length_scale,
                                  sys->gvi->speed_scale, &k, &amount);
    sys->start_term = code == RC_K_GVI_OK ? -1 : k;
    if (code == RC_K_GVI_OK)
        return RC_OK;
    rc_gvi_initial_message_(sys, code, k, amount, msg, sizeof msg);
    return rc_fail_(sys, RC_ERR_INVALID, "%s", msg);
}

rc_status rc_step_gvi_(rc_system *sys)
{
    struct rc_gvi_work *w = sys->gvi;
    rc_k_gvi g;
    rc_k_gvi_step_info info;
    rc_status st;
    int code;

    if (!w)
        return rc_fail_(sys, RC_ERR_STATE, "GVI scratch not prepared");
    if (!w->initial_checked) {
        if ((st = rc_gvi_check_initial(sys)) != RC_OK)
            return st;
        w->initial_checked = 1;
    }
    g = rc_gvi_view_(sys);
    code = rc_k_gvi_step(&g, &w->k, sys->q, sys->p, &info);
    if (code != RC_K_GVI_OK)
        return rc_gvi_fail_(sys, code);
    return rc_gvi_commit(sys, info.active, info.reflections, info.iterations);
}

/* End of a step: the new state (w->k.x, w->k.y) becomes the state if it is
 * finite (otherwise the state stays that of the last step), and the
 * step's counters are recorded. */
rc_status rc_gvi_commit(rc_system *sys, int active, int reflections,
                        int iterations)
{
    struct rc_gvi_work *w = sys->gvi;
    int i, N = w->N;
    for (i = 0; i < N; ++i)
        if (!isfinite(w->k.x[i]) || !isfinite(w->k.y[i]))
            return rc_gvi_fail_(sys, RC_K_GVI_NONFINITE);
    memcpy(sys->q, w->k.x, sizeof(double) * (size_t)N);
    memcpy(sys->p, w->k.y, sizeof(double) * (size_t)N);
    sys->last_active = active;
    sys->last_reflections = reflections;
    sys->last_iterations = iterations;
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Public tools for tests.                                              */

rc_status rc_system_check_constraints(rc_system *sys)
{
    rc_status st;
    if (!sys)
        return RC_ERR_INVALID;
    if (sys->ncon == 0)
        return RC_OK;
    if (!sys->have_integrator ||
        !rc_method_uses_constraints_(sys->integ.method))
        return rc_fail_(sys, RC_ERR_INVALID,
                        "constraints need a constraint method (gvi, cva, "
                        "mcva, direct-endpoint, direct-midpoint)");
    if ((st = rc_system_prepare_(sys)) != RC_OK)
        return st;
    if ((st = rc_gvi_check_initial(sys)) != RC_OK)
        return st;
    /* avi's penalty layers need every gap positive at the start */
    return sys->integ.method == RC_METHOD_AVI ? rc_avi_check_initial_(sys)
                                              : RC_OK;
}

rc_status rc_system_tolerances(rc_system *sys, double *eps_g, double *eps_v)
{
    rc_status st;
    if (!sys)
        return RC_ERR_INVALID;
    if ((st = rc_system_prepare_(sys)) != RC_OK)
        return st;
    if (!sys->gvi)
        return rc_fail_(sys, RC_ERR_STATE,
                        "tolerances exist for the constraint methods only");
    if (eps_g)
        *eps_g = sys->eps_g;
    if (eps_v)
        *eps_v = sys->eps_v;
    return RC_OK;
}

rc_status rc_system_reflect(rc_system *sys, const int *set, int m,
                            int max_passes, int *passes)
{
    rc_status st;
    int a, dummy;
    if (!sys || (m > 0 && !set) || m < 0)
        return RC_ERR_INVALID;
    if ((st = rc_system_prepare_(sys)) != RC_OK)
        return st;
    if (!sys->gvi)
        return rc_fail_(sys, RC_ERR_STATE,
                        "reflections need a constraint method (gvi, cva, "
                        "mcva, direct-*)");
    for (a = 0; a < m; ++a)
        if (set[a] < 0 || set[a] >= sys->ncon ||
            rc_k_constraint_is_equality(&sys->con[set[a]]))
            return rc_fail_(sys, RC_ERR_INVALID,
                            "reflection set entry %d is not an inequality "
                            "constraint term",
                            set[a]);
    return rc_gvi_reflect(sys, sys->q, sys->p, set, m,
                          max_passes > 0 ? max_passes
                                         : sys->integ.max_reflection_passes,
                          passes ? passes : &dummy);
}

rc_status rc_system_reflection_energy(rc_system *sys, double *energy)
{
    rc_diagnostics dg;
    rc_status st;
    if (!sys || !energy)
        return RC_ERR_INVALID;
    if ((st = rc_system_diagnostics(sys, &dg)) != RC_OK)
        return st;
    /* the energy the method's reflections conserve (CVA always H, MCVA
     * always H~, the others the scenario's choice) */
    *energy = rc_gvi_view_(sys).modified ? dg.modified_energy : dg.energy;
    return RC_OK;
}

rc_status rc_system_constraint_value(rc_system *sys, int k, double *value,
                                     double *normal_speed)
{
    if (!sys || k < 0 || k >= sys->ncon)
        return RC_ERR_INVALID;
    if (value)
        *value = rc_con_value(sys, k, sys->q);
    if (normal_speed)
        *normal_speed = rc_con_speed(sys, k, sys->q, sys->p);
    return RC_OK;
}

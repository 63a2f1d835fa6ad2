/* Private layout of rc_system and the helpers the host files share. */
#ifndef RC_SYSTEM_IMPL_H
#define RC_SYSTEM_IMPL_H

#include "ricochet/scenario.h"
#include "ricochet/system.h"
#include "../kernels/rc_constraint.h"
#include "../kernels/rc_gvi.h"
#include "../kernels/rc_potential.h"

struct rc_system {
    int dim;
    int n, cap;         /* particles in use / allocated */
    double *mass;       /* [cap] */
    double *inv_mass;   /* [cap] */
    double *radius;     /* [cap] */
    double *q, *p;      /* [cap*dim], particle-major */

    rc_k_potential *pot; /* [npot] kernel-form potential terms */
    int npot, pot_cap;

    rc_k_constraint *con; /* [ncon] kernel-form constraint terms */
    int ncon, con_cap;
    int n_eq;           /* how many of them are equalities */

    rc_integrator_desc integ;
    int have_integrator;
    int threads;        /* 0 = OpenMP default */

    double time;
    long steps;

    /* Counters of the last step, reported by rc_system_diagnostics. */
    int last_iterations;
    int last_reflections;
    int last_active;
    long total_reflections; /* all reflection passes so far */

    /* Scratch sized by rc_system_prepare_(), never inside the step loop. */
    int scratch_n;      /* n the scratch was sized for */
    int dirty;          /* model changed since scratch was sized */
    double *grad;       /* [n*dim] */
    double *work;       /* [n*dim] x 4: midpoint x, residual, temporaries */
    double *jac;        /* [(n*dim)^2] midpoint Newton matrix */
    int *piv;           /* [n*dim] */
    double *per_particle; /* [n] energy shares summed in index order */
    double *mass_c, *inv_mass_c; /* [n*dim] masses per coordinate, so
                                    hot loops need no index division */

    /* GVI scratch and scales (src/host/gvi.c), sized with the rest. */
    struct rc_gvi_work *gvi;
    double eps_g, eps_v; /* tolerances in force (automatic or given) */

    struct rc_avi_work *avi; /* method avi (src/host/avi.c); NULL else */

    int start_term;     /* the term rc_gvi_check_initial found violated
                           (-1: none), for the place of the error */
    char msg[512];
};

/* Record a failure message on sys and return status. */
rc_status rc_fail_(rc_system *sys, rc_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

rc_k_model rc_system_model_(const rc_system *sys);

/* Kernel form of a Lennard-Jones or WCA term (epsilon, sigma^2, cutoff^2,
 * the shift that makes V(cutoff) = 0); returns the cutoff. */
double rc_pair_potential_form_(const rc_potential_desc *desc,
                               rc_k_potential *t);

/* Size scratch arrays for the current particle count (idempotent). */
rc_status rc_system_prepare_(rc_system *sys);

/* CPU loops over particles (OpenMP); each calls the kernel body. */
void rc_cpu_gradient(const rc_k_model m, const double *q, double *grad,
                     int threads);
double rc_cpu_energy(const rc_k_model m, const double *q, double *share,
                     int threads);
void rc_cpu_hessian_vector(const rc_k_model m, const double *q,
                           const double *u, double *out, int threads);

/* Base integrator steps (src/host/integrators.c). */
rc_status rc_step_sv_(rc_system *sys);
rc_status rc_step_midpoint_(rc_system *sys);

/* The stopping rule of every Newton solve (rc_gvi.h). */
static inline int rc_newton_converged_(double dmax, double prev, double xmax,
                                       double tol)
{
    return rc_k_newton_converged(dmax, prev, xmax, tol);
}

/* Methods that take constraints (and need the GVI scratch). */
static inline int rc_method_uses_constraints_(rc_method m)
{
    return m == RC_METHOD_GVI || m == RC_METHOD_CVA || m == RC_METHOD_MCVA ||
           m == RC_METHOD_DIRECT_ENDPOINT || m == RC_METHOD_DIRECT_MIDPOINT ||
           m == RC_METHOD_AVI;
}

/* AVI (src/host/avi.c): inequality constraints become penalty layers. */
struct rc_k_layers;
rc_status rc_step_avi_(rc_system *sys);
void rc_avi_free_(rc_system *sys);
void rc_avi_layers_(const rc_system *sys, struct rc_k_layers *L,
                    int *max_layers);
/* RC_OK when every inequality gap is > 0 at the current state; else
 * RC_ERR_INVALID with start_term set to the first term that is not. */
rc_status rc_avi_check_initial_(rc_system *sys);
/* Energy of the penalty layers at q (0 unless the method is avi). */
double rc_avi_layer_energy_(const rc_system *sys, const double *q);

/* Checkpoints (checkpoint.h): the dynamic state and counters of sys;
 * restore sizes the scratch on the state sys was built with (the initial
 * state, as the interrupted run did) before it moves to the saved one. */
struct rc_ckpt_writer;
struct rc_ckpt;
rc_status rc_system_checkpoint_(rc_system *sys, struct rc_ckpt_writer *w);
rc_status rc_system_restore_(rc_system *sys, const struct rc_ckpt *c,
                             rc_error *err);

/* GVI (src/host/gvi.c). */
rc_status rc_gvi_prepare_(rc_system *sys);
void rc_gvi_free_(rc_system *sys);
rc_status rc_step_gvi_(rc_system *sys);
/* Smallest inequality value (+inf if none) and largest |equality| at q. */
void rc_constraint_extremes_(const rc_system *sys, const double *q,
                             double *min_gap, double *max_eq);

#endif

/* Private interface shared by the constrained integrators: GVI
 * (gvi.c) and the baselines (baselines.c: collision Verlet and the
 * direct-substitution methods).  They share the scratch, the view and
 * the wording of the kernel bodies' failures (src/kernels/rc_gvi.h,
 * rc_baselines.h). */
#ifndef RC_GVI_IMPL_H
#define RC_GVI_IMPL_H

#include "system_impl.h"

/* The host side of the GVI scratch: the kernel's per-member scratch
 * (src/kernels/rc_gvi.h) in one allocation, the term lists and scales. */
struct rc_gvi_work {
    rc_k_gvi_work k;     /* kernel scratch, carved from block/iblock */
    double *block;       /* rc_k_gvi_work_doubles(N, nc, neq) */
    int *iblock;         /* rc_k_gvi_work_ints(N, nc, neq) */
    int N;               /* coordinates n*dim */
    int nc;              /* constraint terms */
    int *ineq, *eq;      /* [nc] each: indices of inequalities/equalities */
    int nineq, neq;
    double length_scale, speed_scale; /* set at preparation */
    int linearized; /* GVI with inequalities linearized about q0 */
    double *q0;     /* [N] the configuration when the scratch was sized */
    int initial_checked;
};

/* The kernel's view of sys (cheap: pointers and parameters). */
rc_k_gvi rc_gvi_view_(const rc_system *sys);
/* The fields of view g that follow from the method: the step it takes
 * (g->method), its discrete Lagrangian (midpoint), where its constraint
 * forces act (colmode) and the energy its reflections conserve
 * (modified), the base and energy taken from integ where the method
 * leaves the choice to the scenario.  rc_gvi_view_ sets them for the
 * system's method; the batch engine for a member's own. */
void rc_gvi_view_method_(rc_k_gvi *g, const rc_integrator_desc *integ,
                         rc_method method);
/* The status and message of kernel failure `code` at the current step. */
rc_status rc_gvi_fail_(rc_system *sys, int code);

double rc_con_value(const rc_system *sys, int k, const double *q);
double rc_con_column(const rc_system *sys, int k, const double *q,
                     double *col);
double rc_con_speed(const rc_system *sys, int k, const double *q,
                    const double *p);
rc_status rc_gvi_reflect(rc_system *sys, const double *q, double *p,
                         const int *set, int m, int max_passes,
                         int *passes_out);
rc_status rc_gvi_check_initial(rc_system *sys);
/* Words a failed rc_k_gvi_check_initial (code, term k, amount) into buf;
 * returns RC_ERR_INVALID. */
rc_status rc_gvi_initial_message_(rc_system *sys, int code, int k,
                                  double amount, char *buf, size_t size);
rc_status rc_gvi_commit(rc_system *sys, int active, int reflections,
                        int iterations);


/* A baseline's step (baselines.c): CVA, MCVA, direct-endpoint or
 * direct-midpoint, the kernel body of src/kernels/rc_baselines.h. */
rc_status rc_step_baseline_(rc_system *sys);

#endif

/* Private interface shared by the constrained integrators: GVI
 * (gvi.c) and the baselines (baselines.c: collision Verlet and the
 * direct-substitution methods).  They share the scratch, the constraint
 * evaluation, the reflection and the constrained Newton solve. */
#ifndef RC_GVI_IMPL_H
#define RC_GVI_IMPL_H

#include "system_impl.h"

/* The host side of the GVI scratch: the kernel's per-member scratch
 * (src/kernels/rc_gvi.h) in one allocation, the term lists and scales,
 * and what the baselines keep between calls.  The pointer fields repeat
 * the kernel scratch's, for the baselines' convenience. */
struct rc_gvi_work {
    rc_k_gvi_work k;     /* kernel scratch, carved from block/iblock */
    double *block;       /* rc_k_gvi_work_doubles(N, nc, neq) */
    int *iblock;         /* rc_k_gvi_work_ints(N, nc, neq) */
    int N;               /* coordinates n*dim */
    int nc;              /* constraint terms */
    int *ineq, *eq;      /* [nc] each: indices of inequalities/equalities */
    int nineq, neq;
    double *qp, *x, *y, *g0, *g1, *t1, *t2, *imp; /* = k's */
    int *setA, *setS;                             /* = k's */
    double length_scale, speed_scale; /* set at preparation */
    int midpoint;   /* the discrete Lagrangian is the midpoint rule */
    int colmode;    /* RC_COLS_* of the current method */
    int linearized; /* GVI with inequalities linearized about q0 */
    double *q0;     /* [N] the configuration when the scratch was sized */
    double *backup; /* [2N] the state at the start of a step (baselines) */
    int energy_override; /* >= 0: rc_energy forced for the next reflection
                            (MCVA's fallback), -1 otherwise */
    int initial_checked;
};

/* The kernel's view of sys (cheap: pointers and parameters). */
rc_k_gvi rc_gvi_view_(const rc_system *sys);
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
rc_status rc_gvi_newton(rc_system *sys, const double *q, const double *p,
                        const int *act, int nact, double *x, int *iters);
rc_status rc_gvi_position(rc_system *sys, const double *q, const double *p,
                          const int *S, int nS, double *x, int *nact_out,
                          int *iters);
rc_status rc_gvi_check_initial(rc_system *sys);
/* Words a failed rc_k_gvi_check_initial (code, term k, amount) into buf;
 * returns RC_ERR_INVALID. */
rc_status rc_gvi_initial_message_(rc_system *sys, int code, int k,
                                  double amount, char *buf, size_t size);
rc_status rc_gvi_commit(rc_system *sys, int active, int reflections,
                        int iterations);
rc_status rc_gvi_momentum(rc_system *sys, const double *q, const double *p,
                          const double *x, const int *act, int nact,
                          double *y);

/* The energy reflections conserve: CVA always H, MCVA always H~, the
 * other methods the scenario's choice. */
static inline rc_energy rc_reflection_energy_(const rc_system *sys)
{
    if (sys->gvi && sys->gvi->energy_override >= 0)
        return (rc_energy)sys->gvi->energy_override;
    if (sys->integ.method == RC_METHOD_CVA)
        return RC_ENERGY_HAMILTONIAN;
    if (sys->integ.method == RC_METHOD_MCVA)
        return RC_ENERGY_MODIFIED;
    return sys->integ.energy;
}

/* Baseline steps (baselines.c). */
rc_status rc_step_cva_(rc_system *sys);
rc_status rc_step_direct_(rc_system *sys);

#endif

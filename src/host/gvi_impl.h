/* Private interface shared by the constrained integrators: GVI
 * (gvi.c) and the baselines (baselines.c: collision Verlet and the
 * direct-substitution methods).  They share the scratch, the constraint
 * evaluation, the reflection and the constrained Newton solve. */
#ifndef RC_GVI_IMPL_H
#define RC_GVI_IMPL_H

#include "system_impl.h"

/* Where the constraint forces of a Newton solve are evaluated. */
enum {
    RC_COLS_AT_Q = 0,   /* at the start q (GVI, eq. 48) */
    RC_COLS_AT_X = 1,   /* at the unknown end point (direct-endpoint) */
    RC_COLS_AT_MID = 2  /* at (q + x)/2 (direct-midpoint) */
};

struct rc_gvi_work {
    int N;          /* coordinates n*dim */
    int nc;         /* constraint terms */
    int mmax;       /* most multipliers in a Newton solve: neq + N */
    double *qp, *x, *y, *g0, *g1, *t0, *t1, *t2; /* [N] each */
    double *val;    /* [nc] values at q */
    double *cols;   /* [N*nc] dense columns (column-major: col c at c*N) */
    double *wcols;  /* [N*nc] W applied to each column */
    double *gram;   /* [nc*nc] */
    double *bvec, *lam; /* [nc] */
    double *nnls_w; /* rc_k_nnls_work_doubles(nc) */
    int *nnls_iw;   /* rc_k_nnls_work_ints(nc) */
    double *F;      /* [N*neq] equality columns at the current q */
    double *ftmf;   /* [neq*neq] F^T M^-1 F, LU-factored in place */
    int *fpiv;      /* [neq] */
    double *jac;    /* [(N+mmax)^2] Newton matrix */
    double *rhs;    /* [N+mmax] */
    int *jpiv;      /* [N+mmax] */
    double *mcols;  /* [N*mmax] columns of the Newton solve */
    int *ineq;      /* [nc] indices of the inequality terms */
    int *eq;        /* [nc] indices of the equality terms */
    int nineq, neq;
    int *setA, *setS, *setV, *active, *inA; /* [nc] */
    int nnls_iterations; /* NNLS active-set iterations of the current step */
    double *mu;     /* [mmax] multipliers of the last solve */
    double *imp;    /* [N] its constraint impulse C mu (columns at q) */
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

/* Base integrators (DESIGN §2): Störmer–Verlet and implicit midpoint.
 * The per-particle arithmetic is in src/kernels/; these drivers order the
 * phases of one step. */
#include <math.h>
#include <string.h>

#include "system_impl.h"
#include "../kernels/rc_dense.h"
#include "../kernels/rc_integrate.h"

static int rc_state_finite(const rc_system *sys)
{
    long k, N = (long)sys->n * sys->dim;
    for (k = 0; k < N; ++k)
        if (!isfinite(sys->q[k]) || !isfinite(sys->p[k]))
            return 0;
    return 1;
}

/* Velocity Verlet: p½ = p − (h/2)∇V(q), q' = q + h M⁻¹ p½,
 * p' = p½ − (h/2)∇V(q').  The gradient at q is recomputed rather than
 * cached so that rc_system_set_state between steps is always honoured. */
rc_status rc_step_sv_(rc_system *sys)
{
    rc_k_model m = rc_system_model_(sys);
    double h = sys->integ.dt;
    int i, d = sys->dim;
    size_t bytes = sizeof(double) * (size_t)sys->n * (size_t)d;
    /* The step updates q and p in place; keep the last completed state
     * in work[0, 2N) so that a failed step can restore it (system.h:
     * "on failure the state is that of the last completed step"). */
    double *q_old = sys->work, *p_old = sys->work + (long)sys->n * d;
    if (bytes) {
        memcpy(q_old, sys->q, bytes);
        memcpy(p_old, sys->p, bytes);
    }
    rc_cpu_gradient(m, sys->q, sys->grad, sys->threads);
    for (i = 0; i < sys->n; ++i) {
        rc_k_kick_particle(d, i, 0.5 * h, sys->grad, sys->p);
        rc_k_drift_particle(d, i, h, sys->inv_mass[i], sys->p, sys->q);
    }
    rc_cpu_gradient(m, sys->q, sys->grad, sys->threads);
    for (i = 0; i < sys->n; ++i)
        rc_k_kick_particle(d, i, 0.5 * h, sys->grad, sys->p);
    sys->last_iterations = 0;
    if (!rc_state_finite(sys)) {
        if (bytes) {
            memcpy(sys->q, q_old, bytes);
            memcpy(sys->p, p_old, bytes);
        }
        return rc_fail_(sys, RC_ERR_NONFINITE,
                        "state became non-finite at step %ld (t = %g); "
                        "the time step is probably too large",
                        sys->steps + 1, sys->time + h);
    }
    return RC_OK;
}

/* Implicit midpoint for H = ½pᵀM⁻¹p + V(q).  With x = (q + q')/2:
 *   F(x) = x − q − (h/2) M⁻¹ p + (h²/4) M⁻¹ ∇V(x) = 0,
 *   q' = 2x − q,   p' = p − h ∇V(x).
 * Newton with the dense Jacobian J = I + (h²/4) M⁻¹ ∇²V(x), assembled
 * column by column from Hessian-vector products, stopped by
 * rc_newton_converged_. */
rc_status rc_step_midpoint_(rc_system *sys)
{
    rc_k_model m = rc_system_model_(sys);
    double h = sys->integ.dt, tol = sys->integ.newton_tol;
    int d = sys->dim, N = sys->n * d;
    int i, c, it, converged = 0, finite = 1;
    double *x = sys->work, *F = sys->work + N, *e = sys->work + 2 * N,
           *col = sys->work + 3 * N;
    double prev = INFINITY;

    if (N == 0)
        return RC_OK;
    /* Predictor: the explicit half step of Störmer–Verlet. */
    rc_cpu_gradient(m, sys->q, sys->grad, sys->threads);
    for (i = 0; i < N; ++i)
        x[i] = sys->q[i] + 0.5 * h * sys->inv_mass_c[i] *
                               (sys->p[i] - 0.5 * h * sys->grad[i]);
    for (it = 1; it <= sys->integ.newton_max_iter; ++it) {
        double dmax = 0.0, xmax = 0.0;
        rc_cpu_gradient(m, x, sys->grad, sys->threads);
        for (i = 0; i < N; ++i) {
            double im = sys->inv_mass_c[i];
            F[i] = -(x[i] - sys->q[i] - 0.5 * h * im * sys->p[i] +
                     0.25 * h * h * im * sys->grad[i]);
        }
        memset(e, 0, sizeof(double) * (size_t)N);
        for (c = 0; c < N; ++c) {
            e[c] = 1.0;
            rc_cpu_hessian_vector(m, x, e, col, sys->threads);
            e[c] = 0.0;
            for (i = 0; i < N; ++i)
                sys->jac[(long)i * N + c] =
                    (i == c ? 1.0 : 0.0) +
                    0.25 * h * h * sys->inv_mass_c[i] * col[i];
        }
        if (rc_k_lu_solve(N, sys->jac, F, sys->piv) != 0) {
            sys->last_iterations = it;
            return rc_fail_(sys, RC_ERR_NOT_CONVERGED,
                            "implicit midpoint: singular Newton matrix at "
                            "step %ld (t = %g)",
                            sys->steps + 1, sys->time);
        }
        for (i = 0; i < N; ++i) {
            x[i] += F[i];
            /* fmax drops NaN, so test finiteness element by element */
            if (!isfinite(x[i]))
                finite = 0;
            dmax = fmax(dmax, fabs(F[i]));
            xmax = fmax(xmax, fabs(x[i]));
        }
        if (!finite)
            break;
        if (rc_newton_converged_(dmax, prev, xmax, tol)) {
            converged = 1;
            break;
        }
        prev = dmax;
    }
    sys->last_iterations = it > sys->integ.newton_max_iter
                               ? sys->integ.newton_max_iter
                               : it;
    if (!converged)
        return rc_fail_(sys, RC_ERR_NOT_CONVERGED,
                        "implicit midpoint: Newton did not converge in %d "
                        "iterations at step %ld (t = %g); reduce dt",
                        sys->integ.newton_max_iter, sys->steps + 1,
                        sys->time);
    /* New state into F (q') and e (p'), committed only when finite, so a
     * failed step leaves the last completed state. */
    rc_cpu_gradient(m, x, sys->grad, sys->threads);
    for (i = 0; i < N; ++i) {
        F[i] = 2.0 * x[i] - sys->q[i];
        e[i] = sys->p[i] - h * sys->grad[i];
        if (!isfinite(F[i]) || !isfinite(e[i]))
            return rc_fail_(sys, RC_ERR_NONFINITE,
                            "state became non-finite at step %ld",
                            sys->steps + 1);
    }
    memcpy(sys->q, F, sizeof(double) * (size_t)N);
    memcpy(sys->p, e, sizeof(double) * (size_t)N);
    return RC_OK;
}

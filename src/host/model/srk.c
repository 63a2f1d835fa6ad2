/* Methods of the kind "index1" (index1.h; seed 002: McLachlan, Modin,
 * Verdier, Wilkins, "Symplectic integrators for index one constraints",
 * 2013):
 *
 *   gauss1, gauss2, gauss3  Gauss–Legendre Runge–Kutta, s = 1, 2, 3
 *       stages (orders 2, 4, 6; gauss1 is the midpoint rule), applied to
 *       J ż = ∇H on the full stage system (Q_i, P_i, Λ_i):
 *           Q_i = q0 + Δt Σ_j a_ij H_p(Z_j)
 *           P_i = p0 − Δt Σ_j a_ij H_q(Z_j)
 *           0   = H_λ(Z_i)
 *       solved simultaneously by Newton with the analytic Hessian of H;
 *       q1, p1 from the weights b_j, and λ1 from H_λ(q1, p1, λ1) = 0
 *       (Prop. 4, Cor. 5).  Symplectic on the constraint manifold, the
 *       constraints exact at the stages and the endpoints.
 *   rattle  RATTLE for added holonomic constraints h(q) = 0 with the
 *       midpoint rule as the inner step (Prop. 7): p̃0 = p0 + Dh(q0)ᵀμ,
 *       one midpoint step of H(q, p, λ, 0) from (q0, p̃0) with μ fixed by
 *       h(q1) = 0 (one Newton system in (Q, P, Λ, μ)), then
 *       p1 = p̃1 + Dh(q1)ᵀν with ν and λ1 fixed by Dh(q1)·H_p = 0 and
 *       H_λ = 0.  Order 2, symplectic on the constraint manifold.
 *   rk4  baseline: classical explicit RK4 on the eliminated ODE
 *       q̇ = H_p, ṗ = −H_q at λ = λ̃(q, p).  The velocity constraints hold
 *       (λ is recomputed), but the map is not symplectic: energy drifts.
 *   projection  baseline: rk4, then (q, p) projected along ∇H̃ onto the
 *       energy of the state the run started from (standard projection,
 *       Hairer, Lubich, Wanner, "Geometric Numerical Integration",
 *       §IV.4).  Energy exact, symplecticity and other invariants not.
 *
 * Newton stops when the update is below newton_tol·max(1, |X|), or when
 * it is below 1e-12·max(1, |X|) and no longer falls (round-off); after
 * newton_max_iter iterations the step fails with RC_ERR_NOT_CONVERGED and
 * the state of the last completed step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index1.h"

enum { SRK_GAUSS = 0, SRK_RATTLE, SRK_RK4, SRK_PROJ };

typedef struct srk_ws {
    const rc_model *m;
    rc_i1_ev *ev;
    int type, s;
    double A[9], b[3], c[3];
    int n, k, l, dim, N;
    double dt, tol;
    int maxit;
    double *X, *G, *Hs, *R, *J, *q1, *p1, *lam1, *Dh0, *Dh1, *hv, *tmp;
    double *kq, *kp, *qt, *pt, *lt;
    int *piv;
    int iters;
    double stage_con;
    double E0;
    int have_E0;
} srk_ws;

double rc_i1_stage_constraint(const void *ws)
{
    return ((const srk_ws *)ws)->stage_con;
}

static void srk_destroy(void *p)
{
    srk_ws *w = (srk_ws *)p;
    if (!w)
        return;
    rc_i1_ev_free(w->ev);
    free(w->X);
    free(w->G);
    free(w->Hs);
    free(w->R);
    free(w->J);
    free(w->q1);
    free(w->p1);
    free(w->lam1);
    free(w->Dh0);
    free(w->Dh1);
    free(w->hv);
    free(w->tmp);
    free(w->kq);
    free(w->kp);
    free(w->qt);
    free(w->pt);
    free(w->lt);
    free(w->piv);
    free(w);
}

static rc_status srk_fail(rc_error *err, rc_status st, const char *field,
                          const char *fmt, double a, double b, double c)
{
    err->status = st;
    snprintf(err->field, sizeof err->field, "%s", field);
    snprintf(err->message, sizeof err->message, fmt, a, b, c);
    return st;
}

static rc_status srk_create_type(const rc_model *m,
                                 const rc_integrator_desc *integ, void **out,
                                 rc_error *err, int type, int s,
                                 const char *name)
{
    srk_ws *w;
    int n, k, l, dim, N, S;
    rc_status st;
    *out = NULL;
    if (m->kind != &rc_model_kind_index1) {
        err->status = RC_ERR_PARSE;
        snprintf(err->field, sizeof err->field, "integrator.method");
        snprintf(err->message, sizeof err->message,
                 "method '%s' integrates models of kind index1, not '%s'",
                 name, m->kind ? m->kind->name : "?");
        return RC_ERR_PARSE;
    }
    n = m->n;
    k = rc_i1_nmult(m);
    l = rc_i1_nholo(m);
    if (l > 0 && type != SRK_RATTLE) {
        err->status = RC_ERR_PARSE;
        snprintf(err->field, sizeof err->field, "integrator.method");
        snprintf(err->message, sizeof err->message,
                 "method '%s' does not enforce the model's holonomic "
                 "constraints; use method rattle (seed 002, Prop. 7)",
                 name);
        return RC_ERR_PARSE;
    }
    if (!(integ->dt > 0.0) || !isfinite(integ->dt))
        return srk_fail(err, RC_ERR_PARSE, "integrator.dt",
                        "must be a finite number > 0 (got %g)", integ->dt, 0,
                        0);
    w = calloc(1, sizeof *w);
    if (!w)
        goto nomem;
    w->m = m;
    w->type = type;
    w->s = s;
    w->n = n;
    w->k = k;
    w->l = l;
    w->dim = dim = 2 * n + k;
    w->dt = integ->dt;
    w->tol = integ->newton_tol > 0.0 ? integ->newton_tol : 1e-14;
    w->maxit = integ->newton_max_iter > 0 ? integ->newton_max_iter : 50;
    w->stage_con = NAN;
    S = s > 0 ? s : 1;
    w->N = N = type == SRK_RATTLE ? dim + l : S * dim;
    if ((st = rc_i1_ev_create(m, &w->ev, err))) {
        srk_destroy(w);
        return st;
    }
    w->X = calloc((size_t)N, sizeof(double));
    w->G = calloc((size_t)(S * dim), sizeof(double));
    w->Hs = calloc((size_t)(S * dim * dim), sizeof(double));
    w->R = calloc((size_t)N, sizeof(double));
    w->J = calloc((size_t)(N * N), sizeof(double));
    w->q1 = calloc((size_t)n, sizeof(double));
    w->p1 = calloc((size_t)n, sizeof(double));
    w->lam1 = calloc((size_t)(k + 1), sizeof(double));
    w->Dh0 = calloc((size_t)(l * n + 1), sizeof(double));
    w->Dh1 = calloc((size_t)(l * n + 1), sizeof(double));
    w->hv = calloc((size_t)(l + 1), sizeof(double));
    w->tmp = calloc((size_t)(dim + 1), sizeof(double));
    w->kq = calloc((size_t)(4 * n), sizeof(double));
    w->kp = calloc((size_t)(4 * n), sizeof(double));
    w->qt = calloc((size_t)n, sizeof(double));
    w->pt = calloc((size_t)n, sizeof(double));
    w->lt = calloc((size_t)(k + 1), sizeof(double));
    w->piv = calloc((size_t)N, sizeof(int));
    if (!w->X || !w->G || !w->Hs || !w->R || !w->J || !w->q1 || !w->p1 ||
        !w->lam1 || !w->Dh0 || !w->Dh1 || !w->hv || !w->tmp || !w->kq ||
        !w->kp || !w->qt || !w->pt || !w->lt || !w->piv)
        goto nomem;
    if (s == 1) {
        w->A[0] = 0.5;
        w->b[0] = 1.0;
        w->c[0] = 0.5;
    } else if (s == 2) {
        double r3 = sqrt(3.0);
        w->A[0] = 0.25;
        w->A[1] = 0.25 - r3 / 6.0;
        w->A[2] = 0.25 + r3 / 6.0;
        w->A[3] = 0.25;
        w->b[0] = w->b[1] = 0.5;
        w->c[0] = 0.5 - r3 / 6.0;
        w->c[1] = 0.5 + r3 / 6.0;
    } else if (s == 3) {
        double r15 = sqrt(15.0);
        w->A[0] = 5.0 / 36.0;
        w->A[1] = 2.0 / 9.0 - r15 / 15.0;
        w->A[2] = 5.0 / 36.0 - r15 / 30.0;
        w->A[3] = 5.0 / 36.0 + r15 / 24.0;
        w->A[4] = 2.0 / 9.0;
        w->A[5] = 5.0 / 36.0 - r15 / 24.0;
        w->A[6] = 5.0 / 36.0 + r15 / 30.0;
        w->A[7] = 2.0 / 9.0 + r15 / 15.0;
        w->A[8] = 5.0 / 36.0;
        w->b[0] = w->b[2] = 5.0 / 18.0;
        w->b[1] = 4.0 / 9.0;
        w->c[0] = 0.5 - r15 / 10.0;
        w->c[1] = 0.5;
        w->c[2] = 0.5 + r15 / 10.0;
    }
    *out = w;
    return RC_OK;
nomem:
    srk_destroy(w);
    err->status = RC_ERR_NOMEM;
    snprintf(err->message, sizeof err->message,
             "out of memory for the workspace of method '%s'", name);
    return RC_ERR_NOMEM;
}

/* ------------------------------------------------------------------ */

static rc_status srk_not_converged(srk_ws *w, const rc_model_state *s,
                                   double du, rc_error *err)
{
    err->status = RC_ERR_NOT_CONVERGED;
    snprintf(err->field, sizeof err->field, "integrator.newton_max_iter");
    snprintf(err->message, sizeof err->message,
             "Newton's method for the implicit stages did not converge in %d "
             "iterations at t = %.17g (last update %.3g, tolerance %.3g); "
             "reduce integrator.dt or raise integrator.newton_max_iter",
             w->maxit, s->t, du, w->tol);
    return RC_ERR_NOT_CONVERGED;
}

static rc_status srk_nonfinite(const rc_model_state *s, rc_error *err)
{
    err->status = RC_ERR_NONFINITE;
    snprintf(err->message, sizeof err->message,
             "non-finite value in the step from t = %.17g", s->t);
    return RC_ERR_NONFINITE;
}

/* One Newton iteration's test.  Returns 1 converged, 0 go on, −1 bad. */
static int srk_newton_done(const srk_ws *w, double du, double prev)
{
    double sc = 1.0;
    int a;
    if (!isfinite(du))
        return -1;
    for (a = 0; a < w->N; ++a)
        sc = fmax(sc, fabs(w->X[a]));
    return rc_i1_newton_stop(du, prev, sc, w->tol);
}

/* The rest of one Newton iteration of either step, once J and R are
 * built: solve J d = R (a singular J: `singular` says why, with the
 * step's time), X -= d, and the convergence test.  Returns RC_OK with
 * *done 1 (converged) or 0 (go on), or the error.  *du is the update's
 * size, *prev the last one's. */
static rc_status srk_newton_update(srk_ws *w, const rc_model_state *s,
                                   const char *singular, double *du,
                                   double *prev, int *done, rc_error *err)
{
    int a, N = w->N;
    if (rc_i1_solve(N, w->J, w->R, w->piv)) {
        err->status = RC_ERR_NOT_CONVERGED;
        snprintf(err->message, sizeof err->message,
                 "singular Newton matrix at t = %.17g: %s", s->t, singular);
        return RC_ERR_NOT_CONVERGED;
    }
    *du = 0.0;
    for (a = 0; a < N; ++a) {
        w->X[a] -= w->R[a];
        *du = fmax(*du, fabs(w->R[a]));
    }
    *done = srk_newton_done(w, *du, *prev);
    if (*done < 0)
        return srk_nonfinite(s, err);
    *prev = *du;
    return RC_OK;
}

static int srk_finite(int n, const double *v)
{
    int a;
    for (a = 0; a < n; ++a)
        if (!isfinite(v[a]))
            return 0;
    return 1;
}

static rc_status srk_commit(srk_ws *w, rc_model_state *s, rc_error *err)
{
    if (!srk_finite(w->n, w->q1) || !srk_finite(w->n, w->p1) ||
        !srk_finite(w->k, w->lam1))
        return srk_nonfinite(s, err);
    memcpy(s->q, w->q1, (size_t)w->n * sizeof(double));
    memcpy(s->p, w->p1, (size_t)w->n * sizeof(double));
    memcpy(s->aux, w->lam1, (size_t)w->k * sizeof(double));
    s->t += w->dt;
    s->steps += 1;
    return RC_OK;
}

static rc_status gauss_step(void *p, rc_model_state *s, rc_error *err)
{
    srk_ws *w = (srk_ws *)p;
    int n = w->n, k = w->k, dim = w->dim, S = w->s, N = w->N;
    int i, j, a, c, it, done = 0;
    rc_status st;
    double dt = w->dt, prev = INFINITY, du = INFINITY;
    double *X = w->X, *G = w->G, *Hs = w->Hs, *R = w->R, *J = w->J;
    /* predictor: explicit Euler to each stage's time, λ as it was */
    rc_i1_ev_hamiltonian(w->ev, s->q, s->p, s->aux, NULL, w->tmp, NULL, NULL,
                         NULL);
    for (i = 0; i < S; ++i) {
        for (a = 0; a < n; ++a) {
            X[i * dim + a] = s->q[a] + w->c[i] * dt * w->tmp[n + a];
            X[i * dim + n + a] = s->p[a] - w->c[i] * dt * w->tmp[a];
        }
        for (c = 0; c < k; ++c)
            X[i * dim + 2 * n + c] = s->aux[c];
    }
    for (it = 1; it <= w->maxit && !done; ++it) {
        for (j = 0; j < S; ++j) {
            const double *Z = X + j * dim;
            rc_i1_ev_hamiltonian(w->ev, Z, Z + n, Z + 2 * n, NULL,
                                 G + j * dim, Hs + j * dim * dim, NULL, NULL);
        }
        memset(J, 0, (size_t)(N * N) * sizeof(double));
        for (i = 0; i < S; ++i) {
            const double *Z = X + i * dim;
            int ri = i * dim;
            for (a = 0; a < n; ++a) {
                double rq = Z[a] - s->q[a], rp = Z[n + a] - s->p[a];
                for (j = 0; j < S; ++j) {
                    double h = dt * w->A[i * S + j];
                    const double *Hj = Hs + j * dim * dim;
                    int cj = j * dim;
                    rq -= h * G[j * dim + n + a];
                    rp += h * G[j * dim + a];
                    for (c = 0; c < dim; ++c) {
                        J[(ri + a) * N + cj + c] = -h * Hj[(n + a) * dim + c];
                        J[(ri + n + a) * N + cj + c] = h * Hj[a * dim + c];
                    }
                }
                R[ri + a] = rq;
                R[ri + n + a] = rp;
                J[(ri + a) * N + ri + a] += 1.0;
                J[(ri + n + a) * N + ri + n + a] += 1.0;
            }
            for (a = 2 * n; a < dim; ++a) {
                R[ri + a] = G[i * dim + a];
                for (c = 0; c < dim; ++c)
                    J[(ri + a) * N + ri + c] = Hs[i * dim * dim + a * dim + c];
            }
        }
        if ((st = srk_newton_update(
                 w, s,
                 "H_lambda,lambda is singular at a stage (the constraints "
                 "are not of index 1 there) or integrator.dt is too large",
                 &du, &prev, &done, err)) != RC_OK)
            return st;
    }
    w->iters = it - 1;
    if (!done)
        return srk_not_converged(w, s, du, err);
    /* gradients at the converged stages; the constraints there */
    w->stage_con = 0.0;
    for (j = 0; j < S; ++j) {
        const double *Z = X + j * dim;
        rc_i1_ev_hamiltonian(w->ev, Z, Z + n, Z + 2 * n, NULL, G + j * dim,
                             NULL, NULL, NULL);
        for (c = 0; c < k; ++c)
            w->stage_con = fmax(w->stage_con, fabs(G[j * dim + 2 * n + c]));
    }
    for (a = 0; a < n; ++a) {
        double dq = 0.0, dp = 0.0;
        for (j = 0; j < S; ++j) {
            dq += w->b[j] * G[j * dim + n + a];
            dp += w->b[j] * G[j * dim + a];
        }
        w->q1[a] = s->q[a] + dt * dq;
        w->p1[a] = s->p[a] - dt * dp;
    }
    for (c = 0; c < k; ++c)
        w->lam1[c] = X[(S - 1) * dim + 2 * n + c];
    if (rc_i1_ev_solve_lambda(w->ev, w->q1, w->p1, w->lam1, w->tol,
                              w->maxit) < 0)
        return srk_not_converged(w, s, NAN, err);
    return srk_commit(w, s, err);
}

static rc_status rattle_step(void *p, rc_model_state *s, rc_error *err)
{
    srk_ws *w = (srk_ws *)p;
    int n = w->n, k = w->k, l = w->l, dim = w->dim, N = w->N;
    int a, c, j, it, done = 0;
    rc_status st;
    double dt = w->dt, prev = INFINITY, du = INFINITY;
    double *X = w->X, *G = w->G, *Hs = w->Hs, *R = w->R, *J = w->J;
    rc_i1_ev_holonomic(w->ev, s->q, NULL, w->Dh0);
    rc_i1_ev_hamiltonian(w->ev, s->q, s->p, s->aux, NULL, w->tmp, NULL, NULL,
                         NULL);
    for (a = 0; a < n; ++a) {
        X[a] = s->q[a] + 0.5 * dt * w->tmp[n + a];
        X[n + a] = s->p[a] - 0.5 * dt * w->tmp[a];
    }
    for (c = 0; c < k; ++c)
        X[2 * n + c] = s->aux[c];
    for (j = 0; j < l; ++j)
        X[dim + j] = 0.0;
    for (it = 1; it <= w->maxit && !done; ++it) {
        const double *mu = X + dim;
        rc_i1_ev_hamiltonian(w->ev, X, X + n, X + 2 * n, NULL, G, Hs, NULL,
                             NULL);
        for (a = 0; a < n; ++a)
            w->q1[a] = 2.0 * X[a] - s->q[a];
        rc_i1_ev_holonomic(w->ev, w->q1, w->hv, w->Dh1);
        memset(J, 0, (size_t)(N * N) * sizeof(double));
        for (a = 0; a < n; ++a) {
            double rp = X[n + a] - s->p[a] + 0.5 * dt * G[a];
            for (j = 0; j < l; ++j) {
                rp -= w->Dh0[j * n + a] * mu[j];
                J[(n + a) * N + dim + j] = -w->Dh0[j * n + a];
                J[(dim + j) * N + a] = 2.0 * w->Dh1[j * n + a];
            }
            R[a] = X[a] - s->q[a] - 0.5 * dt * G[n + a];
            R[n + a] = rp;
            for (c = 0; c < dim; ++c) {
                J[a * N + c] = -0.5 * dt * Hs[(n + a) * dim + c];
                J[(n + a) * N + c] = 0.5 * dt * Hs[a * dim + c];
            }
            J[a * N + a] += 1.0;
            J[(n + a) * N + n + a] += 1.0;
        }
        for (a = 2 * n; a < dim; ++a) {
            R[a] = G[a];
            for (c = 0; c < dim; ++c)
                J[a * N + c] = Hs[a * dim + c];
        }
        for (j = 0; j < l; ++j)
            R[dim + j] = w->hv[j];
        if ((st = srk_newton_update(
                 w, s,
                 "the holonomic and velocity constraints are degenerate "
                 "here, or integrator.dt is too large",
                 &du, &prev, &done, err)) != RC_OK)
            return st;
    }
    w->iters = it - 1;
    if (!done)
        return srk_not_converged(w, s, du, err);
    rc_i1_ev_hamiltonian(w->ev, X, X + n, X + 2 * n, NULL, G, NULL, NULL,
                         NULL);
    w->stage_con = 0.0;
    for (c = 0; c < k; ++c)
        w->stage_con = fmax(w->stage_con, fabs(G[2 * n + c]));
    /* z1 = 2Z − z̃0, so that h(q1) = 0 is what Newton solved */
    for (a = 0; a < n; ++a) {
        double pt0 = s->p[a];
        for (j = 0; j < l; ++j)
            pt0 += w->Dh0[j * n + a] * X[dim + j];
        w->q1[a] = 2.0 * X[a] - s->q[a];
        w->p1[a] = 2.0 * X[n + a] - pt0;
    }
    for (c = 0; c < k; ++c)
        w->lam1[c] = X[2 * n + c];
    if (rc_i1_ev_project(w->ev, w->q1, w->p1, w->lam1, NULL, w->tol,
                         w->maxit) < 0)
        return srk_not_converged(w, s, NAN, err);
    return srk_commit(w, s, err);
}

/* f(q, p) of the eliminated ODE into (fq, fp); lam: guess in, λ̃ out. */
static int elim_rhs(srk_ws *w, const double *q, const double *p, double *lam,
                    double *fq, double *fp)
{
    int a, n = w->n;
    int it = rc_i1_ev_solve_lambda(w->ev, q, p, lam, w->tol, w->maxit);
    if (it < 0)
        return -1;
    rc_i1_ev_hamiltonian(w->ev, q, p, lam, NULL, w->tmp, NULL, NULL, NULL);
    for (a = 0; a < n; ++a) {
        fq[a] = w->tmp[n + a];
        fp[a] = -w->tmp[a];
    }
    return it;
}

static rc_status rk4_core(srk_ws *w, rc_model_state *s, rc_error *err)
{
    static const double cs[4] = {0.0, 0.5, 0.5, 1.0};
    static const double bs[4] = {1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0};
    int n = w->n, i, a, it, tot = 0;
    double dt = w->dt;
    memcpy(w->lt, s->aux, (size_t)w->k * sizeof(double));
    for (i = 0; i < 4; ++i) {
        for (a = 0; a < n; ++a) {
            w->qt[a] = s->q[a] + (i ? cs[i] * dt * w->kq[(i - 1) * n + a] : 0);
            w->pt[a] = s->p[a] + (i ? cs[i] * dt * w->kp[(i - 1) * n + a] : 0);
        }
        it = elim_rhs(w, w->qt, w->pt, w->lt, w->kq + i * n, w->kp + i * n);
        if (it < 0)
            return srk_not_converged(w, s, NAN, err);
        tot += it;
    }
    for (a = 0; a < n; ++a) {
        double dq = 0.0, dp = 0.0;
        for (i = 0; i < 4; ++i) {
            dq += bs[i] * w->kq[i * n + a];
            dp += bs[i] * w->kp[i * n + a];
        }
        w->q1[a] = s->q[a] + dt * dq;
        w->p1[a] = s->p[a] + dt * dp;
    }
    memcpy(w->lam1, w->lt, (size_t)w->k * sizeof(double));
    it = rc_i1_ev_solve_lambda(w->ev, w->q1, w->p1, w->lam1, w->tol,
                               w->maxit);
    if (it < 0)
        return srk_not_converged(w, s, NAN, err);
    w->iters = tot + it;
    return RC_OK;
}

static rc_status rk4_step(void *p, rc_model_state *s, rc_error *err)
{
    srk_ws *w = (srk_ws *)p;
    rc_status st = rk4_core(w, s, err);
    return st ? st : srk_commit(w, s, err);
}

/* H̃(q, p) = H(q, p, λ̃(q, p)) and its gradient (H_q, H_p) (the λ part
 * drops out because H_λ = 0 there). */
static int proj_energy(srk_ws *w, const double *q, const double *p,
                       double *lam, double *E, double *gq, double *gp)
{
    int a, n = w->n;
    if (rc_i1_ev_solve_lambda(w->ev, q, p, lam, w->tol, w->maxit) < 0)
        return -1;
    rc_i1_ev_hamiltonian(w->ev, q, p, lam, E, w->tmp, NULL, NULL, NULL);
    for (a = 0; a < n; ++a) {
        if (gq)
            gq[a] = w->tmp[a];
        if (gp)
            gp[a] = w->tmp[n + a];
    }
    return 0;
}

static rc_status proj_step(void *p, rc_model_state *s, rc_error *err)
{
    srk_ws *w = (srk_ws *)p;
    int n = w->n, a, it;
    double *gq = w->kq, *gp = w->kp, *cq = w->kq + n, *cp = w->kp + n;
    double alpha = 0.0, E, g2 = 0.0, prev = INFINITY;
    rc_status st;
    if (!w->have_E0) {
        memcpy(w->lt, s->aux, (size_t)w->k * sizeof(double));
        if (proj_energy(w, s->q, s->p, w->lt, &w->E0, NULL, NULL) < 0)
            return srk_not_converged(w, s, NAN, err);
        w->have_E0 = 1;
    }
    if ((st = rk4_core(w, s, err)))
        return st;
    /* (q, p) = (q̂, p̂) + α ∇H̃(q̂, p̂) with H̃ = E0: Newton in α */
    if (proj_energy(w, w->q1, w->p1, w->lam1, &E, gq, gp) < 0)
        return srk_not_converged(w, s, NAN, err);
    for (a = 0; a < n; ++a) {
        w->qt[a] = w->q1[a];
        w->pt[a] = w->p1[a];
        g2 += gq[a] * gq[a] + gp[a] * gp[a];
    }
    for (it = 1; it <= w->maxit; ++it) {
        double d = 0.0, da;
        if (it > 1 &&
            proj_energy(w, w->q1, w->p1, w->lam1, &E, cq, cp) < 0)
            return srk_not_converged(w, s, NAN, err);
        if (it == 1)
            d = g2;
        else
            for (a = 0; a < n; ++a)
                d += cq[a] * gq[a] + cp[a] * gp[a];
        if (!(d != 0.0))
            break; /* at a critical point of H̃: nothing to project */
        da = (E - w->E0) / d;
        alpha -= da;
        for (a = 0; a < n; ++a) {
            w->q1[a] = w->qt[a] + alpha * gq[a];
            w->p1[a] = w->pt[a] + alpha * gp[a];
        }
        if (!isfinite(da))
            return srk_nonfinite(s, err);
        if (fabs(da) * sqrt(g2) <= 1e-16 * (1.0 + fabs(w->E0)) ||
            (fabs(da) >= prev && it > 2))
            break;
        prev = fabs(da);
    }
    if (rc_i1_ev_solve_lambda(w->ev, w->q1, w->p1, w->lam1, w->tol,
                              w->maxit) < 0)
        return srk_not_converged(w, s, NAN, err);
    return srk_commit(w, s, err);
}

static void srk_diagnose(void *p, const rc_model_state *s, rc_model_diag *d)
{
    srk_ws *w = (srk_ws *)p;
    int n = w->n, a, j;
    double ce = 0.0;
    rc_i1_ev_hamiltonian(w->ev, s->q, s->p, s->aux, &d->energy, w->tmp, NULL,
                         &d->kinetic, &d->potential);
    for (a = 0; a < w->k; ++a)
        ce = fmax(ce, fabs(w->tmp[2 * n + a]));
    if (w->l > 0) {
        rc_i1_ev_holonomic(w->ev, s->q, w->hv, w->Dh1);
        for (j = 0; j < w->l; ++j) {
            double v = 0.0;
            for (a = 0; a < n; ++a)
                v += w->Dh1[j * n + a] * w->tmp[n + a];
            ce = fmax(ce, fmax(fabs(w->hv[j]), fabs(v)));
        }
    }
    d->constraint_error = ce;
    d->discrete_energy = NAN;
    d->modified_energy = NAN;
    d->min_gap = NAN;
    d->impacts = 0;
    d->iterations = w->iters;
}

static int srk_iterations(void *p) { return ((srk_ws *)p)->iters; }

#define SRK_CREATE(fn, type, s, name)                                       \
    static rc_status fn(const rc_model *m, const rc_integrator_desc *integ, \
                        void **ws, rc_error *err)                           \
    {                                                                       \
        return srk_create_type(m, integ, ws, err, type, s, name);           \
    }
SRK_CREATE(create_gauss1, SRK_GAUSS, 1, "gauss1")
SRK_CREATE(create_gauss2, SRK_GAUSS, 2, "gauss2")
SRK_CREATE(create_gauss3, SRK_GAUSS, 3, "gauss3")
SRK_CREATE(create_rattle, SRK_RATTLE, 1, "rattle")
SRK_CREATE(create_rk4, SRK_RK4, 0, "rk4")
SRK_CREATE(create_proj, SRK_PROJ, 0, "projection")

const rc_model_method rc_model_method_gauss1 = {
    "gauss1", &rc_model_kind_index1,
    "Gauss-Legendre RK, 1 stage (implicit midpoint), order 2, symplectic "
    "on the constraint manifold (seed 002 Prop. 4)",
    create_gauss1, gauss_step, srk_diagnose, srk_destroy,
    srk_iterations};
const rc_model_method rc_model_method_gauss2 = {
    "gauss2", &rc_model_kind_index1,
    "Gauss-Legendre RK, 2 stages, order 4, symplectic on the constraint "
    "manifold (seed 002 Prop. 4)",
    create_gauss2, gauss_step, srk_diagnose, srk_destroy,
    srk_iterations};
const rc_model_method rc_model_method_gauss3 = {
    "gauss3", &rc_model_kind_index1,
    "Gauss-Legendre RK, 3 stages, order 6, symplectic on the constraint "
    "manifold (seed 002 Prop. 4)",
    create_gauss3, gauss_step, srk_diagnose, srk_destroy,
    srk_iterations};
const rc_model_method rc_model_method_i1_rattle = {
    "rattle", &rc_model_kind_index1,
    "RATTLE for holonomic constraints h(q) = 0 with the midpoint rule as "
    "inner step, order 2 (seed 002 Prop. 7)",
    create_rattle, rattle_step, srk_diagnose, srk_destroy,
    srk_iterations};
const rc_model_method rc_model_method_i1_rk4 = {
    "rk4", &rc_model_kind_index1,
    "baseline: explicit RK4 on the ODE with lambda eliminated, order 4, not "
    "symplectic",
    create_rk4, rk4_step, srk_diagnose, srk_destroy,
    srk_iterations};
const rc_model_method rc_model_method_i1_projection = {
    "projection", &rc_model_kind_index1,
    "baseline: RK4 with lambda eliminated, then projected onto the initial "
    "energy, not symplectic",
    create_proj, proj_step, srk_diagnose, srk_destroy,
    srk_iterations};

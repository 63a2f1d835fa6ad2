/* The kind "index1" (seed 002: McLachlan, Modin, Verdier, Wilkins,
 * "Symplectic integrators for index one constraints", 2013) and its
 * methods, shared by index1.c, srk.c and the tests.
 *
 * A model of this kind is a generalized Hamiltonian system J ż = ∇H(z),
 * z = (q, p, λ) ∈ R^(2n+k), J = [[0, −I, 0], [I, 0, 0], [0, 0, 0]]:
 *     q̇ = H_p,  ṗ = −H_q,  0 = H_λ,
 * of index 1 (H_λλ nonsingular, so H_λ = 0 fixes λ = λ̃(q, p)), with
 * optional holonomic constraints h(q) = 0, h ∈ R^l, enforced by RATTLE
 * (Prop. 6–7).  The state's aux holds λ (naux = k). */
#ifndef RC_MODEL_INDEX1_H
#define RC_MODEL_INDEX1_H

#include "model.h"

extern const rc_model_kind rc_model_kind_index1;
extern const rc_model_method rc_model_method_gauss1;
extern const rc_model_method rc_model_method_gauss2;
extern const rc_model_method rc_model_method_gauss3;
extern const rc_model_method rc_model_method_i1_rattle;
extern const rc_model_method rc_model_method_i1_rk4;
extern const rc_model_method rc_model_method_i1_projection;

/* The kind's Newton stopping rule: the update du is below tol·sc, or
 * it no longer falls at round-off (below 1e-12·sc: a Newton update
 * that stalls there is noise).  sc = max(1, |unknowns|). */
static inline int rc_i1_newton_stop(double du, double prev, double sc,
                                    double tol)
{
    return du <= tol * sc || (du <= 1e-12 * sc && du >= prev);
}

int rc_i1_nmult(const rc_model *m); /* k */
int rc_i1_nholo(const rc_model *m); /* l */

/* An evaluator of H and h for one model: the built-in body, or its own
 * compiled copy of the expressions (libmatheval is not thread-safe per
 * expression, so every workspace has its own). */
typedef struct rc_i1_ev rc_i1_ev;
rc_status rc_i1_ev_create(const rc_model *m, rc_i1_ev **out, rc_error *err);
void rc_i1_ev_free(rc_i1_ev *e);
/* H, ∇H (2n+k, order q, p, λ) and ∇²H ((2n+k)², row-major) at z; any
 * output may be NULL.  kin and pot: ½q̇ᵀMq̇ and V for Lagrange-problem
 * models, NaN for a Hamiltonian given directly. */
void rc_i1_ev_hamiltonian(rc_i1_ev *e, const double *q, const double *p,
                          const double *lam, double *H, double *grad,
                          double *hess, double *kin, double *pot);
/* h(q) (l) and Dh(q) (l×n, row-major); either may be NULL. */
void rc_i1_ev_holonomic(rc_i1_ev *e, const double *q, double *h,
                        double *Dh);
/* λ̃(q, p): Newton on H_λ(q, p, λ) = 0 from the guess in lam (updated).
 * Returns the iterations, or −1 when it did not converge in maxit. */
int rc_i1_ev_solve_lambda(rc_i1_ev *e, const double *q, const double *p,
                          double *lam, double tol, int maxit);

/* RATTLE's second projection (and the initial state's): p += Dh(q)ᵀν
 * and λ such that Dh(q)·H_p(q, p, λ) = 0 and H_λ(q, p, λ) = 0, by Newton
 * from ν = 0 and the λ given.  nu (l, may be NULL) receives ν.  Returns
 * the iterations, or −1. */
int rc_i1_ev_project(rc_i1_ev *e, const double *q, double *p, double *lam,
                     double *nu, double tol, int maxit);

/* Dense solve A x = b (A n×n row-major, overwritten; b becomes x) by LU
 * with partial pivoting.  Returns 0, or −1 when A is singular. */
int rc_i1_solve(int n, double *A, double *b, int *piv);

/* Tests: the largest |H_λ| over the stages of the last step of a
 * gauss/rattle workspace (the velocity constraints g_i(Q)·Q̇ at the
 * stages for a Lagrange-problem model). */
double rc_i1_stage_constraint(const void *ws);

#endif

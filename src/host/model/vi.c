/* Variational integrators for nonseparable L(q, q̇) = ½ q̇ᵀM(q)q̇ − V(q)
 * and the event-driven impact methods of seed 001 (Pekarek & Murphey,
 * "Discrete Lagrangian mechanics for nonseparable nonsmooth systems",
 * 2014), methods of the model kind "lagrangian" (lagrangian.h).
 *
 * Smooth maps (§3.1, §3.3), each Φ_h = F⁺L_d ∘ (F⁻L_d)⁻¹ of a discrete
 * Lagrangian written as a quadrature L_d = h Σ_s w_s L(P_s, V_s) over the
 * nodes q_0, (q_m), q_1 of one step:
 *   svc          L_d^SVC = h/2 [L(q0, v) + L(q1, v)],  v = (q1 − q0)/h
 *   vi-midpoint  L_d = h L((q0 + q1)/2, v)
 *   sva          SE2_{h/2} ∘ SE1_{h/2}: h/2 [L(q0, va) + L(q1, vb)],
 *                va = (qm − q0)/(h/2), vb = (q1 − qm)/(h/2), qm stationary
 *   svb          SE1_{h/2} ∘ SE2_{h/2}: h/2 [L(qm, va) + L(qm, vb)]
 * Unknowns are the sub-step velocities, not positions, so that a partial
 * step τ → 0 keeps its accuracy; the implicit equations (p0 = −D1 L_d,
 * and D_m L_d = 0 for the composed maps) are solved by Newton on the
 * exact Hessian of L_d, with the iteration count reported and
 * RC_ERR_NOT_CONVERGED after integrator.newton_max_iter.
 *
 * Energies: H; the discrete energy −D₃L_d(q_k, q_{k+1}, h) = Σ_s w_s
 * E(P_s, V_s) (E = ½VᵀMV + V) of the forward step; the truncated
 * modified Hamiltonian of Theorem 2 / Appendix A,
 *   H̃ = η + h H2 + h² H3,  η = p·(q̄ − q)/h − L_d(q, q̄)/h,
 *   p = D2 L_d(q, q̄),  H2 = −½ η_q·η_p,
 *   H3 = (1/12)[η_qq(η_p, η_p) + 4 η_qp(η_p, η_q) + η_pp(η_q, η_q)]
 * where η_qp(a, b) = Σ ∂²η/∂q_i∂p_j a_i b_j (the q slot takes η_p, as in
 * Hairer, Lubich & Wanner IX.3; the seed's slot notation is ambiguous)
 * and the second derivatives of η come from the Hessian of L_d through
 * the implicit q̄ (Appendix A, step 2).  For SVC this is the seed's
 * O(h³) truncation.  For SVA the seed takes H4 = 0 (symmetric map, §5.2);
 * the three terms as written still leave an O(h³) remainder (measured),
 * so the SVA methods use their mean over ±h, which is O(h⁴) (see
 * vi_mh_method).
 *
 * Impact methods (§4, Algorithm 1): a full step Φ_h; if it ends with some
 * g_k < 0 the step is redone by partial steps: the first time τ at which
 * min_k g_k(q(τ)) crosses zero on the partial map is found by a
 * safeguarded false-position/bisection to round-off in τ, the state is
 * moved there, the momentum reset p⁺ = p⁻ + λ ∇g_k with λ ≠ 0 chosen so
 * that the method's energy is kept, and the remainder of the step
 * continues:
 *   cva     Φ = SVC, partial = SVC_τ, reset keeps H (closed form)
 *   vci     Φ = SVC, partial = SVC_τ, reset keeps −D₃L_d: the backward
 *           partial step's −D₃L_d^SVC(q_prev, q_i, Δτ) equals the forward
 *           one's −D₃L_d^SVC(q_i, q_next(λ), τ_rest) (Fetecau et al.)
 *   mcva-a  Φ = SVA, partial = 4th-order Gauss–Legendre on the Hamilton
 *           equations of SVA's H̃, reset keeps H̃
 *   mcva-c  the same with SVC and its O(h³) H̃ (generalized MCVA, §4.4)
 * The vector field of H̃ is the gradient of the exact H̃ above by
 * fourth-order central differences (step 1e-3 x max(1, |z_i|): truncation
 * ~1e-12, rounding ~1e-11 of |∇H̃|), far below the O(h⁴) the partial
 * steps are meant to keep; the reset conserves the H̃ function itself to
 * round-off.  Simultaneous impacts (a second constraint within 1e-9 of
 * contact and approaching at the impact) and more than
 * integrator.max_events impacts in one step (Zeno) end the run with
 * RC_ERR_ZENO and a message; an impact found at the very start of a
 * sub-step after a reset (grazing) is reported the same way.
 *
 * The step itself is one body for the host and the device,
 * src/kernels/rc_vi.h (rc_k_vi_step); this file holds the method table,
 * the workspace set-up, the jet callback of expression models and the
 * wording of the body's failures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lagrangian.h"
#include "vi.h"

/* A method: the full step's discrete Lagrangian and the impact rule. */
typedef struct vi_kind {
    int form;   /* RC_K_VI_FORM_* */
    int impact; /* RC_K_VI_* */
} vi_kind;

static const char *const vi_form_name[] = {"svc", "vi-midpoint", "sva",
                                           "svb"};

struct vi_ws {
    const rc_model *m;
    rc_k_vi k;
};

/* The expression route's jet (host only). */
static void vi_eval_expr(const void *ctx, const double *q, int order,
                         rc_k_lag_jet *j)
{
    rc_lag_eval((const rc_model *)ctx, q, order, j);
}

rc_status rc_vi_status(int code)
{
    switch (code) {
    case RC_K_VI_OK:
        return RC_OK;
    case RC_K_VI_RESIDUAL_NONFINITE:
    case RC_K_VI_UPDATE_NONFINITE:
    case RC_K_VI_STATE_NONFINITE:
        return RC_ERR_NONFINITE;
    case RC_K_VI_GRAZING:
    case RC_K_VI_NO_RESET:
    case RC_K_VI_ZENO_START:
    case RC_K_VI_SIMULTANEOUS:
    case RC_K_VI_TOO_MANY:
        return RC_ERR_ZENO;
    default:
        return RC_ERR_NOT_CONVERGED;
    }
}

void rc_vi_fail_text(const rc_k_vi_fail *w, int code, int maxit,
                     int max_events, char *buf, size_t size)
{
    const char *f = w->form >= 0 && w->form < 4 ? vi_form_name[w->form]
                                                 : "?";
    switch (code) {
    case RC_K_VI_RESIDUAL_NONFINITE:
        snprintf(buf, size,
                 "non-finite residual in the implicit %s step (h = %g)", f,
                 w->x);
        break;
    case RC_K_VI_NEWTON_SINGULAR:
        snprintf(buf, size,
                 "singular Newton matrix in the implicit %s step (h = %g)",
                 f, w->x);
        break;
    case RC_K_VI_UPDATE_NONFINITE:
        snprintf(buf, size,
                 "non-finite Newton update in the implicit %s step", f);
        break;
    case RC_K_VI_NEWTON:
        snprintf(buf, size,
                 "Newton did not converge in %d iterations in the implicit "
                 "%s step (h = %g); a smaller integrator.dt, or a larger "
                 "integrator.newton_max_iter",
                 maxit, f, w->x);
        break;
    case RC_K_VI_MASS_SINGULAR:
        snprintf(buf, size, "singular mass matrix");
        break;
    case RC_K_VI_MIDDLE_SINGULAR:
        snprintf(buf, size,
                 "singular middle-node Hessian in the modified energy");
        break;
    case RC_K_VI_D2D2_SINGULAR:
        snprintf(buf, size, "singular D2D2 L_d in the modified energy");
        break;
    case RC_K_VI_GAUSS:
        snprintf(buf, size,
                 "the Gauss stages of the modified flow did not converge "
                 "(partial step %g)",
                 w->x);
        break;
    case RC_K_VI_MASS_SINGULAR_IMPACT:
        snprintf(buf, size, "singular mass matrix at an impact");
        break;
    case RC_K_VI_GRAZING:
        snprintf(buf, size,
                 "impact on constraint %d with a non-approaching momentum "
                 "(grazing contact)",
                 w->k);
        break;
    case RC_K_VI_NO_RESET:
        snprintf(buf, size,
                 "no post-impact momentum keeps the method's energy on "
                 "constraint %d (approach speed %.3g: a grazing or resting "
                 "contact)",
                 w->k, w->x);
        break;
    case RC_K_VI_ZENO_START:
        snprintf(buf, size,
                 "an impact at the start of a sub-step right after "
                 "another (Zeno or simultaneous impacts) at t + %g",
                 w->x);
        break;
    case RC_K_VI_SIMULTANEOUS:
        snprintf(buf, size,
                 "simultaneous impacts on constraints %d and %d at t + %g",
                 w->k, w->c, w->x);
        break;
    case RC_K_VI_TOO_MANY:
        snprintf(buf, size, "more than %d impacts in one step (Zeno)",
                 max_events);
        break;
    case RC_K_VI_STATE_NONFINITE:
        snprintf(buf, size, "non-finite state after the step at t = %g",
                 w->x);
        break;
    default:
        snprintf(buf, size, "variational integrator failure %d", code);
        break;
    }
}

static rc_status vi_fail(vi_ws *w, int code, rc_error *err)
{
    rc_status st = rc_vi_status(code);
    err->status = st;
    err->file[0] = '\0';
    err->line = err->column = 0;
    snprintf(err->field, sizeof err->field, "integrator.method");
    rc_vi_fail_text(&w->k.fail, code, w->k.maxit, w->k.max_events,
                    err->message, sizeof err->message);
    return st;
}

static rc_status vi_step(void *ws, rc_model_state *s, rc_error *err)
{
    vi_ws *w = (vi_ws *)ws;
    int code = rc_k_vi_step(&w->k, s->q, s->p, s->t);
    if (code != RC_K_VI_OK)
        return vi_fail(w, code, err);
    s->t += w->k.h;
    s->steps += 1;
    return RC_OK;
}

static void vi_diagnose(void *ws, const rc_model_state *s, rc_model_diag *d)
{
    vi_ws *w = (vi_ws *)ws;
    rc_k_vi_diagnose(&w->k, s->q, s->p, &d->energy, &d->kinetic,
                     &d->potential, &d->discrete_energy,
                     &d->modified_energy, &d->min_gap);
    d->constraint_error = NAN;
    d->impacts = w->k.impacts;
    d->iterations = w->k.iters;
}

static int vi_iterations(void *ws)
{
    return ((vi_ws *)ws)->k.iters;
}

static void vi_destroy(void *ws)
{
    free(ws);
}

/* Check that method `name` can run model m with integ; 0 or a
 * field-named error. */
static rc_status vi_check(const rc_model *m, const rc_integrator_desc *integ,
                          int impact, const char *name, rc_error *err)
{
    memset(err, 0, sizeof *err);
    if (m->kind != &rc_model_kind_lagrangian) {
        err->status = RC_ERR_PARSE;
        snprintf(err->field, sizeof err->field, "integrator.method");
        snprintf(err->message, sizeof err->message,
                 "method %s needs a model of kind lagrangian, not %s", name,
                 m->kind ? m->kind->name : "(none)");
        return RC_ERR_PARSE;
    }
    if (impact == RC_K_VI_NONE && rc_lag_nconstraints(m) > 0) {
        err->status = RC_ERR_PARSE;
        snprintf(err->field, sizeof err->field, "integrator.method");
        snprintf(err->message, sizeof err->message,
                 "method %s does not handle impacts and the model has %d "
                 "unilateral constraint(s): use cva, vci, mcva-a or "
                 "mcva-c, or drop them (model.constraints: [])",
                 name, rc_lag_nconstraints(m));
        return RC_ERR_PARSE;
    }
    if (!(integ->dt > 0.0)) {
        err->status = RC_ERR_PARSE;
        snprintf(err->field, sizeof err->field, "integrator.dt");
        snprintf(err->message, sizeof err->message, "must be > 0");
        return RC_ERR_PARSE;
    }
    return RC_OK;
}

/* The body's workspace for model m, method kind vk and integ. */
static void vi_kernel_fill(const rc_model *m, const rc_integrator_desc *integ,
                           const vi_kind *vk, rc_k_vi *k)
{
    double par[8];
    int body = rc_lag_body(m);
    if (body != RC_K_LAG_EXPR)
        rc_lag_builtin_params(m, par);
    rc_k_vi_init(k, m->n, rc_lag_nconstraints(m), body,
                 body != RC_K_LAG_EXPR ? par : NULL,
                 body == RC_K_LAG_EXPR ? vi_eval_expr : NULL, m, vk->form,
                 vk->impact, integ->dt,
                 integ->newton_tol > 0.0 ? integ->newton_tol : 1e-14,
                 integ->newton_max_iter > 0 ? integ->newton_max_iter : 50,
                 integ->max_events > 0 ? integ->max_events : 1000);
}

static rc_status vi_create(const rc_model *m, const rc_integrator_desc *integ,
                           void **out, rc_error *err, const vi_kind *vk,
                           const char *name)
{
    vi_ws *w;
    rc_status st;
    *out = NULL;
    if ((st = vi_check(m, integ, vk->impact, name, err)) != RC_OK)
        return st;
    w = calloc(1, sizeof *w);
    if (!w) {
        err->status = RC_ERR_NOMEM;
        snprintf(err->message, sizeof err->message,
                 "out of memory for the method's workspace");
        return RC_ERR_NOMEM;
    }
    w->m = m;
    vi_kernel_fill(m, integ, vk, &w->k);
    *out = w;
    return RC_OK;
}

#define VI_METHOD(sym, mname, form, impact, what)                           \
    static const vi_kind sym##_kind = {form, impact};                        \
    static rc_status sym##_create(const rc_model *m,                         \
                                  const rc_integrator_desc *integ,           \
                                  void **ws, rc_error *err)                  \
    {                                                                        \
        return vi_create(m, integ, ws, err, &sym##_kind, mname);             \
    }                                                                        \
    const rc_model_method sym = {mname,       &rc_model_kind_lagrangian,     \
                                 what,        sym##_create,                  \
                                 vi_step,     vi_diagnose,                   \
                                 vi_destroy,  vi_iterations}

VI_METHOD(rc_model_method_sva, "sva", RC_K_VI_FORM_SVA, RC_K_VI_NONE,
          "Störmer–Verlet as the composition SE2(h/2) o SE1(h/2) (seed 001 "
          "§3.3); smooth only");
VI_METHOD(rc_model_method_svb, "svb", RC_K_VI_FORM_SVB, RC_K_VI_NONE,
          "Störmer–Verlet as SE1(h/2) o SE2(h/2) (seed 001 §3.3); smooth "
          "only");
VI_METHOD(rc_model_method_svc, "svc", RC_K_VI_FORM_SVC, RC_K_VI_NONE,
          "the VI of L_d^SVC (seed 001 eq. 26); smooth only");
VI_METHOD(rc_model_method_vi_midpoint, "vi-midpoint", RC_K_VI_FORM_MID,
          RC_K_VI_NONE,
          "the midpoint VI, L_d = h L((q0+q1)/2, (q1-q0)/h); smooth only");
VI_METHOD(rc_model_method_cva, "cva", RC_K_VI_FORM_SVC, RC_K_VI_CVA,
          "collision Verlet: SVC, impact reset keeps H (seed 001 §4.1)");
VI_METHOD(rc_model_method_vci, "vci", RC_K_VI_FORM_SVC, RC_K_VI_VCI,
          "variational collision integrator: SVC, reset keeps -D3 L_d "
          "(seed 001 §4.2)");
VI_METHOD(rc_model_method_mcva_a, "mcva-a", RC_K_VI_FORM_SVA, RC_K_VI_MCVA,
          "modified collision Verlet on SVA: partial steps on the O(h^4) "
          "modified Hamiltonian, reset keeps it (seed 001 §4.3)");
VI_METHOD(rc_model_method_mcva_c, "mcva-c", RC_K_VI_FORM_SVC, RC_K_VI_MCVA,
          "generalized MCVA on SVC with the O(h^3) modified Hamiltonian "
          "(seed 001 §4.4)");

/* ------------------------------------------------------------------ */
/* The body's workspace for ensembles; tests.                          */

static const vi_kind *vi_kind_of(const rc_model_method *meth)
{
    static const struct {
        const rc_model_method *meth;
        const vi_kind *kind;
    } table[] = {
        {&rc_model_method_sva, &rc_model_method_sva_kind},
        {&rc_model_method_svb, &rc_model_method_svb_kind},
        {&rc_model_method_svc, &rc_model_method_svc_kind},
        {&rc_model_method_vi_midpoint, &rc_model_method_vi_midpoint_kind},
        {&rc_model_method_cva, &rc_model_method_cva_kind},
        {&rc_model_method_vci, &rc_model_method_vci_kind},
        {&rc_model_method_mcva_a, &rc_model_method_mcva_a_kind},
        {&rc_model_method_mcva_c, &rc_model_method_mcva_c_kind},
    };
    size_t i;
    for (i = 0; i < sizeof table / sizeof table[0]; ++i)
        if (table[i].meth == meth)
            return table[i].kind;
    return NULL;
}

int rc_vi_kernel_ready(const rc_model_method *meth, const rc_model *m)
{
    return vi_kind_of(meth) != NULL &&
           m->kind == &rc_model_kind_lagrangian &&
           rc_lag_body(m) != RC_K_LAG_EXPR && m->n <= RC_K_VI_NMX;
}

rc_status rc_vi_member_setup(const rc_model_method *meth, const rc_model *m,
                             const rc_integrator_desc *integ,
                             rc_k_vi_member *d, rc_error *err)
{
    const vi_kind *vk = vi_kind_of(meth);
    rc_k_vi k;
    rc_status st;
    int i;
    memset(d, 0, sizeof *d);
    if (!vk || !rc_vi_kernel_ready(meth, m)) {
        memset(err, 0, sizeof *err);
        err->status = RC_ERR_UNSUPPORTED;
        snprintf(err->field, sizeof err->field, "integrator.method");
        snprintf(err->message, sizeof err->message,
                 "method %s on this model has no member body (a built-in "
                 "model and a method of seed 001 have)",
                 meth ? meth->name : "(none)");
        return RC_ERR_UNSUPPORTED;
    }
    if ((st = vi_check(m, integ, vk->impact, meth->name, err)) != RC_OK)
        return st;
    /* the workspace create() makes, and its model and method */
    vi_kernel_fill(m, integ, vk, &k);
    d->body = k.body;
    d->n = k.n;
    d->ng = k.ng;
    for (i = 0; i < 8; ++i)
        d->par[i] = k.par[i];
    d->form = vk->form;
    d->impact = k.impact;
    d->h = k.h;
    d->tol = k.tol;
    d->maxit = k.maxit;
    d->max_events = k.max_events;
    d->rec = -1; /* the caller asks for a record */
    for (i = 0; i < m->n; ++i) {
        d->q[i] = m->q0[i];
        d->p[i] = m->p0[i];
    }
    return RC_OK;
}

rc_status rc_vi_energies(void *ws, const double *q, const double *p,
                         double *H, double *Ed, double *Hmod)
{
    vi_ws *w = (vi_ws *)ws;
    int n = w->k.n, i, it = 0, code;
    double z[2 * RC_K_VI_NMX], z1[2 * RC_K_VI_NMX], T, U;
    for (i = 0; i < n; ++i) {
        z[i] = q[i];
        z[n + i] = p[i];
    }
    rc_k_vi_hamiltonian(&w->k, z, H, &T, &U);
    if ((code = rc_k_vi_map(&w->k, &w->k.form, w->k.h, z, z1, &it)) !=
        RC_K_VI_OK)
        return rc_vi_status(code);
    *Ed = w->k.Ed;
    return rc_vi_status(rc_k_vi_mh_method(&w->k, z, Hmod, &it));
}

int rc_vi_impact_log(const void *ws, int k, rc_vi_impact *out)
{
    const rc_k_vi *w = &((const vi_ws *)ws)->k;
    int first = w->nlog > RC_VI_LOG ? w->nlog - RC_VI_LOG : 0;
    if (k < first || k >= w->nlog)
        return 0;
    *out = w->log[k % RC_VI_LOG];
    return 1;
}

long rc_vi_impacts(const void *ws)
{
    return ((const vi_ws *)ws)->k.impacts;
}

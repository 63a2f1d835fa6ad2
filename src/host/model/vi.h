/* Methods of the "lagrangian" kind (vi.c): the smooth variational
 * integrators and the impact methods of seed 001. */
#ifndef RC_MODEL_VI_H
#define RC_MODEL_VI_H

#include "model.h"

#include "../../kernels/rc_vi_member.h"

typedef struct vi_ws vi_ws;

/* One impact as the reset saw it: the configuration, the momenta before
 * and after, and the method's own energy before and after (CVA: 0, 0;
 * the test evaluates H).  The last RC_VI_LOG are kept. */
#define RC_VI_LOG RC_K_VI_LOG
typedef rc_k_vi_impact rc_vi_impact;

extern const rc_model_method rc_model_method_sva;
extern const rc_model_method rc_model_method_svb;
extern const rc_model_method rc_model_method_svc;
extern const rc_model_method rc_model_method_vi_midpoint;
extern const rc_model_method rc_model_method_cva;
extern const rc_model_method rc_model_method_vci;
extern const rc_model_method rc_model_method_mcva_a;
extern const rc_model_method rc_model_method_mcva_c;

/* Tests: H, the discrete energy −D₃L_d(q, q1, h) of the method's L_d and
 * its truncated modified Hamiltonian at (q, p), with a workspace from the
 * method's create(). */
rc_status rc_vi_energies(void *ws, const double *q, const double *p,
                         double *H, double *Ed, double *Hmod);
long rc_vi_impacts(const void *ws);
/* Impact number k (0-based since the start): 1 and *out, or 0 when it is
 * not (or no longer) in the log. */
int rc_vi_impact_log(const void *ws, int k, rc_vi_impact *out);

/* One ensemble member of method meth on model m for the member body
 * (src/kernels/rc_vi_member.h: the CPU batch engine, a GPU thread):
 * rc_vi_kernel_ready is 1 when meth is one of this file's methods and m
 * a built-in model (whose jet the device has too); rc_vi_member_setup
 * fills d with the model, the method (as create() makes them) and m's
 * initial state (steps, every, rows are the caller's; rec = -1: no
 * configuration record), or refuses as
 * create() does (RC_ERR_UNSUPPORTED when not ready). */
int rc_vi_kernel_ready(const rc_model_method *meth, const rc_model *m);
rc_status rc_vi_member_setup(const rc_model_method *meth, const rc_model *m,
                             const rc_integrator_desc *integ,
                             rc_k_vi_member *d, rc_error *err);
/* The status and the message of the body's failure `code` with its
 * details f (the method's Newton iterations and impacts a step: maxit,
 * max_events), as the methods' step() reports them. */
rc_status rc_vi_status(int code);
void rc_vi_fail_text(const rc_k_vi_fail *f, int code, int maxit,
                     int max_events, char *buf, size_t size);

#endif

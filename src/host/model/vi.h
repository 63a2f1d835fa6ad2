/* Methods of the "lagrangian" kind (vi.c): the smooth variational
 * integrators and the impact methods of seed 001. */
#ifndef RC_MODEL_VI_H
#define RC_MODEL_VI_H

#include "model.h"

typedef struct vi_ws vi_ws;

/* One impact as the reset saw it: the configuration, the momenta before
 * and after, and the method's own energy before and after (CVA: 0, 0;
 * the test evaluates H).  The last RC_VI_LOG are kept. */
#define RC_VI_LOG 64
typedef struct rc_vi_impact {
    double q[8], p_minus[8], p_plus[8];
    double e_minus, e_plus;
    int constraint;
} rc_vi_impact;

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

#endif

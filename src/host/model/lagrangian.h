/* The "lagrangian" model kind (seed 001, Pekarek & Murphey): coordinates
 * q ∈ Rⁿ, L(q, q̇) = ½ q̇ᵀ M(q) q̇ − V(q), unilateral g_k(q) ≥ 0; a
 * built-in body (src/kernels/rc_lagrangian.h) or expressions compiled and
 * differentiated by libmatheval (src/host/expr.h).  The methods of
 * vi.c read a model of this kind only through rc_lag_eval. */
#ifndef RC_MODEL_LAGRANGIAN_H
#define RC_MODEL_LAGRANGIAN_H

#include "model.h"

#include "../../kernels/rc_lagrangian.h"

#define RC_LAG_MAX_N RC_K_LAG_MAX_N /* coordinates */
#define RC_LAG_MAX_G RC_K_LAG_MAX_G /* unilateral constraints */

/* The jet of M, V and g at one configuration, laid out as in
 * src/kernels/rc_lagrangian.h. */
typedef rc_k_lag_jet rc_lag_jet;

extern const rc_model_kind rc_model_kind_lagrangian;

/* Evaluate the jet at q: order 0 fills M, V, g; 1 adds dM, dV, dg; 2 adds
 * d2M, d2V (built-in bodies always fill everything).  Not thread-safe for
 * expression models (libmatheval keeps values in the expression). */
void rc_lag_eval(const rc_model *m, const double *q, int order,
                 rc_lag_jet *j);
/* Number of unilateral constraints of a model of this kind. */
int rc_lag_nconstraints(const rc_model *m);
/* The body: RC_K_LAG_EXPR, or the built-in's RC_K_LAG_* (whose jet is
 * rc_k_lag_builtin_eval with the parameters rc_lag_builtin_params). */
int rc_lag_body(const rc_model *m);
/* A built-in's body parameters par[8] from the model's named ones. */
void rc_lag_builtin_params(const rc_model *m, double par[8]);

/* The built-in route for a model filled by hand (tests): set m->builtin
 * and call the kind's load with the `model:` mapping. */

#endif

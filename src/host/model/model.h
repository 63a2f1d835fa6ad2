/* Models in generalized coordinates (DESIGN §9, "Models beyond
 * particles"): one `model:` block in a scenario instead of particles.
 *
 *   model:
 *     kind: lagrangian          # a kind of model (the table rc_model_kinds)
 *     builtin: cart_pendulum    # a built-in body in src/kernels/, or omit
 *                               # and give the kind's expression keys
 *     coordinates: [y, theta]   # names of q (built-ins have their own)
 *     parameters: {m1: 1.0}     # named constants, usable in expressions
 *     initial: {...}            # the kind's keys for the initial state
 *     ...                       # the kind's own keys
 *
 * The layer is three tables and one run loop:
 *   - a kind (rc_model_kind) reads its own keys of the block and fills an
 *     rc_model: what the model *is* (seed 001: L = ½q̇ᵀM(q)q̇ − V(q) with
 *     unilateral g(q) ≥ 0; seed 002: H(q, p, λ) with index-1 constraints);
 *   - a method (rc_model_method), selected by integrator.method, states
 *     the kind it accepts and steps an rc_model_state in its own
 *     workspace, in the manner of GSL's odeiv2 step types;
 *   - rc_model_run_ (run_model.c) is the one orchestration of every
 *     method: the loop, diagnostics.csv, summary.json, progress and
 *     failure handling, as rc_run does for particle systems.
 * Expressions are compiled and differentiated by src/host/expr.h. */
#ifndef RC_MODEL_H
#define RC_MODEL_H

#include <stddef.h>
#include <stdio.h>

#include "ricochet/run.h"
#include "ricochet/scenario.h"
#include "../yaml_tree.h"

#define RC_MODEL_NAME_MAX 32  /* coordinate and parameter names */
#define RC_MODEL_MAX_DIM 64   /* coordinates, multipliers, constraints */

typedef struct rc_model rc_model;
typedef struct rc_model_kind rc_model_kind;
typedef struct rc_model_method rc_model_method;

/* The loaded model: the part every kind has, and the kind's own data. */
struct rc_model {
    const rc_model_kind *kind;
    char builtin[64];       /* built-in body's name; "" for expressions */
    int n;                  /* coordinates q ∈ Rⁿ */
    char coord[RC_MODEL_MAX_DIM][RC_MODEL_NAME_MAX];
    int npar;               /* named parameters */
    char (*par_name)[RC_MODEL_NAME_MAX];
    double *par;
    /* Initial state, filled by the kind's load: q0[n], p0[n] (canonical
     * momenta; a kind that reads velocities converts them), aux0[naux]
     * (the kind's extra state: seed 002's multipliers λ). */
    double *q0, *p0, *aux0;
    int naux;
    char aux_name[RC_MODEL_MAX_DIM][RC_MODEL_NAME_MAX]; /* CSV columns;
                               the layer names them aux0, aux1, ... when
                               the kind leaves them empty */
    void *data;             /* the kind's own (compiled expressions, ...) */
};

/* A kind of model.  load() reads the kind's keys of the `model:` mapping
 * (the common keys kind, builtin, coordinates and parameters are read
 * and checked before, into m); every error names file, line and field
 * (field paths start "model."). */
struct rc_model_kind {
    const char *name;        /* model.kind */
    const char *what;        /* one line, for messages and --help */
    const char *const *keys; /* the kind's own keys (NULL-terminated) */
    /* Built-in models: names, coordinate names and default parameters. */
    rc_status (*load)(rc_model *m, const rc_ynode *map, rc_error *err);
    void (*free_data)(rc_model *m);
};

/* The state every method advances.  q, p ∈ Rⁿ; aux ∈ R^naux. */
typedef struct rc_model_state {
    double t;
    long steps;
    double *q, *p, *aux;
} rc_model_state;

/* What one step reports, and what a diagnostics row holds.  A quantity a
 * method or kind does not define is NaN (written as an empty field). */
typedef struct rc_model_diag {
    double energy;            /* H at the state */
    double kinetic, potential;
    double discrete_energy;   /* seed 001: −D₃L_d of the method's L_d */
    double modified_energy;   /* truncated modified Hamiltonian */
    double constraint_error;  /* largest equality-constraint residual */
    double min_gap;           /* smallest unilateral g_k(q) */
    long impacts;             /* impacts since the start */
    int iterations;           /* Newton iterations of the last step */
} rc_model_diag;

/* A method: a table of functions with its own workspace. */
struct rc_model_method {
    const char *name;         /* integrator.method */
    const rc_model_kind *kind;/* the kind it accepts */
    const char *what;         /* one line, for messages and the README */
    /* Allocate the workspace for model m and step dt (integ holds dt,
     * newton_tol, newton_max_iter, max_events); check what the method
     * needs of the model and refuse with a field-named error. */
    rc_status (*create)(const rc_model *m, const rc_integrator_desc *integ,
                        void **ws, rc_error *err);
    /* One step of integ->dt from s (t, steps advanced).  On failure the
     * state is that of the last completed step and err says why (Newton
     * not converged, Zeno impacts, non-finite). */
    rc_status (*step)(void *ws, rc_model_state *s, rc_error *err);
    /* Diagnostics of state s (after a step: its iteration count). */
    void (*diagnose)(void *ws, const rc_model_state *s, rc_model_diag *d);
    void (*destroy)(void *ws);
    /* Newton iterations of the last step, for the run's totals without a
     * diagnose() per step (NULL: the loop calls diagnose() instead). */
    int (*iterations)(void *ws);
};

/* The tables: NULL-terminated. */
extern const rc_model_kind *const rc_model_kinds[];
extern const rc_model_method *const rc_model_methods[];

/* The method called `name` for kind k, or NULL. */
const rc_model_method *rc_model_method_find(const rc_model_kind *k,
                                            const char *name);

/* Read the `model:` mapping into a new model (scenario.c calls this). */
rc_status rc_model_load_(const rc_ynode *map, rc_model **out, rc_error *err);
void rc_model_free_(rc_model *m);
/* For a kind's load(): add parameter `name` = value unless the scenario
 * set it (a built-in model's default).  RC_OK or RC_ERR_NOMEM. */
rc_status rc_model_param_default(rc_model *m, const char *name, double value);
/* For a kind's load(): allocate q0, p0 (n each) and aux0 (naux) as
 * zeros, once n and naux are known.  RC_OK or RC_ERR_NOMEM. */
rc_status rc_model_alloc_initial(rc_model *m);
/* Index of parameter or coordinate `name` (-1 when absent). */
int rc_model_param_index(const rc_model *m, const char *name);
int rc_model_coord_index(const rc_model *m, const char *name);

/* Allocate a state of model m set to its initial state (t = 0). */
rc_status rc_model_state_init(const rc_model *m, rc_model_state *s);
void rc_model_state_free(rc_model_state *s);

/* The particle runs' row type from a model's diagnostics (statistics,
 * on_row callbacks and ensembles): energy, kinetic, potential,
 * modified_energy, min_gap (+inf when undefined), max_equality_error,
 * solver_iterations, reflections_total = impacts; momenta 0. */
void rc_model_diag_to_row(const rc_model_state *s, const rc_model_diag *md,
                          rc_diagnostics *out);
/* diagnostics.csv of a model run: the header and one row. */
void rc_model_csv_header(FILE *f, const rc_model *m);
void rc_model_csv_row(FILE *f, const rc_model *m, const rc_model_state *s,
                      const rc_model_diag *d);

/* Run a model scenario: rc_run() calls this when the scenario has a
 * `model:` block.  Writes diagnostics.csv (columns step, time, energy,
 * kinetic, potential, discrete_energy, modified_energy,
 * max_constraint_error, min_gap, impacts, solver_iterations, then q:NAME
 * and p:NAME of every coordinate and aux[k]) and summary.json. */
rc_status rc_model_run_(const rc_scenario *scn, const rc_run_options *opt,
                        rc_run_result *result, rc_error *err);

#endif

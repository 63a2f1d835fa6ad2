/* ricochet — a mechanical system of point masses/spheres and its integrator.
 *
 * Typical use:
 *
 *     rc_system *sys = NULL;
 *     if (rc_system_create(2, &sys) != RC_OK) ...;
 *     rc_system_add_particle(sys, 1.0, 0.0, q0, p0, NULL);
 *     rc_potential_desc pot;
 *     rc_potential_desc_init(&pot, RC_POT_SPRING);
 *     pot.i = 0; pot.j = 1; pot.k = 10.0; pot.rest_length = 5.0;
 *     rc_system_add_potential(sys, &pot);
 *     rc_integrator_desc integ;
 *     rc_integrator_desc_init(&integ);
 *     integ.dt = 0.01;
 *     rc_system_set_integrator(sys, &integ);
 *     rc_system_step(sys, 1000);
 *     rc_diagnostics d; rc_system_diagnostics(sys, &d);
 *     rc_system_free(sys);
 *
 * Every function returns an rc_status; on failure rc_system_message()
 * holds a sentence describing what went wrong.  The library never prints,
 * never exits and keeps no global mutable state: two systems may be used
 * from two threads at once. */
#ifndef RICOCHET_SYSTEM_H
#define RICOCHET_SYSTEM_H

#include "ricochet/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rc_system rc_system;

/* Particle index meaning "every particle" for one-body potentials. */
#define RC_ALL (-1)

/* ------------------------------------------------------------------ */
/* Potentials V(q).  Every type provides value, gradient and
 * Hessian-vector product.                                             */

typedef enum rc_potential_type {
    /* V = -sum_i m_i a.q_i, a = `vector` (the acceleration of gravity). */
    RC_POT_GRAVITY = 0,
    /* V = k/2 (|q_i - q_j| - rest_length)^2. */
    RC_POT_SPRING,
    /* V = k/2 (|q_i - c| - rest_length)^2, c = `vector`; rest_length 0
     * gives the plain harmonic anchor k/2 |q_i - c|^2. */
    RC_POT_ANCHOR,
    /* Lennard-Jones 4 eps [(s/r)^12 - (s/r)^6] for every pair with
     * r < cutoff, shifted so that V(cutoff) = 0. */
    RC_POT_LENNARD_JONES,
    /* Weeks-Chandler-Andersen: the LJ potential cut at 2^(1/6) sigma and
     * shifted up by eps (purely repulsive). */
    RC_POT_WCA,
    /* V = strength / |q_i - c|^2, c = `vector` (seed 000 §5.2). */
    RC_POT_INVERSE_SQUARE,
    /* V = strength |q_i - c|^2 (|q_i - c|^2 - 1)^2, c = `vector`
     * (the nonlinear oscillator of seed 000 §8.0.1). */
    RC_POT_SEXTIC_WELL,
    RC_POT_TYPE_COUNT_
} rc_potential_type;

typedef struct rc_potential_desc {
    rc_potential_type type;
    int i, j;           /* particle indices; i = RC_ALL for all particles */
    double k;           /* spring/anchor stiffness */
    double rest_length; /* spring/anchor rest length */
    double epsilon;     /* LJ/WCA well depth */
    double sigma;       /* LJ/WCA length */
    double cutoff;      /* LJ cutoff radius; 0 = 2.5 sigma */
    double strength;    /* inverse-square and sextic-well prefactor */
    double vector[3];   /* gravity acceleration, or anchor/centre point */
} rc_potential_desc;

/* Fill *desc with the defaults of `type` (all indices RC_ALL, numbers 0,
 * strength 1, centre at the origin). */
void rc_potential_desc_init(rc_potential_desc *desc, rc_potential_type type);

/* Scenario name of a potential type ("spring"), NULL when out of range. */
const char *rc_potential_type_name(rc_potential_type type);

/* ------------------------------------------------------------------ */
/* Hard constraints (DESIGN §1).  Inequalities g(q) >= 0 are enforced by
 * the GVI integrator through reflections and complementarity;
 * equalities f(q) = 0 are held at every step.                         */

typedef enum rc_constraint_type {
    /* g = |q_i - q_j| - r_i - r_j; i = RC_ALL: every pair of particles */
    RC_CON_NON_OVERLAP = 0,
    /* g = normal.q_i - offset - r_i (half-space wall); i may be RC_ALL */
    RC_CON_WALL,
    /* g = radius - r_i - |q_i - point| (inside a sphere); i may be RC_ALL */
    RC_CON_CONTAINER,
    /* g = |q_i - point| - radius - r_i (outside a sphere); i may be RC_ALL */
    RC_CON_OBSTACLE,
    /* f = |q_i - q_j| - length (a massless rod between two particles) */
    RC_CON_ROD,
    /* f = |q_i - point| - length (a rod to a fixed pivot: pendulum) */
    RC_CON_PENDULUM,
    /* f = normal.q_i - offset (particle held on a plane; in 2-D a line) */
    RC_CON_PLANE,
    RC_CON_TYPE_COUNT_
} rc_constraint_type;

typedef struct rc_constraint_desc {
    rc_constraint_type type;
    int i, j;          /* particles (RC_ALL where allowed) */
    double normal[3];  /* wall/plane normal (normalised when added) */
    double offset;     /* wall/plane offset along the normal */
    double point[3];   /* container/obstacle centre, pendulum pivot */
    double radius;     /* container/obstacle radius */
    double length;     /* rod/pendulum length; < 0 = the initial distance */
} rc_constraint_desc;

void rc_constraint_desc_init(rc_constraint_desc *desc,
                             rc_constraint_type type);
const char *rc_constraint_type_name(rc_constraint_type type);

/* ------------------------------------------------------------------ */
/* Integrators.                                                        */

typedef enum rc_method {
    RC_METHOD_SV = 0,   /* Störmer–Verlet, velocity form (explicit);
                           ignores constraints */
    RC_METHOD_MIDPOINT, /* implicit midpoint, Newton-solved; ignores
                           constraints */
    RC_METHOD_GVI,      /* Kaufman & Pai's generalized variational
                           integrator (seed 000, Algorithm 1) */
    RC_METHOD_CVA,      /* collision Verlet: Störmer–Verlet with event
                           times found inside the step, reflections
                           conserving H (seed 001, Algorithm 1) */
    RC_METHOD_MCVA,     /* modified collision Verlet: as CVA, reflections
                           conserving Störmer–Verlet's H~ */
    RC_METHOD_DIRECT_ENDPOINT, /* implicit midpoint with the constraint
                           force at the end point (seed 000 App. B) */
    RC_METHOD_DIRECT_MIDPOINT, /* implicit midpoint with the constraint
                           at the midpoint (seed 000 App. B) */
    RC_METHOD_AVI,      /* asynchronous variational integrator: one clock
                           per potential term, inequality constraints
                           replaced by nested penalty layers (seeds 003,
                           004); CPU only, src/host/avi.c */
    RC_METHOD_COUNT_
} rc_method;

typedef enum rc_base {
    RC_BASE_VERLET = 0, /* Verlet quadrature (eq. 52): Störmer–Verlet */
    RC_BASE_MIDPOINT,   /* midpoint quadrature (eq. 51): implicit midpoint */
    RC_BASE_COUNT_
} rc_base;

typedef enum rc_reflection {
    RC_REFLECT_GENERALIZED = 0, /* Algorithm 2: repeated NNLS passes */
    RC_REFLECT_MOREAU,          /* Algorithm 3: one pass over the set */
    RC_REFLECT_COUNT_
} rc_reflection;

typedef enum rc_energy {
    RC_ENERGY_HAMILTONIAN = 0, /* reflections conserve H */
    RC_ENERGY_MODIFIED,        /* reflections conserve Störmer–Verlet's H~ */
    RC_ENERGY_COUNT_
} rc_energy;

/* integrator.collisions of large systems */
enum { RC_COLLISIONS_AUTO = 0, RC_COLLISIONS_GVI = 1, RC_COLLISIONS_EXACT = 2 };

/* AVI settings (method avi; README "Asynchronous variational
 * integrator").  Steps of 0 mean "dt".  Layer l = 1, 2, ... of a contact
 * with gap g is V_l = k_l/2 (eta_l - g)^2 for g < eta_l, 0 beyond, with
 *   eta_l = eta1 l^(-eta_exponent),
 *   h_l   = layer_step l^(-stiffness_exponent/2),
 *   k_l   = mu (layer_resolution / h_l)^2   (mu: the pair's reduced mass),
 * so every layer is resolved alike (h_l sqrt(k_l/mu) = layer_resolution)
 * and stiffness grows as l^stiffness_exponent. */
typedef struct rc_avi_desc {
    double gravity_step;   /* per-particle gravity terms */
    double spring_step;    /* each spring */
    double anchor_step;    /* each anchored particle */
    double pair_step;      /* the Lennard-Jones/WCA term (all pairs) */
    double external_step;  /* inverse-square and sextic-well terms */
    double eta1;           /* outermost layer thickness; 0 = automatic
                              (0.05 x the smallest positive radius, else
                              1e-3) */
    double eta_exponent;   /* eta_l = eta1 l^-e: 1 (dense, slow contact)
                              or 0.25 (fast impacts), seed 003 §5 */
    double layer_step;     /* h_1; 0 = dt */
    double layer_resolution;  /* h_l sqrt(k_l/mu); default 0.1 */
    double stiffness_exponent;/* k_l = k_1 l^p; default 3 */
    int max_layers;        /* layers a contact may open before the run is
                              stopped as unsafe; default 64, at most 1024 */
    double skin;           /* neighbour-list skin of the proximity test;
                              0 = automatic (0.5 x mean radius, at least
                              4 eta1) */
    int reverse_insertion; /* tests only: push the initial events in
                              reverse order (the result must not change) */
} rc_avi_desc;

typedef struct rc_integrator_desc {
    rc_method method;
    double dt;          /* time step h > 0 */
    double newton_tol;  /* implicit solves: stop when the Newton update
                           is below newton_tol * max(1, |x|); default 1e-14 */
    int newton_max_iter;/* implicit solves: iteration cap; default 50 */
    /* GVI only: */
    rc_base base;
    rc_reflection reflection;
    rc_energy energy;
    double eps_g;       /* contact distance tolerance; 0 = automatic
                           (1e-9 x the system's length scale) */
    double eps_v;       /* resting normal-speed tolerance; 0 = automatic
                           (1e-8 x the system's speed scale) */
    int max_reflection_passes; /* Algorithm 2 pass cap; default 1000 */
    int linearized;     /* GVI: inequality constraints linearized at the
                           start of each step (seed 000 Fig. 8(d)); for
                           comparison only: it breaks rotation invariance */
    int collisions;     /* GVI, large systems (a box): RC_COLLISIONS_*:
                           auto (0: exact for ballistic spheres, gvi with
                           a pair potential, gravity or Moreau
                           reflection), gvi (reflection at the start of
                           the step) or exact (impacts at their times) */
    int max_events;     /* CVA/MCVA: events allowed in one step before it
                           is reported as Zeno; default 1000 */
    int seed_exact;     /* 1: seed 000 Algorithm 1 to the letter.  0
                           (default): with three refinements, each
                           documented in src/host/gvi.c and the README:
                           equalities in the predictor, the extended set
                           closed under the reflected predictor, and
                           contacts a reflection cannot resolve held by
                           the complementarity of the position update */
    rc_avi_desc avi;    /* method avi only */
} rc_integrator_desc;

void rc_integrator_desc_init(rc_integrator_desc *desc);
const char *rc_method_name(rc_method method);
/* 1 when `method` handles constraints (gvi, cva, mcva, direct-*). */
int rc_method_takes_constraints(rc_method method);
const char *rc_base_name(rc_base base);
const char *rc_reflection_name(rc_reflection reflection);
const char *rc_energy_name(rc_energy energy);

/* ------------------------------------------------------------------ */
/* Diagnostics of the current state (DESIGN §1, §8).                   */

typedef struct rc_diagnostics {
    long step;
    double time;
    double energy;          /* H = T + V */
    double modified_energy; /* Störmer–Verlet modified Hamiltonian H~ to
                               O(h^4) with the integrator's h */
    double kinetic, potential;
    double momentum[3];         /* total linear momentum (unused axes 0) */
    double angular_momentum[3]; /* about the origin; 2-D systems use [2] */
    double min_gap;             /* smallest inequality constraint value;
                                   +inf when there is none */
    double max_equality_error;  /* largest |f|; 0 when there is none */
    int active_contacts;        /* constraints active in the last step */
    int reflections;            /* reflection passes in the last step */
    int solver_iterations;      /* solver iterations in the last step */
    long reflections_total;     /* reflection passes since the start */
} rc_diagnostics;

/* Counters of an AVI run (method avi), since the start. */
#define RC_AVI_STATS_LAYERS 16 /* ticks of layers >= 16 are summed in [15] */
typedef struct rc_avi_stats {
    long ticks;              /* all ticks: potential terms and layers */
    long term_ticks;         /* ticks of the smooth potential terms */
    long layer_ticks[RC_AVI_STATS_LAYERS]; /* ticks of layer l at [l-1] */
    long activations;        /* layers opened by the proximity test */
    long certificates;       /* proximity certificates computed */
    long rebuilds;           /* neighbour-list rebuilds */
    int active_contacts;     /* contacts with >= 1 open layer, now */
    int active_layers;       /* open layers over all contacts, now */
    int deepest_layer;       /* deepest layer ever opened (0: none) */
    double min_gap;          /* smallest gap seen at any layer tick */
} rc_avi_stats;

/* ------------------------------------------------------------------ */
/* The system.                                                         */

/* Create an empty system in `dimension` = 1, 2 or 3 space dimensions. */
rc_status rc_system_create(int dimension, rc_system **out);
void rc_system_free(rc_system *sys);

/* The message of the last failed call on this system ("" when none). */
const char *rc_system_message(const rc_system *sys);

/* Add a particle; q and p have `dimension` entries.  mass > 0, radius
 * >= 0, all finite.  *index (may be NULL) receives its index. */
rc_status rc_system_add_particle(rc_system *sys, double mass, double radius,
                                 const double *q, const double *p,
                                 int *index);
rc_status rc_system_add_potential(rc_system *sys,
                                  const rc_potential_desc *desc);
rc_status rc_system_set_integrator(rc_system *sys,
                                   const rc_integrator_desc *desc);
/* Add a hard constraint (after the particles it names). */
rc_status rc_system_add_constraint(rc_system *sys,
                                   const rc_constraint_desc *desc);
/* Number of constraint terms after expansion of RC_ALL (pairs, walls). */
int rc_system_constraint_count(const rc_system *sys);

/* CPU threads used by this system's loops; 0 = OpenMP's default. */
rc_status rc_system_set_threads(rc_system *sys, int threads);

/* Advance `steps` steps.  On failure the state is that of the last
 * completed step and rc_system_message() says what failed. */
rc_status rc_system_step(rc_system *sys, long steps);

int rc_system_dimension(const rc_system *sys);
int rc_system_count(const rc_system *sys);
double rc_system_time(const rc_system *sys);
long rc_system_steps_taken(const rc_system *sys);

/* Copy positions/momenta (count * dimension doubles, particle-major).
 * Either pointer may be NULL. */
rc_status rc_system_get_state(const rc_system *sys, double *q, double *p);
rc_status rc_system_set_state(rc_system *sys, const double *q,
                              const double *p);
/* Mass and radius of every particle (count doubles each, may be NULL). */
rc_status rc_system_get_particles(const rc_system *sys, double *mass,
                                  double *radius);

rc_status rc_system_diagnostics(rc_system *sys, rc_diagnostics *out);

/* AVI counters; RC_ERR_STATE when the method is not avi or nothing ran. */
rc_status rc_system_avi_stats(const rc_system *sys, rc_avi_stats *out);

/* Potential energy and its gradient at arbitrary positions q (count *
 * dimension doubles); grad may be NULL.  For tests and tools. */
rc_status rc_system_potential(rc_system *sys, const double *q, double *energy,
                              double *grad);
/* Hessian-vector product (d^2 V(q)) u into out. */
rc_status rc_system_hessian_vector(rc_system *sys, const double *q,
                                   const double *u, double *out);

/* Check that the current state satisfies the constraints: equalities to
 * 1e-9 of the length scale with no momentum off them, inequalities not
 * violated by more than that.  GVI runs this before its first step;
 * RC_ERR_INVALID with a message naming the constraint term otherwise. */
rc_status rc_system_check_constraints(rc_system *sys);

/* The tolerances GVI uses (after automatic scaling), for reports. */
rc_status rc_system_tolerances(rc_system *sys, double *eps_g, double *eps_v);

/* Apply one reflection of the current momenta against the constraint
 * terms listed in `set` (m indices < rc_system_constraint_count), with
 * the integrator's reflection kind and energy, at most `max_passes`
 * passes (<= 0: the integrator's cap).  *passes receives the passes
 * done.  Returns RC_ERR_NOT_CONVERGED when the cap stopped it.  For
 * tests and tools; GVI calls the same code at every step. */
rc_status rc_system_reflect(rc_system *sys, const int *set, int m,
                            int max_passes, int *passes);
/* The energy a reflection conserves (H, or H~ for energy = modified) of
 * the current state. */
rc_status rc_system_reflection_energy(rc_system *sys, double *energy);
/* Value of constraint term k at the current positions, and the speed
 * along its gradient, grad g_k . M^-1 p. */
rc_status rc_system_constraint_value(rc_system *sys, int k, double *value,
                                     double *normal_speed);

#ifdef __cplusplus
}
#endif
#endif

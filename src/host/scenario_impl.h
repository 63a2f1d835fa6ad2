/* Private layout of rc_scenario: the typed, checked content of a file. */
#ifndef RC_SCENARIO_IMPL_H
#define RC_SCENARIO_IMPL_H

#include "ricochet/scenario.h"

typedef struct rc_scn_particle {
    double mass, radius;
    double q[3], p[3];
} rc_scn_particle;

/* Ensembles (DESIGN §5): rules that set a scenario field per member. */
typedef enum rc_vary_kind {
    RC_VARY_LINSPACE = 0, /* a + (b - a) i / (n - 1) */
    RC_VARY_UNIFORM,      /* a + (b - a) u, u from the member's stream */
    RC_VARY_NORMAL,       /* mean a, standard deviation b */
    RC_VARY_VALUES        /* values[i] */
} rc_vary_kind;

typedef struct rc_vary_rule {
    char path[200];  /* scenario field path, or map.<param> */
    rc_vary_kind kind;
    double a, b;
    long count;      /* points of this axis (grid) */
    double *values;  /* RC_VARY_VALUES */
    char **texts;    /* RC_VARY_VALUES given as words (a method name):
                        the text of each value, values[] unused */
    long nvalues;
    /* the path's syntax, read once at load (rc_rule_target): a member's
     * parameters and state are set without re-reading the text */
    int target;      /* RC_TARGET_* */
    int ti, tj;      /* particles[ti] ... [tj] */
} rc_vary_rule;

/* What a rule's path names, syntactically (the scenario decides whether
 * it is valid: particle range, dimension, velocity-given particles). */
enum {
    RC_TARGET_OTHER = 0, /* anything else (map.*, integrator.method,
                            particles[i].<another key>, ...) */
    RC_TARGET_DT,        /* integrator.dt */
    RC_TARGET_POSITION,  /* particles[i].position[j] */
    RC_TARGET_MOMENTUM,  /* particles[i].momentum[j] */
    RC_TARGET_MASS,      /* particles[i].mass */
    RC_TARGET_RADIUS     /* particles[i].radius */
};

/* Named initial-condition maps (seed 001 §5: Xi(beta)). */
enum { RC_MAP_NONE = 0, RC_MAP_CART_PENDULUM = 1, RC_MAP_CART_PENDULUM_XI = 2 };

typedef struct rc_ensemble_spec {
    int present;
    long members;
    unsigned long long seed;
    int grid;
    int nrules;
    rc_vary_rule *rules;
    int has_reference;
    double ref_dt;
    rc_method ref_method;
    const struct rc_model_method *ref_model_method; /* a model's reference
                                 method (reference.method, else the
                                 scenario's integrator.method); NULL for
                                 particle systems, which use ref_method */
    int map;          /* RC_MAP_* */
    double map_par[6]; /* cart_pendulum: length, y, theta, ydot, thetadot;
                          cart_pendulum_xi: length and [5] = beta */
    long *trace;      /* output.trace_members */
    int ntrace;
} rc_ensemble_spec;

/* Large systems (DESIGN §6): a box, and a lattice set-up instead of a
 * particle list. */
enum { RC_MD_FCC = 0, RC_MD_SC = 1, RC_MD_RANDOM = 2 }; /* = RC_LATTICE_* */

typedef struct rc_md_spec {
    int present;          /* `box` given: the large-system engine runs */
    int periodic[3];
    double lengths[3];
    int have_lengths;     /* box.lengths given (else from the lattice) */
    int lattice;          /* `lattice` given (particles generated) */
    int kind;             /* RC_MD_* */
    long n;
    double eta, temperature, radius, mass;
    int radius_dist;      /* 0 fixed, 1 uniform [a, b], 2 normal (a, b) */
    double radius_a, radius_b;
    double fill_height;   /* lattice only in the lowest fill_height of the
                             last axis (0: the whole box) */
    unsigned long long seed;
    int rdf_bins;         /* output.rdf_bins */
    double rdf_rmax;      /* output.rdf_rmax (0: automatic) */
    long rdf_every;       /* output.rdf_every: steps between g(r) samples
                             (0: none; -1: automatic, run_md.c) */
    double equilibrate;   /* output.equilibrate: time before averages */
    char species[32];     /* output.species: the particles' name in
                             trajectories (default "X") */
    char length_unit[32], time_unit[32]; /* output.units: the labels of
                             the H5MD numbers ("" with units: none) */
    char read_path[2048]; /* read.file as opened ("" without read:) */
    long read_frame;      /* the frame read, from 0 */
    long read_frames;     /* frames in the file (-1: not counted) */
    int read_velocities;  /* 1: the file's velocities; 0: drawn */
    int read_h5md;        /* 1: the file was H5MD, 0: extended XYZ */
    long read_seed;       /* read.seed, .temperature, .radius, .mass (the */
    double read_temperature, read_radius, read_mass; /* echo's; defaults */
    double gravity[3];    /* from a gravity potential */
    int pair;             /* index of the lennard_jones/wca term, -1 none */
} rc_md_spec;

/* Where an item of a list came from: its node's file (borrowed, as the
 * tree's labels), line and column, and its index in the list. */
typedef struct rc_scn_place {
    const char *source;
    int line, column;
    int item;
} rc_scn_place;

struct rc_scenario {
    char path[1024];
    char name[128];
    char description[1024];
    int dimension;
    int n;
    rc_scn_particle *particles;
    int npot;
    rc_potential_desc *potentials;
    int ncon;
    rc_constraint_desc *constraints;
    rc_scn_place *con_place; /* [ncon]: the constraints[] item of each */
    int con_placed;          /* terms with a place so far (loading) */
    rc_integrator_desc integ;
    double duration;
    long every;            /* resolved: >= 1 */
    rc_trajectory_format trajectory;
    long trajectory_every; /* resolved: >= 1 */
    double checkpoint_every; /* output.checkpoint_every: simulated time
                                between checkpoints (0: none) */
    double checkpoint_wall;  /* ... or wall-clock seconds (0: none) */
    double log_every;        /* output.log_every: wall-clock seconds
                                between status lines when stderr is not
                                a terminal (CLI; default 30) */
    rc_ensemble_spec ens;
    rc_md_spec md;
    char *source;           /* the file's text as loaded (checkpoints);
                               NULL when it could not be kept */
    char **overrides;       /* the --set assignments, in order */
    int n_overrides;
    int member;             /* an ensemble member (rc_scenario_member_):
                               the base's load did the whole-run checks */
    /* A model in generalized coordinates (src/host/model/): the `model:`
     * block instead of particles; NULL for a particle system. */
    struct rc_model *model;
    const struct rc_model_method *model_method; /* integrator.method */
    struct rc_ynode *model_node; /* the block as loaded (its JSON echo) */
    struct rc_ynode *tree;  /* the checked YAML tree, kept for members and
                               for the places of set-up errors (NULL in a
                               member) */
};

/* rc_scenario_load from text already in memory (a checkpoint's copy of
 * the file); `path` is the file it came from, for messages and the
 * default name.  text NULL: read the file. */
rc_status rc_scenario_load_text_(const char *path, const char *text,
                                 const char *const *overrides, int n_overrides,
                                 rc_scenario **out, rc_error *err);

/* The radius of particle k of a scenario's lattice (scn->md.lattice;
 * its mass is md->mass): such a scenario keeps no particle table. */
double rc_md_lattice_radius(const rc_md_spec *md, long k);

/* Member k of an ensemble scenario: the base tree with the member's
 * values applied (values[r] receives rule r's value; may be NULL). */
rc_status rc_scenario_member_(const rc_scenario *base, long k, double *values,
                              rc_scenario **out, rc_error *err);
/* Index of member k along rule r (grid digit, or k), and the text of a
 * word-valued rule's value (NULL for numeric rules). */
long rc_rule_index_(const rc_ensemble_spec *e, long k, int r);
const char *rc_rule_text_(const rc_ensemble_spec *e, long k, int r);
/* Value of rule r for member k (NaN for a word-valued rule). */
double rc_rule_value_(const rc_ensemble_spec *e, long k, int r);
/* 1 when every rule sets a particle's position or momentum component, a
 * map parameter, or a run parameter (integrator.dt, a particle's mass
 * or radius, integrator.method among the methods of the batch engine's
 * member body; *params has bit RC_PARAM_DT, RC_PARAM_MASS,
 * RC_PARAM_RADIUS or RC_PARAM_METHOD set for each that a rule sets, else
 * 0), so that members differ from the base scenario only in their
 * initial state and those (the batch engine's case). */
enum { RC_PARAM_DT = 1, RC_PARAM_MASS = 2, RC_PARAM_RADIUS = 4,
       RC_PARAM_METHOD = 8 };
int rc_member_state_supported_(const rc_scenario *base, int *params);
/* The same for the members' reference runs (ensemble.reference), which
 * set integrator.dt and integrator.method themselves: rules on those
 * two are passed over (*params never has RC_PARAM_DT). */
int rc_reference_state_supported_(const rc_scenario *base, int *params);
/* A member's run parameters (the rules' integrator.dt, particle masses
 * and radii, integrator.method over the base's): what its own scenario and system would
 * hold, the same bits (the per-member engine round-trips a value through
 * %.17g, which is exact).  Arrays of n (mass, inv_mass, radius) and
 * n*dim (per coordinate) doubles, the caller's. */
typedef struct rc_member_params {
    double dt;
    rc_method method;
    long steps, every, rows;
    double *mass, *inv_mass, *radius, *mass_c, *inv_mass_c;
} rc_member_params;
/* Fill mp for member k; 1 when the member's scenario would load and
 * build (dt in (0, duration], masses > 0, radii >= 0, all finite), else
 * 0 (the per-member engine then words why). */
int rc_member_params_(const rc_scenario *base, long k, rc_member_params *mp);
/* Member k's initial state (n*dim doubles each, particle-major) in that
 * case: the same numbers rc_scenario_member_ gives, without the YAML
 * round trip; values[r] receives rule r's value (may be NULL). */
void rc_member_state_(const rc_scenario *base, long k, double *values,
                      double *q, double *p);
/* Points along rule r (grid axis length; 1 for random rules in a grid;
 * members otherwise). */
long rc_rule_points_(const rc_ensemble_spec *e, int r);

#endif

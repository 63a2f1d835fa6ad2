/* rc_run() for a scenario with a `box` (run_md.c). */
#ifndef RC_MD_RUN_H
#define RC_MD_RUN_H

#include "ricochet/run.h"
#include "../../kernels/rc_box.h"

/* What a large-system run measured (also in summary.json). */
typedef struct rc_md_run_info {
    double packing_fraction;
    double z_mean, z_err;        /* compressibility factor, block SE */
    double z_reference;          /* Carnahan–Starling (3-D), Henderson (2-D) */
    double gamma_mean, gamma_err; /* collisions per particle per time */
    double temperature;          /* mean over the averaged rows */
    double diffusion;            /* from the MSD slope */
    double energy_error;         /* max |E - E0| / |E0| over rows */
    double momentum_error;       /* max |P - P0| component over rows */
    double max_overlap;          /* largest overlap at any row */
    long collisions, largest_island, pgs_islands;
    double pgs_residual;
    double particle_steps_per_second;
    long equilibrate_steps;
    /* wall seconds: predictor and update, broadphase, contact tests and
     * islands, reflections, observables and output (the rest of the
     * loop); the rest split into the rows' reductions, g(r) (copy and
     * histogram), trajectory frames, writing the rows, and other (t_output
     * less those four) */
    double t_update, t_broad, t_contacts, t_reflect, t_output;
    double t_observables, t_rdf, t_trajectory, t_rows, t_other;
    long rdf_every;   /* steps between g(r) samples (0: none) */
    long rdf_samples; /* configurations in rdf.csv */
    int rdf_beside;   /* g(r) taken beside the engine (rc_md_rdf_job) */
    long candidate_builds;
    double bytes_per_particle; /* engine memory / particles */
} rc_md_run_info;

/* The initial state of a scenario with a box (the listed or read
 * particles, or the lattice placed with Maxwell–Boltzmann momenta): the
 * box, then n*dim positions and momenta and n masses and radii into the
 * caller's arrays.  rc_md_check_start_ (check.h) runs it too. */
rc_status rc_md_initial_(const rc_scenario *scn, rc_k_box *box, double *q,
                         double *p, double *mass, double *radius,
                         rc_error *err);

/* The engine's parameters for a scenario (dt, gravity, the pair
 * potential, reflection, collision times, the island tiers), with
 * `threads` OpenMP threads: what rc_run() and an rc_md_session use. */
struct rc_md_params;
void rc_md_params_(const rc_scenario *scn, int threads,
                   struct rc_md_params *par);

/* The pressure of an interval of dt during which the impulses' virials
 * summed to `virial` (kinetic energy kin at its end): T = 2 kin / (d
 * (N - 1)), the kinetic part N T / V, the pair forces' virial at q and
 * the collision virial, and Z = P V / (N T) (NaN when T = 0). */
struct rc_md;
void rc_md_pressure_(const struct rc_md *md, double kin, double virial,
                     double dt, double *T, double *pk, double *pv,
                     double *pc, double *z);

rc_status rc_md_run_(const rc_scenario *scn, const rc_run_options *opt,
                     rc_md_run_info *info, rc_run_result *result,
                     rc_error *err);

#endif

/* ricochet — a large system (a scenario with a `box`) in memory.
 *
 * rc_run() integrates a large system to the end and writes its
 * observables to files; a session holds one instead, on the CPU engine
 * rc_run() uses (the same initial state, the same steps, bit for bit),
 * and is stepped and read by the caller: the Python package's
 * LargeSystem.  No outputs are written. */
#ifndef RICOCHET_MD_H
#define RICOCHET_MD_H

#include "ricochet/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rc_md_session rc_md_session;

/* Set up a scenario with a `box` as rc_run() does (lattice or read
 * particles, velocities, walls, the checks of rc_scenario_check) with
 * `threads` CPU threads (0: OpenMP's default).  RC_ERR_INVALID for a
 * scenario without a box; the set-up's errors with their place in *err. */
rc_status rc_md_session_create(const rc_scenario *scn, int threads,
                               rc_md_session **out, rc_error *err);
void rc_md_session_free(rc_md_session *s);

/* Advance `steps` steps of integrator.dt.  On failure the state is that
 * of the last completed step and rc_md_session_message() says why. */
rc_status rc_md_session_step(rc_md_session *s, long steps);
const char *rc_md_session_message(const rc_md_session *s);

int rc_md_session_count(const rc_md_session *s);
int rc_md_session_dimension(const rc_md_session *s);
long rc_md_session_steps(const rc_md_session *s);
double rc_md_session_time(const rc_md_session *s);
/* Box edge lengths and periodic flags (dimension entries each). */
void rc_md_session_box(const rc_md_session *s, double *lengths,
                       int *periodic);

/* Positions wrapped into the box, momenta, and the box lengths each
 * sphere crossed (unwrapped = q + image L): count * dimension entries,
 * particle-major; any pointer may be NULL. */
rc_status rc_md_session_state(rc_md_session *s, double *q, double *p,
                              int *image);
/* Mass and radius of every sphere (count entries; may be NULL). */
rc_status rc_md_session_particles(const rc_md_session *s, double *mass,
                                  double *radius);

/* The observables of observables.csv at the current state; pressures
 * and Z over the interval since the previous rc_md_session_observe (or
 * the start), the msd from the positions at the start. */
typedef struct rc_md_observables {
    long step;
    double time;
    double temperature;     /* 2 KE / (d (N - 1)) */
    double kinetic, potential, energy;
    double momentum[3];
    double pressure, pressure_kinetic, pressure_virial, pressure_collision;
    double z;               /* P V / (N k T) */
    long collisions;        /* pair collisions in the interval */
    long collisions_total, wall_collisions_total, largest_island;
    double msd;             /* unwrapped, from the start */
    double max_overlap;
} rc_md_observables;

rc_status rc_md_session_observe(rc_md_session *s, rc_md_observables *out);

#ifdef __cplusplus
}
#endif
#endif

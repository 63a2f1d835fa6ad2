/* ricochet — scenario files (YAML) and the errors they produce.
 *
 * A scenario describes one system, its integrator and its outputs
 * (DESIGN §8).  Loading checks every field; an error names the file, the
 * line and column, and the field path (`potentials[2].k`). */
#ifndef RICOCHET_SCENARIO_H
#define RICOCHET_SCENARIO_H

#include <stddef.h>

#include "ricochet/status.h"
#include "ricochet/system.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where and why loading or running failed. */
typedef struct rc_error {
    rc_status status;
    char file[1200];   /* scenario file, "--set" for overrides, "" if none */
    int line, column;  /* 1-based; 0 when not tied to a place in a file */
    char field[256];   /* field path, e.g. "potentials[2].k"; "" if none */
    char message[1024];
} rc_error;

/* Render "file:line:column: field: message" (parts that are unknown are
 * left out) into buf; returns buf. */
const char *rc_error_format(const rc_error *err, char *buf, size_t size);

typedef struct rc_scenario rc_scenario;

/* Load and check a scenario file.  `overrides` are n_overrides strings
 * "PATH=VALUE" (PATH like `integrator.dt` or `particles[0].position`,
 * VALUE a YAML value such as `0.01` or `[1, 2]`) applied before checking.
 * On failure *out is NULL and *err says what and where. */
rc_status rc_scenario_load(const char *path, const char *const *overrides,
                           int n_overrides, rc_scenario **out, rc_error *err);
void rc_scenario_free(rc_scenario *scn);

/* Build a system (particles, potentials, integrator) from a scenario. */
rc_status rc_scenario_build(const rc_scenario *scn, rc_system **out,
                            rc_error *err);

/* Check what a run would refuse at its start, without running: a small
 * system is built and its constraints checked at the initial state; a
 * large system (a `box`) is set up as rc_run() sets it up (the box, the
 * placement of the lattice, masses, radii, walls, overlaps, and a box
 * that holds the contact range of the first step) and freed.  RC_OK, or
 * RC_ERR_PARSE with the file, line, column and field to blame
 * (RC_ERR_NOMEM when out of memory).  rc_run() refuses the same states
 * with the same errors before it writes anything. */
rc_status rc_scenario_check(const rc_scenario *scn, rc_error *err);

/* The scenario as a canonical JSON document (every field explicit,
 * defaults filled in).  JSON is valid YAML: loading it gives back the
 * same scenario.  The caller frees the string with free(). */
char *rc_scenario_to_json(const rc_scenario *scn);

/* 1 when the scenario has a `box` (a large system: rc_run() then writes
 * observables.csv, rdf.csv, msd.csv and a summary.json with the
 * compressibility factor instead of diagnostics.csv). */
int rc_scenario_is_large_system(const rc_scenario *scn);

/* 1 when the scenario has a `model:` block (a system in generalized
 * coordinates, src/host/model/): rc_run() then writes diagnostics.csv
 * with the model's energies and coordinates, and summary.json. */
int rc_scenario_is_model(const rc_scenario *scn);

/* What a run needs to know besides the system. */
typedef enum rc_trajectory_format {
    RC_TRAJECTORY_NONE = 0,
    RC_TRAJECTORY_XYZ,
    RC_TRAJECTORY_H5MD    /* large systems, in builds with HDF5 */
} rc_trajectory_format;

typedef struct rc_scenario_run {
    double dt;           /* integrator.dt */
    double duration;     /* integrator.duration */
    long steps;          /* round(duration / dt) */
    long every;          /* output.every: steps between diagnostics rows */
    rc_trajectory_format trajectory;
    long trajectory_every; /* steps between trajectory frames */
    const char *method;  /* integrator.method name */
    const char *name;    /* scenario `name`, or the file's base name */
    double log_every;    /* output.log_every: wall-clock seconds between
                            the CLI's status lines when stderr is not a
                            terminal (default 30) */
} rc_scenario_run;

void rc_scenario_run_info(const rc_scenario *scn, rc_scenario_run *out);
const char *rc_scenario_path(const rc_scenario *scn);

#ifdef __cplusplus
}
#endif
#endif

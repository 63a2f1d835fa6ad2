"""cffi API-mode (out-of-line) builder of ricochet._ricochet.

The declarations below are the parts of the public C API
(include/ricochet/*.h) the package uses.  Structures end with `...;` and
fixed-size arrays are `[...]`, so cffi takes every size, offset and enum
value from the C compiler when the generated source is compiled against
the real headers: nothing about their layout is guessed here.

Run by python/CMakeLists.txt: `python build_ffi.py OUT.c` writes the
extension's C source (ffibuilder.emit_c_code); CMake compiles it and links
it against the static libricochet.
"""
import sys

import cffi

CDEF = r"""
typedef enum rc_status {
    RC_OK, RC_ERR_INVALID, RC_ERR_NOMEM, RC_ERR_IO, RC_ERR_PARSE,
    RC_ERR_NOT_CONVERGED, RC_ERR_NONFINITE, RC_ERR_UNSUPPORTED,
    RC_ERR_STATE, RC_ERR_DEVICE, RC_ERR_CONSTRAINT, RC_ERR_ZENO, ...
} rc_status;
const char *rc_version(void);
const char *rc_status_str(rc_status status);
const char *rc_status_name(rc_status status);

/* system.h */
typedef struct rc_system rc_system;
typedef struct rc_diagnostics {
    long step;
    double time;
    double energy;
    double modified_energy;
    double kinetic;
    double potential;
    double momentum[3];
    double angular_momentum[3];
    double min_gap;
    double max_equality_error;
    int active_contacts;
    int reflections;
    int solver_iterations;
    long reflections_total;
    ...;
} rc_diagnostics;
void rc_system_free(rc_system *sys);
const char *rc_system_message(const rc_system *sys);
rc_status rc_system_set_threads(rc_system *sys, int threads);
rc_status rc_system_step(rc_system *sys, long steps);
int rc_system_dimension(const rc_system *sys);
int rc_system_count(const rc_system *sys);
double rc_system_time(const rc_system *sys);
long rc_system_steps_taken(const rc_system *sys);
rc_status rc_system_get_state(const rc_system *sys, double *q, double *p);
rc_status rc_system_set_state(rc_system *sys, const double *q,
                              const double *p);
rc_status rc_system_get_particles(const rc_system *sys, double *mass,
                                  double *radius);
rc_status rc_system_diagnostics(rc_system *sys, rc_diagnostics *out);
rc_status rc_system_potential(rc_system *sys, const double *q,
                              double *energy, double *grad);
int rc_system_constraint_count(const rc_system *sys);

/* scenario.h */
typedef struct rc_error {
    rc_status status;
    char file[...];
    int line;
    int column;
    char field[...];
    char message[...];
    ...;
} rc_error;
const char *rc_error_format(const rc_error *err, char *buf, size_t size);
typedef struct rc_scenario rc_scenario;
rc_status rc_scenario_load(const char *path, const char *const *overrides,
                           int n_overrides, rc_scenario **out, rc_error *err);
rc_status rc_scenario_load_string(const char *text, const char *label,
                                  const char *const *overrides,
                                  int n_overrides, rc_scenario **out,
                                  rc_error *err);
void rc_scenario_free(rc_scenario *scn);
rc_status rc_scenario_build(const rc_scenario *scn, rc_system **out,
                            rc_error *err);
rc_status rc_scenario_check(const rc_scenario *scn, rc_error *err);
char *rc_scenario_to_json(const rc_scenario *scn);
int rc_scenario_is_large_system(const rc_scenario *scn);
int rc_scenario_is_model(const rc_scenario *scn);
typedef enum rc_trajectory_format {
    RC_TRAJECTORY_NONE, RC_TRAJECTORY_XYZ, RC_TRAJECTORY_H5MD, ...
} rc_trajectory_format;
typedef struct rc_scenario_run {
    double dt;
    double duration;
    long steps;
    long every;
    rc_trajectory_format trajectory;
    long trajectory_every;
    const char *method;
    const char *name;
    ...;
} rc_scenario_run;
void rc_scenario_run_info(const rc_scenario *scn, rc_scenario_run *out);
const char *rc_scenario_path(const rc_scenario *scn);

/* run.h */
typedef enum rc_backend {
    RC_BACKEND_AUTO, RC_BACKEND_CPU, RC_BACKEND_REFERENCE, RC_BACKEND_CUDA,
    ...
} rc_backend;
const char *rc_backend_name(rc_backend backend);
typedef int (*rc_progress_fn)(void *ctx, long step, long total,
                              double elapsed);
typedef void (*rc_row_fn)(void *ctx, const rc_diagnostics *row);
typedef enum rc_column_kind {
    RC_COLUMN_REAL, RC_COLUMN_INTEGER, RC_COLUMN_WORD, ...
} rc_column_kind;
typedef struct rc_table {
    const char *name;
    int ncols;
    const char *const *columns;
    const rc_column_kind *kinds;
    const char *const *const *words;
    ...;
} rc_table;
typedef void (*rc_table_fn)(void *ctx, const rc_table *table, long nrows,
                            const double *values);
typedef struct rc_run_options {
    const char *out_dir;
    rc_backend backend;
    int threads;
    rc_progress_fn progress;
    void *progress_ctx;
    rc_row_fn on_row;
    void *row_ctx;
    const char *restart;
    rc_table_fn on_table;
    void *table_ctx;
    ...;
} rc_run_options;
typedef struct rc_run_result {
    long steps;
    double wall_seconds;
    double energy_initial;
    double max_rel_energy_error;
    double final_rel_energy_error;
    double energy_drift_per_time;
    double max_momentum_error;
    double max_angular_momentum_error;
    double windowed_drift;
    double failure_time;
    rc_backend backend;
    char status[...];
    ...;
} rc_run_result;
rc_status rc_run(const rc_scenario *scn, const rc_run_options *opt,
                 rc_run_result *result, rc_error *err);
double rc_energy_scale(const rc_diagnostics *first);
int rc_cuda_compiled(void);

/* ensemble.h */
typedef enum rc_ensemble_device {
    RC_ENSEMBLE_CPU, RC_ENSEMBLE_AUTO, RC_ENSEMBLE_CUDA, ...
} rc_ensemble_device;
typedef struct rc_ensemble_options {
    const char *out_dir;
    int threads;
    rc_progress_fn progress;
    void *progress_ctx;
    long batch;
    int per_member;
    int scalar_batch;
    rc_ensemble_device device;
    const char *restart;
    rc_table_fn on_table;
    void *table_ctx;
    ...;
} rc_ensemble_options;
typedef struct rc_ensemble_result {
    long members;
    long ok;
    long failed;
    long invalid;
    double wall_seconds;
    double member_steps_per_second;
    int batched;
    long rerun;
    int cuda;
    int interrupted;
    long finished;
    ...;
} rc_ensemble_result;
int rc_scenario_is_ensemble(const rc_scenario *scn);
long rc_scenario_ensemble_members(const rc_scenario *scn);
rc_status rc_ensemble_run(const rc_scenario *scn,
                          const rc_ensemble_options *opt,
                          rc_ensemble_result *result, rc_error *err);

/* md.h */
typedef struct rc_md_session rc_md_session;
rc_status rc_md_session_create(const rc_scenario *scn, int threads,
                               rc_md_session **out, rc_error *err);
void rc_md_session_free(rc_md_session *s);
rc_status rc_md_session_step(rc_md_session *s, long steps);
const char *rc_md_session_message(const rc_md_session *s);
int rc_md_session_count(const rc_md_session *s);
int rc_md_session_dimension(const rc_md_session *s);
long rc_md_session_steps(const rc_md_session *s);
double rc_md_session_time(const rc_md_session *s);
void rc_md_session_box(const rc_md_session *s, double *lengths,
                       int *periodic);
rc_status rc_md_session_state(rc_md_session *s, double *q, double *p,
                              int *image);
rc_status rc_md_session_particles(const rc_md_session *s, double *mass,
                                  double *radius);
typedef struct rc_md_observables {
    long step;
    double time;
    double temperature;
    double kinetic;
    double potential;
    double energy;
    double momentum[3];
    double pressure;
    double pressure_kinetic;
    double pressure_virial;
    double pressure_collision;
    double z;
    long collisions;
    long collisions_total;
    long wall_collisions_total;
    long largest_island;
    double msd;
    double max_overlap;
    ...;
} rc_md_observables;
rc_status rc_md_session_observe(rc_md_session *s, rc_md_observables *out);

void free(void *ptr);

/* Callbacks into Python (ricochet/_core.py, @ffi.def_extern). */
extern "Python" void rc_py_on_row(void *ctx, const rc_diagnostics *row);
extern "Python" void rc_py_on_table(void *ctx, const rc_table *table,
                                    long nrows, const double *values);
extern "Python" int rc_py_progress(void *ctx, long step, long total,
                                   double elapsed);
"""

ffibuilder = cffi.FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "ricochet._ricochet",
    "#include <stdlib.h>\n#include <ricochet/ricochet.h>\n")

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: build_ffi.py OUT.c")
    ffibuilder.emit_c_code(sys.argv[1])

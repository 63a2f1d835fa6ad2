/* Subcommands of the ricochet CLI that live in their own files, and the
 * helpers they share (cli_util.c).  Each subcommand takes the arguments
 * after its name and returns the process exit code. */
#ifndef RC_CLI_H
#define RC_CLI_H

#include "ricochet/ensemble.h"
#include "ricochet/scenario.h"

/* Process exit codes of every subcommand; a run stopped by SIGINT or
 * SIGTERM exits with 128 + the signal's number (130, 143) after writing
 * its checkpoint and .partial outputs. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_INPUT = 2 };

int rc_cli_compare(int argc, char **argv); /* compare.c */
int rc_cli_merge(int argc, char **argv);   /* merge.c */
int rc_cli_plot(int argc, char **argv);    /* plot.c */

/* The exit code of a run that returned st: EXIT_INPUT for bad input
 * (RC_ERR_PARSE: refused at load or set-up, with its place;
 * RC_ERR_UNSUPPORTED: what this build or backend cannot run),
 * EXIT_RUNTIME for every other failure. */
int rc_cli_exit_code(int st);

/* "ricochet: error: file:line:column: field: message" on stderr. */
void rc_cli_print_error(const rc_error *err);
/* "ricochet: <fmt with arg>" and a pointer to --help, on stderr. */
void rc_cli_usage_error(const char *fmt, const char *arg);

/* Progress on stderr: on a terminal a bar, drawn once a run has taken a
 * second; otherwise (a batch job's log) a status line every log_every
 * seconds with the step, the rate, the ETA and the latest relative
 * energy error, like LAMMPS's thermo lines.  Pass rc_cli_on_progress as
 * rc_run_options.progress and rc_cli_on_row as on_row, with a
 * rc_cli_progress as their context.  It returns nonzero (stop) after
 * Ctrl-C when rc_cli_catch_sigint() is in force. */
typedef struct rc_cli_progress {
    int enabled;       /* stderr is a terminal and not --quiet: the bar */
    int drawn;         /* the bar is on the current line */
    const char *label; /* printed before the bar, e.g. "[2/3] gvi "; or NULL */
    int log;           /* not a terminal and not --quiet: status lines */
    double log_every;  /* seconds between them */
    double last_log;   /* elapsed time of the last one */
    int logged;        /* lines written */
    const char *unit;  /* "steps" or "members" */
    long rows;         /* diagnostics rows seen (rc_cli_on_row) */
    double e0, scale, rel; /* first energy, its scale, latest error */
} rc_cli_progress;

/* Set up for a run: quiet, and output.log_every in seconds. */
void rc_cli_progress_init(rc_cli_progress *ps, int quiet, double log_every,
                          const char *label);
/* rc_run_options.on_row: keeps the latest relative energy error. */
void rc_cli_on_row(void *ctx, const rc_diagnostics *row);

/* Options of the scenario-running subcommands (run, validate, compare),
 * parsed by one function.  `--set` is always accepted; the others only
 * when their bit is in `allowed`.  Both `--opt VALUE` and `--opt=VALUE`
 * work.  The first non-option argument is the scenario. */
enum {
    RC_CLI_OPT_OUT = 1,
    RC_CLI_OPT_BACKEND = 2,
    RC_CLI_OPT_THREADS = 4,
    RC_CLI_OPT_QUIET = 8,
    RC_CLI_OPT_METHODS = 16,
    RC_CLI_OPT_ENSEMBLE = 32, /* --batch, --per-member, --members */
    RC_CLI_OPT_RESTART = 64   /* --restart FILE (then no SCENARIO) */
};

typedef struct rc_cli_opts {
    const char *scenario;
    const char *out;
    const char *backend;
    const char *methods;
    int threads;        /* 0 = not given */
    long batch;         /* --batch: members per batch; 0 = not given */
    int per_member;     /* --per-member */
    int quiet;
    const char *restart; /* --restart: a checkpoint file */
    const char *members; /* --members A:B as given (rc_cli_members) */
    const char **sets;  /* the --set assignments (calloc'd; free it) */
    int nsets;
} rc_cli_opts;

/* Returns 0, or the exit code after printing why (bad option, missing
 * value, missing scenario).  `command` names the subcommand in messages. */
int rc_cli_parse_opts(int argc, char **argv, unsigned allowed,
                      const char *command, rc_cli_opts *o);

/* --members A:B of an ensemble of n members: *first = A, *end = B (B
 * excluded, as a Python slice; A empty: 0, B empty: n).  0, or
 * EXIT_INPUT after saying why. */
int rc_cli_members(const char *text, long n, long *first, long *end);

/* MPI (mpi.c; without RICOCHET_HAVE_MPI, stubs for one process).
 * rc_cli_mpi_start initialises MPI only when an MPI launcher started the
 * process (its environment variables), so that a plain `ricochet` never
 * touches MPI; it returns the number of processes (1 without MPI). */
int rc_cli_mpi_start(int *argc, char ***argv);
int rc_cli_mpi_rank(void);
void rc_cli_mpi_end(void);
/* A whole line about MPI for --version. */
const char *rc_cli_mpi_about(void);
/* The ensemble's members (eo's range, or every member) split into
 * contiguous ranges over the processes; rank 0 writes the outputs,
 * byte-identical to one process's except the run metadata.  Returns the
 * exit code (every rank: the worst of all ranks). */
int rc_cli_mpi_ensemble(const rc_scenario *scn, rc_ensemble_options *eo,
                        rc_cli_progress *ps, int quiet);

int rc_cli_on_progress(void *ctx, long step, long total, double elapsed);
/* SIGINT and SIGTERM ask the run to stop at the next step boundary (the
 * progress callback returns nonzero); the handler is then reset, so a
 * second signal ends the process at once. */
void rc_cli_catch_sigint(void);
int rc_cli_interrupted(void); /* the signal that stopped the run, or 0 */

#endif

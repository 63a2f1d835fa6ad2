/* ricochet command-line tool (DESIGN §8).
 *
 * Exit codes: 0 success, 2 bad input (the message names the file, line,
 * column and field), 1 runtime failure, 128 + signal (130, 143) for a
 * run stopped by SIGINT or SIGTERM (checkpoint and .partial outputs
 * written). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <cjson/cJSON.h>

#include "ricochet/ricochet.h"
#include "cli.h"

#ifndef RICOCHET_VERSION
#define RICOCHET_VERSION "unknown"
#endif
#ifndef RICOCHET_EXAMPLES_DIR
#define RICOCHET_EXAMPLES_DIR "examples"
#endif

static const char usage_text[] =
    "usage: ricochet <command> [options]\n"
    "\n"
    "commands:\n"
    "  run SCENARIO [--out DIR] [--backend cpu|cuda|reference|auto]\n"
    "               [--threads N] [--set PATH=VALUE ...] [--quiet]\n"
    "               [--batch N] [--per-member] [--members A:B]\n"
    "      integrate a scenario; writes diagnostics.csv, summary.json and\n"
    "      (if asked) trajectory.xyz into DIR (default: out/<name>); a\n"
    "      large system observables.csv, rdf.csv, msd.csv and\n"
    "      trajectory.xyz or trajectory.h5md (output.trajectory), and\n"
    "      starts from a frame of either with read: {file, frame}; an\n"
    "      ensemble writes members.csv and ensemble.json instead. Under\n"
    "      mpirun (mpirun -np K ricochet run ENSEMBLE), the members are\n"
    "      split into K contiguous ranges, one per process (with --backend\n"
    "      cuda each takes the GPU of its node-local rank), and rank 0\n"
    "      writes the outputs of one run\n"
    "  run --restart DIR/checkpoint.rcp [--out DIR] [--backend ...]\n"
    "               [--threads N] [--quiet]\n"
    "      continue an interrupted run from its checkpoint; the outputs\n"
    "      end as those of a run never interrupted\n"
    "  compare SCENARIO --methods M1,M2,... [--out DIR] [--threads N]\n"
    "                   [--set PATH=VALUE ...] [--quiet]\n"
    "      run the scenario once per method (sv, midpoint, gvi, cva,\n"
    "      mcva, direct-endpoint, direct-midpoint, gvi-linearized);\n"
    "      writes compare.csv, compare.json and one run directory per\n"
    "      method into DIR (default: out/<name>-compare)\n"
    "  merge DIR... --out DIR [--quiet]\n"
    "      combine the outputs of ensemble ranges (run --members A:B)\n"
    "      that together cover every member into the outputs of one run\n"
    "      of the whole ensemble: members.csv, groups.csv and the traces\n"
    "      byte-identical, ensemble.json identical but for its run\n"
    "      metadata (engine, threads, wall_seconds,\n"
    "      member_steps_per_second, ranges); exit 2 when ranges overlap,\n"
    "      leave members out, come from different scenarios or miss files\n"
    "  plot DIR [--format png,svg] [--out PREFIX]\n"
    "      draw a run, model run, large system, ensemble or comparison\n"
    "      with gnuplot (PNG and SVG)\n"
    "  validate SCENARIO [--set PATH=VALUE ...]\n"
    "      check a scenario file without running it\n"
    "  info\n"
    "      version, backends and CUDA devices\n"
    "  examples [list]\n"
    "      list the bundled example scenarios\n"
    "  examples copy NAME|all DIR\n"
    "      copy bundled scenarios into DIR\n"
    "\n"
    "options:\n"
    "  --out DIR          output directory (created if missing)\n"
    "  --methods M1,M2    compare: the methods to run, in this order\n"
    "  --backend NAME     cpu (default), reference (single-thread plain\n"
    "                     path), cuda (a GPU: ensembles and hard-sphere\n"
    "                     boxes), auto (cuda when a device is present and\n"
    "                     the scenario runs there, else cpu)\n"
    "  --threads N        CPU threads (default: OpenMP's, e.g. "
    "OMP_NUM_THREADS)\n"
    "  --batch N          ensembles: members per batch of the batch engine\n"
    "                     (default 64, 1 for a built-in model's members;\n"
    "                     results do not depend on it)\n"
    "  --per-member       ensembles: run every member as its own system\n"
    "                     (the slower engine the batch engine is checked\n"
    "                     against)\n"
    "  --members A:B      ensembles: run only members A to B-1 (B excluded,\n"
    "                     as a Python slice; A:, :B allowed), each with the\n"
    "                     values and bits it has in the whole run; DIR gets\n"
    "                     the range's rows, an ensemble.json with \"range\"\n"
    "                     and range.rcp, which `merge` combines\n"
    "  --set PATH=VALUE   override a scenario field, e.g. integrator.dt=0.01\n"
    "                     or particles[0].position=[0,1]; may repeat\n"
    "  --quiet            no progress bar and no summary on stdout\n"
    "  --restart FILE     run: continue from a checkpoint (written every\n"
    "                     output.checkpoint_every, and on SIGINT/SIGTERM)\n"
    "\n"
    "exit codes: 0 ok; 1 the run failed; 2 bad input (file, line, field\n"
    "named); 130/143 stopped by SIGINT/SIGTERM: outputs kept as *.partial\n"
    "and a checkpoint written; a second signal ends at once\n"
    "  -h, --help         this text;  --version  the version\n";

/* ---------------------------------------------------------------- */

/* run and validate share the option parser of cli_util.c. */
static int parse_opts(int argc, char **argv, int allow_run_opts,
                      rc_cli_opts *o)
{
    return rc_cli_parse_opts(argc, argv,
                             allow_run_opts
                                 ? RC_CLI_OPT_OUT | RC_CLI_OPT_BACKEND |
                                       RC_CLI_OPT_THREADS | RC_CLI_OPT_QUIET |
                                       RC_CLI_OPT_ENSEMBLE | RC_CLI_OPT_RESTART
                                 : 0u,
                             allow_run_opts ? "run" : "validate", o);
}

static int load(const rc_cli_opts *o, rc_scenario **scn)
{
    rc_error err;
    if (rc_scenario_load(o->scenario, o->sets, o->nsets, scn, &err) !=
        RC_OK) {
        rc_cli_print_error(&err);
        return err.status == RC_ERR_NOMEM ? EXIT_RUNTIME : EXIT_INPUT;
    }
    return 0;
}

static int cmd_validate(int argc, char **argv)
{
    rc_cli_opts o;
    rc_scenario *scn = NULL;
    rc_system *sys = NULL;
    rc_scenario_run info;
    rc_error err;
    int rc = parse_opts(argc, argv, 0, &o);
    if (!rc)
        rc = load(&o, &scn);
    if (!rc && rc_scenario_is_large_system(scn)) {
        /* a box: set up as a run would set it up (rc_scenario_check),
         * not built as an rc_system */
        if (rc_scenario_check(scn, &err) != RC_OK) {
            rc_cli_print_error(&err);
            rc = err.status == RC_ERR_NOMEM ? EXIT_RUNTIME : EXIT_INPUT;
        } else {
            rc_scenario_run_info(scn, &info);
            printf("%s: ok (%s: large system, set up and checked; method "
                   "%s, dt %g, %ld steps)\n",
                   o.scenario, info.name, info.method, info.dt, info.steps);
        }
    } else if (!rc && rc_scenario_is_model(scn)) {
        /* a model in generalized coordinates: checked whole when loaded */
        if (rc_scenario_check(scn, &err) != RC_OK) {
            rc_cli_print_error(&err);
            rc = err.status == RC_ERR_NOMEM ? EXIT_RUNTIME : EXIT_INPUT;
        } else {
            rc_scenario_run_info(scn, &info);
            printf("%s: ok (%s: model in generalized coordinates, method "
                   "%s, dt %g, %ld steps)\n",
                   o.scenario, info.name, info.method, info.dt, info.steps);
        }
    } else if (!rc && rc_scenario_build(scn, &sys, &err) != RC_OK) {
        rc_cli_print_error(&err);
        rc = err.status == RC_ERR_NOMEM ? EXIT_RUNTIME : EXIT_INPUT;
    } else if (!rc) {
        rc_scenario_run_info(scn, &info);
        printf("%s: ok (%s: dimension %d, %d particles, method %s, dt %g, "
               "%ld steps)\n",
               o.scenario, info.name, rc_system_dimension(sys),
               rc_system_count(sys), info.method, info.dt, info.steps);
    }
    rc_system_free(sys);
    rc_scenario_free(scn);
    free(o.sets);
    return rc;
}

/* The per-group table of a grid ensemble (groups.csv), aligned. */
static void print_groups(const char *dir)
{
    char path[1100], line[2048];
    FILE *f;
    snprintf(path, sizeof path, "%s/groups.csv", dir);
    f = fopen(path, "r");
    if (!f)
        return;
    printf("\n");
    while (fgets(line, sizeof line, f)) {
        char *tok, *save = NULL;
        line[strcspn(line, "\r\n")] = '\0';
        for (tok = strtok_r(line, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save))
            printf("%-17s ", tok);
        printf("\n");
    }
    fclose(f);
    printf("(groups.csv; medians over the ok members of each group)\n");
}

/* `run` on a scenario with an ensemble block: every member. */
static int run_ensemble(const rc_scenario *scn, const rc_cli_opts *o,
                        rc_cli_progress *ps, int world)
{
    rc_ensemble_options eo;
    rc_ensemble_result er;
    rc_error err;
    rc_status st;
    memset(&eo, 0, sizeof eo);
    /* no --backend: the cpu, as before the GPU engine (results that do
     * not depend on the machine); auto and cuda ask for the GPU */
    if (!o->backend || !strcmp(o->backend, "cpu")) {
        eo.device = RC_ENSEMBLE_CPU;
    } else if (!strcmp(o->backend, "auto")) {
        eo.device = RC_ENSEMBLE_AUTO;
    } else if (!strcmp(o->backend, "cuda")) {
        eo.device = RC_ENSEMBLE_CUDA;
    } else {
        rc_cli_usage_error("ensembles run on the cpu or cuda backend (or "
                           "auto; got --backend %s)",
                           o->backend);
        return EXIT_INPUT;
    }
    eo.out_dir = o->out;
    eo.threads = o->threads;
    eo.batch = o->batch;
    eo.per_member = o->per_member;
    eo.restart = o->restart;
    eo.progress = rc_cli_on_progress;
    eo.progress_ctx = ps;
    ps->label = "members ";
    ps->unit = "members";
    if (o->members &&
        rc_cli_members(o->members, rc_scenario_ensemble_members(scn),
                       &eo.member_first, &eo.member_end) != 0)
        return EXIT_INPUT;
    if (world > 1) /* under mpirun: the members split over the ranks */
        return rc_cli_mpi_ensemble(scn, &eo, ps, o->quiet);
    st = rc_ensemble_run(scn, &eo, &er, &err);
    if (ps->drawn)
        fputc('\n', stderr);
    if (st != RC_OK) {
        rc_cli_print_error(&err);
        if (er.interrupted && rc_cli_interrupted())
            return 128 + rc_cli_interrupted();
        return rc_cli_exit_code(st);
    }
    if (!o->quiet &&
        (o->members || er.members < rc_scenario_ensemble_members(scn))) {
        /* a range (given, or the one a restarted range's checkpoint
         * holds) */
        printf("%s: members %ld:%ld of an ensemble of %ld: %ld ok, %ld "
               "failed, %ld invalid; %.3f s, %.3g member-steps/s%s\n",
               rc_scenario_path(scn), er.first, er.end,
               rc_scenario_ensemble_members(scn), er.ok, er.failed,
               er.invalid, er.wall_seconds, er.member_steps_per_second,
               er.cuda ? " (GPU)" : "");
        printf("  output: %s/{members.csv,ensemble.json,range.rcp} (ricochet "
               "merge combines ranges)\n",
               o->out);
    } else if (!o->quiet) {
        printf("%s: ensemble of %ld members: %ld ok, %ld failed, %ld "
               "invalid; %.3f s, %.3g member-steps/s%s\n",
               rc_scenario_path(scn), er.members, er.ok, er.failed,
               er.invalid, er.wall_seconds, er.member_steps_per_second,
               er.cuda ? " (GPU)" : "");
        printf("  output: %s/{members.csv,ensemble.json}\n", o->out);
        print_groups(o->out);
    }
    return EXIT_OK;
}

/* The summary of a large-system run, from its summary.json: Z with its
 * error bar next to the equation of state, the collision rate, D. */
static void print_large_summary(const char *dir)
{
    char path[1100];
    FILE *f;
    char *text = NULL;
    long size;
    cJSON *root = NULL;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    f = fopen(path, "rb");
    if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 &&
        fseek(f, 0, SEEK_SET) == 0) {
        text = (char *)malloc((size_t)size + 1);
        if (text && fread(text, 1, (size_t)size, f) == (size_t)size) {
            text[size] = '\0';
            root = cJSON_Parse(text);
        }
    }
    if (f)
        fclose(f);
    if (root) {
        const cJSON *z = cJSON_GetObjectItemCaseSensitive(
            root, "compressibility_factor");
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(
            root, "collision_rate_per_particle");
        const cJSON *ref = cJSON_GetObjectItemCaseSensitive(z, "carnahan_starling");
        const char *refname = "Carnahan-Starling";
        if (!ref) {
            ref = cJSON_GetObjectItemCaseSensitive(z, "henderson");
            refname = "Henderson";
        }
#define RC_NUM(o, k) (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive((o), (k))) \
                          ? cJSON_GetObjectItemCaseSensitive((o), (k))->valuedouble \
                          : NAN)
        printf("%s: %g particles, packing fraction %.4g, %g steps of dt %g "
               "in %.3f s (%.3g particle-steps/s)\n",
               cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "name")),
               RC_NUM(root, "particles"), RC_NUM(root, "packing_fraction"),
               RC_NUM(root, "steps"), RC_NUM(root, "dt"),
               RC_NUM(root, "wall_seconds"),
               RC_NUM(root, "particle_steps_per_second"));
        if (cJSON_IsNumber(ref))
            printf("  Z = PV/NkT = %.4f +- %.4f   (%s %.4f; %s)\n",
                   RC_NUM(z, "mean"), RC_NUM(z, "stderr"), refname,
                   ref->valuedouble,
                   strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                              root, "collision_times")) ? cJSON_GetStringValue(
                              cJSON_GetObjectItemCaseSensitive(
                                  root, "collision_times")) : "",
                          "exact")
                       ? "GVI's O(dt) bias: extrapolate over dt"
                       : "exact collision times: no dt bias");
        else
            printf("  Z = PV/NkT = %.4f +- %.4f\n", RC_NUM(z, "mean"),
                   RC_NUM(z, "stderr"));
        printf("  collisions per particle per unit time %.4f +- %.4f; "
               "diffusion coefficient %.4g; temperature %.6g\n",
               RC_NUM(g, "mean"), RC_NUM(g, "stderr"),
               RC_NUM(root, "diffusion_coefficient"),
               RC_NUM(root, "mean_temperature"));
        printf("  max |dE|/|E0| = %.3e, max |dP| = %.3e, largest island %g "
               "contacts\n",
               RC_NUM(root, "max_rel_energy_error"),
               RC_NUM(root, "max_momentum_error"),
               RC_NUM(root, "largest_island"));
#undef RC_NUM
        printf("  output: %s/{observables.csv,rdf.csv,msd.csv,summary.json}\n",
               dir);
        {
            /* read: whether the velocities came from the file */
            const char *note = cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(root, "initial_state"),
                    "note"));
            if (note)
                fprintf(stderr, "ricochet: %s\n", note);
        }
    } else {
        printf("  output: %s (summary.json unreadable)\n", dir);
    }
    cJSON_Delete(root);
    free(text);
}

static int cmd_run(int argc, char **argv, int world)
{
    rc_cli_opts o;
    rc_scenario *scn = NULL;
    rc_scenario_run info;
    rc_run_options ro;
    rc_run_result res;
    rc_error err;
    rc_cli_progress ps;
    char outbuf[1024];
    rc_status st;
    int rc = parse_opts(argc, argv, 1, &o);
    if (!rc && o.restart) {
        /* the scenario and the output directory the checkpoint was
         * written for (--out may name the directory where it now is) */
        if (rc_checkpoint_scenario(o.restart, &scn, outbuf, sizeof outbuf,
                                   &err) != RC_OK) {
            rc_cli_print_error(&err);
            rc = err.status == RC_ERR_NOMEM ? EXIT_RUNTIME : EXIT_INPUT;
        } else if (!o.out) {
            o.out = outbuf;
        }
    } else if (!rc) {
        rc = load(&o, &scn);
    }
    if (rc)
        goto done;
    if (world > 1 && (!rc_scenario_is_ensemble(scn) || o.restart)) {
        /* only an ensemble's members are split over MPI processes */
        if (rc_cli_mpi_rank() == 0)
            rc_cli_usage_error("%s",
                               rc_scenario_is_ensemble(scn)
                                   ? "--restart runs in one process, not "
                                     "under mpirun (MPI ranks write no "
                                     "checkpoint)"
                                   : "only ensembles run under mpirun (their "
                                     "members split over the processes); "
                                     "run a single scenario without it");
        rc = EXIT_INPUT;
        goto done;
    }
    if (o.members && !rc_scenario_is_ensemble(scn)) {
        rc_cli_usage_error("--members %s: the scenario has no ensemble block",
                           o.members);
        rc = EXIT_INPUT;
        goto done;
    }
    rc_scenario_run_info(scn, &info);
    memset(&ro, 0, sizeof ro);
    /* no --backend: the cpu, as for ensembles (results that do not
     * depend on whether the machine has a GPU) */
    ro.backend = RC_BACKEND_CPU;
    if (o.backend) {
        if (!strcmp(o.backend, "cpu"))
            ro.backend = RC_BACKEND_CPU;
        else if (!strcmp(o.backend, "reference"))
            ro.backend = RC_BACKEND_REFERENCE;
        else if (!strcmp(o.backend, "cuda"))
            ro.backend = RC_BACKEND_CUDA;
        else if (!strcmp(o.backend, "auto"))
            ro.backend = RC_BACKEND_AUTO;
        else {
            rc_cli_usage_error(
                "unknown backend '%s' (cpu, cuda, reference, auto)",
                o.backend);
            rc = EXIT_INPUT;
            goto done;
        }
    }
    if (!o.out) {
        snprintf(outbuf, sizeof outbuf, "out/%s", info.name);
        o.out = outbuf;
    }
    ro.out_dir = o.out;
    ro.threads = o.threads;
    ro.restart = o.restart;
    rc_cli_progress_init(&ps, o.quiet, info.log_every, NULL);
    ro.progress = rc_cli_on_progress;
    ro.progress_ctx = &ps;
    ro.on_row = rc_cli_on_row;
    ro.row_ctx = &ps;
    rc_cli_catch_sigint();
    if (rc_scenario_is_ensemble(scn)) {
        rc = run_ensemble(scn, &o, &ps, world);
        goto done;
    }
    st = rc_run(scn, &ro, &res, &err);
    if (ps.drawn)
        fputc('\n', stderr);
    if (st != RC_OK) {
        rc_cli_print_error(&err);
        rc = rc_cli_interrupted() && !strcmp(res.status, "interrupted")
                 ? 128 + rc_cli_interrupted()
                 : rc_cli_exit_code(st);
        {
            /* only point at partial output that exists */
            char probe[1100];
            snprintf(probe, sizeof probe, "%s/diagnostics.csv.partial", o.out);
            if (access(probe, F_OK) == 0)
                fprintf(stderr,
                        "ricochet: partial output kept as %s/*.partial\n",
                        o.out);
        }
        goto done;
    }
    if (!o.quiet && rc_scenario_is_large_system(scn)) {
        print_large_summary(o.out);
    } else if (!o.quiet) {
        printf("%s: %s, %s backend, %ld steps of dt %g in %.3f s\n",
               info.name, info.method, rc_backend_name(res.backend),
               res.steps, info.dt, res.wall_seconds);
        printf("  energy  H0 = %.10g   max |dH|/|H0| = %.3e   final %.3e   "
               "drift %.3e per unit time\n",
               res.energy_initial, res.max_rel_energy_error,
               res.final_rel_energy_error, res.energy_drift_per_time);
        if (!rc_scenario_is_model(scn))
            printf("  change of momentum max %.3e, of angular momentum max "
                   "%.3e (conserved only without external forces and "
                   "walls)\n",
                   res.max_momentum_error, res.max_angular_momentum_error);
        printf("  output: %s/{diagnostics.csv,summary.json%s}\n", o.out,
               info.trajectory == RC_TRAJECTORY_XYZ ? ",trajectory.xyz" : "");
    }
done:
    rc_scenario_free(scn);
    free(o.sets);
    return rc;
}

static int cmd_info(void)
{
    rc_device_info dev[16];
    int count = 0, k;
    char why[300] = "";
    printf("ricochet %s\n", RICOCHET_VERSION);
#ifdef _OPENMP
    printf("backends: cpu (OpenMP, %d threads available), reference",
           omp_get_max_threads());
#else
    printf("backends: cpu (no OpenMP), reference");
#endif
    printf("%s\n", rc_cuda_compiled() ? ", cuda (compiled in)" : "");
    if (rc_cuda_compiled()) {
        int drv = 0, rt = 0;
        rc_cuda_versions(&drv, &rt);
        if (drv > 0)
            printf("cuda runtime %d.%d, driver supports cuda %d.%d\n",
                   rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10);
        else
            printf("cuda runtime %d.%d, no NVIDIA driver installed\n",
                   rt / 1000, rt % 1000 / 10);
    }
    if (rc_cuda_devices(dev, 16, &count, why, sizeof why) != RC_OK) {
        /* a GPU or driver that cannot be used is a fault to report, not
         * the absence of a device: its own word, for scripts to stop on */
        printf("cuda devices: unusable (%s)\n", why);
        return EXIT_OK;
    }
    if (count == 0) {
        printf("cuda devices: none (%s)\n", why);
    } else {
        printf("cuda devices: %d\n", count);
        for (k = 0; k < count && k < 16; ++k)
            printf("  [%d] %s, %.1f GiB, compute capability %d.%d\n", k,
                   dev[k].name, dev[k].memory_gib, dev[k].cc_major,
                   dev[k].cc_minor);
    }
    return EXIT_OK;
}

/* ---------------------------------------------------------------- */
/* Bundled examples.                                                 */

static const char *examples_dir(void)
{
    const char *env = getenv("RICOCHET_EXAMPLES");
    return env && *env ? env : RICOCHET_EXAMPLES_DIR;
}

static int is_yaml(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && !strcmp(name + n - 5, ".yaml");
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted .yaml names of the examples directory; NULL on error. */
static char **list_examples(int *n)
{
    DIR *d = opendir(examples_dir());
    struct dirent *e;
    char **names = NULL;
    int cap = 0;
    *n = 0;
    if (!d)
        return NULL;
    while ((e = readdir(d)) != NULL) {
        if (!is_yaml(e->d_name))
            continue;
        if (*n == cap) {
            char **nn;
            cap = cap ? 2 * cap : 16;
            nn = (char **)realloc(names, sizeof(char *) * (size_t)cap);
            if (!nn)
                break;
            names = nn;
        }
        names[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (names)
        qsort(names, (size_t)*n, sizeof(char *), name_cmp);
    else
        names = (char **)calloc(1, sizeof(char *));
    return names;
}

/* First comment line of a scenario file, without the '#'. */
static void first_comment(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    char line[512];
    buf[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *s = line;
        if (*s != '#')
            break;
        while (*s == '#' || *s == ' ')
            ++s;
        s[strcspn(s, "\r\n")] = '\0';
        if (*s) {
            snprintf(buf, size, "%s", s);
            break;
        }
    }
    fclose(f);
}

static int copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out;
    char buf[8192];
    size_t n;
    int bad = 0;
    if (!in)
        return -1;
    out = fopen(dst, "wb");
    if (!out) {
        fclose(in);
        return -1;
    }
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            bad = 1;
    if (ferror(in))
        bad = 1;
    fclose(in);
    if (fclose(out) != 0)
        bad = 1;
    return bad ? -1 : 0;
}

static int cmd_examples(int argc, char **argv)
{
    int n = 0, k, rc = EXIT_OK, copied = 0;
    char **names = list_examples(&n);
    char path[2048], text[400];
    if (!names) {
        fprintf(stderr,
                "ricochet: cannot read the examples directory %s: %s\n"
                "(set RICOCHET_EXAMPLES to the examples folder)\n",
                examples_dir(), strerror(errno));
        return EXIT_RUNTIME;
    }
    if (argc == 0 || !strcmp(argv[0], "list")) {
        printf("bundled examples in %s:\n", examples_dir());
        for (k = 0; k < n; ++k) {
            snprintf(path, sizeof path, "%s/%s", examples_dir(), names[k]);
            first_comment(path, text, sizeof text);
            printf("  %-28s %s\n", names[k], text);
        }
    } else if (!strcmp(argv[0], "copy")) {
        if (argc != 3) {
            rc_cli_usage_error("%s",
                               "usage: ricochet examples copy NAME|all DIR");
            rc = EXIT_INPUT;
        } else {
            const char *dir = argv[2];
            struct stat st;
            if (stat(dir, &st) != 0 && mkdir(dir, 0777) != 0) {
                fprintf(stderr, "ricochet: cannot create %s: %s\n", dir,
                        strerror(errno));
                rc = EXIT_RUNTIME;
            }
            for (k = 0; k < n && rc == EXIT_OK; ++k) {
                char want[300], dst[2048];
                snprintf(want, sizeof want, "%s%s", argv[1],
                         is_yaml(argv[1]) ? "" : ".yaml");
                if (strcmp(argv[1], "all") && strcmp(want, names[k]))
                    continue;
                snprintf(path, sizeof path, "%s/%s", examples_dir(),
                         names[k]);
                snprintf(dst, sizeof dst, "%s/%s", dir, names[k]);
                if (copy_file(path, dst) != 0) {
                    fprintf(stderr, "ricochet: cannot copy %s to %s: %s\n",
                            path, dst, strerror(errno));
                    rc = EXIT_RUNTIME;
                } else {
                    printf("%s\n", dst);
                    copied++;
                }
            }
            if (rc == EXIT_OK && copied == 0) {
                rc_cli_usage_error("no bundled example named '%s' (see "
                                   "'ricochet examples list')",
                                   argv[1]);
                rc = EXIT_INPUT;
            }
        }
    } else {
        rc_cli_usage_error("unknown examples subcommand '%s' (list, copy)",
                           argv[0]);
        rc = EXIT_INPUT;
    }
    for (k = 0; k < n; ++k)
        free(names[k]);
    free(names);
    return rc;
}

/* `ricochet COMMAND --help`: the command's lines of usage_text (its
 * header lines start with two spaces and the command's name, the lines
 * that describe it with more spaces), then the options and exit codes. */
static void print_command_help(const char *cmd)
{
    const char *line = strstr(usage_text, "commands:\n"), *opts;
    size_t len = strlen(cmd);
    int in = 0;
    printf("usage:\n");
    opts = strstr(usage_text, "\noptions:\n");
    for (line = line ? strchr(line, '\n') + 1 : usage_text;
         line && line < opts;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
        if (line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
            in = !strncmp(line + 2, cmd, len) &&
                 (line[2 + len] == ' ' || line[2 + len] == '\n');
        if (in)
            fwrite(line, 1, n, stdout);
        line = end ? end + 1 : NULL;
    }
    fputs(opts, stdout);
}

static void print_version(void)
{
    printf("ricochet %s\n", RICOCHET_VERSION);
    printf("backends: cpu, reference%s\n",
           rc_cuda_compiled() ? ", cuda" : " (built without CUDA)");
#ifdef RICOCHET_HAVE_HDF5
    printf("trajectories: xyz, h5md (HDF5)\n");
#else
    printf("trajectories: xyz (built without HDF5: no h5md)\n");
#endif
    printf("expressions: GNU libmatheval\n");
#ifdef RICOCHET_STRICT_FP
    printf("floating point: strict (no FMA contraction)\n");
#endif
    printf("%s\n", rc_cli_mpi_about());
}

int main(int argc, char **argv)
{
    /* plot answers --help itself, with its own options */
    static const char *const commands[] = {"run",  "compare",  "validate",
                                           "info", "examples", "merge",
                                           NULL};
    const char *cmd;
    int k, a;
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_INPUT;
    }
    cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage_text, stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        print_version();
        return EXIT_OK;
    }
    /* COMMAND --help (or -h) anywhere after a known command */
    for (k = 0; commands[k]; ++k)
        if (!strcmp(cmd, commands[k]))
            for (a = 2; a < argc; ++a)
                if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
                    print_command_help(cmd);
                    return EXIT_OK;
                }
    if (!strcmp(cmd, "run")) {
        /* MPI only for run, and only when a launcher started us */
        int world = rc_cli_mpi_start(&argc, &argv), rc;
        rc = cmd_run(argc - 2, argv + 2, world);
        rc_cli_mpi_end();
        return rc;
    }
    if (!strcmp(cmd, "merge"))
        return rc_cli_merge(argc - 2, argv + 2);
    if (!strcmp(cmd, "validate"))
        return cmd_validate(argc - 2, argv + 2);
    if (!strcmp(cmd, "info"))
        return cmd_info();
    if (!strcmp(cmd, "examples"))
        return cmd_examples(argc - 2, argv + 2);
    if (!strcmp(cmd, "compare"))
        return rc_cli_compare(argc - 2, argv + 2);
    if (!strcmp(cmd, "plot"))
        return rc_cli_plot(argc - 2, argv + 2);
    rc_cli_usage_error("unknown command '%s'", cmd);
    return EXIT_INPUT;
}

/* `ricochet compare`: one scenario, several methods, side by side.
 *
 * Each method runs as `ricochet run` would (DESIGN §8), into DIR/METHOD;
 * the diagnostics rows of every method are gathered into DIR/compare.csv
 * (one block per method, in the order given) and the per-method results
 * into DIR/compare.json.  A method that fails at run time, or that the
 * scenario rejects, is recorded and the others still run.
 *
 * Exit codes: 0 the comparison completed (whatever each method did);
 * 2 bad command line, or a scenario that no method could load; 1 an
 * output that could not be written, or Ctrl-C. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ricochet/ricochet.h"
#include "host/output.h"
#include "cli.h"

static const char compare_usage[] =
    "usage: ricochet compare SCENARIO --methods M1,M2,... [--out DIR] "
    "[--set PATH=VALUE ...] [--threads N] [--quiet]";

/* Names that stand for a method plus overrides (applied after the
 * user's --set, so they win). */
typedef struct pseudo_method {
    const char *name;
    const char *sets[2];
} pseudo_method;

static const pseudo_method pseudo_methods[] = {
    {"gvi-linearized",
     {"integrator.method=gvi", "integrator.linearized=true"}},
};

typedef struct method_entry {
    const char *name;   /* as given in --methods */
    rc_scenario *scn;   /* loaded with the method's overrides; NULL if not */
    char status[16];    /* ok, failed, invalid, interrupted, not_run */
    char message[3000]; /* why it failed or was rejected; "" if ok */
    int ran;            /* rc_run was called: res is meaningful */
    rc_run_result res;
    double dt;
    long rows;          /* rows it wrote into compare.csv */
} method_entry;

/* The on_row context: appends one method's rows to compare.csv. */
typedef struct row_sink {
    FILE *f;
    const char *method;
    long rows;
    double e0, scale;
} row_sink;

static void on_row(void *ctx, const rc_diagnostics *d)
{
    row_sink *s = (row_sink *)ctx;
    double rel;
    if (s->rows == 0) {
        /* the scale of summary.json's energy_scale */
        s->e0 = d->energy;
        s->scale = rc_energy_scale(d);
    }
    rel = (d->energy - s->e0) / s->scale;
    /* %.17g: every double round-trips exactly, as in diagnostics.csv. */
    fprintf(s->f, "%s,%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n",
            s->method, d->step, d->time, d->energy, d->modified_energy, rel,
            d->angular_momentum[0], d->angular_momentum[1],
            d->angular_momentum[2], d->min_gap);
    s->rows++;
}

/* ---------------------------------------------------------------- */
/* Command line.                                                     */

static int parse_opts(int argc, char **argv, rc_cli_opts *o)
{
    int rc = rc_cli_parse_opts(argc, argv,
                               RC_CLI_OPT_OUT | RC_CLI_OPT_METHODS |
                                   RC_CLI_OPT_THREADS | RC_CLI_OPT_QUIET,
                               "compare", o);
    if (rc)
        return rc;
    if (!o->methods) {
        rc_cli_usage_error("compare needs --methods (e.g. --methods "
                           "sv,midpoint)\n%s",
                           compare_usage);
        return EXIT_INPUT;
    }
    return 0;
}

/* Split --methods in place (buf is a copy of it) into names; rejects an
 * empty list, an empty name and a name given twice. */
static int split_methods(char *buf, method_entry **out, int *count)
{
    method_entry *m;
    int n = 1, k, j;
    char *s;
    for (s = buf; *s; ++s)
        n += *s == ',';
    m = (method_entry *)calloc((size_t)n, sizeof *m);
    if (!m)
        return EXIT_RUNTIME;
    for (k = 0, s = buf; k < n; ++k) {
        char *c = strchr(s, ','), *e;
        if (c)
            *c = '\0';
        while (*s == ' ')
            ++s;
        for (e = s + strlen(s); e > s && e[-1] == ' ';)
            *--e = '\0';
        m[k].name = s;
        s = c ? c + 1 : s + strlen(s);
    }
    *out = m;
    *count = n;
    for (k = 0; k < n; ++k) {
        if (!m[k].name[0]) {
            rc_cli_usage_error(n == 1 ? "--methods is empty%s"
                                      : "--methods has an empty name%s",
                               "; give M1,M2,... (e.g. sv,midpoint)");
            return EXIT_INPUT;
        }
        for (j = 0; j < k; ++j)
            if (!strcmp(m[j].name, m[k].name)) {
                rc_cli_usage_error("method '%s' is given twice in --methods",
                                   m[k].name);
                return EXIT_INPUT;
            }
    }
    return 0;
}

/* Method names become directory names and CSV fields: keep them plain. */
static int plain_name(const char *s)
{
    for (; *s; ++s)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
            return 0;
    return 1;
}

/* Load the scenario for one method and check that it builds, as
 * `validate` would.  Returns 0, or EXIT_RUNTIME when out of memory; a
 * scenario the method cannot run marks the entry invalid. */
static int load_method(const rc_cli_opts *o, method_entry *m)
{
    const char **ov;
    char *method_set = NULL;
    rc_error err;
    rc_status st;
    int n = o->nsets, k, rc = 0;
    size_t len = strlen(m->name) + 32;
    if (!plain_name(m->name)) {
        snprintf(m->status, sizeof m->status, "invalid");
        snprintf(m->message, sizeof m->message,
                 "'%s' is not a method name (letters, digits, '-', '_')",
                 m->name);
        return 0;
    }
    ov = (const char **)malloc(sizeof(char *) * (size_t)(o->nsets + 2));
    method_set = (char *)malloc(len);
    if (!ov || !method_set) {
        free(ov);
        free(method_set);
        fprintf(stderr, "ricochet: error: out of memory\n");
        return EXIT_RUNTIME;
    }
    for (k = 0; k < o->nsets; ++k)
        ov[k] = o->sets[k];
    snprintf(method_set, len, "integrator.method=%s", m->name);
    ov[n++] = method_set;
    for (k = 0; k < (int)(sizeof pseudo_methods / sizeof pseudo_methods[0]);
         ++k)
        if (!strcmp(m->name, pseudo_methods[k].name)) {
            n = o->nsets;
            ov[n++] = pseudo_methods[k].sets[0];
            ov[n++] = pseudo_methods[k].sets[1];
        }
    memset(&err, 0, sizeof err);
    st = rc_scenario_load(o->scenario, ov, n, &m->scn, &err);
    if (st == RC_OK && (st = rc_scenario_check(m->scn, &err)) != RC_OK) {
        rc_scenario_free(m->scn);
        m->scn = NULL;
    }
    if (st == RC_ERR_NOMEM) {
        rc_cli_print_error(&err);
        rc = EXIT_RUNTIME;
    } else if (st != RC_OK) {
        snprintf(m->status, sizeof m->status, "invalid");
        rc_error_format(&err, m->message, sizeof m->message);
    } else {
        rc_scenario_run info;
        rc_scenario_run_info(m->scn, &info);
        m->dt = info.dt;
    }
    free(ov);
    free(method_set);
    return rc;
}

/* Every method invalid: nothing ran.  One message when they all say the
 * same (a broken file or --set), else one per method. */
static void report_all_invalid(const method_entry *m, int n)
{
    int k, same = 1;
    for (k = 1; k < n; ++k)
        same = same && !strcmp(m[k].message, m[0].message);
    if (same) {
        fprintf(stderr, "ricochet: error: %s\n", m[0].message);
        return;
    }
    for (k = 0; k < n; ++k)
        fprintf(stderr, "ricochet: error: method %s: %s\n", m[k].name,
                m[k].message);
    fprintf(stderr, "ricochet: no method could run this scenario\n");
}

/* An invalid method writes nothing: remove what an earlier comparison
 * left in DIR/METHOD, so that no old run passes for this one. */
static void remove_stale_run(const char *dir)
{
    static const char *const names[] = {
        "summary.json", "diagnostics.csv", "trajectory.xyz",
        "summary.json.partial", "diagnostics.csv.partial",
        "trajectory.xyz.partial", NULL};
    struct stat st;
    rc_error err;
    int k;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    for (k = 0; names[k]; ++k)
        if (rc_out_remove_stale(dir, names[k], &err) != RC_OK)
            rc_cli_print_error(&err);
}

/* ---------------------------------------------------------------- */
/* compare.json and the table.                                       */

static void json_number(cJSON *o, const char *key, int have, double v)
{
    if (have && isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static char *compare_json(const rc_cli_opts *o, const char *name,
                          const method_entry *m, int n)
{
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    char *text = NULL;
    int k;
    if (!root || !arr) {
        cJSON_Delete(root);
        cJSON_Delete(arr);
        return NULL;
    }
    cJSON_AddStringToObject(root, "scenario", o->scenario);
    cJSON_AddStringToObject(root, "name", name);
    cJSON_AddItemToObject(root, "methods", arr);
    for (k = 0; k < n; ++k) {
        const rc_run_result *r = &m[k].res;
        int ran = m[k].ran;
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        cJSON_AddItemToArray(arr, e);
        cJSON_AddStringToObject(e, "method", m[k].name);
        cJSON_AddStringToObject(e, "status", m[k].status);
        if (m[k].message[0])
            cJSON_AddStringToObject(e, "message", m[k].message);
        json_number(e, "steps", ran, (double)r->steps);
        json_number(e, "time", ran, (double)r->steps * m[k].dt);
        json_number(e, "max_rel_energy_error", ran, r->max_rel_energy_error);
        json_number(e, "final_rel_energy_error", ran,
                    r->final_rel_energy_error);
        json_number(e, "windowed_drift", ran, r->windowed_drift);
        json_number(e, "energy_drift_per_time", ran, r->energy_drift_per_time);
        json_number(e, "max_momentum_error", ran, r->max_momentum_error);
        json_number(e, "max_angular_momentum_error", ran,
                    r->max_angular_momentum_error);
        json_number(e, "failure_time", ran, r->failure_time);
        json_number(e, "wall_seconds", ran, r->wall_seconds);
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

static void cell(char *buf, size_t size, int have, double v)
{
    if (have)
        snprintf(buf, size, "%.3e", v);
    else
        snprintf(buf, size, "-");
}

static void print_table(const method_entry *m, int n)
{
    static const char *const head[] = {
        "max |dH|/|H0|", "final", "windowed drift", "max |dP|", "max |dL|",
        "blow-up t", "wall s"};
    int wm = 6, ws = 6, w[7], k, c;
    for (k = 0; k < n; ++k) {
        int a = (int)strlen(m[k].name), b = (int)strlen(m[k].status);
        wm = a > wm ? a : wm;
        ws = b > ws ? b : ws;
    }
    for (c = 0; c < 7; ++c) {
        w[c] = (int)strlen(head[c]);
        w[c] = w[c] > 10 ? w[c] : 10; /* "-1.234e-05" */
    }
    printf("%-*s  %-*s", wm, "method", ws, "status");
    for (c = 0; c < 7; ++c)
        printf("  %*s", w[c], head[c]);
    printf("\n");
    for (k = 0; k < n; ++k) {
        const rc_run_result *r = &m[k].res;
        int ran = m[k].ran;
        double v[5];
        char buf[64];
        v[0] = r->max_rel_energy_error;
        v[1] = r->final_rel_energy_error;
        v[2] = r->windowed_drift;
        v[3] = r->max_momentum_error;
        v[4] = r->max_angular_momentum_error;
        printf("%-*s  %-*s", wm, m[k].name, ws, m[k].status);
        for (c = 0; c < 5; ++c) {
            cell(buf, sizeof buf, ran, v[c]);
            printf("  %*s", w[c], buf);
        }
        if (ran && isfinite(r->failure_time))
            snprintf(buf, sizeof buf, "%.6g", r->failure_time);
        else
            snprintf(buf, sizeof buf, "-");
        printf("  %*s", w[5], buf);
        if (ran)
            snprintf(buf, sizeof buf, "%.3f", r->wall_seconds);
        else
            snprintf(buf, sizeof buf, "-");
        printf("  %*s\n", w[6], buf);
    }
}

/* ---------------------------------------------------------------- */

int rc_cli_compare(int argc, char **argv)
{
    static const char *const outputs[] = {"compare.csv", "compare.json",
                                          "compare.csv.partial",
                                          "compare.json.partial", NULL};
    rc_cli_opts o;
    method_entry *m = NULL;
    char *methods_buf = NULL, *json = NULL;
    char outbuf[1024], sub[1024], label[200];
    const method_entry *first = NULL;
    rc_scenario_run info;
    rc_outfile csv, js;
    rc_error err;
    int rc, k, n = 0, nvalid = 0, interrupted = 0;

    memset(&csv, 0, sizeof csv);
    memset(&js, 0, sizeof js);
    memset(&err, 0, sizeof err);
    rc = parse_opts(argc, argv, &o);
    if (rc)
        goto done;
    methods_buf = (char *)malloc(strlen(o.methods) + 1);
    if (!methods_buf) {
        rc = EXIT_RUNTIME;
        goto done;
    }
    strcpy(methods_buf, o.methods);
    if ((rc = split_methods(methods_buf, &m, &n)) != 0)
        goto done;

    /* Load every method before running any: a broken file or --set is
     * bad input before anything is written. */
    for (k = 0; k < n; ++k) {
        if ((rc = load_method(&o, &m[k])) != 0)
            goto done;
        if (m[k].scn) {
            nvalid++;
            if (!first)
                first = &m[k];
        }
    }
    if (nvalid == 0) {
        report_all_invalid(m, n);
        rc = EXIT_INPUT;
        goto done;
    }
    rc_scenario_run_info(first->scn, &info);
    if (!o.out) {
        snprintf(outbuf, sizeof outbuf, "out/%s-compare", info.name);
        o.out = outbuf;
    }
    if (strlen(o.out) > 900) {
        rc_cli_usage_error("output directory name too long: %s", o.out);
        rc = EXIT_INPUT;
        goto done;
    }

    /* compare.* of an earlier comparison go first, as run does. */
    if (rc_out_mkdirs(o.out, &err) != RC_OK)
        goto io_error;
    for (k = 0; outputs[k]; ++k)
        if (rc_out_remove_stale(o.out, outputs[k], &err) != RC_OK)
            goto io_error;
    if (rc_out_open(&csv, o.out, "compare.csv", &err) != RC_OK)
        goto io_error;
    fputs("method,step,time,energy,modified_energy,rel_energy_error,"
          "lx,ly,lz,min_gap\n",
          csv.f);

    rc_cli_catch_sigint();
    for (k = 0; k < n; ++k) {
        method_entry *e = &m[k];
        rc_run_options ro;
        rc_cli_progress ps;
        row_sink sink;
        rc_status st;
        snprintf(sub, sizeof sub, "%s/%s", o.out, e->name);
        if (!e->scn) {
            fprintf(stderr, "ricochet: %s: invalid: %s\n", e->name,
                    e->message);
            if (plain_name(e->name))
                remove_stale_run(sub);
            continue;
        }
        if (interrupted) {
            snprintf(e->status, sizeof e->status, "not_run");
            continue;
        }
        memset(&sink, 0, sizeof sink);
        sink.f = csv.f;
        sink.method = e->name;
        snprintf(label, sizeof label, "[%d/%d] %s ", k + 1, n, e->name);
        rc_cli_progress_init(&ps, o.quiet, info.log_every, label);
        if (ps.enabled) {
            fprintf(stderr, "%s...", label);
            fflush(stderr);
        }
        memset(&ro, 0, sizeof ro);
        ro.out_dir = sub;
        ro.backend = RC_BACKEND_AUTO;
        ro.threads = o.threads;
        ro.progress = rc_cli_on_progress;
        ro.progress_ctx = &ps;
        ro.on_row = on_row;
        ro.row_ctx = &sink;
        memset(&err, 0, sizeof err);
        st = rc_run(e->scn, &ro, &e->res, &err);
        e->ran = 1;
        e->rows = sink.rows;
        if (st == RC_OK) {
            snprintf(e->status, sizeof e->status, "ok");
        } else {
            snprintf(e->status, sizeof e->status, "%s",
                     !strcmp(e->res.status, "interrupted") ? "interrupted"
                                                           : "failed");
            rc_error_format(&err, e->message, sizeof e->message);
            interrupted = !strcmp(e->status, "interrupted");
        }
        if (ps.enabled)
            fprintf(stderr, ps.drawn ? "\n" : " %s\n", e->status);
        if (st != RC_OK && !interrupted)
            fprintf(stderr, "ricochet: %s: failed: %s\n", e->name,
                    e->message);
    }

    json = compare_json(&o, info.name, m, n);
    if (!json) {
        fprintf(stderr, "ricochet: error: out of memory\n");
        rc = EXIT_RUNTIME;
        goto done;
    }
    if (rc_out_open(&js, o.out, "compare.json", &err) != RC_OK)
        goto io_error;
    fputs(json, js.f);
    fputc('\n', js.f);
    if (interrupted) {
        fprintf(stderr, "ricochet: interrupted; partial output kept as "
                        "%s/compare.*.partial\n",
                o.out);
        /* stopped by a signal: 128 + its number, as `run` */
        rc = rc_cli_interrupted() ? 128 + rc_cli_interrupted() : EXIT_RUNTIME;
        goto done;
    }
    /* The rows first, then the summary of them, as one commit. */
    {
        rc_outfile *all[2];
        all[0] = &csv;
        all[1] = &js;
        if (rc_out_commit_all(all, 2, &err) != RC_OK)
            goto io_error;
    }

    if (!o.quiet) {
        printf("%s: %d method%s, dt %g, %ld steps\n", info.name, n,
               n == 1 ? "" : "s", info.dt, info.steps);
        print_table(m, n);
        printf("output: %s/{compare.csv,compare.json} and one directory per "
               "method\n",
               o.out);
    }
    rc = EXIT_OK;
    goto done;

io_error:
    rc_cli_print_error(&err);
    rc = EXIT_RUNTIME;
done:
    rc_out_abandon(&csv);
    rc_out_abandon(&js);
    free(json);
    for (k = 0; k < n; ++k)
        rc_scenario_free(m[k].scn);
    free(m);
    free(methods_buf);
    free(o.sets);
    return rc;
}

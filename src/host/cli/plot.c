/* `ricochet plot DIR [--format png,svg] [--out PREFIX]`: draws, with
 * gnuplot, a run's diagnostics.csv, a comparison's compare.csv, a model
 * run's diagnostics.csv (generalized coordinates), a large system's
 * observables.csv, rdf.csv and msd.csv, or an ensemble's members.csv.
 * Which kind DIR is, its files say: ensemble.json or members.csv an
 * ensemble; compare.csv a comparison; else summary.json's "model"
 * object a model run, its scenario's "box" a large system (run_md.c),
 * anything else a particle run; without summary.json, diagnostics.csv a
 * particle run.  A directory that lacks a file its kind needs is
 * refused naming the file (exit 2).
 *
 * gnuplot reads the CSV itself, by file name, through a script written to
 * its stdin, and no image is drawn here; the data that pass through the
 * pipe are the few points plot computes (the MSD fit line, the means'
 * lines) and an ensemble's distributions (sorted here, per group).
 * This file reads the CSV once to find its columns by name in the header,
 * check every row, count rows (for thinning), take the initial values
 * that the plotted differences subtract, and find which series are
 * identically zero or constant (so that gnuplot is never handed an empty
 * range).  gnuplot then reads the file once more into a datablock of the
 * thinned rows (a comparison: one per method) and draws every image from
 * it, so a 10^6-row diagnostics.csv is read twice in all, not once per
 * curve and format (about 5 s for 10^6 rows, 1 s of it here).
 *
 * A comparison may hold a method that blew up: its last rows carry inf
 * or nan, which are drawn as gaps, and the y range is then that of the
 * methods that stayed finite.
 *
 * Images are written as NAME.partial and renamed when gnuplot exits 0;
 * on failure none is left behind.  Exit codes: 0 success, 2 bad input
 * (the message names the file), 1 no gnuplot or gnuplot failed. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 plus realpath */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"

/* Points per curve above which rows are thinned with gnuplot's `every`:
 * a 1000-pixel-wide plot cannot show more, and gnuplot stays fast. */
#define PLOT_MAX_POINTS 20000L
#define PLOT_PATH 4096
#define PLOT_MAX_IMAGES 8
#define PLOT_MAX_COLS 256
/* Columns one reader looks up by name (a model's coordinates included). */
#define PLOT_MAX_WANT 64

/* The columns plot reads, found by name in the header (other columns
 * may come and go), and the whole header for messages. */
static const char *const diag_cols[] = {
    "time", "energy", "modified_energy", "px", "py", "pz",
    "lx",   "ly",     "lz",              "min_gap"};
enum { D_TIME, D_ENERGY, D_MODIFIED, D_PX, D_LX = D_PX + 3, D_GAP = D_LX + 3,
       D_NCOLS };
static const char diag_header[] =
    "step,time,energy,modified_energy,kinetic,potential,px,py,pz,lx,ly,lz,"
    "min_gap,max_equality_error,active_contacts,reflections,"
    "solver_iterations";

static const char *const cmp_cols[] = {"method", "time", "energy",
                                       "rel_energy_error", "lx", "ly", "lz"};
enum { C_METHOD, C_TIME, C_ENERGY, C_REL, C_LX, C_NCOLS = C_LX + 3 };
static const char cmp_header[] =
    "method,step,time,energy,modified_energy,rel_energy_error,lx,ly,lz,"
    "min_gap";

static const char no_gnuplot_msg[] =
    "ricochet: plot needs gnuplot; install the Debian package gnuplot-nox "
    "(sudo apt-get install gnuplot-nox)\n";

/* ---------------------------------------------------------------- */
/* Small helpers.                                                    */

/* Smallest and largest of the values added; n counts them. */
typedef struct plot_range {
    double lo, hi;
    long n;
} plot_range;

static void range_init(plot_range *r)
{
    r->lo = INFINITY;
    r->hi = -INFINITY;
    r->n = 0;
}

static void range_add(plot_range *r, double v)
{
    if (v < r->lo)
        r->lo = v;
    if (v > r->hi)
        r->hi = v;
    r->n++;
}

static void range_merge(plot_range *r, const plot_range *s)
{
    if (s->n == 0)
        return;
    if (s->lo < r->lo)
        r->lo = s->lo;
    if (s->hi > r->hi)
        r->hi = s->hi;
    r->n += s->n;
}

static int range_is_zero(const plot_range *r)
{
    return r->n > 0 && r->lo == 0.0 && r->hi == 0.0;
}

/* snprintf that reports truncation; 0 or -1. */
static int join(char *buf, size_t size, const char *a, const char *b,
                const char *c)
{
    int n = snprintf(buf, size, "%s%s%s", a, b, c);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whole small file into a malloc'd string; NULL if unreadable or over
 * `cap` bytes. */
static char *slurp(const char *path, long cap)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && n <= cap &&
        fseek(f, 0, SEEK_SET) == 0 && (s = (char *)malloc((size_t)n + 1))) {
        size_t got = fread(s, 1, (size_t)n, f);
        s[got] = '\0';
    }
    fclose(f);
    return s;
}

/* A gnuplot single-quoted string: only ' needs escaping (as ''). */
static void gp_str(FILE *gp, const char *s)
{
    fputc('\'', gp);
    for (; *s; ++s) {
        if (*s == '\'')
            fputs("''", gp);
        else
            fputc(*s, gp);
    }
    fputc('\'', gp);
}

/* A double that gnuplot reads back exactly and as a float (an integer
 * literal would make gnuplot use integer arithmetic). */
static void gp_num(FILE *gp, double v)
{
    fprintf(gp, "%.17e", v);
}

/* Text safe for a title: control characters (a newline would end the
 * gnuplot command) become '?'. */
static void sanitize(char *s)
{
    for (; *s; ++s)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

/* Scenario name for titles: "name" (or scenario.name) of DIR/json_name,
 * else the directory's own name. */
static void plot_title_name(const char *dir, const char *json_name,
                            char *out, size_t size)
{
    char path[PLOT_PATH], *text;
    cJSON *root = NULL;
    const cJSON *name = NULL;
    out[0] = '\0';
    if (join(path, sizeof path, dir, "/", json_name) == 0 &&
        (text = slurp(path, 64L << 20)) != NULL) {
        root = cJSON_Parse(text);
        free(text);
        name = cJSON_GetObjectItemCaseSensitive(root, "name");
        if (!cJSON_IsString(name))
            name = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(root, "scenario"), "name");
        if (cJSON_IsString(name) && name->valuestring[0])
            snprintf(out, size, "%s", name->valuestring);
        cJSON_Delete(root);
    }
    if (!out[0]) {
        /* basename of dir without trailing slashes; "." gets its real name */
        char *real = realpath(dir, NULL);
        const char *d = real ? real : dir;
        size_t n = strlen(d);
        while (n > 1 && d[n - 1] == '/')
            --n;
        {
            size_t b = n;
            while (b > 0 && d[b - 1] != '/')
                --b;
            snprintf(out, size, "%.*s", (int)(n - b), d + b);
        }
        free(real);
    }
    sanitize(out);
}

/* energy_scale of DIR/summary.json, or 0 when absent. */
static double summary_energy_scale(const char *dir)
{
    char path[PLOT_PATH], *text;
    double s = 0.0;
    if (join(path, sizeof path, dir, "/summary.json", "") != 0 ||
        (text = slurp(path, 64L << 20)) == NULL)
        return 0.0;
    {
        cJSON *root = cJSON_Parse(text);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "energy_scale");
        if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble > 0)
            s = v->valuedouble;
        cJSON_Delete(root);
    }
    free(text);
    return s;
}

/* DIR/name parsed, or NULL (absent, unreadable or not JSON). */
static cJSON *read_json(const char *dir, const char *name)
{
    char path[PLOT_PATH], *text;
    cJSON *root;
    if (join(path, sizeof path, dir, "/", name) != 0 ||
        (text = slurp(path, 64L << 20)) == NULL)
        return NULL;
    root = cJSON_Parse(text);
    free(text);
    return root;
}

/* A number field of a JSON object (NAN when absent, null or not a
 * number); `sub` names an object inside it first, or NULL. */
static double json_num(const cJSON *root, const char *sub, const char *key)
{
    const cJSON *o = sub ? cJSON_GetObjectItemCaseSensitive(root, sub) : root;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Full path of gnuplot found on PATH, or -1.  An empty PATH entry means
 * the current directory (POSIX); an unset PATH means /usr/bin:/bin. */
static int find_gnuplot(char *out, size_t size)
{
    const char *path = getenv("PATH");
    const char *s;
    if (!path)
        path = "/usr/bin:/bin";
    s = path;
    for (;;) {
        const char *e = strchr(s, ':');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        int n = len ? snprintf(out, size, "%.*s/gnuplot", (int)len, s)
                    : snprintf(out, size, "./gnuplot");
        if (n > 0 && (size_t)n < size && is_file(out) &&
            access(out, X_OK) == 0)
            return 0;
        if (!e)
            break;
        s = e + 1;
    }
    return -1;
}

/* ---------------------------------------------------------------- */
/* CSV reading.                                                      */

typedef struct csv_reader {
    const char *path;
    FILE *f;
    char *line;
    size_t cap;
    long lineno;
    char *fields[PLOT_MAX_COLS];
    int nfields;
    int col[PLOT_MAX_WANT]; /* field index of each wanted column */
} csv_reader;

/* Next line split into fields (in place, no quoting: these files have
 * none).  1 a line, 0 end of file, -1 read error. */
static int csv_next(csv_reader *r)
{
    ssize_t n = getline(&r->line, &r->cap, r->f);
    char *s;
    if (n < 0)
        return ferror(r->f) ? -1 : 0;
    r->lineno++;
    while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
        r->line[--n] = '\0';
    r->nfields = 0;
    s = r->line;
    for (;;) {
        char *c = strchr(s, ',');
        if (r->nfields < PLOT_MAX_COLS)
            r->fields[r->nfields] = s;
        r->nfields++;
        if (!c)
            break;
        *c = '\0';
        s = c + 1;
    }
    return 1;
}

/* Open the file and find the `n` columns `names` in its header (into
 * r->col).  0, or EXIT_INPUT after a message naming the file and the
 * missing column; `header` is the full header the message shows. */
static int csv_open(csv_reader *r, const char *path,
                    const char *const *names, int n, const char *header)
{
    int k, j, got;
    memset(r, 0, sizeof *r);
    r->path = path;
    r->f = fopen(path, "r");
    if (!r->f) {
        fprintf(stderr, "ricochet: plot: cannot read %s: %s\n", path,
                strerror(errno));
        return EXIT_INPUT;
    }
    got = csv_next(r);
    if (got <= 0) {
        fprintf(stderr, "ricochet: plot: %s: %s\n", path,
                got < 0 ? strerror(errno) : "empty file (no header row)");
        return EXIT_INPUT;
    }
    if (r->nfields > PLOT_MAX_COLS) {
        fprintf(stderr, "ricochet: plot: %s:1: %d columns (at most %d)\n",
                path, r->nfields, PLOT_MAX_COLS);
        return EXIT_INPUT;
    }
    for (k = 0; k < n; ++k) {
        for (j = 0; j < r->nfields; ++j)
            if (!strcmp(r->fields[j], names[k]))
                break;
        if (j == r->nfields) {
            fprintf(stderr,
                    "ricochet: plot: %s:1: the header has no column '%s'; "
                    "expected\n  %s\n",
                    path, names[k], header);
            return EXIT_INPUT;
        }
        r->col[k] = j;
    }
    return 0;
}

static void csv_close(csv_reader *r)
{
    if (r->f)
        fclose(r->f);
    free(r->line);
    r->f = NULL;
    r->line = NULL;
}

/* The end of a scan of a CSV's data rows: a read error (got < 0) or
 * fewer than two distinct times is bad input.  rc: the scan's result so
 * far (returned as it is when nonzero). */
static int scan_end(int rc, int got, const char *path, long rows,
                    const plot_range *time)
{
    if (!rc && got < 0) {
        fprintf(stderr, "ricochet: plot: cannot read %s: %s\n", path,
                strerror(errno));
        rc = EXIT_INPUT;
    }
    if (!rc && (rows < 2 || time->lo == time->hi)) {
        fprintf(stderr,
                "ricochet: plot: %s: %ld data row%s; a plot needs at least "
                "two times\n",
                path, rows, rows == 1 ? "" : "s");
        rc = EXIT_INPUT;
    }
    return rc;
}

/* What csv_num accepts besides finite numbers. */
enum {
    NUM_FINITE = 0,
    NUM_OR_INF = 1,
    NUM_ANY = 2,     /* inf and nan too */
    NUM_OR_EMPTY = 3 /* anything, or an empty field (a model's quantity
                        that the method does not define): NaN */
};

/* Wanted column k (an index into csv_open's names) as a number.  0, or
 * EXIT_INPUT after a message naming file:line and the column. */
static int csv_num(const csv_reader *r, int k, const char *const *names,
                   int mode, double *v)
{
    const char *s = r->fields[r->col[k]];
    const char *name = names[k];
    char *end;
    int ok;
    if (mode == NUM_OR_EMPTY && !*s) {
        *v = NAN;
        return 0;
    }
    *v = strtod(s, &end);
    ok = end != s && !*end &&
         (isfinite(*v) || mode == NUM_ANY || mode == NUM_OR_EMPTY ||
          (mode == NUM_OR_INF && *v > 0 && !isnan(*v)));
    if (!ok) {
        fprintf(stderr, "ricochet: plot: %s:%ld: %s: not a %snumber: '%s'\n",
                r->path, r->lineno, name, mode == NUM_FINITE ? "finite " : "",
                s);
        return EXIT_INPUT;
    }
    return 0;
}

/* A data row with the header's column count; else a message. */
static int csv_check_row(const csv_reader *r, int ncols)
{
    if (r->nfields == 1 && r->fields[0][0] == '\0') {
        /* gnuplot reads a blank line as a block break, which would shift
         * every row index after it */
        fprintf(stderr, "ricochet: plot: %s:%ld: blank line\n", r->path,
                r->lineno);
        return EXIT_INPUT;
    }
    if (r->nfields != ncols) {
        fprintf(stderr,
                "ricochet: plot: %s:%ld: %d columns, the header has %d\n",
                r->path, r->lineno, r->nfields, ncols);
        return EXIT_INPUT;
    }
    return 0;
}

/* ---------------------------------------------------------------- */
/* Images and the gnuplot process.                                   */

typedef struct plot_opts {
    const char *dir;
    const char *prefix; /* --out, or NULL: images go into dir */
    int png, svg;
} plot_opts;

typedef struct plot_job {
    int kind[PLOT_MAX_IMAGES]; /* which plot: an index into the caller's bases */
    char final[PLOT_MAX_IMAGES][PLOT_PATH];
    char partial[PLOT_MAX_IMAGES][PLOT_PATH + 16];
    int n;
} plot_job;

/* Register image `base`.`ext` and create its .partial file (so that an
 * unwritable destination is reported here, not by gnuplot).  Returns the
 * image index, or -1 after a message. */
static int job_image(plot_job *job, const plot_opts *o, int kind,
                     const char *base, const char *ext)
{
    char name[256];
    FILE *f;
    int k = job->n, bad;
    if (k >= PLOT_MAX_IMAGES)
        return -1;
    snprintf(name, sizeof name, "%s.%s", base, ext);
    if (!o->prefix)
        bad = join(job->final[k], PLOT_PATH, o->dir, "/", name);
    else {
        size_t n = strlen(o->prefix);
        int bare = n > 0 && o->prefix[n - 1] == '/';
        bad = join(job->final[k], PLOT_PATH, o->prefix, bare ? "" : "_",
                   name);
    }
    if (bad || strchr(job->final[k], '\n')) {
        fprintf(stderr, "ricochet: plot: unusable output path for %s\n",
                name);
        return -1;
    }
    {
        size_t n = strlen(job->final[k]);
        memcpy(job->partial[k], job->final[k], n);
        memcpy(job->partial[k] + n, ".partial", sizeof ".partial");
    }
    f = fopen(job->partial[k], "wb");
    if (!f) {
        fprintf(stderr, "ricochet: plot: cannot write %s: %s\n",
                job->partial[k], strerror(errno));
        return -1;
    }
    fclose(f);
    job->kind[k] = kind;
    job->n++;
    return k;
}

static void job_discard(plot_job *job)
{
    int k;
    for (k = 0; k < job->n; ++k)
        unlink(job->partial[k]);
    job->n = 0;
}

/* Register stem.png and/or stem.svg (per o) for each of the n plots
 * whose want[p] is set (want NULL: all), kind p.  0, or EXIT_RUNTIME
 * after a message with every .partial removed. */
static int job_images(plot_job *job, const plot_opts *o, int n,
                      const char *const *stems, const int *want)
{
    int p, e;
    memset(job, 0, sizeof *job);
    for (p = 0; p < n; ++p)
        for (e = 0; e < 2; ++e)
            if ((!want || want[p]) && (e == 0 ? o->png : o->svg) &&
                job_image(job, o, p, stems[p], e == 0 ? "png" : "svg") < 0) {
                job_discard(job);
                return EXIT_RUNTIME;
            }
    return 0;
}

/* Start gnuplot with its stdout sent to our stderr (our stdout lists
 * the images).  SIGPIPE is ignored while it runs so that a gnuplot that
 * dies early shows up as a failed write and an exit status, not as our
 * death. */
static FILE *gp_open(const char *exe, void (**old_pipe)(int))
{
    char cmd[PLOT_PATH * 4 + 32], *c = cmd;
    const char *s;
    FILE *gp;
    c += sprintf(c, "exec '");
    for (s = exe; *s; ++s) {
        if (*s == '\'') {
            memcpy(c, "'\\''", 4);
            c += 4;
        } else
            *c++ = *s;
    }
    strcpy(c, "' 1>&2");
    fflush(stdout);
    fflush(stderr);
    *old_pipe = signal(SIGPIPE, SIG_IGN);
    gp = popen(cmd, "w");
    if (!gp) {
        fprintf(stderr, "ricochet: plot: cannot start %s: %s\n", exe,
                strerror(errno));
        signal(SIGPIPE, *old_pipe);
    }
    return gp;
}

/* Wait for gnuplot; on exit status 0 rename every image into place and
 * print its path, else remove them.  Returns the exit code. */
static int gp_finish(FILE *gp, int write_failed, void (*old_pipe)(int),
                     plot_job *job, const char *what)
{
    int status, k;
    if (fflush(gp) != 0 || ferror(gp))
        write_failed = 1;
    status = pclose(gp);
    signal(SIGPIPE, old_pipe);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (status != -1 && WIFEXITED(status))
            fprintf(stderr,
                    "ricochet: plot: gnuplot failed (exit status %d) while "
                    "drawing the plots of %s; no image written\n",
                    WEXITSTATUS(status), what);
        else if (status != -1 && WIFSIGNALED(status))
            fprintf(stderr,
                    "ricochet: plot: gnuplot was killed by signal %d while "
                    "drawing the plots of %s; no image written\n",
                    WTERMSIG(status), what);
        else
            fprintf(stderr,
                    "ricochet: plot: could not wait for gnuplot (%s); no "
                    "image written\n",
                    strerror(errno));
        job_discard(job);
        return EXIT_RUNTIME;
    }
    if (write_failed) {
        fprintf(stderr, "ricochet: plot: could not send the script to "
                        "gnuplot; no image written\n");
        job_discard(job);
        return EXIT_RUNTIME;
    }
    for (k = 0; k < job->n; ++k) {
        struct stat st;
        if (stat(job->partial[k], &st) != 0 || st.st_size == 0) {
            fprintf(stderr,
                    "ricochet: plot: gnuplot exited 0 but wrote nothing to "
                    "%s; no image written\n",
                    job->partial[k]);
            job_discard(job);
            return EXIT_RUNTIME;
        }
    }
    for (k = 0; k < job->n; ++k) {
        if (rename(job->partial[k], job->final[k]) != 0) {
            fprintf(stderr, "ricochet: plot: cannot rename %s to %s: %s\n",
                    job->partial[k], job->final[k], strerror(errno));
            for (; k < job->n; ++k)
                unlink(job->partial[k]);
            return EXIT_RUNTIME;
        }
        printf("%s\n", job->final[k]);
    }
    return EXIT_OK;
}

/* Terminal and output for image k, sized w x h pixels. */
static void gp_terminal(FILE *gp, const plot_job *job, int k, int w, int h)
{
    size_t n = strlen(job->final[k]);
    int svg = n > 4 && !strcmp(job->final[k] + n - 4, ".svg");
    /* noenhanced: scenario and method names keep their underscores */
    if (svg)
        fprintf(gp,
                "set terminal svg size %d,%d noenhanced font 'Sans,12' "
                "linewidth 1.2 background rgb 'white'\n",
                w, h);
    else
        fprintf(gp,
                "set terminal pngcairo size %d,%d noenhanced font 'Sans,10' "
                "linewidth 1.2 background rgb 'white'\n",
                w, h);
    fputs("set output ", gp);
    gp_str(gp, job->partial[k]);
    fputc('\n', gp);
}

/* Common look: grid, tic format that shows 1e-15 and 2000 alike, and
 * the key outside the data: above a panel of a stack (one line each, so
 * the stacked time axes stay aligned), below a single plot (it wraps
 * into rows when there are many methods). */
static void gp_style(FILE *gp, int stacked)
{
    fputs(stacked ? "set key tmargin right horizontal samplen 3\n"
                  : "set key bmargin center horizontal samplen 3\n",
          gp);
    fputs("set grid lc rgb '#d0d0d0'\n"
          "set format y '%g'\n"
          "set format x '%g'\n"
          "set autoscale xfix\n"
          "set lmargin 14\n"
          "set rmargin 5\n"
          "set style line 1 lc rgb '#1f77b4' lw 1.5\n"
          "set style line 2 lc rgb '#d62728' lw 1.5\n"
          "set style line 3 lc rgb '#2ca02c' lw 1.5\n"
          "set style line 4 lc rgb '#9467bd' lw 1.5\n"
          "set style line 5 lc rgb '#ff7f0e' lw 1.5\n"
          "set style line 6 lc rgb '#8c564b' lw 1.5\n"
          "set style line 7 lc rgb '#e377c2' lw 1.5\n"
          "set style line 8 lc rgb '#7f7f7f' lw 1.5\n"
          "set style increment user\n",
          gp);
}

/* y range for data spanning r: autoscale, unless r is a single value
 * (gnuplot would warn about an empty range). */
static void gp_yrange(FILE *gp, const plot_range *r)
{
    if (r->n > 0 && r->lo == r->hi) {
        double pad = r->lo != 0.0 ? 0.5 * fabs(r->lo) : 1.0;
        fputs("set yrange [", gp);
        gp_num(gp, r->lo - pad);
        fputc(':', gp);
        gp_num(gp, r->hi + pad);
        fputs("]\n", gp);
    } else {
        fputs("set autoscale y\n", gp);
    }
}

/* Title of a series, marked when it is exactly zero throughout. */
static void gp_series_title(FILE *gp, const char *t, const plot_range *r)
{
    char buf[600];
    snprintf(buf, sizeof buf, "%s%s", t,
             range_is_zero(r) ? " (exactly 0)" : "");
    gp_str(gp, buf);
}

/* "st", "nd", "rd" or "th" after n. */
static const char *ordinal(long n)
{
    if (n % 100 >= 11 && n % 100 <= 13)
        return "th";
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* The plot title: scenario name, what is drawn, and the thinning. */
static void gp_title_text(char *buf, size_t size, const char *name,
                          const char *what, long every, long rows)
{
    if (every > 1)
        snprintf(buf, size, "%s: %s (every %ld%s of %ld rows)", name, what,
                 every, ordinal(every), rows);
    else
        snprintf(buf, size, "%s: %s", name, what);
}

static long thin_every(long rows)
{
    return rows > PLOT_MAX_POINTS
               ? (rows + PLOT_MAX_POINTS - 1) / PLOT_MAX_POINTS
               : 1;
}

/* ---------------------------------------------------------------- */
/* A run directory: diagnostics.csv.                                 */


typedef struct run_scan {
    long rows;
    double scale;       /* divides H - H0 */
    const char *ylabel; /* names the scale */
    double h0, m0, p0[3], l0[3];
    int l_used[3];      /* component not identically zero */
    int col[D_NCOLS];   /* field index of each of diag_cols */
    plot_range err_h, err_m, dl[3], dp, gap, time;
} run_scan;

static int scan_run(const char *path, const char *dir, run_scan *s)
{
    csv_reader r;
    double summary_scale = summary_energy_scale(dir);
    int rc = csv_open(&r, path, diag_cols, D_NCOLS, diag_header), got = 0,
        ncols, k;
    memset(s, 0, sizeof *s);
    range_init(&s->err_h);
    range_init(&s->err_m);
    range_init(&s->dp);
    range_init(&s->gap);
    range_init(&s->time);
    for (k = 0; k < 3; ++k)
        range_init(&s->dl[k]);
    memcpy(s->col, r.col, sizeof s->col);
    ncols = r.nfields;
    while (!rc && (got = csv_next(&r)) == 1) {
        double t, h, m, p[3], l[3], g, dp2 = 0.0;
        rc = csv_check_row(&r, ncols);
        if (!rc)
            rc = csv_num(&r, D_TIME, diag_cols, NUM_FINITE, &t);
        if (!rc)
            rc = csv_num(&r, D_ENERGY, diag_cols, NUM_FINITE, &h);
        if (!rc)
            rc = csv_num(&r, D_MODIFIED, diag_cols, NUM_FINITE, &m);
        for (k = 0; k < 3 && !rc; ++k)
            rc = csv_num(&r, D_PX + k, diag_cols, NUM_FINITE, &p[k]);
        for (k = 0; k < 3 && !rc; ++k)
            rc = csv_num(&r, D_LX + k, diag_cols, NUM_FINITE, &l[k]);
        if (!rc)
            rc = csv_num(&r, D_GAP, diag_cols, NUM_OR_INF, &g);
        if (rc)
            break;
        if (s->rows == 0) {
            s->h0 = h;
            s->m0 = m;
            memcpy(s->p0, p, sizeof p);
            memcpy(s->l0, l, sizeof l);
            if (summary_scale > 0) {
                s->scale = summary_scale;
                s->ylabel = summary_scale == fabs(h) ? "(H - H0)/|H0|"
                                                     : "(H - H0)/(T0 + |V0|)";
            } else if (h != 0.0) {
                s->scale = fabs(h);
                s->ylabel = "(H - H0)/|H0|";
            } else {
                s->scale = 1.0;
                s->ylabel = "H - H0";
            }
        }
        range_add(&s->time, t);
        range_add(&s->err_h, (h - s->h0) / s->scale);
        range_add(&s->err_m, (m - s->m0) / s->scale);
        for (k = 0; k < 3; ++k) {
            range_add(&s->dl[k], l[k] - s->l0[k]);
            if (l[k] != 0.0)
                s->l_used[k] = 1;
            dp2 += (p[k] - s->p0[k]) * (p[k] - s->p0[k]);
        }
        range_add(&s->dp, sqrt(dp2));
        if (isfinite(g))
            range_add(&s->gap, g);
        s->rows++;
    }
    rc = scan_end(rc, got, path, s->rows, &s->time);
    csv_close(&r);
    return rc;
}

/* Panels of energy.*: energy error, angular momentum change (unless
 * every component is identically zero, as in 1-D), momentum change. */
static void gp_run_energy(FILE *gp, const run_scan *s, const char *title)
{
    static const char *const lname[3] = {"Lx - Lx0", "Ly - Ly0",
                                         "Lz - Lz0"};
    int panels = 2 + (s->l_used[0] || s->l_used[1] || s->l_used[2]);
    int k, first;
    plot_range r;
    fputs("set multiplot layout ", gp);
    fprintf(gp, "%d,1 title ", panels);
    gp_str(gp, title);
    fputs(" font ',12'\n", gp);
    gp_style(gp, 1);
    fputs("unset xlabel\n", gp);

    r = s->err_h;
    range_merge(&r, &s->err_m);
    gp_yrange(gp, &r);
    fputs("set ylabel ", gp);
    gp_str(gp, s->ylabel);
    fputs("\nplot $D using 1:2 with lines ls 1 title ", gp);
    gp_series_title(gp, "H (energy)", &s->err_h);
    fputs(", $D using 1:3 with lines ls 2 dt 2 title ", gp);
    gp_series_title(gp, "H~ (modified energy)", &s->err_m);
    fputc('\n', gp);

    if (panels == 3) {
        range_init(&r);
        for (k = 0; k < 3; ++k)
            if (s->l_used[k])
                range_merge(&r, &s->dl[k]);
        gp_yrange(gp, &r);
        fputs("set ylabel 'L - L0 (angular momentum)'\nplot", gp);
        for (k = 0, first = 1; k < 3; ++k) {
            if (!s->l_used[k])
                continue;
            fprintf(gp, "%s $D using 1:%d with lines ls %d title ",
                    first ? "" : ",", 4 + k, 3 + k);
            gp_series_title(gp, lname[k], &s->dl[k]);
            first = 0;
        }
        fputc('\n', gp);
    }

    gp_yrange(gp, &s->dp);
    fputs("set xlabel 'time'\n"
          "set ylabel '|P - P0| (momentum)'\n"
          "plot $D using 1:7 with lines ls 6 title ",
          gp);
    gp_series_title(gp, "|P - P0|", &s->dp);
    fputs("\nunset multiplot\n", gp);
}

/* The smallest gap (column col of $D) against time, with the contact
 * line g = 0. */
static void gp_gap(FILE *gp, const plot_range *gap, int col,
                   const char *title)
{
    gp_style(gp, 0);
    fputs("set title ", gp);
    gp_str(gp, title);
    fputs(" font ',12'\n", gp);
    gp_yrange(gp, gap);
    /* a row without inequalities would read inf: left out, not drawn */
    fprintf(gp,
            "set xlabel 'time' offset 0,0.5\n"
            "set ylabel 'min gap'\n"
            "plot $D using 1:($%d < 1e308 ? $%d : NaN) with lines ls 1 "
            "title 'smallest inequality value g', "
            "0 with lines dt 2 lc rgb '#555555' lw 1 title 'contact (g = 0)'\n",
            col, col);
}

static int plot_run(const plot_opts *o, const char *gnuplot,
                    const char *csv)
{
    run_scan s;
    plot_job job;
    char name[256], title[700];
    const char *bases[2] = {"energy", "min_gap"};
    int nplots, p, e, k, rc;
    long every;
    FILE *gp;
    void (*old_pipe)(int);
    /* gnuplot variables holding the column numbers, in diag_cols order */
    const char *var[D_NCOLS] = {"cT", "cH", "cM", "cPx", "cPy", "cPz",
                                "cLx", "cLy", "cLz", "cG"};

    rc = scan_run(csv, o->dir, &s);
    if (rc)
        return rc;
    if (!gnuplot) {
        fputs(no_gnuplot_msg, stderr);
        return EXIT_RUNTIME;
    }
    plot_title_name(o->dir, "summary.json", name, sizeof name);
    every = thin_every(s.rows);
    nplots = s.gap.n > 0 ? 2 : 1;

    memset(&job, 0, sizeof job);
    for (p = 0; p < nplots; ++p)
        for (e = 0; e < 2; ++e)
            if ((e == 0 ? o->png : o->svg) &&
                job_image(&job, o, p, bases[p], e == 0 ? "png" : "svg") < 0) {
                job_discard(&job);
                return EXIT_RUNTIME;
            }

    gp = gp_open(gnuplot, &old_pipe);
    if (!gp) {
        job_discard(&job);
        return EXIT_RUNTIME;
    }
    /* Read the file once: the thinned rows and every plotted quantity
     * into the datablock $D (columns: time, (H-H0)/S, (H~-H~0)/S,
     * Lx-Lx0, Ly-Ly0, Lz-Lz0, |P-P0|, min_gap). */
    for (k = 0; k < D_NCOLS; ++k) /* gnuplot's column() counts from 1 */
        fprintf(gp, "%s = %d\n", var[k], s.col[k] + 1);
    fputs("S = ", gp);
    gp_num(gp, s.scale);
    fputs("\nH0 = ", gp);
    gp_num(gp, s.h0);
    fputs("\nM0 = ", gp);
    gp_num(gp, s.m0);
    for (k = 0; k < 3; ++k) {
        fprintf(gp, "\nP0%d = ", k);
        gp_num(gp, s.p0[k]);
        fprintf(gp, "\nL0%d = ", k);
        gp_num(gp, s.l0[k]);
    }
    fputs("\nset datafile separator comma\n"
          "set table $D\n"
          "plot ",
          gp);
    gp_str(gp, csv);
    fprintf(gp,
            " skip 1 every %ld using (column(cT)):((column(cH) - H0) / S):"
            "((column(cM) - M0) / S):(column(cLx) - L00):"
            "(column(cLy) - L01):(column(cLz) - L02):"
            "(sqrt((column(cPx) - P00)**2 + (column(cPy) - P01)**2 + "
            "(column(cPz) - P02)**2)):(column(cG)) with table\n"
            "unset table\n"
            "set datafile separator whitespace\n",
            every);
    for (k = 0; k < job.n; ++k) {
        int gap = job.kind[k] == 1;
        int panels = 2 + (s.l_used[0] || s.l_used[1] || s.l_used[2]);
        gp_terminal(gp, &job, k, 1000, gap ? 500 : 250 * panels + 60);
        gp_title_text(title, sizeof title, name,
                      gap ? "smallest inequality gap"
                          : "energy and momentum",
                      every, s.rows);
        fputs("reset\n", gp);
        if (gap)
            gp_gap(gp, &s.gap, 8, title);
        else
            gp_run_energy(gp, &s, title);
        fputs("unset output\n", gp);
    }
    return gp_finish(gp, 0, old_pipe, &job, csv);
}

/* ---------------------------------------------------------------- */
/* A comparison directory: compare.csv.                              */


/* A method that failed at run time keeps its rows up to the failure,
 * where the state (and so the energy and L) may be inf or nan, and the
 * row before may hold values near overflow. */
typedef struct cmp_method {
    char *name;
    long first, last; /* data-row indices of its block */
    double h0, l0[3];
    int bad;          /* has a non-finite energy error or L */
    double bad_time;  /* time of its first such row */
    int scaled;       /* rel_energy_error is not (H - H0)/|H0| */
    plot_range err, dlz, dlnorm; /* finite values only */
} cmp_method;

typedef struct cmp_scan {
    cmp_method *m;
    int n, cap;
    long rows;
    int lxy_used; /* lx or ly nonzero somewhere: 3-D, plot |L - L0| */
    int col[C_NCOLS]; /* field index of each of cmp_cols */
} cmp_scan;

static void cmp_free(cmp_scan *s)
{
    int k;
    for (k = 0; k < s->n; ++k)
        free(s->m[k].name);
    free(s->m);
    memset(s, 0, sizeof *s);
}

static int scan_cmp(const char *path, cmp_scan *s)
{
    csv_reader r;
    int rc = csv_open(&r, path, cmp_cols, C_NCOLS, cmp_header), got = 0,
        ncols, k;
    memset(s, 0, sizeof *s);
    memcpy(s->col, r.col, sizeof s->col);
    ncols = r.nfields;
    while (!rc && (got = csv_next(&r)) == 1) {
        double t, h, e, l[3], d2 = 0.0;
        cmp_method *m;
        const char *name;
        rc = csv_check_row(&r, ncols);
        if (!rc)
            rc = csv_num(&r, C_TIME, cmp_cols, NUM_FINITE, &t);
        if (!rc)
            rc = csv_num(&r, C_ENERGY, cmp_cols, NUM_ANY, &h);
        if (!rc)
            rc = csv_num(&r, C_REL, cmp_cols, NUM_ANY, &e);
        for (k = 0; k < 3 && !rc; ++k)
            rc = csv_num(&r, C_LX + k, cmp_cols, NUM_ANY, &l[k]);
        if (rc)
            break;
        name = r.fields[r.col[C_METHOD]];
        if (!name[0]) {
            fprintf(stderr, "ricochet: plot: %s:%ld: empty method name\n",
                    path, r.lineno);
            rc = EXIT_INPUT;
            break;
        }
        if (s->n == 0 || strcmp(s->m[s->n - 1].name, name)) {
            for (k = 0; k < s->n; ++k)
                if (!strcmp(s->m[k].name, name))
                    break;
            if (k < s->n) {
                fprintf(stderr,
                        "ricochet: plot: %s:%ld: the rows of method '%s' are "
                        "not one contiguous block\n",
                        path, r.lineno, name);
                rc = EXIT_INPUT;
                break;
            }
            if (s->n == s->cap) {
                int cap = s->cap ? 2 * s->cap : 8;
                cmp_method *nm = (cmp_method *)realloc(
                    s->m, sizeof(cmp_method) * (size_t)cap);
                if (!nm) {
                    fputs("ricochet: plot: out of memory\n", stderr);
                    rc = EXIT_RUNTIME;
                    break;
                }
                s->m = nm;
                s->cap = cap;
            }
            m = &s->m[s->n];
            memset(m, 0, sizeof *m);
            m->name = (char *)malloc(strlen(name) + 1);
            if (!m->name) {
                fputs("ricochet: plot: out of memory\n", stderr);
                rc = EXIT_RUNTIME;
                break;
            }
            strcpy(m->name, name);
            sanitize(m->name);
            m->first = s->rows;
            m->h0 = h;
            memcpy(m->l0, l, sizeof l);
            range_init(&m->err);
            range_init(&m->dlz);
            range_init(&m->dlnorm);
            s->n++;
        }
        m = &s->m[s->n - 1];
        m->last = s->rows;
        if (isfinite(e))
            range_add(&m->err, e);
        if (isfinite(l[2] - m->l0[2]))
            range_add(&m->dlz, l[2] - m->l0[2]);
        for (k = 0; k < 3; ++k)
            d2 += (l[k] - m->l0[k]) * (l[k] - m->l0[k]);
        if (isfinite(d2))
            range_add(&m->dlnorm, sqrt(d2));
        if (!m->bad && !(isfinite(e) && isfinite(d2))) {
            m->bad = 1;
            m->bad_time = t;
        }
        /* which scale divides H - H0 (|H0| unless H0 is about 0); the
         * tolerance is far above the rounding of one division */
        if (isfinite(h) && isfinite(e) && e != 0.0 &&
            !(fabs(e * fabs(m->h0) - (h - m->h0)) <= 1e-6 * fabs(h - m->h0)))
            m->scaled = 1;
        if ((l[0] != 0.0 && !isnan(l[0])) || (l[1] != 0.0 && !isnan(l[1])))
            s->lxy_used = 1;
        s->rows++;
    }
    if (!rc && got < 0) {
        fprintf(stderr, "ricochet: plot: cannot read %s: %s\n", path,
                strerror(errno));
        rc = EXIT_INPUT;
    }
    if (!rc && s->rows == 0) {
        fprintf(stderr, "ricochet: plot: %s: no data rows\n", path);
        rc = EXIT_INPUT;
    }
    csv_close(&r);
    return rc;
}

static int plot_cmp(const plot_opts *o, const char *gnuplot,
                    const char *csv)
{
    cmp_scan s;
    plot_job job;
    char name[256], title[700];
    const char *bases[2] = {"compare_energy", "compare_momentum"};
    int p, e, k, i, rc, scaled = 0;
    long max_every = 1;
    FILE *gp;
    void (*old_pipe)(int);

    rc = scan_cmp(csv, &s);
    if (rc) {
        cmp_free(&s);
        return rc;
    }
    if (!gnuplot) {
        cmp_free(&s);
        fputs(no_gnuplot_msg, stderr);
        return EXIT_RUNTIME;
    }
    plot_title_name(o->dir, "compare.json", name, sizeof name);

    memset(&job, 0, sizeof job);
    for (p = 0; p < 2; ++p)
        for (e = 0; e < 2; ++e)
            if ((e == 0 ? o->png : o->svg) &&
                job_image(&job, o, p, bases[p], e == 0 ? "png" : "svg") < 0) {
                job_discard(&job);
                cmp_free(&s);
                return EXIT_RUNTIME;
            }

    gp = gp_open(gnuplot, &old_pipe);
    if (!gp) {
        job_discard(&job);
        cmp_free(&s);
        return EXIT_RUNTIME;
    }
    /* One datablock per method, $M<k>: time, rel_energy_error, L - L0
     * (lz - lz0 in 2-D, |L - L0| in 3-D), thinned within the method's
     * block of rows; inf and nan become NaN, which gnuplot leaves out. */
    fputs("set datafile separator comma\n"
          "fin(x) = abs(x) < 1e308 ? x : NaN\n",
          gp);
    for (i = 0; i < s.n; ++i) {
        const cmp_method *m = &s.m[i];
        long every = thin_every(m->last - m->first + 1);
        if (every > max_every)
            max_every = every;
        fprintf(gp, "set table $M%d\nplot ", i);
        gp_str(gp, csv);
        fprintf(gp, " skip 1 every %ld::%ld::%ld using %d:(fin($%d)):",
                every, m->first, m->last, s.col[C_TIME] + 1,
                s.col[C_REL] + 1);
        if (s.lxy_used) {
            fprintf(gp, "(fin(sqrt(($%d - ", s.col[C_LX] + 1);
            gp_num(gp, m->l0[0]);
            fprintf(gp, ")**2 + ($%d - ", s.col[C_LX + 1] + 1);
            gp_num(gp, m->l0[1]);
            fprintf(gp, ")**2 + ($%d - ", s.col[C_LX + 2] + 1);
            gp_num(gp, m->l0[2]);
            fputs(")**2)))", gp);
        } else {
            fprintf(gp, "(fin($%d - ", s.col[C_LX + 2] + 1);
            gp_num(gp, m->l0[2]);
            fputs("))", gp);
        }
        fputs(" with table\nunset table\n", gp);
    }
    fputs("set datafile separator whitespace\n", gp);

    for (i = 0; i < s.n; ++i)
        scaled |= s.m[i].scaled;
    for (k = 0; k < job.n; ++k) {
        int mom = job.kind[k] == 1;
        plot_range all, sound;
        gp_terminal(gp, &job, k, 1000, 550);
        fputs("reset\n", gp);
        gp_style(gp, 0);
        if (max_every > 1)
            snprintf(title, sizeof title,
                     "%s: %s (rows thinned to at most %ld per method)", name,
                     mom ? "change of angular momentum"
                         : "relative energy error",
                     PLOT_MAX_POINTS);
        else
            snprintf(title, sizeof title, "%s: %s", name,
                     mom ? "change of angular momentum"
                         : "relative energy error");
        fputs("set title ", gp);
        gp_str(gp, title);
        fputs(" font ',12'\nset xlabel 'time' offset 0,0.5\nset ylabel ", gp);
        gp_str(gp, mom ? (s.lxy_used ? "|L - L0|" : "Lz - Lz0")
                       : scaled ? "(H - H0)/energy_scale" : "(H - H0)/|H0|");
        fputc('\n', gp);
        /* The y range of the methods that stayed finite, when some did
         * not: a blow-up runs off the top instead of flattening them. */
        range_init(&all);
        range_init(&sound);
        for (i = 0; i < s.n; ++i) {
            const plot_range *r = mom ? (s.lxy_used ? &s.m[i].dlnorm
                                                    : &s.m[i].dlz)
                                      : &s.m[i].err;
            range_merge(&all, r);
            if (!s.m[i].bad)
                range_merge(&sound, r);
        }
        if (sound.n > 0 && sound.n < all.n && sound.lo < sound.hi) {
            double pad = 0.05 * (sound.hi - sound.lo);
            fputs("set yrange [", gp);
            gp_num(gp, sound.lo - pad);
            fputc(':', gp);
            gp_num(gp, sound.hi + pad);
            fputs("]\n", gp);
        } else
            gp_yrange(gp, sound.n > 0 && sound.n < all.n ? &sound : &all);
        fputs("plot", gp);
        for (i = 0; i < s.n; ++i) {
            const cmp_method *m = &s.m[i];
            const plot_range *r =
                mom ? (s.lxy_used ? &m->dlnorm : &m->dlz) : &m->err;
            char label[400];
            if (m->bad)
                snprintf(label, sizeof label, "%s (non-finite from t = %g)",
                         m->name, m->bad_time);
            else
                snprintf(label, sizeof label, "%s", m->name);
            /* a method with one row is a dot, not an invisible line */
            fprintf(gp, "%s $M%d using 1:%d with %s ls %d%s title ",
                    i ? "," : "", i, mom ? 3 : 2,
                    m->last > m->first ? "lines" : "points", 1 + i % 8,
                    m->last > m->first ? "" : " pt 7");
            if (m->bad)
                gp_str(gp, label);
            else
                gp_series_title(gp, label, r);
        }
        fputs("\nunset output\n", gp);
    }
    rc = gp_finish(gp, 0, old_pipe, &job, csv);
    cmp_free(&s);
    return rc;
}

/* ---------------------------------------------------------------- */
/* A model run (summary.json has a "model" object): diagnostics.csv   */
/* in generalized coordinates.                                       */

/* The coordinates drawn, one panel each: gnuplot's `using` takes at
 * most 14 columns, and the datablock holds time and these. */
#define MODEL_MAX_DRAWN 12

enum { M_TIME, M_ENERGY, M_DISCRETE, M_MODIFIED, M_CONSTRAINT, M_GAP,
       M_Q /* the coordinates follow */ };
static const char *const model_fixed_cols[M_Q] = {
    "time", "energy", "discrete_energy", "modified_energy",
    "max_constraint_error", "min_gap"};

typedef struct model_scan {
    long rows;
    int nq;     /* coordinates drawn */
    int nq_all; /* coordinates in summary.json */
    const char *names[M_Q + MODEL_MAX_DRAWN]; /* coordinates: borrowed
                                                 from the summary */
    int col[M_Q + MODEL_MAX_DRAWN];
    double scale;
    const char *ylabel;
    double e0[3];      /* first finite H, -D3Ld, H~ */
    plot_range err[3]; /* (E - E0)/scale of each; n = 0: not defined */
    plot_range cons, gap, time, q[MODEL_MAX_DRAWN];
} model_scan;

static int scan_model(const char *path, const cJSON *summary,
                      model_scan *s)
{
    const cJSON *coords = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(summary, "model"), "coordinates");
    const cJSON *c;
    double sscale = json_num(summary, NULL, "energy_scale");
    char header[1024];
    size_t hl;
    csv_reader r;
    int rc, got = 0, ncols, k, nw;
    memset(s, 0, sizeof *s);
    if (!cJSON_IsArray(coords)) {
        fprintf(stderr,
                "ricochet: plot: the summary.json next to %s has no "
                "model.coordinates\n",
                path);
        return EXIT_INPUT;
    }
    for (k = 0; k < M_Q; ++k)
        s->names[k] = model_fixed_cols[k];
    cJSON_ArrayForEach(c, coords)
    {
        if (!cJSON_IsString(c)) {
            fprintf(stderr,
                    "ricochet: plot: the summary.json next to %s: "
                    "model.coordinates holds a non-string\n",
                    path);
            return EXIT_INPUT;
        }
        if (s->nq < MODEL_MAX_DRAWN)
            s->names[M_Q + s->nq++] = c->valuestring;
        s->nq_all++;
    }
    nw = M_Q + s->nq;
    /* the columns looked for, for the message when one is missing */
    hl = 0;
    header[0] = '\0';
    for (k = 0; k < nw && hl + 64 < sizeof header; ++k)
        hl += (size_t)snprintf(header + hl, sizeof header - hl, "%s%.60s",
                               k ? "," : "", s->names[k]);
    snprintf(header + hl, sizeof header - hl, " (among others)");
    rc = csv_open(&r, path, s->names, nw, header);
    range_init(&s->cons);
    range_init(&s->gap);
    range_init(&s->time);
    for (k = 0; k < 3; ++k) {
        range_init(&s->err[k]);
        s->e0[k] = NAN;
    }
    for (k = 0; k < s->nq; ++k)
        range_init(&s->q[k]);
    memcpy(s->col, r.col, sizeof s->col);
    ncols = r.nfields;
    while (!rc && (got = csv_next(&r)) == 1) {
        double t, v[M_Q + MODEL_MAX_DRAWN];
        rc = csv_check_row(&r, ncols);
        if (!rc)
            rc = csv_num(&r, M_TIME, s->names, NUM_FINITE, &t);
        for (k = 1; k < nw && !rc; ++k)
            rc = csv_num(&r, k, s->names, NUM_OR_EMPTY, &v[k]);
        if (rc)
            break;
        if (s->rows == 0) {
            /* H's scale, as summary.json's energy_scale names it */
            if (sscale > 0 && isfinite(sscale)) {
                s->scale = sscale;
                s->ylabel = sscale == fabs(v[M_ENERGY])
                                ? "(E - E0)/|H0|"
                                : "(E - E0)/energy_scale";
            } else if (isfinite(v[M_ENERGY]) && v[M_ENERGY] != 0.0) {
                s->scale = fabs(v[M_ENERGY]);
                s->ylabel = "(E - E0)/|H0|";
            } else {
                s->scale = 1.0;
                s->ylabel = "E - E0";
            }
        }
        range_add(&s->time, t);
        for (k = 0; k < 3; ++k) {
            double e = v[M_ENERGY + k];
            if (!isfinite(e))
                continue;
            if (isnan(s->e0[k]))
                s->e0[k] = e; /* a method may define it from a later row */
            range_add(&s->err[k], (e - s->e0[k]) / s->scale);
        }
        if (isfinite(v[M_CONSTRAINT]))
            range_add(&s->cons, v[M_CONSTRAINT]);
        if (isfinite(v[M_GAP]))
            range_add(&s->gap, v[M_GAP]);
        for (k = 0; k < s->nq; ++k)
            if (isfinite(v[M_Q + k]))
                range_add(&s->q[k], v[M_Q + k]);
        s->rows++;
    }
    rc = scan_end(rc, got, path, s->rows, &s->time);
    csv_close(&r);
    return rc;
}

/* Stacked panels of energy.*: the energies the method defines, each as
 * its change from its first value on H's scale; the constraint error
 * when the kind has constraints. */
static void gp_model_energy(FILE *gp, const model_scan *s, const char *title)
{
    static const char *const ename[3] = {
        "H (energy)", "-D3Ld (discrete energy)",
        "H~ (truncated modified Hamiltonian)"};
    int panels = 1 + (s->cons.n > 0), k, first;
    plot_range r;
    fprintf(gp, "set multiplot layout %d,1 title ", panels);
    gp_str(gp, title);
    fputs(" font ',12'\n", gp);
    gp_style(gp, 1);
    if (panels > 1)
        fputs("unset xlabel\n", gp);
    else
        fputs("set xlabel 'time'\n", gp);
    range_init(&r);
    for (k = 0; k < 3; ++k)
        range_merge(&r, &s->err[k]);
    if (r.n == 0)
        fputs("set yrange [-1:1]\n", gp);
    else
        gp_yrange(gp, &r);
    fputs("set ylabel ", gp);
    gp_str(gp, s->ylabel);
    fputs("\nplot", gp);
    for (k = 0, first = 1; k < 3; ++k) {
        if (s->err[k].n == 0)
            continue; /* the method does not define it */
        fprintf(gp, "%s $D using 1:%d with lines ls %d%s title ",
                first ? "" : ",", 2 + k, 1 + k, k ? " dt 2" : "");
        gp_series_title(gp, ename[k], &s->err[k]);
        first = 0;
    }
    if (first) /* no energy is finite anywhere: an empty panel (its
                  points lie outside the y range, so none is drawn) */
        fputs(" $D using 1:(2) with lines title 'no finite energy'", gp);
    fputc('\n', gp);
    if (s->cons.n > 0) {
        gp_yrange(gp, &s->cons);
        fputs("set xlabel 'time'\n"
              "set ylabel 'constraint error'\n"
              "plot $D using 1:5 with lines ls 4 title ",
              gp);
        gp_series_title(gp, "max |constraint|", &s->cons);
        fputc('\n', gp);
    }
    fputs("unset multiplot\n", gp);
}

/* coordinates.*: one panel per coordinate, in one column up to six and
 * in two beyond. */
static void gp_model_coords(FILE *gp, const model_scan *s, const char *title)
{
    int k, cols = s->nq > 6 ? 2 : 1, rows = (s->nq + cols - 1) / cols;
    fprintf(gp, "set multiplot layout %d,%d columnsfirst title ", rows, cols);
    gp_str(gp, title);
    fputs(" font ',12'\n", gp);
    gp_style(gp, 1);
    fputs("set key off\n", gp);
    for (k = 0; k < s->nq; ++k) {
        /* the time axis is labelled under the bottom panel of a column */
        if ((k + 1) % rows == 0 || k == s->nq - 1)
            fputs("set xlabel 'time'\n", gp);
        else
            fputs("unset xlabel\n", gp);
        fputs("set ylabel ", gp);
        gp_str(gp, s->names[M_Q + k]);
        fputc('\n', gp);
        if (s->q[k].n == 0) {
            /* never finite: an empty panel (gnuplot refuses a plot of
             * undefined points; these lie outside the range) */
            fputs("set yrange [-1:1]\nplot $Q using 1:(2) notitle\n", gp);
            continue;
        }
        gp_yrange(gp, &s->q[k]);
        fprintf(gp, "plot $Q using 1:%d with lines ls %d notitle\n", 2 + k,
                1 + k % 8);
    }
    fputs("unset multiplot\n", gp);
}

static int plot_model(const plot_opts *o, const char *gnuplot,
                      const char *csv, const cJSON *summary)
{
    model_scan s;
    plot_job job;
    char name[256], title[700];
    const char *stems[3] = {"energy", "min_gap", "coordinates"};
    int want[3], k, rc;
    long every;
    FILE *gp;
    void (*old_pipe)(int);

    rc = scan_model(csv, summary, &s);
    if (rc)
        return rc;
    if (!gnuplot) {
        fputs(no_gnuplot_msg, stderr);
        return EXIT_RUNTIME;
    }
    plot_title_name(o->dir, "summary.json", name, sizeof name);
    every = thin_every(s.rows);
    want[0] = 1;
    want[1] = s.gap.n > 0; /* a kind without inequalities writes none */
    want[2] = s.nq > 0;
    if ((rc = job_images(&job, o, 3, stems, want)) != 0)
        return rc;
    gp = gp_open(gnuplot, &old_pipe);
    if (!gp) {
        job_discard(&job);
        return EXIT_RUNTIME;
    }
    /* $D: time, the three energies' changes on H's scale, the
     * constraint error, min_gap; $Q: time and the coordinates.  An
     * empty field (a quantity the method does not define) and inf read
     * as NaN, which gnuplot leaves out; the row stays. */
    fputs("set datafile separator comma\n"
          "fin(x) = abs(x) < 1e308 ? x : NaN\n"
          "S = ",
          gp);
    gp_num(gp, s.scale);
    for (k = 0; k < 3; ++k) {
        fprintf(gp, "\nE0%d = ", k);
        gp_num(gp, isnan(s.e0[k]) ? 0.0 : s.e0[k]);
    }
    fputs("\nset table $D\nplot ", gp);
    gp_str(gp, csv);
    fprintf(gp,
            " skip 1 every %ld using (column(%d)):"
            "(fin((column(%d) - E00) / S)):(fin((column(%d) - E01) / S)):"
            "(fin((column(%d) - E02) / S)):(fin(column(%d))):"
            "(fin(column(%d))) with table\nunset table\n",
            every, s.col[M_TIME] + 1, s.col[M_ENERGY] + 1,
            s.col[M_DISCRETE] + 1, s.col[M_MODIFIED] + 1,
            s.col[M_CONSTRAINT] + 1, s.col[M_GAP] + 1);
    if (s.nq > 0) {
        fputs("set table $Q\nplot ", gp);
        gp_str(gp, csv);
        fprintf(gp, " skip 1 every %ld using (column(%d))", every,
                s.col[M_TIME] + 1);
        for (k = 0; k < s.nq; ++k)
            fprintf(gp, ":(fin(column(%d)))", s.col[M_Q + k] + 1);
        fputs(" with table\nunset table\n", gp);
    }
    fputs("set datafile separator whitespace\n", gp);
    for (k = 0; k < job.n; ++k) {
        int kind = job.kind[k];
        int panels = kind == 0 ? 1 + (s.cons.n > 0)
                               : kind == 2 ? (s.nq > 6 ? (s.nq + 1) / 2 : s.nq)
                                           : 0;
        char what[200];
        if (kind == 2 && s.nq < s.nq_all)
            snprintf(what, sizeof what, "coordinates (the first %d of %d)",
                     s.nq, s.nq_all);
        else
            snprintf(what, sizeof what, "%s",
                     kind == 0   ? "energies and constraint"
                     : kind == 1 ? "smallest inequality gap"
                                 : "coordinates");
        if (kind == 0 && s.cons.n == 0)
            snprintf(what, sizeof what, "energies");
        gp_terminal(gp, &job, k, 1000, kind == 1 ? 500 : 250 * panels + 60);
        gp_title_text(title, sizeof title, name, what, every, s.rows);
        fputs("reset\n", gp);
        if (kind == 0)
            gp_model_energy(gp, &s, title);
        else if (kind == 1)
            gp_gap(gp, &s.gap, 6, title);
        else
            gp_model_coords(gp, &s, title);
        fputs("unset output\n", gp);
    }
    return gp_finish(gp, 0, old_pipe, &job, csv);
}

/* ---------------------------------------------------------------- */
/* A large system (summary.json's scenario has a box): observables.csv, */
/* rdf.csv and msd.csv, with the means and the fit of summary.json.  */

enum { L_TIME, L_TEMP, L_Z, L_COLL, L_NCOLS };
static const char *const large_cols[L_NCOLS] = {"time", "temperature", "Z",
                                                "collisions"};
static const char large_header[] =
    "step,time,temperature,kinetic_energy,potential_energy,energy,"
    "momentum_x,momentum_y,momentum_z,pressure,pressure_kinetic,"
    "pressure_virial,pressure_collision,Z,collisions,wall_collisions,"
    "largest_island,msd,max_overlap";
static const char *const rdf_cols[2] = {"r", "g"};
static const char *const msd_cols[2] = {"time", "msd"};

typedef struct large_scan {
    long rows, rdf_rows, msd_rows;
    int col[L_NCOLS], rdf_col[2], msd_col[2];
    double n, d, equilibrate;
    plot_range time, temp, z, rate, g, msd;
    double z_mean, z_err, z_ref, rate_mean, rate_err;
    const char *z_ref_name;
    /* the run's MSD fit, drawn over the rows it fitted: slope 2 d D
     * from summary.json, line through (fit_t, fit_msd), the mean of
     * those rows */
    double diffusion, slope, fit_t, fit_msd, fit_t0, fit_t1;
} large_scan;

/* A two-column CSV (rdf.csv, msd.csv): every row checked, the rows
 * counted, the ranges of both columns; with `msd`, the mean of the
 * second half of the rows (index floor(n/2) on) into s. */
static int scan_pair(const char *path, const char *const *names,
                     const char *header, int *col, long *rows,
                     plot_range *x, plot_range *y, large_scan *msd)
{
    csv_reader r;
    int rc = csv_open(&r, path, names, 2, header), got = 0, ncols;
    double *xs = NULL, *ys = NULL;
    long cap = 0, k;
    *rows = 0;
    range_init(x);
    range_init(y);
    memcpy(col, r.col, 2 * sizeof *col);
    ncols = r.nfields;
    while (!rc && (got = csv_next(&r)) == 1) {
        double v[2];
        rc = csv_check_row(&r, ncols);
        if (!rc)
            rc = csv_num(&r, 0, names, NUM_FINITE, &v[0]);
        if (!rc)
            rc = csv_num(&r, 1, names, NUM_FINITE, &v[1]);
        if (rc)
            break;
        range_add(x, v[0]);
        range_add(y, v[1]);
        if (msd) {
            if (*rows == cap) {
                long nc = cap ? 2 * cap : 1024;
                double *nx = (double *)realloc(xs, sizeof(double) * (size_t)nc);
                double *ny = nx ? (double *)realloc(ys, sizeof(double) *
                                                            (size_t)nc)
                                : NULL;
                if (nx)
                    xs = nx;
                if (!ny) {
                    fputs("ricochet: plot: out of memory\n", stderr);
                    rc = EXIT_RUNTIME;
                    break;
                }
                ys = ny;
                cap = nc;
            }
            xs[*rows] = v[0];
            ys[*rows] = v[1];
        }
        (*rows)++;
    }
    if (!rc && got < 0) {
        fprintf(stderr, "ricochet: plot: cannot read %s: %s\n", path,
                strerror(errno));
        rc = EXIT_INPUT;
    }
    if (!rc && msd && *rows >= 2) {
        /* run_md.c fits the rows from index n/2 on (least squares); the
         * line it fitted passes through their mean */
        long from = *rows / 2, m = *rows - from;
        double st = 0.0, sm = 0.0;
        for (k = from; k < *rows; ++k) {
            st += xs[k];
            sm += ys[k];
        }
        msd->fit_t = st / (double)m;
        msd->fit_msd = sm / (double)m;
        msd->fit_t0 = xs[from];
        msd->fit_t1 = xs[*rows - 1];
    }
    free(xs);
    free(ys);
    csv_close(&r);
    return rc;
}

static int scan_large(const char *dir, const cJSON *summary, large_scan *s)
{
    char path[PLOT_PATH];
    csv_reader r;
    int rc, got = 0, ncols;
    double tprev = NAN;
    const cJSON *cf;
    memset(s, 0, sizeof *s);
    s->n = json_num(summary, NULL, "particles");
    s->d = json_num(summary, NULL, "dimension");
    s->equilibrate = json_num(summary, NULL, "equilibrate");
    s->z_mean = json_num(summary, "compressibility_factor", "mean");
    s->z_err = json_num(summary, "compressibility_factor", "stderr");
    s->rate_mean = json_num(summary, "collision_rate_per_particle", "mean");
    s->rate_err = json_num(summary, "collision_rate_per_particle", "stderr");
    s->diffusion = json_num(summary, NULL, "diffusion_coefficient");
    cf = cJSON_GetObjectItemCaseSensitive(summary, "compressibility_factor");
    s->z_ref = NAN;
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(cf, "carnahan_starling"))) {
        s->z_ref = json_num(cf, NULL, "carnahan_starling");
        s->z_ref_name = "Carnahan-Starling";
    } else if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(cf, "henderson"))) {
        s->z_ref = json_num(cf, NULL, "henderson");
        s->z_ref_name = "Henderson";
    }
    if (!(s->n >= 1) || !(s->d >= 1 && s->d <= 3)) {
        fprintf(stderr,
                "ricochet: plot: %s/summary.json: a large system's summary "
                "needs 'particles' and 'dimension'\n",
                dir);
        return EXIT_INPUT;
    }
    s->slope = 2.0 * s->d * s->diffusion; /* MSD = 2 d D t */

    /* (rc_cli_plot checked that DIR/<these names> fit in PLOT_PATH) */
    join(path, sizeof path, dir, "/", "observables.csv");
    rc = csv_open(&r, path, large_cols, L_NCOLS, large_header);
    range_init(&s->time);
    range_init(&s->temp);
    range_init(&s->z);
    range_init(&s->rate);
    memcpy(s->col, r.col, sizeof s->col);
    ncols = r.nfields;
    while (!rc && (got = csv_next(&r)) == 1) {
        double v[L_NCOLS];
        int k;
        rc = csv_check_row(&r, ncols);
        for (k = 0; k < L_NCOLS && !rc; ++k)
            rc = csv_num(&r, k, large_cols, NUM_FINITE, &v[k]);
        if (rc)
            break;
        range_add(&s->time, v[L_TIME]);
        range_add(&s->temp, v[L_TEMP]);
        range_add(&s->z, v[L_Z]);
        /* collisions count the interval since the previous row */
        if (v[L_TIME] > tprev)
            range_add(&s->rate, 2.0 * v[L_COLL] / (s->n * (v[L_TIME] - tprev)));
        tprev = v[L_TIME];
        s->rows++;
    }
    rc = scan_end(rc, got, path, s->rows, &s->time);
    csv_close(&r);
    if (rc)
        return rc;
    {
        plot_range x; /* r and the MSD's time: gnuplot autoscales them */
        join(path, sizeof path, dir, "/", "rdf.csv");
        rc = scan_pair(path, rdf_cols, "r,g", s->rdf_col, &s->rdf_rows, &x,
                       &s->g, NULL);
        if (!rc) {
            join(path, sizeof path, dir, "/", "msd.csv");
            rc = scan_pair(path, msd_cols, "time,msd", s->msd_col,
                           &s->msd_rows, &x, &s->msd, s);
        }
    }
    return rc;
}

/* A horizontal line over [t0, t1] at y, as a datablock: gnuplot's plot
 * command gives a function no range of its own. */
static void gp_hline(FILE *gp, const char *block, double t0, double t1,
                     double y)
{
    fprintf(gp, "%s << EOD\n", block);
    gp_num(gp, t0);
    fputc(' ', gp);
    gp_num(gp, y);
    fputc('\n', gp);
    gp_num(gp, t1);
    fputc(' ', gp);
    gp_num(gp, y);
    fputs("\nEOD\n", gp);
}

/* observables.*: Z, temperature and the collision rate against time,
 * with summary.json's means over the rows after equilibration (drawn
 * over those rows) and the equation of state's Z. */
/* The curve of a mean over the equilibrated rows (datablock `block`,
 * drawn only when the run reports the mean), titled with its standard
 * error when the run reports one. */
static void gp_mean_line(FILE *gp, const char *block, double mean,
                         double err)
{
    char label[96];
    if (!isfinite(mean))
        return;
    if (isfinite(err))
        snprintf(label, sizeof label, "mean %.4g +- %.2g", mean, err);
    else
        snprintf(label, sizeof label, "mean %.4g", mean);
    fprintf(gp, ", %s using 1:2 with lines ls 2 lw 2 dt 2 title ", block);
    gp_str(gp, label);
}

static void gp_large_observables(FILE *gp, const large_scan *s,
                                 const char *title)
{
    char label[300];
    plot_range r;
    int eq = s->equilibrate > s->time.lo && s->equilibrate < s->time.hi;
    fputs("set multiplot layout 3,1 title ", gp);
    gp_str(gp, title);
    fputs(" font ',12'\n", gp);
    gp_style(gp, 1);
    fputs("unset xlabel\n", gp);
    if (eq) {
        fputs("set arrow 1 from ", gp);
        gp_num(gp, s->equilibrate);
        fputs(", graph 0 to ", gp);
        gp_num(gp, s->equilibrate);
        fputs(", graph 1 nohead dt 3 lc rgb '#555555'\n", gp);
    }

    r = s->z;
    if (isfinite(s->z_mean))
        range_add(&r, s->z_mean);
    if (isfinite(s->z_ref))
        range_add(&r, s->z_ref);
    gp_yrange(gp, &r);
    fputs("set ylabel 'Z = PV/NkT'\nplot $A every EVERY using 1:2 with lines ls 1 "
          "title 'Z of each row'",
          gp);
    gp_mean_line(gp, "$ZM", s->z_mean, s->z_err);
    if (isfinite(s->z_ref)) {
        snprintf(label, sizeof label, "%s %.4g", s->z_ref_name, s->z_ref);
        fputs(", ", gp);
        gp_num(gp, s->z_ref);
        fputs(" with lines ls 3 dt 2 title ", gp);
        gp_str(gp, label);
    }
    fputc('\n', gp);

    gp_yrange(gp, &s->temp);
    fputs("set ylabel 'temperature'\n"
          "plot $A every EVERY using 1:3 with lines ls 4 title 'kT of each row'\n",
          gp);

    r = s->rate;
    if (isfinite(s->rate_mean))
        range_add(&r, s->rate_mean);
    gp_yrange(gp, &r);
    fputs("set xlabel 'time'\n"
          "set ylabel 'collision rate per particle'\n"
          "plot $A every EVERY using 1:4 with lines ls 5 title "
          "'2 collisions / (N interval) of each row'",
          gp);
    gp_mean_line(gp, "$RM", s->rate_mean, s->rate_err);
    fputs("\nunset multiplot\n", gp);
}

static void gp_large_rdf(FILE *gp, const large_scan *s, const char *title)
{
    gp_style(gp, 0);
    fputs("set title ", gp);
    gp_str(gp, title);
    fputs(" font ',12'\n", gp);
    gp_yrange(gp, &s->g);
    /* inside, top right: g(r) has settled near 1 there */
    fputs("set key inside top right vertical Right noreverse\n"
          "set xlabel 'r' offset 0,0.5\n"
          "set ylabel 'g(r)'\n"
          "plot $G using 1:2 with lines ls 1 title 'g(r)', "
          "1 with lines dt 2 lc rgb '#555555' lw 1 title 'ideal gas "
          "(g = 1)'\n",
          gp);
}

static void gp_large_msd(FILE *gp, const large_scan *s, const char *title)
{
    char label[400];
    plot_range r = s->msd;
    gp_style(gp, 0);
    fputs("set title ", gp);
    gp_str(gp, title);
    fputs(" font ',12'\n", gp);
    if (isfinite(s->slope)) {
        range_add(&r, s->fit_msd + s->slope * (s->fit_t0 - s->fit_t));
        range_add(&r, s->fit_msd + s->slope * (s->fit_t1 - s->fit_t));
    }
    gp_yrange(gp, &r);
    /* one key line each: the fit's title is long */
    fputs("set key bmargin left vertical Left reverse\n"
          "set xlabel 'time since equilibration' offset 0,0.5\n"
          "set ylabel 'mean-squared displacement'\n"
          "plot $M using 1:2 with linespoints ls 1 pt 7 ps 0.4 "
          "title 'MSD (msd.csv)'",
          gp);
    if (isfinite(s->slope)) {
        /* summary.json reports D only: the line is drawn with the
         * run's slope through the mean of the rows it fitted (where its
         * least-squares line passes), over those rows */
        snprintf(label, sizeof label,
                 "the run's fit over its second half: slope %gD = %.4g "
                 "(D = %.4g in summary.json), through those rows' mean",
                 2.0 * s->d, s->slope, s->diffusion);
        fputs(", $F using 1:2 with lines ls 2 lw 2.5 dt 2 title ", gp);
        gp_str(gp, label);
    }
    fputc('\n', gp);
}

static int plot_large(const plot_opts *o, const char *gnuplot,
                      const cJSON *summary)
{
    large_scan s;
    plot_job job;
    char name[256], title[700], path[PLOT_PATH];
    const char *stems[3] = {"observables", "rdf", "msd"};
    int want[3], k, rc;
    long every;
    FILE *gp;
    void (*old_pipe)(int);

    rc = scan_large(o->dir, summary, &s);
    if (rc)
        return rc;
    if (!gnuplot) {
        fputs(no_gnuplot_msg, stderr);
        return EXIT_RUNTIME;
    }
    plot_title_name(o->dir, "summary.json", name, sizeof name);
    every = thin_every(s.rows);
    want[0] = 1;
    /* a run that ended before equilibration has no g(r) and no MSD */
    want[1] = s.rdf_rows >= 2;
    want[2] = s.msd_rows >= 2;
    if (!want[1])
        fprintf(stderr,
                "ricochet: plot: %s/rdf.csv has no g(r) (no sample after "
                "equilibration); rdf not drawn\n",
                o->dir);
    if (!want[2])
        fprintf(stderr,
                "ricochet: plot: %s/msd.csv has fewer than two rows; msd "
                "not drawn\n",
                o->dir);
    if ((rc = job_images(&job, o, 3, stems, want)) != 0)
        return rc;
    gp = gp_open(gnuplot, &old_pipe);
    if (!gp) {
        job_discard(&job);
        return EXIT_RUNTIME;
    }
    /* $A: time, Z, temperature and the collision rate of every row (the
     * rate needs the previous row's time, so the rows are thinned when
     * drawn, not here); $G: r, g; $M: time, msd; $F the fitted line. */
    join(path, sizeof path, o->dir, "/", "observables.csv");
    fputs("set datafile separator comma\nN = ", gp);
    gp_num(gp, s.n);
    fputs("\ntp = NaN\nset table $A\nplot ", gp);
    gp_str(gp, path);
    fprintf(gp,
            " skip 1 using (t = column(%d), "
            "rate = t > tp ? 2 * column(%d) / (N * (t - tp)) : NaN, "
            "tp = t, t):(column(%d)):(column(%d)):(rate) with table\n"
            "unset table\n",
            s.col[L_TIME] + 1, s.col[L_COLL] + 1, s.col[L_Z] + 1,
            s.col[L_TEMP] + 1);
    if (want[1]) {
        join(path, sizeof path, o->dir, "/", "rdf.csv");
        fputs("set table $G\nplot ", gp);
        gp_str(gp, path);
        fprintf(gp, " skip 1 using %d:%d with table\nunset table\n",
                s.rdf_col[0] + 1, s.rdf_col[1] + 1);
    }
    if (want[2]) {
        join(path, sizeof path, o->dir, "/", "msd.csv");
        fputs("set table $M\nplot ", gp);
        gp_str(gp, path);
        fprintf(gp, " skip 1 every %ld using %d:%d with table\nunset table\n",
                thin_every(s.msd_rows), s.msd_col[0] + 1, s.msd_col[1] + 1);
    }
    fputs("set datafile separator whitespace\n", gp);
    if (isfinite(s.z_mean))
        gp_hline(gp, "$ZM", s.equilibrate, s.time.hi, s.z_mean);
    if (isfinite(s.rate_mean))
        gp_hline(gp, "$RM", s.equilibrate, s.time.hi, s.rate_mean);
    if (isfinite(s.slope)) {
        fputs("$F << EOD\n", gp);
        gp_num(gp, s.fit_t0);
        fputc(' ', gp);
        gp_num(gp, s.fit_msd + s.slope * (s.fit_t0 - s.fit_t));
        fputc('\n', gp);
        gp_num(gp, s.fit_t1);
        fputc(' ', gp);
        gp_num(gp, s.fit_msd + s.slope * (s.fit_t1 - s.fit_t));
        fputs("\nEOD\n", gp);
    }
    for (k = 0; k < job.n; ++k) {
        int kind = job.kind[k];
        char what[200];
        if (kind == 0)
            snprintf(what, sizeof what,
                     "observables%s", s.equilibrate > s.time.lo &&
                                              s.equilibrate < s.time.hi
                                          ? " (dotted: end of equilibration; "
                                            "means over the rows after it)"
                                          : "");
        else if (kind == 1 && json_num(summary, NULL, "rdf_samples") > 0)
            snprintf(what, sizeof what,
                     "radial distribution function (%.0f configurations)",
                     json_num(summary, NULL, "rdf_samples"));
        else if (kind == 1)
            snprintf(what, sizeof what, "radial distribution function");
        else
            snprintf(what, sizeof what, "mean-squared displacement");
        gp_terminal(gp, &job, k, 1000, kind == 0 ? 3 * 250 + 60 : 500);
        gp_title_text(title, sizeof title, name, what,
                      kind == 0 ? every : kind == 2 ? thin_every(s.msd_rows) : 1,
                      kind == 0 ? s.rows : s.msd_rows);
        fputs("reset\n", gp);
        if (kind == 0) {
            /* thinned here: the rate was computed from every row */
            fprintf(gp, "EVERY = %ld\n", every);
            gp_large_observables(gp, &s, title);
        } else if (kind == 1)
            gp_large_rdf(gp, &s, title);
        else
            gp_large_msd(gp, &s, title);
        fputs("unset output\n", gp);
    }
    return gp_finish(gp, 0, old_pipe, &job, "observables.csv");
}

/* ---------------------------------------------------------------- */
/* An ensemble (ensemble.json and members.csv).                     */
/*                                                                   */
/* energy_errors.* draws, for the windowed energy drift and the      */
/* largest relative energy error, the empirical distribution         */
/* function over the ok members: one curve per integrator setting    */
/* (the members.csv columns integrator.method, integrator.dt, ... of */
/* an ensemble that varies them; one curve otherwise).  An empirical */
/* CDF on a log x axis rather than a histogram: the errors span      */
/* decades (between methods and steps, and between members near and  */
/* far from an impact), which a log axis shows whole; the CDF needs  */
/* no bins (whose width would change the picture and leave sparse    */
/* tails as empty or single-member bars), groups of different sizes  */
/* compare directly (each runs from 0 to 1), several curves overlaid */
/* stay legible where overlaid histograms hide each other, and the   */
/* median or the 99th percentile is read off at y = 0.5 or 0.99.     */
/* The members are sorted here and each curve is sent to gnuplot as  */
/* at most ENS_CURVE_POINTS quantiles (members.csv is not re-read by */
/* gnuplot: a curve needs its group's values sorted).                */

/* Curves drawn; an ensemble with more integrator settings is drawn as
 * one curve over all members (the key would be unreadable). */
#define ENS_MAX_GROUPS 16
/* Points per curve: a 600-pixel-wide panel shows no more. */
#define ENS_CURVE_POINTS 2000
/* integrator.* columns used for grouping */
#define ENS_MAX_KEYS 8

enum { E_WINDOWED, E_MAXREL, E_STATUS, E_NCOLS };
static const char *const ens_cols[E_NCOLS] = {
    "windowed_drift", "max_rel_energy_error", "status"};
static const char ens_header[] =
    "member,<one column per rule>,E0,max_rel_energy_error,"
    "final_rel_energy_error,windowed_drift,drift_per_time,momentum_error,"
    "angular_momentum_error,impacts,steps,status,fail_step";

typedef struct ens_group {
    char *key; /* the integrator.* fields, joined by '\x1f' */
    char label[300];
    long members, ok;
    long finite[2];  /* ok members with a finite value */
    long nonpos[2];  /* of those, values <= 0 (no place on a log axis) */
    double *v[2];    /* the finite values, sorted */
    double median[2];
} ens_group;

typedef struct ens_scan {
    long rows;
    int nkeys, keycol[ENS_MAX_KEYS];
    char keyname[ENS_MAX_KEYS][128];
    int ngroups, pooled;
    ens_group g[ENS_MAX_GROUPS];
    /* per ok row: its group and its two values */
    long n, cap;
    int *grp;
    double *val[2];
    plot_range pos[2]; /* positive finite values over all groups */
} ens_scan;

static void ens_free(ens_scan *s)
{
    int k, q;
    for (k = 0; k < s->ngroups; ++k) {
        free(s->g[k].key);
        for (q = 0; q < 2; ++q)
            free(s->g[k].v[q]);
    }
    free(s->grp);
    free(s->val[0]);
    free(s->val[1]);
    memset(s, 0, sizeof *s);
}

static int ens_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The group of the current row (its integrator.* fields), created when
 * new; -1 once there are more than ENS_MAX_GROUPS (then pooled). */
static int ens_group_of(ens_scan *s, const csv_reader *r, int *oom)
{
    char key[1024];
    size_t n = 0;
    int k;
    key[0] = '\0';
    for (k = 0; k < s->nkeys && n < sizeof key; ++k)
        n += (size_t)snprintf(key + n, sizeof key - n, "%s\x1f",
                              r->fields[s->keycol[k]]);
    for (k = s->ngroups - 1; k >= 0; --k)
        if (!strcmp(s->g[k].key, key))
            return k;
    if (s->ngroups == ENS_MAX_GROUPS) {
        s->pooled = 1;
        return -1;
    }
    k = s->ngroups;
    memset(&s->g[k], 0, sizeof s->g[k]);
    s->g[k].key = (char *)malloc(strlen(key) + 1);
    if (!s->g[k].key) {
        *oom = 1;
        return -1;
    }
    strcpy(s->g[k].key, key);
    s->ngroups++;
    return k;
}

/* The curve's name: method, step and the other integrator fields
 * varied, each from its members.csv column or else ensemble.json. */
static void ens_label(const ens_scan *s, ens_group *g, const cJSON *ens)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(ens, "method");
    char method[128], dt[64], rest[200];
    const char *f = g->key;
    size_t rl = 0;
    int k;
    snprintf(method, sizeof method, "%s",
             cJSON_IsString(m) ? m->valuestring : "?");
    if (isfinite(json_num(ens, NULL, "dt")))
        snprintf(dt, sizeof dt, "%g", json_num(ens, NULL, "dt"));
    else
        snprintf(dt, sizeof dt, "?");
    rest[0] = '\0';
    for (k = 0; k < s->nkeys; ++k) {
        const char *e = strchr(f, '\x1f');
        int len = (int)(e - f);
        const char *key = s->keyname[k] + strlen("integrator.");
        if (!strcmp(key, "method"))
            snprintf(method, sizeof method, "%.*s", len, f);
        else if (!strcmp(key, "dt"))
            snprintf(dt, sizeof dt, "%.*s", len, f);
        else if (rl < sizeof rest)
            rl += (size_t)snprintf(rest + rl, sizeof rest - rl, ", %s %.*s",
                                   key, len, f);
        f = e + 1;
    }
    snprintf(g->label, sizeof g->label, "%s, dt %s%s", method, dt, rest);
    sanitize(g->label);
}

static int scan_ensemble(const char *path, const cJSON *ens, ens_scan *s)
{
    csv_reader r;
    int rc, got = 0, ncols, k, q, oom = 0;
    memset(s, 0, sizeof *s);
    rc = csv_open(&r, path, ens_cols, E_NCOLS, ens_header);
    /* the integrator settings a grid or sweep varies */
    for (k = 0; !rc && k < r.nfields; ++k)
        if (!strncmp(r.fields[k], "integrator.", strlen("integrator.")) &&
            s->nkeys < ENS_MAX_KEYS) {
            s->keycol[s->nkeys] = k;
            snprintf(s->keyname[s->nkeys], sizeof s->keyname[0], "%s",
                     r.fields[k]);
            s->nkeys++;
        }
    ncols = r.nfields;
    for (q = 0; q < 2; ++q)
        range_init(&s->pos[q]);
    while (!rc && (got = csv_next(&r)) == 1) {
        double v[2];
        int gi, ok;
        rc = csv_check_row(&r, ncols);
        for (q = 0; q < 2 && !rc; ++q)
            rc = csv_num(&r, q, ens_cols, NUM_ANY, &v[q]);
        if (rc)
            break;
        gi = ens_group_of(s, &r, &oom);
        if (oom)
            break;
        ok = !strcmp(r.fields[r.col[E_STATUS]], "ok");
        if (gi >= 0) {
            s->g[gi].members++;
            s->g[gi].ok += ok;
        }
        s->rows++;
        if (!ok)
            continue;
        if (s->n == s->cap) {
            long nc = s->cap ? 2 * s->cap : 4096;
            int *ng = (int *)realloc(s->grp, sizeof(int) * (size_t)nc);
            double *n0, *n1;
            if (ng)
                s->grp = ng;
            n0 = ng ? (double *)realloc(s->val[0], sizeof(double) * (size_t)nc)
                    : NULL;
            if (n0)
                s->val[0] = n0;
            n1 = n0 ? (double *)realloc(s->val[1], sizeof(double) * (size_t)nc)
                    : NULL;
            if (!n1) {
                oom = 1;
                break;
            }
            s->val[1] = n1;
            s->cap = nc;
        }
        s->grp[s->n] = gi;
        s->val[0][s->n] = v[0];
        s->val[1][s->n] = v[1];
        s->n++;
    }
    if (!rc && got < 0) {
        fprintf(stderr, "ricochet: plot: cannot read %s: %s\n", path,
                strerror(errno));
        rc = EXIT_INPUT;
    }
    csv_close(&r);
    if (!rc && oom) {
        fputs("ricochet: plot: out of memory\n", stderr);
        rc = EXIT_RUNTIME;
    }
    if (!rc && s->rows == 0) {
        fprintf(stderr, "ricochet: plot: %s: no members\n", path);
        rc = EXIT_INPUT;
    }
    if (rc)
        return rc;
    if (s->pooled) {
        /* one group over all members */
        long members = 0, ok = 0, i;
        for (k = 0; k < s->ngroups; ++k)
            free(s->g[k].key);
        members = s->rows;
        for (i = 0; i < s->n; ++i)
            s->grp[i] = 0;
        ok = s->n;
        memset(&s->g[0], 0, sizeof s->g[0]);
        s->ngroups = 1;
        s->g[0].members = members;
        s->g[0].ok = ok;
        snprintf(s->g[0].label, sizeof s->g[0].label,
                 "all members (more than %d integrator settings, pooled)",
                 ENS_MAX_GROUPS);
    } else {
        for (k = 0; k < s->ngroups; ++k)
            ens_label(s, &s->g[k], ens);
    }
    for (k = 0; k < s->ngroups; ++k)
        for (q = 0; q < 2; ++q) {
            ens_group *g = &s->g[k];
            long i, m = 0;
            g->v[q] = (double *)malloc(sizeof(double) * (size_t)(g->ok + 1));
            if (!g->v[q]) {
                fputs("ricochet: plot: out of memory\n", stderr);
                return EXIT_RUNTIME;
            }
            for (i = 0; i < s->n; ++i)
                if (s->grp[i] == k && isfinite(s->val[q][i]))
                    g->v[q][m++] = s->val[q][i];
            qsort(g->v[q], (size_t)m, sizeof(double), ens_cmp_double);
            g->finite[q] = m;
            for (i = 0; i < m && g->v[q][i] <= 0.0; ++i)
                ;
            g->nonpos[q] = i;
            if (i < m) {
                range_add(&s->pos[q], g->v[q][i]);
                range_add(&s->pos[q], g->v[q][m - 1]);
            }
            g->median[q] = m == 0 ? NAN
                                  : 0.5 * (g->v[q][(m - 1) / 2] + g->v[q][m / 2]);
        }
    return 0;
}

/* One curve: the empirical CDF of group g's quantity q as $C<q>_<g>:
 * (x, fraction of the group's finite values <= x) at the positive
 * values, thinned to ENS_CURVE_POINTS evenly spaced ranks (the first
 * and the last kept); it starts at the fraction of values <= 0. */
static void gp_ecdf_block(FILE *gp, const ens_group *g, int q, int k)
{
    long m = g->finite[q], z = g->nonpos[q], npos = m - z, j, pts;
    fprintf(gp, "$C%d_%d << EOD\n", q, k);
    if (npos > 0) {
        gp_num(gp, g->v[q][z]);
        fputc(' ', gp);
        gp_num(gp, (double)z / (double)m);
        fputc('\n', gp);
    }
    pts = npos < ENS_CURVE_POINTS ? npos : ENS_CURVE_POINTS;
    for (j = 0; j < pts; ++j) {
        long i = pts > 1 ? z + (long)((double)j * (double)(npos - 1) /
                                      (double)(pts - 1) + 0.5)
                         : z;
        gp_num(gp, g->v[q][i]);
        fputc(' ', gp);
        gp_num(gp, (double)(i + 1) / (double)m);
        fputc('\n', gp);
    }
    fputs("EOD\n", gp);
}

static void gp_ensemble_panel(FILE *gp, const ens_scan *s, int q)
{
    static const char *const what[2] = {"windowed energy drift",
                                        "largest relative energy error"};
    static const char *const col[2] = {"windowed_drift",
                                       "max_rel_energy_error"};
    int k, first = 1;
    fputs("set title ", gp);
    gp_str(gp, what[q]);
    fputs("\nset xlabel ", gp);
    gp_str(gp, col[q]);
    fputs(" offset 0,0.5\nset ylabel 'fraction of ok members <= x'\n"
          "set yrange [0:1.02]\nset ytics 0.1\n",
          gp);
    if (s->pos[q].n == 0) {
        /* nothing to place on a log axis */
        fputs("unset logscale x\nset xrange [-1:1]\n"
              "set label 1 'no positive value: every ok member is 0 or "
              "non-finite' at graph 0.5,0.5 center\n"
              "plot NaN notitle\nunset label 1\n",
              gp);
        return;
    }
    {
        double lo = s->pos[q].lo, hi = s->pos[q].hi;
        if (lo < hi) {
            lo /= 1.5;
            hi *= 1.5;
        } else {
            lo /= 10;
            hi *= 10;
        }
        fputs("set logscale x\nset xrange [", gp);
        gp_num(gp, lo);
        fputc(':', gp);
        gp_num(gp, hi);
        fputs("]\n", gp);
        if (hi / lo < 1e3) {
            /* gnuplot labels only whole decades, which leaves one label
             * or none over a narrow range: 1, 2 and 5 per decade, and
             * more within one decade (the range spans at least a factor
             * 2.25, so two of them at least fall inside) */
            static const double m[10] = {1, 2, 5, 1.5, 3, 4, 6, 7, 8, 9};
            int nm = hi / lo < 10 ? 10 : 3, first = 1;
            double dec = pow(10.0, floor(log10(lo)));
            fputs("set format x '%g'\nset xtics (", gp);
            for (; dec <= hi; dec *= 10.0) {
                int i;
                for (i = 0; i < nm; ++i)
                    if (m[i] * dec >= lo && m[i] * dec <= hi) {
                        fprintf(gp, "%s%.3g", first ? "" : ", ", m[i] * dec);
                        first = 0;
                    }
            }
            fputs(")\n", gp);
        } else {
            fputs("set format x '%.0e'\n", gp);
        }
    }
    fputs("plot", gp);
    for (k = 0; k < s->ngroups; ++k) {
        const ens_group *g = &s->g[k];
        char label[600], extra[200];
        size_t n = 0;
        extra[0] = '\0';
        if (g->ok < g->members)
            n += (size_t)snprintf(extra + n, sizeof extra - n, "; %ld of %ld not ok",
                                  g->members - g->ok, g->members);
        if (g->finite[q] < g->ok && n < sizeof extra)
            n += (size_t)snprintf(extra + n, sizeof extra - n, "; %ld non-finite",
                                  g->ok - g->finite[q]);
        if (g->nonpos[q] > 0 && n < sizeof extra)
            n += (size_t)snprintf(extra + n, sizeof extra - n,
                                  "; %ld at 0 (the curve starts above 0)",
                                  g->nonpos[q]);
        if (g->finite[q] > 0)
            snprintf(label, sizeof label, "%s: median %.3g (%ld members%s)",
                     g->label, g->median[q], g->finite[q], extra);
        else
            snprintf(label, sizeof label, "%s: no finite value (%ld members%s)",
                     g->label, g->members, extra);
        /* each curve thinner than the one before, so that one drawn
         * over an identical one (methods that agree) leaves it visible */
        if (g->finite[q] > g->nonpos[q])
            fprintf(gp,
                    "%s $C%d_%d using 1:2 with steps ls %d dt %d lw %.2f "
                    "title ",
                    first ? "" : ",", q, k, 1 + k % 8, 1 + k / 8,
                    1.0 + 2.5 * (s->ngroups - 1 - k) /
                              (s->ngroups > 1 ? s->ngroups - 1 : 1));
        else
            fprintf(gp, "%s NaN ls %d title ", first ? "" : ",", 1 + k % 8);
        gp_str(gp, label);
        first = 0;
    }
    fputc('\n', gp);
}

static int plot_ensemble(const plot_opts *o, const char *gnuplot,
                         const char *csv, const cJSON *ens)
{
    ens_scan s;
    plot_job job;
    char name[256], title[700];
    const char *stems[1] = {"energy_errors"};
    int k, q, rc;
    FILE *gp;
    void (*old_pipe)(int);

    rc = scan_ensemble(csv, ens, &s);
    if (rc) {
        ens_free(&s);
        return rc;
    }
    if (!gnuplot) {
        ens_free(&s);
        fputs(no_gnuplot_msg, stderr);
        return EXIT_RUNTIME;
    }
    plot_title_name(o->dir, "ensemble.json", name, sizeof name);
    if ((rc = job_images(&job, o, 1, stems, NULL)) != 0) {
        ens_free(&s);
        return rc;
    }
    gp = gp_open(gnuplot, &old_pipe);
    if (!gp) {
        job_discard(&job);
        ens_free(&s);
        return EXIT_RUNTIME;
    }
    for (q = 0; q < 2; ++q)
        for (k = 0; k < s.ngroups; ++k)
            gp_ecdf_block(gp, &s.g[k], q, k);
    snprintf(title, sizeof title,
             "%s: energy errors over %ld members (empirical distribution, "
             "one curve per integrator setting)",
             name, s.rows);
    for (k = 0; k < job.n; ++k) {
        /* the key lists the curves under each panel, one line each */
        gp_terminal(gp, &job, k, 1300, 560 + 20 * s.ngroups);
        fputs("reset\nset multiplot layout 1,2 title ", gp);
        gp_str(gp, title);
        fputs(" font ',12'\n", gp);
        gp_style(gp, 0);
        /* room under each panel for the x label and one key line
         * per curve (gnuplot does not count the label) */
        fprintf(gp,
                "set key bmargin left vertical Left reverse\n"
                "set lmargin 10\nset rmargin 3\nset bmargin %d\n",
                s.ngroups + 4);
        for (q = 0; q < 2; ++q)
            gp_ensemble_panel(gp, &s, q);
        fputs("unset multiplot\nunset output\n", gp);
    }
    rc = gp_finish(gp, 0, old_pipe, &job, csv);
    ens_free(&s);
    return rc;
}

/* ---------------------------------------------------------------- */

/* To stderr after a usage error; to stdout when asked with --help. */
static void plot_usage_to(FILE *f)
{
    fputs("usage: ricochet plot DIR [--format png,svg] [--out PREFIX]\n"
          "  DIR is one of (its files say which):\n"
          "    a run (diagnostics.csv): energy (energy error, momenta),\n"
          "      min_gap (with inequalities)\n"
          "    a model run (summary.json with \"model\"): energy (H, -D3Ld,\n"
          "      modified H~, constraint error), min_gap, coordinates\n"
          "    a large system (summary.json, observables.csv, rdf.csv,\n"
          "      msd.csv): observables (Z, temperature, collision rate),\n"
          "      rdf (g(r)), msd (with the run's diffusion fit)\n"
          "    an ensemble (ensemble.json, members.csv): energy_errors\n"
          "      (distribution over members of the windowed drift and the\n"
          "      max energy error, one curve per method and step)\n"
          "    a comparison (compare.csv): compare_energy, compare_momentum\n"
          "  images go into DIR as NAME.png/.svg, or PREFIX_NAME.png/.svg\n"
          "  --format LIST   png, svg or both (default png,svg)\n"
          "  --out PREFIX    write PREFIX_*.png/svg instead\n",
          f);
}

static void plot_usage(void)
{
    plot_usage_to(stderr);
}

static int parse_formats(const char *list, plot_opts *o)
{
    const char *s = list;
    o->png = o->svg = 0;
    for (;;) {
        size_t n = strcspn(s, ",");
        if (n == 3 && !strncmp(s, "png", 3))
            o->png = 1;
        else if (n == 3 && !strncmp(s, "svg", 3))
            o->svg = 1;
        else {
            fprintf(stderr,
                    "ricochet: plot: unknown format '%.*s' in --format %s "
                    "(png, svg)\n",
                    (int)n, s, list);
            return EXIT_INPUT;
        }
        if (!s[n])
            break;
        s += n + 1;
    }
    return 0;
}

/* DIR/name is a regular file. */
static int dir_has(const char *dir, const char *name)
{
    char path[PLOT_PATH];
    return join(path, sizeof path, dir, "/", name) == 0 && is_file(path);
}

/* Points out DIR/name.partial, left by a run that failed or was
 * interrupted. */
static void partial_hint(const char *dir, const char *name)
{
    char partial[PLOT_PATH];
    snprintf(partial, sizeof partial, "%s.partial", name);
    if (dir_has(dir, partial))
        fprintf(stderr,
                "ricochet: plot: (only %s/%s: that run failed or was "
                "interrupted)\n",
                dir, partial);
}

/* 0 when DIR/name is there; else EXIT_INPUT after a message naming it
 * and the kind of directory the other files make DIR. */
static int require(const char *dir, const char *name, const char *kind)
{
    if (dir_has(dir, name))
        return 0;
    fprintf(stderr,
            "ricochet: plot: %s looks like %s directory but has no %s\n",
            dir, kind, name);
    partial_hint(dir, name);
    return EXIT_INPUT;
}

int rc_cli_plot(int argc, char **argv)
{
    plot_opts o;
    char diag[PLOT_PATH], cmp[PLOT_PATH], exe[PLOT_PATH];
    const char *gnuplot;
    int k, rc = EXIT_OK, have_diag, have_cmp;
    memset(&o, 0, sizeof o);
    o.png = o.svg = 1;
    for (k = 0; k < argc; ++k) {
        const char *a = argv[k];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            plot_usage_to(stdout);
            return EXIT_OK;
        }
        if (!strcmp(a, "--format") || !strcmp(a, "--out")) {
            if (k + 1 >= argc) {
                fprintf(stderr, "ricochet: plot: option %s needs a value\n",
                        a);
                plot_usage();
                return EXIT_INPUT;
            }
            if (!strcmp(a, "--out"))
                o.prefix = argv[++k];
            else if ((rc = parse_formats(argv[++k], &o)) != 0)
                return rc;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ricochet: plot: unknown option '%s'\n", a);
            plot_usage();
            return EXIT_INPUT;
        } else if (!o.dir) {
            o.dir = a;
        } else {
            fprintf(stderr, "ricochet: plot: unexpected argument '%s'\n", a);
            plot_usage();
            return EXIT_INPUT;
        }
    }
    if (!o.dir) {
        fputs("ricochet: plot: missing DIR\n", stderr);
        plot_usage();
        return EXIT_INPUT;
    }
    if (o.prefix && !o.prefix[0]) {
        fputs("ricochet: plot: --out needs a non-empty PREFIX\n", stderr);
        return EXIT_INPUT;
    }
    if (!is_dir(o.dir)) {
        fprintf(stderr, "ricochet: plot: %s: %s\n", o.dir,
                access(o.dir, F_OK) == 0 ? "not a directory"
                                         : "no such directory");
        return EXIT_INPUT;
    }
    /* every DIR/<name> below fits: the longest name is
     * "ensemble.json.partial" */
    if (strlen(o.dir) + 32 >= PLOT_PATH) {
        fprintf(stderr, "ricochet: plot: %s: path too long\n", o.dir);
        return EXIT_INPUT;
    }
    join(diag, sizeof diag, o.dir, "/", "diagnostics.csv");
    /* gnuplot is looked for after the input is read and checked: bad
     * input is exit 2 whether or not gnuplot is there. */
    gnuplot = find_gnuplot(exe, sizeof exe) == 0 ? exe : NULL;

    /* An ensemble: ensemble.json and members.csv. */
    if (dir_has(o.dir, "ensemble.json") || dir_has(o.dir, "members.csv") ||
        dir_has(o.dir, "ensemble.json.partial")) {
        cJSON *ens;
        char members[PLOT_PATH];
        if ((rc = require(o.dir, "members.csv", "an ensemble")) != 0 ||
            (rc = require(o.dir, "ensemble.json", "an ensemble")) != 0)
            return rc;
        if (!(ens = read_json(o.dir, "ensemble.json"))) {
            fprintf(stderr, "ricochet: plot: %s/ensemble.json: not valid JSON\n",
                    o.dir);
            return EXIT_INPUT;
        }
        join(members, sizeof members, o.dir, "/", "members.csv");
        rc = plot_ensemble(&o, gnuplot, members, ens);
        cJSON_Delete(ens);
        return rc;
    }
    join(cmp, sizeof cmp, o.dir, "/", "compare.csv");
    have_diag = is_file(diag);
    have_cmp = is_file(cmp);
    if (!have_cmp && dir_has(o.dir, "summary.json")) {
        /* A run: which kind, summary.json says. */
        cJSON *summary = read_json(o.dir, "summary.json");
        const cJSON *scn;
        if (!summary) {
            fprintf(stderr, "ricochet: plot: %s/summary.json: not valid JSON\n",
                    o.dir);
            return EXIT_INPUT;
        }
        scn = cJSON_GetObjectItemCaseSensitive(summary, "scenario");
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(summary, "model"))) {
            rc = require(o.dir, "diagnostics.csv", "a model run");
            if (!rc)
                rc = plot_model(&o, gnuplot, diag, summary);
        } else if (cJSON_GetObjectItemCaseSensitive(scn, "box")) {
            /* a scenario with a box runs as a large system (run_md.c) */
            rc = require(o.dir, "observables.csv", "a large-system run");
            if (!rc)
                rc = require(o.dir, "rdf.csv", "a large-system run");
            if (!rc)
                rc = require(o.dir, "msd.csv", "a large-system run");
            if (!rc)
                rc = plot_large(&o, gnuplot, summary);
        } else {
            rc = require(o.dir, "diagnostics.csv", "a run");
            if (!rc)
                rc = plot_run(&o, gnuplot, diag);
        }
        cJSON_Delete(summary);
        return rc;
    }
    if (!have_diag && !have_cmp) {
        if (dir_has(o.dir, "observables.csv"))
            return require(o.dir, "summary.json", "a large-system run");
        fprintf(stderr,
                "ricochet: plot: %s is not a run, comparison or ensemble "
                "directory: it has no diagnostics.csv or summary.json (from "
                "'ricochet run'), compare.csv (from 'ricochet compare') or "
                "ensemble.json\n",
                o.dir);
        partial_hint(o.dir, "diagnostics.csv");
        partial_hint(o.dir, "summary.json");
        return EXIT_INPUT;
    }
    if (have_diag)
        rc = plot_run(&o, gnuplot, diag);
    if (have_cmp && rc == EXIT_OK)
        rc = plot_cmp(&o, gnuplot, cmp);
    return rc;
}

/* `ricochet plot DIR [--format png,svg] [--out PREFIX]`: draws a run's
 * diagnostics.csv or a comparison's compare.csv with gnuplot.
 *
 * gnuplot reads the CSV itself, by file name, through a script written to
 * its stdin; no data pass through the pipe and no image is drawn here.
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
    int col[16]; /* field index of each wanted column */
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

/* What csv_num accepts besides finite numbers. */
enum { NUM_FINITE = 0, NUM_OR_INF = 1, NUM_ANY = 2 /* inf and nan too */ };

/* Wanted column k (an index into csv_open's names) as a number.  0, or
 * EXIT_INPUT after a message naming file:line and the column. */
static int csv_num(const csv_reader *r, int k, const char *const *names,
                   int mode, double *v)
{
    const char *s = r->fields[r->col[k]];
    const char *name = names[k];
    char *end;
    int ok;
    *v = strtod(s, &end);
    ok = end != s && !*end &&
         (isfinite(*v) || mode == NUM_ANY ||
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
    if (!rc && got < 0) {
        fprintf(stderr, "ricochet: plot: cannot read %s: %s\n", path,
                strerror(errno));
        rc = EXIT_INPUT;
    }
    if (!rc && (s->rows < 2 || s->time.lo == s->time.hi)) {
        fprintf(stderr,
                "ricochet: plot: %s: %ld data row%s; a plot needs at least "
                "two times\n",
                path, s->rows, s->rows == 1 ? "" : "s");
        rc = EXIT_INPUT;
    }
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

static void gp_run_gap(FILE *gp, const run_scan *s, const char *title)
{
    gp_style(gp, 0);
    fputs("set title ", gp);
    gp_str(gp, title);
    fputs(" font ',12'\n", gp);
    gp_yrange(gp, &s->gap);
    /* a row without inequalities would read inf: left out, not drawn */
    fputs("set xlabel 'time' offset 0,0.5\n"
          "set ylabel 'min gap'\n"
          "plot $D using 1:($8 < 1e308 ? $8 : NaN) with lines ls 1 "
          "title 'smallest inequality value g', "
          "0 with lines dt 2 lc rgb '#555555' lw 1 title 'contact (g = 0)'\n",
          gp);
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
            gp_run_gap(gp, &s, title);
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

/* To stderr after a usage error; to stdout when asked with --help. */
static void plot_usage_to(FILE *f)
{
    fputs("usage: ricochet plot DIR [--format png,svg] [--out PREFIX]\n"
          "  DIR: a run directory (diagnostics.csv) or a comparison\n"
          "  directory (compare.csv); images go into DIR, or PREFIX_*.png\n"
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
    if (join(diag, sizeof diag, o.dir, "/", "diagnostics.csv") ||
        join(cmp, sizeof cmp, o.dir, "/", "compare.csv")) {
        fprintf(stderr, "ricochet: plot: %s: path too long\n", o.dir);
        return EXIT_INPUT;
    }
    have_diag = is_file(diag);
    have_cmp = is_file(cmp);
    if (!have_diag && !have_cmp) {
        char partial[PLOT_PATH];
        fprintf(stderr,
                "ricochet: plot: %s has neither diagnostics.csv (from "
                "'ricochet run') nor compare.csv (from 'ricochet compare')\n",
                o.dir);
        if (join(partial, sizeof partial, diag, ".partial", "") == 0 &&
            is_file(partial))
            fprintf(stderr,
                    "ricochet: plot: (only %s: that run failed or was "
                    "interrupted)\n",
                    partial);
        return EXIT_INPUT;
    }
    /* gnuplot is looked for after the input is read and checked: bad
     * input is exit 2 whether or not gnuplot is there. */
    gnuplot = find_gnuplot(exe, sizeof exe) == 0 ? exe : NULL;
    if (have_diag)
        rc = plot_run(&o, gnuplot, diag);
    if (have_cmp && rc == EXIT_OK)
        rc = plot_cmp(&o, gnuplot, cmp);
    return rc;
}

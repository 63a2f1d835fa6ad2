/* The run's CSV outputs as tables in memory (run.h: rc_table_fn), as a C
 * caller sees them: each table is announced (nrows = 0) before its rows,
 * its columns are the CSV header's, and its rows, printed back, are the
 * file's rows: exactly where the file prints 17 digits or integers or
 * words (diagnostics of a particle system and of a model, an ensemble's
 * members in blocks), the integer and %.17g columns of a large system's
 * observables.csv; msd and rdf as many rows as their files. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ricochet/ensemble.h"
#include "rc_test.h"

#ifndef RC_EXAMPLES_DIR
#define RC_EXAMPLES_DIR "examples"
#endif

#define MAXT 4

/* What the callback saw of one table: the header and the rows printed
 * back as CSV text (integers as integers, words as words, reals %.17g). */
typedef struct seen {
    char name[32];
    long calls, rows, max_block;
    int announced_first; /* the first call had nrows = 0, values NULL */
    int same_columns;    /* every call had the first call's columns */
    int ncols;
    char header[4096];
    char *text;
    size_t len;
    FILE *out;
} seen;

typedef struct sink {
    seen t[MAXT];
    int n;
} sink;

static void header_of(const rc_table *t, char *buf, size_t size)
{
    int c;
    size_t k = 0;
    buf[0] = '\0';
    for (c = 0; c < t->ncols && k < size; ++c)
        k += (size_t)snprintf(buf + k, size - k, "%s%s", c ? "," : "",
                              t->columns[c]);
}

static void on_table(void *ctx, const rc_table *t, long nrows,
                     const double *v)
{
    sink *s = (sink *)ctx;
    seen *x = NULL;
    char h[4096];
    long r;
    int c, i;
    for (i = 0; i < s->n; ++i)
        if (strcmp(s->t[i].name, t->name) == 0)
            x = &s->t[i];
    header_of(t, h, sizeof h);
    if (!x) {
        if (s->n == MAXT)
            return;
        x = &s->t[s->n++];
        snprintf(x->name, sizeof x->name, "%s", t->name);
        x->announced_first = nrows == 0 && v == NULL;
        x->same_columns = 1;
        x->ncols = t->ncols;
        snprintf(x->header, sizeof x->header, "%s", h);
        x->out = open_memstream(&x->text, &x->len);
    }
    x->calls++;
    x->same_columns &= strcmp(h, x->header) == 0 && t->ncols == x->ncols;
    if (nrows > x->max_block)
        x->max_block = nrows;
    for (r = 0; r < nrows && x->out; ++r) {
        for (c = 0; c < t->ncols; ++c) {
            double y = v[r * t->ncols + c];
            if (c)
                fputc(',', x->out);
            if (t->kinds[c] == RC_COLUMN_INTEGER)
                fprintf(x->out, "%.0f", y);
            else if (t->kinds[c] == RC_COLUMN_WORD)
                fputs(t->words[c][(long)y], x->out);
            else
                fprintf(x->out, "%.17g", y);
        }
        fputc('\n', x->out);
    }
    x->rows += nrows;
}

static seen *find(sink *s, const char *name)
{
    int i;
    for (i = 0; i < s->n; ++i)
        if (strcmp(s->t[i].name, name) == 0) {
            if (s->t[i].out) {
                fclose(s->t[i].out);
                s->t[i].out = NULL;
            }
            return &s->t[i];
        }
    return NULL;
}

static void sink_free(sink *s)
{
    int i;
    for (i = 0; i < s->n; ++i) {
        if (s->t[i].out)
            fclose(s->t[i].out);
        free(s->t[i].text);
    }
    memset(s, 0, sizeof *s);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = (char *)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

/* One field of each: equal text, or numbers with the same value (an
 * empty field and nan both NaN). */
static int same_field(const char *a, size_t na, const char *b, size_t nb)
{
    char x[64], y[64];
    char *ex, *ey;
    double u, w;
    if (na == nb && strncmp(a, b, na) == 0)
        return 1;
    if (na >= sizeof x || nb >= sizeof y)
        return 0;
    memcpy(x, a, na);
    x[na] = '\0';
    memcpy(y, b, nb);
    y[nb] = '\0';
    u = na ? strtod(x, &ex) : NAN;
    w = nb ? strtod(y, &ey) : NAN;
    if ((na && *ex) || (nb && *ey))
        return 0;
    return u == w || (isnan(u) && isnan(w));
}

/* The table `x` against the file: header, row count, and the fields of
 * the columns flagged in `exact` (NULL: all). */
static void compare(const seen *x, const char *path, const int *exact)
{
    char *file = slurp(path), *f, *m;
    long row = 0, bad = 0;
    RC_CHECK(file != NULL, "cannot read %s", path);
    if (!file || !x->text)
        return;
    f = strchr(file, '\n');
    RC_CHECK(f && (size_t)(f - file) == strlen(x->header) &&
                 strncmp(file, x->header, strlen(x->header)) == 0,
             "%s: header differs from the table's columns %s", path,
             x->header);
    f = f ? f + 1 : file + strlen(file);
    m = x->text;
    while (*f && *m) {
        char *fe = strchr(f, '\n'), *me = strchr(m, '\n');
        int c = 0;
        const char *a = f, *b = m;
        if (!fe || !me)
            break;
        while (a <= fe && b <= me) {
            const char *ae = a, *be = b;
            while (ae < fe && *ae != ',')
                ++ae;
            while (be < me && *be != ',')
                ++be;
            if ((!exact || exact[c]) &&
                !same_field(a, (size_t)(ae - a), b, (size_t)(be - b)) &&
                bad++ < 5)
                fprintf(stderr, "%s row %ld column %d: file %.*s, table "
                                "%.*s\n",
                        path, row, c, (int)(ae - a), a, (int)(be - b), b);
            a = ae + 1;
            b = be + 1;
            ++c;
        }
        f = fe + 1;
        m = me + 1;
        ++row;
    }
    RC_CHECK(row == x->rows && !*f && !*m,
             "%s: %ld rows compared, the table has %ld", path, row, x->rows);
    RC_CHECK(bad == 0, "%s: %ld fields differ", path, bad);
    free(file);
}

static char g_dir[600];

static rc_scenario *load(const char *example, const char *const *sets,
                         int nsets)
{
    char path[700];
    rc_scenario *scn = NULL;
    rc_error err;
    snprintf(path, sizeof path, "%s/%s", RC_EXAMPLES_DIR, example);
    if (rc_scenario_load(path, sets, nsets, &scn, &err) != RC_OK) {
        RC_CHECK(0, "%s: %s", path, err.message);
        return NULL;
    }
    return scn;
}

static void run_one(const char *example, const char *const *sets, int nsets,
                    const char *sub, sink *s)
{
    rc_scenario *scn = load(example, sets, nsets);
    rc_run_options opt;
    rc_run_result res;
    rc_error err;
    char out[700];
    rc_status st;
    if (!scn)
        return;
    snprintf(out, sizeof out, "%s/%s", g_dir, sub);
    memset(&opt, 0, sizeof opt);
    opt.out_dir = out;
    opt.threads = 1;
    opt.on_table = on_table;
    opt.table_ctx = s;
    st = rc_run(scn, &opt, &res, &err);
    RC_CHECK(st == RC_OK, "%s: %s", example, err.message);
    rc_scenario_free(scn);
}

static void particles(void)
{
    static const char *const sets[] = {"integrator.duration=50",
                                       "output.every=7"};
    sink s;
    seen *d;
    char path[700];
    memset(&s, 0, sizeof s);
    run_one("pogo_stick.yaml", sets, 2, "particles", &s);
    d = find(&s, "diagnostics");
    RC_CHECK(s.n == 1 && d, "a particle run hands over one table, "
                            "diagnostics (%d)", s.n);
    if (d) {
        RC_CHECK(d->announced_first && d->same_columns && d->max_block == 1,
                 "diagnostics: announced, then one row a call");
        snprintf(path, sizeof path, "%s/particles/diagnostics.csv", g_dir);
        compare(d, path, NULL);
    }
    sink_free(&s);
}

static void model(void)
{
    static const char *const sets[] = {"integrator.duration=3"};
    sink s;
    seen *d;
    char path[700];
    memset(&s, 0, sizeof s);
    run_one("heisenberg.yaml", sets, 1, "model", &s);
    d = find(&s, "diagnostics");
    RC_CHECK(d && d->announced_first && strstr(d->header, ",p_z") != NULL,
             "model: its diagnostics table names the momenta (%s)",
             d ? d->header : "none");
    if (d) {
        snprintf(path, sizeof path, "%s/model/diagnostics.csv", g_dir);
        compare(d, path, NULL);
    }
    sink_free(&s);
}

static void large_system(void)
{
    static const char *const sets[] = {
        "lattice.n=32", "integrator.duration=0.4", "output.equilibrate=0.1",
        "output.every=3", "output.rdf_every=5"};
    /* observables.csv: step, kinetic, potential and total energy (%.17g)
     * and the collision counts (integers) print exactly; the rest of it
     * is rounded (README "Outputs") */
    static const int exact[19] = {1, 0, 0, 1, 1, 1, 0, 0, 0, 0,
                                  0, 0, 0, 0, 1, 1, 1, 0, 0};
    sink s;
    seen *o, *m, *g;
    char path[700];
    memset(&s, 0, sizeof s);
    run_one("hard_sphere_fluid.yaml", sets, 5, "large", &s);
    o = find(&s, "observables");
    m = find(&s, "msd");
    g = find(&s, "rdf");
    RC_CHECK(o && m && g, "a large system hands over observables, msd, rdf");
    if (o && m && g) {
        RC_CHECK(o->announced_first && m->announced_first &&
                     g->announced_first && o->ncols == 19 &&
                     m->rows > 2 && g->rows > 10 && g->calls == 2,
                 "large system tables: %ld msd rows, %ld rdf rows in %ld "
                 "calls",
                 m->rows, g->rows, g->calls);
        snprintf(path, sizeof path, "%s/large/observables.csv", g_dir);
        compare(o, path, exact);
        {
            static const int none[2] = {0, 0};
            snprintf(path, sizeof path, "%s/large/msd.csv", g_dir);
            compare(m, path, none);
            snprintf(path, sizeof path, "%s/large/rdf.csv", g_dir);
            compare(g, path, none);
        }
    }
    sink_free(&s);
}

static void ensemble(const char *example, const char *const *sets,
                     int nsets, long members, long max_block)
{
    rc_scenario *scn = load(example, sets, nsets);
    rc_ensemble_options opt;
    rc_ensemble_result res;
    rc_error err;
    sink s;
    seen *t;
    char out[700], path[800];
    if (!scn)
        return;
    memset(&s, 0, sizeof s);
    snprintf(out, sizeof out, "%s/ensemble", g_dir);
    memset(&opt, 0, sizeof opt);
    opt.out_dir = out;
    opt.threads = 2;
    opt.on_table = on_table;
    opt.table_ctx = &s;
    RC_CHECK(rc_ensemble_run(scn, &opt, &res, &err) == RC_OK, "%s: %s",
             example, err.message);
    t = find(&s, "members");
    RC_CHECK(s.n == 1 && t && t->announced_first && t->same_columns &&
                 t->rows == members && t->max_block == max_block,
             "%s: members announced, %ld rows (%ld), largest block %ld",
             example, t ? t->rows : -1, members, t ? t->max_block : -1);
    if (t) {
        snprintf(path, sizeof path, "%s/members.csv", out);
        compare(t, path, NULL);
    }
    sink_free(&s);
    rc_scenario_free(scn);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/rc_tables_XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    particles();
    model();
    large_system();
    {
        /* 3000 members: a block of 2048 rows, then the rest */
        static const char *const pogo[] = {"ensemble.members=3000",
                                           "integrator.duration=3"};
        /* words (the method), `values` and a reference (l2_error) */
        static const char *const sweep[] = {"ensemble.vary[0].count=2",
                                            "integrator.duration=0.3",
                                            "ensemble.reference.dt=0.001"};
        ensemble("pogo_ensemble.yaml", pogo, 2, 3000, 2048);
        ensemble("cart_pendulum_sweep.yaml", sweep, 3, 12, 12);
    }
    {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", g_dir);
    }
    return rc_test_finish("test_tables");
}

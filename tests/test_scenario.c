/* Scenario loading (DESIGN §8): every bad input is refused with the exact
 * field path, the file and the line/column of the offending node; every
 * bundled example loads; the canonical JSON echo loads back to the same
 * scenario (same JSON text, same particle state, same diagnostics); and
 * `--set` overrides take effect.
 *
 * Each bad file is the good base scenario below with one substring
 * replaced, so the expected line and column are computed from the text
 * that was written, never typed in by hand. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ricochet/scenario.h"
#include "ricochet/system.h"
#include "rc_test.h"

#ifndef RC_EXAMPLES_DIR
#error "RC_EXAMPLES_DIR must name the examples directory (set by CMake)"
#endif

/* A 2-D scenario using block and flow style, three particles (so that
 * particles[1] and potentials[2] exist) and three potential types. */
static const char base_text[] =
    "# base scenario for test_scenario\n"
    "name: base\n"
    "dimension: 2\n"
    "particles:\n"
    "  - {mass: 1, radius: 0.5, position: [0, 0], momentum: [0, 1]}\n"
    "  - mass: 2\n"
    "    radius: 0.25\n"
    "    position: [6, 0]\n"
    "    momentum: [0.5, -0.5]\n"
    "  - {mass: 3, position: [0, 6]}\n"
    "potentials:\n"
    "  - {type: spring, particles: [0, 1], k: 10, rest_length: 5}\n"
    "  - type: anchor\n"
    "    particles: 2\n"
    "    k: 1\n"
    "    point: [0, 5]\n"
    "  - {type: gravity, g: 9.81}\n"
    "integrator:\n"
    "  method: sv\n"
    "  dt: 0.01\n"
    "  duration: 1\n"
    "output:\n"
    "  every: 10\n";

static char g_dir[256];
static int g_files = 0;

/* Write `text` to a fresh file in the temp dir; its path goes to path. */
static void write_file(const char *text, char *path, size_t size)
{
    FILE *f;
    snprintf(path, size, "%s/s%03d.yaml", g_dir, g_files++);
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* base with the unique substring `from` replaced by `to`. */
static char *variant_of(const char *base, const char *from, const char *to)
{
    const char *at = strstr(base, from);
    size_t nb = strlen(base), nf = strlen(from), nt = strlen(to);
    char *s;
    if (!at || strstr(at + 1, from)) {
        fprintf(stderr, "test bug: '%s' is not a unique substring\n", from);
        exit(1);
    }
    s = (char *)malloc(nb - nf + nt + 1);
    if (!s)
        exit(1);
    memcpy(s, base, (size_t)(at - base));
    memcpy(s + (at - base), to, nt);
    memcpy(s + (at - base) + nt, at + nf, nb - (size_t)(at - base) - nf + 1);
    return s;
}

static char *variant(const char *from, const char *to)
{
    return variant_of(base_text, from, to);
}

/* 1-based line and column of the first occurrence of `needle` in text,
 * moved `skip` characters to the right (to point past a key to its
 * value).  0, 0 when absent. */
static void locate(const char *text, const char *needle, int skip, int *line,
                   int *col)
{
    const char *at = strstr(text, needle), *s;
    *line = *col = 0;
    if (!at)
        return;
    at += skip;
    *line = 1;
    *col = 1;
    for (s = text; s < at; ++s) {
        if (*s == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* Load `text` (with overrides) and expect an error with the given field,
 * placed at `needle` + skip (needle NULL: line and column not checked
 * here; the caller does).  Without overrides the error must name the
 * file. */
static void expect_error(const char *what, const char *text,
                         const char *const *sets, int nsets,
                         const char *field, const char *needle, int skip,
                         rc_error *err_out)
{
    char path[512], buf[3000];
    rc_scenario *scn = (rc_scenario *)1;
    rc_error err;
    rc_status st;
    int line, col;
    write_file(text, path, sizeof path);
    memset(&err, 0x5a, sizeof err);
    st = rc_scenario_load(path, sets, nsets, &scn, &err);
    RC_CHECK(st < 0, "%s: status %d (%s), want an error", what, (int)st,
             rc_status_str(st));
    RC_CHECK(err.status == st, "%s: err.status %d != returned %d", what,
             (int)err.status, (int)st);
    RC_CHECK(scn == NULL, "%s: *out not NULL on failure", what);
    if (st >= 0) {
        rc_scenario_free(scn);
        return;
    }
    RC_CHECK(!strcmp(err.field, field), "%s: field '%s', want '%s'", what,
             err.field, field);
    RC_CHECK(err.message[0] != '\0', "%s: empty message", what);
    if (nsets == 0)
        RC_CHECK(!strcmp(err.file, path), "%s: file '%s', want '%s'", what,
                 err.file, path);
    if (needle) {
        locate(text, needle, skip, &line, &col);
        RC_CHECK(line > 0, "test bug: '%s' not in the text", needle);
        RC_CHECK(err.line == line && err.column == col,
                 "%s: at %d:%d, want %d:%d (%s)", what, err.line, err.column,
                 line, col, rc_error_format(&err, buf, sizeof buf));
    }
    if (err_out)
        *err_out = err;
}

/* One replacement of the base text, expecting `field` at `at` + skip in
 * the resulting file. */
static void bad(const char *what, const char *from, const char *to,
                const char *field, const char *at, int skip)
{
    char *text = variant(from, to);
    expect_error(what, text, NULL, 0, field, at, skip, NULL);
    free(text);
}

/* An override error: reported against the "--set" source and the
 * overridden path. */
static void bad_set(const char *what, const char *set, const char *field)
{
    const char *sets[1];
    rc_error err;
    memset(&err, 0, sizeof err);
    sets[0] = set;
    expect_error(what, base_text, sets, 1, field, NULL, 0, &err);
    RC_CHECK(!strcmp(err.file, "--set"), "%s: file '%s', want '--set'", what,
             err.file);
}

static void test_bad_inputs(void)
{
    char path[512], buf[3000];
    rc_scenario *scn = NULL;
    rc_error err;
    rc_status st;

    /* Unknown keys: the error points at the key itself. */
    bad("unknown top-level key", "name: base\n", "name: base\ncolour: red\n",
        "colour", "colour", 0);
    bad("unknown key in a potential", "    k: 1\n", "    kk: 1\n",
        "potentials[1].kk", "kk: 1", 0);
    bad("unknown key in a flow particle", "{mass: 3, position",
        "{mass: 3, spin: 1, position", "particles[2].spin", "spin", 0);

    /* Missing required key: the error points at the mapping lacking it
     * (for a block mapping, its first key). */
    bad("missing integrator.dt", "  dt: 0.01\n", "", "integrator.dt",
        "  method: sv", 2);
    bad("missing position", "{mass: 3, position: [0, 6]}", "{mass: 3}",
        "particles[2].position", "{mass: 3}", 0);
    bad("missing potential type", "{type: gravity, g: 9.81}", "{g: 9.81}",
        "potentials[2].type", "{g: 9.81}", 0);

    /* Wrong types. */
    bad("string for a number", "dt: 0.01", "dt: fast", "integrator.dt",
        "dt: fast", 4);
    bad("quoted number", "dt: 0.01", "dt: '0.01'", "integrator.dt",
        "dt: '0.01'", 4);
    bad("mapping for a list", "position: [6, 0]", "position: {x: 6, y: 0}",
        "particles[1].position", "{x: 6", 0);
    {
        static const char text[] = "dimension: 1\n"
                                   "particles: {a: 1}\n"
                                   "integrator: {dt: 0.1, duration: 1}\n";
        expect_error("mapping for the particle list", text, NULL, 0,
                     "particles", "{a: 1}", 0, NULL);
    }
    bad("list for a number", "k: 10,", "k: [10],", "potentials[0].k",
        "[10]", 0);
    bad("non-integer dimension", "dimension: 2", "dimension: 2.5",
        "dimension", "2.5", 0);

    /* Non-finite numbers. */
    bad(".inf", "dt: 0.01", "dt: .inf", "integrator.dt", ".inf", 0);
    bad("-.inf", "k: 10,", "k: -.inf,", "potentials[0].k", "-.inf", 0);
    bad(".nan", "radius: 0.25", "radius: .nan", "particles[1].radius",
        ".nan", 0);
    bad("1e999", "momentum: [0.5, -0.5]", "momentum: [0.5, 1e999]",
        "particles[1].momentum[1]", "1e999", 0);
    bad("overflowing mass * velocity", "momentum: [0.5, -0.5]",
        "velocity: [0.5, 1e308]", "particles[1].velocity[1]", "1e308", 0);

    /* Out-of-range values. */
    bad("zero mass", "  - mass: 2\n", "  - mass: 0\n", "particles[1].mass",
        "mass: 0", 6);
    bad("negative mass", "  - mass: 2\n", "  - mass: -1\n",
        "particles[1].mass", "mass: -1", 6);
    bad("negative radius", "radius: 0.25", "radius: -0.25",
        "particles[1].radius", "-0.25", 0);
    bad("3-vector in 2-D", "position: [0, 0]", "position: [0, 0, 0]",
        "particles[0].position", "[0, 0, 0]", 0);
    bad("1-vector in 2-D", "point: [0, 5]", "point: [5]",
        "potentials[1].point", "[5]", 0);
    bad("unknown potential type", "type: gravity", "type: gravitty",
        "potentials[2].type", "gravitty", 0);
    bad("unknown method", "method: sv", "method: rk4", "integrator.method",
        "rk4", 0);
    bad("spring index out of range", "particles: [0, 1]",
        "particles: [0, 3]", "potentials[0].particles[1]", "[0, 3]", 4);
    bad("negative spring index", "particles: [0, 1]", "particles: [-1, 1]",
        "potentials[0].particles[0]", "-1", 0);
    bad("one-body index out of range", "    particles: 2\n",
        "    particles: 7\n", "potentials[1].particles", "particles: 7", 11);
    bad("dimension 4", "dimension: 2", "dimension: 4", "dimension",
        "dimension: 4", 11);
    bad("dimension 0", "dimension: 2", "dimension: 0", "dimension",
        "dimension: 0", 11);
    bad("zero dt", "dt: 0.01", "dt: 0", "integrator.dt", "dt: 0", 4);
    bad("unknown trajectory format", "  every: 10\n",
        "  every: 10\n  trajectory: pdb\n", "output.trajectory", "pdb", 0);

    /* Duplicate keys name the full path and point at the second key. */
    bad("duplicate key in integrator", "  dt: 0.01\n",
        "  dt: 0.01\n  dt: 0.02\n", "integrator.dt", "dt: 0.02", 0);
    bad("duplicate top-level key", "name: base\n",
        "name: base\ndimension: 3\n", "dimension", "dimension: 2", 0);
    bad("duplicate key in a flow particle", "{mass: 3, position",
        "{mass: 3, mass: 4, position", "particles[2].mass", "mass: 4", 0);

    /* YAML syntax errors: no field, a line at or just after the fault. */
    {
        static const struct {
            const char *what, *from, *to, *near;
        } syn[] = {
            {"over-indented key", "  duration: 1\n", "   duration: 1\n",
             "   duration"},
            {"unclosed flow list", "position: [6, 0]", "position: [6, 0",
             "position: [6, 0"},
            {"tab indentation", "  every: 10\n", "\tevery: 10\n",
             "\tevery"},
        };
        int k;
        for (k = 0; k < (int)(sizeof syn / sizeof syn[0]); ++k) {
            char *text = variant(syn[k].from, syn[k].to);
            int line, col;
            locate(text, syn[k].near, 0, &line, &col);
            memset(&err, 0, sizeof err);
            expect_error(syn[k].what, text, NULL, 0, "", NULL, 0, &err);
            (void)col;
            /* libyaml reports a fault where it notices it: on the faulty
             * line or the next one. */
            RC_CHECK(err.line >= line && err.line <= line + 1,
                     "%s: error at line %d, want %d or %d (%s)", syn[k].what,
                     err.line, line, line + 1,
                     rc_error_format(&err, buf, sizeof buf));
            RC_CHECK(strstr(err.message, "YAML") != NULL,
                     "%s: message '%s' does not say YAML", syn[k].what,
                     err.message);
            free(text);
        }
    }

    /* A file that does not exist. */
    snprintf(path, sizeof path, "%s/does_not_exist.yaml", g_dir);
    memset(&err, 0, sizeof err);
    scn = NULL;
    st = rc_scenario_load(path, NULL, 0, &scn, &err);
    RC_CHECK(st == RC_ERR_IO, "missing file: status %d (%s), want RC_ERR_IO",
             (int)st, rc_status_str(st));
    RC_CHECK(err.status == RC_ERR_IO && !strcmp(err.file, path),
             "missing file: err.file '%s', want '%s'", err.file, path);
    RC_CHECK(err.line == 0 && err.field[0] == '\0',
             "missing file: line %d field '%s'", err.line, err.field);
    RC_CHECK(scn == NULL, "missing file: *out not NULL");
    rc_error_format(&err, buf, sizeof buf);
    RC_CHECK(strstr(buf, path) == buf, "missing file: message '%s'", buf);

    /* A directory is not a readable scenario. */
    memset(&err, 0, sizeof err);
    st = rc_scenario_load(g_dir, NULL, 0, &scn, &err);
    RC_CHECK(st == RC_ERR_IO && !strcmp(err.file, g_dir),
             "directory: status %d (%s), file '%s'", (int)st,
             rc_status_str(st), err.file);

    /* An unreadable file (meaningless as root, who reads anything). */
    if (geteuid() != 0) {
        write_file(base_text, path, sizeof path);
        chmod(path, 0);
        memset(&err, 0, sizeof err);
        st = rc_scenario_load(path, NULL, 0, &scn, &err);
        RC_CHECK(st == RC_ERR_IO && !strcmp(err.file, path),
                 "unreadable: status %d (%s), file '%s'", (int)st,
                 rc_status_str(st), err.file);
        chmod(path, 0600);
    }

    /* A document that is not a mapping. */
    expect_error("scalar document", "just a string\n", NULL, 0, "",
                 "just", 0, NULL);

    /* Bad --set overrides. */
    bad_set("override index out of range", "particles[5].mass=1",
            "particles[5].mass");
    bad_set("override index into a mapping", "integrator[0]=1",
            "integrator[0]");
    bad_set("override malformed index", "particles[x].mass=1",
            "particles[x].mass");
    bad_set("override unknown key", "integrator.dtt=0.1", "integrator.dtt");
    bad_set("override wrong type", "integrator.dt=fast", "integrator.dt");
    bad_set("override wrong vector size", "particles[0].position=[1,2,3]",
            "particles[0].position");
    bad_set("override mapping for a number", "integrator.dt={a: 1}",
            "integrator.dt");
    bad_set("override non-finite", "particles[1].mass=.inf",
            "particles[1].mass");
    bad_set("override zero mass", "particles[1].mass=0", "particles[1].mass");
    bad_set("override YAML error", "particles[0].position=[1,2",
            "particles[0].position");
    bad_set("override through a list by name", "particles.mass=1",
            "particles.mass");
    {
        /* The value's column within the override text. */
        const char *sets[1] = {"particles[0].position=[1, abc]"};
        memset(&err, 0, sizeof err);
        expect_error("override bad vector item", base_text, sets, 1,
                     "particles[0].position[1]", NULL, 0, &err);
        RC_CHECK(!strcmp(err.file, "--set") && err.line == 1 &&
                     err.column == 5,
                 "override bad vector item: at %s:%d:%d, want --set:1:5",
                 err.file, err.line, err.column);
    }
    {
        const char *sets[1] = {"integrator.dt"};
        memset(&err, 0, sizeof err);
        expect_error("override without '='", base_text, sets, 1, "", NULL, 0,
                     &err);
        RC_CHECK(!strcmp(err.file, "--set") &&
                     strstr(err.message, "integrator.dt") != NULL,
                 "override without '=': file '%s', message '%s'", err.file,
                 err.message);
    }
    {
        const char *sets[1] = {"=1"};
        expect_error("override with an empty path", base_text, sets, 1, "",
                     NULL, 0, NULL);
    }
    {
        /* The first bad override is the one reported. */
        const char *sets[2] = {"integrator.dt=0.02", "integrator.duration=x"};
        memset(&err, 0, sizeof err);
        expect_error("second override bad", base_text, sets, 2,
                     "integrator.duration", NULL, 0, &err);
    }
    {
        /* Message format "file:line:column: field: message". */
        char *text = variant("dt: 0.01", "dt: fast");
        char want[1400];
        int line, col;
        locate(text, "fast", 0, &line, &col);
        memset(&err, 0, sizeof err);
        expect_error("format", text, NULL, 0, "integrator.dt", "fast", 0,
                     &err);
        snprintf(want, sizeof want, "%s:%d:%d: integrator.dt: ", err.file,
                 line, col);
        rc_error_format(&err, buf, sizeof buf);
        RC_CHECK(strncmp(buf, want, strlen(want)) == 0,
                 "rc_error_format gave '%s', want prefix '%s'", buf, want);
        free(text);
    }
}

/* ------------------------------------------------------------------ */
/* Good inputs.                                                        */

static rc_scenario *load_ok(const char *path, const char *const *sets,
                            int nsets)
{
    rc_scenario *scn = NULL;
    rc_error err;
    char buf[3000];
    rc_status st = rc_scenario_load(path, sets, nsets, &scn, &err);
    RC_CHECK(st == RC_OK && scn != NULL, "%s does not load: %s", path,
             rc_error_format(&err, buf, sizeof buf));
    return st == RC_OK ? scn : NULL;
}

static rc_system *build_ok(const rc_scenario *scn, const char *what)
{
    rc_system *sys = NULL;
    rc_error err;
    char buf[3000];
    rc_status st = rc_scenario_build(scn, &sys, &err);
    RC_CHECK(st == RC_OK && sys != NULL, "%s does not build: %s", what,
             rc_error_format(&err, buf, sizeof buf));
    return st == RC_OK ? sys : NULL;
}

/* Exact equality of two diagnostics records (NaN never equal). */
static int diag_equal(const rc_diagnostics *a, const rc_diagnostics *b)
{
    int k;
    if (a->step != b->step || a->time != b->time ||
        a->energy != b->energy || a->modified_energy != b->modified_energy ||
        a->kinetic != b->kinetic || a->potential != b->potential ||
        a->min_gap != b->min_gap ||
        a->max_equality_error != b->max_equality_error ||
        a->active_contacts != b->active_contacts ||
        a->reflections != b->reflections ||
        a->solver_iterations != b->solver_iterations)
        return 0;
    for (k = 0; k < 3; ++k)
        if (a->momentum[k] != b->momentum[k] ||
            a->angular_momentum[k] != b->angular_momentum[k])
            return 0;
    return 1;
}

/* Same count, dimension, masses, radii, q and p, bit for bit. */
static void compare_systems(rc_system *a, rc_system *b, const char *what)
{
    int n = rc_system_count(a), d = rc_system_dimension(a), k, worst = -1;
    size_t nd;
    double *qa, *pa, *qb, *pb, *ma, *mb, *ra, *rb;
    rc_diagnostics da, db;
    RC_CHECK(n == rc_system_count(b) && d == rc_system_dimension(b),
             "%s: %d particles in %d-D vs %d in %d-D", what, n, d,
             rc_system_count(b), rc_system_dimension(b));
    if (n != rc_system_count(b) || d != rc_system_dimension(b))
        return;
    nd = (size_t)n * (size_t)d;
    qa = (double *)calloc(nd, sizeof(double));
    pa = (double *)calloc(nd, sizeof(double));
    qb = (double *)calloc(nd, sizeof(double));
    pb = (double *)calloc(nd, sizeof(double));
    ma = (double *)calloc((size_t)n, sizeof(double));
    mb = (double *)calloc((size_t)n, sizeof(double));
    ra = (double *)calloc((size_t)n, sizeof(double));
    rb = (double *)calloc((size_t)n, sizeof(double));
    if (!qa || !pa || !qb || !pb || !ma || !mb || !ra || !rb)
        exit(1);
    rc_system_get_state(a, qa, pa);
    rc_system_get_state(b, qb, pb);
    rc_system_get_particles(a, ma, ra);
    rc_system_get_particles(b, mb, rb);
    for (k = 0; k < (int)nd; ++k)
        if (!(qa[k] == qb[k] && pa[k] == pb[k]) && worst < 0)
            worst = k;
    RC_CHECK(worst < 0, "%s: state differs at index %d: q %.17g vs %.17g, "
             "p %.17g vs %.17g", what, worst, qa[worst < 0 ? 0 : worst],
             qb[worst < 0 ? 0 : worst], pa[worst < 0 ? 0 : worst],
             pb[worst < 0 ? 0 : worst]);
    for (k = 0, worst = -1; k < n; ++k)
        if (!(ma[k] == mb[k] && ra[k] == rb[k]) && worst < 0)
            worst = k;
    RC_CHECK(worst < 0, "%s: mass/radius of particle %d differ", what,
             worst);
    RC_CHECK(rc_system_diagnostics(a, &da) == RC_OK &&
                 rc_system_diagnostics(b, &db) == RC_OK &&
                 diag_equal(&da, &db),
             "%s: diagnostics differ (energy %.17g vs %.17g)", what,
             da.energy, db.energy);
    free(qa);
    free(pa);
    free(qb);
    free(pb);
    free(ma);
    free(mb);
    free(ra);
    free(rb);
}

/* load(file) -> JSON -> file -> load -> JSON must give the same text, and
 * both scenarios the same system and the same run. */
static void round_trip(const char *path)
{
    rc_scenario *a = load_ok(path, NULL, 0), *b = NULL;
    rc_system *sa = NULL, *sb = NULL;
    rc_scenario_run ia, ib;
    char *ja = NULL, *jb = NULL, jpath[512];
    if (!a)
        return;
    ja = rc_scenario_to_json(a);
    RC_CHECK(ja != NULL, "%s: rc_scenario_to_json gave NULL", path);
    if (!ja)
        goto done;
    write_file(ja, jpath, sizeof jpath);
    b = load_ok(jpath, NULL, 0);
    if (!b)
        goto done;
    jb = rc_scenario_to_json(b);
    RC_CHECK(jb && !strcmp(ja, jb),
             "%s: JSON echo does not round-trip:\n--- first\n%s\n--- "
             "second\n%s",
             path, ja, jb ? jb : "(null)");
    rc_scenario_run_info(a, &ia);
    rc_scenario_run_info(b, &ib);
    RC_CHECK(ia.dt == ib.dt && ia.duration == ib.duration &&
                 ia.steps == ib.steps && ia.every == ib.every &&
                 ia.trajectory == ib.trajectory &&
                 ia.trajectory_every == ib.trajectory_every &&
                 !strcmp(ia.method, ib.method) && !strcmp(ia.name, ib.name),
             "%s: run info differs after the round trip", path);
    if (rc_scenario_is_large_system(a)) {
        /* a box: no rc_system to build; rc_run's engine is tested in
         * test_md_fluid */
        RC_CHECK(rc_scenario_is_large_system(b) &&
                     rc_scenario_build(a, &sa, NULL) == RC_ERR_UNSUPPORTED,
                 "%s: a large system must stay one through the echo and "
                 "refuse rc_scenario_build", path);
        goto done;
    }
    if (rc_scenario_is_model(a)) {
        /* a model in generalized coordinates: no rc_system to build; its
         * runs are tested in tests/test_vi_*.c and tests/test_srk*.c */
        RC_CHECK(rc_scenario_is_model(b),
                 "%s: a model must stay one through the echo", path);
        goto done;
    }
    sa = build_ok(a, path);
    sb = build_ok(b, jpath);
    if (!sa || !sb)
        goto done;
    compare_systems(sa, sb, path);
    /* And they evolve identically (same potentials and integrator). */
    {
        long steps = ia.steps < 200 ? ia.steps : 200;
        RC_CHECK(rc_system_step(sa, steps) == RC_OK &&
                     rc_system_step(sb, steps) == RC_OK,
                 "%s: stepping failed", path);
        compare_systems(sa, sb, path);
    }
done:
    rc_system_free(sa);
    rc_system_free(sb);
    free(ja);
    free(jb);
    rc_scenario_free(a);
    rc_scenario_free(b);
}

static void test_examples(void)
{
    DIR *d = opendir(RC_EXAMPLES_DIR);
    struct dirent *e;
    char path[1024];
    int n = 0;
    RC_CHECK(d != NULL, "cannot open %s", RC_EXAMPLES_DIR);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
            continue;
        snprintf(path, sizeof path, "%s/%s", RC_EXAMPLES_DIR, e->d_name);
        round_trip(path);
        ++n;
    }
    closedir(d);
    RC_CHECK(n >= 2, "only %d examples found in %s", n, RC_EXAMPLES_DIR);
}

/* Every potential type, velocity input and numbers that 15 digits do not
 * represent exactly. */
static void test_round_trip_all_types(void)
{
    static const char text[] =
        "name: all_types\n"
        "description: every potential type\n"
        "dimension: 3\n"
        "particles:\n"
        "  - {mass: 1, radius: 0.1, position: [0.30000000000000004, 0, 0],"
        " momentum: [0, 0.1, -0]}\n"
        "  - {mass: 0.1, position: [3, 0.1, 0], velocity: [0.7, 0, 1e-300]}\n"
        "  - {mass: 2.5, position: [0, 3.3333333333333335, 1], "
        "momentum: [1, 2, 3]}\n"
        "potentials:\n"
        "  - {type: gravity, acceleration: [0, 0, -9.80665]}\n"
        "  - {type: gravity, g: 1.5, particles: [0, 2]}\n"
        "  - {type: spring, particles: [0, 1], k: 10, rest_length: 2.5}\n"
        "  - {type: anchor, particles: 2, k: 0.5, rest_length: 0.2, "
        "point: [0.1, 0.2, 0.3]}\n"
        "  - {type: lennard_jones, epsilon: 0.01, sigma: 0.5}\n"
        "  - {type: wca, epsilon: 0.02, sigma: 0.4}\n"
        "  - {type: inverse_square, strength: 0.001, center: [10, 10, 10]}\n"
        "  - {type: sextic_well, strength: 0.001, center: [0, 0, 0], "
        "particles: 1}\n"
        "integrator: {method: midpoint, dt: 0.001, duration: 0.05, "
        "newton_tol: 1e-13, newton_max_iter: 30}\n"
        "output: {every: 3, trajectory: xyz, trajectory_every: 7}\n";
    char path[512];
    write_file(text, path, sizeof path);
    round_trip(path);
    write_file(base_text, path, sizeof path);
    round_trip(path);
}

static void test_overrides(void)
{
    char path[512], opath[512];
    rc_scenario *scn;
    rc_scenario_run info;
    rc_system *sys;
    double q[6], p[6];
    write_file(base_text, path, sizeof path);
    {
        const char *sets[] = {"integrator.dt=0.02"};
        if ((scn = load_ok(path, sets, 1)) != NULL) {
            rc_scenario_run_info(scn, &info);
            RC_CHECK(info.dt == 0.02 && info.steps == 50,
                     "dt override: dt %g steps %ld, want 0.02 and 50",
                     info.dt, info.steps);
            rc_scenario_free(scn);
        }
    }
    {
        const char *sets[] = {"particles[0].position=[1,2]",
                              "particles[1].momentum=[-3, 4.5]",
                              "particles[2].mass=7"};
        if ((scn = load_ok(path, sets, 3)) != NULL) {
            if ((sys = build_ok(scn, "position override")) != NULL) {
                double m[3];
                rc_system_get_state(sys, q, p);
                rc_system_get_particles(sys, m, NULL);
                RC_CHECK(q[0] == 1.0 && q[1] == 2.0,
                         "position override: q0 = (%g, %g)", q[0], q[1]);
                RC_CHECK(q[2] == 6.0 && q[3] == 0.0,
                         "position override changed particle 1: (%g, %g)",
                         q[2], q[3]);
                RC_CHECK(p[2] == -3.0 && p[3] == 4.5,
                         "momentum override: p1 = (%g, %g)", p[2], p[3]);
                RC_CHECK(m[2] == 7.0, "mass override: %g", m[2]);
                rc_system_free(sys);
            }
            rc_scenario_free(scn);
        }
    }
    {
        /* A key the file lacks: output.every on a file without output. */
        static const char no_output[] =
            "dimension: 1\n"
            "particles: [{position: [0]}]\n"
            "integrator: {dt: 0.1, duration: 10}\n";
        const char *sets[] = {"output.every=7"};
        write_file(no_output, opath, sizeof opath);
        if ((scn = load_ok(opath, NULL, 0)) != NULL) {
            rc_scenario_run_info(scn, &info);
            RC_CHECK(info.every == 1 && info.steps == 100,
                     "defaults: every %ld steps %ld", info.every,
                     info.steps);
            RC_CHECK(info.trajectory == RC_TRAJECTORY_NONE,
                     "default trajectory is not none");
            rc_scenario_free(scn);
        }
        if ((scn = load_ok(opath, sets, 1)) != NULL) {
            rc_scenario_run_info(scn, &info);
            RC_CHECK(info.every == 7, "new key output.every: every %ld",
                     info.every);
            rc_scenario_free(scn);
        }
    }
    {
        const char *sets[] = {"output.every=7", "output.trajectory=xyz",
                              "integrator.method=midpoint",
                              "potentials[0].k=20"};
        if ((scn = load_ok(path, sets, 4)) != NULL) {
            char *json = rc_scenario_to_json(scn);
            rc_scenario_run_info(scn, &info);
            RC_CHECK(info.every == 7 && info.trajectory == RC_TRAJECTORY_XYZ &&
                         !strcmp(info.method, "midpoint"),
                     "overrides: every %ld traj %d method %s", info.every,
                     (int)info.trajectory, info.method);
            cJSON *root = json ? cJSON_Parse(json) : NULL;
            cJSON *k = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetArrayItem(
                    cJSON_GetObjectItemCaseSensitive(root, "potentials"), 0),
                "k");
            RC_CHECK(cJSON_IsNumber(k) && k->valuedouble == 20.0,
                     "override potentials[0].k=20 not in the echo:\n%s",
                     json ? json : "(null)");
            cJSON_Delete(root);
            free(json);
            rc_scenario_free(scn);
        }
    }
    {
        /* `--set=`-style values are YAML: a quoted value is a string. */
        const char *sets[] = {"name='quoted name'"};
        if ((scn = load_ok(path, sets, 1)) != NULL) {
            rc_scenario_run_info(scn, &info);
            RC_CHECK(!strcmp(info.name, "quoted name"), "name override: %s",
                     info.name);
            rc_scenario_free(scn);
        }
    }
    /* The name defaults to the file's base name. */
    {
        static const char unnamed[] =
            "dimension: 1\n"
            "particles: [{position: [0]}]\n"
            "integrator: {dt: 0.1, duration: 1}\n";
        write_file(unnamed, opath, sizeof opath);
        if ((scn = load_ok(opath, NULL, 0)) != NULL) {
            char want[512];
            snprintf(want, sizeof want, "%s", strrchr(opath, '/') + 1);
            *strrchr(want, '.') = '\0';
            rc_scenario_run_info(scn, &info);
            RC_CHECK(!strcmp(info.name, want), "default name '%s', want '%s'",
                     info.name, want);
            rc_scenario_free(scn);
        }
    }
}

/* Remove the temp dir (flat: files only). */
/* A large system (a box), for its output keys. */
static const char box_text[] =
    "name: box\n"
    "dimension: 3\n"
    "box: {periodic: true}\n"
    "lattice: {kind: fcc, n: 32, packing_fraction: 0.3, temperature: 1, "
    "seed: 1}\n"
    "integrator: {method: gvi, dt: 0.002, duration: 1}\n"
    "output:\n"
    "  every: 10\n"
    "  rdf_every: 25\n";

/* output.rdf_every of the canonical echo (-1: absent, -2: unreadable). */
static double echoed_rdf_every(const char *text, const char *const *sets,
                               int nsets)
{
    char path[512];
    rc_scenario *scn;
    cJSON *root, *v;
    char *json;
    double got = -2.0;
    write_file(text, path, sizeof path);
    scn = load_ok(path, sets, nsets);
    if (!scn)
        return got;
    json = rc_scenario_to_json(scn);
    root = json ? cJSON_Parse(json) : NULL;
    v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "output"), "rdf_every");
    got = v ? (cJSON_IsNumber(v) ? v->valuedouble : -2.0) : -1.0;
    cJSON_Delete(root);
    free(json);
    rc_scenario_free(scn);
    return got;
}

/* output.rdf_every (large systems): steps between g(r) samples, any
 * count from 0 (no g(r)); absent: the run chooses (not echoed). */
static void test_rdf_every(void)
{
    char *text;
    double got;
    got = echoed_rdf_every(box_text, NULL, 0);
    RC_CHECK(got == 25.0, "rdf_every 25 echoed as %g", got);
    text = variant_of(box_text, "  rdf_every: 25\n", "  rdf_every: 0\n");
    got = echoed_rdf_every(text, NULL, 0);
    RC_CHECK(got == 0.0, "rdf_every 0 echoed as %g", got);
    free(text);
    text = variant_of(box_text, "  rdf_every: 25\n", "");
    got = echoed_rdf_every(text, NULL, 0);
    RC_CHECK(got == -1.0, "rdf_every absent: echoed as %g (want absent)",
             got);
    {
        const char *sets[] = {"output.rdf_every=7"};
        got = echoed_rdf_every(text, sets, 1);
        RC_CHECK(got == 7.0, "--set output.rdf_every=7: echoed as %g", got);
    }
    free(text);

    /* Refused: the field, at the value. */
    {
        static const struct {
            const char *what, *to, *at;
        } no[] = {
            {"negative rdf_every", "  rdf_every: -1\n", "-1"},
            {"fractional rdf_every", "  rdf_every: 2.5\n", "2.5"},
            {"rdf_every a word", "  rdf_every: often\n", "often"},
            {"rdf_every a list", "  rdf_every: [1, 2]\n", "[1, 2]"},
        };
        int k;
        for (k = 0; k < (int)(sizeof no / sizeof no[0]); ++k) {
            text = variant_of(box_text, "  rdf_every: 25\n", no[k].to);
            expect_error(no[k].what, text, NULL, 0, "output.rdf_every",
                         no[k].at, 0, NULL);
            free(text);
        }
    }
    {
        const char *sets[] = {"output.rdf_every=-3"};
        rc_error err;
        memset(&err, 0, sizeof err);
        expect_error("rdf_every override", box_text, sets, 1,
                     "output.rdf_every", NULL, 0, &err);
        RC_CHECK(!strcmp(err.file, "--set"), "override: file '%s'",
                 err.file);
    }
    /* an observable of large systems only */
    bad("rdf_every without a box", "  every: 10\n",
        "  every: 10\n  rdf_every: 5\n", "output.rdf_every", "rdf_every: 5",
        11);
}

static void cleanup(void)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    char path[1024];
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", g_dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(g_dir);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/rc_test_scenario_XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_bad_inputs();
    test_examples();
    test_round_trip_all_types();
    test_overrides();
    test_rdf_every();
    if (rc_test_failed_ == 0)
        cleanup();
    else
        fprintf(stderr, "scenario files kept in %s\n", g_dir);
    return rc_test_finish("test_scenario");
}

/* Hostile inputs (issue 15): each reproducer a hostile user or a fuzzer
 * found, written to a scratch directory and fed to the CLI and to the
 * library.
 *
 *  1. Extended XYZ files (`read:`): `ricochet run` exits 2, writes
 *     nothing, and its message names the scenario's `read.file` field and
 *     the XYZ file's name, line and field (particle count, Properties,
 *     Lattice, pos, velo, radius, ...); rc_xyz_read() says the same and
 *     allocates nothing.  Good files are still read, values intact.
 *  2. The engine refuses a zero box edge and far-away positions itself
 *     (rc_md_init), whoever calls it.
 *  3. A YAML mapping of 200 000 keys loads in linear time: a duplicate at
 *     its end is reported with the same message, line and field as in a
 *     small mapping (no timing is asserted: the quadratic check took
 *     minutes, past ctest's limit).  A scenario file past 16 MiB (a pipe
 *     fed forever) is refused instead of read without bound.
 *  4. Findings of the fuzz harnesses in tests/fuzz/ (each also kept in
 *     its corpus, replayed by test_fuzz_replay_<name>). */
#define _POSIX_C_SOURCE 200809L

#include "rc_cli_test.h"

#include "ricochet/scenario.h"

#include "host/md/engine.h"
#include "host/md/xyz.h"

/* ------------------------------------------------------------------ */
/* 1. XYZ files                                                       */

typedef struct xyz_case {
    const char *name;    /* file name (without .xyz) */
    const char *text;    /* its contents (NULL: see special cases) */
    const char *where;   /* expected "name.xyz:LINE: FIELD" in the error */
    const char *why;     /* expected words of the message */
    int cli_only;        /* refused by the scenario's check, not the reader */
} xyz_case;

static const char LAT9[] = "Lattice=\"9 0 0 0 9 0 0 0 9\" ";

/* The scenario reading `file` in a 3-D periodic box (its Lattice). */
static void write_scenario(const char *yaml, const char *file)
{
    char text[1400];
    snprintf(text, sizeof text,
             "name: hostile\ndimension: 3\nbox: {periodic: true}\n"
             "read: %s\n"
             "integrator: {method: gvi, dt: 0.01, duration: 0.05}\n",
             file);
    write_text(yaml, text);
}

/* The CLI and the reader both refuse c, naming the place. */
static void check_refused(const xyz_case *c, const char *xyz)
{
    char yaml[1100], out[1100], msg[1200];
    rc_xyz x;
    int rc, got;
    snprintf(yaml, sizeof yaml, "%s/%s.yaml", g_dir, c->name);
    snprintf(out, sizeof out, "%s/out_%s", g_dir, c->name);
    write_scenario(yaml, xyz);
    rc = cli("run '%s' --out '%s' --quiet", yaml, out);
    RC_CHECK(rc == 2, "%s: exit %d, want 2 (stderr: %s)", c->name, rc,
             g_stderr);
    RC_CHECK(strstr(g_stderr, "read.file") && strstr(g_stderr, c->where) &&
                 strstr(g_stderr, c->why),
             "%s: stderr should name read.file, '%s' and say '%s', got: %s",
             c->name, c->where, c->why, g_stderr);
    RC_CHECK(count_entries(out) <= 0, "%s: a refused run wrote into %s",
             c->name, out);
    if (c->cli_only)
        return;
    memset(&x, 0x5a, sizeof x); /* the reader must reset it */
    got = rc_xyz_read(xyz, 3, 0, &x, msg, sizeof msg);
    RC_CHECK(got == -1 && strstr(msg, c->where) && strstr(msg, c->why) &&
                 !x.q && !x.v && !x.radius && !x.mass && x.n == 0,
             "%s: rc_xyz_read gave %d, '%s'", c->name, got, msg);
    rc_xyz_free(&x);
}

static void xyz_hostile(void)
{
    /* hostile headers and particle lines; line 3 is the first particle */
    static const char *const LAT0 = "Lattice=\"0 0 0 0 0 0 0 0 0\" ";
    static const char *const LATN = "Lattice=\"9 0 0 0 -9 0 0 0 9\" ";
    static const char *const LATI = "Lattice=\"9 0 0 0 9 0 0 0 inf\" ";
    static const char *const LATQ = "Lattice=\"9 0 0 0 9 0 0 0 9 ";
    static const char *const P3 = "Properties=species:S:1:pos:R:3";
    char text[8192], path[1100];
    xyz_case c;
    int k;
    memset(&c, 0, sizeof c);
    struct {
        const char *name, *head, *props, *body, *where, *why;
        const char *count;
    } t[] = {
        /* (size_t)n * dim wrapped and the heap overflowed */
        {"wrap", LAT9, P3, "A 1 1 1\nA 3 3 3\n", "wrap.xyz:1: particle count",
         "more than the 100000000", "6148914691236517206"},
        {"erange", LAT9, P3, "A 1 1 1\n", "erange.xyz:1: particle count",
         "more than the", "99999999999999999999999"},
        /* gigabytes allocated before reading one particle */
        {"huge", LAT9, P3, "A 1 1 1\nA 3 3 3\n", "huge.xyz:1: particle count",
         "cannot fit in the", "50000000"},
        {"negative", LAT9, P3, "A 1 1 1\n", "negative.xyz:1: particle count",
         "expected a positive integer", "-3"},
        /* velo:R:1 in 3-D left velocities uninitialised */
        {"velo1", LAT9, "Properties=species:S:1:pos:R:3:velo:R:1",
         "A 1 1 1 0.1\nA 3 3 3 0.2\n", "velo1.xyz:2: Properties",
         "velo has 1 columns, a 3-D run needs 3", "2"},
        {"momenta2", LAT9, "Properties=species:S:1:pos:R:3:momenta:R:2",
         "A 1 1 1 0 0\nA 3 3 3 0 0\n", "momenta2.xyz:2: Properties",
         "momenta has 2 columns", "2"},
        /* NaN and inf velocities, inf radii and masses */
        {"velo_nan", LAT9, "Properties=species:S:1:pos:R:3:velo:R:3",
         "A 1 1 1 nan 0 0\nA 3 3 3 0 0 0\n", "velo_nan.xyz:3: velo",
         "column 5 is not finite", "2"},
        {"velo_inf", LAT9, "Properties=species:S:1:pos:R:3:vel:R:3",
         "A 1 1 1 0 0 0\nA 3 3 3 0 -inf 0\n", "velo_inf.xyz:4: velo",
         "column 6 is not finite", "2"},
        {"velo_overflow", LAT9, "Properties=species:S:1:pos:R:3:velo:R:3",
         "A 1 1 1 0 0 1e999\nA 3 3 3 0 0 0\n", "velo_overflow.xyz:3: velo",
         "column 7 is not finite", "2"},
        {"radius_inf", LAT9, "Properties=species:S:1:pos:R:3:radius:R:1",
         "A 1 1 1 0.5\nA 3 3 3 inf\n", "radius_inf.xyz:4: radius",
         "must be positive and finite", "2"},
        {"mass_zero", LAT9, "Properties=species:S:1:pos:R:3:mass:R:1",
         "A 1 1 1 0\nA 3 3 3 1\n", "mass_zero.xyz:3: mass",
         "must be positive and finite", "2"},
        {"pos_nan", LAT9, P3, "A 1 nan 1\nA 3 3 3\n", "pos_nan.xyz:3: pos",
         "column 3 is not finite", "2"},
        {"pos_far", LAT9, P3, "A 1 1 1\nA 3 3 1e300\n", "pos_far.xyz:4: pos",
         "more than 2^30 box lengths", "2"},
        /* zero and negative lattices (a zero edge overflowed an int) */
        {"lattice_zero", LAT0, P3, "A 1 1 1\nA 3 3 3\n",
         "lattice_zero.xyz:2: Lattice", "edge 1 must be positive", "2"},
        {"lattice_neg", LATN, P3, "A 1 1 1\nA 3 3 3\n",
         "lattice_neg.xyz:2: Lattice", "edge 2 must be positive", "2"},
        {"lattice_inf", LATI, P3, "A 1 1 1\nA 3 3 3\n",
         "lattice_inf.xyz:2: Lattice", "edge 3 must be positive", "2"},
        {"lattice_quote", LATQ, P3, "A 1 1 1\nA 3 3 3\n",
         "lattice_quote.xyz:2: Lattice", "unterminated quote", "2"},
        {"lattice_short", "Lattice=\"9 0 0 0 9\" ", P3, "A 1 1 1\n",
         "lattice_short.xyz:2: Lattice", "needs 9 numbers", "1"},
        /* more than 64 columns read past vals[64] on the stack */
        {"cols70", LAT9, "Properties=species:S:1:pos:R:3:junk:R:66",
         "A 1 1 1\nA 3 3 3\n", "cols70.xyz:2: Properties",
         "more than 64 columns", "2"},
        {"props_bad", LAT9, "Properties=species:S:1:pos:R:x",
         "A 1 1 1\nA 3 3 3\n", "props_bad.xyz:2: Properties",
         "name:type:count", "2"},
        {"radius2", LAT9, "Properties=pos:R:3:radius:R:2",
         "1 1 1 1 1\n3 3 3 1 1\n", "radius2.xyz:2: Properties",
         "radius has 2 columns", "2"},
        {"short_line", LAT9, "Properties=species:S:1:pos:R:3:radius:R:1",
         "A 1 1 1 0.5\nA 3 3 3\n", "short_line.xyz:4: particle 2: 4 columns",
         "Properties says 5", "2"},
        /* (padded: the count alone must fit in the file's size) */
        {"ends_early", LAT9, P3, "A 1 1 1                 \nA 3 3 3\n",
         "ends_early.xyz:5: particle 3", "the frame ends after 2 of 3", "3"},
        {"not_number", LAT9, "Properties=species:S:1:pos:R:3:radius:R:1",
         "A 1 1 1 0.5\nA 3 3 3 big\n", "not_number.xyz:4: radius: column 5",
         "expected a number, got 'big'", "2"},
    };
    for (k = 0; k < (int)(sizeof t / sizeof t[0]); ++k) {
        snprintf(path, sizeof path, "%s/%s.xyz", g_dir, t[k].name);
        snprintf(text, sizeof text, "%s\n%s%s\n%s", t[k].count, t[k].head,
                 t[k].props, t[k].body);
        write_text(path, text);
        c.name = t[k].name;
        c.text = text;
        c.where = t[k].where;
        c.why = t[k].why;
        c.cli_only = !strcmp(t[k].name, "pos_far"); /* needs the box */
        check_refused(&c, path);
    }
    /* a Properties value longer than the reader keeps (it was read as
     * absent: the file then passed for plain XYZ) */
    {
        int n = snprintf(text, sizeof text, "2\n%sProperties=pos:R:3", LAT9);
        for (k = 0; k < 120; ++k)
            n += snprintf(text + n, sizeof text - (size_t)n, ":x%03d:S:1",
                          k);
        snprintf(text + n, sizeof text - (size_t)n, "\n1 1 1\n3 3 3\n");
        snprintf(path, sizeof path, "%s/props_long.xyz", g_dir);
        write_text(path, text);
        c.name = "props_long";
        c.where = "props_long.xyz:2: Properties";
        c.why = "value too long";
        check_refused(&c, path);
    }
    /* a line without end: bounded reading */
    {
        FILE *f;
        snprintf(path, sizeof path, "%s/long_line.xyz", g_dir);
        f = fopen(path, "w");
        RC_CHECK(f != NULL, "cannot write %s", path);
        if (f) {
            fprintf(f, "2\n%s%s\nA 1 1 1", LAT9, P3);
            for (k = 0; k < 200000; ++k)
                fputs(" 1", f);
            fputs("\nA 3 3 3\n", f);
            fclose(f);
        }
        c.name = "long_line";
        c.where = "long_line.xyz:3: line longer than";
        c.why = "65535 bytes";
        check_refused(&c, path);
    }
    /* a NUL byte */
    {
        FILE *f;
        snprintf(path, sizeof path, "%s/nul.xyz", g_dir);
        f = fopen(path, "w");
        RC_CHECK(f != NULL, "cannot write %s", path);
        if (f) {
            fprintf(f, "2\n%s%s\nA 1 1 1\nA 3", LAT9, P3);
            fputc('\0', f);
            fputs(" 3 3\n", f);
            fclose(f);
        }
        c.name = "nul";
        c.where = "nul.xyz:4: a NUL byte";
        c.why = "binary";
        check_refused(&c, path);
    }
    /* /dev/zero grew without bound; a directory; a missing file */
    c.name = "dev_zero";
    c.where = "/dev/zero: not a regular file";
    c.why = "";
    check_refused(&c, "/dev/zero");
    c.name = "directory";
    c.where = g_dir;
    c.why = ": not a regular file";
    check_refused(&c, g_dir);
    snprintf(path, sizeof path, "%s/missing.xyz", g_dir);
    c.name = "missing";
    c.where = "missing.xyz: cannot open it";
    c.why = "No such file";
    check_refused(&c, path);
}

/* Good files still load: every column, plain XYZ, a last line without a
 * newline, a later frame, and a run from one. */
static void xyz_good(void)
{
    char path[512], yaml[600], out[512], msg[1200];
    rc_xyz x;
    int rc;
    snprintf(path, sizeof path, "%s/good.xyz", g_dir);
    write_text(path,
               "2\nLattice=\"9 0 0 0 8 0 0 0 7\" "
               "Properties=species:S:1:pos:R:3:radius:R:1:mass:R:1:"
               "velo:R:3:extra:I:1\n"
               "A 1 1 1 0.5 2 0.1 0.2 0.3 7\n"
               "B 3 3 3 0.25 1 -0.1 -0.2 -0.3 8\n"
               "1\nProperties=pos:R:2:momenta:R:2\n4 5 0.5 -0.5");
    rc = rc_xyz_read(path, 3, 0, &x, msg, sizeof msg);
    RC_CHECK(rc == 0 && x.n == 2 && x.have_box && x.box[0] == 9.0 &&
                 x.box[1] == 8.0 && x.box[2] == 7.0 && x.radius &&
                 x.radius[1] == 0.25 && x.mass && x.mass[0] == 2.0 && x.v &&
                 !x.momenta && x.v[5] == -0.3 && x.q[3] == 3.0,
             "good.xyz frame 0: %d %s", rc, rc ? msg : "values differ");
    rc_xyz_free(&x);
    rc = rc_xyz_read(path, 2, 1, &x, msg, sizeof msg);
    RC_CHECK(rc == 0 && x.n == 1 && !x.have_box && x.momenta && x.v &&
                 x.v[1] == -0.5 && x.q[0] == 4.0 && x.q[1] == 5.0,
             "good.xyz frame 1 (2-D, momenta, no final newline): %d %s", rc,
             rc ? msg : "values differ");
    rc_xyz_free(&x);
    rc = rc_xyz_read(path, 3, 2, &x, msg, sizeof msg);
    RC_CHECK(rc == -1 && strstr(msg, "good.xyz:8: frame 2 does not exist"),
             "good.xyz frame 2: %d %s", rc, msg);
    rc_xyz_free(&x);
    snprintf(path, sizeof path, "%s/plain.xyz", g_dir);
    write_text(path, "2\nLattice=\"9 0 0 0 9 0 0 0 9\"\n"
                     "Ar 1 1 1\r\nAr 3 3 3\r\n");
    rc = rc_xyz_read(path, 3, 0, &x, msg, sizeof msg);
    RC_CHECK(rc == 0 && x.n == 2 && x.q[5] == 3.0 && !x.v,
             "plain.xyz: %d %s", rc, msg);
    rc_xyz_free(&x);
    snprintf(yaml, sizeof yaml, "%s/plain.yaml", g_dir);
    snprintf(out, sizeof out, "%s/out_plain", g_dir);
    write_scenario(yaml, path);
    rc = cli("run '%s' --out '%s' --quiet", yaml, out);
    RC_CHECK(rc == 0 && exists(out, "summary.json"),
             "a run from plain.xyz: exit %d, stderr %s", rc, g_stderr);
}

/* ------------------------------------------------------------------ */
/* 2. The engine's own guard                                          */

static void engine_guard(void)
{
    rc_md md;
    rc_md_params par;
    rc_k_box box;
    double q[6] = {1.0, 1.0, 1.0, 3.0, 3.0, 3.0};
    double p[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double m[2] = {1.0, 1.0}, r[2] = {0.5, 0.5};
    rc_status st;
    memset(&box, 0, sizeof box);
    box.dim = 3;
    box.L[0] = box.L[1] = 9.0;
    box.L[2] = 0.0; /* a zero edge: q / L is inf, converted to int */
    box.periodic[0] = box.periodic[1] = box.periodic[2] = 1;
    memset(&par, 0, sizeof par);
    par.dt = 0.01;
    st = rc_md_init(&md, &box, 2, q, p, m, r, &par);
    RC_CHECK(st == RC_ERR_INVALID && strstr(md.msg, "box edge 2"),
             "rc_md_init with a zero edge: %d '%s'", (int)st, md.msg);
    rc_md_free(&md);
    box.L[2] = 9.0;
    q[4] = 1e300;
    st = rc_md_init(&md, &box, 2, q, p, m, r, &par);
    RC_CHECK(st == RC_ERR_INVALID && strstr(md.msg, "particle 1"),
             "rc_md_init with a position 1e300: %d '%s'", (int)st, md.msg);
    rc_md_free(&md);
    q[4] = 3.0;
    r[0] = INFINITY;
    st = rc_md_init(&md, &box, 2, q, p, m, r, &par);
    RC_CHECK(st == RC_ERR_INVALID && strstr(md.msg, "particle 0"),
             "rc_md_init with an infinite radius: %d '%s'", (int)st, md.msg);
    rc_md_free(&md);
}

/* ------------------------------------------------------------------ */
/* 3. A mapping of 200 000 keys                                       */

static void yaml_many_keys(void)
{
    /* ten times the size that took 15 s with the quadratic check */
    const long nkeys = 200000;
    char path[1100], buf[3000];
    rc_scenario *scn = NULL;
    rc_error err;
    rc_status st;
    FILE *f;
    long k;
    snprintf(path, sizeof path, "%s/many_keys.yaml", g_dir);
    f = fopen(path, "w");
    RC_CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    fputs("name: many\ndimension: 3\nextra:\n", f);
    for (k = 0; k < nkeys; ++k)
        fprintf(f, "  k%ld: %ld\n", k, k);
    fputs("  k17: again\n", f);
    fclose(f);
    st = rc_scenario_load(path, NULL, 0, &scn, &err);
    RC_CHECK(st == RC_ERR_PARSE && err.line == (int)nkeys + 4 &&
                 err.column == 3 && !strcmp(err.field, "extra.k17") &&
                 !strcmp(err.message, "duplicate key 'k17'"),
             "200000 keys and a duplicate: %s",
             rc_error_format(&err, buf, sizeof buf));
    rc_scenario_free(scn);
    scn = NULL;
    /* without the duplicate the mapping loads, and the unknown key is
     * named */
    f = fopen(path, "w");
    RC_CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    fputs("name: many\ndimension: 3\nextra:\n", f);
    for (k = 0; k < nkeys; ++k)
        fprintf(f, "  k%ld: %ld\n", k, k);
    fclose(f);
    st = rc_scenario_load(path, NULL, 0, &scn, &err);
    RC_CHECK(st == RC_ERR_PARSE && err.line == 3 &&
                 !strcmp(err.field, "extra") &&
                 strstr(err.message, "unknown key 'extra'"),
             "200000 keys under an unknown key: %s",
             rc_error_format(&err, buf, sizeof buf));
    rc_scenario_free(scn);
    scn = NULL;
    /* and the CLI exits 2 */
    RC_CHECK(cli("validate '%s'", path) == 2,
             "validate of 200000 keys: stderr %s", g_stderr);
    /* the check still works in a small mapping, at every position */
    snprintf(path, sizeof path, "%s/dup_small.yaml", g_dir);
    write_text(path, "name: a\nintegrator: {method: gvi, dt: 0.1, "
                     "method: gvi}\n");
    st = rc_scenario_load(path, NULL, 0, &scn, &err);
    RC_CHECK(st == RC_ERR_PARSE && err.line == 2 && err.column == 36 &&
                 !strcmp(err.field, "integrator.method") &&
                 !strcmp(err.message, "duplicate key 'method'"),
             "a small duplicate: %s", rc_error_format(&err, buf, sizeof buf));
    rc_scenario_free(scn);
}

/* ------------------------------------------------------------------ */
/* 4. Findings of the fuzz harnesses                                  */

/* fuzz_set: `--set lattice.n=92569383` made the loader calloc 5.9 GB of
 * particles before any check.  The particles a run would hold are now
 * checked against the memory available (here lowered through
 * RICOCHET_MEMORY_LIMIT) before anything is allocated: exit 2 with
 * the estimate; the same for the particles of a `read:` file. */
static void memory_estimate(void)
{
    char yaml[1100], out[1100], xyz[1100];
    int rc;
    snprintf(yaml, sizeof yaml, "%s/big_lattice.yaml", g_dir);
    snprintf(out, sizeof out, "%s/out_big_lattice", g_dir);
    write_text(yaml, "name: big\ndimension: 3\nbox: {periodic: true}\n"
                     "lattice: {kind: fcc, n: 32000, packing_fraction: 0.3}\n"
                     "integrator: {method: gvi, dt: 0.01, duration: 0.05}\n");
    rc = cli_env("RICOCHET_MEMORY_LIMIT=100M",
                 "run '%s' --out '%s' --quiet --set lattice.n=2000000", yaml,
                 out);
    RC_CHECK(rc == 2 && strstr(g_stderr, "lattice.n: this scenario needs "
                                         "about") &&
                 strstr(g_stderr, "RICOCHET_MEMORY_LIMIT") &&
                 count_entries(out) <= 0,
             "lattice.n=2000000 under a 100 MiB limit: exit %d, %s", rc,
             g_stderr);
    /* the same scenario within the limit still loads */
    rc = cli_env("RICOCHET_MEMORY_LIMIT=100M", "validate '%s'", yaml);
    RC_CHECK(rc == 0, "lattice.n=32000 under a 100 MiB limit: exit %d, %s", rc,
             g_stderr);
    snprintf(xyz, sizeof xyz, "%s/two.xyz", g_dir);
    write_text(xyz, "2\nLattice=\"9 0 0 0 9 0 0 0 9\"\nA 1 1 1\nA 3 3 3\n");
    snprintf(yaml, sizeof yaml, "%s/two.yaml", g_dir);
    write_scenario(yaml, xyz);
    rc = cli_env("RICOCHET_MEMORY_LIMIT=1K", "validate '%s'", yaml);
    RC_CHECK(rc == 2 && strstr(g_stderr, "read.file: 2 particles need about"),
             "read: 2 particles under a 1 kB limit: exit %d, %s", rc,
             g_stderr);
}

/* A scenario that never ends (a pipe fed forever): reading stops at
 * 16 MiB with a message instead of growing the tree without bound. */
static void yaml_endless(void)
{
    char path[1100], block[65536], buf[3000];
    rc_scenario *scn = NULL;
    rc_error err;
    rc_status st;
    FILE *f;
    int k;
    snprintf(path, sizeof path, "%s/endless.yaml", g_dir);
    f = fopen(path, "w");
    RC_CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    for (k = 0; k + 4 <= (int)sizeof block; k += 4)
        memcpy(block + k, "- 1\n", 4);
    for (k = 0; k < 16 * 16 + 1; ++k) /* 16 MiB and 64 KiB */
        fwrite(block, 1, sizeof block, f);
    fclose(f);
    st = rc_scenario_load(path, NULL, 0, &scn, &err);
    RC_CHECK(st == RC_ERR_PARSE && !strcmp(err.file, path) &&
                 strstr(err.message, "larger than 16 MiB"),
             "a 16 MiB + 64 KiB scenario: %s",
             rc_error_format(&err, buf, sizeof buf));
    rc_scenario_free(scn);
    unlink(path);
}

int main(void)
{
    if (cli_test_start("test_inputs_hostile"))
        return 1;
    xyz_hostile();
    xyz_good();
    engine_guard();
    yaml_many_keys();
    yaml_endless();
    memory_estimate();
    return cli_test_finish("test_inputs_hostile");
}

/* Reading one frame of an extended XYZ file (the format ricochet and
 * OVITO/ASE write): line 1 the particle count; line 2 key=value pairs,
 * of which Lattice="ax ay az bx by bz cx cy cz" (the box; only
 * orthogonal boxes are taken) and Properties=name:type:columns:...
 * (the columns of the particle lines) are read; then one line per
 * particle.  Columns used: pos (2 or 3 reals), radius (1), mass (1),
 * velo (velocities) or momenta; others (species, ...) are skipped.
 *
 * The file may come from anyone: it must be a regular file, lines are
 * read with a bounded length, the particle count is checked against what
 * the rest of the file can hold before anything is allocated, and every
 * value used is checked (finite; radii, masses and lattice lengths
 * positive).  Errors read "path:line: field: why". */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "xyz.h"

/* Longest line accepted, newline included: a particle line of 64 columns
 * of 25-character numbers is under 2 KiB and OVITO's comment lines are a
 * few hundred bytes; anything longer is not a trajectory (and reading it
 * unbounded lets a hostile file exhaust memory). */
#define RC_XYZ_MAX_LINE 65536
/* Most columns a Properties line may declare: the particle line's values
 * are parsed into an array of this size (ASE and OVITO write ~10). */
#define RC_XYZ_MAX_COLS 64
/* Most particles a frame may hold: the same cap as lattice.n (the
 * engine indexes particles and pair lists with int). */
#define RC_XYZ_MAX_N 100000000L

void rc_xyz_free(rc_xyz *x)
{
    free(x->q);
    free(x->v);
    free(x->radius);
    free(x->mass);
    memset(x, 0, sizeof *x);
}

/* One line into buf (at most RC_XYZ_MAX_LINE bytes with its newline, the
 * newline dropped, NUL-terminated); *pos advances by the bytes read.
 * 1 a line, 0 end of file, -1 too long, -2 a NUL byte, -3 read error. */
static int rc_xyz_line(FILE *f, char *buf, long long *pos)
{
    size_t len = 0;
    int ch;
    for (;;) {
        ch = getc_unlocked(f); /* one reader per FILE: no lock needed */
        if (ch == EOF) {
            buf[len] = '\0';
            if (ferror(f))
                return -3;
            return len > 0 ? 1 : 0;
        }
        ++*pos;
        if (ch == '\n') {
            buf[len] = '\0';
            return 1;
        }
        if (ch == '\0')
            return -2;
        if (len + 1 >= RC_XYZ_MAX_LINE)
            return -1;
        buf[len++] = (char)ch;
    }
}

/* The value of key in the comment line (quoted or bare), into out.
 * 0 found, 1 absent, -1 unterminated quote, -2 longer than size - 1. */
static int rc_xyz_key(const char *line, const char *key, char *out,
                      size_t size)
{
    const char *at = line;
    size_t kl = strlen(key);
    while ((at = strstr(at, key)) != NULL) {
        if ((at == line || at[-1] == ' ' || at[-1] == '\t') && at[kl] == '=') {
            const char *v = at + kl + 1, *end;
            if (*v == '"') {
                ++v;
                end = strchr(v, '"');
            } else {
                end = v + strcspn(v, " \t\r\n");
            }
            if (!end)
                return -1;
            if ((size_t)(end - v) >= size)
                return -2;
            memcpy(out, v, (size_t)(end - v));
            out[end - v] = '\0';
            return 0;
        }
        at += kl;
    }
    return 1;
}

#define RC_XYZ_FAIL(...)                                                     \
    do {                                                                     \
        snprintf(msg, size, __VA_ARGS__);                                    \
        goto fail;                                                           \
    } while (0)

/* Read the next line into line (the message for a failure names the
 * line number lineno + 1 and `what` the line should have held). */
#define RC_XYZ_NEXT(eof_fmt, ...)                                            \
    do {                                                                     \
        int rc_ = rc_xyz_line(f, line, &pos);                                \
        if (rc_ == 0)                                                        \
            RC_XYZ_FAIL(eof_fmt, __VA_ARGS__);                               \
        if (rc_ == -1)                                                       \
            RC_XYZ_FAIL("%s:%ld: line longer than %d bytes (not an XYZ "     \
                        "file?)",                                            \
                        path, lineno + 1, RC_XYZ_MAX_LINE - 1);              \
        if (rc_ == -2)                                                       \
            RC_XYZ_FAIL("%s:%ld: a NUL byte (a binary file?)", path,         \
                        lineno + 1);                                         \
        if (rc_ == -3)                                                       \
            RC_XYZ_FAIL("%s:%ld: read error: %s", path, lineno + 1,          \
                        strerror(errno));                                    \
        ++lineno;                                                            \
    } while (0)

int rc_xyz_read(const char *path, int dim, long frame, rc_xyz *x, char *msg,
                size_t size)
{
    FILE *f = NULL;
    struct stat sb;
    char *line = NULL, props[1024], lat[512];
    long long pos = 0, fsize = 0;
    long lineno = 0, fr, n = 0, i;
    int col_pos = -1, col_rad = -1, col_mass = -1, col_vel = -1, is_mom = 0;
    int ncols = 0, npos = 0, nvel = 0, kr;
    const char *vel_name = "velo";
    memset(x, 0, sizeof *x);
    x->frames = -1;
    if (dim != 2 && dim != 3)
        RC_XYZ_FAIL("%s: dimension %d (2 or 3)", path, dim);
    f = fopen(path, "r");
    if (!f)
        RC_XYZ_FAIL("%s: cannot open it: %s", path, strerror(errno));
    /* /dev/zero, a FIFO or a terminal would be read without end */
    if (fstat(fileno(f), &sb) != 0)
        RC_XYZ_FAIL("%s: cannot stat it: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        RC_XYZ_FAIL("%s: not a regular file", path);
    fsize = (long long)sb.st_size;
    line = (char *)malloc(RC_XYZ_MAX_LINE);
    if (!line)
        RC_XYZ_FAIL("%s: out of memory", path);
    if (frame < 0) {
        /* counted from the end: a first pass counts the frames (each a
         * count line, a comment line and that many particle lines) */
        long total = 0;
        for (;;) {
            char *end;
            int got = rc_xyz_line(f, line, &pos);
            if (got == 0)
                break;
            if (got < 0)
                RC_XYZ_FAIL("%s:%ld: %s", path, lineno + 1,
                            got == -1   ? "line too long (not an XYZ file?)"
                            : got == -2 ? "a NUL byte (a binary file?)"
                                        : "read error");
            ++lineno;
            n = strtol(line, &end, 10);
            while (*end == ' ' || *end == '\t' || *end == '\r')
                ++end;
            if (end == line || *end || n < 1 || n > RC_XYZ_MAX_N)
                RC_XYZ_FAIL("%s:%ld: particle count: expected a positive "
                            "integer up to %ld, got '%.40s'",
                            path, lineno, RC_XYZ_MAX_N, line);
            RC_XYZ_NEXT("%s:%ld: missing the comment line", path,
                        lineno + 1);
            for (i = 0; i < n; ++i)
                RC_XYZ_NEXT("%s:%ld: frame %ld ends after %ld of %ld "
                            "particles",
                            path, lineno + 1, total, i, n);
            ++total;
        }
        if (frame < -total)
            RC_XYZ_FAIL("%s: frame %ld does not exist (the file has %ld "
                        "frame%s: 0 to %ld, or -1 to -%ld from the end)",
                        path, frame, total, total == 1 ? "" : "s",
                        total - 1, total);
        frame += total;
        x->frames = total;
        rewind(f);
        pos = 0;
        lineno = 0;
    }
    for (fr = 0;; ++fr) {
        char *end;
        RC_XYZ_NEXT("%s:%ld: frame %ld does not exist (the file has %ld)",
                    path, lineno + 1, frame, fr);
        errno = 0;
        n = strtol(line, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r')
            ++end;
        if (end == line || *end || n < 1)
            RC_XYZ_FAIL("%s:%ld: particle count: expected a positive "
                        "integer, got '%.40s'",
                        path, lineno, line);
        if (errno == ERANGE || n > RC_XYZ_MAX_N)
            RC_XYZ_FAIL("%s:%ld: particle count: %.40s is more than the "
                        "%ld a frame may hold",
                        path, lineno, line, RC_XYZ_MAX_N);
        RC_XYZ_NEXT("%s:%ld: missing the comment line", path, lineno + 1);
        if (fr == frame)
            break;
        for (i = 0; i < n; ++i)
            RC_XYZ_NEXT("%s:%ld: frame %ld ends after %ld of %ld particles",
                        path, lineno + 1, fr, i, n);
    }
    /* the comment line: Lattice and Properties */
    kr = rc_xyz_key(line, "Lattice", lat, sizeof lat);
    if (kr < 0)
        RC_XYZ_FAIL("%s:%ld: Lattice: %s", path, lineno,
                    kr == -1 ? "unterminated quote" : "value too long");
    if (kr == 0) {
        double m[9];
        int k;
        char *s = lat, *end;
        for (k = 0; k < 9; ++k, s = end) {
            m[k] = strtod(s, &end);
            if (end == s)
                RC_XYZ_FAIL("%s:%ld: Lattice: needs 9 numbers, got %d", path,
                            lineno, k);
        }
        while (*s == ' ' || *s == '\t')
            ++s;
        if (*s)
            RC_XYZ_FAIL("%s:%ld: Lattice: more than 9 numbers", path, lineno);
        for (k = 0; k < 9; ++k)
            if (k % 4 != 0 && m[k] != 0.0)
                RC_XYZ_FAIL("%s:%ld: Lattice: only orthogonal (diagonal) "
                            "lattices are supported",
                            path, lineno);
        /* a zero, negative, infinite or NaN edge is no box (and a zero
         * one divides positions by zero when they are wrapped) */
        for (k = 0; k < dim; ++k)
            if (!(m[4 * k] > 0.0) || !isfinite(m[4 * k]))
                RC_XYZ_FAIL("%s:%ld: Lattice: edge %d must be positive and "
                            "finite, got %g",
                            path, lineno, k + 1, m[4 * k]);
        x->box[0] = m[0];
        x->box[1] = m[4];
        x->box[2] = m[8];
        x->have_box = 1;
    }
    kr = rc_xyz_key(line, "Properties", props, sizeof props);
    if (kr < 0)
        RC_XYZ_FAIL("%s:%ld: Properties: %s", path, lineno,
                    kr == -1 ? "unterminated quote" : "value too long");
    if (kr == 0) {
        char *save = NULL, *tok = strtok_r(props, ":", &save);
        while (tok) {
            char *type = strtok_r(NULL, ":", &save);
            char *cnt = strtok_r(NULL, ":", &save), *end = NULL;
            long c = cnt ? strtol(cnt, &end, 10) : 0;
            if (!type || !cnt || *end || c < 1)
                RC_XYZ_FAIL("%s:%ld: Properties: must be name:type:count "
                            "triples (count a positive integer)",
                            path, lineno);
            if (c > RC_XYZ_MAX_COLS - ncols)
                RC_XYZ_FAIL("%s:%ld: Properties: more than %d columns", path,
                            lineno, RC_XYZ_MAX_COLS);
            if (!strcmp(tok, "pos")) {
                col_pos = ncols;
                npos = (int)c;
            } else if (!strcmp(tok, "radius")) {
                if (c != 1)
                    RC_XYZ_FAIL("%s:%ld: Properties: radius has %ld columns, "
                                "not 1",
                                path, lineno, c);
                col_rad = ncols;
            } else if (!strcmp(tok, "mass") || !strcmp(tok, "masses")) {
                if (c != 1)
                    RC_XYZ_FAIL("%s:%ld: Properties: %s has %ld columns, "
                                "not 1",
                                path, lineno, tok, c);
                col_mass = ncols;
            } else if (!strcmp(tok, "velo") || !strcmp(tok, "vel") ||
                       !strcmp(tok, "velocities") ||
                       !strcmp(tok, "momenta")) {
                col_vel = ncols;
                nvel = (int)c;
                is_mom = !strcmp(tok, "momenta");
                vel_name = is_mom ? "momenta" : "velo";
            }
            ncols += (int)c;
            tok = strtok_r(NULL, ":", &save);
        }
    } else {
        /* plain XYZ: species x y z */
        col_pos = 1;
        npos = 3;
        ncols = 4;
    }
    if (col_pos < 0 || npos < dim)
        RC_XYZ_FAIL("%s:%ld: Properties: no pos column with %d components",
                    path, lineno, dim);
    if (col_vel >= 0 && nvel < dim)
        RC_XYZ_FAIL("%s:%ld: Properties: %s has %d columns, a %d-D run needs "
                    "%d",
                    path, lineno, vel_name, nvel, dim, dim);
    /* Each particle line holds ncols values of at least one character
     * and a separator: a count the rest of the file cannot hold is
     * refused before allocating for it. */
    if ((long long)n > (fsize - pos + 1) / (2LL * ncols))
        RC_XYZ_FAIL("%s:%ld: particle count: %ld particles of %d columns "
                    "cannot fit in the %lld bytes left in the file",
                    path, lineno - 1, n, ncols, fsize - pos);
    x->n = n;
    x->first_line = lineno + 1;
    x->frame = frame;
    x->q = (double *)calloc((size_t)n * (size_t)dim, sizeof(double));
    x->v = col_vel >= 0 ? (double *)calloc((size_t)n * (size_t)dim,
                                           sizeof(double))
                        : NULL;
    x->radius = col_rad >= 0 ? (double *)calloc((size_t)n, sizeof(double))
                             : NULL;
    x->mass = col_mass >= 0 ? (double *)calloc((size_t)n, sizeof(double))
                            : NULL;
    x->momenta = is_mom;
    if (!x->q || (col_vel >= 0 && !x->v) || (col_rad >= 0 && !x->radius) ||
        (col_mass >= 0 && !x->mass))
        RC_XYZ_FAIL("%s: out of memory for %ld particles", path, n);
    for (i = 0; i < n; ++i) {
        char *save = NULL, *tok;
        int c = 0, k;
        double vals[RC_XYZ_MAX_COLS];
        RC_XYZ_NEXT("%s:%ld: particle %ld: the frame ends after %ld of %ld "
                    "particles",
                    path, lineno + 1, i + 1, i, n);
        for (tok = strtok_r(line, " \t\r", &save); tok && c < ncols;
             tok = strtok_r(NULL, " \t\r", &save), ++c) {
            char *end;
            vals[c] = strtod(tok, &end);
            if (*end || end == tok) {
                int numeric_needed = (c >= col_pos && c < col_pos + npos) ||
                                     c == col_rad || c == col_mass ||
                                     (col_vel >= 0 && c >= col_vel &&
                                      c < col_vel + nvel);
                if (numeric_needed)
                    RC_XYZ_FAIL("%s:%ld: %s: column %d: expected a number, "
                                "got '%.40s'",
                                path, lineno,
                                c == col_rad    ? "radius"
                                : c == col_mass ? "mass"
                                : c >= col_pos && c < col_pos + npos
                                    ? "pos"
                                    : vel_name,
                                c + 1, tok);
                vals[c] = 0.0;
            }
        }
        if (c < ncols)
            RC_XYZ_FAIL("%s:%ld: particle %ld: %d columns, Properties says "
                        "%d",
                        path, lineno, i + 1, c, ncols);
        /* a 3-D file read by a 2-D run: refused unless its z is 0 (as
         * ricochet pads 2-D frames), never silently projected */
        if (npos > dim && vals[col_pos + dim] != 0.0)
            RC_XYZ_FAIL("%s:%ld: pos: column %d is %g, a %d-D run needs "
                        "0 there (a %d-D file?)",
                        path, lineno, col_pos + dim + 1, vals[col_pos + dim],
                        dim, npos);
        for (k = 0; k < dim; ++k) {
            double qk = vals[col_pos + k];
            if (!isfinite(qk))
                RC_XYZ_FAIL("%s:%ld: pos: column %d is not finite (%g)", path,
                            lineno, col_pos + k + 1, qk);
            x->q[i * dim + k] = qk;
            if (x->v) {
                double vk = vals[col_vel + k];
                if (!isfinite(vk))
                    RC_XYZ_FAIL("%s:%ld: %s: column %d is not finite (%g)",
                                path, lineno, vel_name, col_vel + k + 1, vk);
                x->v[i * dim + k] = vk;
            }
        }
        if (x->radius) {
            x->radius[i] = vals[col_rad];
            if (!(x->radius[i] > 0.0) || !isfinite(x->radius[i]))
                RC_XYZ_FAIL("%s:%ld: radius: must be positive and finite, "
                            "got %g",
                            path, lineno, x->radius[i]);
        }
        if (x->mass) {
            x->mass[i] = vals[col_mass];
            if (!(x->mass[i] > 0.0) || !isfinite(x->mass[i]))
                RC_XYZ_FAIL("%s:%ld: mass: must be positive and finite, got "
                            "%g",
                            path, lineno, x->mass[i]);
        }
    }
    free(line);
    fclose(f);
    return 0;
fail:
    free(line);
    if (f)
        fclose(f);
    rc_xyz_free(x);
    return -1;
}

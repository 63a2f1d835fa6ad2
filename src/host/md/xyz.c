/* Reading one frame of an extended XYZ file (the format ricochet and
 * OVITO/ASE write): line 1 the particle count; line 2 key=value pairs,
 * of which Lattice="ax ay az bx by bz cx cy cz" (the box; only
 * orthogonal boxes are taken) and Properties=name:type:columns:...
 * (the columns of the particle lines) are read; then one line per
 * particle.  Columns used: pos (2 or 3 reals), radius (1), mass (1),
 * velo (velocities) or momenta; others (species, ...) are skipped.
 * Errors name the file and line. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xyz.h"

void rc_xyz_free(rc_xyz *x)
{
    free(x->q);
    free(x->v);
    free(x->radius);
    free(x->mass);
    memset(x, 0, sizeof *x);
}

/* The value of key in the comment line (quoted or bare), into out. */
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
            if (!end || (size_t)(end - v) >= size)
                return -1;
            memcpy(out, v, (size_t)(end - v));
            out[end - v] = '\0';
            return 0;
        }
        at += kl;
    }
    return -1;
}

#define RC_XYZ_FAIL(...)                                                     \
    do {                                                                     \
        snprintf(msg, size, __VA_ARGS__);                                    \
        goto fail;                                                           \
    } while (0)

int rc_xyz_read(const char *path, int dim, long frame, rc_xyz *x, char *msg,
                size_t size)
{
    FILE *f = fopen(path, "r");
    char *line = NULL, props[1024], lat[512];
    size_t cap = 0;
    long lineno = 0, fr, n = 0, i;
    int col_pos = -1, col_rad = -1, col_mass = -1, col_vel = -1, is_mom = 0;
    int ncols = 0, npos = 0;
    memset(x, 0, sizeof *x);
    if (!f)
        RC_XYZ_FAIL("%s: cannot open it", path);
    for (fr = 0;; ++fr) {
        char *end;
        if (getline(&line, &cap, f) < 0)
            RC_XYZ_FAIL("%s:%ld: frame %ld does not exist (the file has %ld)",
                        path, lineno + 1, frame, fr);
        ++lineno;
        n = strtol(line, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            ++end;
        if (*end || n < 1)
            RC_XYZ_FAIL("%s:%ld: expected the particle count, got '%.40s'",
                        path, lineno, line);
        if (getline(&line, &cap, f) < 0)
            RC_XYZ_FAIL("%s:%ld: missing the comment line", path, lineno + 1);
        ++lineno;
        if (fr == frame)
            break;
        for (i = 0; i < n; ++i) {
            if (getline(&line, &cap, f) < 0)
                RC_XYZ_FAIL("%s:%ld: frame %ld ends after %ld of %ld "
                            "particles",
                            path, lineno + 1, fr, i, n);
            ++lineno;
        }
    }
    /* the comment line: Lattice and Properties */
    if (rc_xyz_key(line, "Lattice", lat, sizeof lat) == 0) {
        double m[9];
        int k;
        if (sscanf(lat, "%lf %lf %lf %lf %lf %lf %lf %lf %lf", &m[0], &m[1],
                   &m[2], &m[3], &m[4], &m[5], &m[6], &m[7], &m[8]) != 9)
            RC_XYZ_FAIL("%s:%ld: Lattice needs 9 numbers", path, lineno);
        for (k = 0; k < 9; ++k)
            if (k % 4 != 0 && m[k] != 0.0)
                RC_XYZ_FAIL("%s:%ld: only orthogonal (diagonal) lattices are "
                            "supported",
                            path, lineno);
        x->box[0] = m[0];
        x->box[1] = m[4];
        x->box[2] = m[8];
        x->have_box = 1;
    }
    if (rc_xyz_key(line, "Properties", props, sizeof props) == 0) {
        char *save = NULL, *tok = strtok_r(props, ":", &save);
        while (tok) {
            char *type = strtok_r(NULL, ":", &save);
            char *cnt = strtok_r(NULL, ":", &save);
            int c = cnt ? atoi(cnt) : 0;
            if (!type || c < 1)
                RC_XYZ_FAIL("%s:%ld: Properties must be name:type:count "
                            "triples",
                            path, lineno);
            if (!strcmp(tok, "pos")) {
                col_pos = ncols;
                npos = c;
            } else if (!strcmp(tok, "radius") && c == 1) {
                col_rad = ncols;
            } else if (!strcmp(tok, "mass") || !strcmp(tok, "masses")) {
                col_mass = ncols;
            } else if (!strcmp(tok, "velo") || !strcmp(tok, "vel") ||
                       !strcmp(tok, "velocities")) {
                col_vel = ncols;
            } else if (!strcmp(tok, "momenta")) {
                col_vel = ncols;
                is_mom = 1;
            }
            ncols += c;
            tok = strtok_r(NULL, ":", &save);
        }
    } else {
        /* plain XYZ: species x y z */
        col_pos = 1;
        npos = 3;
        ncols = 4;
    }
    if (col_pos < 0 || npos < dim)
        RC_XYZ_FAIL("%s:%ld: no pos column with %d components", path, lineno,
                    dim);
    x->n = n;
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
        double vals[64];
        if (getline(&line, &cap, f) < 0)
            RC_XYZ_FAIL("%s:%ld: the frame ends after %ld of %ld particles",
                        path, lineno + 1, i, n);
        ++lineno;
        for (tok = strtok_r(line, " \t\r\n", &save); tok && c < 64;
             tok = strtok_r(NULL, " \t\r\n", &save), ++c) {
            char *end;
            vals[c] = strtod(tok, &end);
            if (*end && c != 0) { /* column 0 may be a species name */
                int numeric_needed = (c >= col_pos && c < col_pos + npos) ||
                                     c == col_rad || c == col_mass ||
                                     (col_vel >= 0 && c >= col_vel &&
                                      c < col_vel + npos);
                if (numeric_needed)
                    RC_XYZ_FAIL("%s:%ld: column %d: expected a number, got "
                                "'%.40s'",
                                path, lineno, c + 1, tok);
            }
        }
        if (c < ncols)
            RC_XYZ_FAIL("%s:%ld: %d columns, Properties says %d", path, lineno,
                        c, ncols);
        for (k = 0; k < dim; ++k) {
            x->q[i * dim + k] = vals[col_pos + k];
            if (x->v)
                x->v[i * dim + k] = vals[col_vel + k];
            if (!isfinite(x->q[i * dim + k]))
                RC_XYZ_FAIL("%s:%ld: position is not finite", path, lineno);
        }
        if (x->radius && !(x->radius[i] = vals[col_rad], x->radius[i] > 0.0))
            RC_XYZ_FAIL("%s:%ld: radius must be positive", path, lineno);
        if (x->mass && !(x->mass[i] = vals[col_mass], x->mass[i] > 0.0))
            RC_XYZ_FAIL("%s:%ld: mass must be positive", path, lineno);
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

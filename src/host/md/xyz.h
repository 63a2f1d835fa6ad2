/* One frame of an extended XYZ file (xyz.c). */
#ifndef RC_MD_XYZ_H
#define RC_MD_XYZ_H

#include <stddef.h>

typedef struct rc_xyz {
    long n;
    double *q;        /* [n*dim] positions */
    double *v;        /* [n*dim] velocities (or momenta), NULL if absent */
    int momenta;      /* v holds momenta */
    double *radius;   /* [n] or NULL */
    double *mass;     /* [n] or NULL */
    double box[3];    /* orthogonal Lattice diagonal, if have_box */
    int have_box;
    long first_line; /* line number of the first particle's line (0 for
                        H5MD) */
    long frame;      /* the frame read, counted from 0 */
    long frames;     /* frames in the file, -1 when not counted (an XYZ
                        file read from the start) */
} rc_xyz;

/* Read frame `frame` (0 = the first; negative counts from the end, -1
 * the last, after a first pass that counts the frames) of path into x, dim components of
 * the positions (and velocities).  0, or -1 with "path:line: field: why"
 * in msg and nothing allocated.  The file must be a regular file; its
 * values are checked (finite; radii, masses, Lattice edges positive). */
int rc_xyz_read(const char *path, int dim, long frame, rc_xyz *x, char *msg,
                size_t size);
void rc_xyz_free(rc_xyz *x);

#endif

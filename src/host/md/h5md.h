/* H5MD 1.1 trajectories of large systems (https://www.nongnu.org/h5md/),
 * written through the HDF5 C library when the build has it
 * (RICOCHET_HDF5, RICOCHET_HAVE_HDF5); without it every call but
 * rc_h5md_available() returns RC_H5MD_UNSUPPORTED.
 *
 * Layout written (one particle group, `all`; N particles, D = 2 or 3):
 *
 *   h5md/                  +-- version int32[2] = {1, 1}
 *        author/           +-- name "ricochet"
 *        creator/          +-- name "ricochet", version (caller's)
 *   particles/all/
 *        box/              +-- dimension int32 = D
 *                          +-- boundary string[D] "periodic" | "none"
 *             edges/value  float64[frames][D]   the box lengths
 *             edges/step, edges/time            hard links to position's
 *        radius            float64[N]           (time-independent)
 *        position/value    float64[frames][N][D]
 *                 step     int64[frames]
 *                 time     float64[frames]
 *        velocity/value    float64[frames][N][D] (with_velocity only)
 *                 step, time                    hard links to position's
 *        image/value       int32[frames][N][D]  periodic images (0 when
 *                                               not given)
 *              step, time                       hard links to position's
 *
 * The box is constant, but edges are stored time-dependent (one row per
 * frame) because MDAnalysis reads particles/<group>/box/edges/value
 * [frame]; a fixed `edges` dataset, also valid H5MD, makes its reader
 * fail.  No `unit` attributes are written (reduced units): open in
 * MDAnalysis with convert_units=False.
 *
 * Frames are flushed to disk at every append, so a run that is killed
 * leaves the frames written so far readable (up to the last flush).
 * Serial HDF5 is not thread-safe: use one handle from one thread.
 *
 * Returns: 0 success; -1 failure with a message in msg (naming the HDF5
 * call that failed and HDF5's innermost reason); RC_H5MD_UNSUPPORTED
 * (-2) when this build has no HDF5.  HDF5's own error printing is
 * silenced during each call (and restored afterwards). */
#ifndef RC_MD_H5MD_H
#define RC_MD_H5MD_H

#include <stddef.h>

#define RC_H5MD_UNSUPPORTED (-2)

typedef struct rc_h5md rc_h5md; /* opaque */

/* 1 when this build writes H5MD, else 0. */
int rc_h5md_available(void);

/* Create (truncate) path and write the metadata, the box, the radii and
 * the empty time-dependent elements.  Borrowed, copied where needed:
 * box_lengths[dim], periodic[dim] (nonzero = periodic axis), radius[n]
 * (NULL: no radius dataset), version (NULL: "unknown").  with_velocity:
 * nonzero to create particles/all/velocity (then every append needs v).
 * On failure *out is NULL and no file handle stays open. */
int rc_h5md_create(rc_h5md **out, const char *path, int n, int dim,
                   const double *box_lengths, const int *periodic,
                   const double *radius, int with_velocity,
                   const char *version, char *msg, size_t msg_size);

/* Append one frame: q[n*dim] positions (particle-major), v[n*dim]
 * velocities (required when created with_velocity, else ignored),
 * image[n*dim] periodic images (NULL: written as 0).  After a failed
 * append the handle refuses further appends (the datasets may have
 * different lengths); close it. */
int rc_h5md_append(rc_h5md *h, long step, double time, const double *q,
                   const double *v, const int *image, char *msg,
                   size_t msg_size);

/* Open a file rc_h5md_create made (a run being continued from a
 * checkpoint) for appending after its first `frames` frames, cutting off
 * any written after them; its shape must be n spheres in dim dimensions.
 * On failure *out is NULL. */
int rc_h5md_reopen(rc_h5md **out, const char *path, int n, int dim,
                   const double *box_lengths, int with_velocity, long frames,
                   char *msg, size_t msg_size);
/* Frames written completely so far. */
long rc_h5md_frames(const rc_h5md *h);

/* Flush, close every HDF5 object and free h (also on failure).
 * h NULL: nothing to do, returns 0. */
int rc_h5md_close(rc_h5md *h, char *msg, size_t msg_size);

#endif

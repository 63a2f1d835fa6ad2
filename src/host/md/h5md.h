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
 *        mass              float64[N]           (time-independent)
 *        species           int32[N]             (time-independent) index
 *                          +-- names string[S]  into these species names
 *        id                int32[N]             0..N-1 (time-independent)
 *        position/value    float64[frames][N][D]
 *                 step     int64[frames]
 *                 time     float64[frames]
 *        velocity/value    float64[frames][N][D] (with_velocity only)
 *                 step, time                    hard links to position's
 *        image/value       int32[frames][N][D]  periodic images (0 when
 *                                               not given)
 *              step, time                       hard links to position's
 *   observables/<name>/value float64[rows]     one per observable name
 *                      step, time              hard links to the first
 *                                              observable's
 *
 * The box is constant, but edges are stored time-dependent (one row per
 * frame) because MDAnalysis reads particles/<group>/box/edges/value
 * [frame]; a fixed `edges` dataset, also valid H5MD, makes its reader
 * fail.
 *
 * Units (H5MD 1.1 units module): with a length unit L and a time unit T
 * given, edges, radius and position carry unit = L, velocity "L T-1",
 * every time dataset T; mass, species, id, image and the observables
 * carry none.  The numbers are whatever the run computes in (reduced
 * units for ricochet): the strings only label them, e.g. "Angstrom" and
 * "ps" so that MDAnalysis reads them unchanged with convert_units=True.
 * Without units (NULL) no unit attribute is written.
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

/* What rc_h5md_create writes besides the trajectory.  Borrowed, copied
 * where needed; every pointer may be NULL (the element is not written):
 * radius[n], mass[n], species[n] (indices into species_names[nspecies]),
 * version (NULL: "unknown"), length_unit and time_unit (both or neither:
 * no unit attributes), obs_names[nobs] (observables/<name> series, one
 * value each per rc_h5md_observe; names without '/'). */
typedef struct rc_h5md_meta {
    const double *radius;
    const double *mass;
    const int *species;
    const char *const *species_names;
    int nspecies;
    const char *version;
    const char *length_unit, *time_unit;
    const char *const *obs_names;
    int nobs;
} rc_h5md_meta;

/* Create (truncate) path and write the metadata, the box, the
 * time-independent particle data and the empty time-dependent elements.
 * Borrowed: box_lengths[dim], periodic[dim] (nonzero = periodic axis),
 * meta (NULL: none of it).  with_velocity: nonzero to create
 * particles/all/velocity (then every append needs v).  On failure *out
 * is NULL, no file handle stays open and no file is left at path. */
int rc_h5md_create(rc_h5md **out, const char *path, int n, int dim,
                   const double *box_lengths, const int *periodic,
                   int with_velocity, const rc_h5md_meta *meta, char *msg,
                   size_t msg_size);

/* Append one frame: q[n*dim] positions (particle-major), v[n*dim]
 * velocities (required when created with_velocity, else ignored),
 * image[n*dim] periodic images (NULL: written as 0).  After a failed
 * append the handle refuses further appends (the datasets may have
 * different lengths); close it. */
int rc_h5md_append(rc_h5md *h, long step, double time, const double *q,
                   const double *v, const int *image, char *msg,
                   size_t msg_size);

/* Append one row of the observables: vals[nobs] in the order of
 * meta->obs_names, at step and time.  Fails as rc_h5md_append. */
int rc_h5md_observe(rc_h5md *h, long step, double time, const double *vals,
                    char *msg, size_t msg_size);

/* Open a file rc_h5md_create made (a run being continued from a
 * checkpoint) for appending after its first `frames` frames and `rows`
 * observable rows (nobs observables), cutting off any written after
 * them; its shape must be n spheres in dim dimensions, its observables
 * obs_names[nobs] (those it was created with).  On failure *out is
 * NULL. */
int rc_h5md_reopen(rc_h5md **out, const char *path, int n, int dim,
                   const double *box_lengths, int with_velocity, long frames,
                   const char *const *obs_names, int nobs, long rows,
                   char *msg, size_t msg_size);
/* Frames and observable rows written completely so far. */
long rc_h5md_frames(const rc_h5md *h);
long rc_h5md_rows(const rc_h5md *h);

/* Flush, close every HDF5 object and free h (also on failure).
 * h NULL: nothing to do, returns 0. */
int rc_h5md_close(rc_h5md *h, char *msg, size_t msg_size);

/* One frame of an H5MD file (any writer's: the first group under
 * particles/ that has a position element), into x as rc_xyz_read fills
 * it: frame 0 is the first, a negative frame counts from the end (-1 the
 * last); positions of dim components, velocities (x->momenta 0) when the
 * group has a velocity element sampled at that frame, radius and mass
 * when the group has them (time-independent or per frame), the box from
 * box/edges (a diagonal matrix or a vector, fixed or per frame).  Every
 * value is checked as rc_xyz_read checks its own (finite; radii, masses
 * and edges positive).  0, or -1 with "path: element: why" in msg and
 * nothing allocated; RC_H5MD_UNSUPPORTED without HDF5. */
struct rc_xyz;
int rc_h5md_read(const char *path, int dim, long frame, struct rc_xyz *x,
                 char *msg, size_t msg_size);

/* 1 when path starts with the HDF5 signature (the superblock at offset
 * 0, as HDF5 writes it unless asked for a user block), else 0. */
int rc_h5md_is_hdf5(const char *path);

#endif

/* Initial configurations of large systems (DESIGN §6): the box from a
 * packing fraction, lattice and random placements, Maxwell–Boltzmann
 * momenta.  Random numbers are counter-based (src/host/md/random.h),
 * keyed by (seed, particle, stream), so a configuration does not depend
 * on the thread count. */
#ifndef RC_MD_SETUP_H
#define RC_MD_SETUP_H

#include <stddef.h>

#include "../../kernels/rc_box.h"

enum { RC_LATTICE_FCC = 0, RC_LATTICE_SC = 1, RC_LATTICE_RANDOM = 2 };

/* Cubic (square) box whose volume makes the spheres (disks) of the given
 * radii fill the fraction eta: L^dim = sum of particle volumes / eta.
 * periodic[k] as given.  Returns 0, or -1 (eta not in (0, 1), n < 1). */
int rc_md_box_for_packing(int dim, long n, const double *radius, double eta,
                          const int periodic[3], rc_k_box *b);

/* Positions of n particles in the box: kind RC_LATTICE_FCC (3-D only;
 * the smallest k with 4k^3 >= n, first n sites in lattice order), SC
 * (k^dim >= n), or RANDOM (random sequential addition without overlap,
 * keyed by seed).  Walled axes keep every sphere inside [r, L - r].
 * Fails with a message (msg) when the spheres do not fit: a lattice
 * spacing below the largest diameter, or random addition that cannot
 * place a sphere after many attempts (too dense).  Returns 0 or -1. */
int rc_md_place(int kind, const rc_k_box *b, long n, const double *radius,
                unsigned long long seed, double *q, char *msg, size_t size);

/* Maxwell–Boltzmann momenta at temperature T (k_B = 1): normal draws
 * keyed by (seed, particle, axis), total momentum removed, then scaled so
 * that 2 KE / (dim (n - 1)) = T exactly (to round-off).  n >= 2. */
void rc_md_maxwell(int dim, long n, const double *mass, double T,
                   unsigned long long seed, double *p);

/* One frame of a trajectory file into x (xyz.h): H5MD when the file
 * starts with the HDF5 signature or its name ends in .h5md, .h5 or
 * .hdf5 (rc_h5md_read), else extended XYZ (rc_xyz_read).  frame from 0,
 * negative from the end.  *is_h5md says which.  0, or -1 with the
 * reader's message (naming the file and the element or line). */
struct rc_xyz;
int rc_md_read_frame(const char *path, int dim, long frame,
                     struct rc_xyz *x, int *is_h5md, char *msg, size_t size);

#endif

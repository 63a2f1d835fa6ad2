/* Observables of large systems (DESIGN §6): the radial distribution
 * function and the standard error of a time average by blocking. */
#ifndef RC_MD_OBSERVABLES_H
#define RC_MD_OBSERVABLES_H

#include <stdio.h>

#include "../../kernels/rc_box.h"

/* Histogram of pair distances below rmax, accumulated over samples. */
typedef struct rc_rdf {
    int dim, nbins;
    double rmax;
    double *hist;    /* [nbins] pair counts (each pair once) */
    long samples;    /* configurations added */
    long n;          /* particles (the same in every sample) */
    double volume;   /* box volume (the same in every sample) */
} rc_rdf;

int rc_rdf_init(rc_rdf *r, int dim, int nbins, double rmax);
void rc_rdf_free(rc_rdf *r);
/* Add one configuration: the npairs pairs (pi, pj) with distance below
 * rmax (e.g. from rc_cells_pairs at cutoff rmax); distances by minimum
 * image. */
void rc_rdf_add(rc_rdf *r, const rc_k_box *b, const double *q, long n,
                const int *pi, const int *pj, long npairs);
/* g(r) at bin centres: counts / (samples * n/2 * (n-1)/V * shell volume)
 * (exact shell volumes; ideal gas -> 1).  Writes "r,g\n" rows; 0 or -1. */
int rc_rdf_write(const rc_rdf *r, FILE *f);
double rc_rdf_value(const rc_rdf *r, int bin); /* g of one bin */

/* Mean of x[0..n) and the standard error of that mean from blocking
 * (Flyvbjerg & Petersen 1989): the data are averaged in blocks of 2^k,
 * the naive error of the block means is computed per level, and the
 * estimate is the largest over the levels with at least 32 blocks
 * (a plateau once blocks outlast the correlation time).  *levels: the
 * levels used (may be NULL).  n < 2: error NaN. */
double rc_block_stderr(const double *x, long n, double *mean, int *levels);

#endif

/* Observables of large systems (DESIGN §6): the radial distribution
 * function and the standard error of a time average by blocking. */
#ifndef RC_MD_OBSERVABLES_H
#define RC_MD_OBSERVABLES_H

#include <stdio.h>

#include "../../kernels/rc_box.h"
#include "cells.h"

/* Histogram of pair distances below rmax, accumulated over samples. */
typedef struct rc_rdf {
    int dim, nbins;
    double rmax;
    double *hist;    /* [nbins] pair counts (each pair once; integers) */
    long samples;    /* configurations added */
    long n;          /* particles (the same in every sample) */
    double volume;   /* box volume (the same in every sample) */
    /* scratch of rc_rdf_add, grown and never shrunk */
    rc_cells cells;     /* cells of edge >= rmax */
    double *soa;        /* [dim][cap_n] positions in cell order (it and
                           cells: scratch of rc_rdf_add, freed on return) */
    long long *counts;  /* [cap_t][nbins] per-thread counts */
    double *lent;       /* scratch of lent_n doubles that the caller lends
                           to the next rc_rdf_add for the positions (a
                           large run: an engine array idle between steps);
                           cleared by it */
    long lent_n;
    long cap_n, cap_t;
} rc_rdf;

int rc_rdf_init(rc_rdf *r, int dim, int nbins, double rmax);
void rc_rdf_free(rc_rdf *r);
/* Add one configuration: every pair i < j of the n particles (positions
 * q, n x dim) whose minimum-image distance d = sqrt(sum_k x_k^2), x =
 * rc_k_box_delta(q_i, q_j), is below rmax, into bin floor(d nbins / rmax)
 * (the last bin if that rounds to nbins).  The pairs come from a cell
 * list of edge >= rmax, walked by threads (0 = default), each binning into
 * its own integer histogram; the histograms are summed in thread order,
 * so the counts are exact and the same on any thread count, and equal
 * those of the O(n^2) loop over all pairs.  Any rmax works (beyond half a
 * periodic box each pair still counts once, at its minimum image; the
 * normalisation is then no longer that of a shell).  Returns 0, or -1
 * (bad arguments, dim other than r's, out of memory: the sample is not
 * added). */
int rc_rdf_add(rc_rdf *r, const rc_k_box *b, const double *q, long n,
               int threads);
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

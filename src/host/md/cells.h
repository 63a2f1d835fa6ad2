/* Broadphase of large systems (DESIGN §6): cell lists by counting sort
 * and the pairs closer than a cutoff, plus the connected components
 * ("islands") of a pair graph.
 *
 * Deterministic: every output is in a canonical order (pairs sorted by
 * (i, j) with i < j; island labels are the smallest particle index of
 * the component), identical for any thread count. */
#ifndef RC_MD_CELLS_H
#define RC_MD_CELLS_H

#include "../../kernels/rc_box.h"

/* Particles binned into a grid of cells of edge >= min_cell per axis. */
typedef struct rc_cells {
    int dim;
    int nc[3];      /* cells per axis (>= 1) */
    double edge[3]; /* cell edge per axis: L / nc */
    int ncell;      /* nc[0] * nc[1] (* nc[2]) */
    int *start;     /* [ncell + 1]: particles of cell c are
                       index[start[c] .. start[c+1]) */
    int *index;     /* [n] particle indices by cell, ascending within one */
    int *cell_of;   /* [n] cell of each particle */
    int n;          /* particles binned */
    int cap_n, cap_cell; /* allocated sizes (grown, never shrunk) */
} rc_cells;

/* A list of pairs i < j. */
typedef struct rc_pairs {
    int *i, *j;
    long n, cap;
} rc_pairs;

/* Bin n particles (positions q, n*dim, inside the box) by counting sort
 * into cells of edge >= min_cell.  Reuses c's arrays.  Returns 0, or -1
 * (out of memory, or min_cell not positive). */
int rc_cells_build(rc_cells *c, const rc_k_box *b, const double *q, int n,
                   double min_cell);
/* The same with a cell edge of at least min_cell[k] on axis k (dim
 * values). */
int rc_cells_build_axes(rc_cells *c, const rc_k_box *b, const double *q,
                        int n, const double *min_cell);
void rc_cells_free(rc_cells *c);

/* The grid rc_cells_build uses for min_cell: cells per axis, their edge,
 * and the cell count.  0, or -1 (bad box or min_cell, too many cells). */
int rc_cells_grid(const rc_k_box *b, double min_cell, int nc[3],
                  double edge[3], long *ncell);

/* All pairs i < j with |minimum image of q_i - q_j| < cutoff, sorted by
 * (i, j), from cells built with min_cell >= cutoff.  On a periodic axis
 * the cutoff must be below L/2 (minimum image).  threads: OpenMP threads
 * (0 = default); the output does not depend on it.  Returns 0, or -1
 * (out of memory, cells too small for the cutoff, cutoff >= L/2). */
int rc_cells_pairs(const rc_cells *c, const rc_k_box *b, const double *q,
                   int n, double cutoff, rc_pairs *out, int threads);

/* The same list by the plain O(n^2) search (the CPU reference path). */
int rc_pairs_brute(const rc_k_box *b, const double *q, int n, double cutoff,
                   rc_pairs *out);

/* Append (i, j) to p (growing it); 0 or -1. */
int rc_pairs_push(rc_pairs *p, int i, int j);
void rc_pairs_free(rc_pairs *p);

/* Connected components of the graph on n vertices with the m edges
 * (pi[e], pj[e]): label[v] = the smallest vertex of v's component.
 * Union-find with path compression; parent: n ints of scratch. */
void rc_islands_label(int n, const int *pi, const int *pj, long m,
                      int *label, int *parent);

#endif

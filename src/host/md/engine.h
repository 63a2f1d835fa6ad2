/* The large-system GVI engine (DESIGN §6): hard spheres in a box with
 * periodic or walled axes, contacts found by cell lists, one generalized
 * reflection per contact island.  Private to the library. */
#ifndef RC_MD_ENGINE_H
#define RC_MD_ENGINE_H

#include "ricochet/status.h"
#include "../../kernels/rc_md.h"
#include "../../kernels/rc_potential.h"
#include "cells.h"

/* One contact of the extended set A (src/kernels/rc_md.h). */
typedef rc_k_md_contact rc_md_contact;

typedef struct rc_md_params {
    double dt;
    double gravity[3];    /* uniform acceleration (0 = none) */
    int has_pair;         /* a Lennard-Jones or WCA pair potential */
    rc_k_potential pair;  /* its kernel form (rc_pair_potential_form_) */
    double pair_cut;      /* its cutoff */
    int threads;          /* OpenMP threads, 0 = default */
    int max_passes;       /* reflection passes per island */
    int moreau;           /* Moreau reflection (Algorithm 3): passes over
                             every contact of an island while one
                             approaches; what still approaches after
                             max_passes is held by the position update */
    int dense_max;        /* islands up to this many contacts: the dense
                             Lawson–Hanson kernel; */
    int lapack_max;       /* up to this many: Lawson–Hanson with LAPACK
                             Cholesky; larger: projected Gauss–Seidel */
    double pgs_tol;       /* relative complementarity tolerance of PGS */
    int pgs_max_iter;
    int reverse_islands;  /* reflect islands in reverse order (a test of
                             order independence; results must not change) */
    double skin;          /* candidate pairs reach this far beyond contact
                             and are rebuilt only when the spheres moved
                             enough to use it up (0: 0.3 diameter) */
} rc_md_params;

/* Counters of one step (and sums over the run). */
typedef struct rc_md_counts {
    long collisions;       /* pair contacts that received an impulse */
    long wall_collisions;
    double virial;         /* sum over pair impulses of lam * distance */
    long islands;          /* islands reflected */
    long largest_island;   /* contacts */
    long pgs_islands;      /* islands solved by the sparse tier */
    long lapack_islands;   /* islands solved by the LAPACK tier */
    double pgs_residual;   /* worst final relative residual of PGS */
    long passes;           /* reflection passes */
    long held;             /* contacts held by the position update */
    long rounds;           /* R2 rounds (the extended set grew) */
} rc_md_counts;

typedef struct rc_md {
    rc_k_box box;
    int n, dim;
    double *q, *p;         /* [n*dim]: q wrapped into the box */
    double *mass, *inv_mass, *radius; /* [n] */
    int *image;            /* [n*dim] box lengths crossed (unwrapping) */
    rc_md_params par;
    double eps_g, eps_v;   /* contact and speed tolerances */
    double rmax;
    /* scratch */
    double *qp;            /* [n*dim] predictor */
    double *grad, *grad1;  /* [n*dim] grad V at q, at the new x */
    double *dxs;           /* [n*dim] displacement of the held contacts */
    unsigned char *touched; /* [n] momentum or position changed since the
                               last contact scan */
    int have_grad;
    double epot_pair;      /* pair potential energy at q */
    double *pair_c1, *pair_e; /* [cand cap] per-candidate force factor and
                               energy (computed in parallel, summed in
                               order) */
    long pair_cap;
    double virial_force;   /* sum over pairs of r_ij . F_ij at q */
    rc_cells cells;
    rc_pairs cand;         /* candidate pairs (Verlet list with skin) */
    double *qbuild;        /* [n*dim] unwrapped positions at its build */
    int have_cand;
    long rebuilds;         /* candidate list builds */
    rc_md_contact *con;    /* the extended set A */
    long ncon, con_cap;
    unsigned char *in_a;   /* [cand.n] candidate already in A */
    unsigned char *wall_in; /* [n*6] wall contact already in A */
    double *p_save;        /* [n*dim] momenta at the start of the step */
    int *pi, *pj;          /* island edges */
    long *cnt;             /* [n+1] */
    long isl_cap;
    int *label, *parent;   /* [n] island labels */
    int *order;            /* contacts by island (indices into A) */
    long *istart;          /* island s: order[istart[s] .. istart[s+1]) */
    long nisl;
    rc_md_counts step, total;
    /* wall seconds spent so far: predictor and update, broadphase (cell
     * lists and candidates), contact tests and islands, reflections */
    double t_update, t_broad, t_contacts, t_reflect;
    long steps;
    double time;
    char msg[512];
} rc_md;

/* Take copies of the state; radius, mass [n]; q [n*dim] inside the box.
 * Checks that no pair overlaps and every sphere is inside the walls. */
rc_status rc_md_init(rc_md *md, const rc_k_box *box, int n, const double *q,
                     const double *p, const double *mass,
                     const double *radius, const rc_md_params *par);
void rc_md_free(rc_md *md);

/* Forces and candidate lists at the initial state (the first step does
 * it if not called; call it to read energies before any step). */
rc_status rc_md_prepare(rc_md *md);

/* One GVI step.  On failure md->msg says why and the state is that of
 * the last step. */
rc_status rc_md_step(rc_md *md);

/* Pieces of the step the device engine (dengine.c) shares:
 * the candidates' cutoff for a step that moves spheres up to dstep (the
 * skin widened when one step would use it up; RC_ERR_INVALID with msg
 * when the box is too small for it); the end of a step (counters into
 * the totals, steps, time); the message of a failed island (stage 0
 * reflection, 1 position update, 2 projection; fail 1-5 as the island
 * solvers return it; m its contacts). */
rc_status rc_md_candidate_cut(rc_md *md, double dstep, double *cut);
void rc_md_step_done(rc_md *md);
rc_status rc_md_island_failed(rc_md *md, int stage, int fail, long m);

/* Kinetic energy, potential energy (gravity), total momentum. */
void rc_md_energy(const rc_md *md, double *kin, double *pot, double mom[3]);
/* Mean-squared displacement of the unwrapped positions from ref
 * [n dim]. */
double rc_md_msd(const rc_md *md, const double *ref);
/* Largest overlap (-min gap, 0 if none) of any sphere pair or sphere and
 * wall. */
double rc_md_max_overlap(rc_md *md);

#endif

/* The large-system GVI state (DESIGN §6): hard spheres in a box with
 * periodic or walled axes, their parameters, the step's counters and
 * timers.  The step is the one orchestration of dengine.h, on the CPU or
 * the CUDA launcher.  Private to the library. */
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
    int exact;            /* exact collision times (rc_md_exact.h):
                             impacts at their times within the step, for
                             ballistic spheres (no pair potential) */
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
    int state_lent;        /* q and image are a host launcher's arrays
                              (rc_dmd_init: the host's copy of the state
                              between steps); rc_md_free leaves them */
    double *mass, *inv_mass, *radius; /* [n] */
    int *image;            /* [n*dim] box lengths crossed (unwrapping) */
    rc_md_params par;
    double eps_g, eps_v;   /* contact and speed tolerances */
    double rmax;
    double *grad;          /* [n*dim] grad V at the start: the uniform
                              field (the engine adds the pair potential's
                              part and keeps grad V on its launcher) */
    double epot_pair;      /* pair potential energy at q */
    double virial_force;   /* sum over pairs of r_ij . F_ij at q */
    long rebuilds;         /* candidate list builds */
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

/* Pieces of the step that the orchestration (dengine.c) takes from here:
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
/* The unwrapped positions q + image L [n dim] into out. */
void rc_md_unwrapped(const rc_md *md, double *out);
/* Mean-squared displacement of the unwrapped positions from ref
 * [n dim]. */
double rc_md_msd(const rc_md *md, const double *ref);
/* Largest overlap (-min gap, 0 if none) of any sphere pair, by a cell
 * search at q (the start's check; the engine's is rc_dmd_observe). */
double rc_md_max_overlap(const rc_md *md);

#endif

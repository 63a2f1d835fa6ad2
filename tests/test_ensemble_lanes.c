/* The batch engine's lane path (src/host/batch_lanes.c, the stage bodies
 * of src/kernels/rc_gvi_lanes.h): the members of a batch stepped together
 * in SIMD lanes, the steps the lanes do not cover (two or more terms in
 * the extended set, resting contact, a term in the extended set of a
 * model with equalities, Newton past its cap, the midpoint base with a
 * potential other than gravity, non-finite results) by the scalar body.  Its promise is bits: members.csv byte-identical to the
 * scalar batch engine (opt.scalar_batch: each member alone through
 * rc_k_member_run) and to the per-member engine (opt.per_member), for any
 * batch size and thread count.  No tolerance anywhere: every comparison
 * is of bytes.
 *
 *  1. engines agree: for each ensemble below, the lane engine and the
 *     scalar batch engine at batch sizes 1, 3, 64 and one more than the
 *     members, on 1 and 2 threads, write members.csv (traces, groups.csv)
 *     byte-identical to the per-member engine's (and so does the lane
 *     engine with the default options); ensemble.json says which
 *     step ran (`engine.step`: "lanes" where rc_k_lanes_ok or
 *     rc_k_lanes_eq_ok admits the model, so the test cannot pass by not
 *     using lanes; "scalar" for the midpoint base without equalities, a
 *     varied radius and scalar_batch);
 *       - pogo stick 1-D (gravity, spring with a rest length, a wall):
 *         random upward kicks, so that in one batch some members land and
 *         some never do (both counted in members.csv);
 *       - the pogo stick with a round foot resting on the floor, beside
 *         members dropped from above;
 *       - the nonlinear oscillator with contact 2-D (sextic well, an
 *         anchor with rest length 0, an inverse-square term; non-overlap,
 *         a container and an obstacle);
 *       - four spheres in a spherical container, 3-D (gravity and
 *         Lennard-Jones; non-overlap and the container);
 *       - three spheres in 3-D with the less common forms (gravity on a
 *         subset, WCA, an anchor with a rest length, non-overlap on a
 *         list of pairs, a tilted wall with an offset, a container off
 *         the origin);
 *       - a 2-D corner (two walls) and a spring, a grid of momenta whose
 *         diagonal hits both walls in one step;
 *       - a Newton's cradle (equality constraints, the midpoint base
 *         with gravity only, which is the Verlet base (rc_gvi_view_
 *         method_): the lanes' SHAKE and RATTLE for the free steps, the
 *         scalar body for the impacts); the cradle with each member's own run
 *         parameters, a grid over integrator.dt (three step counts in
 *         one batch: the lanes group members by dt) and two balls'
 *         masses (per-lane masses); and with a ball's radius varied
 *         (radii are the scalar body's: step "scalar");
 *       - equality constraints on the Verlet base in lanes (SHAKE for
 *         the position, RATTLE for the momentum, their m x m solves per
 *         lane): the cart-pendulum (line and rod, the ground); a 3-D
 *         chain (pendulum, rod, a line: four multipliers, walls that two
 *         particles reach); 1-D, a particle held by a plane and one on a
 *         spring below it that lands; the traces show steps with no term
 *         in the extended set (the lanes') and steps with one (the
 *         scalar body's);
 *     the oscillator also with Moreau's reflection, the modified energy,
 *     seed-exact mode, given tolerances, four rows, and the midpoint base
 *     (the scalar step);
 *     and for the contact cases, the traces of the per-member engine show
 *     steps with exactly one term reflected and steps with two or more
 *     terms in the extended set or resting (the scalar body's share), so
 *     the lanes and the slow path both run inside one batch;
 *  2. failure isolation: pogo ensembles in which a third of the members
 *     are invalid (below the floor) or fail (kinetic energy that
 *     overflows at the start; energy that overflows after some steps, or
 *     a state that turns non-finite in a step, both mid-run in the lanes)
 *     in the same batches as good members, at batch sizes 1, 3, 5, 64
 *     and all in one, on 1 and 2 threads: the statuses are the expected
 *     ones, the good members are ok with 300 steps, and members.csv and
 *     first_failures are the per-member engine's for both batch steps;
 *  2a. run parameters that do not load (a mass of 0 for a third of the
 *     cradle grid): those members are re-run alone and invalid, the
 *     others run in lanes; members.csv is the per-member engine's;
 *  2b. Newton's cap: the chain with faster swings and newton_max_iter 4,
 *     where some members' SHAKE solves need more iterations: those lanes
 *     go to the scalar body, which fails the member mid-run; statuses,
 *     first_failures and members.csv are the per-member engine's;
 *  3. the GPU thread's form: every lane case run with each lane's stages
 *     alone (rc_k_lanes_fast_one, what rc_g_lanes_fast runs per thread;
 *     the CPU launcher's RICOCHET_LANES_ONE_BY_ONE=1) writes the
 *     per-member engine's members.csv.
 *
 * About 37 s of CPU in a Release build (11 s before the equality cases,
 * 23 s before the cradle cases). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rc_cli_test.h"
#include "rc_model_text.h"
#include "rc_ens_test.h"
#include "ricochet/ensemble.h"
#include "ricochet/run.h"
#include "ricochet/scenario.h"


/* Which engine a run asks for. */
enum { ENG_LANES = 0, ENG_SCALAR = 1, ENG_MEMBER = 2 };
static const char *const eng_name[3] = {"lanes", "scalar-batch",
                                        "per-member"};

/* ------------------------------------------------------------------ */
/* The ensembles.                                                      */

/* Pogo stick (seed 000 §6.1.1), 300 steps of 0.01: both masses kicked
 * upward by up to 40, so the low kicks land within the 3 time units and
 * the high ones are still rising or falling when the run ends (about 3 in
 * 4 never touch the floor); the draws are random per member, so every
 * batch of 3 or more mixes the two. */
static const char pogo_text[] =
    "name: pogo_lanes\n"
    RC_POGO_MODEL
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"
    "output: {every: 7, trace_members: [5]}\n"
    "ensemble:\n"
    "  members: 200\n"
    "  seed: 5\n"
    "  vary:\n"
    "    - {path: \"particles[0].momentum[0]\", uniform: [-1, 40]}\n"
    "    - {path: \"particles[1].momentum[0]\", uniform: [-1, 40]}\n"
    "    - {path: \"particles[1].position[0]\", uniform: [0, 2]}\n";

/* The pogo stick with a round foot (radius 0.25) started on the floor:
 * where the spring is at or below its rest length the foot rests there
 * (the extended set holds a term that does not approach: the scalar
 * body), in the same batches as members dropped from above that bounce
 * (single reflections in the lanes).  A 5 x 20 grid of foot and body
 * heights, 300 steps of 0.01. */
static const char rest_text[] =
    "name: pogo_rest_lanes\n"
    "dimension: 1\n"
    "particles:\n"
    "  - {mass: 1, position: [5], momentum: [0]}\n"
    "  - {mass: 1, radius: 0.25, position: [0.25], momentum: [0]}\n"
    "potentials:\n"
    "  - {type: gravity, g: 9.8}\n"
    "  - {type: spring, particles: [0, 1], k: 10, rest_length: 5}\n"
    "constraints:\n"
    "  - {type: wall, normal: [1], offset: 0, particles: 1}\n"
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"
    "output: {every: 1, trace_members: [0, 4]}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  vary:\n"
    "    - {path: \"particles[1].position[0]\", values: [0.25, 0.25, 0.55, "
    "0.25, 1.75]}\n"
    "    - {path: \"particles[0].position[0]\", linspace: [4.6, 6.5], count: "
    "20}\n";

/* The nonlinear oscillator with contact (examples/
 * nonlinear_oscillator_contact.yaml) on the Verlet base, with every
 * radial form the lanes have: the sextic well, an anchor of rest length 0
 * (the spring's rest-length-0 form), an inverse-square term; a container
 * that the faster members reach and an obstacle at the centre of the well,
 * besides the spheres' non-overlap.  300 steps of 0.05. */
static const char osc_text[] =
    "name: oscillator_contact_lanes\n"
    "dimension: 2\n"
    "particles:\n"
    "  - {mass: 1, radius: 1, position: [0, -1.4], momentum: [1, 0]}\n"
    "  - {mass: 1, radius: 1, position: [0, 1.4], momentum: [-1, 0]}\n"
    "potentials:\n"
    "  - {type: sextic_well, strength: 1, center: [0, 0], particles: all}\n"
    "  - {type: anchor, particles: 0, k: 0.2, point: [0, 0]}\n"
    "  - {type: inverse_square, strength: 0.05, center: [0, 0], particles: "
    "1}\n"
    "constraints:\n"
    "  - {type: non_overlap, particles: all}\n"
    "  - {type: container, radius: 2.5, center: [0, 0], particles: all}\n"
    "  - {type: obstacle, radius: 0.2, center: [0, 0], particles: all}\n"
    "integrator: {method: gvi, base: verlet, dt: 0.05, duration: 15}\n"
    "output: {every: 1, trace_members: [7, 100]}\n"
    "ensemble:\n"
    "  members: 200\n"
    "  seed: 9\n"
    "  vary:\n"
    "    - {path: \"particles[0].momentum[0]\", uniform: [0.5, 2.5]}\n"
    "    - {path: \"particles[1].momentum[0]\", uniform: [-2.5, -0.5]}\n"
    "    - {path: \"particles[1].momentum[1]\", uniform: [-0.5, 0.5]}\n";

/* Four spheres of radius 0.5 (unequal masses) in a container of radius 2
 * under gravity with a Lennard-Jones attraction (sigma = the contact
 * distance, cut at 2.5): they fall, bounce off the wall and each other,
 * and meet two or three at a time.  500 steps of 0.01. */
static const char spheres_text[] =
    "name: spheres3d_lanes\n"
    "dimension: 3\n"
    "particles:\n"
    "  - {mass: 1, radius: 0.5, position: [0, 0, -1.4], momentum: [0, 0, "
    "0]}\n"
    "  - {mass: 1, radius: 0.5, position: [1.0, 0, -0.5], momentum: [0, 0, "
    "0]}\n"
    "  - {mass: 1.5, radius: 0.5, position: [-0.5, 0.8, 0.3], momentum: [0, "
    "0, 0]}\n"
    "  - {mass: 0.7, radius: 0.5, position: [0.2, -0.6, 1.0], momentum: [0, "
    "0, 0]}\n"
    "potentials:\n"
    "  - {type: gravity, g: 9.8}\n"
    "  - {type: lennard_jones, epsilon: 0.5, sigma: 1, cutoff: 2.5}\n"
    "constraints:\n"
    "  - {type: non_overlap, particles: all}\n"
    "  - {type: container, radius: 2, center: [0, 0, 0], particles: all}\n"
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 5}\n"
    "output: {every: 1, trace_members: [2, 11]}\n"
    "ensemble:\n"
    "  members: 120\n"
    "  seed: 3\n"
    "  vary:\n"
    "    - {path: \"particles[0].momentum[0]\", uniform: [-2, 2]}\n"
    "    - {path: \"particles[1].momentum[1]\", uniform: [-2, 2]}\n"
    "    - {path: \"particles[2].momentum[2]\", uniform: [-2, 2]}\n"
    "    - {path: \"particles[3].momentum[0]\", uniform: [-2, 2]}\n"
    "    - {path: \"particles[3].momentum[2]\", uniform: [-1, 1]}\n";

/* The model's less common forms in 3-D: gravity on a subset, WCA
 * (sigma beyond the contact distance, so it pushes), an anchor with a
 * rest length (the spring's general form), non-overlap on a list of pairs,
 * a wall with a non-unit normal and an offset, a container off the origin
 * on a subset; unequal masses and radii.  300 steps of 0.01. */
static const char mixed_text[] =
    "name: mixed3d_lanes\n"
    "dimension: 3\n"
    "particles:\n"
    "  - {mass: 1, radius: 0.5, position: [0, 0, 0.2], momentum: [0, 0, "
    "0]}\n"
    "  - {mass: 2, radius: 0.4, position: [1.1, 0.2, 0.6], momentum: [0, 0, "
    "0]}\n"
    "  - {mass: 0.5, radius: 0.3, position: [-0.2, 1.0, 0.5], momentum: [0, "
    "0, 0]}\n"
    "potentials:\n"
    "  - {type: gravity, g: 9.8, particles: [0, 1]}\n"
    "  - {type: wca, epsilon: 1, sigma: 1.1}\n"
    "  - {type: anchor, particles: 2, k: 3, point: [0, 0.5, 1.5], "
    "rest_length: 0.5}\n"
    "constraints:\n"
    "  - {type: non_overlap, pairs: [[0, 1], [1, 2]]}\n"
    "  - {type: wall, normal: [1, 1, 1], offset: -1, particles: all}\n"
    "  - {type: container, radius: 2.2, center: [0.2, 0.1, 0.3], particles: "
    "[0, 1]}\n"
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"
    "output: {every: 4, trace_members: [1]}\n"
    "ensemble:\n"
    "  members: 150\n"
    "  seed: 21\n"
    "  vary:\n"
    "    - {path: \"particles[0].momentum[0]\", uniform: [-3, 3]}\n"
    "    - {path: \"particles[1].momentum[2]\", uniform: [-3, 1]}\n"
    "    - {path: \"particles[2].momentum[1]\", uniform: [-2, 2]}\n"
    "    - {path: \"particles[2].position[2]\", uniform: [0.4, 0.6]}\n";

/* A sphere in the corner of two walls (x >= 0, y >= 0), tied by a spring
 * with a rest length to a point mass on the diagonal, pulled into the
 * corner: a 12 x 12 grid of the sphere's momentum.  The members on the
 * diagonal are symmetric under x <-> y and hit both walls in the same
 * step; the others hit one wall at a time.  300 steps of 0.01. */
static const char corner_text[] =
    "name: corner_lanes\n"
    "dimension: 2\n"
    "particles:\n"
    "  - {mass: 1, radius: 0.1, position: [0.6, 0.6], momentum: [-2, -2]}\n"
    "  - {mass: 2, position: [1.6, 1.6], momentum: [0, 0]}\n"
    "potentials:\n"
    "  - {type: spring, particles: [0, 1], k: 8, rest_length: 1.2}\n"
    "  - {type: gravity, acceleration: [-1, -1]}\n"
    "constraints:\n"
    "  - {type: wall, normal: [1, 0], offset: 0, particles: all}\n"
    "  - {type: wall, normal: [0, 1], offset: 0, particles: all}\n"
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"
    "output: {every: 1, trace_members: [0, 27]}\n"
    "ensemble:\n"
    "  grid: true\n"
    "  vary:\n"
    "    - {path: \"particles[0].momentum[0]\", values: [-4, -3.5, -3, -2.5, "
    "-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5]}\n"
    "    - {path: \"particles[0].momentum[1]\", values: [-4, -3.5, -3, -2.5, "
    "-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5]}\n";

/* Newton's cradle as in examples/cradle_ensemble.yaml (pendulum
 * equalities, non-overlap, the midpoint base with gravity: SHAKE lanes)
 * with the state varied: the third and fifth balls pushed along their
 * tangent.  200 steps of 0.01. */
static const char cradle_text[] =
    "name: cradle_lanes\n"
    "dimension: 2\n"
    RC_CRADLE_PARTICLES
    "potentials:\n"
    "  - {type: gravity, g: 9.8}\n"
    RC_CRADLE_CONSTRAINTS
    "integrator: {method: gvi, base: midpoint, dt: 0.01, duration: 2}\n"
    "output: {every: 10, trace_members: [3]}\n"
    "ensemble:\n"
    "  members: 100\n"
    "  seed: 17\n"
    "  vary:\n"
    "    - {path: \"particles[2].momentum[0]\", uniform: [-0.5, 0.5]}\n"
    "    - {path: \"particles[4].momentum[0]\", uniform: [-1, 0]}\n";

/* A cradle at rest, every ball hanging and touching its neighbours
 * (four resting contacts), the first ball pushed left or right: members
 * pushed left swing away while the other four rest (held contacts, no
 * reflection: rc_k_lanes_held), members pushed right hit the row
 * (reflections: the scalar body), in the same batches. */
static const char cradle_rest_text[] =
    "name: cradle_rest_lanes\n"
    "dimension: 2\n"
    "particles:\n"
    "  - {mass: 1, radius: 0.25, position: [0.0, -1.0], momentum: [0, 0]}\n"
    "  - {mass: 1, radius: 0.25, position: [0.5, -1.0], momentum: [0, 0]}\n"
    "  - {mass: 1, radius: 0.25, position: [1.0, -1.0], momentum: [0, 0]}\n"
    "  - {mass: 1, radius: 0.25, position: [1.5, -1.0], momentum: [0, 0]}\n"
    "  - {mass: 1.5, radius: 0.25, position: [2.0, -1.0], momentum: [0, "
    "0]}\n"
    "potentials:\n"
    "  - {type: gravity, g: 9.8}\n"
    RC_CRADLE_CONSTRAINTS
    "integrator: {method: gvi, base: midpoint, dt: 0.01, duration: 1}\n"
    "output: {every: 10, trace_members: [3]}\n"
    "ensemble:\n"
    "  members: 80\n"
    "  seed: 5\n"
    "  vary:\n"
    "    - {path: \"particles[0].momentum[0]\", uniform: [-0.6, 0.4]}\n";

/* The cradle of examples/cradle_ensemble.yaml with each member's own run
 * parameters: a grid over integrator.dt (three step counts, so members
 * of one batch have different step and row counts), the masses of the
 * last and the middle ball, and a push of the third ball; 1.2 time units.
 * 72 members, 24 per dt: a block of lanes holds members of one dt.
 * The radius variant (cradle_radius) varies the fourth ball's radius
 * instead of the middle mass. */
#define CRADLE_PARAMS_TEXT(NAME, RULE3)                                       \
    "name: " NAME "\n"                                                        \
    "dimension: 2\n"                                                          \
    RC_CRADLE_PARTICLES                                                       \
    "potentials:\n"                                                           \
    "  - {type: gravity, g: 9.8}\n"                                           \
    RC_CRADLE_CONSTRAINTS                                                     \
    "integrator: {method: gvi, base: midpoint, dt: 0.01, duration: 1.2}\n"   \
    "output: {every: 10, trace_members: [3]}\n"                               \
    "ensemble:\n"                                                             \
    "  grid: true\n"                                                          \
    "  vary:\n"                                                               \
    "    - {path: integrator.dt, values: [0.02, 0.01, 0.0125]}\n"            \
    "    - {path: \"particles[4].mass\", linspace: [1, 2], count: 6}\n"      \
    "    - " RULE3 "\n"                                                       \
    "    - {path: \"particles[2].momentum[0]\", values: [0, 0.3]}\n"
static const char cradle_params_text[] = CRADLE_PARAMS_TEXT(
    "cradle_params_lanes",
    "{path: \"particles[2].mass\", values: [1, 1.5]}");
static const char cradle_bad_mass_text[] = CRADLE_PARAMS_TEXT(
    "cradle_bad_mass_lanes",
    "{path: \"particles[2].mass\", values: [1, 0, 1.5]}");
static const char cradle_radius_text[] = CRADLE_PARAMS_TEXT(
    "cradle_radius_lanes",
    "{path: \"particles[3].radius\", values: [0.25, 0.2]}");

/* The vertical cart-pendulum of examples/cart_pendulum_sweep.yaml (line
 * and rod equalities, the ground), members from Xi(beta).  300 steps. */
static const char cp_text[] =
    "name: cart_pendulum_lanes\n"
    "dimension: 2\n"
    "particles:\n"
    "  - {mass: 1.0, position: [0, 4.2], momentum: [0, 0]}\n"
    "  - {mass: 0.2, position: [0, 2.2], momentum: [0, 0]}\n"
    "potentials:\n"
    "  - {type: gravity, g: 10}\n"
    "constraints:\n"
    "  - {type: line, point: [0, 0], direction: [0, 1], particles: 0}\n"
    "  - {type: rod, particles: [0, 1], length: 2}\n"
    "  - {type: wall, normal: [0, 1], offset: 0, particles: 0}\n"
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"
    "output: {every: 5, trace_members: [4]}\n"
    "ensemble:\n"
    "  members: 100\n"
    "  map: {type: cart_pendulum_xi, length: 2, beta: 4.2}\n"
    "  vary:\n"
    "    - {path: map.beta, linspace: [3.2, 5.2]}\n";

/* A chain in 3-D with every kind of equality (pendulum, rod, and a line:
 * two planes), springs and gravity, and walls that the second particle and
 * the sliding third one reach: four multipliers per lane (SHAKE, RATTLE
 * and the 4 x 4 solves with their row exchanges in lanes), the steps with
 * a wall in the extended set by the scalar body.  Momenta only along
 * directions the equalities allow (else the start check refuses them).
 * 300 steps of 0.01. */
#define CHAIN_TEXT(P1X)                                                       \
    "name: chain3d_lanes\n"                                                   \
    "dimension: 3\n"                                                          \
    "particles:\n"                                                            \
    "  - {mass: 1, radius: 0.1, position: [0.6, 0, 2.2], momentum: [0, 0, "  \
    "0]}\n"                                                                   \
    "  - {mass: 0.5, radius: 0.1, position: [0.6, 0.6, 1.4], momentum: [0, " \
    "0, 0]}\n"                                                                \
    "  - {mass: 2, radius: 0.1, position: [1.5, 0, 0], momentum: [0, 0, "    \
    "0]}\n"                                                                   \
    "potentials:\n"                                                           \
    "  - {type: gravity, g: 9.8}\n"                                           \
    "  - {type: spring, particles: [1, 2], k: 2, rest_length: 1}\n"          \
    "constraints:\n"                                                          \
    "  - {type: pendulum, pivot: [0, 0, 3], length: 1, particles: 0}\n"      \
    "  - {type: rod, particles: [0, 1], length: 1}\n"                         \
    "  - {type: line, point: [0, 0, 0], direction: [1, 0, 0], particles: "   \
    "2}\n"                                                                    \
    "  - {type: wall, normal: [0, 0, 1], offset: 1.2, particles: 1}\n"       \
    "  - {type: wall, normal: [-1, 0, 0], offset: -2.5, particles: 2}\n"     \
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"       \
    "output: {every: 1, trace_members: [2, 9]}\n"                             \
    "ensemble:\n"                                                             \
    "  members: 90\n"                                                         \
    "  seed: 11\n"                                                            \
    "  vary:\n"                                                               \
    "    - {path: \"particles[1].momentum[0]\", uniform: " P1X "}\n"          \
    "    - {path: \"particles[2].momentum[0]\", uniform: [-3, 3]}\n"          \
    "    - {path: \"particles[2].position[0]\", uniform: [1.0, 2.0]}\n"
static const char chain_text[] = CHAIN_TEXT("[-1.5, 1.5]");
/* The chain with faster swings, for Newton capped at 4 iterations
 * (newton_cap): some members' SHAKE solves need more and fail (in the
 * scalar body, after the lanes gave the step up), the others run on. */
static const char chain_newton_text[] = CHAIN_TEXT("[-20, 20]");

/* 1-D: a particle held by a plane (n.q = 4: one multiplier, a 1 x 1
 * solve) and one hanging from it on a spring that lands on the floor. */
static const char fixed1d_text[] =
    "name: fixed1d_lanes\n"
    "dimension: 1\n"
    "particles:\n"
    "  - {mass: 1, position: [4], momentum: [0]}\n"
    "  - {mass: 1, radius: 0.2, position: [1], momentum: [0]}\n"
    "potentials:\n"
    "  - {type: gravity, g: 9.8}\n"
    "  - {type: spring, particles: [0, 1], k: 20, rest_length: 2}\n"
    "constraints:\n"
    "  - {type: plane, normal: [1], offset: 4, particles: 0}\n"
    "  - {type: wall, normal: [1], offset: 0, particles: 1}\n"
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"
    "output: {every: 1, trace_members: [3]}\n"
    "ensemble:\n"
    "  members: 40\n"
    "  seed: 4\n"
    "  vary:\n"
    "    - {path: \"particles[1].momentum[0]\", uniform: [-9, -3]}\n"
    "    - {path: \"particles[1].position[0]\", uniform: [0.3, 3]}\n";

typedef struct lane_case {
    const char *name, *text;
    long members;
    int lanes;        /* 1: rc_k_lanes_ok admits the model */
    int contacts;     /* what the traces must show: 1 single-term
                         reflections and steps with two or more terms, 2
                         single-term reflections and resting steps, 3
                         (equality models) steps with no term in the
                         extended set (the lanes' SHAKE and RATTLE) and
                         steps with one or more (the scalar body's) */
    long traced[2];
    int ntraced;
    long default_batch; /* the batch size the default options give; 0:
                           64 (a varied dt in lanes with members enough
                           for a batch per thread: 64 per dt value) */
    int held;           /* 1: some lane-steps with terms in the extended
                           set are stepped in lanes (rc_k_lanes_held) and
                           some by the scalar body */
} lane_case;

/* ------------------------------------------------------------------ */
/* Helpers.                                                            */

/* Run into g_dir/<name> with engine `eng`. */
static int run_lanes_engine(const char *what, const rc_scenario *scn,
                            const char *name, int eng, int threads,
                            long batch, rc_ensemble_result *res, char *dir,
                            size_t size)
{
    rc_ensemble_options eo;
    rc_error err;
    char buf[3000];
    rc_status st;
    snprintf(dir, size, "%s/%s", g_dir, name);
    memset(&eo, 0, sizeof eo);
    eo.out_dir = dir;
    eo.threads = threads;
    eo.batch = batch;
    eo.per_member = eng == ENG_MEMBER;
    eo.scalar_batch = eng == ENG_SCALAR;
    memset(res, 0, sizeof *res);
    st = rc_ensemble_run(scn, &eo, res, &err);
    RC_CHECK(st == RC_OK, "%s (%s, batch %ld, %d threads): "
             "rc_ensemble_run: %s", what, eng_name[eng], batch, threads,
             rc_error_format(&err, buf, sizeof buf));
    return st == RC_OK ? 0 : -1;
}

/* Copy one line (without its newline) of at most len bytes into out. */
static void copy_line(const char *s, long len, char *out, size_t size)
{
    size_t n = (size_t)len < size - 1 ? (size_t)len : size - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

/* 1 when dir1/name and dir2/name hold the same bytes.  Otherwise 0, and
 * the first line where they differ (1-based; 0 when a file is missing)
 * with both versions of it, "(end of file)" for a file that ended. */
static int same_bytes(const char *d1, const char *d2, const char *name,
                      long *line, char *got, char *want, size_t size)
{
    char a[1400], b[1400];
    long na = -1, nb = -1, ia = 0, ib = 0;
    char *x, *y;
    int same;
    snprintf(a, sizeof a, "%s/%s", d1, name);
    snprintf(b, sizeof b, "%s/%s", d2, name);
    x = slurp_n(a, &na);
    y = slurp_n(b, &nb);
    *line = 0;
    snprintf(got, size, "%s", x ? "" : "(missing)");
    snprintf(want, size, "%s", y ? "" : "(missing)");
    same = x && y && na == nb && memcmp(x, y, (size_t)na) == 0;
    if (!same && x && y) {
        for (*line = 1;; ++*line) {
            long ea = ia, eb = ib;
            while (ea < na && x[ea] != '\n')
                ++ea;
            while (eb < nb && y[eb] != '\n')
                ++eb;
            if (ia >= na || ib >= nb || ea - ia != eb - ib ||
                memcmp(x + ia, y + ib, (size_t)(ea - ia)) != 0 ||
                (ea < na) != (eb < nb)) {
                if (ia < na)
                    copy_line(x + ia, ea - ia, got, size);
                else
                    snprintf(got, size, "(end of file)");
                if (ib < nb)
                    copy_line(y + ib, eb - ib, want, size);
                else
                    snprintf(want, size, "(end of file)");
                break;
            }
            ia = ea + 1;
            ib = eb + 1;
        }
    }
    free(x);
    free(y);
    return same;
}

/* Check that dir/name is ref/name byte for byte; on failure, the first
 * differing line. */
static void check_same(const char *what, const char *dir, const char *ref,
                       const char *name)
{
    char got[600], want[600];
    long line;
    int same = same_bytes(dir, ref, name, &line, got, want, sizeof got);
    RC_CHECK(same, "%s: %s differs from the per-member engine's (%s vs %s)"
             " first at line %ld:\n    got:  %s\n    want: %s", what, name,
             dir, ref, line, got, want);
}

/* Column `col` of members.csv in dir, one value per row into out (at most
 * max; text of the field, at most 31 characters, into txt[r] when txt is
 * not NULL).  Returns the rows read, -1 if the file or column is missing. */
static long csv_column(const char *dir, const char *col, double *out,
                       char (*txt)[32], long max)
{
    char file[1400], *text, *line, *save = NULL, *fields[64];
    int ncol, c, target = -1;
    long r = 0;
    snprintf(file, sizeof file, "%s/members.csv", dir);
    text = slurp(file);
    if (!text)
        return -1;
    line = strtok_r(text, "\n", &save);
    ncol = line ? split(line, fields, 64) : 0;
    for (c = 0; c < ncol && c < 64; ++c)
        if (!strcmp(fields[c], col))
            target = c;
    if (target < 0) {
        free(text);
        return -1;
    }
    while ((line = strtok_r(NULL, "\n", &save)) != NULL && r < max) {
        if (split(line, fields, 64) != ncol) {
            out[r] = NAN;
            if (txt)
                snprintf(txt[r], 32, "(bad row)");
        } else {
            out[r] = strtod(fields[target], NULL);
            if (txt)
                snprintf(txt[r], 32, "%s", fields[target]);
        }
        ++r;
    }
    free(text);
    return r;
}

/* Steps in the traces of `dir` with exactly one term in the extended set
 * and one reflection (what a lane reflects), with two or more terms, and
 * with one term and no reflection (resting: held by the step); the last
 * two are the scalar body's; and with no term at all (free).  Returns the
 * rows read, -1 on a missing trace or column. */
static long trace_kinds(const char *dir, const long *traced, int ntraced,
                        long *single, long *multi, long *rest, long *free_)
{
    long rows = 0;
    int t;
    *single = *multi = *rest = *free_ = 0;
    for (t = 0; t < ntraced; ++t) {
        char file[1400], *text, *line, *save = NULL, *fields[32];
        int ncol, c, ca = -1, cr = -1;
        snprintf(file, sizeof file, "%s/traces/member_%ld.csv", dir,
                 traced[t]);
        text = slurp(file);
        if (!text)
            return -1;
        line = strtok_r(text, "\n", &save);
        ncol = line ? split(line, fields, 32) : 0;
        for (c = 0; c < ncol && c < 32; ++c) {
            if (!strcmp(fields[c], "active_contacts"))
                ca = c;
            if (!strcmp(fields[c], "reflections"))
                cr = c;
        }
        if (ca < 0 || cr < 0) {
            free(text);
            return -1;
        }
        while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
            long a, r;
            if (split(line, fields, 32) != ncol)
                continue;
            a = strtol(fields[ca], NULL, 10);
            r = strtol(fields[cr], NULL, 10);
            *single += a == 1 && r == 1;
            *multi += a >= 2;
            *rest += a == 1 && r == 0;
            *free_ += a == 0;
            ++rows;
        }
        free(text);
    }
    return rows;
}

/* ------------------------------------------------------------------ */
/* 1. Engines agree.                                                   */

/* Case cs, with the --set overrides `sets` (tag names them in paths and
 * messages; lanes: 1 when the model runs in lanes with them). */
static void engines_agree_set(const lane_case *base, const char *tag,
                              const char *const *sets, int nsets, int lanes,
                              int contacts)
{
    long batches[4] = {1, 3, 64, 0};
    char ref[512], dir[512], name[128], what[200];
    rc_ensemble_result rr, res;
    lane_case c = *base, *cs = &c;
    char label[48];
    rc_scenario *scn;
    snprintf(label, sizeof label, "%s%s%s", base->name, tag[0] ? "_" : "",
             tag);
    c.name = label;
    c.lanes = lanes;
    c.contacts = contacts;
    scn = load_text(cs->name, cs->text, sets, nsets);
    cJSON *root, *eng;
    int e, th, bi, t;
    double held0 = -1.0;
    batches[3] = cs->members + 1;
    if (!scn)
        return;
    snprintf(name, sizeof name, "%s_member", cs->name);
    if (run_lanes_engine(cs->name, scn, name, ENG_MEMBER, 2, 0, &rr, ref,
                   sizeof ref)) {
        rc_scenario_free(scn);
        return;
    }
    RC_CHECK(rr.members == cs->members && rr.ok == cs->members &&
                 !rr.batched,
             "%s per-member: %ld ok of %ld (want %ld), batched %d; want all "
             "ok, not batched", cs->name, rr.ok, rr.members, cs->members,
             rr.batched);
    if (cs->contacts == 3) {
        long single = 0, multi = 0, rest = 0, free_ = 0;
        long rows = trace_kinds(ref, cs->traced, cs->ntraced, &single,
                                &multi, &rest, &free_);
        RC_CHECK(rows > 0 && free_ > 0 && single + multi + rest > 0,
                 "%s: the traced members have %ld steps with no term in "
                 "the extended set and %ld with one or more in %ld rows; "
                 "the case must exercise both the lanes (the first) and "
                 "the scalar body (the second)", cs->name, free_,
                 single + multi + rest, rows);
    } else if (cs->contacts) {
        long single = 0, multi = 0, rest = 0, free_ = 0;
        long rows = trace_kinds(ref, cs->traced, cs->ntraced, &single,
                                &multi, &rest, &free_);
        long other = cs->contacts == 1 ? multi : rest;
        RC_CHECK(rows > 0 && single > 0 && other > 0,
                 "%s: the traced members have %ld steps with one term "
                 "reflected, %ld with two or more terms and %ld resting in "
                 "%ld rows; the case must exercise both the lanes (the "
                 "first) and the scalar body (the %s)", cs->name, single,
                 multi, rest, rows,
                 cs->contacts == 1 ? "second" : "third");
    }
    for (e = ENG_LANES; e <= ENG_SCALAR; ++e)
        for (th = 1; th <= 2; ++th)
            for (bi = 0; bi < 4; ++bi) {
                long b = batches[bi];
#ifdef RICOCHET_SANITIZE_BUILD
                /* under ASan + UBSan (some 15 times slower) the grid of
                 * options shrinks to 2 threads and batches of 3 (partial
                 * lanes) and of all members: every code path still runs
                 * under the sanitizers, and the Release build checks the
                 * bits over the whole grid */
                if (th == 1 || bi == 0 || bi == 2)
                    continue;
#endif
                const char *want_step =
                    e == ENG_LANES && cs->lanes ? "lanes" : "scalar";
                snprintf(what, sizeof what, "%s, %s engine, batch %ld, %d "
                         "thread%s", cs->name, eng_name[e], b, th,
                         th > 1 ? "s" : "");
                snprintf(name, sizeof name, "%s_%s_b%ld_t%d", cs->name,
                         e == ENG_LANES ? "lanes" : "scalar", b, th);
                if (run_lanes_engine(cs->name, scn, name, e, th, b, &res, dir,
                               sizeof dir))
                    continue;
                RC_CHECK(res.batched && res.ok == cs->members &&
                             res.rerun == cs->ntraced,
                         "%s: batched %d, %ld ok of %ld, %ld re-run alone; "
                         "want batched, all ok, %d (the traced members)",
                         what, res.batched, res.ok, cs->members, res.rerun,
                         cs->ntraced);
                root = json_file(dir, "ensemble.json");
                eng = cJSON_GetObjectItemCaseSensitive(root, "engine");
                RC_CHECK(root && !strcmp(str(eng, "name"), "batch") &&
                             !strcmp(str(eng, "step"), want_step) &&
                             num(eng, "batch_size") == (double)b,
                         "%s: ensemble.json engine '%s', step '%s', "
                         "batch_size %g; want batch, %s, %ld", what,
                         str(eng, "name"), str(eng, "step"),
                         num(eng, "batch_size"), want_step, b);
                if (e == ENG_LANES && cs->lanes &&
                    (cs->contacts == 3 || cs->held)) {
                    /* which steps the lanes take is each member's own
                     * (its bits are the scalar body's), so the counts
                     * are the same for every batch size and thread
                     * count */
                    cJSON *ls =
                        cJSON_GetObjectItemCaseSensitive(eng, "lane_steps");
                    double held = num(ls, "held"), sb = num(ls, "scalar_body");
                    RC_CHECK(ls && held >= 0.0 && sb >= 0.0 &&
                                 (!cs->held || (held > 0.0 && sb > 0.0)),
                             "%s: engine.lane_steps held %g, scalar_body "
                             "%g; want %s", what, held, sb,
                             cs->held ? "both > 0 (held contacts in lanes, "
                                        "reflections by the scalar body)"
                                      : "both present");
                    if (held0 < 0.0)
                        held0 = held;
                    RC_CHECK(held == held0, "%s: lane_steps.held %g, %g in "
                             "the first lanes run; want the same", what,
                             held, held0);
                }
                cJSON_Delete(root);
                check_same(what, dir, ref, "members.csv");
                for (t = 0; t < cs->ntraced; ++t) {
                    char tn[64];
                    snprintf(tn, sizeof tn, "traces/member_%ld.csv",
                             cs->traced[t]);
                    check_same(what, dir, ref, tn);
                }
                if (exists(ref, "groups.csv"))
                    check_same(what, dir, ref, "groups.csv");
            }
    /* the default options (batch 0 = 64, threads 0 = OpenMP's): the
     * lanes wherever the model allows them */
    snprintf(what, sizeof what, "%s, default options", cs->name);
    snprintf(name, sizeof name, "%s_default", cs->name);
    if (run_lanes_engine(cs->name, scn, name, ENG_LANES, 0, 0, &res, dir,
                   sizeof dir) == 0) {
        const char *want_step = cs->lanes ? "lanes" : "scalar";
        long want_b = cs->default_batch > 0 ? cs->default_batch : 64;
        root = json_file(dir, "ensemble.json");
        eng = cJSON_GetObjectItemCaseSensitive(root, "engine");
        RC_CHECK(res.batched && res.ok == cs->members &&
                     !strcmp(str(eng, "step"), want_step) &&
                     num(eng, "batch_size") == (double)want_b,
                 "%s: batched %d, %ld ok of %ld, step '%s', batch_size %g; "
                 "want batched, all ok, %s, %ld", what, res.batched, res.ok,
                 cs->members, str(eng, "step"), num(eng, "batch_size"),
                 want_step, want_b);
        cJSON_Delete(root);
        check_same(what, dir, ref, "members.csv");
    }
    rc_scenario_free(scn);
}

static void engines_agree(const lane_case *cs)
{
    engines_agree_set(cs, "", NULL, 0, cs->lanes, cs->contacts);
}

/* The oscillator case under the integrator's other options: the ones
 * that send every reflecting lane to the scalar body (Moreau, the
 * modified energy, seed-exact mode), given tolerances instead of the
 * automatic ones, fewer than ten rows (no drift windows), and the
 * midpoint base (not in lanes: the scalar step). */
static void oscillator_variants(const lane_case *osc)
{
    static const struct {
        const char *tag, *set[2];
        int nsets, lanes, contacts; /* contacts 0: traces too sparse */
    } v[] = {{"moreau", {"integrator.reflection=moreau", NULL}, 1, 1, 1},
             {"modified", {"integrator.energy=modified", NULL}, 1, 1, 1},
             {"seed_exact", {"integrator.seed_exact=true", NULL}, 1, 1, 1},
             {"eps", {"integrator.eps_g=1e-6", "integrator.eps_v=1e-5"}, 2,
              1, 1},
             {"rows4", {"output.every=100", NULL}, 1, 1, 0},
             {"midpoint", {"integrator.base=midpoint", NULL}, 1, 0, 1}};
    int i;
    for (i = 0; i < (int)(sizeof v / sizeof v[0]); ++i)
        engines_agree_set(osc, v[i].tag, v[i].set, v[i].nsets, v[i].lanes,
                          v[i].contacts);
}

/* The form a GPU thread runs (rc_k_lanes_fast_one: each lane's stages
 * alone, the single reflection only where the lane has one), through the
 * CPU launcher under its developer switch: the same members.csv as the
 * per-member engine.  This checks the GPU lane kernels' per-thread logic
 * without a GPU (their launch plumbing needs one: test_gpu_ensemble). */
static void gpu_thread_form(const lane_case *cs)
{
    char ref[512], dir[512], name[128], what[200];
    rc_ensemble_result rr, res;
    rc_scenario *scn = load_text(cs->name, cs->text, NULL, 0);
    if (!scn)
        return;
    snprintf(what, sizeof what, "%s, lanes one by one (the GPU thread's "
             "form)", cs->name);
    snprintf(name, sizeof name, "%s_member_ref1", cs->name);
    if (run_lanes_engine(cs->name, scn, name, ENG_MEMBER, 2, 0, &rr, ref,
                   sizeof ref) == 0) {
        snprintf(name, sizeof name, "%s_one_by_one", cs->name);
        setenv("RICOCHET_LANES_ONE_BY_ONE", "1", 1);
        if (run_lanes_engine(what, scn, name, ENG_LANES, 2, 64, &res, dir,
                       sizeof dir) == 0) {
            RC_CHECK(res.batched && res.ok == cs->members,
                     "%s: batched %d, %ld ok of %ld", what, res.batched,
                     res.ok, cs->members);
            check_same(what, dir, ref, "members.csv");
        }
        unsetenv("RICOCHET_LANES_ONE_BY_ONE");
    }
    rc_scenario_free(scn);
}

/* The pogo case must mix members that land and members that never do. */
static void pogo_mixes(void)
{
    enum { M = 200 };
    static double impacts[M];
    char dir[512];
    rc_ensemble_result res;
    rc_scenario *scn = load_text("pogo mix", pogo_text, NULL, 0);
    long n, k, none = 0, some = 0, b, mixed = 0;
    if (!scn)
        return;
    if (run_lanes_engine("pogo mix", scn, "pogo_mix", ENG_LANES, 2, 64, &res, dir,
                   sizeof dir)) {
        rc_scenario_free(scn);
        return;
    }
    rc_scenario_free(scn);
    n = csv_column(dir, "impacts", impacts, NULL, M);
    for (k = 0; k < n; ++k) {
        none += impacts[k] == 0.0;
        some += impacts[k] > 0.0;
    }
    /* batches of 3: how many hold both kinds */
    for (b = 0; b + 3 <= n; b += 3) {
        int z = 0, p = 0;
        for (k = b; k < b + 3; ++k) {
            z |= impacts[k] == 0.0;
            p |= impacts[k] > 0.0;
        }
        mixed += z && p;
    }
    RC_CHECK(n == M && none >= 20 && some >= 20 && mixed >= 5,
             "pogo: %ld rows, %ld members never land and %ld do, %ld "
             "batches of 3 hold both; want %d rows, at least 20 of each and "
             "5 mixed batches", n, none, some, mixed, M);
}

/* Lanes whose SHAKE solve does not converge within newton_max_iter (the
 * chain with faster swings, the cap at 4): such a lane's step goes to the
 * scalar body, which fails its member mid-run (position Newton), and the
 * batch's other lanes go on.  The per-member engine's run must hold both
 * ok members and members failed mid-run (else the case tests no mix);
 * the lane engine at batches of 3 and 64 on 1 and 2 threads writes its
 * members.csv and first_failures. */
static void newton_cap(void)
{
    enum { M = 90 };
    static const char *const sets[] = {"integrator.newton_max_iter=4"};
    static const long batches[2] = {3, 64};
    static double fstep[M], dummy[M];
    static char status[M][32];
    char ref[512], dir[512], name[128], what[200];
    rc_ensemble_result rr, res;
    cJSON *root;
    char *rfails = NULL;
    long k, nok = 0, nmid = 0;
    int th, bi;
    rc_scenario *scn = load_text("chain_newton", chain_newton_text, sets, 1);
    if (!scn)
        return;
    if (run_lanes_engine("chain_newton", scn, "chain_newton_member", ENG_MEMBER, 2,
                   0, &rr, ref, sizeof ref)) {
        rc_scenario_free(scn);
        return;
    }
    if (csv_column(ref, "status", dummy, status, M) != M ||
        csv_column(ref, "fail_step", fstep, NULL, M) != M) {
        RC_CHECK(0, "chain_newton: members.csv of the per-member engine has "
                 "not %d rows with status and fail_step", M);
        rc_scenario_free(scn);
        return;
    }
    for (k = 0; k < M; ++k) {
        nok += !strcmp(status[k], "ok");
        nmid += !strcmp(status[k], "failed") && fstep[k] > 0.0;
    }
    /* measured: 81 ok, 9 failed mid-run; the bounds only ask for a mix */
    RC_CHECK(nok >= 30 && nmid >= 3 && nok + nmid == M,
             "chain_newton: %ld members ok and %ld failed mid-run of %d; "
             "want at least 30 and 3, and no other status", nok, nmid, M);
    root = json_file(ref, "ensemble.json");
    rfails = cJSON_PrintUnformatted(
        cJSON_GetObjectItemCaseSensitive(root, "first_failures"));
    cJSON_Delete(root);
    RC_CHECK(rfails != NULL, "chain_newton: no first_failures in %s", ref);
    for (th = 1; th <= 2; ++th)
        for (bi = 0; bi < 2; ++bi) {
            char *fails;
            cJSON *eng;
#ifdef RICOCHET_SANITIZE_BUILD
            if (th == 1) /* the bits over the whole grid: Release */
                continue;
#endif
            snprintf(what, sizeof what, "chain_newton, lanes, batch %ld, %d "
                     "thread%s", batches[bi], th, th > 1 ? "s" : "");
            snprintf(name, sizeof name, "chain_newton_b%ld_t%d", batches[bi],
                     th);
            if (run_lanes_engine(what, scn, name, ENG_LANES, th, batches[bi], &res,
                           dir, sizeof dir))
                continue;
            root = json_file(dir, "ensemble.json");
            eng = cJSON_GetObjectItemCaseSensitive(root, "engine");
            fails = cJSON_PrintUnformatted(
                cJSON_GetObjectItemCaseSensitive(root, "first_failures"));
            RC_CHECK(res.batched && res.ok == nok &&
                         !strcmp(str(eng, "step"), "lanes"),
                     "%s: batched %d, %ld ok (want %ld), step '%s' (want "
                     "lanes)", what, res.batched, res.ok, nok,
                     str(eng, "step"));
            RC_CHECK(fails && rfails && !strcmp(fails, rfails),
                     "%s: first_failures differ from the per-member "
                     "engine's:\n    got:  %s\n    want: %s", what,
                     fails ? fails : "(none)", rfails ? rfails : "(none)");
            free(fails);
            cJSON_Delete(root);
            check_same(what, dir, ref, "members.csv");
        }
    free(rfails);
    rc_scenario_free(scn);
}

/* Members whose run parameters do not load (a mass of 0 on a third of the
 * cradle_params grid): the batch engine leaves them to the per-member
 * engine, which words them invalid (the loader checks the first and
 * last members, so the middle value is the bad one); the others run in lanes (grouped by
 * dt) and in the scalar body on 1 and 2 threads, and members.csv is the
 * per-member engine's. */
static void cradle_bad_params(void)
{
    char ref[512], dir[512], name[128], what[200];
    rc_ensemble_result rr, res;
    rc_scenario *scn = load_text("cradle_bad_mass", cradle_bad_mass_text,
                                 NULL, 0);
    int e, th;
    if (!scn)
        return;
    if (run_lanes_engine("cradle_bad_mass", scn, "cradle_bad_mass_member",
                   ENG_MEMBER, 2, 0, &rr, ref, sizeof ref)) {
        rc_scenario_free(scn);
        return;
    }
    RC_CHECK(rr.ok == 72 && rr.invalid == 36 && !rr.batched,
             "cradle_bad_mass per-member: %ld ok, %ld invalid, batched %d; "
             "want 72, 36 (the members of mass 0), 0", rr.ok, rr.invalid,
             rr.batched);
    for (e = ENG_LANES; e <= ENG_SCALAR; ++e)
        for (th = 1; th <= 2; ++th) {
            cJSON *root, *eng;
            snprintf(what, sizeof what, "cradle_bad_mass, %s engine, %d "
                     "thread%s", eng_name[e], th, th > 1 ? "s" : "");
            snprintf(name, sizeof name, "cradle_bad_mass_%d_t%d", e, th);
            if (run_lanes_engine(what, scn, name, e, th, 0, &res, dir, sizeof dir))
                continue;
            root = json_file(dir, "ensemble.json");
            eng = cJSON_GetObjectItemCaseSensitive(root, "engine");
            RC_CHECK(res.batched && res.ok == 72 && res.invalid == 36 &&
                         res.rerun == 37 &&
                         !strcmp(str(eng, "step"),
                                 e == ENG_LANES ? "lanes" : "scalar"),
                     "%s: batched %d, %ld ok, %ld invalid, %ld re-run alone, "
                     "step '%s'; want 1, 72, 36, 37 (the invalid and the "
                     "traced member), %s", what, res.batched, res.ok,
                     res.invalid, res.rerun, str(eng, "step"),
                     e == ENG_LANES ? "lanes" : "scalar");
            cJSON_Delete(root);
            check_same(what, dir, ref, "members.csv");
        }
    rc_scenario_free(scn);
}

/* ------------------------------------------------------------------ */
/* 2. Failure isolation.                                               */

/* 27 members, 9 of them bad, spread through the list (all but one batch
 * of 3 holds one):
 * below the floor (invalid: 2, 11, 23, 26), kinetic energy 1e400/2 at
 * the start (failed at step 0: 5, 20), and energy E0 within 3e-4 of
 * DBL_MAX that the step's energy error carries over it after some steps
 * (failed mid-run, inside the lanes: 8, 14, 24).  Member 17's particle
 * falls at 1.9e154 and reflects off the floor with huge numbers, and is
 * ok.  300 steps of 0.01, a row every step. */
static const char fail_text[] =
    "name: pogo_fail_lanes\n"
    RC_POGO_MODEL
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"
    "output: {every: 1}\n"
    "ensemble:\n"
    "  members: 27\n"
    "  vary:\n"
    "    - {path: \"particles[1].position[0]\", values: [1, 0.9, -0.5, 1.1, "
    "0.8, 0.9, 1, 1.2, 1, 0.7, 1.3, -2, 1, 0.6, 1, 1.05, 0.95, 1, 1.4, "
    "0.5, 1, 0.85, 1.15, -0.001, 1, 0.9, -0.3]}\n"
    "    - {path: \"particles[0].momentum[0]\", values: [0, 0, 0, 0.5, 0, "
    "1e200, -1, 0, 1.896e154, 0, 0, 0, 0, 0.2, 1.8961e154, 0, 0, 0, 0, 0, "
    "0, 0.1, 0, 0, 1.89595e154, 0, 0]}\n"
    "    - {path: \"particles[1].momentum[0]\", values: [0, 0, 0, 0, 0, 0, "
    "0, 0.3, 0, 0, -0.5, 0, 0, 0, 0, 0, 1, -1.896e154, 0, 0, 1e200, 0, 0, "
    "0, 0, 0, 0]}\n";

/* The same pogo stick with a faint sextic well on the upper mass (its
 * effect at the usual heights is below 1e-7 of the energy): started at
 * 1e45 or thereabouts, that mass has a finite energy and gradient, but
 * the first step throws it where the gradient overflows, so the step's
 * state is non-finite (failed at step 1: 1, 5, 9, 14) — in the lanes,
 * the kick sends the lane to the scalar body, which fails it; rows every
 * 7 steps, so no energy check sees it first.  Also below the floor (3,
 * 12) and 1e400/2 of kinetic energy (7).  18 members, 7 bad. */
static const char well_fail_text[] =
    "name: pogo_well_fail_lanes\n"
    "dimension: 1\n"
    "particles:\n"
    "  - {mass: 1, position: [6], momentum: [0]}\n"
    "  - {mass: 1, position: [1], momentum: [0]}\n"
    "potentials:\n"
    "  - {type: gravity, g: 9.8}\n"
    "  - {type: spring, particles: [0, 1], k: 10, rest_length: 5}\n"
    "  - {type: sextic_well, strength: 1e-12, center: [0], particles: 0}\n"
    "constraints:\n"
    "  - {type: wall, normal: [1], offset: 0, particles: 1}\n"
    "integrator: {method: gvi, base: verlet, dt: 0.01, duration: 3}\n"
    "output: {every: 7}\n"
    "ensemble:\n"
    "  members: 18\n"
    "  vary:\n"
    "    - {path: \"particles[0].position[0]\", values: [6, 1e45, 6, 6, 6, "
    "3e44, 6, 6, 6, 5e44, 6, 6, 6, 6, 2e45, 6, 6, 6]}\n"
    "    - {path: \"particles[1].position[0]\", values: [1, 1, 0.9, -0.5, "
    "1.1, 1, 0.8, 1, 1.2, 1, 0.7, 1.3, -0.2, 0.6, 1, 1.05, 0.95, 1.4]}\n"
    "    - {path: \"particles[0].momentum[0]\", values: [0, 0, 0.5, 0, -1, "
    "0, 0, 1e200, 0.3, 0, 0, -0.4, 0, 0, 0, 0.2, 0, 0]}\n";

/* Ensemble `text` of M members (at most 32) whose statuses are `want`:
 * 'o' ok with all 300 steps, 'i' invalid, 'f' failed at step 0, 'm'
 * failed after some steps (mid-run: inside the lane loop). */
static void failure_isolation(const char *label, const char *text, int M,
                              const char *want)
{
    enum { MAXM = 32 };
    static const struct {
        int threads;
        long batch;
    } runs[] = {{1, 0}, {2, 3}, {1, 5}, {2, 64}, {1, 1}};
    char ref[512], dir[512], name[96], what[200];
    char status[MAXM][32], rstatus[MAXM][32];
    double steps[MAXM], fstep[MAXM];
    rc_ensemble_result rr, res;
    rc_scenario *scn;
    cJSON *rroot, *root;
    char *rfails = NULL;
    long k, nok = 0, ninv = 0, nfail = 0;
    int e, r;
    /* the table is the test's own */
    if (M > MAXM || (int)strlen(want) != M) {
        RC_CHECK(0, "%s: the expected statuses are malformed", label);
        return;
    }
    for (k = 0; k < M; ++k) {
        nok += want[k] == 'o';
        ninv += want[k] == 'i';
        nfail += want[k] == 'f' || want[k] == 'm';
    }
    scn = load_text(label, text, NULL, 0);
    if (!scn)
        return;
    snprintf(name, sizeof name, "%s_member", label);
    if (run_lanes_engine(label, scn, name, ENG_MEMBER, 1, 0, &rr, ref,
                   sizeof ref)) {
        rc_scenario_free(scn);
        return;
    }
    RC_CHECK(!rr.batched && rr.ok == nok && rr.invalid == ninv &&
                 rr.failed == nfail,
             "%s per-member: %ld ok, %ld invalid, %ld failed; want %ld, %ld, "
             "%ld", label, rr.ok, rr.invalid, rr.failed, nok, ninv, nfail);
    if (csv_column(ref, "status", steps, rstatus, M) != M) {
        RC_CHECK(0, "%s: members.csv of the per-member engine has not %d "
                 "rows", label, M);
        rc_scenario_free(scn);
        return;
    }
    rroot = json_file(ref, "ensemble.json");
    rfails = cJSON_PrintUnformatted(
        cJSON_GetObjectItemCaseSensitive(rroot, "first_failures"));
    cJSON_Delete(rroot);
    RC_CHECK(rfails != NULL, "%s: no first_failures in %s", label, ref);
    for (e = ENG_LANES; e <= ENG_SCALAR; ++e)
        for (r = 0; r < (int)(sizeof runs / sizeof runs[0]); ++r) {
            /* batch 0 here: all members in one batch */
            long b = runs[r].batch > 0 ? runs[r].batch : M;
            int th = runs[r].threads, good = 1, mid = 1;
            const char *want_step = e == ENG_LANES ? "lanes" : "scalar";
            char *fails = NULL;
            cJSON *eng;
            snprintf(what, sizeof what, "%s, %s engine, batch %ld, %d "
                     "thread%s", label, eng_name[e], b, th,
                     th > 1 ? "s" : "");
            snprintf(name, sizeof name, "%s_%s_b%ld_t%d", label,
                     e == ENG_LANES ? "lanes" : "scalar", b, th);
            if (run_lanes_engine(label, scn, name, e, th, b, &res, dir,
                           sizeof dir))
                continue;
            RC_CHECK(res.batched && res.ok == nok && res.invalid == ninv &&
                         res.failed == nfail && res.rerun == ninv + nfail,
                     "%s: batched %d, %ld ok, %ld invalid, %ld failed, %ld "
                     "re-run; want 1, %ld, %ld, %ld, %ld", what, res.batched,
                     res.ok, res.invalid, res.failed, res.rerun, nok, ninv,
                     nfail, ninv + nfail);
            root = json_file(dir, "ensemble.json");
            eng = cJSON_GetObjectItemCaseSensitive(root, "engine");
            RC_CHECK(!strcmp(str(eng, "step"), want_step),
                     "%s: ensemble.json engine.step '%s', want %s", what,
                     str(eng, "step"), want_step);
            fails = cJSON_PrintUnformatted(
                cJSON_GetObjectItemCaseSensitive(root, "first_failures"));
            RC_CHECK(fails && rfails && !strcmp(fails, rfails),
                     "%s: first_failures differ from the per-member "
                     "engine's:\n    got:  %s\n    want: %s", what,
                     fails ? fails : "(none)", rfails ? rfails : "(none)");
            free(fails);
            cJSON_Delete(root);
            if (csv_column(dir, "status", fstep, status, M) != M ||
                csv_column(dir, "steps", steps, NULL, M) != M ||
                csv_column(dir, "fail_step", fstep, NULL, M) != M) {
                RC_CHECK(0, "%s: members.csv has not %d rows with status, "
                         "steps and fail_step", what, M);
                continue;
            }
            for (k = 0; k < M; ++k) {
                const char *ws = want[k] == 'o'   ? "ok"
                                 : want[k] == 'i' ? "invalid"
                                                  : "failed";
                int row_ok = !strcmp(status[k], ws) &&
                             !strcmp(status[k], rstatus[k]);
                if (want[k] == 'o')
                    row_ok &= steps[k] == 300.0 && fstep[k] == -1.0;
                if (want[k] == 'f')
                    row_ok &= fstep[k] == 0.0;
                if (want[k] == 'm')
                    mid &= fstep[k] > 0.0 && fstep[k] < 300.0;
                if (!row_ok)
                    RC_CHECK(0, "%s: member %ld is '%s' (steps %g, fail_step "
                             "%g), the per-member engine says '%s'; want "
                             "'%s'%s", what, k, status[k], steps[k],
                             fstep[k], rstatus[k], ws,
                             want[k] == 'o' ? " with 300 steps" : "");
                good &= row_ok;
            }
            RC_CHECK(good, "%s: statuses differ (above)", what);
            RC_CHECK(mid, "%s: the members marked 'm' in %s should fail "
                     "mid-run", what, want);
            check_same(what, dir, ref, "members.csv");
        }
    free(rfails);
    rc_scenario_free(scn);
}

int main(void)
{
    static const lane_case cases[] = {
        {"pogo", pogo_text, 200, 1, 0, {5, 0}, 1, 0, 0},
        {"pogo_rest", rest_text, 100, 1, 2, {0, 4}, 2, 0, 0},
        {"oscillator_contact", osc_text, 200, 1, 1, {7, 100}, 2, 0, 0},
        {"spheres3d", spheres_text, 120, 1, 1, {2, 11}, 2, 0, 0},
        {"mixed3d", mixed_text, 150, 1, 0, {1, 0}, 1, 0, 0},
        {"corner", corner_text, 144, 1, 1, {0, 27}, 2, 0, 0},
        {"cradle", cradle_text, 100, 1, 3, {3, 0}, 1, 0, 1},
        {"cradle_rest", cradle_rest_text, 80, 1, 0, {3, 0}, 1, 0, 1},
        {"cradle_params", cradle_params_text, 72, 1, 3, {3, 0}, 1, 0, 1},
        {"cradle_radius", cradle_radius_text, 72, 0, 3, {3, 0}, 1, 0, 0},
        {"cart_pendulum", cp_text, 100, 1, 0, {4, 0}, 1, 0, 0},
        {"chain3d", chain_text, 90, 1, 3, {2, 9}, 2, 0, 0},
        {"fixed1d", fixed1d_text, 40, 1, 3, {3, 0}, 1, 0, 0}};
    int c;
    if (cli_test_start("test_ensemble_lanes"))
        return 1;
    for (c = 0; c < (int)(sizeof cases / sizeof cases[0]); ++c)
        engines_agree(&cases[c]);
    for (c = 0; c < (int)(sizeof cases / sizeof cases[0]); ++c)
        if (cases[c].text == osc_text)
            oscillator_variants(&cases[c]);
    for (c = 0; c < (int)(sizeof cases / sizeof cases[0]); ++c)
        if (cases[c].lanes)
            gpu_thread_form(&cases[c]);
    pogo_mixes();
    newton_cap();
    cradle_bad_params();
    /* 'f' step 0, 'm' mid-run, 'i' invalid, 'o' ok */
    failure_isolation("failure", fail_text, 27,
                      "ooioofoomooioomooooofooimoi");
    failure_isolation("failure_well", well_fail_text, 18,
                      "omoiomofomooiomooo");
    return cli_test_finish("test_ensemble_lanes");
}

/* Models that several tests build variants of, as scenario text (each
 * test adds its name, integrator, output and ensemble lines). */
#ifndef RC_MODEL_TEXT_H
#define RC_MODEL_TEXT_H

/* The pogo stick of examples/pogo_ensemble.yaml (seed 000 §6.1.1), 1-D:
 * a unit body at 6 on a spring (k 10, rest length 5) to a unit foot at 1
 * above the floor, under gravity. */
#define RC_POGO_MODEL                                                         \
    "dimension: 1\n"                                                          \
    "particles:\n"                                                            \
    "  - {mass: 1, position: [6], momentum: [0]}\n"                           \
    "  - {mass: 1, position: [1], momentum: [0]}\n"                           \
    "potentials:\n"                                                           \
    "  - {type: gravity, g: 9.8}\n"                                           \
    "  - {type: spring, particles: [0, 1], k: 10, rest_length: 5}\n"          \
    "constraints:\n"                                                          \
    "  - {type: wall, normal: [1], offset: 0, particles: 1}\n"

/* Newton's cradle of examples/newtons_cradle.yaml: five unit balls of
 * radius 0.25 on pendulum rods of length 1, pivots 0.5 apart, the two
 * leftmost pulled back to -pi/5. */
#define RC_CRADLE_PARTICLES                                                   \
    "particles:\n"                                                            \
    "  - {mass: 1, radius: 0.25, position: [-0.5877852522924731, "           \
    "-0.8090169943749475], momentum: [0, 0]}\n"                               \
    "  - {mass: 1, radius: 0.25, position: [-0.08778525229247314, "          \
    "-0.8090169943749475], momentum: [0, 0]}\n"                               \
    "  - {mass: 1, radius: 0.25, position: [1.0, -1.0], momentum: [0, 0]}\n" \
    "  - {mass: 1, radius: 0.25, position: [1.5, -1.0], momentum: [0, 0]}\n" \
    "  - {mass: 1, radius: 0.25, position: [2.0, -1.0], momentum: [0, 0]}\n"

#define RC_CRADLE_CONSTRAINTS                                                 \
    "constraints:\n"                                                          \
    "  - {type: pendulum, pivot: [0.0, 0.0], length: 1, particles: 0}\n"     \
    "  - {type: pendulum, pivot: [0.5, 0.0], length: 1, particles: 1}\n"     \
    "  - {type: pendulum, pivot: [1.0, 0.0], length: 1, particles: 2}\n"     \
    "  - {type: pendulum, pivot: [1.5, 0.0], length: 1, particles: 3}\n"     \
    "  - {type: pendulum, pivot: [2.0, 0.0], length: 1, particles: 4}\n"     \
    "  - {type: non_overlap, particles: all}\n"

#endif

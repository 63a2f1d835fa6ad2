/* Newton's cradle of examples/newtons_cradle.yaml as scenario text for
 * the tests that build variants of it (test_ensemble_lanes,
 * test_gvi_linear): five unit balls of radius 0.25 on pendulum rods of
 * length 1, pivots 0.5 apart, the two leftmost pulled back to -pi/5. */
#ifndef RC_CRADLE_TEXT_H
#define RC_CRADLE_TEXT_H

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

/* Private layout of rc_scenario: the typed, checked content of a file. */
#ifndef RC_SCENARIO_IMPL_H
#define RC_SCENARIO_IMPL_H

#include "ricochet/scenario.h"

typedef struct rc_scn_particle {
    double mass, radius;
    double q[3], p[3];
} rc_scn_particle;

struct rc_scenario {
    char path[1024];
    char name[128];
    char description[1024];
    int dimension;
    int n;
    rc_scn_particle *particles;
    int npot;
    rc_potential_desc *potentials;
    int ncon;
    rc_constraint_desc *constraints;
    rc_integrator_desc integ;
    double duration;
    long every;            /* resolved: >= 1 */
    rc_trajectory_format trajectory;
    long trajectory_every; /* resolved: >= 1 */
};

#endif

/* The README's library example as a program: a particle in the sextic
 * well inside a circular container (seed 000's oscillator with contact),
 * 1000 GVI steps; prints the relative energy error and exits 1 when the
 * library reports a failure.  Built against an installed ricochet with
 *   cc sextic.c $(pkg-config --cflags --libs ricochet)
 * or with find_package(ricochet) and ricochet::ricochet in CMake. */
#include <math.h>
#include <stdio.h>

#include <ricochet/ricochet.h>

int main(void)
{
    rc_system *sys = NULL;
    double q0[2] = {0, -1.4}, p0[2] = {1, 0};
    rc_potential_desc pot;
    rc_constraint_desc wall;
    rc_integrator_desc integ;
    rc_diagnostics d0, d;

    if (rc_system_create(2, &sys) != RC_OK)
        return 1;
    rc_system_add_particle(sys, 1.0, 1.0, q0, p0, NULL);
    rc_potential_desc_init(&pot, RC_POT_SEXTIC_WELL);
    rc_system_add_potential(sys, &pot);
    rc_constraint_desc_init(&wall, RC_CON_CONTAINER);
    wall.i = 0;
    wall.radius = 2.5; /* container radius; the particle's radius is 1 */
    rc_system_add_constraint(sys, &wall);
    rc_integrator_desc_init(&integ);
    integ.method = RC_METHOD_GVI;
    integ.dt = 0.1;
    if (rc_system_set_integrator(sys, &integ) != RC_OK ||
        rc_system_diagnostics(sys, &d0) != RC_OK ||
        rc_system_step(sys, 1000) != RC_OK ||
        rc_system_diagnostics(sys, &d) != RC_OK) {
        fprintf(stderr, "ricochet: %s\n", rc_system_message(sys));
        rc_system_free(sys);
        return 1;
    }
    printf("ricochet %s: t = %g, H0 = %.10g, |H - H0|/|H0| = %.3e\n",
           rc_version(), d.time, d0.energy,
           fabs(d.energy - d0.energy) / fabs(d0.energy));
    rc_system_free(sys);
    return 0;
}

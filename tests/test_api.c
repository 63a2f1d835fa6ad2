/* Error handling of the public API (include/ricochet/system.h, status.h):
 * every rejected call returns the documented status, leaves the system
 * unchanged and (when there is a system to hold it) a non-empty
 * rc_system_message(); names and status strings cover every code. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ricochet/system.h"
#include "rc_test.h"

/* A rejected call: status `want` and a non-empty message on sys. */
#define EXPECT_FAIL(sys, call, want)                                         \
    do {                                                                     \
        rc_status st_ = (call);                                              \
        RC_CHECK(st_ == (want), "%s returned %s, expected %s", #call,        \
                 rc_status_name(st_), rc_status_name(want));                 \
        RC_CHECK(strlen(rc_system_message(sys)) > 0,                         \
                 "%s: empty rc_system_message", #call);                      \
    } while (0)

static void status_strings(void)
{
#define RC_TEST_STATUS(name, value, text)                                    \
    RC_CHECK(rc_status_str(name) != NULL && strlen(rc_status_str(name)) > 0, \
             "rc_status_str(%s)", #name);                                    \
    RC_CHECK(rc_status_str(name) != NULL &&                                  \
                 strcmp(rc_status_str(name), text) == 0,                     \
             "rc_status_str(%s) = \"%s\"", #name, rc_status_str(name));      \
    RC_CHECK(rc_status_name(name) != NULL &&                                 \
                 strcmp(rc_status_name(name), #name) == 0,                   \
             "rc_status_name(%d) = \"%s\"", value, rc_status_name(name));
    RC_STATUS_LIST(RC_TEST_STATUS)
#undef RC_TEST_STATUS
    /* codes outside the list still get a string, never NULL */
    RC_CHECK(rc_status_str((rc_status)-1000) != NULL &&
                 rc_status_str((rc_status)7) != NULL &&
                 rc_status_name((rc_status)-1000) != NULL,
             "unknown status codes");
    RC_CHECK(RC_OK == 0 && RC_ERR_INVALID < 0 && RC_ERR_STATE < 0,
             "status sign convention");
}

static void names_and_defaults(void)
{
    rc_potential_desc pd;
    rc_integrator_desc in;
    int t;
    for (t = 0; t < RC_POT_TYPE_COUNT_; ++t)
        RC_CHECK(rc_potential_type_name((rc_potential_type)t) != NULL,
                 "potential type %d has no name", t);
    RC_CHECK(strcmp(rc_potential_type_name(RC_POT_SPRING), "spring") == 0,
             "spring name");
    RC_CHECK(rc_potential_type_name(RC_POT_TYPE_COUNT_) == NULL &&
                 rc_potential_type_name((rc_potential_type)-1) == NULL,
             "out-of-range potential type has a name");
    for (t = 0; t < RC_METHOD_COUNT_; ++t)
        RC_CHECK(rc_method_name((rc_method)t) != NULL, "method %d", t);
    RC_CHECK(rc_method_name(RC_METHOD_COUNT_) == NULL &&
                 rc_method_name((rc_method)-1) == NULL,
             "out-of-range method has a name");

    memset(&pd, 0x55, sizeof pd);
    rc_potential_desc_init(&pd, RC_POT_SEXTIC_WELL);
    RC_CHECK(pd.type == RC_POT_SEXTIC_WELL && pd.i == RC_ALL &&
                 pd.j == RC_ALL && pd.strength == 1.0 && pd.k == 0.0 &&
                 pd.cutoff == 0.0 && pd.vector[0] == 0.0 &&
                 pd.vector[2] == 0.0,
             "rc_potential_desc_init defaults");
    memset(&in, 0x55, sizeof in);
    rc_integrator_desc_init(&in);
    RC_CHECK(in.method == RC_METHOD_SV && in.dt == 0.0 &&
                 in.newton_tol == 1e-14 && in.newton_max_iter == 50,
             "rc_integrator_desc_init defaults");
}

static void create_and_null(void)
{
    rc_system *sys = (rc_system *)&sys; /* must be overwritten */
    RC_CHECK(rc_system_create(0, &sys) == RC_ERR_INVALID && sys == NULL,
             "dimension 0");
    sys = (rc_system *)&sys;
    RC_CHECK(rc_system_create(4, &sys) == RC_ERR_INVALID && sys == NULL,
             "dimension 4");
    RC_CHECK(rc_system_create(2, NULL) == RC_ERR_INVALID, "NULL out");
    rc_system_free(NULL); /* no-op */
    RC_CHECK(rc_system_message(NULL) != NULL, "message of NULL");
    RC_CHECK(rc_system_step(NULL, 1) == RC_ERR_INVALID, "step NULL");
    RC_CHECK(rc_system_add_particle(NULL, 1.0, 0.0, NULL, NULL, NULL) ==
                 RC_ERR_INVALID,
             "add_particle NULL");
    RC_CHECK(rc_system_diagnostics(NULL, NULL) == RC_ERR_INVALID,
             "diagnostics NULL");
    RC_CHECK(rc_system_count(NULL) == 0 && rc_system_dimension(NULL) == 0,
             "accessors of NULL");

    RC_CHECK(rc_system_create(1, &sys) == RC_OK && sys != NULL,
             "dimension 1");
    RC_CHECK(strcmp(rc_system_message(sys), "") == 0,
             "fresh system has message \"%s\"", rc_system_message(sys));
    rc_system_free(sys);
}

static void particles(void)
{
    rc_system *sys = NULL;
    const double q[3] = {0.0, 1.0, 2.0}, p[3] = {0.5, 0.0, -0.5};
    double bad[3] = {0.0, 0.0, 0.0}, m, r;
    int idx = -7, k;
    rc_system_create(3, &sys);
    EXPECT_FAIL(sys, rc_system_add_particle(sys, 0.0, 0.0, q, p, NULL),
                RC_ERR_INVALID);
    EXPECT_FAIL(sys, rc_system_add_particle(sys, -1.0, 0.0, q, p, NULL),
                RC_ERR_INVALID);
    EXPECT_FAIL(sys, rc_system_add_particle(sys, NAN, 0.0, q, p, NULL),
                RC_ERR_INVALID);
    EXPECT_FAIL(sys, rc_system_add_particle(sys, INFINITY, 0.0, q, p, NULL),
                RC_ERR_INVALID);
    EXPECT_FAIL(sys, rc_system_add_particle(sys, 1.0, -0.1, q, p, NULL),
                RC_ERR_INVALID);
    EXPECT_FAIL(sys, rc_system_add_particle(sys, 1.0, NAN, q, p, NULL),
                RC_ERR_INVALID);
    EXPECT_FAIL(sys, rc_system_add_particle(sys, 1.0, INFINITY, q, p, NULL),
                RC_ERR_INVALID);
    for (k = 0; k < 3; ++k) {
        bad[k] = NAN;
        EXPECT_FAIL(sys, rc_system_add_particle(sys, 1.0, 0.0, bad, p, NULL),
                    RC_ERR_INVALID);
        bad[k] = -INFINITY;
        EXPECT_FAIL(sys, rc_system_add_particle(sys, 1.0, 0.0, q, bad, NULL),
                    RC_ERR_INVALID);
        bad[k] = 0.0;
    }
    RC_CHECK(rc_system_add_particle(sys, 1.0, 0.0, NULL, p, NULL) ==
                     RC_ERR_INVALID &&
                 rc_system_add_particle(sys, 1.0, 0.0, q, NULL, NULL) ==
                     RC_ERR_INVALID,
             "NULL position or momentum accepted");
    RC_CHECK(rc_system_count(sys) == 0, "rejected particles were added: %d",
             rc_system_count(sys));

    RC_CHECK(rc_system_add_particle(sys, 2.0, 0.25, q, p, &idx) == RC_OK &&
                 idx == 0,
             "valid particle: %s", rc_system_message(sys));
    RC_CHECK(rc_system_add_particle(sys, 1.0, 0.0, p, q, &idx) == RC_OK &&
                 idx == 1,
             "radius 0 particle: %s", rc_system_message(sys));
    {
        double ms[2], rs[2];
        rc_system_get_particles(sys, ms, rs);
        m = ms[0];
        r = rs[0];
    }
    RC_CHECK(m == 2.0 && r == 0.25, "mass %g radius %g", m, r);

    /* set_state rejects non-finite input and leaves the state alone */
    {
        double qs[6], ps[6], q2[6];
        rc_system_get_state(sys, qs, ps);
        memcpy(q2, qs, sizeof q2);
        q2[4] = NAN;
        EXPECT_FAIL(sys, rc_system_set_state(sys, q2, NULL), RC_ERR_INVALID);
        q2[4] = INFINITY;
        EXPECT_FAIL(sys, rc_system_set_state(sys, NULL, q2), RC_ERR_INVALID);
        rc_system_get_state(sys, q2, NULL);
        RC_CHECK(memcmp(q2, qs, sizeof q2) == 0,
                 "rejected set_state changed the state");
        RC_CHECK(rc_system_set_state(sys, qs, ps) == RC_OK, "set_state: %s",
                 rc_system_message(sys));
    }
    RC_CHECK(rc_system_set_threads(sys, -1) == RC_ERR_INVALID,
             "negative threads accepted");
    rc_system_free(sys);
}

static void potentials(void)
{
    rc_system *sys = NULL;
    rc_potential_desc pd;
    const double z[2] = {0.0, 0.0}, o[2] = {1.0, 0.0};
    rc_system_create(2, &sys);
    rc_system_add_particle(sys, 1.0, 0.0, z, z, NULL);
    rc_system_add_particle(sys, 1.0, 0.0, o, z, NULL);

    rc_potential_desc_init(&pd, RC_POT_SPRING);
    pd.k = 1.0;
    pd.i = 1;
    pd.j = 1; /* same particle twice */
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.i = 0;
    pd.j = 2; /* out of range */
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.j = RC_ALL; /* springs need two explicit particles */
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.j = 1;
    pd.k = -1.0;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.k = NAN;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.k = 1.0;
    pd.rest_length = -0.5;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.rest_length = INFINITY;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);

    rc_potential_desc_init(&pd, RC_POT_ANCHOR);
    pd.k = 1.0;
    pd.i = 5;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.i = 0;
    pd.vector[1] = NAN;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);

    rc_potential_desc_init(&pd, RC_POT_GRAVITY);
    pd.vector[0] = INFINITY;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);

    rc_potential_desc_init(&pd, RC_POT_LENNARD_JONES);
    pd.epsilon = 1.0; /* sigma 0 */
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.sigma = 1.0;
    pd.epsilon = -1.0;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.epsilon = 1.0;
    pd.cutoff = INFINITY;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.cutoff = NAN; /* must not fall back to the 2.5 sigma default */
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    pd.cutoff = -2.0;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);

    rc_potential_desc_init(&pd, RC_POT_WCA);
    pd.epsilon = 1.0;
    pd.sigma = NAN;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);

    rc_potential_desc_init(&pd, RC_POT_INVERSE_SQUARE);
    pd.strength = NAN;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    rc_potential_desc_init(&pd, RC_POT_SEXTIC_WELL);
    pd.i = -2;
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);

    rc_potential_desc_init(&pd, RC_POT_TYPE_COUNT_);
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    rc_potential_desc_init(&pd, (rc_potential_type)-3);
    EXPECT_FAIL(sys, rc_system_add_potential(sys, &pd), RC_ERR_INVALID);
    RC_CHECK(rc_system_add_potential(sys, NULL) == RC_ERR_INVALID,
             "NULL desc");

    /* none of the rejected terms may have been added: V stays 0 */
    {
        double q[4] = {0.0, 0.0, 1.0, 0.0}, e = -1.0;
        RC_CHECK(rc_system_potential(sys, q, &e, NULL) == RC_OK && e == 0.0,
                 "rejected potentials contribute energy %g", e);
    }
    /* a valid one still goes in after all that */
    rc_potential_desc_init(&pd, RC_POT_SPRING);
    pd.i = 0;
    pd.j = 1;
    pd.k = 2.0;
    RC_CHECK(rc_system_add_potential(sys, &pd) == RC_OK, "valid spring: %s",
             rc_system_message(sys));
    rc_system_free(sys);
}

static void integrator_and_step(void)
{
    rc_system *sys = NULL;
    rc_integrator_desc in;
    rc_diagnostics dg;
    const double q[2] = {1.0, 0.0}, p[2] = {0.0, 1.0};
    rc_potential_desc pd;
    rc_system_create(2, &sys);
    rc_system_add_particle(sys, 1.0, 0.0, q, p, NULL);
    rc_potential_desc_init(&pd, RC_POT_ANCHOR);
    pd.k = 1.0;
    rc_system_add_potential(sys, &pd);

    EXPECT_FAIL(sys, rc_system_step(sys, 1), RC_ERR_STATE);
    RC_CHECK(rc_system_steps_taken(sys) == 0, "step without integrator");

    rc_integrator_desc_init(&in); /* dt = 0 by default: must be set */
    EXPECT_FAIL(sys, rc_system_set_integrator(sys, &in), RC_ERR_INVALID);
    in.dt = -0.1;
    EXPECT_FAIL(sys, rc_system_set_integrator(sys, &in), RC_ERR_INVALID);
    in.dt = NAN;
    EXPECT_FAIL(sys, rc_system_set_integrator(sys, &in), RC_ERR_INVALID);
    in.dt = INFINITY;
    EXPECT_FAIL(sys, rc_system_set_integrator(sys, &in), RC_ERR_INVALID);
    in.dt = 0.01;
    in.method = RC_METHOD_COUNT_;
    EXPECT_FAIL(sys, rc_system_set_integrator(sys, &in), RC_ERR_INVALID);
    in.method = RC_METHOD_MIDPOINT;
    in.newton_tol = 0.0;
    EXPECT_FAIL(sys, rc_system_set_integrator(sys, &in), RC_ERR_INVALID);
    in.newton_tol = NAN;
    EXPECT_FAIL(sys, rc_system_set_integrator(sys, &in), RC_ERR_INVALID);
    in.newton_tol = 1e-14;
    in.newton_max_iter = 0;
    EXPECT_FAIL(sys, rc_system_set_integrator(sys, &in), RC_ERR_INVALID);
    /* still no integrator after the rejected calls */
    EXPECT_FAIL(sys, rc_system_step(sys, 1), RC_ERR_STATE);

    in.newton_max_iter = 50;
    RC_CHECK(rc_system_set_integrator(sys, &in) == RC_OK, "midpoint: %s",
             rc_system_message(sys));
    RC_CHECK(rc_system_step(sys, -1) == RC_ERR_INVALID, "negative steps");
    RC_CHECK(rc_system_step(sys, 0) == RC_OK && rc_system_time(sys) == 0.0,
             "zero steps");
    RC_CHECK(rc_system_step(sys, 100) == RC_OK, "midpoint steps: %s",
             rc_system_message(sys));
    /* time is steps * dt exactly, not a running sum */
    RC_CHECK(rc_system_steps_taken(sys) == 100 &&
                 rc_system_time(sys) == 100.0 * 0.01,
             "steps %ld time %.17g", rc_system_steps_taken(sys),
             rc_system_time(sys));
    /* switching method after stepping must work (scratch is resized) */
    in.method = RC_METHOD_SV;
    RC_CHECK(rc_system_set_integrator(sys, &in) == RC_OK &&
                 rc_system_step(sys, 10) == RC_OK,
             "switch to sv: %s", rc_system_message(sys));
    in.method = RC_METHOD_MIDPOINT;
    RC_CHECK(rc_system_set_integrator(sys, &in) == RC_OK &&
                 rc_system_step(sys, 10) == RC_OK,
             "switch back to midpoint: %s", rc_system_message(sys));
    /* adding a particle after stepping must resize scratch */
    RC_CHECK(rc_system_add_particle(sys, 1.0, 0.0, p, q, NULL) == RC_OK &&
                 rc_system_step(sys, 10) == RC_OK,
             "step after adding a particle: %s", rc_system_message(sys));

    RC_CHECK(rc_system_diagnostics(sys, &dg) == RC_OK, "diagnostics");
    /* H = T + V: one addition, so equal to the rounding of that sum */
    RC_CHECK(dg.energy == dg.kinetic + dg.potential && dg.step == 130 &&
                 isinf(dg.min_gap) && dg.min_gap > 0.0 &&
                 dg.max_equality_error == 0.0,
             "diagnostics fields: E %g T %g V %g step %ld gap %g", dg.energy,
             dg.kinetic, dg.potential, dg.step, dg.min_gap);
    rc_system_free(sys);

    /* an empty system steps and reports zeros */
    rc_system_create(3, &sys);
    in.method = RC_METHOD_MIDPOINT;
    rc_system_set_integrator(sys, &in);
    RC_CHECK(rc_system_step(sys, 3) == RC_OK &&
                 rc_system_diagnostics(sys, &dg) == RC_OK &&
                 dg.energy == 0.0,
             "empty system: %s", rc_system_message(sys));
    rc_system_free(sys);
}

int main(void)
{
    status_strings();
    names_and_defaults();
    create_and_null();
    particles();
    potentials();
    integrator_and_step();
    return rc_test_finish("test_api");
}

/* The ensemble batch engine's scratch overrun check
 * (rc_batch_run_checked_, src/host/batch.c): on the GPU member j's work
 * block is followed by member j+1's inside one allocation, so a member
 * writing past its block corrupts a neighbour without any error that
 * compute-sanitizer's memcheck could see.  The CPU engine puts each
 * member's block between poisoned guard blocks and checks them after
 * every member.
 *   - the bundled pogo, cradle and cart-pendulum ensembles run checked
 *     with no write outside the blocks, and give the members of the
 *     unchecked engine bit for bit (the guards change nothing);
 *   - a block declared one double short (the member's last entries fall
 *     in the guard) is caught, with the member and the neighbour named:
 *     the check can fail. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/ensemble_impl.h"
#include "host/scenario_impl.h"
#include "rc_test.h"
#include "ricochet/scenario.h"

static void one(const char *file, const char *const *sets, int nsets)
{
    char path[600], why[400] = "", buf[2000];
    rc_scenario *scn = NULL;
    rc_error err;
    rc_batch_plan plan;
    long n, nv, B;
    double *values = NULL;
    rc_member *ma = NULL, *mb = NULL;
    unsigned char *ra = NULL, *rb = NULL;
    rc_status sa, sb, sc;
    snprintf(path, sizeof path, "%s/%s", RC_EXAMPLES_DIR, file);
    if (rc_scenario_load(path, sets, nsets, &scn, &err) != RC_OK) {
        RC_CHECK(0, "%s: %s", file, rc_error_format(&err, buf, sizeof buf));
        return;
    }
    if (!rc_batch_plan_make_(scn, &plan, why, sizeof why)) {
        RC_CHECK(0, "%s: the batch engine declines it: %s", file, why);
        rc_scenario_free(scn);
        return;
    }
    n = scn->ens.members;
    B = n;
    nv = n * (scn->ens.nrules > 0 ? scn->ens.nrules : 1);
    values = (double *)calloc((size_t)nv, sizeof(double));
    ma = (rc_member *)calloc((size_t)n, sizeof *ma);
    mb = (rc_member *)calloc((size_t)n, sizeof *mb);
    ra = (unsigned char *)calloc((size_t)n, 1);
    rb = (unsigned char *)calloc((size_t)n, 1);
    if (!values || !ma || !mb || !ra || !rb) {
        RC_CHECK(0, "out of memory");
        goto done;
    }
    sa = rc_batch_run_(scn, &plan, 0, B, values, ma, ra);
    sb = rc_batch_run_checked_(scn, &plan, 0, B, values, mb, rb, 0, why,
                               sizeof why);
    RC_CHECK(sa == RC_OK && sb == RC_OK, "%s: unchecked %d, checked %d (%s)",
             file, (int)sa, (int)sb, why);
    /* the lane path's step counts (lane_held, lane_scalar) are the
     * lanes' own: the checked engine steps each member by the scalar
     * body; every other field must be the same */
    {
        long k;
        for (k = 0; k < n; ++k)
            ma[k].lane_held = ma[k].lane_scalar = 0;
    }
    RC_CHECK(memcmp(ma, mb, sizeof *ma * (size_t)n) == 0 &&
                 memcmp(ra, rb, (size_t)n) == 0,
             "%s: the checked engine's members differ from the unchecked "
             "engine's",
             file);
    {
        long k, ok = 0, impacts = 0;
        for (k = 0; k < n; ++k) {
            ok += !rb[k] && mb[k].status == RC_MEMBER_OK;
            impacts += mb[k].impacts;
        }
        /* the members ran, and through reflections: the check saw the
         * whole body at work */
        RC_CHECK(ok == n && impacts > 0,
                 "%s: %ld of %ld members ok, %ld impacts", file, ok, n,
                 impacts);
    }
    why[0] = '\0';
    sc = rc_batch_run_checked_(scn, &plan, 0, B, values, mb, rb, 1, why,
                               sizeof why);
    RC_CHECK(sc == RC_ERR_STATE && strstr(why, "member 0 wrote past") &&
                 strstr(why, "next neighbour"),
             "%s: a block one double short was not caught: status %d (%s)",
             file, (int)sc, why);
    printf("%-26s %ld members checked, clean; one double short: \"%s\"\n",
           file, n, why);
done:
    free(values);
    free(ma);
    free(mb);
    free(ra);
    free(rb);
    rc_batch_plan_free_(&plan);
    rc_scenario_free(scn);
}

int main(void)
{
    /* the bundled ensembles, cut to what the batch engine runs: the
     * cradle's grid varies dt and a mass, the sweep has reference runs,
     * so each varies an initial state instead */
    static const char *const pogo[] = {"ensemble.members=64"};
    static const char *const cradle[] = {
        "ensemble={members: 12, seed: 5, vary: [{path: "
        "\"particles[4].momentum[0]\", uniform: [0, 0.5]}]}",
        "integrator.duration=3", "output.trace_members=[]"};
    static const char *const cp[] = {
        "ensemble={members: 9, map: {type: cart_pendulum_xi, length: 2, "
        "beta: 4.2}, vary: [{path: map.beta, linspace: [3.2, 5.2]}]}",
        "integrator={method: gvi, base: verlet, dt: 0.01, duration: 3}",
        "output.trace_members=[]"};
    one("pogo_ensemble.yaml", pogo, 1);
    one("cradle_ensemble.yaml", cradle, 3);
    one("cart_pendulum_sweep.yaml", cp, 3);
    return rc_test_finish("test_ensemble_overrun");
}

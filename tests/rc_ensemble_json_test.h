/* Reading an ensemble's ensemble.json in tests. */
#ifndef RC_ENSEMBLE_JSON_TEST_H
#define RC_ENSEMBLE_JSON_TEST_H

#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

/* The group of ensemble.json's "groups" whose values have integrator.dt
 * = dt (to 1e-15: both are the same decimal read twice) and
 * integrator.method = method; NULL when none. */
static inline cJSON *rc_test_find_group(cJSON *groups, double dt,
                                        const char *method)
{
    cJSON *g;
    cJSON_ArrayForEach(g, groups)
    {
        cJSON *vals = cJSON_GetObjectItem(g, "values");
        cJSON *d = cJSON_GetObjectItem(vals, "integrator.dt");
        cJSON *m = cJSON_GetObjectItem(vals, "integrator.method");
        if (cJSON_IsNumber(d) && cJSON_IsString(m) &&
            fabs(d->valuedouble - dt) < 1e-15 &&
            !strcmp(m->valuestring, method))
            return g;
    }
    return NULL;
}

#endif

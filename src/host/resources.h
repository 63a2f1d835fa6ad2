/* Resource limits (issue 15): the memory a scenario will need, estimated
 * before anything is allocated for it, against the memory this process
 * may use.  rc_scenario_load refuses (RC_ERR_PARSE, exit 2) a scenario
 * whose estimate exceeds what is available. */
#ifndef RC_RESOURCES_H
#define RC_RESOURCES_H

#include <stddef.h>

#include "scenario_impl.h"

/* What a scenario needs, in bytes (doubles: the products overflow a
 * 64-bit integer for absurd inputs, and the comparison only needs a
 * magnitude). */
typedef struct rc_mem_estimate {
    double bytes;      /* the total */
    double items;      /* spheres, particles or members */
    double per_item;   /* bytes for each of them */
    double other;      /* the rest: cell grid, matrices, retained rows */
    const char *item;  /* "sphere", "particle" or "member" */
    const char *field; /* the field that sets the size (message place) */
} rc_mem_estimate;

/* The estimate for a loaded scenario (its lattice particles need not be
 * made yet: md.n, the radii's law and the box are enough). */
void rc_mem_estimate_scenario(const rc_scenario *scn, rc_mem_estimate *e);

/* Bytes per particle of a large system read from a file (`read:`),
 * checked before the scenario's copy of the particles is made (the
 * whole estimate, rc_mem_estimate_scenario, needs them loaded): the
 * measured 600 B of the 3-D fluid at packing fraction 0.3 with headroom
 * for denser packings' contact lists and the output buffers. */
#define RC_MEM_PER_PARTICLE 1024.0

/* The bytes this process may use: the smallest of physical memory
 * (sysconf pages x page size), the cgroup limit (v2 memory.max or v1
 * memory.limit_in_bytes, when readable), RLIMIT_AS, and the environment
 * variable RICOCHET_MEMORY_LIMIT (bytes, or with a K, M, G or T suffix;
 * a lower cap for shared machines and tests).  `how` (may be NULL)
 * receives which bound it is. */
double rc_mem_available(char *how, size_t how_size);

/* "1.5 GiB"-style text of a byte count. */
const char *rc_mem_text(double bytes, char *buf, size_t size);

#endif

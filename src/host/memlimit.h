/* The memory a run may count on, to refuse up front (exit 2, with the
 * estimate) a scenario that could not fit, instead of failing or being
 * killed after allocating gigabytes (memlimit.c). */
#ifndef RC_MEMLIMIT_H
#define RC_MEMLIMIT_H

#include <stddef.h>

/* Bytes a large-system run needs per particle: measured 600 B for the
 * 3-D fluid at packing fraction 0.3 (256 000 spheres: 165 MB peak), with
 * headroom for denser packings' contact lists and the output buffers. */
#define RC_MEM_PER_PARTICLE 1024.0

/* The smallest of: MemAvailable (/proc/meminfo), the cgroup's
 * memory.max (v2) or memory.limit_in_bytes (v1), and the environment
 * variable RICOCHET_MEMORY_LIMIT_MB (a user's or a batch job's own
 * bound); INFINITY when none can be read.  *what (size bytes) names the
 * source of the value. */
double rc_mem_available(char *what, size_t size);

#endif

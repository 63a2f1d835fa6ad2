/* The memory a run may count on (memlimit.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memlimit.h"

/* The first number in path after `key` (the whole file when key is
 * NULL), times scale; -1 when absent or unreadable ("max" included). */
static double rc_mem_read(const char *path, const char *key, double scale)
{
    FILE *f = fopen(path, "r");
    char line[256];
    double v = -1.0;
    if (!f)
        return -1.0;
    while (fgets(line, sizeof line, f)) {
        char *s = line, *end;
        double x;
        if (key) {
            if (strncmp(line, key, strlen(key)) != 0)
                continue;
            s = line + strlen(key);
        }
        x = strtod(s, &end);
        if (end != s && isfinite(x) && x > 0.0)
            v = x * scale;
        break;
    }
    fclose(f);
    return v;
}

double rc_mem_available(char *what, size_t size)
{
    double best = INFINITY, v;
    const char *env = getenv("RICOCHET_MEMORY_LIMIT_MB");
    snprintf(what, size, "no limit known");
    if ((v = rc_mem_read("/proc/meminfo", "MemAvailable:", 1024.0)) > 0.0 &&
        v < best) {
        best = v;
        snprintf(what, size, "MemAvailable in /proc/meminfo");
    }
    /* a batch scheduler's limit for the job (cgroup v2, then v1; v1's
     * "no limit" is a huge number, which loses the comparison) */
    if ((v = rc_mem_read("/sys/fs/cgroup/memory.max", NULL, 1.0)) > 0.0 &&
        v < best) {
        best = v;
        snprintf(what, size, "the cgroup's memory.max");
    }
    if ((v = rc_mem_read("/sys/fs/cgroup/memory/memory.limit_in_bytes", NULL,
                         1.0)) > 0.0 &&
        v < best) {
        best = v;
        snprintf(what, size, "the cgroup's memory.limit_in_bytes");
    }
    if (env && *env) {
        char *end;
        double mb = strtod(env, &end);
        if (end != env && !*end && mb > 0.0 && mb * 1048576.0 < best) {
            best = mb * 1048576.0;
            snprintf(what, size, "RICOCHET_MEMORY_LIMIT_MB");
        }
    }
    return best;
}

/* Memory estimates and the memory available (resources.h).
 *
 * The estimate is a sum of counts times bytes per item.  The constants
 * below were measured (peak resident set of `ricochet run`, Release
 * build, slope over the particle count) and rounded up by about 10 %:
 * the estimate is meant to refuse what cannot fit, not to ration what
 * can, so it errs a little high and never by a factor. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "resources.h"
#include "ensemble_impl.h"
#include "system_impl.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Large systems (src/host/md/): bytes a sphere costs apart from its
 * candidate pairs: state, scenario copy, set-up arrays, the engine's
 * per-sphere arrays.  Measured 409 B in 3-D (hard_sphere_fluid.yaml:
 * 612 B a sphere at 2.6 pairs a sphere) and 388 B in 2-D. */
#define RC_MEM_SPHERE_3D 448.0
#define RC_MEM_SPHERE_2D 416.0
/* Bytes per candidate pair (the Verlet list, its contact marks and
 * shifts): measured 77 B from lj_hard_core.yaml (26 pairs a sphere)
 * against hard_sphere_fluid.yaml (2.6). */
#define RC_MEM_PAIR 88.0
/* Bytes per cell of the broadphase grid: two longs on the launcher
 * (start, cursor) and the host grid's int. */
#define RC_MEM_CELL 24.0
/* Bytes per observables row kept for the averages (Z, collision rate,
 * temperature, MSD time and value). */
#define RC_MEM_MD_ROW 40.0
/* Bytes per diagnostics row a single run keeps (its relative energy
 * error, for the windowed drift). */
#define RC_MEM_ROW 8.0
/* Bytes per ensemble member besides sizeof(rc_member) and its rule
 * values: group and median scratch, seven quantile columns, reference
 * slots, and its row of members.csv held as text before writing. */
#define RC_MEM_MEMBER_EXTRA 352.0

/* Candidate pairs per sphere: spheres within the list's cutoff, halved
 * (each pair counted once). */
static double rc_mem_pairs(int d, double rho, double cut)
{
    double v = d == 3 ? 4.0 / 3.0 * M_PI * cut * cut * cut
                      : d == 2 ? M_PI * cut * cut : 2.0 * cut;
    return 0.5 * rho * v;
}

static double rc_mem_ball(int d, double r)
{
    return d == 3 ? 4.0 / 3.0 * M_PI * r * r * r
                  : d == 2 ? M_PI * r * r : 2.0 * r;
}

static void rc_mem_large(const rc_scenario *scn, rc_mem_estimate *e)
{
    const rc_md_spec *md = &scn->md;
    int d = scn->dimension, k;
    double n = md->lattice ? (double)md->n : (double)scn->n;
    double rmax = md->radius, rmean = md->radius, vol = 1.0, cut, ncell = 1.0;
    double rows;
    if (md->lattice && md->radius_dist == 1) {
        rmax = md->radius_b;
        rmean = 0.5 * (md->radius_a + md->radius_b);
    } else if (md->lattice && md->radius_dist == 2) {
        rmax = md->radius_a + 8.6 * md->radius_b; /* random.h's widest */
        rmean = md->radius_a;
    } else if (!md->lattice) {
        long i;
        double s = 0.0;
        rmax = 0.0;
        for (i = 0; i < scn->n; ++i) {
            rmax = fmax(rmax, scn->particles[i].radius);
            s += scn->particles[i].radius;
        }
        rmean = scn->n > 0 ? s / scn->n : 0.0;
    }
    if (md->have_lengths)
        for (k = 0; k < d; ++k)
            vol *= md->lengths[k];
    else if (md->eta > 0.0)
        vol = n * rc_mem_ball(d, rmean) / md->eta;
    /* the engine's list cutoff: contact or pair range plus a skin of
     * 0.3 diameters (engine.c) */
    cut = 2.0 * rmax;
    if (md->pair >= 0 && md->pair < scn->npot) {
        rc_k_potential form;
        cut = fmax(cut, rc_pair_potential_form_(&scn->potentials[md->pair],
                                                &form));
    }
    cut += 0.6 * rmax;
    for (k = 0; k < d; ++k) {
        double L = md->have_lengths ? md->lengths[k] : pow(vol, 1.0 / d);
        double c = cut > 0.0 ? floor(L / cut) : 1.0;
        ncell *= c > 1.0 ? c : 1.0;
    }
    e->item = "sphere";
    e->items = n;
    e->per_item = (d == 3 ? RC_MEM_SPHERE_3D : RC_MEM_SPHERE_2D) +
                  RC_MEM_PAIR * rc_mem_pairs(d, vol > 0.0 ? n / vol : 0.0,
                                             cut);
    rows = (double)llround(scn->duration / scn->integ.dt) /
               (double)(scn->every > 0 ? scn->every : 1) + 1.0;
    e->other = RC_MEM_CELL * ncell + RC_MEM_MD_ROW * rows +
               8.0 * md->rdf_bins;
    e->field = RC_MEM_CELL * ncell > e->items * e->per_item ? "box.lengths"
               : md->lattice                                 ? "lattice.n"
                                                             : "particles";
}

/* One small system (rc_system and, for the constraint methods, the GVI
 * scratch of rc_gvi_prepare_): counts from rc_system_prepare_ and
 * rc_k_gvi_work_doubles/ints, in doubles.  *terms receives the
 * constraint terms. */
static double rc_mem_system(const rc_scenario *scn, double *terms)
{
    double n = scn->n, N = n * scn->dimension, nc = 0.0, neq = 0.0, mm, b;
    int k;
    for (k = 0; k < scn->ncon; ++k) {
        const rc_constraint_desc *c = &scn->constraints[k];
        double t = 1.0;
        if (c->i == RC_ALL)
            t = c->type == RC_CON_NON_OVERLAP ? 0.5 * n * (n - 1.0) : n;
        nc += t;
        if (c->type >= RC_CON_ROD)
            neq += t;
    }
    *terms = nc;
    /* particles (mass, inverse, radius, q, p), grad, work x4, per
     * particle, masses per coordinate x2, pivots */
    b = 8.0 * (4.0 * n + 9.0 * N) + 4.0 * N;
    if (scn->integ.method == RC_METHOD_MIDPOINT)
        b += 8.0 * N * N; /* the dense Newton matrix */
    b += nc * (double)sizeof(rc_k_constraint) + 8.0 * scn->npot * 16.0;
    if (rc_method_takes_constraints(scn->integ.method)) {
        mm = neq + N;
        b += 8.0 * (8.0 * N + nc + 2.0 * N * nc + nc * nc + 2.0 * nc +
                    (nc * nc + 2.0 * nc) + N * neq + neq * neq +
                    (N + mm) * (N + mm) + (N + mm) + N * mm + mm + N);
        b += 4.0 * (2.0 * nc + neq + (N + mm) + 5.0 * nc);
        b += 8.0 * 3.0 * N + 4.0 * 2.0 * nc; /* q0, backup, ineq */
    }
    return b;
}

void rc_mem_estimate_scenario(const rc_scenario *scn, rc_mem_estimate *e)
{
    double steps, rows, terms = 0.0;
    memset(e, 0, sizeof *e);
    if (scn->md.present) {
        rc_mem_large(scn, e);
        e->bytes = e->items * e->per_item + e->other;
        return;
    }
    steps = (double)llround(scn->duration / scn->integ.dt);
    rows = steps / (double)(scn->every > 0 ? scn->every : 1) + 1.0;
    if (scn->ens.present) {
        int threads = 1;
        double sys = rc_mem_system(scn, &terms), N;
        N = (double)scn->n * scn->dimension;
#ifdef _OPENMP
        threads = omp_get_max_threads();
#endif
        e->item = "member";
        e->items = (double)scn->ens.members;
        e->per_item = (double)sizeof(rc_member) + 8.0 * scn->ens.nrules +
                      RC_MEM_MEMBER_EXTRA;
        /* every thread runs a member: its system and its rows (with the
         * configuration of each when compared to a reference) */
        e->other = threads * (sys + rows * RC_MEM_ROW *
                                        (scn->ens.has_reference ? 1.0 + N
                                                                : 1.0));
        e->field = e->items * e->per_item >= e->other ? "ensemble.members"
                   : terms > N ? "constraints"
                               : "particles";
    } else {
        e->item = "particle";
        e->items = scn->n;
        e->per_item = 0.0;
        e->other = rc_mem_system(scn, &terms) + rows * RC_MEM_ROW;
        e->field = rows * RC_MEM_ROW > e->other - rows * RC_MEM_ROW
                       ? "output.every"
                   : terms > (double)scn->n * scn->dimension ? "constraints"
                                                             : "particles";
    }
    e->bytes = e->items * e->per_item + e->other;
}

/* A byte count read from a file of /sys (cgroups); 0 when unreadable or
 * unlimited ("max"). */
static double rc_mem_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char buf[64];
    double v = 0.0;
    if (!f)
        return 0.0;
    if (fgets(buf, sizeof buf, f)) {
        char *end;
        v = strtod(buf, &end);
        if (end == buf || !(v > 0.0))
            v = 0.0;
    }
    fclose(f);
    /* cgroup v1 writes "no limit" as about 2^63 */
    return v >= 9.0e18 ? 0.0 : v;
}

static void rc_mem_take(double v, const char *what, double *best,
                        char *how, size_t how_size)
{
    if (v > 0.0 && (*best <= 0.0 || v < *best)) {
        *best = v;
        if (how && how_size)
            snprintf(how, how_size, "%s", what);
    }
}

double rc_mem_available(char *how, size_t how_size)
{
    double best = 0.0;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    struct rlimit rl;
    const char *env = getenv("RICOCHET_MEMORY_LIMIT");
    if (how && how_size)
        how[0] = '\0';
    if (pages > 0 && page > 0)
        rc_mem_take((double)pages * (double)page, "physical memory", &best,
                    how, how_size);
    rc_mem_take(rc_mem_file("/sys/fs/cgroup/memory.max"),
                "the cgroup's memory.max", &best, how, how_size);
    rc_mem_take(rc_mem_file("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                "the cgroup's memory.limit_in_bytes", &best, how, how_size);
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        rc_mem_take((double)rl.rlim_cur, "the address-space limit (ulimit -v)",
                    &best, how, how_size);
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        switch (*end) {
        case 'k': case 'K': v *= 1024.0; break;
        case 'm': case 'M': v *= 1048576.0; break;
        case 'g': case 'G': v *= 1073741824.0; break;
        case 't': case 'T': v *= 1099511627776.0; break;
        default: break;
        }
        rc_mem_take(v, "RICOCHET_MEMORY_LIMIT", &best, how, how_size);
    }
    /* nothing readable: no bound to enforce */
    return best > 0.0 ? best : INFINITY;
}

const char *rc_mem_text(double bytes, char *buf, size_t size)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB",
                                       "PiB", "EiB"};
    int u = 0;
    if (!isfinite(bytes)) {
        snprintf(buf, size, "%s", bytes > 0 ? "unbounded" : "?");
        return buf;
    }
    while (bytes >= 1024.0 && u < 6) {
        bytes /= 1024.0;
        ++u;
    }
    if (bytes >= 1024.0) /* beyond EiB: powers of ten */
        snprintf(buf, size, "%.3g %s", bytes, unit[u]);
    else
        snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
    return buf;
}

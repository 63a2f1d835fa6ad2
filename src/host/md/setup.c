/* Initial configurations of large systems (DESIGN §6); contract in
 * setup.h.  Positions: lattices by index arithmetic, random sequential
 * addition with a uniform grid for the overlap test.  Momenta: counter-
 * based normals, momentum removed, rescaled to the exact temperature.
 * Sums over particles are compensated (Neumaier) so that the box volume
 * and the temperature are exact to a few roundings whatever n is. */
#include "setup.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5md.h"
#include "random.h"
#include "xyz.h"

#define RC_MD_PI 3.14159265358979323846

/* Attempts per sphere before random addition gives up: near the jamming
 * limit the free volume fraction falls below 1e-4 and the cost per
 * sphere explodes, so a failure here means "too dense for RSA". */
#define RC_MD_RSA_ATTEMPTS 10000

/* Random sequential addition's jamming limits (monodisperse), quoted in
 * the failure message. */
#define RC_MD_RSA_JAM_3D 0.384
#define RC_MD_RSA_JAM_2D 0.547

static void rc_md_msg(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    if (!msg || size == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

/* Neumaier's compensated sum: error ~ 2 eps |sum| independent of n (for
 * same-signed terms), instead of up to n eps for the plain loop. */
typedef struct rc_md_sum {
    double s, c;
} rc_md_sum;

static void rc_md_sum_add(rc_md_sum *a, double x)
{
    double t = a->s + x;
    if (fabs(a->s) >= fabs(x))
        a->c += (a->s - t) + x;
    else
        a->c += (x - t) + a->s;
    a->s = t;
}

static double rc_md_sum_get(const rc_md_sum *a) { return a->s + a->c; }

/* Volume of a sphere (area of a disk in 2-D). */
static double rc_md_volume(int dim, double r)
{
    return dim == 2 ? RC_MD_PI * r * r : (4.0 / 3.0 * RC_MD_PI) * r * r * r;
}

/* Sum of the particle volumes and the largest radius (index in *imax);
 * -1 if a radius is not positive and finite. */
static int rc_md_radii(int dim, long n, const double *radius, double *vol,
                       double *rmax, long *imax)
{
    rc_md_sum s = {0.0, 0.0};
    long i;
    *rmax = 0.0;
    *imax = 0;
    for (i = 0; i < n; ++i) {
        double r = radius[i];
        if (!(r > 0.0) || !isfinite(r))
            return -1;
        rc_md_sum_add(&s, rc_md_volume(dim, r));
        if (r > *rmax) {
            *rmax = r;
            *imax = i;
        }
    }
    *vol = rc_md_sum_get(&s);
    return 0;
}

int rc_md_box_for_packing(int dim, long n, const double *radius, double eta,
                          const int periodic[3], rc_k_box *b)
{
    double vol, rmax, V, L;
    long imax;
    int k;
    if ((dim != 2 && dim != 3) || n < 1 || !radius || !periodic || !b ||
        !(eta > 0.0 && eta < 1.0))
        return -1;
    if (rc_md_radii(dim, n, radius, &vol, &rmax, &imax))
        return -1;
    V = vol / eta;
    /* sqrt is correctly rounded, cbrt within an ulp: L^dim = V to a few
     * roundings */
    L = dim == 2 ? sqrt(V) : cbrt(V);
    if (!(L > 0.0) || !isfinite(L))
        return -1;
    b->dim = dim;
    for (k = 0; k < 3; ++k) {
        b->L[k] = k < dim ? L : 0.0;
        b->periodic[k] = periodic[k] ? 1 : 0;
    }
    return 0;
}

/* Walled axes: sphere i at q must lie in [r_i, L - r_i]; -1 with a
 * message naming the particle otherwise. */
static int rc_md_check_walls(const rc_k_box *b, long i, const double *qi,
                             double r, const char *name, double margin,
                             char *msg, size_t size)
{
    int k;
    for (k = 0; k < b->dim; ++k)
        if (!b->periodic[k] && (qi[k] < r || qi[k] > b->L[k] - r)) {
            rc_md_msg(msg, size,
                      "%s: particle %ld (radius %.6g) at %.6g on walled "
                      "axis %d does not fit between the walls at 0 and "
                      "%.6g: the outermost lattice sites lie %.6g from a "
                      "wall (use a lower packing fraction, a periodic "
                      "axis, or random placement)",
                      name, i, r, qi[k], k, b->L[k], margin);
            return -1;
        }
    return 0;
}

/* FCC (conventional cubic cell, 4 sites) or SC.  Site coordinates are
 * L (2j + 1) / (2 m) with m = 2k half-steps (fcc) or k steps (sc) per
 * axis: symmetric about the box centre, none on a periodic boundary. */
static int rc_md_lattice(int kind, const rc_k_box *b, long n,
                         const double *radius, double rmax, double eta,
                         double *q, char *msg, size_t size)
{
    static const int basis[4][3] = {
        {0, 0, 0}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}};
    const int fcc = kind == RC_LATTICE_FCC;
    const char *name = fcc ? "fcc" : "sc";
    const int dim = b->dim;
    const long long per = fcc ? 4 : 1;
    long long k = 1, sites;
    double a[3], nn = INFINITY, margin = INFINITY;
    long i;
    int ax, bx;
    for (;;) {
        sites = per * k * k * (dim == 3 ? k : 1);
        if (sites >= n)
            break;
        ++k;
    }
    for (ax = 0; ax < dim; ++ax) {
        a[ax] = b->L[ax] / (double)k;
        /* same-basis neighbours one lattice constant away */
        nn = fmin(nn, a[ax]);
        margin = fmin(margin, fcc ? a[ax] / 4.0 : a[ax] / 2.0);
    }
    if (fcc) /* face-centre neighbours at half a face diagonal */
        for (ax = 0; ax < 3; ++ax)
            for (bx = ax + 1; bx < 3; ++bx)
                nn = fmin(nn, 0.5 * sqrt(a[ax] * a[ax] + a[bx] * a[bx]));
    if (nn < 2.0 * rmax) {
        rc_md_msg(msg, size,
                  "%s: nearest-neighbour spacing %.6g is below the largest "
                  "diameter %.6g, the spheres would overlap (packing "
                  "fraction %.4g, %lld lattice sites for n = %ld; %s)",
                  name, nn, 2.0 * rmax, eta, sites, n,
                  fcc ? "fcc holds at most pi/(3 sqrt 2) = 0.7405, and "
                        "only with n = 4 k^3 filling its lattice"
                      : "sc holds at most pi/6 = 0.5236 in 3-D and pi/4 = "
                        "0.7854 in 2-D, and only with n = k^dim; fcc "
                        "packs denser");
        return -1;
    }
    for (i = 0; i < n; ++i) {
        double *qi = q + (size_t)i * (size_t)dim;
        long long cell = fcc ? i / 4 : i, step = fcc ? 2 * k : k;
        int s = fcc ? (int)(i % 4) : 0;
        for (ax = 0; ax < dim; ++ax) {
            long long j = cell % k;
            cell /= k;
            if (fcc)
                j = 2 * j + basis[s][ax];
            qi[ax] = b->L[ax] * (double)(2 * j + 1) / (double)(2 * step);
        }
        if (rc_md_check_walls(b, i, qi, radius[i], name, margin, msg, size))
            return -1;
    }
    return 0;
}

/* Random sequential addition.  Grid of cells of edge >= the largest
 * diameter (so an overlapping pair sits in neighbouring cells), one
 * singly linked list per cell of the spheres placed so far. */
static int rc_md_random(const rc_k_box *b, long n, const double *radius,
                        double rmax, double eta, unsigned long long seed,
                        double *q, char *msg, size_t size)
{
    const int dim = b->dim;
    int nc[3] = {1, 1, 1}, ax;
    long ncell = 1, c, i;
    long *head = NULL, *next = NULL;
    int rc = -1;
    /* at most ~2n cells: a dilute system needs no finer grid */
    double cap = floor(pow(2.0 * (double)n + 8.0, 1.0 / dim));
    rc_md_sum placed = {0.0, 0.0};
    for (ax = 0; ax < dim; ++ax) {
        /* the margin keeps a cell a little wider than a diameter, so a
         * position rounded into the neighbouring cell is still found */
        double m = floor(b->L[ax] / (2.0 * rmax * (1.0 + 1e-9)));
        m = fmin(fmax(m, 1.0), cap);
        nc[ax] = (int)m;
        ncell *= nc[ax];
    }
    head = (long *)malloc((size_t)ncell * sizeof *head);
    next = (long *)malloc((size_t)n * sizeof *next);
    if (!head || !next) {
        rc_md_msg(msg, size, "random: out of memory (%ld cells, n = %ld)",
                  ncell, n);
        goto done;
    }
    for (c = 0; c < ncell; ++c)
        head[c] = -1;
    for (i = 0; i < n; ++i) {
        const double r = radius[i];
        double *qi = q + (size_t)i * (size_t)dim;
        long attempt, home = 0;
        int ok = 0;
        for (attempt = 0; attempt < RC_MD_RSA_ATTEMPTS && !ok; ++attempt) {
            long nb[3][3];
            int cnt[3] = {1, 1, 1}, cc[3] = {0, 0, 0}, t0, t1, t2;
            int overlap = 0;
            for (ax = 0; ax < dim; ++ax) {
                double u = rc_md_uniform(
                    seed, (unsigned long long)i, (unsigned long long)attempt,
                    ((unsigned long long)RC_MD_STREAM_PLACE << 8) |
                        (unsigned long long)ax);
                double L = b->L[ax], x;
                int ci, o;
                if (b->periodic[ax]) {
                    x = u * L;
                    if (x >= L) /* cannot happen for u <= 1 - 2^-53 */
                        x -= L;
                } else {
                    x = r + u * (L - 2.0 * r);
                    x = fmin(fmax(x, r), L - r);
                }
                qi[ax] = x;
                ci = (int)(x / L * nc[ax]);
                if (ci >= nc[ax])
                    ci = nc[ax] - 1;
                if (ci < 0)
                    ci = 0;
                cc[ax] = ci;
                /* neighbour cells on this axis; with fewer than 3 cells on
                 * a periodic axis every cell is a neighbour (once) */
                cnt[ax] = 0;
                if (b->periodic[ax] && nc[ax] <= 2) {
                    for (o = 0; o < nc[ax]; ++o)
                        nb[ax][cnt[ax]++] = o;
                } else {
                    for (o = ci - 1; o <= ci + 1; ++o) {
                        int w = o;
                        if (b->periodic[ax])
                            w = (o + nc[ax]) % nc[ax];
                        else if (o < 0 || o >= nc[ax])
                            continue;
                        nb[ax][cnt[ax]++] = w;
                    }
                }
            }
            for (ax = dim; ax < 3; ++ax)
                nb[ax][0] = 0;
            for (t2 = 0; t2 < cnt[2] && !overlap; ++t2)
                for (t1 = 0; t1 < cnt[1] && !overlap; ++t1)
                    for (t0 = 0; t0 < cnt[0] && !overlap; ++t0) {
                        long cell = nb[0][t0] +
                                    (long)nc[0] * (nb[1][t1] +
                                                   (long)nc[1] * nb[2][t2]);
                        long j;
                        for (j = head[cell]; j >= 0; j = next[j]) {
                            double x[3], s = r + radius[j];
                            rc_k_box_delta(b, qi,
                                           q + (size_t)j * (size_t)dim, x);
                            if (rc_dot(dim, x, x) < s * s) {
                                overlap = 1;
                                break;
                            }
                        }
                    }
            if (!overlap) {
                ok = 1;
                home = cc[0] + (long)nc[0] * (cc[1] + (long)nc[1] * cc[2]);
            }
        }
        if (!ok) {
            double box = rc_k_box_volume(b);
            rc_md_msg(msg, size,
                      "random: could not place particle %ld (radius %.6g) "
                      "after %d attempts at packing fraction %.4g (%.4g "
                      "reached with %ld placed); random sequential addition "
                      "jams near %.3g in %d-D: use fcc (or sc) for dense "
                      "systems",
                      i, r, RC_MD_RSA_ATTEMPTS, eta,
                      rc_md_sum_get(&placed) / box, i,
                      dim == 3 ? RC_MD_RSA_JAM_3D : RC_MD_RSA_JAM_2D, dim);
            goto done;
        }
        next[i] = head[home];
        head[home] = i;
        rc_md_sum_add(&placed, rc_md_volume(dim, r));
    }
    rc = 0;
done:
    free(head);
    free(next);
    return rc;
}

int rc_md_place(int kind, const rc_k_box *b, long n, const double *radius,
                unsigned long long seed, double *q, char *msg, size_t size)
{
    const char *name = kind == RC_LATTICE_FCC  ? "fcc"
                       : kind == RC_LATTICE_SC ? "sc"
                                               : "random";
    double vol, rmax, eta;
    long imax;
    int k;
    if (msg && size)
        msg[0] = '\0';
    if (!b || (b->dim != 2 && b->dim != 3)) {
        rc_md_msg(msg, size, "place: the box must be 2-D or 3-D");
        return -1;
    }
    for (k = 0; k < b->dim; ++k)
        if (!(b->L[k] > 0.0) || !isfinite(b->L[k])) {
            rc_md_msg(msg, size, "place: box edge %d is %g, not positive "
                      "and finite", k, b->L[k]);
            return -1;
        }
    if (n < 1 || !radius || !q) {
        rc_md_msg(msg, size, "place: need n >= 1 (got %ld), radii and "
                  "an output array", n);
        return -1;
    }
    if (kind != RC_LATTICE_FCC && kind != RC_LATTICE_SC &&
        kind != RC_LATTICE_RANDOM) {
        rc_md_msg(msg, size, "place: unknown placement kind %d", kind);
        return -1;
    }
    if (kind == RC_LATTICE_FCC && b->dim != 3) {
        rc_md_msg(msg, size, "fcc: the lattice is 3-D only; use sc or "
                  "random in 2-D");
        return -1;
    }
    if (rc_md_radii(b->dim, n, radius, &vol, &rmax, &imax)) {
        for (imax = 0; imax < n; ++imax)
            if (!(radius[imax] > 0.0) || !isfinite(radius[imax]))
                break;
        rc_md_msg(msg, size, "%s: radius of particle %ld is %g, not "
                  "positive and finite", name, imax, radius[imax]);
        return -1;
    }
    /* a sphere wider than an edge overlaps its own periodic image or
     * cannot fit between the walls */
    for (k = 0; k < b->dim; ++k)
        if (2.0 * rmax > b->L[k]) {
            rc_md_msg(msg, size, "%s: particle %ld of diameter %.6g is "
                      "wider than box edge %d (%.6g)", name, imax,
                      2.0 * rmax, k, b->L[k]);
            return -1;
        }
    eta = vol / rc_k_box_volume(b);
    if (kind == RC_LATTICE_RANDOM)
        return rc_md_random(b, n, radius, rmax, eta, seed, q, msg, size);
    return rc_md_lattice(kind, b, n, radius, rmax, eta, q, msg, size);
}

void rc_md_maxwell(int dim, long n, const double *mass, double T,
                   unsigned long long seed, double *p)
{
    rc_md_sum P[3], M = {0.0, 0.0}, ke = {0.0, 0.0};
    double v[3], Tnow, s;
    long i;
    int k;
    if (!p || n < 1 || (dim != 2 && dim != 3))
        return;
    for (i = 0; i < n * dim; ++i)
        p[i] = 0.0;
    /* no temperature without n - 1 > 0 degrees of freedom per axis */
    if (n < 2 || !mass || !(T > 0.0) || !isfinite(T))
        return;
    for (i = 0; i < n; ++i)
        if (!(mass[i] > 0.0) || !isfinite(mass[i]))
            return;
    for (k = 0; k < 3; ++k)
        P[k].s = P[k].c = 0.0;
    for (i = 0; i < n; ++i) {
        double sd = sqrt(mass[i] * T);
        for (k = 0; k < dim; ++k) {
            double z = rc_md_normal(seed, (unsigned long long)i,
                                    (unsigned long long)k,
                                    (unsigned long long)RC_MD_STREAM_MAXWELL
                                        << 8);
            p[i * dim + k] = sd * z;
            rc_md_sum_add(&P[k], p[i * dim + k]);
        }
        rc_md_sum_add(&M, mass[i]);
    }
    /* the centre-of-mass velocity: p_i -= m_i P / M zeroes the total */
    for (k = 0; k < dim; ++k)
        v[k] = rc_md_sum_get(&P[k]) / rc_md_sum_get(&M);
    for (i = 0; i < n; ++i)
        for (k = 0; k < dim; ++k) {
            double *pk = &p[i * dim + k];
            *pk -= mass[i] * v[k];
            rc_md_sum_add(&ke, *pk * *pk / mass[i]);
        }
    Tnow = rc_md_sum_get(&ke) / ((double)dim * (double)(n - 1));
    if (!(Tnow > 0.0) || !isfinite(Tnow))
        return;
    s = sqrt(T / Tnow);
    for (i = 0; i < n * dim; ++i)
        p[i] *= s;
}

/* Does name end in suffix? */
static int rc_md_ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcmp(name + n - k, suffix) == 0;
}

int rc_md_read_frame(const char *path, int dim, long frame,
                     struct rc_xyz *x, int *is_h5md, char *msg, size_t size)
{
    /* the content decides; the suffix only for a file HDF5 may still
     * recognise (a user block before the superblock) or that is not
     * there, so that its message comes from the reader the name asks
     * for */
    *is_h5md = rc_h5md_is_hdf5(path) || rc_md_ends_with(path, ".h5md") ||
               rc_md_ends_with(path, ".h5") ||
               rc_md_ends_with(path, ".hdf5");
    if (*is_h5md)
        return rc_h5md_read(path, dim, frame, x, msg, size) == 0 ? 0 : -1;
    return rc_xyz_read(path, dim, frame, x, msg, size);
}

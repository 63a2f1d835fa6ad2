/* Observables of large systems (DESIGN §6): the radial distribution
 * function and the blocking estimate of the standard error of a mean.
 *
 * Rounding: a pair distance is one minimum image and one sqrt (a few
 * ulp), so a pair within a few ulp of a bin edge may land in either bin;
 * g of a bin is one product of exact counts and a shell volume computed
 * from the bin edges (a few ulp).  The blocking sums are two-pass and
 * shifted by the first element so that a constant series gives exactly 0
 * and a series with a large offset loses no digits to it. */
#include "observables.h"

#include <math.h>
#include <stdlib.h>

/* rc_pi_ is POSIX, not C11. */
static const double rc_pi_ = 3.14159265358979323846;

int rc_rdf_init(rc_rdf *r, int dim, int nbins, double rmax)
{
    if (!r)
        return -1;
    r->dim = 0;
    r->nbins = 0;
    r->rmax = 0.0;
    r->hist = NULL;
    r->samples = 0;
    r->n = 0;
    r->volume = 0.0;
    if ((dim != 2 && dim != 3) || nbins < 1 || !(rmax > 0.0) ||
        !isfinite(rmax))
        return -1;
    r->hist = (double *)calloc((size_t)nbins, sizeof(double));
    if (!r->hist)
        return -1;
    r->dim = dim;
    r->nbins = nbins;
    r->rmax = rmax;
    return 0;
}

void rc_rdf_free(rc_rdf *r)
{
    if (!r)
        return;
    free(r->hist);
    r->hist = NULL;
    r->nbins = 0;
    r->samples = 0;
}

/* Pairs at or beyond rmax are skipped, so the caller may pass a superset
 * (a cell list at a larger cutoff, or all pairs).  n and the volume are
 * those of the first sample; later samples are assumed to match (the
 * normalisation has one n and one V, so a changing system would need
 * per-sample weights that this histogram does not keep). */
void rc_rdf_add(rc_rdf *r, const rc_k_box *b, const double *q, long n,
                const int *pi, const int *pj, long npairs)
{
    double inv_dr;
    long p;
    int dim;
    if (!r || !r->hist || !b || (npairs > 0 && (!q || !pi || !pj)))
        return;
    dim = b->dim;
    if (dim != r->dim || npairs < 0)
        return;
    if (r->samples == 0) {
        r->n = n;
        r->volume = rc_k_box_volume(b);
    }
    ++r->samples;
    inv_dr = (double)r->nbins / r->rmax;
    for (p = 0; p < npairs; ++p) {
        double x[3], r2 = 0.0, d;
        long k;
        int i = pi[p], j = pj[p];
        if (i < 0 || j < 0 || i >= n || j >= n)
            continue;
        rc_k_box_delta(b, q + (size_t)i * (size_t)dim,
                       q + (size_t)j * (size_t)dim, x);
        for (k = 0; k < dim; ++k)
            r2 += x[k] * x[k];
        d = sqrt(r2);
        if (!(d < r->rmax))
            continue;
        k = (long)(d * inv_dr);
        if (k >= r->nbins) /* d just below rmax rounding up */
            k = r->nbins - 1;
        r->hist[k] += 1.0;
    }
}

double rc_rdf_value(const rc_rdf *r, int bin)
{
    double dr, r1, r2, shell, norm;
    if (!r || !r->hist || bin < 0 || bin >= r->nbins || r->samples < 1 ||
        r->n < 2 || !(r->volume > 0.0))
        return NAN;
    dr = r->rmax / (double)r->nbins;
    r1 = dr * (double)bin;
    r2 = dr * (double)(bin + 1);
    if (r->dim == 2)
        shell = rc_pi_ * (r2 * r2 - r1 * r1);
    else
        shell = (4.0 / 3.0) * rc_pi_ * (r2 * r2 * r2 - r1 * r1 * r1);
    /* Expected pair count of an ideal gas of n particles in the shell:
     * n(n-1)/2 pairs, each with probability shell / V. */
    norm = (double)r->samples * 0.5 * (double)r->n *
           ((double)(r->n - 1) / r->volume) * shell;
    return r->hist[bin] / norm;
}

int rc_rdf_write(const rc_rdf *r, FILE *f)
{
    double dr;
    int k;
    if (!r || !r->hist || !f)
        return -1;
    if (fprintf(f, "r,g\n") < 0)
        return -1;
    dr = r->rmax / (double)r->nbins;
    for (k = 0; k < r->nbins; ++k)
        if (fprintf(f, "%.10g,%.10g\n", dr * ((double)k + 0.5),
                    rc_rdf_value(r, k)) < 0)
            return -1;
    return 0;
}

/* Biased variance of y[0..m) about its own mean, shifted by y[0]. */
static double rc_var_biased_(const double *y, long m, double *mean)
{
    double s = y[0], acc = 0.0, mu, v = 0.0;
    long i;
    for (i = 0; i < m; ++i)
        acc += y[i] - s;
    mu = s + acc / (double)m;
    for (i = 0; i < m; ++i) {
        double d = y[i] - mu;
        v += d * d;
    }
    if (mean)
        *mean = mu;
    return v / (double)m;
}

double rc_block_stderr(const double *x, long n, double *mean, int *levels)
{
    double err = NAN, mu = NAN, *y = NULL;
    long m, i;
    int used = 0;
    if (!x || n < 1)
        goto done;
    if (n < 2) {
        mu = x[0];
        goto done;
    }
    /* Level 0: the data themselves (the only level when n < 64); the
     * mean is this level's, over all n. */
    err = sqrt(rc_var_biased_(x, n, &mu) / (double)(n - 1));
    used = 1;
    if (n < 64)
        goto done;
    y = (double *)malloc((size_t)(n / 2) * sizeof(double));
    if (!y) {
        err = NAN;
        used = 0;
        goto done;
    }
    /* Level 1 from x (a trailing odd element dropped), the later levels
     * in place: y[i] reads y[2i] and y[2i + 1], both at or after i. */
    m = n / 2;
    for (i = 0; i < m; ++i)
        y[i] = 0.5 * (x[2 * i] + x[2 * i + 1]);
    while (m >= 32) {
        double e = sqrt(rc_var_biased_(y, m, NULL) / (double)(m - 1));
        if (e > err || isnan(e)) /* a NaN level makes the result NaN */
            err = e;
        ++used;
        for (i = 0; i < m / 2; ++i)
            y[i] = 0.5 * (y[2 * i] + y[2 * i + 1]);
        m /= 2;
    }
done:
    free(y);
    if (mean)
        *mean = mu;
    if (levels)
        *levels = used;
    return err;
}

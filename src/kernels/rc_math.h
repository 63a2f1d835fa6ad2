/* One spelling of the math used by kernel bodies, valid on host and
 * device.  Double precision throughout. */
#ifndef RC_MATH_H
#define RC_MATH_H

#include <math.h>

#include "rc_hd.h"

RC_HD static inline double rc_sqrt(double x) { return sqrt(x); }
RC_HD static inline double rc_fabs(double x) { return fabs(x); }
RC_HD static inline double rc_floor(double x) { return floor(x); }
RC_HD static inline double rc_fmax(double a, double b) { return a > b ? a : b; }
RC_HD static inline double rc_fmin(double a, double b) { return a < b ? a : b; }
RC_HD static inline int rc_isfinite(double x) { return isfinite(x) ? 1 : 0; }

/* Dot product of two d-vectors (d <= 3). */
RC_HD static inline double rc_dot(int d, const double *a, const double *b)
{
    double s = 0.0;
    int k;
    for (k = 0; k < d; ++k)
        s += a[k] * b[k];
    return s;
}

#endif

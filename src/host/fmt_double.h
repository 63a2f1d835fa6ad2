/* Doubles as text for the high-volume outputs (members.csv). */
#ifndef RC_FMT_DOUBLE_H
#define RC_FMT_DOUBLE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The shortest decimal text that reads back (strtod) as exactly v, in
 * printf's %g style: 0.03, 2.5e-05, 1e+17, inf, -inf, nan.  Writes at
 * most RC_FMT_DOUBLE_MAX bytes with the NUL into buf and returns the
 * length without it.  Google's double-conversion (Grisu3 with a bignum
 * fallback): several times faster than printf's %.17g, whose exact
 * multi-precision conversion of 10^5 to 10^6 rows of members.csv cost
 * as much as integrating them. */
#define RC_FMT_DOUBLE_MAX 32
int rc_fmt_double(double v, char *buf);

#ifdef __cplusplus
}
#endif
#endif

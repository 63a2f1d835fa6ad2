/* rc_fmt_double (src/host/fmt_double.h), the text of members.csv's
 * numbers, against glibc's strtod and printf:
 *   - every text reads back (strtod) as the same bits: special values,
 *     signed zeros, subnormals, the largest and smallest doubles, powers
 *     of ten around the decimal/exponent switch, and 2x10^5 doubles of
 *     random bits and 5x10^4 of random values in [0, 1) and [0, 1e6)
 *     (a tenth under the sanitizers; printf's shortest-digits search is
 *     the cost);
 *   - its significant digits are those of the shortest %.{0..16}e text
 *     that reads back: as few, and the same (printf rounds correctly,
 *     and the shortest digits that round trip are the correctly rounded
 *     ones);
 *   - the layout is %g's: fixed layouts checked on known values. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/fmt_double.h"
#include "rc_test.h"

static uint64_t g_state = 0x9e3779b97f4a7c15ULL;

static uint64_t next_u64(void) /* splitmix64 */
{
    uint64_t z = (g_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The significant digits of the shortest %.Pe text (P = 0..16) that
 * strtod reads back as v (finite, nonzero) into d. */
static void shortest_printf_digits(double v, char *d, size_t size)
{
    char buf[64], *o = d;
    const char *c;
    int p;
    for (p = 0; p <= 16; ++p) {
        snprintf(buf, sizeof buf, "%.*e", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    for (c = buf; *c && *c != 'e' && (size_t)(o - d) + 1 < size; ++c)
        if (*c >= '0' && *c <= '9')
            *o++ = *c;
    *o = 0;
}

/* The significant digits of a decimal text (no sign, point, exponent,
 * leading or trailing zeros) into d. */
static void text_digits(const char *t, char *d, size_t size)
{
    char *o = d;
    const char *c;
    for (c = t; *c && *c != 'e' && (size_t)(o - d) + 1 < size; ++c)
        if ((*c >= '1' && *c <= '9') || (*c == '0' && o > d))
            *o++ = *c;
    while (o > d && o[-1] == '0')
        --o;
    *o = 0;
}

static long g_checked = 0;

static void check_one(double v)
{
    char got[RC_FMT_DOUBLE_MAX], dg[64], dr[64];
    int n = rc_fmt_double(v, got);
    double back = strtod(got, NULL);
    ++g_checked;
    if (isnan(v)) {
        RC_CHECK(isnan(back) && !strcmp(got, "nan"), "nan -> '%s'", got);
        return;
    }
    RC_CHECK(n == (int)strlen(got) && n < RC_FMT_DOUBLE_MAX,
             "%a: length %d for '%s'", v, n, got);
    RC_CHECK(memcmp(&back, &v, sizeof v) == 0,
             "%a: '%s' reads back as %a", v, got, back);
    if (isinf(v) || v == 0.0)
        return;
    text_digits(got, dg, sizeof dg);
    shortest_printf_digits(v, dr, sizeof dr);
    RC_CHECK(!strcmp(dg, dr), "%a: '%s' has digits %s, printf's shortest %s",
             v, got, dg, dr);
}

static void check_text(double v, const char *want)
{
    char got[RC_FMT_DOUBLE_MAX];
    rc_fmt_double(v, got);
    RC_CHECK(!strcmp(got, want), "%a: '%s', want '%s'", v, got, want);
}

int main(void)
{
#ifdef RICOCHET_SANITIZE_BUILD
    const long nbits = 20000, nvals = 5000;
#else
    const long nbits = 200000, nvals = 50000;
#endif
    long i;
    int e;
    const double special[] = {0.0, -0.0, 1.0, -1.0, 0.1, 0.03, 1.0 / 3.0,
                              2.5e-5, 1e-4, 1e-5, 9.999e-5, 1e16, 1e17,
                              123456789012345680.0, 5e-324, -5e-324,
                              2.2250738585072014e-308, 1.7976931348623157e308,
                              -1.7976931348623157e308, INFINITY, -INFINITY,
                              NAN};
    for (i = 0; i < (long)(sizeof special / sizeof special[0]); ++i)
        check_one(special[i]);
    for (e = -320; e <= 308; ++e) {
        double p = pow(10.0, e);
        check_one(p);
        check_one(nextafter(p, 0.0));
        check_one(nextafter(p, INFINITY));
        check_one(-3.0 * p);
    }
    for (i = 0; i < nbits; ++i) {
        uint64_t u = next_u64();
        double v;
        memcpy(&v, &u, sizeof v);
        check_one(v);
    }
    for (i = 0; i < nvals; ++i) {
        double r = (double)(next_u64() >> 11) * 0x1p-53;
        check_one(r);
        check_one(1e6 * r);
    }
    /* %g's layout */
    check_text(0.03, "0.03");
    check_text(-0.0, "-0");
    check_text(1e-4, "0.0001");
    check_text(2.5e-5, "2.5e-05");
    check_text(1e16, "10000000000000000");
    check_text(1e17, "1e+17");
    check_text(1.5e300, "1.5e+300");
    check_text(INFINITY, "inf");
    check_text(-INFINITY, "-inf");
    printf("test_fmt_double: %ld doubles checked\n", g_checked);
    return rc_test_finish("test_fmt_double");
}

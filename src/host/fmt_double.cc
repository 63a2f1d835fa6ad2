// rc_fmt_double (fmt_double.h) by Google's double-conversion
// (libdouble-conversion-dev): the library's only C++ outside the CUDA
// launchers, a C entry point around one converter.
#include "fmt_double.h"

#include <double-conversion/double-to-string.h>

extern "C" int rc_fmt_double(double v, char *buf)
{
    // %g's layout: decimal for exponents -4 .. 16 (printf's %.17g switches
    // to an exponent at 1e17 and at 1e-5), an exponent of at least two
    // digits with its sign (2.5e-05, 1e+17)
    static const double_conversion::DoubleToStringConverter conv(
        double_conversion::DoubleToStringConverter::
            EMIT_POSITIVE_EXPONENT_SIGN,
        "inf", "nan", 'e', -4, 17, 0, 0, 2);
    double_conversion::StringBuilder sb(buf, RC_FMT_DOUBLE_MAX);
    conv.ToShortest(v, &sb);
    int n = sb.position();
    sb.Finalize();
    return n;
}

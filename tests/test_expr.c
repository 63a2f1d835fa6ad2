/* Expressions through libmatheval (src/host/expr.c): values and symbolic
 * derivatives against hand-derived formulas, the errors a scenario author
 * meets, and compiling on many threads at once (the ensemble case). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "host/expr.h"
#include "rc_test.h"

/* round-off of a few operations on O(1) numbers; libmatheval evaluates in
 * another order than the C formulas below */
#define TOL 1e-14

static void test_values_and_derivatives(void)
{
    static const char *const names[] = {"y", "theta", "m2", "L"};
    char msg[512];
    /* the vertical cart-pendulum's potential of seed 001 §5.1 */
    rc_expr *V = rc_expr_compile("(1 + m2)*10*y - m2*10*L*cos(theta)", 4,
                                 names, msg, sizeof msg);
    rc_expr *d1, *d2, *d3;
    double x[4] = {0.7, 0.3, 0.2, 2.0};
    RC_CHECK(V != NULL, "compile: %s", msg);
    if (!V)
        return;
    RC_CHECK(rc_test_close(rc_expr_eval(V, x),
                           1.2 * 10 * 0.7 - 0.2 * 10 * 2 * cos(0.3), TOL, TOL),
             "V = %.17g", rc_expr_eval(V, x));
    d1 = rc_expr_derivative(V, 1);
    d2 = d1 ? rc_expr_derivative(d1, 1) : NULL;
    d3 = d2 ? rc_expr_derivative(d2, 1) : NULL;
    RC_CHECK(d1 && d2 && d3, "derivatives");
    if (d3) {
        double s = sin(0.3), c = cos(0.3);
        RC_CHECK(rc_test_close(rc_expr_eval(d1, x), 0.2 * 10 * 2 * s, TOL, TOL),
                 "dV/dtheta = %.17g", rc_expr_eval(d1, x));
        RC_CHECK(rc_test_close(rc_expr_eval(d2, x), 0.2 * 10 * 2 * c, TOL, TOL),
                 "d2V/dtheta2 = %.17g", rc_expr_eval(d2, x));
        RC_CHECK(rc_test_close(rc_expr_eval(d3, x), -0.2 * 10 * 2 * s, TOL,
                               TOL),
                 "d3V/dtheta3 = %.17g", rc_expr_eval(d3, x));
    }
    RC_CHECK(!rc_expr_independent_of(V, 0) && !rc_expr_independent_of(V, 1),
             "V mentions y and theta");
    {
        rc_expr *m = rc_expr_compile("m2*L^2", 4, names, msg, sizeof msg);
        RC_CHECK(m && rc_expr_independent_of(m, 0) &&
                     rc_expr_independent_of(m, 1),
                 "m2*L^2 mentions no coordinate");
        rc_expr_free(m);
    }
    rc_expr_free(d3);
    rc_expr_free(d2);
    rc_expr_free(d1);
    rc_expr_free(V);
}

/* msg must contain `part` after a failed compile of `text`. */
static void expect_error(const char *text, const char *part)
{
    static const char *const names[] = {"x", "k"};
    char msg[512] = "";
    rc_expr *e = rc_expr_compile(text, 2, names, msg, sizeof msg);
    RC_CHECK(e == NULL && strstr(msg, part) != NULL,
             "'%s' should fail with '%s', got %s", text, part,
             e ? "success" : msg);
    rc_expr_free(e);
}

static void test_errors(void)
{
    static const char *const bad_name[] = {"x", "pi"};
    char msg[512] = "", big[RC_EXPR_MAX_LENGTH + 8];
    expect_error("k*z", "unknown name 'z'");
    expect_error("k*(x", "cannot parse");
    expect_error("sin(x, k)", "character ','");
    expect_error("x @ k", "character '@'");
    expect_error("1e999*x", "too large");
    expect_error("", "empty");
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    expect_error(big, "at most");
    RC_CHECK(rc_expr_compile("x", 2, bad_name, msg, sizeof msg) == NULL &&
                 strstr(msg, "constant") != NULL,
             "a variable named pi is refused: %s", msg);
}

/* Many threads compiling and evaluating their own copies at once: the
 * values must be what one thread computes (the parser's globals are
 * serialized inside expr.c). */
static void test_threads(void)
{
    static const char *const names[] = {"x", "k"};
    int bad = 0, i;
#pragma omp parallel for num_threads(4) reduction(+ : bad)
    for (i = 0; i < 400; ++i) {
        char msg[256], text[64];
        rc_expr *e, *d;
        double v[2];
        snprintf(text, sizeof text, "k*x^3 + %d*sin(x)", i);
        e = rc_expr_compile(text, 2, names, msg, sizeof msg);
        d = e ? rc_expr_derivative(e, 0) : NULL;
        v[0] = 0.1 * (i % 7);
        v[1] = 2.0;
        if (!e || !d ||
            !rc_test_close(rc_expr_eval(e, v),
                           2.0 * pow(v[0], 3) + i * sin(v[0]), TOL, TOL) ||
            !rc_test_close(rc_expr_eval(d, v),
                           6.0 * v[0] * v[0] + i * cos(v[0]), TOL, TOL))
            ++bad;
        rc_expr_free(d);
        rc_expr_free(e);
    }
    RC_CHECK(bad == 0, "%d of 400 threaded compilations wrong", bad);
}

int main(void)
{
    test_values_and_derivatives();
    test_errors();
    test_threads();
    return rc_test_finish("test_expr");
}

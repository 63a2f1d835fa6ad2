/* Expressions of named variables, parsed, evaluated and differentiated
 * symbolically by GNU libmatheval (DESIGN §9): the `model:` blocks'
 * user-written M(q), V(q), g(q), H(q, p, λ).  CPU only.
 *
 * An expression is compiled against a fixed, ordered list of variable
 * names (coordinates, momenta, multipliers, parameters); it is evaluated
 * with a vector of values in that order.  A name outside the list is an
 * error at compile time, so a typo in a scenario is found when it is
 * loaded, not when the run starts.  Syntax (libmatheval's): + - * / ^,
 * parentheses, numbers, and the functions exp log sqrt sin cos tan cot
 * sec csc asin acos atan acot asec acsc sinh cosh tanh coth sech csch
 * asinh acosh atanh acoth asech acsch abs step delta nandelta erf, and
 * the constants e, pi and their kin (log2e, ln2, sqrt2, ...).
 *
 * libmatheval keeps variable values inside the expression while it
 * evaluates: one rc_expr must not be evaluated from two threads at once.
 * Code that runs members on threads compiles one copy per thread
 * (compiling, differentiating and freeing are serialized inside: the
 * parser keeps global state).  Characters outside the language and
 * number literals that overflow are refused before libmatheval sees
 * them (its lexer would echo the one to stdout, its parser keep the
 * other as inf).
 *
 * libmatheval leaks a few hundred bytes on a text it cannot parse; the
 * sanitizer builds suppress that (tests/lsan.supp). */
#ifndef RC_EXPR_H
#define RC_EXPR_H

#include <stddef.h>

typedef struct rc_expr rc_expr;

/* Longest expression text accepted (the trees are walked recursively). */
#define RC_EXPR_MAX_LENGTH 4096

/* Compile `text` over the nvars names (borrowed: they must outlive the
 * expression and its derivatives).  NULL on failure with a message in
 * msg ("cannot parse ...", "unknown name 'x2' (known: ...)"). */
rc_expr *rc_expr_compile(const char *text, int nvars,
                         const char *const *names, char *msg, size_t msgsize);
/* ∂e/∂names[var], simplified by libmatheval; NULL when out of memory. */
rc_expr *rc_expr_derivative(const rc_expr *e, int var);
/* Value at vals[nvars] (in the order of the names). */
double rc_expr_eval(const rc_expr *e, const double *vals);
/* The expression's text as libmatheval prints it (for messages); owned
 * by e. */
const char *rc_expr_text(const rc_expr *e);
/* 1 when the expression does not mention variable `var` (a syntactic
 * test: libmatheval does not simplify 0*x away). */
int rc_expr_independent_of(const rc_expr *e, int var);
void rc_expr_free(rc_expr *e);

#endif

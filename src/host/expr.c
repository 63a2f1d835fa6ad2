/* rc_expr over GNU libmatheval (expr.h). */
#include "expr.h"

#include <ctype.h>
#include <math.h>
#include <matheval.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libmatheval's parser (flex and bison) keeps its state in globals, and
 * derivatives are built through it too: one at a time.  Evaluation only
 * reads the expression's own tree and symbol table. */
static pthread_mutex_t rc_expr_lock = PTHREAD_MUTEX_INITIALIZER;

struct rc_expr {
    void *ev;                 /* libmatheval evaluator */
    int nvars;
    const char *const *names; /* borrowed */
    char **call_names;        /* libmatheval wants char ** */
    int *used;                /* [nvars]: variable appears in the tree */
};

static rc_expr *rc_expr_wrap(void *ev, int nvars, const char *const *names)
{
    rc_expr *e = calloc(1, sizeof *e);
    char **vars = NULL;
    int count = 0, k, j;
    if (!e) {
        evaluator_destroy(ev);
        return NULL;
    }
    e->ev = ev;
    e->nvars = nvars;
    e->names = names;
    e->call_names = calloc((size_t)(nvars > 0 ? nvars : 1), sizeof(char *));
    e->used = calloc((size_t)(nvars > 0 ? nvars : 1), sizeof(int));
    if (!e->call_names || !e->used) {
        rc_expr_free(e);
        return NULL;
    }
    for (k = 0; k < nvars; ++k)
        e->call_names[k] = (char *)names[k];
    evaluator_get_variables(ev, &vars, &count);
    for (j = 0; j < count; ++j)
        for (k = 0; k < nvars; ++k)
            if (!strcmp(vars[j], names[k]))
                e->used[k] = 1;
    return e;
}

/* libmatheval's own constants, which are not variables. */
static int rc_expr_is_constant(const char *s)
{
    static const char *const c[] = {"e",      "log2e", "log10e", "ln2",
                                    "ln10",   "pi",    "pi_2",   "pi_4",
                                    "1_pi",   "2_pi",  "2_sqrtpi", "sqrt2",
                                    "sqrt1_2", NULL};
    int k;
    for (k = 0; c[k]; ++k)
        if (!strcmp(s, c[k]))
            return 1;
    return 0;
}

/* What libmatheval would mishandle rather than refuse: characters its
 * lexer does not know (it echoes them to stdout and goes on) and number
 * literals that overflow to infinity.  1 with msg filled when text has
 * one. */
static int rc_expr_text_problem(const char *text, char *msg, size_t msgsize)
{
    const char *c;
    if (strlen(text) > RC_EXPR_MAX_LENGTH) {
        /* libmatheval's trees are walked recursively: bound their depth */
        if (msg)
            snprintf(msg, msgsize,
                     "an expression of %zu characters; at most %d",
                     strlen(text), RC_EXPR_MAX_LENGTH);
        return 1;
    }
    for (c = text; *c; ++c) {
        if (isalnum((unsigned char)*c) || strchr("_.+-*/^() \t", *c))
            continue;
        if (msg)
            snprintf(msg, msgsize,
                     "the expression '%s' has a character '%c' that is not "
                     "part of the language (names, numbers, + - * / ^, "
                     "parentheses, function calls of one argument)",
                     text, *c);
        return 1;
    }
    for (c = text; *c; ++c) {
        /* a number literal starts with a digit or '.' not inside a name */
        if ((isdigit((unsigned char)*c) || *c == '.') &&
            (c == text ||
             !(isalnum((unsigned char)c[-1]) || c[-1] == '_' ||
               c[-1] == '.'))) {
            char *end;
            double v = strtod(c, &end);
            if (!isfinite(v)) {
                if (msg)
                    snprintf(msg, msgsize,
                             "the number '%.*s' in '%s' is too large for a "
                             "double",
                             (int)(end - c), c, text);
                return 1;
            }
            if (end > c)
                c = end - 1;
        }
    }
    return 0;
}

rc_expr *rc_expr_compile(const char *text, int nvars,
                         const char *const *names, char *msg, size_t msgsize)
{
    void *ev;
    char *copy, **vars = NULL;
    int count = 0, j, k;
    if (msg && msgsize)
        msg[0] = '\0';
    for (k = 0; k < nvars; ++k)
        if (rc_expr_is_constant(names[k])) {
            if (msg)
                snprintf(msg, msgsize,
                         "the name '%s' is a constant of the expression "
                         "language; rename it",
                         names[k]);
            return NULL;
        }
    if (!text || !*text) {
        if (msg)
            snprintf(msg, msgsize, "empty expression");
        return NULL;
    }
    if (rc_expr_text_problem(text, msg, msgsize))
        return NULL;
    copy = malloc(strlen(text) + 1);
    if (!copy) {
        if (msg)
            snprintf(msg, msgsize, "out of memory");
        return NULL;
    }
    strcpy(copy, text);
    pthread_mutex_lock(&rc_expr_lock);
    ev = evaluator_create(copy);
    pthread_mutex_unlock(&rc_expr_lock);
    free(copy);
    if (!ev) {
        if (msg)
            snprintf(msg, msgsize,
                     "cannot parse the expression '%s' (operators + - * / ^, "
                     "functions such as sin, cos, exp, sqrt)",
                     text);
        return NULL;
    }
    evaluator_get_variables(ev, &vars, &count);
    for (j = 0; j < count; ++j) {
        int found = 0;
        for (k = 0; k < nvars; ++k)
            if (!strcmp(vars[j], names[k]))
                found = 1;
        if (!found) {
            if (msg) {
                size_t len;
                snprintf(msg, msgsize, "unknown name '%s' in '%s' (known:",
                         vars[j], text);
                for (k = 0; k < nvars; ++k) {
                    len = strlen(msg);
                    if (len + 2 < msgsize)
                        snprintf(msg + len, msgsize - len, " %s", names[k]);
                }
                len = strlen(msg);
                if (len + 2 < msgsize)
                    snprintf(msg + len, msgsize - len, ")");
            }
            evaluator_destroy(ev);
            return NULL;
        }
    }
    {
        rc_expr *e = rc_expr_wrap(ev, nvars, names);
        if (!e && msg)
            snprintf(msg, msgsize, "out of memory");
        return e;
    }
}

rc_expr *rc_expr_derivative(const rc_expr *e, int var)
{
    void *d;
    if (!e || var < 0 || var >= e->nvars)
        return NULL;
    pthread_mutex_lock(&rc_expr_lock);
    d = evaluator_derivative(e->ev, e->call_names[var]);
    pthread_mutex_unlock(&rc_expr_lock);
    return d ? rc_expr_wrap(d, e->nvars, e->names) : NULL;
}

double rc_expr_eval(const rc_expr *e, const double *vals)
{
    /* libmatheval's evaluate takes values by name for the variables it
     * was given; names the tree does not use are ignored. */
    return evaluator_evaluate(e->ev, e->nvars, e->call_names, (double *)vals);
}

const char *rc_expr_text(const rc_expr *e)
{
    const char *t;
    pthread_mutex_lock(&rc_expr_lock);
    t = evaluator_get_string(e->ev);
    pthread_mutex_unlock(&rc_expr_lock);
    return t;
}

int rc_expr_independent_of(const rc_expr *e, int var)
{
    return var < 0 || var >= e->nvars || !e->used[var];
}

void rc_expr_free(rc_expr *e)
{
    if (!e)
        return;
    if (e->ev) {
        pthread_mutex_lock(&rc_expr_lock);
        evaluator_destroy(e->ev);
        pthread_mutex_unlock(&rc_expr_lock);
    }
    free(e->call_names);
    free(e->used);
    free(e);
}

/* Checked readers of scenario YAML nodes (scenario_read.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario_read.h"

/* ------------------------------------------------------------------ */
/* Checked readers.  `field` is the full path of the node being read.   */

rc_status rc_bad(rc_error *err, const rc_ynode *node,
                 const char *field, const char *fmt, ...)
{
    va_list ap;
    err->status = RC_ERR_PARSE;
    snprintf(err->file, sizeof err->file, "%s",
             node && node->source ? node->source : "");
    err->line = node ? node->line : 0;
    err->column = node ? node->column : 0;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return RC_ERR_PARSE;
}

const char *rc_kind_name(const rc_ynode *node)
{
    if (node->kind == RC_YNODE_MAPPING)
        return "a mapping";
    if (node->kind == RC_YNODE_SEQUENCE)
        return "a list";
    return "a scalar";
}

rc_status rc_get_number(rc_error *err, const rc_ynode *node,
                        const char *field, double *out)
{
    char *end;
    double v;
    const char *s = NULL;
    if (node->kind != RC_YNODE_SCALAR)
        return rc_bad(err, node, field, "expected a number, got %s",
                      rc_kind_name(node));
    s = node->value;
    if (!strcmp(s, ".inf") || !strcmp(s, ".Inf") || !strcmp(s, ".INF") ||
        !strcmp(s, "-.inf") || !strcmp(s, "+.inf") || !strcmp(s, ".nan") ||
        !strcmp(s, ".NaN") || !strcmp(s, ".NAN"))
        return rc_bad(err, node, field, "must be a finite number, got '%s'",
                      s);
    if (node->quoted || !*s)
        return rc_bad(err, node, field, "expected a number, got '%s'", s);
    v = strtod(s, &end);
    while (*end == ' ')
        ++end;
    if (*end != '\0')
        return rc_bad(err, node, field, "expected a number, got '%s'", s);
    if (!isfinite(v))
        return rc_bad(err, node, field, "must be a finite number, got '%s'",
                      s);
    *out = v;
    return RC_OK;
}

rc_status rc_get_long(rc_error *err, const rc_ynode *node,
                      const char *field, long lo, long hi, long *out)
{
    char *end;
    long v;
    if (node->kind != RC_YNODE_SCALAR || node->quoted || !node->value[0])
        return rc_bad(err, node, field, "expected an integer, got %s",
                      node->kind == RC_YNODE_SCALAR ? node->value
                                                    : rc_kind_name(node));
    v = strtol(node->value, &end, 10);
    if (*end != '\0')
        return rc_bad(err, node, field, "expected an integer, got '%s'",
                      node->value);
    if (v < lo || v > hi)
        return rc_bad(err, node, field, "must be between %ld and %ld, got %ld",
                      lo, hi, v);
    *out = v;
    return RC_OK;
}

rc_status rc_get_string(rc_error *err, const rc_ynode *node,
                        const char *field, const char **out)
{
    if (node->kind != RC_YNODE_SCALAR)
        return rc_bad(err, node, field, "expected a string, got %s",
                      rc_kind_name(node));
    *out = node->value;
    return RC_OK;
}

/* A vector of exactly `dim` finite numbers. */
rc_status rc_get_vector(rc_error *err, const rc_ynode *node,
                        const char *field, int dim, double *out)
{
    int k;
    if (node->kind == RC_YNODE_SEQUENCE && node->n != dim)
        return rc_bad(err, node, field,
                      "expected %d numbers (dimension is %d), got %d", dim,
                      dim, node->n);
    for (k = 0; k < 3; ++k)
        out[k] = 0.0;
    return rc_get_numbers(err, node, field, dim, out);
}

rc_status rc_get_numbers(rc_error *err, const rc_ynode *node,
                         const char *field, int n, double *out)
{
    int k;
    char sub[200];
    if (node->kind != RC_YNODE_SEQUENCE)
        return rc_bad(err, node, field,
                      "expected a list of %d numbers, got %s", n,
                      rc_kind_name(node));
    if (node->n != n)
        return rc_bad(err, node, field, "expected %d numbers, got %d", n,
                      node->n);
    for (k = 0; k < n; ++k) {
        snprintf(sub, sizeof sub, "%s[%d]", field, k);
        if (rc_get_number(err, node->items[k], sub, &out[k]))
            return RC_ERR_PARSE;
    }
    return RC_OK;
}

/* Every key of `map` must be one of `allowed` (NULL-terminated). */
rc_status rc_check_keys(rc_error *err, const rc_ynode *map,
                        const char *field, const char *const *allowed)
{
    int k, a;
    char sub[200], list[400];
    for (k = 0; k < map->n; ++k) {
        int ok = 0;
        for (a = 0; allowed[a]; ++a)
            if (!strcmp(map->keys[k]->value, allowed[a]))
                ok = 1;
        if (ok)
            continue;
        list[0] = '\0';
        for (a = 0; allowed[a]; ++a) {
            strncat(list, a ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, allowed[a], sizeof list - strlen(list) - 1);
        }
        snprintf(sub, sizeof sub, "%s%s%s", field, field[0] ? "." : "",
                 map->keys[k]->value);
        return rc_bad(err, map->keys[k], sub, "unknown key '%s' (allowed: %s)",
                      map->keys[k]->value, list);
    }
    return RC_OK;
}

rc_status rc_expect_mapping(rc_error *err, const rc_ynode *node,
                            const char *field)
{
    if (node->kind != RC_YNODE_MAPPING)
        return rc_bad(err, node, field, "expected a mapping, got %s",
                      rc_kind_name(node));
    return RC_OK;
}

/* The value of a required key; error points at the enclosing mapping. */
rc_status rc_require(rc_error *err, const rc_ynode *map,
                     const char *key, const char *field,
                     rc_ynode **out)
{
    char sub[200];
    *out = rc_ynode_get(map, key, NULL);
    if (*out)
        return RC_OK;
    snprintf(sub, sizeof sub, "%s%s%s", field, field[0] ? "." : "", key);
    return rc_bad(err, map, sub, "missing required key '%s'", key);
}

void rc_join(char *out, size_t size, const char *field, const char *key)
{
    snprintf(out, size, "%s%s%s", field, field[0] ? "." : "", key);
}

/* Optional number: leaves *out untouched when the key is absent. */
rc_status rc_opt_number(rc_error *err, const rc_ynode *map,
                        const char *key, const char *field,
                        double *out)
{
    char sub[200];
    rc_ynode *v = rc_ynode_get(map, key, NULL);
    if (!v)
        return RC_OK;
    rc_join(sub, sizeof sub, field, key);
    return rc_get_number(err, v, sub, out);
}

rc_status rc_req_number(rc_error *err, const rc_ynode *map,
                        const char *key, const char *field,
                        double *out)
{
    char sub[200];
    rc_ynode *v;
    if (rc_require(err, map, key, field, &v))
        return RC_ERR_PARSE;
    rc_join(sub, sizeof sub, field, key);
    return rc_get_number(err, v, sub, out);
}

/* Optional boolean `key` (true/false): leaves *out untouched if absent. */
rc_status rc_opt_bool(rc_error *err, const rc_ynode *map,
                      const char *key, const char *field, int *out)
{
    char sub[200];
    rc_ynode *v = rc_ynode_get(map, key, NULL);
    if (!v)
        return RC_OK;
    rc_join(sub, sizeof sub, field, key);
    if (v->kind == RC_YNODE_SCALAR && !v->quoted &&
        (!strcmp(v->value, "true") || !strcmp(v->value, "false"))) {
        *out = !strcmp(v->value, "true");
        return RC_OK;
    }
    return rc_bad(err, v, sub, "expected true or false, got %s",
                  v->kind == RC_YNODE_SCALAR ? v->value : rc_kind_name(v));
}

/* Optional positive number `key` of map: leaves *out untouched if
 * absent.  field is the full path of the key. */
rc_status rc_opt_positive(rc_error *err, const rc_ynode *map,
                          const char *key, const char *field,
                          double *out)
{
    rc_ynode *v = rc_ynode_get(map, key, NULL);
    if (!v)
        return RC_OK;
    if (rc_get_number(err, v, field, out))
        return RC_ERR_PARSE;
    if (!(*out > 0.0))
        return rc_bad(err, v, field, "must be positive, got %g", *out);
    return RC_OK;
}

/* Item i of a typed list (potentials, constraints): a mapping with a
 * string `type`.  field receives "list[i]", sub "list[i].type". */
rc_status rc_typed_item(rc_error *err, const rc_ynode *item,
                        const char *list, int i, char *field,
                        size_t fsize, char *sub, size_t ssize,
                        rc_ynode **tn, const char **type)
{
    snprintf(field, fsize, "%s[%d]", list, i);
    if (rc_expect_mapping(err, item, field) ||
        rc_require(err, item, "type", field, tn))
        return RC_ERR_PARSE;
    rc_join(sub, ssize, field, "type");
    return rc_get_string(err, *tn, sub, type);
}

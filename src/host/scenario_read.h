/* Checked readers of scenario YAML nodes, shared by the scenario loader
 * and the `model:` block (src/host/model/).  `field` is the full path of
 * the node being read; every failure fills err with the file, line,
 * column and field and returns RC_ERR_PARSE. */
#ifndef RC_SCENARIO_READ_H
#define RC_SCENARIO_READ_H

#include <stddef.h>

#include "ricochet/scenario.h"
#include "yaml_tree.h"

rc_status rc_bad(rc_error *err, const rc_ynode *node,
                 const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

const char *rc_kind_name(const rc_ynode *node);

rc_status rc_get_number(rc_error *err, const rc_ynode *node,
                        const char *field, double *out);

rc_status rc_get_long(rc_error *err, const rc_ynode *node,
                      const char *field, long lo, long hi, long *out);

rc_status rc_get_string(rc_error *err, const rc_ynode *node,
                        const char *field, const char **out);

/* A particle vector: exactly `dim` finite numbers into out[0..dim), the
 * rest of out[0..3) zeroed (out holds 3). */
rc_status rc_get_vector(rc_error *err, const rc_ynode *node,
                        const char *field, int dim, double *out);
/* Exactly n finite numbers into out[0..n) (nothing else written). */
rc_status rc_get_numbers(rc_error *err, const rc_ynode *node,
                         const char *field, int n, double *out);

rc_status rc_check_keys(rc_error *err, const rc_ynode *map,
                        const char *field, const char *const *allowed);

rc_status rc_expect_mapping(rc_error *err, const rc_ynode *node,
                            const char *field);

rc_status rc_require(rc_error *err, const rc_ynode *map,
                     const char *key, const char *field,
                     rc_ynode **out);

void rc_join(char *out, size_t size, const char *field, const char *key);

rc_status rc_opt_number(rc_error *err, const rc_ynode *map,
                        const char *key, const char *field,
                        double *out);

rc_status rc_req_number(rc_error *err, const rc_ynode *map,
                        const char *key, const char *field,
                        double *out);

rc_status rc_opt_bool(rc_error *err, const rc_ynode *map,
                      const char *key, const char *field, int *out);

rc_status rc_opt_positive(rc_error *err, const rc_ynode *map,
                          const char *key, const char *field,
                          double *out);

rc_status rc_typed_item(rc_error *err, const rc_ynode *item,
                        const char *list, int i, char *field,
                        size_t fsize, char *sub, size_t ssize,
                        rc_ynode **tn, const char **type);

#endif

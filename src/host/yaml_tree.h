/* A small in-memory tree of a YAML document, built with libyaml's event
 * parser, that keeps the line and column of every node and key so that
 * scenario errors can point at them, and that `--set` overrides can edit
 * before the typed scenario is read from it. */
#ifndef RC_YAML_TREE_H
#define RC_YAML_TREE_H

#include "ricochet/scenario.h"

typedef enum rc_ynode_kind {
    RC_YNODE_SCALAR = 0,
    RC_YNODE_SEQUENCE,
    RC_YNODE_MAPPING
} rc_ynode_kind;

typedef struct rc_ynode rc_ynode;
struct rc_ynode {
    rc_ynode_kind kind;
    char *value;        /* scalar text (SCALAR only) */
    int quoted;         /* scalar was quoted: a string, never a number */
    int line, column;   /* 1-based position of the node */
    const char *source; /* borrowed label: the file path or "--set" */
    int n, cap;         /* items (SEQUENCE) or pairs (MAPPING) */
    rc_ynode **items;   /* sequence items / mapping values */
    rc_ynode **keys;    /* mapping keys (scalar nodes) */
};

/* Parse the first document of a file/string.  `source` must outlive the
 * tree.  NULL on failure with *err filled.  An empty document gives an
 * empty mapping. */
rc_ynode *rc_yaml_load_file(const char *path, rc_error *err);
rc_ynode *rc_yaml_load_string(const char *text, const char *source,
                              rc_error *err);
void rc_ynode_free(rc_ynode *node);
/* Deep copy (sources stay borrowed); NULL when out of memory. */
rc_ynode *rc_ynode_clone(const rc_ynode *node);

/* Value of `key` in a mapping (NULL when absent or not a mapping); the
 * key node itself through *key_out when non-NULL. */
rc_ynode *rc_ynode_get(const rc_ynode *map, const char *key,
                       rc_ynode **key_out);

/* Apply one override "PATH=VALUE" to the tree: walk PATH (keys separated
 * by '.', sequence indices as [k]), creating missing mapping keys, and
 * replace the target by VALUE parsed as YAML. */
rc_status rc_yaml_apply_override(rc_ynode *root, const char *assignment,
                                 rc_error *err);

#endif

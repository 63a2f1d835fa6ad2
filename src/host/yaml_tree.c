/* YAML to rc_ynode tree through libyaml's event API. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "yaml_tree.h"

static void rc_err_set(rc_error *err, rc_status st, const char *file,
                       int line, int column, const char *field,
                       const char *msg)
{
    if (!err)
        return;
    err->status = st;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    err->column = column;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    snprintf(err->message, sizeof err->message, "%s", msg);
}

static rc_ynode *rc_ynode_new(rc_ynode_kind kind, const yaml_mark_t *mark,
                              const char *source)
{
    rc_ynode *n = (rc_ynode *)calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->kind = kind;
    n->line = mark ? (int)mark->line + 1 : 0;
    n->column = mark ? (int)mark->column + 1 : 0;
    n->source = source;
    return n;
}

void rc_ynode_free(rc_ynode *node)
{
    int k;
    if (!node)
        return;
    for (k = 0; k < node->n; ++k) {
        rc_ynode_free(node->items[k]);
        if (node->keys)
            rc_ynode_free(node->keys[k]);
    }
    free(node->items);
    free(node->keys);
    free(node->value);
    free(node);
}

static int rc_ynode_push(rc_ynode *parent, rc_ynode *key, rc_ynode *value);

rc_ynode *rc_ynode_clone(const rc_ynode *node)
{
    rc_ynode *c;
    int k;
    if (!node)
        return NULL;
    c = (rc_ynode *)calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->kind = node->kind;
    c->quoted = node->quoted;
    c->line = node->line;
    c->column = node->column;
    c->source = node->source;
    if (node->value) {
        size_t len = strlen(node->value);
        c->value = (char *)malloc(len + 1);
        if (!c->value) {
            free(c);
            return NULL;
        }
        memcpy(c->value, node->value, len + 1);
    }
    for (k = 0; k < node->n; ++k) {
        rc_ynode *key = node->keys ? rc_ynode_clone(node->keys[k]) : NULL;
        rc_ynode *val = rc_ynode_clone(node->items[k]);
        if (!val || (node->keys && !key) || rc_ynode_push(c, key, val)) {
            rc_ynode_free(key);
            rc_ynode_free(val);
            rc_ynode_free(c);
            return NULL;
        }
    }
    return c;
}

static int rc_ynode_push(rc_ynode *parent, rc_ynode *key, rc_ynode *value)
{
    if (parent->n == parent->cap) {
        int cap = parent->cap ? 2 * parent->cap : 8;
        rc_ynode **items =
            (rc_ynode **)realloc(parent->items, sizeof(rc_ynode *) * (size_t)cap);
        if (!items)
            return -1;
        parent->items = items;
        if (parent->kind == RC_YNODE_MAPPING) {
            rc_ynode **keys = (rc_ynode **)realloc(
                parent->keys, sizeof(rc_ynode *) * (size_t)cap);
            if (!keys)
                return -1;
            parent->keys = keys;
        }
        parent->cap = cap;
    }
    parent->items[parent->n] = value;
    if (parent->kind == RC_YNODE_MAPPING)
        parent->keys[parent->n] = key;
    parent->n++;
    return 0;
}

rc_ynode *rc_ynode_get(const rc_ynode *map, const char *key,
                       rc_ynode **key_out)
{
    int k;
    if (key_out)
        *key_out = NULL;
    if (!map || map->kind != RC_YNODE_MAPPING)
        return NULL;
    for (k = 0; k < map->n; ++k)
        if (strcmp(map->keys[k]->value, key) == 0) {
            if (key_out)
                *key_out = map->keys[k];
            return map->items[k];
        }
    return NULL;
}

/* The keys of one mapping being built, as an open-addressing hash set of
 * their indices, so that the duplicate check costs O(1) per key instead
 * of a scan of the keys before it (quadratic: 200 000 keys took minutes). */
typedef struct rc_keyset {
    int *slot;   /* [cap] index + 1 of a key in the mapping, 0 empty */
    size_t cap;  /* a power of two, at least twice the keys held */
} rc_keyset;

static size_t rc_key_hash(const char *s)
{
    /* FNV-1a, 64-bit */
    unsigned long long h = 1469598103934665603ULL;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return (size_t)h;
}

/* The slot of `key` in set (holding map's keys), or the empty slot where
 * it would go. */
static size_t rc_keyset_find(const rc_keyset *set, const rc_ynode *map,
                             const char *key)
{
    size_t i = rc_key_hash(key) & (set->cap - 1);
    while (set->slot[i] &&
           strcmp(map->keys[set->slot[i] - 1]->value, key) != 0)
        i = (i + 1) & (set->cap - 1);
    return i;
}

/* Make room for map->n + 1 keys (rehashing the map's keys); -1 when out
 * of memory. */
static int rc_keyset_reserve(rc_keyset *set, const rc_ynode *map)
{
    size_t cap = set->cap ? set->cap : 16;
    int k;
    int *slot;
    while ((size_t)map->n + 1 > cap / 2)
        cap *= 2;
    if (cap == set->cap)
        return 0;
    slot = (int *)calloc(cap, sizeof(int));
    if (!slot)
        return -1;
    free(set->slot);
    set->slot = slot;
    set->cap = cap;
    for (k = 0; k < map->n; ++k)
        set->slot[rc_keyset_find(set, map, map->keys[k]->value)] = k + 1;
    return 0;
}

typedef struct rc_yparse {
    yaml_parser_t parser;
    const char *source;
    rc_error *err;
} rc_yparse;

static int rc_next(rc_yparse *ps, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&ps->parser, ev)) {
        char msg[400];
        snprintf(msg, sizeof msg, "YAML syntax error: %s%s%s",
                 ps->parser.problem ? ps->parser.problem : "unknown problem",
                 ps->parser.context ? " " : "",
                 ps->parser.context ? ps->parser.context : "");
        rc_err_set(ps->err, RC_ERR_PARSE, ps->source,
                   (int)ps->parser.problem_mark.line + 1,
                   (int)ps->parser.problem_mark.column + 1, "", msg);
        return -1;
    }
    return 0;
}

/* Build the node that starts with event *ev (consumed here).  `path` is
 * the node's field path ("integrator", "particles[1]"; "" for the root),
 * used to name a duplicate key with its full path. */
static rc_ynode *rc_build(rc_yparse *ps, yaml_event_t *ev, int depth,
                          const char *path)
{
    rc_ynode *node = NULL;
    yaml_event_t sub;
    char child[256];
    rc_keyset keys;
    keys.slot = NULL;
    keys.cap = 0;
    if (depth > 64) {
        rc_err_set(ps->err, RC_ERR_PARSE, ps->source,
                   (int)ev->start_mark.line + 1,
                   (int)ev->start_mark.column + 1, "",
                   "YAML nesting deeper than 64 levels");
        yaml_event_delete(ev);
        return NULL;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        node = rc_ynode_new(RC_YNODE_SCALAR, &ev->start_mark, ps->source);
        if (node) {
            node->value = (char *)malloc(ev->data.scalar.length + 1);
            if (node->value) {
                memcpy(node->value, ev->data.scalar.value,
                       ev->data.scalar.length);
                node->value[ev->data.scalar.length] = '\0';
            }
            node->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        }
        yaml_event_delete(ev);
        if (!node || !node->value) {
            rc_ynode_free(node);
            rc_err_set(ps->err, RC_ERR_NOMEM, ps->source, 0, 0, "",
                       "out of memory");
            return NULL;
        }
        return node;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        int is_map = ev->type == YAML_MAPPING_START_EVENT;
        yaml_event_type_t end =
            is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
        node = rc_ynode_new(is_map ? RC_YNODE_MAPPING : RC_YNODE_SEQUENCE,
                            &ev->start_mark, ps->source);
        yaml_event_delete(ev);
        if (!node) {
            rc_err_set(ps->err, RC_ERR_NOMEM, ps->source, 0, 0, "",
                       "out of memory");
            return NULL;
        }
        for (;;) {
            rc_ynode *key = NULL, *value;
            size_t at = 0;
            if (rc_next(ps, &sub))
                goto fail;
            if (sub.type == end) {
                yaml_event_delete(&sub);
                free(keys.slot);
                return node;
            }
            if (is_map) {
                if (sub.type != YAML_SCALAR_EVENT) {
                    rc_err_set(ps->err, RC_ERR_PARSE, ps->source,
                               (int)sub.start_mark.line + 1,
                               (int)sub.start_mark.column + 1, "",
                               "mapping keys must be plain names");
                    yaml_event_delete(&sub);
                    goto fail;
                }
                key = rc_build(ps, &sub, depth + 1, "");
                if (!key)
                    goto fail;
                snprintf(child, sizeof child, "%s%s%s", path,
                         path[0] ? "." : "", key->value);
                if (rc_keyset_reserve(&keys, node)) {
                    rc_ynode_free(key);
                    rc_err_set(ps->err, RC_ERR_NOMEM, ps->source, 0, 0, "",
                               "out of memory");
                    goto fail;
                }
                at = rc_keyset_find(&keys, node, key->value);
                if (keys.slot[at]) {
                    char msg[300];
                    snprintf(msg, sizeof msg, "duplicate key '%s'",
                             key->value);
                    rc_err_set(ps->err, RC_ERR_PARSE, ps->source, key->line,
                               key->column, child, msg);
                    rc_ynode_free(key);
                    goto fail;
                }
                if (rc_next(ps, &sub)) {
                    rc_ynode_free(key);
                    goto fail;
                }
            }
            if (!is_map)
                snprintf(child, sizeof child, "%s[%d]", path, node->n);
            value = rc_build(ps, &sub, depth + 1, child);
            if (!value || rc_ynode_push(node, key, value)) {
                rc_ynode_free(key);
                rc_ynode_free(value);
                if (value)
                    rc_err_set(ps->err, RC_ERR_NOMEM, ps->source, 0, 0, "",
                               "out of memory");
                goto fail;
            }
            if (is_map)
                keys.slot[at] = node->n; /* index + 1 of the key pushed */
        }
    }
    case YAML_ALIAS_EVENT:
        rc_err_set(ps->err, RC_ERR_PARSE, ps->source,
                   (int)ev->start_mark.line + 1,
                   (int)ev->start_mark.column + 1, "",
                   "YAML aliases (*name) are not supported in scenarios");
        yaml_event_delete(ev);
        return NULL;
    default:
        rc_err_set(ps->err, RC_ERR_PARSE, ps->source,
                   (int)ev->start_mark.line + 1,
                   (int)ev->start_mark.column + 1, "", "unexpected YAML event");
        yaml_event_delete(ev);
        return NULL;
    }
fail:
    free(keys.slot);
    rc_ynode_free(node);
    return NULL;
}

/* Parse the first document from an initialised parser. */
static rc_ynode *rc_parse(rc_yparse *ps)
{
    yaml_event_t ev;
    rc_ynode *root = NULL;
    /* STREAM-START, then DOCUMENT-START or STREAM-END */
    if (rc_next(ps, &ev))
        return NULL;
    yaml_event_delete(&ev);
    if (rc_next(ps, &ev))
        return NULL;
    if (ev.type == YAML_STREAM_END_EVENT) {
        yaml_event_delete(&ev);
        return rc_ynode_new(RC_YNODE_MAPPING, NULL, ps->source);
    }
    yaml_event_delete(&ev);
    if (rc_next(ps, &ev))
        return NULL;
    root = rc_build(ps, &ev, 0, "");
    if (!root)
        return NULL;
    if (rc_next(ps, &ev)) { /* DOCUMENT-END */
        rc_ynode_free(root);
        return NULL;
    }
    yaml_event_delete(&ev);
    if (rc_next(ps, &ev)) {
        rc_ynode_free(root);
        return NULL;
    }
    if (ev.type != YAML_STREAM_END_EVENT) {
        rc_err_set(ps->err, RC_ERR_PARSE, ps->source,
                   (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
                   "", "a scenario file holds one YAML document, found more");
        yaml_event_delete(&ev);
        rc_ynode_free(root);
        return NULL;
    }
    yaml_event_delete(&ev);
    return root;
}

/* Largest scenario file read: 250 000 particles listed one per line at
 * ~65 bytes (larger systems use `read:` or `lattice:`).  The bound stops
 * a pipe that never ends (`ricochet run /dev/stdin` fed forever) from
 * growing the tree without limit; the tree takes at most ~30 times the
 * text (a node of ~120 bytes per 4-byte "- 1" line), so about 500 MB. */
#define RC_YAML_MAX_BYTES (16UL << 20)

typedef struct rc_yinput {
    FILE *f;
    size_t total;  /* bytes handed to the parser */
    int too_big;   /* the file went past RC_YAML_MAX_BYTES */
} rc_yinput;

/* libyaml's read handler: fread, refusing bytes past the bound. */
static int rc_yaml_read(void *data, unsigned char *buffer, size_t size,
                        size_t *size_read)
{
    rc_yinput *in = (rc_yinput *)data;
    size_t got = fread(buffer, 1, size, in->f);
    if (got < size && ferror(in->f))
        return 0;
    in->total += got;
    if (in->total > RC_YAML_MAX_BYTES) {
        in->too_big = 1;
        return 0;
    }
    *size_read = got;
    return 1;
}

rc_ynode *rc_yaml_load_file(const char *path, rc_error *err)
{
    rc_yparse ps;
    rc_ynode *root;
    rc_yinput in;
    FILE *f = fopen(path, "rb");
    if (!f) {
        char msg[400];
        snprintf(msg, sizeof msg, "cannot open scenario file: %s",
                 strerror(errno));
        rc_err_set(err, RC_ERR_IO, path, 0, 0, "", msg);
        return NULL;
    }
    memset(&ps, 0, sizeof ps);
    ps.source = path;
    ps.err = err;
    if (!yaml_parser_initialize(&ps.parser)) {
        fclose(f);
        rc_err_set(err, RC_ERR_NOMEM, path, 0, 0, "",
                   "cannot initialise the YAML parser");
        return NULL;
    }
    in.f = f;
    in.total = 0;
    in.too_big = 0;
    yaml_parser_set_input(&ps.parser, rc_yaml_read, &in);
    root = rc_parse(&ps);
    if (!root && in.too_big) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "scenario file larger than %lu MiB (give large systems "
                 "their particles with `read:` or `lattice:`)",
                 RC_YAML_MAX_BYTES >> 20);
        rc_err_set(err, RC_ERR_PARSE, path, 0, 0, "", msg);
    } else if (!root && ferror(f)) {
        rc_err_set(err, RC_ERR_IO, path, 0, 0, "", "read error");
    }
    yaml_parser_delete(&ps.parser);
    fclose(f);
    return root;
}

rc_ynode *rc_yaml_load_string(const char *text, const char *source,
                              rc_error *err)
{
    rc_yparse ps;
    rc_ynode *root;
    memset(&ps, 0, sizeof ps);
    ps.source = source;
    ps.err = err;
    if (!yaml_parser_initialize(&ps.parser)) {
        rc_err_set(err, RC_ERR_NOMEM, source, 0, 0, "",
                   "cannot initialise the YAML parser");
        return NULL;
    }
    yaml_parser_set_input_string(&ps.parser, (const unsigned char *)text,
                                 strlen(text));
    root = rc_parse(&ps);
    yaml_parser_delete(&ps.parser);
    return root;
}

rc_status rc_yaml_apply_override(rc_ynode *root, const char *assignment,
                                 rc_error *err)
{
    static const char *const src = "--set";
    const char *eq = strchr(assignment, '=');
    const char *s = assignment;
    char path[256], seg[128], msg[400];
    rc_ynode *cur = root, *value;
    rc_ynode **slot = NULL;
    size_t plen;
    if (!eq || eq == assignment) {
        snprintf(msg, sizeof msg,
                 "override '%s' is not of the form PATH=VALUE", assignment);
        rc_err_set(err, RC_ERR_INVALID, src, 0, 0, "", msg);
        return RC_ERR_INVALID;
    }
    plen = (size_t)(eq - assignment);
    if (plen >= sizeof path) {
        rc_err_set(err, RC_ERR_INVALID, src, 0, 0, "", "override path too long");
        return RC_ERR_INVALID;
    }
    memcpy(path, assignment, plen);
    path[plen] = '\0';
    value = rc_yaml_load_string(eq + 1, src, err);
    if (!value) {
        snprintf(err->field, sizeof err->field, "%s", path);
        return err->status;
    }
    /* A bare value parses to a scalar; an empty one to an empty mapping,
     * which we read as the empty string. */
    s = path;
    while (*s) {
        size_t k = 0;
        if (*s == '[') {
            char *end;
            long idx = strtol(s + 1, &end, 10);
            if (end == s + 1 || *end != ']') {
                rc_err_set(err, RC_ERR_INVALID, src, 0, 0, path,
                           "malformed index in override path");
                goto fail;
            }
            if (!cur || cur->kind != RC_YNODE_SEQUENCE || idx < 0 ||
                idx >= cur->n) {
                snprintf(msg, sizeof msg,
                         "index [%ld] does not exist (the list has %d items)",
                         idx, cur && cur->kind == RC_YNODE_SEQUENCE ? cur->n : 0);
                rc_err_set(err, RC_ERR_INVALID, src, 0, 0, path, msg);
                goto fail;
            }
            slot = &cur->items[idx];
            cur = *slot;
            s = end + 1;
            if (*s == '.')
                ++s;
            continue;
        }
        while (*s && *s != '.' && *s != '[' && k + 1 < sizeof seg)
            seg[k++] = *s++;
        seg[k] = '\0';
        if (*s == '.')
            ++s;
        if (k == 0) {
            rc_err_set(err, RC_ERR_INVALID, src, 0, 0, path,
                       "empty name in override path");
            goto fail;
        }
        if (!cur || cur->kind != RC_YNODE_MAPPING) {
            snprintf(msg, sizeof msg,
                     "cannot set '%s': its parent is not a mapping", seg);
            rc_err_set(err, RC_ERR_INVALID, src, 0, 0, path, msg);
            goto fail;
        }
        {
            int j, found = -1;
            for (j = 0; j < cur->n; ++j)
                if (strcmp(cur->keys[j]->value, seg) == 0)
                    found = j;
            if (found < 0) {
                /* create the key with an empty mapping under it */
                rc_ynode *key = rc_ynode_new(RC_YNODE_SCALAR, NULL, src);
                rc_ynode *child = rc_ynode_new(RC_YNODE_MAPPING, NULL, src);
                if (!key || !child || !(key->value = (char *)malloc(k + 1)) ||
                    rc_ynode_push(cur, key, child)) {
                    rc_ynode_free(key);
                    rc_ynode_free(child);
                    rc_err_set(err, RC_ERR_NOMEM, src, 0, 0, path,
                               "out of memory");
                    goto fail;
                }
                memcpy(key->value, seg, k + 1);
                found = cur->n - 1;
            }
            slot = &cur->items[found];
            cur = *slot;
        }
    }
    if (!slot) {
        rc_err_set(err, RC_ERR_INVALID, src, 0, 0, path,
                   "override path names no field");
        goto fail;
    }
    rc_ynode_free(*slot);
    if (value->kind == RC_YNODE_MAPPING && value->n == 0) {
        value->kind = RC_YNODE_SCALAR;
        value->value = (char *)calloc(1, 1);
    }
    *slot = value;
    return RC_OK;
fail:
    rc_ynode_free(value);
    return RC_ERR_INVALID;
}

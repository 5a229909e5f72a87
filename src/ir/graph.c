/* graph.c — the IR: shapes, attributes, models, graphs, the name index and the edit API.
 *
 * The edit API keeps the invariants listed in graph.h; gl_graph_verify (verify.c) checks
 * them. Nothing here is quadratic in the graph size: names go through hash tables,
 * removal leaves holes that gl_graph_compact squeezes out, and use lists are searched
 * only for the (node, slot) being dropped.
 */
#include "ir/graph.h"
#include "ir/journal.h"
#include "ir/memplan.h"

#include "util/hash.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== the name index ================================================================
 *
 * Open addressing with linear probing and backward-shift deletion (no tombstones, so a
 * long edit session does not slow lookups down). A slot is 16 bytes: the name tables
 * keep the node or value itself, whose name is the key (a name only changes through the
 * index: gl_rename_node, gl_rename_value), and the suffix tables an owned copy of the
 * key. At 100k nodes the two name tables were 2 x 8.4 MB of 32-byte slots (issue 23).
 */

typedef struct name_slot {
    const void *ref; /* NULL: empty slot; else the node, the value or the owned key */
    uint32_t hash;   /* low 32 bits of the key's gl_hash_bytes */
    uint32_t aux;    /* node names: how many nodes share it; suffixes: next k to try */
} name_slot;

typedef enum name_keys { KEYS_OF_NODES, KEYS_OF_VALUES, KEYS_OWNED } name_keys;

typedef struct name_table {
    name_slot *slots;
    size_t cap; /* 0 or a power of two */
    size_t count;
    name_keys keys;
} name_table;

/* A name scope: the names themselves and, per hint, the next suffix worth trying.
 * Invariant of `suffix`: for a hint h with entry k, every "h_1" .. "h_{k-1}" is taken.
 * It keeps "the first free k" exact while making repeated hints O(1) amortized. */
typedef struct name_scope {
    name_table names;
    name_table suffix;
} name_scope;

struct gl_name_index {
    name_scope values; /* value name -> value */
    name_scope nodes;  /* node name -> first node so named; aux = how many share it */
};

static const char *slot_key(const name_table *t, const name_slot *s)
{
    switch (t->keys) {
    case KEYS_OF_NODES: return ((const gl_node *)s->ref)->name;
    case KEYS_OF_VALUES: return ((const gl_value *)s->ref)->name;
    case KEYS_OWNED: break;
    }
    return s->ref;
}

/* `key` may be a prefix of a longer string (the suffix tables look up "h" inside
 * "h_3"): compare its `len` bytes, then check the stored key ends there too. Equal
 * hashes make the string compare nearly always a match. */
static name_slot *table_find_hashed(const name_table *t, const char *key, size_t len,
                                    uint32_t h)
{
    if (!t->cap)
        return NULL;
    size_t mask = t->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        name_slot *s = &t->slots[i];
        if (!s->ref)
            return NULL;
        if (s->hash != h)
            continue;
        const char *k = slot_key(t, s);
        if (strncmp(k, key, len) == 0 && k[len] == '\0')
            return s;
    }
}

static uint32_t hash_key(const char *key, size_t len)
{
    return (uint32_t)gl_hash_bytes(key, len);
}

static name_slot *table_find(const name_table *t, const char *key, size_t len)
{
    return t->cap ? table_find_hashed(t, key, len, hash_key(key, len)) : NULL;
}

static name_slot *table_place(name_table *t, const name_slot *src)
{
    size_t mask = t->cap - 1;
    size_t i = src->hash & mask;
    while (t->slots[i].ref)
        i = (i + 1) & mask;
    t->slots[i] = *src;
    return &t->slots[i];
}

/* The table stays at most half full, which keeps probe runs short. */
static bool table_fits(const name_table *t, size_t count)
{
    return count <= t->cap / 2;
}

/* Grow (and rehash) so that `count` keys fit. */
static void table_reserve(name_table *t, size_t count)
{
    if (table_fits(t, count))
        return;
    size_t cap = t->cap ? t->cap : 16;
    while (cap / 2 < count)
        cap *= 2;
    name_slot *old = t->slots;
    size_t old_cap = t->cap;
    t->cap = cap;
    t->slots = gl_xcalloc(t->cap, sizeof(name_slot));
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].ref)
            table_place(t, &old[i]);
    free(old);
}

/* Find `key` or add it (aux 0), one hash and one probe sequence: a name table adds
 * `obj`, whose name is `key`; a suffix table (obj NULL) a copy of key. The caller tells
 * which by comparing ->ref with obj. */
static name_slot *table_upsert(name_table *t, const char *key, size_t len, const void *obj)
{
    uint32_t h = hash_key(key, len);
    name_slot *s = table_find_hashed(t, key, len, h);
    if (s)
        return s;
    table_reserve(t, t->count + 1); /* doubles when full: amortized O(1) */
    name_slot fresh = {
        .ref = t->keys == KEYS_OWNED ? gl_xstrndup(key, len) : obj,
        .hash = h,
    };
    t->count++;
    return table_place(t, &fresh);
}

static void table_delete(name_table *t, name_slot *s)
{
    size_t mask = t->cap - 1;
    size_t hole = (size_t)(s - t->slots);
    if (t->keys == KEYS_OWNED)
        free((void *)s->ref);
    /* Backward shift: pull later members of the probe run into the hole whenever their
     * home slot does not lie (cyclically) between the hole and their current slot. */
    for (size_t j = (hole + 1) & mask; t->slots[j].ref; j = (j + 1) & mask) {
        size_t home = t->slots[j].hash & mask;
        bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            t->slots[hole] = t->slots[j];
            hole = j;
        }
    }
    memset(&t->slots[hole], 0, sizeof(name_slot));
    t->count--;
}

/* Empty again; the table keeps its kind of keys. */
static void table_free(name_table *t)
{
    if (t->keys == KEYS_OWNED)
        for (size_t i = 0; i < t->cap; i++)
            free((void *)t->slots[i].ref);
    free(t->slots);
    *t = (name_table){.keys = t->keys};
}

static struct gl_name_index *index_new(void)
{
    struct gl_name_index *ix = gl_xcalloc(1, sizeof(*ix));
    ix->values.names.keys = KEYS_OF_VALUES;
    ix->values.suffix.keys = KEYS_OWNED;
    ix->nodes.names.keys = KEYS_OF_NODES;
    ix->nodes.suffix.keys = KEYS_OWNED;
    return ix;
}

static void index_free(struct gl_name_index *ix)
{
    if (!ix)
        return;
    table_free(&ix->values.names);
    table_free(&ix->values.suffix);
    table_free(&ix->nodes.names);
    table_free(&ix->nodes.suffix);
    free(ix);
}

/* "base_k" with k a canonical positive decimal: return true and split it. */
static bool split_suffix(const char *name, size_t *base_len, size_t *k)
{
    const char *us = strrchr(name, '_');
    if (!us || us == name || us[1] < '1' || us[1] > '9')
        return false;
    size_t v = 0, digits = 0;
    for (const char *p = us + 1; *p; p++, digits++) {
        if (*p < '0' || *p > '9' || digits >= 18)
            return false;
        v = v * 10 + (size_t)(*p - '0');
    }
    *base_len = (size_t)(us - name);
    *k = v;
    return true;
}

/* A name left the scope: if it was "hint_k", k is free again for that hint. */
static void scope_name_freed(name_scope *sc, const char *name)
{
    size_t base_len, k;
    if (!split_suffix(name, &base_len, &k))
        return;
    name_slot *s = table_find(&sc->suffix, name, base_len);
    if (s && s->aux > k)
        s->aux = (uint32_t)k;
}

static char *scope_unique(name_scope *sc, const char *hint)
{
    size_t hint_len = strlen(hint);
    if (!table_find(&sc->names, hint, hint_len))
        return gl_xstrdup(hint);
    name_slot *s = table_find(&sc->suffix, hint, hint_len);
    size_t k = s && s->aux > 1 ? s->aux : 1;
    size_t cap = hint_len + 24;
    char *buf = gl_xmalloc(cap);
    for (;; k++) {
        int len = snprintf(buf, cap, "%s_%zu", hint, k);
        if (!table_find(&sc->names, buf, (size_t)len))
            break;
    }
    /* Looked up again: the table may not hold the hint yet. A k past 32 bits is
     * remembered as a smaller one, which keeps the invariant (only the search is
     * longer). */
    table_upsert(&sc->suffix, hint, hint_len, NULL)->aux =
        k > UINT32_MAX ? UINT32_MAX : (uint32_t)k;
    return buf;
}

/* Make `v` the holder of its name; false (index unchanged) when another value holds it. */
static bool index_claim_value(gl_graph *g, gl_value *v)
{
    return table_upsert(&g->index->values.names, v->name, strlen(v->name), v)->ref == v;
}

/* Names of live values are unique, so a clash here would be a bug elsewhere: the first
 * holder keeps the name. */
static void index_add_value(gl_graph *g, gl_value *v)
{
    (void)index_claim_value(g, v);
}

static void index_drop_value(gl_graph *g, gl_value *v)
{
    name_slot *s = table_find(&g->index->values.names, v->name, strlen(v->name));
    if (!s || s->ref != v)
        return;
    table_delete(&g->index->values.names, s);
    scope_name_freed(&g->index->values, v->name);
}

static void index_add_node(gl_graph *g, gl_node *n)
{
    table_upsert(&g->index->nodes.names, n->name, strlen(n->name), n)->aux++;
}

/* First live node in order named like `n`, other than `n`. O(n) but only reached when
 * node names are shared (files may repeat them; we never generate duplicates). */
static gl_node *next_node_named(const gl_graph *g, const gl_node *n)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        gl_node *m = g->nodes[i];
        if (m && m != n && strcmp(m->name, n->name) == 0)
            return m;
    }
    return NULL;
}

static void index_drop_node(gl_graph *g, gl_node *n)
{
    name_slot *s = table_find(&g->index->nodes.names, n->name, strlen(n->name));
    if (!s)
        return;
    if (--s->aux == 0) {
        table_delete(&g->index->nodes.names, s);
        scope_name_freed(&g->index->nodes, n->name);
    } else if (s->ref == n) {
        s->ref = next_node_named(g, n); /* whose name is the key from now on */
    }
}

static void index_rebuild_nodes(gl_graph *g)
{
    table_free(&g->index->nodes.names);
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i])
            index_add_node(g, g->nodes[i]);
}

/* ==== small helpers ================================================================== */

static void bytes_copy(gl_bytes *dst, const gl_bytes *src)
{
    dst->len = src->len;
    /* One spare NUL byte so string attributes read as C strings. */
    dst->data = gl_xmalloc(src->len + 1);
    if (src->len)
        memcpy(dst->data, src->data, src->len);
    dst->data[src->len] = 0;
}

static gl_bytes *bytes_array_copy(const gl_bytes *src, size_t n)
{
    if (!src)
        return NULL;
    gl_bytes *dst = gl_xcalloc(n, sizeof(gl_bytes));
    for (size_t i = 0; i < n; i++)
        bytes_copy(&dst[i], &src[i]);
    return dst;
}

static void bytes_array_free(gl_bytes *a, size_t n)
{
    if (!a)
        return;
    for (size_t i = 0; i < n; i++)
        free(a[i].data);
    free(a);
}

static void *mem_dup(const void *src, size_t n)
{
    if (!src)
        return NULL;
    void *dst = gl_xmalloc(n);
    if (n)
        memcpy(dst, src, n);
    return dst;
}

static void remove_at(void *arr, size_t *n, size_t i, size_t elem)
{
    char *a = arr;
    memmove(a + i * elem, a + (i + 1) * elem, (*n - i - 1) * elem);
    (*n)--;
}

/* Remove the first occurrence of `v` from a value list; false when absent. */
static bool value_list_remove(gl_value **list, size_t *n, const gl_value *v)
{
    for (size_t i = 0; i < *n; i++)
        if (list[i] == v) {
            remove_at(list, n, i, sizeof(*list));
            return true;
        }
    return false;
}

static bool value_list_has(gl_value *const *list, size_t n, const gl_value *v)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == v)
            return true;
    return false;
}

static bool value_in_graph(const gl_graph *g, const gl_value *v)
{
    return v->graph == g && v->index < g->n_values && g->values[v->index] == v;
}

static bool node_in_graph(const gl_graph *g, const gl_node *n)
{
    return n->graph == g && n->index < g->n_nodes && g->nodes[n->index] == n;
}

static const char *graph_label(const gl_graph *g)
{
    return g->name && *g->name ? g->name : "(unnamed)";
}

/* ==== the journal's hooks ============================================================
 *
 * While a trial runs under an undo journal (journal.h), every mutator records what it is
 * about to change first: touch_* before a write, and objects that leave the graph are
 * handed to the journal instead of freed. Without a journal each is one pointer test.
 */

static gl_journal *journal_of(const gl_graph *g)
{
    while (g->parent)
        g = g->parent;
    return g->journal;
}

static void touch_graph(gl_graph *g)
{
    gl_journal *j = journal_of(g);
    if (j)
        gl_journal_touch_graph(j, g);
}

static void touch_node(gl_node *n)
{
    gl_journal *j = n ? journal_of(n->graph) : NULL;
    if (j)
        gl_journal_node(j, n);
}

static void touch_value(gl_value *v)
{
    gl_journal *j = v ? journal_of(v->graph) : NULL;
    if (j)
        gl_journal_value(j, v);
}

/* ==== use lists ====================================================================== */

/* Use lists and input lists mostly hold one or two entries: they grow 1, 2, 4, ...
 * rather than from gl_grow's 4, which matters at a hundred thousand values. */
static void grow_small(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t ncap = *cap ? *cap : 1;
    while (ncap < need)
        ncap *= 2;
    *arr = gl_xrealloc(*arr, ncap * elem);
    *cap = ncap;
}
#define GROW_SMALL(arr, cap, need) grow_small((void **)&(arr), &(cap), (need), sizeof(*(arr)))

static void use_add(gl_value *v, gl_node *n, int slot)
{
    touch_value(v);
    GROW_SMALL(v->uses, v->cap_uses, v->n_uses + 1);
    v->uses[v->n_uses++] = (gl_use){n, slot};
}

/* Drop exactly one (n, slot) entry. Searching from the end finds recent uses first. */
static void use_remove(gl_value *v, const gl_node *n, int slot)
{
    touch_value(v);
    for (size_t i = v->n_uses; i-- > 0;)
        if (v->uses[i].node == n && v->uses[i].slot == slot) {
            remove_at(v->uses, &v->n_uses, i, sizeof(gl_use));
            return;
        }
}

/* ==== shapes and types =============================================================== */

void gl_shape_init_unknown(gl_shape *s)
{
    s->rank = GL_RANK_UNKNOWN;
    s->dims = NULL;
}

void gl_shape_free(gl_shape *s)
{
    if (s->dims)
        for (int i = 0; i < s->rank; i++)
            free(s->dims[i].sym);
    free(s->dims);
    gl_shape_init_unknown(s);
}

void gl_shape_set_rank(gl_shape *s, int rank)
{
    gl_shape_free(s);
    if (rank < 0)
        return;
    s->rank = rank;
    s->dims = gl_xcalloc((size_t)rank, sizeof(gl_dim));
    for (int i = 0; i < rank; i++)
        s->dims[i].value = GL_DIM_UNKNOWN;
}

void gl_shape_copy(gl_shape *dst, const gl_shape *src)
{
    if (dst == src)
        return;
    gl_shape_set_rank(dst, src->rank);
    for (int i = 0; i < src->rank; i++) {
        dst->dims[i].value = src->dims[i].value;
        dst->dims[i].sym = gl_xstrdup(src->dims[i].sym);
    }
}

static bool str_eq_nullable(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool gl_shape_equal(const gl_shape *a, const gl_shape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i].value != b->dims[i].value || !str_eq_nullable(a->dims[i].sym, b->dims[i].sym))
            return false;
    return true;
}

void gl_dim_set_sym(gl_dim *d, const char *sym)
{
    char *copy = gl_xstrdup(sym); /* before freeing: sym may be d->sym itself */
    free(d->sym);
    d->value = GL_DIM_UNKNOWN;
    d->sym = copy;
}

void gl_type_free(gl_type *t)
{
    gl_shape_free(&t->shape);
    free(t->opaque.data);
    t->opaque.data = NULL;
    t->opaque.len = 0;
    t->kind = GL_TYPE_NONE;
    t->dtype = GL_DT_UNDEFINED;
}

void gl_type_copy(gl_type *dst, const gl_type *src)
{
    if (dst == src)
        return;
    gl_type_free(dst);
    dst->kind = src->kind;
    dst->dtype = src->dtype;
    gl_shape_copy(&dst->shape, &src->shape);
    if (src->opaque.data)
        bytes_copy(&dst->opaque, &src->opaque);
}

/* snprintf-style appender: counts what it would write even when the buffer is full. */
typedef struct text_out {
    char *buf;
    size_t len;
    size_t pos;
} text_out;

static void out_fmt(text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_fmt(text_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->pos < o->len ? o->len - o->pos : 0;
    int n = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->pos += (size_t)n;
}

int gl_type_format(const gl_type *t, char *buf, size_t len)
{
    text_out o = {buf, len, 0};
    if (len)
        buf[0] = '\0';
    if (t->kind == GL_TYPE_NONE) {
        out_fmt(&o, "?");
    } else if (t->kind == GL_TYPE_OPAQUE) {
        out_fmt(&o, "opaque");
    } else {
        out_fmt(&o, "%s", t->dtype == GL_DT_UNDEFINED ? "?" : gl_dtype_name(t->dtype));
        if (t->shape.rank == GL_RANK_UNKNOWN) {
            out_fmt(&o, "[?]");
        } else {
            out_fmt(&o, "[");
            for (int i = 0; i < t->shape.rank; i++) {
                const gl_dim *d = &t->shape.dims[i];
                const char *sep = i ? "," : "";
                if (d->value >= 0)
                    out_fmt(&o, "%s%" PRId64, sep, d->value);
                else
                    out_fmt(&o, "%s%s", sep, d->sym ? d->sym : "?");
            }
            out_fmt(&o, "]");
        }
    }
    return o.pos > INT32_MAX ? INT32_MAX : (int)o.pos;
}

/* ==== attributes ===================================================================== */

static const char *const attr_type_names[] = {
    [GL_ATTR_UNDEFINED] = "undefined",      [GL_ATTR_FLOAT] = "float",
    [GL_ATTR_INT] = "int",                  [GL_ATTR_STRING] = "string",
    [GL_ATTR_TENSOR] = "tensor",            [GL_ATTR_GRAPH] = "graph",
    [GL_ATTR_FLOATS] = "floats",            [GL_ATTR_INTS] = "ints",
    [GL_ATTR_STRINGS] = "strings",          [GL_ATTR_TENSORS] = "tensors",
    [GL_ATTR_GRAPHS] = "graphs",            [GL_ATTR_SPARSE_TENSOR] = "sparse_tensor",
    [GL_ATTR_SPARSE_TENSORS] = "sparse_tensors", [GL_ATTR_TYPE_PROTO] = "type_proto",
    [GL_ATTR_TYPE_PROTOS] = "type_protos",
};
_Static_assert(GL_ARRAY_LEN(attr_type_names) == GL_ATTR_TYPE_PROTOS + 1, "a name per type");

size_t gl_attr_subgraphs(const gl_attr *a, gl_graph *const **subs)
{
    *subs = a->type == GL_ATTR_GRAPH ? &a->g : a->type == GL_ATTR_GRAPHS ? a->graphs : NULL;
    return a->type == GL_ATTR_GRAPH ? 1 : a->type == GL_ATTR_GRAPHS ? a->n : 0;
}

const char *gl_attr_type_name(gl_attr_type t)
{
    return (size_t)t < GL_ARRAY_LEN(attr_type_names) ? attr_type_names[t] : "?";
}

void gl_attr_free(gl_attr *a)
{
    if (!a)
        return;
    free(a->name);
    free(a->ref_attr_name);
    free(a->doc_string);
    free(a->s.data);
    gl_tensor_free(a->t);
    gl_graph_free(a->g);
    free(a->floats);
    free(a->ints);
    bytes_array_free(a->strings, a->n);
    if (a->tensors)
        for (size_t i = 0; i < a->n; i++)
            gl_tensor_free(a->tensors[i]);
    free(a->tensors);
    if (a->graphs)
        for (size_t i = 0; i < a->n; i++)
            gl_graph_free(a->graphs[i]);
    free(a->graphs);
    bytes_array_free(a->opaque, a->n);
    memset(a, 0, sizeof(*a));
}

/* The subgraphs an attribute holds (GRAPH: one, GRAPHS: n). */
static size_t attr_graphs(const gl_attr *a, gl_graph *const **out)
{
    if (a->g) {
        *out = (gl_graph *const *)&a->g;
        return 1;
    }
    if (a->graphs) {
        *out = a->graphs;
        return a->n;
    }
    *out = NULL;
    return 0;
}

static bool attr_has_graphs(const gl_attr *a)
{
    return a->g || (a->graphs && a->n);
}

gl_attr *gl_node_attr(const gl_node *n, const char *name)
{
    for (size_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

static bool attr_holds_value(const gl_attr *a)
{
    if (a->ref_attr_name)
        return false;
    switch (a->type) {
    case GL_ATTR_TENSOR: return a->t != NULL;
    case GL_ATTR_GRAPH: return a->g != NULL;
    case GL_ATTR_FLOATS: return a->floats || !a->n;
    case GL_ATTR_INTS: return a->ints || !a->n;
    case GL_ATTR_STRINGS: return a->strings || !a->n;
    case GL_ATTR_TENSORS: return a->tensors || !a->n;
    case GL_ATTR_GRAPHS: return a->graphs || !a->n;
    case GL_ATTR_SPARSE_TENSOR:
    case GL_ATTR_SPARSE_TENSORS:
    case GL_ATTR_TYPE_PROTO:
    case GL_ATTR_TYPE_PROTOS: return a->opaque || !a->n;
    default: return true;
    }
}

const gl_attr *gl_node_attr_typed(const gl_node *n, const char *name, gl_attr_type type)
{
    const gl_attr *a = gl_node_attr(n, name);
    return a && a->type == type && attr_holds_value(a) ? a : NULL;
}

int64_t gl_node_attr_int(const gl_node *n, const char *name, int64_t dflt)
{
    const gl_attr *a = gl_node_attr_typed(n, name, GL_ATTR_INT);
    return a ? a->i : dflt;
}

float gl_node_attr_float(const gl_node *n, const char *name, float dflt)
{
    const gl_attr *a = gl_node_attr_typed(n, name, GL_ATTR_FLOAT);
    return a ? a->f : dflt;
}

const char *gl_node_attr_string(const gl_node *n, const char *name, const char *dflt)
{
    const gl_attr *a = gl_node_attr_typed(n, name, GL_ATTR_STRING);
    if (!a)
        return dflt;
    return a->s.data ? (const char *)a->s.data : "";
}

/* Bring n->implicit in line with the captures of its subgraphs: outer values still
 * captured keep their place, new ones are appended, stale ones lose their use. */
static void node_sync_implicit(gl_node *n)
{
    touch_node(n);
    gl_value **wanted = NULL;
    size_t n_wanted = 0, cap_wanted = 0;
    for (size_t i = 0; i < n->n_attrs; i++) {
        gl_graph *const *subs;
        size_t n_subs = attr_graphs(&n->attrs[i], &subs);
        for (size_t j = 0; j < n_subs; j++) {
            if (!subs[j])
                continue;
            for (size_t c = 0; c < subs[j]->n_captures; c++) {
                gl_value *outer = subs[j]->captures[c]->outer;
                if (outer && !value_list_has(wanted, n_wanted, outer)) {
                    GL_GROW(wanted, cap_wanted, n_wanted + 1);
                    wanted[n_wanted++] = outer;
                }
            }
        }
    }
    for (size_t i = n->n_implicit; i-- > 0;) {
        gl_value *v = n->implicit[i];
        if (!value_list_has(wanted, n_wanted, v)) {
            remove_at(n->implicit, &n->n_implicit, i, sizeof(*n->implicit));
            use_remove(v, n, GL_USE_IMPLICIT);
        }
    }
    for (size_t i = 0; i < n_wanted; i++) {
        gl_value *v = wanted[i];
        if (value_list_has(n->implicit, n->n_implicit, v))
            continue;
        GL_GROW(n->implicit, n->cap_implicit, n->n_implicit + 1);
        n->implicit[n->n_implicit++] = v;
        use_add(v, n, GL_USE_IMPLICIT);
    }
    free(wanted);
}

static void attr_adopt_graphs(gl_attr *a, gl_node *n)
{
    gl_graph *const *subs;
    size_t n_subs = attr_graphs(a, &subs);
    for (size_t j = 0; j < n_subs; j++)
        if (subs[j]) {
            subs[j]->parent = n->graph;
            subs[j]->parent_node = n;
        }
}

void gl_node_take_attr(gl_node *n, gl_attr *a)
{
    gl_attr *slot = gl_node_attr(n, a->name);
    bool graphs_changed = attr_has_graphs(a);
    gl_journal *j = journal_of(n->graph);
    bool logged = j && gl_journal_has_node(j, n);
    if (slot) {
        graphs_changed |= attr_has_graphs(slot);
        if (logged)
            gl_journal_attr_replaced(j, n, (size_t)(slot - n->attrs), slot);
        else
            gl_attr_free(slot);
    } else {
        GL_GROW(n->attrs, n->cap_attrs, n->n_attrs + 1);
        slot = &n->attrs[n->n_attrs++];
        if (logged)
            gl_journal_attr_added(j, n);
    }
    *slot = *a;
    memset(a, 0, sizeof(*a));
    attr_adopt_graphs(slot, n);
    gl_graph *const *subs;
    size_t n_subs = logged ? attr_graphs(slot, &subs) : 0;
    for (size_t i = 0; i < n_subs; i++)
        if (subs[i])
            gl_journal_graph_attached(j, subs[i]);
    if (graphs_changed)
        node_sync_implicit(n);
}

bool gl_node_remove_attr(gl_node *n, const char *name)
{
    gl_attr *a = gl_node_attr(n, name);
    if (!a)
        return false;
    bool had_graphs = attr_has_graphs(a);
    gl_journal *j = journal_of(n->graph);
    if (j && gl_journal_has_node(j, n))
        gl_journal_attr_removed(j, n, (size_t)(a - n->attrs), a);
    else
        gl_attr_free(a);
    remove_at(n->attrs, &n->n_attrs, (size_t)(a - n->attrs), sizeof(gl_attr));
    if (had_graphs)
        node_sync_implicit(n);
    return true;
}

static gl_attr attr_named(const char *name, gl_attr_type type)
{
    return (gl_attr){.name = gl_xstrdup(name), .type = type};
}

void gl_node_set_attr_int(gl_node *n, const char *name, int64_t v)
{
    gl_attr a = attr_named(name, GL_ATTR_INT);
    a.i = v;
    gl_node_take_attr(n, &a);
}

void gl_node_set_attr_float(gl_node *n, const char *name, float v)
{
    gl_attr a = attr_named(name, GL_ATTR_FLOAT);
    a.f = v;
    gl_node_take_attr(n, &a);
}

void gl_node_set_attr_string(gl_node *n, const char *name, const char *v)
{
    gl_attr a = attr_named(name, GL_ATTR_STRING);
    bytes_copy(&a.s, &(gl_bytes){strlen(v), (uint8_t *)v});
    gl_node_take_attr(n, &a);
}

void gl_node_set_attr_ints(gl_node *n, const char *name, const int64_t *v, size_t count)
{
    gl_attr a = attr_named(name, GL_ATTR_INTS);
    a.n = count;
    a.ints = gl_xmalloc(count * sizeof(int64_t));
    if (count)
        memcpy(a.ints, v, count * sizeof(int64_t));
    gl_node_take_attr(n, &a);
}

void gl_node_set_attr_floats(gl_node *n, const char *name, const float *v, size_t count)
{
    gl_attr a = attr_named(name, GL_ATTR_FLOATS);
    a.n = count;
    a.floats = gl_xmalloc(count * sizeof(float));
    if (count)
        memcpy(a.floats, v, count * sizeof(float));
    gl_node_take_attr(n, &a);
}

bool gl_node_copy_plain_attrs(gl_node *dst, const gl_node *src)
{
    for (size_t i = 0; i < src->n_attrs; i++) {
        const gl_attr *a = &src->attrs[i];
        switch (a->type) {
        case GL_ATTR_INT: gl_node_set_attr_int(dst, a->name, a->i); break;
        case GL_ATTR_FLOAT: gl_node_set_attr_float(dst, a->name, a->f); break;
        case GL_ATTR_STRING:
            gl_node_set_attr_string(dst, a->name, (const char *)a->s.data);
            break;
        case GL_ATTR_INTS: gl_node_set_attr_ints(dst, a->name, a->ints, a->n); break;
        case GL_ATTR_FLOATS: gl_node_set_attr_floats(dst, a->name, a->floats, a->n); break;
        default: return false;
        }
    }
    return true;
}

/* Passes ask "is this an X" of every node they meet, mostly of another op, whose name
 * nearly always starts with another letter: that answer comes without a call to strcmp
 * (the asks were 5% of `optimize` on the 100k ladder, issue 23). */
static bool same_text(const char *a, const char *b)
{
    return a[0] == b[0] && strcmp(a, b) == 0;
}

bool gl_node_is(const gl_node *n, const char *op)
{
    return n && n->domain[0] == '\0' && same_text(n->op_type, op);
}

const char *gl_domain_canonical(const char *domain)
{
    return !domain || (*domain && strcmp(domain, "ai.onnx") == 0) ? "" : domain;
}

const char *gl_domain_display(const char *domain)
{
    domain = gl_domain_canonical(domain);
    return *domain ? domain : "ai.onnx";
}

bool gl_node_is_in(const gl_node *n, const char *domain, const char *op)
{
    return n && same_text(n->domain, gl_domain_canonical(domain)) && same_text(n->op_type, op);
}

gl_opset gl_opset_make(const char *domain, int64_t version)
{
    return (gl_opset){gl_xstrdup(gl_domain_canonical(domain)), version};
}

/* ==== values ========================================================================= */

int gl_value_rank(const gl_value *v)
{
    return v && v->type.kind == GL_TYPE_TENSOR ? v->type.shape.rank : GL_RANK_UNKNOWN;
}

bool gl_graph_has_output(const gl_graph *g, const gl_value *v)
{
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v)
            return true;
    return false;
}

bool gl_graph_has_input(const gl_graph *g, const gl_value *v)
{
    for (size_t i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == v)
            return true;
    return false;
}

bool gl_value_static_bytes(const gl_value *v, size_t *bytes)
{
    const gl_type *t = &v->type;
    if (t->kind != GL_TYPE_TENSOR || t->dtype == GL_DT_UNDEFINED || t->dtype == GL_DT_STRING ||
        t->shape.rank == GL_RANK_UNKNOWN)
        return false;
    size_t b = gl_dtype_size(t->dtype);
    for (int d = 0; d < t->shape.rank; d++) {
        int64_t x = t->shape.dims[d].value;
        if (x < 0 || (x && b > SIZE_MAX / 2 / (size_t)x))
            return false;
        b *= (size_t)x;
    }
    *bytes = b;
    return true;
}

bool gl_value_is_constant(const gl_value *v)
{
    if (!v->init)
        return false;
    const gl_model *m = v->graph ? v->graph->model : NULL;
    return !v->is_input || (m && m->freeze_inputs);
}

bool gl_value_uses_comprehensive(const gl_value *v)
{
    if (v->n_output_refs > 0)
        return false;
    for (size_t i = 0; i < v->n_uses; i++)
        if (v->uses[i].slot == GL_USE_IMPLICIT)
            return false;
    return true;
}

gl_node *gl_value_single_reader(const gl_value *v)
{
    gl_node *only = NULL;
    for (size_t i = 0; v && i < v->n_uses; i++) {
        if (v->uses[i].slot == GL_USE_IMPLICIT || (only && v->uses[i].node != only))
            return NULL;
        only = v->uses[i].node;
    }
    return only;
}

size_t gl_value_explicit_uses(const gl_value *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n_uses; i++)
        n += v->uses[i].slot >= 0;
    return n;
}

/* A value not yet in any list; the caller owns `name`. */
static gl_value *value_alloc(gl_graph *g, char *name)
{
    gl_value *v = gl_xcalloc(1, sizeof(*v));
    v->name = name;
    v->graph = g;
    v->producer_slot = -1;
    gl_shape_init_unknown(&v->type.shape);
    return v;
}

/* Into g->values only; the index is the caller's business. */
static void values_push(gl_graph *g, gl_value *v)
{
    touch_graph(g);
    GL_GROW(g->values, g->cap_values, g->n_values + 1);
    v->index = g->n_values;
    g->values[g->n_values++] = v;
}

static void value_append(gl_graph *g, gl_value *v)
{
    values_push(g, v);
    index_add_value(g, v);
}

static void value_free_contents(gl_value *v)
{
    free(v->name);
    free(v->doc_string);
    gl_type_free(&v->type);
    free(v->uses);
    gl_tensor_free(v->init);
    free(v);
}

/* Unlink from the graph (index, values array) and free. Lists are the caller's. */
static void value_destroy(gl_graph *g, gl_value *v)
{
    gl_journal *j = journal_of(g);
    if (j) {
        gl_journal_value(j, v);
        gl_journal_touch_graph(j, g);
    }
    index_drop_value(g, v);
    if (v->index < g->n_values && g->values[v->index] == v)
        g->values[v->index] = NULL;
    if (!j || !gl_journal_keeps_value(j, v))
        value_free_contents(v);
}

/* ==== models ========================================================================= */

gl_model *gl_model_new(void)
{
    gl_model *m = gl_xcalloc(1, sizeof(*m));
    return m;
}

static void opsets_free(gl_opset *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(ops[i].domain);
    free(ops);
}

static void function_free_contents(gl_function *f)
{
    free(f->name);
    free(f->domain);
    free(f->doc_string);
    for (size_t i = 0; i < f->n_attributes; i++)
        free(f->attributes[i]);
    free(f->attributes);
    opsets_free(f->opsets, f->n_opsets);
    gl_graph_free(f->body);
}

void gl_model_free(gl_model *m)
{
    if (!m)
        return;
    opsets_free(m->opsets, m->n_opsets);
    free(m->producer_name);
    free(m->producer_version);
    free(m->domain);
    free(m->doc_string);
    for (size_t i = 0; i < m->n_metadata; i++) {
        free(m->metadata[i].key);
        free(m->metadata[i].value);
    }
    free(m->metadata);
    gl_graph_free(m->graph);
    for (size_t i = 0; i < m->n_functions; i++)
        function_free_contents(&m->functions[i]);
    free(m->functions);
    bytes_array_free(m->training_info, m->n_training_info);
    free(m->path);
    free(m->dir);
    gl_memory_plan_free(m->memory_plan);
    free(m);
}

int64_t gl_model_opset(const gl_model *m, const char *domain)
{
    const char *want = gl_domain_canonical(domain);
    for (size_t i = 0; i < m->n_opsets; i++)
        if (strcmp(m->opsets[i].domain, want) == 0)
            return m->opsets[i].version;
    return 0;
}

int64_t gl_scope_opset(const gl_model *m, const gl_function *f, const char *domain)
{
    const char *want = gl_domain_canonical(domain);
    for (size_t i = 0; f && i < f->n_opsets; i++)
        if (strcmp(f->opsets[i].domain, want) == 0)
            return f->opsets[i].version;
    int64_t v = gl_model_opset(m, want);
    return v == 0 && *want == '\0' ? 1 : v;
}

void gl_model_set_opset(gl_model *m, const char *domain, int64_t version)
{
    const char *want = gl_domain_canonical(domain);
    for (size_t i = 0; i < m->n_opsets; i++)
        if (strcmp(m->opsets[i].domain, want) == 0) {
            m->opsets[i].version = version;
            return;
        }
    m->opsets = gl_xrealloc(m->opsets, (m->n_opsets + 1) * sizeof(gl_opset));
    m->opsets[m->n_opsets++] = gl_opset_make(want, version);
}

gl_function *gl_model_function(const gl_model *m, const char *domain, const char *name)
{
    const char *want = gl_domain_canonical(domain);
    for (size_t i = 0; i < m->n_functions; i++) {
        gl_function *f = &m->functions[i];
        if (f->name && strcmp(f->name, name) == 0 && strcmp(f->domain, want) == 0)
            return f;
    }
    return NULL;
}

gl_function *gl_model_add_function(gl_model *m, const char *domain, const char *name)
{
    if (gl_model_function(m, domain, name))
        return NULL;
    m->functions = gl_xrealloc(m->functions, (m->n_functions + 1) * sizeof(gl_function));
    gl_function *f = &m->functions[m->n_functions++];
    memset(f, 0, sizeof(*f));
    f->name = gl_xstrdup(name);
    f->domain = gl_xstrdup(gl_domain_canonical(domain));
    f->body = gl_graph_new(m, NULL, name);
    return f;
}

/* ==== graphs ========================================================================= */

gl_graph *gl_graph_new(gl_model *m, gl_graph *parent, const char *name)
{
    gl_graph *g = gl_xcalloc(1, sizeof(*g));
    g->name = gl_xstrdup(name ? name : "");
    g->model = m;
    g->parent = parent;
    g->index = index_new();
    return g;
}

static void prov_free_origins(gl_provenance *p)
{
    if (p->origins != &p->single)
        free(p->origins);
    p->origins = NULL;
    p->n_origins = 0;
}

/* Replace the origins by a copy of `origins` (which may point into p itself); a lone
 * origin is kept inline. */
static void prov_set_origins(gl_provenance *p, const uint32_t *origins, size_t count)
{
    uint32_t lone = count == 1 ? origins[0] : 0;
    uint32_t *copy = count > 1 ? mem_dup(origins, count * sizeof(uint32_t)) : NULL;
    prov_free_origins(p);
    if (count == 1) {
        p->single = lone;
        copy = &p->single;
    }
    p->origins = copy;
    p->n_origins = count;
}

/* Empty output slots; one output lives in the node itself (most nodes have one). */
static void node_set_output_count(gl_node *n, size_t count)
{
    n->outputs = count > 1 ? gl_xcalloc(count, sizeof(gl_value *))
                 : count ? &n->output_single : NULL;
    n->output_single = NULL;
    n->n_outputs = count;
}

static void node_free(gl_node *n)
{
    free(n->name);
    free(n->op_type);
    free(n->domain);
    free(n->doc_string);
    free(n->inputs);
    if (n->outputs != &n->output_single)
        free(n->outputs);
    for (size_t i = 0; i < n->n_attrs; i++)
        gl_attr_free(&n->attrs[i]);
    free(n->attrs);
    free(n->implicit);
    prov_free_origins(&n->prov);
    free(n);
}

/* The names of a graph's loaded nodes: the pointers, then their text, in one
 * allocation. Never changed once made, so a clone takes a reference instead of a copy
 * (100k strings at 100k nodes). Counts are atomic: the workbench clones and frees
 * snapshots on more than one thread. */
struct gl_origin_block {
    int refs;
    char *names[]; /* then the strings */
};

static void origin_block_unref(struct gl_origin_block *b)
{
    if (b && __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(b);
}

void gl_graph_record_origins(gl_graph *g)
{
    size_t n = g->next_node_id, text = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i])
            text += strlen(g->nodes[i]->name) + 1;
    struct gl_origin_block *b = gl_xmalloc(sizeof(*b) + n * sizeof(char *) + text);
    b->refs = 1;
    memset(b->names, 0, n * sizeof(char *));
    char *at = (char *)(b->names + n);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *node = g->nodes[i];
        if (!node || node->id >= n)
            continue;
        size_t len = strlen(node->name) + 1;
        b->names[node->id] = memcpy(at, node->name, len);
        at += len;
    }
    origin_block_unref(g->origin_block);
    g->origin_block = b;
    g->origin_names = b->names;
    g->n_origin_names = n;
}

/* Frees g and everything it owns; never touches the enclosing graph (a caller removing a
 * subgraph from a live node goes through gl_node_remove_attr, which fixes the uses). */
void gl_graph_free(gl_graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i])
            node_free(g->nodes[i]);
    for (size_t i = 0; i < g->n_values; i++)
        if (g->values[i])
            value_free_contents(g->values[i]);
    free(g->nodes);
    free(g->values);
    free(g->inputs);
    free(g->outputs);
    free(g->inits);
    free(g->captures);
    bytes_array_free(g->sparse_inits, g->n_sparse_inits);
    bytes_array_free(g->quant_annotations, g->n_quant_annotations);
    origin_block_unref(g->origin_block);
    free(g->name);
    free(g->doc_string);
    index_free(g->index);
    free(g);
}

gl_value *gl_find_value(const gl_graph *g, const char *name)
{
    if (!name)
        return NULL;
    name_slot *s = table_find(&g->index->values.names, name, strlen(name));
    return s ? (gl_value *)s->ref : NULL;
}

gl_node *gl_find_node(const gl_graph *g, const char *name)
{
    if (!name)
        return NULL;
    name_slot *s = table_find(&g->index->nodes.names, name, strlen(name));
    return s ? (gl_node *)s->ref : NULL;
}

gl_node *gl_find_node_by_id(const gl_graph *g, uint32_t id)
{
    gl_node *n;
    if (!g)
        return NULL;
    gl_foreach_node(g, k, n)
        if (n->id == id)
            return n;
    return NULL;
}

void gl_graph_reserve(gl_graph *g, size_t more_nodes, size_t more_values)
{
    GL_GROW(g->nodes, g->cap_nodes, g->n_nodes + more_nodes);
    GL_GROW(g->values, g->cap_values, g->n_values + more_values);
    table_reserve(&g->index->nodes.names, g->index->nodes.names.count + more_nodes);
    table_reserve(&g->index->values.names, g->index->values.names.count + more_values);
}

static gl_value *capture_of(const gl_graph *g, const gl_value *outer)
{
    for (size_t i = 0; i < g->n_captures; i++)
        if (g->captures[i]->outer == outer)
            return g->captures[i];
    return NULL;
}

static void node_add_implicit(gl_node *n, gl_value *outer)
{
    if (value_list_has(n->implicit, n->n_implicit, outer))
        return;
    touch_node(n);
    GL_GROW(n->implicit, n->cap_implicit, n->n_implicit + 1);
    n->implicit[n->n_implicit++] = outer;
    use_add(outer, n, GL_USE_IMPLICIT);
}

gl_value *gl_resolve_value(gl_graph *g, const char *name)
{
    gl_value *v = gl_find_value(g, name);
    if (v || !g->parent)
        return v;
    gl_value *outer = gl_resolve_value(g->parent, name);
    if (!outer)
        return NULL;
    /* A capture re-pointed by gl_replace_all_uses may carry another name. */
    gl_value *c = capture_of(g, outer);
    if (c)
        return c;
    touch_graph(g); /* first: the capture's id is one the trial made */
    c = value_alloc(g, gl_xstrdup(name));
    c->outer = outer;
    gl_type_copy(&c->type, &outer->type);
    c->id = g->next_value_id++;
    value_append(g, c);
    GL_GROW(g->captures, g->cap_captures, g->n_captures + 1);
    g->captures[g->n_captures++] = c;
    if (g->parent_node)
        node_add_implicit(g->parent_node, outer);
    return c;
}

char *gl_unique_value_name(const gl_graph *g, const char *hint)
{
    return scope_unique(&g->index->values, hint && *hint ? hint : "v");
}

char *gl_unique_node_name(const gl_graph *g, const char *hint)
{
    return scope_unique(&g->index->nodes, hint && *hint ? hint : "node");
}

/* The name itself is tried first (one probe of the index when it is free, the common
 * case); only a taken name goes through the suffix search. */
gl_value *gl_add_value(gl_graph *g, const char *name)
{
    touch_graph(g); /* first: the new id is one the trial made */
    const char *hint = name && *name ? name : "v";
    gl_value *v = value_alloc(g, gl_xstrdup(hint));
    if (!index_claim_value(g, v)) {
        free(v->name);
        v->name = gl_unique_value_name(g, hint);
        index_claim_value(g, v);
    }
    v->id = g->next_value_id++;
    values_push(g, v);
    return v;
}

gl_status gl_rename_value(gl_graph *g, gl_value *v, const char *name)
{
    if (!value_in_graph(g, v))
        return gl_fail(GL_ERR_INPUT, "graph '%s': cannot rename value '%s': it belongs to another graph",
                       graph_label(g), v->name);
    if (!name || !*name)
        return gl_fail(GL_ERR_INPUT, "graph '%s': value '%s' cannot be renamed to an empty name",
                       graph_label(g), v->name);
    gl_value *holder = gl_find_value(g, name);
    if (holder == v)
        return GL_OK;
    if (holder)
        return gl_fail(GL_ERR_INPUT, "graph '%s': cannot rename value '%s' to '%s': name taken",
                       graph_label(g), v->name, name);
    index_drop_value(g, v);
    char *old = v->name;
    v->name = gl_xstrdup(name);
    gl_journal *j = journal_of(g);
    if (!j || !gl_journal_renames_value(j, v, old))
        free(old);
    index_add_value(g, v);
    return GL_OK;
}

/* ==== the edit API ==================================================================== */

void gl_rename_node(gl_graph *g, gl_node *n, const char *name)
{
    char *old = n->name;
    bool old_generated = n->name_generated;
    index_drop_node(g, n); /* reads the old name: free it only after */
    n->name = gl_xstrdup(name);
    n->name_generated = false;
    gl_journal *j = journal_of(g);
    if (!j || !gl_journal_renames_node(j, n, old, old_generated))
        free(old);
    index_add_node(g, n);
}

static char *generated_node_name(const gl_graph *g, const char *op_type)
{
    char hint[160];
    snprintf(hint, sizeof(hint), "%.120s_%" PRIu32, op_type, g->next_node_id);
    return gl_unique_node_name(g, hint);
}

static gl_value *fresh_output(gl_graph *g, const gl_node *n, size_t slot)
{
    size_t cap = strlen(n->name) + 32;
    char *hint = gl_xmalloc(cap);
    snprintf(hint, cap, "%s_out%zu", n->name, slot);
    gl_value *v = gl_add_value(g, hint);
    free(hint);
    v->producer = (gl_node *)n;
    v->producer_slot = (int)slot;
    return v;
}

static bool inputs_in_graph(const gl_graph *g, const char *op_type,
                            gl_value *const *inputs, size_t n_inputs)
{
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i] && !value_in_graph(g, inputs[i])) {
            gl_fail(GL_ERR_INTERNAL, "graph '%s': new %s node: input %zu '%s' belongs to another graph",
                    graph_label(g), op_type, i, inputs[i]->name);
            return false;
        }
    return true;
}

/* How a node being added gets its strings: copies of the caller's, or the caller's own
 * malloc'd ones taken over (gl_add_node_take), so a loader's strings exist once. */
typedef enum strings_mode { STRINGS_COPY, STRINGS_TAKE } strings_mode;

static char *adopt(const char *s, strings_mode mode)
{
    return mode == STRINGS_TAKE ? (char *)s : gl_xstrdup(s);
}

/* On a failure path: a taken string goes back to the caller, so forget it here. */
static void disown(char **s, strings_mode mode)
{
    if (mode == STRINGS_TAKE)
        *s = NULL;
}

/* A node that is not in the graph yet: no id, no inputs, empty output slots. Its
 * generated name ("<op>_<id>") uses the id it will get from node_attach. The domain is
 * always copied (files mostly leave it out). */
static gl_node *node_alloc(gl_graph *g, const char *op_type, const char *domain,
                           const char *name, size_t n_outputs, strings_mode mode)
{
    gl_node *n = gl_xcalloc(1, sizeof(*n));
    n->graph = g;
    n->op_type = adopt(op_type, mode);
    n->domain = gl_xstrdup(gl_domain_canonical(domain));
    n->name_generated = !name || !*name;
    n->name = n->name_generated ? generated_node_name(g, op_type) : adopt(name, mode);
    n->prov.decision = -1;
    node_set_output_count(n, n_outputs);
    return n;
}

/* Free a node that node_attach never saw, leaving taken strings to the caller. */
static void node_discard(gl_node *n, strings_mode mode)
{
    disown(&n->op_type, mode);
    if (!n->name_generated)
        disown(&n->name, mode);
    node_free(n);
}

/* Give the node its id, its inputs (and their uses) and its place in the graph. */
static void node_attach(gl_graph *g, gl_node *n, gl_value *const *inputs, size_t n_inputs)
{
    touch_graph(g); /* first: the new id is one the trial made */
    n->id = g->next_node_id++;
    n->inputs = n_inputs ? gl_xmalloc(n_inputs * sizeof(gl_value *)) : NULL;
    n->n_inputs = n->cap_inputs = n_inputs;
    for (size_t i = 0; i < n_inputs; i++) {
        n->inputs[i] = inputs[i];
        if (inputs[i])
            use_add(inputs[i], n, (int)i);
    }
    GL_GROW(g->nodes, g->cap_nodes, g->n_nodes + 1);
    n->index = g->n_nodes;
    g->nodes[g->n_nodes++] = n;
    g->live_nodes++;
    index_add_node(g, n);
}

gl_node *gl_add_node(gl_graph *g, const char *op_type, const char *domain, const char *name,
                     gl_value *const *inputs, size_t n_inputs, size_t n_outputs)
{
    if (!inputs_in_graph(g, op_type, inputs, n_inputs))
        return NULL;
    gl_node *n = node_alloc(g, op_type, domain, name, n_outputs, STRINGS_COPY);
    node_attach(g, n, inputs, n_inputs);
    for (size_t i = 0; i < n_outputs; i++)
        n->outputs[i] = fresh_output(g, n, i);
    return n;
}

/* Output values of a node being added: the index holds their names, but they have no
 * ids and are not in g->values until the node is committed. */
static bool claim_output_names(gl_graph *g, gl_node *n, const char *const *names,
                               strings_mode mode, size_t *failed)
{
    for (size_t i = 0; i < n->n_outputs; i++) {
        if (!names[i] || !*names[i])
            continue;
        gl_value *v = value_alloc(g, adopt(names[i], mode));
        if (!index_claim_value(g, v)) {
            disown(&v->name, mode);
            value_free_contents(v);
            *failed = i;
            return false;
        }
        v->producer = n;
        v->producer_slot = (int)i;
        n->outputs[i] = v;
    }
    return true;
}

static void release_output_names(gl_graph *g, gl_node *n, strings_mode mode)
{
    for (size_t i = 0; i < n->n_outputs; i++) {
        gl_value *v = n->outputs[i];
        if (!v)
            continue;
        index_drop_value(g, v);
        disown(&v->name, mode);
        value_free_contents(v);
        n->outputs[i] = NULL;
    }
}

/* gl_add_node_named and gl_add_node_take: all or nothing. */
static gl_node *add_node_named(gl_graph *g, const char *op_type, const char *domain,
                               const char *name, gl_value *const *inputs, size_t n_inputs,
                               const char *const *output_names, size_t n_outputs,
                               strings_mode mode)
{
    if (!inputs_in_graph(g, op_type, inputs, n_inputs))
        return NULL;
    gl_node *n = node_alloc(g, op_type, domain, name, n_outputs, mode);
    size_t failed = 0;
    if (!claim_output_names(g, n, output_names, mode, &failed)) {
        gl_fail(GL_ERR_INPUT, "graph '%s': new node '%s' (%s): output %zu '%s': name taken",
                graph_label(g), n->name, op_type, failed, output_names[failed]);
        release_output_names(g, n, mode);
        node_discard(n, mode);
        return NULL;
    }
    node_attach(g, n, inputs, n_inputs);
    for (size_t i = 0; i < n_outputs; i++)
        if (n->outputs[i]) {
            n->outputs[i]->id = g->next_value_id++;
            values_push(g, n->outputs[i]);
        }
    return n;
}

gl_node *gl_add_node_named(gl_graph *g, const char *op_type, const char *domain,
                           const char *name, gl_value *const *inputs, size_t n_inputs,
                           const char *const *output_names, size_t n_outputs)
{
    return add_node_named(g, op_type, domain, name, inputs, n_inputs, output_names,
                          n_outputs, STRINGS_COPY);
}

gl_node *gl_add_node_take(gl_graph *g, char **op_type, const char *domain, char **name,
                          gl_value *const *inputs, size_t n_inputs, char **output_names,
                          size_t n_outputs)
{
    gl_node *n = add_node_named(g, *op_type, domain, *name, inputs, n_inputs,
                                (const char *const *)output_names, n_outputs, STRINGS_TAKE);
    if (!n)
        return NULL;
    *op_type = NULL;
    if (!n->name_generated)
        *name = NULL;
    for (size_t i = 0; i < n_outputs; i++)
        if (n->outputs[i])
            output_names[i] = NULL;
    return n;
}

static gl_status check_removable(const gl_graph *g, const gl_node *n)
{
    if (!node_in_graph(g, n))
        return gl_fail(GL_ERR_INPUT, "graph '%s': node '%s' (%s) is not in this graph",
                       graph_label(g), n->name, n->op_type);
    for (size_t i = 0; i < n->n_outputs; i++) {
        const gl_value *v = n->outputs[i];
        if (v && v->n_uses)
            return gl_fail(GL_ERR_INPUT, "graph '%s': cannot remove node '%s' (%s): output '%s' still has %zu use(s)",
                           graph_label(g), n->name, n->op_type, v->name, v->n_uses);
        if (v && v->n_output_refs)
            return gl_fail(GL_ERR_INPUT, "graph '%s': cannot remove node '%s' (%s): output '%s' is a graph output",
                           graph_label(g), n->name, n->op_type, v->name);
    }
    return GL_OK;
}

gl_status gl_remove_node(gl_graph *g, gl_node *n)
{
    gl_status st = check_removable(g, n);
    if (st)
        return st;
    gl_journal *j = journal_of(g);
    if (j) {
        gl_journal_node(j, n);
        gl_journal_touch_graph(j, g);
    }
    for (size_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i])
            use_remove(n->inputs[i], n, (int)i);
    for (size_t i = 0; i < n->n_implicit; i++)
        use_remove(n->implicit[i], n, GL_USE_IMPLICIT);
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i])
            value_destroy(g, n->outputs[i]);
    g->nodes[n->index] = NULL;
    index_drop_node(g, n);
    g->live_nodes--;
    if (!j || !gl_journal_keeps_node(j, n))
        node_free(n);
    return GL_OK;
}

gl_status gl_drop_output(gl_graph *g, gl_node *n, size_t slot)
{
    if (!node_in_graph(g, n) || slot >= n->n_outputs)
        return gl_fail(GL_ERR_INPUT, "graph '%s': node '%s' (%s) has no output slot %zu",
                       graph_label(g), n->name, n->op_type, slot);
    gl_value *v = n->outputs[slot];
    if (!v)
        return GL_OK;
    if (v->n_uses || v->n_output_refs)
        return gl_fail(GL_ERR_INPUT, "graph '%s': node '%s' (%s): output '%s' is still used, cannot omit it",
                       graph_label(g), n->name, n->op_type, v->name);
    touch_node(n);
    value_destroy(g, v);
    n->outputs[slot] = NULL;
    return GL_OK;
}

gl_status gl_set_input(gl_graph *g, gl_node *n, size_t slot, gl_value *v)
{
    if (!node_in_graph(g, n))
        return gl_fail(GL_ERR_INPUT, "graph '%s': node '%s' (%s) is not in this graph",
                       graph_label(g), n->name, n->op_type);
    if (slot > n->n_inputs || slot > INT32_MAX)
        return gl_fail(GL_ERR_INPUT, "graph '%s': node '%s' (%s): input slot %zu is past the end (%zu inputs)",
                       graph_label(g), n->name, n->op_type, slot, n->n_inputs);
    if (v && !value_in_graph(g, v))
        return gl_fail(GL_ERR_INPUT, "graph '%s': node '%s' (%s): value '%s' belongs to another graph",
                       graph_label(g), n->name, n->op_type, v->name);
    touch_node(n);
    if (slot == n->n_inputs) {
        GROW_SMALL(n->inputs, n->cap_inputs, n->n_inputs + 1);
        n->inputs[n->n_inputs++] = NULL;
    }
    gl_value *old = n->inputs[slot];
    if (old == v)
        return GL_OK;
    if (old)
        use_remove(old, n, (int)slot);
    n->inputs[slot] = v;
    if (v)
        use_add(v, n, (int)slot);
    return GL_OK;
}

void gl_truncate_inputs(gl_graph *g, gl_node *n, size_t count)
{
    (void)g;
    if (n->n_inputs > count)
        touch_node(n);
    while (n->n_inputs > count) {
        size_t slot = --n->n_inputs;
        if (n->inputs[slot])
            use_remove(n->inputs[slot], n, (int)slot);
        n->inputs[slot] = NULL;
    }
}

gl_status gl_move_output(gl_graph *g, gl_node *src, size_t src_slot, gl_node *dst,
                         size_t dst_slot)
{
    if (!node_in_graph(g, src) || !node_in_graph(g, dst))
        return gl_fail(GL_ERR_INPUT, "graph '%s': move output: node '%s' or '%s' is not in this graph",
                       graph_label(g), src->name, dst->name);
    if (src_slot >= src->n_outputs || !src->outputs[src_slot])
        return gl_fail(GL_ERR_INPUT, "graph '%s': node '%s' (%s) has no output %zu to move",
                       graph_label(g), src->name, src->op_type, src_slot);
    if (dst_slot >= dst->n_outputs)
        return gl_fail(GL_ERR_INPUT, "graph '%s': node '%s' (%s) has no output slot %zu",
                       graph_label(g), dst->name, dst->op_type, dst_slot);
    if (src == dst && src_slot == dst_slot)
        return GL_OK;
    gl_value *old = dst->outputs[dst_slot];
    if (old && (old->n_uses || old->n_output_refs))
        return gl_fail(GL_ERR_INPUT, "graph '%s': node '%s' (%s): output '%s' is still used, cannot replace it",
                       graph_label(g), dst->name, dst->op_type, old->name);
    gl_value *v = src->outputs[src_slot];
    touch_node(src);
    touch_node(dst);
    touch_value(v);
    if (old)
        value_destroy(g, old);
    dst->outputs[dst_slot] = v;
    v->producer = dst;
    v->producer_slot = (int)dst_slot;
    gl_value *fresh = fresh_output(g, src, src_slot);
    gl_type_copy(&fresh->type, &v->type);
    src->outputs[src_slot] = fresh;
    return GL_OK;
}

static void type_from_tensor(gl_type *ty, const gl_tensor *t)
{
    gl_type_free(ty);
    ty->kind = GL_TYPE_TENSOR;
    ty->dtype = t->dtype;
    gl_shape_set_rank(&ty->shape, t->rank);
    for (int i = 0; i < t->rank; i++)
        ty->shape.dims[i].value = t->dims[i];
}

gl_value *gl_add_initializer(gl_graph *g, const char *name, gl_tensor *t)
{
    if (!t)
        return NULL;
    gl_value *v = gl_add_value(g, name);
    v->init = t;
    type_from_tensor(&v->type, t);
    touch_graph(g);
    GL_GROW(g->inits, g->cap_inits, g->n_inits + 1);
    g->inits[g->n_inits++] = v;
    return v;
}

gl_status gl_value_make_constant(gl_graph *g, gl_value *v, gl_tensor *t)
{
    if (!v)
        return gl_fail(GL_ERR_INPUT, "graph '%s': no value to make a constant", graph_label(g));
    const char *why = !t                    ? "no tensor given"
                      : !value_in_graph(g, v) ? "it is not in this graph"
                      : v->init               ? "it already holds an initializer"
                      : v->is_input           ? "it is a graph input"
                      : v->outer              ? "it is a capture of an outer value"
                                              : NULL;
    if (why)
        return gl_fail(GL_ERR_INPUT, "graph '%s': cannot make value '%s' a constant: %s",
                       graph_label(g), v->name, why);
    touch_graph(g);
    touch_value(v);
    touch_node(v->producer);
    if (v->producer) {
        v->producer->outputs[v->producer_slot] = NULL;
        v->producer = NULL;
        v->producer_slot = -1;
    }
    v->init = t;
    type_from_tensor(&v->type, t);
    GL_GROW(g->inits, g->cap_inits, g->n_inits + 1);
    g->inits[g->n_inits++] = v;
    return GL_OK;
}

gl_status gl_remove_value(gl_graph *g, gl_value *v)
{
    const char *why = !value_in_graph(g, v) ? "it is not in this graph"
                      : v->producer         ? "a node produces it"
                      : v->n_uses           ? "it still has uses"
                      : v->is_input         ? "it is a graph input"
                      : v->n_output_refs    ? "it is a graph output"
                                            : NULL;
    if (why)
        return gl_fail(GL_ERR_INPUT, "graph '%s': cannot remove value '%s': %s", graph_label(g),
                       v->name, why);
    touch_graph(g);
    if (v->init)
        value_list_remove(g->inits, &g->n_inits, v);
    bool was_capture = v->outer && value_list_remove(g->captures, &g->n_captures, v);
    value_destroy(g, v);
    if (was_capture && g->parent_node)
        node_sync_implicit(g->parent_node);
    return GL_OK;
}

/* ---- replace_all_uses and the captures it re-points ---- */

static void replace_uses(gl_value *from, gl_value *to);

/* Keep "a capture is named after what it captures" when the name is free, down through
 * nested subgraphs that capture this capture. */
static void rename_capture_chain(gl_graph *s, gl_value *c, const char *name)
{
    if (!gl_find_value(s, name))
        gl_rename_value(s, c, name);
    for (size_t u = 0; u < c->n_uses; u++) {
        if (c->uses[u].slot != GL_USE_IMPLICIT)
            continue;
        gl_node *m = c->uses[u].node;
        for (size_t a = 0; a < m->n_attrs; a++) {
            gl_graph *const *subs;
            size_t n_subs = attr_graphs(&m->attrs[a], &subs);
            for (size_t j = 0; j < n_subs; j++) {
                gl_value *cc = subs[j] ? capture_of(subs[j], c) : NULL;
                if (cc)
                    rename_capture_chain(subs[j], cc, name);
            }
        }
    }
}

/* Subgraph `s` captured `from`; it must now capture `to`. When it already captures `to`,
 * the two captures merge so a subgraph never holds two captures of one value. */
static void repoint_captures(gl_graph *s, gl_value *from, gl_value *to)
{
    gl_value *moved = capture_of(s, from);
    if (!moved)
        return;
    gl_value *existing = capture_of(s, to);
    touch_value(moved);
    if (!existing) {
        moved->outer = to;
        gl_type_copy(&moved->type, &to->type);
        rename_capture_chain(s, moved, to->name);
        return;
    }
    replace_uses(moved, existing);
    for (size_t i = 0; i < s->n_outputs; i++)
        if (s->outputs[i] == moved)
            gl_graph_set_output(s, i, existing);
    touch_graph(s);
    value_list_remove(s->captures, &s->n_captures, moved);
    value_destroy(s, moved);
}

static void repoint_implicit(gl_node *n, gl_value *from, gl_value *to)
{
    touch_node(n);
    if (value_list_has(n->implicit, n->n_implicit, to)) {
        value_list_remove(n->implicit, &n->n_implicit, from);
    } else {
        for (size_t i = 0; i < n->n_implicit; i++)
            if (n->implicit[i] == from)
                n->implicit[i] = to;
        use_add(to, n, GL_USE_IMPLICIT);
    }
    for (size_t a = 0; a < n->n_attrs; a++) {
        gl_graph *const *subs;
        size_t n_subs = attr_graphs(&n->attrs[a], &subs);
        for (size_t j = 0; j < n_subs; j++)
            if (subs[j])
                repoint_captures(subs[j], from, to);
    }
}

static void replace_uses(gl_value *from, gl_value *to)
{
    /* Detach the list first: merging captures may re-enter with other values. */
    touch_value(from);
    gl_use *uses = from->uses;
    size_t n_uses = from->n_uses;
    from->uses = NULL;
    from->n_uses = from->cap_uses = 0;
    for (size_t i = 0; i < n_uses; i++) {
        gl_node *n = uses[i].node;
        if (uses[i].slot >= 0) {
            touch_node(n);
            n->inputs[uses[i].slot] = to;
            use_add(to, n, uses[i].slot);
        } else {
            repoint_implicit(n, from, to);
        }
    }
    free(uses);
}

gl_status gl_replace_all_uses(gl_graph *g, gl_value *from, gl_value *to)
{
    if (!from || !to || !value_in_graph(g, from) || !value_in_graph(g, to))
        return gl_fail(GL_ERR_INPUT, "graph '%s': replace uses of '%s' by '%s': both must be values of this graph",
                       graph_label(g), from ? from->name : "(null)", to ? to->name : "(null)");
    if (from != to)
        replace_uses(from, to);
    return GL_OK;
}

void gl_graph_add_input(gl_graph *g, gl_value *v)
{
    touch_graph(g);
    touch_value(v);
    GL_GROW(g->inputs, g->cap_inputs, g->n_inputs + 1);
    g->inputs[g->n_inputs++] = v;
    v->is_input = true;
}

void gl_graph_add_output(gl_graph *g, gl_value *v)
{
    touch_graph(g);
    touch_value(v);
    GL_GROW(g->outputs, g->cap_outputs, g->n_outputs + 1);
    g->outputs[g->n_outputs++] = v;
    v->n_output_refs++;
}

void gl_graph_set_output(gl_graph *g, size_t i, gl_value *v)
{
    if (i >= g->n_outputs) {
        gl_graph_add_output(g, v);
        return;
    }
    touch_graph(g);
    touch_value(g->outputs[i]);
    touch_value(v);
    g->outputs[i]->n_output_refs--;
    g->outputs[i] = v;
    v->n_output_refs++;
}

/* ==== provenance ====================================================================== */

void gl_node_set_provenance(gl_node *n, const uint32_t *origins, size_t n_origins,
                            int64_t decision)
{
    touch_node(n);
    prov_set_origins(&n->prov, origins, n_origins);
    n->prov.decision = decision;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

void gl_node_inherit_provenance(gl_node *n, gl_node *const *srcs, size_t n_srcs,
                                int64_t decision)
{
    touch_node(n);
    size_t total = n->prov.n_origins;
    for (size_t i = 0; i < n_srcs; i++)
        total += srcs[i]->prov.n_origins;
    uint32_t *all = gl_xmalloc((total ? total : 1) * sizeof(uint32_t));
    size_t k = 0;
    for (size_t i = 0; i < n->prov.n_origins; i++)
        all[k++] = n->prov.origins[i];
    for (size_t i = 0; i < n_srcs; i++)
        for (size_t j = 0; j < srcs[i]->prov.n_origins; j++)
            all[k++] = srcs[i]->prov.origins[j];
    qsort(all, k, sizeof(uint32_t), cmp_u32);
    size_t unique = 0;
    for (size_t i = 0; i < k; i++)
        if (unique == 0 || all[unique - 1] != all[i])
            all[unique++] = all[i];
    prov_set_origins(&n->prov, all, unique);
    free(all);
    n->prov.decision = decision;
}

/* ==== order =========================================================================== */

void gl_graph_compact(gl_graph *g)
{
    touch_graph(g);
    size_t k = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]) {
            g->nodes[i]->index = k;
            g->nodes[k++] = g->nodes[i];
        }
    g->n_nodes = k;
    k = 0;
    for (size_t i = 0; i < g->n_values; i++)
        if (g->values[i]) {
            g->values[i]->index = k;
            g->values[k++] = g->values[i];
        }
    g->n_values = k;
}

gl_status gl_graph_set_order(gl_graph *g, gl_node *const *order, size_t count)
{
    if (count != g->live_nodes)
        return gl_fail(GL_ERR_INTERNAL, "graph '%s': new order has %zu nodes, the graph %zu",
                       graph_label(g), count, g->live_nodes);
    /* A permutation check in linear time: mark each node's old slot once. */
    unsigned char *seen = gl_xcalloc(g->n_nodes ? g->n_nodes : 1, 1);
    for (size_t i = 0; i < count; i++) {
        const gl_node *n = order[i];
        if (!n || !node_in_graph(g, n) || seen[n->index]) {
            free(seen);
            return gl_fail(GL_ERR_INTERNAL, "graph '%s': new order entry %zu is not a distinct live node of the graph",
                           graph_label(g), i);
        }
        seen[n->index] = 1;
    }
    free(seen);
    touch_graph(g);
    GL_GROW(g->nodes, g->cap_nodes, count);
    if (count) /* an empty graph may have no array, nor an order */
        memcpy(g->nodes, order, count * sizeof(gl_node *));
    for (size_t i = 0; i < count; i++)
        g->nodes[i]->index = i;
    g->n_nodes = count;
    /* "First node so named" must follow the new order, which matters only when some
     * names repeat: as many distinct names as nodes means none does. */
    if (g->index->nodes.names.count != g->live_nodes)
        index_rebuild_nodes(g);
    return GL_OK;
}

size_t gl_graph_count_nodes(const gl_graph *g, bool recursive)
{
    size_t total = g->live_nodes;
    if (!recursive)
        return total;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        for (size_t a = 0; n && a < n->n_attrs; a++) {
            gl_graph *const *subs;
            size_t n_subs = attr_graphs(&n->attrs[a], &subs);
            for (size_t j = 0; j < n_subs; j++)
                if (subs[j])
                    total += gl_graph_count_nodes(subs[j], true);
        }
    }
    return total;
}

/* ==== deep copy ======================================================================= *
 *
 * Arrays keep their layout (holes included), so a pointer into the source maps to the
 * copy through its ->index: values, nodes and captures' outer values alike.
 */

static gl_graph *graph_clone(const gl_graph *src, gl_model *m, gl_graph *parent,
                             gl_node *parent_node);

static char **strings_copy(char *const *src, size_t n)
{
    if (!src)
        return NULL;
    char **dst = gl_xcalloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        dst[i] = gl_xstrdup(src[i]);
    return dst;
}

static void attr_copy(gl_attr *dst, const gl_attr *src, gl_graph *g, gl_node *owner)
{
    *dst = (gl_attr){
        .name = gl_xstrdup(src->name),
        .type = src->type,
        .ref_attr_name = gl_xstrdup(src->ref_attr_name),
        .doc_string = gl_xstrdup(src->doc_string),
        .f = src->f,
        .i = src->i,
        .n = src->n,
    };
    if (src->s.data)
        bytes_copy(&dst->s, &src->s);
    dst->t = src->t ? gl_tensor_share(src->t) : NULL;
    dst->g = src->g ? graph_clone(src->g, g->model, g, owner) : NULL;
    dst->floats = mem_dup(src->floats, src->n * sizeof(float));
    dst->ints = mem_dup(src->ints, src->n * sizeof(int64_t));
    dst->strings = bytes_array_copy(src->strings, src->n);
    dst->opaque = bytes_array_copy(src->opaque, src->n);
    if (src->tensors) {
        dst->tensors = gl_xcalloc(src->n ? src->n : 1, sizeof(gl_tensor *));
        for (size_t i = 0; i < src->n; i++)
            dst->tensors[i] = src->tensors[i] ? gl_tensor_share(src->tensors[i]) : NULL;
    }
    if (src->graphs) {
        dst->graphs = gl_xcalloc(src->n ? src->n : 1, sizeof(gl_graph *));
        for (size_t i = 0; i < src->n; i++)
            dst->graphs[i] = src->graphs[i] ? graph_clone(src->graphs[i], g->model, g, owner) : NULL;
    }
}

void gl_node_copy_attrs(gl_node *dst, const gl_node *src)
{
    for (size_t i = 0; i < src->n_attrs; i++) {
        gl_attr a;
        attr_copy(&a, &src->attrs[i], dst->graph, dst);
        gl_node_take_attr(dst, &a);
    }
}

static gl_value *value_clone(const gl_value *src, gl_graph *g)
{
    gl_value *v = value_alloc(g, gl_xstrdup(src->name));
    v->id = src->id;
    gl_type_copy(&v->type, &src->type);
    v->doc_string = gl_xstrdup(src->doc_string);
    v->producer_slot = src->producer_slot;
    v->init = src->init ? gl_tensor_share(src->init) : NULL;
    v->is_input = src->is_input;
    v->n_output_refs = src->n_output_refs;
    v->index = src->index;
    return v;
}

static gl_value *map_value(const gl_graph *dst, const gl_value *v)
{
    return v ? dst->values[v->index] : NULL;
}

static gl_value **value_list_map(const gl_graph *dst, gl_value *const *src, size_t n,
                                 size_t *cap)
{
    *cap = n;
    if (!n)
        return NULL;
    gl_value **out = gl_xmalloc(n * sizeof(gl_value *));
    for (size_t i = 0; i < n; i++)
        out[i] = map_value(dst, src[i]);
    return out;
}

static gl_node *node_clone(const gl_node *src, gl_graph *g)
{
    gl_node *n = gl_xcalloc(1, sizeof(*n));
    n->name = gl_xstrdup(src->name);
    n->name_generated = src->name_generated;
    n->op_type = gl_xstrdup(src->op_type);
    n->domain = gl_xstrdup(src->domain);
    n->doc_string = gl_xstrdup(src->doc_string);
    n->id = src->id;
    n->graph = g;
    n->index = src->index;
    n->inputs = value_list_map(g, src->inputs, src->n_inputs, &n->cap_inputs);
    n->n_inputs = src->n_inputs;
    node_set_output_count(n, src->n_outputs);
    for (size_t i = 0; i < n->n_outputs; i++)
        if ((n->outputs[i] = map_value(g, src->outputs[i])))
            n->outputs[i]->producer = n;
    n->implicit = value_list_map(g, src->implicit, src->n_implicit, &n->cap_implicit);
    n->n_implicit = src->n_implicit;
    prov_set_origins(&n->prov, src->prov.origins, src->prov.n_origins);
    n->prov.decision = src->prov.decision;
    if (src->n_attrs) {
        n->attrs = gl_xcalloc(src->n_attrs, sizeof(gl_attr));
        n->cap_attrs = n->n_attrs = src->n_attrs;
        for (size_t i = 0; i < src->n_attrs; i++)
            attr_copy(&n->attrs[i], &src->attrs[i], g, n);
    }
    return n;
}

/* The clone's node or value standing for the source's `obj` (positions are kept by the
 * clone). */
static const void *clone_node_of(const gl_graph *d, const void *obj)
{
    return d->nodes[((const gl_node *)obj)->index];
}

static const void *clone_value_of(const gl_graph *d, const void *obj)
{
    return d->values[((const gl_value *)obj)->index];
}

/* A clone's name table (empty) as a copy of the source's, slot for slot, each object
 * its clone (and so each key its clone's name): no hashing, probing or string compares,
 * which were a third of cloning a 100k-node graph (issue 23). */
static void table_copy_cloned(name_table *dst, const name_table *src, const gl_graph *d,
                              const void *(*clone_of)(const gl_graph *, const void *))
{
    if (!src->cap)
        return;
    dst->slots = gl_xcalloc(src->cap, sizeof(name_slot));
    dst->cap = src->cap;
    dst->count = src->count;
    for (size_t i = 0; i < src->cap; i++) {
        const name_slot *from = &src->slots[i];
        if (from->ref)
            dst->slots[i] = (name_slot){.ref = clone_of(d, from->ref), .hash = from->hash,
                                        .aux = from->aux};
    }
}

static void graph_clone_values(gl_graph *d, const gl_graph *src)
{
    d->values = gl_xcalloc(src->n_values ? src->n_values : 1, sizeof(gl_value *));
    d->n_values = d->cap_values = src->n_values;
    for (size_t i = 0; i < src->n_values; i++)
        if (src->values[i])
            d->values[i] = value_clone(src->values[i], d);
    table_copy_cloned(&d->index->values.names, &src->index->values.names, d, clone_value_of);
    d->inputs = value_list_map(d, src->inputs, src->n_inputs, &d->cap_inputs);
    d->n_inputs = src->n_inputs;
    d->outputs = value_list_map(d, src->outputs, src->n_outputs, &d->cap_outputs);
    d->n_outputs = src->n_outputs;
    d->inits = value_list_map(d, src->inits, src->n_inits, &d->cap_inits);
    d->n_inits = src->n_inits;
    d->captures = value_list_map(d, src->captures, src->n_captures, &d->cap_captures);
    d->n_captures = src->n_captures;
    for (size_t i = 0; i < d->n_captures; i++) {
        const gl_value *outer = src->captures[i]->outer;
        d->captures[i]->outer = d->parent && outer ? map_value(d->parent, outer) : NULL;
    }
}

static void graph_clone_nodes(gl_graph *d, const gl_graph *src)
{
    d->nodes = gl_xcalloc(src->n_nodes ? src->n_nodes : 1, sizeof(gl_node *));
    d->n_nodes = d->cap_nodes = src->n_nodes;
    for (size_t i = 0; i < src->n_nodes; i++)
        if (src->nodes[i])
            d->nodes[i] = node_clone(src->nodes[i], d);
    table_copy_cloned(&d->index->nodes.names, &src->index->nodes.names, d, clone_node_of);
    /* Uses last: they point at nodes, which now all exist. */
    for (size_t i = 0; i < src->n_values; i++) {
        const gl_value *sv = src->values[i];
        if (!sv || !sv->n_uses)
            continue;
        gl_value *v = d->values[i];
        v->uses = gl_xmalloc(sv->n_uses * sizeof(gl_use));
        v->n_uses = v->cap_uses = sv->n_uses;
        for (size_t u = 0; u < sv->n_uses; u++)
            v->uses[u] = (gl_use){d->nodes[sv->uses[u].node->index], sv->uses[u].slot};
    }
}

static gl_graph *graph_clone(const gl_graph *src, gl_model *m, gl_graph *parent,
                             gl_node *parent_node)
{
    gl_graph *d = gl_graph_new(m, parent, src->name);
    d->parent_node = parent_node;
    d->doc_string = gl_xstrdup(src->doc_string);
    d->next_node_id = src->next_node_id;
    d->next_value_id = src->next_value_id;
    d->live_nodes = src->live_nodes;
    graph_clone_values(d, src);
    graph_clone_nodes(d, src);
    d->sparse_inits = bytes_array_copy(src->sparse_inits, src->n_sparse_inits);
    d->n_sparse_inits = src->n_sparse_inits;
    d->quant_annotations = bytes_array_copy(src->quant_annotations, src->n_quant_annotations);
    d->n_quant_annotations = src->n_quant_annotations;
    if (src->origin_block) {
        __atomic_fetch_add(&src->origin_block->refs, 1, __ATOMIC_RELAXED);
        d->origin_block = src->origin_block;
        d->origin_names = src->origin_names;
        d->n_origin_names = src->n_origin_names;
    }
    return d;
}

static gl_opset *opsets_copy(const gl_opset *src, size_t n)
{
    if (!src)
        return NULL;
    gl_opset *dst = gl_xcalloc(n ? n : 1, sizeof(gl_opset));
    for (size_t i = 0; i < n; i++)
        dst[i] = gl_opset_make(src[i].domain, src[i].version);
    return dst;
}

static void function_copy(gl_function *dst, const gl_function *src, gl_model *m)
{
    dst->name = gl_xstrdup(src->name);
    dst->domain = gl_xstrdup(src->domain);
    dst->doc_string = gl_xstrdup(src->doc_string);
    dst->attributes = strings_copy(src->attributes, src->n_attributes);
    dst->n_attributes = src->n_attributes;
    dst->opsets = opsets_copy(src->opsets, src->n_opsets);
    dst->n_opsets = src->n_opsets;
    dst->body = src->body ? graph_clone(src->body, m, NULL, NULL) : NULL;
}

gl_model *gl_model_clone(const gl_model *src)
{
    gl_model *m = gl_model_new();
    m->ir_version = src->ir_version;
    m->opsets = opsets_copy(src->opsets, src->n_opsets);
    m->n_opsets = src->n_opsets;
    m->producer_name = gl_xstrdup(src->producer_name);
    m->producer_version = gl_xstrdup(src->producer_version);
    m->domain = gl_xstrdup(src->domain);
    m->doc_string = gl_xstrdup(src->doc_string);
    m->model_version = src->model_version;
    m->has_model_version = src->has_model_version;
    if (src->n_metadata) {
        m->metadata = gl_xcalloc(src->n_metadata, sizeof(gl_kv));
        for (size_t i = 0; i < src->n_metadata; i++)
            m->metadata[i] = (gl_kv){gl_xstrdup(src->metadata[i].key),
                                     gl_xstrdup(src->metadata[i].value)};
    }
    m->n_metadata = src->n_metadata;
    m->graph = src->graph ? graph_clone(src->graph, m, NULL, NULL) : NULL;
    if (src->n_functions) {
        m->functions = gl_xcalloc(src->n_functions, sizeof(gl_function));
        for (size_t i = 0; i < src->n_functions; i++)
            function_copy(&m->functions[i], &src->functions[i], m);
    }
    m->n_functions = src->n_functions;
    m->training_info = bytes_array_copy(src->training_info, src->n_training_info);
    m->n_training_info = src->n_training_info;
    m->path = gl_xstrdup(src->path);
    m->dir = gl_xstrdup(src->dir);
    m->freeze_inputs = src->freeze_inputs;
    m->memory_plan = gl_memory_plan_clone(src->memory_plan);
    m->types_fingerprint = src->types_fingerprint;
    return m;
}

/* ==== what the journal borrows (journal.h) =============================================== */

void gl_ir_node_free(gl_node *n) { node_free(n); }

void gl_ir_value_free(gl_value *v) { value_free_contents(v); }

/* As a clone's index: the names of the lists as they are, and no suffix hints (a hint
 * the trial moved on past names it made would skip them once they are free again). */
void gl_ir_index_rebuild(gl_graph *g)
{
    table_free(&g->index->values.suffix);
    table_free(&g->index->nodes.suffix);
    table_free(&g->index->values.names);
    table_reserve(&g->index->values.names, g->n_values);
    for (size_t i = 0; i < g->n_values; i++)
        if (g->values[i])
            index_add_value(g, g->values[i]);
    index_rebuild_nodes(g);
}

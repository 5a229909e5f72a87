/* cse.c — common-subexpression elimination.
 *
 * Two nodes compute the same when they have the same domain, op type and attributes (by
 * value; a node's name and doc are not compared), read the same values in the same slots
 * (omitted ones included; Add(x, y) and Add(y, x) differ: no commutativity is assumed)
 * and have the same outputs present. Nodes are visited in topological order and looked up
 * in a hash table of the nodes kept so far; a match merges the later node into the
 * earlier, whose outputs its consumers then read, so those consumers meet their own
 * duplicates when their turn comes: chains collapse in one run. Equal small constants
 * (initializers) are merged first, so nodes reading two copies of one scalar meet too.
 *
 * Graph outputs keep their names. When the later node produces a graph output and the
 * kept one does not (in that slot), the merge hands the value over: the kept node
 * produces it from then on (gl_move_output), so the name stays and nothing moves in the
 * order. When both do, both stay.
 *
 * A node's inputs enter the hash by where they come from (producer id and slot, or the
 * value id), not by the value object: handing a value over keeps the slot, so the hashes
 * of nodes already in the table stay right.
 *
 * Nodes with subgraphs are skipped: comparing bodies is not worth it. Bodies of
 * If/Loop/Scan nodes get their own run, with their own table.
 */
#include "passes/passes.h"

#include "util/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- hashing ------------------------------------------------------------------------- */

static uint64_t mix_bytes(uint64_t h, const void *p, size_t n) { return gl_fnv1a(h, p, n); }

/* A word at a time (FNV-1a's byte loop took eight dependent multiplies per word, and
 * every node of the graph is keyed by about ten words). Only equality of keys matters:
 * the table keeps one node (or constant) of each kind, found by comparing them whole. */
static uint64_t mix_u64(uint64_t h, uint64_t x) { return gl_mix64(h ^ x); }

static uint64_t mix_str(uint64_t h, const char *s)
{
    return s ? mix_bytes(h, s, strlen(s) + 1) : mix_u64(h, 0);
}

static uint64_t mix_bytes_list(uint64_t h, const gl_bytes *b, size_t n)
{
    for (size_t i = 0; b && i < n; i++)
        h = mix_bytes(mix_u64(h, b[i].len), b[i].data, b[i].len);
    return h;
}

static uint64_t attr_hash(const gl_attr *a)
{
    uint64_t h = mix_u64(mix_str(GL_FNV_OFFSET, a->name), (uint64_t)a->type);
    h = mix_str(h, a->ref_attr_name);
    switch (a->type) {
    case GL_ATTR_FLOAT:
        return mix_bytes(h, &a->f, sizeof(a->f));
    case GL_ATTR_INT:
        return mix_u64(h, (uint64_t)a->i);
    case GL_ATTR_STRING:
        return mix_bytes_list(h, &a->s, 1);
    case GL_ATTR_TENSOR:
        return a->t ? mix_u64(h, gl_tensor_hash(a->t)) : h;
    case GL_ATTR_FLOATS:
        return mix_bytes(h, a->floats, a->floats ? a->n * sizeof(float) : 0);
    case GL_ATTR_INTS:
        return mix_bytes(h, a->ints, a->ints ? a->n * sizeof(int64_t) : 0);
    case GL_ATTR_STRINGS:
        return mix_bytes_list(h, a->strings, a->n);
    case GL_ATTR_TENSORS:
        for (size_t i = 0; a->tensors && i < a->n; i++)
            h = a->tensors[i] ? mix_u64(h, gl_tensor_hash(a->tensors[i])) : h;
        return h;
    default: /* sparse tensors and type protos, kept packed */
        return mix_bytes_list(h, a->opaque, a->n);
    }
}

/* The node's key: everything nodes_equal compares. */
static uint64_t node_hash(const gl_node *n)
{
    uint64_t h = mix_str(mix_str(GL_FNV_OFFSET, n->domain), n->op_type);
    h = mix_u64(h, n->n_inputs);
    for (size_t i = 0; i < n->n_inputs; i++) {
        const gl_value *v = n->inputs[i];
        if (!v)
            h = mix_u64(h, 0);
        else if (v->producer)
            h = mix_u64(mix_u64(h, 1 + (uint64_t)v->producer->id), (uint64_t)v->producer_slot);
        else
            h = mix_u64(mix_u64(h, 0), v->id);
    }
    h = mix_u64(h, n->n_outputs);
    for (size_t i = 0; i < n->n_outputs; i++)
        h = mix_u64(h, n->outputs[i] != NULL);
    /* Attributes are a set: their order in the file does not matter. */
    uint64_t attrs = 0;
    for (size_t i = 0; i < n->n_attrs; i++)
        attrs += attr_hash(&n->attrs[i]);
    return mix_u64(h, attrs);
}

/* ---- equality ------------------------------------------------------------------------ */

static bool str_eq(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

static bool bytes_eq(const gl_bytes *a, const gl_bytes *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].len != b[i].len || (a[i].len && memcmp(a[i].data, b[i].data, a[i].len)))
            return false;
    return true;
}

static bool tensors_eq(gl_tensor *const *a, gl_tensor *const *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((a[i] && b[i]) ? !gl_tensor_equal(a[i], b[i]) : a[i] != b[i])
            return false;
    return true;
}

/* Floats compare by bits: 0.0 and -0.0 differ (conservative), a NaN equals its copy. */
static bool attrs_equal(const gl_attr *a, const gl_attr *b)
{
    if (strcmp(a->name, b->name) || a->type != b->type ||
        !str_eq(a->ref_attr_name, b->ref_attr_name))
        return false;
    switch (a->type) {
    case GL_ATTR_FLOAT:
        return memcmp(&a->f, &b->f, sizeof(a->f)) == 0;
    case GL_ATTR_INT:
        return a->i == b->i;
    case GL_ATTR_STRING:
        return bytes_eq(&a->s, &b->s, 1);
    case GL_ATTR_TENSOR:
        return tensors_eq(&a->t, &b->t, 1);
    case GL_ATTR_GRAPH:
    case GL_ATTR_GRAPHS:
        return false; /* never compared: such nodes are not keyed */
    default:
        break;
    }
    if (a->n != b->n)
        return false;
    switch (a->type) {
    case GL_ATTR_FLOATS:
        return a->n == 0 || memcmp(a->floats, b->floats, a->n * sizeof(float)) == 0;
    case GL_ATTR_INTS:
        return a->n == 0 || memcmp(a->ints, b->ints, a->n * sizeof(int64_t)) == 0;
    case GL_ATTR_STRINGS:
        return bytes_eq(a->strings, b->strings, a->n);
    case GL_ATTR_TENSORS:
        return tensors_eq(a->tensors, b->tensors, a->n);
    default:
        return a->n == 0 || bytes_eq(a->opaque, b->opaque, a->n);
    }
}

/* Each attribute of `a` has an equal one of that name in `b`. Checked both ways, so a
 * file that repeats an attribute name cannot make two different nodes look equal. */
static bool attrs_found_in(const gl_node *a, const gl_node *b)
{
    for (size_t i = 0; i < a->n_attrs; i++) {
        const gl_attr *other = gl_node_attr(b, a->attrs[i].name);
        if (!other || !attrs_equal(&a->attrs[i], other))
            return false;
    }
    return true;
}

static bool nodes_equal(const void *pa, const void *pb)
{
    const gl_node *a = pa, *b = pb;
    if (strcmp(a->domain, b->domain) || strcmp(a->op_type, b->op_type) ||
        a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs || a->n_attrs != b->n_attrs)
        return false;
    for (size_t i = 0; i < a->n_inputs; i++)
        if (a->inputs[i] != b->inputs[i])
            return false;
    for (size_t i = 0; i < a->n_outputs; i++)
        if (!a->outputs[i] != !b->outputs[i])
            return false;
    return attrs_found_in(a, b) && attrs_found_in(b, a);
}

static bool constants_equal(const void *a, const void *b)
{
    return gl_tensor_equal(((const gl_value *)a)->init, ((const gl_value *)b)->init);
}

/* ---- a set of nodes or constants, open addressing ------------------------------------ */

/* A slot holds its item's hash beside it: one cache line read per probe of a table as
 * large as the graph. */
typedef struct table_slot {
    uint64_t hash;
    void *item;
} table_slot;

typedef struct table {
    table_slot *slots;
    size_t mask;
} table;

static void table_init(table *t, size_t count)
{
    size_t cap = 16;
    while (cap < 2 * count)
        cap *= 2;
    t->slots = gl_xcalloc(cap, sizeof(table_slot));
    t->mask = cap - 1;
}

static void table_free(table *t) { free(t->slots); }

static void *table_item(const table *t, size_t slot) { return t->slots[slot].item; }

/* The slot of the first item with hash h that `same` finds equal to `item`; else the empty
 * slot where it belongs (fill it with table_put). At most `count` puts (table_init). */
static size_t table_probe(const table *t, uint64_t h, const void *item,
                          bool (*same)(const void *, const void *))
{
    size_t i = h & t->mask;
    while (t->slots[i].item && !(t->slots[i].hash == h && same(t->slots[i].item, item)))
        i = (i + 1) & t->mask;
    return i;
}

static void table_put(table *t, size_t slot, uint64_t h, void *item)
{
    t->slots[slot] = (table_slot){h, item};
}

/* Decisions about a body say whose body it is. */
static void add_context(gl_decision *d, const gl_graph *g)
{
    if (g->parent_node)
        gl_decision_add_text(d, "inside", g->parent_node->name);
}

/* ---- duplicate constants ------------------------------------------------------------- */

static bool constant_mergeable(const gl_value *v, int64_t max_bytes)
{
    return gl_value_is_constant(v) && !v->is_input && max_bytes >= 0 &&
           gl_tensor_nbytes(v->init) <= (uint64_t)max_bytes;
}

/* `dup` equals `first`. The one that is a graph output stays (names never change). */
static gl_status merge_constant(gl_graph *g, gl_pass_ctx *ctx, table *t, size_t slot,
                                gl_value *dup)
{
    gl_value *first = table_item(t, slot);
    if (first->n_output_refs && dup->n_output_refs) {
        gl_decision *d = gl_pass_decide(ctx, "duplicate-constant", GL_REFUSED,
                                        "output '%s' is a graph output, and so is '%s': "
                                        "both names must stay", dup->name, first->name);
        gl_decision_add_text(d, "kept", first->name);
        gl_decision_add_text(d, "duplicate", dup->name);
        add_context(d, g);
        return GL_OK;
    }
    gl_value *keep = dup->n_output_refs ? dup : first, *drop = keep == dup ? first : dup;
    char type[128];
    gl_type_format(&drop->type, type, sizeof(type));
    size_t bytes = gl_tensor_nbytes(drop->init);
    gl_decision *d = gl_pass_decide(ctx, "duplicate-constant", GL_APPLIED,
                                    "constant '%s' (%s) holds the same bytes as '%s': its "
                                    "readers read '%s'", drop->name, type, keep->name,
                                    keep->name);
    gl_decision_add_text(d, "kept", keep->name);
    gl_decision_add_text(d, "duplicate", drop->name);
    gl_decision_add_number(d, "bytes", (double)bytes);
    gl_decision_add_number(d, "uses", (double)drop->n_uses);
    add_context(d, g);
    if (gl_pass_vetoed(ctx, d))
        return GL_OK;
    gl_status st = gl_replace_all_uses(g, drop, keep);
    if (st == GL_OK)
        st = gl_remove_value(g, drop);
    table_put(t, slot, t->slots[slot].hash, keep);
    return st;
}

/* A constant's dtype and dims. */
static uint64_t constant_type_key(const gl_tensor *t)
{
    uint64_t h = mix_u64(GL_FNV_OFFSET, (uint64_t)t->dtype);
    return mix_bytes(h, t->dims, (size_t)t->rank * sizeof(t->dims[0]));
}

/* Above this many bytes a constant is keyed by samples of its bytes, not all of them:
 * with max-bytes raised, hashing a decoder's every weight read 1.2 GB from its file,
 * where the weights of one shape almost always differ in their first bytes already
 * (issue 23). Equal constants still get equal keys; constants equal in the samples only
 * are told apart by constants_equal, which compares every byte. */
#define SAMPLED_ABOVE ((size_t)64 << 10)
#define SAMPLE_BYTES ((size_t)64)

static uint64_t constant_key(const gl_tensor *t)
{
    size_t n = gl_tensor_nbytes(t);
    if (t->dtype == GL_DT_STRING || n <= SAMPLED_ABOVE)
        return gl_tensor_hash(t);
    const unsigned char *p = gl_tensor_data(t);
    size_t at[3] = {0, (n - SAMPLE_BYTES) / 2, n - SAMPLE_BYTES}; /* first, middle, last */
    uint64_t h = constant_type_key(t);
    for (size_t i = 0; i < 3; i++)
        h = mix_bytes(h, p + at[i], SAMPLE_BYTES);
    return h;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Does `key` occur twice or more in sorted[0..n)? */
static bool key_repeats(const uint64_t *sorted, size_t n, uint64_t key)
{
    const uint64_t *p = bsearch(&key, sorted, n, sizeof(key), cmp_u64);
    return p && ((p > sorted && p[-1] == key) || (p + 1 < sorted + n && p[1] == key));
}

/* The type keys of the mergeable constants of inits[0..n), sorted; *count of them. */
static uint64_t *sorted_type_keys(gl_value *const *inits, size_t n, int64_t max_bytes,
                                  size_t *count)
{
    uint64_t *keys = gl_xmalloc((n ? n : 1) * sizeof(*keys));
    *count = 0;
    for (size_t i = 0; i < n; i++)
        if (constant_mergeable(inits[i], max_bytes))
            keys[(*count)++] = constant_type_key(inits[i]->init);
    qsort(keys, *count, sizeof(*keys), cmp_u64);
    return keys;
}

/* A constant whose dtype and dims no other one has has no duplicate: its bytes are not
 * read at all (a decoder's weights stay in their file). */
static gl_status merge_constants(gl_graph *g, gl_pass_ctx *ctx)
{
    int64_t max_bytes = gl_pass_option_value(ctx, "max-bytes");
    /* gl_remove_value edits g->inits: walk a copy. */
    size_t n = g->n_inits;
    gl_value **inits = gl_xmalloc((n ? n : 1) * sizeof(*inits));
    if (n)
        memcpy(inits, g->inits, n * sizeof(*inits));
    size_t n_keys;
    uint64_t *type_keys = sorted_type_keys(inits, n, max_bytes, &n_keys);
    table t;
    table_init(&t, n);
    gl_status st = GL_OK;
    for (size_t i = 0; i < n && st == GL_OK; i++) {
        gl_value *v = inits[i];
        if (!constant_mergeable(v, max_bytes) ||
            !key_repeats(type_keys, n_keys, constant_type_key(v->init)))
            continue;
        uint64_t h = constant_key(v->init);
        size_t slot = table_probe(&t, h, v, constants_equal);
        if (!table_item(&t, slot)) {
            table_put(&t, slot, h, v);
            continue;
        }
        if (!gl_pass_may_rewrite(ctx))
            break;
        st = merge_constant(g, ctx, &t, slot, v);
    }
    table_free(&t);
    free(type_keys);
    free(inits);
    return st;
}

/* ---- duplicate nodes ----------------------------------------------------------------- */

static bool has_subgraphs(const gl_node *n)
{
    for (size_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].type == GL_ATTR_GRAPH || n->attrs[i].type == GL_ATTR_GRAPHS)
            return true;
    return false;
}

/* Why `dup` must not be merged into `keep` although they match; NULL: it may. */
static const char *refusal(const gl_node *keep, const gl_node *dup, char *buf, size_t len)
{
    switch (gl_node_effects(dup)) {
    case GL_EFFECT_RANDOM:
        snprintf(buf, len, "%s '%s' draws new random values on every run: it does not "
                 "compute the same as '%s'", dup->op_type, dup->name, keep->name);
        return buf;
    case GL_EFFECT_UNKNOWN:
        snprintf(buf, len, "op in domain '%s': not known to be free of side effects",
                 dup->domain);
        return buf;
    case GL_EFFECT_PURE:
        break;
    }
    for (size_t i = 0; i < dup->n_outputs; i++) {
        const gl_value *a = keep->outputs[i], *b = dup->outputs[i];
        if (a && b && a->n_output_refs && b->n_output_refs) {
            snprintf(buf, len, "output '%s' is a graph output, and so is '%s': both names "
                     "must stay", b->name, a->name);
            return buf;
        }
    }
    return NULL;
}

/* Consumers of dup read keep; a graph output of dup is handed over to keep. */
static gl_status merge_node(gl_graph *g, gl_node *keep, gl_node *dup, int64_t decision)
{
    gl_status st = GL_OK;
    for (size_t i = 0; i < dup->n_outputs && st == GL_OK; i++) {
        gl_value *from = dup->outputs[i], *into = keep->outputs[i];
        if (!from)
            continue;
        if (!from->n_output_refs)
            st = gl_replace_all_uses(g, from, into);
        else if ((st = gl_replace_all_uses(g, into, from)) == GL_OK)
            st = gl_move_output(g, dup, i, keep, i);
    }
    if (st != GL_OK)
        return st;
    gl_node_inherit_provenance(keep, &dup, 1, decision);
    return gl_remove_node(g, dup);
}

static gl_status merge_or_refuse(gl_graph *g, gl_pass_ctx *ctx, gl_node *keep, gl_node *dup)
{
    char why[320];
    if (refusal(keep, dup, why, sizeof(why))) {
        gl_decision *d = gl_pass_decide(ctx, "duplicate-node", GL_REFUSED, "%s", why);
        gl_decision_add_node_ref(d, keep);
        gl_decision_add_node_ref(d, dup);
        add_context(d, g);
        return GL_OK;
    }
    size_t uses = 0, handed_over = 0;
    for (size_t i = 0; i < dup->n_outputs; i++) {
        uses += dup->outputs[i] ? dup->outputs[i]->n_uses : 0;
        handed_over += dup->outputs[i] && dup->outputs[i]->n_output_refs;
    }
    gl_decision *d = gl_pass_decide(ctx, "duplicate-node", GL_APPLIED,
                                    "%s '%s' computes the same as '%s'%s", dup->op_type,
                                    dup->name, keep->name,
                                    handed_over ? ", which now produces its graph output" : "");
    gl_decision_add_node_ref(d, keep);
    gl_decision_add_node_ref(d, dup);
    gl_decision_add_number(d, "uses", (double)uses);
    if (handed_over)
        gl_decision_add_number(d, "outputs_handed_over", (double)handed_over);
    add_context(d, g);
    return gl_pass_vetoed(ctx, d) ? GL_OK : merge_node(g, keep, dup, d->id);
}

static gl_status merge_nodes(gl_graph *g, gl_pass_ctx *ctx)
{
    table t;
    table_init(&t, g->live_nodes);
    gl_status st = GL_OK;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (n->n_outputs == 0 || has_subgraphs(n))
            continue;
        uint64_t h = node_hash(n);
        size_t slot = table_probe(&t, h, n, nodes_equal);
        if (!table_item(&t, slot)) {
            table_put(&t, slot, h, n);
            continue;
        }
        if (!gl_pass_may_rewrite(ctx) || (st = merge_or_refuse(g, ctx, table_item(&t, slot), n)))
            break;
    }
    table_free(&t);
    return st;
}

static gl_status cse_graph(gl_graph *g, gl_pass_ctx *ctx)
{
    gl_status st = merge_constants(g, ctx);
    if (st == GL_OK)
        st = merge_nodes(g, ctx);
    if (st == GL_OK)
        st = gl_pass_on_bodies(g, ctx, cse_graph);
    return st;
}

gl_status gl_pass_cse(gl_graph *g, gl_pass_ctx *ctx) { return cse_graph(g, ctx); }

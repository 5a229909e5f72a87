/* fingerprint.c — a hash of what a graph is, to tell whether a pass changed anything.
 *
 * Everything that would show in the saved file counts (nodes in order with op, domain,
 * name, inputs, outputs, attributes and subgraphs; value names and types; initializer
 * bytes; graph inputs/outputs); ids and provenance do not, since they never reach the
 * file and a pass that only re-derives them changed nothing.
 *
 * Weights still lying unchanged where they were loaded from (external data: the buffer's
 * origin) count by that place, not by their bytes: any write drops the origin
 * (gl_tensor_make_writable), so one place means the same bytes. Equal fingerprints still
 * mean equal graphs; the price is that the same bytes loaded from elsewhere count as
 * different. Hashing them instead read a 1.2 GB decoder's every weight from its file for
 * each `optimize` and `run` (issue 23). */
#include "ir/graph.h"

#include "util/hash.h"
#include "util/signals.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct hasher {
    uint64_t h;
} hasher;

/* A word at a time: the pipeline fingerprints every step (17 times in `optimize`), and
 * FNV's multiply per byte made that a fifth of `optimize` on a 100k-node graph (issue
 * 23). The step is xxHash64's for one word: the word goes through a bijection (multiply
 * by an odd constant, rotate, multiply) and is xor'ed in, then the state goes through
 * another (rotate, multiply, add). For a fixed word it is a bijection of the state, and
 * for a fixed state one of the word, so two sequences that differ in one word end in
 * different states; the finish (fingerprint_of: gl_mix64, a bijection too) spreads every
 * bit. Its chain per word is one multiply, where gl_mix64 after each word (as before)
 * was two and three shifts. With the shorter shapes below, a 100k-node graph: 42 -> 26 ms. */
static const uint64_t P1 = 0x9e3779b185ebca87ull, P2 = 0xc2b2ae3d27d4eb4full,
                      P4 = 0x85ebca77c2b2ae63ull;

static uint64_t rotl(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

static void mix_u64(hasher *s, uint64_t v)
{
    s->h ^= rotl(v * P2, 31) * P1;
    s->h = rotl(s->h, 27) * P1 + P4;
}

/* Bytes in 8-byte words, the last one zero-padded (callers mix the length). */
static void mix(hasher *s, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (; n >= 8; b += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        mix_u64(s, w);
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, b, n);
        mix_u64(s, w);
    }
}

/* Strings carry their length so "ab","c" and "a","bc" differ; NULL differs from "". */
static void mix_str(hasher *s, const char *str)
{
    if (!str) {
        mix_u64(s, UINT64_MAX);
        return;
    }
    if (!*str) { /* most domains: no strlen call for them */
        mix_u64(s, 0);
        return;
    }
    size_t n = strlen(str);
    mix_u64(s, n);
    mix(s, str, n);
}

static void mix_bytes(hasher *s, const gl_bytes *b)
{
    mix_u64(s, b->len);
    mix(s, b->data, b->len);
}

/* A dim whose word is this, or that has a symbol, is written as the marker, its value and
 * its symbol; any other dim as its value alone. A reader of the words can tell the two
 * apart (the marker is never a lone dim's word), so no two shapes give the same words,
 * while a known dim costs one word instead of a value and a NULL symbol's two: shapes
 * are most of a graph's words (issue 23). */
#define DIM_MARKER ((uint64_t)INT64_MIN)

static void mix_type(hasher *s, const gl_type *t)
{
    /* Two 32-bit enums in one word. */
    mix_u64(s, (uint64_t)(uint32_t)t->kind << 32 | (uint32_t)t->dtype);
    mix_u64(s, (uint64_t)(int64_t)t->shape.rank);
    for (int d = 0; d < t->shape.rank; d++) {
        const gl_dim *dim = &t->shape.dims[d];
        uint64_t w = (uint64_t)dim->value;
        if (dim->sym || w == DIM_MARKER) {
            mix_u64(s, DIM_MARKER);
            mix_u64(s, w);
            mix_str(s, dim->sym);
        } else {
            mix_u64(s, w);
        }
    }
    if (t->kind == GL_TYPE_OPAQUE)
        mix_bytes(s, &t->opaque);
}

/* The bytes' place in their file: which file (device and inode: not the path, which
 * another file may take) and where in it. The tag keeps it apart from a content hash. */
static void mix_file_extent(hasher *s, const gl_file_extent *at, size_t size)
{
    mix_u64(s, 0x6578746e74ull); /* "extent" */
    mix_u64(s, at->dev);
    mix_u64(s, at->ino);
    mix_u64(s, at->offset);
    mix_u64(s, size);
}

static void mix_tensor(hasher *s, const gl_tensor *t)
{
    const gl_buffer *b = t ? t->buf : NULL;
    if (b && b->origin && t->dtype != GL_DT_STRING) {
        mix_u64(s, (uint64_t)t->dtype);
        mix_u64(s, (uint64_t)(int64_t)t->rank);
        for (int d = 0; d < t->rank; d++)
            mix_u64(s, (uint64_t)t->dims[d]);
        mix_file_extent(s, b->origin, b->size);
        return;
    }
    mix_u64(s, t ? gl_tensor_hash(t) : 0);
}

/* The name a value is written under (captures read the outer value). */
static const char *value_name(const gl_value *v)
{
    while (v && v->outer)
        v = v->outer;
    return v ? v->name : NULL;
}

static void mix_graph(hasher *s, const gl_graph *g);

static void mix_attr(hasher *s, const gl_attr *a)
{
    mix_str(s, a->name);
    mix_u64(s, (uint64_t)a->type);
    mix_str(s, a->ref_attr_name);
    switch (a->type) {
    case GL_ATTR_FLOAT: mix(s, &a->f, sizeof(a->f)); break;
    case GL_ATTR_INT: mix_u64(s, (uint64_t)a->i); break;
    case GL_ATTR_STRING: mix_bytes(s, &a->s); break;
    case GL_ATTR_TENSOR: mix_tensor(s, a->t); break;
    case GL_ATTR_GRAPH: mix_graph(s, a->g); break;
    default: break;
    }
    mix_u64(s, a->n);
    for (size_t i = 0; i < a->n; i++) {
        switch (a->type) {
        case GL_ATTR_FLOATS: mix(s, &a->floats[i], sizeof(float)); break;
        case GL_ATTR_INTS: mix_u64(s, (uint64_t)a->ints[i]); break;
        case GL_ATTR_STRINGS: mix_bytes(s, &a->strings[i]); break;
        case GL_ATTR_TENSORS: mix_tensor(s, a->tensors[i]); break;
        case GL_ATTR_GRAPHS: mix_graph(s, a->graphs[i]); break;
        case GL_ATTR_SPARSE_TENSOR: case GL_ATTR_SPARSE_TENSORS:
        case GL_ATTR_TYPE_PROTO: case GL_ATTR_TYPE_PROTOS:
            mix_bytes(s, &a->opaque[i]);
            break;
        default: break;
        }
    }
}

static void mix_value(hasher *s, const gl_value *v)
{
    mix_str(s, value_name(v));
    if (v)
        mix_type(s, &v->type);
}

/* A node input read from the output of a node of the graph being hashed is written as
 * that node's place among the live nodes and the output slot, in one word: the name
 * there was mixed as that output's (a reader of the words learns it there), so the
 * words still tell every name, while a read costs one word instead of the name's length,
 * bytes and strlen (the ladder's 200k reads: issue 23). The tag sets the word apart from
 * a string's length word (below 2^48) and from NULL's. Anything else (a graph input, an
 * initializer, a capture, a read the producer does not list, a place or slot too big
 * for the word) goes by name. */
#define READ_TAG (0xfffeull << 48)
#define READ_MAX_SLOT 0xffffu

typedef struct reads {
    const gl_graph *g;
    uint32_t *place;       /* per node index, its place among live nodes; NULL: no holes */
} reads;

static void mix_read(hasher *s, const reads *r, const gl_value *v)
{
    const gl_node *p = v ? v->producer : NULL;
    if (p && !v->outer && p->graph == r->g && p->index < r->g->n_nodes &&
        r->g->nodes[p->index] == p && v->producer_slot >= 0 &&
        (size_t)v->producer_slot < p->n_outputs && p->outputs[v->producer_slot] == v &&
        v->producer_slot <= (int)READ_MAX_SLOT) {
        uint64_t place = r->place ? r->place[p->index] : p->index;
        if (place <= UINT32_MAX) {
            mix_u64(s, READ_TAG | (uint64_t)v->producer_slot << 32 | place);
            return;
        }
    }
    mix_str(s, value_name(v));
}

/* Places among live nodes when g has holes (else a node's index is its place). */
static uint32_t *live_places(const gl_graph *g)
{
    if (g->live_nodes == g->n_nodes)
        return NULL;
    uint32_t *place = gl_xmalloc((g->n_nodes + 1) * sizeof(uint32_t));
    uint32_t k = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        place[i] = k;
        k += g->nodes[i] != NULL;
    }
    return place;
}

/* The finish: every bit of the state reaches every bit of the result. */
static uint64_t fingerprint_of(const hasher *s) { return gl_mix64(s->h); }

/* The nodes in slots [from, to). */
static void mix_nodes(hasher *s, const reads *r, const gl_graph *g, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        const gl_node *n = g->nodes[i];
        if (!n)
            continue;
        mix_str(s, n->op_type);
        mix_str(s, n->domain);
        mix_str(s, n->name);
        mix_u64(s, n->n_inputs);
        for (size_t k = 0; k < n->n_inputs; k++)
            mix_read(s, r, n->inputs[k]);
        mix_u64(s, n->n_outputs);
        for (size_t k = 0; k < n->n_outputs; k++)
            mix_value(s, n->outputs[k]);
        mix_u64(s, n->n_attrs);
        for (size_t k = 0; k < n->n_attrs; k++)
            mix_attr(s, &n->attrs[k]);
    }
}

/* A graph of at least this many node slots hashes its second half on another thread,
 * into a hasher of its own whose result is then mixed in as one word: the pipeline
 * fingerprints every step, a quarter of `optimize` on the 100k-node ladder once the
 * passes were fast (issue 23), and the machine has a second core. The split depends on
 * the slot count alone, and without a thread the same halves are hashed in turn: a graph
 * has one fingerprint either way. */
#define FP_SPLIT_NODES 16384

typedef struct fp_half {
    hasher s;
    const reads *r;
    const gl_graph *g;
    size_t from, to;
} fp_half;

static void *mix_half(void *arg)
{
    fp_half *h = arg;
    mix_nodes(&h->s, h->r, h->g, h->from, h->to);
    return NULL;
}

static void mix_all_nodes(hasher *s, const reads *r, const gl_graph *g)
{
    size_t n = g->n_nodes;
    if (n < FP_SPLIT_NODES) {
        mix_nodes(s, r, g, 0, n);
        return;
    }
    fp_half second = {{P2}, r, g, n / 2, n};
    pthread_t t;
    sigset_t old;
    gl_block_async_signals(&old); /* a signal is the main thread's to take */
    bool threaded = pthread_create(&t, NULL, mix_half, &second) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    mix_nodes(s, r, g, 0, n / 2);
    if (threaded)
        pthread_join(t, NULL);
    else
        mix_half(&second);
    mix_u64(s, fingerprint_of(&second.s));
}

static void mix_graph(hasher *s, const gl_graph *g)
{
    if (!g) {
        mix_u64(s, 0);
        return;
    }
    reads r = {g, live_places(g)};
    mix_str(s, g->name);
    mix_u64(s, g->n_inputs);
    for (size_t i = 0; i < g->n_inputs; i++)
        mix_value(s, g->inputs[i]);
    mix_u64(s, g->n_inits);
    for (size_t i = 0; i < g->n_inits; i++) {
        mix_str(s, g->inits[i]->name);
        mix_tensor(s, g->inits[i]->init);
    }
    mix_u64(s, g->live_nodes);
    mix_all_nodes(s, &r, g);
    mix_u64(s, g->n_outputs);
    for (size_t i = 0; i < g->n_outputs; i++)
        mix_value(s, g->outputs[i]);
    free(r.place);
}


uint64_t gl_graph_fingerprint(const gl_graph *g)
{
    hasher s = {P4};
    mix_graph(&s, g);
    return fingerprint_of(&s);
}

uint64_t gl_node_attrs_fingerprint(const gl_node *n)
{
    hasher s = {P4};
    mix_u64(&s, n->n_attrs);
    for (size_t k = 0; k < n->n_attrs; k++)
        mix_attr(&s, &n->attrs[k]);
    return fingerprint_of(&s);
}

uint64_t gl_type_fingerprint(const gl_type *t)
{
    hasher s = {P4};
    mix_type(&s, t);
    return fingerprint_of(&s);
}

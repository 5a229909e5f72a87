/* load.c — onnx.ModelProto (protobuf-c) -> IR.
 *
 * The file is mapped (or read), unpacked, and unmapped right away; tensors then take
 * over the unpacked buffers (gl_tensor_from_proto with take = true), so the weights
 * exist once in memory and the peak stays near twice the file size. Strings go the same
 * way: nodes take their names, op types and output names from the unpacked messages
 * (gl_add_node_take), and each node's message is freed once the node is wired.
 *
 * A graph is loaded in two phases: first every node and its outputs are created, then
 * the inputs are wired by name (phase 1 wires them already while every name it meets is
 * defined, and frees the messages it is done with: see wire_inputs_early). A file whose
 * nodes are out of order (or cyclic) thus still loads — toposort and verify report that
 * later — while a name nothing defines anywhere is an error here. Subgraphs are loaded
 * in the second phase of their parent, once every outer value exists; names they do not
 * define resolve outward through gl_resolve_value (captures and implicit inputs).
 */
#include "onnx/onnx_io.h"
#include "ops/attrs.h"

#include "onnx.pb-c.h"
#include "util/file_read.h"
#include "util/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Attributes accepted on one node (see wire_node). */
#define MAX_NODE_ATTRIBUTES 4096

/* protobuf-c unpacks nested messages recursively without a limit: a small file of
 * deeply nested subgraphs would overflow the stack. We refuse deeper nesting before
 * unpacking (the limit of Google's protobuf parser). */
#define MAX_MESSAGE_NESTING 100

typedef struct load_ctx {
    const char *path; /* starts every message */
    const char *dir;  /* base of external data; NULL: none allowed */
    bool no_mmap;
    gl_model *m;
} load_ctx;

/* The graph being filled, and how messages name it. */
typedef struct graph_job {
    load_ctx *lc;
    gl_graph *g;
    char where[256]; /* "graph 'main'", "subgraph 'then' of node 'if1'", "function 'f'" */
    bool nested;     /* not the main graph: node messages say where the node is */
} graph_job;

/* "node 'conv' (Conv)", plus " in subgraph 'then' of node 'if1'" outside the main graph. */
static const char *node_label_of(const graph_job *gj, const char *name, const char *op,
                                 char *buf, size_t len)
{
    snprintf(buf, len, "node '%s' (%s)%s%s", name, op, gj->nested ? " in " : "",
             gj->nested ? gj->where : "");
    return buf;
}

static const char *node_label(const graph_job *gj, const gl_node *n, char *buf, size_t len)
{
    return node_label_of(gj, n->name, n->op_type, buf, len);
}

static const char *str_or_empty(const char *s) { return s ? s : ""; }

/* ---- reading and unpacking ------------------------------------------------------------ */

/* The bytes of a model file, for as long as unpacking takes. */
typedef struct file_bytes {
    uint8_t *data;
    size_t len;
    bool mapped; /* munmap, not free */
} file_bytes;

static gl_status read_fd(const char *path, int fd, size_t size, file_bytes *fb)
{
    if (size > 0 && !(fb->data = malloc(size)))
        return gl_fail(GL_ERR_NOMEM, "%s: cannot allocate %zu bytes to read it", path, size);
    gl_status rc = gl_file_read_exact(fd, fb->data, size, path);
    if (rc != GL_OK) {
        free(fb->data);
        fb->data = NULL;
        return rc;
    }
    fb->len = size;
    return GL_OK;
}

/* Mapping the file beats reading it: no copy out of the page cache into fresh pages,
 * and MAP_POPULATE maps every page in one call instead of one fault per page. The
 * mapped pages count in the peak RSS just as a read copy would, and only while
 * unpacking. (A file truncated by someone else during those milliseconds would fault
 * the unpacker; the read path is there for file systems that cannot map.) */
static bool map_fd(int fd, size_t size, file_bytes *fb)
{
    if (size == 0)
        return false;
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED)
        return false;
    fb->data = p;
    fb->len = size;
    fb->mapped = true;
    return true;
}

static gl_status file_bytes_get(const char *path, bool no_mmap, file_bytes *fb)
{
    *fb = (file_bytes){0};
    int fd;
    size_t size;
    gl_status rc = gl_file_open_regular(path, NULL, &fd, &size);
    if (rc != GL_OK)
        return rc;
    if (no_mmap || !map_fd(fd, size, fb))
        rc = read_fd(path, fd, size, fb);
    close(fd);
    return rc;
}

static void file_bytes_release(file_bytes *fb)
{
    if (fb->mapped)
        munmap(fb->data, fb->len);
    else
        free(fb->data);
    *fb = (file_bytes){0};
}

static bool read_varint(const uint8_t *p, size_t len, size_t *i, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *i < len; shift += 7) {
        uint8_t b = p[(*i)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* False only when messages nest deeper than `budget` levels. Malformed bytes return
 * true: the unpacker reports those. */
static bool nesting_ok(const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t len,
                       int budget)
{
    if (budget < 0)
        return false;
    size_t i = 0;
    while (i < len) {
        uint64_t key, n;
        if (!read_varint(p, len, &i, &key) || key >> 35)
            return true;
        switch (key & 7) {
        case 0: if (!read_varint(p, len, &i, &n)) return true; break;
        case 1: i += 8; break;
        case 5: i += 4; break;
        case 2: {
            if (!read_varint(p, len, &i, &n) || n > len - i)
                return true;
            const ProtobufCFieldDescriptor *f =
                protobuf_c_message_descriptor_get_field(desc, (unsigned)(key >> 3));
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
                !nesting_ok(f->descriptor, p + i, (size_t)n, budget - 1))
                return false;
            i += (size_t)n;
            break;
        }
        default: return true;
        }
    }
    return true;
}

static gl_status unpack_model(const char *name, const uint8_t *data, size_t len,
                              Onnx__ModelProto **out)
{
    *out = NULL;
    if (len == 0)
        return gl_fail(GL_ERR_INPUT, "%s: empty file (not an ONNX model)", name);
    if (!nesting_ok(&onnx__model_proto__descriptor, data, len, MAX_MESSAGE_NESTING))
        return gl_fail(GL_ERR_INPUT, "%s: messages nest deeper than %d levels", name,
                       MAX_MESSAGE_NESTING);
    *out = onnx__model_proto__unpack(NULL, len, data);
    if (!*out)
        return gl_fail(GL_ERR_INPUT,
                       "%s: not a valid ONNX model (protobuf parse failed; truncated or not a "
                       "model file)",
                       name);
    return GL_OK;
}

/* ---- verbatim (packed) messages ------------------------------------------------------- */

static void pack_verbatim(const ProtobufCMessage *msg, gl_bytes *out)
{
    out->len = protobuf_c_message_get_packed_size(msg);
    out->data = gl_xmalloc(out->len ? out->len : 1);
    protobuf_c_message_pack(msg, out->data);
}

static gl_bytes *pack_all(ProtobufCMessage *const *msgs, size_t n)
{
    if (n == 0)
        return NULL;
    gl_bytes *out = gl_xcalloc(n, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        pack_verbatim(msgs[i], &out[i]);
    return out;
}

/* ---- types ------------------------------------------------------------------------------ */

static gl_status load_shape(const char *what, const Onnx__TensorShapeProto *sp, gl_shape *s)
{
    if (!sp) {
        gl_shape_init_unknown(s);
        return GL_OK;
    }
    if (sp->n_dim > GL_MAX_RANK)
        return gl_fail(GL_ERR_INPUT, "%s: rank %zu exceeds the maximum of %d", what, sp->n_dim,
                       GL_MAX_RANK);
    gl_shape_set_rank(s, (int)sp->n_dim);
    for (size_t i = 0; i < sp->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (d->dim_value < 0)
                return gl_fail(GL_ERR_INPUT, "%s: dimension %zu is negative (%lld)", what, i,
                               (long long)d->dim_value);
            s->dims[i].value = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   d->dim_param && *d->dim_param) {
            gl_dim_set_sym(&s->dims[i], d->dim_param);
        }
    }
    return GL_OK;
}

static void type_init(gl_type *t)
{
    memset(t, 0, sizeof(*t));
    gl_shape_init_unknown(&t->shape);
}

/* Tensor types become dtype + shape; every other kind (sequence, map, optional, sparse)
 * is kept as the packed TypeProto. `what` names the value in messages. */
static gl_status load_type(const char *what, const Onnx__TypeProto *tp, gl_type *out)
{
    gl_type_free(out);
    if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
        return GL_OK;
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
        out->kind = GL_TYPE_OPAQUE;
        pack_verbatim(&tp->base, &out->opaque);
        return GL_OK;
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int elem = tt->has_elem_type ? tt->elem_type : 0;
    if (elem != 0 && !gl_dtype_valid(elem))
        return gl_fail(GL_ERR_INPUT, "%s: invalid element type %d", what, elem);
    out->kind = GL_TYPE_TENSOR;
    out->dtype = (gl_dtype)elem;
    return load_shape(what, tt->shape, &out->shape);
}

/* The type a tensor itself states: its dtype and a fully known shape. */
static void type_from_tensor(const gl_tensor *t, gl_type *out)
{
    gl_type_free(out);
    out->kind = GL_TYPE_TENSOR;
    out->dtype = t->dtype;
    gl_shape_set_rank(&out->shape, t->rank);
    for (int i = 0; i < t->rank; i++)
        out->shape.dims[i].value = t->dims[i];
}

/* ---- graph inputs and initializers ----------------------------------------------------- */

static gl_status load_inputs(graph_job *gj, Onnx__ValueInfoProto *const *vis, size_t n)
{
    char what[512];
    for (size_t i = 0; i < n; i++) {
        const char *name = vis[i]->name;
        if (!name || !*name)
            return gl_fail(GL_ERR_INPUT, "%s: %s: input %zu has no name", gj->lc->path,
                           gj->where, i);
        if (gl_find_value(gj->g, name))
            return gl_fail(GL_ERR_INPUT, "%s: %s: input '%s' is listed twice", gj->lc->path,
                           gj->where, name);
        gl_value *v = gl_add_value(gj->g, name);
        snprintf(what, sizeof(what), "%s: input '%s'", gj->lc->path, name);
        gl_status st = load_type(what, vis[i]->type, &v->type);
        if (st != GL_OK)
            return st;
        v->doc_string = gl_xstrdup(vis[i]->doc_string);
        gl_graph_add_input(gj->g, v);
    }
    return GL_OK;
}

/* An initializer named like a graph input is that input's default value (IR >= 4; in
 * older files every initializer is also listed as an input, with the same meaning): the
 * value stays an input and is not a constant unless the model freezes its inputs. */
static gl_status add_initializer(graph_job *gj, Onnx__TensorProto *tp)
{
    char ctx[512];
    const char *name = tp->name;
    if (!name || !*name)
        return gl_fail(GL_ERR_INPUT, "%s: %s: an initializer has no name", gj->lc->path,
                       gj->where);
    gl_value *v = gl_find_value(gj->g, name);
    if (v && (v->init || !v->is_input))
        return gl_fail(GL_ERR_INPUT, "%s: %s: initializer '%s' is listed twice", gj->lc->path,
                       gj->where, name);
    snprintf(ctx, sizeof(ctx), "%s: initializer '%s'", gj->lc->path, name);
    gl_tensor *t;
    gl_status st = gl_tensor_from_proto(tp, ctx, gj->lc->dir, true, gj->lc->no_mmap, &t);
    if (st != GL_OK)
        return st;
    if (!v) {
        gl_add_initializer(gj->g, name, t); /* typed by the tensor */
        return GL_OK;
    }
    v->init = t;
    if (v->type.kind == GL_TYPE_NONE)
        type_from_tensor(t, &v->type);
    GL_GROW(gj->g->inits, gj->g->cap_inits, gj->g->n_inits + 1);
    gj->g->inits[gj->g->n_inits++] = v;
    return GL_OK;
}

static gl_status load_initializers(graph_job *gj, Onnx__TensorProto *const *tps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gl_status st = add_initializer(gj, tps[i]);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* ---- value_info --------------------------------------------------------------------------- */

/* Types for intermediate values. Inputs keep their declared type and initializers the
 * exact one of their tensor. Entries naming nothing in this graph say nothing we could
 * keep (in a subgraph they may describe an outer value: its own graph types it); they
 * are still validated. */
static gl_status apply_value_info(graph_job *gj, Onnx__ValueInfoProto *const *vis, size_t n)
{
    char what[512];
    for (size_t i = 0; i < n; i++) {
        const char *name = str_or_empty(vis[i]->name);
        snprintf(what, sizeof(what), "%s: value_info '%s'", gj->lc->path, name);
        gl_type type;
        type_init(&type);
        gl_status st = load_type(what, vis[i]->type, &type);
        gl_value *v = st == GL_OK && *name ? gl_find_value(gj->g, name) : NULL;
        if (v && !v->is_input && !v->init && type.kind != GL_TYPE_NONE) {
            gl_type_free(&v->type);
            v->type = type; /* moved, not copied */
            type_init(&type);
            if (!v->doc_string)
                v->doc_string = gl_xstrdup(vis[i]->doc_string);
        }
        gl_type_free(&type);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* ---- node names ------------------------------------------------------------------------- */

/* A set of names borrowed from the proto (open addressing over pointers): the node
 * names the file uses, so that a generated name never takes one that a later node of the
 * file carries; and, when a node's outputs clash, the names seen so far. */
typedef struct name_set {
    const char **slots;
    size_t mask;
} name_set;

/* gl_hash_bytes, not plain FNV: the set masks the low bits. */
static size_t hash_name(const char *s) { return (size_t)gl_hash_bytes(s, strlen(s)); }

static void name_set_init(name_set *set, size_t max_names)
{
    size_t cap = 16;
    while (cap < 2 * max_names)
        cap *= 2;
    set->slots = gl_xcalloc(cap, sizeof(*set->slots));
    set->mask = cap - 1;
}

/* False when the name was already there. */
static bool name_set_add(name_set *set, const char *name)
{
    size_t h = hash_name(name) & set->mask;
    for (; set->slots[h]; h = (h + 1) & set->mask)
        if (!strcmp(set->slots[h], name))
            return false;
    set->slots[h] = name;
    return true;
}

static bool name_set_has(const name_set *set, const char *name)
{
    for (size_t h = hash_name(name) & set->mask; set->slots[h]; h = (h + 1) & set->mask)
        if (!strcmp(set->slots[h], name))
            return true;
    return false;
}

static bool has_name(const Onnx__NodeProto *np) { return np->name && *np->name; }

/* "<op>_<index in file>", or with "_<k>" appended when the file or an earlier
 * generated name already uses it: stable across loads of the same file. */
static char *generate_node_name(const gl_graph *g, const name_set *file_names,
                                const char *op, size_t index)
{
    char base[256], cand[300];
    /* Bound the op name, never the index: bases stay distinct, so the search below only
     * ever steps over names the file itself uses. */
    snprintf(base, sizeof(base), "%.200s_%zu", op, index);
    snprintf(cand, sizeof(cand), "%s", base);
    for (unsigned k = 1; name_set_has(file_names, cand) || gl_find_node(g, cand); k++)
        snprintf(cand, sizeof(cand), "%s_%u", base, k);
    return gl_xstrdup(cand);
}

/* ---- nodes, phase 1: the node and its outputs ----------------------------------------- */

/* gl_add_node_named refused one of the node's output names: say who has it. Runs only
 * on that error, and stays linear in the outputs even then. */
static gl_status output_clash(graph_job *gj, const Onnx__NodeProto *np, const char *node_name)
{
    char label[600];
    node_label_of(gj, node_name, np->op_type, label, sizeof(label));
    name_set mine;
    name_set_init(&mine, np->n_output);
    gl_status st = GL_OK;
    for (size_t i = 0; i < np->n_output && st == GL_OK; i++) {
        const char *name = str_or_empty(np->output[i]);
        const gl_value *old = *name ? gl_find_value(gj->g, name) : NULL;
        if (old && old->producer)
            st = gl_fail(GL_ERR_INPUT, "%s: %s: output '%s' is already produced by node '%s' (%s)",
                         gj->lc->path, label, name, old->producer->name, old->producer->op_type);
        else if (old)
            st = gl_fail(GL_ERR_INPUT, "%s: %s: output '%s' is also a graph %s", gj->lc->path,
                         label, name, old->is_input ? "input" : "initializer");
        else if (*name && !name_set_add(&mine, name))
            st = gl_fail(GL_ERR_INPUT, "%s: %s: output '%s' is already produced by node '%s' (%s)",
                         gj->lc->path, label, name, node_name, np->op_type);
    }
    free(mine.slots);
    if (st != GL_OK)
        return st;
    gl_error_prefix("%s: %s", gj->lc->path, label); /* not expected: keep the IR's word */
    return GL_ERR_INPUT;
}

/* The node with its outputs named as the file says (an empty name: omitted output). */
static gl_status create_node(graph_job *gj, const name_set *file_names,
                             Onnx__NodeProto *np, size_t index, gl_node **out)
{
    const char *op = np->op_type;
    if (!op || !*op)
        return gl_fail(GL_ERR_INPUT, "%s: %s: node %zu ('%s') has no op_type", gj->lc->path,
                       gj->where, index, str_or_empty(np->name));
    bool generated = !has_name(np);
    char *made = generated ? generate_node_name(gj->g, file_names, op, index) : NULL;
    char **name = generated ? &made : &np->name;
    /* The node takes the message's strings (they are never read again) instead of
     * copies: free_unpacked skips the fields this leaves NULL. */
    gl_node *n = gl_add_node_take(gj->g, &np->op_type, np->domain, name,
                                  NULL, 0, np->output, np->n_output);
    gl_status st = n ? GL_OK : output_clash(gj, np, *name);
    free(made);
    if (st != GL_OK)
        return st;
    n->name_generated = generated;
    n->doc_string = np->doc_string;
    np->doc_string = NULL;
    /* Provenance: every loaded node stands for itself (create_nodes records the names). */
    gl_node_set_provenance(n, &n->id, 1, -1);
    *out = n;
    return GL_OK;
}

/* Generated names end in "_<digits>": a file name that does not can never equal one. */
static bool ends_in_number(const char *name)
{
    const char *us = strrchr(name, '_');
    if (!us || !us[1])
        return false;
    for (const char *p = us + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* The file's node names that a generated name could take. */
static void collect_lookalike_names(name_set *set, Onnx__NodeProto *const *nps, size_t n)
{
    size_t lookalikes = 0;
    for (size_t i = 0; i < n; i++)
        lookalikes += nps[i] && has_name(nps[i]) && ends_in_number(nps[i]->name);
    name_set_init(set, lookalikes);
    for (size_t i = 0; i < n; i++)
        if (nps[i] && has_name(nps[i]) && ends_in_number(nps[i]->name))
            name_set_add(set, nps[i]->name);
}

/* Phase 1 also wires a node's inputs when each of them names a value this graph holds
 * already (in a file whose nodes are in order: nearly every node). A node with nothing
 * left to load then has its message freed at once, so the messages leave memory while
 * the IR fills it rather than all at the end. A name not defined here yet (a later
 * node's output, an outer value, a missing one) leaves this node and all after it to
 * phase 2, as does a node with a subgraph (its captures add uses as phase 2 loads it):
 * uses are thus recorded in file order, exactly as phase 2 alone would. */
static bool wire_inputs_early(gl_graph *g, gl_node *n, const Onnx__NodeProto *np)
{
    for (size_t i = 0; i < np->n_attribute; i++)
        if (np->attribute[i]->g || np->attribute[i]->n_graphs)
            return false;
    for (size_t i = 0; i < np->n_input; i++) {
        const char *name = str_or_empty(np->input[i]);
        gl_value *v = *name ? gl_find_value(g, name) : NULL;
        if ((*name && !v) || gl_set_input(g, n, n->n_inputs, v) != GL_OK) {
            gl_truncate_inputs(g, n, 0); /* phase 2 starts this node over */
            return false;
        }
    }
    return true;
}

/* *n_wired: how many leading nodes have their inputs wired already. */
static gl_status create_nodes(graph_job *gj, Onnx__NodeProto **nps, size_t n,
                              gl_node **nodes, size_t *n_wired)
{
    /* Collected at the first unnamed node, so a file that names every node never pays.
     * By then the nodes before it are in the graph's own index (gl_find_node), and their
     * messages no longer hold their names (the nodes took them; freed messages are
     * NULL). */
    name_set file_names = {0};
    gl_graph *g = gj->g;
    gl_status st = GL_OK;
    bool early = true;
    *n_wired = 0;
    for (size_t i = 0; i < n && st == GL_OK; i++) {
        if (!has_name(nps[i]) && !file_names.slots)
            collect_lookalike_names(&file_names, nps, n);
        st = create_node(gj, &file_names, nps[i], i, &nodes[i]);
        early = early && st == GL_OK && wire_inputs_early(g, nodes[i], nps[i]);
        if (!early)
            continue;
        *n_wired = i + 1;
        if (nps[i]->n_attribute == 0) {
            onnx__node_proto__free_unpacked(nps[i], NULL);
            nps[i] = NULL;
        }
    }
    free(file_names.slots);
    /* origin_names maps ids to the names the file gave (or we generated), for messages
     * after passes renamed or fused nodes. */
    if (st == GL_OK)
        gl_graph_record_origins(g);
    return st;
}

/* ---- attributes ------------------------------------------------------------------------ */

/* Old files leave `type` unset: the field that carries a value says which it is. */
static gl_attr_type infer_attr_type(const Onnx__AttributeProto *ap)
{
    if (ap->has_f) return GL_ATTR_FLOAT;
    if (ap->has_i) return GL_ATTR_INT;
    if (ap->has_s) return GL_ATTR_STRING;
    if (ap->t) return GL_ATTR_TENSOR;
    if (ap->g) return GL_ATTR_GRAPH;
    if (ap->sparse_tensor) return GL_ATTR_SPARSE_TENSOR;
    if (ap->tp) return GL_ATTR_TYPE_PROTO;
    if (ap->n_floats) return GL_ATTR_FLOATS;
    if (ap->n_ints) return GL_ATTR_INTS;
    if (ap->n_strings) return GL_ATTR_STRINGS;
    if (ap->n_tensors) return GL_ATTR_TENSORS;
    if (ap->n_graphs) return GL_ATTR_GRAPHS;
    if (ap->n_sparse_tensors) return GL_ATTR_SPARSE_TENSORS;
    if (ap->n_type_protos) return GL_ATTR_TYPE_PROTOS;
    return GL_ATTR_UNDEFINED;
}

/* Bytes as the IR keeps them: always NUL-terminated, so strings read as C strings. */
static void copy_bytes(gl_bytes *dst, const ProtobufCBinaryData *src)
{
    dst->len = src->len;
    dst->data = gl_xmalloc(src->len + 1);
    if (src->len)
        memcpy(dst->data, src->data, src->len);
    dst->data[src->len] = 0;
}

/* What an attribute being loaded needs for messages and decoding. */
typedef struct attr_job {
    graph_job *gj;
    gl_node *n;
    Onnx__AttributeProto *ap;
    char ctx[1024]; /* "m.onnx: node 'n' (Op): attribute 'a'" */
} attr_job;

static gl_status load_attr_tensors(attr_job *aj, gl_attr *a)
{
    Onnx__AttributeProto *ap = aj->ap;
    load_ctx *lc = aj->gj->lc;
    if (a->type == GL_ATTR_TENSOR && ap->t)
        return gl_tensor_from_proto(ap->t, aj->ctx, lc->dir, true, lc->no_mmap, &a->t);
    if (a->type == GL_ATTR_TENSOR) /* a reference to the caller's attribute has no value */
        return ap->ref_attr_name ? GL_OK
                                 : gl_fail(GL_ERR_INPUT, "%s: TENSOR attribute without a tensor",
                                           aj->ctx);
    a->n = ap->n_tensors;
    a->tensors = gl_xcalloc(a->n, sizeof(*a->tensors));
    for (size_t i = 0; i < a->n; i++) {
        gl_status st = gl_tensor_from_proto(ap->tensors[i], aj->ctx, lc->dir, true,
                                            lc->no_mmap, &a->tensors[i]);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* Values of the non-graph kinds. */
static gl_status load_attr_value(attr_job *aj, gl_attr *a)
{
    Onnx__AttributeProto *ap = aj->ap;
    switch (a->type) {
    case GL_ATTR_FLOAT: a->f = ap->f; break;
    case GL_ATTR_INT: a->i = ap->i; break;
    case GL_ATTR_STRING: copy_bytes(&a->s, &ap->s); break;
    case GL_ATTR_FLOATS:
        a->n = ap->n_floats;
        a->floats = gl_xmalloc(a->n * sizeof(float) + 1);
        if (a->n)
            memcpy(a->floats, ap->floats, a->n * sizeof(float));
        break;
    case GL_ATTR_INTS:
        a->n = ap->n_ints;
        a->ints = gl_xmalloc(a->n * sizeof(int64_t) + 1);
        if (a->n)
            memcpy(a->ints, ap->ints, a->n * sizeof(int64_t));
        break;
    case GL_ATTR_STRINGS:
        a->n = ap->n_strings;
        a->strings = gl_xcalloc(a->n, sizeof(gl_bytes));
        for (size_t i = 0; i < a->n; i++)
            copy_bytes(&a->strings[i], &ap->strings[i]);
        break;
    case GL_ATTR_TENSOR:
    case GL_ATTR_TENSORS: return load_attr_tensors(aj, a);
    case GL_ATTR_SPARSE_TENSOR:
        a->n = ap->sparse_tensor ? 1 : 0;
        a->opaque = pack_all((ProtobufCMessage *const *)&ap->sparse_tensor, a->n);
        break;
    case GL_ATTR_SPARSE_TENSORS:
        a->n = ap->n_sparse_tensors;
        a->opaque = pack_all((ProtobufCMessage *const *)ap->sparse_tensors, a->n);
        break;
    case GL_ATTR_TYPE_PROTO:
        a->n = ap->tp ? 1 : 0;
        a->opaque = pack_all((ProtobufCMessage *const *)&ap->tp, a->n);
        break;
    case GL_ATTR_TYPE_PROTOS:
        a->n = ap->n_type_protos;
        a->opaque = pack_all((ProtobufCMessage *const *)ap->type_protos, a->n);
        break;
    default: break;
    }
    return GL_OK;
}

static gl_status fill_graph(load_ctx *lc, gl_graph *g, Onnx__GraphProto *gp,
                            const char *where);

/* GRAPH / GRAPHS: the subgraphs are attached to the node first (so names they capture
 * become the node's implicit inputs as they resolve), then filled. */
static gl_status load_attr_graphs(attr_job *aj, gl_attr *a)
{
    Onnx__AttributeProto *ap = aj->ap;
    bool single = a->type == GL_ATTR_GRAPH;
    size_t count = single ? (ap->g != NULL) : ap->n_graphs;
    Onnx__GraphProto *const *gps = single ? &ap->g : ap->graphs;
    if (single && !ap->g && !ap->ref_attr_name) {
        gl_attr_free(a);
        return gl_fail(GL_ERR_INPUT, "%s: GRAPH attribute without a graph", aj->ctx);
    }
    gl_graph **subs = gl_xcalloc(count, sizeof(*subs));
    for (size_t i = 0; i < count; i++)
        subs[i] = gl_graph_new(aj->gj->lc->m, aj->gj->g, gps[i]->name);
    if (single) {
        a->g = count ? subs[0] : NULL;
    } else {
        a->n = count;
        a->graphs = gl_xmalloc(count * sizeof(*subs) + 1);
        memcpy(a->graphs, subs, count * sizeof(*subs));
    }
    gl_node_take_attr(aj->n, a);
    gl_status st = GL_OK;
    for (size_t i = 0; i < count && st == GL_OK; i++) {
        char where[256];
        snprintf(where, sizeof(where), "subgraph '%s' of node '%s'",
                 str_or_empty(gps[i]->name), aj->n->name);
        st = fill_graph(aj->gj->lc, subs[i], gps[i], where);
    }
    free(subs);
    return st;
}

static gl_status load_attribute(graph_job *gj, gl_node *n, Onnx__AttributeProto *ap)
{
    attr_job aj = {.gj = gj, .n = n, .ap = ap};
    const char *name = str_or_empty(ap->name);
    char label[600];
    node_label(gj, n, label, sizeof(label));
    snprintf(aj.ctx, sizeof(aj.ctx), "%s: %s: attribute '%s'", gj->lc->path, label, name);
    if (!*name)
        return gl_fail(GL_ERR_INPUT, "%s: %s: an attribute has no name", gj->lc->path, label);
    if (gl_node_attr(n, name))
        return gl_fail(GL_ERR_INPUT, "%s appears twice", aj.ctx);
    int type = ap->has_type && ap->type ? (int)ap->type : (int)infer_attr_type(ap);
    if (type == GL_ATTR_UNDEFINED && !ap->ref_attr_name)
        return gl_fail(GL_ERR_INPUT, "%s has no type and no value", aj.ctx);
    if (type < 0 || type > GL_ATTR_TYPE_PROTOS)
        return gl_fail(GL_ERR_INPUT, "%s has an unknown type %d", aj.ctx, type);
    gl_attr a = {.name = gl_xstrdup(name),
                 .type = (gl_attr_type)type,
                 .ref_attr_name = gl_xstrdup(ap->ref_attr_name),
                 .doc_string = gl_xstrdup(ap->doc_string)};
    if (type == GL_ATTR_GRAPH || type == GL_ATTR_GRAPHS)
        return load_attr_graphs(&aj, &a);
    gl_status st = load_attr_value(&aj, &a);
    if (st != GL_OK) {
        gl_attr_free(&a);
        return st;
    }
    gl_node_take_attr(n, &a);
    return GL_OK;
}

/* ---- nodes, phase 2: inputs and attributes --------------------------------------------- */

static gl_status wire_inputs(graph_job *gj, gl_node *n, const Onnx__NodeProto *np)
{
    for (size_t i = 0; i < np->n_input; i++) {
        const char *name = str_or_empty(np->input[i]);
        gl_value *v = NULL;
        char label[600];
        if (*name && !(v = gl_resolve_value(gj->g, name)))
            return gl_fail(GL_ERR_INPUT,
                           "%s: %s: input '%s' is not produced by any node, graph input or "
                           "initializer",
                           gj->lc->path, node_label(gj, n, label, sizeof(label)), name);
        gl_status st = gl_set_input(gj->g, n, n->n_inputs, v);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

static gl_status load_attributes(graph_job *gj, gl_node *n, const Onnx__NodeProto *np)
{
    /* No op has more than a few dozen attributes; the cap keeps the duplicate-name check
     * (a scan per attribute) from turning a hostile node into quadratic work. */
    if (np->n_attribute > MAX_NODE_ATTRIBUTES) {
        char label[600];
        return gl_fail(GL_ERR_INPUT, "%s: %s: %zu attributes (at most %d are accepted)",
                       gj->lc->path, node_label(gj, n, label, sizeof(label)),
                       np->n_attribute, MAX_NODE_ATTRIBUTES);
    }
    for (size_t i = 0; i < np->n_attribute; i++) {
        gl_status st = load_attribute(gj, n, np->attribute[i]);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* The first n_wired nodes have their inputs (phase 1); a node whose message phase 1
 * freed is complete. A wired node's message is never read again: it is freed (and its
 * slot cleared, which free_unpacked skips) so that its memory serves the rest of the
 * load. */
static gl_status wire_nodes(graph_job *gj, Onnx__NodeProto **nps, size_t n,
                            gl_node *const *nodes, size_t n_wired)
{
    for (size_t i = 0; i < n; i++) {
        if (!nps[i])
            continue;
        gl_status st = i < n_wired ? GL_OK : wire_inputs(gj, nodes[i], nps[i]);
        if (st == GL_OK)
            st = load_attributes(gj, nodes[i], nps[i]);
        if (st != GL_OK)
            return st;
        onnx__node_proto__free_unpacked(nps[i], NULL);
        nps[i] = NULL;
    }
    return GL_OK;
}

/* Both phases over one node list (a graph's or a function body's). */
static gl_status load_nodes(graph_job *gj, Onnx__NodeProto **nps, size_t n,
                            Onnx__ValueInfoProto *const *value_info, size_t n_value_info)
{
    gl_node **nodes = gl_xcalloc(n, sizeof(*nodes));
    size_t n_wired;
    gl_status st = create_nodes(gj, nps, n, nodes, &n_wired);
    if (st == GL_OK)
        st = apply_value_info(gj, value_info, n_value_info);
    if (st == GL_OK)
        st = wire_nodes(gj, nps, n, nodes, n_wired);
    free(nodes);
    return st;
}

/* ---- graph outputs ------------------------------------------------------------------------ */

/* `vi` (may be NULL: function outputs are bare names) types the value when nothing
 * else has. */
static gl_status add_output(graph_job *gj, size_t index, const char *name,
                            const Onnx__ValueInfoProto *vi)
{
    if (!name || !*name)
        return gl_fail(GL_ERR_INPUT, "%s: %s: output %zu has no name", gj->lc->path, gj->where,
                       index);
    gl_value *v = gl_resolve_value(gj->g, name);
    if (!v)
        return gl_fail(GL_ERR_INPUT,
                       "%s: %s: output '%s' is not produced by any node, graph input or "
                       "initializer",
                       gj->lc->path, gj->where, name);
    if (vi) {
        char what[512];
        snprintf(what, sizeof(what), "%s: output '%s'", gj->lc->path, name);
        gl_type type;
        type_init(&type);
        gl_status st = load_type(what, vi->type, &type);
        if (st == GL_OK && v->type.kind == GL_TYPE_NONE) {
            gl_type_free(&v->type);
            v->type = type; /* moved, not copied */
            type_init(&type);
        }
        gl_type_free(&type);
        if (st != GL_OK)
            return st;
        if (!v->doc_string)
            v->doc_string = gl_xstrdup(vi->doc_string);
    }
    gl_graph_add_output(gj->g, v);
    return GL_OK;
}

/* ---- graphs ---------------------------------------------------------------------------------- */

/* Size the graph's arrays and name index once for everything it will hold: the nodes,
 * and the values named by inputs, initializers and node outputs (captures come later
 * and are few). The counts are those of messages already unpacked. */
static void reserve_graph(gl_graph *g, Onnx__NodeProto *const *nps, size_t n_nodes,
                          size_t n_other_values)
{
    size_t outputs = 0;
    for (size_t i = 0; i < n_nodes; i++)
        outputs += nps[i]->n_output;
    gl_graph_reserve(g, n_nodes, n_other_values + outputs);
}

static gl_status fill_graph(load_ctx *lc, gl_graph *g, Onnx__GraphProto *gp,
                            const char *where)
{
    graph_job gj = {.lc = lc, .g = g, .nested = g->parent != NULL};
    snprintf(gj.where, sizeof(gj.where), "%s", where);
    g->doc_string = gl_xstrdup(gp->doc_string);
    g->n_sparse_inits = gp->n_sparse_initializer;
    g->sparse_inits =
        pack_all((ProtobufCMessage *const *)gp->sparse_initializer, gp->n_sparse_initializer);
    g->n_quant_annotations = gp->n_quantization_annotation;
    g->quant_annotations = pack_all((ProtobufCMessage *const *)gp->quantization_annotation,
                                    gp->n_quantization_annotation);
    reserve_graph(g, gp->node, gp->n_node, gp->n_input + gp->n_initializer);
    gl_status st = load_inputs(&gj, gp->input, gp->n_input);
    if (st == GL_OK)
        st = load_initializers(&gj, gp->initializer, gp->n_initializer);
    if (st == GL_OK)
        st = load_nodes(&gj, gp->node, gp->n_node, gp->value_info, gp->n_value_info);
    for (size_t i = 0; i < gp->n_output && st == GL_OK; i++)
        st = add_output(&gj, i, gp->output[i]->name, gp->output[i]);
    return st;
}

/* ---- functions ------------------------------------------------------------------------------- */

static gl_opset *load_opsets(Onnx__OperatorSetIdProto *const *ops, size_t n)
{
    gl_opset *out = gl_xcalloc(n, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        out[i] = gl_opset_make(ops[i]->domain, ops[i]->has_version ? ops[i]->version : 0);
    return out;
}

static char **copy_strings(char *const *src, size_t n)
{
    char **out = gl_xcalloc(n, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        out[i] = gl_xstrdup(str_or_empty(src[i]));
    return out;
}

/* The body's inputs and outputs are the formal parameters: untyped values so named. */
static gl_status load_function_body(load_ctx *lc, const Onnx__FunctionProto *fp,
                                    gl_graph *body)
{
    graph_job gj = {.lc = lc, .g = body, .nested = true};
    snprintf(gj.where, sizeof(gj.where), "function '%s'", str_or_empty(fp->name));
    reserve_graph(body, fp->node, fp->n_node, fp->n_input);
    for (size_t i = 0; i < fp->n_input; i++) {
        const char *name = str_or_empty(fp->input[i]);
        if (!*name || gl_find_value(body, name))
            return gl_fail(GL_ERR_INPUT, "%s: %s: input %zu ('%s') is empty or repeated",
                           lc->path, gj.where, i, name);
        gl_graph_add_input(body, gl_add_value(body, name));
    }
    gl_status st = load_nodes(&gj, fp->node, fp->n_node, NULL, 0);
    for (size_t i = 0; i < fp->n_output && st == GL_OK; i++)
        st = add_output(&gj, i, fp->output[i], NULL);
    return st;
}

static gl_status load_functions(load_ctx *lc, Onnx__FunctionProto *const *fps, size_t n)
{
    gl_model *m = lc->m;
    m->functions = gl_xcalloc(n, sizeof(*m->functions));
    for (size_t i = 0; i < n; i++) {
        const Onnx__FunctionProto *fp = fps[i];
        gl_function *f = &m->functions[m->n_functions++];
        f->name = gl_xstrdup(str_or_empty(fp->name));
        f->domain = gl_xstrdup(gl_domain_canonical(fp->domain));
        f->doc_string = gl_xstrdup(fp->doc_string);
        f->attributes = copy_strings(fp->attribute, fp->n_attribute);
        f->n_attributes = fp->n_attribute;
        f->opsets = load_opsets(fp->opset_import, fp->n_opset_import);
        f->n_opsets = fp->n_opset_import;
        f->body = gl_graph_new(m, NULL, fp->name);
        gl_status st = load_function_body(lc, fp, f->body);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* ---- the model ------------------------------------------------------------------------------- */

static void load_model_fields(gl_model *m, const Onnx__ModelProto *mp)
{
    m->ir_version = mp->has_ir_version ? mp->ir_version : 0;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = mp->opset_import[i];
        gl_model_set_opset(m, op->domain, op->has_version ? op->version : 0);
    }
    m->producer_name = gl_xstrdup(mp->producer_name);
    m->producer_version = gl_xstrdup(mp->producer_version);
    m->domain = gl_xstrdup(mp->domain);
    m->doc_string = gl_xstrdup(mp->doc_string);
    m->has_model_version = mp->has_model_version;
    m->model_version = mp->model_version;
    m->metadata = gl_xcalloc(mp->n_metadata_props, sizeof(*m->metadata));
    m->n_metadata = mp->n_metadata_props;
    for (size_t i = 0; i < mp->n_metadata_props; i++) {
        m->metadata[i].key = gl_xstrdup(str_or_empty(mp->metadata_props[i]->key));
        m->metadata[i].value = gl_xstrdup(str_or_empty(mp->metadata_props[i]->value));
    }
    m->n_training_info = mp->n_training_info;
    m->training_info =
        pack_all((ProtobufCMessage *const *)mp->training_info, mp->n_training_info);
}

static gl_status build_model(load_ctx *lc, Onnx__ModelProto *mp)
{
    if (!mp->graph)
        return gl_fail(GL_ERR_INPUT, "%s: the model has no graph", lc->path);
    load_model_fields(lc->m, mp);
    char where[256];
    snprintf(where, sizeof(where), "graph '%s'", str_or_empty(mp->graph->name));
    lc->m->graph = gl_graph_new(lc->m, NULL, mp->graph->name);
    gl_status st = fill_graph(lc, lc->m->graph, mp->graph, where);
    if (st == GL_OK)
        st = load_functions(lc, mp->functions, mp->n_functions);
    return st;
}

static gl_status load_unpacked(Onnx__ModelProto *mp, const char *name, const char *dir,
                               const gl_load_options *opts, gl_model **out)
{
    gl_model *m = gl_model_new();
    m->path = gl_xstrdup(name);
    m->dir = gl_xstrdup(dir);
    m->freeze_inputs = opts && opts->freeze_inputs;
    load_ctx lc = {.path = m->path, .dir = dir, .no_mmap = opts && opts->no_mmap, .m = m};
    gl_status st = build_model(&lc, mp);
    if (st == GL_OK)
        st = gl_model_check_schema(m);
    if (st != GL_OK) {
        gl_model_free(m);
        return st;
    }
    *out = m;
    return GL_OK;
}

/* The folder of `path`: the base of its external data. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return gl_xstrdup(".");
    if (slash == path)
        return gl_xstrdup("/");
    return gl_xstrndup(path, (size_t)(slash - path));
}

gl_status gl_model_load(const char *path, const gl_load_options *opts, gl_model **out)
{
    *out = NULL;
    file_bytes fb;
    gl_status st = file_bytes_get(path, opts && opts->no_mmap, &fb);
    if (st != GL_OK)
        return st;
    Onnx__ModelProto *mp;
    st = unpack_model(path, fb.data, fb.len, &mp);
    file_bytes_release(&fb); /* the unpacked copy is all we need: peak near 2x the file */
    if (st != GL_OK)
        return st;
    char *dir = dir_of(path);
    st = load_unpacked(mp, path, dir, opts, out);
    free(dir);
    onnx__model_proto__free_unpacked(mp, NULL);
    return st;
}

gl_status gl_model_load_buffer(const void *data, size_t len, const char *name,
                               const char *dir, const gl_load_options *opts,
                               gl_model **out)
{
    *out = NULL;
    if (!name)
        name = "<memory>";
    Onnx__ModelProto *mp;
    gl_status st = unpack_model(name, data, len, &mp);
    if (st != GL_OK)
        return st;
    st = load_unpacked(mp, name, dir, opts, out);
    onnx__model_proto__free_unpacked(mp, NULL);
    return st;
}

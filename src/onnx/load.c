/* load.c — onnx.ModelProto (protobuf-c) -> IR.
 *
 * The file is read once, unpacked, and its bytes freed right away; tensors then take
 * over the unpacked buffers (gl_tensor_from_proto with take = true), so the weights
 * exist once in memory and the peak stays near twice the file size.
 *
 * A graph is loaded in two phases: first every node and its outputs are created, then
 * the inputs are wired by name. A file whose nodes are out of order (or cyclic) thus
 * still loads — toposort and verify report that later — while a name nothing defines
 * anywhere is an error here. Subgraphs are loaded in the second phase of their parent,
 * once every outer value exists; names they do not define resolve outward through
 * gl_resolve_value (captures and implicit inputs).
 */
#include "onnx/onnx_io.h"

#include "onnx.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
static const char *node_label(const graph_job *gj, const gl_node *n, char *buf, size_t len)
{
    snprintf(buf, len, "node '%s' (%s)%s%s", n->name, n->op_type, gj->nested ? " in " : "",
             gj->nested ? gj->where : "");
    return buf;
}

static const char *str_or_empty(const char *s) { return s ? s : ""; }

/* ONNX spells the default domain "" or "ai.onnx"; the IR always says "". */
static const char *normalize_domain(const char *d)
{
    return !d || !strcmp(d, "ai.onnx") ? "" : d;
}

/* ---- reading and unpacking ------------------------------------------------------------ */

static gl_status read_whole_file(const char *path, uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gl_fail(GL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    gl_status rc = GL_OK;
    if (fstat(fd, &st) != 0)
        rc = gl_fail(GL_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = gl_fail(GL_ERR_IO, "%s: not a regular file", path);
    else if (st.st_size > 0 && !(*data = malloc((size_t)st.st_size)))
        rc = gl_fail(GL_ERR_NOMEM, "%s: cannot allocate %lld bytes to read it", path,
                     (long long)st.st_size);
    size_t done = 0, size = rc == GL_OK ? (size_t)st.st_size : 0;
    while (rc == GL_OK && done < size) {
        ssize_t r = read(fd, *data + done, size - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            rc = gl_fail(GL_ERR_IO, "%s: read failed: %s", path,
                         r < 0 ? strerror(errno) : "file shrank while reading");
        else
            done += (size_t)r;
    }
    close(fd);
    if (rc != GL_OK) {
        free(*data);
        *data = NULL;
        return rc;
    }
    *len = size;
    return GL_OK;
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
            gl_type_copy(&v->type, &type);
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

/* The node names the file itself uses, so that a generated name never takes one that a
 * later node of the file carries. Open addressing over pointers into the proto. */
typedef struct name_set {
    const char **slots;
    size_t mask;
} name_set;

static size_t hash_name(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return (size_t)h;
}

static void name_set_build(name_set *set, Onnx__NodeProto *const *nodes, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    set->slots = gl_xcalloc(cap, sizeof(*set->slots));
    set->mask = cap - 1;
    for (size_t i = 0; i < n; i++) {
        const char *name = nodes[i]->name;
        if (!name || !*name)
            continue;
        size_t h = hash_name(name) & set->mask;
        while (set->slots[h] && strcmp(set->slots[h], name))
            h = (h + 1) & set->mask;
        set->slots[h] = name;
    }
}

static bool name_set_has(const name_set *set, const char *name)
{
    for (size_t h = hash_name(name) & set->mask; set->slots[h]; h = (h + 1) & set->mask)
        if (!strcmp(set->slots[h], name))
            return true;
    return false;
}

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

static gl_status output_conflict(graph_job *gj, const gl_node *n, const gl_value *old)
{
    char label[600];
    node_label(gj, n, label, sizeof(label));
    if (old->producer)
        return gl_fail(GL_ERR_INPUT, "%s: %s: output '%s' is already produced by node '%s' (%s)",
                       gj->lc->path, label, old->name, old->producer->name,
                       old->producer->op_type);
    return gl_fail(GL_ERR_INPUT, "%s: %s: output '%s' is also a graph %s", gj->lc->path, label,
                   old->name, old->is_input ? "input" : "initializer");
}

/* An omitted optional output: the slot stays empty. gl_add_node gave it a fresh value,
 * which no one can have used yet. */
static gl_status drop_output(gl_graph *g, gl_node *n, size_t slot)
{
    gl_value *v = n->outputs[slot];
    n->outputs[slot] = NULL;
    v->producer = NULL;
    v->producer_slot = -1;
    return gl_remove_value(g, v);
}

/* Give output `slot` of n the file's name `name` ("" = omitted output: empty slot). */
static gl_status bind_output(graph_job *gj, gl_node *n, size_t slot, const char *name)
{
    gl_graph *g = gj->g;
    gl_value *mine = n->outputs[slot];
    if (!*name)
        return drop_output(g, n, slot);
    gl_value *old = gl_find_value(g, name);
    if (old == mine)
        return GL_OK;
    if (old && old->producer == n && (size_t)old->producer_slot > slot) {
        /* A later fresh output of this node holds the name: move it aside. */
        char *aside = gl_unique_value_name(g, "__load_tmp");
        gl_status st = gl_rename_value(g, old, aside);
        free(aside);
        if (st != GL_OK)
            return st;
    } else if (old) {
        return output_conflict(gj, n, old);
    }
    return gl_rename_value(g, mine, name);
}

static gl_status create_node(graph_job *gj, const name_set *file_names,
                             const Onnx__NodeProto *np, size_t index, gl_node **out)
{
    const char *op = np->op_type;
    if (!op || !*op)
        return gl_fail(GL_ERR_INPUT, "%s: %s: node %zu ('%s') has no op_type", gj->lc->path,
                       gj->where, index, str_or_empty(np->name));
    bool generated = !np->name || !*np->name;
    char *name = generated ? generate_node_name(gj->g, file_names, op, index)
                           : gl_xstrdup(np->name);
    gl_node *n = gl_add_node(gj->g, op, normalize_domain(np->domain), name, NULL, 0,
                             np->n_output);
    free(name);
    n->name_generated = generated;
    n->doc_string = gl_xstrdup(np->doc_string);
    *out = n;
    for (size_t i = 0; i < np->n_output; i++) {
        gl_status st = bind_output(gj, n, i, str_or_empty(np->output[i]));
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

static gl_status create_nodes(graph_job *gj, Onnx__NodeProto *const *nps, size_t n,
                              gl_node **nodes)
{
    name_set file_names;
    name_set_build(&file_names, nps, n);
    gl_status st = GL_OK;
    for (size_t i = 0; i < n && st == GL_OK; i++)
        st = create_node(gj, &file_names, nps[i], i, &nodes[i]);
    free(file_names.slots);
    return st;
}

/* Provenance: every loaded node stands for itself; origin_names maps ids to the names
 * the file gave (or we generated), for messages after passes renamed or fused nodes. */
static void record_origins(gl_graph *g, gl_node *const *nodes, size_t n)
{
    g->origin_names = gl_xcalloc(g->next_node_id, sizeof(char *));
    g->n_origin_names = g->next_node_id;
    for (size_t i = 0; i < n; i++) {
        gl_node *nd = nodes[i];
        gl_node_set_provenance(nd, &nd->id, 1, -1);
        g->origin_names[nd->id] = gl_xstrdup(nd->name);
    }
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

static gl_status wire_node(graph_job *gj, gl_node *n, const Onnx__NodeProto *np)
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
    for (size_t i = 0; i < np->n_attribute; i++) {
        gl_status st = load_attribute(gj, n, np->attribute[i]);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

static gl_status wire_nodes(graph_job *gj, Onnx__NodeProto *const *nps, size_t n,
                            gl_node *const *nodes)
{
    for (size_t i = 0; i < n; i++) {
        gl_status st = wire_node(gj, nodes[i], nps[i]);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* Both phases over one node list (a graph's or a function body's). */
static gl_status load_nodes(graph_job *gj, Onnx__NodeProto *const *nps, size_t n,
                            Onnx__ValueInfoProto *const *value_info, size_t n_value_info)
{
    gl_node **nodes = gl_xcalloc(n, sizeof(*nodes));
    gl_status st = create_nodes(gj, nps, n, nodes);
    if (st == GL_OK) {
        record_origins(gj->g, nodes, n);
        st = apply_value_info(gj, value_info, n_value_info);
    }
    if (st == GL_OK)
        st = wire_nodes(gj, nps, n, nodes);
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
        if (st == GL_OK && v->type.kind == GL_TYPE_NONE)
            gl_type_copy(&v->type, &type);
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
    for (size_t i = 0; i < n; i++) {
        out[i].domain = gl_xstrdup(normalize_domain(ops[i]->domain));
        out[i].version = ops[i]->has_version ? ops[i]->version : 0;
    }
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
        f->domain = gl_xstrdup(str_or_empty(fp->domain));
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
        gl_model_set_opset(m, normalize_domain(op->domain), op->has_version ? op->version : 0);
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
    uint8_t *data;
    size_t len;
    gl_status st = read_whole_file(path, &data, &len);
    if (st != GL_OK)
        return st;
    Onnx__ModelProto *mp;
    st = unpack_model(path, data, len, &mp);
    free(data); /* the unpacked copy is all we need: keep the peak near 2x the file */
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

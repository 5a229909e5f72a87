/* save.c — IR -> onnx.ModelProto -> bytes.
 *
 * The ModelProto is a tree of protobuf-c structs whose strings, number arrays and tensor
 * bytes borrow from the IR: only message structs and pointer arrays are allocated, from
 * one arena freed at once, so saving a model with gigabytes of weights copies none of
 * them (the packer streams raw_data straight from the tensors into the file). What the IR
 * keeps as packed bytes (training_info, sparse initializers, quantization annotations,
 * opaque types and attributes) is unpacked and hung into the tree, so it goes out again
 * as the same messages.
 *
 * Files are written through util/safe_write.h: never in place, never through a link,
 * never onto an input; every failure unlinks the temporary file.
 *
 * Unchanged weights are not written again: an initializer whose bytes are still those
 * loaded from an external-data file points into that file, reached from the output's
 * folder under its own name or a hard link (onnx_io.h, gl_save_options).
 *
 * External data ("<OUT>.data"): each tensor starts at a multiple of GL_EXT_ALIGN (4096)
 * bytes, zero padding between, so a reader can mmap a tensor from a page boundary and its
 * first element suits any vector load. onnx's own writer does not align and readers
 * accept any offset: this is our choice, not a requirement of the format.
 */
#include "onnx/onnx_io.h"

#include "onnx.pb-c.h"
#include "onnx/shared_weights.h"
#include "util/safe_write.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GL_EXT_ALIGN 4096u
/* protobuf's readers (onnx, ONNX Runtime) refuse messages of 2 GiB and more. */
#define GL_PROTO_MAX ((size_t)INT32_MAX)

/* ---- arena: every message struct and pointer array of one save ------------------- */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    max_align_t data[];
} arena_block;

#define ARENA_BLOCK_BYTES ((size_t)64 * 1024)

static void *arena_alloc(arena_block **arena, size_t n)
{
    const size_t align = _Alignof(max_align_t);
    n = n ? (n + align - 1) / align * align : align;
    arena_block *b = *arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK_BYTES ? n : ARENA_BLOCK_BYTES;
        b = gl_xmalloc(sizeof(*b) + cap);
        b->used = 0;
        b->cap = cap;
        /* A block made for one big array goes behind the current one, which may still
         * have room for the small structs that follow. */
        if (*arena && n > ARENA_BLOCK_BYTES) {
            b->next = (*arena)->next;
            (*arena)->next = b;
        } else {
            b->next = *arena;
            *arena = b;
        }
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

static void arena_free(arena_block *b)
{
    while (b) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
}

/* The arena emptied for reuse: its first block kept when of the usual size. */
static void arena_reset(arena_block **arena)
{
    arena_block *b = *arena;
    if (b && b->cap == ARENA_BLOCK_BYTES) {
        arena_free(b->next);
        b->next = NULL;
        b->used = 0;
    } else {
        arena_free(b);
        *arena = NULL;
    }
}

/* ---- the save context -------------------------------------------------------------- */

typedef struct ext_writer {
    char *path;           /* "<OUT>.data" (owned), NULL when external data is not allowed */
    const char *location; /* its base name, as external_data "location" says it */
    gl_atomic_file file;
    bool open;
    uint64_t size;        /* bytes written so far */
} ext_writer;

/* An input's external-data file that this save's unchanged tensors point into. */
typedef struct kept_file {
    uint64_t dev, ino;
    char *location; /* its name in the output folder (owned); NULL: copy its tensors */
} kept_file;

/* One message of a packed run kept as its tree (packed_run). */
typedef struct kept_msg {
    size_t at;                   /* its place in the run: after `at` bytes */
    const ProtobufCMessage *msg;
    size_t size;                 /* packed, without its tag and length */
} kept_msg;

/* The entries of one repeated message field, packed as they are encoded. */
typedef struct packed_run {
    uint32_t field;              /* the field's number */
    uint8_t *bytes;
    size_t len, cap;
    kept_msg *kept;
    size_t n_kept, cap_kept;
    size_t size;                 /* of the whole run as written */
} packed_run;

/* The model as written: ModelProto's fields before the graph and after it, the graph's
 * fields before value_info (but node) and after it, and the two runs. */
typedef struct model_parts {
    Onnx__ModelProto head, tail;
    Onnx__GraphProto mid, end;
    packed_run nodes, value_info;
    size_t graph_size, size;
} model_parts;

typedef struct save_ctx {
    const gl_model *model;
    const char *where;      /* output path (or the model's) for messages */
    size_t ext_threshold;   /* 0: size alone never sends a tensor out */
    bool value_info;
    arena_block *arena;
    arena_block *scratch; /* kept for the next message of a packed run */
    model_parts parts;
    ProtobufCMessage **unpacked; /* kept bytes unpacked for this save: free_unpacked */
    size_t n_unpacked, cap_unpacked;
    Onnx__TensorProto **tensors; /* encoded tensors: gl_tensor_proto_release */
    size_t n_tensors, cap_tensors;
    ext_writer ext;
    gl_shared_weights *shared; /* not NULL: external data goes there, not to ext */
    bool keep_unchanged;
    kept_file *kept;
    size_t n_kept, cap_kept;
    gl_save_report *report; /* never NULL: the caller's, or own_report */
    gl_save_report own_report;
} save_ctx;

#define NEW_MSG(c, var, init_fn) ((var) = arena_alloc(&(c)->arena, sizeof(*(var))), init_fn(var))

static void *new_array(save_ctx *c, size_t count, size_t elem)
{
    if (elem && count > SIZE_MAX / elem)
        count = SIZE_MAX / elem; /* cannot happen for arrays mirroring memory; xmalloc dies */
    return arena_alloc(&c->arena, count * elem);
}

static char *arena_printf(save_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *arena_printf(save_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = arena_alloc(&c->arena, (size_t)(n < 0 ? 0 : n) + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* protobuf-c fields are `char *` but the packer only reads them: the proto borrows the
 * IR's strings for the duration of one save. */
static char *borrow(const char *s) { return (char *)s; }

static char empty_name[] = "";
static uint8_t no_bytes[1];

/* Unpack bytes the IR kept verbatim (`what` names them in messages); NULL with a
 * message when they do not parse. */
static void *unpack_kept(save_ctx *c, const ProtobufCMessageDescriptor *desc,
                         const gl_bytes *b, const char *what)
{
    ProtobufCMessage *msg =
        protobuf_c_message_unpack(desc, NULL, b->len, b->data ? b->data : no_bytes);
    if (!msg) {
        gl_fail(GL_ERR_INPUT, "the kept %s (%zu bytes) is not a valid %s", what, b->len,
                desc->name);
        return NULL;
    }
    GL_GROW(c->unpacked, c->cap_unpacked, c->n_unpacked + 1);
    c->unpacked[c->n_unpacked++] = msg;
    return msg;
}

/* A repeated message field as protobuf-c itself treats one: an array of message
 * pointers (callers cast it to the field's type). */
static gl_status unpack_kept_list(save_ctx *c, const ProtobufCMessageDescriptor *desc,
                                  const gl_bytes *items, size_t n, const char *what,
                                  void ***out)
{
    void **arr = new_array(c, n, sizeof(*arr));
    for (size_t i = 0; i < n; i++)
        if (!(arr[i] = unpack_kept(c, desc, &items[i], what)))
            return GL_ERR_INPUT;
    *out = n ? arr : NULL;
    return GL_OK;
}

/* The name a value goes by in the file. A capture stands for a value of an enclosing
 * graph, and ONNX subgraphs read outer values by their own names, so follow ->outer to
 * the value that is not a capture. */
static char *wire_name(const gl_value *v)
{
    while (v->outer)
        v = v->outer;
    return v->name ? v->name : empty_name;
}

/* ---- types --------------------------------------------------------------------------- */

static Onnx__TensorShapeProto *encode_shape(save_ctx *c, const gl_shape *s)
{
    Onnx__TensorShapeProto *sp;
    NEW_MSG(c, sp, onnx__tensor_shape_proto__init);
    sp->n_dim = (size_t)s->rank;
    sp->dim = new_array(c, sp->n_dim, sizeof(*sp->dim));
    for (int i = 0; i < s->rank; i++) {
        Onnx__TensorShapeProto__Dimension *d;
        NEW_MSG(c, d, onnx__tensor_shape_proto__dimension__init);
        if (s->dims[i].value >= 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = s->dims[i].value;
        } else if (s->dims[i].sym) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = s->dims[i].sym;
        } /* else: an unknown dim is a dimension with neither field */
        sp->dim[i] = d;
    }
    return sp;
}

/* NULL when nothing is known (GL_TYPE_NONE). */
static gl_status encode_type(save_ctx *c, const gl_type *t, Onnx__TypeProto **out)
{
    *out = NULL;
    if (t->kind == GL_TYPE_NONE)
        return GL_OK;
    if (t->kind == GL_TYPE_OPAQUE)
        return (*out = unpack_kept(c, &onnx__type_proto__descriptor, &t->opaque, "type"))
                   ? GL_OK
                   : GL_ERR_INPUT;
    Onnx__TypeProto *tp;
    Onnx__TypeProto__Tensor *tt;
    NEW_MSG(c, tp, onnx__type_proto__init);
    NEW_MSG(c, tt, onnx__type_proto__tensor__init);
    if (t->dtype != GL_DT_UNDEFINED) {
        tt->has_elem_type = true;
        tt->elem_type = (int32_t)t->dtype;
    }
    if (t->shape.rank >= 0)
        tt->shape = encode_shape(c, &t->shape);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    *out = tp;
    return GL_OK;
}

static gl_status encode_value_info(save_ctx *c, const gl_value *v, Onnx__ValueInfoProto **out)
{
    Onnx__ValueInfoProto *vi;
    NEW_MSG(c, vi, onnx__value_info_proto__init);
    vi->name = wire_name(v);
    vi->doc_string = borrow(v->doc_string);
    gl_status st = encode_type(c, &v->type, &vi->type);
    if (st != GL_OK) {
        gl_error_prefix("value '%s'", vi->name);
        return st;
    }
    *out = vi;
    return GL_OK;
}

/* value_info is for what the graph's interface and initializers do not already say. */
static bool wants_value_info(const gl_value *v)
{
    if (v->is_input || v->n_output_refs > 0 || v->init || v->outer || !v->producer)
        return false;
    if (v->type.kind == GL_TYPE_OPAQUE)
        return true;
    return v->type.kind == GL_TYPE_TENSOR &&
           (v->type.dtype != GL_DT_UNDEFINED || v->type.shape.rank >= 0);
}

/* ---- tensors and external data ---------------------------------------------------- */

static gl_status tensor_proto(save_ctx *c, const gl_tensor *t, Onnx__TensorProto **out)
{
    if (!t)
        return gl_fail(GL_ERR_INTERNAL, "tensor missing");
    Onnx__TensorProto *tp = arena_alloc(&c->arena, sizeof(*tp));
    gl_status st = gl_tensor_to_proto(t, tp);
    if (st != GL_OK)
        return st;
    GL_GROW(c->tensors, c->cap_tensors, c->n_tensors + 1);
    c->tensors[c->n_tensors++] = tp;
    *out = tp;
    return GL_OK;
}

static bool wants_external(const save_ctx *c, const gl_tensor *t)
{
    /* ONNX has no external form for strings; an empty tensor has nothing to move. */
    if (!(c->ext.path || c->shared) || t->dtype == GL_DT_STRING || t->count == 0)
        return false;
    size_t threshold = c->shared ? gl_shared_weights_threshold(c->shared) : c->ext_threshold;
    return t->external || (threshold && gl_tensor_nbytes(t) >= threshold);
}

static gl_status ext_open(save_ctx *c)
{
    gl_status st = gl_atomic_open(&c->ext.file, c->ext.path);
    c->ext.open = st == GL_OK;
    return st;
}

static gl_status ext_append(save_ctx *c, const void *data, size_t len, uint64_t *offset)
{
    static const uint8_t zeros[GL_EXT_ALIGN];
    gl_status st = c->ext.open ? GL_OK : ext_open(c);
    if (st != GL_OK)
        return st;
    size_t pad = (size_t)((GL_EXT_ALIGN - c->ext.size % GL_EXT_ALIGN) % GL_EXT_ALIGN);
    if (pad && (st = gl_atomic_write(&c->ext.file, zeros, pad)) != GL_OK)
        return st;
    *offset = c->ext.size + pad;
    if ((st = gl_atomic_write(&c->ext.file, data, len)) != GL_OK)
        return st;
    c->ext.size = *offset + len;
    return GL_OK;
}

static Onnx__StringStringEntryProto *new_entry(save_ctx *c, char *key, char *value)
{
    Onnx__StringStringEntryProto *e;
    NEW_MSG(c, e, onnx__string_string_entry_proto__init);
    e->key = key;
    e->value = value;
    return e;
}

/* The encoded tensor's bytes are at `offset` in the file `location` (beside the model),
 * not in raw_data. */
static void point_external(save_ctx *c, Onnx__TensorProto *tp, const char *location,
                           uint64_t offset)
{
    size_t len = tp->raw_data.len;
    tp->has_raw_data = false;
    tp->raw_data.len = 0;
    tp->raw_data.data = NULL;
    tp->has_data_location = true;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    tp->n_external_data = 3;
    tp->external_data = new_array(c, 3, sizeof(*tp->external_data));
    tp->external_data[0] = new_entry(c, "location", borrow(location));
    tp->external_data[1] = new_entry(c, "offset", arena_printf(c, "%" PRIu64, offset));
    tp->external_data[2] = new_entry(c, "length", arena_printf(c, "%zu", len));
}

/* Move an encoded tensor's raw_data to the external file. */
static gl_status externalize(save_ctx *c, Onnx__TensorProto *tp)
{
    uint64_t offset;
    size_t len = tp->raw_data.len;
    gl_status st = c->shared ? gl_shared_weights_put(c->shared, tp->raw_data.data, len, &offset)
                             : ext_append(c, tp->raw_data.data, len, &offset);
    if (st != GL_OK)
        return st;
    c->report->written++;
    c->report->written_bytes += len;
    const char *location = c->shared ? gl_shared_weights_location(c->shared) : c->ext.location;
    point_external(c, tp, location, offset);
    return GL_OK;
}

/* ---- unchanged tensors: pointed at in the file they were loaded from ----------------- */

/* Whether `path` is the file `o` was read from (same device and inode; never a link). */
static bool is_origin_file(const char *path, const gl_file_extent *o)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_dev == o->dev &&
           (uint64_t)st.st_ino == o->ino;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* "<OUT>" with its last component replaced by `name`. */
static char *beside_output(const save_ctx *c, const char *name)
{
    const char *out = c->where;
    size_t dir_len = (size_t)(base_name(out) - out);
    char *p = gl_xmalloc(dir_len + strlen(name) + 1);
    memcpy(p, out, dir_len);
    strcpy(p + dir_len, name);
    return p;
}

/* The name under which the output folder reaches the file `o` lies in: its own name when
 * it is there already (the input's own folder, or a link an earlier save made under that
 * name), else a hard link "<OUT>.<its name>" made now. NULL in k->location (the tensors
 * are then copied) when the file is no longer the one loaded or cannot be linked. */
static gl_status place_origin_file(save_ctx *c, const gl_file_extent *o, kept_file *k)
{
    const char *own = base_name(o->path);
    char *there = beside_output(c, own);
    bool in_folder = is_origin_file(there, o);
    free(there);
    if (in_folder) {
        k->location = gl_xstrdup(own);
        return GL_OK;
    }
    if (!is_origin_file(o->path, o)) {
        snprintf(c->report->copied, sizeof(c->report->copied),
                 "%s was replaced since it was loaded", o->path);
        return GL_OK;
    }
    size_t len = strlen(base_name(c->where)) + strlen(own) + 2;
    char *name = gl_xmalloc(len);
    snprintf(name, len, "%s.%s", base_name(c->where), own);
    char *link_path = beside_output(c, name);
    gl_status st = gl_link_file(o->path, link_path);
    free(link_path);
    if (st == GL_OK) {
        k->location = name;
        c->report->links++;
        return GL_OK;
    }
    free(name);
    if (st != GL_ERR_UNSUPPORTED)
        return st;
    snprintf(c->report->copied, sizeof(c->report->copied), "%s", gl_error_message());
    return GL_OK;
}

static gl_status kept_file_for(save_ctx *c, const gl_file_extent *o, const kept_file **out)
{
    for (size_t i = 0; i < c->n_kept; i++)
        if (c->kept[i].dev == o->dev && c->kept[i].ino == o->ino) {
            *out = &c->kept[i];
            return GL_OK;
        }
    kept_file k = {o->dev, o->ino, NULL};
    gl_status st = place_origin_file(c, o, &k);
    if (st != GL_OK)
        return st;
    GL_GROW(c->kept, c->cap_kept, c->n_kept + 1);
    c->kept[c->n_kept] = k;
    *out = &c->kept[c->n_kept++];
    return GL_OK;
}

/* An initializer whose bytes no pass changed since they were loaded from external data
 * points at them where they lie (*done); the others are written. */
static gl_status keep_in_place(save_ctx *c, const gl_tensor *t, Onnx__TensorProto *tp,
                               bool *done)
{
    *done = false;
    const gl_file_extent *o = t->buf ? t->buf->origin : NULL;
    if (!o || !c->keep_unchanged || c->shared || !c->ext.path || t->dtype == GL_DT_STRING ||
        !tp->has_raw_data || tp->raw_data.len != t->buf->size)
        return GL_OK;
    const kept_file *k;
    gl_status st = kept_file_for(c, o, &k);
    if (st != GL_OK || !k->location)
        return st;
    c->report->kept++;
    c->report->kept_bytes += tp->raw_data.len;
    point_external(c, tp, k->location, o->offset);
    *done = true;
    return GL_OK;
}

/* ---- attributes ----------------------------------------------------------------------- */

static gl_status encode_graph(save_ctx *c, const gl_graph *g, Onnx__GraphProto **out);

typedef gl_status (*attr_encoder)(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap);

static gl_status put_float(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    ap->has_f = true;
    ap->f = a->f;
    return GL_OK;
}

static gl_status put_int(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    ap->has_i = true;
    ap->i = a->i;
    return GL_OK;
}

static gl_status put_string(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    ap->has_s = true;
    ap->s.len = a->s.len;
    ap->s.data = a->s.data ? a->s.data : no_bytes;
    return GL_OK;
}

static gl_status put_tensor(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    return tensor_proto(c, a->t, &ap->t);
}

static gl_status put_graph(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    if (!a->g)
        return gl_fail(GL_ERR_INTERNAL, "graph attribute without a graph");
    return encode_graph(c, a->g, &ap->g);
}

static gl_status put_floats(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    ap->n_floats = a->n;
    ap->floats = a->n ? a->floats : NULL;
    return GL_OK;
}

static gl_status put_ints(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    ap->n_ints = a->n;
    ap->ints = a->n ? a->ints : NULL;
    return GL_OK;
}

static gl_status put_strings(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    ap->n_strings = a->n;
    ap->strings = new_array(c, a->n, sizeof(*ap->strings));
    for (size_t i = 0; i < a->n; i++) {
        ap->strings[i].len = a->strings[i].len;
        ap->strings[i].data = a->strings[i].data ? a->strings[i].data : no_bytes;
    }
    return GL_OK;
}

static gl_status put_tensors(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    ap->tensors = new_array(c, a->n, sizeof(*ap->tensors));
    for (size_t i = 0; i < a->n; i++) {
        gl_status st = tensor_proto(c, a->tensors[i], &ap->tensors[i]);
        if (st != GL_OK)
            return st;
    }
    ap->n_tensors = a->n;
    return GL_OK;
}

static gl_status put_graphs(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    ap->graphs = new_array(c, a->n, sizeof(*ap->graphs));
    for (size_t i = 0; i < a->n; i++) {
        if (!a->graphs[i])
            return gl_fail(GL_ERR_INTERNAL, "graph %zu of the list missing", i);
        gl_status st = encode_graph(c, a->graphs[i], &ap->graphs[i]);
        if (st != GL_OK)
            return st;
    }
    ap->n_graphs = a->n;
    return GL_OK;
}

static void *unpack_one_opaque(save_ctx *c, const gl_attr *a,
                               const ProtobufCMessageDescriptor *desc)
{
    if (a->n < 1 || !a->opaque) {
        gl_fail(GL_ERR_INTERNAL, "no kept bytes for a %s", desc->name);
        return NULL;
    }
    return unpack_kept(c, desc, &a->opaque[0], "attribute value");
}

static gl_status put_sparse_tensor(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    ap->sparse_tensor = unpack_one_opaque(c, a, &onnx__sparse_tensor_proto__descriptor);
    return ap->sparse_tensor ? GL_OK : GL_ERR_INPUT;
}

static gl_status put_sparse_tensors(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    void **list;
    gl_status st = unpack_kept_list(c, &onnx__sparse_tensor_proto__descriptor, a->opaque,
                                    a->n, "attribute value", &list);
    if (st == GL_OK) {
        ap->n_sparse_tensors = a->n;
        ap->sparse_tensors = (Onnx__SparseTensorProto **)list;
    }
    return st;
}

static gl_status put_type_proto(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    ap->tp = unpack_one_opaque(c, a, &onnx__type_proto__descriptor);
    return ap->tp ? GL_OK : GL_ERR_INPUT;
}

static gl_status put_type_protos(save_ctx *c, const gl_attr *a, Onnx__AttributeProto *ap)
{
    void **list;
    gl_status st = unpack_kept_list(c, &onnx__type_proto__descriptor, a->opaque, a->n,
                                    "attribute value", &list);
    if (st == GL_OK) {
        ap->n_type_protos = a->n;
        ap->type_protos = (Onnx__TypeProto **)list;
    }
    return st;
}

static const attr_encoder attr_encoders[] = {
    [GL_ATTR_FLOAT] = put_float,
    [GL_ATTR_INT] = put_int,
    [GL_ATTR_STRING] = put_string,
    [GL_ATTR_TENSOR] = put_tensor,
    [GL_ATTR_GRAPH] = put_graph,
    [GL_ATTR_FLOATS] = put_floats,
    [GL_ATTR_INTS] = put_ints,
    [GL_ATTR_STRINGS] = put_strings,
    [GL_ATTR_TENSORS] = put_tensors,
    [GL_ATTR_GRAPHS] = put_graphs,
    [GL_ATTR_SPARSE_TENSOR] = put_sparse_tensor,
    [GL_ATTR_SPARSE_TENSORS] = put_sparse_tensors,
    [GL_ATTR_TYPE_PROTO] = put_type_proto,
    [GL_ATTR_TYPE_PROTOS] = put_type_protos,
};
_Static_assert(GL_ARRAY_LEN(attr_encoders) == GL_ATTR_TYPE_PROTOS + 1,
               "attr_encoders out of step with gl_attr_type");

static gl_status encode_attr(save_ctx *c, const gl_attr *a, Onnx__AttributeProto **out)
{
    Onnx__AttributeProto *ap;
    NEW_MSG(c, ap, onnx__attribute_proto__init);
    ap->name = borrow(a->name);
    ap->ref_attr_name = borrow(a->ref_attr_name);
    ap->doc_string = borrow(a->doc_string);
    ap->has_type = true;
    ap->type = (Onnx__AttributeProto__AttributeType)a->type;
    *out = ap;
    /* A reference to the caller's attribute carries no value of its own. */
    if (a->ref_attr_name)
        return GL_OK;
    size_t kind = (size_t)a->type;
    gl_status st = kind < GL_ARRAY_LEN(attr_encoders) && attr_encoders[kind]
                       ? attr_encoders[kind](c, a, ap)
                       : gl_fail(GL_ERR_INTERNAL, "unknown attribute type %d", (int)a->type);
    if (st != GL_OK)
        gl_error_prefix("attribute '%s'", a->name ? a->name : "");
    return st;
}

/* ---- nodes and graphs ------------------------------------------------------------ */

static char **value_names(save_ctx *c, gl_value *const *vals, size_t n)
{
    char **names = new_array(c, n, sizeof(*names));
    for (size_t i = 0; i < n; i++)
        names[i] = vals[i] ? wire_name(vals[i]) : empty_name; /* "" = omitted optional */
    return n ? names : NULL;
}

static gl_status encode_node(save_ctx *c, const gl_node *n, Onnx__NodeProto **out)
{
    Onnx__NodeProto *np;
    NEW_MSG(c, np, onnx__node_proto__init);
    /* Generated names are written too: reloading the file then keys diffs, decisions
     * and the TUI on the same names. */
    np->name = borrow(n->name);
    np->op_type = borrow(n->op_type);
    np->domain = *n->domain ? n->domain : NULL;
    np->doc_string = borrow(n->doc_string);
    np->n_input = n->n_inputs;
    np->input = value_names(c, n->inputs, n->n_inputs);
    np->n_output = n->n_outputs;
    np->output = value_names(c, n->outputs, n->n_outputs);
    np->attribute = new_array(c, n->n_attrs, sizeof(*np->attribute));
    for (size_t i = 0; i < n->n_attrs; i++) {
        gl_status st = encode_attr(c, &n->attrs[i], &np->attribute[i]);
        if (st != GL_OK) {
            gl_error_prefix("node '%s' (%s)", n->name ? n->name : "",
                            n->op_type ? n->op_type : "");
            return st;
        }
        np->n_attribute = i + 1;
    }
    *out = np;
    return GL_OK;
}

static gl_status encode_nodes(save_ctx *c, const gl_graph *g, size_t *n_out,
                              Onnx__NodeProto ***out)
{
    Onnx__NodeProto **nodes = new_array(c, g->n_nodes, sizeof(*nodes));
    size_t k = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (!g->nodes[i])
            continue; /* a hole left by gl_remove_node */
        gl_status st = encode_node(c, g->nodes[i], &nodes[k]);
        if (st != GL_OK)
            return st;
        k++;
    }
    *n_out = k;
    *out = nodes;
    return GL_OK;
}

static gl_status encode_value_infos_of(save_ctx *c, gl_value *const *vals, size_t n,
                                       size_t *n_out, Onnx__ValueInfoProto ***out)
{
    Onnx__ValueInfoProto **vis = new_array(c, n, sizeof(*vis));
    for (size_t i = 0; i < n; i++) {
        if (!vals[i])
            return gl_fail(GL_ERR_INTERNAL, "graph interface entry %zu missing", i);
        gl_status st = encode_value_info(c, vals[i], &vis[i]);
        if (st != GL_OK)
            return st;
    }
    *n_out = n;
    *out = vis;
    return GL_OK;
}

static gl_status encode_initializers(save_ctx *c, const gl_graph *g, Onnx__GraphProto *gp)
{
    gp->initializer = new_array(c, g->n_inits, sizeof(*gp->initializer));
    for (size_t i = 0; i < g->n_inits; i++) {
        const gl_value *v = g->inits[i];
        if (!v || !v->init)
            continue;
        Onnx__TensorProto *tp = NULL;
        gl_status st = tensor_proto(c, v->init, &tp);
        if (st == GL_OK) {
            /* The value's name is the truth; the tensor's is what the file once said. */
            tp->name = wire_name(v);
            bool kept;
            st = keep_in_place(c, v->init, tp, &kept);
            if (st == GL_OK && !kept && wants_external(c, v->init))
                st = externalize(c, tp);
        }
        if (st != GL_OK) {
            gl_error_prefix("initializer '%s'", v->name ? v->name : "");
            return st;
        }
        gp->initializer[gp->n_initializer++] = tp;
    }
    return GL_OK;
}

/* The values that get value_info, in node order: every typed value the interface does
 * not already describe. One per call from output *k of node *i on (both 0 at first);
 * NULL after the last. */
static const gl_value *next_value_info(const gl_graph *g, size_t *i, size_t *k)
{
    for (; *i < g->n_nodes; ++*i, *k = 0) {
        const gl_node *n = g->nodes[*i];
        while (n && *k < n->n_outputs) {
            const gl_value *v = n->outputs[(*k)++];
            if (v && v->producer == n && wants_value_info(v))
                return v;
        }
    }
    return NULL;
}

static gl_status encode_value_infos(save_ctx *c, const gl_graph *g, Onnx__GraphProto *gp)
{
    size_t max = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i])
            max += g->nodes[i]->n_outputs;
    gp->value_info = new_array(c, max, sizeof(*gp->value_info));
    const gl_value *v;
    for (size_t i = 0, k = 0; (v = next_value_info(g, &i, &k));) {
        gl_status st = encode_value_info(c, v, &gp->value_info[gp->n_value_info]);
        if (st != GL_OK)
            return st;
        gp->n_value_info++;
    }
    return GL_OK;
}

static gl_status encode_kept_graph_parts(save_ctx *c, const gl_graph *g,
                                         Onnx__GraphProto *gp)
{
    void **sparse, **annotations;
    gl_status st = unpack_kept_list(c, &onnx__sparse_tensor_proto__descriptor,
                                    g->sparse_inits, g->n_sparse_inits, "sparse initializer",
                                    &sparse);
    if (st == GL_OK)
        st = unpack_kept_list(c, &onnx__tensor_annotation__descriptor, g->quant_annotations,
                              g->n_quant_annotations, "quantization annotation",
                              &annotations);
    if (st != GL_OK)
        return st;
    gp->n_sparse_initializer = g->n_sparse_inits;
    gp->sparse_initializer = (Onnx__SparseTensorProto **)sparse;
    gp->n_quantization_annotation = g->n_quant_annotations;
    gp->quantization_annotation = (Onnx__TensorAnnotation **)annotations;
    return GL_OK;
}

/* Every field of g but its nodes and value_info (encoded before and after these, in that
 * order: a subgraph's external data goes to the file before the initializers'). */
static gl_status encode_graph_fields(save_ctx *c, const gl_graph *g, Onnx__GraphProto *gp)
{
    gp->name = borrow(g->name);
    gp->doc_string = borrow(g->doc_string);
    gl_status st =
        encode_value_infos_of(c, g->inputs, g->n_inputs, &gp->n_input, &gp->input);
    if (st == GL_OK)
        st = encode_initializers(c, g, gp);
    if (st == GL_OK)
        st = encode_value_infos_of(c, g->outputs, g->n_outputs, &gp->n_output, &gp->output);
    return st;
}

static gl_status encode_graph(save_ctx *c, const gl_graph *g, Onnx__GraphProto **out)
{
    Onnx__GraphProto *gp;
    NEW_MSG(c, gp, onnx__graph_proto__init);
    gl_status st = encode_nodes(c, g, &gp->n_node, &gp->node);
    if (st == GL_OK)
        st = encode_graph_fields(c, g, gp);
    if (st == GL_OK && c->value_info)
        st = encode_value_infos(c, g, gp);
    if (st == GL_OK)
        st = encode_kept_graph_parts(c, g, gp);
    if (st != GL_OK) {
        gl_error_prefix("graph '%s'", g->name ? g->name : "");
        return st;
    }
    *out = gp;
    return GL_OK;
}

/* ---- the top graph, packed as it is encoded ------------------------------------------ */

/* A large model's nodes and value_info, as protobuf-c trees of the whole graph, were most
 * of a save's memory (issue 23: a 64 MB arena for a 9.7 MB file of 100k nodes). Each is
 * instead encoded into a scratch arena, packed at once into its run as protobuf-c writes
 * an entry of a repeated message field (tag, length, message), and its tree dropped. A
 * message of PACK_KEEP_BYTES or more (a Constant's tensor, a subgraph) keeps its tree and
 * is packed when written, so that its raw_data still goes from the tensor to the file. */
#define PACK_KEEP_BYTES ((size_t)64 * 1024)
#define VARINT_MAX 10

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        out[n++] = (uint8_t)(v | 0x80);
    out[n++] = (uint8_t)v;
    return n;
}

/* Tag and length of a length-delimited field. */
static size_t entry_head(uint8_t *out, uint32_t field, size_t size)
{
    size_t n = put_varint(out, (uint64_t)field << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
    return n + put_varint(out + n, size);
}

static uint32_t field_number(const ProtobufCMessageDescriptor *d, const char *name)
{
    return protobuf_c_message_descriptor_get_field_by_name(d, name)->id;
}

/* Encoding one message of a run: its allocations go to the scratch arena, and what it
 * adds to the tensors and unpacked messages to release is counted from here. */
typedef struct scratch_mark {
    arena_block *outer;
    size_t n_tensors, n_unpacked;
} scratch_mark;

static scratch_mark scratch_begin(save_ctx *c)
{
    scratch_mark m = {c->arena, c->n_tensors, c->n_unpacked};
    c->arena = c->scratch;
    c->scratch = NULL;
    return m;
}

/* `keep`: the message's tree lives until the save ends (its blocks join the arena);
 * else it is dropped and the scratch arena emptied for the next. */
static void scratch_end(save_ctx *c, scratch_mark m, bool keep)
{
    arena_block *used = c->arena;
    c->arena = m.outer;
    if (keep) {
        if (!used)
            return;
        arena_block *last = used;
        while (last->next)
            last = last->next;
        /* Behind the arena's first block, which may still have room. */
        last->next = c->arena ? c->arena->next : NULL;
        if (c->arena)
            c->arena->next = used;
        else
            c->arena = used;
        return;
    }
    for (size_t i = m.n_tensors; i < c->n_tensors; i++)
        gl_tensor_proto_release(c->tensors[i]);
    c->n_tensors = m.n_tensors;
    for (size_t i = m.n_unpacked; i < c->n_unpacked; i++)
        protobuf_c_message_free_unpacked(c->unpacked[i], NULL);
    c->n_unpacked = m.n_unpacked;
    arena_reset(&used);
    c->scratch = used;
}

/* msg (in the scratch arena) into the run: packed now, or its tree kept (*keep). */
static void run_add(packed_run *r, const ProtobufCMessage *msg, bool *keep)
{
    size_t size = protobuf_c_message_get_packed_size(msg);
    uint8_t head[2 * VARINT_MAX];
    size_t hn = entry_head(head, r->field, size);
    r->size += hn + size;
    *keep = size >= PACK_KEEP_BYTES;
    if (*keep) {
        GL_GROW(r->kept, r->cap_kept, r->n_kept + 1);
        r->kept[r->n_kept++] = (kept_msg){r->len, msg, size};
        return;
    }
    GL_GROW(r->bytes, r->cap, r->len + hn + size);
    memcpy(r->bytes + r->len, head, hn);
    protobuf_c_message_pack(msg, r->bytes + r->len + hn);
    r->len += hn + size;
}

/* One message of a run from what `encode` makes of `item`. */
typedef gl_status (*msg_encoder)(save_ctx *c, const void *item, ProtobufCMessage **out);

static gl_status run_encode(save_ctx *c, packed_run *r, msg_encoder encode, const void *item)
{
    scratch_mark m = scratch_begin(c);
    ProtobufCMessage *msg = NULL;
    gl_status st = encode(c, item, &msg);
    bool keep = false;
    if (st == GL_OK)
        run_add(r, msg, &keep);
    scratch_end(c, m, keep);
    return st;
}

static gl_status node_message(save_ctx *c, const void *n, ProtobufCMessage **out)
{
    Onnx__NodeProto *np = NULL;
    gl_status st = encode_node(c, n, &np);
    *out = np ? &np->base : NULL;
    return st;
}

static gl_status value_info_message(save_ctx *c, const void *v, ProtobufCMessage **out)
{
    Onnx__ValueInfoProto *vi = NULL;
    gl_status st = encode_value_info(c, v, &vi);
    *out = vi ? &vi->base : NULL;
    return st;
}

static gl_status stream_nodes(save_ctx *c, const gl_graph *g, packed_run *r)
{
    gl_status st = GL_OK;
    for (size_t i = 0; st == GL_OK && i < g->n_nodes; i++)
        if (g->nodes[i]) /* else a hole left by gl_remove_node */
            st = run_encode(c, r, node_message, g->nodes[i]);
    return st;
}

static gl_status stream_value_infos(save_ctx *c, const gl_graph *g, packed_run *r)
{
    gl_status st = GL_OK;
    const gl_value *v;
    for (size_t i = 0, k = 0; st == GL_OK && (v = next_value_info(g, &i, &k));)
        st = run_encode(c, r, value_info_message, v);
    return st;
}

/* Clear msg's fields numbered lo..hi: it then packs as the others alone. Covers the
 * labels and types of ModelProto and GraphProto (proto2, no oneof). */
static void clear_fields(ProtobufCMessage *msg, uint32_t lo, uint32_t hi)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    char *base = (char *)msg;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->id < lo || f->id > hi)
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED)
            *(size_t *)(base + f->quantifier_offset) = 0;
        else if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE)
            *(void **)(base + f->offset) = NULL;
        else
            *(protobuf_c_boolean *)(base + f->quantifier_offset) = 0;
    }
}

/* The top graph into p: its nodes and value_info as packed runs, its other fields as
 * trees on either side of value_info. */
static gl_status stream_graph(save_ctx *c, const gl_graph *g, model_parts *p)
{
    const ProtobufCMessageDescriptor *d = &onnx__graph_proto__descriptor;
    p->nodes.field = field_number(d, "node");
    p->value_info.field = field_number(d, "value_info");
    Onnx__GraphProto gp;
    onnx__graph_proto__init(&gp);
    gl_status st = stream_nodes(c, g, &p->nodes);
    if (st == GL_OK)
        st = encode_graph_fields(c, g, &gp);
    if (st == GL_OK && c->value_info)
        st = stream_value_infos(c, g, &p->value_info);
    if (st == GL_OK)
        st = encode_kept_graph_parts(c, g, &gp);
    if (st != GL_OK) {
        gl_error_prefix("graph '%s'", g->name ? g->name : "");
        return st;
    }
    p->mid = p->end = gp;
    clear_fields(&p->mid.base, p->value_info.field, UINT32_MAX);
    clear_fields(&p->end.base, 0, p->value_info.field);
    p->graph_size = p->nodes.size + protobuf_c_message_get_packed_size(&p->mid.base) +
                    p->value_info.size + protobuf_c_message_get_packed_size(&p->end.base);
    return GL_OK;
}

static void emit_bytes(ProtobufCBuffer *out, const uint8_t *data, size_t len)
{
    if (len)
        out->append(out, len, data);
}

static void emit_run(const packed_run *r, ProtobufCBuffer *out)
{
    size_t at = 0;
    for (size_t i = 0; i < r->n_kept; i++) {
        const kept_msg *k = &r->kept[i];
        uint8_t head[2 * VARINT_MAX];
        emit_bytes(out, r->bytes + at, k->at - at);
        emit_bytes(out, head, entry_head(head, r->field, k->size));
        protobuf_c_message_pack_to_buffer(k->msg, out);
        at = k->at;
    }
    emit_bytes(out, r->bytes + at, r->len - at);
}

/* The bytes protobuf-c packs for the whole tree: fields in number order. */
static void emit_model(const model_parts *p, ProtobufCBuffer *out)
{
    uint8_t head[2 * VARINT_MAX];
    uint32_t graph = field_number(&onnx__model_proto__descriptor, "graph");
    protobuf_c_message_pack_to_buffer(&p->head.base, out);
    emit_bytes(out, head, entry_head(head, graph, p->graph_size));
    emit_run(&p->nodes, out);
    protobuf_c_message_pack_to_buffer(&p->mid.base, out);
    emit_run(&p->value_info, out);
    protobuf_c_message_pack_to_buffer(&p->end.base, out);
    protobuf_c_message_pack_to_buffer(&p->tail.base, out);
}

static void free_run(packed_run *r)
{
    free(r->bytes);
    free(r->kept);
}

/* ---- model ------------------------------------------------------------------------- */

static Onnx__OperatorSetIdProto **encode_opsets(save_ctx *c, const gl_opset *ops, size_t n)
{
    Onnx__OperatorSetIdProto **out = new_array(c, n, sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        NEW_MSG(c, out[i], onnx__operator_set_id_proto__init);
        out[i]->domain = ops[i].domain;
        out[i]->has_version = true;
        out[i]->version = ops[i].version;
    }
    return n ? out : NULL;
}

static gl_status encode_function(save_ctx *c, const gl_function *f, Onnx__FunctionProto **out)
{
    Onnx__FunctionProto *fp;
    NEW_MSG(c, fp, onnx__function_proto__init);
    fp->name = borrow(f->name);
    fp->domain = borrow(f->domain);
    fp->doc_string = borrow(f->doc_string);
    fp->n_attribute = f->n_attributes;
    fp->attribute = f->n_attributes ? f->attributes : NULL;
    fp->n_opset_import = f->n_opsets;
    fp->opset_import = encode_opsets(c, f->opsets, f->n_opsets);
    *out = fp;
    const gl_graph *body = f->body;
    if (!body)
        return GL_OK;
    fp->n_input = body->n_inputs;
    fp->input = value_names(c, body->inputs, body->n_inputs);
    fp->n_output = body->n_outputs;
    fp->output = value_names(c, body->outputs, body->n_outputs);
    gl_status st = encode_nodes(c, body, &fp->n_node, &fp->node);
    if (st != GL_OK)
        gl_error_prefix("function '%s'", f->name ? f->name : "");
    return st;
}

/* The model into c->parts, its size there too. */
static gl_status encode_model(save_ctx *c, const gl_model *m)
{
    Onnx__ModelProto model, *mp = &model;
    onnx__model_proto__init(mp);
    if (!m->graph)
        return gl_fail(GL_ERR_INTERNAL, "the model has no graph");
    mp->has_ir_version = true;
    /* ModelProto.functions came with IR 8: older readers would drop the functions that
     * a pass added, and the nodes calling them would not run. */
    mp->ir_version = m->n_functions && m->ir_version < 8 ? 8 : m->ir_version;
    mp->n_opset_import = m->n_opsets;
    mp->opset_import = encode_opsets(c, m->opsets, m->n_opsets);
    mp->producer_name = borrow(m->producer_name);
    mp->producer_version = borrow(m->producer_version);
    mp->domain = borrow(m->domain);
    mp->has_model_version = m->has_model_version;
    mp->model_version = m->model_version;
    mp->doc_string = borrow(m->doc_string);
    mp->metadata_props = new_array(c, m->n_metadata, sizeof(*mp->metadata_props));
    for (size_t i = 0; i < m->n_metadata; i++)
        mp->metadata_props[i] = new_entry(c, m->metadata[i].key, m->metadata[i].value);
    mp->n_metadata_props = m->n_metadata;
    gl_status st = stream_graph(c, m->graph, &c->parts);
    mp->functions = new_array(c, m->n_functions, sizeof(*mp->functions));
    for (size_t i = 0; st == GL_OK && i < m->n_functions; i++) {
        st = encode_function(c, &m->functions[i], &mp->functions[i]);
        mp->n_functions = st == GL_OK ? i + 1 : i;
    }
    void **training = NULL;
    if (st == GL_OK)
        st = unpack_kept_list(c, &onnx__training_info_proto__descriptor, m->training_info,
                              m->n_training_info, "training_info", &training);
    if (st == GL_OK) {
        mp->n_training_info = m->n_training_info;
        mp->training_info = (Onnx__TrainingInfoProto **)training;
    }
    if (st != GL_OK)
        return st;
    model_parts *p = &c->parts;
    uint32_t graph = field_number(&onnx__model_proto__descriptor, "graph");
    uint8_t head[2 * VARINT_MAX];
    p->head = p->tail = model;
    clear_fields(&p->head.base, graph, UINT32_MAX);
    clear_fields(&p->tail.base, 0, graph);
    p->size = protobuf_c_message_get_packed_size(&p->head.base) +
              entry_head(head, graph, p->graph_size) + p->graph_size +
              protobuf_c_message_get_packed_size(&p->tail.base);
    return GL_OK;
}

/* ---- context lifetime --------------------------------------------------------------- */

static void ctx_init(save_ctx *c, const gl_model *m, const char *where,
                     const gl_save_options *opts)
{
    memset(c, 0, sizeof(*c));
    c->model = m;
    c->where = where;
    c->ext_threshold = opts ? opts->external_threshold : 0;
    c->value_info = !(opts && opts->no_value_info);
    c->ext.file.fd = -1;
    c->shared = opts ? opts->shared_weights : NULL;
    c->keep_unchanged = opts && opts->keep_unchanged;
    c->report = opts && opts->report ? opts->report : &c->own_report;
    *c->report = (gl_save_report){0};
}

static void ctx_free(save_ctx *c)
{
    for (size_t i = 0; i < c->n_tensors; i++)
        gl_tensor_proto_release(c->tensors[i]);
    free(c->tensors);
    for (size_t i = 0; i < c->n_unpacked; i++)
        protobuf_c_message_free_unpacked(c->unpacked[i], NULL);
    free(c->unpacked);
    if (c->ext.open)
        gl_atomic_abort(&c->ext.file); /* a no-op once committed */
    free(c->ext.path);
    for (size_t i = 0; i < c->n_kept; i++)
        free(c->kept[i].location);
    free(c->kept);
    free_run(&c->parts.nodes);
    free_run(&c->parts.value_info);
    arena_free(c->arena);
    arena_free(c->scratch);
}

static gl_status check_packed_size(const save_ctx *c, size_t size)
{
    if (size > GL_PROTO_MAX)
        return gl_fail(GL_ERR_UNSUPPORTED,
                       "%s: the model would be %zu bytes, over protobuf's 2 GiB limit; "
                       "save its weights as external data",
                       c->where, size);
    return GL_OK;
}

/* A ProtobufCBuffer over `cap` bytes: what would go past them is counted, not written. */
typedef struct mem_sink {
    ProtobufCBuffer base; /* first: the packer calls base.append */
    uint8_t *buf;
    size_t used, cap;
} mem_sink;

static void mem_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    mem_sink *s = (mem_sink *)b;
    if (s->used <= s->cap && len <= s->cap - s->used)
        memcpy(s->buf + s->used, data, len);
    s->used += len;
}

gl_status gl_model_serialize(const gl_model *m, uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    save_ctx c;
    ctx_init(&c, m, m->path ? m->path : "<memory>", NULL);
    gl_status st = encode_model(&c, m);
    if (st != GL_OK)
        gl_error_prefix("%s", c.where);
    size_t size = st == GL_OK ? c.parts.size : 0;
    if (st == GL_OK)
        st = check_packed_size(&c, size);
    uint8_t *buf = NULL;
    if (st == GL_OK && !(buf = malloc(size ? size : 1)))
        st = gl_fail(GL_ERR_NOMEM, "%s: cannot allocate %zu bytes for the model", c.where,
                     size);
    if (st == GL_OK) {
        mem_sink s = {.base = {.append = mem_append}, .buf = buf, .cap = size};
        emit_model(&c.parts, &s.base);
        if (s.used != size)
            st = gl_fail(GL_ERR_INTERNAL, "%s: %zu bytes packed, %zu announced", c.where,
                         s.used, size);
    }
    ctx_free(&c);
    if (st != GL_OK) {
        free(buf);
        return st;
    }
    *data = buf;
    *len = size;
    return GL_OK;
}

/* ---- streaming the packed model into a file --------------------------------------- */

#define SINK_BYTES ((size_t)256 * 1024)

/* A ProtobufCBuffer that writes through to the temporary file: the packer hands it small
 * pieces (tags, lengths), gathered here, and whole raw_data arrays, written directly. */
typedef struct file_sink {
    ProtobufCBuffer base; /* first: the packer calls base.append */
    gl_atomic_file *file;
    gl_status status;
    size_t used;
    uint8_t *buf;
} file_sink;

static void sink_flush(file_sink *s)
{
    if (s->status == GL_OK && s->used)
        s->status = gl_atomic_write(s->file, s->buf, s->used);
    s->used = 0;
}

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    file_sink *s = (file_sink *)b;
    if (s->status != GL_OK)
        return;
    if (len > SINK_BYTES - s->used) {
        sink_flush(s);
        if (len >= SINK_BYTES) {
            if (s->status == GL_OK)
                s->status = gl_atomic_write(s->file, data, len);
            return;
        }
    }
    memcpy(s->buf + s->used, data, len);
    s->used += len;
}

static gl_status write_model_file(const model_parts *p, gl_atomic_file *file)
{
    file_sink s = {.base = {.append = sink_append}, .file = file, .status = GL_OK};
    s.buf = gl_xmalloc(SINK_BYTES);
    emit_model(p, &s.base);
    sink_flush(&s);
    free(s.buf);
    return s.status;
}

/* "<OUT>.data" belongs to OUT: when the new OUT keeps its weights in place and has
 * nothing there, an older one's (up to the whole weights, written before they were kept
 * in place) would stay behind unused. Only a regular file that is no input goes. */
static void remove_stale_data_file(const char *data_path)
{
    struct stat st;
    if (lstat(data_path, &st) == 0 && S_ISREG(st.st_mode) &&
        !gl_is_protected_input(data_path))
        unlink(data_path);
}

gl_status gl_model_save(const gl_model *m, const char *path, const gl_save_options *opts)
{
    if (!path || !*path)
        return gl_fail(GL_ERR_INPUT, "no output file name given");
    save_ctx c;
    ctx_init(&c, m, path, opts);
    size_t plen = strlen(path);
    c.ext.path = gl_xmalloc(plen + sizeof(".data"));
    memcpy(c.ext.path, path, plen);
    memcpy(c.ext.path + plen, ".data", sizeof(".data"));
    c.ext.location = base_name(c.ext.path);

    gl_atomic_file file = {.fd = -1};
    gl_status st = encode_model(&c, m);
    if (st != GL_OK && st != GL_ERR_IO)
        gl_error_prefix("%s", path); /* IO messages already name their file */
    if (st == GL_OK)
        st = check_packed_size(&c, c.parts.size);
    if (st == GL_OK)
        st = gl_atomic_open(&file, path);
    if (st == GL_OK)
        st = write_model_file(&c.parts, &file);
    /* The data file first: the new model must never be visible without its weights.
     * Two renames are not one atomic step: should the model's rename fail after the data
     * file's succeeded, an older "<OUT>" is left beside the new "<OUT>.data". */
    if (st == GL_OK && c.ext.open)
        st = gl_atomic_commit(&c.ext.file);
    if (st == GL_OK)
        st = gl_atomic_commit(&file);
    else
        gl_atomic_abort(&file);
    if (st == GL_OK && !c.ext.open && c.report->kept)
        remove_stale_data_file(c.ext.path);
    ctx_free(&c);
    return st;
}

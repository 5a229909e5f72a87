/* test_load.c — the ONNX loader: ModelProtos built in C with protobuf-c, packed, loaded.
 *
 * Every proto below is built from malloc'd parts, so onnx__*__free_unpacked() frees it
 * (protobuf-c's default allocator is malloc). Expected values are written by hand
 * (little-endian bytes, float16 bit patterns), never taken from the loader's output.
 */
#include "onnx/onnx_io.h"
#include "testutil.h"

#include "onnx.pb-c.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ==== building protos ================================================================ */

#define APPEND(arr, n, item)                                                              \
    do {                                                                                  \
        (arr) = realloc((arr), ((n) + 1) * sizeof(*(arr)));                               \
        (arr)[(n)++] = (item);                                                            \
    } while (0)

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* Split "a,,b" into {"a", "", "b"}; NULL or "" gives nothing. */
static void split_names(const char *list, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!list || !*list)
        return;
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        APPEND(*out, *n, strndup(p, len));
        if (!p[len])
            break;
        p += len + 1;
    }
}

/* "2,3" -> {2, 3}; "" -> rank 0. */
static void parse_dims(const char *spec, int64_t **dims, size_t *n)
{
    *dims = NULL;
    *n = 0;
    char **parts;
    size_t np;
    split_names(spec, &parts, &np);
    for (size_t i = 0; i < np; i++) {
        APPEND(*dims, *n, strtoll(parts[i], NULL, 10));
        free(parts[i]);
    }
    free(parts);
}

/* A tensor type: shape spec "N,3,?,-2" (number: dim_value, "?": neither, other: symbol);
 * NULL: no shape at all. */
static Onnx__TypeProto *tensor_type(int elem, const char *shape)
{
    Onnx__TypeProto *tp = malloc(sizeof(*tp));
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = malloc(sizeof(*tt));
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    if (!shape)
        return tp;
    tt->shape = malloc(sizeof(*tt->shape));
    onnx__tensor_shape_proto__init(tt->shape);
    char **parts;
    size_t np;
    split_names(shape, &parts, &np);
    for (size_t i = 0; i < np; i++) {
        Onnx__TensorShapeProto__Dimension *d = malloc(sizeof(*d));
        onnx__tensor_shape_proto__dimension__init(d);
        char *end;
        long long v = strtoll(parts[i], &end, 10);
        if (*parts[i] && !*end) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = v;
        } else if (strcmp(parts[i], "?") != 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = strdup(parts[i]);
        }
        APPEND(tt->shape->dim, tt->shape->n_dim, d);
        free(parts[i]);
    }
    free(parts);
    return tp;
}

static Onnx__ValueInfoProto *vinfo(const char *name, Onnx__TypeProto *type)
{
    Onnx__ValueInfoProto *vi = malloc(sizeof(*vi));
    onnx__value_info_proto__init(vi);
    vi->name = strdup(name);
    vi->type = type;
    return vi;
}

static Onnx__GraphProto *graph_new(const char *name)
{
    Onnx__GraphProto *g = malloc(sizeof(*g));
    onnx__graph_proto__init(g);
    g->name = dup_or_null(name);
    return g;
}

static void add_input(Onnx__GraphProto *g, const char *name, int elem, const char *shape)
{
    APPEND(g->input, g->n_input, vinfo(name, tensor_type(elem, shape)));
}

static void add_output(Onnx__GraphProto *g, const char *name, int elem, const char *shape)
{
    APPEND(g->output, g->n_output, vinfo(name, elem ? tensor_type(elem, shape) : NULL));
}

static void add_value_info(Onnx__GraphProto *g, const char *name, Onnx__TypeProto *type)
{
    APPEND(g->value_info, g->n_value_info, vinfo(name, type));
}

static Onnx__NodeProto *add_node(Onnx__GraphProto *g, const char *op, const char *name,
                                 const char *ins, const char *outs)
{
    Onnx__NodeProto *n = malloc(sizeof(*n));
    onnx__node_proto__init(n);
    n->op_type = strdup(op);
    n->name = dup_or_null(name);
    split_names(ins, &n->input, &n->n_input);
    split_names(outs, &n->output, &n->n_output);
    APPEND(g->node, g->n_node, n);
    return n;
}

static Onnx__TensorProto *tensor_new(const char *name, int dtype, const char *dims)
{
    Onnx__TensorProto *t = malloc(sizeof(*t));
    onnx__tensor_proto__init(t);
    t->name = dup_or_null(name);
    t->has_data_type = 1;
    t->data_type = dtype;
    parse_dims(dims, &t->dims, &t->n_dims);
    return t;
}

static Onnx__TensorProto *tensor_raw(const char *name, int dtype, const char *dims,
                                     const void *raw, size_t len)
{
    Onnx__TensorProto *t = tensor_new(name, dtype, dims);
    t->has_raw_data = 1;
    t->raw_data.len = len;
    t->raw_data.data = len ? malloc(len) : NULL;
    if (len)
        memcpy(t->raw_data.data, raw, len);
    return t;
}

static Onnx__TensorProto *tensor_f32(const char *name, const char *dims, const float *v,
                                     size_t n)
{
    Onnx__TensorProto *t = tensor_new(name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims);
    t->n_float_data = n;
    t->float_data = malloc(n * sizeof(float) + 1);
    memcpy(t->float_data, v, n * sizeof(float));
    return t;
}

static void add_init(Onnx__GraphProto *g, Onnx__TensorProto *t)
{
    APPEND(g->initializer, g->n_initializer, t);
}

static Onnx__AttributeProto *attr_new(Onnx__NodeProto *n, const char *name, int type)
{
    Onnx__AttributeProto *a = malloc(sizeof(*a));
    onnx__attribute_proto__init(a);
    a->name = strdup(name);
    if (type) {
        a->has_type = 1;
        a->type = type;
    }
    APPEND(n->attribute, n->n_attribute, a);
    return a;
}

static Onnx__AttributeProto *attr_graph(Onnx__NodeProto *n, const char *name,
                                        Onnx__GraphProto *g)
{
    Onnx__AttributeProto *a = attr_new(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    a->g = g;
    return a;
}

/* An If branch of one node whose output (float[2]) is the branch's. */
static Onnx__GraphProto *one_node_branch(const char *name, const char *op, const char *node,
                                         const char *ins, const char *out)
{
    Onnx__GraphProto *g = graph_new(name);
    add_node(g, op, node, ins, out);
    add_output(g, out, 1, "2");
    return g;
}

static Onnx__ModelProto *model_new(int64_t ir, int64_t opset)
{
    Onnx__ModelProto *m = malloc(sizeof(*m));
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = ir;
    Onnx__OperatorSetIdProto *op = malloc(sizeof(*op));
    onnx__operator_set_id_proto__init(op);
    op->domain = strdup("");
    op->has_version = 1;
    op->version = opset;
    APPEND(m->opset_import, m->n_opset_import, op);
    m->graph = graph_new("main");
    return m;
}

static uint8_t *pack_model(const Onnx__ModelProto *m, size_t *len)
{
    *len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(*len + 1);
    onnx__model_proto__pack(m, buf);
    return buf;
}

/* Pack, free the proto, load from memory as "t.onnx". */
static gl_status load_proto(Onnx__ModelProto *mp, const gl_load_options *opts, gl_model **out)
{
    size_t len;
    uint8_t *buf = pack_model(mp, &len);
    onnx__model_proto__free_unpacked(mp, NULL);
    gl_status st = gl_model_load_buffer(buf, len, "t.onnx", NULL, opts, out);
    free(buf);
    return st;
}

static gl_model *load_ok(Onnx__ModelProto *mp, const gl_load_options *opts)
{
    gl_model *m = NULL;
    gl_status st = load_proto(mp, opts, &m);
    cr_assert_eq(st, GL_OK, "load failed: %s", gl_error_message());
    cr_assert_not_null(m);
    return m;
}

/* The load must fail with GL_ERR_INPUT and a message containing each of `parts`. */
static void expect_input_error(Onnx__ModelProto *mp, const char *const *parts, size_t n)
{
    gl_model *m = NULL;
    gl_status st = load_proto(mp, NULL, &m);
    cr_assert_eq(st, GL_ERR_INPUT, "status %d (%s), message: %s", st, gl_status_name(st),
                 gl_error_message());
    cr_assert_null(m);
    const char *msg = gl_error_message();
    cr_expect(strncmp(msg, "t.onnx: ", 8) == 0, "message does not start with the file: %s",
              msg);
    for (size_t i = 0; i < n; i++)
        cr_expect(strstr(msg, parts[i]) != NULL, "message lacks \"%s\": %s", parts[i], msg);
}
#define EXPECT_INPUT_ERROR(mp, ...)                                                        \
    do {                                                                                   \
        const char *parts_[] = {__VA_ARGS__};                                              \
        expect_input_error((mp), parts_, sizeof(parts_) / sizeof(parts_[0]));              \
    } while (0)

/* x[2,3] -> Relu -> y: the smallest valid model. */
static Onnx__ModelProto *tiny_model(void)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "2,3");
    add_node(mp->graph, "Relu", "r", "x", "y");
    add_output(mp->graph, "y", 1, "2,3");
    return mp;
}

static gl_node *node_named(const gl_graph *g, const char *name)
{
    gl_node *n = gl_find_node(g, name);
    cr_assert_not_null(n, "no node '%s'", name);
    return n;
}

static gl_value *value_named(const gl_graph *g, const char *name)
{
    gl_value *v = gl_find_value(g, name);
    cr_assert_not_null(v, "no value '%s'", name);
    return v;
}

/* ==== tensors: every dtype x encoding ===================================================== */

typedef enum { TF_FLOAT, TF_INT32, TF_INT64, TF_DOUBLE, TF_UINT64 } test_field;

typedef struct dtype_case {
    const char *label;
    int dtype;
    int64_t count;
    uint8_t raw[32]; /* the elements as little-endian bytes, written by hand */
    size_t raw_len;
    test_field field; /* the typed field the spec assigns to this dtype */
    union {
        float f[4];
        int32_t i32[4];
        int64_t i64[4];
        double d[4];
        uint64_t u64[4];
    } typed;
    size_t n_typed;
    bool typed_taken; /* the typed field is our memory format: taken over, not copied */
    double expect[3]; /* element values (real part for complex) */
} dtype_case;

static const dtype_case dtype_cases[] = {
    {"float", 1, 3, {0, 0, 0x80, 0x3F, 0, 0, 0x20, 0xC0, 0, 0, 0, 0}, 12, TF_FLOAT,
     .typed.f = {1.0f, -2.5f, 0.0f}, 3, true, {1, -2.5, 0}},
    {"uint8", 2, 3, {0x00, 0xC8, 0xFF}, 3, TF_INT32, .typed.i32 = {0, 200, 255}, 3, false,
     {0, 200, 255}},
    {"int8", 3, 3, {0x80, 0xFF, 0x7F}, 3, TF_INT32, .typed.i32 = {-128, -1, 127}, 3, false,
     {-128, -1, 127}},
    {"uint16", 4, 3, {0x01, 0x00, 0x34, 0x12, 0xFF, 0xFF}, 6, TF_INT32,
     .typed.i32 = {1, 0x1234, 65535}, 3, false, {1, 4660, 65535}},
    {"int16", 5, 3, {0xFE, 0xFF, 0x2C, 0x01, 0x00, 0x80}, 6, TF_INT32,
     .typed.i32 = {-2, 300, -32768}, 3, false, {-2, 300, -32768}},
    {"int32", 6, 3, {0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x01, 0x00, 0xFF, 0xFF, 0xFF, 0x7F},
     12, TF_INT32, .typed.i32 = {-1, 65536, 2147483647}, 3, true, {-1, 65536, 2147483647}},
    {"int64", 7, 3,
     {0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0,
      0, 0, 0, 0x80},
     24, TF_INT64, .typed.i64 = {-3, 1099511627776LL, INT64_MIN}, 3, true,
     {-3, 1099511627776.0, -9223372036854775808.0}},
    /* any non-zero int32 is true, stored as 1 */
    {"bool", 9, 3, {1, 0, 1}, 3, TF_INT32, .typed.i32 = {1, 0, 7}, 3, false, {1, 0, 1}},
    {"float16", 10, 3, {0x00, 0x3C, 0x00, 0xC0, 0xFF, 0x7B}, 6, TF_INT32,
     .typed.i32 = {0x3C00, 0xC000, 0x7BFF}, 3, false, {1, -2, 65504}},
    /* some writers sign-extend the 16-bit pattern */
    {"float16 sign-extended", 10, 3, {0x00, 0x3C, 0x00, 0xC0, 0xFF, 0x7B}, 6, TF_INT32,
     .typed.i32 = {0x3C00, -16384, 0x7BFF}, 3, false, {1, -2, 65504}},
    {"double", 11, 3,
     {0, 0, 0, 0, 0, 0, 0xE0, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0xC0, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F},
     24, TF_DOUBLE, .typed.d = {0.5, -2.0, 1.0}, 3, true, {0.5, -2, 1}},
    {"uint32", 12, 3, {0, 0, 0, 0, 0x00, 0x28, 0x6B, 0xEE, 7, 0, 0, 0}, 12, TF_UINT64,
     .typed.u64 = {0, 4000000000u, 7}, 3, false, {0, 4e9, 7}},
    {"uint64", 13, 3,
     {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 42, 0, 0, 0, 0, 0, 0, 0}, 24,
     TF_UINT64, .typed.u64 = {1, 1ull << 63, 42}, 3, true, {1, 9223372036854775808.0, 42}},
    {"complex64", 14, 2, {0, 0, 0x80, 0x3F, 0, 0, 0, 0x40, 0, 0, 0x40, 0xC0, 0, 0, 0, 0x3F},
     16, TF_FLOAT, .typed.f = {1.0f, 2.0f, -3.0f, 0.5f}, 4, true, {1, -3}},
    {"complex128", 15, 2,
     {0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0xC0, 0,
      0, 0, 0, 0, 0, 0xE0, 0x3F},
     32, TF_DOUBLE, .typed.d = {1.0, 2.0, -2.0, 0.5}, 4, true, {1, -2}},
    {"bfloat16", 16, 3, {0x80, 0x3F, 0x00, 0xC0, 0x00, 0x3F}, 6, TF_INT32,
     .typed.i32 = {0x3F80, 0xC000, 0x3F00}, 3, false, {1, -2, 0.5}},
};

static void *typed_array(Onnx__TensorProto *t, test_field f, size_t **n, size_t *elem)
{
    switch (f) {
    case TF_FLOAT: *n = &t->n_float_data; *elem = 4; return &t->float_data;
    case TF_INT32: *n = &t->n_int32_data; *elem = 4; return &t->int32_data;
    case TF_INT64: *n = &t->n_int64_data; *elem = 8; return &t->int64_data;
    case TF_DOUBLE: *n = &t->n_double_data; *elem = 8; return &t->double_data;
    case TF_UINT64: *n = &t->n_uint64_data; *elem = 8; return &t->uint64_data;
    }
    return NULL;
}

static Onnx__TensorProto *case_tensor(const dtype_case *c, bool raw)
{
    char dims[32];
    snprintf(dims, sizeof(dims), "%lld", (long long)c->count);
    if (raw)
        return tensor_raw("w", c->dtype, dims, c->raw, c->raw_len);
    Onnx__TensorProto *t = tensor_new("w", c->dtype, dims);
    size_t *n = NULL, elem = 0;
    void **arr = typed_array(t, c->field, &n, &elem);
    *arr = malloc(c->n_typed * elem);
    memcpy(*arr, &c->typed, c->n_typed * elem);
    *n = c->n_typed;
    return t;
}

static void check_case_tensor(const dtype_case *c, const char *how, const gl_tensor *t)
{
    cr_assert_eq(t->dtype, c->dtype, "%s (%s): dtype", c->label, how);
    cr_assert_eq(t->rank, 1, "%s (%s): rank", c->label, how);
    cr_assert_eq(t->count, c->count, "%s (%s): count", c->label, how);
    cr_assert_eq(gl_tensor_nbytes(t), c->raw_len, "%s (%s): bytes", c->label, how);
    cr_expect(memcmp(gl_tensor_data(t), c->raw, c->raw_len) == 0, "%s (%s): bytes differ",
              c->label, how);
    for (int64_t i = 0; i < c->count; i++)
        cr_expect(gl_tensor_get_f64(t, i) == c->expect[i], "%s (%s): element %lld is %g, not %g",
                  c->label, how, (long long)i, gl_tensor_get_f64(t, i), c->expect[i]);
    cr_expect_str_eq(t->name, "w");
    cr_expect(!t->external);
}

Test(tensor_decode, every_dtype_and_encoding)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(dtype_cases); i++) {
        const dtype_case *c = &dtype_cases[i];
        for (int raw = 0; raw <= 1; raw++) {
            for (int take = 0; take <= 1; take++) {
                char how[64];
                snprintf(how, sizeof(how), "%s, %s", raw ? "raw_data" : "typed field",
                         take ? "take" : "copy");
                Onnx__TensorProto *tp = case_tensor(c, raw);
                gl_tensor *t = NULL;
                gl_status st = gl_tensor_from_proto(tp, "t.onnx: initializer 'w'", NULL, take,
                                                    false, &t);
                cr_assert_eq(st, GL_OK, "%s (%s): %s", c->label, how, gl_error_message());
                check_case_tensor(c, how, t);
                size_t *n = NULL, elem = 0;
                void **arr = typed_array(tp, c->field, &n, &elem);
                bool taken = raw ? tp->raw_data.data == NULL : *arr == NULL;
                bool want_taken = take && (raw || c->typed_taken);
                cr_expect_eq(taken, want_taken, "%s (%s): proto buffer %s", c->label, how,
                             taken ? "taken" : "kept");
                gl_tensor_free(t);
                onnx__tensor_proto__free_unpacked(tp, NULL);
            }
        }
    }
}

Test(tensor_decode, every_dtype_as_initializer)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(dtype_cases); i++) {
        const dtype_case *c = &dtype_cases[i];
        for (int raw = 0; raw <= 1; raw++) {
            Onnx__ModelProto *mp = model_new(8, 13);
            add_init(mp->graph, case_tensor(c, raw));
            add_node(mp->graph, "Identity", "id", "w", "y");
            add_output(mp->graph, "y", 0, NULL);
            gl_model *m = load_ok(mp, NULL);
            gl_value *w = value_named(m->graph, "w");
            cr_assert_not_null(w->init);
            check_case_tensor(c, raw ? "initializer raw" : "initializer typed", w->init);
            cr_expect(gl_value_is_constant(w));
            cr_expect_eq(w->type.kind, GL_TYPE_TENSOR);
            cr_expect_eq(w->type.dtype, c->dtype);
            cr_expect_eq(w->type.shape.rank, 1);
            cr_expect_eq(w->type.shape.dims[0].value, c->count);
            gl_model_free(m);
        }
    }
}

Test(tensor_decode, strings)
{
    Onnx__TensorProto *tp = tensor_new("s", ONNX__TENSOR_PROTO__DATA_TYPE__STRING, "3");
    const char *vals[] = {"ab", "", "xyz"};
    for (size_t i = 0; i < 3; i++) {
        ProtobufCBinaryData b = {strlen(vals[i]), strlen(vals[i]) ? (uint8_t *)strdup(vals[i]) : NULL};
        APPEND(tp->string_data, tp->n_string_data, b);
    }
    for (int take = 0; take <= 1; take++) {
        gl_tensor *t = NULL;
        cr_assert_eq(gl_tensor_from_proto(tp, "t.onnx: initializer 's'", NULL, take, false, &t),
                     GL_OK, "%s", gl_error_message());
        cr_assert_eq(t->dtype, GL_DT_STRING);
        cr_assert_eq(t->count, 3);
        const gl_bytes *items = gl_tensor_data(t);
        for (size_t i = 0; i < 3; i++) {
            cr_expect_eq(items[i].len, strlen(vals[i]));
            cr_expect(items[i].data != NULL);
            cr_expect(memcmp(items[i].data, vals[i], items[i].len) == 0);
        }
        gl_tensor_free(t);
    }
    onnx__tensor_proto__free_unpacked(tp, NULL);
}

Test(tensor_decode, empty_and_scalar)
{
    /* [2, 0]: no elements, no data needed */
    Onnx__TensorProto *tp = tensor_new("e", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, "2,0");
    gl_tensor *t = NULL;
    cr_assert_eq(gl_tensor_from_proto(tp, "ctx", NULL, true, false, &t), GL_OK, "%s",
                 gl_error_message());
    cr_expect_eq(t->count, 0);
    cr_expect_eq(t->rank, 2);
    gl_tensor_free(t);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    /* rank 0 holds one element */
    float one = 4.5f;
    tp = tensor_f32("s", "", &one, 1);
    cr_assert_eq(gl_tensor_from_proto(tp, "ctx", NULL, true, false, &t), GL_OK);
    cr_expect_eq(t->rank, 0);
    cr_expect_eq(t->count, 1);
    cr_expect_eq(gl_tensor_get_f64(t, 0), 4.5);
    gl_tensor_free(t);
    onnx__tensor_proto__free_unpacked(tp, NULL);
}

typedef struct bad_tensor_case {
    const char *label;
    Onnx__TensorProto *(*make)(void);
    const char *needle;
} bad_tensor_case;

static Onnx__TensorProto *bad_raw_string(void)
{
    return tensor_raw("w", ONNX__TENSOR_PROTO__DATA_TYPE__STRING, "1", "ab", 2);
}
static Onnx__TensorProto *bad_typed_count(void)
{
    float v[2] = {1, 2};
    return tensor_f32("w", "3", v, 2);
}
static Onnx__TensorProto *bad_narrowing(void)
{
    Onnx__TensorProto *t = tensor_new("w", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, "1");
    t->int32_data = malloc(sizeof(int32_t));
    t->int32_data[0] = 300;
    t->n_int32_data = 1;
    return t;
}
static Onnx__TensorProto *bad_no_dtype(void)
{
    Onnx__TensorProto *t = tensor_raw("w", 0, "1", "abcd", 4);
    t->has_data_type = 0;
    return t;
}
static Onnx__TensorProto *bad_segment(void)
{
    float v = 1;
    Onnx__TensorProto *t = tensor_f32("w", "1", &v, 1);
    t->segment = malloc(sizeof(*t->segment));
    onnx__tensor_proto__segment__init(t->segment);
    return t;
}
static Onnx__TensorProto *bad_external_without_dir(void)
{
    Onnx__TensorProto *t = tensor_new("w", 1, "1");
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    return t;
}

Test(tensor_decode, bad_tensors)
{
    static const bad_tensor_case cases[] = {
        {"raw string", bad_raw_string, "STRING tensors cannot use raw_data"},
        {"typed count", bad_typed_count, "float_data holds 2 values, but 3 FLOAT elements"},
        {"narrowing", bad_narrowing, "int32_data[0] = 300 does not fit UINT8"},
        {"no dtype", bad_no_dtype, "invalid tensor data type 0"},
        {"segment", bad_segment, "segmented tensors are not supported"},
        {"external, no dir", bad_external_without_dir, "external data is not allowed here"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        Onnx__TensorProto *tp = cases[i].make();
        gl_tensor *t = (gl_tensor *)1;
        gl_status st = gl_tensor_from_proto(tp, "t.onnx: initializer 'w'", NULL, true, false, &t);
        cr_expect_neq(st, GL_OK, "%s: accepted", cases[i].label);
        cr_expect_null(t, "%s: *out not cleared", cases[i].label);
        cr_expect(strstr(gl_error_message(), "t.onnx: initializer 'w'") != NULL, "%s: %s",
                  cases[i].label, gl_error_message());
        cr_expect(strstr(gl_error_message(), cases[i].needle) != NULL, "%s: %s", cases[i].label,
                  gl_error_message());
        onnx__tensor_proto__free_unpacked(tp, NULL);
    }
}

/* ==== model fields ======================================================================== */

Test(load, model_fields)
{
    Onnx__ModelProto *mp = tiny_model();
    mp->producer_name = strdup("pytorch");
    mp->producer_version = strdup("1.13");
    mp->domain = strdup("org.test");
    mp->doc_string = strdup("a doc");
    mp->has_model_version = 1;
    mp->model_version = 42;
    const char *doms[] = {"ai.onnx", "com.microsoft"};
    for (int i = 0; i < 2; i++) {
        Onnx__OperatorSetIdProto *op = malloc(sizeof(*op));
        onnx__operator_set_id_proto__init(op);
        op->domain = strdup(doms[i]);
        op->has_version = 1;
        op->version = i == 0 ? 17 : 1; /* "ai.onnx" is the default domain: 17 wins */
        APPEND(mp->opset_import, mp->n_opset_import, op);
    }
    Onnx__StringStringEntryProto *kv = malloc(sizeof(*kv));
    onnx__string_string_entry_proto__init(kv);
    kv->key = strdup("author");
    kv->value = strdup("me");
    APPEND(mp->metadata_props, mp->n_metadata_props, kv);
    Onnx__TrainingInfoProto *ti = malloc(sizeof(*ti));
    onnx__training_info_proto__init(ti);
    ti->algorithm = graph_new("train");
    APPEND(mp->training_info, mp->n_training_info, ti);
    size_t ti_len = onnx__training_info_proto__get_packed_size(ti);
    uint8_t *ti_bytes = malloc(ti_len);
    onnx__training_info_proto__pack(ti, ti_bytes);

    gl_model *m = load_ok(mp, NULL);
    cr_expect_eq(m->ir_version, 8);
    cr_expect_eq(gl_model_opset(m, ""), 17);
    cr_expect_eq(gl_model_opset(m, "com.microsoft"), 1);
    cr_expect_str_eq(m->producer_name, "pytorch");
    cr_expect_str_eq(m->producer_version, "1.13");
    cr_expect_str_eq(m->domain, "org.test");
    cr_expect_str_eq(m->doc_string, "a doc");
    cr_expect(m->has_model_version);
    cr_expect_eq(m->model_version, 42);
    cr_assert_eq(m->n_metadata, 1);
    cr_expect_str_eq(m->metadata[0].key, "author");
    cr_expect_str_eq(m->metadata[0].value, "me");
    cr_assert_eq(m->n_training_info, 1);
    cr_expect_eq(m->training_info[0].len, ti_len);
    cr_expect(memcmp(m->training_info[0].data, ti_bytes, ti_len) == 0);
    cr_expect_str_eq(m->path, "t.onnx");
    cr_expect_str_eq(m->graph->name, "main");
    cr_expect_eq(gl_graph_verify(m->graph, false), GL_OK, "%s", gl_error_message());
    free(ti_bytes);
    gl_model_free(m);
}

/* ==== initializers, inputs, types ========================================================== */

static Onnx__ModelProto *default_input_model(void)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    float b[3] = {1, 2, 3}, c[3] = {4, 5, 6};
    add_input(mp->graph, "x", 1, "3");
    add_input(mp->graph, "bias", 1, "3");
    add_init(mp->graph, tensor_f32("bias", "3", b, 3)); /* the input's default */
    add_init(mp->graph, tensor_f32("c", "3", c, 3));    /* a constant */
    add_node(mp->graph, "Add", "a1", "x,bias", "t");
    add_node(mp->graph, "Add", "a2", "t,c", "y");
    add_output(mp->graph, "y", 1, "3");
    return mp;
}

Test(load, initializer_that_is_an_input_is_a_default)
{
    Onnx__ModelProto *mp = default_input_model();
    add_value_info(mp->graph, "c", tensor_type(1, "N")); /* the tensor's own [3] wins */
    gl_model *m = load_ok(mp, NULL);
    gl_graph *g = m->graph;
    gl_value *bias = value_named(g, "bias"), *c = value_named(g, "c");
    cr_expect(bias->is_input);
    cr_assert_not_null(bias->init);
    cr_expect_eq(gl_tensor_get_f64(bias->init, 2), 3.0);
    cr_expect(!gl_value_is_constant(bias), "an input's default is not a constant");
    cr_expect(!m->freeze_inputs);
    cr_expect(!c->is_input);
    cr_expect(gl_value_is_constant(c));
    cr_assert_eq(c->type.shape.rank, 1);
    cr_expect_eq(c->type.shape.dims[0].value, 3);
    cr_assert_eq(g->n_inputs, 2);
    cr_expect_eq(g->inputs[1], bias);
    cr_assert_eq(g->n_inits, 2, "both initializers, in file order");
    cr_expect_eq(g->inits[0], bias);
    cr_expect_eq(g->inits[1], c);
    cr_expect_eq(gl_graph_verify(g, false), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
}

Test(load, freeze_inputs_makes_defaults_constant)
{
    gl_load_options opts = {.freeze_inputs = true};
    gl_model *m = load_ok(default_input_model(), &opts);
    gl_value *bias = value_named(m->graph, "bias");
    cr_expect(m->freeze_inputs);
    cr_expect(bias->is_input);
    cr_expect(gl_value_is_constant(bias));
    gl_model_free(m);
}

Test(load, types_of_inputs_value_info_and_outputs)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    Onnx__GraphProto *g = mp->graph;
    add_input(g, "x", 1, "N,3,?,224");
    APPEND(g->input, g->n_input, vinfo("norank", tensor_type(7, NULL)));
    /* a sequence type: kept verbatim */
    Onnx__TypeProto *seq = malloc(sizeof(*seq));
    onnx__type_proto__init(seq);
    seq->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    seq->sequence_type = malloc(sizeof(*seq->sequence_type));
    onnx__type_proto__sequence__init(seq->sequence_type);
    seq->sequence_type->elem_type = tensor_type(1, "2");
    size_t seq_len = onnx__type_proto__get_packed_size(seq);
    uint8_t *seq_bytes = malloc(seq_len);
    onnx__type_proto__pack(seq, seq_bytes);
    APPEND(g->input, g->n_input, vinfo("s", seq));
    add_node(g, "Relu", "r", "x", "t");
    add_node(g, "Identity", "i", "t", "y");
    add_value_info(g, "t", tensor_type(1, "N,3,?,224"));
    add_value_info(g, "unknown_name", tensor_type(1, "1")); /* names nothing: ignored */
    add_output(g, "y", 10, "N,3,?,224");
    add_output(g, "s", 0, NULL);
    add_output(g, "norank", 0, NULL);

    gl_model *m = load_ok(mp, NULL);
    gl_graph *gg = m->graph;
    gl_value *x = value_named(gg, "x");
    cr_expect_eq(x->type.kind, GL_TYPE_TENSOR);
    cr_expect_eq(x->type.dtype, GL_DT_FLOAT);
    cr_assert_eq(x->type.shape.rank, 4);
    cr_expect_eq(x->type.shape.dims[0].value, GL_DIM_UNKNOWN);
    cr_expect_str_eq(x->type.shape.dims[0].sym, "N");
    cr_expect_eq(x->type.shape.dims[1].value, 3);
    cr_expect_eq(x->type.shape.dims[2].value, GL_DIM_UNKNOWN);
    cr_expect_null(x->type.shape.dims[2].sym);
    cr_expect_eq(x->type.shape.dims[3].value, 224);
    gl_value *norank = value_named(gg, "norank");
    cr_expect_eq(norank->type.dtype, GL_DT_INT64);
    cr_expect_eq(norank->type.shape.rank, GL_RANK_UNKNOWN);
    gl_value *s = value_named(gg, "s");
    cr_expect_eq(s->type.kind, GL_TYPE_OPAQUE);
    cr_expect_eq(s->type.opaque.len, seq_len);
    cr_expect(memcmp(s->type.opaque.data, seq_bytes, seq_len) == 0);
    gl_value *t = value_named(gg, "t");
    cr_expect_eq(t->type.kind, GL_TYPE_TENSOR, "value_info types the intermediate value");
    cr_expect_eq(t->type.shape.rank, 4);
    cr_expect_str_eq(t->type.shape.dims[0].sym, "N");
    cr_expect_eq(t->producer, node_named(gg, "r"));
    gl_value *y = value_named(gg, "y");
    cr_expect_eq(y->type.dtype, GL_DT_FLOAT16, "the output's declared type");
    cr_expect_null(gl_find_value(gg, "unknown_name"));
    cr_assert_eq(gg->n_outputs, 3);
    cr_expect_eq(gg->outputs[0], y);
    cr_expect_eq(y->n_output_refs, 1);
    cr_expect_eq(gl_graph_verify(gg, false), GL_OK, "%s", gl_error_message());
    free(seq_bytes);
    gl_model_free(m);
}

Test(load, sparse_initializers_and_quantization_annotations_kept_verbatim)
{
    Onnx__ModelProto *mp = tiny_model();
    mp->graph->doc_string = strdup("graph doc");
    float one = 1;
    Onnx__SparseTensorProto *sp = malloc(sizeof(*sp));
    onnx__sparse_tensor_proto__init(sp);
    sp->values = tensor_f32("sp", "1", &one, 1);
    APPEND(mp->graph->sparse_initializer, mp->graph->n_sparse_initializer, sp);
    Onnx__TensorAnnotation *qa = malloc(sizeof(*qa));
    onnx__tensor_annotation__init(qa);
    qa->tensor_name = strdup("y");
    APPEND(mp->graph->quantization_annotation, mp->graph->n_quantization_annotation, qa);
    size_t sp_len = onnx__sparse_tensor_proto__get_packed_size(sp);
    size_t qa_len = onnx__tensor_annotation__get_packed_size(qa);
    uint8_t *sp_bytes = malloc(sp_len), *qa_bytes = malloc(qa_len);
    onnx__sparse_tensor_proto__pack(sp, sp_bytes);
    onnx__tensor_annotation__pack(qa, qa_bytes);
    gl_model *m = load_ok(mp, NULL);
    gl_graph *g = m->graph;
    cr_expect_str_eq(g->doc_string, "graph doc");
    cr_assert_eq(g->n_sparse_inits, 1);
    cr_expect(g->sparse_inits[0].len == sp_len && !memcmp(g->sparse_inits[0].data, sp_bytes, sp_len));
    cr_assert_eq(g->n_quant_annotations, 1);
    cr_expect(g->quant_annotations[0].len == qa_len &&
              !memcmp(g->quant_annotations[0].data, qa_bytes, qa_len));
    free(sp_bytes);
    free(qa_bytes);
    gl_model_free(m);
}

/* ==== nodes ================================================================================= */

Test(load, nodes_inputs_outputs_and_provenance)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    Onnx__GraphProto *g = mp->graph;
    add_input(g, "x", 1, "4");
    Onnx__NodeProto *clip = add_node(g, "Clip", "clip", "x,,", "c");
    clip->domain = strdup("ai.onnx");
    clip->doc_string = strdup("clip doc");
    add_node(g, "Dropout", "drop", "c", "d,"); /* omitted mask output */
    Onnx__NodeProto *custom = add_node(g, "MyOp", "mine", "d", "y");
    custom->domain = strdup("com.example");
    add_output(g, "y", 1, "4");
    gl_model *m = load_ok(mp, NULL);
    gl_graph *gg = m->graph;
    cr_assert_eq(gg->n_nodes, 3);
    gl_node *n0 = gg->nodes[0], *n1 = gg->nodes[1], *n2 = gg->nodes[2];
    cr_expect_str_eq(n0->name, "clip");
    cr_expect_str_eq(n0->op_type, "Clip");
    cr_expect_str_eq(n0->domain, "", "ai.onnx is the default domain");
    cr_expect_str_eq(n0->doc_string, "clip doc");
    cr_assert_eq(n0->n_inputs, 3);
    cr_expect_eq(n0->inputs[0], value_named(gg, "x"));
    cr_expect_null(n0->inputs[1]);
    cr_expect_null(n0->inputs[2]);
    cr_assert_eq(n1->n_outputs, 2);
    cr_expect_eq(n1->outputs[0], value_named(gg, "d"));
    cr_expect_null(n1->outputs[1], "an omitted output leaves an empty slot");
    cr_expect_str_eq(n2->domain, "com.example");
    cr_assert_eq(gg->n_origin_names, 3);
    for (size_t i = 0; i < 3; i++) {
        gl_node *n = gg->nodes[i];
        cr_expect(!n->name_generated);
        cr_assert_eq(n->prov.n_origins, 1);
        cr_expect_eq(n->prov.origins[0], n->id);
        cr_expect_eq(n->prov.decision, -1);
        cr_expect_str_eq(gg->origin_names[n->id], n->name);
    }
    cr_expect_eq(gl_graph_verify(gg, false), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
}

/* The outputs a node's own fresh values were first named after must not get in the way:
 * node 'n' with outputs "n_out1" and "n_out0" (the names gl_add_node proposes, swapped). */
Test(load, output_names_that_collide_with_fresh_names)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "4");
    add_node(mp->graph, "Split", "n", "x", "n_out1,n_out0");
    add_output(mp->graph, "n_out0", 1, NULL);
    add_output(mp->graph, "n_out1", 1, NULL);
    gl_model *m = load_ok(mp, NULL);
    gl_node *n = node_named(m->graph, "n");
    cr_expect_str_eq(n->outputs[0]->name, "n_out1");
    cr_expect_str_eq(n->outputs[1]->name, "n_out0");
    cr_expect_eq(gl_graph_verify(m->graph, false), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
}

static Onnx__ModelProto *unnamed_nodes_model(void)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    Onnx__GraphProto *g = mp->graph;
    add_input(g, "x", 1, "4");
    add_node(g, "Relu", NULL, "x", "a");     /* Relu_0 */
    add_node(g, "Relu", "", "a", "b");       /* Relu_1 is taken by node 3: Relu_1_1 */
    add_node(g, "Sigmoid", NULL, "b", "c");  /* Sigmoid_2 */
    add_node(g, "Relu", "Relu_1", "c", "d"); /* the file's own name */
    add_node(g, "Relu", "Relu_4", "d", "e"); /* same as what index 4 would generate */
    add_node(g, "Relu", NULL, "e", "y");     /* Relu_5 */
    add_output(g, "y", 1, "4");
    return mp;
}

Test(load, generated_node_names_are_stable_and_unique)
{
    static const char *want[] = {"Relu_0", "Relu_1_1", "Sigmoid_2", "Relu_1", "Relu_4",
                                 "Relu_5"};
    static const bool generated[] = {true, true, true, false, false, true};
    gl_model *a = load_ok(unnamed_nodes_model(), NULL);
    gl_model *b = load_ok(unnamed_nodes_model(), NULL);
    cr_assert_eq(a->graph->n_nodes, 6);
    for (size_t i = 0; i < 6; i++) {
        cr_expect_str_eq(a->graph->nodes[i]->name, want[i], "node %zu", i);
        cr_expect_eq(a->graph->nodes[i]->name_generated, generated[i], "node %zu", i);
        cr_expect_str_eq(b->graph->nodes[i]->name, a->graph->nodes[i]->name, "stable");
        for (size_t j = 0; j < i; j++)
            cr_expect_str_neq(a->graph->nodes[i]->name, a->graph->nodes[j]->name);
    }
    gl_model_free(a);
    gl_model_free(b);
}

/* The first unnamed node comes late: names before it (taken over by their nodes) and
 * after it must both be avoided. */
Test(load, generated_names_avoid_earlier_and_later_file_names)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    Onnx__GraphProto *g = mp->graph;
    add_input(g, "x", 1, "4");
    add_node(g, "Abs", "Sigmoid_2", "x", "a");  /* what index 2 would generate */
    add_node(g, "Abs", "plain", "a", "b");
    add_node(g, "Sigmoid", NULL, "b", "c");     /* Sigmoid_2 is taken: Sigmoid_2_1 */
    add_node(g, "Relu", NULL, "c", "d");        /* Relu_3 is taken by node 4: Relu_3_1 */
    add_node(g, "Neg", "Relu_3", "d", "y");
    add_output(g, "y", 1, "4");
    static const char *want[] = {"Sigmoid_2", "plain", "Sigmoid_2_1", "Relu_3_1", "Relu_3"};
    gl_model *m = load_ok(mp, NULL);
    cr_assert_eq(m->graph->n_nodes, 5);
    for (size_t i = 0; i < 5; i++) {
        cr_expect_str_eq(m->graph->nodes[i]->name, want[i], "node %zu", i);
        cr_expect_str_eq(m->graph->origin_names[m->graph->nodes[i]->id], want[i]);
    }
    gl_model_free(m);
}

Test(load, out_of_order_nodes_load_and_verify_reports_order)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "4");
    add_node(mp->graph, "Relu", "second", "t", "y"); /* reads what the next node makes */
    add_node(mp->graph, "Relu", "first", "x", "t");
    add_output(mp->graph, "y", 1, "4");
    gl_model *m = load_ok(mp, NULL);
    cr_expect_eq(node_named(m->graph, "second")->inputs[0]->producer,
                 node_named(m->graph, "first"));
    cr_expect_eq(gl_graph_verify(m->graph, true), GL_OK, "%s", gl_error_message());
    cr_expect_neq(gl_graph_verify(m->graph, false), GL_OK, "unsorted must be reported");
    gl_model_free(m);
}

Test(load, cyclic_graph_loads_and_verify_reports_the_cycle)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "4");
    add_node(mp->graph, "Add", "a", "x,q", "p");
    add_node(mp->graph, "Relu", "b", "p", "q");
    add_output(mp->graph, "q", 1, "4");
    gl_model *m = load_ok(mp, NULL);
    gl_status st = gl_graph_verify(m->graph, true);
    cr_expect_neq(st, GL_OK);
    cr_expect(strstr(gl_error_message(), "cycle") != NULL, "%s", gl_error_message());
    gl_model_free(m);
}

/* Phase 1 wires the nodes it can while it creates them and leaves the rest to phase 2:
 * whichever phase wires a node, the uses of a value list its readers in file order (slot
 * -1: a subgraph's capture), and attributes still load. */
typedef struct use_order_case {
    const char *what;
    Onnx__ModelProto *(*build)(void);
    const char *uses_of_x; /* "node:slot,..." */
} use_order_case;

static Onnx__ModelProto *uses_in_order(void)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "4");
    add_node(mp->graph, "Relu", "a", "x", "p");
    add_node(mp->graph, "Add", "b", "p,x", "q");
    Onnx__NodeProto *c = add_node(mp->graph, "Softmax", "c", "x", "r");
    Onnx__AttributeProto *axis = attr_new(c, "axis", 2);
    axis->has_i = 1;
    axis->i = 0;
    add_node(mp->graph, "Sum", "d", "q,r,x,x", "y");
    add_output(mp->graph, "y", 1, "4");
    return mp;
}

/* "a" reads what a later node makes: a, b and c are wired in phase 2. */
static Onnx__ModelProto *uses_after_a_later_name(void)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "4");
    add_node(mp->graph, "Add", "a", "x,t", "p");
    add_node(mp->graph, "Relu", "b", "x", "q");
    add_node(mp->graph, "Relu", "c", "x", "t");
    add_node(mp->graph, "Add", "d", "p,q", "y");
    add_output(mp->graph, "y", 1, "4");
    return mp;
}

/* The If's branch reads x (an implicit use, made as phase 2 loads the branch) before
 * "b" reads it. */
static Onnx__ModelProto *uses_after_a_subgraph(void)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    Onnx__GraphProto *g = mp->graph;
    add_input(g, "cond", 9, "");
    add_input(g, "x", 1, "2");
    add_node(g, "Relu", "a", "x", "p");
    Onnx__NodeProto *n = add_node(g, "If", "if1", "cond", "i");
    attr_graph(n, "then_branch", one_node_branch("then", "Identity", "then_id", "x", "then_out"));
    attr_graph(n, "else_branch", one_node_branch("else", "Identity", "else_id", "p", "else_out"));
    add_node(g, "Add", "b", "i,x", "y");
    add_output(g, "y", 1, "2");
    return mp;
}

static const use_order_case use_order_cases[] = {
    {"nodes in order", uses_in_order, "a:0,b:1,c:0,d:2,d:3"},
    {"a node reads a later node's output", uses_after_a_later_name, "a:0,b:0,c:0"},
    {"a subgraph reads it", uses_after_a_subgraph, "a:0,if1:-1,b:1"},
};

Test(load, uses_follow_file_order_whichever_phase_wires_a_node)
{
    for (size_t i = 0; i < sizeof(use_order_cases) / sizeof(use_order_cases[0]); i++) {
        const use_order_case *c = &use_order_cases[i];
        gl_model *m = load_ok(c->build(), NULL);
        const gl_value *x = value_named(m->graph, "x");
        char got[256] = "";
        for (size_t u = 0; u < x->n_uses; u++)
            snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s:%d", u ? "," : "",
                     x->uses[u].node->name, x->uses[u].slot);
        cr_expect_str_eq(got, c->uses_of_x, "%s", c->what);
        const gl_node *softmax = gl_find_node(m->graph, "c");
        if (softmax && gl_node_is(softmax, "Softmax"))
            cr_expect_eq(gl_node_attr_int(softmax, "axis", 99), 0, "%s", c->what);
        cr_expect_eq(gl_graph_verify(m->graph, true), GL_OK, "%s: %s", c->what,
                     gl_error_message());
        gl_model_free(m);
    }
}

/* ==== attributes ============================================================================ */

Test(load, attributes_of_every_kind)
{
    Onnx__ModelProto *mp = tiny_model();
    Onnx__NodeProto *n = mp->graph->node[0];
    n->domain = strdup("test.kinds"); /* an op without a schema takes any attribute */
    Onnx__AttributeProto *a = attr_new(n, "f", 1);
    a->has_f = 1;
    a->f = 0.25f;
    a = attr_new(n, "i", 2);
    a->has_i = 1;
    a->i = -7;
    a = attr_new(n, "s", 3);
    a->s.data = (uint8_t *)strdup("hello");
    a->s.len = 5;
    a->has_s = 1;
    float one = 1.5f;
    attr_new(n, "t", 4)->t = tensor_f32("tv", "1", &one, 1);
    a = attr_new(n, "fs", 6);
    a->floats = malloc(2 * sizeof(float));
    a->floats[0] = 1;
    a->floats[1] = -1;
    a->n_floats = 2;
    a = attr_new(n, "is", 7);
    a->ints = malloc(3 * sizeof(int64_t));
    a->ints[0] = 1, a->ints[1] = 2, a->ints[2] = 3;
    a->n_ints = 3;
    a = attr_new(n, "ss", 8);
    a->strings = malloc(2 * sizeof(ProtobufCBinaryData));
    a->strings[0] = (ProtobufCBinaryData){2, (uint8_t *)strdup("ab")};
    a->strings[1] = (ProtobufCBinaryData){1, (uint8_t *)strdup("c")};
    a->n_strings = 2;
    a = attr_new(n, "ts", 9);
    a->tensors = malloc(sizeof(Onnx__TensorProto *));
    a->tensors[0] = tensor_f32("t0", "1", &one, 1);
    a->n_tensors = 1;
    a = attr_new(n, "tp", 13);
    a->tp = tensor_type(7, "2");
    size_t tp_len = onnx__type_proto__get_packed_size(a->tp);
    uint8_t *tp_bytes = malloc(tp_len);
    onnx__type_proto__pack(a->tp, tp_bytes);
    a = attr_new(n, "sp", 11);
    a->sparse_tensor = malloc(sizeof(*a->sparse_tensor));
    onnx__sparse_tensor_proto__init(a->sparse_tensor);
    a->sparse_tensor->values = tensor_f32("v", "1", &one, 1);
    size_t sp_len = onnx__sparse_tensor_proto__get_packed_size(a->sparse_tensor);
    uint8_t *sp_bytes = malloc(sp_len);
    onnx__sparse_tensor_proto__pack(a->sparse_tensor, sp_bytes);
    a = attr_new(n, "old", 0); /* old files: no type, the set field tells */
    a->has_i = 1;
    a->i = 5;
    a->doc_string = strdup("no type field");

    gl_model *m = load_ok(mp, NULL);
    gl_node *r = node_named(m->graph, "r");
    cr_expect_eq(r->n_attrs, 11);
    cr_expect_eq(gl_node_attr_float(r, "f", 0), 0.25f);
    cr_expect_eq(gl_node_attr_int(r, "i", 0), -7);
    cr_expect_str_eq(gl_node_attr_string(r, "s", ""), "hello");
    gl_attr *t = gl_node_attr(r, "t");
    cr_assert(t && t->type == GL_ATTR_TENSOR && t->t);
    cr_expect_eq(gl_tensor_get_f64(t->t, 0), 1.5);
    gl_attr *fs = gl_node_attr(r, "fs");
    cr_assert(fs && fs->type == GL_ATTR_FLOATS && fs->n == 2);
    cr_expect(fs->floats[0] == 1 && fs->floats[1] == -1);
    gl_attr *is = gl_node_attr(r, "is");
    cr_assert(is && is->type == GL_ATTR_INTS && is->n == 3);
    cr_expect(is->ints[0] == 1 && is->ints[2] == 3);
    gl_attr *ss = gl_node_attr(r, "ss");
    cr_assert(ss && ss->type == GL_ATTR_STRINGS && ss->n == 2);
    cr_expect(ss->strings[0].len == 2 && !memcmp(ss->strings[0].data, "ab", 2));
    gl_attr *ts = gl_node_attr(r, "ts");
    cr_assert(ts && ts->type == GL_ATTR_TENSORS && ts->n == 1);
    cr_expect_str_eq(ts->tensors[0]->name, "t0");
    gl_attr *tp = gl_node_attr(r, "tp");
    cr_assert(tp && tp->type == GL_ATTR_TYPE_PROTO && tp->n == 1);
    cr_expect(tp->opaque[0].len == tp_len && !memcmp(tp->opaque[0].data, tp_bytes, tp_len));
    gl_attr *sp = gl_node_attr(r, "sp");
    cr_assert(sp && sp->type == GL_ATTR_SPARSE_TENSOR && sp->n == 1);
    cr_expect(sp->opaque[0].len == sp_len && !memcmp(sp->opaque[0].data, sp_bytes, sp_len));
    gl_attr *old = gl_node_attr(r, "old");
    cr_assert(old);
    cr_expect_eq(old->type, GL_ATTR_INT);
    cr_expect_eq(old->i, 5);
    cr_expect_str_eq(old->doc_string, "no type field");
    free(tp_bytes);
    free(sp_bytes);
    gl_model_free(m);
}

/* ==== subgraphs ============================================================================== */

/* y = If(cond) then { x + one } else { Identity(x) }: both branches read the outer x. */
static Onnx__ModelProto *if_model(void)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    Onnx__GraphProto *g = mp->graph;
    add_input(g, "cond", 9, "");
    add_input(g, "x", 1, "2");
    Onnx__NodeProto *n = add_node(g, "If", "if1", "cond", "y");
    Onnx__GraphProto *then_g = one_node_branch("then", "Add", "then_add", "x,one", "then_out");
    float one = 1;
    add_init(then_g, tensor_f32("one", "", &one, 1));
    attr_graph(n, "then_branch", then_g);
    attr_graph(n, "else_branch", one_node_branch("else", "Identity", "else_id", "x", "else_out"));
    add_output(g, "y", 1, "2");
    return mp;
}

Test(load, if_subgraphs_capture_outer_values)
{
    gl_model *m = load_ok(if_model(), NULL);
    gl_graph *g = m->graph;
    gl_node *n = node_named(g, "if1");
    gl_value *x = value_named(g, "x");
    gl_attr *then_a = gl_node_attr(n, "then_branch"), *else_a = gl_node_attr(n, "else_branch");
    cr_assert(then_a && then_a->type == GL_ATTR_GRAPH && then_a->g);
    cr_assert(else_a && else_a->type == GL_ATTR_GRAPH && else_a->g);
    gl_graph *tg = then_a->g, *eg = else_a->g;
    cr_expect_eq(tg->parent, g);
    cr_expect_eq(tg->parent_node, n);
    cr_expect_str_eq(tg->name, "then");
    cr_assert_eq(tg->n_captures, 1);
    cr_expect_eq(tg->captures[0]->outer, x);
    cr_expect_str_eq(tg->captures[0]->name, "x");
    cr_assert_eq(eg->n_captures, 1);
    cr_expect_eq(eg->captures[0]->outer, x);
    cr_assert_eq(n->n_implicit, 1, "x once, though both branches read it");
    cr_expect_eq(n->implicit[0], x);
    cr_expect(!gl_value_uses_comprehensive(x));
    gl_node *add = node_named(tg, "then_add");
    cr_expect_eq(add->inputs[0], tg->captures[0]);
    cr_expect_eq(add->inputs[1], value_named(tg, "one"), "local names resolve locally");
    cr_expect_null(gl_find_value(g, "one"));
    cr_assert_eq(tg->n_outputs, 1);
    cr_expect_str_eq(tg->outputs[0]->name, "then_out");
    cr_expect_eq(tg->n_origin_names, 1);
    cr_expect_eq(gl_graph_verify(g, false), GL_OK, "%s", gl_error_message());
    cr_expect_eq(gl_graph_count_nodes(g, true), 3);
    gl_model_free(m);
}

/* A subgraph may read an outer value that a later outer node produces: the outer
 * values exist before any subgraph is loaded. */
Test(load, subgraph_reads_value_of_a_later_outer_node)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    Onnx__GraphProto *g = mp->graph;
    add_input(g, "cond", 9, "");
    add_input(g, "x", 1, "2");
    Onnx__NodeProto *n = add_node(g, "If", "if1", "cond", "y");
    add_node(g, "Relu", "late", "x", "r");
    Onnx__GraphProto *b = graph_new("b");
    add_node(b, "Identity", "bid", "r", "bo");
    add_output(b, "bo", 1, "2");
    attr_graph(n, "then_branch", b);
    Onnx__GraphProto *e = graph_new("e");
    add_output(e, "x", 1, "2"); /* a branch may output an outer value directly */
    attr_graph(n, "else_branch", e);
    add_output(g, "y", 1, "2");
    gl_model *m = load_ok(mp, NULL);
    gl_node *ifn = node_named(m->graph, "if1");
    cr_expect_eq(ifn->n_implicit, 2);
    cr_expect_eq(gl_graph_verify(m->graph, true), GL_OK, "%s", gl_error_message());
    cr_expect_neq(gl_graph_verify(m->graph, false), GL_OK, "If comes before what it reads");
    gl_model_free(m);
}

/* ==== functions ============================================================================== */

Test(load, functions)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    Onnx__GraphProto *g = mp->graph;
    add_input(g, "x", 1, "4");
    Onnx__NodeProto *call = add_node(g, "AddRelu", "call", "x,x", "y");
    call->domain = strdup("graphlab.test");
    add_output(g, "y", 1, "4");
    Onnx__FunctionProto *f = malloc(sizeof(*f));
    onnx__function_proto__init(f);
    f->name = strdup("AddRelu");
    f->domain = strdup("graphlab.test");
    f->doc_string = strdup("add then relu");
    split_names("a,b", &f->input, &f->n_input);
    split_names("c", &f->output, &f->n_output);
    split_names("alpha", &f->attribute, &f->n_attribute);
    Onnx__GraphProto *tmp = graph_new(NULL); /* borrow add_node, then move the nodes */
    add_node(tmp, "Add", NULL, "a,b", "s");
    Onnx__NodeProto *relu = add_node(tmp, "LeakyRelu", "lr", "s", "c");
    Onnx__AttributeProto *ra = attr_new(relu, "alpha", 1);
    ra->ref_attr_name = strdup("alpha");
    f->node = tmp->node;
    f->n_node = tmp->n_node;
    tmp->node = NULL;
    tmp->n_node = 0;
    onnx__graph_proto__free_unpacked(tmp, NULL);
    Onnx__OperatorSetIdProto *op = malloc(sizeof(*op));
    onnx__operator_set_id_proto__init(op);
    op->domain = strdup("");
    op->has_version = 1;
    op->version = 13;
    APPEND(f->opset_import, f->n_opset_import, op);
    APPEND(mp->functions, mp->n_functions, f);

    gl_model *m = load_ok(mp, NULL);
    cr_assert_eq(m->n_functions, 1);
    gl_function *fn = &m->functions[0];
    cr_expect_str_eq(fn->name, "AddRelu");
    cr_expect_str_eq(fn->domain, "graphlab.test");
    cr_expect_str_eq(fn->doc_string, "add then relu");
    cr_assert_eq(fn->n_attributes, 1);
    cr_expect_str_eq(fn->attributes[0], "alpha");
    cr_assert_eq(fn->n_opsets, 1);
    cr_expect_str_eq(fn->opsets[0].domain, "");
    cr_expect_eq(fn->opsets[0].version, 13);
    gl_graph *body = fn->body;
    cr_assert_not_null(body);
    cr_assert_eq(body->n_inputs, 2);
    cr_expect_str_eq(body->inputs[0]->name, "a");
    cr_expect_eq(body->inputs[0]->type.kind, GL_TYPE_NONE, "formal parameters are untyped");
    cr_assert_eq(body->n_outputs, 1);
    cr_expect_str_eq(body->outputs[0]->name, "c");
    cr_assert_eq(body->n_nodes, 2);
    cr_expect_str_eq(body->nodes[0]->name, "Add_0");
    gl_attr *alpha = gl_node_attr(body->nodes[1], "alpha");
    cr_assert_not_null(alpha);
    cr_expect_str_eq(alpha->ref_attr_name, "alpha");
    cr_expect_eq(gl_graph_verify(body, false), GL_OK, "%s", gl_error_message());
    cr_expect_eq(gl_graph_verify(m->graph, false), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
}

/* ==== bad models: one test each ================================================================== */

Test(bad_model, empty_buffer)
{
    gl_model *m = (gl_model *)1;
    cr_assert_eq(gl_model_load_buffer("", 0, "t.onnx", NULL, NULL, &m), GL_ERR_INPUT);
    cr_expect_null(m);
    cr_expect(strstr(gl_error_message(), "t.onnx: empty file") != NULL, "%s",
              gl_error_message());
}

Test(bad_model, truncated_at_every_length)
{
    Onnx__ModelProto *mp = if_model();
    float w[4] = {1, 2, 3, 4};
    add_init(mp->graph, tensor_f32("w", "4", w, 4));
    size_t len;
    uint8_t *buf = pack_model(mp, &len);
    onnx__model_proto__free_unpacked(mp, NULL);
    size_t failed = 0, loaded = 0;
    for (size_t cut = 0; cut < len; cut++) {
        gl_model *m = NULL;
        gl_status st = gl_model_load_buffer(buf, cut, "t.onnx", NULL, NULL, &m);
        if (st == GL_OK) {
            loaded++;
            cr_expect_eq(gl_graph_verify(m->graph, true), GL_OK, "cut %zu: %s", cut,
                         gl_error_message());
            gl_model_free(m);
        } else {
            failed++;
            cr_expect_eq(st, GL_ERR_INPUT, "cut %zu", cut);
            cr_expect_null(m);
            cr_expect(strncmp(gl_error_message(), "t.onnx: ", 8) == 0, "cut %zu: %s", cut,
                      gl_error_message());
        }
    }
    cr_expect_gt(failed, len / 2, "most cuts must fail (%zu of %zu did)", failed, len);
    free(buf);
}

Test(bad_model, random_bytes)
{
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int round = 0; round < 64; round++) {
        uint8_t buf[2048];
        for (size_t i = 0; i < sizeof(buf); i++) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            buf[i] = (uint8_t)state;
        }
        gl_model *m = NULL;
        gl_status st = gl_model_load_buffer(buf, sizeof(buf), "t.onnx", NULL, NULL, &m);
        cr_expect_eq(st, GL_ERR_INPUT, "round %d", round);
        cr_expect(strncmp(gl_error_message(), "t.onnx: ", 8) == 0, "%s", gl_error_message());
        gl_model_free(m);
    }
}

Test(bad_model, text)
{
    const char *text = "ir_version: 8\ngraph { node { op_type: \"Relu\" } }\n";
    gl_model *m = NULL;
    cr_assert_eq(gl_model_load_buffer(text, strlen(text), "t.onnx", NULL, NULL, &m),
                 GL_ERR_INPUT);
    cr_expect(strncmp(gl_error_message(), "t.onnx: ", 8) == 0, "%s", gl_error_message());
}

Test(bad_model, no_graph)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    onnx__graph_proto__free_unpacked(mp->graph, NULL);
    mp->graph = NULL;
    EXPECT_INPUT_ERROR(mp, "has no graph");
}

Test(bad_model, input_nothing_produces)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "2");
    add_node(mp->graph, "Relu", "n1", "x", "a");
    add_node(mp->graph, "Add", "n3", "a,yy", "z");
    add_output(mp->graph, "z", 1, "2");
    EXPECT_INPUT_ERROR(mp, "node 'n3' (Add): input 'yy' is not produced by any node, "
                           "graph input or initializer");
}

Test(bad_model, subgraph_input_nothing_produces)
{
    Onnx__ModelProto *mp = if_model();
    Onnx__GraphProto *else_g = mp->graph->node[0]->attribute[1]->g;
    free(else_g->node[0]->input[0]);
    else_g->node[0]->input[0] = strdup("nowhere");
    EXPECT_INPUT_ERROR(mp, "node 'else_id' (Identity) in subgraph 'else' of node 'if1': "
                           "input 'nowhere' is not produced");
}

Test(bad_model, two_producers)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "2");
    add_node(mp->graph, "Relu", "first", "x", "v");
    add_node(mp->graph, "Sigmoid", "second", "x", "v");
    add_output(mp->graph, "v", 1, "2");
    EXPECT_INPUT_ERROR(mp, "node 'second' (Sigmoid)", "output 'v'",
                       "already produced by node 'first' (Relu)");
}

Test(bad_model, node_repeats_its_own_output)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "4");
    add_node(mp->graph, "Split", "s", "x", "a,v,v");
    add_output(mp->graph, "v", 1, NULL);
    EXPECT_INPUT_ERROR(mp, "node 's' (Split): output 'v' is already produced by node 's' (Split)");
}

/* An unnamed node's generated name appears in the message although the node was never
 * made. */
Test(bad_model, unnamed_node_output_clash)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "4");
    add_node(mp->graph, "Relu", "first", "x", "v");
    add_node(mp->graph, "Sigmoid", NULL, "x", "v");
    add_output(mp->graph, "v", 1, NULL);
    EXPECT_INPUT_ERROR(mp, "node 'Sigmoid_1' (Sigmoid): output 'v' is already produced by "
                           "node 'first' (Relu)");
}

Test(bad_model, node_produces_a_graph_input)
{
    Onnx__ModelProto *mp = tiny_model();
    add_node(mp->graph, "Relu", "clobber", "y", "x");
    EXPECT_INPUT_ERROR(mp, "node 'clobber' (Relu): output 'x' is also a graph input");
}

Test(bad_model, graph_output_nothing_produces)
{
    Onnx__ModelProto *mp = tiny_model();
    add_output(mp->graph, "ghost", 1, "2");
    EXPECT_INPUT_ERROR(mp, "graph 'main'", "output 'ghost' is not produced by any node");
}

Test(bad_model, huge_dims_with_tiny_raw_data)
{
    Onnx__ModelProto *mp = tiny_model();
    uint8_t sixteen[16] = {0};
    add_init(mp->graph, tensor_raw("big", 1, "1000000,1000000", sixteen, 16));
    EXPECT_INPUT_ERROR(mp, "initializer 'big'", "raw_data holds 16 bytes");
}

Test(bad_model, huge_dims_with_tiny_typed_data)
{
    Onnx__ModelProto *mp = tiny_model();
    float v[4] = {0};
    add_init(mp->graph, tensor_f32("big", "1000000,1000000", v, 4));
    EXPECT_INPUT_ERROR(mp, "initializer 'big'", "float_data holds 4 values");
}

Test(bad_model, overflowing_dims)
{
    Onnx__ModelProto *mp = tiny_model();
    add_init(mp->graph, tensor_raw("big", 1, "4294967296,4294967296,4294967296", "", 0));
    EXPECT_INPUT_ERROR(mp, "initializer 'big'");
}

Test(bad_model, negative_dims_in_tensor)
{
    Onnx__ModelProto *mp = tiny_model();
    add_init(mp->graph, tensor_raw("neg", 1, "-3", "", 0));
    EXPECT_INPUT_ERROR(mp, "initializer 'neg'", "dimension 0 is negative (-3)");
}

Test(bad_model, negative_dim_value_in_type)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, "2,-5");
    add_node(mp->graph, "Relu", "r", "x", "y");
    add_output(mp->graph, "y", 1, "2");
    EXPECT_INPUT_ERROR(mp, "input 'x'", "dimension 1 is negative (-5)");
}

Test(bad_model, negative_dim_value_in_value_info)
{
    Onnx__ModelProto *mp = tiny_model();
    add_value_info(mp->graph, "y", tensor_type(1, "-1"));
    EXPECT_INPUT_ERROR(mp, "value_info 'y'", "dimension 0 is negative (-1)");
}

Test(bad_model, raw_data_length_mismatch)
{
    Onnx__ModelProto *mp = tiny_model();
    add_init(mp->graph, tensor_raw("w", 1, "3", "0123456789", 10));
    EXPECT_INPUT_ERROR(mp, "initializer 'w'", "raw_data holds 10 bytes, but 3 FLOAT elements need 12");
}

Test(bad_model, invalid_elem_type)
{
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 99, "2");
    add_node(mp->graph, "Relu", "r", "x", "y");
    add_output(mp->graph, "y", 1, "2");
    EXPECT_INPUT_ERROR(mp, "input 'x'", "invalid element type 99");
}

Test(bad_model, invalid_tensor_data_type)
{
    Onnx__ModelProto *mp = tiny_model();
    add_init(mp->graph, tensor_raw("w", 17, "1", "a", 1));
    EXPECT_INPUT_ERROR(mp, "initializer 'w'", "invalid tensor data type 17");
}

Test(bad_model, rank_above_max)
{
    char shape[4 * (GL_MAX_RANK + 1) + 1] = "";
    for (int i = 0; i <= GL_MAX_RANK; i++)
        strcat(shape, i ? ",1" : "1");
    Onnx__ModelProto *mp = model_new(8, 13);
    add_input(mp->graph, "x", 1, shape);
    add_node(mp->graph, "Relu", "r", "x", "y");
    add_output(mp->graph, "y", 1, "2");
    EXPECT_INPUT_ERROR(mp, "input 'x'", "rank 65 exceeds the maximum of 64");
}

Test(bad_model, tensor_rank_above_max)
{
    char dims[4 * (GL_MAX_RANK + 1) + 1] = "";
    for (int i = 0; i <= GL_MAX_RANK; i++)
        strcat(dims, i ? ",1" : "1");
    Onnx__ModelProto *mp = tiny_model();
    add_init(mp->graph, tensor_raw("w", 1, dims, "abcd", 4));
    EXPECT_INPUT_ERROR(mp, "initializer 'w'", "rank 65 exceeds");
}

Test(bad_model, duplicate_input)
{
    Onnx__ModelProto *mp = tiny_model();
    add_input(mp->graph, "x", 1, "2,3");
    EXPECT_INPUT_ERROR(mp, "input 'x' is listed twice");
}

Test(bad_model, duplicate_attribute)
{
    Onnx__ModelProto *mp = tiny_model();
    attr_new(mp->graph->node[0], "alpha", 1);
    attr_new(mp->graph->node[0], "alpha", 1);
    EXPECT_INPUT_ERROR(mp, "node 'r' (Relu): attribute 'alpha' appears twice");
}

Test(bad_model, attribute_without_value)
{
    Onnx__ModelProto *mp = tiny_model();
    attr_new(mp->graph->node[0], "empty", 0);
    EXPECT_INPUT_ERROR(mp, "node 'r' (Relu): attribute 'empty' has no type and no value");
}

Test(bad_model, node_without_op_type)
{
    Onnx__ModelProto *mp = tiny_model();
    Onnx__NodeProto *n = add_node(mp->graph, "X", "nameless_op", "x", "z");
    free(n->op_type);
    n->op_type = NULL;
    EXPECT_INPUT_ERROR(mp, "node 1 ('nameless_op') has no op_type");
}

/* protobuf-c unpacks recursively without a limit: nesting must be refused before. */
Test(bad_model, deep_nesting)
{
    Onnx__GraphProto *inner = graph_new("g");
    for (int i = 0; i < 200; i++) {
        Onnx__GraphProto *outer = graph_new("g");
        Onnx__NodeProto *n = add_node(outer, "If", NULL, "c", "o");
        attr_graph(n, "then_branch", inner);
        inner = outer;
    }
    Onnx__ModelProto *mp = model_new(8, 13);
    onnx__graph_proto__free_unpacked(mp->graph, NULL);
    mp->graph = inner;
    EXPECT_INPUT_ERROR(mp, "nest deeper than");
}

/* ==== files and external data ========================================================= */

typedef struct ext_fixture {
    char *dir;
    char path[4096];
} ext_fixture;

/* model.onnx in a fresh folder with initializer 'w' (FLOAT [4]) stored externally in
 * `location` at `offset` (length given when `length` >= 0); weights.bin holds 64 bytes,
 * float i at byte 4 * i being i + 0.5. */
static void write_external_model(ext_fixture *fx, const char *location, const char *offset,
                                 const char *length)
{
    fx->dir = tu_tmpdir();
    cr_assert_not_null(fx->dir);
    float vals[16];
    for (int i = 0; i < 16; i++)
        vals[i] = (float)i + 0.5f;
    char p[4200];
    snprintf(p, sizeof(p), "%s/weights.bin", fx->dir);
    cr_assert(tu_write_file(p, vals, sizeof(vals)));
    Onnx__ModelProto *mp = tiny_model();
    Onnx__TensorProto *t = tensor_new("w", 1, "4");
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    const char *keys[] = {"location", "offset", "length"};
    const char *vals_s[] = {location, offset, length};
    for (int i = 0; i < 3; i++) {
        if (!vals_s[i])
            continue;
        Onnx__StringStringEntryProto *kv = malloc(sizeof(*kv));
        onnx__string_string_entry_proto__init(kv);
        kv->key = strdup(keys[i]);
        kv->value = strdup(vals_s[i]);
        APPEND(t->external_data, t->n_external_data, kv);
    }
    add_init(mp->graph, t);
    size_t len;
    uint8_t *buf = pack_model(mp, &len);
    onnx__model_proto__free_unpacked(mp, NULL);
    snprintf(fx->path, sizeof(fx->path), "%s/model.onnx", fx->dir);
    cr_assert(tu_write_file(fx->path, buf, len));
    free(buf);
}

static void fixture_done(ext_fixture *fx)
{
    tu_rmtree(fx->dir);
    free(fx->dir);
}

Test(external, mapped_and_read)
{
    ext_fixture fx;
    write_external_model(&fx, "weights.bin", "8", "16"); /* floats 2..5 */
    for (int no_mmap = 0; no_mmap <= 1; no_mmap++) {
        gl_load_options opts = {.no_mmap = no_mmap};
        gl_model *m = NULL;
        cr_assert_eq(gl_model_load(fx.path, &opts, &m), GL_OK, "%s", gl_error_message());
        cr_expect_str_eq(m->path, fx.path);
        cr_expect_str_eq(m->dir, fx.dir);
        gl_tensor *t = value_named(m->graph, "w")->init;
        cr_assert_not_null(t);
        cr_expect(t->external);
        cr_expect_eq(t->buf->kind, no_mmap ? GL_BUF_HEAP : GL_BUF_MMAP);
        for (int i = 0; i < 4; i++)
            cr_expect_eq(gl_tensor_get_f64(t, i), i + 2.5, "element %d", i);
        gl_model_free(m);
    }
    fixture_done(&fx);
}

Test(external, subfolder_and_no_length)
{
    ext_fixture fx;
    write_external_model(&fx, "sub/w.bin", NULL, NULL);
    char sub[4200], p[4300];
    snprintf(sub, sizeof(sub), "%s/sub", fx.dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    float v[4] = {9, 8, 7, 6};
    snprintf(p, sizeof(p), "%s/w.bin", sub);
    cr_assert(tu_write_file(p, v, sizeof(v)));
    gl_model *m = NULL;
    cr_assert_eq(gl_model_load(fx.path, NULL, &m), GL_OK, "%s", gl_error_message());
    cr_expect_eq(gl_tensor_get_f64(value_named(m->graph, "w")->init, 3), 6.0);
    gl_model_free(m);
    fixture_done(&fx);
}

static void expect_external_error(const char *location, const char *offset,
                                  const char *length, const char *needle)
{
    ext_fixture fx;
    write_external_model(&fx, location, offset, length);
    gl_model *m = NULL;
    gl_status st = gl_model_load(fx.path, NULL, &m);
    cr_expect_eq(st, GL_ERR_INPUT, "%s: status %d: %s", location, st, gl_error_message());
    cr_expect_null(m);
    const char *msg = gl_error_message();
    cr_expect(strncmp(msg, fx.path, strlen(fx.path)) == 0, "no file name: %s", msg);
    cr_expect(strstr(msg, "initializer 'w'") != NULL, "%s", msg);
    cr_expect(strstr(msg, needle) != NULL, "\"%s\" not in: %s", needle, msg);
    fixture_done(&fx);
}

Test(external, dotdot_refused)
{
    expect_external_error("../weights.bin", NULL, NULL, "leaves the model's folder");
}

Test(external, dotdot_inside_refused)
{
    expect_external_error("sub/../../x", NULL, NULL, "leaves the model's folder");
}

Test(external, absolute_path_refused)
{
    expect_external_error("/etc/passwd", NULL, NULL, "is an absolute path");
}

Test(external, offset_beyond_file)
{
    expect_external_error("weights.bin", "60", NULL, "beyond the end of the file (64 bytes)");
}

Test(external, length_mismatch)
{
    expect_external_error("weights.bin", "0", "20", "length 20 does not match the 16 bytes");
}

Test(external, bad_offset_text)
{
    expect_external_error("weights.bin", "-4", NULL, "offset '-4' is not a number");
}

Test(external, symlink_leaving_folder)
{
    char *outside = tu_tmpdir();
    char target[4200];
    snprintf(target, sizeof(target), "%s/secret.bin", outside);
    float v[16] = {0};
    cr_assert(tu_write_file(target, v, sizeof(v)));
    ext_fixture fx;
    write_external_model(&fx, "link.bin", NULL, NULL);
    char link_path[4200];
    snprintf(link_path, sizeof(link_path), "%s/link.bin", fx.dir);
    cr_assert_eq(symlink(target, link_path), 0);
    gl_model *m = NULL;
    gl_status st = gl_model_load(fx.path, NULL, &m);
    cr_expect_eq(st, GL_ERR_INPUT, "%s", gl_error_message());
    cr_expect(strstr(gl_error_message(), "outside the model's folder") != NULL, "%s",
              gl_error_message());
    fixture_done(&fx);
    tu_rmtree(outside);
    free(outside);
}

Test(external, missing_file_is_io_error)
{
    ext_fixture fx;
    write_external_model(&fx, "nothere.bin", NULL, NULL);
    gl_model *m = NULL;
    cr_expect_eq(gl_model_load(fx.path, NULL, &m), GL_ERR_IO);
    cr_expect(strstr(gl_error_message(), "nothere.bin") != NULL, "%s", gl_error_message());
    fixture_done(&fx);
}

Test(files, unreadable_and_missing)
{
    gl_model *m = NULL;
    cr_expect_eq(gl_model_load("/nonexistent/x.onnx", NULL, &m), GL_ERR_IO);
    cr_expect(strstr(gl_error_message(), "/nonexistent/x.onnx") != NULL);
    char *dir = tu_tmpdir();
    cr_expect_eq(gl_model_load(dir, NULL, &m), GL_ERR_INPUT, "a folder is not a model");
    cr_expect(strstr(gl_error_message(), ": not a regular file (a directory)") != NULL, "%s",
              gl_error_message());
    char p[4200];
    snprintf(p, sizeof(p), "%s/empty.onnx", dir);
    cr_assert(tu_write_file(p, "", 0));
    cr_expect_eq(gl_model_load(p, NULL, &m), GL_ERR_INPUT);
    cr_expect(strstr(gl_error_message(), "empty.onnx: empty file") != NULL, "%s",
              gl_error_message());
    tu_rmtree(dir);
    free(dir);
}

/* What is not a regular file is refused at once, whoever reads it: a FIFO without a
 * writer would block open() (and read()) forever. */
Test(files, fifos_are_refused_not_waited_on, .timeout = 30)
{
    char *dir = tu_tmpdir();
    char fifo[4200], model[4200], pb[4200];
    snprintf(fifo, sizeof(fifo), "%s/f", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    gl_model *m = NULL;
    cr_expect_eq(gl_model_load(fifo, NULL, &m), GL_ERR_INPUT);
    cr_expect(strstr(gl_error_message(), "/f: not a regular file (a FIFO)") != NULL, "%s",
              gl_error_message());
    gl_tensor *t = NULL;
    cr_expect_eq(gl_tensor_read_pb(fifo, &t), GL_ERR_INPUT);
    cr_expect(strstr(gl_error_message(), "/f: not a regular file (a FIFO)") != NULL, "%s",
              gl_error_message());
    /* External data: a model whose weights live in the FIFO. */
    snprintf(model, sizeof(model), "%s/m.onnx", dir);
    snprintf(pb, sizeof(pb), "%s/examples/mlp_external/model.onnx", GL_TEST_SRCDIR);
    size_t len;
    void *bytes = tu_read_file(pb, &len);
    cr_assert(bytes && tu_write_file(model, bytes, len));
    free(bytes);
    snprintf(fifo, sizeof(fifo), "%s/weights.bin", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_expect_eq(gl_model_load(model, NULL, &m), GL_ERR_INPUT);
    cr_expect(strstr(gl_error_message(), "external data 'weights.bin': not a regular file "
                                         "(a FIFO)") != NULL,
              "%s", gl_error_message());
    cr_expect_null(m);
    tu_rmtree(dir);
    free(dir);
}

/* The loader must never write its input: load a read-only copy, compare bytes. */
Test(files, input_file_untouched)
{
    char *dir = tu_tmpdir();
    char p[4200];
    snprintf(p, sizeof(p), "%s/m.onnx", dir);
    size_t len;
    Onnx__ModelProto *mp = default_input_model();
    uint8_t *buf = pack_model(mp, &len);
    onnx__model_proto__free_unpacked(mp, NULL);
    cr_assert(tu_write_file(p, buf, len));
    cr_assert_eq(chmod(p, 0400), 0);
    gl_model *m = NULL;
    cr_assert_eq(gl_model_load(p, NULL, &m), GL_OK, "%s", gl_error_message());
    size_t len2;
    uint8_t *after = tu_read_file(p, &len2);
    cr_expect(len2 == len && memcmp(after, buf, len) == 0);
    gl_model_free(m);
    free(after);
    free(buf);
    tu_rmtree(dir);
    free(dir);
}

/* ==== the model corpora =================================================================== */

/* The top-level "node_count" of info.json (the first occurrence of the key). */
static long info_node_count(const char *info_path)
{
    size_t len;
    char *text = tu_read_file(info_path, &len);
    if (!text)
        return -1;
    text = realloc(text, len + 1);
    text[len] = 0;
    const char *p = strstr(text, "\"node_count\"");
    long n = -1;
    if (p && (p = strchr(p, ':')))
        n = strtol(p + 1, NULL, 10);
    free(text);
    return n;
}

/* Every NAME/model.onnx of the corpus folder `models` loads and verifies, with the node
 * count of NAME/info.json, initializers, and a name on every node; returns how many. */
static int load_and_verify_corpus(const char *models)
{
    DIR *d = opendir(models);
    cr_assert_not_null(d, "%s", models);
    int loaded = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[8600], info[8600];
        snprintf(path, sizeof(path), "%s/%s/model.onnx", models, e->d_name);
        snprintf(info, sizeof(info), "%s/%s/info.json", models, e->d_name);
        if (e->d_name[0] == '.' || access(path, R_OK) != 0)
            continue;
        gl_model *m = NULL;
        gl_status st = gl_model_load(path, NULL, &m);
        cr_expect_eq(st, GL_OK, "%s: %s", e->d_name, gl_error_message());
        if (st != GL_OK)
            continue;
        cr_expect_eq(gl_graph_verify(m->graph, false), GL_OK, "%s: %s", e->d_name,
                     gl_error_message());
        long want = info_node_count(info);
        cr_expect_gt(want, 0, "%s: no node_count in info.json", e->d_name);
        cr_expect_eq((long)gl_graph_count_nodes(m->graph, true), want, "%s: node count",
                     e->d_name);
        cr_expect_gt(m->graph->n_inits, 0, "%s: initializers", e->d_name);
        for (size_t i = 0; i < m->graph->n_nodes; i++)
            cr_expect(m->graph->nodes[i]->name && *m->graph->nodes[i]->name);
        gl_model_free(m);
        loaded++;
    }
    closedir(d);
    return loaded;
}

Test(corpora, load_and_verify, .timeout = 120)
{
    const char *dirs[2];
    size_t n = tu_model_corpora(dirs);
    for (size_t i = 0; i < n; i++)
        cr_expect_gt(load_and_verify_corpus(dirs[i]), 0, "no model loaded from %s", dirs[i]);
}

/* A model whose one initializer is `floats` floats (x + w), written by a child process:
 * building it leaves this process's high-water mark where it was. */
static void write_big_model(const char *path, int64_t floats)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
    if (pid == 0) {
        gl_model *m = tu_model(13);
        float *w = calloc((size_t)floats, sizeof(float));
        for (int64_t i = 0; w && i < floats; i++)
            w[i] = (float)(i % 1000) / 1000.0f; /* not all zeros: no encoding shortcut */
        gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, &floats);
        gl_node *add = tu_node(m->graph, "Add", "add", 2, x,
                               tu_const_f32(m->graph, "w", 1, &floats, w));
        tu_output(m->graph, add->outputs[0]);
        _exit(w && gl_model_save(m, path, NULL) == GL_OK ? 0 : 1);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "could not write %s", path);
}

/* How much loading `path` grows the high-water mark of a process of its own (a fork: no
 * earlier peak of this one hides it), in bytes; -1 when the load fails. */
static double load_peak_growth(const char *path)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
    if (pid == 0) {
        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        gl_model *m = NULL;
        double grown = -1;
        if (gl_model_load(path, NULL, &m) == GL_OK) {
            getrusage(RUSAGE_SELF, &after);
            grown = (double)(after.ru_maxrss - before.ru_maxrss) * 1024.0;
        }
        _exit(write(fds[1], &grown, sizeof(grown)) == sizeof(grown) ? 0 : 1);
    }
    close(fds[1]);
    double grown = -1;
    ssize_t got = read(fds[0], &grown, sizeof(grown));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(got == sizeof(grown) && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "%s: the measuring process failed", path);
    return grown;
}

/* Peak memory: loading may not hold much more than the unpacked copy and the file; on a
 * generated 16 MB model, and on the shared mobilenet_v2 when present. */
Test(corpora, peak_rss_under_2_5x_file, .timeout = 120)
{
    char *dir = tu_tmpdir();
    char big[4200], mobilenet[4200];
    snprintf(big, sizeof(big), "%s/big.onnx", dir);
    write_big_model(big, 4 << 20);
    const char *paths[2] = {big, NULL};
    if (tu_shared()) {
        snprintf(mobilenet, sizeof(mobilenet), "%s/models/mobilenet_v2/model.onnx",
                 tu_shared());
        paths[1] = access(mobilenet, R_OK) == 0 ? mobilenet : NULL;
    }
    for (size_t i = 0; i < 2 && paths[i]; i++) {
        struct stat st;
        cr_assert_eq(stat(paths[i], &st), 0, "%s", paths[i]);
        double grown = load_peak_growth(paths[i]);
        cr_expect_geq(grown, 0, "%s does not load", paths[i]);
        cr_expect_lt(grown, 2.5 * (double)st.st_size,
                     "%s: peak grew by %.1f MB for a %.1f MB file", paths[i], grown / 1e6,
                     (double)st.st_size / 1e6);
    }
    tu_rmtree(dir);
    free(dir);
}

/* Every model of the ONNX node test suite loads and verifies, in file order. */
Test(corpora, conformance_models_load, .timeout = 120)
{
    const char *node_dir = tu_conformance();
    if (!node_dir)
        cr_skip_test(TU_NO_CONFORMANCE);
    DIR *d = opendir(node_dir);
    cr_assert_not_null(d, "%s", node_dir);
    int loaded = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[8600];
        snprintf(path, sizeof(path), "%s/%s/model.onnx", node_dir, e->d_name);
        if (e->d_name[0] == '.' || access(path, R_OK) != 0)
            continue;
        gl_model *m = NULL;
        gl_status st = gl_model_load(path, NULL, &m);
        cr_expect_eq(st, GL_OK, "%s: %s", e->d_name, gl_error_message());
        if (st != GL_OK)
            continue;
        cr_expect_eq(gl_graph_verify(m->graph, false), GL_OK, "%s: %s", e->d_name,
                     gl_error_message());
        gl_model_free(m);
        loaded++;
    }
    closedir(d);
    cr_expect_gt(loaded, 0);
}

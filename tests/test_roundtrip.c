/* test_roundtrip.c — save (IR -> ModelProto -> bytes) and TensorProto files.
 *
 * The core check: load -> serialize -> load again gives the same IR, compared
 * structurally by the functions below (written against graph.h, not against the saver):
 * model fields, functions, every node in order with its attributes, the graph interface,
 * initializer bytes (bit for bit), and the type of every value. Then the file-level
 * promises: atomic writes, refusing the source file, external data (mmap'd on reload),
 * .pb tensors of every dtype, and onnx's own checker on what we write.
 */
#include <criterion/criterion.h>

#include "ir/graph.h"
#include "onnx/onnx_io.h"
#include "onnx.pb-c.h"
#include "testutil.h"

#include <dirent.h>
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- structural comparison of two IRs ---------------------------------------------- */

typedef struct diff {
    char where[768]; /* path to the place being compared */
    char msg[1400];  /* first difference found */
} diff;

static bool differ(diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool differ(diff *d, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(d->msg, sizeof(d->msg), "%s: %s", d->where, what);
    return false;
}

/* Enter a nested place; returns the old length so leave() can restore it. */
static size_t enter(diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t enter(diff *d, const char *fmt, ...)
{
    size_t len = strlen(d->where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->where + len, sizeof(d->where) - len, fmt, ap);
    va_end(ap);
    return len;
}
static void leave(diff *d, size_t len) { d->where[len] = '\0'; }

#define SAME(cond, ...)                                                                    \
    do {                                                                                   \
        if (!(cond))                                                                       \
            return differ(d, __VA_ARGS__);                                                 \
    } while (0)

/* Absent and empty strings mean the same to ONNX. */
static const char *s0(const char *s) { return s ? s : ""; }
static bool str_eq(const char *a, const char *b) { return strcmp(s0(a), s0(b)) == 0; }
static bool bytes_eq(const gl_bytes *a, const gl_bytes *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* How a value is named in the file: captures are the outer value itself. */
static const char *file_name(const gl_value *v)
{
    if (!v)
        return "";
    while (v->outer)
        v = v->outer;
    return s0(v->name);
}

static bool shape_eq(diff *d, const gl_shape *a, const gl_shape *b)
{
    SAME(a->rank == b->rank, "rank %d vs %d", a->rank, b->rank);
    for (int i = 0; i < a->rank; i++) {
        SAME(a->dims[i].value == b->dims[i].value, "dim %d: %lld vs %lld", i,
             (long long)a->dims[i].value, (long long)b->dims[i].value);
        SAME(str_eq(a->dims[i].sym, b->dims[i].sym), "dim %d: symbol '%s' vs '%s'", i,
             s0(a->dims[i].sym), s0(b->dims[i].sym));
    }
    return true;
}

static bool type_eq(diff *d, const gl_type *a, const gl_type *b)
{
    SAME(a->kind == b->kind, "type kind %d vs %d", a->kind, b->kind);
    if (a->kind == GL_TYPE_OPAQUE)
        SAME(bytes_eq(&a->opaque, &b->opaque), "opaque type bytes differ (%zu vs %zu)",
             a->opaque.len, b->opaque.len);
    if (a->kind != GL_TYPE_TENSOR)
        return true;
    SAME(a->dtype == b->dtype, "dtype %s vs %s", gl_dtype_name(a->dtype),
         gl_dtype_name(b->dtype));
    return shape_eq(d, &a->shape, &b->shape);
}

static bool tensor_eq(diff *d, const gl_tensor *a, const gl_tensor *b)
{
    SAME(a && b, "tensor present %d vs %d", a != NULL, b != NULL);
    SAME(a->dtype == b->dtype && a->rank == b->rank, "tensor %s rank %d vs %s rank %d",
         gl_dtype_name(a->dtype), a->rank, gl_dtype_name(b->dtype), b->rank);
    /* gl_tensor_equal compares bytes with memcmp: bit patterns, NaN payloads included. */
    SAME(gl_tensor_equal(a, b), "tensor dims or bytes differ (%lld vs %lld elements)",
         (long long)a->count, (long long)b->count);
    return true;
}

static bool graph_eq(diff *d, const gl_graph *a, const gl_graph *b);

static bool attr_value_eq(diff *d, const gl_attr *a, const gl_attr *b)
{
    switch (a->type) {
    case GL_ATTR_FLOAT:
        SAME(memcmp(&a->f, &b->f, sizeof(float)) == 0, "float %g vs %g", a->f, b->f);
        return true;
    case GL_ATTR_INT:
        SAME(a->i == b->i, "int %lld vs %lld", (long long)a->i, (long long)b->i);
        return true;
    case GL_ATTR_STRING:
        SAME(bytes_eq(&a->s, &b->s), "string differs");
        return true;
    case GL_ATTR_TENSOR:
        return tensor_eq(d, a->t, b->t);
    case GL_ATTR_GRAPH:
        SAME(a->g && b->g, "graph missing");
        return graph_eq(d, a->g, b->g);
    default:
        break;
    }
    SAME(a->n == b->n, "%zu vs %zu elements", a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        switch (a->type) {
        case GL_ATTR_FLOATS:
            SAME(memcmp(&a->floats[i], &b->floats[i], sizeof(float)) == 0, "float %zu", i);
            break;
        case GL_ATTR_INTS:
            SAME(a->ints[i] == b->ints[i], "int %zu", i);
            break;
        case GL_ATTR_STRINGS:
            SAME(bytes_eq(&a->strings[i], &b->strings[i]), "string %zu", i);
            break;
        case GL_ATTR_TENSORS:
            if (!tensor_eq(d, a->tensors[i], b->tensors[i]))
                return false;
            break;
        case GL_ATTR_GRAPHS:
            if (!graph_eq(d, a->graphs[i], b->graphs[i]))
                return false;
            break;
        default: /* sparse tensors and type protos: kept bytes */
            SAME(bytes_eq(&a->opaque[i], &b->opaque[i]), "kept bytes %zu differ", i);
        }
    }
    return true;
}

static bool attr_eq(diff *d, const gl_attr *a, const gl_attr *b)
{
    size_t mark = enter(d, " attribute '%s'", s0(a->name));
    SAME(str_eq(a->name, b->name), "name vs '%s'", s0(b->name));
    SAME(a->type == b->type, "type %d vs %d", a->type, b->type);
    SAME(str_eq(a->ref_attr_name, b->ref_attr_name), "ref_attr_name '%s' vs '%s'",
         s0(a->ref_attr_name), s0(b->ref_attr_name));
    SAME(str_eq(a->doc_string, b->doc_string), "doc_string differs");
    if (!a->ref_attr_name && !attr_value_eq(d, a, b))
        return false;
    leave(d, mark);
    return true;
}

static bool node_eq(diff *d, const gl_node *a, const gl_node *b)
{
    size_t mark = enter(d, " node '%s' (%s)", s0(a->name), s0(a->op_type));
    SAME(str_eq(a->name, b->name), "name vs '%s'", s0(b->name));
    SAME(str_eq(a->op_type, b->op_type), "op_type vs '%s'", s0(b->op_type));
    SAME(str_eq(a->domain, b->domain), "domain '%s' vs '%s'", s0(a->domain), s0(b->domain));
    SAME(str_eq(a->doc_string, b->doc_string), "doc_string differs");
    SAME(a->n_inputs == b->n_inputs, "%zu vs %zu inputs", a->n_inputs, b->n_inputs);
    for (size_t i = 0; i < a->n_inputs; i++)
        SAME(!strcmp(file_name(a->inputs[i]), file_name(b->inputs[i])),
             "input %zu '%s' vs '%s'", i, file_name(a->inputs[i]), file_name(b->inputs[i]));
    SAME(a->n_outputs == b->n_outputs, "%zu vs %zu outputs", a->n_outputs, b->n_outputs);
    for (size_t i = 0; i < a->n_outputs; i++)
        SAME(!strcmp(file_name(a->outputs[i]), file_name(b->outputs[i])),
             "output %zu '%s' vs '%s'", i, file_name(a->outputs[i]), file_name(b->outputs[i]));
    SAME(a->n_attrs == b->n_attrs, "%zu vs %zu attributes", a->n_attrs, b->n_attrs);
    for (size_t i = 0; i < a->n_attrs; i++)
        if (!attr_eq(d, &a->attrs[i], &b->attrs[i]))
            return false;
    leave(d, mark);
    return true;
}

/* Live nodes only: holes left by edits are not part of the graph. */
static size_t live_nodes(const gl_graph *g, const gl_node **out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i] && k < cap)
            out[k++] = g->nodes[i];
    return k;
}

static bool nodes_eq(diff *d, const gl_graph *a, const gl_graph *b)
{
    size_t cap = a->n_nodes > b->n_nodes ? a->n_nodes : b->n_nodes;
    const gl_node **na = calloc(cap + 1, sizeof(*na)), **nb = calloc(cap + 1, sizeof(*nb));
    size_t ka = live_nodes(a, na, cap), kb = live_nodes(b, nb, cap);
    bool ok = ka == kb || differ(d, "%zu vs %zu nodes", ka, kb);
    for (size_t i = 0; ok && i < ka; i++)
        ok = node_eq(d, na[i], nb[i]);
    free(na);
    free(nb);
    return ok;
}

static bool interface_eq(diff *d, const char *what, gl_value *const *a, size_t na,
                         gl_value *const *b, size_t nb)
{
    SAME(na == nb, "%zu vs %zu %s", na, nb, what);
    for (size_t i = 0; i < na; i++) {
        size_t mark = enter(d, " %s %zu '%s'", what, i, file_name(a[i]));
        SAME(!strcmp(file_name(a[i]), file_name(b[i])), "name vs '%s'", file_name(b[i]));
        SAME(str_eq(a[i]->doc_string, b[i]->doc_string), "doc_string differs");
        if (!type_eq(d, &a[i]->type, &b[i]->type))
            return false;
        leave(d, mark);
    }
    return true;
}

static bool inits_eq(diff *d, const gl_graph *a, const gl_graph *b)
{
    SAME(a->n_inits == b->n_inits, "%zu vs %zu initializers", a->n_inits, b->n_inits);
    for (size_t i = 0; i < a->n_inits; i++) {
        size_t mark = enter(d, " initializer '%s'", s0(a->inits[i]->name));
        SAME(str_eq(a->inits[i]->name, b->inits[i]->name), "name vs '%s'",
             s0(b->inits[i]->name));
        SAME(a->inits[i]->is_input == b->inits[i]->is_input, "is_input differs");
        if (!tensor_eq(d, a->inits[i]->init, b->inits[i]->init))
            return false;
        leave(d, mark);
    }
    return true;
}

static bool kept_eq(diff *d, const char *what, const gl_bytes *a, size_t na, const gl_bytes *b,
                    size_t nb)
{
    SAME(na == nb, "%zu vs %zu %s", na, nb, what);
    for (size_t i = 0; i < na; i++)
        SAME(bytes_eq(&a[i], &b[i]), "%s %zu: kept bytes differ", what, i);
    return true;
}

/* Every value the graph defines has the same type on both sides (value_info round trip). */
static bool value_types_eq(diff *d, const gl_graph *a, const gl_graph *b)
{
    for (size_t i = 0; i < a->n_values; i++) {
        const gl_value *va = a->values[i];
        if (!va || va->outer || !(va->producer || va->is_input || va->init))
            continue;
        const gl_value *vb = gl_find_value(b, va->name);
        SAME(vb, "value '%s' missing", va->name);
        size_t mark = enter(d, " value '%s'", va->name);
        if (!type_eq(d, &va->type, &vb->type))
            return false;
        leave(d, mark);
    }
    return true;
}

static bool graph_eq(diff *d, const gl_graph *a, const gl_graph *b)
{
    size_t mark = enter(d, " graph '%s'", s0(a->name));
    SAME(str_eq(a->name, b->name), "name vs '%s'", s0(b->name));
    SAME(str_eq(a->doc_string, b->doc_string), "doc_string differs");
    if (!nodes_eq(d, a, b) ||
        !interface_eq(d, "input", a->inputs, a->n_inputs, b->inputs, b->n_inputs) ||
        !interface_eq(d, "output", a->outputs, a->n_outputs, b->outputs, b->n_outputs) ||
        !inits_eq(d, a, b) || !value_types_eq(d, a, b) ||
        !kept_eq(d, "sparse initializers", a->sparse_inits, a->n_sparse_inits,
                 b->sparse_inits, b->n_sparse_inits) ||
        !kept_eq(d, "quantization annotations", a->quant_annotations,
                 a->n_quant_annotations, b->quant_annotations, b->n_quant_annotations))
        return false;
    SAME(a->n_captures == b->n_captures, "%zu vs %zu captures", a->n_captures, b->n_captures);
    for (size_t i = 0; i < a->n_captures; i++)
        SAME(!strcmp(file_name(a->captures[i]), file_name(b->captures[i])),
             "capture %zu '%s' vs '%s'", i, file_name(a->captures[i]),
             file_name(b->captures[i]));
    leave(d, mark);
    return true;
}

static bool opsets_eq(diff *d, const gl_opset *a, size_t na, const gl_opset *b, size_t nb)
{
    SAME(na == nb, "%zu vs %zu opset imports", na, nb);
    for (size_t i = 0; i < na; i++)
        SAME(str_eq(a[i].domain, b[i].domain) && a[i].version == b[i].version,
             "opset %zu: '%s' %lld vs '%s' %lld", i, s0(a[i].domain),
             (long long)a[i].version, s0(b[i].domain), (long long)b[i].version);
    return true;
}

static bool function_eq(diff *d, const gl_function *a, const gl_function *b)
{
    size_t mark = enter(d, " function '%s'", s0(a->name));
    SAME(str_eq(a->name, b->name) && str_eq(a->domain, b->domain), "name/domain vs '%s' '%s'",
         s0(b->name), s0(b->domain));
    SAME(str_eq(a->doc_string, b->doc_string), "doc_string differs");
    SAME(a->n_attributes == b->n_attributes, "%zu vs %zu attribute names", a->n_attributes,
         b->n_attributes);
    for (size_t i = 0; i < a->n_attributes; i++)
        SAME(str_eq(a->attributes[i], b->attributes[i]), "attribute name %zu", i);
    if (!opsets_eq(d, a->opsets, a->n_opsets, b->opsets, b->n_opsets))
        return false;
    SAME(!a->body == !b->body, "body present %d vs %d", a->body != NULL, b->body != NULL);
    if (a->body) {
        const gl_graph *ga = a->body, *gb = b->body;
        SAME(ga->n_inputs == gb->n_inputs && ga->n_outputs == gb->n_outputs,
             "%zu/%zu vs %zu/%zu parameters", ga->n_inputs, ga->n_outputs, gb->n_inputs,
             gb->n_outputs);
        for (size_t i = 0; i < ga->n_inputs; i++)
            SAME(!strcmp(file_name(ga->inputs[i]), file_name(gb->inputs[i])), "input %zu", i);
        for (size_t i = 0; i < ga->n_outputs; i++)
            SAME(!strcmp(file_name(ga->outputs[i]), file_name(gb->outputs[i])), "output %zu",
                 i);
        if (!nodes_eq(d, ga, gb))
            return false;
    }
    leave(d, mark);
    return true;
}

static bool model_eq(diff *d, const gl_model *a, const gl_model *b)
{
    d->where[0] = d->msg[0] = '\0';
    enter(d, "model");
    SAME(a->ir_version == b->ir_version, "ir_version %lld vs %lld", (long long)a->ir_version,
         (long long)b->ir_version);
    if (!opsets_eq(d, a->opsets, a->n_opsets, b->opsets, b->n_opsets))
        return false;
    SAME(str_eq(a->producer_name, b->producer_name) &&
             str_eq(a->producer_version, b->producer_version),
         "producer '%s' '%s' vs '%s' '%s'", s0(a->producer_name), s0(a->producer_version),
         s0(b->producer_name), s0(b->producer_version));
    SAME(str_eq(a->domain, b->domain), "domain '%s' vs '%s'", s0(a->domain), s0(b->domain));
    SAME(str_eq(a->doc_string, b->doc_string), "doc_string differs");
    SAME(a->has_model_version == b->has_model_version &&
             (!a->has_model_version || a->model_version == b->model_version),
         "model_version differs");
    SAME(a->n_metadata == b->n_metadata, "%zu vs %zu metadata", a->n_metadata, b->n_metadata);
    for (size_t i = 0; i < a->n_metadata; i++)
        SAME(str_eq(a->metadata[i].key, b->metadata[i].key) &&
                 str_eq(a->metadata[i].value, b->metadata[i].value),
             "metadata %zu '%s'", i, s0(a->metadata[i].key));
    SAME(a->graph && b->graph, "graph missing");
    if (!graph_eq(d, a->graph, b->graph))
        return false;
    SAME(a->n_functions == b->n_functions, "%zu vs %zu functions", a->n_functions,
         b->n_functions);
    for (size_t i = 0; i < a->n_functions; i++)
        if (!function_eq(d, &a->functions[i], &b->functions[i]))
            return false;
    return kept_eq(d, "training_info", a->training_info, a->n_training_info,
                   b->training_info, b->n_training_info);
}

/* ---- model lists ------------------------------------------------------------------- */

typedef struct path_list {
    char **paths;
    size_t n;
} path_list;

static void list_glob(path_list *l, const char *pattern)
{
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0) {
        l->paths = realloc(l->paths, (l->n + g.gl_pathc) * sizeof(char *));
        for (size_t i = 0; i < g.gl_pathc; i++)
            l->paths[l->n++] = strdup(g.gl_pathv[i]);
    }
    globfree(&g);
}

static void list_free(path_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    l->paths = NULL;
    l->n = 0;
}

static path_list example_models(void)
{
    path_list l = {0};
    list_glob(&l, tu_src("examples/*/model.onnx"));
    list_glob(&l, tu_src("examples/*.onnx"));
    /* Placeholders of zero bytes are not models yet. */
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++) {
        struct stat st;
        if (stat(l.paths[i], &st) == 0 && st.st_size > 0)
            l.paths[k++] = l.paths[i];
        else
            free(l.paths[i]);
    }
    l.n = k;
    return l;
}

/* The paths that match `rel` in the model corpora (in-tree, then ../shared/models when
 * present). */
static path_list corpus_glob(const char *rel)
{
    path_list l = {0};
    const char *dirs[2];
    size_t n = tu_model_corpora(dirs);
    for (size_t i = 0; i < n; i++) {
        char pattern[8400];
        snprintf(pattern, sizeof(pattern), "%s/%s", dirs[i], rel);
        list_glob(&l, pattern);
    }
    return l;
}

/* The paths that match `rel` among the conformance cases (none when there are none). */
static path_list conformance_glob(const char *rel)
{
    path_list l = {0};
    const char *dir = tu_conformance();
    if (dir) {
        char pattern[8400];
        snprintf(pattern, sizeof(pattern), "%s/%s", dir, rel);
        list_glob(&l, pattern);
    }
    return l;
}

/* ---- the round trip ------------------------------------------------------------------- */

typedef enum { RT_SAME, RT_UNLOADABLE, RT_FAILED } rt_result;

/* Whether `bytes` are what protobuf-c packs for the model they hold: the saver streams the
 * top graph's nodes and value_info one at a time (save.c) and must write what packing
 * the whole tree would. */
static bool packs_as_protobuf_c(const uint8_t *bytes, size_t len)
{
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
    if (!mp)
        return false;
    size_t n = onnx__model_proto__get_packed_size(mp);
    uint8_t *again = malloc(n ? n : 1);
    bool same = n == len && onnx__model_proto__pack(mp, again) == len &&
                memcmp(again, bytes, len) == 0;
    free(again);
    onnx__model_proto__free_unpacked(mp, NULL);
    return same;
}

/* load -> serialize -> load from memory (no folder: nothing may stay external) -> compare. */
static rt_result roundtrip_one(const char *path, char *why, size_t why_len)
{
    gl_model *a = NULL, *b = NULL;
    if (gl_model_load(path, NULL, &a) != GL_OK) {
        snprintf(why, why_len, "%s", gl_error_message());
        return RT_UNLOADABLE;
    }
    uint8_t *bytes = NULL;
    size_t len = 0;
    rt_result r = RT_FAILED;
    if (gl_model_serialize(a, &bytes, &len) != GL_OK)
        snprintf(why, why_len, "serialize: %s", gl_error_message());
    else if (!packs_as_protobuf_c(bytes, len))
        snprintf(why, why_len, "serialized bytes differ from protobuf-c's packing of them");
    else if (gl_model_load_buffer(bytes, len, path, NULL, NULL, &b) != GL_OK)
        snprintf(why, why_len, "reload: %s", gl_error_message());
    else {
        diff d;
        if (model_eq(&d, a, b))
            r = RT_SAME;
        else
            snprintf(why, why_len, "%s", d.msg);
    }
    free(bytes);
    gl_model_free(a);
    gl_model_free(b);
    return r;
}

/* Round-trip every model; models the loader refuses are counted, not failed (the loader
 * has its own tests). Returns how many were the same. */
static size_t roundtrip_all(const path_list *l, size_t *unloadable)
{
    size_t same = 0;
    *unloadable = 0;
    for (size_t i = 0; i < l->n; i++) {
        char why[1500] = "";
        rt_result r = roundtrip_one(l->paths[i], why, sizeof(why));
        if (r == RT_UNLOADABLE) {
            ++*unloadable;
            /* info, not warn: criterion 2.4 ends with status 1 after any warning */
            cr_log_info("%s: not loadable, skipped: %s", l->paths[i], why);
            continue;
        }
        cr_expect(r == RT_SAME, "%s: %s", l->paths[i], why);
        same += r == RT_SAME;
    }
    return same;
}

Test(roundtrip, examples)
{
    path_list l = example_models();
    if (l.n == 0)
        cr_skip_test("no example models in %s", tu_src("examples"));
    size_t unloadable, same = roundtrip_all(&l, &unloadable);
    cr_expect_eq(unloadable, 0, "every shipped example must load");
    cr_expect_eq(same, l.n, "%zu of %zu examples round-trip", same, l.n);
    list_free(&l);
}

Test(roundtrip, corpora)
{
    path_list l = corpus_glob("*/model.onnx");
    cr_assert_gt(l.n, 0, "no models in the corpora");
    size_t unloadable, same = roundtrip_all(&l, &unloadable);
    cr_expect_eq(unloadable, 0, "every model of the corpora must load");
    cr_expect_eq(same, l.n, "%zu of %zu models round-trip", same, l.n);
    list_free(&l);
}

Test(roundtrip, conformance_cases, .timeout = 300)
{
    path_list l = conformance_glob("*/model.onnx");
    if (l.n == 0)
        cr_skip_test(TU_NO_CONFORMANCE);
    size_t unloadable, same = roundtrip_all(&l, &unloadable);
    cr_log_info("conformance: %zu of %zu round-trip, %zu not loadable", same, l.n,
                unloadable);
    cr_expect_eq(same + unloadable, l.n, "%zu of %zu loadable cases round-trip", same,
                 l.n - unloadable);
    /* The loader refusing most of the suite would make this test pass vacuously. */
    cr_expect(same > l.n * 9 / 10, "only %zu of %zu cases loaded", same, l.n);
    list_free(&l);
}

/* ---- saving to files ------------------------------------------------------------------ */

static gl_model *load_or_die(const char *path)
{
    gl_model *m = NULL;
    gl_status st = gl_model_load(path, NULL, &m);
    cr_assert_eq(st, GL_OK, "%s: %s", path, gl_error_message());
    return m;
}

static const char *first_example(void)
{
    static char path[4096];
    path_list l = example_models();
    if (l.n == 0) {
        path_list s = corpus_glob("*/model.onnx");
        if (s.n == 0)
            cr_skip_test("no example or corpus model to save");
        snprintf(path, sizeof(path), "%s", s.paths[0]);
        list_free(&s);
    } else {
        snprintf(path, sizeof(path), "%s", l.paths[0]);
    }
    list_free(&l);
    return path;
}

/* Names in `dir` containing ".tmp." (what an interrupted atomic write would leave). */
static int count_temp_files(const char *dir)
{
    DIR *dp = opendir(dir);
    cr_assert(dp, "cannot list %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(dp);
    return n;
}

static bool files_equal(const char *p, const char *q)
{
    size_t lp, lq;
    void *a = tu_read_file(p, &lp), *b = tu_read_file(q, &lq);
    bool same = a && b && lp == lq && memcmp(a, b, lp) == 0;
    free(a);
    free(b);
    return same;
}

static void copy_file(const char *from, const char *to)
{
    size_t len;
    void *data = tu_read_file(from, &len);
    cr_assert(data, "cannot read %s", from);
    cr_assert(tu_write_file(to, data, len), "cannot write %s", to);
    free(data);
}

Test(save, file_loads_back_and_no_temp_file_is_left)
{
    const char *src = first_example();
    gl_model *a = load_or_die(src);
    char *dir = tu_tmpdir();
    char out[4200];
    snprintf(out, sizeof(out), "%s/saved.onnx", dir);
    cr_assert_eq(gl_model_save(a, out, NULL), GL_OK, "%s", gl_error_message());
    /* Saving again replaces the file (the same bytes: saving is deterministic). */
    char again[4200];
    snprintf(again, sizeof(again), "%s/again.onnx", dir);
    cr_assert_eq(gl_model_save(a, again, NULL), GL_OK, "%s", gl_error_message());
    cr_expect(files_equal(out, again), "two saves of one model differ");
    cr_assert_eq(gl_model_save(a, out, NULL), GL_OK, "overwrite: %s", gl_error_message());
    cr_expect_eq(count_temp_files(dir), 0, "a temporary file was left in %s", dir);
    struct stat st;
    cr_assert_eq(stat(out, &st), 0);
    cr_expect(st.st_mode & 0044, "saved file is not readable by others (mode %o)",
              (unsigned)st.st_mode & 0777);
    gl_model *b = load_or_die(out);
    diff d;
    cr_expect(model_eq(&d, a, b), "%s: %s", src, d.msg);
    gl_model_free(a);
    gl_model_free(b);
    tu_rmtree(dir);
    free(dir);
}

Test(save, refuses_to_overwrite_the_source_model)
{
    char *dir = tu_tmpdir();
    char path[4200], alias[4300], link[4300];
    snprintf(path, sizeof(path), "%s/a.onnx", dir);
    copy_file(first_example(), path);
    gl_model *m = load_or_die(path);
    snprintf(alias, sizeof(alias), "%s/./a.onnx", dir);
    snprintf(link, sizeof(link), "%s/link.onnx", dir);
    cr_assert_eq(symlink("a.onnx", link), 0);
    size_t len_before;
    void *before = tu_read_file(path, &len_before);
    const char *targets[] = {path, alias, link};
    for (size_t i = 0; i < GL_ARRAY_LEN(targets); i++) {
        gl_status st = gl_model_save(m, targets[i], NULL);
        cr_expect_eq(st, GL_ERR_INPUT, "%s: saving onto the source gave %s", targets[i],
                     gl_status_name(st));
        cr_expect(strstr(gl_error_message(), targets[i]), "message does not name %s: %s",
                  targets[i], gl_error_message());
    }
    /* A relative spelling of the same file, from inside its folder. */
    cr_assert_eq(chdir(dir), 0);
    cr_expect_eq(gl_model_save(m, "a.onnx", NULL), GL_ERR_INPUT);
    cr_expect_eq(gl_model_save(m, "./a.onnx", NULL), GL_ERR_INPUT);
    size_t len_after;
    void *after = tu_read_file(path, &len_after);
    cr_expect(after && len_after == len_before && !memcmp(before, after, len_before),
              "the source file changed");
    cr_expect_eq(count_temp_files(dir), 0);
    free(before);
    free(after);
    gl_model_free(m);
    tu_rmtree(dir);
    free(dir);
}

Test(save, failures_leave_no_file)
{
    gl_model *m = load_or_die(first_example());
    char *dir = tu_tmpdir();
    char missing[4200], sub[4200];
    snprintf(missing, sizeof(missing), "%s/no/such/folder/m.onnx", dir);
    gl_status st = gl_model_save(m, missing, NULL);
    cr_expect_eq(st, GL_ERR_IO, "got %s", gl_status_name(st));
    cr_expect(strstr(gl_error_message(), missing) && strstr(gl_error_message(), "No such"),
              "message: %s", gl_error_message());
    /* A folder where the file should go: the temporary file is made, rename fails. */
    snprintf(sub, sizeof(sub), "%s/taken.onnx", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    st = gl_model_save(m, sub, NULL);
    cr_expect_eq(st, GL_ERR_IO, "got %s: %s", gl_status_name(st), gl_error_message());
    cr_expect(strstr(gl_error_message(), sub), "message: %s", gl_error_message());
    cr_expect_eq(count_temp_files(dir), 0, "a temporary file was left");
    cr_expect_eq(gl_model_save(m, "", NULL), GL_ERR_INPUT);
    gl_model_free(m);
    tu_rmtree(dir);
    free(dir);
}

/* ---- external data ---------------------------------------------------------------------- */

static Onnx__ModelProto *unpack_file(const char *path)
{
    size_t len;
    void *data = tu_read_file(path, &len);
    cr_assert(data, "cannot read %s", path);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
    free(data);
    cr_assert(mp, "%s does not parse as a ModelProto", path);
    return mp;
}

static const char *entry(const Onnx__TensorProto *tp, const char *key)
{
    for (size_t i = 0; i < tp->n_external_data; i++)
        if (!strcmp(tp->external_data[i]->key, key))
            return tp->external_data[i]->value;
    return NULL;
}

static const char *model_with_weights(void)
{
    static char path[4200];
    path_list l = corpus_glob("mlp_ffn/model.onnx");
    if (l.n == 0)
        l = corpus_glob("mlp_ffn_mini/model.onnx");
    if (l.n == 0)
        cr_skip_test("no model with weights");
    snprintf(path, sizeof(path), "%s", l.paths[0]);
    list_free(&l);
    return path;
}

Test(save, external_data_round_trip)
{
    const char *src = model_with_weights();
    gl_model *a = load_or_die(src);
    const size_t threshold = 256;
    char *dir = tu_tmpdir();
    char out[4200], data[4300];
    snprintf(out, sizeof(out), "%s/ext.onnx", dir);
    snprintf(data, sizeof(data), "%s.data", out);
    gl_save_options opts = {.external_threshold = threshold};
    cr_assert_eq(gl_model_save(a, out, &opts), GL_OK, "%s", gl_error_message());
    cr_expect_eq(count_temp_files(dir), 0);
    struct stat st;
    cr_assert_eq(stat(data, &st), 0, "no %s", data);

    /* In the file: big tensors external, at aligned offsets, inside the data file. */
    Onnx__ModelProto *mp = unpack_file(out);
    size_t n_ext = 0;
    for (size_t i = 0; i < mp->graph->n_initializer; i++) {
        const Onnx__TensorProto *tp = mp->graph->initializer[i];
        if (tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
            cr_expect(tp->has_raw_data || tp->n_string_data,
                      "%s: inline tensor without raw_data", tp->name);
            continue;
        }
        n_ext++;
        cr_expect(!tp->has_raw_data, "%s: external tensor also has raw_data", tp->name);
        cr_expect_str_eq(entry(tp, "location"), "ext.onnx.data");
        const char *off = entry(tp, "offset"), *len = entry(tp, "length");
        cr_assert(off && len, "%s: offset/length missing", tp->name);
        unsigned long long o = strtoull(off, NULL, 10), n = strtoull(len, NULL, 10);
        cr_expect_eq(o % 4096, 0, "%s: offset %llu not aligned", tp->name, o);
        cr_expect(o + n <= (unsigned long long)st.st_size, "%s: past the end", tp->name);
        cr_expect(n >= threshold, "%s: %llu bytes went external", tp->name, n);
    }
    cr_expect(n_ext > 0, "no tensor went external with threshold %zu", threshold);
    onnx__model_proto__free_unpacked(mp, NULL);

    /* Reloaded: same IR; the external tensors are read-only mappings. */
    gl_model *b = load_or_die(out);
    diff d;
    cr_expect(model_eq(&d, a, b), "%s: %s", src, d.msg);
    size_t mapped = 0;
    for (size_t i = 0; i < b->graph->n_inits; i++) {
        const gl_tensor *t = b->graph->inits[i]->init;
        if (gl_tensor_nbytes(t) < threshold || t->dtype == GL_DT_STRING)
            continue;
        cr_expect(t->external, "%s: not marked external", b->graph->inits[i]->name);
        cr_expect(t->buf && t->buf->kind == GL_BUF_MMAP && t->buf->readonly,
                  "%s: external tensor is not a read-only mapping", b->graph->inits[i]->name);
        mapped++;
    }
    cr_expect_eq(mapped, n_ext);

    /* Saved again elsewhere with no threshold: tensors loaded as external stay external,
     * and the copy is self-contained (its own data file). Serialized: all inline. */
    char out2[4200];
    snprintf(out2, sizeof(out2), "%s/copy.onnx", dir);
    cr_assert_eq(gl_model_save(b, out2, NULL), GL_OK, "%s", gl_error_message());
    char data2[4300];
    snprintf(data2, sizeof(data2), "%s.data", out2);
    cr_expect_eq(stat(data2, &st), 0, "tensors loaded as external were inlined");
    uint8_t *bytes;
    size_t nbytes;
    cr_assert_eq(gl_model_serialize(b, &bytes, &nbytes), GL_OK);
    gl_model *c = NULL;
    cr_assert_eq(gl_model_load_buffer(bytes, nbytes, "mem", NULL, NULL, &c), GL_OK,
                 "serialized model still needs external data: %s", gl_error_message());
    cr_expect(model_eq(&d, a, c), "inline copy: %s", d.msg);
    free(bytes);
    gl_model *e = load_or_die(out2);
    cr_expect(model_eq(&d, a, e), "copy: %s", d.msg);
    gl_model_free(e);
    gl_model_free(c);
    gl_model_free(b);
    gl_model_free(a);
    tu_rmtree(dir);
    free(dir);
}

/* ---- what the saver writes, checked on the proto itself ------------------------------ */

/* Names visible in a graph: its own inputs, initializers and node outputs, then the
 * enclosing scopes'. */
typedef struct scope {
    const struct scope *up;
    const Onnx__GraphProto *g;
} scope;

static bool graph_defines(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_input; i++)
        if (!strcmp(g->input[i]->name, name))
            return true;
    for (size_t i = 0; i < g->n_initializer; i++)
        if (!strcmp(g->initializer[i]->name, name))
            return true;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (!strcmp(g->node[i]->output[k], name))
                return true;
    return false;
}

static bool visible(const scope *s, const char *name)
{
    for (; s; s = s->up)
        if (graph_defines(s->g, name))
            return true;
    return false;
}

/* Every input is defined in scope; value_info never repeats the interface; subgraphs
 * declare none of the outer names they read. Returns the number of problems. */
static int check_scopes(const char *file, const Onnx__GraphProto *g, const scope *up)
{
    scope here = {up, g};
    int bad = 0;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        for (size_t k = 0; k < n->n_input; k++) {
            if (n->input[k][0] && !visible(&here, n->input[k])) {
                cr_expect_fail("%s: graph '%s': node '%s' reads undefined '%s'", file,
                               s0(g->name), s0(n->name), n->input[k]);
                bad++;
            }
        }
        for (size_t a = 0; a < n->n_attribute; a++) {
            const Onnx__AttributeProto *ap = n->attribute[a];
            if (ap->g)
                bad += check_scopes(file, ap->g, &here);
            for (size_t k = 0; k < ap->n_graphs; k++)
                bad += check_scopes(file, ap->graphs[k], &here);
        }
    }
    for (size_t i = 0; i < g->n_value_info; i++) {
        const char *name = g->value_info[i]->name;
        bool interface = false;
        for (size_t k = 0; k < g->n_input; k++)
            interface |= !strcmp(g->input[k]->name, name);
        for (size_t k = 0; k < g->n_output; k++)
            interface |= !strcmp(g->output[k]->name, name);
        for (size_t k = 0; k < g->n_initializer; k++)
            interface |= !strcmp(g->initializer[k]->name, name);
        if (interface || !graph_defines(g, name)) {
            cr_expect_fail("%s: graph '%s': value_info '%s' is %s", file, s0(g->name), name,
                           interface ? "an input/output/initializer" : "not defined here");
            bad++;
        }
    }
    return bad;
}

Test(save, saved_graphs_are_well_scoped)
{
    path_list l = example_models();
    path_list s = corpus_glob("*/model.onnx");
    path_list c = conformance_glob("test_*if*/model.onnx");
    path_list c2 = conformance_glob("test_*loop*/model.onnx");
    path_list c3 = conformance_glob("test_scan*/model.onnx");
    path_list *lists[] = {&l, &s, &c, &c2, &c3};
    size_t checked = 0;
    for (size_t li = 0; li < GL_ARRAY_LEN(lists); li++) {
        for (size_t i = 0; i < lists[li]->n; i++) {
            const char *path = lists[li]->paths[i];
            gl_model *m = NULL;
            if (gl_model_load(path, NULL, &m) != GL_OK)
                continue;
            uint8_t *bytes;
            size_t len;
            cr_assert_eq(gl_model_serialize(m, &bytes, &len), GL_OK, "%s: %s", path,
                         gl_error_message());
            Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
            cr_assert(mp, "%s: saved bytes do not parse", path);
            check_scopes(path, mp->graph, NULL);
            checked++;
            onnx__model_proto__free_unpacked(mp, NULL);
            free(bytes);
            gl_model_free(m);
        }
        list_free(lists[li]);
    }
    if (checked == 0)
        cr_skip_test("no models to check");
}

/* A model built in C: which values get value_info, and how dims are spelled. */
static gl_model *typed_chain(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 3, (int64_t[]){-1, 3, -1});
    gl_dim_set_sym(&x->type.shape.dims[0], "N");
    gl_node *relu = tu_node(g, "Relu", "relu", 1, x);
    gl_node *neg = tu_node(g, "Neg", "neg", 1, relu->outputs[0]);
    gl_node *abs = tu_node(g, "Abs", "abs", 1, neg->outputs[0]);
    gl_node *out = tu_node(g, "Identity", "out", 1, abs->outputs[0]);
    /* relu: full type; neg: dtype only (rank unknown); abs: nothing known. */
    gl_value *r = relu->outputs[0], *n = neg->outputs[0];
    r->type.kind = GL_TYPE_TENSOR;
    r->type.dtype = GL_DT_FLOAT;
    gl_shape_copy(&r->type.shape, &x->type.shape);
    n->type.kind = GL_TYPE_TENSOR;
    n->type.dtype = GL_DT_FLOAT;
    gl_shape_init_unknown(&n->type.shape);
    gl_type_copy(&out->outputs[0]->type, &x->type);
    tu_output(g, out->outputs[0]);
    return m;
}

static const Onnx__ValueInfoProto *find_vi(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_value_info; i++)
        if (!strcmp(g->value_info[i]->name, name))
            return g->value_info[i];
    return NULL;
}

Test(save, value_info_for_every_typed_value)
{
    gl_model *m = typed_chain();
    const char *relu_out = m->graph->nodes[0]->outputs[0]->name;
    const char *neg_out = m->graph->nodes[1]->outputs[0]->name;
    const char *abs_out = m->graph->nodes[2]->outputs[0]->name;
    char *dir = tu_tmpdir();
    char path[4200];
    snprintf(path, sizeof(path), "%s/chain.onnx", dir);
    cr_assert_eq(gl_model_save(m, path, NULL), GL_OK, "%s", gl_error_message());
    Onnx__ModelProto *mp = unpack_file(path);
    const Onnx__GraphProto *g = mp->graph;
    cr_expect_eq(g->n_value_info, 2, "value_info for relu and neg only, got %zu",
                 g->n_value_info);
    const Onnx__ValueInfoProto *vr = find_vi(g, relu_out), *vn = find_vi(g, neg_out);
    cr_assert(vr && vn, "value_info missing for '%s' or '%s'", relu_out, neg_out);
    cr_expect_null(find_vi(g, abs_out), "an untyped value got value_info");
    cr_expect_null(find_vi(g, "x"), "an input got value_info");
    /* relu: float[N,3,?] — a symbol, a number, an empty dim. */
    const Onnx__TypeProto__Tensor *tr = vr->type->tensor_type;
    cr_assert(tr && tr->shape && tr->shape->n_dim == 3);
    cr_expect_eq(tr->elem_type, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    cr_expect_eq(tr->shape->dim[0]->value_case,
                 ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM);
    cr_expect_str_eq(tr->shape->dim[0]->dim_param, "N");
    cr_expect_eq(tr->shape->dim[1]->value_case,
                 ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE);
    cr_expect_eq(tr->shape->dim[1]->dim_value, 3);
    cr_expect_eq(tr->shape->dim[2]->value_case,
                 ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET);
    /* neg: rank unknown -> no shape at all. */
    cr_expect(vn->type->tensor_type && vn->type->tensor_type->has_elem_type &&
                  vn->type->tensor_type->shape == NULL,
              "unknown rank must be written without a shape");
    cr_expect_eq(g->n_input, 1);
    cr_expect_eq(g->n_output, 1);
    onnx__model_proto__free_unpacked(mp, NULL);

    gl_save_options opts = {.no_value_info = true};
    cr_assert_eq(gl_model_save(m, path, &opts), GL_OK, "%s", gl_error_message());
    mp = unpack_file(path);
    cr_expect_eq(mp->graph->n_value_info, 0, "no_value_info still wrote value_info");
    onnx__model_proto__free_unpacked(mp, NULL);
    gl_model_free(m);
    tu_rmtree(dir);
    free(dir);
}

Test(save, holes_and_omitted_optionals)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_node *dead = tu_node(g, "Neg", "dead", 1, x);
    gl_value *clip_in[3] = {x, NULL, NULL};
    gl_value *hi = tu_const_f32(g, "hi", 0, NULL, (float[]){6});
    clip_in[2] = hi;
    gl_node *clip = gl_add_node(g, "Clip", "", "clip", clip_in, 3, 1);
    tu_output(g, clip->outputs[0]);
    cr_assert_eq(gl_remove_node(g, dead), GL_OK, "%s", gl_error_message());
    uint8_t *bytes;
    size_t len;
    cr_assert_eq(gl_model_serialize(m, &bytes, &len), GL_OK, "%s", gl_error_message());
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
    cr_assert(mp);
    cr_assert_eq(mp->graph->n_node, 1, "the removed node's hole was written");
    const Onnx__NodeProto *n = mp->graph->node[0];
    cr_assert_eq(n->n_input, 3);
    cr_expect_str_eq(n->input[0], "x");
    cr_expect_str_eq(n->input[1], "", "an omitted optional input is written as \"\"");
    cr_expect_str_eq(n->input[2], "hi");
    cr_expect_eq(mp->graph->n_initializer, 1);
    cr_expect_str_eq(mp->graph->initializer[0]->name, "hi");
    onnx__model_proto__free_unpacked(mp, NULL);
    free(bytes);
    gl_model_free(m);
}

/* A capture is written as the outer value it reads, under that value's name, even when
 * the capture itself carries another name (gl_replace_all_uses re-points captures). */
Test(save, captures_are_written_with_the_outer_name)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *cond = tu_input(g, "cond", GL_DT_BOOL, 0, NULL);
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_value *y = tu_input(g, "y", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_node *iff = gl_add_node(g, "If", "", "if", &cond, 1, 1);
    static const char *const branches[] = {"then_branch", "else_branch"};
    for (size_t b = 0; b < 2; b++) {
        gl_graph *sub = gl_graph_new(m, g, branches[b]);
        gl_attr a = {.name = gl_xstrdup(branches[b]), .type = GL_ATTR_GRAPH, .g = sub};
        gl_node_take_attr(iff, &a);
        gl_value *cap = gl_resolve_value(sub, "x");
        cr_assert(cap && cap->outer == x, "no capture of x");
        gl_node *op = tu_node(sub, b ? "Neg" : "Identity", b ? "neg" : "id", 1, cap);
        gl_type_copy(&op->outputs[0]->type, &x->type);
        tu_output(sub, op->outputs[0]);
    }
    gl_type_copy(&iff->outputs[0]->type, &x->type);
    tu_output(g, iff->outputs[0]);
    cr_assert_eq(gl_replace_all_uses(g, x, y), GL_OK, "%s", gl_error_message());
    /* The IR renames captures after what they read when it can; force a stale name. */
    for (size_t b = 0; b < 2; b++) {
        gl_graph *sub = iff->attrs[b].g;
        cr_assert_eq(sub->n_captures, 1);
        cr_assert_eq(sub->captures[0]->outer, y, "capture not re-pointed to y");
        cr_assert_eq(gl_rename_value(sub, sub->captures[0], "stale"), GL_OK);
    }

    uint8_t *bytes;
    size_t len;
    cr_assert_eq(gl_model_serialize(m, &bytes, &len), GL_OK, "%s", gl_error_message());
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
    cr_assert(mp);
    cr_assert_eq(mp->graph->n_node, 1);
    const Onnx__NodeProto *n = mp->graph->node[0];
    cr_assert_eq(n->n_attribute, 2);
    for (size_t b = 0; b < 2; b++) {
        const Onnx__GraphProto *sub = n->attribute[b]->g;
        cr_assert(sub, "%s: no graph", branches[b]);
        cr_expect_eq(sub->n_input, 0, "%s declares the captured value", branches[b]);
        cr_expect_eq(sub->n_initializer, 0);
        cr_assert_eq(sub->n_node, 1);
        cr_expect_str_eq(sub->node[0]->input[0], "y", "%s reads the stale capture name",
                         branches[b]);
        cr_expect_null(find_vi(sub, "x"));
        cr_expect_null(find_vi(sub, "y"), "%s: value_info for a capture", branches[b]);
    }
    cr_expect_eq(check_scopes("captures", mp->graph, NULL), 0);
    onnx__model_proto__free_unpacked(mp, NULL);

    /* And it loads back into the same structure. */
    gl_model *back = NULL;
    cr_assert_eq(gl_model_load_buffer(bytes, len, "captures", NULL, NULL, &back), GL_OK,
                 "%s", gl_error_message());
    diff d;
    cr_expect(model_eq(&d, m, back), "%s", d.msg);
    gl_model_free(back);
    free(bytes);
    gl_model_free(m);
}

/* What the IR keeps as packed bytes (sparse initializers, quantization annotations,
 * training_info, sparse/type attributes, non-tensor types) goes out as the same messages. */
static gl_bytes packed(const ProtobufCMessage *msg)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *p = malloc(n ? n : 1);
    protobuf_c_message_pack(msg, p);
    return (gl_bytes){n, p};
}

static gl_bytes *one_packed(const ProtobufCMessage *msg)
{
    gl_bytes *b = malloc(sizeof(*b));
    *b = packed(msg);
    return b;
}

/* bytes (m serialized) load as m again. */
static void expect_loads_back(const gl_model *m, const uint8_t *bytes, size_t len)
{
    gl_model *back = NULL;
    cr_assert_eq(gl_model_load_buffer(bytes, len, "saved", NULL, NULL, &back), GL_OK, "%s",
                 gl_error_message());
    diff d;
    cr_expect(model_eq(&d, m, back), "%s", d.msg);
    gl_model_free(back);
}

static bool packs_to(const ProtobufCMessage *msg, const gl_bytes *want)
{
    if (!msg)
        return false;
    gl_bytes got = packed(msg);
    bool same = bytes_eq(&got, want);
    free(got.data);
    return same;
}

Test(save, kept_messages_go_out_again)
{
    /* A sparse tensor: 2 floats at positions 0 and 3 of a [4]. */
    float vals[] = {1.5f, -2.0f};
    int64_t idx[] = {0, 3}, two[] = {2}, four[] = {4};
    Onnx__TensorProto values = ONNX__TENSOR_PROTO__INIT, indices = ONNX__TENSOR_PROTO__INIT;
    values.n_dims = indices.n_dims = 1;
    values.dims = indices.dims = two;
    values.has_data_type = indices.has_data_type = true;
    values.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    values.name = "sp";
    values.n_float_data = 2;
    values.float_data = vals;
    indices.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    indices.n_int64_data = 2;
    indices.int64_data = idx;
    Onnx__SparseTensorProto sparse = ONNX__SPARSE_TENSOR_PROTO__INIT;
    sparse.values = &values;
    sparse.indices = &indices;
    sparse.n_dims = 1;
    sparse.dims = four;
    /* A quantization annotation, a training_info, a sequence type. */
    Onnx__StringStringEntryProto kv = ONNX__STRING_STRING_ENTRY_PROTO__INIT, *kvs[] = {&kv};
    kv.key = "SCALE_TENSOR";
    kv.value = "s";
    Onnx__TensorAnnotation ann = ONNX__TENSOR_ANNOTATION__INIT;
    ann.tensor_name = "x";
    ann.n_quant_parameter_tensor_names = 1;
    ann.quant_parameter_tensor_names = kvs;
    Onnx__GraphProto algo = ONNX__GRAPH_PROTO__INIT;
    algo.name = "algorithm";
    Onnx__TrainingInfoProto train = ONNX__TRAINING_INFO_PROTO__INIT;
    train.algorithm = &algo;
    train.n_update_binding = 1;
    train.update_binding = kvs;
    Onnx__TypeProto__Tensor elem_tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    elem_tt.has_elem_type = true;
    elem_tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    Onnx__TypeProto elem = ONNX__TYPE_PROTO__INIT;
    elem.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    elem.tensor_type = &elem_tt;
    Onnx__TypeProto__Sequence seq_t = ONNX__TYPE_PROTO__SEQUENCE__INIT;
    seq_t.elem_type = &elem;
    Onnx__TypeProto seq = ONNX__TYPE_PROTO__INIT;
    seq.value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    seq.sequence_type = &seq_t;

    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, four);
    g->sparse_inits = one_packed(&sparse.base);
    g->n_sparse_inits = 1;
    g->quant_annotations = one_packed(&ann.base);
    g->n_quant_annotations = 1;
    m->training_info = one_packed(&train.base);
    m->n_training_info = 1;
    gl_node *n = gl_add_node(g, "Custom", "test.domain", "custom", &x, 1, 1);
    gl_attr sp = {.name = gl_xstrdup("sparse"), .type = GL_ATTR_SPARSE_TENSOR, .n = 1,
                  .opaque = one_packed(&sparse.base)};
    gl_attr tps = {.name = gl_xstrdup("types"), .type = GL_ATTR_TYPE_PROTOS, .n = 2,
                   .opaque = malloc(2 * sizeof(gl_bytes))};
    tps.opaque[0] = packed(&seq.base);
    tps.opaque[1] = packed(&elem.base);
    gl_node_take_attr(n, &sp);
    gl_node_take_attr(n, &tps);
    gl_value *out = n->outputs[0];
    out->type.kind = GL_TYPE_OPAQUE;
    out->type.opaque = packed(&seq.base);
    tu_output(g, out);

    uint8_t *bytes;
    size_t len;
    cr_assert_eq(gl_model_serialize(m, &bytes, &len), GL_OK, "%s", gl_error_message());
    cr_expect(packs_as_protobuf_c(bytes, len), "fields after value_info in their place");
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
    cr_assert(mp);
    const Onnx__GraphProto *gp = mp->graph;
    cr_assert_eq(mp->n_training_info, 1);
    cr_expect(packs_to(&mp->training_info[0]->base, &m->training_info[0]), "training_info");
    cr_assert_eq(gp->n_sparse_initializer, 1);
    cr_expect(packs_to(&gp->sparse_initializer[0]->base, &g->sparse_inits[0]), "sparse init");
    cr_assert_eq(gp->n_quantization_annotation, 1);
    cr_expect(packs_to(&gp->quantization_annotation[0]->base, &g->quant_annotations[0]),
              "quantization annotation");
    const Onnx__NodeProto *np = gp->node[0];
    cr_expect_str_eq(np->domain, "test.domain");
    cr_assert_eq(np->n_attribute, 2);
    cr_expect_eq(np->attribute[0]->type, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR);
    cr_expect(np->attribute[0]->sparse_tensor &&
                  packs_to(&np->attribute[0]->sparse_tensor->base, &n->attrs[0].opaque[0]),
              "sparse attribute");
    cr_assert_eq(np->attribute[1]->n_type_protos, 2);
    for (size_t i = 0; i < 2; i++)
        cr_expect(packs_to(&np->attribute[1]->type_protos[i]->base, &n->attrs[1].opaque[i]),
                  "type proto %zu", i);
    cr_assert_eq(gp->n_output, 1);
    cr_expect(packs_to(&gp->output[0]->type->base, &out->type.opaque), "opaque output type");
    onnx__model_proto__free_unpacked(mp, NULL);
    expect_loads_back(m, bytes, len);
    free(bytes);
    gl_model_free(m);
}

/* Nodes of every size between small ones: the saver packs small messages as it encodes
 * them and keeps the trees of large ones (64 KiB and more) to pack when writing. The
 * bytes, in memory and in a file, are protobuf-c's for the whole model either way. */
Test(save, streamed_nodes_of_every_size)
{
    static const int64_t sizes[] = {1, 16383, 16384, 40000, 3};
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    int64_t one = 1;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, &one);
    for (size_t i = 0; i < GL_ARRAY_LEN(sizes); i++) {
        char name[32];
        snprintf(name, sizeof(name), "c%zu", i);
        float *vals = calloc((size_t)sizes[i], sizeof(float));
        for (int64_t k = 0; k < sizes[i]; k++)
            vals[k] = (float)(k % 97) - 48.0f;
        gl_tensor *t = tu_tensor_f32(1, &sizes[i], vals);
        free(vals);
        gl_node *c = gl_add_node(g, "Constant", "", name, NULL, 0, 1);
        gl_attr a = {.name = gl_xstrdup("value"), .type = GL_ATTR_TENSOR, .t = t};
        gl_node_take_attr(c, &a);
        c->outputs[0]->type.kind = GL_TYPE_TENSOR;
        c->outputs[0]->type.dtype = GL_DT_FLOAT;
        gl_shape_set_rank(&c->outputs[0]->type.shape, 1);
        c->outputs[0]->type.shape.dims[0].value = sizes[i];
        snprintf(name, sizeof(name), "r%zu", i);
        gl_value *ins[2] = {c->outputs[0], x};
        gl_node *r = gl_add_node(g, "ReduceSum", "", name, ins, 1, 1);
        r->outputs[0]->type = (gl_type){.kind = GL_TYPE_TENSOR, .dtype = GL_DT_FLOAT};
        gl_shape_set_rank(&r->outputs[0]->type.shape, 1);
        r->outputs[0]->type.shape.dims[0].value = 1;
        ins[0] = r->outputs[0];
        snprintf(name, sizeof(name), "add%zu", i);
        gl_node *add = gl_add_node(g, "Add", "", name, ins, 2, 1);
        tu_output(g, add->outputs[0]);
    }
    uint8_t *bytes;
    size_t len;
    cr_assert_eq(gl_model_serialize(m, &bytes, &len), GL_OK, "%s", gl_error_message());
    cr_expect(packs_as_protobuf_c(bytes, len), "serialized");
    char *dir = tu_tmpdir(), path[4200];
    snprintf(path, sizeof(path), "%s/streamed.onnx", dir);
    cr_assert_eq(gl_model_save(m, path, NULL), GL_OK, "%s", gl_error_message());
    size_t flen;
    uint8_t *file = tu_read_file(path, &flen);
    cr_expect(file && flen == len && memcmp(file, bytes, len) == 0,
              "the file holds the serialized bytes");
    expect_loads_back(m, bytes, len);
    free(file);
    free(bytes);
    tu_rmtree(dir);
    free(dir);
    gl_model_free(m);
}

/* ---- TensorProto files ------------------------------------------------------------------ */

Test(tensor_pb, reads_and_rewrites_test_data)
{
    path_list l = corpus_glob("*/test_data_set_0/*.pb");
    path_list e = {0};
    list_glob(&e, tu_src("examples/*/test_data_set_*/*.pb"));
    if (l.n + e.n == 0)
        cr_skip_test("no .pb test data");
    char *dir = tu_tmpdir();
    path_list *lists[] = {&l, &e};
    for (size_t li = 0; li < 2; li++) {
        for (size_t i = 0; i < lists[li]->n; i++) {
            const char *path = lists[li]->paths[i];
            gl_tensor *t = NULL, *u = NULL;
            gl_status st = gl_tensor_read_pb(path, &t);
            cr_expect_eq(st, GL_OK, "%s: %s", path, gl_error_message());
            if (st != GL_OK)
                continue;
            cr_expect(t->name && *t->name, "%s: tensor has no name", path);
            /* A fresh name each time: a file read is an input, never overwritten. */
            char copy[4200];
            snprintf(copy, sizeof(copy), "%s/copy%zu_%zu.pb", dir, li, i);
            cr_assert_eq(gl_tensor_write_pb(t, copy), GL_OK, "%s", gl_error_message());
            cr_assert_eq(gl_tensor_read_pb(copy, &u), GL_OK, "%s", gl_error_message());
            cr_expect(gl_tensor_equal(t, u), "%s: rewritten tensor differs", path);
            cr_expect(str_eq(t->name, u->name), "%s: name '%s' became '%s'", path,
                      s0(t->name), s0(u->name));
            gl_tensor_free(t);
            gl_tensor_free(u);
        }
        list_free(lists[li]);
    }
    cr_expect_eq(count_temp_files(dir), 0);
    tu_rmtree(dir);
    free(dir);
}

/* Bytes that exercise every bit: NaNs with payloads, -0, infinities, extremes. */
static void fill_pattern(uint8_t *p, size_t n, unsigned seed)
{
    uint32_t s = 2166136261u ^ seed;
    for (size_t i = 0; i < n; i++) {
        s = s * 16777619u + 0x9e3779b9u;
        p[i] = (uint8_t)(s >> 24);
    }
}

Test(tensor_pb, every_dtype_round_trips_bit_exact)
{
    char *dir = tu_tmpdir();
    char path[4200];
    for (int dt = 1; dt < GL_DT_COUNT; dt++) {
        /* A fresh name each time: a file read is an input, never overwritten. */
        snprintf(path, sizeof(path), "%s/t%d.pb", dir, dt);
        int64_t dims[] = {2, 3, 5};
        gl_tensor *t = gl_tensor_new((gl_dtype)dt, 3, dims);
        cr_assert(t, "%s: %s", gl_dtype_name((gl_dtype)dt), gl_error_message());
        t->name = strdup(gl_dtype_name((gl_dtype)dt));
        void *w = gl_tensor_make_writable(t);
        if (dt == GL_DT_STRING) {
            gl_bytes *s = w;
            for (int64_t i = 0; i < t->count; i++) {
                s[i].len = (size_t)i; /* "" first, and an embedded NUL byte later */
                s[i].data = malloc(s[i].len + 1);
                fill_pattern(s[i].data, s[i].len, (unsigned)i);
            }
        } else if (dt == GL_DT_BOOL) {
            for (int64_t i = 0; i < t->count; i++)
                ((uint8_t *)w)[i] = (uint8_t)(i % 3 == 0);
        } else {
            fill_pattern(w, gl_tensor_nbytes(t), (unsigned)dt);
            if (dt == GL_DT_FLOAT) {
                uint32_t specials[] = {0x7fc00001u, 0xffbfffffu, 0x80000000u, 0x7f800000u};
                memcpy(w, specials, sizeof(specials)); /* NaN payloads survive? */
            }
        }
        gl_status st = gl_tensor_write_pb(t, path);
        cr_assert_eq(st, GL_OK, "%s: %s", t->name, gl_error_message());
        /* On disk: raw_data for numbers, string_data for strings. */
        size_t len;
        void *bytes = tu_read_file(path, &len);
        Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, bytes);
        cr_assert(tp, "%s: written file does not parse", t->name);
        cr_expect_eq(tp->data_type, dt);
        cr_expect_eq(tp->n_dims, 3);
        if (dt == GL_DT_STRING)
            cr_expect_eq(tp->n_string_data, (size_t)t->count);
        else
            cr_expect(tp->has_raw_data && tp->raw_data.len == gl_tensor_nbytes(t),
                      "%s: not written as raw_data", t->name);
        onnx__tensor_proto__free_unpacked(tp, NULL);
        free(bytes);
        gl_tensor *u = NULL;
        st = gl_tensor_read_pb(path, &u);
        cr_assert_eq(st, GL_OK, "%s: %s", t->name, gl_error_message());
        cr_expect(gl_tensor_equal(t, u), "%s: bytes changed on the way", t->name);
        cr_expect(str_eq(t->name, u->name), "%s: name became '%s'", t->name, s0(u->name));
        gl_tensor_free(t);
        gl_tensor_free(u);
    }
    /* Scalars and empty tensors. */
    int64_t zero[] = {0, 4};
    gl_tensor *shapes[] = {gl_tensor_new(GL_DT_INT64, 0, NULL),
                           gl_tensor_new(GL_DT_FLOAT, 2, zero),
                           gl_tensor_new(GL_DT_STRING, 2, zero)};
    for (size_t i = 0; i < GL_ARRAY_LEN(shapes); i++) {
        gl_tensor *u = NULL;
        snprintf(path, sizeof(path), "%s/shape%zu.pb", dir, i);
        cr_assert_eq(gl_tensor_write_pb(shapes[i], path), GL_OK, "%s", gl_error_message());
        cr_assert_eq(gl_tensor_read_pb(path, &u), GL_OK, "case %zu: %s", i,
                     gl_error_message());
        cr_expect(gl_tensor_equal(shapes[i], u), "case %zu differs", i);
        gl_tensor_free(u);
        gl_tensor_free(shapes[i]);
    }
    cr_expect_eq(count_temp_files(dir), 0);
    tu_rmtree(dir);
    free(dir);
}

Test(tensor_pb, bad_files_name_the_file)
{
    char *dir = tu_tmpdir();
    char path[4200], missing[4200];
    snprintf(path, sizeof(path), "%s/garbage.pb", dir);
    snprintf(missing, sizeof(missing), "%s/missing.pb", dir);
    const uint8_t garbage[] = {0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01}; /* length past the end */
    cr_assert(tu_write_file(path, garbage, sizeof(garbage)));
    gl_tensor *t = NULL;
    cr_expect_neq(gl_tensor_read_pb(path, &t), GL_OK);
    cr_expect_null(t);
    cr_expect(strstr(gl_error_message(), "garbage.pb"), "message: %s", gl_error_message());
    cr_expect_eq(gl_tensor_read_pb(missing, &t), GL_ERR_IO);
    cr_expect(strstr(gl_error_message(), "missing.pb"), "message: %s", gl_error_message());
    cr_expect_neq(gl_tensor_read_pb(dir, &t), GL_OK, "a folder read as a tensor");
    tu_rmtree(dir);
    free(dir);
}

/* ---- onnx's own checker on what we write ------------------------------------------------ */

static const char *onnx_python(void)
{
    static char py[1024];
    const char *env = getenv("GL_PYTHON");
    if (env && !strcmp(env, "none"))
        return NULL;
    snprintf(py, sizeof(py), "%s", env && *env ? env : "/usr/bin/python3");
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "'%s' -c 'import onnx' >/dev/null 2>&1", py);
    return system(cmd) == 0 ? py : NULL;
}

/* Reads "ORIGINAL<TAB>SAVED" lines; a saved copy fails only if its original passes. */
static const char checker_script[] =
    "import sys, onnx\n"
    "def check(path):\n"
    "    try:\n"
    "        onnx.checker.check_model(onnx.load(path), full_check=True)\n"
    "        return None\n"
    "    except Exception as e:\n"
    "        return (str(e).splitlines() or [repr(e)])[0]\n"
    "bad = n = 0\n"
    "for line in open(sys.argv[1]):\n"
    "    orig, saved = line.rstrip('\\n').split('\\t')\n"
    "    n += 1\n"
    "    err = check(saved)\n"
    "    if err and check(orig) is None:\n"
    "        bad += 1\n"
    "        print('FAIL %s (saved from %s): %s' % (saved, orig, err))\n"
    "print('checked %d, failed %d' % (n, bad))\n"
    "sys.exit(1 if bad else 0)\n";

/* Save every model of `l` into `dir` (every other one with external data, so the
 * checker sees both forms) and list it in `list`. */
static size_t save_for_checker(const path_list *l, const char *dir, FILE *list, size_t k)
{
    for (size_t i = 0; i < l->n; i++) {
        gl_model *m = NULL;
        if (gl_model_load(l->paths[i], NULL, &m) != GL_OK)
            continue; /* the loader's own tests judge that */
        char out[4200];
        snprintf(out, sizeof(out), "%s/m%zu.onnx", dir, k);
        gl_save_options opts = {.external_threshold = k % 2 ? 1024 : 0};
        cr_assert_eq(gl_model_save(m, out, &opts), GL_OK, "%s: %s", l->paths[i],
                     gl_error_message());
        fprintf(list, "%s\t%s\n", l->paths[i], out);
        k++;
        gl_model_free(m);
    }
    return k;
}

Test(checker, onnx_accepts_saved_models, .timeout = 300)
{
    const char *py = onnx_python();
    if (!py)
        cr_skip_test("no python with onnx (GL_PYTHON)");
    path_list lists[] = {example_models(), corpus_glob("*/model.onnx"),
                         conformance_glob("*/model.onnx")};
    char *dir = tu_tmpdir();
    char script[4200], listing[4200];
    snprintf(script, sizeof(script), "%s/check.py", dir);
    snprintf(listing, sizeof(listing), "%s/models.tsv", dir);
    cr_assert(tu_write_file(script, checker_script, strlen(checker_script)));
    FILE *list = fopen(listing, "w");
    cr_assert(list);
    size_t saved = 0;
    for (size_t i = 0; i < GL_ARRAY_LEN(lists); i++) {
        saved = save_for_checker(&lists[i], dir, list, saved);
        list_free(&lists[i]);
    }
    fclose(list);
    if (saved == 0)
        cr_skip_test("no models");
    char cmd[10000];
    snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' 2>&1", py, script, listing);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char report[8192] = "";
    size_t n = fread(report, 1, sizeof(report) - 1, p);
    report[n] = '\0';
    int rc = pclose(p);
    cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "onnx.checker:\n%s", report);
    char expect[64];
    snprintf(expect, sizeof(expect), "checked %zu,", saved);
    cr_expect(strstr(report, expect), "the checker did not check %zu models:\n%s", saved,
              report);
    tu_rmtree(dir);
    free(dir);
}

/* test_ops_movement.c — the movement family: kernels against hand-computed outputs (from
 * the ONNX definitions), shape functions on symbolic and unknown inputs, errors.
 *
 * Cases are text so the tables stay readable:
 *   tensors   "float[2,3]:1,2,3,4,5,6"  ("int64[]:7" a scalar; no ':' = zeros;
 *             "string[2]:ab,cd"; "-" an omitted input)
 *   types     "float[N,3,?]" symbolic/unknown dims, "float" unknown rank, "?" nothing
 *             known; "=int64[2]:0,-1" a constant input (its value is visible to
 *             the shape function)
 *   attrs     "axis=1;perm=[1,0];mode=s:reflect;value=f:1.5;value=t:int32[1]:7;
 *             value_floats=fs:[1,2];value_strings=ss:[a,b];sparse_value=sparse"
 * Shape-function results are compared as text: gl_type_format, except that an unknown
 * rank prints as "float[*]" (gl_type_format prints "float[?]" for both that and one
 * unknown dim).
 * Every successful kernel case also runs the shape function with all inputs constant
 * and checks it agrees with the kernel's output (dims it infers must be the real ones).
 */
#include <criterion/criterion.h>

#include "ops/families.h"
#include "ops/opkit.h"
#include "ops/ops.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== parsing the case text ============================================================ */

/* Dims between '[' and ']': numbers, '?' (-1) or symbols (sym[i] set, value -1). */
static int parse_dims(const char *lb, int64_t *dims, char syms[][32], const char **after)
{
    int rank = 0;
    const char *p = lb + 1;
    while (*p && *p != ']') {
        const char *end = p;
        while (*end && *end != ',' && *end != ']')
            end++;
        char tok[32] = {0};
        memcpy(tok, p, (size_t)(end - p) < 31 ? (size_t)(end - p) : 31);
        if (syms)
            syms[rank][0] = '\0';
        if ((tok[0] >= '0' && tok[0] <= '9') || tok[0] == '-') {
            dims[rank] = strtoll(tok, NULL, 10);
        } else {
            dims[rank] = -1;
            if (syms && strcmp(tok, "?") != 0)
                snprintf(syms[rank], 32, "%s", tok);
        }
        rank++;
        p = *end == ',' ? end + 1 : end;
    }
    *after = *p == ']' ? p + 1 : p;
    return rank;
}

static gl_tensor *parse_tensor(const char *spec)
{
    const char *lb = strchr(spec, '[');
    cr_assert(lb, "tensor spec '%s' has no dims", spec);
    gl_dtype dt = tu_dtype_named(spec, (size_t)(lb - spec));
    int64_t dims[GL_MAX_RANK];
    const char *after;
    int rank = parse_dims(lb, dims, NULL, &after);
    gl_tensor *t = gl_tensor_new(dt, rank, dims);
    cr_assert(t, "cannot make tensor '%s'", spec);
    if (*after != ':')
        return t;
    const char *p = after + 1;
    int64_t i = 0;
    while (i < t->count) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char tok[256] = {0};
        memcpy(tok, p, len < 255 ? len : 255);
        if (dt == GL_DT_STRING) {
            gl_bytes *b = (gl_bytes *)t->buf->data + i;
            b->data = malloc(len + 1);
            memcpy(b->data, p, len);
            b->len = len;
        } else if (gl_dtype_is_float(dt)) {
            gl_elem_set_f64(t, i, strtod(tok, NULL));
        } else if (dt == GL_DT_UINT64) {
            ((uint64_t *)t->buf->data)[i] = strtoull(tok, NULL, 10);
        } else {
            gl_elem_set_i64(t, i, strtoll(tok, NULL, 10));
        }
        i++;
        if (!end)
            break;
        p = end + 1;
    }
    cr_assert_eq(i, t->count, "tensor spec '%s' has %lld values for %lld elements", spec,
                 (long long)i, (long long)t->count);
    return t;
}

static void type_of_tensor(gl_type *ty, const gl_tensor *t)
{
    gl_type_free(ty);
    ty->kind = GL_TYPE_TENSOR;
    ty->dtype = t->dtype;
    gl_shape_set_rank(&ty->shape, t->rank);
    for (int i = 0; i < t->rank; i++)
        ty->shape.dims[i].value = t->dims[i];
}

/* "[1,2,3]" (or "fs:[..]") into a list. */
static size_t parse_list(const char *p, char items[][64], size_t max)
{
    size_t n = 0;
    p = strchr(p, '[');
    cr_assert(p, "list expected");
    p++;
    while (*p && *p != ']' && n < max) {
        const char *end = p;
        while (*end && *end != ',' && *end != ']')
            end++;
        snprintf(items[n], 64, "%.*s", (int)(end - p), p);
        n++;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

static void take_attr(gl_node *n, gl_attr *a, const char *name)
{
    a->name = strdup(name);
    gl_node_take_attr(n, a);
}

static void apply_attr(gl_node *n, const char *name, const char *v)
{
    char items[64][64];
    gl_attr a;
    memset(&a, 0, sizeof(a));
    if (v[0] == '[') {
        size_t k = parse_list(v, items, 64);
        int64_t ints[64];
        for (size_t i = 0; i < k; i++)
            ints[i] = strtoll(items[i], NULL, 10);
        gl_node_set_attr_ints(n, name, ints, k);
    } else if (strncmp(v, "fs:", 3) == 0) {
        size_t k = parse_list(v, items, 64);
        float fl[64];
        for (size_t i = 0; i < k; i++)
            fl[i] = strtof(items[i], NULL);
        gl_node_set_attr_floats(n, name, fl, k);
    } else if (strncmp(v, "ss:", 3) == 0) {
        a.type = GL_ATTR_STRINGS;
        a.n = parse_list(v, items, 64);
        a.strings = calloc(a.n ? a.n : 1, sizeof(gl_bytes));
        for (size_t i = 0; i < a.n; i++) {
            a.strings[i].len = strlen(items[i]);
            a.strings[i].data = (uint8_t *)strdup(items[i]);
        }
        take_attr(n, &a, name);
    } else if (strncmp(v, "f:", 2) == 0) {
        gl_node_set_attr_float(n, name, strtof(v + 2, NULL));
    } else if (strncmp(v, "s:", 2) == 0) {
        gl_node_set_attr_string(n, name, v + 2);
    } else if (strncmp(v, "t:", 2) == 0) {
        a.type = GL_ATTR_TENSOR;
        a.t = parse_tensor(v + 2);
        take_attr(n, &a, name);
    } else if (strcmp(v, "sparse") == 0) {
        a.type = GL_ATTR_SPARSE_TENSOR;
        take_attr(n, &a, name);
    } else {
        gl_node_set_attr_int(n, name, strtoll(v, NULL, 10));
    }
}

static void apply_attrs(gl_node *n, const char *spec)
{
    if (!spec)
        return;
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, ";", &save); tok;
         tok = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(tok, '=');
        cr_assert(eq, "attribute '%s' has no '='", tok);
        *eq = '\0';
        apply_attr(n, tok, eq + 1);
    }
}

/* ==== formatting for messages ============================================================== */

static const char *fmt_type(const gl_type *t, char *buf, size_t len)
{
    if (t->kind == GL_TYPE_TENSOR && t->shape.rank == GL_RANK_UNKNOWN)
        snprintf(buf, len, "%s[*]", t->dtype ? gl_dtype_name(t->dtype) : "?");
    else
        gl_type_format(t, buf, len);
    return buf;
}

static const char *fmt_tensor(const gl_tensor *t, char *buf, size_t len)
{
    size_t pos = 0;
    if (!t) {
        snprintf(buf, len, "(null)");
        return buf;
    }
    pos += (size_t)snprintf(buf + pos, len - pos, "%s[", gl_dtype_name(t->dtype));
    for (int i = 0; i < t->rank && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", i ? "," : "",
                                (long long)t->dims[i]);
    pos += (size_t)snprintf(buf + pos, len - pos, "]:");
    for (int64_t i = 0; i < t->count && i < 48 && pos < len; i++) {
        const char *sep = i ? "," : "";
        if (t->dtype == GL_DT_STRING) {
            const gl_bytes *b = (const gl_bytes *)t->buf->data + i;
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%.*s", sep, (int)b->len,
                                    b->data ? (const char *)b->data : "");
        } else if (t->dtype == GL_DT_UINT64) {
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%llu", sep,
                                    (unsigned long long)((const uint64_t *)t->buf->data)[i]);
        } else if (gl_dtype_is_float(t->dtype)) {
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%g", sep, gl_elem_f64(t, i));
        } else {
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", sep,
                                    (long long)gl_elem_i64(t, i));
        }
    }
    return buf;
}

/* Same dtype, dims and elements (strings by content; empty strings equal however they
 * are stored). */
static bool tensors_equal(const gl_tensor *a, const gl_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->count != b->count ||
        memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) != 0)
        return false;
    if (a->count == 0)
        return true;
    if (a->dtype != GL_DT_STRING)
        return memcmp(a->buf->data, b->buf->data, gl_tensor_nbytes(a)) == 0;
    for (int64_t i = 0; i < a->count; i++) {
        const gl_bytes *x = (const gl_bytes *)a->buf->data + i;
        const gl_bytes *y = (const gl_bytes *)b->buf->data + i;
        if (x->len != y->len || (x->len && memcmp(x->data, y->data, x->len) != 0))
            return false;
    }
    return true;
}

/* ==== building and running one node ======================================================== */

#define MAX_IN 6
#define MAX_OUT 4

typedef struct kcase {
    const char *name, *op;
    int opset;
    const char *attrs;
    const char *in[MAX_IN];   /* tensors; "-" omitted; NULL ends the list */
    const char *out[MAX_OUT]; /* expected outputs; NULL ends the list */
    const char *err;          /* expected error (substring); then `out` is not checked */
} kcase;

typedef struct icase {
    const char *name, *op;
    int opset;
    const char *attrs;
    const char *in[MAX_IN];   /* types or "=constant"; "-" omitted */
    const char *out[MAX_OUT]; /* expected types */
    const char *err;
} icase;

static size_t count_strs(const char *const *v, size_t max)
{
    size_t n = 0;
    while (n < max && v[n])
        n++;
    return n;
}

static gl_node *make_node(gl_model *m, const char *op, const char *attrs, gl_value **ins,
                          size_t n_in, size_t n_out)
{
    gl_node *n = gl_add_node(m->graph, op, "", "t", ins, n_in, n_out);
    cr_assert(n, "cannot add node %s", op);
    apply_attrs(n, attrs);
    return n;
}

static void expect_error(const char *name, gl_status st, const char *err, const char *op)
{
    const char *msg = gl_error_message();
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "<model>: node 't' (%s)", op);
    cr_expect_neq(st, GL_OK, "%s: expected an error containing '%s'", name, err);
    cr_expect(strstr(msg, err) != NULL, "%s: message '%s' lacks '%s'", name, msg, err);
    cr_expect(strncmp(msg, prefix, strlen(prefix)) == 0, "%s: message '%s' does not start "
              "with '%s'", name, msg, prefix);
}

/* The shape function run on constant inputs must agree with what the kernel made. */
static void check_infer_agrees(const kcase *kc, const gl_model *m, const gl_node *n,
                               gl_tensor *const *out)
{
    gl_type types[MAX_OUT];
    gl_status st = tu_infer(m, n, types);
    cr_expect_eq(st, GL_OK, "%s: shape function failed: %s", kc->name, gl_error_message());
    for (size_t i = 0; st == GL_OK && i < n->n_outputs; i++) {
        char buf[256], tb[512];
        const gl_type *t = &types[i];
        bool ok = t->kind == GL_TYPE_TENSOR && t->dtype == out[i]->dtype;
        if (ok && t->shape.rank != GL_RANK_UNKNOWN) {
            ok = t->shape.rank == out[i]->rank;
            for (int d = 0; ok && d < t->shape.rank; d++)
                ok = t->shape.dims[d].value < 0 || t->shape.dims[d].value == out[i]->dims[d];
        }
        cr_expect(ok, "%s: output %zu inferred %s, kernel made %s", kc->name, i,
                  fmt_type(t, buf, sizeof(buf)), fmt_tensor(out[i], tb, sizeof(tb)));
    }
    for (size_t i = 0; st == GL_OK && i < n->n_outputs; i++)
        gl_type_free(&types[i]);
}

static void run_kernel_case(const kcase *kc)
{
    if (getenv("MOVEMENT_TRACE")) /* names the case before a crash */
        fprintf(stderr, "kernel case: %s\n", kc->name);
    gl_model *m = tu_model(kc->opset);
    size_t n_in = count_strs(kc->in, MAX_IN), n_out = count_strs(kc->out, MAX_OUT);
    if (n_out == 0)
        n_out = 1;
    gl_value *ins[MAX_IN] = {0};
    const gl_tensor *tin[MAX_IN] = {0};
    for (size_t i = 0; i < n_in; i++) {
        if (strcmp(kc->in[i], "-") == 0)
            continue;
        char nm[16];
        snprintf(nm, sizeof(nm), "in%zu", i);
        gl_tensor *t = parse_tensor(kc->in[i]);
        ins[i] = gl_add_initializer(m->graph, nm, t);
        type_of_tensor(&ins[i]->type, t);
        tin[i] = t;
    }
    gl_node *n = make_node(m, kc->op, kc->attrs, ins, n_in, n_out);
    gl_tensor *out[MAX_OUT] = {0};
    gl_error_clear();
    gl_status st = tu_run_kernel(m, n, tin, out);
    if (kc->err) {
        expect_error(kc->name, st, kc->err, kc->op);
    } else if (st != GL_OK) {
        cr_expect_eq(st, GL_OK, "%s: kernel failed: %s", kc->name, gl_error_message());
    } else {
        bool all = true;
        for (size_t i = 0; i < n_out; i++) {
            gl_tensor *want = parse_tensor(kc->out[i]);
            char a[1024], b[1024];
            bool eq = out[i] && tensors_equal(out[i], want);
            all &= eq;
            cr_expect(eq, "%s: output %zu is %s, expected %s", kc->name, i,
                      fmt_tensor(out[i], a, sizeof(a)), fmt_tensor(want, b, sizeof(b)));
            gl_tensor_free(want);
        }
        if (all)
            check_infer_agrees(kc, m, n, out);
    }
    for (size_t i = 0; i < MAX_OUT; i++)
        gl_tensor_free(out[i]);
    gl_model_free(m);
}

static void run_infer_case(const icase *ic)
{
    if (getenv("MOVEMENT_TRACE"))
        fprintf(stderr, "shape case: %s\n", ic->name);
    gl_model *m = tu_model(ic->opset);
    size_t n_in = count_strs(ic->in, MAX_IN), n_out = count_strs(ic->out, MAX_OUT);
    if (n_out == 0)
        n_out = 1;
    gl_value *ins[MAX_IN] = {0};
    for (size_t i = 0; i < n_in; i++) {
        const char *s = ic->in[i];
        char nm[16];
        snprintf(nm, sizeof(nm), "in%zu", i);
        if (strcmp(s, "-") == 0)
            continue;
        if (s[0] == '=') {
            gl_tensor *t = parse_tensor(s + 1);
            ins[i] = gl_add_initializer(m->graph, nm, t);
            type_of_tensor(&ins[i]->type, t);
        } else {
            ins[i] = gl_add_value(m->graph, nm);
            gl_type_free(&ins[i]->type);
            tu_parse_type(s, &ins[i]->type);
            gl_graph_add_input(m->graph, ins[i]);
        }
    }
    gl_node *n = make_node(m, ic->op, ic->attrs, ins, n_in, n_out);
    gl_type types[MAX_OUT];
    gl_error_clear();
    gl_status st = tu_infer(m, n, types);
    if (ic->err) {
        expect_error(ic->name, st, ic->err, ic->op);
    } else {
        cr_expect_eq(st, GL_OK, "%s: shape function failed: %s", ic->name, gl_error_message());
        for (size_t i = 0; st == GL_OK && i < n_out; i++) {
            char buf[256];
            fmt_type(&types[i], buf, sizeof(buf));
            cr_expect_str_eq(buf, ic->out[i], "%s: output %zu is %s, expected %s", ic->name, i,
                             buf, ic->out[i]);
        }
    }
    if (st == GL_OK)
        for (size_t i = 0; i < n_out; i++)
            gl_type_free(&types[i]);
    gl_model_free(m);
}

#define RUN_KERNELS(table)                                                                  \
    for (size_t i_ = 0; i_ < sizeof(table) / sizeof(table[0]); i_++)                       \
    run_kernel_case(&table[i_])
#define RUN_INFERS(table)                                                                   \
    for (size_t i_ = 0; i_ < sizeof(table) / sizeof(table[0]); i_++)                        \
    run_infer_case(&table[i_])

#define I64MAX "9223372036854775807"
#define I64MIN "-9223372036854775808"

/* ==== kernels ================================================================================ */

static const kcase identity_constant_cases[] = {
    {"identity float", "Identity", 16, NULL, {"float[2,2]:1,2,3,4"}, {"float[2,2]:1,2,3,4"}, NULL},
    {"identity string", "Identity", 13, NULL, {"string[2]:ab,"}, {"string[2]:ab,"}, NULL},
    {"constant value_float", "Constant", 13, "value_float=f:2.5", {NULL}, {"float[]:2.5"}, NULL},
    {"constant value_ints", "Constant", 13, "value_ints=[1,2,3]", {NULL}, {"int64[3]:1,2,3"}, NULL},
    {"constant value_int", "Constant", 13, "value_int=-4", {NULL}, {"int64[]:-4"}, NULL},
    {"constant value_floats", "Constant", 13, "value_floats=fs:[0.5,-1]", {NULL},
     {"float[2]:0.5,-1"}, NULL},
    {"constant value_string", "Constant", 13, "value_string=s:hi", {NULL}, {"string[]:hi"}, NULL},
    {"constant value_strings", "Constant", 13, "value_strings=ss:[a,bc]", {NULL},
     {"string[2]:a,bc"}, NULL},
    {"constant tensor", "Constant", 9, "value=t:int32[2]:7,8", {NULL}, {"int32[2]:7,8"}, NULL},
    {"constant none", "Constant", 13, NULL, {NULL}, {NULL}, "none of the value attributes"},
    {"constant two", "Constant", 13, "value_int=3;value_float=f:1", {NULL}, {NULL}, "both"},
    {"constant sparse", "Constant", 13, "sparse_value=sparse", {NULL}, {NULL}, "sparse_value"},
    {"cos default", "ConstantOfShape", 9, NULL, {"int64[2]:2,3"}, {"float[2,3]:0,0,0,0,0,0"}, NULL},
    {"cos int32", "ConstantOfShape", 9, "value=t:int32[1]:7", {"int64[1]:3"},
     {"int32[3]:7,7,7"}, NULL},
    {"cos scalar", "ConstantOfShape", 9, "value=t:float[1]:5", {"int64[0]"}, {"float[]:5"}, NULL},
    {"cos empty", "ConstantOfShape", 9, NULL, {"int64[2]:2,0"}, {"float[2,0]"}, NULL},
    {"cos bool", "ConstantOfShape", 9, "value=t:bool[1]:1", {"int64[1]:2"}, {"bool[2]:1,1"}, NULL},
    {"cos negative", "ConstantOfShape", 9, NULL, {"int64[1]:-1"}, {NULL}, "negative"},
    {"cos two values", "ConstantOfShape", 9, "value=t:float[2]:1,2", {"int64[1]:1"}, {NULL},
     "one-element"},
};

Test(movement, identity_constant) { RUN_KERNELS(identity_constant_cases); }

static const kcase shape_size_cases[] = {
    {"shape", "Shape", 13, NULL, {"float[2,3,4]"}, {"int64[3]:2,3,4"}, NULL},
    {"shape ignores start before 15", "Shape", 13, "start=1", {"float[2,3,4]"},
     {"int64[3]:2,3,4"}, NULL},
    {"shape start -2", "Shape", 15, "start=-2", {"float[2,3,4]"}, {"int64[2]:3,4"}, NULL},
    {"shape start 1 end -1", "Shape", 15, "start=1;end=-1", {"float[2,3,4]"}, {"int64[1]:3"},
     NULL},
    {"shape clip", "Shape", 15, "start=-10;end=10", {"float[2,3,4]"}, {"int64[3]:2,3,4"}, NULL},
    {"shape empty range", "Shape", 15, "start=2;end=1", {"float[2,3,4]"}, {"int64[0]"}, NULL},
    {"shape of scalar", "Shape", 15, NULL, {"float[]:1"}, {"int64[0]"}, NULL},
    {"shape of string", "Shape", 15, NULL, {"string[2]:a,b"}, {"int64[1]:2"}, NULL},
    {"size", "Size", 13, NULL, {"float[2,3,4]"}, {"int64[]:24"}, NULL},
    {"size empty", "Size", 13, NULL, {"float[0,3]"}, {"int64[]:0"}, NULL},
    {"size scalar", "Size", 1, NULL, {"int8[]:3"}, {"int64[]:1"}, NULL},
};

Test(movement, shape_size) { RUN_KERNELS(shape_size_cases); }

static const kcase reshape_cases[] = {
    {"reshape -1", "Reshape", 14, NULL, {"float[2,3]:1,2,3,4,5,6", "int64[2]:3,-1"},
     {"float[3,2]:1,2,3,4,5,6"}, NULL},
    {"reshape 0 copies", "Reshape", 14, NULL, {"float[2,3,4]", "int64[2]:0,-1"},
     {"float[2,12]"}, NULL},
    {"reshape allowzero", "Reshape", 14, "allowzero=1", {"float[0,3,4]", "int64[3]:3,4,0"},
     {"float[3,4,0]"}, NULL},
    {"reshape 0 copies empty dim", "Reshape", 14, NULL, {"float[0,3]", "int64[2]:0,3"},
     {"float[0,3]"}, NULL},
    {"reshape string", "Reshape", 5, NULL, {"string[4]:a,b,c,d", "int64[2]:2,2"},
     {"string[2,2]:a,b,c,d"}, NULL},
    {"reshape to scalar", "Reshape", 13, NULL, {"int32[1,1]:5", "int64[0]"}, {"int32[]:5"}, NULL},
    {"reshape int32 shape", "Reshape", 13, NULL, {"float[4]:1,2,3,4", "int32[2]:2,2"},
     {"float[2,2]:1,2,3,4"}, NULL},
    {"reshape opset 1 attribute", "Reshape", 1, "shape=[2,-1]", {"double[4]:1,2,3,4"},
     {"double[2,2]:1,2,3,4"}, NULL},
    {"reshape two -1", "Reshape", 14, NULL, {"float[4]", "int64[2]:-1,-1"}, {NULL},
     "more than one -1"},
    {"reshape mismatch", "Reshape", 14, NULL, {"float[6]", "int64[2]:4,4"}, {NULL},
     "cannot reshape"},
    {"reshape not divisible", "Reshape", 14, NULL, {"float[6]", "int64[2]:-1,4"}, {NULL},
     "cannot reshape"},
    {"reshape 0 and -1 allowzero", "Reshape", 14, "allowzero=1", {"float[0]", "int64[2]:0,-1"},
     {NULL}, "both 0 and -1"},
    {"reshape -1 with zero product", "Reshape", 14, NULL, {"float[0,3]", "int64[2]:0,-1"},
     {NULL}, "cannot reshape"},
    {"reshape 0 past rank", "Reshape", 14, NULL, {"float[3]", "int64[2]:3,0"}, {NULL},
     "has rank 1"},
    {"reshape below -1", "Reshape", 14, NULL, {"float[3]", "int64[1]:-3"}, {NULL}, "is -3"},
    {"reshape float shape", "Reshape", 14, NULL, {"float[3]", "float[1]:3"}, {NULL},
     "integer tensor"},
    {"flatten axis 0", "Flatten", 13, "axis=0", {"float[2,3,4]"}, {"float[1,24]"}, NULL},
    {"flatten default", "Flatten", 13, NULL, {"float[2,3]:1,2,3,4,5,6"},
     {"float[2,3]:1,2,3,4,5,6"}, NULL},
    {"flatten axis rank", "Flatten", 13, "axis=3", {"float[2,3,4]"}, {"float[24,1]"}, NULL},
    {"flatten negative", "Flatten", 11, "axis=-1", {"float[2,3,4]"}, {"float[6,4]"}, NULL},
    {"flatten negative before 11", "Flatten", 9, "axis=-1", {"float[2,3,4]"}, {NULL},
     "out of range"},
    {"flatten axis too big", "Flatten", 13, "axis=4", {"float[2,3,4]"}, {NULL}, "out of range"},
    {"flatten string", "Flatten", 13, NULL, {"string[1,2]:x,y"}, {"string[1,2]:x,y"}, NULL},
};

Test(movement, reshape_flatten) { RUN_KERNELS(reshape_cases); }

static const kcase transpose_cases[] = {
    {"transpose default", "Transpose", 13, NULL, {"float[2,3]:1,2,3,4,5,6"},
     {"float[3,2]:1,4,2,5,3,6"}, NULL},
    {"transpose 102", "Transpose", 13, "perm=[1,0,2]", {"float[2,2,2]:0,1,2,3,4,5,6,7"},
     {"float[2,2,2]:0,1,4,5,2,3,6,7"}, NULL},
    {"transpose 201", "Transpose", 13, "perm=[2,0,1]", {"float[2,2,2]:0,1,2,3,4,5,6,7"},
     {"float[2,2,2]:0,2,4,6,1,3,5,7"}, NULL},
    {"transpose channel shuffle", "Transpose", 13, "perm=[0,2,1,3]",
     {"float[2,3,2,2]:0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23"},
     {"float[2,2,3,2]:0,1,4,5,8,9,2,3,6,7,10,11,12,13,16,17,20,21,14,15,18,19,22,23"}, NULL},
    {"transpose identity perm", "Transpose", 13, "perm=[0,1]", {"int64[1,3]:1,2,3"},
     {"int64[1,3]:1,2,3"}, NULL},
    {"transpose uint8", "Transpose", 13, NULL, {"uint8[2,3]:1,2,3,4,5,6"},
     {"uint8[3,2]:1,4,2,5,3,6"}, NULL},
    {"transpose float16", "Transpose", 13, NULL, {"float16[2,2]:1,2,3,4"},
     {"float16[2,2]:1,3,2,4"}, NULL},
    {"transpose double", "Transpose", 13, NULL, {"double[2,2]:1,2,3,4"},
     {"double[2,2]:1,3,2,4"}, NULL},
    {"transpose string", "Transpose", 13, NULL, {"string[2,2]:a,b,c,d"},
     {"string[2,2]:a,c,b,d"}, NULL},
    {"transpose empty", "Transpose", 13, NULL, {"float[0,3]"}, {"float[3,0]"}, NULL},
    {"transpose scalar", "Transpose", 13, NULL, {"float[]:4"}, {"float[]:4"}, NULL},
    {"transpose bad perm", "Transpose", 13, "perm=[0,0]", {"float[2,2]"}, {NULL},
     "not a permutation"},
    {"transpose short perm", "Transpose", 13, "perm=[0]", {"float[2,2]"}, {NULL}, "entries"},
};

Test(movement, transpose) { RUN_KERNELS(transpose_cases); }

static const kcase squeeze_cases[] = {
    {"squeeze axes input", "Squeeze", 13, NULL, {"float[1,3,1]:1,2,3", "int64[1]:-1"},
     {"float[1,3]:1,2,3"}, NULL},
    {"squeeze all", "Squeeze", 13, NULL, {"float[1,3,1]:1,2,3"}, {"float[3]:1,2,3"}, NULL},
    {"squeeze empty axes", "Squeeze", 13, NULL, {"float[1,3,1]", "int64[0]"}, {"float[3]"}, NULL},
    {"squeeze attribute", "Squeeze", 11, "axes=[0]", {"float[1,3,1]"}, {"float[3,1]"}, NULL},
    {"squeeze to scalar", "Squeeze", 13, NULL, {"string[1,1]:s"}, {"string[]:s"}, NULL},
    {"squeeze size 3", "Squeeze", 13, NULL, {"float[1,3]", "int64[1]:1"}, {NULL},
     "cannot squeeze"},
    {"squeeze negative at 1", "Squeeze", 1, "axes=[-1]", {"float[3,1]"}, {NULL},
     "needs opset 11"},
    {"squeeze axis out of range", "Squeeze", 13, NULL, {"float[1]", "int64[1]:1"}, {NULL},
     "out of range"},
    {"unsqueeze two", "Unsqueeze", 13, NULL, {"float[2]:1,2", "int64[2]:0,-1"},
     {"float[1,2,1]:1,2"}, NULL},
    {"unsqueeze unsorted", "Unsqueeze", 13, NULL, {"float[3]", "int64[2]:2,0"},
     {"float[1,3,1]"}, NULL},
    {"unsqueeze scalar", "Unsqueeze", 13, NULL, {"int64[]:5", "int64[1]:0"}, {"int64[1]:5"},
     NULL},
    {"unsqueeze attribute", "Unsqueeze", 11, "axes=[1]", {"float[2]"}, {"float[2,1]"}, NULL},
    {"unsqueeze duplicate", "Unsqueeze", 13, NULL, {"float[2]", "int64[2]:0,0"}, {NULL},
     "twice"},
    {"unsqueeze out of range", "Unsqueeze", 13, NULL, {"float[2]", "int64[1]:2"}, {NULL},
     "out of range"},
    {"unsqueeze no axes", "Unsqueeze", 11, NULL, {"float[2]"}, {NULL}, "missing or empty"},
};

Test(movement, squeeze_unsqueeze) { RUN_KERNELS(squeeze_cases); }

static const kcase concat_split_cases[] = {
    {"concat axis 0", "Concat", 13, "axis=0", {"float[1,2]:1,2", "float[2,2]:3,4,5,6"},
     {"float[3,2]:1,2,3,4,5,6"}, NULL},
    {"concat axis 1", "Concat", 13, "axis=1", {"float[2,1]:1,2", "float[2,2]:3,4,5,6"},
     {"float[2,3]:1,3,4,2,5,6"}, NULL},
    {"concat three, negative axis", "Concat", 13, "axis=-1",
     {"string[1]:a", "string[2]:b,c", "string[1]:d"}, {"string[4]:a,b,c,d"}, NULL},
    {"concat with empty", "Concat", 13, "axis=0", {"float[0,2]", "float[1,2]:1,2"},
     {"float[1,2]:1,2"}, NULL},
    {"concat opset 1 default axis", "Concat", 1, NULL, {"float[1,1]:1", "float[1,1]:2"},
     {"float[1,2]:1,2"}, NULL},
    {"concat int64 shapes", "Concat", 13, "axis=0", {"int64[1]:-1", "int64[2]:3,4"},
     {"int64[3]:-1,3,4"}, NULL},
    {"concat missing axis", "Concat", 13, NULL, {"float[1]", "float[1]"}, {NULL},
     "'axis' is missing"},
    {"concat dim mismatch", "Concat", 13, "axis=0", {"float[1,2]", "float[1,3]"}, {NULL},
     "dim 1"},
    {"concat dtype mismatch", "Concat", 13, "axis=0", {"float[1]", "int64[1]"}, {NULL},
     "is int64"},
    {"concat negative before 11", "Concat", 4, "axis=-1", {"float[1]", "float[1]"}, {NULL},
     "needs opset 11"},
    {"split equal", "Split", 13, NULL, {"float[6]:1,2,3,4,5,6"},
     {"float[2]:1,2", "float[2]:3,4", "float[2]:5,6"}, NULL},
    {"split input sizes", "Split", 13, NULL, {"float[6]:1,2,3,4,5,6", "int64[2]:2,4"},
     {"float[2]:1,2", "float[4]:3,4,5,6"}, NULL},
    {"split attribute axis 1", "Split", 11, "axis=1;split=[1,2]", {"float[2,3]:1,2,3,4,5,6"},
     {"float[2,1]:1,4", "float[2,2]:2,3,5,6"}, NULL},
    {"split zero sizes", "Split", 13, NULL, {"float[0]", "int64[3]:0,0,0"},
     {"float[0]", "float[0]", "float[0]"}, NULL},
    {"split negative axis", "Split", 13, "axis=-1", {"int32[2,2]:1,2,3,4"},
     {"int32[2,1]:1,3", "int32[2,1]:2,4"}, NULL},
    {"split uneven at 18", "Split", 18, "num_outputs=2", {"float[5]:1,2,3,4,5"},
     {"float[3]:1,2,3", "float[2]:4,5"}, NULL},
    {"split uneven before 18", "Split", 13, NULL, {"float[5]"}, {"float[3]", "float[2]"},
     "equal parts"},
    {"split bad sum", "Split", 13, NULL, {"float[3]", "int64[2]:1,1"}, {"float[1]", "float[1]"},
     "sums to 2"},
    {"split count mismatch", "Split", 13, NULL, {"float[3]", "int64[1]:3"},
     {"float[1]", "float[1]"}, "1 entries for 2 outputs"},
};

Test(movement, concat_split) { RUN_KERNELS(concat_split_cases); }

#define X34 "float[3,4]:0,1,2,3,4,5,6,7,8,9,10,11"

static const kcase slice_cases[] = {
    {"slice 2-D", "Slice", 13, NULL, {X34, "int64[2]:0,1", "int64[2]:2,3"},
     {"float[2,2]:1,2,5,6"}, NULL},
    {"slice negative step", "Slice", 13, NULL,
     {"float[5]:0,1,2,3,4", "int64[1]:-1", "int64[1]:-100", "int64[1]:0", "int64[1]:-2"},
     {"float[3]:4,2,0"}, NULL},
    {"slice end out of bounds", "Slice", 13, NULL,
     {"float[5]:0,1,2,3,4", "int64[1]:1", "int64[1]:1000"}, {"float[4]:1,2,3,4"}, NULL},
    {"slice start out of bounds", "Slice", 13, NULL,
     {"float[5]:0,1,2,3,4", "int64[1]:1000", "int64[1]:1000"}, {"float[0]"}, NULL},
    {"slice negative axis", "Slice", 13, NULL, {X34, "int64[1]:1", "int64[1]:3", "int64[1]:-1"},
     {"float[3,2]:1,2,5,6,9,10"}, NULL},
    {"slice steps", "Slice", 13, NULL,
     {X34, "int64[2]:0,0", "int64[2]:3,4", "int64[2]:0,1", "int64[2]:2,3"},
     {"float[2,2]:0,3,8,11"}, NULL},
    {"slice to int64 max", "Slice", 13, NULL,
     {"float[4]:0,1,2,3", "int64[1]:2", "int64[1]:" I64MAX}, {"float[2]:2,3"}, NULL},
    {"slice whole reversed", "Slice", 13, NULL,
     {"float[5]:0,1,2,3,4", "int64[1]:-1", "int64[1]:" I64MIN, "int64[1]:0", "int64[1]:-1"},
     {"float[5]:4,3,2,1,0"}, NULL},
    {"slice step int64 min", "Slice", 13, NULL,
     {"float[5]:0,1,2,3,4", "int64[1]:3", "int64[1]:" I64MIN, "int64[1]:0",
      "int64[1]:" I64MIN},
     {"float[1]:3"}, NULL},
    {"slice huge step", "Slice", 13, NULL,
     {"float[5]:0,1,2,3,4", "int64[1]:1", "int64[1]:5", "int64[1]:0", "int64[1]:" I64MAX},
     {"float[1]:1"}, NULL},
    {"slice reversed rows", "Slice", 13, NULL,
     {X34, "int64[1]:2", "int64[1]:-4", "int64[1]:0", "int64[1]:-1"},
     {"float[3,4]:8,9,10,11,4,5,6,7,0,1,2,3"}, NULL},
    {"slice int32 inputs", "Slice", 13, NULL,
     {"int64[4]:5,6,7,8", "int32[1]:1", "int32[1]:-1"}, {"int64[2]:6,7"}, NULL},
    {"slice opset 1", "Slice", 1, "starts=[1];ends=[3];axes=[0]", {"float[4]:0,1,2,3"},
     {"float[2]:1,2"}, NULL},
    {"slice opset 1 default axes", "Slice", 9, "starts=[0,1];ends=[1,10]", {X34},
     {"float[1,3]:1,2,3"}, NULL},
    {"slice string", "Slice", 13, NULL, {"string[3]:a,b,c", "int64[1]:1", "int64[1]:3"},
     {"string[2]:b,c"}, NULL},
    {"slice empty input", "Slice", 13, NULL, {"float[0,2]", "int64[1]:0", "int64[1]:1",
                                              "int64[1]:1"},
     {"float[0,1]"}, NULL},
    {"slice empty axis reversed", "Slice", 13, NULL,
     {"float[0]", "int64[1]:-1", "int64[1]:" I64MIN, "int64[1]:0", "int64[1]:-1"},
     {"float[0]"}, NULL},
    {"slice step 0", "Slice", 13, NULL,
     {"float[4]", "int64[1]:0", "int64[1]:1", "int64[1]:0", "int64[1]:0"}, {NULL}, "step 0"},
    {"slice axis twice", "Slice", 13, NULL,
     {X34, "int64[2]:0,0", "int64[2]:1,1", "int64[2]:1,-1"}, {NULL}, "twice"},
    {"slice length mismatch", "Slice", 13, NULL, {X34, "int64[2]:0,0", "int64[1]:1"}, {NULL},
     "differ in length"},
    {"slice axis out of range", "Slice", 13, NULL,
     {X34, "int64[1]:0", "int64[1]:1", "int64[1]:2"}, {NULL}, "out of range"},
    {"slice missing ends", "Slice", 13, NULL, {X34, "int64[1]:0", "-"}, {NULL}, "'ends'"},
};

Test(movement, slice) { RUN_KERNELS(slice_cases); }

static const kcase gather_cases[] = {
    {"gather axis 0", "Gather", 13, NULL, {"float[3,2]:1,2,3,4,5,6", "int64[2]:2,0"},
     {"float[2,2]:5,6,1,2"}, NULL},
    {"gather axis 1, 2-D indices", "Gather", 13, "axis=1",
     {"float[2,3]:1,2,3,4,5,6", "int64[2,2]:0,2,1,-1"}, {"float[2,2,2]:1,3,2,3,4,6,5,6"}, NULL},
    {"gather scalar index", "Gather", 13, NULL, {"float[3]:1,2,3", "int64[]:1"}, {"float[]:2"},
     NULL},
    {"gather shape vector", "Gather", 13, NULL, {"int64[4]:1,3,224,224", "int64[]:-1"},
     {"int64[]:224"}, NULL},
    {"gather string int32", "Gather", 13, NULL, {"string[3]:a,b,c", "int32[2]:2,2"},
     {"string[2]:c,c"}, NULL},
    {"gather empty indices", "Gather", 13, "axis=1", {"float[2,3]", "int64[0]"},
     {"float[2,0]"}, NULL},
    {"gather out of range", "Gather", 13, NULL, {"float[3]", "int64[1]:3"}, {NULL},
     "out of range"},
    {"gather float indices", "Gather", 13, NULL, {"float[3]", "float[1]:1"}, {NULL},
     "int32 or int64"},
    {"gather scalar data", "Gather", 13, NULL, {"float[]:1", "int64[]:0"}, {NULL}, "rank >= 1"},
    {"gather_elements axis 1", "GatherElements", 13, "axis=1",
     {"float[2,2]:1,2,3,4", "int64[2,2]:0,0,1,0"}, {"float[2,2]:1,1,4,3"}, NULL},
    {"gather_elements axis 0", "GatherElements", 13, NULL,
     {"float[3,3]:1,2,3,4,5,6,7,8,9", "int64[2,3]:1,2,0,2,0,0"}, {"float[2,3]:4,8,3,7,2,3"},
     NULL},
    {"gather_elements negative", "GatherElements", 13, NULL,
     {"float[3,3]:1,2,3,4,5,6,7,8,9", "int64[2,3]:-1,-2,0,-2,0,0"},
     {"float[2,3]:7,5,3,4,2,3"}, NULL},
    {"gather_elements out of range", "GatherElements", 13, NULL,
     {"float[2,2]", "int64[1,1]:2"}, {NULL}, "out of range"},
    {"gather_elements rank", "GatherElements", 13, NULL, {"float[2,2]", "int64[2]:0,0"},
     {NULL}, "rank"},
    {"gather_elements wide indices", "GatherElements", 13, NULL,
     {"float[2,2]", "int64[1,3]:0,0,0"}, {NULL}, "exceeds"},
    {"gathernd int32", "GatherND", 13, NULL, {"int32[2,2]:0,1,2,3", "int64[2,2]:0,0,1,1"},
     {"int32[2]:0,3"}, NULL},
    {"gathernd slices", "GatherND", 13, NULL, {"int32[2,2]:0,1,2,3", "int64[2,1]:1,0"},
     {"int32[2,2]:2,3,0,1"}, NULL},
    {"gathernd float", "GatherND", 13, NULL,
     {"float[2,2,2]:0,1,2,3,4,5,6,7", "int64[2,1,2]:0,1,1,0"}, {"float[2,1,2]:2,3,4,5"}, NULL},
    {"gathernd batch_dims", "GatherND", 13, "batch_dims=1",
     {"int32[2,2,2]:0,1,2,3,4,5,6,7", "int64[2,1]:1,0"}, {"int32[2,2]:2,3,4,5"}, NULL},
    {"gathernd negative", "GatherND", 13, NULL, {"int32[2,2]:0,1,2,3", "int64[1,2]:-1,-2"},
     {"int32[1]:2"}, NULL},
    {"gathernd long tuple", "GatherND", 13, NULL, {"float[2,2]", "int64[1,3]:0,0,0"}, {NULL},
     "tuples"},
    {"gathernd out of range", "GatherND", 13, NULL, {"float[2,2]", "int64[1,2]:0,2"}, {NULL},
     "out of range"},
    {"gathernd batch mismatch", "GatherND", 13, "batch_dims=1",
     {"float[2,2]", "int64[3,1]:0,0,0"}, {NULL}, "batch dim 0"},
};

Test(movement, gather) { RUN_KERNELS(gather_cases); }

static const kcase scatter_cases[] = {
    {"scatter opset 10", "Scatter", 10, "axis=1",
     {"float[1,5]:1,2,3,4,5", "int64[1,2]:1,3", "float[1,2]:1.5,2.5"},
     {"float[1,5]:1,1.5,3,2.5,5"}, NULL},
    {"scatter_elements no axis", "ScatterElements", 16, NULL,
     {"float[3,3]", "int64[2,3]:1,0,2,0,2,1", "float[2,3]:1,1.5,2,2.5,3,3.5"},
     {"float[3,3]:2.5,1.5,0,1,0,3.5,0,3,2"}, NULL},
    {"scatter_elements add duplicates", "ScatterElements", 16, "axis=1;reduction=s:add",
     {"float[1,5]:1,2,3,4,5", "int64[1,2]:1,1", "float[1,2]:1.5,2.25"},
     {"float[1,5]:1,5.75,3,4,5"}, NULL},
    {"scatter_elements mul", "ScatterElements", 16, "axis=1;reduction=s:mul",
     {"float[1,3]:1,2,3", "int64[1,2]:2,2", "float[1,2]:2,4"}, {"float[1,3]:1,2,24"}, NULL},
    {"scatter_elements negative", "ScatterElements", 16, "axis=1",
     {"float[1,5]:1,2,3,4,5", "int64[1,2]:1,-3", "float[1,2]:1.5,2.5"},
     {"float[1,5]:1,1.5,2.5,4,5"}, NULL},
    {"scatter_elements int64 add", "ScatterElements", 16, "reduction=s:add",
     {"int64[3]:1,2,3", "int64[2]:0,0", "int64[2]:10,20"}, {"int64[3]:31,2,3"}, NULL},
    {"scatter_elements max at 18", "ScatterElements", 18, "reduction=s:max",
     {"int32[2]:5,1", "int64[2]:0,1", "int32[2]:3,4"}, {"int32[2]:5,4"}, NULL},
    {"scatter_elements string", "ScatterElements", 13, NULL,
     {"string[3]:a,b,c", "int64[1]:1", "string[1]:z"}, {"string[3]:a,z,c"}, NULL},
    {"scatter_elements add before 16", "ScatterElements", 13, "reduction=s:add",
     {"float[1]", "int64[1]:0", "float[1]:1"}, {NULL}, "not supported at opset 13"},
    {"scatter_elements out of range", "ScatterElements", 16, NULL,
     {"float[2]", "int64[1]:2", "float[1]:1"}, {NULL}, "out of range"},
    {"scatter_elements updates shape", "ScatterElements", 16, NULL,
     {"float[2]", "int64[1]:0", "float[2]:1,2"}, {NULL}, "'updates'"},
    {"scatternd elements", "ScatterND", 16, NULL,
     {"float[8]:1,2,3,4,5,6,7,8", "int64[4,1]:4,3,1,7", "float[4]:9,10,11,12"},
     {"float[8]:1,11,3,10,9,6,7,12"}, NULL},
    {"scatternd slice", "ScatterND", 16, NULL,
     {"float[2,2]:1,2,3,4", "int64[1,1]:1", "float[1,2]:5,6"}, {"float[2,2]:1,2,5,6"}, NULL},
    {"scatternd add", "ScatterND", 16, "reduction=s:add",
     {"float[4]:1,2,3,4", "int64[2,1]:0,0", "float[2]:5,6"}, {"float[4]:12,2,3,4"}, NULL},
    {"scatternd mul", "ScatterND", 16, "reduction=s:mul",
     {"float[4]:1,2,3,4", "int64[2,1]:1,1", "float[2]:2,3"}, {"float[4]:1,12,3,4"}, NULL},
    {"scatternd full index", "ScatterND", 13, NULL,
     {"int32[2,2]:1,2,3,4", "int64[1,2]:1,-1", "int32[1]:9"}, {"int32[2,2]:1,2,3,9"}, NULL},
    {"scatternd updates shape", "ScatterND", 16, NULL,
     {"float[2,2]", "int64[1,1]:1", "float[1,3]:1,2,3"}, {NULL}, "'updates'"},
    {"scatternd out of range", "ScatterND", 16, NULL,
     {"float[2]", "int64[1,1]:5", "float[1]:1"}, {NULL}, "out of range"},
};

Test(movement, scatter) { RUN_KERNELS(scatter_cases); }

static const kcase pad_cases[] = {
    {"pad constant", "Pad", 13, NULL,
     {"float[2,2]:1,2,3,4", "int64[4]:0,1,1,0", "float[]:9"},
     {"float[3,3]:9,1,2,9,3,4,9,9,9"}, NULL},
    {"pad reflect", "Pad", 13, "mode=s:reflect", {"int32[1,3]:1,2,3", "int64[4]:0,2,0,2"},
     {"int32[1,7]:3,2,1,2,3,2,1"}, NULL},
    {"pad reflect beyond the edge", "Pad", 13, "mode=s:reflect", {"int32[3]:1,2,3",
                                                                  "int64[2]:5,0"},
     {"int32[8]:2,1,2,3,2,1,2,3"}, NULL},
    {"pad edge", "Pad", 13, "mode=s:edge", {"int32[1,3]:1,2,3", "int64[4]:0,2,0,1"},
     {"int32[1,6]:1,1,1,2,3,3"}, NULL},
    {"pad edge rows", "Pad", 13, "mode=s:edge", {"int32[2,1]:1,2", "int64[4]:1,0,1,0"},
     {"int32[4,1]:1,1,2,2"}, NULL},
    {"pad crop", "Pad", 13, NULL, {"float[4]:1,2,3,4", "int64[2]:-1,1"}, {"float[4]:2,3,4,0"},
     NULL},
    {"pad opset 2", "Pad", 2, "pads=[1,1];value=f:7", {"float[1]:5"}, {"float[3]:7,5,7"}, NULL},
    {"pad opset 1", "Pad", 1, "paddings=[1,0]", {"float[1]:5"}, {"float[2]:0,5"}, NULL},
    {"pad string", "Pad", 13, NULL, {"string[2]:a,b", "int64[2]:1,0", "string[]:z"},
     {"string[3]:z,a,b"}, NULL},
    {"pad empty constant", "Pad", 13, NULL, {"float[0]", "int64[2]:1,1", "float[]:3"},
     {"float[2]:3,3"}, NULL},
    {"pad wrap at 19", "Pad", 19, "mode=s:wrap", {"int32[3]:1,2,3", "int64[2]:2,1"},
     {"int32[6]:2,3,1,2,3,1"}, NULL},
    {"pad axes at 18", "Pad", 18, NULL, {"float[2,2]:1,2,3,4", "int64[2]:1,0", "-",
                                         "int64[1]:-1"},
     {"float[2,3]:0,1,2,0,3,4"}, NULL},
    {"pad wrong length", "Pad", 13, NULL, {"float[2]", "int64[1]:1"}, {NULL}, "expected 2"},
    {"pad edge of empty", "Pad", 13, "mode=s:edge", {"float[0]", "int64[2]:1,0"}, {NULL},
     "empty axis"},
    {"pad wrap before 19", "Pad", 13, "mode=s:wrap", {"float[2]", "int64[2]:1,0"}, {NULL},
     "not supported"},
    {"pad negative size", "Pad", 13, NULL, {"float[2]", "int64[2]:-2,-1"}, {NULL}, "negative"},
    {"pad value type", "Pad", 13, NULL, {"float[2]", "int64[2]:1,0", "double[]:1"}, {NULL},
     "'constant_value'"},
};

Test(movement, pad) { RUN_KERNELS(pad_cases); }

static const kcase tile_expand_cases[] = {
    {"tile 1-D", "Tile", 13, NULL, {"float[2]:1,2", "int64[1]:3"}, {"float[6]:1,2,1,2,1,2"},
     NULL},
    {"tile 2-D", "Tile", 13, NULL, {"float[2,2]:1,2,3,4", "int64[2]:2,2"},
     {"float[4,4]:1,2,1,2,3,4,3,4,1,2,1,2,3,4,3,4"}, NULL},
    {"tile rows only", "Tile", 13, NULL, {"int8[1,2]:1,2", "int64[2]:2,1"},
     {"int8[2,2]:1,2,1,2"}, NULL},
    {"tile zero", "Tile", 13, NULL, {"float[2]:1,2", "int64[1]:0"}, {"float[0]"}, NULL},
    {"tile string", "Tile", 13, NULL, {"string[1]:s", "int64[1]:2"}, {"string[2]:s,s"}, NULL},
    {"tile opset 1", "Tile", 1, NULL, {"float[2]:1,2", "int64[]:2", "int64[]:0"},
     {"float[4]:1,2,1,2"}, NULL},
    {"tile repeats length", "Tile", 13, NULL, {"float[2]", "int64[2]:1,1"}, {NULL},
     "2 entries for rank 1"},
    {"tile negative", "Tile", 13, NULL, {"float[2]", "int64[1]:-1"}, {NULL}, "negative"},
    {"expand rank up", "Expand", 13, NULL, {"float[3,1]:1,2,3", "int64[3]:2,1,2"},
     {"float[2,3,2]:1,1,2,2,3,3,1,1,2,2,3,3"}, NULL},
    {"expand columns", "Expand", 13, NULL, {"float[3,1]:1,2,3", "int64[2]:3,4"},
     {"float[3,4]:1,1,1,1,2,2,2,2,3,3,3,3"}, NULL},
    {"expand smaller shape", "Expand", 13, NULL, {"float[3,1]:1,2,3", "int64[1]:1"},
     {"float[3,1]:1,2,3"}, NULL},
    {"expand rows", "Expand", 8, NULL, {"float[1,3]:1,2,3", "int64[2]:2,1"},
     {"float[2,3]:1,2,3,1,2,3"}, NULL},
    {"expand string", "Expand", 13, NULL, {"string[1]:a", "int64[1]:3"}, {"string[3]:a,a,a"},
     NULL},
    {"expand to empty", "Expand", 13, NULL, {"float[1]:1", "int64[2]:0,1"}, {"float[0,1]"},
     NULL},
    {"expand negative", "Expand", 13, NULL, {"float[1]", "int64[1]:-1"}, {NULL}, "negative"},
    {"expand mismatch", "Expand", 13, NULL, {"float[3]", "int64[1]:2"}, {NULL},
     "does not expand"},
};

Test(movement, tile_expand) { RUN_KERNELS(tile_expand_cases); }

static const kcase generator_cases[] = {
    {"range float", "Range", 11, NULL, {"float[]:1", "float[]:5", "float[]:2"},
     {"float[2]:1,3"}, NULL},
    {"range int32 negative", "Range", 11, NULL, {"int32[]:10", "int32[]:4", "int32[]:-3"},
     {"int32[2]:10,7"}, NULL},
    {"range empty", "Range", 11, NULL, {"int64[]:0", "int64[]:0", "int64[]:1"}, {"int64[0]"},
     NULL},
    {"range wrong direction", "Range", 11, NULL, {"int64[]:0", "int64[]:5", "int64[]:-1"},
     {"int64[0]"}, NULL},
    {"range double", "Range", 11, NULL, {"double[]:0", "double[]:1", "double[]:0.25"},
     {"double[4]:0,0.25,0.5,0.75"}, NULL},
    {"range int16", "Range", 11, NULL, {"int16[]:-3", "int16[]:3", "int16[]:2"},
     {"int16[3]:-3,-1,1"}, NULL},
    {"range int64 extremes", "Range", 11, NULL,
     {"int64[]:" I64MIN, "int64[]:" I64MAX, "int64[]:" I64MAX},
     {"int64[3]:" I64MIN ",-1," "9223372036854775806"}, NULL},
    {"range delta 0", "Range", 11, NULL, {"int32[]:0", "int32[]:5", "int32[]:0"}, {NULL},
     "'delta' is 0"},
    {"range types differ", "Range", 11, NULL, {"int32[]:0", "int64[]:5", "int32[]:1"}, {NULL},
     "'limit'"},
    {"nonzero bool", "NonZero", 13, NULL, {"bool[2,2]:1,0,1,1"}, {"int64[2,3]:0,1,1,0,0,1"},
     NULL},
    {"nonzero float", "NonZero", 13, NULL, {"float[3]:0,2,-1"}, {"int64[1,2]:1,2"}, NULL},
    {"nonzero scalar", "NonZero", 13, NULL, {"float[]:5"}, {"int64[1,1]:0"}, NULL},
    {"nonzero none", "NonZero", 9, NULL, {"int32[2,2]:0,0,0,0"}, {"int64[2,0]"}, NULL},
    {"nonzero string", "NonZero", 13, NULL, {"string[1]:a"}, {NULL}, "NonZero of string"},
    {"onehot without axis", "OneHot", 11, NULL,
     {"int64[3]:0,7,8", "float[]:12", "int32[2]:2,5"},
     {"int32[3,12]:"
     "5,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,5,2,2,2,2,2,2,2,2,2,2,2,2,5,2,2,2"},
     NULL},
    {"onehot axis 0", "OneHot", 11, "axis=0", {"int64[2]:1,0", "int64[]:3", "float[2]:0,1"},
     {"float[3,2]:0,1,1,0,0,0"}, NULL},
    {"onehot negative indices", "OneHot", 11, NULL,
     {"int64[2]:-1,5", "int64[]:3", "float[2]:0,1"}, {"float[2,3]:0,0,1,0,0,0"}, NULL},
    {"onehot negative at 9", "OneHot", 9, NULL, {"int64[1]:-1", "int64[]:3", "float[2]:0,1"},
     {"float[1,3]:0,0,0"}, NULL},
    {"onehot float indices", "OneHot", 11, "axis=-2",
     {"float[1]:1.7", "float[1]:3", "float[2]:0,1"}, {"float[3,1]:0,1,0"}, NULL},
    {"onehot depth 0", "OneHot", 11, NULL, {"int64[1]:0", "int64[]:0", "float[2]:0,1"}, {NULL},
     "'depth' is 0"},
    {"onehot values", "OneHot", 11, NULL, {"int64[1]:0", "int64[]:2", "float[3]:0,1,2"},
     {NULL}, "[off, on]"},
    {"eyelike", "EyeLike", 9, NULL, {"int32[2,3]"}, {"int32[2,3]:1,0,0,0,1,0"}, NULL},
    {"eyelike k 1 float", "EyeLike", 9, "k=1;dtype=1", {"int32[2,3]"},
     {"float[2,3]:0,1,0,0,0,1"}, NULL},
    {"eyelike k -1", "EyeLike", 9, "k=-1", {"double[3,2]"}, {"double[3,2]:0,0,1,0,0,1"}, NULL},
    {"eyelike k far", "EyeLike", 9, "k=5", {"bool[2,2]"}, {"bool[2,2]:0,0,0,0"}, NULL},
    {"eyelike rank", "EyeLike", 9, NULL, {"float[2]"}, {NULL}, "rank 2"},
    {"eyelike string dtype", "EyeLike", 9, "dtype=8", {"float[2,2]"}, {NULL}, "not supported"},
};

Test(movement, generators) { RUN_KERNELS(generator_cases); }

#define M33 "int64[3,3]:1,2,3,4,5,6,7,8,9"

static const kcase trilu_compress_cases[] = {
    {"triu", "Trilu", 14, NULL, {M33}, {"int64[3,3]:1,2,3,0,5,6,0,0,9"}, NULL},
    {"tril", "Trilu", 14, "upper=0", {M33}, {"int64[3,3]:1,0,0,4,5,0,7,8,9"}, NULL},
    {"triu k 1", "Trilu", 14, NULL, {M33, "int64[]:1"}, {"int64[3,3]:0,2,3,0,0,6,0,0,0"}, NULL},
    {"tril k -1", "Trilu", 14, "upper=0", {M33, "int64[]:-1"}, {"int64[3,3]:0,0,0,4,0,0,7,8,0"},
     NULL},
    {"tril batch", "Trilu", 14, "upper=0", {"float[2,1,2]:1,2,3,4"}, {"float[2,1,2]:1,0,3,0"},
     NULL},
    {"triu empty", "Trilu", 14, NULL, {"int64[0,5]", "int64[]:1"}, {"int64[0,5]"}, NULL},
    {"triu huge k", "Trilu", 14, NULL, {"int64[1,2]:1,2", "int64[]:" I64MAX}, {"int64[1,2]:0,0"},
     NULL},
    {"tril huge k", "Trilu", 14, "upper=0", {"int64[1,2]:1,2", "int64[]:" I64MAX},
     {"int64[1,2]:1,2"}, NULL},
    {"tril min k", "Trilu", 14, "upper=0", {"int64[1,2]:1,2", "int64[]:" I64MIN},
     {"int64[1,2]:0,0"}, NULL},
    {"trilu rank 1", "Trilu", 14, NULL, {"float[3]"}, {NULL}, "rank >= 2"},
    {"compress axis 0", "Compress", 11, "axis=0", {"float[3,2]:1,2,3,4,5,6", "bool[3]:0,1,1"},
     {"float[2,2]:3,4,5,6"}, NULL},
    {"compress axis 1", "Compress", 11, "axis=1", {"float[3,2]:1,2,3,4,5,6", "bool[2]:0,1"},
     {"float[3,1]:2,4,6"}, NULL},
    {"compress flat", "Compress", 11, NULL, {"float[3,2]:1,2,3,4,5,6", "bool[5]:0,1,0,0,1"},
     {"float[2]:2,5"}, NULL},
    {"compress negative axis", "Compress", 11, "axis=-1",
     {"float[3,2]:1,2,3,4,5,6", "bool[2]:1,0"}, {"float[3,1]:1,3,5"}, NULL},
    {"compress none", "Compress", 11, "axis=0", {"string[2]:a,b", "bool[2]:0,0"},
     {"string[0]"}, NULL},
    {"compress past axis", "Compress", 11, "axis=0", {"float[3,2]", "bool[4]:0,0,0,1"},
     {NULL}, "past the axis"},
    {"compress negative at 9", "Compress", 9, "axis=-1", {"float[3,2]", "bool[2]:1,0"},
     {NULL}, "needs opset 11"},
};

Test(movement, trilu_compress) { RUN_KERNELS(trilu_compress_cases); }

static const kcase space_cases[] = {
    {"depthtospace DCR", "DepthToSpace", 13, "blocksize=2", {"float[1,8,1,1]:0,1,2,3,4,5,6,7"},
     {"float[1,2,2,2]:0,2,4,6,1,3,5,7"}, NULL},
    {"depthtospace CRD", "DepthToSpace", 13, "blocksize=2;mode=s:CRD",
     {"float[1,8,1,1]:0,1,2,3,4,5,6,7"}, {"float[1,2,2,2]:0,1,2,3,4,5,6,7"}, NULL},
    {"depthtospace height 2", "DepthToSpace", 11, "blocksize=2",
     {"float[1,4,2,1]:0,1,2,3,4,5,6,7"}, {"float[1,1,4,2]:0,2,4,6,1,3,5,7"}, NULL},
    {"depthtospace mode ignored before 11", "DepthToSpace", 1, "blocksize=2;mode=s:CRD",
     {"float[1,8,1,1]:0,1,2,3,4,5,6,7"}, {"float[1,2,2,2]:0,2,4,6,1,3,5,7"}, NULL},
    {"depthtospace channels", "DepthToSpace", 13, "blocksize=2", {"float[1,3,1,1]"}, {NULL},
     "divisible by 4"},
    {"depthtospace mode", "DepthToSpace", 13, "blocksize=2;mode=s:XYZ", {"float[1,4,1,1]"},
     {NULL}, "neither DCR nor CRD"},
    {"depthtospace blocksize", "DepthToSpace", 13, NULL, {"float[1,4,1,1]"}, {NULL},
     "'blocksize'"},
    {"spacetodepth", "SpaceToDepth", 13, "blocksize=2", {"float[1,1,2,2]:1,2,3,4"},
     {"float[1,4,1,1]:1,2,3,4"}, NULL},
    {"spacetodepth channels", "SpaceToDepth", 13, "blocksize=2",
     {"float[1,2,2,2]:0,1,2,3,4,5,6,7"}, {"float[1,8,1,1]:0,4,1,5,2,6,3,7"}, NULL},
    {"spacetodepth wide", "SpaceToDepth", 13, "blocksize=2",
     {"int8[1,1,2,4]:0,1,2,3,4,5,6,7"}, {"int8[1,4,1,2]:0,2,1,3,4,6,5,7"}, NULL},
    {"spacetodepth height", "SpaceToDepth", 13, "blocksize=2", {"float[1,1,3,2]"}, {NULL},
     "divisible"},
    {"reversesequence time major", "ReverseSequence", 10, "time_axis=0;batch_axis=1",
     {"float[4,4]:0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15", "int64[4]:4,3,2,1"},
     {"float[4,4]:12,9,6,3,8,5,2,7,4,1,10,11,0,13,14,15"}, NULL},
    {"reversesequence batch major", "ReverseSequence", 10, "time_axis=1;batch_axis=0",
     {"float[2,3]:1,2,3,4,5,6", "int64[2]:2,3"}, {"float[2,3]:2,1,3,6,5,4"}, NULL},
    {"reversesequence inner dims", "ReverseSequence", 10, NULL,
     {"int32[2,1,2]:1,2,3,4", "int64[1]:2"}, {"int32[2,1,2]:3,4,1,2"}, NULL},
    {"reversesequence zero length", "ReverseSequence", 10, NULL,
     {"float[2,1]:1,2", "int64[1]:0"}, {"float[2,1]:1,2"}, NULL},
    {"reversesequence too long", "ReverseSequence", 10, NULL, {"float[2,1]", "int64[1]:3"},
     {NULL}, "outside [0, 2]"},
    {"reversesequence lens count", "ReverseSequence", 10, NULL,
     {"float[2,2]", "int64[1]:1"}, {NULL}, "batch of 2"},
    {"reversesequence same axes", "ReverseSequence", 10, "time_axis=1",
     {"float[2,2]", "int64[2]:1,1"}, {NULL}, "batch_axis/time_axis"},
};

Test(movement, space_and_sequence) { RUN_KERNELS(space_cases); }

static const kcase unique_cases[] = {
    {"unique sorted", "Unique", 11, NULL, {"float[6]:2,1,1,3,4,3"},
     {"float[4]:1,2,3,4", "int64[4]:1,0,3,4", "int64[6]:1,0,0,2,3,2", "int64[4]:2,1,2,1"},
     NULL},
    {"unique not sorted", "Unique", 11, "sorted=0", {"float[6]:2,1,1,3,4,3"},
     {"float[4]:2,1,3,4", "int64[4]:0,1,3,4", "int64[6]:0,1,1,2,3,2", "int64[4]:1,2,2,1"},
     NULL},
    {"unique axis 0", "Unique", 11, "axis=0", {"float[3,3]:1,0,0,1,0,0,2,3,4"},
     {"float[2,3]:1,0,0,2,3,4", "int64[2]:0,2", "int64[3]:0,0,1", "int64[2]:2,1"}, NULL},
    {"unique axis 1 3-D", "Unique", 11, "axis=1",
     {"float[2,4,2]:1,1,0,1,2,1,0,1,1,1,0,1,2,1,0,1"},
     {"float[2,3,2]:0,1,1,1,2,1,0,1,1,1,2,1", "int64[3]:1,0,2", "int64[4]:1,0,2,0",
      "int64[3]:2,1,1"},
     NULL},
    {"unique negative axis", "Unique", 11, "axis=-1", {"float[3,3]:1,0,0,1,0,0,2,3,3"},
     {"float[3,2]:0,1,0,1,3,2", "int64[2]:1,0", "int64[3]:1,0,0", "int64[2]:2,1"}, NULL},
    {"unique strings", "Unique", 11, NULL, {"string[4]:b,a,b,c"},
     {"string[3]:a,b,c", "int64[3]:1,0,3", "int64[4]:1,0,1,2", "int64[3]:1,2,1"}, NULL},
    {"unique int64 extremes", "Unique", 11, NULL, {"int64[3]:" I64MAX "," I64MIN "," I64MAX},
     {"int64[2]:" I64MIN "," I64MAX, "int64[2]:1,0", "int64[3]:1,0,1", "int64[2]:1,2"}, NULL},
    {"unique empty", "Unique", 11, NULL, {"float[0]"},
     {"float[0]", "int64[0]", "int64[0]", "int64[0]"}, NULL},
    {"unique only Y", "Unique", 11, NULL, {"int32[3]:3,3,1"}, {"int32[2]:1,3"}, NULL},
    {"unique axis out of range", "Unique", 11, "axis=2", {"float[2,2]"}, {NULL},
     "out of range"},
};

Test(movement, unique) { RUN_KERNELS(unique_cases); }

/* ==== shape functions ========================================================================= */

static const icase infer_reshape_cases[] = {
    {"copy and infer", "Reshape", 14, NULL, {"float[N,3,4]", "=int64[2]:0,-1"}, {"float[N,12]"},
     NULL},
    {"-1 recovers N", "Reshape", 14, NULL, {"float[N,3,4]", "=int64[2]:-1,12"}, {"float[N,12]"},
     NULL},
    {"merge into a product", "Reshape", 14, NULL, {"float[N,3,4]", "=int64[1]:-1"},
     {"float[N*12]"}, NULL},
    {"split a product", "Reshape", 14, NULL, {"float[N*12]", "=int64[3]:-1,3,4"},
     {"float[N,3,4]"}, NULL},
    {"two symbols", "Reshape", 14, NULL, {"float[seq,N,2]", "=int64[1]:-1"},
     {"float[N*seq*2]"}, NULL},
    {"heads", "Reshape", 14, NULL, {"float[batch,seq,768]", "=int64[4]:0,0,12,64"},
     {"float[batch,seq,12,64]"}, NULL},
    {"heads back", "Reshape", 14, NULL, {"float[batch,seq,12,64]", "=int64[3]:0,0,-1"},
     {"float[batch,seq,768]"}, NULL},
    {"unknown copied dim cancels", "Reshape", 14, NULL, {"float[?,3,4]", "=int64[2]:0,-1"},
     {"float[?,12]"}, NULL},
    {"unknown dim in -1", "Reshape", 14, NULL, {"float[?,3,4]", "=int64[2]:-1,12"},
     {"float[?,12]"}, NULL},
    {"symbol does not divide", "Reshape", 14, NULL, {"float[N,3]", "=int64[2]:-1,2"},
     {"float[?,2]"}, NULL},
    {"shape not constant", "Reshape", 14, NULL, {"float[N,3]", "int64[3]"}, {"float[?,?,?]"},
     NULL},
    {"shape length unknown", "Reshape", 14, NULL, {"float[N,3]", "int64[?]"}, {"float[*]"},
     NULL},
    {"input rank unknown", "Reshape", 14, NULL, {"float", "=int64[2]:2,3"}, {"float[2,3]"},
     NULL},
    {"input rank unknown copy", "Reshape", 14, NULL, {"float", "=int64[2]:0,-1"},
     {"float[?,?]"}, NULL},
    {"allowzero keeps 0", "Reshape", 14, "allowzero=1", {"float[N,0]", "=int64[2]:0,5"},
     {"float[0,5]"}, NULL},
    {"opset 1 attribute", "Reshape", 1, "shape=[3,-1]", {"float[3,4]"}, {"float[3,4]"}, NULL},
    {"unknown input type", "Reshape", 14, NULL, {"?", "=int64[1]:-1"}, {"?"}, NULL},
    {"mismatch", "Reshape", 14, NULL, {"float[2,3]", "=int64[2]:4,4"}, {NULL},
     "cannot reshape"},
    {"-1 does not divide", "Reshape", 14, NULL, {"float[2,3]", "=int64[2]:-1,4"}, {NULL},
     "cannot reshape"},
    {"copy past rank", "Reshape", 14, NULL, {"float[2]", "=int64[2]:0,0"}, {NULL},
     "has rank 1"},
    {"two -1", "Reshape", 14, NULL, {"float[N]", "=int64[2]:-1,-1"}, {NULL}, "more than one"},
    {"flatten axis 1", "Flatten", 13, NULL, {"float[N,3,4]"}, {"float[N,12]"}, NULL},
    {"flatten axis 2", "Flatten", 13, "axis=2", {"float[N,3,4]"}, {"float[N*3,4]"}, NULL},
    {"flatten axis 0", "Flatten", 13, "axis=0", {"float[N,3,4]"}, {"float[1,N*12]"}, NULL},
    {"flatten NCHW", "Flatten", 13, NULL, {"float[N,C,H,W]"}, {"float[N,C*H*W]"}, NULL},
    {"flatten unknown dim", "Flatten", 13, "axis=0", {"float[?,3]"}, {"float[1,?]"}, NULL},
    {"flatten rank unknown", "Flatten", 13, NULL, {"float"}, {"float[?,?]"}, NULL},
    {"flatten zero dim", "Flatten", 13, NULL, {"float[N,0,4]"}, {"float[N,0]"}, NULL},
    {"flatten bad axis", "Flatten", 13, "axis=5", {"float[N,3]"}, {NULL}, "out of range"},
};

Test(movement_infer, reshape_flatten) { RUN_INFERS(infer_reshape_cases); }

static const icase infer_shape_cases[] = {
    {"transpose perm", "Transpose", 13, "perm=[2,0,1]", {"float[N,3,H]"}, {"float[H,N,3]"}, NULL},
    {"transpose default", "Transpose", 13, NULL, {"float[N,3,H]"}, {"float[H,3,N]"}, NULL},
    {"transpose rank unknown", "Transpose", 13, "perm=[1,0]", {"float"}, {"float[?,?]"}, NULL},
    {"transpose bad perm", "Transpose", 13, "perm=[0,2]", {"float[N,3]"}, {NULL},
     "not a permutation"},
    {"squeeze const axes", "Squeeze", 13, NULL, {"float[1,N,1]", "=int64[1]:0"},
     {"float[N,1]"}, NULL},
    {"squeeze symbol axis", "Squeeze", 13, NULL, {"float[1,N]", "=int64[1]:1"}, {"float[1]"},
     NULL},
    {"squeeze all, symbol", "Squeeze", 13, NULL, {"float[1,N,1]"}, {"float[*]"}, NULL},
    {"squeeze all, known", "Squeeze", 13, NULL, {"float[1,3,1]"}, {"float[3]"}, NULL},
    {"squeeze axes unknown", "Squeeze", 13, NULL, {"float[1,N,1]", "int64[2]"}, {"float[?]"},
     NULL},
    {"squeeze attribute", "Squeeze", 11, "axes=[-1]", {"float[N,1]"}, {"float[N]"}, NULL},
    {"squeeze not 1", "Squeeze", 13, NULL, {"float[2,N]", "=int64[1]:0"}, {NULL},
     "cannot squeeze"},
    {"unsqueeze const axes", "Unsqueeze", 13, NULL, {"float[N,3]", "=int64[2]:0,-1"},
     {"float[1,N,3,1]"}, NULL},
    {"unsqueeze attribute", "Unsqueeze", 11, "axes=[1]", {"float[N,3]"}, {"float[N,1,3]"}, NULL},
    {"unsqueeze axes unknown", "Unsqueeze", 13, NULL, {"float[N,3]", "int64[2]"},
     {"float[?,?,?,?]"}, NULL},
    {"unsqueeze scalar", "Unsqueeze", 13, NULL, {"int64[]", "=int64[1]:0"}, {"int64[1]"}, NULL},
    {"unsqueeze duplicate", "Unsqueeze", 13, NULL, {"float[N]", "=int64[2]:1,-2"}, {NULL},
     "twice"},
    {"concat symbols", "Concat", 13, "axis=1", {"float[N,3]", "float[N,5]"}, {"float[N,8]"},
     NULL},
    {"concat symbolic axis", "Concat", 13, "axis=0", {"float[N,3]", "float[M,3]"},
     {"float[?,3]"}, NULL},
    {"concat known wins", "Concat", 13, "axis=1", {"float[?,3]", "float[2,3]"}, {"float[2,6]"},
     NULL},
    {"concat with unknown input", "Concat", 13, "axis=0", {"float[N,3]", "?"}, {"float[?,3]"},
     NULL},
    {"concat shape vectors", "Concat", 13, "axis=0", {"int64[1]", "=int64[2]:-1,4"},
     {"int64[3]"}, NULL},
    {"concat rank mismatch", "Concat", 13, "axis=0", {"float[2]", "float[2,3]"}, {NULL},
     "rank"},
    {"concat dim mismatch", "Concat", 13, "axis=0", {"float[2,3]", "float[4,4]"}, {NULL},
     "dim 1"},
    {"split equal symbolic", "Split", 13, "axis=1", {"float[N,6]"},
     {"float[N,2]", "float[N,2]", "float[N,2]"}, NULL},
    {"split a product", "Split", 13, NULL, {"float[N*2,6]"}, {"float[N,6]", "float[N,6]"}, NULL},
    {"split symbol", "Split", 13, NULL, {"float[N,6]"}, {"float[?,6]", "float[?,6]"}, NULL},
    {"split const sizes", "Split", 13, "axis=1", {"float[N,6]", "=int64[2]:2,4"},
     {"float[N,2]", "float[N,4]"}, NULL},
    {"split unknown sizes", "Split", 13, "axis=1", {"float[N,6]", "int64[2]"},
     {"float[N,?]", "float[N,?]"}, NULL},
    {"split attribute", "Split", 11, "split=[1,1]", {"float[2,N]"}, {"float[1,N]", "float[1,N]"},
     NULL},
    {"split bad sizes", "Split", 13, "axis=1", {"float[N,6]", "=int64[2]:2,2"},
     {"float", "float"}, "sums to 4"},
    {"split not divisible", "Split", 13, NULL, {"float[5]"}, {"float", "float"}, "equal parts"},
};

Test(movement_infer, transpose_squeeze_concat_split) { RUN_INFERS(infer_shape_cases); }

static const icase infer_slice_cases[] = {
    {"slice symbolic keeps", "Slice", 13, NULL,
     {"float[N,10,5]", "=int64[2]:0,3", "=int64[2]:" I64MAX ",4", "=int64[2]:0,2"},
     {"float[N,10,1]"}, NULL},
    {"slice values unknown, axes known", "Slice", 13, NULL,
     {"float[N,10,5]", "int64[1]", "int64[1]", "=int64[1]:1"}, {"float[N,?,5]"}, NULL},
    {"slice nothing known", "Slice", 13, NULL, {"float[N,10,5]", "int64[1]", "int64[1]"},
     {"float[?,?,?]"}, NULL},
    {"slice reverse whole symbolic", "Slice", 13, NULL,
     {"float[N,10]", "=int64[1]:-1", "=int64[1]:" I64MIN, "=int64[1]:0", "=int64[1]:-1"},
     {"float[N,10]"}, NULL},
    {"slice part of symbol", "Slice", 13, NULL,
     {"float[N,10]", "=int64[1]:1", "=int64[1]:3", "=int64[1]:0"}, {"float[?,10]"}, NULL},
    {"slice default axes", "Slice", 13, NULL,
     {"float[20,10,5]", "=int64[3]:0,0,3", "=int64[3]:20,10,4"}, {"float[20,10,1]"}, NULL},
    {"slice negative steps", "Slice", 13, NULL,
     {"float[20,10,5]", "=int64[3]:20,10,4", "=int64[3]:0,0,1", "=int64[3]:0,1,2",
      "=int64[3]:-1,-3,-2"},
     {"float[19,3,2]"}, NULL},
    {"slice opset 1", "Slice", 1, "starts=[1];ends=[1000]", {"float[N,4]"}, {"float[?,4]"}, NULL},
    {"slice rank unknown", "Slice", 13, NULL, {"float", "=int64[1]:0", "=int64[1]:1"},
     {"float[*]"}, NULL},
    {"slice step 0", "Slice", 13, NULL,
     {"float[4]", "=int64[1]:0", "=int64[1]:1", "=int64[1]:0", "=int64[1]:0"}, {NULL},
     "step 0"},
    {"gather symbolic", "Gather", 13, "axis=1", {"float[N,5,H]", "int64[2,K]"},
     {"float[N,2,K,H]"}, NULL},
    {"gather shape scalar", "Gather", 13, NULL, {"int64[4]", "=int64[]:0"}, {"int64[]"}, NULL},
    {"gather indices unknown", "Gather", 13, NULL, {"float[N,5]", "?"}, {"float[*]"}, NULL},
    {"gather bad axis", "Gather", 13, "axis=2", {"float[N,5]", "int64[2]"}, {NULL},
     "out of range"},
    {"gather_elements", "GatherElements", 13, "axis=1", {"float[N,4]", "int64[N,2]"},
     {"float[N,2]"}, NULL},
    {"gather_elements rank", "GatherElements", 13, NULL, {"float[N,4]", "int64[2]"}, {NULL},
     "rank"},
    {"gathernd batch", "GatherND", 13, "batch_dims=1", {"float[N,4,5]", "int64[N,3,2]"},
     {"float[N,3]"}, NULL},
    {"gathernd slices", "GatherND", 13, NULL, {"float[4,5,C]", "int64[K,1]"},
     {"float[K,5,C]"}, NULL},
    {"gathernd tuple unknown", "GatherND", 13, NULL, {"float[4,5]", "int64[K,?]"},
     {"float[*]"}, NULL},
    {"gathernd tuple too long", "GatherND", 13, NULL, {"float[4,5]", "int64[K,3]"}, {NULL},
     "invalid"},
    {"scatternd", "ScatterND", 16, NULL, {"float[N,4]", "int64[K,1]", "float[K,4]"},
     {"float[N,4]"}, NULL},
    {"scatter_elements", "ScatterElements", 16, NULL, {"int32[N]", "int64[K]", "int32[K]"},
     {"int32[N]"}, NULL},
};

Test(movement_infer, slice_gather_scatter) { RUN_INFERS(infer_slice_cases); }

static const icase infer_misc_cases[] = {
    {"pad const", "Pad", 13, NULL, {"float[N,3,H,W]", "=int64[8]:0,0,1,1,0,0,1,1"},
     {"float[N,3,?,?]"}, NULL},
    {"pad known", "Pad", 13, NULL, {"float[1,3,4,5]", "=int64[8]:0,0,1,1,0,0,1,1"},
     {"float[1,3,6,7]"}, NULL},
    {"pad unknown pads", "Pad", 13, NULL, {"float[N,3]", "int64[4]"}, {"float[?,?]"}, NULL},
    {"pad attribute", "Pad", 2, "pads=[1,0,1,0]", {"float[N,3]"}, {"float[?,3]"}, NULL},
    {"pad wrong length", "Pad", 13, NULL, {"float[N,3]", "=int64[2]:1,1"}, {NULL},
     "expected 4"},
    {"tile symbolic", "Tile", 13, NULL, {"float[N,3]", "=int64[2]:2,1"}, {"float[N*2,3]"}, NULL},
    {"tile unknown", "Tile", 13, NULL, {"float[N,3]", "int64[2]"}, {"float[?,?]"}, NULL},
    {"tile bad length", "Tile", 13, NULL, {"float[N,3]", "=int64[1]:2"}, {NULL}, "entries"},
    {"expand const", "Expand", 13, NULL, {"float[3,1]", "=int64[3]:2,1,6"}, {"float[2,3,6]"},
     NULL},
    {"expand keeps symbol", "Expand", 13, NULL, {"float[N,1]", "=int64[2]:1,4"},
     {"float[N,4]"}, NULL},
    {"expand symbol to value", "Expand", 13, NULL, {"float[N]", "=int64[1]:4"}, {"float[4]"},
     NULL},
    {"expand unknown shape", "Expand", 13, NULL, {"float[N,1]", "int64[3]"}, {"float[?,?,?]"},
     NULL},
    {"expand unknown keeps known", "Expand", 13, NULL, {"float[1,5]", "int64[2]"},
     {"float[?,5]"}, NULL},
    {"expand mismatch", "Expand", 13, NULL, {"float[3]", "=int64[1]:4"}, {NULL},
     "does not expand"},
    {"constantofshape", "ConstantOfShape", 9, "value=t:int32[1]:1", {"=int64[2]:2,3"},
     {"int32[2,3]"}, NULL},
    {"constantofshape unknown", "ConstantOfShape", 9, NULL, {"int64[3]"}, {"float[?,?,?]"},
     NULL},
    {"range const", "Range", 11, NULL, {"=float[]:1", "=float[]:5", "=float[]:2"}, {"float[2]"},
     NULL},
    {"range unknown", "Range", 11, NULL, {"int32[]", "=int32[]:5", "=int32[]:1"}, {"int32[?]"},
     NULL},
    {"nonzero", "NonZero", 13, NULL, {"bool[N,4]"}, {"int64[2,?]"}, NULL},
    {"nonzero scalar", "NonZero", 13, NULL, {"float[]"}, {"int64[1,?]"}, NULL},
    {"compress const", "Compress", 11, "axis=1", {"float[N,3]", "=bool[3]:1,0,1"},
     {"float[N,2]"}, NULL},
    {"compress unknown", "Compress", 11, "axis=1", {"float[N,3]", "bool[3]"}, {"float[N,?]"},
     NULL},
    {"compress flat", "Compress", 11, NULL, {"float[N,3]", "bool[K]"}, {"float[?]"}, NULL},
    {"onehot last", "OneHot", 11, NULL, {"int64[N]", "=float[]:10", "float[2]"},
     {"float[N,10]"}, NULL},
    {"onehot first", "OneHot", 11, "axis=0", {"int64[N]", "=int64[]:10", "int32[2]"},
     {"int32[10,N]"}, NULL},
    {"onehot depth unknown", "OneHot", 11, NULL, {"int64[N]", "int64[]", "float[2]"},
     {"float[N,?]"}, NULL},
    {"eyelike", "EyeLike", 9, "dtype=1", {"int32[N,M]"}, {"float[N,M]"}, NULL},
    {"trilu", "Trilu", 14, NULL, {"int64[B,N,N]", "=int64[]:1"}, {"int64[B,N,N]"}, NULL},
    {"depthtospace", "DepthToSpace", 13, "blocksize=2", {"float[N,8,H,3]"},
     {"float[N,2,H*2,6]"}, NULL},
    {"depthtospace product", "DepthToSpace", 13, "blocksize=2", {"float[N,C*4,H,W]"},
     {"float[N,C,H*2,W*2]"}, NULL},
    {"depthtospace channels", "DepthToSpace", 13, "blocksize=2", {"float[N,6,H,W]"}, {NULL},
     "divide"},
    {"spacetodepth", "SpaceToDepth", 13, "blocksize=2", {"float[N,C,H*2,8]"},
     {"float[N,C*4,H,4]"}, NULL},
    {"reversesequence", "ReverseSequence", 10, NULL, {"float[T,B,4]", "int64[B]"},
     {"float[T,B,4]"}, NULL},
    {"unique flat", "Unique", 11, NULL, {"float[N,3]"},
     {"float[?]", "int64[?]", "int64[N*3]", "int64[?]"}, NULL},
    {"unique axis", "Unique", 11, "axis=1", {"float[N,3]"},
     {"float[N,?]", "int64[?]", "int64[3]", "int64[?]"}, NULL},
    {"shape", "Shape", 13, NULL, {"float[N,3,H]"}, {"int64[3]"}, NULL},
    {"shape start", "Shape", 15, "start=1", {"float[N,3,H]"}, {"int64[2]"}, NULL},
    {"shape rank unknown", "Shape", 15, NULL, {"float"}, {"int64[?]"}, NULL},
    {"size", "Size", 13, NULL, {"float[N]"}, {"int64[]"}, NULL},
    {"identity", "Identity", 13, NULL, {"string[N]"}, {"string[N]"}, NULL},
    {"constant", "Constant", 13, "value_ints=[1,2,3]", {NULL}, {"int64[3]"}, NULL},
    {"constant sparse", "Constant", 13, "sparse_value=sparse", {NULL}, {"?"}, NULL},
};

Test(movement_infer, misc) { RUN_INFERS(infer_misc_cases); }

/* Every op of the family tolerates inputs whose types are unknown: no error, and
 * nothing invented (an output is unknown or at most has a dtype and rank). */
Test(movement_infer, unknown_inputs)
{
    for (size_t i = 0; i < gl_ops_movement.n_ops; i++) {
        const gl_op_def *d = &gl_ops_movement.ops[i];
        if (strcmp(d->op, "Constant") == 0)
            continue; /* no inputs: needs its attribute */
        gl_model *m = tu_model(d->since);
        gl_value *ins[3];
        for (int k = 0; k < 3; k++) {
            char nm[8];
            snprintf(nm, sizeof(nm), "u%d", k);
            ins[k] = gl_add_value(m->graph, nm);
            gl_graph_add_input(m->graph, ins[k]);
        }
        size_t n_out = strcmp(d->op, "Unique") == 0 ? 4 : 1;
        gl_node *n = gl_add_node(m->graph, d->op, "", "t", ins, 3, n_out);
        gl_node_set_attr_int(n, "blocksize", 2);
        gl_node_set_attr_int(n, "axis", 0);
        gl_type types[4];
        gl_status st = tu_infer(m, n, types);
        cr_expect_eq(st, GL_OK, "%s-%d: %s", d->op, d->since, gl_error_message());
        for (size_t o = 0; st == GL_OK && o < n_out; o++) {
            bool invented = false;
            for (int k = 0; types[o].kind == GL_TYPE_TENSOR && k < types[o].shape.rank; k++)
                invented |= types[o].shape.dims[k].value >= 0 && strcmp(d->op, "Shape") != 0 &&
                            strcmp(d->op, "NonZero") != 0 &&
                            strcmp(d->op, "ConstantOfShape") != 0;
            cr_expect(!invented, "%s-%d: output %zu has a known dim from unknown inputs",
                      d->op, d->since, o);
            gl_type_free(&types[o]);
        }
        gl_model_free(m);
    }
}

/* The table is sorted by op name and since, with no duplicates (it is the file's index). */
Test(movement, table_sorted)
{
    for (size_t i = 1; i < gl_ops_movement.n_ops; i++) {
        const gl_op_def *a = &gl_ops_movement.ops[i - 1], *b = &gl_ops_movement.ops[i];
        int c = strcmp(a->op, b->op);
        cr_expect(c < 0 || (c == 0 && a->since < b->since), "%s-%d before %s-%d", a->op,
                  a->since, b->op, b->since);
    }
    const gl_op_def *d = gl_op_lookup("", "DepthToSpace", 13);
    cr_assert(d);
    cr_expect(d->flags & GL_OP_LAYOUT_SENSITIVE);
    cr_expect_eq(gl_op_lookup("", "Reshape", 13)->since, 5);
    cr_expect_eq(gl_op_lookup("", "Slice", 9)->since, 1);
}

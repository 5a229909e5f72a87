/* test_ops_movement.c — the movement family: kernels against hand-computed outputs (from
 * the ONNX definitions), shape functions on symbolic and unknown inputs, errors.
 *
 * Kernel cases are tu_kcase rows (testutil.h) with their tensors as text, which keeps
 * strings and 64-bit integers exact: "float[2,3]:1,2,3,4,5,6", "int64[]:7" (a scalar),
 * "float[2,3]" (zeros), "string[2]:ab,cd". Outputs must match bit for bit.
 * Shape cases are text too:
 *   types     "float[N,3,?]" symbolic/unknown dims, "float" unknown rank, "?" nothing
 *             known; "=int64[2]:0,-1" a constant input (its value is visible to
 *             the shape function); "-" omitted
 * and compare their results as text: gl_type_format, except that an unknown rank prints
 * as "float[*]" (gl_type_format prints "float[?]" for both that and one unknown dim).
 */
#include <criterion/criterion.h>

#include "ops/families.h"
#include "ops/opkit.h"
#include "ops/ops.h"
#define TU_CASE_SHORTHANDS /* TX(), AI(), AINTS(), ...: see testutil.h */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== shape cases ============================================================================ */

#define MAX_IN 6
#define MAX_OUT 4

typedef struct icase {
    const char *name, *op;
    int opset;
    tu_attr attrs[4];
    const char *in[MAX_IN];   /* types or "=constant"; "-" omitted */
    const char *out[MAX_OUT]; /* expected types */
    const char *err;
} icase;

static void type_of_tensor(gl_type *ty, const gl_tensor *t)
{
    gl_type_free(ty);
    ty->kind = GL_TYPE_TENSOR;
    ty->dtype = t->dtype;
    gl_shape_set_rank(&ty->shape, t->rank);
    for (int i = 0; i < t->rank; i++)
        ty->shape.dims[i].value = t->dims[i];
}

static const char *fmt_type(const gl_type *t, char *buf, size_t len)
{
    if (t->kind == GL_TYPE_TENSOR && t->shape.rank == GL_RANK_UNKNOWN)
        snprintf(buf, len, "%s[*]", t->dtype ? gl_dtype_name(t->dtype) : "?");
    else
        gl_type_format(t, buf, len);
    return buf;
}

static size_t count_strs(const char *const *v, size_t max)
{
    size_t n = 0;
    while (n < max && v[n])
        n++;
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

static void run_infer_case(const icase *ic)
{
    if (getenv("TU_TRACE"))
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
            gl_tensor *t = tu_parse_tensor(s + 1);
            ins[i] = gl_add_initializer(m->graph, nm, t);
            type_of_tensor(&ins[i]->type, t);
        } else {
            ins[i] = gl_add_value(m->graph, nm);
            gl_type_free(&ins[i]->type);
            tu_parse_type(s, &ins[i]->type);
            gl_graph_add_input(m->graph, ins[i]);
        }
    }
    gl_node *n = gl_add_node(m->graph, ic->op, "", "t", ins, n_in, n_out);
    cr_assert(n, "cannot add node %s", ic->op);
    tu_apply_attrs(n, ic->attrs);
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

#define RUN_INFERS(table)                                                                   \
    for (size_t i_ = 0; i_ < sizeof(table) / sizeof(table[0]); i_++)                        \
    run_infer_case(&table[i_])

/* ==== kernels ================================================================================ */

#define I64MAX "9223372036854775807"
#define I64MIN "-9223372036854775808"

static const tu_kcase identity_constant_cases[] = {
    {"identity float", "Identity", 16, {{0}}, 1, {TX("float[2,2]:1,2,3,4")}, 1,
     {TX("float[2,2]:1,2,3,4")}},
    {"identity string", "Identity", 13, {{0}}, 1, {TX("string[2]:ab,")}, 1, {TX("string[2]:ab,")}},
    {"constant value_float", "Constant", 13, {AF("value_float", 2.5)}, 0, {{0}}, 1,
     {TX("float[]:2.5")}},
    {"constant value_ints", "Constant", 13, {AINTS("value_ints", 3, 1, 2, 3)}, 0, {{0}}, 1,
     {TX("int64[3]:1,2,3")}},
    {"constant value_int", "Constant", 13, {AI("value_int", -4)}, 0, {{0}}, 1, {TX("int64[]:-4")}},
    {"constant value_floats", "Constant", 13, {AFLOATS("value_floats", 2, 0.5, -1)}, 0, {{0}}, 1,
     {TX("float[2]:0.5,-1")}},
    {"constant value_string", "Constant", 13, {AS("value_string", "hi")}, 0, {{0}}, 1,
     {TX("string[]:hi")}},
    {"constant value_strings", "Constant", 13, {ASTRINGS("value_strings", 2, "a", "bc")}, 0, {{0}},
     1, {TX("string[2]:a,bc")}},
    {"constant tensor", "Constant", 9, {ATENSOR("value", "int32[2]:7,8")}, 0, {{0}}, 1,
     {TX("int32[2]:7,8")}},
    {"constant none", "Constant", 13, {{0}}, 0, {{0}}, 1, {{0}}, GL_ERR_INPUT,
     "none of the value attributes"},
    {"constant two", "Constant", 13, {AI("value_int", 3), AF("value_float", 1)}, 0, {{0}}, 1,
     {{0}}, GL_ERR_INPUT, "both"},
    {"constant sparse", "Constant", 13, {ASPARSE("sparse_value")}, 0, {{0}}, 1, {{0}},
     GL_ERR_UNSUPPORTED, "sparse_value"},
    {"cos default", "ConstantOfShape", 9, {{0}}, 1, {TX("int64[2]:2,3")}, 1,
     {TX("float[2,3]:0,0,0,0,0,0")}},
    {"cos int32", "ConstantOfShape", 9, {ATENSOR("value", "int32[1]:7")}, 1, {TX("int64[1]:3")}, 1,
     {TX("int32[3]:7,7,7")}},
    {"cos scalar", "ConstantOfShape", 9, {ATENSOR("value", "float[1]:5")}, 1, {TX("int64[0]")}, 1,
     {TX("float[]:5")}},
    {"cos empty", "ConstantOfShape", 9, {{0}}, 1, {TX("int64[2]:2,0")}, 1, {TX("float[2,0]")}},
    {"cos bool", "ConstantOfShape", 9, {ATENSOR("value", "bool[1]:1")}, 1, {TX("int64[1]:2")}, 1,
     {TX("bool[2]:1,1")}},
    {"cos negative", "ConstantOfShape", 9, {{0}}, 1, {TX("int64[1]:-1")}, 1, {{0}}, GL_ERR_INPUT,
     "negative"},
    {"cos two values", "ConstantOfShape", 9, {ATENSOR("value", "float[2]:1,2")}, 1,
     {TX("int64[1]:1")}, 1, {{0}}, GL_ERR_INPUT, "one-element"},
};

Test(movement, identity_constant)
{
    tu_run_kernel_cases_within(identity_constant_cases, GL_ARRAY_LEN(identity_constant_cases),
    &tu_tol_exact);
}

static const tu_kcase shape_size_cases[] = {
    {"shape", "Shape", 13, {{0}}, 1, {TX("float[2,3,4]")}, 1, {TX("int64[3]:2,3,4")}},
    {"shape ignores start before 15", "Shape", 13, {AI("start", 1)}, 1, {TX("float[2,3,4]")}, 1,
     {TX("int64[3]:2,3,4")}},
    {"shape start -2", "Shape", 15, {AI("start", -2)}, 1, {TX("float[2,3,4]")}, 1,
     {TX("int64[2]:3,4")}},
    {"shape start 1 end -1", "Shape", 15, {AI("start", 1), AI("end", -1)}, 1, {TX("float[2,3,4]")},
     1, {TX("int64[1]:3")}},
    {"shape clip", "Shape", 15, {AI("start", -10), AI("end", 10)}, 1, {TX("float[2,3,4]")}, 1,
     {TX("int64[3]:2,3,4")}},
    {"shape empty range", "Shape", 15, {AI("start", 2), AI("end", 1)}, 1, {TX("float[2,3,4]")}, 1,
     {TX("int64[0]")}},
    {"shape of scalar", "Shape", 15, {{0}}, 1, {TX("float[]:1")}, 1, {TX("int64[0]")}},
    {"shape of string", "Shape", 15, {{0}}, 1, {TX("string[2]:a,b")}, 1, {TX("int64[1]:2")}},
    {"size", "Size", 13, {{0}}, 1, {TX("float[2,3,4]")}, 1, {TX("int64[]:24")}},
    {"size empty", "Size", 13, {{0}}, 1, {TX("float[0,3]")}, 1, {TX("int64[]:0")}},
    {"size scalar", "Size", 1, {{0}}, 1, {TX("int8[]:3")}, 1, {TX("int64[]:1")}},
};

Test(movement, shape_size)
{
    tu_run_kernel_cases_within(shape_size_cases, GL_ARRAY_LEN(shape_size_cases), &tu_tol_exact);
}

static const tu_kcase reshape_cases[] = {
    {"reshape -1", "Reshape", 14, {{0}}, 2, {TX("float[2,3]:1,2,3,4,5,6"), TX("int64[2]:3,-1")}, 1,
     {TX("float[3,2]:1,2,3,4,5,6")}},
    {"reshape 0 copies", "Reshape", 14, {{0}}, 2, {TX("float[2,3,4]"), TX("int64[2]:0,-1")}, 1,
     {TX("float[2,12]")}},
    {"reshape allowzero", "Reshape", 14, {AI("allowzero", 1)}, 2,
     {TX("float[0,3,4]"), TX("int64[3]:3,4,0")}, 1, {TX("float[3,4,0]")}},
    {"reshape 0 copies empty dim", "Reshape", 14, {{0}}, 2, {TX("float[0,3]"), TX("int64[2]:0,3")},
     1, {TX("float[0,3]")}},
    {"reshape string", "Reshape", 5, {{0}}, 2, {TX("string[4]:a,b,c,d"), TX("int64[2]:2,2")}, 1,
     {TX("string[2,2]:a,b,c,d")}},
    {"reshape to scalar", "Reshape", 13, {{0}}, 2, {TX("int32[1,1]:5"), TX("int64[0]")}, 1,
     {TX("int32[]:5")}},
    {"reshape int32 shape", "Reshape", 13, {{0}}, 2, {TX("float[4]:1,2,3,4"), TX("int32[2]:2,2")},
     1, {TX("float[2,2]:1,2,3,4")}},
    {"reshape opset 1 attribute", "Reshape", 1, {AINTS("shape", 2, 2, -1)}, 1,
     {TX("double[4]:1,2,3,4")}, 1, {TX("double[2,2]:1,2,3,4")}},
    {"reshape two -1", "Reshape", 14, {{0}}, 2, {TX("float[4]"), TX("int64[2]:-1,-1")}, 1, {{0}},
     GL_ERR_INPUT, "more than one -1"},
    {"reshape mismatch", "Reshape", 14, {{0}}, 2, {TX("float[6]"), TX("int64[2]:4,4")}, 1, {{0}},
     GL_ERR_INPUT, "cannot reshape"},
    {"reshape not divisible", "Reshape", 14, {{0}}, 2, {TX("float[6]"), TX("int64[2]:-1,4")}, 1,
     {{0}}, GL_ERR_INPUT, "cannot reshape"},
    {"reshape 0 and -1 allowzero", "Reshape", 14, {AI("allowzero", 1)}, 2,
     {TX("float[0]"), TX("int64[2]:0,-1")}, 1, {{0}}, GL_ERR_INPUT, "both 0 and -1"},
    {"reshape -1 with zero product", "Reshape", 14, {{0}}, 2,
     {TX("float[0,3]"), TX("int64[2]:0,-1")}, 1, {{0}}, GL_ERR_INPUT, "cannot reshape"},
    {"reshape 0 past rank", "Reshape", 14, {{0}}, 2, {TX("float[3]"), TX("int64[2]:3,0")}, 1,
     {{0}}, GL_ERR_INPUT, "has rank 1"},
    {"reshape below -1", "Reshape", 14, {{0}}, 2, {TX("float[3]"), TX("int64[1]:-3")}, 1, {{0}},
     GL_ERR_INPUT, "is -3"},
    {"reshape float shape", "Reshape", 14, {{0}}, 2, {TX("float[3]"), TX("float[1]:3")}, 1, {{0}},
     GL_ERR_INPUT, "integer tensor"},
    {"flatten axis 0", "Flatten", 13, {AI("axis", 0)}, 1, {TX("float[2,3,4]")}, 1,
     {TX("float[1,24]")}},
    {"flatten default", "Flatten", 13, {{0}}, 1, {TX("float[2,3]:1,2,3,4,5,6")}, 1,
     {TX("float[2,3]:1,2,3,4,5,6")}},
    {"flatten axis rank", "Flatten", 13, {AI("axis", 3)}, 1, {TX("float[2,3,4]")}, 1,
     {TX("float[24,1]")}},
    {"flatten negative", "Flatten", 11, {AI("axis", -1)}, 1, {TX("float[2,3,4]")}, 1,
     {TX("float[6,4]")}},
    {"flatten negative before 11", "Flatten", 9, {AI("axis", -1)}, 1, {TX("float[2,3,4]")}, 1,
     {{0}}, GL_ERR_INPUT, "out of range"},
    {"flatten axis too big", "Flatten", 13, {AI("axis", 4)}, 1, {TX("float[2,3,4]")}, 1, {{0}},
     GL_ERR_INPUT, "out of range"},
    {"flatten string", "Flatten", 13, {{0}}, 1, {TX("string[1,2]:x,y")}, 1,
     {TX("string[1,2]:x,y")}},
};

Test(movement, reshape_flatten)
{
    tu_run_kernel_cases_within(reshape_cases, GL_ARRAY_LEN(reshape_cases), &tu_tol_exact);
}

static const tu_kcase transpose_cases[] = {
    {"transpose default", "Transpose", 13, {{0}}, 1, {TX("float[2,3]:1,2,3,4,5,6")}, 1,
     {TX("float[3,2]:1,4,2,5,3,6")}},
    {"transpose 102", "Transpose", 13, {AINTS("perm", 3, 1, 0, 2)}, 1,
     {TX("float[2,2,2]:0,1,2,3,4,5,6,7")}, 1, {TX("float[2,2,2]:0,1,4,5,2,3,6,7")}},
    {"transpose 201", "Transpose", 13, {AINTS("perm", 3, 2, 0, 1)}, 1,
     {TX("float[2,2,2]:0,1,2,3,4,5,6,7")}, 1, {TX("float[2,2,2]:0,2,4,6,1,3,5,7")}},
    {"transpose channel shuffle", "Transpose", 13, {AINTS("perm", 4, 0, 2, 1, 3)}, 1,
     {TX("float[2,3,2,2]:0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23")}, 1,
     {TX("float[2,2,3,2]:0,1,4,5,8,9,2,3,6,7,10,11,12,13,16,17,20,21,14,15,18,19,22,23")}},
    {"transpose identity perm", "Transpose", 13, {AINTS("perm", 2, 0, 1)}, 1,
     {TX("int64[1,3]:1,2,3")}, 1, {TX("int64[1,3]:1,2,3")}},
    {"transpose uint8", "Transpose", 13, {{0}}, 1, {TX("uint8[2,3]:1,2,3,4,5,6")}, 1,
     {TX("uint8[3,2]:1,4,2,5,3,6")}},
    {"transpose float16", "Transpose", 13, {{0}}, 1, {TX("float16[2,2]:1,2,3,4")}, 1,
     {TX("float16[2,2]:1,3,2,4")}},
    {"transpose double", "Transpose", 13, {{0}}, 1, {TX("double[2,2]:1,2,3,4")}, 1,
     {TX("double[2,2]:1,3,2,4")}},
    {"transpose string", "Transpose", 13, {{0}}, 1, {TX("string[2,2]:a,b,c,d")}, 1,
     {TX("string[2,2]:a,c,b,d")}},
    {"transpose empty", "Transpose", 13, {{0}}, 1, {TX("float[0,3]")}, 1, {TX("float[3,0]")}},
    {"transpose scalar", "Transpose", 13, {{0}}, 1, {TX("float[]:4")}, 1, {TX("float[]:4")}},
    {"transpose bad perm", "Transpose", 13, {AINTS("perm", 2, 0, 0)}, 1, {TX("float[2,2]")}, 1,
     {{0}}, GL_ERR_INPUT, "not a permutation"},
    {"transpose short perm", "Transpose", 13, {AINTS("perm", 1, 0)}, 1, {TX("float[2,2]")}, 1,
     {{0}}, GL_ERR_INPUT, "entries"},
};

Test(movement, transpose)
{
    tu_run_kernel_cases_within(transpose_cases, GL_ARRAY_LEN(transpose_cases), &tu_tol_exact);
}

static const tu_kcase squeeze_cases[] = {
    {"squeeze axes input", "Squeeze", 13, {{0}}, 2, {TX("float[1,3,1]:1,2,3"), TX("int64[1]:-1")},
     1, {TX("float[1,3]:1,2,3")}},
    {"squeeze all", "Squeeze", 13, {{0}}, 1, {TX("float[1,3,1]:1,2,3")}, 1, {TX("float[3]:1,2,3")}},
    {"squeeze empty axes", "Squeeze", 13, {{0}}, 2, {TX("float[1,3,1]"), TX("int64[0]")}, 1,
     {TX("float[3]")}},
    {"squeeze attribute", "Squeeze", 11, {AINTS("axes", 1, 0)}, 1, {TX("float[1,3,1]")}, 1,
     {TX("float[3,1]")}},
    {"squeeze to scalar", "Squeeze", 13, {{0}}, 1, {TX("string[1,1]:s")}, 1, {TX("string[]:s")}},
    {"squeeze size 3", "Squeeze", 13, {{0}}, 2, {TX("float[1,3]"), TX("int64[1]:1")}, 1, {{0}},
     GL_ERR_INPUT, "cannot squeeze"},
    {"squeeze negative at 1", "Squeeze", 1, {AINTS("axes", 1, -1)}, 1, {TX("float[3,1]")}, 1,
     {{0}}, GL_ERR_INPUT, "needs opset 11"},
    {"squeeze axis out of range", "Squeeze", 13, {{0}}, 2, {TX("float[1]"), TX("int64[1]:1")}, 1,
     {{0}}, GL_ERR_INPUT, "out of range"},
    {"unsqueeze two", "Unsqueeze", 13, {{0}}, 2, {TX("float[2]:1,2"), TX("int64[2]:0,-1")}, 1,
     {TX("float[1,2,1]:1,2")}},
    {"unsqueeze unsorted", "Unsqueeze", 13, {{0}}, 2, {TX("float[3]"), TX("int64[2]:2,0")}, 1,
     {TX("float[1,3,1]")}},
    {"unsqueeze scalar", "Unsqueeze", 13, {{0}}, 2, {TX("int64[]:5"), TX("int64[1]:0")}, 1,
     {TX("int64[1]:5")}},
    {"unsqueeze attribute", "Unsqueeze", 11, {AINTS("axes", 1, 1)}, 1, {TX("float[2]")}, 1,
     {TX("float[2,1]")}},
    {"unsqueeze duplicate", "Unsqueeze", 13, {{0}}, 2, {TX("float[2]"), TX("int64[2]:0,0")}, 1,
     {{0}}, GL_ERR_INPUT, "twice"},
    {"unsqueeze out of range", "Unsqueeze", 13, {{0}}, 2, {TX("float[2]"), TX("int64[1]:2")}, 1,
     {{0}}, GL_ERR_INPUT, "out of range"},
    {"unsqueeze no axes", "Unsqueeze", 11, {{0}}, 1, {TX("float[2]")}, 1, {{0}}, GL_ERR_INPUT,
     "missing or empty"},
};

Test(movement, squeeze_unsqueeze)
{
    tu_run_kernel_cases_within(squeeze_cases, GL_ARRAY_LEN(squeeze_cases), &tu_tol_exact);
}

static const tu_kcase concat_split_cases[] = {
    {"concat axis 0", "Concat", 13, {AI("axis", 0)}, 2,
     {TX("float[1,2]:1,2"), TX("float[2,2]:3,4,5,6")}, 1, {TX("float[3,2]:1,2,3,4,5,6")}},
    {"concat axis 1", "Concat", 13, {AI("axis", 1)}, 2,
     {TX("float[2,1]:1,2"), TX("float[2,2]:3,4,5,6")}, 1, {TX("float[2,3]:1,3,4,2,5,6")}},
    {"concat three, negative axis", "Concat", 13, {AI("axis", -1)}, 3,
     {TX("string[1]:a"), TX("string[2]:b,c"), TX("string[1]:d")}, 1, {TX("string[4]:a,b,c,d")}},
    {"concat with empty", "Concat", 13, {AI("axis", 0)}, 2,
     {TX("float[0,2]"), TX("float[1,2]:1,2")}, 1, {TX("float[1,2]:1,2")}},
    {"concat opset 1 default axis", "Concat", 1, {{0}}, 2,
     {TX("float[1,1]:1"), TX("float[1,1]:2")}, 1, {TX("float[1,2]:1,2")}},
    {"concat int64 shapes", "Concat", 13, {AI("axis", 0)}, 2,
     {TX("int64[1]:-1"), TX("int64[2]:3,4")}, 1, {TX("int64[3]:-1,3,4")}},
    {"concat missing axis", "Concat", 13, {{0}}, 2, {TX("float[1]"), TX("float[1]")}, 1, {{0}},
     GL_ERR_INPUT, "'axis' is missing"},
    {"concat dim mismatch", "Concat", 13, {AI("axis", 0)}, 2, {TX("float[1,2]"), TX("float[1,3]")},
     1, {{0}}, GL_ERR_INPUT, "dim 1"},
    {"concat dtype mismatch", "Concat", 13, {AI("axis", 0)}, 2, {TX("float[1]"), TX("int64[1]")},
     1, {{0}}, GL_ERR_INPUT, "is int64"},
    {"concat negative before 11", "Concat", 4, {AI("axis", -1)}, 2,
     {TX("float[1]"), TX("float[1]")}, 1, {{0}}, GL_ERR_INPUT, "needs opset 11"},
    {"split equal", "Split", 13, {{0}}, 1, {TX("float[6]:1,2,3,4,5,6")}, 3,
     {TX("float[2]:1,2"), TX("float[2]:3,4"), TX("float[2]:5,6")}},
    {"split input sizes", "Split", 13, {{0}}, 2, {TX("float[6]:1,2,3,4,5,6"), TX("int64[2]:2,4")},
     2, {TX("float[2]:1,2"), TX("float[4]:3,4,5,6")}},
    {"split attribute axis 1", "Split", 11, {AI("axis", 1), AINTS("split", 2, 1, 2)}, 1,
     {TX("float[2,3]:1,2,3,4,5,6")}, 2, {TX("float[2,1]:1,4"), TX("float[2,2]:2,3,5,6")}},
    {"split zero sizes", "Split", 13, {{0}}, 2, {TX("float[0]"), TX("int64[3]:0,0,0")}, 3,
     {TX("float[0]"), TX("float[0]"), TX("float[0]")}},
    {"split negative axis", "Split", 13, {AI("axis", -1)}, 1, {TX("int32[2,2]:1,2,3,4")}, 2,
     {TX("int32[2,1]:1,3"), TX("int32[2,1]:2,4")}},
    {"split uneven at 18", "Split", 18, {AI("num_outputs", 2)}, 1, {TX("float[5]:1,2,3,4,5")}, 2,
     {TX("float[3]:1,2,3"), TX("float[2]:4,5")}},
    {"split uneven before 18", "Split", 13, {{0}}, 1, {TX("float[5]")}, 2, {{0}}, GL_ERR_INPUT,
     "equal parts"},
    {"split bad sum", "Split", 13, {{0}}, 2, {TX("float[3]"), TX("int64[2]:1,1")}, 2, {{0}},
     GL_ERR_INPUT, "sums to 2"},
    {"split count mismatch", "Split", 13, {{0}}, 2, {TX("float[3]"), TX("int64[1]:3")}, 2, {{0}},
     GL_ERR_INPUT, "1 entries for 2 outputs"},
};

Test(movement, concat_split)
{
    tu_run_kernel_cases_within(concat_split_cases, GL_ARRAY_LEN(concat_split_cases), &tu_tol_exact);
}

#define X34 "float[3,4]:0,1,2,3,4,5,6,7,8,9,10,11"

static const tu_kcase slice_cases[] = {
    {"slice 2-D", "Slice", 13, {{0}}, 3, {TX(X34), TX("int64[2]:0,1"), TX("int64[2]:2,3")}, 1,
     {TX("float[2,2]:1,2,5,6")}},
    {"slice negative step", "Slice", 13, {{0}}, 5,
     {TX("float[5]:0,1,2,3,4"), TX("int64[1]:-1"), TX("int64[1]:-100"), TX("int64[1]:0"),
     TX("int64[1]:-2")}, 1, {TX("float[3]:4,2,0")}},
    {"slice end out of bounds", "Slice", 13, {{0}}, 3,
     {TX("float[5]:0,1,2,3,4"), TX("int64[1]:1"), TX("int64[1]:1000")}, 1,
     {TX("float[4]:1,2,3,4")}},
    {"slice start out of bounds", "Slice", 13, {{0}}, 3,
     {TX("float[5]:0,1,2,3,4"), TX("int64[1]:1000"), TX("int64[1]:1000")}, 1, {TX("float[0]")}},
    {"slice negative axis", "Slice", 13, {{0}}, 4,
     {TX(X34), TX("int64[1]:1"), TX("int64[1]:3"), TX("int64[1]:-1")}, 1,
     {TX("float[3,2]:1,2,5,6,9,10")}},
    {"slice steps", "Slice", 13, {{0}}, 5,
     {TX(X34), TX("int64[2]:0,0"), TX("int64[2]:3,4"), TX("int64[2]:0,1"), TX("int64[2]:2,3")}, 1,
     {TX("float[2,2]:0,3,8,11")}},
    {"slice to int64 max", "Slice", 13, {{0}}, 3,
     {TX("float[4]:0,1,2,3"), TX("int64[1]:2"), TX("int64[1]:" I64MAX)}, 1, {TX("float[2]:2,3")}},
    {"slice whole reversed", "Slice", 13, {{0}}, 5,
     {TX("float[5]:0,1,2,3,4"), TX("int64[1]:-1"), TX("int64[1]:" I64MIN), TX("int64[1]:0"),
     TX("int64[1]:-1")}, 1, {TX("float[5]:4,3,2,1,0")}},
    {"slice step int64 min", "Slice", 13, {{0}}, 5,
     {TX("float[5]:0,1,2,3,4"), TX("int64[1]:3"), TX("int64[1]:" I64MIN), TX("int64[1]:0"),
     TX("int64[1]:" I64MIN)}, 1, {TX("float[1]:3")}},
    {"slice huge step", "Slice", 13, {{0}}, 5,
     {TX("float[5]:0,1,2,3,4"), TX("int64[1]:1"), TX("int64[1]:5"), TX("int64[1]:0"),
     TX("int64[1]:" I64MAX)}, 1, {TX("float[1]:1")}},
    {"slice reversed rows", "Slice", 13, {{0}}, 5,
     {TX(X34), TX("int64[1]:2"), TX("int64[1]:-4"), TX("int64[1]:0"), TX("int64[1]:-1")}, 1,
     {TX("float[3,4]:8,9,10,11,4,5,6,7,0,1,2,3")}},
    {"slice int32 inputs", "Slice", 13, {{0}}, 3,
     {TX("int64[4]:5,6,7,8"), TX("int32[1]:1"), TX("int32[1]:-1")}, 1, {TX("int64[2]:6,7")}},
    {"slice opset 1", "Slice", 1,
     {AINTS("starts", 1, 1), AINTS("ends", 1, 3), AINTS("axes", 1, 0)}, 1,
     {TX("float[4]:0,1,2,3")}, 1, {TX("float[2]:1,2")}},
    {"slice opset 1 default axes", "Slice", 9, {AINTS("starts", 2, 0, 1), AINTS("ends", 2, 1, 10)},
     1, {TX(X34)}, 1, {TX("float[1,3]:1,2,3")}},
    {"slice string", "Slice", 13, {{0}}, 3,
     {TX("string[3]:a,b,c"), TX("int64[1]:1"), TX("int64[1]:3")}, 1, {TX("string[2]:b,c")}},
    {"slice empty input", "Slice", 13, {{0}}, 4,
     {TX("float[0,2]"), TX("int64[1]:0"), TX("int64[1]:1"), TX("int64[1]:1")}, 1,
     {TX("float[0,1]")}},
    {"slice empty axis reversed", "Slice", 13, {{0}}, 5,
     {TX("float[0]"), TX("int64[1]:-1"), TX("int64[1]:" I64MIN), TX("int64[1]:0"),
     TX("int64[1]:-1")}, 1, {TX("float[0]")}},
    {"slice step 0", "Slice", 13, {{0}}, 5,
     {TX("float[4]"), TX("int64[1]:0"), TX("int64[1]:1"), TX("int64[1]:0"), TX("int64[1]:0")}, 1,
     {{0}}, GL_ERR_INPUT, "step 0"},
    {"slice axis twice", "Slice", 13, {{0}}, 4,
     {TX(X34), TX("int64[2]:0,0"), TX("int64[2]:1,1"), TX("int64[2]:1,-1")}, 1, {{0}},
     GL_ERR_INPUT, "twice"},
    {"slice length mismatch", "Slice", 13, {{0}}, 3,
     {TX(X34), TX("int64[2]:0,0"), TX("int64[1]:1")}, 1, {{0}}, GL_ERR_INPUT, "differ in length"},
    {"slice axis out of range", "Slice", 13, {{0}}, 4,
     {TX(X34), TX("int64[1]:0"), TX("int64[1]:1"), TX("int64[1]:2")}, 1, {{0}}, GL_ERR_INPUT,
     "out of range"},
    {"slice missing ends", "Slice", 13, {{0}}, 3, {TX(X34), TX("int64[1]:0"), OMIT}, 1, {{0}},
     GL_ERR_INPUT, "'ends'"},
};

Test(movement, slice)
{
    tu_run_kernel_cases_within(slice_cases, GL_ARRAY_LEN(slice_cases), &tu_tol_exact);
}

static const tu_kcase gather_cases[] = {
    {"gather axis 0", "Gather", 13, {{0}}, 2, {TX("float[3,2]:1,2,3,4,5,6"), TX("int64[2]:2,0")},
     1, {TX("float[2,2]:5,6,1,2")}},
    {"gather axis 1, 2-D indices", "Gather", 13, {AI("axis", 1)}, 2,
     {TX("float[2,3]:1,2,3,4,5,6"), TX("int64[2,2]:0,2,1,-1")}, 1,
     {TX("float[2,2,2]:1,3,2,3,4,6,5,6")}},
    {"gather scalar index", "Gather", 13, {{0}}, 2, {TX("float[3]:1,2,3"), TX("int64[]:1")}, 1,
     {TX("float[]:2")}},
    {"gather shape vector", "Gather", 13, {{0}}, 2, {TX("int64[4]:1,3,224,224"), TX("int64[]:-1")},
     1, {TX("int64[]:224")}},
    {"gather string int32", "Gather", 13, {{0}}, 2, {TX("string[3]:a,b,c"), TX("int32[2]:2,2")}, 1,
     {TX("string[2]:c,c")}},
    {"gather empty indices", "Gather", 13, {AI("axis", 1)}, 2, {TX("float[2,3]"), TX("int64[0]")},
     1, {TX("float[2,0]")}},
    {"gather out of range", "Gather", 13, {{0}}, 2, {TX("float[3]"), TX("int64[1]:3")}, 1, {{0}},
     GL_ERR_INPUT, "out of range"},
    {"gather float indices", "Gather", 13, {{0}}, 2, {TX("float[3]"), TX("float[1]:1")}, 1, {{0}},
     GL_ERR_INPUT, "int32 or int64"},
    {"gather scalar data", "Gather", 13, {{0}}, 2, {TX("float[]:1"), TX("int64[]:0")}, 1, {{0}},
     GL_ERR_INPUT, "rank >= 1"},
    {"gather_elements axis 1", "GatherElements", 13, {AI("axis", 1)}, 2,
     {TX("float[2,2]:1,2,3,4"), TX("int64[2,2]:0,0,1,0")}, 1, {TX("float[2,2]:1,1,4,3")}},
    {"gather_elements axis 0", "GatherElements", 13, {{0}}, 2,
     {TX("float[3,3]:1,2,3,4,5,6,7,8,9"), TX("int64[2,3]:1,2,0,2,0,0")}, 1,
     {TX("float[2,3]:4,8,3,7,2,3")}},
    {"gather_elements negative", "GatherElements", 13, {{0}}, 2,
     {TX("float[3,3]:1,2,3,4,5,6,7,8,9"), TX("int64[2,3]:-1,-2,0,-2,0,0")}, 1,
     {TX("float[2,3]:7,5,3,4,2,3")}},
    {"gather_elements out of range", "GatherElements", 13, {{0}}, 2,
     {TX("float[2,2]"), TX("int64[1,1]:2")}, 1, {{0}}, GL_ERR_INPUT, "out of range"},
    {"gather_elements rank", "GatherElements", 13, {{0}}, 2,
     {TX("float[2,2]"), TX("int64[2]:0,0")}, 1, {{0}}, GL_ERR_INPUT, "rank"},
    {"gather_elements wide indices", "GatherElements", 13, {{0}}, 2,
     {TX("float[2,2]"), TX("int64[1,3]:0,0,0")}, 1, {{0}}, GL_ERR_INPUT, "exceeds"},
    {"gathernd int32", "GatherND", 13, {{0}}, 2,
     {TX("int32[2,2]:0,1,2,3"), TX("int64[2,2]:0,0,1,1")}, 1, {TX("int32[2]:0,3")}},
    {"gathernd slices", "GatherND", 13, {{0}}, 2, {TX("int32[2,2]:0,1,2,3"), TX("int64[2,1]:1,0")},
     1, {TX("int32[2,2]:2,3,0,1")}},
    {"gathernd float", "GatherND", 13, {{0}}, 2,
     {TX("float[2,2,2]:0,1,2,3,4,5,6,7"), TX("int64[2,1,2]:0,1,1,0")}, 1,
     {TX("float[2,1,2]:2,3,4,5")}},
    {"gathernd batch_dims", "GatherND", 13, {AI("batch_dims", 1)}, 2,
     {TX("int32[2,2,2]:0,1,2,3,4,5,6,7"), TX("int64[2,1]:1,0")}, 1, {TX("int32[2,2]:2,3,4,5")}},
    {"gathernd negative", "GatherND", 13, {{0}}, 2,
     {TX("int32[2,2]:0,1,2,3"), TX("int64[1,2]:-1,-2")}, 1, {TX("int32[1]:2")}},
    {"gathernd long tuple", "GatherND", 13, {{0}}, 2, {TX("float[2,2]"), TX("int64[1,3]:0,0,0")},
     1, {{0}}, GL_ERR_INPUT, "tuples"},
    {"gathernd out of range", "GatherND", 13, {{0}}, 2, {TX("float[2,2]"), TX("int64[1,2]:0,2")},
     1, {{0}}, GL_ERR_INPUT, "out of range"},
    {"gathernd batch mismatch", "GatherND", 13, {AI("batch_dims", 1)}, 2,
     {TX("float[2,2]"), TX("int64[3,1]:0,0,0")}, 1, {{0}}, GL_ERR_INPUT, "batch dim 0"},
};

Test(movement, gather)
{
    tu_run_kernel_cases_within(gather_cases, GL_ARRAY_LEN(gather_cases), &tu_tol_exact);
}

static const tu_kcase scatter_cases[] = {
    {"scatter opset 10", "Scatter", 10, {AI("axis", 1)}, 3,
     {TX("float[1,5]:1,2,3,4,5"), TX("int64[1,2]:1,3"), TX("float[1,2]:1.5,2.5")}, 1,
     {TX("float[1,5]:1,1.5,3,2.5,5")}},
    {"scatter_elements no axis", "ScatterElements", 16, {{0}}, 3,
     {TX("float[3,3]"), TX("int64[2,3]:1,0,2,0,2,1"), TX("float[2,3]:1,1.5,2,2.5,3,3.5")}, 1,
     {TX("float[3,3]:2.5,1.5,0,1,0,3.5,0,3,2")}},
    {"scatter_elements add duplicates", "ScatterElements", 16,
     {AI("axis", 1), AS("reduction", "add")}, 3,
     {TX("float[1,5]:1,2,3,4,5"), TX("int64[1,2]:1,1"), TX("float[1,2]:1.5,2.25")}, 1,
     {TX("float[1,5]:1,5.75,3,4,5")}},
    {"scatter_elements mul", "ScatterElements", 16, {AI("axis", 1), AS("reduction", "mul")}, 3,
     {TX("float[1,3]:1,2,3"), TX("int64[1,2]:2,2"), TX("float[1,2]:2,4")}, 1,
     {TX("float[1,3]:1,2,24")}},
    {"scatter_elements negative", "ScatterElements", 16, {AI("axis", 1)}, 3,
     {TX("float[1,5]:1,2,3,4,5"), TX("int64[1,2]:1,-3"), TX("float[1,2]:1.5,2.5")}, 1,
     {TX("float[1,5]:1,1.5,2.5,4,5")}},
    {"scatter_elements int64 add", "ScatterElements", 16, {AS("reduction", "add")}, 3,
     {TX("int64[3]:1,2,3"), TX("int64[2]:0,0"), TX("int64[2]:10,20")}, 1, {TX("int64[3]:31,2,3")}},
    {"scatter_elements max at 18", "ScatterElements", 18, {AS("reduction", "max")}, 3,
     {TX("int32[2]:5,1"), TX("int64[2]:0,1"), TX("int32[2]:3,4")}, 1, {TX("int32[2]:5,4")}},
    {"scatter_elements string", "ScatterElements", 13, {{0}}, 3,
     {TX("string[3]:a,b,c"), TX("int64[1]:1"), TX("string[1]:z")}, 1, {TX("string[3]:a,z,c")}},
    {"scatter_elements add before 16", "ScatterElements", 13, {AS("reduction", "add")}, 3,
     {TX("float[1]"), TX("int64[1]:0"), TX("float[1]:1")}, 1, {{0}}, GL_ERR_INPUT,
     "not supported at opset 13"},
    {"scatter_elements out of range", "ScatterElements", 16, {{0}}, 3,
     {TX("float[2]"), TX("int64[1]:2"), TX("float[1]:1")}, 1, {{0}}, GL_ERR_INPUT, "out of range"},
    {"scatter_elements updates shape", "ScatterElements", 16, {{0}}, 3,
     {TX("float[2]"), TX("int64[1]:0"), TX("float[2]:1,2")}, 1, {{0}}, GL_ERR_INPUT, "'updates'"},
    {"scatternd elements", "ScatterND", 16, {{0}}, 3,
     {TX("float[8]:1,2,3,4,5,6,7,8"), TX("int64[4,1]:4,3,1,7"), TX("float[4]:9,10,11,12")}, 1,
     {TX("float[8]:1,11,3,10,9,6,7,12")}},
    {"scatternd slice", "ScatterND", 16, {{0}}, 3,
     {TX("float[2,2]:1,2,3,4"), TX("int64[1,1]:1"), TX("float[1,2]:5,6")}, 1,
     {TX("float[2,2]:1,2,5,6")}},
    {"scatternd add", "ScatterND", 16, {AS("reduction", "add")}, 3,
     {TX("float[4]:1,2,3,4"), TX("int64[2,1]:0,0"), TX("float[2]:5,6")}, 1,
     {TX("float[4]:12,2,3,4")}},
    {"scatternd mul", "ScatterND", 16, {AS("reduction", "mul")}, 3,
     {TX("float[4]:1,2,3,4"), TX("int64[2,1]:1,1"), TX("float[2]:2,3")}, 1,
     {TX("float[4]:1,12,3,4")}},
    {"scatternd full index", "ScatterND", 13, {{0}}, 3,
     {TX("int32[2,2]:1,2,3,4"), TX("int64[1,2]:1,-1"), TX("int32[1]:9")}, 1,
     {TX("int32[2,2]:1,2,3,9")}},
    {"scatternd updates shape", "ScatterND", 16, {{0}}, 3,
     {TX("float[2,2]"), TX("int64[1,1]:1"), TX("float[1,3]:1,2,3")}, 1, {{0}}, GL_ERR_INPUT,
     "'updates'"},
    {"scatternd out of range", "ScatterND", 16, {{0}}, 3,
     {TX("float[2]"), TX("int64[1,1]:5"), TX("float[1]:1")}, 1, {{0}}, GL_ERR_INPUT,
     "out of range"},
};

Test(movement, scatter)
{
    tu_run_kernel_cases_within(scatter_cases, GL_ARRAY_LEN(scatter_cases), &tu_tol_exact);
}

static const tu_kcase pad_cases[] = {
    {"pad constant", "Pad", 13, {{0}}, 3,
     {TX("float[2,2]:1,2,3,4"), TX("int64[4]:0,1,1,0"), TX("float[]:9")}, 1,
     {TX("float[3,3]:9,1,2,9,3,4,9,9,9")}},
    {"pad reflect", "Pad", 13, {AS("mode", "reflect")}, 2,
     {TX("int32[1,3]:1,2,3"), TX("int64[4]:0,2,0,2")}, 1, {TX("int32[1,7]:3,2,1,2,3,2,1")}},
    {"pad reflect beyond the edge", "Pad", 13, {AS("mode", "reflect")}, 2,
     {TX("int32[3]:1,2,3"), TX("int64[2]:5,0")}, 1, {TX("int32[8]:2,1,2,3,2,1,2,3")}},
    {"pad edge", "Pad", 13, {AS("mode", "edge")}, 2,
     {TX("int32[1,3]:1,2,3"), TX("int64[4]:0,2,0,1")}, 1, {TX("int32[1,6]:1,1,1,2,3,3")}},
    {"pad edge rows", "Pad", 13, {AS("mode", "edge")}, 2,
     {TX("int32[2,1]:1,2"), TX("int64[4]:1,0,1,0")}, 1, {TX("int32[4,1]:1,1,2,2")}},
    {"pad crop", "Pad", 13, {{0}}, 2, {TX("float[4]:1,2,3,4"), TX("int64[2]:-1,1")}, 1,
     {TX("float[4]:2,3,4,0")}},
    {"pad opset 2", "Pad", 2, {AINTS("pads", 2, 1, 1), AF("value", 7)}, 1, {TX("float[1]:5")}, 1,
     {TX("float[3]:7,5,7")}},
    {"pad opset 1", "Pad", 1, {AINTS("paddings", 2, 1, 0)}, 1, {TX("float[1]:5")}, 1,
     {TX("float[2]:0,5")}},
    {"pad string", "Pad", 13, {{0}}, 3,
     {TX("string[2]:a,b"), TX("int64[2]:1,0"), TX("string[]:z")}, 1, {TX("string[3]:z,a,b")}},
    {"pad empty constant", "Pad", 13, {{0}}, 3,
     {TX("float[0]"), TX("int64[2]:1,1"), TX("float[]:3")}, 1, {TX("float[2]:3,3")}},
    {"pad wrap at 19", "Pad", 19, {AS("mode", "wrap")}, 2,
     {TX("int32[3]:1,2,3"), TX("int64[2]:2,1")}, 1, {TX("int32[6]:2,3,1,2,3,1")}},
    {"pad axes at 18", "Pad", 18, {{0}}, 4,
     {TX("float[2,2]:1,2,3,4"), TX("int64[2]:1,0"), OMIT, TX("int64[1]:-1")}, 1,
     {TX("float[2,3]:0,1,2,0,3,4")}},
    {"pad wrong length", "Pad", 13, {{0}}, 2, {TX("float[2]"), TX("int64[1]:1")}, 1, {{0}},
     GL_ERR_INPUT, "expected 2"},
    {"pad edge of empty", "Pad", 13, {AS("mode", "edge")}, 2, {TX("float[0]"), TX("int64[2]:1,0")},
     1, {{0}}, GL_ERR_INPUT, "empty axis"},
    {"pad wrap before 19", "Pad", 13, {AS("mode", "wrap")}, 2,
     {TX("float[2]"), TX("int64[2]:1,0")}, 1, {{0}}, GL_ERR_INPUT, "not supported"},
    {"pad negative size", "Pad", 13, {{0}}, 2, {TX("float[2]"), TX("int64[2]:-2,-1")}, 1, {{0}},
     GL_ERR_INPUT, "negative"},
    {"pad value type", "Pad", 13, {{0}}, 3, {TX("float[2]"), TX("int64[2]:1,0"), TX("double[]:1")},
     1, {{0}}, GL_ERR_INPUT, "'constant_value'"},
};

Test(movement, pad)
{
    tu_run_kernel_cases_within(pad_cases, GL_ARRAY_LEN(pad_cases), &tu_tol_exact);
}

static const tu_kcase tile_expand_cases[] = {
    {"tile 1-D", "Tile", 13, {{0}}, 2, {TX("float[2]:1,2"), TX("int64[1]:3")}, 1,
     {TX("float[6]:1,2,1,2,1,2")}},
    {"tile 2-D", "Tile", 13, {{0}}, 2, {TX("float[2,2]:1,2,3,4"), TX("int64[2]:2,2")}, 1,
     {TX("float[4,4]:1,2,1,2,3,4,3,4,1,2,1,2,3,4,3,4")}},
    {"tile rows only", "Tile", 13, {{0}}, 2, {TX("int8[1,2]:1,2"), TX("int64[2]:2,1")}, 1,
     {TX("int8[2,2]:1,2,1,2")}},
    {"tile zero", "Tile", 13, {{0}}, 2, {TX("float[2]:1,2"), TX("int64[1]:0")}, 1,
     {TX("float[0]")}},
    {"tile string", "Tile", 13, {{0}}, 2, {TX("string[1]:s"), TX("int64[1]:2")}, 1,
     {TX("string[2]:s,s")}},
    {"tile opset 1", "Tile", 1, {{0}}, 3, {TX("float[2]:1,2"), TX("int64[]:2"), TX("int64[]:0")},
     1, {TX("float[4]:1,2,1,2")}},
    {"tile repeats length", "Tile", 13, {{0}}, 2, {TX("float[2]"), TX("int64[2]:1,1")}, 1, {{0}},
     GL_ERR_INPUT, "2 entries for rank 1"},
    {"tile negative", "Tile", 13, {{0}}, 2, {TX("float[2]"), TX("int64[1]:-1")}, 1, {{0}},
     GL_ERR_INPUT, "negative"},
    {"expand rank up", "Expand", 13, {{0}}, 2, {TX("float[3,1]:1,2,3"), TX("int64[3]:2,1,2")}, 1,
     {TX("float[2,3,2]:1,1,2,2,3,3,1,1,2,2,3,3")}},
    {"expand columns", "Expand", 13, {{0}}, 2, {TX("float[3,1]:1,2,3"), TX("int64[2]:3,4")}, 1,
     {TX("float[3,4]:1,1,1,1,2,2,2,2,3,3,3,3")}},
    {"expand smaller shape", "Expand", 13, {{0}}, 2, {TX("float[3,1]:1,2,3"), TX("int64[1]:1")}, 1,
     {TX("float[3,1]:1,2,3")}},
    {"expand rows", "Expand", 8, {{0}}, 2, {TX("float[1,3]:1,2,3"), TX("int64[2]:2,1")}, 1,
     {TX("float[2,3]:1,2,3,1,2,3")}},
    {"expand string", "Expand", 13, {{0}}, 2, {TX("string[1]:a"), TX("int64[1]:3")}, 1,
     {TX("string[3]:a,a,a")}},
    {"expand to empty", "Expand", 13, {{0}}, 2, {TX("float[1]:1"), TX("int64[2]:0,1")}, 1,
     {TX("float[0,1]")}},
    {"expand negative", "Expand", 13, {{0}}, 2, {TX("float[1]"), TX("int64[1]:-1")}, 1, {{0}},
     GL_ERR_INPUT, "negative"},
    {"expand mismatch", "Expand", 13, {{0}}, 2, {TX("float[3]"), TX("int64[1]:2")}, 1, {{0}},
     GL_ERR_INPUT, "does not expand"},
};

Test(movement, tile_expand)
{
    tu_run_kernel_cases_within(tile_expand_cases, GL_ARRAY_LEN(tile_expand_cases), &tu_tol_exact);
}

static const tu_kcase generator_cases[] = {
    {"range float", "Range", 11, {{0}}, 3, {TX("float[]:1"), TX("float[]:5"), TX("float[]:2")}, 1,
     {TX("float[2]:1,3")}},
    {"range int32 negative", "Range", 11, {{0}}, 3,
     {TX("int32[]:10"), TX("int32[]:4"), TX("int32[]:-3")}, 1, {TX("int32[2]:10,7")}},
    {"range empty", "Range", 11, {{0}}, 3, {TX("int64[]:0"), TX("int64[]:0"), TX("int64[]:1")}, 1,
     {TX("int64[0]")}},
    {"range wrong direction", "Range", 11, {{0}}, 3,
     {TX("int64[]:0"), TX("int64[]:5"), TX("int64[]:-1")}, 1, {TX("int64[0]")}},
    {"range double", "Range", 11, {{0}}, 3,
     {TX("double[]:0"), TX("double[]:1"), TX("double[]:0.25")}, 1,
     {TX("double[4]:0,0.25,0.5,0.75")}},
    {"range int16", "Range", 11, {{0}}, 3, {TX("int16[]:-3"), TX("int16[]:3"), TX("int16[]:2")}, 1,
     {TX("int16[3]:-3,-1,1")}},
    {"range int64 extremes", "Range", 11, {{0}}, 3,
     {TX("int64[]:" I64MIN), TX("int64[]:" I64MAX), TX("int64[]:" I64MAX)}, 1,
     {TX("int64[3]:" I64MIN ",-1," "9223372036854775806")}},
    {"range delta 0", "Range", 11, {{0}}, 3, {TX("int32[]:0"), TX("int32[]:5"), TX("int32[]:0")},
     1, {{0}}, GL_ERR_INPUT, "'delta' is 0"},
    {"range types differ", "Range", 11, {{0}}, 3,
     {TX("int32[]:0"), TX("int64[]:5"), TX("int32[]:1")}, 1, {{0}}, GL_ERR_INPUT, "'limit'"},
    {"nonzero bool", "NonZero", 13, {{0}}, 1, {TX("bool[2,2]:1,0,1,1")}, 1,
     {TX("int64[2,3]:0,1,1,0,0,1")}},
    {"nonzero float", "NonZero", 13, {{0}}, 1, {TX("float[3]:0,2,-1")}, 1, {TX("int64[1,2]:1,2")}},
    {"nonzero scalar", "NonZero", 13, {{0}}, 1, {TX("float[]:5")}, 1, {TX("int64[1,1]:0")}},
    {"nonzero none", "NonZero", 9, {{0}}, 1, {TX("int32[2,2]:0,0,0,0")}, 1, {TX("int64[2,0]")}},
    {"nonzero string", "NonZero", 13, {{0}}, 1, {TX("string[1]:a")}, 1, {{0}}, GL_ERR_INPUT,
     "NonZero of string"},
    {"onehot without axis", "OneHot", 11, {{0}}, 3,
     {TX("int64[3]:0,7,8"), TX("float[]:12"), TX("int32[2]:2,5")}, 1, {TX("int32[3,12]:"
     "5,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,5,2,2,2,2,2,2,2,2,2,2,2,2,5,2,2,2")}},
    {"onehot axis 0", "OneHot", 11, {AI("axis", 0)}, 3,
     {TX("int64[2]:1,0"), TX("int64[]:3"), TX("float[2]:0,1")}, 1, {TX("float[3,2]:0,1,1,0,0,0")}},
    {"onehot negative indices", "OneHot", 11, {{0}}, 3,
     {TX("int64[2]:-1,5"), TX("int64[]:3"), TX("float[2]:0,1")}, 1, {TX("float[2,3]:0,0,1,0,0,0")}},
    {"onehot negative at 9", "OneHot", 9, {{0}}, 3,
     {TX("int64[1]:-1"), TX("int64[]:3"), TX("float[2]:0,1")}, 1, {TX("float[1,3]:0,0,0")}},
    {"onehot float indices", "OneHot", 11, {AI("axis", -2)}, 3,
     {TX("float[1]:1.7"), TX("float[1]:3"), TX("float[2]:0,1")}, 1, {TX("float[3,1]:0,1,0")}},
    {"onehot depth 0", "OneHot", 11, {{0}}, 3,
     {TX("int64[1]:0"), TX("int64[]:0"), TX("float[2]:0,1")}, 1, {{0}}, GL_ERR_INPUT,
     "'depth' is 0"},
    {"onehot values", "OneHot", 11, {{0}}, 3,
     {TX("int64[1]:0"), TX("int64[]:2"), TX("float[3]:0,1,2")}, 1, {{0}}, GL_ERR_INPUT,
     "[off, on]"},
    {"eyelike", "EyeLike", 9, {{0}}, 1, {TX("int32[2,3]")}, 1, {TX("int32[2,3]:1,0,0,0,1,0")}},
    {"eyelike k 1 float", "EyeLike", 9, {AI("k", 1), AI("dtype", 1)}, 1, {TX("int32[2,3]")}, 1,
     {TX("float[2,3]:0,1,0,0,0,1")}},
    {"eyelike k -1", "EyeLike", 9, {AI("k", -1)}, 1, {TX("double[3,2]")}, 1,
     {TX("double[3,2]:0,0,1,0,0,1")}},
    {"eyelike k far", "EyeLike", 9, {AI("k", 5)}, 1, {TX("bool[2,2]")}, 1,
     {TX("bool[2,2]:0,0,0,0")}},
    {"eyelike rank", "EyeLike", 9, {{0}}, 1, {TX("float[2]")}, 1, {{0}}, GL_ERR_INPUT, "rank 2"},
    {"eyelike string dtype", "EyeLike", 9, {AI("dtype", 8)}, 1, {TX("float[2,2]")}, 1, {{0}},
     GL_ERR_INPUT, "not supported"},
};

Test(movement, generators)
{
    tu_run_kernel_cases_within(generator_cases, GL_ARRAY_LEN(generator_cases), &tu_tol_exact);
}

#define M33 "int64[3,3]:1,2,3,4,5,6,7,8,9"

static const tu_kcase trilu_compress_cases[] = {
    {"triu", "Trilu", 14, {{0}}, 1, {TX(M33)}, 1, {TX("int64[3,3]:1,2,3,0,5,6,0,0,9")}},
    {"tril", "Trilu", 14, {AI("upper", 0)}, 1, {TX(M33)}, 1, {TX("int64[3,3]:1,0,0,4,5,0,7,8,9")}},
    {"triu k 1", "Trilu", 14, {{0}}, 2, {TX(M33), TX("int64[]:1")}, 1,
     {TX("int64[3,3]:0,2,3,0,0,6,0,0,0")}},
    {"tril k -1", "Trilu", 14, {AI("upper", 0)}, 2, {TX(M33), TX("int64[]:-1")}, 1,
     {TX("int64[3,3]:0,0,0,4,0,0,7,8,0")}},
    {"tril batch", "Trilu", 14, {AI("upper", 0)}, 1, {TX("float[2,1,2]:1,2,3,4")}, 1,
     {TX("float[2,1,2]:1,0,3,0")}},
    {"triu empty", "Trilu", 14, {{0}}, 2, {TX("int64[0,5]"), TX("int64[]:1")}, 1,
     {TX("int64[0,5]")}},
    {"triu huge k", "Trilu", 14, {{0}}, 2, {TX("int64[1,2]:1,2"), TX("int64[]:" I64MAX)}, 1,
     {TX("int64[1,2]:0,0")}},
    {"tril huge k", "Trilu", 14, {AI("upper", 0)}, 2,
     {TX("int64[1,2]:1,2"), TX("int64[]:" I64MAX)}, 1, {TX("int64[1,2]:1,2")}},
    {"tril min k", "Trilu", 14, {AI("upper", 0)}, 2, {TX("int64[1,2]:1,2"), TX("int64[]:" I64MIN)},
     1, {TX("int64[1,2]:0,0")}},
    {"trilu rank 1", "Trilu", 14, {{0}}, 1, {TX("float[3]")}, 1, {{0}}, GL_ERR_INPUT, "rank >= 2"},
    {"compress axis 0", "Compress", 11, {AI("axis", 0)}, 2,
     {TX("float[3,2]:1,2,3,4,5,6"), TX("bool[3]:0,1,1")}, 1, {TX("float[2,2]:3,4,5,6")}},
    {"compress axis 1", "Compress", 11, {AI("axis", 1)}, 2,
     {TX("float[3,2]:1,2,3,4,5,6"), TX("bool[2]:0,1")}, 1, {TX("float[3,1]:2,4,6")}},
    {"compress flat", "Compress", 11, {{0}}, 2,
     {TX("float[3,2]:1,2,3,4,5,6"), TX("bool[5]:0,1,0,0,1")}, 1, {TX("float[2]:2,5")}},
    {"compress negative axis", "Compress", 11, {AI("axis", -1)}, 2,
     {TX("float[3,2]:1,2,3,4,5,6"), TX("bool[2]:1,0")}, 1, {TX("float[3,1]:1,3,5")}},
    {"compress none", "Compress", 11, {AI("axis", 0)}, 2, {TX("string[2]:a,b"), TX("bool[2]:0,0")},
     1, {TX("string[0]")}},
    {"compress past axis", "Compress", 11, {AI("axis", 0)}, 2,
     {TX("float[3,2]"), TX("bool[4]:0,0,0,1")}, 1, {{0}}, GL_ERR_INPUT, "past the axis"},
    {"compress negative at 9", "Compress", 9, {AI("axis", -1)}, 2,
     {TX("float[3,2]"), TX("bool[2]:1,0")}, 1, {{0}}, GL_ERR_INPUT, "needs opset 11"},
};

Test(movement, trilu_compress)
{
    tu_run_kernel_cases_within(trilu_compress_cases, GL_ARRAY_LEN(trilu_compress_cases),
    &tu_tol_exact);
}

static const tu_kcase space_cases[] = {
    {"depthtospace DCR", "DepthToSpace", 13, {AI("blocksize", 2)}, 1,
     {TX("float[1,8,1,1]:0,1,2,3,4,5,6,7")}, 1, {TX("float[1,2,2,2]:0,2,4,6,1,3,5,7")}},
    {"depthtospace CRD", "DepthToSpace", 13, {AI("blocksize", 2), AS("mode", "CRD")}, 1,
     {TX("float[1,8,1,1]:0,1,2,3,4,5,6,7")}, 1, {TX("float[1,2,2,2]:0,1,2,3,4,5,6,7")}},
    {"depthtospace height 2", "DepthToSpace", 11, {AI("blocksize", 2)}, 1,
     {TX("float[1,4,2,1]:0,1,2,3,4,5,6,7")}, 1, {TX("float[1,1,4,2]:0,2,4,6,1,3,5,7")}},
    {"depthtospace mode ignored before 11", "DepthToSpace", 1,
     {AI("blocksize", 2), AS("mode", "CRD")}, 1, {TX("float[1,8,1,1]:0,1,2,3,4,5,6,7")}, 1,
     {TX("float[1,2,2,2]:0,2,4,6,1,3,5,7")}},
    {"depthtospace channels", "DepthToSpace", 13, {AI("blocksize", 2)}, 1, {TX("float[1,3,1,1]")},
     1, {{0}}, GL_ERR_INPUT, "divisible by 4"},
    {"depthtospace mode", "DepthToSpace", 13, {AI("blocksize", 2), AS("mode", "XYZ")}, 1,
     {TX("float[1,4,1,1]")}, 1, {{0}}, GL_ERR_INPUT, "neither DCR nor CRD"},
    {"depthtospace blocksize", "DepthToSpace", 13, {{0}}, 1, {TX("float[1,4,1,1]")}, 1, {{0}},
     GL_ERR_INPUT, "'blocksize'"},
    {"spacetodepth", "SpaceToDepth", 13, {AI("blocksize", 2)}, 1, {TX("float[1,1,2,2]:1,2,3,4")},
     1, {TX("float[1,4,1,1]:1,2,3,4")}},
    {"spacetodepth channels", "SpaceToDepth", 13, {AI("blocksize", 2)}, 1,
     {TX("float[1,2,2,2]:0,1,2,3,4,5,6,7")}, 1, {TX("float[1,8,1,1]:0,4,1,5,2,6,3,7")}},
    {"spacetodepth wide", "SpaceToDepth", 13, {AI("blocksize", 2)}, 1,
     {TX("int8[1,1,2,4]:0,1,2,3,4,5,6,7")}, 1, {TX("int8[1,4,1,2]:0,2,1,3,4,6,5,7")}},
    {"spacetodepth height", "SpaceToDepth", 13, {AI("blocksize", 2)}, 1, {TX("float[1,1,3,2]")}, 1,
     {{0}}, GL_ERR_INPUT, "divisible"},
    {"reversesequence time major", "ReverseSequence", 10,
     {AI("time_axis", 0), AI("batch_axis", 1)}, 2,
     {TX("float[4,4]:0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"), TX("int64[4]:4,3,2,1")}, 1,
     {TX("float[4,4]:12,9,6,3,8,5,2,7,4,1,10,11,0,13,14,15")}},
    {"reversesequence batch major", "ReverseSequence", 10,
     {AI("time_axis", 1), AI("batch_axis", 0)}, 2,
     {TX("float[2,3]:1,2,3,4,5,6"), TX("int64[2]:2,3")}, 1, {TX("float[2,3]:2,1,3,6,5,4")}},
    {"reversesequence inner dims", "ReverseSequence", 10, {{0}}, 2,
     {TX("int32[2,1,2]:1,2,3,4"), TX("int64[1]:2")}, 1, {TX("int32[2,1,2]:3,4,1,2")}},
    {"reversesequence zero length", "ReverseSequence", 10, {{0}}, 2,
     {TX("float[2,1]:1,2"), TX("int64[1]:0")}, 1, {TX("float[2,1]:1,2")}},
    {"reversesequence too long", "ReverseSequence", 10, {{0}}, 2,
     {TX("float[2,1]"), TX("int64[1]:3")}, 1, {{0}}, GL_ERR_INPUT, "outside [0, 2]"},
    {"reversesequence lens count", "ReverseSequence", 10, {{0}}, 2,
     {TX("float[2,2]"), TX("int64[1]:1")}, 1, {{0}}, GL_ERR_INPUT, "batch of 2"},
    {"reversesequence same axes", "ReverseSequence", 10, {AI("time_axis", 1)}, 2,
     {TX("float[2,2]"), TX("int64[2]:1,1")}, 1, {{0}}, GL_ERR_INPUT, "batch_axis/time_axis"},
};

Test(movement, space_and_sequence)
{
    tu_run_kernel_cases_within(space_cases, GL_ARRAY_LEN(space_cases), &tu_tol_exact);
}

static const tu_kcase unique_cases[] = {
    {"unique sorted", "Unique", 11, {{0}}, 1, {TX("float[6]:2,1,1,3,4,3")}, 4,
     {TX("float[4]:1,2,3,4"), TX("int64[4]:1,0,3,4"), TX("int64[6]:1,0,0,2,3,2"),
     TX("int64[4]:2,1,2,1")}},
    {"unique not sorted", "Unique", 11, {AI("sorted", 0)}, 1, {TX("float[6]:2,1,1,3,4,3")}, 4,
     {TX("float[4]:2,1,3,4"), TX("int64[4]:0,1,3,4"), TX("int64[6]:0,1,1,2,3,2"),
     TX("int64[4]:1,2,2,1")}},
    {"unique axis 0", "Unique", 11, {AI("axis", 0)}, 1, {TX("float[3,3]:1,0,0,1,0,0,2,3,4")}, 4,
     {TX("float[2,3]:1,0,0,2,3,4"), TX("int64[2]:0,2"), TX("int64[3]:0,0,1"), TX("int64[2]:2,1")}},
    {"unique axis 1 3-D", "Unique", 11, {AI("axis", 1)}, 1,
     {TX("float[2,4,2]:1,1,0,1,2,1,0,1,1,1,0,1,2,1,0,1")}, 4,
     {TX("float[2,3,2]:0,1,1,1,2,1,0,1,1,1,2,1"), TX("int64[3]:1,0,2"), TX("int64[4]:1,0,2,0"),
     TX("int64[3]:2,1,1")}},
    {"unique negative axis", "Unique", 11, {AI("axis", -1)}, 1,
     {TX("float[3,3]:1,0,0,1,0,0,2,3,3")}, 4,
     {TX("float[3,2]:0,1,0,1,3,2"), TX("int64[2]:1,0"), TX("int64[3]:1,0,0"), TX("int64[2]:2,1")}},
    {"unique strings", "Unique", 11, {{0}}, 1, {TX("string[4]:b,a,b,c")}, 4,
     {TX("string[3]:a,b,c"), TX("int64[3]:1,0,3"), TX("int64[4]:1,0,1,2"), TX("int64[3]:1,2,1")}},
    {"unique int64 extremes", "Unique", 11, {{0}}, 1,
     {TX("int64[3]:" I64MAX "," I64MIN "," I64MAX)}, 4,
     {TX("int64[2]:" I64MIN "," I64MAX), TX("int64[2]:1,0"), TX("int64[3]:1,0,1"),
     TX("int64[2]:1,2")}},
    {"unique empty", "Unique", 11, {{0}}, 1, {TX("float[0]")}, 4,
     {TX("float[0]"), TX("int64[0]"), TX("int64[0]"), TX("int64[0]")}},
    {"unique only Y", "Unique", 11, {{0}}, 1, {TX("int32[3]:3,3,1")}, 1, {TX("int32[2]:1,3")}},
    {"unique axis out of range", "Unique", 11, {AI("axis", 2)}, 1, {TX("float[2,2]")}, 1, {{0}},
     GL_ERR_INPUT, "out of range"},
};

Test(movement, unique)
{
    tu_run_kernel_cases_within(unique_cases, GL_ARRAY_LEN(unique_cases), &tu_tol_exact);
}

/* ==== shape functions ========================================================================= */

static const icase infer_reshape_cases[] = {
    {"copy and infer", "Reshape", 14, {{0}}, {"float[N,3,4]", "=int64[2]:0,-1"}, {"float[N,12]"},
     NULL},
    {"-1 recovers N", "Reshape", 14, {{0}}, {"float[N,3,4]", "=int64[2]:-1,12"}, {"float[N,12]"},
     NULL},
    {"merge into a product", "Reshape", 14, {{0}}, {"float[N,3,4]", "=int64[1]:-1"},
     {"float[N*12]"}, NULL},
    {"split a product", "Reshape", 14, {{0}}, {"float[N*12]", "=int64[3]:-1,3,4"},
     {"float[N,3,4]"}, NULL},
    {"two symbols", "Reshape", 14, {{0}}, {"float[seq,N,2]", "=int64[1]:-1"}, {"float[N*seq*2]"},
     NULL},
    {"heads", "Reshape", 14, {{0}}, {"float[batch,seq,768]", "=int64[4]:0,0,12,64"},
     {"float[batch,seq,12,64]"}, NULL},
    {"heads back", "Reshape", 14, {{0}}, {"float[batch,seq,12,64]", "=int64[3]:0,0,-1"},
     {"float[batch,seq,768]"}, NULL},
    {"unknown copied dim cancels", "Reshape", 14, {{0}}, {"float[?,3,4]", "=int64[2]:0,-1"},
     {"float[?,12]"}, NULL},
    {"unknown dim in -1", "Reshape", 14, {{0}}, {"float[?,3,4]", "=int64[2]:-1,12"},
     {"float[?,12]"}, NULL},
    {"symbol does not divide", "Reshape", 14, {{0}}, {"float[N,3]", "=int64[2]:-1,2"},
     {"float[?,2]"}, NULL},
    {"shape not constant", "Reshape", 14, {{0}}, {"float[N,3]", "int64[3]"}, {"float[?,?,?]"},
     NULL},
    {"shape length unknown", "Reshape", 14, {{0}}, {"float[N,3]", "int64[?]"}, {"float[*]"}, NULL},
    {"input rank unknown", "Reshape", 14, {{0}}, {"float", "=int64[2]:2,3"}, {"float[2,3]"}, NULL},
    {"input rank unknown copy", "Reshape", 14, {{0}}, {"float", "=int64[2]:0,-1"}, {"float[?,?]"},
     NULL},
    {"allowzero keeps 0", "Reshape", 14, {AI("allowzero", 1)}, {"float[N,0]", "=int64[2]:0,5"},
     {"float[0,5]"}, NULL},
    {"opset 1 attribute", "Reshape", 1, {AINTS("shape", 2, 3, -1)}, {"float[3,4]"}, {"float[3,4]"},
     NULL},
    {"unknown input type", "Reshape", 14, {{0}}, {"?", "=int64[1]:-1"}, {"?"}, NULL},
    {"mismatch", "Reshape", 14, {{0}}, {"float[2,3]", "=int64[2]:4,4"}, {NULL}, "cannot reshape"},
    {"-1 does not divide", "Reshape", 14, {{0}}, {"float[2,3]", "=int64[2]:-1,4"}, {NULL},
     "cannot reshape"},
    {"copy past rank", "Reshape", 14, {{0}}, {"float[2]", "=int64[2]:0,0"}, {NULL}, "has rank 1"},
    {"two -1", "Reshape", 14, {{0}}, {"float[N]", "=int64[2]:-1,-1"}, {NULL}, "more than one"},
    {"flatten axis 1", "Flatten", 13, {{0}}, {"float[N,3,4]"}, {"float[N,12]"}, NULL},
    {"flatten axis 2", "Flatten", 13, {AI("axis", 2)}, {"float[N,3,4]"}, {"float[N*3,4]"}, NULL},
    {"flatten axis 0", "Flatten", 13, {AI("axis", 0)}, {"float[N,3,4]"}, {"float[1,N*12]"}, NULL},
    {"flatten NCHW", "Flatten", 13, {{0}}, {"float[N,C,H,W]"}, {"float[N,C*H*W]"}, NULL},
    {"flatten unknown dim", "Flatten", 13, {AI("axis", 0)}, {"float[?,3]"}, {"float[1,?]"}, NULL},
    {"flatten rank unknown", "Flatten", 13, {{0}}, {"float"}, {"float[?,?]"}, NULL},
    {"flatten zero dim", "Flatten", 13, {{0}}, {"float[N,0,4]"}, {"float[N,0]"}, NULL},
    {"flatten bad axis", "Flatten", 13, {AI("axis", 5)}, {"float[N,3]"}, {NULL}, "out of range"},
};

Test(movement_infer, reshape_flatten) { RUN_INFERS(infer_reshape_cases); }

static const icase infer_shape_cases[] = {
    {"transpose perm", "Transpose", 13, {AINTS("perm", 3, 2, 0, 1)}, {"float[N,3,H]"},
     {"float[H,N,3]"}, NULL},
    {"transpose default", "Transpose", 13, {{0}}, {"float[N,3,H]"}, {"float[H,3,N]"}, NULL},
    {"transpose rank unknown", "Transpose", 13, {AINTS("perm", 2, 1, 0)}, {"float"},
     {"float[?,?]"}, NULL},
    {"transpose bad perm", "Transpose", 13, {AINTS("perm", 2, 0, 2)}, {"float[N,3]"}, {NULL},
     "not a permutation"},
    {"squeeze const axes", "Squeeze", 13, {{0}}, {"float[1,N,1]", "=int64[1]:0"}, {"float[N,1]"},
     NULL},
    {"squeeze symbol axis", "Squeeze", 13, {{0}}, {"float[1,N]", "=int64[1]:1"}, {"float[1]"},
     NULL},
    {"squeeze all, symbol", "Squeeze", 13, {{0}}, {"float[1,N,1]"}, {"float[*]"}, NULL},
    {"squeeze all, known", "Squeeze", 13, {{0}}, {"float[1,3,1]"}, {"float[3]"}, NULL},
    {"squeeze axes unknown", "Squeeze", 13, {{0}}, {"float[1,N,1]", "int64[2]"}, {"float[?]"},
     NULL},
    {"squeeze attribute", "Squeeze", 11, {AINTS("axes", 1, -1)}, {"float[N,1]"}, {"float[N]"},
     NULL},
    {"squeeze not 1", "Squeeze", 13, {{0}}, {"float[2,N]", "=int64[1]:0"}, {NULL},
     "cannot squeeze"},
    {"unsqueeze const axes", "Unsqueeze", 13, {{0}}, {"float[N,3]", "=int64[2]:0,-1"},
     {"float[1,N,3,1]"}, NULL},
    {"unsqueeze attribute", "Unsqueeze", 11, {AINTS("axes", 1, 1)}, {"float[N,3]"},
     {"float[N,1,3]"}, NULL},
    {"unsqueeze axes unknown", "Unsqueeze", 13, {{0}}, {"float[N,3]", "int64[2]"},
     {"float[?,?,?,?]"}, NULL},
    {"unsqueeze scalar", "Unsqueeze", 13, {{0}}, {"int64[]", "=int64[1]:0"}, {"int64[1]"}, NULL},
    {"unsqueeze duplicate", "Unsqueeze", 13, {{0}}, {"float[N]", "=int64[2]:1,-2"}, {NULL},
     "twice"},
    {"concat symbols", "Concat", 13, {AI("axis", 1)}, {"float[N,3]", "float[N,5]"}, {"float[N,8]"},
     NULL},
    {"concat symbolic axis", "Concat", 13, {AI("axis", 0)}, {"float[N,3]", "float[M,3]"},
     {"float[?,3]"}, NULL},
    {"concat known wins", "Concat", 13, {AI("axis", 1)}, {"float[?,3]", "float[2,3]"},
     {"float[2,6]"}, NULL},
    {"concat with unknown input", "Concat", 13, {AI("axis", 0)}, {"float[N,3]", "?"},
     {"float[?,3]"}, NULL},
    {"concat shape vectors", "Concat", 13, {AI("axis", 0)}, {"int64[1]", "=int64[2]:-1,4"},
     {"int64[3]"}, NULL},
    {"concat rank mismatch", "Concat", 13, {AI("axis", 0)}, {"float[2]", "float[2,3]"}, {NULL},
     "rank"},
    {"concat dim mismatch", "Concat", 13, {AI("axis", 0)}, {"float[2,3]", "float[4,4]"}, {NULL},
     "dim 1"},
    {"split equal symbolic", "Split", 13, {AI("axis", 1)}, {"float[N,6]"},
     {"float[N,2]", "float[N,2]", "float[N,2]"}, NULL},
    {"split a product", "Split", 13, {{0}}, {"float[N*2,6]"}, {"float[N,6]", "float[N,6]"}, NULL},
    {"split symbol", "Split", 13, {{0}}, {"float[N,6]"}, {"float[?,6]", "float[?,6]"}, NULL},
    {"split const sizes", "Split", 13, {AI("axis", 1)}, {"float[N,6]", "=int64[2]:2,4"},
     {"float[N,2]", "float[N,4]"}, NULL},
    {"split unknown sizes", "Split", 13, {AI("axis", 1)}, {"float[N,6]", "int64[2]"},
     {"float[N,?]", "float[N,?]"}, NULL},
    {"split attribute", "Split", 11, {AINTS("split", 2, 1, 1)}, {"float[2,N]"},
     {"float[1,N]", "float[1,N]"}, NULL},
    {"split bad sizes", "Split", 13, {AI("axis", 1)}, {"float[N,6]", "=int64[2]:2,2"},
     {"float", "float"}, "sums to 4"},
    {"split not divisible", "Split", 13, {{0}}, {"float[5]"}, {"float", "float"}, "equal parts"},
};

Test(movement_infer, transpose_squeeze_concat_split) { RUN_INFERS(infer_shape_cases); }

static const icase infer_slice_cases[] = {
    {"slice symbolic keeps", "Slice", 13, {{0}},
     {"float[N,10,5]", "=int64[2]:0,3", "=int64[2]:" I64MAX ",4", "=int64[2]:0,2"},
     {"float[N,10,1]"}, NULL},
    {"slice values unknown, axes known", "Slice", 13, {{0}},
     {"float[N,10,5]", "int64[1]", "int64[1]", "=int64[1]:1"}, {"float[N,?,5]"}, NULL},
    {"slice nothing known", "Slice", 13, {{0}}, {"float[N,10,5]", "int64[1]", "int64[1]"},
     {"float[?,?,?]"}, NULL},
    {"slice reverse whole symbolic", "Slice", 13, {{0}},
     {"float[N,10]", "=int64[1]:-1", "=int64[1]:" I64MIN, "=int64[1]:0", "=int64[1]:-1"},
     {"float[N,10]"}, NULL},
    {"slice part of symbol", "Slice", 13, {{0}},
     {"float[N,10]", "=int64[1]:1", "=int64[1]:3", "=int64[1]:0"}, {"float[?,10]"}, NULL},
    {"slice default axes", "Slice", 13, {{0}},
     {"float[20,10,5]", "=int64[3]:0,0,3", "=int64[3]:20,10,4"}, {"float[20,10,1]"}, NULL},
    {"slice negative steps", "Slice", 13, {{0}},
     {"float[20,10,5]", "=int64[3]:20,10,4", "=int64[3]:0,0,1", "=int64[3]:0,1,2",
      "=int64[3]:-1,-3,-2"}, {"float[19,3,2]"}, NULL},
    {"slice opset 1", "Slice", 1, {AINTS("starts", 1, 1), AINTS("ends", 1, 1000)}, {"float[N,4]"},
     {"float[?,4]"}, NULL},
    {"slice rank unknown", "Slice", 13, {{0}}, {"float", "=int64[1]:0", "=int64[1]:1"},
     {"float[*]"}, NULL},
    {"slice step 0", "Slice", 13, {{0}},
     {"float[4]", "=int64[1]:0", "=int64[1]:1", "=int64[1]:0", "=int64[1]:0"}, {NULL}, "step 0"},
    {"gather symbolic", "Gather", 13, {AI("axis", 1)}, {"float[N,5,H]", "int64[2,K]"},
     {"float[N,2,K,H]"}, NULL},
    {"gather shape scalar", "Gather", 13, {{0}}, {"int64[4]", "=int64[]:0"}, {"int64[]"}, NULL},
    {"gather indices unknown", "Gather", 13, {{0}}, {"float[N,5]", "?"}, {"float[*]"}, NULL},
    {"gather bad axis", "Gather", 13, {AI("axis", 2)}, {"float[N,5]", "int64[2]"}, {NULL},
     "out of range"},
    {"gather_elements", "GatherElements", 13, {AI("axis", 1)}, {"float[N,4]", "int64[N,2]"},
     {"float[N,2]"}, NULL},
    {"gather_elements rank", "GatherElements", 13, {{0}}, {"float[N,4]", "int64[2]"}, {NULL},
     "rank"},
    {"gathernd batch", "GatherND", 13, {AI("batch_dims", 1)}, {"float[N,4,5]", "int64[N,3,2]"},
     {"float[N,3]"}, NULL},
    {"gathernd slices", "GatherND", 13, {{0}}, {"float[4,5,C]", "int64[K,1]"}, {"float[K,5,C]"},
     NULL},
    {"gathernd tuple unknown", "GatherND", 13, {{0}}, {"float[4,5]", "int64[K,?]"}, {"float[*]"},
     NULL},
    {"gathernd tuple too long", "GatherND", 13, {{0}}, {"float[4,5]", "int64[K,3]"}, {NULL},
     "invalid"},
    {"scatternd", "ScatterND", 16, {{0}}, {"float[N,4]", "int64[K,1]", "float[K,4]"},
     {"float[N,4]"}, NULL},
    {"scatter_elements", "ScatterElements", 16, {{0}}, {"int32[N]", "int64[K]", "int32[K]"},
     {"int32[N]"}, NULL},
};

Test(movement_infer, slice_gather_scatter) { RUN_INFERS(infer_slice_cases); }

static const icase infer_misc_cases[] = {
    {"pad const", "Pad", 13, {{0}}, {"float[N,3,H,W]", "=int64[8]:0,0,1,1,0,0,1,1"},
     {"float[N,3,?,?]"}, NULL},
    {"pad known", "Pad", 13, {{0}}, {"float[1,3,4,5]", "=int64[8]:0,0,1,1,0,0,1,1"},
     {"float[1,3,6,7]"}, NULL},
    {"pad unknown pads", "Pad", 13, {{0}}, {"float[N,3]", "int64[4]"}, {"float[?,?]"}, NULL},
    {"pad attribute", "Pad", 2, {AINTS("pads", 4, 1, 0, 1, 0)}, {"float[N,3]"}, {"float[?,3]"},
     NULL},
    {"pad wrong length", "Pad", 13, {{0}}, {"float[N,3]", "=int64[2]:1,1"}, {NULL}, "expected 4"},
    {"tile symbolic", "Tile", 13, {{0}}, {"float[N,3]", "=int64[2]:2,1"}, {"float[N*2,3]"}, NULL},
    {"tile unknown", "Tile", 13, {{0}}, {"float[N,3]", "int64[2]"}, {"float[?,?]"}, NULL},
    {"tile bad length", "Tile", 13, {{0}}, {"float[N,3]", "=int64[1]:2"}, {NULL}, "entries"},
    {"expand const", "Expand", 13, {{0}}, {"float[3,1]", "=int64[3]:2,1,6"}, {"float[2,3,6]"},
     NULL},
    {"expand keeps symbol", "Expand", 13, {{0}}, {"float[N,1]", "=int64[2]:1,4"}, {"float[N,4]"},
     NULL},
    {"expand symbol to value", "Expand", 13, {{0}}, {"float[N]", "=int64[1]:4"}, {"float[4]"},
     NULL},
    {"expand unknown shape", "Expand", 13, {{0}}, {"float[N,1]", "int64[3]"}, {"float[?,?,?]"},
     NULL},
    {"expand unknown keeps known", "Expand", 13, {{0}}, {"float[1,5]", "int64[2]"}, {"float[?,5]"},
     NULL},
    {"expand mismatch", "Expand", 13, {{0}}, {"float[3]", "=int64[1]:4"}, {NULL},
     "does not expand"},
    {"constantofshape", "ConstantOfShape", 9, {ATENSOR("value", "int32[1]:1")}, {"=int64[2]:2,3"},
     {"int32[2,3]"}, NULL},
    {"constantofshape unknown", "ConstantOfShape", 9, {{0}}, {"int64[3]"}, {"float[?,?,?]"}, NULL},
    {"range const", "Range", 11, {{0}}, {"=float[]:1", "=float[]:5", "=float[]:2"}, {"float[2]"},
     NULL},
    {"range unknown", "Range", 11, {{0}}, {"int32[]", "=int32[]:5", "=int32[]:1"}, {"int32[?]"},
     NULL},
    {"nonzero", "NonZero", 13, {{0}}, {"bool[N,4]"}, {"int64[2,?]"}, NULL},
    {"nonzero scalar", "NonZero", 13, {{0}}, {"float[]"}, {"int64[1,?]"}, NULL},
    {"compress const", "Compress", 11, {AI("axis", 1)}, {"float[N,3]", "=bool[3]:1,0,1"},
     {"float[N,2]"}, NULL},
    {"compress unknown", "Compress", 11, {AI("axis", 1)}, {"float[N,3]", "bool[3]"},
     {"float[N,?]"}, NULL},
    {"compress flat", "Compress", 11, {{0}}, {"float[N,3]", "bool[K]"}, {"float[?]"}, NULL},
    {"onehot last", "OneHot", 11, {{0}}, {"int64[N]", "=float[]:10", "float[2]"}, {"float[N,10]"},
     NULL},
    {"onehot first", "OneHot", 11, {AI("axis", 0)}, {"int64[N]", "=int64[]:10", "int32[2]"},
     {"int32[10,N]"}, NULL},
    {"onehot depth unknown", "OneHot", 11, {{0}}, {"int64[N]", "int64[]", "float[2]"},
     {"float[N,?]"}, NULL},
    {"eyelike", "EyeLike", 9, {AI("dtype", 1)}, {"int32[N,M]"}, {"float[N,M]"}, NULL},
    {"trilu", "Trilu", 14, {{0}}, {"int64[B,N,N]", "=int64[]:1"}, {"int64[B,N,N]"}, NULL},
    {"depthtospace", "DepthToSpace", 13, {AI("blocksize", 2)}, {"float[N,8,H,3]"},
     {"float[N,2,H*2,6]"}, NULL},
    {"depthtospace product", "DepthToSpace", 13, {AI("blocksize", 2)}, {"float[N,C*4,H,W]"},
     {"float[N,C,H*2,W*2]"}, NULL},
    {"depthtospace channels", "DepthToSpace", 13, {AI("blocksize", 2)}, {"float[N,6,H,W]"}, {NULL},
     "divide"},
    {"spacetodepth", "SpaceToDepth", 13, {AI("blocksize", 2)}, {"float[N,C,H*2,8]"},
     {"float[N,C*4,H,4]"}, NULL},
    {"reversesequence", "ReverseSequence", 10, {{0}}, {"float[T,B,4]", "int64[B]"},
     {"float[T,B,4]"}, NULL},
    {"unique flat", "Unique", 11, {{0}}, {"float[N,3]"},
     {"float[?]", "int64[?]", "int64[N*3]", "int64[?]"}, NULL},
    {"unique axis", "Unique", 11, {AI("axis", 1)}, {"float[N,3]"},
     {"float[N,?]", "int64[?]", "int64[3]", "int64[?]"}, NULL},
    {"shape", "Shape", 13, {{0}}, {"float[N,3,H]"}, {"int64[3]"}, NULL},
    {"shape start", "Shape", 15, {AI("start", 1)}, {"float[N,3,H]"}, {"int64[2]"}, NULL},
    {"shape rank unknown", "Shape", 15, {{0}}, {"float"}, {"int64[?]"}, NULL},
    {"size", "Size", 13, {{0}}, {"float[N]"}, {"int64[]"}, NULL},
    {"identity", "Identity", 13, {{0}}, {"string[N]"}, {"string[N]"}, NULL},
    {"constant", "Constant", 13, {AINTS("value_ints", 3, 1, 2, 3)}, {NULL}, {"int64[3]"}, NULL},
    {"constant sparse", "Constant", 13, {ASPARSE("sparse_value")}, {NULL}, {"?"}, NULL},
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

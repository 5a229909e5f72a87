/* patterns_functions.c — the graphlab ops as ONNX model-local functions.
 *
 * A node of domain graphlab runs on graphlab's own kernels (src/ops/graphlab.c); for
 * every other runtime the saved model carries, once per op, a FunctionProto of domain
 * graphlab whose body is the op's standard decomposition in ai.onnx ops of the model's
 * own opset (a function may not import another version than its model). The ops the
 * bodies use keep one form over the opsets each body is written for (from its
 * min_opset below to where ONNX has the op itself).
 *
 * LayerNormalization's body normalizes over the dims from `axis` on by flattening x to
 * [outer, inner] (Flatten takes the axis as an attribute the body can refer to, where
 * ReduceMean would need the list of axes), and reads epsilon through Constant's
 * value_float (opset 12). The pass always sets both attributes on the node: a body
 * attribute referring to an absent one would take Flatten's default axis, 1.
 *
 * FusedMatMul's body (the fold-transpose pass makes the op) cannot write the Transpose
 * of its operands as a Transpose: the perm depends on the operand's rank, which a body
 * does not know. Einsum "...ij->...ji" swaps the last two dims at any rank, and an If on
 * the caller's transA/transB chooses it or the operand itself. alpha multiplies through
 * CastLike from opset 15 (so any float type); below it the pass only makes float32
 * FusedMatMuls, which a float constant multiplies as it is.
 *
 * MatMulIntegerT and QLinearMatMulT (also made by fold-transpose) compute in int32:
 * ONNX Runtime has no Einsum on 8-bit integers, so the operands are cast to int32 before
 * the swap, their zero points subtracted (A's as a column [M, 1], B's as a row [N]:
 * flattening a scale or zero point serves every layout the op takes, since it holds one
 * vector), and MatMul multiplies. QLinearMatMulT then scales by a_scale * b_scale in
 * float and ends in QuantizeLinear, the same rounding as the kernel.
 */
#include "passes/patterns.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SQRT2 1.41421356237309504880
#define SQRT_2_PI 0.79788456080286535588

/* ---- building a body -------------------------------------------------------------------- */

/* A node of the body named after its one output. */
static gl_node *add(gl_graph *b, const char *op, const char *out, size_t n_in, ...)
{
    gl_value *ins[4] = {0};
    va_list ap;
    va_start(ap, n_in);
    for (size_t i = 0; i < n_in && i < 4; i++)
        ins[i] = va_arg(ap, gl_value *);
    va_end(ap);
    return gl_add_node_named(b, op, "", out, ins, n_in, &out, 1);
}

static gl_value *val(gl_node *n) { return n ? n->outputs[0] : NULL; }

static void take_attr(gl_node *n, gl_attr a)
{
    if (n)
        gl_node_take_attr(n, &a);
}

/* A Constant of one number: a scalar (rank 0) or a list of one (rank 1). */
static gl_value *constant(gl_graph *b, const char *out, gl_dtype dt, int rank, double v)
{
    gl_node *n = add(b, "Constant", out, 0);
    gl_tensor *t = gl_tensor_new(dt, rank, (const int64_t[]){1});
    if (!n || !t) {
        gl_tensor_free(t);
        return NULL;
    }
    if (dt == GL_DT_FLOAT)
        *(float *)gl_tensor_make_writable(t) = (float)v;
    else
        *(int64_t *)gl_tensor_make_writable(t) = (int64_t)v;
    take_attr(n, (gl_attr){.name = gl_xstrdup("value"), .type = GL_ATTR_TENSOR, .t = t});
    return val(n);
}

/* An attribute that takes the caller's attribute `ref`. */
static void ref_attr(gl_node *n, const char *name, gl_attr_type type, const char *ref)
{
    take_attr(n, (gl_attr){.name = gl_xstrdup(name), .type = type,
                           .ref_attr_name = gl_xstrdup(ref)});
}

static gl_value *param(gl_graph *b, const char *name)
{
    gl_value *v = gl_add_value(b, name);
    gl_graph_add_input(b, v);
    return v;
}

/* ---- the bodies --------------------------------------------------------------------------- */

/* Y = X * (1 + t) * 0.5: both Gelu forms end so. */
static gl_value *gelu_end(gl_graph *b, gl_value *x, gl_value *t)
{
    gl_value *p = val(add(b, "Add", "plus_one", 2, t, constant(b, "one", GL_DT_FLOAT, 0, 1.0)));
    gl_value *q = val(add(b, "Mul", "x_times", 2, x, p));
    return val(add(b, "Mul", "Y", 2, q, constant(b, "half", GL_DT_FLOAT, 0, 0.5)));
}

/* Y = X * (1 + Erf(X / sqrt(2))) * 0.5 */
static gl_value *gelu_body(gl_graph *b)
{
    gl_value *x = param(b, "X");
    gl_value *d = val(add(b, "Div", "scaled", 2, x,
                          constant(b, "sqrt2", GL_DT_FLOAT, 0, SQRT2)));
    return gelu_end(b, x, val(add(b, "Erf", "erf", 1, d)));
}

/* Y = X * (1 + Tanh(sqrt(2/pi) * (X + 0.044715 * X^3))) * 0.5 */
static gl_value *gelu_tanh_body(gl_graph *b)
{
    gl_value *x = param(b, "X");
    gl_value *x3 = val(add(b, "Mul", "cube", 2, val(add(b, "Mul", "square", 2, x, x)), x));
    gl_value *k = val(add(b, "Mul", "cubic", 2, x3,
                          constant(b, "kappa", GL_DT_FLOAT, 0, 0.044715)));
    gl_value *s = val(add(b, "Add", "inner", 2, x, k));
    gl_value *i = val(add(b, "Mul", "scaled", 2, s,
                          constant(b, "beta", GL_DT_FLOAT, 0, SQRT_2_PI)));
    return gelu_end(b, x, val(add(b, "Tanh", "tanh", 1, i)));
}

/* Y = X * Sigmoid(X) */
static gl_value *silu_body(gl_graph *b)
{
    gl_value *x = param(b, "X");
    return val(add(b, "Mul", "Y", 2, x, val(add(b, "Sigmoid", "sigmoid", 1, x))));
}

/* Y = X * HardSigmoid(X) alpha=1/6 beta=0.5 */
static gl_value *hardswish_body(gl_graph *b)
{
    gl_value *x = param(b, "X");
    gl_node *h = add(b, "HardSigmoid", "hsig", 1, x);
    if (h) {
        gl_node_set_attr_float(h, "alpha", 1.0f / 6.0f);
        gl_node_set_attr_float(h, "beta", 0.5f);
    }
    return val(add(b, "Mul", "Y", 2, x, val(h)));
}

/* A ReduceMean over the last axis of a rank-2 value, keeping it. The axes are an
 * attribute: the body is only written below opset 17 (from there on the pass emits
 * ONNX's LayerNormalization), so never in opset 18's form with axes as an input. */
static gl_value *mean_last(gl_graph *b, const char *out, gl_value *x)
{
    gl_node *n = add(b, "ReduceMean", out, 1, x);
    if (n) {
        gl_node_set_attr_ints(n, "axes", (const int64_t[]){1}, 1);
        gl_node_set_attr_int(n, "keepdims", 1);
    }
    return val(n);
}

/* Y = (F - mean(F)) / sqrt(mean((F - mean(F))^2) + epsilon) reshaped as X, * Scale + B,
 * with F = Flatten(X, axis). */
static gl_value *layernorm_body(gl_graph *b)
{
    gl_value *x = param(b, "X"), *scale = param(b, "Scale"), *bias = param(b, "B");
    gl_value *shape = val(add(b, "Shape", "shape", 1, x));
    gl_node *flat = add(b, "Flatten", "rows", 1, x);
    ref_attr(flat, "axis", GL_ATTR_INT, "axis");
    gl_value *f = val(flat);
    gl_value *d = val(add(b, "Sub", "centered", 2, f, mean_last(b, "mean", f)));
    gl_value *var = mean_last(b, "var", val(add(b, "Mul", "squared", 2, d, d)));
    gl_node *eps = add(b, "Constant", "eps", 0);
    ref_attr(eps, "value_float", GL_ATTR_FLOAT, "epsilon");
    gl_value *ve = val(add(b, "Add", "var_eps", 2, var, val(eps)));
    gl_value *sd = val(add(b, "Sqrt", "stddev", 1, ve));
    gl_value *n = val(add(b, "Div", "normalized", 2, d, sd));
    gl_value *r = val(add(b, "Reshape", "unflat", 2, n, shape));
    return val(add(b, "Add", "Y", 2, val(add(b, "Mul", "scaled", 2, r, scale)), bias));
}

/* One branch of an If: a graph whose one output is `op`(x) (x read from the body). */
static gl_graph *branch(gl_graph *b, gl_node *holder, const char *name, const char *op,
                        const char *x, const char *out)
{
    gl_graph *g = gl_graph_new(b->model, b, name);
    g->parent_node = holder;
    gl_node *n = add(g, op, out, 1, gl_resolve_value(g, x));
    if (n && strcmp(op, "Einsum") == 0)
        gl_node_set_attr_string(n, "equation", "...ij->...ji");
    if (n)
        gl_graph_add_output(g, val(n));
    return g;
}

/* x, or x with its last two dims swapped when the caller's attribute `flag` is 1. */
static gl_value *maybe_swapped(gl_graph *b, gl_value *x, const char *flag)
{
    char name[64];
    snprintf(name, sizeof(name), "%s_flag", x->name);
    gl_node *k = add(b, "Constant", name, 0);
    ref_attr(k, "value_int", GL_ATTR_INT, flag);
    snprintf(name, sizeof(name), "%s_cond", x->name);
    gl_node *cond = add(b, "Cast", name, 1, val(k));
    if (cond)
        gl_node_set_attr_int(cond, "to", GL_DT_BOOL);
    snprintf(name, sizeof(name), "%s_view", x->name);
    gl_node *nif = add(b, "If", name, 1, val(cond));
    if (!nif)
        return NULL;
    char out[64];
    snprintf(out, sizeof(out), "%s_swapped", x->name);
    gl_attr t = {.name = gl_xstrdup("then_branch"), .type = GL_ATTR_GRAPH,
                 .g = branch(b, nif, "swap", "Einsum", x->name, out)};
    snprintf(out, sizeof(out), "%s_kept", x->name);
    gl_attr e = {.name = gl_xstrdup("else_branch"), .type = GL_ATTR_GRAPH,
                 .g = branch(b, nif, "keep", "Identity", x->name, out)};
    gl_node_take_attr(nif, &t);
    gl_node_take_attr(nif, &e);
    return val(nif);
}

/* Y = alpha * MatMul(A', B'), X' = X with its last two dims swapped where transX is 1. */
static gl_value *fused_matmul_body(gl_graph *b)
{
    gl_value *a = param(b, "A"), *bm = param(b, "B");
    gl_value *p = val(add(b, "MatMul", "product", 2, maybe_swapped(b, a, "transA"),
                          maybe_swapped(b, bm, "transB")));
    gl_node *alpha = add(b, "Constant", "alpha", 0);
    ref_attr(alpha, "value_float", GL_ATTR_FLOAT, "alpha");
    gl_value *s = val(alpha);
    if (gl_model_opset(b->model, "") >= 15)
        s = val(add(b, "CastLike", "alpha_like", 2, s, p));
    return val(add(b, "Mul", "Y", 2, p, s));
}

/* A Cast of x to `to`. */
static gl_value *cast(gl_graph *b, const char *out, gl_value *x, gl_dtype to)
{
    gl_node *n = add(b, "Cast", out, 1, x);
    if (n)
        gl_node_set_attr_int(n, "to", to);
    return val(n);
}

/* x flattened to a column [count, 1] (rows) or a row [count] (columns), as int32 or as it
 * is (to = GL_DT_UNDEFINED). */
static gl_value *as_vector(gl_graph *b, const char *name, gl_value *x, bool column, gl_dtype to)
{
    char out[64];
    snprintf(out, sizeof(out), "%s_shape", name);
    gl_node *k = add(b, "Constant", out, 0);
    int64_t dims[1] = {column ? 2 : 1};
    gl_tensor *t = gl_tensor_new(GL_DT_INT64, 1, dims);
    if (!k || !t) {
        gl_tensor_free(t);
        return NULL;
    }
    int64_t *d = gl_tensor_make_writable(t);
    d[0] = -1;
    if (column)
        d[1] = 1;
    take_attr(k, (gl_attr){.name = gl_xstrdup("value"), .type = GL_ATTR_TENSOR, .t = t});
    snprintf(out, sizeof(out), "%s_vector", name);
    gl_value *v = val(add(b, "Reshape", out, 2, x, val(k)));
    snprintf(out, sizeof(out), "%s_i32", name);
    return to == GL_DT_UNDEFINED ? v : cast(b, out, v, to);
}

/* (A' - a_zero) x (B' - b_zero) in int32, A' and B' swapped where transA/transB say. */
static gl_value *int_product(gl_graph *b, gl_value *a, gl_value *a_zero, gl_value *bm,
                             gl_value *b_zero)
{
    gl_value *a32 = maybe_swapped(b, cast(b, "A_i32", a, GL_DT_INT32), "transA");
    gl_value *b32 = maybe_swapped(b, cast(b, "B_i32", bm, GL_DT_INT32), "transB");
    gl_value *da = val(add(b, "Sub", "A_centered", 2, a32,
                           as_vector(b, "a_zero", a_zero, true, GL_DT_INT32)));
    gl_value *db = val(add(b, "Sub", "B_centered", 2, b32,
                           as_vector(b, "b_zero", b_zero, false, GL_DT_INT32)));
    return val(add(b, "MatMul", "acc", 2, da, db));
}

/* Y = MatMulInteger(A', B', a_zero_point, b_zero_point) */
static gl_value *matmul_integer_t_body(gl_graph *b)
{
    gl_value *a = param(b, "A"), *bm = param(b, "B");
    gl_value *az = param(b, "a_zero_point"), *bz = param(b, "b_zero_point");
    gl_value *acc = int_product(b, a, az, bm, bz);
    return val(add(b, "Identity", "Y", 1, acc));
}

/* Y = QuantizeLinear(float(acc) * (a_scale x b_scale), y_scale, y_zero_point) */
static gl_value *qlinear_matmul_t_body(gl_graph *b)
{
    gl_value *a = param(b, "a"), *as = param(b, "a_scale"), *az = param(b, "a_zero_point");
    gl_value *bm = param(b, "b"), *bs = param(b, "b_scale"), *bz = param(b, "b_zero_point");
    gl_value *ys = param(b, "y_scale"), *yz = param(b, "y_zero_point");
    gl_value *acc = int_product(b, a, az, bm, bz);
    gl_value *scale = val(add(b, "Mul", "scale", 2,
                              as_vector(b, "a_scale", as, true, GL_DT_UNDEFINED),
                              as_vector(b, "b_scale", bs, false, GL_DT_UNDEFINED)));
    gl_value *real = val(add(b, "Mul", "real", 2, cast(b, "acc_f32", acc, GL_DT_FLOAT), scale));
    return val(add(b, "QuantizeLinear", "Y", 3, real, ys, yz));
}

/* ---- the table ---------------------------------------------------------------------------- */

static const char *const layernorm_attrs[] = {"axis", "epsilon"};
static const char *const fused_matmul_attrs[] = {"transA", "transB", "alpha"};
static const char *const trans_attrs[] = {"transA", "transB"};

static const struct {
    const char *op;
    int64_t min_opset; /* the ops the body uses exist from this ai.onnx version */
    const char *const *attrs;
    size_t n_attrs;
    gl_value *(*body)(gl_graph *b); /* builds the body; returns Y */
    const char *doc;
} functions[] = {
    {"Gelu", 9, NULL, 0, gelu_body, "Gelu, erf form: X * 0.5 * (1 + Erf(X / sqrt(2)))"},
    {"GeluTanh", 1, NULL, 0, gelu_tanh_body,
     "Gelu, tanh approximation: X * 0.5 * (1 + Tanh(sqrt(2/pi) * (X + 0.044715 * X^3)))"},
    {"Silu", 1, NULL, 0, silu_body, "SiLU (Swish): X * Sigmoid(X)"},
    {"HardSwish", 6, NULL, 0, hardswish_body, "HardSwish: X * HardSigmoid(X, 1/6, 0.5)"},
    {"LayerNormalization", 12, layernorm_attrs, GL_ARRAY_LEN(layernorm_attrs), layernorm_body,
     "LayerNormalization as in ai.onnx opset 17 (one output): over the dims from axis on"},
    {"FusedMatMul", 12, fused_matmul_attrs, GL_ARRAY_LEN(fused_matmul_attrs),
     fused_matmul_body, "alpha * MatMul(A', B'): X' is X with its last two dims swapped "
     "where transX is 1"},
    {"MatMulIntegerT", 12, trans_attrs, GL_ARRAY_LEN(trans_attrs), matmul_integer_t_body,
     "MatMulInteger(A', B', a_zero_point, b_zero_point): X' is X with its last two dims "
     "swapped where transX is 1, and so its zero point when of rank 2 or more"},
    {"QLinearMatMulT", 12, trans_attrs, GL_ARRAY_LEN(trans_attrs), qlinear_matmul_t_body,
     "QLinearMatMul with a' and b' for a and b: X' is X with its last two dims swapped "
     "where transX is 1, and so its scale and zero point when of rank 2 or more"},
};

static int find(const char *op)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(functions); i++)
        if (strcmp(functions[i].op, op) == 0)
            return (int)i;
    return -1;
}

int64_t gl_pt_function_min_opset(const char *op)
{
    int i = find(op);
    return i < 0 ? INT64_MAX : functions[i].min_opset;
}

gl_status gl_pt_ensure_function(gl_model *m, const char *op)
{
    int i = find(op);
    if (i < 0)
        return gl_fail(GL_ERR_INTERNAL, "patterns: no function body for graphlab.%s", op);
    if (gl_model_opset(m, "graphlab") == 0)
        gl_model_set_opset(m, "graphlab", 1);
    if (gl_model_function(m, "graphlab", op))
        return GL_OK;
    int64_t opset = gl_model_opset(m, "");
    gl_function *f = gl_model_add_function(m, "graphlab", op);
    f->doc_string = gl_xstrdup(functions[i].doc);
    f->opsets = gl_xcalloc(1, sizeof(gl_opset));
    f->opsets[0] = (gl_opset){gl_xstrdup(""), opset};
    f->n_opsets = 1;
    f->attributes = gl_xcalloc(functions[i].n_attrs ? functions[i].n_attrs : 1, sizeof(char *));
    for (size_t a = 0; a < functions[i].n_attrs; a++)
        f->attributes[a] = gl_xstrdup(functions[i].attrs[a]);
    f->n_attributes = functions[i].n_attrs;
    gl_value *y = functions[i].body(f->body);
    if (!y)
        return gl_fail(GL_ERR_INTERNAL, "patterns: cannot build the body of graphlab.%s: %s",
                       op, gl_error_message());
    gl_graph_add_output(f->body, y);
    return GL_OK;
}

/* graphlab.c — the ops of domain `graphlab`: what the `patterns` pass turns decomposed
 * subgraphs into when the model's ai.onnx opset has no such op (Gelu before opset 20,
 * LayerNormalization before 17, HardSwish before 14; SiLU in any). Each is also saved
 * into the model as a model-local function with the standard decomposition as its body
 * (passes/patterns_functions.c), so other runtimes run the file; here the kernel is
 * preferred, so shape inference, folding and the reference backend need no body.
 *
 * ONNX's Gelu-20 is the same computation as graphlab's Gelu/GeluTanh, so its entry
 * lives here with them: one kernel. Graphlab's Gelu has two op names instead of ONNX's
 * `approximate` attribute because a FunctionProto's body cannot depend on a string
 * attribute: each name has one body. LayerNormalization and HardSwish take ONNX's
 * definition unchanged and run ONNX's kernels.
 *
 * The activations compute in double and round once, like the other reference kernels:
 * the decomposition in float32 differs from them by a few ulps.
 *
 * FusedMatMul(A, B) is alpha * MatMul(A', B') where X' swaps the last two dims of X when
 * transX is 1: what the `fold-transpose` pass makes of a Transpose feeding a MatMul
 * (ONNX's MatMul has no transA/transB). Its loops are MatMul's (linalg.c).
 */
#include "ops/families.h"
#include "ops/opkit.h"

#include <math.h>
#include <string.h>

#define SQRT1_2 0.70710678118654752440     /* 1 / sqrt(2) */
#define SQRT_2_PI 0.79788456080286535588   /* sqrt(2 / pi) */

/* The graphlab ops exist from version 1 of the domain. */
#define GL_GRAPHLAB_SINCE 1

static gl_status need_float_type(gl_infer_ctx *c, const gl_type *t)
{
    if (t->dtype == GL_DT_UNDEFINED || gl_dtype_is_float(t->dtype))
        return GL_OK;
    return gl_fail(GL_ERR_INPUT, "%s: input X is %s, expected a float type", c->where,
                   gl_dtype_name(t->dtype));
}

static gl_status infer_float_unary(gl_infer_ctx *c)
{
    const gl_type *t = gl_infer_input(c, 0);
    if (!t)
        return GL_OK;
    gl_status st = need_float_type(c, t);
    return st ? st : gl_infer_like_input(c, 0, 0);
}

/* ---- the activations ----------------------------------------------------------------- */

typedef enum act { ACT_GELU_ERF, ACT_GELU_TANH, ACT_SILU } act;

static double act_f64(act a, double x)
{
    switch (a) {
    case ACT_GELU_ERF:
        return 0.5 * x * (1.0 + erf(x * SQRT1_2));
    case ACT_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(SQRT_2_PI * (x + 0.044715 * x * x * x)));
    case ACT_SILU:
        return x / (1.0 + exp(-x));
    }
    return x;
}

static gl_status run_act(gl_kernel_ctx *k, act a)
{
    const gl_tensor *x = gl_need_input(k, 0, "X");
    if (!x)
        return GL_ERR_INPUT;
    if (!gl_dtype_is_float(x->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: input X is %s, expected a float type", k->where,
                       gl_dtype_name(x->dtype));
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (x->count == 0)
        return GL_OK;
    if (x->dtype == GL_DT_FLOAT) {
        const float *in = gl_tensor_data(x);
        float *out = gl_tensor_make_writable(y);
        for (int64_t i = 0; i < x->count; i++)
            out[i] = (float)act_f64(a, in[i]);
    } else {
        gl_tensor_make_writable(y);
        for (int64_t i = 0; i < x->count; i++)
            gl_elem_set_f64(y, i, act_f64(a, gl_elem_f64(x, i)));
    }
    return GL_OK;
}

static gl_status gelu_kernel(gl_kernel_ctx *k) { return run_act(k, ACT_GELU_ERF); }
static gl_status gelu_tanh_kernel(gl_kernel_ctx *k) { return run_act(k, ACT_GELU_TANH); }
static gl_status silu_kernel(gl_kernel_ctx *k) { return run_act(k, ACT_SILU); }

/* ONNX's Gelu-20: the attribute picks the form. */
static gl_status onnx_gelu_kernel(gl_kernel_ctx *k)
{
    const char *approx = gl_node_attr_string(k->node, "approximate", "none");
    if (strcmp(approx, "none") == 0)
        return run_act(k, ACT_GELU_ERF);
    if (strcmp(approx, "tanh") == 0)
        return run_act(k, ACT_GELU_TANH);
    return gl_fail(GL_ERR_INPUT, "%s: attribute approximate is '%s', expected 'none' or "
                   "'tanh'", k->where, approx);
}

/* ---- ONNX's definitions under graphlab's name ---------------------------------------- */

/* The ai.onnx entry whose definition a graphlab op takes over. */
static const gl_op_def *onnx_def(const gl_node *n)
{
    if (strcmp(n->op_type, "LayerNormalization") == 0)
        return gl_op_lookup("", "LayerNormalization", 17);
    return gl_op_lookup("", "HardSwish", 14);
}

static gl_status onnx_infer(gl_infer_ctx *c)
{
    const gl_type *t = gl_infer_input(c, 0);
    gl_status st = t ? need_float_type(c, t) : GL_OK;
    return st ? st : onnx_def(c->node)->infer(c);
}

static gl_status onnx_kernel(gl_kernel_ctx *k) { return onnx_def(k->node)->kernel(k); }

/* ---- FusedMatMul ------------------------------------------------------------------------ */

static bool trans_attr(const gl_node *n, const char *name)
{
    return gl_node_attr_int(n, name, 0) != 0;
}

static gl_status fused_matmul_infer(gl_infer_ctx *c)
{
    return gl_matmul_trans_infer(c, trans_attr(c->node, "transA"), trans_attr(c->node, "transB"));
}

static gl_status fused_matmul_kernel(gl_kernel_ctx *k)
{
    return gl_matmul_trans_kernel(k, trans_attr(k->node, "transA"),
                                  trans_attr(k->node, "transB"),
                                  gl_node_attr_float(k->node, "alpha", 1.0f));
}

static const gl_op_def ops[] = {
    /* One output element per input element: transpose-push moves Transposes through
     * them, the memory plan writes them in place, as the ai.onnx activations. */
    {"", "Gelu", 20, infer_float_unary, onnx_gelu_kernel, GL_OP_ELEMENTWISE},
    {"graphlab", "Gelu", GL_GRAPHLAB_SINCE, infer_float_unary, gelu_kernel, GL_OP_ELEMENTWISE},
    {"graphlab", "GeluTanh", GL_GRAPHLAB_SINCE, infer_float_unary, gelu_tanh_kernel,
     GL_OP_ELEMENTWISE},
    {"graphlab", "Silu", GL_GRAPHLAB_SINCE, infer_float_unary, silu_kernel, GL_OP_ELEMENTWISE},
    {"graphlab", "HardSwish", GL_GRAPHLAB_SINCE, onnx_infer, onnx_kernel, GL_OP_ELEMENTWISE},
    {"graphlab", "LayerNormalization", GL_GRAPHLAB_SINCE, onnx_infer, onnx_kernel, 0},
    {"graphlab", "FusedMatMul", GL_GRAPHLAB_SINCE, fused_matmul_infer, fused_matmul_kernel, 0},
};

const gl_op_family gl_ops_graphlab = {"graphlab", ops, GL_ARRAY_LEN(ops)};

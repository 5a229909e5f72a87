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
 *
 * MatMulIntegerT and QLinearMatMulT are ONNX's MatMulInteger and QLinearMatMul with the
 * same inputs plus transA/transB, for the same reason (fold-transpose makes them of a
 * quantized product whose operand is transposed). An operand whose flag is 1 is read
 * with its last two dims swapped, and so are its scale and zero point when they have
 * rank 2 or more (they are in the operand's stored layout: [..., 1, M] for a per-row A
 * read transposed); of rank 0 or 1 they count the rows of A' / columns of B' as in ONNX.
 * The kernel and shape function are ONNX's, handed the swapped inputs.
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

/* ---- MatMulIntegerT, QLinearMatMulT ------------------------------------------------------ */

static const gl_trans_product trans_products[] = {
    {"MatMulIntegerT", "MatMulInteger", 10, "ABab"},
    {"QLinearMatMulT", "QLinearMatMul", 10, "AaaBbb.."},
};

const gl_trans_product *gl_trans_product_of(const gl_node *n)
{
    bool ours = strcmp(n->domain, "graphlab") == 0;
    if (!ours && n->domain[0])
        return NULL;
    for (size_t i = 0; i < GL_ARRAY_LEN(trans_products); i++)
        if (strcmp(n->op_type, ours ? trans_products[i].op : trans_products[i].onnx) == 0)
            return &trans_products[i];
    return NULL;
}

/* The swap of each input from the node's transA/transB; the ONNX op's entry. */
static const gl_op_def *trans_plan(const gl_node *n, gl_swap *swap, size_t n_inputs)
{
    const gl_trans_product *p = gl_trans_product_of(n);
    bool ta = trans_attr(n, "transA"), tb = trans_attr(n, "transB");
    for (size_t i = 0; i < n_inputs && i < GL_MAX_SWAPPED; i++) {
        char c = i < strlen(p->inputs) ? p->inputs[i] : '.';
        bool on = (c == 'A' || c == 'a') ? ta : (c == 'B' || c == 'b') ? tb : false;
        swap[i] = !on ? GL_SWAP_NO : (c == 'A' || c == 'B') ? GL_SWAP_OPERAND : GL_SWAP_PARAM;
    }
    return gl_op_lookup("", p->onnx, p->onnx_since);
}

static gl_status trans_product_infer(gl_infer_ctx *c)
{
    gl_swap swap[GL_MAX_SWAPPED];
    const gl_op_def *d = trans_plan(c->node, swap, c->n_inputs);
    return gl_infer_swapped(c, d->infer, swap);
}

static gl_status trans_product_kernel(gl_kernel_ctx *k)
{
    gl_swap swap[GL_MAX_SWAPPED];
    const gl_op_def *d = trans_plan(k->node, swap, k->n_inputs);
    return gl_kernel_swapped(k, d->kernel, swap);
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
    {"graphlab", "MatMulIntegerT", GL_GRAPHLAB_SINCE, trans_product_infer, trans_product_kernel,
     0},
    {"graphlab", "QLinearMatMulT", GL_GRAPHLAB_SINCE, trans_product_infer, trans_product_kernel,
     0},
};

const gl_op_family gl_ops_graphlab = {"graphlab", ops, GL_ARRAY_LEN(ops)};

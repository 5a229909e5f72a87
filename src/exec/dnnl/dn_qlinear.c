/* dn_qlinear.c — ONNX's QLinearConv and QLinearMatMul as oneDNN int8 primitives, through
 * the quantized product of dn_qprod.c:
 *   QLinearConv(x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero[, B])
 *   QLinearMatMul(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero)
 * B is int32 in accumulator units (ONNX: its scale x_scale * w_scale, zero point 0), read
 * as it is. The claim asks for what the primitive bakes in: the scales and zero points
 * constants (a run may not change them), the weights a constant int8 tensor (reordered
 * once) with zero points all 0, a per-tensor source and output. Anything else runs the
 * reference kernel, and the plan says why.
 */
#include "exec/dnnl/dn_opkit.h"

#include <stdlib.h>
#include <string.h>

/* The inputs, by index, as both ops number them. */
enum { IN_X, IN_X_SCALE, IN_X_ZERO, IN_W, IN_W_SCALE, IN_W_ZERO, IN_Y_SCALE, IN_Y_ZERO, IN_B };

/* ONNX's names of the inputs: QLinearConv's, QLinearMatMul's. */
static const char *const input_names[2][9] = {
    {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale",
     "y_zero_point", "B"},
    {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale",
     "y_zero_point", ""},
};

static const char *input_name(const gl_node *n, size_t i)
{
    return input_names[gl_node_is(n, "QLinearMatMul")][i];
}

static bool is_constant(const gl_value *v)
{
    return v && v->init && gl_value_is_constant(v);
}

static bool qlinear_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    static const size_t fixed[] = {IN_X_SCALE, IN_X_ZERO, IN_W, IN_W_SCALE, IN_W_ZERO,
                                   IN_Y_SCALE, IN_Y_ZERO, IN_B};
    for (size_t i = 0; i < GL_ARRAY_LEN(fixed); i++) {
        const gl_value *v = fixed[i] < n->n_inputs ? n->inputs[fixed[i]] : NULL;
        if (v && !is_constant(v)) {
            snprintf(why, len, "%s '%s' is not a constant (the int8 primitive bakes it in)",
                     input_name(n, fixed[i]), v->name);
            return false;
        }
    }
    const gl_value *w = n->n_inputs > IN_W ? n->inputs[IN_W] : NULL;
    if (!w || w->init->dtype != GL_DT_INT8) {
        snprintf(why, len, "the weights are not int8 (oneDNN's int8 weights are signed)");
        return false;
    }
    const gl_value *x = n->inputs[IN_X];
    if (x && x->type.kind == GL_TYPE_TENSOR && x->type.dtype != GL_DT_UNDEFINED &&
        x->type.dtype != GL_DT_UINT8 && x->type.dtype != GL_DT_INT8) {
        snprintf(why, len, "the source is not uint8 or int8");
        return false;
    }
    return true;
}

/* The product of node k->node from its constant inputs; false (why) when oneDNN's int8
 * primitive cannot compute it. */
static bool qlinear_product(const gl_kernel_ctx *k, dn_qkind kind, dn_qprod *q, char *why,
                            size_t len)
{
    const gl_tensor *const *in = k->in;
    const gl_tensor *w = in[IN_W];
    float *s = NULL;
    int64_t n = 0;
    q->kind = kind;
    q->head = k->node;
    q->x = IN_X;
    q->w = IN_W;
    q->bias = k->n_inputs > IN_B && in[IN_B] ? IN_B : DN_QNONE;
    if (!w || w->rank < 2) {
        snprintf(why, len, "the weights are not a tensor of rank >= 2");
        return false;
    }
    /* the output channels: Conv W [M, C/g, k...] dim 0; MatMul B [K, N] dim 1 */
    int64_t channels = w->dims[kind == DN_QCONV ? 0 : w->rank - 1];
    bool ok = dn_qscales(in[IN_X_SCALE], 1, &s, &n, input_name(k->node, IN_X_SCALE), why, len);
    q->x_scale = ok ? s[0] : 0.0f;
    free(s);
    s = NULL;
    ok = ok && dn_qscales(in[IN_Y_SCALE], 1, &s, &n, input_name(k->node, IN_Y_SCALE), why, len);
    q->y_scale = ok ? s[0] : 0.0f;
    free(s);
    ok = ok &&
         dn_qscales(in[IN_W_SCALE], channels, &q->w_scale, &q->n_w_scale,
                    input_name(k->node, IN_W_SCALE), why, len) &&
         dn_qzero(in[IN_X_ZERO], &q->x_dtype, &q->x_zero, input_name(k->node, IN_X_ZERO), why,
                  len) &&
         dn_qzero(in[IN_Y_ZERO], &q->y_dtype, &q->y_zero, "y_zero_point", why, len);
    if (ok && !dn_qzeros(in[IN_W_ZERO])) {
        snprintf(why, len, "%s is not all 0 (oneDNN's int8 weights are symmetric)",
                 input_name(k->node, IN_W_ZERO));
        ok = false;
    }
    return ok;
}

static gl_status qlinear_build(dn_build *b, dnnl_primitive_desc_t *pd, dn_qkind kind)
{
    char why[160] = "";
    dn_qprod q;
    memset(&q, 0, sizeof(q));
    gl_status st = qlinear_product(b->k, kind, &q, why, sizeof(why))
                       ? dn_qprod_build(b, &q, pd)
                       : dn_refuse(b, "%s", why);
    if (st == GL_OK && !b->s->fallback)
        dn_set_note(b->c, b->s, "int8");
    dn_qprod_clear(&q);
    return st;
}

static gl_status qlinear_conv_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    return qlinear_build(b, pd, DN_QCONV);
}

static gl_status qlinear_matmul_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    return qlinear_build(b, pd, DN_QMATMUL);
}

static const dn_op qlinear_ops[] = {
    {"", "QLinearConv", 10, qlinear_claim, qlinear_conv_build, NULL},
    {"", "QLinearMatMul", 10, qlinear_claim, qlinear_matmul_build, NULL},
};
const dn_op_table dn_qlinear_ops = {qlinear_ops, GL_ARRAY_LEN(qlinear_ops)};

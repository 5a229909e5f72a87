/* graphlab_layout.c — the channels-last ops of domain graphlab, which the `layout` pass
 * puts in place of ONNX's layout-sensitive ops (passes/layout.c):
 *
 *   NhwcConv(X[N,H,W,C], W[M,C/group,kH,kW], B[M]?) -> Y[N,oH,oW,M]
 *   NhwcMaxPool, NhwcAveragePool(X[N,H,W,C]) -> Y[N,oH,oW,C]
 *   NhwcGlobalAveragePool, NhwcGlobalMaxPool(X[N,H,W,C]) -> Y[N,1,1,C]
 *   NhwcBatchNormalization(X[N,H,W,C], scale, B, input_mean, input_var [C]) -> Y[N,H,W,C]
 *
 * NhwcOp computes what Op computes, in the other layout:
 *   Y = Transpose(Op(Transpose(X, [0,3,1,2])), [0,2,3,1]),
 * with Op's attributes as the model's ai.onnx opset defines them and Op's other inputs
 * as they are: weights stay OIHW, parameters per channel stay [C]. Rank 4 (2-D) only, one
 * output: MaxPool's Indices are offsets in the NCHW layout and BatchNormalization's
 * training outputs belong to training, so neither is offered.
 *
 * The reference kernel and the shape function are that composition over the registry's
 * own entries for Op (and Transpose): the ground truth a backend that runs NHWC natively
 * (oneDNN for NhwcConv) is compared with. The saved model carries the same composition
 * as a model-local function, for other runtimes.
 */
#include "ops/families.h"
#include "ops/opkit.h"

#include <stdlib.h>
#include <string.h>

#define PREFIX "Nhwc"

static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};

/* The ai.onnx op node n stands for, at the model's ai.onnx opset; `inner` becomes a copy
 * of n that names it (same attributes, inputs and outputs: kernels read those). NULL
 * with a message when there is none. */
static const gl_op_def *onnx_op(const gl_node *n, const gl_model *m, const char *where,
                                gl_node *inner, int64_t *opset)
{
    *opset = m ? gl_model_opset(m, "") : 0;
    if (*opset <= 0) {
        gl_fail(GL_ERR_INPUT, "%s: the model imports no ai.onnx opset, which defines what "
                "%s computes", where, n->op_type);
        return NULL;
    }
    const char *op = n->op_type + strlen(PREFIX);
    const gl_op_def *def = gl_op_lookup("", op, *opset);
    if (!def) {
        gl_fail(GL_ERR_INPUT, "%s: ai.onnx opset %lld has no %s", where, (long long)*opset,
                op);
        return NULL;
    }
    *inner = *n;
    inner->op_type = (char *)op; /* not freed: inner is a view */
    inner->domain = (char *)"";
    return def;
}

static gl_status one_output(const gl_node *n, const char *where)
{
    if (n->n_outputs == 1)
        return GL_OK;
    return gl_fail(GL_ERR_INPUT, "%s: %s has one output, the node asks for %zu", where,
                   n->op_type, n->n_outputs);
}

/* ---- shapes ------------------------------------------------------------------------ */

static gl_status nhwc_infer(gl_infer_ctx *c)
{
    gl_node inner;
    int64_t opset;
    const gl_op_def *def = onnx_op(c->node, c->model, c->where, &inner, &opset);
    gl_status st = def ? one_output(c->node, c->where) : GL_ERR_INPUT;
    if (st != GL_OK || !def->infer)
        return st;
    const gl_type *x = gl_infer_input(c, 0);
    if (x && x->shape.rank >= 0 && x->shape.rank != 4)
        return gl_fail(GL_ERR_INPUT, "%s: input X has rank %d, expected 4 (N,H,W,C)", c->where,
                       x->shape.rank);
    gl_type xt = {0};
    const gl_type **types = gl_xcalloc(c->n_inputs ? c->n_inputs : 1, sizeof(*types));
    for (size_t i = 0; i < c->n_inputs; i++)
        types[i] = c->in_types[i];
    if (x) {
        gl_type_copy(&xt, x);
        if (xt.shape.rank == 4)
            for (int d = 0; d < 4; d++)
                gl_dim_copy(&xt.shape.dims[d], &x->shape.dims[to_nchw[d]]);
        types[0] = &xt;
    }
    gl_infer_ctx ic = *c;
    ic.node = &inner;
    ic.opset = opset;
    ic.in_types = types;
    st = def->infer(&ic);
    gl_shape *y = &c->out_types[0].shape;
    if (st == GL_OK && c->out_types[0].kind == GL_TYPE_TENSOR && y->rank == 4) {
        gl_shape nchw;
        gl_shape_init_unknown(&nchw);
        gl_shape_copy(&nchw, y);
        for (int d = 0; d < 4; d++)
            gl_dim_copy(&y->dims[d], &nchw.dims[to_nhwc[d]]);
        gl_shape_free(&nchw);
    }
    gl_type_free(&xt);
    free(types);
    return st;
}

/* ---- kernels ----------------------------------------------------------------------- */

/* Transpose x (rank 4) by perm with the registry's Transpose kernel, as output 0 of k
 * (where k's executor lends its buffers: the node's own output) or, `temp`, into a new
 * tensor *out. */
static gl_status transpose4(const gl_kernel_ctx *k, const gl_tensor *x, const int64_t *perm,
                            bool temp, gl_tensor **out)
{
    const gl_op_def *def = gl_op_lookup("", "Transpose", 1);
    gl_attr a = {.name = (char *)"perm", .type = GL_ATTR_INTS, .ints = (int64_t *)perm,
                 .n = 4};
    gl_node t = *k->node;
    t.op_type = (char *)"Transpose";
    t.domain = (char *)"";
    t.attrs = &a;
    t.n_attrs = 1;
    gl_kernel_ctx tk = *k;
    tk.node = &t;
    tk.n_inputs = 1;
    tk.in = &x;
    tk.n_outputs = 1;
    tk.out = out;
    if (temp)
        tk.alloc = NULL, tk.alloc_over = NULL;
    return def && def->kernel ? def->kernel(&tk)
                              : gl_fail(GL_ERR_INTERNAL, "%s: no Transpose kernel", k->where);
}

static gl_status nhwc_kernel(gl_kernel_ctx *k)
{
    gl_node inner;
    int64_t opset;
    const gl_op_def *def = onnx_op(k->node, k->model, k->where, &inner, &opset);
    gl_status st = def ? one_output(k->node, k->where) : GL_ERR_INPUT;
    if (st != GL_OK)
        return st;
    if (!def->kernel)
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: %s has no reference kernel", k->where,
                       inner.op_type);
    const gl_tensor *x = gl_need_input(k, 0, "X");
    if (!x)
        return GL_ERR_INPUT;
    if (x->rank != 4)
        return gl_fail(GL_ERR_INPUT, "%s: input X has rank %d, expected 4 (N,H,W,C)", k->where,
                       x->rank);
    gl_tensor *xt = NULL, *y = NULL;
    const gl_tensor **in = gl_xcalloc(k->n_inputs, sizeof(*in));
    if ((st = transpose4(k, x, to_nchw, true, &xt)) == GL_OK) {
        for (size_t i = 0; i < k->n_inputs; i++)
            in[i] = i ? k->in[i] : xt;
        gl_kernel_ctx ik = *k;
        ik.node = &inner;
        ik.opset = opset;
        ik.in = in;
        ik.n_outputs = 1;
        ik.out = &y;
        ik.alloc = NULL;
        ik.alloc_over = NULL;
        st = def->kernel(&ik);
    }
    if (st == GL_OK && (!y || y->rank != 4))
        st = gl_fail(GL_ERR_INTERNAL, "%s: %s gave no rank-4 output", k->where, inner.op_type);
    if (st == GL_OK)
        st = transpose4(k, y, to_nhwc, false, &k->out[0]);
    gl_tensor_free(xt);
    gl_tensor_free(y);
    free(in);
    return st;
}

#define LAYOUT GL_OP_LAYOUT_SENSITIVE

static const gl_op_def layout_ops[] = {
    {"graphlab", PREFIX "AveragePool", 1, nhwc_infer, nhwc_kernel, LAYOUT},
    {"graphlab", PREFIX "BatchNormalization", 1, nhwc_infer, nhwc_kernel, LAYOUT},
    {"graphlab", PREFIX "Conv", 1, nhwc_infer, nhwc_kernel, LAYOUT},
    {"graphlab", PREFIX "GlobalAveragePool", 1, nhwc_infer, nhwc_kernel, LAYOUT},
    {"graphlab", PREFIX "GlobalMaxPool", 1, nhwc_infer, nhwc_kernel, LAYOUT},
    {"graphlab", PREFIX "MaxPool", 1, nhwc_infer, nhwc_kernel, LAYOUT},
};

const gl_op_family gl_ops_graphlab_layout = {"graphlab_layout", layout_ops,
                                             GL_ARRAY_LEN(layout_ops)};

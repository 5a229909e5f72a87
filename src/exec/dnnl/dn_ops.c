/* dn_ops.c — the oneDNN op table: every family's rows (one table per dn_*.c file),
 * gathered so that a node's op finds its row. The backend (backend_dnnl.c) claims nodes
 * by it and the fused units (dn_fused.c, dn_catconv.c) build their heads by it; it lives
 * here, below both, so that nothing in dnnl/ calls back up into the backend. A new family
 * is one line in op_tables. */
#include "exec/dnnl/dn.h"

#include <string.h>

static const dn_op_table *const op_tables[] = {
    &dn_conv_ops, &dn_matmul_ops, &dn_eltwise_ops, &dn_binary_ops, &dn_pool_ops, &dn_norm_ops,
    &dn_reduce_ops, &dn_nary_ops, &dn_prelu_ops, &dn_deconv_ops, &dn_movement_ops, &dn_resize_ops,
    &dn_qlinear_ops,
    &dn_quant_ops,
    &dn_rnn_ops,
};

/* The row for `op` of `domain` ("" and "ai.onnx" alike) with the largest since <= opset,
 * or NULL. */
const dn_op *dn_op_find(const char *domain, const char *op, int64_t opset)
{
    domain = gl_domain_canonical(domain);
    const dn_op *best = NULL;
    for (size_t t = 0; t < GL_ARRAY_LEN(op_tables); t++)
        for (size_t i = 0; i < op_tables[t]->n; i++) {
            const dn_op *row = &op_tables[t]->ops[i];
            bool same_domain = strcmp(gl_domain_canonical(row->domain), domain) == 0;
            if (same_domain && strcmp(row->op, op) == 0 && row->since <= opset &&
                (!best || row->since > best->since))
                best = row;
        }
    return best;
}

bool dn_op_all_outputs_optional(const dn_op *row)
{
    for (size_t i = 0; i < dn_rnn_ops.n; i++)
        if (row == &dn_rnn_ops.ops[i])
            return true;
    return false;
}

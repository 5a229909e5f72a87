/* dn_movement.c — Transpose as a oneDNN reorder.
 *
 * The output's element (i0, i1, ...) is the input's element at the permuted index, so
 * the input's bytes described with the output's dims and the input's strides permuted
 * (dnnl_memory_desc_permute_axes, which takes the inverse of ONNX's perm) are the
 * output read in place; a reorder from that description to plain is the transpose. The
 * input may be in any of our layouts (the description permutes its blocking too); the
 * output is plain. Small plain tensors stay on the reference kernel.
 */
#include "exec/dnnl/dn_opkit.h"

#include <string.h>

static gl_status transpose_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = dn_f32_input(k, 0);
    if (!x || x->rank < 1 || x->count == 0)
        return dn_refuse(b, "not a non-empty float32 tensor");
    int rank = x->rank, inv[DNNL_MAX_NDIMS];
    size_t n_perm;
    const int64_t *perm = gl_attr_ints(k->node, "perm", &n_perm);
    if (perm && n_perm != (size_t)rank)
        return dn_refuse(b, "perm has %zu values for rank %d", n_perm, rank);
    bool seen[DNNL_MAX_NDIMS] = {false};
    int64_t out[DNNL_MAX_NDIMS];
    for (int j = 0; j < rank; j++) {
        int64_t p = perm ? perm[j] : rank - 1 - j;
        if (p < 0 || p >= rank || seen[p])
            return dn_refuse(b, "perm is not a permutation");
        seen[p] = true;
        inv[p] = j;
        out[j] = x->dims[p];
    }
    if (!x->layout && x->count < DN_OPS_SMALL)
        return dn_refuse(b, "%lld elements: below the oneDNN threshold (%d)",
                         (long long)x->count, DN_OPS_SMALL);
    dnnl_memory_desc_t src, dst;
    dnnl_status_t r = dnnl_memory_desc_permute_axes(&src, &b->md[0], inv);
    if (r == dnnl_success)
        r = dn_md_plain(&dst, rank, out, NULL);
    if (r == dnnl_success)
        r = dnnl_reorder_primitive_desc_create(pd, &src, b->c->engine, &dst, b->c->engine, NULL);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no reorder for this (%s)", dnnl_status2str(r));
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "a reorder between these layouts");
    dn_bind_input_from(b, DNNL_ARG_FROM, 0, &src, NULL);
    dn_bind_output(b, DNNL_ARG_TO, 0, &dst, rank, out);
    return GL_OK;
}

static bool transpose_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 1, DNNL_MAX_NDIMS)) {
        snprintf(why, len, "input is not float32 of rank 1 to %d", DNNL_MAX_NDIMS);
        return false;
    }
    return true;
}

static const dn_op movement_ops[] = {
    {"", "Transpose", 1, transpose_claim, transpose_build, NULL},
};
const dn_op_table dn_movement_ops = {movement_ops, GL_ARRAY_LEN(movement_ops)};

/* dn_view.c — data movement without copies: a tensor's bytes under another memory
 * descriptor. The rule (the movement ops of dn_movement.c follow it):
 *
 *  - A Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice, Split or Gather (one index)
 *    whose output is the input's bytes described with other dims, strides and offset is
 *    a view: the node's output shares the input's buffer and carries that description;
 *    the plan shows `view`. On plain or nhwc-like (strided, unblocked) descriptions every
 *    Transpose, Split, Gather of one index and Slice with positive steps is one, and a
 *    Reshape when the dims it merges are contiguous in memory in their logical order
 *    (nhwc [N,C,H,W] to [N,2,C/2,H,W] splits C: a view; [N,C*H*W] merges C with H:
 *    not). On blocked layouts (nChw16c) only a Reshape that adds or drops dims of 1, or
 *    a description that is itself the plan's activation layout, is one.
 *  - A view that is the plan's activation layout (or plain) is an ordinary tensor. Any
 *    other (strided, offset, an unusual order) is marked a view: a primitive reads it
 *    through ONE reorder into its dense form (dn_view_dense), done by the node that
 *    reads it; ops that read views as they are (the movement ops, Concat) take it
 *    directly, and anything else converts it to plain once per value as usual.
 *  - So an op keeps a marked view only when at most one consumer must make it dense
 *    (else it is made dense once, here), and when it cannot be a view it reorders its
 *    input once into the plan's activation layout for its output (plain when nothing
 *    of this backend reads it): ShuffleNet's channel shuffle (Reshape, Transpose,
 *    Reshape) is two views and one strided reorder nhwc to nhwc, its channel Slices
 *    are views of that, and the Conv after one reorders its half to dense nhwc. (Fused
 *    by the channel-shuffle rule, the whole block is dn_shuffle.c's reorders instead,
 *    each reading its input as it is, views too, and writing dense outputs.)
 *  - uint8 and int8 tensors (the int8 products' outputs, dn_qprod.c) are viewed alike,
 *    their dtype kept; their activation layout is channels-last (nwc, nhwc, ndhwc)
 *    whatever the float policy, as the int8 convolutions write them.
 */
#include "exec/dnnl/dn_opkit.h"

#include <string.h>

static bool has_blocks(const dnnl_memory_desc_t *md)
{
    return md->format_kind != dnnl_blocked || md->format_desc.blocking.inner_nblks != 0;
}

/* The activation layout of a rank for elements of type dt: the plan's for float32,
 * channels-last for int8 (dn_qprod.c); undef: plain. */
static dnnl_format_tag_t act_tag_of(const dn_ctx *c, int rank, dnnl_data_type_t dt)
{
    static const dnnl_format_tag_t channels_last[] = {dnnl_nwc, dnnl_nhwc, dnnl_ndhwc};
    if (dt != dnnl_u8 && dt != dnnl_s8)
        return dn_act_tag(c, rank);
    return rank >= 3 && rank <= 5 ? channels_last[rank - 3] : dnnl_format_tag_undef;
}

/* A dense descriptor of dims in layout tag (undef: plain) with elements of type dt. */
static dnnl_status_t dense_md(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                              dnnl_format_tag_t tag, dnnl_data_type_t dt)
{
    dnnl_status_t r = tag == dnnl_format_tag_undef ? dn_md_plain(md, rank, dims, NULL)
                                                   : dn_md_tag(md, rank, dims, tag);
    return r == dnnl_success ? dn_md_retype(md, dn_gl_dtype(dt)) : r;
}

/* md is what a primitive of this plan reads without question: plain row-major, or the
 * activation layout for its rank, dense and at offset 0. */
static bool ordinary(const dn_ctx *c, const dnnl_memory_desc_t *md)
{
    if (dn_md_is_plain(md))
        return true;
    dnnl_format_tag_t tag = act_tag_of(c, md->ndims, md->data_type);
    dnnl_memory_desc_t act;
    return tag != dnnl_format_tag_undef && md->offset0 == 0 &&
           dense_md(&act, md->ndims, md->dims, tag, md->data_type) == dnnl_success &&
           dnnl_memory_desc_equal(&act, md);
}

const gl_tensor_layout *dn_view_layout(dn_ctx *c, const dnnl_memory_desc_t *md)
{
    const gl_tensor_layout *base = dn_layout_of(c, md);
    dn_layout *l = (dn_layout *)base;
    if (l && !l->view && !ordinary(c, md)) {
        l->view = true;
        size_t n = strlen(l->name);
        if (n + 5 < sizeof(l->name))
            memcpy(l->name + n, ":view", 6);
    }
    return base;
}

dnnl_status_t dn_view_dense(const dn_ctx *c, const dnnl_memory_desc_t *md,
                            dnnl_memory_desc_t *dense)
{
    return dense_md(dense, md->ndims, md->dims, act_tag_of(c, md->ndims, md->data_type),
                    md->data_type);
}

bool dn_view_reader(const gl_node *n)
{
    static const char *const readers[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                          "Transpose", "Slice",  "Split",  "Gather",
                                          "Concat"};
    if (*n->domain)
        return false;
    for (size_t i = 0; i < GL_ARRAY_LEN(readers); i++)
        if (strcmp(n->op_type, readers[i]) == 0)
            return true;
    return false;
}

/* Blocked descriptions: only dims of 1 come and go (oneDNN's own reshape then). */
static dnnl_status_t reshape_blocked(const dnnl_memory_desc_t *md, int rank,
                                     const int64_t *dims, dnnl_memory_desc_t *out)
{
    int i = 0, j = 0;
    for (;;) {
        while (i < md->ndims && md->dims[i] == 1)
            i++;
        while (j < rank && dims[j] == 1)
            j++;
        if (i == md->ndims || j == rank)
            break;
        if (md->dims[i++] != dims[j++])
            return dnnl_unimplemented;
    }
    if (i != md->ndims || j != rank)
        return dnnl_unimplemented;
    dnnl_dims_t d;
    for (int k = 0; k < rank; k++)
        d[k] = dims[k];
    return dnnl_memory_desc_reshape(out, md, rank, d);
}

dnnl_status_t dn_md_reshape(const dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                            dnnl_memory_desc_t *out)
{
    if (rank < 1 || rank > DNNL_MAX_NDIMS || md->format_kind != dnnl_blocked)
        return dnnl_unimplemented;
    if (has_blocks(md))
        return reshape_blocked(md, rank, dims, out);
    /* Dims of 1 carry no stride: walk the others in groups of equal products; the old
     * dims of a group must be contiguous in their order, the new ones then split the
     * group's innermost stride. */
    const int64_t *strides = md->format_desc.blocking.strides;
    int64_t od[DNNL_MAX_NDIMS], os[DNNL_MAX_NDIMS], ns[DNNL_MAX_NDIMS];
    int on = 0;
    for (int i = 0; i < md->ndims; i++) {
        if (md->padded_dims[i] != md->dims[i] || md->dims[i] == 0)
            return dnnl_unimplemented;
        if (md->dims[i] != 1) {
            od[on] = md->dims[i];
            os[on++] = strides[i];
        }
    }
    int i = 0, j = 0;
    while (j < rank) {
        if (dims[j] == 1) {
            j++;
            continue;
        }
        if (i == on)
            return dnnl_unimplemented;
        int i0 = i, j0 = j;
        int64_t po = od[i++], pn = dims[j++];
        while (po != pn) {
            if (po < pn && i < on)
                po *= od[i++];
            else if (pn < po && j < rank)
                pn *= dims[j++];
            else
                return dnnl_unimplemented;
        }
        for (int k = i0; k + 1 < i; k++)
            if (os[k] != os[k + 1] * od[k + 1])
                return dnnl_unimplemented;
        int64_t s = os[i - 1];
        for (int k = j - 1; k >= j0; k--) {
            ns[k] = s;
            s *= dims[k];
        }
    }
    if (i != on)
        return dnnl_unimplemented;
    for (int k = rank - 1; k >= 0; k--) /* dims of 1: any stride; their neighbour's */
        if (dims[k] == 1)
            ns[k] = k + 1 < rank ? ns[k + 1] * dims[k + 1] : 1;
    dnnl_dims_t d, st;
    for (int k = 0; k < rank; k++) {
        d[k] = dims[k];
        st[k] = ns[k];
    }
    dnnl_status_t r = dnnl_memory_desc_init_by_strides(out, rank, d, md->data_type, st);
    if (r == dnnl_success)
        out->offset0 = md->offset0;
    return r;
}

/* Consumers of the node's output 0 that would make a marked view dense on their own. */
static size_t dense_readers(const gl_kernel_ctx *k)
{
    const gl_value *v = k->node->n_outputs ? k->node->outputs[0] : NULL;
    if (!v)
        return 0;
    size_t n = v->n_output_refs > 0;
    for (size_t i = 0; i < v->n_uses; i++) {
        const gl_node *c = v->uses[i].node;
        n += !c || v->uses[i].slot < 0 || !dn_view_reader(c);
    }
    return n;
}

/* dn_view_bind, and dn_view_bind_plain when `plain`. */
static gl_status view_bind(dn_build *b, const dnnl_memory_desc_t *view, int rank,
                           const int64_t *dims, bool plain, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = k->in[0];
    if (view && (ordinary(b->c, view) ||
                 (!plain && !has_blocks(view) && dense_readers(k) <= 1))) {
        dn_bind_view(b, 0, 0, view, rank, dims);
        return GL_OK;
    }
    if (!x->layout && x->count < DN_OPS_SMALL)
        return dn_refuse(b, "%lld elements: below the oneDNN threshold (%d)",
                         (long long)x->count, DN_OPS_SMALL);
    /* One reorder into the layout the output's readers want. */
    dnnl_data_type_t dt = b->held[0].data_type;
    dnnl_format_tag_t tag = !plain && dn_read_by_backend(k) ? act_tag_of(b->c, rank, dt)
                                                            : dnnl_format_tag_undef;
    dnnl_memory_desc_t out, src, dst;
    dnnl_status_t r = dense_md(&out, rank, dims, tag, dt);
    if (r == dnnl_success && view) {
        src = *view;
        dst = out;
    } else if (r == dnnl_success) { /* a Reshape: the same row-major order, in x's dims */
        src = b->held[0];
        if (dn_md_reshape(&out, x->rank, x->dims, &dst) != dnnl_success) {
            r = dense_md(&out, rank, dims, dnnl_format_tag_undef, dt);
            if (r == dnnl_success)
                r = dense_md(&dst, x->rank, x->dims, dnnl_format_tag_undef, dt);
        }
    }
    if (r == dnnl_success)
        r = dnnl_reorder_primitive_desc_create(pd, &src, b->c->engine, &dst, b->c->engine, NULL);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no reorder for this (%s)", dnnl_status2str(r));
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "a reorder between these layouts");
    dn_bind_input_from(b, DNNL_ARG_FROM, 0, &src, NULL);
    dn_bind_output(b, DNNL_ARG_TO, 0, &dst, rank, dims);
    b->s->out[b->s->n_out - 1].layout = dn_layout_of(b->c, &out);
    return GL_OK;
}

gl_status dn_view_bind(dn_build *b, const dnnl_memory_desc_t *view, int rank,
                       const int64_t *dims, dnnl_primitive_desc_t *pd)
{
    return view_bind(b, view, rank, dims, false, pd);
}

gl_status dn_view_bind_plain(dn_build *b, const dnnl_memory_desc_t *view, int rank,
                             const int64_t *dims, dnnl_primitive_desc_t *pd)
{
    return view_bind(b, view, rank, dims, true, pd);
}

/* dn_norm.c — BatchNormalization, InstanceNormalization, LayerNormalization and LRN as
 * oneDNN normalization primitives (forward_inference).
 *
 *   BatchNormalization  batch normalization with use_global_stats | use_scale |
 *       use_shift: scale, B, mean and var are read where they are (oneDNN 2.6 takes them
 *       as four [C] arguments, so nothing is packed), X in its layout. 3-D X (and rank
 *       above 5) is read as a plain 4-D view [N, C, rest, 1]: for 3-D, oneDNN 2.6 has only
 *       its reference code, for the 4-D view the vectorized ncsp kernel. Training mode,
 *       the running-statistics outputs and opset-7 spatial=0 stay on the reference kernel.
 *       As the head of a fused group (the fusion pass's batchnorm-relu: DenseNet's
 *       pre-activation BatchNormalization -> Relu) its Relu or LeakyRelu is a relu
 *       post-op of the same primitive (dn_fused.c passes it through dn_build.tail).
 *   InstanceNormalization  batch normalization computing its own statistics: over
 *       [N, C, spatial] with N = 1 that is instance normalization as it stands (X in its
 *       layout); otherwise X is viewed as [1, N*C, spatial, 1] with scale and B repeated
 *       N times into buffers of our own (once when they are constants, else every run).
 *   LayerNormalization (and graphlab's, the same op before opset 17)  layer
 *       normalization over the last dim of the plain 2-D view
 *       [prod(dims before axis), prod(dims from axis)], Scale and B as [cols] when they
 *       have X's normalized shape. Mean and InvStdDev outputs stay on the reference kernel
 *       (oneDNN's inference mode does not produce them).
 *   LRN  lrn_across_channels: y = x / (bias + alpha/size * sum of squares)^beta over
 *       channels [c - (size-1)/2, c + (size-1)/2]: ONNX's window for odd sizes (for even
 *       ones ONNX takes one channel more above c; those stay on the reference kernel). X
 *       in its layout, else nhwc: oneDNN 2.6 vectorizes LRN (beta 0.75 only) on nhwc for
 *       every size, on nchw only for size 5, on nChw16c not at all.
 */
#include "exec/dnnl/dn_opkit.h"

#include <stdlib.h>
#include <string.h>

/* X as a plain 4-D view [N, C, prod(dims 2..), 1]. */
static dnnl_status_t nc_view(const gl_tensor *x, int64_t n, int64_t c, dnnl_memory_desc_t *md)
{
    int64_t d[4] = {n, c, gl_dims_product(x->dims, 2, x->rank), 1};
    return dn_md_plain(md, 4, d, NULL);
}

/* Bind inputs first.. as [count] vectors for args[]. */
static bool bind_vectors(dn_build *b, size_t first, const int *args, size_t n, int64_t count)
{
    dnnl_memory_desc_t md;
    if (dn_md_plain(&md, 1, &count, NULL) != dnnl_success)
        return false;
    for (size_t i = 0; i < n; i++)
        dn_bind_input_view(b, args[i], first + i, &md);
    return true;
}

/* Inputs first..first+n-1 present, float32, `count` elements each. */
static bool vectors_fit(const gl_kernel_ctx *k, size_t first, size_t n, int64_t count)
{
    for (size_t i = first; i < first + n; i++) {
        const gl_tensor *t = dn_f32_input(k, i);
        if (!t || t->count != count)
            return false;
    }
    return true;
}

/* The source as the primitive reads it: way 0 as stored, way 1 as a plain view (*view). */
typedef struct norm_src {
    const gl_tensor *x;
    dnnl_memory_desc_t view;
    bool has_view;
    float eps;
    unsigned flags;
    dnnl_primitive_attr_t attr; /* a fused unit's relu post-op (NULL: none); owned */
} norm_src;

static dnnl_status_t bnorm_way(dn_build *b, void *arg, int way, dnnl_primitive_desc_t *pd)
{
    norm_src *ns = arg;
    if (way == 0 && (ns->x->rank == 3 || ns->x->rank > 5))
        return dnnl_unimplemented; /* 3-D: reference code only; beyond 5: not at all */
    if (way == 1 && !ns->has_view)
        return dnnl_unimplemented;
    dnnl_batch_normalization_desc_t d;
    dnnl_status_t r = dnnl_batch_normalization_forward_desc_init(
        &d, dnnl_forward_inference, way == 0 ? &b->md[0] : &ns->view, ns->eps, ns->flags);
    return r == dnnl_success ? dnnl_primitive_desc_create(pd, &d, ns->attr, b->c->engine, NULL)
                             : r;
}

/* Bind X and Y for the way kept. */
static void bind_src_dst(dn_build *b, int way, const norm_src *ns, const_dnnl_primitive_desc_t pd)
{
    if (way == 0) {
        dn_bind_input(b, DNNL_ARG_SRC, 0, NULL);
        dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(pd, dnnl_query_dst_md, 0), ns->x->rank,
                       ns->x->dims);
    } else {
        dn_bind_input_view(b, DNNL_ARG_SRC, 0, &ns->view);
        dn_bind_output(b, DNNL_ARG_DST, 0, &ns->view, ns->x->rank, ns->x->dims);
    }
}

/* Bind the way kept (-1: none) or refuse; graphlab's kernel takes the node where it can
 * (dn_bnorm.c). */
static gl_status batchnorm_bind(dn_build *b, const norm_src *ns, int way,
                                dnnl_primitive_desc_t *pd)
{
    int64_t c = ns->x->dims[1];
    if (way < 0 && b->tail)
        return dn_refuse(b, "oneDNN 2.6's batch normalization takes one post-op, a relu "
                         "(Relu or LeakyRelu), and no other");
    if (way < 0)
        return dn_refuse(b, "oneDNN has no batch normalization for this shape");
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "batch normalization in this layout");
    bind_src_dst(b, way, ns, *pd);
    static const int args[] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE};
    if (!bind_vectors(b, 1, args, 4, c))
        return dn_refuse(b, "shapes oneDNN does not describe");
    dn_bnorm_take(b, *pd, ns->attr, ns->eps);
    return GL_OK;
}

static gl_status batchnorm_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = dn_f32_input(k, 0);
    if (!x || x->rank < 2 || x->count == 0)
        return dn_refuse(b, "X is not a non-empty float32 tensor of rank >= 2");
    int64_t c = x->dims[1];
    if (k->n_inputs < 5 || !vectors_fit(k, 1, 4, c))
        return dn_refuse(b, "scale, B, mean and var are not float32 vectors of %lld",
                         (long long)c);
    norm_src ns = {.x = x, .eps = gl_node_attr_float(k->node, "epsilon", 1e-5f),
                   .flags = dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift};
    ns.has_view = nc_view(x, x->dims[0], c, &ns.view) == dnnl_success;
    /* Heading a fused unit (BatchNormalization + Relu/LeakyRelu): its member is a post-op.
     * oneDNN 2.6 takes exactly one, a relu (the inference form of fuse_norm_relu, with
     * LeakyRelu's slope too; measured: a second post-op, or any other algorithm, is
     * dnnl_unimplemented in every layout). */
    if (dn_build_attr(b, NULL, 0, x->rank, x->dims, &ns.attr) != dnnl_success)
        return dn_refuse(b, "the group's members make no post-ops for this output");
    int way = dn_pd_pick(b, &ns, 2, bnorm_way, pd);
    gl_status st = batchnorm_bind(b, &ns, way, pd);
    dnnl_primitive_attr_destroy(ns.attr);
    return st;
}

static bool batchnorm_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    int64_t opset = gl_model_opset(m, "");
    if (!dn_inputs_fit(n, 1, DNNL_MAX_NDIMS, why, len))
        return false;
    if (opset >= 14 && gl_node_attr_int(n, "training_mode", 0) != 0) {
        snprintf(why, len, "training_mode=1 normalizes with the batch's own statistics");
        return false;
    }
    for (size_t i = 1; i < n->n_outputs; i++)
        if (n->outputs[i]) {
            snprintf(why, len, "output %zu (running statistics) is asked for", i);
            return false;
        }
    if (opset < 9 && gl_node_attr_int(n, "spatial", 1) == 0) {
        snprintf(why, len, "spatial=0 (one parameter per position)");
        return false;
    }
    return true;
}

/* ---- InstanceNormalization ---------------------------------------------------------- */

typedef struct inorm_extra {
    int64_t batch, c;
    bool per_run; /* scale/B are not constants: repeat them before every run */
} inorm_extra;

static void repeat_into(float *dst, const gl_tensor *t, int64_t times)
{
    const float *src = gl_tensor_data(t);
    for (int64_t i = 0; i < times; i++)
        memcpy(dst + i * t->count, src, (size_t)t->count * sizeof(float));
}

static gl_status inorm_prepare(const gl_kernel_ctx *k, dn_node *s)
{
    const inorm_extra *x = s->extra;
    if (x && x->per_run)
        for (size_t i = 0; i < 2; i++)
            repeat_into(s->own[i].buf, k->in[1 + i], x->batch);
    return GL_OK;
}

static gl_status instancenorm_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = dn_f32_input(k, 0);
    if (!x || x->rank < 3 || x->count == 0)
        return dn_refuse(b, "input is not a non-empty float32 tensor of rank >= 3");
    int64_t n = x->dims[0], c = x->dims[1];
    if (k->n_inputs < 3 || !vectors_fit(k, 1, 2, c))
        return dn_refuse(b, "scale and B are not float32 vectors of %lld", (long long)c);
    /* N = 1 in its layout; otherwise every (n, c) plane is a channel of the view. */
    norm_src ns = {.x = x, .eps = gl_node_attr_float(k->node, "epsilon", 1e-5f),
                   .flags = dnnl_use_scale | dnnl_use_shift};
    ns.has_view = nc_view(x, 1, n * c, &ns.view) == dnnl_success;
    int way = n == 1 ? dn_pd_pick(b, &ns, 2, bnorm_way, pd)
              : bnorm_way(b, &ns, 1, pd) == dnnl_success ? 1 : -1;
    if (way < 0)
        return dn_refuse(b, "oneDNN has no batch normalization for this shape");
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "instance normalization in this layout");
    bind_src_dst(b, way, &ns, *pd);
    if (way == 0) {
        static const int args[] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT};
        if (!bind_vectors(b, 1, args, 2, c))
            return dn_refuse(b, "shapes oneDNN does not describe");
        return GL_OK;
    }
    dnnl_memory_desc_t vmd;
    int64_t nc = n * c;
    if (dn_md_plain(&vmd, 1, &nc, NULL) != dnnl_success)
        return dn_refuse(b, "shapes oneDNN does not describe");
    inorm_extra *ex = gl_xcalloc(1, sizeof(*ex));
    b->s->extra = ex;
    b->s->extra_free = free;
    ex->batch = n;
    ex->c = c;
    ex->per_run = !dn_input_constant(k, 1) || !dn_input_constant(k, 2);
    float *scale = dn_bind_own(b, DNNL_ARG_SCALE, &vmd);
    float *shift = dn_bind_own(b, DNNL_ARG_SHIFT, &vmd);
    if (!ex->per_run) {
        repeat_into(scale, k->in[1], n);
        repeat_into(shift, k->in[2], n);
    }
    return GL_OK;
}

static bool instancenorm_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    return dn_inputs_fit(n, 1, DNNL_MAX_NDIMS, why, len);
}

/* ---- LayerNormalization ------------------------------------------------------------- */

/* t (Scale or B) has X's normalized shape dims[axis..], leading 1s aside: the same
 * elements in the same order, so it is read as [cols]. */
static bool normalized_shape(const gl_tensor *t, const gl_tensor *x, int axis)
{
    int ts = 0, xs = axis;
    while (ts < t->rank && t->dims[ts] == 1)
        ts++;
    while (xs < x->rank && x->dims[xs] == 1)
        xs++;
    return t->rank <= x->rank && t->rank - ts == x->rank - xs &&
           memcmp(t->dims + ts, x->dims + xs, (size_t)(t->rank - ts) * sizeof(int64_t)) == 0;
}

static gl_status layernorm_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = dn_f32_input(k, 0), *scale = dn_f32_input(k, 1);
    const gl_tensor *bias = k->n_inputs > 2 ? k->in[2] : NULL;
    if (!x || !scale || (bias && bias->dtype != GL_DT_FLOAT) || x->rank < 1 || x->count == 0)
        return dn_refuse(b, "X, Scale and B are not non-empty float32 tensors");
    int axis;
    if (!gl_axis_normalize(gl_node_attr_int(k->node, "axis", -1), x->rank, false, k->where,
                           "axis", &axis)) {
        gl_error_clear();
        return dn_refuse(b, "axis out of range");
    }
    if (!normalized_shape(scale, x, axis) || (bias && !normalized_shape(bias, x, axis)))
        return dn_refuse(b, "Scale or B is not shaped as X's dims from axis %d", axis);
    int64_t d2[2] = {gl_dims_product(x->dims, 0, axis), gl_dims_product(x->dims, axis, x->rank)};
    dnnl_memory_desc_t view;
    dnnl_layer_normalization_desc_t d;
    float eps = gl_node_attr_float(k->node, "epsilon", 1e-5f);
    unsigned flags = dnnl_use_scale | (bias ? dnnl_use_shift : 0u);
    dnnl_status_t r = dn_md_plain(&view, 2, d2, NULL);
    if (r == dnnl_success)
        r = dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference, &view, NULL,
                                                       eps, flags);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &d, NULL, b->c->engine, NULL);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no layer normalization for this (%s)",
                         dnnl_status2str(r));
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "layer normalization of this shape");
    dn_bind_input_view(b, DNNL_ARG_SRC, 0, &view);
    dn_bind_output(b, DNNL_ARG_DST, 0, &view, x->rank, x->dims);
    static const int args[] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT};
    if (!bind_vectors(b, 1, args, bias ? 2 : 1, d2[1]))
        return dn_refuse(b, "shapes oneDNN does not describe");
    return GL_OK;
}

static bool layernorm_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_inputs_fit(n, 1, GL_MAX_RANK, why, len))
        return false;
    for (size_t i = 1; i < n->n_outputs; i++)
        if (n->outputs[i]) {
            snprintf(why, len, "output %zu (%s) is asked for", i, i == 1 ? "Mean" : "InvStdDev");
            return false;
        }
    return true;
}

/* ---- LRN ---------------------------------------------------------------------------- */

typedef struct lrn_arg {
    const gl_tensor *x;
    int64_t size;
    float alpha, beta, bias;
    dnnl_memory_desc_t nhwc;
} lrn_arg;

static dnnl_status_t lrn_way(dn_build *b, void *arg, int way, dnnl_primitive_desc_t *pd)
{
    static const dnnl_format_tag_t channels_last[] = {dnnl_nwc, dnnl_nhwc, dnnl_ndhwc};
    lrn_arg *a = arg;
    int rank = a->x->rank;
    if (way == 1 && (rank < 3 || rank > 5 ||
                     dn_md_tag(&a->nhwc, rank, a->x->dims, channels_last[rank - 3]) != dnnl_success))
        return dnnl_unimplemented;
    dnnl_lrn_desc_t d;
    dnnl_status_t r = dnnl_lrn_forward_desc_init(&d, dnnl_forward_inference,
                                                 dnnl_lrn_across_channels,
                                                 way == 0 ? &b->md[0] : &a->nhwc, a->size,
                                                 a->alpha, a->beta, a->bias);
    return r == dnnl_success ? dnnl_primitive_desc_create(pd, &d, NULL, b->c->engine, NULL) : r;
}

static gl_status lrn_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = dn_f32_input(k, 0);
    if (!x || x->rank < 2 || x->rank > 5 || x->count == 0)
        return dn_refuse(b, "X is not a non-empty float32 tensor of rank 2 to 5");
    lrn_arg a = {.x = x, .size = gl_node_attr_int(k->node, "size", 0),
                 .alpha = gl_node_attr_float(k->node, "alpha", 1e-4f),
                 .beta = gl_node_attr_float(k->node, "beta", 0.75f),
                 .bias = gl_node_attr_float(k->node, "bias", 1.0f)};
    if (a.size < 1)
        return dn_refuse(b, "size %lld", (long long)a.size);
    int way = dn_pd_pick(b, &a, 2, lrn_way, pd);
    if (way < 0)
        return dn_refuse(b, "oneDNN has no LRN for this shape");
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "LRN of this shape or beta (its kernels take beta 0.75)");
    dn_bind_input(b, DNNL_ARG_SRC, 0, way == 0 ? NULL : &a.nhwc);
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), x->rank, x->dims);
    return GL_OK;
}

static bool lrn_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 2, 5)) {
        snprintf(why, len, "X is not float32 of rank 2 to 5");
        return false;
    }
    if (gl_node_attr_int(n, "size", 1) % 2 == 0) {
        snprintf(why, len, "even size: oneDNN sums a centred window of size-1 channels");
        return false;
    }
    return true;
}

static const dn_op norm_ops[] = {
    {"", "BatchNormalization", 1, batchnorm_claim, batchnorm_build, NULL},
    {"", "InstanceNormalization", 1, instancenorm_claim, instancenorm_build, inorm_prepare},
    {"", "LayerNormalization", 17, layernorm_claim, layernorm_build, NULL},
    /* the patterns pass's op before opset 17: ONNX's definition under graphlab's name */
    {"graphlab", "LayerNormalization", 1, layernorm_claim, layernorm_build, NULL},
    {"", "LRN", 1, lrn_claim, lrn_build, NULL},
};
const dn_op_table dn_norm_ops = {norm_ops, GL_ARRAY_LEN(norm_ops)};

/* dn_deconv.c — ConvTranspose as oneDNN deconvolution.
 *
 * Layouts as for Conv (dn_conv.c): the source left to oneDNN, the destination in the
 * plan's activation layout, weights packed once into the layout oneDNN picks; a
 * deconvolution oneDNN would run on its reference code goes to our reference kernel.
 *
 * Weights: ONNX's W is [C, M/group, k...] — per group, input channels outermost — and
 * oneDNN's deconvolution weights are [G, OC/G, IC/G, k...]: the same bytes described
 * with the output- and input-channel strides swapped, so the reorder that packs them
 * also transposes them.
 *
 * Geometry: ONNX gives the output length as stride·(in-1) + output_padding + span −
 * pads, or takes it from output_shape (or in·stride under SAME_*) and derives the pads
 * from it; oneDNN's deconvolution has the same length as stride·(in-1) + span − pad_l −
 * pad_r, so pad_r = pad_end − output_padding. Pads that come out negative (an
 * output_shape beyond what the kernel reaches) stay on the reference kernel.
 */
#include "exec/dnnl/dn_opkit.h"
#include "ops/window.h"

#include <stdlib.h>
#include <string.h>

#define DECONV_MAX_SP 3

typedef struct deconv_geom {
    dnnl_dims_t strides, dilates, pad_l, pad_r;
    int64_t out[DECONV_MAX_SP];
} deconv_geom;

/* An INTS attribute given for the spatial dims, or for all dims (the spatial ones are
 * the last): value for spatial dim d, or `dflt` when absent. False when the count is
 * neither. */
static bool spatial_attr(const gl_node *n, const char *name, int nsp, int d, int64_t dflt,
                         int64_t *v, bool *given)
{
    size_t cnt;
    const int64_t *a = gl_attr_ints(n, name, &cnt);
    *given = a != NULL;
    *v = dflt;
    if (!a)
        return true;
    if (cnt != (size_t)nsp && cnt != (size_t)nsp + 2)
        return false;
    *v = a[cnt - (size_t)nsp + (size_t)d];
    return true;
}

/* The output length and pads of every spatial dim, as the reference kernel resolves
 * them; false when this path does not take them. */
static bool deconv_window(const gl_kernel_ctx *k, int nsp, const int64_t *in,
                          const int64_t *kernel, deconv_geom *g)
{
    gl_window w;
    if (gl_window_read(k->node, k->where, nsp, kernel, &w) != GL_OK) {
        gl_error_clear();
        return false;
    }
    bool same = w.pad_mode == GL_PAD_SAME_UPPER || w.pad_mode == GL_PAD_SAME_LOWER;
    for (int d = 0; d < nsp; d++) {
        int64_t span = (w.kernel[d] - 1) * w.dil[d] + 1, s = w.stride[d];
        int64_t out_pad, shape, begin = w.pad_begin[d], end = w.pad_end[d];
        bool has_shape, has_pad;
        if (!spatial_attr(k->node, "output_padding", nsp, d, 0, &out_pad, &has_pad) ||
            !spatial_attr(k->node, "output_shape", nsp, d, 0, &shape, &has_shape) ||
            out_pad < 0 || out_pad > GL_WINDOW_MAX_ATTR || in[d] > GL_WINDOW_MAX_DIM ||
            shape < 0 || shape > GL_WINDOW_MAX_DIM)
            return false;
        int64_t full = s * (in[d] - 1) + out_pad + span;
        if (has_shape || same) {
            g->out[d] = has_shape ? shape : in[d] * s;
            int64_t total = full - g->out[d], half = gl_floor_div(total, 2);
            begin = w.pad_mode == GL_PAD_SAME_UPPER ? half : total - half;
        } else {
            if (w.pad_mode == GL_PAD_VALID)
                begin = end = 0;
            g->out[d] = full - begin - end;
        }
        g->strides[d] = s;
        g->dilates[d] = w.dil[d] - 1;
        g->pad_l[d] = begin;
        g->pad_r[d] = s * (in[d] - 1) + span - begin - g->out[d];
        if (g->out[d] < 1 || g->pad_l[d] < 0 || g->pad_r[d] < 0)
            return false;
    }
    return true;
}

typedef struct deconv_arg {
    const deconv_geom *g;
    const dnnl_memory_desc_t *wany, *bias;
    const int64_t *out_dims;
    dnnl_format_tag_t act;
    bool plain_first; /* one output channel: way 0 is plain src, dst oneDNN's (below) */
} deconv_arg;

/* Way 0: source oneDNN's choice, destination the activation layout; 1: both the
 * activation layout; 2: both oneDNN's choice. Plain policy: plain, one way.
 * To one output channel (a detector's map) first a plain source and the destination
 * oneDNN's (plain, its gemm kernel): in a channel block it computes 15 padded channels
 * for nothing. oneDNN alone, [N,16,64,64] to [N,1,128,128], 4x4 stride 2: batch 8 two
 * threads 1.07 -> 0.60 ms, one thread 2.12 -> 0.72; batch 1 one thread 0.195 -> 0.088,
 * two 0.130 -> 0.124 (3 or 8 channels: gemm is as slow or slower, not taken). */
static dnnl_status_t deconv_way(dn_build *b, void *arg, int way, dnnl_primitive_desc_t *pd)
{
    deconv_arg *a = arg;
    const gl_tensor *x = b->k->in[0];
    bool first = a->plain_first && way == 0;
    way -= a->plain_first;
    dnnl_format_tag_t src_tag = way == 1 ? a->act : dnnl_format_tag_any;
    dnnl_format_tag_t dst_tag = way == 2 ? dnnl_format_tag_any : a->act;
    if (first) {
        src_tag = dnnl_format_tag_undef; /* plain */
        dst_tag = dnnl_format_tag_any;
    } else if (a->act == dnnl_format_tag_undef) {
        if (way > 0)
            return dnnl_unimplemented;
        src_tag = dst_tag = dnnl_format_tag_undef;
    }
    dnnl_memory_desc_t src, dst;
    dnnl_status_t r = src_tag == dnnl_format_tag_undef ? dn_md_plain(&src, x->rank, x->dims, NULL)
                                                       : dn_md_tag(&src, x->rank, x->dims, src_tag);
    if (r == dnnl_success)
        r = dst_tag == dnnl_format_tag_undef ? dn_md_plain(&dst, x->rank, a->out_dims, NULL)
                                             : dn_md_tag(&dst, x->rank, a->out_dims, dst_tag);
    dnnl_deconvolution_desc_t d;
    if (r == dnnl_success)
        r = dnnl_dilated_deconvolution_forward_desc_init(
            &d, dnnl_forward_inference, dnnl_deconvolution_direct, &src, a->wany, a->bias, &dst,
            a->g->strides, a->g->dilates, a->g->pad_l, a->g->pad_r);
    dnnl_primitive_attr_t attr = NULL;
    if (r == dnnl_success)
        r = dn_build_attr(b, NULL, 0, x->rank, a->out_dims, &attr);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &d, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    return r;
}

/* oneDNN 2.6's f32 deconvolution adds its own bias (as it applies any post-op) in a
 * per-element reference loop, though the primitive's name says jit: measured with
 * `graphlab profile --backends dnnl --threads 1 --reps 200` on a [1,64,64,64] input, k2 s2
 * to 32 channels, the process's user time went from 0.32 s without a bias to 0.82 s with
 * one (about 2.5 ms more per run). So the deconvolution runs without its bias and a binary
 * add (a jit kernel, per-channel broadcast) adds it in place on the destination
 * (dn_node.then, then_src1: a copy of the constant bias as [1, C, 1...]). */
static dnnl_status_t bias_add_after(dn_build *b, const_dnnl_primitive_desc_t pd,
                                    const gl_tensor *bias, int rank)
{
    const dnnl_memory_desc_t *dst = dn_pd_md(pd, dnnl_query_dst_md, 0);
    int64_t bdims[DNNL_MAX_NDIMS];
    for (int i = 0; i < rank; i++)
        bdims[i] = i == 1 ? bias->dims[0] : 1;
    /* The bias plain, else in the plan's activation layout: jit kernels take a blocked
     * destination's per-channel operand only blocked too. Converted once. */
    dnnl_memory_desc_t plain, tagged;
    dnnl_binary_desc_t d;
    dnnl_primitive_desc_t bpd = NULL;
    dnnl_memory_t from = NULL;
    dnnl_format_tag_t act = dn_act_tag(b->c, rank);
    dnnl_status_t r = dst ? dn_md_plain(&plain, rank, bdims, NULL) : dnnl_invalid_arguments;
    for (int way = 0; r == dnnl_success && way < 2; way++) {
        if (way == 1 && act == dnnl_format_tag_undef)
            break;
        /* One output channel in a channel block: [1, 1, 1, 1] is a scalar to oneDNN
         * 2.6's binary, whose jit:uni kernel, in place over a one-channel nChw16c
         * tensor, adds nothing (any batch, in a C test of oneDNN alone; a DBNet head at
         * batch 8 had max_abs 0.24). Such a deconvolution goes plain (deconv_way), so
         * this is only a fallback: the deconvolution's own bias, slow but right. */
        if (way == 1 && bias->dims[0] == 1)
            break;
        if (way == 1)
            r = dn_md_tag(&tagged, rank, bdims, act);
        if (r == dnnl_success)
            r = dnnl_binary_desc_init(&d, dnnl_binary_add, dst, way ? &tagged : &plain, dst);
        if (r == dnnl_success)
            r = dnnl_primitive_desc_create(&bpd, &d, NULL, b->c->engine, NULL);
        if (r == dnnl_success && !dn_pd_is_ref(bpd))
            break;
        dnnl_primitive_desc_destroy(bpd);
        bpd = NULL;
        r = dnnl_success;
    }
    if (r == dnnl_success && !bpd)
        r = dnnl_unimplemented;
    if (r == dnnl_success)
        r = dnnl_primitive_create(&b->s->then, bpd);
    const dnnl_memory_desc_t *want = r == dnnl_success ? dn_pd_md(bpd, dnnl_query_src_md, 1)
                                                        : NULL;
    size_t bytes = want ? dnnl_memory_desc_get_size(want) : 0;
    if (r == dnnl_success && (!want || !(b->s->then_buf = calloc(1, bytes))))
        r = dnnl_out_of_memory;
    if (r == dnnl_success)
        r = dnnl_memory_create(&b->s->then_src1, want, b->c->engine, b->s->then_buf);
    if (r == dnnl_success)
        r = dnnl_memory_create(&from, &plain, b->c->engine, (void *)gl_tensor_data(bias));
    if (r == dnnl_success)
        r = dn_reorder_once(b->c, &plain, from, want, b->s->then_src1);
    dnnl_memory_destroy(from);
    dnnl_primitive_desc_destroy(bpd);
    if (r != dnnl_success) { /* the node goes on with nothing after its primitive */
        if (b->s->then)
            dnnl_primitive_destroy(b->s->then);
        if (b->s->then_src1)
            dnnl_memory_destroy(b->s->then_src1);
        free(b->s->then_buf);
        b->s->then = NULL;
        b->s->then_src1 = NULL;
        b->s->then_buf = NULL;
    }
    return r;
}

static gl_status deconv_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = dn_f32_input(k, 0), *w = dn_f32_input(k, 1);
    const gl_tensor *bias = k->n_inputs > 2 ? k->in[2] : NULL;
    if (!x || !w || (bias && bias->dtype != GL_DT_FLOAT))
        return dn_refuse(b, "not float32");
    int nsp = x->rank - 2;
    if (nsp < 1 || nsp > DECONV_MAX_SP || w->rank != x->rank)
        return dn_refuse(b, "rank %d", x->rank);
    if (x->count == 0 || w->count == 0)
        return dn_refuse(b, "empty tensor");
    int64_t group = gl_node_attr_int(k->node, "group", 1), c = x->dims[1];
    if (group < 1 || w->dims[0] != c || c % group != 0)
        return dn_refuse(b, "group %lld does not divide the channels", (long long)group);
    int64_t ocg = w->dims[1], icg = c / group, oc = ocg * group;
    if (bias && (bias->rank != 1 || bias->dims[0] != oc))
        return dn_refuse(b, "bias is not [%lld]", (long long)oc);
    if (w->layout || (bias && bias->layout))
        return dn_refuse(b, "weights in a oneDNN layout");
    deconv_geom g;
    if (!deconv_window(k, nsp, x->dims + 2, w->dims + 2, &g))
        return dn_refuse(b, "window attributes the oneDNN path does not take (negative pads)");
    int64_t out_dims[DECONV_MAX_SP + 2] = {x->dims[0], oc};
    memcpy(out_dims + 2, g.out, (size_t)nsp * sizeof(int64_t));

    /* W's bytes as oneDNN's [G,] OC/G, IC/G, k...: output channels at stride K, input
     * channels at stride OC/G * K. */
    int64_t wd[DECONV_MAX_SP + 3], ws[DECONV_MAX_SP + 3], ksz = gl_dims_product(w->dims, 2, w->rank);
    int lead = group == 1 ? 0 : 1, wrank = w->rank + lead;
    wd[0] = group;
    ws[0] = icg * ocg * ksz;
    wd[lead] = ocg;
    ws[lead] = ksz;
    wd[lead + 1] = icg;
    ws[lead + 1] = ocg * ksz;
    gl_strides(w->dims + 2, nsp, ws + lead + 2);
    memcpy(wd + lead + 2, w->dims + 2, (size_t)nsp * sizeof(int64_t));
    dnnl_memory_desc_t wgiven, wany, bmd;
    if (dn_md_plain(&wgiven, wrank, wd, ws) != dnnl_success ||
        dn_md_tag(&wany, wrank, wd, dnnl_format_tag_any) != dnnl_success ||
        (bias && dn_md_plain(&bmd, 1, &oc, NULL) != dnnl_success))
        return dn_refuse(b, "shapes oneDNN does not describe");
    /* A constant bias is added by a binary primitive after the deconvolution (see
     * bias_after); in a fused unit the bias must come before the unit's post-ops. */
    bool bias_after = bias && !b->tail && dn_input_constant(k, 2);
    deconv_arg a = {.g = &g, .wany = &wany, .bias = bias && !bias_after ? &bmd : NULL,
                    .out_dims = out_dims, .act = dn_act_tag(b->c, x->rank)};
    a.plain_first = oc == 1 && a.act != dnnl_format_tag_undef;
    int ways = 3 + a.plain_first;
    int way = dn_pd_pick(b, &a, ways, deconv_way, pd);
    if (way >= 0 && bias_after && bias_add_after(b, *pd, bias, x->rank) != dnnl_success) {
        /* no jit add for this destination (a blocked one with padded channels): the
         * deconvolution adds its bias itself after all */
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        a.bias = &bmd;
        way = dn_pd_pick(b, &a, ways, deconv_way, pd);
    }
    if (way < 0)
        return dn_refuse(b, "oneDNN has no deconvolution for this configuration");
    if (!dn_pd_is_ref(*pd) || a.act == dnnl_format_tag_undef) {
        dn_bind_weighted(b, *pd, &wgiven, a.bias != NULL, x->rank, out_dims);
        return GL_OK;
    }
    dnnl_primitive_desc_destroy(*pd);
    *pd = NULL;
    return dn_refuse(b, "oneDNN would run its reference deconvolution (ref:any)");
}

static bool deconv_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 3, 2 + DECONV_MAX_SP) || !dn_input_fits(n, 1, 3, 2 + DECONV_MAX_SP)) {
        snprintf(why, len, "not a float32 1-D, 2-D or 3-D transposed convolution");
        return false;
    }
    return true;
}

static const dn_op deconv_ops[] = {
    {"", "ConvTranspose", 1, deconv_claim, deconv_build, NULL},
};
const dn_op_table dn_deconv_ops = {deconv_ops, GL_ARRAY_LEN(deconv_ops)};

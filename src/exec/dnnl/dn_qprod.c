/* dn_qprod.c — a quantized product (dn.h: dn_qprod) as ONE oneDNN 2.6 int8 convolution or
 * matmul: the int8 source as it arrives (u8 or s8, its zero point an attribute), the
 * int8 weights reordered once at build, an int32 bias, output scales x_scale * w_scale[c]
 * (per output channel: mask 1 << 1, the channels of a convolution and the columns of a
 * matmul viewed as one matrix), the activations as eltwise post-ops in real units, then
 * 1 / y_scale, a round post-op and the destination's zero point, written u8 or s8.
 *
 * What oneDNN 2.6 does, measured on this machine's brgconv / jit_int8 / brdgmm_dw / brg
 * matmul kernels (avx512_core_vnni):
 *  - the bias (s32 or f32) is added to the accumulator BEFORE the output scales:
 *    dst = scale * (acc + bias). ONNX's int32 bias has scale x_scale * w_scale[c]: it is in
 *    accumulator units, read as it is. A bias with scales of its own is rescaled into
 *    those units once (f32) at build.
 *  - the destination zero point is added in float before the conversion rounds: with an
 *    odd zero point a tie rounds to the other side (2.5 + 3 -> 6, ONNX says 2 + 3 = 5).
 *    An eltwise round post-op (half to even) before it makes the sum exact, so the
 *    conversion only saturates: ONNX's saturate(round(y / y_scale) + y_zero).
 *  - two eltwise post-ops of one algorithm in a chain: the second runs with the first's
 *    alpha and beta (linear(0.5, 0) then linear(1, 3) of 7 gave 1.75, on the f32 brgconv
 *    too; dn_posts_repeat_alg). So 1 / y_scale never makes a second linear step
 *    (dn_qpost_chain): it goes into the output scales when the activations commute with a
 *    positive scale (none, Relu, LeakyRelu, Clip with its bounds scaled), else into the
 *    last linear step (HardSigmoid's), else it is the chain's one linear step; a chain
 *    that still repeats an algorithm is refused.
 * Rounding: the conversions round half to even (MXCSR's default) and saturate.
 *
 * Activations of a convolution stay in nhwc (nwc, ndhwc), oneDNN's int8 layout, whatever
 * the plan's float policy (the blocked layouts have no brgemm int8 kernels): a group
 * reads the previous group's output without a reorder. Matmul operands are plain
 * row-major, a stack of rows one tall matrix. oneDNN's reference code is refused.
 */
#include "exec/dnnl/dn_opkit.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void dn_qprod_clear(dn_qprod *q)
{
    free(q->w_scale);
    free(q->b_scale);
    memset(q, 0, sizeof(*q));
}

/* ---- the parameters ------------------------------------------------------------------ */

static bool is_int8(gl_dtype dt)
{
    return dt == GL_DT_UINT8 || dt == GL_DT_INT8;
}

bool dn_qscales(const gl_tensor *t, int64_t along, float **vals, int64_t *n, const char *what,
                char *why, size_t len)
{
    *vals = NULL;
    *n = 0;
    if (!t || t->dtype != GL_DT_FLOAT || t->rank > 1 || (t->count != 1 && t->count != along)) {
        snprintf(why, len, "%s is not a float32 scalar or vector of %lld", what,
                 (long long)along);
        return false;
    }
    const float *s = gl_tensor_data(t);
    for (int64_t i = 0; i < t->count; i++)
        if (!isfinite(s[i]) || s[i] <= 0.0f) {
            snprintf(why, len, "%s[%lld] = %g is not a finite positive scale", what,
                     (long long)i, (double)s[i]);
            return false;
        }
    *n = t->count;
    *vals = gl_xmalloc((size_t)t->count * sizeof(float));
    memcpy(*vals, s, (size_t)t->count * sizeof(float));
    return true;
}

bool dn_qzero(const gl_tensor *t, gl_dtype *dt, int32_t *zero, const char *what, char *why,
              size_t len)
{
    *zero = 0;
    if (!t) {
        *dt = GL_DT_UINT8; /* ONNX's default */
        return true;
    }
    if (!is_int8(t->dtype) || t->count != 1) {
        snprintf(why, len, "%s is not a uint8 or int8 scalar", what);
        return false;
    }
    *dt = t->dtype;
    *zero = (int32_t)gl_elem_i64(t, 0);
    return true;
}

bool dn_qzeros(const gl_tensor *t)
{
    for (int64_t i = 0; t && i < t->count; i++)
        if (gl_elem_i64(t, i) != 0)
            return false;
    return true;
}

/* ---- refusals ------------------------------------------------------------------------ */

gl_status dn_qrefuse(dn_build *b, const gl_op_def *refused, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dn_set_notev(b->c, b->s, fmt, ap);
    va_end(ap);
    if (refused) {
        b->s->fallback = refused;
        return GL_OK;
    }
    return dn_reference_kernel(b, &b->s->fallback);
}

#define refuse(b, q, ...) dn_qrefuse(b, (q)->refused, __VA_ARGS__)

/* ---- attributes ---------------------------------------------------------------------- */

/* Does act(s * y) = s * act'(y) for s > 0, act' act with its bounds scaled? */
static bool scales_through(const dn_post *p)
{
    return p->alg == dnnl_eltwise_relu || p->alg == dnnl_eltwise_clip ||
           p->alg == dnnl_eltwise_clip_v2;
}

/* The post-ops (dn.h): the activations with 1 / y_scale among them, then round. 1 / y_scale is
 * pushed back from the end through activations that commute with a positive scale (a
 * clip's bounds scaled, a relu's slope kept): into the output scales when it gets through
 * them all (*factor = 1 / y_scale), else into a linear step it meets (HardSigmoid's
 * first), else as a linear step of its own there. n: how many; false (why) when the chain
 * repeats an algorithm (dn_posts_repeat_alg). */
bool dn_qpost_chain(const dn_post *acts, size_t n_acts, float y_scale, dn_post *post,
                    size_t *n, float *factor, const char **why)
{
    float inv = 1.0f / y_scale;
    size_t k = n_acts, at = k;
    memcpy(post, acts, k * sizeof(*post));
    for (; at > 0 && scales_through(&post[at - 1]); at--)
        if (post[at - 1].alg != dnnl_eltwise_relu) {
            post[at - 1].alpha *= inv;
            post[at - 1].beta *= inv;
        }
    *factor = at == 0 ? inv : 1.0f;
    if (at > 0 && post[at - 1].alg == dnnl_eltwise_linear) {
        post[at - 1].alpha *= inv;
        post[at - 1].beta *= inv;
    } else if (at > 0) {
        memmove(post + at + 1, post + at, (k - at) * sizeof(*post));
        post[at] = (dn_post){dnnl_eltwise_linear, inv, 0.0f, 1.0f, NULL};
        k++;
    }
    if (dn_posts_repeat_alg(post, k)) {
        *why = "two post-ops of one algorithm with different parameters (oneDNN 2.6 would "
               "run the second with the first's)";
        return false;
    }
    post[k++] = (dn_post){dnnl_eltwise_round, 0.0f, 0.0f, 1.0f, NULL};
    *n = k;
    return true;
}

/* Output scales, zero points and post-ops for `channels` output channels. */
static dnnl_status_t product_attr(const dn_qprod *q, int64_t channels, dnnl_primitive_attr_t *attr,
                                  const char **why)
{
    *attr = NULL;
    if (q->n_w_scale != 1 && q->n_w_scale != channels) {
        *why = "the weights' scales are not one per output channel";
        return dnnl_unimplemented;
    }
    dn_post post[DN_QMAX_POSTS];
    size_t n_post = 0;
    float factor = 1.0f;
    if (!dn_qpost_chain(q->acts, q->n_acts, q->y_scale, post, &n_post, &factor, why))
        return dnnl_unimplemented;
    float *scales = gl_xmalloc((size_t)q->n_w_scale * sizeof(float));
    for (int64_t c = 0; c < q->n_w_scale; c++)
        scales[c] = q->x_scale * q->w_scale[c] * factor;
    dnnl_status_t r = dn_attr_post_ops(post, n_post, attr);
    if (r == dnnl_success)
        r = dnnl_primitive_attr_set_output_scales(*attr, q->n_w_scale,
                                                  q->n_w_scale > 1 ? 1 << 1 : 0, scales);
    if (r == dnnl_success && q->x_zero)
        r = dnnl_primitive_attr_set_zero_points(*attr, DNNL_ARG_SRC, 1, 0, &q->x_zero);
    if (r == dnnl_success && q->y_zero)
        r = dnnl_primitive_attr_set_zero_points(*attr, DNNL_ARG_DST, 1, 0, &q->y_zero);
    free(scales);
    if (r != dnnl_success && !*why)
        *why = "oneDNN takes no such scales or zero points";
    return r;
}

/* ---- the bias ---------------------------------------------------------------------------- */

/* The bias of `channels` entries: bound as it is when it is in accumulator units, else
 * rescaled into them once (f32): (b_q - b_zero) * b_scale[c] / (x_scale * w_scale[c]).
 * *md is what the primitive is built with. */
static bool bias_md(dn_build *b, const dn_qprod *q, int64_t channels, int rank,
                    dnnl_memory_desc_t *md, const char **why)
{
    const gl_tensor *t = b->k->in[q->bias];
    if (!t || t->dtype != GL_DT_INT32 || t->count != channels || t->layout) {
        *why = "the bias is not int32 with one value per output channel";
        return false;
    }
    if (q->b_scale && q->n_b_scale != 1 && q->n_b_scale != channels) {
        *why = "the bias's scales are not one per output channel";
        return false;
    }
    int64_t dims[2] = {1, channels};
    if (dn_md_plain(md, rank, rank == 1 ? dims + 1 : dims, NULL) != dnnl_success ||
        (!q->b_scale && dn_md_retype(md, GL_DT_INT32) != dnnl_success)) {
        *why = "a bias oneDNN does not describe";
        return false;
    }
    return true;
}

static void bind_bias(dn_build *b, const dn_qprod *q, const dnnl_memory_desc_t *md)
{
    const gl_tensor *t = b->k->in[q->bias];
    if (!q->b_scale) {
        dn_bind_input_from(b, DNNL_ARG_BIAS, q->bias, md, NULL);
        return;
    }
    float *f = dn_bind_own(b, DNNL_ARG_BIAS, md);
    for (int64_t c = 0; c < t->count; c++) {
        double bs = q->b_scale[q->n_b_scale > 1 ? c : 0];
        double ws = q->w_scale[q->n_w_scale > 1 ? c : 0];
        f[c] = (float)((double)(gl_elem_i64(t, c) - q->b_zero) * bs / (q->x_scale * ws));
    }
}

/* Why pd would not compute q as ONNX does, or NULL: oneDNN's reference code, or weights it
 * halves. Without VNNI (avx512_core, avx2) oneDNN 2.6 takes an s8 source by packing the
 * weights times 0.5 (scale_adjust) and doubling the output scales: every odd weight loses
 * its last bit (measured: a 3x3 convolution of s8 5s by weights 1 gave 0 everywhere). */
static const char *kernel_refusal(const_dnnl_primitive_desc_t pd, const char *what)
{
    if (!dn_cpu_has_vnni())
        return "no VNNI on this CPU: oneDNN 2.6's int8 kernels add u8*s8 pairs in int16, "
               "which saturates (or halve the weights of an s8 source)";
    const dnnl_memory_desc_t *w = dn_pd_md(pd, dnnl_query_weights_md, 0);
    if (w && (w->extra.flags & dnnl_memory_extra_flag_scale_adjust) &&
        w->extra.scale_adjust != 1.0f)
        return "an int8 (signed) source on this CPU (no VNNI): oneDNN 2.6 halves the weights, odd "
               "ones lose their last bit";
    return dn_pd_is_ref(pd) ? what : NULL;
}

/* ---- convolution ------------------------------------------------------------------------- */

/* The int8 activation layout of a rank: nwc, nhwc, ndhwc; plain under --layout plain. */
static dnnl_format_tag_t act_tag(const dn_ctx *c, int rank)
{
    static const dnnl_format_tag_t tags[] = {dnnl_nwc, dnnl_nhwc, dnnl_ndhwc};
    return dn_act_tag(c, rank) == dnnl_format_tag_undef ? dnnl_format_tag_undef
                                                         : tags[rank - 3];
}

/* A descriptor of dims in layout tag (undef: plain) and dtype dt. */
static dnnl_status_t md_of(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                           dnnl_format_tag_t tag, gl_dtype dt)
{
    dnnl_status_t r = tag == dnnl_format_tag_undef ? dn_md_plain(md, rank, dims, NULL)
                                                   : dn_md_tag(md, rank, dims, tag);
    return r == dnnl_success ? dn_md_retype(md, dt) : r;
}

typedef struct conv_shape {
    int rank;
    int64_t group, oc;
    int64_t out[DN_CONV_MAX_SP + 2];
    int64_t wdims[DN_CONV_MAX_SP + 3];
    int wrank;
    dn_conv_geom g;
} conv_shape;

static gl_status conv_shape_of(dn_build *b, const dn_qprod *q, conv_shape *s)
{
    const gl_tensor *x = b->k->in[q->x], *w = b->k->in[q->w];
    int nsp = x->rank - 2;
    if (nsp < 1 || nsp > DN_CONV_MAX_SP || w->rank != x->rank)
        return refuse(b, q, "a convolution of rank %d", x->rank);
    s->rank = x->rank;
    s->group = gl_node_attr_int(q->head, "group", 1);
    s->oc = w->dims[0];
    if (s->group < 1 || s->group > x->dims[1] || w->dims[1] * s->group != x->dims[1] ||
        s->oc % s->group != 0)
        return refuse(b, q, "group %lld does not divide the channels", (long long)s->group);
    if (!dn_conv_window(q->head, b->k->where, nsp, x->dims + 2, w->dims + 2, &s->g))
        return refuse(b, q, "window attributes the oneDNN path does not handle");
    s->out[0] = x->dims[0];
    s->out[1] = s->oc;
    memcpy(s->out + 2, s->g.out, (size_t)nsp * sizeof(int64_t));
    /* grouped weights [OC, IC/G, k...] are the bytes of [G, OC/G, IC/G, k...] */
    s->wrank = s->group == 1 ? w->rank : w->rank + 1;
    if (s->group == 1) {
        memcpy(s->wdims, w->dims, (size_t)w->rank * sizeof(int64_t));
    } else {
        s->wdims[0] = s->group;
        s->wdims[1] = s->oc / s->group;
        memcpy(s->wdims + 2, w->dims + 1, (size_t)(w->rank - 1) * sizeof(int64_t));
    }
    return GL_OK;
}

static dnnl_status_t conv_pd(dn_build *b, const dn_qprod *q, const conv_shape *s,
                             dnnl_format_tag_t tag, const dnnl_memory_desc_t *bias,
                             dnnl_primitive_desc_t *pd, const char **why)
{
    const gl_tensor *x = b->k->in[q->x];
    dnnl_memory_desc_t src, dst, wany;
    dnnl_convolution_desc_t cd;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_status_t r = md_of(&src, s->rank, x->dims, tag, x->dtype);
    if (r == dnnl_success)
        r = md_of(&dst, s->rank, s->out, tag, q->y_dtype);
    if (r == dnnl_success)
        r = md_of(&wany, s->wrank, s->wdims, dnnl_format_tag_any, GL_DT_INT8);
    if (r == dnnl_success)
        r = dnnl_dilated_convolution_forward_desc_init(
            &cd, dnnl_forward_inference, dnnl_convolution_direct, &src, &wany, bias, &dst,
            s->g.strides, s->g.dilates, s->g.pad_l, s->g.pad_r);
    if (r == dnnl_success)
        r = product_attr(q, s->oc, &attr, why);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &cd, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    return r;
}

static gl_status conv_build(dn_build *b, const dn_qprod *q, dnnl_primitive_desc_t *pd)
{
    conv_shape s;
    gl_status st = conv_shape_of(b, q, &s);
    if (st != GL_OK || b->s->fallback)
        return st;
    const char *why = NULL;
    dnnl_memory_desc_t bmd;
    if (q->bias != DN_QNONE && !bias_md(b, q, s.oc, 1, &bmd, &why))
        return refuse(b, q, "%s", why);
    /* nhwc first (the layout the next int8 group reads), then oneDNN's choice */
    dnnl_format_tag_t tags[2] = {act_tag(b->c, s.rank), dnnl_format_tag_any};
    dnnl_status_t r = dnnl_unimplemented;
    for (size_t i = 0; i < 2 && (r != dnnl_success || dn_pd_is_ref(*pd)); i++) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        r = conv_pd(b, q, &s, tags[i], q->bias != DN_QNONE ? &bmd : NULL, pd, &why);
    }
    const char *bad = r == dnnl_success
                          ? kernel_refusal(*pd, "oneDNN would run its reference int8 convolution")
                          : why ? why : "oneDNN has no int8 convolution for this configuration";
    if (bad) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        return refuse(b, q, "%s", bad);
    }
    dnnl_memory_desc_t wgiven;
    if (md_of(&wgiven, s.wrank, s.wdims, dnnl_format_tag_undef, GL_DT_INT8) != dnnl_success)
        return refuse(b, q, "weights oneDNN does not describe");
    dn_bind_input(b, DNNL_ARG_SRC, q->x, dn_pd_md(*pd, dnnl_query_src_md, 0));
    dn_bind_input_from(b, DNNL_ARG_WEIGHTS, q->w, &wgiven, dn_pd_md(*pd, dnnl_query_weights_md, 0));
    if (q->bias != DN_QNONE)
        bind_bias(b, q, &bmd);
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), s.rank, s.out);
    return GL_OK;
}

/* ---- matmul and Gemm --------------------------------------------------------------------- */

/* A plain matrix [rows, cols] of dtype dt read with element strides (NULL: row-major). */
static dnnl_status_t matrix_md(dnnl_memory_desc_t *md, int64_t rows, int64_t cols,
                               const int64_t *strides, gl_dtype dt)
{
    int64_t dims[2] = {rows, cols};
    dnnl_status_t r = dn_md_plain(md, 2, dims, strides);
    return r == dnnl_success ? dn_md_retype(md, dt) : r;
}

static gl_status matmul_build(dn_build *b, const dn_qprod *q, dnnl_primitive_desc_t *pd)
{
    const gl_tensor *x = b->k->in[q->x], *w = b->k->in[q->w];
    bool gemm = q->kind == DN_QGEMM;
    bool ta = gemm && gl_node_attr_int(q->head, "transA", 0) != 0;
    bool tb = gemm && gl_node_attr_int(q->head, "transB", 0) != 0;
    if (gemm && (gl_node_attr_float(q->head, "alpha", 1.0f) != 1.0f ||
                 gl_node_attr_float(q->head, "beta", 1.0f) != 1.0f))
        return refuse(b, q, "a Gemm with alpha or beta other than 1");
    if (x->rank < 2 || w->rank != 2 || (gemm && x->rank != 2))
        return refuse(b, q, "operands of rank %d and %d (a matrix or a stack of rows times "
                      "one weight matrix)", x->rank, w->rank);
    /* A stack of rows is one tall matrix [rows, K]: the same bytes. */
    int64_t rows = ta ? x->dims[1] : gl_dims_product(x->dims, 0, x->rank - 1);
    int64_t kk = ta ? x->dims[0] : x->dims[x->rank - 1];
    int64_t kw = tb ? w->dims[1] : w->dims[0], n = tb ? w->dims[0] : w->dims[1];
    if (kk != kw)
        return refuse(b, q, "inner dims differ (%lld, %lld)", (long long)kk, (long long)kw);
    int64_t astr[2] = {1, rows}, bstr[2] = {1, kw};
    int64_t out[DNNL_MAX_NDIMS];
    memcpy(out, x->dims, (size_t)x->rank * sizeof(int64_t));
    out[0] = ta ? rows : out[0];
    out[x->rank - 1] = n;
    const char *why = NULL;
    dnnl_memory_desc_t amd, bview, bany, ymd, bmd;
    if (matrix_md(&amd, rows, kk, ta ? astr : NULL, x->dtype) != dnnl_success ||
        matrix_md(&bview, kw, n, tb ? bstr : NULL, GL_DT_INT8) != dnnl_success ||
        md_of(&bany, 2, (int64_t[]){kw, n}, dnnl_format_tag_any, GL_DT_INT8) != dnnl_success ||
        matrix_md(&ymd, rows, n, NULL, q->y_dtype) != dnnl_success)
        return refuse(b, q, "shapes oneDNN does not describe");
    if (q->bias != DN_QNONE && !bias_md(b, q, n, 2, &bmd, &why))
        return refuse(b, q, "%s", why);
    dnnl_matmul_desc_t md;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_status_t r = dnnl_matmul_desc_init(&md, &amd, &bany, q->bias != DN_QNONE ? &bmd : NULL,
                                            &ymd);
    if (r == dnnl_success)
        r = product_attr(q, n, &attr, &why);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &md, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    const char *bad = r == dnnl_success
                          ? kernel_refusal(*pd, "oneDNN would run its reference int8 matmul")
                          : why ? why : "oneDNN has no int8 matmul for these shapes";
    if (bad) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        return refuse(b, q, "%s", bad);
    }
    dn_bind_input_view(b, DNNL_ARG_SRC, q->x, &amd);
    dn_bind_input_from(b, DNNL_ARG_WEIGHTS, q->w, &bview, dn_pd_md(*pd, dnnl_query_weights_md, 0));
    if (q->bias != DN_QNONE)
        bind_bias(b, q, &bmd);
    dn_bind_output(b, DNNL_ARG_DST, 0, &ymd, x->rank, out);
    return GL_OK;
}

/* ---- the build ------------------------------------------------------------------------------ */

gl_status dn_qprod_build(dn_build *b, const dn_qprod *q, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = q->x < k->n_inputs ? k->in[q->x] : NULL;
    const gl_tensor *w = q->w < k->n_inputs ? k->in[q->w] : NULL;
    if (!x || !w || x->dtype != q->x_dtype)
        return refuse(b, q, "the source is %s, not %s as its zero point",
                      x ? gl_dtype_name(x->dtype) : "missing", gl_dtype_name(q->x_dtype));
    if (w->dtype != GL_DT_INT8 || w->layout || !dn_input_constant(k, q->w))
        return refuse(b, q, "the weights are not a constant int8 tensor");
    if (q->bias != DN_QNONE && (q->bias >= k->n_inputs || !k->in[q->bias] ||
                                !dn_input_constant(k, q->bias)))
        return refuse(b, q, "the bias is not a constant");
    if (x->count == 0 || w->count == 0)
        return refuse(b, q, "an empty operand");
    return q->kind == DN_QCONV ? conv_build(b, q, pd) : matmul_build(b, q, pd);
}

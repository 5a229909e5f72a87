/* dn_quant.c — stand-alone QuantizeLinear, DequantizeLinear, MatMulInteger and ConvInteger
 * on oneDNN (issue 21): multi-threaded primitives that give the reference kernels' results
 * bit for bit (src/ops/linalg.c: quantize_value, dequantize_run, matmulinteger_kernel,
 * convinteger_kernel).
 *
 * QuantizeLinear is y = saturate(round_half_even(x / scale) + zero). A oneDNN reorder
 * with output scales multiplies by 1/scale, which is not x / scale: measured on
 * [1,64,56,56] with values at and one ulp around the ties, x * (1/scale) rounds 5,287 of
 * 200,704 elements to the other integer. And a zero point added before the rounding
 * (the reorder's dst zero point) flips ties by its parity: round(2.5) + 1 = 3, round(3.5)
 * = 4. So it is a binary primitive: x / scale (a true division), then the post-ops
 * eltwise round (round half to even) and a binary add of the zero point, written as u8
 * or s8 (oneDNN saturates the conversion; the value is already whole). Measured bitwise
 * equal to the reference on that tensor for u8 and s8, per tensor and per channel, plain
 * and nhwc. A NaN quantizes to the zero point in ONNX and to something else in oneDNN:
 * an input holding a NaN or an infinity runs the reference kernel (dn_special.c).
 * oneDNN 2.6's binary runs its jit kernel only on plain and nhwc sources broadcasting a
 * scalar or per-channel [1,C,1,...] operand. Per tensor, a blocked x (nChw16c) is read as
 * the flat vector of its bytes and the output keeps its layout (when the blocks are not
 * padded); anything else (a per-axis scale on an axis other than the channels of a
 * permuted layout, any per-axis one on a blocked layout) reads x as a plain [outer, C,
 * inner] view, its channels in the middle, converted from its layout first.
 *
 * DequantizeLinear is y = float(x - zero) * scale: a reorder from the quantized tensor
 * (u8, s8, or s32 with no zero point) to float32 in the same layout, with output scales
 * (per tensor or per axis: mask 1 << axis over the ONNX dims, any layout) and a source
 * zero point. Measured bitwise equal for u8/s8 with any zero point and for s32 with zero
 * point 0; with an s32 zero point the subtraction is not exact in float beyond 2^24 (43K
 * of 200K random int32 values differed), so those run the reference. The reorder takes
 * one zero point for the whole tensor: per-axis zero points that differ run the
 * reference.
 *
 * Both read scales and zero points when they build: they must be the same every run
 * (initializers or Constant outputs; the pass-made QDQ models have them so). Blocked
 * quantization (opset 21's block_size) and opset 21's output_dtype stay on the reference.
 *
 * MatMulInteger and ConvInteger are oneDNN's int8 matmul and convolution (the source
 * u8/s8 with one zero point, the weights int8 — or uint8 of at most 127, the same bytes —
 * with zero point 0, an s32 destination) when their sums cannot pass 2^24: oneDNN
 * converts its int32 accumulators through float32 on the way to s32, so larger sums lose
 * their low bits where ONNX keeps them (see sums_fit_float). Only on CPUs with VNNI:
 * without it oneDNN's int8 kernels saturate (cpu_has_vnni).
 * DynamicQuantizeLinear stays on the reference: its scale comes from a min/max reduction
 * (oneDNN's drops NaN) and is needed before the quantization can be built.
 */
#include "exec/dnnl/dn_opkit.h"
#include "ops/opkit.h"
#include "ops/window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A node's quantization parameters as its build reads them. */
typedef struct qparams {
    const gl_tensor *x, *scale, *zero; /* zero may be NULL (0) */
    int axis;                          /* per axis; -1 per tensor */
    int64_t outer, channels, inner;    /* x as [outer, channels, inner] around the axis */
    bool zero_all_0, zero_all_same;
} qparams;

static bool is_quant8(gl_dtype dt)
{
    return dt == GL_DT_UINT8 || dt == GL_DT_INT8;
}

/* Per tensor (a scalar or one value) or per axis (1-D, one per x's axis entry): NULL, or
 * why oneDNN does not take it (the reference kernel gives the user its error). */
static const char *qparams_read(const dn_build *b, qparams *q)
{
    const gl_kernel_ctx *k = b->k;
    const gl_node *n = k->node;
    memset(q, 0, sizeof(*q));
    q->x = k->in[0];
    q->scale = k->n_inputs > 1 ? k->in[1] : NULL;
    q->zero = k->n_inputs > 2 ? k->in[2] : NULL;
    if (!q->x || !q->scale || q->scale->dtype != GL_DT_FLOAT || q->scale->layout ||
        (q->zero && q->zero->layout))
        return "not a float32 scale";
    if (gl_node_attr_int(n, "block_size", 0) != 0)
        return "blocked quantization (block_size)";
    if (gl_node_attr_int(n, "output_dtype", 0) != 0)
        return "output_dtype";
    if (!dn_value_fixed(n->inputs[1]) || (n->n_inputs > 2 && !dn_value_fixed(n->inputs[2])))
        return "a scale or zero point computed at run time";
    if (q->x->count < 1 || q->x->rank > DNNL_MAX_NDIMS)
        return "an empty tensor or more dims than oneDNN takes";
    if (q->zero && q->zero->count != q->scale->count)
        return "as many zero points as scales";
    q->axis = -1;
    q->outer = q->x->count;
    q->channels = q->inner = 1;
    if (!(q->scale->count == 1 && q->scale->rank <= 1)) {
        int axis;
        if (k->opset < 13 || q->scale->rank != 1 ||
            !gl_axis_normalize(gl_node_attr_int(n, "axis", 1), q->x->rank, false, k->where,
                               "axis", &axis) ||
            q->scale->dims[0] != q->x->dims[axis]) {
            gl_error_clear();
            return "a scale that is neither per tensor nor per axis";
        }
        q->axis = axis;
        q->channels = q->x->dims[axis];
        q->outer = gl_dims_product(q->x->dims, 0, axis);
        q->inner = gl_dims_product(q->x->dims, axis + 1, q->x->rank);
    }
    q->zero_all_0 = q->zero_all_same = true;
    for (int64_t i = 0; q->zero && i < q->zero->count; i++) {
        int64_t z = gl_elem_i64(q->zero, i);
        q->zero_all_0 &= z == 0;
        q->zero_all_same &= z == gl_elem_i64(q->zero, 0);
    }
    return NULL;
}

/* A plain descriptor of `rank` dims of type dt. */
static dnnl_status_t plain_md(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                              dnnl_data_type_t dt)
{
    dnnl_status_t r = dn_md_plain(md, rank, dims, NULL);
    md->data_type = dt;
    return r;
}

/* ---- QuantizeLinear -------------------------------------------------------------------- */

/* How a QuantizeLinear reads x: as it is stored (a layout with a jit kernel: nhwc);
 * per tensor, its stored bytes as one flat vector (a blocked layout without padding: the
 * output keeps the layout); or converted to the plain [outer, C, inner] view. */
typedef enum qway { QW_HELD, QW_FLAT, QW_PLAIN, QW_COUNT } qway;

/* The descriptors of one way: x as the primitive reads it, the scale and zero point
 * broadcast over it. */
typedef struct qshape {
    const qparams *q;
    dnnl_data_type_t y_type;
    qway way;
    dnnl_memory_desc_t x, bcast_scale, bcast_zero;
} qshape;

/* x's stored layout read as a flat vector (*elems of them)? Per tensor only, and only a
 * layout of its own (no view) whose blocks are not padded (padding must stay 0). */
static bool flat_fits(const dn_build *b, const qparams *q, int64_t *elems)
{
    const dnnl_memory_desc_t *md = &b->held[0];
    if (q->axis >= 0 || !q->x->layout || !dnnl_memory_desc_equal(md, &b->md[0]) ||
        md->offset0 != 0)
        return false;
    for (int i = 0; i < md->ndims; i++)
        if (md->padded_dims[i] != md->dims[i])
            return false;
    *elems = (int64_t)(dnnl_memory_desc_get_size(md) / sizeof(float));
    return true;
}

/* x's descriptor for way s->way, and the broadcast dims of the parameters (*rank). */
static dnnl_status_t quantize_x(const dn_build *b, qshape *s, int *rank, int64_t *bdims)
{
    const qparams *q = s->q;
    int64_t elems;
    switch (s->way) {
    case QW_HELD:
        if (!q->x->layout)
            return dnnl_unimplemented; /* a plain x is the plain way */
        s->x = b->md[0]; /* a view's dense form (dn_bind_input converts to it) */
        *rank = q->x->rank;
        for (int i = 0; i < *rank; i++)
            bdims[i] = i == q->axis ? q->channels : 1;
        return dnnl_success;
    case QW_FLAT:
        if (!flat_fits(b, q, &elems))
            return dnnl_unimplemented;
        *rank = 1;
        bdims[0] = 1;
        return plain_md(&s->x, 1, &elems, dnnl_f32);
    default:
        if (q->axis < 0) {
            *rank = 1;
            bdims[0] = 1;
            return plain_md(&s->x, 1, &q->x->count, dnnl_f32);
        }
        *rank = 3;
        int64_t dims[3] = {q->outer, q->channels, q->inner};
        bdims[0] = bdims[2] = 1;
        bdims[1] = q->channels;
        return plain_md(&s->x, 3, dims, dnnl_f32);
    }
}

static dnnl_status_t quantize_way(dn_build *b, void *arg, int way, dnnl_primitive_desc_t *pd)
{
    qshape *s = arg;
    const qparams *q = s->q;
    int64_t bdims[DNNL_MAX_NDIMS];
    int rank;
    s->way = (qway)way;
    dnnl_status_t r = quantize_x(b, s, &rank, bdims);
    dnnl_memory_desc_t y = s->x;
    if (r == dnnl_success)
        r = plain_md(&s->bcast_scale, rank, bdims, dnnl_f32);
    if (r == dnnl_success && q->zero)
        r = plain_md(&s->bcast_zero, rank, bdims, dn_dtype(q->zero->dtype));
    y.data_type = s->y_type;
    dn_post post[2] = {{dnnl_eltwise_round, 0, 0, 1, NULL},
                       {dnnl_binary_add, 0, 0, 1, &s->bcast_zero}};
    dnnl_primitive_attr_t attr = NULL;
    dnnl_binary_desc_t bd;
    if (r == dnnl_success)
        r = dn_attr_post_ops(post, q->zero_all_0 ? 1 : 2, &attr);
    if (r == dnnl_success)
        r = dnnl_binary_desc_init(&bd, dnnl_binary_div, &s->x, &s->bcast_scale, &y);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &bd, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    return r;
}

static gl_status quantize_build(dn_build *b, const qparams *pq, dnnl_primitive_desc_t *pd)
{
    const qparams q = *pq;
    gl_dtype y_type = q.zero ? q.zero->dtype : GL_DT_UINT8;
    if (q.x->dtype != GL_DT_FLOAT || !is_quant8(y_type))
        return dn_refuse(b, "not float32 to uint8 or int8");
    if (!q.x->layout && q.x->count < DN_OPS_SMALL)
        return dn_refuse(b, "%lld elements: below the oneDNN threshold (%d)",
                         (long long)q.x->count, DN_OPS_SMALL);
    const float *scale = gl_tensor_data(q.scale);
    for (int64_t i = 0; i < q.scale->count; i++)
        if (!isfinite(scale[i]) || scale[i] == 0.0f)
            return dn_refuse(b, "a scale of %g", (double)scale[i]);
    qshape s = {.q = &q, .y_type = dn_dtype(y_type)};
    /* A way kept with a kernel of oneDNN's own is the last one tried: s holds its
     * descriptors. */
    if (dn_pd_pick(b, &s, QW_COUNT, quantize_way, pd) < 0)
        return dn_refuse(b, "oneDNN has no binary division for this");
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "this layout");
    /* ONNX quantizes a NaN to the zero point: those runs take the reference kernel */
    gl_status st = dn_guard_specials(b, true);
    if (st != GL_OK)
        return st;
    if (s.way == QW_HELD)
        dn_bind_input(b, DNNL_ARG_SRC_0, 0, NULL);
    else if (s.way == QW_FLAT)
        dn_bind_input_from(b, DNNL_ARG_SRC_0, 0, &s.x, NULL);
    else
        dn_bind_input_view(b, DNNL_ARG_SRC_0, 0, &s.x);
    dn_bind_input_from(b, DNNL_ARG_SRC_1, 1, &s.bcast_scale, NULL);
    if (!q.zero_all_0)
        dn_bind_input_from(b, DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, 2,
                           &s.bcast_zero, NULL);
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), q.x->rank,
                   q.x->dims);
    if (s.way == QW_FLAT) { /* the flat bytes are x's layout, in 8 bits */
        dnnl_memory_desc_t y = b->held[0];
        y.data_type = s.y_type;
        b->s->out[b->s->n_out - 1].layout = dn_layout_of(b->c, &y);
    }
    return GL_OK;
}

/* ---- DequantizeLinear ------------------------------------------------------------------ */

/* The float32 destination: x's own layout; a plain 3-5-D x read by oneDNN nodes is
 * written in the plan's activation layout (what a convolution reads next). */
static dnnl_status_t dequantize_dst(dn_build *b, const gl_tensor *x, const dnnl_memory_desc_t *xmd,
                                    dnnl_memory_desc_t *y)
{
    dnnl_format_tag_t tag = dn_act_tag(b->c, x->rank);
    if (!x->layout && tag != dnnl_format_tag_undef && dn_read_by_backend(b->k))
        return dn_md_tag(y, x->rank, x->dims, tag);
    *y = *xmd;
    y->data_type = dnnl_f32;
    return dnnl_success;
}

static gl_status dequantize_build(dn_build *b, const qparams *pq, dnnl_primitive_desc_t *pd)
{
    const qparams q = *pq;
    if ((!is_quant8(q.x->dtype) && q.x->dtype != GL_DT_INT32) ||
        (q.zero && q.zero->dtype != q.x->dtype))
        return dn_refuse(b, "not uint8, int8 or int32 with a zero point of that type");
    if (q.x->dtype == GL_DT_INT32 && !q.zero_all_0)
        return dn_refuse(b, "an int32 zero point (oneDNN subtracts it in float32)");
    if (!q.zero_all_same)
        return dn_refuse(b, "per-axis zero points that differ (oneDNN's reorder takes one)");
    if (!q.x->layout && q.x->count < DN_OPS_SMALL)
        return dn_refuse(b, "%lld elements: below the oneDNN threshold (%d)",
                         (long long)q.x->count, DN_OPS_SMALL);
    dnnl_memory_desc_t xmd, ymd;
    dnnl_primitive_attr_t attr = NULL;
    int32_t zero = q.zero ? (int32_t)gl_elem_i64(q.zero, 0) : 0;
    dnnl_status_t r = dn_md_of(q.x, &xmd);
    if (r == dnnl_success)
        r = dequantize_dst(b, q.x, &xmd, &ymd);
    if (r == dnnl_success)
        r = dnnl_primitive_attr_create(&attr);
    if (r == dnnl_success)
        r = dnnl_primitive_attr_set_output_scales(attr, q.scale->count,
                                                  q.axis < 0 ? 0 : 1 << q.axis,
                                                  gl_tensor_data(q.scale));
    if (r == dnnl_success && zero != 0)
        r = dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &zero);
    if (r == dnnl_success)
        r = dnnl_reorder_primitive_desc_create(pd, &xmd, b->c->engine, &ymd, b->c->engine, attr);
    dnnl_primitive_attr_destroy(attr);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no reorder for this (%s)", dnnl_status2str(r));
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "this layout");
    /* an infinite or NaN scale: the reference's product, not oneDNN's */
    gl_status st = dn_guard_specials(b, true);
    if (st != GL_OK)
        return st;
    dn_bind_input_from(b, DNNL_ARG_FROM, 0, &xmd, NULL);
    dn_bind_output(b, DNNL_ARG_TO, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), q.x->rank,
                   q.x->dims);
    return GL_OK;
}

/* Both rows: the parameters both ops read, then the op's own primitive. */
static gl_status quant_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    qparams q;
    const char *why = qparams_read(b, &q);
    if (why)
        return dn_refuse(b, "%s", why);
    return gl_node_is(b->k->node, "QuantizeLinear") ? quantize_build(b, &q, pd)
                                                    : dequantize_build(b, &q, pd);
}

/* ---- MatMulInteger and ConvInteger ---------------------------------------------------- */

/* oneDNN's int8 matmul and convolution convert their int32 accumulators through float32
 * on the way to an s32 destination (measured: 3,555 of 4,096 matmul sums above 2^24 came
 * back rounded to float's precision), where ONNX keeps every bit. A product whose sums
 * cannot pass 2^24 is exact: for each output (a column of MatMulInteger's B, an output
 * channel of ConvInteger's W) sum |w| times the largest |x| oneDNN may add up before it
 * subtracts the zero point (256 for its internal shift of int8 sources) plus |zero|. */
#define EXACT_IN_FLOAT 16777216.0 /* 2^24 */

/* Output o of `outputs` sums the weights i with (i / per) % outputs == o: a matrix
 * [K, N]'s columns (per 1), a convolution's [OC, ...] rows (per = count / OC). */
static bool sums_fit_float(const gl_tensor *w, int64_t outputs, int64_t per, int64_t zero)
{
    double worst = 0;
    double *sum = gl_xcalloc((size_t)(outputs ? outputs : 1), sizeof(*sum));
    for (int64_t i = 0; i < w->count; i++)
        sum[(i / per) % outputs] += fabs(gl_elem_f64(w, i));
    for (int64_t o = 0; o < outputs; o++)
        worst = sum[o] > worst ? sum[o] : worst;
    free(sum);
    return worst * (256.0 + (double)llabs(zero)) <= EXACT_IN_FLOAT;
}


/* An integer product's operands as its build reads them: x (input 0) and the fixed
 * weights (input 1), zero points (inputs 2 and 3). */
typedef struct int_operands {
    const gl_tensor *x, *w;
    int32_t zero; /* x's */
} int_operands;

/* Why oneDNN does not take these operands exactly (NULL: it does). The sums are checked
 * by the caller, which knows which weights make one output. */
static const char *int_operands_read(const gl_kernel_ctx *k, int_operands *o)
{
    const gl_node *n = k->node;
    o->x = k->in[0];
    o->w = k->n_inputs > 1 ? k->in[1] : NULL;
    const gl_tensor *x_zero = k->n_inputs > 2 ? k->in[2] : NULL;
    const gl_tensor *w_zero = k->n_inputs > 3 ? k->in[3] : NULL;
    if (!o->x || !o->w || !is_quant8(o->x->dtype) || !is_quant8(o->w->dtype) || o->w->layout ||
        o->x->count == 0 || o->w->count == 0)
        return "not non-empty int8 or uint8 operands";
    if (!dn_cpu_has_vnni())
        return "no VNNI on this CPU (oneDNN's int8 sums saturate in int16)";
    for (size_t i = 1; i < n->n_inputs; i++)
        if (!dn_value_fixed(n->inputs[i]))
            return "weights or a zero point computed at run time";
    if (x_zero && (x_zero->count != 1 || x_zero->dtype != o->x->dtype))
        return "a zero point of the source per row";
    o->zero = x_zero ? (int32_t)gl_elem_i64(x_zero, 0) : 0;
    for (int64_t i = 0; w_zero && i < w_zero->count; i++)
        if (gl_elem_i64(w_zero, i) != 0)
            return "the weights' zero point is not 0 (oneDNN's int8 weights have none)";
    /* uint8 weights of at most 127 are the same bytes as int8 ones */
    for (int64_t i = 0; o->w->dtype == GL_DT_UINT8 && i < o->w->count; i++)
        if (gl_elem_i64(o->w, i) > 127)
            return "uint8 weights above 127 (oneDNN takes int8 weights)";
    if (o->x->count < DN_OPS_SMALL && !o->x->layout)
        return "below the oneDNN threshold";
    return NULL;
}

#define SUMS_REFUSAL "sums may pass 2^24 (oneDNN rounds its int32 results through float32)"

/* Primitive attributes with x's zero point (*attr NULL when it is 0). */
static dnnl_status_t zero_point_attr(int32_t zero, dnnl_primitive_attr_t *attr)
{
    *attr = NULL;
    if (zero == 0)
        return dnnl_success;
    dnnl_status_t r = dnnl_primitive_attr_create(attr);
    if (r == dnnl_success)
        r = dnnl_primitive_attr_set_zero_points(*attr, DNNL_ARG_SRC, 1, 0, &zero);
    return r;
}

static gl_status matmulinteger_build(dn_build *b, const int_operands *po,
                                     dnnl_primitive_desc_t *pd)
{
    const int_operands o = *po;
    const gl_tensor *a = o.x, *w = o.w;
    if (a->layout || a->rank < 2 || w->rank != 2 || a->dims[a->rank - 1] != w->dims[0])
        return dn_refuse(b, "not a plain A of rank 2 or more times a matrix B");
    if (!sums_fit_float(w, w->dims[1], 1, o.zero))
        return dn_refuse(b, SUMS_REFUSAL);
    int64_t kdim = w->dims[0], cols = w->dims[1], rows = a->count / (kdim ? kdim : 1);
    /* one tall product: A's leading dims are rows of one matrix */
    int64_t a_dims[2] = {rows, kdim}, y_dims[2] = {rows, cols};
    dnnl_memory_desc_t amd, wmd, wany, ymd;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_status_t r = plain_md(&amd, 2, a_dims, dn_dtype(a->dtype));
    if (r == dnnl_success)
        r = plain_md(&wmd, 2, w->dims, dnnl_s8);
    if (r == dnnl_success)
        r = plain_md(&ymd, 2, y_dims, dnnl_s32);
    if (r == dnnl_success)
        r = dnnl_memory_desc_init_by_tag(&wany, 2, w->dims, dnnl_s8, dnnl_format_tag_any);
    if (r == dnnl_success)
        r = zero_point_attr(o.zero, &attr);
    dnnl_matmul_desc_t md;
    if (r == dnnl_success)
        r = dnnl_matmul_desc_init(&md, &amd, &wany, NULL, &ymd);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &md, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no int8 matmul for this (%s)", dnnl_status2str(r));
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "this int8 product");
    dn_bind_input_from(b, DNNL_ARG_SRC, 0, &amd, NULL);
    /* B is fixed: packed once when it is an initializer (a Constant's, every run) */
    dn_bind_input_from(b, DNNL_ARG_WEIGHTS, 1, &wmd, dn_pd_md(*pd, dnnl_query_weights_md, 0));
    int64_t out[DNNL_MAX_NDIMS];
    memcpy(out, a->dims, (size_t)a->rank * sizeof(*out));
    out[a->rank - 1] = cols;
    dn_bind_output(b, DNNL_ARG_DST, 0, &ymd, a->rank, out);
    return GL_OK;
}

/* ConvInteger's window in oneDNN's terms (ops/window.h, as the Conv row reads it); false
 * when the attributes are invalid (the reference kernel then says why). */
static bool int_conv_window(const gl_kernel_ctx *k, const gl_tensor *x, const gl_tensor *w,
                            dnnl_dims_t strides, dnnl_dims_t dilates, dnnl_dims_t pad_l,
                            dnnl_dims_t pad_r, int64_t *out)
{
    int nsp = x->rank - 2;
    gl_window win;
    if (gl_window_read(k->node, k->where, nsp, w->dims + 2, &win) != GL_OK ||
        gl_window_resolve(&win, x->dims + 2, k->where, out + 2) != GL_OK) {
        gl_error_clear();
        return false;
    }
    for (int d = 0; d < nsp; d++) {
        strides[d] = win.stride[d];
        dilates[d] = win.dil[d] - 1; /* oneDNN counts the gaps between taps */
        pad_l[d] = win.pad_begin[d];
        pad_r[d] = win.pad_end[d];
    }
    out[0] = x->dims[0];
    out[1] = w->dims[0];
    return true;
}

/* oneDNN pads a convolution's source with its zero point (measured: a padded tap adds
 * nothing), as ONNX's ConvInteger subtracts the zero point and pads with 0. Source and
 * destination in the layouts oneDNN picks for int8 (nhwc); grouped weights [OC, C/G, k...]
 * are the same bytes as [G, OC/G, C/G, k...]. */
static gl_status convinteger_build(dn_build *b, const int_operands *po,
                                   dnnl_primitive_desc_t *pd)
{
    const int_operands o = *po;
    const gl_tensor *x = o.x, *w = o.w;
    int64_t group = gl_node_attr_int(b->k->node, "group", 1);
    if (x->rank < 3 || x->rank > 5 || w->rank != x->rank || group < 1 ||
        x->dims[1] != w->dims[1] * group || w->dims[0] % group != 0)
        return dn_refuse(b, "not a 1-D, 2-D or 3-D convolution of matching shapes");
    dnnl_dims_t strides, dilates, pad_l, pad_r;
    int64_t out[DNNL_MAX_NDIMS];
    if (!int_conv_window(b->k, x, w, strides, dilates, pad_l, pad_r, out))
        return dn_refuse(b, "a window the reference kernel judges");
    if (!sums_fit_float(w, w->dims[0], w->count / w->dims[0], o.zero))
        return dn_refuse(b, SUMS_REFUSAL);
    int rank = x->rank;
    int64_t gdims[DNNL_MAX_NDIMS] = {group, w->dims[0] / group};
    memcpy(gdims + 2, w->dims + 1, (size_t)(rank - 1) * sizeof(int64_t));
    dnnl_memory_desc_t xmd, src, wmd, wany, dst;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_status_t r = dn_md_of(x, &xmd);
    if (r == dnnl_success)
        r = dnnl_memory_desc_init_by_tag(&src, rank, x->dims, xmd.data_type, dnnl_format_tag_any);
    if (r == dnnl_success)
        r = group > 1 ? plain_md(&wmd, rank + 1, gdims, dnnl_s8)
                      : plain_md(&wmd, rank, w->dims, dnnl_s8);
    if (r == dnnl_success)
        r = dnnl_memory_desc_init_by_tag(&wany, wmd.ndims, wmd.dims, dnnl_s8, dnnl_format_tag_any);
    if (r == dnnl_success)
        r = dnnl_memory_desc_init_by_tag(&dst, rank, out, dnnl_s32, dnnl_format_tag_any);
    if (r == dnnl_success)
        r = zero_point_attr(o.zero, &attr);
    dnnl_convolution_desc_t cd;
    if (r == dnnl_success)
        r = dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                       dnnl_convolution_direct, &src, &wany,
                                                       NULL, &dst, strides, dilates, pad_l,
                                                       pad_r);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &cd, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no int8 convolution for this (%s)",
                         dnnl_status2str(r));
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "this int8 convolution");
    dn_bind_input_from(b, DNNL_ARG_SRC, 0, &xmd, dn_pd_md(*pd, dnnl_query_src_md, 0));
    dn_bind_input_from(b, DNNL_ARG_WEIGHTS, 1, &wmd, dn_pd_md(*pd, dnnl_query_weights_md, 0));
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), rank, out);
    return GL_OK;
}

/* Both rows: the operands both ops read, then the op's own primitive. */
static gl_status int_product_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    int_operands o;
    const char *why = int_operands_read(b->k, &o);
    if (why)
        return dn_refuse(b, "%s", why);
    return gl_node_is(b->k->node, "ConvInteger") ? convinteger_build(b, &o, pd)
                                                 : matmulinteger_build(b, &o, pd);
}

/* ---- claims and the table ---------------------------------------------------------------- */

/* Input i may be of one of the dtypes (unknown: yes). */
static bool input_dtype_in(const gl_node *n, size_t i, const gl_dtype *ok, size_t n_ok)
{
    const gl_value *v = i < n->n_inputs ? n->inputs[i] : NULL;
    if (!v || v->type.kind == GL_TYPE_OPAQUE)
        return false;
    if (v->type.kind != GL_TYPE_TENSOR || v->type.dtype == GL_DT_UNDEFINED)
        return true;
    for (size_t j = 0; j < n_ok; j++)
        if (v->type.dtype == ok[j])
            return true;
    return false;
}

static bool quantize_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    static const gl_dtype ok[] = {GL_DT_FLOAT};
    if (n->n_inputs < 2 || !input_dtype_in(n, 0, ok, GL_ARRAY_LEN(ok))) {
        snprintf(why, len, "not a float32 input with a scale");
        return false;
    }
    return true;
}

static bool dequantize_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    static const gl_dtype ok[] = {GL_DT_UINT8, GL_DT_INT8, GL_DT_INT32};
    if (n->n_inputs < 2 || !input_dtype_in(n, 0, ok, GL_ARRAY_LEN(ok))) {
        snprintf(why, len, "not a uint8, int8 or int32 input with a scale");
        return false;
    }
    return true;
}

/* MatMulInteger, ConvInteger */
static bool int_product_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    static const gl_dtype ok[] = {GL_DT_UINT8, GL_DT_INT8};
    if (n->n_inputs < 2 || !input_dtype_in(n, 0, ok, GL_ARRAY_LEN(ok)) ||
        !input_dtype_in(n, 1, ok, GL_ARRAY_LEN(ok))) {
        snprintf(why, len, "not two uint8 or int8 operands");
        return false;
    }
    return true;
}

static const dn_op quant_ops[] = {
    {"", "QuantizeLinear", 10, quantize_claim, quant_build, NULL},
    {"", "DequantizeLinear", 10, dequantize_claim, quant_build, NULL},
    {"", "MatMulInteger", 10, int_product_claim, int_product_build, NULL},
    {"", "ConvInteger", 10, int_product_claim, int_product_build, NULL},
};
const dn_op_table dn_quant_ops = {quant_ops, GL_ARRAY_LEN(quant_ops)};

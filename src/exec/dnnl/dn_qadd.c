/* dn_qadd.c — a quantized Add (dn.h: dn_qadd) as ONE oneDNN 2.6 int8 binary primitive:
 * the u8/s8 sources as they arrive (nhwc from the int8 convolutions: no reorder), the
 * destination u8/s8 in the first source's layout.
 *
 * oneDNN's binary takes a scale per source and post-ops, but no zero points. So, with f
 * the factor dn_qpost_chain gives (1 / y_scale when the activations commute with a
 * positive scale, else 1):
 *   scales        f * a_scale on a_q, f * b_scale on b_q
 *   binary add    -f * (a_scale * a_zero + b_scale * b_zero)   (a scalar operand; absent
 *                 when it is 0): now f * s, s the real sum
 *   the chain     the activations with 1 / y_scale among them, then round (half to even)
 *   binary add    y_zero (a scalar operand; absent when 0): the zero point after the
 *                 rounding, as ONNX adds it, so that a tie with an odd zero point rounds
 *                 as ONNX's does (measured: bit-exact on power-of-two scales)
 * and the conversion to u8/s8 saturates. The two shifts are binary post-ops, not linear
 * ones: a second linear step would repeat an algorithm (dn_posts_repeat_alg).
 *
 * Add commutes: the source of the output's shape is oneDNN's first (it broadcasts only
 * its second); a second source of the full shape is read in the first one's layout.
 * oneDNN's reference binary is refused (the group's members run).
 */
#include "exec/dnnl/dn_opkit.h"

#include <string.h>

/* The most post-ops: the shift, the chain, the zero point. */
#define MAX_POSTS (DN_QMAX_POSTS + 2)

static bool same_dims(const gl_tensor *t, int rank, const int64_t *dims)
{
    return t->rank == rank && memcmp(t->dims, dims, (size_t)rank * sizeof(int64_t)) == 0;
}

/* The broadcast shape of x and y in out (rank *rank); false when they do not broadcast. */
static bool broadcast(const gl_tensor *x, const gl_tensor *y, int64_t *out, int *rank)
{
    int r = x->rank > y->rank ? x->rank : y->rank;
    for (int i = 0; i < r; i++) {
        int ix = i - (r - x->rank), iy = i - (r - y->rank);
        int64_t dx = ix >= 0 ? x->dims[ix] : 1, dy = iy >= 0 ? y->dims[iy] : 1;
        if (dx != dy && dx != 1 && dy != 1)
            return false;
        out[i] = dx == 1 ? dy : dx;
    }
    *rank = r;
    return true;
}

/* One scalar operand of a binary post-op: all dims 1, f32. */
typedef struct scalar_op {
    dnnl_memory_desc_t md;
    float value;
    int at; /* its index in the chain, -1: absent */
} scalar_op;

/* The post-ops of q (see the header) in post, *n of them; the factor for the scales. */
static bool qadd_posts(const dn_qadd *q, int rank, dn_post *post, size_t *n, float *factor,
                       scalar_op *shift, scalar_op *zero, const char **why)
{
    int64_t ones[DNNL_MAX_NDIMS];
    for (int i = 0; i < rank; i++)
        ones[i] = 1;
    if (dn_md_plain(&shift->md, rank, ones, NULL) != dnnl_success) {
        *why = "a rank oneDNN does not describe";
        return false;
    }
    zero->md = shift->md;
    dn_post chain[DN_QMAX_POSTS];
    size_t k = 0;
    if (!dn_qpost_chain(q->acts, q->n_acts, q->y_scale, chain, &k, factor, why))
        return false;
    shift->value = -*factor * (q->a_scale * (float)q->a_zero + q->b_scale * (float)q->b_zero);
    zero->value = (float)q->y_zero;
    *n = 0;
    shift->at = shift->value != 0.0f ? (int)(*n)++ : -1;
    if (shift->at >= 0)
        post[shift->at] = (dn_post){dnnl_binary_add, 0.0f, 0.0f, 1.0f, &shift->md};
    memcpy(post + *n, chain, k * sizeof(*chain));
    *n += k;
    zero->at = q->y_zero ? (int)(*n)++ : -1;
    if (zero->at >= 0)
        post[zero->at] = (dn_post){dnnl_binary_add, 0.0f, 0.0f, 1.0f, &zero->md};
    return true;
}

/* Attributes: the post-ops and the two sources' scales. */
static dnnl_status_t qadd_attr(const dn_post *post, size_t n, float scale0, float scale1,
                               dnnl_primitive_attr_t *attr)
{
    dnnl_status_t r = dn_attr_post_ops(post, n, attr);
    if (r == dnnl_success)
        r = dnnl_primitive_attr_set_scales(*attr, DNNL_ARG_SRC_0, 1, 0, &scale0);
    if (r == dnnl_success)
        r = dnnl_primitive_attr_set_scales(*attr, DNNL_ARG_SRC_1, 1, 0, &scale1);
    return r;
}

static void bind_scalar(dn_build *b, const scalar_op *op)
{
    if (op->at < 0)
        return;
    float *f = dn_bind_own(b, DNNL_ARG_ATTR_MULTIPLE_POST_OP(op->at) | DNNL_ARG_SRC_1, &op->md);
    *f = op->value;
}

gl_status dn_qadd_build(dn_build *b, const dn_qadd *q, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *a = q->a < k->n_inputs ? k->in[q->a] : NULL;
    const gl_tensor *c = q->b < k->n_inputs ? k->in[q->b] : NULL;
    if (!a || !c || a->dtype != q->a_dtype || c->dtype != q->b_dtype)
        return dn_qrefuse(b, q->refused, "the sources are not %s and %s as their zero points",
                          gl_dtype_name(q->a_dtype), gl_dtype_name(q->b_dtype));
    if (a->count == 0 || c->count == 0)
        return dn_qrefuse(b, q->refused, "an empty operand");
    int64_t out[GL_MAX_RANK];
    int rank = 0;
    if (!broadcast(a, c, out, &rank) || rank == 0 || rank > DNNL_MAX_NDIMS)
        return dn_qrefuse(b, q->refused, "operands that do not broadcast to one of rank 1..%d",
                          DNNL_MAX_NDIMS);
    /* src0: the operand of the output's shape; of two, prefer one in a layout */
    bool full_a = same_dims(a, rank, out), full_b = same_dims(c, rank, out);
    if (!full_a && !full_b)
        return dn_qrefuse(b, q->refused, "both operands broadcast");
    bool swap = !full_a || (full_b && !a->layout && c->layout);
    size_t s0 = swap ? q->b : q->a, s1 = swap ? q->a : q->b;
    const gl_tensor *src1 = swap ? a : c;
    const dnnl_memory_desc_t *md0 = &b->md[s0];
    bool full1 = same_dims(src1, rank, out);
    dnnl_memory_desc_t md1 = *md0, dst = *md0;
    int64_t d1[DNNL_MAX_NDIMS];
    for (int i = 0; i < rank; i++) {
        int j = i - (rank - src1->rank);
        d1[i] = j >= 0 ? src1->dims[j] : 1;
    }
    if ((!full1 && dn_md_plain(&md1, rank, d1, NULL) != dnnl_success) ||
        dn_md_retype(&md1, src1->dtype) != dnnl_success ||
        dn_md_retype(&dst, q->y_dtype) != dnnl_success)
        return dn_qrefuse(b, q->refused, "shapes oneDNN does not describe");
    dn_post post[MAX_POSTS];
    size_t n_post = 0;
    float factor = 1.0f;
    scalar_op shift, zero;
    const char *why = NULL;
    if (!qadd_posts(q, rank, post, &n_post, &factor, &shift, &zero, &why))
        return dn_qrefuse(b, q->refused, "%s", why);
    float scale0 = factor * (swap ? q->b_scale : q->a_scale);
    float scale1 = factor * (swap ? q->a_scale : q->b_scale);
    dnnl_primitive_attr_t attr = NULL;
    dnnl_binary_desc_t bd;
    dnnl_status_t r = qadd_attr(post, n_post, scale0, scale1, &attr);
    if (r == dnnl_success)
        r = dnnl_binary_desc_init(&bd, dnnl_binary_add, md0, &md1, &dst);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &bd, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (r != dnnl_success)
        return dn_qrefuse(b, q->refused, "oneDNN has no int8 binary for this (%s)",
                          dnnl_status2str(r));
    if (dn_pd_is_ref(*pd)) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        return dn_qrefuse(b, q->refused, "oneDNN would run its reference int8 binary");
    }
    dn_bind_input(b, DNNL_ARG_SRC_0, s0, NULL);
    if (full1)
        dn_bind_input(b, DNNL_ARG_SRC_1, s1, &md1);
    else
        dn_bind_input_view(b, DNNL_ARG_SRC_1, s1, &md1);
    bind_scalar(b, &shift);
    bind_scalar(b, &zero);
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), rank, out);
    return GL_OK;
}

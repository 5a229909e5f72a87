/* dn_prelu.c — PRelu as oneDNN prelu.
 *
 * The slope broadcasts to X as numpy does from opset 7 (right-aligned: a [C] slope on
 * NCHW runs along W, not C), and before opset 7 as Caffe's PReLU did (one value, or one
 * per channel when its one dim is X's C). The slope is described with X's rank (leading
 * 1s) and packed once, when it is a constant, into the layout oneDNN picks. oneDNN 2.6
 * vectorizes a per-channel slope on nchw, nhwc and nChw16c (and a full-shape one); other
 * broadcasts ([1,1,H,W], [W], ...) only in its reference code, which stays refused (see
 * dn_opkit.h). A single slope that holds the same value on every run is a leaky ReLU:
 * an eltwise relu with that alpha (PyTorch's default nn.PReLU() exports one). X keeps its
 * layout. Small plain tensors stay on the reference kernel.
 */
#include "exec/dnnl/dn_opkit.h"

#include <string.h>

/* The slope's dims as oneDNN reads them (X's rank); false when they do not broadcast. */
static bool slope_dims(const gl_kernel_ctx *k, const gl_tensor *x, const gl_tensor *s,
                       int64_t *wd)
{
    for (int d = 0; d < x->rank; d++)
        wd[d] = 1;
    if (k->opset < 7 && s->count == 1)
        return true;
    if (k->opset < 7 && s->rank == 1 && x->rank >= 2 && s->dims[0] == x->dims[1]) {
        wd[1] = s->dims[0];
        return true;
    }
    if (s->rank > x->rank)
        return false;
    for (int d = 0; d < s->rank; d++) {
        int xd = d + x->rank - s->rank;
        if (s->dims[d] != 1 && s->dims[d] != x->dims[xd])
            return false;
        wd[xd] = s->dims[d];
    }
    return true;
}

typedef struct prelu_arg {
    int rank;
    const int64_t *wd;
    dnnl_memory_desc_t w;
} prelu_arg;

/* Way 0: the slope in the layout oneDNN picks; way 1: plain. */
static dnnl_status_t prelu_way(dn_build *b, void *arg, int way, dnnl_primitive_desc_t *pd)
{
    prelu_arg *a = arg;
    dnnl_status_t r = way == 0 ? dn_md_tag(&a->w, a->rank, a->wd, dnnl_format_tag_any)
                               : dn_md_plain(&a->w, a->rank, a->wd, NULL);
    dnnl_prelu_desc_t d;
    if (r == dnnl_success)
        r = dnnl_prelu_forward_desc_init(&d, dnnl_forward_inference, &b->md[0], &a->w);
    return r == dnnl_success ? dnnl_primitive_desc_create(pd, &d, NULL, b->c->engine, NULL) : r;
}

static gl_status prelu_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = dn_f32_input(k, 0), *s = dn_f32_input(k, 1);
    if (!x || !s || x->rank < 1 || x->count == 0 || s->count == 0 || s->layout)
        return dn_refuse(b, "X and slope are not non-empty plain float32 tensors");
    int64_t wd[DNNL_MAX_NDIMS];
    if (x->rank > DNNL_MAX_NDIMS || !slope_dims(k, x, s, wd))
        return dn_refuse(b, "the slope does not broadcast to X");
    if (!x->layout && x->count < DN_OPS_SMALL)
        return dn_refuse(b, "%lld elements: below the oneDNN threshold (%d)",
                         (long long)x->count, DN_OPS_SMALL);
    bool leaky = s->count == 1 && dn_value_fixed(k->node->inputs[1]);
    prelu_arg a = {.rank = x->rank, .wd = wd};
    dnnl_memory_desc_t given;
    dnnl_eltwise_desc_t ed;
    float alpha = leaky ? *(const float *)gl_tensor_data(s) : 1.0f;
    if (leaky) {
        if (dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, dnnl_eltwise_relu,
                                           &b->md[0], alpha, 0.0f) != dnnl_success ||
            dnnl_primitive_desc_create(pd, &ed, NULL, b->c->engine, NULL) != dnnl_success)
            return dn_refuse(b, "oneDNN has no eltwise for this");
    } else if (dn_md_plain(&given, x->rank, wd, NULL) != dnnl_success ||
               dn_pd_pick(b, &a, 2, prelu_way, pd) < 0) {
        return dn_refuse(b, "oneDNN has no prelu for this");
    }
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "a slope that is neither per channel nor one value");
    /* a slope of 0: oneDNN's relu drops a NaN (dn_special.c) */
    gl_status st = dn_guard_specials(b, dn_alg_drops_specials(dnnl_eltwise_relu, alpha, 0.0f));
    if (st != GL_OK)
        return st;
    dn_bind_input(b, DNNL_ARG_SRC, 0, NULL);
    if (!leaky)
        dn_bind_input_from(b, DNNL_ARG_WEIGHTS, 1, &given,
                           dn_pd_md(*pd, dnnl_query_weights_md, 0));
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), x->rank, x->dims);
    return GL_OK;
}

static bool prelu_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    return dn_inputs_fit(n, 1, DNNL_MAX_NDIMS, why, len);
}

static const dn_op prelu_ops[] = {
    {"", "PRelu", 1, prelu_claim, prelu_build, NULL},
};
const dn_op_table dn_prelu_ops = {prelu_ops, GL_ARRAY_LEN(prelu_ops)};

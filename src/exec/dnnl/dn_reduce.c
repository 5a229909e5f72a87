/* dn_reduce.c — Reduce* as oneDNN reduction, Softmax and LogSoftmax as softmax_v2.
 *
 *   Reduce*  ReduceMean/Sum/Max/Min/Prod map to the reduction algorithms of the same
 *       name; ReduceL1 and ReduceL2 are norm_lp_sum with p 1 and 2, ReduceSumSquare is
 *       norm_lp_power_p_sum with p 2 (eps 0: the plain norms), ReduceLogSum a sum with a
 *       log post-op. ReduceLogSumExp has no algorithm (the reference shifts by the max).
 *       Axes come from the attribute, or from input 1 from opset 13 (ReduceSum) and 18
 *       (the others): the build reads them; computed at run time, they are a few
 *       integers the shape guard keys by value (dn.h), so other axes build again.
 *       noop_with_empty_axes with no axes is a copy: the reference kernel.
 *       The destination is plain with the reduced dims kept as 1: keepdims=0 only gives
 *       the output those bytes under the squeezed dims. oneDNN 2.6 vectorizes a
 *       reduction of the innermost dims of a plain source (and not the norms); a source
 *       in a channel-blocked or nhwc layout is read as it is only when that gives a
 *       vectorized kernel, else converted to plain first; what only oneDNN's reference
 *       code does (a middle dim, L1/L2/SumSquare) stays on our reference kernel.
 *       ReduceMean and ReduceMax of every spatial dim of an nhwc source (a CNN's global
 *       pool before its classifier) are a pooling of the whole window instead: oneDNN
 *       vectorizes that over the channels, where its reduction of nhwc's middle dims is
 *       reference code and the plain way costs a conversion of the whole tensor
 *       (shufflenet's [1,1024,7,7]: 43 us of reorder and reduction); a channel-blocked
 *       source is converted to nhwc for it.
 *   Softmax, LogSoftmax  softmax_v2 (accurate / log). Before opset 13 the input is
 *       coerced to 2-D around `axis` ([prod(dims before), prod(dims from)], the softmax
 *       over the second): a plain view. From opset 13 the softmax runs over `axis` in the
 *       input's layout when oneDNN vectorizes that (the axis innermost: the channels of
 *       nhwc and nChw16c, the last dim of plain), else on the plain tensor, else (another
 *       axis of a plain tensor) on our reference kernel.
 */
#include "exec/dnnl/dn_opkit.h"

#include <stdlib.h>
#include <string.h>

/* ---- Reduce* ------------------------------------------------------------------------ */

typedef struct red_row {
    const char *op;
    int axes_input_since; /* opset from which axes is input 1, not an attribute */
    dnnl_alg_kind_t alg;
    float p;
    bool log; /* a log post-op */
} red_row;

static const red_row red_rows[] = {
    {"ReduceMean", 18, dnnl_reduction_mean, 0, false},
    {"ReduceSum", 13, dnnl_reduction_sum, 0, false},
    {"ReduceMax", 18, dnnl_reduction_max, 0, false},
    {"ReduceMin", 18, dnnl_reduction_min, 0, false},
    {"ReduceProd", 18, dnnl_reduction_mul, 0, false},
    {"ReduceL1", 18, dnnl_reduction_norm_lp_sum, 1, false},
    {"ReduceL2", 18, dnnl_reduction_norm_lp_sum, 2, false},
    {"ReduceSumSquare", 18, dnnl_reduction_norm_lp_power_p_sum, 2, false},
    {"ReduceLogSum", 18, dnnl_reduction_sum, 0, true},
};

static const red_row *red_row_of(const gl_node *n)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(red_rows); i++)
        if (strcmp(red_rows[i].op, n->op_type) == 0)
            return &red_rows[i];
    return NULL;
}

typedef struct red_arg {
    const red_row *row;
    const gl_tensor *x;
    dnnl_memory_desc_t plain, dst;
    dnnl_primitive_attr_t attr;
    /* the pooling's algorithm (0: none), its source (the node's, or nhwc when that
     * arrives channel-blocked) and destination, [N,C,1,...] as nhwc */
    dnnl_alg_kind_t pool;
    dnnl_memory_desc_t pool_src, pooled;
} red_arg;

/* Way 1: the reduction of every spatial dim as a pooling of the whole window. */
static dnnl_status_t pool_way(dn_build *b, red_arg *a, dnnl_primitive_desc_t *pd)
{
    if (!a->pool)
        return dnnl_unimplemented;
    dnnl_dims_t strides, kernel, dilation, pad;
    for (int d = 2; d < a->x->rank; d++) {
        strides[d - 2] = 1;
        kernel[d - 2] = a->x->dims[d];
        dilation[d - 2] = pad[d - 2] = 0;
    }
    dnnl_pooling_v2_desc_t d;
    dnnl_status_t r = dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_inference, a->pool,
                                                        &a->pool_src, &a->pooled, strides, kernel,
                                                        dilation, pad, pad);
    return r == dnnl_success ? dnnl_primitive_desc_create(pd, &d, a->attr, b->c->engine, NULL)
                             : r;
}

static dnnl_status_t reduce_way(dn_build *b, void *arg, int way, dnnl_primitive_desc_t *pd)
{
    red_arg *a = arg;
    if (way == 1)
        return pool_way(b, a, pd);
    if (way == 2 && !a->x->layout)
        return dnnl_unimplemented; /* the same as way 0 */
    dnnl_reduction_desc_t d;
    dnnl_status_t r = dnnl_reduction_desc_init(&d, a->row->alg, way == 0 ? &b->md[0] : &a->plain,
                                               &a->dst, a->row->p, 0.0f);
    return r == dnnl_success ? dnnl_primitive_desc_create(pd, &d, a->attr, b->c->engine, NULL)
                             : r;
}

/* Which dims the node reduces (reduced[d]); false (why set) when the build cannot tell or
 * the reference kernel should decide. */
static bool reduced_dims(const gl_kernel_ctx *k, const red_row *row, int rank, bool *reduced,
                         const char **why)
{
    int64_t *axes = NULL;
    size_t n_axes = 0;
    const int64_t *attr = NULL;
    bool from_input = k->opset >= row->axes_input_since;
    if (from_input) {
        if (!dn_input_ints(k, 1, &axes, &n_axes)) {
            *why = "axes are not integers";
            return false;
        }
        attr = axes;
    } else {
        attr = gl_attr_ints(k->node, "axes", &n_axes);
    }
    bool ok = true;
    if (n_axes == 0 && from_input && gl_node_attr_int(k->node, "noop_with_empty_axes", 0)) {
        *why = "noop_with_empty_axes with no axes: a copy";
        ok = false;
    }
    for (int d = 0; d < rank; d++)
        reduced[d] = n_axes == 0;
    for (size_t i = 0; i < n_axes && ok; i++) {
        int d;
        ok = gl_axis_normalize(attr[i], rank, false, k->where, "axes", &d) && !reduced[d];
        if (ok)
            reduced[d] = true;
        else
            *why = "axes out of range or repeated";
    }
    gl_error_clear();
    free(axes);
    return ok;
}

static gl_status reduce_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    red_arg a = {.row = red_row_of(k->node), .x = dn_f32_input(k, 0)};
    const gl_tensor *x = a.x;
    if (!a.row || !x || x->rank < 1 || x->count == 0)
        return dn_refuse(b, "not a non-empty float32 tensor");
    if (!dn_input_keyed(k, 1))
        return dn_refuse(b, "axes computed at run time that are not %d integers or fewer",
                         DN_KEY_VALS);
    bool reduced[GL_MAX_RANK];
    const char *why = "";
    if (!reduced_dims(k, a.row, x->rank, reduced, &why))
        return dn_refuse(b, "%s", why);
    bool keep = gl_node_attr_int(k->node, "keepdims", 1) != 0, any = false;
    int64_t kept[GL_MAX_RANK], out[GL_MAX_RANK];
    int out_rank = 0;
    for (int d = 0; d < x->rank; d++) {
        kept[d] = reduced[d] ? 1 : x->dims[d];
        any |= reduced[d] && x->dims[d] != 1;
        if (!reduced[d] || keep)
            out[out_rank++] = kept[d];
    }
    if (!any) /* oneDNN takes a reduction only when a dim shrinks */
        return dn_refuse(b, "every reduced dim has length 1");
    dn_post log_post = {dnnl_eltwise_log, 0.0f, 0.0f, 1.0f, NULL};
    if (dn_md_plain(&a.plain, x->rank, x->dims, NULL) != dnnl_success ||
        dn_md_plain(&a.dst, x->rank, kept, NULL) != dnnl_success ||
        dn_attr_post_ops(&log_post, a.row->log ? 1 : 0, &a.attr) != dnnl_success)
        return dn_refuse(b, "shapes oneDNN does not describe");
    /* Every spatial dim and only those, of a source whose channels are innermost, or
     * blocked: converted to nhwc first (mnasnet0_5's [8,1280,7,7] in nChw16c, reduced
     * as it is or plain: 1.96 ms at two threads, ONNX Runtime's 0.06). */
    const dnnl_memory_desc_t *src = &b->md[0];
    const dnnl_blocking_desc_t *bk = &src->format_desc.blocking;
    bool innermost = bk->inner_nblks == 0 && bk->strides[1] == 1;
    bool blocked = bk->inner_nblks == 1 && bk->inner_idxs[0] == 1;
    dnnl_format_tag_t last = x->rank == 4 ? dnnl_nhwc : dnnl_ndhwc;
    bool spatial = (x->rank == 4 || x->rank == 5) && !reduced[0] && !reduced[1] &&
                   src->format_kind == dnnl_blocked && (innermost || blocked) &&
                   x->dims[1] > 1;
    for (int d = 2; d < x->rank && spatial; d++)
        spatial = reduced[d];
    a.pool_src = *src;
    if (spatial && (a.row->alg == dnnl_reduction_mean || a.row->alg == dnnl_reduction_max) &&
        dn_md_tag(&a.pooled, x->rank, kept, last) == dnnl_success &&
        (innermost || dn_md_tag(&a.pool_src, x->rank, x->dims, last) == dnnl_success))
        a.pool = a.row->alg == dnnl_reduction_mean ? dnnl_pooling_avg_exclude_padding
                                                    : dnnl_pooling_max;
    int way = dn_pd_pick(b, &a, 3, reduce_way, pd);
    dnnl_primitive_attr_destroy(a.attr);
    if (way < 0)
        return dn_refuse(b, "oneDNN has no reduction for this");
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "a reduction of these dims or with this algorithm");
    if (way == 1)
        dn_set_note(b->c, b->s, innermost ? "a pooling of the whole window (channels innermost)"
                                          : "a pooling of the whole window (converted to "
                                            "channels innermost)");
    /* max and min keep a NaN only when it is the last one read (dn_special.c) */
    gl_status st = dn_guard_specials(b, dn_alg_drops_specials(a.row->alg, 0.0f, 0.0f));
    if (st != GL_OK)
        return st;
    dn_bind_input(b, DNNL_ARG_SRC, 0,
                  way == 0 ? NULL : way == 1 ? (innermost ? NULL : &a.pool_src) : &a.plain);
    dn_bind_output(b, DNNL_ARG_DST, 0, way == 1 ? &a.pooled : &a.dst, out_rank, out);
    return GL_OK;
}

static bool reduce_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m; /* axes computed at run time are keyed by value (reduce_build checks) */
    const red_row *row = red_row_of(n);
    if (!row || !dn_input_fits(n, 0, 1, DNNL_MAX_NDIMS)) {
        snprintf(why, len, "data is not float32 of rank 1 to %d", DNNL_MAX_NDIMS);
        return false;
    }
    return true;
}

/* ---- Softmax, LogSoftmax ------------------------------------------------------------ */

typedef struct smax_arg {
    const gl_tensor *x;
    dnnl_alg_kind_t alg;
    int axis;
    dnnl_memory_desc_t plain; /* the plain tensor, or (before opset 13) its 2-D view */
    bool coerced;
} smax_arg;

static dnnl_status_t softmax_way(dn_build *b, void *arg, int way, dnnl_primitive_desc_t *pd)
{
    smax_arg *a = arg;
    if (way == 0 && a->coerced)
        return dnnl_unimplemented;
    if (way == 1 && !a->coerced && !a->x->layout)
        return dnnl_unimplemented; /* the same as way 0 */
    const dnnl_memory_desc_t *md = way == 0 ? &b->md[0] : &a->plain;
    dnnl_softmax_v2_desc_t d;
    dnnl_status_t r = dnnl_softmax_v2_forward_desc_init(&d, dnnl_forward_inference, a->alg, md,
                                                        md, a->coerced ? 1 : a->axis);
    return r == dnnl_success ? dnnl_primitive_desc_create(pd, &d, NULL, b->c->engine, NULL) : r;
}

static gl_status softmax_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    smax_arg a = {.x = dn_f32_input(k, 0)};
    const gl_tensor *x = a.x;
    if (!x || x->rank < 1 || x->count == 0)
        return dn_refuse(b, "not a non-empty float32 tensor");
    a.alg = strcmp(k->node->op_type, "LogSoftmax") == 0 ? dnnl_softmax_log : dnnl_softmax_accurate;
    a.coerced = k->opset < 13;
    if (!gl_axis_normalize(gl_node_attr_int(k->node, "axis", a.coerced ? 1 : -1), x->rank,
                           false, k->where, "axis", &a.axis)) {
        gl_error_clear();
        return dn_refuse(b, "axis out of range");
    }
    int64_t d2[2] = {gl_dims_product(x->dims, 0, a.axis),
                     gl_dims_product(x->dims, a.axis, x->rank)};
    dnnl_status_t r = a.coerced ? dn_md_plain(&a.plain, 2, d2, NULL)
                                : dn_md_plain(&a.plain, x->rank, x->dims, NULL);
    int way = r == dnnl_success ? dn_pd_pick(b, &a, 2, softmax_way, pd) : -1;
    if (way < 0)
        return dn_refuse(b, "oneDNN has no softmax for this");
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "a softmax over a dim that is not innermost");
    /* a row with a NaN is not all NaN (dn_special.c); -inf it gets right, exactly: 0 (log:
     * -inf) where ONNX has it, a row all -inf NaN as ONNX's. A causal mask puts -inf in
     * every attention's scores (GPT-2's Where): the reference ran them every run, 0.3 ms
     * of a 1.2 ms block at batch 8 */
    gl_status st = dn_guard_specials(b, dn_alg_drops_specials(a.alg, 0.0f, 0.0f));
    if (st != GL_OK)
        return st;
    b->s->specials.neg_inf_ok = true;
    if (way == 0) {
        dn_bind_input(b, DNNL_ARG_SRC, 0, NULL);
        dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), x->rank,
                       x->dims);
    } else {
        dn_bind_input_view(b, DNNL_ARG_SRC, 0, &a.plain);
        dn_bind_output(b, DNNL_ARG_DST, 0, &a.plain, x->rank, x->dims);
    }
    return GL_OK;
}

static bool softmax_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 1, DNNL_MAX_NDIMS)) {
        snprintf(why, len, "input is not float32 of rank 1 to %d", DNNL_MAX_NDIMS);
        return false;
    }
    return true;
}

#define RED(op) {"", op, 1, reduce_claim, reduce_build, NULL}
static const dn_op reduce_ops[] = {
    RED("ReduceMean"), RED("ReduceSum"), RED("ReduceMax"), RED("ReduceMin"), RED("ReduceProd"),
    RED("ReduceL1"),   RED("ReduceL2"),  RED("ReduceSumSquare"), RED("ReduceLogSum"),
    {"", "Softmax", 1, softmax_claim, softmax_build, NULL},
    {"", "LogSoftmax", 1, softmax_claim, softmax_build, NULL},
};
#undef RED
_Static_assert(GL_ARRAY_LEN(reduce_ops) == GL_ARRAY_LEN(red_rows) + 2,
               "one dn_op per reduction row, and the two softmaxes");
const dn_op_table dn_reduce_ops = {reduce_ops, GL_ARRAY_LEN(reduce_ops)};

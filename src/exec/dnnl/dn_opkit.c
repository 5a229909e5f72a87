/* dn_opkit.c — helpers the oneDNN op files share (see dn_opkit.h). */
#include "exec/dnnl/dn_opkit.h"
#include "ir/calls.h"

#include <stdlib.h>
#include <string.h>

bool dn_pd_is_ref(const_dnnl_primitive_desc_t pd)
{
    const char *impl = NULL;
    /* "ref:any", "lrn_ref:any", "bnorm_ref:any": every reference implementation of
     * oneDNN 2.6 says so in its name. */
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
           impl && strstr(impl, "ref") != NULL;
}

int dn_pd_pick(dn_build *b, void *arg, int n, dn_pd_way fn, dnnl_primitive_desc_t *pd)
{
    int kept = -1;
    *pd = NULL;
    for (int way = 0; way < n; way++) {
        dnnl_primitive_desc_t cand = NULL;
        if (fn(b, arg, way, &cand) != dnnl_success || !cand) {
            dnnl_primitive_desc_destroy(cand);
            continue;
        }
        if (!dn_pd_is_ref(cand)) {
            dnnl_primitive_desc_destroy(*pd);
            *pd = cand;
            return way;
        }
        if (kept < 0) {
            *pd = cand;
            kept = way;
        } else {
            dnnl_primitive_desc_destroy(cand);
        }
    }
    return kept;
}

gl_status dn_refuse_ref(dn_build *b, dnnl_primitive_desc_t *pd, const char *what)
{
    dnnl_primitive_desc_destroy(*pd);
    *pd = NULL;
    return dn_refuse(b, "oneDNN has only its reference code for %s", what);
}

void dn_note_ref(dn_build *b, const_dnnl_primitive_desc_t pd, const char *why)
{
    if (dn_pd_is_ref(pd))
        dn_set_note(b->c, b->s, "oneDNN's reference implementation: %s", why);
}

bool dn_value_fixed(const gl_value *v)
{
    if (!v)
        return true;
    if (v->init)
        return gl_value_is_constant(v);
    const gl_node *p = v->producer;
    return gl_node_is(p, "Constant");
}

bool dn_input_keyed(const gl_kernel_ctx *k, size_t i)
{
    const gl_tensor *t = i < k->n_inputs ? k->in[i] : NULL;
    const gl_value *v = i < k->node->n_inputs ? k->node->inputs[i] : NULL;
    if (!t || dn_value_fixed(v))
        return true;
    return dn_key_by_value(t);
}

bool dn_input_ints(const gl_kernel_ctx *k, size_t i, int64_t **vals, size_t *count)
{
    *vals = NULL;
    *count = 0;
    const gl_tensor *t = i < k->n_inputs ? k->in[i] : NULL;
    if (!t)
        return true;
    if (t->layout || !gl_tensor_ints(t, k->where, "axes", vals, count)) {
        gl_error_clear();
        return false;
    }
    return true;
}

dnnl_status_t dn_md_leading_ones(dnnl_memory_desc_t *md, int rank, const gl_tensor *t)
{
    int64_t dims[DNNL_MAX_NDIMS];
    if (rank > DNNL_MAX_NDIMS || t->rank > rank)
        return dnnl_unimplemented;
    for (int i = 0; i < rank; i++) {
        int j = i - (rank - t->rank);
        dims[i] = j >= 0 ? t->dims[j] : 1;
    }
    return dn_md_plain(md, rank, dims, NULL);
}

void dn_bind_weighted(dn_build *b, const_dnnl_primitive_desc_t pd,
                      const dnnl_memory_desc_t *wgiven, bool bias, int rank, const int64_t *dims)
{
    dn_bind_input(b, DNNL_ARG_SRC, 0, dn_pd_md(pd, dnnl_query_src_md, 0));
    dn_bind_input_from(b, DNNL_ARG_WEIGHTS, 1, wgiven, dn_pd_md(pd, dnnl_query_weights_md, 0));
    if (bias)
        dn_bind_input(b, DNNL_ARG_BIAS, 2, NULL);
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(pd, dnnl_query_dst_md, 0), rank, dims);
}

void dn_nhwc_dims(const int64_t *nhwc, int64_t *nchw)
{
    nchw[0] = nhwc[0];
    nchw[1] = nhwc[3];
    nchw[2] = nhwc[1];
    nchw[3] = nhwc[2];
}

dnnl_status_t dn_md_nhwc_of(dnnl_memory_desc_t *md, const int64_t *nhwc)
{
    int64_t nchw[4];
    dn_nhwc_dims(nhwc, nchw);
    return dn_md_tag(md, 4, nchw, dnnl_nhwc);
}

void dn_bind_output_nhwc(dn_build *b, int arg, size_t output, const dnnl_memory_desc_t *md,
                         const int64_t *nhwc)
{
    dn_bind_output(b, arg, output, md, 4, nhwc);
    /* md is not row-major over its own (NCHW) dims, but its bytes are the plain tensor's */
    b->s->out[b->s->n_out - 1].layout = NULL;
}

bool dn_read_by_backend(const gl_kernel_ctx *k)
{
    const gl_value *v = k->node->n_outputs ? k->node->outputs[0] : NULL;
    for (size_t i = 0; v && i < v->n_uses; i++) {
        const gl_node *c = v->uses[i].node;
        const gl_function *f = c ? gl_called_function(k->model, c) : NULL;
        if (f && f->body && f->body->n_nodes)
            c = f->body->nodes[0];
        if (c && dn_op_find(c->domain, c->op_type, k->opset))
            return true;
    }
    return false;
}

const dn_op *dn_table_row(const dn_op_table *table, const char *op)
{
    for (size_t i = 0; i < table->n; i++)
        if (strcmp(table->ops[i].op, op) == 0)
            return &table->ops[i];
    return NULL;
}

bool dn_inputs_fit(const gl_node *n, int lo, int hi, char *why, size_t len)
{
    for (size_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && !dn_input_fits(n, i, lo, hi)) {
            snprintf(why, len, "input %zu is not float32 of rank %d to %d", i, lo, hi);
            return false;
        }
    return true;
}

static bool is_int8(gl_dtype dt)
{
    return dt == GL_DT_UINT8 || dt == GL_DT_INT8;
}

bool dn_input_fits_int8(const gl_node *n, size_t i, int lo, int hi)
{
    const gl_value *v = i < n->n_inputs ? n->inputs[i] : NULL;
    if (!v || v->type.kind != GL_TYPE_TENSOR || !is_int8(v->type.dtype))
        return dn_input_fits(n, i, lo, hi);
    int r = v->type.shape.rank;
    return r == GL_RANK_UNKNOWN || (r >= lo && r <= hi);
}

const gl_tensor *dn_f32_int8_input(const gl_kernel_ctx *k, size_t i)
{
    const gl_tensor *t = i < k->n_inputs ? k->in[i] : NULL;
    return t && is_int8(t->dtype) ? t : dn_f32_input(k, i);
}

bool dn_stand_in(const gl_value *v, const gl_tensor **in, gl_tensor **made)
{
    if (v->init && gl_value_is_constant(v)) {
        *in = v->init;
        return true;
    }
    const gl_type *t = &v->type;
    if (t->kind != GL_TYPE_TENSOR || t->dtype == GL_DT_UNDEFINED || t->shape.rank < 0 ||
        t->shape.rank > GL_MAX_RANK)
        return false;
    int64_t dims[GL_MAX_RANK], count = 1;
    for (int d = 0; d < t->shape.rank; d++) {
        dims[d] = t->shape.dims[d].value;
        if (dims[d] < 0)
            return false;
        count *= dims[d];
    }
    *in = *made = gl_tensor_wrap(t->dtype, t->shape.rank, dims, count, NULL);
    return true;
}


bool dn_claim_build(dn_ctx *c, const gl_model *m, const gl_node *n, dn_node *s,
                    const dn_op *op, char *why, size_t len)
{
    size_t count = n->n_inputs ? n->n_inputs : 1;
    const gl_tensor **in = gl_xcalloc(count, sizeof(*in));
    gl_tensor **made = gl_xcalloc(count, sizeof(*made));
    dnnl_memory_desc_t *md = gl_xcalloc(count, sizeof(*md));
    bool known = true, ok = true;
    for (size_t i = 0; i < n->n_inputs && known; i++)
        known = !n->inputs[i] || dn_stand_in(n->inputs[i], &in[i], &made[i]);
    for (size_t i = 0; i < n->n_inputs && known; i++)
        if (in[i] && dn_dtype(in[i]->dtype) != dnnl_data_type_undef)
            known = dn_md_of(in[i], &md[i]) == dnnl_success;
    if (known) {
        char where[512];
        gl_node_where(m, n, where, sizeof(where));
        gl_kernel_ctx k = {.node = n, .model = m, .opset = 1, .where = where,
                           .n_inputs = n->n_inputs, .in = in, .n_outputs = n->n_outputs,
                           .backend_ctx = c};
        dn_build b = {.c = c, .k = &k, .s = s, .md = md};
        dnnl_primitive_desc_t pd = NULL;
        if (op->build(&b, &pd) != GL_OK) {
            snprintf(why, len, "%s", gl_error_message());
            gl_error_clear();
            ok = false;
        } else if (s->fallback) {
            snprintf(why, len, "%s", s->note);
            ok = false;
        }
        dnnl_primitive_desc_destroy(pd);
        dn_node_clear(s);
    }
    for (size_t i = 0; i < n->n_inputs; i++)
        gl_tensor_free(made[i]);
    free(in);
    free(made);
    free(md);
    return ok;
}

bool dn_own_posts_of(const_dnnl_primitive_desc_t pd, int *posts, int max, int *n)
{
    const_dnnl_primitive_attr_t attr = NULL;
    const_dnnl_post_ops_t po = NULL;
    if (dnnl_primitive_desc_get_attr(pd, &attr) != dnnl_success ||
        dnnl_primitive_attr_get_post_ops(attr, &po) != dnnl_success)
        return false;
    int len = dnnl_post_ops_len(po);
    if (len > max)
        return false;
    for (int i = 0; i < len; i++) {
        float scale = 0, alpha = 0, beta = 0;
        dnnl_alg_kind_t alg;
        dnnl_primitive_kind_t kind = dnnl_post_ops_get_kind(po, i);
        if (kind == dnnl_sum && dnnl_post_ops_get_params_sum(po, i, &scale) == dnnl_success &&
            scale == 1.0f)
            posts[i] = DN_OWN_SUM;
        else if (kind == dnnl_eltwise &&
                 dnnl_post_ops_get_params_eltwise(po, i, &scale, &alg, &alpha, &beta) ==
                     dnnl_success &&
                 alg == dnnl_eltwise_relu && alpha == 0.0f && scale == 1.0f)
            posts[i] = DN_OWN_RELU;
        else
            return false;
    }
    *n = len;
    return true;
}

/* patterns_fold.c — a per-output-channel affine map after a Conv goes into the Conv:
 *
 *     BatchNormalization (inference): y = (conv - mean) * gamma / sqrt(var + eps) + beta
 *     Mul by c (per channel or scalar): y = conv * c
 *     Add of c (per channel or scalar): y = conv + c
 *
 * are all y[o] = conv[o] * a[o] + b[o], and conv[o] = W[o] * x + B[o], so the Conv gets
 * W'[o] = W[o] * a[o] and B'[o] = B[o] * a[o] + b[o] as new initializers (the old ones
 * may be shared with other nodes or snapshots: nothing is changed in place). The
 * arithmetic is done in double and rounded once. Every operand must be a constant: a
 * graph input with a default may be given another value at run time.
 */
#include "passes/patterns.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOLD_MAX_CHANNELS (1 << 24)

/* A constant the fold reads: refusal when it is an overridable input or not constant. */
static gl_pt_verdict folded_operand(gl_pt_match *m, const gl_node *n, const gl_value *v,
                                    const char *what, int64_t channels)
{
    const gl_tensor *t = gl_pt_const(v);
    if (!t && v && v->init)
        return gl_pt_refuse(m, "%s '%s': %s '%s' is a graph input with a default, which a "
                            "run may override", n->op_type, n->name, what, v->name);
    if (!t)
        return gl_pt_refuse(m, "%s '%s': %s '%s' is not a constant", n->op_type, n->name, what,
                            v ? v->name : "");
    if (t->dtype != GL_DT_FLOAT)
        return gl_pt_refuse(m, "%s '%s': %s '%s' is %s; the rule takes float only", n->op_type,
                            n->name, what, v->name, gl_dtype_name(t->dtype));
    if (channels >= 0 && (t->rank != 1 || t->count != channels)) {
        gl_pt_number(m, "channels", (double)channels);
        gl_pt_number(m, "elements", (double)t->count);
        return gl_pt_refuse(m, "%s '%s': %s '%s' has %lld elements (rank %d); expected [%lld]",
                            n->op_type, n->name, what, v->name, (long long)t->count, t->rank,
                            (long long)channels);
    }
    return GL_PT_MATCH;
}

/* The Conv feeding node n, its weights and bias constant floats, its output read by n
 * alone. *channels gets the Conv's output channels. */
static gl_pt_verdict conv_operands(gl_pt_match *m, gl_node *conv, int64_t *channels)
{
    if (conv->n_inputs < 2 || conv->n_inputs > 3 || !conv->inputs[1])
        return gl_pt_refuse(m, "Conv '%s' has %zu inputs", conv->name, conv->n_inputs);
    GL_PT_CHECK(folded_operand(m, conv, conv->inputs[1], "weight", -1));
    const gl_tensor *w = gl_pt_const(conv->inputs[1]);
    if (w->rank < 3 || w->dims[0] < 1 || w->dims[0] > FOLD_MAX_CHANNELS)
        return gl_pt_refuse(m, "Conv '%s': weight '%s' has rank %d and %lld output channels",
                            conv->name, conv->inputs[1]->name, w->rank,
                            (long long)(w->rank ? w->dims[0] : 0));
    *channels = w->dims[0];
    gl_pt_number(m, "channels", (double)*channels);
    if (conv->n_inputs == 3 && conv->inputs[2])
        GL_PT_CHECK(folded_operand(m, conv, conv->inputs[2], "bias", *channels));
    return gl_pt_expect_private(m);
}

gl_pt_verdict gl_pt_check_fold_bn(const gl_pt_ctx *c, gl_node *bn, gl_pt_match *m)
{
    gl_node *conv = bn->n_inputs == 5 ? gl_pt_producer(bn->inputs[0], "Conv") : NULL;
    if (!conv)
        return GL_PT_NONE;
    gl_pt_add(m, bn);
    gl_pt_add(m, conv);
    m->conv = conv;
    m->last = bn;
    snprintf(m->variant, sizeof(m->variant), "BatchNormalization, epsilon %g",
             gl_node_attr_float(bn, "epsilon", 1e-5f));
    if (c->opset < 7)
        return gl_pt_refuse(m, "opset %lld: BatchNormalization before opset 7 (is_test, "
                            "consumed_inputs) is not folded", (long long)c->opset);
    if (gl_node_attr_int(bn, "spatial", 1) != 1 || gl_node_attr_int(bn, "training_mode", 0))
        return gl_pt_refuse(m, "BatchNormalization '%s' is in training mode or not spatial",
                            bn->name);
    for (size_t o = 1; o < bn->n_outputs; o++)
        if (bn->outputs[o] && (bn->outputs[o]->n_uses || bn->outputs[o]->n_output_refs))
            return gl_pt_refuse(m, "BatchNormalization '%s': its running statistic '%s' is "
                                "used", bn->name, bn->outputs[o]->name);
    int64_t channels = 0;
    GL_PT_CHECK(conv_operands(m, conv, &channels));
    static const char *const names[] = {"scale", "B", "mean", "var"};
    for (size_t i = 0; i < 4; i++)
        GL_PT_CHECK(folded_operand(m, bn, bn->inputs[1 + i], names[i], channels));
    gl_pt_number(m, "epsilon", gl_node_attr_float(bn, "epsilon", 1e-5f));
    return GL_PT_MATCH;
}

/* Mul or Add of a Conv's output and a constant that varies at most along the channels:
 * every dim 1 but the one that lines up with the Conv's channel dim (right-aligned). */
static gl_pt_verdict check_channel_op(gl_node *n, gl_pt_match *m)
{
    int s = gl_pt_producer(n->n_inputs == 2 ? n->inputs[0] : NULL, "Conv") ? 0
            : gl_pt_producer(n->n_inputs == 2 ? n->inputs[1] : NULL, "Conv") ? 1 : -1;
    if (s < 0)
        return GL_PT_NONE;
    gl_value *k = n->inputs[1 - s];
    if (!gl_pt_const(k) && !(k && k->init))
        return GL_PT_NONE; /* a residual or a gate, not a constant */
    gl_node *conv = n->inputs[s]->producer;
    gl_pt_add(m, n);
    gl_pt_add(m, conv);
    m->conv = conv;
    m->last = n;
    int64_t channels = 0;
    GL_PT_CHECK(conv_operands(m, conv, &channels));
    GL_PT_CHECK(folded_operand(m, n, k, "the constant", -1));
    const gl_tensor *t = gl_pt_const(k);
    int out_rank = gl_pt_const(conv->inputs[1])->rank;
    int ch_at = t->rank - (out_rank - 1); /* the position in t facing the channel dim */
    bool ok = t->rank <= out_rank;
    for (int d = 0; d < t->rank && ok; d++)
        ok = t->dims[d] == 1 || (d == ch_at && t->dims[d] == channels);
    char shape[96];
    size_t at = 0;
    shape[0] = '\0';
    for (int d = 0; d < t->rank && at < sizeof(shape); d++)
        at += (size_t)snprintf(shape + at, sizeof(shape) - at, "%s%lld", d ? "," : "",
                               (long long)t->dims[d]);
    snprintf(m->variant, sizeof(m->variant), "%s a constant of shape [%s]",
             gl_node_is(n, "Mul") ? "Mul by" : "Add of", shape);
    if (!ok) {
        gl_pt_number(m, "rank", t->rank);
        return gl_pt_refuse(m, "%s '%s': constant '%s' has shape [%s]: not per channel for "
                            "Conv '%s' (%lld channels, output rank %d)", n->op_type, n->name,
                            k->name, shape, conv->name, (long long)channels, out_rank);
    }
    return GL_PT_MATCH;
}

gl_pt_verdict gl_pt_check_fold_mul(const gl_pt_ctx *c, gl_node *mul, gl_pt_match *m)
{
    (void)c;
    return check_channel_op(mul, m);
}

gl_pt_verdict gl_pt_check_fold_add(const gl_pt_ctx *c, gl_node *add, gl_pt_match *m)
{
    (void)c;
    return check_channel_op(add, m);
}

/* ---- apply ------------------------------------------------------------------------------ */

/* a[o], b[o] of the map y[o] = conv[o] * a[o] + b[o] that node n computes. */
static void affine_of(const gl_node *n, const gl_node *conv, int64_t channels, double *a,
                      double *b)
{
    if (gl_node_is(n, "BatchNormalization")) {
        double eps = gl_node_attr_float(n, "epsilon", 1e-5f);
        const gl_tensor *gamma = gl_pt_const(n->inputs[1]), *beta = gl_pt_const(n->inputs[2]),
                        *mean = gl_pt_const(n->inputs[3]), *var = gl_pt_const(n->inputs[4]);
        for (int64_t o = 0; o < channels; o++) {
            a[o] = gl_tensor_get_f64(gamma, o) / sqrt(gl_tensor_get_f64(var, o) + eps);
            b[o] = gl_tensor_get_f64(beta, o) - gl_tensor_get_f64(mean, o) * a[o];
        }
        return;
    }
    const gl_tensor *k = gl_pt_const(n->inputs[0]->producer == conv ? n->inputs[1] : n->inputs[0]);
    bool mul = gl_node_is(n, "Mul");
    for (int64_t o = 0; o < channels; o++) {
        double v = gl_tensor_get_f64(k, k->count == 1 ? 0 : o);
        a[o] = mul ? v : 1.0;
        b[o] = mul ? 0.0 : v;
    }
}

static gl_value *add_float_const(gl_pt_ctx *c, const char *hint, int rank, const int64_t *dims,
                                 const double *vals)
{
    gl_tensor *t = gl_tensor_new(GL_DT_FLOAT, rank, dims);
    if (!t)
        return NULL;
    float *p = t->count ? gl_tensor_make_writable(t) : NULL;
    for (int64_t i = 0; i < t->count; i++)
        p[i] = (float)vals[i];
    return gl_add_initializer(c->g, hint, t);
}

gl_status gl_pt_apply_fold(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision)
{
    gl_node *conv = m->conv, *n = m->last;
    gl_value *w = conv->inputs[1], *bias = conv->n_inputs == 3 ? conv->inputs[2] : NULL;
    const gl_tensor *wt = gl_pt_const(w), *bt = bias ? gl_pt_const(bias) : NULL;
    int64_t channels = wt->dims[0], per = wt->count / channels;
    double *a = gl_xmalloc((size_t)channels * sizeof(double));
    double *b = gl_xmalloc((size_t)channels * sizeof(double));
    affine_of(n, conv, channels, a, b);

    /* Scaling the weights is skipped when every a[o] is 1 (an Add), so is a bias that
     * stays zero (a Mul after a Conv without one). */
    bool scale = false, shift = bt != NULL;
    for (int64_t o = 0; o < channels; o++) {
        scale |= a[o] != 1.0;
        shift |= b[o] != 0.0;
    }
    gl_status st = GL_OK;
    double *vals = NULL;
    if (scale) {
        vals = gl_xmalloc((size_t)(wt->count ? wt->count : 1) * sizeof(double));
        for (int64_t i = 0; i < wt->count; i++)
            vals[i] = gl_tensor_get_f64(wt, i) * a[i / per];
        char hint[256];
        snprintf(hint, sizeof(hint), "%s_folded", w->name);
        gl_value *nw = add_float_const(c, hint, wt->rank, wt->dims, vals);
        st = nw ? gl_set_input(c->g, conv, 1, nw) : GL_ERR_NOMEM;
        free(vals);
    }
    if (st == GL_OK && shift) {
        vals = gl_xmalloc((size_t)channels * sizeof(double));
        for (int64_t o = 0; o < channels; o++)
            vals[o] = (bt ? gl_tensor_get_f64(bt, o) : 0.0) * a[o] + b[o];
        char hint[256];
        snprintf(hint, sizeof(hint), "%s_bias_folded", conv->name);
        gl_value *nb = add_float_const(c, hint, 1, &channels, vals);
        st = nb ? gl_set_input(c->g, conv, 2, nb) : GL_ERR_NOMEM;
        free(vals);
    }
    free(a);
    free(b);
    if (st != GL_OK)
        return st;

    /* n's readers now read the Conv: n lets go of the Conv's output, which then moves.
     * The constants n and the old Conv read go when nothing else reads them. */
    gl_value *old[8] = {w, bias};
    size_t n_old = 2;
    for (size_t i = 0; i < n->n_inputs && st == GL_OK; i++) {
        gl_value *v = n->inputs[i];
        bool seen = v == conv->outputs[0];
        for (size_t j = 0; j < n_old && !seen; j++)
            seen = old[j] == v;
        if (v == conv->outputs[0])
            st = gl_set_input(c->g, n, i, NULL);
        else if (!seen && n_old < GL_ARRAY_LEN(old))
            old[n_old++] = v;
    }
    gl_node_inherit_provenance(conv, &n, 1, decision);
    if (st == GL_OK)
        st = gl_move_output(c->g, n, 0, conv, 0);
    if (st == GL_OK)
        st = gl_remove_node(c->g, n);
    for (size_t i = 0; i < n_old && st == GL_OK; i++)
        st = gl_pt_drop_if_unused(c, old[i]);
    return st;
}

/* patterns_pool.c — an average pooling of a 1x1 convolution's output runs first:
 *
 *     AveragePool(Conv1x1(x, W, B)) = Conv1x1(AveragePool(x), W, B)
 *
 * A 1x1 convolution (stride 1, unpadded) is the same affine map at every pixel, and an
 * unpadded average pooling a mean of pixels whose weights sum to 1, so the two commute
 * (up to float rounding: the sums are taken in another order). With a strided pooling
 * the convolution then runs on fewer pixels: DenseNet's transitions (BatchNormalization,
 * Relu, a 1x1 convolution halving the channels, AveragePool 2x2 stride 2) do a quarter
 * of their convolution's work for a pooling of twice the channels. ONNX Runtime runs
 * them as written (DenseNet-121, one thread, batch 8: its transition convolutions take
 * 53 ms of 542).
 *
 * Refused: a pooling that does not shrink the map (nothing to gain), pads, ceil_mode
 * (a partial window at the end), a convolution that is not 1x1, strided, padded or
 * dilated, or whose output anything else reads.
 */
#include "passes/patterns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* auto_pad of n pads nothing by itself. */
static bool unpadded(const gl_node *n)
{
    const char *ap = gl_node_attr_string(n, "auto_pad", "NOTSET");
    return (!strcmp(ap, "NOTSET") || !strcmp(ap, "VALID")) && gl_pt_ints_all(n, "pads", 0);
}

/* The weights' kernel dims (dims 2..) are all 1, as the type or the constant says. */
static bool one_by_one(const gl_value *w)
{
    int rank = gl_value_rank(w);
    if (rank < 3)
        return false;
    for (int d = 2; d < rank; d++)
        if (w->type.shape.dims[d].value != 1)
            return false;
    return true;
}

gl_pt_verdict gl_pt_check_pool_first(const gl_pt_ctx *c, gl_node *pool, gl_pt_match *m)
{
    (void)c;
    gl_node *conv = gl_pt_producer(pool->inputs[0], "Conv");
    if (!conv)
        return GL_PT_NONE;
    gl_pt_add(m, conv);
    gl_pt_add(m, pool);
    m->last = pool;
    gl_value *y = conv->outputs[0], *x = conv->inputs[0];
    GL_PT_CHECK(gl_pt_expect_float(m, y));
    GL_PT_CHECK(gl_pt_expect_private(m));
    for (size_t o = 1; o < pool->n_outputs; o++)
        if (pool->outputs[o])
            return gl_pt_refuse(m, "AveragePool '%s' has output %zu", pool->name, o);
    if (conv->n_inputs < 2 || !one_by_one(conv->inputs[1]) || !gl_pt_ints_all(conv, "strides", 1) ||
        !gl_pt_ints_all(conv, "dilations", 1) || !unpadded(conv) ||
        !gl_pt_ints_all(conv, "kernel_shape", 1))
        return gl_pt_refuse(m, "Conv '%s' is not 1x1, stride 1, undilated and unpadded (or "
                            "its weights' dims are not known)", conv->name);
    if (!unpadded(pool) || gl_node_attr_int(pool, "ceil_mode", 0) != 0)
        return gl_pt_refuse(m, "AveragePool '%s' pads or has ceil_mode: its windows are not "
                            "all whole", pool->name);
    int rank = gl_value_rank(x);
    if (rank < 3 || gl_value_rank(y) != rank || gl_value_rank(pool->outputs[0]) != rank)
        return gl_pt_refuse(m, "the shapes are not known: Conv '%s' input rank %d, output "
                            "rank %d (run shape-inference first)", conv->name, rank,
                            gl_value_rank(y));
    int64_t before = 1, after = 1;
    for (int d = 2; d < rank; d++) {
        before *= y->type.shape.dims[d].value;
        after *= pool->outputs[0]->type.shape.dims[d].value;
    }
    gl_pt_number(m, "pixels_before", (double)before);
    gl_pt_number(m, "pixels_after", (double)after);
    if (before <= 0 || after <= 0 || after >= before)
        return gl_pt_refuse(m, "AveragePool '%s' does not shrink the map (%lld pixels to "
                            "%lld, or not known): the convolution would run on as many",
                            pool->name, (long long)before, (long long)after);
    snprintf(m->done, sizeof(m->done), "AveragePool '%s' runs before Conv '%s': the "
             "convolution on %lld pixels instead of %lld", pool->name, conv->name,
             (long long)after, (long long)before);
    return GL_PT_MATCH;
}

gl_status gl_pt_apply_pool_first(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision)
{
    gl_node *conv = m->nodes[0], *pool = m->nodes[1];
    gl_value *x = conv->inputs[0];
    gl_node *p = gl_pt_copy_node(c, pool, pool->name, &x, 1, pool->outputs[0], 1,
                                  &x->type.shape.dims[1], decision);
    if (!p)
        return GL_ERR_INTERNAL;
    gl_value *ins[3] = {p->outputs[0], conv->inputs[1], conv->n_inputs > 2 ? conv->inputs[2] : NULL};
    gl_node *k = gl_pt_copy_node(c, conv, conv->name, ins, conv->n_inputs, pool->outputs[0], 1,
                                  &pool->outputs[0]->type.shape.dims[1], decision);
    if (!k)
        return GL_ERR_INTERNAL;
    gl_status st = gl_move_output(c->g, pool, 0, k, 0);
    return st == GL_OK ? gl_pt_remove_nodes(c, m->nodes, m->n_nodes) : st;
}

/* patterns_concat.c — a per-channel op reading a Concat moves above it:
 *
 *     Op(Concat(a, b, ...)) = Concat(Op(a), Op(b), ...)
 *
 * when Op computes each channel from that channel alone (pooling, global pooling) or
 * each element from that element alone (unary elementwise ops, for which any Concat
 * axis will do). The Concat then joins smaller tensors after a strided pool, and, read
 * by a 1x1 convolution, fusion's concat-conv1x1 takes it into the convolution: no copy
 * is left (squeezenet's Fire 4 and 8 outputs go through a MaxPool before the next
 * squeeze convolution).
 *
 * It pays only when something goes away with it: the Concat (a 1x1 convolution that
 * concat-conv1x1 splits reads it), or the copies of an activation (each taken as a
 * post-op by the convolution or matrix product making its input). Anything else only
 * adds (inputs - 1) nodes and kernel launches for a smaller Concat copy (googlenet's
 * inception outputs feed four branches, not one convolution): refused by cost, which
 * --set patterns.force=ID overrides.
 *
 * Why patterns and not fusion: this is a rewrite of the graph's ops that stays plain
 * ONNX, as the folds are, and fusion's rules must meet its result: patterns runs before
 * layout and fusion. Every condition is checked before anything is edited.
 */
#include "passes/patterns.h"

#include "passes/fusion.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More Concat inputs than this and the rewrite is refused: each is a node copied. */
#define HOIST_MAX_INPUTS 64

typedef enum axis_kind { AXIS_ANY, AXIS_NCHW, AXIS_NHWC } axis_kind;

typedef struct channel_op {
    const char *op;
    const char *domain;
    axis_kind axis; /* which Concat axis keeps the op per channel */
} channel_op;

static const channel_op channel_ops[] = {
    {"MaxPool", "", AXIS_NCHW},
    {"AveragePool", "", AXIS_NCHW},
    {"LpPool", "", AXIS_NCHW},
    {"GlobalMaxPool", "", AXIS_NCHW},
    {"GlobalAveragePool", "", AXIS_NCHW},
    {"GlobalLpPool", "", AXIS_NCHW},
    {"NhwcMaxPool", "graphlab", AXIS_NHWC},
    {"NhwcAveragePool", "graphlab", AXIS_NHWC},
    {"NhwcGlobalMaxPool", "graphlab", AXIS_NHWC},
    {"NhwcGlobalAveragePool", "graphlab", AXIS_NHWC},
    {"Relu", "", AXIS_ANY},
    {"LeakyRelu", "", AXIS_ANY},
    {"Elu", "", AXIS_ANY},
    {"Selu", "", AXIS_ANY},
    {"Celu", "", AXIS_ANY},
    {"ThresholdedRelu", "", AXIS_ANY},
    {"Sigmoid", "", AXIS_ANY},
    {"HardSigmoid", "", AXIS_ANY},
    {"HardSwish", "", AXIS_ANY},
    {"Tanh", "", AXIS_ANY},
    {"Softplus", "", AXIS_ANY},
    {"Softsign", "", AXIS_ANY},
    {"Clip", "", AXIS_ANY},
    {"Abs", "", AXIS_ANY},
    {"Neg", "", AXIS_ANY},
    {"Exp", "", AXIS_ANY},
    {"Log", "", AXIS_ANY},
    {"Sqrt", "", AXIS_ANY},
    {"Reciprocal", "", AXIS_ANY},
    {"Floor", "", AXIS_ANY},
    {"Ceil", "", AXIS_ANY},
    {"Erf", "", AXIS_ANY},
};

static const channel_op *channel_op_of(const gl_node *n)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(channel_ops); i++)
        if (gl_node_is_in(n, channel_ops[i].domain, channel_ops[i].op))
            return &channel_ops[i];
    return NULL;
}

/* x is made by a convolution or matrix product and read by the Concat alone, so fusion
 * can give that producer the activation's copy as a post-op. */
static bool fusable_producer(const gl_value *x, const gl_node *cat)
{
    static const char *const heads[] = {"Conv", "ConvTranspose", "MatMul", "Gemm"};
    const gl_node *p = x ? x->producer : NULL;
    bool head = false;
    for (size_t i = 0; p && i < GL_ARRAY_LEN(heads); i++)
        head = head || gl_node_is(p, heads[i]);
    return head && !x->n_output_refs && gl_value_single_reader(x) == cat;
}

/* Whether the hoist pays (see the top): MATCH when it does, else a refusal by cost,
 * which --set patterns.force=ID may override. */
static gl_pt_verdict hoist_cost(const gl_node *cat, const gl_node *op, const channel_op *row,
                                gl_pt_match *m)
{
    const gl_value *y = op->outputs[0];
    gl_node *reader = gl_value_single_reader(y);
    char because[400];
    if (y->n_output_refs)
        snprintf(because, sizeof(because), "its output '%s' is a graph output", y->name);
    else if (!reader)
        snprintf(because, sizeof(because), "its output has several readers, not one 1x1 "
                 "convolution");
    else if (!gl_node_is(reader, "Conv") || reader->inputs[0] != y)
        snprintf(because, sizeof(because), "its reader %s '%s' is no convolution of it",
                 reader->op_type, reader->name);
    else if (!gl_fu_conv_split_refusal(reader, because, sizeof(because)))
        return GL_PT_MATCH;
    bool activation = row->axis == AXIS_ANY && gl_fu_eltwise_post_ops(op) >= 0;
    for (size_t i = 0; i < cat->n_inputs && activation; i++)
        activation = fusable_producer(cat->inputs[i], cat);
    if (activation)
        return GL_PT_MATCH;
    m->forceable = true;
    return gl_pt_refuse(m, "cost: %s '%s' copied %zu times would leave Concat '%s' in place: "
                        "%s%s", op->op_type, op->name, cat->n_inputs, cat->name, because,
                        row->axis == AXIS_ANY ? "; and not every Concat input is a "
                                                "convolution or matrix product that would "
                                                "take its copy as a post-op"
                                              : "");
}

/* The attributes the copies take: plain numbers and strings (what these ops have). */
static bool copyable_attr(const gl_attr *a)
{
    return a->type == GL_ATTR_INT || a->type == GL_ATTR_FLOAT || a->type == GL_ATTR_STRING ||
           a->type == GL_ATTR_INTS || a->type == GL_ATTR_FLOATS;
}

gl_pt_verdict gl_pt_check_hoist(const gl_pt_ctx *c, gl_node *cat, gl_pt_match *m)
{
    (void)c;
    gl_value *x = cat->outputs[0];
    gl_node *op = gl_value_single_reader(x);
    const channel_op *row = op ? channel_op_of(op) : NULL;
    if (!row) {
        /* A per-channel op among several readers is a refusal; no such reader, nothing. */
        for (size_t u = 0; u < x->n_uses; u++) {
            gl_node *r = x->uses[u].node;
            if (x->uses[u].slot == 0 && channel_op_of(r)) {
                gl_pt_add(m, cat);
                gl_pt_add(m, r);
                gl_pt_number(m, "readers", (double)x->n_uses);
                return gl_pt_refuse(m, "Concat '%s': its output '%s' is read by %zu nodes; "
                                    "%s '%s' moves above it only as its only reader",
                                    cat->name, x->name, x->n_uses, r->op_type, r->name);
            }
        }
        return GL_PT_NONE;
    }
    if (op->inputs[0] != x)
        return GL_PT_NONE; /* the Concat is a Clip bound, not the data */
    gl_pt_add(m, cat);
    gl_pt_add(m, op);
    m->last = op;
    m->hoist = true;
    snprintf(m->variant, sizeof(m->variant), "%s over a Concat of %zu inputs", op->op_type,
             cat->n_inputs);
    gl_pt_number(m, "inputs", (double)cat->n_inputs);
    if (x->n_output_refs)
        return gl_pt_refuse(m, "Concat '%s': its output '%s' is a graph output: it must stay",
                            cat->name, x->name);
    if (cat->n_inputs < 1 || cat->n_inputs > HOIST_MAX_INPUTS)
        return gl_pt_refuse(m, "Concat '%s' has %zu inputs; the rule copies %s '%s' once per "
                            "input, 1 to %d", cat->name, cat->n_inputs, op->op_type, op->name,
                            HOIST_MAX_INPUTS);
    for (size_t o = 1; o < op->n_outputs; o++)
        if (op->outputs[o])
            return gl_pt_refuse(m, "%s '%s' has output %zu '%s' (MaxPool's Indices count "
                                "over all channels): not per channel", op->op_type, op->name,
                                o, op->outputs[o]->name);
    for (size_t k = 1; k < op->n_inputs; k++)
        if (op->inputs[k] == x)
            return gl_pt_refuse(m, "%s '%s' reads Concat '%s' in input %zu too", op->op_type,
                                op->name, cat->name, k);
    for (size_t a = 0; a < op->n_attrs; a++)
        if (!copyable_attr(&op->attrs[a]))
            return gl_pt_refuse(m, "%s '%s': attribute '%s' is a %s; the copies take numbers "
                                "and strings", op->op_type, op->name, op->attrs[a].name,
                                gl_attr_type_name(op->attrs[a].type));
    int rank = gl_value_rank(x), out_rank = gl_value_rank(op->outputs[0]);
    if (rank < 1 || out_rank != rank || op->outputs[0]->type.dtype == GL_DT_UNDEFINED)
        return gl_pt_refuse(m, "the shapes are not known: Concat '%s' output rank %d, %s '%s' "
                            "output rank %d (run shape-inference first)", cat->name, rank,
                            op->op_type, op->name, out_rank);
    int64_t axis = gl_node_attr_int(cat, "axis", 0);
    if (axis < 0)
        axis += rank;
    gl_pt_number(m, "axis", (double)axis);
    if (axis < 0 || axis >= rank)
        return gl_pt_refuse(m, "Concat '%s': axis %lld out of range for rank %d", cat->name,
                            (long long)gl_node_attr_int(cat, "axis", 0), rank);
    int64_t want = row->axis == AXIS_NCHW ? 1 : row->axis == AXIS_NHWC ? rank - 1 : axis;
    if (axis != want || (row->axis != AXIS_ANY && rank < 3))
        return gl_pt_refuse(m, "Concat '%s' joins along axis %lld of rank %d; %s '%s' is per "
                            "channel along axis %lld only", cat->name, (long long)axis, rank,
                            op->op_type, op->name, (long long)want);
    for (size_t i = 0; i < cat->n_inputs; i++) {
        const gl_value *in = cat->inputs[i];
        if (!in || gl_value_rank(in) != rank || in->type.shape.dims[axis].value < 0)
            return gl_pt_refuse(m, "Concat '%s': input %zu '%s' has no known size along axis "
                                "%lld (rank %d)", cat->name, i, in ? in->name : "",
                                (long long)axis, gl_value_rank(in));
    }
    return hoist_cost(cat, op, row, m);
}

/* One copy of `op` reading Concat input `in`: op's output type with in's size along the
 * axis. */
static gl_node *copy_op(gl_pt_ctx *c, gl_node *op, size_t i, gl_value *in, int64_t axis,
                        int64_t decision)
{
    gl_value *inputs[8];
    size_t n_in = op->n_inputs < GL_ARRAY_LEN(inputs) ? op->n_inputs : GL_ARRAY_LEN(inputs);
    memcpy(inputs, op->inputs, n_in * sizeof(*inputs));
    inputs[0] = in;
    char hint[256];
    snprintf(hint, sizeof(hint), "%s_%zu", op->name, i);
    return gl_pt_copy_node(c, op, hint, inputs, n_in, op->outputs[0], (int)axis,
                           &in->type.shape.dims[axis], decision);
}

gl_status gl_pt_apply_hoist(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision)
{
    gl_node *cat = m->nodes[0], *op = m->nodes[1];
    int rank = gl_value_rank(cat->outputs[0]);
    int64_t axis = gl_node_attr_int(cat, "axis", 0);
    if (axis < 0)
        axis += rank;
    gl_value *outs[HOIST_MAX_INPUTS];
    for (size_t i = 0; i < cat->n_inputs; i++) {
        gl_node *n = copy_op(c, op, i, cat->inputs[i], axis, decision);
        if (!n)
            return GL_ERR_INTERNAL;
        outs[i] = n->outputs[0];
    }
    gl_node *joined = gl_add_node(c->g, "Concat", cat->domain, cat->name, outs, cat->n_inputs, 1);
    if (!joined)
        return GL_ERR_INTERNAL;
    gl_node_copy_plain_attrs(joined, cat);
    gl_node_inherit_provenance(joined, &cat, 1, decision);
    gl_status st = gl_move_output(c->g, op, 0, joined, 0);
    if (st == GL_OK)
        st = gl_remove_node(c->g, op);
    if (st == GL_OK)
        st = gl_remove_node(c->g, cat);
    return st;
}

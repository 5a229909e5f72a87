/* patterns_noop.c — nodes that compute nothing go, and a zero Pad goes into the
 * convolution or pooling that reads it:
 *
 *     Identity(x), Dropout(x) at inference (or ratio 0), Cast(x) to x's own type,
 *     AveragePool(x) / MaxPool(x) of a 1x1 window at stride 1, unpadded,
 *     Pad(x) with every pad 0                      ->  x
 *     Conv / AveragePool / MaxPool (Pad(x))       ->  the op with the pads added
 *
 * ONNX Runtime removes the first kind at its basic level and folds the Pad at its
 * extended one (PadFusion); PyTorch writes the Pad for an average pooling that counts
 * its padding (inception_v3's branches, densenet's transitions with pads of 0), and
 * converters leave Identity and Dropout nodes behind. Every one is a kernel launch and a
 * copy at run time, and a node in the count.
 *
 * A node whose output is a graph output keeps the output's name: the producer of its
 * input takes the output over when nothing else reads that input; otherwise the node
 * stays, with a refusal saying why. Every condition is checked before anything is
 * edited.
 */
#include "passes/patterns.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- nodes that pass their input through ------------------------------------------------- */

/* A pooling whose every window is one input position: kernel 1 on every axis, strides
 * and dilations 1, no pads (auto_pad's SAME pads nothing then). torchvision's
 * AdaptiveAvgPool2d exports so on an input of its output size: AlexNet's (6x6) and
 * VGG's (7x7); oneDNN pools it at ~1 GB/s (AlexNet's at batch 8: 0.24 ms, ORT 0.05). */
static bool unit_window(const gl_node *n)
{
    const gl_attr *k = gl_node_attr_typed(n, "kernel_shape", GL_ATTR_INTS);
    return k && k->n > 0 && gl_pt_ints_all(n, "kernel_shape", 1) &&
           gl_pt_ints_all(n, "strides", 1) && gl_pt_ints_all(n, "dilations", 1) &&
           gl_pt_ints_all(n, "pads", 0);
}

/* The value x the node passes through, or a refusal. Dropout: at inference (no
 * training_mode, or a constant false one) or training with a constant ratio of 0, and
 * with its mask unused. */
static gl_pt_verdict passed_through(const gl_pt_ctx *c, gl_node *n, gl_pt_match *m)
{
    if (n->n_inputs < 1 || !n->inputs[0])
        return GL_PT_NONE;
    if (gl_node_is(n, "Dropout")) {
        if (n->n_outputs > 1 && n->outputs[1] &&
            (n->outputs[1]->n_uses || n->outputs[1]->n_output_refs))
            return gl_pt_refuse(m, "Dropout '%s': its mask '%s' is read", n->name,
                                n->outputs[1]->name);
        if (c->opset < 7 && gl_node_attr_int(n, "is_test", 0) == 0)
            return gl_pt_refuse(m, "Dropout '%s': is_test is 0 (opset %lld): it trains",
                                n->name, (long long)c->opset);
        const gl_value *training = n->n_inputs > 2 ? n->inputs[2] : NULL;
        const gl_tensor *t = training ? gl_pt_const(training) : NULL;
        if (training && (!t || t->count != 1))
            return gl_pt_refuse(m, "Dropout '%s': training_mode '%s' is not a constant",
                                n->name, training->name);
        /* Training with a ratio of 0 drops nothing and scales by 1/(1-0): the output is
         * x exactly (ONNX's reference returns x then), as ONNX Runtime also reads it.
         * PyTorch exports its functional dropout so (swin_t: 24 of them). */
        const gl_value *ratio = n->n_inputs > 1 ? n->inputs[1] : NULL;
        const gl_tensor *r = ratio ? gl_pt_const(ratio) : NULL;
        bool keeps_all = r && r->count == 1 && gl_tensor_get_f64(r, 0) == 0;
        if (t && gl_tensor_get_f64(t, 0) != 0 && !keeps_all)
            return gl_pt_refuse(m, "Dropout '%s': training_mode is true and its ratio is %s",
                                n->name, !ratio ? "0.5 (the default)"
                                         : !r || r->count != 1 ? "not a constant"
                                                               : "not 0");
    } else if (gl_node_is(n, "AveragePool") || gl_node_is(n, "MaxPool")) {
        if (!unit_window(n))
            return GL_PT_NONE; /* a real pooling: not this pattern */
    } else if (gl_node_is(n, "Cast")) {
        gl_dtype to = (gl_dtype)gl_node_attr_int(n, "to", 0);
        gl_dtype from = n->inputs[0]->type.dtype;
        if (from == GL_DT_UNDEFINED || from != to)
            return GL_PT_NONE; /* a real conversion: not this pattern */
    }
    return GL_PT_MATCH;
}

/* Where the node's output y is a graph output, x's producer must be able to take y
 * over: x is made by a node, read by this node alone and no graph output itself. */
static gl_pt_verdict output_kept(gl_node *n, gl_pt_match *m)
{
    gl_value *x = n->inputs[0], *y = n->outputs[0];
    if (!y->n_output_refs)
        return GL_PT_MATCH;
    if (!x->producer || x->n_output_refs || gl_value_single_reader(x) != n)
        return gl_pt_refuse(m, "%s '%s': its output '%s' is a graph output and its input "
                            "'%s' is %s: the node keeps the output's name", n->op_type,
                            n->name, y->name, x->name,
                            !x->producer ? "a graph input or a constant"
                            : x->n_output_refs ? "a graph output too"
                                               : "read by other nodes as well");
    return GL_PT_MATCH;
}

gl_pt_verdict gl_pt_check_noop(const gl_pt_ctx *c, gl_node *n, gl_pt_match *m)
{
    GL_PT_CHECK(passed_through(c, n, m));
    gl_pt_add(m, n);
    m->last = n;
    if (n->outputs[0] && n->outputs[0]->type.dtype != GL_DT_UNDEFINED &&
        n->inputs[0]->type.dtype != GL_DT_UNDEFINED &&
        n->outputs[0]->type.dtype != n->inputs[0]->type.dtype)
        return gl_pt_refuse(m, "%s '%s': '%s' is %s, '%s' is %s", n->op_type, n->name,
                            n->inputs[0]->name, gl_dtype_name(n->inputs[0]->type.dtype),
                            n->outputs[0]->name, gl_dtype_name(n->outputs[0]->type.dtype));
    for (size_t o = 1; o < n->n_outputs; o++)
        if (n->outputs[o] && (n->outputs[o]->n_uses || n->outputs[o]->n_output_refs))
            return gl_pt_refuse(m, "%s '%s': output %zu '%s' is read", n->op_type, n->name, o,
                                n->outputs[o]->name);
    GL_PT_CHECK(output_kept(n, m));
    snprintf(m->done, sizeof(m->done), "%s '%s' removed: it passes '%s' on unchanged",
             n->op_type, n->name, n->inputs[0]->name);
    return GL_PT_MATCH;
}

/* Readers of y read x; when y is a graph output, x's producer makes y instead. */
static gl_status bypass(gl_pt_ctx *c, gl_node *n)
{
    gl_value *x = n->inputs[0], *y = n->outputs[0];
    gl_status st;
    if (y->n_output_refs) {
        if ((st = gl_set_input(c->g, n, 0, NULL)) != GL_OK ||
            (st = gl_move_output(c->g, n, 0, x->producer, (size_t)x->producer_slot)) != GL_OK)
            return st;
    } else if ((st = gl_replace_all_uses(c->g, y, x)) != GL_OK) {
        return st;
    }
    return gl_pt_remove_nodes(c, &n, 1);
}

gl_status gl_pt_apply_noop(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision)
{
    (void)decision;
    return bypass(c, m->last);
}

/* ---- Pad ---------------------------------------------------------------------------------- */

typedef struct pad_info {
    int rank;
    int64_t pads[2 * GL_MAX_RANK]; /* begins then ends, as ONNX lists them */
    const char *mode;
    double value;
} pad_info;

/* The Pad's pads, mode and value from its attributes (opset < 11) or constant inputs. */
static gl_pt_verdict read_pad(const gl_pt_ctx *c, const gl_node *n, gl_pt_match *m,
                              pad_info *p)
{
    const gl_value *x = n->inputs[0];
    p->rank = gl_value_rank(x);
    p->mode = gl_node_attr_string(n, "mode", "constant");
    p->value = 0;
    if (p->rank < 1 || p->rank > GL_MAX_RANK)
        return gl_pt_refuse(m, "Pad '%s': the rank of '%s' is not known (run shape-inference "
                            "first)", n->name, x->name);
    size_t count = 0;
    if (c->opset < 11) {
        const gl_attr *a = gl_node_attr_typed(n, "pads", GL_ATTR_INTS);
        count = a ? a->n : 0;
        for (size_t i = 0; a && i < a->n && i < 2 * GL_MAX_RANK; i++)
            p->pads[i] = a->ints[i];
        p->value = gl_node_attr_float(n, "value", 0.0f);
    } else {
        if (n->n_inputs > 3 && n->inputs[3])
            return gl_pt_refuse(m, "Pad '%s': it names its axes ('%s'); the rule takes pads "
                                "for every axis", n->name, n->inputs[3]->name);
        const gl_tensor *t = n->n_inputs > 1 ? gl_pt_const(n->inputs[1]) : NULL;
        if (!t || !gl_dtype_is_int(t->dtype))
            return gl_pt_refuse(m, "Pad '%s': its pads '%s' are not an integer constant",
                                n->name, n->n_inputs > 1 && n->inputs[1] ? n->inputs[1]->name
                                                                         : "");
        count = (size_t)t->count;
        for (size_t i = 0; i < count && i < 2 * GL_MAX_RANK; i++)
            p->pads[i] = (int64_t)gl_tensor_get_f64(t, (int64_t)i);
        const gl_value *v = n->n_inputs > 2 ? n->inputs[2] : NULL;
        if (v && !gl_pt_scalar(v, &p->value))
            return gl_pt_refuse(m, "Pad '%s': its value '%s' is not a constant number",
                                n->name, v->name);
    }
    if (count != 2 * (size_t)p->rank)
        return gl_pt_refuse(m, "Pad '%s': %zu pads for rank %d", n->name, count, p->rank);
    return GL_PT_MATCH;
}

static bool all_zero(const pad_info *p)
{
    for (int i = 0; i < 2 * p->rank; i++)
        if (p->pads[i] != 0)
            return false;
    return true;
}

/* Pools and convolutions pad dims 2.. (N and C never), by `pads` of 2*(rank-2). */
static gl_pt_verdict fold_target(gl_node *pad, const pad_info *p, gl_node *r, gl_pt_match *m)
{
    int k = p->rank - 2;
    for (int i = 0; i < 2; i++)
        if (p->pads[i] || p->pads[p->rank + i])
            return gl_pt_refuse(m, "Pad '%s' pads axis %d (batch or channels): %s '%s' pads "
                                "only the spatial axes", pad->name, i, r->op_type, r->name);
    for (int i = 0; i < 2 * p->rank; i++)
        if (p->pads[i] < 0)
            return gl_pt_refuse(m, "Pad '%s' crops (pad %lld): %s '%s' only adds padding",
                                pad->name, (long long)p->pads[i], r->op_type, r->name);
    if (strcmp(p->mode, "constant"))
        return gl_pt_refuse(m, "Pad '%s' is mode %s: %s '%s' pads with constants", pad->name,
                            p->mode, r->op_type, r->name);
    if (strcmp(gl_node_attr_string(r, "auto_pad", "NOTSET"), "NOTSET"))
        return gl_pt_refuse(m, "%s '%s' has auto_pad %s: its pads are computed", r->op_type,
                            r->name, gl_node_attr_string(r, "auto_pad", ""));
    const gl_attr *rp = gl_node_attr_typed(r, "pads", GL_ATTR_INTS);
    bool padded = false;
    if (rp && rp->n != (size_t)(2 * k))
        return gl_pt_refuse(m, "%s '%s' has %zu pads for %d spatial axes", r->op_type, r->name,
                            rp->n, k);
    for (size_t i = 0; rp && i < rp->n; i++)
        padded = padded || rp->ints[i] != 0;
    if (gl_node_is(r, "Conv") || gl_node_is(r, "AveragePool")) {
        if (p->value != 0)
            return gl_pt_refuse(m, "Pad '%s' pads with %g: %s '%s' pads with 0", pad->name,
                                p->value, r->op_type, r->name);
    }
    if (gl_node_is(r, "AveragePool")) {
        if (gl_node_attr_int(r, "ceil_mode", 0))
            return gl_pt_refuse(m, "AveragePool '%s' has ceil_mode 1: its last windows "
                                "would count padding the Pad does not add", r->name);
        if (padded && !gl_node_attr_int(r, "count_include_pad", 0))
            return gl_pt_refuse(m, "AveragePool '%s' pads itself without counting the "
                                "padding; the Pad's zeros are counted", r->name);
    }
    if (gl_node_is(r, "MaxPool")) {
        if (!(isinf(p->value) && p->value < 0))
            return gl_pt_refuse(m, "Pad '%s' pads with %g: MaxPool '%s' ignores its padding, "
                                "as a pad of -inf would", pad->name, p->value, r->name);
        if (r->n_outputs > 1 && r->outputs[1])
            return gl_pt_refuse(m, "MaxPool '%s' has Indices: they count the padded "
                                "tensor's elements", r->name);
        if (gl_node_attr_int(r, "ceil_mode", 0))
            return gl_pt_refuse(m, "MaxPool '%s' has ceil_mode 1: a last window that starts "
                                "in the Pad's padding counts, one in its own may not",
                                r->name);
    }
    return GL_PT_MATCH;
}

gl_pt_verdict gl_pt_check_pad(const gl_pt_ctx *c, gl_node *pad, gl_pt_match *m)
{
    gl_node *r = gl_value_single_reader(pad->outputs[0]);
    bool target = r && r->inputs[0] == pad->outputs[0] &&
                  (gl_node_is(r, "Conv") || gl_node_is(r, "AveragePool") || gl_node_is(r, "MaxPool"));
    pad_info p;
    gl_pt_add(m, pad);
    m->last = pad;
    gl_pt_verdict v = read_pad(c, pad, m, &p);
    if (v == GL_PT_MATCH && all_zero(&p)) {
        GL_PT_CHECK(output_kept(pad, m));
        snprintf(m->variant, sizeof(m->variant), "every pad 0");
        snprintf(m->done, sizeof(m->done), "Pad '%s' removed: every pad is 0", pad->name);
        return GL_PT_MATCH;
    }
    if (!target)
        return GL_PT_NONE; /* a Pad of its own: nothing to fold it into */
    gl_pt_add(m, r);
    GL_PT_CHECK(v);
    if (pad->outputs[0]->n_output_refs)
        return gl_pt_refuse(m, "'%s' (output of Pad '%s') is a graph output: it must stay",
                            pad->outputs[0]->name, pad->name);
    GL_PT_CHECK(fold_target(pad, &p, r, m));
    m->conv = r;
    m->last = r;
    for (int i = 2; i < p.rank; i++) {
        gl_pt_number(m, "pad_begin", (double)p.pads[i]);
        gl_pt_number(m, "pad_end", (double)p.pads[p.rank + i]);
    }
    snprintf(m->variant, sizeof(m->variant), "pads added to %s's", r->op_type);
    snprintf(m->done, sizeof(m->done), "Pad '%s' folded into %s '%s': its pads added to the "
             "%s's%s", pad->name, r->op_type, r->name, r->op_type,
             gl_node_is(r, "AveragePool") ? ", padding counted (count_include_pad 1)" : "");
    return GL_PT_MATCH;
}

gl_status gl_pt_apply_pad(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision)
{
    (void)decision;
    gl_node *pad = m->nodes[0], *r = m->conv;
    if (!r) /* every pad 0 */
        return bypass(c, pad);
    pad_info p;
    gl_pt_match scratch = {0};
    if (read_pad(c, pad, &scratch, &p) != GL_PT_MATCH)
        return GL_ERR_INTERNAL; /* the check read the same */
    int k = p.rank - 2;
    int64_t pads[2 * GL_MAX_RANK] = {0};
    const gl_attr *rp = gl_node_attr_typed(r, "pads", GL_ATTR_INTS);
    for (int i = 0; i < k; i++) {
        pads[i] = (rp ? rp->ints[i] : 0) + p.pads[2 + i];
        pads[k + i] = (rp ? rp->ints[k + i] : 0) + p.pads[p.rank + 2 + i];
    }
    gl_node_set_attr_ints(r, "pads", pads, (size_t)(2 * k));
    if (gl_node_is(r, "AveragePool"))
        gl_node_set_attr_int(r, "count_include_pad", 1);
    gl_status st = gl_set_input(c->g, r, 0, pad->inputs[0]);
    return st == GL_OK ? gl_pt_remove_nodes(c, &pad, 1) : st;
}

/* quant.c — a tensor's quantization read off the graph, the Q -> DQ pairs on
 * activations, and the graph without them (issue 21). */
#include "exec/quant.h"

#include <stdlib.h>
#include <string.h>

/* ---- a value's quantization ----------------------------------------------------------- */

/* The constant tensor behind v (an initializer or a Constant node's value), or NULL. */
static const gl_tensor *constant_of(const gl_value *v)
{
    if (!v)
        return NULL;
    if (gl_value_is_constant(v))
        return v->init;
    const gl_node *p = v->producer;
    if (p && gl_node_is(p, "Constant")) {
        const gl_attr *a = gl_node_attr_typed(p, "value", GL_ATTR_TENSOR);
        return a ? a->t : NULL;
    }
    return NULL;
}

static const gl_value *input_at(const gl_node *n, size_t i)
{
    return i < n->n_inputs ? n->inputs[i] : NULL;
}

static bool is_q_or_dq(const gl_node *n)
{
    return gl_node_is(n, "QuantizeLinear") || gl_node_is(n, "DequantizeLinear");
}

/* A value of a function body as the call site sees it: a formal input is the call's
 * input in its place; anything else is itself. */
static const gl_value *at_call(const gl_node *call, const gl_graph *body, const gl_value *v)
{
    for (size_t i = 0; call && v && i < body->n_inputs; i++)
        if (body->inputs[i] == v)
            return input_at(call, i);
    return v;
}

/* The scale and zero point node n (a QuantizeLinear or DequantizeLinear) reads, seen
 * from `call` when n is in the body of that call's function (call NULL: n is a node of
 * the graph); false when the scale is no constant, not a floating tensor, or more than
 * 1-D. */
static bool quant_of_node(const gl_node *n, const gl_node *call, gl_quant *q)
{
    const gl_tensor *scale = constant_of(at_call(call, n->graph, input_at(n, 1)));
    if (!scale || !gl_dtype_is_float(scale->dtype) || scale->rank > 1 || scale->count < 1)
        return false;
    const gl_tensor *zero = constant_of(at_call(call, n->graph, input_at(n, 2)));
    if (zero && zero->count != scale->count)
        return false;
    *q = (gl_quant){.scale = scale, .zero = zero,
                    .axis = (int)gl_node_attr_int(n, "axis", 1),
                    .integer = gl_node_is(n, "QuantizeLinear")};
    return true;
}

/* The node of a model-local function's body that makes output `slot` of a call of it
 * (a fused QDQ group ends in its QuantizeLinear), or NULL. */
static const gl_node *body_producer(const gl_node *call, int slot)
{
    const gl_model *m = call->graph ? call->graph->model : NULL;
    const gl_function *fn = m ? gl_model_function(m, call->domain, call->op_type) : NULL;
    if (!fn || !fn->body || slot < 0 || (size_t)slot >= fn->body->n_outputs)
        return NULL;
    const gl_value *out = fn->body->outputs[slot];
    return out && out->producer_slot == 0 ? out->producer : NULL;
}

/* Ops whose output's elements are averages or picks of their input's: no element moves
 * further from another run's than the inputs did (|f(a) - f(b)| <= max |a - b|), so a
 * tolerance in steps of the input's scale holds for the output. A network's float
 * logits after a GlobalAveragePool and a Flatten are compared in steps that way. */
static const char *const step_keeping[] = {
    "Flatten", "Reshape", "Squeeze", "Unsqueeze", "Identity", "GlobalAveragePool",
    "AveragePool", "MaxPool", "GlobalMaxPool",
};

/* The input whose steps n's output keeps: input 0 of a step_keeping op; the other
 * operand of an Add or Sub of a constant (a shift moves both runs alike). NULL: none. */
static const gl_value *steps_from(const gl_node *n)
{
    for (size_t i = 0; n && i < sizeof(step_keeping) / sizeof(step_keeping[0]); i++)
        if (gl_node_is(n, step_keeping[i]))
            return n->n_inputs > 0 ? n->inputs[0] : NULL;
    if (n && (gl_node_is(n, "Add") || gl_node_is(n, "Sub")) && n->n_inputs == 2 &&
        n->inputs[0] && n->inputs[1]) {
        if (constant_of(n->inputs[1]))
            return n->inputs[0];
        if (constant_of(n->inputs[0]))
            return n->inputs[1];
    }
    return NULL;
}

static bool keeps_steps(const gl_node *n) { return steps_from(n) != NULL; }

/* v itself, or the value a chain of step-keeping ops (first outputs) reads v from, when
 * that value is quantized per tensor. */
static const gl_value *through_step_keeping(const gl_value *v)
{
    const gl_value *at = v;
    for (int hops = 0; hops < 16 && at && at->producer_slot == 0 && keeps_steps(at->producer);
         hops++)
        at = steps_from(at->producer);
    if (at == v)
        return v;
    gl_quant q;
    return gl_quant_of(at, &q) && q.scale->count == 1 ? at : v;
}

bool gl_quant_of(const gl_value *v, gl_quant *q)
{
    *q = (gl_quant){0};
    if (v && v->producer && v->producer_slot == 0 && keeps_steps(v->producer))
        v = through_step_keeping(v);
    const gl_node *p = v ? v->producer : NULL, *call = NULL;
    if (p && !is_q_or_dq(p)) {
        call = p;
        p = body_producer(call, v->producer_slot);
    } else if (p && v->producer_slot != 0) {
        p = NULL;
    }
    if (!p || !is_q_or_dq(p) || !quant_of_node(p, call, q)) {
        *q = (gl_quant){0};
        return false;
    }
    return true;
}

/* Which of the scale's elements element i of t uses: 0 per tensor, i's index along the
 * axis per axis (an axis or a count that does not fit t: the index wrapped, never out of
 * bounds). */
static int64_t param_index(const gl_quant *q, const gl_tensor *t, int64_t i)
{
    if (q->scale->count == 1)
        return 0;
    int axis = q->axis < 0 ? q->axis + t->rank : q->axis;
    if (axis < 0 || axis >= t->rank)
        return i % q->scale->count;
    int64_t inner = 1;
    for (int d = axis + 1; d < t->rank; d++)
        inner *= t->dims[d];
    return (i / inner % t->dims[axis]) % q->scale->count;
}

double gl_quant_scale_at(const gl_quant *q, const gl_tensor *t, int64_t i)
{
    return gl_tensor_get_f64(q->scale, param_index(q, t, i));
}

double gl_quant_real_at(const gl_quant *q, const gl_tensor *t, int64_t i)
{
    double v = gl_tensor_get_f64(t, i);
    if (!q->integer)
        return v;
    int64_t k = param_index(q, t, i);
    double zero = q->zero ? gl_tensor_get_f64(q->zero, k) : 0;
    return (v - zero) * gl_tensor_get_f64(q->scale, k);
}

gl_tensor *gl_quant_dequantize(const gl_quant *q, const gl_tensor *t)
{
    if (t->dtype == GL_DT_STRING || t->dtype == GL_DT_COMPLEX64 ||
        t->dtype == GL_DT_COMPLEX128)
        return NULL;
    gl_tensor *out = gl_tensor_new(GL_DT_FLOAT, t->rank, t->dims);
    if (!out)
        return NULL;
    float *p = out->count ? gl_tensor_make_writable(out) : NULL;
    for (int64_t i = 0; i < t->count; i++)
        p[i] = (float)gl_quant_real_at(q, t, i);
    return out;
}

/* ---- the pairs ------------------------------------------------------------------------ */

/* The first DequantizeLinear reading v, or NULL. */
static const gl_node *dq_reader(const gl_value *v)
{
    for (size_t u = 0; u < v->n_uses; u++) {
        const gl_node *r = v->uses[u].node;
        if (v->uses[u].slot == 0 && gl_node_is(r, "DequantizeLinear"))
            return r;
    }
    return NULL;
}

/* Node n is the Q of a pair on an activation: its DequantizeLinear reader, else NULL. */
static const gl_node *pair_dq(const gl_node *n, gl_quant *q)
{
    if (!gl_node_is(n, "QuantizeLinear") || n->n_outputs < 1 || !n->outputs[0])
        return NULL;
    const gl_value *src = input_at(n, 0);
    if (!src || constant_of(src) || !quant_of_node(n, NULL, q))
        return NULL;
    return dq_reader(n->outputs[0]);
}

static gl_qdq_pair make_pair(const gl_node *q_node, const gl_node *dq, const gl_quant *q)
{
    return (gl_qdq_pair){
        .tensor = gl_xstrdup(q_node->inputs[0]->name), .node = gl_xstrdup(q_node->name),
        .q_output = gl_xstrdup(q_node->outputs[0]->name),
        .dq_output = gl_xstrdup(dq->outputs[0] ? dq->outputs[0]->name : ""),
        .scale = gl_tensor_share(q->scale), .zero = q->zero ? gl_tensor_share(q->zero) : NULL,
        .axis = q->axis};
}

/* The pair whose DequantizeLinear makes v (pair_of_dq maps each value index to a pair
 * index + 1, 0: none). */
typedef struct pair_walk {
    const gl_graph *g;
    size_t *pair_of_dq; /* g->n_values entries */
    bool *seen;         /* g->n_values entries, cleared per pair */
    const gl_value **stack;
} pair_walk;

static void add_feeder(gl_qdq_pair *p, size_t k)
{
    for (size_t i = 0; i < p->n_feeders; i++)
        if (p->feeders[i] == k)
            return;
    p->feeders = gl_xrealloc(p->feeders, (p->n_feeders + 1) * sizeof(*p->feeders));
    p->feeders[p->n_feeders++] = k;
}

/* Walk back from p's tensor through producers; stop at every DQ output of a pair (a
 * feeder) and at inputs and constants. */
static void find_feeders(pair_walk *w, const gl_value *start, gl_qdq_pair *p)
{
    memset(w->seen, 0, w->g->n_values * sizeof(*w->seen));
    size_t top = 0;
    w->stack[top++] = start;
    w->seen[start->index] = true;
    while (top) {
        const gl_value *v = w->stack[--top];
        if (w->pair_of_dq[v->index]) {
            add_feeder(p, w->pair_of_dq[v->index] - 1);
            continue;
        }
        const gl_node *n = v->producer;
        for (size_t i = 0; n && i < n->n_inputs; i++) {
            const gl_value *in = n->inputs[i];
            if (in && in->graph == w->g && !w->seen[in->index]) {
                w->seen[in->index] = true;
                w->stack[top++] = in;
            }
        }
    }
}

void gl_qdq_pairs_find(const gl_graph *g, gl_qdq_pairs *out)
{
    *out = (gl_qdq_pairs){0};
    size_t cap = 0;
    size_t nv = g->n_values ? g->n_values : 1;
    pair_walk w = {g, gl_xcalloc(nv, sizeof(size_t)), gl_xcalloc(nv, sizeof(bool)),
                   gl_xmalloc(nv * sizeof(gl_value *))};
    const gl_node **q_nodes = NULL;
    size_t q_cap = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        gl_quant q;
        const gl_node *dq = n ? pair_dq(n, &q) : NULL;
        if (!dq)
            continue;
        GL_GROW(out->items, cap, out->n + 1);
        GL_GROW(q_nodes, q_cap, out->n + 1);
        q_nodes[out->n] = n;
        out->items[out->n++] = make_pair(n, dq, &q);
        /* Every DequantizeLinear of this Q ends the walks of the pairs below it. */
        const gl_value *qv = n->outputs[0];
        for (size_t u = 0; u < qv->n_uses; u++) {
            const gl_node *r = qv->uses[u].node;
            if (qv->uses[u].slot == 0 && gl_node_is(r, "DequantizeLinear") && r->outputs[0])
                w.pair_of_dq[r->outputs[0]->index] = out->n;
        }
    }
    for (size_t k = 0; k < out->n; k++)
        find_feeders(&w, q_nodes[k]->inputs[0], &out->items[k]);
    free(q_nodes);
    free(w.pair_of_dq);
    free(w.seen);
    free(w.stack);
}

void gl_qdq_pairs_free(gl_qdq_pairs *p)
{
    for (size_t k = 0; k < p->n; k++) {
        gl_qdq_pair *q = &p->items[k];
        free(q->tensor);
        free(q->node);
        free(q->q_output);
        free(q->dq_output);
        gl_tensor_free(q->scale);
        gl_tensor_free(q->zero);
        free(q->feeders);
    }
    free(p->items);
    *p = (gl_qdq_pairs){0};
}

gl_quant gl_qdq_pair_quant(const gl_qdq_pair *p)
{
    return (gl_quant){.scale = p->scale, .zero = p->zero, .axis = p->axis, .integer = true};
}

/* ---- the float model ------------------------------------------------------------------- */

/* DequantizeLinear dq, reading a QuantizeLinear's output, as Identity(the Q's input). */
static gl_status bypass(gl_graph *g, gl_node *dq, gl_value *source)
{
    gl_status st = gl_set_input(g, dq, 0, source);
    if (st != GL_OK)
        return st;
    gl_truncate_inputs(g, dq, 1);
    while (dq->n_attrs) {
        char *name = gl_xstrdup(dq->attrs[0].name);
        gl_node_remove_attr(dq, name);
        free(name);
    }
    free(dq->op_type);
    dq->op_type = gl_xstrdup("Identity");
    return GL_OK;
}

static bool unread(const gl_value *v)
{
    return !v || (v->n_uses == 0 && v->n_output_refs == 0);
}

gl_status gl_qdq_strip(gl_graph *g, size_t *removed)
{
    size_t count = 0;
    gl_status st = GL_OK;
    for (size_t i = 0; i < g->n_nodes && st == GL_OK; i++) {
        gl_node *n = g->nodes[i];
        const gl_value *in = n && gl_node_is(n, "DequantizeLinear") ? input_at(n, 0) : NULL;
        gl_node *q = in ? in->producer : NULL;
        if (!q || !gl_node_is(q, "QuantizeLinear") || !input_at(q, 0))
            continue;
        st = bypass(g, n, q->inputs[0]);
        count += st == GL_OK;
        if (st == GL_OK && q->n_outputs == 1 && unread(q->outputs[0]))
            st = gl_remove_node(g, q);
    }
    if (removed)
        *removed = count;
    return st;
}

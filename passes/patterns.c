/* patterns.c — the `patterns` pass: decomposed ops recognized and made one op again,
 * BatchNormalization / per-channel Mul and Add after a Conv folded into its weights, nodes
 * that do nothing removed and a Pad folded into the Conv or pooling that reads it
 * (patterns_noop.c), a per-channel op that is a channel Concat's only reader moved
 * above it (patterns_concat.c), and an average pooling of a 1x1 convolution run before
 * it (patterns_pool.c).
 *
 * One table of rules (below), each a name, its anchor op, the pattern and its
 * replacement for people, and a check and an apply (patterns.h says what they promise).
 * The pass visits the nodes in topological order and offers each to the rules anchored
 * at its op; every match and every refusal is a decision, every match one rewrite (so
 * `patterns:K` stops after K). Replacement nodes are appended and the graph is sorted
 * again at the end; the bodies of If/Loop/Scan get their own run.
 *
 * Where it runs in the default pipeline: after the second constant-folding, cse and dce
 * and before layout and fusion. Before it, constant folding has made exporters'
 * Constant nodes initializers and evaluated the Shape chains, cse has merged the
 * duplicate scalars and nodes (so x * Sigmoid(x) reads one x), and dce has removed the
 * dead readers that would make an intermediate look shared. After it, layout sees
 * BatchNormalization already gone into the Conv (one layout-sensitive node less to
 * convert), and fusion's rules meet Gelu, LayerNormalization, SiLU and HardSwish as
 * single nodes (Conv + SiLU, MatMul + Gelu, LayerNormalization + MatMul).
 */
#include "passes/patterns.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table ------------------------------------------------------------------------- */

static const gl_pt_rule rules[] = {
    {"gelu-erf", "Erf", "x * 0.5 * (1 + Erf(x / sqrt(2))), any association; or Erf(x * "
     "0.70710678)", "Gelu (ai.onnx from opset 20, else graphlab.Gelu)",
     gl_pt_check_gelu_erf, gl_pt_replace},
    {"gelu-tanh", "Tanh", "0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), x^3 as "
     "Pow(x, 3) or x*x*x", "Gelu approximate=tanh (ai.onnx from opset 20, else "
     "graphlab.GeluTanh)", gl_pt_check_gelu_tanh, gl_pt_replace},
    {"layer-norm", "ReduceMean", "ReduceMean -> Sub -> Pow(2) -> ReduceMean -> Add(eps) -> "
     "Sqrt -> Div (or Mul by Reciprocal) -> Mul(gamma) -> Add(beta), trailing axes",
     "LayerNormalization (ai.onnx from opset 17, else graphlab)", gl_pt_check_layernorm,
     gl_pt_replace},
    {"silu", "Sigmoid", "x * Sigmoid(x)", "graphlab.Silu", gl_pt_check_silu, gl_pt_replace},
    {"hard-swish", "HardSigmoid", "x * HardSigmoid(x) alpha=1/6 beta=0.5",
     "HardSwish (ai.onnx from opset 14, else graphlab)", gl_pt_check_hardswish,
     gl_pt_replace},
    {"fold-batchnorm", "BatchNormalization", "Conv -> BatchNormalization (inference)",
     "the Conv with scaled weights and a new bias", gl_pt_check_fold_bn, gl_pt_apply_fold},
    {"fold-mul", "Mul", "Conv -> Mul by a per-channel constant ([C,1,1], [1,C,1,1], scalar)",
     "the Conv with scaled weights and bias", gl_pt_check_fold_mul, gl_pt_apply_fold},
    {"fold-add", "Add", "Conv -> Add of a per-channel constant ([C,1,1], [1,C,1,1], scalar)",
     "the Conv with a new bias", gl_pt_check_fold_add, gl_pt_apply_fold},
    {"eliminate-identity", "Identity", "Identity(x)", "x", gl_pt_check_noop, gl_pt_apply_noop},
    {"eliminate-dropout", "Dropout", "Dropout(x) at inference, its mask unread", "x",
     gl_pt_check_noop, gl_pt_apply_noop},
    {"eliminate-cast", "Cast", "Cast(x) to x's own type", "x", gl_pt_check_noop,
     gl_pt_apply_noop},
    {"eliminate-unit-avgpool", "AveragePool", "AveragePool(x) of a 1x1 window, stride 1, "
     "no pads", "x", gl_pt_check_noop, gl_pt_apply_noop},
    {"eliminate-unit-maxpool", "MaxPool", "MaxPool(x) of a 1x1 window, stride 1, no pads, "
     "its Indices unread", "x", gl_pt_check_noop, gl_pt_apply_noop},
    {"fold-pad", "Pad", "Pad(x) with every pad 0; or a constant Pad of the spatial axes "
     "read by Conv, AveragePool (zeros) or MaxPool (-inf)", "x; or the reader with the pads "
     "added to its own", gl_pt_check_pad, gl_pt_apply_pad},
    {"hoist-above-concat", "Concat", "a per-channel op (pooling along Concat axis 1, or its "
     "graphlab Nhwc form along the last axis; a unary elementwise op along any) as the "
     "Concat's only reader", "one copy of the op per Concat input, the Concat joining "
     "their outputs", gl_pt_check_hoist, gl_pt_apply_hoist},
    {"pool-before-conv1x1", "AveragePool", "Conv 1x1 (stride 1, unpadded) -> AveragePool "
     "(unpadded, shrinking the map), the Conv's only reader", "AveragePool -> the Conv: the "
     "convolution on the pooled pixels", gl_pt_check_pool_first, gl_pt_apply_pool_first},
};

const gl_pt_rule *gl_pt_rules(size_t *count)
{
    *count = GL_ARRAY_LEN(rules);
    return rules;
}

/* ---- checks ---------------------------------------------------------------------------- */

gl_pt_verdict gl_pt_refuse(gl_pt_match *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->why, sizeof(m->why), fmt, ap);
    va_end(ap);
    return GL_PT_REFUSE;
}

void gl_pt_number(gl_pt_match *m, const char *key, double value)
{
    if (m->n_numbers < GL_PT_MAX_NUMBERS)
        m->numbers[m->n_numbers++] = (gl_pt_num){key, value};
}

void gl_pt_add(gl_pt_match *m, gl_node *n)
{
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i] == n)
            return;
    if (n && m->n_nodes < GL_PT_MAX_NODES)
        m->nodes[m->n_nodes++] = n;
}

static bool in_set(gl_node *const *nodes, size_t n, const gl_node *node)
{
    for (size_t i = 0; i < n; i++)
        if (nodes[i] == node)
            return true;
    return false;
}

/* A node a rule may take: of that op, with its first output (dce may have dropped the
 * unused first output of a Dropout or a BatchNormalization; rules read outputs[0]). */
static bool takes(const gl_node *n, const char *op)
{
    /* The first letters tell most ops apart without a call: every node of the graph is
     * asked about every rule's anchor, and the checks ask about its neighbours. */
    return n && n->op_type[0] == op[0] && gl_node_is(n, op) && n->outputs[0];
}

gl_node *gl_pt_producer(const gl_value *v, const char *op)
{
    return v && takes(v->producer, op) ? v->producer : NULL;
}

gl_node *gl_pt_reader(const gl_value *v, const char *op)
{
    for (size_t i = 0; v && i < v->n_uses; i++)
        if (v->uses[i].slot >= 0 && takes(v->uses[i].node, op))
            return v->uses[i].node;
    return NULL;
}

gl_value *gl_pt_other(const gl_node *n, const gl_value *v)
{
    if (!n || n->n_inputs != 2)
        return NULL;
    return n->inputs[0] == v ? n->inputs[1] : n->inputs[1] == v ? n->inputs[0] : NULL;
}

const gl_tensor *gl_pt_const(const gl_value *v)
{
    for (; v; v = v->outer) {
        if (gl_value_is_constant(v))
            return v->init;
        if (gl_node_is(v->producer, "Constant")) {
            const gl_attr *a = gl_node_attr(v->producer, "value");
            return a && a->type == GL_ATTR_TENSOR ? a->t : NULL;
        }
    }
    return NULL;
}

bool gl_pt_ints_all(const gl_node *n, const char *name, int64_t v)
{
    const gl_attr *a = gl_node_attr_typed(n, name, GL_ATTR_INTS);
    for (size_t i = 0; a && i < a->n; i++)
        if (a->ints[i] != v)
            return false;
    return true;
}

bool gl_pt_scalar(const gl_value *c, double *v)
{
    const gl_tensor *t = gl_pt_const(c);
    if (!t || t->count != 1 || !(gl_dtype_is_float(t->dtype) || gl_dtype_is_int(t->dtype)))
        return false;
    *v = gl_tensor_get_f64(t, 0);
    return true;
}

static bool near(double got, double want, double tol)
{
    double d = got - want;
    return (d < 0 ? -d : d) <= tol * (want < 0 ? -want : want);
}

gl_pt_verdict gl_pt_expect_const(gl_pt_match *m, const gl_node *n, const gl_value *c,
                                 const gl_value *x, const char *what, const char *key,
                                 double want)
{
    const gl_tensor *t = gl_pt_const(c);
    double v;
    if (!t)
        return gl_pt_refuse(m, "%s '%s': %s '%s' is not a constant", n->op_type, n->name,
                            what, c ? c->name : "");
    if (t->count != 1 || !gl_pt_scalar(c, &v))
        return gl_pt_refuse(m, "%s '%s': %s '%s' has %lld elements, expected one number",
                            n->op_type, n->name, what, c->name, (long long)t->count);
    int rank = gl_value_rank(x);
    if (t->rank > 0 && (rank == GL_RANK_UNKNOWN || t->rank > rank))
        return gl_pt_refuse(m, "%s '%s': %s '%s' has rank %d, which would raise the rank of "
                            "'%s' (rank %d)", n->op_type, n->name, what, c->name, t->rank,
                            x->name, rank);
    return gl_pt_expect_near(m, n, what, key, v, want);
}

void gl_pt_format(double v, char *buf, size_t len)
{
    /* The constants are float32 mostly: 0.49f reads as 0.49, not 0.490000010. */
    for (int digits = 6; digits < 17; digits++) {
        snprintf(buf, len, "%.*g", digits, v);
        if ((float)strtod(buf, NULL) == (float)v)
            return;
    }
    snprintf(buf, len, "%.17g", v);
}

gl_pt_verdict gl_pt_expect_near(gl_pt_match *m, const gl_node *n, const char *what,
                                const char *key, double got, double want)
{
    gl_pt_number(m, key, got);
    if (near(got, want, GL_PT_TOL))
        return GL_PT_MATCH;
    gl_pt_number(m, "expected", want);
    gl_pt_number(m, "tolerance", GL_PT_TOL);
    char found[32];
    gl_pt_format(got, found, sizeof(found));
    return gl_pt_refuse(m, "%s '%s': %s is %s, expected %.9g (tolerance %g relative)",
                        n->op_type, n->name, what, found, want, GL_PT_TOL);
}

gl_pt_verdict gl_pt_expect_float(gl_pt_match *m, const gl_value *x)
{
    if (x->type.kind != GL_TYPE_TENSOR || x->type.dtype == GL_DT_UNDEFINED)
        return gl_pt_refuse(m, "the dtype of '%s' is not known (run shape-inference first); "
                            "the rule takes float only", x->name);
    if (x->type.dtype != GL_DT_FLOAT)
        return gl_pt_refuse(m, "'%s' is %s; the rule takes float only", x->name,
                            gl_dtype_name(x->type.dtype));
    return GL_PT_MATCH;
}

gl_pt_verdict gl_pt_expect_private(gl_pt_match *m)
{
    for (size_t i = 0; i < m->n_nodes; i++) {
        const gl_node *n = m->nodes[i];
        if (n == m->last)
            continue;
        for (size_t o = 0; o < n->n_outputs; o++) {
            const gl_value *v = n->outputs[o];
            if (!v)
                continue;
            if (v->n_output_refs)
                return gl_pt_refuse(m, "'%s' (output of %s '%s') is a graph output: it "
                                    "must stay", v->name, n->op_type, n->name);
            for (size_t u = 0; u < v->n_uses; u++) {
                const gl_node *r = v->uses[u].node;
                if (v->uses[u].slot == GL_USE_IMPLICIT || !in_set(m->nodes, m->n_nodes, r)) {
                    gl_pt_number(m, "readers", (double)v->n_uses);
                    return gl_pt_refuse(m, "'%s' (output of %s '%s') is also read by %s "
                                        "'%s', outside the pattern", v->name, n->op_type,
                                        n->name, r->op_type, r->name);
                }
            }
        }
    }
    return GL_PT_MATCH;
}

/* ---- rewrites -------------------------------------------------------------------------- */

gl_status gl_pt_drop_if_unused(gl_pt_ctx *c, gl_value *v)
{
    if (!v || v->graph != c->g || v->n_uses || v->n_output_refs || v->is_input)
        return GL_OK;
    if (gl_node_is(v->producer, "Constant"))
        return gl_remove_node(c->g, v->producer);
    if (!v->producer && v->init && !v->outer)
        return gl_remove_value(c->g, v);
    return GL_OK;
}

/* "/mlp/act/Erf" -> "/mlp/act/Gelu" (exporters name a node after its op); else the
 * anchor's name with the op after it. Generated names stay generated. */
static char *replacement_name(const gl_graph *g, const gl_node *anchor, const char *op)
{
    if (anchor->name_generated)
        return NULL;
    const char *name = anchor->name;
    size_t len = strlen(name), op_len = strlen(anchor->op_type);
    char hint[256];
    if (len >= op_len && strcmp(name + len - op_len, anchor->op_type) == 0 &&
        (len == op_len || name[len - op_len - 1] == '/'))
        snprintf(hint, sizeof(hint), "%.*s%s", (int)(len - op_len), name, op);
    else
        snprintf(hint, sizeof(hint), "%s/%s", name, op);
    return gl_unique_node_name(g, hint);
}

/* Nodes in reverse topological position: readers go before what they read. */
static int by_position_desc(const void *a, const void *b)
{
    const gl_node *x = *(gl_node *const *)a, *y = *(gl_node *const *)b;
    return (x->index < y->index) - (x->index > y->index);
}

/* Remove the matched nodes (their outputs read only inside the match, m->last's moved
 * away), then the constants they alone read. */
gl_status gl_pt_remove_nodes(gl_pt_ctx *c, gl_node *const *set, size_t n)
{
    gl_node *nodes[GL_PT_MAX_NODES];
    gl_value *inputs[GL_PT_MAX_NODES * 4];
    size_t n_inputs = 0;
    if (n > GL_PT_MAX_NODES)
        return GL_ERR_INTERNAL;
    memcpy(nodes, set, n * sizeof(*nodes));
    qsort(nodes, n, sizeof(*nodes), by_position_desc);
    /* What the nodes read from outside the set, each once (a dropped value is freed). */
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < nodes[i]->n_inputs && n_inputs < GL_ARRAY_LEN(inputs); k++) {
            gl_value *v = nodes[i]->inputs[k];
            bool seen = !v || (v->producer && in_set(set, n, v->producer));
            for (size_t j = 0; j < n_inputs && !seen; j++)
                seen = inputs[j] == v;
            if (!seen)
                inputs[n_inputs++] = v;
        }
    }
    gl_status st = GL_OK;
    for (size_t i = 0; i < n && st == GL_OK; i++)
        st = gl_remove_node(c->g, nodes[i]);
    for (size_t i = 0; i < n_inputs && st == GL_OK; i++)
        st = gl_pt_drop_if_unused(c, inputs[i]);
    return st;
}

gl_node *gl_pt_dequantize_again(gl_graph *g, const gl_node *dq, gl_value *x, int axis,
                                 gl_node *const *srcs, size_t n_srcs, int64_t decision)
{
    gl_value *ins[3] = {x, dq->inputs[1], dq->n_inputs > 2 ? dq->inputs[2] : NULL};
    char *name = gl_unique_node_name(g, dq->name);
    gl_node *nd = gl_add_node(g, "DequantizeLinear", "", name, ins,
                              dq->n_inputs > 3 ? 3 : dq->n_inputs, 1);
    free(name);
    if (!nd)
        return NULL;
    gl_node_copy_attrs(nd, dq);
    if (axis >= 0)
        gl_node_set_attr_int(nd, "axis", axis);
    gl_node_inherit_provenance(nd, srcs, n_srcs, decision);
    return nd;
}

gl_node *gl_pt_copy_node(gl_pt_ctx *c, const gl_node *n, const char *hint,
                         gl_value *const *inputs, size_t n_in, const gl_value *like, int axis,
                         const gl_dim *dim, int64_t decision)
{
    char *name = gl_unique_node_name(c->g, hint);
    gl_node *k = gl_add_node(c->g, n->op_type, n->domain, name, inputs, n_in, 1);
    free(name);
    if (!k)
        return NULL;
    if (!gl_node_copy_plain_attrs(k, n)) {
        gl_remove_node(c->g, k); /* no half-made copy left in the graph */
        return NULL;
    }
    gl_type *t = &k->outputs[0]->type;
    gl_type_copy(t, &like->type);
    gl_dim *d = &t->shape.dims[axis];
    free(d->sym);
    d->sym = dim->sym ? gl_xstrdup(dim->sym) : NULL;
    d->value = dim->value;
    gl_node_inherit_provenance(k, (gl_node *const *)&n, 1, decision);
    return k;
}

gl_status gl_pt_replace(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision)
{
    gl_status st = GL_OK;
    if (strcmp(m->domain, "") != 0 && (st = gl_pt_ensure_function(c->m, m->op)) != GL_OK)
        return st;
    char *name = replacement_name(c->g, m->nodes[0], m->op);
    gl_node *n = gl_add_node(c->g, m->op, m->domain, name, m->in, m->n_in, 1);
    free(name);
    if (!n)
        return GL_ERR_INTERNAL;
    if (m->approximate)
        gl_node_set_attr_string(n, "approximate", m->approximate);
    if (m->layernorm) {
        gl_node_set_attr_int(n, "axis", m->axis);
        gl_node_set_attr_float(n, "epsilon", m->epsilon);
    }
    gl_node_inherit_provenance(n, m->nodes, m->n_nodes, decision);
    if ((st = gl_move_output(c->g, m->last, 0, n, 0)) != GL_OK)
        return st;
    return gl_pt_remove_nodes(c, m->nodes, m->n_nodes);
}

/* ---- the run --------------------------------------------------------------------------- */

static void add_context(gl_decision *d, const gl_graph *g)
{
    if (g->parent_node)
        gl_decision_add_text(d, "inside", g->parent_node->name);
}

static void describe(gl_decision *d, const gl_pt_match *m)
{
    for (size_t i = 0; i < m->n_nodes; i++)
        gl_decision_add_node_ref(d, m->nodes[i]);
    for (size_t i = 0; i < m->n_numbers; i++)
        gl_decision_add_number(d, m->numbers[i].key, m->numbers[i].value);
    if (m->variant[0])
        gl_decision_add_text(d, "variant", m->variant);
}

/* Offer node n to the rules anchored at its op. *gone: n was rewritten away. */
/* What applying match m at node n does, in words: the applied record's reason, and a
 * forced refusal's (gl_pass_forced_reason). */
static void applied_reason(const gl_pt_match *m, const gl_node *n, char *buf, size_t len)
{
    if (m->done[0])
        snprintf(buf, len, "%s", m->done);
    else if (m->hoist && m->last)
        snprintf(buf, len, "%s '%s' moved above %s '%s': one %s per Concat input (%zu), the "
                 "Concat joins their outputs", m->last->op_type, m->last->name, n->op_type,
                 n->name, m->last->op_type, n->n_inputs);
    else if (m->conv)
        snprintf(buf, len, "%s '%s' folded into Conv '%s' (%s)", n->op_type, n->name,
                 m->conv->name, m->variant);
    else
        snprintf(buf, len, "%zu nodes around %s '%s' compute %s (%s): one %s%s%s node",
                 m->n_nodes, n->op_type, n->name, m->op, m->variant, m->domain,
                 *m->domain ? "." : "", m->op);
}

static gl_status offer(gl_pt_ctx *c, gl_pass_ctx *ctx, gl_node *n, bool *changed)
{
    for (size_t r = 0; r < GL_ARRAY_LEN(rules); r++) {
        const gl_pt_rule *rule = &rules[r];
        if (!takes(n, rule->anchor))
            continue;
        gl_pt_match m = {.domain = ""};
        gl_pt_verdict v = rule->check(c, n, &m);
        if (v == GL_PT_NONE)
            continue;
        int64_t min_opset = *m.domain ? gl_pt_function_min_opset(m.op) : 0;
        if (v == GL_PT_MATCH && c->opset < min_opset) {
            gl_pt_number(&m, "opset", (double)c->opset);
            v = gl_pt_refuse(&m, "opset %lld: the function body of %s.%s needs opset %lld",
                             (long long)c->opset, m.domain, m.op, (long long)min_opset);
        }
        char done[600];
        if (v == GL_PT_REFUSE) {
            gl_decision *d = gl_pass_refuse(ctx, rule->name, m.forceable, "%s", m.why);
            if (d->forced) { /* say what was done, and what it overrode */
                applied_reason(&m, n, done, sizeof(done));
                gl_pass_forced_reason(ctx, d, "%s; overriding %s", done, m.why);
            }
            describe(d, &m);
            add_context(d, c->g);
            if (d->verdict != GL_APPLIED) /* forced when the cost alone refused */
                continue;
            *changed = true;
            return rule->apply(c, &m, d->id);
        }
        applied_reason(&m, n, done, sizeof(done));
        gl_decision *d = gl_pass_decide(ctx, rule->name, GL_APPLIED, "%s", done);
        describe(d, &m);
        gl_decision_add_number(d, "nodes", (double)m.n_nodes);
        if (!m.conv && !m.hoist && !m.done[0]) {
            char op[96];
            snprintf(op, sizeof(op), "%s%s%s", m.domain, *m.domain ? "." : "", m.op);
            gl_decision_add_text(d, "replacement", op);
        }
        add_context(d, c->g);
        if (gl_pass_vetoed(ctx, d))
            continue;
        *changed = true;
        return rule->apply(c, &m, d->id);
    }
    return GL_OK;
}

static gl_status patterns_graph(gl_graph *g, gl_pass_ctx *ctx)
{
    gl_pt_ctx c = {g, ctx->model, gl_model_opset(ctx->model, "")};
    bool changed = false;
    gl_status st = GL_OK;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (!gl_pass_may_rewrite(ctx))
            break;
        if ((st = offer(&c, ctx, n, &changed)) != GL_OK)
            return st;
    }
    /* Replacements were appended after their readers. */
    if (changed && (st = gl_toposort(g, NULL)) != GL_OK)
        return st;
    return gl_pass_on_bodies(g, ctx, patterns_graph);
}

gl_status gl_pass_patterns(gl_graph *g, gl_pass_ctx *ctx) { return patterns_graph(g, ctx); }

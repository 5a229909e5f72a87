/* layout.c — the `layout` pass: layout-sensitive nodes become channels-last where that
 * lets transpose-push cancel the Transposes around them (ONNX Runtime's layout
 * transformer for its NHWC kernels, with a cost check it does not have).
 *
 * A node Op(X) on X in NCHW becomes
 *     Transpose(0,3,1,2) <- NhwcOp <- Transpose(0,2,3,1) <- X
 * where NhwcOp is graphlab's channels-last form (src/ops/graphlab_layout.c: the same
 * attributes, weights still OIHW); Resize stays an ai.onnx Resize whose per-axis lists
 * are permuted instead (its transpose handler does exactly that). transpose-push, which
 * runs next in the default pipeline, then cancels the Transposes that meet.
 *
 * 1. Candidates (one row per op below): a check that edits nothing admits a node or
 *    refuses it with the reason (rank not 4, an Indices output that is read, training
 *    mode, an attribute the channels-last op does not take).
 * 2. Regions: candidates joined through the nodes a Transpose can pass (those with a
 *    transpose handler, and Transposes), a union-find over the graph's edges. A region is
 *    converted whole or not at all: NHWC pays across a chain of convolutions, rarely for
 *    one of them alone.
 * 3. The cost check, region by region in graph order: the region is converted on a clone
 *    of the model, transpose-push runs on it (with the pipeline's --set options), and the
 *    Transposes left are counted; the region is kept only when fewer are left than without
 *    it. Each region is a decision (applied or refused) with both counts. Running the push
 *    itself rather than predicting it keeps the check honest about what the push can and
 *    cannot cancel; it costs two clones and sweeps per region. `--set layout.ignore-cost=1`
 *    converts every region, as ONNX Runtime does for an NHWC execution provider.
 * 4. Every graphlab op used is also a model-local function of the saved model (domain
 *    graphlab: Transpose -> Op -> Transpose, Op's attributes referring to the caller's;
 *    ModelProto.functions needs IR 8), so any ONNX runtime runs the result; graphlab's
 *    executor runs the registry's kernel (oneDNN claims NhwcConv).
 *
 * Only the model's graph is converted, not subgraphs; the result is sorted again.
 */
#include "passes/transpose.h"
#include "passes/pass_table.h"

#include "util/plural.h"
#include "util/unionfind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAPHLAB "graphlab"

static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};

/* ---- the ops ----------------------------------------------------------------------- */

/* An attribute of the op, from opset `since`: the channels-last op takes the same, and
 * its function refers to the caller's. */
typedef struct layout_attr {
    const char *name;
    gl_attr_type type;
    int since;
} layout_attr;

typedef struct layout_op {
    const char *op;         /* ai.onnx */
    const char *nhwc;       /* graphlab's channels-last op; NULL: Resize (see below) */
    int min_opset;
    const char *params[5];  /* the inputs: X, then the op's others */
    layout_attr attrs[8];
} layout_op;

static const layout_op layout_ops[] = {
    {"Conv", "NhwcConv", 1, {"X", "W", "B"},
     {{"auto_pad", GL_ATTR_STRING, 1}, {"dilations", GL_ATTR_INTS, 1},
      {"group", GL_ATTR_INT, 1}, {"kernel_shape", GL_ATTR_INTS, 1},
      {"pads", GL_ATTR_INTS, 1}, {"strides", GL_ATTR_INTS, 1}}},
    {"MaxPool", "NhwcMaxPool", 1, {"X"},
     {{"auto_pad", GL_ATTR_STRING, 1}, {"ceil_mode", GL_ATTR_INT, 10},
      {"dilations", GL_ATTR_INTS, 10}, {"kernel_shape", GL_ATTR_INTS, 1},
      {"pads", GL_ATTR_INTS, 1}, {"storage_order", GL_ATTR_INT, 8},
      {"strides", GL_ATTR_INTS, 1}}},
    {"AveragePool", "NhwcAveragePool", 1, {"X"},
     {{"auto_pad", GL_ATTR_STRING, 1}, {"ceil_mode", GL_ATTR_INT, 10},
      {"count_include_pad", GL_ATTR_INT, 7}, {"dilations", GL_ATTR_INTS, 19},
      {"kernel_shape", GL_ATTR_INTS, 1}, {"pads", GL_ATTR_INTS, 1},
      {"strides", GL_ATTR_INTS, 1}}},
    {"GlobalAveragePool", "NhwcGlobalAveragePool", 1, {"X"}, {{0}}},
    {"GlobalMaxPool", "NhwcGlobalMaxPool", 1, {"X"}, {{0}}},
    /* From 9: before it, `spatial` and the consumed_inputs of opset 1 change the
     * parameters' shapes. */
    {"BatchNormalization", "NhwcBatchNormalization", 9,
     {"X", "scale", "B", "input_mean", "input_var"},
     {{"epsilon", GL_ATTR_FLOAT, 1}, {"momentum", GL_ATTR_FLOAT, 1},
      {"training_mode", GL_ATTR_INT, 14}}},
    /* Resize has no graphlab form: on NHWC data it is Resize with its lists permuted. */
    {"Resize", NULL, 10, {NULL}, {{0}}},
};

static const layout_op *op_row(const gl_node *n)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(layout_ops); i++)
        if (gl_node_is(n, layout_ops[i].op))
            return &layout_ops[i];
    return NULL;
}

static size_t n_params(const layout_op *row)
{
    size_t k = 0;
    while (k < GL_ARRAY_LEN(row->params) && row->params[k])
        k++;
    return k;
}

static const layout_attr *attr_row(const layout_op *row, const char *name, int64_t opset)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(row->attrs) && row->attrs[i].name; i++)
        if (!strcmp(row->attrs[i].name, name) && opset >= row->attrs[i].since)
            return &row->attrs[i];
    return NULL;
}

/* ---- 1. candidates ------------------------------------------------------------------- */

/* A Conv without bias gets a zero one: onnx's checker (1.12, strict) refuses a function
 * call that omits an input, and adding +0 changes no value (but the sign of a zero). */
static bool needs_zero_bias(const gl_node *n)
{
    return gl_node_is(n, "Conv") && (n->n_inputs < 3 || !n->inputs[2]);
}

/* M of the weights W[M, C/group, kH, kW], when they are a float constant (whose bytes
 * bound M); else -1. */
static int64_t zero_bias_channels(const gl_node *n)
{
    const gl_value *w = n->n_inputs > 1 ? n->inputs[1] : NULL;
    if (!w || !gl_value_is_constant(w) || !w->init || w->init->rank < 1 ||
        !gl_dtype_is_float(w->init->dtype))
        return -1;
    return w->init->dims[0];
}

/* Conv n's zero bias as input 2 of c, which stands for it. */
static gl_status add_zero_bias(gl_tp_run *run, const gl_node *n, gl_node *c)
{
    int64_t m = zero_bias_channels(n);
    gl_tensor *t = gl_tensor_new(n->inputs[1]->init->dtype, 1, &m);
    if (!t)
        return GL_ERR_NOMEM;
    char name[200];
    snprintf(name, sizeof(name), "%.150s/zero_bias", n->name);
    gl_value *b = gl_add_initializer(run->g, name, t);
    return b ? gl_set_input(run->g, c, 2, b) : GL_ERR_NOMEM;
}

/* Resize seen as if a Transpose from NHWC fed it: its handler's arguments. */
static void resize_args(gl_tp_run *run, gl_node *n, gl_tp_args *a, size_t *inputs)
{
    *inputs = 0;
    *a = (gl_tp_args){.run = run, .node = n, .rank = 4, .perm = to_nchw, .perm_inv = to_nhwc,
                      .inputs = inputs, .n_inputs = 1};
}

static void resize_plan(gl_tp_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    plan->transposes_outputs = true;
    plan->out_rank = 4;
    memcpy(plan->out_perm, to_nchw, sizeof(to_nchw));
}

/* Whether n (of op `row`) can become channels-last; else why not. Edits nothing. */
static bool check_candidate(gl_tp_run *run, gl_node *n, const layout_op *row, char *why,
                            size_t len)
{
    const gl_value *x = n->n_inputs ? n->inputs[0] : NULL;
    int rank = gl_value_rank(x);
    if (run->opset < row->min_opset)
        return gl_tp_refuse(why, len, "%s '%s': converted from opset %d on, the model has "
                            "%lld", n->op_type, n->name, row->min_opset,
                            (long long)run->opset);
    if (!x || rank != 4)
        return gl_tp_refuse(why, len, "%s '%s': its input has %s, the channels-last forms "
                            "are 2-D (rank 4) only", n->op_type, n->name,
                            !x ? "no value" : rank < 0 ? "an unknown rank" : "another rank");
    if (!n->n_outputs || !n->outputs[0])
        return gl_tp_refuse(why, len, "%s '%s' has no output Y", n->op_type, n->name);
    /* A QDQ unit's Conv is the qdq pass's, later in the pipeline: its int8 kernel picks
     * the layout itself, and a NhwcConv would be no unit any more. */
    if (gl_node_is(n, "Conv") && x->producer && gl_node_is(x->producer, "DequantizeLinear"))
        return gl_tp_refuse(why, len, "Conv '%s' reads DequantizeLinear '%s': a quantized "
                            "unit, left to the qdq pass's int8 kernel (nhwc inside)", n->name,
                            x->producer->name);
    for (size_t o = 1; o < n->n_outputs; o++)
        if (n->outputs[o] && (n->outputs[o]->n_uses || n->outputs[o]->n_output_refs))
            return gl_tp_refuse(why, len, "%s '%s': output %zu ('%s') is read, and only Y "
                                "has a channels-last form%s", n->op_type, n->name, o,
                                n->outputs[o]->name,
                                gl_node_is(n, "MaxPool") ? " (Indices are NCHW offsets)"
                                                         : "");
    if (!row->nhwc) {
        gl_tp_args a;
        gl_tp_plan plan;
        size_t inputs;
        resize_args(run, n, &a, &inputs);
        resize_plan(&plan);
        return gl_tp_resize_handler.check(&a, &plan, why, len);
    }
    for (size_t i = 0; i < n->n_attrs; i++) {
        const gl_attr *at = &n->attrs[i];
        const layout_attr *ar = attr_row(row, at->name, run->opset);
        if (!ar || ar->type != at->type)
            return gl_tp_refuse(why, len, "%s '%s': attribute '%s' is not one %s takes at "
                                "opset %lld", n->op_type, n->name, at->name, row->nhwc,
                                (long long)run->opset);
    }
    if (gl_node_attr_int(n, "training_mode", 0))
        return gl_tp_refuse(why, len, "%s '%s' is in training mode", n->op_type, n->name);
    if (n->n_inputs > n_params(row))
        return gl_tp_refuse(why, len, "%s '%s' has %zu inputs, %s takes %zu", n->op_type,
                            n->name, n->n_inputs, row->nhwc, n_params(row));
    if (needs_zero_bias(n) && zero_bias_channels(n) < 0)
        return gl_tp_refuse(why, len, "Conv '%s' has no bias and its weights are not a "
                            "float constant: no zero bias can stand in", n->name);
    return true;
}

/* ---- 4. the functions ------------------------------------------------------------------- */

static gl_node *body_node(gl_graph *b, const char *op, const char *out, gl_value *const *ins,
                          size_t n_ins)
{
    return gl_add_node_named(b, op, "", out, ins, n_ins, &out, 1);
}

/* graphlab.<NhwcOp>(params) = Transpose(Op(Transpose(X), params...)), written at the
 * model's ai.onnx opset (a function imports the model's version). */
static gl_status add_function(gl_model *m, const layout_op *row, int64_t opset)
{
    gl_graph *b = gl_graph_new(m, NULL, row->nhwc);
    gl_value *ins[GL_ARRAY_LEN(row->params)];
    size_t np = n_params(row);
    for (size_t i = 0; i < np; i++) {
        ins[i] = gl_add_value(b, row->params[i]);
        gl_graph_add_input(b, ins[i]);
    }
    gl_node *t1 = body_node(b, "Transpose", "X_nchw", ins, 1);
    ins[0] = t1 ? t1->outputs[0] : NULL;
    gl_node *op = ins[0] ? body_node(b, row->op, "Y_nchw", ins, np) : NULL;
    gl_node *t2 = op ? body_node(b, "Transpose", "Y", op->outputs, 1) : NULL;
    if (!t2) {
        gl_graph_free(b);
        return GL_ERR_INTERNAL;
    }
    gl_node_set_attr_ints(t1, "perm", to_nchw, 4);
    gl_node_set_attr_ints(t2, "perm", to_nhwc, 4);
    gl_graph_add_output(b, t2->outputs[0]);
    char **names = gl_xcalloc(GL_ARRAY_LEN(row->attrs), sizeof(char *));
    size_t na = 0;
    for (size_t i = 0; i < GL_ARRAY_LEN(row->attrs) && row->attrs[i].name; i++) {
        if (opset < row->attrs[i].since)
            continue;
        gl_attr a = {.name = gl_xstrdup(row->attrs[i].name), .type = row->attrs[i].type,
                     .ref_attr_name = gl_xstrdup(row->attrs[i].name)};
        gl_node_take_attr(op, &a);
        names[na++] = gl_xstrdup(row->attrs[i].name);
    }
    gl_opset *imports = gl_xcalloc(1, sizeof(gl_opset));
    imports[0] = (gl_opset){gl_xstrdup(""), opset};
    char doc[160];
    snprintf(doc, sizeof(doc), "%s on channels-last (NHWC) data: Transpose -> %s -> Transpose "
             "(graphlab's layout pass)", row->op, row->op);
    m->functions = gl_xrealloc(m->functions, (m->n_functions + 1) * sizeof(gl_function));
    m->functions[m->n_functions++] = (gl_function){
        .name = gl_xstrdup(row->nhwc), .domain = gl_xstrdup(GRAPHLAB),
        .doc_string = gl_xstrdup(doc), .attributes = names, .n_attributes = na,
        .opsets = imports, .n_opsets = 1, .body = b};
    return GL_OK;
}

static gl_status ensure_function(gl_model *m, const layout_op *row, int64_t opset)
{
    for (size_t i = 0; i < m->n_functions; i++)
        if (m->functions[i].name && !strcmp(m->functions[i].name, row->nhwc) &&
            m->functions[i].domain && !strcmp(m->functions[i].domain, GRAPHLAB))
            return GL_OK;
    if (!gl_model_opset(m, GRAPHLAB))
        gl_model_set_opset(m, GRAPHLAB, 1);
    if (m->ir_version < 8)
        m->ir_version = 8; /* ModelProto.functions */
    return add_function(m, row, opset);
}

/* ---- converting one node ---------------------------------------------------------------- */

/* The checks let only plain attributes through; another kind here is a bug of ours. */
static gl_status copy_attrs(gl_node *dst, const gl_node *src)
{
    if (gl_node_copy_plain_attrs(dst, src))
        return GL_OK;
    return gl_fail(GL_ERR_INTERNAL, "layout: node '%s': an attribute that is no int, float, "
                   "string or list of them passed the check", src->name);
}

/* n becomes its channels-last form between Transposes; new nodes stand for n, made by
 * `decision`. */
static gl_status convert(gl_tp_run *run, gl_node *n, const layout_op *row, int64_t decision)
{
    gl_graph *g = run->g;
    run->decision = decision;
    if (!row->nhwc) {
        gl_tp_args a;
        gl_tp_plan plan;
        size_t inputs;
        char why[200];
        resize_args(run, n, &a, &inputs);
        resize_plan(&plan);
        run->for_node = n;
        gl_status st = gl_tp_resize_handler.check(&a, &plan, why, sizeof(why))
                           ? gl_tp_resize_handler.apply(&a, &plan)
                           : gl_fail(GL_ERR_INTERNAL, "layout: Resize '%s': %s", n->name, why);
        run->for_node = NULL;
        return st;
    }
    gl_status st = ensure_function(run->m, row, run->opset);
    gl_node *c = st == GL_OK ? gl_add_node(g, row->nhwc, GRAPHLAB, n->name, n->inputs,
                                           n->n_inputs, 1)
                             : NULL;
    if (!c)
        return st != GL_OK ? st : gl_fail(GL_ERR_INTERNAL, "layout: adding %s", row->nhwc);
    gl_node_inherit_provenance(c, &n, 1, decision);
    if (needs_zero_bias(n))
        st = add_zero_bias(run, n, c);
    if (st == GL_OK && (st = copy_attrs(c, n)) == GL_OK &&
        (st = gl_move_output(g, n, 0, c, 0)) == GL_OK)
        st = gl_remove_node(g, n);
    run->for_node = c;
    if (st == GL_OK)
        st = gl_tp_transpose_outputs(run, c, to_nchw, 4);
    if (st == GL_OK)
        st = gl_tp_transpose_input(run, c, 0, to_nhwc, 4);
    run->for_node = NULL;
    return st;
}

/* ---- 2. regions ----------------------------------------------------------------------- */

typedef struct region {
    gl_node **nodes; /* candidates, in graph order */
    size_t n, cap;
} region;

/* Candidates (rows[i] set) joined through nodes a Transpose can pass: the regions, in
 * the order of their first node. */
static region *find_regions(gl_tp_run *run, const layout_op *const *rows, size_t *n_regions)
{
    gl_graph *g = run->g;
    size_t n = g->n_nodes;
    size_t *parent = gl_xmalloc((n ? n : 1) * sizeof(size_t));
    bool *member = gl_xcalloc(n ? n : 1, sizeof(bool));
    for (size_t i = 0; i < n; i++) {
        parent[i] = i;
        bool layout;
        member[i] = g->nodes[i] && (rows[i] || gl_tp_find_handler(run, g->nodes[i], &layout));
    }
    gl_node *node;
    gl_foreach_node(g, i, node) {
        for (size_t k = 0; member[i] && k < node->n_inputs; k++) {
            const gl_node *p = node->inputs[k] ? node->inputs[k]->producer : NULL;
            if (p && p->graph == g && member[p->index])
                gl_uf_union(parent, p->index, i);
        }
    }
    region *out = NULL;
    size_t *slot = gl_xmalloc((n ? n : 1) * sizeof(size_t)), count = 0, cap = 0;
    for (size_t i = 0; i < n; i++)
        slot[i] = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (!rows[i])
            continue;
        size_t root = gl_uf_find(parent, i);
        if (slot[root] == SIZE_MAX) {
            GL_GROW(out, cap, count + 1);
            out[count] = (region){0};
            slot[root] = count++;
        }
        region *r = &out[slot[root]];
        GL_GROW(r->nodes, r->cap, r->n + 1);
        r->nodes[r->n++] = g->nodes[i];
    }
    free(slot);
    free(member);
    free(parent);
    *n_regions = count;
    return out;
}

/* ---- 3. the cost check ------------------------------------------------------------------ */

static size_t count_transposes(const gl_graph *g)
{
    size_t k = 0;
    gl_node *n;
    gl_foreach_node(g, i, n)
        k += gl_node_is(n, "Transpose");
    return k;
}

/* Transposes left after transpose-push on a clone of m with region r (NULL: none)
 * converted. A clone keeps node positions, so r's nodes are found at theirs. */
static gl_status transposes_after_push(gl_tp_run *run, const region *r, size_t *count)
{
    gl_model *trial = gl_model_clone(run->m);
    gl_tp_run tr = {.g = trial->graph, .m = trial, .ctx = run->ctx, .opset = run->opset,
                    .decision = -1};
    gl_status st = GL_OK;
    for (size_t i = 0; r && i < r->n && st == GL_OK; i++) {
        gl_node *n = trial->graph->nodes[r->nodes[i]->index];
        st = convert(&tr, n, op_row(n), -1);
    }
    gl_pass_ctx tctx = {.model = trial, .pass = gl_pass_find("transpose-push"),
                        .step = run->ctx->step, .budget = GL_BUDGET_UNLIMITED,
                        .settings = run->ctx->settings};
    if (st == GL_OK)
        st = gl_toposort(trial->graph, NULL);
    if (st == GL_OK)
        st = gl_transpose_push_with(trial->graph, &tctx, NULL);
    *count = count_transposes(trial->graph);
    gl_decision_clear(&tctx.scratch);
    gl_model_free(trial);
    if (st != GL_OK)
        gl_error_prefix("layout: the cost check's trial");
    return st;
}

/* The region's nodes and numbers; the Transposes transpose-push would leave only when the
 * cost check ran (not under force). */
static void region_decision(gl_decision *d, const region *r, size_t now, bool checked,
                            size_t without, size_t with)
{
    for (size_t i = 0; i < r->n; i++)
        gl_decision_add_node_ref(d, r->nodes[i]);
    gl_decision_add_number(d, "nodes", (double)r->n);
    gl_decision_add_number(d, "transposes_now", (double)now);
    if (checked) {
        gl_decision_add_number(d, "after_push_without", (double)without);
        gl_decision_add_number(d, "after_push_with", (double)with);
    }
}

/* "Conv 'c1', MaxPool 'p1' and 3 more" */
static void describe(const region *r, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n && i < 3 && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s%s '%s'", i ? ", " : "", r->nodes[i]->op_type,
                         r->nodes[i]->name);
        at = w < 0 ? len : at + (size_t)w;
    }
    if (r->n > 3 && at < len)
        snprintf(buf + at, len - at, " and %zu more", r->n - 3);
}

static gl_status decide_regions(gl_tp_run *run, region *regions, size_t n_regions,
                                bool *converted)
{
    gl_pass_ctx *ctx = run->ctx;
    bool force = gl_pass_option_value(ctx, "ignore-cost") != 0;
    size_t base = 0, with = 0;
    /* The trial without a conversion clones and pushes the whole model: only worth it
     * when some region asks (a 100k-node graph with none paid a second for it). */
    gl_status st = force || n_regions == 0 ? GL_OK : transposes_after_push(run, NULL, &base);
    for (size_t k = 0; k < n_regions && st == GL_OK; k++) {
        if (!gl_pass_may_rewrite(ctx))
            break;
        region *r = &regions[k];
        if (!force && (st = transposes_after_push(run, r, &with)) != GL_OK)
            break;
        size_t now = count_transposes(run->g);
        char what[200];
        describe(r, what, sizeof(what));
        const char *nodes = gl_noun((long long)r->n, "node", "nodes");
        gl_decision *d;
        if (!force && with >= base) {
            /* Only the cost says no: --set layout.force=ID converts the region anyway. */
            d = gl_pass_refuse(ctx, "nhwc-region", true, "%zu %s (%s) %s channels-first: "
                               "in NHWC, transpose-push would leave %zu %s, "
                               "without %zu", r->n, nodes, what, r->n == 1 ? "stays" : "stay",
                               with, gl_noun((long long)with, "Transpose", "Transposes"), base);
            gl_pass_forced_reason(ctx, d, "%zu %s (%s) to channels-last, overriding the cost: "
                                  "transpose-push then leaves %zu %s, %zu without the "
                                  "conversion", r->n, nodes, what, with,
                                  gl_noun((long long)with, "Transpose", "Transposes"), base);
            region_decision(d, r, now, true, base, with);
            if (d->verdict != GL_APPLIED)
                continue;
        } else {
            d = force ? gl_pass_decide(ctx, "nhwc-region", GL_APPLIED, "%zu %s (%s) to "
                                       "channels-last (layout.ignore-cost=1: no cost check)",
                                       r->n, nodes, what)
                      : gl_pass_decide(ctx, "nhwc-region", GL_APPLIED, "%zu %s (%s) to "
                                       "channels-last: transpose-push then leaves %zu %s "
                                       "instead of %zu", r->n, nodes, what, with,
                                       gl_noun((long long)with, "Transpose", "Transposes"),
                                       base);
            region_decision(d, r, now, !force, base, with);
            if (gl_pass_vetoed(ctx, d))
                continue;
        }
        int64_t id = d->id;
        for (size_t i = 0; i < r->n && st == GL_OK; i++)
            st = convert(run, r->nodes[i], op_row(r->nodes[i]), id);
        *converted = true;
        base = with;
    }
    return st;
}

/* ---- the pass -------------------------------------------------------------------------- */

gl_status gl_pass_layout(gl_graph *g, gl_pass_ctx *ctx)
{
    gl_model *m = ctx->model ? ctx->model : g->model;
    int64_t opset = m ? gl_model_opset(m, "") : 0;
    if (opset == 0)
        return GL_OK;
    if (opset < GL_TP_MIN_OPSET || opset > GL_TP_MAX_OPSET) {
        gl_decision *d = gl_pass_decide(ctx, "unsupported-opset", GL_REFUSED, "ai.onnx opset "
                                        "%lld is outside %d..%d, where transpose-push "
                                        "works: graph unchanged", (long long)opset,
                                        GL_TP_MIN_OPSET, GL_TP_MAX_OPSET);
        gl_decision_add_number(d, "opset", (double)opset);
        return GL_OK;
    }
    gl_tp_run run = {.g = g, .m = m, .ctx = ctx, .opset = opset, .decision = -1};
    const layout_op **rows = gl_xcalloc(g->n_nodes ? g->n_nodes : 1, sizeof(*rows));
    size_t n_rows = 0;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        const layout_op *row = op_row(n);
        char why[400];
        if (!row)
            continue;
        if (check_candidate(&run, n, row, why, sizeof(why))) {
            rows[i] = row;
            n_rows++;
            continue;
        }
        gl_decision *d = gl_pass_decide(ctx, "nhwc-candidate", GL_REFUSED, "%s", why);
        gl_decision_add_node_ref(d, n);
    }
    /* A region grows around a candidate: none, none to find (nor a handler to look up
     * for every node of the graph). */
    size_t n_regions = 0;
    region *regions = n_rows ? find_regions(&run, rows, &n_regions) : NULL;
    bool converted = false;
    gl_status st = decide_regions(&run, regions, n_regions, &converted);
    for (size_t k = 0; k < n_regions; k++)
        free(regions[k].nodes);
    free(regions);
    free(rows);
    if (st == GL_OK && converted)
        st = gl_toposort(g, NULL);
    return st;
}

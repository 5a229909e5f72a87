/* test_transpose_core.c — the transpose-push pass's own machinery: permutation and axis
 * arithmetic (checked against what the ops do to labelled dims), the cost of each kind
 * of input, handlers that refuse leaving the graph untouched, the content of decision
 * records, rewrite budgets, the extension registry and cost check, provenance, copy-on-
 * write constants, and the rules past ONNX Runtime (size-1 Transposes, dead ones).
 * ORT's own cases are ported in test_transpose.c; random graphs in test_transpose_random.c.
 */
#include "exec/compare.h"
#include "exec/exec.h"
#include "passes/pipeline.h"
#include "passes/transpose.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------- */

typedef struct pass_run {
    gl_decision_log log;
    gl_pass_ctx ctx;
    gl_status st;
    uint64_t before, after; /* fingerprints */
} pass_run;

/* Shape inference (as the pipeline runs it first), then the pass with a budget and an
 * optional registry. */
static void run_push(pass_run *r, gl_model *m, int64_t budget, const gl_tp_registry *reg)
{
    memset(r, 0, sizeof(*r));
    cr_assert_eq(gl_infer_graph(m, m->graph, NULL, NULL), GL_OK, "%s", gl_error_message());
    r->ctx = (gl_pass_ctx){.model = m, .pass = gl_pass_find("transpose-push"), .step = 1,
                           .budget = budget, .log = &r->log};
    cr_assert_not_null(r->ctx.pass, "transpose-push is in the pass table");
    r->before = gl_graph_fingerprint(m->graph);
    r->st = gl_transpose_push_with(m->graph, &r->ctx, reg);
    cr_assert_eq(r->st, GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_graph_verify(m->graph, false), GL_OK, "%s", gl_error_message());
    r->after = gl_graph_fingerprint(m->graph);
}

static size_t count_verdict(const pass_run *r, gl_verdict v)
{
    size_t n = 0;
    for (size_t i = 0; i < r->log.n; i++)
        n += r->log.items[i].verdict == v;
    return n;
}

static const gl_decision *find_rule(const pass_run *r, const char *rule, gl_verdict v)
{
    for (size_t i = 0; i < r->log.n; i++)
        if (!strcmp(r->log.items[i].rule, rule) && r->log.items[i].verdict == v)
            return &r->log.items[i];
    return NULL;
}

/* Shape inference, then the pass as the pipeline runs it, with --set
 * transpose-push.ort-only=1 or without, recording into *log. */
static void run_push_ort_only(gl_model *m, bool ort_only, gl_decision_log *log)
{
    gl_settings settings = {0};
    if (ort_only)
        cr_assert_eq(gl_settings_apply(&settings, "transpose-push.ort-only=1"), GL_OK);
    gl_pass_ctx ctx = {.model = m, .pass = gl_pass_find("transpose-push"), .step = 1,
                       .budget = GL_BUDGET_UNLIMITED, .log = log, .settings = &settings};
    cr_assert_eq(gl_infer_graph(m, m->graph, NULL, NULL), GL_OK);
    cr_assert_eq(gl_pass_run(m->graph, &ctx), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_graph_verify(m->graph, false), GL_OK, "%s", gl_error_message());
    gl_settings_free(&settings);
}

static size_t count_op(const gl_graph *g, const char *op)
{
    size_t k = 0;
    gl_node *n;
    gl_foreach_node(g, i, n)
        k += gl_node_is(n, op);
    return k;
}

static gl_node *add_transpose(gl_graph *g, const char *name, gl_value *x, const int64_t *perm,
                              int rank)
{
    gl_node *t = tu_node(g, "Transpose", name, 1, x);
    gl_node_set_attr_ints(t, "perm", perm, (size_t)rank);
    return t;
}

/* Every node stands for itself, as the loader sets it. */
static void own_provenance(gl_graph *g)
{
    gl_node *n;
    gl_foreach_node(g, i, n)
        gl_node_set_provenance(n, &n->id, 1, -1);
}

/* Deterministic float data in [-1, 1). */
static gl_tensor *data_for(const gl_value *in, unsigned seed)
{
    int64_t dims[GL_MAX_RANK];
    for (int i = 0; i < in->type.shape.rank; i++)
        dims[i] = in->type.shape.dims[i].value;
    gl_tensor *t = gl_tensor_new(in->type.dtype, in->type.shape.rank, dims);
    cr_assert_not_null(t);
    if (in->type.dtype == GL_DT_FLOAT) {
        float *p = gl_tensor_make_writable(t);
        uint32_t s = seed * 2654435761u + 1;
        for (int64_t i = 0; i < t->count; i++) {
            s = s * 1664525u + 1013904223u;
            p[i] = (float)((s >> 8) % 2000) / 1000.0f - 1.0f;
        }
    }
    return t;
}

/* Run both models on the same inputs (by position) and expect equal outputs. */
static void expect_same_outputs(const gl_model *a, const gl_model *b, double rtol)
{
    size_t ni = a->graph->n_inputs, no = a->graph->n_outputs;
    cr_assert_eq(ni, b->graph->n_inputs);
    cr_assert_eq(no, b->graph->n_outputs);
    gl_tensor *in[8] = {0}, *oa[8] = {0}, *ob[8] = {0};
    cr_assert(ni <= 8 && no <= 8);
    for (size_t i = 0; i < ni; i++)
        in[i] = data_for(a->graph->inputs[i], (unsigned)i + 7);
    gl_exec *ea, *eb;
    cr_assert_eq(gl_exec_create(a, NULL, &ea), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_exec_create(b, NULL, &eb), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_exec_run(ea, (const gl_tensor *const *)in, ni, oa, no), GL_OK, "%s",
                 gl_error_message());
    cr_assert_eq(gl_exec_run(eb, (const gl_tensor *const *)in, ni, ob, no), GL_OK, "%s",
                 gl_error_message());
    for (size_t o = 0; o < no; o++) {
        gl_compare c;
        gl_compare_tensors(ob[o], oa[o], rtol, 0, &c);
        char buf[200];
        gl_compare_format(&c, buf, sizeof(buf));
        cr_expect(c.ok, "output %zu ('%s') differs: %s", o, a->graph->outputs[o]->name, buf);
        cr_expect_str_eq(a->graph->outputs[o]->name, b->graph->outputs[o]->name,
                         "graph output names stay");
        gl_tensor_free(oa[o]);
        gl_tensor_free(ob[o]);
    }
    for (size_t i = 0; i < ni; i++)
        gl_tensor_free(in[i]);
    gl_exec_free(ea);
    gl_exec_free(eb);
}

/* ---- permutations and axes -------------------------------------------------------------- */

/* Labels stand for dims: Transpose(labels, perm)[i] = labels[perm[i]]; a 1 inserted by
 * Unsqueeze is the label -1. */
static void apply_perm(const int64_t *labels, const int64_t *perm, int rank, int64_t *out)
{
    for (int i = 0; i < rank; i++)
        out[i] = labels[perm[i]];
}

static int insert_ones(const int64_t *labels, int rank, const int64_t *axes, size_t n,
                       int64_t *out)
{
    int new_rank = rank + (int)n;
    bool one[GL_MAX_RANK] = {false};
    for (size_t k = 0; k < n; k++)
        one[axes[k]] = true;
    for (int i = 0, j = 0; i < new_rank; i++)
        out[i] = one[i] ? -1 : labels[j++];
    return new_rank;
}

static const struct {
    int rank;
    int64_t perm[6];
} perms[] = {
    {1, {0}},       {2, {1, 0}},          {3, {1, 2, 0}},          {3, {2, 0, 1}},
    {4, {0, 3, 1, 2}}, {4, {0, 2, 3, 1}}, {4, {3, 2, 1, 0}},       {5, {0, 2, 1, 3, 4}},
    {6, {5, 0, 4, 1, 3, 2}},
};

Test(perm, invert_and_compose_match_transposing_labels)
{
    int64_t labels[6] = {10, 11, 12, 13, 14, 15};
    for (size_t c = 0; c < GL_ARRAY_LEN(perms); c++) {
        int r = perms[c].rank;
        const int64_t *p = perms[c].perm;
        int64_t inv[6], id[6], t1[6], t2[6], t12[6], q[6], composed[6];
        cr_assert(gl_tp_perm_valid(p, r));
        gl_tp_perm_invert(p, r, inv);
        gl_tp_perm_compose(p, inv, r, id);
        cr_expect(gl_tp_perm_is_identity(id, r), "perm %zu then its inverse", c);
        /* Transpose(Transpose(x, p), q) == Transpose(x, compose(p, q)) */
        for (int i = 0; i < r; i++)
            q[i] = perms[(c + 3) % GL_ARRAY_LEN(perms)].rank == r
                       ? perms[(c + 3) % GL_ARRAY_LEN(perms)].perm[i]
                       : inv[i];
        apply_perm(labels, p, r, t1);
        apply_perm(t1, q, r, t2);
        gl_tp_perm_compose(p, q, r, composed);
        apply_perm(labels, composed, r, t12);
        cr_expect(gl_tp_perm_equal(t2, t12, r), "compose of perm %zu", c);
    }
    cr_expect_not(gl_tp_perm_valid((int64_t[]){0, 0}, 2), "repeats");
    cr_expect_not(gl_tp_perm_valid((int64_t[]){0, 2}, 2), "out of range");
    cr_expect_not(gl_tp_perm_valid((int64_t[]){-1, 0}, 2), "negative");
    cr_expect(gl_tp_perm_valid(NULL, 0), "a scalar's empty perm");
    char buf[32];
    gl_tp_perm_format((int64_t[]){0, 3, 1, 2}, 4, buf, sizeof(buf));
    cr_expect_str_eq(buf, "0,3,1,2");
}

Test(perm, unsqueeze_perm_commutes_with_unsqueeze)
{
    static const struct {
        size_t n;
        int64_t axes[3];
    } cases[] = {{1, {0}}, {2, {0, 3}}, {1, {2}}, {3, {0, 1, 5}}, {2, {1, 4}}};
    int64_t labels[6] = {10, 11, 12, 13, 14, 15};
    for (size_t c = 0; c < GL_ARRAY_LEN(perms); c++)
        for (size_t k = 0; k < GL_ARRAY_LEN(cases); k++) {
            int r = perms[c].rank;
            const int64_t *axes = cases[k].axes;
            size_t n = cases[k].n;
            bool fits = true;
            for (size_t j = 0; j < n; j++)
                fits = fits && axes[j] < r + (int)n;
            if (!fits)
                continue;
            /* Unsqueeze(Transpose(x, p), axes) == Transpose(Unsqueeze(x, axes), p') */
            int64_t t[6], lhs[9], u[9], rhs[9], pu[9];
            apply_perm(labels, perms[c].perm, r, t);
            int nr = insert_ones(t, r, axes, n, lhs);
            insert_ones(labels, r, axes, n, u);
            gl_tp_perm_unsqueeze(perms[c].perm, r, axes, n, pu);
            cr_assert(gl_tp_perm_valid(pu, nr));
            apply_perm(u, pu, nr, rhs);
            cr_expect(gl_tp_perm_equal(lhs, rhs, nr), "perm %zu axes case %zu", c, k);
        }
}

Test(perm, squeeze_perm_and_axes_through_commute_with_squeeze)
{
    int64_t labels[6] = {10, 11, 12, 13, 14, 15};
    for (size_t c = 0; c < GL_ARRAY_LEN(perms); c++) {
        int r = perms[c].rank;
        const int64_t *p = perms[c].perm;
        for (int64_t a = 0; a < r; a++) {
            /* Squeeze(Transpose(x, p), [a]) == Transpose(Squeeze(x, [p[a]]), p') */
            int64_t t[6], lhs[6], ax[1], sq[6], rhs[6], ps[6];
            apply_perm(labels, p, r, t);
            for (int i = 0, j = 0; i < r; i++)
                if (i != a)
                    lhs[j++] = t[i];
            cr_assert_eq(gl_tp_axes_through(&a, 1, p, r, true, ax), 1);
            cr_expect_eq(ax[0], p[a]);
            for (int i = 0, j = 0; i < r; i++)
                if (i != ax[0])
                    sq[j++] = labels[i];
            gl_tp_perm_squeeze(p, r, ax, 1, ps);
            cr_assert(gl_tp_perm_valid(ps, r - 1));
            apply_perm(sq, ps, r - 1, rhs);
            cr_expect(gl_tp_perm_equal(lhs, rhs, r - 1), "perm %zu axis %lld", c, (long long)a);
        }
    }
    /* Sorted for Reduce/Squeeze, in order for Slice. */
    int64_t out[4];
    cr_assert_eq(gl_tp_axes_through((int64_t[]){0, 1}, 2, (int64_t[]){2, 0, 1}, 3, false, out), 2);
    cr_expect(out[0] == 2 && out[1] == 0);
    gl_tp_axes_through((int64_t[]){0, 1}, 2, (int64_t[]){2, 0, 1}, 3, true, out);
    cr_expect(out[0] == 0 && out[1] == 2);
}

Test(perm, axes_normalize_and_unsqueezed_axis)
{
    int64_t axes[3] = {-1, 0, 2};
    cr_expect(gl_tp_axes_normalize(axes, 3, 4));
    cr_expect(axes[0] == 3 && axes[1] == 0 && axes[2] == 2);
    cr_expect_not(gl_tp_axes_normalize((int64_t[]){1, -3}, 2, 2), "-3 is out of rank 2");
    cr_expect_not(gl_tp_axes_normalize((int64_t[]){1, -1}, 2, 2), "1 and -1 repeat");
    /* Where a labelled dim lands after inserting 1s. */
    int64_t labels[4] = {10, 11, 12, 13}, u[7];
    int64_t ins[3] = {0, 2, 5};
    insert_ones(labels, 4, ins, 3, u);
    for (int64_t a = 0; a < 4; a++)
        cr_expect_eq(u[gl_tp_axis_unsqueezed(ins, 3, a)], labels[a], "axis %lld", (long long)a);
    int64_t unsorted[3] = {5, 0, 2};
    cr_expect_eq(gl_tp_axis_unsqueezed(unsorted, 3, 2), 4, "order of axes does not matter");
}

/* ---- the cost model ----------------------------------------------------------------------- */

Test(cost, estimated_rank_skips_ones_and_counts_unknown_as_five)
{
    gl_model *m = tu_model(13);
    gl_value *a = tu_input(m->graph, "a", GL_DT_FLOAT, 4, (int64_t[]){1, 3, 1, 5});
    gl_value *b = tu_input(m->graph, "b", GL_DT_FLOAT, 3, (int64_t[]){-1, 1, 7});
    gl_value *c = gl_add_value(m->graph, "c");
    cr_expect_eq(gl_tp_estimate_rank(a), 2);
    cr_expect_eq(gl_tp_estimate_rank(b), 2, "an unknown dim may be large: it counts");
    cr_expect_eq(gl_tp_estimate_rank(c), 5);
    gl_model_free(m);
}

/* x[1,4,5,3] -> t1 = Transpose(0,3,1,2) -> Add(t1, k); other values for each kind. */
Test(cost, each_kind_of_input)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    int64_t p[4] = {0, 3, 1, 2}, q[4] = {0, 2, 1, 3};
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){1, 4, 5, 3});
    gl_value *k = tu_const_f32(g, "k", 1, (int64_t[]){3}, (float[]){1, 2, 3});
    gl_value *dflt = tu_const_f32(g, "dflt", 1, (int64_t[]){3}, (float[]){1, 2, 3});
    gl_graph_add_input(g, dflt); /* an input with a default: not a constant */
    gl_value *qk = tu_const_i64(g, "qk", 1, (int64_t[]){3}, (int64_t[]){1, 2, 3});
    gl_value *sc = tu_const_f32(g, "sc", 0, NULL, (float[]){0.5f});
    gl_node *dq = tu_node(g, "DequantizeLinear", "dq", 2, qk, sc);
    gl_node *t1 = add_transpose(g, "t1", x, p, 4);
    gl_node *add = tu_node(g, "Add", "add", 2, t1->outputs[0], k);
    gl_node *mul = tu_node(g, "Mul", "mul", 2, add->outputs[0], dq->outputs[0]);
    gl_node *t2 = add_transpose(g, "t2", x, q, 4);
    gl_node *sub = tu_node(g, "Sub", "sub", 2, t2->outputs[0], dflt);
    gl_node *t3 = add_transpose(g, "t3", x, p, 4);
    gl_node *conv_in = tu_node(g, "Relu", "r3", 1, t3->outputs[0]);
    gl_value *w = tu_const_f32(g, "w", 4, (int64_t[]){1, 5, 1, 1}, (float[]){1, 1, 1, 1, 1});
    gl_node *conv = tu_node(g, "Conv", "conv", 2, t3->outputs[0], w);
    tu_output(g, mul->outputs[0]);
    tu_output(g, sub->outputs[0]);
    tu_output(g, conv_in->outputs[0]);
    tu_output(g, conv->outputs[0]);
    cr_assert_eq(gl_infer_graph(m, g, NULL, NULL), GL_OK, "%s", gl_error_message());
    gl_tp_run r = {.g = g, .m = m, .opset = 13};
    char why[200];
    static const struct {
        const char *value;
        int cost;
        const char *why;
    } cases[] = {
        {"k", 0, "constant 'k'"},
        {"dq_out0", 0, "constant 'qk' behind DequantizeLinear 'dq'"},
        {"dflt", 1, "needs a Transpose"}, /* rank 1: [3] */
        {"t1_out0", -3, "inverse Transpose 't1' disappears"},
        {"t2_out0", 0, "Transpose 't2' composes"},
        {"t3_out0", 0, "inverse Transpose 't3' stays"}, /* Conv reads it too */
        {"x", 3, "needs a Transpose (rank 3"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_value *v = gl_find_value(g, cases[i].value);
        cr_assert_not_null(v, "%s", cases[i].value);
        int cost = gl_tp_input_cost(&r, v, p, 4, why, sizeof(why));
        cr_expect_eq(cost, cases[i].cost, "%s: cost %d, expected %d (%s)", cases[i].value,
                     cost, cases[i].cost, why);
        cr_expect(strstr(why, cases[i].why), "%s: reason '%s' lacks '%s'", cases[i].value, why,
                  cases[i].why);
    }
    cr_expect(gl_tp_is_constant(k));
    cr_expect_not(gl_tp_is_constant(dflt), "a graph input with a default may be fed");
    gl_model_free(m);
}

/* ---- decisions ----------------------------------------------------------------------------- */

/* x[2,3,4] -> t1 (1,2,0) -> Relu -> [t2 (2,0,1)] -> y */
static gl_model *relu_chain(bool closing)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 3, (int64_t[]){2, 3, 4});
    gl_node *t1 = add_transpose(g, "t1", x, (int64_t[]){1, 2, 0}, 3);
    gl_node *relu = tu_node(g, "Relu", "relu", 1, t1->outputs[0]);
    if (closing) {
        gl_node *t2 = add_transpose(g, "t2", relu->outputs[0], (int64_t[]){2, 0, 1}, 3);
        tu_output(g, t2->outputs[0]);
    } else {
        tu_output(g, relu->outputs[0]);
    }
    own_provenance(g);
    return m;
}

Test(decisions, applied_push_and_cancel_carry_their_numbers)
{
    gl_model *m = relu_chain(true);
    gl_model *orig = gl_model_clone(m);
    pass_run r;
    run_push(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_expect_eq(count_op(m->graph, "Transpose"), 0);
    cr_expect_eq(count_op(m->graph, "Relu"), 1);
    const gl_decision *d = find_rule(&r, "push-through-Relu", GL_APPLIED);
    cr_assert_not_null(d);
    cr_expect_str_eq(d->pass, "transpose-push");
    cr_assert_eq(d->n_nodes, 2);
    cr_expect_str_eq(d->nodes[0], "t1");
    cr_expect_str_eq(d->nodes[1], "relu");
    cr_expect_str_eq(gl_decision_number_text(d, "perm"), "1,2,0");
    cr_expect_eq(gl_decision_number_value(d, "in0_cost"), -3);
    cr_expect_str_eq(gl_decision_number_text(d, "in0"), "inverse Transpose 't1' disappears");
    cr_expect_eq(gl_decision_number_value(d, "out_cost"), 0);
    cr_expect_eq(gl_decision_number_value(d, "out_leads_to_transpose"), 1);
    cr_expect_eq(gl_decision_number_value(d, "total"), -3);
    cr_expect_str_eq(gl_decision_number_text(d, "decided_by"), "default cost");
    cr_expect_str_eq(gl_decision_number_text(d, "handler"), "elementwise");
    cr_expect(strstr(d->reason, "moves below Relu 'relu'"), "%s", d->reason);
    const gl_decision *c = find_rule(&r, "cancel", GL_APPLIED);
    cr_assert_not_null(c, "the pushed Transpose meets t2");
    cr_expect_str_eq(gl_decision_number_text(c, "decided_by"), "transpose meets transpose");
    cr_expect(isnan(gl_decision_number_value(c, "total")), "no cost for a meeting");
    cr_expect_eq(r.ctx.applied, 2);
    cr_expect_eq(count_verdict(&r, GL_APPLIED), 2);
    expect_same_outputs(orig, m, 0);
    gl_decision_log_free(&r.log);
    gl_model_free(orig);
    gl_model_free(m);
}

Test(decisions, refused_push_says_why_with_costs)
{
    gl_model *m = relu_chain(false);
    pass_run r;
    run_push(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_expect_eq(r.before, r.after, "nothing pays: the graph stays");
    const gl_decision *d = find_rule(&r, "push-through-Relu", GL_REFUSED);
    cr_assert_not_null(d);
    cr_expect_eq(gl_decision_number_value(d, "in_cost"), -3);
    cr_expect_eq(gl_decision_number_value(d, "out_cost"), 3);
    cr_expect_eq(gl_decision_number_value(d, "total"), 0);
    cr_expect_eq(gl_decision_number_value(d, "out_leads_to_transpose"), 0);
    cr_expect_str_eq(gl_decision_number_text(d, "decided_by"), "default cost");
    cr_expect(strstr(d->reason, "total 0"), "%s", d->reason);
    gl_decision_log_free(&r.log);
    gl_model_free(m);
}

/* Other domains: graphlab's channels-last ops are layout-sensitive as ONNX's are (only
 * the Transposes around them move); an op the registry does not know has no handler. */
Test(decisions, no_handler_layout_sensitive_and_wrong_input)
{
    gl_model *m = tu_model(15); /* CastLike from 15 */
    gl_model_set_opset(m, "graphlab", 1);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){1, 4, 4, 2});
    gl_value *w = tu_const_f32(g, "w", 4, (int64_t[]){1, 2, 1, 1}, (float[]){1, 2});
    gl_node *t = add_transpose(g, "t", x, (int64_t[]){0, 3, 1, 2}, 4);
    gl_node *conv = tu_node(g, "Conv", "conv", 2, t->outputs[0], w);
    gl_node *mm = tu_node(g, "MatMul", "mm", 2, t->outputs[0], t->outputs[0]);
    gl_node *cl = tu_node(g, "CastLike", "cl", 2, x, t->outputs[0]);
    gl_value *ins[2] = {t->outputs[0], w};
    gl_node *nhwc = gl_add_node(g, "NhwcConv", "graphlab", "nhwc", ins, 2, 1);
    gl_node *other = gl_add_node(g, "Mystery", "example.org", "other", ins, 1, 1);
    gl_node *const outs[] = {conv, mm, cl, nhwc, other};
    for (size_t i = 0; i < GL_ARRAY_LEN(outs); i++)
        tu_output(g, outs[i]->outputs[0]);
    pass_run r;
    run_push(&r, m, GL_BUDGET_UNLIMITED, NULL);
    const gl_decision *d = find_rule(&r, "push-through-Conv", GL_REFUSED);
    cr_assert_not_null(d);
    cr_expect(strstr(d->reason, "layout-sensitive op"), "%s", d->reason);
    d = find_rule(&r, "push-through-NhwcConv", GL_REFUSED);
    cr_assert_not_null(d);
    cr_expect_str_eq(gl_decision_number_text(d, "decided_by"), "layout-sensitive");
    d = find_rule(&r, "push-through-Mystery", GL_REFUSED);
    cr_assert_not_null(d);
    cr_expect_str_eq(gl_decision_number_text(d, "decided_by"), "no handler");
    d = find_rule(&r, "push-through-MatMul", GL_REFUSED);
    cr_assert_not_null(d);
    cr_expect(strstr(d->reason, "no handler for MatMul"), "%s", d->reason);
    d = find_rule(&r, "push-through-CastLike", GL_REFUSED);
    cr_assert_not_null(d);
    cr_expect(strstr(d->reason, "input 1"), "%s", d->reason);
    size_t mm_records = 0;
    for (size_t i = 0; i < r.log.n; i++)
        mm_records += !strcmp(r.log.items[i].rule, "push-through-MatMul");
    cr_expect_eq(mm_records, 1, "MatMul(t, t): the Transpose is considered once");
    gl_decision_log_free(&r.log);
    gl_model_free(m);
}

Test(decisions, unsupported_opset_leaves_the_graph_unchanged)
{
    static const int64_t opsets[] = {6, 22};
    for (size_t i = 0; i < GL_ARRAY_LEN(opsets); i++) {
        gl_model *m = tu_model(opsets[i]);
        gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (int64_t[]){2, 3});
        gl_node *t1 = add_transpose(m->graph, "t1", x, (int64_t[]){1, 0}, 2);
        gl_node *t2 = add_transpose(m->graph, "t2", t1->outputs[0], (int64_t[]){1, 0}, 2);
        tu_output(m->graph, t2->outputs[0]);
        pass_run r;
        run_push(&r, m, GL_BUDGET_UNLIMITED, NULL);
        cr_expect_eq(r.before, r.after, "opset %lld", (long long)opsets[i]);
        const gl_decision *d = find_rule(&r, "unsupported-opset", GL_REFUSED);
        cr_assert_not_null(d, "opset %lld", (long long)opsets[i]);
        cr_expect_eq(gl_decision_number_value(d, "opset"), (double)opsets[i]);
        gl_decision_log_free(&r.log);
        gl_model_free(m);
    }
}

/* ---- handlers refuse all or nothing -------------------------------------------------------- */

static gl_tp_cost_result always_push(const gl_tp_run *run, const gl_node *node,
                                     const int64_t *perm, int rank, void *user)
{
    (void)run, (void)node, (void)perm, (void)rank, (void)user;
    return GL_TP_COST_PUSH;
}

/* Graphs whose handler must refuse once it is asked (the cost check says push). */
static gl_model *refusing_graph(int which, const char **op)
{
    gl_model *m = tu_model(which == 4 ? 11 : 13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 3, (int64_t[]){2, 3, 4});
    gl_node *t = add_transpose(g, "t", x, (int64_t[]){2, 0, 1}, 3);
    gl_value *tv = t->outputs[0];
    gl_node *n = NULL;
    switch (which) {
    case 0: { /* a broadcast input of unknown rank */
        gl_value *y = gl_add_value(g, "y");
        y->type.kind = GL_TYPE_TENSOR;
        y->type.dtype = GL_DT_FLOAT;
        gl_graph_add_input(g, y);
        n = tu_node(g, "Add", "n", 2, tv, y);
        *op = "Add";
        break;
    }
    case 1: /* Squeeze without axes */
        n = tu_node(g, "Squeeze", "n", 1, tv);
        *op = "Squeeze";
        break;
    case 2: { /* Reshape to a computed shape */
        gl_value *s = tu_input(g, "s", GL_DT_INT64, 1, (int64_t[]){2});
        n = tu_node(g, "Reshape", "n", 2, tv, s);
        *op = "Reshape";
        break;
    }
    case 3: { /* Slice without axes, starts of unknown length */
        gl_value *st = tu_input(g, "st", GL_DT_INT64, 1, (int64_t[]){-1});
        gl_value *en = tu_input(g, "en", GL_DT_INT64, 1, (int64_t[]){-1});
        n = tu_node(g, "Slice", "n", 3, tv, st, en);
        *op = "Slice";
        break;
    }
    default: /* Softmax before 13 flattens at axis 1; (2,0,1) moves dims across it */
        n = tu_node(g, "Softmax", "n", 1, tv);
        *op = "Softmax";
        break;
    }
    gl_node *after = tu_node(g, "Relu", "after", 1, n->outputs[0]);
    tu_output(g, after->outputs[0]);
    tu_output(g, tv);
    return m;
}

Test(handlers, a_refusal_changes_nothing)
{
    gl_tp_registry reg = {0};
    gl_tp_registry_set_cost_check(&reg, always_push, NULL);
    for (int which = 0; which < 5; which++) {
        const char *op;
        gl_model *m = refusing_graph(which, &op);
        pass_run r;
        run_push(&r, m, GL_BUDGET_UNLIMITED, &reg);
        char rule[64];
        snprintf(rule, sizeof(rule), "push-through-%s", op);
        const gl_decision *d = find_rule(&r, rule, GL_REFUSED);
        cr_assert_not_null(d, "%s: a refusal", op);
        cr_expect_str_eq(gl_decision_number_text(d, "decided_by"), "handler", "%s", op);
        cr_expect(strstr(d->reason, "'n'"), "%s: the reason names the node: %s", op, d->reason);
        cr_expect_eq(r.before, r.after, "%s: the graph is untouched", op);
        cr_expect_eq(count_verdict(&r, GL_APPLIED), 0, "%s", op);
        gl_decision_log_free(&r.log);
        gl_model_free(m);
    }
    gl_tp_registry_free(&reg);
}

/* ---- budgets ----------------------------------------------------------------------------------- */

/* x[1,6,5,4] NHWC -> t (0,3,1,2) -> Mul(k[4,1,1]) -> Add(b[4,1,1]) -> Relu -> Sigmoid ->
 * t_back (0,2,3,1) -> y: four pushes and a cancel. */
static gl_model *nhwc_chain(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){1, 6, 5, 4});
    gl_value *k = tu_const_f32(g, "k", 3, (int64_t[]){4, 1, 1}, (float[]){0.5f, -1, 2, 3});
    gl_value *b = tu_const_f32(g, "b", 3, (int64_t[]){4, 1, 1}, (float[]){0.1f, 0.2f, 0.3f, 0.4f});
    gl_node *t = add_transpose(g, "t", x, (int64_t[]){0, 3, 1, 2}, 4);
    gl_node *mul = tu_node(g, "Mul", "mul", 2, t->outputs[0], k);
    gl_node *add = tu_node(g, "Add", "add", 2, mul->outputs[0], b);
    gl_node *relu = tu_node(g, "Relu", "relu", 1, add->outputs[0]);
    gl_node *sig = tu_node(g, "Sigmoid", "sig", 1, relu->outputs[0]);
    gl_node *back = add_transpose(g, "t_back", sig->outputs[0], (int64_t[]){0, 2, 3, 1}, 4);
    tu_output(g, back->outputs[0]);
    own_provenance(g);
    return m;
}

Test(budget, k_rewrites_then_stop_and_every_prefix_computes_the_same)
{
    gl_model *full = nhwc_chain();
    pass_run r;
    run_push(&r, full, GL_BUDGET_UNLIMITED, NULL);
    int64_t total = r.ctx.applied;
    cr_expect_eq(total, 5, "Mul, Add, Relu, Sigmoid, then the cancel");
    cr_expect_eq(count_op(full->graph, "Transpose"), 0);
    gl_decision_log_free(&r.log);
    gl_model *orig = nhwc_chain();
    cr_assert_eq(gl_infer_graph(orig, orig->graph, NULL, NULL), GL_OK);
    for (int64_t k = 0; k <= total + 1; k++) {
        gl_model *m = nhwc_chain();
        run_push(&r, m, k, NULL);
        int64_t want = k < total ? k : total;
        cr_expect_eq(r.ctx.applied, want, "K=%lld: %lld applied", (long long)k,
                     (long long)r.ctx.applied);
        cr_expect_eq((int64_t)count_verdict(&r, GL_APPLIED), want, "K=%lld", (long long)k);
        if (k == 0)
            cr_expect_eq(r.before, r.after, "K=0 changes nothing");
        expect_same_outputs(orig, m, 1e-6);
        gl_decision_log_free(&r.log);
        gl_model_free(m);
    }
    gl_model_free(orig);
    gl_model_free(full);
}

/* ---- graph rules ------------------------------------------------------------------------------- */

Test(rules, inserted_nodes_inherit_provenance_and_outputs_keep_names)
{
    gl_model *m = relu_chain(false);
    /* Make the push pay: a second reader of relu's output is a Transpose. */
    gl_graph *g = m->graph;
    gl_node *relu = gl_find_node(g, "relu");
    gl_node *t2 = add_transpose(g, "t2", relu->outputs[0], (int64_t[]){2, 0, 1}, 3);
    tu_output(g, t2->outputs[0]);
    own_provenance(g);
    gl_model *orig = gl_model_clone(m);
    pass_run r;
    run_push(&r, m, 1, NULL); /* only the push, not the cancel */
    const gl_decision *d = find_rule(&r, "push-through-Relu", GL_APPLIED);
    cr_assert_not_null(d);
    gl_value *y = gl_find_value(g, "relu_out0");
    cr_assert_not_null(y, "the graph output keeps its name");
    cr_assert(y->n_output_refs > 0);
    gl_node *moved = y->producer;
    cr_assert(gl_node_is(moved, "Transpose"), "the output now comes from the pushed Transpose");
    cr_expect_eq(moved->prov.decision, d->id);
    cr_assert_eq(moved->prov.n_origins, 1);
    cr_expect_eq(moved->prov.origins[0], relu->id, "it stands for the node it was made for");
    expect_same_outputs(orig, m, 0);
    gl_decision_log_free(&r.log);
    gl_model_free(orig);
    gl_model_free(m);
}

Test(rules, constants_transposed_copy_on_write_and_shared_ones_get_an_inverse)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 3, (int64_t[]){2, 3, 4});
    gl_value *z = tu_input(g, "z", GL_DT_FLOAT, 3, (int64_t[]){4, 2, 3});
    float kd[24];
    for (int i = 0; i < 24; i++)
        kd[i] = (float)i;
    gl_value *k = tu_const_f32(g, "k", 3, (int64_t[]){4, 2, 3}, kd);
    gl_node *t = add_transpose(g, "t", x, (int64_t[]){2, 0, 1}, 3);
    gl_node *add = tu_node(g, "Add", "add", 2, t->outputs[0], k);
    gl_node *back = add_transpose(g, "back", add->outputs[0], (int64_t[]){1, 2, 0}, 3);
    gl_node *other = tu_node(g, "Mul", "other", 2, z, k);
    tu_output(g, back->outputs[0]);
    tu_output(g, other->outputs[0]);
    gl_model *orig = gl_model_clone(m); /* shares k's bytes */
    pass_run r;
    run_push(&r, m, GL_BUDGET_UNLIMITED, NULL);
    gl_value *k2 = gl_find_value(g, "k");
    cr_assert_not_null(k2);
    cr_expect(k2->init->dims[0] == 2 && k2->init->dims[1] == 3 && k2->init->dims[2] == 4,
              "k is transposed in place");
    const float *after = gl_tensor_data(k2->init);
    cr_expect_eq(after[1], kd[6], "element (0,0,1) of the new k is (1,0,0) of the old");
    const gl_value *ok = gl_find_value(orig->graph, "k");
    cr_expect_eq(memcmp(gl_tensor_data(ok->init), kd, sizeof(kd)), 0,
                 "the clone's bytes stay: copy-on-write");
    gl_node *mul = gl_find_node(g, "other");
    cr_assert(gl_node_is(mul->inputs[1]->producer, "Transpose"),
              "the other reader sees k through the inverse Transpose");
    expect_same_outputs(orig, m, 0);
    gl_decision_log_free(&r.log);
    gl_model_free(orig);
    gl_model_free(m);
}

Test(rules, size_one_transposes_become_reshapes_or_go)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *a = tu_input(g, "a", GL_DT_FLOAT, 3, (int64_t[]){1, 16, 8});
    gl_value *b = tu_input(g, "b", GL_DT_FLOAT, 3, (int64_t[]){1, 1, 5});
    gl_value *c = tu_input(g, "c", GL_DT_FLOAT, 3, (int64_t[]){2, 1, 3});
    gl_node *ta = add_transpose(g, "ta", a, (int64_t[]){1, 0, 2}, 3); /* [16,1,8]: Reshape */
    gl_node *tb = add_transpose(g, "tb", b, (int64_t[]){1, 0, 2}, 3); /* [1,1,5]: nothing */
    gl_node *tc = add_transpose(g, "tc", c, (int64_t[]){2, 1, 0}, 3); /* real */
    gl_node *ra = tu_node(g, "Relu", "ra", 1, ta->outputs[0]);
    gl_node *rb = tu_node(g, "Relu", "rb", 1, tb->outputs[0]);
    tu_output(g, ra->outputs[0]);
    tu_output(g, rb->outputs[0]);
    tu_output(g, tc->outputs[0]);
    gl_model *orig = gl_model_clone(m);
    pass_run r;
    run_push(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_expect_not_null(find_rule(&r, "transpose-is-reshape", GL_APPLIED));
    cr_expect_not_null(find_rule(&r, "identity-transpose", GL_APPLIED));
    cr_expect_eq(count_op(g, "Transpose"), 1, "tc moves real dims: it stays");
    cr_expect_eq(count_op(g, "Reshape"), 1);
    cr_expect_str_eq(g->outputs[2]->name, "tc_out0");
    expect_same_outputs(orig, m, 0);
    gl_decision_log_free(&r.log);
    gl_model_free(orig);
    gl_model_free(m);
}

Test(rules, a_transpose_read_only_for_type_or_static_shape_is_dead)
{
    gl_model *m = tu_model(15);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 3, (int64_t[]){2, 3, 4});
    gl_value *i = tu_input(g, "i", GL_DT_INT64, 1, (int64_t[]){3});
    gl_node *t = add_transpose(g, "t", x, (int64_t[]){2, 0, 1}, 3);
    gl_node *cl = tu_node(g, "CastLike", "cl", 2, i, t->outputs[0]);
    gl_node *sz = tu_node(g, "Size", "sz", 1, t->outputs[0]);
    gl_node *sh = tu_node(g, "Shape", "sh", 1, t->outputs[0]);
    tu_output(g, cl->outputs[0]);
    tu_output(g, sz->outputs[0]);
    tu_output(g, sh->outputs[0]);
    gl_model *orig = gl_model_clone(m);
    pass_run r;
    run_push(&r, m, GL_BUDGET_UNLIMITED, NULL);
    const gl_decision *d = find_rule(&r, "dead-transpose", GL_APPLIED);
    cr_assert_not_null(d);
    cr_expect_eq(gl_decision_number_value(d, "readers"), 3);
    cr_expect_eq(count_op(g, "Transpose"), 0);
    cr_expect_eq(count_op(g, "Shape"), 0, "the static shape became a constant");
    expect_same_outputs(orig, m, 0);
    gl_decision_log_free(&r.log);
    gl_model_free(orig);
    gl_model_free(m);
}

/* ---- extensions ---------------------------------------------------------------------------------- */

static bool check_refuse(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    (void)plan;
    snprintf(why, len, "test handler refuses '%s'", a->node->name);
    return false;
}

static bool check_ok(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    (void)a, (void)plan, (void)why, (void)len;
    return true;
}

static gl_status apply_through(gl_tp_args *a, const gl_tp_plan *plan)
{
    gl_status st = gl_tp_transpose_inputs(a);
    return st == GL_OK ? gl_tp_transpose_outputs(a->run, a->node, plan->out_perm, plan->out_rank)
                       : st;
}

static const gl_tp_handler refusing = {"test-refusing", GL_TP_FIRST, true, check_refuse,
                                       apply_through};
static const gl_tp_handler passing = {"test-passing", GL_TP_FIRST, true, check_ok,
                                      apply_through};

static gl_tp_cost_result stop_all(const gl_tp_run *run, const gl_node *node,
                                  const int64_t *perm, int rank, void *user)
{
    (void)run, (void)perm, (void)rank;
    (*(int *)user)++;
    return gl_node_is(node, "Transpose") ? GL_TP_COST_FALL_THROUGH : GL_TP_COST_STOP;
}

Test(extensions, registry_keys_and_overrides)
{
    gl_tp_registry reg = {0};
    gl_tp_registry_add(&reg, "", "Relu", &refusing);
    gl_tp_registry_add(&reg, "ai.onnx", "Relu", &passing); /* the same key: replaced */
    gl_tp_registry_add(&reg, "my.dom", "Foo", &refusing);
    cr_expect_eq(reg.n, 2);
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_node *relu = tu_node(m->graph, "Relu", "r", 1, x);
    gl_node *foo = gl_add_node(m->graph, "Foo", "my.dom", "f", &x, 1, 1);
    gl_node *conv = tu_node(m->graph, "Conv", "c", 1, x);
    gl_node *bar = gl_add_node(m->graph, "Foo", "other.dom", "b", &x, 1, 1);
    gl_tp_run r = {.g = m->graph, .m = m, .opset = 13, .registry = &reg};
    bool layout;
    cr_expect_eq(gl_tp_find_handler(&r, relu, &layout), &passing);
    cr_expect_eq(gl_tp_find_handler(&r, foo, &layout), &refusing, "keyed my.dom.Foo");
    cr_expect_null(gl_tp_find_handler(&r, bar, &layout));
    cr_expect_null(gl_tp_find_handler(&r, conv, &layout));
    cr_expect(layout, "Conv is layout-sensitive");
    gl_tp_registry_add(&reg, "", "Conv", &passing);
    cr_expect_eq(gl_tp_find_handler(&r, conv, &layout), &passing,
                 "an extension may take a layout-sensitive op");
    r.registry = NULL;
    cr_expect_not_null(gl_tp_find_handler(&r, relu, &layout), "the built-in table");
    gl_tp_registry_free(&reg);
    cr_expect_eq(reg.n, 0);
    gl_model_free(m);
}

Test(extensions, extension_handler_and_cost_check_decide)
{
    gl_tp_registry reg = {0};
    gl_tp_registry_add(&reg, "", "Relu", &refusing);
    gl_model *m = relu_chain(true);
    pass_run r;
    run_push(&r, m, GL_BUDGET_UNLIMITED, &reg);
    const gl_decision *d = find_rule(&r, "push-through-Relu", GL_REFUSED);
    cr_assert_not_null(d);
    cr_expect_str_eq(gl_decision_number_text(d, "handler"), "test-refusing");
    cr_expect_str_eq(gl_decision_number_text(d, "decided_by"), "handler");
    cr_expect(strstr(d->reason, "test handler refuses 'relu'"), "%s", d->reason);
    cr_expect_eq(r.before, r.after);
    gl_decision_log_free(&r.log);
    gl_model_free(m);

    /* A cost check that stops everything but Transposes. */
    gl_tp_registry_free(&reg);
    int asked = 0;
    gl_tp_registry_set_cost_check(&reg, stop_all, &asked);
    m = relu_chain(true);
    run_push(&r, m, GL_BUDGET_UNLIMITED, &reg);
    d = find_rule(&r, "push-through-Relu", GL_REFUSED);
    cr_assert_not_null(d);
    cr_expect_str_eq(gl_decision_number_text(d, "decided_by"), "custom check");
    cr_expect_eq(asked, 2, "once in the guard's trial sweep, once in the sweep");
    cr_expect_eq(count_op(m->graph, "Transpose"), 2);
    gl_decision_log_free(&r.log);
    gl_model_free(m);

    /* One that pushes where the default model would not. */
    gl_tp_registry_set_cost_check(&reg, always_push, NULL);
    m = relu_chain(false);
    gl_model *orig = gl_model_clone(m);
    run_push(&r, m, GL_BUDGET_UNLIMITED, &reg);
    d = find_rule(&r, "push-through-Relu", GL_APPLIED);
    cr_assert_not_null(d);
    cr_expect_str_eq(gl_decision_number_text(d, "decided_by"), "custom check");
    cr_expect_eq(gl_decision_number_value(d, "total"), 0, "the default would have refused");
    expect_same_outputs(orig, m, 0);
    gl_decision_log_free(&r.log);
    gl_model_free(orig);
    gl_model_free(m);
    gl_tp_registry_free(&reg);
}

Test(extensions, resize_is_pushed_only_when_registered)
{
    for (int registered = 0; registered < 2; registered++) {
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){1, 4, 4, 2});
        gl_value *sc = tu_const_f32(g, "sc", 1, (int64_t[]){4}, (float[]){1, 1, 2, 2});
        gl_node *t = add_transpose(g, "t", x, (int64_t[]){0, 3, 1, 2}, 4);
        gl_value *ins[3] = {t->outputs[0], NULL, sc};
        gl_node *rs = gl_add_node(g, "Resize", "", "rs", ins, 3, 1);
        gl_node *back = add_transpose(g, "back", rs->outputs[0], (int64_t[]){0, 2, 3, 1}, 4);
        tu_output(g, back->outputs[0]);
        gl_model *orig = gl_model_clone(m);
        gl_tp_registry reg = {0};
        if (registered)
            gl_tp_registry_add(&reg, "", "Resize", &gl_tp_resize_handler);
        pass_run r;
        run_push(&r, m, GL_BUDGET_UNLIMITED, &reg);
        cr_expect_eq(count_op(g, "Transpose"), registered ? 0 : 2, "registered=%d", registered);
        if (registered) {
            const float *s = gl_tensor_data(rs->inputs[2]->init);
            cr_expect(s[1] == 2 && s[2] == 2 && s[3] == 1, "scales follow the NHWC order");
        }
        expect_same_outputs(orig, m, 0);
        gl_decision_log_free(&r.log);
        gl_tp_registry_free(&reg);
        gl_model_free(orig);
        gl_model_free(m);
    }
}

/* ---- quantized graphs --------------------------------------------------------------------------- */

/* q[1,2,3,2] (uint8) -> DQ -> t (0,3,1,2) -> Q -> DQ -> back (0,2,3,1) -> Q -> y: after the
 * Transposes cancel, the DQ -> Q pairs with nothing between go. */
Test(qdq, empty_dq_q_pairs_go_after_a_cancel)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *q = tu_input(g, "q", GL_DT_UINT8, 4, (int64_t[]){1, 2, 3, 2});
    gl_value *s = tu_const_f32(g, "s", 0, NULL, (float[]){0.25f});
    gl_tensor *zt = gl_tensor_new(GL_DT_UINT8, 0, NULL);
    *(uint8_t *)gl_tensor_make_writable(zt) = 128;
    gl_value *z = gl_add_initializer(g, "z", zt);
    gl_node *dq1 = tu_node(g, "DequantizeLinear", "dq1", 3, q, s, z);
    gl_node *t = add_transpose(g, "t", dq1->outputs[0], (int64_t[]){0, 3, 1, 2}, 4);
    gl_node *q1 = tu_node(g, "QuantizeLinear", "q1", 3, t->outputs[0], s, z);
    gl_node *dq2 = tu_node(g, "DequantizeLinear", "dq2", 3, q1->outputs[0], s, z);
    gl_node *back = add_transpose(g, "back", dq2->outputs[0], (int64_t[]){0, 2, 3, 1}, 4);
    gl_node *q2 = tu_node(g, "QuantizeLinear", "q2", 3, back->outputs[0], s, z);
    tu_output(g, q2->outputs[0]);
    gl_model *orig = gl_model_clone(m);
    pass_run r;
    run_push(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_expect_eq(count_op(g, "Transpose"), 0);
    cr_expect_not_null(find_rule(&r, "qdq-remove-pair", GL_APPLIED));
    cr_expect_eq(g->outputs[0]->name[0], 'q', "output name kept: %s", g->outputs[0]->name);
    expect_same_outputs(orig, m, 0);
    gl_decision_log_free(&r.log);
    gl_model_free(orig);
    gl_model_free(m);
}

/* ---- the pipeline ---------------------------------------------------------------------------------- */

Test(pipeline, transpose_push_in_the_default_pipeline)
{
    gl_pass_step *steps;
    size_t n;
    cr_assert_eq(gl_pass_list_parse("all", &steps, &n), GL_OK);
    static const char *const want[] = {"toposort", "shape-inference", "constant-folding",
                                       "cse", "dce", "transpose-push", "constant-folding",
                                       "cse", "dce", "patterns", "layout", "transpose-push",
                                       "fold-transpose", "qdq", "fusion", "memory-plan"};
    cr_assert_geq(n, GL_ARRAY_LEN(want));
    for (size_t i = 0; i < GL_ARRAY_LEN(want); i++)
        cr_expect_str_eq(steps[i].pass->name, want[i], "step %zu", i);
    free(steps);
    cr_assert_eq(gl_pass_list_parse("transpose-push:3", &steps, &n), GL_OK);
    cr_expect_eq(steps[0].budget, 3);
    free(steps);
}

/* Add(Transpose(a, p), Transpose(b, q)) where q is p but for a size-1 dim: ONNX Runtime
 * stops (the second input only composes); here the composition is a Reshape, so the
 * push pays. */
Test(rules, meeting_pushes_compose_into_a_reshape)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *a = tu_input(g, "a", GL_DT_FLOAT, 4, (int64_t[]){1, 3, 4, 5});
    gl_value *b = tu_input(g, "b", GL_DT_FLOAT, 4, (int64_t[]){3, 1, 4, 5});
    gl_node *ta = add_transpose(g, "ta", a, (int64_t[]){0, 2, 3, 1}, 4);
    gl_node *tb = add_transpose(g, "tb", b, (int64_t[]){1, 2, 3, 0}, 4);
    gl_node *add = tu_node(g, "Add", "add", 2, ta->outputs[0], tb->outputs[0]);
    tu_output(g, add->outputs[0]);
    gl_model *orig = gl_model_clone(m);
    pass_run r;
    run_push(&r, m, GL_BUDGET_UNLIMITED, NULL);
    const gl_decision *d = find_rule(&r, "push-through-Add", GL_APPLIED);
    cr_assert_not_null(d, "pushed");
    cr_expect_eq(gl_decision_number_value(d, "in1_cost"), -3);
    cr_expect(strstr(gl_decision_number_text(d, "in1"), "a Reshape"), "%s",
              gl_decision_number_text(d, "in1"));
    cr_expect_eq(gl_decision_number_value(d, "total"), -3);
    cr_expect_not_null(find_rule(&r, "transpose-is-reshape", GL_APPLIED));
    cr_expect_eq(count_op(g, "Transpose"), 1, "one Transpose after Add, was two");
    cr_expect_eq(count_op(g, "Reshape"), 1);
    expect_same_outputs(orig, m, 0);
    gl_decision_log_free(&r.log);
    gl_model_free(orig);
    gl_model_free(m);
}

/* --set transpose-push.ort-only=1: ONNX Runtime's rules only, for comparisons. */
Test(rules, ort_only_option_turns_the_extra_rules_off)
{
    for (int ort_only = 0; ort_only < 2; ort_only++) {
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        gl_value *a = tu_input(g, "a", GL_DT_FLOAT, 3, (int64_t[]){1, 16, 8});
        gl_node *ta = add_transpose(g, "ta", a, (int64_t[]){1, 0, 2}, 3);
        tu_output(g, ta->outputs[0]);
        gl_decision_log log = {0};
        run_push_ort_only(m, ort_only, &log);
        cr_expect_eq(count_op(g, "Transpose"), ort_only ? 1 : 0, "ort-only=%d", ort_only);
        cr_expect_eq(log.n, ort_only ? 0 : 1, "ort-only=%d", ort_only);
        gl_decision_log_free(&log);
        gl_model_free(m);
    }
}

/* ---- the net-transposes guard ----------------------------------------------------------------- */

/* t feeds Concat(t, t) and Neg(t). ONNX Runtime's cost counts t twice as a gain and pushes
 * it below the Concat; Neg then refuses (nothing cancels after it), so t stays and the
 * Concat's output gets a Transpose of its own: 2 where there was 1. The guard refuses
 * that push, with the region's numbers; ort-only=1 keeps ORT's push. */
Test(guard, a_push_whose_region_ends_with_more_transposes_is_refused)
{
    for (int ort_only = 0; ort_only < 2; ort_only++) {
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 3, (int64_t[]){2, 4, 4});
        gl_node *t = add_transpose(g, "t", x, (int64_t[]){1, 2, 0}, 3);
        gl_node *cat = tu_node(g, "Concat", "cat", 2, t->outputs[0], t->outputs[0]);
        gl_node_set_attr_int(cat, "axis", 1);
        gl_node *neg = tu_node(g, "Neg", "neg", 1, t->outputs[0]);
        tu_output(g, cat->outputs[0]);
        tu_output(g, neg->outputs[0]);
        gl_model *orig = gl_model_clone(m);
        gl_decision_log log = {0};
        run_push_ort_only(m, ort_only, &log);
        cr_expect_eq(count_op(g, "Transpose"), ort_only ? 2 : 1, "ort-only=%d", ort_only);
        const gl_decision *refusal = NULL, *note = NULL, *applied = NULL;
        for (size_t i = 0; i < log.n; i++) {
            const gl_decision *d = &log.items[i];
            const char *by = gl_decision_number_text(d, "decided_by");
            if (d->verdict == GL_REFUSED && by && !strcmp(by, "net-transposes guard"))
                refusal = d;
            if (d->verdict == GL_NOTE && !strcmp(d->rule, "net-transposes"))
                note = d;
            if (d->verdict == GL_APPLIED && !strcmp(d->rule, "push-through-Concat"))
                applied = d;
        }
        if (ort_only) {
            cr_expect_null(refusal, "ort-only: no guard");
            cr_expect_not_null(applied, "ort-only: ONNX Runtime's push is made");
        } else {
            cr_assert_not_null(refusal, "the push through the Concat is refused");
            cr_expect_str_eq(refusal->rule, "push-through-Concat");
            cr_expect_eq(gl_decision_number_value(refusal, "region_transposes_before"), 1);
            cr_expect_eq(gl_decision_number_value(refusal, "region_transposes_after"), 2);
            cr_expect_eq(gl_decision_number_value(refusal, "total"), -3,
                         "the cost model's numbers are kept");
            cr_assert_not_null(note, "a summary of what the guard refused");
            cr_expect_eq(gl_decision_number_value(note, "refused"), 1);
            cr_expect_eq(gl_decision_number_value(note, "trials"), 2);
            cr_expect_null(applied);
        }
        expect_same_outputs(orig, m, 0);
        gl_decision_log_free(&log);
        gl_model_free(orig);
        gl_model_free(m);
    }
}

/* The guard's trials are on clones: a graph the guard leaves alone gets exactly the
 * decisions it got without it (the same ids, rules and verdicts as under ort-only, but
 * for the rules beyond ORT, which this graph does not reach). */
Test(guard, trials_change_nothing_where_no_region_grows)
{
    gl_decision_log logs[2] = {{0}, {0}};
    uint64_t prints[2];
    for (int ort_only = 0; ort_only < 2; ort_only++) {
        gl_model *m = nhwc_chain();
        run_push_ort_only(m, ort_only, &logs[ort_only]);
        prints[ort_only] = gl_graph_fingerprint(m->graph);
        gl_model_free(m);
    }
    cr_expect_eq(prints[0], prints[1]);
    cr_assert_eq(logs[0].n, logs[1].n);
    for (size_t i = 0; i < logs[0].n; i++) {
        cr_expect_str_eq(logs[0].items[i].rule, logs[1].items[i].rule, "decision %zu", i);
        cr_expect_eq(logs[0].items[i].verdict, logs[1].items[i].verdict, "decision %zu", i);
    }
    gl_decision_log_free(&logs[0]);
    gl_decision_log_free(&logs[1]);
}

/* ---- the first trial in place ------------------------------------------------------------------ */

/* A budget no sweep reaches: the guard's trials then all run on clones and the sweep
 * after them on the graph (a budget could stop the sweep where the trial went on). */
#define BUDGET_UNREACHED (GL_BUDGET_UNLIMITED - 1)

/* The same records (rules, verdicts, reasons, numbers of them) and the same graph, down to
 * which decision made each node. */
static void expect_same_run(const pass_run *a, const gl_model *ma, const pass_run *b,
                            const gl_model *mb)
{
    cr_expect_eq(a->after, b->after, "the same graph");
    cr_assert_eq(a->log.n, b->log.n, "as many records");
    for (size_t i = 0; i < a->log.n; i++) {
        const gl_decision *x = &a->log.items[i], *y = &b->log.items[i];
        cr_expect_str_eq(x->rule, y->rule, "record %zu", i);
        cr_expect_eq(x->verdict, y->verdict, "record %zu", i);
        cr_expect_str_eq(x->reason, y->reason, "record %zu", i);
    }
    cr_assert_eq(ma->graph->n_nodes, mb->graph->n_nodes);
    for (size_t i = 0; i < ma->graph->n_nodes; i++) {
        const gl_node *x = ma->graph->nodes[i], *y = mb->graph->nodes[i];
        cr_assert_eq(!x, !y, "node %zu", i);
        if (x) {
            cr_expect_eq(x->id, y->id, "node %zu", i);
            cr_expect_eq(x->prov.decision, y->prov.decision, "node %zu ('%s')", i, x->name);
        }
    }
}

/* x -> t = Transpose(x) -> Concat(t, t) and Sigmoid(t), both graph outputs. */
static gl_model *concat_and_sigmoid(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    gl_node *t = add_transpose(g, "t", x, (int64_t[]){0, 2, 3, 1}, 4);
    gl_node *cat = tu_node(g, "Concat", "cat", 2, t->outputs[0], t->outputs[0]);
    gl_node_set_attr_int(cat, "axis", 0);
    gl_node *sig = tu_node(g, "Sigmoid", "sig", 1, t->outputs[0]);
    tu_output(g, cat->outputs[0]);
    tu_output(g, sig->outputs[0]);
    return m;
}

/* t feeds Concat(t, t) and Sigmoid(t): ONNX Runtime's cost pushes t below the Concat and
 * the region grows (2 Transposes where there was 1), so the guard refuses the only push.
 * The first trial made that push on the graph itself: taken back (ir/journal.h), the graph
 * is exactly as it began, down to ids, slots and use lists, and the records and the graph
 * are those of trials on clones. */
Test(first_trial, refused_takes_the_graph_back_exactly)
{
    gl_model *m[2], *began = NULL;
    pass_run r[2];
    const int64_t budgets[2] = {GL_BUDGET_UNLIMITED, BUDGET_UNREACHED};
    for (int k = 0; k < 2; k++) {
        m[k] = concat_and_sigmoid();
        gl_graph *g = m[k]->graph;
        if (k == 0) {
            cr_assert_eq(gl_infer_graph(m[0], g, NULL, NULL), GL_OK);
            began = gl_model_clone(m[0]);
        }
        run_push(&r[k], m[k], budgets[k], NULL);
    }
    cr_expect_eq(r[0].after, r[0].before, "the graph as it began");
    char why[300];
    cr_expect(tu_same_graph(m[0]->graph, began->graph, why, sizeof(why)),
              "the journal gave back the graph a clone kept: %s", why);
    gl_model_free(began);
    cr_expect_eq(count_op(m[0]->graph, "Transpose"), 1);
    cr_expect_not_null(find_rule(&r[0], "net-transposes", GL_NOTE), "the guard refused");
    cr_expect_null(find_rule(&r[0], "push-through-Concat", GL_APPLIED),
                   "the trial's records are taken back");
    gl_node *n;
    gl_foreach_node(m[0]->graph, i, n)
        cr_expect_eq(n->graph, m[0]->graph, "node '%s' is the graph's", n->name);
    expect_same_run(&r[0], m[0], &r[1], m[1]);
    for (int k = 0; k < 2; k++) {
        gl_decision_log_free(&r[k].log);
        gl_model_free(m[k]);
    }
}

/* The safety net behind the journal: a rollback that does not give back the graph the
 * step began with (the pipeline's fingerprint in ctx) fails the pass, naming it, instead
 * of leaving a graph it changed silently. Here the step is told another fingerprint. */
Test(first_trial, a_rollback_that_misses_is_an_error)
{
    gl_model *m = concat_and_sigmoid();
    gl_graph *g = m->graph;
    cr_assert_eq(gl_infer_graph(m, g, NULL, NULL), GL_OK);
    gl_decision_log log = {0};
    uint64_t print = gl_graph_fingerprint(g);
    for (int wrong = 0; wrong < 2; wrong++) {
        gl_pass_ctx ctx = {.model = m, .pass = gl_pass_find("transpose-push"), .step = 1,
                           .budget = GL_BUDGET_UNLIMITED, .log = &log,
                           .fingerprint = wrong ? print ^ 1 : print};
        gl_status st = gl_transpose_push_with(g, &ctx, NULL);
        if (!wrong) {
            cr_expect_eq(st, GL_OK, "the right fingerprint: %s", gl_error_message());
            continue;
        }
        cr_expect_eq(st, GL_ERR_INTERNAL);
        cr_expect(strstr(gl_error_message(), "transpose-push") &&
                      strstr(gl_error_message(), "taken back"),
                  "%s", gl_error_message());
    }
    gl_decision_log_free(&log);
    gl_model_free(m);
}

/* The NHWC chain's pushes all pay: the first trial refuses nothing and is kept as the
 * sweep, which leaves what the sweep after trials on clones leaves, record for record. */
Test(first_trial, kept_when_it_refuses_nothing)
{
    gl_model *m[2] = {nhwc_chain(), nhwc_chain()};
    pass_run r[2];
    run_push(&r[0], m[0], GL_BUDGET_UNLIMITED, NULL);
    run_push(&r[1], m[1], BUDGET_UNREACHED, NULL);
    cr_expect_neq(r[0].after, r[0].before, "pushes were made");
    cr_expect_null(find_rule(&r[0], "net-transposes", GL_NOTE), "nothing refused");
    expect_same_run(&r[0], m[0], &r[1], m[1]);
    for (int k = 0; k < 2; k++) {
        gl_decision_log_free(&r[k].log);
        gl_model_free(m[k]);
    }
}

/* test_constant_folding.c — gl_value_make_constant, and the constant-folding pass: what
 * folds (constants, Shape/Size of static shapes, chains, the Shape->Gather->Unsqueeze->
 * Concat->Reshape fixed point, Constant nodes), what does not (random ops, the size
 * limit, graph inputs with defaults unless frozen), the rewrite budget, the shared
 * models' shape chains, and quantized weights (a table: DequantizeLinear is never
 * folded, a Transpose or Reshape after it folds into the integer weight).
 */
#include "graphnote.h"
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "ops/ops.h"
#include "testutil.h"

#include <criterion/criterion.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define EXPECT_NO_LEAKS() cr_expect_eq(__lsan_do_recoverable_leak_check(), 0, "leaks: see stderr")
#else
#define EXPECT_NO_LEAKS() ((void)0)
#endif
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------- */

typedef struct run {
    gl_decision_log log;
    gl_settings settings;
    gl_pass_ctx ctx;
    gl_status st;
} run;

/* Run constant-folding with budget and, when given, one --set assignment. */
static void run_fold(run *r, gl_model *m, int64_t budget, const char *set)
{
    memset(r, 0, sizeof(*r));
    if (set)
        cr_assert_eq(gl_settings_apply(&r->settings, set), GL_OK, "%s", gl_error_message());
    r->ctx = (gl_pass_ctx){.model = m, .pass = gl_pass_find("constant-folding"), .step = 1,
                           .budget = budget, .log = &r->log, .settings = &r->settings};
    cr_assert(r->ctx.pass, "constant-folding is in the pass table");
    r->st = gl_pass_run(m->graph, &r->ctx);
    if (r->st == GL_OK)
        cr_assert_eq(gl_graph_verify(m->graph, false), GL_OK, "%s", gl_error_message());
}

static void run_free(run *r)
{
    gl_decision_log_free(&r->log);
    gl_settings_free(&r->settings);
}

static size_t count_rule(const run *r, const char *rule, gl_verdict v)
{
    size_t n = 0;
    for (size_t i = 0; i < r->log.n; i++)
        n += !strcmp(r->log.items[i].rule, rule) && r->log.items[i].verdict == v;
    return n;
}

static const gl_decision *find_rule(const run *r, const char *rule)
{
    for (size_t i = 0; i < r->log.n; i++)
        if (!strcmp(r->log.items[i].rule, rule))
            return &r->log.items[i];
    return NULL;
}

static size_t count_op(const gl_graph *g, const char *op)
{
    size_t k = 0;
    gl_node *n;
    gl_foreach_node(g, i, n)
        k += gl_node_is(n, op);
    return k;
}

/* Skip when an op the case relies on cannot be evaluated yet (families still landing). */
static void need_ops(const char *const *ops, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const gl_op_def *d = gl_op_lookup("", ops[i], 13);
        if (!d || !d->kernel || !d->infer)
            cr_skip_test("op %s has no kernel or shape function yet", ops[i]);
    }
}
#define NEED_OPS(...)                                                                      \
    do {                                                                                   \
        static const char *const ops_[] = {__VA_ARGS__};                                   \
        need_ops(ops_, sizeof(ops_) / sizeof(ops_[0]));                                    \
    } while (0)

static const float *f32(const gl_value *v) { return gl_tensor_data(v->init); }
static const int64_t *i64(const gl_value *v) { return gl_tensor_data(v->init); }

/* ---- gl_value_make_constant ------------------------------------------------------------- */

Test(make_constant, detaches_the_value_from_its_producer)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_node *r = tu_node(g, "Relu", "r", 1, x);
    gl_value *v = r->outputs[0];
    gl_node *neg = tu_node(g, "Neg", "neg", 1, v);
    tu_output(g, neg->outputs[0]);
    tu_output(g, v);
    size_t inits = g->n_inits;
    gl_tensor *t = tu_tensor_f32(1, (int64_t[]){2}, (float[]){1.5f, 2.5f});
    cr_assert_eq(gl_value_make_constant(g, v, t), GL_OK, "%s", gl_error_message());
    cr_expect_null(r->outputs[0], "the producer's slot is omitted");
    cr_expect_null(v->producer);
    cr_expect_eq(v->init, t);
    cr_expect_eq(g->n_inits, inits + 1);
    cr_expect_eq(g->inits[g->n_inits - 1], v);
    cr_expect_str_eq(v->name, "r_out0", "the name stays");
    cr_expect(gl_value_is_constant(v));
    cr_expect_eq(v->type.dtype, GL_DT_FLOAT);
    cr_expect_eq(v->type.shape.rank, 1);
    cr_expect_eq(v->type.shape.dims[0].value, 2);
    cr_expect_eq(v->n_uses, 1u, "uses stay");
    cr_expect_eq(neg->inputs[0], v);
    cr_expect_eq(v->n_output_refs, 1, "graph-output status stays");
    cr_assert_eq(gl_remove_node(g, r), GL_OK, "%s", gl_error_message());
    cr_expect_eq(gl_graph_verify(g, false), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
    EXPECT_NO_LEAKS();
}

Test(make_constant, refusals_change_nothing)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_value *c = tu_const_f32(g, "c", 1, (int64_t[]){2}, (float[]){1, 2});
    gl_node *r = tu_node(g, "Relu", "r", 1, x);
    tu_output(g, r->outputs[0]);
    gl_model *other = tu_model(13);
    gl_value *foreign = tu_input(other->graph, "y", GL_DT_FLOAT, 1, (int64_t[]){2});
    static const struct { const char *what; int which; } cases[] = {
        {"a graph input", 0}, {"an initializer", 1}, {"another graph's value", 2},
        {"no tensor", 3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gl_value *v = (gl_value *[]){x, c, foreign, r->outputs[0]}[cases[i].which];
        gl_tensor *t = cases[i].which == 3 ? NULL : tu_tensor_f32(1, (int64_t[]){2}, (float[]){0, 0});
        size_t inits = g->n_inits;
        cr_expect_eq(gl_value_make_constant(g, v, t), GL_ERR_INPUT, "%s", cases[i].what);
        cr_expect(strstr(gl_error_message(), v->name), "%s: %s", cases[i].what,
                  gl_error_message());
        cr_expect_eq(g->n_inits, inits, "%s", cases[i].what);
        gl_tensor_free(t);
    }
    cr_expect_eq(r->outputs[0]->producer, r);
    cr_expect_eq(gl_graph_verify(g, false), GL_OK, "%s", gl_error_message());
    gl_model_free(other);
    gl_model_free(m);
}

/* ---- what folds ------------------------------------------------------------------------ */

Test(fold, constant_node_becomes_an_initializer)
{
    NEED_OPS("Constant", "Add");
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){3});
    gl_node *k = gl_add_node(g, "Constant", "", "k", NULL, 0, 1);
    gl_attr a = {.name = strdup("value"), .type = GL_ATTR_TENSOR,
                 .t = tu_tensor_f32(1, (int64_t[]){3}, (float[]){1, 2, 3})};
    gl_node_take_attr(k, &a);
    gl_value *kv = k->outputs[0];
    gl_node *add = tu_node(g, "Add", "add", 2, x, kv);
    tu_output(g, add->outputs[0]);
    run r;
    run_fold(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_expect_eq(count_op(g, "Constant"), 0u);
    cr_expect_eq(add->inputs[1], kv, "Add reads the same value, now an initializer");
    cr_assert(kv->init);
    cr_expect(gl_value_is_constant(kv));
    cr_expect_str_eq(kv->name, "k_out0");
    cr_expect(f32(kv)[0] == 1 && f32(kv)[1] == 2 && f32(kv)[2] == 3);
    const gl_decision *d = find_rule(&r, "fold");
    cr_assert(d);
    cr_expect_eq(d->verdict, GL_APPLIED);
    cr_expect_str_eq(d->nodes[0], "k");
    cr_expect_eq(gl_decision_number_value(d, "bytes"), 12.0);
    cr_expect_eq(gl_decision_number_value(d, "outputs"), 1.0);
    cr_expect_eq(count_op(g, "Add"), 1u, "Add reads a graph input: it stays");
    run_free(&r);
    gl_model_free(m);
}

Test(fold, chain_of_constants_and_graph_output_name)
{
    NEED_OPS("Add", "Mul", "Neg");
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *a = tu_const_f32(g, "a", 1, (int64_t[]){2}, (float[]){1, 2});
    gl_value *b = tu_const_f32(g, "b", 1, (int64_t[]){2}, (float[]){10, 20});
    gl_node *add = tu_node(g, "Add", "add", 2, a, b);
    gl_node *mul = tu_node(g, "Mul", "mul", 2, add->outputs[0], b);
    gl_node *neg = tu_node(g, "Neg", "neg", 1, mul->outputs[0]);
    gl_value *y = neg->outputs[0];
    cr_assert_eq(gl_rename_value(g, y, "y"), GL_OK);
    tu_output(g, y);
    run r;
    run_fold(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_expect_eq(g->live_nodes, 0u);
    cr_expect_eq(count_rule(&r, "fold", GL_APPLIED), 3u);
    cr_assert_eq(g->outputs[0], y);
    cr_expect_str_eq(y->name, "y");
    cr_assert(y->init);
    cr_expect(f32(y)[0] == -110 && f32(y)[1] == -440, "(a+b)*b negated: %g %g", f32(y)[0],
              f32(y)[1]);
    run_free(&r);
    gl_model_free(m);
}

/* x[2,3,4] -> Shape -> Gather(0) -> Unsqueeze -> Concat(.., [-1]) -> Reshape(x, ..) ->
 * Shape -> Gather(1) -> ... a second Reshape whose shape depends on the first's output. */
Test(fold, shape_chain_fixed_point)
{
    NEED_OPS("Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "Relu");
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 3, (int64_t[]){2, 3, 4});
    gl_node *shape = tu_node(g, "Shape", "shape", 1, x);
    gl_value *zero = tu_const_i64(g, "zero", 0, NULL, (int64_t[]){0});
    gl_node *gather = tu_node(g, "Gather", "gather", 2, shape->outputs[0], zero);
    gl_value *axes = tu_const_i64(g, "axes", 1, (int64_t[]){1}, (int64_t[]){0});
    gl_node *unsq = tu_node(g, "Unsqueeze", "unsqueeze", 2, gather->outputs[0], axes);
    gl_value *minus1 = tu_const_i64(g, "minus1", 1, (int64_t[]){1}, (int64_t[]){-1});
    gl_node *concat = tu_node(g, "Concat", "concat", 2, unsq->outputs[0], minus1);
    gl_node_set_attr_int(concat, "axis", 0);
    gl_node *reshape = tu_node(g, "Reshape", "reshape", 2, x, concat->outputs[0]);
    /* Second stage: the last dim of reshape's output (12), only known once the first
     * stage is resolved, feeds another Reshape. */
    gl_node *shape2 = tu_node(g, "Shape", "shape2", 1, reshape->outputs[0]);
    gl_value *one = tu_const_i64(g, "one", 1, (int64_t[]){1}, (int64_t[]){1});
    gl_node *gather2 = tu_node(g, "Gather", "gather2", 2, shape2->outputs[0], one);
    gl_node *concat2 = tu_node(g, "Concat", "concat2", 2, minus1, gather2->outputs[0]);
    gl_node_set_attr_int(concat2, "axis", 0);
    gl_node *reshape2 = tu_node(g, "Reshape", "reshape2", 2, reshape->outputs[0],
                                concat2->outputs[0]);
    gl_node *relu = tu_node(g, "Relu", "relu", 1, reshape2->outputs[0]);
    tu_output(g, relu->outputs[0]);
    run r;
    run_fold(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_expect_eq(count_op(g, "Shape"), 0u);
    cr_expect_eq(count_op(g, "Gather"), 0u);
    cr_expect_eq(count_op(g, "Unsqueeze"), 0u);
    cr_expect_eq(count_op(g, "Concat"), 0u);
    cr_expect_eq(count_op(g, "Reshape"), 2u, "Reshapes read x: they stay");
    gl_value *s1 = reshape->inputs[1], *s2 = reshape2->inputs[1];
    cr_assert(s1->init && s2->init, "both shapes are initializers now");
    cr_expect(s1->init->count == 2 && i64(s1)[0] == 2 && i64(s1)[1] == -1);
    cr_expect(s2->init->count == 2 && i64(s2)[0] == -1 && i64(s2)[1] == 12);
    const gl_type *t = &reshape->outputs[0]->type;
    cr_expect(t->shape.rank == 2 && t->shape.dims[0].value == 2 && t->shape.dims[1].value == 12);
    t = &relu->outputs[0]->type;
    cr_expect(t->shape.rank == 2 && t->shape.dims[0].value == 2 && t->shape.dims[1].value == 12);
    cr_expect_eq(count_rule(&r, "fold", GL_APPLIED), 7u);
    run_free(&r);
    gl_model_free(m);
    EXPECT_NO_LEAKS();
}

Test(fold, size_of_a_static_shape)
{
    NEED_OPS("Size", "Add");
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 2, (int64_t[]){5, 7});
    gl_node *size = tu_node(g, "Size", "size", 1, x);
    tu_output(g, size->outputs[0]);
    gl_value *v = size->outputs[0];
    run r;
    run_fold(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_assert(v->init);
    cr_expect_eq(v->init->rank, 0);
    cr_expect_eq(i64(v)[0], 35);
    run_free(&r);
    gl_model_free(m);
}

/* x[5,7] -> Relu -> Size: the Size folds only once inference typed the Relu's output. The
 * first sweep skips inference when the step begins with the fingerprint the last whole
 * inference left (m->types_fingerprint); any other graph is inferred first. The first
 * row lies about the graph being typed, to show the skip happens at all. */
Test(fold, inference_is_skipped_only_for_the_graph_it_last_typed)
{
    NEED_OPS("Relu", "Size");
    enum { TYPED_AS_IS, TYPED_BEFORE_AN_EDIT, NOT_FROM_THE_PIPELINE, NEVER_TYPED };
    static const struct {
        int how;
        bool folds;
        const char *what;
    } rows[] = {
        {TYPED_AS_IS, false, "the graph as the last inference left it: not inferred again"},
        {TYPED_BEFORE_AN_EDIT, true, "changed since the last inference: inferred"},
        {NOT_FROM_THE_PIPELINE, true, "no fingerprint for the step: inferred"},
        {NEVER_TYPED, true, "no inference recorded: inferred"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 2, (int64_t[]){5, 7});
        if (rows[i].how == TYPED_BEFORE_AN_EDIT)
            m->types_fingerprint = gl_graph_fingerprint(g);
        gl_node *relu = tu_node(g, "Relu", "relu", 1, x);
        gl_node *size = tu_node(g, "Size", "size", 1, relu->outputs[0]);
        tu_output(g, size->outputs[0]);
        uint64_t now = gl_graph_fingerprint(g);
        if (rows[i].how == TYPED_AS_IS)
            m->types_fingerprint = now;
        run r;
        memset(&r, 0, sizeof(r));
        r.ctx = (gl_pass_ctx){.model = m, .pass = gl_pass_find("constant-folding"), .step = 1,
                              .budget = GL_BUDGET_UNLIMITED, .log = &r.log,
                              .fingerprint = rows[i].how == NOT_FROM_THE_PIPELINE ? 0 : now};
        cr_assert_eq(gl_pass_run(g, &r.ctx), GL_OK, "%s", gl_error_message());
        gl_value *v = gl_find_value(g, "size_out0");
        cr_assert_not_null(v);
        cr_expect_eq(v->init != NULL, rows[i].folds, "%s", rows[i].what);
        run_free(&r);
        gl_model_free(m);
    }
}

/* The pipeline records the fingerprint a whole shape-inference step leaves, and only
 * that: not when a budget stopped the inference, not for other passes. */
Test(fold, pipeline_records_what_shape_inference_typed)
{
    NEED_OPS("Relu", "Size");
    static const struct {
        const char *passes;
        size_t typed_step; /* 0: none recorded */
    } rows[] = {
        {"toposort,shape-inference,constant-folding", 2},
        {"toposort,shape-inference:1,constant-folding", 0},
        {"toposort,constant-folding", 0},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 2, (int64_t[]){5, 7});
        gl_value *y = tu_node(g, "Relu", "relu", 1, x)->outputs[0];
        gl_node *size = tu_node(g, "Size", "size", 1, tu_node(g, "Relu", "relu2", 1, y)->outputs[0]);
        tu_output(g, size->outputs[0]);
        gl_pass_step *plan = NULL;
        size_t n_plan = 0;
        cr_assert_eq(gl_pass_list_parse(rows[i].passes, &plan, &n_plan), GL_OK);
        gl_pipeline *p = NULL;
        cr_assert_eq(gl_pipeline_run(m, plan, n_plan, NULL, GL_PIPELINE_KEEP_SNAPSHOTS, &p),
                     GL_OK, "%s", gl_error_message());
        const gl_model *typed = rows[i].typed_step ? p->steps[rows[i].typed_step].model : NULL;
        uint64_t want = typed ? p->steps[rows[i].typed_step].fingerprint : 0;
        if (typed)
            cr_expect_eq(typed->types_fingerprint, want, "%s", rows[i].passes);
        cr_expect_eq(gl_pipeline_result(p)->types_fingerprint, want, "%s", rows[i].passes);
        /* The Size folds wherever it was typed, skipped inference or not. */
        cr_expect_not_null(gl_find_value(gl_pipeline_result(p)->graph, "size_out0")->init,
                           "%s", rows[i].passes);
        gl_pipeline_free(p);
        free(plan);
    }
}

/* If(cond) then Neg(c) else Identity(c), c an outer constant. */
static gl_node *build_if(gl_model *m, gl_value *cond)
{
    gl_graph *g = m->graph;
    tu_const_f32(g, "c", 1, (int64_t[]){2}, (float[]){1, -2});
    gl_node *n = tu_node(g, "If", "choose", 1, cond);
    static const char *const branch[] = {"then_branch", "else_branch"};
    for (int b = 0; b < 2; b++) {
        gl_graph *body = gl_graph_new(m, g, branch[b]);
        body->parent_node = n;
        gl_value *cap = gl_resolve_value(body, "c");
        gl_value *res;
        if (b == 0) {
            /* Add(c, c) inside the branch reads only (captured) constants. */
            gl_value *sum = tu_node(body, "Add", "then_add", 2, cap, cap)->outputs[0];
            res = tu_node(body, "Neg", "then_neg", 1, sum)->outputs[0];
        } else {
            res = tu_node(body, "Identity", "else_id", 1, cap)->outputs[0];
        }
        tu_output(body, res);
        gl_attr a = {.name = strdup(branch[b]), .type = GL_ATTR_GRAPH, .g = body};
        gl_node_take_attr(n, &a);
    }
    tu_output(g, n->outputs[0]);
    return n;
}

Test(fold, if_with_constant_condition_and_captures)
{
    NEED_OPS("If", "Add", "Neg", "Identity");
    gl_model *m = tu_model(13);
    gl_tensor *t = tu_tensor_of(GL_DT_BOOL, 0, NULL, (uint8_t[]){1});
    gl_node *n = build_if(m, gl_add_initializer(m->graph, "cond", t));
    gl_value *y = n->outputs[0];
    run r;
    run_fold(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_expect_eq(count_op(m->graph, "If"), 0u);
    cr_assert(y->init, "the If's output is a constant");
    cr_expect(f32(y)[0] == -2 && f32(y)[1] == 4, "then branch: -(c+c): %g %g", f32(y)[0],
              f32(y)[1]);
    run_free(&r);
    gl_model_free(m);
    EXPECT_NO_LEAKS();
}

/* The condition is a graph input: the If stays, but inside the then branch Add(c, c)
 * reads only captured constants and folds there. */
Test(fold, inside_a_body)
{
    NEED_OPS("If", "Add", "Neg", "Identity");
    gl_model *m = tu_model(13);
    gl_node *n = build_if(m, tu_input(m->graph, "cond", GL_DT_BOOL, 0, NULL));
    run r;
    run_fold(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_expect_eq(count_op(m->graph, "If"), 1u);
    gl_graph *then_g = gl_node_attr(n, "then_branch")->g;
    cr_expect_eq(count_op(then_g, "Add"), 0u);
    cr_expect_eq(count_op(then_g, "Neg"), 0u, "Neg(constant) folds next");
    cr_expect_eq(then_g->n_outputs, 1u);
    gl_value *out = then_g->outputs[0];
    cr_assert(out->init, "the branch output is a body initializer");
    cr_expect(f32(out)[0] == -2 && f32(out)[1] == 4);
    const gl_decision *d = find_rule(&r, "fold");
    cr_assert(d);
    cr_expect_str_eq(gl_decision_number_text(d, "inside"), "choose");
    run_free(&r);
    gl_model_free(m);
    EXPECT_NO_LEAKS();
}

/* Opset 15's Shape(start=1) reads only the known dims of [N,3,4]; Size needs all. */
Test(fold, shape_range_of_a_partly_symbolic_shape)
{
    NEED_OPS("Shape", "Size");
    gl_model *m = tu_model(15);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 3, (int64_t[]){-1, 3, 4});
    gl_dim_set_sym(&x->type.shape.dims[0], "N");
    gl_node *tail = tu_node(g, "Shape", "tail", 1, x);
    gl_node_set_attr_int(tail, "start", 1);
    gl_node *all = tu_node(g, "Shape", "all", 1, x);
    gl_node *size = tu_node(g, "Size", "size", 1, x);
    gl_value *t = tail->outputs[0];
    tu_output(g, t);
    tu_output(g, all->outputs[0]);
    tu_output(g, size->outputs[0]);
    run r;
    run_fold(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_assert(t->init, "Shape(start=1) folds");
    cr_expect(t->init->count == 2 && i64(t)[0] == 3 && i64(t)[1] == 4);
    cr_expect_eq(count_op(g, "Shape"), 1u, "Shape of all dims needs N");
    cr_expect_eq(count_op(g, "Size"), 1u);
    cr_expect_eq(count_rule(&r, "fold", GL_APPLIED), 1u);
    run_free(&r);
    gl_model_free(m);
}

/* ---- what does not fold ------------------------------------------------------------------ */

Test(refuse, random_op)
{
    NEED_OPS("RandomNormal", "Add");
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_node *rn = gl_add_node(g, "RandomNormal", "", "rn", NULL, 0, 1);
    gl_node_set_attr_ints(rn, "shape", (int64_t[]){2}, 1);
    gl_value *c = tu_const_f32(g, "c", 1, (int64_t[]){2}, (float[]){1, 2});
    gl_node *add = tu_node(g, "Add", "add", 2, rn->outputs[0], c);
    tu_output(g, add->outputs[0]);
    run r;
    run_fold(&r, m, GL_BUDGET_UNLIMITED, NULL);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_expect_eq(count_op(g, "RandomNormal"), 1u);
    cr_expect_eq(count_op(g, "Add"), 1u);
    cr_expect_eq(count_rule(&r, "fold", GL_APPLIED), 0u);
    const gl_decision *d = find_rule(&r, "not-foldable");
    cr_assert(d);
    cr_expect_eq(d->verdict, GL_REFUSED);
    cr_expect_str_eq(d->nodes[0], "rn");
    cr_expect(strstr(d->reason, "random"), "%s", d->reason);
    cr_expect_eq(count_rule(&r, "not-foldable", GL_REFUSED), 1u, "recorded once");
    run_free(&r);
    gl_model_free(m);
    EXPECT_NO_LEAKS();
}

Test(refuse, size_limit)
{
    NEED_OPS("Add");
    static const struct { const char *set; bool folds; } cases[] = {
        {"constant-folding.max-bytes=16", false},
        {"constant-folding.max-bytes=31", false},
        {"constant-folding.max-bytes=32", true},
        {NULL, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        gl_value *a = tu_const_f32(g, "a", 1, (int64_t[]){8}, ones);
        gl_value *b = tu_const_f32(g, "b", 1, (int64_t[]){8}, ones);
        gl_node *add = tu_node(g, "Add", "add", 2, a, b);
        tu_output(g, add->outputs[0]);
        run r;
        run_fold(&r, m, GL_BUDGET_UNLIMITED, cases[i].set);
        cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
        const char *what = cases[i].set ? cases[i].set : "default";
        cr_expect_eq(count_op(g, "Add"), cases[i].folds ? 0u : 1u, "%s", what);
        const gl_decision *d = find_rule(&r, "too-large");
        cr_expect_eq(d != NULL, !cases[i].folds, "%s", what);
        if (d) {
            cr_expect_eq(gl_decision_number_value(d, "bytes"), 32.0, "%s", what);
            cr_expect_eq(d->verdict, GL_REFUSED);
        }
        run_free(&r);
        gl_model_free(m);
    }
    EXPECT_NO_LEAKS();
}

/* An input with a default may be fed: not a constant, unless the model freezes inputs. */
Test(refuse, graph_input_with_default_unless_frozen)
{
    NEED_OPS("Relu");
    for (int frozen = 0; frozen < 2; frozen++) {
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        gl_value *x = tu_const_f32(g, "x", 1, (int64_t[]){2}, (float[]){-1, 3});
        gl_graph_add_input(g, x);
        m->freeze_inputs = frozen;
        gl_node *relu = tu_node(g, "Relu", "relu", 1, x);
        gl_value *y = relu->outputs[0];
        tu_output(g, y);
        run r;
        run_fold(&r, m, GL_BUDGET_UNLIMITED, NULL);
        cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
        cr_expect_eq(count_op(g, "Relu"), frozen ? 0u : 1u, "frozen=%d", frozen);
        cr_expect_eq(count_rule(&r, "input-with-default", GL_REFUSED), frozen ? 0u : 1u);
        if (frozen) {
            cr_assert(y->init);
            cr_expect(f32(y)[0] == 0 && f32(y)[1] == 3);
        } else {
            const gl_decision *d = find_rule(&r, "input-with-default");
            cr_assert(d);
            cr_expect(strstr(d->reason, "'x'"), "%s", d->reason);
        }
        run_free(&r);
        gl_model_free(m);
    }
    EXPECT_NO_LEAKS();
}

/* ---- the budget ------------------------------------------------------------------------- */

/* A Constant and four Relu after it: five folds in all. */
static gl_model *budget_graph(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_node *k = gl_add_node(g, "Constant", "", "k", NULL, 0, 1);
    gl_attr a = {.name = strdup("value"), .type = GL_ATTR_TENSOR,
                 .t = tu_tensor_f32(1, (int64_t[]){2}, (float[]){-1, 1})};
    gl_node_take_attr(k, &a);
    gl_value *v = k->outputs[0];
    for (int i = 0; i < 4; i++)
        v = tu_node(g, "Relu", NULL, 1, v)->outputs[0];
    tu_output(g, v);
    return m;
}

Test(budget, k_rewrites_exactly)
{
    NEED_OPS("Constant", "Relu");
    for (int64_t k = 0; k <= 6; k++) {
        gl_model *m = budget_graph();
        run r;
        run_fold(&r, m, k, NULL);
        cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
        int64_t want = k < 5 ? k : 5;
        cr_expect_eq(r.ctx.applied, want, "K=%lld", (long long)k);
        cr_expect_eq(count_rule(&r, "fold", GL_APPLIED), (size_t)want, "K=%lld", (long long)k);
        cr_expect_eq(m->graph->live_nodes, (size_t)(5 - want), "K=%lld", (long long)k);
        run_free(&r);
        gl_model_free(m);
    }
}

/* Folds interleaved with refusals (random, too large, input with a default). */
static gl_model *prefix_graph(void)
{
    gl_model *m = budget_graph();
    gl_graph *g = m->graph;
    gl_node *rn = gl_add_node(g, "RandomNormal", "", "rn", NULL, 0, 1);
    gl_node_set_attr_ints(rn, "shape", (int64_t[]){2}, 1);
    tu_output(g, rn->outputs[0]);
    float big[64] = {0};
    gl_value *b = tu_const_f32(g, "big", 1, (int64_t[]){64}, big);
    tu_output(g, tu_node(g, "Relu", "too_big", 1, b)->outputs[0]);
    gl_value *d = tu_const_f32(g, "d", 1, (int64_t[]){2}, (float[]){1, 2});
    gl_graph_add_input(g, d);
    tu_output(g, tu_node(g, "Relu", "reads_default", 1, d)->outputs[0]);
    gl_value *c = tu_const_f32(g, "c", 1, (int64_t[]){2}, (float[]){1, 2});
    tu_output(g, tu_node(g, "Neg", "last", 1, c)->outputs[0]);
    return m;
}

/* The records of a run with budget K are the first records of the full run. */
Test(budget, records_are_a_prefix)
{
    NEED_OPS("Constant", "Relu", "RandomNormal", "Neg");
    gl_model *m = prefix_graph();
    run full;
    run_fold(&full, m, GL_BUDGET_UNLIMITED, "constant-folding.max-bytes=64");
    cr_assert_eq(full.st, GL_OK, "%s", gl_error_message());
    int64_t total = full.ctx.applied;
    cr_assert_eq(total, 6, "Constant, four Relu, Neg");
    cr_assert_eq(count_rule(&full, "not-foldable", GL_REFUSED), 1u);
    cr_assert_eq(count_rule(&full, "too-large", GL_REFUSED), 1u);
    cr_assert_eq(count_rule(&full, "input-with-default", GL_REFUSED), 1u);
    for (int64_t k = 0; k <= total + 1; k++) {
        gl_model *mk = prefix_graph();
        run r;
        run_fold(&r, mk, k, "constant-folding.max-bytes=64");
        cr_assert_eq(r.st, GL_OK);
        cr_expect_eq(r.ctx.applied, k < total ? k : total, "K=%lld", (long long)k);
        cr_assert_leq(r.log.n, full.log.n, "K=%lld", (long long)k);
        for (size_t i = 0; i < r.log.n; i++) {
            const gl_decision *a = &r.log.items[i], *b = &full.log.items[i];
            cr_expect_eq(a->id, b->id, "K=%lld record %zu", (long long)k, i);
            cr_expect_str_eq(a->rule, b->rule, "K=%lld record %zu", (long long)k, i);
            cr_expect_str_eq(a->reason, b->reason, "K=%lld record %zu", (long long)k, i);
            cr_expect_str_eq(a->nodes[0], b->nodes[0], "K=%lld record %zu", (long long)k, i);
        }
        run_free(&r);
        gl_model_free(mk);
    }
    run_free(&full);
    gl_model_free(m);
}

/* ---- the model corpora ---------------------------------------------------------------- */

/* toposort, constant-folding, dce on every model of the corpora (the in-tree ones, the
 * shared ones when present): no Shape, Gather or Constant node stays (the chains of these
 * exports all start from static shapes). */
Test(models, shape_chains_fold_away, .timeout = 120)
{
    NEED_OPS("Shape", "Gather", "Constant", "Unsqueeze", "Concat", "Reshape", "Slice", "Div",
             "Mul", "Add");
    glob_t gb = {0};
    cr_assert_gt(tu_glob_corpora("*/model.onnx", &gb), 0, "no models in the corpora");
    for (size_t i = 0; i < gb.gl_pathc; i++) {
        const char *path = gb.gl_pathv[i];
        gl_model *m;
        cr_assert_eq(gl_model_load(path, NULL, &m), GL_OK, "%s", gl_error_message());
        cr_assert_eq(gl_toposort(m->graph, NULL), GL_OK);
        run r;
        run_fold(&r, m, GL_BUDGET_UNLIMITED, NULL);
        cr_assert_eq(r.st, GL_OK, "%s: %s", path, gl_error_message());
        gl_decision_log dlog = {0};
        gl_pass_ctx dctx = {.model = m, .pass = gl_pass_find("dce"), .step = 2,
                            .budget = GL_BUDGET_UNLIMITED, .log = &dlog};
        cr_assert_eq(gl_pass_dce(m->graph, &dctx), GL_OK, "%s", gl_error_message());
        static const char *const gone[] = {"Shape", "Gather", "Constant"};
        for (size_t k = 0; k < 3; k++)
            cr_expect_eq(count_op(m->graph, gone[k]), 0u, "%s: %zu %s left", path,
                         count_op(m->graph, gone[k]), gone[k]);
        cr_expect_eq(count_rule(&r, "not-foldable", GL_REFUSED) +
                     count_rule(&r, "eval-failed", GL_REFUSED), 0u, "%s", path);
        fprintf(stderr, "%s: %zu folds, %zu nodes left\n", path,
                count_rule(&r, "fold", GL_APPLIED), m->graph->live_nodes);
        gl_decision_log_free(&dlog);
        run_free(&r);
        gl_model_free(m);
    }
    globfree(&gb);
    EXPECT_NO_LEAKS();
}

/* ---- quantized weights stay quantized (issue 21) ------------------------------------------ */

/* Each row: a graph in graphnote.h's notation run through toposort, shape-inference and
 * constant-folding; the op counts after, how many fold-through-dequantize rewrites, the
 * `axis` of the DequantizeLinear that produces `t` afterwards (-1: none set, -2: not
 * checked) with its weight still an integer constant, the text of a refusal expected,
 * and the same outputs as before (bit for bit: the same products in the same order). */
typedef struct dqcase {
    const char *name;
    const char *graph;
    const char *ops;
    int through;        /* fold-through-dequantize applied */
    int axis;           /* of t's producer, a DequantizeLinear */
    const char *reason; /* part of a refusal expected, or NULL */
} dqcase;

#define W34 "in x f32s[2,4]; const w i8[3,4] = rand; const s f32[3] = 0.5,0.25,0.125; " \
    "const z i8[3] = 0,0,0; "
#define KEPT "DequantizeLinear=1 Transpose=0"

static const dqcase dq_cases[] = {
    {"dq_transpose_per_axis", W34 "d = DequantizeLinear(w, s, z) axis=0; "
     "t = Transpose(d) perm=[1,0]; y = MatMul(x, t); out y", KEPT, 1, 1, NULL},
    {"dq_transpose_default_perm", W34 "d = DequantizeLinear(w, s, z) axis=-2; "
     "t = Transpose(d); y = MatMul(x, t); out y", KEPT, 1, 1, NULL},
    {"dq_transpose_per_tensor", "in x f32s[2,4]; const w u8[3,4] = rand; "
     "const s f32[] = 0.02; const z u8[] = 128; d = DequantizeLinear(w, s, z); "
     "t = Transpose(d) perm=[1,0]; y = MatMul(x, t); out y", KEPT, 1, -1, NULL},
    {"dq_transpose_rank3", "in x f32s[2,5]; const w i8[3,2,4] = rand; "
     "const s f32[3] = 0.5,0.25,0.125; d = DequantizeLinear(w, s) axis=0; "
     "t = Transpose(d) perm=[2,0,1]; y = MatMul(t, x); out y", KEPT, 1, 1, NULL},
    {"dq_transpose_chain", W34 "d = DequantizeLinear(w, s, z) axis=0; "
     "u = Transpose(d) perm=[1,0]; t = Transpose(u) perm=[1,0]; y = MatMul(x, u); "
     "y2 = Mul(t, t); out y, y2", "DequantizeLinear=2 Transpose=0", 2, 0, NULL},
    {"dq_read_by_others_too", W34 "d = DequantizeLinear(w, s, z) axis=0; "
     "t = Transpose(d) perm=[1,0]; y = MatMul(x, t); r = Relu(d); out y, r",
     "DequantizeLinear=2 Transpose=0", 1, 1, NULL},
    {"dq_reshape_as_transpose", "in x f32s[2,4]; const w i8[4,1] = rand; "
     "const s f32[4] = 0.5,0.25,0.125,1.0; const shp i64[2] = 1,4; "
     "d = DequantizeLinear(w, s) axis=0; t = Reshape(d, shp); y = Mul(x, t); out y",
     "DequantizeLinear=1 Reshape=0", 1, 1, NULL},
    {"dq_reshape_per_tensor", "in x f32s[2,6]; const w i8[3,2,2] = rand; "
     "const s f32[] = 0.05; const shp i64[2] = 6,2; d = DequantizeLinear(w, s); "
     "t = Reshape(d, shp); y = MatMul(x, t); out y", "DequantizeLinear=1 Reshape=0", 1, -1,
     NULL},
    {"transpose_before_dq", "in x f32s[2,4]; const w i8[3,4] = rand; "
     "const s f32[3] = 0.5,0.25,0.125; wt = Transpose(w) perm=[1,0]; "
     "t = DequantizeLinear(wt, s) axis=1; y = MatMul(x, t); out y", KEPT, 0, 1, NULL},
    /* refused: the DequantizeLinear stays, and so does what cannot fold through it */
    {"dq_alone_kept", "in x f32s[2,3]; const w i8[3,4] = rand; const s f32[] = 0.1; "
     "t = DequantizeLinear(w, s); y = MatMul(x, t); out y", "DequantizeLinear=1", 0, -1,
     "folding it would drop the int8 path"},
    {"dq_reshape_merges_the_axis", "in x f32s[6]; const w i8[2,3] = rand; "
     "const s f32[3] = 0.5,0.25,0.125; const shp i64[1] = 6; "
     "d = DequantizeLinear(w, s) axis=1; t = Reshape(d, shp); y = Mul(x, t); out y",
     "DequantizeLinear=1 Reshape=1", 0, -2, "the per-axis scale cannot follow"},
};

static size_t count_decisions(const gl_pipeline *p, const gl_snapshot *s, const char *rule,
                              gl_verdict v, const char *text)
{
    size_t n = 0;
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++) {
        const gl_decision *d = &p->log.items[i];
        n += !strcmp(d->rule, rule) && d->verdict == v && (!text || strstr(d->reason, text));
    }
    return n;
}

static void check_weight(const dqcase *c, const gl_graph *g)
{
    const gl_value *t = gl_find_value(g, "t");
    const gl_node *dq = t ? t->producer : NULL;
    if (c->axis == -2)
        return;
    cr_assert(gl_node_is(dq, "DequantizeLinear"), "%s: t is not made by a DequantizeLinear",
              c->name);
    const gl_value *w = dq->inputs[0];
    cr_expect(gl_value_is_constant(w) && gl_dtype_is_int(w->init->dtype),
              "%s: the weight is no integer constant", c->name);
    const gl_attr *a = gl_node_attr(dq, "axis");
    if (c->axis < 0)
        cr_expect_null(a, "%s: a per-tensor DequantizeLinear with an axis", c->name);
    else
        cr_expect(a && a->i == c->axis, "%s: axis %lld, expected %d", c->name,
                  a ? (long long)a->i : -1LL, c->axis);
}

Test(quantized, weights_stay_quantized)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(dq_cases); i++) {
        const dqcase *c = &dq_cases[i];
        gn_graph b;
        gl_pipeline *p = gn_run_passes(c->name, 13, c->graph, NULL,
                                       "toposort,shape-inference,constant-folding", &b);
        if (!p)
            continue;
        size_t k = p->n_steps - 1;
        const gl_snapshot *s = &p->steps[k];
        const gl_model *before = p->steps[k - 1].model, *after = s->model;
        cr_expect_eq(gl_graph_verify(after->graph, false), GL_OK, "%s: %s", c->name,
                     gl_error_message());
        gn_expect_op_counts(c->name, c->ops, after->graph);
        size_t through = count_decisions(p, s, "fold-through-dequantize", GL_APPLIED, NULL);
        cr_expect_eq(through, (size_t)c->through, "%s: %zu fold-through-dequantize, "
                     "expected %d", c->name, through, c->through);
        cr_expect_gt(count_decisions(p, s, "keep-dequantize", GL_REFUSED, NULL), 0,
                     "%s: no keep-dequantize decision", c->name);
        if (c->reason)
            cr_expect_gt(count_decisions(p, s, "keep-dequantize", GL_REFUSED, c->reason) +
                         count_decisions(p, s, "fold-through-dequantize", GL_REFUSED,
                                         c->reason), 0, "%s: no refusal saying '%s'",
                         c->name, c->reason);
        check_weight(c, after->graph);
        gn_expect_same_outputs(c->name, &b, before, after, 0, 0, false);
        gl_pipeline_free(p);
    }
}

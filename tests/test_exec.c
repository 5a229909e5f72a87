/* test_exec.c — the executor (plans, input checks, lifetimes, subgraphs, functions,
 * gl_eval_node), the comparison rule and test data set folders.
 *
 * Expected numbers are worked out by hand in the comments next to them.
 */
#include "exec/compare.h"
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "passes/passes.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ------------------------------------------------------------------------- */

static const int64_t D23[] = {2, 3};

/* Run m with `inputs` (graph-input order); the one output's floats into got[]. */
static gl_status run1(const gl_model *m, const gl_tensor *const *inputs, size_t n_inputs,
                      gl_tensor **out)
{
    gl_exec *e = NULL;
    gl_status st = gl_exec_create(m, NULL, &e);
    if (st != GL_OK)
        return st;
    st = gl_exec_run(e, inputs, n_inputs, out, 1);
    gl_exec_free(e);
    return st;
}

static void expect_floats(const gl_tensor *t, const float *want, int64_t n, const char *what)
{
    cr_assert_not_null(t, "%s: no tensor", what);
    cr_assert_eq(t->dtype, GL_DT_FLOAT, "%s: dtype %d", what, t->dtype);
    cr_assert_eq(t->count, n, "%s: %lld elements, expected %lld", what, (long long)t->count,
                 (long long)n);
    const float *p = gl_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        cr_expect_float_eq(p[i], want[i], 1e-6, "%s: element %lld is %g, expected %g", what,
                           (long long)i, p[i], want[i]);
}

static bool message_has(const char *needle)
{
    return strstr(gl_error_message(), needle) != NULL;
}

/* A model of the source tree (rel from its top), loaded or the test fails. */
static gl_model *load_src(const char *rel)
{
    gl_model *m = NULL;
    cr_assert_eq(gl_model_load(tu_src(rel), NULL, &m), GL_OK, "%s: %s", rel, gl_error_message());
    return m;
}

static gl_attr graph_attr(const char *name, gl_graph *g)
{
    return (gl_attr){.name = gl_xstrdup(name), .type = GL_ATTR_GRAPH, .g = g};
}

/* y = Relu(x) + c, c = [1 2 3; 4 5 6]. */
static gl_model *relu_add_model(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 2, D23);
    gl_value *c = tu_const_f32(g, "c", 2, D23, (const float[]){1, 2, 3, 4, 5, 6});
    gl_node *r = tu_node(g, "Relu", "r", 1, x);
    gl_node *a = tu_node(g, "Add", "a", 2, r->outputs[0], c);
    tu_output(g, a->outputs[0]);
    return m;
}

/* ---- basic runs ------------------------------------------------------------------------ */

Test(exec, relu_then_add)
{
    gl_model *m = relu_add_model();
    gl_tensor *x = tu_tensor_f32(2, D23, (const float[]){-1, 2, -3, 4, -5, 6});
    gl_tensor *y = NULL;
    cr_assert_eq(run1(m, (const gl_tensor *[]){x}, 1, &y), GL_OK, "%s", gl_error_message());
    /* relu: 0 2 0 4 0 6; + 1..6 */
    expect_floats(y, (const float[]){1, 4, 3, 8, 5, 12}, 6, "y");
    cr_expect_str_eq(y->name, m->graph->outputs[0]->name, "outputs carry the output name");
    /* the input is only read */
    cr_expect_float_eq(((const float *)gl_tensor_data(x))[0], -1.0f, 0);
    gl_tensor_free(x);
    gl_tensor_free(y);
    gl_model_free(m);
}

Test(exec, matmul)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *a = tu_input(g, "a", GL_DT_FLOAT, 2, (const int64_t[]){2, 2});
    gl_value *b = tu_const_f32(g, "b", 2, (const int64_t[]){2, 1}, (const float[]){10, 1});
    gl_node *mm = tu_node(g, "MatMul", "mm", 2, a, b);
    tu_output(g, mm->outputs[0]);
    gl_tensor *ta = tu_tensor_f32(2, (const int64_t[]){2, 2}, (const float[]){1, 2, 3, 4});
    gl_tensor *y = NULL;
    cr_assert_eq(run1(m, (const gl_tensor *[]){ta}, 1, &y), GL_OK, "%s", gl_error_message());
    /* [1 2; 3 4] x [10; 1] = [12; 34] */
    expect_floats(y, (const float[]){12, 34}, 2, "mm");
    cr_expect_eq(y->rank, 2);
    cr_expect_eq(y->dims[0], 2);
    cr_expect_eq(y->dims[1], 1);
    gl_tensor_free(ta);
    gl_tensor_free(y);
    gl_model_free(m);
}

/* Outputs that are a graph input and an initializer come back as shares. */
Test(exec, outputs_that_are_inputs_or_constants)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (const int64_t[]){2});
    gl_value *c = tu_const_f32(g, "c", 1, (const int64_t[]){1}, (const float[]){7});
    tu_output(g, x);
    tu_output(g, c);
    gl_tensor *tx = tu_tensor_f32(1, (const int64_t[]){2}, (const float[]){1, 2});
    gl_tensor *outs[2] = {0};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK);
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *[]){tx}, 1, outs, 2), GL_OK, "%s",
                 gl_error_message());
    expect_floats(outs[0], (const float[]){1, 2}, 2, "x passed through");
    expect_floats(outs[1], (const float[]){7}, 1, "constant output");
    gl_exec_free(e);
    gl_tensor_free(outs[0]);
    gl_tensor_free(outs[1]);
    gl_tensor_free(tx);
    gl_model_free(m);
}

/* A plan runs many times; each run starts from nothing. */
Test(exec, runs_twice)
{
    gl_model *m = relu_add_model();
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK);
    for (int rep = 0; rep < 2; rep++) {
        float v = rep ? 10.0f : -10.0f;
        gl_tensor *x = tu_tensor_f32(2, D23, (const float[]){v, v, v, v, v, v});
        gl_tensor *y = NULL;
        cr_assert_eq(gl_exec_run(e, (const gl_tensor *[]){x}, 1, &y, 1), GL_OK);
        float base = rep ? 10.0f : 0.0f;
        expect_floats(y, (const float[]){base + 1, base + 2, base + 3, base + 4, base + 5,
                                         base + 6},
                      6, rep ? "second run" : "first run");
        gl_tensor_free(x);
        gl_tensor_free(y);
    }
    gl_exec_free(e);
    gl_model_free(m);
}

/* ---- plans ----------------------------------------------------------------------------- */

Test(exec, unknown_op_names_node_op_and_domain)
{
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (const int64_t[]){2});
    gl_node *n = gl_add_node(m->graph, "NoSuchOp", "com.example", "weird", &x, 1, 1);
    tu_output(m->graph, n->outputs[0]);
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_ERR_UNSUPPORTED);
    cr_expect_null(e);
    cr_expect(message_has("'weird'") && message_has("NoSuchOp") && message_has("com.example"),
              "message: %s", gl_error_message());
    gl_model_free(m);
}

Test(exec, unknown_op_inside_a_subgraph_fails_at_create)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *cond = tu_input(g, "cond", GL_DT_BOOL, 0, NULL);
    gl_node *nif = tu_node(g, "If", "if", 1, cond);
    gl_graph *then_g = gl_graph_new(m, g, "then");
    then_g->parent_node = nif;
    gl_node *bad = gl_add_node(then_g, "Mystery", "", "inner", NULL, 0, 1);
    gl_graph_add_output(then_g, bad->outputs[0]);
    gl_attr a = graph_attr("then_branch", then_g);
    gl_node_take_attr(nif, &a);
    gl_graph *else_g = gl_graph_new(m, g, "else");
    else_g->parent_node = nif;
    gl_node *k = gl_add_node(else_g, "Constant", "", "k", NULL, 0, 1);
    gl_node_set_attr_float(k, "value_float", 1);
    gl_graph_add_output(else_g, k->outputs[0]);
    gl_attr b = graph_attr("else_branch", else_g);
    gl_node_take_attr(nif, &b);
    tu_output(g, nif->outputs[0]);
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_ERR_UNSUPPORTED);
    cr_expect(message_has("'inner'") && message_has("Mystery"), "message: %s",
              gl_error_message());
    gl_model_free(m);
}

Test(exec, unknown_backend)
{
    gl_model *m = relu_add_model();
    gl_exec *e = NULL;
    gl_exec_options o = {.backend = "tpu"};
    cr_expect_eq(gl_exec_create(m, &o, &e), GL_ERR_INPUT);
    cr_expect(message_has("tpu"), "message: %s", gl_error_message());
    cr_expect_not_null(gl_backend_find("ref"));
    cr_expect_null(gl_backend_find("tpu"));
    cr_expect_eq(gl_backend_find("ref"), gl_backend_ref());
    if (!gl_backend_dnnl()) {
        o.backend = "dnnl";
        cr_expect_neq(gl_exec_create(m, &o, &e), GL_OK, "dnnl is not built in");
        cr_expect(message_has("dnnl"), "message: %s", gl_error_message());
    }
    gl_model_free(m);
}

/* Nodes stored out of order run in dependency order. */
Test(exec, unsorted_graph_runs_in_dependency_order)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (const int64_t[]){2});
    gl_node *second = tu_node(g, "Neg", "second", 1, x);
    gl_node *first = tu_node(g, "Relu", "first", 1, x);
    cr_assert_eq(gl_set_input(g, second, 0, first->outputs[0]), GL_OK);
    tu_output(g, second->outputs[0]);
    gl_tensor *tx = tu_tensor_f32(1, (const int64_t[]){2}, (const float[]){-3, 5});
    gl_tensor *y = NULL;
    cr_assert_eq(run1(m, (const gl_tensor *[]){tx}, 1, &y), GL_OK, "%s", gl_error_message());
    expect_floats(y, (const float[]){0, -5}, 2, "Neg(Relu(x))"); /* relu: 0 5 */
    gl_tensor_free(tx);
    gl_tensor_free(y);
    gl_model_free(m);
}

Test(exec, cycle_is_refused)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (const int64_t[]){2});
    gl_node *a = tu_node(g, "Relu", "cyc_a", 1, x);
    gl_node *b = tu_node(g, "Neg", "cyc_b", 1, a->outputs[0]);
    cr_assert_eq(gl_set_input(g, a, 0, b->outputs[0]), GL_OK);
    tu_output(g, b->outputs[0]);
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_ERR_INPUT);
    cr_expect(message_has("cycle") && message_has("cyc_"), "message: %s", gl_error_message());
    gl_model_free(m);
}

Test(exec, print_plan_lists_every_node)
{
    gl_model *m = relu_add_model();
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gl_exec_print_plan(e, f);
    fclose(f);
    cr_expect(strstr(buf, "Relu") && strstr(buf, "'r'") && strstr(buf, "Add") &&
                  strstr(buf, "'a'"),
              "plan: %s", buf);
    cr_expect(strstr(buf, "ref") != NULL, "the backend is shown: %s", buf);
    int lines = 0;
    for (const char *p = buf; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, 2, "one line per node: %s", buf);
    free(buf);
    gl_exec_free(e);
    gl_model_free(m);
}

/* A kernel's error comes back with the node named. */
Test(exec, kernel_error_names_the_node)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *a = tu_input(g, "a", GL_DT_FLOAT, -1, NULL);
    gl_value *b = tu_input(g, "b", GL_DT_FLOAT, -1, NULL);
    gl_node *mm = tu_node(g, "MatMul", "mm", 2, a, b);
    tu_output(g, mm->outputs[0]);
    gl_tensor *ta = tu_tensor_f32(2, (const int64_t[]){2, 3}, NULL);
    gl_tensor *tb = tu_tensor_f32(2, (const int64_t[]){2, 3}, NULL); /* 3 != 2 */
    gl_tensor *y = (gl_tensor *)1;
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK);
    cr_expect_neq(gl_exec_run(e, (const gl_tensor *[]){ta, tb}, 2, &y, 1), GL_OK);
    cr_expect_null(y, "outputs are NULL on failure");
    cr_expect(message_has("node 'mm' (MatMul)"), "message: %s", gl_error_message());
    gl_exec_free(e);
    gl_tensor_free(ta);
    gl_tensor_free(tb);
    gl_model_free(m);
}

/* ---- input checks ---------------------------------------------------------------------- */

/* Two inputs a[N,3] and b[N,2] (N symbolic) feeding nothing but the output list. */
static gl_model *symbolic_model(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *a = tu_input(g, "a", GL_DT_FLOAT, 2, (const int64_t[]){-1, 3});
    gl_value *b = tu_input(g, "b", GL_DT_FLOAT, 2, (const int64_t[]){-1, 2});
    gl_dim_set_sym(&a->type.shape.dims[0], "N");
    gl_dim_set_sym(&b->type.shape.dims[0], "N");
    tu_output(g, tu_node(g, "Relu", "ra", 1, a)->outputs[0]);
    tu_output(g, tu_node(g, "Relu", "rb", 1, b)->outputs[0]);
    return m;
}

typedef struct input_case {
    const char *name;
    gl_dtype dt_a;
    int rank_a;
    int64_t dims_a[3];
    int64_t dims_b[2];
    gl_status want;
    const char *words[4]; /* the message must contain each */
} input_case;

static const input_case input_cases[] = {
    {"consistent N", GL_DT_FLOAT, 2, {4, 3}, {4, 2}, GL_OK, {NULL}},
    {"N = 0 is a size too", GL_DT_FLOAT, 2, {0, 3}, {0, 2}, GL_OK, {NULL}},
    {"dtype", GL_DT_INT64, 2, {4, 3}, {4, 2}, GL_ERR_INPUT, {"'a'", "int64", "float"}},
    {"rank", GL_DT_FLOAT, 3, {4, 3, 1}, {4, 2}, GL_ERR_INPUT, {"'a'", "rank 3", "expected 2"}},
    {"known dim", GL_DT_FLOAT, 2, {4, 5}, {4, 2}, GL_ERR_INPUT,
     {"'a'", "dim 1", "is 5", "expected 3"}},
    {"symbol bound twice", GL_DT_FLOAT, 2, {4, 3}, {5, 2}, GL_ERR_INPUT,
     {"'b'", "'N'", "is 5", "expected 4"}},
};

Test(exec, input_checks)
{
    gl_model *m = symbolic_model();
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK);
    for (size_t i = 0; i < GL_ARRAY_LEN(input_cases); i++) {
        const input_case *c = &input_cases[i];
        gl_tensor *a = tu_tensor_of(c->dt_a, c->rank_a, c->dims_a, NULL);
        gl_tensor *b = tu_tensor_f32(2, c->dims_b, NULL);
        gl_tensor *outs[2] = {0};
        gl_error_clear();
        gl_status st = gl_exec_run(e, (const gl_tensor *[]){a, b}, 2, outs, 2);
        cr_expect_eq(st, c->want, "%s: status %d, expected %d (%s)", c->name, st, c->want,
                     gl_error_message());
        for (size_t w = 0; w < 4 && c->words[w]; w++)
            cr_expect(message_has(c->words[w]), "%s: message lacks %s: %s", c->name,
                      c->words[w], gl_error_message());
        gl_tensor_free(outs[0]);
        gl_tensor_free(outs[1]);
        gl_tensor_free(a);
        gl_tensor_free(b);
    }
    gl_exec_free(e);
    gl_model_free(m);
}

Test(exec, shape_check_can_be_turned_off)
{
    gl_model *m = symbolic_model();
    gl_exec *e = NULL;
    gl_exec_options o = {.no_shape_check = true};
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK);
    gl_tensor *a = tu_tensor_f32(1, (const int64_t[]){7}, NULL);
    gl_tensor *b = tu_tensor_f32(2, (const int64_t[]){1, 1}, NULL);
    gl_tensor *outs[2] = {0};
    cr_expect_eq(gl_exec_run(e, (const gl_tensor *[]){a, b}, 2, outs, 2), GL_OK, "%s",
                 gl_error_message());
    gl_tensor *i = tu_tensor_i64(1, (const int64_t[]){7}, NULL);
    gl_tensor_free(outs[0]);
    gl_tensor_free(outs[1]);
    cr_expect_eq(gl_exec_run(e, (const gl_tensor *[]){i, b}, 2, outs, 2), GL_ERR_INPUT,
                 "the dtype is still checked");
    gl_tensor_free(i);
    gl_tensor_free(a);
    gl_tensor_free(b);
    gl_exec_free(e);
    gl_model_free(m);
}

Test(exec, missing_input_and_wrong_counts)
{
    gl_model *m = relu_add_model();
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK);
    gl_tensor *y = NULL;
    cr_expect_eq(gl_exec_run(e, (const gl_tensor *[]){NULL}, 1, &y, 1), GL_ERR_INPUT);
    cr_expect(message_has("'x'") && message_has("no default"), "message: %s",
              gl_error_message());
    gl_tensor *x = tu_tensor_f32(2, D23, NULL);
    cr_expect_eq(gl_exec_run(e, (const gl_tensor *[]){x, x}, 2, &y, 1), GL_ERR_INPUT);
    gl_tensor *two[2];
    cr_expect_eq(gl_exec_run(e, (const gl_tensor *[]){x}, 1, two, 2), GL_ERR_INPUT);
    gl_tensor_free(x);
    gl_exec_free(e);
    gl_model_free(m);
}

/* An input with an initializer is an input with a default. */
Test(exec, default_initializer)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (const int64_t[]){2});
    gl_value *alpha = tu_const_f32(g, "alpha", 1, (const int64_t[]){1}, (const float[]){0.5f});
    gl_graph_add_input(g, alpha);
    gl_node *n = tu_node(g, "Add", "add", 2, x, alpha);
    tu_output(g, n->outputs[0]);
    gl_tensor *tx = tu_tensor_f32(1, (const int64_t[]){2}, (const float[]){1, 2});
    gl_tensor *other = tu_tensor_f32(1, (const int64_t[]){1}, (const float[]){10});
    gl_tensor *y = NULL;
    cr_assert_eq(run1(m, (const gl_tensor *[]){tx, NULL}, 2, &y), GL_OK, "%s",
                 gl_error_message());
    expect_floats(y, (const float[]){1.5f, 2.5f}, 2, "default alpha");
    gl_tensor_free(y);
    cr_assert_eq(run1(m, (const gl_tensor *[]){tx, other}, 2, &y), GL_OK, "%s",
                 gl_error_message());
    expect_floats(y, (const float[]){11, 12}, 2, "alpha fed");
    gl_tensor_free(y);
    /* The default is checked like a fed input: a wrong shape is refused. */
    gl_tensor *wide = tu_tensor_f32(1, (const int64_t[]){3}, NULL);
    cr_expect_eq(run1(m, (const gl_tensor *[]){tx, wide}, 2, &y), GL_ERR_INPUT);
    cr_expect(message_has("'alpha'"), "message: %s", gl_error_message());
    gl_tensor_free(wide);
    gl_tensor_free(tx);
    gl_tensor_free(other);
    gl_model_free(m);
}

/* ---- lifetimes ---------------------------------------------------------------------------- */

/* A chain of `len` Relus; with `all_outputs` every intermediate is a graph output. */
static gl_model *relu_chain(int len, bool all_outputs)
{
    gl_model *m = tu_model(13);
    gl_value *v = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (const int64_t[]){1000});
    for (int i = 0; i < len; i++) {
        char name[32];
        snprintf(name, sizeof(name), "r%d", i);
        v = tu_node(m->graph, "Relu", name, 1, v)->outputs[0];
        if (all_outputs || i == len - 1)
            tu_output(m->graph, v);
    }
    return m;
}

static gl_exec_stats chain_stats(int len, bool all_outputs)
{
    gl_model *m = relu_chain(len, all_outputs);
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK);
    gl_tensor *x = tu_tensor_f32(1, (const int64_t[]){1000}, NULL);
    size_t n_out = m->graph->n_outputs;
    gl_tensor **outs = calloc(n_out, sizeof(*outs));
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *[]){x}, 1, outs, n_out), GL_OK);
    gl_exec_stats s;
    gl_exec_get_stats(e, &s);
    for (size_t i = 0; i < n_out; i++)
        gl_tensor_free(outs[i]);
    free(outs);
    gl_tensor_free(x);
    gl_exec_free(e);
    gl_model_free(m);
    return s;
}

Test(exec, tensors_are_freed_after_their_last_use)
{
    gl_exec_stats chain = chain_stats(20, false);
    /* x, the previous value and the new one: at most three at once. */
    cr_expect_leq(chain.peak_tensors, 3, "peak %zu tensors in a chain", chain.peak_tensors);
    cr_expect_leq(chain.peak_bytes, 3 * 4000, "peak %zu bytes", chain.peak_bytes);
    cr_expect_eq(chain.nodes_run, 20);
    /* Graph outputs are kept to the end (x is not one: it goes after r0). */
    gl_exec_stats kept = chain_stats(20, true);
    cr_expect_eq(kept.peak_tensors, 20, "peak %zu", kept.peak_tensors);
}

/* ---- subgraphs ------------------------------------------------------------------------------ */

/* y = If(cond) then x + x else -x, both branches reading x from outside. */
static gl_model *if_model(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    tu_input(g, "x", GL_DT_FLOAT, 1, (const int64_t[]){2}); /* read by the branches */
    gl_value *cond = tu_input(g, "cond", GL_DT_BOOL, 0, NULL);
    gl_node *nif = tu_node(g, "If", "choose", 1, cond);
    gl_graph *then_g = gl_graph_new(m, g, "then");
    then_g->parent_node = nif;
    gl_value *xt = gl_resolve_value(then_g, "x");
    gl_graph_add_output(then_g, tu_node(then_g, "Add", "twice", 2, xt, xt)->outputs[0]);
    gl_attr a = graph_attr("then_branch", then_g);
    gl_node_take_attr(nif, &a);
    gl_graph *else_g = gl_graph_new(m, g, "else");
    else_g->parent_node = nif;
    gl_value *xe = gl_resolve_value(else_g, "x");
    gl_graph_add_output(else_g, tu_node(else_g, "Neg", "negate", 1, xe)->outputs[0]);
    gl_attr b = graph_attr("else_branch", else_g);
    gl_node_take_attr(nif, &b);
    tu_output(g, nif->outputs[0]);
    return m;
}

Test(exec, if_runs_the_chosen_branch_with_captures)
{
    gl_model *m = if_model();
    gl_tensor *x = tu_tensor_f32(1, (const int64_t[]){2}, (const float[]){1.5f, -2});
    for (int flag = 0; flag < 2; flag++) {
        uint8_t b = (uint8_t)flag;
        gl_tensor *cond = tu_tensor_of(GL_DT_BOOL, 0, NULL, &b);
        gl_tensor *y = NULL;
        cr_assert_eq(run1(m, (const gl_tensor *[]){x, cond}, 2, &y), GL_OK, "%s",
                     gl_error_message());
        if (flag)
            expect_floats(y, (const float[]){3, -4}, 2, "then: x + x");
        else
            expect_floats(y, (const float[]){-1.5f, 2}, 2, "else: -x");
        gl_tensor_free(y);
        gl_tensor_free(cond);
    }
    gl_tensor_free(x);
    gl_model_free(m);
}

/* v = Loop(M=3) { v_out = v_in + x; inner If(true) reading x two levels up } — the
 * capture resolves through the Loop body's frame to the main graph's. */
Test(exec, loop_with_nested_capture)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    tu_input(g, "x", GL_DT_FLOAT, 1, (const int64_t[]){2}); /* read two levels down */
    gl_value *v0 = tu_input(g, "v0", GL_DT_FLOAT, 1, (const int64_t[]){2});
    gl_value *trip = tu_const_i64(g, "trip", 0, NULL, (const int64_t[]){3});
    gl_value *ins[3] = {trip, NULL, v0};
    gl_node *loop = gl_add_node(g, "Loop", "", "loop", ins, 3, 1);

    gl_graph *body = gl_graph_new(m, g, "body");
    body->parent_node = loop;
    tu_input(body, "iter", GL_DT_INT64, 0, NULL);
    gl_value *cond_in = tu_input(body, "cond_in", GL_DT_BOOL, 0, NULL);
    tu_input(body, "v_in", GL_DT_FLOAT, 1, (const int64_t[]){2}); /* read by the branches */
    gl_node *keep = tu_node(body, "Identity", "keep", 1, cond_in);
    gl_node *nif = tu_node(body, "If", "inner_if", 1, cond_in);
    gl_graph *then_g = gl_graph_new(m, body, "then");
    then_g->parent_node = nif;
    gl_value *xt = gl_resolve_value(then_g, "x");
    gl_value *vt = gl_resolve_value(then_g, "v_in");
    gl_graph_add_output(then_g, tu_node(then_g, "Add", "acc", 2, vt, xt)->outputs[0]);
    gl_attr ta = graph_attr("then_branch", then_g);
    gl_node_take_attr(nif, &ta);
    gl_graph *else_g = gl_graph_new(m, body, "else");
    else_g->parent_node = nif;
    gl_value *ve = gl_resolve_value(else_g, "v_in");
    gl_graph_add_output(else_g, tu_node(else_g, "Identity", "same", 1, ve)->outputs[0]);
    gl_attr ea = graph_attr("else_branch", else_g);
    gl_node_take_attr(nif, &ea);
    gl_graph_add_output(body, keep->outputs[0]);
    gl_graph_add_output(body, nif->outputs[0]);
    gl_attr ba = graph_attr("body", body);
    gl_node_take_attr(loop, &ba);
    tu_output(g, loop->outputs[0]);

    gl_tensor *tx = tu_tensor_f32(1, (const int64_t[]){2}, (const float[]){1, 10});
    gl_tensor *tv = tu_tensor_f32(1, (const int64_t[]){2}, (const float[]){0.5f, 0});
    gl_tensor *y = NULL;
    cr_assert_eq(run1(m, (const gl_tensor *[]){tx, tv}, 2, &y), GL_OK, "%s",
                 gl_error_message());
    /* cond_in is true in every iteration (no cond input: true), so v0 + 3x */
    expect_floats(y, (const float[]){3.5f, 30}, 2, "loop");
    gl_tensor_free(y);
    gl_tensor_free(tx);
    gl_tensor_free(tv);
    gl_model_free(m);
}

/* ---- model-local functions -------------------------------------------------------------------- */

/* custom.Leaky(X) = LeakyRelu(X) with alpha taken from the caller's attribute "slope". */
static void add_leaky_function(gl_model *m)
{
    m->functions = gl_xcalloc(1, sizeof(*m->functions));
    m->n_functions = 1;
    gl_function *f = &m->functions[0];
    f->name = gl_xstrdup("Leaky");
    f->domain = gl_xstrdup("custom");
    f->attributes = gl_xcalloc(1, sizeof(char *));
    f->attributes[0] = gl_xstrdup("slope");
    f->n_attributes = 1;
    f->opsets = gl_xcalloc(1, sizeof(*f->opsets));
    f->opsets[0] = (gl_opset){gl_xstrdup(""), 13};
    f->n_opsets = 1;
    f->body = gl_graph_new(m, NULL, "Leaky");
    gl_value *in = gl_add_value(f->body, "X");
    gl_graph_add_input(f->body, in);
    gl_node *lr = tu_node(f->body, "LeakyRelu", "lr", 1, in);
    gl_attr a = {.name = gl_xstrdup("alpha"), .type = GL_ATTR_FLOAT,
                 .ref_attr_name = gl_xstrdup("slope")};
    gl_node_take_attr(lr, &a);
    gl_graph_add_output(f->body, lr->outputs[0]);
}

static gl_model *function_model(bool set_slope)
{
    gl_model *m = tu_model(13);
    gl_model_set_opset(m, "custom", 1);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (const int64_t[]){2});
    gl_node *call = gl_add_node(m->graph, "Leaky", "custom", "call", &x, 1, 1);
    if (set_slope)
        gl_node_set_attr_float(call, "slope", 0.5f);
    tu_output(m->graph, call->outputs[0]);
    add_leaky_function(m);
    return m;
}

Test(exec, function_call_substitutes_caller_attributes)
{
    gl_tensor *x = tu_tensor_f32(1, (const int64_t[]){2}, (const float[]){-2, 3});
    for (int set = 0; set < 2; set++) {
        gl_model *m = function_model(set);
        gl_tensor *y = NULL;
        cr_assert_eq(run1(m, (const gl_tensor *[]){x}, 1, &y), GL_OK, "%s",
                     gl_error_message());
        /* slope 0.5: -1; unset: LeakyRelu's default alpha 0.01: -0.02 */
        expect_floats(y, (const float[]){set ? -1.0f : -0.02f, 3}, 2,
                      set ? "slope 0.5" : "default alpha");
        gl_tensor_free(y);
        gl_exec *e = NULL;
        cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        gl_exec_print_plan(e, f);
        fclose(f);
        cr_expect(strstr(buf, "function custom.Leaky") && strstr(buf, "LeakyRelu"),
                  "the plan shows the call and its body: %s", buf);
        free(buf);
        gl_exec_free(e);
        gl_model_free(m);
    }
    gl_tensor_free(x);
}

Test(exec, eval_node_runs_a_function_call)
{
    gl_model *m = function_model(true);
    gl_tensor *x = tu_tensor_f32(1, (const int64_t[]){2}, (const float[]){-4, 1});
    gl_tensor *y = NULL;
    cr_assert_eq(gl_eval_node(m, m->graph->nodes[0], (const gl_tensor *[]){x}, &y), GL_OK,
                 "%s", gl_error_message());
    expect_floats(y, (const float[]){-2, 1}, 2, "eval Leaky");
    gl_tensor_free(y);
    gl_tensor_free(x);
    gl_model_free(m);
}

/* Hostile calls (tests/data/make_hostile_exec.py, make_bad_models.py): every walk that
 * expands calls refuses them under the one bound — the planner and shape inference with
 * a message naming the outermost call, the effects analysis by answering "unknown". */
Test(exec, hostile_function_calls_are_refused_by_every_walk)
{
    static const struct {
        const char *file, *call, *needle;
    } cases[] = {
        {"tests/data/bad/function_recursive.onnx", "'call'", "'twice' calls itself"},
        {"tests/data/bad/function_fanout.onnx", "'call_f25'", "expand to more than"},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_model *m = load_src(cases[c].file);
        gl_exec *e = NULL;
        cr_expect_eq(gl_exec_create(m, NULL, &e), GL_ERR_INPUT, "%s: planned", cases[c].file);
        cr_expect(message_has(cases[c].needle) && message_has(cases[c].call),
                  "%s: plan: '%s'", cases[c].file, gl_error_message());
        gl_exec_free(e);
        gl_error_clear();
        cr_expect_eq(gl_infer_graph(m, m->graph, NULL, NULL), GL_ERR_INPUT, "%s: typed",
                     cases[c].file);
        cr_expect(message_has(cases[c].needle) && message_has(cases[c].call),
                  "%s: shapes: '%s'", cases[c].file, gl_error_message());
        cr_expect_eq(gl_node_effects(m->graph->nodes[0]), GL_EFFECT_UNKNOWN, "%s: effects",
                     cases[c].file);
        gl_model_free(m);
    }
}

/* ---- gl_eval_node ------------------------------------------------------------------------------ */

Test(exec, eval_node_plain)
{
    gl_model *m = relu_add_model();
    const gl_node *add = m->graph->nodes[1];
    gl_tensor *a = tu_tensor_f32(2, D23, (const float[]){1, 1, 1, 1, 1, 1});
    gl_tensor *b = tu_tensor_f32(2, D23, (const float[]){0, 1, 2, 3, 4, 5});
    gl_tensor *y = NULL;
    cr_assert_eq(gl_eval_node(m, add, (const gl_tensor *[]){a, b}, &y), GL_OK, "%s",
                 gl_error_message());
    expect_floats(y, (const float[]){1, 2, 3, 4, 5, 6}, 6, "eval Add");
    gl_tensor_free(y);
    gl_tensor_free(a);
    gl_tensor_free(b);
    gl_model_free(m);
}

/* An If whose branches read a constant folds; one reading a graph input cannot. */
Test(exec, eval_node_with_subgraph)
{
    gl_model *m = if_model();
    gl_node *nif = m->graph->nodes[0];
    uint8_t t = 1;
    gl_tensor *cond = tu_tensor_of(GL_DT_BOOL, 0, NULL, &t);
    gl_tensor *y = NULL;
    cr_expect_neq(gl_eval_node(m, nif, (const gl_tensor *[]){cond}, &y), GL_OK,
                  "x is a graph input, not a constant");
    cr_expect_null(y);
    cr_expect(message_has("'x'"), "message: %s", gl_error_message());
    gl_model_free(m);

    /* Same model, but x an initializer. */
    m = tu_model(13);
    gl_graph *g = m->graph;
    tu_const_f32(g, "x", 1, (const int64_t[]){2}, (const float[]){2, 5});
    gl_value *c = tu_input(g, "cond", GL_DT_BOOL, 0, NULL);
    nif = tu_node(g, "If", "choose", 1, c);
    const char *names[2] = {"then_branch", "else_branch"};
    for (int i = 0; i < 2; i++) {
        gl_graph *br = gl_graph_new(m, g, names[i]);
        br->parent_node = nif;
        gl_value *xv = gl_resolve_value(br, "x");
        gl_node *n = i == 0 ? tu_node(br, "Add", "twice", 2, xv, xv)
                            : tu_node(br, "Neg", "negate", 1, xv);
        gl_graph_add_output(br, n->outputs[0]);
        gl_attr a = graph_attr(names[i], br);
        gl_node_take_attr(nif, &a);
    }
    tu_output(g, nif->outputs[0]);
    cr_assert_eq(gl_eval_node(m, nif, (const gl_tensor *[]){cond}, &y), GL_OK, "%s",
                 gl_error_message());
    expect_floats(y, (const float[]){4, 10}, 2, "folded If");
    gl_tensor_free(y);
    gl_tensor_free(cond);
    gl_model_free(m);
}

/* ---- bounds of a run: memory, iterations, cancellation ------------------------------------- */

/* Run m once with `o` on inputs (graph-input order; random-free: the tests pass them). */
static gl_status run_with(const gl_model *m, const gl_exec_options *o,
                          const gl_tensor *const *inputs, size_t n_inputs)
{
    gl_exec *e = NULL;
    gl_status st = gl_exec_create(m, o, &e);
    size_t n_out = m->graph->n_outputs;
    gl_tensor **outs = gl_xcalloc(n_out + 1, sizeof(*outs));
    if (st == GL_OK)
        st = gl_exec_run(e, inputs, n_inputs, outs, n_out);
    for (size_t i = 0; i < n_out; i++)
        gl_tensor_free(outs[i]);
    free(outs);
    gl_exec_free(e);
    return st;
}

/* Every needle (up to 4) is in the message. */
static bool message_has_all(const char *const *needles)
{
    for (int i = 0; i < 4 && needles[i]; i++)
        if (!message_has(needles[i]))
            return false;
    return true;
}

/* relu_add_model holds x (24 bytes, the caller's), then r = Relu(x) (24) and, while r is
 * alive, y = r + c (24): 72 bytes at the peak. c is an initializer: not counted. */
Test(exec, memory_limit_counts_every_tensor_alive)
{
    static const struct {
        size_t max_memory;
        gl_status expect;
        const char *needles[4];
    } cases[] = {
        {72, GL_OK, {NULL}},
        {71, GL_ERR_NOMEM, {"node 'a' (Add): output 'a_out0' float[2,3] (24 bytes) would bring "
                            "the tensors alive to 72 bytes", "limit (--max-memory) of 71"}},
        {47, GL_ERR_NOMEM, {"node 'r' (Relu): output", "to 48 bytes"}},
        {23, GL_ERR_NOMEM, {"node 'r' (Relu): output 'r_out0' float[2,3] takes 24 bytes"}},
    };
    gl_model *m = relu_add_model();
    gl_tensor *x = tu_tensor_f32(2, D23, (const float[]){-1, 2, -3, 4, -5, 6});
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_exec_options o = {.max_memory = cases[c].max_memory};
        gl_error_clear();
        gl_status st = run_with(m, &o, (const gl_tensor *[]){x}, 1);
        cr_expect_eq(st, cases[c].expect, "limit %zu: status %d (%s)", cases[c].max_memory, st,
                     gl_error_message());
        cr_expect(message_has_all(cases[c].needles), "limit %zu: '%s'", cases[c].max_memory,
                  gl_error_message());
    }
    gl_tensor_free(x);
    gl_model_free(m);
}

/* The hostile fixtures (tests/data/make_hostile_exec.py) end, with the node and value
 * named. x = [0] feeds the loops. */
Test(exec, hostile_runs_end_at_the_limits)
{
    static const struct {
        const char *file;
        size_t max_memory;
        uint64_t max_iterations;
        gl_status expect;
        const char *needles[4];
    } cases[] = {
        {"loop_huge_trip.onnx", 0, 1000, GL_ERR_INPUT,
         {"node 'forever' (Loop): more than 1000 loop iterations", "--max-iterations"}},
        {"loop_while_forever.onnx", 0, 1000, GL_ERR_INPUT,
         {"node 'forever' (Loop): more than 1000"}},
        /* 256 KiB pieces: the stack of 64 of them (16 MiB) is refused at 24 MiB, while 32
         * pieces and the 64-piece stack they are copied into are alive. */
        {"loop_scan_growing.onnx", 24u << 20, 0, GL_ERR_NOMEM,
         {"node 'forever' (Loop): scan output 'ys' float[64,65536] (16777216 bytes)",
          "over the memory limit"}},
        {"loop_scan_huge_trip.onnx", 24u << 20, 0, GL_ERR_NOMEM, {"scan output 'ys' float[64,65536]"}},
        {"huge_intermediate.onnx", 1u << 30, 0, GL_ERR_NOMEM,
         {"node 'fill' (ConstantOfShape): output 'big' float[65536,65536] takes 17179869184 "
          "bytes"}},
    };
    gl_tensor *x = tu_tensor_f32(1, (const int64_t[]){1}, (const float[]){0});
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        char rel[256];
        snprintf(rel, sizeof(rel), "tests/data/bad/%s", cases[c].file);
        gl_model *m = load_src(rel);
        gl_exec_options o = {.max_memory = cases[c].max_memory,
                             .max_iterations = cases[c].max_iterations};
        gl_status st = run_with(m, &o, (const gl_tensor *[]){x}, 1);
        cr_expect_eq(st, cases[c].expect, "%s: status %d", rel, st);
        cr_expect(message_has_all(cases[c].needles), "%s: '%s'", rel, gl_error_message());
        gl_model_free(m);
    }
    gl_tensor_free(x);
}

/* Folding and shape inference evaluate nodes on their own: a constant loop that never
 * ends stops at GL_EVAL_MAX_ITERATIONS. */
Test(exec, eval_node_caps_loop_iterations)
{
    gl_model *m = load_src("tests/data/bad/loop_huge_trip_const.onnx");
    const gl_node *loop = m->graph->nodes[0];
    const gl_tensor *in[3];
    for (size_t i = 0; i < 3; i++)
        in[i] = loop->inputs[i] ? loop->inputs[i]->init : NULL;
    gl_tensor *out = NULL;
    cr_expect_eq(gl_eval_node(m, loop, in, &out), GL_ERR_INPUT);
    cr_expect(message_has("more than 65536 loop iterations"), "'%s'", gl_error_message());
    cr_expect_null(out);
    gl_model_free(m);
}

static void *cancel_soon(void *flag)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_store((atomic_bool *)flag, true);
    return NULL;
}

/* A flag set before the run stops it at the first node; one set from another thread while
 * a loop runs stops the loop (were it not, the iteration cap would end it, seconds later,
 * with another status). */
Test(exec, cancel_stops_between_nodes_and_iterations)
{
    atomic_bool flag = true;
    gl_model *m = relu_add_model();
    gl_tensor *x = tu_tensor_f32(2, D23, (const float[]){-1, 2, -3, 4, -5, 6});
    gl_exec_options o = {.cancel = &flag};
    cr_expect_eq(run_with(m, &o, (const gl_tensor *[]){x}, 1), GL_ERR_CANCELLED);
    cr_expect(message_has("node 'r' (Relu): cancelled"), "'%s'", gl_error_message());
    gl_tensor_free(x);
    gl_model_free(m);

    m = load_src("tests/data/bad/loop_while_forever.onnx");
    x = tu_tensor_f32(1, (const int64_t[]){1}, (const float[]){0});
    atomic_store(&flag, false);
    o = (gl_exec_options){.cancel = &flag, .max_iterations = (uint64_t)1 << 24};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, cancel_soon, &flag), 0);
    cr_expect_eq(run_with(m, &o, (const gl_tensor *[]){x}, 1), GL_ERR_CANCELLED);
    pthread_join(t, NULL);
    cr_expect(message_has(": cancelled"), "'%s'", gl_error_message());
    gl_tensor_free(x);
    gl_model_free(m);
}

/* ---- comparison ----------------------------------------------------------------------------- */

typedef struct cmp_case {
    const char *name;
    gl_dtype dt;
    int n;
    double a[4], b[4]; /* converted to dt */
    double rtol, atol;
    bool ok;
    int64_t over, nan, first_bad;
} cmp_case;

/* Values are exact in binary so the edges are exact. */
static const cmp_case cmp_cases[] = {
    {"equal", GL_DT_FLOAT, 3, {1, 2, 3}, {1, 2, 3}, 0, 0, true, 0, 0, -1},
    {"atol edge inside", GL_DT_FLOAT, 2, {1, 0.25}, {1, 0.5}, 0, 0.25, true, 0, 0, -1},
    {"atol edge outside", GL_DT_FLOAT, 2, {1, 0.25}, {1, 0.5}, 0, 0.125, false, 1, 0, 1},
    {"rtol edge inside", GL_DT_FLOAT, 1, {1025}, {1024}, 1.0 / 1024, 0, true, 0, 0, -1},
    {"rtol edge outside", GL_DT_FLOAT, 1, {1025}, {1024}, 1.0 / 2048, 0, false, 1, 0, 0},
    /* |1024 - 1023| = 1 > 1023/1024, though 1 <= 1024/1024 the other way round */
    {"rtol is relative to expected", GL_DT_FLOAT, 1, {1024}, {1023}, 1.0 / 1024, 0, false, 1,
     0, 0},
    {"NaN equals NaN", GL_DT_FLOAT, 2, {NAN, 1}, {NAN, 1}, 0, 0, true, 0, 0, -1},
    {"NaN vs number", GL_DT_FLOAT, 2, {1, NAN}, {1, 1}, 1, 1, false, 0, 1, 1},
    {"number vs NaN", GL_DT_DOUBLE, 2, {1, 2}, {NAN, 2}, 1, 1, false, 0, 1, 0},
    {"Inf equals Inf", GL_DT_FLOAT, 2, {INFINITY, -INFINITY}, {INFINITY, -INFINITY}, 0, 0,
     true, 0, 0, -1},
    {"Inf sign", GL_DT_FLOAT, 1, {INFINITY}, {-INFINITY}, 1, 1, false, 0, 1, 0},
    {"Inf vs big", GL_DT_FLOAT, 1, {INFINITY}, {3e38}, 1, 1e39, false, 0, 1, 0},
    {"several bad, first reported", GL_DT_FLOAT, 4, {0, 9, 0, 9}, {0, 0, 0, 0}, 0, 1, false,
     2, 0, 1},
    {"int exact despite tolerance", GL_DT_INT32, 2, {1, 2}, {1, 3}, 1, 100, false, 1, 0, 1},
    {"int equal", GL_DT_INT8, 3, {-5, 0, 7}, {-5, 0, 7}, 0, 0, true, 0, 0, -1},
    {"uint8 differs", GL_DT_UINT8, 2, {255, 0}, {254, 0}, 0, 0, false, 1, 0, 0},
    {"bool", GL_DT_BOOL, 3, {1, 0, 1}, {1, 1, 1}, 1, 1, false, 1, 0, 1},
    {"float16 within rtol", GL_DT_FLOAT16, 1, {1.0009765625}, {1}, 1e-3, 0, true, 0, 0, -1},
    {"float16 over rtol", GL_DT_FLOAT16, 1, {1.0009765625}, {1}, 1e-4, 0, false, 1, 0, 0},
    {"bfloat16 over", GL_DT_BFLOAT16, 1, {1.0078125}, {1}, 1e-3, 0, false, 1, 0, 0},
    {"bfloat16 NaN", GL_DT_BFLOAT16, 1, {NAN}, {NAN}, 0, 0, true, 0, 0, -1},
    {"empty", GL_DT_FLOAT, 0, {0}, {0}, 0, 0, true, 0, 0, -1},
};

static gl_tensor *typed_tensor(gl_dtype dt, int n, const double *v)
{
    gl_tensor *t = tu_tensor_of(dt, 1, (const int64_t[]){n}, NULL);
    void *p = n ? gl_tensor_make_writable(t) : NULL;
    for (int i = 0; i < n; i++) {
        switch (dt) {
        case GL_DT_FLOAT: ((float *)p)[i] = (float)v[i]; break;
        case GL_DT_DOUBLE: ((double *)p)[i] = v[i]; break;
        case GL_DT_FLOAT16: ((uint16_t *)p)[i] = gl_f32_to_f16((float)v[i]); break;
        case GL_DT_BFLOAT16: ((uint16_t *)p)[i] = gl_f32_to_bf16((float)v[i]); break;
        case GL_DT_INT32: ((int32_t *)p)[i] = (int32_t)v[i]; break;
        case GL_DT_INT8: ((int8_t *)p)[i] = (int8_t)v[i]; break;
        case GL_DT_UINT8:
        case GL_DT_BOOL: ((uint8_t *)p)[i] = (uint8_t)v[i]; break;
        default: cr_assert_fail("dtype %d not in the table helper", dt);
        }
    }
    return t;
}

Test(compare, table)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(cmp_cases); i++) {
        const cmp_case *c = &cmp_cases[i];
        gl_tensor *a = typed_tensor(c->dt, c->n, c->a), *b = typed_tensor(c->dt, c->n, c->b);
        gl_compare r;
        gl_compare_tensors(a, b, c->rtol, c->atol, &r);
        cr_expect(r.same_shape, "%s: same shape", c->name);
        cr_expect_eq(r.ok, c->ok, "%s: ok %d, expected %d", c->name, r.ok, c->ok);
        cr_expect_eq(r.over_tol, c->over, "%s: over %lld, expected %lld", c->name,
                     (long long)r.over_tol, (long long)c->over);
        cr_expect_eq(r.nan_mismatch, c->nan, "%s: nan %lld, expected %lld", c->name,
                     (long long)r.nan_mismatch, (long long)c->nan);
        cr_expect_eq(r.first_bad, c->first_bad, "%s: first_bad %lld, expected %lld", c->name,
                     (long long)r.first_bad, (long long)c->first_bad);
        cr_expect_eq(r.count, c->n, "%s: count", c->name);
        gl_tensor_free(a);
        gl_tensor_free(b);
    }
}

Test(compare, int64_and_uint64_are_exact)
{
    int64_t a[] = {(int64_t)1 << 62}, b[] = {((int64_t)1 << 62) + 1};
    gl_tensor *ta = tu_tensor_i64(1, (const int64_t[]){1}, a);
    gl_tensor *tb = tu_tensor_i64(1, (const int64_t[]){1}, b);
    gl_compare r;
    gl_compare_tensors(ta, tb, 1, 1, &r); /* equal as doubles, not as integers */
    cr_expect(!r.ok && r.over_tol == 1);
    uint64_t ua[] = {UINT64_MAX}, ub[] = {UINT64_MAX - 1};
    gl_tensor *tua = tu_tensor_of(GL_DT_UINT64, 1, (const int64_t[]){1}, ua);
    gl_tensor *tub = tu_tensor_of(GL_DT_UINT64, 1, (const int64_t[]){1}, ub);
    gl_compare_tensors(tua, tub, 1, 1, &r);
    cr_expect(!r.ok && r.over_tol == 1);
    gl_compare_tensors(tua, tua, 0, 0, &r);
    cr_expect(r.ok);
    gl_tensor_free(ta);
    gl_tensor_free(tb);
    gl_tensor_free(tua);
    gl_tensor_free(tub);
}

Test(compare, measures)
{
    /* a = [1 2 4], b = [1 1 2]: |a-b| = 0 1 2, max_abs 2, max_rel max(1/1, 2/2) = 1,
     * nmse = (0 + 1 + 4) / (1 + 1 + 4) = 5/6. */
    gl_tensor *a = tu_tensor_f32(1, (const int64_t[]){3}, (const float[]){1, 2, 4});
    gl_tensor *b = tu_tensor_f32(1, (const int64_t[]){3}, (const float[]){1, 1, 2});
    gl_compare r;
    gl_compare_tensors(a, b, 0, 0, &r);
    cr_expect_float_eq(r.max_abs, 2.0, 1e-12);
    cr_expect_float_eq(r.max_rel, 1.0, 1e-12);
    cr_expect_float_eq(r.nmse, 5.0 / 6.0, 1e-12);
    cr_expect_eq(r.over_tol, 2);
    char line[200];
    gl_compare_format(&r, line, sizeof(line));
    cr_expect(strstr(line, "max_abs 2") && strstr(line, "max_rel 1") &&
                  strstr(line, "2 over tolerance"),
              "line: %s", line);
    /* all-zero expected: nmse 0 when equal, inf when not */
    gl_tensor *z = tu_tensor_f32(1, (const int64_t[]){3}, NULL);
    gl_compare_tensors(z, z, 0, 0, &r);
    cr_expect(r.ok && r.nmse == 0);
    gl_compare_tensors(a, z, 0, 10, &r);
    cr_expect(r.ok && isinf(r.nmse), "within atol, nmse %g", r.nmse);
    gl_tensor_free(a);
    gl_tensor_free(b);
    gl_tensor_free(z);
}

Test(compare, shape_dtype_and_strings)
{
    gl_tensor *a = tu_tensor_f32(2, (const int64_t[]){2, 3}, NULL);
    gl_tensor *b = tu_tensor_f32(2, (const int64_t[]){3, 2}, NULL);
    gl_tensor *c = tu_tensor_of(GL_DT_DOUBLE, 2, (const int64_t[]){2, 3}, NULL);
    gl_compare r;
    gl_compare_tensors(a, b, 1, 1, &r);
    cr_expect(!r.same_shape && !r.ok, "dims differ");
    gl_compare_tensors(a, c, 1, 1, &r);
    cr_expect(!r.same_shape && !r.ok, "dtype differs");
    char line[100];
    gl_compare_format(&r, line, sizeof(line));
    cr_expect(strstr(line, "differs") != NULL, "line: %s", line);

    gl_tensor *s1 = tu_tensor_of(GL_DT_STRING, 1, (const int64_t[]){2}, NULL);
    gl_tensor *s2 = tu_tensor_of(GL_DT_STRING, 1, (const int64_t[]){2}, NULL);
    gl_bytes *p1 = gl_tensor_make_writable(s1), *p2 = gl_tensor_make_writable(s2);
    const char *w1[] = {"ab", "cd"}, *w2[] = {"ab", "ce"};
    for (int i = 0; i < 2; i++) {
        p1[i] = (gl_bytes){2, (uint8_t *)gl_xstrdup(w1[i])};
        p2[i] = (gl_bytes){2, (uint8_t *)gl_xstrdup(w2[i])};
    }
    gl_compare_tensors(s1, s1, 0, 0, &r);
    cr_expect(r.ok, "same strings");
    gl_compare_tensors(s1, s2, 1, 1, &r);
    cr_expect(!r.ok && r.over_tol == 1 && r.first_bad == 1, "one string differs");
    gl_tensor_free(a);
    gl_tensor_free(b);
    gl_tensor_free(c);
    gl_tensor_free(s1);
    gl_tensor_free(s2);
}

/* ---- data sets -------------------------------------------------------------------------------- */

static void write_pb(const char *dir, const char *file, gl_tensor *t, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    free(t->name);
    t->name = name ? gl_xstrdup(name) : NULL;
    cr_assert_eq(gl_tensor_write_pb(t, path), GL_OK, "%s", gl_error_message());
    gl_tensor_free(t);
}

Test(dataset, binds_by_name_then_position)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    tu_input(g, "a", GL_DT_FLOAT, 1, (const int64_t[]){1});
    tu_input(g, "b", GL_DT_FLOAT, 1, (const int64_t[]){1});
    gl_value *bf = tu_input(g, "h", GL_DT_BFLOAT16, 1, (const int64_t[]){1});
    gl_value *alpha = tu_const_f32(g, "alpha", 1, (const int64_t[]){1}, (const float[]){0});
    gl_graph_add_input(g, alpha);
    tu_output(g, tu_node(g, "Relu", "r", 1, bf)->outputs[0]);
    char *dir = tu_tmpdir();
    /* input_0 is named "b", input_1 "a"; input_2 is unnamed: position 2 among the inputs
     * without a default (a, b, h) is h. */
    write_pb(dir, "input_0.pb", tu_tensor_f32(1, (const int64_t[]){1}, (const float[]){2}), "b");
    write_pb(dir, "input_1.pb", tu_tensor_f32(1, (const int64_t[]){1}, (const float[]){1}), "a");
    uint16_t h = 0x3F80; /* bfloat16 1.0, stored as uint16 as onnx 1.12 does */
    write_pb(dir, "input_2.pb", tu_tensor_of(GL_DT_UINT16, 1, (const int64_t[]){1}, &h), NULL);
    write_pb(dir, "output_0.pb", tu_tensor_f32(1, (const int64_t[]){1}, (const float[]){9}),
             "other_name");
    gl_dataset d;
    cr_assert_eq(gl_dataset_load(g, dir, &d), GL_OK, "%s", gl_error_message());
    cr_assert_eq(d.n_inputs, 4);
    cr_expect_float_eq(((const float *)gl_tensor_data(d.inputs[0]))[0], 1.0f, 0, "a");
    cr_expect_float_eq(((const float *)gl_tensor_data(d.inputs[1]))[0], 2.0f, 0, "b");
    cr_assert_not_null(d.inputs[2]);
    cr_expect_eq(d.inputs[2]->dtype, GL_DT_BFLOAT16, "uint16 data read as bfloat16");
    cr_expect_null(d.inputs[3], "alpha keeps its default");
    cr_assert_eq(d.n_outputs, 1);
    cr_expect_not_null(d.expected[0], "output by position");
    gl_dataset_free(&d);

    /* A file for a position no input has. */
    write_pb(dir, "input_7.pb", tu_tensor_f32(1, (const int64_t[]){1}, NULL), NULL);
    cr_expect_eq(gl_dataset_load(g, dir, &d), GL_ERR_INPUT);
    cr_expect(message_has("input_7.pb"), "message: %s", gl_error_message());
    cr_expect_null(d.inputs);
    cr_expect_neq(gl_dataset_load(g, "/nonexistent/folder", &d), GL_OK);
    tu_rmtree(dir);
    free(dir);
    gl_model_free(m);
}

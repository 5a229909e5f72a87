/* test_ops_control.c — If, Loop, Scan (through the executor) and RNN, GRU, LSTM (kernels run
 * directly), with their shape functions.
 *
 * Expected values are worked out by hand from the ONNX operator definitions: small
 * integer-valued cases with Relu/Affine activations where arithmetic is exact, and for the
 * default sigmoid/tanh cells scalar (hidden_size 1) cases whose expected values are the
 * spec's equations written out with libm, never the output of the code under test. */
#include "testutil.h"

#include "exec/exec.h"
#include "ops/opkit.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ----------------------------------------------------------------------------- */

static void expect_f32(const gl_tensor *t, int rank, const int64_t *dims, const float *want,
                       double tol, const char *what)
{
    cr_assert_not_null(t, "%s: output missing", what);
    cr_assert_eq(t->dtype, GL_DT_FLOAT, "%s: dtype %d", what, t->dtype);
    cr_assert_eq(t->rank, rank, "%s: rank %d, expected %d", what, t->rank, rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(t->dims[d], dims[d], "%s: dim %d is %lld, expected %lld", what, d,
                     (long long)t->dims[d], (long long)dims[d]);
    const float *v = gl_tensor_data(t);
    for (int64_t i = 0; i < t->count; i++)
        cr_expect(fabs(v[i] - want[i]) <= tol + 1e-6 * fabs(want[i]),
                  "%s: element %lld is %.7g, expected %.7g", what, (long long)i, v[i], want[i]);
}

static void expect_i64(const gl_tensor *t, int rank, const int64_t *dims, const int64_t *want,
                       const char *what)
{
    cr_assert_not_null(t, "%s: output missing", what);
    cr_assert_eq(t->dtype, GL_DT_INT64, "%s: dtype %d", what, t->dtype);
    cr_assert_eq(t->rank, rank, "%s: rank %d, expected %d", what, t->rank, rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(t->dims[d], dims[d], "%s: dim %d", what, d);
    for (int64_t i = 0; i < t->count; i++)
        cr_expect_eq(((const int64_t *)gl_tensor_data(t))[i], want[i], "%s: element %lld", what,
                     (long long)i);
}

/* A subgraph for attribute `attr` of node n; build it, then attach with attach_body. */
static gl_graph *body_new(gl_node *n, const char *name)
{
    gl_graph *b = gl_graph_new(n->graph->model, n->graph, name);
    b->parent_node = n;
    return b;
}

static void attach_body(gl_node *n, const char *attr, gl_graph *b)
{
    gl_attr a = {0};
    a.name = strdup(attr);
    a.type = GL_ATTR_GRAPH;
    a.g = b;
    gl_node_take_attr(n, &a);
}

static gl_node *node_n(gl_graph *g, const char *op, size_t n_in, gl_value *const *in,
                       size_t n_out)
{
    return gl_add_node(g, op, "", NULL, in, n_in, n_out);
}

/* Run model m (inputs in graph order) through the executor. */
static gl_status run_model(const gl_model *m, const gl_tensor *const *in, size_t n_in,
                           gl_tensor **out, size_t n_out)
{
    gl_exec *e = NULL;
    gl_status st = gl_exec_create(m, NULL, &e);
    if (st == GL_OK)
        st = gl_exec_run(e, in, n_in, out, n_out);
    gl_exec_free(e);
    return st;
}

static gl_tensor *scalar_bool(bool v)
{
    uint8_t b = v;
    return tu_tensor_of(GL_DT_BOOL, 0, NULL, &b);
}

static gl_tensor *scalar_i64(int64_t v) { return tu_tensor_i64(0, NULL, &v); }

/* ---- If ---------------------------------------------------------------------------------- */

/* then: x + x (reads the outer x); else: the outer x itself. */
static gl_model *if_model(size_t then_outputs)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *cond = tu_input(g, "cond", GL_DT_BOOL, 0, NULL);
    tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){3});
    gl_node *n = node_n(g, "If", 1, &cond, 1);
    gl_graph *t = body_new(n, "then");
    gl_value *tx = gl_resolve_value(t, "x");
    gl_node *add = tu_node(t, "Add", "twice", 2, tx, tx);
    for (size_t i = 0; i < then_outputs; i++)
        tu_output(t, add->outputs[0]);
    gl_graph *e = body_new(n, "else");
    tu_output(e, gl_resolve_value(e, "x"));
    attach_body(n, "then_branch", t);
    attach_body(n, "else_branch", e);
    tu_output(g, n->outputs[0]);
    return m;
}

Test(if_op, picks_the_branch)
{
    gl_model *m = if_model(1);
    gl_tensor *x = tu_tensor_f32(1, (int64_t[]){3}, (float[]){1, 2, 3});
    static const struct {
        bool cond;
        float want[3];
    } cases[] = {{true, {2, 4, 6}}, {false, {1, 2, 3}}};
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_tensor *c = scalar_bool(cases[i].cond), *out = NULL;
        gl_status st = run_model(m, (const gl_tensor *[]){c, x}, 2, &out, 1);
        cr_assert_eq(st, GL_OK, "cond %d: %s", cases[i].cond, gl_error_message());
        expect_f32(out, 1, (int64_t[]){3}, cases[i].want, 0, cases[i].cond ? "then" : "else");
        gl_tensor_free(out);
        gl_tensor_free(c);
    }
    gl_tensor_free(x);
    gl_model_free(m);
}

Test(if_op, errors)
{
    gl_model *m = if_model(1);
    gl_tensor *x = tu_tensor_f32(1, (int64_t[]){3}, (float[]){1, 2, 3}), *out = NULL;
    /* cond with two elements */
    gl_tensor *c2 = tu_tensor_of(GL_DT_BOOL, 1, (int64_t[]){2}, (uint8_t[]){1, 0});
    const gl_node *n = m->graph->nodes[m->graph->n_nodes - 1];
    gl_status st = tu_run_kernel(m, n, (const gl_tensor *[]){c2}, &out);
    cr_expect_eq(st, GL_ERR_UNSUPPORTED, "no executor (run_body): If refuses");
    gl_tensor_free(c2);
    gl_tensor_free(x);
    gl_model_free(m);

    /* a branch with the wrong number of outputs */
    m = if_model(2);
    n = m->graph->nodes[m->graph->n_nodes - 1];
    gl_type t = {0};
    st = tu_infer(m, n, &t);
    cr_expect_eq(st, GL_ERR_INPUT, "branch output count mismatch");
    cr_expect(strstr(gl_error_message(), "(If)") != NULL, "message names the node: %s",
              gl_error_message());
    gl_type_free(&t);
    gl_tensor *c = scalar_bool(true);
    x = tu_tensor_f32(1, (int64_t[]){3}, (float[]){1, 2, 3});
    st = run_model(m, (const gl_tensor *[]){c, x}, 2, &out, 1);
    cr_expect_neq(st, GL_OK, "kernel refuses the mismatch too");
    gl_tensor_free(c);
    gl_tensor_free(x);
    gl_model_free(m);
}

/* A stand-in for the shape-inference pass: a body's outputs have their declared types. */
static gl_status declared_body_types(gl_infer_ctx *c, const gl_graph *body, const gl_type *in,
                                     size_t n_in, gl_type *out, size_t n_out)
{
    (void)c, (void)in, (void)n_in;
    for (size_t i = 0; i < n_out && i < body->n_outputs; i++)
        gl_type_copy(&out[i], &body->outputs[i]->type);
    return GL_OK;
}

static void set_type(gl_value *v, gl_dtype dt, int rank, const int64_t *dims,
                     const char *const *syms)
{
    gl_type_free(&v->type);
    v->type.kind = GL_TYPE_TENSOR;
    v->type.dtype = dt;
    gl_shape_init_unknown(&v->type.shape);
    gl_shape_set_rank(&v->type.shape, rank);
    for (int d = 0; d < rank; d++) {
        v->type.shape.dims[d].value = dims[d];
        if (syms && syms[d])
            gl_dim_set_sym(&v->type.shape.dims[d], syms[d]);
    }
}

/* Run n's shape function with infer_body = declared_body_types. */
static gl_status infer_with_bodies(const gl_model *m, const gl_node *n, gl_type *out)
{
    const gl_op_def *def = gl_op_for_node(m, n);
    const gl_type *types[16] = {0};
    for (size_t i = 0; i < n->n_inputs; i++)
        types[i] = n->inputs[i] ? &n->inputs[i]->type : NULL;
    for (size_t i = 0; i < n->n_outputs; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        gl_shape_init_unknown(&out[i].shape);
    }
    gl_infer_ctx c = {
        .node = n, .model = m, .opset = gl_model_opset(m, ""), .where = "m: node",
        .n_inputs = n->n_inputs, .in_types = types, .n_outputs = n->n_outputs,
        .out_types = out, .infer_body = declared_body_types,
    };
    return def->infer(&c);
}

Test(if_op, shape_merges_branches)
{
    static const struct {
        const char *name;
        int rank_a, rank_b;
        int64_t a[2], b[2];
        const char *sym_a[2], *sym_b[2];
        gl_dtype dt_b;
        int want_rank; /* -2: nothing known */
        int64_t want[2];
        const char *want_sym[2];
    } cases[] = {
        {"equal", 2, 2, {2, 3}, {2, 3}, {0}, {0}, GL_DT_FLOAT, 2, {2, 3}, {0}},
        {"one dim differs", 2, 2, {2, 3}, {2, 4}, {0}, {0}, GL_DT_FLOAT, 2, {2, -1}, {0}},
        {"same symbol", 2, 2, {-1, 3}, {-1, 3}, {"N", 0}, {"N", 0}, GL_DT_FLOAT, 2, {-1, 3},
         {"N", 0}},
        {"different symbols", 2, 2, {-1, 3}, {-1, 3}, {"N", 0}, {"M", 0}, GL_DT_FLOAT, 2,
         {-1, 3}, {0}},
        {"ranks differ", 2, 1, {2, 3}, {2}, {0}, {0}, GL_DT_FLOAT, -1, {0}, {0}},
        {"dtypes differ", 1, 1, {2}, {2}, {0}, {0}, GL_DT_INT64, -2, {0}, {0}},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(13);
        gl_value *cond = tu_input(m->graph, "cond", GL_DT_BOOL, 0, NULL);
        gl_node *n = node_n(m->graph, "If", 1, &cond, 1);
        gl_graph *t = body_new(n, "then"), *e = body_new(n, "else");
        gl_value *ta = gl_add_value(t, "a"), *eb = gl_add_value(e, "b");
        set_type(ta, GL_DT_FLOAT, cases[i].rank_a, cases[i].a, cases[i].sym_a);
        set_type(eb, cases[i].dt_b, cases[i].rank_b, cases[i].b, cases[i].sym_b);
        tu_output(t, ta);
        tu_output(e, eb);
        attach_body(n, "then_branch", t);
        attach_body(n, "else_branch", e);
        gl_type out;
        cr_assert_eq(infer_with_bodies(m, n, &out), GL_OK, "%s: %s", cases[i].name,
                     gl_error_message());
        if (cases[i].want_rank == -2) {
            cr_expect_eq(out.kind, GL_TYPE_NONE, "%s", cases[i].name);
        } else {
            cr_assert_eq(out.kind, GL_TYPE_TENSOR, "%s", cases[i].name);
            cr_expect_eq(out.dtype, GL_DT_FLOAT, "%s", cases[i].name);
            cr_assert_eq(out.shape.rank, cases[i].want_rank, "%s", cases[i].name);
            for (int d = 0; d < out.shape.rank; d++) {
                cr_expect_eq(out.shape.dims[d].value, cases[i].want[d], "%s dim %d",
                             cases[i].name, d);
                const char *ws = cases[i].want_sym[d], *gs = out.shape.dims[d].sym;
                cr_expect((ws == NULL) == (gs == NULL) && (!ws || strcmp(ws, gs) == 0),
                          "%s dim %d symbol", cases[i].name, d);
            }
        }
        gl_type_free(&out);
        gl_model_free(m);
    }
}

/* ---- Loop ------------------------------------------------------------------------------------ */

/* Loop(M, cond, y) with body (i, cond_in, y_in) -> (cond_out, y_in + 1, y_in + 1, i), where
 * cond_out = cond_in, or y_out < limit when `limit_cond`. Inputs M and cond are graph inputs
 * (omitted when has_m/has_cond is false). */
static gl_model *loop_model(bool has_m, bool has_cond, bool limit_cond)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *mv = has_m ? tu_input(g, "M", GL_DT_INT64, 0, NULL) : NULL;
    gl_value *cv = has_cond ? tu_input(g, "cond", GL_DT_BOOL, 0, NULL) : NULL;
    gl_value *y = tu_input(g, "y", GL_DT_FLOAT, 1, (int64_t[]){1});
    tu_const_f32(g, "limit", 1, (int64_t[]){1}, (float[]){1});
    gl_node *n = node_n(g, "Loop", 3, (gl_value *[]){mv, cv, y}, 3);
    gl_graph *b = body_new(n, "body");
    gl_value *i = tu_input(b, "i", GL_DT_INT64, 0, NULL);
    gl_value *ci = tu_input(b, "cond_in", GL_DT_BOOL, 0, NULL);
    gl_value *yi = tu_input(b, "y_in", GL_DT_FLOAT, 1, (int64_t[]){1});
    gl_value *one = tu_const_f32(b, "one", 1, (int64_t[]){1}, (float[]){1});
    gl_node *add = tu_node(b, "Add", "next", 2, yi, one);
    gl_value *cond_out = ci;
    if (limit_cond)
        cond_out = tu_node(b, "Less", "more", 2, add->outputs[0],
                           gl_resolve_value(b, "limit"))->outputs[0];
    set_type(add->outputs[0], GL_DT_FLOAT, 1, (int64_t[]){1}, NULL);
    tu_output(b, cond_out);
    tu_output(b, add->outputs[0]);
    tu_output(b, add->outputs[0]);
    tu_output(b, i);
    attach_body(n, "body", b);
    for (size_t o = 0; o < 3; o++)
        tu_output(g, n->outputs[o]);
    return m;
}

Test(loop_op, modes)
{
    static const struct {
        const char *name;
        bool has_m, has_cond, limit;
        int64_t m;
        bool cond;
        int64_t iters;
    } cases[] = {
        {"for (M=4, cond true)", true, true, false, 4, true, 4},
        {"for (M=4, no cond)", true, false, false, 4, true, 4},
        {"M=0", true, true, false, 0, true, 0},
        {"M negative", true, true, false, -3, true, 0},
        {"cond false", true, true, false, 4, false, 0},
        {"while (no M): y + 1 < 1 from -2", false, true, true, 0, true, 3},
        {"do-while, no M, no cond", false, false, true, 0, true, 3},
        {"M=2 stops before the body's cond", true, true, true, 2, true, 2},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_model *m = loop_model(cases[c].has_m, cases[c].has_cond, cases[c].limit);
        gl_tensor *mt = scalar_i64(cases[c].m), *ct = scalar_bool(cases[c].cond);
        gl_tensor *y = tu_tensor_f32(1, (int64_t[]){1}, (float[]){-2});
        const gl_tensor *in[3];
        size_t k = 0;
        if (cases[c].has_m)
            in[k++] = mt;
        if (cases[c].has_cond)
            in[k++] = ct;
        in[k++] = y;
        gl_tensor *out[3] = {0};
        gl_status st = run_model(m, in, k, out, 3);
        cr_assert_eq(st, GL_OK, "%s: %s", cases[c].name, gl_error_message());
        int64_t n = cases[c].iters;
        float final = (float)(-2 + n), scan[8];
        int64_t iters[8];
        for (int64_t i = 0; i < n; i++)
            scan[i] = (float)(-1 + i), iters[i] = i;
        expect_f32(out[0], 1, (int64_t[]){1}, &final, 0, cases[c].name);
        expect_f32(out[1], 2, (int64_t[]){n, 1}, scan, 0, cases[c].name);
        expect_i64(out[2], 1, (int64_t[]){n}, iters, cases[c].name);
        for (size_t i = 0; i < 3; i++)
            gl_tensor_free(out[i]);
        gl_tensor_free(mt), gl_tensor_free(ct), gl_tensor_free(y);
        gl_model_free(m);
    }
}

Test(loop_op, errors)
{
    /* M with two elements */
    gl_model *m = loop_model(true, true, false);
    gl_tensor *mt = tu_tensor_i64(1, (int64_t[]){2}, (int64_t[]){1, 2}), *ct = scalar_bool(true);
    gl_tensor *y = tu_tensor_f32(1, (int64_t[]){1}, (float[]){0}), *out[3] = {0};
    const gl_node *n = m->graph->nodes[m->graph->n_nodes - 1];
    /* (the executor would reject the declared scalar shape first: go to the kernel) */
    cr_expect_neq(tu_run_kernel(m, n, (const gl_tensor *[]){mt, ct, y}, out), GL_OK,
                  "no run_body: refused");
    gl_type t[3] = {0};
    cr_expect_eq(tu_infer(m, n, t), GL_OK, "a valid Loop infers");
    cr_expect_eq(t[0].dtype, GL_DT_FLOAT, "carried keeps its dtype without infer_body");
    for (size_t i = 0; i < 3; i++)
        gl_type_free(&t[i]);
    /* node outputs that do not fit the body */
    gl_node *bad = node_n(m->graph, "Loop", 3, (gl_value *[]){NULL, NULL, m->graph->inputs[2]},
                          1);
    gl_graph *b = body_new(bad, "body");
    tu_input(b, "i", GL_DT_INT64, 0, NULL);
    gl_value *ci = tu_input(b, "c", GL_DT_BOOL, 0, NULL);
    gl_value *yi = tu_input(b, "yy", GL_DT_FLOAT, 1, (int64_t[]){1});
    tu_output(b, ci);
    tu_output(b, yi);
    tu_output(b, yi);
    attach_body(bad, "body", b);
    cr_expect_eq(tu_infer(m, bad, t), GL_ERR_INPUT, "1 output for 1 carried + 1 scan");
    gl_type_free(&t[0]);
    gl_tensor_free(mt), gl_tensor_free(ct), gl_tensor_free(y);
    gl_model_free(m);
}

/* A scan output whose shape changes between iterations is refused. */
Test(loop_op, scan_shape_must_not_change)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *mv = tu_input(g, "M", GL_DT_INT64, 0, NULL);
    gl_value *y = tu_input(g, "y", GL_DT_FLOAT, 1, (int64_t[]){1});
    gl_node *n = node_n(g, "Loop", 3, (gl_value *[]){mv, NULL, y}, 2);
    gl_graph *b = body_new(n, "body");
    tu_input(b, "i", GL_DT_INT64, 0, NULL);
    gl_value *ci = tu_input(b, "c", GL_DT_BOOL, 0, NULL);
    gl_value *yi = tu_input(b, "yi", GL_DT_FLOAT, 1, (int64_t[]){-1});
    gl_node *cat = tu_node(b, "Concat", "grow", 2, yi, yi);
    gl_node_set_attr_int(cat, "axis", 0);
    tu_output(b, ci);
    tu_output(b, cat->outputs[0]);
    tu_output(b, cat->outputs[0]);
    attach_body(n, "body", b);
    tu_output(g, n->outputs[0]);
    tu_output(g, n->outputs[1]);
    gl_tensor *mt = scalar_i64(3), *yt = tu_tensor_f32(1, (int64_t[]){1}, (float[]){1});
    gl_tensor *out[2] = {0};
    gl_status st = run_model(m, (const gl_tensor *[]){mt, yt}, 2, out, 2);
    cr_expect_eq(st, GL_ERR_INPUT, "growing scan output");
    cr_expect(strstr(gl_error_message(), "between iterations") != NULL, "%s",
              gl_error_message());
    gl_tensor_free(out[0]), gl_tensor_free(out[1]);
    gl_tensor_free(mt), gl_tensor_free(yt);
    gl_model_free(m);
}

/* ---- Scan ------------------------------------------------------------------------------------ */

/* Scan (opset 11) summing rows: state s [2], scan input x; body (s, e) -> (s + e, s + e). */
static gl_model *scan_model(int64_t opset, int x_rank, const int64_t *x_dims,
                            const int64_t *state_dims, int state_rank, bool with_lens)
{
    gl_model *m = tu_model(opset);
    gl_graph *g = m->graph;
    gl_value *lens = with_lens ? tu_input(g, "lens", GL_DT_INT64, 1, (int64_t[]){x_dims[0]})
                               : NULL;
    gl_value *s0 = tu_input(g, "init", GL_DT_FLOAT, state_rank, state_dims);
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, x_rank, x_dims);
    gl_node *n = opset < 9 ? node_n(g, "Scan", 3, (gl_value *[]){lens, s0, x}, 2)
                           : node_n(g, "Scan", 2, (gl_value *[]){s0, x}, 2);
    gl_node_set_attr_int(n, "num_scan_inputs", 1);
    gl_graph *b = body_new(n, "body");
    gl_value *s = tu_input(b, "s", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_value *e = tu_input(b, "e", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_node *add = tu_node(b, "Add", "sum", 2, s, e);
    set_type(add->outputs[0], GL_DT_FLOAT, 1, (int64_t[]){2}, NULL);
    tu_output(b, add->outputs[0]);
    tu_output(b, add->outputs[0]);
    attach_body(n, "body", b);
    tu_output(g, n->outputs[0]);
    tu_output(g, n->outputs[1]);
    return m;
}

Test(scan_op, axes_and_directions)
{
    static const struct {
        const char *name;
        int64_t x_dims[2];
        float x[6];
        int64_t in_axis, in_dir, out_axis, out_dir;
        float final[2];
        int64_t out_dims[2];
        float scan[6];
    } cases[] = {
        {"forward", {3, 2}, {1, 2, 3, 4, 5, 6}, 0, 0, 0, 0, {9, 12}, {3, 2},
         {1, 2, 4, 6, 9, 12}},
        {"reverse input", {3, 2}, {1, 2, 3, 4, 5, 6}, 0, 1, 0, 0, {9, 12}, {3, 2},
         {5, 6, 8, 10, 9, 12}},
        {"input axis 1", {2, 3}, {1, 3, 5, 2, 4, 6}, 1, 0, 0, 0, {9, 12}, {3, 2},
         {1, 2, 4, 6, 9, 12}},
        {"input axis -1", {2, 3}, {1, 3, 5, 2, 4, 6}, -1, 0, 0, 0, {9, 12}, {3, 2},
         {1, 2, 4, 6, 9, 12}},
        {"output axis 1", {3, 2}, {1, 2, 3, 4, 5, 6}, 0, 0, 1, 0, {9, 12}, {2, 3},
         {1, 4, 9, 2, 6, 12}},
        {"output axis -1", {3, 2}, {1, 2, 3, 4, 5, 6}, 0, 0, -1, 0, {9, 12}, {2, 3},
         {1, 4, 9, 2, 6, 12}},
        {"reverse output", {3, 2}, {1, 2, 3, 4, 5, 6}, 0, 0, 0, 1, {9, 12}, {3, 2},
         {9, 12, 4, 6, 1, 2}},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_model *m = scan_model(11, 2, cases[c].x_dims, (int64_t[]){2}, 1, false);
        gl_node *n = m->graph->nodes[m->graph->n_nodes - 1];
        gl_node_set_attr_ints(n, "scan_input_axes", &cases[c].in_axis, 1);
        gl_node_set_attr_ints(n, "scan_input_directions", &cases[c].in_dir, 1);
        gl_node_set_attr_ints(n, "scan_output_axes", &cases[c].out_axis, 1);
        gl_node_set_attr_ints(n, "scan_output_directions", &cases[c].out_dir, 1);
        gl_tensor *s0 = tu_tensor_f32(1, (int64_t[]){2}, (float[]){0, 0});
        gl_tensor *x = tu_tensor_f32(2, cases[c].x_dims, cases[c].x), *out[2] = {0};
        gl_status st = run_model(m, (const gl_tensor *[]){s0, x}, 2, out, 2);
        cr_assert_eq(st, GL_OK, "%s: %s", cases[c].name, gl_error_message());
        expect_f32(out[0], 1, (int64_t[]){2}, cases[c].final, 0, cases[c].name);
        expect_f32(out[1], 2, cases[c].out_dims, cases[c].scan, 0, cases[c].name);

        /* shape function: the scan output gets the sequence length at its axis */
        gl_type t[2];
        cr_assert_eq(infer_with_bodies(m, n, t), GL_OK, "%s: %s", cases[c].name,
                     gl_error_message());
        cr_assert_eq(t[1].shape.rank, 2, "%s", cases[c].name);
        for (int d = 0; d < 2; d++)
            cr_expect_eq(t[1].shape.dims[d].value, cases[c].out_dims[d], "%s: inferred dim %d",
                         cases[c].name, d);
        cr_expect_eq(t[0].shape.rank, 1, "%s: state", cases[c].name);
        gl_type_free(&t[0]), gl_type_free(&t[1]);
        gl_tensor_free(out[0]), gl_tensor_free(out[1]);
        gl_tensor_free(s0), gl_tensor_free(x);
        gl_model_free(m);
    }
}

Test(scan_op, errors)
{
    /* two scan inputs of different lengths */
    gl_model *m = tu_model(11);
    gl_graph *g = m->graph;
    gl_value *a = tu_input(g, "a", GL_DT_FLOAT, 2, (int64_t[]){3, 2});
    gl_value *b = tu_input(g, "b", GL_DT_FLOAT, 2, (int64_t[]){4, 2});
    gl_node *n = node_n(g, "Scan", 2, (gl_value *[]){a, b}, 1);
    gl_node_set_attr_int(n, "num_scan_inputs", 2);
    gl_graph *body = body_new(n, "body");
    gl_value *ea = tu_input(body, "ea", GL_DT_FLOAT, 1, (int64_t[]){2});
    tu_input(body, "eb", GL_DT_FLOAT, 1, (int64_t[]){2});
    tu_output(body, ea);
    attach_body(n, "body", body);
    tu_output(g, n->outputs[0]);
    gl_tensor *ta = tu_tensor_f32(2, (int64_t[]){3, 2}, NULL);
    gl_tensor *tb = tu_tensor_f32(2, (int64_t[]){4, 2}, NULL), *out = NULL;
    cr_expect_eq(run_model(m, (const gl_tensor *[]){ta, tb}, 2, &out, 1), GL_ERR_INPUT);
    cr_expect(strstr(gl_error_message(), "steps") != NULL, "%s", gl_error_message());
    /* an axis out of range; a direction other than 0/1; num_scan_inputs too large */
    static const struct {
        const char *attr;
        int64_t v[2];
    } bad[] = {{"scan_input_axes", {2, 0}}, {"scan_input_directions", {2, 0}},
               {"num_scan_inputs", {3, 0}}};
    for (size_t i = 0; i < GL_ARRAY_LEN(bad); i++) {
        if (strcmp(bad[i].attr, "num_scan_inputs") == 0)
            gl_node_set_attr_int(n, bad[i].attr, bad[i].v[0]);
        else
            gl_node_set_attr_ints(n, bad[i].attr, bad[i].v, 2);
        gl_type t = {0};
        cr_expect_eq(tu_infer(m, n, &t), GL_ERR_INPUT, "%s", bad[i].attr);
        gl_type_free(&t);
        gl_node_remove_attr(n, bad[i].attr);
        gl_node_set_attr_int(n, "num_scan_inputs", 2);
    }
    gl_tensor_free(ta), gl_tensor_free(tb);
    gl_model_free(m);
}

/* Scan-8: batch axis 0, sequence axis 1, optional sequence_lens; shorter rows zero-padded. */
Test(scan_op, opset8_batches)
{
    gl_model *m = scan_model(8, 3, (int64_t[]){2, 3, 2}, (int64_t[]){2, 2}, 2, true);
    gl_tensor *lens = tu_tensor_i64(1, (int64_t[]){2}, (int64_t[]){3, 2});
    gl_tensor *s0 = tu_tensor_f32(2, (int64_t[]){2, 2}, (float[]){0, 0, 10, 10});
    gl_tensor *x = tu_tensor_f32(3, (int64_t[]){2, 3, 2},
                                 (float[]){1, 2, 3, 4, 5, 6, 1, 1, 2, 2, 100, 100});
    gl_tensor *out[2] = {0};
    gl_status st = run_model(m, (const gl_tensor *[]){lens, s0, x}, 3, out, 2);
    cr_assert_eq(st, GL_OK, "%s", gl_error_message());
    expect_f32(out[0], 2, (int64_t[]){2, 2}, (float[]){9, 12, 13, 13}, 0, "final states");
    expect_f32(out[1], 3, (int64_t[]){2, 3, 2},
               (float[]){1, 2, 4, 6, 9, 12, 11, 11, 13, 13, 0, 0}, 0, "scan outputs");
    gl_tensor_free(out[0]), gl_tensor_free(out[1]);
    /* a length beyond the sequence */
    gl_tensor *bad = tu_tensor_i64(1, (int64_t[]){2}, (int64_t[]){4, 1});
    st = run_model(m, (const gl_tensor *[]){bad, s0, x}, 3, out, 2);
    cr_expect_eq(st, GL_ERR_INPUT, "sequence_lens 4 > 3");
    gl_tensor_free(bad), gl_tensor_free(lens), gl_tensor_free(s0), gl_tensor_free(x);
    gl_model_free(m);
}

/* ---- RNN, GRU, LSTM ---------------------------------------------------------------------------- */

static double sig(double x) { return 1.0 / (1.0 + exp(-x)); }

typedef struct rnn_case {
    const char *name, *op;
    /* attributes (0/NULL: absent) */
    const char *direction;
    int64_t hidden_size, layout;
    float clip;
    const char *acts[6];
    size_t n_acts;
    float alpha[2], beta[2];
    size_t n_alpha, n_beta;
    int64_t linear_before_reset, input_forget;
    /* inputs: X [seq, batch, in] (or layout 1), W, R, B, sequence_lens, h0, c0, P */
    int64_t x_dims[3], w_dims[3], r_dims[3], b_dims[2], h_dims[3], p_dims[2];
    float x[16], w[32], r[32], b[32], h0[8], c0[8], p[8];
    bool has_b, has_h0, has_c0, has_p;
    int32_t lens[4];
    bool has_lens;
    /* expected (y_rank 0: Y not requested) */
    int64_t y_dims[4], yh_dims[3];
    bool want_y, want_yc;
    float y[32], yh[8], yc[8];
} rnn_case;

static void run_rnn_case(const rnn_case *c)
{
    bool lstm = strcmp(c->op, "LSTM") == 0;
    gl_model *m = tu_model(14);
    gl_graph *g = m->graph;
    gl_tensor *t[8] = {0};
    gl_value *v[8] = {0};
    t[0] = tu_tensor_f32(3, c->x_dims, c->x);
    t[1] = tu_tensor_f32(3, c->w_dims, c->w);
    t[2] = tu_tensor_f32(3, c->r_dims, c->r);
    if (c->has_b)
        t[3] = tu_tensor_f32(2, c->b_dims, c->b);
    if (c->has_lens)
        t[4] = tu_tensor_of(GL_DT_INT32, 1, (int64_t[]){c->x_dims[c->layout ? 0 : 1]}, c->lens);
    if (c->has_h0)
        t[5] = tu_tensor_f32(3, c->h_dims, c->h0);
    if (c->has_c0)
        t[6] = tu_tensor_f32(3, c->h_dims, c->c0);
    if (c->has_p)
        t[7] = tu_tensor_f32(2, c->p_dims, c->p);
    size_t n_in = lstm ? 8 : 6;
    for (size_t i = 0; i < n_in; i++) {
        if (!t[i])
            continue;
        char name[16];
        snprintf(name, sizeof(name), "in%zu", i);
        v[i] = tu_input(g, name, t[i]->dtype, t[i]->rank, t[i]->dims);
    }
    size_t n_out = lstm ? 3 : 2;
    gl_node *n = node_n(g, c->op, n_in, v, n_out);
    if (!c->want_y)
        gl_drop_output(g, n, 0);
    if (lstm && !c->want_yc)
        gl_drop_output(g, n, 2);
    if (c->direction)
        gl_node_set_attr_string(n, "direction", c->direction);
    if (c->hidden_size)
        gl_node_set_attr_int(n, "hidden_size", c->hidden_size);
    if (c->layout)
        gl_node_set_attr_int(n, "layout", c->layout);
    if (c->clip)
        gl_node_set_attr_float(n, "clip", c->clip);
    if (c->linear_before_reset)
        gl_node_set_attr_int(n, "linear_before_reset", 1);
    if (c->input_forget)
        gl_node_set_attr_int(n, "input_forget", 1);
    if (c->n_alpha)
        gl_node_set_attr_floats(n, "activation_alpha", c->alpha, c->n_alpha);
    if (c->n_beta)
        gl_node_set_attr_floats(n, "activation_beta", c->beta, c->n_beta);
    if (c->n_acts) {
        gl_attr a = {0};
        a.name = strdup("activations");
        a.type = GL_ATTR_STRINGS;
        a.n = c->n_acts;
        a.strings = calloc(c->n_acts, sizeof(gl_bytes));
        for (size_t i = 0; i < c->n_acts; i++) {
            a.strings[i].len = strlen(c->acts[i]);
            a.strings[i].data = (uint8_t *)strdup(c->acts[i]);
        }
        gl_node_take_attr(n, &a);
    }
    gl_tensor *out[3] = {0};
    gl_status st = tu_run_kernel(m, n, (const gl_tensor *const *)t, out);
    cr_assert_eq(st, GL_OK, "%s: %s", c->name, gl_error_message());
    int64_t dirs = c->w_dims[0];
    if (c->want_y)
        expect_f32(out[0], 4, c->y_dims, c->y, 1e-6, c->name);
    else
        cr_expect_null(out[0], "%s: Y omitted", c->name);
    expect_f32(out[1], 3, c->yh_dims, c->yh, 1e-6, c->name);
    if (lstm && c->want_yc)
        expect_f32(out[2], 3, c->yh_dims, c->yc, 1e-6, c->name);

    /* The shape function agrees with the kernel's shapes. */
    gl_type types[3];
    cr_assert_eq(tu_infer(m, n, types), GL_OK, "%s: %s", c->name, gl_error_message());
    for (size_t o = 0; o < n_out; o++) {
        if (!out[o])
            continue;
        cr_assert_eq(types[o].shape.rank, out[o]->rank, "%s: inferred rank of output %zu",
                     c->name, o);
        for (int d = 0; d < out[o]->rank; d++)
            cr_expect_eq(types[o].shape.dims[d].value, out[o]->dims[d],
                         "%s: inferred output %zu dim %d", c->name, o, d);
    }
    (void)dirs;
    for (size_t o = 0; o < n_out; o++) {
        gl_type_free(&types[o]);
        gl_tensor_free(out[o]);
    }
    for (size_t i = 0; i < 8; i++)
        gl_tensor_free(t[i]);
    gl_model_free(m);
}

/* Scalar GRU step from the spec's equations, for W=[.5,-1,2], R=[1,.5,-1],
 * B=[.1,.2,.3 | .4,.5,.6] (z, r, h). */
static double gru_ref(double x, double h, bool lbr)
{
    double z = sig(0.5 * x + 1.0 * h + 0.1 + 0.4);
    double r = sig(-1.0 * x + 0.5 * h + 0.2 + 0.5);
    double hh = lbr ? tanh(2.0 * x + r * (-1.0 * h + 0.6) + 0.3)
                    : tanh(2.0 * x + (r * h) * -1.0 + 0.6 + 0.3);
    return (1 - z) * hh + z * h;
}

/* Scalar LSTM step for W=[.5,-.5,1,2], R=[.1,.2,-.3,.4] (i, o, f, c), Wb=[.1,.2,.3,.4],
 * Rb=.05 each, P=[.3,-.2,.1] (i, o, f) when `peep`. */
static void lstm_ref(double x, double *h, double *c, bool peep, bool input_forget)
{
    double pi = peep ? 0.3 : 0, po = peep ? -0.2 : 0, pf = peep ? 0.1 : 0;
    double i = sig(0.5 * x + 0.1 * *h + pi * *c + 0.15);
    double f = input_forget ? 1 - i : sig(1.0 * x - 0.3 * *h + pf * *c + 0.35);
    double g = tanh(2.0 * x + 0.4 * *h + 0.45);
    double cn = f * *c + i * g;
    double o = sig(-0.5 * x + 0.2 * *h + po * cn + 0.25);
    *c = cn;
    *h = o * tanh(cn);
}

Test(rnn, simple_rnn_cases)
{
    /* W = R = 1, B = (0.5, 0), Relu: h_t = h_{t-1} + x_t + 0.5. */
    rnn_case cases[] = {
        {.name = "relu forward", .op = "RNN", .acts = {"Relu"}, .n_acts = 1,
         .x_dims = {3, 1, 1}, .x = {1, 2, 3}, .w_dims = {1, 1, 1}, .w = {1},
         .r_dims = {1, 1, 1}, .r = {1}, .b_dims = {1, 2}, .b = {0.5f, 0}, .has_b = true,
         .want_y = true, .y_dims = {3, 1, 1, 1}, .y = {1.5f, 4, 7.5f}, .yh_dims = {1, 1, 1},
         .yh = {7.5f}},
        {.name = "relu reverse", .op = "RNN", .direction = "reverse", .acts = {"Relu"},
         .n_acts = 1, .x_dims = {3, 1, 1}, .x = {1, 2, 3}, .w_dims = {1, 1, 1}, .w = {1},
         .r_dims = {1, 1, 1}, .r = {1}, .b_dims = {1, 2}, .b = {0.5f, 0}, .has_b = true,
         .want_y = true, .y_dims = {3, 1, 1, 1}, .y = {7.5f, 6, 3.5f}, .yh_dims = {1, 1, 1},
         .yh = {7.5f}},
        {.name = "relu bidirectional", .op = "RNN", .direction = "bidirectional",
         .acts = {"Relu", "Relu"}, .n_acts = 2, .x_dims = {3, 1, 1}, .x = {1, 2, 3},
         .w_dims = {2, 1, 1}, .w = {1, 1}, .r_dims = {2, 1, 1}, .r = {1, 1},
         .b_dims = {2, 2}, .b = {0.5f, 0, 0.5f, 0}, .has_b = true, .want_y = true,
         .y_dims = {3, 2, 1, 1}, .y = {1.5f, 7.5f, 4, 6, 7.5f, 3.5f}, .yh_dims = {2, 1, 1},
         .yh = {7.5f, 7.5f}},
        {.name = "initial_h and hidden_size", .op = "RNN", .hidden_size = 1,
         .acts = {"Relu"}, .n_acts = 1, .x_dims = {2, 1, 1}, .x = {1, 2},
         .w_dims = {1, 1, 1}, .w = {1}, .r_dims = {1, 1, 1}, .r = {1}, .b_dims = {1, 2},
         .b = {0.5f, 0}, .has_b = true, .h_dims = {1, 1, 1}, .h0 = {1}, .has_h0 = true,
         .want_y = true, .y_dims = {2, 1, 1, 1}, .y = {2.5f, 5}, .yh_dims = {1, 1, 1},
         .yh = {5}},
        {.name = "sequence_lens", .op = "RNN", .acts = {"Relu"}, .n_acts = 1,
         .x_dims = {3, 2, 1}, .x = {1, 1, 2, 1, 3, 9}, .w_dims = {1, 1, 1}, .w = {1},
         .r_dims = {1, 1, 1}, .r = {1}, .b_dims = {1, 2}, .b = {0.5f, 0}, .has_b = true,
         .lens = {3, 2}, .has_lens = true, .want_y = true, .y_dims = {3, 1, 2, 1},
         .y = {1.5f, 1.5f, 4, 3, 7.5f, 0}, .yh_dims = {1, 2, 1}, .yh = {7.5f, 3}},
        {.name = "sequence_lens reverse", .op = "RNN", .direction = "reverse",
         .acts = {"Relu"}, .n_acts = 1, .x_dims = {3, 2, 1}, .x = {1, 1, 2, 1, 3, 9},
         .w_dims = {1, 1, 1}, .w = {1}, .r_dims = {1, 1, 1}, .r = {1}, .b_dims = {1, 2},
         .b = {0.5f, 0}, .has_b = true, .lens = {3, 2}, .has_lens = true, .want_y = true,
         .y_dims = {3, 1, 2, 1}, .y = {7.5f, 3, 6, 1.5f, 3.5f, 0}, .yh_dims = {1, 2, 1},
         .yh = {7.5f, 3}},
        {.name = "layout 1", .op = "RNN", .layout = 1, .acts = {"Relu"}, .n_acts = 1,
         .x_dims = {2, 3, 1}, .x = {1, 2, 3, 0, 0, 1}, .w_dims = {1, 1, 1}, .w = {1},
         .r_dims = {1, 1, 1}, .r = {1}, .b_dims = {1, 2}, .b = {0.5f, 0}, .has_b = true,
         .want_y = true, .y_dims = {2, 3, 1, 1}, .y = {1.5f, 4, 7.5f, 0.5f, 1, 2.5f},
         .yh_dims = {2, 1, 1}, .yh = {7.5f, 2.5f}},
        {.name = "clip", .op = "RNN", .clip = 1, .acts = {"Relu"}, .n_acts = 1,
         .x_dims = {3, 1, 1}, .x = {1, 2, 3}, .w_dims = {1, 1, 1}, .w = {1},
         .r_dims = {1, 1, 1}, .r = {1}, .b_dims = {1, 2}, .b = {0.5f, 0}, .has_b = true,
         .want_y = true, .y_dims = {3, 1, 1, 1}, .y = {1, 1, 1}, .yh_dims = {1, 1, 1},
         .yh = {1}},
        /* Affine(2, 1): h = 2 (x + h + .5) + 1 */
        {.name = "affine alpha beta", .op = "RNN", .acts = {"Affine"}, .n_acts = 1,
         .alpha = {2}, .n_alpha = 1, .beta = {1}, .n_beta = 1, .x_dims = {2, 1, 1},
         .x = {1, 2}, .w_dims = {1, 1, 1}, .w = {1}, .r_dims = {1, 1, 1}, .r = {1},
         .b_dims = {1, 2}, .b = {0.5f, 0}, .has_b = true, .want_y = true,
         .y_dims = {2, 1, 1, 1}, .y = {4, 14}, .yh_dims = {1, 1, 1}, .yh = {14}},
        /* W = [[1,2],[3,4]] (rows are hidden units), R swaps: x1=(1,1) -> (3,7);
         * x2=(0,1): W x2 = (2,4), R h1 = (7,3) -> (9,7). */
        {.name = "matrix orientation", .op = "RNN", .acts = {"Relu"}, .n_acts = 1,
         .x_dims = {2, 1, 2}, .x = {1, 1, 0, 1}, .w_dims = {1, 2, 2}, .w = {1, 2, 3, 4},
         .r_dims = {1, 2, 2}, .r = {0, 1, 1, 0}, .want_y = true, .y_dims = {2, 1, 1, 2},
         .y = {3, 7, 9, 7}, .yh_dims = {1, 1, 2}, .yh = {9, 7}},
        /* default tanh, Y omitted */
        {.name = "tanh default", .op = "RNN", .x_dims = {2, 1, 1}, .x = {1, 2},
         .w_dims = {1, 1, 1}, .w = {0.5f}, .r_dims = {1, 1, 1}, .r = {-1},
         .yh_dims = {1, 1, 1}, .yh = {(float)tanh(1.0 - tanh(0.5))}},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        run_rnn_case(&cases[i]);
}

Test(rnn, gru_cases)
{
    double h1 = gru_ref(1, 0.5, false), h2 = gru_ref(-2, h1, false);
    double l1 = gru_ref(1, 0.5, true), l2 = gru_ref(-2, l1, true);
    double r2 = gru_ref(1, gru_ref(-2, 0.5, false), false); /* reverse: x2 first */
    rnn_case base = {
        .op = "GRU", .x_dims = {2, 1, 1}, .x = {1, -2}, .w_dims = {1, 3, 1},
        .w = {0.5f, -1, 2}, .r_dims = {1, 3, 1}, .r = {1, 0.5f, -1}, .b_dims = {1, 6},
        .b = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, .has_b = true, .h_dims = {1, 1, 1},
        .h0 = {0.5f}, .has_h0 = true, .want_y = true, .y_dims = {2, 1, 1, 1},
        .yh_dims = {1, 1, 1},
    };
    rnn_case c = base;
    c.name = "gru default";
    c.y[0] = (float)h1, c.y[1] = (float)h2, c.yh[0] = (float)h2;
    run_rnn_case(&c);
    c = base;
    c.name = "gru linear_before_reset";
    c.linear_before_reset = 1;
    c.y[0] = (float)l1, c.y[1] = (float)l2, c.yh[0] = (float)l2;
    run_rnn_case(&c);
    c = base;
    c.name = "gru reverse";
    c.direction = "reverse";
    c.y[0] = (float)r2, c.y[1] = (float)gru_ref(-2, 0.5, false), c.yh[0] = (float)r2;
    run_rnn_case(&c);
    /* explicit activations equal to the defaults, and a batch of two identical rows */
    c = base;
    c.name = "gru explicit activations, batch 2";
    c.acts[0] = "Sigmoid", c.acts[1] = "Tanh", c.n_acts = 2;
    c.x_dims[1] = 2, c.x[0] = c.x[1] = 1, c.x[2] = c.x[3] = -2;
    c.h_dims[1] = 2, c.h0[1] = 0.5f;
    c.y_dims[2] = 2, c.yh_dims[1] = 2;
    c.y[0] = c.y[1] = (float)h1, c.y[2] = c.y[3] = (float)h2;
    c.yh[0] = c.yh[1] = (float)h2;
    run_rnn_case(&c);
}

Test(rnn, lstm_cases)
{
    rnn_case base = {
        .op = "LSTM", .x_dims = {2, 1, 1}, .x = {1, 2}, .w_dims = {1, 4, 1},
        .w = {0.5f, -0.5f, 1, 2}, .r_dims = {1, 4, 1}, .r = {0.1f, 0.2f, -0.3f, 0.4f},
        .b_dims = {1, 8}, .b = {0.1f, 0.2f, 0.3f, 0.4f, 0.05f, 0.05f, 0.05f, 0.05f},
        .has_b = true, .h_dims = {1, 1, 1}, .h0 = {0.2f}, .c0 = {-0.1f}, .has_h0 = true,
        .has_c0 = true, .p_dims = {1, 3}, .p = {0.3f, -0.2f, 0.1f}, .want_y = true,
        .want_yc = true, .y_dims = {2, 1, 1, 1}, .yh_dims = {1, 1, 1},
    };
    static const struct {
        const char *name;
        bool peep, input_forget, reverse;
    } variants[] = {
        {"lstm", false, false, false},
        {"lstm peepholes", true, false, false},
        {"lstm input_forget", false, true, false},
        {"lstm reverse with peepholes", true, false, true},
    };
    for (size_t v = 0; v < GL_ARRAY_LEN(variants); v++) {
        rnn_case c = base;
        c.name = variants[v].name;
        c.has_p = variants[v].peep;
        c.input_forget = variants[v].input_forget;
        c.direction = variants[v].reverse ? "reverse" : NULL;
        double h = 0.2, cc = -0.1;
        for (int s = 0; s < 2; s++) {
            int t = variants[v].reverse ? 1 - s : s;
            lstm_ref(c.x[t], &h, &cc, variants[v].peep, variants[v].input_forget);
            c.y[t] = (float)h;
        }
        c.yh[0] = (float)h, c.yc[0] = (float)cc;
        run_rnn_case(&c);
    }
    /* bidirectional with the same weights both ways, defaults (no B, h0, c0) */
    rnn_case c = base;
    c.name = "lstm bidirectional";
    c.direction = "bidirectional";
    c.has_b = c.has_h0 = c.has_c0 = false;
    c.w_dims[0] = c.r_dims[0] = 2;
    memcpy(c.w + 4, c.w, 4 * sizeof(float));
    memcpy(c.r + 4, c.r, 4 * sizeof(float));
    c.y_dims[1] = 2, c.yh_dims[0] = 2;
    /* without B the biases are 0: the step is lstm_ref minus its bias terms */
    double hf = 0, cf = 0, hb = 0, cb = 0, yf[2], yb[2];
    for (int t = 0; t < 2; t++) {
        double x = c.x[t];
        double i = sig(0.5 * x + 0.1 * hf), f = sig(x - 0.3 * hf), g = tanh(2 * x + 0.4 * hf);
        cf = f * cf + i * g;
        hf = sig(-0.5 * x + 0.2 * hf) * tanh(cf);
        yf[t] = hf;
    }
    for (int t = 1; t >= 0; t--) {
        double x = c.x[t];
        double i = sig(0.5 * x + 0.1 * hb), f = sig(x - 0.3 * hb), g = tanh(2 * x + 0.4 * hb);
        cb = f * cb + i * g;
        hb = sig(-0.5 * x + 0.2 * hb) * tanh(cb);
        yb[t] = hb;
    }
    float y[4] = {(float)yf[0], (float)yb[0], (float)yf[1], (float)yb[1]};
    memcpy(c.y, y, sizeof(y));
    c.yh[0] = (float)hf, c.yh[1] = (float)hb, c.yc[0] = (float)cf, c.yc[1] = (float)cb;
    run_rnn_case(&c);
}

Test(rnn, errors)
{
    static const struct {
        const char *name, *attr, *sval;
        int64_t ival;
        int64_t w_dims[3];
        int32_t lens;
    } cases[] = {
        {"W with the wrong gate count", NULL, NULL, 0, {1, 2, 1}, 1},
        {"hidden_size disagrees with R", "hidden_size", NULL, 3, {1, 1, 1}, 1},
        {"bad direction", "direction", "sideways", 0, {1, 1, 1}, 1},
        {"bidirectional with one direction of weights", "direction", "bidirectional", 0,
         {1, 1, 1}, 1},
        {"unknown activation", "activations", "Swish", 0, {1, 1, 1}, 1},
        {"layout 2", "layout", NULL, 2, {1, 1, 1}, 1},
        {"sequence_lens beyond seq", NULL, NULL, 0, {1, 1, 1}, 5},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(14);
        gl_graph *g = m->graph;
        gl_tensor *x = tu_tensor_f32(3, (int64_t[]){2, 1, 1}, (float[]){1, 2});
        gl_tensor *w = tu_tensor_f32(3, cases[i].w_dims, (float[]){1, 1});
        gl_tensor *r = tu_tensor_f32(3, (int64_t[]){1, 1, 1}, (float[]){1});
        gl_tensor *l = tu_tensor_of(GL_DT_INT32, 1, (int64_t[]){1}, &cases[i].lens);
        gl_value *vx = tu_input(g, "x", GL_DT_FLOAT, 3, x->dims);
        gl_value *vw = tu_input(g, "w", GL_DT_FLOAT, 3, w->dims);
        gl_value *vr = tu_input(g, "r", GL_DT_FLOAT, 3, r->dims);
        gl_value *vl = tu_input(g, "l", GL_DT_INT32, 1, l->dims);
        gl_node *n = node_n(g, "RNN", 5, (gl_value *[]){vx, vw, vr, NULL, vl}, 2);
        if (cases[i].attr && cases[i].sval && strcmp(cases[i].attr, "activations") == 0) {
            gl_attr a = {0};
            a.name = strdup("activations");
            a.type = GL_ATTR_STRINGS;
            a.n = 1;
            a.strings = calloc(1, sizeof(gl_bytes));
            a.strings[0].len = strlen(cases[i].sval);
            a.strings[0].data = (uint8_t *)strdup(cases[i].sval);
            gl_node_take_attr(n, &a);
        } else if (cases[i].attr && cases[i].sval) {
            gl_node_set_attr_string(n, cases[i].attr, cases[i].sval);
        } else if (cases[i].attr) {
            gl_node_set_attr_int(n, cases[i].attr, cases[i].ival);
        }
        gl_tensor *out[2] = {0};
        gl_status st = tu_run_kernel(m, n, (const gl_tensor *[]){x, w, r, NULL, l}, out);
        cr_expect_eq(st, GL_ERR_INPUT, "%s", cases[i].name);
        cr_expect(strstr(gl_error_message(), "(RNN)") != NULL, "%s: message names the node: %s",
                  cases[i].name, gl_error_message());
        gl_tensor_free(out[0]), gl_tensor_free(out[1]);
        gl_tensor_free(x), gl_tensor_free(w), gl_tensor_free(r), gl_tensor_free(l);
        gl_model_free(m);
    }
}

Test(rnn, shape_function_symbols)
{
    static const struct {
        const char *op, *direction;
        int64_t layout, gates;
        int64_t y[4], yh[3]; /* -1: the symbol given below */
        const char *ysym[4], *yhsym[3];
    } cases[] = {
        {"LSTM", "forward", 0, 4, {-1, 1, -1, 5}, {1, -1, 5}, {"S", 0, "N", 0}, {0, "N", 0}},
        {"GRU", "bidirectional", 0, 3, {-1, 2, -1, 5}, {2, -1, 5}, {"S", 0, "N", 0},
         {0, "N", 0}},
        {"RNN", "reverse", 1, 1, {-1, -1, 1, 5}, {-1, 1, 5}, {"N", "S", 0, 0}, {"N", 0, 0}},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(14);
        gl_graph *g = m->graph;
        int64_t dirs = strcmp(cases[i].direction, "bidirectional") == 0 ? 2 : 1;
        gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 3, (int64_t[]){-1, -1, 3});
        gl_dim_set_sym(&x->type.shape.dims[0], cases[i].layout ? "N" : "S");
        gl_dim_set_sym(&x->type.shape.dims[1], cases[i].layout ? "S" : "N");
        gl_value *w = tu_input(g, "w", GL_DT_FLOAT, 3, (int64_t[]){dirs, cases[i].gates * 5, 3});
        gl_value *r = tu_input(g, "r", GL_DT_FLOAT, 3, (int64_t[]){dirs, cases[i].gates * 5, 5});
        size_t n_out = strcmp(cases[i].op, "LSTM") == 0 ? 3 : 2;
        gl_node *n = node_n(g, cases[i].op, 3, (gl_value *[]){x, w, r}, n_out);
        gl_node_set_attr_string(n, "direction", cases[i].direction);
        gl_node_set_attr_int(n, "layout", cases[i].layout);
        gl_type t[3];
        cr_assert_eq(tu_infer(m, n, t), GL_OK, "%s: %s", cases[i].op, gl_error_message());
        cr_assert_eq(t[0].shape.rank, 4, "%s Y", cases[i].op);
        for (int d = 0; d < 4; d++) {
            cr_expect_eq(t[0].shape.dims[d].value, cases[i].y[d], "%s Y dim %d", cases[i].op, d);
            const char *s = t[0].shape.dims[d].sym, *want = cases[i].ysym[d];
            cr_expect((s == NULL) == (want == NULL) && (!want || strcmp(s, want) == 0),
                      "%s Y sym %d", cases[i].op, d);
        }
        for (size_t o = 1; o < n_out; o++) {
            cr_assert_eq(t[o].shape.rank, 3, "%s output %zu", cases[i].op, o);
            for (int d = 0; d < 3; d++) {
                cr_expect_eq(t[o].shape.dims[d].value, cases[i].yh[d], "%s out %zu dim %d",
                             cases[i].op, o, d);
                const char *s = t[o].shape.dims[d].sym, *want = cases[i].yhsym[d];
                cr_expect((s == NULL) == (want == NULL) && (!want || strcmp(s, want) == 0),
                          "%s out %zu sym %d", cases[i].op, o, d);
            }
        }
        for (size_t o = 0; o < n_out; o++)
            gl_type_free(&t[o]);
        /* unknown X: dtype from W, shapes unknown */
        gl_type_free(&x->type);
        memset(&x->type, 0, sizeof(x->type));
        gl_shape_init_unknown(&x->type.shape);
        cr_assert_eq(tu_infer(m, n, t), GL_OK);
        cr_expect_eq(t[0].kind, GL_TYPE_TENSOR, "%s: dtype still known", cases[i].op);
        cr_expect_eq(t[0].shape.rank, GL_RANK_UNKNOWN, "%s: rank unknown", cases[i].op);
        for (size_t o = 0; o < n_out; o++)
            gl_type_free(&t[o]);
        /* W with the wrong number of directions */
        w->type.shape.dims[0].value = dirs + 1;
        cr_expect_eq(tu_infer(m, n, t), GL_ERR_INPUT, "%s: W directions", cases[i].op);
        for (size_t o = 0; o < n_out; o++)
            gl_type_free(&t[o]);
        gl_model_free(m);
    }
}

/* test_shape_inference.c — the shape-inference pass: merging inferred types into declared
 * ones, symbolic dims, partial evaluation of shape chains, refusals, the rewrite budget,
 * and typing the bundled examples and shared models.
 *
 * Types in the tables are written as text: "float[2,N,?]" (a known dim, a symbol, an
 * unknown dim), "float[*]" (rank unknown), "?[2]" (dtype unknown), "-" (nothing known).
 */
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "ops/ops.h"
#include "graphnote.h"
#include "testutil.h"

#include <criterion/criterion.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define EXPECT_NO_LEAKS() cr_expect_eq(__lsan_do_recoverable_leak_check(), 0, "leaks: see stderr")
#else
#define EXPECT_NO_LEAKS() ((void)0)
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- types from text ------------------------------------------------------------------ */

static gl_dtype dtype_named(const char *s, size_t len)
{
    static const struct { const char *name; gl_dtype dt; } names[] = {
        {"float", GL_DT_FLOAT}, {"int64", GL_DT_INT64}, {"int32", GL_DT_INT32},
        {"bool", GL_DT_BOOL}, {"double", GL_DT_DOUBLE}, {"?", GL_DT_UNDEFINED},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == len && !strncmp(names[i].name, s, len))
            return names[i].dt;
    cr_assert_fail("test table: unknown dtype in '%s'", s);
    return GL_DT_UNDEFINED;
}

static gl_type type_of(const char *text)
{
    gl_type t = {0};
    gl_shape_init_unknown(&t.shape);
    if (!strcmp(text, "-"))
        return t;
    const char *br = strchr(text, '[');
    cr_assert(br, "test table: bad type '%s'", text);
    t.kind = GL_TYPE_TENSOR;
    t.dtype = dtype_named(text, (size_t)(br - text));
    if (!strcmp(br, "[*]"))
        return t;
    int rank = 0;
    for (const char *p = br + 1; *p && *p != ']'; p++)
        rank += *p == ',';
    rank += br[1] != ']';
    gl_shape_set_rank(&t.shape, rank);
    const char *p = br + 1;
    for (int i = 0; i < rank; i++) {
        size_t len = strcspn(p, ",]");
        char dim[64];
        snprintf(dim, sizeof(dim), "%.*s", (int)len, p);
        if (dim[0] >= '0' && dim[0] <= '9')
            t.shape.dims[i].value = atoll(dim);
        else if (strcmp(dim, "?") != 0)
            gl_dim_set_sym(&t.shape.dims[i], dim);
        p += len + 1;
    }
    return t;
}

static void set_type(gl_value *v, const char *text)
{
    gl_type_free(&v->type);
    v->type = type_of(text);
}

static bool type_is(const gl_type *t, const char *text)
{
    gl_type want = type_of(text);
    bool same = t->kind == want.kind && t->dtype == want.dtype &&
                gl_shape_equal(&t->shape, &want.shape);
    gl_type_free(&want);
    return same;
}

static const char *fmt_type(const gl_type *t)
{
    static char bufs[4][256];
    static int k;
    char *b = bufs[k++ % 4];
    gl_type_format(t, b, sizeof(bufs[0]));
    return b;
}

/* ---- running the pass ----------------------------------------------------------------- */

typedef struct run {
    gl_decision_log log;
    gl_pass_ctx ctx;
    gl_status st;
} run;

static void run_pass(run *r, gl_model *m, int64_t budget)
{
    memset(r, 0, sizeof(*r));
    r->ctx = (gl_pass_ctx){.model = m, .pass = gl_pass_find("shape-inference"), .step = 1,
                           .budget = budget, .log = &r->log};
    cr_assert(r->ctx.pass, "shape-inference is in the pass table");
    r->st = gl_pass_run(m->graph, &r->ctx);
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

static void run_free(run *r) { gl_decision_log_free(&r->log); }

/* Skip when the op families that a test relies on have not landed. */
static void need_ops(const char *const *ops, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const gl_op_def *d = gl_op_lookup("", ops[i], 13);
        if (!d || !d->infer)
            cr_skip_test("op %s has no shape function yet", ops[i]);
    }
}
#define NEED_OPS(...)                                                                      \
    do {                                                                                   \
        static const char *const ops_[] = {__VA_ARGS__};                                   \
        need_ops(ops_, sizeof(ops_) / sizeof(ops_[0]));                                    \
    } while (0)

/* ---- merge rules ------------------------------------------------------------------------ */

/* Relu's output is its input's type; the declared output type meets it. */
static const struct merge_case {
    const char *name, *input, *declared, *expected;
    bool conflict, gained;
} merge_cases[] = {
    {"nothing declared", "float[2,3]", "-", "float[2,3]", false, true},
    {"rank unknown declared", "float[2,3]", "float[*]", "float[2,3]", false, true},
    {"dtype unknown declared", "float[?,?]", "?[2,3]", "float[2,3]", false, true},
    {"known dim beats symbol", "float[2,3]", "float[N,3]", "float[2,3]", false, true},
    {"symbol beats unknown", "float[N,3]", "float[?,3]", "float[N,3]", false, true},
    {"declared symbol kept", "float[N,3]", "float[M,3]", "float[M,3]", false, false},
    {"declared known kept", "float[?,3]", "float[2,3]", "float[2,3]", false, false},
    {"declared symbol beats unknown", "float[?,3]", "float[M,3]", "float[M,3]", false, false},
    {"inferred unknown rank", "float[*]", "float[2,3]", "float[2,3]", false, false},
    {"same", "float[2,3]", "float[2,3]", "float[2,3]", false, false},
    {"same with a symbol", "float[N,3]", "float[N,3]", "float[N,3]", false, false},
    {"same, nothing known", "float[?,?]", "float[?,?]", "float[?,?]", false, false},
    {"dims conflict", "float[2,3]", "float[2,4]", "float[2,4]", true, false},
    {"dtype conflict", "float[2,3]", "int64[2,3]", "int64[2,3]", true, false},
    {"rank conflict", "float[2,3]", "float[6]", "float[6]", true, false},
    {"conflict beats gain", "float[2,3]", "?[2,4]", "?[2,4]", true, false},
};

/* gl_node_where writes what snprintf("%s: node '%s' (%s)") writes, cut at every buffer
 * length, with the stand-ins for a missing path, name and op type. */
Test(where, matches_snprintf_at_every_length)
{
    static const struct {
        const char *path, *name, *op;
    } rows[] = {
        {"model.onnx", "conv_3", "Conv"},
        {NULL, "n", "Relu"},
        {"m.onnx", NULL, NULL},
        {"", "", ""},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_model m = {.path = (char *)rows[i].path};
        gl_node n = {.name = (char *)rows[i].name, .op_type = (char *)rows[i].op};
        char want[64], got[64];
        for (size_t len = 0; len <= sizeof(want); len++) {
            memset(want, '#', sizeof(want));
            memset(got, '#', sizeof(got));
            snprintf(want, len, "%s: node '%s' (%s)", rows[i].path ? rows[i].path : "<model>",
                     rows[i].name ? rows[i].name : "", rows[i].op ? rows[i].op : "?");
            gl_node_where(&m, &n, got, len);
            cr_expect_eq(memcmp(want, got, sizeof(want)), 0, "row %zu, length %zu: '%.*s'", i,
                         len, (int)sizeof(got), got);
        }
    }
}

Test(merge, table)
{
    NEED_OPS("Relu");
    for (size_t i = 0; i < sizeof(merge_cases) / sizeof(merge_cases[0]); i++) {
        const struct merge_case *c = &merge_cases[i];
        gl_model *m = tu_model(13);
        gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 0, NULL);
        set_type(x, c->input);
        gl_node *n = tu_node(m->graph, "Relu", "r", 1, x);
        set_type(n->outputs[0], c->declared);
        tu_output(m->graph, n->outputs[0]);
        run r;
        run_pass(&r, m, GL_BUDGET_UNLIMITED);
        cr_assert_eq(r.st, GL_OK, "%s: %s", c->name, gl_error_message());
        cr_expect(type_is(&n->outputs[0]->type, c->expected), "%s: got %s, want %s", c->name,
                  fmt_type(&n->outputs[0]->type), c->expected);
        cr_expect_eq(count_rule(&r, "conflict", GL_REFUSED), c->conflict ? 1u : 0u,
                     "%s: conflict records", c->name);
        cr_expect_eq(r.ctx.applied, c->gained ? 1 : 0, "%s: rewrites", c->name);
        const gl_decision *d = find_rule(&r, "conflict");
        if (c->conflict && d) {
            cr_expect_eq(d->n_nodes, 1u, "%s", c->name);
            cr_expect_str_eq(d->nodes[0], "r", "%s", c->name);
            cr_expect_str_eq(gl_decision_number_text(d, "value"), "r_out0", "%s", c->name);
            cr_expect(gl_decision_number_text(d, "declared") &&
                      gl_decision_number_text(d, "inferred"), "%s: both types", c->name);
        }
        run_free(&r);
        gl_model_free(m);
    }
    EXPECT_NO_LEAKS();
}

Test(merge, unknown_ops_keep_declared_types_one_record_per_op)
{
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (int64_t[]){2, 3});
    gl_node *a = tu_node(m->graph, "Frobnicate", "f1", 1, x);
    gl_node *b = tu_node(m->graph, "Frobnicate", "f2", 1, a->outputs[0]);
    gl_value *in_c = b->outputs[0];
    gl_node *c = gl_add_node(m->graph, "Widget", "com.acme", "w", &in_c, 1, 1);
    set_type(a->outputs[0], "float[2,N]");
    set_type(c->outputs[0], "int64[7]");
    tu_output(m->graph, c->outputs[0]);
    run r;
    run_pass(&r, m, GL_BUDGET_UNLIMITED);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_expect(type_is(&a->outputs[0]->type, "float[2,N]"), "got %s", fmt_type(&a->outputs[0]->type));
    cr_expect(type_is(&b->outputs[0]->type, "-"), "got %s", fmt_type(&b->outputs[0]->type));
    cr_expect(type_is(&c->outputs[0]->type, "int64[7]"));
    cr_expect_eq(count_rule(&r, "no-shape-function", GL_REFUSED), 2u);
    const gl_decision *d = find_rule(&r, "no-shape-function");
    cr_assert(d);
    cr_expect(strstr(d->reason, "Frobnicate") && strstr(d->reason, "2 nodes"), "%s", d->reason);
    cr_expect_eq(gl_decision_number_value(d, "nodes"), 2.0);
    cr_expect_eq(r.ctx.applied, 0);
    run_free(&r);
    gl_model_free(m);
    EXPECT_NO_LEAKS();
}

Test(merge, shape_function_error_is_a_refusal)
{
    NEED_OPS("Add");
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (int64_t[]){2, 3});
    gl_value *y = tu_input(m->graph, "y", GL_DT_FLOAT, 2, (int64_t[]){4, 5});
    gl_node *n = tu_node(m->graph, "Add", "bad_add", 2, x, y);
    set_type(n->outputs[0], "float[*]");
    tu_output(m->graph, n->outputs[0]);
    run r;
    run_pass(&r, m, GL_BUDGET_UNLIMITED);
    cr_assert_eq(r.st, GL_OK, "never fatal: %s", gl_error_message());
    cr_expect(type_is(&n->outputs[0]->type, "float[*]"));
    const gl_decision *d = find_rule(&r, "shape-function-error");
    cr_assert(d, "a refusal for the bad node");
    cr_expect_eq(d->verdict, GL_REFUSED);
    cr_expect(strstr(d->reason, "bad_add"), "%s", d->reason);
    run_free(&r);
    gl_model_free(m);
    EXPECT_NO_LEAKS();
}

/* ---- symbolic dims and partial evaluation ---------------------------------------------- */

Test(symbolic, dims_flow_through_a_chain)
{
    NEED_OPS("Relu", "Transpose", "Reshape");
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 0, NULL);
    set_type(x, "float[N,3]");
    gl_node *relu = tu_node(m->graph, "Relu", "relu", 1, x);
    gl_node *tr = tu_node(m->graph, "Transpose", "tr", 1, relu->outputs[0]);
    gl_node_set_attr_ints(tr, "perm", (int64_t[]){1, 0}, 2);
    gl_value *shape = tu_const_i64(m->graph, "shape", 1, (int64_t[]){2}, (int64_t[]){-1, 3});
    gl_node *rs = tu_node(m->graph, "Reshape", "rs", 2, tr->outputs[0], shape);
    gl_value *shape1 = tu_const_i64(m->graph, "flat", 1, (int64_t[]){1}, (int64_t[]){-1});
    gl_node *flat = tu_node(m->graph, "Reshape", "flat", 2, rs->outputs[0], shape1);
    tu_output(m->graph, flat->outputs[0]);
    run r;
    run_pass(&r, m, GL_BUDGET_UNLIMITED);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_expect(type_is(&relu->outputs[0]->type, "float[N,3]"), "%s", fmt_type(&relu->outputs[0]->type));
    cr_expect(type_is(&tr->outputs[0]->type, "float[3,N]"), "%s", fmt_type(&tr->outputs[0]->type));
    /* [3,N] -> [-1,3]: 3N/3 = N. */
    cr_expect(type_is(&rs->outputs[0]->type, "float[N,3]"), "%s", fmt_type(&rs->outputs[0]->type));
    const gl_type *t = &flat->outputs[0]->type;
    cr_expect(t->shape.rank == 1 && t->shape.dims[0].value < 0, "%s: no number invented",
              fmt_type(t));
    cr_expect_eq(r.ctx.applied, 4, "four nodes gained types");
    run_free(&r);
    gl_model_free(m);
}

/* x[2,3,4] -> Shape -> Gather(0) -> Unsqueeze -> Concat(.., [-1]) -> Reshape(x, ..) */
static gl_node *build_shape_chain(gl_model *m, const char *x_type)
{
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 0, NULL);
    set_type(x, x_type);
    gl_node *shape = tu_node(g, "Shape", "shape", 1, x);
    gl_value *zero = tu_const_i64(g, "zero", 0, NULL, (int64_t[]){0});
    gl_node *gather = tu_node(g, "Gather", "gather", 2, shape->outputs[0], zero);
    gl_value *axes = tu_const_i64(g, "axes", 1, (int64_t[]){1}, (int64_t[]){0});
    gl_node *unsq = tu_node(g, "Unsqueeze", "unsqueeze", 2, gather->outputs[0], axes);
    gl_value *minus1 = tu_const_i64(g, "minus1", 1, (int64_t[]){1}, (int64_t[]){-1});
    gl_node *concat = tu_node(g, "Concat", "concat", 2, unsq->outputs[0], minus1);
    gl_node_set_attr_int(concat, "axis", 0);
    gl_node *reshape = tu_node(g, "Reshape", "reshape", 2, x, concat->outputs[0]);
    gl_node *relu = tu_node(g, "Relu", "relu", 1, reshape->outputs[0]);
    tu_output(g, relu->outputs[0]);
    return reshape;
}

Test(partial_eval, shape_chain_gives_reshape_a_known_shape)
{
    NEED_OPS("Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "Relu");
    gl_model *m = tu_model(13);
    gl_node *reshape = build_shape_chain(m, "float[2,3,4]");
    size_t nodes = m->graph->live_nodes, inits = m->graph->n_inits;
    run r;
    run_pass(&r, m, GL_BUDGET_UNLIMITED);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_expect(type_is(&reshape->outputs[0]->type, "float[2,12]"), "%s",
              fmt_type(&reshape->outputs[0]->type));
    cr_expect(type_is(&m->graph->outputs[0]->type, "float[2,12]"));
    cr_expect_eq(m->graph->live_nodes, nodes, "the graph itself is unchanged");
    cr_expect_eq(m->graph->n_inits, inits);
    run_free(&r);
    gl_model_free(m);
    EXPECT_NO_LEAKS();
}

/* The same chain on [N,3,4]: Shape is [N,3,4] element by element, Gather picks N, and
 * Reshape's -1 is N*3*4 / N = 12. */
Test(partial_eval, symbolic_input_keeps_the_symbol)
{
    NEED_OPS("Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "Relu");
    gl_model *m = tu_model(13);
    gl_node *reshape = build_shape_chain(m, "float[N,3,4]");
    run r;
    run_pass(&r, m, GL_BUDGET_UNLIMITED);
    cr_assert_eq(r.st, GL_OK, "%s", gl_error_message());
    cr_expect(type_is(&reshape->outputs[0]->type, "float[N,12]"), "%s",
              fmt_type(&reshape->outputs[0]->type));
    run_free(&r);
    gl_model_free(m);
}

/* ---- symbolic shape values: x is float[B,S,8] ------------------------------------------ */

static gl_value *op1(gl_graph *g, const char *op, gl_value *a)
{
    return tu_node(g, op, NULL, 1, a)->outputs[0];
}

static gl_value *op2(gl_graph *g, const char *op, gl_value *a, gl_value *b)
{
    return tu_node(g, op, NULL, 2, a, b)->outputs[0];
}

static gl_value *ints(gl_graph *g, size_t n, const int64_t *v)
{
    return tu_const_i64(g, "k", 1, (int64_t[]){(int64_t)n}, v);
}

/* Element i of Shape(x) as a 1-D value. */
static gl_value *dim_of(gl_graph *g, gl_value *x, int64_t i)
{
    gl_value *idx = tu_const_i64(g, "i", 0, NULL, &i);
    return op2(g, "Unsqueeze", op2(g, "Gather", op1(g, "Shape", x), idx), ints(g, 1, (int64_t[]){0}));
}

static gl_value *concat(gl_graph *g, gl_value *a, gl_value *b)
{
    gl_node *n = tu_node(g, "Concat", NULL, 2, a, b);
    gl_node_set_attr_int(n, "axis", 0);
    return n->outputs[0];
}

/* Shape(x)[lo:hi] */
static gl_value *shape_slice(gl_graph *g, gl_value *x, int64_t lo, int64_t hi)
{
    gl_value *in[3] = {op1(g, "Shape", x), ints(g, 1, &lo), ints(g, 1, &hi)};
    return gl_add_node(g, "Slice", "", NULL, in, 3, 1)->outputs[0];
}

static gl_value *sym_reshape_dims(gl_graph *g, gl_value *x)
{
    return op2(g, "Reshape", x, concat(g, concat(g, dim_of(g, x, 0), dim_of(g, x, 1)),
                                       ints(g, 2, (int64_t[]){2, 4})));
}

static gl_value *sym_reshape_slice(gl_graph *g, gl_value *x)
{
    return op2(g, "Reshape", x, concat(g, shape_slice(g, x, 0, 2), ints(g, 2, (int64_t[]){-1, 2})));
}

static gl_value *sym_reshape_copy_dims(gl_graph *g, gl_value *x)
{
    gl_value *zeros = ints(g, 2, (int64_t[]){0, 0});
    return op2(g, "Reshape", x, concat(g, zeros, ints(g, 2, (int64_t[]){4, -1})));
}

static gl_value *sym_reshape_unsolvable(gl_graph *g, gl_value *x)
{
    return op2(g, "Reshape", x, concat(g, dim_of(g, x, 0), ints(g, 1, (int64_t[]){-1})));
}

static gl_value *sym_expand(gl_graph *g, gl_value *x)
{
    gl_value *y = tu_input(g, "y", GL_DT_FLOAT, 3, (int64_t[]){1, 1, 8});
    return op2(g, "Expand", y, op1(g, "Shape", x));
}

static gl_value *sym_constant_of_shape(gl_graph *g, gl_value *x)
{
    return op1(g, "ConstantOfShape", shape_slice(g, x, -3, -1));
}

static gl_value *sym_negative_gather(gl_graph *g, gl_value *x)
{
    return op2(g, "Reshape", x, concat(g, dim_of(g, x, -2), ints(g, 2, (int64_t[]){-1, 8})));
}

static const struct sym_case {
    const char *name;
    gl_value *(*build)(gl_graph *g, gl_value *x);
    const char *expected;
} sym_cases[] = {
    {"Reshape to [B,S,2,4] from gathered dims", sym_reshape_dims, "float[B,S,2,4]"},
    {"Reshape to Shape[0:2] ++ [-1,2]", sym_reshape_slice, "float[B,S,4,2]"},
    {"Reshape [0,0,4,-1] copies symbols", sym_reshape_copy_dims, "float[B,S,4,2]"},
    {"Reshape [B,-1]: S*8 is no plain dim", sym_reshape_unsolvable, "float[B,?]"},
    {"Reshape with Gather(-2)", sym_negative_gather, "float[S,B,8]"},
    {"Expand [1,1,8] to Shape(x)", sym_expand, "float[B,S,8]"},
    {"ConstantOfShape(Shape[-3:-1])", sym_constant_of_shape, "float[B,S]"},
};

/* Each case's graph on an input x of type x_type; its output must infer as expected. */
static void run_sym_cases(const struct sym_case *cases, size_t n, const char *x_type)
{
    for (size_t i = 0; i < n; i++) {
        const struct sym_case *c = &cases[i];
        gl_model *m = tu_model(13);
        gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 0, NULL);
        set_type(x, x_type);
        gl_value *out = c->build(m->graph, x);
        tu_output(m->graph, out);
        run r;
        run_pass(&r, m, GL_BUDGET_UNLIMITED);
        cr_assert_eq(r.st, GL_OK, "%s: %s", c->name, gl_error_message());
        cr_expect(type_is(&out->type, c->expected), "%s: got %s, want %s", c->name,
                  fmt_type(&out->type), c->expected);
        cr_expect_eq(count_rule(&r, "shape-function-error", GL_REFUSED), 0u, "%s", c->name);
        run_free(&r);
        gl_model_free(m);
    }
    EXPECT_NO_LEAKS();
}

Test(symbolic, shape_values_fill_data_dependent_shapes)
{
    NEED_OPS("Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "Slice", "Expand",
             "ConstantOfShape");
    run_sym_cases(sym_cases, sizeof(sym_cases) / sizeof(sym_cases[0]), "float[B,S,8]");
}

/* ---- a symbolic batch through a CNN: x is float[N,3,32,32] (issue 22) --------------------
 * A torch export with dynamic_axes={'x': {0: 'N'}} keeps N by name from the input to the
 * logits; every static dim stays a number, so residual Adds prove same-shape and fuse. */

static gl_value *floats(gl_graph *g, int rank, const int64_t *dims)
{
    int64_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    float *zero = calloc((size_t)count, sizeof(float));
    gl_value *v = tu_const_f32(g, "w", rank, dims, zero);
    free(zero);
    return v;
}

static gl_value *cnn_conv(gl_graph *g, gl_value *x)
{
    gl_value *w = floats(g, 4, (int64_t[]){8, 3, 3, 3});
    gl_node *n = tu_node(g, "Conv", NULL, 2, x, w);
    gl_node_set_attr_ints(n, "strides", (int64_t[]){2, 2}, 2);
    gl_node_set_attr_ints(n, "pads", (int64_t[]){1, 1, 1, 1}, 4);
    return n->outputs[0];
}

static gl_value *cnn_maxpool(gl_graph *g, gl_value *x)
{
    gl_node *n = tu_node(g, "MaxPool", NULL, 1, x);
    gl_node_set_attr_ints(n, "kernel_shape", (int64_t[]){2, 2}, 2);
    gl_node_set_attr_ints(n, "strides", (int64_t[]){2, 2}, 2);
    return n->outputs[0];
}

static gl_value *cnn_global_pool(gl_graph *g, gl_value *x)
{
    return op1(g, "GlobalAveragePool", x);
}

static gl_value *cnn_residual_add_relu(gl_graph *g, gl_value *x)
{
    return op1(g, "Relu", op2(g, "Add", op1(g, "Relu", x), x));
}

static gl_value *cnn_resize_scales(gl_graph *g, gl_value *x)
{
    gl_value *scales = tu_const_f32(g, "scales", 1, (int64_t[]){4}, (float[]){1, 1, 2, 2});
    gl_value *in[3] = {x, NULL, scales};
    return gl_add_node(g, "Resize", "", NULL, in, 3, 1)->outputs[0];
}

/* torch's F.interpolate(x, size=skip.shape[2:]): sizes = Shape(x)[0:2] ++ Shape(skip)[2:4],
 * the skip's dims gathered one by one and cast, as the exporter writes them. */
static gl_value *cnn_resize_to_skip(gl_graph *g, gl_value *x)
{
    gl_value *skip = tu_input(g, "skip", GL_DT_FLOAT, 0, NULL);
    set_type(skip, "float[N,5,64,48]");
    gl_value *hw = concat(g, dim_of(g, skip, 2), dim_of(g, skip, 3));
    gl_node *cast = tu_node(g, "Cast", NULL, 1, hw);
    gl_node_set_attr_int(cast, "to", GL_DT_INT64);
    gl_value *sizes = concat(g, shape_slice(g, x, 0, 2), cast->outputs[0]);
    gl_value *in[4] = {x, NULL, NULL, sizes};
    return gl_add_node(g, "Resize", "", NULL, in, 4, 1)->outputs[0];
}

static gl_value *cnn_concat_skip(gl_graph *g, gl_value *x)
{
    gl_value *up = cnn_resize_to_skip(g, x); /* adds the skip input */
    gl_node *n = tu_node(g, "Concat", NULL, 2, up, g->inputs[1]);
    gl_node_set_attr_int(n, "axis", 1);
    return n->outputs[0];
}

static gl_value *cnn_flatten(gl_graph *g, gl_value *x)
{
    return op1(g, "Flatten", cnn_global_pool(g, x));
}

static gl_value *cnn_reshape_keep_batch(gl_graph *g, gl_value *x)
{
    return op2(g, "Reshape", x, ints(g, 2, (int64_t[]){0, -1}));
}

static gl_value *cnn_gemm(gl_graph *g, gl_value *x)
{
    gl_value *w = floats(g, 2, (int64_t[]){10, 3});
    gl_node *n = tu_node(g, "Gemm", NULL, 2, cnn_flatten(g, x), w);
    gl_node_set_attr_int(n, "transB", 1);
    return n->outputs[0];
}

static gl_value *cnn_matmul(gl_graph *g, gl_value *x)
{
    gl_value *rows = op2(g, "Reshape", x, ints(g, 3, (int64_t[]){0, 3, -1}));
    return op2(g, "MatMul", rows, floats(g, 2, (int64_t[]){1024, 7}));
}

static const struct sym_case cnn_cases[] = {
    {"Conv 3x3 stride 2 pad 1", cnn_conv, "float[N,8,16,16]"},
    {"MaxPool 2x2 stride 2", cnn_maxpool, "float[N,3,16,16]"},
    {"GlobalAveragePool", cnn_global_pool, "float[N,3,1,1]"},
    {"residual Relu(Add(Relu(x), x))", cnn_residual_add_relu, "float[N,3,32,32]"},
    {"Resize by constant scales", cnn_resize_scales, "float[N,3,64,64]"},
    {"Resize to the skip's size (Shape chain)", cnn_resize_to_skip, "float[N,3,64,48]"},
    {"Concat with the skip after the Resize", cnn_concat_skip, "float[N,8,64,48]"},
    {"Flatten(GlobalAveragePool)", cnn_flatten, "float[N,3]"},
    {"Reshape [0,-1]", cnn_reshape_keep_batch, "float[N,3072]"},
    {"Gemm after Flatten", cnn_gemm, "float[N,10]"},
    {"MatMul after Reshape [0,3,-1]", cnn_matmul, "float[N,3,7]"},
};

Test(symbolic, batch_symbol_through_cnn_ops)
{
    NEED_OPS("Conv", "MaxPool", "GlobalAveragePool", "Resize", "Concat", "Flatten", "Reshape",
             "Gemm", "MatMul", "Shape", "Slice", "Gather", "Unsqueeze", "Cast");
    run_sym_cases(cnn_cases, sizeof(cnn_cases) / sizeof(cnn_cases[0]), "float[N,3,32,32]");
}

/* A small U-Net as torch exports it with dynamic_axes={'x': {0: 'N'}} (the nodes, the
 * Shape -> Gather -> Unsqueeze -> Concat chains and the Resize to a skip's size of
 * F.interpolate(size=...)): after the default pipeline the chains that only pick static
 * dims (H, W of e1) are constants, each Resize output is [N,C,16,16], and the last Add
 * fuses into its Conv. 25 nodes in, 15 out (22 before issue 22: the chain, and the Add
 * unfused). */
#define SYM_UNET                                                                           \
    "in x f32s[N=2,3,16,16]; "                                                             \
    "const w1 f32[8,3,3,3] = rand; const b1 f32[8] = rand; "                               \
    "const w2 f32[16,8,3,3] = rand; const b2 f32[16] = rand; "                             \
    "const w3 f32[8,24,3,3] = rand; const b3 f32[8] = rand; "                              \
    "const w4 f32[8,16,1,1] = rand; const b4 f32[8] = rand; "                              \
    "const w5 f32[8,8,1,1] = rand; const b5 f32[8] = rand; "                               \
    "const i0 i64[1] = 0; const i2 i64[1] = 2; const k2 i64[] = 2; const k3 i64[] = 3; "   \
    "c1 = Conv(x, w1, b1) pads=[1,1,1,1]; e1 = Relu(c1); "                                 \
    "p1 = MaxPool(e1) kernel_shape=[2,2] strides=[2,2]; "                                  \
    "c2 = Conv(p1, w2, b2) pads=[1,1,1,1]; e2 = Relu(c2); "                                \
    "s1 = Shape(e1); h = Gather(s1, k2); w = Gather(s1, k3); "                             \
    "hu = Unsqueeze(h, i0); wu = Unsqueeze(w, i0); hw = Concat(hu, wu) axis=0; "           \
    "s2 = Shape(e2); nc2 = Slice(s2, i0, i2); z2 = Concat(nc2, hw) axis=0; "               \
    "u2 = Resize(e2, , , z2); cat = Concat(u2, e1) axis=1; "                               \
    "c3 = Conv(cat, w3, b3) pads=[1,1,1,1]; d = Relu(c3); "                                \
    "q = Conv(e2, w4, b4); sq = Shape(q); ncq = Slice(sq, i0, i2); "                       \
    "zq = Concat(ncq, hw) axis=0; uq = Resize(q, , , zq) mode=\"linear\"; "               \
    "o = Conv(d, w5, b5); y = Add(o, uq); out y"

Test(models, symbolic_batch_unet_node_count)
{
    NEED_OPS("Conv", "MaxPool", "Resize", "Concat", "Shape", "Slice", "Gather", "Unsqueeze");
    gn_graph b;
    gl_pipeline *p = gn_run_passes("symbolic_unet", 13, SYM_UNET, NULL, "all", &b);
    cr_assert(p, "the pipeline ran");
    const gl_model *before = p->steps[0].model, *after = p->steps[p->n_steps - 1].model;
    cr_expect_eq(before->graph->live_nodes, 25u);
    cr_expect_eq(after->graph->live_nodes, 15u, "%zu nodes after the pipeline",
                 after->graph->live_nodes);
    gn_expect_op_counts("symbolic_unet", "Gather=0 Unsqueeze=0 Shape=2 Resize=2 Add=0",
                        after->graph);
    const gl_value *y = after->graph->outputs[0];
    cr_expect(type_is(&y->type, "float[N,8,16,16]"), "%s", fmt_type(&y->type));
    /* Outputs against the typed graph (step 2: after shape-inference), as the pipeline
     * types the graph output. */
    gn_expect_same_outputs("symbolic_unet", &b, p->steps[2].model, after, 1e-5, 1e-6, false);
    if (getenv("GL_SHOW_UNET"))
        gn_print_graph(after->graph, stderr);
    gl_pipeline_free(p);
}

/* ---- protocol --------------------------------------------------------------------------- */

Test(protocol, unsorted_graph_is_refused)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_node *a = tu_node(g, "Relu", "a", 1, x);
    gl_node *b = tu_node(g, "Relu", "b", 1, a->outputs[0]);
    tu_output(g, b->outputs[0]);
    gl_node *order[] = {b, a};
    cr_assert_eq(gl_graph_set_order(g, order, 2), GL_OK);
    run r;
    run_pass(&r, m, GL_BUDGET_UNLIMITED);
    cr_expect_eq(r.st, GL_ERR_INPUT);
    cr_expect(strstr(gl_error_message(), "toposort"), "%s", gl_error_message());
    run_free(&r);
    gl_model_free(m);
}

/* A chain of five Relu: budget K types exactly the first K outputs. */
Test(protocol, budget_counts_nodes)
{
    NEED_OPS("Relu");
    for (int64_t k = 0; k <= 6; k++) {
        gl_model *m = tu_model(13);
        gl_value *v = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (int64_t[]){2, 3});
        gl_node *nodes[5];
        for (int i = 0; i < 5; i++) {
            nodes[i] = tu_node(m->graph, "Relu", NULL, 1, v);
            v = nodes[i]->outputs[0];
        }
        tu_output(m->graph, v);
        run r;
        run_pass(&r, m, k);
        cr_assert_eq(r.st, GL_OK);
        int64_t want = k < 5 ? k : 5;
        cr_expect_eq(r.ctx.applied, want, "K=%lld: %lld rewrites", (long long)k,
                     (long long)r.ctx.applied);
        for (int i = 0; i < 5; i++)
            cr_expect(type_is(&nodes[i]->outputs[0]->type, i < want ? "float[2,3]" : "-"),
                      "K=%lld node %d: %s", (long long)k, i, fmt_type(&nodes[i]->outputs[0]->type));
        cr_expect_eq(count_rule(&r, "summary", GL_NOTE), 1u, "one summary record");
        run_free(&r);
        gl_model_free(m);
    }
}

/* Rewrites, a conflict and ops without shape functions, interleaved. */
static gl_model *prefix_graph(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 2, (int64_t[]){2, 3});
    gl_value *r1 = tu_node(g, "Relu", "r1", 1, x)->outputs[0];
    gl_value *r2 = tu_node(g, "Relu", "r2", 1, r1)->outputs[0];
    set_type(r2, "float[5]");
    gl_value *f1 = tu_node(g, "Frobnicate", "f1", 1, r2)->outputs[0];
    gl_value *r3 = tu_node(g, "Relu", "r3", 1, x)->outputs[0];
    gl_value *f2 = tu_node(g, "Frobnicate", "f2", 1, r3)->outputs[0];
    gl_value *w = tu_node(g, "Widget", "w", 1, r3)->outputs[0];
    gl_value *r4 = tu_node(g, "Relu", "r4", 1, r3)->outputs[0];
    tu_output(g, f1);
    tu_output(g, f2);
    tu_output(g, w);
    tu_output(g, r4);
    return m;
}

/* The records of a run with budget K are the first records of the full run (same ids,
 * rules and nodes): the TUI steps through rewrites by replaying with budgets. */
Test(protocol, budgeted_records_are_a_prefix)
{
    NEED_OPS("Relu");
    gl_model *m = prefix_graph();
    run full;
    run_pass(&full, m, GL_BUDGET_UNLIMITED);
    cr_assert_eq(full.st, GL_OK);
    int64_t total = full.ctx.applied;
    cr_assert_eq(total, 3, "r1, r3, r4 gain types");
    cr_assert_eq(count_rule(&full, "conflict", GL_REFUSED), 1u);
    cr_assert_eq(count_rule(&full, "no-shape-function", GL_REFUSED), 2u);
    const gl_decision *frob = find_rule(&full, "no-shape-function");
    cr_expect_eq(gl_decision_number_value(frob, "nodes"), 2.0);
    for (int64_t k = 0; k <= total + 1; k++) {
        gl_model *mk = prefix_graph();
        run r;
        run_pass(&r, mk, k);
        cr_assert_eq(r.st, GL_OK);
        cr_expect_eq(r.ctx.applied, k < total ? k : total, "K=%lld", (long long)k);
        cr_assert_leq(r.log.n, full.log.n, "K=%lld", (long long)k);
        for (size_t i = 0; i < r.log.n; i++) {
            const gl_decision *a = &r.log.items[i], *b = &full.log.items[i];
            cr_expect_eq(a->id, b->id, "K=%lld record %zu", (long long)k, i);
            cr_expect_str_eq(a->rule, b->rule, "K=%lld record %zu", (long long)k, i);
            cr_expect_eq(a->n_nodes, b->n_nodes, "K=%lld record %zu", (long long)k, i);
            if (a->n_nodes && b->n_nodes)
                cr_expect_str_eq(a->nodes[0], b->nodes[0]);
        }
        run_free(&r);
        gl_model_free(mk);
    }
    run_free(&full);
    gl_model_free(m);
}

Test(protocol, summary_numbers)
{
    NEED_OPS("Relu");
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (int64_t[]){2, 3});
    gl_node *a = tu_node(m->graph, "Relu", "a", 1, x);
    gl_node *b = tu_node(m->graph, "Frobnicate", "b", 1, a->outputs[0]);
    tu_output(m->graph, b->outputs[0]);
    run r;
    run_pass(&r, m, GL_BUDGET_UNLIMITED);
    const gl_decision *d = find_rule(&r, "summary");
    cr_assert(d);
    cr_expect_eq(gl_decision_number_value(d, "values"), 2.0);
    cr_expect_eq(gl_decision_number_value(d, "unknown"), 1.0);
    cr_expect_eq(gl_decision_number_value(d, "fully_known"), 1.0);
    cr_expect(strstr(d->reason, "typed 1 value (1 fully known)"), "%s", d->reason);
    cr_expect_eq(r.ctx.applied, 1, "the summary is not a rewrite");
    run_free(&r);
    gl_model_free(m);
}

Test(protocol, null_ctx_records_nothing)
{
    NEED_OPS("Relu");
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (int64_t[]){2, 3});
    gl_node *a = tu_node(m->graph, "Relu", "a", 1, x);
    gl_node *b = tu_node(m->graph, "Frobnicate", "b", 1, a->outputs[0]);
    tu_output(m->graph, b->outputs[0]);
    size_t changed = 99;
    cr_assert_eq(gl_infer_graph(m, m->graph, NULL, &changed), GL_OK);
    cr_expect_eq(changed, 1u);
    cr_expect(type_is(&a->outputs[0]->type, "float[2,3]"));
    gl_model_free(m);
}

/* ---- models ------------------------------------------------------------------------------ */

static gl_model *load_or_skip(const char *path)
{
    gl_model *m = NULL;
    if (gl_model_load(path, NULL, &m) != GL_OK)
        cr_skip_test("cannot load %s: %s", path, gl_error_message());
    return m;
}

static void sort_and_infer(gl_model *m, run *r)
{
    cr_assert_eq(gl_toposort(m->graph, NULL), GL_OK);
    run_pass(r, m, GL_BUDGET_UNLIMITED);
    cr_assert_eq(r->st, GL_OK, "%s", gl_error_message());
}

/* tiny_if: a model-local function call typed through its body, an If whose branches
 * read outer values, a Loop. */
Test(models, tiny_if_function_and_bodies)
{
    NEED_OPS("Mul", "Add", "Sub", "LeakyRelu", "Constant", "If", "Loop", "Identity");
    gl_model *m = load_or_skip(tu_src("examples/tiny_if/model.onnx"));
    gl_graph *g = m->graph;
    /* Forget the declared types of intermediate values: they must come back. */
    gl_node *n;
    gl_foreach_node(g, i, n)
        for (size_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] && !n->outputs[k]->n_output_refs)
                set_type(n->outputs[k], "-");
    run r;
    sort_and_infer(m, &r);
    static const char *const typed[] = {"fn_out", "step", "branch_out"};
    for (size_t i = 0; i < 3; i++) {
        gl_value *v = gl_find_value(g, typed[i]);
        cr_assert(v, "%s", typed[i]);
        cr_expect(type_is(&v->type, "float[2,3]"), "%s: %s", typed[i], fmt_type(&v->type));
    }
    cr_expect_eq(count_rule(&r, "no-shape-function", GL_REFUSED), 0u);
    cr_expect_eq(count_rule(&r, "conflict", GL_REFUSED), 0u);
    /* The function's body is shared by call sites: it keeps no types of this call. */
    cr_assert(m->n_functions == 1 && m->functions[0].body);
    const gl_graph *body = m->functions[0].body;
    for (size_t i = 0; i < body->n_values; i++)
        if (body->values[i] && !body->values[i]->init)
            cr_expect(body->values[i]->type.kind == GL_TYPE_NONE, "body value %s: %s",
                      body->values[i]->name, fmt_type(&body->values[i]->type));
    run_free(&r);
    gl_model_free(m);
    EXPECT_NO_LEAKS();
}

/* transformer_block's Reshapes read Shape/Gather/Concat chains of a symbolic input. */
Test(models, transformer_block_is_fully_typed)
{
    gl_model *m = load_or_skip(tu_src("examples/transformer_block/model.onnx"));
    NEED_OPS("Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "MatMul", "Softmax",
             "ReduceMean", "Transpose", "Erf");
    gl_node *n;
    gl_foreach_node(m->graph, i, n)
        for (size_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] && !n->outputs[k]->n_output_refs)
                set_type(n->outputs[k], "-");
    run r;
    sort_and_infer(m, &r);
    gl_foreach_node(m->graph, i, n) {
        for (size_t k = 0; k < n->n_outputs; k++) {
            const gl_type *t = n->outputs[k] ? &n->outputs[k]->type : NULL;
            cr_expect(!t || (t->dtype != GL_DT_UNDEFINED && t->shape.rank >= 0),
                      "%s '%s' output %zu: %s", n->op_type, n->name, k, fmt_type(t));
        }
    }
    cr_expect_eq(count_rule(&r, "conflict", GL_REFUSED), 0u);
    run_free(&r);
    gl_model_free(m);
    EXPECT_NO_LEAKS();
}

/* test_attrs.c — the attribute table (src/ops/attrs.def), the load-time check against it and
 * the cross-check with onnx's own schemas. */
#include "ops/arity.h"
#include "ops/attrs.h"
#include "ops/ops.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table ------------------------------------------------------------------------ */

Test(attrs, rows_are_sorted_and_well_formed)
{
    size_t n = gl_op_attrs_count();
    cr_assert_gt(n, 200);
    for (size_t i = 0; i < n; i++) {
        const gl_op_attrs *r = gl_op_attrs_at(i);
        cr_assert(r && r->op && r->since >= 1);
        if (i > 0) {
            const gl_op_attrs *p = gl_op_attrs_at(i - 1);
            int c = strcmp(p->op, r->op);
            cr_expect(c < 0 || (c == 0 && p->since < r->since),
                      "attrs.def: %s-%d must come after %s-%d (rows sorted by op, then "
                      "version, once each)", p->op, p->since, r->op, r->since);
        }
        for (size_t k = 0; k < r->n_attrs; k++) {
            gl_attr_type t = r->attrs[k].type;
            cr_expect(t > GL_ATTR_UNDEFINED && t <= GL_ATTR_TYPE_PROTOS, "%s-%d: '%s'",
                      r->op, r->since, r->attrs[k].name);
            cr_expect(k == 0 || strcmp(r->attrs[k - 1].name, r->attrs[k].name) < 0,
                      "attrs.def: %s-%d lists its attributes in order, once each ('%s', "
                      "'%s')", r->op, r->since, r->attrs[k - 1].name, r->attrs[k].name);
        }
    }
}

Test(attrs, every_registered_op_has_a_row)
{
    for (size_t i = 0; i < gl_op_count(); i++) {
        const gl_op_def *d = gl_op_at(i);
        if (d->domain[0] && strcmp(d->domain, "ai.onnx") != 0)
            continue; /* attrs.def describes ai.onnx; graphlab's ops check their own */
        cr_expect(gl_op_attrs_lookup(d->domain, d->op, d->since) != NULL,
                  "%s-%d is registered but attrs.def has no row for it", d->op, d->since);
    }
}

Test(attrs, lookup_takes_the_version_in_effect)
{
    static const struct {
        const char *domain, *op;
        int opset, since; /* 0: no row */
    } cases[] = {
        {"", "Cast", 1, 1},           {"", "Cast", 5, 1},       {"", "Cast", 6, 6},
        {"", "Cast", 18, 6},          {"", "Cast", 19, 19},     {"", "Cast", 21, 19},
        {"ai.onnx", "Conv", 13, 1},   {"", "Acos", 6, 0},       {"", "Acos", 7, 7},
        {"com.microsoft", "Conv", 13, 0}, {"", "NoSuchOp", 13, 0},
        {"", "ReduceSum", 12, 1},     {"", "ReduceSum", 13, 13}, {"", "ReduceMean", 13, 1},
        {"", "Abs", 1, 1},            {"", "Abs", 0, 0},        {"", "Xor", 7, 7},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        const gl_op_attrs *r = gl_op_attrs_lookup(cases[i].domain, cases[i].op, cases[i].opset);
        cr_expect_eq(r ? r->since : 0, cases[i].since, "%s at opset %d", cases[i].op,
                     cases[i].opset);
        if (r)
            cr_expect_str_eq(r->op, cases[i].op);
    }
    const gl_op_attrs *t = gl_op_attrs_lookup("", "Transpose", 13);
    cr_expect_eq(gl_op_attr_type(t, "perm"), GL_ATTR_INTS);
    cr_expect_eq(gl_op_attr_type(t, "axis"), GL_ATTR_UNDEFINED);
    cr_expect_eq(gl_op_attr_type(NULL, "perm"), GL_ATTR_UNDEFINED);
}

/* For every registered op and every opset from its first registered version on: the
 * attributes our lookup gives, in the form tests/attrs_check.py reads. */
static bool same_op(const gl_op_def *a, const gl_op_def *b)
{
    return strcmp(a->op, b->op) == 0 && strcmp(a->domain, b->domain) == 0;
}

static void dump_lookups(FILE *f)
{
    for (size_t i = 0; i < gl_op_count(); i++) {
        const gl_op_def *d = gl_op_at(i);
        if (d->domain[0] && strcmp(d->domain, "ai.onnx") != 0)
            continue; /* onnx has no schemas for graphlab's ops */
        if (i > 0 && same_op(gl_op_at(i - 1), d))
            continue; /* the op's first entry covers it */
        int first = d->since;
        for (size_t j = i + 1; j < gl_op_count() && same_op(gl_op_at(j), d); j++)
            first = gl_op_at(j)->since < first ? gl_op_at(j)->since : first;
        for (int v = first; v <= 19; v++) {
            const gl_op_attrs *r = gl_op_attrs_lookup(d->domain, d->op, v);
            fprintf(f, "%s %d %d", d->op, v, r ? r->since : 0);
            for (size_t k = 0; r && k < r->n_attrs; k++)
                fprintf(f, " %s:%s", r->attrs[k].name, gl_attr_type_name(r->attrs[k].type));
            fputc('\n', f);
        }
    }
}

Test(attrs, agrees_with_the_onnx_schemas)
{
    tu_onnx_cross_check("tests/attrs_check.py", dump_lookups, "attrs.def");
}

/* ---- the check at load ---------------------------------------------------------------- */

typedef struct attr_case {
    const char *name, *op;
    int opset;
    const char *attr;
    gl_attr_type type;
    const char *error; /* NULL: accepted; else a part of the message */
} attr_case;

/* An attribute of that type with a plausible value. */
static gl_attr make_attr(const char *name, gl_attr_type type)
{
    gl_attr a = {.name = gl_xstrdup(name), .type = type};
    switch (type) {
    case GL_ATTR_INT: a.i = 1; break;
    case GL_ATTR_FLOAT: a.f = 1; break;
    case GL_ATTR_STRING:
        a.s.data = (uint8_t *)gl_xstrdup("NOTSET");
        a.s.len = 6;
        break;
    case GL_ATTR_INTS:
        a.n = 2;
        a.ints = gl_xcalloc(2, sizeof(int64_t));
        a.ints[0] = 1;
        break;
    case GL_ATTR_FLOATS:
        a.n = 2;
        a.floats = gl_xcalloc(2, sizeof(float));
        break;
    case GL_ATTR_STRINGS:
        a.n = 1;
        a.strings = gl_xcalloc(1, sizeof(gl_bytes));
        break;
    default: break;
    }
    return a;
}

static gl_model *one_node_model(const char *op, int opset, const char *attr, gl_attr_type type)
{
    gl_model *m = tu_model(opset);
    free(m->path);
    m->path = gl_xstrdup("m.onnx");
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (const int64_t[]){2, 3});
    /* as many inputs as the op needs, so that the arity check lets the attributes be
     * checked */
    const gl_op_arity *r = gl_op_arity_lookup("", op, opset);
    size_t n_in = 1, max;
    if (r)
        gl_arity_range(r->in, &n_in, &max);
    n_in = n_in < 8 ? n_in : 8;
    gl_value *ins[8] = {x, x, x, x, x, x, x, x};
    gl_node *n = gl_add_node(m->graph, op, "", "n1", ins, n_in, 1);
    gl_attr a = make_attr(attr, type);
    gl_node_take_attr(n, &a);
    tu_output(m->graph, n->outputs[0]);
    return m;
}

static void expect_check(const gl_model *m, const char *what, const char *error)
{
    gl_error_clear();
    tu_expect_error(gl_model_check_schema(m), what, error);
}

Test(attrs, check_names_the_node_attribute_and_types)
{
    static const attr_case cases[] = {
        {"perm floats", "Transpose", 13, "perm", GL_ATTR_FLOATS,
         "m.onnx: node 'n1' (Transpose): attribute 'perm' is floats, expected ints"},
        {"perm string", "Transpose", 13, "perm", GL_ATTR_STRING, "'perm' is string, expected ints"},
        {"perm ints", "Transpose", 13, "perm", GL_ATTR_INTS, NULL},
        {"concat axis ints", "Concat", 13, "axis", GL_ATTR_INTS,
         "(Concat): attribute 'axis' is ints, expected int"},
        {"conv kernel_shape string", "Conv", 11, "kernel_shape", GL_ATTR_STRING,
         "'kernel_shape' is string, expected ints"},
        {"cast to string at 6", "Cast", 6, "to", GL_ATTR_STRING, "'to' is string, expected int"},
        {"cast to string at 1", "Cast", 1, "to", GL_ATTR_STRING, NULL},
        {"lppool p float at 2", "LpPool", 2, "p", GL_ATTR_FLOAT, "'p' is float, expected int"},
        {"lppool p float at 1", "LpPool", 1, "p", GL_ATTR_FLOAT, NULL},
        {"unknown attribute", "Relu", 13, "alpha", GL_ATTR_FLOAT,
         "attribute 'alpha' is not an attribute of Relu-6 (the version for opset 13)"},
        {"removed attribute", "Add", 13, "broadcast", GL_ATTR_INT,
         "'broadcast' is not an attribute of Add-7"},
        {"legacy attribute", "Add", 6, "broadcast", GL_ATTR_INT, NULL},
        {"newer attribute", "Split", 13, "num_outputs", GL_ATTR_INT,
         "'num_outputs' is not an attribute of Split-13"},
        {"graph for a graph", "If", 13, "then_branch", GL_ATTR_INTS,
         "'then_branch' is ints, expected graph"},
        {"op outside the table", "Frobnicate", 13, "perm", GL_ATTR_FLOATS, NULL},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        const attr_case *c = &cases[i];
        gl_model *m = one_node_model(c->op, c->opset, c->attr, c->type);
        expect_check(m, c->name, c->error);
        gl_model_free(m);
    }
}

Test(attrs, subgraph_nodes_are_checked_with_their_place)
{
    gl_model *m = tu_model(13);
    free(m->path);
    m->path = gl_xstrdup("m.onnx");
    gl_value *c = tu_input(m->graph, "c", GL_DT_BOOL, 0, NULL);
    gl_node *iff = tu_node(m->graph, "If", "if1", 1, c);
    gl_graph *then = gl_graph_new(m, m->graph, "then");
    gl_value *k = tu_const_i64(then, "k", 1, (const int64_t[]){1}, (const int64_t[]){1});
    gl_node *t = tu_node(then, "Transpose", "t_in_then", 1, k);
    gl_attr perm = make_attr("perm", GL_ATTR_FLOATS);
    gl_node_take_attr(t, &perm);
    gl_graph_add_output(then, t->outputs[0]);
    gl_attr a = {.name = gl_xstrdup("then_branch"), .type = GL_ATTR_GRAPH, .g = then};
    gl_node_take_attr(iff, &a);
    expect_check(m, "subgraph", "m.onnx: node 't_in_then' (Transpose) in subgraph 'then' of "
                                "node 'if1': attribute 'perm' is floats, expected ints");
    gl_model_free(m);
}

Test(attrs, ref_outside_a_function_is_refused)
{
    gl_model *m = one_node_model("Transpose", 13, "perm", GL_ATTR_INTS);
    m->graph->nodes[0]->attrs[0].ref_attr_name = gl_xstrdup("p");
    expect_check(m, "ref in main graph", "refers to the caller's attribute 'p' outside a "
                                         "function body");
    gl_model_free(m);
}

/* ---- function calls ------------------------------------------------------------------- */

/* A function `name` (domain "local") of one input X whose body is one node: `op` with
 * attribute `attr` taken from the caller's `param` (declared `declared`), or, when op is
 * a function name of "local", a call of it. */
static void add_function(gl_model *m, const char *name, const char *op, const char *op_domain,
                         const char *attr, const char *param, gl_attr_type declared)
{
    m->functions = gl_xrealloc(m->functions, (m->n_functions + 1) * sizeof(gl_function));
    gl_function *f = &m->functions[m->n_functions++];
    *f = (gl_function){.name = gl_xstrdup(name), .domain = gl_xstrdup("local")};
    f->attributes = gl_xcalloc(1, sizeof(char *));
    f->attributes[0] = gl_xstrdup(param);
    f->n_attributes = 1;
    f->opsets = gl_xcalloc(1, sizeof(*f->opsets));
    f->opsets[0] = (gl_opset){gl_xstrdup(""), 13};
    f->n_opsets = 1;
    f->body = gl_graph_new(m, NULL, name);
    gl_value *in = gl_add_value(f->body, "X");
    gl_graph_add_input(f->body, in);
    gl_node *n = gl_add_node(f->body, op, op_domain, "inner", &in, 1, 1);
    gl_attr a = {.name = gl_xstrdup(attr), .type = declared, .ref_attr_name = gl_xstrdup(param)};
    gl_node_take_attr(n, &a);
    gl_graph_add_output(f->body, n->outputs[0]);
}

/* main: y = local.F(x) with attribute `p` of type `given`. */
static gl_model *call_model(gl_attr_type given)
{
    gl_model *m = tu_model(13);
    free(m->path);
    m->path = gl_xstrdup("m.onnx");
    gl_model_set_opset(m, "local", 1);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (const int64_t[]){2, 3});
    gl_node *call = gl_add_node(m->graph, "F", "local", "call", &x, 1, 1);
    gl_attr a = make_attr("p", given);
    gl_node_take_attr(call, &a);
    tu_output(m->graph, call->outputs[0]);
    return m;
}

typedef struct fn_def {
    const char *name, *op, *op_domain, *attr, *param;
    gl_attr_type declared;
} fn_def;

Test(attrs, calls_are_checked_against_what_the_body_reads)
{
    static const struct {
        const char *what;
        gl_attr_type given; /* the type of `p` at the call */
        fn_def fns[2];
        const char *error;
    } cases[] = {
        {"direct", GL_ATTR_FLOATS, {{"F", "Transpose", "", "perm", "p", GL_ATTR_UNDEFINED}},
         "m.onnx: node 'call' (F): attribute 'p' is floats, expected ints: function 'F' "
         "passes it to attribute 'perm' of node 'inner' (Transpose)"},
        {"direct, right type", GL_ATTR_INTS,
         {{"F", "Transpose", "", "perm", "p", GL_ATTR_UNDEFINED}}, NULL},
        /* F passes p on to G as q; G's Transpose reads q as perm */
        {"through a call", GL_ATTR_STRING,
         {{"F", "G", "local", "q", "p", GL_ATTR_UNDEFINED},
          {"G", "Transpose", "", "perm", "q", GL_ATTR_UNDEFINED}},
         "attribute 'p' is string, expected ints: function 'G' passes it to attribute 'perm'"},
        /* F calls itself with p: no op reads it, nothing to check, and no endless walk */
        {"recursive", GL_ATTR_STRING, {{"F", "F", "local", "p", "p", GL_ATTR_UNDEFINED}}, NULL},
        /* the body declares the reference's type: it must be the schema's */
        {"declared type", GL_ATTR_INTS, {{"F", "Transpose", "", "perm", "p", GL_ATTR_FLOATS}},
         "node 'inner' (Transpose) in function 'F': attribute 'perm' (the caller's 'p') is "
         "floats, expected ints"},
        /* an attribute the op does not have, in a body: still unknown */
        {"unknown in body", GL_ATTR_INTS, {{"F", "Relu", "", "alpha", "p", GL_ATTR_UNDEFINED}},
         "'alpha' is not an attribute of Relu-6"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = call_model(cases[i].given);
        for (size_t k = 0; k < 2 && cases[i].fns[k].name; k++) {
            const fn_def *d = &cases[i].fns[k];
            add_function(m, d->name, d->op, d->op_domain, d->attr, d->param, d->declared);
        }
        expect_check(m, cases[i].what, cases[i].error);
        gl_model_free(m);
    }
}

/* test_arity.c — the arity table (src/ops/arity.def), the load-time check against it, the
 * cross-check with onnx's own schemas, and kernels held to what the check guarantees.
 * (Every conformance model passing the check: corpora/conformance_models_load in
 * test_load.c loads them all, and loading runs it.) */
#include "ops/arity.h"
#include "ops/attrs.h"
#include "ops/opkit.h"
#include "ops/ops.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table ------------------------------------------------------------------------ */

static int compare_rows(const gl_op_arity *a, const gl_op_arity *b)
{
    int c = strcmp(a->domain, b->domain);
    if (c == 0)
        c = strcmp(a->op, b->op);
    return c ? c : (a->since > b->since) - (a->since < b->since);
}

static bool well_formed(const char *params)
{
    size_t n = strlen(params);
    for (size_t i = 0; i < n; i++) {
        bool variadic = params[i] == '*' || params[i] == '+';
        if (!strchr("1?*+", params[i]) || (variadic && i + 1 != n))
            return false;
    }
    return true;
}

Test(arity, rows_are_sorted_and_well_formed)
{
    size_t n = gl_op_arity_count();
    cr_assert_gt(n, 100);
    for (size_t i = 0; i < n; i++) {
        const gl_op_arity *r = gl_op_arity_at(i);
        cr_expect(i == 0 || compare_rows(gl_op_arity_at(i - 1), r) < 0,
                  "arity.def: %s-%d must come after %s-%d (rows sorted by domain, op, then "
                  "version, once each)",
                  r->op, r->since, gl_op_arity_at(i - 1)->op, gl_op_arity_at(i - 1)->since);
        cr_expect(well_formed(r->in) && well_formed(r->out),
                  "arity.def: %s-%d: \"%s\", \"%s\" (one of 1 ? * + per parameter, a variadic "
                  "last)", r->op, r->since, r->in, r->out);
    }
}

Test(arity, every_registered_op_has_a_row)
{
    for (size_t i = 0; i < gl_op_count(); i++) {
        const gl_op_def *d = gl_op_at(i);
        cr_expect(gl_op_arity_lookup(d->domain, d->op, d->since) != NULL,
                  "%s%s%s-%d is registered but arity.def has no row for it", d->domain,
                  *d->domain ? "." : "", d->op, d->since);
    }
}

Test(arity, ranges_follow_the_parameters)
{
    static const struct {
        const char *params;
        size_t min, max;
    } cases[] = {
        {"", 0, 0},         {"1", 1, 1},        {"11?", 2, 3},   {"1???", 1, 4},
        {"+", 1, SIZE_MAX}, {"??*", 2, SIZE_MAX}, {"?+", 2, SIZE_MAX}, {"?1", 2, 2},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        size_t min, max;
        gl_arity_range(cases[i].params, &min, &max);
        cr_expect(min == cases[i].min && max == cases[i].max, "\"%s\": [%zu, %zu], expected "
                  "[%zu, %zu]", cases[i].params, min, max, cases[i].min, cases[i].max);
    }
}

Test(arity, lookup_takes_the_version_in_effect)
{
    static const struct {
        const char *domain, *op;
        int opset, since; /* since 0: no row */
    } cases[] = {
        {"", "Clip", 6, 1},       {"", "Clip", 13, 11},     {"ai.onnx", "Clip", 11, 11},
        {"", "Unsqueeze", 12, 1}, {"", "Unsqueeze", 13, 13}, {"", "ReduceMax", 17, 1},
        {"", "ReduceMax", 18, 18}, {"", "Pad", 19, 18},     {"", "Frobnicate", 13, 0},
        {"", "DFT", 16, 0},       {"other", "Clip", 13, 0},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        const gl_op_arity *r = gl_op_arity_lookup(cases[i].domain, cases[i].op, cases[i].opset);
        cr_expect_eq(r ? r->since : 0, cases[i].since, "%s at %d: row %d, expected %d",
                     cases[i].op, cases[i].opset, r ? r->since : 0, cases[i].since);
    }
}

/* For every registered default-domain op and every opset from its first registered
 * version on: the parameters our lookup gives, in the form tests/arity_check.py reads
 * ("-" for none). */
static bool same_op(const gl_op_def *a, const gl_op_def *b)
{
    return strcmp(a->op, b->op) == 0 && strcmp(a->domain, b->domain) == 0;
}

static void dump_lookups(FILE *f)
{
    for (size_t i = 0; i < gl_op_count(); i++) {
        const gl_op_def *d = gl_op_at(i);
        if (*d->domain || (i > 0 && same_op(gl_op_at(i - 1), d)))
            continue; /* the op's first entry covers it (graphlab's have no onnx schema) */
        int first = d->since;
        for (size_t j = i + 1; j < gl_op_count() && same_op(gl_op_at(j), d); j++)
            first = gl_op_at(j)->since < first ? gl_op_at(j)->since : first;
        for (int v = first; v <= 19; v++) {
            const gl_op_arity *r = gl_op_arity_lookup("", d->op, v);
            fprintf(f, "%s %d %d %s %s\n", d->op, v, r ? r->since : 0,
                    r && *r->in ? r->in : "-", r && *r->out ? r->out : "-");
        }
    }
}

Test(arity, agrees_with_the_onnx_schemas)
{
    tu_onnx_cross_check("tests/arity_check.py", dump_lookups, "arity.def");
}

/* ---- the check at load ---------------------------------------------------------------- */

/* A model whose graph is one node `op` at `opset`: `ins` has a character per input, 'x'
 * a graph input, '-' an empty name; `outs` likewise, 'y' a named output. */
static gl_model *node_model(const char *op, int opset, const char *ins, const char *outs)
{
    gl_model *m = tu_model(opset);
    free(m->path);
    m->path = gl_xstrdup("m.onnx");
    gl_value *in[16] = {0};
    char *out_names[16] = {0};
    for (size_t i = 0; ins[i] && i < 16; i++) {
        char name[24];
        snprintf(name, sizeof(name), "x%zu", i);
        if (ins[i] == 'x')
            in[i] = tu_input(m->graph, name, GL_DT_FLOAT, 1, (const int64_t[]){2});
    }
    for (size_t i = 0; outs[i] && i < 16; i++)
        if (outs[i] == 'y') {
            out_names[i] = gl_xcalloc(16, 1);
            snprintf(out_names[i], 16, "y%zu", i);
        }
    gl_node *n = gl_add_node_named(m->graph, op, "", "n1", in, strlen(ins),
                                   (const char *const *)out_names, strlen(outs));
    cr_assert(n, "%s: %s", op, gl_error_message());
    for (size_t i = 0; i < 16; i++)
        free(out_names[i]);
    return m;
}

static void expect_check(const gl_model *m, const char *what, const char *error)
{
    gl_error_clear();
    tu_expect_error(gl_model_check_schema(m), what, error);
}

Test(arity, check_counts_inputs_and_outputs)
{
    static const struct {
        const char *name, *op;
        int opset;
        const char *ins, *outs;
        const char *error; /* NULL: accepted; else a part of the message */
    } cases[] = {
        /* too few */
        {"window without its size", "HannWindow", 17, "", "y",
         "m.onnx: node 'n1' (HannWindow): needs at least 1 input, has 0"},
        {"window with its size", "HannWindow", 17, "x", "y", NULL},
        {"transpose without input", "Transpose", 13, "", "y", "needs at least 1 input, has 0"},
        {"dft without input", "DFT", 17, "", "y", "needs at least 1 input, has 0"},
        {"stft with one input", "STFT", 17, "x", "y", "needs at least 2 inputs, has 1"},
        {"unsqueeze 13 without axes", "Unsqueeze", 13, "x", "y", "needs at least 2 inputs, has 1"},
        {"unsqueeze 11 without axes", "Unsqueeze", 11, "x", "y", NULL},
        {"topk with one output", "TopK", 11, "xx", "y", "needs at least 2 outputs, has 1"},
        {"relu without output", "Relu", 13, "x", "", "needs at least 1 output, has 0"},
        /* too many */
        {"relu of two", "Relu", 13, "xx", "y", "takes at most 1 input, has 2"},
        {"clip 11 of four", "Clip", 11, "xxxx", "y", "takes at most 3 inputs, has 4"},
        {"clip 6 of two", "Clip", 6, "xx", "y", "takes at most 1 input, has 2"},
        {"reducemax 17 with axes", "ReduceMax", 17, "xx", "y", "takes at most 1 input, has 2"},
        {"reducemax 18 with axes", "ReduceMax", 18, "xx", "y", NULL},
        {"relu with two outputs", "Relu", 13, "x", "yy", "takes at most 1 output, has 2"},
        /* optional inputs and outputs left empty */
        {"clip min empty", "Clip", 11, "x-x", "y", NULL},
        {"clip both empty", "Clip", 11, "x--", "y", NULL},
        {"resize sizes only", "Resize", 13, "x--x", "y", NULL},
        {"gemm without C", "Gemm", 13, "xx", "y", NULL},
        {"dropout mask empty", "Dropout", 13, "x", "y-", NULL},
        {"loop M and cond empty", "Loop", 16, "--", "y", NULL},
        {"conv weight empty", "Conv", 11, "x-x", "y", "input 1 is required, but its name is empty"},
        {"gemm A empty", "Gemm", 13, "-xx", "y", "input 0 is required, but its name is empty"},
        {"relu output empty", "Relu", 13, "x", "-", "output 0 is required, but its name is empty"},
        /* variadic */
        {"concat of none", "Concat", 13, "", "y", "needs at least 1 input, has 0"},
        {"concat of one", "Concat", 13, "x", "y", NULL},
        {"concat of nine", "Concat", 13, "xxxxxxxxx", "y", NULL},
        {"concat with an empty one", "Concat", 13, "xx-x", "y",
         "input 2 is required, but its name is empty"},
        {"loop without cond", "Loop", 16, "-", "y", "needs at least 2 inputs, has 1"},
        {"scan 8 of one", "Scan", 8, "-", "y", "needs at least 2 inputs, has 1"},
        {"split with an unread output", "Split", 13, "x", "y-y", NULL},
        {"split without outputs", "Split", 13, "x", "", "needs at least 1 output, has 0"},
        /* what the table does not describe */
        {"op outside the table", "Frobnicate", 13, "", "", NULL},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = node_model(cases[i].op, cases[i].opset, cases[i].ins, cases[i].outs);
        expect_check(m, cases[i].name, cases[i].error);
        gl_model_free(m);
    }
}

Test(arity, subgraph_nodes_are_checked_with_their_place)
{
    gl_model *m = node_model("If", 13, "x", "y");
    gl_graph *then = gl_graph_new(m, m->graph, "then");
    gl_node *w = gl_add_node(then, "HannWindow", "", "w", NULL, 0, 1);
    gl_graph_add_output(then, w->outputs[0]);
    gl_attr a = {.name = gl_xstrdup("then_branch"), .type = GL_ATTR_GRAPH, .g = then};
    gl_node_take_attr(m->graph->nodes[0], &a);
    gl_model_set_opset(m, "", 17);
    expect_check(m, "subgraph", "m.onnx: node 'w' (HannWindow) in subgraph 'then' of node "
                                "'n1': needs at least 1 input, has 0");
    gl_model_free(m);
}

/* A function body is checked at its own opset: Unsqueeze takes its axes as an input from
 * 13 on, so one input is enough in a body that imports opset 11 and not in one of 13. */
Test(arity, function_bodies_are_checked_at_their_opset)
{
    static const struct {
        int body_opset;
        const char *error;
    } cases[] = {
        {11, NULL},
        {13, "m.onnx: node 'u' (Unsqueeze) in function 'F': needs at least 2 inputs, has 1"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = node_model("Relu", 13, "x", "y");
        m->functions = gl_xcalloc(1, sizeof(gl_function));
        m->n_functions = 1;
        gl_function *f = &m->functions[0];
        *f = (gl_function){.name = gl_xstrdup("F"), .domain = gl_xstrdup("local")};
        f->opsets = gl_xcalloc(1, sizeof(*f->opsets));
        f->opsets[0] = (gl_opset){gl_xstrdup(""), cases[i].body_opset};
        f->n_opsets = 1;
        f->body = gl_graph_new(m, NULL, "F");
        gl_value *in = gl_add_value(f->body, "X");
        gl_graph_add_input(f->body, in);
        gl_node *u = gl_add_node(f->body, "Unsqueeze", "", "u", &in, 1, 1);
        gl_graph_add_output(f->body, u->outputs[0]);
        expect_check(m, cases[i].error ? "body at 13" : "body at 11", cases[i].error);
        gl_model_free(m);
    }
}

/* ---- kernels read no more than the check guarantees ----------------------------------- */

typedef struct sweep_shape {
    gl_dtype dt;
    int rank;
    int64_t dims[2];
} sweep_shape;

/* Run d's kernel on a node of n_in inputs, those at optional positions of `params` NULL,
 * the others one tensor of shape `sh` filled with ones. */
static void sweep_one(const gl_op_def *d, const char *params, size_t n_in, size_t n_out,
                      const sweep_shape *sh)
{
    gl_model *m = tu_model(d->since);
    if (*d->domain)
        gl_model_set_opset(m, d->domain, d->since);
    gl_value **vals = gl_xcalloc(n_in + 1, sizeof(*vals));
    const gl_tensor **in = n_in ? gl_xcalloc(n_in, sizeof(*in)) : NULL;
    gl_tensor *t = gl_tensor_new(sh->dt, sh->rank, sh->dims);
    cr_assert(t);
    for (int64_t e = 0; e < t->count; e++)
        gl_elem_set_f64(t, e, 1); /* Range(1, 1, 1) is empty, delta 0 an error */
    size_t len = strlen(params);
    for (size_t k = 0; k < n_in; k++) {
        char name[24];
        snprintf(name, sizeof(name), "x%zu", k);
        if (params[k < len ? k : len - 1] == '?')
            continue;
        vals[k] = tu_input(m->graph, name, sh->dt, sh->rank, sh->dims);
        in[k] = t;
    }
    gl_node *n = gl_add_node(m->graph, d->op, d->domain, "n", vals, n_in, n_out ? n_out : 1);
    cr_assert(n);
    gl_tensor **out = gl_xcalloc(n->n_outputs, sizeof(*out));
    gl_error_clear();
    gl_status st = tu_run_kernel(m, n, in, out);
    cr_expect(st == GL_OK || *gl_error_message(),
              "%s-%d with %zu inputs of %s rank %d: error %d without a message", d->op,
              d->since, n_in, gl_dtype_name(sh->dt), sh->rank, st);
    for (size_t k = 0; k < n->n_outputs; k++)
        gl_tensor_free(out[k]);
    free(out);
    gl_tensor_free(t);
    free(in);
    free(vals);
    gl_model_free(m);
}

/* What a kernel may be given once a node passed the check: every op of the registry with
 * the fewest inputs its row allows, and with every parameter there but the optional ones
 * empty (NULL), each input an exact-size heap array entry (so that ASan sees a read past
 * it), as tensors that are empty, or a scalar or one element of value 1, of float or
 * int64. Most end in an error (wrong type, missing attribute): the point is that none
 * reads past its inputs, through an omitted one or through an empty tensor's missing
 * buffer. Subgraph ops need an executor and are left to the shell tests. */
Test(arity, kernels_stay_within_the_inputs_the_check_guarantees)
{
    static const sweep_shape shapes[] = {
        {GL_DT_FLOAT, 1, {0}}, {GL_DT_INT64, 1, {0}}, {GL_DT_FLOAT, 2, {0, 3}},
        {GL_DT_FLOAT, 0, {0}}, {GL_DT_INT64, 1, {1}}, {GL_DT_FLOAT, 2, {3, 0}},
        {GL_DT_INT64, 0, {0}}, {GL_DT_FLOAT, 1, {1}},
    };
    size_t ran = 0;
    for (size_t i = 0; i < gl_op_count(); i++) {
        const gl_op_def *d = gl_op_at(i);
        const gl_op_arity *r = gl_op_arity_lookup(d->domain, d->op, d->since);
        if (!d->kernel || (d->flags & GL_OP_CONTROL_FLOW) || !r)
            continue;
        size_t n_in, n_out, max;
        gl_arity_range(r->in, &n_in, &max);
        gl_arity_range(r->out, &n_out, &max);
        for (size_t s = 0; s < GL_ARRAY_LEN(shapes); s++) {
            sweep_one(d, r->in, n_in, n_out, &shapes[s]);
            if (strlen(r->in) > n_in)
                sweep_one(d, r->in, strlen(r->in), n_out, &shapes[s]);
            ran++;
        }
    }
    cr_expect_gt(ran, 100);
}

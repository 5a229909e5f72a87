/* test_diff.c — gl_diff_graphs and gl_diff_write_text.
 *
 * Before is a small Conv -> Relu -> Transpose model; after is its clone edited through
 * the edit API. Every expected text below is written from the format of diff.h, by
 * hand: where a hash or an exact float appears, the test computes it from the public
 * API (gl_tensor_hash, gl_graph_fingerprint, printf) rather than from the diff.
 */
#include "diff/diff.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the model --------------------------------------------------------------------- */

static void set_type(gl_value *v, int rank, const int64_t *dims)
{
    v->type.kind = GL_TYPE_TENSOR;
    v->type.dtype = GL_DT_FLOAT;
    gl_shape_set_rank(&v->type.shape, rank);
    for (int i = 0; i < rank; i++)
        v->type.shape.dims[i].value = dims[i];
}

static void name_output(gl_graph *g, gl_node *n, const char *name, const int64_t *dims4)
{
    cr_assert_eq(gl_rename_value(g, n->outputs[0], name), GL_OK);
    set_type(n->outputs[0], 4, dims4);
}

/* A loader would do this: each node stands for itself. */
static void stand_for_themselves(gl_graph *g)
{
    gl_node *n;
    gl_foreach_node(g, i, n) gl_node_set_provenance(n, &n->id, 1, -1);
}

static void take_attr(gl_node *n, gl_attr a)
{
    gl_node_take_attr(n, &a);
}

static gl_tensor *f32_tensor(int rank, const int64_t *dims, const float *data)
{
    gl_tensor *t = gl_tensor_new(GL_DT_FLOAT, rank, dims);
    if (data)
        memcpy(gl_tensor_make_writable(t), data, (size_t)t->count * sizeof(float));
    return t;
}

/* Conv's attributes, one of each kind the diff renders. */
static void give_conv_attrs(gl_model *m, gl_node *conv)
{
    gl_node_set_attr_int(conv, "group", 1);
    gl_node_set_attr_ints(conv, "pads", (int64_t[]){0, 0, 0, 0}, 4);
    gl_node_set_attr_float(conv, "alpha", 0.5f);
    gl_node_set_attr_string(conv, "auto_pad", "NOTSET");
    gl_node_set_attr_floats(conv, "scales", (float[]){1, 2}, 2);
    take_attr(conv, (gl_attr){.name = gl_xstrdup("t"), .type = GL_ATTR_TENSOR,
                              .t = f32_tensor(1, (int64_t[]){3}, (float[]){1, 2, 3})});
    take_attr(conv, (gl_attr){.name = gl_xstrdup("big"), .type = GL_ATTR_TENSOR,
                              .t = f32_tensor(4, (int64_t[]){64, 3, 3, 3}, NULL)});
    gl_graph *body = gl_graph_new(m, conv->graph, "then");
    gl_value *s = tu_input(body, "s", GL_DT_FLOAT, 1, (int64_t[]){1});
    gl_node *neg = tu_node(body, "Neg", "neg", 1, s);
    tu_output(body, neg->outputs[0]);
    take_attr(conv, (gl_attr){.name = gl_xstrdup("body"), .type = GL_ATTR_GRAPH, .g = body});
}

/* x -> Conv 'conv_name'(x, w) -> 'c' -> Relu 'relu' -> 'r' -> Transpose 'tr' -> 'y' (output),
 * plus an unused initializer 'unused'. `first`: an Identity of that name reading x,
 * built before everything else (so it shifts every id). */
static gl_model *build(const char *conv_name, const char *first)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){1, 3, 8, 8});
    if (first)
        tu_node(g, "Identity", first, 1, x);
    gl_value *w = tu_const_f32(g, "w", 4, (int64_t[]){2, 3, 1, 1}, (float[]){1, 2, 3, 4, 5, 6});
    tu_const_f32(g, "unused", 1, (int64_t[]){2}, (float[]){0, 0});
    gl_node *conv = tu_node(g, "Conv", conv_name, 2, x, w);
    name_output(g, conv, "c", (int64_t[]){1, 2, 8, 8});
    give_conv_attrs(m, conv);
    gl_node *relu = tu_node(g, "Relu", "relu", 1, conv->outputs[0]);
    name_output(g, relu, "r", (int64_t[]){1, 2, 8, 8});
    gl_node *tr = tu_node(g, "Transpose", "tr", 1, relu->outputs[0]);
    gl_node_set_attr_ints(tr, "perm", (int64_t[]){0, 2, 3, 1}, 4);
    name_output(g, tr, "y", (int64_t[]){1, 8, 8, 2});
    tu_output(g, tr->outputs[0]);
    stand_for_themselves(g);
    cr_assert_eq(gl_graph_verify(g, false), GL_OK, "%s", gl_error_message());
    return m;
}

static gl_model *base(void) { return build("conv", NULL); }

static gl_node *node(gl_model *m, const char *name)
{
    gl_node *n = gl_find_node(m->graph, name);
    cr_assert_not_null(n, "no node '%s'", name);
    return n;
}

static gl_value *val(gl_model *m, const char *name)
{
    gl_value *v = gl_find_value(m->graph, name);
    cr_assert_not_null(v, "no value '%s'", name);
    return v;
}

static char *diff_text(const gl_diff *d)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    gl_diff_write_text(d, f);
    fclose(f);
    return text;
}

/* The workbench's diff view formats the text entry by entry, trusting each entry's line
 * count to place its rows: the entries put together are the text, and each has the lines
 * it says. */
static void expect_entries_make_the_text(const gl_diff *d, const char *text, const char *what)
{
    gl_strbuf all = {0}, one = {0};
    size_t n = gl_diff_text_entries(d);
    cr_expect_eq(n, gl_diff_empty(d) ? 1 : 1 + d->n_nodes + d->n_values, "%s", what);
    for (size_t e = 0; e < n; e++) {
        one.len = 0;
        gl_diff_text_entry(d, e, &one);
        size_t lines = 0;
        for (size_t i = 0; i < one.len; i++)
            lines += one.s[i] == '\n';
        cr_expect_eq(lines, gl_diff_text_entry_lines(d, e), "%s: entry %zu has %zu lines, "
                     "says %zu", what, e, lines, gl_diff_text_entry_lines(d, e));
        cr_expect(one.len > 0 && one.s[one.len - 1] == '\n', "%s: entry %zu", what, e);
        gl_sb_putn(&all, one.s, one.len);
    }
    gl_sb_putc(&all, '\0');
    cr_expect_str_eq(all.s, text, "%s: the entries differ from the text", what);
    free(all.s);
    free(one.s);
}

/* Diff, compare the text, free. */
static void expect_text(const gl_model *before, const gl_model *after, gl_diff_mode mode,
                        const char *expected, const char *what)
{
    gl_diff *d = gl_diff_graphs(before->graph, after->graph, mode);
    cr_assert_not_null(d);
    char *text = diff_text(d);
    expect_entries_make_the_text(d, text, what);
    cr_expect_str_eq(text, expected, "%s:\n--- got ---\n%s--- expected ---\n%s", what, text,
                     expected);
    cr_expect_eq(gl_diff_empty(d), strcmp(expected, "no changes\n") == 0, "%s", what);
    free(text);
    gl_diff_free(d);
}

/* ---- edits (each one thing, through the edit API) ------------------------------------ */

static void edit_none(gl_model *m) { (void)m; }

static void rename_value(gl_model *m)
{
    cr_assert_eq(gl_rename_value(m->graph, val(m, "r"), "r2"), GL_OK);
}

static void rename_value_oddly(gl_model *m)
{
    cr_assert_eq(gl_rename_value(m->graph, val(m, "r"), "a'b\nc"), GL_OK);
}

static void rewire_relu(gl_model *m)
{
    cr_assert_eq(gl_set_input(m->graph, node(m, "relu"), 0, val(m, "x")), GL_OK);
}

static void set_group(gl_model *m) { gl_node_set_attr_int(node(m, "conv"), "group", 2); }

static void set_group_with_decision(gl_model *m)
{
    gl_node *conv = node(m, "conv");
    gl_node_set_attr_int(conv, "group", 2);
    gl_node_set_provenance(conv, conv->prov.origins, conv->prov.n_origins, 2);
}

static void set_pads(gl_model *m)
{
    gl_node_set_attr_ints(node(m, "conv"), "pads", (int64_t[]){1, 1, 1, 1}, 4);
}

static void set_alpha(gl_model *m) { gl_node_set_attr_float(node(m, "conv"), "alpha", 0.25f); }

static void set_scales(gl_model *m)
{
    gl_node_set_attr_floats(node(m, "conv"), "scales", (float[]){1, 3}, 2);
}

static void set_auto_pad(gl_model *m)
{
    gl_node_set_attr_string(node(m, "conv"), "auto_pad", "SAME_UPPER");
}

static void set_tensor_attr(gl_model *m)
{
    gl_attr *a = gl_node_attr(node(m, "conv"), "t");
    float *p = gl_tensor_make_writable(a->t); /* shared with `before` until now */
    p[2] = 4;
}

static void grow_subgraph(gl_model *m)
{
    gl_graph *body = gl_node_attr(node(m, "conv"), "body")->g;
    gl_node *neg = gl_find_node(body, "neg");
    gl_node *abs_node = tu_node(body, "Abs", "abs", 1, neg->outputs[0]);
    gl_graph_set_output(body, 0, abs_node->outputs[0]);
}

static void add_dilations(gl_model *m)
{
    gl_node_set_attr_ints(node(m, "conv"), "dilations", (int64_t[]){1, 1}, 2);
}

static void remove_alpha(gl_model *m) { cr_assert(gl_node_remove_attr(node(m, "conv"), "alpha")); }

static void group_becomes_float(gl_model *m)
{
    gl_node_remove_attr(node(m, "conv"), "group");
    gl_node_set_attr_float(node(m, "conv"), "group", 1.0f);
}

static void change_op(gl_model *m)
{
    gl_node *conv = node(m, "conv"); /* no API changes an op in place: a test may */
    free(conv->op_type);
    free(conv->domain);
    conv->op_type = gl_xstrdup("ConvInteger");
    conv->domain = gl_xstrdup("com.x");
}

static void reshape_c(gl_model *m) { set_type(val(m, "c"), 4, (int64_t[]){1, 2, 9, 9}); }

static void add_identity(gl_model *m)
{
    gl_node *n = tu_node(m->graph, "Identity", "extra", 1, val(m, "y"));
    cr_assert_not_null(n);
}

static void remove_transpose(gl_model *m)
{
    gl_graph_set_output(m->graph, 0, val(m, "r"));
    cr_assert_eq(gl_remove_node(m->graph, node(m, "tr")), GL_OK, "%s", gl_error_message());
}

/* Conv + Relu -> FusedConv, as a fusion pass would: decision 7. */
static void fuse_conv_relu(gl_model *m)
{
    gl_graph *g = m->graph;
    gl_node *conv = node(m, "conv"), *relu = node(m, "relu");
    gl_value *ins[] = {val(m, "x"), val(m, "w")};
    gl_node *fused = gl_add_node(g, "FusedConv", "", "conv_relu", ins, 2, 1);
    gl_node_inherit_provenance(fused, (gl_node *[]){conv, relu}, 2, 7);
    cr_assert_eq(gl_move_output(g, relu, 0, fused, 0), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_remove_node(g, relu), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_remove_node(g, conv), GL_OK, "%s", gl_error_message());
}

/* Transpose -> three Transposes with decisions -1, 3, 5: the change takes the first
 * that is known (3). */
static void split_transpose(gl_model *m)
{
    gl_graph *g = m->graph;
    gl_node *tr = node(m, "tr");
    gl_node *a = tu_node(g, "Transpose", "tr_a", 1, val(m, "r"));
    gl_node *b = tu_node(g, "Transpose", "tr_b", 1, a->outputs[0]);
    gl_node *c = tu_node(g, "Transpose", "tr_c", 1, b->outputs[0]);
    gl_node_inherit_provenance(a, &tr, 1, -1);
    gl_node_inherit_provenance(b, &tr, 1, 3);
    gl_node_inherit_provenance(c, &tr, 1, 5);
    cr_assert_eq(gl_move_output(g, tr, 0, c, 0), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_remove_node(g, tr), GL_OK, "%s", gl_error_message());
}

static void add_bias(gl_model *m)
{
    tu_const_f32(m->graph, "bias", 1, (int64_t[]){8}, (float[8]){0});
}

static void remove_unused(gl_model *m)
{
    cr_assert_eq(gl_remove_value(m->graph, val(m, "unused")), GL_OK, "%s", gl_error_message());
}

static void change_w_bytes(gl_model *m)
{
    float *p = gl_tensor_make_writable(val(m, "w")->init);
    p[5] = 7;
}

static void change_unused_dims(gl_model *m)
{
    gl_value *v = val(m, "unused"); /* no API swaps an initializer's tensor: a test may */
    gl_tensor_free(v->init);
    v->init = f32_tensor(1, (int64_t[]){4}, (float[]){0, 0, 0, 0});
}

static void symbolic_batch(gl_value *v) { gl_dim_set_sym(&v->type.shape.dims[0], "N"); }

static void output_type(gl_model *m) { symbolic_batch(val(m, "y")); }
static void input_type(gl_model *m) { symbolic_batch(val(m, "x")); }

static void add_graph_input(gl_model *m)
{
    tu_input(m->graph, "z", GL_DT_FLOAT, 1, (int64_t[]){1});
}

/* ---- the table --------------------------------------------------------------------- */

typedef struct diff_case {
    const char *name;
    void (*edit)(gl_model *after);
    const char *expected;
} diff_case;

#define ONE_MODIFIED "0 added, 0 removed, 0 replaced, 1 modified, 0 value changes\n"
#define ONE_VALUE "0 added, 0 removed, 0 replaced, 0 modified, 1 value changes\n"

static diff_case cases[] = {
    {"identical", edit_none, "no changes\n"},
    {"rename a value", rename_value,
     "0 added, 0 removed, 0 replaced, 2 modified, 0 value changes\n"
     "~ Relu 'relu'\n"
     "    output 0: 'r' -> 'r2'\n"
     "~ Transpose 'tr'\n"
     "    input 0: 'r' -> 'r2'\n"},
    {"names are escaped", rename_value_oddly,
     "0 added, 0 removed, 0 replaced, 2 modified, 0 value changes\n"
     "~ Relu 'relu'\n"
     "    output 0: 'r' -> 'a\\'b\\nc'\n"
     "~ Transpose 'tr'\n"
     "    input 0: 'r' -> 'a\\'b\\nc'\n"},
    {"rewire an input", rewire_relu, ONE_MODIFIED "~ Relu 'relu'\n    input 0: 'c' -> 'x'\n"},
    {"int attribute", set_group, ONE_MODIFIED "~ Conv 'conv'\n    attr group: 1 -> 2\n"},
    {"modified with a decision", set_group_with_decision,
     ONE_MODIFIED "~ Conv 'conv'   [decision #2]\n    attr group: 1 -> 2\n"},
    {"ints attribute", set_pads,
     ONE_MODIFIED "~ Conv 'conv'\n    attr pads: [0,0,0,0] -> [1,1,1,1]\n"},
    {"float attribute", set_alpha, ONE_MODIFIED "~ Conv 'conv'\n    attr alpha: 0.5 -> 0.25\n"},
    {"floats attribute", set_scales,
     ONE_MODIFIED "~ Conv 'conv'\n    attr scales: [1,2] -> [1,3]\n"},
    {"string attribute", set_auto_pad,
     ONE_MODIFIED "~ Conv 'conv'\n    attr auto_pad: \"NOTSET\" -> \"SAME_UPPER\"\n"},
    {"small tensor attribute", set_tensor_attr,
     ONE_MODIFIED "~ Conv 'conv'\n    attr t: float[3] {1, 2, 3} -> float[3] {1, 2, 4}\n"},
    {"subgraph attribute", grow_subgraph,
     ONE_MODIFIED "~ Conv 'conv'\n"
                  "    attr body: graph 'then' (1 nodes) -> graph 'then' (2 nodes)\n"},
    {"attribute added", add_dilations, ONE_MODIFIED "~ Conv 'conv'\n    attr + dilations: [1,1]\n"},
    {"attribute removed", remove_alpha, ONE_MODIFIED "~ Conv 'conv'\n    attr - alpha: 0.5\n"},
    {"attribute kind changed", group_becomes_float,
     ONE_MODIFIED "~ Conv 'conv'\n    attr group: 1 (int) -> 1 (float)\n"},
    {"op changed", change_op,
     ONE_MODIFIED "~ com.x:ConvInteger 'conv'\n    op: Conv -> com.x:ConvInteger\n"},
    {"output shape", reshape_c,
     ONE_MODIFIED "~ Conv 'conv'\n    type 'c': float[1,2,8,8] -> float[1,2,9,9]\n"},
    {"node added", add_identity,
     "1 added, 0 removed, 0 replaced, 0 modified, 0 value changes\n+ Identity 'extra'\n"},
    {"node removed", remove_transpose,
     "0 added, 1 removed, 0 replaced, 0 modified, 1 value changes\n"
     "- Transpose 'tr'\n"
     "= graph outputs: y -> r\n"},
    {"N -> 1 replacement", fuse_conv_relu,
     "0 added, 0 removed, 1 replaced, 0 modified, 0 value changes\n"
     "> Conv 'conv' + Relu 'relu'  =>  FusedConv 'conv_relu'   [decision #7]\n"},
    {"1 -> N replacement", split_transpose,
     "0 added, 0 removed, 1 replaced, 0 modified, 0 value changes\n"
     "> Transpose 'tr'  =>  Transpose 'tr_a' + Transpose 'tr_b' + Transpose 'tr_c'   "
     "[decision #3]\n"},
    {"initializer added", add_bias,
     ONE_VALUE "+ init 'bias': float[8] 32 B = [0, 0, 0, 0, 0, 0, 0, 0]\n"},
    {"initializer removed", remove_unused, ONE_VALUE "- init 'unused': float[2] 8 B = [0, 0]\n"},
    {"initializer bytes", change_w_bytes,
     ONE_VALUE "= init 'w': float[2,3,1,1] {1, 2, 3, 4, 5, 6} -> "
               "float[2,3,1,1] {1, 2, 3, 4, 5, 7}\n"},
    {"initializer dims", change_unused_dims,
     ONE_VALUE "= init 'unused': float[2] 8 B -> float[4] 16 B\n"},
    /* The producer is matched: the type change is its detail, reported once. */
    {"graph output type", output_type,
     ONE_MODIFIED "~ Transpose 'tr'\n    type 'y': float[1,8,8,2] -> float[N,8,8,2]\n"},
    {"graph input type", input_type, ONE_VALUE "= value 'x': float[1,3,8,8] -> float[N,3,8,8]\n"},
    {"graph input added", add_graph_input, ONE_VALUE "= graph inputs: x -> x, z\n"},
};

/* Criterion copies parameters into a child that may not share our addresses: pass the
 * index into the table, not pointers. */
ParameterizedTestParameters(diff, edits)
{
    static size_t index[GL_ARRAY_LEN(cases)];
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        index[i] = i;
    return cr_make_param_array(size_t, index, GL_ARRAY_LEN(index));
}

ParameterizedTest(size_t *i, diff, edits)
{
    const diff_case *c = &cases[*i];
    gl_model *before = base();
    gl_model *after = gl_model_clone(before);
    c->edit(after);
    cr_assert_eq(gl_graph_verify(after->graph, true), GL_OK, "%s: %s", c->name,
                 gl_error_message());
    expect_text(before, after, GL_DIFF_MATCH_IDS, c->expected, c->name);
    gl_model_free(after);
    gl_model_free(before);
}

/* ---- structure of the changes ---------------------------------------------------------- */

Test(diff, replaced_group_structure)
{
    gl_model *before = base();
    gl_model *after = gl_model_clone(before);
    fuse_conv_relu(after);
    gl_node *conv = node(before, "conv"), *relu = node(before, "relu");
    gl_node *fused = node(after, "conv_relu"), *tr = node(after, "tr");

    gl_diff *d = gl_diff_graphs(before->graph, after->graph, GL_DIFF_MATCH_IDS);
    cr_assert_eq(d->n_nodes, 1);
    const gl_node_change *c = &d->nodes[0];
    cr_expect_eq(c->kind, GL_CHANGE_REPLACED);
    cr_assert_eq(c->n_old, 2);
    cr_assert_eq(c->n_new, 1);
    cr_expect_eq(c->old_ids[0], conv->id);
    cr_expect_eq(c->old_ids[1], relu->id);
    cr_expect_str_eq(c->old_names[0], "conv");
    cr_expect_str_eq(c->old_names[1], "relu");
    cr_expect_str_eq(c->old_ops[1], "Relu");
    cr_expect_eq(c->new_ids[0], fused->id);
    cr_expect_str_eq(c->new_names[0], "conv_relu");
    cr_expect_eq(c->decision, 7);
    cr_expect_eq(d->n_replaced, 1);
    cr_expect_eq(d->n_added + d->n_removed + d->n_modified, 0);

    cr_expect_eq(gl_diff_find_new(d, fused->id), c);
    cr_expect_eq(gl_diff_find_old(d, conv->id), c);
    cr_expect_eq(gl_diff_find_old(d, relu->id), c);
    cr_expect_null(gl_diff_find_new(d, tr->id), "the Transpose did not change");
    cr_expect_null(gl_diff_find_old(d, fused->id), "the fused node is not in `before`");
    gl_diff_free(d);
    gl_model_free(after);
    gl_model_free(before);
}

Test(diff, modified_details_structure)
{
    gl_model *before = base();
    gl_model *after = gl_model_clone(before);
    remove_alpha(after);
    set_pads(after);
    add_dilations(after);
    gl_diff *d = gl_diff_graphs(before->graph, after->graph, GL_DIFF_MATCH_IDS);
    cr_assert_eq(d->n_nodes, 1);
    const gl_node_change *c = &d->nodes[0];
    cr_expect_eq(c->kind, GL_CHANGE_MODIFIED);
    cr_expect_eq(c->decision, -1, "provenance did not change");
    cr_assert_eq(c->n_details, 3);
    /* name order: alpha, dilations, pads */
    cr_expect_eq(c->details[0].kind, GL_DETAIL_ATTR_REMOVED);
    cr_expect_str_eq(c->details[0].what, "alpha");
    cr_expect_null(c->details[0].new_text);
    cr_expect_eq(c->details[1].kind, GL_DETAIL_ATTR_ADDED);
    cr_expect_null(c->details[1].old_text);
    cr_expect_str_eq(c->details[1].new_text, "[1,1]");
    cr_expect_eq(c->details[2].kind, GL_DETAIL_ATTR_CHANGED);
    cr_expect_str_eq(c->details[2].old_text, "[0,0,0,0]");
    cr_expect_eq(gl_diff_find_new(d, node(after, "conv")->id), c);
    cr_expect_eq(gl_diff_find_old(d, node(before, "conv")->id), c);
    gl_diff_free(d);
    gl_model_free(after);
    gl_model_free(before);
}

/* A decision an earlier pass left on the node is not what changed it now. */
Test(diff, inherited_decision_is_not_this_change)
{
    gl_model *before = base();
    gl_node *conv = node(before, "conv");
    gl_node_set_provenance(conv, conv->prov.origins, conv->prov.n_origins, 4);
    gl_model *after = gl_model_clone(before);
    set_group(after);
    expect_text(before, after, GL_DIFF_MATCH_IDS,
                ONE_MODIFIED "~ Conv 'conv'\n    attr group: 1 -> 2\n", "old decision");
    gl_model_free(after);
    gl_model_free(before);
}

/* A renamed node keeps its id: built twice in the same order, only the name differs. */
Test(diff, renamed_node)
{
    gl_model *before = build("conv", NULL), *after = build("conv2", NULL);
    cr_assert_eq(node(before, "conv")->id, node(after, "conv2")->id);
    expect_text(before, after, GL_DIFF_MATCH_IDS,
                ONE_MODIFIED "~ Conv 'conv2'\n    name: 'conv' -> 'conv2'\n", "rename");
    gl_model_free(after);
    gl_model_free(before);
}

/* Two files loaded apart: ids shift, names still match. */
Test(diff, match_names)
{
    gl_model *before = build("conv", NULL), *after = build("conv", "extra");
    expect_text(before, after, GL_DIFF_MATCH_NAMES,
                "1 added, 0 removed, 0 replaced, 0 modified, 0 value changes\n"
                "+ Identity 'extra'\n",
                "names");
    gl_diff *by_ids = gl_diff_graphs(before->graph, after->graph, GL_DIFF_MATCH_IDS);
    cr_expect_gt(by_ids->n_nodes, 1, "ids are shifted: matching them must not look clean");
    gl_diff_free(by_ids);
    gl_model_free(after);
    gl_model_free(before);
}

static gl_model *with_duplicate_names(void)
{
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    tu_node(m->graph, "Relu", "dup", 1, x);
    tu_node(m->graph, "Neg", "dup", 1, x);
    return m;
}

/* Only the first node of a name is matched; a later namesake is added and removed. */
Test(diff, match_names_duplicates)
{
    gl_model *before = with_duplicate_names(), *after = with_duplicate_names();
    expect_text(before, after, GL_DIFF_MATCH_NAMES,
                "1 added, 1 removed, 0 replaced, 0 modified, 0 value changes\n"
                "+ Neg 'dup'\n"
                "- Neg 'dup'\n",
                "duplicates");
    gl_model_free(after);
    gl_model_free(before);
}

/* ---- texts that need a hash or an exact float ------------------------------------------ */

Test(diff, large_tensor_attribute_shows_size_and_hash)
{
    gl_model *before = base();
    gl_model *after = gl_model_clone(before);
    gl_tensor *t = gl_node_attr(node(after, "conv"), "big")->t;
    ((float *)gl_tensor_make_writable(t))[100] = 1;
    unsigned h0 = (unsigned)(gl_tensor_hash(gl_node_attr(node(before, "conv"), "big")->t) & 0xffff);
    unsigned h1 = (unsigned)(gl_tensor_hash(t) & 0xffff);
    cr_assert_neq(h0, h1, "pick another byte: the short hashes collide");
    char expected[256];
    snprintf(expected, sizeof(expected),
             ONE_MODIFIED "~ Conv 'conv'\n    attr big: float[64,3,3,3] (6.8 KiB, hash %04x) -> "
                          "float[64,3,3,3] (6.8 KiB, hash %04x)\n",
             h0, h1);
    expect_text(before, after, GL_DIFF_MATCH_IDS, expected, "big tensor");
    gl_model_free(after);
    gl_model_free(before);
}

/* A subgraph that changed inside but keeps its node count must not read "a -> a". */
Test(diff, subgraph_same_size_shows_fingerprints)
{
    gl_model *before = base();
    gl_model *after = gl_model_clone(before);
    gl_graph *body = gl_node_attr(node(after, "conv"), "body")->g;
    gl_node_set_attr_int(gl_find_node(body, "neg"), "k", 1);
    uint64_t f0 = gl_graph_fingerprint(gl_node_attr(node(before, "conv"), "body")->g);
    uint64_t f1 = gl_graph_fingerprint(body);
    cr_assert_neq(f0, f1);
    char expected[256];
    snprintf(expected, sizeof(expected),
             ONE_MODIFIED "~ Conv 'conv'\n    attr body: graph 'then' (1 nodes, hash %016" PRIx64
                          ") -> graph 'then' (1 nodes, hash %016" PRIx64 ")\n",
             f0, f1);
    expect_text(before, after, GL_DIFF_MATCH_IDS, expected, "subgraph");
    gl_model_free(after);
    gl_model_free(before);
}

/* Floats equal at %g are shown with all their digits. */
Test(diff, close_floats_show_all_digits)
{
    gl_model *before = base();
    gl_node_set_attr_float(node(before, "conv"), "alpha", 0.1f);
    gl_model *after = gl_model_clone(before);
    float next = nextafterf(0.1f, 1.0f);
    gl_node_set_attr_float(node(after, "conv"), "alpha", next);
    char a[32], b[32], expected[256];
    snprintf(a, sizeof(a), "%.9g", (double)0.1f);
    snprintf(b, sizeof(b), "%.9g", (double)next);
    cr_assert_str_neq(a, b);
    snprintf(expected, sizeof(expected), ONE_MODIFIED "~ Conv 'conv'\n    attr alpha: %s -> %s\n",
             a, b);
    expect_text(before, after, GL_DIFF_MATCH_IDS, expected, "close floats");
    gl_model_free(after);
    gl_model_free(before);
}

/* ---- a golden text: several kinds at once, in the order diff.h gives -------------------- */

Test(diff, golden_text)
{
    gl_model *before = build("conv", "dead");
    gl_model *after = gl_model_clone(before);
    gl_graph *g = after->graph;
    gl_node *tr = node(after, "tr");
    gl_node_set_attr_ints(tr, "perm", (int64_t[]){0, 1, 3, 2}, 4);
    set_type(tr->outputs[0], 4, (int64_t[]){1, 2, 8, 8});
    fuse_conv_relu(after);
    gl_node *extra = tu_node(g, "Identity", "extra", 1, val(after, "y"));
    cr_assert_eq(gl_rename_value(g, extra->outputs[0], "e"), GL_OK);
    tu_output(g, extra->outputs[0]);
    cr_assert_eq(gl_remove_node(g, node(after, "dead")), GL_OK, "%s", gl_error_message());
    add_bias(after);
    remove_unused(after);
    input_type(after);

    /* after's order: tr (modified), conv_relu (replaces conv + relu), extra (added); then
     * the removal of 'dead', although it came first in `before`; then the values:
     * interface, initializers, types. 'y' changed type through tr's detail only. */
    expect_text(before, after, GL_DIFF_MATCH_IDS,
                "1 added, 1 removed, 1 replaced, 1 modified, 4 value changes\n"
                "~ Transpose 'tr'\n"
                "    attr perm: [0,2,3,1] -> [0,1,3,2]\n"
                "    type 'y': float[1,8,8,2] -> float[1,2,8,8]\n"
                "> Conv 'conv' + Relu 'relu'  =>  FusedConv 'conv_relu'   [decision #7]\n"
                "+ Identity 'extra'\n"
                "- Identity 'dead'\n"
                "= graph outputs: y -> y, e\n"
                "+ init 'bias': float[8] 32 B = [0, 0, 0, 0, 0, 0, 0, 0]\n"
                "- init 'unused': float[2] 8 B = [0, 0]\n"
                "= value 'x': float[1,3,8,8] -> float[N,3,8,8]\n",
                "golden");
    gl_model_free(after);
    gl_model_free(before);
}

/* Inside a subgraph a capture reads as the outer value's name. */
Test(diff, captures_read_as_the_outer_name)
{
    gl_model *before = base();
    gl_graph *body = gl_node_attr(node(before, "conv"), "body")->g;
    gl_value *cap = gl_resolve_value(body, "x");
    cr_assert_not_null(cap);
    gl_node *neg = gl_find_node(body, "neg");
    gl_node *add = tu_node(body, "Add", "add", 2, neg->outputs[0], cap);
    gl_graph_set_output(body, 0, add->outputs[0]);
    gl_model *after = gl_model_clone(before);
    cr_assert_eq(gl_rename_value(after->graph, val(after, "x"), "x2"), GL_OK);
    gl_graph *body_after = gl_node_attr(node(after, "conv"), "body")->g;
    gl_diff *d = gl_diff_graphs(body, body_after, GL_DIFF_MATCH_IDS);
    char *text = diff_text(d);
    cr_expect_str_eq(text, ONE_MODIFIED "~ Add 'add'\n    input 1: 'x' -> 'x2'\n");
    free(text);
    gl_diff_free(d);
    gl_model_free(after);
    gl_model_free(before);
}

/* ---- odd inputs ---------------------------------------------------------------------- */

Test(diff, hand_made_diff_is_searched_linearly)
{
    uint32_t ids[] = {5, 9};
    gl_node_change change = {.kind = GL_CHANGE_ADDED, .new_ids = ids, .n_new = 2, .decision = -1};
    gl_diff d = {.nodes = &change, .n_nodes = 1, .n_added = 1};
    cr_expect_eq(gl_diff_find_new(&d, 9), &change);
    cr_expect_null(gl_diff_find_new(&d, 6));
    cr_expect_null(gl_diff_find_old(&d, 5));
    char *text = diff_text(&d);
    cr_expect_str_eq(text, "1 added, 0 removed, 0 replaced, 0 modified, 0 value changes\n"
                           "+ ? '' + ? ''\n",
                     "names and ops left out read as '' and ?: %s", text);
    free(text);
    cr_expect(gl_diff_empty(NULL));
    cr_expect_null(gl_diff_graphs(NULL, NULL, GL_DIFF_MATCH_IDS));
}

Test(diff, empty_graphs)
{
    gl_model *a = tu_model(13), *b = tu_model(13);
    expect_text(a, b, GL_DIFF_MATCH_IDS, "no changes\n", "empty");
    expect_text(a, b, GL_DIFF_MATCH_NAMES, "no changes\n", "empty by names");
    gl_model_free(a);
    gl_model_free(b);
}

/* ---- scale: 20k nodes, 100 edits ------------------------------------------------------- */

#define BIG_NODES 20000

Test(diff, twenty_thousand_nodes_hundred_edits, .timeout = 60)
{
    gl_model *before = tu_model(13);
    gl_graph *g = before->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_value *prev = x;
    /* Half a chain (each node reads the previous), half leaves reading x. */
    for (int i = 0; i < BIG_NODES; i++) {
        char name[32];
        snprintf(name, sizeof(name), "n%d", i);
        gl_node *n = tu_node(g, i % 2 ? "Relu" : "Add", name, i % 2 ? 1 : 2, x, prev);
        if (i % 2 == 0)
            prev = n->outputs[0];
    }
    tu_output(g, prev);
    stand_for_themselves(g);

    gl_model *after = gl_model_clone(before);
    gl_graph *ga = after->graph;
    uint32_t modified[40], removed[30], added[30];
    for (int k = 0; k < 40; k++) { /* attributes on chain nodes */
        gl_node *n = ga->nodes[k * 500];
        gl_node_set_attr_int(n, "k", k);
        modified[k] = n->id;
    }
    for (int k = 0; k < 30; k++) { /* leaves: nothing reads them */
        gl_node *n = ga->nodes[k * 600 + 301];
        removed[k] = n->id;
        cr_assert_eq(gl_remove_node(ga, n), GL_OK, "%s", gl_error_message());
    }
    for (int k = 0; k < 30; k++) {
        char name[32];
        snprintf(name, sizeof(name), "new%d", k);
        added[k] = tu_node(ga, "Neg", name, 1, gl_find_value(ga, "x"))->id;
    }

    gl_diff *d = gl_diff_graphs(before->graph, ga, GL_DIFF_MATCH_IDS);
    cr_assert_eq(d->n_nodes, 100);
    cr_expect_eq(d->n_modified, 40);
    cr_expect_eq(d->n_removed, 30);
    cr_expect_eq(d->n_added, 30);
    cr_expect_eq(d->n_replaced, 0);
    cr_expect_eq(d->n_values, 0);
    for (int k = 0; k < 40; k++) {
        const gl_node_change *c = gl_diff_find_new(d, modified[k]);
        cr_assert_not_null(c);
        cr_expect_eq(c->kind, GL_CHANGE_MODIFIED);
        cr_expect_eq(c->n_details, 1);
        cr_expect_eq(c->details[0].kind, GL_DETAIL_ATTR_ADDED);
    }
    for (int k = 0; k < 30; k++) {
        const gl_node_change *c = gl_diff_find_old(d, removed[k]);
        cr_assert_not_null(c);
        cr_expect_eq(c->kind, GL_CHANGE_REMOVED);
        c = gl_diff_find_new(d, added[k]);
        cr_assert_not_null(c);
        cr_expect_eq(c->kind, GL_CHANGE_ADDED);
    }
    cr_expect_null(gl_diff_find_new(d, ga->nodes[1]->id), "n1 is untouched");

    char *text = diff_text(d);
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, 1 + 100 + 40, "summary, a line per change, a detail per modified node");
    const char *summary = "30 added, 30 removed, 0 replaced, 40 modified, 0 value changes\n";
    cr_expect(strncmp(text, summary, strlen(summary)) == 0, "%.80s", text);
    free(text);
    gl_diff_free(d);
    gl_model_free(after);
    gl_model_free(before);
}

/* ==== a constant's values (issue 24: a folded constant says what it is) ============== */

/* A tensor of `dtype` and `dims` whose elements are `values` (numbers) or `strings`. */
typedef struct values_case {
    const char *name;
    gl_dtype dtype;
    int rank;
    int64_t dims[2];
    const double *values; /* count of them; NULL: i * step, from `first` */
    double first, step;
    const char *const *strings;
    const char *expected;
} values_case;

static gl_tensor *values_tensor(const values_case *c)
{
    int64_t count = 1;
    for (int i = 0; i < c->rank; i++)
        count *= c->dims[i];
    if (c->dtype == GL_DT_STRING) {
        gl_bytes *items = calloc((size_t)count, sizeof(*items));
        for (int64_t i = 0; i < count; i++) {
            items[i].len = strlen(c->strings[i]);
            items[i].data = (uint8_t *)strdup(c->strings[i]);
        }
        return gl_tensor_wrap(c->dtype, c->rank, c->dims, count,
                              gl_buffer_new_strings(items, (size_t)count));
    }
    gl_tensor *t = gl_tensor_new(c->dtype, c->rank, c->dims);
    void *p = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < count; i++) {
        double v = c->values ? c->values[i] : c->first + (double)i * c->step;
        switch (c->dtype) {
        case GL_DT_FLOAT: ((float *)p)[i] = (float)v; break;
        case GL_DT_DOUBLE: ((double *)p)[i] = v; break;
        case GL_DT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
        case GL_DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
        case GL_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
        default: cr_assert_fail("%s: no such dtype in the table", c->name);
        }
    }
    return t;
}

#define VALUES(...) (const double[]){__VA_ARGS__}

static const values_case values_cases[] = {
    /* the issue's own line: a Shape -> Gather -> Concat folded into its target shape */
    {"int64 whole", GL_DT_INT64, 1, {3}, VALUES(1, 16, 256), 0, 0, NULL, "[1, 16, 256]"},
    {"int64 exact past 2^53", GL_DT_INT64, 1, {2}, VALUES(-1, 9007199254740993.0), 0, 0,
     NULL, "[-1, 9007199254740992]"},
    {"int32", GL_DT_INT32, 1, {2}, VALUES(-7, 2147483647), 0, 0, NULL, "[-7, 2147483647]"},
    {"float %g", GL_DT_FLOAT, 1, {3}, VALUES(0.5, 1e-7, -3), 0, 0, NULL, "[0.5, 1e-07, -3]"},
    {"double", GL_DT_DOUBLE, 2, {1, 2}, VALUES(0.125, 1e300), 0, 0, NULL, "[0.125, 1e+300]"},
    {"scalar bare", GL_DT_FLOAT, 0, {0}, VALUES(0.7071067811865476), 0, 0, NULL, "0.707107"},
    {"bool", GL_DT_BOOL, 1, {2}, VALUES(1, 0), 0, 0, NULL, "[true, false]"},
    {"empty", GL_DT_INT64, 1, {0}, NULL, 0, 0, NULL, "[]"},
    {"16 whole", GL_DT_INT64, 1, {16}, NULL, 0, 1, NULL,
     "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]"},
    {"large ints: first 8", GL_DT_INT64, 1, {17}, NULL, 0, 1, NULL,
     "[0, 1, 2, 3, 4, 5, 6, 7, \u2026]"},
    {"large floats: first 8, min, max", GL_DT_FLOAT, 2, {10, 10}, NULL, 50, -1, NULL,
     "[50, 49, 48, 47, 46, 45, 44, 43, \u2026] min -49 max 50"},
    {"NaN counted apart", GL_DT_FLOAT, 1, {17},
     VALUES(NAN, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, -1), 0, 0, NULL,
     "[nan, 2, 3, 4, 5, 6, 7, 8, \u2026] min -1 max 16 (1 NaN)"},
    {"strings escaped", GL_DT_STRING, 1, {3}, NULL, 0, 0,
     (const char *const[]){"a\"b", "line\nbreak", "\x1b[31m"},
     "[\"a\\\"b\", \"line\\nbreak\", \"\\x1b[31m\"]"},
    {"long string cut", GL_DT_STRING, 1, {1}, NULL, 0, 0,
     (const char *const[]){"0123456789abcdefXYZ"}, "[\"0123456789abcdef...\"]"},
};

Test(diff, constant_values)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(values_cases); i++) {
        const values_case *c = &values_cases[i];
        gl_tensor *t = values_tensor(c);
        cr_assert_not_null(t, "%s: %s", c->name, gl_error_message());
        char *text = gl_diff_tensor_values(t);
        cr_expect_str_eq(text ? text : "(null)", c->expected, "%s", c->name);
        free(text);
        gl_tensor_free(t);
    }
}

/* The diff shows an added or removed initializer's values on its line: a constant
 * folded by constant-folding is read where it appears, as in the graph view. */
Test(diff, folded_constant_line)
{
    gl_model *before = base();
    gl_model *after = gl_model_clone(before);
    int64_t dims[1] = {3};
    gl_tensor *t = gl_tensor_new(GL_DT_INT64, 1, dims);
    int64_t *p = gl_tensor_make_writable(t);
    p[0] = 1, p[1] = 16, p[2] = 256;
    gl_add_initializer(after->graph, "/Mul_output_0", t);
    expect_text(before, after, GL_DIFF_MATCH_IDS,
                ONE_VALUE "+ init '/Mul_output_0': int64[3] 24 B = [1, 16, 256]\n",
                "folded constant");
    gl_model_free(after);
    gl_model_free(before);
}

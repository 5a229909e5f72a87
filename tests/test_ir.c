/* test_ir.c — the IR edit API and gl_graph_verify.
 *
 * Every edit is followed by gl_graph_verify; expected names, counts and use lists are
 * worked out by hand from the contract in graph.h, not copied from the code's output.
 */
#include "ir/calls.h"
#include "ops/opkit.h"
#include "passes/transpose.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#endif

static const int64_t D2[] = {2};

#define VERIFY_OK(g)                                                                       \
    cr_assert_eq(gl_graph_verify((g), false), GL_OK, "verify: %s", gl_error_message())

static gl_value *out0(const gl_node *n) { return n->outputs[0]; }

/* Number of entries (node, slot) in v's use list. */
static size_t count_use(const gl_value *v, const gl_node *n, int slot)
{
    size_t k = 0;
    for (size_t i = 0; i < v->n_uses; i++)
        k += v->uses[i].node == n && v->uses[i].slot == slot;
    return k;
}

static void attach_graph(gl_node *n, const char *attr, gl_graph *sub)
{
    gl_attr a = {.name = strdup(attr), .type = GL_ATTR_GRAPH, .g = sub};
    gl_node_take_attr(n, &a);
}

/* A branch of `holder` that applies `op` to the outer value `outer_name`. */
static gl_graph *branch(gl_node *holder, const char *name, const char *outer_name,
                        const char *op)
{
    gl_graph *sub = gl_graph_new(holder->graph->model, holder->graph, name);
    sub->parent_node = holder;
    gl_value *c = gl_resolve_value(sub, outer_name);
    cr_assert_not_null(c, "cannot resolve '%s' in '%s'", outer_name, name);
    gl_node *n = tu_node(sub, op, NULL, 1, c);
    tu_output(sub, out0(n));
    return sub;
}

/* ---- the fixture: x, w -> Mul -> Relu -> out; If(cond) capturing relu's output ---- */

typedef struct fixture {
    gl_model *m;
    gl_graph *g, *then_g, *else_g;
    gl_value *x, *cond, *w, *capture;
    gl_node *mul, *relu, *iff;
} fixture;

static fixture make_fixture(void)
{
    fixture f = {.m = tu_model(13)};
    f.g = f.m->graph;
    f.x = tu_input(f.g, "x", GL_DT_FLOAT, 1, D2);
    f.cond = tu_input(f.g, "cond", GL_DT_BOOL, 0, NULL);
    f.w = tu_const_f32(f.g, "w", 1, D2, (const float[]){1, 2});
    f.mul = tu_node(f.g, "Mul", "mul", 2, f.x, f.w);
    f.relu = tu_node(f.g, "Relu", "relu", 1, out0(f.mul));
    f.iff = gl_add_node(f.g, "If", "", "if", &f.cond, 1, 1);
    f.then_g = branch(f.iff, "then", "relu_out0", "Neg");
    f.else_g = branch(f.iff, "else", "x", "Identity");
    attach_graph(f.iff, "then_branch", f.then_g);
    attach_graph(f.iff, "else_branch", f.else_g);
    f.capture = f.then_g->captures[0];
    tu_output(f.g, out0(f.relu));
    tu_output(f.g, out0(f.iff));
    return f;
}

Test(ir, fixture_is_what_it_claims)
{
    fixture f = make_fixture();
    VERIFY_OK(f.g);
    cr_assert_eq(f.g->live_nodes, 3);
    cr_assert_eq(gl_graph_count_nodes(f.g, true), 5);
    cr_assert_str_eq(out0(f.mul)->name, "mul_out0");
    cr_assert_eq(gl_find_value(f.g, "mul_out0"), out0(f.mul));
    cr_assert_eq(gl_find_node(f.g, "relu"), f.relu);
    cr_assert_null(gl_find_node(f.g, "nope"));
    cr_assert_eq(out0(f.mul)->producer, f.mul);
    cr_assert_eq(count_use(f.x, f.mul, 0), 1);
    cr_assert_eq(count_use(f.w, f.mul, 1), 1);
    /* relu_out0: read by the then-branch (implicit) and a graph output. */
    gl_value *r = out0(f.relu);
    cr_assert_eq(f.iff->n_implicit, 2);
    cr_assert_eq(f.iff->implicit[0], r);
    cr_assert_eq(f.iff->implicit[1], f.x);
    cr_assert_eq(count_use(r, f.iff, GL_USE_IMPLICIT), 1);
    cr_assert_eq(count_use(f.x, f.iff, GL_USE_IMPLICIT), 1);
    cr_assert_eq(gl_value_explicit_uses(f.x), 1);
    cr_assert_not(gl_value_uses_comprehensive(r));
    cr_assert_not(gl_value_uses_comprehensive(f.x), "captured by a subgraph");
    cr_assert(gl_value_uses_comprehensive(out0(f.mul)));
    cr_assert_eq(f.capture->outer, r);
    cr_assert_str_eq(f.capture->name, "relu_out0");
    cr_assert_eq(f.then_g->parent, f.g);
    cr_assert_eq(f.then_g->parent_node, f.iff);
    cr_assert(gl_value_is_constant(f.w));
    cr_assert_not(gl_value_is_constant(f.x));
    gl_model_free(f.m);
}

/* gl_value_single_reader: one node in any number of slots; graph outputs do not count,
 * subgraph reads and a second node do. */
Test(ir, single_reader_is_one_node_in_any_slots)
{
    fixture f = make_fixture();
    gl_node *sq = tu_node(f.g, "Mul", "sq", 2, out0(f.mul), out0(f.mul));
    gl_node *twice = tu_node(f.g, "Add", "twice", 2, f.w, f.w);
    tu_output(f.g, out0(sq));
    gl_node *after = tu_node(f.g, "Neg", "after", 1, out0(sq));
    struct {
        const gl_value *v;
        const gl_node *want;
        const char *why;
    } cases[] = {
        {out0(twice), NULL, "no reader"},
        {out0(sq), after, "a graph output with one reader"},
        {out0(f.mul), NULL, "read by relu and by sq"},
        {f.w, NULL, "read by mul and by twice"},
        {out0(f.relu), NULL, "a subgraph reads it"},
        {f.cond, f.iff, "If reads its condition"},
        {NULL, NULL, "no value"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(gl_value_single_reader(cases[i].v), cases[i].want, "%s", cases[i].why);
    gl_node *again = tu_node(f.g, "Mul", "again", 2, out0(twice), out0(twice));
    cr_expect_eq(gl_value_single_reader(out0(twice)), again, "one node in two slots");
    gl_model_free(f.m);
}

Test(ir, resolve_reuses_capture_and_fails_for_unknown_names)
{
    fixture f = make_fixture();
    cr_assert_eq(gl_resolve_value(f.then_g, "relu_out0"), f.capture);
    cr_assert_eq(gl_resolve_value(f.then_g, "Neg_0_out0"), out0(f.then_g->nodes[0]));
    cr_assert_null(gl_resolve_value(f.then_g, "nowhere"));
    cr_assert_eq(f.then_g->n_captures, 1);
    /* A new outer name becomes a capture and an implicit input, once. */
    gl_value *c = gl_resolve_value(f.then_g, "cond");
    cr_assert_eq(c->outer, f.cond);
    cr_assert_eq(gl_resolve_value(f.then_g, "cond"), c);
    cr_assert_eq(count_use(f.cond, f.iff, GL_USE_IMPLICIT), 1);
    cr_assert_eq(count_use(f.cond, f.iff, 0), 1);
    VERIFY_OK(f.g);
    gl_model_free(f.m);
}

Test(ir, nested_subgraph_captures_through_every_level)
{
    fixture f = make_fixture();
    gl_node *inner_if = tu_node(f.then_g, "If", "inner_if", 1, gl_resolve_value(f.then_g, "cond"));
    gl_graph *inner = branch(inner_if, "inner", "w", "Abs");
    attach_graph(inner_if, "then_branch", inner);
    gl_value *mid = gl_find_value(f.then_g, "w");
    cr_assert_not_null(mid, "the middle graph captures w too");
    cr_assert_eq(mid->outer, f.w);
    cr_assert_eq(inner->captures[0]->outer, mid);
    cr_assert_eq(count_use(f.w, f.iff, GL_USE_IMPLICIT), 1);
    cr_assert_eq(count_use(mid, inner_if, GL_USE_IMPLICIT), 1);
    VERIFY_OK(f.g);
    gl_model_free(f.m);
}

Test(ir, body_built_before_attaching_gets_implicit_inputs_on_take_attr)
{
    fixture f = make_fixture();
    gl_node *loop = tu_node(f.g, "Loop", "loop", 1, f.cond);
    gl_graph *body = gl_graph_new(f.m, f.g, "body"); /* no parent_node yet */
    gl_value *c = gl_resolve_value(body, "w");
    tu_output(body, out0(tu_node(body, "Neg", "n", 1, c)));
    cr_assert_eq(loop->n_implicit, 0, "nobody to tell yet");
    attach_graph(loop, "body", body);
    cr_assert_eq(body->parent_node, loop);
    cr_assert_eq(loop->n_implicit, 1);
    cr_assert_eq(loop->implicit[0], f.w);
    cr_assert_eq(count_use(f.w, loop, GL_USE_IMPLICIT), 1);
    VERIFY_OK(f.g);
    /* Replacing the attribute by a graph that captures nothing drops the edge. */
    gl_graph *empty = gl_graph_new(f.m, f.g, "empty");
    attach_graph(loop, "body", empty);
    cr_assert_eq(loop->n_implicit, 0);
    cr_assert_eq(count_use(f.w, loop, GL_USE_IMPLICIT), 0);
    VERIFY_OK(f.g);
    gl_model_free(f.m);
}

/* ---- fingerprints ---- */

/* x -> Split "s" (s_out0, s_out1) -> Add "a"(s_out0, s_out1) -> output, then one edit.
 * A node reads another's output by that node's place and slot in the fingerprint
 * (fingerprint.c, mix_read): each edit of what is read must still change it, and a hole
 * in the node array (a removed node) must not. */
typedef enum fp_edit {
    FP_NONE,
    FP_SLOTS_SWAPPED,   /* Add(s_out1, s_out0) */
    FP_ONE_SLOT_TWICE,  /* Add(s_out0, s_out0) */
    FP_GRAPH_INPUT,     /* Add(x, s_out1) */
    FP_OUTPUT_RENAMED,  /* s_out0 is called "t" */
    FP_HOLE_FIRST,      /* a node before Split, removed: a hole at index 0 */
} fp_edit;

static gl_model *fp_graph(fp_edit edit)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    gl_node *dead = edit == FP_HOLE_FIRST ? tu_node(g, "Identity", "dead", 1, x) : NULL;
    gl_node *split = gl_add_node(g, "Split", "", "s", &x, 1, 2);
    gl_value *s0 = split->outputs[0], *s1 = split->outputs[1];
    gl_value *in[2] = {s0, s1};
    if (edit == FP_SLOTS_SWAPPED)
        in[0] = s1, in[1] = s0;
    else if (edit == FP_ONE_SLOT_TWICE)
        in[1] = s0;
    else if (edit == FP_GRAPH_INPUT)
        in[0] = x;
    gl_node *add = tu_node(g, "Add", "a", 2, in[0], in[1]);
    tu_output(g, out0(add));
    if (edit == FP_OUTPUT_RENAMED)
        cr_assert_eq(gl_rename_value(g, s0, "t"), GL_OK);
    if (dead)
        cr_assert_eq(gl_remove_node(g, dead), GL_OK, "%s", gl_error_message());
    VERIFY_OK(g);
    return m;
}

Test(ir, fingerprint_sees_every_read_and_no_hole)
{
    static const struct {
        fp_edit edit;
        bool same;
    } rows[] = {
        {FP_NONE, true},
        {FP_SLOTS_SWAPPED, false},
        {FP_ONE_SLOT_TWICE, false},
        {FP_GRAPH_INPUT, false},
        {FP_OUTPUT_RENAMED, false},
        {FP_HOLE_FIRST, true},
    };
    gl_model *base = fp_graph(FP_NONE);
    uint64_t want = gl_graph_fingerprint(base->graph);
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_model *m = fp_graph(rows[i].edit);
        if (rows[i].edit == FP_HOLE_FIRST)
            cr_assert_null(m->graph->nodes[0], "the hole is where the test wants it");
        uint64_t got = gl_graph_fingerprint(m->graph);
        cr_expect_eq(got == want, rows[i].same, "edit %d: fingerprint %s", (int)rows[i].edit,
                     rows[i].same ? "changed" : "did not change");
        gl_model_free(m);
    }
    gl_model_free(base);
}

/* ---- uses and inputs ---- */

Test(ir, repeated_input_counts_twice_and_set_input_rewires_one_slot)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    gl_value *y = tu_input(g, "y", GL_DT_FLOAT, 1, D2);
    gl_node *mul = tu_node(g, "Mul", "sq", 2, x, x);
    tu_output(g, out0(mul));
    VERIFY_OK(g);
    cr_assert_eq(x->n_uses, 2);
    cr_assert_eq(count_use(x, mul, 0), 1);
    cr_assert_eq(count_use(x, mul, 1), 1);

    cr_assert_eq(gl_set_input(g, mul, 1, y), GL_OK);
    VERIFY_OK(g);
    cr_assert_eq(x->n_uses, 1);
    cr_assert_eq(count_use(x, mul, 0), 1);
    cr_assert_eq(count_use(y, mul, 1), 1);

    cr_assert_eq(gl_set_input(g, mul, 2, x), GL_OK, "slot == n_inputs appends");
    cr_assert_eq(mul->n_inputs, 3);
    cr_assert_eq(count_use(x, mul, 2), 1);
    cr_assert_eq(gl_set_input(g, mul, 5, x), GL_ERR_INPUT, "past the end");
    cr_assert_eq(gl_set_input(g, mul, 0, NULL), GL_OK, "omit an optional input");
    cr_assert_eq(count_use(x, mul, 0), 0);
    VERIFY_OK(g);

    gl_truncate_inputs(g, mul, 1);
    cr_assert_eq(mul->n_inputs, 1);
    cr_assert_eq(x->n_uses, 0);
    cr_assert_eq(y->n_uses, 0);
    VERIFY_OK(g);
    gl_model_free(m);
}

Test(ir, set_input_refuses_values_of_another_graph)
{
    fixture f = make_fixture();
    gl_node *neg = f.then_g->nodes[0];
    cr_assert_eq(gl_set_input(f.then_g, neg, 0, f.x), GL_ERR_INPUT);
    cr_assert(strstr(gl_error_message(), "another graph"), "%s", gl_error_message());
    cr_assert_null(gl_add_node(f.then_g, "Relu", "", NULL, &f.x, 1, 1));
    VERIFY_OK(f.g);
    gl_model_free(f.m);
}

/* ---- removal ---- */

Test(ir, remove_node_refuses_used_or_output_and_leaves_graph_alone)
{
    fixture f = make_fixture();
    size_t values_before = f.g->n_values;
    cr_assert_eq(gl_remove_node(f.g, f.mul), GL_ERR_INPUT);
    cr_assert(strstr(gl_error_message(), "'mul_out0' still has 1 use"), "%s", gl_error_message());
    cr_assert_eq(gl_remove_node(f.g, f.iff), GL_ERR_INPUT);
    cr_assert(strstr(gl_error_message(), "graph output"), "%s", gl_error_message());
    cr_assert_eq(f.g->live_nodes, 3);
    cr_assert_eq(f.g->n_values, values_before);
    VERIFY_OK(f.g);
    gl_model_free(f.m);
}

Test(ir, remove_node_drops_input_and_implicit_uses)
{
    fixture f = make_fixture();
    /* Make If removable: its output stops being a graph output. */
    gl_graph_set_output(f.g, 1, out0(f.relu));
    cr_assert_eq(out0(f.relu)->n_output_refs, 2);
    VERIFY_OK(f.g);
    gl_value *r = out0(f.relu);
    cr_assert_eq(gl_remove_node(f.g, f.iff), GL_OK, "%s", gl_error_message());
    cr_assert_null(gl_find_node(f.g, "if"));
    cr_assert_null(gl_find_value(f.g, "if_out0"));
    cr_assert_eq(f.cond->n_uses, 0);
    cr_assert_eq(count_use(r, f.iff, GL_USE_IMPLICIT), 0);
    cr_assert_eq(r->n_uses, 0);
    cr_assert_eq(f.x->n_uses, 1, "only Mul is left reading x");
    cr_assert_eq(f.g->live_nodes, 2);
    VERIFY_OK(f.g);
    gl_model_free(f.m);
}

Test(ir, remove_during_iteration_survives_deleting_the_current_node)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    gl_node *keep = tu_node(g, "Relu", "keep", 1, x);
    tu_node(g, "Neg", "dead1", 1, x);
    gl_node *keep2 = tu_node(g, "Abs", "keep2", 1, out0(keep));
    tu_node(g, "Exp", "dead2", 1, out0(keep));
    tu_node(g, "Exp", "dead3", 1, out0(keep2));
    tu_output(g, out0(keep2));
    gl_node *n;
    size_t removed = 0, visited = 0;
    gl_foreach_node(g, i, n) {
        visited++;
        if (strncmp(n->name, "dead", 4) == 0) {
            cr_assert_eq(gl_remove_node(g, n), GL_OK, "%s", gl_error_message());
            removed++;
            VERIFY_OK(g);
        }
    }
    cr_assert_eq(visited, 5);
    cr_assert_eq(removed, 3);
    cr_assert_eq(g->live_nodes, 2);
    cr_assert_eq(g->n_nodes, 5, "holes stay until compact");
    cr_assert_eq(x->n_uses, 1);
    cr_assert_eq(out0(keep)->n_uses, 1);
    gl_graph_compact(g);
    cr_assert_eq(g->n_nodes, 2);
    cr_assert_eq(g->nodes[0], keep);
    cr_assert_eq(g->nodes[1], keep2);
    cr_assert_eq(keep2->index, 1);
    for (size_t i = 0; i < g->n_values; i++)
        cr_assert_not_null(g->values[i]);
    cr_assert_eq(g->n_values, 3, "x, keep_out0, keep2_out0");
    VERIFY_OK(g);
    gl_model_free(m);
}

Test(ir, remove_value_initializers_and_captures)
{
    fixture f = make_fixture();
    gl_value *unused = tu_const_f32(f.g, "unused", 1, D2, (const float[]){0, 0});
    cr_assert_eq(f.g->n_inits, 2);
    cr_assert_eq(gl_remove_value(f.g, f.w), GL_ERR_INPUT);
    cr_assert(strstr(gl_error_message(), "'w'"), "%s", gl_error_message());
    cr_assert_eq(gl_remove_value(f.g, f.x), GL_ERR_INPUT, "still used and an input");
    cr_assert_eq(gl_remove_value(f.g, out0(f.mul)), GL_ERR_INPUT, "produced");
    cr_assert_eq(gl_remove_value(f.g, unused), GL_OK, "%s", gl_error_message());
    cr_assert_eq(f.g->n_inits, 1);
    cr_assert_null(gl_find_value(f.g, "unused"));
    VERIFY_OK(f.g);

    /* The else branch stops reading x: its capture goes, and so does If's implicit x. */
    gl_node *ident = f.else_g->nodes[0];
    gl_value *cx = f.else_g->captures[0];
    gl_value *cw = gl_resolve_value(f.else_g, "w");
    cr_assert_eq(gl_set_input(f.else_g, ident, 0, cw), GL_OK);
    cr_assert_eq(gl_remove_value(f.else_g, cx), GL_OK, "%s", gl_error_message());
    cr_assert_eq(count_use(f.x, f.iff, GL_USE_IMPLICIT), 0);
    cr_assert_eq(count_use(f.w, f.iff, GL_USE_IMPLICIT), 1);
    cr_assert_eq(f.iff->n_implicit, 2);
    VERIFY_OK(f.g);
    gl_model_free(f.m);
}

/* ---- replace_all_uses ---- */

Test(ir, replace_all_uses_moves_every_explicit_use_but_not_outputs)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    gl_value *z = tu_input(g, "z", GL_DT_FLOAT, 1, D2);
    gl_node *sq = tu_node(g, "Mul", "sq", 2, x, x);
    gl_node *add = tu_node(g, "Add", "add", 2, out0(sq), x);
    tu_output(g, x);
    tu_output(g, out0(add));
    cr_assert_eq(gl_replace_all_uses(g, x, z), GL_OK);
    VERIFY_OK(g);
    cr_assert_eq(x->n_uses, 0);
    cr_assert_eq(z->n_uses, 3);
    cr_assert_eq(sq->inputs[0], z);
    cr_assert_eq(sq->inputs[1], z);
    cr_assert_eq(add->inputs[1], z);
    cr_assert_eq(g->outputs[0], x, "output status does not move");
    cr_assert_eq(x->n_output_refs, 1);
    cr_assert_eq(gl_replace_all_uses(g, z, z), GL_OK);
    cr_assert_eq(z->n_uses, 3);
    gl_model_free(m);
}

Test(ir, replace_all_uses_repoints_subgraph_captures)
{
    fixture f = make_fixture();
    gl_value *r = out0(f.relu);
    gl_node *sig = tu_node(f.g, "Sigmoid", "sig", 1, out0(f.mul));
    /* sig comes after If; put it first so the result stays sorted. */
    gl_node *order[] = {f.mul, sig, f.relu, f.iff};
    cr_assert_eq(gl_graph_set_order(f.g, order, 4), GL_OK);
    cr_assert_eq(gl_replace_all_uses(f.g, r, out0(sig)), GL_OK);
    VERIFY_OK(f.g);
    cr_assert_eq(count_use(r, f.iff, GL_USE_IMPLICIT), 0);
    cr_assert_eq(count_use(out0(sig), f.iff, GL_USE_IMPLICIT), 1);
    cr_assert_eq(f.iff->implicit[0], out0(sig));
    cr_assert_eq(f.capture->outer, out0(sig));
    cr_assert_str_eq(f.capture->name, "sig_out0", "captures are named after what they read");
    cr_assert_eq(gl_find_value(f.then_g, "sig_out0"), f.capture);
    cr_assert_eq(r->n_output_refs, 1, "still the graph output");
    gl_model_free(f.m);
}

Test(ir, replace_all_uses_merges_two_captures_of_one_value)
{
    fixture f = make_fixture();
    /* The then-branch reads both x and relu_out0, and returns x as it is. */
    gl_value *cx = gl_resolve_value(f.then_g, "x");
    gl_node *add = tu_node(f.then_g, "Add", "add", 2, f.capture, cx);
    tu_output(f.then_g, cx);
    VERIFY_OK(f.g);
    cr_assert_eq(gl_replace_all_uses(f.g, f.x, out0(f.relu)), GL_OK);
    cr_assert_eq(f.then_g->n_captures, 1, "x's capture merged into relu_out0's");
    cr_assert_eq(add->inputs[0], f.capture);
    cr_assert_eq(add->inputs[1], f.capture);
    cr_assert_eq(f.then_g->outputs[1], f.capture);
    cr_assert_eq(count_use(out0(f.relu), f.iff, GL_USE_IMPLICIT), 1);
    cr_assert_eq(f.iff->n_implicit, 1);
    cr_assert_eq(f.else_g->captures[0]->outer, out0(f.relu));
    cr_assert_str_eq(f.else_g->captures[0]->name, "relu_out0");
    /* Mul now reads its own consumer's output: the unsorted check must see the cycle. */
    cr_assert_eq(gl_graph_verify(f.g, true), GL_ERR_INTERNAL);
    cr_assert(strstr(gl_error_message(), "node 'mul' (Mul) lies on a cycle"), "%s",
              gl_error_message());
    cr_assert_eq(gl_set_input(f.g, f.mul, 0, f.w), GL_OK);
    VERIFY_OK(f.g);
    gl_model_free(f.m);
}

/* ---- move_output ---- */

Test(ir, move_output_keeps_graph_output_names)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    gl_node *a = tu_node(g, "Relu", "a", 1, x);
    cr_assert_eq(gl_rename_value(g, out0(a), "y"), GL_OK);
    gl_value *y = out0(a);
    y->type.kind = GL_TYPE_TENSOR;
    y->type.dtype = GL_DT_FLOAT;
    gl_node *consumer = tu_node(g, "Neg", "neg", 1, y);
    tu_output(g, y);
    gl_node *b = tu_node(g, "Sigmoid", "b", 1, x);
    gl_value *b_old = out0(b);
    cr_assert_eq(gl_move_output(g, a, 0, b, 0), GL_OK, "%s", gl_error_message());
    cr_assert_eq(out0(b), y);
    cr_assert_str_eq(y->name, "y");
    cr_assert_eq(y->producer, b);
    cr_assert_eq(g->outputs[0], y);
    cr_assert_eq(consumer->inputs[0], y);
    cr_assert_neq(out0(a), y);
    cr_assert_str_eq(out0(a)->name, "a_out0");
    cr_assert_eq(out0(a)->type.dtype, GL_DT_FLOAT, "the fresh value keeps the type");
    cr_assert_null(gl_find_value(g, "b_out0"), "b's old output was freed");
    (void)b_old;
    /* b now comes after its consumer: only the unsorted check passes until reordered. */
    cr_assert_eq(gl_graph_verify(g, true), GL_OK, "%s", gl_error_message());
    gl_node *order[] = {a, b, consumer};
    cr_assert_eq(gl_graph_set_order(g, order, 3), GL_OK);
    VERIFY_OK(g);
    cr_assert_eq(gl_remove_node(g, a), GL_OK, "%s", gl_error_message());
    VERIFY_OK(g);
    /* A used destination output is refused. */
    gl_node *c = tu_node(g, "Abs", "c", 1, x);
    cr_assert_eq(gl_move_output(g, c, 0, b, 0), GL_ERR_INPUT);
    cr_assert_eq(gl_move_output(g, c, 3, b, 0), GL_ERR_INPUT);
    VERIFY_OK(g);
    gl_model_free(m);
}

Test(ir, drop_output_omits_an_unused_optional_output)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    gl_node *d = gl_add_node(g, "Dropout", "", "drop", &x, 1, 2);
    gl_node *use = tu_node(g, "Relu", "r", 1, d->outputs[0]);
    tu_output(g, out0(use));
    cr_assert_eq(gl_drop_output(g, d, 1), GL_OK, "%s", gl_error_message());
    cr_assert_null(d->outputs[1]);
    cr_assert_null(gl_find_value(g, "drop_out1"));
    cr_assert_eq(gl_drop_output(g, d, 1), GL_OK, "already omitted");
    cr_assert_eq(gl_drop_output(g, d, 0), GL_ERR_INPUT, "used");
    cr_assert_eq(gl_drop_output(g, use, 0), GL_ERR_INPUT, "graph output");
    cr_assert_eq(gl_drop_output(g, d, 2), GL_ERR_INPUT, "no such slot");
    VERIFY_OK(g);
    cr_assert_eq(gl_remove_node(g, use), GL_ERR_INPUT);
    gl_model_free(m);
}

/* ---- names ---- */

Test(ir, unique_names_take_the_first_free_suffix)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *t0 = gl_add_value(g, "t");
    gl_value *t1 = gl_add_value(g, "t");
    gl_value *t2 = gl_add_value(g, "t");
    cr_assert_str_eq(t0->name, "t");
    cr_assert_str_eq(t1->name, "t_1");
    cr_assert_str_eq(t2->name, "t_2");
    cr_assert_eq(gl_remove_value(g, t1), GL_OK);
    cr_assert_str_eq(gl_add_value(g, "t")->name, "t_1", "a freed suffix is reused");
    cr_assert_str_eq(gl_add_value(g, "t")->name, "t_3");
    cr_assert_eq(gl_rename_value(g, t2, "u"), GL_OK);
    cr_assert_str_eq(gl_add_value(g, "t")->name, "t_2", "a renamed-away suffix is free again");
    /* A literal "t_4" taken by someone else is skipped. */
    gl_add_value(g, "t_4");
    cr_assert_str_eq(gl_add_value(g, "t")->name, "t_5");
    char *s = gl_unique_value_name(g, "fresh");
    cr_assert_str_eq(s, "fresh");
    free(s);
    cr_assert_eq(gl_rename_value(g, t0, "u"), GL_ERR_INPUT);
    cr_assert(strstr(gl_error_message(), "'u'"), "%s", gl_error_message());
    cr_assert_eq(gl_rename_value(g, t0, ""), GL_ERR_INPUT);
    cr_assert_eq(gl_find_value(g, "t"), t0);
    VERIFY_OK(g);
    gl_model_free(m);
}

Test(ir, generated_node_names_and_output_names)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    /* A file node literally named like the next generated name forces a suffix. */
    gl_node *squat = tu_node(g, "Abs", "Relu_1", 1, x);
    gl_node *r = gl_add_node(g, "Relu", "", NULL, &x, 1, 2);
    cr_assert_eq(r->id, 1);
    cr_assert_str_eq(r->name, "Relu_1_1");
    cr_assert(r->name_generated);
    cr_assert_not(squat->name_generated);
    cr_assert_str_eq(r->outputs[0]->name, "Relu_1_1_out0");
    cr_assert_str_eq(r->outputs[1]->name, "Relu_1_1_out1");
    /* Explicit names are kept verbatim even when repeated; lookup finds the first. */
    gl_node *d1 = tu_node(g, "Neg", "dup", 1, x);
    gl_node *d2 = tu_node(g, "Neg", "dup", 1, x);
    cr_assert_str_eq(d2->name, "dup");
    cr_assert_str_eq(out0(d2)->name, "dup_out0_1");
    cr_assert_eq(gl_find_node(g, "dup"), d1);
    char *nn = gl_unique_node_name(g, "dup");
    cr_assert_str_eq(nn, "dup_1");
    free(nn);
    cr_assert_eq(gl_remove_node(g, d1), GL_OK);
    cr_assert_eq(gl_find_node(g, "dup"), d2, "the next node of that name takes over");
    cr_assert_eq(gl_remove_node(g, d2), GL_OK);
    cr_assert_null(gl_find_node(g, "dup"));
    VERIFY_OK(g);
    gl_model_free(m);
}

/* ---- nodes whose outputs are named by the caller ---- */

Test(ir, add_node_named_gives_outputs_exactly_those_names)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    const char *names[] = {"a", "", NULL, "d"};
    gl_node *n = gl_add_node_named(g, "Split", "", "split", &x, 1, names, 4);
    cr_assert_not_null(n, "%s", gl_error_message());
    cr_assert_eq(n->n_outputs, 4);
    cr_assert_str_eq(n->outputs[0]->name, "a");
    cr_assert_null(n->outputs[1], "\"\" is an omitted output");
    cr_assert_null(n->outputs[2], "NULL is an omitted output");
    cr_assert_str_eq(n->outputs[3]->name, "d");
    cr_assert_eq(n->outputs[3]->producer, n);
    cr_assert_eq(n->outputs[3]->producer_slot, 3);
    cr_assert_eq(gl_find_value(g, "a"), n->outputs[0]);
    cr_assert_eq(gl_find_value(g, "d"), n->outputs[3]);
    cr_assert_null(gl_find_value(g, "split_out0"), "no fresh name is made on the way");
    cr_assert_eq(g->n_values, 3, "x, a, d and nothing else");
    cr_assert_neq(n->outputs[0]->id, n->outputs[3]->id);
    cr_assert_neq(n->outputs[0]->id, x->id);
    cr_assert_eq(count_use(x, n, 0), 1);
    /* The names are the caller's: copies are kept. */
    char buf[] = "e";
    const char *mine[] = {buf};
    gl_node *e = gl_add_node_named(g, "Neg", "", "neg", &n->outputs[3], 1, mine, 1);
    buf[0] = 'z';
    cr_assert_str_eq(out0(e)->name, "e");
    tu_output(g, out0(e));
    VERIFY_OK(g);
    gl_model_free(m);
}

typedef struct name_clash_case {
    const char *what;
    const char *names[3];
    size_t count;
    const char *expect; /* in the message */
} name_clash_case;

static const name_clash_case name_clash_cases[] = {
    {"a graph input's name", {"x"}, 1, "output 0 'x': name taken"},
    {"another node's output", {"fresh", "y"}, 2, "output 1 'y': name taken"},
    {"twice in the node itself", {"p", "q", "p"}, 3, "output 2 'p': name taken"},
};

Test(ir, add_node_named_refuses_a_taken_name_and_changes_nothing)
{
    for (size_t c = 0; c < GL_ARRAY_LEN(name_clash_cases); c++) {
        const name_clash_case *tc = &name_clash_cases[c];
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
        gl_node *first = gl_add_node_named(g, "Relu", "", "first", &x, 1,
                                           (const char *[]){"y"}, 1);
        cr_assert_not_null(first, "%s", gl_error_message());
        size_t n_nodes = g->n_nodes, n_values = g->n_values, x_uses = x->n_uses;
        uint32_t next_node = g->next_node_id, next_value = g->next_value_id;
        gl_node *n = gl_add_node_named(g, "Split", "", "bad", &x, 1, tc->names, tc->count);
        cr_assert_null(n, "%s", tc->what);
        cr_assert(strstr(gl_error_message(), tc->expect), "%s: %s", tc->what,
                  gl_error_message());
        cr_assert(strstr(gl_error_message(), "'bad' (Split)"), "%s", gl_error_message());
        cr_assert_eq(g->n_nodes, n_nodes, "%s", tc->what);
        cr_assert_eq(g->n_values, n_values, "%s", tc->what);
        cr_assert_eq(g->next_node_id, next_node, "%s: no id spent", tc->what);
        cr_assert_eq(g->next_value_id, next_value, "%s", tc->what);
        cr_assert_eq(x->n_uses, x_uses, "%s: no use left behind", tc->what);
        cr_assert_null(gl_find_node(g, "bad"), "%s", tc->what);
        cr_assert_null(gl_find_value(g, "fresh"), "%s: claimed names are released", tc->what);
        cr_assert_null(gl_find_value(g, "p"), "%s", tc->what);
        cr_assert_eq(gl_find_value(g, "x"), x, "%s: the holder keeps its name", tc->what);
        cr_assert_eq(gl_find_value(g, "y"), out0(first), "%s", tc->what);
        /* The released names are free again. */
        gl_node *ok = gl_add_node_named(g, "Neg", "", "ok", &x, 1,
                                        (const char *[]){"fresh", "p"}, 2);
        cr_assert_not_null(ok, "%s: %s", tc->what, gl_error_message());
        cr_assert_eq(gl_find_value(g, "p"), ok->outputs[1]);
        tu_output(g, out0(first));
        VERIFY_OK(g);
        gl_model_free(m);
    }
}

/* gl_add_node_take: the strings are the graph's on success (freed with it: the sanitizer
 * build's leak check and double-free detection make this test fail otherwise) and stay
 * the caller's on failure. */
Test(ir, add_node_take_takes_the_strings_only_on_success)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    char *op = strdup("Dropout"), *name = strdup("drop");
    char *outs[] = {strdup("y"), strdup("")};
    gl_node *n = gl_add_node_take(g, &op, "", &name, &x, 1, outs, 2);
    cr_assert_not_null(n, "%s", gl_error_message());
    cr_assert_null(op, "taken");
    cr_assert_null(name, "taken");
    cr_assert_null(outs[0], "taken");
    cr_assert_str_eq(outs[1], "", "an omitted output's \"\" stays the caller's");
    free(outs[1]);
    cr_assert_str_eq(n->op_type, "Dropout");
    cr_assert_str_eq(n->name, "drop");
    cr_assert_not(n->name_generated);
    cr_assert_str_eq(out0(n)->name, "y");
    cr_assert_null(n->outputs[1]);

    char *op2 = strdup("Neg"), *name2 = strdup("neg");
    char *outs2[] = {strdup("z"), strdup("y")};
    cr_assert_null(gl_add_node_take(g, &op2, "", &name2, &x, 1, outs2, 2));
    cr_assert(strstr(gl_error_message(), "output 1 'y': name taken"), "%s", gl_error_message());
    cr_assert_str_eq(op2, "Neg", "nothing taken on failure");
    cr_assert_str_eq(name2, "neg");
    cr_assert_str_eq(outs2[0], "z");
    cr_assert_null(gl_find_value(g, "z"));
    free(op2);
    free(name2);
    free(outs2[0]);
    free(outs2[1]);

    char *op3 = strdup("Relu"), *unnamed = NULL;
    char *outs3[] = {strdup("r")};
    gl_node *r = gl_add_node_take(g, &op3, "", &unnamed, &n->outputs[0], 1, outs3, 1);
    cr_assert_not_null(r, "%s", gl_error_message());
    cr_assert(r->name_generated);
    cr_assert_str_eq(r->name, "Relu_1", "<op>_<id>");
    cr_assert_null(op3);
    tu_output(g, out0(r));
    VERIFY_OK(g);
    gl_model_free(m);
#ifdef HAVE_LSAN
    cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "leaks: see stderr");
#endif
}

Test(ir, reserve_keeps_every_name_findable)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *v = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    gl_node *first = tu_node(g, "Relu", "first", 1, v);
    /* Far past the current capacity: the names added so far are rehashed. */
    gl_graph_reserve(g, 5000, 5000);
    cr_assert_geq(g->cap_nodes, g->n_nodes + 5000);
    cr_assert_geq(g->cap_values, g->n_values + 5000);
    cr_assert_eq(gl_find_node(g, "first"), first);
    cr_assert_eq(gl_find_value(g, "x"), v);
    cr_assert_eq(gl_find_value(g, "first_out0"), out0(first));
    gl_node **nodes = g->nodes;
    v = out0(first);
    for (int i = 0; i < 5000; i++) {
        char name[32], out[32];
        snprintf(name, sizeof(name), "n%d", i);
        snprintf(out, sizeof(out), "v%d", i);
        gl_node *n = gl_add_node_named(g, "Neg", "", name, &v, 1, (const char *[]){out}, 1);
        cr_assert_not_null(n, "%s", gl_error_message());
        v = out0(n);
    }
    cr_assert_eq(g->nodes, nodes, "the reserved array was never reallocated");
    cr_assert_eq(gl_find_node(g, "n4321"), g->nodes[4322]);
    cr_assert_eq(gl_find_value(g, "v4999"), v);
    cr_assert_null(gl_find_value(g, "v5000"));
    gl_graph_reserve(g, 0, 0); /* nothing to do */
    tu_output(g, v);
    VERIFY_OK(g);
    gl_model_free(m);
}

/* ---- order, compact, provenance ---- */

Test(ir, set_order_checks_the_permutation)
{
    fixture f = make_fixture();
    gl_node *backwards[] = {f.iff, f.relu, f.mul};
    cr_assert_eq(gl_graph_set_order(f.g, backwards, 3), GL_OK);
    cr_assert_eq(f.g->nodes[0], f.iff);
    cr_assert_eq(f.mul->index, 2);
    cr_assert_eq(gl_graph_verify(f.g, true), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_graph_verify(f.g, false), GL_ERR_INTERNAL);
    cr_assert(strstr(gl_error_message(), "comes later"), "%s", gl_error_message());
    gl_node *dup[] = {f.mul, f.mul, f.iff};
    cr_assert_eq(gl_graph_set_order(f.g, dup, 3), GL_ERR_INTERNAL);
    cr_assert_eq(gl_graph_set_order(f.g, dup, 2), GL_ERR_INTERNAL);
    cr_assert_eq(f.g->nodes[0], f.iff, "refused orders change nothing");
    gl_node *good[] = {f.mul, f.relu, f.iff};
    cr_assert_eq(gl_graph_set_order(f.g, good, 3), GL_OK);
    VERIFY_OK(f.g);
    gl_model_free(f.m);
}

Test(ir, provenance_set_and_inherit)
{
    fixture f = make_fixture();
    gl_node_set_provenance(f.mul, (const uint32_t[]){4, 1}, 2, -1);
    gl_node_set_provenance(f.relu, (const uint32_t[]){2, 4}, 2, -1);
    gl_node *fused = tu_node(f.g, "FusedMulRelu", "fused", 1, f.x);
    cr_assert_eq(fused->prov.n_origins, 0, "no origins implied");
    cr_assert_eq(fused->prov.decision, -1);
    gl_node_inherit_provenance(fused, (gl_node *const[]){f.mul, f.relu}, 2, 7);
    cr_assert_eq(fused->prov.n_origins, 3);
    cr_assert_eq(fused->prov.origins[0], 1);
    cr_assert_eq(fused->prov.origins[1], 2);
    cr_assert_eq(fused->prov.origins[2], 4);
    cr_assert_eq(fused->prov.decision, 7);
    gl_node_inherit_provenance(fused, NULL, 0, 8);
    cr_assert_eq(fused->prov.n_origins, 3, "its own origins stay");
    gl_node_set_provenance(fused, NULL, 0, 9);
    cr_assert_eq(fused->prov.n_origins, 0);
    gl_model_free(f.m);
}

/* A lone origin is stored in the node itself: setting it from its own storage, cloning
 * and freeing must each keep it right (the sanitizer build catches a clone that still
 * points into the source node). */
Test(ir, provenance_with_one_origin)
{
    fixture f = make_fixture();
    gl_node_set_provenance(f.mul, (const uint32_t[]){42}, 1, -1);
    cr_assert_eq(f.mul->prov.n_origins, 1);
    cr_assert_eq(f.mul->prov.origins[0], 42);
    gl_node_set_provenance(f.mul, f.mul->prov.origins, 1, 5);
    cr_assert_eq(f.mul->prov.origins[0], 42, "set from its own storage");
    cr_assert_eq(f.mul->prov.decision, 5);
    gl_node_inherit_provenance(f.relu, (gl_node *const[]){f.mul}, 1, 6);
    cr_assert_eq(f.relu->prov.n_origins, 1);
    cr_assert_eq(f.relu->prov.origins[0], 42);
    gl_model *c = gl_model_clone(f.m);
    gl_node *cmul = c->graph->nodes[f.mul->index];
    cr_assert_neq(cmul->prov.origins, f.mul->prov.origins, "the clone has its own");
    gl_model_free(f.m);
    cr_assert_eq(cmul->prov.n_origins, 1);
    cr_assert_eq(cmul->prov.origins[0], 42);
    gl_node_set_provenance(cmul, (const uint32_t[]){1, 2}, 2, 7);
    cr_assert_eq(cmul->prov.origins[1], 2);
    gl_node_set_provenance(cmul, cmul->prov.origins + 1, 1, 8);
    cr_assert_eq(cmul->prov.n_origins, 1);
    cr_assert_eq(cmul->prov.origins[0], 2, "from the array it replaces");
    gl_model_free(c);
}

/* ---- attributes ---- */

Test(ir, attributes_set_get_replace_remove)
{
    fixture f = make_fixture();
    gl_node *n = f.mul;
    gl_node_set_attr_int(n, "axis", 3);
    gl_node_set_attr_float(n, "alpha", 0.5f);
    gl_node_set_attr_string(n, "mode", "nearest");
    gl_node_set_attr_ints(n, "perm", (const int64_t[]){0, 2, 1}, 3);
    gl_node_set_attr_floats(n, "scales", (const float[]){1.5f}, 1);
    cr_assert_eq(gl_node_attr_int(n, "axis", -1), 3);
    cr_assert_eq(gl_node_attr_int(n, "alpha", -1), -1, "wrong type gives the default");
    cr_assert_float_eq(gl_node_attr_float(n, "alpha", 0), 0.5f, 0);
    cr_assert_str_eq(gl_node_attr_string(n, "mode", "x"), "nearest");
    cr_assert_str_eq(gl_node_attr_string(n, "absent", "dflt"), "dflt");
    gl_attr *perm = gl_node_attr(n, "perm");
    cr_assert_eq(perm->type, GL_ATTR_INTS);
    cr_assert_eq(perm->n, 3);
    cr_assert_eq(perm->ints[2], 1);
    gl_node_set_attr_int(n, "axis", -2);
    cr_assert_eq(n->n_attrs, 5, "replacing keeps one attribute");
    cr_assert_eq(gl_node_attr_int(n, "axis", 0), -2);
    gl_node_set_attr_string(n, "axis", "now a string");
    cr_assert_eq(gl_node_attr(n, "axis")->type, GL_ATTR_STRING);
    cr_assert(gl_node_remove_attr(n, "axis"));
    cr_assert_not(gl_node_remove_attr(n, "axis"));
    cr_assert_null(gl_node_attr(n, "axis"));
    cr_assert_eq(n->n_attrs, 4);
    /* Dropping a branch drops the implicit inputs only it needed. */
    cr_assert(gl_node_remove_attr(f.iff, "else_branch"));
    cr_assert_eq(f.iff->n_implicit, 1);
    cr_assert_eq(count_use(f.x, f.iff, GL_USE_IMPLICIT), 0);
    VERIFY_OK(f.g);
    gl_model_free(f.m);
}

/* Graphs built by passes and tests are not checked against op schemas: an attribute of
 * another type, a list without its array or an unbound reference must read as absent,
 * never as a value of another type (and never through NULL). */
Test(ir, accessors_never_read_one_type_as_another)
{
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, D2);
    gl_node *n = tu_node(m->graph, "Transpose", "t", 1, x);
    gl_node_set_attr_floats(n, "perm", (const float[]){1, 0}, 2);
    gl_node_set_attr_float(n, "f", 2.5f);
    gl_node_set_attr_int(n, "i", 3);
    gl_attr a = {.name = gl_xstrdup("hollow"), .type = GL_ATTR_INTS, .n = 3};
    gl_node_take_attr(n, &a);
    a = (gl_attr){.name = gl_xstrdup("no_tensor"), .type = GL_ATTR_TENSOR};
    gl_node_take_attr(n, &a);
    a = (gl_attr){.name = gl_xstrdup("no_graph"), .type = GL_ATTR_GRAPH};
    gl_node_take_attr(n, &a);
    a = (gl_attr){.name = gl_xstrdup("ref"), .type = GL_ATTR_INT, .i = 9,
                  .ref_attr_name = gl_xstrdup("caller")};
    gl_node_take_attr(n, &a);

    static const struct {
        const char *name;
        gl_attr_type type;
        bool found;
    } typed[] = {
        {"perm", GL_ATTR_FLOATS, true},  {"perm", GL_ATTR_INTS, false},
        {"f", GL_ATTR_FLOAT, true},      {"f", GL_ATTR_INT, false},
        {"i", GL_ATTR_INT, true},        {"i", GL_ATTR_STRING, false},
        {"hollow", GL_ATTR_INTS, false}, {"no_tensor", GL_ATTR_TENSOR, false},
        {"no_graph", GL_ATTR_GRAPH, false}, {"ref", GL_ATTR_INT, false},
        {"absent", GL_ATTR_INT, false},
    };
    for (size_t k = 0; k < GL_ARRAY_LEN(typed); k++)
        cr_expect_eq(gl_node_attr_typed(n, typed[k].name, typed[k].type) != NULL,
                     typed[k].found, "'%s' as %s", typed[k].name,
                     gl_attr_type_name(typed[k].type));

    cr_expect_eq(gl_node_attr_int(n, "f", 7), 7);
    cr_expect_float_eq(gl_node_attr_float(n, "i", 7.0f), 7.0f, 0);
    cr_expect_str_eq(gl_node_attr_string(n, "i", "dflt"), "dflt");
    cr_expect_eq(gl_node_attr_int(n, "ref", 5), 5, "an unbound reference has no value");
    size_t count = 99;
    cr_expect_null(gl_attr_ints(n, "perm", &count));
    cr_expect_eq(count, 0);
    cr_expect_not_null(gl_attr_floats(n, "perm", &count));
    cr_expect_eq(count, 2);
    cr_expect_null(gl_attr_ints(n, "hollow", &count));
    cr_expect_eq(count, 0);

    int64_t perm[GL_MAX_RANK];
    int rank = -1;
    cr_expect(!gl_tp_read_perm(n, perm, &rank), "a floats perm is not the default perm");
    gl_node_remove_attr(n, "perm");
    a = (gl_attr){.name = gl_xstrdup("perm"), .type = GL_ATTR_INTS, .n = 2};
    gl_node_take_attr(n, &a);
    cr_expect(!gl_tp_read_perm(n, perm, &rank), "a perm without its ints is not read");
    cr_expect_str_eq(gl_attr_type_name(GL_ATTR_SPARSE_TENSORS), "sparse_tensors");
    cr_expect_str_eq(gl_attr_type_name((gl_attr_type)99), "?");
    gl_model_free(m);
}

Test(ir, node_is_accepts_only_the_default_domain)
{
    static const struct {
        const char *domain, *op, *query;
        bool expect;
    } rows[] = {
        {"", "Relu", "Relu", true},
        {"ai.onnx", "Relu", "Relu", true},
        {"com.microsoft", "Relu", "Relu", false},
        {"", "Relu", "relu", false},
        {"", "Relu", "Rel", false},
    };
    gl_model *m = tu_model(13);
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_node *n = gl_add_node(m->graph, rows[i].op, rows[i].domain, NULL, NULL, 0, 1);
        cr_expect_eq(gl_node_is(n, rows[i].query), rows[i].expect, "row %zu", i);
    }
    gl_model_free(m);
}

Test(ir, opsets)
{
    gl_model *m = tu_model(13);
    cr_assert_eq(gl_model_opset(m, ""), 13);
    cr_assert_eq(gl_model_opset(m, "ai.onnx"), 13);
    cr_assert_eq(gl_model_opset(m, "com.microsoft"), 0);
    gl_model_set_opset(m, "ai.onnx", 17);
    gl_model_set_opset(m, "com.microsoft", 1);
    cr_assert_eq(m->n_opsets, 2);
    cr_assert_eq(gl_model_opset(m, ""), 17);
    cr_assert_eq(gl_model_opset(m, "com.microsoft"), 1);
    gl_model_free(m);
}

/* ---- types ---- */

Test(ir, type_format_table)
{
    static const struct {
        gl_type_kind kind;
        gl_dtype dt;
        int rank;
        int64_t dims[4];
        const char *syms[4];
        const char *expect;
    } rows[] = {
        {GL_TYPE_NONE, GL_DT_UNDEFINED, -1, {0}, {0}, "?"},
        {GL_TYPE_TENSOR, GL_DT_FLOAT, 2, {2, 3}, {0}, "float[2,3]"},
        {GL_TYPE_TENSOR, GL_DT_FLOAT, -1, {0}, {0}, "float[?]"},
        {GL_TYPE_TENSOR, GL_DT_INT64, 0, {0}, {0}, "int64[]"},
        {GL_TYPE_TENSOR, GL_DT_FLOAT16, 3, {-1, -1, 3}, {"N", NULL, NULL}, "float16[N,?,3]"},
        {GL_TYPE_TENSOR, GL_DT_UNDEFINED, 1, {1}, {0}, "?[1]"},
        {GL_TYPE_TENSOR, GL_DT_BOOL, 1, {0}, {0}, "bool[0]"},
        {GL_TYPE_OPAQUE, GL_DT_UNDEFINED, -1, {0}, {0}, "opaque"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_type t = {.kind = rows[i].kind, .dtype = rows[i].dt};
        gl_shape_init_unknown(&t.shape);
        gl_shape_set_rank(&t.shape, rows[i].rank);
        for (int d = 0; d < rows[i].rank; d++) {
            if (rows[i].syms[d])
                gl_dim_set_sym(&t.shape.dims[d], rows[i].syms[d]);
            else
                t.shape.dims[d].value = rows[i].dims[d];
        }
        char buf[64];
        int n = gl_type_format(&t, buf, sizeof(buf));
        cr_expect_str_eq(buf, rows[i].expect, "row %zu", i);
        cr_expect_eq(n, (int)strlen(rows[i].expect), "row %zu", i);
        gl_type copy = {0};
        gl_shape_init_unknown(&copy.shape);
        gl_type_copy(&copy, &t);
        cr_expect(gl_shape_equal(&copy.shape, &t.shape), "row %zu", i);
        gl_type_free(&copy);
        gl_type_free(&t);
    }
    /* Truncation: returns the full length, writes a terminated prefix. */
    gl_type t = {.kind = GL_TYPE_TENSOR, .dtype = GL_DT_FLOAT};
    gl_shape_init_unknown(&t.shape);
    gl_shape_set_rank(&t.shape, 2);
    t.shape.dims[0].value = 2;
    t.shape.dims[1].value = 3;
    char small[5];
    cr_assert_eq(gl_type_format(&t, small, sizeof(small)), 10);
    cr_assert_str_eq(small, "floa");
    gl_type_free(&t);
}

Test(ir, shape_equal_compares_symbols)
{
    gl_shape a, b;
    gl_shape_init_unknown(&a);
    gl_shape_init_unknown(&b);
    cr_assert(gl_shape_equal(&a, &b), "both unknown");
    gl_shape_set_rank(&a, 2);
    cr_assert_not(gl_shape_equal(&a, &b));
    gl_shape_set_rank(&b, 2);
    cr_assert(gl_shape_equal(&a, &b));
    gl_dim_set_sym(&a.dims[0], "N");
    cr_assert_not(gl_shape_equal(&a, &b));
    gl_dim_set_sym(&b.dims[0], "M");
    cr_assert_not(gl_shape_equal(&a, &b));
    gl_dim_set_sym(&b.dims[0], "N");
    cr_assert(gl_shape_equal(&a, &b));
    gl_dim_set_sym(&b.dims[0], b.dims[0].sym); /* aliasing must be safe */
    cr_assert_str_eq(b.dims[0].sym, "N");
    b.dims[1].value = 4;
    cr_assert_not(gl_shape_equal(&a, &b));
    gl_shape_copy(&a, &b);
    cr_assert(gl_shape_equal(&a, &b));
    cr_assert_neq(a.dims[0].sym, b.dims[0].sym, "deep copy");
    gl_shape_free(&a);
    gl_shape_free(&b);
    cr_assert_eq(a.rank, GL_RANK_UNKNOWN);
}

/* ---- clone ---- */

static gl_model *rich_model(void)
{
    fixture f = make_fixture();
    gl_model *m = f.m;
    m->producer_name = strdup("test");
    m->doc_string = strdup("doc");
    m->has_model_version = true;
    m->model_version = 5;
    m->metadata = calloc(1, sizeof(gl_kv));
    m->metadata[0] = (gl_kv){strdup("k"), strdup("v")};
    m->n_metadata = 1;
    m->training_info = calloc(1, sizeof(gl_bytes));
    m->training_info[0] = (gl_bytes){3, (uint8_t *)strdup("abc")};
    m->n_training_info = 1;
    m->path = strdup("<memory>");
    gl_node_set_attr_ints(f.mul, "perm", (const int64_t[]){1, 0}, 2);
    gl_node_set_provenance(f.mul, (const uint32_t[]){0}, 1, -1);
    gl_graph_record_origins(f.g);
    gl_dim_set_sym(&f.x->type.shape.dims[0], "N");
    m->functions = calloc(1, sizeof(gl_function));
    m->n_functions = 1;
    gl_function *fn = &m->functions[0];
    fn->name = strdup("fused");
    fn->domain = strdup("graphlab.fused");
    fn->body = gl_graph_new(m, NULL, "fused");
    gl_value *a = gl_add_value(fn->body, "a");
    gl_graph_add_input(fn->body, a);
    tu_output(fn->body, out0(tu_node(fn->body, "Relu", "r", 1, a)));
    /* Two levels of captures: then -> inner, both reading w. */
    gl_node *inner_if = tu_node(f.then_g, "If", "inner_if", 1, gl_resolve_value(f.then_g, "cond"));
    attach_graph(inner_if, "then_branch", branch(inner_if, "inner", "w", "Abs"));
    /* A hole, so the clone's index mapping is exercised with one. */
    gl_node *dead = tu_node(f.g, "Neg", "dead", 1, f.x);
    gl_remove_node(f.g, dead);
    return m;
}

/* Every pointer reachable from `g` stays inside graphs of model `m`. */
static void assert_self_contained(const gl_graph *g, const gl_model *m)
{
    cr_assert_eq(g->model, m);
    for (size_t i = 0; i < g->n_values; i++) {
        const gl_value *v = g->values[i];
        if (!v)
            continue;
        cr_assert_eq(v->graph, g, "value '%s'", v->name);
        for (size_t u = 0; u < v->n_uses; u++)
            cr_assert_eq(v->uses[u].node->graph, g, "value '%s'", v->name);
        if (v->producer)
            cr_assert_eq(v->producer->graph, g);
        if (v->outer)
            cr_assert_eq(v->outer->graph, g->parent, "capture '%s'", v->name);
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        for (size_t a = 0; n && a < n->n_attrs; a++)
            if (n->attrs[a].g)
                assert_self_contained(n->attrs[a].g, m);
    }
}

Test(ir, clone_is_deep_and_independent)
{
    gl_model *m = rich_model();
    VERIFY_OK(m->graph);
    gl_model *c = gl_model_clone(m);
    gl_graph *cg = c->graph;
    VERIFY_OK(cg);
    VERIFY_OK(c->functions[0].body);
    assert_self_contained(cg, c);
    cr_assert_neq(cg, m->graph);
    cr_assert_eq(cg->live_nodes, m->graph->live_nodes);
    cr_assert_eq(cg->next_node_id, m->graph->next_node_id);
    cr_assert_str_eq(c->producer_name, "test");
    cr_assert_eq(c->model_version, 5);
    cr_assert_str_eq(c->metadata[0].value, "v");
    cr_assert_eq(c->training_info[0].len, 3);
    cr_assert_eq(memcmp(c->training_info[0].data, "abc", 3), 0);
    cr_assert_str_eq(c->functions[0].name, "fused");
    cr_assert_eq(c->functions[0].body->model, c);
    cr_assert_eq(gl_model_opset(c, ""), 13);
    cr_assert_str_eq(cg->origin_names[0], "mul");
    cr_assert_str_eq(cg->origin_names[2], "if");
    cr_assert_eq(cg->n_origin_names, m->graph->n_origin_names);
    cr_assert_eq(cg->origin_names, m->graph->origin_names, "never changed: shared, not copied");

    gl_node *cmul = gl_find_node(cg, "mul");
    gl_node *omul = gl_find_node(m->graph, "mul");
    cr_assert_neq(cmul, omul);
    cr_assert_eq(cmul->id, omul->id);
    cr_assert_eq(cmul->prov.origins[0], 0);
    cr_assert_eq(gl_node_attr(cmul, "perm")->ints[0], 1);
    gl_value *cx = gl_find_value(cg, "x");
    cr_assert_str_eq(cx->type.shape.dims[0].sym, "N");
    cr_assert_neq(cx->type.shape.dims[0].sym, gl_find_value(m->graph, "x")->type.shape.dims[0].sym);
    gl_node *cif = gl_find_node(cg, "if");
    cr_assert_eq(cif->implicit[0], gl_find_value(cg, "relu_out0"));
    gl_graph *cthen = gl_node_attr(cif, "then_branch")->g;
    gl_graph *cinner = gl_node_attr(gl_find_node(cthen, "inner_if"), "then_branch")->g;
    cr_assert_eq(cinner->captures[0]->outer, gl_find_value(cthen, "w"));
    cr_assert_eq(gl_find_value(cthen, "w")->outer, gl_find_value(cg, "w"));

    /* Initializer bytes are shared until one side writes. */
    gl_value *ow = gl_find_value(m->graph, "w"), *cw = gl_find_value(cg, "w");
    cr_assert_eq(cw->init->buf, ow->init->buf);
    cr_assert_eq(ow->init->buf->refs, 2);
    float *data = gl_tensor_make_writable(cw->init);
    cr_assert_neq(cw->init->buf, ow->init->buf);
    data[0] = 42;
    cr_assert_float_eq(((const float *)gl_tensor_data(ow->init))[0], 1.0f, 0);
    cr_assert_eq(ow->init->buf->refs, 1);

    /* Structural edits in the clone leave the original alone. */
    gl_graph_set_output(cg, 1, gl_find_value(cg, "relu_out0"));
    cr_assert_eq(gl_remove_node(cg, cif), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_rename_value(cg, cx, "renamed"), GL_OK);
    gl_node_set_attr_int(cmul, "extra", 1);
    gl_graph_compact(cg);
    VERIFY_OK(cg);
    VERIFY_OK(m->graph);
    cr_assert_not_null(gl_find_node(m->graph, "if"));
    cr_assert_not_null(gl_find_value(m->graph, "x"));
    cr_assert_null(gl_find_value(m->graph, "renamed"));
    cr_assert_null(gl_node_attr(omul, "extra"));
    cr_assert_eq(m->graph->live_nodes, 3);
    gl_model_free(c);
    VERIFY_OK(m->graph);
    gl_model_free(m);
}

/* A clone's name index is a copy of the source's (issue 23: no rehashing per name), so
 * it must name the clone's own nodes and values, keep how many nodes share a name, and
 * outlive the source. */
Test(ir, clone_name_index_is_the_clones)
{
    gl_model *m = rich_model();
    gl_graph *g = m->graph;
    gl_value *x = gl_find_value(g, "x");
    gl_node *twin1 = tu_node(g, "Abs", "twin", 1, x);
    tu_node(g, "Neg", "twin", 1, out0(twin1)); /* files may repeat node names */
    gl_model *c = gl_model_clone(m);
    gl_graph *cg = c->graph;
    gl_model_free(m); /* the clone's keys and objects must not be the source's */
    static const char *const nodes[] = {"mul", "if", "twin"};
    for (size_t i = 0; i < GL_ARRAY_LEN(nodes); i++) {
        gl_node *n = gl_find_node(cg, nodes[i]);
        cr_assert_not_null(n, "node '%s'", nodes[i]);
        cr_assert_eq(n->graph, cg, "node '%s'", nodes[i]);
        cr_assert_str_eq(n->name, nodes[i]);
    }
    cr_assert_str_eq(cg->origin_names[0], "mul", "the shared names outlive the source");
    static const char *const values[] = {"x", "w", "relu_out0"};
    for (size_t i = 0; i < GL_ARRAY_LEN(values); i++) {
        gl_value *v = gl_find_value(cg, values[i]);
        cr_assert_not_null(v, "value '%s'", values[i]);
        cr_assert_eq(v->graph, cg, "value '%s'", values[i]);
    }
    /* The first 'twin' goes: the name now finds the second; then neither. */
    gl_node *first = gl_find_node(cg, "twin");
    cr_assert_str_eq(first->op_type, "Abs");
    gl_value *after = out0(gl_find_node(cg, "twin"));
    gl_node *second = after->uses[0].node;
    cr_assert_eq(gl_set_input(cg, second, 0, gl_find_value(cg, "x")), GL_OK);
    cr_assert_eq(gl_remove_node(cg, first), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_find_node(cg, "twin"), second);
    cr_assert_eq(gl_remove_node(cg, second), GL_OK, "%s", gl_error_message());
    cr_assert_null(gl_find_node(cg, "twin"));
    /* Fresh names still see the taken ones. */
    char *fresh = gl_unique_value_name(cg, "x");
    cr_assert_str_neq(fresh, "x");
    free(fresh);
    VERIFY_OK(cg);
    gl_model_free(c);
}

/* Renames, each followed by a clone (which copies the name index slot for slot): the
 * source and the clone find a node under every name some node has, and under no other,
 * with names shared, unshared and shared again. The test of fused_diff that gave every
 * node one name wrote n->name itself and left the index naming freed strings; the clone
 * copied that index and lost a node (issue 23). */
typedef struct rename_case {
    const char *node;  /* the node renamed: the first so named */
    const char *to;
    const char *found; /* names some node now has, space-separated */
    const char *gone;  /* names no node has now */
} rename_case;

static void expect_names(const gl_graph *g, const rename_case *c, const char *which)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", c->found);
    for (char *name = strtok(buf, " "); name; name = strtok(NULL, " ")) {
        const gl_node *n = gl_find_node(g, name);
        cr_expect(n && n->graph == g && !strcmp(n->name, name), "%s: '%s' -> '%s': '%s' "
                  "not found", which, c->node, c->to, name);
    }
    if (*c->gone)
        cr_expect_null(gl_find_node(g, c->gone), "%s: '%s' -> '%s': '%s' still found", which,
                       c->node, c->to, c->gone);
    VERIFY_OK(g);
}

Test(ir, renamed_nodes_stay_in_the_index_of_the_graph_and_its_clone)
{
    static const rename_case cases[] = {
        {"a", "b", "b c", "a"},         /* onto a taken name: a and b share 'b' */
        {"b", "c", "b c", ""},          /* the first 'b' joins 'c' */
        {"b", "c", "c", "b"},           /* every node is 'c' */
        {"c", "fresh", "c fresh", ""},  /* one leaves the shared name */
        {"c", "c", "c fresh", ""},      /* onto its own name */
    };
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_node *a = tu_node(g, "Abs", "a", 1, x);
    gl_node *b = tu_node(g, "Neg", "b", 1, out0(a));
    gl_node *c = tu_node(g, "Relu", "c", 1, out0(b));
    tu_output(g, out0(c));
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_node *n = gl_find_node(g, cases[i].node);
        cr_assert_not_null(n, "case %zu: no node '%s'", i, cases[i].node);
        gl_rename_node(g, n, cases[i].to);
        cr_expect_str_eq(n->name, cases[i].to);
        expect_names(g, &cases[i], "source");
        gl_model *copy = gl_model_clone(m);
        expect_names(copy->graph, &cases[i], "clone");
        gl_model_free(copy);
    }
    gl_model_free(m);
}

Test(ir, build_clone_free_leaks_nothing)
{
#ifndef HAVE_LSAN
    cr_skip_test("LeakSanitizer is only in the --enable-sanitizers build");
#else
    gl_model *m = rich_model();
    gl_model *c = gl_model_clone(m);
    gl_replace_all_uses(c->graph, gl_find_value(c->graph, "x"), gl_find_value(c->graph, "w"));
    gl_model_free(m);
    gl_model_free(c);
    cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "leaks: see stderr");
#endif
}

/* ---- verify catches each kind of corruption ---- */

typedef struct corruption {
    const char *what;
    void (*poke)(fixture *f);
    bool allow_unsorted;
    const char *expect;
} corruption;

static void poke_producer(fixture *f) { out0(f->mul)->producer = f->relu; }
static void poke_producer_slot(fixture *f) { out0(f->mul)->producer_slot = 3; }
static void poke_drop_use(fixture *f) { f->x->n_uses--; /* drops the If's implicit use */ }
static void poke_drop_explicit_use(fixture *f) { f->w->n_uses = 0; }
static void poke_dup_use(fixture *f)
{
    f->w->uses = realloc(f->w->uses, 2 * sizeof(gl_use));
    f->w->uses[1] = f->w->uses[0];
    f->w->n_uses = f->w->cap_uses = 2;
}
static void poke_wrong_slot(fixture *f) { f->w->uses[0].slot = 0; }
static void poke_dangling(fixture *f) { gl_set_input(f->g, f->relu, 0, gl_add_value(f->g, "ghost")); }
static void poke_output_dangling(fixture *f) { gl_graph_add_output(f->g, gl_add_value(f->g, "ghost")); }
static void poke_dup_name(fixture *f)
{
    free(f->w->name);
    f->w->name = strdup("x");
}
static void poke_output_refs(fixture *f) { out0(f->relu)->n_output_refs = 2; }
static void poke_order(fixture *f)
{
    f->g->nodes[0] = f->relu;
    f->g->nodes[1] = f->mul;
    f->relu->index = 0;
    f->mul->index = 1;
}
static void poke_cycle(fixture *f) { gl_set_input(f->g, f->mul, 0, out0(f->relu)); }
static void poke_implicit_list(fixture *f) { f->iff->n_implicit = 1; /* forget x */ }
static void poke_capture_untracked(fixture *f)
{
    gl_node_remove_attr(f->iff, "else_branch");
    /* then-branch still captures relu_out0; pretend the If does not know. */
    gl_value *r = out0(f->relu);
    f->iff->n_implicit = 0;
    r->n_uses = 0;
}
static void poke_sub_dangling(fixture *f)
{
    gl_node *neg = f->then_g->nodes[0];
    gl_set_input(f->then_g, neg, 0, gl_add_value(f->then_g, "ghost"));
}
static void poke_live_nodes(fixture *f) { f->g->live_nodes++; }
static void poke_value_index(fixture *f) { f->w->index = 0; }
static void poke_node_id(fixture *f) { f->relu->id = f->mul->id; }
static void poke_input_flag(fixture *f) { f->x->is_input = false; }
static void poke_init_flag(fixture *f) { gl_add_value(f->g, "stray")->init = gl_tensor_new(GL_DT_FLOAT, 0, NULL); }
static void poke_capture_outer(fixture *f) { f->capture->outer = out0(f->then_g->nodes[0]); }
static void poke_foreign_input(fixture *f) { f->relu->inputs[0] = f->capture; }
static void poke_parent_node(fixture *f) { f->then_g->parent_node = f->mul; }
static void poke_unlisted_capture(fixture *f) { f->capture->outer = NULL; }

static void poke_node_no_name(fixture *f)
{
    free(f->relu->name);
    f->relu->name = NULL;
}
static void poke_node_index(fixture *f) { f->relu->index = 0; }
static void poke_node_id_range(fixture *f) { f->relu->id = f->g->next_node_id; }
static void poke_value_no_name(fixture *f)
{
    free(f->w->name);
    f->w->name = strdup("");
}
static void poke_value_id_range(fixture *f) { f->w->id = f->g->next_value_id; }
static void poke_value_id(fixture *f) { f->w->id = f->x->id; }
static void poke_value_renamed_in_place(fixture *f) { f->w->name[0] = 'q'; }
static void poke_node_renamed_in_place(fixture *f)
{
    free(f->relu->name);
    f->relu->name = strdup("ghost");
}
static void poke_foreign_output(fixture *f) { f->mul->outputs[0] = f->capture; }
static void poke_producer_elsewhere(fixture *f)
{
    gl_add_value(f->g, "stray")->producer = f->then_g->nodes[0];
}
static void poke_producer_unlisted(fixture *f)
{
    gl_value *v = gl_add_value(f->g, "stray");
    v->producer = f->relu;
    v->producer_slot = 0;
}
static void poke_produced_input(fixture *f) { out0(f->mul)->is_input = true; }
static void poke_use_elsewhere(fixture *f) { f->w->uses[0].node = f->then_g->nodes[0]; }
static void poke_dup_implicit_use(fixture *f)
{
    gl_value *x = f->x;
    x->uses = realloc(x->uses, (x->n_uses + 1) * sizeof(gl_use));
    x->uses[x->n_uses] = (gl_use){f->iff, GL_USE_IMPLICIT};
    x->cap_uses = ++x->n_uses;
}
static void poke_input_twice(fixture *f) { gl_graph_add_input(f->g, f->x); }
static void poke_foreign_output_list(fixture *f) { f->g->outputs[0] = f->capture; }
static void poke_implicit_uncaptured(fixture *f)
{
    gl_value *v = gl_add_value(f->g, "lonely");
    gl_graph_add_input(f->g, v);
    gl_node *n = f->iff;
    n->implicit = realloc(n->implicit, (n->n_implicit + 1) * sizeof(gl_value *));
    n->implicit[n->n_implicit] = v;
    n->cap_implicit = ++n->n_implicit;
    v->uses = realloc(v->uses, sizeof(gl_use));
    v->uses[0] = (gl_use){n, GL_USE_IMPLICIT};
    v->n_uses = v->cap_uses = 1;
}
static void poke_subgraph_model(fixture *f) { f->then_g->model = NULL; }

static const corruption corruptions[] = {
    {"producer points at another node", poke_producer, false, "names relu as its producer"},
    {"producer slot", poke_producer_slot, false, "(slot 3)"},
    {"missing implicit use", poke_drop_use, false, "implicit input 'x' is missing"},
    {"missing explicit use", poke_drop_explicit_use, false, "input 1 'w' is missing from the value's use list"},
    {"duplicate use", poke_dup_use, false, "listed twice"},
    {"use on the wrong slot", poke_wrong_slot, false, "value 'w': lists a use by node 'mul' (Mul) input 0"},
    {"dangling input", poke_dangling, false, "node 'relu' (Relu): input 0 'ghost' is not produced"},
    {"dangling output", poke_output_dangling, false, "output 2 'ghost' is not produced"},
    {"duplicate value name", poke_dup_name, false, "value 'x': name is shared"},
    {"n_output_refs", poke_output_refs, false, "n_output_refs is 2"},
    {"order", poke_order, false, "node 'relu' (Relu): input 0 'mul_out0' is produced by node 'mul' (Mul), which comes later"},
    {"cycle, sorted check", poke_cycle, false, "which comes later"},
    {"cycle, unsorted check", poke_cycle, true, "lies on a cycle"},
    {"implicit list", poke_implicit_list, false, "does not list it as implicit input"},
    {"capture not an implicit input", poke_capture_untracked, false, "captures 'relu_out0', which is not an implicit input"},
    {"subgraph dangling input", poke_sub_dangling, false, "graph 'test': node 'if' (If): graph 'then': node 'Neg_0' (Neg): input 0 'ghost'"},
    {"live_nodes", poke_live_nodes, false, "live_nodes is 4 but 3"},
    {"value index", poke_value_index, false, "value 'w': graph pointer or index"},
    {"duplicate node id", poke_node_id, false, "is used by another node"},
    {"input flag", poke_input_flag, false, "input 0 'x' is not marked"},
    {"initializer list", poke_init_flag, false, "values are marked initializer"},
    {"capture outer not in parent", poke_capture_outer, false, "does not point at a live value of the enclosing graph"},
    {"input from another graph", poke_foreign_input, false, "is not a value of this graph"},
    {"subgraph parent_node", poke_parent_node, false, "wrong parent or parent_node"},
    {"capture list", poke_unlisted_capture, false, "capture 'relu_out0' does not point"},
    {"node without a name", poke_node_no_name, false, "position 1 has no name or no op_type"},
    {"node index", poke_node_index, false, "node 'relu' (Relu): graph pointer or index (0)"},
    {"node id past next_node_id", poke_node_id_range, false, "is not below next_node_id"},
    {"value without a name", poke_value_no_name, false, "has no name"},
    {"value id past next_value_id", poke_value_id_range, false, "is not below next_value_id"},
    {"duplicate value id", poke_value_id, false, "value 'w': id 0 is used by another value"},
    {"value renamed behind the index", poke_value_renamed_in_place, false, "value 'q': name is missing from the name index"},
    {"node renamed behind the index", poke_node_renamed_in_place, false, "node 'ghost' (Relu): name is missing from the node index"},
    {"node output from another graph", poke_foreign_output, false, "node 'mul' (Mul): output 0 is not a value of this graph"},
    {"producer in another graph", poke_producer_elsewhere, false, "value 'stray': producer is not a live node of this graph"},
    {"producer does not list the value", poke_producer_unlisted, false, "value 'stray': producer node 'relu' (Relu) does not list it as output 0"},
    {"produced graph input", poke_produced_input, false, "value 'mul_out0': produced by node 'mul' (Mul) but also a graph input"},
    {"use by a node of another graph", poke_use_elsewhere, false, "value 'w': use 0 points at a node that is not live in this graph"},
    {"implicit use listed twice", poke_dup_implicit_use, false, "value 'x': implicit use by node 'if' (If) is listed twice"},
    {"input listed twice", poke_input_twice, false, "input 'x' is listed twice"},
    {"output from another graph", poke_foreign_output_list, false, "output 0 is not a value of this graph"},
    {"implicit input no subgraph captures", poke_implicit_uncaptured, false, "node 'if' (If): implicit input 'lonely' is captured by none of its subgraphs"},
    {"subgraph of another model", poke_subgraph_model, false, "subgraph 'then' belongs to another model"},
};

Test(verify, catches_each_corruption)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(corruptions); i++) {
        const corruption *c = &corruptions[i];
        fixture f = make_fixture();
        cr_assert_eq(gl_graph_verify(f.g, c->allow_unsorted), GL_OK, "%s: before: %s", c->what,
                     gl_error_message());
        c->poke(&f);
        gl_error_clear();
        gl_status st = gl_graph_verify(f.g, c->allow_unsorted);
        cr_expect_eq(st, GL_ERR_INTERNAL, "%s: status %d", c->what, st);
        cr_expect(strstr(gl_error_message(), c->expect) != NULL, "%s: expected '%s' in '%s'",
                  c->what, c->expect, gl_error_message());
        gl_model_free(f.m); /* freeing follows arrays only, so pokes do not hurt it */
    }
}

/* ---- scale ---- */

Test(ir, hundred_thousand_node_chain)
{
    enum { N = 100000 };
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *v = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    gl_node **nodes = malloc(N * sizeof(*nodes));
    for (size_t i = 0; i < N; i++) {
        nodes[i] = gl_add_node(g, "Relu", "", NULL, &v, 1, 1);
        v = out0(nodes[i]);
    }
    tu_output(g, v);
    VERIFY_OK(g);
    cr_assert_eq(gl_graph_verify(g, true), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_find_node(g, "Relu_54321"), nodes[54321]);
    cr_assert_eq(gl_find_value(g, "Relu_99999_out0"), v);
    /* Reverse the order: the unsorted check must walk the whole chain without recursion. */
    gl_node **rev = malloc(N * sizeof(*rev));
    for (size_t i = 0; i < N; i++)
        rev[i] = nodes[N - 1 - i];
    cr_assert_eq(gl_graph_set_order(g, rev, N), GL_OK);
    cr_assert_eq(gl_graph_verify(g, true), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_graph_verify(g, false), GL_ERR_INTERNAL);
    cr_assert_eq(gl_graph_set_order(g, nodes, N), GL_OK);
    /* Close the chain into a cycle: found, not a stack overflow. */
    cr_assert_eq(gl_set_input(g, nodes[0], 0, v), GL_OK);
    cr_assert_eq(gl_graph_verify(g, true), GL_ERR_INTERNAL);
    cr_assert(strstr(gl_error_message(), "cycle"), "%s", gl_error_message());
    cr_assert_eq(gl_set_input(g, nodes[0], 0, g->inputs[0]), GL_OK);
    /* Tear it down from the end: every removal is O(1). */
    gl_graph_set_output(g, 0, g->inputs[0]);
    for (size_t i = N; i-- > 0;)
        cr_assert_eq(gl_remove_node(g, nodes[i]), GL_OK, "%s", gl_error_message());
    cr_assert_eq(g->live_nodes, 0);
    gl_graph_compact(g);
    cr_assert_eq(g->n_nodes, 0);
    cr_assert_eq(g->n_values, 1);
    VERIFY_OK(g);
    free(nodes);
    free(rev);
    gl_model_free(m);
}

Test(ir, many_values_with_one_hint)
{
    enum { N = 20000 };
    gl_model *m = tu_model(13);
    for (size_t i = 0; i < N; i++)
        gl_add_value(m->graph, "t");
    cr_assert_not_null(gl_find_value(m->graph, "t_19999"));
    cr_assert_null(gl_find_value(m->graph, "t_20000"));
    VERIFY_OK(m->graph);
    gl_model_free(m);
}

/* ---- the bound on expanding function calls (ir/calls.h) ------------------------------ */

/* One step of a walk: enter function `fn` (an index into the table's functions; -1 leaves
 * the innermost call), expecting `st` and, on a refusal, `needle` in the message. */
typedef struct expand_step {
    int fn;
    gl_status st;
    const char *needle;
} expand_step;

typedef struct expand_case {
    const char *name;
    size_t max_nodes; /* 0: the default */
    expand_step steps[40];
    int n_steps;
} expand_case;

Test(calls, expansion_refuses_recursion_depth_and_fan_out)
{
    /* f0..f39: distinct functions whose bodies hold two nodes each. */
    enum { NF = 40 };
    gl_model *owner = tu_model(13);
    gl_function fns[NF];
    gl_value *x = tu_input(owner->graph, "x", GL_DT_FLOAT, 1, D2);
    gl_node *a = tu_node(owner->graph, "Relu", "a", 1, x);
    tu_node(owner->graph, "Relu", "b", 1, out0(a));
    char names[NF][8];
    for (int i = 0; i < NF; i++) {
        snprintf(names[i], sizeof(names[i]), "f%d", i);
        fns[i] = (gl_function){.name = names[i], .body = owner->graph};
    }
    expand_case deep = {"33 distinct nested calls", 0, {{0}}, 33};
    for (int i = 0; i < 32; i++)
        deep.steps[i] = (expand_step){i, GL_OK, NULL};
    deep.steps[32] = (expand_step){32, GL_ERR_INPUT, "deeper than 32"};
    const expand_case cases[] = {
        {"a call of a function already on the chain",
         0, {{0, GL_OK, NULL}, {1, GL_OK, NULL}, {0, GL_ERR_INPUT, "'f0' calls itself"}}, 3},
        {"the chain is named in the refusal",
         0, {{0, GL_OK, NULL}, {1, GL_OK, NULL}, {0, GL_ERR_INPUT, "(f0 -> f1 -> f0)"}}, 3},
        {"a sibling call is no recursion",
         0, {{0, GL_OK, NULL}, {1, GL_OK, NULL}, {-1, GL_OK, NULL}, {1, GL_OK, NULL}}, 4},
        {"bodies count until the bound",
         5, {{0, GL_OK, NULL}, {-1, GL_OK, NULL}, {0, GL_OK, NULL}, {-1, GL_OK, NULL},
             {0, GL_ERR_INPUT, "more than 5 nodes"}}, 5},
        {"over the bound, every later call is refused",
         3, {{0, GL_OK, NULL}, {1, GL_ERR_INPUT, "more than 3"}, {-1, GL_OK, NULL},
             {2, GL_ERR_INPUT, "more than 3"}}, 4},
        deep,
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_expansion xp = {.max_nodes = cases[c].max_nodes};
        for (int s = 0; s < cases[c].n_steps; s++) {
            const expand_step *step = &cases[c].steps[s];
            if (step->fn < 0) {
                gl_expansion_leave(&xp);
                continue;
            }
            gl_error_clear();
            gl_status st = gl_expansion_enter(&xp, &fns[step->fn], "m.onnx: node 'c' (f)");
            cr_expect_eq(st, step->st, "%s, step %d: status %d, expected %d (%s)",
                         cases[c].name, s, st, step->st, gl_error_message());
            if (step->needle)
                cr_expect(strstr(gl_error_message(), step->needle) &&
                              strstr(gl_error_message(), "m.onnx: node 'c' (f): "),
                          "%s, step %d: '%s' lacks '%s' or the call's place", cases[c].name,
                          s, gl_error_message(), step->needle);
        }
    }
    /* Without a place, a refusal leaves no message (walks with a safe fallback). */
    gl_expansion xp = {0};
    cr_assert_eq(gl_expansion_enter(&xp, &fns[0], NULL), GL_OK);
    gl_error_clear();
    cr_expect_eq(gl_expansion_enter(&xp, &fns[0], NULL), GL_ERR_INPUT);
    cr_expect_str_eq(gl_error_message(), "");
    gl_model_free(owner);
}

/* ---- the default domain: stored as "" by every constructor ---- */

Test(ir, the_default_domain_is_stored_once_as_empty)
{
    static const char *const spellings[] = {"", "ai.onnx", NULL};
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, D2);
    for (size_t i = 0; i < GL_ARRAY_LEN(spellings); i++) {
        char name[16];
        snprintf(name, sizeof(name), "r%zu", i);
        gl_node *n = gl_add_node(g, "Relu", spellings[i], name, &x, 1, 1);
        cr_assert(n);
        cr_expect_str_eq(n->domain, "", "'%s' is stored as ''", spellings[i] ? spellings[i] : "NULL");
        cr_expect(gl_node_is(n, "Relu") && gl_node_is_in(n, "ai.onnx", "Relu") &&
                  gl_node_is_in(n, "", "Relu") && !gl_node_is(n, "Sigmoid"));
    }
    gl_node *ms = gl_add_node(g, "FusedMatMul", "com.microsoft", "f", &x, 1, 1);
    cr_expect(!gl_node_is(ms, "FusedMatMul") && gl_node_is_in(ms, "com.microsoft", "FusedMatMul"));
    cr_expect(!gl_node_is(NULL, "Relu"));
    gl_model_set_opset(m, "ai.onnx", 17); /* the same import as "" */
    cr_expect_eq(gl_model_opset(m, ""), 17);
    for (size_t i = 0; i < m->n_opsets; i++)
        cr_expect_neq(strcmp(m->opsets[i].domain, "ai.onnx"), 0);
    gl_function *f = gl_model_add_function(m, "ai.onnx", "MyFn");
    cr_assert(f);
    cr_expect_str_eq(f->domain, "");
    cr_expect_eq(gl_model_function(m, NULL, "MyFn"), f);
    cr_expect_str_eq(gl_domain_display(""), "ai.onnx");
    VERIFY_OK(g);
    /* A node that bypasses the constructors breaks the invariant, and verify says so. */
    gl_node *r0 = gl_find_node(g, "r0");
    char *saved = r0->domain;
    r0->domain = (char *)"ai.onnx";
    cr_expect_eq(gl_graph_verify(g, false), GL_ERR_INTERNAL);
    cr_expect(strstr(gl_error_message(), "domain 'ai.onnx' is not canonical"), "%s",
              gl_error_message());
    r0->domain = saved;
    gl_model_free(m);
}

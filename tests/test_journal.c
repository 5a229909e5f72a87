/* test_journal.c — the undo journal (ir/journal.h), one row per kind of edit.
 *
 * Each row edits a small graph (a few nodes, an initializer, an If whose bodies capture
 * outer values, provenance, a node with an unused output) through the edit API, under a
 * journal. Rolled back, the graph must be what a clone taken before is (tu_same_graph:
 * slots, ids, use-list order, names, types, bytes, attributes, provenance; and the
 * fingerprint). Committed, it must be what the same edits leave without a journal. The
 * passes' own runs under a journal are in test_transpose.c and test_transpose_random.c.
 */
#include "ir/journal.h"
#include "passes/passes.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <string.h>

typedef struct fixture {
    gl_model *m;
    gl_graph *g, *then_g;
    gl_value *x, *c, *w;
    gl_node *add, *relu, *mul, *sig, *split, *ifn;
} fixture;

static gl_graph *body(fixture *f, const char *name, gl_value *outer)
{
    gl_graph *b = gl_graph_new(f->m, f->g, name);
    b->parent_node = f->ifn;
    gl_value *cap = gl_resolve_value(b, outer->name);
    cr_assert_not_null(cap);
    gl_node *id = tu_node(b, "Identity", name, 1, cap);
    gl_graph_add_output(b, id->outputs[0]);
    return b;
}

static void attach(gl_node *n, const char *attr, gl_graph *b)
{
    gl_attr a = {.name = gl_xstrdup(attr), .type = GL_ATTR_GRAPH, .g = b};
    gl_node_take_attr(n, &a);
}

static fixture build(void)
{
    fixture f = {.m = tu_model(13)};
    gl_graph *g = f.g = f.m->graph;
    int64_t dims[2] = {2, 3};
    float data[6] = {1, 2, 3, 4, 5, 6};
    f.x = tu_input(g, "x", GL_DT_FLOAT, 2, dims);
    f.c = tu_input(g, "c", GL_DT_BOOL, 0, NULL);
    f.w = tu_const_f32(g, "w", 2, dims, data);
    f.add = tu_node(g, "Add", "add", 2, f.x, f.w);
    f.relu = tu_node(g, "Relu", "relu", 1, f.add->outputs[0]);
    f.mul = tu_node(g, "Mul", "mul", 2, f.relu->outputs[0], f.add->outputs[0]);
    f.sig = tu_node(g, "Sigmoid", "sig", 1, f.mul->outputs[0]);
    gl_value *ins[1] = {f.add->outputs[0]};
    f.split = gl_add_node(g, "Split", "", "split", ins, 1, 2);
    gl_node_set_attr_int(f.split, "axis", 0);
    f.ifn = tu_node(g, "If", "if", 1, f.c);
    f.then_g = body(&f, "then", f.relu->outputs[0]);
    attach(f.ifn, "then_branch", f.then_g);
    attach(f.ifn, "else_branch", body(&f, "else", f.add->outputs[0]));
    tu_output(g, f.sig->outputs[0]);
    tu_output(g, f.split->outputs[0]);
    tu_output(g, f.ifn->outputs[0]);
    gl_graph_record_origins(g);
    gl_node *n;
    gl_foreach_node(g, i, n)
        gl_node_set_provenance(n, &n->id, 1, -1);
    uint32_t two[2] = {0, 1};
    gl_node_set_provenance(f.mul, two, 2, 3);
    cr_assert_eq(gl_graph_verify(g, false), GL_OK, "%s", gl_error_message());
    return f;
}

#define OK(call) cr_assert_eq((call), GL_OK, "%s", gl_error_message())

static void edit_inputs(fixture *f)
{
    OK(gl_set_input(f->g, f->mul, 1, f->x));
    OK(gl_set_input(f->g, f->sig, 1, f->w)); /* appends a slot */
    OK(gl_set_input(f->g, f->add, 0, NULL));
    gl_truncate_inputs(f->g, f->sig, 1);
    gl_truncate_inputs(f->g, f->mul, 1);
}

static void edit_add_nodes(fixture *f)
{
    gl_value *in = f->relu->outputs[0];
    gl_node *t = gl_add_node(f->g, "Tanh", "", NULL, &in, 1, 1);
    gl_node_set_attr_int(t, "k", 1);
    gl_node_set_provenance(t, &f->relu->id, 1, 7);
    OK(gl_set_input(f->g, f->sig, 0, t->outputs[0]));
    gl_node *u = gl_add_node(f->g, "Neg", "", "neg", &in, 1, 1);
    OK(gl_remove_node(f->g, u)); /* made and gone within the trial */
    gl_node_inherit_provenance(f->sig, &f->mul, 1, 8);
}

static void edit_remove_nodes(fixture *f)
{
    OK(gl_set_input(f->g, f->sig, 0, f->relu->outputs[0]));
    OK(gl_remove_node(f->g, f->mul));
    gl_node_inherit_provenance(f->sig, &f->relu, 1, 9);
}

static void edit_move_output(fixture *f)
{
    gl_value *in = f->add->outputs[0];
    gl_node *t = gl_add_node(f->g, "Identity", "", "moved", &in, 1, 1);
    OK(gl_move_output(f->g, f->relu, 0, t, 0)); /* relu's readers, the then-capture too */
    OK(gl_set_input(f->g, t, 0, f->relu->outputs[0]));
    OK(gl_set_input(f->g, f->sig, 0, f->x));
    OK(gl_move_output(f->g, f->sig, 0, f->mul, 0)); /* a graph output moves; mul's goes */
}

static void edit_initializers(fixture *f)
{
    int64_t dims[2] = {2, 3};
    float data[6] = {6, 5, 4, 3, 2, 1};
    gl_value *w2 = gl_add_initializer(f->g, "w", tu_tensor_f32(2, dims, data)); /* "w_1" */
    OK(gl_set_input(f->g, f->add, 1, w2));
    OK(gl_remove_value(f->g, f->w));
    gl_value *w3 = gl_add_initializer(f->g, "w", tu_tensor_f32(2, dims, data)); /* "w" again */
    OK(gl_set_input(f->g, f->mul, 1, w3));
    /* "x_1", "x_2": the name index's hint for "x" moves on; after a rollback it must not
     * skip the names that are free again. */
    gl_value *x1 = gl_add_initializer(f->g, "x", tu_tensor_f32(2, dims, data));
    gl_value *x2 = gl_add_initializer(f->g, "x", tu_tensor_f32(2, dims, data));
    OK(gl_set_input(f->g, f->sig, 1, x1));
    OK(gl_set_input(f->g, f->sig, 2, x2));
}

static void edit_make_constant(fixture *f)
{
    int64_t dims[2] = {2, 3};
    float data[6] = {0};
    OK(gl_value_make_constant(f->g, f->sig->outputs[0], tu_tensor_f32(2, dims, data)));
    OK(gl_remove_node(f->g, f->sig));
    OK(gl_remove_node(f->g, f->mul));
}

static void edit_replace_uses(fixture *f)
{
    /* relu's readers: mul and the then-body's capture, which follows (and is renamed). */
    OK(gl_replace_all_uses(f->g, f->relu->outputs[0], f->add->outputs[0]));
    OK(gl_remove_node(f->g, f->relu));
    OK(gl_replace_all_uses(f->g, f->mul->outputs[0], f->x));
}

static void edit_attrs(fixture *f)
{
    gl_node_set_attr_int(f->add, "foo", 3);
    gl_node_set_attr_int(f->add, "foo", 4); /* replaces */
    gl_node_set_attr_ints(f->split, "axis", (int64_t[]){1, 2}, 2); /* replaces another kind */
    cr_assert(gl_node_remove_attr(f->ifn, "else_branch")); /* a body goes: add loses a use */
    gl_node_set_attr_float(f->ifn, "bar", 1.5f);
    cr_assert(gl_node_remove_attr(f->split, "axis"));
}

static void edit_attach_body(fixture *f)
{
    gl_graph *b = gl_graph_new(f->m, f->g, "again");
    b->parent_node = f->ifn;
    gl_value *cap = gl_resolve_value(b, "w");
    gl_node *n = tu_node(b, "Identity", "again_id", 1, cap);
    gl_graph_add_output(b, n->outputs[0]);
    attach(f->ifn, "then_branch", b); /* the old body is kept by the journal */
}

static void edit_renames(fixture *f)
{
    gl_rename_node(f->g, f->relu, "relu_2");
    gl_rename_node(f->g, f->relu, "relu_3");
    gl_rename_node(f->g, f->mul, "add"); /* node names may repeat */
    OK(gl_rename_value(f->g, f->add->outputs[0], "a2"));
    OK(gl_rename_value(f->g, f->w, "weights"));
}

static void edit_interface(fixture *f)
{
    gl_graph_set_output(f->g, 0, f->relu->outputs[0]);
    gl_graph_add_output(f->g, f->add->outputs[0]);
    gl_value *extra = gl_add_value(f->g, "extra");
    gl_graph_add_input(f->g, extra);
    OK(gl_set_input(f->g, f->sig, 0, extra));
    OK(gl_drop_output(f->g, f->split, 1));
}

static void edit_order(fixture *f)
{
    gl_value *in = f->x;
    gl_node *late = gl_add_node(f->g, "Abs", "", "late", &in, 1, 1);
    OK(gl_set_input(f->g, f->add, 0, late->outputs[0])); /* read before it is made */
    OK(gl_set_input(f->g, f->sig, 0, f->relu->outputs[0]));
    OK(gl_remove_node(f->g, f->mul));
    OK(gl_toposort(f->g, NULL));
    gl_graph_compact(f->g);
}

static void edit_in_place(fixture *f)
{
    /* What a pass writes outside the API says so first (the header and bytes of a
     * constant, a type's shape). */
    gl_journal_touch_value(f->g, f->w);
    float *d = gl_tensor_make_writable(f->w->init);
    d[0] = 42;
    f->w->init->dims[0] = 3;
    f->w->init->dims[1] = 2;
    gl_journal_touch_value(f->g, f->relu->outputs[0]);
    gl_shape_set_rank(&f->relu->outputs[0]->type.shape, 1);
    f->relu->outputs[0]->type.shape.dims[0].value = 6;
}

static void edit_body(fixture *f)
{
    gl_value *cap = gl_resolve_value(f->then_g, "x"); /* a new capture: if reads x */
    gl_node *n = tu_node(f->then_g, "Relu", "body_relu", 1, cap);
    gl_graph_set_output(f->then_g, 0, n->outputs[0]);
    OK(gl_remove_node(f->then_g, f->then_g->nodes[0]));
    gl_value *old = NULL;
    for (size_t i = 0; i < f->then_g->n_captures; i++)
        if (!f->then_g->captures[i]->n_uses)
            old = f->then_g->captures[i];
    cr_assert_not_null(old);
    OK(gl_remove_value(f->then_g, old)); /* if no longer reads relu */
}

static void edit_everything(fixture *f)
{
    edit_in_place(f);
    edit_add_nodes(f);
    edit_attrs(f);
    edit_renames(f);
    edit_initializers(f);
    edit_body(f);
    edit_order(f);
}

typedef struct edit_case {
    const char *name;
    void (*edit)(fixture *f);
} edit_case;

static const edit_case cases[] = {
    {"inputs", edit_inputs},
    {"add_nodes", edit_add_nodes},
    {"remove_nodes", edit_remove_nodes},
    {"move_output", edit_move_output},
    {"initializers", edit_initializers},
    {"make_constant", edit_make_constant},
    {"replace_uses", edit_replace_uses},
    {"attrs", edit_attrs},
    {"attach_body", edit_attach_body},
    {"renames", edit_renames},
    {"interface", edit_interface},
    {"order", edit_order},
    {"in_place", edit_in_place},
    {"body", edit_body},
    {"everything", edit_everything},
};

Test(journal, rollback_gives_the_graph_back_exactly)
{
    char why[400];
    for (size_t k = 0; k < GL_ARRAY_LEN(cases); k++) {
        fixture f = build();
        gl_model *ref = gl_model_clone(f.m);
        gl_journal *j = gl_journal_begin(f.g);
        cr_assert_not_null(j);
        cases[k].edit(&f);
        cr_expect_neq(gl_graph_fingerprint(f.g), gl_graph_fingerprint(ref->graph),
                      "%s: the edits change the graph", cases[k].name);
        gl_journal_rollback(j);
        cr_expect_null(f.g->journal);
        cr_expect_eq(gl_graph_verify(f.g, false), GL_OK, "%s: %s", cases[k].name,
                     gl_error_message());
        cr_expect_eq(gl_graph_fingerprint(f.g), gl_graph_fingerprint(ref->graph), "%s",
                     cases[k].name);
        cr_expect(tu_same_graph(f.g, ref->graph, why, sizeof(why)), "%s: %s", cases[k].name,
                  why);
        /* The graph goes on as before: the same edits again give the same graph. */
        fixture again = build();
        cases[k].edit(&f);
        cases[k].edit(&again);
        cr_expect(tu_same_graph(f.g, again.g, why, sizeof(why)), "%s, edited again: %s",
                  cases[k].name, why);
        gl_model_free(again.m);
        gl_model_free(ref);
        gl_model_free(f.m);
    }
}

Test(journal, commit_keeps_what_no_journal_leaves)
{
    char why[400];
    for (size_t k = 0; k < GL_ARRAY_LEN(cases); k++) {
        fixture a = build(), b = build();
        gl_journal *j = gl_journal_begin(a.g);
        cases[k].edit(&a);
        gl_journal_commit(j);
        cases[k].edit(&b);
        cr_expect_null(a.g->journal);
        cr_expect_eq(gl_graph_verify(a.g, true), GL_OK, "%s: %s", cases[k].name,
                     gl_error_message());
        cr_expect(tu_same_graph(a.g, b.g, why, sizeof(why)), "%s: %s", cases[k].name, why);
        gl_model_free(a.m);
        gl_model_free(b.m);
    }
}

Test(journal, one_at_a_time_on_root_graphs)
{
    fixture f = build();
    cr_expect_null(gl_journal_begin(f.then_g), "not on a subgraph");
    gl_journal *j = gl_journal_begin(f.g);
    cr_assert_not_null(j);
    cr_expect_null(gl_journal_begin(f.g), "journals do not nest");
    cr_expect_eq(gl_graph_journal(f.then_g), j, "a body finds its root's journal");
    gl_model *other = gl_model_clone(f.m);
    cr_expect_null(other->graph->journal, "a clone has none");
    gl_journal_commit(j);
    cr_expect_null(gl_graph_journal(f.then_g));
    gl_journal_rollback(NULL);
    gl_journal_commit(NULL);
    gl_model_free(other);
    gl_model_free(f.m);
}

/* test_toposort.c — the topological sort pass and `--passes` parsing. */
#include "passes/passes.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* ---- an independent reference: repeatedly take the earliest ready node (O(V^2)) ---- */

static bool all_inputs_placed(const gl_node *n, const bool *placed)
{
    for (size_t i = 0; i < n->n_inputs + n->n_implicit; i++) {
        const gl_value *v = i < n->n_inputs ? n->inputs[i] : n->implicit[i - n->n_inputs];
        if (v && v->producer && v->producer->graph == n->graph && !placed[v->producer->id])
            return false;
    }
    return true;
}

/* Node ids in the order the reference chooses; NULL on a cycle. */
static uint32_t *reference_order(const gl_graph *g, size_t *count)
{
    size_t live = g->live_nodes, done = 0;
    bool *placed = calloc(g->next_node_id + 1, sizeof(bool));
    uint32_t *out = calloc(live + 1, sizeof(uint32_t));
    while (done < live) {
        const gl_node *pick = NULL;
        for (size_t i = 0; i < g->n_nodes && !pick; i++) {
            const gl_node *n = g->nodes[i];
            if (n && !placed[n->id] && all_inputs_placed(n, placed))
                pick = n;
        }
        if (!pick) {
            free(placed);
            free(out);
            return NULL;
        }
        placed[pick->id] = true;
        out[done++] = pick->id;
    }
    free(placed);
    *count = done;
    return out;
}

static void current_order(const gl_graph *g, uint32_t *ids)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i])
            ids[k++] = g->nodes[i]->id;
}

/* Shuffle the live nodes (Fisher-Yates, seeded). */
static void shuffle_nodes(gl_graph *g, unsigned seed)
{
    size_t n = g->live_nodes, k = 0;
    gl_node **order = malloc(n * sizeof(*order));
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i])
            order[k++] = g->nodes[i];
    srand(seed);
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rand() % i;
        gl_node *t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    gl_graph_set_order(g, order, n);
    free(order);
}

/* A random DAG: each node reads 1..3 earlier values (inputs or node outputs), with
 * repeats allowed (Mul(x, x)); every sink is a graph output. */
static gl_model *random_dag(size_t n_nodes, unsigned seed)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value **vals = malloc((n_nodes + 2) * sizeof(*vals));
    size_t nv = 0;
    vals[nv++] = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    vals[nv++] = tu_input(g, "y", GL_DT_FLOAT, 1, (int64_t[]){4});
    srand(seed);
    for (size_t i = 0; i < n_nodes; i++) {
        size_t arity = 1 + (size_t)rand() % 3;
        gl_value *ins[3];
        for (size_t a = 0; a < arity; a++) {
            /* mostly recent values, so chains are long */
            size_t back = (size_t)rand() % (nv < 8 ? nv : 8);
            ins[a] = vals[nv - 1 - back];
        }
        static const char *const ops[] = {"Relu", "Add", "Sum"};
        gl_node *n = gl_add_node(g, ops[arity - 1], "", NULL, ins, arity, 1);
        vals[nv++] = n->outputs[0];
    }
    for (size_t i = 2; i < nv; i++)
        if (vals[i]->n_uses == 0)
            tu_output(g, vals[i]);
    free(vals);
    return m;
}

Test(toposort, valid_order_is_kept)
{
    gl_model *m = random_dag(300, 1);
    size_t n = m->graph->live_nodes;
    uint32_t *before = malloc(n * sizeof(uint32_t)), *after = malloc(n * sizeof(uint32_t));
    current_order(m->graph, before);
    size_t moved = 99;
    cr_assert_eq(gl_toposort(m->graph, &moved), GL_OK, "%s", gl_error_message());
    cr_assert_eq(moved, 0);
    current_order(m->graph, after);
    cr_assert_arr_eq(before, after, n * sizeof(uint32_t));
    free(before);
    free(after);
    gl_model_free(m);
}

/* Table: DAG sizes and shuffle seeds. */
static const struct {
    size_t nodes;
    unsigned seed;
} shuffled_cases[] = {{1, 1}, {2, 2}, {5, 3}, {17, 4}, {100, 5}, {1000, 6}, {3000, 7}};

Test(toposort, shuffled_orders_match_reference)
{
    for (size_t c = 0; c < GL_ARRAY_LEN(shuffled_cases); c++) {
        gl_model *m = random_dag(shuffled_cases[c].nodes, shuffled_cases[c].seed);
        shuffle_nodes(m->graph, shuffled_cases[c].seed * 7919u);
        cr_assert_eq(gl_graph_verify(m->graph, true), GL_OK, "%s", gl_error_message());
        size_t ref_n = 0;
        uint32_t *ref = reference_order(m->graph, &ref_n);
        cr_assert_not_null(ref);
        cr_assert_eq(gl_toposort(m->graph, NULL), GL_OK, "case %zu: %s", c, gl_error_message());
        cr_assert_eq(gl_graph_verify(m->graph, false), GL_OK, "case %zu: %s", c,
                     gl_error_message());
        uint32_t *got = malloc(ref_n * sizeof(uint32_t));
        current_order(m->graph, got);
        cr_assert_arr_eq(ref, got, ref_n * sizeof(uint32_t), "case %zu: order differs", c);
        free(ref);
        free(got);
        gl_model_free(m);
    }
}

Test(toposort, repeated_input_counts_twice)
{
    /* sq = Mul(a, a) placed before a = Relu(x): both slots must wait for Relu. */
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){3});
    gl_node *relu = tu_node(g, "Relu", "relu", 1, x);
    gl_node *mul = tu_node(g, "Mul", "square", 2, relu->outputs[0], relu->outputs[0]);
    tu_output(g, mul->outputs[0]);
    cr_assert_eq(relu->outputs[0]->n_uses, 2);
    gl_node *wrong[] = {mul, relu};
    gl_graph_set_order(g, wrong, 2);
    size_t moved;
    cr_assert_eq(gl_toposort(g, &moved), GL_OK, "%s", gl_error_message());
    cr_assert_eq(moved, 2);
    cr_assert_eq(g->nodes[0], relu);
    cr_assert_eq(g->nodes[1], mul);
    cr_assert_eq(gl_graph_verify(g, false), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
}

/* An If whose then-branch reads `a`, placed before the node producing `a`. */
static gl_model *if_reading_outer_value(gl_node **relu_out, gl_node **if_out)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){3});
    gl_value *cond = tu_input(g, "cond", GL_DT_BOOL, 0, NULL);
    gl_node *relu = tu_node(g, "Relu", "relu", 1, x);
    gl_node *iff = tu_node(g, "If", "branch", 1, cond);
    const char *names[] = {"then_branch", "else_branch"};
    for (int b = 0; b < 2; b++) {
        gl_graph *sub = gl_graph_new(m, g, names[b]);
        sub->parent_node = iff;
        gl_attr at = {.name = strdup(names[b]), .type = GL_ATTR_GRAPH, .g = sub};
        gl_node_take_attr(iff, &at);
        gl_value *outer = b == 0 ? gl_resolve_value(sub, "relu_out0") : NULL;
        if (b == 0)
            cr_assert_not_null(outer, "capture of relu's output");
        gl_node *id = gl_add_node(sub, "Identity", "", b == 0 ? "take" : "other",
                                  (gl_value *[]){b == 0 ? outer : gl_resolve_value(sub, "x")},
                                  1, 1);
        gl_graph_add_output(sub, id->outputs[0]);
    }
    tu_output(g, iff->outputs[0]);
    *relu_out = relu;
    *if_out = iff;
    return m;
}

Test(toposort, subgraph_reads_are_edges)
{
    gl_node *relu, *iff;
    /* tu_node names outputs "<node>_out<i>"; the capture must find relu's output. */
    gl_model *m = if_reading_outer_value(&relu, &iff);
    gl_graph *g = m->graph;
    cr_assert_eq(iff->n_implicit, 2, "If reads relu's output and x implicitly");
    gl_node *wrong[] = {iff, relu};
    gl_graph_set_order(g, wrong, 2);
    cr_assert_neq(gl_graph_verify(g, false), GL_OK, "verify must see the implicit edge");
    cr_assert_eq(gl_toposort(g, NULL), GL_OK, "%s", gl_error_message());
    cr_assert_eq(g->nodes[0], relu);
    cr_assert_eq(g->nodes[1], iff);
    cr_assert_eq(gl_graph_verify(g, false), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
}

Test(toposort, cycle_is_reported_in_order_and_graph_unchanged)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    m->path = strdup("cyc.onnx");
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){3});
    gl_node *a = tu_node(g, "Add", "a", 2, x, x);
    gl_node *b = tu_node(g, "Relu", "b", 1, a->outputs[0]);
    gl_node *c = tu_node(g, "Neg", "c", 1, b->outputs[0]);
    gl_node *tail = tu_node(g, "Abs", "tail", 1, c->outputs[0]);
    tu_output(g, tail->outputs[0]);
    cr_assert_eq(gl_set_input(g, a, 1, c->outputs[0]), GL_OK); /* a <- c: a -> b -> c -> a */
    uint32_t before[4], after[4];
    current_order(g, before);
    cr_assert_eq(gl_toposort(g, NULL), GL_ERR_INPUT);
    const char *msg = gl_error_message();
    cr_assert(strstr(msg, "cyc.onnx") != NULL, "%s", msg);
    cr_assert(strstr(msg, "'a' (Add) -> 'b' (Relu) -> 'c' (Neg) -> 'a'") != NULL ||
                  strstr(msg, "'b' (Relu) -> 'c' (Neg) -> 'a' (Add) -> 'b'") != NULL ||
                  strstr(msg, "'c' (Neg) -> 'a' (Add) -> 'b' (Relu) -> 'c'") != NULL,
              "cycle not named in order: %s", msg);
    cr_assert(strstr(msg, "tail") == NULL, "only the cycle is named: %s", msg);
    current_order(g, after);
    cr_assert_arr_eq(before, after, sizeof(before));
    gl_model_free(m);
}

Test(toposort, self_loop)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){3});
    gl_node *a = tu_node(g, "Add", "self", 2, x, x);
    tu_output(g, a->outputs[0]);
    cr_assert_eq(gl_set_input(g, a, 1, a->outputs[0]), GL_OK);
    cr_assert_eq(gl_toposort(g, NULL), GL_ERR_INPUT);
    cr_assert(strstr(gl_error_message(), "'self' (Add)") != NULL, "%s", gl_error_message());
    gl_model_free(m);
}

Test(toposort, large_random_graph)
{
    gl_model *m = random_dag(100000, 42);
    shuffle_nodes(m->graph, 43);
    cr_assert_eq(gl_toposort(m->graph, NULL), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_graph_verify(m->graph, false), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
}

Test(toposort, pass_budget_zero_changes_nothing)
{
    gl_model *m = random_dag(50, 9);
    shuffle_nodes(m->graph, 10);
    uint32_t before[50], after[50];
    current_order(m->graph, before);
    gl_pass_step step = {.pass = gl_pass_find("toposort"), .budget = 0};
    cr_assert_not_null(step.pass);
    gl_pass_ctx ctx = {.model = m, .budget = 0};
    cr_assert_eq(step.pass->run(m->graph, &ctx), GL_OK);
    current_order(m->graph, after);
    cr_assert_arr_eq(before, after, sizeof(before));
    ctx.budget = GL_BUDGET_UNLIMITED;
    cr_assert_eq(step.pass->run(m->graph, &ctx), GL_OK);
    cr_assert_eq(ctx.applied, 1);
    cr_assert_eq(gl_graph_verify(m->graph, false), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
}

/* ---- --passes parsing ----------------------------------------------------------- */

static const struct {
    const char *spec;
    bool ok;
    size_t n;
    int64_t first_budget;
    const char *error_part;
} parse_cases[] = {
    {"none", true, 0, 0, NULL},
    /* DESIGN.md's default pipeline: ... patterns, layout, the second transpose-push,
     * fold-transpose, fusion */
    {"all", true, 16, GL_BUDGET_UNLIMITED, NULL},
    {"all:3", true, 16, 3, NULL}, /* the pipeline's budget: see test_pipeline.c */
    {"all:0", true, 16, 0, NULL},
    {"all:x", false, 0, 0, "'all:x': the rewrite budget after ':' must be a whole number"},
    {"all:", false, 0, 0, "whole number"},
    {"all:-2", false, 0, 0, "whole number"},
    {"all,dce", false, 0, 0, "unknown pass 'all' (passes: toposort, shape-inference,"},
    {"dce:1,x", false, 0, 0, "; alone: all, all:K or none)"},
    {"toposort", true, 1, GL_BUDGET_UNLIMITED, NULL},
    {"toposort:0,toposort", true, 2, 0, NULL},
    {"toposort:12", true, 1, 12, NULL},
    {"bogus", false, 0, 0, "unknown pass 'bogus'"},
    {"toposort,bogus", false, 0, 0, "unknown pass 'bogus'"},
    {"toposort:-1", false, 0, 0, "whole number"},
    {"toposort:x", false, 0, 0, "whole number"},
    {"toposort:", false, 0, 0, "whole number"},
    {"", false, 0, 0, "empty"},
    {",", false, 0, 0, "empty"},
    {":3", false, 0, 0, "empty"},
};

Test(passes, list_parsing)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(parse_cases); i++) {
        gl_pass_step *steps;
        size_t n;
        gl_status st = gl_pass_list_parse(parse_cases[i].spec, &steps, &n);
        cr_expect_eq(st == GL_OK, parse_cases[i].ok, "'%s': %s", parse_cases[i].spec,
                     gl_error_message());
        if (st == GL_OK) {
            cr_expect_eq(n, parse_cases[i].n, "'%s'", parse_cases[i].spec);
            if (n)
                cr_expect_eq(steps[0].budget, parse_cases[i].first_budget, "'%s'",
                             parse_cases[i].spec);
        } else {
            cr_expect(strstr(gl_error_message(), parse_cases[i].error_part) != NULL,
                      "'%s': %s", parse_cases[i].spec, gl_error_message());
        }
        free(steps);
    }
}

/* Reordering must keep "the first node so named" true when names repeat, and must not
 * disturb lookups when they do not (the reorder skips the rebuild then). */
Test(toposort, reorder_keeps_name_lookups)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){3});
    gl_node *first = tu_node(g, "Relu", "dup", 1, x);
    gl_node *second = tu_node(g, "Neg", "dup", 1, x);
    gl_node *solo = tu_node(g, "Add", "solo", 2, first->outputs[0], second->outputs[0]);
    tu_output(g, solo->outputs[0]);
    cr_assert_eq(gl_find_node(g, "dup"), first);
    gl_node *swapped[] = {second, first, solo};
    cr_assert_eq(gl_graph_set_order(g, swapped, 3), GL_OK);
    cr_assert_eq(gl_find_node(g, "dup"), second, "the first 'dup' in the new order");
    cr_assert_eq(gl_find_node(g, "solo"), solo);
    gl_model_free(m);

    m = random_dag(200, 3);
    shuffle_nodes(m->graph, 4);
    cr_assert_eq(gl_toposort(m->graph, NULL), GL_OK);
    gl_node *n;
    gl_foreach_node(m->graph, i, n)
        cr_assert_eq(gl_find_node(m->graph, n->name), n, "lookup of '%s'", n->name);
    gl_model_free(m);
}

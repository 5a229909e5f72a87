/* test_pipeline.c — snapshots, fingerprints, decisions, rewrite budgets, replay, --set. */
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x -> Relu 'keep' -> y (output), plus `dead` chains of Neg nodes nobody reads, and two
 * duplicate Abs nodes feeding an Add (one cse merge). */
static gl_model *graph_with_work(int dead)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_node *keep = tu_node(g, "Relu", "keep", 1, x);
    gl_node *a1 = tu_node(g, "Abs", "abs1", 1, keep->outputs[0]);
    gl_node *a2 = tu_node(g, "Abs", "abs2", 1, keep->outputs[0]);
    gl_node *sum = tu_node(g, "Add", "sum", 2, a1->outputs[0], a2->outputs[0]);
    tu_output(g, sum->outputs[0]);
    gl_value *prev = x;
    for (int i = 0; i < dead; i++) {
        char name[32];
        snprintf(name, sizeof(name), "dead%d", i);
        prev = tu_node(g, "Neg", name, 1, prev)->outputs[0];
    }
    /* As the loader does: each node stands for itself. */
    gl_node *n;
    gl_foreach_node(g, i, n)
        gl_node_set_provenance(n, &n->id, 1, -1);
    return m;
}

static gl_pipeline *run_plan(gl_model *m, const char *spec, unsigned flags)
{
    gl_pass_step *plan;
    size_t n;
    cr_assert_eq(gl_pass_list_parse(spec, &plan, &n), GL_OK, "%s", gl_error_message());
    gl_pipeline *p;
    cr_assert_eq(gl_pipeline_run(m, plan, n, NULL, flags, &p), GL_OK, "%s",
                 gl_error_message());
    free(plan);
    return p;
}

Test(pipeline, snapshots_counts_and_unchanged_detection)
{
    gl_pipeline *p = run_plan(graph_with_work(3), "toposort,dce,dce,cse",
                              GL_PIPELINE_KEEP_SNAPSHOTS);
    cr_assert_eq(p->n_steps, 5);
    cr_assert_null(p->steps[0].pass);
    cr_assert_eq(p->steps[0].nodes, 7);
    cr_assert_not(p->steps[1].changed, "toposort of a sorted graph changes nothing");
    cr_assert(p->steps[2].changed);
    cr_assert_eq(p->steps[2].nodes, 4, "three dead Neg nodes removed");
    cr_assert_eq(p->steps[2].rewrites, 3);
    cr_assert_not(p->steps[3].changed, "dce twice: the second finds nothing");
    cr_assert(p->steps[4].changed);
    cr_assert_eq(p->steps[4].nodes, 3, "abs2 merged into abs1");
    for (size_t k = 0; k < p->n_steps; k++) {
        cr_assert_not_null(p->steps[k].model);
        cr_assert_eq(gl_graph_verify(p->steps[k].model->graph, false), GL_OK);
        cr_assert_eq(p->steps[k].fingerprint, gl_graph_fingerprint(p->steps[k].model->graph));
    }
    char label[64];
    gl_snapshot_label(p, 0, label, sizeof(label));
    cr_assert_str_eq(label, "00-input");
    gl_snapshot_label(p, 4, label, sizeof(label));
    cr_assert_str_eq(label, "04-cse");
    gl_pipeline_free(p);
}

/* optimize without --explain or --json frees the records before saving (issue 23: 97k
 * memory-plan records on a 100k-node graph were held through the save): what its table
 * prints, per step, stays the same, and the log is empty. */
/* A pass that needs the order finds it checked unless the pipeline knows it: verified
 * after a step that touched the graph, or unchanged since a step that knew or checked.
 * A step that needs no order and changes nothing (fold-transpose) hands "not known" on. */
Test(pipeline, the_order_is_checked_unless_known)
{
    static const struct {
        const char *spec;
        int failing_step; /* 0: runs through */
        bool sorted;      /* the last step's model: known to be in order */
    } rows[] = {
        {"cse", 1, false},
        {"fold-transpose,cse", 2, false},
        {"fold-transpose,fold-transpose,dce", 3, false},
        {"toposort", 0, true},
        {"toposort,cse,fold-transpose,dce", 0, true},
        {"fold-transpose", 0, false},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_model *m = graph_with_work(0);
        gl_graph *g = m->graph;
        gl_node *order[4] = {gl_find_node(g, "sum"), gl_find_node(g, "abs2"),
                             gl_find_node(g, "abs1"), gl_find_node(g, "keep")};
        cr_assert_eq(gl_graph_set_order(g, order, 4), GL_OK);
        gl_pass_step *plan;
        size_t n;
        cr_assert_eq(gl_pass_list_parse(rows[i].spec, &plan, &n), GL_OK);
        gl_pipeline *p;
        gl_status st = gl_pipeline_run(m, plan, n, NULL, GL_PIPELINE_KEEP_SNAPSHOTS, &p);
        free(plan);
        if (rows[i].failing_step) {
            cr_expect_neq(st, GL_OK, "%s: ran through", rows[i].spec);
            cr_expect_eq(p->n_steps, (size_t)rows[i].failing_step, "%s", rows[i].spec);
            cr_expect(p->failure && strstr(p->failure, "is not in topological order"),
                      "%s: %s", rows[i].spec, p->failure ? p->failure : "(none)");
        } else {
            cr_expect_eq(st, GL_OK, "%s: %s", rows[i].spec, gl_error_message());
            cr_expect_eq(p->steps[p->n_steps - 1].sorted, rows[i].sorted, "%s", rows[i].spec);
        }
        gl_pipeline_free(p);
    }
}

Test(pipeline, dropping_the_decisions_keeps_what_the_table_prints)
{
    gl_pipeline *p = run_plan(graph_with_work(3), "toposort,dce,dce,cse", 0);
    cr_assert_gt(p->log.n, 0, "dce and cse record their rewrites");
    size_t n = p->n_steps;
    size_t *counts = calloc(n, sizeof(size_t));
    char(*texts)[64] = calloc(n, sizeof(*texts));
    for (size_t k = 0; k < n; k++) {
        counts[k] = p->steps[k].n_decisions;
        gl_snapshot_change_text(p, k, texts[k], sizeof(texts[k]));
    }
    int64_t next_id = p->log.id_base + (int64_t)p->log.n;
    gl_pipeline_drop_decisions(p);
    cr_expect_eq(p->log.n, 0);
    cr_expect_null(p->log.items);
    cr_expect_eq(p->log.id_base, next_id, "a record added after would not reuse an id");
    for (size_t k = 0; k < n; k++) {
        char text[64];
        gl_snapshot_change_text(p, k, text, sizeof(text));
        cr_expect_eq(p->steps[k].n_decisions, counts[k], "step %zu", k);
        cr_expect_str_eq(text, texts[k], "step %zu", k);
    }
    cr_expect_not_null(gl_pipeline_result(p));
    gl_pipeline_drop_decisions(NULL);
    free(counts);
    free(texts);
    gl_pipeline_free(p);
}

static gl_model *load_example(const char *rel)
{
    gl_model *m = NULL;
    cr_assert_eq(gl_model_load(tu_src(rel), NULL, &m), GL_OK, "%s: %s", rel, gl_error_message());
    return m;
}

/* optimize's table counts the decisions without keeping them (GL_PIPELINE_COUNT_DECISIONS):
 * every step counts as many, rewrites as many, and ends with the same graph as a run that
 * keeps them, on the examples (shape inference's records made first and completed at the
 * end, transpose-push's trial taken back, fusion's refusals) and with an op that has no
 * shape function. A --set keeps them: a veto reads the records. */
Test(pipeline, counting_decisions_gives_what_keeping_them_does)
{
    static const char *models[] = {"examples/conv_nhwc/model.onnx",
                                   "examples/transformer_block/model.onnx",
                                   "examples/mlp_external/model.onnx"};
    gl_pass_step *plan;
    size_t n_plan;
    cr_assert_eq(gl_pass_list_parse("all", &plan, &n_plan), GL_OK, "%s", gl_error_message());
    for (size_t i = 0; i < GL_ARRAY_LEN(models); i++) {
        gl_pipeline *kept = NULL, *counted = NULL;
        gl_model *a = load_example(models[i]), *b = load_example(models[i]);
        cr_assert_eq(gl_pipeline_run(a, plan, n_plan, NULL, 0, &kept), GL_OK, "%s",
                     gl_error_message());
        cr_assert_eq(gl_pipeline_run(b, plan, n_plan, NULL, GL_PIPELINE_COUNT_DECISIONS,
                                     &counted), GL_OK, "%s", gl_error_message());
        cr_expect(counted->log.count_only && !kept->log.count_only, "%s", models[i]);
        cr_expect_null(counted->log.items, "%s: nothing kept", models[i]);
        cr_assert_eq(counted->n_steps, kept->n_steps);
        for (size_t k = 0; k < kept->n_steps; k++) {
            const gl_snapshot *x = &kept->steps[k], *y = &counted->steps[k];
            cr_expect_eq(y->n_decisions, x->n_decisions, "%s step %zu", models[i], k);
            cr_expect_eq(y->first_decision, x->first_decision, "%s step %zu", models[i], k);
            cr_expect_eq(y->rewrites, x->rewrites, "%s step %zu", models[i], k);
            cr_expect_eq(y->fingerprint, x->fingerprint, "%s step %zu", models[i], k);
        }
        gl_pipeline_free(kept);
        gl_pipeline_free(counted);
    }
    gl_settings set = {0};
    cr_assert_eq(gl_settings_apply(&set, "fusion.units=0"), GL_OK);
    gl_pipeline *p = NULL;
    cr_assert_eq(gl_pipeline_run_each(load_example(models[0]), plan, n_plan, &set,
                                      GL_PIPELINE_COUNT_DECISIONS, NULL, NULL, &p), GL_OK);
    cr_expect(!p->log.count_only && p->log.n > 0, "anything --set keeps the records (a veto reads them)");
    gl_pipeline_free(p);
    gl_settings_free(&set);
    free(plan);
}

Test(pipeline, without_snapshots_only_the_result_is_kept)
{
    gl_pipeline *p = run_plan(graph_with_work(2), "dce,cse", 0);
    cr_assert_eq(p->n_steps, 3);
    cr_assert_null(p->steps[0].model);
    cr_assert_null(p->steps[1].model);
    cr_assert_not_null(gl_pipeline_result(p));
    cr_assert_eq(gl_pipeline_result(p)->graph->live_nodes, 3);
    gl_pipeline_free(p);
}

Test(pipeline, snapshots_unaffected_by_later_edits)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_value *w = tu_const_f32(g, "w", 1, (int64_t[]){2}, (float[]){1.5f, 2.5f});
    gl_node *add = tu_node(g, "Add", "add", 2, x, w);
    tu_output(g, add->outputs[0]);
    tu_node(g, "Neg", "dead", 1, x);
    /* toposort changes nothing (step 1 shares step 0's model); dce makes a copy. */
    gl_pipeline *p = run_plan(m, "toposort,dce", GL_PIPELINE_KEEP_SNAPSHOTS);
    uint64_t fp0 = gl_graph_fingerprint(p->steps[0].model->graph);

    /* Edit the last snapshot, a copy of its own, in place: bytes, an attribute, a name. */
    gl_graph *last = p->steps[2].model->graph;
    gl_value *lw = gl_find_value(last, "w");
    float *bytes = gl_tensor_make_writable(lw->init);
    bytes[0] = -7.0f;
    gl_node_set_attr_int(last->nodes[0], "marker", 1);
    cr_assert_eq(gl_rename_value(last, gl_find_value(last, "x"), "x_renamed"), GL_OK);

    const float *orig = gl_tensor_data(gl_find_value(p->steps[0].model->graph, "w")->init);
    cr_assert_float_eq(orig[0], 1.5f, 0);
    cr_assert_null(gl_node_attr(p->steps[0].model->graph->nodes[0], "marker"));
    cr_assert_not_null(gl_find_value(p->steps[1].model->graph, "x"));
    cr_assert_eq(gl_graph_fingerprint(p->steps[0].model->graph), fp0);
    cr_assert_neq(gl_graph_fingerprint(last), fp0);
    gl_pipeline_free(p);
}

/* Which kept steps share their predecessor's model: 'S' shares, '-' owns its own (step
 * 0 first). A step shares exactly when its pass changed nothing (issue 23: the workbench
 * keeps every step of a 100k-node graph). */
static const struct share_case {
    const char *plan;
    const char *shares;
} share_cases[] = {
    {"toposort,dce,dce,cse", "-S-S-"},
    {"dce,toposort,cse,cse", "--S-S"},
    {"cse,dce", "---"},
    {"toposort,toposort,toposort", "-SSS"},
};

static gl_pipeline *run_share_case(const struct share_case *c)
{
    gl_pipeline *p = run_plan(graph_with_work(2), c->plan, GL_PIPELINE_KEEP_SNAPSHOTS);
    cr_assert_eq(p->n_steps, strlen(c->shares), "%s", c->plan);
    return p;
}

/* The steps still holding a model are whole: verified, with their own fingerprint. */
static void expect_models_intact(const gl_pipeline *p, const char *what)
{
    for (size_t k = 0; k < p->n_steps; k++) {
        if (!p->steps[k].model)
            continue;
        cr_assert_eq(gl_graph_verify(p->steps[k].model->graph, false), GL_OK, "%s step %zu",
                     what, k);
        cr_assert_eq(gl_graph_fingerprint(p->steps[k].model->graph), p->steps[k].fingerprint,
                     "%s step %zu", what, k);
    }
}

Test(pipeline, unchanged_steps_share_the_previous_model)
{
    for (size_t c = 0; c < GL_ARRAY_LEN(share_cases); c++) {
        gl_pipeline *p = run_share_case(&share_cases[c]);
        for (size_t k = 1; k < p->n_steps; k++) {
            bool shares = share_cases[c].shares[k] == 'S';
            cr_assert_eq(p->steps[k].shares_model, shares, "%s step %zu", share_cases[c].plan,
                         k);
            cr_assert_eq(p->steps[k].model == p->steps[k - 1].model, shares, "%s step %zu",
                         share_cases[c].plan, k);
            cr_assert_eq(!p->steps[k].changed && p->steps[k].rewrites == 0, shares);
        }
        expect_models_intact(p, share_cases[c].plan);
        gl_pipeline_free(p);
    }
}

/* Dropping steps front to back (export) and back to front leaves the others whole: a
 * shared model passes to the next step holding it, and is freed once (the sanitizer
 * build sees a double free or a leak). */
Test(pipeline, dropping_a_step_keeps_the_steps_sharing_its_model)
{
    for (size_t c = 0; c < GL_ARRAY_LEN(share_cases); c++) {
        for (int backwards = 0; backwards < 2; backwards++) {
            gl_pipeline *p = run_share_case(&share_cases[c]);
            size_t last = p->n_steps - 1;
            for (size_t i = 0; i < last; i++) {
                size_t k = backwards ? last - 1 - i : i;
                gl_pipeline_drop(p, k);
                cr_assert_null(p->steps[k].model);
                expect_models_intact(p, share_cases[c].plan);
            }
            cr_assert_not_null(gl_pipeline_result(p));
            cr_assert_eq(gl_pipeline_result(p), p->steps[last].model);
            gl_pipeline_free(p);
        }
    }
}

/* The fingerprint sees what the saved file would show, and nothing else. */
Test(pipeline, fingerprint_sensitivity)
{
    gl_model *m = graph_with_work(1);
    uint64_t base = gl_graph_fingerprint(m->graph);
    gl_model *c = gl_model_clone(m);
    cr_assert_eq(gl_graph_fingerprint(c->graph), base, "a clone is the same graph");
    gl_node *keep = gl_find_node(c->graph, "keep");
    gl_node_set_provenance(keep, (uint32_t[]){99}, 1, 42);
    cr_assert_eq(gl_graph_fingerprint(c->graph), base, "provenance is not content");

    static const char *const edits[] = {"attr", "rename-node", "rename-value", "rewire",
                                        "shape", "order"};
    for (size_t e = 0; e < GL_ARRAY_LEN(edits); e++) {
        gl_model *d = gl_model_clone(m);
        gl_graph *g = d->graph;
        gl_node *n = gl_find_node(g, "abs1");
        if (!strcmp(edits[e], "attr"))
            gl_node_set_attr_int(n, "alpha", 1);
        else if (!strcmp(edits[e], "rename-node"))
            gl_rename_node(g, n, "abs_renamed");
        else if (!strcmp(edits[e], "rename-value"))
            gl_rename_value(g, n->outputs[0], "renamed_out");
        else if (!strcmp(edits[e], "rewire"))
            gl_set_input(g, n, 0, gl_find_value(g, "x"));
        else if (!strcmp(edits[e], "shape"))
            gl_shape_set_rank(&n->outputs[0]->type.shape, 3);
        else {
            gl_node *abs2 = gl_find_node(g, "abs2");
            gl_node *order[8];
            size_t k = 0;
            gl_node *it;
            gl_foreach_node(g, i, it)
                order[k++] = it == n ? abs2 : it == abs2 ? n : it;
            cr_assert_eq(gl_graph_set_order(g, order, k), GL_OK);
        }
        cr_assert_neq(gl_graph_fingerprint(g), base, "edit '%s' not seen", edits[e]);
        gl_model_free(d);
    }
    gl_model_free(c);
    gl_model_free(m);
}

/* ---- every kind of difference the fingerprint must see ----------------------------- */

/* x float[N,4] and an initializer w float[4] into Mul (attributes i, f, s, ints), whose
 * output float[N,4] is the graph's output: each row below edits one thing of it. */
static gl_model *fp_base(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 2, (int64_t[]){-1, 4});
    gl_dim_set_sym(&x->type.shape.dims[0], "N");
    gl_value *w = tu_const_f32(g, "w", 1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
    gl_node *mul = tu_node(g, "Mul", "mul", 2, x, w);
    gl_node_set_attr_int(mul, "i", 1);
    gl_node_set_attr_float(mul, "f", 0.5f);
    gl_node_set_attr_string(mul, "s", "a");
    gl_node_set_attr_ints(mul, "ints", (int64_t[]){1, 2}, 2);
    gl_type_copy(&mul->outputs[0]->type, &x->type);
    tu_output(g, mul->outputs[0]);
    return m;
}

static gl_node *fp_mul(gl_graph *g) { return gl_find_node(g, "mul"); }
static gl_value *fp_out(gl_graph *g) { return fp_mul(g)->outputs[0]; }
static gl_tensor *fp_w(gl_graph *g) { return gl_find_value(g, "w")->init; }
static gl_dim *fp_dim(gl_graph *g, int d) { return &fp_out(g)->type.shape.dims[d]; }

static void fp_retype(gl_value *v, const char *text)
{
    gl_type_free(&v->type);
    tu_parse_type(text, &v->type);
}

static void fp_set_text(char **field, const char *text)
{
    free(*field);
    *field = gl_xstrdup(text);
}

/* Nodes. */
static void fp_op_type(gl_graph *g) { fp_set_text(&fp_mul(g)->op_type, "Add"); }
static void fp_domain(gl_graph *g) { fp_set_text(&fp_mul(g)->domain, "com.example"); }
static void fp_node_name(gl_graph *g) { gl_rename_node(g, fp_mul(g), "mul2"); }
static void fp_rewire(gl_graph *g) { gl_set_input(g, fp_mul(g), 1, gl_find_value(g, "x")); }
static void fp_omitted_input(gl_graph *g) { gl_set_input(g, fp_mul(g), 2, NULL); }
static void fp_node_added(gl_graph *g) { tu_node(g, "Relu", "r", 1, gl_find_value(g, "x")); }
/* Values and the graph's interface. */
static void fp_value_name(gl_graph *g) { gl_rename_value(g, fp_out(g), "y"); }
static void fp_input_added(gl_graph *g) { tu_input(g, "z", GL_DT_FLOAT, 0, NULL); }
static void fp_output_twice(gl_graph *g) { gl_graph_add_output(g, fp_out(g)); }
static void fp_output_moved(gl_graph *g) { gl_graph_set_output(g, 0, gl_find_value(g, "x")); }
static void fp_input_type(gl_graph *g) { fp_retype(gl_find_value(g, "x"), "int64[N,4]"); }
/* Attributes. */
static void fp_attr_int(gl_graph *g) { gl_node_set_attr_int(fp_mul(g), "i", 2); }
static void fp_attr_float(gl_graph *g) { gl_node_set_attr_float(fp_mul(g), "f", 0.25f); }
static void fp_attr_string(gl_graph *g) { gl_node_set_attr_string(fp_mul(g), "s", "b"); }
static void fp_attr_ints(gl_graph *g)
{
    gl_node_set_attr_ints(fp_mul(g), "ints", (int64_t[]){1, 3}, 2);
}
static void fp_attr_ints_longer(gl_graph *g)
{
    gl_node_set_attr_ints(fp_mul(g), "ints", (int64_t[]){1, 2, 0}, 3);
}
static void fp_attr_kind(gl_graph *g) /* the same number as a float */
{
    gl_node_remove_attr(fp_mul(g), "i");
    gl_node_set_attr_float(fp_mul(g), "i", 1.0f);
}
static void fp_attr_renamed(gl_graph *g)
{
    gl_node_remove_attr(fp_mul(g), "i");
    gl_node_set_attr_int(fp_mul(g), "j", 1);
}
static void fp_attr_removed(gl_graph *g) { gl_node_remove_attr(fp_mul(g), "s"); }
/* Shapes (the rows that retype Mul's output are in the table). */
static void fp_sym_empty(gl_graph *g) { gl_dim_set_sym(fp_dim(g, 0), ""); }
/* The shape encoding's marker word as a dim's value, with and without a symbol. */
static void fp_marker_value(gl_graph *g) { fp_dim(g, 1)->value = INT64_MIN; }
static void fp_marker_with_sym(gl_graph *g) { fp_dim(g, 0)->value = INT64_MIN; }
/* A known dim that also names a symbol (not made by the IR, but distinct all the same). */
static void fp_number_with_sym(gl_graph *g)
{
    gl_dim *d = fp_dim(g, 1);
    d->sym = gl_xstrdup("N");
}
/* Initializers. */
static void fp_init_byte(gl_graph *g) { ((float *)gl_tensor_make_writable(fp_w(g)))[3] = 5; }
static void fp_init_dtype(gl_graph *g) { fp_w(g)->dtype = GL_DT_INT32; }
static void fp_init_dims(gl_graph *g)
{
    gl_tensor *t = fp_w(g);
    t->rank = 2;
    t->dims[0] = t->dims[1] = 2;
}
static void fp_init_name(gl_graph *g) { gl_rename_value(g, gl_find_value(g, "w"), "w2"); }
static void fp_init_added(gl_graph *g)
{
    tu_const_f32(g, "b", 1, (int64_t[]){1}, (float[]){0});
}

static const struct {
    const char *what;
    void (*edit)(gl_graph *g);
    const char *out_type; /* edit NULL: Mul's output gets this type (tu_parse_type) */
} fp_edits[] = {
    {"op type", fp_op_type, NULL},
    {"domain", fp_domain, NULL},
    {"node name", fp_node_name, NULL},
    {"input rewired", fp_rewire, NULL},
    {"omitted optional input", fp_omitted_input, NULL},
    {"node added", fp_node_added, NULL},
    {"value renamed", fp_value_name, NULL},
    {"graph input added", fp_input_added, NULL},
    {"graph output listed twice", fp_output_twice, NULL},
    {"graph output moved", fp_output_moved, NULL},
    {"graph input's type", fp_input_type, NULL},
    {"int attribute", fp_attr_int, NULL},
    {"float attribute", fp_attr_float, NULL},
    {"string attribute", fp_attr_string, NULL},
    {"ints attribute", fp_attr_ints, NULL},
    {"ints attribute longer", fp_attr_ints_longer, NULL},
    {"attribute kind", fp_attr_kind, NULL},
    {"attribute renamed", fp_attr_renamed, NULL},
    {"attribute removed", fp_attr_removed, NULL},
    {"dtype", NULL, "double[N,4]"},
    {"nothing known", NULL, "?"},
    {"rank unknown", NULL, "float"},
    {"scalar", NULL, "float[]"},
    {"rank", NULL, "float[N,4,1]"},
    {"dims swapped", NULL, "float[4,N]"},
    {"dim value", NULL, "float[N,5]"},
    {"symbol to number", NULL, "float[1,4]"},
    {"symbol renamed", NULL, "float[M,4]"},
    {"symbol to unknown", NULL, "float[?,4]"},
    {"number to symbol", NULL, "float[N,K]"},
    {"empty symbol", fp_sym_empty, NULL},
    {"marker word as a value", fp_marker_value, NULL},
    {"marker word as a value with a symbol", fp_marker_with_sym, NULL},
    {"number with a symbol", fp_number_with_sym, NULL},
    {"initializer byte", fp_init_byte, NULL},
    {"initializer dtype", fp_init_dtype, NULL},
    {"initializer dims", fp_init_dims, NULL},
    {"initializer renamed", fp_init_name, NULL},
    {"initializer added", fp_init_added, NULL},
};

/* Every row's graph differs from the base and from every other row's: one edit of any
 * kind (node, value, attribute, type, shape, initializer) changes the fingerprint, and
 * no two edits land on the same one. */
/* A graph of 16k node slots or more is hashed in two halves, the second on a thread: a
 * clone has the same fingerprint, and an edit in either half changes it. */
Test(pipeline, fingerprint_of_a_big_graph_sees_both_halves)
{
    gl_model *m = graph_with_work(20000);
    cr_assert_geq(m->graph->n_nodes, 16384);
    uint64_t f = gl_graph_fingerprint(m->graph);
    gl_model *c = gl_model_clone(m);
    cr_expect_eq(gl_graph_fingerprint(c->graph), f, "a clone");
    cr_expect_eq(gl_graph_fingerprint(m->graph), f, "again");
    size_t at[] = {3, m->graph->n_nodes / 2 + 7, m->graph->n_nodes - 2};
    for (size_t i = 0; i < GL_ARRAY_LEN(at); i++) {
        gl_model *e = gl_model_clone(m);
        gl_node *n = e->graph->nodes[at[i]];
        cr_assert(n);
        gl_rename_node(e->graph, n, "renamed");
        cr_expect_neq(gl_graph_fingerprint(e->graph), f, "node slot %zu renamed", at[i]);
        gl_model_free(e);
    }
    gl_model_free(c);
    gl_model_free(m);
}

Test(pipeline, fingerprint_sees_every_kind_of_difference)
{
    enum { N = GL_ARRAY_LEN(fp_edits) };
    uint64_t prints[N + 1];
    gl_model *base = fp_base();
    prints[N] = gl_graph_fingerprint(base->graph);
    for (size_t e = 0; e < N; e++) {
        gl_model *m = gl_model_clone(base);
        cr_assert_eq(gl_graph_fingerprint(m->graph), prints[N], "%s: the clone",
                     fp_edits[e].what);
        if (fp_edits[e].edit)
            fp_edits[e].edit(m->graph);
        else
            fp_retype(fp_out(m->graph), fp_edits[e].out_type);
        prints[e] = gl_graph_fingerprint(m->graph);
        gl_model_free(m);
    }
    gl_model_free(base);
    for (size_t a = 0; a <= N; a++)
        for (size_t b = a + 1; b <= N; b++)
            cr_expect_neq(prints[a], prints[b], "'%s' and '%s' give one fingerprint",
                          fp_edits[a].what, b < N ? fp_edits[b].what : "the base");
}

/* Budgets K = 0..all give a monotone sequence of graphs, each K exactly K rewrites, and
 * the decisions of a budgeted run are the first records of the full run, same ids. */
Test(pipeline, budgets_give_a_monotone_sequence)
{
    const int dead = 6;
    gl_pipeline *full = run_plan(graph_with_work(dead), "toposort,dce",
                                 GL_PIPELINE_KEEP_SNAPSHOTS);
    const gl_snapshot *fs = &full->steps[2];
    cr_assert_eq(fs->rewrites, dead);
    size_t prev_nodes = full->steps[1].nodes + 1;
    for (int k = 0; k <= dead + 1; k++) {
        char spec[64];
        snprintf(spec, sizeof(spec), "toposort,dce:%d", k);
        gl_pipeline *p = run_plan(graph_with_work(dead), spec, GL_PIPELINE_KEEP_SNAPSHOTS);
        const gl_snapshot *s = &p->steps[2];
        int expect = k < dead ? k : dead;
        cr_assert_eq(s->rewrites, expect, "K=%d", k);
        cr_assert_eq(s->nodes, full->steps[1].nodes - (size_t)expect, "K=%d", k);
        cr_assert_lt(s->nodes, prev_nodes, "K=%d: not monotone", k);
        prev_nodes = s->nodes + (k >= dead); /* past the end, the graph stops changing */
        size_t applied = 0;
        for (size_t i = 0; i < s->n_decisions; i++) {
            const gl_decision *d = &p->log.items[s->first_decision + i];
            const gl_decision *f = &full->log.items[fs->first_decision + i];
            cr_assert_eq(d->id, f->id, "K=%d: ids differ", k);
            cr_assert_str_eq(d->rule, f->rule);
            cr_assert_eq(d->n_nodes, f->n_nodes);
            if (d->n_nodes)
                cr_assert_str_eq(d->nodes[0], f->nodes[0]);
            applied += d->verdict == GL_APPLIED;
        }
        cr_assert_eq(applied, (size_t)expect, "K=%d", k);
        /* Replaying step 2 of the full run with budget K gives the same graph. */
        gl_model *r;
        gl_decision_log log = {0};
        cr_assert_eq(gl_pipeline_replay(full, 2, k, &r, &log), GL_OK, "%s",
                     gl_error_message());
        cr_assert_eq(gl_graph_fingerprint(r->graph), s->fingerprint, "K=%d: replay", k);
        if (log.n)
            cr_assert_eq(log.items[0].id, (int64_t)fs->first_decision);
        gl_decision_log_free(&log);
        gl_model_free(r);
        gl_pipeline_free(p);
    }
    gl_pipeline_free(full);
}

/* all:K is the model after the first K rewrites of the whole default pipeline, counted
 * as bisect counts them: the full run's step replayed with what is left of K there. */
Test(pipeline, all_k_counts_rewrites_over_the_whole_pipeline)
{
    gl_pipeline *full = run_plan(graph_with_work(4), "all", GL_PIPELINE_KEEP_SNAPSHOTS);
    int64_t total = 0;
    for (size_t k = 1; k < full->n_steps; k++)
        total += full->steps[k].rewrites;
    cr_assert_gt(total, 5, "the graph gives several passes work");
    for (int64_t K = 0; K <= total + 1; K++) {
        char spec[32];
        snprintf(spec, sizeof(spec), "all:%lld", (long long)K);
        gl_pipeline *p = run_plan(graph_with_work(4), spec, 0);
        int64_t made = 0;
        for (size_t k = 1; k < p->n_steps; k++)
            made += p->steps[k].rewrites;
        cr_assert_eq(made, K < total ? K : total, "%s", spec);
        /* Where the full run makes its K-th rewrite: step s, its k-th. */
        size_t s = 1;
        int64_t k = K;
        while (s < full->n_steps && k > full->steps[s].rewrites)
            k -= full->steps[s++].rewrites;
        uint64_t want = full->steps[full->n_steps - 1].fingerprint;
        if (K == 0) {
            cr_assert_eq(p->n_steps, 1, "all:0 runs no step");
            want = full->steps[0].fingerprint;
        } else if (K <= total) {
            cr_assert_eq(p->n_steps, s + 1, "%s: the step of the K-th rewrite is the last", spec);
            const gl_snapshot *last = &p->steps[s];
            cr_assert_eq(last->budget, k, "%s: labelled with what was left", spec);
            for (size_t i = 1; i < s; i++)
                cr_assert_eq(p->steps[i].budget, GL_BUDGET_UNLIMITED, "%s: step %zu", spec, i);
            gl_model *r;
            gl_decision_log log = {0};
            cr_assert_eq(gl_pipeline_replay(full, s, k, &r, &log), GL_OK);
            want = gl_graph_fingerprint(r->graph);
            gl_decision_log_free(&log);
            gl_model_free(r);
        }
        cr_assert_eq(p->steps[p->n_steps - 1].fingerprint, want, "%s", spec);
        gl_pipeline_free(p);
    }
    gl_pipeline_free(full);
}

Test(pipeline, decision_ids_are_stable_across_runs)
{
    gl_pipeline *a = run_plan(graph_with_work(4), "all", 0);
    gl_pipeline *b = run_plan(graph_with_work(4), "all", 0);
    cr_assert_eq(a->log.n, b->log.n);
    cr_assert_gt(a->log.n, 0);
    for (size_t i = 0; i < a->log.n; i++) {
        cr_assert_eq(a->log.items[i].id, (int64_t)i);
        cr_assert_eq(b->log.items[i].id, (int64_t)i);
        cr_assert_str_eq(a->log.items[i].rule, b->log.items[i].rule);
        cr_assert_str_eq(a->log.items[i].reason, b->log.items[i].reason);
    }
    gl_pipeline_free(a);
    gl_pipeline_free(b);
}

Test(pipeline, trace_follows_a_merged_node)
{
    gl_pipeline *p = run_plan(graph_with_work(0), "cse", GL_PIPELINE_KEEP_SNAPSHOTS);
    const gl_graph *g0 = p->steps[0].model->graph;
    uint32_t abs1 = gl_find_node(g0, "abs1")->id, abs2 = gl_find_node(g0, "abs2")->id;
    uint32_t *ids;
    size_t n = gl_pipeline_trace(p, 1, abs2, &ids);
    cr_assert_eq(n, 1, "abs2 went somewhere");
    cr_assert_eq(ids[0], abs1, "abs2 went into abs1");
    free(ids);
    n = gl_pipeline_trace(p, 1, abs1, &ids);
    cr_assert_eq(n, 1);
    free(ids);
    gl_pipeline_free(p);
}

/* ---- --set ------------------------------------------------------------------------- */

static const struct {
    const char *assignment;
    bool ok;
    const char *error_part;
} set_cases[] = {
    {"load.freeze-inputs=1", true, NULL},
    {"load.freeze-inputs=0x1", true, NULL},
    {"load.bogus=1", false, "not an option"},
    {"nopass.x=1", false, "no pass"},
    {"load.freeze-inputs=yes", false, "whole number"},
    {"load.freeze-inputs=", false, "whole number"},
    {"freeze-inputs=1", false, "PASS.OPTION=VALUE"},
    {"load.freeze-inputs", false, "PASS.OPTION=VALUE"},
    {".x=1", false, "PASS.OPTION=VALUE"},
};

Test(settings, apply_and_lookup)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(set_cases); i++) {
        gl_settings s = {0};
        gl_status st = gl_settings_apply(&s, set_cases[i].assignment);
        cr_expect_eq(st == GL_OK, set_cases[i].ok, "'%s': %s", set_cases[i].assignment,
                     gl_error_message());
        if (st != GL_OK)
            cr_expect(strstr(gl_error_message(), set_cases[i].error_part) != NULL,
                      "'%s': %s", set_cases[i].assignment, gl_error_message());
        gl_settings_free(&s);
    }
    gl_settings s = {0};
    cr_assert_eq(gl_settings_lookup(&s, "load", "freeze-inputs", 7), 7, "default");
    cr_assert_eq(gl_settings_apply(&s, "load.freeze-inputs=1"), GL_OK);
    cr_assert_eq(gl_settings_apply(&s, "load.freeze-inputs=0"), GL_OK);
    cr_assert_eq(gl_settings_lookup(&s, "load", "freeze-inputs", 7), 0, "last one wins");
    gl_settings_free(&s);
}

Test(decisions, records_print_and_numbers)
{
    gl_pass_ctx ctx = {.pass = gl_pass_find("dce"), .step = 3, .budget = 1};
    gl_decision_log log = {0};
    ctx.log = &log;
    gl_decision *d = gl_pass_decide(&ctx, "dead-node", GL_REFUSED, "kept '%s'", "n1");
    gl_decision_add_node(d, "n1");
    gl_decision_add_number(d, "bytes", 4096);
    gl_decision_add_text(d, "perm", "0,2,3,1");
    cr_assert(gl_pass_may_rewrite(&ctx), "a refusal does not spend the budget");
    d = gl_pass_decide(&ctx, "dead-node", GL_APPLIED, "removed '%s'", "n2");
    cr_assert_not(gl_pass_may_rewrite(&ctx), "budget 1 spent");
    cr_assert_eq(log.n, 2);
    cr_assert_eq(log.items[1].id, 1);
    cr_assert_eq(log.items[0].step, 3);
    cr_assert_str_eq(log.items[0].pass, "dce");
    cr_assert_float_eq(gl_decision_number_value(&log.items[0], "bytes"), 4096, 0);
    cr_assert(isnan(gl_decision_number_value(&log.items[0], "missing")));
    cr_assert_str_eq(gl_decision_number_text(&log.items[0], "perm"), "0,2,3,1");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    gl_decision_print(&log.items[0], f);
    fclose(f);
    cr_assert(strstr(text, "#0") && strstr(text, "refused") && strstr(text, "kept 'n1'") &&
                  strstr(text, "[n1]") && strstr(text, "bytes=4096") &&
                  strstr(text, "perm=0,2,3,1"),
              "%s", text);
    free(text);
    gl_decision_log_free(&log);
}

/* The pass, rule and number keys of a record are words shared by every record (a 100k-node
 * memory plan makes 97036 records: issue 23), whatever buffer the caller's text was in;
 * nodes and numbers past the first few still grow, each kept in order. */
Test(decisions, records_share_words_and_grow)
{
    gl_pass_ctx ctx = {.pass = gl_pass_find("memory-plan"), .step = 2, .budget = 100};
    gl_decision_log log = {0};
    ctx.log = &log;
    for (int r = 0; r < 3; r++) {
        char rule[16], key[16];
        snprintf(rule, sizeof(rule), "in-place");
        snprintf(key, sizeof(key), "bytes");
        gl_decision *d = gl_pass_decide(&ctx, rule, GL_APPLIED, "record %d", r);
        for (int k = 0; k <= 9 * r; k++) {
            char node[16];
            snprintf(node, sizeof(node), "n%d", k);
            gl_decision_add_node(d, node);
            gl_decision_add_number(d, k ? "order" : key, k);
        }
        memset(rule, 'x', sizeof(rule) - 1); /* the record keeps no pointer into these */
        memset(key, 'x', sizeof(key) - 1);
    }
    cr_assert_eq(log.n, 3);
    const char *bytes_key = log.items[0].numbers[0].key, *order_key = log.items[1].numbers[1].key;
    for (size_t r = 0; r < log.n; r++) {
        const gl_decision *d = &log.items[r];
        cr_expect_str_eq(d->rule, "in-place");
        cr_expect_str_eq(d->pass, "memory-plan");
        cr_expect(d->rule == log.items[0].rule && d->pass == log.items[0].pass,
                  "record %zu has its own copy of a word", r);
        cr_assert_eq(d->n_nodes, 9 * r + 1);
        cr_assert_eq(d->n_numbers, 9 * r + 1);
        for (size_t k = 0; k < d->n_nodes; k++) {
            char node[32];
            snprintf(node, sizeof(node), "n%zu", k);
            cr_expect_str_eq(d->nodes[k], node);
            cr_expect_eq(d->node_ids[k], GL_DECISION_NO_ID);
            cr_expect_str_eq(d->numbers[k].key, k ? "order" : "bytes");
            cr_expect(d->numbers[k].key == (k ? order_key : bytes_key),
                      "record %zu number %zu: key copied", r, k);
            cr_expect_float_eq(d->numbers[k].value, (double)k, 0);
        }
    }
    gl_decision_log_free(&log);
}

/* A pass that needs types, run before any shape-inference step, says once why its
 * refusals follow; after shape-inference it says nothing. The note is the step's first
 * record, in the full run and in a replay of that step alike. */
static size_t count_notes(const gl_decision_log *log, const char *rule)
{
    size_t k = 0;
    for (size_t i = 0; i < log->n; i++)
        k += log->items[i].verdict == GL_NOTE && strcmp(log->items[i].rule, rule) == 0;
    return k;
}

Test(pipeline, needs_types_note_only_before_shape_inference)
{
    static const struct {
        const char *passes;
        size_t notes;
    } rows[] = {
        {"fusion", 1},
        {"patterns,fold-transpose", 2},
        {"shape-inference,fusion", 0},
        {"shape-inference,patterns,fold-transpose,fusion", 0},
        {"cse,dce", 0}, /* they need no types */
    };
    for (size_t r = 0; r < GL_ARRAY_LEN(rows); r++) {
        gl_pipeline *p = run_plan(graph_with_work(0), rows[r].passes, GL_PIPELINE_KEEP_SNAPSHOTS);
        cr_assert_eq(count_notes(&p->log, "needs-types"), rows[r].notes, "%s",
                     rows[r].passes);
        if (rows[r].notes) {
            const gl_decision *d = &p->log.items[p->steps[1].first_decision];
            cr_assert_str_eq(d->rule, "needs-types", "%s", rows[r].passes);
            cr_assert(strstr(d->reason, "4 of 4 node outputs"), "%s", d->reason);
            gl_model *out;
            gl_decision_log log = {0};
            cr_assert_eq(gl_pipeline_replay(p, 1, 0, &out, &log), GL_OK, "%s",
                         gl_error_message());
            cr_assert_eq(count_notes(&log, "needs-types"), 1);
            cr_assert_eq(log.items[0].id, d->id);
            gl_model_free(out);
            gl_decision_log_free(&log);
        }
        gl_pipeline_free(p);
    }
}

/* Names may repeat in a model; a decision names its nodes by id as well, in the log, in
 * the text and in the JSON, so a reader can tell the twins apart. */
Test(decisions, nodes_by_id_as_well_as_name)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_node *a = tu_node(g, "Abs", "twin", 1, x);
    gl_node *b = tu_node(g, "Abs", "twin", 1, x);
    gl_node *sum = tu_node(g, "Add", "sum", 2, a->outputs[0], b->outputs[0]);
    tu_output(g, sum->outputs[0]);
    cr_assert_neq(a->id, b->id);
    gl_pipeline *p = run_plan(m, "cse", GL_PIPELINE_KEEP_SNAPSHOTS);
    const gl_decision *merge = NULL;
    for (size_t i = 0; i < p->log.n; i++)
        if (p->log.items[i].verdict == GL_APPLIED && p->log.items[i].n_nodes == 2)
            merge = &p->log.items[i];
    cr_assert(merge, "cse merged the twins");
    cr_assert_str_eq(merge->nodes[0], "twin");
    cr_assert_str_eq(merge->nodes[1], "twin");
    uint32_t want[2] = {a->id, b->id};
    cr_assert(merge->node_ids[0] == want[0] || merge->node_ids[0] == want[1]);
    cr_assert(merge->node_ids[1] == want[0] || merge->node_ids[1] == want[1]);
    cr_assert_neq(merge->node_ids[0], merge->node_ids[1]);

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    gl_decision_print(merge, f);
    fclose(f);
    char both[64];
    snprintf(both, sizeof(both), "[twin (n%u), twin (n%u)]", (unsigned)merge->node_ids[0],
             (unsigned)merge->node_ids[1]);
    cr_assert(strstr(text, both), "%s wanted in %s", both, text);
    free(text);

    f = open_memstream(&text, &len);
    gl_json j;
    gl_json_init(&j, f, false);
    gl_decision_json(merge, &j);
    gl_json_finish(&j);
    fclose(f);
    snprintf(both, sizeof(both), "\"node_ids\":[%u,%u]", (unsigned)merge->node_ids[0],
             (unsigned)merge->node_ids[1]);
    cr_assert(strstr(text, both), "%s wanted in %s", both, text);
    free(text);
    gl_pipeline_free(p);

    /* A node known by name only says so: no id in the text, null in the JSON. */
    gl_decision_log log = {0};
    gl_pass_ctx ctx = {.pass = gl_pass_find("dce"), .budget = 1, .log = &log};
    gl_decision_add_node(gl_pass_decide(&ctx, "r", GL_NOTE, "n"), "byname");
    f = open_memstream(&text, &len);
    gl_json_init(&j, f, false);
    gl_decision_json(&log.items[0], &j);
    gl_json_finish(&j);
    fclose(f);
    cr_assert(strstr(text, "\"node_ids\":[null]"), "%s", text);
    free(text);
    gl_decision_log_free(&log);
}

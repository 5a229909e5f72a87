/* test_ui_whatif.c — the workbench's b (bisect up to the shown step, ending on the bad
 * rewrite replayed) and x (veto an applied decision or force a refused one, or lift
 * either, and run the pipeline again), driven headless (jobs run inline). */
#include "testutil.h"

#include "driver/driver.h"
#include "onnx/onnx_io.h"
#include "ui/ui.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define CONV "examples/conv_nhwc/model.onnx"

/* A workbench on the model at `path` after the default pipeline with --set `set` (may be
 * NULL). */
static void open_path(gl_ui *ui, const char *path, const char *set)
{
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    o.pipeline_flags = GL_PIPELINE_KEEP_SNAPSHOTS;
    o.always_pipeline = true;
    if (set)
        cr_assert_eq(gl_session_option_set(&o, "set", set), GL_OK, "%s", gl_error_message());
    gl_session s;
    cr_assert_eq(gl_session_open(path, &o, &s), GL_OK, "%s", gl_error_message());
    gl_session_opts_free(&o);
    gl_ui_init(ui, path);
    ui->sync_jobs = true;
    gl_ui_set_pipeline(ui, s.pipeline, NULL);
}

static void open_with(gl_ui *ui, const char *rel, const char *set)
{
    open_path(ui, tu_src(rel), set);
}

/* The record selected in the decisions view (shown or not: bisect leaves the diff on
 * top of it). */
static const gl_decision *decisions_view_selection(gl_ui *ui)
{
    size_t n;
    const gl_decision *d = gl_ui_decisions(ui, &n);
    int row = ui->views[GL_VIEW_DECISIONS].selected;
    cr_assert(row >= 0 && (size_t)row < n);
    return &d[row];
}

static const gl_decision *selected_decision(gl_ui *ui)
{
    cr_assert_eq(ui->current, (size_t)GL_VIEW_DECISIONS);
    size_t n;
    const gl_decision *d = gl_ui_decisions(ui, &n);
    int row = ui->views[GL_VIEW_DECISIONS].selected;
    cr_assert(row >= 0 && (size_t)row < n);
    return &d[row];
}

typedef struct bisect_key_case {
    const char *fault;
    size_t from_step;  /* where b is pressed */
    size_t step;       /* where it ends (0: it finds nothing and stays) */
    int64_t k;         /* ...replayed to this many rewrites of that step */
    int64_t id;
    const char *status;
    const char *diff;  /* a line of the diff of rewrite k alone */
} bisect_key_case;

/* The diff the diff view shows, as text (malloc'd). */
static char *shown_diff_text(const gl_ui *ui)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    cr_assert(gl_ui_shown_diff(ui));
    gl_diff_write_text(gl_ui_shown_diff(ui), f);
    fclose(f);
    return buf;
}

/* Whether the diff the diff view shows has a line containing `text`. */
static bool shown_diff_has(const gl_ui *ui, const char *text)
{
    char *buf = shown_diff_text(ui);
    bool has = strstr(buf, text) != NULL;
    free(buf);
    return has;
}

Test(whatif, b_ends_on_the_first_bad_decision)
{
    static const bisect_key_case cases[] = {
        /* Rewrite 2 of 4 alone: #3 moved the Transpose made by rewrite 1 below the Add. */
        {"transpose-push.fault=2", 15, 6, 2, 3, "#3 transpose-push push-through-Add (rewrite 2 "
         "of 4) changes the outputs: output 'features'", "+ Transpose 'channel_shift/Transpose'"},
        /* The last rewrite of its step: replayed to all of them, still that rewrite alone. */
        {"transpose-push.fault=4", 15, 6, 4, 5, "#5 transpose-push cancel (rewrite 4 of 4)",
         "- Transpose 'conv2_to_nchw'"},
        /* Fusion's two rewrites: conv1 + relu1 (#15), then conv2 + relu2 (#16). */
        {"fusion.fault=1", 15, 15, 1, 15, "#15 fusion conv-activation (rewrite 1 of 2)",
         "FusedNhwcConvRelu_1"},
        {"fusion.fault=2", 15, 15, 2, 16, "#16 fusion conv-activation (rewrite 2 of 2)",
         "FusedNhwcConvRelu_2"},
        /* Up to step 13 the fusion fault is not there yet. */
        {"fusion.fault=1", 13, 0, 0, -1, "no rewrite of steps 1-13 changes the outputs", NULL},
        {NULL, 15, 0, 0, -1, "no rewrite of steps 1-15 changes the outputs", NULL},
        {NULL, 0, 0, 0, -1, "step 0 is the model as loaded", NULL},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        const bisect_key_case *t = &cases[c];
        gl_ui ui;
        open_with(&ui, CONV, t->fault);
        gl_ui_goto_step(&ui, t->from_step);
        gl_ui_key(&ui, 'b');
        cr_assert(strstr(ui.status, t->status), "case %zu: status '%s'", c, ui.status);
        if (t->step) {
            cr_assert_eq(ui.step, t->step, "case %zu", c);
            cr_assert_eq(ui.budget, t->k, "case %zu: replayed to PASS:%lld", c, (long long)t->k);
            cr_assert_eq(ui.current, (size_t)GL_VIEW_DIFF, "case %zu: the diff on top", c);
            cr_assert(shown_diff_has(&ui, t->diff), "case %zu: no '%s'", c, t->diff);
            cr_assert_eq(decisions_view_selection(&ui)->id, t->id, "case %zu", c);
            cr_assert_eq(ui.replay.rewrite_decision, t->id, "case %zu", c);
            /* Esc: the decisions view, that record selected */
            gl_ui_key(&ui, 27);
            cr_assert_eq(selected_decision(&ui)->id, t->id, "case %zu", c);
        } else {
            cr_assert_eq(ui.step, t->from_step, "case %zu", c);
        }
        gl_ui_free(&ui);
    }
}

Test(whatif, x_vetoes_and_lifts)
{
    gl_ui ui;
    open_with(&ui, CONV, NULL);
    gl_ui_goto_step(&ui, 6);
    cr_assert_eq(ui.pipeline->steps[6].nodes, 10u);
    cr_assert(gl_ui_decisions_select(&ui, 3));
    gl_ui_key(&ui, 'x');
    /* The push of #3 is vetoed: step 6 keeps two more nodes (Transposes). */
    cr_assert(strstr(ui.status, "what-if: #3 vetoed; after step 6 12 nodes (were 10)"), "%s",
              ui.status);
    cr_assert_eq(ui.step, 6u);
    const gl_decision *d = selected_decision(&ui);
    cr_assert_eq(d->id, 3);
    cr_assert_eq(d->verdict, GL_REFUSED);
    cr_assert_eq(ui.pipeline->steps[6].nodes, 12u);
    /* x on the vetoed record lifts it: the first pipeline again. */
    gl_ui_key(&ui, 'x');
    cr_assert(strstr(ui.status, "#3 allowed again; after step 6 10 nodes (were 12)"), "%s",
              ui.status);
    cr_assert_eq(selected_decision(&ui)->verdict, GL_APPLIED);
    cr_assert_eq(ui.pipeline->settings.n, 0u);
    /* A refusal for correctness cannot be forced, a note has nothing to veto. */
    cr_assert(gl_ui_decisions_select(&ui, 1));
    gl_ui_key(&ui, 'x');
    cr_assert(strstr(ui.status, "#1 was refused by a check of correctness "
                                "(push-through-Conv): it cannot be forced"), "%s", ui.status);
    gl_ui_goto_step(&ui, 2);
    cr_assert(gl_ui_decisions_select(&ui, 0));
    gl_ui_key(&ui, 'x');
    cr_assert(strstr(ui.status, "is a note"), "%s", ui.status);
    gl_ui_free(&ui);
}

/* A veto the run refuses (here: an id that is not the named pass's) leaves the shown
 * pipeline as it was. */
Test(whatif, a_failed_rerun_keeps_the_pipeline)
{
    gl_ui ui;
    open_with(&ui, CONV, NULL);
    gl_pipeline *before = ui.pipeline;
    gl_ui_goto_step(&ui, 15);
    cr_assert(gl_ui_decisions_select(&ui, 16));
    /* The record says dce: the re-run's check finds #16 is fusion's. */
    static char dce[] = "dce";
    gl_decision *d = &ui.pipeline->log.items[16];
    const char *pass = d->pass;
    d->pass = dce;
    gl_ui_key(&ui, 'x');
    d->pass = pass;
    cr_assert(ui.pipeline == before);
    cr_assert(ui.status_error);
    cr_assert(strstr(ui.status, "what-if failed (the pipeline shown is unchanged): --set "
                                "dce.veto=16: decision #16 is fusion"), "%s", ui.status);
    gl_ui_free(&ui);
}

/* x on a refusal by a cost forces it; x on the forced record lets the rule decide again.
 * The model: an NCHW Conv and Relu, whose region layout refuses on cost. */
Test(whatif, x_forces_a_cost_refusal_and_lifts_it)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){1, 4, 5, 6});
    float w[3 * 4 * 3 * 3];
    for (size_t i = 0; i < GL_ARRAY_LEN(w); i++)
        w[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
    gl_value *wv = tu_const_f32(g, "w", 4, (int64_t[]){3, 4, 3, 3}, w);
    gl_node *conv = tu_node(g, "Conv", "conv", 2, x, wv);
    tu_output(g, tu_node(g, "Relu", "relu", 1, conv->outputs[0])->outputs[0]);
    char *dir = tu_tmpdir(), path[4200];
    snprintf(path, sizeof(path), "%s/nchw.onnx", dir);
    cr_assert_eq(gl_model_save(m, path, NULL), GL_OK, "%s", gl_error_message());
    gl_model_free(m);

    gl_ui ui;
    open_path(&ui, path, NULL);
    const gl_decision *f = NULL;
    for (size_t i = 0; i < ui.pipeline->log.n && !f; i++)
        if (gl_decision_number_value(&ui.pipeline->log.items[i], "forceable") == 1)
            f = &ui.pipeline->log.items[i];
    cr_assert(f && !strcmp(f->rule, "nhwc-region") && f->verdict == GL_REFUSED);
    int64_t id = f->id;
    size_t step = (size_t)f->step, nodes = ui.pipeline->steps[step].nodes;
    gl_ui_goto_step(&ui, step);
    cr_assert(gl_ui_decisions_select(&ui, id));
    gl_ui_key(&ui, 'x');
    char want[160];
    snprintf(want, sizeof(want), "what-if: #%lld forced; after step %zu", (long long)id, step);
    cr_assert(strstr(ui.status, want) && strstr(ui.status, "x on it again lifts the force"),
              "%s", ui.status);
    const gl_decision *d = selected_decision(&ui);
    cr_assert_eq(d->id, id);
    cr_assert_eq(d->verdict, GL_APPLIED);
    cr_assert(strstr(d->reason, "forced (--set layout.force="), "%s", d->reason);
    cr_assert_eq(ui.pipeline->settings.n, 1u);
    cr_assert_gt(ui.pipeline->steps[step].nodes, nodes, "the region got its Transposes");
    gl_ui_key(&ui, 'x');
    snprintf(want, sizeof(want), "#%lld left to its rule again", (long long)id);
    cr_assert(strstr(ui.status, want), "%s", ui.status);
    cr_assert_eq(selected_decision(&ui)->verdict, GL_REFUSED);
    cr_assert_eq(ui.pipeline->settings.n, 0u);
    cr_assert_eq(ui.pipeline->steps[step].nodes, nodes);
    gl_ui_free(&ui);
    tu_rmtree(dir);
    free(dir);
}

/* ---- the two branches -------------------------------------------------------------------- */

static void bar_branch(const gl_ui *ui, char *buf, size_t len)
{
    gl_bar_branch(ui, true, buf, len);
}

static const char *node_name(const gl_ui *ui)
{
    const gl_node *n = gl_graph_index_node(&ui->index, ui->sel.node_id);
    return n ? n->name : "";
}

/* x keeps the pipeline it replaces as the other branch, X swaps them at the same step
 * (and rewrite), a second x drops the older one: two branches at most. */
Test(whatif, x_keeps_the_other_branch_and_X_swaps)
{
    gl_ui ui;
    open_with(&ui, CONV, NULL);
    char bar[256];
    bar_branch(&ui, bar, sizeof(bar));
    cr_assert_str_empty(bar, "no branch yet: '%s'", bar);
    gl_ui_key(&ui, 'X');
    cr_assert(strstr(ui.status, "there is none yet"), "%s", ui.status);

    gl_pipeline *as_run = ui.pipeline;
    gl_ui_goto_step(&ui, 6);
    cr_assert(gl_ui_decisions_select(&ui, 3));
    gl_ui_key(&ui, 'x');
    gl_pipeline *vetoed = ui.pipeline;
    cr_assert(vetoed != as_run);
    cr_assert(ui.other.pipeline == as_run, "x keeps the pipeline it replaced");
    bar_branch(&ui, bar, sizeof(bar));
    cr_assert_str_eq(bar, "[#3 vetoed │ X: as run, 10 nodes] ");
    gl_ui_goto_step(&ui, 15);
    bar_branch(&ui, bar, sizeof(bar));
    cr_assert_str_eq(bar, "[#3 vetoed │ X: as run, 6 nodes] ", "the other's count at step 15");

    /* X at step 6, inside the pass after 2 rewrites, a node selected: all kept */
    gl_ui_goto_step(&ui, 6);
    gl_ui_set_budget(&ui, 2);
    cr_assert(ui.replay.model);
    const gl_node *conv = gl_find_node(gl_ui_graph(&ui), "conv1");
    cr_assert(conv);
    gl_ui_select_node(&ui, conv->id);
    gl_ui_key(&ui, 'X');
    cr_assert(ui.pipeline == as_run && ui.other.pipeline == vetoed);
    cr_assert_eq(ui.step, 6u);
    cr_assert_eq(ui.budget, 2, "the same rewrite of the step");
    cr_assert(ui.replay.model);
    cr_assert_str_eq(node_name(&ui), "conv1");
    gl_ui_set_budget(&ui, -1);
    cr_assert(strstr(ui.status, "10 nodes"), "%s", ui.status);
    bar_branch(&ui, bar, sizeof(bar));
    cr_assert_str_eq(bar, "[as run │ X: #3 vetoed, 12 nodes] ");
    gl_ui_key(&ui, 'X');
    cr_assert(strstr(ui.status, "branch #3 vetoed shown (X: back to as run); step 6: 12 nodes "
                                "here, 10 there"), "%s", ui.status);
    cr_assert(ui.pipeline == vetoed && ui.other.pipeline == as_run);

    /* x on the vetoed record lifts it: a third pipeline; the shown one is the other now,
     * the first is freed (ASan: no leak, no use after free) */
    cr_assert(gl_ui_decisions_select(&ui, 3));
    gl_ui_key(&ui, 'x');
    cr_assert(ui.pipeline != vetoed && ui.pipeline != as_run);
    cr_assert(ui.other.pipeline == vetoed);
    bar_branch(&ui, bar, sizeof(bar));
    cr_assert_str_eq(bar, "[as run │ X: #3 vetoed, 12 nodes] ");
    gl_ui_free(&ui);
}

/* X keeps the decisions view on the record selected before it (issue 24: `X j x` vetoed
 * the record below the first row, not below the one selected). Each case: keys in the
 * decisions view of the vetoed branch at step 6 before X, the record selected after X. */
Test(whatif, X_keeps_the_selected_decision)
{
    static const struct {
        const char *keys;
        int64_t id;
    } cases[] = {
        {"", 3},   /* x left #3 selected */
        {"j", 4},
        {"k", 2},
        {"kk", 1},
        {"jX", 4}, /* and back again */
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_ui ui;
        open_with(&ui, CONV, NULL);
        gl_ui_goto_step(&ui, 6);
        cr_assert(gl_ui_decisions_select(&ui, 3));
        gl_ui_key(&ui, 'x');
        for (const char *k = cases[c].keys; *k; k++)
            gl_ui_key(&ui, *k);
        gl_ui_key(&ui, 'X');
        cr_expect_eq(selected_decision(&ui)->id, cases[c].id, "case %zu (%s): #%lld", c,
                     cases[c].keys, (long long)selected_decision(&ui)->id);
        gl_ui_free(&ui);
    }
}

Test(whatif, branch_labels_name_every_veto_and_force)
{
    static const struct {
        const char *set;
        const char *label;
    } cases[] = {
        {NULL, "as run"},
        {"transpose-push.veto=3", "#3 vetoed"},
        {"transpose-push.veto=3,5", "#3 vetoed, #5 vetoed"},
        {"fusion.exact-shapes=1", "as run"},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_ui ui;
        open_with(&ui, CONV, cases[c].set);
        char label[128];
        gl_ui_branch_label(ui.pipeline, label, sizeof(label));
        cr_expect_str_eq(label, cases[c].label, "case %zu", c);
        gl_ui_free(&ui);
    }
}

/* The number of the first line of text that starts with prefix (-1: none). */
static int line_starting(const char *text, const char *prefix)
{
    int row = 0;
    for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL, row++)
        if (!strncmp(p, prefix, strlen(prefix)))
            return row;
    return -1;
}

/* The diff's branch scope: D after x compares the other branch's graph at the shown step
 * with this one, by node name. */
Test(whatif, D_diffs_against_the_other_branch)
{
    gl_ui ui;
    open_with(&ui, CONV, NULL);
    gl_ui_goto_step(&ui, 6);
    gl_ui_key(&ui, 'D');
    cr_assert(!ui.diff_branch, "no branch: D keeps its two scopes");
    gl_ui_key(&ui, 'D');
    cr_assert(gl_ui_decisions_select(&ui, 3));
    gl_ui_key(&ui, 'x');
    gl_ui_key(&ui, 'D');
    cr_assert(ui.diff_branch);
    cr_assert_eq(ui.current, (size_t)GL_VIEW_DIFF);
    /* the veto of #3 leaves exactly two Transposes more, and removes nothing */
    const gl_diff *d = gl_ui_shown_diff(&ui);
    cr_assert_eq(d->n_added, 2u);
    cr_assert_eq(d->n_removed, 0u);
    cr_assert_eq(d->n_replaced, 0u);
    for (size_t i = 0; i < d->n_nodes; i++)
        if (d->nodes[i].kind == GL_CHANGE_ADDED)
            cr_expect_str_eq(d->nodes[i].new_ops[0], "Transpose");
    char *text = shown_diff_text(&ui);
    cr_assert(strstr(text, "+ Transpose 'conv2_to_nchw'"), "%s", text);
    free(text);
    /* the scope stays across steps: at step 0 both branches are the loaded model */
    gl_ui_goto_step(&ui, 0);
    cr_assert(gl_diff_empty(gl_ui_shown_diff(&ui)));
    /* X: the other way round; Enter on a node only there says so */
    gl_ui_goto_step(&ui, 6);
    gl_ui_key(&ui, 'X');
    d = gl_ui_shown_diff(&ui);
    cr_assert_eq(d->n_added, 0u);
    cr_assert_eq(d->n_removed, 2u);
    gl_view *v = gl_ui_view(&ui);
    cr_assert_eq(ui.current, (size_t)GL_VIEW_DIFF);
    text = shown_diff_text(&ui);
    v->selected = line_starting(text, "- Transpose");
    free(text);
    cr_assert_geq(v->selected, 1);
    gl_ui_key(&ui, '\n');
    cr_assert(strstr(ui.status, "is only in the other branch: X shows it"), "%s", ui.status);
    /* D cycles back to the step before */
    gl_ui_key(&ui, 'D');
    cr_assert(!ui.diff_branch);
    cr_assert(gl_ui_shown_diff(&ui) == ui.step_diffs[6]);
    gl_ui_free(&ui);
}

/* The profile row named `name` (SIZE_MAX: none). */
static size_t row_named(const gl_profile *p, const char *name)
{
    for (size_t i = 0; i < p->n_rows; i++)
        if (!strcmp(p->rows[i].name, name))
            return i;
    return SIZE_MAX;
}

static size_t count_only_here(const gl_run *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->prof->n_rows; i++)
        if (r->prof->rows[i].parent == SIZE_MAX && gl_run_there_ms(r, i) < 0)
            n++;
    return n;
}

/* r after x runs the shown step of both branches on the same inputs: a veto that moves
 * Transposes changes no numbers, so the outputs agree; each node is timed here and, where
 * the other branch has it, there. */
Test(whatif, r_runs_both_branches)
{
    gl_ui ui;
    open_with(&ui, CONV, NULL);
    gl_ui_goto_step(&ui, 6);
    cr_assert(gl_ui_decisions_select(&ui, 3));
    gl_ui_key(&ui, 'x');
    gl_ui_key(&ui, 'r');
    const gl_run *r = gl_ui_run_shown(&ui);
    cr_assert(r && r->branch, "%s", ui.status);
    const gl_run_branch *b = r->branch;
    cr_assert(strstr(ui.status, "of both branches on seeded random inputs: here (#3 vetoed) "
                                "and there (as run) agree"), "%s", ui.status);
    cr_assert_eq(b->nodes_here, 12u);
    cr_assert_eq(b->nodes_there, 10u);
    cr_assert_gt(r->prof->backends[r->fused].wall.median, 0);
    cr_assert_gt(b->prof->backends[0].wall.median, 0);
    cr_assert_eq(b->n_outputs, 1u);
    cr_assert(b->outputs_ok);
    cr_assert(b->between[0].ok && b->here_ref[0].ok && b->there_ref[0].ok);
    cr_assert_lt(b->between[0].max_abs, 1e-4);
    size_t conv = row_named(r->prof, "conv1");
    cr_assert_neq(conv, SIZE_MAX);
    cr_assert_gt(gl_run_there_ms(r, conv), 0, "conv1 is in both branches");
    cr_assert_eq(count_only_here(r), 2u, "the two Transposes the veto keeps");
    cr_assert_eq(b->n_only_there, 0u);
    /* X: the run is of the other pair; r again runs it the other way round */
    gl_ui_key(&ui, 'X');
    cr_assert_null(gl_ui_run_shown(&ui));
    gl_ui_key(&ui, 'r');
    r = gl_ui_run_shown(&ui);
    cr_assert(r && r->branch);
    cr_assert_eq(count_only_here(r), 0u);
    cr_assert_eq(r->branch->n_only_there, 2u);
    for (size_t i = 0; i < r->branch->n_only_there; i++)
        cr_expect_str_eq(r->branch->prof->rows[r->branch->only_there[i]].op, "Transpose");
    /* the run view lists them after this branch's rows; Enter there says where they are */
    cr_assert_eq(ui.current, (size_t)GL_VIEW_RUN);
    size_t *order = gl_xcalloc(r->prof->n_rows, sizeof(size_t));
    size_t n_here = gl_run_order(r->prof, r->fused, ui.run_sort, r->float_nmse, order);
    free(order);
    gl_view *v = gl_ui_view(&ui);
    v->selected = (int)n_here;
    gl_ui_key(&ui, '\n');
    cr_assert_eq(ui.current, (size_t)GL_VIEW_RUN);
    cr_assert(strstr(ui.status, "only the other branch has this node"), "%s", ui.status);
    gl_ui_free(&ui);
}

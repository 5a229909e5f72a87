/* test_ui.c — the workbench without a terminal: the key table and the help text made
 * from it, the pipeline bar's text, searching lists, the selection following a node
 * across steps through provenance, node history, requests driven headless (jobs run
 * inline). What a key costs on a 20,000-node graph is measured in bench/bench_ui_keys.c,
 * not asserted here: a timed test fails on a busy machine. */
#include "testutil.h"

#include "driver/driver.h"
#include "onnx/onnx_io.h"
#include "ui/ui.h"

#include <criterion/criterion.h>
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- keys --------------------------------------------------------------------------- */

/* Every name of keys.def parses, and no key is bound to two requests. */
Test(keys, every_name_in_the_table_parses_and_no_key_is_bound_twice)
{
    int seen_key[1024];
    gl_request seen_req[1024];
    size_t n_seen = 0;
    for (int r = 0; r < GL_REQ_COUNT; r++) {
        char names[128];
        snprintf(names, sizeof(names), "%s", gl_request_keys((gl_request)r));
        cr_assert(names[0], "request %d has no key", r);
        for (char *w = strtok(names, " "); w; w = strtok(NULL, " ")) {
            int code = gl_key_parse(w);
            cr_assert(code >= 0, "key name '%s' of request %d does not parse", w, r);
            for (size_t i = 0; i < n_seen; i++)
                cr_assert(seen_key[i] != code, "key '%s' is bound to requests %d and %d", w,
                          (int)seen_req[i], r);
            seen_key[n_seen] = code;
            seen_req[n_seen++] = (gl_request)r;
            cr_assert_eq(gl_key_request(code), (gl_request)r, "key '%s' maps elsewhere", w);
        }
    }
    cr_assert_gt(n_seen, (size_t)GL_REQ_COUNT);
}

typedef struct key_case {
    const char *name;
    int code;
} key_case;

Test(keys, names_parse_to_curses_codes)
{
    static const key_case cases[] = {
        {"Right", KEY_RIGHT}, {"Left", KEY_LEFT}, {"PgDn", KEY_NPAGE}, {"Home", KEY_HOME},
        {"Enter", '\n'},      {"Esc", 27},        {"Tab", '\t'},       {"Space", ' '},
        {"C-c", 3},           {"]", ']'},         {"?", '?'},          {"G", 'G'},
        {"", -1},             {"Foo", -1},        {"C-", -1},          {"C-C", -1},
        {"ab", -1},           {"right", -1},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        cr_expect_eq(gl_key_parse(cases[i].name), cases[i].code, "'%s'", cases[i].name);
}

typedef struct binding_case {
    int key;
    gl_request request;
} binding_case;

Test(keys, keys_of_the_issue_reach_their_requests)
{
    static const binding_case cases[] = {
        {']', GL_REQ_STEP_NEXT},      {KEY_RIGHT, GL_REQ_STEP_NEXT}, {'[', GL_REQ_STEP_PREV},
        {KEY_LEFT, GL_REQ_STEP_PREV}, {'+', GL_REQ_REWRITE_NEXT},    {'-', GL_REQ_REWRITE_PREV},
        {'/', GL_REQ_SEARCH},         {'n', GL_REQ_SEARCH_NEXT},     {'N', GL_REQ_SEARCH_PREV},
        {'\n', GL_REQ_ENTER},         {'\r', GL_REQ_ENTER},          {KEY_ENTER, GL_REQ_ENTER},
        {27, GL_REQ_BACK},            {'\t', GL_REQ_NEXT_VIEW},      {'d', GL_REQ_VIEW_DIFF},
        {'c', GL_REQ_VIEW_DECISIONS}, {'v', GL_REQ_VIEW_GRAPH},      {'f', GL_REQ_FILTER_REFUSED},
        {'e', GL_REQ_EXPORT_STEP},    {'E', GL_REQ_EXPORT_ALL},      {'o', GL_REQ_OPEN_SVG},
        {'7', GL_REQ_JUMP},           {'?', GL_REQ_HELP},            {'q', GL_REQ_QUIT},
        {3, GL_REQ_CANCEL},           {'j', GL_REQ_MOVE_DOWN},       {KEY_UP, GL_REQ_MOVE_UP},
        {'g', GL_REQ_TOP},            {'G', GL_REQ_BOTTOM},          {'Z', GL_REQ_COUNT},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        cr_expect_eq(gl_key_request(cases[i].key), cases[i].request, "key %d", cases[i].key);
}

Test(keys, help_has_one_line_per_request_from_the_table)
{
    char **lines;
    size_t n = gl_keys_help_lines(&lines, true);
    cr_assert_eq(n, (size_t)GL_REQ_COUNT);
    for (size_t r = 0; r < n; r++) {
        cr_expect(strstr(lines[r], gl_request_help((gl_request)r)), "line %zu: '%s'", r, lines[r]);
    }
    /* names as shown: arrows on UTF-8, digit runs as a range, the text column aligned */
    cr_expect(strstr(lines[GL_REQ_STEP_NEXT], "→ ]"), "'%s'", lines[GL_REQ_STEP_NEXT]);
    cr_expect(strstr(lines[GL_REQ_JUMP], "0-9"), "'%s'", lines[GL_REQ_JUMP]);
    const char *a = strstr(lines[GL_REQ_QUIT], gl_request_help(GL_REQ_QUIT));
    const char *b = strstr(lines[GL_REQ_HELP], gl_request_help(GL_REQ_HELP));
    cr_expect_eq(gl_ui_text_width(lines[GL_REQ_QUIT]) - gl_ui_text_width(a),
                 gl_ui_text_width(lines[GL_REQ_HELP]) - gl_ui_text_width(b));
    gl_free_lines(lines, n);

    n = gl_keys_help_lines(&lines, false);
    cr_expect(strstr(lines[GL_REQ_STEP_NEXT], "Right ]"), "'%s'", lines[GL_REQ_STEP_NEXT]);
    gl_free_lines(lines, n);
}

/* ---- the bar -------------------------------------------------------------------------- */

static const gl_bar_item bar_items[] = {
    {"load 374", false},  {"toposort 374", false}, {"shapes 374", false}, {"fold 186*", true},
    {"cse 180*", false},  {"dce 170*", false},     {"tpush 160*", false}, {"fold 160", false},
    {"cse 160", false},   {"dce 160", false},
};

Test(bar, joins_every_step_when_it_fits)
{
    char buf[512];
    int col, len;
    int w = gl_bar_format(bar_items, 4, 200, true, buf, sizeof(buf), &col, &len);
    cr_assert_str_eq(buf, "load 374 → toposort 374 → shapes 374 → fold 186*");
    cr_expect_eq(w, gl_ui_text_width(buf));
    cr_expect_eq(col, 39);
    cr_expect_eq(len, 9);
    gl_bar_format(bar_items, 2, 200, false, buf, sizeof(buf), &col, &len);
    cr_expect_str_eq(buf, "load 374 -> toposort 374");
}

Test(bar, elides_around_the_current_step_when_narrow)
{
    char buf[512];
    int col, len;
    for (int width = 60; width >= 20; width -= 10) {
        for (int utf8 = 0; utf8 < 2; utf8++) {
            int w = gl_bar_format(bar_items, GL_ARRAY_LEN(bar_items), width, utf8, buf,
                                  sizeof(buf), &col, &len);
            cr_expect_leq(w, width, "width %d: '%s'", width, buf);
            cr_expect(strstr(buf, "fold 186*"), "width %d: current step gone: '%s'", width, buf);
            cr_expect(strstr(buf, utf8 ? "…" : "..."), "width %d: no ellipsis: '%s'", width, buf);
            cr_expect_eq(len, 9);
            /* the current item sits where the formatter says */
            const char *at = buf;
            for (int c = 0; c < col; c++)
                do
                    at++;
                while (((unsigned char)*at & 0xC0) == 0x80);
            cr_expect(strncmp(at, "fold 186*", 9) == 0, "width %d: col %d in '%s'", width, col, buf);
        }
    }
    /* 60 columns still show a neighbour on each side */
    gl_bar_format(bar_items, GL_ARRAY_LEN(bar_items), 60, true, buf, sizeof(buf), &col, &len);
    cr_expect(strstr(buf, "shapes 374 → fold 186* → cse 180*"), "'%s'", buf);
}

Test(bar, a_tiny_width_cuts_the_current_item_and_stays_inside)
{
    char buf[64];
    int col, len;
    int w = gl_bar_format(bar_items, GL_ARRAY_LEN(bar_items), 5, true, buf, sizeof(buf), &col, &len);
    cr_expect_leq(w, 5, "'%s'", buf);
    cr_expect_eq(gl_bar_format(bar_items, GL_ARRAY_LEN(bar_items), 0, true, buf, sizeof(buf),
                               &col, &len), 0);
}

Test(bar, click_columns_find_their_step)
{
    cr_expect_eq(gl_bar_item_at(bar_items, 4, 200, true, 0), 0);
    cr_expect_eq(gl_bar_item_at(bar_items, 4, 200, true, 11), 1);
    cr_expect_eq(gl_bar_item_at(bar_items, 4, 200, true, 9), -1); /* the arrow */
    cr_expect_eq(gl_bar_item_at(bar_items, 4, 200, true, 40), 3);
    cr_expect_eq(gl_bar_item_at(bar_items, 4, 200, true, 120), -1);
}

/* ---- searching lists --------------------------------------------------------------------- */

typedef struct match_case {
    const char *text, *pattern;
    bool match;
} match_case;

Test(search, substring_ignoring_case)
{
    static const match_case cases[] = {
        {"Conv", "conv", true},        {"conv_3", "V_3", true}, {"Transpose", "pose", true},
        {"Relu", "relux", false},      {"Relu", "", false},     {"", "a", false},
        {"MaxPool_12", "pool_1", true}, {"abc", "abcd", false},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        cr_expect_eq(gl_ui_match(cases[i].text, cases[i].pattern), cases[i].match, "'%s' in '%s'",
                     cases[i].pattern, cases[i].text);
}

static bool row_is_multiple_of_3(int row, void *ctx)
{
    (void)ctx;
    return row % 3 == 0;
}

static bool no_row(int row, void *ctx)
{
    (void)row;
    (void)ctx;
    return false;
}

Test(search, find_row_wraps_in_both_directions)
{
    cr_expect_eq(gl_ui_find_row(10, 3, 1, true, row_is_multiple_of_3, NULL), 3);
    cr_expect_eq(gl_ui_find_row(10, 3, 1, false, row_is_multiple_of_3, NULL), 6);
    cr_expect_eq(gl_ui_find_row(10, 9, 1, false, row_is_multiple_of_3, NULL), 0);
    cr_expect_eq(gl_ui_find_row(10, 3, -1, false, row_is_multiple_of_3, NULL), 0);
    cr_expect_eq(gl_ui_find_row(10, 0, -1, false, row_is_multiple_of_3, NULL), 9);
    cr_expect_eq(gl_ui_find_row(10, 4, 1, false, no_row, NULL), -1);
    cr_expect_eq(gl_ui_find_row(0, 0, 1, true, row_is_multiple_of_3, NULL), -1);
}

Test(search, nodes_match_by_op_name_or_domain)
{
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_node *a = tu_node(m->graph, "Relu", "first_act", 1, x);
    gl_node *b = gl_add_node(m->graph, "FusedConv", "com.microsoft", "fc", &x, 1, 1);
    cr_expect(gl_ui_node_matches(a, "relu"));
    cr_expect(gl_ui_node_matches(a, "ACT"));
    cr_expect(!gl_ui_node_matches(a, "conv"));
    cr_expect(gl_ui_node_matches(b, "microsoft"));
    cr_expect(gl_ui_node_matches(b, "fusedconv"));
    gl_model_free(m);
}

/* ---- the selection follows a node ---------------------------------------------------------- */

Test(follow, same_id_then_provenance_then_nothing)
{
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_node *a = tu_node(m->graph, "Relu", "a", 1, x);
    gl_node *b = tu_node(m->graph, "Relu", "b", 1, a->outputs[0]);
    gl_node *c = tu_node(m->graph, "Relu", "c", 1, b->outputs[0]);
    gl_node_set_provenance(a, (uint32_t[]){7}, 1, -1);
    gl_node_set_provenance(b, (uint32_t[]){3, 9}, 2, 4);
    gl_node_set_provenance(c, (uint32_t[]){9}, 1, 5);
    gl_graph_index ix = {0};
    gl_graph_index_build(&ix, m->graph);
    cr_assert_eq(ix.n_rows, 3u);
    cr_expect_eq(gl_ui_follow(&ix, (gl_selection){7, a->id, false}), a->id); /* still there */
    cr_expect_eq(gl_ui_follow(&ix, (gl_selection){9, 999, false}), b->id); /* first for 9 */
    cr_expect_eq(gl_ui_follow(&ix, (gl_selection){3, 999, false}), b->id);
    cr_expect_eq(gl_ui_follow(&ix, (gl_selection){42, 999, false}), UINT32_MAX);
    cr_expect_eq(gl_ui_follow(&ix, (gl_selection){UINT32_MAX, 999, false}), UINT32_MAX);
    /* the op histogram: most frequent first */
    cr_expect_eq(ix.n_ops, 1u);
    cr_expect_str_eq(ix.ops[0].op, "Relu");
    cr_expect_eq(ix.ops[0].count, 3u);
    gl_graph_index_free(&ix);
    gl_model_free(m);
}

/* ---- a workbench on a real pipeline, headless ---------------------------------------------- */

/* The pipeline as the workbench's load job gets it (driver/driver.h). */
static gl_pipeline *run_pipeline(const char *path, const char *passes)
{
    gl_session_opts o;
    gl_session_opts_init(&o, passes);
    o.pipeline_flags = GL_PIPELINE_KEEP_SNAPSHOTS;
    o.always_pipeline = true;
    gl_session s;
    cr_assert_eq(gl_session_open(path, &o, &s), GL_OK, "%s", gl_error_message());
    gl_session_opts_free(&o);
    return s.pipeline; /* the caller owns it */
}

static void open_headless(gl_ui *ui, const char *rel, const char *passes)
{
    const char *path = tu_src(rel);
    gl_ui_init(ui, path);
    ui->sync_jobs = true;
    gl_ui_set_pipeline(ui, run_pipeline(path, passes), NULL);
}

static const gl_node *selected(const gl_ui *ui)
{
    return gl_graph_index_node(&ui->index, ui->sel.node_id);
}

static size_t step_of(const gl_ui *ui, const char *pass, size_t nth)
{
    for (size_t k = 1; k < ui->pipeline->n_steps; k++)
        if (strcmp(ui->pipeline->steps[k].pass->name, pass) == 0 && nth-- == 0)
            return k;
    cr_assert_fail("no step %s", pass);
    return 0;
}

Test(workbench, steps_and_the_bar)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    cr_assert_eq(ui.step, 0u);
    cr_expect_eq(ui.index.n_rows, 14u);
    gl_ui_request(&ui, GL_REQ_STEP_PREV);
    cr_expect_eq(ui.step, 0u);
    gl_ui_key(&ui, ']');
    cr_expect_eq(ui.step, 1u);
    gl_ui_key(&ui, KEY_LEFT);
    cr_expect_eq(ui.step, 0u);
    size_t tp = step_of(&ui, "transpose-push", 0);
    gl_ui_goto_step(&ui, tp);
    gl_bar_item *items;
    size_t n = gl_bar_items(&ui, &items);
    cr_assert_eq(n, ui.pipeline->n_steps);
    cr_expect_str_eq(items[0].text, "load 14");
    char want[64];
    snprintf(want, sizeof(want), "tpush %zu*", ui.pipeline->steps[tp].nodes);
    cr_expect_str_eq(items[tp].text, want);
    cr_expect(items[tp].current);
    cr_expect(!items[0].current);
    cr_expect_str_eq(items[1].text, "toposort 14"); /* unchanged: no mark */
    free(items);
    gl_ui_free(&ui);
}

/* The status line of each step says what the step did in words that agree with
 * themselves (issue 24): the memory plan annotates, it does not rewrite ("unchanged, 3
 * rewrites"); a count of one takes the singular ("1 decisions"). */
Test(workbench, step_status_says_what_the_step_did)
{
    static const struct {
        size_t step;
        const char *status; /* its start; the time follows */
    } cases[] = {
        {0, "00-input: the model as loaded, 14 nodes"},
        {1, "01-toposort: unchanged, 14 nodes, 0 decisions, "},
        {2, "02-shape-inference: unchanged, 14 nodes, 1 decision, "},
        {6, "06-transpose-push: 4 rewrites, 10 nodes, 5 decisions, "},
        {11, "11-layout: 1 rewrite, 14 nodes, 1 decision, "},
        {16, "16-memory-plan: graph unchanged; 3 outputs in place, 6 nodes, 5 decisions, "},
    };
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_ui_goto_step(&ui, cases[c].step);
        cr_expect(strncmp(ui.status, cases[c].status, strlen(cases[c].status)) == 0,
                  "step %zu: '%s'", cases[c].step, ui.status);
    }
    gl_ui_free(&ui);
}

/* The node list's op counts take a fused group's kind, not its function's name
 * (FusedNhwcConvRelu_1 and _2 are one row of 2: issue 24). */
Test(workbench, op_counts_group_fused_functions_by_kind)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    gl_ui_goto_step(&ui, step_of(&ui, "fusion", 0));
    size_t groups = 0;
    for (size_t i = 0; i < ui.index.n_ops; i++) {
        const ui_op_tally *t = &ui.index.ops[i];
        if (strncmp(t->op, "FusedNhwcConvRelu", 17) == 0) {
            cr_expect_eq(t->op_len, 17, "'%s'", t->op);
            cr_expect_eq(t->count, 2u, "'%.*s'", t->op_len, t->op);
            groups++;
        }
    }
    cr_expect_eq(groups, 1u, "one row for the kind");
    cr_expect_eq(ui.index.ops[0].count, 2u, "the most frequent first");
    gl_ui_free(&ui);
}

Test(workbench, digits_jump_to_steps)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    gl_ui_key(&ui, '3');
    cr_expect_eq(ui.step, 3u);
    gl_ui_key(&ui, '9'); /* "39" is no step: 9 alone */
    cr_expect_eq(ui.step, 9u);
    gl_ui_key(&ui, 'j');
    gl_ui_key(&ui, '0');
    cr_expect_eq(ui.step, 0u);
    gl_ui_free(&ui);
}

Test(workbench, rewrites_step_inside_a_pass)
{
    gl_ui ui;
    open_headless(&ui, "examples/transformer_block/model.onnx", "all");
    size_t cf = step_of(&ui, "constant-folding", 0);
    gl_ui_goto_step(&ui, cf);
    int64_t total = ui.pipeline->steps[cf].rewrites;
    cr_assert_gt(total, 2);
    size_t full_nodes = ui.index.n_rows;
    gl_ui_key(&ui, '-');
    cr_expect_eq(ui.budget, total - 1);
    cr_expect_eq(ui.index.n_rows, full_nodes + 1, "one fold undone: one node back");
    size_t n_dec;
    gl_ui_decisions(&ui, &n_dec);
    cr_expect_eq(n_dec, (size_t)(total - 1));
    gl_bar_item *items;
    gl_bar_items(&ui, &items);
    char want[64];
    snprintf(want, sizeof(want), "fold %lld/%lld rewrites", (long long)(total - 1), (long long)total);
    cr_expect_str_eq(items[cf].text, want);
    free(items);
    gl_ui_key(&ui, '-');
    cr_expect_eq(ui.budget, total - 2);
    gl_ui_key(&ui, '+');
    gl_ui_key(&ui, '+');
    cr_expect_eq(ui.budget, -1, "all rewrites again");
    cr_expect_null(ui.replay.model);
    cr_expect_eq(ui.index.n_rows, full_nodes);
    /* the first step is the model as loaded: nothing to step inside */
    gl_ui_goto_step(&ui, 0);
    gl_ui_key(&ui, '-');
    cr_expect_eq(ui.budget, -1);
    cr_expect(strstr(ui.status, "step 0"), "'%s'", ui.status);
    gl_ui_free(&ui);
}

Test(workbench, selection_follows_a_node_across_steps)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    const gl_node *n = gl_find_node(gl_ui_graph(&ui), "channel_scale");
    cr_assert(n);
    gl_ui_select_node(&ui, n->id);
    size_t tp = step_of(&ui, "transpose-push", 0);
    gl_ui_goto_step(&ui, tp);
    cr_assert(selected(&ui));
    cr_expect_str_eq(selected(&ui)->name, "channel_scale");
    gl_ui_goto_step(&ui, ui.pipeline->n_steps - 1);
    cr_expect_str_eq(selected(&ui)->name, "channel_scale");
    gl_ui_goto_step(&ui, 0);
    cr_expect_str_eq(selected(&ui)->name, "channel_scale");

    /* a Transpose that the pass removes: the selection stays in place */
    n = gl_find_node(gl_ui_graph(&ui), "Transpose_6");
    cr_assert(n);
    gl_ui_select_node(&ui, n->id);
    int row = ui.views[GL_VIEW_NODES].selected;
    gl_ui_goto_step(&ui, tp);
    cr_assert(selected(&ui));
    cr_expect_neq(selected(&ui)->name, NULL);
    cr_expect(ui.views[GL_VIEW_NODES].selected <= row);
    gl_ui_free(&ui);
}

Test(workbench, history_names_the_step_and_decision)
{
    gl_ui ui;
    /* The pipeline up to the first transpose-push's cleanup (layout would turn conv1 into
     * a channels-last node, and the second push change channel_scale again). */
    open_headless(&ui, "examples/conv_nhwc/model.onnx",
                  "toposort,shape-inference,constant-folding,cse,dce,transpose-push,"
                  "constant-folding,cse,dce");
    size_t tp = step_of(&ui, "transpose-push", 0);
    const gl_graph *g0 = gl_ui_step_graph(&ui, 0);
    const gl_node *gone = gl_find_node(g0, "Transpose_6");
    const gl_node *kept = gl_find_node(g0, "channel_scale");
    const gl_node *untouched = gl_find_node(g0, "conv1");
    cr_assert(gone && kept && untouched);

    gl_history_entry *h;
    size_t n = gl_ui_node_history(&ui, gone->id, &h);
    cr_assert_eq(n, 2u);
    cr_expect_eq(h[0].step, 0u);
    cr_expect_str_eq(h[0].text, "loaded from the file");
    cr_expect_eq(h[1].step, tp);
    cr_expect(h[1].gone);
    cr_expect_geq(h[1].decision, 0);
    /* the decision that removed it names it */
    const gl_decision *d = &ui.pipeline->log.items[h[1].decision];
    bool named = false;
    for (size_t i = 0; i < d->n_nodes; i++)
        named |= strcmp(d->nodes[i], "Transpose_6") == 0;
    cr_expect(named, "decision #%lld does not name Transpose_6", (long long)d->id);
    cr_expect(strncmp(h[1].text, "removed (#", 10) == 0, "'%s'", h[1].text);
    free(h);

    n = gl_ui_node_history(&ui, kept->id, &h);
    cr_assert_eq(n, 2u);
    cr_expect_eq(h[1].kind, GL_CHANGE_MODIFIED);
    cr_expect(!h[1].gone);
    char want[128];
    snprintf(want, sizeof(want), "changed (#%lld push-through-Mul): input 0", (long long)h[1].decision);
    cr_expect(strncmp(h[1].text, want, strlen(want)) == 0, "'%s'", h[1].text);
    cr_expect_geq(h[1].decision, 0);
    free(h);

    n = gl_ui_node_history(&ui, untouched->id, &h);
    cr_expect_eq(n, 1u);
    free(h);
    gl_ui_free(&ui);
}

Test(workbench, search_prompt_is_incremental)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    gl_ui_key(&ui, '/');
    cr_assert(ui.prompt);
    gl_ui_key(&ui, 'm');
    cr_expect_str_eq(selected(&ui)->op_type, "Mul", "'m' first matches Mul 'channel_scale'");
    gl_ui_key(&ui, 'a');
    gl_ui_key(&ui, 'x');
    cr_expect_str_eq(selected(&ui)->op_type, "MaxPool");
    gl_ui_key(&ui, KEY_BACKSPACE);
    gl_ui_key(&ui, KEY_BACKSPACE);
    cr_expect_str_eq(selected(&ui)->op_type, "Mul");
    gl_ui_key(&ui, 27); /* Esc: back where the prompt opened */
    cr_expect(!ui.prompt);
    cr_expect_eq(ui.views[GL_VIEW_NODES].selected, 0);

    gl_ui_key(&ui, '/');
    for (const char *p = "relu"; *p; p++)
        gl_ui_key(&ui, *p);
    gl_ui_key(&ui, '\n');
    cr_expect_str_eq(ui.search, "relu");
    const char *first = selected(&ui)->name;
    cr_expect_str_eq(first, "relu1");
    /* by op or by name: Relu 'relu1', Transpose 'relu1_to_nhwc', Relu 'Relu_7', Relu 'relu2' */
    gl_ui_key(&ui, 'n');
    cr_expect_str_eq(selected(&ui)->name, "relu1_to_nhwc");
    gl_ui_key(&ui, 'n');
    cr_expect_str_eq(selected(&ui)->name, "Relu_7");
    gl_ui_key(&ui, 'n');
    gl_ui_key(&ui, 'n'); /* wraps to the first */
    cr_expect_str_eq(selected(&ui)->name, "relu1");
    gl_ui_key(&ui, 'N');
    cr_expect_str_eq(selected(&ui)->name, "relu2");

    gl_ui_key(&ui, '/');
    gl_ui_key(&ui, 'z');
    gl_ui_key(&ui, 'z');
    cr_expect(ui.status_error, "no match is shown");
    gl_ui_key(&ui, '\n');
    cr_expect(strstr(ui.status, "no match"), "'%s'", ui.status);
    gl_ui_free(&ui);
}

/* The status line says which match of how many after '/', n and N (issue 24), with the
 * query syntax of search.c: conv_nhwc has three Transposes to NCHW. */
static void type_search(gl_ui *ui, const char *query)
{
    gl_ui_key(ui, '/');
    for (const char *p = query; *p; p++)
        gl_ui_key(ui, *p);
    gl_ui_key(ui, '\n');
}

Test(workbench, search_says_which_match_of_how_many)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    type_search(&ui, "perm=0,3,1,2");
    cr_expect_str_eq(selected(&ui)->name, "input_to_nchw");
    cr_expect_str_eq(ui.status, "/perm=0,3,1,2: 1 of 3 (n/N: next/previous)");
    gl_ui_key(&ui, 'n');
    cr_expect_str_eq(ui.status, "/perm=0,3,1,2: 2 of 3 (n/N: next/previous)");
    gl_ui_key(&ui, 'N');
    gl_ui_key(&ui, 'N'); /* wraps to the last */
    cr_expect_str_eq(selected(&ui)->name, "conv2_to_nchw");
    cr_expect_str_eq(ui.status, "/perm=0,3,1,2: 3 of 3 (n/N: next/previous)");
    type_search(&ui, "Conv strides=2,2");
    cr_expect_str_eq(selected(&ui)->name, "conv2");
    cr_expect_str_eq(ui.status, "/Conv strides=2,2: 1 of 1 (n/N: next/previous)");
    type_search(&ui, "perm=9");
    cr_expect(ui.status_error);
    cr_expect_str_eq(ui.status, "no match for 'perm=9'");
    gl_ui_free(&ui);
}

Test(workbench, views_switch_and_back_out)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    gl_ui_goto_step(&ui, step_of(&ui, "transpose-push", 0));
    gl_ui_key(&ui, 'd');
    cr_expect_eq(ui.current, (size_t)GL_VIEW_DIFF);
    gl_ui_key(&ui, '\n'); /* the first change opens its node */
    cr_expect_eq(ui.current, (size_t)GL_VIEW_DETAIL);
    gl_ui_key(&ui, 27);
    cr_expect_eq(ui.current, (size_t)GL_VIEW_DIFF);
    gl_ui_key(&ui, 'c');
    cr_expect_eq(ui.current, (size_t)GL_VIEW_DECISIONS);
    gl_ui_key(&ui, 'f');
    gl_ui_key(&ui, '\n'); /* the refused push-through-Conv: its nodes are marked */
    cr_expect_eq(ui.current, (size_t)GL_VIEW_NODES);
    cr_expect_eq(ui.n_marks, 2u);
    cr_expect_str_eq(selected(&ui)->name, "input_to_nchw");
    gl_ui_key(&ui, 'n');
    cr_expect_str_eq(selected(&ui)->name, "conv1");
    gl_ui_key(&ui, '?');
    cr_expect_eq(ui.current, (size_t)GL_VIEW_HELP);
    gl_ui_key(&ui, '?');
    cr_expect_eq(ui.current, (size_t)GL_VIEW_NODES);
    gl_ui_key(&ui, '\t');
    cr_expect_eq(ui.current, (size_t)GL_VIEW_DIFF);
    gl_ui_key(&ui, 27);
    gl_ui_key(&ui, 27);
    gl_ui_key(&ui, 27);
    cr_expect_eq(ui.current, (size_t)GL_VIEW_NODES);
    cr_expect_eq(gl_ui_key(&ui, 'q') & GL_REDRAW_QUIT, (unsigned)GL_REDRAW_QUIT);
    cr_expect(ui.quit);
    gl_ui_free(&ui);
}

Test(workbench, detail_links_jump_to_producer_and_consumers)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    gl_ui_select_node(&ui, gl_find_node(gl_ui_graph(&ui), "conv1")->id);
    gl_ui_key(&ui, '\n');
    cr_assert_eq(ui.current, (size_t)GL_VIEW_DETAIL);
    /* walk down to the first link and open it: the producer, input_to_nchw */
    gl_view *v = gl_ui_view(&ui);
    for (int i = 0; i < 40 && strcmp(selected(&ui)->name, "conv1") == 0; i++) {
        gl_ui_key(&ui, 'j');
        gl_ui_request(&ui, GL_REQ_ENTER);
    }
    cr_expect_str_eq(selected(&ui)->name, "input_to_nchw");
    cr_expect_eq(v, gl_ui_view(&ui));
    gl_ui_key(&ui, 27);
    cr_expect_str_eq(selected(&ui)->name, "conv1");
    gl_ui_free(&ui);
}

Test(workbench, export_dir_is_named_after_the_model)
{
    char buf[256];
    gl_ui_export_dir("examples/conv_nhwc/model.onnx", buf, sizeof(buf));
    cr_expect_str_eq(buf, "./graphlab-export/conv_nhwc");
    gl_ui_export_dir("/x/resnet50.onnx", buf, sizeof(buf));
    cr_expect_str_eq(buf, "./graphlab-export/resnet50");
    gl_ui_export_dir("model.onnx", buf, sizeof(buf));
    cr_expect_str_eq(buf, "./graphlab-export/model");
    gl_ui_export_dir("weird", buf, sizeof(buf));
    cr_expect_str_eq(buf, "./graphlab-export/weird");
}

Test(workbench, export_writes_the_step_files)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    char *dir = tu_tmpdir();
    snprintf(ui.export_dir, sizeof(ui.export_dir), "%s/out/conv", dir);
    gl_ui_goto_step(&ui, step_of(&ui, "transpose-push", 0));
    gl_ui_key(&ui, '-');
    gl_ui_key(&ui, 'e');
    cr_expect(ui.export_prompt, "e asks where first");
    gl_ui_key(&ui, '\n'); /* the folder shown: the last one */
    cr_expect(strstr(ui.status, "exported 06-transpose-push-K3"), "'%s'", ui.status);
    static const char *const exts[] = {"dot", "svg", "onnx", "diff.txt"};
    for (size_t i = 0; i < GL_ARRAY_LEN(exts); i++) {
        char path[1400];
        snprintf(path, sizeof(path), "%s/06-transpose-push-K3.%s", ui.export_dir, exts[i]);
        size_t len = 0;
        void *data = tu_read_file(path, &len);
        cr_expect(data && len > 0, "%s", path);
        free(data);
    }
    tu_rmtree(dir);
    free(dir);
    gl_ui_free(&ui);
}

/* ---- text cut to a column ---------------------------------------------------------------- */

typedef struct clip_case {
    const char *text;
    int skip, width;
    bool utf8;
    const char *want;
    int cols;
} clip_case;

Test(text, clip_cuts_with_an_ellipsis_and_scrolls)
{
    static const clip_case cases[] = {
        {"conv1", 0, 10, true, "conv1", 5},           /* fits: as is */
        {"conv1", 0, 5, true, "conv1", 5},            /* exactly */
        {"conv_block_1", 0, 6, true, "conv_\xE2\x80\xA6", 6},
        {"conv_block_1", 0, 6, false, "con...", 6},
        {"conv_block_1", 0, 2, false, "co", 2},       /* no room for "...": cut as is */
        {"conv_block_1", 5, 4, true, "blo\xE2\x80\xA6", 4}, /* scrolled by 5 */
        {"conv_block_1", 5, 7, true, "block_1", 7},   /* scrolled to the end */
        {"conv_block_1", 20, 7, true, "", 0},         /* scrolled past it */
        {"\xC3\xA9t\xC3\xA9_long", 0, 4, true, "\xC3\xA9t\xC3\xA9\xE2\x80\xA6", 4},
        {"\xC3\xA9t\xC3\xA9", 0, 4, false, "?t?", 3}, /* non-ASCII without UTF-8 */
        {"a\x1B[2Jb", 0, 20, true, "a\\x1B[2Jb", 9},  /* escaped, the escape's columns */
        {"a\x1B[2Jb", 0, 4, true, "a\\x\xE2\x80\xA6", 4},
        {"anything", 0, 0, true, "", 0},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        const clip_case *c = &cases[i];
        char buf[64];
        int cols = gl_ui_clip(c->text, c->skip, c->width, c->utf8, buf, sizeof(buf));
        cr_expect_str_eq(buf, c->want, "case %zu", i);
        cr_expect_eq(cols, c->cols, "case %zu", i);
    }
    /* a short buffer cuts at a character, never inside one */
    char small[5];
    gl_ui_clip("\xC3\xA9\xC3\xA9\xC3\xA9", 0, 10, true, small, sizeof(small));
    cr_expect_str_eq(small, "\xC3\xA9\xC3\xA9");
}

/* ---- list moves: half pages, across long rows --------------------------------------------- */

typedef struct move_case {
    gl_request r;
    int selected, hscroll; /* after it, from row 50 of 100 (20 rows shown), hscroll 8 */
} move_case;

Test(lists, half_pages_and_horizontal_scroll)
{
    static const move_case cases[] = {
        {GL_REQ_HALF_DOWN, 60, 8}, {GL_REQ_HALF_UP, 40, 8},  {GL_REQ_PAGE_DOWN, 69, 8},
        {GL_REQ_PAN_RIGHT, 50, 16}, {GL_REQ_PAN_LEFT, 50, 0}, {GL_REQ_MOVE_DOWN, 51, 8},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_view v = {.selected = 50, .scroll = 40, .height = 20, .hscroll = 8};
        cr_expect_neq(gl_ui_list_move(&v, cases[i].r, 100), GL_REDRAW_NONE, "case %zu", i);
        cr_expect_eq(v.selected, cases[i].selected, "case %zu", i);
        cr_expect_eq(v.hscroll, cases[i].hscroll, "case %zu", i);
    }
    gl_view v = {.height = 20};
    cr_expect_eq(gl_ui_list_move(&v, GL_REQ_PAN_LEFT, 100), GL_REDRAW_NONE, "already at 0");
    cr_expect_eq(v.hscroll, 0);
    cr_expect_eq(gl_key_request(4), GL_REQ_HALF_DOWN);  /* C-d */
    cr_expect_eq(gl_key_request(21), GL_REQ_HALF_UP);   /* C-u */
    cr_expect_eq(gl_key_request('L'), GL_REQ_PAN_RIGHT);
    cr_expect_eq(gl_key_request('h'), GL_REQ_PAN_LEFT);
    cr_expect_eq(gl_key_request('D'), GL_REQ_DIFF_SCOPE);
}

/* ---- list footers: the selected row in full, wrapped; clicks only on the rows ---------------- */

typedef struct footer_case {
    int selected, n_rows;
    int text_cols;    /* row_text: that many 'x' (0: NULL) */
    int height, width;
    bool utf8;        /* a wrapped line ends in '…' (1 column) or "..." (3) */
    const char *starts; /* the footer's text starts so */
    int lines;
} footer_case;

Test(lists, footer_names_the_row_and_wraps_a_long_one)
{
    static const footer_case cases[] = {
        {2, 10, 7, 22, 80, true, "3/10 xxxxxxx", 1},
        {-1, 0, 7, 22, 80, true, "(no rows)", 1},
        {0, 5, 0, 22, 80, true, "(no rows)", 1},
        {0, 1, 100, 22, 80, true, "1/1 xxx", 2},   /* 104 columns: 79 + 25 */
        {0, 1, 100, 10, 80, true, "1/1 xxx", 1},   /* a small view: one line, cut */
        {0, 1, 300, 22, 80, true, "1/1 xxx", 3},   /* never more than 3 */
        {0, 1, 154, 22, 80, true, "1/1 xxx", 2},   /* 158 columns: 79 + 79 */
        {0, 1, 154, 22, 80, false, "1/1 xxx", 3},  /* 77 + 77 + 4 */
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        const footer_case *c = &cases[i];
        char text[512];
        memset(text, 'x', (size_t)c->text_cols);
        text[c->text_cols] = '\0';
        gl_ui ui = {.utf8 = c->utf8};
        gl_view v = {.selected = c->selected};
        gl_ui_footer f;
        gl_ui_footer_make(&f, &ui, &v, c->n_rows, c->text_cols ? text : NULL, c->height,
                          c->width);
        cr_expect_eq(strncmp(f.text, c->starts, strlen(c->starts)), 0, "case %zu: '%s'", i,
                     f.text);
        cr_expect_eq(f.lines, c->lines, "case %zu: %d lines", i, f.lines);
    }
}

typedef struct click_case {
    int row;      /* the screen row of the view clicked: 2 heading rows, 19 rows, the footer */
    int selected; /* after it (from 5, scrolled by 10); unchanged: the click selects nothing */
} click_case;

Test(lists, a_click_selects_only_a_shown_row)
{
    static const click_case cases[] = {
        {2, 10}, {20, 28}, {1, 5}, {21, 5} /* the footer */, {22, 5},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_view v = {.selected = 5, .scroll = 10, .height = 19};
        unsigned redraw = gl_ui_list_click(&v, 57, 2, cases[i].row);
        cr_expect_eq(v.selected, cases[i].selected, "case %zu: row %d selected %d", i,
                     cases[i].row, v.selected);
        cr_expect_eq(redraw != GL_REDRAW_NONE, cases[i].selected != 5, "case %zu", i);
    }
}

/* ---- the marks on the help screen ---------------------------------------------------------- */

Test(keys, help_explains_the_marks_from_their_table)
{
    char **lines;
    size_t n = gl_marks_help_lines(&lines, true);
    static const char *const want[] = {"┆ ┄", "… N more", "*", "~", ">"};
    for (size_t w = 0; w < GL_ARRAY_LEN(want); w++) {
        bool found = false;
        for (size_t i = 0; i < n && !found; i++)
            found = strstr(lines[i], want[w]) != NULL;
        cr_expect(found, "no line explains '%s'", want[w]);
    }
    /* the meanings start in one column, whatever the marks' bytes */
    const char *a = strstr(lines[0], "after a node count");
    const char *b = strstr(lines[n - 1], "text cut at the edge");
    cr_assert(a && b);
    cr_expect_eq(gl_ui_text_width(lines[0]) - gl_ui_text_width(a),
                 gl_ui_text_width(lines[n - 1]) - gl_ui_text_width(b));
    gl_free_lines(lines, n);
    n = gl_marks_help_lines(&lines, false);
    for (size_t i = 0; i < n; i++)
        for (const char *p = lines[i]; *p; p++)
            cr_expect((unsigned char)*p < 0x80, "line %zu is not ASCII: '%s'", i, lines[i]);
    gl_free_lines(lines, n);
}

/* ---- every decision that involved a node ---------------------------------------------------- */

typedef struct involving_case {
    const char *names[2];
    int64_t ids[2];
    size_t n_ids;
    const char *want; /* the indices found, as "0 2" */
} involving_case;

Test(history, decisions_involving_a_node_by_name_or_id)
{
    static char *n0[] = {"t1", "conv"}, *n1[] = {"relu"}, *n2[] = {"t1x", "add"};
    gl_decision d[] = {
        {.id = 10, .verdict = GL_REFUSED, .nodes = n0, .n_nodes = 2},
        {.id = 11, .verdict = GL_APPLIED, .nodes = n1, .n_nodes = 1},
        {.id = 12, .verdict = GL_NOTE, .nodes = n2, .n_nodes = 2},
        {.id = 13, .verdict = GL_APPLIED},
    };
    static const involving_case cases[] = {
        {{"t1", NULL}, {0}, 0, "0"},            /* a refusal counts; "t1x" is another name */
        {{"conv", "add"}, {0}, 0, "0 2"},       /* the name before and after the step */
        {{NULL, NULL}, {13, -1}, 2, "3"},       /* by id: the record that made it */
        {{"relu", NULL}, {11}, 1, "1"},         /* named and by id: once */
        {{"zzz", NULL}, {-1}, 1, ""},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        size_t out[4];
        size_t n = gl_decisions_involving(d, 4, cases[c].names, 2, cases[c].ids,
                                          cases[c].n_ids, out);
        char got[32] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%zu", i ? " " : "", out[i]);
        cr_expect_str_eq(got, cases[c].want, "case %zu", c);
    }
}

/* A Transpose's history has only the steps that changed it; its decisions list has the
 * refusal too, across steps, and Enter on one goes there. */
Test(history, node_decisions_include_refusals_across_steps)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    const gl_node *t = gl_find_node(gl_ui_step_graph(&ui, 0), "input_to_nchw");
    cr_assert(t);
    size_t *idx;
    size_t n = gl_ui_node_decisions(&ui, t->id, &idx);
    cr_assert_geq(n, 1u);
    const gl_decision *d = &ui.pipeline->log.items[idx[0]];
    cr_expect_eq(d->verdict, GL_REFUSED);
    cr_expect_str_eq(d->rule, "push-through-Conv");
    cr_expect_eq(d->step, 6);
    free(idx);
    /* channel_scale: moved through by both pushes (#3 and #9 move a Transpose below
     * channel_shift: they do not name it), left alone by fusion (graphlab's NhwcConv head
     * takes no binary post-op), then written in place of its input by the memory plan
     * (#17) */
    const gl_node *m = gl_find_node(gl_ui_step_graph(&ui, 0), "channel_scale");
    cr_assert(m);
    n = gl_ui_node_decisions(&ui, m->id, &idx);
    char got[128] = "";
    for (size_t i = 0; i < n; i++) {
        const gl_decision *r = &ui.pipeline->log.items[idx[i]];
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s#%lld %s", i ? ", " : "",
                 (long long)r->id, gl_verdict_name(r->verdict));
    }
    cr_expect_str_eq(got, "#2 applied, #8 applied, #17 applied");
    free(idx);
    /* the group conv2 + relu2 became: formed by fusion (#16), then refused by the memory
     * plan a step later (#20: no sum post-op to write over Relu_7's output) */
    const gl_node *f = gl_find_node(gl_ui_step_graph(&ui, ui.pipeline->n_steps - 1),
                                    "FusedNhwcConvRelu_2");
    cr_assert(f);
    n = gl_ui_node_decisions(&ui, f->id, &idx);
    got[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const gl_decision *r = &ui.pipeline->log.items[idx[i]];
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s#%lld %s (step %d)",
                 i ? ", " : "", (long long)r->id, gl_verdict_name(r->verdict), (int)r->step);
    }
    cr_expect_str_eq(got, "#16 applied (step 15), #20 refused (step 16)");
    free(idx);

    /* the detail lists them; Enter on the refusal goes to step 6, the record selected */
    gl_ui_select_node(&ui, t->id);
    gl_ui_key(&ui, '\n');
    cr_assert_eq(ui.current, (size_t)GL_VIEW_DETAIL);
    gl_ui_key(&ui, 'G');
    gl_ui_key(&ui, '\n');
    cr_expect_eq(ui.step, 6u);
    cr_assert_eq(ui.current, (size_t)GL_VIEW_DECISIONS);
    size_t nd;
    const gl_decision *dd = gl_ui_decisions(&ui, &nd);
    cr_expect_eq(dd[ui.views[GL_VIEW_DECISIONS].selected].id, 1);
    gl_ui_key(&ui, 27);
    cr_expect_eq(ui.current, (size_t)GL_VIEW_DETAIL, "Esc: back to the node");
    gl_ui_free(&ui);
}

/* ---- the diff inside a pass -------------------------------------------------------------- */

Test(workbench, diff_inside_a_pass_shows_the_rewrite_alone)
{
    gl_ui ui;
    open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
    gl_ui_goto_step(&ui, step_of(&ui, "transpose-push", 0));
    cr_expect_eq(gl_ui_shown_diff(&ui), ui.diff, "the whole step: against the step before");
    gl_ui_key(&ui, '-');
    gl_ui_key(&ui, '-');
    cr_assert_eq(ui.budget, 2);
    cr_assert(ui.replay.rewrite_diff);
    cr_expect_eq(gl_ui_shown_diff(&ui), ui.replay.rewrite_diff);
    cr_expect_eq(ui.replay.rewrite_decision, 3);
    /* rewrite 2 alone: only channel_shift changed; channel_scale (rewrite 1) is not */
    const gl_diff *r = ui.replay.rewrite_diff, *w = ui.diff;
    bool scale_in_r = false, shift_in_r = false, scale_in_w = false;
    for (size_t i = 0; i < r->n_nodes; i++)
        for (size_t j = 0; j < r->nodes[i].n_new; j++) {
            scale_in_r |= strcmp(r->nodes[i].new_names[j], "channel_scale") == 0;
            shift_in_r |= strcmp(r->nodes[i].new_names[j], "channel_shift") == 0;
        }
    for (size_t i = 0; i < w->n_nodes; i++)
        for (size_t j = 0; j < w->nodes[i].n_new; j++)
            scale_in_w |= strcmp(w->nodes[i].new_names[j], "channel_scale") == 0;
    cr_expect(shift_in_r && !scale_in_r && scale_in_w);
    gl_ui_key(&ui, 'D');
    cr_expect_eq(ui.current, (size_t)GL_VIEW_DIFF);
    cr_expect_eq(gl_ui_shown_diff(&ui), ui.diff, "D: against the step before");
    gl_ui_key(&ui, 'D');
    cr_expect_eq(gl_ui_shown_diff(&ui), ui.replay.rewrite_diff);
    gl_ui_key(&ui, '-');
    gl_ui_key(&ui, '-');
    cr_expect_eq(ui.budget, 0);
    cr_expect_null(gl_ui_shown_diff(&ui), "no rewrite yet: nothing alone");
    gl_ui_free(&ui);
}

/* ---- replays kept beside the shown one (issue 23) ---------------------------------------- */

/* The last applied record of a log (-1: none), as the ui names rewrite K's. */
static int64_t last_applied_id(const gl_decision_log *log)
{
    for (size_t i = log->n; i-- > 0;)
        if (log->items[i].verdict == GL_APPLIED)
            return log->items[i].id;
    return -1;
}

/* The shown replay equals one made afresh: graph, records, the diffs against the step
 * before and against the replay one rewrite before. */
static void expect_fresh_replay(const gl_ui *ui, size_t c)
{
    const gl_pipeline *p = ui->pipeline;
    int64_t k = ui->budget;
    gl_model *fresh = NULL, *before = NULL;
    gl_decision_log log = {0}, before_log = {0};
    cr_assert_eq(gl_pipeline_replay(p, ui->step, k, &fresh, &log), GL_OK, "case %zu", c);
    cr_assert(ui->replay.model, "case %zu", c);
    cr_expect_eq(gl_graph_fingerprint(ui->replay.model->graph),
                 gl_graph_fingerprint(fresh->graph), "case %zu: the graph of PASS:%lld", c,
                 (long long)k);
    cr_expect_eq(ui->replay.log.n, log.n, "case %zu: its records", c);
    for (size_t i = 0; i < log.n && i < ui->replay.log.n; i++)
        cr_expect_eq(ui->replay.log.items[i].id, log.items[i].id, "case %zu", c);
    cr_expect_eq(ui->replay.rewrite_decision, last_applied_id(&log), "case %zu", c);
    const gl_graph *step_before = p->steps[ui->step - 1].model->graph;
    gl_diff *d = gl_diff_graphs(step_before, fresh->graph, GL_DIFF_MATCH_IDS);
    cr_assert(ui->diff == ui->replay.diff && ui->diff, "case %zu", c);
    cr_expect_eq(ui->diff->n_nodes, d->n_nodes, "case %zu: against the step before", c);
    const gl_graph *base = step_before;
    if (k > 1) {
        cr_assert_eq(gl_pipeline_replay(p, ui->step, k - 1, &before, &before_log), GL_OK);
        base = before->graph;
    }
    gl_diff *r = k > 0 ? gl_diff_graphs(base, fresh->graph, GL_DIFF_MATCH_IDS) : NULL;
    cr_expect_eq(ui->replay.rewrite_diff ? ui->replay.rewrite_diff->n_nodes : 0,
                 r ? r->n_nodes : 0, "case %zu: rewrite %lld alone", c, (long long)k);
    cr_expect_eq(!ui->replay.rewrite_diff, !r, "case %zu", c);
    gl_diff_free(d);
    gl_diff_free(r);
    gl_model_free(fresh);
    gl_model_free(before);
    gl_decision_log_free(&log);
    gl_decision_log_free(&before_log);
}

/* +/- keep the replays one rewrite before and after the shown one: a rewrite made on the
 * way is not replayed again, and what is shown is what a fresh replay gives. */
Test(workbench, kept_replays_are_not_replayed_again)
{
    static const struct {
        int key;
        int64_t back;     /* the budget shown after it, counted back from all rewrites */
        unsigned replays; /* gl_pipeline_replay calls the key costs */
    } keys[] = {
        {'-', 1, 2}, /* K-1 and, for rewrite K-1 alone, K-2 */
        {'-', 2, 1}, /* K-2 kept from the key before: K-3 alone */
        {'-', 3, 1},
        {'+', 2, 0}, /* shown before: kept whole */
        {'+', 1, 1}, /* K-1 went when K-3 was shown; K-2 is its rewrite diff's base */
        {'+', 0, 0}, /* the step itself */
        {'-', 1, 0}, /* kept when + left it */
        {'-', 2, 2}, /* K-2 went when the step itself was shown: one is kept on each side */
        {'+', 1, 0},
    };
    gl_ui ui;
    open_headless(&ui, "examples/transformer_block/model.onnx", "all");
    size_t cf = step_of(&ui, "constant-folding", 0);
    gl_ui_goto_step(&ui, cf);
    int64_t total = ui.pipeline->steps[cf].rewrites;
    cr_assert_geq(total, 5, "enough rewrites to walk three back");
    for (size_t c = 0; c < GL_ARRAY_LEN(keys); c++) {
        unsigned was = ui.replays_run;
        gl_ui_key(&ui, keys[c].key);
        cr_expect_eq(ui.replays_run - was, keys[c].replays, "case %zu: replays", c);
        if (keys[c].back == 0) {
            cr_expect_eq(ui.budget, -1, "case %zu", c);
            cr_expect_null(ui.replay.model, "case %zu", c);
            continue;
        }
        cr_assert_eq(ui.budget, total - keys[c].back, "case %zu", c);
        expect_fresh_replay(&ui, c);
    }
    gl_ui_goto_step(&ui, cf - 1);
    for (size_t i = 0; i < GL_ARRAY_LEN(ui.kept); i++)
        cr_expect_null(ui.kept[i].model, "another step: kept replays go");
    gl_ui_free(&ui);
}

/* ---- step 0 first, the passes behind it (issue 23) ------------------------------------ */

/* The first screen as app.c's first job makes it: the model as loaded, alone, while the
 * passes run. */
static void open_step0(gl_ui *ui, const char *path)
{
    gl_ui_init(ui, path);
    ui->sync_jobs = true;
    gl_ui_set_pipeline(ui, run_pipeline(path, "none"), NULL);
    ui->passes_pending = true;
}

/* What the passes job hands over when it ends (its diffs and step indexes). */
static void passes_end(gl_ui *ui, const char *path)
{
    gl_pipeline *p = run_pipeline(path, "all");
    gl_ui_adopt_steps(ui, p, gl_ui_job_step_diffs(p, NULL), gl_ui_job_step_indexes(p, NULL));
}

static void expect_same_place(const gl_ui *a, const gl_ui *b, const char *keys)
{
    cr_expect_eq(a->step, b->step, "'%s': step %zu, %zu with every step from the start", keys,
                 a->step, b->step);
    cr_expect_eq(a->current, b->current, "'%s': the same view", keys);
    cr_expect_eq(a->sel.node_id, b->sel.node_id, "'%s': the same node selected", keys);
    cr_expect_eq(a->views[a->current].selected, b->views[b->current].selected,
                 "'%s': the same row", keys);
    cr_expect_eq(a->views[a->current].scroll, b->views[b->current].scroll,
                 "'%s': the same scroll", keys);
    cr_expect_eq(a->index.n_rows, b->index.n_rows, "'%s': the same rows", keys);
    cr_expect_eq(a->n_back, b->n_back, "'%s': the same way back", keys);
}

/* Keys typed while the passes run (some wait for them) end where the same keys typed
 * with every step there from the start end: nothing is lost or reordered, and the moves
 * step 0 answers at once carry over to the full pipeline. */
Test(workbench, keys_typed_while_the_passes_run_end_where_they_would_have)
{
    static const struct {
        const char *keys; /* one key per character; '\n' is Enter */
        size_t waiting;   /* how many of them wait for the passes */
    } cases[] = {
        {"jj", 0},          {"jG", 0},         {"Gkk", 0},        {"/Relu\nn", 0},
        {"jj]]d", 3},       {"]j[j", 4},       {"j3dG", 3},       {"jjc", 1},
        {"G\n", 1},         {"/conv\nNl]", 2}, {"?", 0},          {"?\x1b" "j]", 1},
    };
    const char *path = tu_src("examples/conv_nhwc/model.onnx");
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        const char *keys = cases[c].keys;
        gl_ui every, early;
        open_headless(&every, "examples/conv_nhwc/model.onnx", "all");
        open_step0(&early, path);
        int waiting[16];
        size_t n_waiting = 0;
        for (const char *k = keys; *k; k++) {
            gl_ui_key(&every, *k);
            if (gl_ui_key_waits(&early, *k, n_waiting))
                waiting[n_waiting++] = *k;
            else
                gl_ui_key(&early, *k);
        }
        cr_expect_eq(n_waiting, cases[c].waiting, "'%s': %zu keys waited, not %zu", keys,
                     n_waiting, cases[c].waiting);
        passes_end(&early, path);
        cr_expect_not(early.passes_pending);
        for (size_t i = 0; i < n_waiting; i++)
            gl_ui_key(&early, waiting[i]);
        expect_same_place(&early, &every, keys);
        gl_ui_free(&every);
        gl_ui_free(&early);
    }
}

/* Before the first screen every key waits but q (C-c never does); once the passes
 * ended nothing waits. */
Test(workbench, which_keys_wait)
{
    static const struct {
        const char *when;
        int key;
        size_t n_waiting;
        bool waits;
    } cases[] = {
        {"loading", 'j', 0, true},   {"loading", ']', 0, true},  {"loading", 'q', 0, false},
        {"loading", 3, 0, false},    {"step 0", 'j', 0, false},  {"step 0", ']', 0, true},
        {"step 0", 'j', 1, true},    {"step 0", 3, 2, false},    {"step 0", 'r', 0, true},
        {"step 0", '/', 0, false},   {"step 0", 'e', 0, true},   {"every step", ']', 0, false},
        {"every step", 'r', 3, false},
    };
    const char *path = tu_src("examples/conv_nhwc/model.onnx");
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_ui ui;
        if (strcmp(cases[c].when, "loading") == 0) {
            gl_ui_init(&ui, path);
            ui.sync_jobs = true;
        } else if (strcmp(cases[c].when, "step 0") == 0) {
            open_step0(&ui, path);
        } else {
            open_headless(&ui, "examples/conv_nhwc/model.onnx", "all");
        }
        cr_expect_eq(gl_ui_key_waits(&ui, cases[c].key, cases[c].n_waiting), cases[c].waits,
                     "%s, key %d after %zu waiting: %s", cases[c].when, cases[c].key,
                     cases[c].n_waiting, cases[c].waits ? "waits" : "acts");
        gl_ui_free(&ui);
    }
}

/* A step is shown with the index built behind the first screen, or kept from an earlier
 * visit: it must be the one a fresh build makes, every step, forth and back. */
Test(workbench, kept_step_indexes_equal_fresh_ones)
{
    const char *path = tu_src("examples/transformer_block/model.onnx");
    gl_ui ui;
    open_step0(&ui, path);
    passes_end(&ui, path);
    size_t n = ui.pipeline->n_steps;
    for (size_t visit = 0; visit < 2 * n; visit++) {
        size_t k = visit < n ? visit : 2 * n - 1 - visit; /* 0..n-1, then back */
        gl_ui_goto_step(&ui, k);
        gl_graph_index fresh = {0};
        gl_graph_index_build(&fresh, ui.pipeline->steps[k].model->graph);
        cr_assert_eq(ui.index.graph, fresh.graph, "step %zu: its own graph", k);
        cr_expect_eq(ui.index.n_rows, fresh.n_rows, "step %zu", k);
        for (size_t r = 0; r < fresh.n_rows && r < ui.index.n_rows; r++)
            cr_expect_eq(ui.index.rows[r], fresh.rows[r], "step %zu row %zu", k, r);
        cr_expect_eq(ui.index.n_ops, fresh.n_ops, "step %zu", k);
        for (size_t o = 0; o < fresh.n_ops && o < ui.index.n_ops; o++)
            cr_expect_eq(ui.index.ops[o].count, fresh.ops[o].count, "step %zu op %zu", k, o);
        cr_expect_eq(ui.index.op_cols, fresh.op_cols, "step %zu", k);
        cr_expect_eq(ui.index.name_cols, fresh.name_cols, "step %zu", k);
        gl_graph_index_free(&fresh);
    }
    gl_ui_free(&ui);
}

/* state.c — the workbench without the terminal: the current step and rewrite budget,
 * the selection that follows a node across steps, views and their back stack, the
 * search prompt, requests. Everything here runs in tests without curses; app.c adds
 * the terminal, the worker thread and the drawing. */
#include "ui/ui.h"
#include "passes/group.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/plural.h"

#include <ctype.h>
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the graph index ------------------------------------------------------------------ */

/* Most frequent first, ties by kind (not by the op_type counted first: FusedConvRelu_7
 * or _2 may stand for the kind, whichever the graph lists first). */
static int cmp_op_tally(const void *a, const void *b)
{
    const ui_op_tally *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    int c = strncmp(x->op, y->op, (size_t)(x->op_len < y->op_len ? x->op_len : y->op_len));
    return c ? c : x->op_len - y->op_len;
}

/* Slots of the kinds' table: at least twice the kinds, a power of two. */
static size_t *kind_slots(size_t n_slots)
{
    size_t *slots = gl_xmalloc(n_slots * sizeof(*slots));
    memset(slots, 0xff, n_slots * sizeof(*slots));
    return slots;
}

/* The tally of kind (op, len) in ix->ops through the open-addressed slots (indexes into
 * ix->ops; SIZE_MAX: empty): found, or the empty slot it goes in (*found false). */
static size_t *kind_slot(const gl_graph_index *ix, size_t *slots, size_t n_slots,
                         const char *op, int len, bool *found)
{
    size_t h = (size_t)gl_hash_bytes(op, (size_t)len) & (n_slots - 1);
    for (;; h = (h + 1) & (n_slots - 1)) {
        if (slots[h] == SIZE_MAX) {
            *found = false;
            return &slots[h];
        }
        const ui_op_tally *t = &ix->ops[slots[h]];
        if (t->op_len == len && memcmp(t->op, op, (size_t)len) == 0) {
            *found = true;
            return &slots[h];
        }
    }
}

/* One hash look per node: a graph has tens of kinds. Sorting every row by kind, as this
 * did, cost ~80 ms on a 100k-node graph, paid by every index a key made (issue 23). */
static void count_ops(gl_graph_index *ix)
{
    size_t n_slots = 64, cap = 0;
    size_t *slots = kind_slots(n_slots);
    for (size_t r = 0; r < ix->n_rows; r++) {
        const gl_node *n = ix->rows[r];
        int len = gl_group_kind_len(n);
        bool found;
        size_t *slot = kind_slot(ix, slots, n_slots, n->op_type, len, &found);
        if (found) {
            ix->ops[*slot].count++;
            continue;
        }
        GL_GROW(ix->ops, cap, ix->n_ops + 1);
        ix->ops[ix->n_ops] = (ui_op_tally){n->op_type, len, 1};
        *slot = ix->n_ops++;
        if (ix->n_ops * 2 > n_slots) { /* grow: every kind into a table twice as big */
            free(slots);
            n_slots *= 2;
            slots = kind_slots(n_slots);
            for (size_t k = 0; k < ix->n_ops; k++)
                *kind_slot(ix, slots, n_slots, ix->ops[k].op, ix->ops[k].op_len, &found) = k;
        }
    }
    free(slots);
    qsort(ix->ops, ix->n_ops, sizeof(*ix->ops), cmp_op_tally);
}

void gl_ui_op_text(const gl_node *n, char *buf, size_t len)
{
    if (*n->domain)
        snprintf(buf, len, "%s:%s", n->domain, n->op_type);
    else
        snprintf(buf, len, "%s", n->op_type);
}

/* The node list's column widths, measured here once per graph instead of on every
 * visit of the step. */
static void measure_columns(gl_graph_index *ix)
{
    char op[128];
    for (size_t r = 0; r < ix->n_rows; r++) {
        const gl_node *n = ix->rows[r];
        gl_ui_op_text(n, op, sizeof(op));
        int ow = gl_ui_text_width(op), nw = gl_ui_text_width(n->name);
        ix->op_cols = ow > ix->op_cols ? ow : ix->op_cols;
        ix->name_cols = nw > ix->name_cols ? nw : ix->name_cols;
    }
}

void gl_graph_index_build(gl_graph_index *ix, const gl_graph *g)
{
    gl_graph_index_free(ix);
    ix->graph = g;
    if (!g)
        return;
    ix->rows = gl_xmalloc((g->live_nodes + 1) * sizeof(*ix->rows));
    ix->n_ids = g->next_node_id;
    ix->row_of_id = gl_xmalloc((ix->n_ids + 1) * sizeof(*ix->row_of_id));
    memset(ix->row_of_id, 0xff, (ix->n_ids + 1) * sizeof(*ix->row_of_id));
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (ix->n_rows > g->live_nodes)
            break; /* live_nodes is kept by the edit API; never trust it past the array */
        if (n->id < ix->n_ids)
            ix->row_of_id[n->id] = (uint32_t)ix->n_rows;
        ix->rows[ix->n_rows++] = n;
    }
    count_ops(ix);
    measure_columns(ix);
}

void gl_graph_index_free(gl_graph_index *ix)
{
    free(ix->rows);
    free(ix->row_of_id);
    free(ix->ops);
    memset(ix, 0, sizeof(*ix));
}

gl_node *gl_graph_index_node(const gl_graph_index *ix, uint32_t id)
{
    if (id >= ix->n_ids || ix->row_of_id[id] == UINT32_MAX)
        return NULL;
    return ix->rows[ix->row_of_id[id]];
}

uint32_t gl_ui_follow(const gl_graph_index *ix, gl_selection sel)
{
    if (gl_graph_index_node(ix, sel.node_id))
        return sel.node_id;
    if (sel.origin == UINT32_MAX)
        return UINT32_MAX;
    for (size_t r = 0; r < ix->n_rows; r++) {
        const gl_provenance *pv = &ix->rows[r]->prov;
        for (size_t o = 0; o < pv->n_origins; o++)
            if (pv->origins[o] == sel.origin)
                return ix->rows[r]->id;
    }
    return UINT32_MAX;
}

/* ---- small helpers shared by the views ------------------------------------------- */

bool gl_ui_match(const char *text, const char *pattern)
{
    if (!text || !pattern || !*pattern)
        return false;
    size_t m = strlen(pattern);
    for (const char *t = text; *t; t++) {
        size_t i = 0;
        while (i < m && t[i] && tolower((unsigned char)t[i]) == tolower((unsigned char)pattern[i]))
            i++;
        if (i == m)
            return true;
    }
    return false;
}

const char *gl_ui_pass_short(const char *pass)
{
    const gl_pass *p = gl_pass_find(pass);
    return p && p->shown ? p->shown : pass;
}

void gl_ui_export_dir(const char *model_path, char *buf, size_t len)
{
    const char *path = model_path ? model_path : "model.onnx";
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t stem = strlen(base);
    if (stem > 5 && strcmp(base + stem - 5, ".onnx") == 0)
        stem -= 5;
    if (stem == 5 && strncmp(base, "model", 5) == 0 && base > path + 1) {
        /* model zoo layout: NAME/model.onnx — the folder names the model */
        const char *end = base - 1, *start = end;
        while (start > path && start[-1] != '/')
            start--;
        if (end > start) {
            base = start;
            stem = (size_t)(end - start);
        }
    }
    if (stem == 0 || (stem <= 2 && base[0] == '.')) {
        base = "model";
        stem = 5;
    }
    snprintf(buf, len, "./graphlab-export/%.*s", (int)stem, base);
}

/* ---- status -------------------------------------------------------------------------- */

static void set_status_v(gl_ui *ui, bool error, const char *fmt, va_list ap)
{
    vsnprintf(ui->status, sizeof(ui->status), fmt, ap);
    ui->status_error = error;
}

void gl_ui_set_status(gl_ui *ui, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_status_v(ui, false, fmt, ap);
    va_end(ap);
}

void gl_ui_set_error(gl_ui *ui, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_status_v(ui, true, fmt, ap);
    va_end(ap);
}

/* ---- lifetime ------------------------------------------------------------------------ */

/* Per view (views.def): its ops, the request that shows it (GL_REQ_COUNT: none) and
 * its place in the Tab cycle (0: not in it). */
static const struct view_row {
    const gl_view_ops *ops;
    gl_request request;
    int tab;
} view_rows[GL_VIEW_COUNT] = {
#define GL_VIEW(kind, ops, tab, key_names, help)                                           \
    [GL_VIEW_##kind] = {&gl_view_##ops##_ops, GL_REQ_VIEW_##kind, tab},
#define GL_VIEW_INNER(kind, ops) [GL_VIEW_##kind] = {&gl_view_##ops##_ops, GL_REQ_COUNT, 0},
#include "ui/views.def"
#undef GL_VIEW
#undef GL_VIEW_INNER
};

/* A replay slot holding nothing (gl_replay.model NULL). */
static gl_replay empty_replay(void) { return (gl_replay){.rewrite_decision = -1}; }

void gl_ui_init(gl_ui *ui, const char *model_path)
{
    memset(ui, 0, sizeof(*ui));
    ui->model_path = model_path;
    ui->budget = ui->want_budget = -1;
    ui->sel = (gl_selection){UINT32_MAX, UINT32_MAX, false};
    ui->ghost_step = -1;
    ui->ghost_id = UINT32_MAX;
    ui->pending_digit = -1;
    ui->generation = 1;
    ui->replay = ui->kept[0] = ui->kept[1] = empty_replay();
    ui->land_decision = -1;
    ui->views = gl_xcalloc(GL_VIEW_COUNT, sizeof(gl_view));
    ui->n_views = GL_VIEW_COUNT;
    for (size_t i = 0; i < GL_VIEW_COUNT; i++)
        ui->views[i].ops = view_rows[i].ops;
    ui->current = GL_VIEW_NODES;
    gl_ui_export_dir(model_path, ui->export_dir, sizeof(ui->export_dir));
}

/* A replay's model, log and diffs freed (the model and diffs when no job reads them any
 * more), the slot left empty. */
static void free_replay(gl_ui *ui, gl_replay *r)
{
    if (r->model)
        gl_ui_defer_free_model(ui, r->model);
    if (r->diff)
        gl_ui_defer_free_diff(ui, r->diff);
    if (r->rewrite_diff)
        gl_ui_defer_free_diff(ui, r->rewrite_diff);
    gl_decision_log_free(&r->log);
    gl_graph_index_free(&r->index);
    *r = empty_replay();
}

/* The shown replay goes (the step itself is shown), and the kept ones. */
static void drop_replay(gl_ui *ui)
{
    free_replay(ui, &ui->replay);
    for (size_t i = 0; i < GL_ARRAY_LEN(ui->kept); i++)
        free_replay(ui, &ui->kept[i]);
    ui->budget = -1;
}

/* ---- the indexes of the steps ---------------------------------------------------------- */

/* Which step of the shown pipeline g is the graph of (n_steps: none, a replay). */
static size_t step_of_graph(const gl_ui *ui, const gl_graph *g)
{
    size_t n = ui->pipeline ? ui->pipeline->n_steps : 0;
    for (size_t k = 0; g && k < n; k++)
        if (ui->pipeline->steps[k].model && ui->pipeline->steps[k].model->graph == g)
            return k;
    return n;
}

static void forget_step_indexes(gl_ui *ui)
{
    gl_ui_free_step_indexes(ui->step_index, ui->n_step_index);
    ui->step_index = NULL;
    ui->n_step_index = 0;
}

/* The replay (shown or kept) whose graph g is, or NULL. */
static gl_replay *replay_of_graph(gl_ui *ui, const gl_graph *g)
{
    if (g && ui->replay.model && ui->replay.model->graph == g)
        return &ui->replay;
    for (size_t i = 0; g && i < GL_ARRAY_LEN(ui->kept); i++)
        if (ui->kept[i].model && ui->kept[i].model->graph == g)
            return &ui->kept[i];
    return NULL;
}

/* ui->index becomes the index of g. A step's index is built once: leaving the step keeps
 * it in step_index, coming back takes it from there (100k rows take tens of ms to index,
 * too long for a key). Only the shown pipeline's steps are kept; a replay's index stays
 * with the replay while it is kept (+/- back and forth index nothing). */
static void index_graph(gl_ui *ui, const gl_graph *g)
{
    size_t was = step_of_graph(ui, ui->index.graph);
    gl_replay *was_replay = replay_of_graph(ui, ui->index.graph);
    if (was < ui->n_step_index && !ui->step_index[was].graph) {
        ui->step_index[was] = ui->index;
        ui->index = (gl_graph_index){0};
    } else if (was_replay && !was_replay->index.graph) {
        was_replay->index = ui->index;
        ui->index = (gl_graph_index){0};
    }
    gl_graph_index_free(&ui->index);
    size_t k = step_of_graph(ui, g);
    gl_replay *r = replay_of_graph(ui, g);
    if (k < ui->n_step_index && ui->step_index[k].graph == g) {
        ui->index = ui->step_index[k];
        ui->step_index[k] = (gl_graph_index){0};
    } else if (r && r->index.graph == g) {
        ui->index = r->index;
        r->index = (gl_graph_index){0};
    } else {
        gl_graph_index_build(&ui->index, g);
    }
}

void gl_ui_free(gl_ui *ui)
{
    for (size_t i = 0; ui->views && i < ui->n_views; i++)
        if (ui->views[i].ops->close)
            ui->views[i].ops->close(ui, &ui->views[i]);
    free(ui->views);
    drop_replay(ui);
    gl_graph_index_free(&ui->index);
    forget_step_indexes(ui);
    gl_ui_free_step_diffs(ui->pipeline, ui->step_diffs);
    gl_ui_free_step_diffs(ui->other.pipeline, ui->other.step_diffs);
    gl_diff_free(ui->branch_diff);
    gl_run_free(ui->run);
    free(ui->marks);
    memset(ui, 0, sizeof(*ui));
}

const gl_graph *gl_ui_step_graph(const gl_ui *ui, size_t k)
{
    if (!ui->pipeline || k >= ui->pipeline->n_steps || !ui->pipeline->steps[k].model)
        return NULL;
    return ui->pipeline->steps[k].model->graph;
}

const gl_graph *gl_ui_graph(const gl_ui *ui)
{
    return ui->replay.model ? ui->replay.model->graph : gl_ui_step_graph(ui, ui->step);
}

const gl_decision *gl_ui_decisions(const gl_ui *ui, size_t *count)
{
    *count = 0;
    if (!ui->pipeline)
        return NULL;
    if (ui->replay.model) {
        *count = ui->replay.log.n;
        return ui->replay.log.items;
    }
    const gl_snapshot *s = &ui->pipeline->steps[ui->step];
    *count = s->n_decisions;
    return s->n_decisions ? &ui->pipeline->log.items[s->first_decision] : NULL;
}

static uint32_t first_origin(const gl_node *n)
{
    return n && n->prov.n_origins ? n->prov.origins[0] : UINT32_MAX;
}

/* D's third scope: the shown graph against the other branch's at the same step, matched
 * by name. Not by id: both branches clone one loaded model, so ids agree up to the step
 * where they part, but after it each allocates new ids from the same counter, and one id
 * may be a Transpose here and a fused group there. Names are what the passes derive from
 * the nodes they rewrite and what the run view matches rows by, so the two views agree;
 * a node made under another name in each branch shows as removed and added. */
static void refresh_branch_diff(gl_ui *ui)
{
    if (ui->branch_diff)
        gl_ui_defer_free_diff(ui, ui->branch_diff);
    ui->branch_diff = NULL;
    const gl_graph *there = gl_ui_branch_graph(ui, ui->step), *here = gl_ui_graph(ui);
    if (ui->diff_branch && there && here)
        ui->branch_diff = gl_diff_graphs(there, here, GL_DIFF_MATCH_NAMES);
}

/* The shown graph changed (step, budget): re-index, let the selection follow, and make
 * every view rebuild itself when next shown. */
static void shown_changed(gl_ui *ui)
{
    index_graph(ui, gl_ui_graph(ui));
    uint32_t id = gl_ui_follow(&ui->index, ui->sel);
    if (id != ui->sel.node_id)
        ui->sel.followed = id != UINT32_MAX;
    if (id == UINT32_MAX && ui->index.n_rows) {
        /* nothing stands for it here: stay at the same place in the list */
        gl_view *nodes = &ui->views[GL_VIEW_NODES];
        int row = nodes->selected < (int)ui->index.n_rows ? nodes->selected
                                                            : (int)ui->index.n_rows - 1;
        id = ui->index.rows[row < 0 ? 0 : row]->id;
        ui->sel.origin = first_origin(ui->index.rows[row < 0 ? 0 : row]);
    }
    ui->sel.node_id = id;
    ui->ghost_step = -1;
    ui->generation++;
    refresh_branch_diff(ui);
    free(ui->marks);
    ui->marks = NULL;
    ui->n_marks = 0;
}

/* Show pipeline p from step 0 (its step diffs computed when NULL), keeping the branch
 * id: gl_ui_set_pipeline names a new pipeline, a swap brings one back. */
static void install(gl_ui *ui, gl_pipeline *p, gl_diff **step_diffs)
{
    /* the indexes kept are of the pipeline shown before, which may be gone */
    gl_graph_index_free(&ui->index);
    forget_step_indexes(ui);
    ui->pipeline = p;
    ui->step_index = gl_xcalloc(p->n_steps, sizeof(*ui->step_index));
    ui->n_step_index = p->n_steps;
    ui->step_diffs = step_diffs;
    if (!ui->step_diffs) {
        ui->step_diffs = gl_xcalloc(p->n_steps, sizeof(gl_diff *));
        for (size_t k = 1; k < p->n_steps; k++)
            ui->step_diffs[k] = gl_diff_graphs(p->steps[k - 1].model->graph,
                                               p->steps[k].model->graph, GL_DIFF_MATCH_IDS);
    }
    ui->step = 0;
    ui->diff = NULL;
    index_graph(ui, gl_ui_step_graph(ui, 0));
    if (ui->index.n_rows)
        ui->sel = (gl_selection){.origin = first_origin(ui->index.rows[0]),
                                 .node_id = ui->index.rows[0]->id};
    shown_changed(ui);
    if (p->failure)
        gl_ui_set_error(ui, "the pipeline stopped: %s", p->failure);
}

void gl_ui_set_pipeline(gl_ui *ui, gl_pipeline *p, gl_diff **step_diffs)
{
    ui->branch_id = ++ui->next_branch_id;
    install(ui, p, step_diffs);
}

/* The shown pipeline handed over as a branch (the ui shows none until it installs one). */
static gl_branch take_shown(gl_ui *ui)
{
    drop_replay(ui);
    ui->want_budget = -1;
    gl_branch b = {ui->pipeline, ui->step_diffs, ui->branch_id};
    gl_graph_index_free(&ui->index); /* of its graphs: none is shown any more */
    forget_step_indexes(ui);
    ui->pipeline = NULL;
    ui->step_diffs = NULL;
    return b;
}

/* A job may still read the pipeline (a run, a bisect): it waits in the graveyard. */
static void defer_free_branch(gl_ui *ui, gl_branch *b)
{
    for (size_t i = 0; b->step_diffs && b->pipeline && i < b->pipeline->n_steps; i++)
        if (b->step_diffs[i])
            gl_ui_defer_free_diff(ui, b->step_diffs[i]);
    free(b->step_diffs);
    if (b->pipeline)
        gl_ui_defer_free_pipeline(ui, b->pipeline);
    *b = (gl_branch){0};
}

void gl_ui_replace_pipeline(gl_ui *ui, gl_pipeline *p, gl_diff **step_diffs, size_t k)
{
    defer_free_branch(ui, &ui->other);
    ui->other = take_shown(ui);
    gl_ui_set_pipeline(ui, p, step_diffs);
    gl_ui_goto_step(ui, k < p->n_steps ? k : p->n_steps - 1);
}

void gl_ui_adopt_steps(gl_ui *ui, gl_pipeline *p, gl_diff **step_diffs,
                       gl_graph_index *step_index)
{
    forget_step_indexes(ui); /* of step 0 alone: ui->index is its index, and stays */
    ui->passes_pending = false;
    gl_pipeline *first = ui->pipeline;
    /* Both step 0s are the same file loaded the same way (same ids, same fingerprint):
     * the shown one moves into p, p's own goes with the step-0-only pipeline. */
    gl_model *shown = first->steps[0].model, *own = p->steps[0].model;
    first->steps[0].model = own;
    /* Steps whose pass changed nothing share step 0's model (gl_snapshot.shares_model):
     * they move to the shown one with it, and an index built on the one that goes is
     * dropped (built again when the step is shown). */
    for (size_t k = 0; k < p->n_steps; k++) {
        if (p->steps[k].model != own)
            continue;
        p->steps[k].model = shown;
        if (k > 0 && step_index && step_index[k].graph) {
            gl_graph_index_free(&step_index[k]);
            step_index[k] = (gl_graph_index){0};
        }
    }
    gl_branch old = {first, ui->step_diffs, ui->branch_id};
    defer_free_branch(ui, &old);
    ui->pipeline = p;
    ui->step_diffs = step_diffs;
    ui->step_index = step_index ? step_index : gl_xcalloc(p->n_steps, sizeof(*step_index));
    ui->n_step_index = p->n_steps;
    if (p->failure)
        gl_ui_set_error(ui, "the pipeline stopped: %s", p->failure);
}

unsigned gl_ui_swap_branch(gl_ui *ui)
{
    if (!ui->pipeline)
        return GL_REDRAW_NONE;
    if (!ui->other.pipeline) {
        gl_ui_set_status(ui, "X shows the other branch of a what-if: there is none yet (x on "
                         "a decision makes one)");
        return GL_REDRAW_STATUS;
    }
    size_t k = ui->step;
    int64_t budget = ui->budget;
    gl_selection sel = ui->sel;
    gl_branch shown = take_shown(ui), other = ui->other;
    ui->other = shown;
    install(ui, other.pipeline, other.step_diffs);
    ui->branch_id = other.id;
    ui->sel = sel; /* both branches start from one loaded model: origins mean the same */
    k = k < ui->pipeline->n_steps ? k : ui->pipeline->n_steps - 1;
    unsigned flags = gl_ui_goto_step(ui, k);
    char here[128], there[128];
    gl_ui_branch_label(ui->pipeline, here, sizeof(here));
    gl_ui_branch_label(ui->other.pipeline, there, sizeof(there));
    const gl_pipeline *o = ui->other.pipeline;
    size_t nodes_here = ui->pipeline->steps[k].nodes;
    gl_ui_set_status(ui, "branch %s shown (X: back to %s); step %zu: %zu %s here, %zu there",
                     here, there, k, nodes_here, gl_noun((long long)nodes_here, "node", "nodes"),
                     k < o->n_steps ? o->steps[k].nodes : 0);
    if (budget >= 0 && budget < ui->pipeline->steps[k].rewrites)
        flags |= gl_ui_set_budget(ui, budget);
    return flags | GL_REDRAW_ALL;
}

const gl_graph *gl_ui_branch_graph(const gl_ui *ui, size_t k)
{
    const gl_pipeline *o = ui->other.pipeline;
    return o && k < o->n_steps && o->steps[k].model ? o->steps[k].model->graph : NULL;
}

/* ---- views --------------------------------------------------------------------------- */

static gl_view *current_view(gl_ui *ui) { return &ui->views[ui->current]; }

/* A view rebuilds its model when the shown graph changed since it last opened; the
 * detail view whenever it is shown (its node changes without a new graph). */
static void refresh_view(gl_ui *ui, gl_view *v, bool force)
{
    if ((force || v->generation != ui->generation) && v->ops->open)
        v->ops->open(ui, v);
    v->generation = ui->generation;
}

static void push_back(gl_ui *ui)
{
    if (ui->n_back == GL_UI_BACK_MAX) {
        memmove(ui->back, ui->back + 1, (GL_UI_BACK_MAX - 1) * sizeof(ui->back[0]));
        ui->n_back--;
    }
    ui->back[ui->n_back++] = (gl_back_entry){(gl_view_kind)ui->current,
                                             ui->ghost_step >= 0 ? ui->ghost_id : ui->sel.node_id,
                                             ui->ghost_step};
}

unsigned gl_ui_show(gl_ui *ui, gl_view_kind kind, bool push)
{
    if (kind >= GL_VIEW_COUNT)
        return GL_REDRAW_NONE;
    if (kind == ui->current && kind != GL_VIEW_DETAIL) {
        refresh_view(ui, current_view(ui), false);
        return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
    }
    if (push)
        push_back(ui);
    ui->current = kind;
    refresh_view(ui, current_view(ui), kind == GL_VIEW_DETAIL);
    return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

gl_view *gl_ui_view(gl_ui *ui)
{
    refresh_view(ui, current_view(ui), false);
    return current_view(ui);
}

unsigned gl_ui_select_node(gl_ui *ui, uint32_t id)
{
    gl_node *n = gl_graph_index_node(&ui->index, id);
    if (!n)
        return GL_REDRAW_NONE;
    /* The node selected already keeps what it stands for (the member followed into a
     * group: stepping back finds that member, not the group's first). */
    if (id != ui->sel.node_id)
        ui->sel = (gl_selection){first_origin(n), id, false};
    ui->views[GL_VIEW_NODES].selected = (int)ui->index.row_of_id[id];
    return GL_REDRAW_VIEW;
}

unsigned gl_ui_open_detail(gl_ui *ui, uint32_t id, int64_t ghost_step)
{
    if (ghost_step >= 0 && (size_t)ghost_step == ui->step && !ui->replay.model)
        ghost_step = -1;
    push_back(ui);
    if (ghost_step < 0) {
        gl_ui_select_node(ui, id);
        ui->ghost_step = -1;
    } else {
        ui->ghost_step = ghost_step;
        ui->ghost_id = id;
    }
    ui->current = GL_VIEW_DETAIL;
    refresh_view(ui, current_view(ui), true);
    return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

static unsigned go_back(gl_ui *ui)
{
    if (ui->n_back == 0) {
        if (ui->n_marks || ui->status[0]) {
            free(ui->marks);
            ui->marks = NULL;
            ui->n_marks = 0;
            ui->status[0] = '\0';
            return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
        }
        return GL_REDRAW_NONE;
    }
    gl_back_entry e = ui->back[--ui->n_back];
    if (e.kind == GL_VIEW_DETAIL) {
        if (e.ghost_step >= 0) {
            ui->ghost_step = e.ghost_step;
            ui->ghost_id = e.node_id;
        } else {
            ui->ghost_step = -1;
            gl_ui_select_node(ui, e.node_id);
        }
    }
    ui->current = e.kind;
    refresh_view(ui, current_view(ui), e.kind == GL_VIEW_DETAIL);
    return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

/* Tab: the views of views.def by their tab column (nodes -> diff -> decisions -> graph
 * -> nodes); from a view not in the cycle (detail, help) Tab goes on as from the first. */
static unsigned next_view(gl_ui *ui)
{
    int at = view_rows[ui->current].tab > 0 ? view_rows[ui->current].tab : 1;
    size_t first = GL_VIEW_COUNT, next = GL_VIEW_COUNT;
    for (size_t k = 0; k < GL_VIEW_COUNT; k++) {
        if (view_rows[k].tab == 1)
            first = k;
        if (view_rows[k].tab == at + 1)
            next = k;
    }
    return gl_ui_show(ui, (gl_view_kind)(next < GL_VIEW_COUNT ? next : first), false);
}

/* The view a GL_REQ_VIEW_* request shows; GL_VIEW_COUNT for any other request. */
static gl_view_kind view_of_request(gl_request r)
{
    for (size_t k = 0; k < GL_VIEW_COUNT; k++)
        if (view_rows[k].request == r)
            return (gl_view_kind)k;
    return GL_VIEW_COUNT;
}

/* ---- steps and rewrites ------------------------------------------------------------ */

static void step_status(gl_ui *ui)
{
    char label[96];
    gl_snapshot_label(ui->pipeline, ui->step, label, sizeof(label));
    const gl_snapshot *s = &ui->pipeline->steps[ui->step];
    size_t n_dec;
    gl_ui_decisions(ui, &n_dec);
    const char *decisions = gl_noun((long long)n_dec, "decision", "decisions");
    if (ui->step == 0)
        gl_ui_set_status(ui, "%s: the model as loaded, %zu %s", label, s->nodes,
                         gl_noun((long long)s->nodes, "node", "nodes"));
    else if (ui->budget >= 0)
        gl_ui_set_status(ui, "%s: %lld of %lld rewrites, %zu %s, %zu %s", label,
                         (long long)ui->budget, (long long)s->rewrites, ui->index.n_rows,
                         gl_noun((long long)ui->index.n_rows, "node", "nodes"), n_dec,
                         decisions);
    else {
        char change[160];
        gl_snapshot_change_text(ui->pipeline, ui->step, change, sizeof(change));
        gl_ui_set_status(ui, "%s: %s, %zu %s, %zu %s, %.2f ms", label, change, s->nodes,
                         gl_noun((long long)s->nodes, "node", "nodes"), n_dec, decisions,
                         s->ms);
    }
}

unsigned gl_ui_goto_step(gl_ui *ui, size_t k)
{
    if (!ui->pipeline)
        return GL_REDRAW_NONE;
    if (k >= ui->pipeline->n_steps) {
        gl_ui_set_error(ui, "no step %zu (steps 0-%zu)", k, ui->pipeline->n_steps - 1);
        return GL_REDRAW_STATUS;
    }
    drop_replay(ui);
    ui->want_budget = -1;
    ui->land_decision = -1;
    ui->land_status[0] = '\0';
    ui->step = k;
    ui->diff = ui->step_diffs ? ui->step_diffs[k] : NULL;
    shown_changed(ui);
    step_status(ui);
    refresh_view(ui, current_view(ui), ui->current == GL_VIEW_DETAIL);
    return GL_REDRAW_ALL;
}

/* ---- replays inside a pass (+/-) ---------------------------------------------------------
 *
 * `-` and `+` show the step replayed to one rewrite less or more: the pass run again on a
 * clone of the step before with a budget (gl_pipeline_replay), and what rewrite K alone did
 * is that replay against the one at K - 1, a second replay. On a 100k-node graph each
 * costs about half a second (issue 23). The replays beside the shown one are kept
 * (ui->kept: one rewrite before and one after), so a rewrite made on the way is never
 * replayed again: `-` replays one rewrite further back only (the one it shows was made
 * for the rewrite diff before), and `+` after `-`, or `-` after `+`, replays nothing. */

/* Where +/- stand: the shown budget, or all the step's rewrites. */
static int64_t shown_position(const gl_ui *ui)
{
    return ui->budget >= 0 ? ui->budget : ui->pipeline->steps[ui->step].rewrites;
}

/* r holds a replay of the shown pipeline's shown step. */
static bool replay_here(const gl_ui *ui, const gl_replay *r)
{
    return r->model && r->p == ui->pipeline && r->step == ui->step;
}

/* The kept replay of the shown step at `budget`, or NULL. */
static gl_replay *kept_replay(gl_ui *ui, int64_t budget)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(ui->kept); i++)
        if (replay_here(ui, &ui->kept[i]) && ui->kept[i].budget == budget)
            return &ui->kept[i];
    return NULL;
}

/* Everything the views show of it is made (one kept from a rewrite diff has its model
 * and log alone). */
static bool replay_complete(const gl_replay *r)
{
    return r->model && r->diff && (r->budget < 1 || r->rewrite_diff);
}

/* Of the replays in pool, the first one rewrite before the shown position and the first
 * one after it are kept; the others are freed. Every entry is left empty. */
static void keep_beside(gl_ui *ui, gl_replay *const *pool, size_t n)
{
    int64_t at = shown_position(ui);
    gl_replay kept[2] = {empty_replay(), empty_replay()};
    for (size_t i = 0; i < n; i++) {
        gl_replay *r = pool[i];
        size_t slot = r->budget < at ? 0 : 1;
        if (replay_here(ui, r) && (r->budget == at - 1 || r->budget == at + 1) &&
            !kept[slot].model) {
            kept[slot] = *r;
            *r = empty_replay();
        } else {
            free_replay(ui, r);
        }
    }
    memcpy(ui->kept, kept, sizeof(kept));
}

/* The record of the replay's last rewrite: its last applied one (a pass that counts
 * rewrites without records has none). */
static int64_t last_applied(const gl_decision_log *log)
{
    for (size_t i = log->n; i-- > 0;)
        if (log->items[i].verdict == GL_APPLIED)
            return log->items[i].id;
    return -1;
}

/* Bisect's landing, once its replay is shown: the record selected in the decisions
 * view, the rewrite's diff on top, what differs on the status line. */
static unsigned land(gl_ui *ui)
{
    int64_t id = ui->land_decision;
    ui->land_decision = -1;
    char status[sizeof(ui->land_status)];
    memcpy(status, ui->land_status, sizeof(status));
    ui->land_status[0] = '\0';
    if (id >= 0)
        gl_ui_decisions_select(ui, id);
    ui->diff_whole_step = ui->diff_branch = false;
    refresh_branch_diff(ui);
    gl_ui_show(ui, GL_VIEW_DIFF, true);
    gl_ui_set_error(ui, "%s", status);
    return GL_REDRAW_ALL;
}

static unsigned start_replay(gl_ui *ui);

/* A replay the views can show: its graph and its diff against the step before (the
 * rewrite diff may follow: complete_shown). */
static bool replay_showable(const gl_replay *r) { return r->model && r->diff; }

/* The shown replay's rewrite diff, when it waits for the replay one rewrite before, is
 * made by a job of its own started here: the replay is on screen meanwhile (on a
 * 100k-node graph one replay is about half a second; the views but the diff of the
 * rewrite alone need only the first). */
static unsigned complete_shown(gl_ui *ui)
{
    if (!ui->replay.model || replay_complete(&ui->replay) || ui->job ||
        ui->want_budget != ui->budget)
        return GL_REDRAW_NONE;
    return start_replay(ui);
}

/* r (moved, left empty) is shown; the replay shown before it and `extra` (may be NULL)
 * join the kept ones, and what is not beside r goes. */
static unsigned show_replay(gl_ui *ui, gl_replay *r, gl_replay *extra)
{
    gl_replay was = ui->replay;
    ui->replay = *r;
    *r = empty_replay();
    ui->budget = ui->replay.budget;
    ui->diff = ui->replay.diff;
    gl_replay *pool[] = {&was, &ui->kept[0], &ui->kept[1], extra};
    keep_beside(ui, pool, extra ? 4 : 3);
    shown_changed(ui);
    step_status(ui);
    refresh_view(ui, current_view(ui), ui->current == GL_VIEW_DETAIL);
    if (ui->land_decision >= 0 || ui->land_status[0])
        return land(ui);
    return GL_REDRAW_ALL | complete_shown(ui);
}

typedef struct replay_job {
    const gl_pipeline *p;
    size_t step;
    int64_t budget;
    const gl_model *have;        /* kept replay at `budget` (read only); NULL: replay it */
    const gl_model *have_before; /* kept or shown replay at budget - 1; NULL: replay it */
    bool want_diff, want_rewrite_diff, want_index; /* what `have` lacks (all of it
                                                    * without one) */
    gl_replay made;              /* model and log (unless `have`), the diffs asked for */
    gl_replay before;            /* the replay at budget - 1 when made here */
    unsigned replays;            /* gl_pipeline_replay calls */
    gl_status st;
    char error[256];
} replay_job;

/* What rewrite `budget` alone did: the replay one rewrite before against this one (the
 * step before itself when budget is 1). */
static gl_status diff_last_rewrite(replay_job *r, const gl_model *m, gl_job *job)
{
    const gl_graph *base = r->p->steps[r->step - 1].model->graph;
    if (r->budget > 1) {
        const gl_model *before = r->have_before;
        if (!before) {
            gl_job_progress(job, "replaying %s to rewrite %lld, for rewrite %lld alone",
                            r->p->steps[r->step].pass->name, (long long)r->budget - 1,
                            (long long)r->budget);
            r->replays++;
            gl_status st = gl_pipeline_replay(r->p, r->step, r->budget - 1, &r->before.model,
                                              &r->before.log);
            if (st != GL_OK)
                return st;
            before = r->before.model;
            /* shown by the next `-`: made showable here, behind the screen */
            r->before.diff = gl_diff_graphs(base, before->graph, GL_DIFF_MATCH_IDS);
            gl_graph_index_build(&r->before.index, before->graph);
        }
        base = before->graph;
    }
    r->made.rewrite_diff = gl_diff_graphs(base, m->graph, GL_DIFF_MATCH_IDS);
    return GL_OK;
}

static void replay_run(void *arg, gl_job *job)
{
    replay_job *r = arg;
    const gl_model *m = r->have;
    if (!m) {
        gl_job_progress(job, "replaying %s to rewrite %lld", r->p->steps[r->step].pass->name,
                        (long long)r->budget);
        r->replays++;
        r->st = gl_pipeline_replay(r->p, r->step, r->budget, &r->made.model, &r->made.log);
        m = r->made.model;
    }
    if (r->st == GL_OK && r->want_diff) {
        gl_job_progress(job, "diffing the replay");
        r->made.diff = gl_diff_graphs(r->p->steps[r->step - 1].model->graph, m->graph,
                                      GL_DIFF_MATCH_IDS);
    }
    if (r->st == GL_OK && r->want_index) {
        gl_job_progress(job, "indexing the replay");
        gl_graph_index_build(&r->made.index, m->graph);
    }
    if (r->st == GL_OK && r->want_rewrite_diff && r->budget >= 1)
        r->st = diff_last_rewrite(r, m, job);
    if (r->st != GL_OK)
        snprintf(r->error, sizeof(r->error), "%s", gl_error_message());
}

/* A job's replay freed now (nothing else reads what a job made; any thread). */
static void release_made(gl_replay *r)
{
    gl_model_free(r->model);
    gl_decision_log_free(&r->log);
    gl_diff_free(r->diff);
    gl_diff_free(r->rewrite_diff);
    gl_graph_index_free(&r->index);
}

/* Frees what the job made: the replay and the one before it with their diffs and
 * indexes (what it read stays with the ui). */
static void replay_discard(void *arg)
{
    replay_job *r = arg;
    release_made(&r->made);
    release_made(&r->before);
    free(r);
}

/* The shown or a kept replay of the shown step at `budget`, or NULL. */
static gl_replay *find_replay(gl_ui *ui, int64_t budget)
{
    if (ui->replay.model && ui->replay.budget == budget)
        return &ui->replay;
    return kept_replay(ui, budget);
}

/* What the job made for a replay the ui has (`have`) joins it where it lacks it. */
static void join_made(gl_ui *ui, gl_replay *have, gl_replay *made)
{
    if (!have->diff)
        have->diff = made->diff, made->diff = NULL;
    if (!have->rewrite_diff)
        have->rewrite_diff = made->rewrite_diff, made->rewrite_diff = NULL;
    if (!have->index.graph && have != &ui->replay)
        have->index = made->index, made->index = (gl_graph_index){0};
    free_replay(ui, made);
}

static unsigned replay_finish(gl_ui *ui, void *arg)
{
    replay_job *r = arg;
    ui->replays_run += r->replays;
    if (r->st != GL_OK) {
        gl_ui_set_error(ui, "replay failed: %s", r->error);
        ui->want_budget = ui->budget;
        ui->land_decision = -1;
        ui->land_status[0] = '\0';
        replay_discard(r);
        return GL_REDRAW_STATUS;
    }
    bool here = r->p == ui->pipeline && r->step == ui->step;
    int64_t budget = r->budget;
    gl_replay made = r->made, before = r->before;
    made.p = before.p = r->p;
    made.step = before.step = r->step;
    made.budget = r->budget;
    before.budget = r->budget - 1;
    made.rewrite_decision = made.model ? last_applied(&made.log) : -1;
    before.rewrite_decision = before.model ? last_applied(&before.log) : -1;
    gl_replay *have = r->have && here ? find_replay(ui, r->budget) : NULL;
    bool read_gone = r->have && (!have || have->model != r->have);
    free(r);
    if (read_gone) /* what it read was dropped meanwhile: its diffs are of nothing kept */
        have = NULL, free_replay(ui, &made);
    if (have)
        join_made(ui, have, &made);
    if (!here || read_gone || budget != ui->want_budget) {
        /* the user moved on (or to the other branch, X) while it ran: what is beside the
         * shown position is kept, and gl_ui_resume replays what is wanted now */
        gl_replay *pool[] = {&made, &before, &ui->kept[0], &ui->kept[1]};
        if (here)
            keep_beside(ui, pool, GL_ARRAY_LEN(pool));
        free_replay(ui, &made);
        free_replay(ui, &before);
        return GL_REDRAW_STATUS;
    }
    if (have == &ui->replay) { /* the shown one completed (complete_shown) */
        gl_replay *pool[] = {&before, &ui->kept[0], &ui->kept[1]};
        keep_beside(ui, pool, GL_ARRAY_LEN(pool));
        ui->diff = ui->replay.diff;
        step_status(ui);
        return GL_REDRAW_ALL;
    }
    return show_replay(ui, have ? have : &made, &before);
}

static const gl_job_spec replay_spec = {
    .what = "replaying", .run = replay_run, .finish = replay_finish, .discard = replay_discard};

/* A job for the wanted budget: the replay (unless one is kept), its diff against the
 * step before, its index, and its rewrite diff when the replay one rewrite before is at
 * hand; without it the rewrite diff waits for complete_shown, unless bisect lands here
 * (land shows that diff at once). */
static unsigned start_replay(gl_ui *ui)
{
    int64_t budget = ui->want_budget;
    const gl_replay *have = find_replay(ui, budget);
    const gl_replay *before = find_replay(ui, budget - 1);
    bool landing = ui->land_decision >= 0 || ui->land_status[0];
    bool now = before || budget <= 1 || landing || have == &ui->replay;
    replay_job *r = gl_xcalloc(1, sizeof(*r));
    *r = (replay_job){.p = ui->pipeline, .step = ui->step, .budget = budget,
                      .have = have ? have->model : NULL,
                      .have_before = before ? before->model : NULL,
                      .want_diff = !have || !have->diff,
                      .want_rewrite_diff = (!have || !have->rewrite_diff) && now,
                      .want_index = !have || (have != &ui->replay && !have->index.graph),
                      .made = empty_replay(), .before = empty_replay()};
    if (!gl_ui_start_job(ui, &replay_spec, r)) {
        free(r);
        ui->want_budget = ui->budget;
    }
    return GL_REDRAW_ALL;
}

static bool replay_running(const gl_ui *ui) { return gl_ui_job_spec(ui) == &replay_spec; }

unsigned gl_ui_set_budget(gl_ui *ui, int64_t budget)
{
    if (!ui->pipeline)
        return GL_REDRAW_NONE;
    ui->land_decision = -1; /* the user moves: a bisect's landing is not wanted any more */
    ui->land_status[0] = '\0';
    if (ui->step == 0) {
        gl_ui_set_status(ui, "step 0 is the model as loaded: step into a pass first (])");
        return GL_REDRAW_STATUS;
    }
    const gl_snapshot *s = &ui->pipeline->steps[ui->step];
    if (s->rewrites == 0) {
        gl_ui_set_status(ui, "%s made no rewrites here", s->pass->name);
        return GL_REDRAW_STATUS;
    }
    if (budget < 0 || budget >= s->rewrites) {
        bool was = ui->budget >= 0;
        ui->want_budget = -1;
        if (!was) {
            gl_ui_set_status(ui, "%s: every rewrite shown (%lld)", s->pass->name,
                             (long long)s->rewrites);
            return GL_REDRAW_STATUS;
        }
        /* the step itself shown; the replay it leaves is kept for a `-` back */
        gl_replay left = ui->replay;
        ui->replay = empty_replay();
        ui->budget = -1;
        gl_replay *pool[] = {&left, &ui->kept[0], &ui->kept[1]};
        keep_beside(ui, pool, GL_ARRAY_LEN(pool));
        ui->diff = ui->step_diffs ? ui->step_diffs[ui->step] : NULL;
        shown_changed(ui);
        step_status(ui);
        refresh_view(ui, current_view(ui), ui->current == GL_VIEW_DETAIL);
        return GL_REDRAW_ALL;
    }
    ui->want_budget = budget;
    gl_replay *kept = kept_replay(ui, budget);
    if (kept && replay_showable(kept)) /* made on the way here */
        return show_replay(ui, kept, NULL);
    if (ui->job) {
        /* one job at a time: the replay (or the next one) starts when it ends */
        if (replay_running(ui))
            gl_ui_set_status(ui, "replaying %s to %lld/%lld rewrites...", s->pass->name,
                             (long long)budget, (long long)s->rewrites);
        else
            gl_ui_set_status(ui, "%s %lld/%lld rewrites: replayed when %s is done", s->pass->name,
                             (long long)budget, (long long)s->rewrites, gl_ui_job_spec(ui)->what);
        return GL_REDRAW_STATUS;
    }
    return start_replay(ui);
}

unsigned gl_ui_land_on_rewrite(gl_ui *ui, size_t step, int64_t k, int64_t decision,
                               const char *status)
{
    unsigned flags = gl_ui_goto_step(ui, step);
    if (!ui->pipeline || step != ui->step || k < 1 || k > ui->pipeline->steps[step].rewrites)
        return flags;
    ui->land_decision = decision;
    snprintf(ui->land_status, sizeof(ui->land_status), "%s", status);
    ui->want_budget = k;
    gl_ui_set_status(ui, "%s; replaying to it...", status);
    if (ui->job) /* gl_ui_resume starts it when that job ends */
        return flags | GL_REDRAW_STATUS;
    return flags | start_replay(ui);
}

unsigned gl_ui_resume(gl_ui *ui)
{
    if (!ui->pipeline || ui->job || ui->want_budget < 0)
        return GL_REDRAW_NONE;
    if (ui->want_budget == ui->budget)
        return complete_shown(ui);
    return start_replay(ui);
}

static unsigned step_rewrite(gl_ui *ui, int dir)
{
    if (!ui->pipeline || ui->step == 0)
        return gl_ui_set_budget(ui, 0);
    int64_t total = ui->pipeline->steps[ui->step].rewrites;
    int64_t at = ui->want_budget >= 0 ? ui->want_budget : total;
    if (dir < 0 && at == 0) {
        gl_ui_set_status(ui, "no rewrites left to undo in this step ([ goes to the step before)");
        return GL_REDRAW_STATUS;
    }
    return gl_ui_set_budget(ui, at + dir >= total ? -1 : at + dir);
}

/* ---- search ---------------------------------------------------------------------------- */

static bool find_in_view(gl_ui *ui, int dir, bool inclusive)
{
    gl_view *v = current_view(ui);
    if (!v->ops->find) {
        gl_ui_show(ui, GL_VIEW_NODES, true);
        v = current_view(ui);
    }
    v->match_at = v->match_count = 0;
    return v->ops->find(ui, v, dir, inclusive);
}

/* The status line after a find: "/Conv: 3 of 17 (n/N: next/previous)", or for the nodes
 * a decision marked "marked node 2 of 5"; the count when the view's find told it. */
static void say_match(gl_ui *ui)
{
    const gl_view *v = current_view(ui);
    char count[64] = "";
    if (v->match_count > 0)
        snprintf(count, sizeof(count), "%s%d of %d", ui->search[0] ? ": " : " ", v->match_at,
                 v->match_count);
    if (ui->search[0])
        gl_ui_set_status(ui, "/%s%s (n/N: next/previous)", ui->search, count);
    else
        gl_ui_set_status(ui, "marked node%s (n/N: next/previous)", count);
}

static unsigned search_next(gl_ui *ui, int dir)
{
    if (!ui->search[0] && !ui->n_marks) {
        gl_ui_set_status(ui, "no search yet: / searches");
        return GL_REDRAW_STATUS;
    }
    if (!find_in_view(ui, dir, false)) {
        gl_ui_set_error(ui, "no match for '%s'", ui->search);
        return GL_REDRAW_STATUS;
    }
    say_match(ui);
    return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

unsigned gl_ui_search_nodes(gl_ui *ui, const char *query)
{
    unsigned flags = gl_ui_show(ui, GL_VIEW_NODES, true);
    snprintf(ui->search, sizeof(ui->search), "%s", query);
    free(ui->marks);
    ui->marks = NULL;
    ui->n_marks = 0;
    if (ui->index.n_rows) /* from the first node: the first match is "1 of N" */
        gl_ui_select_node(ui, ui->index.rows[0]->id);
    current_view(ui)->selected = 0;
    if (!find_in_view(ui, 1, true)) {
        gl_ui_set_error(ui, "no match for '%s'", ui->search);
        return flags | GL_REDRAW_STATUS;
    }
    say_match(ui);
    return flags | GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

static unsigned open_prompt(gl_ui *ui)
{
    if (!current_view(ui)->ops->find)
        gl_ui_show(ui, GL_VIEW_NODES, true);
    ui->prompt = true;
    ui->prompt_text[0] = '\0';
    ui->prompt_saved_row = current_view(ui)->selected;
    return GL_REDRAW_STATUS;
}

static void select_view_row(gl_ui *ui, int row)
{
    gl_view *v = current_view(ui);
    v->selected = row;
    if (ui->current == GL_VIEW_NODES && row >= 0 && (size_t)row < ui->index.n_rows)
        gl_ui_select_node(ui, ui->index.rows[row]->id);
}

/* Typing in the prompt searches as it goes, from where the prompt opened. */
static unsigned prompt_key(gl_ui *ui, int key)
{
    size_t len = strlen(ui->prompt_text);
    if (key == 27) {
        ui->prompt = false;
        select_view_row(ui, ui->prompt_saved_row);
        ui->status[0] = '\0';
        return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
    }
    if (key == '\n' || key == '\r' || key == KEY_ENTER) {
        ui->prompt = false;
        if (!len) /* an empty prompt repeats the last search */
            return search_next(ui, 1);
        snprintf(ui->search, sizeof(ui->search), "%s", ui->prompt_text);
        free(ui->marks);
        ui->marks = NULL;
        ui->n_marks = 0;
        if (ui->status_error)
            gl_ui_set_error(ui, "no match for '%s'", ui->search);
        else
            say_match(ui);
        return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
    }
    if (key == KEY_BACKSPACE || key == 127 || key == 8) {
        if (len)
            ui->prompt_text[len - 1] = '\0';
    } else if (key == ('u' & 0x1f)) {
        ui->prompt_text[0] = '\0';
    } else if (key >= ' ' && key < 256 && key != 127 && len + 1 < sizeof(ui->prompt_text)) {
        ui->prompt_text[len] = (char)key;
        ui->prompt_text[len + 1] = '\0';
    } else {
        return GL_REDRAW_NONE;
    }
    gl_view *v = current_view(ui);
    v->selected = ui->prompt_saved_row;
    if (!ui->prompt_text[0])
        return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
    char saved[sizeof(ui->search)];
    memcpy(saved, ui->search, sizeof(saved));
    snprintf(ui->search, sizeof(ui->search), "%s", ui->prompt_text);
    v->match_at = v->match_count = 0;
    bool found = v->ops->find(ui, v, 1, true);
    memcpy(ui->search, saved, sizeof(saved));
    select_view_row(ui, v->selected);
    ui->status_error = !found;
    return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

/* ---- decisions -> nodes ------------------------------------------------------------ */

static bool has_id(const uint32_t *ids, size_t n, uint32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

unsigned gl_ui_goto_decision_nodes(gl_ui *ui, const gl_decision *d)
{
    const gl_graph *g = gl_ui_graph(ui);
    const gl_graph *before = ui->step > 0 ? gl_ui_step_graph(ui, ui->step - 1) : NULL;
    uint32_t *ids = gl_xcalloc(d->n_nodes + 1, sizeof(uint32_t));
    size_t n = 0, gone = 0;
    for (size_t i = 0; g && i < d->n_nodes; i++) {
        /* By id where the record has one: names may repeat, ids do not, and a clone
         * keeps them, so the id names the same node in this step's graph and the one
         * before. */
        uint32_t rec_id = d->node_ids[i];
        const gl_node *node = rec_id != GL_DECISION_NO_ID
                                  ? gl_graph_index_node(&ui->index, rec_id)
                                  : gl_find_node(g, d->nodes[i]);
        uint32_t id = node ? node->id : UINT32_MAX;
        const gl_node *old = node || !before ? NULL
                             : rec_id != GL_DECISION_NO_ID ? gl_find_node_by_id(before, rec_id)
                                                           : gl_find_node(before, d->nodes[i]);
        if (old) /* gone in this step: what stands for it now */
            id = gl_ui_follow(&ui->index,
                              (gl_selection){.origin = first_origin(old), .node_id = old->id});
        if (id == UINT32_MAX || !gl_graph_index_node(&ui->index, id))
            gone++;
        else if (!has_id(ids, n, id))
            ids[n++] = id;
    }
    if (n == 0) {
        free(ids);
        if (d->n_nodes == 1)
            gl_ui_set_error(ui, "#%lld: its node is not in this step", (long long)d->id);
        else
            gl_ui_set_error(ui, "#%lld: none of its %zu nodes is in this step",
                            (long long)d->id, d->n_nodes);
        return GL_REDRAW_STATUS;
    }
    unsigned flags = gl_ui_show(ui, GL_VIEW_NODES, true);
    free(ui->marks);
    ui->marks = ids;
    ui->n_marks = n;
    ui->search[0] = '\0';
    gl_ui_select_node(ui, ids[0]);
    gl_ui_set_status(ui, "#%lld %s: %zu %s marked (n/N)%s", (long long)d->id, d->rule, n,
                     gl_noun((long long)n, "node", "nodes"),
                     gone ? ", others gone or not found" : "");
    return flags | GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

/* ---- the diff's scope inside a pass --------------------------------------------------- */

const gl_diff *gl_ui_shown_diff(const gl_ui *ui)
{
    if (ui->diff_branch)
        return ui->branch_diff;
    if (ui->budget >= 0 && !ui->diff_whole_step)
        return ui->replay.rewrite_diff;
    return ui->diff;
}

/* D: inside a pass, the rewrite alone, then everything so far against the step before;
 * with a what-if's other branch, then the shown graph against that branch's. */
static unsigned diff_scope(gl_ui *ui)
{
    bool inside = ui->budget >= 0;
    if (ui->diff_branch) {
        ui->diff_branch = ui->diff_whole_step = false;
    } else if (ui->other.pipeline && (!inside || ui->diff_whole_step)) {
        ui->diff_branch = true;
    } else {
        ui->diff_whole_step = !ui->diff_whole_step;
    }
    refresh_branch_diff(ui);
    gl_view *v = &ui->views[GL_VIEW_DIFF];
    unsigned flags = gl_ui_show(ui, GL_VIEW_DIFF, ui->current != GL_VIEW_DIFF);
    if (v->ops->open)
        v->ops->open(ui, v);
    const char *next = inside ? "the last rewrite alone" : "against the step before";
    if (ui->diff_branch) {
        char there[128];
        gl_ui_branch_label(ui->other.pipeline, there, sizeof(there));
        gl_ui_set_status(ui, "diff: against the other branch (%s) at this step (D: %s)", there,
                         next);
    } else if (!inside && ui->other.pipeline) {
        gl_ui_set_status(ui, "diff: against the step before (D: against the other branch)");
    } else if (!inside) {
        gl_ui_set_status(ui, "D: inside a pass (+/-) the diff shows %s; here the whole step "
                         "is shown", ui->diff_whole_step ? "all the rewrites so far against "
                         "the step before" : "the last rewrite alone");
    } else {
        gl_ui_set_status(ui, "diff: %s (D: %s)", ui->diff_whole_step ? "every rewrite so far"
                         " against the step before" : "the last rewrite alone",
                         ui->diff_whole_step ? (ui->other.pipeline ? "against the other branch"
                                                                   : "the last rewrite alone")
                                             : "against the step before");
    }
    return flags | GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

/* ---- requests ---------------------------------------------------------------------------- */

static unsigned jump_digit(gl_ui *ui, int digit)
{
    double t = gl_now_ms();
    size_t n = ui->pipeline ? ui->pipeline->n_steps : 0;
    if (ui->pending_digit >= 0 && t - ui->pending_digit_ms < 1000) {
        size_t two = (size_t)ui->pending_digit * 10 + (size_t)digit;
        ui->pending_digit = -1;
        if (two < n)
            return gl_ui_goto_step(ui, two);
    }
    ui->pending_digit = digit;
    ui->pending_digit_ms = t;
    return gl_ui_goto_step(ui, (size_t)digit);
}

/* While the first load runs there is nothing to show: only these make sense. */
static unsigned loading_request(gl_ui *ui, gl_request r)
{
    if (r == GL_REQ_QUIT || r == GL_REQ_CANCEL) {
        ui->quit = true;
        return GL_REDRAW_QUIT;
    }
    gl_ui_set_status(ui, "still loading (q or C-c quits)");
    return GL_REDRAW_STATUS;
}

unsigned gl_ui_request(gl_ui *ui, gl_request r)
{
    if (!ui->pipeline)
        return loading_request(ui, r);
    gl_view *v = current_view(ui);
    refresh_view(ui, v, false);
    gl_view_kind shows = view_of_request(r);
    if (shows != GL_VIEW_COUNT)
        return gl_ui_show(ui, shows, true);
    switch (r) {
    case GL_REQ_STEP_NEXT:
        if (ui->step + 1 >= ui->pipeline->n_steps) {
            gl_ui_set_status(ui, "this is the last step");
            return GL_REDRAW_STATUS;
        }
        return gl_ui_goto_step(ui, ui->step + 1);
    case GL_REQ_STEP_PREV:
        if (ui->step == 0) {
            gl_ui_set_status(ui, "this is the first step");
            return GL_REDRAW_STATUS;
        }
        return gl_ui_goto_step(ui, ui->step - 1);
    case GL_REQ_REWRITE_NEXT: return step_rewrite(ui, 1);
    case GL_REQ_REWRITE_PREV: return step_rewrite(ui, -1);
    case GL_REQ_SEARCH: return open_prompt(ui);
    case GL_REQ_SEARCH_NEXT: return search_next(ui, 1);
    case GL_REQ_SEARCH_PREV: return search_next(ui, -1);
    case GL_REQ_BACK: return go_back(ui);
    case GL_REQ_NEXT_VIEW: return next_view(ui);
    case GL_REQ_DIFF_SCOPE: return diff_scope(ui);
    case GL_REQ_EXPORT_STEP: return gl_ui_export_ask(ui, GL_EXPORT_TO_STEP);
    case GL_REQ_EXPORT_ALL: return gl_ui_export_ask(ui, GL_EXPORT_TO_ALL);
    case GL_REQ_OPEN_SVG: return gl_ui_open_svg(ui);
    case GL_REQ_BISECT: return gl_ui_bisect(ui);
    case GL_REQ_SWAP_BRANCH: return gl_ui_swap_branch(ui);
    case GL_REQ_RUN: return gl_ui_run(ui);
    case GL_REQ_DIVERGENCE: return gl_ui_run_divergence(ui);
    case GL_REQ_JUMP: return GL_REDRAW_NONE; /* needs the digit: gl_ui_key */
    case GL_REQ_CANCEL: return gl_ui_cancel_job(ui);
    case GL_REQ_HELP:
        return ui->current == GL_VIEW_HELP ? go_back(ui) : gl_ui_show(ui, GL_VIEW_HELP, true);
    case GL_REQ_QUIT: ui->quit = true; return GL_REDRAW_QUIT;
    default: return v->ops->request ? v->ops->request(ui, v, r) : GL_REDRAW_NONE;
    }
}

/* Keys that read step 0 alone: moving through its node list, searching it, help, quit. */
static bool works_on_step0(const gl_ui *ui, gl_request r)
{
    if (ui->prompt) /* the search prompt's text and its Enter */
        return true;
    switch (r) {
    case GL_REQ_MOVE_DOWN: case GL_REQ_MOVE_UP: case GL_REQ_PAGE_DOWN: case GL_REQ_PAGE_UP:
    case GL_REQ_HALF_DOWN: case GL_REQ_HALF_UP: case GL_REQ_TOP: case GL_REQ_BOTTOM:
    case GL_REQ_PAN_LEFT: case GL_REQ_PAN_RIGHT: case GL_REQ_SEARCH: case GL_REQ_SEARCH_NEXT:
    case GL_REQ_SEARCH_PREV: case GL_REQ_HELP: case GL_REQ_BACK: case GL_REQ_QUIT:
        return true;
    default:
        return false;
    }
}

bool gl_ui_key_waits(const gl_ui *ui, int key, size_t n_waiting)
{
    gl_request r = gl_key_request(key);
    if (r == GL_REQ_CANCEL || (ui->pipeline && !ui->passes_pending))
        return false;
    if (n_waiting) /* behind a waiting key: typed keys keep their order */
        return true;
    if (!ui->pipeline) /* nothing on the screen yet: only q acts */
        return r != GL_REQ_QUIT;
    return !works_on_step0(ui, r);
}

unsigned gl_ui_key(gl_ui *ui, int key)
{
    if (ui->prompt)
        return prompt_key(ui, key);
    if (ui->export_prompt)
        return gl_ui_export_prompt_key(ui, key);
    gl_request r = gl_key_request(key);
    if (r == GL_REQ_JUMP && ui->pipeline)
        return jump_digit(ui, key - '0');
    ui->pending_digit = -1;
    if (r == GL_REQ_COUNT) {
        gl_ui_set_status(ui, "that key does nothing here (? lists the keys)");
        return GL_REDRAW_STATUS;
    }
    return gl_ui_request(ui, r);
}

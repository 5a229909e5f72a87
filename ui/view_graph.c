/* view_graph.c — the graph view: the shown step laid out by Graphviz and drawn with
 * box-drawing characters (graph_draw.h), scrolled over, with a cursor box that is the
 * ui's selection.
 *
 * No key waits for Graphviz: layouts run as jobs on the ui's worker (gl_ui_start_job),
 * and the drawing stays on screen until the next one arrives. Big graphs are laid out
 * as the selection's neighbourhood (render.h: `radius` hops, < and > change it), so a
 * layout stays small whatever the model. Layouts are cached per (step, budget, radius,
 * focus); moving the cursor inside the drawn neighbourhood moves the selection without
 * a new layout, and a selection made elsewhere outside it asks for one centred there.
 *
 * The wanted layout is compared with what is shown whenever the view is opened, drawn or
 * sent a request, since the selection may change in other views without the shown
 * graph changing (which is when `open` runs).
 */
#include "ui/ui.h"

#include "ui/canvas_paint.h"
#include "ui/graph_draw.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_RADIUS 2 /* hops around the selection in a neighbourhood */
#define MAX_RADIUS 9
#define CACHE_SLOTS 8
#define PAN_ROWS 3
#define PAN_COLS 8

typedef struct layout_key {
    const gl_graph *graph; /* with step and budget: which graph (snapshots live as long
                            * as the pipeline, so the pointer does not come back) */
    size_t step;
    int64_t budget;
    int radius;
    uint32_t focus;        /* node id the neighbourhood is centred on; UINT32_MAX: none */
} layout_key;

typedef struct cached {
    bool used;
    layout_key key;
    bool reduced;          /* a neighbourhood or groups: the focus and radius matter */
    gl_layout *layout;
    gl_drawing *drawing;
    char note[256];
    double ms;             /* layout and drawing time */
    unsigned stamp;        /* last use, for eviction */
} cached;

typedef struct graph_state {
    cached cache[CACHE_SLOTS];
    unsigned clock;
    int shown;             /* slot on screen; -1: none yet */
    int radius;
    int vx, vy;            /* canvas cell at the top-left of the viewport */
    long cursor;           /* box of the shown drawing; -1: none */
    bool centre;           /* centre on the cursor at the next draw (its size known) */
    int rows, cols;        /* viewport at the last draw */
    bool pending;          /* our layout job runs */
    layout_key pending_key;
    bool failed;           /* `failed_key` failed or was cancelled: not retried */
    layout_key failed_key;
    char error[256];
} graph_state;

/* ---- what is wanted, what is cached ---- */

static layout_key wanted(const gl_ui *ui, const graph_state *st)
{
    return (layout_key){gl_ui_graph(ui), ui->step, ui->budget, st->radius, ui->sel.node_id};
}

static bool same_key(layout_key a, layout_key b)
{
    return a.graph == b.graph && a.step == b.step && a.budget == b.budget &&
           a.radius == b.radius && a.focus == b.focus;
}

/* The first (main) box of node `id`, or -1. */
static long box_of_node(const gl_layout *l, uint32_t id)
{
    for (size_t i = 0; id != UINT32_MAX && i < l->n_nodes; i++)
        if (l->nodes[i].kind == GL_BOX_NODE && l->nodes[i].id == id)
            return (long)i;
    return -1;
}

/* A whole-graph drawing serves any focus; a neighbourhood serves its radius and every
 * node drawn in it (moving inside it needs no new layout). */
static bool serves(const cached *c, layout_key want)
{
    if (!c->used || c->key.graph != want.graph || c->key.step != want.step ||
        c->key.budget != want.budget)
        return false;
    if (!c->reduced)
        return true;
    return c->key.radius == want.radius &&
           (c->key.focus == want.focus || box_of_node(c->layout, want.focus) >= 0);
}

static void cached_free(cached *c)
{
    gl_layout_free(c->layout);
    gl_drawing_free(c->drawing);
    *c = (cached){0};
}

static const gl_drawing *shown_drawing(const graph_state *st)
{
    return st->shown >= 0 ? st->cache[st->shown].drawing : NULL;
}

/* ---- the viewport ---- */

static void clamp_viewport(graph_state *st)
{
    const gl_drawing *d = shown_drawing(st);
    if (!d)
        return;
    int max_x = d->canvas->width - st->cols, max_y = d->canvas->height - st->rows;
    st->vx = st->vx > max_x ? max_x : st->vx;
    st->vy = st->vy > max_y ? max_y : st->vy;
    st->vx = st->vx < 0 ? 0 : st->vx;
    st->vy = st->vy < 0 ? 0 : st->vy;
    if (max_x < 0) /* narrower than the screen: in the middle */
        st->vx = max_x / 2;
}

static void centre_on_cursor(graph_state *st)
{
    const gl_drawing *d = shown_drawing(st);
    if (d && st->cursor >= 0) {
        const gl_cell_rect *r = &d->boxes[st->cursor];
        st->vx = r->x + r->w / 2 - st->cols / 2;
        st->vy = r->y + r->h / 2 - st->rows / 2;
    }
    clamp_viewport(st);
}

/* Scroll as little as brings the cursor box into view (centred if it was far off). */
static void reveal_cursor(graph_state *st)
{
    const gl_drawing *d = shown_drawing(st);
    if (!d || st->cursor < 0)
        return;
    const gl_cell_rect *r = &d->boxes[st->cursor];
    bool off = r->x + r->w <= st->vx || r->x >= st->vx + st->cols ||
               r->y + r->h <= st->vy || r->y >= st->vy + st->rows;
    if (off) {
        centre_on_cursor(st);
        return;
    }
    if (r->x < st->vx || r->w > st->cols)
        st->vx = r->x - 1;
    else if (r->x + r->w > st->vx + st->cols)
        st->vx = r->x + r->w + 1 - st->cols;
    if (r->y < st->vy || r->h > st->rows)
        st->vy = r->y - 1;
    else if (r->y + r->h > st->vy + st->rows)
        st->vy = r->y + r->h + 1 - st->rows;
    clamp_viewport(st);
}

/* ---- showing a cached drawing ---- */

static void show_slot(gl_ui *ui, graph_state *st, int slot)
{
    cached *c = &st->cache[slot];
    c->stamp = ++st->clock;
    st->shown = slot;
    st->cursor = box_of_node(c->layout, ui->sel.node_id);
    if (st->cursor < 0 && c->drawing->n_order)
        st->cursor = (long)c->drawing->order[0];
    st->centre = true;
}

/* The selection moved (another view, a step): follow it with the cursor. */
static void follow_selection(gl_ui *ui, graph_state *st)
{
    const cached *c = &st->cache[st->shown];
    long box = box_of_node(c->layout, ui->sel.node_id);
    if (box >= 0 && box != st->cursor) {
        st->cursor = box;
        if (st->rows)
            reveal_cursor(st);
        else
            st->centre = true;
    }
}

static int free_slot(graph_state *st)
{
    int slot = -1;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (!st->cache[i].used)
            return i;
        if (i != st->shown && (slot < 0 || st->cache[i].stamp < st->cache[slot].stamp))
            slot = i;
    }
    cached_free(&st->cache[slot]);
    return slot;
}

/* ---- layout jobs ---- */

typedef struct layout_job {
    layout_key key;
    const gl_graph *graph; /* kept alive by the ui while a job runs */
    const gl_diff *diff;
    char *focus;           /* node name (owned), NULL: none */
    gl_layout *layout;
    gl_drawing *drawing;
    gl_render_info info;
    double ms;
    gl_status st;
    char error[256];
} layout_job;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void layout_run(void *arg, gl_job *job)
{
    layout_job *j = arg;
    double start = now_ms();
    gl_job_progress(job, "laying out the graph");
    gl_render_opts o = {.diff = j->diff, .max_nodes = GL_GRAPH_VIEW_MAX_BOXES,
                        .focus = j->focus, .radius = j->key.radius, .fold_constants = true};
    j->st = gl_render_layout(j->graph, &o, &j->layout, &j->info);
    if (j->st == GL_OK) {
        gl_job_progress(job, "drawing the graph (%zu boxes)", j->layout->n_nodes);
        j->st = gl_drawing_build(j->layout, NULL, &j->drawing);
    }
    if (j->st != GL_OK)
        snprintf(j->error, sizeof(j->error), "%s", gl_error_message());
    j->ms = now_ms() - start;
}

static void layout_discard(void *arg)
{
    layout_job *j = arg;
    gl_layout_free(j->layout);
    gl_drawing_free(j->drawing);
    free(j->focus);
    free(j);
}

static void sync_view(gl_ui *ui, graph_state *st);

static unsigned layout_finish(gl_ui *ui, void *arg)
{
    layout_job *j = arg;
    graph_state *st = ui->views ? ui->views[GL_VIEW_GRAPH].state : NULL;
    if (!st) {
        layout_discard(j);
        return GL_REDRAW_NONE;
    }
    if (same_key(st->pending_key, j->key))
        st->pending = false;
    if (j->st != GL_OK) {
        st->failed = true;
        st->failed_key = j->key;
        snprintf(st->error, sizeof(st->error), "%s", j->error);
        layout_discard(j);
        return ui->current == GL_VIEW_GRAPH ? GL_REDRAW_VIEW | GL_REDRAW_STATUS : 0;
    }
    int slot = free_slot(st);
    st->cache[slot] = (cached){.used = true, .key = j->key, .reduced = j->info.reduced,
                               .layout = j->layout, .drawing = j->drawing, .ms = j->ms};
    snprintf(st->cache[slot].note, sizeof(st->cache[slot].note), "%s", j->info.note);
    j->layout = NULL;
    j->drawing = NULL;
    layout_discard(j);
    st->error[0] = '\0';
    sync_view(ui, st);
    return ui->current == GL_VIEW_GRAPH ? GL_REDRAW_VIEW | GL_REDRAW_STATUS : GL_REDRAW_NONE;
}

static const gl_job_spec layout_spec = {.what = "graph layout",
                                        .run = layout_run,
                                        .finish = layout_finish,
                                        .discard = layout_discard};

static void start_layout(gl_ui *ui, graph_state *st, layout_key want)
{
    if (ui->job) /* the worker is busy: asked again when it is done (it redraws) */
        return;
    const gl_node *focus = gl_graph_index_node(&ui->index, want.focus);
    layout_job *j = gl_xcalloc(1, sizeof(*j));
    *j = (layout_job){.key = want, .graph = want.graph, .diff = ui->diff,
                      .focus = focus ? gl_xstrdup(focus->name) : NULL};
    st->pending = true;
    st->pending_key = want;
    if (!gl_ui_start_job(ui, &layout_spec, j)) {
        st->pending = false;
        layout_discard(j);
    }
}

/* Show a cached drawing that serves what is wanted, or ask for a layout. */
static void sync_view(gl_ui *ui, graph_state *st)
{
    if (!ui->pipeline || !gl_ui_graph(ui))
        return;
    if (st->pending && gl_ui_job_spec(ui) != &layout_spec && !ui->sync_jobs) {
        st->pending = false; /* cancelled (Ctrl-C): not asked again until something changes */
        st->failed = true;
        st->failed_key = st->pending_key;
        snprintf(st->error, sizeof(st->error), "layout cancelled");
    }
    layout_key want = wanted(ui, st);
    if (st->shown >= 0 && serves(&st->cache[st->shown], want)) {
        follow_selection(ui, st);
        return;
    }
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (serves(&st->cache[i], want)) {
            show_slot(ui, st, i);
            return;
        }
    bool asked = st->pending && same_key(st->pending_key, want);
    bool gave_up = st->failed && same_key(st->failed_key, want);
    if (!asked && !gave_up && !st->pending)
        start_layout(ui, st, want);
}

/* ---- the vtable ---- */

static graph_state *state_of(gl_view *v)
{
    if (!v->state) {
        graph_state *st = gl_xcalloc(1, sizeof(*st));
        st->shown = -1;
        st->cursor = -1;
        st->radius = DEFAULT_RADIUS;
        v->state = st;
    }
    return v->state;
}

static void graph_open(gl_ui *ui, gl_view *v)
{
    graph_state *st = state_of(v);
    st->failed = false; /* a new graph: failures of the last one do not count */
    sync_view(ui, st);
}

static void graph_close(gl_ui *ui, gl_view *v)
{
    graph_state *st = v->state;
    for (int i = 0; st && i < CACHE_SLOTS; i++)
        cached_free(&st->cache[i]);
    free(st);
    v->state = NULL;
}

static void header_text(const gl_ui *ui, const graph_state *st, char *buf, size_t len)
{
    char label[96] = "";
    if (ui->pipeline)
        gl_snapshot_label(ui->pipeline, ui->step, label, sizeof(label));
    const cached *c = st->shown >= 0 ? &st->cache[st->shown] : NULL;
    int n = snprintf(buf, len, "graph %s", label);
    if (c && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ": %zu boxes%s%s%s, laid out in %.0f ms",
                      c->layout->n_nodes, c->note[0] ? " (" : "", c->note,
                      c->note[0] ? ")" : "", c->ms);
    if (c && c->reduced && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "; radius %d (< >)", st->radius);
    if (c && !serves(c, wanted(ui, st)) && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "; still the last drawing");
    if (st->pending && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "; laying out…");
    else if (st->error[0] && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; %s", st->error);
}

static const gl_ui_role role_of_style[GL_STYLE_COUNT] = {
    [GL_STYLE_NONE] = GL_ROLE_NORMAL,     [GL_STYLE_EDGE] = GL_ROLE_NORMAL,
    [GL_STYLE_LABEL] = GL_ROLE_DIM,       [GL_STYLE_NODE] = GL_ROLE_NORMAL,
    [GL_STYLE_IO] = GL_ROLE_HEADER,       [GL_STYLE_CONSTANT] = GL_ROLE_DIM,
    [GL_STYLE_OTHER] = GL_ROLE_DIM,       [GL_STYLE_ADDED] = GL_ROLE_ADDED,
    [GL_STYLE_MODIFIED] = GL_ROLE_CHANGED, [GL_STYLE_REPLACED] = GL_ROLE_LINK,
};

static void graph_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    graph_state *st = state_of(v);
    sync_view(ui, st);
    char header[512];
    header_text(ui, st, header, sizeof(header));
    int used = gl_ui_put(top, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), header);
    gl_ui_fill(top, left + used, width - used, gl_ui_attr(ui, GL_ROLE_HEADER));
    st->rows = height - 1;
    st->cols = width;
    v->height = st->rows;
    const gl_drawing *d = shown_drawing(st);
    if (!d) {
        for (int r = 1; r < height; r++)
            gl_ui_fill(top + r, left, width, gl_ui_attr(ui, GL_ROLE_NORMAL));
        return;
    }
    if (st->centre) {
        centre_on_cursor(st);
        st->centre = false;
    }
    clamp_viewport(st);
    gl_paint_style style = {.cursor_attr = gl_ui_attr(ui, GL_ROLE_SELECTED),
                            .cursor_box = (int32_t)st->cursor, .utf8 = ui->utf8};
    for (int s = 0; s < GL_STYLE_COUNT; s++)
        style.attr[s] = gl_ui_attr(ui, role_of_style[s]);
    gl_canvas_paint(d->canvas, st->vx, st->vy, top + 1, left, st->rows, st->cols, &style);
}

/* Put the cursor on box `box` and make its node the ui's selection. */
static unsigned move_cursor(gl_ui *ui, graph_state *st, long box)
{
    const cached *c = &st->cache[st->shown];
    if (box < 0 || (size_t)box >= c->layout->n_nodes)
        return GL_REDRAW_NONE;
    st->cursor = box;
    if (c->layout->nodes[box].kind == GL_BOX_NODE)
        gl_ui_select_node(ui, c->layout->nodes[box].id);
    reveal_cursor(st);
    return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

/* Position of the cursor in reading order, or -1. */
static long cursor_rank(const graph_state *st)
{
    const gl_drawing *d = shown_drawing(st);
    for (size_t i = 0; d && i < d->n_order; i++)
        if ((long)d->order[i] == st->cursor)
            return (long)i;
    return -1;
}

static unsigned step_cursor(gl_ui *ui, graph_state *st, int dir)
{
    const gl_drawing *d = shown_drawing(st);
    if (!d->n_order)
        return GL_REDRAW_NONE;
    long n = (long)d->n_order, at = cursor_rank(st);
    at = at < 0 ? (dir > 0 ? 0 : n - 1) : ((at + dir) % n + n) % n;
    return move_cursor(ui, st, (long)d->order[at]);
}

static unsigned pan(graph_state *st, int dx, int dy)
{
    st->vx += dx;
    st->vy += dy;
    clamp_viewport(st);
    return GL_REDRAW_VIEW;
}

static unsigned set_radius(gl_ui *ui, graph_state *st, int radius)
{
    if (radius < 1 || radius > MAX_RADIUS) {
        gl_ui_set_status(ui, "the neighbourhood radius stays within 1-%d", MAX_RADIUS);
        return GL_REDRAW_STATUS;
    }
    st->radius = radius;
    const cached *c = st->shown >= 0 ? &st->cache[st->shown] : NULL;
    if (c && !c->reduced)
        gl_ui_set_status(ui, "radius %d: the whole graph is drawn already (radius counts "
                             "for graphs over %d boxes)", radius, GL_GRAPH_VIEW_MAX_BOXES);
    else
        gl_ui_set_status(ui, "neighbourhood radius %d", radius);
    sync_view(ui, st);
    return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

static unsigned open_cursor(gl_ui *ui, graph_state *st)
{
    const cached *c = &st->cache[st->shown];
    const gl_layout_node *n = st->cursor >= 0 ? &c->layout->nodes[st->cursor] : NULL;
    if (!n || n->kind != GL_BOX_NODE) {
        gl_ui_set_status(ui, "not a node: J/K move to one");
        return GL_REDRAW_STATUS;
    }
    return gl_ui_open_detail(ui, n->id, -1);
}

static unsigned graph_request(gl_ui *ui, gl_view *v, gl_request r)
{
    graph_state *st = state_of(v);
    sync_view(ui, st);
    if (!shown_drawing(st))
        return r == GL_REQ_RADIUS_MORE || r == GL_REQ_RADIUS_LESS
                   ? set_radius(ui, st, st->radius + (r == GL_REQ_RADIUS_MORE ? 1 : -1))
                   : GL_REDRAW_NONE;
    const gl_drawing *d = shown_drawing(st);
    int page = st->rows > 3 ? st->rows - 2 : 1;
    switch (r) {
    case GL_REQ_MOVE_DOWN: return pan(st, 0, PAN_ROWS);
    case GL_REQ_MOVE_UP: return pan(st, 0, -PAN_ROWS);
    case GL_REQ_PAN_LEFT: return pan(st, -PAN_COLS, 0);
    case GL_REQ_PAN_RIGHT: return pan(st, PAN_COLS, 0);
    case GL_REQ_PAGE_DOWN: return pan(st, 0, page);
    case GL_REQ_PAGE_UP: return pan(st, 0, -page);
    case GL_REQ_TOP:
        return d->n_order ? move_cursor(ui, st, (long)d->order[0]) : GL_REDRAW_NONE;
    case GL_REQ_BOTTOM:
        return d->n_order ? move_cursor(ui, st, (long)d->order[d->n_order - 1]) : GL_REDRAW_NONE;
    case GL_REQ_BOX_NEXT: return step_cursor(ui, st, 1);
    case GL_REQ_BOX_PREV: return step_cursor(ui, st, -1);
    case GL_REQ_ENTER: return open_cursor(ui, st);
    case GL_REQ_RADIUS_MORE: return set_radius(ui, st, st->radius + 1);
    case GL_REQ_RADIUS_LESS: return set_radius(ui, st, st->radius - 1);
    default: return GL_REDRAW_NONE;
    }
}

static bool node_matches(int row, void *arg)
{
    const gl_ui *ui = arg;
    return gl_ui_node_matches(ui->index.rows[row], ui->search);
}

/* n/N and '/': the next node in graph order (as in the node list) matching the search.
 * A match drawn here gets the cursor; one outside the drawn neighbourhood becomes the
 * selection, and a layout around it follows. */
static bool graph_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    graph_state *st = state_of(v);
    if (!ui->index.n_rows)
        return false;
    uint32_t sel = ui->sel.node_id;
    int from = sel < ui->index.n_ids && ui->index.row_of_id[sel] != UINT32_MAX
                   ? (int)ui->index.row_of_id[sel] : 0;
    int row = gl_ui_find_row((int)ui->index.n_rows, from, dir, inclusive, node_matches, ui);
    if (row < 0)
        return false;
    uint32_t id = ui->index.rows[row]->id;
    long box = st->shown >= 0 ? box_of_node(st->cache[st->shown].layout, id) : -1;
    if (box >= 0)
        move_cursor(ui, st, box);
    else {
        gl_ui_select_node(ui, id);
        sync_view(ui, st);
    }
    return true;
}

/* A click on a box puts the cursor there. */
static unsigned graph_click(gl_ui *ui, gl_view *v, int row, int col)
{
    graph_state *st = state_of(v);
    const gl_drawing *d = shown_drawing(st);
    if (!d || row < 1)
        return GL_REDRAW_NONE;
    long box = gl_drawing_box_at(d, st->vx + col, st->vy + row - 1);
    return box >= 0 ? move_cursor(ui, st, box) : GL_REDRAW_NONE;
}

const gl_view_ops gl_view_graph_ops = {
    .name = "graph",
    .open = graph_open,
    .draw = graph_draw,
    .request = graph_request,
    .close = graph_close,
    .find = graph_find,
    .click = graph_click,
};

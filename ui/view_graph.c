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
 *
 * The radius is chosen to fit the screen until < or > sets one: the job lays out radius
 * 2, then grows it while the drawing still fits the viewport (or shrinks it to 1 when 2
 * does not), each layout a small one. Every box is a stop for J/K; Enter on a "... N
 * more" box widens the neighbourhood at that node on that side (render.h's widen);
 * { and } move to the producer / consumer; opened on a decision's nodes (ui->marks, as
 * Enter on a decision leaves them), the neighbourhood is centred on all of them and the
 * viewport on their boxes.
 */
#include "ui/ui.h"

#include "ui/canvas_paint.h"
#include "ui/graph_draw.h"
#include "util/clock.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_RADIUS 0    /* st->radius: the largest that fits the screen */
#define FIRST_RADIUS 2   /* where the search for it starts */
#define MAX_RADIUS 9
#define MAX_RADIUS_COMPACT 24 /* compact boxes: a screen holds many more hops */
#define MAX_WIDEN 64     /* Enter on "... N more" boxes remembered per graph */
#define CACHE_SLOTS 8
#define PAN_ROWS 3
#define PAN_COLS 8
/* Compact boxes are drawn on rails (graph_rails.c), where a box costs one row whatever
 * the edges: a neighbourhood may hold more of them before it is cut, so that a DenseNet's
 * wide Concats do not leave a screen half made of "... 1 more" boxes. Graphviz still
 * orders them: at this size it lays out in about half a second. */
#define MAX_BOXES_COMPACT (4 * GL_GRAPH_VIEW_MAX_BOXES)
#define ONE_LINE_COLS 48 /* a compact box's text: "Conv k=3x3 s=2 p=1 · conv1/Conv" */

typedef struct layout_key {
    const gl_graph *graph; /* with step and budget: which graph (snapshots live as long
                            * as the pipeline, so the pointer does not come back) */
    size_t step;
    int64_t budget;
    int radius;            /* AUTO_RADIUS: chosen by the job */
    uint32_t focus;        /* node id the neighbourhood is centred on; UINT32_MAX: none */
    unsigned extra;        /* generation of the widen list and the decision's nodes */
    bool one_line;         /* compact boxes (z): one line per node */
} layout_key;

typedef struct cached {
    bool used;
    layout_key key;
    bool reduced;          /* a neighbourhood or groups: the focus and radius matter */
    gl_layout *layout;
    gl_drawing *drawing;
    int radius;            /* the radius laid out (the one chosen when auto) */
    char note[256];
    double ms;             /* layout and drawing time */
    unsigned stamp;        /* last use, for eviction */
} cached;

typedef struct graph_state {
    cached cache[CACHE_SLOTS];
    unsigned clock;
    int shown;             /* slot on screen; -1: none yet */
    int radius;            /* AUTO_RADIUS or what < > set */
    bool one_line;         /* z: compact boxes, one line per node (op, key attributes,
                            * the end of the name), so a screen shows many more */
    gl_render_widen widen[MAX_WIDEN]; /* names owned */
    size_t n_widen;
    uint32_t *also;        /* the decision's nodes the neighbourhood centres on (owned) */
    size_t n_also;
    unsigned extra;        /* bumped when widen or also change */
    uint32_t anchor;       /* a widened neighbourhood stays centred here while the
                            * selection is drawn in it; UINT32_MAX: none */
    const gl_graph *extra_graph; /* the graph they were made on */
    int vx, vy;            /* canvas cell at the top-left of the viewport */
    long cursor;           /* box of the shown drawing; -1: none */
    uint32_t cursor_sel;   /* the selection when the cursor was placed: the cursor may
                            * rest on a box that is no node (an input, "... N more") and
                            * follows the selection only once that changes */
    bool centre;           /* centre on the cursor at the next draw (its size known) */
    int rows, cols;        /* viewport at the last draw */
    bool pending;          /* our layout job runs */
    layout_key pending_key;
    bool failed;           /* `failed_key` failed or was cancelled: not retried */
    layout_key failed_key;
    char error[256];
    char after[256];       /* status to show again once the pending layout arrives (the
                            * end of a job clears the status line) */
} graph_state;

/* ---- what is wanted, what is cached ---- */

static long box_of_node(const gl_layout *l, uint32_t id);

/* Centred on the selection, or on the anchor while the selection is drawn around it. */
static layout_key wanted(const gl_ui *ui, const graph_state *st)
{
    uint32_t focus = ui->sel.node_id;
    if (st->anchor != UINT32_MAX && st->shown >= 0 &&
        box_of_node(st->cache[st->shown].layout, focus) >= 0)
        focus = st->anchor;
    return (layout_key){gl_ui_graph(ui), ui->step, ui->budget, st->radius, focus, st->extra,
                        st->one_line};
}

static bool same_key(layout_key a, layout_key b)
{
    return a.graph == b.graph && a.step == b.step && a.budget == b.budget &&
           a.radius == b.radius && a.focus == b.focus && a.extra == b.extra &&
           a.one_line == b.one_line;
}

static void widen_clear(graph_state *st)
{
    for (size_t i = 0; i < st->n_widen; i++)
        free((char *)st->widen[i].node);
    st->n_widen = 0;
}

/* The decision's nodes (ui->marks) once the selection is one of them, kept while the
 * selection moves inside that drawing (no new layout for a cursor move); widening made
 * on another graph is dropped. Bumps st->extra when either changes. */
static void update_extra(const gl_ui *ui, graph_state *st)
{
    if (st->extra_graph != gl_ui_graph(ui)) {
        if (st->n_widen)
            st->extra++;
        widen_clear(st);
        st->anchor = UINT32_MAX;
        st->extra_graph = gl_ui_graph(ui);
    }
    bool on_marks = false;
    for (size_t i = 0; i < ui->n_marks && !on_marks; i++)
        on_marks = ui->marks[i] == ui->sel.node_id;
    size_t n = on_marks && ui->n_marks > 1 ? ui->n_marks : 0;
    if (!n && st->n_also && st->shown >= 0 &&
        box_of_node(st->cache[st->shown].layout, ui->sel.node_id) >= 0)
        return; /* moving about the decision's drawing */
    if (n == st->n_also && (!n || memcmp(st->also, ui->marks, n * sizeof(*st->also)) == 0))
        return;
    free(st->also);
    st->also = n ? gl_xmalloc(n * sizeof(*st->also)) : NULL;
    if (n)
        memcpy(st->also, ui->marks, n * sizeof(*st->also));
    st->n_also = n;
    st->extra++;
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
        c->key.budget != want.budget || c->key.one_line != want.one_line)
        return false;
    if (!c->reduced)
        return true;
    return c->key.radius == want.radius && c->key.extra == want.extra &&
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

/* acc grown to cover r (an empty acc, w == 0, becomes r). */
static void rect_grow(gl_cell_rect *acc, const gl_cell_rect *r)
{
    if (!acc->w) {
        *acc = *r;
        return;
    }
    int x1 = acc->x + acc->w > r->x + r->w ? acc->x + acc->w : r->x + r->w;
    int y1 = acc->y + acc->h > r->y + r->h ? acc->y + acc->h : r->y + r->h;
    acc->x = r->x < acc->x ? r->x : acc->x;
    acc->y = r->y < acc->y ? r->y : acc->y;
    acc->w = x1 - acc->x;
    acc->h = y1 - acc->y;
}

/* The cells around the boxes of the decision's nodes, when there are such boxes and the
 * cursor is one of them. */
static bool also_bounds(const graph_state *st, gl_cell_rect *out)
{
    const cached *c = &st->cache[st->shown];
    if (!st->n_also || st->cursor < 0 || c->layout->nodes[st->cursor].kind != GL_BOX_NODE)
        return false;
    *out = (gl_cell_rect){0};
    bool cursor_in = false;
    for (size_t k = 0; k < st->n_also; k++) {
        long b = box_of_node(c->layout, st->also[k]);
        if (b >= 0)
            rect_grow(out, &c->drawing->boxes[b]);
        cursor_in |= b >= 0 && b == st->cursor;
    }
    return cursor_in;
}

/* Centre on the cursor box, or on the decision's boxes when they fit the viewport. */
static void centre_on_cursor(graph_state *st)
{
    const gl_drawing *d = shown_drawing(st);
    gl_cell_rect all;
    if (d && st->cursor >= 0) {
        const gl_cell_rect *r = &d->boxes[st->cursor];
        if (also_bounds(st, &all) && all.w <= st->cols && all.h <= st->rows)
            r = &all;
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
    for (size_t i = 0; st->cursor < 0 && i < c->drawing->n_order; i++)
        if (c->layout->nodes[c->drawing->order[i]].kind == GL_BOX_NODE)
            st->cursor = (long)c->drawing->order[i];
    st->cursor_sel = ui->sel.node_id;
    st->centre = true;
}

/* The selection moved (another view, a step): follow it with the cursor. */
static void follow_selection(gl_ui *ui, graph_state *st)
{
    const cached *c = &st->cache[st->shown];
    long box = box_of_node(c->layout, ui->sel.node_id);
    if (box >= 0 && box != st->cursor && ui->sel.node_id != st->cursor_sel) {
        st->cursor = box;
        st->cursor_sel = ui->sel.node_id;
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
    char **also;           /* node names (owned) */
    size_t n_also;
    gl_render_widen *widen; /* names owned */
    size_t n_widen;
    int rows, cols;        /* the viewport an automatic radius must fit */
    gl_layout *layout;
    gl_drawing *drawing;
    gl_render_info info;
    int radius;            /* laid out */
    double ms;
    gl_status st;
    char error[256];
} layout_job;

typedef struct attempt {
    gl_layout *layout;
    gl_drawing *drawing;
    gl_render_info info;
} attempt;

static void attempt_free(attempt *a)
{
    gl_layout_free(a->layout);
    gl_drawing_free(a->drawing);
    *a = (attempt){0};
}

static gl_status lay_out(layout_job *j, gl_job *job, int radius, attempt *a)
{
    gl_job_progress(job, "laying out the graph (radius %d)", radius);
    gl_render_opts o = {.diff = j->diff,
                        .max_nodes = j->key.one_line ? MAX_BOXES_COMPACT : GL_GRAPH_VIEW_MAX_BOXES,
                        .focus = j->focus, .radius = radius, .fold_constants = true,
                        .also = (const char *const *)j->also, .n_also = j->n_also,
                        .widen = j->widen, .n_widen = j->n_widen, .shared_once = true,
                        .xlabels = true, .one_line = j->key.one_line};
    gl_status st = gl_render_layout(j->graph, &o, &a->layout, &a->info);
    /* compact boxes: one line each, wide enough for an op, its attributes and a short
     * name; edge labels (shapes) would take the room the boxes saved */
    gl_draw_opts d = {.compact = true};
    if (j->key.one_line)
        d = (gl_draw_opts){.compact = true, .flat = true, .label_cols = ONE_LINE_COLS,
                           .no_edge_labels = true};
    if (st == GL_OK)
        st = j->key.one_line ? gl_drawing_build_rails(a->layout, &d, &a->drawing)
                             : gl_drawing_build(a->layout, &d, &a->drawing);
    return st;
}

/* The boxes fit the viewport: "... N more" boxes and the blank margin may scroll off
 * (with them counted, a chain on a 45-row screen shows 3 nodes). */
static bool fits(const layout_job *j, const attempt *a)
{
    gl_cell_rect all = {0};
    for (size_t i = 0; i < a->drawing->n_boxes; i++)
        if (a->layout->nodes[i].kind != GL_BOX_STUB)
            rect_grow(&all, &a->drawing->boxes[i]);
    return all.w <= j->cols && all.h <= j->rows;
}

/* Node boxes drawn: a larger radius that adds none is no better. */
static size_t node_boxes(const gl_layout *l)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n_nodes; i++)
        n += l->nodes[i].kind == GL_BOX_NODE;
    return n;
}

static int max_radius(bool one_line) { return one_line ? MAX_RADIUS_COMPACT : MAX_RADIUS; }

/* The first layout of an automatic radius, at FIRST_RADIUS; true when a search should
 * follow (it worked and drew a neighbourhood: on a whole graph the radius does not
 * matter). */
static bool lay_out_first(layout_job *j, gl_job *job, attempt *best, gl_status *st)
{
    *st = lay_out(j, job, FIRST_RADIUS, best);
    j->radius = FIRST_RADIUS;
    return *st == GL_OK && best->info.reduced;
}

/* A better attempt (laid out at radius r) replaces the best so far. */
static void keep(layout_job *j, attempt *best, attempt *better, int r)
{
    attempt_free(best);
    *best = *better;
    j->radius = r;
}

/* Node boxes wholly on a screen of the job's viewport centred on the focus's box, as
 * the view will show it (clamped to the drawing). */
static size_t visible_node_boxes(const layout_job *j, const attempt *a)
{
    const gl_drawing *d = a->drawing;
    long focus = box_of_node(a->layout, j->key.focus);
    const gl_cell_rect *f = focus >= 0 ? &d->boxes[focus] : NULL;
    int vx = f ? f->x + f->w / 2 - j->cols / 2 : 0, vy = f ? f->y + f->h / 2 - j->rows / 2 : 0;
    vx = vx > d->canvas->width - j->cols ? d->canvas->width - j->cols : vx;
    vy = vy > d->canvas->height - j->rows ? d->canvas->height - j->rows : vy;
    vx = vx < 0 ? 0 : vx;
    vy = vy < 0 ? 0 : vy;
    size_t n = 0;
    for (size_t i = 0; i < d->n_boxes; i++) {
        const gl_cell_rect *r = &d->boxes[i];
        n += a->layout->nodes[i].kind == GL_BOX_NODE && r->x >= vx && r->y >= vy &&
             r->x + r->w <= vx + j->cols && r->y + r->h <= vy + j->rows;
    }
    return n;
}

/* Compact boxes: the radius that puts the most node boxes on the screen, the drawing
 * may be wider or taller than it (h L and j k scroll): one-line boxes are small, and a
 * wide fan-out (a DenseNet's concatenations) should not keep the neighbourhood at two
 * hops. Grows while that number grows. */
static gl_status lay_out_most_visible(layout_job *j, gl_job *job, attempt *best)
{
    gl_status st;
    if (!lay_out_first(j, job, best, &st))
        return st;
    size_t shown = visible_node_boxes(j, best);
    for (int r = FIRST_RADIUS + 1; r <= MAX_RADIUS_COMPACT && !gl_job_cancelled(job); r++) {
        attempt next = {0};
        size_t more = lay_out(j, job, r, &next) == GL_OK ? visible_node_boxes(j, &next) : 0;
        if (more <= shown) {
            attempt_free(&next);
            break;
        }
        keep(j, best, &next, r);
        shown = more;
    }
    return GL_OK;
}

/* The largest radius whose drawing fits the viewport: FIRST_RADIUS, then up while the
 * drawing fits and grows, or down to 1 when it does not fit. A whole-graph drawing ends
 * the search (the radius does not matter there). */
static gl_status lay_out_auto(layout_job *j, gl_job *job, attempt *best)
{
    gl_status st;
    if (!lay_out_first(j, job, best, &st))
        return st;
    int r = FIRST_RADIUS;
    int dir = fits(j, best) ? 1 : -1;
    int most = max_radius(j->key.one_line);
    for (r += dir; r >= 1 && r <= most && !gl_job_cancelled(job); r += dir) {
        attempt next = {0};
        if (lay_out(j, job, r, &next) != GL_OK) {
            attempt_free(&next);
            break; /* the last one that worked stays */
        }
        bool better = dir < 0 || (fits(j, &next) && node_boxes(next.layout) >
                                                        node_boxes(best->layout));
        if (better)
            keep(j, best, &next, r);
        else
            attempt_free(&next);
        if (!better || (dir < 0 && fits(j, best)))
            break;
    }
    return GL_OK;
}

static void layout_run(void *arg, gl_job *job)
{
    layout_job *j = arg;
    double start = gl_now_ms();
    attempt a = {0};
    if (j->key.radius == AUTO_RADIUS)
        j->st = j->key.one_line ? lay_out_most_visible(j, job, &a) : lay_out_auto(j, job, &a);
    else {
        j->radius = j->key.radius;
        j->st = lay_out(j, job, j->radius, &a);
    }
    j->layout = a.layout;
    j->drawing = a.drawing;
    j->info = a.info;
    if (j->st != GL_OK)
        snprintf(j->error, sizeof(j->error), "%s", gl_error_message());
    j->ms = gl_now_ms() - start;
}

static void layout_discard(void *arg)
{
    layout_job *j = arg;
    gl_layout_free(j->layout);
    gl_drawing_free(j->drawing);
    free(j->focus);
    for (size_t i = 0; i < j->n_also; i++)
        free(j->also[i]);
    free(j->also);
    for (size_t i = 0; i < j->n_widen; i++)
        free((char *)j->widen[i].node);
    free(j->widen);
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
                               .layout = j->layout, .drawing = j->drawing,
                               .radius = j->radius, .ms = j->ms};
    snprintf(st->cache[slot].note, sizeof(st->cache[slot].note), "%s", j->info.note);
    if (st->after[0] && !st->pending)
        gl_ui_set_status(ui, "%s", st->after);
    st->after[0] = '\0';
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
                      .focus = focus ? gl_xstrdup(focus->name) : NULL,
                      /* before the first draw: the screen less the bar, header, status */
                      .rows = st->rows ? st->rows : LINES - 3, .cols = st->cols ? st->cols : COLS};
    j->also = gl_xcalloc(st->n_also + 1, sizeof(*j->also));
    for (size_t i = 0; i < st->n_also; i++) {
        const gl_node *n = gl_graph_index_node(&ui->index, st->also[i]);
        if (n)
            j->also[j->n_also++] = gl_xstrdup(n->name);
    }
    j->widen = gl_xcalloc(st->n_widen + 1, sizeof(*j->widen));
    for (size_t i = 0; i < st->n_widen; i++) {
        j->widen[i] = st->widen[i];
        j->widen[i].node = gl_xstrdup(st->widen[i].node);
    }
    j->n_widen = st->n_widen;
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
    update_extra(ui, st);
    if (st->anchor != UINT32_MAX &&
        (st->shown < 0 || box_of_node(st->cache[st->shown].layout, ui->sel.node_id) < 0))
        st->anchor = UINT32_MAX; /* the selection left the widened drawing */
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
        st->radius = AUTO_RADIUS;
        st->anchor = UINT32_MAX;
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
    if (st) {
        widen_clear(st);
        free(st->also);
    }
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
        n += snprintf(buf + n, len - (size_t)n, ": %zu %sboxes", c->layout->n_nodes,
                      c->key.one_line ? "compact " : "");
    /* the radius before the note: a long node name in the note is what gets cut */
    if (c && c->reduced && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ", radius %d (%s< >)%s", c->radius,
                      c->key.radius != AUTO_RADIUS ? ""
                      : c->key.one_line           ? "the most boxes on the screen; "
                                                  : "fits the screen; ",
                      st->n_widen ? " widened" : "");
    if (c && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "%s%s%s, laid out in %.0f ms",
                      c->note[0] ? " (" : "", c->note, c->note[0] ? ")" : "", c->ms);
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
    st->cursor_sel = ui->sel.node_id;
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

/* < and > from an automatic radius start from the one it chose. */
static int shown_radius(const graph_state *st)
{
    if (st->radius != AUTO_RADIUS)
        return st->radius;
    return st->shown >= 0 && st->cache[st->shown].radius ? st->cache[st->shown].radius
                                                          : FIRST_RADIUS;
}

static unsigned set_radius(gl_ui *ui, graph_state *st, int radius)
{
    if (radius < 1 || radius > max_radius(st->one_line)) {
        gl_ui_set_status(ui, "the neighbourhood radius stays within 1-%d",
                         max_radius(st->one_line));
        return GL_REDRAW_STATUS;
    }
    st->radius = radius;
    st->anchor = UINT32_MAX; /* centred on the selection again */
    const cached *c = st->shown >= 0 ? &st->cache[st->shown] : NULL;
    if (c && !c->reduced)
        gl_ui_set_status(ui, "radius %d: the whole graph is drawn already (radius counts "
                             "for graphs over %d boxes)", radius, GL_GRAPH_VIEW_MAX_BOXES);
    else
        gl_ui_set_status(ui, "neighbourhood radius %d", radius);
    sync_view(ui, st);
    return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

/* The first (dir 1) or last (dir -1) node box in reading order, or -1. */
static long end_node_box(const graph_state *st, int dir)
{
    const cached *c = &st->cache[st->shown];
    size_t n = c->drawing->n_order;
    for (size_t k = 0; k < n; k++) {
        size_t box = c->drawing->order[dir > 0 ? k : n - 1 - k];
        if (c->layout->nodes[box].kind == GL_BOX_NODE)
            return (long)box;
    }
    return -1;
}

/* The node box a stub hangs from, and whether the stub stands for its producers. */
static long stub_owner(const gl_layout *l, size_t stub, bool *producers)
{
    for (size_t i = 0; i < l->n_edges; i++) {
        const gl_layout_edge *e = &l->edges[i];
        if (e->from == stub && l->nodes[e->to].kind == GL_BOX_NODE) {
            *producers = true;
            return (long)e->to;
        }
        if (e->to == stub && l->nodes[e->from].kind == GL_BOX_NODE) {
            *producers = false;
            return (long)e->from;
        }
    }
    return -1;
}

/* A layout for what changed, the status line kept for when it arrives. */
static unsigned relayout(gl_ui *ui, graph_state *st)
{
    sync_view(ui, st);
    if (st->pending)
        snprintf(st->after, sizeof(st->after), "%s", ui->status);
    return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

/* Enter on "... N more": the neighbourhood widened at its node, on its side. */
static unsigned widen_at(gl_ui *ui, graph_state *st, size_t stub)
{
    const cached *c = &st->cache[st->shown];
    bool producers = false;
    long owner = stub_owner(c->layout, stub, &producers);
    const gl_node *n = owner >= 0 ? gl_graph_index_node(&ui->index, c->layout->nodes[owner].id)
                                  : NULL;
    if (!n) {
        gl_ui_set_status(ui, "nothing more to draw there");
        return GL_REDRAW_STATUS;
    }
    if (st->n_widen == MAX_WIDEN) {
        gl_ui_set_status(ui, "the neighbourhood is widened at %d places already: > draws "
                             "more at once", MAX_WIDEN);
        return GL_REDRAW_STATUS;
    }
    st->widen[st->n_widen++] = (gl_render_widen){gl_xstrdup(n->name), producers, !producers};
    st->extra++;
    /* the rest stays as drawn: the radius it had, the same focus */
    st->radius = c->radius ? c->radius : st->radius;
    st->anchor = c->key.focus;
    gl_ui_set_status(ui, "drawing the %s of '%s' left out", producers ? "producers" : "consumers",
                     n->name);
    return relayout(ui, st);
}

static unsigned open_cursor(gl_ui *ui, graph_state *st)
{
    const cached *c = &st->cache[st->shown];
    const gl_layout_node *n = st->cursor >= 0 ? &c->layout->nodes[st->cursor] : NULL;
    if (n && n->kind == GL_BOX_STUB)
        return widen_at(ui, st, (size_t)st->cursor);
    if (!n || n->kind != GL_BOX_NODE) {
        char text[256];
        snprintf(text, sizeof(text), "%s", n && n->label ? n->label : "");
        for (char *p = text; *p; p++)
            *p = *p == '\n' ? ' ' : *p;
        gl_ui_set_status(ui, "%s%s(not a node: Enter opens nodes and widens \xE2\x80\xA6 N more)",
                         text, text[0] ? " " : "");
        return GL_REDRAW_STATUS;
    }
    return gl_ui_open_detail(ui, n->id, -1);
}

/* { and }: to the node producing the selection's first input that has one, or to the
 * first node reading one of its outputs; drawn here, the cursor moves, else the
 * selection does and a neighbourhood around it follows. */
static unsigned hop(gl_ui *ui, graph_state *st, bool down)
{
    const gl_node *n = gl_graph_index_node(&ui->index, ui->sel.node_id), *to = NULL;
    size_t others = 0;
    if (n && !down)
        for (size_t i = 0; i < n->n_inputs; i++) {
            const gl_node *p = n->inputs[i] ? n->inputs[i]->producer : NULL;
            if (p && p->graph == n->graph && !to)
                to = p;
            else if (p && p->graph == n->graph && p != to)
                others++;
        }
    for (size_t k = 0; n && down && k < n->n_outputs; k++)
        for (size_t i = 0; n->outputs[k] && i < n->outputs[k]->n_uses; i++) {
            const gl_node *c = n->outputs[k]->uses[i].node;
            if (c && c->graph == n->graph && !to)
                to = c;
            else if (c && c->graph == n->graph && c != to)
                others++;
        }
    if (!to) {
        gl_ui_set_status(ui, "%s", !n ? "no node selected"
                                      : down ? "no node reads this node's outputs"
                                             : "no node produces this node's inputs");
        return GL_REDRAW_STATUS;
    }
    if (others)
        gl_ui_set_status(ui, "%s '%s' (of %zu)", down ? "consumer" : "producer", to->name,
                         others + 1);
    else
        gl_ui_set_status(ui, "%s '%s'", down ? "consumer" : "producer", to->name);
    long box = box_of_node(st->cache[st->shown].layout, to->id);
    if (box >= 0)
        return move_cursor(ui, st, box) | GL_REDRAW_STATUS;
    gl_ui_select_node(ui, to->id);
    return relayout(ui, st);
}

/* z: compact boxes (one line per node) or full ones; the other kind is laid out once and
 * cached like any layout, so switching back is immediate. */
static unsigned toggle_one_line(gl_ui *ui, graph_state *st)
{
    st->one_line = !st->one_line;
    gl_ui_set_status(ui, "%s", st->one_line ? "compact boxes: one line per node (z: full boxes)"
                                            : "full boxes: op, name, shapes (z: compact)");
    return relayout(ui, st);
}

static unsigned graph_request(gl_ui *ui, gl_view *v, gl_request r)
{
    graph_state *st = state_of(v);
    sync_view(ui, st);
    if (!shown_drawing(st))
        return r == GL_REQ_RADIUS_MORE || r == GL_REQ_RADIUS_LESS
                   ? set_radius(ui, st, shown_radius(st) + (r == GL_REQ_RADIUS_MORE ? 1 : -1))
                   : GL_REDRAW_NONE;
    int page = st->rows > 3 ? st->rows - 2 : 1;
    switch (r) {
    case GL_REQ_MOVE_DOWN: return pan(st, 0, PAN_ROWS);
    case GL_REQ_MOVE_UP: return pan(st, 0, -PAN_ROWS);
    case GL_REQ_PAN_LEFT: return pan(st, -PAN_COLS, 0);
    case GL_REQ_PAN_RIGHT: return pan(st, PAN_COLS, 0);
    case GL_REQ_PAGE_DOWN: return pan(st, 0, page);
    case GL_REQ_PAGE_UP: return pan(st, 0, -page);
    case GL_REQ_TOP: return move_cursor(ui, st, end_node_box(st, 1));
    case GL_REQ_BOTTOM: return move_cursor(ui, st, end_node_box(st, -1));
    case GL_REQ_BOX_NEXT: return step_cursor(ui, st, 1);
    case GL_REQ_BOX_PREV: return step_cursor(ui, st, -1);
    case GL_REQ_ENTER: return open_cursor(ui, st);
    case GL_REQ_RADIUS_MORE: return set_radius(ui, st, shown_radius(st) + 1);
    case GL_REQ_RADIUS_LESS: return set_radius(ui, st, shown_radius(st) - 1);
    case GL_REQ_PRODUCER: return hop(ui, st, false);
    case GL_REQ_CONSUMER: return hop(ui, st, true);
    case GL_REQ_COMPACT_BOXES: return toggle_one_line(ui, st);
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
    gl_ui_note_match(v, (int)ui->index.n_rows, row, node_matches, ui);
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

/* graph_rails.c — the graph view's compact boxes: one row per box, edges on rails.
 *
 * Graphviz puts a rank of boxes at least three rows below the one before it (a box, a
 * row for bends, a row for arrowheads), so a 48-row screen shows about 15 ranks of a
 * chain: 10 boxes of a DenseNet. Here every box takes one row, in a topological order
 * that keeps each box right after what it reads (order_boxes), and the edges run on rails
 * to the left of the text, the way `git log --graph` draws history:
 *
 *     ●            [ MaxPool k=3x3 s=2 p=1 · features/pool0 ]
 *     ├─●          [ Concat axis=1 · denseblock1/denselayer1 ]
 *     │ ●          [ BatchNormalization · denselayer1/norm1 ]
 *     │ ●          [ Relu · denselayer1/relu1 ]
 *     │ ●          [ Conv k=1x1 · denselayer1/conv1 ]
 *     ├─┼─●        [ Concat axis=1 · denseblock1/denselayer2 ]
 *     │ │ ●        [ BatchNormalization · denselayer2/norm1 ]
 *     ●─┴─┘        [ Concat axis=1 · features/denseblock1 ]
 *
 * Each box sits on a rail (its marker: ● a node, ○ an input, an output, a constant or a
 * "... N more"); the rail carries its outputs down to its last reader. A reader's row
 * joins every rail it reads to its own marker. A box takes over the rail of an input it
 * is the last reader of (so a chain stays one straight rail), else the leftmost rail free
 * from its row on. Rails are two columns apart; the text starts after the widest rail.
 */
#include "ui/graph_draw.h"

#include <stdlib.h>
#include <string.h>

#define RAIL_COLS 2         /* a rail and the column between it and the next */
#define MARGIN 1
#define MARKER_NODE 0x25CF  /* ● */
#define MARKER_OTHER 0x25CB /* ○ */

typedef struct rails {
    const gl_layout *l;
    size_t n;
    size_t *order;     /* boxes top to bottom */
    size_t *row_of;    /* box -> its row (0-based, before the margin) */
    size_t *last;      /* box -> the row of its last reader below it; SIZE_MAX: none */
    int *rail;         /* box -> its rail */
    size_t *free_from; /* rail -> first row it is free again */
    bool *source;      /* box -> it reads nothing (an input, a constant) */
    int n_rails;
} rails;

/* Before b in reading order: Graphviz's higher y first (its y grows upwards), then x. */
static bool placed_before(const gl_layout *l, size_t a, size_t b)
{
    const gl_layout_node *p = &l->nodes[a], *q = &l->nodes[b];
    if (p->y != q->y)
        return p->y > q->y;
    return p->x != q->x ? p->x < q->x : a < b;
}

/* Visited before b among a reader's tails: boxes that read something before those that
 * read nothing (a constant, an input: so they land right above the reader, not at the
 * top of its longest chain), then left to right as Graphviz put them. */
static bool tail_first(const rails *r, size_t a, size_t b)
{
    if (r->source[a] != r->source[b])
        return r->source[b];
    return r->l->nodes[a].x < r->l->nodes[b].x;
}

/* Tails of box i, in the order they are visited, into tails[] (at most cap). */
static size_t tails_of(const rails *r, size_t i, size_t *tails, size_t cap)
{
    size_t n = 0;
    for (size_t e = 0; e < r->l->n_edges && n < cap; e++) {
        const gl_layout_edge *ed = &r->l->edges[e];
        if (ed->to != i || ed->from == i)
            continue;
        size_t k = n++;
        for (; k > 0 && tail_first(r, ed->from, tails[k - 1]); k--)
            tails[k] = tails[k - 1];
        tails[k] = ed->from;
    }
    return n;
}

typedef enum { UNSEEN, OPEN, PLACED } visit;

/* Place box i after everything it reads (depth first, left tails first). An edge back
 * to an OPEN box (a cycle, which an ONNX graph has not) is skipped: it is drawn as not
 * forward, that is not at all. */
static void place_after_tails(rails *r, visit *state, size_t i, size_t *next)
{
    if (state[i] != UNSEEN)
        return;
    state[i] = OPEN;
    size_t *tails = gl_xmalloc((r->n + 1) * sizeof(*tails));
    size_t n = tails_of(r, i, tails, r->n);
    for (size_t k = 0; k < n; k++)
        place_after_tails(r, state, tails[k], next);
    free(tails);
    state[i] = PLACED;
    r->order[*next] = i;
    r->row_of[i] = (*next)++;
}

/* A topological order of the boxes (an edge's head after its tail) in which each box
 * comes right after what it reads, the way a reader follows a model: a DenseNet layer's
 * BN, Relu, Conv, Relu, Conv together rather than every layer's BN, then every Relu; a
 * constant just above its reader. Depth first from the boxes nothing below reads (the
 * outputs), in Graphviz's reading order. Recursion depth is at most the boxes of one
 * layout (the view's limit, a few hundred). */
static void order_boxes(rails *r)
{
    const gl_layout *l = r->l;
    bool *read = gl_xcalloc(r->n + 1, sizeof(*read));
    for (size_t i = 0; i < r->n; i++)
        r->source[i] = true;
    for (size_t e = 0; e < l->n_edges; e++)
        if (l->edges[e].from != l->edges[e].to) {
            read[l->edges[e].from] = true;
            r->source[l->edges[e].to] = false;
        }
    size_t *by_place = gl_xmalloc((r->n + 1) * sizeof(*by_place));
    for (size_t i = 0; i < r->n; i++) { /* insertion sort: a few hundred boxes */
        size_t k = i;
        for (; k > 0 && placed_before(l, i, by_place[k - 1]); k--)
            by_place[k] = by_place[k - 1];
        by_place[k] = i;
    }
    visit *state = gl_xcalloc(r->n + 1, sizeof(*state));
    size_t next = 0;
    /* the sinks that read something first, then what is left: boxes on their own (an
     * unused Constant of a step before dce) and whatever a cycle left */
    for (size_t k = 0; k < r->n; k++)
        if (!read[by_place[k]] && !r->source[by_place[k]])
            place_after_tails(r, state, by_place[k], &next);
    for (size_t k = 0; k < r->n; k++)
        place_after_tails(r, state, by_place[k], &next);
    free(state);
    free(by_place);
    free(read);
}

/* An edge drawn on the rails: its head is below its tail. */
static bool forward(const rails *r, const gl_layout_edge *e)
{
    return r->row_of[e->from] < r->row_of[e->to];
}

static void find_last_readers(rails *r)
{
    for (size_t i = 0; i < r->n; i++)
        r->last[i] = SIZE_MAX;
    for (size_t e = 0; e < r->l->n_edges; e++) {
        const gl_layout_edge *ed = &r->l->edges[e];
        if (!forward(r, ed))
            continue;
        size_t row = r->row_of[ed->to];
        if (r->last[ed->from] == SIZE_MAX || row > r->last[ed->from])
            r->last[ed->from] = row;
    }
}

/* The rail of the box at `row`: the leftmost rail of an input it is the last reader of,
 * else the leftmost rail free from this row on (a new one when none is). */
static int choose_rail(rails *r, size_t box, size_t row)
{
    int best = -1;
    for (size_t e = 0; e < r->l->n_edges; e++) {
        const gl_layout_edge *ed = &r->l->edges[e];
        if (ed->to != box || !forward(r, ed) || r->last[ed->from] != row)
            continue;
        int rail = r->rail[ed->from];
        best = best < 0 || rail < best ? rail : best;
    }
    if (best >= 0)
        return best;
    for (int k = 0; k < r->n_rails; k++)
        if (r->free_from[k] <= row)
            return k;
    r->free_from[r->n_rails] = 0;
    return r->n_rails++;
}

static void assign_rails(rails *r)
{
    for (size_t k = 0; k < r->n; k++) {
        size_t box = r->order[k];
        int rail = choose_rail(r, box, k);
        r->rail[box] = rail;
        size_t until = r->last[box] != SIZE_MAX ? r->last[box] : k;
        if (r->free_from[rail] < until + 1)
            r->free_from[rail] = until + 1;
    }
}

static int rail_col(int rail) { return MARGIN + rail * RAIL_COLS; }

static void draw_marker(gl_drawing *d, const gl_layout_node *n, int x, int y, size_t box)
{
    gl_cell *cell = gl_canvas_cell(d->canvas, x, y);
    if (!cell)
        return;
    cell->ch = n->kind == GL_BOX_NODE ? MARKER_NODE : MARKER_OTHER;
    cell->style = n->kind == GL_BOX_NODE ? GL_STYLE_NODE : GL_STYLE_IO;
    cell->box = (int32_t)box; /* a click on the marker selects the box too */
}

/* The text of box i as a flat box "[ text ]" at (x, y), at most label_cols of text. */
static void draw_label(gl_drawing *d, const gl_layout_node *n, size_t i, int x, int y,
                       int label_cols, gl_style style)
{
    const char *label = n->label ? n->label : "";
    int cols = gl_canvas_text_cols(label);
    cols = cols < label_cols ? cols : label_cols;
    d->boxes[i] = (gl_cell_rect){x, y, cols + 4, 1};
    gl_canvas_flat_box(d->canvas, x, y, cols + 4, (int32_t)i, style);
    /* the op starts the line and the name ends it: a long one loses its middle */
    gl_canvas_text_cut(d->canvas, x + 2, y, label, cols, (cols - 1) / 2, style);
}

/* Every forward edge: down the tail's rail to the head's row, then along that row to
 * the head's marker. The runs of one rail overlap and merge on the canvas. */
static void draw_edges(const rails *r, gl_drawing *d)
{
    for (size_t e = 0; e < r->l->n_edges; e++) {
        const gl_layout_edge *ed = &r->l->edges[e];
        if (!forward(r, ed))
            continue; /* a cycle's edge back: not drawn (drawn stays false) */
        int x0 = rail_col(r->rail[ed->from]), x1 = rail_col(r->rail[ed->to]);
        int y0 = MARGIN + (int)r->row_of[ed->from], y1 = MARGIN + (int)r->row_of[ed->to];
        gl_canvas_elbow(d->canvas, x0, y0, x1, y1, true, ed->dashed);
        d->edges[e].drawn = true;
        int path[6] = {x0, y0, x0, y1, x1, y1};
        d->edges[e].n_path = 3;
        d->edges[e].path = gl_xmalloc(sizeof(path));
        memcpy(d->edges[e].path, path, sizeof(path));
        d->edges[e].arrow = x1 > x0 ? GL_LINE_RIGHT : x1 < x0 ? GL_LINE_LEFT : GL_LINE_DOWN;
    }
}

gl_status gl_drawing_build_rails(const gl_layout *l, const gl_draw_opts *o, gl_drawing **out)
{
    *out = NULL;
    int label_cols = o && o->label_cols > 0 ? o->label_cols : 48;
    size_t n = l->n_nodes;
    rails r = {.l = l, .n = n};
    r.order = gl_xcalloc(n + 1, sizeof(*r.order));
    r.row_of = gl_xcalloc(n + 1, sizeof(*r.row_of));
    r.last = gl_xcalloc(n + 1, sizeof(*r.last));
    r.rail = gl_xcalloc(n + 1, sizeof(*r.rail));
    r.free_from = gl_xcalloc(n + 1, sizeof(*r.free_from));
    r.source = gl_xcalloc(n + 1, sizeof(*r.source));
    order_boxes(&r);
    find_last_readers(&r);
    assign_rails(&r);

    gl_drawing *d = gl_xcalloc(1, sizeof(*d));
    d->n_boxes = n;
    d->n_edges = l->n_edges;
    d->boxes = gl_xcalloc(n + 1, sizeof(*d->boxes));
    d->edges = gl_xcalloc(l->n_edges + 1, sizeof(*d->edges));
    d->sx = d->sy = 1;
    int text_x = rail_col(r.n_rails) + 1;
    int width = text_x + label_cols + 4 + MARGIN, height = (int)n + 2 * MARGIN;
    gl_status st = GL_OK;
    d->canvas = gl_canvas_new(width, height > 0 ? height : 1);
    if (!d->canvas)
        st = gl_fail(GL_ERR_NOMEM, "graph view: no memory for %d x %d cells", width, height);
    if (st == GL_OK) {
        draw_edges(&r, d);
        for (size_t k = 0; k < n; k++) {
            size_t box = r.order[k];
            int y = MARGIN + (int)k;
            draw_marker(d, &l->nodes[box], rail_col(r.rail[box]), y, box);
            draw_label(d, &l->nodes[box], box, text_x, y, label_cols,
                       gl_drawing_box_style(&l->nodes[box]));
        }
        d->order = r.order;
        d->n_order = n;
        r.order = NULL;
    }
    free(r.order);
    free(r.row_of);
    free(r.last);
    free(r.rail);
    free(r.free_from);
    free(r.source);
    if (st != GL_OK) {
        gl_drawing_free(d);
        return st;
    }
    *out = d;
    return GL_OK;
}

/* graph_draw.c — a Graphviz layout drawn into a canvas (see graph_draw.h).
 *
 * Four steps: size every box by its text; choose the scale so that those boxes keep
 * apart; map boxes and spline samples to cells and draw the boxes; route each edge
 * between its boxes with orthogonal runs. Edge labels go last, into free cells only.
 */
#include "ui/graph_draw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_COLS_PER_POINT 0.2
#define DEFAULT_ASPECT 2.0
#define DEFAULT_LABEL_COLS 28
#define DEFAULT_LABEL_LINES 3
#define DEFAULT_MARGIN 2
#define GAP_COLS 2       /* blank columns between boxes side by side */
#define GAP_ROWS 2       /* blank rows between boxes above one another: a bend, an arrow */
#define ROUNDING_SLACK 2 /* cells lost to rounding centres and halving odd sizes */
#define MAX_SCALE 4.0    /* cells per point: a degenerate layout cannot blow the canvas up */
#define MAX_COORD 1e6    /* cells: coordinates past this are clamped (no int overflow) */
#define MAX_SAMPLES 4096 /* samples of one Bezier segment */
#define BEND_TRIES 32    /* rows (columns) tried for the middle run of a bend */
#define EDGE_LABEL_COLS 24
#define SIMPLIFY_TOLERANCE 2.5 /* cells a spline may stray from its simplified route */
#define COMPACT_FLOOR 0.3 /* compact: the least of the aspect's rows per point kept */
#define FLAT_GAP_ROWS 2   /* compact and flat: a row for bends, one for arrowheads */

typedef struct settings {
    double sx0, aspect;
    int label_cols, label_lines, margin;
    bool edge_labels, compact, flat;
} settings;

static settings settings_of(const gl_draw_opts *o)
{
    settings s = {DEFAULT_COLS_PER_POINT, DEFAULT_ASPECT, DEFAULT_LABEL_COLS,
                  DEFAULT_LABEL_LINES, DEFAULT_MARGIN, true, false, false};
    if (!o)
        return s;
    if (o->cols_per_point > 0 && o->cols_per_point <= MAX_SCALE)
        s.sx0 = o->cols_per_point;
    if (o->aspect > 0)
        s.aspect = o->aspect;
    if (o->label_cols > 0)
        s.label_cols = o->label_cols;
    if (o->label_lines > 0)
        s.label_lines = o->label_lines;
    if (o->margin > 0)
        s.margin = o->margin;
    s.edge_labels = !o->no_edge_labels;
    s.compact = o->compact;
    s.flat = o->flat;
    if (s.flat)
        s.label_lines = 1;
    return s;
}

/* ---- cells and routes ---- */

typedef struct pt {
    int x, y;
} pt;

typedef struct ptvec {
    pt *v;
    size_t n, cap;
} ptvec;

static bool pt_eq(pt a, pt b) { return a.x == b.x && a.y == b.y; }

/* Append p unless it repeats the last cell; a step straight back to the cell before
 * the last cancels the last one (no spikes), except in the route's first two cells. */
static void route_push(ptvec *r, pt p)
{
    if (r->n && pt_eq(r->v[r->n - 1], p))
        return;
    if (r->n >= 3 && pt_eq(r->v[r->n - 2], p)) {
        r->n--;
        return;
    }
    GL_GROW(r->v, r->cap, r->n + 1);
    r->v[r->n++] = p;
}

static void samples_push(ptvec *s, pt p)
{
    if (s->n && pt_eq(s->v[s->n - 1], p))
        return;
    GL_GROW(s->v, s->cap, s->n + 1);
    s->v[s->n++] = p;
}

static int sign(int v) { return (v > 0) - (v < 0); }

static bool in_rect(const gl_cell_rect *r, pt p)
{
    return p.x >= r->x && p.x < r->x + r->w && p.y >= r->y && p.y < r->y + r->h;
}

static bool rects_overlap(const gl_cell_rect *a, const gl_cell_rect *b)
{
    return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

static int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static double clamp_coord(double v)
{
    return isfinite(v) ? fmax(-MAX_COORD, fmin(MAX_COORD, v)) : 0;
}

/* ---- boxes sized by their text ---- */

/* Lines shown (at most max_lines) and the widest of them, in columns. */
static int label_size(const char *label, int max_lines, int *widest)
{
    const char *p = label ? label : "";
    int lines = 0;
    *widest = 0;
    while (lines < max_lines) {
        int cols = gl_canvas_text_cols(p);
        *widest = cols > *widest ? cols : *widest;
        lines++;
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    return lines;
}

static void size_boxes(const gl_layout *l, const settings *s, gl_cell_rect *r)
{
    for (size_t i = 0; i < l->n_nodes; i++) {
        int widest;
        int lines = label_size(l->nodes[i].label, s->label_lines, &widest);
        r[i].w = (widest < s->label_cols ? widest : s->label_cols) + 4; /* border, space */
        r[i].h = s->flat ? 1 : lines + 2;
    }
}

/* ---- the scale ---- */

/* Boxes whose vertical extents overlap in the layout sit side by side (one rank). */
static bool side_by_side(const gl_layout_node *a, const gl_layout_node *b)
{
    return fabs(a->y - b->y) < (a->h + b->h) / 2;
}

/* Columns per point: the start value, raised until boxes side by side keep GAP_COLS. */
static double choose_sx(const gl_layout *l, const gl_cell_rect *r, double sx)
{
    for (size_t i = 0; i < l->n_nodes; i++)
        for (size_t j = i + 1; j < l->n_nodes; j++) {
            const gl_layout_node *a = &l->nodes[i], *b = &l->nodes[j];
            double dx = fabs(a->x - b->x);
            if (!side_by_side(a, b) || dx < 0.01)
                continue;
            double need = ((r[i].w + r[j].w) / 2.0 + GAP_COLS + ROUNDING_SLACK) / dx;
            sx = need > sx ? need : sx;
        }
    return sx < MAX_SCALE ? sx : MAX_SCALE;
}

/* Rows per point: sx / aspect, raised until boxes above one another whose columns
 * overlap at scale sx keep GAP_ROWS. */
static double choose_sy(const gl_layout *l, const gl_cell_rect *r, double sx, double aspect,
                        bool compact)
{
    double sy = sx / aspect * (compact ? COMPACT_FLOOR : 1);
    for (size_t i = 0; i < l->n_nodes; i++)
        for (size_t j = i + 1; j < l->n_nodes; j++) {
            const gl_layout_node *a = &l->nodes[i], *b = &l->nodes[j];
            double dy = fabs(a->y - b->y);
            double cols_apart = fabs(a->x - b->x) * sx;
            if (side_by_side(a, b) || dy < 0.01 ||
                cols_apart >= (r[i].w + r[j].w) / 2.0 + GAP_COLS + ROUNDING_SLACK)
                continue;
            double need = ((r[i].h + r[j].h) / 2.0 + GAP_ROWS + ROUNDING_SLACK) / dy;
            sy = need > sy ? need : sy;
        }
    return sy < MAX_SCALE ? sy : MAX_SCALE;
}

static double layout_top(const gl_layout *l)
{
    double top = -INFINITY;
    for (size_t i = 0; i < l->n_nodes; i++)
        top = fmax(top, clamp_coord(l->nodes[i].y + l->nodes[i].h / 2));
    for (size_t i = 0; i < l->n_edges; i++)
        for (size_t k = 0; k < l->edges[i].n_pts; k++)
            top = fmax(top, clamp_coord(l->edges[i].pts[2 * k + 1]));
    return isfinite(top) ? top : 0;
}

/* Cell coordinates before the margin shift, as doubles. */
/* Compact: the row of layout y, linear between the ranks around it, at d->sy beyond. */
static double rank_row(const gl_drawing *d, double y)
{
    const double *ry = d->rank_y, *rr = d->rank_row;
    size_t n = d->n_ranks;
    if (y >= ry[0])
        return rr[0] - (y - ry[0]) * d->sy;
    for (size_t k = 0; k + 1 < n; k++)
        if (y >= ry[k + 1])
            return rr[k] + (ry[k] - y) / (ry[k] - ry[k + 1]) * (rr[k + 1] - rr[k]);
    return rr[n - 1] + (ry[n - 1] - y) * d->sy;
}

static void to_cells(const gl_drawing *d, double x, double y, double *col, double *row)
{
    *col = clamp_coord(clamp_coord(x) * d->sx);
    *row = d->n_ranks ? clamp_coord(rank_row(d, clamp_coord(y)))
                      : clamp_coord((d->top - clamp_coord(y)) * d->sy);
}

static int compare_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Compact: the ranks (node centres within half a point share one), top first, each
 * placed the boxes' half heights plus `gap` rows below the last. */
static void compact_ranks(const gl_layout *l, gl_drawing *d, int gap)
{
    double *ys = gl_xmalloc((l->n_nodes + 1) * sizeof(*ys));
    for (size_t i = 0; i < l->n_nodes; i++)
        ys[i] = clamp_coord(l->nodes[i].y);
    qsort(ys, l->n_nodes, sizeof(*ys), compare_desc);
    d->rank_y = gl_xmalloc((l->n_nodes + 1) * sizeof(*d->rank_y));
    d->rank_row = gl_xcalloc(l->n_nodes + 1, sizeof(*d->rank_row));
    double *half = gl_xcalloc(l->n_nodes + 1, sizeof(*half)); /* tallest box's half */
    size_t n = 0;
    for (size_t i = 0; i < l->n_nodes; i++)
        if (!n || d->rank_y[n - 1] - ys[i] > 0.5)
            d->rank_y[n++] = ys[i];
    for (size_t i = 0; i < l->n_nodes; i++)
        for (size_t k = 0; k < n; k++)
            if (fabs(d->rank_y[k] - clamp_coord(l->nodes[i].y)) <= 0.5) {
                half[k] = fmax(half[k], d->boxes[i].h / 2.0);
                break;
            }
    if (n)
        d->rank_row[0] = (d->top - d->rank_y[0]) * d->sy;
    for (size_t k = 1; k < n; k++)
        d->rank_row[k] = d->rank_row[k - 1] + half[k - 1] + half[k] + gap;
    d->n_ranks = n;
    free(half);
    free(ys);
}

void gl_drawing_map(const gl_drawing *d, double x, double y, int *col, int *row)
{
    double c, r;
    to_cells(d, x, y, &c, &r);
    *col = (int)lround(c) + d->shift_x;
    *row = (int)lround(r) + d->shift_y;
}

/* ---- splines as cells ---- */

static void bezier_at(const double p[8], double t, double *x, double *y)
{
    double u = 1 - t;
    double a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, e = t * t * t;
    *x = a * p[0] + b * p[2] + c * p[4] + e * p[6];
    *y = a * p[1] + b * p[3] + c * p[5] + e * p[7];
}

/* Enough samples that consecutive ones are at most half a cell apart. */
static int sample_count(const double *p, int n_points)
{
    double len = 0;
    for (int k = 1; k < n_points; k++)
        len += hypot(p[2 * k] - p[2 * k - 2], p[2 * k + 1] - p[2 * k - 1]);
    double n = ceil(len * 2);
    return n < 1 ? 1 : n > MAX_SAMPLES ? MAX_SAMPLES : (int)n;
}

/* The edge's cells (unshifted), tail to head: a piecewise cubic Bezier when the points
 * come as 3k+1, else the polyline through them. */
static void sample_edge(const gl_drawing *d, const gl_layout_edge *e, ptvec *out)
{
    size_t n = e->n_pts;
    bool bezier = n >= 4 && (n - 1) % 3 == 0;
    size_t step = bezier ? 3 : 1;
    for (size_t s = 0; s + step < n; s += step) {
        double p[8];
        for (size_t k = 0; k <= step; k++)
            to_cells(d, e->pts[2 * (s + k)], e->pts[2 * (s + k) + 1], &p[2 * k], &p[2 * k + 1]);
        int count = sample_count(p, (int)step + 1);
        for (int i = 0; i <= count; i++) {
            double t = (double)i / count, x, y;
            if (bezier)
                bezier_at(p, t, &x, &y);
            else {
                x = p[0] + (p[2] - p[0]) * t;
                y = p[1] + (p[3] - p[1]) * t;
            }
            samples_push(out, (pt){(int)lround(x), (int)lround(y)});
        }
    }
}

/* ---- reducing a sampled spline to its turning points (Douglas-Peucker) ---- */

static double distance_to_line(pt p, pt a, pt b)
{
    double dx = b.x - a.x, dy = b.y - a.y, len = hypot(dx, dy);
    if (len == 0)
        return hypot(p.x - a.x, p.y - a.y);
    return fabs(dx * (p.y - a.y) - dy * (p.x - a.x)) / len;
}

static void simplify(ptvec *v)
{
    if (v->n < 3)
        return;
    bool *keep = gl_xcalloc(v->n, sizeof(*keep));
    size_t *stack = gl_xmalloc(2 * v->n * sizeof(*stack)), top = 0;
    keep[0] = keep[v->n - 1] = true;
    stack[top++] = 0;
    stack[top++] = v->n - 1;
    while (top) {
        size_t last = stack[--top], first = stack[--top], far = first;
        double worst = SIMPLIFY_TOLERANCE;
        for (size_t i = first + 1; i < last; i++) {
            double dist = distance_to_line(v->v[i], v->v[first], v->v[last]);
            if (dist > worst) {
                worst = dist;
                far = i;
            }
        }
        if (far == first)
            continue;
        keep[far] = true;
        stack[top++] = first;
        stack[top++] = far;
        stack[top++] = far;
        stack[top++] = last;
    }
    size_t kept = 0;
    for (size_t i = 0; i < v->n; i++)
        if (keep[i])
            v->v[kept++] = v->v[i];
    v->n = kept;
    free(keep);
    free(stack);
}

/* ---- routing ---- */

typedef enum side { SIDE_TOP, SIDE_BOTTOM, SIDE_LEFT, SIDE_RIGHT } side;

/* The side of r that faces p (top or bottom unless p is level with r). */
static side facing(const gl_cell_rect *r, pt p)
{
    if (p.y < r->y)
        return SIDE_TOP;
    if (p.y >= r->y + r->h)
        return SIDE_BOTTOM;
    return p.x < r->x ? SIDE_LEFT : SIDE_RIGHT;
}

static pt outward(side s)
{
    static const pt normals[] = {{0, -1}, {0, 1}, {-1, 0}, {1, 0}};
    return normals[s];
}

/* The cell of r's border on side s nearest to p, corners excluded when there is room. */
static pt border_cell(const gl_cell_rect *r, side s, pt p)
{
    int x = r->w > 2 ? clamp_int(p.x, r->x + 1, r->x + r->w - 2) : r->x;
    int y = r->h > 2 ? clamp_int(p.y, r->y + 1, r->y + r->h - 2) : r->y;
    switch (s) {
    case SIDE_TOP: return (pt){x, r->y};
    case SIDE_BOTTOM: return (pt){x, r->y + r->h - 1};
    case SIDE_LEFT: return (pt){r->x, y};
    default: return (pt){r->x + r->w - 1, y};
    }
}

static pt centre(const gl_cell_rect *r) { return (pt){r->x + r->w / 2, r->y + r->h / 2}; }

static pt add(pt a, pt b) { return (pt){a.x + b.x, a.y + b.y}; }

static unsigned direction_into(side s)
{
    static const unsigned into[] = {GL_LINE_DOWN, GL_LINE_UP, GL_LINE_RIGHT, GL_LINE_LEFT};
    return into[s];
}

/* True when the runs through `corners` touch no box and stay on the canvas (their first
 * and last cells excepted: those are the caller's). */
static bool runs_clear(const gl_canvas *c, const pt *corners, size_t n)
{
    pt first = corners[0], last = corners[n - 1];
    for (size_t k = 0; k + 1 < n; k++) {
        pt p = corners[k], q = corners[k + 1], s = {sign(q.x - p.x), sign(q.y - p.y)};
        for (;; p = add(p, s)) {
            const gl_cell *cell = gl_canvas_cell_const(c, p.x, p.y);
            bool own = pt_eq(p, first) || pt_eq(p, last);
            if (!own && (!cell || cell->box >= 0))
                return false;
            if (pt_eq(p, q))
                break;
        }
    }
    return true;
}

static void push_run(ptvec *route, pt p, pt q)
{
    pt s = {sign(q.x - p.x), sign(q.y - p.y)};
    for (route_push(route, p); !pt_eq(p, q);) {
        p = add(p, s);
        route_push(route, p);
    }
}

/* The bend from p to q whose middle run lies `offset` rows (vertical) or columns away
 * from halfway; false when that row or column is not between p and q. */
static bool bend(pt p, pt q, bool vertical, int offset, pt corners[4])
{
    int lo = vertical ? (p.y < q.y ? p.y : q.y) : (p.x < q.x ? p.x : q.x);
    int hi = vertical ? (p.y < q.y ? q.y : p.y) : (p.x < q.x ? q.x : p.x);
    int mid = lo + (hi - lo) / 2 + offset;
    if (mid < lo || mid > hi)
        return false;
    corners[0] = p;
    corners[1] = vertical ? (pt){p.x, mid} : (pt){mid, p.y};
    corners[2] = vertical ? (pt){q.x, mid} : (pt){mid, q.y};
    corners[3] = q;
    return true;
}

/* Orthogonal runs from p to q: straight when they share a row or column, else a bend
 * whose middle run avoids boxes, searched outwards from halfway (vertical bends first
 * when `vertical`). With no clear bend, the halfway one (parts of it behind boxes). */
static void connect(const gl_canvas *c, ptvec *route, pt p, pt q, bool vertical)
{
    if (p.x == q.x || p.y == q.y) {
        push_run(route, p, q);
        return;
    }
    pt corners[4];
    for (int orientation = 0; orientation < 2; orientation++) {
        bool v = orientation == 0 ? vertical : !vertical;
        for (int k = 0; k < 2 * BEND_TRIES; k++) {
            int offset = (k + 1) / 2 * (k % 2 ? 1 : -1); /* 0, 1, -1, 2, -2, ... */
            if (bend(p, q, v, offset, corners) && runs_clear(c, corners, 4)) {
                for (int i = 0; i < 3; i++)
                    push_run(route, corners[i], corners[i + 1]);
                return;
            }
        }
    }
    bend(p, q, vertical, 0, corners);
    for (int i = 0; i < 3; i++)
        push_run(route, corners[i], corners[i + 1]);
}

/* The spline's cells between the two boxes, reduced to its turning points. */
static void waypoints(const ptvec *samples, const gl_cell_rect *src, const gl_cell_rect *dst,
                      ptvec *out)
{
    size_t a = 0, b = samples->n;
    while (a < b && in_rect(src, samples->v[a]))
        a++;
    while (b > a && in_rect(dst, samples->v[b - 1]))
        b--;
    for (size_t i = a; i < b; i++)
        if (!in_rect(src, samples->v[i]) && !in_rect(dst, samples->v[i]))
            samples_push(out, samples->v[i]);
    simplify(out);
}

/* Draw the route's links: the first leaves the source's border, the others are left
 * out where a cell belongs to a box (the line passes behind it). */
static void draw_route(gl_canvas *c, const ptvec *route, bool dashed)
{
    for (size_t k = 0; k + 1 < route->n; k++) {
        pt a = route->v[k], b = route->v[k + 1];
        const gl_cell *ca = gl_canvas_cell_const(c, a.x, a.y);
        const gl_cell *cb = gl_canvas_cell_const(c, b.x, b.y);
        if (!ca || !cb || cb->box >= 0 || (k > 0 && ca->box >= 0))
            continue;
        gl_canvas_link(c, a.x, a.y, b.x, b.y, dashed);
    }
}

static void route_edge(gl_drawing *d, const gl_layout_edge *e, const ptvec *samples,
                       gl_drawn_edge *out)
{
    if (e->from >= d->n_boxes || e->to >= d->n_boxes || e->from == e->to)
        return;
    const gl_cell_rect *src = &d->boxes[e->from], *dst = &d->boxes[e->to];
    if (rects_overlap(src, dst))
        return;
    ptvec way = {0}, route = {0};
    waypoints(samples, src, dst, &way);
    pt toward_src = way.n ? way.v[0] : centre(dst);
    pt toward_dst = way.n ? way.v[way.n - 1] : centre(src);
    side out_side = facing(src, toward_src), in_side = facing(dst, toward_dst);
    pt attach = border_cell(src, out_side, toward_src);
    pt arrow = add(border_cell(dst, in_side, toward_dst), outward(in_side));
    pt start = add(attach, outward(out_side)), end = add(arrow, outward(in_side));
    if (in_rect(src, arrow) || in_rect(dst, start)) { /* the boxes touch */
        free(way.v);
        return;
    }
    bool vertical = out_side == SIDE_TOP || out_side == SIDE_BOTTOM;
    route_push(&route, attach);
    route_push(&route, start);
    pt from = start;
    if (src->h == 1 && start.y == end.y)
        way.n = 0; /* flat boxes in consecutive ranks: straight along the row between */
    for (size_t i = 0; i < way.n; i++) {
        pt w = way.v[i];
        bool near_ends = abs(w.x - from.x) + abs(w.y - from.y) <= 1 ||
                         abs(w.x - end.x) + abs(w.y - end.y) <= 1;
        if (near_ends || in_rect(src, w) || in_rect(dst, w))
            continue;
        connect(d->canvas, &route, from, w, vertical);
        from = w;
    }
    connect(d->canvas, &route, from, end, vertical);
    route_push(&route, arrow);
    free(way.v);

    draw_route(d->canvas, &route, e->dashed);
    if (src->h == 1) /* lines do not enter a flat box: the start reaches up to it alone */
        gl_canvas_half_link(d->canvas, start.x, start.y, direction_into(out_side), e->dashed);
    gl_canvas_arrow(d->canvas, arrow.x, arrow.y, direction_into(in_side));
    out->drawn = true;
    out->arrow = direction_into(in_side);
    out->n_path = route.n;
    out->path = gl_xmalloc(2 * route.n * sizeof(int));
    for (size_t i = 0; i < route.n; i++) {
        out->path[2 * i] = route.v[i].x;
        out->path[2 * i + 1] = route.v[i].y;
    }
    free(route.v);
}

/* ---- boxes and labels on the canvas ---- */

gl_style gl_drawing_box_style(const gl_layout_node *n)
{
    static const gl_style by_mark[] = {
        [GL_MARK_ADDED] = GL_STYLE_ADDED,
        [GL_MARK_MODIFIED] = GL_STYLE_MODIFIED,
        [GL_MARK_REPLACED] = GL_STYLE_REPLACED,
    };
    static const gl_style by_kind[] = {
        [GL_BOX_NODE] = GL_STYLE_NODE,       [GL_BOX_INPUT] = GL_STYLE_IO,
        [GL_BOX_OUTPUT] = GL_STYLE_IO,       [GL_BOX_CONSTANT] = GL_STYLE_CONSTANT,
        [GL_BOX_GROUP] = GL_STYLE_OTHER,     [GL_BOX_STUB] = GL_STYLE_OTHER,
    };
    if ((size_t)n->mark < sizeof(by_mark) / sizeof(by_mark[0]) && by_mark[n->mark])
        return by_mark[n->mark];
    if ((size_t)n->kind < sizeof(by_kind) / sizeof(by_kind[0]))
        return by_kind[n->kind];
    return GL_STYLE_NODE;
}

/* Columns of a long line kept before the '…': none for a path ("/a/b/Conv": its end
 * tells nodes apart), else half (shapes, "changed: ..." lines). */
static int head_to_keep(const char *line, const char *end, int cols)
{
    const char *slash = memchr(line, '/', end ? (size_t)(end - line) : strlen(line));
    return slash ? 0 : (cols - 1) / 2;
}

static void draw_box(gl_drawing *d, const gl_layout_node *n, size_t i)
{
    const gl_cell_rect *r = &d->boxes[i];
    gl_style style = gl_drawing_box_style(n);
    bool rounded = n->kind == GL_BOX_INPUT || n->kind == GL_BOX_OUTPUT || n->kind == GL_BOX_STUB;
    const char *line = n->label ? n->label : "";
    if (r->h == 1) { /* flat */
        gl_canvas_flat_box(d->canvas, r->x, r->y, r->w, (int32_t)i, style);
        /* the op starts the line and the name ends it: a long one loses its middle */
        gl_canvas_text_cut(d->canvas, r->x + 2, r->y, line, r->w - 4, (r->w - 5) / 2, style);
        return;
    }
    gl_canvas_box(d->canvas, r->x, r->y, r->w, r->h, (int32_t)i, style, rounded);
    for (int k = 0; k < r->h - 2 && line; k++) {
        const char *end = strchr(line, '\n');
        int cols = r->w - 4;
        gl_canvas_text_cut(d->canvas, r->x + 2, r->y + 1 + k, line, cols,
                           head_to_keep(line, end, cols), style);
        line = end ? end + 1 : NULL;
    }
}

/* The label centred where Graphviz put it, or a row above or below, if the cells (and
 * one on each side) are free. */
static void draw_edge_label(gl_drawing *d, const gl_layout_edge *e)
{
    /* "?" is the type of a value nothing is known about: nothing worth a cell */
    if (!e->label || !*e->label || strcmp(e->label, "?") == 0)
        return;
    int cols = gl_canvas_text_cols(e->label);
    cols = cols < EDGE_LABEL_COLS ? cols : EDGE_LABEL_COLS;
    int col, row;
    gl_drawing_map(d, e->label_x, e->label_y, &col, &row);
    static const int tries[] = {0, -1, 1};
    for (size_t t = 0; t < sizeof(tries) / sizeof(tries[0]); t++) {
        int x = col - cols / 2, y = row + tries[t];
        if (gl_canvas_blank(d->canvas, x - 1, y, cols + 2)) {
            gl_canvas_text(d->canvas, x, y, e->label, cols, GL_STYLE_LABEL);
            return;
        }
    }
}

typedef struct ranked {
    int y, x;
    size_t index;
} ranked;

static int compare_ranked(const void *a, const void *b)
{
    const ranked *p = a, *q = b;
    if (p->y != q->y)
        return (p->y > q->y) - (p->y < q->y);
    if (p->x != q->x)
        return (p->x > q->x) - (p->x < q->x);
    return (p->index > q->index) - (p->index < q->index);
}

static void reading_order(const gl_layout *l, gl_drawing *d)
{
    ranked *r = gl_xmalloc((l->n_nodes + 1) * sizeof(*r));
    size_t n = 0;
    for (size_t i = 0; i < l->n_nodes; i++)
        r[n++] = (ranked){d->boxes[i].y, d->boxes[i].x, i};
    qsort(r, n, sizeof(*r), compare_ranked);
    d->order = gl_xmalloc((n + 1) * sizeof(*d->order));
    for (size_t i = 0; i < n; i++)
        d->order[i] = r[i].index;
    d->n_order = n;
    free(r);
}

/* ---- the whole drawing ---- */

typedef struct bounds {
    long x0, y0, x1, y1; /* inclusive */
} bounds;

static void bounds_add(bounds *b, long x, long y)
{
    b->x0 = x < b->x0 ? x : b->x0;
    b->y0 = y < b->y0 ? y : b->y0;
    b->x1 = x > b->x1 ? x : b->x1;
    b->y1 = y > b->y1 ? y : b->y1;
}

/* Place the boxes (unshifted) and sample the edges; returns the extent of both. */
static bounds place(const gl_layout *l, gl_drawing *d, ptvec *samples)
{
    bounds b = {0, 0, 0, 0};
    for (size_t i = 0; i < l->n_nodes; i++) {
        double col, row;
        to_cells(d, l->nodes[i].x, l->nodes[i].y, &col, &row);
        gl_cell_rect *r = &d->boxes[i];
        r->x = (int)lround(col) - r->w / 2;
        r->y = (int)lround(row) - r->h / 2;
        if (i == 0)
            b = (bounds){r->x, r->y, r->x, r->y};
        bounds_add(&b, r->x, r->y);
        bounds_add(&b, (long)r->x + r->w - 1, (long)r->y + r->h - 1);
    }
    for (size_t i = 0; i < l->n_edges; i++) {
        sample_edge(d, &l->edges[i], &samples[i]);
        for (size_t k = 0; k < samples[i].n; k++)
            bounds_add(&b, samples[i].v[k].x, samples[i].v[k].y);
    }
    return b;
}

static void shift_all(gl_drawing *d, ptvec *samples, size_t n_edges)
{
    for (size_t i = 0; i < d->n_boxes; i++) {
        d->boxes[i].x += d->shift_x;
        d->boxes[i].y += d->shift_y;
    }
    for (size_t i = 0; i < n_edges; i++)
        for (size_t k = 0; k < samples[i].n; k++)
            samples[i].v[k] = add(samples[i].v[k], (pt){d->shift_x, d->shift_y});
}

static gl_status make_canvas(gl_drawing *d, bounds b, int margin)
{
    double w = (double)(b.x1 - b.x0) + 1 + 2.0 * margin;
    double h = (double)(b.y1 - b.y0) + 1 + 2.0 * margin;
    if (w * h > (double)GL_CANVAS_MAX_CELLS)
        return gl_fail(GL_ERR_UNSUPPORTED,
                       "graph view: the drawing would take %.0f x %.0f cells; show a smaller "
                       "neighbourhood",
                       w, h);
    d->shift_x = (int)(margin - b.x0);
    d->shift_y = (int)(margin - b.y0);
    d->canvas = gl_canvas_new((int)w, (int)h);
    return d->canvas ? GL_OK : gl_fail(GL_ERR_NOMEM, "graph view: no memory for %.0f x %.0f "
                                                     "cells", w, h);
}

gl_status gl_drawing_build(const gl_layout *l, const gl_draw_opts *o, gl_drawing **out)
{
    *out = NULL;
    settings s = settings_of(o);
    gl_drawing *d = gl_xcalloc(1, sizeof(*d));
    d->n_boxes = l->n_nodes;
    d->n_edges = l->n_edges;
    d->boxes = gl_xcalloc(l->n_nodes + 1, sizeof(*d->boxes));
    d->edges = gl_xcalloc(l->n_edges + 1, sizeof(*d->edges));
    size_boxes(l, &s, d->boxes);
    d->sx = choose_sx(l, d->boxes, s.sx0);
    d->sy = choose_sy(l, d->boxes, d->sx, s.aspect, s.compact);
    d->top = layout_top(l);
    if (s.compact && l->n_nodes) /* flat boxes: whole rows, no rounding to allow for */
        compact_ranks(l, d, s.flat ? FLAT_GAP_ROWS : GAP_ROWS + ROUNDING_SLACK);

    ptvec *samples = gl_xcalloc(l->n_edges + 1, sizeof(*samples));
    gl_status st = make_canvas(d, place(l, d, samples), s.margin);
    if (st == GL_OK) {
        shift_all(d, samples, l->n_edges);
        for (size_t i = 0; i < l->n_nodes; i++)
            draw_box(d, &l->nodes[i], i);
        for (size_t i = 0; i < l->n_edges; i++)
            route_edge(d, &l->edges[i], &samples[i], &d->edges[i]);
        for (size_t i = 0; s.edge_labels && i < l->n_edges; i++)
            draw_edge_label(d, &l->edges[i]);
        reading_order(l, d);
    }
    for (size_t i = 0; i < l->n_edges; i++)
        free(samples[i].v);
    free(samples);
    if (st != GL_OK) {
        gl_drawing_free(d);
        return st;
    }
    *out = d;
    return GL_OK;
}

void gl_drawing_free(gl_drawing *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_edges; i++)
        free(d->edges[i].path);
    gl_canvas_free(d->canvas);
    free(d->boxes);
    free(d->edges);
    free(d->order);
    free(d->rank_y);
    free(d->rank_row);
    free(d);
}

long gl_drawing_box_at(const gl_drawing *d, int col, int row)
{
    const gl_cell *cell = gl_canvas_cell_const(d->canvas, col, row);
    return cell ? cell->box : -1;
}

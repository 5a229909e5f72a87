/* layout.c — stage 4 for the terminal view: the coordinates of every box and edge after
 * dot's layout, extracted in the Graphviz child and sent to the parent in a small binary
 * encoding (render.h's gl_render_layout).
 */
#include "render/stages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layout coordinates ---- */

static bool parse_index(const char *s, char prefix, size_t limit, size_t *out)
{
    if (!s || s[0] != prefix || !s[1])
        return false;
    char *end = NULL;
    unsigned long long v = strtoull(s + 1, &end, 10);
    if (*end || v >= limit)
        return false;
    *out = (size_t)v;
    return true;
}

static void copy_box(gl_layout_node *dst, const vbox *bx, Agnode_t *n)
{
    dst->id = bx->kind == GL_BOX_NODE ? bx->node_id : UINT32_MAX;
    dst->kind = bx->kind;
    dst->mark = bx->mark;
    dst->label = gl_xstrdup(bx->text);
    dst->x = ND_coord(n).x;
    dst->y = ND_coord(n).y;
    dst->w = ND_width(n) * 72.0;
    dst->h = ND_height(n) * 72.0;
}

/* Bezier control points; the two box centres when Graphviz drew no spline. */
static void copy_spline(gl_layout_edge *dst, Agedge_t *e, const gl_layout_node *nodes)
{
    const splines *spl = ED_spl(e);
    size_t count = 0;
    for (int i = 0; spl && i < spl->size; i++)
        count += spl->list[i].size > 0 ? (size_t)spl->list[i].size : 0;
    if (count < 2) {
        const gl_layout_node *a = &nodes[dst->from], *b = &nodes[dst->to];
        dst->pts = gl_xmalloc(4 * sizeof(double));
        const double pts[4] = {a->x, a->y, b->x, b->y};
        memcpy(dst->pts, pts, sizeof(pts));
        dst->n_pts = 2;
        return;
    }
    dst->pts = gl_xmalloc(2 * count * sizeof(double));
    for (int i = 0; i < spl->size; i++)
        for (int k = 0; k < spl->list[i].size; k++) {
            dst->pts[2 * dst->n_pts] = spl->list[i].list[k].x;
            dst->pts[2 * dst->n_pts + 1] = spl->list[i].list[k].y;
            dst->n_pts++;
        }
}

static void copy_edge(gl_layout_edge *dst, const vedge *ve, Agedge_t *e,
                      const gl_layout_node *nodes)
{
    dst->from = ve->from;
    dst->to = ve->to;
    dst->dashed = ve->dashed;
    gl_strbuf label = {0};
    gl_rv_edge_label(ve, &label);
    dst->label = gl_sb_take(&label);
    const textlabel_t *tl = ED_label(e) ? ED_label(e) : ED_xlabel(e);
    dst->label_x = tl ? tl->pos.x : 0;
    dst->label_y = tl ? tl->pos.y : 0;
    copy_spline(dst, e, nodes);
}

static void extract_layout(Agraph_t *graph, const view *v, gl_layout *l)
{
    l->nodes = gl_xcalloc(v->n_boxes + 1, sizeof(*l->nodes));
    l->edges = gl_xcalloc(v->n_edges + 1, sizeof(*l->edges));
    l->n_nodes = v->n_boxes;
    for (Agnode_t *n = agfstnode(graph); n; n = agnxtnode(graph, n)) {
        size_t i;
        if (parse_index(agnameof(n), 'b', v->n_boxes, &i))
            copy_box(&l->nodes[i], &v->boxes[i], n);
    }
    for (Agnode_t *n = agfstnode(graph); n; n = agnxtnode(graph, n))
        for (Agedge_t *e = agfstout(graph, n); e; e = agnxtout(graph, e)) {
            size_t i;
            if (parse_index(agget(e, "id"), 'e', v->n_edges, &i))
                copy_edge(&l->edges[l->n_edges++], &v->edges[i], e, l->nodes);
        }
    boxf bb = GD_bb(graph);
    l->width = bb.UR.x - bb.LL.x;
    l->height = bb.UR.y - bb.LL.y;
}

/* ---- the layout on the wire, child to parent ----
 * Native byte order and sizes (the same binary writes and reads it); every string and
 * array is preceded by its length:
 *   u64 n_nodes, u64 n_edges, f64 width, f64 height,
 *   n_nodes x { u32 id, u32 kind, u32 mark, f64 x, y, w, h, str label },
 *   n_edges x { u64 from, u64 to, u32 dashed, f64 label_x, label_y, str label,
 *               u64 n_pts, f64 pts[2 * n_pts] },
 *   str = u64 length, bytes (no NUL). */

#define WIRE_NODE_MIN (3 * 4 + 4 * 8 + 8)
#define WIRE_EDGE_MIN (2 * 8 + 4 + 2 * 8 + 8 + 8 + 2 * 2 * 8)

static void put_u32(gl_strbuf *b, uint32_t v) { gl_sb_putn(b, (const char *)&v, sizeof(v)); }
static void put_u64(gl_strbuf *b, uint64_t v) { gl_sb_putn(b, (const char *)&v, sizeof(v)); }
static void put_f64(gl_strbuf *b, double v) { gl_sb_putn(b, (const char *)&v, sizeof(v)); }

static void put_str(gl_strbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_u64(b, n);
    if (n)
        gl_sb_putn(b, s, n);
}

static void encode_layout(const gl_layout *l, gl_strbuf *out)
{
    put_u64(out, l->n_nodes);
    put_u64(out, l->n_edges);
    put_f64(out, l->width);
    put_f64(out, l->height);
    for (size_t i = 0; i < l->n_nodes; i++) {
        const gl_layout_node *n = &l->nodes[i];
        put_u32(out, n->id);
        put_u32(out, (uint32_t)n->kind);
        put_u32(out, (uint32_t)n->mark);
        const double geometry[4] = {n->x, n->y, n->w, n->h};
        for (size_t k = 0; k < 4; k++)
            put_f64(out, geometry[k]);
        put_str(out, n->label);
    }
    for (size_t i = 0; i < l->n_edges; i++) {
        const gl_layout_edge *e = &l->edges[i];
        put_u64(out, e->from);
        put_u64(out, e->to);
        put_u32(out, e->dashed);
        put_f64(out, e->label_x);
        put_f64(out, e->label_y);
        put_str(out, e->label);
        put_u64(out, e->n_pts);
        for (size_t k = 0; k < 2 * e->n_pts; k++)
            put_f64(out, e->pts[k]);
    }
}

/* A reader that turns every short read into `bad` (and zeros) instead of reading past
 * the end; the caller checks `bad` once. */
typedef struct wire {
    const char *p;
    size_t left;
    bool bad;
} wire;

static void take(wire *w, void *dst, size_t n)
{
    if (w->bad || n > w->left) {
        w->bad = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, w->p, n);
    w->p += n;
    w->left -= n;
}

static uint32_t take_u32(wire *w)
{
    uint32_t v;
    take(w, &v, sizeof(v));
    return v;
}

static uint64_t take_u64(wire *w)
{
    uint64_t v;
    take(w, &v, sizeof(v));
    return v;
}

static double take_f64(wire *w)
{
    double v;
    take(w, &v, sizeof(v));
    return v;
}

static char *take_str(wire *w)
{
    uint64_t n = take_u64(w);
    if (w->bad || n > w->left) {
        w->bad = true;
        return gl_xstrdup("");
    }
    char *s = gl_xstrndup(w->p, (size_t)n);
    w->p += n;
    w->left -= (size_t)n;
    return s;
}

static void decode_node(wire *w, gl_layout_node *n)
{
    n->id = take_u32(w);
    uint32_t kind = take_u32(w), mark = take_u32(w);
    w->bad |= kind > GL_BOX_STUB || mark > GL_MARK_REPLACED;
    n->kind = w->bad ? GL_BOX_NODE : (gl_render_box_kind)kind;
    n->mark = w->bad ? GL_MARK_NONE : (gl_render_mark)mark;
    n->x = take_f64(w);
    n->y = take_f64(w);
    n->w = take_f64(w);
    n->h = take_f64(w);
    n->label = take_str(w);
}

static void decode_edge(wire *w, gl_layout_edge *e, size_t n_nodes)
{
    uint64_t from = take_u64(w), to = take_u64(w);
    w->bad |= from >= n_nodes || to >= n_nodes;
    e->from = (size_t)from;
    e->to = (size_t)to;
    e->dashed = take_u32(w) != 0;
    e->label_x = take_f64(w);
    e->label_y = take_f64(w);
    e->label = take_str(w);
    uint64_t n_pts = take_u64(w);
    if (w->bad || n_pts < 2 || n_pts > w->left / (2 * sizeof(double))) {
        w->bad = true;
        return;
    }
    e->pts = gl_xmalloc((size_t)n_pts * 2 * sizeof(double));
    e->n_pts = (size_t)n_pts;
    for (size_t k = 0; k < 2 * e->n_pts; k++)
        e->pts[k] = take_f64(w);
}

/* Counts are checked against the bytes present before anything is allocated. */
static gl_status decode_layout(const char *bytes, size_t len, gl_layout **out)
{
    wire w = {bytes, len, false};
    gl_layout *l = gl_xcalloc(1, sizeof(*l));
    uint64_t n_nodes = take_u64(&w), n_edges = take_u64(&w);
    l->width = take_f64(&w);
    l->height = take_f64(&w);
    w.bad |= n_nodes > w.left / WIRE_NODE_MIN || n_edges > w.left / WIRE_EDGE_MIN ||
             n_nodes * WIRE_NODE_MIN + n_edges * WIRE_EDGE_MIN > w.left;
    if (!w.bad) {
        l->nodes = gl_xcalloc((size_t)n_nodes + 1, sizeof(*l->nodes));
        l->edges = gl_xcalloc((size_t)n_edges + 1, sizeof(*l->edges));
    }
    while (!w.bad && l->n_nodes < n_nodes)
        decode_node(&w, &l->nodes[l->n_nodes++]);
    while (!w.bad && l->n_edges < n_edges)
        decode_edge(&w, &l->edges[l->n_edges++], l->n_nodes);
    if (w.bad || w.left) {
        gl_layout_free(l);
        return gl_fail(GL_ERR_INTERNAL, "render: the layout from the Graphviz process is "
                                        "malformed (%zu bytes)", len);
    }
    *out = l;
    return GL_OK;
}

/* Job: the DOT text laid out; the coordinates of every box and edge, encoded. */
static gl_status layout_job(void *ctx, gl_strbuf *out)
{
    const gv_work *w = ctx;
    gv_session s;
    gl_status st = gl_rv_gv_open(&s, w->dot);
    if (st != GL_OK)
        return st;
    gl_layout *l = gl_xcalloc(1, sizeof(*l));
    extract_layout(s.graph, w->v, l);
    gl_rv_gv_close(&s);
    encode_layout(l, out);
    gl_layout_free(l);
    return GL_OK;
}

gl_status gl_render_layout(const gl_graph *g, const gl_render_opts *o, gl_layout **out,
                           gl_render_info *info)
{
    *out = NULL;
    view v;
    char *dot = NULL, *bytes = NULL;
    size_t len = 0;
    gl_render_opts terminal = o ? *o : (gl_render_opts){0};
    terminal.no_legend = true; /* the terminal view draws its own marks */
    gl_status st = gl_rv_lay_out(g, &terminal, layout_job, &v, &dot, &bytes, &len, info);
    if (st == GL_OK)
        st = decode_layout(bytes, len, out);
    free(bytes);
    free(dot);
    gl_rv_view_free(&v);
    return st;
}

void gl_layout_free(gl_layout *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n_nodes; i++)
        free(l->nodes[i].label);
    for (size_t i = 0; i < l->n_edges; i++) {
        free(l->edges[i].pts);
        free(l->edges[i].label);
    }
    free(l->nodes);
    free(l->edges);
    free(l);
}

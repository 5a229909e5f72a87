/* view_detail.c — one node: attributes, inputs and outputs with their types, producer
 * and consumers (Enter jumps to them), initializer statistics, provenance and history
 * (which step created, changed, replaced or removed it, and by which decision), every
 * decision that involved it (Enter goes to one); a fused group's members, the one the
 * selection stands for marked. The text is built once
 * when the view opens; drawing only shows the lines. */
#include "ui/ui.h"

#include "ir/calls.h"
#include "util/plural.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct detail_line {
    char *text;
    gl_ui_role role;
    uint32_t link;     /* node Enter opens; UINT32_MAX: none */
    int64_t decision;  /* record Enter goes to; -1: none */
} detail_line;

typedef struct detail_state {
    detail_line *lines;
    size_t n, cap;
    int64_t ghost_step; /* the links lead into this step's graph (-1: the shown one) */
} detail_state;

static void add_line(detail_state *s, gl_ui_role role, uint32_t link, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_line(detail_state *s, gl_ui_role role, uint32_t link, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    GL_GROW(s->lines, s->cap, s->n + 1);
    s->lines[s->n++] = (detail_line){gl_xstrdup(buf), role, link, -1};
}

static void clear_lines(detail_state *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->lines[i].text);
    s->n = 0;
}

/* ---- formatting values ---------------------------------------------------------------- */

enum { MAX_LIST = 16, MAX_CONSUMERS = 64, STATS_LIMIT = 1 << 22, FIRST_VALUES = 8 };

typedef struct textbuf {
    char buf[512];
    size_t used;
} textbuf;

static void tb_add(textbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_add(textbuf *t, const char *fmt, ...)
{
    if (t->used >= sizeof(t->buf))
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(t->buf + t->used, sizeof(t->buf) - t->used, fmt, ap);
    va_end(ap);
    t->used += w > 0 ? (size_t)w : 0;
    if (t->used > sizeof(t->buf))
        t->used = sizeof(t->buf);
}

static void tensor_header(textbuf *t, const gl_tensor *x)
{
    tb_add(t, "%s[", gl_dtype_name(x->dtype));
    for (int d = 0; d < x->rank; d++)
        tb_add(t, "%s%lld", d ? "," : "", (long long)x->dims[d]);
    tb_add(t, "]");
}

static void attr_text(textbuf *t, const gl_attr *a)
{
    switch (a->type) {
    case GL_ATTR_FLOAT: tb_add(t, "%g", a->f); break;
    case GL_ATTR_INT: tb_add(t, "%lld", (long long)a->i); break;
    case GL_ATTR_STRING: tb_add(t, "\"%.200s\"", a->s.data ? (const char *)a->s.data : ""); break;
    case GL_ATTR_INTS:
    case GL_ATTR_FLOATS:
        tb_add(t, "[");
        for (size_t i = 0; i < a->n && i < MAX_LIST; i++) {
            if (a->type == GL_ATTR_INTS)
                tb_add(t, "%s%lld", i ? "," : "", (long long)a->ints[i]);
            else
                tb_add(t, "%s%g", i ? "," : "", a->floats[i]);
        }
        tb_add(t, a->n > MAX_LIST ? ", ... %zu in all]" : "]", a->n);
        break;
    case GL_ATTR_STRINGS:
        tb_add(t, "%zu %s", a->n, gl_noun((long long)a->n, "string", "strings"));
        break;
    case GL_ATTR_TENSOR:
        if (a->t)
            tensor_header(t, a->t);
        break;
    case GL_ATTR_GRAPH:
        tb_add(t, "subgraph '%s' (%zu %s)", a->g && a->g->name ? a->g->name : "",
               a->g ? a->g->live_nodes : 0,
               gl_noun(a->g ? (long long)a->g->live_nodes : 0, "node", "nodes"));
        break;
    case GL_ATTR_GRAPHS:
        tb_add(t, "%zu %s", a->n, gl_noun((long long)a->n, "subgraph", "subgraphs"));
        break;
    case GL_ATTR_TENSORS:
        tb_add(t, "%zu %s", a->n, gl_noun((long long)a->n, "tensor", "tensors"));
        break;
    default: tb_add(t, "(attribute type %d)", (int)a->type); break;
    }
}

/* "initializer: 216 values, min -0.41 max 0.39 mean 0.012" and the first values. */
static void add_init_stats(detail_state *s, const gl_tensor *x)
{
    textbuf t = {.used = 0};
    tensor_header(&t, x);
    size_t bytes = gl_tensor_nbytes(x);
    tb_add(&t, " initializer, %lld values, %zu bytes", (long long)x->count, bytes);
    if (x->dtype == GL_DT_STRING || x->count == 0 || !gl_tensor_data(x)) {
        add_line(s, GL_ROLE_DIM, UINT32_MAX, "      %s", t.buf);
        return;
    }
    /* statistics over at most STATS_LIMIT values: a 100 MB weight stays instant */
    int64_t n = x->count < STATS_LIMIT ? x->count : STATS_LIMIT;
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    int64_t nan = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = gl_tensor_get_f64(x, i);
        if (isnan(v)) {
            nan++;
            continue;
        }
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        sum += v;
    }
    add_line(s, GL_ROLE_DIM, UINT32_MAX, "      %s", t.buf);
    t.used = 0;
    if (n > nan)
        tb_add(&t, "min %g  max %g  mean %g", lo, hi, sum / (double)(n - nan));
    if (nan)
        tb_add(&t, "  %lld NaN", (long long)nan);
    if (n < x->count)
        tb_add(&t, "  (of the first %lld values)", (long long)n);
    add_line(s, GL_ROLE_DIM, UINT32_MAX, "      %s", t.buf);
    t.used = 0;
    tb_add(&t, "first:");
    for (int64_t i = 0; i < x->count && i < FIRST_VALUES; i++)
        tb_add(&t, " %g", gl_tensor_get_f64(x, i));
    if (x->count > FIRST_VALUES)
        tb_add(&t, " ...");
    add_line(s, GL_ROLE_DIM, UINT32_MAX, "      %s", t.buf);
}

static void value_line(detail_state *s, size_t slot, const gl_value *v, const char *extra)
{
    char type[128];
    if (!v) {
        add_line(s, GL_ROLE_DIM, UINT32_MAX, "  %zu (omitted)", slot);
        return;
    }
    gl_type_format(&v->type, type, sizeof(type));
    add_line(s, GL_ROLE_NORMAL, UINT32_MAX, "  %zu %s  %s%s%s%s", slot, v->name, type,
             v->is_input ? "  graph input" : "", v->n_output_refs ? "  graph output" : "",
             extra);
}

/* ---- sections ------------------------------------------------------------------------- */

static void add_attributes(detail_state *s, const gl_node *n)
{
    add_line(s, GL_ROLE_HEADER, UINT32_MAX, "attributes (%zu)", n->n_attrs);
    for (size_t i = 0; i < n->n_attrs; i++) {
        textbuf t = {.used = 0};
        attr_text(&t, &n->attrs[i]);
        add_line(s, GL_ROLE_NORMAL, UINT32_MAX, "  %-16s %s", n->attrs[i].name, t.buf);
    }
}

static void add_inputs(detail_state *s, const gl_node *n)
{
    add_line(s, GL_ROLE_HEADER, UINT32_MAX, "inputs (%zu)", n->n_inputs);
    for (size_t i = 0; i < n->n_inputs; i++) {
        const gl_value *v = n->inputs[i];
        value_line(s, i, v, v && v->outer ? "  from the enclosing graph" : "");
        if (v && v->producer)
            add_line(s, GL_ROLE_LINK, v->producer->id, "      from %s '%s'",
                     v->producer->op_type, v->producer->name);
        if (v && v->init)
            add_init_stats(s, v->init);
    }
    for (size_t i = 0; i < n->n_implicit; i++)
        add_line(s, GL_ROLE_DIM, UINT32_MAX, "  implicit %s (read by a subgraph)",
                 n->implicit[i]->name);
}

static void add_outputs(detail_state *s, const gl_node *n)
{
    add_line(s, GL_ROLE_HEADER, UINT32_MAX, "outputs (%zu)", n->n_outputs);
    for (size_t o = 0; o < n->n_outputs; o++) {
        const gl_value *v = n->outputs[o];
        value_line(s, o, v, "");
        size_t shown = 0;
        for (size_t u = 0; v && u < v->n_uses; u++) {
            const gl_node *c = v->uses[u].node;
            bool seen = false; /* a node reading the value twice is listed once */
            for (size_t p = 0; p < u && !seen; p++)
                seen = v->uses[p].node == c;
            if (seen)
                continue;
            if (shown++ == MAX_CONSUMERS) {
                add_line(s, GL_ROLE_DIM, UINT32_MAX, "      ... %zu uses in all", v->n_uses);
                break;
            }
            add_line(s, GL_ROLE_LINK, c->id, "      to %s '%s'%s", c->op_type, c->name,
                     v->uses[u].slot == GL_USE_IMPLICIT ? " (in a subgraph)" : "");
        }
        if (v && !v->n_uses && !v->n_output_refs)
            add_line(s, GL_ROLE_DIM, UINT32_MAX, "      (unused)");
    }
}

static void add_provenance(detail_state *s, const gl_node *n)
{
    const gl_graph *g = n->graph;
    textbuf t = {.used = 0};
    for (size_t i = 0; i < n->prov.n_origins && i < 8; i++) {
        uint32_t o = n->prov.origins[i];
        tb_add(&t, "%s'%s'", i ? ", " : "", o < g->n_origin_names && g->origin_names[o]
                                                 ? g->origin_names[o] : "?");
    }
    if (n->prov.n_origins > 8)
        tb_add(&t, " +%zu more", n->prov.n_origins - 8);
    add_line(s, GL_ROLE_HEADER, UINT32_MAX, "provenance");
    add_line(s, GL_ROLE_NORMAL, UINT32_MAX, "  stands for loaded node%s %s",
             n->prov.n_origins == 1 ? "" : "s", n->prov.n_origins ? t.buf : "(none)");
    if (n->prov.decision >= 0)
        add_line(s, GL_ROLE_NORMAL, UINT32_MAX, "  made by decision #%lld",
                 (long long)n->prov.decision);
}

/* The model whose graph holds the node shown. */
static const gl_model *shown_model(const gl_ui *ui, int64_t ghost_step)
{
    if (ghost_step < 0 && ui->replay.model)
        return ui->replay.model;
    size_t k = ghost_step >= 0 ? (size_t)ghost_step : ui->step;
    return ui->pipeline && k < ui->pipeline->n_steps ? ui->pipeline->steps[k].model : NULL;
}

/* A fused group (a call of a graphlab.fused function): its members, the body's nodes
 * under their own names. Following a node into its group (gl_ui_follow) keeps the
 * selection's origin: the member of that name is the one marked. */
static void add_members(detail_state *s, const gl_ui *ui, const gl_node *n)
{
    const gl_model *m = shown_model(ui, s->ghost_step);
    if (!m || strcmp(n->domain, "graphlab.fused") != 0)
        return;
    const gl_function *f = gl_called_function(m, n);
    if (!f || !f->body)
        return;
    const gl_graph *g = n->graph;
    const char *followed = s->ghost_step < 0 && ui->sel.node_id == n->id &&
                                   ui->sel.followed && ui->sel.origin < g->n_origin_names
                               ? g->origin_names[ui->sel.origin] : NULL;
    add_line(s, GL_ROLE_HEADER, UINT32_MAX, "fused group: %zu members (the body of %s:%s)",
             f->body->live_nodes, f->domain, f->name);
    for (size_t i = 0; i < f->body->n_nodes; i++) {
        const gl_node *b = f->body->nodes[i];
        if (!b)
            continue;
        bool mark = followed && b->name && strcmp(b->name, followed) == 0;
        add_line(s, mark ? GL_ROLE_CHANGED : GL_ROLE_NORMAL, UINT32_MAX, "%s %-14s '%s'%s",
                 mark ? ">" : " ", b->op_type, b->name,
                 mark ? "  <- the node followed into the group" : "");
    }
}

static void add_history(detail_state *s, const gl_ui *ui, const gl_node *n)
{
    gl_history_entry *h;
    size_t count = gl_ui_node_history(ui, n->id, &h);
    add_line(s, GL_ROLE_HEADER, UINT32_MAX, "history");
    for (size_t i = 0; i < count; i++) {
        char label[96];
        gl_snapshot_label(ui->pipeline, h[i].step, label, sizeof(label));
        gl_ui_role role = h[i].gone                               ? GL_ROLE_REMOVED
                          : h[i].kind == GL_CHANGE_MODIFIED       ? GL_ROLE_CHANGED
                          : h[i].step > 0                         ? GL_ROLE_ADDED
                                                                  : GL_ROLE_NORMAL;
        add_line(s, role, UINT32_MAX, "  %-20s %s", label, h[i].text);
    }
    free(h);
}

/* Every record that involved the node, refusals and notes included, at every step (the
 * history above only has the steps that changed it). */
static void add_decisions(detail_state *s, const gl_ui *ui, const gl_node *n)
{
    size_t *idx;
    size_t count = gl_ui_node_decisions(ui, n->id, &idx);
    add_line(s, GL_ROLE_HEADER, UINT32_MAX, "decisions (%zu; Enter goes to one)", count);
    if (!count)
        add_line(s, GL_ROLE_DIM, UINT32_MAX, "  (no pass recorded anything about this node)");
    for (size_t i = 0; i < count; i++) {
        const gl_decision *d = &ui->pipeline->log.items[idx[i]];
        char label[96];
        gl_snapshot_label(ui->pipeline, (size_t)d->step, label, sizeof(label));
        gl_ui_role role = d->verdict == GL_APPLIED   ? GL_ROLE_ADDED
                          : d->verdict == GL_REFUSED ? GL_ROLE_REMOVED
                                                     : GL_ROLE_DIM;
        add_line(s, role, UINT32_MAX, "  %-20s #%-4lld %-7s %s: %s", label, (long long)d->id,
                 gl_verdict_name(d->verdict), d->rule ? d->rule : "",
                 d->reason ? d->reason : "");
        s->lines[s->n - 1].decision = d->id;
    }
    free(idx);
}

/* The node shown: the selection in the shown graph, or a node of an earlier step. */
static const gl_node *shown_node(gl_ui *ui, gl_graph_index *scratch)
{
    if (ui->ghost_step < 0)
        return gl_graph_index_node(&ui->index, ui->sel.node_id);
    const gl_graph *g = gl_ui_step_graph(ui, (size_t)ui->ghost_step);
    if (!g)
        return NULL;
    gl_graph_index_build(scratch, g);
    return gl_graph_index_node(scratch, ui->ghost_id);
}

static void detail_open(gl_ui *ui, gl_view *v)
{
    detail_state *s = v->state;
    if (!s)
        s = v->state = gl_xcalloc(1, sizeof(*s));
    clear_lines(s);
    v->selected = v->scroll = 0;
    s->ghost_step = ui->ghost_step;
    gl_graph_index scratch = {0};
    const gl_node *n = shown_node(ui, &scratch);
    if (!n) {
        add_line(s, GL_ROLE_DIM, UINT32_MAX, "(no node selected in this step)");
        gl_graph_index_free(&scratch);
        return;
    }
    char label[96];
    gl_snapshot_label(ui->pipeline, s->ghost_step >= 0 ? (size_t)s->ghost_step : ui->step,
                      label, sizeof(label));
    add_line(s, GL_ROLE_HEADER, UINT32_MAX, "%s%s%s '%s'", n->domain,
             *n->domain ? ":" : "", n->op_type, n->name);
    add_line(s, GL_ROLE_DIM, UINT32_MAX, "  node %u in %s%s%s", n->id, label,
             s->ghost_step >= 0 ? " (not in the step shown: it was removed)" : "",
             n->name_generated ? ", name generated at load" : "");
    add_members(s, ui, n);
    add_attributes(s, n);
    add_inputs(s, n);
    add_outputs(s, n);
    add_provenance(s, n);
    add_history(s, ui, n);
    add_decisions(s, ui, n);
    gl_graph_index_free(&scratch);
}

static void detail_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    detail_state *s = v->state;
    if (!s)
        return;
    v->height = height;
    gl_ui_clamp(v, (int)s->n, height);
    for (int row = 0; row < height && v->scroll + row < (int)s->n; row++) {
        const detail_line *l = &s->lines[v->scroll + row];
        bool sel = v->scroll + row == v->selected;
        int attr = gl_ui_attr(ui, sel ? GL_ROLE_SELECTED : l->role);
        int w = gl_ui_put_at(top + row, left, width, attr, l->text, v->hscroll);
        if (sel)
            gl_ui_fill(top + row, left + w, width - w, attr);
    }
}

static unsigned detail_request(gl_ui *ui, gl_view *v, gl_request r)
{
    detail_state *s = v->state;
    if (!s)
        return GL_REDRAW_NONE;
    if (r == GL_REQ_ENTER) {
        const detail_line *l = v->selected >= 0 && (size_t)v->selected < s->n
                                   ? &s->lines[v->selected] : NULL;
        if (l && l->decision >= 0)
            return gl_ui_goto_decision(ui, l->decision);
        if (!l || l->link == UINT32_MAX) {
            gl_ui_set_status(ui, "Enter on a 'from' or 'to' line opens that node, on a "
                             "decision goes to it");
            return GL_REDRAW_STATUS;
        }
        return gl_ui_open_detail(ui, l->link, s->ghost_step);
    }
    return gl_ui_list_move(v, r, (int)s->n);
}

static const char *line_text(int row, void *ctx)
{
    const detail_state *s = ctx;
    return s->lines[row].text;
}

static bool detail_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    detail_state *s = v->state;
    return s && gl_ui_list_find_text(v, (int)s->n, ui->search, dir, inclusive, line_text, s);
}

static unsigned detail_click(gl_ui *ui, gl_view *v, int row, int col)
{
    detail_state *s = v->state;
    return s ? gl_ui_list_click(v, (int)s->n, 0, row) : GL_REDRAW_NONE;
}

static void detail_close(gl_ui *ui, gl_view *v)
{
    detail_state *s = v->state;
    if (s) {
        clear_lines(s);
        free(s->lines);
    }
    free(s);
    v->state = NULL;
}

const gl_view_ops gl_view_detail_ops = {
    .name = "detail",
    .open = detail_open,
    .draw = detail_draw,
    .request = detail_request,
    .close = detail_close,
    .find = detail_find,
    .click = detail_click,
};

/* view_nodes.c — the graph at the current step as a list in graph (topological) order:
 * diff mark, op, name, output types; a header with the count per op. The rows are the
 * ui's graph index (no copy); only the visible rows are formatted. */
#include "ui/ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HEADER_ROWS = 2, MAX_OP_W = 24, MAX_NAME_W = 40 };

typedef struct nodes_state {
    int op_w;       /* the op column's width for this graph */
    bool utf8;
    int longest;    /* the longest name's columns */
} nodes_state;

/* The name column: as wide as the longest name up to MAX_NAME_W, and wider by what h/L
 * scrolled, so scrolling right reads the end of long names (cut with '…' until then). */
static int name_width(const nodes_state *s, const gl_view *v)
{
    int cap = MAX_NAME_W + v->hscroll;
    return s->longest < cap ? s->longest : cap;
}

/* ui->sel is the one truth (other views move it too): the row follows it. */
static void adopt_selection(gl_ui *ui, gl_view *v)
{
    uint32_t id = ui->sel.node_id;
    if (id < ui->index.n_ids && ui->index.row_of_id[id] != UINT32_MAX)
        v->selected = (int)ui->index.row_of_id[id];
}

static void nodes_open(gl_ui *ui, gl_view *v)
{
    nodes_state *s = v->state;
    if (!s)
        s = v->state = gl_xcalloc(1, sizeof(*s));
    /* the index measured the columns once for its graph (a big one takes a while) */
    int op_cols = ui->index.op_cols, name_cols = ui->index.name_cols;
    s->op_w = op_cols < 2 ? 2 : op_cols < MAX_OP_W ? op_cols : MAX_OP_W;
    s->longest = name_cols < 4 ? 4 : name_cols;
    s->utf8 = ui->utf8;
    adopt_selection(ui, v);
    gl_ui_clamp(v, (int)ui->index.n_rows, v->height);
}

/* "374 nodes: Conv 12, Relu 10, Add 5, ..." (as much as fits). */
static void header_text(const gl_ui *ui, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%zu nodes", ui->index.n_rows);
    for (size_t i = 0; i < ui->index.n_ops && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%.*s %zu", i ? ", " : ": ",
                         ui->index.ops[i].op_len, ui->index.ops[i].op, ui->index.ops[i].count);
        used += w > 0 ? (size_t)w : 0;
    }
}

static char mark_of(const gl_ui *ui, const gl_node *n, gl_ui_role *role)
{
    const gl_node_change *c = ui->diff ? gl_diff_find_new(ui->diff, n->id) : NULL;
    *role = GL_ROLE_NORMAL;
    for (size_t i = 0; i < ui->n_marks; i++)
        if (ui->marks[i] == n->id) {
            *role = GL_ROLE_LINK;
            return '*';
        }
    if (!c)
        return ' ';
    switch (c->kind) {
    case GL_CHANGE_ADDED: *role = GL_ROLE_ADDED; return '+';
    case GL_CHANGE_REPLACED: *role = GL_ROLE_ADDED; return '>';
    case GL_CHANGE_MODIFIED: *role = GL_ROLE_CHANGED; return '~';
    default: return ' ';
    }
}

/* The row of a node: "+ Conv      conv1      float[1,8,32,32]". */
static void row_text(const nodes_state *s, int name_w, const gl_node *n, char mark, char *buf,
                     size_t len)
{
    char op[128], types[256] = "", t[96];
    gl_ui_op_text(n, op, sizeof(op));
    size_t used = 0;
    for (size_t o = 0; o < n->n_outputs && used < sizeof(types); o++) {
        const gl_value *out = n->outputs[o];
        if (!out)
            continue;
        gl_type_format(&out->type, t, sizeof(t));
        int w = snprintf(types + used, sizeof(types) - used, "%s%s", used ? ", " : "", t);
        used += w > 0 ? (size_t)w : 0;
    }
    /* pad by columns: names may be UTF-8, and are cut to the column with a '…' */
    char name[512];
    gl_ui_clip(n->name, 0, name_w, s->utf8, name, sizeof(name));
    int op_pad = s->op_w - gl_ui_text_width(op), name_pad = name_w - gl_ui_text_width(name);
    snprintf(buf, len, "%c %.*s%*s  %s%*s  %s", mark, 120, op, op_pad > 0 ? op_pad : 0, "",
             name, name_pad > 0 ? name_pad : 0, "", types);
}

/* The footer: the selected node's op, full name and domain (ai.onnx when the node
 * names none). */
static void make_footer(const gl_ui *ui, const gl_view *v, int height, int width,
                        gl_ui_footer *f)
{
    char text[2048];
    int n_rows = (int)ui->index.n_rows;
    bool any = v->selected >= 0 && v->selected < n_rows;
    if (any) {
        const gl_node *n = ui->index.rows[v->selected];
        snprintf(text, sizeof(text), "%s '%s' (domain %s)", n->op_type, n->name,
                 *n->domain ? n->domain : "ai.onnx");
    }
    gl_ui_footer_make(f, ui, v, n_rows, any ? text : NULL, height, width);
}

static void nodes_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    nodes_state *s = v->state;
    char buf[1024];
    if (!s || height < 1)
        return;
    adopt_selection(ui, v);
    header_text(ui, buf, sizeof(buf));
    gl_ui_put(top, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf);
    if (height < HEADER_ROWS + 2)
        return;
    int name_w = name_width(s, v);
    snprintf(buf, sizeof(buf), "  %-*s  %-*s  outputs", s->op_w, "op", name_w, "name");
    gl_ui_put_at(top + 1, left, width, gl_ui_attr(ui, GL_ROLE_DIM), buf, v->hscroll);
    int n_rows = (int)ui->index.n_rows;
    gl_ui_clamp(v, n_rows, v->height); /* the selection in range, for the footer */
    gl_ui_footer footer;
    make_footer(ui, v, height, width, &footer);
    v->height = height - HEADER_ROWS - footer.lines;
    gl_ui_clamp(v, n_rows, v->height);
    for (int row = 0; row < v->height && v->scroll + row < n_rows; row++) {
        int r = v->scroll + row;
        const gl_node *n = ui->index.rows[r];
        gl_ui_role role;
        char mark = mark_of(ui, n, &role);
        row_text(s, name_w, n, mark, buf, sizeof(buf));
        char backend[128];
        if (gl_ui_run_backend(ui, n, backend, sizeof(backend))) { /* the last run's (r) */
            size_t used = strlen(buf);
            snprintf(buf + used, sizeof(buf) - used, "  [%s]", backend);
        }
        int attr = r == v->selected ? gl_ui_attr(ui, GL_ROLE_SELECTED) : gl_ui_attr(ui, role);
        int w = gl_ui_put_at(top + HEADER_ROWS + row, left, width, attr, buf, v->hscroll);
        if (r == v->selected)
            gl_ui_fill(top + HEADER_ROWS + row, left + w, width - w, attr);
    }
    if (n_rows == 0)
        gl_ui_put(top + HEADER_ROWS, left, width, gl_ui_attr(ui, GL_ROLE_DIM),
                  "(this graph has no nodes)");
    gl_ui_footer_draw(&footer, ui, top, left, height, width);
}

static void sync_selection(gl_ui *ui, gl_view *v)
{
    if (v->selected >= 0 && (size_t)v->selected < ui->index.n_rows)
        gl_ui_select_node(ui, ui->index.rows[v->selected]->id);
}

static unsigned nodes_request(gl_ui *ui, gl_view *v, gl_request r)
{
    adopt_selection(ui, v);
    unsigned flags = gl_ui_list_move(v, r, (int)ui->index.n_rows);
    if (flags) {
        sync_selection(ui, v);
        return flags;
    }
    if (r == GL_REQ_ENTER && ui->index.n_rows) {
        sync_selection(ui, v);
        return gl_ui_open_detail(ui, ui->sel.node_id, -1);
    }
    return GL_REDRAW_NONE;
}

typedef struct nodes_match {
    const gl_ui *ui;
} nodes_match;

static bool row_matches(int row, void *ctx)
{
    const gl_ui *ui = ((nodes_match *)ctx)->ui;
    const gl_node *n = ui->index.rows[row];
    if (ui->search[0])
        return gl_ui_node_matches(n, ui->search);
    for (size_t i = 0; i < ui->n_marks; i++)
        if (ui->marks[i] == n->id)
            return true;
    return false;
}

static bool nodes_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    nodes_match m = {ui};
    if (!ui->prompt)
        adopt_selection(ui, v);
    if (!gl_ui_list_find(v, (int)ui->index.n_rows, dir, inclusive, row_matches, &m))
        return false;
    sync_selection(ui, v);
    return true;
}

static unsigned nodes_click(gl_ui *ui, gl_view *v, int row, int col)
{
    unsigned flags = gl_ui_list_click(v, (int)ui->index.n_rows, HEADER_ROWS, row);
    if (flags != GL_REDRAW_NONE)
        sync_selection(ui, v);
    return flags;
}

static void nodes_close(gl_ui *ui, gl_view *v)
{
    free(v->state);
    v->state = NULL;
}

const gl_view_ops gl_view_nodes_ops = {
    .name = "nodes",
    .open = nodes_open,
    .draw = nodes_draw,
    .request = nodes_request,
    .close = nodes_close,
    .find = nodes_find,
    .click = nodes_click,
};

/* view_model.c — the model itself (`i`), what `graphlab info` prints and more: IR version,
 * opset imports, producer, domain, model version, doc string, the graph's inputs and
 * outputs with their types (symbolic dims by name), initializers and their bytes,
 * metadata_props, model-local functions and the op histogram. The graph's part is the
 * shown step's (its ops, its outputs' inferred shapes); the rest is the file's. The
 * counts come from driver/model_summary.h, as info's do. Enter on an op lists its nodes. */
#include "ui/ui.h"

#include "driver/model_summary.h"
#include "util/plural.h"
#include "util/bytes.h"
#include "util/escape.h"
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LABEL_W = 14, NAME_W_MAX = 40 };

typedef struct model_line {
    char *text;
    gl_ui_role role;
    char *op; /* an op histogram row: the op type Enter searches for; else NULL */
} model_line;

typedef struct model_state {
    model_line *lines;
    size_t n, cap;
    char file_size[32]; /* "7.2 KB"; "" when the file cannot be read */
} model_state;

static void free_lines(model_state *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->lines[i].text);
        free(s->lines[i].op);
    }
    free(s->lines);
    *s = (model_state){0};
}

static model_line *add(model_state *s, gl_ui_role role, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static model_line *add(model_state *s, gl_ui_role role, const char *fmt, ...)
{
    gl_strbuf b = {0};
    va_list ap;
    va_start(ap, fmt);
    gl_sb_vprintf(&b, fmt, ap);
    va_end(ap);
    GL_GROW(s->lines, s->cap, s->n + 1);
    model_line *l = &s->lines[s->n++];
    *l = (model_line){b.s ? gl_sb_take(&b) : gl_xstrdup(""), role, NULL};
    return l;
}

/* "label         value", a missing value as "-"; a value of several lines (a doc
 * string) one row each, under the first. */
static void add_field(model_state *s, const char *label, const char *value)
{
    if (!value || !*value) {
        add(s, GL_ROLE_NORMAL, "%-*s -", LABEL_W, label);
        return;
    }
    for (const char *p = value; *p;) {
        size_t len = strcspn(p, "\n");
        add(s, GL_ROLE_NORMAL, "%-*s %.*s", LABEL_W, p == value ? label : "", (int)len, p);
        p += len + (p[len] == '\n');
    }
}

static void add_opsets(model_state *s, const gl_model *m)
{
    gl_strbuf b = {0};
    for (size_t i = 0; i < m->n_opsets; i++)
        gl_sb_printf(&b, "%s%s %lld", i ? ", " : "", gl_domain_display(m->opsets[i].domain),
                     (long long)m->opsets[i].version);
    add_field(s, "opsets", b.s);
    gl_sb_free(&b);
}

/* The columns a name takes on the screen: escaped (gl_ui_put escapes what it draws). */
static int shown_width(const char *name)
{
    return gl_ui_text_width(gl_esc(name));
}

/* The widest name of the graph's inputs and outputs, so their types line up. */
static int value_name_width(const gl_graph *g)
{
    int w = LABEL_W - 2;
    for (int side = 0; side < 2; side++) {
        gl_value *const *vals = side ? g->outputs : g->inputs;
        size_t n = side ? g->n_outputs : g->n_inputs;
        for (size_t i = 0; i < n; i++) {
            int len = shown_width(vals[i]->name);
            w = len > w ? (len < NAME_W_MAX ? len : NAME_W_MAX) : w;
        }
    }
    return w;
}

static void add_values(model_state *s, const char *what, gl_value *const *vals, size_t n,
                       int name_w)
{
    add(s, GL_ROLE_HEADER, "%s (%zu)", what, n);
    for (size_t i = 0; i < n; i++) {
        char type[256];
        gl_type_format(&vals[i]->type, type, sizeof(type));
        int pad = name_w - shown_width(vals[i]->name);
        add(s, GL_ROLE_NORMAL, "  %s%*s %s%s", vals[i]->name, pad > 0 ? pad : 0, "", type,
            vals[i]->init ? "  (has a default)" : "");
    }
}

static void add_metadata(model_state *s, const gl_model *m)
{
    add(s, GL_ROLE_HEADER, "metadata_props (%zu)", m->n_metadata);
    for (size_t i = 0; i < m->n_metadata; i++)
        add(s, GL_ROLE_NORMAL, "  %s = %s", m->metadata[i].key, m->metadata[i].value);
}

/* "(a, b)" of a function's formal parameters. */
static void put_names(gl_strbuf *b, gl_value *const *vals, size_t n)
{
    gl_sb_putc(b, '(');
    for (size_t i = 0; i < n; i++)
        gl_sb_printf(b, "%s%s", i ? ", " : "", vals[i]->name);
    gl_sb_putc(b, ')');
}

static void add_functions(model_state *s, const gl_model *m)
{
    add(s, GL_ROLE_HEADER, "functions (%zu)", m->n_functions);
    for (size_t i = 0; i < m->n_functions; i++) {
        const gl_function *f = &m->functions[i];
        gl_strbuf b = {0};
        gl_sb_printf(&b, "  %s:%s", gl_domain_display(f->domain), f->name);
        put_names(&b, f->body->inputs, f->body->n_inputs);
        gl_sb_puts(&b, " -> ");
        put_names(&b, f->body->outputs, f->body->n_outputs);
        gl_sb_printf(&b, ", %zu %s", f->body->live_nodes,
                     gl_noun((long long)f->body->live_nodes, "node", "nodes"));
        for (size_t a = 0; a < f->n_attributes; a++)
            gl_sb_printf(&b, "%s%s", a ? ", " : "; attributes ", f->attributes[a]);
        add(s, GL_ROLE_NORMAL, "%s", b.s);
        gl_sb_free(&b);
    }
}

static void add_ops(model_state *s, const gl_model_summary *sum, int name_w)
{
    for (size_t i = 0; i < sum->n_ops; i++) { /* the counts line up past the longest op */
        int len = shown_width(sum->ops[i].op);
        name_w = len > name_w ? (len < NAME_W_MAX ? len : NAME_W_MAX) : name_w;
    }
    add(s, GL_ROLE_HEADER, "ops (%zu kinds, %zu nodes%s)", sum->n_ops, sum->node_count,
        sum->node_count_total != sum->node_count ? ", more in subgraphs" : "");
    for (size_t i = 0; i < sum->n_ops; i++) {
        int pad = name_w - shown_width(sum->ops[i].op);
        model_line *l = add(s, GL_ROLE_NORMAL, "  %s%*s %zu", sum->ops[i].op, pad > 0 ? pad : 0,
                            "", sum->ops[i].count);
        const char *colon = strrchr(sum->ops[i].op, ':');
        l->op = gl_xstrdup(colon ? colon + 1 : sum->ops[i].op);
    }
}

static void add_graph(model_state *s, const gl_graph *g, const gl_model_summary *sum)
{
    char weights[32];
    gl_bytes_text((uint64_t)sum->initializer_bytes, weights, sizeof(weights));
    add(s, GL_ROLE_NORMAL, "%-*s %s: %zu %s, %zu %s (%s)", LABEL_W, "graph",
        g->name && *g->name ? g->name : "(unnamed)", sum->node_count,
        gl_noun((long long)sum->node_count, "node", "nodes"), sum->initializers,
        gl_noun((long long)sum->initializers, "initializer", "initializers"), weights);
}

static void model_open(gl_ui *ui, gl_view *v)
{
    model_state *s = v->state;
    if (!s)
        s = v->state = gl_xcalloc(1, sizeof(*s));
    free_lines(s);
    const gl_graph *g = ui->pipeline ? gl_ui_graph(ui) : NULL;
    const gl_model *m = g ? g->model : NULL;
    if (!m)
        return;
    gl_model_summary sum;
    gl_model_summarize(m, &sum);
    if (sum.file_bytes >= 0)
        gl_bytes_text((uint64_t)sum.file_bytes, s->file_size, sizeof(s->file_size));
    char text[512];
    snprintf(text, sizeof(text), "%lld", (long long)m->ir_version);
    add_field(s, "ir version", text);
    add_opsets(s, m);
    gl_model_producer(m, text, sizeof(text));
    add_field(s, "producer", text);
    add_field(s, "domain", m->domain);
    snprintf(text, sizeof(text), "%lld", (long long)m->model_version);
    add_field(s, "model version", m->has_model_version ? text : NULL);
    add_field(s, "doc string", m->doc_string);
    add_graph(s, g, &sum);
    int name_w = value_name_width(g);
    add_values(s, "inputs", g->inputs, g->n_inputs, name_w);
    add_values(s, "outputs", g->outputs, g->n_outputs, name_w);
    add_metadata(s, m);
    add_functions(s, m);
    add_ops(s, &sum, name_w);
    gl_model_summary_free(&sum);
}

/* The model's file by its last two names ("…/resnet50/model.onnx": the folder often
 * names the model), so that the title fits and reads the same wherever the file is. */
static const char *short_path(const char *path, bool *cut)
{
    const char *last = path ? strrchr(path, '/') : NULL;
    const char *before = last;
    while (before && before > path && before[-1] != '/')
        before--;
    *cut = before && before > path;
    return !path ? "" : *cut ? before : path;
}

/* "model …/data/model_view.onnx (699 B) at step 6/16 (06-transpose-push)" */
static void title(const gl_ui *ui, const model_state *s, char *buf, size_t len)
{
    const char *size = s->file_size;
    char label[96];
    bool cut;
    const char *path = short_path(ui->model_path, &cut);
    gl_snapshot_label(ui->pipeline, ui->step, label, sizeof(label));
    snprintf(buf, len, "model %s%s%s%s%s at step %zu/%zu (%s)", cut ? (ui->utf8 ? "…/" : ".../")
             : "", path, *size ? " (" : "", size, *size ? ")" : "", ui->step,
             ui->pipeline->n_steps - 1, label);
}

static void model_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    model_state *s = v->state;
    char buf[1400];
    if (!s || height < 1 || !ui->pipeline)
        return;
    title(ui, s, buf, sizeof(buf));
    gl_ui_put(top, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf);
    v->height = height - 1;
    gl_ui_clamp(v, (int)s->n, v->height);
    for (int row = 0; row < v->height && v->scroll + row < (int)s->n; row++) {
        const model_line *l = &s->lines[v->scroll + row];
        bool sel = v->scroll + row == v->selected;
        int attr = gl_ui_attr(ui, sel ? GL_ROLE_SELECTED : l->role);
        int w = gl_ui_put_at(top + 1 + row, left, width, attr, l->text, v->hscroll);
        if (sel)
            gl_ui_fill(top + 1 + row, left + w, width - w, attr);
    }
}

static unsigned model_request(gl_ui *ui, gl_view *v, gl_request r)
{
    model_state *s = v->state;
    if (!s)
        return GL_REDRAW_NONE;
    if (r != GL_REQ_ENTER)
        return gl_ui_list_move(v, r, (int)s->n);
    const char *op = v->selected >= 0 && (size_t)v->selected < s->n ? s->lines[v->selected].op
                                                                    : NULL;
    if (!op) {
        gl_ui_set_status(ui, "Enter on an op of the histogram lists its nodes");
        return GL_REDRAW_STATUS;
    }
    return gl_ui_search_nodes(ui, op);
}

static const char *line_text(int row, void *ctx)
{
    const model_state *s = ctx;
    return s->lines[row].text;
}

static bool model_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    model_state *s = v->state;
    return s && gl_ui_list_find_text(v, (int)s->n, ui->search, dir, inclusive, line_text, s);
}

static unsigned model_click(gl_ui *ui, gl_view *v, int row, int col)
{
    (void)ui;
    (void)col;
    model_state *s = v->state;
    return s ? gl_ui_list_click(v, (int)s->n, 1, row) : GL_REDRAW_NONE;
}

static void model_close(gl_ui *ui, gl_view *v)
{
    (void)ui;
    if (v->state)
        free_lines(v->state);
    free(v->state);
    v->state = NULL;
}

const gl_view_ops gl_view_model_ops = {
    .name = "model",
    .open = model_open,
    .draw = model_draw,
    .request = model_request,
    .close = model_close,
    .find = model_find,
    .click = model_click,
};

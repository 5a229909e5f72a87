/* dot.c — stage 3: a view as DOT text, and the path every public function starts from
 * (choose, build, print: gl_rv_make_dot). The DOT a user sees is exactly what is laid out.
 */
#include "render/stages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REMOVED_NAMES 10  /* removed nodes named in the graph label */

/* ==== styles ============================================================================ */

#define MAX_GHOSTS 40          /* removed nodes drawn as ghosts before one "+N more" */

typedef struct box_style {
    const char *shape, *style, *fill, *fontsize, *legend;
} box_style;

static const box_style BOX_STYLES[] = {
    [GL_BOX_NODE] = {"box", "rounded,filled", "#ffffff", "10", "node"},
    [GL_BOX_INPUT] = {"ellipse", "filled", "#d3edd1", "10", "graph input"},
    [GL_BOX_OUTPUT] = {"ellipse", "filled", "#e2dbf3", "10", "graph output"},
    [GL_BOX_CONSTANT] = {"box", "filled", "#eeeeee", "8", "constant"},
    [GL_BOX_GROUP] = {"box3d", "filled", "#eaf0f8", "10", "group of nodes"},
    [GL_BOX_STUB] = {"box", "dashed", "#ffffff", "9", "\xE2\x80\xA6 left out"},
};

/* Text prefix and colours of the diff marks: the prefix carries the meaning, the colour
 * only helps. */
typedef struct mark_style {
    const char *prefix, *fill, *pen, *legend;
} mark_style;

static const mark_style MARK_STYLES[] = {
    [GL_MARK_NONE] = {"", NULL, NULL, NULL},
    [GL_MARK_ADDED] = {"+ ", "#c8efc4", "#2e7d32", "+ added"},
    [GL_MARK_MODIFIED] = {"~ ", "#ffe2a6", "#b26a00", "~ modified"},
    [GL_MARK_REPLACED] = {"> ", "#cdddfc", "#1f4fa0", "> replaces removed nodes"},
};

/* A removed node's ghost: grey and dashed, so it reads as gone, not as part of the graph. */
static const char GHOST_STYLE[] = "shape=box, style=\"rounded,dashed,filled\", "
                                  "fillcolor=\"#f4f4f4\", color=\"#9e9e9e\", "
                                  "fontcolor=\"#757575\", fontsize=9";
static const char GHOST_LEGEND[] = "- removed (ghost)";

const char *gl_rv_mark_prefix(gl_render_mark m)
{
    return (size_t)m < GL_ARRAY_LEN(MARK_STYLES) ? MARK_STYLES[m].prefix : "";
}

/* ==== DOT text =========================================================================== */

static size_t count_removed(const gl_diff *d);

static void put_removed_line(gl_strbuf *t, const gl_diff *d)
{
    size_t total = count_removed(d);
    if (!total)
        return;
    gl_sb_puts(t, "\nremoved: ");
    size_t shown = 0;
    for (size_t c = 0; c < d->n_nodes && shown < MAX_REMOVED_NAMES; c++) {
        const gl_node_change *ch = &d->nodes[c];
        for (size_t k = 0; ch->kind == GL_CHANGE_REMOVED && k < ch->n_old &&
                           shown < MAX_REMOVED_NAMES; k++, shown++) {
            gl_sb_puts(t, shown ? ", '" : "'");
            gl_rv_put_display(t, ch->old_names[k] ? ch->old_names[k] : "", 40);
            gl_sb_putc(t, '\'');
        }
    }
    if (total > shown)
        gl_sb_printf(t, " +%zu more", total - shown);
}

static void put_legend_line(gl_strbuf *t, const view *v)
{
    bool used[GL_ARRAY_LEN(MARK_STYLES)] = {false};
    for (size_t i = 0; i < v->n_boxes; i++)
        used[v->boxes[i].mark] = true;
    bool any = false;
    for (size_t m = GL_MARK_ADDED; m < GL_ARRAY_LEN(MARK_STYLES); m++) {
        if (!used[m])
            continue;
        gl_sb_puts(t, any ? "   " : "\nmarks: ");
        gl_sb_puts(t, MARK_STYLES[m].legend);
        any = true;
    }
}

/* Title, what was drawn, what was removed, what the marks mean: one line each. */
static char *graph_label(const view *v, const settings *set)
{
    gl_strbuf t = {0};
    if (set->title && *set->title)
        gl_rv_put_display(&t, set->title, 120);
    if (v->note[0]) {
        if (t.len)
            gl_sb_putc(&t, '\n');
        gl_sb_puts(&t, v->note);
    }
    if (set->diff)
        put_removed_line(&t, set->diff);
    put_legend_line(&t, v);
    char *s = gl_sb_take(&t);
    if (s[0] == '\n')
        memmove(s, s + 1, strlen(s));
    return s;
}

static void put_box(gl_strbuf *out, const vbox *bx, size_t idx)
{
    const box_style *st = &BOX_STYLES[bx->kind];
    const mark_style *mk = &MARK_STYLES[bx->mark];
    gl_sb_printf(out, "  b%zu [shape=%s, style=\"%s\", fillcolor=\"%s\", fontsize=%s", idx,
                 st->shape, st->style, mk->fill ? mk->fill : st->fill, st->fontsize);
    if (mk->pen)
        gl_sb_printf(out, ", color=\"%s\", penwidth=2", mk->pen);
    if (bx->focus)
        gl_sb_puts(out, ", penwidth=3");
    gl_sb_puts(out, ", label=");
    gl_rv_put_dot_string(out, bx->text);
    gl_sb_puts(out, "];\n");
}

static void put_edge(gl_strbuf *out, const vedge *e, size_t idx, const char *label_attr)
{
    gl_sb_printf(out, "  b%u -> b%u [id=\"e%zu\"", e->from, e->to, idx);
    if (e->dashed)
        gl_sb_puts(out, ", style=dashed");
    gl_strbuf label = {0};
    gl_rv_edge_label(e, &label);
    if (label.len) {
        gl_sb_printf(out, ", %s=", label_attr);
        gl_rv_put_dot_string(out, label.s);
    }
    free(label.s);
    gl_sb_puts(out, "];\n");
}

/* ==== ghosts of removed nodes and the legend (SVG and DOT, not the terminal) ========== */

static size_t count_removed(const gl_diff *d)
{
    size_t total = 0;
    for (size_t c = 0; d && c < d->n_nodes; c++)
        if (d->nodes[c].kind == GL_CHANGE_REMOVED)
            total += d->nodes[c].n_old;
    return total;
}

static void put_ghost(gl_strbuf *out, size_t idx, const char *op, const char *name)
{
    gl_strbuf text = {0};
    gl_sb_puts(&text, "- ");
    if (op) { /* a diff made by hand may not know it */
        gl_rv_put_display(&text, op, 40);
        gl_sb_putc(&text, '\n');
    }
    gl_rv_put_name(&text, name ? name : "");
    gl_sb_printf(out, "    r%zu [%s, label=", idx, GHOST_STYLE);
    gl_rv_put_dot_string(out, text.s);
    gl_sb_puts(out, "];\n");
    free(text.s);
}

/* The removed nodes as ghost boxes in a cluster of their own: the diff knows their ops
 * and names, not where they were wired, so they stand together beside the graph. */
static void put_ghosts(gl_strbuf *out, const gl_diff *d)
{
    size_t total = count_removed(d);
    if (!total)
        return;
    gl_sb_puts(out, "  subgraph cluster_removed {\n"
                    "    label=\"removed by this step\"; fontsize=10; fontcolor=\"#757575\"; "
                    "style=dashed; color=\"#9e9e9e\";\n");
    size_t shown = 0;
    for (size_t c = 0; c < d->n_nodes && shown < MAX_GHOSTS; c++) {
        const gl_node_change *ch = &d->nodes[c];
        for (size_t k = 0; ch->kind == GL_CHANGE_REMOVED && k < ch->n_old && shown < MAX_GHOSTS;
             k++)
            put_ghost(out, shown++, ch->old_ops ? ch->old_ops[k] : NULL, ch->old_names[k]);
    }
    if (total > shown)
        gl_sb_printf(out, "    r%zu [%s, label=\"+%zu more removed\"];\n", shown, GHOST_STYLE,
                     total - shown);
    gl_sb_puts(out, "  }\n");
}

static void put_legend_entry(gl_strbuf *out, size_t *n, const char *attrs, const char *text)
{
    gl_sb_printf(out, "    legend%zu [%s, label=", (*n)++, attrs);
    gl_rv_put_dot_string(out, text);
    gl_sb_puts(out, "];\n");
}

/* What each fill colour of this drawing means: one sample box per kind of box and per
 * diff mark drawn, and the ghost when there are removed nodes. */
static void put_legend(gl_strbuf *out, const view *v, const gl_diff *d)
{
    bool kinds[GL_ARRAY_LEN(BOX_STYLES)] = {false};
    bool marks[GL_ARRAY_LEN(MARK_STYLES)] = {false};
    for (size_t i = 0; i < v->n_boxes; i++) {
        kinds[v->boxes[i].kind] = true;
        marks[v->boxes[i].mark] = true;
    }
    gl_sb_puts(out, "  subgraph cluster_legend {\n"
                    "    label=\"legend\"; fontsize=10; style=rounded; color=\"#bbbbbb\";\n"
                    "    node [fontsize=8, margin=\"0.05,0.02\", height=0.2];\n");
    size_t n = 0;
    char attrs[160];
    for (size_t k = 0; k < GL_ARRAY_LEN(BOX_STYLES); k++) {
        const box_style *st = &BOX_STYLES[k];
        if (!kinds[k])
            continue;
        snprintf(attrs, sizeof(attrs), "shape=%s, style=\"%s\", fillcolor=\"%s\"", st->shape,
                 st->style, st->fill);
        put_legend_entry(out, &n, attrs, st->legend);
    }
    for (size_t m = GL_MARK_ADDED; m < GL_ARRAY_LEN(MARK_STYLES); m++) {
        const mark_style *mk = &MARK_STYLES[m];
        if (!marks[m])
            continue;
        snprintf(attrs, sizeof(attrs),
                 "shape=box, style=\"rounded,filled\", fillcolor=\"%s\", color=\"%s\", "
                 "penwidth=2", mk->fill, mk->pen);
        put_legend_entry(out, &n, attrs, mk->legend);
    }
    if (count_removed(d))
        put_legend_entry(out, &n, GHOST_STYLE, GHOST_LEGEND);
    /* one row: invisible edges keep the samples side by side, in this order */
    gl_sb_puts(out, "    { rank=same;");
    for (size_t i = 0; i < n; i++)
        gl_sb_printf(out, " legend%zu;", i);
    gl_sb_puts(out, " }\n");
    for (size_t i = 1; i < n; i++)
        gl_sb_printf(out, "    legend%zu -> legend%zu [style=invis];\n", i - 1, i);
    gl_sb_puts(out, "  }\n");
}

char *gl_rv_print_dot(const view *v, const settings *set, size_t *len)
{
    gl_strbuf out = {0};
    gl_sb_puts(&out, "digraph graphlab {\n"
                     "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t, "
                     "nodesep=0.25, ranksep=0.35");
    if (v->bounded_effort) /* network simplex iterations <= boxes, a tenth of mincross */
        gl_sb_puts(&out, ", nslimit=1, nslimit1=1, mclimit=0.1");
    char *label = graph_label(v, set);
    if (*label) {
        gl_sb_puts(&out, ", label=");
        gl_rv_put_dot_string(&out, label);
    }
    free(label);
    gl_sb_puts(&out, "];\n"
                     "  node [fontname=\"Helvetica\", margin=\"0.08,0.03\"];\n"
                     "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\", "
                     "fontcolor=\"#333333\", arrowsize=0.6];\n");
    for (size_t i = 0; i < v->n_boxes; i++)
        put_box(&out, &v->boxes[i], i);
    const char *label_attr = v->xlabels ? "xlabel" : "label";
    for (size_t i = 0; i < v->n_edges; i++)
        put_edge(&out, &v->edges[i], i, label_attr);
    if (set->legend) {
        put_ghosts(&out, set->diff);
        put_legend(&out, v, set->diff);
    }
    gl_sb_puts(&out, "}\n");
    *len = out.len;
    return gl_sb_take(&out);
}

static void fill_info(gl_render_info *info, const view *v)
{
    if (!info)
        return;
    *info = (gl_render_info){0};
    info->nodes_drawn = v->n_boxes;
    info->reduced = v->reduced;
    snprintf(info->note, sizeof(info->note), "%s", v->note);
}

/* Choose, build and print: the one path every public function starts from. */
gl_status gl_rv_make_dot(const gl_graph *g, const gl_render_opts *o, const char *emergency,
                         view *v, char **dot, size_t *len, gl_render_info *info)
{
    *v = (view){0};
    if (!g)
        return gl_fail(GL_ERR_INTERNAL, "render: no graph");
    settings set = gl_rv_resolve_opts(o);
    set.emergency = emergency;
    const gl_node_change **change_of = gl_rv_index_changes(g, set.diff);
    gl_rv_choose_view(g, &set, change_of, v);
    if (set.one_line)
        gl_rv_view_one_line(v);
    if (set.focus)
        gl_rv_mark_focus(v, gl_find_node(g, set.focus));
    free(change_of);
    size_t n = 0;
    *dot = gl_rv_print_dot(v, &set, &n);
    if (len)
        *len = n;
    fill_info(info, v);
    return GL_OK;
}

gl_status gl_render_dot(const gl_graph *g, const gl_render_opts *o, char **dot, size_t *len,
                        gl_render_info *info)
{
    view v;
    gl_status st = gl_rv_make_dot(g, o, NULL, &v, dot, len, info);
    gl_rv_view_free(&v);
    return st;
}

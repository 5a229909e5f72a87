/* bar.c — the pipeline bar: every step with its node count, a mark on the steps that
 * changed the graph, the current step highlighted; elided around the current step
 * when the terminal is narrow. Text only: app.c paints it. */
#include "ui/ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t gl_bar_items(const gl_ui *ui, gl_bar_item **items)
{
    const gl_pipeline *p = ui->pipeline;
    *items = NULL;
    if (!p)
        return 0;
    *items = gl_xcalloc(p->n_steps, sizeof(gl_bar_item));
    for (size_t k = 0; k < p->n_steps; k++) {
        const gl_snapshot *s = &p->steps[k];
        gl_bar_item *it = &(*items)[k];
        const char *name = k == 0 || !s->pass ? "load" : gl_ui_pass_short(s->pass->name);
        it->current = k == ui->step;
        if (it->current && ui->budget >= 0)
            snprintf(it->text, sizeof(it->text), "%s %lld/%lld rewrites", name,
                     (long long)ui->budget, (long long)s->rewrites);
        else
            snprintf(it->text, sizeof(it->text), "%s %zu%s", name, s->nodes,
                     k > 0 && s->changed ? "*" : "");
    }
    return p->n_steps;
}

void gl_ui_branch_label(const gl_pipeline *p, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; p && i < p->settings.n && used < len; i++) {
        const gl_setting *s = &p->settings.items[i];
        bool veto = strcmp(s->option, "veto") == 0;
        if (!veto && strcmp(s->option, "force") != 0)
            continue;
        used += (size_t)snprintf(buf + used, len - used, "%s#%lld %s", used ? ", " : "",
                                 (long long)s->value, veto ? "vetoed" : "forced");
    }
    if (!used)
        snprintf(buf, len, "as run");
}

int gl_bar_branch(const gl_ui *ui, bool utf8, char *buf, size_t len)
{
    const gl_pipeline *o = ui->other.pipeline;
    if (len)
        buf[0] = '\0';
    if (!ui->pipeline || !o)
        return 0;
    char here[96], there[96], nodes[32] = "no such step";
    gl_ui_branch_label(ui->pipeline, here, sizeof(here));
    gl_ui_branch_label(o, there, sizeof(there));
    if (ui->step < o->n_steps)
        snprintf(nodes, sizeof(nodes), "%zu nodes", o->steps[ui->step].nodes);
    snprintf(buf, len, "[%s %s X: %s, %s] ", here, utf8 ? "│" : "|", there, nodes);
    return gl_ui_text_width(buf);
}

/* Where each item sits in the formatted text: [first, last] shown, columns of each. */
typedef struct bar_layout {
    size_t first, last;
    bool left_ellipsis, right_ellipsis;
} bar_layout;

typedef struct bar_glyphs {
    const char *sep, *ellipsis;
    int sep_w, ellipsis_w;
} bar_glyphs;

static bar_glyphs glyphs(bool utf8)
{
    return utf8 ? (bar_glyphs){" → ", "…", 3, 1} : (bar_glyphs){" -> ", "...", 4, 3};
}

static size_t current_of(const gl_bar_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (items[i].current)
            return i;
    return 0;
}

static int window_width(const gl_bar_item *items, size_t n, size_t a, size_t b,
                        const bar_glyphs *g)
{
    int w = 0;
    for (size_t i = a; i <= b; i++)
        w += gl_ui_text_width(items[i].text) + (i > a ? g->sep_w : 0);
    if (a > 0)
        w += g->ellipsis_w + g->sep_w;
    if (b + 1 < n)
        w += g->sep_w + g->ellipsis_w;
    return w;
}

/* The widest window of items around the current one that fits, growing to the right
 * first (the steps still to come), then to the left, one item at a time. */
static bar_layout choose(const gl_bar_item *items, size_t n, int width, const bar_glyphs *g)
{
    size_t cur = current_of(items, n);
    bar_layout l = {cur, cur, false, false};
    if (window_width(items, n, 0, n - 1, g) <= width) {
        l.first = 0;
        l.last = n - 1;
    } else {
        for (bool grew = true; grew;) {
            grew = false;
            if (l.last + 1 < n && window_width(items, n, l.first, l.last + 1, g) <= width) {
                l.last++;
                grew = true;
            }
            if (l.first > 0 && window_width(items, n, l.first - 1, l.last, g) <= width) {
                l.first--;
                grew = true;
            }
        }
    }
    l.left_ellipsis = l.first > 0;
    l.right_ellipsis = l.last + 1 < n;
    return l;
}

/* Append `s` to buf, counting columns; false once the width is used up. */
typedef struct bar_out {
    char *buf;
    size_t len, used;
    int cols, width;
} bar_out;

static void put(bar_out *o, const char *s)
{
    for (const char *p = s; *p; p++) {
        bool starts_char = ((unsigned char)*p & 0xC0) != 0x80;
        if (starts_char && o->cols >= o->width)
            return;
        if (o->used + 1 >= o->len)
            return;
        o->buf[o->used++] = *p;
        o->cols += starts_char;
    }
    o->buf[o->used] = '\0';
}

/* Lay the bar out; item_col[i] (may be NULL) receives each item's first column, -1
 * when elided. */
static int format(const gl_bar_item *items, size_t n, int width, bool utf8, char *buf,
                  size_t len, int *cur_col, int *cur_len, int *item_col)
{
    bar_out o = {buf, len, 0, 0, width};
    if (len)
        buf[0] = '\0';
    *cur_col = *cur_len = 0;
    for (size_t i = 0; item_col && i < n; i++)
        item_col[i] = -1;
    if (n == 0 || width <= 0)
        return 0;
    bar_glyphs g = glyphs(utf8);
    bar_layout l = choose(items, n, width, &g);
    if (l.left_ellipsis) {
        put(&o, g.ellipsis);
        put(&o, g.sep);
    }
    for (size_t i = l.first; i <= l.last; i++) {
        if (i > l.first)
            put(&o, g.sep);
        int start = o.cols;
        if (item_col)
            item_col[i] = start;
        put(&o, items[i].text); /* the current item alone may still be cut at the edge */
        if (items[i].current) {
            *cur_col = start;
            *cur_len = o.cols - start;
        }
    }
    if (l.right_ellipsis) {
        put(&o, g.sep);
        put(&o, g.ellipsis);
    }
    return o.cols;
}

int gl_bar_format(const gl_bar_item *items, size_t n, int width, bool utf8, char *buf,
                  size_t len, int *cur_col, int *cur_len)
{
    return format(items, n, width, utf8, buf, len, cur_col, cur_len, NULL);
}

int gl_bar_item_at(const gl_bar_item *items, size_t n, int width, bool utf8, int col)
{
    if (n == 0)
        return -1;
    char buf[4096];
    int cur_col, cur_len;
    int *item_col = gl_xcalloc(n, sizeof(int));
    format(items, n, width, utf8, buf, sizeof(buf), &cur_col, &cur_len, item_col);
    int hit = -1;
    for (size_t i = 0; i < n && hit < 0; i++) {
        int w = gl_ui_text_width(items[i].text);
        if (item_col[i] >= 0 && col >= item_col[i] && col < item_col[i] + w)
            hit = (int)i;
    }
    free(item_col);
    return hit;
}

/* view_memory.c — the memory plan of the shown step (`m`): one row per planned tensor,
 * its bytes and offset range, its lifetime drawn as a bar over the executor's order with
 * the moment of the most bytes alive marked, and whom it shares bytes with (in place of
 * its input, or a view of it). Enter opens the node that writes the tensor. */
#include "ui/ui.h"

#include "ir/memplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NAME_W = 24, NUM_W = 9, LINK_W = 24, BAR_MIN = 10 };

static const gl_memory_plan *shown_plan(const gl_ui *ui)
{
    const gl_graph *g = ui->pipeline ? gl_ui_graph(ui) : NULL;
    return g && g->model ? g->model->memory_plan : NULL;
}

static void memory_open(gl_ui *ui, gl_view *v)
{
    (void)ui;
    v->selected = v->scroll = 0;
}

static int n_rows(const gl_ui *ui)
{
    const gl_memory_plan *p = shown_plan(ui);
    return p ? (int)p->n_tensors : 0;
}

/* The column of step s in a bar of `w` columns over n steps. */
static int bar_col(size_t s, size_t n, int w)
{
    return n ? (int)((double)s * w / (double)n) : 0; /* s == n: the bar's end */
}

/* The bar of t: `live` over its lifetime, the peak column marked where it is empty. */
static void draw_bar(const gl_ui *ui, const gl_memory_plan *p, const gl_mem_tensor *t, int w,
                     char *buf, size_t len)
{
    const char *live = ui->utf8 ? "\u2588" : "#", *idle = ui->utf8 ? "\u00b7" : ".",
               *peak = ui->utf8 ? "\u2502" : "|";
    int from = bar_col(t->first, p->n_steps, w), to = bar_col(t->last + 1, p->n_steps, w) - 1;
    int at = bar_col(p->live_max_step, p->n_steps, w);
    size_t used = 0;
    buf[0] = '\0';
    for (int c = 0; c < w; c++) {
        const char *cell = c >= from && c <= to ? live : c == at ? peak : idle;
        size_t n = strlen(cell);
        if (used + n + 1 > len)
            break;
        memcpy(buf + used, cell, n + 1);
        used += n;
    }
}

static void memory_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    const gl_memory_plan *p = shown_plan(ui);
    char buf[2048], bar[1024];
    if (height < 1)
        return;
    if (!p) {
        gl_ui_put(top, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), "memory plan");
        gl_ui_put(top + 1, left, width, gl_ui_attr(ui, GL_ROLE_DIM),
                  "(no memory plan at this step: the memory-plan pass has not run yet)");
        return;
    }
    snprintf(buf, sizeof(buf), "memory plan: %zu tensors, arena %zu bytes, naive %zu, live max "
             "%zu at node %zu (marked)", p->n_tensors, p->peak_bytes, p->naive_bytes,
             p->live_max_bytes, p->live_max_step);
    gl_ui_put(top, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf);
    int bar_w = width - NAME_W - 3 * (NUM_W + 1) - 2 - LINK_W;
    if (bar_w < BAR_MIN)
        bar_w = BAR_MIN;
    if (bar_w > (int)sizeof(bar) / 4)
        bar_w = (int)sizeof(bar) / 4;
    if (height < 2)
        return;
    snprintf(buf, sizeof(buf), "%-*s %*s %*s %*s  run order 0..%zu (<- in place of, == view of)",
             NAME_W, "tensor", NUM_W, "bytes", NUM_W, "offset", NUM_W, "end",
             p->n_steps ? p->n_steps - 1 : 0);
    gl_ui_put(top + 1, left, width, gl_ui_attr(ui, GL_ROLE_DIM), buf);
    v->height = height - 2;
    gl_ui_clamp(v, (int)p->n_tensors, v->height);
    for (int row = 0; row < v->height && v->scroll + row < (int)p->n_tensors; row++) {
        const gl_mem_tensor *t = &p->tensors[v->scroll + row];
        bool sel = v->scroll + row == v->selected;
        draw_bar(ui, p, t, bar_w, bar, sizeof(bar));
        char link[96] = "";
        if (t->share != GL_MEM_OWN)
            snprintf(link, sizeof(link), "%s %s", t->share == GL_MEM_IN_PLACE ? "<-" : "==",
                     p->tensors[t->source].name);
        /* the name cut by characters (a byte cut can split one), then padded by columns */
        char name[4 * NAME_W + 8];
        int name_w = gl_ui_clip(t->name, 0, NAME_W, ui->utf8, name, sizeof(name));
        snprintf(buf, sizeof(buf), "%s%*s %*zu %*zu %*zu  %s  %s", name, NAME_W - name_w, "",
                 NUM_W, t->bytes, NUM_W, t->offset, NUM_W, t->offset + t->bytes, bar, link);
        int attr = gl_ui_attr(ui, sel ? GL_ROLE_SELECTED
                                      : t->share != GL_MEM_OWN ? GL_ROLE_LINK : GL_ROLE_NORMAL);
        int w = gl_ui_put(top + 2 + row, left, width, attr, buf);
        if (sel)
            gl_ui_fill(top + 2 + row, left + w, width - w, attr);
    }
    if (p->n_tensors == 0)
        gl_ui_put(top + 2, left, width, gl_ui_attr(ui, GL_ROLE_DIM),
                  "(no intermediate tensor with a static shape)");
}

static unsigned memory_request(gl_ui *ui, gl_view *v, gl_request r)
{
    const gl_memory_plan *p = shown_plan(ui);
    if (r != GL_REQ_ENTER)
        return gl_ui_list_move(v, r, n_rows(ui));
    if (!p || v->selected < 0 || (size_t)v->selected >= p->n_tensors)
        return GL_REDRAW_NONE;
    const gl_graph *g = gl_ui_graph(ui);
    const gl_mem_tensor *t = &p->tensors[v->selected];
    const gl_value *val = t->value < g->n_values ? g->values[t->value] : NULL;
    if (!val || strcmp(val->name, t->name) != 0 || !val->producer) {
        gl_ui_set_status(ui, "'%s' is not in this step's graph", t->name);
        return GL_REDRAW_STATUS;
    }
    return gl_ui_open_detail(ui, val->producer->id, -1);
}

static const char *tensor_name(int row, void *ctx)
{
    const gl_memory_plan *p = ctx;
    return p->tensors[row].name;
}

static bool memory_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    const gl_memory_plan *p = shown_plan(ui);
    return p && gl_ui_list_find_text(v, (int)p->n_tensors, ui->search, dir, inclusive,
                                     tensor_name, (void *)p);
}

const gl_view_ops gl_view_memory_ops = {
    .name = "memory",
    .open = memory_open,
    .draw = memory_draw,
    .request = memory_request,
    .find = memory_find,
};

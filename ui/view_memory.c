/* view_memory.c — the memory plan of the shown step (`m`): one row per planned tensor,
 * its bytes and offset range, its lifetime drawn as a bar over the executor's order with
 * the moment of the most bytes alive marked, and whom it shares bytes with (in place of
 * its input, or a view of it). Enter opens the node that writes the tensor. */
#include "ui/ui.h"
#include "util/bytes.h"

#include "ir/memplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NAME_W = 24, NUM_W = 10, LINK_W = 24, BAR_MIN = 10 };

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

/* The column of position s (in the run order) in a bar of `w` columns over n. */
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

/* The longest tensor name of the plan (the name column widens to it). */
static int longest_name(const gl_memory_plan *p)
{
    int most = 0;
    for (size_t i = 0; i < p->n_tensors; i++) {
        int w = gl_ui_text_width(p->tensors[i].name);
        most = w > most ? w : most;
    }
    return most;
}

static void header_text(const gl_memory_plan *p, char *buf, size_t len)
{
    char arena[32], naive[32], live[32];
    gl_bytes_text(p->peak_bytes, arena, sizeof(arena));
    gl_bytes_text(p->naive_bytes, naive, sizeof(naive));
    gl_bytes_text(p->live_max_bytes, live, sizeof(live));
    snprintf(buf, len, "memory plan: %zu tensors, arena %s, naive %s, live max %s at node %zu "
             "(marked)", p->n_tensors, arena, naive, live, p->live_max_step);
}

/* "<- relu1_out0" (in place of), "== x" (a view of), "" (its own bytes). */
static void link_text(const gl_memory_plan *p, const gl_mem_tensor *t, char *buf, size_t len)
{
    buf[0] = '\0';
    if (t->share != GL_MEM_OWN)
        snprintf(buf, len, "%s %s", t->share == GL_MEM_IN_PLACE ? "<-" : "==",
                 p->tensors[t->source].name);
}

static void row_text(const gl_ui *ui, const gl_memory_plan *p, const gl_mem_tensor *t,
                     int name_w, int bar_w, char *buf, size_t len)
{
    char bar[1024], link[1100], bytes[32], offset[32], end[32];
    draw_bar(ui, p, t, bar_w, bar, sizeof(bar));
    link_text(p, t, link, sizeof(link));
    gl_bytes_text(t->bytes, bytes, sizeof(bytes));
    gl_bytes_text(t->offset, offset, sizeof(offset));
    gl_bytes_text(t->offset + t->bytes, end, sizeof(end));
    /* the name cut by characters (a byte cut can split one), then padded by columns */
    char name[2048];
    int w = gl_ui_clip(t->name, 0, name_w, ui->utf8, name, sizeof(name));
    snprintf(buf, len, "%s%*s %*s %*s %*s  %s  %s", name, name_w - w, "", NUM_W, bytes, NUM_W,
             offset, NUM_W, end, bar, link);
}

/* The footer's row text (gl_ui_footer_make puts "i/n " before it): the selected tensor
 * in full, with its exact bytes. NULL: none selected. */
static const char *footer_text(const gl_memory_plan *p, const gl_view *v, char *buf,
                               size_t len)
{
    if (v->selected < 0 || (size_t)v->selected >= p->n_tensors)
        return NULL;
    const gl_mem_tensor *t = &p->tensors[v->selected];
    char bytes[32], link[1100];
    gl_bytes_text(t->bytes, bytes, sizeof(bytes));
    link_text(p, t, link, sizeof(link));
    snprintf(buf, len, "%s%s%s%s: %s (%zu B) at [%zu, %zu), run order %zu..%zu", t->name,
             *link ? " (" : "", link, *link ? ")" : "", bytes, t->bytes, t->offset,
             t->offset + t->bytes, t->first, t->last);
    return buf;
}

static void memory_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    const gl_memory_plan *p = shown_plan(ui);
    char buf[4096];
    if (height < 1)
        return;
    if (!p) {
        gl_ui_put(top, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), "memory plan");
        gl_ui_put(top + 1, left, width, gl_ui_attr(ui, GL_ROLE_DIM),
                  "(no memory plan at this step: the memory-plan pass has not run yet)");
        return;
    }
    header_text(p, buf, sizeof(buf));
    gl_ui_put_at(top, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf, v->hscroll);
    if (height < 3)
        return;
    /* the name as wide as the longest where a bar of BAR_MIN and the link's LINK_W still
     * fit, the bar the rest */
    int numbers = 3 * (NUM_W + 1) + 4;
    int name_w = gl_ui_column_width(longest_name(p), NAME_W,
                                    width - NAME_W - numbers - BAR_MIN - LINK_W);
    int bar_w = width - name_w - numbers - LINK_W;
    bar_w = bar_w < BAR_MIN ? BAR_MIN : bar_w > 256 ? 256 : bar_w;
    snprintf(buf, sizeof(buf), "%-*s %*s %*s %*s  run order 0..%zu (<- in place of, == view of)",
             name_w, "tensor", NUM_W, "bytes", NUM_W, "offset", NUM_W, "end",
             p->n_steps ? p->n_steps - 1 : 0);
    gl_ui_put_at(top + 1, left, width, gl_ui_attr(ui, GL_ROLE_DIM), buf, v->hscroll);
    gl_ui_clamp(v, (int)p->n_tensors, height - 3); /* the selection in range, for the footer */
    gl_ui_footer footer;
    gl_ui_footer_make(&footer, ui, v, (int)p->n_tensors, footer_text(p, v, buf, sizeof(buf)),
                      height, width);
    v->height = height - 2 - footer.lines; /* the header, the columns and the footer */
    gl_ui_clamp(v, (int)p->n_tensors, v->height);
    for (int row = 0; row < v->height && v->scroll + row < (int)p->n_tensors; row++) {
        const gl_mem_tensor *t = &p->tensors[v->scroll + row];
        bool sel = v->scroll + row == v->selected;
        row_text(ui, p, t, name_w, bar_w, buf, sizeof(buf));
        int attr = gl_ui_attr(ui, sel ? GL_ROLE_SELECTED
                                      : t->share != GL_MEM_OWN ? GL_ROLE_LINK : GL_ROLE_NORMAL);
        int w = gl_ui_put_at(top + 2 + row, left, width, attr, buf, v->hscroll);
        if (sel)
            gl_ui_fill(top + 2 + row, left + w, width - w, attr);
    }
    if (p->n_tensors == 0)
        gl_ui_put(top + 2, left, width, gl_ui_attr(ui, GL_ROLE_DIM),
                  "(no intermediate tensor with a static shape)");
    gl_ui_footer_draw(&footer, ui, top, left, height, width);
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

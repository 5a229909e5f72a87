/* view_run.c — the run of the shown step (`r`, run.c): one row per node or fused group
 * (its members under it), with what ran it, its time on each run (median and spread),
 * the speedups, its share of the run with a bar, the layout conversions, and its outputs
 * against the reference's. `s` cycles the order, Enter opens the row's tensors, `p`
 * selects where the fused and reference runs part ways. */
#include "ui/ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HEADER_ROWS = 3, BAR_W = 10, OP_W = 18, NAME_W = 22, IMPL_W = 24 };

typedef struct run_state {
    const gl_run *run; /* the order is for this run and sort */
    gl_run_sort sort;
    size_t *order;
    size_t n;
} run_state;

static const char *const sort_names[GL_RUN_SORTS] = {"time", "name", "topological order"};

static void rebuild(gl_ui *ui, gl_view *v)
{
    run_state *s = v->state;
    const gl_run *r = gl_ui_run_shown(ui);
    if (s->run == r && s->sort == ui->run_sort && (s->order || !r))
        return;
    free(s->order);
    s->order = NULL;
    s->n = 0;
    s->run = r;
    s->sort = ui->run_sort;
    if (!r)
        return;
    s->order = gl_xcalloc(r->prof->n_rows ? r->prof->n_rows : 1, sizeof(size_t));
    s->n = gl_run_order(r->prof, r->fused, ui->run_sort, s->order);
    gl_ui_clamp(v, (int)s->n, v->height);
}

static void run_open(gl_ui *ui, gl_view *v)
{
    if (!v->state)
        v->state = gl_xcalloc(1, sizeof(run_state));
    ((run_state *)v->state)->run = NULL; /* the step may have changed: rebuild */
    rebuild(ui, v);
}

/* "0.123" ms, "-" when it did not run, "~" in the stable mode. */
static void ms_text(const gl_run *r, double ms, char *buf, size_t len)
{
    if (ms < 0)
        snprintf(buf, len, "-");
    else if (r->stable)
        snprintf(buf, len, "~");
    else
        snprintf(buf, len, "%.3f", ms);
}

static void ratio_text(const gl_run *r, double num, double den, char *buf, size_t len)
{
    if (num < 0 || den <= 0)
        snprintf(buf, len, "-");
    else if (r->stable)
        snprintf(buf, len, "~");
    else
        snprintf(buf, len, "%.2fx", num / den);
}

static void bar_text(const gl_run *r, double pct, bool utf8, char *buf, size_t len)
{
    int cells = r->stable || pct <= 0 ? 0 : (int)(pct / 100 * BAR_W + 0.5);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < BAR_W && used + 4 < len; i++) {
        const char *c = i < cells ? (utf8 ? "█" : "#") : " ";
        size_t n = strlen(c);
        memcpy(buf + used, c, n + 1);
        used += n;
    }
}

/* Text cut to `w` columns with "…" (UTF-8) or "." when longer. */
static void fit(const char *text, int w, bool utf8, char *buf, size_t len)
{
    if (gl_ui_text_width(text) <= w) {
        snprintf(buf, len, "%s", text);
        return;
    }
    snprintf(buf, len, "%.*s%s", w > 1 ? w - 1 : 0, text, utf8 ? "…" : ".");
}

static void header_line(const gl_ui *ui, const gl_run *r, int line, char *buf, size_t len)
{
    const gl_profile *p = r->prof;
    char label[96], t[32];
    gl_snapshot_label(ui->pipeline, r->step, label, sizeof(label));
    size_t used = 0;
    if (line == 0) {
        used = (size_t)snprintf(buf, len, "run of %s on %s; whole run median:", label, r->inputs);
        for (size_t b = 0; b < p->n_backends && used < len; b++) {
            ms_text(r, p->backends[b].wall.median, t, sizeof(t));
            used += (size_t)snprintf(buf + used, len - used, "%s %s %s ms", b ? "," : "",
                                     p->backends[b].name, t);
        }
        if (r->unfused != SIZE_MAX && used < len) {
            char x[32];
            ratio_text(r, p->backends[r->unfused].wall.median, p->backends[r->fused].wall.median,
                       x, sizeof(x));
            snprintf(buf + used, len - used, "; fusion %s", x);
        }
        return;
    }
    const gl_profile_backend *f = &p->backends[r->fused];
    used = (size_t)snprintf(buf, len, "nodes:");
    for (size_t b = 0; b < p->n_backends && used < len; b++) {
        ms_text(r, p->backends[b].node_ms, t, sizeof(t));
        used += (size_t)snprintf(buf + used, len - used, "%s %s %s ms", b ? "," : "",
                                 p->backends[b].name, t);
    }
    if (used < len)
        used += (size_t)snprintf(buf + used, len - used, "; by %s (s); %s vs ref: ",
                                 sort_names[ui->run_sort], f->name);
    if (used >= len)
        return;
    if (r->report.first_bad != SIZE_MAX)
        snprintf(buf + used, len - used, "part ways at '%s' (p), %zu tensors over tolerance",
                 r->report.rows[r->report.first_bad].a->node, r->report.bad);
    else if (f->outputs_ok)
        snprintf(buf + used, len - used, "within rtol %g, atol %g", r->rtol, r->atol);
    else
        snprintf(buf + used, len - used, "outputs over tolerance");
}

static void columns_line(const gl_run *r, char *buf, size_t len)
{
    const gl_profile *p = r->prof;
    char fused[16];
    snprintf(fused, sizeof(fused), "%s ms", p->backends[r->fused].name);
    snprintf(buf, len, "  %-*s %-*s %-*s %9s %5s %10s %8s %6s %6s %5s %-*s %4s %8s %8s",
             OP_W, "op", NAME_W, "name", IMPL_W, "backend", fused, "±", "unfused ms", "ref ms",
             "vs ref", "vs unf", "%", BAR_W, "", "reor", "max abs", "nmse");
}

/* One row of the table; *over: its outputs are over tolerance. */
static void row_text(const gl_ui *ui, const gl_run *r, size_t row, char *buf, size_t len,
                     bool *over)
{
    const gl_profile *p = r->prof;
    const gl_profile_row *pr = &p->rows[row];
    const gl_profile_cell *c = &pr->cells[r->fused];
    char op[96], opf[128], name[128], impl[128], implf[160];
    snprintf(op, sizeof(op), "%*s%s", pr->depth * 2, "", pr->op);
    if (pr->n_members) {
        size_t n = strlen(op);
        snprintf(op + n, sizeof(op) - n, " (%zu)", pr->n_members);
    }
    fit(op, OP_W, ui->utf8, opf, sizeof(opf));
    fit(pr->name, NAME_W, ui->utf8, name, sizeof(name));
    if (!c->ran)
        snprintf(impl, sizeof(impl), "-");
    else if (r->stable) /* implementations depend on the CPU */
        snprintf(impl, sizeof(impl), "%s%s", c->backend, c->fell_back ? "*" : "");
    else
        snprintf(impl, sizeof(impl), "%s %s%s", c->backend, c->info.impl, c->fell_back ? "*" : "");
    fit(impl, IMPL_W, ui->utf8, implf, sizeof(implf));
    double f = gl_run_row_ms(p, row, r->fused), ref = gl_run_row_ms(p, row, r->ref);
    double u = r->unfused != SIZE_MAX ? gl_run_row_ms(p, row, r->unfused) : -1;
    char tf[24], tu[24], tr[24], spread[24], vref[24], vunf[24], pct[24], bar[64], reor[24];
    char mabs[24], nmse[24];
    ms_text(r, f, tf, sizeof(tf));
    ms_text(r, u, tu, sizeof(tu));
    ms_text(r, ref, tr, sizeof(tr));
    if (!c->ran || c->ms.median <= 0)
        snprintf(spread, sizeof(spread), "-");
    else if (r->stable)
        snprintf(spread, sizeof(spread), "~");
    else if ((c->ms.max - c->ms.min) / c->ms.median > 9.99) /* one slow round: a busy CPU */
        snprintf(spread, sizeof(spread), ">999%%");
    else
        snprintf(spread, sizeof(spread), "%.0f%%",
                 (c->ms.max - c->ms.min) / c->ms.median * 100);
    ratio_text(r, ref, f, vref, sizeof(vref));
    ratio_text(r, u, f, vunf, sizeof(vunf));
    if (!c->ran || pr->depth > 0)
        snprintf(pct, sizeof(pct), "-");
    else if (r->stable)
        snprintf(pct, sizeof(pct), "~");
    else
        snprintf(pct, sizeof(pct), "%.1f", c->pct);
    bar_text(r, c->ran && pr->depth == 0 ? c->pct : 0, ui->utf8, bar, sizeof(bar));
    if (c->ran && r->stable) /* which weights get reordered depends on the CPU too */
        snprintf(reor, sizeof(reor), "~");
    else if (c->ran)
        snprintf(reor, sizeof(reor), "%zu", c->conversions + c->info.const_reorders);
    else
        snprintf(reor, sizeof(reor), "-");
    *over = c->compared && !c->cmp.ok;
    if (!c->compared) {
        snprintf(mabs, sizeof(mabs), "-");
        snprintf(nmse, sizeof(nmse), "-");
    } else if (r->stable) {
        snprintf(mabs, sizeof(mabs), "~");
        snprintf(nmse, sizeof(nmse), "~");
    } else {
        snprintf(mabs, sizeof(mabs), "%.1e", c->cmp.max_abs);
        snprintf(nmse, sizeof(nmse), "%.1e", c->cmp.nmse);
    }
    int op_pad = OP_W - gl_ui_text_width(opf), name_pad = NAME_W - gl_ui_text_width(name);
    int impl_pad = IMPL_W - gl_ui_text_width(implf);
    snprintf(buf, len, "%c %s%*s %s%*s %s%*s %9s %5s %10s %8s %6s %6s %5s %s %4s %8s %8s%s",
             *over ? '!' : ' ', opf, op_pad > 0 ? op_pad : 0, "", name,
             name_pad > 0 ? name_pad : 0, "", implf, impl_pad > 0 ? impl_pad : 0, "", tf, spread,
             tu, tr, vref, vunf, pct, bar, reor, mabs, nmse,
             *over ? "  over tolerance" : "");
}

static void run_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    run_state *s = v->state;
    if (!s || height < 1)
        return;
    rebuild(ui, v);
    const gl_run *r = s->run;
    char buf[1024];
    if (!r) {
        const gl_job_spec *job = gl_ui_job_spec(ui);
        snprintf(buf, sizeof(buf), job && strcmp(job->what, "the run") == 0
                                       ? "running step %zu..."
                                       : "no run of step %zu yet: r runs it (reference, oneDNN "
                                         "unfused and fused, per node)",
                 ui->step);
        gl_ui_put(top, left, width, gl_ui_attr(ui, GL_ROLE_DIM), buf);
        return;
    }
    for (int line = 0; line < 2 && line < height; line++) {
        header_line(ui, r, line, buf, sizeof(buf));
        gl_ui_put(top + line, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf);
    }
    if (height < HEADER_ROWS)
        return;
    columns_line(r, buf, sizeof(buf));
    gl_ui_put(top + 2, left, width, gl_ui_attr(ui, GL_ROLE_DIM), buf);
    v->height = height - HEADER_ROWS;
    gl_ui_clamp(v, (int)s->n, v->height);
    for (int row = 0; row < v->height && v->scroll + row < (int)s->n; row++) {
        int i = v->scroll + row;
        bool over;
        row_text(ui, r, s->order[i], buf, sizeof(buf), &over);
        gl_ui_role role = over ? GL_ROLE_ERROR
                          : r->prof->rows[s->order[i]].depth ? GL_ROLE_DIM : GL_ROLE_NORMAL;
        int attr = i == v->selected ? gl_ui_attr(ui, GL_ROLE_SELECTED) : gl_ui_attr(ui, role);
        int w = gl_ui_put(top + HEADER_ROWS + row, left, width, attr, buf);
        if (i == v->selected)
            gl_ui_fill(top + HEADER_ROWS + row, left + w, width - w, attr);
    }
}

static unsigned run_request(gl_ui *ui, gl_view *v, gl_request r)
{
    run_state *s = v->state;
    if (!s)
        return GL_REDRAW_NONE;
    rebuild(ui, v);
    unsigned flags = gl_ui_list_move(v, r, (int)s->n);
    if (flags)
        return flags;
    switch (r) {
    case GL_REQ_SORT:
        ui->run_sort = (gl_run_sort)((ui->run_sort + 1) % GL_RUN_SORTS);
        rebuild(ui, v);
        v->selected = v->scroll = 0;
        gl_ui_set_status(ui, "run view sorted by %s", sort_names[ui->run_sort]);
        return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
    case GL_REQ_ENTER:
        if (v->selected < 0 || (size_t)v->selected >= s->n)
            return GL_REDRAW_NONE;
        ui->tensor_row = s->order[v->selected];
        ui->views[GL_VIEW_TENSOR].generation = 0; /* another row: open it again */
        return gl_ui_show(ui, GL_VIEW_TENSOR, true);
    default: return GL_REDRAW_NONE;
    }
}

typedef struct run_match {
    const gl_run *run;
    const size_t *order;
    const char *pattern;
} run_match;

static bool run_row_matches(int row, void *ctx)
{
    const run_match *m = ctx;
    const gl_profile_row *pr = &m->run->prof->rows[m->order[row]];
    return gl_ui_match(pr->name, m->pattern) || gl_ui_match(pr->op, m->pattern);
}

static bool run_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    run_state *s = v->state;
    if (!s || !s->run)
        return false;
    run_match m = {s->run, s->order, ui->search};
    int row = gl_ui_find_row((int)s->n, v->selected, dir, inclusive, run_row_matches, &m);
    if (row < 0)
        return false;
    v->selected = row;
    return true;
}

static unsigned run_click(gl_ui *ui, gl_view *v, int row, int col)
{
    run_state *s = v->state;
    int i = v->scroll + row - HEADER_ROWS;
    if (!s || row < HEADER_ROWS || i >= (int)s->n)
        return GL_REDRAW_NONE;
    v->selected = i;
    return GL_REDRAW_VIEW;
}

static void run_close(gl_ui *ui, gl_view *v)
{
    run_state *s = v->state;
    if (s)
        free(s->order);
    free(s);
    v->state = NULL;
}

const gl_view_ops gl_view_run_ops = {
    .name = "run",
    .open = run_open,
    .draw = run_draw,
    .request = run_request,
    .close = run_close,
    .find = run_find,
    .click = run_click,
};

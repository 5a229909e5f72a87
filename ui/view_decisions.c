/* view_decisions.c — the decision records of the shown step (the replay's while a
 * rewrite budget is active): one row each, verdict, rule and reason; below the list the
 * selected record in full — its nodes and every number or text it carries (for a
 * transpose push: each input's cost, the output cost, the total, what decided it).
 * `f` shows only the refused ones; Enter marks the record's nodes in the node list. */
#include "ui/ui.h"

#include <curses.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PANE_MIN_HEIGHT = 12 };

typedef struct decisions_state {
    size_t *rows;      /* indices into gl_ui_decisions(), filtered */
    int64_t *row_ids;  /* the records' ids, kept: the list they index may be gone (X) */
    size_t n_rows;
    bool only_refused; /* kept across steps */
    size_t step;       /* the step the rows are of */
} decisions_state;

/* The row to select in rows just rebuilt for the same step: the record that was
 * selected (its id), else the one of the nearest id. A what-if's branches number their
 * records alike up to the decision they differ on (X shows the other at the same step),
 * and a replay numbers them as the full run: so `X j x` acts on the record below the
 * one selected before X. */
static int row_nearest(const decisions_state *s, int64_t id)
{
    int best = 0;
    for (size_t i = 0; i < s->n_rows; i++) {
        int64_t gap = llabs(s->row_ids[i] - id), best_gap = llabs(s->row_ids[best] - id);
        if (gap < best_gap)
            best = (int)i;
    }
    return best;
}

static void decisions_open(gl_ui *ui, gl_view *v)
{
    decisions_state *s = v->state;
    bool fresh = !s;
    if (!s)
        s = v->state = gl_xcalloc(1, sizeof(*s));
    bool keep = !fresh && s->step == ui->step && v->selected >= 0 &&
                (size_t)v->selected < s->n_rows;
    int64_t was = keep ? s->row_ids[v->selected] : -1;
    size_t n;
    const gl_decision *d = gl_ui_decisions(ui, &n);
    free(s->rows);
    free(s->row_ids);
    s->rows = gl_xmalloc((n + 1) * sizeof(*s->rows));
    s->row_ids = gl_xmalloc((n + 1) * sizeof(*s->row_ids));
    s->n_rows = 0;
    s->step = ui->step;
    for (size_t i = 0; i < n; i++)
        if (!s->only_refused || d[i].verdict == GL_REFUSED) {
            s->row_ids[s->n_rows] = d[i].id;
            s->rows[s->n_rows++] = i;
        }
    v->selected = keep ? row_nearest(s, was) : 0;
    v->scroll = v->selected > 2 ? v->selected - 2 : 0;
}

static const gl_decision *selected_record(gl_ui *ui, gl_view *v)
{
    decisions_state *s = v->state;
    size_t n;
    const gl_decision *d = gl_ui_decisions(ui, &n);
    if (!s || v->selected < 0 || (size_t)v->selected >= s->n_rows || s->rows[v->selected] >= n)
        return NULL;
    return &d[s->rows[v->selected]];
}

static gl_ui_role verdict_role(gl_verdict v)
{
    return v == GL_APPLIED ? GL_ROLE_ADDED : v == GL_REFUSED ? GL_ROLE_REMOVED : GL_ROLE_DIM;
}

static void row_text(const gl_decision *d, char *buf, size_t len)
{
    snprintf(buf, len, "#%-4lld %-7s %-22s %s", (long long)d->id, gl_verdict_name(d->verdict),
             d->rule ? d->rule : "", d->reason ? d->reason : "");
}

/* The record in full, as lines of the pane: reason (wrapped), nodes, numbers. */
static int draw_pane(gl_ui *ui, const gl_decision *d, int top, int left, int height, int width)
{
    char buf[1024];
    int row = 0, attr = gl_ui_attr(ui, GL_ROLE_NORMAL);
    snprintf(buf, sizeof(buf), "#%lld %s %s %s", (long long)d->id, d->pass ? d->pass : "",
             d->rule ? d->rule : "", gl_verdict_name(d->verdict));
    gl_ui_put(top + row++, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf);
    /* the reason, wrapped at the width */
    const char *r = d->reason ? d->reason : "";
    while (*r && row < height) {
        int take = (int)strlen(r);
        if (take > width - 2) {
            take = width - 2;
            for (int i = take; i > take / 2; i--)
                if (r[i] == ' ') {
                    take = i;
                    break;
                }
        }
        snprintf(buf, sizeof(buf), "  %.*s", take > 0 ? take : 1, r);
        gl_ui_put(top + row++, left, width, attr, buf);
        r += take > 0 ? take : 1;
        while (*r == ' ')
            r++;
    }
    size_t used = (size_t)snprintf(buf, sizeof(buf), "  nodes:");
    for (size_t i = 0; i < d->n_nodes && used < sizeof(buf); i++) {
        int w = snprintf(buf + used, sizeof(buf) - used, " %s", d->nodes[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    if (row < height)
        gl_ui_put(top + row++, left, width, gl_ui_attr(ui, GL_ROLE_LINK), buf);
    /* numbers two per line when they fit */
    int col_w = width / 2 > 24 ? width / 2 : width;
    for (size_t i = 0; i < d->n_numbers && row < height;) {
        int x = 0;
        while (i < d->n_numbers && x + col_w <= width) {
            const gl_decision_number *num = &d->numbers[i++];
            if (num->text)
                snprintf(buf, sizeof(buf), "  %-14s %s", num->key, num->text);
            else
                snprintf(buf, sizeof(buf), "  %-14s %g", num->key, num->value);
            gl_ui_put(top + row, left + x, col_w - 1, attr, buf);
            x += col_w;
        }
        row++;
    }
    return row;
}

/* The footer's text: the record's id, pass, rule and verdict, and every node it names
 * in full (the row cuts the rule at 22 columns, the pane's nodes line at the width). */
static void record_text(const gl_decision *d, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "#%lld %s %s %s", (long long)d->id,
                                   d->pass ? d->pass : "", d->rule ? d->rule : "",
                                   gl_verdict_name(d->verdict));
    for (size_t i = 0; i < d->n_nodes && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s'%s'", i ? ", " : ": ", d->nodes[i]);
        used += w > 0 ? (size_t)w : 0;
    }
}

static void decisions_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    decisions_state *s = v->state;
    char buf[1024];
    if (!s || height < 1)
        return;
    size_t n;
    const gl_decision *d = gl_ui_decisions(ui, &n);
    char label[96];
    gl_snapshot_label(ui->pipeline, ui->step, label, sizeof(label));
    snprintf(buf, sizeof(buf), "decisions of %s: %zu%s%s", label, s->n_rows,
             s->only_refused ? " refused (f: all)" : " (f: only refused)",
             ui->budget >= 0 ? " in the replay" : "");
    gl_ui_put(top, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf);
    if (height < 3)
        return;
    gl_ui_clamp(v, (int)s->n_rows, v->height); /* the selection in range, for the footer */
    const gl_decision *rec = selected_record(ui, v);
    char text[2048];
    if (rec)
        record_text(rec, text, sizeof(text));
    gl_ui_footer footer;
    gl_ui_footer_make(&footer, ui, v, (int)s->n_rows, rec ? text : NULL, height, width);
    int body = height - footer.lines;
    int pane = body >= PANE_MIN_HEIGHT ? body / 3 + 1 : 0;
    v->height = body - 1 - pane;
    gl_ui_clamp(v, (int)s->n_rows, v->height);
    for (int row = 0; row < v->height && v->scroll + row < (int)s->n_rows; row++) {
        const gl_decision *shown = &d[s->rows[v->scroll + row]];
        bool sel = v->scroll + row == v->selected;
        row_text(shown, buf, sizeof(buf));
        int attr = gl_ui_attr(ui, sel ? GL_ROLE_SELECTED : verdict_role(shown->verdict));
        int w = gl_ui_put_at(top + 1 + row, left, width, attr, buf, v->hscroll);
        if (sel)
            gl_ui_fill(top + 1 + row, left + w, width - w, attr);
    }
    if (s->n_rows == 0)
        gl_ui_put(top + 1, left, width, gl_ui_attr(ui, GL_ROLE_DIM),
                  n ? "(no refused decisions in this step)" : "(this step recorded no decisions)");
    if (pane && rec) {
        int y = top + body - pane;
        attrset(gl_ui_attr(ui, GL_ROLE_DIM));
        mvhline(y, left, ACS_HLINE, width);
        attrset(A_NORMAL);
        draw_pane(ui, rec, y + 1, left, pane - 1, width);
    }
    gl_ui_footer_draw(&footer, ui, top, left, height, width);
}

static unsigned decisions_request(gl_ui *ui, gl_view *v, gl_request r)
{
    decisions_state *s = v->state;
    if (!s)
        return GL_REDRAW_NONE;
    if (r == GL_REQ_FILTER_REFUSED) {
        s->only_refused = !s->only_refused;
        decisions_open(ui, v);
        return GL_REDRAW_VIEW;
    }
    if (r == GL_REQ_ENTER || r == GL_REQ_VETO) {
        const gl_decision *d = selected_record(ui, v);
        if (!d)
            return GL_REDRAW_NONE;
        return r == GL_REQ_ENTER ? gl_ui_goto_decision_nodes(ui, d) : gl_ui_veto(ui, d);
    }
    return gl_ui_list_move(v, r, (int)s->n_rows);
}

typedef struct decision_match {
    const gl_decision *d;
    const size_t *rows;
    const char *pattern;
} decision_match;

static bool record_matches(int row, void *ctx)
{
    const decision_match *m = ctx;
    const gl_decision *d = &m->d[m->rows[row]];
    if (gl_ui_match(d->rule, m->pattern) || gl_ui_match(d->reason, m->pattern))
        return true;
    for (size_t i = 0; i < d->n_nodes; i++)
        if (gl_ui_match(d->nodes[i], m->pattern))
            return true;
    return false;
}

static bool decisions_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    decisions_state *s = v->state;
    size_t n;
    if (!s)
        return false;
    decision_match m = {gl_ui_decisions(ui, &n), s->rows, ui->search};
    return gl_ui_list_find(v, (int)s->n_rows, dir, inclusive, record_matches, &m);
}

static unsigned decisions_click(gl_ui *ui, gl_view *v, int row, int col)
{
    decisions_state *s = v->state;
    if (!s || row > v->height)
        return GL_REDRAW_NONE;
    return gl_ui_list_click(v, (int)s->n_rows, 1, row);
}

static void decisions_close(gl_ui *ui, gl_view *v)
{
    decisions_state *s = v->state;
    if (s) {
        free(s->rows);
        free(s->row_ids);
    }
    free(s);
    v->state = NULL;
}

bool gl_ui_decisions_select(gl_ui *ui, int64_t id)
{
    gl_view *v = &ui->views[GL_VIEW_DECISIONS];
    gl_ui_show(ui, GL_VIEW_DECISIONS, ui->current != GL_VIEW_DECISIONS);
    decisions_state *s = v->state;
    size_t n;
    const gl_decision *d = gl_ui_decisions(ui, &n);
    for (int pass = 0; s && pass < 2; pass++) {
        for (size_t i = 0; i < s->n_rows; i++) {
            if (d[s->rows[i]].id == id) {
                v->selected = (int)i;
                v->scroll = v->selected > 2 ? v->selected - 2 : 0;
                return true;
            }
        }
        if (!s->only_refused)
            break;
        s->only_refused = false;
        decisions_open(ui, v);
    }
    return false;
}

unsigned gl_ui_goto_decision(gl_ui *ui, int64_t id)
{
    const gl_pipeline *p = ui->pipeline;
    const gl_decision *d = p ? gl_decision_log_at(&p->log, id) : NULL;
    if (!d || d->step < 1 || (size_t)d->step >= p->n_steps) {
        gl_ui_set_error(ui, "no decision #%lld in this pipeline", (long long)id);
        return GL_REDRAW_STATUS;
    }
    unsigned flags = GL_REDRAW_ALL;
    if ((size_t)d->step != ui->step || ui->budget >= 0)
        gl_ui_goto_step(ui, (size_t)d->step);
    gl_ui_decisions_select(ui, id);
    char label[96];
    gl_snapshot_label(p, (size_t)d->step, label, sizeof(label));
    gl_ui_set_status(ui, "#%lld %s %s (%s) in %s; Esc goes back", (long long)id, d->pass,
                     d->rule ? d->rule : "", gl_verdict_name(d->verdict), label);
    return flags;
}

const gl_view_ops gl_view_decisions_ops = {
    .name = "decisions",
    .open = decisions_open,
    .draw = decisions_draw,
    .request = decisions_request,
    .close = decisions_close,
    .find = decisions_find,
    .click = decisions_click,
};

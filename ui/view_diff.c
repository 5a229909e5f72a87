/* view_diff.c — the shown step against the step before, as gl_diff_write_text writes it
 * (the same text as the exported .diff.txt), one change per unindented line with its
 * details below; inside a pass (+/-) what the last rewrite alone did, or (D) every
 * rewrite so far against the step before, or (D, after a what-if) the other branch's
 * graph at this step against this one. Enter on a change opens its node (a removed one
 * as it was in the step before). */
#include "ui/ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text is formatted an entry (a change with its detail lines) at a time, when a row
 * of it is first drawn or searched: a step that touched 100k nodes opens at once, and
 * only the rows seen cost their formatting. */
typedef struct diff_state {
    const gl_diff *diff; /* what the rows show; another shown diff reopens the view */
    size_t entries;      /* gl_diff_text_entries */
    size_t *first_row;   /* per entry, its first row; [entries]: the row count */
    char **text;         /* per entry, its lines NUL-separated, NULL until formatted */
    size_t n;            /* rows */
} diff_state;

static void free_state(diff_state *s)
{
    for (size_t e = 0; s->text && e < s->entries; e++)
        free(s->text[e]);
    free(s->text);
    free(s->first_row);
    memset(s, 0, sizeof(*s));
}

/* The entry holding row: the last whose first row is at or below it. */
static size_t entry_of(const diff_state *s, size_t row)
{
    size_t lo = 0, hi = s->entries; /* first_row[lo] <= row < first_row[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->first_row[mid] <= row)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Row `row`'s text (in range), formatting its entry on first use. */
static const char *row_text(diff_state *s, size_t row)
{
    size_t e = entry_of(s, row);
    if (!s->text[e]) {
        gl_strbuf b = {0};
        gl_diff_text_entry(s->diff, e, &b);
        gl_sb_putc(&b, '\0'); /* an empty line after the last: the end (none is empty) */
        for (size_t i = 0; i < b.len; i++)
            if (b.s[i] == '\n')
                b.s[i] = '\0';
        s->text[e] = b.s;
    }
    const char *p = s->text[e];
    for (size_t k = row - s->first_row[e]; k > 0 && *p; k--)
        p += strlen(p) + 1;
    return p;
}

/* The node change row belongs to (an index into diff->nodes), -1 for the summary and
 * value changes. */
static int row_change(const diff_state *s, size_t row)
{
    size_t e = entry_of(s, row);
    return e >= 1 && e <= s->diff->n_nodes && !gl_diff_empty(s->diff) ? (int)(e - 1) : -1;
}

static gl_ui_role role_of(const char *line, size_t row)
{
    if (row == 0)
        return GL_ROLE_HEADER;
    switch (line[0]) {
    case '+': return GL_ROLE_ADDED;
    case '-': return GL_ROLE_REMOVED;
    case '>':
    case '~': return GL_ROLE_CHANGED;
    default: return line[0] == ' ' ? GL_ROLE_DIM : GL_ROLE_HEADER;
    }
}

static void diff_open(gl_ui *ui, gl_view *v)
{
    diff_state *s = v->state;
    if (!s)
        s = v->state = gl_xcalloc(1, sizeof(*s));
    free_state(s);
    v->selected = v->scroll = 0;
    const gl_diff *d = gl_ui_shown_diff(ui);
    if (!d)
        return;
    s->diff = d;
    s->entries = gl_diff_text_entries(d);
    s->first_row = gl_xcalloc(s->entries + 1, sizeof(*s->first_row));
    s->text = gl_xcalloc(s->entries, sizeof(*s->text));
    for (size_t e = 0; e < s->entries; e++)
        s->first_row[e + 1] = s->first_row[e] + gl_diff_text_entry_lines(d, e);
    s->n = s->first_row[s->entries];
    if (s->n > 1)
        v->selected = 1; /* the first change, not the summary */
}

/* The rows belong to the diff shown when the view opened: one shown since (a step, D)
 * reopens it before any row is read. */
static diff_state *current_state(gl_ui *ui, gl_view *v)
{
    diff_state *s = v->state;
    if (s && s->diff != gl_ui_shown_diff(ui))
        diff_open(ui, v);
    return s && s->diff ? s : NULL;
}

/* D's branch scope: which two graphs, and how many nodes each has. */
static void branch_title(const gl_ui *ui, const char *now, char *buf, size_t len)
{
    char here[128], there[128], rewrites[64] = "";
    gl_ui_branch_label(ui->pipeline, here, sizeof(here));
    gl_ui_branch_label(ui->other.pipeline, there, sizeof(there));
    const gl_graph *g = gl_ui_branch_graph(ui, ui->step);
    if (ui->budget >= 0)
        snprintf(rewrites, sizeof(rewrites), " after %lld of %lld rewrites",
                 (long long)ui->budget, (long long)ui->pipeline->steps[ui->step].rewrites);
    if (!g)
        snprintf(buf, len, "diff: the other branch (%s) has no step %zu", there, ui->step);
    else
        snprintf(buf, len, "diff: %s%s, %s (%zu nodes), against the other branch, %s (%zu "
                 "nodes; X shows it), by node name", now, rewrites, here, ui->index.n_rows,
                 there, g->live_nodes);
}

static void title(const gl_ui *ui, char *buf, size_t len)
{
    char now[96], before[96];
    if (ui->pipeline && ui->diff_branch) {
        gl_snapshot_label(ui->pipeline, ui->step, now, sizeof(now));
        branch_title(ui, now, buf, len);
        return;
    }
    if (!ui->pipeline || ui->step == 0) {
        snprintf(buf, len, "diff: step 0 is the model as loaded, there is no step before");
        return;
    }
    gl_snapshot_label(ui->pipeline, ui->step, now, sizeof(now));
    gl_snapshot_label(ui->pipeline, ui->step - 1, before, sizeof(before));
    long long k = (long long)ui->budget, n = (long long)ui->pipeline->steps[ui->step].rewrites;
    if (ui->budget < 0) {
        snprintf(buf, len, "diff: %s against %s", now, before);
    } else if (ui->diff_whole_step || k == 0) {
        snprintf(buf, len, "diff: %s after %lld of %lld rewrites against %s%s", now, k, n,
                 before, k ? " (D: rewrite alone)" : "");
    } else {
        char rec[96] = "";
        const gl_decision *d = gl_decision_log_at(&ui->replay.log, ui->replay.rewrite_decision);
        if (d)
            snprintf(rec, sizeof(rec), " (#%lld %s)", (long long)d->id, d->rule ? d->rule : "");
        if (k == 1)
            snprintf(buf, len, "diff: %s rewrite 1 of %lld alone%s, against %s",
                     now, n, rec, before);
        else
            snprintf(buf, len, "diff: %s rewrite %lld of %lld alone%s, against rewrite %lld "
                     "(D: against %s)", now, k, n, rec, k - 1, before);
    }
}

static void diff_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    diff_state *s = current_state(ui, v);
    char buf[640];
    if (height < 1)
        return;
    title(ui, buf, sizeof(buf));
    gl_ui_put(top, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf);
    if (height >= 2 && !s && ui->budget >= 1 && ui->replay.model &&
        !ui->replay.rewrite_diff && !ui->diff_whole_step && !ui->diff_branch) {
        /* complete_shown is replaying the rewrite before this one */
        snprintf(buf, sizeof(buf), "  (replaying rewrite %lld to tell what rewrite %lld did "
                 "alone; D shows the whole step meanwhile)", (long long)ui->budget - 1,
                 (long long)ui->budget);
        gl_ui_put(top + 1, left, width, gl_ui_attr(ui, GL_ROLE_DIM), buf);
    }
    if (height < 3 || !s)
        return;
    gl_ui_clamp(v, (int)s->n, v->height); /* the selection in range, for the footer */
    /* the selected line in full: a long one is cut on its row, or scrolled away by h/L */
    bool any = v->selected >= 0 && (size_t)v->selected < s->n;
    gl_ui_footer footer;
    gl_ui_footer_make(&footer, ui, v, (int)s->n, any ? row_text(s, (size_t)v->selected) : NULL,
                      height, width);
    v->height = height - 1 - footer.lines;
    gl_ui_clamp(v, (int)s->n, v->height);
    for (int row = 0; row < v->height && v->scroll + row < (int)s->n; row++) {
        size_t r = (size_t)(v->scroll + row);
        const char *text = row_text(s, r);
        bool sel = v->scroll + row == v->selected;
        int attr = gl_ui_attr(ui, sel ? GL_ROLE_SELECTED : role_of(text, r));
        int w = gl_ui_put_at(top + 1 + row, left, width, attr, text, v->hscroll);
        if (sel)
            gl_ui_fill(top + 1 + row, left + w, width - w, attr);
    }
    gl_ui_footer_draw(&footer, ui, top, left, height, width);
}

static unsigned open_change(gl_ui *ui, const gl_node_change *c)
{
    if (c->n_new)
        return gl_ui_open_detail(ui, c->new_ids[0], -1);
    if (c->n_old && ui->diff_branch) {
        gl_ui_set_status(ui, "%s '%s' is only in the other branch: X shows it", c->old_ops[0],
                         c->old_names[0]);
        return GL_REDRAW_STATUS;
    }
    if (c->n_old && ui->step > 0) {
        /* Inside a pass a rewrite may remove what an earlier rewrite of the same step
         * made: that node is in no step's graph to show. */
        const gl_node *old = gl_find_node(gl_ui_step_graph(ui, ui->step - 1), c->old_names[0]);
        if (!old || old->id != c->old_ids[0]) {
            gl_ui_set_status(ui, "%s '%s' was made by an earlier rewrite of this step: no "
                             "step's graph has it (D shows the whole step)", c->old_ops[0],
                             c->old_names[0]);
            return GL_REDRAW_STATUS;
        }
        return gl_ui_open_detail(ui, c->old_ids[0], (int64_t)ui->step - 1);
    }
    return GL_REDRAW_NONE;
}

static unsigned diff_request(gl_ui *ui, gl_view *v, gl_request r)
{
    diff_state *s = current_state(ui, v);
    if (!s)
        return GL_REDRAW_NONE;
    if (r == GL_REQ_ENTER) {
        int change = v->selected >= 0 && (size_t)v->selected < s->n ? row_change(s, (size_t)v->selected) : -1;
        const gl_diff *d = s->diff;
        if (change < 0) {
            gl_ui_set_status(ui, "Enter on a node change opens the node");
            return GL_REDRAW_STATUS;
        }
        return open_change(ui, &d->nodes[change]);
    }
    return gl_ui_list_move(v, r, (int)s->n);
}

static const char *line_text(int row, void *ctx)
{
    return row_text(ctx, (size_t)row);
}

static bool diff_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    diff_state *s = current_state(ui, v);
    return s && gl_ui_list_find_text(v, (int)s->n, ui->search, dir, inclusive, line_text, s);
}

static unsigned diff_click(gl_ui *ui, gl_view *v, int row, int col)
{
    diff_state *s = current_state(ui, v);
    return s ? gl_ui_list_click(v, (int)s->n, 1, row) : GL_REDRAW_NONE;
}

static void diff_close(gl_ui *ui, gl_view *v)
{
    if (v->state)
        free_state(v->state);
    free(v->state);
    v->state = NULL;
}

const gl_view_ops gl_view_diff_ops = {
    .name = "diff",
    .open = diff_open,
    .draw = diff_draw,
    .request = diff_request,
    .close = diff_close,
    .find = diff_find,
    .click = diff_click,
};

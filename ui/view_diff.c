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

typedef struct diff_line {
    char *text;      /* points into diff_state.text */
    int change;      /* index into diff->nodes, -1: a value change or the summary */
    gl_ui_role role;
} diff_line;

typedef struct diff_state {
    char *text;      /* the whole diff text, split in place into lines */
    diff_line *lines;
    size_t n;
} diff_state;

static void free_state(diff_state *s)
{
    free(s->text);
    free(s->lines);
    memset(s, 0, sizeof(*s));
}

static gl_ui_role role_of(const char *line)
{
    switch (line[0]) {
    case '+': return GL_ROLE_ADDED;
    case '-': return GL_ROLE_REMOVED;
    case '~':
    case '>':
    case '=': return GL_ROLE_CHANGED;
    default: return line[0] == ' ' ? GL_ROLE_DIM : GL_ROLE_HEADER;
    }
}

/* Line 0 is the summary; then each unindented line starts the next change: node
 * changes in diff order, then the value changes (diff.h). */
static void split_lines(diff_state *s, const gl_diff *d)
{
    size_t cap = 0;
    int change = -1;
    for (char *p = s->text; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        if (s->n > 0 && p[0] != ' ')
            change++;
        GL_GROW(s->lines, cap, s->n + 1);
        s->lines[s->n++] = (diff_line){p, change >= 0 && (size_t)change < d->n_nodes ? change : -1,
                                       s->n == 0 ? GL_ROLE_HEADER : role_of(p)};
        p = nl ? nl + 1 : NULL;
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
    size_t len = 0;
    FILE *f = open_memstream(&s->text, &len);
    if (!f)
        return;
    gl_diff_write_text(d, f);
    fclose(f);
    split_lines(s, d);
    if (s->n > 1)
        v->selected = 1; /* the first change, not the summary */
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
        const gl_decision *d = gl_decision_log_at(&ui->replay_log, ui->rewrite_decision);
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
    diff_state *s = v->state;
    char buf[640];
    if (!s || height < 1)
        return;
    title(ui, buf, sizeof(buf));
    gl_ui_put(top, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf);
    if (height < 3)
        return;
    gl_ui_clamp(v, (int)s->n, v->height); /* the selection in range, for the footer */
    /* the selected line in full: a long one is cut on its row, or scrolled away by h/L */
    bool any = v->selected >= 0 && (size_t)v->selected < s->n;
    gl_ui_footer footer;
    gl_ui_footer_make(&footer, ui, v, (int)s->n, any ? s->lines[v->selected].text : NULL,
                      height, width);
    v->height = height - 1 - footer.lines;
    gl_ui_clamp(v, (int)s->n, v->height);
    for (int row = 0; row < v->height && v->scroll + row < (int)s->n; row++) {
        const diff_line *l = &s->lines[v->scroll + row];
        bool sel = v->scroll + row == v->selected;
        int attr = gl_ui_attr(ui, sel ? GL_ROLE_SELECTED : l->role);
        int w = gl_ui_put_at(top + 1 + row, left, width, attr, l->text, v->hscroll);
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
    diff_state *s = v->state;
    if (!s)
        return GL_REDRAW_NONE;
    if (r == GL_REQ_ENTER) {
        int change = v->selected >= 0 && (size_t)v->selected < s->n ? s->lines[v->selected].change : -1;
        const gl_diff *d = gl_ui_shown_diff(ui);
        if (change < 0 || !d) {
            gl_ui_set_status(ui, "Enter on a node change opens the node");
            return GL_REDRAW_STATUS;
        }
        return open_change(ui, &d->nodes[change]);
    }
    return gl_ui_list_move(v, r, (int)s->n);
}

static const char *line_text(int row, void *ctx)
{
    const diff_state *s = ctx;
    return s->lines[row].text;
}

static bool diff_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    diff_state *s = v->state;
    return s && gl_ui_list_find_text(v, (int)s->n, ui->search, dir, inclusive, line_text, s);
}

static unsigned diff_click(gl_ui *ui, gl_view *v, int row, int col)
{
    diff_state *s = v->state;
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

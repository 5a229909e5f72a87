/* view_run.c — the run of the shown step (`r`, run.c): one row per node or fused group
 * (its members under it), with what ran it, its time on each run (median and spread),
 * the speedups, its share of the run with a bar, the layout conversions, and its outputs
 * against the reference's. `s` cycles the order, Enter opens the row's tensors, `p`
 * selects where the fused and reference runs part ways. After a what-if the run has the
 * other branch beside it: both whole runs, each graph output compared across the
 * branches and with the reference, each row's time there (matched by name and op), and
 * the nodes only one branch has ("only here" in the row, "only there" rows at the end).
 * On a quantized (QDQ) model a float column: each row's error (NMSE) against the float
 * model's run (the model without its Q/DQ pairs), `s` sorts by it worst first, and the
 * header names the pair that loses most and the first whose error jumps (qerror.h). */
#include "ui/ui.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BAR_W = 10, OP_W = 18, NAME_W = 22, IMPL_W = 24 };

typedef struct run_state {
    const gl_run *run; /* the order is for this run and sort */
    gl_run_sort sort;
    size_t *order;
    size_t n_here;     /* rows of the run's profile, in `order` */
    size_t n;          /* and after them the other branch's rows only it has */
    int longest_op, longest_name; /* columns of the longest op text and name of a row */
    int most_skip;     /* at the last draw: the h/L skip that shows the rows' ends */
} run_state;

static const char *const sort_names[GL_RUN_SORTS] = {"time", "name", "topological order",
                                                     "float error"};

static void op_text(const gl_profile_row *pr, int depth, char *buf, size_t len);

/* The longest op text and name of the rows, which the op and name columns widen to. */
static void measure_profile(run_state *s, const gl_profile *p, bool indent)
{
    char op[256];
    for (size_t i = 0; i < p->n_rows; i++) {
        op_text(&p->rows[i], indent ? p->rows[i].depth : 0, op, sizeof(op));
        int ow = gl_ui_text_width(op), nw = gl_ui_text_width(p->rows[i].name);
        s->longest_op = ow > s->longest_op ? ow : s->longest_op;
        s->longest_name = nw > s->longest_name ? nw : s->longest_name;
    }
}

static void measure(run_state *s, const gl_run *r)
{
    s->longest_op = s->longest_name = 0;
    measure_profile(s, r->prof, true);
    if (r->branch) /* its rows only there: a little wider than need be, never narrower */
        measure_profile(s, r->branch->prof, false);
}

static void rebuild(gl_ui *ui, gl_view *v)
{
    run_state *s = v->state;
    const gl_run *r = gl_ui_run_shown(ui);
    if (s->run == r && s->sort == ui->run_sort && (s->order || !r))
        return;
    free(s->order);
    s->order = NULL;
    s->n = s->n_here = 0;
    s->run = r;
    s->sort = ui->run_sort;
    if (!r)
        return;
    s->order = gl_xcalloc(r->prof->n_rows ? r->prof->n_rows : 1, sizeof(size_t));
    s->n_here = gl_run_order(r->prof, r->fused, ui->run_sort, r->float_nmse, s->order);
    s->n = s->n_here + (r->branch ? r->branch->n_only_there : 0);
    measure(s, r);
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

/* A ratio by profile.h's rule ("≈" for the same kernel, "≈1.01x" within noise; the view
 * drops the space to fit its columns), right-aligned in `width` columns ("≈" is one
 * column of three bytes, which printf's widths would count as three). */
static void honest_ratio_text(const gl_ui *ui, const gl_run *r, gl_profile_ratio ratio,
                              int width, char *buf, size_t len)
{
    char text[32];
    if (r->stable && (ratio.known || ratio.same_kernel))
        snprintf(text, sizeof(text), "~");
    else
        gl_profile_ratio_text(ratio, ui->utf8, text, sizeof(text));
    char *space = strchr(text, ' ');
    if (space)
        memmove(space, space + 1, strlen(space));
    size_t n = strlen(text), pad = (size_t)(width > gl_ui_text_width(text)
                                                ? width - gl_ui_text_width(text) : 0);
    if (n + 1 > len)
        n = len - 1;
    if (pad + n + 1 > len)
        pad = len - n - 1;
    memset(buf, ' ', pad);
    memcpy(buf + pad, text, n);
    buf[pad + n] = '\0';
}

/* Row `row`'s time on run `before` over its time on run `after` (honest_ratio_text). */
static void row_ratio_text(const gl_ui *ui, const gl_run *r, size_t row, size_t before,
                           size_t after, int width, char *buf, size_t len)
{
    const gl_profile *p = r->prof;
    const gl_profile_row *pr = &p->rows[row];
    bool ran_b, ran_a;
    gl_profile_stat b = gl_profile_row_stat(p, pr, before, &ran_b);
    gl_profile_stat a = gl_profile_row_stat(p, pr, after, &ran_a);
    gl_profile_ratio ratio = {.known = false};
    if (ran_b && ran_a)
        ratio = gl_profile_ratio_of(b, a, gl_profile_same_kernel(pr, &pr->cells[before],
                                                                 &pr->cells[after]));
    honest_ratio_text(ui, r, ratio, width, buf, len);
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

/* Text cut to `w` columns with "…" when longer, by characters, escaped as every list
 * draws names (gl_ui_clip). */
static void fit(const char *text, int w, bool utf8, char *buf, size_t len)
{
    gl_ui_clip(text, 0, w, utf8, buf, len);
}

/* Graph outputs the header compares across branches, one line each at most. */
enum { BRANCH_OUTPUT_LINES = 3 };

/* Does the header have the line of the data set's expected outputs? */
static bool has_expected_line(const gl_run *r)
{
    return r->prof->has_expected != NULL;
}

/* Header lines above the column names: the whole runs, the nodes, the data set's
 * expected outputs (with --data when it has output_*.pb), the float run's (a QDQ model),
 * and with a branch the two branches, then its outputs (the last line "… N more" when
 * there are more). */
static int header_count(const gl_run *r)
{
    int own = 2 + has_expected_line(r) + r->has_float;
    if (!r->branch)
        return own;
    size_t n = r->branch->n_outputs;
    return own + 1 + (int)(n > BRANCH_OUTPUT_LINES + 1 ? BRANCH_OUTPUT_LINES + 1 : n);
}

static int header_rows(const gl_run *r) { return header_count(r) + 1; }

static void cmp_text(const gl_run *r, const gl_compare *c, char *buf, size_t len)
{
    if (r->stable)
        snprintf(buf, len, "~ / ~%s", c->ok ? "" : " !");
    else
        snprintf(buf, len, "%.1e / %.1e%s", c->max_abs, c->nmse, c->ok ? "" : " !");
}

static void branch_line(const gl_ui *ui, const gl_run *r, int line, char *buf, size_t len)
{
    const gl_run_branch *b = r->branch;
    const gl_profile_backend *h = &r->prof->backends[r->fused], *t = &b->prof->backends[0];
    char th[32], tt[32], x[32];
    if (line == 0) {
        ms_text(r, h->wall.median, th, sizeof(th));
        ms_text(r, t->wall.median, tt, sizeof(tt));
        ratio_text(r, t->wall.median, h->wall.median, x, sizeof(x));
        snprintf(buf, len, "branches: here %s, %zu nodes, %s %s ms; there (X) %s, %zu nodes, "
                 "%s %s ms; here vs there %s; outputs %s", b->here, b->nodes_here, h->name, th,
                 b->there, b->nodes_there, t->name, tt, x,
                 b->outputs_ok ? "agree" : "DIFFER (!: over tolerance)");
        return;
    }
    size_t i = (size_t)line - 1;
    if (line == BRANCH_OUTPUT_LINES + 1 && b->n_outputs > BRANCH_OUTPUT_LINES + 1) {
        snprintf(buf, len, "  %s %zu more outputs", ui->utf8 ? "…" : "...",
                 b->n_outputs - BRANCH_OUTPUT_LINES);
        return;
    }
    char between[64], here[64], there[64];
    cmp_text(r, &b->between[i], between, sizeof(between));
    cmp_text(r, &b->here_ref[i], here, sizeof(here));
    cmp_text(r, &b->there_ref[i], there, sizeof(there));
    snprintf(buf, len, "  output '%s' max abs / nmse: here vs there %s; vs ref: here %s, "
             "there %s", r->prof->output_names[i], between, here, there);
}

static void header_line(const gl_ui *ui, const gl_run *r, int line, char *buf, size_t len)
{
    const gl_profile *p = r->prof;
    char label[96], t[32];
    gl_snapshot_label(ui->pipeline, r->step, label, sizeof(label));
    size_t used = 0;
    if (line == 2 && has_expected_line(r)) {
        /* each run's graph outputs against the data set's output_*.pb */
        char runs[512];
        gl_profile_expected_text(p, r->stable, runs, sizeof(runs));
        snprintf(buf, len, "expected (%s): %s", r->expected_label, runs);
        return;
    }
    if (line == 2 + has_expected_line(r) && r->has_float) {
        gl_run_float_text(r, buf, len);
        return;
    }
    if (line >= 2) {
        branch_line(ui, r, line - 2 - has_expected_line(r) - r->has_float, buf, len);
        return;
    }
    if (line == 0) {
        used = (size_t)snprintf(buf, len, "run of %s on %s; whole run median:", label, r->inputs);
        for (size_t b = 0; b < p->n_backends && used < len; b++) {
            ms_text(r, p->backends[b].wall.median, t, sizeof(t));
            used += (size_t)snprintf(buf + used, len - used, "%s %s %s ms", b ? "," : "",
                                     p->backends[b].name, t);
        }
        if (r->unfused != SIZE_MAX && used < len) {
            char x[32];
            honest_ratio_text(ui, r, gl_profile_ratio_of(p->backends[r->unfused].wall,
                                                         p->backends[r->fused].wall, false),
                              0, x, sizeof(x));
            used += (size_t)snprintf(buf + used, len - used, "; fusion %s", x);
            if (used + 2 < len && gl_run_lost_text(r, buf + used + 2, len - used - 2))
                memcpy(buf + used, "; ", 2);
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

/* The table's columns right of the name, in order: the part h/L scrolls (the mark, op
 * and name stay put on the left, so a row keeps saying what it is). Each is drawn after
 * one blank, `width` columns wide (numbers right-aligned), when the run has it. */
typedef enum run_col {
    COL_IMPL, COL_FUSED, COL_SPREAD, COL_THERE, COL_VTHERE, COL_UNF, COL_REF, COL_VREF,
    COL_VUNF, COL_PCT, COL_BAR, COL_REOR, COL_MABS, COL_NMSE, COL_VFLOAT, COL_COUNT
} run_col;

static const struct {
    int width;
    bool left; /* left-aligned text, not a number */
} col_spec[COL_COUNT] = {
    [COL_IMPL] = {IMPL_W, true}, [COL_FUSED] = {9, false},  [COL_SPREAD] = {5, false},
    [COL_THERE] = {9, false},    [COL_VTHERE] = {10, false}, [COL_UNF] = {10, false},
    [COL_REF] = {8, false},      [COL_VREF] = {6, false},   [COL_VUNF] = {6, false},
    [COL_PCT] = {5, false},      [COL_BAR] = {BAR_W, true}, [COL_REOR] = {4, false},
    [COL_MABS] = {8, false},     [COL_NMSE] = {8, false},   [COL_VFLOAT] = {8, false},
};

/* Does run r show column c? The branch's columns with a branch; the unfused ones unless
 * a branch needs their room and there was no unfused run; the float one on a QDQ model. */
static bool has_col(const gl_run *r, run_col c)
{
    switch (c) {
    case COL_THERE:
    case COL_VTHERE: return r->branch != NULL;
    case COL_UNF:
    case COL_VUNF: return r->unfused != SIZE_MAX || !r->branch;
    case COL_VFLOAT: return r->has_float;
    default: return true;
    }
}

/* A row of the table as text, cell by cell, and the note after the last column. */
typedef struct row_cells {
    char mark;
    char op[128], name[1024];
    char cell[COL_COUNT][160];
    const char *note; /* "  over tolerance", "  fusion lost ...", "" */
    char note_buf[96]; /* the note when made for the row */
} row_cells;

/* The widths of the fixed part: op and name (gl_ui_column_width). */
typedef struct run_layout {
    int op_w, name_w;
} run_layout;

/* Append `text` padded to `width` columns (by columns: "≈" and "…" take one). */
static size_t append_cell(char *buf, size_t len, size_t used, const char *text, int width,
                          bool left)
{
    int pad = width - gl_ui_text_width(text);
    size_t blanks = pad > 0 ? (size_t)pad : 0, n = strlen(text);
    size_t before = left ? 0 : blanks, after = left ? blanks : 0;
    if (used + before + n + after + 1 > len) /* cut: the row is past any screen anyway */
        return used;
    memset(buf + used, ' ', before);
    memcpy(buf + used + before, text, n);
    memset(buf + used + before + n, ' ', after);
    used += before + n + after;
    buf[used] = '\0';
    return used;
}

/* The part that stays: "! op   name  ", op and name cut to their columns with "…". */
static void fixed_text(const row_cells *c, const run_layout *l, bool utf8, char *buf,
                       size_t len)
{
    char op[4 * sizeof(c->op)], name[4 * sizeof(c->name)];
    gl_ui_clip(c->op, 0, l->op_w, utf8, op, sizeof(op));
    gl_ui_clip(c->name, 0, l->name_w, utf8, name, sizeof(name));
    size_t used = (size_t)snprintf(buf, len, "%c ", c->mark);
    used = append_cell(buf, len, used, op, l->op_w, true);
    used = append_cell(buf, len, used, " ", 1, true);
    append_cell(buf, len, used, name, l->name_w, true);
}

/* The part h/L scrolls: every column the run has, then the note. stops (may be NULL)
 * receives where each column starts, *n_stops their count. Returns the columns of the
 * text without the note. */
static int scrolled_text(const gl_run *r, const row_cells *c, char *buf, size_t len,
                         int *stops, int *n_stops)
{
    size_t used = 0;
    int cols = 0, n = 0;
    buf[0] = '\0';
    for (int k = 0; k < COL_COUNT; k++) {
        if (!has_col(r, (run_col)k))
            continue;
        used = append_cell(buf, len, used, " ", 1, true);
        if (stops)
            stops[n] = cols + 1;
        n++;
        used = append_cell(buf, len, used, c->cell[k], col_spec[k].width, col_spec[k].left);
        cols += 1 + col_spec[k].width;
    }
    if (n_stops)
        *n_stops = n;
    snprintf(buf + used, len - used, "%s", c->note);
    return cols;
}

static void columns_cells(const gl_run *r, row_cells *c)
{
    static const char *const titles[COL_COUNT] = {
        [COL_IMPL] = "backend", [COL_SPREAD] = "±",        [COL_THERE] = "there ms",
        [COL_VTHERE] = "vs there", [COL_UNF] = "unfused ms", [COL_REF] = "ref ms",
        [COL_VREF] = "vs ref",  [COL_VUNF] = "vs unf",     [COL_PCT] = "%",
        [COL_BAR] = "",         [COL_REOR] = "reor",       [COL_MABS] = "max abs",
        [COL_NMSE] = "nmse",    [COL_VFLOAT] = "vs float",
    };
    *c = (row_cells){.mark = ' ', .op = "op", .name = "name", .note = ""};
    for (int k = 0; k < COL_COUNT; k++)
        snprintf(c->cell[k], sizeof(c->cell[k]), "%s", titles[k] ? titles[k] : "");
    snprintf(c->cell[COL_FUSED], sizeof(c->cell[COL_FUSED]), "%s ms",
             r->prof->backends[r->fused].name);
}

/* A row's op as the op column shows it: indented by its depth, a group with its number
 * of members ("  FusedConvRelu (2)"). */
static void op_text(const gl_profile_row *pr, int depth, char *buf, size_t len)
{
    snprintf(buf, len, "%*s%s", depth * 2, "", pr->op);
    size_t n = strlen(buf);
    if (pr->n_members && n < len)
        snprintf(buf + n, len - n, " (%zu)", pr->n_members);
}

/* The cells of one row of the table; *over: its outputs are over tolerance. */
static void row_cells_of(const gl_ui *ui, const gl_run *r, size_t row, row_cells *rc,
                         bool *over)
{
    const gl_profile *p = r->prof;
    const gl_profile_row *pr = &p->rows[row];
    const gl_profile_cell *c = &pr->cells[r->fused];
    *rc = (row_cells){.note = ""};
    char impl[128];
    op_text(pr, pr->depth, rc->op, sizeof(rc->op));
    snprintf(rc->name, sizeof(rc->name), "%s", pr->name);
    if (!c->ran)
        snprintf(impl, sizeof(impl), "-");
    else if (r->stable) /* implementations depend on the CPU */
        snprintf(impl, sizeof(impl), "%s%s", c->backend, c->fell_back ? "*" : "");
    else
        snprintf(impl, sizeof(impl), "%s %s%s", c->backend, c->info.impl, c->fell_back ? "*" : "");
    fit(impl, IMPL_W, ui->utf8, rc->cell[COL_IMPL], sizeof(rc->cell[COL_IMPL]));
    double f = gl_run_row_ms(p, row, r->fused), ref = gl_run_row_ms(p, row, r->ref);
    double u = r->unfused != SIZE_MAX ? gl_run_row_ms(p, row, r->unfused) : -1;
    double there = gl_run_there_ms(r, row);
    ms_text(r, f, rc->cell[COL_FUSED], sizeof(rc->cell[COL_FUSED]));
    ms_text(r, there, rc->cell[COL_THERE], sizeof(rc->cell[COL_THERE]));
    ratio_text(r, there, f, rc->cell[COL_VTHERE], sizeof(rc->cell[COL_VTHERE]));
    ms_text(r, u, rc->cell[COL_UNF], sizeof(rc->cell[COL_UNF]));
    ms_text(r, ref, rc->cell[COL_REF], sizeof(rc->cell[COL_REF]));
    if (!c->ran || c->ms.median <= 0)
        snprintf(rc->cell[COL_SPREAD], sizeof(rc->cell[COL_SPREAD]), "-");
    else if (r->stable)
        snprintf(rc->cell[COL_SPREAD], sizeof(rc->cell[COL_SPREAD]), "~");
    else if ((c->ms.max - c->ms.min) / c->ms.median > 9.99) /* one slow round: a busy CPU */
        snprintf(rc->cell[COL_SPREAD], sizeof(rc->cell[COL_SPREAD]), ">999%%");
    else
        snprintf(rc->cell[COL_SPREAD], sizeof(rc->cell[COL_SPREAD]), "%.0f%%",
                 (c->ms.max - c->ms.min) / c->ms.median * 100);
    row_ratio_text(ui, r, row, r->ref, r->fused, 6, rc->cell[COL_VREF], sizeof(rc->cell[COL_VREF]));
    row_ratio_text(ui, r, row, r->unfused, r->fused, 6, rc->cell[COL_VUNF], sizeof(rc->cell[COL_VUNF]));
    if (!c->ran || pr->depth > 0)
        snprintf(rc->cell[COL_PCT], sizeof(rc->cell[COL_PCT]), "-");
    else if (r->stable)
        snprintf(rc->cell[COL_PCT], sizeof(rc->cell[COL_PCT]), "~");
    else
        snprintf(rc->cell[COL_PCT], sizeof(rc->cell[COL_PCT]), "%.1f", c->pct);
    bar_text(r, c->ran && pr->depth == 0 ? c->pct : 0, ui->utf8, rc->cell[COL_BAR], sizeof(rc->cell[COL_BAR]));
    if (c->ran && r->stable) /* which weights get reordered depends on the CPU too */
        snprintf(rc->cell[COL_REOR], sizeof(rc->cell[COL_REOR]), "~");
    else if (c->ran)
        snprintf(rc->cell[COL_REOR], sizeof(rc->cell[COL_REOR]), "%zu", c->conversions + c->info.const_reorders);
    else
        snprintf(rc->cell[COL_REOR], sizeof(rc->cell[COL_REOR]), "-");
    *over = c->compared && !c->cmp.ok;
    if (!c->compared) {
        snprintf(rc->cell[COL_MABS], sizeof(rc->cell[COL_MABS]), "-");
        snprintf(rc->cell[COL_NMSE], sizeof(rc->cell[COL_NMSE]), "-");
    } else if (r->stable) {
        snprintf(rc->cell[COL_MABS], sizeof(rc->cell[COL_MABS]), "~");
        snprintf(rc->cell[COL_NMSE], sizeof(rc->cell[COL_NMSE]), "~");
    } else {
        snprintf(rc->cell[COL_MABS], sizeof(rc->cell[COL_MABS]), "%.1e", c->cmp.max_abs);
        snprintf(rc->cell[COL_NMSE], sizeof(rc->cell[COL_NMSE]), "%.1e", c->cmp.nmse);
    }
    double fe = r->float_nmse ? r->float_nmse[row] : NAN;
    if (isnan(fe))
        snprintf(rc->cell[COL_VFLOAT], sizeof(rc->cell[COL_VFLOAT]), "-");
    else
        snprintf(rc->cell[COL_VFLOAT], sizeof(rc->cell[COL_VFLOAT]), r->stable ? "~" : "%.1e", fe);
    rc->mark = *over ? '!' : ' ';
    if (*over)
        rc->note = "  over tolerance";
    /* A group slower fused than its members beyond noise (profile.h's rule), as the
     * profile table flags it; not on a stable (golden) screen, where times are '~'. */
    char *lost = rc->note_buf;
    double lost_ms = r->stable ? 0 : gl_profile_row_lost(p, pr, r->fused, r->unfused);
    if (!*over && lost_ms > 0) {
        if (pr->decision >= 0)
            snprintf(lost, sizeof(rc->note_buf), "  fusion lost %.2f ms (decision #%lld)", lost_ms,
                     (long long)pr->decision);
        else /* a group the loaded model had already */
            snprintf(lost, sizeof(rc->note_buf), "  fusion lost %.2f ms", lost_ms);
        rc->note = lost;
        rc->mark = '<';
    }
    if (r->branch && pr->depth == 0 && c->ran && there < 0)
        snprintf(rc->cell[COL_VTHERE], sizeof(rc->cell[COL_VTHERE]), "only here");
}

/* Row k of the other branch's own rows no row here matches: its time there alone. */
static void there_row_cells(const gl_ui *ui, const gl_run *r, size_t k, row_cells *rc)
{
    const gl_profile *p = r->branch->prof;
    const gl_profile_row *pr = &p->rows[k];
    *rc = (row_cells){.mark = ' ', .note = ""};
    for (int i = 0; i < COL_COUNT; i++)
        snprintf(rc->cell[i], sizeof(rc->cell[i]), "-");
    snprintf(rc->cell[COL_VTHERE], sizeof(rc->cell[COL_VTHERE]), "only there");
    op_text(pr, 0, rc->op, sizeof(rc->op));
    snprintf(rc->name, sizeof(rc->name), "%s", pr->name);
    fit(pr->cells[0].ran ? pr->cells[0].backend : "-", IMPL_W, ui->utf8, rc->cell[COL_IMPL],
        sizeof(rc->cell[COL_IMPL]));
    ms_text(r, gl_run_row_ms(p, k, 0), rc->cell[COL_THERE], sizeof(rc->cell[COL_THERE]));
    bar_text(r, 0, ui->utf8, rc->cell[COL_BAR], sizeof(rc->cell[COL_BAR]));
}

/* The cells of the view's row i (a row of the run, or one only the other branch has),
 * and the role it is drawn in. */
static gl_ui_role cells_at(const gl_ui *ui, const run_state *s, int i, row_cells *rc)
{
    const gl_run *r = s->run;
    if ((size_t)i >= s->n_here) {
        there_row_cells(ui, r, r->branch->only_there[(size_t)i - s->n_here], rc);
        return GL_ROLE_DIM;
    }
    bool over = false;
    row_cells_of(ui, r, s->order[i], rc, &over);
    return over ? GL_ROLE_ERROR : r->prof->rows[s->order[i]].depth ? GL_ROLE_DIM : GL_ROLE_NORMAL;
}

/* The op and name columns for `width` columns: as wide as the longest op and name where
 * the rest of the row leaves room (name first), OP_W and NAME_W at least, and a part to
 * scroll of MIN_SCROLLED columns kept on a narrow terminal. */
enum { MIN_SCROLLED = 24, MIN_NAME_W = 8 };
static run_layout layout_for(const run_state *s, int scrolled_w, int width)
{
    run_layout l;
    int spare = width - (2 + OP_W + 1 + NAME_W + scrolled_w);
    l.name_w = gl_ui_column_width(s->longest_name, NAME_W, spare);
    spare -= l.name_w - NAME_W;
    l.op_w = gl_ui_column_width(s->longest_op, OP_W, spare);
    int room = width - MIN_SCROLLED - (2 + l.op_w + 1);
    if (l.name_w > room)
        l.name_w = room > MIN_NAME_W ? room : MIN_NAME_W;
    return l;
}

/* The footer's row text (gl_ui_footer_make puts "i/n " before it): the selected row in
 * full (its op, name and what ran it), and where h/L stand, so that a name cut in its
 * column, or scrolled away, is still read. NULL: no row selected. */
static const char *footer_text(const gl_ui *ui, const run_state *s, const gl_view *v,
                               char *buf, size_t len)
{
    row_cells rc;
    if (v->selected < 0 || (size_t)v->selected >= s->n)
        return NULL;
    cells_at(ui, s, v->selected, &rc);
    const char *op = rc.op + strspn(rc.op, " ");
    snprintf(buf, len, "%s '%s' on %s%s", op, rc.name, rc.cell[COL_IMPL],
             v->hscroll ? "   (h/L: columns)" : s->most_skip ? "   (L: more columns)" : "");
    return buf;
}

/* One row: the fixed part, then the scrolled part skipped by h/L. Returns its columns. */
static int draw_row(const gl_ui *ui, const gl_run *r, int skip, const run_layout *l,
                    const row_cells *rc, int y, int left, int width, int attr)
{
    char fixed[4096], rest[4096];
    fixed_text(rc, l, ui->utf8, fixed, sizeof(fixed));
    scrolled_text(r, rc, rest, sizeof(rest), NULL, NULL);
    int w = gl_ui_put(y, left, width, attr, fixed);
    if (w < width)
        w += gl_ui_put_at(y, left + w, width - w, attr, rest, skip);
    return w;
}

static void run_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    run_state *s = v->state;
    if (!s || height < 1)
        return;
    rebuild(ui, v);
    const gl_run *r = s->run;
    char buf[4096]; /* a footer holds a name of up to 1 KB and more */
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
    int hdr = header_rows(r);
    for (int line = 0; line < hdr - 1 && line < height; line++) {
        header_line(ui, r, line, buf, sizeof(buf));
        gl_ui_put_at(top + line, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf, v->hscroll);
    }
    if (height < hdr + 2)
        return;
    row_cells rc;
    columns_cells(r, &rc);
    char rest[4096];
    int scrolled_w = scrolled_text(r, &rc, rest, sizeof(rest), NULL, NULL);
    run_layout l = layout_for(s, scrolled_w, width);
    int fixed_w = 2 + l.op_w + 1 + l.name_w;
    s->most_skip = scrolled_w > width - fixed_w ? scrolled_w - (width - fixed_w) : 0;
    draw_row(ui, r, v->hscroll, &l, &rc, top + hdr - 1, left, width, gl_ui_attr(ui, GL_ROLE_DIM));
    gl_ui_clamp(v, (int)s->n, height - hdr - 1); /* the selection in range, for the footer */
    gl_ui_footer footer;
    gl_ui_footer_make(&footer, ui, v, (int)s->n, footer_text(ui, s, v, buf, sizeof(buf)),
                      height, width);
    v->height = height - hdr - footer.lines;
    gl_ui_clamp(v, (int)s->n, v->height);
    for (int row = 0; row < v->height && v->scroll + row < (int)s->n; row++) {
        int i = v->scroll + row;
        gl_ui_role role = cells_at(ui, s, i, &rc);
        int attr = i == v->selected ? gl_ui_attr(ui, GL_ROLE_SELECTED) : gl_ui_attr(ui, role);
        int w = draw_row(ui, r, v->hscroll, &l, &rc, top + hdr + row, left, width, attr);
        if (i == v->selected)
            gl_ui_fill(top + hdr + row, left + w, width - w, attr);
    }
    gl_ui_footer_draw(&footer, ui, top, left, height, width);
}

/* h/L: to the previous or next column of the scrolled part, until the rows' ends show. */
static unsigned pan(run_state *s, gl_view *v, int dir)
{
    row_cells rc;
    columns_cells(s->run, &rc);
    char rest[4096];
    int stops[COL_COUNT], n_stops = 0;
    scrolled_text(s->run, &rc, rest, sizeof(rest), stops, &n_stops);
    int to = gl_ui_pan_stop(stops, n_stops, v->hscroll, dir, s->most_skip);
    if (to == v->hscroll)
        return GL_REDRAW_NONE;
    v->hscroll = to;
    return GL_REDRAW_VIEW;
}

static unsigned run_request(gl_ui *ui, gl_view *v, gl_request r)
{
    run_state *s = v->state;
    if (!s)
        return GL_REDRAW_NONE;
    rebuild(ui, v);
    if (s->run && (r == GL_REQ_PAN_LEFT || r == GL_REQ_PAN_RIGHT))
        return pan(s, v, r == GL_REQ_PAN_LEFT ? -1 : 1);
    unsigned flags = gl_ui_list_move(v, r, (int)s->n);
    if (flags)
        return flags;
    switch (r) {
    case GL_REQ_SORT:
        ui->run_sort = gl_run_next_sort(s->run, ui->run_sort);
        rebuild(ui, v);
        v->selected = v->scroll = 0;
        gl_ui_set_status(ui, "run view sorted by %s", sort_names[ui->run_sort]);
        return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
    case GL_REQ_ENTER:
        if (v->selected < 0 || (size_t)v->selected >= s->n)
            return GL_REDRAW_NONE;
        if ((size_t)v->selected >= s->n_here) {
            gl_ui_set_status(ui, "only the other branch has this node: X shows that branch, "
                             "r runs it");
            return GL_REDRAW_STATUS;
        }
        ui->tensor_row = s->order[v->selected];
        ui->views[GL_VIEW_TENSOR].generation = 0; /* another row: open it again */
        return gl_ui_show(ui, GL_VIEW_TENSOR, true);
    default: return GL_REDRAW_NONE;
    }
}

typedef struct run_match {
    const gl_run *run;
    const size_t *order;
    size_t n_here;
    const char *pattern;
} run_match;

static bool run_row_matches(int row, void *ctx)
{
    const run_match *m = ctx;
    size_t i = (size_t)row;
    const gl_run_branch *b = m->run->branch;
    const gl_profile_row *pr = i < m->n_here ? &m->run->prof->rows[m->order[i]]
                                             : &b->prof->rows[b->only_there[i - m->n_here]];
    return gl_ui_match(pr->name, m->pattern) || gl_ui_match(pr->op, m->pattern);
}

static bool run_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    run_state *s = v->state;
    if (!s || !s->run)
        return false;
    run_match m = {s->run, s->order, s->n_here, ui->search};
    return gl_ui_list_find(v, (int)s->n, dir, inclusive, run_row_matches, &m);
}

static unsigned run_click(gl_ui *ui, gl_view *v, int row, int col)
{
    run_state *s = v->state;
    if (!s || !s->run)
        return GL_REDRAW_NONE;
    return gl_ui_list_click(v, (int)s->n, header_rows(s->run), row);
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

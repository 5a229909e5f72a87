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
} run_state;

static const char *const sort_names[GL_RUN_SORTS] = {"time", "name", "topological order",
                                                     "float error"};

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

/* A row of the table as text, cell by cell; with a branch two more cells after the
 * spread: the time there and how much faster here is. */
typedef struct row_cells {
    char mark;
    char op[128], name[128], impl[160];
    char tf[24], spread[24], there[24], vthere[24], tu[24], tr[24], vref[24], vunf[24];
    char pct[24], bar[64], reor[24], mabs[24], nmse[24], vfloat[24];
    const char *note; /* "  over tolerance", "  only here", "" */
} row_cells;

static void format_row(const gl_run *r, const row_cells *c, char *buf, size_t len)
{
    int op_pad = OP_W - gl_ui_text_width(c->op), name_pad = NAME_W - gl_ui_text_width(c->name);
    int impl_pad = IMPL_W - gl_ui_text_width(c->impl);
    char there[64] = "", unf[32] = "", vunf[32] = "", vfloat[32] = "";
    if (r->branch)
        snprintf(there, sizeof(there), " %9s %10s", c->there, c->vthere);
    if (r->unfused != SIZE_MAX || !r->branch) { /* the branch columns need the room */
        snprintf(unf, sizeof(unf), " %10s", c->tu);
        snprintf(vunf, sizeof(vunf), " %6s", c->vunf);
    }
    if (r->has_float)
        snprintf(vfloat, sizeof(vfloat), " %8s", c->vfloat);
    snprintf(buf, len, "%c %s%*s %s%*s %s%*s %9s %5s%s%s %8s %6s%s %5s %s %4s %8s %8s%s%s",
             c->mark, c->op, op_pad > 0 ? op_pad : 0, "", c->name, name_pad > 0 ? name_pad : 0,
             "", c->impl, impl_pad > 0 ? impl_pad : 0, "", c->tf, c->spread, there, unf, c->tr,
             c->vref, vunf, c->pct, c->bar, c->reor, c->mabs, c->nmse, vfloat, c->note);
}

static void columns_line(const gl_run *r, char *buf, size_t len)
{
    row_cells c = {.mark = ' ', .op = "op", .name = "name", .impl = "backend", .spread = "±",
                   .there = "there ms", .vthere = "vs there", .tu = "unfused ms",
                   .tr = "ref ms", .vref = "vs ref", .vunf = "vs unf", .pct = "%",
                   .reor = "reor", .mabs = "max abs", .nmse = "nmse", .vfloat = "vs float",
                   .note = ""};
    snprintf(c.tf, sizeof(c.tf), "%s ms", r->prof->backends[r->fused].name);
    snprintf(c.bar, sizeof(c.bar), "%*s", BAR_W, "");
    format_row(r, &c, buf, len);
}

/* One row of the table; *over: its outputs are over tolerance. */
static void row_text(const gl_ui *ui, const gl_run *r, size_t row, char *buf, size_t len,
                     bool *over)
{
    const gl_profile *p = r->prof;
    const gl_profile_row *pr = &p->rows[row];
    const gl_profile_cell *c = &pr->cells[r->fused];
    row_cells rc = {.note = ""};
    char op[96], impl[128];
    snprintf(op, sizeof(op), "%*s%s", pr->depth * 2, "", pr->op);
    if (pr->n_members) {
        size_t n = strlen(op);
        snprintf(op + n, sizeof(op) - n, " (%zu)", pr->n_members);
    }
    fit(op, OP_W, ui->utf8, rc.op, sizeof(rc.op));
    fit(pr->name, NAME_W, ui->utf8, rc.name, sizeof(rc.name));
    if (!c->ran)
        snprintf(impl, sizeof(impl), "-");
    else if (r->stable) /* implementations depend on the CPU */
        snprintf(impl, sizeof(impl), "%s%s", c->backend, c->fell_back ? "*" : "");
    else
        snprintf(impl, sizeof(impl), "%s %s%s", c->backend, c->info.impl, c->fell_back ? "*" : "");
    fit(impl, IMPL_W, ui->utf8, rc.impl, sizeof(rc.impl));
    double f = gl_run_row_ms(p, row, r->fused), ref = gl_run_row_ms(p, row, r->ref);
    double u = r->unfused != SIZE_MAX ? gl_run_row_ms(p, row, r->unfused) : -1;
    double there = gl_run_there_ms(r, row);
    ms_text(r, f, rc.tf, sizeof(rc.tf));
    ms_text(r, there, rc.there, sizeof(rc.there));
    ratio_text(r, there, f, rc.vthere, sizeof(rc.vthere));
    ms_text(r, u, rc.tu, sizeof(rc.tu));
    ms_text(r, ref, rc.tr, sizeof(rc.tr));
    if (!c->ran || c->ms.median <= 0)
        snprintf(rc.spread, sizeof(rc.spread), "-");
    else if (r->stable)
        snprintf(rc.spread, sizeof(rc.spread), "~");
    else if ((c->ms.max - c->ms.min) / c->ms.median > 9.99) /* one slow round: a busy CPU */
        snprintf(rc.spread, sizeof(rc.spread), ">999%%");
    else
        snprintf(rc.spread, sizeof(rc.spread), "%.0f%%",
                 (c->ms.max - c->ms.min) / c->ms.median * 100);
    row_ratio_text(ui, r, row, r->ref, r->fused, 6, rc.vref, sizeof(rc.vref));
    row_ratio_text(ui, r, row, r->unfused, r->fused, 6, rc.vunf, sizeof(rc.vunf));
    if (!c->ran || pr->depth > 0)
        snprintf(rc.pct, sizeof(rc.pct), "-");
    else if (r->stable)
        snprintf(rc.pct, sizeof(rc.pct), "~");
    else
        snprintf(rc.pct, sizeof(rc.pct), "%.1f", c->pct);
    bar_text(r, c->ran && pr->depth == 0 ? c->pct : 0, ui->utf8, rc.bar, sizeof(rc.bar));
    if (c->ran && r->stable) /* which weights get reordered depends on the CPU too */
        snprintf(rc.reor, sizeof(rc.reor), "~");
    else if (c->ran)
        snprintf(rc.reor, sizeof(rc.reor), "%zu", c->conversions + c->info.const_reorders);
    else
        snprintf(rc.reor, sizeof(rc.reor), "-");
    *over = c->compared && !c->cmp.ok;
    if (!c->compared) {
        snprintf(rc.mabs, sizeof(rc.mabs), "-");
        snprintf(rc.nmse, sizeof(rc.nmse), "-");
    } else if (r->stable) {
        snprintf(rc.mabs, sizeof(rc.mabs), "~");
        snprintf(rc.nmse, sizeof(rc.nmse), "~");
    } else {
        snprintf(rc.mabs, sizeof(rc.mabs), "%.1e", c->cmp.max_abs);
        snprintf(rc.nmse, sizeof(rc.nmse), "%.1e", c->cmp.nmse);
    }
    double fe = r->float_nmse ? r->float_nmse[row] : NAN;
    if (isnan(fe))
        snprintf(rc.vfloat, sizeof(rc.vfloat), "-");
    else
        snprintf(rc.vfloat, sizeof(rc.vfloat), r->stable ? "~" : "%.1e", fe);
    rc.mark = *over ? '!' : ' ';
    if (*over)
        rc.note = "  over tolerance";
    /* A group slower fused than its members beyond noise (profile.h's rule), as the
     * profile table flags it; not on a stable (golden) screen, where times are '~'. */
    char lost[96];
    double lost_ms = r->stable ? 0 : gl_profile_row_lost(p, pr, r->fused, r->unfused);
    if (!*over && lost_ms > 0) {
        if (pr->decision >= 0)
            snprintf(lost, sizeof(lost), "  fusion lost %.2f ms (decision #%lld)", lost_ms,
                     (long long)pr->decision);
        else /* a group the loaded model had already */
            snprintf(lost, sizeof(lost), "  fusion lost %.2f ms", lost_ms);
        rc.note = lost;
        rc.mark = '<';
    }
    if (r->branch && pr->depth == 0 && c->ran && there < 0)
        snprintf(rc.vthere, sizeof(rc.vthere), "only here");
    format_row(r, &rc, buf, len);
}

/* Row k of the other branch's own rows no row here matches: its time there alone. */
static void there_row_text(const gl_ui *ui, const gl_run *r, size_t k, char *buf, size_t len)
{
    const gl_profile *p = r->branch->prof;
    const gl_profile_row *pr = &p->rows[k];
    row_cells rc = {.mark = ' ', .vthere = "only there", .note = ""};
    char *dash[] = {rc.tf, rc.spread, rc.tu, rc.tr, rc.vref, rc.vunf,
                    rc.pct, rc.reor, rc.mabs, rc.nmse, rc.vfloat};
    for (size_t i = 0; i < GL_ARRAY_LEN(dash); i++)
        snprintf(dash[i], sizeof(rc.tf), "-");
    char op[96];
    snprintf(op, sizeof(op), "%s", pr->op);
    if (pr->n_members) {
        size_t n = strlen(op);
        snprintf(op + n, sizeof(op) - n, " (%zu)", pr->n_members);
    }
    fit(op, OP_W, ui->utf8, rc.op, sizeof(rc.op));
    fit(pr->name, NAME_W, ui->utf8, rc.name, sizeof(rc.name));
    fit(pr->cells[0].ran ? pr->cells[0].backend : "-", IMPL_W, ui->utf8, rc.impl,
        sizeof(rc.impl));
    ms_text(r, gl_run_row_ms(p, k, 0), rc.there, sizeof(rc.there));
    bar_text(r, 0, ui->utf8, rc.bar, sizeof(rc.bar));
    format_row(r, &rc, buf, len);
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
    int hdr = header_rows(r);
    for (int line = 0; line < hdr - 1 && line < height; line++) {
        header_line(ui, r, line, buf, sizeof(buf));
        gl_ui_put(top + line, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf);
    }
    if (height < hdr)
        return;
    columns_line(r, buf, sizeof(buf));
    gl_ui_put(top + hdr - 1, left, width, gl_ui_attr(ui, GL_ROLE_DIM), buf);
    v->height = height - hdr;
    gl_ui_clamp(v, (int)s->n, v->height);
    for (int row = 0; row < v->height && v->scroll + row < (int)s->n; row++) {
        int i = v->scroll + row;
        bool over = false;
        gl_ui_role role = GL_ROLE_DIM;
        if ((size_t)i < s->n_here) {
            row_text(ui, r, s->order[i], buf, sizeof(buf), &over);
            role = over ? GL_ROLE_ERROR
                        : r->prof->rows[s->order[i]].depth ? GL_ROLE_DIM : GL_ROLE_NORMAL;
        } else {
            there_row_text(ui, r, r->branch->only_there[(size_t)i - s->n_here], buf,
                           sizeof(buf));
        }
        int attr = i == v->selected ? gl_ui_attr(ui, GL_ROLE_SELECTED) : gl_ui_attr(ui, role);
        int w = gl_ui_put(top + hdr + row, left, width, attr, buf);
        if (i == v->selected)
            gl_ui_fill(top + hdr + row, left + w, width - w, attr);
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

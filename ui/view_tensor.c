/* view_tensor.c — the tensors of one row of the run view (Enter there): per output, its
 * type and layout, min/max/mean/std and NaN/Inf counts, a histogram, and the tensor
 * against the reference's with its worst element; then every value of one output, a
 * row of the tensor per line (wrapped to the width), paged with j/k/PgDn/PgUp. A tensor
 * of rank > 2 shows one 2-D slice at a time, [n, c, :, :]: J/K step its leading indices,
 * Enter goes to the next output; the last line says which slice, how many values and the
 * index of the first one on screen. The tensors are those the run kept (run.c:
 * intermediates.h); `w` writes them as TensorProto .pb files into the export folder,
 * through the one guarded write path (gl_tensor_write_pb). */
#include "ui/ui.h"

#include "driver/driver.h"
#include "onnx/onnx_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_OUTPUTS = 16, DEFAULT_PER_LINE = 8 };

typedef struct tensor_state {
    char **lines;        /* the summary of every output, above the values */
    size_t n, cap;
    size_t out;          /* the output whose values are shown */
    int64_t lead[GL_MAX_RANK]; /* its slice's leading indices (rank > 2) */
    int per_line;        /* values per line at the last draw */
} tensor_state;

/* ---- slices: pure, tested in tests/test_ui_run.c ---------------------------------------- */

int64_t gl_slice_count(const int64_t *dims, int rank)
{
    int64_t n = 1;
    for (int d = 0; d + 2 < rank; d++)
        n *= dims[d];
    return n;
}

int64_t gl_slice_first(const int64_t *dims, int rank, const int64_t *lead)
{
    int64_t at = 0;
    for (int d = 0; d + 2 < rank; d++)
        at = at * dims[d] + lead[d];
    for (int d = rank - 2; d < rank; d++)
        at *= d >= 0 ? dims[d] : 1;
    return at;
}

bool gl_slice_step(const int64_t *dims, int rank, int64_t *lead, int dir)
{
    int64_t was[GL_MAX_RANK];
    int n = rank > 2 ? rank - 2 : 0;
    memcpy(was, lead, (size_t)n * sizeof(*lead));
    for (int d = n - 1; d >= 0; d--) { /* an odometer, the last index turning fastest */
        lead[d] += dir > 0 ? 1 : -1;
        if (lead[d] >= 0 && lead[d] < dims[d])
            return true;
        lead[d] = dir > 0 ? 0 : dims[d] - 1;
    }
    memcpy(lead, was, (size_t)n * sizeof(*lead)); /* past either end: stays */
    return false;
}

void gl_slice_text(const int64_t *dims, int rank, const int64_t *lead, char *buf, size_t len)
{
    (void)dims;
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < rank && used < len; d++) {
        int n = d + 2 < rank ? snprintf(buf + used, len - used, "%s%lld", d ? ", " : "",
                                        (long long)lead[d])
                             : snprintf(buf + used, len - used, "%s:", d ? ", " : "");
        used += n > 0 ? (size_t)n : 0;
    }
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

/* The shown slice as a matrix: its rows, and its columns (values per tensor row). */
static void slice_shape(const gl_tensor *t, int64_t *rows, int64_t *cols)
{
    *rows = t->rank >= 2 ? t->dims[t->rank - 2] : 1;
    *cols = t->rank >= 1 ? t->dims[t->rank - 1] : 1;
}

/* Lines a slice takes at `per_line` values a line: each of its rows wrapped. */
static int64_t slice_lines(const gl_tensor *t, int per_line)
{
    int64_t rows, cols;
    slice_shape(t, &rows, &cols);
    int64_t wraps = cols > 0 ? (cols + per_line - 1) / per_line : 0;
    int64_t n = rows * wraps;
    return n < INT32_MAX / 2 ? n : INT32_MAX / 2; /* rows are ints: a bound, never reached */
}

/* The kept tensors of `node` (the fused run's; the reference's where the fused run ran it
 * inside a whole group), at most `max`. */
static size_t outputs_of(const gl_inter_rec *rec, const char *node, const gl_inter_tensor **out,
                         size_t max)
{
    size_t n = 0;
    for (size_t i = 0; rec && i < gl_inter_rec_count(rec) && n < max; i++) {
        const gl_inter_tensor *t = gl_inter_rec_at(rec, i);
        if (strcmp(t->node, node) == 0)
            out[n++] = t;
    }
    return n;
}

/* The row's node as the recordings name it: "group::member" inside a group's body. */
static void node_key(const gl_profile *p, size_t row, char *buf, size_t len)
{
    const gl_profile_row *r = &p->rows[row];
    if (r->parent == SIZE_MAX)
        snprintf(buf, len, "%s", r->name);
    else
        snprintf(buf, len, "%s::%s", p->rows[r->parent].name, r->name);
}

/* The kept tensors of profile row `row`: the fused run's, or where it ran the row inside a
 * whole group the reference run's (*from_ref). */
static size_t row_outputs(const gl_run *r, size_t row, const gl_inter_tensor **out, size_t max,
                          bool *from_ref)
{
    char node[512];
    node_key(r->prof, row, node, sizeof(node));
    size_t n = outputs_of(r->rec_run, node, out, max);
    *from_ref = n == 0;
    return n ? n : outputs_of(r->rec_ref, node, out, max);
}

static void add_line(tensor_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_line(tensor_state *s, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    GL_GROW(s->lines, s->cap, s->n + 1);
    s->lines[s->n++] = gl_xstrdup(buf);
}

/* "[0,3,4,5]": the multi-index of flat element i. */
static void index_text(const gl_tensor *t, int64_t i, char *buf, size_t len)
{
    int64_t idx[GL_MAX_RANK];
    for (int d = t->rank - 1; d >= 0; d--) {
        idx[d] = t->dims[d] ? i % t->dims[d] : 0;
        i = t->dims[d] ? i / t->dims[d] : 0;
    }
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < t->rank && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", d ? "," : "", (long long)idx[d]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

static void describe(gl_ui *ui, tensor_state *s, const gl_run *r, const gl_inter_tensor *t,
                     const gl_inter_tensor *ref, const char *layout)
{
    char type[160], hist[GL_HIST_BINS * 4 + 1], idx[160];
    gl_format_type(t->t->dtype, t->t->rank, t->t->dims, type, sizeof(type));
    add_line(s, "%s", "");
    add_line(s, "output %zu '%s': %s, layout %s%s", t->output, t->key, type,
             layout && *layout ? layout : "plain", t->graph_output ? " (a graph output)" : "");
    /* The stable mode (tmux goldens) keeps 3 digits: the last ones of a oneDNN result
     * depend on the CPU's instruction set. */
    int digits = r->stable ? 3 : 6;
    gl_value_stats st;
    gl_value_stats_of(t->t, &st);
    add_line(s, "  min %.*g  max %.*g  mean %.*g  std %.*g  NaN %lld  Inf %lld  (%lld values)",
             digits, st.min, digits, st.max, digits, st.mean, digits, st.std, (long long)st.nan,
             (long long)st.inf, (long long)st.count);
    gl_histogram_draw(st.hist, GL_HIST_BINS, ui->utf8, hist, sizeof(hist));
    add_line(s, "  histogram over [%.4g, %.4g]: |%s|", st.min, st.max, hist);
    if (!ref || ref == t) {
        add_line(s, "  %s", ref ? "(the reference run's own tensor)"
                                : "no reference tensor of that name to compare with");
        return;
    }
    gl_compare c;
    gl_compare_tensors(t->t, ref->t, r->rtol, r->atol, &c);
    char line[256];
    gl_compare_format(&c, line, sizeof(line));
    if (r->stable)
        snprintf(line, sizeof(line), "%s", c.ok ? "within tolerance" : "over tolerance");
    add_line(s, "  against the reference: %s%s", line, c.ok ? "" : "  OVER TOLERANCE");
    if (c.same_shape && c.worst >= 0 && !r->stable) {
        index_text(t->t, c.worst, idx, sizeof(idx));
        add_line(s, "  worst element %s (#%lld): %.8g, reference %.8g", idx, (long long)c.worst,
                 gl_tensor_get_f64(t->t, c.worst), gl_tensor_get_f64(ref->t, c.worst));
    }
}

static void clear_lines(tensor_state *s)
{
    gl_free_lines(s->lines, s->n);
    s->lines = NULL;
    s->n = s->cap = 0;
}

static void tensor_open(gl_ui *ui, gl_view *v)
{
    tensor_state *s = v->state;
    if (!s)
        s = v->state = gl_xcalloc(1, sizeof(*s));
    clear_lines(s);
    v->selected = v->scroll = v->hscroll = 0;
    s->out = 0;
    memset(s->lead, 0, sizeof(s->lead));
    if (!s->per_line)
        s->per_line = DEFAULT_PER_LINE;
    const gl_run *r = gl_ui_run_shown(ui);
    if (!r || ui->tensor_row >= r->prof->n_rows) {
        add_line(s, "no run of this step: r runs it, Enter on a row shows its tensors");
        return;
    }
    const gl_profile_row *pr = &r->prof->rows[ui->tensor_row];
    const gl_profile_cell *c = &pr->cells[r->fused];
    add_line(s, "%s '%s': %s run (%s %s) against the reference (Esc goes back, w writes them)",
             pr->op, pr->name, r->prof->backends[r->fused].name, c->ran ? c->backend : "-",
             !c->ran ? "did not run it" : r->stable ? "~" : c->info.impl);
    if (c->ran && c->over[0])
        add_line(s, "its output was written over '%s' (that input's bytes: nothing read them "
                    "afterwards)", c->over);
    const gl_inter_tensor *outs[MAX_OUTPUTS];
    bool from_ref;
    size_t n = row_outputs(r, ui->tensor_row, outs, MAX_OUTPUTS, &from_ref);
    if (from_ref && n)
        add_line(s, "inside a group the fused run ran whole: the reference run's tensors");
    if (r->rec_error[0])
        add_line(s, "the recording is incomplete: %s", r->rec_error);
    if (n == 0)
        add_line(s, "no tensor of this node was kept (a node inside an If/Loop/Scan body, or "
                    "past the byte bound)");
    for (size_t i = 0; i < n; i++) {
        const gl_inter_tensor *ref = from_ref ? outs[i] : gl_inter_rec_find(r->rec_ref, outs[i]->key);
        describe(ui, s, r, outs[i], ref, c->ran && !from_ref ? c->info.out_layouts : NULL);
    }
}

/* The kept tensors of the row the view shows, as the run keeps them now (a run `r` made
 * since replaced the one the view opened on): 0 without a run. */
static size_t shown_outputs(const gl_ui *ui, const gl_inter_tensor **outs)
{
    const gl_run *r = gl_ui_run_shown(ui);
    bool from_ref;
    if (!r || ui->tensor_row >= r->prof->n_rows)
        return 0;
    return row_outputs(r, ui->tensor_row, outs, MAX_OUTPUTS, &from_ref);
}

/* The output whose values are shown (NULL: none). */
static const gl_tensor *shown_tensor(const gl_ui *ui, const tensor_state *s, char *key,
                                     size_t key_len)
{
    const gl_inter_tensor *outs[MAX_OUTPUTS];
    size_t n = shown_outputs(ui, outs);
    if (s->out >= n || outs[s->out]->t->dtype == GL_DT_STRING || !outs[s->out]->t->count)
        return NULL;
    snprintf(key, key_len, "%zu '%s'", outs[s->out]->output, outs[s->out]->key);
    return outs[s->out]->t;
}

/* Values a line for `fit` at most: a tensor row wrapped into lines of even length (32
 * values at 17 a line: two lines of 16, not 17 and 15). */
static int per_line(const gl_tensor *t, int fit)
{
    int64_t rows, cols;
    slice_shape(t, &rows, &cols);
    fit = fit < 1 ? 1 : fit;
    int64_t lines = cols > fit ? (cols + fit - 1) / fit : 1;
    int64_t even = (cols + lines - 1) / lines;
    return even < 1 ? 1 : (int)even;
}

/* Rows of the view: the summary, a heading, the lines of values. */
static int total_rows(const tensor_state *s, const gl_tensor *t)
{
    return (int)s->n + (t ? 1 + (int)slice_lines(t, s->per_line) : 0);
}

/* The flat index of the first value on values line k of the shown slice. */
static int64_t line_first(const tensor_state *s, const gl_tensor *t, int64_t k)
{
    int64_t rows, cols;
    slice_shape(t, &rows, &cols);
    int64_t wraps = (cols + s->per_line - 1) / s->per_line;
    return gl_slice_first(t->dims, t->rank, s->lead) + (k / wraps) * cols +
           (k % wraps) * s->per_line;
}

/* Values line k: "[0,3,5,8]  0.1 0.2 ...", the index of its first value, then the values
 * of that tensor row from there, `per_line` at most. */
static void values_line(const gl_run *r, const tensor_state *s, const gl_tensor *t, int64_t k,
                        int index_w, char *buf, size_t len)
{
    int64_t rows, cols, first = line_first(s, t, k);
    slice_shape(t, &rows, &cols);
    int64_t in_row = first % (cols ? cols : 1), n = cols - in_row;
    n = n < s->per_line ? n : s->per_line;
    char idx[GL_MAX_RANK * 21 + 3];
    index_text(t, first, idx, sizeof(idx));
    int digits = r->stable ? 3 : 6;
    size_t used = (size_t)snprintf(buf, len, "%-*s", index_w, idx);
    for (int64_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, " %*.*g", digits + 7, digits,
                                 gl_tensor_get_f64(t, first + i));
}

/* The last line: which output and slice, how many values, the first one on screen. */
static void footer_text(const tensor_state *s, const gl_tensor *t, const char *key,
                        int64_t first, char *buf, size_t len)
{
    char slice[GL_MAX_RANK * 22 + 3], idx[GL_MAX_RANK * 21 + 3];
    int64_t rows, cols;
    slice_shape(t, &rows, &cols);
    gl_slice_text(t->dims, t->rank, s->lead, slice, sizeof(slice));
    index_text(t, first, idx, sizeof(idx));
    int64_t n_slices = gl_slice_count(t->dims, t->rank);
    char which[64] = "";
    if (n_slices > 1)
        snprintf(which, sizeof(which), " %lld/%lld (J/K)",
                 (long long)(gl_slice_first(t->dims, t->rank, s->lead) / (rows * cols) + 1),
                 (long long)n_slices);
    /* what matters most first: a narrow terminal cuts the end */
    snprintf(buf, len, "from #%lld %s of %lld values; slice %s%s, %lld values; output %s",
             (long long)first, idx, (long long)t->count, slice, which, (long long)(rows * cols),
             key);
}

static void tensor_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    tensor_state *s = v->state;
    if (!s || height < 1)
        return;
    char key[600], buf[4096];
    const gl_tensor *t = shown_tensor(ui, s, key, sizeof(key));
    char last[GL_MAX_RANK * 21 + 3] = "";
    if (t) /* the last element's index is about the widest: the values line up after it */
        index_text(t, t->count - 1, last, sizeof(last));
    int index_w = (int)strlen(last);
    int digits = gl_ui_run_shown(ui) && gl_ui_run_shown(ui)->stable ? 3 : 6;
    s->per_line = t ? per_line(t, (width - index_w) / (digits + 8)) : DEFAULT_PER_LINE;
    int body = t ? height - 1 : height; /* the footer */
    int n_rows = total_rows(s, t);
    v->height = body;
    gl_ui_clamp(v, n_rows, body);
    int64_t first_shown = -1;
    for (int row = 0; row < body && v->scroll + row < n_rows; row++) {
        int i = v->scroll + row;
        gl_ui_role role = GL_ROLE_NORMAL;
        const char *line = buf;
        if (i < (int)s->n) {
            line = s->lines[i];
            role = i == 0 ? GL_ROLE_HEADER
                   : strstr(line, "OVER TOLERANCE") ? GL_ROLE_ERROR : GL_ROLE_NORMAL;
        } else if (i == (int)s->n) {
            char slice[GL_MAX_RANK * 22 + 3];
            gl_slice_text(t->dims, t->rank, s->lead, slice, sizeof(slice));
            snprintf(buf, sizeof(buf), "values of output %s, slice %s (j/k/PgDn/PgUp page%s)",
                     key, slice,
                     gl_slice_count(t->dims, t->rank) > 1 ? "; J/K: next/previous slice"
                                                          : "");
            role = GL_ROLE_HEADER;
        } else {
            int64_t k = i - (int)s->n - 1;
            if (first_shown < 0)
                first_shown = line_first(s, t, k);
            values_line(gl_ui_run_shown(ui), s, t, k, index_w, buf, sizeof(buf));
        }
        gl_ui_put_at(top + row, left, width, gl_ui_attr(ui, role), line, v->hscroll);
    }
    if (!t)
        return;
    if (first_shown < 0)
        first_shown = gl_slice_first(t->dims, t->rank, s->lead);
    footer_text(s, t, key, first_shown, buf, sizeof(buf));
    gl_ui_put(top + height - 1, left, width, gl_ui_attr(ui, GL_ROLE_HEADER), buf);
}

/* A file name from a tensor's key: bytes outside [A-Za-z0-9._-] become '_', and the step
 * in front keeps "." and ".." out. */
static void pb_name(size_t step, const char *key, char *buf, size_t len)
{
    int n = snprintf(buf, len, "step%02zu-", step);
    size_t at = n > 0 ? (size_t)n : 0;
    for (; *key && at + 4 < len && at < 100; key++) {
        char ch = *key;
        bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || (ch && strchr("._-", ch));
        buf[at++] = keep ? ch : '_';
    }
    snprintf(buf + at, len - at, ".pb");
}

unsigned gl_ui_write_tensors(gl_ui *ui)
{
    const gl_run *r = gl_ui_run_shown(ui);
    const gl_inter_tensor *outs[MAX_OUTPUTS];
    size_t n = shown_outputs(ui, outs);
    if (!r)
        return GL_REDRAW_NONE;
    if (!n) {
        gl_ui_set_error(ui, "no tensor of this node to write");
        return GL_REDRAW_STATUS;
    }
    gl_status st = gl_make_dir(ui->export_dir);
    char name[160], path[1400], first[1400] = "";
    for (size_t i = 0; st == GL_OK && i < n; i++) {
        pb_name(r->step, outs[i]->key, name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", ui->export_dir, name);
        st = gl_tensor_write_pb(outs[i]->t, path);
        if (i == 0)
            snprintf(first, sizeof(first), "%s", path);
    }
    if (st != GL_OK)
        gl_ui_set_error(ui, "writing the tensor failed: %s", gl_error_message());
    else
        gl_ui_set_status(ui, "wrote %s%s", first, n > 1 ? " and the other outputs" : "");
    return GL_REDRAW_STATUS;
}

static unsigned tensor_request(gl_ui *ui, gl_view *v, gl_request r)
{
    tensor_state *s = v->state;
    if (!s)
        return GL_REDRAW_NONE;
    if (r == GL_REQ_WRITE_TENSOR) /* asks where first (export_prompt.c) */
        return gl_ui_export_ask(ui, GL_EXPORT_TO_TENSORS);
    char key[600];
    const gl_tensor *t = shown_tensor(ui, s, key, sizeof(key));
    switch (r) {
    case GL_REQ_BOX_NEXT:
    case GL_REQ_BOX_PREV: /* J/K: the next or previous slice */
        if (!t || !gl_slice_step(t->dims, t->rank, s->lead, r == GL_REQ_BOX_NEXT ? 1 : -1))
            return GL_REDRAW_NONE;
        return GL_REDRAW_VIEW;
    case GL_REQ_ENTER: { /* the next output's values, from its first slice */
        const gl_inter_tensor *outs[MAX_OUTPUTS];
        size_t n = shown_outputs(ui, outs);
        if (n < 2)
            return GL_REDRAW_NONE;
        s->out = (s->out + 1) % n;
        memset(s->lead, 0, sizeof(s->lead));
        return GL_REDRAW_VIEW;
    }
    case GL_REQ_MOVE_DOWN: /* j/k scroll the text a line, as a pager does */
        v->selected = v->scroll + v->height - 1;
        break;
    default: v->selected = v->scroll; break;
    }
    return gl_ui_list_move(v, r, total_rows(s, t));
}

static void tensor_close(gl_ui *ui, gl_view *v)
{
    tensor_state *s = v->state;
    if (s)
        clear_lines(s);
    free(s);
    v->state = NULL;
}

const gl_view_ops gl_view_tensor_ops = {
    .name = "tensor",
    .open = tensor_open,
    .draw = tensor_draw,
    .request = tensor_request,
    .close = tensor_close,
};

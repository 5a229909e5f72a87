/* view_tensor.c — the tensors of one row of the run view (Enter there): per output, its
 * type and layout, min/max/mean/std and NaN/Inf counts, a histogram, the first values,
 * and the tensor against the reference's with its worst element. The tensors are those
 * the run kept (run.c: intermediates.h); `w` writes them as TensorProto .pb files into
 * the export folder, through the one guarded write path (gl_tensor_write_pb). */
#include "ui/ui.h"

#include "driver/driver.h"
#include "onnx/onnx_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FIRST_VALUES = 8, MAX_OUTPUTS = 16 };

typedef struct tensor_state {
    char **lines;
    size_t n, cap;
} tensor_state;

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
    char first[512];
    size_t used = 0;
    first[0] = '\0';
    for (int64_t i = 0; i < t->t->count && i < FIRST_VALUES && used < sizeof(first); i++)
        used += (size_t)snprintf(first + used, sizeof(first) - used, " %.*g", digits,
                                 gl_tensor_get_f64(t->t, i));
    add_line(s, "  first values:%s%s", first, t->t->count > FIRST_VALUES ? " ..." : "");
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
    v->selected = v->scroll = 0;
    const gl_run *r = gl_ui_run_shown(ui);
    if (!r || ui->tensor_row >= r->prof->n_rows) {
        add_line(s, "no run of this step: r runs it, Enter on a row shows its tensors");
        return;
    }
    const gl_profile_row *pr = &r->prof->rows[ui->tensor_row];
    const gl_profile_cell *c = &pr->cells[r->fused];
    char node[512];
    node_key(r->prof, ui->tensor_row, node, sizeof(node));
    add_line(s, "%s '%s': %s run (%s %s) against the reference (Esc goes back, w writes them)",
             pr->op, pr->name, r->prof->backends[r->fused].name, c->ran ? c->backend : "-",
             !c->ran ? "did not run it" : r->stable ? "~" : c->info.impl);
    const gl_inter_tensor *outs[MAX_OUTPUTS];
    size_t n = outputs_of(r->rec_run, node, outs, MAX_OUTPUTS);
    bool from_ref = n == 0;
    if (from_ref) {
        n = outputs_of(r->rec_ref, node, outs, MAX_OUTPUTS);
        if (n)
            add_line(s, "inside a group the fused run ran whole: the reference run's tensors");
    }
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

static void tensor_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    tensor_state *s = v->state;
    if (!s)
        return;
    v->height = height;
    gl_ui_clamp(v, (int)s->n, height);
    for (int row = 0; row < height && v->scroll + row < (int)s->n; row++) {
        int i = v->scroll + row;
        const char *line = s->lines[i];
        gl_ui_role role = i == 0 ? GL_ROLE_HEADER
                          : strstr(line, "OVER TOLERANCE") ? GL_ROLE_ERROR
                                                           : GL_ROLE_NORMAL;
        gl_ui_put(top + row, left, width, gl_ui_attr(ui, role), line);
    }
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
    if (!r || ui->tensor_row >= r->prof->n_rows)
        return GL_REDRAW_NONE;
    char node[512];
    node_key(r->prof, ui->tensor_row, node, sizeof(node));
    const gl_inter_tensor *outs[MAX_OUTPUTS];
    size_t n = outputs_of(r->rec_run, node, outs, MAX_OUTPUTS);
    if (!n)
        n = outputs_of(r->rec_ref, node, outs, MAX_OUTPUTS);
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
    return gl_ui_list_move(v, r, (int)s->n);
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

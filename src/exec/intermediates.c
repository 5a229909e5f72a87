/* intermediates.c — keeping every tensor of a run (an observer of the executor),
 * comparing two runs in the order they ran, and writing kept tensors to files. */
#include "exec/intermediates.h"

#include "ops/opkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Joins a call's name and the names inside its body. */
#define CALL_SEP "::"

struct gl_inter_rec {
    gl_inter_tensor *items;
    size_t n, cap;
    size_t bytes, max_bytes;
    char **names; /* keep only these (NULL: every tensor) */
    size_t n_names;
    gl_exec *e;   /* the plan observed: gl_exec_plain needs it */
    char *backend, *model;
    char *label;  /* options.label, owned; NULL: none */
    gl_status status;
    char *message; /* why the recording stopped; NULL while status is GL_OK */
};

/* ---- recording ------------------------------------------------------------------------- */

gl_inter_rec *gl_inter_rec_new(const gl_inter_rec_options *o)
{
    gl_inter_rec *r = gl_xcalloc(1, sizeof(*r));
    r->max_bytes = o && o->max_bytes ? o->max_bytes : GL_INTER_MAX_BYTES;
    r->label = o && o->label ? gl_xstrdup(o->label) : NULL;
    if (o && o->names) {
        r->names = gl_xcalloc(o->n_names ? o->n_names : 1, sizeof(*r->names));
        for (size_t i = 0; i < o->n_names; i++)
            r->names[i] = gl_xstrdup(o->names[i]);
        r->n_names = o->n_names;
    }
    return r;
}

static void rec_clear(gl_inter_rec *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->items[i].key);
        free(r->items[i].node);
        gl_tensor_free(r->items[i].t);
        gl_tensor_free((gl_tensor *)r->items[i].quant.scale);
        gl_tensor_free((gl_tensor *)r->items[i].quant.zero);
    }
    r->n = 0;
    r->bytes = 0;
    r->status = GL_OK;
    free(r->message);
    r->message = NULL;
}

void gl_inter_rec_free(gl_inter_rec *r)
{
    if (!r)
        return;
    rec_clear(r);
    free(r->items);
    for (size_t i = 0; i < r->n_names; i++)
        free(r->names[i]);
    free(r->names);
    free(r->backend);
    free(r->model);
    free(r->label);
    free(r);
}

/* Recording stops at the first failure; the message is kept for gl_inter_rec_status. */
static void rec_stop(gl_inter_rec *r, gl_status st)
{
    r->status = st;
    r->message = gl_xstrdup(gl_error_message());
}

bool gl_inter_listed(const char *const *names, size_t n_names, const char *key)
{
    if (!names)
        return true;
    for (size_t i = 0; i < n_names; i++)
        if (strcmp(names[i], key) == 0)
            return true;
    return false;
}

static const char *node_name(const gl_node *n)
{
    return n->name ? n->name : "";
}

/* The names of the function calls around plan entry `i`, each followed by CALL_SEP
 * ("" at the top), malloc'd; NULL when the entry is inside an If/Loop/Scan body, whose
 * nodes may run many times in one run. */
static char *call_prefix(const gl_exec *e, size_t i)
{
    const gl_plan_entry *en = gl_exec_plan_at(e, i);
    if (!en)
        return NULL;
    if (en->parent == SIZE_MAX)
        return gl_xstrdup("");
    const gl_plan_entry *call = gl_exec_plan_at(e, en->parent);
    if (!call || strcmp(call->backend, "body") != 0)
        return NULL;
    char *outer = call_prefix(e, en->parent);
    if (!outer)
        return NULL;
    const char *name = node_name(call->node);
    size_t len = strlen(outer) + strlen(name) + sizeof(CALL_SEP);
    char *p = gl_xmalloc(len);
    snprintf(p, len, "%s%s" CALL_SEP, outer, name);
    free(outer);
    return p;
}

static char *join(const char *prefix, const char *name)
{
    size_t len = strlen(prefix) + strlen(name) + 1;
    char *s = gl_xmalloc(len);
    snprintf(s, len, "%s%s", prefix, name);
    return s;
}

static void keep(gl_inter_rec *r, const gl_exec_event *ev, const char *prefix, size_t i)
{
    const gl_node *n = ev->node;
    const gl_value *v = n->outputs[i];
    const gl_tensor *t = ev->outputs[i];
    char *key = join(prefix, v->name ? v->name : "");
    if (!gl_inter_listed((const char *const *)r->names, r->n_names, key)) {
        free(key);
        return;
    }
    size_t bytes = gl_tensor_nbytes(t);
    if (bytes > r->max_bytes - r->bytes) {
        gl_fail(GL_ERR_INPUT,
                "%s: keeping every intermediate tensor of the %s run needs more than %.1f "
                "MiB (the bound per run), reached at %snode '%s' (%s) output '%s'; keep "
                "fewer tensors (--save-tensors DIR NAME...)",
                r->model, r->backend, (double)r->max_bytes / (1 << 20), prefix, node_name(n),
                n->op_type, key);
        free(key);
        rec_stop(r, GL_ERR_INPUT);
        return;
    }
    gl_tensor *p = gl_exec_plain_kept(r->e, t);
    if (!p) {
        gl_error_prefix("%s: %snode '%s' (%s) output '%s'", r->model, prefix, node_name(n),
                        n->op_type, key);
        free(key);
        rec_stop(r, GL_ERR_INTERNAL);
        return;
    }
    free(p->name);
    p->name = gl_xstrdup(key);
    GL_GROW(r->items, r->cap, r->n + 1);
    bool top = !*prefix;
    gl_quant q;
    if (gl_quant_of(v, &q)) {
        q.scale = gl_tensor_share(q.scale);
        q.zero = q.zero ? gl_tensor_share(q.zero) : NULL;
    }
    r->items[r->n++] = (gl_inter_tensor){
        .key = key, .node = join(prefix, node_name(n)), .op = n->op_type, .output = i,
        .graph_output = top && gl_graph_has_output(gl_exec_model(r->e)->graph, v),
        .in_body = !top, .t = p,
        .group = top && strcmp(n->domain, "graphlab.fused") == 0, .quant = q,
    };
    r->bytes += bytes;
}

static void on_run_begin(void *ctx, const gl_exec *e)
{
    (void)e;
    rec_clear(ctx);
}

static void on_node_end(void *ctx, const gl_exec *e, const gl_exec_event *ev)
{
    gl_inter_rec *r = ctx;
    if (ev->status != GL_OK || r->status != GL_OK)
        return;
    char *prefix = call_prefix(e, ev->entry);
    for (size_t i = 0; prefix && i < ev->n_outputs && r->status == GL_OK; i++)
        if (ev->outputs[i] && ev->node->outputs[i])
            keep(r, ev, prefix, i);
    free(prefix);
}

gl_exec_observer gl_inter_rec_observer(gl_inter_rec *r, gl_exec *e)
{
    free(r->backend);
    free(r->model);
    r->e = e;
    r->backend = gl_xstrdup(gl_exec_backend_name(e));
    const gl_model *m = gl_exec_model(e);
    r->model = gl_xstrdup(m->path ? m->path : "<model>");
    return (gl_exec_observer){.ctx = r, .run_begin = on_run_begin, .node_end = on_node_end};
}

void gl_inter_rec_attach(gl_inter_rec *r, gl_exec *e)
{
    gl_exec_observer o = gl_inter_rec_observer(r, e);
    gl_exec_set_observer(e, &o);
}

gl_status gl_inter_rec_status(const gl_inter_rec *r)
{
    return r->status == GL_OK ? GL_OK : gl_fail(r->status, "%s", r->message);
}

size_t gl_inter_rec_count(const gl_inter_rec *r)
{
    return r->n;
}

const gl_inter_tensor *gl_inter_rec_at(const gl_inter_rec *r, size_t i)
{
    return i < r->n ? &r->items[i] : NULL;
}

const gl_inter_tensor *gl_inter_rec_find(const gl_inter_rec *r, const char *key)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].key, key) == 0)
            return &r->items[i];
    return NULL;
}

size_t gl_inter_rec_bytes(const gl_inter_rec *r)
{
    return r->bytes;
}

const char *gl_inter_rec_backend(const gl_inter_rec *r)
{
    return r->label ? r->label : r->backend ? r->backend : "";
}

const char *gl_inter_rec_model(const gl_inter_rec *r)
{
    return r->model ? r->model : "<model>";
}

/* ---- comparing ---------------------------------------------------------------------------- */

static int by_key(const void *x, const void *y)
{
    return strcmp((*(const gl_inter_tensor *const *)x)->key,
                  (*(const gl_inter_tensor *const *)y)->key);
}

void gl_inter_compare(const gl_inter_rec *a, const gl_inter_rec *b, const gl_tolerance *tol,
                      gl_inter_report *r)
{
    *r = (gl_inter_report){.a = a, .b = b, .rtol = tol->rtol, .atol = tol->atol,
                           .steps = tol->steps, .first_bad = SIZE_MAX};
    /* b's tensors sorted by key, looked up for each of a's in a's order. */
    const gl_inter_tensor **sorted = gl_xmalloc((b->n ? b->n : 1) * sizeof(*sorted));
    for (size_t i = 0; i < b->n; i++)
        sorted[i] = &b->items[i];
    qsort(sorted, b->n, sizeof(*sorted), by_key);
    r->rows = gl_xmalloc((a->n ? a->n : 1) * sizeof(*r->rows));
    for (size_t i = 0; i < a->n; i++) {
        const gl_inter_tensor *ta = &a->items[i], *probe = ta;
        const gl_inter_tensor **hit = b->n ? bsearch(&probe, sorted, b->n, sizeof(*sorted),
                                                     by_key)
                                           : NULL;
        if (!hit) {
            r->only_a++;
            continue;
        }
        gl_inter_row *row = &r->rows[r->n_rows];
        *row = (gl_inter_row){.a = ta, .b = *hit};
        if (ta->quant.scale) {
            gl_compare_in_steps((*hit)->t, ta->t, &ta->quant, tol->steps, &row->cmp);
            r->in_steps++;
        } else {
            gl_compare_tensors((*hit)->t, ta->t, tol->rtol, tol->atol, &row->cmp);
        }
        if (!row->cmp.ok) {
            if (r->first_bad == SIZE_MAX)
                r->first_bad = r->n_rows;
            r->bad++;
            r->outputs_bad += ta->graph_output;
        }
        r->n_rows++;
    }
    /* Keys are unique within a run unless a name contains CALL_SEP: then a tensor of b
     * may have been matched twice. */
    r->only_b = b->n > r->n_rows ? b->n - r->n_rows : 0;
    free(sorted);
}

void gl_inter_report_free(gl_inter_report *r)
{
    free(r->rows);
    r->rows = NULL;
    r->n_rows = 0;
}

/* ---- the text report ---------------------------------------------------------------------- */

/* A string from the model with quotes, backslashes and control bytes escaped, so that
 * it stays on its line. */
static void put_escaped(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\'' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
}

static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    put_escaped(f, s);
    fputc('\'', f);
}

static void format_tensor_type(const gl_tensor *t, char *buf, size_t len)
{
    gl_type ty = {.kind = GL_TYPE_TENSOR, .dtype = t->dtype};
    gl_shape_init_unknown(&ty.shape);
    gl_shape_set_rank(&ty.shape, t->rank);
    for (int d = 0; d < t->rank; d++)
        ty.shape.dims[d].value = t->dims[d];
    gl_type_format(&ty, buf, len);
    gl_type_free(&ty);
}

static bool is_complex(gl_dtype dt)
{
    return dt == GL_DT_COMPLEX64 || dt == GL_DT_COMPLEX128;
}

/* "[0,3,1,2]" for flat element `flat` (a complex tensor's flat index counts components:
 * ".re"/".im" says which). */
static void format_index(const gl_tensor *t, int64_t flat, char *buf, size_t len)
{
    int64_t strides[GL_MAX_RANK];
    int64_t elem = is_complex(t->dtype) ? flat / 2 : flat;
    gl_strides(t->dims, t->rank, strides);
    int n = snprintf(buf, len, "[");
    for (int d = 0; d < t->rank && n >= 0 && (size_t)n < len; d++) {
        int64_t k = strides[d] ? elem / strides[d] % t->dims[d] : 0;
        n += snprintf(buf + n, len - (size_t)n, "%s%lld", d ? "," : "", (long long)k);
    }
    if (n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "]%s",
                 is_complex(t->dtype) ? (flat % 2 ? ".im" : ".re") : "");
}

static void put_value(FILE *f, const gl_tensor *t, int64_t i)
{
    if (t->dtype == GL_DT_STRING || is_complex(t->dtype))
        fputs("-", f);
    else
        fprintf(f, "%.9g", gl_tensor_get_f64(t, i)); /* float32 round-trips */
}

static void put_nonfinite(FILE *f, const gl_compare *c)
{
    char buf[80];
    if (!(c->nan_got | c->inf_got | c->nan_expected | c->inf_expected))
        snprintf(buf, sizeof(buf), "-");
    else
        snprintf(buf, sizeof(buf), "%lld/%lld|%lld/%lld", (long long)c->nan_expected,
                 (long long)c->inf_expected, (long long)c->nan_got, (long long)c->inf_got);
    fprintf(f, "  %-13s", buf);
}

static void put_row(FILE *f, const gl_inter_report *r, size_t k)
{
    const gl_inter_row *row = &r->rows[k];
    const gl_compare *c = &row->cmp;
    char type[256], index[256] = "-";
    format_tensor_type(row->a->t, type, sizeof(type));
    fprintf(f, "%5zu %c", k + 1, c->ok ? ' ' : '!');
    if (!c->same_shape) {
        char tb[256];
        format_tensor_type(row->b->t, tb, sizeof(tb));
        fprintf(f, "  dtype or shape differs: %s (%s) vs %s (%s)  ", tb,
                gl_inter_rec_backend(r->b), type, gl_inter_rec_backend(r->a));
    } else {
        /* Where nothing differs, no element is worse than another. */
        if (c->worst >= 0 && (c->max_abs > 0 || c->nan_mismatch))
            format_index(row->a->t, c->worst, index, sizeof(index));
        fprintf(f, " %10.3g %10.3g %10.3g %8lld", c->max_abs, c->max_rel, c->nmse,
                (long long)c->over_tol);
        put_nonfinite(f, c);
        fprintf(f, "  %-14s  ", index);
    }
    put_quoted(f, row->a->key);
    fprintf(f, " %s  ", type);
    put_escaped(f, row->a->op);
    fputc(' ', f);
    put_quoted(f, row->a->node);
    if (row->b->group && !row->a->group) {
        fputs("  (fused group ", f);
        put_quoted(f, row->b->node);
        fprintf(f, " in %s)", gl_inter_rec_backend(r->b));
    }
    fputs(row->a->graph_output ? "  (graph output)\n" : "\n", f);
}

static void put_divergence(FILE *f, const gl_inter_report *r)
{
    if (r->first_bad == SIZE_MAX) {
        fputs(r->n_rows ? "no divergence: every tensor within tolerance\n"
                        : "no divergence: no tensor was kept by both runs\n", f);
        return;
    }
    const gl_inter_row *row = &r->rows[r->first_bad];
    const gl_compare *c = &row->cmp;
    char type[256], line[320];
    format_tensor_type(row->a->t, type, sizeof(type));
    /* At a group's boundary: the group first, then the node of the run without it. */
    const gl_inter_tensor *first = row->b->group && !row->a->group ? row->b : row->a;
    const gl_inter_tensor *other = first == row->a ? row->b : row->a;
    fprintf(f, "first divergence: %s ", first->group ? "fused group" : "node");
    put_quoted(f, first->node);
    fputs(" (", f);
    put_escaped(f, first->op);
    fputc(')', f);
    if (first->group && strcmp(first->node, other->node) != 0) {
        fprintf(f, " in %s, node ", gl_inter_rec_backend(first == row->a ? r->a : r->b));
        put_quoted(f, other->node);
        fputs(" (", f);
        put_escaped(f, other->op);
        fprintf(f, ") in %s,", gl_inter_rec_backend(first == row->a ? r->b : r->a));
    }
    fprintf(f, " output %zu ", row->a->output);
    put_quoted(f, row->a->key);
    gl_compare_format(c, line, sizeof(line));
    fprintf(f, " %s: %s", type, line);
    if (c->same_shape && c->worst >= 0) {
        char index[256];
        format_index(row->a->t, c->worst, index, sizeof(index));
        fprintf(f, "; worst element %s (flat %lld): ", index, (long long)c->worst);
        put_value(f, row->b->t, c->worst);
        fprintf(f, " (%s) vs ", gl_inter_rec_backend(r->b));
        put_value(f, row->a->t, c->worst);
        fprintf(f, " (%s)", gl_inter_rec_backend(r->a));
    }
    fputc('\n', f);
}

/* How bad a row is, for picking the worst rows: not ok first, then by NMSE, then by the
 * largest difference. */
typedef struct ranked {
    size_t row;
    bool ok;
    double nmse, max_abs;
} ranked;

static int by_badness(const void *x, const void *y)
{
    const ranked *p = x, *q = y;
    if (p->ok != q->ok)
        return p->ok ? 1 : -1;
    if (p->nmse != q->nmse)
        return p->nmse < q->nmse ? 1 : -1;
    if (p->max_abs != q->max_abs)
        return p->max_abs < q->max_abs ? 1 : -1;
    return p->row < q->row ? -1 : p->row > q->row;
}

static double badness(const gl_compare *c)
{
    if (!c->same_shape || c->nan_mismatch)
        return INFINITY;
    return isnan(c->nmse) ? INFINITY : c->nmse;
}

/* The GL_INTER_SHOW_WORST worst rows from `from` on, in table order. */
static void put_worst(FILE *f, const gl_inter_report *r, size_t from)
{
    size_t n = r->n_rows - from;
    ranked *rk = gl_xmalloc((n ? n : 1) * sizeof(*rk));
    for (size_t i = 0; i < n; i++) {
        const gl_compare *c = &r->rows[from + i].cmp;
        rk[i] = (ranked){from + i, c->ok, badness(c), c->max_abs};
    }
    qsort(rk, n, sizeof(*rk), by_badness);
    size_t show = n < GL_INTER_SHOW_WORST ? n : GL_INTER_SHOW_WORST;
    bool *pick = gl_xcalloc(n ? n : 1, sizeof(*pick));
    for (size_t i = 0; i < show; i++)
        pick[rk[i].row - from] = true;
    fprintf(f, "  ... %zu more; the %zu worst of them:\n", n, show);
    for (size_t i = 0; i < n; i++)
        if (pick[i])
            put_row(f, r, from + i);
    free(pick);
    free(rk);
}

void gl_inter_report_print(const gl_inter_report *r, bool all, FILE *f)
{
    const char *na = gl_inter_rec_backend(r->a), *nb = gl_inter_rec_backend(r->b);
    char steps[96] = "";
    if (r->in_steps)
        snprintf(steps, sizeof(steps), "; %zu quantized, within %g step%s of their scale",
                 r->in_steps, r->steps, r->steps == 1 ? "" : "s");
    fprintf(f, "intermediates: %s vs %s: %zu tensors compared (rtol %g, atol %g%s), %zu differ; "
            "kept %.3g MiB (%s) and %.3g MiB (%s)\n",
            nb, na, r->n_rows, r->rtol, r->atol, steps, r->bad,
            (double)gl_inter_rec_bytes(r->a) / (1 << 20), na,
            (double)gl_inter_rec_bytes(r->b) / (1 << 20), nb);
    if (r->only_a || r->only_b)
        fprintf(f, "not compared: %zu tensors kept by %s only, %zu by %s only (inside function "
                "calls one run ran whole, the other as their body; inside fused groups, whose "
                "members the unfused run ran one by one)\n",
                r->only_a, na, r->only_b, nb);
    put_divergence(f, r);
    if (!r->n_rows)
        return;
    fprintf(f, "%5s %c %10s %10s %10s %8s  %-13s  %-14s  %s\n", "#", ' ', "max_abs", "max_rel",
            "nmse", "over", "nan/inf", "worst at", "tensor type  op node");
    size_t first = all || r->n_rows <= GL_INTER_SHOW_FIRST + GL_INTER_SHOW_WORST
                       ? r->n_rows
                       : GL_INTER_SHOW_FIRST;
    for (size_t k = 0; k < first; k++)
        put_row(f, r, k);
    if (first < r->n_rows) {
        put_worst(f, r, first);
        fprintf(f, "(every row: --all-tensors)\n");
    }
    fprintf(f, "(nan/inf: NaN/Inf counts of %s | of %s; worst at: the element farthest past "
            "its tolerance)\n", na, nb);
}

/* export.c — everything the workbench shows, as files (export.h): for each step
 * NN-PASS.{dot,svg,onnx,diff.txt} (00-input first, with an empty diff), the weights the
 * steps' .onnx share (weights.data), decisions.json, and index.html — one page with no network references: the pipeline table, then each
 * step's SVG (inline), diff and decisions. */
#include "driver/export.h"

#include "diff/diff.h"
#include "onnx/onnx_io.h"
#include "onnx/shared_weights.h"
#include "render/render.h"
#include "util/plural.h"
#include "util/bytes.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/safe_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What was written for one step, for the index page. */
typedef struct step_files {
    char label[96];
    char *svg;        /* owned SVG text (NULL if rendering failed) */
    size_t svg_len;
    char *diff_text;  /* owned */
    gl_render_info render;
    size_t n_changes;
} step_files;

/* DIR/NAME as a guarded atomic file (util/safe_write.h) to fprintf into; commit or abort
 * it. */
static gl_status open_stream(gl_atomic_file *out, const char *dir, const char *name, FILE **f)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return gl_atomic_open_stream(out, path, f);
}

/* The diff text of `m` against `before` (NULL: against itself, i.e. empty). */
static char *diff_text(const gl_model *m, const gl_model *before, size_t *n_changes,
                       gl_diff **out)
{
    gl_diff *d = gl_diff_graphs(before ? before->graph : m->graph, m->graph, GL_DIFF_MATCH_IDS);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (d && f)
        gl_diff_write_text(d, f);
    if (f)
        fclose(f);
    *n_changes = d ? d->n_nodes + d->n_values : 0;
    *out = d;
    return text ? text : gl_xstrdup("");
}

/* DIR/LABEL.{diff.txt,dot,svg,onnx} of one snapshot; sf keeps what the index needs. The
 * .onnx keeps its large weights in `weights` (NULL: in itself). */
static gl_status export_files(const gl_model *m, const gl_model *before, const char *dir,
                              const gl_export_opts *eo, gl_shared_weights *weights,
                              step_files *sf)
{
    char path[4096];
    gl_diff *d = NULL;
    sf->diff_text = diff_text(m, before, &sf->n_changes, &d);
    gl_render_opts ro = {.diff = before ? d : NULL, .title = sf->label};
    char *dot = NULL;
    size_t dot_len = 0;

    snprintf(path, sizeof(path), "%s/%s.diff.txt", dir, sf->label);
    gl_status st = gl_write_file(path, sf->diff_text, strlen(sf->diff_text));
    if (st == GL_OK)
        st = gl_render_svg_dot(m->graph, &ro, &sf->svg, &sf->svg_len, &dot, &dot_len,
                               &sf->render);
    if (st == GL_OK) {
        snprintf(path, sizeof(path), "%s/%s.dot", dir, sf->label);
        st = gl_write_file(path, dot, dot_len);
    }
    if (st == GL_OK) {
        snprintf(path, sizeof(path), "%s/%s.svg", dir, sf->label);
        st = gl_write_file(path, sf->svg, sf->svg_len);
    }
    if (st == GL_OK && !eo->no_onnx) {
        snprintf(path, sizeof(path), "%s/%s.onnx", dir, sf->label);
        const gl_save_options so = {.shared_weights = weights};
        st = gl_model_save(m, path, &so);
    }
    free(dot);
    gl_diff_free(d);
    return st;
}

static gl_status export_step(const char *dir, const gl_pipeline *p, size_t k,
                             const gl_export_opts *eo, gl_shared_weights *weights,
                             step_files *sf)
{
    gl_snapshot_label(p, k, sf->label, sizeof(sf->label));
    return export_files(p->steps[k].model, k ? p->steps[k - 1].model : NULL, dir, eo,
                        weights, sf);
}

static const gl_export_opts default_opts;

static const gl_export_opts *opts_or_default(const gl_export_opts *eo)
{
    return eo ? eo : &default_opts;
}

/* The export's folder, owned (util/safe_write.h): its manifest lists the files written
 * there, so that the next export removes those it does not write again and nothing
 * else. `add`: the files join those listed (a single step beside the whole pipeline). */
static gl_status open_folder(gl_temp_dir *tmp, const char *dir, const char *model, bool add)
{
    const gl_dir_owner owner = {GL_EXPORT_MANIFEST, "graphlab " PACKAGE_VERSION, model, add};
    return gl_temp_dir_open_owned(tmp, dir, &owner);
}

/* Put what was written at the destination, or leave nothing when `st` says it failed. */
static gl_status finish_folder(gl_temp_dir *tmp, gl_status st)
{
    if (st == GL_OK)
        return gl_temp_dir_commit(tmp);
    gl_temp_dir_abort(tmp);
    return st;
}

gl_status gl_export_snapshot(const gl_model *m, const gl_model *before, const char *dir,
                             const char *label, const gl_export_opts *eo)
{
    gl_temp_dir tmp;
    gl_status st = open_folder(&tmp, dir, m->path, true);
    if (st != GL_OK)
        return st;
    step_files sf = {0};
    snprintf(sf.label, sizeof(sf.label), "%s", label);
    st = finish_folder(&tmp, export_files(m, before, tmp.path, opts_or_default(eo), NULL, &sf));
    free(sf.svg);
    free(sf.diff_text);
    return st;
}

static void json_steps(gl_json *j, const gl_pipeline *p, const step_files *files)
{
    gl_json_array_begin(j, "steps");
    for (size_t k = 0; k < p->n_steps; k++) {
        const gl_snapshot *s = &p->steps[k];
        gl_json_object_begin(j, NULL);
        gl_json_int(j, "step", (int64_t)k);
        gl_json_string(j, "label", files[k].label);
        gl_json_string(j, "pass", s->pass ? s->pass->name : NULL);
        if (s->budget != GL_BUDGET_UNLIMITED)
            gl_json_int(j, "budget", s->budget);
        else
            gl_json_null(j, "budget");
        gl_json_bool(j, "changed", k > 0 && s->changed);
        gl_json_int(j, "nodes", (int64_t)s->nodes);
        gl_json_int(j, "rewrites", s->rewrites);
        gl_json_double(j, "ms", s->ms);
        gl_json_int(j, "diff_changes", (int64_t)files[k].n_changes);
        gl_json_array_begin(j, "decisions");
        for (size_t i = 0; i < s->n_decisions; i++)
            gl_json_int(j, NULL, p->log.items[s->first_decision + i].id);
        gl_json_array_end(j);
        gl_json_object_end(j);
    }
    gl_json_array_end(j);
}

static gl_status write_decisions_json(const char *model, const char *dir,
                                      const gl_pipeline *p, const step_files *files)
{
    gl_atomic_file out;
    FILE *f = NULL;
    gl_status st = open_stream(&out, dir, "decisions.json", &f);
    if (st != GL_OK)
        return st;
    gl_json j;
    gl_json_init(&j, f, true);
    gl_json_object_begin(&j, NULL);
    gl_json_string(&j, "model", model);
    json_steps(&j, p, files);
    gl_export_decisions_json(p, &j);
    return gl_atomic_commit(&out);
}

void gl_export_decisions_json(const gl_pipeline *p, gl_json *j)
{
    gl_json_array_begin(j, "decisions");
    for (size_t i = 0; i < p->log.n; i++)
        gl_decision_json(&p->log.items[i], j);
    gl_json_array_end(j);
    gl_json_object_end(j);
    gl_json_finish(j);
}

/* ---- index.html ----------------------------------------------------------------------- */

/* Names on the page read as in a terminal (util/escape.h): a bidi override would
 * reorder the text in a browser as well. */
static void html_escape(FILE *f, const char *s, size_t len)
{
    char esc[GL_ESCAPE_CHAR_MAX];
    size_t n;
    for (size_t i = 0; i < len && s[i]; i += n) {
        n = 1;
        switch (s[i]) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\n': fputc('\n', f); break; /* the diff's lines */
        default:
            if (gl_escape_char(s + i, esc, &n))
                fputs(esc, f);
            else
                fwrite(s + i, 1, n, f);
        }
    }
}

static void html_text(FILE *f, const char *s) { html_escape(f, s, s ? strlen(s) : 0); }

/* The SVG without its XML prolog and doctype, so it can sit inside the page. */
static const char *svg_body(const char *svg)
{
    const char *start = svg ? strstr(svg, "<svg") : NULL;
    return start ? start : "";
}

static const char page_style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
    "th{background:#f3f3f3}td.num{text-align:right}tr.changed td:first-child{font-weight:bold}"
    "pre{background:#f7f7f7;padding:8px;overflow:auto;max-height:30em}"
    ".svg{overflow:auto;border:1px solid #ddd;max-height:50em}.applied{color:#075}"
    ".refused{color:#a40}details{margin:1em 0}summary{cursor:pointer;font-size:1.1em}";

static void html_pipeline_table(FILE *f, const gl_pipeline *p, const step_files *files)
{
    fputs("<table><tr><th>step</th><th>pass</th><th>changed</th><th>nodes</th>"
          "<th>rewrites</th><th>decisions</th><th>time (ms)</th></tr>\n", f);
    for (size_t k = 0; k < p->n_steps; k++) {
        const gl_snapshot *s = &p->steps[k];
        bool changed = k > 0 && s->changed;
        fprintf(f, "<tr%s><td><a href=\"#%s\">", changed ? " class=\"changed\"" : "",
                files[k].label);
        html_text(f, files[k].label);
        fprintf(f, "</a></td><td>%s</td><td>%s</td><td class=num>%zu</td>"
                   "<td class=num>%lld</td><td class=num>%zu</td><td class=num>%.2f</td></tr>\n",
                s->pass ? s->pass->name : "load", k == 0 ? "" : changed ? "yes" : "no",
                s->nodes, (long long)s->rewrites, s->n_decisions, s->ms);
    }
    fputs("</table>\n", f);
}

static void html_decisions(FILE *f, const gl_pipeline *p, const gl_snapshot *s)
{
    if (s->n_decisions == 0) {
        fputs("<p>No decisions recorded.</p>\n", f);
        return;
    }
    fputs("<table><tr><th>#</th><th>verdict</th><th>rule</th><th>reason</th><th>nodes</th>"
          "<th>numbers</th></tr>\n", f);
    for (size_t i = 0; i < s->n_decisions; i++) {
        const gl_decision *d = &p->log.items[s->first_decision + i];
        fprintf(f, "<tr><td class=num>%lld</td><td class=%s>%s</td><td>", (long long)d->id,
                gl_verdict_name(d->verdict), gl_verdict_name(d->verdict));
        html_text(f, d->rule);
        fputs("</td><td>", f);
        html_text(f, d->reason);
        fputs("</td><td>", f);
        for (size_t n = 0; n < d->n_nodes; n++) {
            fputs(n ? ", " : "", f);
            html_text(f, d->nodes[n]);
        }
        fputs("</td><td>", f);
        for (size_t n = 0; n < d->n_numbers; n++) {
            fputs(n ? ", " : "", f);
            html_text(f, d->numbers[n].key);
            fputc('=', f);
            if (d->numbers[n].text)
                html_text(f, d->numbers[n].text);
            else
                fprintf(f, "%g", d->numbers[n].value);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static gl_status write_index(const char *model, const char *dir, const gl_pipeline *p,
                             const gl_export_opts *eo, const step_files *files)
{
    gl_atomic_file out;
    FILE *f = NULL;
    gl_status st = open_stream(&out, dir, "index.html", &f);
    if (st != GL_OK)
        return st;
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>graphlab: ", f);
    html_text(f, model);
    fprintf(f, "</title><style>%s</style></head><body>\n<h1>graphlab: ", page_style);
    html_text(f, model);
    fputs("</h1>\n", f);
    if (p->failure) {
        fputs("<p><b>The pipeline stopped:</b> ", f);
        html_text(f, p->failure);
        fputs("</p>\n", f);
    }
    html_pipeline_table(f, p, files);
    for (size_t k = 0; k < p->n_steps; k++) {
        fprintf(f, "<details id=\"%s\"%s><summary>", files[k].label,
                k == 0 || p->steps[k].changed ? " open" : "");
        html_text(f, files[k].label);
        fprintf(f, " — %zu nodes%s</summary>\n", p->steps[k].nodes,
                k > 0 && !p->steps[k].changed ? " (unchanged)" : "");
        fprintf(f, "<p>Files: <a href=\"%s.svg\">svg</a> <a href=\"%s.dot\">dot</a> ",
                files[k].label, files[k].label);
        if (!eo->no_onnx)
            fprintf(f, "<a href=\"%s.onnx\">onnx</a> ", files[k].label);
        fprintf(f, "<a href=\"%s.diff.txt\">diff</a></p>\n", files[k].label);
        if (files[k].render.note[0]) {
            fputs("<p><i>", f);
            html_text(f, files[k].render.note);
            fputs("</i></p>\n", f);
        }
        fputs("<h3>Diff</h3><pre>", f);
        html_text(f, files[k].diff_text);
        fputs("</pre>\n<h3>Decisions</h3>\n", f);
        html_decisions(f, p, &p->steps[k]);
        fputs("<h3>Graph</h3><div class=svg>\n", f);
        fputs(svg_body(files[k].svg), f);
        fputs("</div></details>\n", f);
    }
    fputs("</body></html>\n", f);
    return gl_atomic_commit(&out);
}

/* The files of the steps written so far, for decisions.json and index.html. */
typedef struct exporter {
    const char *model, *dir;
    gl_temp_dir tmp;   /* written into, renamed to the destination at the end */
    const gl_export_opts *eo;
    gl_shared_weights *weights; /* the steps' .onnx share it; NULL: none, or not yet */
    char weights_name[32];      /* its name in the folder */
    step_files *files; /* by step: n of them */
    size_t n, cap;
} exporter;

static bool shares_weights(const gl_export_opts *eo)
{
    return !eo->no_onnx && !eo->self_contained;
}

/* GL_EXPORT_WEIGHTS, unless the model exported was loaded from the folder with its
 * weights there (exporting an export's step into it): that file is an input, never
 * replaced, so the steps get weights-2.data (or the next name free of inputs). */
static const char *weights_name(exporter *x)
{
    char path[4096];
    snprintf(x->weights_name, sizeof(x->weights_name), "%s", GL_EXPORT_WEIGHTS);
    for (int n = 2; n < 100; n++) {
        snprintf(path, sizeof(path), "%s/%s", x->dir, x->weights_name);
        if (!gl_is_protected_input(path))
            break;
        snprintf(x->weights_name, sizeof(x->weights_name), "weights-%d.data", n);
    }
    return x->weights_name;
}

static gl_status export_next(exporter *x, const gl_pipeline *p, size_t k)
{
    GL_GROW(x->files, x->cap, k + 1);
    x->files[k] = (step_files){0};
    x->n = k + 1;
    if (!x->weights && shares_weights(x->eo))
        x->weights = gl_shared_weights_new(x->tmp.path, weights_name(x),
                                           GL_EXPORT_WEIGHTS_MIN);
    return export_step(x->tmp.path, p, k, x->eo, x->weights, &x->files[k]);
}

/* The shared weights put beside the steps (they are in the temporary folder with them,
 * so they appear together), and what they hold reported. */
static gl_status finish_weights(exporter *x, gl_status st)
{
    if (!x->weights)
        return st;
    if (x->eo->report) {
        gl_shared_weights_stats ws = gl_shared_weights_get_stats(x->weights);
        *x->eo->report = (gl_export_report){ws.bytes, ws.stored, ws.reused, ""};
        snprintf(x->eo->report->weights_name, sizeof(x->eo->report->weights_name), "%s",
                 x->weights_name);
    }
    if (st == GL_OK)
        st = gl_shared_weights_commit(x->weights);
    else
        gl_shared_weights_abort(x->weights);
    x->weights = NULL;
    return st;
}

void gl_export_report_line(const gl_export_opts *eo, char *buf, size_t len)
{
    const gl_export_report *r = eo ? eo->report : NULL;
    if (eo && eo->no_onnx)
        snprintf(buf, len, "no .onnx files");
    else if (eo && eo->self_contained)
        snprintf(buf, len, "each step's .onnx holds its own weights");
    else if (!r || r->weights_bytes == 0)
        snprintf(buf, len, "the steps' .onnx hold their weights (none of %d bytes or more)",
                 GL_EXPORT_WEIGHTS_MIN);
    else {
        char size[32];
        gl_bytes_text(r->weights_bytes, size, sizeof(size));
        snprintf(buf, len, "the steps' .onnx share %s (%s, %zu %s; %zu more found there)",
                 r->weights_name, size, r->weights_stored,
                 gl_noun((long long)r->weights_stored, "tensor", "tensors"), r->weights_reused);
    }
}

static gl_status export_finish(exporter *x, const gl_pipeline *p, gl_status st)
{
    st = finish_weights(x, st);
    if (st == GL_OK)
        st = write_decisions_json(x->model, x->tmp.path, p, x->files);
    if (st == GL_OK)
        st = write_index(x->model, x->tmp.path, p, x->eo, x->files);
    if (x->tmp.path)
        st = finish_folder(&x->tmp, st);
    for (size_t k = 0; k < x->n; k++) {
        free(x->files[k].svg);
        free(x->files[k].diff_text);
    }
    free(x->files);
    return st;
}

gl_status gl_export_pipeline(const gl_pipeline *p, const char *model, const char *dir,
                             const gl_export_opts *eo,
                             bool (*progress)(void *ctx, size_t step, size_t n_steps),
                             void *ctx)
{
    exporter x = {.model = model, .dir = dir, .eo = opts_or_default(eo)};
    gl_status st = open_folder(&x.tmp, dir, model, false);
    if (st != GL_OK)
        return st;
    for (size_t k = 0; st == GL_OK && k < p->n_steps; k++) {
        if (progress && !progress(ctx, k, p->n_steps)) {
            st = gl_fail(GL_ERR_IO, "%s: export stopped at step %zu", dir, k);
            break;
        }
        st = export_next(&x, p, k);
    }
    return export_finish(&x, p, st);
}

/* `graphlab export` writes each step as the pipeline makes it and frees the model of the
 * step before: two or three snapshots in memory instead of all of them. The temporary
 * folder is made once the model has loaded: a model that does not load leaves no trace
 * on disk. */
static gl_status export_model_step(void *ctx, gl_pipeline *p, size_t k)
{
    exporter *x = ctx;
    gl_status st = k == 0 ? open_folder(&x->tmp, x->dir, x->model, false) : GL_OK;
    if (st == GL_OK)
        st = export_next(x, p, k);
    if (st == GL_OK && k > 0)
        gl_pipeline_drop(p, k - 1); /* its diff and drawing are written */
    return st;
}

gl_status gl_export_model(const char *path, const gl_session_opts *o, const char *dir,
                          const gl_export_opts *eo, gl_session *s, gl_status *pass_status)
{
    exporter x = {.model = path, .dir = dir, .eo = opts_or_default(eo)};
    gl_session_opts so = *o;
    so.pipeline_flags |= GL_PIPELINE_KEEP_SNAPSHOTS;
    so.always_pipeline = true;
    so.on_step = export_model_step;
    so.step_ctx = &x;
    gl_status run = gl_session_open(path, &so, s);
    *pass_status = run;
    if (!s->pipeline) {
        export_finish(&x, NULL, GL_ERR_INPUT); /* frees what was written: nothing */
        return run;
    }
    /* A failed pass still exports the steps before it; a failed write (no failure of
     * the pipeline's own) fails the export. */
    return export_finish(&x, s->pipeline, s->pipeline->failure ? GL_OK : run);
}

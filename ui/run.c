/* run.c — `r`: the shown step run on a job, as `graphlab profile` and `run --compare
 * --intermediates` run a model (profile.h, intermediates.h: nothing is measured or
 * compared here that they do not already), and the pure pieces the run and tensor views
 * draw from: the table's order, a tensor's statistics and its histogram. */
#include "ui/ui.h"

#include "driver/driver.h"
#include "exec/inputs.h"
#include "passes/fusion.h"
#include "util/escape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Few rounds: a person waits for them; the median of 7 is already steady for the
 * shares the table shows (the lead's numbers come from `graphlab profile --reps 200`). */
enum { RUN_REPS = 7, RUN_WARMUP = 2 };

static void branch_free(gl_run_branch *b)
{
    if (!b)
        return;
    gl_profile_free(b->prof);
    free(b->between);
    free(b->here_ref);
    free(b->there_ref);
    free(b->match);
    free(b->only_there);
    free(b);
}

void gl_run_free(gl_run *r)
{
    if (!r)
        return;
    branch_free(r->branch);
    gl_profile_free(r->prof);
    gl_inter_report_free(&r->report);
    gl_inter_rec_free(r->rec_ref);
    gl_inter_rec_free(r->rec_run);
    gl_qerror_report_free(&r->qerror);
    gl_inter_rec_free(r->rec_float);
    gl_qdq_pairs_free(&r->pairs);
    free(r->float_nmse);
    free(r);
}

const gl_run *gl_ui_run_shown(const gl_ui *ui)
{
    const gl_run *r = ui->run;
    return r && !ui->replay.model && ui->pipeline && r->step == ui->step &&
                   r->here == ui->branch_id && r->there == ui->other.id
               ? r
               : NULL;
}

/* ---- the job ----------------------------------------------------------------------------- */

typedef struct run_job {
    const gl_model *model;   /* the step's (the pipeline is kept alive while a job runs) */
    const gl_model *loaded;  /* step 0's: the float model is made from it */
    const gl_model *unfused; /* the model before the fusion steps, or NULL */
    const gl_model *there;   /* the other branch's step (kept alive as well), or NULL */
    const char *data_dir;
    const gl_settings *settings; /* the pipeline's --set: dnnl.fault and dnnl.delay */
    gl_run *run;
    gl_status st;
    char error[512];
} run_job;

static bool has_groups(const gl_model *m)
{
    for (size_t i = 0; i < m->graph->n_nodes; i++) {
        const gl_node *n = m->graph->nodes[i];
        if (n && strcmp(n->domain, GL_FUSED_DOMAIN) == 0)
            return true;
    }
    return false;
}

/* The step before the first fusion step up to step k: the model its groups were made
 * from, which profile's "unfused" run takes (gl_session_open_unfused leaves the fusion
 * steps out; in the default pipeline fusion is the last step, so the two agree). */
static const gl_model *unfused_model(const gl_pipeline *p, size_t k)
{
    for (size_t i = 1; i <= k && i < p->n_steps; i++)
        if (p->steps[i].pass && strcmp(p->steps[i].pass->name, "fusion") == 0)
            return p->steps[i - 1].model;
    return NULL;
}

/* One run of `m` on `backend`: its outputs into outs (the caller frees them), every
 * tensor into rec when given. */
static gl_status run_model(const gl_model *m, const gl_session_opts *o, const char *backend,
                           const gl_dataset *d, gl_inter_rec *rec, gl_tensor **outs)
{
    gl_exec_options eo = gl_session_run_options(o, backend, m, d); /* as `run`'s */
    gl_exec *e = NULL;
    gl_status st = gl_exec_create(m, &eo, &e);
    if (st != GL_OK)
        return st;
    if (rec)
        gl_inter_rec_attach(rec, e);
    st = gl_exec_run(e, (const gl_tensor *const *)d->inputs, d->n_inputs, outs,
                     m->graph->n_outputs);
    gl_exec_free(e);
    return st;
}

static gl_tensor **new_outputs(const gl_model *m)
{
    return gl_xcalloc(m->graph->n_outputs ? m->graph->n_outputs : 1, sizeof(gl_tensor *));
}

static void free_outputs(gl_tensor **outs, size_t n)
{
    for (size_t i = 0; outs && i < n; i++)
        gl_tensor_free(outs[i]);
    free(outs);
}

/* One run of `m` on `backend` with every tensor kept in rec. */
static gl_status record(const gl_model *m, const gl_session_opts *o, const char *backend,
                        const gl_dataset *d, gl_inter_rec *rec)
{
    gl_tensor **outs = new_outputs(m);
    gl_status st = run_model(m, o, backend, d, rec, outs);
    free_outputs(outs, m->graph->n_outputs);
    return st;
}

/* ---- the other branch beside this one --------------------------------------------------- */

/* Both branches start from one loaded model, and no pass renames a graph's inputs or
 * outputs: still, a run that fed one tensor to another input would compare nothing. */
static gl_status same_interface(const gl_model *here, const gl_model *there)
{
    const gl_graph *a = here->graph, *b = there->graph;
    bool same = a->n_inputs == b->n_inputs && a->n_outputs == b->n_outputs;
    for (size_t i = 0; same && i < a->n_inputs; i++)
        same = strcmp(a->inputs[i]->name, b->inputs[i]->name) == 0;
    for (size_t i = 0; same && i < a->n_outputs; i++)
        same = strcmp(a->outputs[i]->name, b->outputs[i]->name) == 0;
    return same ? GL_OK
                : gl_fail(GL_ERR_INPUT, "%s: the other branch's graph inputs or outputs are "
                          "not this one's: its outputs cannot be compared",
                          here->path ? here->path : "the model");
}

/* Rows here matched to there's own rows by name and op (a node renamed, or replaced by
 * another op under its name, is not the same work); there's rows left over. */
static void match_rows(const gl_profile *here, gl_run_branch *b)
{
    const gl_profile *there = b->prof;
    bool *taken = gl_xcalloc(there->n_rows ? there->n_rows : 1, sizeof(bool));
    b->match = gl_xcalloc(here->n_rows ? here->n_rows : 1, sizeof(size_t));
    for (size_t i = 0; i < here->n_rows; i++) {
        b->match[i] = SIZE_MAX;
        for (size_t k = 0; k < there->n_rows && b->match[i] == SIZE_MAX; k++) {
            const gl_profile_row *t = &there->rows[k];
            if (!taken[k] && t->parent == SIZE_MAX && !strcmp(t->name, here->rows[i].name) &&
                !strcmp(t->op, here->rows[i].op)) {
                b->match[i] = k;
                taken[k] = true;
            }
        }
    }
    b->only_there = gl_xcalloc(there->n_rows ? there->n_rows : 1, sizeof(size_t));
    for (size_t k = 0; k < there->n_rows; k++)
        if (!taken[k] && there->rows[k].parent == SIZE_MAX)
            b->only_there[b->n_only_there++] = k;
    free(taken);
}

/* Here's graph outputs as `rec` kept them (run_run recorded every tensor of both of here's
 * runs): shares in outs[], false when one is missing (the recording stopped at its byte
 * bound, or an output is a graph input passed on, no node's). */
static bool recorded_outputs(const gl_model *m, const gl_inter_rec *rec, gl_tensor **outs)
{
    if (gl_inter_rec_status(rec) != GL_OK)
        return false;
    for (size_t i = 0; i < m->graph->n_outputs; i++) {
        const gl_inter_tensor *t = gl_inter_rec_find(rec, m->graph->outputs[i]->name);
        if (!t || !t->t) {
            for (size_t k = 0; k < i; k++) {
                gl_tensor_free(outs[k]);
                outs[k] = NULL;
            }
            return false;
        }
        outs[i] = gl_tensor_share(t->t);
    }
    return true;
}

/* There's step on oneDNN, timed as here's (profile.h), then one untimed run of it for its
 * outputs; here's outputs on oneDNN and on the reference come from here's recordings (run
 * again only when those are incomplete). */
static gl_status run_there(const gl_model *here, const gl_model *there,
                           const gl_session_opts *o, const gl_dataset *d, const gl_run *r,
                           gl_run_branch *b, gl_job *job)
{
    gl_status st = same_interface(here, there);
    if (st != GL_OK)
        return st;
    gl_profile_options po = {.reps = RUN_REPS, .warmup = RUN_WARMUP, .rtol = r->rtol,
                             .atol = r->atol, .steps = r->steps};
    po.backends[po.n_backends++] = "dnnl";
    gl_job_progress(job, "run: the other branch, %d rounds on dnnl", RUN_REPS);
    st = gl_profile_run(there, (const gl_tensor *const *)d->inputs, d->n_inputs, &po, &b->prof);
    if (st != GL_OK || gl_job_cancelled(job))
        return st;
    match_rows(r->prof, b);
    size_t n = b->n_outputs = here->graph->n_outputs;
    gl_tensor **ref = new_outputs(here), **h = new_outputs(here), **t = new_outputs(there);
    gl_job_progress(job, "run: the outputs of both branches");
    if (!recorded_outputs(here, r->rec_ref, ref))
        st = run_model(here, o, "ref", d, NULL, ref);
    if (st == GL_OK && !recorded_outputs(here, r->rec_run, h))
        st = run_model(here, o, "dnnl", d, NULL, h);
    if (st == GL_OK)
        st = run_model(there, o, "dnnl", d, NULL, t);
    if (st == GL_OK) {
        b->between = gl_xcalloc(n ? n : 1, sizeof(gl_compare));
        b->here_ref = gl_xcalloc(n ? n : 1, sizeof(gl_compare));
        b->there_ref = gl_xcalloc(n ? n : 1, sizeof(gl_compare));
        b->outputs_ok = true;
        gl_tolerance tol = {r->rtol, r->atol, r->steps};
        for (size_t i = 0; i < n; i++) {
            const gl_value *v = here->graph->outputs[i];
            gl_compare_value(v, h[i], t[i], &tol, &b->between[i]);
            gl_compare_value(v, h[i], ref[i], &tol, &b->here_ref[i]);
            gl_compare_value(v, t[i], ref[i], &tol, &b->there_ref[i]);
            b->outputs_ok = b->outputs_ok && b->between[i].ok;
        }
    }
    free_outputs(ref, n);
    free_outputs(h, n);
    free_outputs(t, n);
    return st;
}

double gl_run_there_ms(const gl_run *r, size_t row)
{
    const gl_run_branch *b = r->branch;
    if (!b || !b->match || row >= r->prof->n_rows || b->match[row] == SIZE_MAX)
        return -1;
    return gl_run_row_ms(b->prof, b->match[row], 0);
}

/* "fusion lost 20.2 ms in 1 group (#16)": the groups slower fused than their members
 * beyond noise (profile.h's rule), which the run view marks '<'; false (buf empty) when
 * none did. */
bool gl_run_lost_text(const gl_run *r, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (r->stable || !len || !r->prof)
        return false;
    const gl_profile *p = r->prof;
    double ms = 0;
    size_t n = 0;
    int64_t first = -1;
    for (size_t i = 0; i < p->n_rows; i++) {
        double lost = gl_profile_row_lost(p, &p->rows[i], r->fused, r->unfused);
        if (lost > 0) {
            ms += lost;
            if (!n++)
                first = p->rows[i].decision;
        }
    }
    char which[48] = "";
    if (first >= 0)
        snprintf(which, sizeof(which), " (#%lld%s)", (long long)first, n > 1 ? ", ..." : "");
    if (n)
        snprintf(buf, len, "fusion lost %.1f ms in %zu group%s%s", ms, n, n == 1 ? "" : "s",
                 which);
    return n > 0;
}

/* ---- the float model beside a quantized one --------------------------------------------- */

/* The first tensor rec kept of the model's node `name` (its first output), or NULL. */
static const gl_inter_tensor *first_output_of(const gl_inter_rec *rec, const char *name)
{
    for (size_t i = 0; i < gl_inter_rec_count(rec); i++) {
        const gl_inter_tensor *t = gl_inter_rec_at(rec, i);
        if (!t->in_body && strcmp(t->node, name) == 0)
            return t;
    }
    return NULL;
}

/* Row `row`'s error against the float run: a pair's Q its pair's (dequantized), any
 * other node its first output against the float run's tensor of that name. */
static double row_float_nmse(const gl_run *r, size_t row)
{
    const char *name = r->prof->rows[row].name;
    for (size_t k = 0; k < r->qerror.n_rows; k++) {
        const gl_qerror_row *q = &r->qerror.rows[k];
        if (strcmp(q->pair->node, name) == 0)
            return q->compared ? q->cmp.nmse : NAN;
    }
    const gl_inter_tensor *t = first_output_of(r->rec_ref, name);
    const gl_inter_tensor *f = t ? gl_inter_rec_find(r->rec_float, t->key) : NULL;
    if (!f)
        return NAN;
    gl_compare c;
    gl_compare_tensors(t->t, f->t, 0, 0, &c);
    return c.same_shape ? c.nmse : NAN;
}

/* On a QDQ model: the float model's run, every tensor kept, and the step's reference run
 * against it (r->rec_ref is that run). A model with no pair has no float run. */
static gl_status run_float(const gl_model *loaded, const gl_session_opts *o, const gl_dataset *d,
                           gl_run *r, gl_job *job)
{
    gl_qdq_pairs probe;
    gl_qdq_pairs_find(loaded->graph, &probe);
    size_t n_pairs = probe.n;
    gl_qdq_pairs_free(&probe);
    if (!n_pairs || gl_inter_rec_status(r->rec_ref) != GL_OK)
        return GL_OK;
    gl_session flt;
    gl_status st = gl_session_open_float(loaded, &flt, &r->pairs);
    if (st != GL_OK)
        return st;
    gl_job_progress(job, "run: every tensor, the float model");
    r->rec_float = gl_inter_rec_new(&(gl_inter_rec_options){.label = "float"});
    st = record(flt.model, o, "ref", d, r->rec_float);
    gl_session_close(&flt);
    if (st == GL_OK && (st = gl_inter_rec_status(r->rec_float)) == GL_OK) {
        gl_qerror_compare(&r->pairs, r->rec_ref, r->rec_float, &r->qerror);
        r->float_nmse = gl_xcalloc(r->prof->n_rows ? r->prof->n_rows : 1, sizeof(double));
        for (size_t row = 0; row < r->prof->n_rows; row++)
            r->float_nmse[row] = row_float_nmse(r, row);
        r->has_float = true;
    }
    return st;
}

static void run_run(void *arg, gl_job *job)
{
    run_job *j = arg;
    gl_run *r = j->run;
    gl_session_opts o;
    gl_session_opts_init(&o, "none");
    o.data = j->data_dir;
    r->rtol = o.rtol;
    r->atol = o.atol;
    r->steps = o.steps;
    gl_dataset d;
    gl_job_progress(job, "run: inputs");
    j->st = gl_session_inputs(j->model, &o, &d);
    if (j->st != GL_OK)
        goto out;
    gl_profile_options po = {.reps = RUN_REPS, .warmup = RUN_WARMUP, .rtol = o.rtol,
                             .atol = o.atol, .steps = o.steps};
    /* the data set's outputs, when it has them: every run is compared with them */
    po.expected = d.expected ? (const gl_tensor *const *)d.expected : NULL;
    po.dnnl_fault = gl_settings_lookup_text(j->settings, "dnnl", "fault");
    po.dnnl_delay = gl_settings_lookup_text(j->settings, "dnnl", "delay");
    po.backends[po.n_backends++] = "ref";
    if (j->unfused) {
        po.labels[po.n_backends] = "unfused";
        po.models[po.n_backends] = j->unfused;
        po.backends[po.n_backends++] = "dnnl";
        po.labels[po.n_backends] = "fused";
    }
    po.backends[po.n_backends++] = "dnnl";
    gl_job_progress(job, "run: %d rounds on %s", RUN_REPS,
                    j->unfused ? "ref, unfused and fused" : "ref and dnnl");
    j->st = gl_profile_run(j->model, (const gl_tensor *const *)d.inputs, d.n_inputs, &po,
                           &r->prof);
    if (j->st == GL_OK && !gl_job_cancelled(job)) {
        r->ref = r->prof->ref;
        r->fused = r->prof->primary;
        r->unfused = SIZE_MAX; /* the runs on other models come last: find it by name */
        for (size_t b = 0; j->unfused && b < r->prof->n_backends; b++)
            if (strcmp(r->prof->backends[b].name, "unfused") == 0)
                r->unfused = b;
        r->rec_ref = gl_inter_rec_new(&(gl_inter_rec_options){.label = "ref"});
        r->rec_run = gl_inter_rec_new(&(gl_inter_rec_options){.label = j->unfused ? "fused"
                                                                                  : "dnnl"});
        gl_job_progress(job, "run: every tensor, reference");
        j->st = record(j->model, &o, "ref", &d, r->rec_ref);
        if (j->st == GL_OK && !gl_job_cancelled(job)) {
            gl_job_progress(job, "run: every tensor, oneDNN");
            j->st = record(j->model, &o, "dnnl", &d, r->rec_run);
        }
        if (j->st == GL_OK) {
            gl_status rs = gl_inter_rec_status(r->rec_ref);
            if (rs == GL_OK)
                rs = gl_inter_rec_status(r->rec_run);
            if (rs != GL_OK)
                snprintf(r->rec_error, sizeof(r->rec_error), "%s", gl_error_message());
            gl_tolerance tol = {r->rtol, r->atol, r->steps};
            gl_inter_compare(r->rec_ref, r->rec_run, &tol, &r->report);
        }
        if (j->st == GL_OK && j->loaded && !gl_job_cancelled(job))
            j->st = run_float(j->loaded, &o, &d, r, job);
        if (j->st == GL_OK && j->there && !gl_job_cancelled(job))
            j->st = run_there(j->model, j->there, &o, &d, r, r->branch, job);
    }
    gl_dataset_free(&d);
out:
    if (j->st != GL_OK)
        snprintf(j->error, sizeof(j->error), "%s", gl_error_message());
    gl_session_opts_free(&o);
}

static void run_discard(void *arg)
{
    run_job *j = arg;
    gl_run_free(j->run);
    free(j);
}

/* Every run's graph outputs within tolerance of the data set's (true: none given). */
static bool expected_ok(const gl_profile *p)
{
    for (size_t bi = 0; bi < p->n_backends; bi++)
        if (!p->backends[bi].expected_ok)
            return false;
    return true;
}

static unsigned run_finish(gl_ui *ui, void *arg)
{
    run_job *j = arg;
    if (j->st != GL_OK) {
        gl_ui_set_error(ui, "run failed: %s", j->error);
        run_discard(j);
        return GL_REDRAW_STATUS;
    }
    gl_run_free(ui->run);
    ui->run = j->run;
    free(j);
    gl_run *r = ui->run;
    const gl_profile_backend *f = &r->prof->backends[r->fused];
    char label[96];
    gl_snapshot_label(ui->pipeline, r->step, label, sizeof(label));
    const gl_run_branch *b = r->branch;
    char expected[512], lost[128];
    gl_profile_expected_text(r->prof, r->stable, expected, sizeof(expected));
    if (r->rec_error[0])
        gl_ui_set_error(ui, "ran %s on %s; the tensors are incomplete: %s", label, r->inputs,
                        r->rec_error);
    else if (!expected_ok(r->prof))
        gl_ui_set_error(ui, "ran %s on %s: outputs differ from %s's: %s", label, r->inputs,
                        r->expected_label, expected);
    else if (b)
        gl_ui_set_status(ui, "ran %s of both branches on %s: here (%s) and there (%s) %s; "
                         "%s %s the reference", label, r->inputs, b->here, b->there,
                         b->outputs_ok ? "agree" : "DIFFER", f->name,
                         f->outputs_ok ? "agrees with" : "DIFFERS from");
    else if (gl_run_lost_text(r, lost, sizeof(lost)))
        gl_ui_set_error(ui, "%s, rows marked <; ran %s on %s: %s %s the reference", lost,
                        label, r->inputs, f->name,
                        f->outputs_ok ? "agrees with" : "DIFFERS from");
    else
        gl_ui_set_status(ui, "ran %s on %s: %s %s the reference%s", label, r->inputs, f->name,
                         f->outputs_ok ? "agrees with" : "DIFFERS from",
                         f->outputs_ok ? "" : " (p: where they part ways)");
    ui->views[GL_VIEW_RUN].generation = 0; /* rebuild it */
    return GL_REDRAW_ALL;
}

static const gl_job_spec run_spec = {
    .what = "the run", .run = run_run, .finish = run_finish, .discard = run_discard};

/* The data set's folder as the header names it: its last component (test_data_set_0),
 * escaped as all model-given text is. */
static void expected_label(const char *dir, char *buf, size_t len)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t from = n;
    while (from > 0 && dir[from - 1] != '/')
        from--;
    char last[256];
    snprintf(last, sizeof(last), "%.*s", (int)(n - from), dir + from);
    gl_escape(buf, len, last);
}

/* "seeded random inputs", and the sizes they give the symbolic dims, as `run` has no
 * --dim here to take ("seeded random inputs; N=1, seq=1 (symbolic dims: random inputs
 * take 1)"): a model run at batch 1 says so in the header and the status line. */
static void random_inputs_text(const gl_model *m, char *buf, size_t len)
{
    char dims[512], shown[600];
    if (!gl_dataset_random_defaults(m, NULL, 0, dims, sizeof(dims))) {
        snprintf(buf, len, "seeded random inputs");
        return;
    }
    gl_escape(shown, sizeof(shown), dims); /* the names are the model's */
    snprintf(buf, len, "seeded random inputs; %s (symbolic dims: random inputs take 1)", shown);
}

unsigned gl_ui_run(gl_ui *ui)
{
    if (!ui->pipeline)
        return GL_REDRAW_NONE;
    if (ui->replay.model) {
        gl_ui_set_status(ui, "r runs whole steps: show all of this step's rewrites first (+)");
        return GL_REDRAW_STATUS;
    }
    const gl_model *m = ui->pipeline->steps[ui->step].model;
    if (!m) {
        gl_ui_set_error(ui, "step %zu has no model to run", ui->step);
        return GL_REDRAW_STATUS;
    }
    unsigned flags = gl_ui_show(ui, GL_VIEW_RUN, ui->current != GL_VIEW_RUN);
    run_job *j = gl_xcalloc(1, sizeof(*j));
    j->model = m;
    j->loaded = ui->pipeline->steps[0].model;
    j->unfused = has_groups(m) ? unfused_model(ui->pipeline, ui->step) : NULL;
    j->data_dir = ui->data_dir;
    j->settings = &ui->pipeline->settings;
    j->run = gl_xcalloc(1, sizeof(gl_run));
    j->run->step = ui->step;
    j->run->here = ui->branch_id;
    j->run->there = ui->other.id;
    j->run->stable = getenv("GRAPHLAB_STABLE_TIMES") != NULL;
    const gl_pipeline *o = ui->other.pipeline;
    if (o && ui->step < o->n_steps && o->steps[ui->step].model) {
        gl_run_branch *b = j->run->branch = gl_xcalloc(1, sizeof(*b));
        j->there = o->steps[ui->step].model;
        gl_ui_branch_label(ui->pipeline, b->here, sizeof(b->here));
        gl_ui_branch_label(o, b->there, sizeof(b->there));
        b->nodes_here = ui->pipeline->steps[ui->step].nodes;
        b->nodes_there = o->steps[ui->step].nodes;
    }
    if (ui->data_dir) {
        snprintf(j->run->inputs, sizeof(j->run->inputs), "the inputs of %s", ui->data_dir);
        expected_label(ui->data_dir, j->run->expected_label, sizeof(j->run->expected_label));
    }
    else
        random_inputs_text(m, j->run->inputs, sizeof(j->run->inputs));
    if (!gl_ui_start_job(ui, &run_spec, j))
        run_discard(j);
    else if (ui->job)
        gl_ui_set_status(ui, "running step %zu%s on %s", ui->step,
                         j->there ? " of both branches" : "", j->run->inputs);
    return flags | GL_REDRAW_ALL;
}

/* ---- what the views read --------------------------------------------------------------- */

double gl_run_row_ms(const gl_profile *p, size_t row, size_t b)
{
    if (row >= p->n_rows || b >= p->n_backends)
        return -1;
    const gl_profile_row *r = &p->rows[row];
    const gl_profile_cell *c = &r->cells[b];
    if (c->ran)
        return c->ms.median;
    return r->n_members && c->members_ms > 0 ? c->members_ms : -1;
}

/* Row x before row y by error, largest first, NAN (not compared) last. */
static bool worse(const double *error, size_t x, size_t y)
{
    if (isnan(error[y]))
        return !isnan(error[x]);
    return error[x] > error[y];
}

/* Is row a before row b in `key`'s order (strictly)? */
static bool before(const gl_profile *p, size_t b, gl_run_sort key, const double *error,
                   size_t x, size_t y)
{
    switch (key) {
    case GL_RUN_BY_FLOAT: return error ? worse(error, x, y) : x < y;
    case GL_RUN_BY_TIME: {
        double tx = gl_run_row_ms(p, x, b), ty = gl_run_row_ms(p, y, b);
        return tx > ty;
    }
    case GL_RUN_BY_NAME: return strcmp(p->rows[x].name, p->rows[y].name) < 0;
    default: return x < y;
    }
}

static size_t append_under(const gl_profile *p, size_t parent, size_t *order, size_t n)
{
    for (size_t i = 0; i < p->n_rows; i++)
        if (p->rows[i].parent == parent && i != parent) {
            order[n++] = i;
            n = append_under(p, i, order, n);
        }
    return n;
}

size_t gl_run_order(const gl_profile *p, size_t b, gl_run_sort key, const double *row_error,
                    size_t *order)
{
    size_t *top = gl_xcalloc(p->n_rows ? p->n_rows : 1, sizeof(size_t));
    size_t n_top = 0;
    /* insertion sort: stable, and a few thousand rows at most */
    for (size_t i = 0; i < p->n_rows; i++) {
        if (p->rows[i].parent != SIZE_MAX)
            continue;
        size_t at = n_top++;
        while (at > 0 && before(p, b, key, row_error, i, top[at - 1])) {
            top[at] = top[at - 1];
            at--;
        }
        top[at] = i;
    }
    size_t n = 0;
    for (size_t i = 0; i < n_top; i++) {
        order[n++] = top[i];
        n = append_under(p, top[i], order, n);
    }
    free(top);
    return n;
}

gl_run_sort gl_run_next_sort(const gl_run *r, gl_run_sort key)
{
    gl_run_sort next = (gl_run_sort)((key + 1) % GL_RUN_SORTS);
    if (next == GL_RUN_BY_FLOAT && !(r && r->has_float))
        next = (gl_run_sort)((next + 1) % GL_RUN_SORTS);
    return next;
}

void gl_run_float_text(const gl_run *r, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (!r->has_float || !len)
        return;
    const gl_qerror_row *w = gl_qerror_worst(&r->qerror);
    int n = snprintf(buf, len, "float (the model without its Q/DQ pairs, ref): ");
    if (n < 0 || (size_t)n >= len)
        return;
    if (!w) {
        snprintf(buf + n, len - (size_t)n, "no pair's tensor compared");
        return;
    }
    char adds[32], snr[32];
    snprintf(adds, sizeof(adds), r->stable ? "~" : "%.3g", w->added);
    snprintf(snr, sizeof(snr), r->stable ? "~" : "%.1f", w->snr_db);
    int m = snprintf(buf + n, len - (size_t)n, "'%s' loses most, adds nmse %s (SNR %s dB)",
                     gl_esc(w->pair->tensor), adds, snr);
    if (m < 0 || (size_t)(n + m) >= len)
        return;
    const gl_qerror_report *q = &r->qerror;
    if (q->first_jump != SIZE_MAX)
        snprintf(buf + n + m, len - (size_t)(n + m), "; first jump '%s'",
                 gl_esc(q->rows[q->first_jump].pair->tensor));
    else
        snprintf(buf + n + m, len - (size_t)(n + m), "; no jump");
}

/* The model's own row named like node n, or SIZE_MAX. */
static size_t row_named(const gl_profile *p, const char *name)
{
    for (size_t i = 0; name && i < p->n_rows; i++)
        if (p->rows[i].parent == SIZE_MAX && strcmp(p->rows[i].name, name) == 0)
            return i;
    return SIZE_MAX;
}

bool gl_ui_run_backend(const gl_ui *ui, const gl_node *n, char *buf, size_t len)
{
    const gl_run *r = gl_ui_run_shown(ui);
    size_t row = r ? row_named(r->prof, n->name) : SIZE_MAX;
    if (row == SIZE_MAX || !r->prof->rows[row].cells[r->fused].ran)
        return false;
    const gl_profile_cell *c = &r->prof->rows[row].cells[r->fused];
    snprintf(buf, len, "%s %s%s", c->backend, c->info.impl, c->fell_back ? "*" : "");
    return true;
}

unsigned gl_ui_run_divergence(gl_ui *ui)
{
    const gl_run *r = gl_ui_run_shown(ui);
    if (!r) {
        gl_ui_set_status(ui, "no run of this step yet: r runs it");
        return GL_REDRAW_STATUS;
    }
    const char *run = r->prof->backends[r->fused].name;
    if (r->report.first_bad == SIZE_MAX) {
        gl_ui_set_status(ui, "%s and ref do not part ways: every tensor within rtol %g, atol %g",
                         run, r->rtol, r->atol);
        return GL_REDRAW_STATUS;
    }
    const gl_inter_row *bad = &r->report.rows[r->report.first_bad];
    /* a tensor inside a body is keyed "call::t": the row is the call's */
    char node[256];
    snprintf(node, sizeof(node), "%s", bad->a->node);
    char *sep = strstr(node, "::");
    if (sep)
        *sep = '\0';
    size_t row = row_named(r->prof, node);
    char line[256];
    gl_compare_format(&bad->cmp, line, sizeof(line));
    if (ui->current != GL_VIEW_RUN)
        gl_ui_show(ui, GL_VIEW_RUN, true);
    gl_view *v = &ui->views[GL_VIEW_RUN];
    size_t *order = gl_xcalloc(r->prof->n_rows ? r->prof->n_rows : 1, sizeof(size_t));
    size_t n = gl_run_order(r->prof, r->fused, ui->run_sort, r->float_nmse, order);
    for (size_t i = 0; i < n; i++)
        if (order[i] == row)
            v->selected = (int)i;
    free(order);
    gl_ui_set_error(ui, "%s and ref part ways at '%s' (%s), tensor '%s': %s (rtol %g, atol %g)",
                    run, bad->a->node, bad->a->op, bad->a->key, line, r->rtol, r->atol);
    return GL_REDRAW_VIEW | GL_REDRAW_STATUS;
}

/* ---- a tensor's values ------------------------------------------------------------------ */

void gl_value_stats_of(const gl_tensor *t, gl_value_stats *s)
{
    memset(s, 0, sizeof(*s));
    if (!t || t->dtype == GL_DT_STRING)
        return;
    s->count = t->count;
    double sum = 0;
    for (int64_t i = 0; i < t->count; i++) {
        double x = gl_tensor_get_f64(t, i);
        if (isnan(x)) {
            s->nan++;
        } else if (isinf(x)) {
            s->inf++;
        } else {
            s->min = s->finite && s->min < x ? s->min : x;
            s->max = s->finite && s->max > x ? s->max : x;
            s->finite++;
            sum += x;
        }
    }
    if (!s->finite)
        return;
    s->mean = sum / (double)s->finite;
    double sq = 0, width = (s->max - s->min) / GL_HIST_BINS;
    for (int64_t i = 0; i < t->count; i++) {
        double x = gl_tensor_get_f64(t, i);
        if (!isfinite(x))
            continue;
        sq += (x - s->mean) * (x - s->mean);
        size_t bin = width > 0 ? (size_t)((x - s->min) / width) : 0;
        s->hist[bin < GL_HIST_BINS ? bin : GL_HIST_BINS - 1]++;
    }
    s->std = sqrt(sq / (double)s->finite);
}

size_t gl_histogram_draw(const size_t *bins, size_t n, bool utf8, char *buf, size_t len)
{
    static const char *const blocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ascii[] = "_.-=+*#@";
    size_t top = 0, used = 0, drawn = 0;
    for (size_t i = 0; i < n; i++)
        top = bins[i] > top ? bins[i] : top;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        /* the smallest non-empty bin still shows: heights round up */
        size_t level = bins[i] ? (bins[i] * 8 + top - 1) / top : 0;
        char one[2] = {level ? ascii[level - 1] : ' ', '\0'};
        const char *glyph = level && utf8 ? blocks[level - 1] : one;
        size_t gl = strlen(glyph);
        if (used + gl + 1 > len)
            break;
        memcpy(buf + used, glyph, gl + 1);
        used += gl;
        drawn++;
    }
    return drawn;
}

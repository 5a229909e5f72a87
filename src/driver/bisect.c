/* bisect.c — binary search over a pipeline's rewrites for the first one that changes the
 * outputs (bisect.h). */
#include "driver/bisect.h"

#include "exec/compare.h"
#include "util/escape.h"
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct probe_run {
    const gl_pipeline *p;
    const gl_session_opts *o;
    gl_dataset data;
    gl_tensor **base; /* the input model's outputs */
    size_t n_base;
    gl_bisect_progress_fn progress;
    void *ctx;
    gl_bisect_result *r;
} probe_run;

static void free_tensors(gl_tensor **t, size_t n)
{
    for (size_t i = 0; t && i < n; i++)
        gl_tensor_free(t[i]);
    free(t);
}

/* Run m on the reference backend: *outs (malloc'd, m's outputs) on success. */
static gl_status run_ref(const probe_run *b, const gl_model *m, gl_tensor ***outs)
{
    gl_exec_options eo = gl_session_exec_options(b->o, "ref");
    gl_exec *e = NULL;
    size_t n = m->graph->n_outputs;
    *outs = NULL;
    gl_status st = gl_exec_create(m, &eo, &e);
    if (st != GL_OK)
        return st;
    gl_tensor **t = gl_xcalloc(n ? n : 1, sizeof(*t));
    st = gl_exec_run(e, (const gl_tensor *const *)b->data.inputs, b->data.n_inputs, t, n);
    gl_exec_free(e);
    if (st != GL_OK)
        free(t);
    else
        *outs = t;
    return st;
}

/* What differs between m's outputs on the inputs and the input model's (malloc'd), NULL
 * when nothing does. */
static char *differs(const probe_run *b, const gl_model *m)
{
    gl_tensor **outs;
    if (run_ref(b, m, &outs) != GL_OK) {
        char *why = gl_xmalloc(strlen(gl_error_message()) + 32);
        sprintf(why, "the model does not run: %s", gl_error_message());
        gl_error_clear();
        return why;
    }
    const gl_graph *g = m->graph;
    char *why = NULL;
    if (g->n_outputs != b->n_base) {
        why = gl_xmalloc(96);
        snprintf(why, 96, "%zu outputs instead of %zu", g->n_outputs, b->n_base);
    }
    for (size_t i = 0; i < g->n_outputs && !why; i++) {
        gl_compare c;
        gl_compare_tensors(outs[i], b->base[i], b->o->rtol, b->o->atol, &c);
        if (c.ok)
            continue;
        char line[320];
        if (c.same_shape)
            gl_compare_format(&c, line, sizeof(line));
        else
            snprintf(line, sizeof(line), "dtype or shape differs");
        gl_strbuf sb = {0};
        gl_sb_printf(&sb, "output '%s': %s", g->outputs[i]->name, line);
        why = gl_sb_take(&sb);
    }
    free_tensors(outs, g->n_outputs);
    return why;
}

/* The step of rewrite i (1-based, over the whole pipeline) and its rank k in that step. */
static size_t locate(const gl_pipeline *p, int64_t i, int64_t *k)
{
    size_t s = 1;
    while (s + 1 < p->n_steps && i > p->steps[s].rewrites) {
        i -= p->steps[s].rewrites;
        s++;
    }
    *k = i;
    return s;
}

static void say(const probe_run *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const probe_run *b, const char *fmt, ...)
{
    if (!b->progress)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    b->progress(b->ctx, line);
}

/* Whether the model after the first i rewrites differs (*why: what, malloc'd). */
static gl_status probe(probe_run *b, int64_t i, char **why)
{
    const gl_pipeline *p = b->p;
    int64_t k;
    size_t s = locate(p, i, &k);
    const gl_snapshot *snap = &p->steps[s];
    gl_model *replayed = NULL;
    const gl_model *m = snap->model;
    if (k < snap->rewrites || !m) {
        gl_decision_log log = {0};
        gl_status st = gl_pipeline_replay(p, s, k, &replayed, &log);
        gl_decision_log_free(&log);
        if (st != GL_OK)
            return st;
        m = replayed;
    }
    *why = differs(b, m);
    b->r->runs++;
    gl_model_free(replayed);
    say(b, "rewrite %lld of %lld (%s %lld/%lld, step %zu): %s", (long long)i,
        (long long)b->r->rewrites, snap->pass->name, (long long)k, (long long)snap->rewrites,
        s, *why ? "differs" : "same outputs");
    return GL_OK;
}

/* The k-th applied record of step s, or -1. */
static int64_t kth_applied(const gl_pipeline *p, size_t s, int64_t k)
{
    const gl_snapshot *snap = &p->steps[s];
    for (size_t i = snap->first_decision; i < snap->first_decision + snap->n_decisions; i++)
        if (p->log.items[i].verdict == GL_APPLIED && --k == 0)
            return (int64_t)i;
    return -1;
}

static gl_status search(probe_run *b)
{
    gl_bisect_result *r = b->r;
    char *why = NULL;
    gl_status st = r->rewrites ? probe(b, r->rewrites, &why) : GL_OK;
    if (st != GL_OK || !why)
        return st;
    /* Invariant: rewrite lo's model matches (0: the input), hi's differs (why). */
    int64_t lo = 0, hi = r->rewrites;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        char *w = NULL;
        if ((st = probe(b, mid, &w)) != GL_OK) {
            free(why);
            return st;
        }
        if (w) {
            free(why);
            why = w;
            hi = mid;
        } else {
            lo = mid;
        }
    }
    r->found = true;
    r->step = locate(b->p, hi, &r->k);
    r->decision = kth_applied(b->p, r->step, r->k);
    r->why = why;
    return GL_OK;
}

gl_status gl_bisect_pipeline(const gl_pipeline *p, size_t last_step, const gl_session_opts *o,
                             gl_bisect_progress_fn progress, void *ctx, gl_bisect_result *r)
{
    *r = (gl_bisect_result){.decision = -1};
    const gl_model *input = p->n_steps ? p->steps[0].model : NULL;
    if (!input)
        return gl_fail(GL_ERR_INPUT, "bisect: the pipeline did not keep its input model");
    size_t n_steps = last_step < p->n_steps ? last_step + 1 : p->n_steps;
    for (size_t s = 1; s < n_steps; s++) {
        if (!p->steps[s].model)
            return gl_fail(GL_ERR_INPUT, "bisect: the pipeline did not keep step %zu", s);
        r->rewrites += p->steps[s].rewrites;
    }
    probe_run b = {.p = p, .o = o, .progress = progress, .ctx = ctx, .r = r};
    gl_status st = gl_session_inputs(input, o, &b.data);
    if (st != GL_OK)
        return st;
    say(&b, "%lld rewrites in %zu steps; running the input model (%s)",
        (long long)r->rewrites, n_steps - 1, o->data ? "inputs from --data" : "random inputs");
    if ((st = run_ref(&b, input, &b.base)) == GL_OK) {
        b.n_base = input->graph->n_outputs;
        r->runs = 1;
        st = search(&b);
    }
    free_tensors(b.base, b.n_base);
    gl_dataset_free(&b.data);
    if (st != GL_OK)
        gl_bisect_result_free(r);
    return st;
}

void gl_bisect_result_free(gl_bisect_result *r)
{
    free(r->why);
    *r = (gl_bisect_result){.decision = -1};
}

char *gl_bisect_passes(const gl_pipeline *p, const gl_bisect_result *r)
{
    gl_strbuf sb = {0};
    for (size_t s = 1; s <= r->step && s < p->n_steps; s++) {
        const gl_snapshot *snap = &p->steps[s];
        gl_sb_printf(&sb, "%s%s", s > 1 ? "," : "", snap->pass->name);
        int64_t budget = s == r->step ? r->k : snap->budget;
        if (budget != GL_BUDGET_UNLIMITED)
            gl_sb_printf(&sb, ":%lld", (long long)budget);
    }
    return gl_sb_take(&sb);
}

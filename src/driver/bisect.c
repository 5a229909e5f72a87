/* bisect.c — binary search over a pipeline's rewrites for the first one that changes the
 * outputs (bisect.h). */
#include "driver/bisect.h"

#include "exec/compare.h"
#include "exec/profile.h"
#include "util/escape.h"
#include "util/plural.h"
#include "util/strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct probe_run probe_run;
/* What is wrong with model m (malloc'd), NULL when nothing is: the search's question. */
typedef char *(*judge_fn)(probe_run *b, const gl_model *m);

struct probe_run {
    const gl_pipeline *p;
    const gl_session_opts *o;
    const char *backend; /* the executor's backend of the probes ("ref", "dnnl") */
    judge_fn judge;
    gl_dataset data;
    gl_tensor **base; /* the input model's outputs on the reference */
    size_t n_base;
    gl_exec *base_exec; /* --slower: the input model on `backend`, timed against each probe */
    double slower;      /* --slower PCT */
    bool minimums_disagree; /* too noisy because the fastest runs disagreed with the medians */
    gl_bisect_progress_fn progress;
    void *ctx;
    gl_bisect_result *r;
};

static void free_tensors(gl_tensor **t, size_t n)
{
    for (size_t i = 0; t && i < n; i++)
        gl_tensor_free(t[i]);
    free(t);
}

/* One run of plan e: its wall time in ns into *ns (may be NULL), its outputs into *outs
 * (malloc'd; NULL: freed at once). */
static gl_status run_plan(const probe_run *b, gl_exec *e, double *ns, gl_tensor ***outs)
{
    size_t n = gl_exec_model(e)->graph->n_outputs;
    gl_tensor **t = gl_xcalloc(n ? n : 1, sizeof(*t));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gl_status st = gl_exec_run(e, (const gl_tensor *const *)b->data.inputs, b->data.n_inputs,
                               t, n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (ns)
        *ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    if (st == GL_OK && outs) {
        *outs = t;
        return st;
    }
    free_tensors(t, st == GL_OK ? n : 0);
    return st;
}

/* Run m once on `backend`: *outs (malloc'd, m's outputs) on success. */
static gl_status run_on(const probe_run *b, const gl_model *m, const char *backend,
                        gl_tensor ***outs)
{
    gl_exec_options eo = gl_session_run_options(b->o, backend, m, &b->data);
    gl_exec *e = NULL;
    *outs = NULL;
    gl_status st = gl_exec_create(m, &eo, &e);
    if (st == GL_OK)
        st = run_plan(b, e, NULL, outs);
    gl_exec_free(e);
    return st;
}

/* "the model does not run: MESSAGE" (malloc'd), the pending error cleared. */
static char *does_not_run(void)
{
    gl_strbuf sb = {0};
    gl_sb_printf(&sb, "the model does not run: %s", gl_error_message());
    gl_error_clear();
    return gl_sb_take(&sb);
}

/* What differs between m's outputs on the probes' backend and the input model's on the
 * reference (malloc'd), NULL when nothing does. */
static char *differs(probe_run *b, const gl_model *m)
{
    gl_tensor **outs;
    if (run_on(b, m, b->backend, &outs) != GL_OK)
        return does_not_run();
    const gl_graph *g = m->graph;
    char *why = NULL;
    if (g->n_outputs != b->n_base) {
        why = gl_xmalloc(96);
        snprintf(why, 96, "%zu outputs instead of %zu", g->n_outputs, b->n_base);
    }
    for (size_t i = 0; i < g->n_outputs && !why; i++) {
        gl_compare c;
        gl_tolerance tol = gl_session_tolerance(b->o);
        gl_compare_value(g->outputs[i], outs[i], b->base[i], &tol, &c);
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

/* ---- --slower ---------------------------------------------------------------------------- */

/* Rounds of a timing, each one run of the input model then one of the probe: interleaved,
 * so that a change in the machine's load falls on both. Warm-up runs first: a primitive's
 * first run is 10-20x its steady state. */
enum { SLOWER_WARMUP = 2, SLOWER_ROUNDS = 9 };

/* The median absolute deviation of the samples (ns) relative to their median, in %: the
 * spread of a run's time that the answer must stand above. Sorts nothing in x. */
static double noise_pct(const double *x, size_t n, double median_ms)
{
    double dev[SLOWER_ROUNDS];
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(x[i] / 1e6 - median_ms) * 1e6;
    return median_ms > 0 ? 100.0 * gl_profile_stats(dev, n).median / median_ms : 0;
}

/* The input model and m on the probes' backend, SLOWER_ROUNDS rounds: medians (ms), the
 * larger of the two noises (%), and the minimums (ms). */
static gl_status time_rounds(probe_run *b, gl_exec *probe, double *base_ms, double *probe_ms,
                             double *noise, double *base_min, double *probe_min)
{
    double tb[SLOWER_ROUNDS], tp[SLOWER_ROUNDS];
    gl_status st = GL_OK;
    for (int w = 0; w < SLOWER_WARMUP && st == GL_OK; w++)
        if ((st = run_plan(b, b->base_exec, NULL, NULL)) == GL_OK)
            st = run_plan(b, probe, NULL, NULL);
    for (size_t i = 0; i < SLOWER_ROUNDS && st == GL_OK; i++)
        if ((st = run_plan(b, b->base_exec, &tb[i], NULL)) == GL_OK)
            st = run_plan(b, probe, &tp[i], NULL);
    if (st != GL_OK)
        return st;
    double sb[SLOWER_ROUNDS], sp[SLOWER_ROUNDS];
    memcpy(sb, tb, sizeof(tb));
    memcpy(sp, tp, sizeof(tp));
    gl_profile_stat bs = gl_profile_stats(sb, SLOWER_ROUNDS), ps = gl_profile_stats(sp, SLOWER_ROUNDS);
    *base_ms = bs.median;
    *probe_ms = ps.median;
    *base_min = bs.min;
    *probe_min = ps.min;
    double nb = noise_pct(tb, SLOWER_ROUNDS, *base_ms), np = noise_pct(tp, SLOWER_ROUNDS, *probe_ms);
    *noise = nb > np ? nb : np;
    return GL_OK;
}

/* Whether m runs more than b->slower % slower than the input model (what, malloc'd). A
 * timing noisier than the threshold is no answer: the search stops with an error. */
static char *slower(probe_run *b, const gl_model *m)
{
    gl_exec_options eo = gl_session_run_options(b->o, b->backend, m, &b->data);
    gl_exec *e = NULL;
    double base_ms = 0, probe_ms = 0, noise = 0, base_min = 0, probe_min = 0;
    gl_status st = gl_exec_create(m, &eo, &e);
    if (st == GL_OK)
        st = time_rounds(b, e, &base_ms, &probe_ms, &noise, &base_min, &probe_min);
    gl_exec_free(e);
    if (st != GL_OK)
        return does_not_run();
    if (noise > b->r->noise_pct)
        b->r->noise_pct = noise;
    if (noise > b->slower) {
        b->r->too_noisy = true;
        return NULL;
    }
    double pct = base_ms > 0 ? 100.0 * (probe_ms - base_ms) / base_ms : 0;
    double pct_min = base_min > 0 ? 100.0 * (probe_min - base_min) / base_min : 0;
    if (pct <= b->slower && pct_min > b->slower) {
        /* Load only adds to a run's time: the fastest runs say slower where the medians do
         * not (seen on a loaded machine: a 20 ms delay under input-model medians that
         * waited for the CPU as long). Neither is the answer. */
        b->r->too_noisy = b->minimums_disagree = true;
        return NULL;
    }
    if (pct <= b->slower)
        return NULL;
    gl_strbuf sb = {0};
    gl_sb_printf(&sb, "%.3f ms against %.3f ms for the input model on %s (%+.0f%%, over "
                 "%g%%; noise %.1f%%; medians of %d interleaved rounds)", probe_ms, base_ms,
                 b->o->backend, pct, b->slower, noise, SLOWER_ROUNDS);
    return gl_sb_take(&sb);
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
    *why = b->judge(b, m);
    b->r->runs++;
    gl_model_free(replayed);
    say(b, "rewrite %lld of %lld (%s %lld/%lld, step %zu): %s", (long long)i,
        (long long)b->r->rewrites, snap->pass->name, (long long)k, (long long)snap->rewrites,
        s, b->r->too_noisy ? "too noisy"
        : b->slower      ? (*why ? "slower" : "not slower")
        : *why           ? "differs"
                         : "same outputs");
    if (b->r->too_noisy && b->minimums_disagree)
        return gl_fail(GL_ERR_INPUT, "bisect --slower %g: the timing noise changed a verdict "
                       "(rewrite %lld: the fastest of %d runs on %s say slower, their medians "
                       "do not): no answer; try a larger PCT or a quieter machine", b->slower,
                       (long long)i, SLOWER_ROUNDS, b->o->backend);
    if (b->r->too_noisy)
        return gl_fail(GL_ERR_INPUT, "bisect --slower %g: the timing noise (%.1f%%, the median "
                       "absolute deviation of %d runs on %s) is above %g%%: no answer; try a "
                       "larger PCT or a quieter machine", b->slower, b->r->noise_pct,
                       SLOWER_ROUNDS, b->o->backend, b->slower);
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

/* A timing verdict can be a burst of load on one probe's rounds: one false "slower" sends
 * the search below the real culprit, and it lands on a rewrite that costs nothing. So
 * the pair the search ends on is timed again, and the answer stands only if rewrite lo is
 * again not slower and hi again slower; otherwise the machine was too noisy to say
 * (the same error as a noisy probe). */
static gl_status confirm_slower(probe_run *b, int64_t lo, int64_t hi)
{
    char *w = NULL;
    gl_status st = probe(b, hi, &w);
    bool hi_again = w != NULL;
    free(w);
    w = NULL;
    if (st == GL_OK && hi_again && lo > 0) {
        st = probe(b, lo, &w);
        hi_again = w == NULL;
        free(w);
    }
    if (st != GL_OK || hi_again)
        return st;
    b->r->too_noisy = true;
    return gl_fail(GL_ERR_INPUT, "bisect --slower %g: the timing noise changed a verdict "
                   "(rewrites %lld and %lld timed again did not repeat their first timing; "
                   "noise up to %.1f%%): no answer; try a larger PCT or a quieter machine",
                   b->slower, (long long)lo, (long long)hi, b->r->noise_pct);
}

/* "No rewrite is slower" rests on one timing of the whole pipeline, which a burst of load
 * on the input model's rounds can hide (seen: a 20 ms delay judged not slower with two
 * busy loops beside it). So it is timed again: a second verdict that differs is the
 * noise's, and no answer. */
static gl_status confirm_not_slower(probe_run *b)
{
    char *w = NULL;
    gl_status st = probe(b, b->r->rewrites, &w);
    bool differs = w != NULL;
    free(w);
    if (st != GL_OK || !differs)
        return st;
    b->r->too_noisy = true;
    return gl_fail(GL_ERR_INPUT, "bisect --slower %g: the timing noise changed a verdict (the "
                   "whole pipeline, %lld rewrites, timed again was slower where it was not; "
                   "noise up to %.1f%%): no answer; try a larger PCT or a quieter machine",
                   b->slower, (long long)b->r->rewrites, b->r->noise_pct);
}

static gl_status search(probe_run *b)
{
    gl_bisect_result *r = b->r;
    char *why = NULL;
    gl_status st = r->rewrites ? probe(b, r->rewrites, &why) : GL_OK;
    if (st == GL_OK && !why && b->slower && r->rewrites)
        return confirm_not_slower(b);
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
    if (b->slower && (st = confirm_slower(b, lo, hi)) != GL_OK) {
        free(why);
        return st;
    }
    r->found = true;
    r->step = locate(b->p, hi, &r->k);
    r->decision = kth_applied(b->p, r->step, r->k);
    r->why = why;
    return GL_OK;
}

/* On another backend than the reference the input model itself may differ: then no
 * rewrite is to blame (r->step 0), and the search's premise, that rewrite 0 is good, does
 * not hold. Whether that is so (*b->r filled). */
static bool before_any_rewrite(probe_run *b)
{
    if (b->slower || strcmp(b->backend, "ref") == 0)
        return false;
    char *why = b->judge(b, b->p->steps[0].model);
    b->r->runs++;
    say(b, "the input model on %s: %s", b->o->backend, why ? "differs" : "same outputs");
    if (!why)
        return false;
    b->r->found = true;
    b->r->why = why;
    return true;
}

/* Steps 1..last_step counted (r->rewrites), checked to have kept their models. */
static gl_status count_rewrites(const gl_pipeline *p, size_t last_step, gl_bisect_result *r,
                                size_t *n_steps)
{
    *r = (gl_bisect_result){.decision = -1};
    if (!p->n_steps || !p->steps[0].model)
        return gl_fail(GL_ERR_INPUT, "bisect: the pipeline did not keep its input model");
    *n_steps = last_step < p->n_steps ? last_step + 1 : p->n_steps;
    for (size_t s = 1; s < *n_steps; s++) {
        if (!p->steps[s].model)
            return gl_fail(GL_ERR_INPUT, "bisect: the pipeline did not keep step %zu", s);
        r->rewrites += p->steps[s].rewrites;
    }
    return GL_OK;
}

/* The search of b (judge set) after its baseline: inputs made, baseline run. */
static gl_status bisect(probe_run *b, size_t last_step)
{
    const gl_pipeline *p = b->p;
    const gl_session_opts *o = b->o;
    gl_bisect_result *r = b->r;
    bool unfused;
    b->backend = gl_session_backend(o->backend ? o->backend : "ref", &unfused);
    size_t n_steps = 0;
    gl_status st = count_rewrites(p, last_step, r, &n_steps);
    if (st != GL_OK)
        return st;
    const gl_model *input = p->steps[0].model;
    if ((st = gl_session_inputs(input, o, &b->data)) != GL_OK)
        return st;
    say(b, "%lld %s in %zu %s; running the input model (%s, %s)", (long long)r->rewrites,
        gl_noun((long long)r->rewrites, "rewrite", "rewrites"), n_steps - 1,
        gl_noun((long long)n_steps - 1, "step", "steps"), o->data ? "inputs from --data" : "random inputs",
        b->slower ? o->backend : "ref");
    if (b->slower) {
        gl_exec_options eo = gl_session_run_options(o, b->backend, input, &b->data);
        st = gl_exec_create(input, &eo, &b->base_exec);
    } else if ((st = run_on(b, input, "ref", &b->base)) == GL_OK) {
        b->n_base = input->graph->n_outputs;
    }
    if (st == GL_OK) {
        r->runs = 1;
        st = before_any_rewrite(b) ? GL_OK : search(b);
    }
    gl_exec_free(b->base_exec);
    free_tensors(b->base, b->n_base);
    gl_dataset_free(&b->data);
    if (st != GL_OK)
        gl_bisect_result_free(r);
    return st;
}

gl_status gl_bisect_pipeline(const gl_pipeline *p, size_t last_step, const gl_session_opts *o,
                             gl_bisect_progress_fn progress, void *ctx, gl_bisect_result *r)
{
    probe_run b = {.p = p, .o = o, .judge = differs, .progress = progress, .ctx = ctx, .r = r};
    return bisect(&b, last_step);
}

gl_status gl_bisect_slower(const gl_pipeline *p, size_t last_step, const gl_session_opts *o,
                           double pct, gl_bisect_progress_fn progress, void *ctx,
                           gl_bisect_result *r)
{
    if (!(pct > 0) || !isfinite(pct))
        return gl_fail(GL_ERR_INPUT, "bisect --slower: %g is not a percentage above 0", pct);
    probe_run b = {.p = p, .o = o, .judge = slower, .slower = pct, .progress = progress,
                   .ctx = ctx, .r = r};
    return bisect(&b, last_step);
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

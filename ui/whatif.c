/* whatif.c — `b` (bisect up to the shown step, ending on the bad rewrite replayed) and
 * `x` (veto an applied decision or force a refused one where its rule allows, or lift
 * either, and run the pipeline again), both on jobs: they run models and whole pipelines. */
#include "ui/ui.h"

#include "driver/bisect.h"
#include "util/plural.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- b: bisect ------------------------------------------------------------------------- */

typedef struct bisect_job {
    const gl_pipeline *p; /* the ui's; a replaced one waits in the graveyard */
    size_t last_step;
    const char *data_dir; /* the workbench's --data (NULL: seeded random); the ui's */
    const char *backend;  /* the run view's: "fused" after a fusion step, else "dnnl" */
    gl_bisect_result r;
    gl_status st;
    char error[512];
} bisect_job;

static void bisect_progress(void *ctx, const char *line) { gl_job_progress(ctx, "%s", line); }

static void bisect_run(void *arg, gl_job *job)
{
    bisect_job *b = arg;
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    o.data = b->data_dir;
    o.backend = b->backend;
    /* The pipeline's --set ($GRAPHLAB_SET): dnnl.fault and dnnl.delay reach the runs. */
    gl_settings_free(&o.settings);
    gl_settings_copy(&o.settings, &b->p->settings);
    b->st = gl_bisect_pipeline(b->p, b->last_step, &o, bisect_progress, job, &b->r);
    if (b->st != GL_OK)
        snprintf(b->error, sizeof(b->error), "%s", gl_error_message());
    gl_session_opts_free(&o);
}

static void bisect_discard(void *arg)
{
    bisect_job *b = arg;
    gl_bisect_result_free(&b->r);
    free(b);
}

static unsigned bisect_finish(gl_ui *ui, void *arg)
{
    bisect_job *b = arg;
    unsigned flags = GL_REDRAW_STATUS;
    if (b->st != GL_OK) {
        gl_ui_set_error(ui, "bisect failed: %s", b->error);
    } else if (b->p != ui->pipeline) {
        gl_ui_set_status(ui, "bisect: the pipeline changed meanwhile (b again)");
    } else if (!b->r.found) {
        gl_ui_set_status(ui, "bisect on %s: no rewrite of steps 1-%zu changes the outputs "
                         "(%lld %s, %zu %s, %s, rtol 1e-3, atol 1e-4)", b->backend,
                         b->last_step, (long long)b->r.rewrites,
                         gl_noun((long long)b->r.rewrites, "rewrite", "rewrites"), b->r.runs,
                         gl_noun((long long)b->r.runs, "run", "runs"),
                         b->data_dir ? "inputs from --data" : "random inputs");
    } else if (b->r.step == 0) {
        gl_ui_set_status(ui, "bisect on %s: the input model already differs, before any "
                         "rewrite: %s", b->backend, b->r.why);
    } else {
        /* Land on the bad rewrite itself: the step replayed to PASS:K, its record
         * selected, what it alone changed in the diff view. */
        const gl_bisect_result *r = &b->r;
        const gl_decision *d = r->decision >= 0 ? &ui->pipeline->log.items[r->decision] : NULL;
        const gl_snapshot *s = &ui->pipeline->steps[r->step];
        char status[256];
        if (d)
            snprintf(status, sizeof(status), "bisect on %s: #%lld %s %s (rewrite %lld of "
                     "%lld) changes the outputs: %s", b->backend, (long long)d->id, d->pass,
                     d->rule, (long long)r->k, (long long)s->rewrites, r->why);
        else
            snprintf(status, sizeof(status), "bisect on %s: rewrite %lld of %lld of %s "
                     "changes the outputs: %s", b->backend, (long long)r->k,
                     (long long)s->rewrites, s->pass->name, r->why);
        flags = gl_ui_land_on_rewrite(ui, r->step, r->k, d ? d->id : -1, status) |
                GL_REDRAW_ALL;
    }
    bisect_discard(b);
    return flags;
}

static const gl_job_spec bisect_spec = {
    .what = "bisect", .run = bisect_run, .finish = bisect_finish, .discard = bisect_discard};

unsigned gl_ui_bisect(gl_ui *ui)
{
    if (!ui->pipeline)
        return GL_REDRAW_NONE;
    if (ui->step == 0) {
        gl_ui_set_status(ui, "step 0 is the model as loaded: bisect looks at the rewrites up "
                         "to the shown step (] first)");
        return GL_REDRAW_STATUS;
    }
    bisect_job *b = gl_xcalloc(1, sizeof(*b));
    b->p = ui->pipeline;
    b->last_step = ui->step;
    b->data_dir = ui->data_dir;
    /* As the run view runs (ui/run.c): oneDNN, named fused once a fusion step ran. */
    b->backend = "dnnl";
    for (size_t k = 1; k <= ui->step && k < ui->pipeline->n_steps; k++)
        if (strcmp(ui->pipeline->steps[k].pass->name, "fusion") == 0)
            b->backend = "fused";
    b->r.decision = -1;
    if (!gl_ui_start_job(ui, &bisect_spec, b))
        free(b);
    return GL_REDRAW_STATUS;
}

/* ---- x: what-if ------------------------------------------------------------------------ */

typedef struct veto_job {
    const gl_pipeline *old;
    gl_pass_step *plan;
    size_t n_plan;
    gl_settings settings;
    int64_t id;
    const char *option; /* "veto" or "force" */
    bool lift;
    size_t step;
    gl_pipeline *p;
    gl_diff **diffs;
    gl_status st;
    char error[512];
} veto_job;

/* What the re-run does to the decision, in a word or three. */
static const char *what_now(const veto_job *v)
{
    bool veto = strcmp(v->option, "veto") == 0;
    return v->lift ? (veto ? "allowed again" : "left to its rule again")
                   : (veto ? "vetoed" : "forced");
}

static void veto_run(void *arg, gl_job *job)
{
    veto_job *v = arg;
    gl_job_progress(job, "running %zu %s with #%lld %s", v->n_plan,
                    gl_noun((long long)v->n_plan, "pass", "passes"), (long long)v->id,
                    what_now(v));
    v->st = gl_pipeline_run(gl_model_clone(v->old->steps[0].model), v->plan, v->n_plan,
                            &v->settings, GL_PIPELINE_KEEP_SNAPSHOTS, &v->p);
    if (v->st != GL_OK) {
        snprintf(v->error, sizeof(v->error), "%s", gl_error_message());
        return;
    }
    v->diffs = gl_ui_job_step_diffs(v->p, job);
}

static void veto_discard(void *arg)
{
    veto_job *v = arg;
    gl_ui_free_step_diffs(v->p, v->diffs);
    gl_settings_free(&v->settings);
    free(v->plan);
    free(v);
}

static size_t last_nodes(const gl_pipeline *p) { return p->steps[p->n_steps - 1].nodes; }

static unsigned veto_finish(gl_ui *ui, void *arg)
{
    veto_job *v = arg;
    if (v->st != GL_OK) {
        gl_ui_set_error(ui, "what-if failed (the pipeline shown is unchanged): %s", v->error);
        veto_discard(v);
        return GL_REDRAW_STATUS;
    }
    if (v->old != ui->pipeline) {
        gl_ui_set_status(ui, "what-if: the pipeline changed meanwhile (x again)");
        veto_discard(v);
        return GL_REDRAW_STATUS;
    }
    size_t was_step = v->old->steps[v->step].nodes, was_last = last_nodes(v->old);
    gl_pipeline *p = v->p;
    gl_diff **diffs = v->diffs;
    v->p = NULL;
    v->diffs = NULL;
    gl_ui_replace_pipeline(ui, p, diffs, v->step);
    gl_ui_decisions_select(ui, v->id);
    size_t now_step = p->steps[v->step].nodes;
    gl_ui_set_status(ui, "what-if: #%lld %s; after step %zu %zu %s (were %zu), after the "
                     "last %zu (were %zu)%s%s", (long long)v->id, what_now(v), v->step,
                     now_step, gl_noun((long long)now_step, "node", "nodes"), was_step,
                     last_nodes(p), was_last,
                     v->lift ? "" : "; x on it again lifts the ", v->lift ? "" : v->option);
    veto_discard(v);
    return GL_REDRAW_ALL;
}

static const gl_job_spec veto_spec = {
    .what = "what-if", .run = veto_run, .finish = veto_finish, .discard = veto_discard};

/* p's settings hold PASS.option=d's id (d's pass): x on d lifts that setting. */
static bool setting_names(const gl_pipeline *p, const gl_decision *d, const char *option)
{
    for (size_t i = 0; i < p->settings.n; i++) {
        const gl_setting *s = &p->settings.items[i];
        if (!strcmp(s->option, option) && s->value == d->id && !strcmp(s->pass, d->pass))
            return true;
    }
    return false;
}

/* The ui pipeline's settings with PASS.option=d's id added (or, lifting, removed). */
static gl_status settings_with(const gl_pipeline *p, const gl_decision *d, const char *option,
                               bool lift, gl_settings *out)
{
    *out = (gl_settings){0};
    gl_status st = GL_OK;
    for (size_t i = 0; i < p->settings.n && st == GL_OK; i++) {
        const gl_setting *s = &p->settings.items[i];
        bool names_d = !strcmp(s->option, option) && s->value == d->id &&
                       !strcmp(s->pass, d->pass);
        if (lift && names_d)
            continue;
        char text[1024];
        gl_setting_format(s, text, sizeof(text));
        st = gl_settings_apply(out, text);
    }
    if (st == GL_OK && !lift) {
        char text[256];
        snprintf(text, sizeof(text), "%s.%s=%lld", d->pass, option, (long long)d->id);
        st = gl_settings_apply(out, text);
    }
    if (st != GL_OK)
        gl_settings_free(out);
    return st;
}

unsigned gl_ui_veto(gl_ui *ui, const gl_decision *d)
{
    if (!ui->pipeline || !d)
        return GL_REDRAW_NONE;
    bool lift_veto = d->verdict == GL_REFUSED && setting_names(ui->pipeline, d, "veto");
    bool lift_force = d->verdict == GL_APPLIED && setting_names(ui->pipeline, d, "force");
    bool forceable = d->verdict == GL_REFUSED && gl_decision_number_value(d, "forceable") == 1;
    if (d->verdict == GL_NOTE) {
        gl_ui_set_status(ui, "#%lld is a note: it changes nothing to veto", (long long)d->id);
        return GL_REDRAW_STATUS;
    }
    if (d->vetoed && !lift_veto) {
        gl_ui_set_status(ui, "#%lld repeats a vetoed rewrite: x on the first one lifts the "
                         "veto", (long long)d->id);
        return GL_REDRAW_STATUS;
    }
    if (d->verdict == GL_REFUSED && !lift_veto && !forceable) {
        gl_ui_set_status(ui, "#%lld was refused by a check of correctness (%s): it cannot be "
                         "forced; x forces refusals by a cost or a guard", (long long)d->id,
                         d->rule);
        return GL_REDRAW_STATUS;
    }
    bool lift = lift_veto || lift_force;
    bool veto = lift_veto || (d->verdict == GL_APPLIED && !lift_force);
    const char *option = veto ? "veto" : "force";
    const gl_pipeline *p = ui->pipeline;
    veto_job *v = gl_xcalloc(1, sizeof(*v));
    *v = (veto_job){.old = p, .id = d->id, .option = option, .lift = lift,
                    .step = (size_t)d->step};
    if (settings_with(p, d, option, lift, &v->settings) != GL_OK) {
        gl_ui_set_error(ui, "what-if: %s", gl_error_message());
        free(v);
        return GL_REDRAW_STATUS;
    }
    v->n_plan = p->n_steps - 1;
    v->plan = gl_xcalloc(v->n_plan ? v->n_plan : 1, sizeof(*v->plan));
    for (size_t k = 1; k < p->n_steps; k++)
        v->plan[k - 1] =
            (gl_pass_step){.pass = p->steps[k].pass, .budget = p->steps[k].budget};
    if (!gl_ui_start_job(ui, &veto_spec, v)) {
        gl_settings_free(&v->settings);
        free(v->plan);
        free(v);
    }
    return GL_REDRAW_ALL;
}

/* pipeline.c — --set parsing, running a plan while keeping a snapshot per step, and
 * running one pass (the pass table is pass_table.c, the pass context pass_ctx.c). */
#include "passes/pipeline.h"
#include "util/clock.h"
#include "util/plural.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- --set --------------------------------------------------------------------------- */

/* Options that belong to no pass: the loader's, and the oneDNN backend's, which reach it
 * through the executor's options (gl_session_exec_options). */
static const gl_pass_option load_options[] = {
    {"freeze-inputs", 0, "treat graph inputs that have initializers as constants", false},
};
static const gl_pass_option dnnl_options[] = {
    {"winograd", 1, "1: 3x3 stride-1 convolutions with 32 or more channels on blocked "
     "activations use oneDNN's Winograd kernels (about 2x faster, results within ~1e-5 "
     "relative of the direct ones); 0: direct convolutions only", false},
    {"fault", -1, "for tests of bisect, on the oneDNN backend only, add 1.0 to "
     "every element of the first output of the node or fused group NAME after it runs",
     true},
    {"delay", -1, "for tests of bisect --slower, on the oneDNN backend only, sleep "
     "20 ms after the node or fused group NAME runs", true},
};
static const gl_settings_group groups[] = {
    {"load", "loading", load_options, GL_ARRAY_LEN(load_options)},
    {"dnnl", "the oneDNN backend", dnnl_options, GL_ARRAY_LEN(dnnl_options)},
};

/* Options of every pass: the pipeline, not the pass, acts on them. */
static const gl_pass_option common_options[] = {
    {"veto", -1, "ID[,ID...]: skip the rewrites with these decision ids (recorded as "
     "refused, reason \"vetoed\"); repeatable", false},
    {"force", -1, "ID[,ID...]: make the refused rewrites with these decision ids where "
     "their rule allows it (a cost or a guard, never a correctness check; recorded as "
     "applied, reason \"forced\"); repeatable", false},
    {"fault", 0, "K: for tests of bisect, corrupt what the pass's K-th rewrite made "
     "(0.5 added to its output); 0: off", false},
};

const gl_settings_group *gl_settings_groups(size_t *count)
{
    *count = GL_ARRAY_LEN(groups);
    return groups;
}

const gl_pass_option *gl_settings_common_options(size_t *count)
{
    *count = GL_ARRAY_LEN(common_options);
    return common_options;
}

static const gl_settings_group *find_group(const char *name)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(groups); i++)
        if (strcmp(groups[i].name, name) == 0)
            return &groups[i];
    return NULL;
}

static const gl_pass_option *find_in(const gl_pass_option *opts, size_t n, const char *option)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(opts[i].name, option) == 0)
            return &opts[i];
    return NULL;
}

static const gl_pass_option *find_option(const char *pass, const char *option)
{
    const gl_settings_group *g = find_group(pass);
    if (g)
        return find_in(g->options, g->n_options, option);
    const gl_pass *p = gl_pass_find(pass);
    if (!p)
        return NULL;
    const gl_pass_option *o = find_in(p->options, p->n_options, option);
    return o ? o : find_in(common_options, GL_ARRAY_LEN(common_options), option);
}

/* "max-bytes, veto, fault": what --set PASS. (or a group of no pass) takes. */
static void option_names(const char *pass, char *buf, size_t len)
{
    const gl_pass *p = gl_pass_find(pass);
    const gl_settings_group *g = p ? NULL : find_group(pass);
    const gl_pass_option *lists[2] = {p ? p->options : g->options, p ? common_options : NULL};
    size_t counts[2] = {p ? p->n_options : g->n_options, p ? GL_ARRAY_LEN(common_options) : 0};
    size_t at = 0;
    buf[0] = '\0';
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < counts[l] && at < len; i++)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
                                   lists[l][i].name);
}

/* "toposort, ..., memory-plan; of no pass: load, dnnl": what --set takes before the dot. */
static void key_names(char *buf, size_t len)
{
    gl_pass_names(buf, len);
    size_t at = strlen(buf);
    for (size_t i = 0; i < GL_ARRAY_LEN(groups) && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "; of no pass: ",
                               groups[i].name);
}

/* Takes pass, option and text (malloc'd, text may be NULL). */
static void settings_add(gl_settings *s, char *pass, char *option, int64_t v, char *text)
{
    GL_GROW(s->items, s->cap, s->n + 1);
    s->items[s->n++] = (gl_setting){pass, option, v, text};
}

static void setting_clear(gl_setting *s)
{
    free(s->pass);
    free(s->option);
    free(s->text);
}

/* PASS.veto=ID[,ID...] and PASS.force=ID[,ID...]: one setting per id
 * (gl_settings_lookup's last-wins does not apply: every one counts). */
static gl_status apply_id_list(gl_settings *s, const char *pass, const char *option,
                               const char *list)
{
    size_t first = s->n;
    const char *p = list;
    for (;;) {
        char *end;
        errno = 0;
        long long id = strtoll(p, &end, 10);
        if (errno || end == p || id < 0 || (*end && *end != ',')) {
            for (size_t i = first; i < s->n; i++)
                setting_clear(&s->items[i]);
            s->n = first;
            return gl_fail(GL_ERR_INPUT, "--set %s.%s: '%s' is not a list of decision "
                           "ids (ID[,ID...], each >= 0)", pass, option, list);
        }
        settings_add(s, gl_xstrdup(pass), gl_xstrdup(option), id, NULL);
        if (!*end)
            return GL_OK;
        p = end + 1;
    }
}

/* The value of a text or number option; takes pass and option on success. */
static gl_status apply_value(gl_settings *s, const gl_pass_option *o, char *pass, char *option,
                             const char *value)
{
    if (o->text) {
        /* A node name: anything but empty (names are escaped where they are shown). */
        if (!*value)
            return gl_fail(GL_ERR_INPUT, "--set %s.%s: expected a NAME, got nothing", pass,
                           option);
        settings_add(s, pass, option, 0, gl_xstrdup(value));
        return GL_OK;
    }
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 0);
    if (errno || end == value || *end)
        return gl_fail(GL_ERR_INPUT, "--set %s.%s: '%s' is not a whole number", pass, option,
                       value);
    settings_add(s, pass, option, v, NULL);
    return GL_OK;
}

gl_status gl_settings_apply(gl_settings *s, const char *assignment)
{
    const char *dot = strchr(assignment, '.');
    const char *eq = strchr(assignment, '=');
    if (!dot || !eq || dot > eq || dot == assignment || eq == dot + 1)
        return gl_fail(GL_ERR_INPUT, "--set '%s': expected PASS.OPTION=VALUE", assignment);
    char *pass = gl_xstrndup(assignment, (size_t)(dot - assignment));
    char *option = gl_xstrndup(dot + 1, (size_t)(eq - dot - 1));
    const gl_pass_option *o = find_option(pass, option);
    gl_status st = GL_OK;
    if (!o) {
        char valid[512];
        bool known = find_group(pass) || gl_pass_find(pass);
        if (known)
            option_names(pass, valid, sizeof(valid));
        else
            key_names(valid, sizeof(valid));
        const char *what = find_group(pass) ? "" : known ? "pass " : "any pass; no pass ";
        st = gl_fail(GL_ERR_INPUT, "--set: '%s.%s' is not an option of %s'%s' (%s: %s)", pass,
                     option, what, pass, known ? "its options" : "the keys", valid);
    } else if (strcmp(option, "veto") == 0 || strcmp(option, "force") == 0) {
        st = apply_id_list(s, pass, option, eq + 1);
    } else if ((st = apply_value(s, o, pass, option, eq + 1)) == GL_OK) {
        return GL_OK; /* pass and option are the setting's now */
    }
    free(pass);
    free(option);
    return st;
}

/* The last assignment of pass.option, as on a command line; NULL when none. */
static const gl_setting *settings_last(const gl_settings *s, const char *pass,
                                       const char *option)
{
    for (size_t i = s ? s->n : 0; i-- > 0;)
        if (!strcmp(s->items[i].pass, pass) && !strcmp(s->items[i].option, option))
            return &s->items[i];
    return NULL;
}

int64_t gl_settings_lookup(const gl_settings *s, const char *pass, const char *option,
                           int64_t dflt)
{
    const gl_setting *it = settings_last(s, pass, option);
    return it ? it->value : dflt;
}

const char *gl_settings_lookup_text(const gl_settings *s, const char *pass, const char *option)
{
    const gl_setting *it = settings_last(s, pass, option);
    return it ? it->text : NULL;
}

void gl_setting_format(const gl_setting *s, char *buf, size_t len)
{
    if (s->text)
        snprintf(buf, len, "%s.%s=%s", s->pass, s->option, s->text);
    else
        snprintf(buf, len, "%s.%s=%lld", s->pass, s->option, (long long)s->value);
}

void gl_settings_copy(gl_settings *dst, const gl_settings *src)
{
    memset(dst, 0, sizeof(*dst));
    for (size_t i = 0; src && i < src->n; i++) {
        const gl_setting *it = &src->items[i];
        settings_add(dst, gl_xstrdup(it->pass), gl_xstrdup(it->option), it->value,
                     it->text ? gl_xstrdup(it->text) : NULL);
    }
}

void gl_settings_free(gl_settings *s)
{
    for (size_t i = 0; i < s->n; i++)
        setting_clear(&s->items[i]);
    free(s->items);
    memset(s, 0, sizeof(*s));
}

int64_t gl_pass_option_value(const gl_pass_ctx *ctx, const char *name)
{
    const char *pass = ctx->pass ? ctx->pass->name : "";
    const gl_pass_option *opt = find_option(pass, name);
    return gl_settings_lookup(ctx->settings, pass, name, opt ? opt->dflt : 0);
}

/* ---- running a plan ------------------------------------------------------------------- */

/* A vetoed record of this step the pass applied anyway: the first vetoed one, since a
 * pass asks about all or none of a rule's. */
static gl_status unheeded_veto(const gl_decision_log *log, size_t first, const char *pass)
{
    for (size_t i = first; i < log->n; i++) {
        const gl_decision *d = &log->items[i];
        if (d->vetoed)
            return gl_fail(GL_ERR_INPUT, "--set %s.veto: #%lld (%s '%s') cannot be vetoed: "
                           "the pass applies that rule without asking (not supported yet)",
                           pass, (long long)d->id, pass, d->rule);
    }
    return gl_fail(GL_ERR_INTERNAL, "%s: a veto went unheeded", pass);
}

/* The node a fault corrupts: one the K-th applied rewrite of this step made (its
 * provenance names the decision), else the producer of the first graph output; NULL
 * when neither has a numeric first output. */
static gl_node *fault_target(gl_graph *g, const gl_decision_log *log, size_t first,
                             int64_t k)
{
    int64_t id = -1;
    for (size_t i = first; i < log->n && id < 0; i++)
        if (log->items[i].verdict == GL_APPLIED && --k == 0)
            id = log->items[i].id;
    gl_node *n, *found = NULL;
    gl_foreach_node(g, i, n) {
        if (id >= 0 && n->prov.decision == id && !found)
            found = n;
    }
    if (!found && g->n_outputs && g->outputs[0]->producer)
        found = g->outputs[0]->producer;
    if (!found || !found->n_outputs || !found->outputs[0])
        return NULL;
    return found->outputs[0]->type.dtype == GL_DT_FLOAT ? found : NULL;
}

/* --set PASS.fault=K, for bisect's tests: once a step of the pass has applied K rewrites,
 * 0.5 is added to the first output of what the K-th made (an Add after it), so exactly
 * the models with that rewrite compute something else. (Not a Neg: two steps of one pass
 * would cancel each other's.) */
static gl_status inject_fault(gl_model *m, const gl_decision_log *log, size_t first, int64_t k)
{
    gl_graph *g = m->graph;
    gl_node *n = fault_target(g, log, first, k);
    if (!n)
        return gl_fail(GL_ERR_INPUT, "fault=%lld: no float node to corrupt", (long long)k);
    gl_tensor *half = gl_tensor_new(GL_DT_FLOAT, 0, NULL);
    if (!half)
        return GL_ERR_INTERNAL;
    *(float *)gl_tensor_make_writable(half) = 0.5f;
    char *name = gl_unique_node_name(g, "fault");
    gl_value *ins[2] = {n->outputs[0], gl_add_initializer(g, "fault_half", half)};
    gl_node *add = gl_add_node(g, "Add", "", name, ins, 2, 1);
    free(name);
    if (!add)
        return GL_ERR_INTERNAL;
    gl_node_set_provenance(add, n->prov.origins, n->prov.n_origins, n->prov.decision);
    /* The value (its readers, its graph-output place) moves below the Add; n gets a fresh
     * value of the same type, which the Add then reads. */
    gl_status st = gl_move_output(g, n, 0, add, 0);
    if (st == GL_OK)
        st = gl_set_input(g, add, 0, n->outputs[0]);
    if (st == GL_OK)
        st = gl_toposort(g, NULL);
    return st;
}

/* ---- running a pass --------------------------------------------------------------- */

/* g and every body gl_pass_on_bodies hands a pass are in topological order; else the
 * failure names the first graph that is not. */
static gl_status sorted_with_bodies(gl_graph *g, gl_pass_ctx *ctx)
{
    if (!gl_graph_is_sorted(g))
        return gl_fail(GL_ERR_INPUT, "%s: graph '%s' is not in topological order (run "
                       "toposort first)", ctx->pass->name, g->name ? g->name : "");
    return gl_pass_on_bodies(g, ctx, sorted_with_bodies);
}

/* The order check is skipped when the caller knows (ctx->sorted): the pipeline mostly
 * does, and the check walked a 100k-node graph before each of 14 steps (issue 23). */
gl_status gl_pass_run(gl_graph *g, gl_pass_ctx *ctx)
{
    gl_status st = GL_OK;
    if ((ctx->pass->needs & GL_PASS_NEEDS_SORTED) && !ctx->sorted) {
        st = sorted_with_bodies(g, ctx);
        ctx->sorted = st == GL_OK;
    }
    return st == GL_OK ? ctx->pass->run(g, ctx) : st;
}

/* A pass that needs types, run before any shape-inference step on a graph where some
 * value has no dtype: one note says so, since every refusal it causes would otherwise
 * look like a property of the model. */
static void note_untyped(gl_pass_ctx *ctx, const gl_graph *g)
{
    size_t untyped = 0, values = 0;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        for (size_t k = 0; k < n->n_outputs; k++) {
            values += n->outputs[k] != NULL;
            untyped += n->outputs[k] && n->outputs[k]->type.dtype == GL_DT_UNDEFINED;
        }
    }
    if (untyped == 0)
        return;
    gl_decision *d = gl_pass_decide(ctx, "needs-types", GL_NOTE, "shape-inference has not run "
                                    "before this step and %zu of %zu node outputs have no "
                                    "dtype: rewrites that need one are refused (put "
                                    "shape-inference earlier in --passes)", untyped, values);
    gl_decision_add_number(d, "untyped", (double)untyped);
}

/* Run one pass on m (whose graph is prev's: its fingerprint and known order), recording
 * into `log`. A graph the pass touched is verified afterwards (a pass that breaks an
 * invariant is a bug, named as such); one it left as it was, with no rewrite counted (or
 * only plans, gl_pass.plans_many), is not: it was verified when it was made, and on a
 * 100k-node graph the check costs as much as a pass (issue 23). */
static gl_status run_pass(gl_model *m, const gl_snapshot *prev, const gl_pass_step *step,
                          int step_no, bool inferred_before, gl_decision_log *log,
                          const gl_settings *settings, gl_snapshot *snap)
{
    uint64_t before = prev->fingerprint;
    gl_pass_ctx ctx = {.model = m, .pass = step->pass, .step = step_no,
                       .budget = step->budget, .log = log, .settings = settings,
                       .fingerprint = before, .sorted = prev->sorted};
    size_t first = log->n;
    double t0 = gl_now_ms();
    if ((step->pass->needs & GL_PASS_NEEDS_TYPES) && !inferred_before)
        note_untyped(&ctx, m->graph);
    gl_status st = gl_pass_run(m->graph, &ctx);
    double t1 = gl_now_ms();
    gl_decision_clear(&ctx.scratch);
    for (size_t i = 0; i < ctx.n_vetoed; i++)
        free(ctx.vetoed[i]);
    free(ctx.vetoed);
    if (st == GL_OK && ctx.unheeded)
        st = unheeded_veto(log, first, step->pass->name);
    int64_t fault = gl_settings_lookup(settings, step->pass->name, "fault", 0);
    if (st == GL_OK && fault > 0 && ctx.applied >= fault)
        st = inject_fault(m, log, first, fault);
    snap->fingerprint = gl_graph_fingerprint(m->graph);
    snap->changed = snap->fingerprint != before;
    if (st == GL_OK && ctx.typed)
        m->types_fingerprint = snap->fingerprint;
    bool touched = snap->changed || (ctx.applied > 0 && !step->pass->plans_many);
    if (st == GL_OK && touched && gl_graph_verify(m->graph, false) != GL_OK) {
        gl_error_prefix("pass '%s' left the graph broken (a bug)", step->pass->name);
        st = GL_ERR_INTERNAL;
    }
    /* Verified (order included), or the graph as the step began. */
    snap->sorted = touched || ctx.sorted;
    snap->pass = step->pass;
    snap->budget = step->budget;
    snap->rewrites = ctx.applied;
    snap->ms = t1 - t0;
    snap->first_decision = first;
    snap->n_decisions = log->n - first;
    snap->nodes = m->graph->live_nodes;
    return st;
}

/* A shape-inference step comes before step i of the plan. */
static bool inferred_before(const gl_pass_step *plan, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(plan[j].pass->name, "shape-inference") == 0)
            return true;
    return false;
}

gl_status gl_pipeline_run(gl_model *input, const gl_pass_step *plan, size_t n_plan,
                          const gl_settings *settings, unsigned flags, gl_pipeline **out)
{
    return gl_pipeline_run_each(input, plan, n_plan, settings, flags, NULL, NULL, out);
}


/* A forced id named a refusal of that pass its rule lets be forced (now recorded as
 * applied, "forced"); anything else is a mistake to report. */
static gl_status check_force(const gl_pipeline *p, const char *pass, int64_t id)
{
    const gl_decision *d = id < (int64_t)p->log.n ? &p->log.items[id] : NULL;
    if (!d)
        return gl_fail(GL_ERR_INPUT, "--set %s.force=%lld: there is no decision #%lld (the "
                       "run recorded %zu)", pass, (long long)id, (long long)id, p->log.n);
    if (strcmp(d->pass, pass) == 0 && d->vetoed)
        return gl_fail(GL_ERR_INPUT, "--set %s.force=%lld: decision #%lld is vetoed too (--set "
                       "%s.veto=%lld): a rewrite is forced or vetoed, not both", pass,
                       (long long)id, (long long)id, pass, (long long)id);
    if (strcmp(d->pass, pass) != 0 || !d->forced)
        return gl_fail(GL_ERR_INPUT, "--set %s.force=%lld: decision #%lld is %s '%s' (%s), "
                       "not a refusal of %s that its rule lets be forced (only a cost or a "
                       "guard can be overridden, never a correctness check)", pass,
                       (long long)id, (long long)id, d->pass, d->rule,
                       gl_verdict_name(d->verdict), pass);
    return GL_OK;
}
/* Every vetoed id named a rewrite of its pass: a veto that met nothing (an id of
 * another pass, a refusal, a note, past the end) is a mistake to report, not to ignore. */
static gl_status check_vetoes(const gl_pipeline *p)
{
    const gl_settings *s = &p->settings;
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->items[i].option, "force") == 0) {
            gl_status st = check_force(p, s->items[i].pass, s->items[i].value);
            if (st != GL_OK)
                return st;
            continue;
        }
        if (strcmp(s->items[i].option, "veto") != 0)
            continue;
        const char *pass = s->items[i].pass;
        int64_t id = s->items[i].value;
        const gl_decision *d = id < (int64_t)p->log.n ? &p->log.items[id] : NULL;
        if (!d)
            return gl_fail(GL_ERR_INPUT, "--set %s.veto=%lld: there is no decision #%lld "
                           "(the run recorded %zu)", pass, (long long)id, (long long)id,
                           p->log.n);
        if (strcmp(d->pass, pass) != 0 || !d->vetoed)
            return gl_fail(GL_ERR_INPUT, "--set %s.veto=%lld: decision #%lld is %s '%s' "
                           "(%s), not a rewrite of %s that can be vetoed", pass,
                           (long long)id, (long long)id, d->pass, d->rule,
                           gl_verdict_name(d->verdict), pass);
    }
    return GL_OK;
}

/* A kept step whose pass changed nothing drops its copy and shares the previous step's
 * model: the workbench keeps every step, and most steps of a big graph change nothing
 * (issue 23). A planning pass (memory-plan) is never shared: its plan lives in the model
 * and the fingerprint does not see it. */
static void share_if_unchanged(gl_snapshot *prev, gl_snapshot *snap)
{
    if (snap->changed || snap->rewrites > 0 || snap->pass->plans_many || !prev->model)
        return;
    gl_model_free(snap->model);
    snap->model = prev->model;
    snap->shares_model = true;
}

gl_status gl_pipeline_run_each(gl_model *input, const gl_pass_step *plan, size_t n_plan,
                               const gl_settings *settings, unsigned flags, gl_step_fn on_step,
                               void *ctx, gl_pipeline **out)
{
    gl_pipeline *p = gl_xcalloc(1, sizeof(*p));
    *out = p;
    gl_settings_copy(&p->settings, settings);
    p->log.count_only = (flags & GL_PIPELINE_COUNT_DECISIONS) && p->settings.n == 0;
    p->steps = gl_xcalloc(n_plan + 1, sizeof(gl_snapshot));
    p->steps[0] = (gl_snapshot){.model = input,
                                .fingerprint = gl_graph_fingerprint(input->graph),
                                .nodes = input->graph->live_nodes,
                                .budget = GL_BUDGET_UNLIMITED};
    p->n_steps = 1;
    bool keep = flags & GL_PIPELINE_KEEP_SNAPSHOTS;
    gl_status st = on_step ? on_step(ctx, p, 0) : GL_OK;
    int64_t left = -1; /* all:K: what the steps so far left of K */
    for (size_t i = 0; st == GL_OK && i < n_plan; i++) {
        gl_pass_step step = plan[i];
        if (step.shared) {
            if (left < 0)
                left = step.budget;
            if (left == 0)
                break; /* the K-th rewrite is made: the steps after it do not run */
            step.budget = left;
        }
        gl_snapshot *prev = &p->steps[i], *snap = &p->steps[i + 1];
        /* Without snapshots the model moves from step to step instead of being copied. */
        gl_model *m = keep ? gl_model_clone(prev->model) : prev->model;
        if (!keep)
            prev->model = NULL;
        st = run_pass(m, prev, &step, (int)i + 1, inferred_before(plan, i), &p->log,
                      &p->settings, snap);
        if (step.shared) {
            left -= snap->rewrites;
            /* A step the shared budget did not stop ran whole: replayed so, and labelled
             * without a budget. */
            if (left > 0)
                snap->budget = GL_BUDGET_UNLIMITED;
        }
        if (st != GL_OK) {
            p->failure = gl_xstrdup(gl_error_message());
            memset(snap, 0, sizeof(*snap));
            if (keep)
                gl_model_free(m);
            else
                prev->model = m; /* whatever the pass left: the last model stays */
            return st;
        }
        snap->model = m;
        if (keep)
            share_if_unchanged(prev, snap);
        p->n_steps++;
        if (on_step)
            st = on_step(ctx, p, i + 1);
    }
    if (st == GL_OK && (st = check_vetoes(p)) != GL_OK)
        p->failure = gl_xstrdup(gl_error_message());
    return st;
}

/* Step k lets go of its model. An owner hands it to the first later step holding it
 * (steps between may have been dropped already), else frees it. While the owner's
 * model is alive no other live model has its address, so equal pointers are sharers. */
static void release_model(gl_pipeline *p, size_t k)
{
    gl_snapshot *s = &p->steps[k];
    if (!s->shares_model && s->model) {
        size_t j = k + 1;
        while (j < p->n_steps && p->steps[j].model != s->model)
            j++;
        if (j < p->n_steps)
            p->steps[j].shares_model = false;
        else
            gl_model_free(s->model);
    }
    s->model = NULL;
    s->shares_model = false;
}

void gl_pipeline_drop(gl_pipeline *p, size_t k)
{
    if (k + 1 < p->n_steps)
        release_model(p, k);
}

gl_model *gl_pipeline_result(const gl_pipeline *p)
{
    for (size_t k = p->n_steps; k-- > 0;)
        if (p->steps[k].model)
            return p->steps[k].model;
    return NULL;
}

void gl_pipeline_free(gl_pipeline *p)
{
    if (!p)
        return;
    for (size_t k = 0; k < p->n_steps; k++)
        if (!p->steps[k].shares_model)
            gl_model_free(p->steps[k].model);
    free(p->steps);
    gl_decision_log_free(&p->log);
    gl_settings_free(&p->settings);
    free(p->failure);
    free(p);
}

void gl_pipeline_drop_decisions(gl_pipeline *p)
{
    if (!p)
        return;
    int64_t next_id = p->log.id_base + (int64_t)p->log.n;
    gl_decision_log_free(&p->log);
    p->log.id_base = next_id;
}

gl_status gl_pipeline_replay(const gl_pipeline *p, size_t k, int64_t budget,
                             gl_model **out, gl_decision_log *log)
{
    *out = NULL;
    if (k == 0 || k >= p->n_steps || !p->steps[k - 1].model)
        return gl_fail(GL_ERR_INPUT, "replay: step %zu has no kept predecessor", k);
    const gl_snapshot *snap = &p->steps[k];
    gl_model *m = gl_model_clone(p->steps[k - 1].model);
    gl_pass_step step = {.pass = snap->pass,
                         .budget = budget < snap->budget ? budget : snap->budget};
    gl_decision_log_free(log);
    log->id_base = (int64_t)snap->first_decision;
    gl_snapshot scratch;
    bool inferred = false;
    for (size_t j = 1; j < k; j++)
        inferred |= strcmp(p->steps[j].pass->name, "shape-inference") == 0;
    gl_status st = run_pass(m, &p->steps[k - 1], &step, (int)k, inferred, log, &p->settings,
                            &scratch);
    if (st != GL_OK) {
        gl_model_free(m);
        return st;
    }
    *out = m;
    return GL_OK;
}

void gl_snapshot_label(const gl_pipeline *p, size_t k, char *buf, size_t len)
{
    const gl_snapshot *s = &p->steps[k];
    if (k == 0 || !s->pass)
        snprintf(buf, len, "%02zu-input", k);
    else if (s->budget != GL_BUDGET_UNLIMITED)
        snprintf(buf, len, "%02zu-%s-K%lld", k, s->pass->name, (long long)s->budget);
    else
        snprintf(buf, len, "%02zu-%s", k, s->pass->name);
}

void gl_snapshot_change_text(const gl_pipeline *p, size_t k, char *buf, size_t len)
{
    const gl_snapshot *s = &p->steps[k];
    long long n = (long long)s->rewrites;
    if (k == 0 || !s->pass)
        snprintf(buf, len, "the model as loaded");
    else if (s->changed)
        snprintf(buf, len, "%lld %s", n, gl_noun(n, "rewrite", "rewrites"));
    else if (n == 0)
        snprintf(buf, len, "unchanged");
    else if (s->pass->plans_many) /* it annotates: its decisions are plans, not edits */
        snprintf(buf, len, "graph unchanged; %lld %s", n,
                 gl_noun(n, s->pass->plans_one, s->pass->plans_many));
    else /* rewrites that undo one another */
        snprintf(buf, len, "graph unchanged after %lld %s", n, gl_noun(n, "rewrite", "rewrites"));
}

size_t gl_pipeline_trace(const gl_pipeline *p, size_t k, uint32_t origin, uint32_t **ids)
{
    *ids = NULL;
    const gl_model *m = k < p->n_steps ? p->steps[k].model : NULL;
    if (!m)
        return 0;
    size_t n = 0, cap = 0;
    gl_node *node;
    gl_foreach_node(m->graph, i, node) {
        for (size_t o = 0; o < node->prov.n_origins; o++) {
            if (node->prov.origins[o] == origin) {
                GL_GROW(*ids, cap, n + 1);
                (*ids)[n++] = node->id;
                break;
            }
        }
    }
    return n;
}

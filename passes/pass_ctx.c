/* pass_ctx.c — the calls a pass makes on its context: decisions, budget, vetoes,
 * forcing, bodies (pass_ctx.h). */
#include "passes/pass_ctx.h"

#include "passes/pipeline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pass context ------------------------------------------------------------------ */

bool gl_pass_may_rewrite(const gl_pass_ctx *ctx) { return ctx->applied < ctx->budget; }
void gl_pass_count_rewrite(gl_pass_ctx *ctx) { ctx->applied++; }

/* A vetoed rewrite's record: its reason, prefixed with why it was vetoed. */
static gl_decision *log_vetoed(gl_decision_log *log, int step, const char *pass,
                               const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static gl_decision *log_vetoed(gl_decision_log *log, int step, const char *pass,
                               const char *rule, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    gl_decision *d = gl_decision_log_add(log, step, pass, rule, GL_REFUSED, reason);
    d->vetoed = true;
    return d;
}

/* The id about to be recorded is listed in --set PASS.OPTION=ID,... */
static bool id_listed(const gl_pass_ctx *ctx, const char *option, int64_t id)
{
    const gl_settings *s = ctx->settings;
    for (size_t i = 0; s && ctx->pass && i < s->n; i++)
        if (s->items[i].value == id && !strcmp(s->items[i].option, option) &&
            !strcmp(s->items[i].pass, ctx->pass->name))
            return true;
    return false;
}

bool gl_pass_overridden(const gl_pass_ctx *ctx)
{
    const gl_settings *s = ctx->settings;
    for (size_t i = 0; s && ctx->pass && i < s->n; i++)
        if ((!strcmp(s->items[i].option, "veto") || !strcmp(s->items[i].option, "force")) &&
            !strcmp(s->items[i].pass, ctx->pass->name))
            return true;
    return false;
}

/* Whether the rewrite about to be recorded as `id` is vetoed: the id is listed, or the
 * step vetoed the same rule with the same reason before (*as receives that one's
 * position in ctx->vetoed, else -1). A newly vetoed one is remembered. */
static bool veto_applies(gl_pass_ctx *ctx, int64_t id, const char *rule, const char *reason,
                         int64_t *as)
{
    *as = -1;
    if (!ctx->log || !ctx->settings || !ctx->pass)
        return false; /* no ids: trial runs of a pass record nothing */
    bool listed = id_listed(ctx, "veto", id);
    if (!listed && ctx->n_vetoed == 0)
        return false; /* the common case, without building the signature (issue 23) */
    char *sig = gl_xmalloc(strlen(rule) + strlen(reason) + 2);
    sprintf(sig, "%s\n%s", rule, reason);
    for (size_t i = 0; i < ctx->n_vetoed; i++) {
        if (strcmp(ctx->vetoed[i], sig) == 0) {
            free(sig);
            *as = (int64_t)i;
            return true;
        }
    }
    if (listed) {
        GL_GROW(ctx->vetoed, ctx->cap_vetoed, ctx->n_vetoed + 1);
        ctx->vetoed[ctx->n_vetoed++] = sig;
        return true;
    }
    free(sig);
    return false;
}

gl_decision *gl_pass_decide(gl_pass_ctx *ctx, const char *rule, gl_verdict v,
                            const char *fmt, ...)
{
    const char *pass = ctx->pass ? ctx->pass->name : "";
    if (ctx->log && ctx->log->count_only) {
        /* counted, not kept: no reason to format (the pipeline counts only when nothing
         * is --set: no veto to ask about) */
        if (v == GL_APPLIED)
            ctx->applied++;
        return gl_decision_log_add(ctx->log, ctx->step, pass, rule, v, NULL);
    }
    gl_decision_log scratch_log = {0};
    gl_decision_log *log = ctx->log ? ctx->log : &scratch_log;
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    int64_t id = log->id_base + (int64_t)log->n, as;
    gl_decision *d;
    if (v == GL_APPLIED && veto_applies(ctx, id, rule, reason, &as)) {
        ctx->unheeded++;
        if (as < 0)
            d = log_vetoed(log, ctx->step, pass, rule, "vetoed (--set %s.veto=%lld): %s", pass,
                           (long long)id, reason);
        else
            d = log_vetoed(log, ctx->step, pass, rule, "vetoed (the same rewrite again): %s",
                           reason);
        v = GL_REFUSED;
    } else {
        d = gl_decision_log_add(log, ctx->step, pass, rule, v, reason);
    }
    if (!ctx->log) {
        /* No log: keep only the latest record, in the context. */
        gl_decision_clear(&ctx->scratch);
        ctx->scratch = *d;
        ctx->scratch.id = -1;
        free(scratch_log.items);
        d = &ctx->scratch;
    }
    if (v == GL_APPLIED)
        ctx->applied++;
    return d;
}

bool gl_pass_vetoed(gl_pass_ctx *ctx, const gl_decision *d)
{
    if (d->verdict == GL_APPLIED)
        return false;
    if (ctx->unheeded > 0)
        ctx->unheeded--;
    return true;
}

/* How every forced record's reason starts (pass name, id). */
#define FORCED_PREFIX "forced (--set %s.force=%lld): "

void gl_pass_forced_reason(gl_pass_ctx *ctx, gl_decision *d, const char *fmt, ...)
{
    if (!d->forced)
        return;
    char done[512], reason[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(done, sizeof(done), fmt, ap);
    va_end(ap);
    snprintf(reason, sizeof(reason), FORCED_PREFIX "%s", ctx->pass ? ctx->pass->name : "",
             (long long)d->id, done);
    gl_decision_set_reason(d, reason);
}

gl_decision *gl_pass_refuse(gl_pass_ctx *ctx, const char *rule, bool forceable,
                           const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (!forceable)
        return gl_pass_decide(ctx, rule, GL_REFUSED, "%s", reason);
    const char *pass = ctx->pass ? ctx->pass->name : "";
    int64_t id = ctx->log ? ctx->log->id_base + (int64_t)ctx->log->n : -1;
    gl_decision *d;
    if (ctx->log && id_listed(ctx, "force", id) && gl_pass_may_rewrite(ctx)) {
        d = gl_pass_decide(ctx, rule, GL_APPLIED, FORCED_PREFIX "%s", pass, (long long)id,
                           reason);
        d->forced = d->verdict == GL_APPLIED;
        /* Forced and vetoed too: the veto wins, and is heeded here, where callers of a
         * refusal do not look for one. */
        if (d->verdict != GL_APPLIED)
            gl_pass_vetoed(ctx, d);
    } else
        d = gl_pass_decide(ctx, rule, GL_REFUSED, "%s", reason);
    gl_decision_add_number(d, "forceable", 1);
    return d;
}

static bool runs_bodies(const gl_node *n)
{
    static const char *const body_ops[] = {"If", "Loop", "Scan", "SequenceMap"};
    for (size_t i = 0; i < GL_ARRAY_LEN(body_ops); i++)
        if (gl_node_is(n, body_ops[i]))
            return true;
    return false;
}

gl_status gl_pass_on_bodies(gl_graph *g, gl_pass_ctx *ctx,
                            gl_status (*fn)(gl_graph *, gl_pass_ctx *))
{
    gl_node *n;
    gl_foreach_node(g, i, n) {
        for (size_t a = 0; a < n->n_attrs && runs_bodies(n); a++) {
            gl_graph *const *subs;
            size_t n_subs = gl_attr_subgraphs(&n->attrs[a], &subs);
            for (size_t s = 0; s < n_subs; s++) {
                gl_status st = subs[s] ? fn(subs[s], ctx) : GL_OK;
                if (st != GL_OK)
                    return st;
            }
        }
    }
    return GL_OK;
}

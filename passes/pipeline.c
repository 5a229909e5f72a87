/* pipeline.c — the pass table, `--passes` parsing and running a list of passes. */
#include "passes/passes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const gl_pass pass_table[] = {
    {"toposort", "order nodes topologically, keeping the file's order where valid",
     gl_pass_toposort},
};

/* The default pipeline of DESIGN.md, restricted to the passes that exist so far. */
static const char *const default_pipeline[] = {"toposort"};

const gl_pass *gl_pass_table(size_t *count)
{
    *count = GL_ARRAY_LEN(pass_table);
    return pass_table;
}

const gl_pass *gl_pass_find(const char *name)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(pass_table); i++)
        if (strcmp(pass_table[i].name, name) == 0)
            return &pass_table[i];
    return NULL;
}

bool gl_pass_may_rewrite(gl_pass_ctx *ctx) { return ctx->applied < ctx->budget; }
void gl_pass_count_rewrite(gl_pass_ctx *ctx) { ctx->applied++; }

/* One list item: "NAME" or "NAME:K". */
static gl_status parse_step(const char *item, gl_pass_step *step)
{
    char name[64];
    const char *colon = strchr(item, ':');
    size_t len = colon ? (size_t)(colon - item) : strlen(item);
    if (len == 0 || len >= sizeof(name))
        return gl_fail(GL_ERR_INPUT, "--passes: empty or overlong pass name in '%s'", item);
    memcpy(name, item, len);
    name[len] = '\0';
    step->pass = gl_pass_find(name);
    if (!step->pass)
        return gl_fail(GL_ERR_INPUT, "--passes: unknown pass '%s'", name);
    step->budget = GL_BUDGET_UNLIMITED;
    if (colon) {
        char *end;
        errno = 0;
        long long k = strtoll(colon + 1, &end, 10);
        if (errno || end == colon + 1 || *end || k < 0)
            return gl_fail(GL_ERR_INPUT,
                           "--passes: '%s': the rewrite budget after ':' must be a whole "
                           "number >= 0", item);
        step->budget = k;
    }
    return GL_OK;
}

gl_status gl_pass_list_parse(const char *spec, gl_pass_step **steps, size_t *n_steps)
{
    *steps = NULL;
    *n_steps = 0;
    if (strcmp(spec, "none") == 0)
        return GL_OK;
    if (strcmp(spec, "all") == 0) {
        size_t n = GL_ARRAY_LEN(default_pipeline);
        *steps = gl_xcalloc(n, sizeof(gl_pass_step));
        for (size_t i = 0; i < n; i++)
            (*steps)[i] = (gl_pass_step){gl_pass_find(default_pipeline[i]), GL_BUDGET_UNLIMITED};
        *n_steps = n;
        return GL_OK;
    }
    char *copy = gl_xstrdup(spec);
    size_t cap = 0;
    gl_status st = GL_OK;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        GL_GROW(*steps, cap, *n_steps + 1);
        if ((st = parse_step(item, &(*steps)[*n_steps])) != GL_OK)
            break;
        (*n_steps)++;
    }
    if (st == GL_OK && *n_steps == 0)
        st = gl_fail(GL_ERR_INPUT, "--passes: empty list (use 'none' for no passes)");
    free(copy);
    if (st != GL_OK) {
        free(*steps);
        *steps = NULL;
        *n_steps = 0;
    }
    return st;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

gl_status gl_pass_run_step(gl_model *m, const gl_pass_step *step, gl_pass_result *res)
{
    gl_pass_ctx ctx = {.model = m, .budget = step->budget, .applied = 0};
    size_t before = m->graph->live_nodes;
    double t0 = now_ms();
    gl_status st = step->pass->run(m->graph, &ctx);
    double t1 = now_ms();
    if (st == GL_OK && gl_graph_verify(m->graph, false) != GL_OK) {
        gl_error_prefix("pass '%s' left the graph broken (a bug)", step->pass->name);
        st = GL_ERR_INTERNAL;
    }
    if (res)
        *res = (gl_pass_result){ctx.applied, before, m->graph->live_nodes, t1 - t0};
    return st;
}

gl_status gl_pass_list_run(gl_model *m, const gl_pass_step *steps, size_t n_steps)
{
    for (size_t i = 0; i < n_steps; i++) {
        gl_status st = gl_pass_run_step(m, &steps[i], NULL);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

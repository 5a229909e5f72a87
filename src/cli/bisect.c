/* bisect.c — `graphlab bisect MODEL [--data DIR] [--passes LIST] [--rtol X] [--atol Y]
 * [--set PASS.OPT=V] ...`: the first rewrite of the pipeline after which the model's
 * outputs differ from the input model's on the same inputs (driver/bisect.h).
 *
 * stdout: the first bad decision (id, pass, rule, nodes; its record; what differs; the
 * --passes list that makes that model), or "no rewrite changes the outputs". stderr: one
 * line per model run when stderr is a terminal or GRAPHLAB_PROGRESS=1 (a script sees only
 * an error there, one line, as from every command). Exit 0 when no rewrite changes the outputs, 1 when one does, 2 on
 * bad usage, a model that does not load or a pass that fails. */
#include "cli/cli.h"

#include "driver/bisect.h"
#include "util/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool show_progress(void)
{
    const char *env = getenv("GRAPHLAB_PROGRESS");
    return env && *env ? strcmp(env, "0") != 0 : isatty(STDERR_FILENO);
}

static void progress(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "bisect: %s\n", gl_esc(line));
}

static int report(const char *model, const gl_session *s, const gl_session_opts *o,
                  const gl_bisect_result *r)
{
    const gl_pipeline *p = s->pipeline;
    if (!r->found) {
        printf("no rewrite changes the outputs (%lld rewrites in %zu steps, %zu runs; rtol "
               "%g, atol %g; %s)\n", (long long)r->rewrites, p->n_steps - 1, r->runs, o->rtol,
               o->atol, o->data ? "inputs from --data" : "random inputs");
        return GL_EXIT_OK;
    }
    const gl_snapshot *snap = &p->steps[r->step];
    if (r->decision >= 0) {
        const gl_decision *d = &p->log.items[r->decision];
        printf("first bad decision: #%lld %s %s (step %zu, rewrite %lld of %lld)",
               (long long)d->id, gl_esc(d->pass), gl_esc(d->rule), r->step, (long long)r->k,
               (long long)snap->rewrites);
        for (size_t i = 0; i < d->n_nodes; i++)
            printf("%s%s", i ? ", " : " nodes: ", gl_esc(d->nodes[i]));
        putchar('\n');
        gl_decision_print(d, stdout);
    } else {
        printf("first bad rewrite: %s (step %zu, rewrite %lld of %lld; the pass keeps no "
               "record of its rewrites)\n", snap->pass->name, r->step, (long long)r->k,
               (long long)snap->rewrites);
    }
    printf("  %s\n", gl_esc(r->why));
    char *passes = gl_bisect_passes(p, r);
    printf("  that model: graphlab run %s --passes %s\n", gl_esc(model), gl_esc(passes));
    free(passes);
    if (strcmp(o->passes, "all") == 0) {
        /* all:N counts rewrites as the search did: N is this one's number. */
        int64_t n = r->k;
        for (size_t k = 1; k < r->step; k++)
            n += p->steps[k].rewrites;
        printf("  or: graphlab run %s --passes all:%lld\n", gl_esc(model), (long long)n);
    }
    return GL_EXIT_MISMATCH;
}

const gl_command gl_command_bisect = {
    "bisect", "MODEL",
    "the first rewrite after which the outputs differ from the input model's",
    "Runs on the reference backend with the same inputs (--data, else seeded random), by "
    "binary search over PASS:K replays. Prints the first bad decision (id, pass, rule, "
    "nodes; its record; what differs; the --passes list that makes that model), or \"no "
    "rewrite changes the outputs\"; progress on stderr. Exit 0 none, 1 found, 2 error. "
    "--passes defaults to all.",
    GL_SOPT_EXECUTE | GL_SOPT_MAX_ITERATIONS, NULL, 0, gl_cmd_bisect};

int gl_cmd_bisect(int argc, char **argv)
{
    const char *model = NULL;
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    const gl_cli_spec spec = {&gl_command_bisect, NULL, NULL, &model};
    int first, rc = gl_cli_parse(&spec, argc, argv, &o, &first);
    gl_session s = {0};
    if (rc == GL_EXIT_OK) {
        /* Every step's model: the probes replay from them. */
        o.pipeline_flags = GL_PIPELINE_KEEP_SNAPSHOTS;
        o.always_pipeline = true;
        gl_bisect_result r;
        gl_status st = gl_session_open(model, &o, &s);
        if (st == GL_OK && (st = gl_bisect_pipeline(s.pipeline, SIZE_MAX, &o,
                                                      show_progress() ? progress : NULL,
                                                      NULL, &r)) == GL_OK) {
            rc = report(model, &s, &o, &r);
            gl_bisect_result_free(&r);
        } else {
            rc = gl_cli_fail(st);
        }
    }
    gl_session_close(&s);
    gl_session_opts_free(&o);
    return rc < 0 ? GL_EXIT_OK : rc;
}

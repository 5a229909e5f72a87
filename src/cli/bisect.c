/* bisect.c — `graphlab bisect MODEL [--data DIR] [--passes LIST] [--backend B] [--slower PCT]
 * [--rtol X] [--atol Y] [--set PASS.OPT=V] ...`: the first rewrite of the pipeline after
 * which the model's outputs on B differ from the input model's on the reference, on the
 * same inputs, or (--slower) after which its run on B is PCT% slower (driver/bisect.h).
 *
 * stdout: the first bad decision (id, pass, rule, nodes; its record; what differs; the
 * --passes list that makes that model), or "no rewrite changes the outputs". stderr: one
 * line per model run when stderr is a terminal or GRAPHLAB_PROGRESS=1 (a script sees only
 * an error there, one line, as from every command). Exit 0 when no rewrite changes the outputs, 1 when one does, 2 on
 * bad usage, a model that does not load or a pass that fails. */
#include "cli/cli.h"

#include "driver/bisect.h"
#include "util/escape.h"
#include "util/plural.h"
#include "util/strbuf.h"

#include <errno.h>
#include <math.h>
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

/* x in the fewest digits that read back as x (3e-4, not 0.00029999999999999997). */
static void put_number(gl_strbuf *sb, const char *flag, double x)
{
    char text[40];
    if (x == (double)(long long)x && x > -1e15 && x < 1e15) { /* 50, not 5e+01 */
        snprintf(text, sizeof(text), "%lld", (long long)x);
    } else {
        for (int digits = 1; digits <= 17; digits++) {
            snprintf(text, sizeof(text), "%.*g", digits, x);
            if (strtod(text, NULL) == x)
                break;
        }
    }
    gl_sb_printf(sb, "%s%s", flag, text);
}

/* The options a `graphlab run` line needs to make the same runs: --backend (dnnl when
 * the passes printed have no fusion step, which fused needs), --threads when given (a
 * timing depends on it), --data, each --set, --dim, --rtol/--atol when not the defaults;
 * shell-quoted. */
static void repro_options(gl_strbuf *sb, const gl_session_opts *o, bool fuses, bool timing)
{
    const char *backend = o->backend;
    if (gl_session_is_fusion_run(backend) && !(fuses && strcmp(backend, "fused") == 0))
        backend = "dnnl";
    if (strcmp(backend, "ref") != 0)
        gl_sb_printf(sb, " --backend %s", backend);
    if (strcmp(backend, "ref") != 0 && o->threads > 0)
        gl_sb_printf(sb, " --threads %d", o->threads);
    if (o->data) {
        gl_sb_puts(sb, " --data ");
        gl_sb_shell_word(sb, o->data);
    }
    for (size_t i = 0; i < o->settings.n; i++) {
        char text[1024];
        gl_setting_format(&o->settings.items[i], text, sizeof(text));
        gl_sb_puts(sb, " --set ");
        gl_sb_shell_word(sb, text);
    }
    for (size_t i = 0; i < o->n_dims; i++) {
        char text[512];
        snprintf(text, sizeof(text), "%s=%lld", o->dims[i].name, (long long)o->dims[i].value);
        gl_sb_puts(sb, " --dim ");
        gl_sb_shell_word(sb, text);
    }
    gl_session_opts dflt;
    gl_session_opts_init(&dflt, "all");
    if (o->rtol != dflt.rtol)
        put_number(sb, " --rtol ", o->rtol);
    if (o->atol != dflt.atol)
        put_number(sb, " --atol ", o->atol);
    if (o->steps != dflt.steps)
        put_number(sb, " --steps ", o->steps);
    /* Without --data nothing is compared with the input model's outputs: on oneDNN the
     * reference run of the same model is what the line can compare with. */
    if (!o->data && strcmp(backend, "ref") != 0 && !timing)
        gl_sb_puts(sb, " --compare ref");
}

/* "  LABEL: graphlab run MODEL --passes PASSES OPTIONS" on stdout. */
static void print_repro(const char *label, const char *model, const char *passes,
                        const gl_session_opts *o, double slower)
{
    gl_strbuf sb = {0};
    /* A time is no output a run compares: the slowdown reproduces as bisect --slower
     * over the rewrites up to the one found, which it finds again (the last). */
    gl_sb_printf(&sb, "  %s: graphlab %s ", label, slower ? "bisect" : "run");
    gl_sb_shell_word(&sb, model);
    gl_sb_printf(&sb, " --passes %s", passes);
    if (slower)
        put_number(&sb, " --slower ", slower);
    bool fuses = strstr(passes, "fusion") || strncmp(passes, "all", 3) == 0;
    repro_options(&sb, o, fuses, slower > 0);
    char *line = gl_sb_take(&sb);
    printf("%s\n", gl_esc(line));
    free(line);
}

static int report(const char *model, const gl_session *s, const gl_session_opts *o,
                  const gl_bisect_result *r, double slower)
{
    const gl_pipeline *p = s->pipeline;
    char noise[64] = "";
    if (slower)
        snprintf(noise, sizeof(noise), "; noise %.1f%%", r->noise_pct);
    if (!r->found) {
        printf("no rewrite %s (%lld %s in %zu %s, %zu %s; rtol %g, atol %g; %s; "
               "backend %s%s)\n", slower ? "makes the run slower" : "changes the outputs",
               (long long)r->rewrites, gl_noun((long long)r->rewrites, "rewrite", "rewrites"),
               p->n_steps - 1, gl_noun((long long)p->n_steps - 1, "step", "steps"), r->runs,
               gl_noun((long long)r->runs, "run", "runs"), o->rtol, o->atol,
               o->data ? "inputs from --data" : "random inputs", o->backend, noise);
        return GL_EXIT_OK;
    }
    const gl_snapshot *snap = &p->steps[r->step];
    if (r->step == 0) {
        printf("the input model already differs on %s, before any rewrite\n", o->backend);
    } else if (r->decision >= 0) {
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
    printf("  %s (backend %s)\n", gl_esc(r->why), o->backend);
    char *passes = gl_bisect_passes(p, r);
    print_repro("that model", model, *passes ? passes : "none", o, slower);
    free(passes);
    /* all:N counts the default pipeline's rewrites, which the unfused pipeline is not. */
    if (strcmp(o->passes, "all") == 0 && strcmp(o->backend, "unfused") != 0 && r->step) {
        /* all:N counts rewrites as the search did: N is this one's number. */
        int64_t n = r->k;
        for (size_t k = 1; k < r->step; k++)
            n += p->steps[k].rewrites;
        char all[32];
        snprintf(all, sizeof(all), "all:%lld", (long long)n);
        print_repro("or", model, all, o, slower);
    }
    return GL_EXIT_MISMATCH;
}

enum { OPT_SLOWER, N_OPTS };
static const gl_cli_option own_options[N_OPTS] = {
    [OPT_SLOWER] = {"slower", 0, true, "PCT",
                    "the first rewrite after which the run on --backend (default fused) is "
                    "more than PCT% slower than the input model's"},
};

const gl_command gl_command_bisect = {
    "bisect", "MODEL",
    "the first rewrite after which the outputs of --backend leave tolerance (or, with "
    "--slower, its run gets PCT% slower)",
    "Binary search over PASS:K replays. Each probe (the model after the first K rewrites) "
    "runs on --backend (default ref; dnnl and fused: oneDNN on the probe; unfused: oneDNN "
    "on the probes of --passes without its fusion steps) with the same inputs (--data, "
    "else seeded random), and is compared with the input model on the reference. With "
    "--slower PCT each probe is timed against the input model on the same backend (default "
    "fused), in interleaved rounds after a warm-up, by their medians; the noise (median "
    "absolute deviation over median) is printed, and above PCT there is no answer (exit "
    "2). Prints the first bad decision (id, pass, rule, nodes; its record; what differs; "
    "`graphlab run` lines that make that model, with every option they need: --backend, "
    "--data, --set, --dim, --rtol/--atol; without --data a oneDNN run is compared with "
    "--compare ref; with --slower `graphlab bisect --slower` lines over the rewrites up "
    "to the one found, which find it again), or \"no rewrite changes the outputs\"; progress on stderr. Exit 0 "
    "none, 1 found, 2 error. --passes defaults to all. Test-only: --set dnnl.fault=NAME "
    "and dnnl.delay=NAME perturb or delay the node or fused group NAME on oneDNN.",
    GL_SOPT_EXECUTE | GL_SOPT_MAX_ITERATIONS | GL_SOPT_BACKEND, own_options, N_OPTS,
    gl_cmd_bisect};

static int own_option(void *ctx, size_t which, const char *value)
{
    (void)which;
    double *pct = ctx;
    char *end = NULL;
    errno = 0;
    *pct = strtod(value, &end);
    if (errno || end == value || *end || !isfinite(*pct) || *pct <= 0)
        return gl_cli_usage_error("bisect", "--slower '%s' is not a percentage above 0",
                                  value);
    return GL_EXIT_OK;
}

/* --backend and --slower together: the default backend, and what fused needs. */
static int check_backend(gl_session_opts *o, double slower)
{
    if (!o->backend) /* not given: fused for a timing when the passes fuse */
        o->backend = !slower ? "ref" : gl_session_fuses(o) ? "fused" : "dnnl";
    if (gl_session_is_fusion_run(o->backend) && !gl_session_fuses(o))
        return gl_cli_usage_error("bisect", "--backend %s: fused and unfused differ by the "
                                  "fusion pass, which --passes '%s' does not run (try "
                                  "--passes all)", o->backend, o->passes);
    return GL_EXIT_OK;
}

int gl_cmd_bisect(int argc, char **argv)
{
    const char *model = NULL;
    double slower = 0;
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    o.backend = NULL; /* check_backend: the default depends on --slower */
    const gl_cli_spec spec = {&gl_command_bisect, own_option, &slower, &model};
    int first, rc = gl_cli_parse(&spec, argc, argv, &o, &first);
    if (rc == GL_EXIT_OK)
        rc = check_backend(&o, slower);
    gl_session s = {0};
    if (rc == GL_EXIT_OK) {
        /* Every step's model: the probes replay from them. */
        o.pipeline_flags = GL_PIPELINE_KEEP_SNAPSHOTS;
        o.always_pipeline = true;
        gl_bisect_result r;
        gl_bisect_progress_fn say = show_progress() ? progress : NULL;
        gl_status st = strcmp(o.backend, "unfused") == 0 ? gl_session_open_unfused(model, &o, &s)
                                                          : gl_session_open(model, &o, &s);
        if (st == GL_OK)
            st = slower ? gl_bisect_slower(s.pipeline, SIZE_MAX, &o, slower, say, NULL, &r)
                        : gl_bisect_pipeline(s.pipeline, SIZE_MAX, &o, say, NULL, &r);
        if (st == GL_OK) {
            rc = report(model, &s, &o, &r, slower);
            gl_bisect_result_free(&r);
        } else {
            rc = gl_cli_fail(st);
        }
    }
    gl_session_close(&s);
    gl_session_opts_free(&o);
    return rc < 0 ? GL_EXIT_OK : rc;
}

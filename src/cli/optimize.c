/* optimize.c — `graphlab optimize MODEL -o OUT.onnx [--passes LIST] [--explain] [--json]
 * [--set PASS.OPT=V]`: load, run passes, save. The input file is never written; OUT is
 * written atomically. */
#include "cli/cli.h"

#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "util/escape.h"
#include "util/json.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct optimize_args {
    const char *model, *out, *passes;
    bool explain, json;
    gl_settings settings;
} optimize_args;

enum { OPT_EXPLAIN = GL_OPT_OWN, OPT_JSON };

/* GL_EXIT_OK to go on, -1 for --help (done), else the exit code. */
static int parse_args(int argc, char **argv, optimize_args *a)
{
    static const struct option long_opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"json", no_argument, NULL, OPT_JSON},
        GL_CLI_COMMON_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    a->passes = "all";
    int c, rc;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", long_opts, NULL)) != -1) {
        switch (c) {
        case 'o': a->out = optarg; break;
        case OPT_EXPLAIN: a->explain = true; break;
        case OPT_JSON: a->json = true; break;
        default:
            rc = gl_cli_common_option("optimize", c, argv, &a->passes, &a->settings);
            if (rc != GL_EXIT_OK)
                return rc;
        }
    }
    if (argc - optind != 1)
        return gl_cli_usage_error("optimize", "expected one MODEL");
    a->model = argv[optind];
    if (!a->out)
        return gl_cli_usage_error("optimize", "missing -o OUT.onnx");
    return GL_EXIT_OK;
}

static void print_table(const optimize_args *a, const gl_pipeline *p)
{
    printf("%-24s %8s %9s %10s\n", "step", "nodes", "rewrites", "time");
    for (size_t k = 0; k < p->n_steps; k++) {
        const gl_snapshot *s = &p->steps[k];
        char label[96];
        gl_snapshot_label(p, k, label, sizeof(label));
        if (k == 0) {
            printf("%-24s %8zu\n", label, s->nodes);
            continue;
        }
        printf("%-24s %8zu %9lld %7.2f ms%s\n", label, s->nodes, (long long)s->rewrites,
               s->ms, s->changed ? "" : "  (unchanged)");
    }
    if (a->explain) {
        for (size_t k = 1; k < p->n_steps; k++) {
            const gl_snapshot *s = &p->steps[k];
            char label[96];
            gl_snapshot_label(p, k, label, sizeof(label));
            printf("\n%s: %zu decision%s\n", label, s->n_decisions,
                   s->n_decisions == 1 ? "" : "s");
            for (size_t i = 0; i < s->n_decisions; i++)
                gl_decision_print(&p->log.items[s->first_decision + i], stdout);
        }
    }
    printf("wrote %s\n", gl_esc(a->out));
}

static void print_json(const optimize_args *a, const gl_pipeline *p)
{
    gl_json j;
    gl_json_init(&j, stdout, true);
    gl_json_object_begin(&j, NULL);
    gl_json_string(&j, "input", a->model);
    gl_json_string(&j, "output", a->out);
    gl_json_int(&j, "loaded_nodes", (int64_t)p->steps[0].nodes);
    gl_json_array_begin(&j, "passes");
    for (size_t k = 1; k < p->n_steps; k++) {
        const gl_snapshot *s = &p->steps[k];
        gl_json_object_begin(&j, NULL);
        gl_json_int(&j, "step", (int64_t)k);
        gl_json_string(&j, "name", s->pass->name);
        if (s->budget != GL_BUDGET_UNLIMITED)
            gl_json_int(&j, "budget", s->budget);
        else
            gl_json_null(&j, "budget");
        gl_json_bool(&j, "changed", s->changed);
        gl_json_int(&j, "rewrites", s->rewrites);
        gl_json_int(&j, "nodes_before", (int64_t)p->steps[k - 1].nodes);
        gl_json_int(&j, "nodes_after", (int64_t)s->nodes);
        gl_json_int(&j, "decisions", (int64_t)s->n_decisions);
        gl_json_double(&j, "ms", s->ms);
        gl_json_object_end(&j);
    }
    gl_json_array_end(&j);
    gl_json_array_begin(&j, "decisions");
    for (size_t i = 0; i < p->log.n; i++)
        gl_decision_json(&p->log.items[i], &j);
    gl_json_array_end(&j);
    gl_json_object_end(&j);
    gl_json_finish(&j);
}

int gl_cmd_optimize(int argc, char **argv)
{
    optimize_args a = {0};
    int rc = parse_args(argc, argv, &a);
    gl_pass_step *steps = NULL;
    size_t n_steps = 0;
    gl_pipeline *p = NULL;
    gl_model *m = NULL;
    gl_status st = GL_OK;
    if (rc != GL_EXIT_OK)
        goto done;
    if ((rc = gl_cli_pass_list("optimize", a.passes, &steps, &n_steps)) != GL_EXIT_OK)
        goto done;
    if ((st = gl_cli_load(a.model, &a.settings, &m)) == GL_OK) {
        st = gl_pipeline_run(m, steps, n_steps, &a.settings, 0, &p);
        if (st == GL_OK)
            st = gl_model_save(gl_pipeline_result(p), a.out, NULL);
    }
    if (st == GL_OK) {
        if (a.json)
            print_json(&a, p);
        else
            print_table(&a, p);
    }
    rc = st == GL_OK ? GL_EXIT_OK : gl_cli_fail(st);
done:
    gl_pipeline_free(p);
    free(steps);
    gl_settings_free(&a.settings);
    return rc < 0 ? GL_EXIT_OK : rc;
}

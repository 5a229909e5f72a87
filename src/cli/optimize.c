/* optimize.c — `graphlab optimize MODEL -o OUT.onnx [--passes LIST] [--explain] [--json]
 * [--set PASS.OPT=V]`: load, run passes, save. The input file is never written; OUT is
 * written atomically. */
#include "cli/cli.h"
#include "cli/json.h"

#include "onnx/onnx_io.h"
#include "passes/passes.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct optimize_args {
    const char *model, *out, *passes;
    bool explain, json;
    gl_cli_load_opts load;
} optimize_args;

enum { OPT_PASSES = 256, OPT_EXPLAIN, OPT_JSON, OPT_SET };

static int parse_args(int argc, char **argv, optimize_args *a)
{
    static const struct option long_opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"passes", required_argument, NULL, OPT_PASSES},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"json", no_argument, NULL, OPT_JSON},
        {"set", required_argument, NULL, OPT_SET},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *a = (optimize_args){.passes = "all"};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", long_opts, NULL)) != -1) {
        switch (c) {
        case 'o': a->out = optarg; break;
        case OPT_PASSES: a->passes = optarg; break;
        case OPT_EXPLAIN: a->explain = true; break;
        case OPT_JSON: a->json = true; break;
        case OPT_SET:
            if (gl_cli_apply_set(&a->load, optarg) != GL_OK)
                return gl_cli_usage_error("optimize", "%s", gl_error_message());
            break;
        case 'h': gl_cli_print_help(stdout); return -1;
        case '?':
            if (optopt)
                return gl_cli_usage_error("optimize", "option '-%c' needs a value or is "
                                          "unknown", optopt);
            return gl_cli_usage_error("optimize", "unknown option '%s'", argv[optind - 1]);
        default: return gl_cli_usage_error("optimize", "bad arguments");
        }
    }
    if (argc - optind != 1)
        return gl_cli_usage_error("optimize", "expected one MODEL");
    a->model = argv[optind];
    if (!a->out)
        return gl_cli_usage_error("optimize", "missing -o OUT.onnx");
    return GL_EXIT_OK;
}

static void print_table(const optimize_args *a, const gl_pass_step *steps,
                        const gl_pass_result *res, size_t n, size_t loaded_nodes)
{
    printf("%-20s %8s %9s %10s\n", "step", "nodes", "rewrites", "time");
    printf("%-20s %8zu %9s %10s\n", "load", loaded_nodes, "", "");
    for (size_t i = 0; i < n; i++) {
        char name[64];
        if (steps[i].budget != GL_BUDGET_UNLIMITED)
            snprintf(name, sizeof(name), "%s:%lld", steps[i].pass->name,
                     (long long)steps[i].budget);
        else
            snprintf(name, sizeof(name), "%s", steps[i].pass->name);
        printf("%-20s %8zu %9lld %8.2f ms%s\n", name, res[i].nodes_after,
               (long long)res[i].rewrites, res[i].ms, res[i].rewrites ? "" : "  (unchanged)");
    }
    if (a->explain)
        printf("\n(no pass in this pipeline records decisions yet)\n");
    printf("wrote %s\n", a->out);
}

static void print_json(const optimize_args *a, const gl_pass_step *steps,
                       const gl_pass_result *res, size_t n, size_t loaded_nodes)
{
    gl_json j;
    gl_json_init(&j, stdout, true);
    gl_json_object_begin(&j, NULL);
    gl_json_string(&j, "input", a->model);
    gl_json_string(&j, "output", a->out);
    gl_json_int(&j, "loaded_nodes", (int64_t)loaded_nodes);
    gl_json_array_begin(&j, "passes");
    for (size_t i = 0; i < n; i++) {
        gl_json_object_begin(&j, NULL);
        gl_json_string(&j, "name", steps[i].pass->name);
        if (steps[i].budget != GL_BUDGET_UNLIMITED)
            gl_json_int(&j, "budget", steps[i].budget);
        else
            gl_json_null(&j, "budget");
        gl_json_bool(&j, "changed", res[i].rewrites > 0);
        gl_json_int(&j, "rewrites", res[i].rewrites);
        gl_json_int(&j, "nodes_before", (int64_t)res[i].nodes_before);
        gl_json_int(&j, "nodes_after", (int64_t)res[i].nodes_after);
        gl_json_double(&j, "ms", res[i].ms);
        gl_json_object_end(&j);
    }
    gl_json_array_end(&j);
    gl_json_array_begin(&j, "decisions");
    gl_json_array_end(&j);
    gl_json_object_end(&j);
    gl_json_finish(&j);
}

int gl_cmd_optimize(int argc, char **argv)
{
    optimize_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != GL_EXIT_OK)
        return rc < 0 ? GL_EXIT_OK : rc;

    gl_pass_step *steps = NULL;
    size_t n_steps = 0;
    gl_status st = gl_pass_list_parse(a.passes, &steps, &n_steps);
    if (st != GL_OK)
        return gl_cli_usage_error("optimize", "%s", gl_error_message());

    gl_model *m = NULL;
    gl_pass_result *res = gl_xcalloc(n_steps ? n_steps : 1, sizeof(*res));
    st = gl_cli_load(a.model, &a.load, &m);
    size_t loaded = m ? m->graph->live_nodes : 0;
    for (size_t i = 0; st == GL_OK && i < n_steps; i++)
        st = gl_pass_run_step(m, &steps[i], &res[i]);
    if (st == GL_OK)
        st = gl_model_save(m, a.out, NULL);
    if (st == GL_OK) {
        if (a.json)
            print_json(&a, steps, res, n_steps, loaded);
        else
            print_table(&a, steps, res, n_steps, loaded);
    }
    gl_model_free(m);
    free(res);
    free(steps);
    return st == GL_OK ? GL_EXIT_OK : gl_cli_fail(st);
}

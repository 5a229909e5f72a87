/* optimize.c — `graphlab optimize MODEL -o OUT.onnx [--passes LIST] [--explain] [--json]
 * [--set PASS.OPT=V]`: load, run passes, save. The input file is never written; OUT is
 * written atomically. */
#include "cli/cli.h"

#include "driver/export.h"
#include "exec/compare.h"
#include "exec/exec.h"
#include "ir/memplan.h"
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "util/bytes.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/plural.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct optimize_args {
    const char *model, *out;
    bool explain, json, self_contained;
    gl_save_report saved;
} optimize_args;

enum { OPT_OUTPUT, OPT_EXPLAIN, OPT_JSON, OPT_SELF_CONTAINED, N_OPTS };
static const gl_cli_option own_options[N_OPTS] = {
    [OPT_OUTPUT] = {"output", 'o', true, "OUT.onnx",
                    "where the result goes (written atomically, never over MODEL); required"},
    [OPT_EXPLAIN] = {"explain", 0, false, NULL, "also print every decision, pass by pass"},
    [OPT_JSON] = {"json", 0, false, NULL,
                  "print {input, output, loaded_nodes, passes:[...], decisions:[...]} instead"},
    [OPT_SELF_CONTAINED] = {"self-contained", 0, false, NULL,
                            "write every weight into OUT.onnx.data, none pointed at in "
                            "MODEL's data file: a folder that works alone"},
};

const gl_command gl_command_optimize = {
    "optimize", "MODEL", "run passes and save the result (the input is never written)",
    "Prints one line per step: its nodes, rewrites and time, \"(unchanged)\" when the pass "
    "changed nothing (\"(graph unchanged; 3 outputs in place)\" for the "
    "memory plan, which plans and edits no node). --passes defaults to all. Weights no "
    "pass changed are not written again: OUT points at them in MODEL's external-data "
    "file, a hard link beside OUT (OUT.onnx.NAME) unless OUT is in MODEL's folder; only "
    "the changed ones go to OUT.onnx.data. Across file systems they are copied (and the "
    "output says why).",
    GL_SOPT_PIPELINE, own_options, N_OPTS, gl_cmd_optimize};

static int own_option(void *ctx, size_t which, const char *value)
{
    optimize_args *a = ctx;
    switch (which) {
    case OPT_OUTPUT: a->out = value; break;
    case OPT_EXPLAIN: a->explain = true; break;
    case OPT_SELF_CONTAINED: a->self_contained = true; break;
    default: a->json = true; break;
    }
    return GL_EXIT_OK;
}

/* GL_EXIT_OK to go on, -1 for --help (done), else the exit code. */
static int parse_args(int argc, char **argv, optimize_args *a, gl_session_opts *o)
{
    const gl_cli_spec spec = {&gl_command_optimize, own_option, a, &a->model};
    int first, rc = gl_cli_parse(&spec, argc, argv, o, &first);
    if (rc != GL_EXIT_OK)
        return rc;
    if (!a->out)
        return gl_cli_usage_error("optimize", "missing -o OUT.onnx");
    return GL_EXIT_OK;
}

/* Where the external weights went: kept in place, written, copied (and why). */
static void print_weights(const gl_save_report *r)
{
    if (!r->kept && !r->written)
        return;
    char kept[32], written[32];
    gl_bytes_text(r->kept_bytes, kept, sizeof(kept));
    gl_bytes_text(r->written_bytes, written, sizeof(written));
    printf("weights: %zu %s (%s) kept in place, %zu (%s) written\n", r->kept,
           gl_noun((long long)r->kept, "tensor", "tensors"), kept, r->written, written);
    if (*r->copied)
        printf("copied instead of kept: %s\n", gl_esc(r->copied));
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
        char change[160] = "";
        if (!s->changed) /* "(unchanged)", or what a pass that plans did */
            gl_snapshot_change_text(p, k, change, sizeof(change));
        printf("%-24s %8zu %9lld %7.2f ms%s%s%s\n", label, s->nodes, (long long)s->rewrites,
               s->ms, *change ? "  (" : "", change, *change ? ")" : "");
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
    print_weights(&a->saved);
}

/* One run of m on the reference backend on inputs d, with or without its memory plan:
 * the tensors' high-water mark, the arena, and what was allocated apart. */
static gl_status measure(const gl_model *m, const gl_session_opts *o, const gl_dataset *d,
                         bool plan, gl_exec_stats *st)
{
    gl_exec_options eo = gl_session_exec_options(o, "ref");
    eo.no_memory_plan = !plan;
    /* Informational, as folding is: a loop that runs longer is left unmeasured. */
    eo.max_iterations = GL_EVAL_MAX_ITERATIONS;
    gl_exec *e = NULL;
    size_t n_out = m->graph->n_outputs;
    gl_tensor **out = gl_xcalloc(n_out ? n_out : 1, sizeof(*out));
    gl_status rc = gl_exec_create(m, &eo, &e);
    if (rc == GL_OK)
        rc = gl_exec_run(e, (const gl_tensor *const *)d->inputs, d->n_inputs, out, n_out);
    if (rc == GL_OK)
        gl_exec_get_stats(e, st);
    for (size_t i = 0; i < n_out; i++)
        gl_tensor_free(out[i]);
    free(out);
    gl_exec_free(e);
    return rc;
}

/* --explain: the plan's table, and the executor measured with and without it (one set of
 * seeded inputs for both runs). */
static void print_memory_plan(const gl_model *m, const gl_session_opts *o)
{
    if (!m->memory_plan)
        return;
    printf("\n");
    gl_memory_plan_print(m->memory_plan, stdout);
    if (!m->memory_plan->n_tensors)
        return;
    gl_exec_stats with = {0}, without = {0};
    gl_dataset d = {0};
    gl_status rc = gl_session_inputs(m, o, &d);
    if (rc == GL_OK)
        rc = measure(m, o, &d, false, &without);
    if (rc == GL_OK)
        rc = measure(m, o, &d, true, &with);
    gl_dataset_free(&d);
    if (rc != GL_OK) {
        printf("measured: not run (%s)\n", gl_esc(gl_error_message()));
        return;
    }
    printf("measured on the reference executor (seeded inputs, graph inputs and outputs "
           "included): high-water mark %zu bytes without the plan; with it the arena %zu "
           "bytes, %zu outputs placed in it, %zu allocated apart\n", without.peak_bytes,
           with.arena_bytes, with.arena_lent, with.arena_refused);
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
    gl_json_object_begin(&j, "weights");
    gl_json_int(&j, "kept", (int64_t)a->saved.kept);
    gl_json_int(&j, "kept_bytes", (int64_t)a->saved.kept_bytes);
    gl_json_int(&j, "written", (int64_t)a->saved.written);
    gl_json_int(&j, "written_bytes", (int64_t)a->saved.written_bytes);
    gl_json_int(&j, "links", (int64_t)a->saved.links);
    if (*a->saved.copied)
        gl_json_string(&j, "copied", a->saved.copied);
    else
        gl_json_null(&j, "copied");
    gl_json_object_end(&j);
    gl_memory_plan_json(gl_pipeline_result(p)->memory_plan, &j);
    gl_export_decisions_json(p, &j);
}

int gl_cmd_optimize(int argc, char **argv)
{
    optimize_args a = {0};
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    o.always_pipeline = true;
    gl_session s = {0};
    int rc = parse_args(argc, argv, &a, &o);
    if (rc == GL_EXIT_OK) {
        if (!a.explain && !a.json) /* the table prints only the decisions' counts */
            o.pipeline_flags |= GL_PIPELINE_COUNT_DECISIONS;
        gl_status st = gl_session_open(a.model, &o, &s);
        gl_save_options so = {.keep_unchanged = !a.self_contained, .report = &a.saved};
        if (st == GL_OK && !a.explain && !a.json)
            gl_pipeline_drop_decisions(s.pipeline);
        if (st == GL_OK)
            st = gl_model_save(s.model, a.out, &so);
        if (st == GL_OK && a.json)
            print_json(&a, s.pipeline);
        else if (st == GL_OK)
            print_table(&a, s.pipeline);
        if (st == GL_OK && a.explain && !a.json)
            print_memory_plan(s.model, &o);
        rc = st == GL_OK ? GL_EXIT_OK : gl_cli_fail(st);
    }
    gl_session_end(&s);
    gl_session_opts_free(&o);
    return rc < 0 ? GL_EXIT_OK : rc;
}

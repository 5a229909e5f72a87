/* run.c — `graphlab run MODEL [--data DIR] [--passes LIST] [--backend ref|dnnl|fused|unfused]
 * [--compare BACKEND|float [--intermediates [--all-tensors]]] [--save-tensors DIR [NAME...]]
 * [--rtol X] [--atol Y] [--steps N] [--dim NAME=V] [--threads N] [--max-memory BYTES]
 * [--max-iterations N] [--save-outputs DIR] [--set PASS.OPT=V] [--plan] [--unfused]`: execute
 * a model once.
 *
 * Inputs come from DIR/input_*.pb, or are drawn from a fixed-seed generator (so two
 * runs, and two backends, see the same numbers) in the declared shapes, a symbolic dim
 * taking its --dim value or 1. With --data the outputs are compared with
 * DIR/output_*.pb, with --compare with a second run on another backend; exit 1 when any
 * comparison fails. --max-memory (K, M, G suffixes) bounds every tensor and all those
 * alive together, random inputs included; --max-iterations all loop iterations (see
 * gl_exec_options). --intermediates and --save-tensors keep the runs' intermediate
 * tensors (exec/intermediates.h); the NAMEs to save are the arguments after MODEL
 * (getopt moves them there from behind DIR), every tensor when there are none.
 *
 * fused and unfused (for --backend and --compare, when --passes has a fusion step) are
 * dnnl on the model as optimized and on the model the same passes make without fusion:
 * `--backend unfused --compare fused --intermediates` compares the two at the fused
 * groups' boundaries and names the first group that parts ways. --unfused (DESIGN.md's
 * flag) runs every run on the model the passes make without their fusion steps.
 *
 * --compare float (a QDQ model): the same inputs through the model with its Q -> DQ pairs
 * on activations removed (driver.h's gl_session_open_float), on the reference; its
 * outputs' lines say the quantization error and never fail the run; with
 * --intermediates, each pair's error against the float run, worst first, and the first
 * pair whose error jumps (exec/qerror.h).
 *
 * stdout is the outputs' lines (scripts read them); after a run, one stderr line says
 * which passes made the model and where the inputs came from (the seed when random). */
#include "cli/cli.h"

#include "passes/pipeline.h"

#include "exec/compare.h"
#include "exec/exec.h"
#include "exec/inputs.h"
#include "exec/intermediates.h"
#include "exec/qerror.h"
#include "driver/inter_save.h"
#include "onnx/save_set.h"
#include "onnx/onnx_io.h"
#include "util/escape.h"
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct run_args {
    const char *model, *compare, *save_dir;
    bool plan, unfused;
    bool intermediates, all_tensors;
    const char *tensors_dir;
    const char *const *tensor_names; /* the NAMEs after MODEL (in argv) */
    size_t n_tensor_names;
    gl_session_opts o; /* --backend, --data, --rtol, --atol, --dim, --threads, limits,
                          --passes */
} run_args;

/* ---- arguments ------------------------------------------------------------------------ */

enum { OPT_COMPARE, OPT_SAVE, OPT_PLAN, OPT_INTERMEDIATES, OPT_ALL_TENSORS,
       OPT_SAVE_TENSORS, OPT_UNFUSED, N_OPTS };
static const gl_cli_option own_options[N_OPTS] = {
    [OPT_COMPARE] = {"compare", 0, true, "BACKEND|float",
                     "run again on BACKEND and compare the outputs (exit 1 on a mismatch); "
                     "float: the model without its Q/DQ pairs, on ref (quantization error)"},
    [OPT_SAVE] = {"save-outputs", 0, true, "DIR",
                  "write the outputs as DIR/output_N.pb, in place of the last ones saved "
                  "there"},
    [OPT_PLAN] = {"plan", 0, false, NULL,
                  "print the plan: each node's backend and implementation"},
    [OPT_INTERMEDIATES] = {"intermediates", 0, false, NULL,
                           "with --compare: every tensor of the two runs compared in run "
                           "order, and the first node where they part ways; with --compare "
                           "float: each Q/DQ pair's error, worst first, and the first jump"},
    [OPT_ALL_TENSORS] = {"all-tensors", 0, false, NULL,
                         "with --intermediates: a line for every tensor, not only the "
                         "first that differs"},
    [OPT_SAVE_TENSORS] = {"save-tensors", 0, true, "DIR",
                          "write the tensors of the --backend run as DIR/NNNN_NAME.ID.pb "
                          "with DIR/index.json naming them: the NAMEs after MODEL, else all"},
    [OPT_UNFUSED] = {"unfused", 0, false, NULL,
                     "every run on the model the passes make without their fusion steps"},
};

const gl_command gl_command_run = {
    "run", "MODEL [NAME...]",
    "execute; with --data compare with DIR/output_*.pb (exit 1 on a mismatch)",
    "Without --data the inputs are random, from a fixed seed, in the declared shapes (a "
    "symbolic dim: its --dim value or 1); stderr says so, and which passes ran. "
    "--intermediates and --save-tensors keep every tensor they need until the end: all "
    "activations at once, for each run (so twice with --intermediates), at most 1 GiB per "
    "run. fused and unfused (for --backend and --compare, when --passes has a fusion step) "
    "are dnnl on the model as optimized and on the model the same passes make without "
    "fusion; --backend unfused --compare fused --intermediates compares them at the fused "
    "groups' boundaries and names the first group that parts ways. A save replaces the "
    "last one in its DIR as a whole: the files are written into a temporary folder in DIR "
    "first, and a failed or killed save leaves the last one as it was (index.json always "
    "names one whole save; ID, the save's own, keeps the two apart); the next save removes "
    "what a killed one left. --passes defaults to none, and to all (the default pipeline) "
    "when --backend or --compare is fused or unfused.",
    GL_SOPT_EXECUTE | GL_SOPT_MAX_ITERATIONS | GL_SOPT_BACKEND, own_options, N_OPTS,
    gl_cmd_run};

static int own_option(void *ctx, size_t which, const char *value)
{
    run_args *a = ctx;
    switch (which) {
    case OPT_COMPARE: a->compare = value; break;
    case OPT_SAVE: a->save_dir = value; break;
    case OPT_PLAN: a->plan = true; break;
    case OPT_INTERMEDIATES: a->intermediates = true; break;
    case OPT_ALL_TENSORS: a->all_tensors = true; break;
    case OPT_UNFUSED: a->unfused = true; break;
    default: a->tensors_dir = value; break;
    }
    return GL_EXIT_OK;
}

/* --passes when not given: the model as loaded... */
static const char passes_not_given[] = "none";

/* ...except for a fused or unfused run (--backend or --compare), which only a pipeline
 * with a fusion step makes: then the default pipeline, as a newcomer expects of `run
 * --backend fused` (issue 24). A --passes given is kept, and refused below if it does
 * not fuse. */
static void default_passes(run_args *a)
{
    if (a->o.passes == passes_not_given &&
        (gl_session_is_fusion_run(a->o.backend) || gl_session_is_fusion_run(a->compare)))
        a->o.passes = "all";
}

/* GL_EXIT_OK to go on, -1 for --help (done), else the exit code. */
static int parse_args(int argc, char **argv, run_args *a)
{
    const gl_cli_spec spec = {&gl_command_run, own_option, a, NULL};
    gl_session_opts_init(&a->o, passes_not_given);
    int first, rc = gl_cli_parse(&spec, argc, argv, &a->o, &first);
    if (rc != GL_EXIT_OK)
        return rc;
    default_passes(a);
    if (argc - first != 1 && !(a->tensors_dir && argc - first > 1))
        return gl_cli_usage_error("run", "expected one MODEL (tensor NAMEs after it go with "
                                  "--save-tensors DIR)");
    a->model = argv[first];
    a->tensor_names = (const char *const *)argv + first + 1;
    a->n_tensor_names = (size_t)(argc - first - 1);
    if (a->intermediates && !a->compare)
        return gl_cli_usage_error("run", "--intermediates compares two runs: give --compare "
                                  "BACKEND");
    if (a->all_tensors && !a->intermediates)
        return gl_cli_usage_error("run", "--all-tensors goes with --intermediates");
    const char *backend = a->o.backend;
    if ((gl_session_is_fusion_run(backend) || gl_session_is_fusion_run(a->compare)) &&
        !gl_session_fuses(&a->o))
        return gl_cli_usage_error("run", "fused and unfused differ by the fusion pass, which "
                                  "--passes '%s' does not run (try --passes all)", a->o.passes);
    if (a->unfused && (gl_session_is_fusion_run(backend) || gl_session_is_fusion_run(a->compare)))
        return gl_cli_usage_error("run", "--unfused runs every backend on the unfused model; "
                                  "with --backend or --compare fused|unfused say it once");
    if (a->compare && strcmp(a->compare, backend) == 0 && gl_session_is_fusion_run(a->compare))
        return gl_cli_usage_error("run", "--backend and --compare are both %s", a->compare);
    return GL_EXIT_OK;
}

/* ---- running and reporting ------------------------------------------------------------------ */

/* The models a run may execute: as --passes made it, without the fusion steps
 * (--backend/--compare unfused), and the float model (--compare float). */
typedef struct run_sessions {
    const gl_session *main, *unfused, *flt;
} run_sessions;

static bool is_float_run(const char *run)
{
    return run && strcmp(run, "float") == 0;
}

/* The session `run` (a backend, fused, unfused or float) executes, and on which backend. */
static const gl_session *session_of(const run_sessions *ss, const char *run,
                                    const char **backend)
{
    if (is_float_run(run)) {
        *backend = "ref";
        return ss->flt;
    }
    bool unfused;
    *backend = gl_session_backend(run, &unfused);
    return unfused ? ss->unfused : ss->main;
}

static void format_type(const gl_tensor *t, char *buf, size_t len)
{
    gl_format_type(t->dtype, t->rank, t->dims, buf, len);
}

/* Run the model once as `run` (a backend, fused or unfused) says; *outs is malloc'd
 * (n_outputs tensors). `rec` (may be NULL) keeps the run's intermediate tensors. */
static gl_status run_once(const run_sessions *ss, const run_args *a, const char *run,
                          const gl_dataset *d, bool print_plan, gl_inter_rec *rec,
                          gl_tensor ***outs)
{
    const char *backend;
    const gl_session *s = session_of(ss, run, &backend);
    const gl_model *m = s->model;
    gl_exec *e = NULL;
    gl_status st = gl_session_plan(s, &a->o, backend, d, &e);
    if (st != GL_OK)
        return st;
    if (rec)
        gl_inter_rec_attach(rec, e);
    size_t n = m->graph->n_outputs;
    *outs = gl_xcalloc(n ? n : 1, sizeof(**outs));
    st = gl_exec_run(e, (const gl_tensor *const *)d->inputs, d->n_inputs, *outs, n);
    /* After the run: backends choose their implementation for the shapes they see. */
    if (print_plan)
        gl_exec_print_plan(e, stdout);
    gl_exec_free(e);
    if (st != GL_OK) {
        free(*outs);
        *outs = NULL;
    }
    return st;
}

static void free_outputs(gl_tensor **outs, size_t n)
{
    for (size_t i = 0; outs && i < n; i++)
        gl_tensor_free(outs[i]);
    free(outs);
}

/* One line per output; false when any differs beyond the tolerance. `measure`: the
 * lines measure an error that is expected (the quantized run against the float one),
 * end in "quantization error" and never fail. */
static bool report_comparison(const run_args *a, const gl_graph *g, gl_tensor *const *got,
                              gl_tensor *const *expected, const char *label, bool measure)
{
    bool all_ok = true;
    for (size_t i = 0; i < g->n_outputs; i++) {
        if (!expected[i])
            continue;
        gl_compare r;
        gl_tolerance tol = gl_session_tolerance(&a->o);
        gl_compare_value(g->outputs[i], got[i], expected[i], &tol, &r);
        char line[320];
        if (r.same_shape) {
            gl_compare_format(&r, line, sizeof(line));
        } else {
            char tg[128], te[128];
            format_type(got[i], tg, sizeof(tg));
            format_type(expected[i], te, sizeof(te));
            snprintf(line, sizeof(line), "got %s, expected %s", tg, te);
        }
        printf("%s%s: %s: %s\n", gl_esc(g->outputs[i]->name), label, gl_esc(line),
               measure ? "quantization error" : r.ok ? "ok" : "MISMATCH");
        all_ok = all_ok && (r.ok || measure);
    }
    return all_ok;
}

/* The outputs as DIR/output_N.pb, replacing the last ones saved there as a whole
 * (onnx/save_set.h). */
static gl_status save_outputs(const char *dir, gl_tensor *const *outs, size_t n)
{
    gl_save_set set;
    gl_status st = gl_save_set_open(&set, GL_SAVE_OUTPUTS, dir);
    for (size_t i = 0; i < n && st == GL_OK; i++) {
        char name[64];
        snprintf(name, sizeof(name), "output_%zu.pb", i);
        st = gl_save_set_tensor(&set, name, outs[i]);
        if (st != GL_OK)
            gl_save_set_abort(&set);
    }
    return st == GL_OK ? gl_save_set_commit(&set) : st;
}

/* One stderr line (stdout is the outputs' lines, which scripts read): the passes that
 * made the model that ran, with their rewrites, and where the inputs came from. */
static void say_what_ran(const gl_session *s, const run_args *a)
{
    gl_strbuf sb = {0};
    const gl_pipeline *p = s->pipeline;
    if (!p || p->n_steps < 2) {
        gl_sb_printf(&sb, "passes: none (the model as loaded)");
    } else {
        int64_t total = 0;
        gl_sb_printf(&sb, "passes (rewrites):");
        for (size_t k = 1; k < p->n_steps; k++) {
            gl_sb_printf(&sb, "%s %s %lld", k > 1 ? "," : "", p->steps[k].pass->name,
                         (long long)p->steps[k].rewrites);
            total += p->steps[k].rewrites;
        }
        gl_sb_printf(&sb, "; %lld in all%s", (long long)total,
                     a->unfused ? ", fusion steps left out (--unfused)" : "");
    }
    if (a->o.data)
        gl_sb_printf(&sb, "; inputs from %s", a->o.data);
    else
        gl_sb_printf(&sb, "; inputs random (seed 0x%llx; no --data)",
                     (unsigned long long)GL_RANDOM_INPUTS_SEED);
    char dims[512];
    const gl_model *m = p ? gl_pipeline_result(p) : s->loaded;
    if (!a->o.data && m && gl_dataset_random_defaults(m, a->o.dims, a->o.n_dims, dims,
                                                      sizeof(dims)))
        gl_sb_printf(&sb, "; %s (symbolic dims; --dim NAME=V sizes them)", dims);
    char *line = gl_sb_take(&sb);
    size_t cap = 4 * strlen(line) + 1; /* the longest escape of a byte is 4 */
    char *shown = gl_xmalloc(cap);
    gl_escape(shown, cap, line);
    fprintf(stderr, "graphlab run: %s\n", shown);
    free(shown);
    free(line);
}

/* Everything after loading; returns the exit code. */
/* The end of two recorded runs: with --compare float each pair's error (the first
 * run's tensors still saved when asked), else gl_inter_finish's report. */
static gl_status finish_intermediates(const run_args *a, gl_inter_rec *const rec[2],
                                      const gl_qdq_pairs *pairs)
{
    gl_inter_finish_options fo = {
        .tol = gl_session_tolerance(&a->o), .all = a->all_tensors, .save_dir = a->tensors_dir,
        .names = a->n_tensor_names ? a->tensor_names : NULL, .n_names = a->n_tensor_names};
    if (!is_float_run(a->compare) || !rec[1])
        return gl_inter_finish(rec[0], rec[1], &fo, stdout);
    gl_status st = gl_inter_rec_status(rec[1]);
    if (st == GL_OK)
        st = gl_inter_rec_status(rec[0]);
    if (st != GL_OK)
        return st;
    gl_qerror_report r;
    gl_qerror_compare(pairs, rec[0], rec[1], &r);
    gl_qerror_print(&r, a->all_tensors, stdout);
    gl_qerror_report_free(&r);
    return gl_inter_finish(rec[0], NULL, &fo, stdout);
}

static int run_model(const run_sessions *ss, const run_args *a, const gl_qdq_pairs *pairs)
{
    const gl_session *s = ss->main;
    const gl_graph *g = s->model->graph;
    gl_dataset d;
    gl_tensor **outs = NULL, **other = NULL;
    gl_status st = gl_session_inputs(s->model, &a->o, &d);
    if (st != GL_OK)
        return gl_cli_fail(st);
    /* Only what is saved is kept, unless every tensor is compared. */
    gl_inter_rec_options keep = {.label = a->o.backend};
    if (!a->intermediates && a->n_tensor_names)
        keep = (gl_inter_rec_options){.names = a->tensor_names, .n_names = a->n_tensor_names,
                                      .label = a->o.backend};
    gl_inter_rec *rec[2] = {
        a->intermediates || a->tensors_dir ? gl_inter_rec_new(&keep) : NULL,
        a->intermediates ? gl_inter_rec_new(&(gl_inter_rec_options){.label = a->compare})
                         : NULL,
    };
    st = run_once(ss, a, a->o.backend, &d, a->plan, rec[0], &outs);
    if (st == GL_OK && a->compare)
        st = run_once(ss, a, a->compare, &d, false, rec[1], &other);
    if (st == GL_OK && a->save_dir)
        st = save_outputs(a->save_dir, outs, g->n_outputs);
    int rc = GL_EXIT_OK;
    if (st != GL_OK) {
        rc = gl_cli_fail(st);
    } else {
        for (size_t i = 0; i < g->n_outputs; i++) {
            char type[256];
            format_type(outs[i], type, sizeof(type));
            printf("%s: %s\n", gl_esc(g->outputs[i]->name), gl_esc(type));
        }
        bool ok = true;
        if (a->o.data && d.expected)
            ok = report_comparison(a, g, outs, d.expected, "", false) && ok;
        char label[160];
        if (other && is_float_run(a->compare)) {
            snprintf(label, sizeof(label), " [%s vs float]", a->o.backend);
            report_comparison(a, g, outs, other, label, true);
        } else if (other) {
            snprintf(label, sizeof(label), " [%s vs %s]", a->compare, a->o.backend);
            ok = report_comparison(a, g, other, outs, label, false) && ok;
        }
        rc = ok ? GL_EXIT_OK : GL_EXIT_MISMATCH;
        if (rec[0] && (st = finish_intermediates(a, rec, pairs)) != GL_OK)
            rc = gl_cli_fail(st);
        /* Last, and only after a run: a failure stays the one stderr line. */
        if (rc != GL_EXIT_BAD)
            say_what_ran(s, a);
    }
    gl_inter_rec_free(rec[0]);
    gl_inter_rec_free(rec[1]);
    free_outputs(outs, g->n_outputs);
    free_outputs(other, g->n_outputs);
    gl_dataset_free(&d);
    return rc;
}

/* The float model of the model as loaded (not as --passes made it: the passes may have
 * taken its pairs into groups), and its pairs. */
static gl_status open_float(const run_args *a, gl_session *flt, gl_qdq_pairs *pairs)
{
    gl_model *loaded = NULL;
    gl_status st = gl_session_load(a->model, &a->o.settings, &loaded);
    if (st == GL_OK)
        st = gl_session_open_float(loaded, flt, pairs);
    gl_model_free(loaded);
    return st;
}

int gl_cmd_run(int argc, char **argv)
{
    run_args a = {0};
    gl_session s = {0}, unfused = {0}, flt = {0};
    gl_qdq_pairs pairs = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc == GL_EXIT_OK) {
        gl_status st = a.unfused ? gl_session_open_unfused(a.model, &a.o, &s)
                                 : gl_session_open(a.model, &a.o, &s);
        bool want_unfused = (a.compare && strcmp(a.compare, "unfused") == 0) ||
                            strcmp(a.o.backend, "unfused") == 0;
        if (st == GL_OK && want_unfused)
            st = gl_session_open_unfused(a.model, &a.o, &unfused);
        if (st == GL_OK && is_float_run(a.compare))
            st = open_float(&a, &flt, &pairs);
        run_sessions ss = {&s, want_unfused ? &unfused : &s, &flt};
        rc = st == GL_OK ? run_model(&ss, &a, &pairs) : gl_cli_fail(st);
    }
    gl_qdq_pairs_free(&pairs);
    gl_session_end(&flt);
    gl_session_end(&unfused);
    gl_session_end(&s);
    gl_session_opts_free(&a.o);
    return rc < 0 ? GL_EXIT_OK : rc;
}

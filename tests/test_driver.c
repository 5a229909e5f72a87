/* test_driver.c — the command driver (src/driver): the shared options as a table of good
 * and bad values, a model loaded and optimized by gl_session_open and run on the plan it
 * gives, failures that leave nothing behind, and export as a library call. */
#include "testutil.h"
#include "graphnote.h"

#include "driver/driver.h"
#include "driver/export.h"
#include "exec/compare.h"
#include "onnx/onnx_io.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- options ---------------------------------------------------------------------------- */

/* What option `name` left in *o, as a number (the checks of the table). */
static double got(const gl_session_opts *o, const char *name)
{
    if (!strcmp(name, "rtol"))
        return o->rtol;
    if (!strcmp(name, "atol"))
        return o->atol;
    if (!strcmp(name, "threads"))
        return o->threads;
    if (!strcmp(name, "max-memory"))
        return (double)o->max_memory;
    if (!strcmp(name, "max-iterations"))
        return (double)o->max_iterations;
    if (!strcmp(name, "dim"))
        return o->n_dims ? (double)o->dims[o->n_dims - 1].value : -1;
    if (!strcmp(name, "set"))
        return (double)o->settings.n;
    if (!strcmp(name, "data"))
        return o->data != NULL;
    if (!strcmp(name, "passes"))
        return strcmp(o->passes, "none") != 0;
    return -1;
}

typedef struct opt_case {
    const char *name, *value;
    gl_status st;
    const char *message; /* GL_OK: NULL; else a part of the message */
    double want;         /* GL_OK: got(o, name) */
} opt_case;

static const opt_case opt_cases[] = {
    {"passes", "all", GL_OK, NULL, 1},
    {"passes", "toposort,dce:2,toposort", GL_OK, NULL, 1},
    {"passes", "bogus", GL_ERR_INPUT, "bogus", 0},
    {"passes", "toposort:-1", GL_ERR_INPUT, "toposort:-1", 0},
    {"set", "load.freeze-inputs=1", GL_OK, NULL, 1},
    {"set", "nope.x=1", GL_ERR_INPUT, "nope", 0},
    {"data", "/some/dir", GL_OK, NULL, 1},
    {"rtol", "1e-5", GL_OK, NULL, 1e-5},
    {"rtol", "0", GL_OK, NULL, 0},
    {"rtol", "abc", GL_ERR_INPUT, "--rtol 'abc' is not a non-negative number", 0},
    {"rtol", "inf", GL_ERR_INPUT, "--rtol 'inf' is not a non-negative number", 0},
    {"rtol", "", GL_ERR_INPUT, "--rtol '' is not a non-negative number", 0},
    {"atol", "-1", GL_ERR_INPUT, "--atol '-1' is not a non-negative number", 0},
    {"atol", "2.5", GL_OK, NULL, 2.5},
    {"threads", "4", GL_OK, NULL, 4},
    {"threads", "0", GL_OK, NULL, 0},
    {"threads", "many", GL_ERR_INPUT, "--threads 'many' is not a whole number from 0 to ", 0},
    {"threads", "256", GL_OK, NULL, 256},
    {"threads", "100000", GL_ERR_INPUT, "--threads '100000' is over the limit of ", 0},
    {"threads", "-1", GL_ERR_INPUT, "--threads '-1'", 0},
    {"max-memory", "512", GL_OK, NULL, 512},
    {"max-memory", "12K", GL_OK, NULL, 12 * 1024.0},
    {"max-memory", "3m", GL_OK, NULL, 3 * 1048576.0},
    {"max-memory", "2G", GL_OK, NULL, 2 * 1073741824.0},
    {"max-memory", "0", GL_ERR_INPUT, "--max-memory '0' is not a size in bytes", 0},
    {"max-memory", "12X", GL_ERR_INPUT, "--max-memory '12X'", 0},
    {"max-memory", "-5", GL_ERR_INPUT, "--max-memory '-5'", 0},
    {"max-memory", "99999999999G", GL_ERR_INPUT, "--max-memory '99999999999G'", 0},
    {"max-iterations", "7", GL_OK, NULL, 7},
    {"max-iterations", "0", GL_ERR_INPUT, "--max-iterations '0' is not a count of 1 or more", 0},
    {"max-iterations", "many", GL_ERR_INPUT, "--max-iterations 'many'", 0},
    {"dim", "seq=3", GL_OK, NULL, 3},
    {"dim", "batch=0", GL_OK, NULL, 0},
    {"dim", "seq", GL_ERR_INPUT, "--dim 'seq' is not NAME=V with V >= 0", 0},
    {"dim", "=3", GL_ERR_INPUT, "--dim '=3'", 0},
    {"dim", "seq=-1", GL_ERR_INPUT, "--dim 'seq=-1'", 0},
    {"dim", "seq=x", GL_ERR_INPUT, "--dim 'seq=x'", 0},
    {"frobnicate", "1", GL_ERR_INPUT, "unknown option '--frobnicate'", 0},
    {"rtol", NULL, GL_ERR_INPUT, "option '--rtol' needs a value", 0},
};

Test(driver, option_table)
{
    for (size_t i = 0; i < sizeof(opt_cases) / sizeof(opt_cases[0]); i++) {
        const opt_case *c = &opt_cases[i];
        gl_session_opts o;
        gl_session_opts_init(&o, "none");
        gl_status st = gl_session_option_set(&o, c->name, c->value);
        cr_expect_eq(st, c->st, "--%s '%s': status %s, expected %s", c->name,
                     c->value ? c->value : "(none)", gl_status_name(st),
                     gl_status_name(c->st));
        if (st == GL_OK && c->st == GL_OK)
            cr_expect_eq(got(&o, c->name), c->want, "--%s '%s': %g, expected %g", c->name,
                         c->value, got(&o, c->name), c->want);
        if (st != GL_OK && c->message)
            cr_expect(strstr(gl_error_message(), c->message), "--%s: message '%s', expected '%s'",
                      c->name, gl_error_message(), c->message);
        if (st != GL_OK)
            cr_expect_eq(got(&o, c->name), got(&(gl_session_opts){.passes = "none",
                                                                 .rtol = 1e-3, .atol = 1e-4},
                                               c->name),
                         "--%s '%s': a refused value changes nothing", c->name, c->value);
        gl_session_opts_free(&o);
    }
}

/* Every row of the table has a parser: none reaches the "no parser" error, and every one
 * that takes a value says so when it has none. */
Test(driver, every_option_parses)
{
    size_t n;
    const gl_session_option *t = gl_session_option_table(&n);
    unsigned seen = 0;
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(seen & t[i].bit, 0, "--%s: its bit is taken", t[i].name);
        seen |= t[i].bit;
        gl_session_opts o;
        gl_session_opts_init(&o, "none");
        gl_status st = gl_session_option_set(&o, t[i].name, "1");
        cr_expect_neq(st, GL_ERR_INTERNAL, "--%s: %s", t[i].name, gl_error_message());
        if (t[i].has_value)
            cr_expect_eq(gl_session_option_set(&o, t[i].name, NULL), GL_ERR_INPUT,
                         "--%s without a value", t[i].name);
        gl_session_opts_free(&o);
    }
    cr_expect_eq(seen & GL_SOPT_EXECUTE, GL_SOPT_EXECUTE, "every shared option is in the table");
}

/* Repeatable options add up; the others keep the last value. */
Test(driver, repeated_options)
{
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    cr_assert_eq(gl_session_option_set(&o, "dim", "a=1"), GL_OK);
    cr_assert_eq(gl_session_option_set(&o, "dim", "b=2"), GL_OK);
    cr_assert_eq(gl_session_option_set(&o, "set", "load.freeze-inputs=1"), GL_OK);
    cr_assert_eq(gl_session_option_set(&o, "passes", "toposort"), GL_OK);
    cr_assert_eq(gl_session_option_set(&o, "passes", "dce"), GL_OK);
    cr_expect_eq(o.n_dims, 2);
    cr_expect_str_eq(o.dims[0].name, "a");
    cr_expect_str_eq(o.passes, "dce");
    cr_expect_eq(gl_settings_lookup(&o.settings, "load", "freeze-inputs", 0), 1);
    gl_session_opts_free(&o);
}

/* ---- sessions ------------------------------------------------------------------------------ */

#define EXAMPLE "examples/conv_nhwc/model.onnx"

/* The model's outputs on the reference backend, through the driver's inputs and plan. */
static gl_tensor **run_ref(const gl_session *s, const gl_session_opts *o, size_t *n)
{
    gl_dataset d;
    cr_assert_eq(gl_session_inputs(s->model, o, &d), GL_OK, "%s", gl_error_message());
    gl_exec *e = NULL;
    cr_assert_eq(gl_session_plan(s, o, "ref", NULL, &e), GL_OK, "%s", gl_error_message());
    *n = s->model->graph->n_outputs;
    gl_tensor **outs = calloc(*n, sizeof(*outs));
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)d.inputs, d.n_inputs, outs, *n),
                 GL_OK, "%s", gl_error_message());
    gl_exec_free(e);
    gl_dataset_free(&d);
    return outs;
}

static void free_outs(gl_tensor **outs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gl_tensor_free(outs[i]);
    free(outs);
}

/* The whole default pipeline through the library call, then the optimized model run on
 * the plan the driver builds: it computes what the loaded model computes, on the data
 * set that ships with the example. */
Test(driver, pipeline_then_run)
{
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    o.data = tu_src("examples/conv_nhwc/test_data_set_0");
    gl_session opt, plain;
    cr_assert_eq(gl_session_open(tu_src(EXAMPLE), &o, &opt), GL_OK, "%s", gl_error_message());
    size_t n_default;
    gl_pass_default_pipeline(&n_default);
    cr_assert(opt.pipeline, "passes ran: a pipeline");
    cr_expect_null(opt.loaded);
    cr_expect_eq(opt.pipeline->n_steps, n_default + 1, "every pass of 'all' is a step");
    cr_expect_eq(opt.model, gl_pipeline_result(opt.pipeline));
    cr_expect_null(opt.pipeline->failure);

    cr_assert_eq(gl_session_option_set(&o, "passes", "none"), GL_OK);
    cr_assert_eq(gl_session_open(tu_src(EXAMPLE), &o, &plain), GL_OK, "%s", gl_error_message());
    cr_expect_null(plain.pipeline, "no passes: the loaded model alone");
    cr_expect_eq(plain.model, plain.loaded);

    size_t n_a, n_b;
    gl_tensor **a = run_ref(&opt, &o, &n_a), **b = run_ref(&plain, &o, &n_b);
    cr_assert_eq(n_a, n_b);
    gl_dataset d;
    cr_assert_eq(gl_session_inputs(plain.model, &o, &d), GL_OK);
    for (size_t i = 0; i < n_a; i++) {
        gl_compare r;
        gl_compare_tensors(a[i], b[i], 1e-4, 1e-5, &r);
        cr_expect(r.ok, "output %zu: optimized and loaded models differ", i);
        cr_assert(d.expected && d.expected[i], "the example has expected outputs");
        gl_compare_tensors(b[i], d.expected[i], o.rtol, o.atol, &r);
        cr_expect(r.ok, "output %zu differs from the data set", i);
    }
    gl_dataset_free(&d);
    free_outs(a, n_a);
    free_outs(b, n_b);
    gl_session_close(&opt);
    gl_session_close(&plain);
    gl_session_opts_free(&o);
}

static size_t steps_seen;
static gl_status fail_at_two(void *ctx, gl_pipeline *p, size_t k)
{
    (void)ctx, (void)p;
    steps_seen = k + 1;
    return k == 2 ? gl_fail(GL_ERR_IO, "step %zu: refused", k) : GL_OK;
}

/* --passes none with always_pipeline: step 0 alone (optimize, export). A step callback
 * that fails stops the run and keeps the steps before it. */
Test(driver, pipeline_shapes)
{
    gl_session_opts o;
    gl_session_opts_init(&o, "none");
    o.always_pipeline = true;
    gl_session s;
    cr_assert_eq(gl_session_open(tu_src(EXAMPLE), &o, &s), GL_OK, "%s", gl_error_message());
    cr_assert(s.pipeline);
    cr_expect_eq(s.pipeline->n_steps, 1);
    gl_session_close(&s);
    cr_expect_null(s.model, "closed: empty");

    cr_assert_eq(gl_session_option_set(&o, "passes", "toposort,cse,dce,toposort"), GL_OK);
    o.on_step = fail_at_two;
    cr_expect_eq(gl_session_open(tu_src(EXAMPLE), &o, &s), GL_ERR_IO);
    cr_expect_str_eq(gl_error_message(), "step 2: refused");
    cr_assert(s.pipeline, "the steps before the failure are kept");
    cr_expect_eq(steps_seen, 3);
    cr_expect_null(s.pipeline->failure, "not a failure of a pass");
    gl_session_close(&s);
    gl_session_opts_free(&o);
}

typedef struct bad_case {
    const char *path, *passes;
    const char *message;
} bad_case;

/* What cannot be loaded leaves an empty session and a message naming file and node. */
Test(driver, refused)
{
    static const bad_case cases[] = {
        {"tests/data/bad/missing_input.onnx", "all",
         "node 'add_ghost' (Add): input 'ghost' is not produced"},
        {"tests/data/bad/cycle.onnx", "none", "cycle"},
        {"tests/data/bad/truncated.onnx", "all", "truncated.onnx"},
        {"tests/data/no-such-model.onnx", "all", "no-such-model.onnx"},
        {EXAMPLE, "bogus", "bogus"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gl_session_opts o;
        gl_session_opts_init(&o, cases[i].passes);
        o.always_pipeline = true;
        gl_session s;
        cr_expect_neq(gl_session_open(tu_src(cases[i].path), &o, &s), GL_OK, "%s",
                      cases[i].path);
        cr_expect(strstr(gl_error_message(), cases[i].message), "%s: '%s', expected '%s'",
                  cases[i].path, gl_error_message(), cases[i].message);
        cr_expect(!s.pipeline && !s.loaded && !s.model, "%s: nothing kept", cases[i].path);
        gl_session_close(&s);
        gl_session_opts_free(&o);
    }
}

/* ---- export ---------------------------------------------------------------------------------- */

static bool exists(const char *dir, const char *name)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* What `graphlab export` writes, as a library call: every step, decisions.json and
 * index.html; the models of earlier steps are dropped once written. A model that does
 * not load creates no folder. */
Test(driver, export_model)
{
    char *tmp = tu_tmpdir();
    char dir[2048], none[2048];
    snprintf(dir, sizeof(dir), "%s/out", tmp);
    snprintf(none, sizeof(none), "%s/never", tmp);
    gl_session_opts o;
    gl_session_opts_init(&o, "toposort,dce");
    gl_session s;
    gl_status run = GL_ERR_INTERNAL;
    cr_assert_eq(gl_export_model(tu_src(EXAMPLE), &o, dir, NULL, &s, &run), GL_OK, "%s",
                 gl_error_message());
    cr_expect_eq(run, GL_OK);
    cr_assert(s.pipeline);
    cr_expect_eq(s.pipeline->n_steps, 3);
    cr_expect_null(s.pipeline->steps[0].model, "written steps are dropped");
    static const char *const files[] = {
        "00-input.onnx", "00-input.svg", "00-input.dot", "00-input.diff.txt",
        "01-toposort.onnx", "02-dce.onnx", "decisions.json", "index.html"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        cr_expect(exists(dir, files[i]), "%s written", files[i]);
    gl_session_close(&s);

    cr_expect_neq(gl_export_model(tu_src("tests/data/bad/cycle.onnx"), &o, none, NULL, &s,
                                  &run),
                  GL_OK);
    cr_expect(access(none, F_OK) != 0, "no folder for a model that does not load");
    gl_session_close(&s);
    gl_session_opts_free(&o);
    tu_rmtree(tmp);
    free(tmp);
}

static bool stop_at_two(void *ctx, size_t step, size_t n_steps)
{
    (void)n_steps;
    ++*(size_t *)ctx;
    return step < 2;
}


/* The workbench's E cancelled (its progress callback says stop) or finished: a cancelled
 * export leaves neither the folder nor the temporary one; a finished one, without the
 * .onnx files when asked, leaves only the folder. */
Test(driver, export_pipeline_cancelled_leaves_nothing)
{
    char *tmp = tu_tmpdir();
    char dir[2048];
    snprintf(dir, sizeof(dir), "%s/sub/out", tmp);
    gl_session_opts o;
    gl_session_opts_init(&o, "toposort,dce");
    o.pipeline_flags = GL_PIPELINE_KEEP_SNAPSHOTS;
    o.always_pipeline = true;
    gl_session s;
    cr_assert_eq(gl_session_open(tu_src(EXAMPLE), &o, &s), GL_OK, "%s", gl_error_message());
    size_t calls = 0;
    cr_expect_neq(gl_export_pipeline(s.pipeline, EXAMPLE, dir, NULL, stop_at_two, &calls), GL_OK);
    cr_expect_eq(calls, 3, "stopped at the third step");
    cr_expect(access(dir, F_OK) != 0, "no half folder");
    snprintf(dir, sizeof(dir), "%s/sub", tmp);
    cr_expect_eq(tu_dir_entries(dir), 0, "no temporary folder beside it");

    gl_export_opts eo = {.no_onnx = true};
    snprintf(dir, sizeof(dir), "%s/sub/out", tmp);
    cr_expect_eq(gl_export_pipeline(s.pipeline, EXAMPLE, dir, &eo, NULL, NULL), GL_OK, "%s",
                 gl_error_message());
    cr_expect(exists(dir, "01-toposort.svg") && exists(dir, "index.html"));
    cr_expect(!exists(dir, "01-toposort.onnx"), "no .onnx with no_onnx");
    snprintf(dir, sizeof(dir), "%s/sub", tmp);
    cr_expect_eq(tu_dir_entries(dir), 1, "the folder alone, no temporary one");
    gl_session_close(&s);
    gl_session_opts_free(&o);
    tu_rmtree(tmp);
    free(tmp);
}

/* ---- a run's plan and mapped weights --------------------------------------------------------- */

/* `run` makes a plan for one run (gl_session_plan): weights mapped from a file are read
 * where they lie when oneDNN would pack them only to pay back over many runs (a product
 * of few rows); packing read and wrote a 1.2 GB decoder's every weight before its one
 * run (issue 23). Weights in memory, and products of many rows, are packed as before. */
typedef struct plan_case {
    const char *what;
    int64_t rows;     /* of A in A[rows, 256] x W[256, 512] */
    bool external;    /* W saved as external data, mapped when loaded */
    unsigned reorders; /* constant reorders of the plan's one run */
} plan_case;

static const plan_case plan_cases[] = {
    {"16 rows, mapped weights: read in place", 16, true, 0},
    {"256 rows, mapped weights: packed", 256, true, 1},
    {"16 rows, weights in memory: packed", 16, false, 1},
};

static void save_product(const plan_case *c, const char *path)
{
    uint32_t seed = 11;
    gl_model *m = tu_model(13);
    gl_value *a = tu_input(m->graph, "a", GL_DT_FLOAT, 2, (int64_t[]){c->rows, 256});
    gl_value *w = tu_const_tensor(m->graph, "w", tu_random_f32(2, (int64_t[]){256, 512}, &seed));
    tu_output(m->graph, tu_node(m->graph, "MatMul", "p", 2, a, w)->outputs[0]);
    gl_save_options so = {.external_threshold = c->external ? 1024 : 0};
    cr_assert_eq(gl_model_save(m, path, &so), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
}

/* The end of a test of gl_session_plan: its plan, inputs, session and options freed. */
static void plan_done(gl_exec *e, gl_dataset *d, gl_session *s, gl_session_opts *o)
{
    gl_exec_free(e);
    gl_dataset_free(d);
    gl_session_close(s);
    gl_session_opts_free(o);
}

Test(driver, a_run_plan_reads_mapped_weights_in_place)
{
    for (size_t i = 0; i < sizeof(plan_cases) / sizeof(plan_cases[0]); i++) {
        const plan_case *c = &plan_cases[i];
        char *dir = tu_tmpdir(), path[4096];
        snprintf(path, sizeof(path), "%s/m.onnx", dir);
        save_product(c, path);
        gl_session_opts o;
        gl_session_opts_init(&o, "none");
        gl_session s = {0};
        cr_assert_eq(gl_session_open(path, &o, &s), GL_OK, "%s", gl_error_message());
        gl_dataset d;
        cr_assert_eq(gl_session_inputs(s.model, &o, &d), GL_OK, "%s", gl_error_message());
        gl_exec *e = NULL;
        cr_assert_eq(gl_session_plan(&s, &o, "dnnl", NULL, &e), GL_OK, "%s", gl_error_message());
        gl_tensor *out = NULL;
        cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)d.inputs, d.n_inputs, &out, 1),
                     GL_OK, "%s: %s", c->what, gl_error_message());
        gl_exec_stats st;
        gl_exec_get_stats(e, &st);
        /* packed: into brgemm's blocks on AVX-512, into the panels of graphlab's
         * many-rows kernel on AVX2 (more than 8 rows, K 256: dn_matmul.c) */
        cr_expect_eq(st.const_reorders, c->reorders, "%s: %zu constant reorders", c->what,
                     st.const_reorders);
        gl_tensor_free(out);
        plan_done(e, &d, &s, &o);
        tu_rmtree(dir);
        free(dir);
    }
}

/* `run` makes its plan for the run's batch (gl_session_plan of its data set: gl_inputs_batch
 * of the inputs): a symbolic batch sized by --dim is weighed at that size when the layout is
 * chosen (dn_cost.c), not as 1. The graph: a 3x3 convolution and a Concat on whole channel
 * blocks, blocked at batch 8, nhwc at batch 1 (test_dnnl_layout's batch rows). */
Test(driver, a_run_plan_weighs_the_runs_batch)
{
    static const struct {
        const char *dim;
        int64_t batch;
        const char *layout, *says;
    } rows[] = {
        {"N=8", 8, "activations: nChw", "at the run's batch 8"},
        {"N=1", 1, "activations: nhwc", "at the run's batch 1"},
    };
    gn_graph b;
    gl_pipeline *p = gn_run_passes(
        "symbolic batch", 13,
        "in x f32s[N=8,32,14,14]; in y f32s[N=8,32,14,14]; const w f32s[32,32,3,3] = rand; "
        "d = Conv(x, w) pads=[1,1,1,1]; c = Concat(d, y) axis=1; out c",
        NULL, "toposort,shape-inference", &b);
    cr_assert_not_null(p);
    char *dir = tu_tmpdir(), path[4096];
    snprintf(path, sizeof(path), "%s/m.onnx", dir);
    gl_save_options so = {0};
    cr_assert_eq(gl_model_save(p->steps[p->n_steps - 1].model, path, &so), GL_OK, "%s",
                 gl_error_message());
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        gl_session_opts o;
        gl_session_opts_init(&o, "none");
        cr_assert_eq(gl_session_option_set(&o, "dim", rows[i].dim), GL_OK, "%s",
                     gl_error_message());
        gl_session s = {0};
        cr_assert_eq(gl_session_open(path, &o, &s), GL_OK, "%s", gl_error_message());
        gl_dataset d;
        cr_assert_eq(gl_session_inputs(s.model, &o, &d), GL_OK, "%s", gl_error_message());
        int64_t batch = gl_inputs_batch(s.model->graph, (const gl_tensor *const *)d.inputs,
                                        d.n_inputs);
        cr_expect_eq(batch, rows[i].batch, "--dim %s: batch %lld", rows[i].dim,
                     (long long)batch);
        gl_exec *e = NULL;
        cr_assert_eq(gl_session_plan(&s, &o, "dnnl", &d, &e), GL_OK, "%s",
                     gl_error_message());
        char summary[320];
        gl_exec_summary(e, summary, sizeof(summary));
        cr_expect(strstr(summary, rows[i].layout) && strstr(summary, rows[i].says),
                  "--dim %s: %s", rows[i].dim, summary);
        plan_done(e, &d, &s, &o);
    }
    tu_rmtree(dir);
    free(dir);
    gl_pipeline_free(p);
}

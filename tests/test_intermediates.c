/* test_intermediates.c — keeping every tensor of a run, comparing two runs tensor by
 * tensor, naming the first node where they part ways, and writing kept tensors to files.
 *
 * The divergence cases run a model twice: on the reference backend, and on "perturb", a
 * backend that exists only in this program — the reference kernels, except that one
 * element of the first output of one chosen node is moved far past any tolerance. The
 * first divergence must be exactly that node (for a node inside an If/Loop body, the
 * If/Loop node that holds it), and its worst element the one that was moved.
 */
#include "exec/compare.h"
#include "exec/intermediates.h"
#include "driver/inter_save.h"
#include "onnx/save_set.h"
#include "onnx/onnx_io.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the perturbing backend ------------------------------------------------------------ */

/* Criterion runs each test in its own process: these belong to one test. */
static const char *perturb_target;  /* node name; NULL: change nothing */
static int64_t perturb_elem;        /* flat index of the element moved */
static bool perturb_whole_calls;    /* claim calls of model-local functions whole */

static bool perturb_claims(void *ctx, const gl_model *m, const gl_node *n,
                           const gl_function *fn, char *why, size_t why_len)
{
    if (fn)
        return perturb_whole_calls;
    return gl_backend_ref()->claims(ctx, m, n, fn, why, why_len);
}

static void perturb(gl_tensor *t)
{
    if (!t || t->count == 0)
        return;
    int64_t i = perturb_elem < t->count ? perturb_elem : t->count - 1;
    if (t->dtype == GL_DT_FLOAT) {
        float *p = gl_tensor_make_writable(t);
        p[i] += 1.0f + fabsf(p[i]);
    } else if (t->dtype == GL_DT_INT64) {
        ((int64_t *)gl_tensor_make_writable(t))[i] += 1;
    }
}

static gl_status perturb_run(gl_kernel_ctx *k, void **state)
{
    const gl_op_def *def = gl_op_for_node(k->model, k->node);
    gl_status st = def && def->kernel ? gl_backend_ref()->run(k, state)
                                      : gl_eval_node(k->model, k->node, k->in, k->out);
    if (st == GL_OK && perturb_target && k->node->name &&
        strcmp(k->node->name, perturb_target) == 0 && k->n_outputs)
        perturb(k->out[0]);
    return st;
}

static const gl_backend perturb_backend = {
    .name = "perturb",
    .claims = perturb_claims,
    .run = perturb_run,
};

/* ---- helpers ----------------------------------------------------------------------------- */

typedef struct example {
    gl_model *m;
    gl_dataset d;
} example;

static void example_load(example *x, const char *name)
{
    char path[512], data[512];
    snprintf(path, sizeof(path), "examples/%s/model.onnx", name);
    snprintf(data, sizeof(data), "examples/%s/test_data_set_0", name);
    cr_assert_eq(gl_model_load(tu_src(path), NULL, &x->m), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_dataset_load(x->m->graph, tu_src(data), &x->d), GL_OK, "%s",
                 gl_error_message());
}

static void example_free(example *x)
{
    gl_dataset_free(&x->d);
    gl_model_free(x->m);
}

/* One run of x on `backend` (or on `impl`), recorded with options `o` (may be NULL). */
static gl_inter_rec *record(const example *x, const char *backend, const gl_backend *impl,
                            const gl_inter_rec_options *o)
{
    gl_exec_options eo = {.backend = backend, .custom_backend = impl};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(x->m, &eo, &e), GL_OK, "%s", gl_error_message());
    gl_inter_rec *r = gl_inter_rec_new(o);
    gl_inter_rec_attach(r, e);
    size_t n_out = x->m->graph->n_outputs;
    gl_tensor **outs = calloc(n_out, sizeof(*outs));
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)x->d.inputs, x->d.n_inputs, outs,
                             n_out),
                 GL_OK, "%s", gl_error_message());
    for (size_t i = 0; i < n_out; i++)
        gl_tensor_free(outs[i]);
    free(outs);
    gl_exec_free(e); /* the kept tensors outlive the plan */
    return r;
}

/* A model run on ref (a) and on another backend (b), and the report of b against a. */
typedef struct pair {
    example x;
    gl_inter_rec *a, *b;
    gl_inter_report r;
} pair;

static void pair_run(pair *p, const char *model, const char *backend, const gl_backend *impl,
                     double rtol, double atol)
{
    example_load(&p->x, model);
    p->a = record(&p->x, "ref", NULL, NULL);
    p->b = record(&p->x, backend, impl, NULL);
    cr_assert_eq(gl_inter_rec_status(p->a), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_inter_rec_status(p->b), GL_OK, "%s", gl_error_message());
    gl_inter_compare(p->a, p->b, &(gl_tolerance){rtol, atol, 1}, &p->r);
}

static void pair_free(pair *p)
{
    gl_inter_report_free(&p->r);
    gl_inter_rec_free(p->a);
    gl_inter_rec_free(p->b);
    example_free(&p->x);
}

static size_t index_of(const gl_inter_rec *r, const char *key)
{
    for (size_t i = 0; i < gl_inter_rec_count(r); i++)
        if (strcmp(gl_inter_rec_at(r, i)->key, key) == 0)
            return i;
    return SIZE_MAX;
}

/* The report as text. */
static char *report_text(const gl_inter_report *r, bool all)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gl_inter_report_print(r, all, f);
    fclose(f);
    return buf;
}

/* ---- the first divergence ----------------------------------------------------------------- */

typedef struct div_case {
    const char *model;      /* examples/NAME */
    const char *perturb;    /* the node whose output 0 is changed */
    int64_t elem;           /* at this flat index */
    const char *node, *key; /* the first divergence: node and tensor (with call paths) */
    const char *index;      /* its worst element as printed */
    bool graph_output;      /* the perturbed tensor is a graph output */
} div_case;

static const div_case div_cases[] = {
    /* the first node, one in the middle, a multi-dim index, the graph output */
    {"conv_nhwc", "input_to_nchw", 0, "input_to_nchw", "x_nchw", "[0,0,0,0]", false},
    {"conv_nhwc", "conv1", 1234, "conv1", "conv1_out", "[0,1,6,18]", false},
    {"conv_nhwc", "channel_shift", 7, "channel_shift", "shifted", "[0,0,0,7]", false},
    {"conv_nhwc", "output_to_nhwc", 1023, "output_to_nhwc", "features", "[0,7,7,15]", true},
    {"mlp_external", "fc1_matmul", 3, "fc1_matmul", "fc1_mm", "[0,3]", false},
    {"transformer_block", "qk_matmul", 5, "qk_matmul", "scores_raw", "[0,0,0,5]", false},
    {"transformer_block", "gelu_mul", 0, "gelu_mul", "gelu_mul", "[0,0,0]", false},
    /* inside a function body: the body node, keyed by its call */
    {"tiny_if", "Mul_0", 4, "scale_shift::Mul_0", "scale_shift::scaled", "[1,1]", false},
    {"tiny_if", "LeakyRelu_3", 0, "scale_shift::LeakyRelu_3", "scale_shift::Y", "[0,0]", false},
    /* inside If and Loop bodies (data set 0 takes the then branch): the node holding them */
    {"tiny_if", "then_add", 2, "choose", "branch_out", "[0,2]", false},
    {"tiny_if", "body_add", 5, "repeat", "y", "[1,2]", true},
};

Test(intermediates, first_divergence_is_the_perturbed_node)
{
    for (size_t c = 0; c < GL_ARRAY_LEN(div_cases); c++) {
        const div_case *dc = &div_cases[c];
        perturb_target = dc->perturb;
        perturb_elem = dc->elem;
        pair p;
        pair_run(&p, dc->model, NULL, &perturb_backend, 1e-3, 1e-4);
        const gl_inter_report *r = &p.r;
        cr_assert_eq(r->n_rows, gl_inter_rec_count(p.a), "%s/%s: every tensor compared",
                     dc->model, dc->perturb);
        cr_assert_neq(r->first_bad, SIZE_MAX, "%s/%s: no divergence found", dc->model,
                      dc->perturb);
        const gl_inter_row *row = &r->rows[r->first_bad];
        cr_expect_str_eq(row->a->node, dc->node, "%s/%s: first divergence at node '%s'",
                         dc->model, dc->perturb, row->a->node);
        cr_expect_str_eq(row->a->key, dc->key, "%s/%s: first divergence in '%s'", dc->model,
                         dc->perturb, row->a->key);
        cr_expect_eq(r->first_bad, index_of(p.a, dc->key), "%s/%s: rows in the order of the run",
                     dc->model, dc->perturb);
        cr_expect_eq(row->a->graph_output, dc->graph_output, "%s/%s: graph output flag",
                     dc->model, dc->perturb);
        cr_expect_geq(r->outputs_bad, dc->graph_output ? 1u : 0u, "%s/%s", dc->model,
                      dc->perturb);
        if (dc->index) {
            /* One element moved by 1 + |v|, every other equal. */
            cr_expect_eq(row->cmp.worst, dc->elem, "%s/%s: worst element %lld", dc->model,
                         dc->perturb, (long long)row->cmp.worst);
            cr_expect_eq(row->cmp.over_tol, 1, "%s/%s: %lld over tolerance", dc->model,
                         dc->perturb, (long long)row->cmp.over_tol);
            cr_expect_geq(row->cmp.max_abs, 1.0, "%s/%s", dc->model, dc->perturb);
            char *text = report_text(r, false);
            char want[256];
            snprintf(want, sizeof(want), "worst element %s (flat %lld)", dc->index,
                     (long long)dc->elem);
            cr_expect(strstr(text, want), "%s/%s: report lacks \"%s\":\n%s", dc->model,
                      dc->perturb, want, text);
            snprintf(want, sizeof(want), "first divergence: node '%s'", dc->node);
            cr_expect(strstr(text, want), "%s/%s: report lacks \"%s\":\n%s", dc->model,
                      dc->perturb, want, text);
            free(text);
        }
        pair_free(&p);
    }
}

Test(intermediates, unperturbed_runs_agree)
{
    static const char *const models[] = {"conv_nhwc", "mlp_external", "transformer_block",
                                         "tiny_if"};
    for (size_t c = 0; c < GL_ARRAY_LEN(models); c++) {
        pair p;
        pair_run(&p, models[c], NULL, &perturb_backend, 0, 0);
        cr_expect_gt(p.r.n_rows, 0, "%s: tensors kept", models[c]);
        cr_expect_eq(p.r.first_bad, SIZE_MAX, "%s: equal runs diverge at row %zu", models[c],
                     p.r.first_bad);
        cr_expect_eq(p.r.bad + p.r.only_a + p.r.only_b, 0, "%s", models[c]);
        char *text = report_text(&p.r, true);
        cr_expect(strstr(text, "no divergence"), "%s:\n%s", models[c], text);
        free(text);
        pair_free(&p);
    }
}

Test(intermediates, dnnl_agrees_with_ref)
{
    if (!gl_backend_dnnl())
        cr_skip_test("built without oneDNN");
    static const char *const models[] = {"conv_nhwc", "mlp_external", "transformer_block",
                                         "tiny_if"};
    for (size_t c = 0; c < GL_ARRAY_LEN(models); c++) {
        pair p;
        pair_run(&p, models[c], "dnnl", NULL, 1e-3, 1e-4);
        const gl_inter_report *r = &p.r;
        cr_expect_eq(r->n_rows, gl_inter_rec_count(p.a), "%s: every tensor compared", models[c]);
        cr_expect_eq(r->first_bad, SIZE_MAX, "%s: diverges at '%s'", models[c],
                     r->first_bad == SIZE_MAX ? "" : r->rows[r->first_bad].a->key);
        for (size_t i = 0; i < r->n_rows; i++)
            cr_expect_null(r->rows[i].b->t->layout, "%s: '%s' kept plain", models[c],
                           r->rows[i].b->key);
        pair_free(&p);
    }
}

/* One run takes the call whole, the other runs its body: the body's tensors are on one
 * side only and are not compared; the call's outputs are. */
Test(intermediates, call_run_whole_on_one_side)
{
    perturb_whole_calls = true;
    pair p;
    pair_run(&p, "tiny_if", NULL, &perturb_backend, 0, 0);
    /* ScaleShift's body: Mul, Constant, Add, LeakyRelu */
    cr_expect_eq(p.r.only_a, 4, "body tensors kept by ref only: %zu", p.r.only_a);
    cr_expect_eq(p.r.only_b, 0);
    cr_expect_eq(p.r.first_bad, SIZE_MAX);
    cr_expect_neq(index_of(p.b, "fn_out"), SIZE_MAX, "the call's output is kept");
    cr_expect_eq(index_of(p.b, "scale_shift::scaled"), SIZE_MAX);
    cr_expect(gl_inter_rec_find(p.a, "scale_shift::scaled")->in_body);
    char *text = report_text(&p.r, false);
    cr_expect(strstr(text, "not compared: 4 tensors kept by ref only"), "%s", text);
    free(text);
    pair_free(&p);
}

/* ---- fused against unfused ---------------------------------------------------------------- */

/* conv_nhwc after the default pipeline has two fused groups, FusedNhwcConvRelu_1 (conv1,
 * relu1) and FusedNhwcConvRelu_2 (conv2, relu2); the same passes without fusion leave the
 * members apart. The two runs share the tensors at the groups' boundaries (relu1's and
 * relu2's outputs) and those of the nodes no group took; a divergence injected on either
 * side is found at the group's boundary, named by the group. Both runs on the reference
 * kernels (one perturbed): the comparison, not oneDNN, is under test. */
typedef struct fusion_case {
    const char *perturb;   /* node perturbed (NULL: none) */
    bool in_fused;         /* ... in the fused run (else in the unfused one) */
    const char *first;     /* the report's "first divergence: ..." (NULL: none) */
} fusion_case;

static const fusion_case fusion_cases[] = {
    {NULL, false, NULL},
    {"FusedNhwcConvRelu_2", true, "first divergence: fused group 'FusedNhwcConvRelu_2' "
                                  "(FusedNhwcConvRelu_2) in fused, node 'relu2' (Relu) in "
                                  "unfused,"},
    /* a member inside the group: its output is not at the boundary, relu2's is */
    {"conv2", false, "first divergence: fused group 'FusedNhwcConvRelu_2' "
                     "(FusedNhwcConvRelu_2) in fused, node 'relu2' (Relu) in unfused,"},
    {"relu2", false, "first divergence: fused group 'FusedNhwcConvRelu_2'"},
    /* the first group, the same way */
    {"FusedNhwcConvRelu_1", true, "first divergence: fused group 'FusedNhwcConvRelu_1' "
                                  "(FusedNhwcConvRelu_1) in fused, node 'relu1' (Relu) in "
                                  "unfused,"},
    {"conv1", false, "first divergence: fused group 'FusedNhwcConvRelu_1' "
                     "(FusedNhwcConvRelu_1) in fused, node 'relu1' (Relu) in unfused,"},
    /* between the groups: the node itself, on both sides */
    {"channel_scale", true, "first divergence: node 'channel_scale' (Mul) output 0"},
};

/* One run of m on the perturbing backend, perturbing `target` (NULL: nothing). */
static gl_inter_rec *record_model(const gl_model *m, const gl_dataset *d, const char *label,
                                  const char *target)
{
    perturb_target = target;
    gl_exec_options eo = {.custom_backend = &perturb_backend};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &eo, &e), GL_OK, "%s", gl_error_message());
    gl_inter_rec *r = gl_inter_rec_new(&(gl_inter_rec_options){.label = label});
    gl_inter_rec_attach(r, e);
    size_t n_out = m->graph->n_outputs;
    gl_tensor **outs = calloc(n_out, sizeof(*outs));
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)d->inputs, d->n_inputs, outs, n_out),
                 GL_OK, "%s", gl_error_message());
    for (size_t i = 0; i < n_out; i++)
        gl_tensor_free(outs[i]);
    free(outs);
    gl_exec_free(e);
    cr_assert_eq(gl_inter_rec_status(r), GL_OK, "%s", gl_error_message());
    return r;
}

Test(intermediates, fused_against_unfused_at_group_boundaries)
{
    tu_fusion_pair fp;
    tu_fusion_open(&fp, "examples/conv_nhwc/model.onnx");
    perturb_whole_calls = true; /* the group runs whole, as oneDNN runs it */
    for (size_t c = 0; c < GL_ARRAY_LEN(fusion_cases); c++) {
        const fusion_case *fc = &fusion_cases[c];
        perturb_elem = 3;
        gl_inter_rec *u = record_model(fp.unfused.model, &fp.d, "unfused",
                                       fc->in_fused ? NULL : fc->perturb);
        gl_inter_rec *f = record_model(fp.fused.model, &fp.d, "fused",
                                       fc->in_fused ? fc->perturb : NULL);
        gl_inter_report r;
        gl_inter_compare(u, f, &(gl_tolerance){1e-3, 1e-4, 1}, &r);
        cr_expect_eq(r.n_rows, gl_inter_rec_count(f), "case %zu: every tensor of the fused "
                     "run has its twin", c);
        cr_expect_eq(r.only_a, 2, "case %zu: conv1's and conv2's outputs, inside the groups, "
                     "are unfused's only (%zu)", c, r.only_a);
        static const char *const boundaries[] = {"relu1_out0", "relu2_out0"};
        for (size_t b = 0; b < GL_ARRAY_LEN(boundaries); b++) {
            const gl_inter_tensor *boundary = gl_inter_rec_find(f, boundaries[b]);
            cr_assert_not_null(boundary, "the group's output %s is kept under its name",
                               boundaries[b]);
            cr_expect(boundary->group && !gl_inter_rec_find(u, boundaries[b])->group, "%s",
                      boundaries[b]);
        }
        char *text = report_text(&r, false);
        if (fc->first) {
            cr_expect(strstr(text, fc->first), "case %zu: report lacks \"%s\":\n%s", c,
                      fc->first, text);
            cr_expect_neq(r.first_bad, SIZE_MAX, "case %zu", c);
        } else {
            cr_expect_eq(r.first_bad, SIZE_MAX, "case %zu:\n%s", c, text);
            cr_expect(strstr(text, "'relu1'  (fused group 'FusedNhwcConvRelu_1' in fused)") &&
                          strstr(text, "'relu2'  (fused group 'FusedNhwcConvRelu_2' in fused)"),
                      "the boundary rows name their groups:\n%s", text);
        }
        free(text);
        gl_inter_report_free(&r);
        gl_inter_rec_free(u);
        gl_inter_rec_free(f);
    }
    tu_fusion_close(&fp);
}

/* ---- what a recorder keeps -------------------------------------------------------------- */

Test(intermediates, keeps_each_value_once_in_run_order)
{
    example x;
    example_load(&x, "conv_nhwc");
    gl_inter_rec *r = record(&x, "ref", NULL, NULL);
    /* 14 nodes of one output each; 'relu1_out' has two readers, kept once */
    cr_assert_eq(gl_inter_rec_count(r), 14);
    cr_expect_str_eq(gl_inter_rec_at(r, 0)->key, "x_nchw");
    cr_expect_str_eq(gl_inter_rec_at(r, 13)->key, "features");
    cr_expect(gl_inter_rec_at(r, 13)->graph_output);
    cr_expect_not(gl_inter_rec_at(r, 0)->graph_output);
    cr_expect_str_eq(gl_inter_rec_at(r, 1)->op, "Conv");
    cr_expect_str_eq(gl_inter_rec_at(r, 1)->t->name, "conv1_out", "kept tensors carry the key");
    cr_expect_eq(index_of(r, "x"), SIZE_MAX, "graph inputs are not intermediates");
    size_t bytes = 0;
    for (size_t i = 0; i < gl_inter_rec_count(r); i++)
        bytes += gl_tensor_nbytes(gl_inter_rec_at(r, i)->t);
    cr_expect_eq(gl_inter_rec_bytes(r), bytes);
    cr_expect_str_eq(gl_inter_rec_backend(r), "ref");
    gl_inter_rec_free(r);
    example_free(&x);
}

Test(intermediates, keeps_only_the_names_asked)
{
    example x;
    example_load(&x, "conv_nhwc");
    const char *names[] = {"features", "conv1_out", "not_there"};
    gl_inter_rec_options o = {.names = names, .n_names = 3};
    gl_inter_rec *r = record(&x, "ref", NULL, &o);
    cr_assert_eq(gl_inter_rec_count(r), 2);
    cr_expect_str_eq(gl_inter_rec_at(r, 0)->key, "conv1_out", "in run order");
    cr_expect_str_eq(gl_inter_rec_at(r, 1)->key, "features");
    gl_inter_rec_free(r);
    example_free(&x);
}

Test(intermediates, byte_bound_stops_keeping_and_names_the_node)
{
    example x;
    example_load(&x, "conv_nhwc");
    /* x_nchw is 1x3x32x32 floats (12 KiB), conv1_out 1x8x32x32 (32 KiB) */
    gl_inter_rec_options o = {.max_bytes = 20000};
    gl_inter_rec *r = record(&x, "ref", NULL, &o);
    cr_expect_eq(gl_inter_rec_count(r), 1, "kept until the bound");
    cr_expect_leq(gl_inter_rec_bytes(r), o.max_bytes);
    cr_assert_eq(gl_inter_rec_status(r), GL_ERR_INPUT);
    const char *msg = gl_error_message();
    cr_expect(strstr(msg, "model.onnx") && strstr(msg, "node 'conv1' (Conv)") &&
                  strstr(msg, "'conv1_out'") && strstr(msg, "ref run"),
              "message: %s", msg);
    gl_inter_finish_options fo = {.tol = {.rtol = 1e-3}};
    cr_expect_eq(gl_inter_finish(r, NULL, &fo, stdout), GL_ERR_INPUT, "finish reports it");
    gl_inter_rec_free(r);
    example_free(&x);
}

Test(intermediates, a_second_run_starts_afresh)
{
    example x;
    example_load(&x, "mlp_external");
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(x.m, NULL, &e), GL_OK, "%s", gl_error_message());
    gl_inter_rec *r = gl_inter_rec_new(NULL);
    gl_inter_rec_attach(r, e);
    size_t counts[2];
    for (int run = 0; run < 2; run++) {
        gl_tensor *out = NULL;
        cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)x.d.inputs, x.d.n_inputs, &out,
                                 1),
                     GL_OK, "%s", gl_error_message());
        gl_tensor_free(out);
        counts[run] = gl_inter_rec_count(r);
    }
    cr_expect_eq(counts[0], counts[1], "%zu then %zu tensors", counts[0], counts[1]);
    gl_exec_free(e);
    gl_inter_rec_free(r);
    example_free(&x);
}

/* ---- the comparison's new measures --------------------------------------------------------- */

typedef struct cmp_case {
    const char *name;
    int n;
    float got[4], expected[4];
    int64_t worst, nan_got, inf_got, nan_expected, inf_expected;
} cmp_case;

Test(intermediates, compare_worst_element_and_nonfinite_counts)
{
    static const cmp_case cases[] = {
        /* excess |a-b| - (1e-4 + 1e-3|b|): 0.9999-0.1-..., element 1 is farthest */
        {"largest excess", 3, {1, 5, 3}, {1, 4, 2.5f}, 1, 0, 0, 0, 0},
        /* a relative miss on a small value beats a bigger absolute one within tolerance */
        {"relative", 2, {1000.5f, 0.01f}, {1000, 0}, 1, 0, 0, 0, 0},
        /* NaN/Inf mismatches come first, the first of them */
        {"nan first", 4, {0, NAN, 9, INFINITY}, {0, 0, 0, 1}, 1, 1, 1, 0, 0},
        /* matching NaNs and Infs are counted but are not mismatches */
        {"matching", 3, {NAN, -INFINITY, 2}, {NAN, -INFINITY, 2.5f}, 2, 1, 1, 1, 1},
        {"equal", 2, {1, 2}, {1, 2}, 0, 0, 0, 0, 0},
    };
    int64_t dims[1];
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        const cmp_case *k = &cases[c];
        dims[0] = k->n;
        gl_tensor *g = tu_tensor_f32(1, dims, k->got), *e = tu_tensor_f32(1, dims, k->expected);
        gl_compare r;
        gl_compare_tensors(g, e, 1e-3, 1e-4, &r);
        cr_expect_eq(r.worst, k->worst, "%s: worst %lld", k->name, (long long)r.worst);
        cr_expect_eq(r.nan_got, k->nan_got, "%s: nan_got", k->name);
        cr_expect_eq(r.inf_got, k->inf_got, "%s: inf_got", k->name);
        cr_expect_eq(r.nan_expected, k->nan_expected, "%s: nan_expected", k->name);
        cr_expect_eq(r.inf_expected, k->inf_expected, "%s: inf_expected", k->name);
        gl_tensor_free(g);
        gl_tensor_free(e);
    }
}

/* ---- writing them ------------------------------------------------------------------------- */

/* x -> Relu -> Neg -> Abs -> Sigmoid, the values named to try to leave the folder. */
static gl_model *hostile_names_model(void)
{
    static const int64_t d[] = {2, 2};
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    static const char *const names[] = {"../escape", "a/b/../../c", "/abs\nline", ".."};
    static const char *const ops[] = {"Relu", "Neg", "Abs", "Sigmoid"};
    gl_value *v = tu_input(g, "x", GL_DT_FLOAT, 2, d);
    for (size_t i = 0; i < GL_ARRAY_LEN(ops); i++) {
        char nm[16];
        snprintf(nm, sizeof(nm), "n%zu", i);
        gl_node *n = tu_node(g, ops[i], nm, 1, v);
        cr_assert_eq(gl_rename_value(g, n->outputs[0], names[i]), GL_OK, "%s",
                     gl_error_message());
        v = n->outputs[0];
    }
    tu_output(g, v);
    return m;
}

Test(intermediates, save_keeps_every_name_inside_the_folder)
{
    example x = {.m = hostile_names_model()};
    x.d.n_inputs = 1;
    x.d.inputs = calloc(1, sizeof(*x.d.inputs));
    x.d.inputs[0] = tu_tensor_f32(2, (const int64_t[]){2, 2}, (const float[]){-1, 2, -3, 4});
    gl_inter_rec *r = record(&x, "ref", NULL, NULL);
    cr_assert_eq(gl_inter_rec_count(r), 4);
    char *tmp = tu_tmpdir();
    char dir[1024], path[2048];
    snprintf(dir, sizeof(dir), "%s/tensors", tmp);
    cr_assert_eq(gl_inter_save(r, dir, NULL, 0), GL_OK, "%s", gl_error_message());
    cr_expect_eq(tu_dir_entries(tmp), 1, "nothing written beside the folder");
    cr_expect_eq(tu_dir_entries(dir), 5, "four tensors and the index");
    snprintf(path, sizeof(path), "%s/index.json", dir);
    size_t len = 0;
    char *index = tu_read_file(path, &len);
    cr_assert_not_null(index);
    DIR *d = opendir(dir);
    size_t read_back = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strstr(e->d_name, ".pb"))
            continue;
        cr_expect_null(strchr(e->d_name, '/'));
        cr_expect(gl_save_tensor_file_name(e->d_name), "%s: a name saves give", e->d_name);
        cr_expect(strstr(index, e->d_name), "index.json names %s", e->d_name);
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        gl_tensor *t = NULL;
        cr_assert_eq(gl_tensor_read_pb(path, &t), GL_OK, "%s", gl_error_message());
        const gl_inter_tensor *kept = gl_inter_rec_find(r, t->name);
        cr_assert_not_null(kept, "%s: read back as '%s', not a kept name", e->d_name, t->name);
        cr_expect(gl_tensor_equal(t, kept->t), "%s: the same tensor", e->d_name);
        gl_tensor_free(t);
        read_back++;
    }
    if (d)
        closedir(d);
    cr_expect_eq(read_back, 4);
    cr_expect(strstr(index, "\"0001_.._escape."), "index: %s", index);
    cr_expect(strstr(index, "\"name\": \"/abs\\nline\""), "index escapes names: %s", index);
    free(index);
    /* and the report keeps each name on its line */
    gl_inter_report rep;
    gl_inter_compare(r, r, &(gl_tolerance){0, 0, 0}, &rep);
    char *text = report_text(&rep, true);
    cr_expect(strstr(text, "'/abs\\x0aline' float[2,2]  Abs 'n2'"), "%s", text);
    free(text);
    gl_inter_report_free(&rep);
    tu_rmtree(tmp);
    free(tmp);
    gl_inter_rec_free(r);
    example_free(&x);
}

Test(intermediates, save_chosen_names_and_refuse_unknown_ones)
{
    example x;
    example_load(&x, "conv_nhwc");
    gl_inter_rec *r = record(&x, "ref", NULL, NULL);
    char *tmp = tu_tmpdir();
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/t", tmp);
    const char *bad[] = {"conv1_out", "nope"};
    cr_expect_eq(gl_inter_save(r, dir, bad, 2), GL_ERR_INPUT);
    cr_expect(strstr(gl_error_message(), "'nope'"), "%s", gl_error_message());
    cr_expect_eq(tu_dir_entries(tmp), 0, "nothing written on a bad name");
    const char *good[] = {"features", "conv1_out"};
    cr_assert_eq(gl_inter_save(r, dir, good, 2), GL_OK, "%s", gl_error_message());
    cr_expect_eq(tu_dir_entries(dir), 3);
    /* 0002_conv1_out.ID.pb, ID the save's */
    char path[2048] = "";
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, "0002_conv1_out.", 15) == 0 && gl_save_tensor_file_name(e->d_name))
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    if (d)
        closedir(d);
    gl_tensor *t = NULL;
    cr_assert_eq(gl_tensor_read_pb(path, &t), GL_OK, "%s", gl_error_message());
    cr_expect(gl_tensor_equal(t, gl_inter_rec_find(r, "conv1_out")->t));
    gl_tensor_free(t);
    tu_rmtree(tmp);
    free(tmp);
    gl_inter_rec_free(r);
    example_free(&x);
}

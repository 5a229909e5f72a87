/* test_profile.c — the profile module's numbers: statistics of known samples, FLOPs and
 * bytes of known nodes, rows matched across backends, and the comparison columns checked
 * against comparisons computed apart from the profiler; the trace written as the runs go,
 * in memory that does not grow with them. No timing is asserted. */
#define _GNU_SOURCE /* fopencookie, mallinfo2 */
#include "exec/compare.h"
#include "exec/exec.h"
#include "exec/profile.h"
#include "onnx/onnx_io.h"
#include "util/json.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- statistics ------------------------------------------------------------------------ */

Test(profile, stats_of_known_samples)
{
    static const struct {
        const char *name;
        size_t n;
        double ns[6];
        double median, min, max; /* ms */
    } cases[] = {
        {"one", 1, {2e6}, 2, 2, 2},
        {"odd, unsorted", 5, {5e6, 1e6, 4e6, 2e6, 3e6}, 3, 1, 5},
        {"even: mean of the middle two", 4, {4e6, 1e6, 3e6, 2e6}, 2.5, 1, 4},
        {"repeats", 6, {7e5, 7e5, 1e5, 9e5, 7e5, 2e5}, 0.7, 0.1, 0.9},
        {"an outlier does not move the median", 5, {1e6, 1e6, 1e6, 1e6, 9e9}, 1, 1, 9000},
        {"no samples", 0, {0}, 0, 0, 0},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        double s[6];
        memcpy(s, cases[i].ns, sizeof(s));
        gl_profile_stat st = gl_profile_stats(s, cases[i].n);
        cr_expect_float_eq(st.median, cases[i].median, 1e-12, "%s: median %g", cases[i].name,
                           st.median);
        cr_expect_float_eq(st.min, cases[i].min, 1e-12, "%s: min %g", cases[i].name, st.min);
        cr_expect_float_eq(st.max, cases[i].max, 1e-12, "%s: max %g", cases[i].name, st.max);
    }
}

/* ---- FLOPs and bytes ---------------------------------------------------------------------- */

/* A float tensor of these dims; one whose type is not known; an omitted input. */
#define T(...)                                                                            \
    {.present = true, .dtype = GL_DT_FLOAT,                                              \
     .rank = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),                  \
     .dims = (int64_t[]){__VA_ARGS__}}
#define UNKNOWN {.present = true, .dtype = GL_DT_FLOAT, .rank = -1}
#define OMITTED {.present = false, .rank = -1}

Test(profile, flops_of_known_nodes)
{
    const struct {
        const char *name, *op;
        int64_t trans_a; /* -1: attribute absent */
        size_t n_in;
        gl_profile_type in[3];
        gl_profile_type out;
        int64_t flops;
    } cases[] = {
        /* 2 x (output elements) x (C/group x kh x kw) */
        {"conv 3x3, 3->16 channels", "Conv", -1, 3,
         {T(1, 3, 64, 64), T(16, 3, 3, 3), T(16)}, T(1, 16, 64, 64), 2LL * 16 * 64 * 64 * 27},
        {"depthwise 3x3 on 32 channels", "Conv", -1, 2, {T(1, 32, 56, 56), T(32, 1, 3, 3)},
         T(1, 32, 56, 56), 2LL * 32 * 56 * 56 * 9},
        {"conv 1x1 stride 2, batch 2", "Conv", -1, 2, {T(2, 8, 10, 10), T(4, 8, 1, 1)},
         T(2, 4, 5, 5), 2LL * 2 * 4 * 25 * 8},
        {"conv 1-D", "Conv", -1, 2, {T(1, 4, 16), T(6, 4, 5)}, T(1, 6, 12), 2LL * 72 * 20},
        /* every input element times (M/group x kernel) */
        {"conv transpose 8->4, 3x3", "ConvTranspose", -1, 2, {T(1, 8, 4, 4), T(8, 4, 3, 3)},
         T(1, 4, 9, 9), 2LL * 128 * 36},
        /* 2 x (output elements) x K */
        {"matmul rank 4", "MatMul", -1, 2, {T(2, 3, 5, 7), T(2, 3, 7, 11)}, T(2, 3, 5, 11),
         2LL * 330 * 7},
        {"matmul broadcast weight", "MatMul", -1, 2, {T(1, 16, 128), T(128, 512)},
         T(1, 16, 512), 2LL * 16 * 512 * 128},
        {"matmul vector", "MatMul", -1, 2, {T(7), T(7, 3)}, T(3), 2LL * 3 * 7},
        {"gemm", "Gemm", -1, 3, {T(4, 6), T(6, 9), T(9)}, T(4, 9), 2LL * 36 * 6},
        {"gemm transA", "Gemm", 1, 2, {T(7, 5), T(7, 9)}, T(5, 9), 2LL * 45 * 7},
        {"gemm transA=0 given", "Gemm", 0, 2, {T(5, 7), T(7, 9)}, T(5, 9), 2LL * 45 * 7},
        {"not counted", "Relu", -1, 1, {T(4, 4)}, T(4, 4), -1},
        {"weight unknown", "Conv", -1, 2, {T(1, 3, 8, 8), UNKNOWN}, T(1, 4, 6, 6), -1},
        {"output unknown", "MatMul", -1, 2, {T(2, 3), T(3, 4)}, UNKNOWN, -1},
        {"overflow", "MatMul", -1, 2, {T(1 << 30, 1 << 30), T(1 << 30, 1 << 30)},
         T(1 << 30, 1 << 30), -1},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(13);
        gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (int64_t[]){1, 1});
        gl_value *w = tu_input(m->graph, "w", GL_DT_FLOAT, 2, (int64_t[]){1, 1});
        gl_node *n = tu_node(m->graph, cases[i].op, "n", 2, x, w);
        if (cases[i].trans_a >= 0)
            gl_node_set_attr_int(n, "transA", cases[i].trans_a);
        int64_t f = gl_profile_flops(n, cases[i].in, cases[i].n_in, &cases[i].out, 1);
        cr_expect_eq(f, cases[i].flops, "%s: %lld flops, expected %lld", cases[i].name,
                     (long long)f, (long long)cases[i].flops);
        gl_model_free(m);
    }
}

Test(profile, bytes_count_each_tensor_once)
{
    gl_profile_type in[3] = {
        T(2, 3), {.present = true, .constant = true, .dtype = GL_DT_INT64, .rank = 1,
                  .dims = (int64_t[]){4}},
        OMITTED};
    gl_profile_type out[1] = {T(6)};
    cr_expect_eq(gl_profile_bytes(in, 3, out, 1), 24 + 32 + 24);
    gl_profile_type scalar[1] = {{.present = true, .dtype = GL_DT_DOUBLE, .rank = 0}};
    cr_expect_eq(gl_profile_bytes(scalar, 1, NULL, 0), 8);
    gl_profile_type unknown[2] = {T(2, 3), UNKNOWN};
    cr_expect_eq(gl_profile_bytes(unknown, 2, out, 1), -1, "a present tensor of unknown type");
}

/* ---- profiles of small models ---------------------------------------------------------------- */

/* x -> Conv(w, b) -> c -> Relu -> r; both c and r are graph outputs. */
static gl_model *conv_relu(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    float wv[8 * 3 * 3 * 3], bv[8];
    for (size_t i = 0; i < GL_ARRAY_LEN(wv); i++)
        wv[i] = (float)((int)(i * 37 % 17) - 8) / 8.0f;
    for (size_t i = 0; i < GL_ARRAY_LEN(bv); i++)
        bv[i] = (float)i / 16.0f - 0.25f;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){1, 3, 12, 12});
    gl_value *w = tu_const_f32(g, "w", 4, (int64_t[]){8, 3, 3, 3}, wv);
    gl_value *b = tu_const_f32(g, "b", 1, (int64_t[]){8}, bv);
    gl_node *c = tu_node(g, "Conv", "conv", 3, x, w, b);
    gl_node_set_attr_ints(c, "pads", (int64_t[]){1, 1, 1, 1}, 4);
    gl_node *r = tu_node(g, "Relu", "relu", 1, c->outputs[0]);
    tu_output(g, c->outputs[0]);
    tu_output(g, r->outputs[0]);
    return m;
}

static gl_tensor *input_for(const gl_model *m)
{
    const gl_value *v = m->graph->inputs[0];
    int64_t dims[4];
    for (int d = 0; d < v->type.shape.rank; d++)
        dims[d] = v->type.shape.dims[d].value;
    gl_tensor *t = gl_tensor_new(GL_DT_FLOAT, v->type.shape.rank, dims);
    float *p = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < t->count; i++)
        p[i] = (float)((i * 7919) % 211) / 50.0f - 2.0f;
    return t;
}

/* The trace of a profile, as text: options.trace on a memory stream. */
typedef struct trace_text {
    char *text;
    size_t len;
    FILE *f;
} trace_text;

static void trace_open(trace_text *t, gl_profile_options *o)
{
    *t = (trace_text){0};
    t->f = open_memstream(&t->text, &t->len);
    cr_assert_not_null(t->f);
    o->trace = t->f;
}

static void trace_close(trace_text *t)
{
    fclose(t->f);
    t->f = NULL;
}

/* Events (lines) of the trace whose name holds `name` ("model_run", "_kernel_time"). */
static size_t trace_count(const trace_text *t, const char *name)
{
    size_t n = 0;
    char key[128];
    snprintf(key, sizeof(key), "\"name\":\"");
    for (const char *p = strstr(t->text, key); p; p = strstr(p + 1, key)) {
        const char *end = strchr(p + strlen(key), '"');
        const char *hit = strstr(p + strlen(key), name);
        n += hit && end && hit < end;
    }
    return n;
}

static size_t row_named(const gl_profile *p, const char *name)
{
    for (size_t r = 0; r < p->n_rows; r++)
        if (strcmp(p->rows[r].name, name) == 0)
            return r;
    return SIZE_MAX;
}

/* Run m once on `backend`; its outputs into out[]. */
static void run_apart(const gl_model *m, const char *backend, const gl_tensor *in,
                      gl_tensor **out)
{
    gl_exec *e = NULL;
    gl_exec_options o = {.backend = backend};
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_exec_run(e, &in, 1, out, m->graph->n_outputs), GL_OK, "%s",
                 gl_error_message());
    gl_exec_free(e);
}

static void expect_same_compare(const gl_compare *got, const gl_compare *want, const char *what)
{
    cr_expect_eq(got->ok, want->ok, "%s: ok", what);
    cr_expect_eq(got->over_tol, want->over_tol, "%s: over_tol", what);
    cr_expect(got->max_abs == want->max_abs, "%s: max_abs %g, apart %g", what, got->max_abs,
              want->max_abs);
    cr_expect(got->max_rel == want->max_rel, "%s: max_rel %g, apart %g", what, got->max_rel,
              want->max_rel);
    cr_expect(got->nmse == want->nmse, "%s: nmse %g, apart %g", what, got->nmse, want->nmse);
}

/* The compare column of each node, and of each graph output, is what comparing the two
 * backends' outputs apart gives; with zero tolerance the first node is where the runs
 * part ways (oneDNN does not add in the reference kernel's order). */
Test(profile, comparison_columns_match_comparisons_made_apart)
{
    if (!gl_backend_dnnl())
        cr_skip_test("built without oneDNN");
    static const double tolerances[][2] = {{1e-3, 1e-4}, {0, 0}};
    for (size_t t = 0; t < GL_ARRAY_LEN(tolerances); t++) {
        double rtol = tolerances[t][0], atol = tolerances[t][1];
        gl_model *m = conv_relu();
        gl_tensor *in = input_for(m);
        gl_profile_options o = {.backends = {"dnnl", "ref"}, .n_backends = 2, .reps = 2,
                                .warmup = 1, .rtol = rtol, .atol = atol};
        gl_profile *p = NULL;
        cr_assert_eq(gl_profile_run(m, (const gl_tensor *const *)&in, 1, &o, &p), GL_OK, "%s",
                     gl_error_message());
        cr_assert_eq(p->n_backends, 2);
        cr_expect_str_eq(p->backends[0].name, "ref", "the reference runs first");
        cr_expect_eq(p->ref, 0);
        cr_expect_eq(p->primary, 1);
        cr_assert_eq(p->n_rows, 2);
        gl_tensor *ref[2], *dnnl[2];
        run_apart(m, "ref", in, ref);
        run_apart(m, "dnnl", in, dnnl);
        const char *names[2] = {"conv", "relu"};
        bool all_ok = true;
        for (size_t k = 0; k < 2; k++) {
            gl_compare want;
            gl_compare_tensors(dnnl[k], ref[k], rtol, atol, &want);
            all_ok = all_ok && want.ok;
            size_t r = row_named(p, names[k]);
            cr_assert_neq(r, SIZE_MAX, "row %s", names[k]);
            const gl_profile_cell *c = &p->rows[r].cells[1];
            cr_expect(c->ran && c->compared, "%s is compared", names[k]);
            cr_expect_str_eq(c->backend, "dnnl", "%s ran on dnnl", names[k]);
            cr_expect(!p->rows[r].cells[0].compared, "the reference is not compared to itself");
            expect_same_compare(&c->cmp, &want, names[k]);
            expect_same_compare(&p->backends[1].outputs[k], &want, "graph output");
            cr_expect_eq(c->calls, 1);
        }
        cr_expect_eq(p->backends[1].outputs_ok, all_ok);
        if (rtol == 0) {
            cr_expect(!all_ok, "oneDNN's conv agrees bit for bit: the zero-tolerance case "
                      "tests nothing");
            cr_expect_eq(p->backends[1].first_divergence, row_named(p, "conv"));
        } else {
            cr_expect(all_ok);
            cr_expect_eq(p->backends[1].first_divergence, SIZE_MAX);
        }
        /* the FLOPs and bytes of the conv, from the shapes the run saw */
        const gl_profile_row *conv = &p->rows[row_named(p, "conv")];
        cr_expect_eq(conv->flops, 2LL * 8 * 12 * 12 * 27);
        cr_expect_eq(conv->bytes, 4LL * (3 * 144 + 8 * 27 + 8 + 8 * 144));
        cr_expect(conv->in[1].constant && !conv->in[0].constant, "weights are parameters");
        for (size_t k = 0; k < 2; k++) {
            gl_tensor_free(ref[k]);
            gl_tensor_free(dnnl[k]);
        }
        gl_profile_free(p);
        gl_tensor_free(in);
        gl_model_free(m);
    }
}

/* Shares of the total add up to 100 on each backend; every plan entry has a row. */
Test(profile, shares_and_rows)
{
    gl_model *m = conv_relu();
    gl_tensor *in = input_for(m);
    gl_profile_options o = {.backends = {"ref"}, .n_backends = 1, .reps = 3};
    trace_text t;
    trace_open(&t, &o);
    gl_profile *p = NULL;
    cr_assert_eq(gl_profile_run(m, (const gl_tensor *const *)&in, 1, &o, &p), GL_OK, "%s",
                 gl_error_message());
    trace_close(&t);
    cr_expect_eq(p->ref, 0);
    cr_expect_eq(p->primary, 0);
    double sum = 0;
    for (size_t r = 0; r < p->n_rows; r++)
        sum += p->rows[r].cells[0].pct;
    if (p->backends[0].node_ms > 0)
        cr_expect_float_eq(sum, 100.0, 1e-9, "shares add up to %g", sum);
    cr_expect(!p->backends[0].compared, "nothing to compare the reference with");
    /* trace: a plan build, then per timed run a run, its step loop and two nodes */
    cr_expect_eq(trace_count(&t, "session_initialization"), 1);
    cr_expect_eq(trace_count(&t, "model_run"), 3);
    cr_expect_eq(trace_count(&t, "SequentialExecutor::Execute"), 3);
    cr_expect_eq(trace_count(&t, "_kernel_time"), 6);
    cr_expect_eq(p->n_events, 13);
    cr_expect(strncmp(t.text, "[\n{", 3) == 0 && strcmp(t.text + t.len - 4, "}\n]\n") == 0,
              "an array, one event a line: %s", t.text);
    free(t.text);
    gl_profile_free(p);
    gl_tensor_free(in);
    gl_model_free(m);
}

/* Heap in use, as glibc counts it (under a sanitizer's allocator glibc's heap is unused
 * and the test below proves nothing). */
static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* A stream that keeps nothing: it notes the heap in use each time stdio writes to it. */
typedef struct heap_watch {
    size_t writes, bytes;
    size_t first, last; /* heap in use at the first and the last write */
} heap_watch;

static ssize_t watch_write(void *cookie, const char *buf, size_t size)
{
    (void)buf;
    heap_watch *w = cookie;
    size_t h = heap_in_use();
    if (!w->writes++)
        w->first = h;
    w->last = h;
    w->bytes += size;
    return (ssize_t)size;
}

/* The trace goes out as the rounds run and the profile keeps none of it: the heap grows
 * no more from the first write to the last of 2000 rounds than of 20, and the profile
 * returned holds as much after 2000 rounds as after 20. (Events kept in the profile, as
 * before issue 26, grew the heap by 40 bytes an event: 4 events a round here, 320 KB.) */
Test(profile, trace_memory_does_not_grow_with_the_rounds)
{
    gl_model *m = conv_relu();
    gl_tensor *in = input_for(m);
    /* a first profile, not measured, makes what is made once for good (kernel tables) */
    static const int reps[3] = {1, 20, 2000};
    long kept[3], during[3];
    size_t bytes[3];
    for (int k = 0; k < 3; k++) {
        heap_watch w = {0};
        FILE *f = fopencookie(&w, "w", (cookie_io_functions_t){.write = watch_write});
        cr_assert_not_null(f);
        gl_profile_options o = {.backends = {"ref"}, .n_backends = 1, .reps = reps[k],
                                .trace = f};
        long before = (long)heap_in_use();
        gl_profile *p = NULL;
        cr_assert_eq(gl_profile_run(m, (const gl_tensor *const *)&in, 1, &o, &p), GL_OK, "%s",
                     gl_error_message());
        kept[k] = (long)heap_in_use() - before;
        during[k] = (long)w.last - (long)w.first;
        cr_expect_eq(p->n_events, 1 + 4 * (size_t)reps[k]);
        gl_profile_free(p);
        fclose(f);
        bytes[k] = w.bytes;
    }
    cr_expect_gt(bytes[2], 50 * bytes[1], "the trace itself grows: %zu, %zu bytes", bytes[1],
                 bytes[2]);
    cr_expect_lt(during[2], 4096, "the heap grew by %ld bytes over 2000 rounds", during[2]);
    cr_expect_lt(labs(kept[2] - kept[1]), 4096, "the profile keeps %ld bytes after 20 rounds, "
                 "%ld after 2000", kept[1], kept[2]);
    gl_tensor_free(in);
    gl_model_free(m);
}

/* Nodes inside a function body, an If's branches and a Loop's body get rows of their
 * own, one deeper, under their node; the Loop's body runs more than once a run, so its
 * nodes are timed (summed over the calls) but not compared. */
Test(profile, body_nodes_are_rows_under_their_node)
{
    gl_model *m = NULL;
    cr_assert_eq(gl_model_load(tu_src("examples/tiny_if/model.onnx"), NULL, &m), GL_OK, "%s",
                 gl_error_message());
    gl_dataset d;
    cr_assert_eq(gl_dataset_load(m->graph, tu_src("examples/tiny_if/test_data_set_0"), &d),
                 GL_OK, "%s", gl_error_message());
    gl_profile_options o = {.n_backends = 0, .reps = 2, .rtol = 1e-3, .atol = 1e-4};
    gl_profile *p = NULL;
    cr_assert_eq(gl_profile_run(m, (const gl_tensor *const *)d.inputs, d.n_inputs, &o, &p),
                 GL_OK, "%s", gl_error_message());
    size_t last = p->n_backends - 1;
    size_t under[3] = {0}; /* ScaleShift, If, Loop */
    for (size_t r = 0; r < p->n_rows; r++) {
        const gl_profile_row *row = &p->rows[r];
        if (row->depth == 0) {
            cr_expect_eq(row->parent, SIZE_MAX);
            continue;
        }
        cr_assert_lt(row->parent, p->n_rows);
        const gl_profile_row *parent = &p->rows[row->parent];
        cr_expect_eq(row->depth, parent->depth + 1, "%s", row->name);
        const gl_profile_cell *c = &row->cells[0];
        if (strcmp(parent->op, "ScaleShift") == 0) {
            under[0]++;
            cr_expect_eq(c->calls, 1, "%s runs once", row->name);
        } else if (strcmp(parent->op, "If") == 0) {
            under[1]++;
            cr_expect_leq(c->calls, 1, "%s: one branch, once", row->name);
        } else if (strcmp(parent->op, "Loop") == 0) {
            under[2]++;
            cr_expect_gt(c->calls, 1, "%s runs every iteration", row->name);
            cr_expect(!row->cells[last].compared, "%s: no comparison", row->name);
        } else {
            cr_expect_fail("%s sits under %s", row->name, parent->op);
        }
    }
    cr_expect(under[0] && under[1] && under[2], "rows under the function call %zu, the If %zu, "
              "the Loop %zu", under[0], under[1], under[2]);
    gl_profile_free(p);
    gl_dataset_free(&d);
    gl_model_free(m);
}

/* Fused and unfused runs of conv_nhwc (conv1 + relu1 and conv2 + relu2 become two groups
 * under the default pipeline): the unfused model's nodes join the fused model's rows by
 * name, a group's members sit under it with the unfused times, summed into the group's
 * members_ms; the totals count each run's own top-level nodes. Both runs on the reference
 * kernels, so the body of a group runs too: its rows are the very rows the unfused nodes
 * join. */
Test(profile, unfused_nodes_join_their_group)
{
    tu_fusion_pair fp;
    tu_fusion_open(&fp, "examples/conv_nhwc/model.onnx");
    gl_profile_options o = {.backends = {"ref", "ref", "ref"},
                            .labels = {"unfused", "ref", "fused"},
                            .models = {fp.unfused.model, NULL, NULL},
                            .n_backends = 3, .reps = 2, .rtol = 1e-3, .atol = 1e-4};
    gl_profile *p = NULL;
    const gl_tensor *const *in = (const gl_tensor *const *)fp.d.inputs;
    cr_assert_eq(gl_profile_run(fp.fused.model, in, fp.d.n_inputs, &o, &p), GL_OK, "%s",
                 gl_error_message());
    cr_assert_eq(p->n_backends, 3);
    cr_expect_str_eq(p->backends[0].name, "ref", "the reference first");
    cr_expect_str_eq(p->backends[1].name, "fused", "then the runs on the profiled model");
    cr_expect_str_eq(p->backends[2].name, "unfused", "the run on another model last");
    cr_expect(p->backends[2].other_model && !p->backends[1].other_model);
    cr_expect_eq(p->primary, 1, "the table sorts by the last run on the profiled model");
    const size_t U = 2;
    size_t groups = 0, tops = 0;
    double top_sum = 0;
    for (size_t r = 0; r < p->n_rows; r++) {
        const gl_profile_cell *c = &p->rows[r].cells[U];
        if (p->rows[r].n_members)
            groups++;
        if (c->ran && c->top) {
            tops++;
            top_sum += c->ms.median;
        }
    }
    cr_assert_eq(groups, 2, "two groups");
    static const struct {
        const char *name, *members[2];
    } want[] = {{"FusedNhwcConvRelu_1", {"conv1", "relu1"}},
                {"FusedNhwcConvRelu_2", {"conv2", "relu2"}}};
    for (size_t w = 0; w < GL_ARRAY_LEN(want); w++) {
        size_t group = row_named(p, want[w].name);
        cr_assert_neq(group, SIZE_MAX, "%s has a row", want[w].name);
        const gl_profile_row *g = &p->rows[group];
        cr_assert_eq(g->n_members, 2, "%s", want[w].name);
        cr_expect_str_eq(g->members[0], want[w].members[0]);
        cr_expect_str_eq(g->members[1], want[w].members[1]);
        cr_expect(!g->cells[U].ran, "%s: the unfused model has no group node", g->name);
        cr_expect(g->cells[1].ran && g->cells[1].top, "%s: the fused run ran the group",
                  g->name);
        double members = 0;
        for (size_t k = 0; k < g->n_members; k++) {
            size_t r = row_named(p, g->members[k]);
            cr_assert_neq(r, SIZE_MAX, "%s has a row", g->members[k]);
            const gl_profile_row *m = &p->rows[r];
            cr_expect_eq(m->parent, group, "%s under its group", m->name);
            cr_expect_eq(m->depth, 1, "%s one deeper", m->name);
            cr_expect(m->cells[U].ran && m->cells[U].top, "%s: a node of the unfused run",
                      m->name);
            cr_expect(m->cells[1].ran && !m->cells[1].top, "%s: in the fused run's body",
                      m->name);
            cr_expect(m->cells[U].compared && m->cells[U].cmp.ok, "%s: compared, ok", m->name);
            members += m->cells[U].ms.median;
        }
        cr_expect_float_eq(g->cells[U].members_ms, members, 1e-12, "%s: the group's unfused time",
                           g->name);
    }
    cr_expect_eq(tops, fp.unfused.model->graph->live_nodes, "one row per unfused node (%zu)",
                 tops);
    cr_expect_float_eq(p->backends[U].node_ms, top_sum, 1e-9, "totals of the run's own nodes");
    /* channel_scale, the Mul between the groups, fusion left alone */
    size_t scale = row_named(p, "channel_scale");
    cr_assert_neq(scale, SIZE_MAX);
    for (size_t bi = 0; bi < 3; bi++)
        cr_expect(p->rows[scale].cells[bi].ran && p->rows[scale].depth == 0,
                  "channel_scale: one row, every run");
    gl_profile_free(p);

    gl_profile_options twice = o;
    twice.labels[2] = "unfused";
    cr_expect_eq(gl_profile_run(fp.fused.model, in, fp.d.n_inputs, &twice, &p), GL_ERR_INPUT,
                 "a run named twice");
    cr_expect_null(p);
    tu_fusion_close(&fp);
}

Test(profile, bad_options)
{
    gl_model *m = conv_relu();
    gl_tensor *in = input_for(m);
    static const struct {
        const char *name;
        gl_profile_options o;
        const char *message;
    } cases[] = {
        {"no timed run", {.reps = 0}, "at least one timed run"},
        {"unknown backend", {.backends = {"tpu"}, .n_backends = 1, .reps = 1}, "'tpu'"},
        {"twice", {.backends = {"ref", "ref"}, .n_backends = 2, .reps = 1}, "twice"},
        {"samples without bound", {.backends = {"ref"}, .n_backends = 1, .reps = 1 << 24},
         "more samples than a profile keeps"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_profile sentinel;
        gl_profile *p = &sentinel; /* must come back NULL */
        cr_expect_eq(gl_profile_run(m, (const gl_tensor *const *)&in, 1, &cases[i].o, &p),
                     GL_ERR_INPUT, "%s", cases[i].name);
        cr_expect_null(p, "%s", cases[i].name);
        cr_expect(strstr(gl_error_message(), cases[i].message), "%s: '%s'", cases[i].name,
                  gl_error_message());
    }
    gl_tensor_free(in);
    gl_model_free(m);
}

/* ---- reading the times honestly ---------------------------------------------------------- */

#define STAT(med, lo, hi) ((gl_profile_stat){.median = (med), .min = (lo), .max = (hi)})

/* Fused against its members' summed times: lost only when even the fused group's fastest
 * round is slower than the members' medians summed. */
Test(profile, fusion_lost_only_beyond_noise)
{
    static const struct {
        const char *name;
        gl_profile_stat fused, members;
        double lost;
    } cases[] = {
        {"the OCR head: 36.7 ms against 0.49", STAT(36.7, 36.1, 38.0), STAT(0.49, 0.45, 0.6),
         36.7 - 0.49},
        {"faster fused", STAT(1.0, 0.9, 1.1), STAT(2.0, 1.9, 2.2), 0},
        {"slower median, ranges overlap", STAT(1.2, 0.95, 1.4), STAT(1.0, 0.9, 1.0), 0},
        {"fused min equal to the members' median", STAT(1.5, 0.9, 1.6), STAT(0.9, 0.8, 1.0),
         0},
        {"just past the members' median", STAT(1.5, 0.91, 1.6), STAT(0.9, 0.8, 1.0), 0.6},
        /* ResNet-50 layer1's residual group on a busy machine: the members' slowest
         * rounds summed are far above; their medians are not */
        {"resnet50 layer1.0", STAT(0.760, 0.688, 4.1), STAT(0.630, 0.534, 3.9), 0.13},
        {"members did not run", STAT(1.5, 1.2, 1.6), STAT(0, 0, 0), 0},
        {"group did not run", STAT(0, 0, 0), STAT(1, 1, 1), 0},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        double lost = gl_profile_fusion_lost(cases[i].fused, cases[i].members);
        cr_expect_float_eq(lost, cases[i].lost, 1e-9, "%s: lost %g", cases[i].name, lost);
    }
}

Test(profile, ratios_within_noise_or_of_the_same_kernel_are_approximate)
{
    static const struct {
        const char *name;
        gl_profile_stat before, after;
        bool same_kernel;
        const char *utf8, *ascii;
    } cases[] = {
        /* lstm_tagger: 1.26x from 0.03 ms, reruns 0.96-1.01x: the ranges overlap */
        {"overlapping ranges", STAT(0.0378, 0.029, 0.041), STAT(0.030, 0.028, 0.040), false,
         "≈ 1.26x", "~= 1.26x"},
        {"disjoint ranges", STAT(2.0, 1.9, 2.1), STAT(1.0, 0.95, 1.1), false, "2.00x", "2.00x"},
        {"disjoint, slower", STAT(1.0, 0.95, 1.05), STAT(2.0, 1.9, 2.1), false, "0.50x",
         "0.50x"},
        {"touching ranges overlap", STAT(2.0, 1.5, 2.5), STAT(1.0, 0.5, 1.5), false, "≈ 2.00x",
         "~= 2.00x"},
        {"the same kernel, however far apart", STAT(2.0, 1.9, 2.1), STAT(1.0, 0.95, 1.1),
         true, "≈", "~="},
        {"not run", STAT(0, 0, 0), STAT(1.0, 0.9, 1.1), false, "-", "-"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_profile_ratio r =
            gl_profile_ratio_of(cases[i].before, cases[i].after, cases[i].same_kernel);
        char buf[32];
        gl_profile_ratio_text(r, true, buf, sizeof(buf));
        cr_expect_str_eq(buf, cases[i].utf8, "%s", cases[i].name);
        gl_profile_ratio_text(r, false, buf, sizeof(buf));
        cr_expect_str_eq(buf, cases[i].ascii, "%s", cases[i].name);
    }
}

Test(profile, same_kernel_needs_the_same_node_implementation_and_layouts)
{
    gl_profile_row plain = {.name = "conv1", .op = "Conv", .parent = SIZE_MAX};
    gl_profile_row group = plain;
    group.n_members = 2;
    gl_profile_cell a = {.ran = true, .top = true, .backend = "dnnl",
                         .info = {.impl = "jit:avx2", .in_layouts = "nchw", .out_layouts = "nchw"}};
    gl_profile_cell b = a, other_impl = a, other_layout = a, body = a, ref = a;
    snprintf(other_impl.info.impl, sizeof(other_impl.info.impl), "gemm:jit");
    snprintf(other_layout.info.out_layouts, sizeof(other_layout.info.out_layouts), "nChw8c");
    body.top = false;
    ref.backend = "ref";
    cr_expect(gl_profile_same_kernel(&plain, &a, &b), "the same primitive in both runs");
    cr_expect(!gl_profile_same_kernel(&group, &a, &b), "a group is what fusion changed");
    cr_expect(!gl_profile_same_kernel(&plain, &a, &other_impl), "another implementation");
    cr_expect(!gl_profile_same_kernel(&plain, &a, &other_layout), "another layout");
    cr_expect(!gl_profile_same_kernel(&plain, &a, &body), "inside a body in one run");
    cr_expect(!gl_profile_same_kernel(&plain, &a, &ref), "another backend");
}

/* Rounds interleave the backends: the trace's whole-run events alternate between them;
 * a fused group's row carries the decision that formed it. */
Test(profile, rounds_interleave_backends_and_groups_name_their_decision)
{
    tu_fusion_pair fp;
    tu_fusion_open(&fp, "examples/conv_nhwc/model.onnx");
    gl_profile_options o = {.backends = {"ref", "ref"}, .labels = {"unfused", "fused"},
                            .models = {fp.unfused.model, NULL}, .n_backends = 2, .reps = 3,
                            .warmup = 1, .rtol = 1e-3, .atol = 1e-4};
    trace_text t;
    trace_open(&t, &o);
    gl_profile *p = NULL;
    const gl_tensor *const *in = (const gl_tensor *const *)fp.d.inputs;
    cr_assert_eq(gl_profile_run(fp.fused.model, in, fp.d.n_inputs, &o, &p), GL_OK, "%s",
                 gl_error_message());
    trace_close(&t);
    unsigned seen[6];
    size_t n = 0;
    for (const char *line = t.text; line && n < 6; line = strchr(line + 1, '\n')) {
        const char *tid = strstr(line, "\"tid\":"), *run = strstr(line, "\"model_run\"");
        const char *eol = strchr(line + 1, '\n');
        if (tid && run && eol && run < eol)
            seen[n++] = (unsigned)atoi(tid + strlen("\"tid\":")) - 1;
    }
    free(t.text);
    cr_assert_eq(n, 6u, "a whole-run event per round and backend");
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(seen[i], (unsigned)(i % 2), "run %zu was backend %u", i, seen[i]);
    size_t groups = 0;
    int64_t decisions[2] = {-1, -1};
    for (size_t r = 0; r < p->n_rows; r++) {
        const gl_profile_row *row = &p->rows[r];
        if (!row->n_members) {
            cr_expect_eq(row->decision, -1, "%s: not a group", row->name);
            continue;
        }
        if (groups < 2)
            decisions[groups] = row->decision;
        groups++;
        const gl_node *g = gl_find_node(fp.fused.model->graph, row->name);
        cr_assert(g, "%s", row->name);
        cr_expect_geq(row->decision, 0, "%s: a decision id", row->name);
        cr_expect_eq(row->decision, g->prov.decision, "%s: its node's provenance", row->name);
        /* the unfused run: the members' spread summed */
        bool ran;
        gl_profile_stat u = gl_profile_row_stat(p, row, 1, &ran);
        cr_expect(ran && u.min <= u.median && u.median <= u.max, "%s: members' sums", row->name);
    }
    cr_expect_eq(groups, 2u, "conv1 + relu1 and conv2 + relu2");
    cr_expect_neq(decisions[0], decisions[1], "each group its own decision");
    for (size_t bi = 0; bi < p->n_backends; bi++)
        cr_expect(p->backends[bi].nodes.min <= p->backends[bi].nodes.max, "per-round totals");
    gl_profile_free(p);
    tu_fusion_close(&fp);
}

/* Expected outputs: each run's graph outputs against them; a wrong one is a mismatch of
 * every run, and the line says so. */
Test(profile, expected_outputs_compared_on_every_run)
{
    gl_model *m = conv_relu();
    gl_tensor *in = input_for(m);
    gl_tensor *ref[2];
    run_apart(m, "ref", in, ref);
    gl_tensor *wrong = gl_tensor_share(ref[1]); /* copied on write */
    ((float *)gl_tensor_make_writable(wrong))[3] += 1000.0f;
    const gl_tensor *expected[2] = {NULL, ref[1]};
    gl_profile_options o = {.backends = {"ref"}, .n_backends = 1, .reps = 1, .rtol = 1e-3,
                            .atol = 1e-4, .expected = expected};
    gl_profile *p = NULL;
    cr_assert_eq(gl_profile_run(m, (const gl_tensor *const *)&in, 1, &o, &p), GL_OK, "%s",
                 gl_error_message());
    cr_expect(!p->has_expected[0] && p->has_expected[1]);
    cr_expect(p->backends[0].expected_ok);
    char line[256];
    gl_profile_expected_text(p, false, line, sizeof(line));
    cr_expect_str_eq(line, "ref ok");
    gl_profile_free(p);

    expected[1] = wrong;
    cr_assert_eq(gl_profile_run(m, (const gl_tensor *const *)&in, 1, &o, &p), GL_OK, "%s",
                 gl_error_message());
    cr_expect(!p->backends[0].expected_ok);
    cr_expect_float_eq(p->backends[0].expected[1].max_abs, 1000.0, 1e-2);
    gl_profile_expected_text(p, false, line, sizeof(line));
    cr_expect_str_eq(line, "ref MISMATCH max_abs 1e+03");
    gl_profile_expected_text(p, true, line, sizeof(line));
    cr_expect_str_eq(line, "ref MISMATCH max_abs ~");
    gl_profile_free(p);

    o.expected = NULL;
    cr_assert_eq(gl_profile_run(m, (const gl_tensor *const *)&in, 1, &o, &p), GL_OK);
    gl_profile_expected_text(p, false, line, sizeof(line));
    cr_expect_str_eq(line, "", "nothing expected: no line");
    gl_profile_free(p);
    gl_tensor_free(wrong);
    for (size_t k = 0; k < 2; k++)
        gl_tensor_free(ref[k]);
    gl_tensor_free(in);
    gl_model_free(m);
}

/* The trace's times: nanoseconds written as microseconds with exact decimals (issue 24:
 * whole microseconds made short nodes last 0 and children end after their parents). */
Test(profile, trace_times_are_exact_microseconds)
{
    static const struct {
        int64_t ns;
        const char *text;
    } cases[] = {
        {0, "0"},          {7, "0.007"},      {40, "0.04"},
        {500, "0.5"},      {1000, "1"},       {1500, "1.5"},
        {82834802, "82834.802"}, {300000000000, "300000000"},
        {-1250, "-1.25"},  {INT64_MIN + 1, "-9223372036854775.807"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        cr_assert_not_null(f);
        gl_json j;
        gl_json_init(&j, f, false);
        gl_json_thousandths(&j, NULL, cases[i].ns);
        fclose(f);
        cr_expect_str_eq(text, cases[i].text, "%lld ns", (long long)cases[i].ns);
        free(text);
    }
}

/* ---- scratch between runs ------------------------------------------------------------ */

/* What a walk of a plan's scratch found: ranges, bytes, whole pages and how many of them
 * are resident (mincore); with `poison`, every byte written 0xff first (NaN in every
 * float), so that a run that read scratch before writing it would show. */
typedef struct scratch_walk {
    bool poison;
    size_t ranges, bytes, pages, resident;
} scratch_walk;

static void scratch_look(void *arg, void *data, size_t bytes)
{
    scratch_walk *w = arg;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    w->ranges++;
    w->bytes += bytes;
    if (w->poison)
        memset(data, 0xff, bytes);
    uintptr_t lo = ((uintptr_t)data + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)data + bytes) & ~(page - 1);
    for (uintptr_t a = lo; a < hi; a += page) {
        unsigned char in = 0;
        cr_assert_eq(mincore((void *)a, page, &in), 0, "mincore: %s", strerror(errno));
        w->pages++;
        w->resident += in & 1;
    }
}

static scratch_walk scratch_walked(gl_exec *e, bool poison)
{
    scratch_walk w = {.poison = poison};
    gl_exec_scratch_each(e, scratch_look, &w);
    return w;
}

/* Run e and expect the outputs of its first run, byte for byte. */
static void expect_first_outputs(gl_exec *e, const gl_dataset *d, gl_tensor **first,
                                 size_t n_out, const char *what, const char *after)
{
    gl_tensor *again[8];
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)d->inputs, d->n_inputs, again, n_out),
                 GL_OK, "%s, %s: %s", what, after, gl_error_message());
    for (size_t i = 0; i < n_out; i++) {
        size_t bytes = (size_t)first[i]->count * gl_dtype_size(first[i]->dtype);
        cr_expect(again[i]->count == first[i]->count &&
                      memcmp(gl_tensor_data(again[i]), gl_tensor_data(first[i]), bytes) == 0,
                  "%s, %s: output %zu differs from the first run's", what, after, i);
        gl_tensor_free(again[i]);
    }
}

/* What gl_exec_scratch gives away between runs (profile releases every plan but the
 * running one, issue 23) is scratch indeed: written over, released, faulted in again,
 * the next run's outputs are the first run's to the byte; the release leaves none of
 * its pages resident and the fault all of them. Plans with a memory plan's block (the
 * fused models on ref), bodies of fused groups run as calls, oneDNN outputs, per-run
 * conversions to blocked layouts, fused units. */
Test(profile, scratch_is_written_before_it_is_read)
{
    static const struct {
        const char *model;
        bool unfused;
        const char *backend;
        char layout; /* 0: the plan's choice */
        bool pages;  /* tensors of a page or more: some scratch is whole pages */
    } cases[] = {
        {"examples/conv_nhwc/model.onnx", false, "ref", 0, true},
        {"examples/conv_nhwc/model.onnx", true, "ref", 0, true},
        {"examples/conv_nhwc/model.onnx", false, "dnnl", 'b', true},
        {"examples/conv_nhwc/model.onnx", true, "dnnl", 'b', true},
        {"examples/conv_nhwc/model.onnx", true, "dnnl", 'n', true},
        {"examples/transformer_block/model.onnx", false, "ref", 0, false},
        {"examples/transformer_block/model.onnx", false, "dnnl", 0, false},
        {"examples/transformer_block/model.onnx", true, "dnnl", 0, false},
        {"examples/mlp_external/model.onnx", false, "dnnl", 0, false},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        if (strcmp(cases[c].backend, "dnnl") == 0 && !gl_backend_dnnl())
            continue;
        char what[160];
        snprintf(what, sizeof(what), "%s (%s) on %s%s%s", cases[c].model,
                 cases[c].unfused ? "unfused" : "fused", cases[c].backend,
                 cases[c].layout ? ", " : "", cases[c].layout ? tu_layout_name(cases[c].layout) : "");
        tu_fusion_pair fp;
        tu_fusion_open(&fp, cases[c].model);
        const gl_model *m = cases[c].unfused ? fp.unfused.model : fp.fused.model;
        size_t n_out = m->graph->n_outputs;
        cr_assert(n_out <= 8);
        gl_tensor *first[8];
        gl_exec *e = tu_exec_run(m, cases[c].backend,
                                 cases[c].layout ? tu_layout_name(cases[c].layout) : NULL,
                                 fp.d.inputs, fp.d.n_inputs, first, n_out, what);
        scratch_walk w = scratch_walked(e, true);
        cr_expect(w.ranges > 0, "%s: no scratch", what);
        cr_expect(!cases[c].pages || w.pages > 0, "%s: no scratch of a whole page (%zu "
                  "ranges, %zu bytes)", what, w.ranges, w.bytes);
        expect_first_outputs(e, &fp.d, first, n_out, what, "scratch written over");

        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        cr_expect_eq(gl_exec_scratch(e, GL_SCRATCH_RELEASE), w.pages * page, "%s", what);
        scratch_walk gone = scratch_walked(e, false);
        cr_expect(gone.pages == w.pages && gone.resident == 0,
                  "%s: released, %zu of %zu pages still resident", what, gone.resident,
                  gone.pages);
        expect_first_outputs(e, &fp.d, first, n_out, what, "scratch released");

        gl_exec_scratch(e, GL_SCRATCH_RELEASE);
        cr_expect_eq(gl_exec_scratch(e, GL_SCRATCH_FAULT), w.pages * page, "%s", what);
        scratch_walk back = scratch_walked(e, false);
        cr_expect(back.resident == back.pages, "%s: faulted in, %zu of %zu pages resident",
                  what, back.resident, back.pages);
        expect_first_outputs(e, &fp.d, first, n_out, what, "scratch faulted in");

        for (size_t i = 0; i < n_out; i++)
            gl_tensor_free(first[i]);
        gl_exec_free(e);
        tu_fusion_close(&fp);
    }
}

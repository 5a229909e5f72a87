/* test_dnnl_layout.c — `--layout auto` chooses the plan's activation layout by estimated
 * cost (src/exec/dnnl/dn_cost.c, issue 22), and `--layout plain|nhwc|blocked` force one.
 *
 * Each row: a small graph (graphnote.h) put through `passes`; the layout auto must
 * choose ('p' plain, 'n' nhwc, 'b' blocked), a text the plan's header must hold (the
 * reason, with the estimated sums when the choice was by cost), and a convolution whose
 * plan entry must write that layout and whose note gives its own pair of estimates
 * (NULL: none checked). Under auto and under every forced layout the dnnl run must
 * equal the reference run of the same graph; a forced layout says "as asked". No time
 * is asserted: the estimates come from a fixed table, the same on every run.
 */
#include "exec/compare.h"
#include "exec/exec.h"
#include "graphnote.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lcase {
    const char *name;
    const char *graph;
    const char *passes;
    char layout;        /* what auto chooses */
    const char *reason; /* in the plan's header */
    const char *conv;   /* a convolution's node: its layout and note (NULL: none) */
} lcase;

#define SHAPES "toposort,shape-inference"
#define FUSED "toposort,shape-inference,fusion"
#define BY_COST "estimated nhwc "

/* ATOL is the suite's (graphlab run's default): graphlab's Winograd F(4x4, 3x3) on AVX2
 * rounds to ~1e-5 of these outputs' scale (random weights in [-1, 1]: outputs of ~10),
 * 3e-5 to 8e-5 absolute next to outputs near zero. */
#define RTOL 1e-4
#define ATOL 1e-4

static const lcase cases[] = {
    /* alone within 15% either way; whole efficientnets run faster nhwc (dn_cost.c) */
    {"1x1 of few input channels (efficientnet's expansion): a tie keeps nhwc",
     "in x f32s[1,24,28,28]; const w f32s[144,24,1,1] = rand; y = Conv(x, w); r = Relu(y); "
     "out r",
     SHAPES, 'n', BY_COST, "n_y"},
    /* Winograd, which oneDNN has on blocked activations only, halves it there */
    {"3x3 dense 32 -> 32 at 14x14, stride 1",
     "in x f32s[1,32,14,14]; const w f32s[32,32,3,3] = rand; const k f32s[32] = rand; "
     "y = Conv(x, w, k) pads=[1,1,1,1]; out y",
     SHAPES, 'b', BY_COST, "n_y"},
    {"3x3 dense 32 -> 32 at 14x14, stride 2: no Winograd, nhwc's brgconv is ahead",
     "in x f32s[1,32,14,14]; const w f32s[32,32,3,3] = rand; const k f32s[32] = rand; "
     "y = Conv(x, w, k) pads=[1,1,1,1] strides=[2,2]; out y",
     SHAPES, 'n', BY_COST, "n_y"},
    {"3x3 dense 8 -> 8 at 28x28: too few channels for Winograd",
     "in x f32s[1,8,28,28]; const w f32s[8,8,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1]; out y",
     SHAPES, 'n', BY_COST, "n_y"},
    {"depthwise 3x3 of 32 channels at 56x56",
     "in x f32s[1,32,56,56]; const w f32s[32,1,3,3] = rand; "
     "y = Conv(x, w) group=32 pads=[1,1,1,1]; out y",
     SHAPES, 'n', "(1 depthwise)", "n_y"},
    {"depthwise 3x3 at 14x14, then 1x1 64 -> 64",
     "in x f32s[1,64,14,14]; const w f32s[64,1,3,3] = rand; const p f32s[64,64,1,1] = rand; "
     "d = Conv(x, w) group=64 pads=[1,1,1,1]; y = Conv(d, p); out y",
     SHAPES, 'b', "2 of 2 convolutions costed (1 depthwise)", "n_y"},
    /* 20 channels each: off the block of 16 (AVX-512) and of 8 (AVX2), so no Concat is
     * written in place (dn_concat.c) */
    {"Concat of two 1x1 convolutions: the Concat outweighs them",
     "in x f32s[1,16,28,28]; const a f32s[20,16,1,1] = rand; const b f32s[20,16,1,1] = rand; "
     "p = Conv(x, a); q = Conv(x, b); c = Concat(p, q) axis=1; out c",
     SHAPES, 'n', "+ 1 Concat", "n_p"},
    /* fusion rule concat-conv1x1: dn_catconv.c convolves each Concat input into the 1x1's
     * destination, so no Concat is copied in either layout and Winograd decides (values
     * in [0, 1): no sum cancels to near zero) */
    {"Concat of a 3x3 and a 1x1 read by a 1x1, fused: nothing to copy",
     "in x f32[1,32,28,28]; const a f32[32,32,3,3] = rand; const b f32[32,32,1,1] = rand; "
     "const w f32[16,64,1,1] = rand; "
     "p = Conv(x, a) pads=[1,1,1,1]; q = Conv(x, b); c = Concat(p, q) axis=1; y = Conv(c, w); "
     "out y",
     FUSED, 'b', "3 of 3 convolutions costed (0 depthwise)", NULL},
    {"1x1 of 256 input channels: a tie keeps nhwc",
     "in x f32s[1,256,7,7]; const w f32s[64,256,1,1] = rand; y = Conv(x, w); out y",
     SHAPES, 'n', BY_COST, "n_y"},
    /* 32 channels each, on whole blocks: a copy of rows in either layout. y, a graph
     * input, keeps the Concat from being written in place (dn_concat.c). At batch 1 the
     * former rate stays (the first Concat row). */
    {"Concat on whole channel blocks at batch 2: no dearer blocked",
     "in x f32s[2,32,14,14]; in y f32s[2,32,14,14]; const w f32s[32,1,3,3] = rand; "
     "d = Conv(x, w) group=32 pads=[1,1,1,1]; c = Concat(d, y) axis=1; out c",
     SHAPES, 'b', "+ 1 Concat (0 in place if blocked)", "n_d"},
    /* batch 8: oneDNN's nhwc kernels gain less from the batch than the blocked ones */
    {"1x1 of few input channels at batch 8: blocked",
     "in x f32s[8,24,28,28]; const w f32s[144,24,1,1] = rand; y = Conv(x, w); r = Relu(y); "
     "out r",
     SHAPES, 'b', BY_COST, "n_y"},
    {"first layer at batch 8: blocked's jit reads the image plain",
     "in x f32s[8,3,32,32]; const w f32s[16,3,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1] strides=[2,2]; out y",
     SHAPES, 'b', BY_COST, "n_y"},
    /* nhwc's brgconv reads the image after a reorder to nhwc, the blocked jit plain */
    {"first layer at batch 1: blocked, no reorder of the image",
     "in x f32s[1,3,32,32]; const w f32s[16,3,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1] strides=[2,2]; out y",
     SHAPES, 'b', BY_COST, "n_y"},
    /* groups of 8 channels, off AVX-512's block of 16, outweigh the BatchNormalization's
     * dearer nhwc; groups of 16 do not */
#define NORM_AFTER(conv) \
    "const s f32s[64] = rand; const b f32s[64] = rand; const m f32s[64] = rand; " \
    "const v f32[64] = rand; " conv " n = BatchNormalization(g, s, b, m, v) epsilon=0.5; out n"
    {"grouped 3x3 of 8-channel groups, then BatchNormalization: nhwc",
     "in x f32s[1,64,28,28]; const w f32s[64,8,3,3] = rand; "
     NORM_AFTER("g = Conv(x, w) group=8 pads=[1,1,1,1];"),
     SHAPES, 'n', "+ 1 BatchNormalization", "n_g"},
    {"grouped 3x3 of 16-channel groups, then BatchNormalization: blocked",
     "in x f32s[1,64,28,28]; const w f32s[64,16,3,3] = rand; "
     NORM_AFTER("g = Conv(x, w) group=4 pads=[1,1,1,1];"),
     SHAPES, 'b', "+ 1 BatchNormalization", "n_g"},
    /* a ConvTranspose is costed as the convolution it transposes, BatchNormalization by
     * its bytes: each dearer in nhwc on AVX-512 (a 1x1 alone is a tie) */
    {"1x1, then ConvTranspose 2x2 stride 2: blocked",
     "in x f32s[1,32,28,28]; const w f32s[32,32,1,1] = rand; const t f32s[32,16,2,2] = rand; "
     "c = Conv(x, w); y = ConvTranspose(c, t) strides=[2,2]; out y",
     SHAPES, 'b', "2 of 2 convolutions costed", "n_c"},
    {"1x1, then BatchNormalization and Relu: blocked",
     "in x f32s[1,32,28,28]; const w f32s[32,32,1,1] = rand; const s f32s[32] = rand; "
     "const b f32s[32] = rand; const m f32s[32] = rand; const v f32[32] = rand; "
     "c = Conv(x, w); n = BatchNormalization(c, s, b, m, v) epsilon=0.5; r = Relu(n); out r",
     SHAPES, 'b', "+ 1 BatchNormalization", "n_c"},
    {"no convolution",
     "in x f32s[1,8,4,4]; y = Relu(x); out y",
     SHAPES, 'p', "no convolution", NULL},
    /* products by weights ten times the convolutions' estimate: plain (swin_t's patch
     * embedding); a CNN's classifier is not */
    {"a patch embedding, then products by weights: plain",
     "in x f32s[1,3,32,32]; const w f32s[16,3,4,4] = rand; const a f32s[16,1024] = rand; "
     "const b f32s[1024,16] = rand; y = Conv(x, w) strides=[4,4]; "
     "t = Transpose(y) perm=[0,2,3,1]; h = MatMul(t, a); o = MatMul(h, b); out o",
     SHAPES, 'p', "activations stay plain", NULL},
    {"a convolution, then a classifier: by cost",
     "in x f32s[1,3,32,32]; const w f32s[16,3,3,3] = rand; const g f32s[16,10] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1] strides=[2,2]; p = GlobalAveragePool(y); "
     "f = Flatten(p); o = MatMul(f, g); out o",
     SHAPES, 'b', BY_COST, "n_y"},
    {"spatial dims unknown: the former rule",
     "in x f32s[1,32,?14,?14]; const w f32s[32,1,3,3] = rand; "
     "y = Conv(x, w) group=32 pads=[1,1,1,1]; out y",
     SHAPES, 'b', "1 of 1 convolutions depthwise", NULL},
    /* The second convolution reads a value made inside the group: its shape is worked
     * out from the first's window. */
    {"two 1x1 convolutions with SiLU, fused: a tie keeps nhwc",
     "in x f32s[1,24,28,28]; const w f32s[96,24,1,1] = rand; const v f32s[24,96,1,1] = rand; "
     "y = Conv(x, w); s = Sigmoid(y); m = Mul(y, s); z = Conv(m, v); t = Sigmoid(z); "
     "o = Mul(z, t); out o",
     FUSED, 'n', "2 of 2 convolutions costed", NULL},
};

/* The rows auto decides otherwise without AVX-512 (tu_cpu_has_avx512), by dn_cost.c's
 * AVX2 column: there oneDNN 2.6 runs the same jit kernels in both layouts, blocked is
 * ahead on dense kxk convolutions (no brgconv in nhwc), nhwc on depthwise ones, and the
 * batch weighs nothing. */
static const struct {
    const char *name;
    char layout;
} without_avx512[] = {
    {"3x3 dense 32 -> 32 at 14x14, stride 2: no Winograd, nhwc's brgconv is ahead", 'b'},
    {"3x3 dense 8 -> 8 at 28x28: too few channels for Winograd", 'b'},
    {"depthwise 3x3 at 14x14, then 1x1 64 -> 64", 'n'},
    {"Concat on whole channel blocks at batch 2: no dearer blocked", 'n'},
    {"1x1 of few input channels at batch 8: blocked", 'n'},
    {"first layer at batch 8: blocked's jit reads the image plain", 'n'},
    {"first layer at batch 1: blocked, no reorder of the image", 'n'},
    {"a convolution, then a classifier: by cost", 'n'},
    {"grouped 3x3 of 8-channel groups, then BatchNormalization: nhwc", 'b'},
    {"1x1, then ConvTranspose 2x2 stride 2: blocked", 'n'},
    {"1x1, then BatchNormalization and Relu: blocked", 'n'},
};

static char layout_here(const lcase *c)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(without_avx512) && !tu_cpu_has_avx512(); i++)
        if (strcmp(without_avx512[i].name, c->name) == 0)
            return without_avx512[i].layout;
    return c->layout;
}

/* The layout name a plan entry writes for policy letter l ("" for plain). */
static const char *written_as(char l)
{
    return l == 'n' ? "nhwc" : l == 'b' ? "nChw" : "plain";
}

static void expect_plan(const lcase *row, const gl_exec *dn, const char *what)
{
    lcase here = *row;
    here.layout = layout_here(row);
    const lcase *c = &here;
    char summary[320];
    gl_exec_summary(dn, summary, sizeof(summary));
    cr_expect(strstr(summary, c->reason), "%s: '%s' not in: %s", what, c->reason, summary);
    bool blocked = strstr(summary, "activations: nChw") != NULL;
    bool nhwc = strstr(summary, "activations: nhwc") != NULL;
    cr_expect(c->layout == 'b' ? blocked : c->layout == 'n' ? nhwc : !blocked && !nhwc,
              "%s: expected %s: %s", what, tu_layout_name(c->layout), summary);
    if (!c->conv)
        return;
    const gl_plan_entry *en = tu_plan_entry(dn, c->conv, 0);
    cr_assert_not_null(en, "%s: no plan entry '%s'", what, c->conv);
    cr_expect(strstr(en->info.out_layouts, written_as(c->layout)),
              "%s: %s writes %s", what, c->conv, en->info.out_layouts);
    cr_expect(strstr(en->info.note, "layout cost: nhwc ") && strstr(en->info.note, " vs blocked "),
              "%s: %s's note: %s", what, c->conv, en->info.note);
}

static void run_case(const lcase *c)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes(c->name, 13, c->graph, NULL, c->passes, &b);
    cr_assert_not_null(p);
    const gl_model *m = p->steps[p->n_steps - 1].model;
    gl_tensor **in = gn_feeds(&b, m->graph, c->name);
    size_t n_in = m->graph->n_inputs;
    gl_tensor *want = NULL;
    gl_exec_free(tu_exec_run(m, "ref", NULL, in, n_in, &want, 1, c->name));
    for (size_t i = 0; i < GL_ARRAY_LEN(tu_layouts); i++) {
        const char *layout = tu_layouts[i];
        char what[200];
        tu_layout_what(what, sizeof(what), c->name, layout);
        gl_tensor *got = NULL;
        gl_exec *dn = tu_exec_run(m, "dnnl", layout, in, n_in, &got, 1, what);
        if (getenv("GL_TEST_PLAN"))
            gl_exec_print_plan(dn, stderr);
        tu_expect_close(got, want, RTOL, ATOL, what);
        if (layout) {
            char summary[320];
            gl_exec_summary(dn, summary, sizeof(summary));
            cr_expect(strstr(summary, "as asked"), "%s: %s", what, summary);
        } else {
            expect_plan(c, dn, what);
        }
        gl_tensor_free(got);
        gl_exec_free(dn);
    }
    gl_tensor_free(want);
    gn_free_tensors(in, n_in);
    gl_pipeline_free(p);
}

Test(dnnl_layout, auto_chooses_by_cost_and_forced_layouts_override)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        run_case(&cases[i]);
}

/* A symbolic batch is weighed at the run's batch when the plan is made for one
 * (gl_exec_options.batch: `profile` and `run` give their inputs' batch), else as 1.
 * unet_dynbatch (batch N) at batch 8 ran nhwc, 135 ms against 81 blocked at one thread:
 * counted at batch 1, its Concat in the blocked layout took the batch-1 rate. Here a 3x3
 * convolution of 32 channels (blocked ahead: Winograd on AVX-512, oneDNN's jit on AVX2)
 * and a Concat on whole channel blocks (no dearer blocked above batch 1; y, a graph
 * input, keeps it from being written in place). */
typedef struct bcase {
    const char *graph;
    int64_t batch; /* gl_exec_options.batch (0: not known) */
    char layout;
    const char *reason;
} bcase;

#define UNET_LIKE(n) \
    "in x f32s[N=" n ",32,14,14]; in y f32s[N=" n ",32,14,14]; " \
    "const w f32s[32,32,3,3] = rand; d = Conv(x, w) pads=[1,1,1,1]; c = Concat(d, y) axis=1; " \
    "out c"

static const bcase batch_cases[] = {
    {UNET_LIKE("8"), 8, 'b', "at the run's batch 8"},
    {UNET_LIKE("8"), 0, 'n', "+ 1 Concat (0 in place if blocked)"},
    {UNET_LIKE("1"), 1, 'n', "at the run's batch 1"},
    {UNET_LIKE("2"), 2, 'b', "at the run's batch 2"},
    /* a known batch is the model's own: the run's is not asked for */
    {"in x f32s[8,32,14,14]; in y f32s[8,32,14,14]; const w f32s[32,32,3,3] = rand; "
     "d = Conv(x, w) pads=[1,1,1,1]; c = Concat(d, y) axis=1; out c",
     0, 'b', BY_COST},
};

Test(dnnl_layout, symbolic_batch_weighed_at_the_runs_batch)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(batch_cases); i++) {
        const bcase *c = &batch_cases[i];
        char what[64];
        snprintf(what, sizeof(what), "batch row %zu (run's batch %lld)", i, (long long)c->batch);
        gn_graph b;
        gl_pipeline *p = gn_run_passes(what, 13, c->graph, NULL, SHAPES, &b);
        cr_assert_not_null(p);
        const gl_model *m = p->steps[p->n_steps - 1].model;
        gl_tensor **in = gn_feeds(&b, m->graph, what);
        size_t n_in = m->graph->n_inputs;
        cr_expect_eq(gl_inputs_batch(m->graph, (const gl_tensor *const *)in, n_in),
                     strstr(c->graph, "[N=") ? in[0]->dims[0] : 0, "%s: gl_inputs_batch", what);
        gl_tensor *want = NULL, *got = NULL;
        gl_exec_free(tu_exec_run(m, "ref", NULL, in, n_in, &want, 1, what));
        gl_exec_options o = {.backend = "dnnl", .batch = c->batch};
        gl_exec *e = NULL;
        cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s: %s", what, gl_error_message());
        cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)in, n_in, &got, 1), GL_OK,
                     "%s: %s", what, gl_error_message());
        char summary[320];
        gl_exec_summary(e, summary, sizeof(summary));
        cr_expect(strstr(summary, c->reason), "%s: '%s' not in: %s", what, c->reason, summary);
        cr_expect(strstr(summary, c->layout == 'b' ? "activations: nChw" : "activations: nhwc"),
                  "%s: expected %s: %s", what, tu_layout_name(c->layout), summary);
        gl_compare r;
        gl_compare_tensors(got, want, RTOL, ATOL, &r);
        cr_expect(r.ok, "%s: dnnl vs ref", what);
        gl_tensor_free(got);
        gl_tensor_free(want);
        gl_exec_free(e);
        gn_free_tensors(in, n_in);
        gl_pipeline_free(p);
    }
}

/* A 3x3 stride-1 convolution on blocked activations runs on oneDNN's Winograd kernel
 * (where the CPU has it: AVX-512), with its numbers within the usual tolerance of the
 * reference; --set dnnl.winograd=0 (gl_exec_options.dnnl_no_winograd) keeps the direct one,
 * and so does a strided or grouped convolution. */
typedef struct wcase {
    const char *name, *graph;
    bool no_winograd, want_winograd;
} wcase;

/* 14x14 takes F(4x4) on AVX2; at 28x28 F(6x6) rounds up to 3.7e-4 next to zero on these
 * unscaled outputs, over the suite's 1e-4 (its rows, at their tolerance, are
 * test_dnnl_ops's; the corpus models stay within it, resnet50's max_abs 2.1e-4 -> 2.4e-4). */
static const wcase winograd_cases[] = {
    {"3x3 64 -> 64 at 14x14, Relu",
     "in x f32s[1,64,14,14]; const w f32s[64,64,3,3] = rand; const k f32s[64] = rand; "
     "y = Conv(x, w, k) pads=[1,1,1,1]; r = Relu(y); out r",
     false, true},
    {"the same with dnnl.winograd=0",
     "in x f32s[1,64,14,14]; const w f32s[64,64,3,3] = rand; const k f32s[64] = rand; "
     "y = Conv(x, w, k) pads=[1,1,1,1]; r = Relu(y); out r",
     true, false},
    {"stride 2",
     "in x f32s[1,64,28,28]; const w f32s[64,64,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1] strides=[2,2]; out y",
     false, false},
    {"dilation 2",
     "in x f32s[1,64,28,28]; const w f32s[64,64,3,3] = rand; "
     "y = Conv(x, w) pads=[2,2,2,2] dilations=[2,2]; out y",
     false, false},
    {"grouped",
     "in x f32s[1,64,28,28]; const w f32s[64,32,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1] group=2; out y",
     false, false},
};

/* One graph of a table on the oneDNN backend with options o, checked against the
 * reference kernels on the same feeds; the exec stays for the case's own checks. */
typedef struct dnnl_case {
    const char *name;
    gl_pipeline *p;
    const gl_model *m;
    gl_tensor **in;
    size_t n_in;
    gl_exec *e;
} dnnl_case;

/* Run the case's graph on oneDNN and expect the reference's numbers (`what`: the run's
 * particulars for the message). */
static void dnnl_case_check(dnnl_case *c, const char *what)
{
    gl_tensor *want = NULL, *got = NULL;
    gl_exec_free(tu_exec_run(c->m, "ref", NULL, c->in, c->n_in, &want, 1, c->name));
    cr_assert_eq(gl_exec_run(c->e, (const gl_tensor *const *)c->in, c->n_in, &got, 1), GL_OK,
                 "%s%s: %s", c->name, what, gl_error_message());
    gl_compare r;
    char line[256];
    gl_compare_tensors(got, want, RTOL, ATOL, &r);
    gl_compare_format(&r, line, sizeof(line));
    cr_expect(r.ok, "%s%s: dnnl vs ref: %s", c->name, what, line);
    gl_tensor_free(got);
    gl_tensor_free(want);
}

/* The same with a NaN, an infinity and a minus infinity in input 0 (at its elements i, j,
 * k): the numbers must still be the reference's. */
static void dnnl_case_check_specials(dnnl_case *c, size_t i, size_t j, size_t k)
{
    float *xs = gl_tensor_make_writable(c->in[0]);
    xs[i] = NAN;
    xs[j] = INFINITY;
    xs[k] = -INFINITY;
    dnnl_case_check(c, ", NaN and infinities in the input");
}

static dnnl_case dnnl_case_start(const char *name, const char *graph, const char *passes,
                                 const gl_exec_options *o)
{
    dnnl_case c = {.name = name};
    gn_graph b;
    c.p = gn_run_passes(name, 13, graph, NULL, passes, &b);
    cr_assert_not_null(c.p);
    c.m = c.p->steps[c.p->n_steps - 1].model;
    c.in = gn_feeds(&b, c.m->graph, name);
    c.n_in = c.m->graph->n_inputs;
    cr_assert_eq(gl_exec_create(c.m, o, &c.e), GL_OK, "%s: %s", name, gl_error_message());
    dnnl_case_check(&c, "");
    return c;
}

/* The implementation the plan gives node n_y. */
static const char *dnnl_case_impl(const dnnl_case *c)
{
    const gl_plan_entry *en = tu_plan_entry(c->e, "n_y", 0);
    cr_assert_not_null(en, "%s: no plan entry", c->name);
    return en->info.impl;
}

static void dnnl_case_end(dnnl_case *c)
{
    gl_exec_free(c->e);
    gn_free_tensors(c->in, c->n_in);
    gl_pipeline_free(c->p);
}

Test(dnnl_layout, winograd_where_it_fits_and_as_asked)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(winograd_cases); i++) {
        const wcase *w = &winograd_cases[i];
        gl_exec_options o = {.backend = "dnnl", .layout = "blocked",
                             .dnnl_no_winograd = w->no_winograd};
        dnnl_case c = dnnl_case_start(w->name, w->graph, SHAPES, &o);
        const char *impl = dnnl_case_impl(&c);
        bool wino = strstr(impl, "wino") != NULL;
        /* oneDNN 2.6's f32 Winograd kernels need AVX-512; on AVX2, graphlab's runs
         * (dn_wino.c) */
        cr_expect(wino == w->want_winograd, "%s: implementation %s", w->name, impl);
        /* A NaN and an infinity in the input: Winograd's transforms would smear them over
         * their tiles (Inf - Inf); the run takes the reference kernel instead. */
        dnnl_case_check_specials(&c, 5, 100, 2000);
        dnnl_case_end(&c);
    }
}

/* On nhwc activations, a 1x1 convolution widening few channels over a large image runs
 * on oneDNN's jit_1x1 kernel, where oneDNN 2.6 lists brgconv_1x1 first (measured faster
 * inside models, dn_conv.c's kernel rows); one that narrows, or runs on a small image, or
 * widens many channels, and every window (a first layer's too) keep oneDNN's first choice. Numbers within
 * the usual tolerance of the reference either way. */
typedef struct kcase {
    const char *name, *graph;
    const char *want; /* the implementation's name starts so (on AVX-512) */
} kcase;

static const kcase kernel_cases[] = {
    {"16 -> 96 at 112x112, with a bias",
     "in x f32s[1,16,112,112]; const w f32s[96,16,1,1] = rand; const k f32s[96] = rand; "
     "y = Conv(x, w, k); out y",
     "jit_1x1"},
    {"24 -> 144 at 56x56",
     "in x f32s[1,24,56,56]; const w f32s[144,24,1,1] = rand; y = Conv(x, w); out y",
     "jit_1x1"},
    {"32 -> 16 at 112x112: narrows",
     "in x f32s[1,32,112,112]; const w f32s[16,32,1,1] = rand; y = Conv(x, w); out y",
     "brgconv_1x1"},
    {"32 -> 192 at 14x14: a small image",
     "in x f32s[1,32,14,14]; const w f32s[192,32,1,1] = rand; y = Conv(x, w); out y",
     "brgconv_1x1"},
    {"3 -> 32, 3x3 stride 2 at 224x224: a first layer keeps brgconv (3x faster at 2 threads)",
     "in x f32s[1,3,224,224]; const w f32s[32,3,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1] strides=[2,2]; out y",
     "brgconv:"},
    {"32 -> 32, 3x3 at 28x28: not a first layer",
     "in x f32s[1,32,28,28]; const w f32s[32,32,3,3] = rand; y = Conv(x, w) pads=[1,1,1,1]; "
     "out y",
     "brgconv:"},
    {"96 -> 576 at 28x28: many channels",
     "in x f32s[1,96,28,28]; const w f32s[576,96,1,1] = rand; y = Conv(x, w); out y",
     "brgconv_1x1"},
};

Test(dnnl_layout, nhwc_1x1_kernel_by_shape)
{
    /* both kernels as named here are oneDNN 2.6's AVX-512 ones */
    if (!tu_cpu_has_avx512())
        cr_skip_test("no AVX-512");
    for (size_t i = 0; i < GL_ARRAY_LEN(kernel_cases); i++) {
        const kcase *k = &kernel_cases[i];
        gl_exec_options o = {.backend = "dnnl", .layout = "nhwc"};
        dnnl_case c = dnnl_case_start(k->name, k->graph, SHAPES, &o);
        const char *impl = dnnl_case_impl(&c);
        cr_expect(strncmp(impl, k->want, strlen(k->want)) == 0,
                  "%s: implementation %s, want %s", k->name, impl, k->want);
        dnnl_case_end(&c);
    }
}

/* A squeeze-and-excitation scale (Mul by [N, C, 1, 1]) runs on graphlab's kernel
 * (dn_chscale.c) in whichever own layout the convolution before it writes: a grouped
 * convolution of 8 channels a group writes nChw8c even where the plan's block is 16
 * (regnet_y_400mf's on AVX-512, where oneDNN's binary has only its reference code for
 * that scale), a dense one the plan's block; the channels off the block, at a batch of
 * 2, so that scales read with the wrong stride would take the other image's. */
static const char *const scale_graphs[] = {
    "in x f32s[2,40,12,12]; const w f32s[40,8,3,3] = rand; "
    "c = Conv(x, w) group=5 pads=[1,1,1,1]; g = GlobalAveragePool(c); s = Sigmoid(g); "
    "y = Mul(c, s); out y",
    "in x f32s[2,40,12,12]; const w f32s[40,40,1,1] = rand; "
    "c = Conv(x, w); g = GlobalAveragePool(c); s = Sigmoid(g); y = Mul(c, s); out y",
};

Test(dnnl_layout, squeeze_excite_scale_on_graphlab_kernel_in_every_own_layout)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(scale_graphs); i++)
        for (size_t l = 0; l < GL_ARRAY_LEN(tu_layouts); l++) {
            char name[32], what[96];
            snprintf(name, sizeof(name), "scale graph %zu", i);
            tu_layout_what(what, sizeof(what), name, tu_layouts[l]);
            gl_exec_options o = {.backend = "dnnl", .layout = tu_layouts[l]};
            dnnl_case c = dnnl_case_start(what, scale_graphs[i], SHAPES, &o);
            const gl_plan_entry *en = tu_plan_entry(c.e, "n_y", 0);
            cr_assert_not_null(en, "%s: no plan entry for the Mul", what);
            bool plain = tu_layouts[l] && strcmp(tu_layouts[l], "plain") == 0;
            if (!plain && __builtin_cpu_supports("avx2"))
                cr_expect(strstr(en->info.impl, "graphlab:avx2 n"), "%s: the Mul ran %s (%s)",
                          what, en->info.impl, en->info.note);
            dnnl_case_end(&c);
        }
}

/* A 3x3 convolution Winograd fits, followed by an activation oneDNN 2.6's Winograd kernel
 * does not take (SiLU, made by the patterns pass; Tanh): on AVX-512's blocked plan the fusion leaves the activation
 * apart and the convolution runs Winograd (dn_fused.c, winograd_ends_chain), where fused
 * it would run the direct kernel; a Relu, which Winograd takes, stays fused with it. The
 * numbers are the reference's either way, and all that is checked without AVX-512 (no
 * oneDNN Winograd there; the fusion is decided as before). */
static const struct {
    const char *name, *graph;
    const char *group; /* the fused call's name prefix, NULL: the Conv stays apart */
} winograd_chain_cases[] = {
    {"3x3 + SiLU: the SiLU apart",
     "in x f32s[2,64,14,14]; const w f32s[64,64,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1]; s = Sigmoid(y); o = Mul(y, s); out o",
     NULL},
    {"3x3 + Tanh: the Tanh apart",
     "in x f32s[2,64,14,14]; const w f32s[64,64,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1]; o = Tanh(y); out o",
     NULL},
    {"3x3 + Relu: fused, on Winograd",
     "in x f32s[2,64,14,14]; const w f32s[64,64,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1]; o = Relu(y); out o",
     "FusedConvRelu"},
    /* 29 MFLOP above (two images: 14x14 keeps graphlab's AVX2 Winograd at F(4x4), within
     * the tolerance); a small one stays fused, as the direct kernel's with its SiLU */
    {"3x3 of 32 channels at 14x14 + SiLU: too small to part, fused",
     "in x f32s[1,32,14,14]; const w f32s[32,32,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1]; s = Sigmoid(y); o = Mul(y, s); out o",
     "FusedConvSilu"},
    {"3x3 stride 2 + SiLU: no Winograd, fused",
     "in x f32s[2,64,14,14]; const w f32s[64,64,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1] strides=[2,2]; s = Sigmoid(y); o = Mul(y, s); out o",
     "FusedConvSilu"},
};

Test(dnnl_layout, winograd_leaves_an_activation_it_does_not_take_apart)
{
    bool avx512 = tu_cpu_has_avx512();
    for (size_t i = 0; i < GL_ARRAY_LEN(winograd_chain_cases); i++) {
        const char *name = winograd_chain_cases[i].name;
        const char *group = winograd_chain_cases[i].group;
        bool direct = strstr(name, "stride") || strstr(name, "small");
        gl_exec_options o = {.backend = "dnnl", .layout = "blocked"};
        dnnl_case c = dnnl_case_start(name, winograd_chain_cases[i].graph,
                                      "toposort,shape-inference,patterns,fusion", &o);
        /* the group, or the Conv on its own (AVX-512: without it, the numbers only) */
        const gl_plan_entry *en = NULL;
        for (size_t k = 0; avx512 && k < c.m->graph->n_nodes && !en; k++) {
            const gl_node *n = c.m->graph->nodes[k];
            if (n && (group ? strncmp(n->name, group, strlen(group)) == 0
                            : strcmp(n->op_type, "Conv") == 0))
                en = tu_plan_entry(c.e, n->name, 0);
        }
        if (avx512) {
            cr_assert_not_null(en, "%s: no plan entry for %s", name, group ? group : "the Conv");
            cr_expect((strstr(en->info.impl, "wino") != NULL) == !direct,
                      "%s: %s runs %s", name, group ? group : "the Conv", en->info.impl);
        }
        dnnl_case_end(&c);
    }
}

/* A 1x1 convolution to a few channels from blocked activations runs graphlab's kernel
 * (dn_narrow.c) and writes them plain, not padded to the block: at most a quarter of the
 * block (2 channels on AVX2's 8, 4 on AVX-512's 16), with a bias, a fused Add (oneDNN's
 * sum) and Relu; pixels past a whole tile of 8 and channels past a group of 8 (masked).
 * Wider outputs, a 3x3 window, a source that arrives plain, and an activation the kernel
 * does not take (Sigmoid) keep oneDNN's. The numbers are the reference's, with NaN and
 * infinities in the input too. */
#define HEAD3X3(c) "const w0 f32s[" #c "," #c ",3,3] = rand; h = Conv(x, w0) pads=[1,1,1,1]; "
static const struct {
    const char *name, *graph;
    int narrow_avx2, narrow_avx512; /* graphlab's kernel expected (1) or not (0) */
} narrow_cases[] = {
    {"16 -> 2 at 13x11 with a bias",
     "in x f32s[2,16,13,11]; " HEAD3X3(16)
     "const w f32s[2,16,1,1] = rand; const k f32s[2] = rand; y = Conv(h, w, k); out y", 1, 1},
    {"16 -> 2 + Add + Relu (sum and relu post-ops)",
     "in x f32s[2,16,13,11]; in z f32s[2,2,13,11]; " HEAD3X3(16)
     "const w f32s[2,16,1,1] = rand; const k f32s[2] = rand; y = Conv(h, w, k); "
     "a = Add(y, z); r = Relu(a); out r", 1, 1},
    {"20 -> 1 at 9x9: channels past a group of 8",
     "in x f32s[1,20,9,9]; " HEAD3X3(20)
     "const w f32s[1,20,1,1] = rand; y = Conv(h, w); out y", 1, 1},
    {"40 -> 3 + Relu: a quarter of AVX-512's block, not of AVX2's",
     "in x f32s[2,40,6,7]; " HEAD3X3(40)
     "const w f32s[3,40,1,1] = rand; const k f32s[3] = rand; y = Conv(h, w, k); r = Relu(y); "
     "out r", 0, 1},
    {"16 -> 4 + Add: tiles of 4 channels by 2 pixels, one past a whole tile",
     "in x f32s[1,16,5,21]; in z f32s[1,4,5,21]; " HEAD3X3(16)
     "const w f32s[4,16,1,1] = rand; y = Conv(h, w); a = Add(y, z); out a", 0, 1},
    {"16 -> 8: too many channels",
     "in x f32s[1,16,9,9]; " HEAD3X3(16) "const w f32s[8,16,1,1] = rand; y = Conv(h, w); out y",
     0, 0},
    {"16 -> 2, 3x3: not a 1x1",
     "in x f32s[1,16,9,9]; " HEAD3X3(16)
     "const w f32s[2,16,3,3] = rand; y = Conv(h, w) pads=[1,1,1,1]; out y", 0, 0},
    {"16 -> 2 from a graph input: the source arrives plain",
     "in x f32s[1,16,9,9]; const w f32s[2,16,1,1] = rand; y = Conv(x, w); out y", 0, 0},
    {"16 -> 1 + Sigmoid: an activation the kernel does not take",
     "in x f32s[1,16,9,9]; " HEAD3X3(16)
     "const w f32s[1,16,1,1] = rand; y = Conv(h, w); s = Sigmoid(y); out s", 0, 0},
};
#undef HEAD3X3

Test(dnnl_layout, a_1x1_to_few_channels_writes_them_plain)
{
    bool avx512 = tu_cpu_has_avx512(), avx2 = __builtin_cpu_supports("avx2");
    for (size_t i = 0; i < GL_ARRAY_LEN(narrow_cases); i++) {
        const char *name = narrow_cases[i].name;
        gl_exec_options o = {.backend = "dnnl", .layout = "blocked"};
        dnnl_case c = dnnl_case_start(name, narrow_cases[i].graph,
                                      "toposort,shape-inference,fusion", &o);
        /* the last node makes the output: the 1x1, or the unit it heads */
        const gl_node *last = c.m->graph->nodes[c.m->graph->n_nodes - 1];
        const gl_plan_entry *en = tu_plan_entry(c.e, last->name, 0);
        cr_assert_not_null(en, "%s: no plan entry for %s", name, last->name);
        bool want = avx2 && (avx512 ? narrow_cases[i].narrow_avx512 : narrow_cases[i].narrow_avx2);
        bool got = strstr(en->info.impl, "graphlab:avx2 1x1") != NULL;
        cr_expect(got == want, "%s: %s runs %s (%s)", name, last->name, en->info.impl,
                  en->info.note);
        dnnl_case_check_specials(&c, 3, 40, 77);
        dnnl_case_end(&c);
    }
}

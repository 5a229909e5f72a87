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

#define RTOL 1e-4
#define ATOL 1e-5

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
    /* 24 channels each: off the block, so no Concat is written in place (dn_concat.c) */
    {"Concat of two 1x1 convolutions: the Concat outweighs them",
     "in x f32s[1,16,28,28]; const a f32s[24,16,1,1] = rand; const b f32s[24,16,1,1] = rand; "
     "p = Conv(x, a); q = Conv(x, b); c = Concat(p, q) axis=1; out c",
     SHAPES, 'n', "+ 1 Concat", "n_p"},
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
    {"first layer at batch 1: a tie keeps nhwc",
     "in x f32s[1,3,32,32]; const w f32s[16,3,3,3] = rand; "
     "y = Conv(x, w) pads=[1,1,1,1] strides=[2,2]; out y",
     SHAPES, 'n', BY_COST, "n_y"},
    {"no convolution",
     "in x f32s[1,8,4,4]; y = Relu(x); out y",
     SHAPES, 'p', "no convolution", NULL},
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

/* The layout name a plan entry writes for policy letter l ("" for plain). */
static const char *written_as(char l)
{
    return l == 'n' ? "nhwc" : l == 'b' ? "nChw" : "plain";
}

static void expect_plan(const lcase *c, const gl_exec *dn, const char *what)
{
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
    static const char *layouts[] = {NULL, "plain", "nhwc", "blocked"};
    for (size_t i = 0; i < GL_ARRAY_LEN(layouts); i++) {
        char what[200];
        snprintf(what, sizeof(what), "%s (--layout %s)", c->name,
                 layouts[i] ? layouts[i] : "auto");
        gl_tensor *got = NULL;
        gl_exec *dn = tu_exec_run(m, "dnnl", layouts[i], in, n_in, &got, 1, what);
        if (getenv("GL_TEST_PLAN"))
            gl_exec_print_plan(dn, stderr);
        gl_compare r;
        char line[256];
        gl_compare_tensors(got, want, RTOL, ATOL, &r);
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok, "%s: dnnl vs ref: %s", what, line);
        if (layouts[i]) {
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

/* A 3x3 stride-1 convolution on blocked activations runs on oneDNN's Winograd kernel
 * (where the CPU has it: AVX-512), with its numbers within the usual tolerance of the
 * reference; --set dnnl.winograd=0 (gl_exec_options.dnnl_no_winograd) keeps the direct one,
 * and so does a strided or grouped convolution. */
typedef struct wcase {
    const char *name, *graph;
    bool no_winograd, want_winograd;
} wcase;

static const wcase winograd_cases[] = {
    {"3x3 64 -> 64 at 28x28, Relu",
     "in x f32s[1,64,28,28]; const w f32s[64,64,3,3] = rand; const k f32s[64] = rand; "
     "y = Conv(x, w, k) pads=[1,1,1,1]; r = Relu(y); out r",
     false, true},
    {"the same with dnnl.winograd=0",
     "in x f32s[1,64,28,28]; const w f32s[64,64,3,3] = rand; const k f32s[64] = rand; "
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

Test(dnnl_layout, winograd_where_it_fits_and_as_asked)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(winograd_cases); i++) {
        const wcase *c = &winograd_cases[i];
        gn_graph b;
        gl_pipeline *p = gn_run_passes(c->name, 13, c->graph, NULL, SHAPES, &b);
        cr_assert_not_null(p);
        const gl_model *m = p->steps[p->n_steps - 1].model;
        gl_tensor **in = gn_feeds(&b, m->graph, c->name);
        size_t n_in = m->graph->n_inputs;
        gl_tensor *want = NULL, *got = NULL;
        gl_exec_free(tu_exec_run(m, "ref", NULL, in, n_in, &want, 1, c->name));
        gl_exec_options o = {.backend = "dnnl", .layout = "blocked",
                             .dnnl_no_winograd = c->no_winograd};
        gl_exec *e = NULL;
        cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s: %s", c->name, gl_error_message());
        cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)in, n_in, &got, 1), GL_OK,
                     "%s: %s", c->name, gl_error_message());
        gl_compare r;
        char line[256];
        gl_compare_tensors(got, want, RTOL, ATOL, &r);
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok, "%s: dnnl vs ref: %s", c->name, line);
        const gl_plan_entry *en = tu_plan_entry(e, "n_y", 0);
        cr_assert_not_null(en, "%s: no plan entry", c->name);
        bool wino = strstr(en->info.impl, "wino") != NULL;
        /* oneDNN 2.6's f32 Winograd kernels need AVX-512 */
        bool can = __builtin_cpu_supports("avx512f");
        cr_expect(wino == (c->want_winograd && can), "%s: implementation %s", c->name,
                  en->info.impl);
        /* A NaN and an infinity in the input: Winograd's transforms would smear them over
         * their tiles (Inf - Inf); the run takes the reference kernel instead. */
        float *xs = gl_tensor_make_writable(in[0]);
        xs[5] = NAN;
        xs[100] = INFINITY;
        xs[2000] = -INFINITY;
        gl_tensor_free(got);
        gl_tensor_free(want);
        got = want = NULL;
        gl_exec_free(tu_exec_run(m, "ref", NULL, in, n_in, &want, 1, c->name));
        cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)in, n_in, &got, 1), GL_OK,
                     "%s: %s", c->name, gl_error_message());
        gl_compare_tensors(got, want, RTOL, ATOL, &r);
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok, "%s, NaN and infinities in the input: dnnl vs ref: %s", c->name, line);
        gl_tensor_free(got);
        gl_tensor_free(want);
        gl_exec_free(e);
        gn_free_tensors(in, n_in);
        gl_pipeline_free(p);
    }
}

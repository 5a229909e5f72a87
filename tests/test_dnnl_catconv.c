/* test_dnnl_catconv.c — the fusion rules of a channel Concat end to end, a graph going
 * through toposort, shape-inference and fusion, and the oneDNN backend running its group:
 *  - concat-conv1x1, a Concat read by a 1x1 Conv (and activations): one 1x1 convolution
 *    per Concat input into one destination (src/exec/dnnl/dn_catconv.c);
 *  - channel-shuffle, ShuffleNet's Concat, Reshape, Transpose, Reshape and channel
 *    Slices: one reorder per piece into the shuffled places (src/exec/dnnl/dn_shuffle.c).
 *
 * Each row: the graph (graphnote.h), the fused node's name, the plan's implementation
 * must contain `what` (e.g. "x2 + sum + eltwise_relu") and its note `note`, under each
 * layout policy the row names ('p' plain, 'n' nhwc, 'b' blocked); the dnnl run must equal
 * the reference run of the graph before fusion (every output), and a second run builds
 * nothing and reorders no constant. Rows with dims unknown to the IR (?N) are built at
 * the first run, not at the claim.
 */
#include "exec/compare.h"
#include "exec/exec.h"
#include "graphnote.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ccase {
    const char *name;
    const char *graph;
    const char *layouts;
    const char *node; /* the fused node */
    const char *what; /* in its implementation */
    const char *note; /* in its note */
    size_t n_out;     /* graph outputs */
} ccase;

#define CATCONV "fused: Concat", 1

#define RTOL 1e-4
#define ATOL 1e-5

static const ccase catconv_cases[] = {
    {"two inputs of 16 channels, bias, Relu",
     "in a f32s[1,16,6,6]; in b f32s[1,16,6,6]; const w f32[8,32,1,1] = rand; "
     "const k f32[8] = rand; c = Concat(a, b) axis=1; y = Conv(c, w, k); r = Relu(y); out r",
     "pnb", "FusedConcatConvRelu_1", "x2 + sum + eltwise_relu", CATCONV},
    {"three inputs of odd channels (padded blocks), no bias, no activation",
     "in a f32s[1,8,5,7]; in b f32s[1,5,5,7]; in d f32s[1,11,5,7]; "
     "const w f32[6,24,1,1] = rand; c = Concat(a, b, d) axis=1; y = Conv(c, w); out y",
     "pnb", "FusedConcatConv_1", "x3 + sum", CATCONV},
    {"axis -3, batch 2, dims unknown to the IR, Clip",
     "in a f32s[?2,16,?4,?4]; in b f32s[?2,24,?4,?4]; const w f32[12,40,1,1] = rand; "
     "const k f32[12] = rand; const lo f32[] = 0; const hi f32[] = 0.5; "
     "c = Concat(a, b) axis=-3; y = Conv(c, w, k); r = Clip(y, lo, hi); out r",
     "nb", "FusedConcatConvClip_1", "x2 + sum + eltwise_clip", CATCONV},
    /* Issue 22: more than the fusion pass's old 4 inputs (DenseNet's Concats). */
    {"five inputs of 8 channels, Relu",
     "in a f32s[1,8,6,6]; in b f32s[1,8,6,6]; in d f32s[1,8,6,6]; in e f32s[1,8,6,6]; "
     "in f f32s[1,8,6,6]; const w f32[8,40,1,1] = rand; c = Concat(a, b, d, e, f) axis=1; "
     "y = Conv(c, w); r = Relu(y); out r",
     "pnb", "FusedConcatConvRelu_1", "x5 + sum + eltwise_relu", CATCONV},
    {"one input twice",
     "in a f32s[1,16,4,4]; const w f32[16,32,1,1] = rand; c = Concat(a, a) axis=1; "
     "y = Conv(c, w); r = Relu(y); out r",
     "nb", "FusedConcatConvRelu_1", "x2 + sum + eltwise_relu", CATCONV},
    /* Issue 26: a Concat input of 0 channels has no weights to slice (make_slice wrote
     * through its missing buffer); the unit is refused (no group, or its members run when
     * the dims are known at the first run only): node NULL, only the results are
     * checked. */
    {"an input of 0 channels",
     "in a f32s[1,0,4,4]; in b f32s[1,8,4,4]; const w f32[4,8,1,1] = rand; "
     "c = Concat(a, b) axis=1; y = Conv(c, w); out y",
     "pnb", NULL, NULL, NULL, 1},
    {"an input of 0 channels, dims unknown to the IR",
     "in a f32s[?1,0,?4,?4]; in b f32s[?1,8,?4,?4]; const w f32[4,8,1,1] = rand; "
     "c = Concat(b, a) axis=1; y = Conv(c, w); r = Relu(y); out r",
     "pnb", NULL, NULL, NULL, 1},
};

/* ShuffleNet's block: two inputs of 8 channels, groups of 2, halves sliced. */
#define SHUF_MOVE(n, g, k, c, h, w)                                                        \
    "const s5 i64[5] = " #n "," #g "," #k "," #h "," #w "; const s4 i64[4] = " #n "," #c  \
    "," #h "," #w "; r = Reshape(cc, s5); t = Transpose(r) perm=[0,2,1,3,4]; "              \
    "y = Reshape(t, s4); "
#define SHUF_HALVES(lo, mid, hi)                                                           \
    "const z i64[1] = " #lo "; const m i64[1] = " #mid "; const e i64[1] = " #hi "; "       \
    "const ax i64[1] = 1; p = Slice(y, z, m, ax); q = Slice(y, m, e, ax); "
/* The inputs come through 1x1 convolutions, so they arrive in the plan's layout. */
#define SHUF_CONVS(ca, cb)                                                                 \
    "const wa f32[" #ca "," #ca ",1,1] = rand; const wb f32[" #cb "," #cb ",1,1] = rand; "  \
    "ya = Conv(a, wa); yb = Conv(b, wb); cc = Concat(ya, yb) axis=1; "
#define SHUFFLE "fused: channel shuffle"

static const ccase shuffle_cases[] = {
    /* Channels innermost (nhwc; blocked inputs staged to nhwc): the two moves into each
     * half are one interleaving pass; plain NCHW keeps the reorders. */
    {"shuffle halves, g 2, nhwc",
     "in a f32s[1,8,5,7]; in b f32s[1,8,5,7]; " SHUF_CONVS(8, 8) SHUF_MOVE(1, 2, 8, 16, 5, 7)
     SHUF_HALVES(0, 8, 16) "out p, q",
     "nb", "FusedChannelShuffle_1", "interleave x4", "(2 pairs interleaved)", 2},
    {"shuffle halves, g 2, 13 channels a half: counts differ, no pairs",
     "in a f32s[1,13,5,7]; in b f32s[1,13,5,7]; " SHUF_CONVS(13, 13)
     SHUF_MOVE(1, 2, 13, 26, 5, 7) SHUF_HALVES(0, 13, 26) "out p, q",
     "pn", "FusedChannelShuffle_1", "x4", "(0 pairs interleaved)", 2},
    /* Past SH_ONE_THREAD_ELEMS: oneDNN's reorders on the plan's threads, no interleave. */
    {"shuffle halves, 295K elements",
     "in a f32s[1,64,48,48]; in b f32s[1,64,48,48]; " SHUF_CONVS(64, 64)
     SHUF_MOVE(1, 2, 64, 128, 48, 48) SHUF_HALVES(0, 64, 128) "out p, q",
     "pnb", "FusedChannelShuffle_1", "x4", "(0 pairs interleaved)", 2},
    {"shuffle whole, g 4, unequal inputs, batch 2",
     "in a f32s[2,12,4,3]; in b f32s[2,4,4,3]; " SHUF_CONVS(12, 4)
     SHUF_MOVE(2, 4, 4, 16, 4, 3) "out y",
     "pnb", "FusedChannelShuffle_1", "x4", SHUFFLE, 1},
    /* Input a is a channel Slice of a convolution's output: a view (plain, nhwc) read as
     * it is, or (blocked, not on a block) a tensor the Slice made. */
    {"shuffle of a view",
     "in a f32s[1,16,24,24]; in b f32s[1,8,24,24]; const wa f32[16,16,1,1] = rand; "
     "const wb f32[8,8,1,1] = rand; ya = Conv(a, wa); yb = Conv(b, wb); "
     "const s0 i64[1] = 4; const s1 i64[1] = 12; const a1 i64[1] = 1; "
     "va = Slice(ya, s0, s1, a1); cc = Concat(va, yb) axis=1; "
     SHUF_MOVE(1, 2, 8, 16, 24, 24) SHUF_HALVES(0, 8, 16) "out p, q",
     "pnb", "FusedChannelShuffle_1", "x4", SHUFFLE, 2},
    {"shuffle straight from the graph inputs, uneven Slices, a negative bound",
     "in a f32s[1,20,6,6]; in b f32s[1,20,6,6]; cc = Concat(a, b) axis=1; "
     SHUF_MOVE(1, 2, 20, 40, 6, 6) SHUF_HALVES(0, 13, -1) "out p, q",
     "pnb", "FusedChannelShuffle_1", "x4", SHUFFLE, 2},
};

static void run_case(const ccase *c)
{
    gn_graph b;
    cr_assert(gn_build(c->name, 13, c->graph, &b), "%s: %s", c->name, b.err);
    gl_pipeline *p = tu_passes(b.m, "toposort,shape-inference,fusion", c->name);
    const gl_model *m = p->steps[p->n_steps - 1].model;
    const gl_model *before = p->steps[p->n_steps - 2].model;
    /* a refused unit (node NULL) may be no group at all: the fusion pass asks the target */
    cr_assert(gn_count_domain(m->graph, "graphlab.fused") == 1u ||
                  (!c->node && gn_count_domain(m->graph, "graphlab.fused") == 0u),
              "%s: not one group", c->name);
    gl_tensor **in = gn_feeds(&b, before->graph, c->name);
    size_t n_in = before->graph->n_inputs;
    gl_tensor *want[2] = {NULL, NULL};
    cr_assert(c->n_out <= 2);
    gl_exec *ref = tu_exec_run(before, "ref", NULL, in, n_in, want, c->n_out, c->name);
    /* the inputs again with NaN, +Inf, -Inf and -0: the reference says what ONNX makes */
    gl_tensor *special[8] = {NULL}, *want_special[2] = {NULL, NULL};
    cr_assert(n_in <= 8);
    for (size_t i = 0; i < n_in; i++)
        special[i] = tu_with_specials(in[i]);
    gl_exec_free(tu_exec_run(before, "ref", NULL, special, n_in, want_special, c->n_out,
                             c->name));
    for (const char *l = c->layouts; *l; l++) {
        char what[200];
        snprintf(what, sizeof(what), "%s (%s)", c->name, tu_layout_name(*l));
        gl_tensor *got[2] = {NULL, NULL};
        gl_exec *dn = tu_exec_run(m, "dnnl", tu_layout_name(*l), in, n_in, got, c->n_out,
                                  what);
        if (getenv("GL_TEST_PLAN"))
            gl_exec_print_plan(dn, stderr);
        gl_compare r;
        char line[256];
        for (size_t o = 0; o < c->n_out; o++) {
            gl_compare_tensors(got[o], want[o], RTOL, ATOL, &r);
            gl_compare_format(&r, line, sizeof(line));
            cr_expect(r.ok, "%s: output %zu, dnnl vs ref: %s", what, o, line);
            gl_tensor_free(got[o]);
            got[o] = NULL;
        }
        if (!c->node) {
            gl_exec_free(dn);
            continue;
        }
        const gl_plan_entry *en = tu_plan_entry(dn, c->node, 0);
        cr_assert_not_null(en, "%s: no plan entry '%s'", what, c->node);
        cr_expect(!strcmp(en->backend, "dnnl") && !strstr(en->info.impl, "ref") &&
                      strstr(en->info.impl, c->what) && strstr(en->info.note, c->note),
                  "%s: expected '%s', got %s %s (%s)", what, c->what, en->backend,
                  en->info.impl, en->info.note);
        tu_exec_rerun_cached(dn, (const gl_tensor *const *)in, n_in, got, c->n_out, what);
        for (size_t o = 0; o < c->n_out; o++) {
            gl_compare_tensors(got[o], want[o], RTOL, ATOL, &r);
            cr_expect(r.ok, "%s: output %zu, second run differs", what, o);
            gl_tensor_free(got[o]);
        }
        /* issue 26: the group's relu would make a NaN a 0; nothing is built again */
        tu_exec_rerun_cached(dn, (const gl_tensor *const *)special, n_in, got, c->n_out,
                             what);
        for (size_t o = 0; o < c->n_out; o++) {
            gl_compare_tensors(got[o], want_special[o], RTOL, ATOL, &r);
            gl_compare_format(&r, line, sizeof(line));
            cr_expect(r.ok, "%s: output %zu with NaN and infinities in the inputs, dnnl vs "
                      "ref: %s", what, o, line);
            gl_tensor_free(got[o]);
        }
        gl_exec_free(dn);
    }
    for (size_t o = 0; o < c->n_out; o++) {
        gl_tensor_free(want[o]);
        gl_tensor_free(want_special[o]);
    }
    for (size_t i = 0; i < n_in; i++)
        gl_tensor_free(special[i]);
    gl_exec_free(ref);
    gn_free_tensors(in, n_in);
    gl_pipeline_free(p);
}

Test(dnnl_catconv, concat_then_1x1_conv_runs_as_one_convolution_per_input)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(catconv_cases); i++)
        run_case(&catconv_cases[i]);
}

Test(dnnl_catconv, channel_shuffle_runs_as_one_reorder_per_piece)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(shuffle_cases); i++)
        run_case(&shuffle_cases[i]);
}

/* test_qdq.c — the `qdq` pass as a table of cases: QDQ units (DequantizeLinear ->
 * Conv/MatMul/Gemm [+ bias, activations] -> QuantizeLinear) that become groups, the
 * Relu/Clip a QuantizeLinear's range makes redundant, and the units refused, each with
 * the constraint's text.
 *
 * Each row is a graph in graphnote.h's notation. It runs toposort,shape-inference,qdq
 * with qdq.probe=0 (the checks of the pass alone: whether oneDNN takes a group is
 * test_dnnl_qprod.c's and tests/qdq_models.sh's); then:
 *   - the decisions: how many groups and absorbed activations were applied, a refusal
 *     holding the row's text, or no decision at all;
 *   - the op counts after (the DequantizeLinear another node reads stays);
 *   - the result verifies, and computes on seeded random inputs what the graph computed
 *     before (reference backend: the group's body is the unit, fake quantization), bit
 *     for bit: grouping and absorbing change no number;
 *   - the saved model loads again and computes the same.
 * GL_QDQTEST_SHOW=NAME prints that row's decisions and the graph after.
 */
#define TU_CASE_SHORTHANDS
#include "graphnote.h"
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASSES "toposort,shape-inference,qdq"

typedef struct qcase {
    const char *name;
    const char *graph;
    int groups;         /* qdq-group applied */
    int absorbed;       /* qdq-absorb-activation applied */
    const char *ops;    /* op counts after, or NULL */
    const char *reason; /* a refusal's text (any qdq rule), or NULL: no refusal expected */
    int integer;        /* qdq-integer-op applied */
    int opset;          /* 0: 13 */
} qcase;

/* The pieces of the rows: an input pair, weights and bias of a 3x3 Conv of 3 -> 4
 * channels, and the output pair. */
#define XQ "in xq u8[1,3,6,6]; const xs f32[1] = 0.02; const xz u8[1] = 128; " \
    "x = DequantizeLinear(xq, xs, xz); "
#define WQ "const wq i8[4,3,3,3] = rand; const ws f32[4] = 0.01,0.02,0.015,0.005; " \
    "const wz i8[4] = 0,0,0,0; w = DequantizeLinear(wq, ws, wz) axis=0; "
#define BQ "const bq i32[4] = 10,-20,30,5; const bs f32[4] = 0.0002,0.0004,0.0003,0.0001; " \
    "b = DequantizeLinear(bq, bs) axis=0; "
#define YQ(src, zero) "const ys f32[1] = 0.05; const yz u8[1] = " zero "; " \
    "yq = QuantizeLinear(" src ", ys, yz); y = DequantizeLinear(yq, ys, yz); out y"
#define CONV "c = Conv(x, w, b) pads=[1,1,1,1]; "
#define AQ "in aq u8[1,4,5,5]; in bq u8[1,4,5,5]; const as f32[1] = 0.03; " \
    "const az u8[1] = 100; const bs f32[1] = 0.02; const bz u8[1] = 7; " \
    "a = DequantizeLinear(aq, as, az); b = DequantizeLinear(bq, bs, bz); "

#define GROUP1 "graphlab.fused.QConv_0=1 Conv=0 QuantizeLinear=0 DequantizeLinear=1"

static const qcase cases[] = {
    {"conv", XQ WQ BQ CONV YQ("c", "128"), 1, 0, GROUP1, NULL},
    {"conv_no_bias", XQ WQ "c = Conv(x, w) pads=[1,1,1,1]; " YQ("c", "128"), 1, 0, GROUP1,
     NULL},
    {"conv_relu_absorbed", XQ WQ BQ CONV "r = Relu(c); " YQ("r", "0"), 1, 1,
     GROUP1 " Relu=0", NULL},
    {"conv_relu_kept", XQ WQ BQ CONV "r = Relu(c); " YQ("r", "10"), 1, 0, GROUP1,
     "cuts inside the range"},
    /* 255 steps of 0.02 reach 5.1 < 6: the Clip changes nothing Q keeps */
    {"conv_clip6_absorbed", XQ WQ BQ CONV "const lo f32[] = 0; const hi f32[] = 6; "
     "r = Clip(c, lo, hi); const ys f32[1] = 0.02; const yz u8[1] = 0; "
     "yq = QuantizeLinear(r, ys, yz); y = DequantizeLinear(yq, ys, yz); out y", 1, 1,
     GROUP1 " Clip=0", NULL},
    {"conv_clip1_kept", XQ WQ BQ CONV "const lo f32[] = 0; const hi f32[] = 1; "
     "r = Clip(c, lo, hi); " YQ("r", "0"), 1, 0, GROUP1, "cuts inside the range"},
    {"conv_two_activations", XQ WQ BQ CONV "r = Relu(c); s = Sigmoid(r); " YQ("s", "0"), 1,
     0, GROUP1 " Relu=0 Sigmoid=0", NULL},
    {"matmul_bias", "in xq u8[2,5,8]; const xs f32[1] = 0.03; const xz u8[1] = 100; "
     "x = DequantizeLinear(xq, xs, xz); const wq i8[8,6] = rand; "
     "const ws f32[6] = 0.01,0.02,0.03,0.01,0.02,0.03; const wz i8[6] = 0,0,0,0,0,0; "
     "w = DequantizeLinear(wq, ws, wz) axis=1; const bq i32[6] = 1,2,3,-4,-5,-6; "
     "const bs f32[6] = 0.0003,0.0006,0.0009,0.0003,0.0006,0.0009; "
     "b = DequantizeLinear(bq, bs) axis=0; m = MatMul(x, w); a = Add(m, b); "
     YQ("a", "128"), 1, 0,
     "graphlab.fused.QMatMul_0=1 MatMul=0 Add=0 DequantizeLinear=1", NULL},
    {"gemm_transB", "in xq u8[3,8]; const xs f32[1] = 0.03; const xz u8[1] = 100; "
     "x = DequantizeLinear(xq, xs, xz); const wq i8[5,8] = rand; "
     "const ws f32[5] = 0.01,0.02,0.03,0.01,0.02; const wz i8[5] = 0,0,0,0,0; "
     "w = DequantizeLinear(wq, ws, wz) axis=0; c = Gemm(x, w) transB=1; " YQ("c", "128"),
     1, 0, "graphlab.fused.QGemm_0=1 Gemm=0", NULL},
    /* two Convs read one DequantizeLinear: both group, and it goes with the last */
    {"shared_input", XQ WQ BQ CONV "d = Conv(x, w, b) pads=[1,1,1,1]; "
     "const ys f32[1] = 0.05; const yz u8[1] = 128; yq = QuantizeLinear(c, ys, yz); "
     "dq = QuantizeLinear(d, ys, yz); y = DequantizeLinear(yq, ys, yz); "
     "e = DequantizeLinear(dq, ys, yz); out y, e", 2, 0,
     "graphlab.fused.QConv_0=1 graphlab.fused.QConv_1=1 Conv=0 DequantizeLinear=2", NULL},
    /* a DequantizeLinear also read outside the unit stays for its other reader */
    {"input_also_read", XQ WQ BQ CONV "z = Relu(x); " YQ("c", "128") ", z", 1, 0,
     "graphlab.fused.QConv_0=1 Conv=0 DequantizeLinear=2 Relu=1", NULL},
    /* ---- residual Add: two quantized activations ---- */
    {"add_relu", AQ "s = Add(a, b); r = Relu(s); " YQ("r", "0"), 1, 1,
     "graphlab.fused.QAdd_0=1 Add=0 Relu=0 QuantizeLinear=0 DequantizeLinear=1", NULL},
    {"add_sigmoid", AQ "s = Add(a, b); r = Sigmoid(s); " YQ("r", "0"), 1, 0,
     "graphlab.fused.QAdd_0=1 Add=0 Sigmoid=0", NULL},
    {"add_broadcast", "in aq u8[1,4,5,5]; in bq u8[1,4,1,1]; const as f32[1] = 0.03; "
     "const az u8[1] = 100; a = DequantizeLinear(aq, as, az); b = DequantizeLinear(bq, as, az); "
     "s = Add(a, b); " YQ("s", "128"), 0, 0, "Add=1", "no broadcast"},
    {"add_constant", "in aq u8[1,4,5,5]; const bq u8[1,4,5,5] = rand; const as f32[1] = 0.03; "
     "const az u8[1] = 100; a = DequantizeLinear(aq, as, az); b = DequantizeLinear(bq, as, az); "
     "s = Add(a, b); " YQ("s", "128"), 0, 0, "Add=1", "adds a constant"},
    /* ---- ops that run on the 8-bit values when the pair around them is one quantization ---- */
    {"maxpool_integer", XQ "p = MaxPool(x) kernel_shape=[2,2] strides=[2,2]; "
     "pq = QuantizeLinear(p, xs, xz); y = DequantizeLinear(pq, xs, xz); out y", 0, 0,
     "MaxPool=1 QuantizeLinear=0 DequantizeLinear=1", NULL, 1},
    {"reshape_integer", XQ "const shape i64[2] = 1,108; p = Reshape(x, shape); "
     "pq = QuantizeLinear(p, xs, xz); y = DequantizeLinear(pq, xs, xz); out y", 0, 0,
     "Reshape=1 QuantizeLinear=0 DequantizeLinear=1", NULL, 1},
    {"maxpool_other_scale", XQ "p = MaxPool(x) kernel_shape=[2,2]; " YQ("p", "128"), 0, 0,
     "MaxPool=1 QuantizeLinear=1", "quantize differently"},
    {"maxpool_opset11", XQ "p = MaxPool(x) kernel_shape=[2,2]; "
     "pq = QuantizeLinear(p, xs, xz); y = DequantizeLinear(pq, xs, xz); out y", 0, 0,
     "MaxPool=1 QuantizeLinear=1", "takes 8-bit integers from opset 12", 0, 11},
    /* ---- refused ---- */
    {"weight_zero_point", XQ "const wq i8[4,3,3,3] = rand; const ws f32[4] = 0.01,0.02,0.015,"
     "0.005; const wz i8[4] = 0,1,0,0; w = DequantizeLinear(wq, ws, wz) axis=0; " BQ CONV
     YQ("c", "128"), 0, 0, "Conv=1", "weight zero points are not all 0"},
    {"weight_axis", XQ "const wq i8[4,3,3,3] = rand; const ws f32[3] = 0.01,0.02,0.015; "
     "const wz i8[3] = 0,0,0; w = DequantizeLinear(wq, ws, wz) axis=1; " BQ CONV
     YQ("c", "128"), 0, 0, "Conv=1", "one per output channel, on axis 0"},
    {"input_scale_not_constant", "in xq u8[1,3,6,6]; in xs f32[1]; const xz u8[1] = 128; "
     "x = DequantizeLinear(xq, xs, xz); " WQ BQ CONV YQ("c", "128"), 0, 0, "Conv=1",
     "is not a constant"},
    {"float_bias", XQ WQ "const b f32[4] = rand; " CONV YQ("c", "128"), 0, 0, "Conv=1",
     "not a DequantizeLinear of an int32 constant"},
    {"weights_not_constant", XQ "in wq i8[4,3,3,3]; const ws f32[4] = 0.01,0.02,0.015,0.005; "
     "const wz i8[4] = 0,0,0,0; w = DequantizeLinear(wq, ws, wz) axis=0; " BQ CONV
     YQ("c", "128"), 0, 0, "Conv=1", "are not an int8 constant"},
    {"conv_output_read_twice", XQ WQ BQ CONV YQ("c", "128") ", c", 0, 0, "Conv=1",
     "is read by 2 nodes"},
    /* ---- no unit: no decision ---- */
    {"add_twice", XQ "a = Add(x, x); " YQ("a", "128"), 1, 0,
     "graphlab.fused.QAdd_0=1 Add=0 DequantizeLinear=1", NULL},
    {"q_after_mul", XQ "a = Mul(x, x); " YQ("a", "128"), 0, 0, "Mul=1", NULL},
    {"float_conv", "in x f32[1,3,6,6]; " WQ BQ CONV YQ("c", "128"), 0, 0, "Conv=1", NULL},
};

static void show(const qcase *c, const gl_pipeline *p, const gl_snapshot *s, const gl_graph *g)
{
    const char *only = getenv("GL_QDQTEST_SHOW");
    if (!only || strcmp(only, c->name))
        return;
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++)
        gl_decision_print(&p->log.items[i], stderr);
    gn_print_graph(g, stderr);
}

static void check_decisions(const qcase *c, const gl_pipeline *p, const gl_snapshot *s)
{
    int groups = 0, absorbed = 0, integer = 0;
    bool refusal = false;
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++) {
        const gl_decision *d = &p->log.items[i];
        bool applied = d->verdict == GL_APPLIED;
        groups += applied && !strcmp(d->rule, "qdq-group");
        absorbed += applied && !strcmp(d->rule, "qdq-absorb-activation");
        integer += applied && !strcmp(d->rule, "qdq-integer-op");
        refusal |= d->verdict == GL_REFUSED && c->reason && strstr(d->reason, c->reason);
        if (d->verdict == GL_REFUSED && !c->reason)
            cr_expect_fail("%s: unexpected refusal: %s", c->name, d->reason);
    }
    cr_expect_eq(groups, c->groups, "%s: %d groups, expected %d", c->name, groups, c->groups);
    cr_expect_eq(absorbed, c->absorbed, "%s: %d absorbed, expected %d", c->name, absorbed,
                 c->absorbed);
    cr_expect_eq(integer, c->integer, "%s: %d integer ops, expected %d", c->name, integer,
                 c->integer);
    if (c->reason)
        cr_expect(refusal, "%s: no refusal saying '%s'", c->name, c->reason);
}

static void run_case(const qcase *c, const char *dir)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes_set(c->name, c->opset ? c->opset : 13, c->graph, NULL, PASSES, "qdq.probe=0", &b);
    if (!p)
        return;
    size_t k = p->n_steps - 1;
    const gl_model *before = p->steps[k - 1].model, *after = p->steps[k].model;
    show(c, p, &p->steps[k], after->graph);
    cr_expect_eq(gl_graph_verify(after->graph, false), GL_OK, "%s: %s", c->name,
                 gl_error_message());
    check_decisions(c, p, &p->steps[k]);
    gn_expect_op_counts(c->name, c->ops, after->graph);
    gn_expect_same_outputs(c->name, &b, before, after, 0, 0, false);
    if (c->groups)
        gn_expect_saved_same(c->name, &b, after, dir);
    gl_pipeline_free(p);
}

Test(qdq, cases)
{
    char *dir = tu_tmpdir();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i], dir);
    tu_rmtree(dir);
    free(dir);
}

/* PASS:K applies the first K rewrites: an absorbed activation counts as one. */
Test(qdq, budget)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes_set("budget", 13, XQ WQ BQ CONV "r = Relu(c); "
                                       YQ("r", "0"), NULL, "toposort,shape-inference,qdq:1",
                                       "qdq.probe=0", &b);
    cr_assert_not_null(p);
    const gl_graph *g = p->steps[p->n_steps - 1].model->graph;
    cr_expect_eq(gn_count_op(g, "Relu"), 0);
    cr_expect_eq(gn_count_op(g, "Conv"), 1, "the group waits for the next rewrite");
    gl_pipeline_free(p);
}

/* test_layout.c — the `layout` pass and graphlab's channels-last ops.
 *
 * Every case is one row: a graph in graphnote.h's notation, run through
 *   toposort, shape-inference, layout, transpose-push
 * (the tail of the default pipeline) and checked:
 *   1. the regions converted (applied decisions) and the graphlab nodes made;
 *   2. the Transposes left after transpose-push, and that they are what the layout
 *      decision predicted (its after_push_with number);
 *   3. a refusal whose reason holds the row's text, when the row names one;
 *   4. other op counts ("Conv=0 Resize=1");
 *   5. the same outputs from the input model and the result on seeded random inputs
 *      (the reference backend), graph interface kept;
 *   6. the result verifies and is sorted.
 * Then: the ops' kernels and shapes as tables of hand-computed values, the functions the
 * saved model carries (run in place of the kernels they stand for), save and reload,
 * onnx.checker when /usr/bin/python3 has onnx, and the shared nhwc_convnet.
 *
 * GL_LAYOUTTEST_SHOW=NAME prints that case's decisions and the graph after.
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
#include <unistd.h>

#define PIPELINE "toposort,shape-inference,layout,transpose-push"

typedef struct lcase {
    const char *name;
    int opset;
    const char *graph;
    int regions;         /* applied nhwc-region decisions */
    int graphlab;        /* nodes of domain graphlab after */
    int transposes;      /* Transposes after the push */
    const char *refusal; /* text of a refused decision's reason; NULL: none expected */
    const char *ops;     /* other op counts after, "Conv=0 Resize=1" */
    const char *set;     /* a --set, "layout.ignore-cost=1" */
    double rtol;
} lcase;

/* NHWC data between Transposes: x[1,5,6,4] is NCHW [1,4,5,6] inside. */
#define SANDWICH(decl, op)                                                                  \
    decl "; t = Transpose(x) perm=[0,3,1,2]; r = " op "; y = Transpose(r) perm=[0,2,3,1]; "  \
         "out y"
#define X4 "in x f32s[1,5,6,4]"
#define W34 "const w f32s[3,4,3,3] = rand; const b f32s[3] = rand"
#define BN4                                                                                 \
    "const sc f32[4] = 1,0.5,2,1.5; const bb f32[4] = 0,0.1,-0.1,0.2; "                    \
    "const mu f32[4] = 0.1,0.2,0.3,0.4; const va f32[4] = 1,2,0.5,0.25"

static const lcase convert_cases[] = {
    {"conv_sandwich_op13", 13, SANDWICH(X4 "; " W34, "Conv(t, w, b) pads=[1,1,1,1]"), 1, 1, 0,
     .ops = "Conv=0", .rtol = 1e-5},
    {"conv_sandwich_op11", 11,
     SANDWICH(X4 "; " W34, "Conv(t, w, b) strides=[2,2] auto_pad=\"SAME_UPPER\""), 1, 1, 0,
     .rtol = 1e-5},
    {"conv_sandwich_op18", 18,
     SANDWICH(X4 "; const w f32s[4,1,3,3] = rand",
              "Conv(t, w) group=4 dilations=[2,2] kernel_shape=[3,3]"),
     1, 1, 0, .rtol = 1e-5},
    {"maxpool_sandwich_op12", 12,
     SANDWICH(X4, "MaxPool(t) kernel_shape=[2,3] strides=[2,1] ceil_mode=1"), 1, 1, 0,
     .rtol = 0},
    {"maxpool_sandwich_op8", 8,
     SANDWICH(X4, "MaxPool(t) kernel_shape=[2,2] storage_order=0"), 1, 1, 0, .rtol = 0},
    {"averagepool_sandwich_op11", 11,
     SANDWICH(X4, "AveragePool(t) kernel_shape=[3,3] pads=[1,1,1,1] count_include_pad=1"), 1,
     1, 0, .rtol = 1e-6},
    {"averagepool_sandwich_op19", 19,
     SANDWICH(X4, "AveragePool(t) kernel_shape=[2,2] strides=[2,2]"), 1, 1, 0, .rtol = 1e-6},
    {"globalaveragepool_sandwich_op13", 13, SANDWICH(X4, "GlobalAveragePool(t)"), 1, 1, 0,
     .rtol = 1e-6},
    {"globalmaxpool_sandwich_op13", 13, SANDWICH(X4, "GlobalMaxPool(t)"), 1, 1, 0, .rtol = 0},
    {"batchnormalization_sandwich_op9", 9,
     SANDWICH(X4 "; " BN4, "BatchNormalization(t, sc, bb, mu, va) epsilon=0.001"), 1, 1, 0,
     .rtol = 1e-5},
    {"batchnormalization_sandwich_op15", 15,
     SANDWICH(X4 "; " BN4, "BatchNormalization(t, sc, bb, mu, va)"), 1, 1, 0, .rtol = 1e-5},
    /* Resize stays ai.onnx: its scales are permuted instead. */
    {"resize_scales_sandwich_op13", 13,
     SANDWICH(X4 "; const sc f32[4] = 1,1,2,0.5", "Resize(t, , sc) mode=\"nearest\""), 1, 0, 0,
     .ops = "Resize=1"},
    {"resize_sizes_sandwich_op18", 18,
     SANDWICH(X4 "; const sz i64[4] = 1,4,7,3", "Resize(t, , , sz) mode=\"linear\""), 1, 0, 0,
     .ops = "Resize=1", .rtol = 1e-5},
    /* A chain: one region, every Transpose inside cancels, the per-channel constants
     * ([4,1,1]) are transposed in place. */
    {"conv_relu_pool_conv_chain_op13", 13,
     "in x f32s[1,8,8,4]; const w1 f32s[4,4,3,3] = rand; const k f32[4,1,1] = 1,2,3,4; "
     "const w2 f32s[2,4,1,1] = rand; t = Transpose(x) perm=[0,3,1,2]; "
     "c1 = Conv(t, w1) pads=[1,1,1,1]; m = Mul(c1, k); r = Relu(m); "
     "p = MaxPool(r) kernel_shape=[2,2] strides=[2,2]; c2 = Conv(p, w2); "
     "y = Transpose(c2) perm=[0,2,3,1]; out y",
     1, 3, 0, .ops = "Conv=0 MaxPool=0 Relu=1 Mul=1", .rtol = 1e-5},
    /* A branch and a residual Add inside one region. */
    {"residual_block_op13", 13,
     "in x f32s[1,6,6,4]; const w1 f32s[4,4,3,3] = rand; const w2 f32s[4,4,1,1] = rand; "
     "t = Transpose(x) perm=[0,3,1,2]; a = Conv(t, w1) pads=[1,1,1,1]; r = Relu(a); "
     "c = Conv(r, w2); s = Add(c, t); y = Transpose(s) perm=[0,2,3,1]; out y",
     1, 2, 0, .rtol = 1e-5},
    /* The head of a classifier: GlobalAveragePool's NHWC [1,1,1,C] goes back to NCHW by
     * a Transpose that moves only 1s (a Reshape), then Flatten. */
    {"pool_head_op13", 13,
     "in x f32s[1,5,5,4]; const w f32s[6,4,3,3] = rand; t = Transpose(x) perm=[0,3,1,2]; "
     "c = Conv(t, w); g = GlobalAveragePool(c); f = Flatten(g); out f",
     1, 2, 0, .ops = "Reshape=1", .rtol = 1e-5},
    /* layout.ignore-cost=1 converts what the cost check refuses: NCHW data in and out. */
    {"force_converts_nchw_op13", 13,
     "in x f32s[1,4,5,6]; " W34 "; c = Conv(x, w, b); r = Relu(c); out r", 1, 1, 2,
     .set = "layout.ignore-cost=1", .rtol = 1e-5},
};

static const lcase refuse_cases[] = {
    /* The cost check: NCHW in and out, NHWC would only add Transposes. */
    {"nchw_model_stays_op13", 13,
     "in x f32s[1,4,5,6]; " W34 "; c = Conv(x, w, b); r = Relu(c); out r", 0, 0, 0,
     "stays channels-first", .ops = "Conv=1", .rtol = 1e-5},
    {"conv1d_rank3_op13", 13,
     "in x f32s[1,5,4]; const w f32s[3,4,3] = rand; t = Transpose(x) perm=[0,2,1]; "
     "c = Conv(t, w); y = Transpose(c) perm=[0,2,1]; out y",
     0, 0, 2, "2-D (rank 4) only", .rtol = 1e-5},
    {"maxpool_indices_read_op13", 13,
     SANDWICH(X4, "MaxPool(t) kernel_shape=[2,2]")
     "; r2, ix = MaxPool(t) kernel_shape=[3,3]; out ix",
     1, 1, 1, "Indices are NCHW offsets", .ops = "MaxPool=1"},
    /* The shape of the Reshape is a graph input declared without a shape. */
    {"unknown_rank_op13", 13,
     "in x f32s[1,4,5,6]; in s i64?[4] = 1,4,5,6; " W34 "; r = Reshape(x, s); "
     "c = Conv(r, w, b); out c",
     0, 0, 0, "unknown rank", .rtol = 1e-5},
    {"batchnorm_before_opset9_op7", 7,
     SANDWICH(X4 "; " BN4, "BatchNormalization(t, sc, bb, mu, va)"), 0, 0, 2, "from opset 9",
     .ops = "BatchNormalization=1", .rtol = 1e-5},
    /* Two regions: the NHWC sandwich pays, the NCHW branch does not. */
    {"one_region_of_two_op13", 13,
     "in x f32s[1,5,6,4]; in z f32s[1,4,5,6]; " W34 "; t = Transpose(x) perm=[0,3,1,2]; "
     "c = Conv(t, w, b); y = Transpose(c) perm=[0,2,3,1]; d = Conv(z, w, b); out y, d",
     1, 1, 0, "stays channels-first", .ops = "Conv=1", .rtol = 1e-5},
};

/* ---- running a case ------------------------------------------------------------------ */

static size_t count_domain(const gl_graph *g, const char *domain)
{
    size_t k = 0;
    gl_node *n;
    gl_foreach_node(g, i, n)
        k += n->domain && !strcmp(n->domain, domain);
    return k;
}

static void show(const lcase *c, const gl_pipeline *p, const gl_graph *g)
{
    const char *want = getenv("GL_LAYOUTTEST_SHOW");
    if (!want || strcmp(want, c->name))
        return;
    for (size_t i = 0; i < p->log.n; i++)
        gl_decision_print(&p->log.items[i], stderr);
    gn_print_graph(g, stderr);
}

/* The layout step's decisions: applied regions, their predicted count, the refusal. */
static void check_decisions(const lcase *c, const gl_pipeline *p, const gl_snapshot *step,
                            size_t transposes)
{
    int applied = 0;
    bool refused = false;
    for (size_t i = step->first_decision; i < step->first_decision + step->n_decisions; i++) {
        const gl_decision *d = &p->log.items[i];
        cr_expect(d->reason && *d->reason, "%s: decision #%lld has no reason", c->name,
                  (long long)d->id);
        if (d->verdict == GL_APPLIED && !strcmp(d->rule, "nhwc-region"))
            applied++;
        if (d->verdict == GL_REFUSED && c->refusal && strstr(d->reason, c->refusal))
            refused = true;
    }
    cr_expect_eq(applied, c->regions, "%s: %d regions converted, expected %d", c->name,
                 applied, c->regions);
    cr_expect(!c->refusal || refused, "%s: no refusal saying '%s'", c->name, c->refusal);
    /* The last applied region's prediction is what the push left (without force). */
    size_t first = step->first_decision;
    for (size_t i = first + step->n_decisions; !c->set && i-- > first;) {
        const gl_decision *d = &p->log.items[i];
        if (d->verdict != GL_APPLIED)
            continue;
        cr_expect_eq(gl_decision_number_value(d, "after_push_with"), (double)transposes,
                     "%s: the cost check predicted %g Transposes, the push left %zu", c->name,
                     gl_decision_number_value(d, "after_push_with"), transposes);
        break;
    }
}

static void run_case(const lcase *c)
{
    gn_graph b;
    if (!gn_build(c->name, c->opset, c->graph, &b)) {
        cr_expect(false, "%s: cannot build the case: %s", c->name, b.err);
        gl_model_free(b.m);
        return;
    }
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    gl_settings set = {0};
    cr_assert_eq(gl_pass_list_parse(PIPELINE, &plan, &n_plan), GL_OK);
    if (c->set)
        cr_assert_eq(gl_settings_apply(&set, c->set), GL_OK, "%s", gl_error_message());
    gl_pipeline *p = NULL;
    gl_status st = gl_pipeline_run(b.m, plan, n_plan, &set, GL_PIPELINE_KEEP_SNAPSHOTS, &p);
    free(plan);
    gl_settings_free(&set);
    cr_expect_eq(st, GL_OK, "%s: the pipeline failed: %s", c->name,
                 p->failure ? p->failure : gl_error_message());
    if (st == GL_OK) {
        const gl_model *after = gl_pipeline_result(p);
        const gl_graph *g = after->graph;
        show(c, p, g);
        cr_expect_eq(gl_graph_verify(g, false), GL_OK, "%s: %s", c->name, gl_error_message());
        size_t transposes = gn_count_op(g, "Transpose");
        cr_expect_eq(transposes, (size_t)c->transposes, "%s: %zu Transposes left, expected %d",
                     c->name, transposes, c->transposes);
        cr_expect_eq(count_domain(g, "graphlab"), (size_t)c->graphlab,
                     "%s: %zu graphlab nodes, expected %d", c->name,
                     count_domain(g, "graphlab"), c->graphlab);
        check_decisions(c, p, &p->steps[3], transposes);
        gn_expect_op_counts(c->name, c->ops, g);
        /* Right before layout the model has its types (inference changes no value). */
        gn_expect_same_outputs(c->name, &b, p->steps[2].model, after, c->rtol,
                               c->rtol ? 1e-6 : 0, false);
    }
    gl_pipeline_free(p);
}

static void run_table(const lcase *cases, size_t n)
{
    cr_assert(gl_pass_find("layout"), "the pass table has no layout pass");
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i]);
}

#define RUN(table) run_table(table, GL_ARRAY_LEN(table))

Test(layout, conversions) { RUN(convert_cases); }
Test(layout, refusals) { RUN(refuse_cases); }

/* ---- what-if: forcing what a cost or a guard refused ------------------------------------
 * The NCHW model of nchw_model_stays_op13: layout refuses its region on cost (#1); once
 * forced, transpose-push refuses to push the Transpose below the Relu on cost (#3) and
 * to pass the NhwcConv for correctness (#2). */
#define NCHW_MODEL "in x f32s[1,4,5,6]; " W34 "; c = Conv(x, w, b); r = Relu(c); out r"

static const struct {
    const char *what;
    const char *sets[3];
    int64_t forced;        /* the record now applied, "forced (--set ...)" */
    const char *relu_reads; /* op of the Relu input's producer afterwards */
    const char *error;     /* the run fails saying this */
    const char *says;      /* the forced record says what was done (issue 24: it said
                            * what the refusal would have left, "... stay(s) ...") */
} force_cases[] = {
    {"the region", {"layout.force=1"}, 1, "Transpose", NULL,
     "forced (--set layout.force=1): 1 node (Conv 'n_c') to channels-last, overriding the "
     "cost: transpose-push then leaves 2 Transposes, 0 without the conversion"},
    {"the region, then the push", {"layout.force=1", "transpose-push.force=3"}, 3, "NhwcConv",
     NULL, "forced (--set transpose-push.force=3): Transpose 'n_c/Transpose' (perm 0,3,1,2) "
     "pushed below Relu 'n_r', overriding the cost model: input cost -3, total 0 (both must "
     "fall below 0)"},
    {"a correctness check", {"layout.force=1", "transpose-push.force=2"}, -1, NULL,
     "decision #2 is transpose-push 'push-through-NhwcConv' (refused), not a refusal of "
     "transpose-push that its rule lets be forced"},
    {"forced and vetoed", {"layout.force=1", "layout.veto=1"}, -1, NULL,
     "decision #1 is vetoed too (--set layout.veto=1): a rewrite is forced or vetoed, not both"},
    {"a note", {"layout.force=0"}, -1, NULL, "decision #0 is shape-inference 'summary' (note)"},
    {"no such record", {"layout.force=9"}, -1, NULL, "there is no decision #9"},
};

/* One of the "PASS.force=ID" settings names decision `id`. */
static bool names_forced(const char *const *sets, int64_t id)
{
    for (size_t i = 0; sets[i]; i++) {
        const char *eq = strstr(sets[i], ".force=");
        if (eq && strtoll(eq + strlen(".force="), NULL, 10) == id)
            return true;
    }
    return false;
}

Test(layout, forced_refusals)
{
    for (size_t c = 0; c < GL_ARRAY_LEN(force_cases); c++) {
        gn_graph b;
        cr_assert(gn_build(force_cases[c].what, 13, NCHW_MODEL, &b), "%s", b.err);
        gl_pass_step *plan;
        size_t n_plan;
        cr_assert_eq(gl_pass_list_parse(PIPELINE, &plan, &n_plan), GL_OK);
        gl_settings set = {0};
        for (size_t i = 0; force_cases[c].sets[i]; i++)
            cr_assert_eq(gl_settings_apply(&set, force_cases[c].sets[i]), GL_OK);
        gl_pipeline *p = NULL;
        gl_status st = gl_pipeline_run(b.m, plan, n_plan, &set, GL_PIPELINE_KEEP_SNAPSHOTS, &p);
        free(plan);
        gl_settings_free(&set);
        if (force_cases[c].error) {
            tu_expect_error(st, force_cases[c].what, force_cases[c].error);
            gl_pipeline_free(p);
            continue;
        }
        cr_assert_eq(st, GL_OK, "%s: %s", force_cases[c].what, gl_error_message());
        const gl_decision *d = &p->log.items[force_cases[c].forced];
        cr_expect_eq(d->verdict, GL_APPLIED, "%s", force_cases[c].what);
        cr_expect(strstr(d->reason, force_cases[c].says) == d->reason, "%s: %s",
                  force_cases[c].what, d->reason);
        cr_expect(!strstr(d->reason, " stay"), "%s: %s", force_cases[c].what, d->reason);
        cr_expect_eq(gl_decision_number_value(d, "forceable"), 1);
        cr_expect(d->forced && !d->vetoed, "%s: the record's flags", force_cases[c].what);
        for (size_t i = 0; i < p->log.n; i++) /* each one the sets force, nothing vetoed */
            cr_expect(p->log.items[i].forced == names_forced(force_cases[c].sets, (int64_t)i) &&
                      !p->log.items[i].vetoed, "%s: #%zu's flags", force_cases[c].what, i);
        const gl_graph *g = gl_pipeline_result(p)->graph;
        const gl_node *relu = gl_find_node(g, "n_r");
        cr_assert(relu && relu->inputs[0]->producer, "%s", force_cases[c].what);
        cr_expect_str_eq(relu->inputs[0]->producer->op_type, force_cases[c].relu_reads, "%s",
                         force_cases[c].what);
        gn_expect_same_outputs(force_cases[c].what, &b, p->steps[2].model,
                               gl_pipeline_result(p), 1e-5, 1e-6, false);
        gl_pipeline_free(p);
    }
}

/* ---- the ops: hand-computed values ------------------------------------------------------
 * x[1,2,2,2] NHWC: pixels (0,0)=(1,2) (0,1)=(3,4) (1,0)=(5,6) (1,1)=(7,8). */
#define X2 T(F, 4, D(1, 2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8)

static const tu_kcase kernel_cases[] = {
    /* y = c0 + 10 c1 + 0.5 per pixel */
    {"nhwcconv_1x1", "graphlab.NhwcConv", 13, {{0}}, 3,
     {X2, T(F, 4, D(1, 2, 1, 1), 1, 10), T(F, 1, D(1), 0.5)}, 1,
     {T(F, 4, D(1, 2, 2, 1), 21.5, 43.5, 65.5, 87.5)}, GL_OK},
    /* 2x2 kernel over the whole image, no bias: one pixel, two output channels (the sum
     * of c0; c1 at the top left) */
    {"nhwcconv_2x2", "graphlab.NhwcConv", 13, {{0}}, 2,
     {X2, T(F, 4, D(2, 2, 2, 2), 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0)}, 1,
     {T(F, 4, D(1, 1, 1, 2), 16, 2)}, GL_OK},
    {"nhwcmaxpool", "graphlab.NhwcMaxPool", 13, {AINTS("kernel_shape", 2, 2, 2)}, 1, {X2}, 1,
     {T(F, 4, D(1, 1, 1, 2), 7, 8)}, GL_OK},
    {"nhwcaveragepool_1x2", "graphlab.NhwcAveragePool", 13, {AINTS("kernel_shape", 2, 1, 2)},
     1, {X2}, 1, {T(F, 4, D(1, 2, 1, 2), 2, 3, 6, 7)}, GL_OK},
    {"nhwcglobalaveragepool", "graphlab.NhwcGlobalAveragePool", 13, {{0}}, 1, {X2}, 1,
     {T(F, 4, D(1, 1, 1, 2), 4, 5)}, GL_OK},
    {"nhwcglobalmaxpool", "graphlab.NhwcGlobalMaxPool", 13, {{0}}, 1, {X2}, 1,
     {T(F, 4, D(1, 1, 1, 2), 7, 8)}, GL_OK},
    /* c0: (x - 1) / 1; c1: 2 (x - 2) / 2 + 1 */
    {"nhwcbatchnormalization", "graphlab.NhwcBatchNormalization", 15, {AF("epsilon", 0)}, 5,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4), T(F, 1, D(2), 1, 2), T(F, 1, D(2), 0, 1),
      T(F, 1, D(2), 1, 2), T(F, 1, D(2), 1, 4)},
     1, {T(F, 4, D(1, 1, 2, 2), 0, 1, 2, 3)}, GL_OK},
    {"nhwcconv_rank3", "graphlab.NhwcConv", 13, {{0}}, 2,
     {T(F, 3, D(1, 2, 2), 1, 2, 3, 4), T(F, 3, D(1, 2, 1), 1, 1)}, 1, {OMIT}, GL_ERR_INPUT},
    /* What the op it stands for refuses, it refuses too (here: W's channels). */
    {"nhwcconv_bad_weights", "graphlab.NhwcConv", 13, {{0}}, 2,
     {X2, T(F, 4, D(1, 3, 1, 1), 1, 1, 1)}, 1, {OMIT}, GL_ERR_INPUT},
};

Test(layout_ops, kernels) { tu_run_kernel_cases(kernel_cases, GL_ARRAY_LEN(kernel_cases)); }

static const tu_scase shape_cases[] = {
    {"nhwcconv_same", "graphlab.NhwcConv", 13, {AINTS("pads", 4, 1, 1, 1, 1)}, 2,
     {SY(F, 4, D(U, 5, 6, 3), "N"), S(F, 4, D(8, 3, 3, 3))}, 1,
     {SY(F, 4, D(U, 5, 6, 8), "N")}, GL_OK},
    {"nhwcmaxpool_strided", "graphlab.NhwcMaxPool", 13,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)}, 1, {S(F, 4, D(2, 6, 7, 4))},
     1, {S(F, 4, D(2, 3, 3, 4))}, GL_OK},
    {"nhwcglobalaveragepool", "graphlab.NhwcGlobalAveragePool", 13, {{0}}, 1,
     {S(F, 4, D(1, 7, 7, 16))}, 1, {S(F, 4, D(1, 1, 1, 16))}, GL_OK},
    {"nhwcbatchnormalization", "graphlab.NhwcBatchNormalization", 15, {{0}}, 5,
     {S(F, 4, D(1, 3, 3, 2)), S(F, 1, D(2)), S(F, 1, D(2)), S(F, 1, D(2)), S(F, 1, D(2))}, 1,
     {S(F, 4, D(1, 3, 3, 2))}, GL_OK},
    {"nhwcconv_unknown_rank", "graphlab.NhwcConv", 13, {{0}}, 2,
     {S0(F, -1), S(F, 4, D(8, 3, 3, 3))}, 1, {S(F, 4, D(U, U, U, 8))}, GL_OK},
    {"nhwcmaxpool_rank5", "graphlab.NhwcMaxPool", 13, {AINTS("kernel_shape", 2, 2, 2)}, 1,
     {S(F, 5, D(1, 2, 2, 2, 2))}, 1, {NOTYPE}, GL_ERR_INPUT},
};

Test(layout_ops, shapes) { tu_run_shape_cases(shape_cases, GL_ARRAY_LEN(shape_cases)); }

/* ---- the saved model: functions, reload, other runtimes -------------------------------- */

/* Every channels-last op in one NHWC model, two Convs (one without bias). */
#define ALL_OPS                                                                             \
    "in x f32s[1,8,8,4]; const w1 f32s[4,4,3,3] = rand; const b1 f32s[4] = rand; "        \
    "const w2 f32s[4,4,1,1] = rand; " BN4 "; t = Transpose(x) perm=[0,3,1,2]; "            \
    "c1 = Conv(t, w1, b1) pads=[1,1,1,1]; n = BatchNormalization(c1, sc, bb, mu, va); "    \
    "m = MaxPool(n) kernel_shape=[2,2] strides=[2,2]; c2 = Conv(m, w2); "                  \
    "a = AveragePool(c2) kernel_shape=[2,2] pads=[0,0,1,1]; g1 = GlobalAveragePool(a); "  \
    "g2 = GlobalMaxPool(a); s = Add(g1, g2); y = Transpose(s) perm=[0,2,3,1]; out y"

static const char *const all_ops[] = {"NhwcConv", "NhwcBatchNormalization", "NhwcMaxPool",
                                      "NhwcAveragePool", "NhwcGlobalAveragePool",
                                      "NhwcGlobalMaxPool"};

/* The model after the pipeline; b->m becomes the model before layout (typed, as the
 * comparisons want it). */
static gl_model *converted(gn_graph *b)
{
    cr_assert(gn_build("all_ops", 13, ALL_OPS, b), "%s", b->err);
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    cr_assert_eq(gl_pass_list_parse(PIPELINE, &plan, &n_plan), GL_OK);
    gl_pipeline *p = NULL;
    cr_assert_eq(gl_pipeline_run(b->m, plan, n_plan, NULL, GL_PIPELINE_KEEP_SNAPSHOTS, &p),
                 GL_OK, "%s", p->failure ? p->failure : gl_error_message());
    free(plan);
    gl_model *m = gl_model_clone(gl_pipeline_result(p));
    b->m = gl_model_clone(p->steps[2].model);
    cr_assert_eq(gn_count_op(b->m->graph, "Conv"), 2, "b->m is the model before layout");
    gl_pipeline_free(p);
    return m;
}

static const gl_function *function_of(const gl_model *m, const char *name)
{
    for (size_t i = 0; i < m->n_functions; i++)
        if (!strcmp(m->functions[i].name, name) && !strcmp(m->functions[i].domain, "graphlab"))
            return &m->functions[i];
    return NULL;
}

Test(layout, every_graphlab_op_is_also_a_function)
{
    gn_graph b;
    gl_model *m = converted(&b);
    cr_expect_eq(gn_count_op(m->graph, "Transpose"), 0);
    cr_expect_geq(m->ir_version, 8, "ModelProto.functions needs IR 8");
    cr_expect_eq(gl_model_opset(m, "graphlab"), 1);
    cr_expect_eq(m->n_functions, GL_ARRAY_LEN(all_ops), "one function per op used");
    for (size_t i = 0; i < GL_ARRAY_LEN(all_ops); i++) {
        char op[64];
        snprintf(op, sizeof(op), "graphlab.%s", all_ops[i]);
        cr_expect_geq(gn_count_op(m->graph, op), 1, "%s used", op);
        const gl_function *f = function_of(m, all_ops[i]);
        cr_assert_not_null(f, "function %s", all_ops[i]);
        cr_expect_eq(f->n_opsets, 1);
        cr_expect_eq(f->opsets[0].version, 13, "%s: the model's ai.onnx opset", all_ops[i]);
        cr_assert_eq(f->body->n_nodes, 3, "%s: Transpose, op, Transpose", all_ops[i]);
        cr_expect_str_eq(f->body->nodes[1]->op_type, all_ops[i] + 4);
        for (size_t a = 0; a < f->body->nodes[1]->n_attrs; a++)
            cr_expect_not_null(f->body->nodes[1]->attrs[a].ref_attr_name,
                               "%s: attribute %zu refers to the caller's", all_ops[i], a);
        cr_expect_eq(f->body->nodes[1]->n_attrs, f->n_attributes);
    }
    cr_expect_eq(function_of(m, "NhwcConv")->n_attributes, 6);
    cr_expect_eq(function_of(m, "NhwcMaxPool")->n_attributes, 7, "ceil_mode, dilations at 10");
    cr_expect_eq(function_of(m, "NhwcAveragePool")->n_attributes, 6, "no dilations before 19");
    gl_model_free(b.m);
    gl_model_free(m);
}

/* Saved and loaded again, it runs to the same outputs; with the graphlab ops renamed to
 * ops no registry knows, the executor runs the functions' bodies instead, and they
 * compute what the kernels compute. */
Test(layout, saved_model_reloads_and_its_functions_compute_the_same)
{
    gn_graph b;
    gl_model *m = converted(&b);
    char *dir = tu_tmpdir(), path[4096];
    snprintf(path, sizeof(path), "%s/layout.onnx", dir);
    cr_assert_eq(gl_model_save(m, path, NULL), GL_OK, "%s", gl_error_message());
    gl_model *r = NULL;
    cr_assert_eq(gl_model_load(path, NULL, &r), GL_OK, "%s", gl_error_message());
    cr_expect_eq(r->graph->live_nodes, m->graph->live_nodes);
    cr_expect_eq(r->n_functions, m->n_functions);
    gn_expect_same_outputs("reloaded", &b, b.m, r, 1e-5, 1e-6, false);
    for (size_t i = 0; i < r->n_functions; i++) {
        gl_function *f = &r->functions[i];
        char *fn = malloc(strlen(f->name) + 3);
        sprintf(fn, "Fn%s", f->name);
        gl_node *n;
        gl_foreach_node(r->graph, k, n)
            if (!strcmp(n->op_type, f->name)) {
                free(n->op_type);
                n->op_type = strdup(fn);
            }
        free(f->name);
        f->name = fn;
    }
    cr_expect_eq(gn_count_op(r->graph, "graphlab.FnNhwcConv"), 2);
    gn_expect_same_outputs("function bodies", &b, b.m, r, 1e-5, 1e-6, false);
    gl_model_free(r);
    tu_rmtree(dir);
    free(dir);
    gl_model_free(b.m);
    gl_model_free(m);
}

Test(layout, onnx_checker_accepts_the_saved_model)
{
    if (access("/usr/bin/python3", X_OK) != 0 ||
        system("/usr/bin/python3 -c 'import onnx' >/dev/null 2>&1") != 0)
        cr_skip_test("/usr/bin/python3 has no onnx");
    gn_graph b;
    gl_model *m = converted(&b);
    char *dir = tu_tmpdir(), path[4096], cmd[8192];
    snprintf(path, sizeof(path), "%s/layout.onnx", dir);
    cr_assert_eq(gl_model_save(m, path, NULL), GL_OK, "%s", gl_error_message());
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c 'import onnx, sys; "
             "onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' '%s'", path);
    cr_expect_eq(system(cmd), 0, "onnx.checker (full_check) refuses %s", path);
    tu_rmtree(dir);
    free(dir);
    gl_model_free(b.m);
    gl_model_free(m);
}

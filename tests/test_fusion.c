/* test_fusion.c — the `fusion` pass, rule by rule and constraint by constraint, as a
 * table of graphs.
 *
 * Every row is a graph in graphnote.h's notation, the opset, whether it runs under
 * --set fusion.exact-shapes=1 (or fusion.units=0; the defaults otherwise), and what the
 * pass must do:
 *   APPLY  — a decision of the row's rule applied whose members are the row's count of
 *            nodes, the op counts after the pass as given;
 *   REFUSE — the graph unchanged and a refusal of the row's rule whose reason contains
 *            the row's text (the constraint, the value, shape or dtype that broke it);
 *   NONE   — the graph unchanged and no decision at all.
 * Each row runs toposort,shape-inference,fusion; the graph must verify and compute what
 * it computed before the pass on seeded random inputs (the reference backend runs each
 * graphlab.fused call's body). Applied rows are also saved, loaded again and run (the
 * same outputs, bit for bit), and the fusion pass run again on the loaded model must
 * find its own groups and fuse nothing more.
 *
 * GL_FUTEST_SHOW=NAME prints that row's decisions and the graph after the pass.
 */
#include "exec/target.h"
#include "graphnote.h"
#include "onnx/onnx_io.h"
#include "passes/fusion.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum want { APPLY, REFUSE, NONE } want;

typedef struct fcase {
    const char *name;
    int opset;
    bool exact;         /* --set fusion.exact-shapes=1 */
    const char *graph;
    bool units_off;     /* --set fusion.units=0 (rows run with the defaults otherwise) */
    want want;
    const char *rule;   /* the decision's rule (APPLY, REFUSE) */
    const char *reason; /* a part of the reason */
    const char *ops;    /* APPLY: op counts after the pass */
    int members;        /* APPLY: nodes in the group of the row's rule */
    int groups;         /* APPLY: graphlab.fused nodes after the pass */
    int applied;        /* REFUSE: groups made all the same (a shorter rule's) */
    bool quiet;         /* APPLY: and no refusal at all (no near miss said where none is) */
    /* Where the target differs by ISA: without AVX-512 the rule is refused for this reason
     * (constraint target) and `avx2_ops` are the op counts after the pass (NULL: the row
     * is the same on every ISA). */
    const char *avx2_refusal, *avx2_ops;
} fcase;

#define APPLIED(rule_, ops_, members_, groups_)                                             \
    .want = APPLY, .rule = (rule_), .ops = (ops_), .members = (members_), .groups = (groups_)
#define REFUSED(rule_, reason_) .want = REFUSE, .rule = (rule_), .reason = (reason_)
/* Refused, while a shorter rule made `n_` groups of the same nodes. */
#define REFUSED_BUT(rule_, reason_, n_) REFUSED(rule_, reason_), .applied = (n_)
#define UNTOUCHED .want = NONE

#define PASSES "toposort,shape-inference,fusion"
/* LayerNormalization, MatMul and its [N] bias Add 'a' (rows add what reads 'a') */
#define LN_MATMUL_BIAS                                                                     \
    "in x f32s[2,4,8]; const g f32[8] = rand; const b f32[8] = rand; const w f32[8,6] = "  \
    "rand; const c f32[6] = rand; n = LayerNormalization(x, g, b) axis=-1; "               \
    "m = MatMul(n, w); a = Add(m, c); "
#define RTOL 1e-5
#define ATOL 1e-6

static gl_pipeline *run_passes(const fcase *c, gl_model *m, const char *passes)
{
    gl_settings s = {0};
    if (c->exact)
        cr_assert_eq(gl_settings_apply(&s, "fusion.exact-shapes=1"), GL_OK, "%s",
                     gl_error_message());
    if (c->units_off)
        cr_assert_eq(gl_settings_apply(&s, "fusion.units=0"), GL_OK, "%s", gl_error_message());
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    cr_assert_eq(gl_pass_list_parse(passes, &plan, &n_plan), GL_OK, "%s", gl_error_message());
    gl_pipeline *p = NULL;
    gl_status st = gl_pipeline_run(m, plan, n_plan, &s, GL_PIPELINE_KEEP_SNAPSHOTS, &p);
    free(plan);
    gl_settings_free(&s);
    cr_expect_eq(st, GL_OK, "%s: the pipeline failed: %s", c->name,
                 p && p->failure ? p->failure : gl_error_message());
    if (st != GL_OK) {
        gl_pipeline_free(p);
        return NULL;
    }
    return p;
}

static void show(const fcase *c, const gl_pipeline *p, const gl_snapshot *s, const gl_graph *g)
{
    const char *only = getenv("GL_FUTEST_SHOW");
    if (!only || strcmp(only, c->name))
        return;
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++)
        gl_decision_print(&p->log.items[i], stderr);
    gn_print_graph(g, stderr);
}

static void check_decisions(const fcase *c, const gl_pipeline *p, const gl_snapshot *step,
                            const gl_snapshot *prev)
{
    size_t applied = 0, refused = 0, matching = 0;
    for (size_t i = step->first_decision; i < step->first_decision + step->n_decisions; i++) {
        const gl_decision *d = &p->log.items[i];
        cr_expect(d->reason && *d->reason, "%s: decision #%lld has no reason", c->name,
                  (long long)d->id);
        applied += d->verdict == GL_APPLIED;
        refused += d->verdict == GL_REFUSED;
        if (d->verdict == GL_REFUSED)
            cr_expect(gl_decision_number_text(d, "constraint"), "%s: a refusal without its "
                      "constraint: %s", c->name, d->reason);
        if (!c->rule || strcmp(d->rule, c->rule) ||
            d->verdict != (c->want == APPLY ? GL_APPLIED : GL_REFUSED) ||
            (c->reason && !strstr(d->reason, c->reason)))
            continue;
        matching++;
        if (c->want == APPLY)
            cr_expect_eq(d->n_nodes, (size_t)c->members, "%s: the group has %zu members, "
                         "expected %d", c->name, d->n_nodes, c->members);
    }
    switch (c->want) {
    case APPLY:
        cr_expect(matching > 0, "%s: no applied decision of rule %s", c->name, c->rule);
        cr_expect(!c->quiet || !refused, "%s: %zu refusals, expected none", c->name, refused);
        break;
    case REFUSE:
        cr_expect(matching > 0, "%s: no refusal of rule %s with a reason containing '%s'",
                  c->name, c->rule, c->reason);
        cr_expect_eq(applied, (size_t)c->applied, "%s: %zu rewrites applied, expected %d",
                     c->name, applied, c->applied);
        break;
    case NONE:
        cr_expect_eq(applied + refused, 0, "%s: %zu decisions, expected none", c->name,
                     applied + refused);
        break;
    }
    if (c->want != APPLY && !c->applied)
        cr_expect(step->fingerprint == prev->fingerprint, "%s: the graph changed", c->name);
}

/* Saved, loaded again: the same outputs, IR 8, and fusion finds nothing more to do. */
static void check_reload(const fcase *c, const gn_graph *b, const gl_model *after,
                         const char *dir)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.onnx", dir, c->name);
    gl_status st = gl_model_save(after, path, NULL);
    cr_expect_eq(st, GL_OK, "%s: save: %s", c->name, gl_error_message());
    gl_model *back = NULL;
    if (st == GL_OK)
        st = gl_model_load(path, NULL, &back);
    cr_expect_eq(st, GL_OK, "%s: load of the saved model: %s", c->name, gl_error_message());
    if (!back)
        return;
    cr_expect(back->ir_version >= 8 || back->n_functions == 0,
              "%s: IR %lld with model-local functions", c->name, (long long)back->ir_version);
    gn_expect_same_outputs(c->name, b, after, back, 0, 0, false);
    size_t groups = gn_count_domain(back->graph, GL_FUSED_DOMAIN);
    gl_pipeline *p = run_passes(c, back, PASSES);
    if (!p)
        return;
    const gl_snapshot *s = &p->steps[p->n_steps - 1];
    size_t applied = 0, noted = 0;
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++) {
        applied += p->log.items[i].verdict == GL_APPLIED;
        noted += !strcmp(p->log.items[i].rule, "fused-groups");
    }
    cr_expect_eq(applied, 0, "%s: fusion fused the reloaded model again (%zu)", c->name,
                 applied);
    cr_expect_eq(noted, groups ? 1 : 0, "%s: the reloaded groups are not recognized",
                 c->name);
    cr_expect_eq(gn_count_domain(s->model->graph, GL_FUSED_DOMAIN), groups, "%s", c->name);
    gl_pipeline_free(p);
}

/* The row as this CPU's target answers it: on AVX2 a row with avx2_refusal expects its
 * rule refused, the nodes left to shorter rules. */
static fcase on_this_cpu(const fcase *row)
{
    fcase c = *row;
    if (!row->avx2_refusal || tu_cpu_has_avx512())
        return c;
    c.want = REFUSE;
    c.reason = row->avx2_refusal;
    c.ops = row->avx2_ops;
    c.applied = row->groups;
    return c;
}

static void run_case(const fcase *row, const char *dir)
{
    fcase here = on_this_cpu(row);
    const fcase *c = &here;
    gn_graph b;
    if (!gn_build(c->name, c->opset, c->graph, &b)) {
        cr_expect(false, "%s: cannot build the case: %s", c->name, b.err);
        gl_model_free(b.m);
        return;
    }
    gl_pipeline *p = run_passes(c, b.m, PASSES);
    if (!p)
        return;
    size_t k = p->n_steps - 1;
    const gl_snapshot *step = &p->steps[k];
    const gl_model *before = p->steps[k - 1].model, *after = step->model;
    show(c, p, step, after->graph);
    cr_expect_eq(gl_graph_verify(after->graph, false), GL_OK, "%s: %s", c->name,
                 gl_error_message());
    check_decisions(c, p, step, &p->steps[k - 1]);
    gn_expect_op_counts(c->name, c->ops, after->graph);
    gn_expect_same_outputs(c->name, &b, before, after, RTOL, ATOL, false);
    if (c->want == APPLY)
        cr_expect_eq(gn_count_domain(after->graph, GL_FUSED_DOMAIN), (size_t)c->groups,
                     "%s: %zu fused nodes, expected %d", c->name,
                     gn_count_domain(after->graph, GL_FUSED_DOMAIN), c->groups);
    if (c->want == APPLY || c->applied)
        check_reload(c, &b, after, dir);
    gl_pipeline_free(p);
}

static void run_table(const fcase *cases, size_t n)
{
    char *dir = tu_tmpdir();
    cr_assert(dir, "no temporary folder");
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i], dir);
    tu_rmtree(dir);
    free(dir);
}

#define RUN(table) run_table(table, GL_ARRAY_LEN(table))

/* ==== convolutions ==================================================================== */

/* A 3x3 convolution of x [1,2,5,5] into c [1,3,5,5]. */
#define CONV                                                                               \
    "in x f32s[1,2,5,5]; const w f32[3,2,3,3] = rand; const b f32[3] = rand; "             \
    "c = Conv(x, w, b) pads=[1,1,1,1]; "
#define R(i, j) "r" #j " = Relu(r" #i "); "
#define RELUS_33                                                                           \
    "r1 = Relu(c); " R(1, 2) R(2, 3) R(3, 4) R(4, 5) R(5, 6) R(6, 7) R(7, 8) R(8, 9)       \
    R(9, 10) R(10, 11) R(11, 12) R(12, 13) R(13, 14) R(14, 15) R(15, 16) R(16, 17)         \
    R(17, 18) R(18, 19) R(19, 20) R(20, 21) R(21, 22) R(22, 23) R(23, 24) R(24, 25)        \
    R(25, 26) R(26, 27) R(27, 28) R(28, 29) R(29, 30) R(30, 31) R(31, 32) R(32, 33)

/* The same with a symbolic batch, as torch exports dynamic_axes={'x': {0: 'N'}}. */
#define SYM_CONV                                                                           \
    "in x f32s[N=2,2,5,5]; const w f32[3,2,3,3] = rand; const b f32[3] = rand; "           \
    "c = Conv(x, w, b) pads=[1,1,1,1]; "

static const fcase conv_cases[] = {
    {"conv_relu", 13, false, CONV "r = Relu(c); out r",
     APPLIED("conv-activation", "Conv=0 Relu=0", 2, 1)},
    {"conv_clip", 13, false,
     CONV "const lo f32[] = 0; const hi f32[] = 0.5; r = Clip(c, lo, hi); out r",
     APPLIED("conv-activation", "Conv=0 Clip=0", 2, 1)},
    {"conv_leaky_relu", 13, false, CONV "r = LeakyRelu(c) alpha=0.2; out r",
     APPLIED("conv-activation", "Conv=0 LeakyRelu=0", 2, 1)},
    {"conv_hardsigmoid", 13, false, CONV "r = HardSigmoid(c); out r",
     APPLIED("conv-activation", "Conv=0 HardSigmoid=0", 2, 1)},
    {"conv_add_relu_residual", 13, false,
     CONV "in y f32s[1,3,5,5]; a = Add(c, y); r = Relu(a); out r",
     APPLIED("conv-add-activation", "Conv=0 Add=0 Relu=0", 3, 1)},
    /* A symbolic batch (torch's dynamic_axes) is one dim, N, on both sides: same shape. */
    {"conv_add_relu_residual_symbolic_batch", 13, false,
     SYM_CONV "in y f32s[N=2,3,5,5]; a = Add(c, y); r = Relu(a); out r",
     APPLIED("conv-add-activation", "Conv=0 Add=0 Relu=0", 3, 1)},
    {"conv_add_relu_residual_symbolic_batch_exact", 13, true,
     SYM_CONV "d = Conv(x, w, b) pads=[1,1,1,1]; r0 = Relu(d); a = Add(c, r0); r = Relu(a); "
     "out r",
     APPLIED("conv-add-activation", "Conv=0 Add=0 Relu=0", 3, 2)},
    /* The U-Net's last Add: a side branch resized to the conv input's size, sizes =
     * Shape(s)[0:2] ++ Shape(x)[2:4] computed each run. The Resize's output is [N,3,5,5]
     * element by element (issue 22); it was [?,?,?,?], and the Add was refused. */
    {"conv_add_resized_to_shape_of_input", 13, true,
     SYM_CONV "in s f32s[N=2,3,3,3]; const k0 i64[1] = 0; const k2 i64[1] = 2; "
     "const k4 i64[1] = 4; sa = Shape(s); na = Slice(sa, k0, k2); sx = Shape(x); "
     "hw = Slice(sx, k2, k4); z = Concat(na, hw) axis=0; "
     "u = Resize(s, , , z) mode=\"linear\"; a = Add(c, u); out a",
     APPLIED("conv-add-activation", "Conv=0 Add=0", 2, 1)},
    {"conv_add_residual_swapped", 13, false, CONV "in y f32s[1,3,5,5]; a = Add(y, c); out a",
     APPLIED("conv-add-activation", "Conv=0 Add=0", 2, 1)},
    /* The broadcasts the fused kernel implements, then the same under exact-shapes. */
    {"conv_add_per_channel", 13, false,
     CONV "const k f32[3,1,1] = rand; a = Add(c, k); r = Relu(a); out r",
     APPLIED("conv-add-activation", "Conv=0 Add=0 Relu=0", 3, 1)},
    {"conv_mul_scalar", 13, false, CONV "const k f32[] = 0.5; m = Mul(c, k); out m",
     APPLIED("conv-post-ops", "Conv=0 Mul=0", 2, 1)},
    {"conv_add_per_channel_exact", 13, true,
     CONV "const k f32[3,1,1] = rand; a = Add(c, k); r = Relu(a); out r",
     REFUSED("conv-add-activation", "exact-shapes: Add 'n_a': 'k' float[3,1,1] broadcasts "
             "against 'c' float[1,3,5,5] (per-channel)")},
    {"conv_mul_scalar_exact", 13, true, CONV "const k f32[] = 0.5; m = Mul(c, k); out m",
     REFUSED("conv-post-ops", "exact-shapes: Mul 'n_m'")},
    {"conv_add_residual_exact", 13, true,
     CONV "in y f32s[1,3,5,5]; a = Add(c, y); r = Relu(a); out r",
     APPLIED("conv-add-activation", "Conv=0 Add=0 Relu=0", 3, 1)},
    /* Relu, then Add stopped by exact-shapes: the group ends before it. */
    {"conv_relu_then_scalar_exact", 13, true,
     CONV "r = Relu(c); const k f32[] = 2; m = Mul(r, k); out m",
     APPLIED("conv-activation", "Conv=0 Relu=0 Mul=1", 2, 1)},
    {"conv_post_ops_four", 13, false,
     CONV "in y f32s[1,3,5,5]; a = Add(c, y); r = Relu(a); const k f32[] = 0.5; "
     "m = Mul(r, k); out m",
     APPLIED("conv-post-ops", "Conv=0 Relu=0 Mul=0 Add=0", 4, 1)},
    /* oneDNN 2.6's AVX2 convolution takes a sum only as its first post-op: there the
     * target refuses the group (its reference convolution) and conv-activation takes the
     * Relu alone */
    {"conv_post_ops_sum_last", 13, false,
     CONV "r = Relu(c); const k f32[] = 0.5; m = Mul(r, k); in y f32s[1,3,5,5]; "
     "a = Add(m, y); out a",
     APPLIED("conv-post-ops", "Conv=0 Relu=0 Mul=0 Add=0", 4, 1),
     .avx2_refusal = "target: oneDNN 2.6 runs the group as its body on the reference kernels",
     .avx2_ops = "Conv=0 Relu=0 Mul=1 Add=1"},
    {"conv_relu_twice", 13, false,
     CONV "r = Relu(c); const w2 f32[3,3,1,1] = rand; c2 = Conv(r, w2); r2 = Relu(c2); out r2",
     APPLIED("conv-activation", "Conv=0 Relu=0", 2, 2)},
    {"conv_depthwise", 13, false,
     "in x f32s[1,4,6,6]; const w1 f32[8,4,1,1] = rand; const w2 f32[8,1,3,3] = rand; "
     "c = Conv(x, w1); r = Relu(c); d = Conv(r, w2) group=8 pads=[1,1,1,1]; out d",
     APPLIED("conv-depthwise", "Conv=0 Relu=0", 3, 1)},
    /* Under fusion.units=0 a unit of several primitives is not grouped; the 1x1 Conv and
     * its Relu still are (conv-activation). */
    {"conv_depthwise_units_off", 13, false,
     "in x f32s[1,4,6,6]; const w1 f32[8,4,1,1] = rand; const w2 f32[8,1,3,3] = rand; "
     "c = Conv(x, w1); r = Relu(c); d = Conv(r, w2) group=8 pads=[1,1,1,1]; out d",
     REFUSED_BUT("conv-depthwise", "units: Conv 'n_c' and 2 more: a unit of several oneDNN "
                 "primitives", 1), .units_off = true},
    {"softmax_matmul_units_off", 13, false,
     "in x f32s[2,4,4]; in v f32s[2,4,8]; s = Softmax(x) axis=-1; m = MatMul(s, v); out m",
     REFUSED("softmax-matmul", "left apart under --set fusion.units=0"), .units_off = true},
    {"conv_depthwise_stride2_clip", 13, false,
     "in x f32s[1,4,6,6]; const w1 f32[8,4,1,1] = rand; const w2 f32[8,1,3,3] = rand; "
     "const lo f32[] = 0; const hi f32[] = 0.5; c = Conv(x, w1); r = Clip(c, lo, hi); "
     "d = Conv(r, w2) group=8 pads=[1,1,1,1] strides=[2,2]; e = Clip(d, lo, hi); out e",
     APPLIED("conv-depthwise", "Conv=0 Clip=0", 4, 1)},

    /* Negatives: the constraints. */
    {"conv_relu_graph_output", 13, false, CONV "r = Relu(c); out r, c",
     REFUSED("conv-activation", "graph-output: 'c' (output of Conv 'n_c') is a graph output")},
    {"conv_relu_branch", 13, false, CONV "r = Relu(c); s = Sigmoid(c); out r, s",
     REFUSED("conv-activation", "branch: 'c' (output of Conv 'n_c') is read by 2 nodes")},
    {"conv_add_last_dim", 13, false,
     CONV "in y f32s[5]; a = Add(c, y); r = Relu(a); out r",
     REFUSED("conv-add-activation", "broadcast: Add 'n_a': 'y' float[5] against 'c' "
             "float[1,3,5,5] is [N]")},
    {"conv_add_raises_shape", 13, false,
     CONV "in y f32s[2,3,5,5]; a = Add(c, y); out a",
     REFUSED("conv-add-activation", "against 'c' float[1,3,5,5] is other")},
    /* Cast is no post-op of the target (the oneDNN unit has no Cast member: the group
     * ran its body on the reference kernels): the chain ends at the Conv. */
    {"conv_cast_f16", 13, false, CONV "h = Cast(c) to=10; r = Relu(h); out r",
     REFUSED("conv-activation", "near miss: Conv -> Cast -> Relu: Cast 'n_h' between Conv "
             "'n_c' and Relu 'n_r' is not a member of")},
    {"conv_sub_reversed", 13, false, CONV "const k f32[] = 1; s = Sub(k, c); out s",
     REFUSED("conv-post-ops", "target: Sub 'n_s' computes Sub('k', 'c')")},
    {"conv_clip_dynamic", 13, false,
     CONV "in lo f32[]; const hi f32[] = 6; r = Clip(c, lo, hi); out r",
     REFUSED("conv-activation", "target: Clip 'n_r': its input 1 'lo' is not a constant")},
    {"conv_mul_self", 13, false, CONV "m = Mul(c, c); out m",
     REFUSED("conv-post-ops", "target: Mul 'n_m' reads 'c' as both operands")},
    /* Longer than any rule takes: refused whole, not cut to Conv + Relu. */
    {"conv_chain_of_six", 13, false,
     CONV "r = Relu(c); const k f32[] = 0.5; m = Mul(r, k); r2 = Relu(m); "
     "a = Add(r2, k); r3 = Relu(a); out r3",
     REFUSED("conv-post-ops", "max-ops: Conv 'n_c' and 5 more: a chain of 6 nodes, the "
             "rule takes at most 4")},
    {"conv_33_post_ops", 13, false, CONV RELUS_33 "out r33",
     REFUSED("conv-post-ops", "need 33 post-ops; oneDNN 2.6 takes at most 32")},
    {"conv_alone", 13, false, CONV "out c", UNTOUCHED},
    {"conv_then_pool", 13, false, CONV "p = MaxPool(c) kernel_shape=[2,2]; out p", UNTOUCHED},
};

Test(fusion, conv) { RUN(conv_cases); }

/* ==== matrix products =================================================================== */

static const fcase matmul_cases[] = {
    {"matmul_add_rank2_gemm", 13, false,
     "in a f32s[4,8]; const w f32[8,5] = rand; const b f32[5] = rand; m = MatMul(a, w); "
     "y = Add(m, b); out y",
     APPLIED("matmul-add-gemm", "Gemm=1 MatMul=0 Add=0", 2, 0)},
    {"matmul_add_rank3", 13, false,
     "in a f32s[2,4,8]; const w f32[8,5] = rand; const b f32[5] = rand; m = MatMul(a, w); "
     "y = Add(b, m); out y",
     APPLIED("matmul-add", "MatMul=0 Add=0", 2, 1)},
    {"matmul_bias_relu_residual", 13, false,
     "in a f32s[2,4,8]; in z f32s[2,4,5]; const w f32[8,5] = rand; const b f32[5] = rand; "
     "m = MatMul(a, w); y = Add(m, b); r = Relu(y); s = Add(r, z); out s",
     APPLIED("matmul-post-ops", "MatMul=0 Add=0 Relu=0", 4, 1)},
    {"gemm_relu", 13, false,
     "in a f32s[4,8]; const w f32[8,5] = rand; const b f32[5] = rand; g = Gemm(a, w, b); "
     "r = Relu(g); out r",
     APPLIED("gemm-activation", "Gemm=0 Relu=0", 2, 1)},
    {"ffn", 20, false,
     "in x f32s[1,4,8]; const w1 f32[8,16] = rand; const b1 f32[16] = rand; "
     "const w2 f32[16,8] = rand; const b2 f32[8] = rand; m1 = MatMul(x, w1); "
     "a1 = Add(m1, b1); g = Gelu(a1); m2 = MatMul(g, w2); a2 = Add(m2, b2); out a2",
     APPLIED("ffn", "MatMul=0 Add=0 Gelu=0", 5, 1)},
    {"ffn_no_bias", 20, false,
     "in x f32s[1,4,8]; const w1 f32[8,16] = rand; const w2 f32[16,8] = rand; "
     "m1 = MatMul(x, w1); g = Gelu(m1) approximate=\"tanh\"; m2 = MatMul(g, w2); out m2",
     APPLIED("ffn", "MatMul=0 Gelu=0", 3, 1)},
    {"attention", 13, false,
     "in q f32s[1,2,4,8]; in kt f32s[1,2,8,4]; in v f32s[1,2,4,8]; in mask f32s[1,2,4,4]; "
     "const sc f32[] = 2.828427; s = MatMul(q, kt); d = Div(s, sc); a = Add(d, mask); "
     "p = Softmax(a) axis=-1; o = MatMul(p, v); out o",
     APPLIED("attention", "MatMul=0 Div=0 Add=0 Softmax=0", 5, 1)},
    /* The rule takes a mask broadcast over the heads; oneDNN 2.6's binary post-op does
     * not (the backend would run the body on reference kernels): the probe refuses it
     * and shorter rules take the head. */
    {"attention_mask_over_heads", 13, false,
     "in q f32s[1,2,4,8]; in kt f32s[1,2,8,4]; in v f32s[1,2,4,8]; in mask f32s[1,1,4,4]; "
     "const sc f32[] = 2.828427; s = MatMul(q, kt); d = Div(s, sc); a = Add(d, mask); "
     "p = Softmax(a) axis=-1; o = MatMul(p, v); out o",
     REFUSED_BUT("attention", "target: oneDNN 2.6 runs the group as its body on the "
                 "reference kernels: member 'n_a' (Add): operand [1,1,4,4]", 2)},
    {"attention_scale_first", 13, false,
     "in q f32s[1,2,4,8]; in kt f32s[1,2,8,4]; in v f32s[1,2,4,8]; const sc f32[] = 0.35; "
     "qs = Mul(q, sc); s = MatMul(qs, kt); p = Softmax(s) axis=-1; o = MatMul(p, v); out o",
     APPLIED("attention", "MatMul=0 Mul=0 Softmax=0", 4, 1)},
    {"softmax_matmul", 13, false,
     "in x f32s[2,4,4]; in v f32s[2,4,8]; p = Softmax(x) axis=-1; o = MatMul(p, v); out o",
     APPLIED("softmax-matmul", "Softmax=0 MatMul=0", 2, 1)},
    {"layernorm_matmul", 17, false,
     "in x f32s[2,4,8]; const g f32[8] = rand; const b f32[8] = rand; "
     "const w f32[8,6] = rand; n = LayerNormalization(x, g, b) axis=-1; m = MatMul(n, w); "
     "out m",
     APPLIED("layernorm-matmul", "LayerNormalization=0 MatMul=0", 2, 1)},
    /* a pre-LN transformer's projection: the bias and a Gelu join the unit */
    {"layernorm_matmul_bias", 17, false, LN_MATMUL_BIAS "out a",
     APPLIED("layernorm-matmul", "LayerNormalization=0 MatMul=0 Add=0", 3, 1)},
    {"layernorm_matmul_bias_gelu", 20, false, LN_MATMUL_BIAS "e = Gelu(a); out e",
     APPLIED("layernorm-matmul", "LayerNormalization=0 MatMul=0 Add=0 Gelu=0", 4, 1)},
    {"skip_layernorm", 17, false,
     "in x f32s[2,4,8]; in y f32s[2,4,8]; const g f32[8] = rand; const b f32[8] = rand; "
     "s = Add(x, y); n = LayerNormalization(s, g, b) axis=-1; out n",
     APPLIED("skip-layernorm", "Add=0 LayerNormalization=0", 2, 1)},
    {"bias_gelu", 20, false,
     "in x f32s[2,4,8]; const b f32[8] = rand; a = Add(x, b); g = Gelu(a); out g",
     APPLIED("bias-gelu", "Add=0 Gelu=0", 2, 1)},

    {"matmul_int32_add", 13, false,
     "in a i32[4,8]; const w i32[8,5] = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,"
     "21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40; const b i32[5] = 1,2,3,4,5; "
     "m = MatMul(a, w); y = Add(m, b); out y",
     REFUSED("matmul-add-gemm", "precision: MatMul 'n_m' computes int32")},
    /* float64 (issue 22): ONNX Runtime's MatMulAddFusion takes float only; graphlab's
     * Gemm reference kernel computes float64 as MatMul then Add do (bit for bit). */
    {"matmul_add_f64_gemm", 13, false,
     "in a f64[4,8]; const w f64[8,5] = rand; const b f64[5] = rand; m = MatMul(a, w); "
     "y = Add(m, b); out y",
     APPLIED("matmul-add-gemm", "Gemm=1 MatMul=0 Add=0", 2, 0)},
    {"matmul_add_f64_gemm_full_c", 13, false,
     "in a f64[4,8]; in w f64[8,5]; in c f64[4,5]; m = MatMul(a, w); y = Add(c, m); out y",
     APPLIED("matmul-add-gemm", "Gemm=1 MatMul=0 Add=0", 2, 0)},
    {"matmul_add_f64_rank3", 13, false,
     "in a f64[2,4,8]; const w f64[8,5] = rand; const b f64[5] = rand; m = MatMul(a, w); "
     "y = Add(m, b); out y",
     REFUSED("matmul-add-gemm", "shapes: MatMul 'n_m': 'a' double[2,4,8] and 'w' "
             "double[8,5]: Gemm takes two matrices")},
    {"matmul_add_f64_c_broadcasts_the_product", 13, false,
     "in a f64[4,8]; const w f64[8,5] = rand; in z f64[3,4,5]; m = MatMul(a, w); "
     "y = Add(m, z); out y",
     REFUSED("matmul-add-gemm", "broadcast: Add 'n_y': 'z' double[3,4,5] against 'm' "
             "double[4,5]")},
    {"matmul_add_branch", 13, false,
     "in a f32s[2,4,8]; const w f32[8,5] = rand; const b f32[5] = rand; m = MatMul(a, w); "
     "y = Add(m, b); z = Relu(m); out y, z",
     REFUSED("matmul-add", "branch: 'm' (output of MatMul 'n_m') is read by 2 nodes")},
    {"matmul_add_batch_broadcast", 13, false,
     "in a f32s[1,4,8]; in z f32s[3,4,5]; const w f32[8,5] = rand; m = MatMul(a, w); "
     "y = Add(m, z); out y",
     REFUSED("matmul-add", "broadcast: Add 'n_y': 'z' float[3,4,5] against 'm' float[1,4,5]")},
    {"ffn_second_matmul_batch_broadcast", 20, false,
     "in x f32s[1,4,8]; const w1 f32[8,16] = rand; in w2 f32s[3,16,8]; "
     "m1 = MatMul(x, w1); g = Gelu(m1); m2 = MatMul(g, w2); out m2",
     REFUSED_BUT("ffn", "broadcast: MatMul 'n_m2'", 1)},
    {"attention_mask_exact", 13, true,
     "in q f32s[1,2,4,8]; in kt f32s[1,2,8,4]; in v f32s[1,2,4,8]; in mask f32s[1,1,4,4]; "
     "s = MatMul(q, kt); a = Add(s, mask); p = Softmax(a) axis=-1; o = MatMul(p, v); out o",
     REFUSED_BUT("attention", "exact-shapes: Add 'n_a': 'mask' float[1,1,4,4]", 1)},
    {"matmul_alone", 13, false,
     "in a f32s[4,8]; const w f32[8,5] = rand; m = MatMul(a, w); out m", UNTOUCHED},
};

Test(fusion, matmul) { RUN(matmul_cases); }

/* concat-conv1x1: a channel Concat read by a 1x1 Conv (squeezenet's Fire modules). */
#define CAT2 "in a f32s[1,8,4,4]; in b f32s[1,8,4,4]; c = Concat(a, b) axis=1; "
#define IN8(x) "in " #x " f32s[1,8,4,4]; "
#define CAT5 IN8(a) IN8(b) IN8(d) IN8(e) IN8(f) "c = Concat(a, b, d, e, f) axis=1; "
#define CAT9                                                                               \
    IN8(a) IN8(b) IN8(d) IN8(e) IN8(f) IN8(g) IN8(h) IN8(i) IN8(j)                         \
    "c = Concat(a, b, d, e, f, g, h, i, j) axis=1; "
static const fcase concat_cases[] = {
    {"concat_conv1x1_relu", 13, false,
     CAT2 "const w f32[4,16,1,1] = rand; const k f32[4] = rand; y = Conv(c, w, k); "
     "r = Relu(y); out r",
     APPLIED("concat-conv1x1", "Concat=0 Conv=0 Relu=0", 3, 1)},
    {"concat_conv1x1_as_wide", 13, false,
     CAT2 "const w f32[16,16,1,1] = rand; y = Conv(c, w); out y",
     APPLIED("concat-conv1x1", "Concat=0 Conv=0", 2, 1)},
    {"concat_three_axis_minus3", 13, false,
     "in a f32s[1,8,4,4]; in b f32s[1,3,4,4]; in d f32s[1,5,4,4]; c = Concat(a, b, d) "
     "axis=-3; const w f32[4,16,1,1] = rand; y = Conv(c, w); out y",
     APPLIED("concat-conv1x1", "Concat=0 Conv=0", 2, 1)},
    /* The Conv and its Relu are still grouped (conv-activation). */
    {"concat_conv1x1_wider_out", 13, false,
     CAT2 "const w f32[24,16,1,1] = rand; y = Conv(c, w); r = Relu(y); out r",
     REFUSED_BUT("concat-conv1x1", "cost: Conv 'n_y': 24 output channels from 16 input "
                 "channels", 1)},
    {"concat_conv_strided", 13, false,
     CAT2 "const w f32[4,16,1,1] = rand; y = Conv(c, w) strides=[2,2]; r = Relu(y); out r",
     REFUSED_BUT("concat-conv1x1", "target: Conv 'n_y': 1x1 weights, group 1, stride 2", 1)},
    {"concat_spatial_axis", 13, false,
     "in a f32s[1,16,4,4]; in b f32s[1,16,4,4]; c = Concat(a, b) axis=2; "
     "const w f32[4,16,1,1] = rand; y = Conv(c, w); out y",
     REFUSED("concat-conv1x1", "target: Concat 'n_c': 2 inputs of rank 4 along axis 2")},
    {"concat_branch", 13, false,
     CAT2 "const w f32[4,16,1,1] = rand; y = Conv(c, w); out y, c",
     REFUSED("concat-conv1x1", "graph-output: 'c' (output of Concat 'n_c') is a graph "
             "output")},
    /* Issue 22: DenseNet's Concats have up to 49 inputs. The split kernel takes the
     * target's parts (oneDNN: 8, one convolution each): 5 fuse, 9 are refused for that. */
    {"concat_five_inputs", 13, false,
     CAT5 "const w f32[4,40,1,1] = rand; y = Conv(c, w); r = Relu(y); out r",
     APPLIED("concat-conv1x1", "Concat=0 Conv=0 Relu=0", 3, 1)},
    {"concat_nine_inputs", 13, false,
     CAT9 "const w f32[4,72,1,1] = rand; y = Conv(c, w); r = Relu(y); out r",
     REFUSED_BUT("concat-conv1x1", "target: Concat 'n_c' has 9 inputs; the split kernels of "
                 "oneDNN", 1)},
    /* A 3x3 Conv is not the pattern: the Concat stays, the Conv's own rules speak. */
    {"concat_conv3x3", 13, false,
     CAT2 "const w f32[4,16,3,3] = rand; y = Conv(c, w); out y", UNTOUCHED},
};

Test(fusion, concat_conv1x1) { RUN(concat_cases); }

/* channel-shuffle: ShuffleNet's Concat, Reshape, Transpose, Reshape (and the channel
 * Slices that read it) as one group. */
#define SHUF_CAT "in a f32s[1,8,3,3]; in b f32s[1,8,3,3]; c = Concat(a, b) axis=1; "
#define SHUF_MOVE(g, k)                                                                    \
    "const s5 i64[5] = 1," #g "," #k ",3,3; const s4 i64[4] = 1,16,3,3; "                  \
    "r = Reshape(c, s5); t = Transpose(r) perm=[0,2,1,3,4]; y = Reshape(t, s4); "
#define SHUF SHUF_CAT SHUF_MOVE(2, 8)
#define HALVES                                                                             \
    "const z i64[1] = 0; const h i64[1] = 8; const e i64[1] = 16; const ax i64[1] = 1; "   \
    "p = Slice(y, z, h, ax); q = Slice(y, h, e, ax); "
static const fcase shuffle_cases[] = {
    {"shuffle_slices", 13, false, SHUF HALVES "out p, q",
     APPLIED("channel-shuffle", "Concat=0 Reshape=0 Transpose=0 Slice=0", 6, 1)},
    {"shuffle_whole", 13, false, SHUF "out y",
     APPLIED("channel-shuffle", "Concat=0 Reshape=0 Transpose=0", 4, 1)},
    {"shuffle_four_groups", 13, false, SHUF_CAT SHUF_MOVE(4, 4) HALVES "out p, q",
     APPLIED("channel-shuffle", "Concat=0 Reshape=0 Transpose=0 Slice=0", 6, 1)},
    /* A reader that is no Slice: the Slices stay out, the shuffle is still one group. */
    {"shuffle_slice_and_relu", 13, false,
     SHUF "const z i64[1] = 0; const h i64[1] = 8; const ax i64[1] = 1; "
     "p = Slice(y, z, h, ax); u = Relu(y); out p, u",
     APPLIED("channel-shuffle", "Concat=0 Reshape=0 Transpose=0 Slice=1 Relu=1", 4, 1)},
    {"shuffle_slice_spatial", 13, false,
     SHUF "const z i64[1] = 0; const h i64[1] = 2; const ax i64[1] = 2; "
     "p = Slice(y, z, h, ax); out p",
     APPLIED("channel-shuffle", "Concat=0 Reshape=0 Transpose=0 Slice=1", 4, 1)},
    /* Five Slices: more than the rule's 8 nodes (the unit's 4 outputs), the group ends
     * before them. */
    {"shuffle_five_slices", 13, false,
     SHUF "const z i64[1] = 0; const h i64[1] = 3; const e i64[1] = 6; const f i64[1] = 9; "
     "const j i64[1] = 12; const l i64[1] = 16; const ax i64[1] = 1; "
     "p1 = Slice(y, z, h, ax); p2 = Slice(y, h, e, ax); p3 = Slice(y, e, f, ax); "
     "p4 = Slice(y, f, j, ax); p5 = Slice(y, j, l, ax); out p1, p2, p3, p4, p5",
     APPLIED("channel-shuffle", "Concat=0 Reshape=0 Transpose=0 Slice=5", 4, 1)},
    {"shuffle_intermediate_read", 13, false,
     SHUF_CAT "const s5 i64[5] = 1,2,8,3,3; const s4 i64[4] = 1,16,3,3; r = Reshape(c, s5); "
     "t = Transpose(r) perm=[0,2,1,3,4]; y = Reshape(t, s4); w = Relu(t); out y, w",
     REFUSED("channel-shuffle", "branch: 't' (output of Transpose 'n_t') is read by 2 nodes")},
    {"shuffle_graph_output", 13, false, SHUF HALVES "out p, q, t",
     REFUSED("channel-shuffle", "graph-output: 't' (output of Transpose 'n_t') is a graph "
             "output")},
    /* The shuffled tensor a graph output too: the Slices stay out. */
    {"shuffle_output_and_slices", 13, false, SHUF HALVES "out p, q, y",
     APPLIED("channel-shuffle", "Concat=0 Reshape=0 Transpose=0 Slice=2", 4, 1)},
    {"shuffle_other_perm", 13, false,
     SHUF_CAT "const s5 i64[5] = 1,2,8,3,3; const s4 i64[4] = 1,16,3,3; r = Reshape(c, s5); "
     "t = Transpose(r) perm=[0,1,2,4,3]; y = Reshape(t, s4); out y",
     REFUSED("channel-shuffle", "target: Transpose 'n_t': a channel shuffle swaps dims 1 "
             "and 2 of 5")},
    {"shuffle_spatial_axis", 13, false,
     "in a f32s[1,8,3,3]; in b f32s[1,8,3,3]; c = Concat(a, b) axis=2; "
     "const s5 i64[5] = 1,2,8,3,3; const s4 i64[4] = 1,8,6,3; r = Reshape(c, s5); "
     "t = Transpose(r) perm=[0,2,1,3,4]; y = Reshape(t, s4); out y",
     REFUSED("channel-shuffle", "target: Concat 'n_c': 2 inputs of rank 4 along axis 2")},
    /* Issue 22: five inputs of 4 channels (the target's parts: 8). */
    {"shuffle_five_inputs", 13, false,
     "in a f32s[1,4,3,3]; in b f32s[1,4,3,3]; in d f32s[1,4,3,3]; in e f32s[1,2,3,3]; "
     "in f f32s[1,2,3,3]; c = Concat(a, b, d, e, f) axis=1; " SHUF_MOVE(2, 8) "out y",
     APPLIED("channel-shuffle", "Concat=0 Reshape=0 Transpose=0", 4, 1)},
    {"shuffle_unknown_dims", 13, false,
     "in a f32s[?1,8,?3,?3]; in b f32s[?1,8,?3,?3]; c = Concat(a, b) axis=1; "
     "const s5 i64[5] = 1,2,8,3,3; const s4 i64[4] = 1,16,3,3; r = Reshape(c, s5); "
     "t = Transpose(r) perm=[0,2,1,3,4]; y = Reshape(t, s4); out y",
     REFUSED("channel-shuffle", "shapes: Reshape 'n_r'")},
};

Test(fusion, channel_shuffle) { RUN(shuffle_cases); }

/* batchnorm-relu: DenseNet's pre-activation BatchNormalization -> Relu as one oneDNN
 * batch normalization with a relu post-op (the BN cannot fold into the Conv after the
 * Relu). BN_P: its four [4] parameters, the variances positive. */
#define BN_P                                                                               \
    "const s f32[4] = rand; const b f32[4] = rand; const mu f32[4] = rand; "               \
    "const var f32[4] = 0.5,1,2,0.25; "
#define BN BN_P "in x f32s[1,4,5,5]; y = BatchNormalization(x, s, b, mu, var); "
static const fcase batchnorm_cases[] = {
    {"bn_relu", 13, false, BN "r = Relu(y); out r",
     APPLIED("batchnorm-relu", "BatchNormalization=0 Relu=0", 2, 1)},
    {"bn_leaky_relu", 15, false, BN "r = LeakyRelu(y) alpha=0.1; out r",
     APPLIED("batchnorm-relu", "BatchNormalization=0 LeakyRelu=0", 2, 1)},
    {"bn_relu_5d", 13, false,
     BN_P "in x f32s[2,4,3,3,3]; y = BatchNormalization(x, s, b, mu, var); r = Relu(y); out r",
     APPLIED("batchnorm-relu", "BatchNormalization=0 Relu=0", 2, 1)},
    /* The Conv after the Relu is a group of its own: the BN cannot fold into it. */
    {"bn_relu_conv", 13, false,
     BN "r = Relu(y); const w f32[3,4,1,1] = rand; c = Conv(r, w); out c",
     APPLIED("batchnorm-relu", "BatchNormalization=0 Relu=0 Conv=1", 2, 1)},
    {"bn_relu_branch", 13, false, BN "r = Relu(y); t = Sigmoid(y); out r, t",
     REFUSED("batchnorm-relu", "branch: 'y' (output of BatchNormalization 'n_y') is read by "
             "2 nodes")},
    {"bn_relu_graph_output", 13, false, BN "r = Relu(y); out r, y",
     REFUSED("batchnorm-relu", "graph-output: 'y' (output of BatchNormalization 'n_y') is a "
             "graph output")},
    {"bn_training_mode", 15, false,
     BN_P "in x f32s[2,4,5,5]; y = BatchNormalization(x, s, b, mu, var) training_mode=1; "
     "r = Relu(y); out r",
     REFUSED("batchnorm-relu", "target: BatchNormalization 'n_y': training_mode=1")},
    {"bn_running_mean_asked", 15, false,
     BN_P "in x f32s[1,4,5,5]; y, m = BatchNormalization(x, s, b, mu, var); r = Relu(y); "
     "out r",
     REFUSED("batchnorm-relu", "target: BatchNormalization 'n_y' makes output 1 ('m')")},
    {"bn_running_mean_read", 15, false,
     BN_P "in x f32s[2,4,5,5]; y, m, v = BatchNormalization(x, s, b, mu, var) "
     "training_mode=1; r = Relu(y); out r, m, v",
     REFUSED("batchnorm-relu", "target: BatchNormalization 'n_y': training_mode=1")},
    {"bn_relu_rank2", 13, false,
     BN_P "in x f32s[3,4]; y = BatchNormalization(x, s, b, mu, var); r = Relu(y); out r",
     REFUSED("batchnorm-relu", "target: BatchNormalization 'n_y': its X 'x' has rank 2")},
    {"bn_relu_unknown_rank", 13, false,
     BN_P "in x f32s?[1,4,5,5]; y = BatchNormalization(x, s, b, mu, var); r = Relu(y); "
     "out r",
     REFUSED("batchnorm-relu", "shapes: BatchNormalization 'n_y': the rank of its X 'x'")},
    /* opset 7's spatial=0: a scale, B, mean and var per (channel, position) */
    {"bn_spatial_0", 7, false,
     "const s f32[4,1,1] = rand; const b f32[4,1,1] = rand; const mu f32[4,1,1] = rand; "
     "const var f32[4,1,1] = 0.5,1,2,0.25; in x f32s[1,4,1,1]; "
     "y = BatchNormalization(x, s, b, mu, var) spatial=0; r = Relu(y); out r",
     REFUSED("batchnorm-relu", "target: BatchNormalization 'n_y': spatial=0")},
    /* oneDNN's batch normalization takes a relu post-op and no other (the target says) */
    {"bn_sigmoid", 13, false, BN "t = Sigmoid(y); out t",
     REFUSED("batchnorm-relu", "target: BatchNormalization 'n_y' takes no eltwise member "
             "('n_t', Sigmoid) here: one relu post-op only")},
    {"bn_clip", 13, false, BN "const lo f32[] = 0; const hi f32[] = 6; t = Clip(y, lo, hi); "
     "out t", REFUSED("batchnorm-relu", "target: BatchNormalization 'n_y' takes no eltwise "
                      "member ('n_t', Clip) here")},
    {"bn_alone", 13, false, BN "out y", UNTOUCHED},
};

Test(fusion, batchnorm_relu) { RUN(batchnorm_cases); }

/* ==== near misses (issue 24: "why was this not fused" always has an answer) ============ */

/* A rule whose head matched, stopped by one node that no rule takes, with the rule's next
 * member just past it: one refusal per (rule, head) naming the node between. Nothing is
 * said where the node between heads a rule of its own, where the head is only an
 * optional step, or where the value branches. */
/* GPT-2's MLP in the Hugging Face Conv1D form: addmm on [B*T, C], viewed back as
 * [B, T, 4C], then the tanh Gelu. */
/* GPT-2's is approximate="tanh", which on a CPU without AVX-512 is no post-op
 * (dn_eltwise_post_slow): the erf one keeps these rows the same everywhere. */
#define GPT2_MLP                                                                           \
    "in x f32s[8,4]; const w f32[4,16] = rand; const b f32[16] = rand; "                   \
    "const s i64[3] = 2,4,16; g = Gemm(x, w, b); r = Reshape(g, s); "                      \
    "a = Gelu(r); out a"

static const fcase near_miss_cases[] = {
    /* The Gelu is elementwise: moved before the Reshape it computes the same values, and
     * the Gemm takes it as its post-op (the move is a decision of its own). */
    {"gpt2_gemm_reshape_gelu", 20, false, GPT2_MLP,
     APPLIED("gemm-activation", "Gemm=0 Gelu=0 Reshape=1", 2, 1)},
    {"gpt2_move_recorded", 20, false, GPT2_MLP,
     APPLIED("move-before-view", "Gemm=0 Gelu=0 Reshape=1", 3, 1)},
    /* Not moved: a Transpose is no view (the order of the elements changes, and the
     * Gelu would not care, but an Add's operand would); said as a near miss. */
    {"gemm_transpose_gelu", 20, false,
     "in x f32s[8,4]; const w f32[4,16] = rand; const b f32[16] = rand; "
     "g = Gemm(x, w, b); t = Transpose(g) perm=[1,0]; a = Gelu(t) approximate=\"tanh\"; "
     "out a",
     REFUSED("gemm-activation", "near miss: Gemm -> Transpose -> Gelu: Transpose 'n_t' "
             "between Gemm 'n_g' and Gelu 'n_a' is not a member of rule gemm-activation "
             "(would need gemm-transpose-gelu)")},
    /* Not moved: the member past the Reshape is binary (its operand has the viewed
     * shape). */
    {"matmul_reshape_add", 13, false,
     "in x f32s[8,4]; const w f32[4,16] = rand; const bias f32[16] = rand; "
     "const s i64[3] = 2,4,16; m = MatMul(x, w); r = Reshape(m, s); y = Add(r, bias); "
     "out y",
     REFUSED("matmul-add", "Reshape 'n_r' between MatMul 'n_m' and Add 'n_y' is not a "
             "member of rule matmul-add")},
    {"conv_pool_relu", 13, false, CONV "p = MaxPool(c) kernel_shape=[1,1]; r = Relu(p); out r",
     REFUSED("conv-activation", "MaxPool 'n_p' between Conv 'n_c' and Relu 'n_r' is not a "
             "member of any rule (would need conv-maxpool-relu)")},
    {"bias_transpose_gelu", 20, false,
     "in x f32s[2,4,8]; const b f32[8] = rand; a = Add(x, b); "
     "t = Transpose(a) perm=[0,2,1]; g = Gelu(t); out g",
     REFUSED("bias-gelu", "Transpose 'n_t' between Add 'n_a' and Gelu 'n_g' is not a "
             "member of rule bias-gelu")},
    {"skip_transpose_layernorm", 17, false,
     "in x f32s[2,4,8]; in y f32s[2,4,8]; const sc f32[8] = rand; a = Add(x, y); "
     "t = Transpose(a) perm=[0,1,2]; n = LayerNormalization(t, sc) axis=-1; out n",
     REFUSED("skip-layernorm", "Transpose 'n_t' between Add 'n_a' and LayerNormalization 'n_n'")},
    /* The group is made (Conv + Add); the Relu past the Cast is said why it is not in it. */
    {"conv_add_pool_relu", 13, false,
     CONV "in z f32s[1,3,5,5]; a = Add(c, z); p = MaxPool(a) kernel_shape=[1,1]; "
     "r = Relu(p); out r",
     REFUSED_BUT("conv-add-activation", "MaxPool 'n_p' between Add 'n_a' and Relu 'n_r'", 1)},
    /* No near miss: the second Conv heads its own group with the Relu. */
    {"conv_conv_relu", 13, false,
     CONV "const w2 f32[3,3,1,1] = rand; d = Conv(c, w2); r = Relu(d); out r",
     APPLIED("conv-activation", "Conv=1 Relu=0", 2, 1), .quiet = true},
    /* No near miss: attention's head is its MatMul, the scale before it is optional. */
    {"mul_transpose_matmul", 13, false,
     "in q f32s[2,4]; in k f32s[2,4]; const sc f32[] = 0.5; m = Mul(q, sc); "
     "t = Transpose(m) perm=[1,0]; y = MatMul(t, k); out y", UNTOUCHED},
    /* No near miss: the value between branches. */
    {"gemm_reshape_branch", 20, false,
     "in x f32s[8,4]; const w f32[4,16] = rand; const b f32[16] = rand; "
     "const s i64[3] = 2,4,16; g = Gemm(x, w, b); r = Reshape(g, s); a = Relu(r); "
     "e = Exp(r); out a, e", UNTOUCHED},
    /* No near miss: the node past the one between would not complete the rule. */
    {"matmul_reshape_softmax", 13, false,
     "in x f32s[8,4]; const w f32[4,16] = rand; const s i64[3] = 2,4,16; "
     "m = MatMul(x, w); r = Reshape(m, s); y = Softmax(r) axis=-1; out y", UNTOUCHED},
};

Test(fusion, near_misses) { RUN(near_miss_cases); }

/* The id of the first decision of `rule` in the pipeline's log, or -1. */
static int64_t decision_of(const gl_pipeline *p, const char *rule, gl_verdict v)
{
    for (size_t i = 0; i < p->log.n; i++)
        if (!strcmp(p->log.items[i].rule, rule) && p->log.items[i].verdict == v)
            return p->log.items[i].id;
    return -1;
}

/* Vetoed, the move is not made for another rule either: the near misses speak. */
Test(fusion, vetoed_move_leaves_the_near_misses)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes("gpt2_veto", 20, GPT2_MLP, NULL, PASSES, &b);
    cr_assert_not_null(p);
    int64_t move = decision_of(p, "move-before-view", GL_APPLIED);
    cr_assert_geq(move, 0, "the move was made");
    gl_pipeline_free(p);
    char veto[64];
    snprintf(veto, sizeof(veto), "fusion.veto=%lld", (long long)move);
    p = gn_run_passes_set("gpt2_veto", 20, GPT2_MLP, NULL, PASSES, veto, &b);
    cr_assert_not_null(p);
    cr_expect_eq(decision_of(p, "move-before-view", GL_APPLIED), -1, "moved for another rule");
    cr_expect_geq(decision_of(p, "gemm-activation", GL_REFUSED), 0, "no near miss said");
    cr_expect_eq(gn_count_domain(p->steps[p->n_steps - 1].model->graph, GL_FUSED_DOMAIN), 0);
    gl_pipeline_free(p);
}

/* ==== the table ========================================================================== */

Test(fusion, rule_table)
{
    size_t n;
    const gl_fu_rule *rules = gl_fu_rules(&n);
    cr_assert_gt(n, 10);
    for (size_t i = 0; i < n; i++) {
        const gl_fu_rule *r = &rules[i];
        cr_expect(r->name && r->origin && *r->origin && r->kernel, "row %zu", i);
        cr_expect(r->n_steps >= 2 && r->n_steps <= GL_FU_MAX_STEPS, "%s", r->name);
        cr_expect(r->max_ops >= 2 && r->max_ops < GL_FU_MAX_CHAIN, "%s", r->name);
        cr_expect_eq(r->steps[0].rep, r->steps[0].rep == GL_FU_OPT ? GL_FU_OPT : GL_FU_ONE,
                     "%s: the first step is one node (or an optional one)", r->name);
        for (size_t j = 0; j < i; j++)
            cr_expect(strcmp(rules[j].name, r->name), "%s twice", r->name);
    }
}

/* `word` is one of the space-separated words of `list`. */
static bool word_in(const char *list, const char *word)
{
    size_t len = strlen(word);
    for (const char *at = strstr(list, word); at; at = strstr(at + 1, word))
        if ((at == list || at[-1] == ' ') && (at[len] == ' ' || at[len] == '\0'))
            return true;
    return false;
}

/* The index of heads (gl_fu_heads) offers a node exactly to the rules whose head step
 * names its op (domain and type, whole words): a rule left out would never fuse that
 * head; a rule let in for every op would make the index pointless. Each row lists the
 * rules expected, and each rule whose head steps take the node (gl_fu_step_has, the
 * table's own answer) must be among them. */
Test(fusion, head_index)
{
    static const struct {
        const char *domain, *op;
        const char *rules; /* the rules' names, space-separated */
    } rows[] = {
        {"", "Add", "bias-gelu skip-layernorm"},
        {"ai.onnx", "Add", "bias-gelu skip-layernorm"},
        {"", "Mul", "attention"},
        {"", "Div", "attention"},
        {"", "MatMul", "matmul-add-gemm matmul-add ffn attention matmul-post-ops"},
        {"graphlab", "FusedMatMul", "matmul-add ffn attention matmul-post-ops"},
        {"graphlab", "MatMul", ""},
        {"", "FusedMatMul", ""},
        {"", "Conv", "conv-activation conv-add-activation conv-post-ops conv-depthwise"},
        {"graphlab", "NhwcConv", "conv-activation conv-add-activation conv-post-ops"},
        {"", "ConvTranspose", "conv-activation conv-add-activation conv-post-ops"},
        {"com.microsoft", "Conv", ""},
        {"", "Con", ""},
        {"", "ConvInteger", ""},
        {"", "Gemm", "gemm-activation matmul-post-ops"},
        {"", "Softmax", "softmax-matmul"},
        {"", "LayerNormalization", "layernorm-matmul"},
        {"graphlab", "LayerNormalization", "layernorm-matmul"},
        {"", "Concat", "concat-conv1x1 channel-shuffle"},
        {"", "BatchNormalization", "batchnorm-relu"},
        {"", "Sigmoid", ""},
        {"", "Relu", ""},
        {"", "Gelu", ""},
        {"", "Reshape", ""},
    };
    size_t n_rules;
    const gl_fu_rule *rules = gl_fu_rules(&n_rules);
    gl_fu_heads heads;
    gl_fu_heads_init(&heads);
    cr_expect_eq(heads.any, 0, "every head step of the table names its ops");
    gl_model *m = tu_model(17);
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_node *n = gl_add_node(m->graph, rows[i].op, rows[i].domain, NULL, NULL, 0, 1);
        uint64_t got = gl_fu_heads_of(&heads, n);
        for (size_t r = 0; r < n_rules; r++) {
            bool listed = word_in(rows[i].rules, rules[r].name);
            cr_expect_eq((got >> r) & 1, listed, "%s.%s: rule %s", rows[i].domain,
                         rows[i].op, rules[r].name);
            /* the table's own answer: the optional steps before the first required one,
             * and that one, may take the head */
            bool takes = false;
            for (size_t q = 0; q < rules[r].n_steps && !takes; q++) {
                takes = gl_fu_step_has(&rules[r].steps[q], n);
                if (rules[r].steps[q].rep == GL_FU_ONE || rules[r].steps[q].rep == GL_FU_PLUS)
                    break;
            }
            cr_expect(!takes || listed, "%s.%s heads rule %s but the index leaves it out",
                      rows[i].domain, rows[i].op, rules[r].name);
        }
    }
    gl_model_free(m);
}

/* What the target calls slower than the members (gl_target_impl_is_slow), from the
 * implementation the plan shows for a fused node. */
Test(fusion, target_implementations_that_lose)
{
    static const struct {
        const char *impl;
        bool slow;
    } rows[] = {
        {"jit:avx2 + eltwise_relu", false},
        {"ref:any", true},                          /* the whole group on oneDNN's reference */
        {"ref (members)", true},
        {"jit:uni | gemm:jit | jit:avx2 | gemm:jit", false},
        {"jit:uni | ref | gemm:jit", false},        /* a lone op on its reference kernel */
        {"gemm:jit | ref + binary_add", true},      /* ... but not with post-ops */
        {"jit:uni | ref |  | ", true},              /* primitives never built (swin_t's) */
        {"jit:avx2 |  ", true},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++)
        cr_expect_eq(gl_target_impl_is_slow(rows[i].impl), rows[i].slow, "'%s'", rows[i].impl);
}

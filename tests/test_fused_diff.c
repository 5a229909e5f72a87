/* test_fused_diff.c — every fused kernel against the reference, generated (benchdnn's
 * correctness mode is the model): heads × members × parameters × layouts × shapes.
 *
 * The cases are not picked by hand. Each is a head (Conv of odd and even channel counts,
 * strides 1 and 2, 1x1, depthwise; ConvTranspose; MatMul and Gemm; a channels-last Conv
 * that the layout pass turns into graphlab's NhwcConv) followed by one member chain from
 * the member table below, which holds one or more parameter variants for EVERY op the
 * target takes as a post-op (exec/target.h lists them: a test asserts the table covers
 * the list, so an op added to the backend's eltwise or binary table fails here until its
 * variants are written) and for every operand shape a binary post-op can have.
 *
 * Each case is built as the plain ONNX model (graphnote), run through the passes the
 * fused backend runs (toposort, shape-inference, fusion; all of them with
 * layout.ignore-cost=1 for the channels-last heads), and the optimized model is run on
 * oneDNN under every layout policy of the head's family (plain, nhwc, blocked) against
 * the reference run of the model as written, on the same seeded inputs, and again on them
 * with NaN, +Inf, -Inf and -0 planted (issue 26: oneDNN's relu, clip, max... drop a NaN
 * that ONNX keeps). Two things must hold in every case:
 *  - the numbers: within rtol 1e-3, atol 3e-4 (oneDNN reassociates sums); a NaN where the
 *    reference has one, an infinity where it has the same;
 *  - honesty: a member chain the target can take either became a group that oneDNN runs
 *    as a kernel of its own (its plan entry is no reference implementation), or the
 *    fusion pass recorded a refusal saying why. GL_TEST_FUSED_DIFF=1 prints one line per
 *    case (what fused, with which kernel, or the refusal).
 */
#include "exec/compare.h"
#include "exec/exec.h"
#include "exec/target.h"
#include "graphnote.h"
#include "passes/fusion.h"
#include "passes/pipeline.h"
#include "util/json.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-3
#define ATOL 3e-4

/* ---- heads -------------------------------------------------------------------------------
 * Text that reads graph input x (declared with the shape given) and writes value `h`;
 * `chan` is the per-channel operand's shape for a binary member, `full` the output's. */
typedef struct head {
    const char *name;
    const char *text;
    const char *chan;  /* a per-channel (or [N]) operand */
    const char *full;  /* the output's shape */
    const char *layouts;
    bool nhwc;         /* channels-last: the chain runs between two Transposes */
    const char *passes; /* NULL: toposort, shape-inference, fusion (all for nhwc) */
    bool empty;        /* a 0-sized output: nothing fuses (the target says why), all runs */
} head;

#define CONV(c, k, hw, extra)                                                              \
    "in x f32s[1," #c "," #hw "," #hw "]; const w f32s[" #k "," #c ",3,3] = rand; "          \
    "const b f32s[" #k "] = rand; h = Conv(x, w, b) pads=[1,1,1,1]" extra

#define CONV_N(n, c, k, hw)                                                                \
    "in x f32s[" #n "," #c "," #hw "," #hw "]; const w f32s[" #k "," #c ",3,3] = rand; "      \
    "const b f32s[" #k "] = rand; h = Conv(x, w, b) pads=[1,1,1,1]"

static const head heads[] = {
    {"conv 16->16 3x3", CONV(16, 16, 8, ""), "[16,1,1]", "[1,16,8,8]", "pnb", false, NULL, false},
    {"conv 3->5 3x3 (odd channels)", CONV(3, 5, 7, ""), "[5,1,1]", "[1,5,7,7]", "pnb", false, NULL, false},
    {"conv 13->7 3x3 stride 2", CONV(13, 7, 9, " strides=[2,2]"), "[7,1,1]", "[1,7,5,5]",
     "pnb", false, NULL, false},
    {"conv 12->20 1x1",
     "in x f32s[1,12,6,6]; const w f32s[20,12,1,1] = rand; const b f32s[20] = rand; "
     "h = Conv(x, w, b)",
     "[1,20,1,1]", "[1,20,6,6]", "pnb", false, NULL, false},
    {"depthwise conv 8 3x3",
     "in x f32s[1,8,8,8]; const w f32s[8,1,3,3] = rand; const b f32s[8] = rand; "
     "h = Conv(x, w, b) pads=[1,1,1,1] group=8",
     "[8,1,1]", "[1,8,8,8]", "pnb", false, NULL, false},
    {"conv-transpose 8->4 2x2 stride 2",
     "in x f32s[1,8,5,5]; const w f32s[8,4,2,2] = rand; const b f32s[4] = rand; "
     "h = ConvTranspose(x, w, b) strides=[2,2]",
     "[4,1,1]", "[1,4,10,10]", "pnb", false, NULL, false},
    {"matmul [2,8,32]x[32,24]",
     "in x f32s[2,8,32]; const w f32s[32,24] = rand; h = MatMul(x, w)", "[24]", "[2,8,24]",
     "p", false, NULL, false},
    {"gemm [8,32]x[24,32]^T+C",
     "in x f32s[8,32]; const w f32s[24,32] = rand; const b f32s[24] = rand; "
     "h = Gemm(x, w, b) transB=1",
     "[24]", "[8,24]", "p", false, NULL, false},
    /* fold-transpose makes graphlab's FusedMatMul of it (B read transposed) */
    {"matmul of a transposed weight [2,8,32]x[24,32]^T",
     "in x f32s[2,8,32]; in wt f32s[24,32]; t = Transpose(wt) perm=[1,0]; h = MatMul(x, t)",
     "[24]", "[2,8,24]", "p", false, "toposort,shape-inference,fold-transpose,fusion", false},
    /* channels-last in and out, as TensorFlow exports: layout makes it an NhwcConv */
    {"channels-last conv 16->16 3x3",
     "in x f32s[1,6,6,16]; t = Transpose(x) perm=[0,3,1,2]; const w f32s[16,16,3,3] = rand; "
     "const b f32s[16] = rand; h = Conv(t, w, b) pads=[1,1,1,1]",
     "[16,1,1]", "[1,16,6,6]", "pn", true, NULL, false},
    /* Empty tensors are tensors (issue 26): a batch of none through every member */
    {"conv 8->8 3x3, batch 0", CONV_N(0, 8, 8, 6), "[8,1,1]", "[0,8,6,6]", "pnb", false, NULL, true},
    {"matmul [0,32]x[32,24] (no rows)", "in x f32s[0,32]; const w f32s[32,24] = rand; "
     "h = MatMul(x, w)", "[24]", "[0,24]", "p", false, NULL, true},
};

/* ---- members -------------------------------------------------------------------------------
 * Text reading `h` and writing `o`, at the opset given (0: 13). `{C}` and `{F}` stand for
 * the head's per-channel and full shapes. `op` names the target's op it covers. */
typedef struct member {
    const char *op;    /* the target's name: "Clip", "graphlab.Silu", "Add" */
    const char *variant;
    int opset;
    const char *text;
} member;

static const member members[] = {
    {"Relu", "", 0, "o = Relu(h)"},
    {"LeakyRelu", "default alpha", 0, "o = LeakyRelu(h)"},
    {"LeakyRelu", "alpha 0.3", 0, "o = LeakyRelu(h) alpha=0.3"},
    {"Elu", "default alpha", 0, "o = Elu(h)"},
    {"Elu", "alpha 0.5", 0, "o = Elu(h) alpha=0.5"},
    {"Selu", "default", 0, "o = Selu(h)"},
    {"Selu", "alpha 1.5 gamma 0.9", 0, "o = Selu(h) alpha=1.5 gamma=0.9"},
    {"Sigmoid", "", 0, "o = Sigmoid(h)"},
    {"Tanh", "", 0, "o = Tanh(h)"},
    {"HardSigmoid", "default", 0, "o = HardSigmoid(h)"},
    {"HardSigmoid", "alpha 0.3 beta 0.4", 0, "o = HardSigmoid(h) alpha=0.3 beta=0.4"},
    {"HardSwish", "", 14, "o = HardSwish(h)"},
    {"Exp", "", 0, "const s f32[] = 0.25; e = Mul(h, s); o = Exp(e)"},
    {"Log", "of |h| + 1", 0, "const one f32[] = 1.0; a = Abs(h); p = Add(a, one); o = Log(p)"},
    {"Sqrt", "of |h|", 0, "a = Abs(h); o = Sqrt(a)"},
    {"Abs", "", 0, "o = Abs(h)"},
    {"Softplus", "", 0, "o = Softplus(h)"},
    {"Round", "", 11, "o = Round(h)"},
    {"Neg", "", 0, "o = Neg(h)"},
    {"Reciprocal", "of |h| + 1", 0,
     "const one f32[] = 1.0; a = Abs(h); p = Add(a, one); o = Reciprocal(p)"},
    {"Clip", "opset 13, min and max", 0, "const lo f32[] = 0.0; const hi f32[] = 0.6; "
     "o = Clip(h, lo, hi)"},
    {"Clip", "opset 13, min only", 0, "const lo f32[] = -0.2; o = Clip(h, lo)"},
    {"Clip", "opset 13, max only", 0, "const hi f32[] = 0.3; o = Clip(h, , hi)"},
    {"Clip", "opset 13, neither", 0, "o = Clip(h)"},
    {"Clip", "opset 13, min a graph input (refused)", 0, "in lo f32[]; o = Clip(h, lo)"},
    {"Clip", "opset 6, min and max", 6, "o = Clip(h) min=0.0 max=0.6"},
    {"Clip", "opset 6, min only", 6, "o = Clip(h) min=-0.2"},
    {"Clip", "opset 6, max only", 6, "o = Clip(h) max=0.3"},
    {"Clip", "opset 11, min and max", 11, "const lo f32[] = -0.1; const hi f32[] = 0.5; "
     "o = Clip(h, lo, hi)"},
    {"Pow", "of |h|, exponent 2", 0, "const e f32[] = 2.0; a = Abs(h); o = Pow(a, e)"},
    {"Pow", "of |h|, exponent 0.5", 0, "const e f32[] = 0.5; a = Abs(h); o = Pow(a, e)"},
    {"Gelu", "opset 20, exact", 20, "o = Gelu(h)"},
    {"Gelu", "opset 20, tanh", 20, "o = Gelu(h) approximate=\"tanh\""},
    {"graphlab.Gelu", "", 0, "o = graphlab.Gelu(h)"},
    {"graphlab.GeluTanh", "", 0, "o = graphlab.GeluTanh(h)"},
    {"graphlab.Silu", "", 0, "o = graphlab.Silu(h)"},
    {"graphlab.HardSwish", "", 0, "o = graphlab.HardSwish(h)"},
    /* binary post-ops: every operand shape they can have */
#define BIN(op)                                                                            \
    {op, "scalar constant", 0, "const s f32[] = 1.5; o = " op "(h, s)"},                 \
    {op, "[1] constant", 0, "const s f32[1] = 0.75; o = " op "(h, s)"},                  \
    {op, "per-channel constant", 0, "const s f32{C} = rand; o = " op "(h, s)"},          \
    {op, "full graph input", 0, "in y f32{F}; o = " op "(h, y)"}
#define SECOND(op) {op, "chain as the second operand", 0, "in y f32{F}; o = " op "(y, h)"}
    BIN("Add"), BIN("Sub"), BIN("Mul"), BIN("Div"), BIN("Max"), BIN("Min"), BIN("Sum"),
    SECOND("Add"), SECOND("Sub"), SECOND("Mul"), SECOND("Max"), SECOND("Min"), SECOND("Sum"),
    /* y / h is ill-conditioned where h is near 0: divide by |h| + 1 */
    {"Div", "chain as the second operand", 0,
     "in y f32{F}; const one f32[] = 1.0; a = Abs(h); p = Add(a, one); o = Div(y, p)"},
#undef SECOND
#undef BIN
    {"Add", "residual of the head's own shape, then Relu", 0,
     "in y f32{F}; a = Add(h, y); o = Relu(a)"},
    {"Mul", "per-channel scale, Add per-channel, Clip 0..6", 0,
     "const s f32{C} = rand; const sh f32{C} = rand; const lo f32[] = 0.0; "
     "const hi f32[] = 6.0; m = Mul(h, s); a = Add(m, sh); o = Clip(a, lo, hi)"},
};

/* ---- one case --------------------------------------------------------------------------- */

/* "graphlab.Silu" as graphnote writes it (op type with a dot, default domain): the op
 * of domain graphlab. */
static void graphlab_domains(gl_model *m)
{
    gl_node *n;
    gl_foreach_node(m->graph, i, n) {
        char *dot = strchr(n->op_type, '.');
        if (!dot)
            continue;
        char *op = gl_xstrdup(dot + 1);
        *dot = '\0';
        free(n->domain);
        n->domain = n->op_type;
        n->op_type = op;
        gl_model_set_opset(m, n->domain, 1);
    }
}

/* s with every {C} / {F} replaced. */
static void expand(char *out, size_t len, const char *s, const head *h)
{
    size_t w = 0;
    while (*s && w + 1 < len) {
        const char *with = !strncmp(s, "{C}", 3) ? h->chan : !strncmp(s, "{F}", 3) ? h->full
                                                                                    : NULL;
        if (with) {
            w += (size_t)snprintf(out + w, len - w, "%s", with);
            s += 3;
        } else {
            out[w++] = *s++;
        }
    }
    out[w < len ? w : len - 1] = '\0';
}

typedef struct tally {
    size_t cases, fused, refused;
} tally;

static bool is_head_op(const gl_node *n)
{
    static const char *const ops[] = {"Conv",     "ConvTranspose", "MatMul",
                                      "Gemm",     "NhwcConv",      "FusedMatMul"};
    for (size_t i = 0; i < GL_ARRAY_LEN(ops); i++)
        if (strcmp(n->op_type, ops[i]) == 0)
            return true;
    return false;
}

/* A rule whose group is one oneDNN primitive with post-ops (fusion.h: GL_FU_POST_OPS). */
static bool one_primitive_rule(const char *name)
{
    size_t n;
    const gl_fu_rule *rules = gl_fu_rules(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rules[i].name, name) == 0)
            return rules[i].target == GL_FU_POST_OPS;
    return false;
}

static bool is_fusion_refusal(const gl_decision *d)
{
    return strcmp(d->pass, "fusion") == 0 && d->verdict == GL_REFUSED;
}

/* The honesty check: each group runs as a oneDNN kernel, and a chain left apart has a
 * refusal saying why. */
static void check_groups(const char *what, const gl_pipeline *p, const gl_exec *dn,
                         tally *t, bool print)
{
    const gl_model *last = p->steps[p->n_steps - 1].model;
    size_t groups = 0;
    gl_node *n;
    gl_foreach_node(last->graph, i, n) {
        if (!n->domain || strcmp(n->domain, "graphlab.fused"))
            continue;
        groups++;
        const gl_plan_entry *en = tu_plan_entry(dn, n->name, 0);
        cr_assert_not_null(en, "%s: no plan entry for the group '%s'", what, n->name);
        cr_expect(strcmp(en->backend, "dnnl") == 0 && strncmp(en->info.impl, "ref", 3),
                  "%s: the group '%s' runs as %s %s (%s): the pass should have refused it",
                  what, n->name, en->backend, en->info.impl, en->info.note);
        /* a rule of one primitive with post-ops runs as one */
        const gl_decision *d = gl_decision_log_at(&p->log, n->prov.decision);
        cr_assert_not_null(d, "%s: the group '%s' names no decision", what, n->name);
        cr_expect(!one_primitive_rule(d->rule) || !strstr(en->info.impl, " | "),
                  "%s: rule %s made '%s', which runs as several primitives: %s", what,
                  d->rule, n->name, en->info.impl);
        if (print)
            fprintf(stderr, "  %-60s fused %s: %s\n", what, n->op_type, en->info.impl);
    }
    /* Another pass may have taken the members already (patterns folds a constant Add or
     * Mul into the convolution), or kept a Transpose between the head and them
     * (transpose-push refuses by cost, and says so): then no chain reaches fusion. */
    bool chain = false;
    gl_foreach_node(last->graph, i, n) {
        if (!is_head_op(n) || !n->n_outputs || !n->outputs[0])
            continue;
        const gl_value *v = n->outputs[0];
        for (size_t u = 0; u < v->n_uses; u++)
            chain |= strcmp(v->uses[u].node->op_type, "Transpose") != 0;
    }
    const gl_decision *why = NULL;
    for (size_t i = 0; i < p->log.n && !why; i++)
        if (is_fusion_refusal(&p->log.items[i]))
            why = &p->log.items[i];
    if (groups)
        t->fused++;
    else
        t->refused++;
    cr_expect(groups || why || !chain, "%s: no group and no fusion refusal: a chain left "
              "apart silently", what);
    if (!groups && why && print)
        fprintf(stderr, "  %-60s refused: %.160s\n", what, why->reason);
}

/* got against the reference's want. */
static void expect_output(const gl_tensor *got, const gl_tensor *want, const char *where,
                          const char *inputs, const char *text)
{
    gl_compare r;
    gl_compare_tensors(got, want, RTOL, ATOL, &r);
    char line[256];
    gl_compare_format(&r, line, sizeof(line));
    cr_expect(r.ok, "%s%s: fused on oneDNN against the reference: %s\n  %s", where, inputs,
              line, text);
}

/* Run dn again on `in` (nothing may be built again), its output against `want`. */
static void rerun_against(gl_exec *dn, gl_tensor **in, size_t n_in, const gl_tensor *want,
                          const char *where, const char *inputs, const char *text)
{
    gl_tensor *got = NULL;
    tu_exec_rerun_cached(dn, (const gl_tensor *const *)in, n_in, &got, 1, where);
    expect_output(got, want, where, inputs, text);
    gl_tensor_free(got);
}

static void run_case(const head *h, const member *mb, tally *t)
{
    char what[200], chain[600], text[1400];
    snprintf(what, sizeof(what), "%s + %s%s%s", h->name, mb->op, *mb->variant ? " " : "",
             mb->variant);
    expand(chain, sizeof(chain), mb->text, h);
    if (h->nhwc)
        snprintf(text, sizeof(text), "%s; %s; y_out = Transpose(o) perm=[0,2,3,1]; out y_out",
                 h->text, chain);
    else
        snprintf(text, sizeof(text), "%s; %s; out o", h->text, chain);
    int opset = mb->opset ? mb->opset : 13;
    gn_graph b;
    const char *passes = h->passes  ? h->passes
                         : h->nhwc ? "all"
                                   : "toposort,shape-inference,fusion";
    gl_pipeline *p = gn_run_passes_set(what, opset, text, graphlab_domains, passes,
                                       h->nhwc ? "layout.ignore-cost=1" : NULL, &b);
    cr_assert_not_null(p, "%s: %s", what, text);
    const gl_model *in_model = p->steps[0].model, *last = p->steps[p->n_steps - 1].model;
    gl_tensor **in = gn_feeds(&b, in_model->graph, what);
    size_t n_in = in_model->graph->n_inputs;
    char err[256] = "";
    gl_tensor **want = gn_run(in_model, in, err, sizeof(err));
    cr_assert_not_null(want, "%s: reference run: %s", what, err);
    /* The same inputs with NaN, +Inf, -Inf and -0 planted: what ONNX makes of them is
     * what the reference makes (gl_compare: NaN meets NaN, an infinity its equal). */
    gl_tensor **special = calloc(n_in + 1, sizeof(*special));
    for (size_t i = 0; i < n_in; i++)
        special[i] = in[i] ? tu_with_specials(in[i]) : NULL;
    gl_tensor **want_special = gn_run(in_model, special, err, sizeof(err));
    cr_assert_not_null(want_special, "%s: reference run with NaN/Inf: %s", what, err);
    bool print = getenv("GL_TEST_FUSED_DIFF") != NULL;
    const char *with_special = " with NaN, +Inf, -Inf and -0 in the inputs";
    for (const char *l = h->layouts; *l; l++) {
        char where[240];
        snprintf(where, sizeof(where), "%s (%s)", what, tu_layout_name(*l));
        gl_tensor *got = NULL;
        gl_exec *dn = tu_exec_run(last, "dnnl", tu_layout_name(*l), in, n_in, &got, 1, where);
        expect_output(got, want[0], where, "", text);
        gl_tensor_free(got);
        if (l == h->layouts)
            check_groups(what, p, dn, t, print);
        /* the same plan, from finite inputs to special ones and back: nothing built again */
        rerun_against(dn, special, n_in, want_special[0], where, with_special, text);
        rerun_against(dn, in, n_in, want[0], where, " (again finite)", text);
        gl_exec_free(dn);
    }
    t->cases++;
    gn_free_tensors(want, last->graph->n_outputs);
    gn_free_tensors(want_special, last->graph->n_outputs);
    gn_free_tensors(in, n_in);
    gn_free_tensors(special, n_in);
    gl_pipeline_free(p);
}

static void run_head(size_t hi)
{
    const head *h = &heads[hi];
    tally t = {0};
    for (size_t i = 0; i < GL_ARRAY_LEN(members); i++) {
        /* Gemm broadcasts C from opset 7 only */
        if (members[i].opset && members[i].opset < 7 && strstr(h->name, "gemm"))
            continue;
        run_case(h, &members[i], &t);
    }
    /* A head that fuses nothing at all would pass every numeric check: the generator
     * must reach the fused kernels. ConvTranspose takes no post-ops on oneDNN 2.6, and an
     * empty output gains nothing from a kernel (the target refuses it, saying so). */
    bool none = h->empty || strstr(h->name, "conv-transpose") != NULL;
    cr_expect(none ? t.fused == 0 : 3 * t.fused >= t.cases,
              "%s: %zu of %zu cases fused, %zu refused", h->name, t.fused, t.cases,
              t.refused);
}

Test(fused_diff, the_member_table_covers_every_post_op_of_the_target)
{
    const gl_target *tg = gl_target_default();
    char names[64][GL_TARGET_NAME_LEN];
    size_t n = tg->eltwise_names(names, 48);
    cr_assert(n <= 48, "%zu eltwise ops: more than this test's room", n);
    size_t nb = tg->binary_names(names + n, 64 - n);
    cr_assert(n + nb <= 64 && n > 10 && nb >= 6, "%zu eltwise and %zu binary ops", n, nb);
    for (size_t i = 0; i < n + nb; i++) {
        bool covered = false;
        for (size_t j = 0; j < GL_ARRAY_LEN(members) && !covered; j++)
            covered = strcmp(members[j].op, names[i]) == 0;
        cr_expect(covered, "the target takes %s as a post-op and no member row tests it",
                  names[i]);
    }
}

#define HEAD_TEST(i, name)                                                                 \
    Test(fused_diff, name, .timeout = 300) { run_head(i); }
HEAD_TEST(0, conv_16)
HEAD_TEST(1, conv_odd_channels)
HEAD_TEST(2, conv_stride_2)
HEAD_TEST(3, conv_1x1)
HEAD_TEST(4, conv_depthwise)
HEAD_TEST(5, conv_transpose)
HEAD_TEST(6, matmul)
HEAD_TEST(7, gemm)
HEAD_TEST(8, fused_matmul)
HEAD_TEST(9, channels_last_conv)
HEAD_TEST(10, conv_batch_0)
HEAD_TEST(11, matmul_no_rows)

/* fusion.measure: every group it decides on carries both clocks, and its verdict agrees
 * with them whichever way the clock fell (no timing is asserted: the machine is shared);
 * --json writes them as measured_ms {fused, members}. */
Test(fused_diff, measure_records_both_clocks_and_decides_by_them)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes_set(
        "measure", 13,
        CONV(16, 16, 8, "") "; r = Relu(h); const w2 f32s[16,16,1,1] = rand; "
        "c2 = Conv(r, w2); in y f32s[1,16,8,8]; a = Add(c2, y); o = Sigmoid(a); out o",
        NULL, "toposort,shape-inference,fusion", "fusion.measure=1", &b);
    cr_assert_not_null(p);
    size_t decided = 0;
    for (size_t i = 0; i < p->log.n; i++) {
        const gl_decision *d = &p->log.items[i];
        if (strcmp(d->pass, "fusion") || !gl_decision_number_text(d, "fused"))
            continue;
        decided++;
        double fused = gl_decision_number_value(d, "measured_fused_ms");
        double apart = gl_decision_number_value(d, "measured_members_ms");
        cr_assert(fused > 0 && apart > 0, "#%lld: measured %g against %g ms",
                  (long long)d->id, fused, apart);
        double noise = gl_decision_number_value(d, "measured_noise");
        double margin = noise > 0.03 ? noise : 0.03;
        if (d->verdict == GL_APPLIED)
            cr_expect(fused <= apart * (1 + margin), "#%lld applied though %g > %g ms",
                      (long long)d->id, fused, apart);
        else
            cr_expect(fused > apart * (1 + margin) && strstr(d->reason, "beyond noise") &&
                          !strcmp(gl_decision_number_text(d, "constraint"), "measured"),
                      "#%lld refused: %s", (long long)d->id, d->reason);
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        gl_json j;
        gl_json_init(&j, f, false);
        gl_decision_json(d, &j);
        gl_json_finish(&j);
        fclose(f);
        char want[160];
        snprintf(want, sizeof(want), "\"measured_ms\":{\"fused\":");
        cr_expect(strstr(text, want) && strstr(text, "\"members\":"), "#%lld: %s",
                  (long long)d->id, text);
        free(text);
    }
    cr_expect_eq(decided, 2u, "two groups decided on (Conv+Relu, Conv+Add+Sigmoid)");
    gl_pipeline_free(p);
}

/* --layout auto counts the convolutions inside fused groups, graphlab's NhwcConv among
 * them: a channels-last model whose every convolution is fused keeps nhwc activations
 * (it kept them plain, as if it had no convolution); since issue 22 the choice is by
 * estimated cost, and the NhwcConv is costed. */
Test(fused_diff, auto_layout_counts_the_convolutions_inside_groups)
{
    const head *h = &heads[9];
    char text[1400];
    snprintf(text, sizeof(text), "%s; o = Relu(h); y_out = Transpose(o) perm=[0,2,3,1]; "
             "out y_out", h->text);
    gn_graph b;
    gl_pipeline *p = gn_run_passes_set("auto layout", 13, text, NULL, "all",
                                       "layout.ignore-cost=1", &b);
    cr_assert_not_null(p);
    const gl_model *last = p->steps[p->n_steps - 1].model;
    cr_assert_eq(gn_count_domain(last->graph, "graphlab.fused"), 1u, "the NhwcConv is fused");
    gl_tensor **in = gn_feeds(&b, last->graph, "auto layout");
    gl_tensor *got = NULL;
    gl_exec *dn = tu_exec_run(last, "dnnl", NULL, in, last->graph->n_inputs, &got, 1,
                              "auto layout");
    char summary[256];
    gl_exec_summary(dn, summary, sizeof(summary));
    cr_expect(strstr(summary, "activations: nhwc (estimated") &&
                  strstr(summary, "1 of 1 convolutions costed"), "%s", summary);
    gl_tensor_free(got);
    gl_exec_free(dn);
    gn_free_tensors(in, last->graph->n_inputs);
    gl_pipeline_free(p);
}

/* Two equal layers Conv 16->16 3x3 + Relu: x to r2. */
#define TWO_CONV_RELU                                                                      \
    CONV(16, 16, 8, "") "; r = Relu(h); const w2 f32s[16,16,3,3] = rand; "                 \
                        "const b2 f32s[16] = rand; h2 = Conv(r, w2, b2) pads=[1,1,1,1]; "   \
                        "r2 = Relu(h2); "

/* Groups of the same ops, attributes and shapes get one probe: the second of two equal
 * layers names the first (asked_for); a layer of other shapes is asked for itself. */
Test(fused_diff, equal_groups_share_one_probe)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes_set(
        "memo", 13,
        TWO_CONV_RELU "const w3 f32s[8,16,1,1] = rand; h3 = Conv(r2, w3); r3 = Relu(h3); out r3",
        NULL, "toposort,shape-inference,fusion", NULL, &b);
    cr_assert_not_null(p);
    const char *asked[3] = {NULL, NULL, NULL};
    size_t n = 0;
    for (size_t i = 0; i < p->log.n && n < 3; i++) {
        const gl_decision *d = &p->log.items[i];
        if (!strcmp(d->pass, "fusion") && d->verdict == GL_APPLIED) {
            asked[n++] = gl_decision_number_text(d, "asked_for");
            cr_expect(gl_decision_number_text(d, "implementation"), "#%lld: %s",
                      (long long)d->id, d->reason);
        }
    }
    cr_assert_eq(n, 3u);
    cr_expect(!asked[0], "the first layer is asked for itself");
    cr_expect(asked[1] && !strcmp(asked[1], "n_h"), "the second names the first's head: %s",
              asked[1] ? asked[1] : "(none)");
    cr_expect(!asked[2], "a 1x1 layer of 8 channels is asked for itself");
    gl_pipeline_free(p);
}

/* Node names may repeat in a file: the trial copies are found by id, so a group whose
 * members share a name is probed like any other (it was undefined behaviour). */
static void same_names(gl_model *m)
{
    gl_node *n;
    gl_foreach_node(m->graph, i, n)
        gl_rename_node(m->graph, n, "dup");
}

Test(fused_diff, members_that_share_a_name_are_probed)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes_set("dup", 13, CONV(16, 16, 8, "") "; r = Relu(h); out r",
                                       same_names, "toposort,shape-inference,fusion", NULL,
                                       &b);
    cr_assert_not_null(p);
    const gl_decision *d = NULL;
    for (size_t i = 0; i < p->log.n && !d; i++)
        if (!strcmp(p->log.items[i].pass, "fusion") && p->log.items[i].verdict == GL_APPLIED)
            d = &p->log.items[i];
    cr_assert_not_null(d, "the Conv and the Relu are fused");
    cr_expect(gl_decision_number_text(d, "implementation") &&
                  !gl_decision_number_text(d, "probe"),
              "probed: %s", gl_decision_number_text(d, "probe"));
    gl_pipeline_free(p);
}

/* A run whose inputs hold a NaN goes to the reference kernels where oneDNN would drop it
 * (a fused Conv + Relu runs its members, a MaxPool its reference kernel), and writes its
 * output in the layout the primitive writes: what reads it (the next group, the Abs)
 * builds nothing again, from finite inputs to NaN and back (a plain output made it build
 * twice). */
Test(fused_diff, a_run_with_nan_keeps_the_plan_built)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes_set(
        "nan keeps the plan", 13,
        TWO_CONV_RELU "m = MaxPool(r2) kernel_shape=[2,2] strides=[2,2]; a = Abs(m); out a",
        NULL, "toposort,shape-inference,fusion", NULL, &b);
    cr_assert_not_null(p);
    const gl_model *in_model = p->steps[0].model, *last = p->steps[p->n_steps - 1].model;
    cr_assert_eq(gn_count_domain(last->graph, "graphlab.fused"), 2u, "two Conv + Relu groups");
    size_t n_in = in_model->graph->n_inputs;
    gl_tensor **in = gn_feeds(&b, in_model->graph, "nan keeps the plan");
    gl_tensor **special = calloc(n_in + 1, sizeof(*special));
    for (size_t i = 0; i < n_in; i++)
        special[i] = tu_with_specials(in[i]);
    char err[256] = "";
    gl_tensor **want = gn_run(in_model, in, err, sizeof(err));
    gl_tensor **want_special = gn_run(in_model, special, err, sizeof(err));
    cr_assert(want && want_special, "reference: %s", err);
    for (const char *l = "nb"; *l; l++) {
        char where[64];
        snprintf(where, sizeof(where), "conv, relu, conv, relu, maxpool, abs (%s)",
                 tu_layout_name(*l));
        gl_tensor *got = NULL;
        gl_exec *dn = tu_exec_run(last, "dnnl", tu_layout_name(*l), in, n_in, &got, 1, where);
        expect_output(got, want[0], where, "", "");
        gl_tensor_free(got);
        rerun_against(dn, special, n_in, want_special[0], where, " with NaN", "");
        rerun_against(dn, in, n_in, want[0], where, " (again finite)", "");
        gl_exec_free(dn);
    }
    gn_free_tensors(want, 1);
    gn_free_tensors(want_special, 1);
    gn_free_tensors(in, n_in);
    gn_free_tensors(special, n_in);
    gl_pipeline_free(p);
}

Test(fused_diff, every_head_has_its_test)
{
    cr_expect_eq(GL_ARRAY_LEN(heads), 12u, "a head row without its HEAD_TEST line");
}

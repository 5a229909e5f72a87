/* test_transpose.c — ONNX Runtime's transpose-optimizer test cases, ported as data.
 *
 * ORT's onnxruntime/test/optimizer/transpose_optimizer_test.cc builds small graphs
 * (Transpose -> op -> Transpose), runs its optimizer and checks how many Transposes are
 * left (its EstimateTransposeCost) while comparing outputs with the unoptimized model.
 * Here every case is one row: the graph in graphnote.h's one-line notation, the opset, and
 * the expectation. Each row runs toposort,shape-inference,transpose-push (ORT's
 * Graph::Resolve infers shapes before its optimizer runs) and then checks
 *   1. the Transpose nodes left: count, perms (as a multiset) and ORT's cost estimate;
 *   2. gl_graph_verify and topological order;
 *   3. that the graph computes the same: the model right before the pass and the result
 *      run on the reference backend with the same seeded random inputs, compared exactly
 *      for data movement and with rtol 1e-6 where arithmetic is reordered; graph output
 *      names and types are kept;
 *   4. KEEP rows (ORT's "NoOpt" cases): the step changed nothing (fingerprint) and
 *      recorded a refusal with a reason; PUSH rows recorded an applied decision; ANY
 *      rows only what ORT itself checks there.
 *
 * GL_TPTEST_SHOW=NAME prints that case's decisions and the graph after the pass.
 */
#include "graphnote.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/* Criterion's children do not run LeakSanitizer at exit: ask it directly. */
#define EXPECT_NO_LEAKS() cr_expect_eq(__lsan_do_recoverable_leak_check(), 0, "leaks: see stderr")
#else
#define EXPECT_NO_LEAKS() ((void)0)
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- cases ------------------------------------------------------------------------- */

typedef enum outcome {
    PUSH, /* the pass applies rewrites; the Transposes left are checked */
    KEEP, /* ORT must not optimize: nothing changes, a refusal is recorded */
    ANY,  /* ORT checks only that the outputs stay the same */
} outcome;

typedef struct tcase {
    const char *name;
    int opset;
    const char *graph;
    outcome want;
    int transposes;     /* Transpose nodes left (PUSH) */
    const char *perms;  /* their perms in any order, "0,2,1 1,0"; alternatives split by
                           '|'; NULL: not checked */
    int cost;           /* ORT's EstimateTransposeCost after the pass; -1: not checked */
    double rtol;        /* 0: outputs must be bit-identical */
    const char *ops;    /* other op counts after the pass, "Reshape=0 Mul=1" */
    const char *passes; /* NULL: toposort,shape-inference,transpose-push */
    bool no_exec;       /* invalid at run time (ORT did not run it either) */
    void (*extra)(gl_model *m); /* builds what the notation cannot say (subgraphs) */
    const char *refusal; /* a refused decision's reason must contain this; NULL: any */
} tcase;

/* All Transposes gone (ORT: EXPECT_EQ(transpose_cost, 0)). */
#define GONE .want = PUSH, .transposes = 0, .perms = "", .cost = 0
/* ORT's "NoOpt" cases. */
#define KEPT .want = KEEP, .transposes = -1, .cost = -1
#define EITHER .want = ANY, .transposes = -1, .cost = -1
#define REL .rtol = 1e-6

#define DEFAULT_PASSES "toposort,shape-inference,transpose-push"

static bool build_case(const tcase *c, gn_graph *b)
{
    bool ok = gn_build(c->name, c->opset, c->graph, b);
    if (ok && c->extra)
        c->extra(b->m);
    return ok;
}

/* ---- what the graph looks like after the pass ---------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Space-separated perms, sorted, e.g. "0,2,1 0,3,1,2" ("-" for a Transpose without perm). */
static void perms_of(const gl_graph *g, char *out, size_t len)
{
    char buf[64][40];
    const char *items[64];
    size_t k = 0;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (!gl_node_is(n, "Transpose") || k == 64)
            continue;
        const gl_attr *a = gl_node_attr(n, "perm");
        size_t w = 0;
        buf[k][0] = '\0';
        if (!a || a->type != GL_ATTR_INTS)
            snprintf(buf[k], sizeof(buf[k]), "-");
        for (size_t d = 0; a && a->type == GL_ATTR_INTS && d < a->n && w < sizeof(buf[k]); d++)
            w += (size_t)snprintf(buf[k] + w, sizeof(buf[k]) - w, "%s%lld", d ? "," : "",
                                  (long long)a->ints[d]);
        items[k] = buf[k];
        k++;
    }
    qsort(items, k, sizeof(items[0]), cmp_str);
    size_t w = 0;
    out[0] = '\0';
    for (size_t i = 0; i < k && w < len; i++)
        w += (size_t)snprintf(out + w, len - w, "%s%s", i ? " " : "", items[i]);
}

/* The expected perms in the same form: each alternative's perms sorted. */
static bool perms_match(const char *want, const char *got)
{
    char *copy = strdup(want);
    char *alts[8];
    int n_alt = gn_split(copy, '|', alts, 8);
    bool ok = false;
    for (int a = 0; a < n_alt && !ok; a++) {
        char *items[64];
        int n = *alts[a] ? gn_split(alts[a], ' ', items, 64) : 0;
        qsort(items, (size_t)n, sizeof(items[0]), cmp_str);
        char norm[512];
        size_t w = 0;
        norm[0] = '\0';
        for (int i = 0; i < n && w < sizeof(norm); i++)
            w += (size_t)snprintf(norm + w, sizeof(norm) - w, "%s%s", i ? " " : "", items[i]);
        ok = !strcmp(norm, got);
    }
    free(copy);
    return ok;
}

/* ORT's EstimateTransposeCost: per Transpose, the dims of its output that are not known
 * to be 1 (5 when the shape is unknown), subgraphs included. The output shape is the
 * permuted input shape when the pass left the output untyped (ORT re-infers it). */
static int ort_cost(const gl_graph *g)
{
    int cost = 0;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        for (size_t a = 0; a < n->n_attrs; a++) {
            const gl_attr *at = &n->attrs[a];
            if (at->type == GL_ATTR_GRAPH)
                cost += ort_cost(at->g);
            for (size_t k = 0; at->type == GL_ATTR_GRAPHS && k < at->n; k++)
                cost += ort_cost(at->graphs[k]);
        }
        if (!gl_node_is(n, "Transpose"))
            continue;
        const gl_shape *out = n->outputs[0] ? &n->outputs[0]->type.shape : NULL;
        const gl_shape *in = n->inputs[0] ? &n->inputs[0]->type.shape : NULL;
        const gl_attr *perm = gl_node_attr(n, "perm");
        if (out && out->rank >= 0) {
            for (int d = 0; d < out->rank; d++)
                cost += out->dims[d].value != 1;
        } else if (in && in->rank >= 0 && perm && perm->n == (size_t)in->rank) {
            for (int d = 0; d < in->rank; d++)
                cost += in->dims[perm->ints[d]].value != 1;
        } else {
            cost += 5;
        }
    }
    return cost;
}

/* ---- one case ------------------------------------------------------------------------------ */

static size_t count_verdict(const gl_pipeline *p, const gl_snapshot *s, gl_verdict v)
{
    size_t k = 0;
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++)
        k += p->log.items[i].verdict == v;
    return k;
}

static void check_decisions(const tcase *c, const gl_pipeline *p, const gl_snapshot *step,
                            const gl_snapshot *prev)
{
    for (size_t i = step->first_decision; i < step->first_decision + step->n_decisions; i++) {
        const gl_decision *d = &p->log.items[i];
        cr_expect(d->reason && *d->reason, "%s: decision #%lld (%s) has no reason", c->name,
                  (long long)d->id, d->rule ? d->rule : "?");
    }
    if (c->want == KEEP) {
        cr_expect(step->fingerprint == prev->fingerprint,
                  "%s: ORT must not optimize this graph, but transpose-push changed it",
                  c->name);
        cr_expect(count_verdict(p, step, GL_REFUSED) > 0,
                  "%s: no refused decision recorded for a graph ORT does not optimize",
                  c->name);
    } else if (c->want == PUSH) {
        cr_expect(count_verdict(p, step, GL_APPLIED) > 0, "%s: no applied decision recorded",
                  c->name);
    }
    if (c->refusal) {
        bool said = false;
        for (size_t i = step->first_decision; i < step->first_decision + step->n_decisions;
             i++) {
            const gl_decision *d = &p->log.items[i];
            said |= d->verdict == GL_REFUSED && d->reason && strstr(d->reason, c->refusal);
        }
        cr_expect(said, "%s: no refusal says \"%s\"", c->name, c->refusal);
    }
}

static void check_transposes(const tcase *c, const gl_graph *g)
{
    if (c->want == KEEP)
        return;
    char perms[1024];
    perms_of(g, perms, sizeof(perms));
    size_t n = gn_count_op(g, "Transpose");
    if (c->transposes >= 0)
        cr_expect_eq(n, (size_t)c->transposes,
                     "%s: %zu Transpose nodes left (perms %s), expected %d", c->name, n,
                     perms, c->transposes);
    if (c->perms)
        cr_expect(perms_match(c->perms, perms), "%s: Transpose perms left '%s', expected '%s'",
                  c->name, perms, c->perms);
    if (c->cost >= 0) {
        int cost = ort_cost(g);
        cr_expect_eq(cost, c->cost, "%s: ORT transpose cost %d after the pass, expected %d",
                     c->name, cost, c->cost);
    }
}

static const gl_snapshot *find_step(const gl_pipeline *p, const char *pass, size_t *k)
{
    for (size_t i = 1; i < p->n_steps; i++)
        if (p->steps[i].pass && !strcmp(p->steps[i].pass->name, pass)) {
            *k = i;
            return &p->steps[i];
        }
    return NULL;
}

/* For GL_TPTEST_SHOW: the decisions of the step and the nodes after it. */
static void show_case(const tcase *c, const gl_pipeline *p, const gl_snapshot *step,
                      const gl_graph *g)
{
    const char *want = getenv("GL_TPTEST_SHOW");
    if (!want || strcmp(want, c->name))
        return;
    fprintf(stderr, "---- %s: decisions\n", c->name);
    for (size_t i = step->first_decision; i < step->first_decision + step->n_decisions; i++)
        gl_decision_print(&p->log.items[i], stderr);
    fprintf(stderr, "---- %s: graph after\n", c->name);
    gn_print_graph(g, stderr);
}

static void run_case(const tcase *c)
{
    gn_graph b;
    if (!build_case(c, &b)) {
        cr_expect(false, "%s: cannot build the case: %s", c->name, b.err);
        gl_model_free(b.m);
        return;
    }
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    if (gl_pass_list_parse(c->passes ? c->passes : DEFAULT_PASSES, &plan, &n_plan) != GL_OK) {
        cr_expect(false, "%s: %s", c->name, gl_error_message());
        gl_model_free(b.m);
        return;
    }
    gl_pipeline *p = NULL;
    gl_status st = gl_pipeline_run(b.m, plan, n_plan, NULL, GL_PIPELINE_KEEP_SNAPSHOTS, &p);
    free(plan);
    size_t k = 0;
    const gl_snapshot *step = st == GL_OK ? find_step(p, "transpose-push", &k) : NULL;
    cr_expect(st == GL_OK, "%s: the pipeline failed: %s", c->name,
              p && p->failure ? p->failure : gl_error_message());
    if (step) {
        const gl_model *before = p->steps[k - 1].model, *after = gl_pipeline_result(p);
        cr_expect_eq(gl_graph_verify(after->graph, true), GL_OK, "%s: %s", c->name,
                     gl_error_message());
        cr_expect(gl_graph_is_sorted(after->graph), "%s: the graph is not sorted after the pass",
                  c->name);
        show_case(c, p, step, after->graph);
        check_decisions(c, p, step, &p->steps[k - 1]);
        check_transposes(c, after->graph);
        gn_expect_op_counts(c->name, c->ops, after->graph);
        gn_expect_same_outputs(c->name, &b, before, after, c->rtol, 0, c->no_exec);
        tu_expect_journal_exact(c->name, before, "transpose-push");
    }
    gl_pipeline_free(p);
}

static void run_table(const tcase *cases, size_t n)
{
    cr_assert(gl_pass_find("transpose-push"), "the pass table has no transpose-push yet");
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i]);
    EXPECT_NO_LEAKS();
}

#define RUN(table) run_table(table, GL_ARRAY_LEN(table))

/* ==== the cases ================================================================================ */

/* Transpose -> op -> Transpose on a rank-4 input: the ORT tests' usual sandwich, with
 * the first Transpose NHWC->NCHW (0,3,1,2) and the last one back (0,2,3,1). */
#define NCHW(decl, op) decl "; t = Transpose(x) perm=[0,3,1,2]; r = " op "; y = Transpose(r) perm=[0,2,3,1]; out y"
/* The same ending in a Transpose with another perm. */
#define NCHW_TO(decl, op, post) decl "; t = Transpose(x) perm=[0,3,1,2]; r = " op "; y = Transpose(r) perm=" post "; out y"
/* The op's output is the graph output. */
#define NCHW_OUT(decl, op) decl "; t = Transpose(x) perm=[0,3,1,2]; r = " op "; out r"

/* ---- Split (TestSplit*) -----------------------------------------------------------------
 * x[4,6,10] -> Transpose(1,2,0) -> Split -> two Transpose(2,0,1): everything cancels. */
#define SPLIT3(consts, call)                                                                \
    "in x f32[4,6,10]; " consts "t = Transpose(x) perm=[1,2,0]; s0, s1 = " call            \
    "; y0 = Transpose(s0) perm=[2,0,1]; y1 = Transpose(s1) perm=[2,0,1]; out y0, y1"

static const tcase split_cases[] = {
    {"split_axis1_op15", 15, SPLIT3("", "Split(t) axis=1"), GONE},
    {"split_axis1_op18", 18, SPLIT3("", "Split(t) axis=1 num_outputs=2"), GONE},
    {"split_default_axis_op15", 15, SPLIT3("", "Split(t)"), GONE},
    {"split_default_axis_op18", 18, SPLIT3("", "Split(t) num_outputs=2"), GONE},
    /* ORT's TestSplitNegativeAxis passes axis=1; a negative axis is what it means. */
    {"split_negative_axis_op15", 15, SPLIT3("", "Split(t) axis=-2"), GONE},
    {"split_negative_axis_op18", 18, SPLIT3("", "Split(t) axis=-2 num_outputs=2"), GONE},
    /* Not in ORT's file: uneven sizes, as the attribute (opset 11) and the input (13). */
    {"split_sizes_attribute_op11", 11, SPLIT3("", "Split(t) axis=1 split=[4,6]"), GONE},
    {"split_sizes_input_op13", 13, SPLIT3("const sp i64[2] = 4,6; ", "Split(t, sp) axis=1"),
     GONE},
};

Test(transpose_ort, split) { RUN(split_cases); }

/* ---- Concat (TestConcat) --------------------------------------------------------------- */

#define CONCAT(axis)                                                                        \
    "in x0 f32[4,?6,2,?10]; in x1 f32[4,?7,2,?10]; a = Transpose(x0) perm=[0,3,1,2]; "    \
    "b = Transpose(x1) perm=[0,3,1,2]; c = Concat(a, b) axis=" axis                        \
    "; y = Transpose(c) perm=[0,2,3,1]; out y"

static const tcase concat_cases[] = {
    {"concat_op15", 15, CONCAT("2"), GONE},
    {"concat_op18", 18, CONCAT("2"), GONE},
    {"concat_negative_axis_op13", 13, CONCAT("-2"), GONE},
};

Test(transpose_ort, concat) { RUN(concat_cases); }

/* ---- Pad (TestPad*) --------------------------------------------------------------------- */

#define PAD_X "in x f32[4,?6,2,?10]"
#define PADS "const pads i64[8] = 1,-2,3,4,5,6,7,8; const v f32[] = 2.3"

static const tcase pad_cases[] = {
    {"pad_op11", 11, NCHW(PAD_X "; " PADS, "Pad(t, pads, v) mode=\"constant\""), GONE},
    {"pad_op15", 15, NCHW(PAD_X "; " PADS, "Pad(t, pads, v) mode=\"constant\""), GONE},
    {"pad_op18", 18, NCHW(PAD_X "; " PADS, "Pad(t, pads, v) mode=\"constant\""), GONE},
    {"pad_attributes_op10", 10,
     NCHW(PAD_X, "Pad(t) mode=\"constant\" value=2.3 pads=[1,-2,3,4,5,6,7,8]"), GONE},
    /* pads computed at run time: the pass gathers them in the new order. */
    {"pad_nonconst_pads_op11", 11,
     NCHW(PAD_X "; in pi i64[8] = 1,0,0,1,0,0,-1,1; const pc i64[8] = 1,-2,3,4,5,6,7,8; "
                "const v f32[] = 2.3; pads = Add(pi, pc)",
          "Pad(t, pads, v) mode=\"constant\""),
     GONE},
    {"pad_nonconst_pads_op18", 18,
     NCHW(PAD_X "; in pi i64[8] = 1,0,0,1,0,0,-1,1; const pc i64[8] = 1,-2,3,4,5,6,7,8; "
                "const v f32[] = 2.3; pads = Add(pi, pc)",
          "Pad(t, pads, v) mode=\"constant\""),
     GONE},
};

Test(transpose_ort, pad) { RUN(pad_cases); }

/* ---- Resize (TestResize*): ORT pushes it only once the CPU EP owns it (level 2);
 * graphlab does not push it by default (DESIGN.md), so these are refusals. ------------ */

static const tcase resize_cases[] = {
    {"resize_scales_op13", 13,
     NCHW(PAD_X "; const sc f32[4] = 0.3,2.5,1.0,0.7", "Resize(t, , sc)"), KEPT},
    {"resize_roi_scales_op11", 11,
     NCHW(PAD_X "; const roi f32[8] = 0,0,0,0,0,0,0,0; const sc f32[4] = 0.3,2.5,1.0,0.7",
          "Resize(t, roi, sc)"),
     KEPT},
    {"resize_sizes_op15", 15,
     NCHW(PAD_X "; const sz i64[4] = 4,7,12,3", "Resize(t, , , sz)"), KEPT},
};

Test(transpose_ort, resize_not_pushed) { RUN(resize_cases); }

/* ---- Shape (TestShape*): Shape(Transpose(x)) reads x's shape in perm order. ------------- */

#define SHAPE(attrs) "in x f32[?4,6,?10]; t = Transpose(x) perm=[1,2,0]; s = Shape(t) " attrs "; out s"

static const tcase shape_cases[] = {
    {"shape_op7", 7, SHAPE(""), GONE},
    {"shape_op15", 15, SHAPE(""), GONE},
    {"shape_op18", 18, SHAPE(""), GONE},
    {"shape_slice_no_start_op15", 15, SHAPE("end=5"), GONE},
    {"shape_slice_negative_end_op15", 15, SHAPE("end=-1"), GONE},
    {"shape_slice_negative_start_no_end_op15", 15, SHAPE("start=-30"), GONE},
    {"shape_slice_start_and_end_op15", 15, SHAPE("start=1 end=2"), GONE},
    {"shape_slice_empty_result_op15", 15, SHAPE("start=2 end=1"), GONE},
};

Test(transpose_ort, shape) { RUN(shape_cases); }

/* ---- Reduce* (TestReduce*, TestOmitIdentityTranspose) -------------------------------------
 * x[?2,4,?6,5] -> Transpose(0,3,1,2) = [2,5,4,6] -> reduce over axes 0,-2. With keepdims
 * the output goes back by (0,2,3,1); without, what is left is [5,6] and goes back by
 * (1,0). Axes are an attribute before opset 18 (13 for ReduceSum), an input after. */
#define RX "in x f32[?2,4,?6,5]"
#define AXES "const ax i64[2] = 0,-2"
#define NO_AXES "const ax i64[0] ="
#define RED_ATTR(op, kd) NCHW(RX, op "(t) axes=[0,-2] keepdims=" kd)
#define RED_INPUT(op, kd) NCHW(RX "; " AXES, op "(t, ax) keepdims=" kd)
#define RED_ATTR_2D(op) NCHW_TO(RX, op "(t) axes=[0,-2] keepdims=0", "[1,0]")
#define RED_INPUT_2D(op) NCHW_TO(RX "; " AXES, op "(t, ax) keepdims=0", "[1,0]")

static const tcase reduce_cases[] = {
    {"reducesum_keepdims_op7", 7, RED_ATTR("ReduceSum", "1"), GONE, REL},
    {"reducesum_keepdims_op18", 18, RED_INPUT("ReduceSum", "1"), GONE, REL},
    {"reducesum_keepdims_op15", 15, RED_INPUT("ReduceSum", "1"), GONE, REL},
    {"reducesum_no_keepdims_op7", 7, RED_ATTR_2D("ReduceSum"), GONE, REL},
    {"reducesum_no_keepdims_op15", 15, RED_INPUT_2D("ReduceSum"), GONE, REL},
    {"reducesum_no_keepdims_op18", 18, RED_INPUT_2D("ReduceSum"), GONE, REL},
    /* Reducing everything: with keepdims the output is [1,1,1,1], so no Transpose is
     * needed after it; without, a scalar. */
    {"reducesum_all_keepdims_op7", 7, NCHW_OUT(RX, "ReduceSum(t) keepdims=1"), GONE, REL},
    {"reducesum_all_no_keepdims_op7", 7, NCHW_OUT(RX, "ReduceSum(t) keepdims=0"), GONE, REL},
    {"reducesum_empty_axes_keepdims_op15", 15,
     NCHW_OUT(RX "; " NO_AXES, "ReduceSum(t, ax) keepdims=1"), GONE, REL},
    {"reducesum_empty_axes_noop_keepdims_op15", 15,
     NCHW(RX "; " NO_AXES, "ReduceSum(t, ax) keepdims=1 noop_with_empty_axes=1"), GONE, REL},
    {"reducesum_empty_axes_no_noop_keepdims_op15", 15,
     NCHW_OUT(RX "; " NO_AXES, "ReduceSum(t, ax) keepdims=1 noop_with_empty_axes=0"), GONE,
     REL},
    {"reducesum_no_axes_input_keepdims_op15", 15,
     NCHW_OUT(RX, "ReduceSum(t) keepdims=1 noop_with_empty_axes=0"), GONE, REL},
    {"reducesum_empty_axes_no_keepdims_op15", 15,
     NCHW_OUT(RX "; " NO_AXES, "ReduceSum(t, ax) keepdims=0"), GONE, REL},
    {"reducesum_empty_axes_noop_no_keepdims_op15", 15,
     NCHW(RX "; " NO_AXES, "ReduceSum(t, ax) keepdims=0 noop_with_empty_axes=1"), GONE, REL},
    {"reducesum_empty_axes_no_noop_no_keepdims_op15", 15,
     NCHW_OUT(RX "; " NO_AXES, "ReduceSum(t, ax) keepdims=0 noop_with_empty_axes=0"), GONE,
     REL},
    {"reducesum_no_axes_input_no_keepdims_op15", 15,
     NCHW_OUT(RX, "ReduceSum(t) keepdims=0 noop_with_empty_axes=0"), GONE, REL},
    /* Axes computed at run time: nothing to remap them with (ORT: NoOpt). */
    {"reducesum_nonconst_axes_keepdims_op13", 13,
     NCHW_OUT(RX "; in ai i64[] = -1; const ac i64[2] = 0,-1; ax = Add(ai, ac)",
              "ReduceSum(t, ax) keepdims=1"),
     KEPT, REL},
    {"reducesum_nonconst_axes_no_keepdims_op13", 13,
     NCHW_OUT(RX "; in ai i64[] = -1; const ac i64[2] = 0,-1; ax = Add(ai, ac)",
              "ReduceSum(t, ax) keepdims=0"),
     KEPT, REL},

    {"reducemax_keepdims_op15", 15, RED_ATTR("ReduceMax", "1"), GONE},
    {"reducemax_keepdims_op18", 18, RED_INPUT("ReduceMax", "1"), GONE},
    {"reducemax_default_axes_keepdims_op15", 15, NCHW_OUT(RX, "ReduceMax(t) keepdims=1"), GONE},
    {"reducemax_default_axes_keepdims_op18", 18, NCHW_OUT(RX, "ReduceMax(t) keepdims=1"), GONE},
    {"reducemax_no_keepdims_op15", 15, RED_ATTR_2D("ReduceMax"), GONE},
    {"reducemax_no_keepdims_op18", 18, RED_INPUT_2D("ReduceMax"), GONE},
    {"reducemax_default_axes_no_keepdims_op15", 15, NCHW_OUT(RX, "ReduceMax(t) keepdims=0"),
     GONE},
    {"reducemax_default_axes_no_keepdims_op18", 18, NCHW_OUT(RX, "ReduceMax(t) keepdims=0"),
     GONE},
    {"reducemax_default_keepdims_op15", 15, NCHW(RX, "ReduceMax(t) axes=[0,-2]"), GONE},
    {"reducemax_default_keepdims_op18", 18, NCHW(RX "; " AXES, "ReduceMax(t, ax)"), GONE},
    {"reducemax_all_defaults_op15", 15, NCHW_OUT(RX, "ReduceMax(t)"), GONE},

    {"reducelogsum_op15", 15, RED_ATTR_2D("ReduceLogSum"), GONE, REL},
    {"reducelogsum_op18", 18, RED_INPUT_2D("ReduceLogSum"), GONE, REL},
    {"reducelogsumexp_op15", 15, RED_ATTR_2D("ReduceLogSumExp"), GONE, REL},
    {"reducelogsumexp_op18", 18, RED_INPUT_2D("ReduceLogSumExp"), GONE, REL},
    {"reducemax_2d_op15", 15, RED_ATTR_2D("ReduceMax"), GONE},
    {"reducemean_op15", 15, RED_ATTR_2D("ReduceMean"), GONE, REL},
    {"reducemean_op18", 18, RED_INPUT_2D("ReduceMean"), GONE, REL},
    {"reducemin_op15", 15, RED_ATTR_2D("ReduceMin"), GONE},
    {"reducemin_op18", 18, RED_INPUT_2D("ReduceMin"), GONE},
    {"reduceprod_op15", 15, RED_ATTR_2D("ReduceProd"), GONE, REL},
    {"reduceprod_op18", 18, RED_INPUT_2D("ReduceProd"), GONE, REL},
    {"reducesumsquare_op15", 15, RED_ATTR_2D("ReduceSumSquare"), GONE, REL},
    {"reducesumsquare_op18", 18, RED_INPUT_2D("ReduceSumSquare"), GONE, REL},
    {"reducel1_op15", 15, RED_ATTR_2D("ReduceL1"), GONE, REL},
    {"reducel1_op18", 18, RED_INPUT_2D("ReduceL1"), GONE, REL},
    {"reducel2_op15", 15, RED_ATTR_2D("ReduceL2"), GONE, REL},
    {"reducel2_op18", 18, RED_INPUT_2D("ReduceL2"), GONE, REL},

    /* TestOmitIdentityTranspose: reducing axis 1 of the NCHW view leaves the NHW order of
     * x, so no Transpose is needed on the output. */
    {"omit_identity_transpose_op15", 15, NCHW_OUT(RX, "ReduceMax(t) axes=[1] keepdims=0"),
     GONE},
    {"omit_identity_transpose_op18", 18,
     NCHW_OUT(RX "; const ax i64[1] = 1", "ReduceMax(t, ax) keepdims=0"), GONE},
};

Test(transpose_ort, reduce) { RUN(reduce_cases); }

/* ---- ArgMin / ArgMax (TestArgMin*, TestArgMax) ------------------------------------------ */

#define AX "in x f32[2,4,?6,3]"

static const tcase arg_cases[] = {
    {"argmin_no_axis_keepdims_op15", 15, NCHW(AX, "ArgMin(t) keepdims=1"), GONE},
    {"argmin_no_axis_no_keepdims_op15", 15, NCHW_TO(AX, "ArgMin(t) keepdims=0", "[1,2,0]"),
     GONE},
    {"argmin_no_axis_op15", 15, NCHW(AX, "ArgMin(t)"), GONE},
    {"argmin_keepdims_op15", 15, NCHW(AX, "ArgMin(t) axis=-2 keepdims=1"), GONE},
    {"argmin_no_keepdims_op15", 15, NCHW_TO(AX, "ArgMin(t) axis=-2 keepdims=0", "[0,2,1]"),
     GONE},
    {"argmin_op15", 15, NCHW(AX, "ArgMin(t) axis=-2"), GONE},
    {"argmax_op15", 15, NCHW(AX, "ArgMax(t) axis=-2 keepdims=1"), GONE},
    /* Dropping axis 1 of the NCHW view leaves x's order: no Transpose on the output. */
    {"argmax_no_keepdims_identity_op18", 18, NCHW_OUT(AX, "ArgMax(t) axis=1 keepdims=0"),
     GONE},
};

Test(transpose_ort, argmin_argmax) { RUN(arg_cases); }

/* ---- Softmax, LogSoftmax, Hardmax (TestSoftmax*, TestHardmaxAndLogSoftmax*) -------------
 * From opset 13 the op normalizes along one axis, which the push remaps. Before 13 it
 * flattens dims [axis, rank) into one: a push is only right when the perm keeps dims
 * [0, axis) among themselves (ORT's rule), otherwise it must be refused. */
#define S4 "in x f32?[2,3,4,5]"
#define SOFT5(perm, op, post)                                                               \
    "in x f32?[2,3,4,5,6]; t = Transpose(x) perm=" perm "; r = " op                       \
    "; y = Transpose(r) perm=" post "; out y"

static const tcase softmax_cases[] = {
    {"softmax_axis0_op12", 12, NCHW(S4, "Softmax(t) axis=0"), GONE, REL},
    {"softmax_axis0_op13", 13, NCHW(S4, "Softmax(t) axis=0"), GONE, REL},
    {"softmax_no_axis_op12", 12, NCHW(S4, "Softmax(t)"), GONE, REL},
    {"softmax_no_axis_op13", 13, NCHW(S4, "Softmax(t)"), GONE, REL},
    {"softmax_no_axis_op15", 15, NCHW(S4, "Softmax(t)"), GONE, REL},
    {"softmax_5d_axis_neg3_op12", 12,
     SOFT5("[1,0,3,2,4]", "Softmax(t) axis=-3", "[1,0,3,2,4]"), GONE, REL},
    {"softmax_5d_axis_neg3_op13", 13,
     SOFT5("[1,0,3,2,4]", "Softmax(t) axis=-3", "[1,0,3,2,4]"), GONE, REL},
    {"softmax_axis2_op12", 12, NCHW(S4, "Softmax(t) axis=2"), KEPT, REL},
    {"softmax_axis2_op13", 13, NCHW(S4, "Softmax(t) axis=2"), GONE, REL},
    {"softmax_5d_axis_neg2_op12", 12,
     SOFT5("[1,0,3,2,4]", "Softmax(t) axis=-2", "[1,0,3,2,4]"), KEPT, REL},
    {"softmax_5d_axis_neg2_op13", 13,
     SOFT5("[1,0,3,2,4]", "Softmax(t) axis=-2", "[1,0,3,2,4]"), GONE, REL},
    {"softmax_5d_nchw_axis_neg3_op12", 12,
     SOFT5("[0,3,1,2,4]", "Softmax(t) axis=-3", "[0,2,3,1,4]"), KEPT, REL},
    {"softmax_5d_nchw_axis_neg3_op15", 15,
     SOFT5("[0,3,1,2,4]", "Softmax(t) axis=-3", "[0,2,3,1,4]"), GONE, REL},
    {"hardmax_no_axis_op15", 15, NCHW(S4, "Hardmax(t)"), GONE},
    {"hardmax_no_axis_op12", 12, NCHW(S4, "Hardmax(t)"), GONE},
    {"hardmax_axis2_op12", 12, NCHW(S4, "Hardmax(t) axis=2"), KEPT},
    {"logsoftmax_no_axis_op15", 15, NCHW(S4, "LogSoftmax(t)"), GONE, REL},
    {"logsoftmax_axis2_op12", 12, NCHW(S4, "LogSoftmax(t) axis=2"), KEPT, REL},
    {"logsoftmax_axis2_op13", 13, NCHW(S4, "LogSoftmax(t) axis=2"), GONE, REL},
};

Test(transpose_ort, softmax) { RUN(softmax_cases); }

/* ---- Squeeze / Unsqueeze (TestSqueeze*, TestUnsqueeze*) --------------------------------- */

#define SQX "in x f32[1,?4,1,2]" /* NCHW view [1,2,4,1] */
#define UQX "in x f32[2,?4,6,5]"
#define UQ_POST "[0,1,3,6,4,5,2,7]"

static const tcase squeeze_cases[] = {
    {"squeeze_op7", 7, NCHW_TO(SQX, "Squeeze(t) axes=[0,3]", "[1,0]"), GONE},
    {"squeeze_op11", 11, NCHW_TO(SQX, "Squeeze(t) axes=[0,-1]", "[1,0]"), GONE},
    {"squeeze_op15", 15, NCHW_TO(SQX "; const ax i64[2] = 0,-1", "Squeeze(t, ax)", "[1,0]"),
     GONE},
    /* Squeeze without axes drops whatever dims are 1 at run time: unknown here. */
    {"squeeze_no_axes_op7", 7, NCHW_OUT(SQX, "Squeeze(t)"), KEPT},
    {"squeeze_no_axes_op15", 15, NCHW_OUT(SQX, "Squeeze(t)"), KEPT},
    {"squeeze_no_axes_op18", 18, NCHW_OUT(SQX, "Squeeze(t)"), KEPT},
    {"squeeze_nonconst_axes_op15", 15, NCHW_OUT(SQX "; in ai i64[?2] = 0,-1", "Squeeze(t, ai)"),
     KEPT},
    {"unsqueeze_op7", 7, NCHW_TO(UQX, "Unsqueeze(t) axes=[0,4,7,5]", UQ_POST), GONE},
    {"unsqueeze_op11", 11, NCHW_TO(UQX, "Unsqueeze(t) axes=[0,-4,-1,5]", UQ_POST), GONE},
    {"unsqueeze_op15", 15,
     NCHW_TO(UQX "; const ax i64[4] = 0,-4,-1,5", "Unsqueeze(t, ax)", UQ_POST), GONE},
    {"unsqueeze_nonconst_axes_op14", 14,
     NCHW_TO(UQX "; in ai i64[4] = 0,-4,-1,5", "Unsqueeze(t, ai)", "[1,3,6,2,0,4,5,7]"), KEPT},
};

Test(transpose_ort, squeeze_unsqueeze) { RUN(squeeze_cases); }

/* ---- Slice (TestSlice*) ----------------------------------------------------------------- */

#define SLX "in x f32[2,4,6,5]" /* NCHW view [2,5,4,6] */

static const tcase slice_cases[] = {
    {"slice_op7", 7, NCHW(SLX, "Slice(t) axes=[2] starts=[1] ends=[-1]"), GONE},
    {"slice_no_axes_op7", 7, NCHW(SLX, "Slice(t) starts=[1,-3,0,0] ends=[2,4,10,10]"), GONE},
    {"slice_op15", 15,
     NCHW(SLX "; const st i64[1] = 1; const en i64[1] = -1; const ax i64[1] = 2",
          "Slice(t, st, en, ax)"),
     GONE},
    {"slice_no_axes_op15", 15,
     NCHW(SLX "; const st i64[4] = 1,-3,0,0; const en i64[4] = 2,4,10,10", "Slice(t, st, en)"),
     GONE},
    {"slice_negative_axes_op15", 15,
     NCHW(SLX "; const st i64[2] = 1,-3; const en i64[2] = 2,4; const ax i64[2] = 1,-2",
          "Slice(t, st, en, ax)"),
     GONE},
    {"slice_negative_axes_int32_op15", 15,
     NCHW(SLX "; const st i32[2] = 1,-3; const en i32[2] = 2,4; const ax i32[2] = 1,-2",
          "Slice(t, st, en, ax)"),
     GONE},
    {"slice_steps_op15", 15,
     NCHW(SLX "; const st i64[2] = 1,4; const en i64[2] = 2,-3; const ax i64[2] = 1,-2; "
              "const sp i64[2] = 2,-1",
          "Slice(t, st, en, ax, sp)"),
     GONE},
    {"slice_steps_int32_op18", 18,
     NCHW(SLX "; const st i32[2] = 1,4; const en i32[2] = 2,-3; const ax i32[2] = 1,-2; "
              "const sp i32[2] = 2,-1",
          "Slice(t, st, en, ax, sp)"),
     GONE},
    /* Axes computed at run time: ORT refuses (NoOpt); graphlab remaps them with a
     * Gather on the perm, as the issue asks for per-axis lists, and all Transposes go. */
    {"slice_nonconst_axes_op15", 15,
     NCHW(SLX "; in ai i64[2] = 1,-2; const st i64[2] = 1,-3; const en i64[2] = 2,4",
          "Slice(t, st, en, ai)"),
     GONE},
    {"slice_nonconst_axes_int32_op15", 15,
     NCHW(SLX "; in ai i32[2] = 1,-2; const st i32[2] = 1,-3; const en i32[2] = 2,4",
          "Slice(t, st, en, ai)"),
     GONE},
    /* Default axes with run-time starts/ends of known length: they are gathered. */
    {"slice_default_axes_nonconst_starts_op15", 15,
     NCHW(SLX "; in st i64[4] = 1,-3,0,0; in en i64[4] = 2,4,10,10", "Slice(t, st, en)"), GONE},
    {"slice_default_axes_nonconst_starts_int32_op15", 15,
     NCHW(SLX "; in st i32[4] = 1,-3,0,0; in en i32[4] = 2,4,10,10", "Slice(t, st, en)"), GONE},
    /* ... of unknown length they cannot be (ORT: NoOpt). */
    {"slice_default_axes_unknown_length_op15", 15,
     NCHW(SLX "; in st i64?[4] = 1,-3,0,0; in en i64?[4] = 2,4,10,10", "Slice(t, st, en)"),
     KEPT},
    {"slice_default_axes_unknown_length_int32_op15", 15,
     NCHW(SLX "; in st i32?[4] = 1,-3,0,0; in en i32?[4] = 2,4,10,10", "Slice(t, st, en)"),
     KEPT},
    /* More starts than the rank: an invalid model the pass must leave alone (ORT does
     * not run it; no shape inference here, which would reject it first). */
    {"slice_starts_longer_than_rank_op18", 18,
     "in x f32?[2,4]; in st i64[3] = 0,0,0; in en i64[3] = 1,1,1; t = Transpose(x) perm=[1,0]; "
     "r = Slice(t, st, en); y = Transpose(r) perm=[1,0]; out y",
     KEPT, .passes = "toposort,transpose-push", .no_exec = true},
};

Test(transpose_ort, slice) { RUN(slice_cases); }

/* ---- Gather (TestGather*) and Tile (TestTile*) ------------------------------------------ */

static const tcase gather_tile_cases[] = {
    /* A scalar index drops the axis, like Squeeze: [2,5,4,6] -> [2,5,6] -> (0,2,1). */
    {"gather_scalar_indices_op13", 13,
     NCHW_TO(SLX "; const i i64[] = 2", "Gather(t, i) axis=2", "[0,2,1]"), GONE},
    {"gather_scalar_indices_op18", 18,
     NCHW_TO(SLX "; const i i64[] = 2", "Gather(t, i) axis=2", "[0,2,1]"), GONE},
    {"gather_negative_axis_op13", 13,
     NCHW_TO(SLX "; const i i64[] = 0", "Gather(t, i) axis=-1", "[0,2,1]"), GONE},
    /* Rank-1 indices keep the axis: ORT leaves both Transposes (cost 4); graphlab's
     * Gather handler pushes through and one Transpose remains (cost 3). */
    {"gather_rank1_indices_op13", 13,
     NCHW_TO(SLX "; const i i64[1] = 2", "Gather(t, i) axis=2", "[0,1,3,2]"), .want = PUSH,
     .transposes = 1, .perms = "0,3,2,1", .cost = 3, .ops = "Gather=1"},
    /* Run-time scalar indices: ORT cannot read their rank from a constant and bails;
     * graphlab knows the rank from the value's type and pushes: both Transposes go. */
    {"gather_nonconst_indices_op13", 13,
     NCHW_TO(SLX "; in i i64[] = 2", "Gather(t, i) axis=2", "[0,2,1]"), GONE},
    {"tile_op15", 15, NCHW("in x f32[2,?4,6,3]; const rp i64[4] = 1,2,1,3", "Tile(t, rp)"), GONE},
    {"tile_op18", 18, NCHW("in x f32[2,?4,6,3]; const rp i64[4] = 1,2,1,3", "Tile(t, rp)"), GONE},
    /* Run-time repeats are gathered in the new order. */
    {"tile_nonconst_repeats_op15", 15,
     NCHW("in x f32[2,?4,6,3]; in rp i64?[4] = 1,2,1,3", "Tile(t, rp)"), GONE},
    /* Fewer repeats than the rank (invalid; ORT does not run it): the handler must not
     * read past them. */
    {"tile_repeats_rank_mismatch_op18", 18,
     NCHW("in x f32?[2,4,6,3]; const rp i64[2] = 1,2", "Tile(t, rp)"), KEPT,
     .passes = "toposort,transpose-push", .no_exec = true},
};

Test(transpose_ort, gather_tile) { RUN(gather_tile_cases); }

/* ---- elementwise ops: unary (TestCast, TestElu, the activations) --------------------------- */

#define UX "in x f32s[2,4,6,3]"
#define UNARY(name, op, decl) {name "_op15", 15, NCHW(decl, op), GONE}

static const tcase unary_cases[] = {
    {"cast_op15", 15, NCHW("in x i32[?2,4,?6,5]", "Cast(t) to=1"), GONE},
    {"cast_op18", 18, NCHW("in x i32[?2,4,?6,5]", "Cast(t) to=1"), GONE},
    {"elu_op15", 15, NCHW(UX, "Elu(t)"), GONE},
    {"elu_alpha_op18", 18, NCHW(UX, "Elu(t) alpha=0.5"), GONE},
    UNARY("relu", "Relu(t)", UX),
    UNARY("leakyrelu", "LeakyRelu(t) alpha=0.2", UX),
    UNARY("sigmoid", "Sigmoid(t)", UX),
    UNARY("tanh", "Tanh(t)", UX),
    UNARY("exp", "Exp(t)", UX),
    UNARY("log", "Log(t)", "in x f32[2,4,6,3]"),
    UNARY("sqrt", "Sqrt(t)", "in x f32[2,4,6,3]"),
    UNARY("neg", "Neg(t)", UX),
    UNARY("abs", "Abs(t)", UX),
    UNARY("erf", "Erf(t)", UX),
    UNARY("floor", "Floor(t)", UX),
    UNARY("sign", "Sign(t)", UX),
    UNARY("softplus", "Softplus(t)", UX),
    UNARY("hardsigmoid", "HardSigmoid(t)", UX),
    UNARY("identity", "Identity(t)", UX),
    UNARY("not", "Not(t)", "in x bool[2,4,6,3]"),
    UNARY("isnan", "IsNaN(t)", UX),
    {"clip_op13", 13, NCHW(UX "; const lo f32[] = -0.5; const hi f32[] = 0.5", "Clip(t, lo, hi)"),
     GONE},
    {"clip_attributes_op7", 7, NCHW(UX, "Clip(t) min=-0.5 max=0.5"), GONE},
};

Test(transpose_ort, unary) { RUN(unary_cases); }

/* ---- broadcasting binary ops (TestBroadcastOps*) -------------------------------------------
 * a[6,4,10] -> Transpose(0,2,1); b[4,10] -> Transpose(1,0): the lower-rank input gets an
 * Unsqueeze, then both Transposes cancel against the one after the op. */
#define BIN3(dt, call)                                                                      \
    "in a " dt "[6,4,10]; in b " dt "[4,10]; ta = Transpose(a) perm=[0,2,1]; "            \
    "tb = Transpose(b) perm=[1,0]; r = " call "; y = Transpose(r) perm=[0,2,1]; out y"
#define BINARY(name, dt, call) {name "_op15", 15, BIN3(dt, call), GONE}

static const tcase broadcast_cases[] = {
    BINARY("add", "f32", "Add(ta, tb)"),
    {"add_op18", 18, BIN3("f32", "Add(ta, tb)"), GONE},
    BINARY("mul", "f32", "Mul(ta, tb)"),
    BINARY("sub", "f32", "Sub(ta, tb)"),
    BINARY("div", "f32", "Div(ta, tb)"),
    BINARY("prelu", "f32", "PRelu(ta, tb)"),
    BINARY("greater", "f32", "Greater(ta, tb)"),
    BINARY("less", "f32", "Less(ta, tb)"),
    BINARY("pow", "f32", "Pow(ta, tb)"),
    BINARY("max", "f32", "Max(ta, tb)"),
    BINARY("min", "f32", "Min(ta, tb)"),
    BINARY("mean", "f32", "Mean(ta, tb)"),
    BINARY("sum", "f32", "Sum(ta, tb)"),
    BINARY("greater_or_equal", "f32", "GreaterOrEqual(ta, tb)"),
    BINARY("less_or_equal", "f32", "LessOrEqual(ta, tb)"),
    BINARY("equal", "i32", "Equal(ta, tb)"),
    BINARY("and", "bool", "And(ta, tb)"),
    BINARY("or", "bool", "Or(ta, tb)"),
    BINARY("xor", "bool", "Xor(ta, tb)"),
    BINARY("mod", "f32", "Mod(ta, tb) fmod=1"),
    BINARY("bitshift", "u32", "BitShift(ta, tb) direction=\"LEFT\""),
    /* TestAdd: a scalar constant needs nothing. */
    {"add_scalar_const_op15", 15,
     "in x f32[4,6,10]; const c f32[] = 3.2; t = Transpose(x) perm=[1,2,0]; a = Add(t, c); "
     "y = Transpose(a) perm=[2,0,1]; out y",
     GONE},
    /* TestWhere: a scalar middle input and two transposed ones. */
    {"where_op15", 15,
     "in c bool[4,6,10]; in s f32[]; in v f32[4,6,10]; tc = Transpose(c) perm=[1,2,0]; "
     "tv = Transpose(v) perm=[1,2,0]; w = Where(tc, s, tv); y = Transpose(w) perm=[2,0,1]; "
     "out y",
     GONE},
    /* A PRelu slope of lower rank is unsqueezed like any broadcast input. */
    {"prelu_const_slope_op15", 15,
     NCHW(UX "; const sl f32[3,1,1] = 0.1,0.2,0.3", "PRelu(t, sl)"), GONE},
};

Test(transpose_ort, broadcast) { RUN(broadcast_cases); }

/* ---- QuantizeLinear / DequantizeLinear (TestQuantizeLinear*, TestDequantizeLinear*) -----
 * Per-tensor parameters need nothing; per-axis ones get the axis remapped. ORT's 16-bit
 * and com.microsoft variants are not ported: the reference kernels are 8-bit only and
 * there are no contrib ops. */
#define QX "in x f32[2,?4,6,3]"
#define DQX "in x u8[2,?4,6,3]"

/* x (NCHW) -> Transpose to NHWC -> Mul by a per-channel weight w -> back to NCHW. */
#define DQW "const ws f32[3] = 0.5,0.25,0.125; const wz i8[3] = 0,1,-1"
#define NHWC_MUL                                                                            \
    "t = Transpose(x) perm=[0,2,3,1]; m = Mul(t, w); y = Transpose(m) perm=[0,3,1,2]; out y"

/* Declares t (a Transpose of rank 2) as rank 5, as ORT's test does through value_info. */
static void declare_t_rank5(gl_model *m)
{
    gl_value *t = gl_find_value(m->graph, "t");
    t->type.kind = GL_TYPE_TENSOR;
    t->type.dtype = GL_DT_FLOAT;
    gl_shape_set_rank(&t->type.shape, 5);
}

static const tcase quant_cases[] = {
    {"quantize_scalar_op15", 15,
     NCHW(QX "; in s f32[] = 0.05; in z u8[] = 127", "QuantizeLinear(t, s, z)"), GONE},
    {"quantize_scalar_op18", 18,
     NCHW(QX "; in s f32[] = 0.05; in z u8[] = 127", "QuantizeLinear(t, s, z)"), GONE},
    {"quantize_scalar_int8_op15", 15,
     NCHW(QX "; in s f32[] = 0.05; in z i8[] = 0", "QuantizeLinear(t, s, z)"), GONE},
    {"quantize_scalar_ignore_axis_op15", 15,
     NCHW(QX "; in s f32[] = 0.05; in z u8[] = 127", "QuantizeLinear(t, s, z) axis=10"), GONE},
    {"quantize_vector_op15", 15,
     NCHW(QX "; in s f32[?2]; in z u8[?2]", "QuantizeLinear(t, s, z) axis=0"), GONE},
    {"quantize_vector_unknown_rank_op15", 15,
     NCHW(QX "; in s f32?[3]; in z u8?[3]", "QuantizeLinear(t, s, z) axis=1"), GONE},
    {"quantize_scalar_op10", 10,
     NCHW(QX "; in s f32[] = 2.3; in z u8[] = 10", "QuantizeLinear(t, s, z)"), GONE},
    {"dequantize_scalar_ignore_axis_op15", 15,
     NCHW(DQX "; in s f32[] = 0.05; in z u8[] = 127", "DequantizeLinear(t, s, z) axis=10"),
     GONE},
    {"dequantize_vector_op15", 15,
     NCHW(DQX "; in s f32[2]; in z u8[2]", "DequantizeLinear(t, s, z) axis=-4"), GONE},
    {"dequantize_vector_op18", 18,
     NCHW(DQX "; in s f32[2]; in z u8[2]", "DequantizeLinear(t, s, z) axis=-4"), GONE},
    {"dequantize_no_axis_op15", 15,
     NCHW(DQX "; in s f32[] = 0.05; in z u8[] = 127", "DequantizeLinear(t, s, z)"), GONE},
    {"dequantize_no_zero_point_op21", 21,
     NCHW("in x i8[2,?4,6,3]; in s f32[] = 0.05", "DequantizeLinear(t, s)"), GONE},
    /* A per-axis DequantizeLinear of a constant on Mul's other input: the constant is
     * unsqueezed and transposed in place and the DQ's axis follows (ORT's model-file
     * test InPlaceUnsqueezeTransposePerAxisDQ, rebuilt). */
    {"dequantize_per_axis_constant_in_place_op13", 13,
     "in x f32s[1,3,4,4]; const wq i8[3] = -5,1,7; " DQW "; w = DequantizeLinear(wq, ws, wz) "
     "axis=0; " NHWC_MUL,
     GONE, .ops = "Unsqueeze=0"},
    /* CancelTransposeBeforePerAxisDQ: the pushed Transpose cancels the one above the DQ,
     * whose axis goes from -1 to 1. */
    {"dequantize_per_axis_transpose_cancels_op13", 13,
     "in x f32s[1,3,4,4]; in q i8[1,3,1,1]; " DQW "; tq = Transpose(q) perm=[0,2,3,1]; "
     "w = DequantizeLinear(tq, ws, wz) axis=-1; " NHWC_MUL,
     GONE},
    /* CancelSqueezeBeforePerAxisDQ: the Unsqueeze the push needs cancels the Squeeze above
     * the DQ, whose axis goes from 0 to 3. */
    {"dequantize_per_axis_squeeze_cancels_op13", 13,
     "in x f32s[1,3,4,4]; in q i8[1,1,1,3]; " DQW "; const sa i64[3] = 0,1,2; "
     "sq = Squeeze(q, sa); w = DequantizeLinear(sq, ws, wz) axis=0; " NHWC_MUL,
     GONE, .ops = "Squeeze=0 Unsqueeze=0"},
    /* PerAxisQAxisExceedsTransposePermNoOpt: a per-axis QuantizeLinear whose axis (4)
     * exceeds the rank the perm says (2); t is declared rank 5. Invalid; must not be
     * pushed (or crash). */
    {"quantize_axis_exceeds_perm_op18", 18,
     "in x f32?[2,3]; i = Identity(x); t = Transpose(i) perm=[1,0]; "
     "const s f32[3] = 0.05,0.05,0.05; const z u8[3] = 0,0,0; "
     "q = QuantizeLinear(t, s, z) axis=4; out q",
     KEPT, .passes = "toposort,transpose-push", .no_exec = true, .extra = declare_t_rank5},
    /* ORT skips this push before opset 21 for its QDQ bookkeeping (it would insert a
     * QuantizeLinear that needs output_dtype); graphlab inserts none, so either is fine. */
    {"dequantize_no_zero_point_op19", 19,
     NCHW("in x i8[2,?4,6,3]; in s f32[] = 0.05", "DequantizeLinear(t, s)"), EITHER},
};

Test(transpose_ort, quantize_dequantize) { RUN(quant_cases); }

/* ---- Transpose -> Transpose -------------------------------------------------------------- */

static const tcase transpose_pair_cases[] = {
    {"transpose_pair_cancels_op15", 15,
     "in x f32[2,3,4]; a = Transpose(x) perm=[1,2,0]; b = Transpose(a) perm=[2,0,1]; "
     "y = Relu(b); out y",
     GONE},
    /* (1,2,0) then (1,0,2) is (2,1,0): one Transpose stays, at the graph output. */
    {"transpose_pair_merges_op15", 15,
     "in x f32[2,3,4]; a = Transpose(x) perm=[1,2,0]; b = Transpose(a) perm=[1,0,2]; "
     "y = Relu(b); out y",
     .want = PUSH, .transposes = 1, .perms = "2,1,0", .cost = 3},
    /* TestTransposeGraphOutput: all three are graph outputs. t2 undoes t1 (so becomes a
     * copy of x under its own name); t3 composes with t1 into (1,0,3,2). ORT: cost 12->8. */
    {"transpose_graph_outputs_op15", 15,
     "in x f32[?1,?2,?3,?4]; t1 = Transpose(x) perm=[0,3,1,2]; "
     "t2 = Transpose(t1) perm=[0,2,3,1]; t3 = Transpose(t1) perm=[2,0,1,3]; out t1, t2, t3",
     .want = PUSH, .transposes = 2, .perms = "0,3,1,2 1,0,3,2", .cost = 8},
    /* A cancelled pair whose result is a graph output keeps the output's name. */
    {"transpose_pair_cancels_into_graph_output_op15", 15,
     "in x f32[2,3,4]; a = Transpose(x) perm=[1,2,0]; b = Transpose(a) perm=[2,0,1]; out a, b",
     .want = PUSH, .transposes = 1, .perms = "1,2,0", .cost = 3},
};

Test(transpose_ort, transpose_pairs) { RUN(transpose_pair_cases); }

/* ---- Reshape that acts as a Transpose (TestReshape*, TestSimpleReshapeAsTranspose, ...)
 * x -> Mul (so the Transpose does not read a graph input) -> Transpose -> Reshape ->
 * Identity (so the Reshape is not a graph output). A Reshape that keeps the order and
 * sizes of the dims that are not 1 is a Transpose: it merges with the one before it, or
 * both cancel. */
#define RESHAPE(shape, perm, n, target, attrs)                                              \
    "in x f32" shape "; in s f32[1]; m = Mul(x, s); t = Transpose(m) perm=" perm           \
    "; const sh i64[" n "] = " target "; r = Reshape(t, sh) " attrs                        \
    "; y = Identity(r); out m, y"
#define MERGED(p) .want = PUSH, .transposes = 1, .perms = p, .cost = -1, .ops = "Reshape=0"
#define CANCELLED GONE, .ops = "Reshape=0"
/* ORT checks only that one Transpose and one Reshape are left; the cost of the original
 * Transpose must not grow either. */
#define NOT_MERGED(c) .want = ANY, .transposes = 1, .cost = c, .ops = "Reshape=1"

static const tcase reshape_cases[] = {
    {"reshape_merges_3d", 15, RESHAPE("[4,1,3]", "[2,0,1]", "3", "1,3,4", ""), MERGED("1,2,0")},
    {"reshape_merges_3d_equal_dims", 15, RESHAPE("[4,1,4]", "[2,0,1]", "3", "1,4,4", ""),
     MERGED("1,2,0")},
    {"reshape_merges_4d_a", 15, RESHAPE("[1,6,1,5]", "[3,0,1,2]", "4", "1,1,5,6", ""),
     MERGED("0,2,3,1")},
    {"reshape_merges_4d_b", 15, RESHAPE("[1,6,1,5]", "[2,3,1,0]", "4", "5,6,1,1", ""),
     MERGED("3,1,2,0")},
    {"reshape_merges_4d_c", 15, RESHAPE("[1,6,1,5]", "[3,0,2,1]", "4", "1,5,6,1", ""),
     MERGED("0,3,1,2")},
    {"reshape_merges_4d_d", 15, RESHAPE("[1,6,1,5]", "[2,3,0,1]", "4", "5,1,6,1", ""),
     MERGED("3,2,1,0")},
    {"reshape_cancels_2d", 15, RESHAPE("[1,8]", "[1,0]", "2", "1,8", ""), CANCELLED},
    {"reshape_cancels_3d", 15, RESHAPE("[2,1,4]", "[1,0,2]", "3", "2,1,4", ""), CANCELLED},
    {"reshape_cancels_4d", 15, RESHAPE("[1,2,1,3]", "[0,2,1,3]", "4", "1,2,1,3", ""), CANCELLED},
    /* ORT: unchanged. The Transpose, (1,0,2) of [2,1,4], moves only the size-1 dim:
     * graphlab's rule makes it a Reshape. */
    {"reshape_cant_merge_rank", 15, RESHAPE("[2,1,4]", "[1,0,2]", "2", "2,4", ""), GONE},
    {"reshape_cant_merge_sizes", 15, RESHAPE("[1,4,4,5]", "[0,3,1,2]", "4", "1,5,2,8", ""),
     NOT_MERGED(3)},
    {"reshape_cant_merge_order", 15, RESHAPE("[1,4,8,3]", "[0,3,1,2]", "4", "1,3,8,4", ""),
     NOT_MERGED(3)},
    /* A 0 in the shape copies the input's dim (allowzero=0) or is a 0 (allowzero=1). */
    {"reshape_zero_copies_dim", 15, RESHAPE("[1,5,7,1]", "[0,3,2,1]", "4", "1,7,1,0", ""),
     MERGED("0,2,3,1")},
    {"reshape_zero_copies_dim_cant_merge", 15,
     RESHAPE("[1,4,8,3]", "[0,3,1,2]", "4", "1,0,8,4", ""), NOT_MERGED(3)},
    {"reshape_allowzero_merges", 15,
     RESHAPE("[1,5,7,0]", "[0,2,1,3]", "4", "7,5,1,0", "allowzero=1"), MERGED("2,1,0,3")},
    {"reshape_allowzero_cant_merge", 15,
     RESHAPE("[1,5,7,0]", "[0,2,1,3]", "4", "0,7,5,1", "allowzero=1"), NOT_MERGED(3)},
    {"reshape_minus_one_merges", 15, RESHAPE("[1,5,7,1]", "[0,3,2,1]", "4", "1,7,1,-1", ""),
     MERGED("0,2,3,1")},
    {"reshape_minus_one_changes_size", 15,
     RESHAPE("[1,8,4,1]", "[0,3,2,1]", "4", "1,-1,2,8", ""), NOT_MERGED(2)},
    /* TestSimpleReshapeAsTranspose, TestReshapeAsTransposeGraphOutput,
     * TestCancelingNodesGraphOutputs: Transpose and Reshape both go. */
    {"simple_reshape_as_transpose", 15,
     "in x0 f32[1,1,1,3]; in x1 f32[1,3]; const sh i64[4] = 1,1,1,3; m = Mul(x0, x1); "
     "t = Transpose(m) perm=[0,3,1,2]; r = Reshape(t, sh); y = Identity(r); out m, y",
     GONE, .ops = "Reshape=0 Mul=1"},
    {"reshape_as_transpose_graph_output", 15,
     "in x0 f32[1,1,1,3]; in x1 f32[1,3]; const sh i64[4] = 1,1,1,3; m = Mul(x0, x1); "
     "t = Transpose(m) perm=[0,3,1,2]; r = Reshape(t, sh); out r",
     GONE, .ops = "Reshape=0 Mul=1"},
    /* TestNonCancelingReshapeDueToNonConstShape: ORT keeps Transpose and Reshape (cost
     * 1); the Transpose, (0,3,1,2) of [1,1,1,3], moves only size-1 dims: graphlab makes
     * it a Reshape. */
    {"reshape_nonconst_shape", 15,
     "in x0 f32[1,1,1,3]; in x1 f32[1,3]; in sh i64[4] = 1,1,1,3; m = Mul(x0, x1); "
     "t = Transpose(m) perm=[0,3,1,2]; r = Reshape(t, sh); y = Identity(r); out m, y",
     GONE, .ops = "Reshape=2 Mul=1"},
    {"cancelling_nodes_graph_outputs", 15,
     "in x0 f32[1,1,1,3]; in x1 f32[1,3]; const sh i64[4] = 1,1,1,3; m = Mul(x0, x1); "
     "t = Transpose(m) perm=[0,3,1,2]; r = Reshape(t, sh); out m, r",
     GONE, .ops = "Reshape=0 Mul=1"},
};

Test(transpose_ort, reshape_as_transpose) { RUN(reshape_cases); }

/* TestReshapeSplit / TestReshapeSplitBails: a Reshape that splits dims of the transposed
 * value is done first, on the untransposed one, and the Transpose moves after it. */
#define SPLIT_RESHAPED(p) .want = PUSH, .transposes = 1, .perms = p, .cost = -1, .ops = "Reshape=1"

static const tcase reshape_split_cases[] = {
    {"reshape_split_channels", 15, RESHAPE("[1,12,20,24]", "[0,3,1,2]", "5", "1,3,8,12,20", ""),
     SPLIT_RESHAPED("0,3,4,1,2")},
    {"reshape_split_two_axes", 15, RESHAPE("[2,4,6]", "[2,0,1]", "5", "2,3,2,2,2", ""),
     SPLIT_RESHAPED("3,4,0,1,2")},
    {"reshape_split_size1_axis", 15, RESHAPE("[1,6,4]", "[2,0,1]", "5", "2,2,1,2,3", ""),
     SPLIT_RESHAPED("3,4,0,1,2")},
    /* The refusals say what stops the push (a 5 -> 4 merge once read "keeps the rank"). */
    {"reshape_split_bails_flatten", 15, RESHAPE("[2,3,4]", "[1,0,2]", "2", "6,4", ""), KEPT,
     .refusal = "merges dims 0 and 1 (rank 3 -> 2), which Transpose 'n_t' takes from "
                "dims 1 and 0"},
    {"reshape_merge_adjacent_5_to_4", 15,
     RESHAPE("[2,3,4,5,6]", "[0,2,1,3,4]", "4", "2,4,3,30", ""), KEPT,
     .refusal = "merges dims (rank 5 -> 4)"},
    {"reshape_same_rank_not_a_permutation", 15, RESHAPE("[2,6]", "[1,0]", "2", "4,3", ""),
     KEPT, .refusal = "keeps the rank (2) but moves elements between dims"},
    {"reshape_split_bails_no_partition", 15, RESHAPE("[2,3]", "[1,0]", "3", "2,3,1", ""), KEPT},
    {"reshape_split_bails_across_axes", 15, RESHAPE("[4,6]", "[1,0]", "3", "2,12,1", ""), KEPT},
};

Test(transpose_ort, reshape_split) { RUN(reshape_split_cases); }

/* ---- the cost model (TestPushBroadcastUnsqueezeTranspose, TestOptimizeTowardsTranspose,
 * TestOnlyOptimizeTowardsTranspose, TestOptimizeBothInputs, TestBroadcastReusedInputs,
 * TestNonCancelingReshapeDueToNonConstShape, TestDontOptimizeWrongInput) ------------------- */

static const tcase cost_cases[] = {
    /* Pushing through Mul puts a Transpose on its second input, which pays only because
     * the Transpose after Relu cancels. ORT: cost 8 -> 2. */
    {"optimize_towards_transpose_op15", 15,
     "in x0 f32[4,6,10]; in x1 f32[10,4]; t = Transpose(x0) perm=[1,2,0]; m = Mul(t, x1); "
     "r = Relu(m); y = Transpose(r) perm=[2,0,1]; out y",
     .want = PUSH, .transposes = 1, .perms = "2,0,1 | 1,0", .cost = 2},
    /* Without the Transpose at the end nothing would cancel: not pushed (ORT: cost 3). */
    {"only_optimize_towards_transpose_op15", 15,
     "in x0 f32[4,6,10]; in x1 f32[10,4]; t = Transpose(x0) perm=[1,2,0]; m = Mul(t, x1); "
     "r = Relu(m); out r",
     KEPT},
    /* TestPushBroadcastUnsqueezeTranspose: Transposes above both Relus; the rank-2 side
     * is unsqueezed for Mul. ORT ends with one Transpose, (1,0,2) of Unsqueeze(x1) =
     * [1,4,10] (cost 8 -> 2); it only moves a size-1 dim, so graphlab's rule makes it
     * a Reshape and none is left. */
    {"push_broadcast_unsqueeze_transpose_op15", 15,
     "in x0 f32[4,6,10]; in x1 f32[4,10]; t1 = Transpose(x0) perm=[1,2,0]; r1 = Relu(t1); "
     "t2 = Transpose(x1) perm=[1,0]; r2 = Relu(t2); m = Mul(r1, r2); "
     "y = Transpose(m) perm=[2,0,1]; out y",
     GONE},
    /* TestBroadcastReusedInputs: Sum reads t and a constant twice each and a rank-2
     * input; both outputs go back. ORT: cost 2, one Transpose (0,2,3,1) of
     * Unsqueeze(x1) = [1,1,?,3], which moves only size-1 dims: a Reshape here. */
    {"broadcast_reused_inputs_op15", 15,
     "in a f32[?1,?2,3,4]; in b f32[?2,3]; const k f32[2,3] = rand; "
     "t = Transpose(a) perm=[0,3,1,2]; s = Sum(t, k, b, k, t); "
     "y1 = Transpose(s) perm=[0,2,3,1]; y2 = Transpose(s) perm=[0,2,3,1]; out y1, y2",
     GONE},
    /* Both inputs carry the same Transpose: one stays, after the Mul (ORT: cost 6 -> 3). */
    {"optimize_both_inputs_op15", 15,
     "in x0 f32[4,6,10]; in x1 f32[4,6,10]; a = Transpose(x0) perm=[1,2,0]; "
     "b = Transpose(x1) perm=[1,2,0]; y = Mul(a, b); out y",
     .want = PUSH, .transposes = 1, .perms = "1,2,0", .cost = 3},
};

Test(transpose_ort, cost_model) { RUN(cost_cases); }

/* ---- constants ------------------------------------------------------------------------------
 * (ORT covers these with model files: SharedInitializerHandling*; rebuilt here.) A
 * constant input is transposed in place; when another node reads it too, that reader
 * gets the inverse Transpose, which constant folding then removes. */
#define CONST_ADD(k, rest)                                                                  \
    "in x f32[2,3,4,5]; " k "; t = Transpose(x) perm=[0,2,3,1]; a = Add(t, k); "           \
    "y = Transpose(a) perm=[0,3,1,2]" rest

static const tcase const_cases[] = {
    {"constant_transposed_in_place_op15", 15, CONST_ADD("const k f32[2,4,5,3] = rand", "; out y"),
     GONE},
    /* A lower-rank constant is unsqueezed and transposed in place: no Unsqueeze node. */
    {"constant_broadcast_in_place_op15", 15, CONST_ADD("const k f32[3] = rand", "; out y"),
     GONE, .ops = "Unsqueeze=0"},
    {"constant_broadcast_in_place_op11", 11, CONST_ADD("const k f32[5,3] = rand", "; out y"),
     GONE, .ops = "Unsqueeze=0"},
    {"shared_constant_gets_inverse_transpose_op15", 15,
     CONST_ADD("in x2 f32[2,4,5,3]; const k f32[2,4,5,3] = rand", "; z = Add(x2, k); out y, z"),
     .want = PUSH, .transposes = 1, .perms = "0,2,3,1", .cost = -1},
    {"shared_constant_then_folded_op15", 15,
     CONST_ADD("in x2 f32[2,4,5,3]; const k f32[2,4,5,3] = rand", "; z = Add(x2, k); out y, z"),
     GONE, .passes = "toposort,shape-inference,transpose-push,constant-folding,dce"},
};

Test(transpose_ort, constants) { RUN(const_cases); }

/* ---- graph structure -------------------------------------------------------------------- */

/* If(c) { then: Identity(t) } { else: Neg(t) }: both branches read the transposed value t
 * from the enclosing graph (ORT issue 10305: the optimizer deleted such a producer). */
static void add_if_reading_t(gl_model *m)
{
    gl_graph *g = m->graph;
    gl_node *n = tu_node(g, "If", "n_sel", 1, gl_find_value(g, "c"));
    static const char *const branch[] = {"then_branch", "else_branch"};
    static const char *const op[] = {"Identity", "Neg"};
    for (int b = 0; b < 2; b++) {
        gl_graph *body = gl_graph_new(m, g, branch[b]);
        body->parent_node = n;
        gl_value *cap = gl_resolve_value(body, "t");
        tu_output(body, tu_node(body, op[b], op[b], 1, cap)->outputs[0]);
        gl_attr a = {.name = strdup(branch[b]), .type = GL_ATTR_GRAPH, .g = body};
        gl_node_take_attr(n, &a);
    }
    tu_output(g, n->outputs[0]);
}

static const tcase structure_cases[] = {
    /* t has a reader no Transpose can pass (the If), so it would stay: pushing through
     * Relu gains nothing (ORT: CanLikelyRemoveTranspose is false, cost 0). */
    {"subgraph_reads_transposed_value_op15", 15,
     "in x f32[2,3,4]; in c bool[] = 1; t = Transpose(x) perm=[1,2,0]; r = Relu(t); "
     "y = Transpose(r) perm=[2,0,1]; out y",
     KEPT, .extra = add_if_reading_t},
    /* Here the push pays (u cancels), and t must survive it for the subgraphs. */
    {"subgraph_reads_transposed_value_push_op15", 15,
     "in x f32[2,3,4]; in x2 f32[2,3,4]; in c bool[] = 1; t = Transpose(x) perm=[1,2,0]; "
     "u = Transpose(x2) perm=[1,2,0]; a = Add(t, u); y = Transpose(a) perm=[2,0,1]; out y",
     .want = PUSH, .transposes = 1, .perms = "1,2,0", .cost = 3, .ops = "If=1",
     .extra = add_if_reading_t},
    {"subgraph_reads_transposed_value_push_else_op15", 15,
     "in x f32[2,3,4]; in x2 f32[2,3,4]; in c bool[] = 0; t = Transpose(x) perm=[1,2,0]; "
     "u = Transpose(x2) perm=[1,2,0]; a = Add(t, u); y = Transpose(a) perm=[2,0,1]; out y",
     .want = PUSH, .transposes = 1, .perms = "1,2,0", .cost = 3, .ops = "If=1",
     .extra = add_if_reading_t},
    /* A graph output in the middle of a chain keeps its name and its value. The push
     * through Relu pays; the Transpose it leaves for the graph output r cannot go, so
     * pushing on through Sigmoid gains nothing (as in ORT, whose CanLikelyRemoveTranspose
     * is false for a graph output). */
    {"graph_output_in_the_middle_op15", 15,
     "in x f32[2,3,4]; t = Transpose(x) perm=[1,2,0]; r = Relu(t); s = Sigmoid(r); "
     "y = Transpose(s) perm=[2,0,1]; out r, y",
     .want = PUSH, .transposes = 2, .perms = "1,2,0 2,0,1", .cost = 6},
};

Test(transpose_ort, graph_structure) { RUN(structure_cases); }

/* ---- layout-sensitive ops stop the push (DESIGN.md; ORT's layout transformation is a
 * separate step) ---------------------------------------------------------------------------- */

#define NHWC "in x f32[1,5,6,4]" /* NCHW view [1,4,5,6] */
#define BN_PARAMS                                                                           \
    "const sc f32[4] = 1,0.5,2,1.5; const bb f32[4] = 0,0.1,-0.1,0.2; "                    \
    "const mu f32[4] = 0.1,0.2,0.3,0.4; const va f32[4] = 1,2,0.5,0.25"

static const tcase layout_cases[] = {
    {"conv_stops_op15", 15, NCHW(NHWC "; const w f32[3,4,1,1] = rand", "Conv(t, w)"), KEPT, REL},
    {"maxpool_stops_op15", 15, NCHW(NHWC, "MaxPool(t) kernel_shape=[2,2]"), KEPT},
    {"averagepool_stops_op15", 15, NCHW(NHWC, "AveragePool(t) kernel_shape=[2,2]"), KEPT, REL},
    {"globalaveragepool_stops_op15", 15, NCHW_OUT(NHWC, "GlobalAveragePool(t)"), KEPT, REL},
    {"batchnormalization_stops_op15", 15,
     NCHW(NHWC "; " BN_PARAMS, "BatchNormalization(t, sc, bb, mu, va)"), KEPT, REL},
    {"instancenormalization_stops_op15", 15,
     NCHW(NHWC "; const sc f32[4] = 1,0.5,2,1.5; const bb f32[4] = 0,0.1,-0.1,0.2",
          "InstanceNormalization(t, sc, bb)"),
     KEPT, REL},
    {"lrn_stops_op15", 15, NCHW(NHWC, "LRN(t) size=3"), KEPT, REL},
    {"depthtospace_stops_op15", 15, NCHW("in x f32[1,5,6,8]", "DepthToSpace(t) blocksize=2"),
     KEPT},
    {"spacetodepth_stops_op15", 15,
     NCHW("in x f32[1,4,6,3]", "SpaceToDepth(t) blocksize=2"), KEPT},
};

Test(transpose_ort, layout_sensitive) { RUN(layout_cases); }

/* ---- rules ONNX Runtime does not have ----------------------------------------------------
 * A Transpose that only moves size-1 dims is a Reshape (or nothing); one read only for
 * its type or a static shape is dead. ORT's TestDontOptimizeWrongInput is one of these:
 * ORT leaves the Transpose on CastLike's `like` input alone. */

static const tcase extra_rule_cases[] = {
    {"castlike_like_input_is_dead_op15", 15,
     "in x0 i32[?2,4,?6,5]; in x1 f32[?2,4,?6,5]; t = Transpose(x1) perm=[0,3,1,2]; "
     "c = CastLike(x0, t); y = Transpose(c) perm=[0,2,3,1]; out y",
     .want = PUSH, .transposes = 1, .perms = "0,2,3,1", .cost = -1},
    {"size_one_dims_transpose_is_reshape_op15", 15,
     "in x f32[1,5,1,3]; y = Transpose(x) perm=[0,2,1,3]; out y", GONE, .ops = "Reshape=1"},
    {"size_one_dims_transpose_unknown_dim_op15", 15,
     "in x f32[1,?5,1,3]; y = Transpose(x) perm=[0,2,1,3]; out y", GONE, .ops = "Reshape=1"},
    {"size_one_dims_swap_is_nothing_op15", 15,
     "in x f32[1,1,3]; t = Transpose(x) perm=[1,0,2]; y = Relu(t); out y", GONE,
     .ops = "Reshape=0"},
    {"shape_of_static_transpose_op15", 15,
     "in x f32[2,3,4]; t = Transpose(x) perm=[1,2,0]; s = Shape(t); out s", GONE},
    {"size_of_transpose_op15", 15,
     "in x f32[?2,3,4]; t = Transpose(x) perm=[1,2,0]; s = Size(t); out s", GONE},
    /* RegressionTest_Permute1DConstantEmptyPerm: a scalar's Transpose has an empty perm;
     * it once divided by zero in ORT. Only: no crash, same output. */
    {"scalar_transpose_empty_perm_op13", 13,
     "in x f32[]; t = Transpose(x) perm=[]; const pads i64[0] = ; p = Pad(t, pads); out p",
     EITHER},
    /* The Transpose itself is a graph output: it stays. */
    {"transpose_graph_output_not_dead_op15", 15,
     "in x f32[2,3,4]; t = Transpose(x) perm=[1,2,0]; s = Shape(t); out t, s", EITHER,
     .perms = "1,2,0"},
};

Test(transpose_extra, rules) { RUN(extra_rule_cases); }

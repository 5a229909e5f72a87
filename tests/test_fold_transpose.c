/* test_fold_transpose.c — the `fold-transpose` pass as a table of cases (seed 002's
 * rows: shapes, perm, dtype, the transA/transB expected, folded or not, why not).
 *
 * Each row is a graph in graphnote.h's notation whose output `y` is the product. It
 * runs toposort,shape-inference,fold-transpose; then:
 *   - applied rows: that many applied decisions, the op counts after, and the node
 *     producing `y` carrying the row's transA/transB; refused rows: the graph unchanged
 *     and a refusal whose reason holds the row's text; untouched rows: no decision;
 *   - the result verifies, and computes what the graph computed before on seeded random
 *     inputs (reference backend: graphlab's FusedMatMul kernel);
 *   - rows with a FusedMatMul also run with the op's model-local function body in place
 *     of the kernel, and the saved model loads again and computes the same; when
 *     GL_PYTHON has onnx, onnx.checker (full_check) accepts the saved files.
 * (FusedMatMul's kernel and shapes: test_ops_linalg.c; on oneDNN: test_dnnl_ops.c.)
 *
 * GL_FTTEST_SHOW=NAME prints that row's decisions and the graph after.
 */
#include "graphnote.h"
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASSES "toposort,shape-inference,fold-transpose"
#define RTOL 1e-5
#define ATOL 1e-6

typedef enum want { FOLD, REFUSE, NONE } want;

typedef struct fcase {
    const char *name;
    int opset;
    const char *graph;
    want want;
    int ta, tb;         /* FOLD: the attributes of y's producer after */
    const char *ops;    /* FOLD: op counts after ("Gemm=1 MatMul=0 Transpose=0") */
    int applied;        /* FOLD: applied decisions */
    const char *reason; /* REFUSE: part of the reason; FOLD: part of the applied text */
} fcase;

#define FOLDED(ta_, tb_, ops_, n_) .want = FOLD, .ta = (ta_), .tb = (tb_), .ops = (ops_), \
    .applied = (n_)
#define REFUSED(why_) .want = REFUSE, .reason = (why_)

#define GEMM_OK "Gemm=1 MatMul=0 Transpose=0"
#define FUSED_OK "graphlab.FusedMatMul=1 MatMul=0 Transpose=0"

static const fcase cases[] = {
    /* ---- rank 2: Gemm ---- */
    {"mm2_transA", 13, "in a f32s[3,2]; in b f32s[3,4]; t = Transpose(a) perm=[1,0]; "
     "y = MatMul(t, b); out y", FOLDED(1, 0, GEMM_OK, 1)},
    {"mm2_transB_weights", 13, "in x f32s[2,3]; const w f32s[4,3] = rand; "
     "t = Transpose(w) perm=[1,0]; y = MatMul(x, t); out y", FOLDED(0, 1, GEMM_OK, 1)},
    {"mm2_both", 17, "in a f32s[3,2]; in b f32s[4,3]; ta = Transpose(a) perm=[1,0]; "
     "tb = Transpose(b) perm=[1,0]; y = MatMul(ta, tb); out y", FOLDED(1, 1, GEMM_OK, 1)},
    {"mm2_no_perm_attr", 13, "in a f32s[3,2]; in b f32s[3,4]; t = Transpose(a); "
     "y = MatMul(t, b); out y", FOLDED(1, 0, GEMM_OK, 1)},
    {"gemm_toggles_transA", 13, "in a f32s[2,3]; in b f32s[3,4]; t = Transpose(a) "
     "perm=[1,0]; y = Gemm(t, b) transA=1; out y", FOLDED(0, 0, "Gemm=1 Transpose=0", 1)},
    {"gemm_transB_with_c", 11, "in x f32s[2,3]; const w f32s[4,3] = rand; const c f32s[4] "
     "= rand; t = Transpose(w) perm=[1,0]; y = Gemm(x, t, c) alpha=0.5 beta=2.0; out y",
     FOLDED(0, 1, "Gemm=1 Transpose=0", 1)},
    {"gemm_f64", 13, "in a f64[3,2]; in b f64[3,4]; t = Transpose(a) perm=[1,0]; "
     "y = Gemm(t, b); out y", FOLDED(1, 0, "Gemm=1 Transpose=0", 1)},
    /* ---- other ranks: FusedMatMul ---- */
    {"mm3_transB", 13, "in x f32s[2,3,4]; in w f32s[2,5,4]; t = Transpose(w) perm=[0,2,1]; "
     "y = MatMul(x, t); out y", FOLDED(0, 1, FUSED_OK, 1)},
    {"mm4_both", 17, "in a f32s[2,3,5,4]; in b f32s[2,3,6,5]; ta = Transpose(a) "
     "perm=[0,1,3,2]; tb = Transpose(b) perm=[0,1,3,2]; y = MatMul(ta, tb); out y",
     FOLDED(1, 1, FUSED_OK, 1)},
    {"mm4_batch_broadcast", 13, "in a f32s[2,1,4,3]; in b f32s[3,4,5]; "
     "t = Transpose(a) perm=[0,1,3,2]; y = MatMul(t, b); out y", FOLDED(1, 0, FUSED_OK, 1)},
    {"mm_rank2_by_rank3", 13, "in a f32s[4,3]; in b f32s[2,4,5]; t = Transpose(a) "
     "perm=[1,0]; y = MatMul(t, b); out y", FOLDED(1, 0, FUSED_OK, 1)},
    {"mm3_f64_op17", 17, "in x f64[2,3,4]; in w f64[2,5,4]; t = Transpose(w) perm=[0,2,1]; "
     "y = MatMul(x, t); out y", FOLDED(0, 1, FUSED_OK, 1)},
    {"mm3_unknown_batch", 13, "in x f32s[?2,3,4]; in w f32s[?2,5,4]; "
     "t = Transpose(w) perm=[0,2,1]; y = MatMul(x, t); out y", FOLDED(0, 1, FUSED_OK, 1)},
    /* ---- Reshapes that are Transposes ---- */
    {"reshape_col_to_row", 13, "in x f32s[2,3]; in v f32s[1,3]; const s i64[2] = 3,1; "
     "r = Reshape(v, s); y = MatMul(x, r); out y", FOLDED(0, 1, "Gemm=1 Reshape=0", 1)},
    {"reshape_3d", 13, "in x f32s[2,3,4]; in v f32s[2,1,4]; const s i64[3] = 2,4,1; "
     "r = Reshape(v, s); y = MatMul(x, r); out y",
     FOLDED(0, 1, "graphlab.FusedMatMul=1 Reshape=0", 1)},
    /* ---- other readers ---- */
    {"shared_with_relu", 13, "in x f32s[2,3]; in w f32s[4,3]; t = Transpose(w) perm=[1,0]; "
     "y = MatMul(x, t); z = Relu(t); out y, z", FOLDED(0, 1, "Gemm=1 Transpose=1", 1)},
    {"shared_by_two_products", 13, "in x f32s[2,3]; in u f32s[5,4]; in w f32s[4,3]; "
     "t = Transpose(w) perm=[1,0]; p = MatMul(x, t); q = MatMul(u, w); y = Add(p, p); "
     "z = MatMul(q, t); out y, z", FOLDED(-1, -1, "Gemm=2 Transpose=0", 2)},
    {"transpose_is_output", 13, "in x f32s[2,3]; in w f32s[4,3]; t = Transpose(w) "
     "perm=[1,0]; y = MatMul(x, t); out y, t", FOLDED(0, 1, "Gemm=1 Transpose=1", 1)},
    /* ---- refused ---- */
    {"batch_perm", 13, "in a f32s[3,2,4]; in b f32s[4,5]; t = Transpose(a) perm=[1,0,2]; "
     "y = MatMul(t, b); out y", REFUSED("moves batch dim 0")},
    {"attention_heads", 13, "in x f32s[1,4,2,3]; in b f32s[3,5]; "
     "t = Transpose(x) perm=[0,2,1,3]; y = MatMul(t, b); out y", REFUSED("moves batch dim 1")},
    {"key_transposed_with_heads", 13, "in k f32s[4,2,3]; in q f32s[2,5,3]; "
     "t = Transpose(k) perm=[1,2,0]; y = MatMul(q, t); out y",
     REFUSED("perm [1,2,0]) moves batch dim 0")},
    {"identity_perm", 13, "in a f32s[2,3]; in b f32s[3,4]; t = Transpose(a) perm=[0,1]; "
     "y = MatMul(t, b); out y", REFUSED("swaps nothing")},
    {"rank1", 13, "in a f32s[3]; in b f32s[3,4]; t = Transpose(a) perm=[0]; "
     "y = MatMul(t, b); out y", REFUSED("rank 1")},
    {"int32", 13, "in a i32[3,2]; in b i32[3,4]; t = Transpose(a) perm=[1,0]; "
     "y = MatMul(t, b); out y", REFUSED("is int32")},
    {"int64_gemm", 13, "in a i64[3,2]; in b i64[3,4]; t = Transpose(a) perm=[1,0]; "
     "y = Gemm(t, b); out y", REFUSED("is int64")},
    {"reshape_dynamic", 13, "in x f32s[2,3]; in v f32s?[1,3]; in s i64[2] = 3,1; "
     "r = Reshape(v, s); y = MatMul(x, r); out y", REFUSED("is not known")},
    {"reshape_not_size1", 13, "in x f32s[2,3]; in v f32s[2,3]; const s i64[2] = 3,2; "
     "r = Reshape(v, s); y = MatMul(v, r); out y",
     REFUSED("only equals a transpose when one of them is 1")},
    {"fused_needs_opset12", 11, "in x f32s[2,3,4]; in w f32s[2,5,4]; "
     "t = Transpose(w) perm=[0,2,1]; y = MatMul(x, t); out y", REFUSED("needs opset 12")},
    {"gemm_needs_c_below_11", 9, "in a f32s[3,2]; in b f32s[3,4]; "
     "t = Transpose(a) perm=[1,0]; y = MatMul(t, b); out y", REFUSED("needs opset 12")},
    {"f64_fused_below_15", 13, "in x f64[2,3,4]; in w f64[2,5,4]; "
     "t = Transpose(w) perm=[0,2,1]; y = MatMul(x, t); out y", REFUSED("float32 only")},
    /* ---- nothing to do ---- */
    {"plain_matmul", 13, "in a f32s[2,3]; in b f32s[3,4]; y = MatMul(a, b); out y", .want = NONE},
    {"reshape_heads_merged_dynamic", 13, "in a f32s[?1,?5,4,8]; in b f32s[32,6]; "
     "in s i64[3] = 1,5,32; r = Reshape(a, s); y = MatMul(r, b); out y", .want = NONE},
    {"reshape_flatten", 13, "in a f32s[2,3,4]; in b f32s[12,5]; const s i64[2] = 2,12; "
     "r = Reshape(a, s); y = MatMul(r, b); out y", .want = NONE},
};

/* ---- running one row ------------------------------------------------------------------- */

static void show(const fcase *c, const gl_pipeline *p, const gl_snapshot *s, const gl_graph *g)
{
    const char *only = getenv("GL_FTTEST_SHOW");
    if (!only || strcmp(only, c->name))
        return;
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++)
        gl_decision_print(&p->log.items[i], stderr);
    gn_print_graph(g, stderr);
}

static void check_decisions(const fcase *c, const gl_pipeline *p, const gl_snapshot *s,
                            const gl_snapshot *prev)
{
    size_t applied = 0, refused = 0, matching = 0;
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++) {
        const gl_decision *d = &p->log.items[i];
        cr_expect_str_eq(d->rule, "fold-transpose", "%s", c->name);
        applied += d->verdict == GL_APPLIED;
        refused += d->verdict == GL_REFUSED;
        matching += c->reason && strstr(d->reason, c->reason) &&
                    d->verdict == (c->want == FOLD ? GL_APPLIED : GL_REFUSED);
    }
    switch (c->want) {
    case FOLD:
        cr_expect_eq(applied, (size_t)c->applied, "%s: %zu applied, expected %d", c->name,
                     applied, c->applied);
        break;
    case REFUSE:
        cr_expect(matching > 0 && applied == 0, "%s: no refusal saying '%s' (%zu applied)",
                  c->name, c->reason, applied);
        break;
    case NONE:
        cr_expect_eq(applied + refused, 0, "%s: %zu decisions, expected none", c->name,
                     applied + refused);
        break;
    }
    if (c->want != FOLD)
        cr_expect(s->fingerprint == prev->fingerprint, "%s: the graph changed", c->name);
}

static void check_product(const fcase *c, const gl_graph *g)
{
    const gl_value *y = gl_find_value(g, "y");
    const gl_node *n = y ? y->producer : NULL;
    cr_assert_not_null(n, "%s: no producer of y", c->name);
    if (c->ta >= 0)
        cr_expect_eq(gl_node_attr_int(n, "transA", 0), c->ta, "%s: transA of %s", c->name,
                     n->op_type);
    if (c->tb >= 0)
        cr_expect_eq(gl_node_attr_int(n, "transB", 0), c->tb, "%s: transB of %s", c->name,
                     n->op_type);
}

/* With the function bodies instead of the kernel, and saved and loaded again. */
static void check_saved(const fcase *c, const gn_graph *b, const gl_model *before,
                        const gl_model *after, const char *dir)
{
    gl_model *bodies = gn_bodies_only(after);
    cr_expect(gn_count_op(bodies->graph, "test.body.FusedMatMul") > 0, "%s", c->name);
    gn_expect_same_outputs(c->name, b, before, bodies, RTOL, ATOL, false);
    gl_model_free(bodies);
    gn_expect_saved_same(c->name, b, after, dir);
}

static void run_case(const fcase *c, const char *dir)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes(c->name, c->opset, c->graph, NULL, PASSES, &b);
    if (p) {
        size_t k = p->n_steps - 1;
        const gl_model *before = p->steps[k - 1].model, *after = p->steps[k].model;
        show(c, p, &p->steps[k], after->graph);
        cr_expect_eq(gl_graph_verify(after->graph, false), GL_OK, "%s: %s", c->name,
                     gl_error_message());
        check_decisions(c, p, &p->steps[k], &p->steps[k - 1]);
        if (c->want == FOLD) {
            gn_expect_op_counts(c->name, c->ops, after->graph);
            check_product(c, after->graph);
        }
        gn_expect_same_outputs(c->name, &b, before, after, RTOL, ATOL, false);
        if (gn_count_op(after->graph, "graphlab.FusedMatMul"))
            check_saved(c, &b, before, after, dir);
    }
    gl_pipeline_free(p);
}

Test(fold_transpose, cases)
{
    char *dir = tu_tmpdir();
    cr_assert(dir, "no temporary folder");
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        run_case(&cases[i], dir);
    gn_expect_onnx_checker(dir);
    tu_rmtree(dir);
    free(dir);
}

/* `fold-transpose:1` stops after one rewrite, as every pass does. */
Test(fold_transpose, budget)
{
    gn_graph b;
    cr_assert(gn_build("budget", 13, "in x f32s[2,3]; in u f32s[2,3]; in w f32s[4,3]; "
                       "t = Transpose(w) perm=[1,0]; p = MatMul(x, t); q = MatMul(u, t); "
                       "out p, q", &b), "%s", b.err);
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    cr_assert_eq(gl_pass_list_parse("toposort,shape-inference,fold-transpose:1", &plan,
                                    &n_plan), GL_OK);
    gl_pipeline *p = NULL;
    cr_assert_eq(gl_pipeline_run(b.m, plan, n_plan, NULL, 0, &p), GL_OK, "%s",
                 gl_error_message());
    free(plan);
    const gl_graph *g = gl_pipeline_result(p)->graph;
    cr_expect_eq(gn_count_op(g, "Gemm"), 1);
    cr_expect_eq(gn_count_op(g, "MatMul"), 1);
    cr_expect_eq(gn_count_op(g, "Transpose"), 1, "the other MatMul still reads it");
    gl_pipeline_free(p);
}

/* test_dnnl_fused.c — fused groups (calls of model-local functions of domain
 * graphlab.fused) on the oneDNN backend, against the reference executor's expansion of
 * the body.
 *
 * Each row is one group: a head (Conv, depthwise Conv, ConvTranspose, MatMul, Gemm,
 * BatchNormalization) and a
 * chain of members, each reading the previous member's output, some with another operand:
 *   'c' a random constant of the given dims   'x' a random graph input of the given dims
 *   'r' the head's own input (a residual of the output's shape)
 *   0: none (an activation; Clip's 'c' operand is its min).
 * The head's input comes through a 1x1 Conv (`through`: it then arrives in the plan's
 * layout and the IR does not know its shape: the claim cannot build, the first run
 * does), or straight from a graph input of known shape (the claim builds the descriptor).
 * Under each layout policy the row names ('p' plain, 'n' nhwc, 'b' blocked) the dnnl run
 * must equal the reference run, and the plan must show the call as the row expects:
 *   FUSED    one entry on dnnl, its implementation a oneDNN kernel (no "ref") naming
 *            `what` (e.g. "eltwise_relu + sum"), the note listing the members;
 *   BODY     the claim refused: the executor runs the body (entry "body"), note `what`;
 *   MEMBERS  claimed, refused at the first run: "ref (members)", note `what`;
 *   UNIT     one entry on dnnl, a unit of several primitives run one after the other
 *            (a member that is no post-op starts the next one), its implementations
 *            ("A + post-ops | B") naming `what`.
 * A second run builds nothing and reorders no constant (the weight cache).
 */
#define TU_CASE_SHORTHANDS
#include "exec/compare.h"
#include "exec/exec.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { FUSED, BODY, MEMBERS, UNIT } expect_t;

typedef struct step_spec {
    const char *op;      /* NULL ends the chain; "graphlab.Gelu" names a domain */
    char kind;           /* the other operand, as above */
    int rank;
    int64_t dims[4];
    bool second;         /* the chain is the member's second operand */
    tu_attr attrs[3];
} step_spec;

typedef struct fcase {
    const char *name;
    char head;           /* 'c' Conv 16->16 3x3, 'd' depthwise 3x3, 't' ConvTranspose 16->8,
                          * 'm' MatMul [2,8,32]x[32,24], 'q' MatMul [16,1,32]x[32,24]
                          * (a stack of one-row products, as an attention projection
                          * whose sequence comes first), 'g' Gemm [8,32]x[32,24]+C[24],
                          * 'G' the same Gemm without C, 'b' MatMul [2,8,32]x[2,32,24]
                          * (a batch of products: B is a stack, nothing folds),
                          * 'T' Gemm [40,160]x[160,24]+C[24] (graphlab's many-rows kernel),
                          * 'R' MatMul of A [a_dims] by a constant B [K, n] (K: A's last),
                          * 'M' MatMul on int32, 'n' graphlab NhwcConv 16->16 3x3 on
                          * [1,8,8,16], 'B' BatchNormalization of [1,16,8,8], 'W' Conv
                          * 32->32 3x3 on [1,32,7,7] (graphlab's Winograd F(2x2) on AVX2),
                          * 'V' the same on [1,32,15,15] (F(4x4), its last tiles partial),
                          * 'U' on [1,32,17,17] (F(6x6), its last tiles of 5 outputs) */
    const char *layouts;
    bool through;        /* the head's input comes through a 1x1 Conv / a Relu */
    step_spec steps[4];
    expect_t expect;
    const char *what;
    double rtol, atol;   /* 0: RTOL, ATOL */
    const char *in_has;  /* the plan's input layouts say this too (NULL: not checked); on
                          * AVX-512 only, where oneDNN packs the weights ("(once)") */
    /* Without AVX-512 (tu_cpu_has_avx512), what the plan shows instead when avx2_what is
     * set: oneDNN 2.6's AVX2 kernels take fewer post-op chains. */
    expect_t avx2_expect;
    const char *avx2_what;
    const char *not_in;  /* FUSED: the implementation must not say this (NULL: unchecked) */
    int a_rank;          /* 'R': A's rank (2 or 3) and dims, B's columns */
    int64_t a_dims[3], n;
} fcase;

#define ROWS(n_, rank_, ...) .a_rank = (rank_), .a_dims = {__VA_ARGS__}, .n = (n_)
#define RTOL 1e-4
#define ATOL 1e-5
#define ACT(op_) {.op = (op_)}
/* a unit's [N] bias and a Gelu, fused (oneDNN's gelu_erf within 1e-3) */
#define BIAS_GELU(n_)                                                                      \
    {OPD("Add", 'c', 1, n_), ACT("graphlab.Gelu")}, .expect = FUSED,                        \
        .what = " + bias + eltwise_gelu_erf", .rtol = 1e-3
#define OPD(op_, kind_, rank_, ...)                                                        \
    {.op = (op_), .kind = (kind_), .rank = (rank_), .dims = {__VA_ARGS__}}

/* ---- building one row ------------------------------------------------------------------- */

typedef struct built {
    gl_model *m;
    gl_tensor *in[6];
    size_t n_in;
} built;

static uint32_t seed = 11;

static gl_value *const_f32(gl_graph *g, const char *name, int rank, const int64_t *dims)
{
    gl_tensor *t = tu_random_f32(rank, dims, &seed);
    gl_value *v = tu_const_f32(g, name, rank, dims, gl_tensor_data(t));
    gl_tensor_free(t);
    return v;
}

static gl_value *graph_input(built *b, const char *name, gl_dtype dt, int rank,
                             const int64_t *dims, bool declared)
{
    int64_t unknown[4] = {U, U, U, U};
    gl_value *v = tu_input(b->m->graph, name, dt, rank, declared ? dims : unknown);
    gl_tensor *t = tu_random_f32(rank, dims, &seed);
    if (dt == GL_DT_INT32) {
        int32_t vals[2 * 8 * 32];
        const float *p = gl_tensor_data(t);
        for (int64_t i = 0; i < t->count && i < 2 * 8 * 32; i++)
            vals[i] = (int32_t)(p[i] * 4);
        gl_tensor_free(t);
        t = tu_tensor_of(GL_DT_INT32, rank, dims, vals);
    }
    b->in[b->n_in++] = t;
    return v;
}

/* The function's formal input for actual `v`: both lists grow together. */
static gl_value *formal(gl_function *f, gl_value **actual, size_t *n, gl_value *v)
{
    char name[16];
    snprintf(name, sizeof(name), "F%zu", *n);
    gl_value *fv = gl_add_value(f->body, name);
    gl_graph_add_input(f->body, fv);
    actual[(*n)++] = v;
    return fv;
}

/* BatchNormalization of fx [1,16,8,8] with random scale, B and mean in [-1, 1) and
 * variances in [0.5, 1.5). */
static gl_node *batchnorm_head(gl_graph *g, gl_function *f, gl_value **actual, size_t *n_act,
                               gl_value *fx)
{
    static const char *const names[] = {"scale", "B", "mean", "var"};
    int64_t ch = 16;
    gl_value *ins[5] = {fx};
    for (size_t i = 0; i < 4; i++) {
        float d[16];
        for (int64_t j = 0; j < ch; j++)
            d[j] = i == 3 ? 1.0f + 0.5f * tu_uniform(&seed) : tu_uniform(&seed);
        gl_value *v = tu_const_f32(g, names[i], 1, &ch, d);
        ins[i + 1] = formal(f, actual, n_act, v);
    }
    return gl_add_node(f->body, "BatchNormalization", "", "head", ins, 5, 1);
}

static gl_node *add_op(gl_graph *g, const char *op, const char *name, gl_value **ins, size_t n)
{
    const char *dot = strchr(op, '.');
    char domain[32] = "";
    if (dot)
        snprintf(domain, sizeof(domain), "%.*s", (int)(dot - op), op);
    return gl_add_node(g, dot ? dot + 1 : op, domain, name, ins, n, 1);
}

static built build_row(const fcase *c)
{
    built b = {.m = tu_model(c->head == 'M' ? 13 : 20)};
    gl_model *m = b.m;
    gl_model_set_opset(m, "graphlab.fused", 1);
    gl_model_set_opset(m, "graphlab", 1);
    gl_graph *g = m->graph;
    bool conv = strchr("cdtnBWVU", c->head) != NULL, wino = strchr("WVU", c->head) != NULL;
    int64_t ch = wino ? 32 : 16,
            side = c->head == 'W' ? 7 : c->head == 'V' ? 15 : c->head == 'U' ? 17 : 8;
    int64_t xd[4] = {1, ch, side, side}, md[3] = {2, 8, 32}, gd[2] = {8, 32};
    if (c->head == 'q')
        memcpy(md, (int64_t[]){16, 1, 32}, sizeof(md));
    if (c->head == 'n')
        memcpy(xd, (int64_t[]){1, 8, 8, 16}, sizeof(xd));
    bool gemm = c->head == 'g' || c->head == 'G' || c->head == 'T';
    if (c->head == 'T')
        gd[0] = 40, gd[1] = 160;
    const int64_t *dims = conv ? xd : gemm ? gd : c->head == 'R' ? c->a_dims : md;
    int rank = conv ? 4 : gemm ? 2 : c->head == 'R' ? c->a_rank : 3;
    gl_dtype dt = c->head == 'M' ? GL_DT_INT32 : GL_DT_FLOAT;
    gl_value *x = graph_input(&b, "x", dt, rank, dims, !c->through);
    if (c->through && conv && c->head != 'n')
        x = tu_node(g, "Conv", "pre", 2, x, const_f32(g, "wpre", 4, (int64_t[]){ch, ch, 1, 1}))
                ->outputs[0];
    else if (c->through)
        x = tu_node(g, "Relu", "pre", 1, x)->outputs[0];

    gl_function *f = gl_model_add_function(m, "graphlab.fused", "Fused_1");
    f->opsets = gl_xcalloc(2, sizeof(*f->opsets));
    f->opsets[0] = (gl_opset){gl_xstrdup(""), c->head == 'M' ? 13 : 20};
    f->opsets[1] = (gl_opset){gl_xstrdup("graphlab"), 1};
    f->n_opsets = 2;
    gl_value *actual[12];
    size_t n_act = 0;
    gl_value *fx = formal(f, actual, &n_act, x);
    gl_node *head;
    if (c->head == 'B') {
        head = batchnorm_head(g, f, actual, &n_act, fx);
    } else if (conv) {
        bool dw = c->head == 'd', tr = c->head == 't';
        int64_t wd[4] = {ch, dw ? 1 : tr ? 8 : ch, 3, 3}, oc = tr ? 8 : ch;
        gl_value *w = formal(f, actual, &n_act, const_f32(g, "w", 4, wd));
        gl_value *bias = formal(f, actual, &n_act, const_f32(g, "b", 1, &oc));
        head = c->head == 'n' ? add_op(f->body, "graphlab.NhwcConv", "head",
                                       (gl_value *[]){fx, w, bias}, 3)
                              : tu_node(f->body, tr ? "ConvTranspose" : "Conv", "head", 3, fx,
                                        w, bias);
        if (!tr)
            tu_apply_attrs(head, (tu_attr[]){AINTS("pads", 4, 1, 1, 1, 1),
                                             AI("group", dw ? 16 : 1), {0}});
    } else if (c->head == 'g' || c->head == 'T') {
        gl_value *w = formal(f, actual, &n_act, const_f32(g, "w", 2, (int64_t[]){gd[1], 24}));
        gl_value *cc = formal(f, actual, &n_act, const_f32(g, "b", 1, (int64_t[]){24}));
        head = tu_node(f->body, "Gemm", "head", 3, fx, w, cc);
    } else if (c->head == 'G') {
        gl_value *w = formal(f, actual, &n_act, const_f32(g, "w", 2, (int64_t[]){32, 24}));
        head = tu_node(f->body, "Gemm", "head", 2, fx, w);
    } else {
        gl_value *w;
        if (dt == GL_DT_INT32) {
            int32_t v[32 * 24];
            for (int i = 0; i < 32 * 24; i++)
                v[i] = i % 7 - 3;
            gl_tensor *t = tu_tensor_of(GL_DT_INT32, 2, (int64_t[]){32, 24}, v);
            w = gl_add_initializer(g, "w", t);
        } else {
            w = c->head == 'b'   ? const_f32(g, "w", 3, (int64_t[]){2, 32, 24})
                : c->head == 'R' ? const_f32(g, "w", 2, (int64_t[]){dims[rank - 1], c->n})
                                 : const_f32(g, "w", 2, (int64_t[]){32, 24});
        }
        head = tu_node(f->body, "MatMul", "head", 2, fx, formal(f, actual, &n_act, w));
    }
    gl_value *prev = head->outputs[0];
    for (size_t i = 0; i < GL_ARRAY_LEN(c->steps) && c->steps[i].op; i++) {
        const step_spec *s = &c->steps[i];
        char name[16];
        snprintf(name, sizeof(name), "s%zu", i);
        gl_value *ins[2] = {prev, NULL};
        size_t n = 1;
        if (s->kind) {
            gl_value *o = NULL;
            char oname[16];
            snprintf(oname, sizeof(oname), "o%zu", i);
            if (s->kind == 'c') {
                o = const_f32(g, oname, s->rank, s->dims);
            } else if (s->kind == 'x') {
                o = graph_input(&b, oname, GL_DT_FLOAT, s->rank, s->dims, true);
            } else if (s->kind == 'r') {
                o = x;
            }
            gl_value *fo = formal(f, actual, &n_act, o);
            ins[s->second ? 0 : 1] = fo;
            ins[s->second ? 1 : 0] = prev;
            n = 2;
        }
        gl_node *nd = add_op(f->body, s->op, name, ins, n);
        tu_apply_attrs(nd, s->attrs);
        prev = nd->outputs[0];
    }
    gl_graph_add_output(f->body, prev);
    gl_node *call = gl_add_node(g, "Fused_1", "graphlab.fused", "g", actual, n_act, 1);
    tu_output(g, call->outputs[0]);
    return b;
}

static void free_built(built *b)
{
    for (size_t i = 0; i < b->n_in; i++)
        gl_tensor_free(b->in[i]);
    gl_model_free(b->m);
}

static void check_entry(const fcase *row, const gl_exec *e, const char *what)
{
    fcase here = *row;
    if (row->avx2_what && !tu_cpu_has_avx512()) {
        here.expect = row->avx2_expect;
        here.what = row->avx2_what;
    }
    const fcase *c = &here;
    const gl_plan_entry *en = tu_plan_entry(e, "g", 0);
    cr_assert_not_null(en, "%s: no plan entry", what);
    const char *impl = en->info.impl, *note = en->info.note;
    switch (c->expect) {
    case FUSED:
        cr_expect(strcmp(en->backend, "dnnl") == 0 && !strstr(impl, "ref") &&
                      strstr(impl, c->what) && strstr(note, "fused: "),
                  "%s: expected one oneDNN kernel with '%s', got %s %s (%s)", what, c->what,
                  en->backend, impl, note);
        cr_expect(!c->not_in || !strstr(impl, c->not_in), "%s: '%s' in the implementation %s",
                  what, c->not_in, impl);
        cr_expect(gl_exec_plan_count(e) == (c->through ? 2u : 1u),
                  "%s: the members have entries of their own", what);
        cr_expect(!c->in_has || !tu_cpu_has_avx512() || strstr(en->info.in_layouts, c->in_has),
                  "%s: expected '%s' in the input layouts, got %s", what, c->in_has,
                  en->info.in_layouts);
        break;
    case BODY:
        cr_expect(strcmp(en->backend, "body") == 0 && strstr(note, c->what),
                  "%s: expected the body, saying '%s'; got %s %s (%s)", what, c->what,
                  en->backend, impl, note);
        break;
    case UNIT:
        cr_expect(strcmp(en->backend, "dnnl") == 0 && strstr(impl, c->what) &&
                      strstr(note, "unit of "),
                  "%s: expected a unit of oneDNN primitives '%s', got %s %s (%s)", what,
                  c->what, en->backend, impl, note);
        cr_expect(gl_exec_plan_count(e) == (c->through ? 2u : 1u),
                  "%s: the members have entries of their own", what);
        break;
    case MEMBERS:
        cr_expect(strcmp(en->backend, "dnnl") == 0 && strcmp(impl, "ref (members)") == 0 &&
                      strstr(note, c->what),
                  "%s: expected the members on the reference kernels, saying '%s'; got %s %s "
                  "(%s)",
                  what, c->what, en->backend, impl, note);
        break;
    }
}

/* got within (rtol, atol) of want; `what` and `run` say which run in the message. */
static void expect_close(const gl_tensor *got, const gl_tensor *want, double rtol, double atol,
                         const char *what, const char *run)
{
    gl_compare r;
    gl_compare_tensors(got, want, rtol ? rtol : RTOL, atol ? atol : ATOL, &r);
    char line[256];
    gl_compare_format(&r, line, sizeof(line));
    cr_expect(r.ok, "%s, %s: dnnl vs ref: %s", what, run, line);
}

/* The reference's and the dnnl backend's (under `layout`) first runs of b: *want, *got. */
static gl_exec *run_ref_and_dnnl(const built *b, char layout, const char *what,
                                 gl_tensor **want, gl_tensor **got, gl_exec **ref)
{
    *ref = tu_exec_run(b->m, "ref", NULL, b->in, b->n_in, want, 1, what);
    return tu_exec_run(b->m, "dnnl", tu_layout_name(layout), b->in, b->n_in, got, 1, what);
}

static void expect_special_run(const fcase *c, gl_tensor *got, const gl_tensor *want,
                               size_t n, const char *run, const char *what)
{
    char which[96];
    snprintf(which, sizeof(which), "NaN and infinities in the last %zu inputs (%s)", n, run);
    expect_close(got, want, c->rtol, c->atol, what, which);
    gl_tensor_free(got);
}

/* Issue 26: NaN, +Inf, -Inf and -0 planted in the last `n` graph inputs (the last alone:
 * a member's operand, read by a later primitive of a unit), against the reference on the
 * same inputs: on the plan that ran finite inputs (nothing is built again), and on a new
 * plan whose first run it is (nothing is known of the unit's post-ops yet). */
static void rerun_with_specials(const fcase *c, const built *b, gl_exec *dn, char layout,
                                size_t n, const char *what)
{
    gl_tensor *in[6], *want = NULL, *got = NULL;
    for (size_t i = 0; i < b->n_in; i++)
        in[i] = i + n >= b->n_in ? tu_with_specials(b->in[i]) : gl_tensor_share(b->in[i]);
    gl_exec_free(tu_exec_run(b->m, "ref", NULL, in, b->n_in, &want, 1, what));
    tu_exec_rerun_cached(dn, (const gl_tensor *const *)in, b->n_in, &got, 1, what);
    expect_special_run(c, got, want, n, "a later run", what);
    gl_exec_free(tu_exec_run(b->m, "dnnl", tu_layout_name(layout), in, b->n_in, &got, 1, what));
    expect_special_run(c, got, want, n, "the first run", what);
    gl_tensor_free(want);
    for (size_t i = 0; i < b->n_in; i++)
        gl_tensor_free(in[i]);
}

static void run_case(const fcase *c)
{
    for (const char *p = c->layouts; *p; p++) {
        char what[160];
        snprintf(what, sizeof(what), "%s (%s)", c->name, tu_layout_name(*p));
        built b = build_row(c);
        gl_tensor *want = NULL, *got = NULL;
        gl_exec *ref, *dn = run_ref_and_dnnl(&b, *p, what, &want, &got, &ref);
        if (getenv("GL_TEST_PLAN")) {
            fprintf(stderr, "== %s\n", what);
            gl_exec_print_plan(dn, stderr);
        }
        expect_close(got, want, c->rtol, c->atol, what, "the first run");
        check_entry(c, dn, what);
        gl_tensor_free(got);
        got = NULL;
        tu_exec_rerun_cached(dn, (const gl_tensor *const *)b.in, b.n_in, &got, 1, what);
        expect_close(got, want, c->rtol, c->atol, what, "the second run");
        gl_tensor_free(got);
        gl_tensor_free(want);
        rerun_with_specials(c, &b, dn, *p, b.n_in, what);
        rerun_with_specials(c, &b, dn, *p, 1, what);
        gl_exec_free(ref);
        gl_exec_free(dn);
        free_built(&b);
    }
}

/* ---- the rows ---------------------------------------------------------------------------- */

static const fcase conv_cases[] = {
    {"Conv+Relu", 'c', "pnb", true, {ACT("Relu")}, .expect = FUSED,
     .what = "eltwise_relu"},
    {"Conv+Relu, shapes known at the claim", 'c', "nb", false, {ACT("Relu")}, .expect = FUSED,
     .what = "eltwise_relu"},
    {"Conv+Clip (opset 20: bounds from constants)", 'c', "nb", true,
     {{.op = "Clip", .kind = 'c', .rank = 0}}, .expect = FUSED,
     .what = "eltwise_clip"},
    {"Conv+Add(residual in the layout)+Relu", 'c', "nb", true,
     {OPD("Add", 'r', 4, 1, 16, 8, 8), ACT("Relu")}, .expect = FUSED,
     .what = "sum + eltwise_relu"},
    /* on AVX2 a sum after another post-op is oneDNN's reference convolution: refused at
     * the first run (the head's input shape is not known at the claim) */
    {"Conv+Relu+Add(plain residual, reordered)", 'c', "nb", true,
     {ACT("Relu"), OPD("Add", 'x', 4, 1, 16, 8, 8)}, .expect = FUSED,
     .what = "eltwise_relu + sum", .avx2_expect = MEMBERS,
     .avx2_what = "oneDNN would run its reference convolution"},
    {"Conv+Mul(per-channel)+Add(per-channel)", 'c', "nb", true,
     {OPD("Mul", 'c', 4, 1, 16, 1, 1), OPD("Add", 'c', 3, 16, 1, 1)}, .expect = FUSED,
     .what = "binary_mul + binary_add"},
    {"Conv+Sub(scalar)+Max(scalar)", 'c', "nb", true,
     {OPD("Sub", 'c', 1, 1), OPD("Max", 'c', 0)}, .expect = FUSED,
     .what = "binary_sub + binary_max"},
    {"Conv+Div(per-channel)+Min(full tensor)", 'c', "nb", true,
     {OPD("Div", 'c', 4, 1, 16, 1, 1), OPD("Min", 'x', 4, 1, 16, 8, 8)}, .expect = FUSED,
     .what = "binary_div + binary_min"},
    /* a division by a constant without zeros makes no NaN that the Relu would hide */
    {"Conv+Div(per-channel)+Relu", 'c', "nb", true,
     {OPD("Div", 'c', 4, 1, 16, 1, 1), ACT("Relu")}, .expect = FUSED,
     .what = "binary_div + eltwise_relu", .rtol = 1e-3},
    {"Conv+Sigmoid+Tanh+LeakyRelu+Elu", 'c', "nb", true,
     {ACT("Sigmoid"), ACT("Tanh"), ACT("LeakyRelu"), ACT("Elu")}, .expect = FUSED,
     .what = "eltwise_logistic + eltwise_tanh + eltwise_relu + eltwise_elu",
     /* without AVX-512 oneDNN's tanh is five times its logistic: graphlab's kernel runs
      * it, a segment of its own (dn_eltwise_post_slow), the members after it too */
     .avx2_expect = UNIT, .avx2_what = "eltwise_logistic | graphlab:avx2 tanh | jit"},
    {"Conv+HardSigmoid (two steps)", 'c', "nb", true, {ACT("HardSigmoid")}, .expect = FUSED,
     .what = "eltwise_linear + eltwise_clip"},
    /* without AVX-512 oneDNN's swish post-op costs more than the convolution: graphlab's
     * kernel runs it, a segment of its own, and the sum after it on oneDNN again */
    {"Conv+graphlab.Silu", 'c', "nb", true, {ACT("graphlab.Silu")}, .expect = FUSED,
     .what = "eltwise_swish", .avx2_expect = UNIT, .avx2_what = "jit:avx2 | graphlab:avx2 silu"},
    {"Conv+graphlab.Silu+Add(full tensor)", 'c', "nb", true,
     {ACT("graphlab.Silu"), OPD("Add", 'x', 4, 1, 16, 8, 8)}, .expect = FUSED,
     .what = "eltwise_swish + sum", .avx2_expect = UNIT,
     .avx2_what = "jit:avx2 | graphlab:avx2 silu | "},
    {"Conv+graphlab.HardSwish", 'c', "nb", true, {ACT("graphlab.HardSwish")}, .expect = FUSED,
     .what = "eltwise_hardswish"},
    {"Conv+graphlab.Gelu", 'c', "nb", true, {ACT("graphlab.Gelu")}, .expect = FUSED,
     .what = "eltwise_gelu_erf", .rtol = 1e-3},
    {"depthwise Conv+Clip", 'd', "nb", true, {{.op = "Clip", .kind = 'c', .rank = 0}},
     .expect = FUSED,
     .what = "eltwise_clip"},
    {"graphlab.NhwcConv+Relu+Sigmoid (channels-last, plain bytes)", 'n', "pn", false,
     {ACT("Relu"), ACT("Sigmoid")}, .expect = FUSED, .what = "eltwise_relu + eltwise_logistic"},
    /* The Clip member is read at its own domain's opset (20: its min is an input), not
     * at the head's (graphlab 1, where Clip's bounds were attributes): read at the
     * head's, the bound was dropped (a channels-last MobileNetV2 gave max_abs 3e5). */
    {"graphlab.NhwcConv+Clip (its min an input, opset 20)", 'n', "pn", false,
     {{.op = "Clip", .kind = 'c', .rank = 0}}, .expect = FUSED, .what = "eltwise_clip"},
    /* the residual of a channels-last ResNet: a sum in the nhwc destination */
    {"graphlab.NhwcConv+Add([N,H,W,C])+Relu", 'n', "pn", false,
     {OPD("Add", 'x', 4, 1, 8, 8, 16), ACT("Relu")}, .expect = FUSED,
     .what = "sum + eltwise_relu"},
    {"graphlab.NhwcConv+Add([N,H,W,C]) second", 'n', "pn", false,
     {{.op = "Add", .kind = 'x', .rank = 4, .dims = {1, 8, 8, 16}, .second = true}},
     .expect = FUSED, .what = "sum"},
    /* graphlab's Winograd kernel on AVX2 (dn_wino.c) takes a bias, sums and relus */
    {"Conv 32ch 7x7+Relu", 'W', "b", true, {ACT("Relu")}, .expect = FUSED,
     .what = "eltwise_relu", .rtol = 1e-3, .atol = 1e-4, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 winograd_2x3 nChw8c + eltwise_relu"},
    {"Conv 32ch 7x7+Add(residual in the layout)+Relu", 'W', "b", true,
     {OPD("Add", 'r', 4, 1, 32, 7, 7), ACT("Relu")}, .expect = FUSED,
     .what = "sum + eltwise_relu", .rtol = 1e-3, .atol = 1e-4, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 winograd_2x3 nChw8c + sum + eltwise_relu"},
    {"Conv 32ch 7x7+Add(residual) second", 'W', "b", true,
     {{.op = "Add", .kind = 'r', .rank = 4, .dims = {1, 32, 7, 7}, .second = true}},
     .expect = FUSED, .what = "sum", .rtol = 1e-3, .atol = 1e-4, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 winograd_2x3 nChw8c + sum"},
    {"Conv 32ch 15x15+Relu (F(4x4))", 'V', "b", true, {ACT("Relu")}, .expect = FUSED,
     .what = "eltwise_relu", .rtol = 1e-3, .atol = 1e-4, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 winograd_4x3 nChw8c + eltwise_relu"},
    {"Conv 32ch 15x15+Add(residual in the layout)+Relu (F(4x4))", 'V', "b", true,
     {OPD("Add", 'r', 4, 1, 32, 15, 15), ACT("Relu")}, .expect = FUSED,
     .what = "sum + eltwise_relu", .rtol = 1e-3, .atol = 1e-4, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 winograd_4x3 nChw8c + sum + eltwise_relu"},
    {"Conv 32ch 15x15+Add(residual) second (F(4x4))", 'V', "b", true,
     {{.op = "Add", .kind = 'r', .rank = 4, .dims = {1, 32, 15, 15}, .second = true}},
     .expect = FUSED, .what = "sum", .rtol = 1e-3, .atol = 1e-4, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 winograd_4x3 nChw8c + sum"},
    /* F(6x6) rounds 3-5 times more than F(4x4): up to 4.2e-4 on these outputs (their input
     * through a 1x1 Conv of unscaled weights), so atol 1e-3; a lost sum or relu is off by
     * about 1 */
    {"Conv 32ch 17x17+Relu (F(6x6))", 'U', "b", true, {ACT("Relu")}, .expect = FUSED,
     .what = "eltwise_relu", .rtol = 1e-3, .atol = 1e-3, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 winograd_6x3 nChw8c + eltwise_relu"},
    {"Conv 32ch 17x17+Add(residual in the layout)+Relu (F(6x6))", 'U', "b", true,
     {OPD("Add", 'r', 4, 1, 32, 17, 17), ACT("Relu")}, .expect = FUSED,
     .what = "sum + eltwise_relu", .rtol = 1e-3, .atol = 1e-3, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 winograd_6x3 nChw8c + sum + eltwise_relu"},
    {"Conv 32ch 17x17+Add(residual) second (F(6x6))", 'U', "b", true,
     {{.op = "Add", .kind = 'r', .rank = 4, .dims = {1, 32, 17, 17}, .second = true}},
     .expect = FUSED, .what = "sum", .rtol = 1e-3, .atol = 1e-3, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 winograd_6x3 nChw8c + sum"},
    /* any other post-op keeps oneDNN's direct kernel */
    {"Conv 32ch 7x7+Sigmoid", 'W', "b", true, {ACT("Sigmoid")}, .expect = FUSED,
     .what = "eltwise_logistic", .rtol = 1e-3, .atol = 1e-4, .avx2_expect = FUSED,
     .avx2_what = "jit:avx2 + eltwise_logistic"},
    {"ConvTranspose+Relu+Mul(per-channel)", 't', "nb", true,
     {ACT("Relu"), OPD("Mul", 'c', 4, 1, 8, 1, 1)}, .expect = FUSED,
     .what = "eltwise_relu + binary_mul"},
};

static const fcase matmul_cases[] = {
    {"MatMul+Add([N] bias)+Relu", 'm', "p", false, {OPD("Add", 'c', 1, 24), ACT("Relu")},
     .expect = FUSED,
     .what = " + bias + eltwise_relu"},
    {"MatMul+Add(bias)+graphlab.Gelu", 'm', "p", true,
     {OPD("Add", 'c', 1, 24), ACT("graphlab.Gelu")}, .expect = FUSED,
     .what = " + bias + eltwise_gelu_erf", .rtol = 1e-3},
    {"MatMul+ai.onnx Gelu(tanh)", 'm', "p", false,
     {{.op = "Gelu", .attrs = {AS("approximate", "tanh")}}}, .expect = FUSED,
     .what = "eltwise_gelu_tanh", .rtol = 1e-3, .avx2_expect = UNIT,
     .avx2_what = "gemm:jit | graphlab:avx2 gelu_tanh"},
    {"MatMul+Add+graphlab.GeluTanh (GPT-2's FFN)", 'm', "p", false,
     {OPD("Add", 'c', 1, 24), ACT("graphlab.GeluTanh")}, .expect = FUSED,
     .what = " + bias + eltwise_gelu_tanh", .rtol = 1e-3, .avx2_expect = UNIT,
     .avx2_what = "gemm:jit + bias | graphlab:avx2 gelu_tanh"},
    {"MatMul+Add(full residual)", 'm', "p", false, {OPD("Add", 'x', 3, 2, 8, 24)}, .expect = FUSED,
     .what = "binary_add", .not_in = "bias"},
    /* A per-column Add first is the matmul's own bias argument (cheaper than a binary
     * post-op); what follows stays post-ops, in order. Any other Add is a post-op. */
    {"MatMul+Add([1,N] bias)+Add(full residual)", 'm', "p", false,
     {OPD("Add", 'c', 2, 1, 24), OPD("Add", 'x', 3, 2, 8, 24)}, .expect = FUSED,
     .what = " + bias + binary_add"},
    {"MatMul+Add([1,1,N] bias, the chain second)+Relu", 'm', "p", true,
     {{.op = "Add", .kind = 'c', .rank = 3, .dims = {1, 1, 24}, .second = true}, ACT("Relu")},
     .expect = FUSED, .what = " + bias + eltwise_relu"},
    {"MatMul+Add(a graph input [N] as bias)+graphlab.Gelu", 'm', "p", false,
     {OPD("Add", 'x', 1, 24), ACT("graphlab.Gelu")}, .expect = FUSED,
     .what = " + bias + eltwise_gelu_erf", .rtol = 1e-3},
    {"batched B: MatMul+Add([1,1,N] bias)+Relu", 'b', "p", true,
     {OPD("Add", 'c', 3, 1, 1, 24), ACT("Relu")}, .expect = FUSED,
     .what = " + bias + eltwise_relu"},
    {"batched B: MatMul+Add([N] bias)+Add(full residual)", 'b', "p", false,
     {OPD("Add", 'c', 1, 24), OPD("Add", 'x', 3, 2, 8, 24)}, .expect = FUSED,
     .what = " + bias + binary_add"},
    {"MatMul+Relu+Add([N]): the bias only first", 'm', "p", false,
     {ACT("Relu"), OPD("Add", 'c', 1, 24)}, .expect = FUSED,
     .what = "eltwise_relu + binary_add", .not_in = "bias"},
    {"MatMul+Mul(scalar)", 'm', "p", false, {OPD("Mul", 'c', 0)}, .expect = FUSED,
     .what = "binary_mul"},
    /* one tall product [16,32]x[32,24], its operands described over that matrix */
    {"stacked rows: MatMul+Add([N] bias)", 'q', "p", true, {OPD("Add", 'c', 1, 24)},
     .expect = FUSED, .what = " + bias", .in_has = "(once)"},
    {"stacked rows: MatMul+Add([1,1,N] bias)+Relu", 'q', "p", false,
     {OPD("Add", 'c', 3, 1, 1, 24), ACT("Relu")}, .expect = FUSED,
     .what = " + bias + eltwise_relu", .in_has = "(once)"},
    {"stacked rows: MatMul+Add(full residual)+Mul(scalar)", 'q', "p", false,
     {OPD("Add", 'x', 3, 16, 1, 24), OPD("Mul", 'c', 0)}, .expect = FUSED,
     .what = "binary_add + binary_mul", .in_has = "(once)", .not_in = "bias"},
    {"Gemm+Relu+Add(residual)", 'g', "p", false, {ACT("Relu"), OPD("Add", 'x', 2, 8, 24)},
     .expect = FUSED,
     .what = "eltwise_relu + binary_add"},
    /* 8 rows by constant weights: graphlab's few-rows kernel applies the Relu (AVX2) */
    {"Gemm+Relu", 'g', "p", false, {ACT("Relu")}, .expect = FUSED, .what = "eltwise_relu",
     .avx2_expect = FUSED, .avx2_what = "graphlab:avx2 8 rows + relu"},
    {"Gemm+HardSwish (MobileNetV3's classifier at batch 8)", 'g', "p", false,
     {ACT("HardSwish")}, .expect = FUSED, .what = "eltwise_hardswish", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 8 rows + hardswish"},
    {"Gemm+graphlab.Gelu", 'g', "p", false, {ACT("graphlab.Gelu")}, .expect = FUSED,
     .what = "eltwise_gelu_erf", .rtol = 1e-3, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 8 rows + gelu_erf"},
    {"Gemm without C+Add([N] bias)+Relu", 'G', "p", true, {OPD("Add", 'c', 1, 24), ACT("Relu")},
     .expect = FUSED, .what = " + bias + eltwise_relu"},
    {"Gemm with C+Add([N])", 'g', "p", false, {OPD("Add", 'c', 1, 24)},
     .expect = FUSED, .what = "binary_add", .not_in = "bias"},
    /* 40 rows, K 160: graphlab's many-rows kernel applies it (AVX2) */
    {"Gemm+Relu, 40 rows", 'T', "p", false, {ACT("Relu")}, .expect = FUSED,
     .what = "eltwise_relu", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 40 rows tiled + relu"},
    {"Gemm+Add(residual)+Relu, 40 rows", 'T', "p", false,
     {OPD("Add", 'x', 2, 40, 24), ACT("Relu")}, .expect = FUSED,
     .what = "binary_add + eltwise_relu", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 40 rows tiled + add + relu"},
};

/* DenseNet's pre-activation BatchNormalization + Relu: one batch normalization with a
 * relu post-op, on its jit kernel in nhwc and blocked layouts (plain: oneDNN 2.6's
 * vectorized ncsp one); without AVX-512, graphlab's kernel applies the relu (dn_bnorm.c).
 * It takes that one post-op and no other. */
static const fcase batchnorm_cases[] = {
    {"BatchNormalization+Relu", 'B', "pnb", true, {ACT("Relu")}, .expect = FUSED,
     .what = "eltwise_relu", .avx2_expect = FUSED, .avx2_what = "graphlab:avx2"},
    {"BatchNormalization+Relu, shapes known at the claim", 'B', "pnb", false, {ACT("Relu")},
     .expect = FUSED, .what = "eltwise_relu", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2"},
    /* bnorm_jit:avx512_core; on AVX2 graphlab's, in the layout it arrives in */
    {"BatchNormalization+Relu on the jit kernel", 'B', "b", true, {ACT("Relu")},
     .expect = FUSED, .what = "_jit:", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 nChw8c + eltwise_relu"},
    {"BatchNormalization+Relu on the jit kernel, nhwc", 'B', "n", true, {ACT("Relu")},
     .expect = FUSED, .what = "_jit:", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 nhwc + eltwise_relu"},
    {"BatchNormalization+LeakyRelu", 'B', "pnb", true,
     {{.op = "LeakyRelu", .attrs = {AF("alpha", 0.1f)}}}, .expect = FUSED,
     .what = "eltwise_relu", .avx2_expect = FUSED, .avx2_what = "graphlab:avx2"},
    {"BatchNormalization+Sigmoid", 'B', "nb", true, {ACT("Sigmoid")}, .expect = BODY,
     .what = "one relu post-op only"},
    {"BatchNormalization+Mul(scalar)", 'B', "n", false, {OPD("Mul", 'c', 0)}, .expect = BODY,
     .what = "one relu post-op only"},
    {"BatchNormalization+Relu+Relu", 'B', "n", false, {ACT("Relu"), ACT("Relu")},
     .expect = BODY, .what = "takes one post-op, a relu"},
    {"BatchNormalization+Relu+Relu, found at the first run", 'B', "n", true,
     {ACT("Relu"), ACT("Relu")}, .expect = MEMBERS, .what = "takes one post-op, a relu"},
};

/* Groups of several primitives: a member that is no post-op starts the next one. */
static const fcase unit_cases[] = {
    /* the product's kernel (brg: on AVX-512, gemm:jit on AVX2), then softmax's own */
    {"MatMul+Softmax", 'm', "p", false, {ACT("Softmax")}, .expect = UNIT,
     .what = " | jit:"},
    {"FFN: MatMul+Gelu+MatMul", 'm', "p", true,
     {ACT("graphlab.Gelu"), OPD("MatMul", 'c', 2, 24, 16)}, .expect = UNIT,
     .what = "eltwise_gelu_erf | ", .rtol = 1e-3},
    /* the second primitive reads a graph input of its own: a NaN there, none in the
     * first's input, must still reach its Relu (issue 26) */
    {"MatMul+Relu, then MatMul by a graph input+Relu", 'm', "p", false,
     {ACT("Relu"), OPD("MatMul", 'x', 2, 24, 16), ACT("Relu")}, .expect = UNIT,
     .what = "eltwise_relu | "},
    {"Conv+Clip then depthwise Conv+Clip", 'c', "nb", true,
     {{.op = "Clip", .kind = 'c', .rank = 0},
      {.op = "Conv", .kind = 'c', .rank = 4, .dims = {16, 1, 3, 3},
       .attrs = {AI("group", 16), AINTS("pads", 4, 1, 1, 1, 1)}},
      {.op = "Clip", .kind = 'c', .rank = 0}},
     .expect = UNIT, .what = "eltwise_clip"},
};

/* Groups oneDNN does not run as one kernel. */
static const fcase refused_cases[] = {
    {"an operand that grows the output", 'c', "n", false, {OPD("Add", 'x', 4, 2, 16, 8, 8)},
     .expect = BODY,
     .what = "does not broadcast into the output"},
    {"an operand that grows the output, found at the first run", 'c', "n", true,
     {OPD("Add", 'x', 4, 2, 16, 8, 8)}, .expect = MEMBERS,
     .what = "does not broadcast into the output"},
    {"a per-row operand (oneDNN 2.6 computes it wrong on one kernel)", 'c', "nb", false,
     {OPD("Mul", 'c', 4, 1, 1, 8, 1)}, .expect = BODY, .what = "not a scalar, per-channel"},
    {"a [M,1] operand of a matmul", 'm', "p", false, {OPD("Add", 'c', 2, 8, 1)}, .expect = BODY,
     .what = "not a scalar, per-channel"},
    {"Sub with the chain second", 'c', "n", true,
     {{.op = "Sub", .kind = 'c', .rank = 0, .second = true}}, .expect = BODY,
     .what = "takes the chain as its second operand"},
    /* oneDNN 2.6 runs a second clip post-op with the first's bounds (issue 21) */
    {"two Clips of different bounds", 'c', "n", false,
     {{.op = "Clip", .kind = 'c', .rank = 0}, {.op = "Clip", .kind = 'c', .rank = 0}},
     .expect = BODY, .what = "post-ops of one algorithm"},
    {"an integer MatMul", 'M', "p", false, {ACT("Abs")}, .expect = BODY,
     .what = "not float32"},
    {"a binary member after graphlab.NhwcConv", 'n', "p", true, {OPD("Mul", 'c', 0)},
     .expect = BODY, .what = "eltwise members and one same-shape Add only"},
    {"an Add of a per-channel operand after graphlab.NhwcConv", 'n', "p", false,
     {OPD("Add", 'c', 1, 16)}, .expect = BODY,
     .what = "eltwise members and one same-shape Add only"},
    {"a Clip bound that is a graph input", 'c', "n", true,
     {{.op = "Clip", .kind = 'x', .rank = 0}}, .expect = BODY,
     .what = "changes from run to run"},
    /* issue 26: 0 / 0 is NaN, which the Relu post-op would make 0; no check of the
     * inputs sees it coming (a division by values near 0: a looser rtol) */
    {"a Relu after a Div by a graph input", 'c', "n", false,
     {OPD("Div", 'x', 4, 1, 16, 8, 8), ACT("Relu")}, .expect = BODY,
     .what = "can make out of finite values", .rtol = 1e-2},
    {"a Max after a Div by a graph input, found at the first run", 'c', "n", true,
     {OPD("Div", 'x', 4, 1, 16, 8, 8), OPD("Max", 'c', 0)}, .expect = MEMBERS,
     .what = "can make out of finite values", .rtol = 1e-2},
};

Test(dnnl_fused, conv_heads_with_every_post_op_kind_and_layout)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(conv_cases); i++)
        run_case(&conv_cases[i]);
}

/* MatMul heads of a constant 2-D B on graphlab's many-rows kernel (AVX2, dn_matmul.c
 * many_rows_product): A 2-D or 3-D (its matrices stacked), M, K and N off the tile and the
 * K block, the unit's bias ([N], [1,1,N], a graph input), a residual Add of the output's
 * shape and an activation in the kernel (Relu, Gelu, Sigmoid, SiLU, Clip, HardSwish: the
 * epilogue), a per-column Mul before the residual (ConvNeXt's layer scale); NaN and
 * infinities in the inputs (run_case); oneDNN keeps K under 128, 8 rows, a broadcast
 * operand, post-ops in another order or of another kind. */
static const fcase matmul_rows_cases[] = {
    {"9 rows [9,130]x[130,21]+Add([N])", 'R', "p", false, {OPD("Add", 'c', 1, 21)},
     .expect = FUSED, .what = " + bias", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 9 rows tiled", ROWS(21, 2, 9, 130)},
    {"[1,17,300]x[300,40]+Add([1,1,N])+Relu (two K blocks)", 'R', "p", false,
     {OPD("Add", 'c', 3, 1, 1, 40), ACT("Relu")}, .expect = FUSED,
     .what = " + bias + eltwise_relu", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 17 rows tiled + relu", ROWS(40, 3, 1, 17, 300)},
    {"[4,25,129]x[129,37]+Relu (100 rows, no bias), through a Relu", 'R', "p", true,
     {ACT("Relu")}, .expect = FUSED, .what = "eltwise_relu", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 100 rows tiled + relu", ROWS(37, 3, 4, 25, 129)},
    {"[1,197,520]x[520,70]+Add(a graph input [N])", 'R', "p", false,
     {OPD("Add", 'x', 1, 70)}, .expect = FUSED, .what = " + bias", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 197 rows tiled", ROWS(70, 3, 1, 197, 520)},
    {"K 127: oneDNN", 'R', "p", false, {OPD("Add", 'c', 1, 24), ACT("Relu")},
     .expect = FUSED, .what = " + bias + eltwise_relu", .not_in = "graphlab",
     ROWS(24, 3, 2, 20, 127)},
    {"8 rows: oneDNN", 'R', "p", false, {OPD("Add", 'c', 1, 24)}, .expect = FUSED,
     .what = " + bias", .not_in = "graphlab", ROWS(24, 2, 8, 130)},
    {"[2,20,130]x[130,24]+Add([N])+Add(full residual)+Relu", 'R', "p", false,
     {OPD("Add", 'c', 1, 24), OPD("Add", 'x', 3, 2, 20, 24), ACT("Relu")}, .expect = FUSED,
     .what = " + bias + binary_add + eltwise_relu", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 40 rows tiled + add + relu", ROWS(24, 3, 2, 20, 130)},
    {"[2,20,300]x[300,21]+Add(full residual, a partial tile), no bias", 'R', "p", true,
     {OPD("Add", 'x', 3, 2, 20, 21)}, .expect = FUSED, .what = "binary_add",
     .avx2_expect = FUSED, .avx2_what = "graphlab:avx2 40 rows tiled + add",
     ROWS(21, 3, 2, 20, 300)},
    {"Add([N])+Add(scalar, not the output's shape): oneDNN", 'R', "p", false,
     {OPD("Add", 'c', 1, 24), OPD("Add", 'c', 0)}, .expect = FUSED,
     .what = " + bias + binary_add", .not_in = "graphlab", ROWS(24, 3, 2, 20, 130)},
    {"Add(full residual)+Add([N]) (the bias second): oneDNN", 'R', "p", false,
     {OPD("Add", 'x', 3, 2, 20, 24), OPD("Add", 'c', 1, 24)}, .expect = FUSED,
     .what = "binary_add + binary_add", .not_in = "graphlab", ROWS(24, 3, 2, 20, 130)},
    {"Relu+Add([N]): the bias not first, oneDNN", 'R', "p", false,
     {ACT("Relu"), OPD("Add", 'c', 1, 24)}, .expect = FUSED,
     .what = "eltwise_relu + binary_add", .not_in = "graphlab", ROWS(24, 3, 2, 20, 130)},
    /* ConvNeXt's second product: bias, layer scale (a per-column Mul), residual */
    {"[2,20,300]x[300,21]+Add([N])+Mul([N])+Add(full residual) (two K blocks, a partial "
     "tile)", 'R', "p", false,
     {OPD("Add", 'c', 1, 21), OPD("Mul", 'c', 1, 21), OPD("Add", 'x', 3, 2, 20, 21)},
     .expect = FUSED, .what = " + bias + binary_mul + binary_add", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 40 rows tiled + mul + add", ROWS(21, 3, 2, 20, 300)},
    {"[1,3136,130]x[130,40]+Add([N])+Mul([1,1,N])+Add(full residual)", 'R', "p", true,
     {OPD("Add", 'c', 1, 40), OPD("Mul", 'c', 3, 1, 1, 40), OPD("Add", 'x', 3, 1, 3136, 40)},
     .expect = FUSED, .what = " + bias + binary_mul + binary_add", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 3136 rows tiled + mul + add", ROWS(40, 3, 1, 3136, 130)},
    {"9 rows [9,130]x[130,24]+Mul(a graph input [N])+Relu, no bias", 'R', "p", false,
     {OPD("Mul", 'x', 1, 24), ACT("Relu")}, .expect = FUSED,
     .what = "binary_mul + eltwise_relu", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 9 rows tiled + mul + relu", ROWS(24, 2, 9, 130)},
    {"Add([N])+Mul([N]) alone", 'R', "p", false, {OPD("Add", 'c', 1, 24), OPD("Mul", 'c', 1, 24)},
     .expect = FUSED, .what = " + bias + binary_mul", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 40 rows tiled + mul", ROWS(24, 3, 2, 20, 130)},
    {"Add([N])+Mul([N])+Add(full residual), K 770 (MANY_ROWS_MUL_MAX_K): oneDNN", 'R', "p",
     false, {OPD("Add", 'c', 1, 16), OPD("Mul", 'c', 1, 16), OPD("Add", 'x', 3, 1, 10, 16)},
     .expect = FUSED, .what = " + bias + binary_mul + binary_add", .not_in = "graphlab",
     ROWS(16, 3, 1, 10, 770)},
    {"Mul(full [M,N]): oneDNN", 'R', "p", false, {OPD("Mul", 'x', 3, 2, 20, 24)},
     .expect = FUSED, .what = "binary_mul", .not_in = "graphlab", ROWS(24, 3, 2, 20, 130)},
    {"Add(full residual)+Mul([N]) (the factor after the residual): oneDNN", 'R', "p", false,
     {OPD("Add", 'x', 3, 2, 20, 24), OPD("Mul", 'c', 1, 24)}, .expect = FUSED,
     .what = "binary_add + binary_mul", .not_in = "graphlab", ROWS(24, 3, 2, 20, 130)},
    /* The activations of the epilogue (dn_avx2_act_tile): 40 rows are 6 tiles and one of
     * 4, 21 columns a pair of panels and a partial one (5 columns), 17 rows over 40
     * columns a lone last panel after two K blocks */
    {"[2,20,130]x[130,21]+Add([N])+graphlab.Gelu (partial tiles)", 'R', "p", false,
     BIAS_GELU(21), .avx2_expect = FUSED, .avx2_what = "graphlab:avx2 40 rows tiled + gelu_erf",
     ROWS(21, 3, 2, 20, 130)},
    {"[1,17,300]x[300,40]+Add([N])+ai.onnx Gelu (two K blocks)", 'R', "p", true,
     {OPD("Add", 'c', 1, 40), ACT("Gelu")}, .expect = FUSED,
     .what = " + bias + eltwise_gelu_erf", .rtol = 1e-3, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 17 rows tiled + gelu_erf", ROWS(40, 3, 1, 17, 300)},
    {"[9,130]x[130,24]+Sigmoid, no bias", 'R', "p", false, {ACT("Sigmoid")},
     .expect = FUSED, .what = "eltwise_logistic", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 9 rows tiled + sigmoid", ROWS(24, 2, 9, 130)},
    /* without AVX-512 a SiLU is no post-op (dn_eltwise_post_slow: oneDNN's swish costs
     * more than a convolution), whatever the head: it runs as a segment of its own on
     * graphlab's kernel, after the tiled product */
    {"[4,25,129]x[129,37]+Add([N])+graphlab.Silu (100 rows)", 'R', "p", false,
     {OPD("Add", 'c', 1, 37), ACT("graphlab.Silu")}, .expect = FUSED,
     .what = " + bias + eltwise_swish", .avx2_expect = UNIT,
     .avx2_what = "graphlab:avx2 100 rows tiled + bias | graphlab:avx2 silu",
     ROWS(37, 3, 4, 25, 129)},
    {"[2,20,130]x[130,21]+Add([N])+Clip(a constant min)", 'R', "p", false,
     {OPD("Add", 'c', 1, 21), {.op = "Clip", .kind = 'c', .rank = 0}}, .expect = FUSED,
     .what = " + bias + eltwise_clip", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 40 rows tiled + clip", ROWS(21, 3, 2, 20, 130)},
    {"[2,20,130]x[130,21]+Add(full residual)+HardSwish", 'R', "p", false,
     {OPD("Add", 'x', 3, 2, 20, 21), ACT("HardSwish")}, .expect = FUSED,
     .what = "binary_add + eltwise_hardswish", .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 40 rows tiled + add + hardswish", ROWS(21, 3, 2, 20, 130)},
    {"[2,20,300]x[300,21]+Add([N])+Mul([N])+Add(full residual)+graphlab.Gelu", 'R', "p",
     false,
     {OPD("Add", 'c', 1, 21), OPD("Mul", 'c', 1, 21), OPD("Add", 'x', 3, 2, 20, 21),
      ACT("graphlab.Gelu")},
     .expect = FUSED, .what = " + bias + binary_mul + binary_add + eltwise_gelu_erf",
     .rtol = 1e-3, .avx2_expect = FUSED,
     .avx2_what = "graphlab:avx2 40 rows tiled + mul + add + gelu_erf",
     ROWS(21, 3, 2, 20, 300)},
    {"[1,144,130]x[130,24]+Add([N])+graphlab.Gelu (MANY_ROWS_ACT_MAX_ROWS)", 'R', "p", false,
     BIAS_GELU(24), .avx2_expect = FUSED, .avx2_what = "graphlab:avx2 144 rows tiled + gelu_erf",
     ROWS(24, 3, 1, 144, 130)},
    {"145 rows+Add([N])+graphlab.Gelu: oneDNN", 'R', "p", false, BIAS_GELU(24),
     .not_in = "graphlab", ROWS(24, 3, 1, 145, 130)},
    {"K 127+Add([N])+graphlab.Gelu: oneDNN", 'R', "p", false, BIAS_GELU(24),
     .not_in = "graphlab", ROWS(24, 3, 2, 20, 127)},
    {"Add([N])+Elu (no epilogue for it): oneDNN", 'R', "p", false,
     {OPD("Add", 'c', 1, 24), ACT("Elu")}, .expect = FUSED,
     .what = " + bias + eltwise_elu", .not_in = "graphlab", ROWS(24, 3, 2, 20, 130)},
};

Test(dnnl_fused, matmul_heads_of_many_rows)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(matmul_rows_cases); i++)
        run_case(&matmul_rows_cases[i]);
}

Test(dnnl_fused, matmul_and_gemm_heads)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(matmul_cases); i++)
        run_case(&matmul_cases[i]);
}

Test(dnnl_fused, batchnorm_head_with_its_relu)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(batchnorm_cases); i++)
        run_case(&batchnorm_cases[i]);
}

Test(dnnl_fused, units_of_several_primitives)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(unit_cases); i++)
        run_case(&unit_cases[i]);
}

Test(dnnl_fused, refused_groups_run_their_members_and_say_why)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(refused_cases); i++)
        run_case(&refused_cases[i]);
}

/* The shape guard: a new batch size rebuilds the unit's primitive (once), and the plan's
 * counters say so; the same shapes again build nothing and reorder no constant. */
Test(dnnl_fused, a_new_input_shape_rebuilds_the_unit_once)
{
    static const fcase c = {"Conv+Add+Relu", 'c', "n", true,
                            {OPD("Add", 'r', 4, 1, 16, 8, 8), ACT("Relu")}, .expect = FUSED,
                            .what = "sum + eltwise_relu"};
    built b = build_row(&c);
    gl_tensor *got = NULL, *want = NULL;
    gl_exec *dn = tu_exec_run(b.m, "dnnl", "nhwc", b.in, b.n_in, &got, 1, "N=1");
    gl_tensor_free(got);
    const gl_plan_entry *en = tu_plan_entry(dn, "g", 0);
    cr_assert_not_null(en);
    cr_expect_eq(en->info.builds, 1);
    gl_tensor_free(b.in[0]);
    b.in[0] = tu_random_f32(4, (int64_t[]){3, 16, 8, 8}, &seed);
    for (int run = 0; run < 2; run++) {
        cr_assert_eq(gl_exec_run(dn, (const gl_tensor *const *)b.in, b.n_in, &got, 1), GL_OK,
                     "N=3, run %d: %s", run, gl_error_message());
        gl_exec_stats st;
        gl_exec_get_stats(dn, &st);
        cr_expect_eq(st.builds, run == 0 ? 2u : 0u, "N=3, run %d: %zu builds", run, st.builds);
        cr_expect_eq(st.const_reorders, run == 0 ? 2u : 0u, "N=3, run %d: %zu constants", run,
                     st.const_reorders);
        cr_expect_eq(got->dims[0], 3);
        if (run == 1)
            break;
        gl_tensor_free(got);
    }
    cr_expect_eq(en->info.builds, 2);
    gl_exec *ref = tu_exec_run(b.m, "ref", NULL, b.in, b.n_in, &want, 1, "N=3");
    gl_compare r;
    gl_compare_tensors(got, want, RTOL, ATOL, &r);
    char line[256];
    gl_compare_format(&r, line, sizeof(line));
    cr_expect(r.ok, "N=3: dnnl vs ref: %s", line);
    gl_tensor_free(got);
    gl_tensor_free(want);
    gl_exec_free(ref);
    gl_exec_free(dn);
    free_built(&b);
}

/* A 1x1 + depthwise unit whose intermediate at the whole batch would leave the cache
 * (dn_slice.c: above 12 MB) runs a part of the batch at a time, each part's
 * intermediate at most 6 MB, the number of images a divisor of the batch; smaller ones
 * run the whole batch. Each row: x [batch, 16, side, side] -> Conv 1x1 to `ch` + Relu ->
 * depthwise 3x3 (stride `stride`) + Relu, under nhwc and blocked activations, equal to
 * the reference on the first run, the run that chooses the parts and builds again, and
 * the next, which builds nothing. */
typedef struct slice_case {
    const char *name;
    int64_t batch, ch, side, stride;
    int64_t images; /* per part; 0: the whole batch at once */
} slice_case;

static const slice_case slice_cases[] = {
    {"4 images, 16->96 at 112x112: 19.3 MB, 4.8 per image", 4, 96, 112, 2, 1},
    {"8 images, 16->144 at 56x56: 14.5 MB, 1.8 per image", 8, 144, 56, 1, 2},
    {"6 images, 16->144 at 56x56: 10.8 MB", 6, 144, 56, 1, 0},
    {"one image, 16->96 at 112x112", 1, 96, 112, 2, 0},
};

static built build_slice_row(const slice_case *c, bool declared)
{
    built b = {.m = tu_model(20)};
    gl_model *m = b.m;
    gl_model_set_opset(m, "graphlab.fused", 1);
    gl_graph *g = m->graph;
    gl_value *x = graph_input(&b, "x", GL_DT_FLOAT, 4,
                              (int64_t[]){c->batch, 16, c->side, c->side}, declared);
    gl_function *f = gl_model_add_function(m, "graphlab.fused", "Fused_1");
    f->opsets = gl_xcalloc(1, sizeof(*f->opsets));
    f->opsets[0] = (gl_opset){gl_xstrdup(""), 20};
    f->n_opsets = 1;
    gl_value *actual[8];
    size_t n_act = 0;
    gl_value *fx = formal(f, actual, &n_act, x);
    gl_value *w1 = formal(f, actual, &n_act, const_f32(g, "w1", 4, (int64_t[]){c->ch, 16, 1, 1}));
    gl_value *b1 = formal(f, actual, &n_act, const_f32(g, "b1", 1, &c->ch));
    gl_value *w2 = formal(f, actual, &n_act, const_f32(g, "w2", 4, (int64_t[]){c->ch, 1, 3, 3}));
    gl_value *b2 = formal(f, actual, &n_act, const_f32(g, "b2", 1, &c->ch));
    gl_node *pw = tu_node(f->body, "Conv", "pw", 3, fx, w1, b1);
    gl_node *r1 = tu_node(f->body, "Relu", "r1", 1, pw->outputs[0]);
    gl_node *dw = tu_node(f->body, "Conv", "dw", 3, r1->outputs[0], w2, b2);
    tu_apply_attrs(dw, (tu_attr[]){AINTS("pads", 4, 1, 1, 1, 1), AI("group", c->ch),
                                   AINTS("strides", 2, c->stride, c->stride), {0}});
    gl_node *r2 = tu_node(f->body, "Relu", "r2", 1, dw->outputs[0]);
    gl_graph_add_output(f->body, r2->outputs[0]);
    gl_node *call = gl_add_node(g, "Fused_1", "graphlab.fused", "g", actual, n_act, 1);
    tu_output(g, call->outputs[0]);
    return b;
}

/* Its sizes not declared, the unit that ran in parts meets the same batch at other
 * sizes (smaller, then larger): the parts were chosen for the first size, so it runs the
 * whole batch and chooses again, and its output has the new size (it kept the first
 * size's dims, or had no buffer for the larger one). */
Test(dnnl_fused, a_unit_run_in_parts_meets_other_sizes_of_the_same_batch)
{
    const slice_case *c = &slice_cases[0];
    for (const char *p = "nb"; *p; p++) {
        char what[160];
        snprintf(what, sizeof(what), "%s, sizes not declared (%s)", c->name, tu_layout_name(*p));
        built b = build_slice_row(c, false);
        gl_tensor *want = NULL, *got = NULL;
        gl_exec *ref, *dn = run_ref_and_dnnl(&b, *p, what, &want, &got, &ref);
        gl_tensor_free(got);
        got = NULL;
        cr_assert_eq(gl_exec_run(dn, (const gl_tensor *const *)b.in, b.n_in, &got, 1), GL_OK,
                     "%s: %s", what, gl_error_message());
        expect_close(got, want, 0, 0, what, "the run that chooses the parts");
        const gl_plan_entry *en = tu_plan_entry(dn, "g", 0);
        cr_assert_not_null(en, "%s: no plan entry", what);
        cr_expect(strstr(en->info.note, "images at a time") != NULL, "%s: no parts: %s", what,
                  en->info.note);
        for (int64_t grow = -8; grow <= 8; grow += 16) {
            int64_t side = c->side + grow;
            gl_tensor *other = tu_random_f32(4, (int64_t[]){c->batch, 16, side, side}, &seed);
            gl_tensor *o_want = NULL, *o_got = NULL;
            cr_assert_eq(gl_exec_run(ref, (const gl_tensor *const *)&other, 1, &o_want, 1),
                         GL_OK, "%s, side %lld: ref: %s", what, (long long)side,
                         gl_error_message());
            for (int run = 0; run < 3; run++) {
                gl_tensor_free(o_got);
                o_got = NULL;
                cr_assert_eq(gl_exec_run(dn, (const gl_tensor *const *)&other, 1, &o_got, 1),
                             GL_OK, "%s, side %lld, run %d: %s", what, (long long)side, run,
                             gl_error_message());
                char which[48];
                snprintf(which, sizeof(which), "side %lld, run %d", (long long)side, run);
                expect_close(o_got, o_want, 0, 0, what, which);
            }
            gl_tensor_free(other);
            gl_tensor_free(o_want);
            gl_tensor_free(o_got);
        }
        gl_tensor_free(got);
        gl_tensor_free(want);
        gl_exec_free(ref);
        gl_exec_free(dn);
        free_built(&b);
    }
}

Test(dnnl_fused, a_unit_whose_intermediate_leaves_the_cache_runs_parts_of_the_batch)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(slice_cases); i++) {
        const slice_case *c = &slice_cases[i];
        for (const char *p = "nb"; *p; p++) {
            char what[160];
            snprintf(what, sizeof(what), "%s (%s)", c->name, tu_layout_name(*p));
            built b = build_slice_row(c, true);
            gl_tensor *want = NULL, *got = NULL;
            gl_exec *ref, *dn = run_ref_and_dnnl(&b, *p, what, &want, &got, &ref);
            for (int run = 0; run < 3; run++) {
                if (run > 0) {
                    gl_tensor_free(got);
                    got = NULL;
                    cr_assert_eq(gl_exec_run(dn, (const gl_tensor *const *)b.in, b.n_in, &got,
                                             1),
                                 GL_OK, "%s, run %d: %s", what, run, gl_error_message());
                }
                char which[16];
                snprintf(which, sizeof(which), "run %d", run);
                expect_close(got, want, 0, 0, what, which);
                gl_exec_stats st;
                gl_exec_get_stats(dn, &st);
                cr_expect(run < 2 || st.builds == 0, "%s, run %d: %zu builds", what, run,
                          st.builds);
            }
            /* NaN and infinities in the input: the members run, on the whole batch */
            gl_tensor *sp = tu_with_specials(b.in[0]), *sp_want = NULL, *sp_got = NULL;
            gl_exec_free(tu_exec_run(b.m, "ref", NULL, &sp, 1, &sp_want, 1, what));
            tu_exec_rerun_cached(dn, (const gl_tensor *const *)&sp, 1, &sp_got, 1, what);
            expect_close(sp_got, sp_want, 0, 0, what, "NaN and infinities in x");
            gl_tensor_free(sp);
            gl_tensor_free(sp_want);
            gl_tensor_free(sp_got);
            const gl_plan_entry *en = tu_plan_entry(dn, "g", 0);
            cr_assert_not_null(en, "%s: no plan entry", what);
            char parts[64];
            snprintf(parts, sizeof(parts), "on %lld of the %lld images at a time",
                     (long long)c->images, (long long)c->batch);
            cr_expect(strcmp(en->backend, "dnnl") == 0 && strstr(en->info.note, "unit of ") &&
                          (c->images ? strstr(en->info.note, parts) != NULL
                                     : strstr(en->info.note, "images at a time") == NULL),
                      "%s: expected a unit run %s, got %s %s (%s)", what,
                      c->images ? parts : "on the whole batch", en->backend, en->info.impl,
                      en->info.note);
            gl_tensor_free(got);
            gl_tensor_free(want);
            gl_exec_free(ref);
            gl_exec_free(dn);
            free_built(&b);
        }
    }
}

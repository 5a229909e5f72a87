/* test_patterns.c — the `patterns` pass, rule by rule, as a table of graphs.
 *
 * Every row is a graph in graphnote.h's notation, the opset, and what the pass must do:
 *   APPLY  — a decision of the row's rule applied, the op counts after the pass as given;
 *   REFUSE — the graph unchanged and a refusal of the row's rule whose reason contains
 *            the row's text (the number found, the value or node that broke the rule);
 *   NONE   — the graph unchanged and no decision at all (the anchor is not the pattern).
 * Each row runs toposort,shape-inference,patterns; then the graph must verify and be
 * sorted, and compute what it computed before the pass on seeded random inputs (the
 * reference backend: graphlab's kernels for the new ops). Applied rows are also run
 *   - with every graphlab op as its model-local function's body instead of its kernel
 *     (the function renamed out of the registry's domain), against the graph before;
 *   - saved, loaded again, and run: the same outputs, bit for bit;
 * and, when GL_PYTHON has onnx, the saved files (opset <= 17) pass onnx.checker with
 * full_check.
 *
 * GL_PTTEST_SHOW=NAME prints that row's decisions and the graph after the pass.
 */
#include "graphnote.h"
#include "onnx/onnx_io.h"
#include "passes/patterns.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define EXPECT_NO_LEAKS() cr_expect_eq(__lsan_do_recoverable_leak_check(), 0, "leaks: see stderr")
#else
#define EXPECT_NO_LEAKS() ((void)0)
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum want { APPLY, REFUSE, NONE } want;

typedef struct pcase {
    const char *name;
    int opset;
    const char *graph;
    want want;
    const char *rule;   /* the decision's rule (APPLY, REFUSE) */
    const char *reason; /* REFUSE: a part of the reason */
    const char *ops;    /* APPLY: op counts after the pass ("graphlab.Gelu=1 Erf=0") */
    int applied;        /* APPLY: how many rewrites (0: at least one) */
    void (*extra)(gl_model *m); /* what the notation cannot say */
    bool random;        /* its outputs are random (a training Dropout): not compared */
} pcase;

/* The expectation of a row. */
#define APPLIED(rule_, reason_, ops_, n_)                                                  \
    .want = APPLY, .rule = (rule_), .reason = (reason_), .ops = (ops_), .applied = (n_)
#define REFUSED(rule_, reason_) .want = REFUSE, .rule = (rule_), .reason = (reason_)
#define UNTOUCHED .want = NONE

#define PASSES "toposort,shape-inference,patterns"
/* The kernels compute in double, the decomposition in float. */
#define RTOL 1e-5
#define ATOL 1e-6

/* ---- running one row ------------------------------------------------------------------- */

/* Files saved by applied rows, for one onnx.checker run at the end of a table. */
typedef struct saved {
    char *dir;
    int n;
} saved;

static void show(const pcase *c, const gl_pipeline *p, const gl_snapshot *s, const gl_graph *g)
{
    const char *only = getenv("GL_PTTEST_SHOW");
    if (!only || strcmp(only, c->name))
        return;
    fprintf(stderr, "---- %s: decisions\n", c->name);
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++)
        gl_decision_print(&p->log.items[i], stderr);
    fprintf(stderr, "---- %s: graph after\n", c->name);
    gn_print_graph(g, stderr);
}

static void check_decisions(const pcase *c, const gl_pipeline *p, const gl_snapshot *step,
                            const gl_snapshot *prev)
{
    size_t applied = 0, refused = 0, matching = 0;
    for (size_t i = step->first_decision; i < step->first_decision + step->n_decisions; i++) {
        const gl_decision *d = &p->log.items[i];
        cr_expect(d->reason && *d->reason, "%s: decision #%lld has no reason", c->name,
                  (long long)d->id);
        applied += d->verdict == GL_APPLIED;
        refused += d->verdict == GL_REFUSED;
        if (c->rule && !strcmp(d->rule, c->rule) &&
            d->verdict == (c->want == APPLY ? GL_APPLIED : GL_REFUSED) &&
            (!c->reason || strstr(d->reason, c->reason)))
            matching++;
    }
    switch (c->want) {
    case APPLY:
        cr_expect(matching > 0, "%s: no applied decision of rule %s", c->name, c->rule);
        cr_expect(!c->applied || applied == (size_t)c->applied,
                  "%s: %zu rewrites applied, expected %d", c->name, applied, c->applied);
        break;
    case REFUSE:
        cr_expect(matching > 0, "%s: no refusal of rule %s with a reason containing '%s'",
                  c->name, c->rule, c->reason);
        cr_expect_eq(applied, 0, "%s: %zu rewrites applied, expected none", c->name, applied);
        break;
    case NONE:
        cr_expect_eq(applied + refused, 0, "%s: %zu decisions, expected none", c->name,
                     applied + refused);
        break;
    }
    if (c->want != APPLY)
        cr_expect(step->fingerprint == prev->fingerprint, "%s: the graph changed", c->name);
}

static size_t count_domain(const gl_graph *g, const char *domain)
{
    size_t k = 0;
    gl_node *n;
    gl_foreach_node(g, i, n)
        k += n->domain && !strcmp(n->domain, domain);
    return k;
}

/* The saved model loads again and computes exactly the same. */
static void check_reload(const pcase *c, const gn_graph *b, const gl_model *after, saved *sv)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.onnx", sv->dir, c->name);
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
    gl_model_free(back);
    if (c->opset <= 17)
        sv->n++;
    else
        remove(path); /* onnx 1.12's checker knows opsets up to 17 */
}

static void run_case(const pcase *c, saved *sv)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes(c->name, c->opset, c->graph, c->extra, PASSES, &b);
    if (p) {
        size_t k = p->n_steps - 1;
        const gl_snapshot *step = &p->steps[k];
        const gl_model *before = p->steps[k - 1].model, *after = step->model;
        show(c, p, step, after->graph);
        cr_expect_eq(gl_graph_verify(after->graph, false), GL_OK, "%s: %s", c->name,
                     gl_error_message());
        check_decisions(c, p, step, &p->steps[k - 1]);
        gn_expect_op_counts(c->name, c->ops, after->graph);
        gn_expect_same_outputs(c->name, &b, before, after, RTOL, ATOL, c->random);
        if (c->want == APPLY && count_domain(after->graph, "graphlab")) {
            gl_model *bodies = gn_bodies_only(after);
            cr_expect(count_domain(bodies->graph, "test.body"), "%s", c->name);
            gn_expect_same_outputs(c->name, &b, before, bodies, RTOL, ATOL, false);
            gl_model_free(bodies);
        }
        if (c->want == APPLY)
            check_reload(c, &b, after, sv);
    }
    gl_pipeline_free(p);
}

static void run_table(const pcase *cases, size_t n)
{
    saved sv = {tu_tmpdir(), 0};
    cr_assert(sv.dir, "no temporary folder");
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i], &sv);
    if (sv.n)
        gn_expect_onnx_checker(sv.dir);
    tu_rmtree(sv.dir);
    free(sv.dir);
    EXPECT_NO_LEAKS();
}

#define RUN(table) run_table(table, GL_ARRAY_LEN(table))

/* ==== Gelu, erf form ===================================================================== */

#define ERF_CONSTS(sqrt2, one, half)                                                        \
    "in x f32w[2,8]; const s f32[] = " sqrt2 "; const one f32[] = " one                      \
    "; const h f32[] = " half "; "
/* torch: Div(x, sqrt2) -> Erf -> Add 1 -> Mul x -> Mul 0.5 */
#define ERF_TORCH(sqrt2, one, half)                                                         \
    ERF_CONSTS(sqrt2, one, half)                                                            \
    "d = Div(x, s); e = Erf(d); p = Add(e, one); q = Mul(x, p); y = Mul(q, h); out y"
#define GELU_OK "Erf=0 Div=0 Mul=0 Add=0 graphlab.Gelu=1"

static const pcase gelu_erf_cases[] = {
    {"gelu_erf_torch", 13, ERF_TORCH("1.4142135", "1", "0.5"), APPLIED("gelu-erf", NULL,
     GELU_OK, 1)},
    {"gelu_erf_mul_inv_sqrt2", 13,
     ERF_CONSTS("0.70710678", "1", "0.5")
     "d = Mul(s, x); e = Erf(d); p = Add(one, e); q = Mul(p, x); y = Mul(h, q); out y",
     APPLIED("gelu-erf", "Mul by 1/sqrt(2)", GELU_OK, 1)},
    {"gelu_erf_half_first", 13,
     ERF_CONSTS("1.4142135", "1", "0.5")
     "a = Mul(x, h); d = Div(x, s); e = Erf(d); p = Add(e, one); y = Mul(a, p); out y",
     APPLIED("gelu-erf", "x * 0.5 first", GELU_OK, 1)},
    {"gelu_erf_half_middle", 13,
     ERF_CONSTS("1.4142135", "1", "0.5")
     "d = Div(x, s); e = Erf(d); p = Add(e, one); q = Mul(h, p); y = Mul(x, q); out y",
     APPLIED("gelu-erf", "* 0.5 first, * x last", GELU_OK, 1)},
    {"gelu_erf_rank4_symbolic", 13,
     "in x f32w[?2,3,4,?5]; const s f32[1] = 1.4142135; const one f32[] = 1; "
     "const h f32[1,1] = 0.5; d = Div(x, s); e = Erf(d); p = Add(e, one); q = Mul(x, p); "
     "y = Mul(q, h); out y",
     APPLIED("gelu-erf", NULL, GELU_OK, 1)},
    {"gelu_erf_onnx_op20", 20, ERF_TORCH("1.4142135", "1", "0.5"), APPLIED("gelu-erf", NULL,
     "Gelu=1 graphlab.Gelu=0 Erf=0", 1)},
    /* The output of the pattern feeds on, and is read twice. */
    {"gelu_erf_inside", 13,
     ERF_TORCH("1.4142135", "1", "0.5") "; r = Relu(y); z = Add(r, y); out z",
     APPLIED("gelu-erf", NULL, "Erf=0 Mul=0 Add=1 Relu=1 graphlab.Gelu=1", 1)},
    {"gelu_erf_two", 13,
     ERF_CONSTS("1.4142135", "1", "0.5")
     "d = Div(x, s); e = Erf(d); p = Add(e, one); q = Mul(x, p); y = Mul(q, h); "
     "d2 = Div(y, s); e2 = Erf(d2); p2 = Add(e2, one); q2 = Mul(y, p2); y2 = Mul(q2, h); "
     "out y2",
     APPLIED("gelu-erf", NULL, "graphlab.Gelu=2 Erf=0", 2)},

    {"gelu_erf_half_049", 13, ERF_TORCH("1.4142135", "1", "0.49"), REFUSED("gelu-erf",
     "the factor is 0.49, expected 0.5")},
    {"gelu_erf_sqrt2_wrong", 13, ERF_TORCH("1.5", "1", "0.5"), REFUSED("gelu-erf",
     "the divisor is 1.5, expected 1.41421356")},
    {"gelu_erf_one_wrong", 13, ERF_TORCH("1.4142135", "2", "0.5"), REFUSED("gelu-erf",
     "the addend is 2, expected 1")},
    {"gelu_erf_graph_output_inside", 13, ERF_TORCH("1.4142135", "1", "0.5") ", e",
     REFUSED("gelu-erf", "'e' (output of Erf 'n_e') is a graph output")},
    {"gelu_erf_second_reader", 13,
     ERF_TORCH("1.4142135", "1", "0.5") "; z = Relu(p); out z", REFUSED("gelu-erf",
     "'p' (output of Add 'n_p') is also read by Relu 'n_z'")},
    {"gelu_erf_int32", 13,
     "in x i32[2,8]; const s i32[] = 1; const one i32[] = 1; const h i32[] = 1; "
     "d = Div(x, s); e = Erf(d); p = Add(e, one); q = Mul(x, p); y = Mul(q, h); out y",
     REFUSED("gelu-erf", "'x' is int32; the rule takes float only")},
    {"gelu_erf_half_vector", 13,
     "in x f32w[2,8]; const s f32[] = 1.4142135; const one f32[] = 1; "
     "const h f32[8] = 0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5; d = Div(x, s); e = Erf(d); "
     "p = Add(e, one); q = Mul(x, p); y = Mul(q, h); out y",
     REFUSED("gelu-erf", "has 8 elements, expected one number")},
    {"gelu_erf_half_raises_rank", 13,
     "in x f32w[2,8]; const s f32[] = 1.4142135; const one f32[] = 1; "
     "const h f32[1,1,1] = 0.5; d = Div(x, s); e = Erf(d); p = Add(e, one); q = Mul(x, p); "
     "y = Mul(q, h); out y",
     REFUSED("gelu-erf", "has rank 3, which would raise the rank of 'x' (rank 2)")},
    {"gelu_erf_times_other", 13,
     ERF_CONSTS("1.4142135", "1", "0.5")
     "in z f32w[2,8]; d = Div(x, s); e = Erf(d); p = Add(e, one); y = Mul(p, z); out y",
     REFUSED("gelu-erf", "which is neither 'x', 0.5 nor 'x' * 0.5")},
    {"erf_alone", 13, "in x f32w[2,8]; e = Erf(x); out e", UNTOUCHED},
};

Test(patterns, gelu_erf) { RUN(gelu_erf_cases); }

/* ==== Gelu, tanh approximation =========================================================== */

#define TANH_CONSTS(kappa, beta)                                                            \
    "in x f32w[2,8]; const k f32[] = " kappa "; const b f32[] = " beta                       \
    "; const one f32[] = 1; const h f32[] = 0.5; const three f32[] = 3; "
/* torch (approximate='tanh' below opset 20) */
#define TANH_TORCH(kappa, beta)                                                             \
    TANH_CONSTS(kappa, beta)                                                                \
    "sq = Mul(x, x); cu = Mul(x, sq); kc = Mul(k, cu); s = Add(x, kc); i = Mul(b, s); "     \
    "t = Tanh(i); p = Add(one, t); q = Mul(x, p); y = Mul(h, q); out y"
#define TANH_OK "Tanh=0 Mul=0 Add=0 Pow=0 graphlab.GeluTanh=1"

static const pcase gelu_tanh_cases[] = {
    {"gelu_tanh_torch", 13, TANH_TORCH("0.044715", "0.7978845608"), APPLIED("gelu-tanh", NULL,
     TANH_OK, 1)},
    /* Hugging Face's NewGELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) */
    {"gelu_tanh_pow_half_first", 13,
     TANH_CONSTS("0.044715", "0.7978845608")
     "cu = Pow(x, three); kc = Mul(cu, k); s = Add(kc, x); i = Mul(s, b); t = Tanh(i); "
     "p = Add(t, one); a = Mul(h, x); y = Mul(a, p); out y",
     APPLIED("gelu-tanh", "x * 0.5 first", TANH_OK, 1)},
    {"gelu_tanh_square_first", 13,
     TANH_CONSTS("0.044715", "0.79788456")
     "sq = Mul(x, x); cu = Mul(sq, x); kc = Mul(cu, k); s = Add(x, kc); i = Mul(s, b); "
     "t = Tanh(i); p = Add(t, one); q = Mul(p, h); y = Mul(q, x); out y",
     APPLIED("gelu-tanh", NULL, TANH_OK, 1)},
    {"gelu_tanh_onnx_op20", 20, TANH_TORCH("0.044715", "0.7978845608"), APPLIED("gelu-tanh",
     NULL, "Gelu=1 Tanh=0", 1)},

    {"gelu_tanh_kappa_wrong", 13, TANH_TORCH("0.05", "0.7978845608"), REFUSED("gelu-tanh",
     "the cubic coefficient is 0.05, expected 0.044715")},
    {"gelu_tanh_beta_wrong", 13, TANH_TORCH("0.044715", "0.8"), REFUSED("gelu-tanh",
     "the factor is 0.8, expected 0.797884561")},
    {"gelu_tanh_square_not_cube", 13,
     TANH_CONSTS("0.044715", "0.7978845608") "const two f32[] = 2; "
     "cu = Pow(x, two); kc = Mul(cu, k); s = Add(kc, x); i = Mul(s, b); t = Tanh(i); "
     "p = Add(t, one); a = Mul(h, x); y = Mul(a, p); out y",
     REFUSED("gelu-tanh", "the exponent is 2, expected 3")},
    {"gelu_tanh_cube_of_other", 13,
     TANH_CONSTS("0.044715", "0.7978845608") "in z f32w[2,8]; "
     "cu = Pow(z, three); kc = Mul(cu, k); s = Add(kc, x); i = Mul(s, b); t = Tanh(i); "
     "p = Add(t, one); a = Mul(h, x); y = Mul(a, p); out y",
     REFUSED("gelu-tanh", "adds 'x' to the cube of 'z'")},
    {"gelu_tanh_cube_read_twice", 13, TANH_TORCH("0.044715", "0.7978845608") ", cu",
     REFUSED("gelu-tanh", "'cu' (output of Mul 'n_cu') is a graph output")},
    {"tanh_alone", 13, "in x f32w[2,8]; t = Tanh(x); out t", UNTOUCHED},
    {"tanh_scaled", 13,
     "in x f32w[2,8]; in z f32w[2,8]; const b f32[] = 2; s = Add(x, z); i = Mul(b, s); "
     "t = Tanh(i); out t",
     REFUSED("gelu-tanh", "Add 'n_s' is not x + 0.044715 * x^3")},
};

Test(patterns, gelu_tanh) { RUN(gelu_tanh_cases); }

/* ==== SiLU and HardSwish ================================================================== */

static const pcase act_cases[] = {
    {"silu", 13, "in x f32w[2,3,4]; s = Sigmoid(x); y = Mul(x, s); out y", APPLIED("silu",
     NULL, "Sigmoid=0 Mul=0 graphlab.Silu=1", 1)},
    {"silu_swapped", 13, "in x f32w[2,3,4]; s = Sigmoid(x); y = Mul(s, x); out y",
     APPLIED("silu", NULL, "graphlab.Silu=1", 1)},
    {"silu_after_conv", 13,
     "in x f32s[1,2,5,5]; const w f32[3,2,3,3] = rand; c = Conv(x, w) pads=[1,1,1,1]; "
     "s = Sigmoid(c); y = Mul(c, s); out y",
     APPLIED("silu", NULL, "Conv=1 graphlab.Silu=1", 1)},
    {"silu_double", 13, "in x f64[2,3]; s = Sigmoid(x); y = Mul(x, s); out y", REFUSED("silu",
     "'x' is double; the rule takes float only")},
    {"silu_sigmoid_read_twice", 13,
     "in x f32w[2,3]; s = Sigmoid(x); y = Mul(x, s); z = Add(y, s); out z", REFUSED("silu",
     "'s' (output of Sigmoid 'n_s') is also read by Add 'n_z'")},
    {"silu_sigmoid_is_output", 13, "in x f32w[2,3]; s = Sigmoid(x); y = Mul(x, s); out y, s",
     REFUSED("silu", "'s' (output of Sigmoid 'n_s') is a graph output")},
    /* A gate (squeeze-and-excitation): x * Sigmoid(z), not SiLU. */
    {"sigmoid_gate", 13,
     "in x f32w[2,3]; in z f32w[2,3]; s = Sigmoid(z); y = Mul(x, s); out y", UNTOUCHED},

    {"hardswish_op13", 13,
     "in x f32w[2,3,4]; h = HardSigmoid(x) alpha=0.16666667 beta=0.5; y = Mul(x, h); out y",
     APPLIED("hard-swish", NULL, "HardSigmoid=0 Mul=0 graphlab.HardSwish=1", 1)},
    {"hardswish_op14", 14,
     "in x f32w[2,3,4]; h = HardSigmoid(x) alpha=0.16666667; y = Mul(h, x); out y",
     APPLIED("hard-swish", NULL, "HardSwish=1 graphlab.HardSwish=0", 1)},
    {"hardswish_alpha_default", 13, "in x f32w[2,3]; h = HardSigmoid(x); y = Mul(x, h); out y",
     REFUSED("hard-swish", "alpha is 0.2, expected 0.166666667")},
    {"hardswish_beta_wrong", 13,
     "in x f32w[2,3]; h = HardSigmoid(x) alpha=0.16666667 beta=0.4; y = Mul(x, h); out y",
     REFUSED("hard-swish", "beta is 0.4, expected 0.5")},
    {"hardswish_op5", 5,
     "in x f32w[2,3]; h = HardSigmoid(x) alpha=0.16666667 beta=0.5; y = Mul(x, h); out y",
     REFUSED("hard-swish", "opset 5: the function body of graphlab.HardSwish needs opset 6")},
};

Test(patterns, silu_hardswish) { RUN(act_cases); }

/* ==== LayerNormalization ================================================================== */

/* torch below opset 17, over the last axis of x[2,4,8]. */
#define LN_HEAD(x, eps, gdims)                                                              \
    "in x " x "; const g f32[" gdims "] = rand; const bt f32[" gdims "] = rand; "           \
    "const eps f32[] = " eps "; const two f32[] = 2; "
#define LN_TAIL                                                                             \
    "e = Add(v, eps); s = Sqrt(e); n = Div(d, s); gm = Mul(n, g); y = Add(gm, bt); out y"
#define LN(axes, square)                                                                    \
    "m = ReduceMean(x) axes=" axes "; d = Sub(x, m); p = " square "; v = ReduceMean(p) axes=" \
    axes "; " LN_TAIL
#define LN_TORCH LN_HEAD("f32s[2,4,8]", "0.00001", "8") LN("[-1]", "Pow(d, two)")
#define LN_OK "ReduceMean=0 Sub=0 Pow=0 Sqrt=0 Div=0 Mul=0 Add=0 graphlab.LayerNormalization=1"

static void make_gamma_an_input(gl_model *m)
{
    gl_graph_add_input(m->graph, gl_find_value(m->graph, "g"));
}

static const pcase layernorm_cases[] = {
    {"ln_torch_op13", 13, LN_TORCH, APPLIED("layer-norm", "Div by Sqrt", LN_OK, 1)},
    {"ln_op17", 17, LN_TORCH, APPLIED("layer-norm", NULL,
     "LayerNormalization=1 graphlab.LayerNormalization=0 ReduceMean=0", 1)},
    {"ln_op12", 12, LN_TORCH, APPLIED("layer-norm", NULL, LN_OK, 1)},
    {"ln_op18_axes_input", 18,
     LN_HEAD("f32s[2,4,8]", "0.00001", "8") "const ax i64[1] = -1; m = ReduceMean(x, ax); "
     "d = Sub(x, m); p = Mul(d, d); v = ReduceMean(p, ax); " LN_TAIL,
     APPLIED("layer-norm", NULL, "LayerNormalization=1 ReduceMean=0", 1)},
    {"ln_reciprocal", 13,
     LN_HEAD("f32s[2,4,8]", "0.000001", "8") "m = ReduceMean(x) axes=[-1]; d = Sub(x, m); "
     "p = Pow(d, two); v = ReduceMean(p) axes=[-1]; e = Add(eps, v); s = Sqrt(e); "
     "r = Reciprocal(s); n = Mul(r, d); gm = Mul(g, n); y = Add(bt, gm); out y",
     APPLIED("layer-norm", "Mul by Reciprocal(Sqrt)", LN_OK " Reciprocal=0", 1)},
    {"ln_two_axes", 13, LN_HEAD("f32s[2,4,8]", "0.00001", "4,8") LN("[-2,-1]", "Mul(d, d)"),
     APPLIED("layer-norm", NULL, LN_OK, 1)},
    {"ln_positive_axis", 13, LN_HEAD("f32s[2,4,8]", "0.00001", "8") LN("[2]", "Pow(d, two)"),
     APPLIED("layer-norm", NULL, LN_OK, 1)},
    {"ln_gamma_leading_ones", 13,
     LN_HEAD("f32s[2,4,8]", "0.00001", "1,1,8") LN("[-1]", "Pow(d, two)"),
     APPLIED("layer-norm", NULL, LN_OK, 1)},
    /* gamma and beta need not be constants. */
    {"ln_gamma_input", 13, LN_TORCH,
     APPLIED("layer-norm", NULL, LN_OK, 1), .extra = make_gamma_an_input},

    {"ln_axes_not_trailing", 13, LN_HEAD("f32s[2,4,8]", "0.00001", "8") LN("[1]", "Pow(d, two)"),
     REFUSED("layer-norm", "axis 1 is not one of the last 1 (rank 3)")},
    {"ln_eps_too_big", 13, LN_HEAD("f32s[2,4,8]", "0.5", "8") LN("[-1]", "Pow(d, two)"),
     REFUSED("layer-norm", "epsilon is 0.5, expected 0 < eps <= 0.01")},
    {"ln_eps_per_feature", 13,
     "in x f32s[2,4,8]; const g f32[8] = rand; const bt f32[8] = rand; const eps f32[8] = "
     "rand; const two f32[] = 2; " LN("[-1]", "Pow(d, two)"),
     REFUSED("layer-norm", "is 8 float values of rank 1; expected one float")},
    {"ln_cube", 13,
     LN_HEAD("f32s[2,4,8]", "0.00001", "8") "const three f32[] = 3; " LN("[-1]", "Pow(d, three)"),
     REFUSED("layer-norm", "the exponent is 3, expected 2")},
    {"ln_centered_is_output", 13, LN_TORCH ", d", REFUSED("layer-norm",
     "'d' (output of Sub 'n_d') is a graph output")},
    {"ln_variance_read_twice", 13, LN_TORCH "; z = Relu(v); out z", REFUSED("layer-norm",
     "'v' (output of ReduceMean 'n_v') is also read by Relu 'n_z'")},
    {"ln_gamma_wrong_shape", 13,
     LN_HEAD("f32s[2,4,8]", "0.00001", "4,8") LN("[-1]", "Pow(d, two)"), REFUSED("layer-norm",
     "gamma 'g': dim 0 is 4, expected 1")},
    {"ln_double", 13, "in x f64[2,4,8]; const g f64[8] = rand; const bt f64[8] = rand; "
     "const eps f64[] = 0.00001; const two f64[] = 2; " LN("[-1]", "Pow(d, two)"),
     REFUSED("layer-norm", "'x' is double; the rule takes float only")},
    {"ln_op11", 11, LN_TORCH, REFUSED("layer-norm",
     "opset 11: the function body of graphlab.LayerNormalization needs opset 12")},
    /* Global average pooling by ReduceMean: no Sub reads it. */
    {"reducemean_pool", 13, "in x f32s[1,4,3,3]; m = ReduceMean(x) axes=[2,3]; out m", UNTOUCHED},
};

Test(patterns, layernorm) { RUN(layernorm_cases); }

/* ==== folding into a Conv ================================================================== */

#define CONV "in x f32s[1,3,6,6]; const w f32[4,3,3,3] = rand; const b f32[4] = rand; "
#define BN_PARAMS                                                                           \
    "const sc f32[4] = rand; const bb f32[4] = rand; const mu f32[4] = rand; "              \
    "const var f32[4] = rand; "
#define BN_OF(c) "y = BatchNormalization(" c ", sc, bb, mu, var) epsilon=0.001; out y"

static void make_w_an_input(gl_model *m)
{
    gl_graph_add_input(m->graph, gl_find_value(m->graph, "w"));
}

static const pcase fold_cases[] = {
    {"fold_bn", 13, CONV BN_PARAMS "c = Conv(x, w, b) pads=[1,1,1,1]; " BN_OF("c"),
     APPLIED("fold-batchnorm", NULL, "Conv=1 BatchNormalization=0", 1)},
    {"fold_bn_no_bias", 15, CONV BN_PARAMS "c = Conv(x, w) strides=[2,2]; " BN_OF("c"),
     APPLIED("fold-batchnorm", NULL, "Conv=1 BatchNormalization=0", 1)},
    {"fold_bn_depthwise", 13,
     "in x f32s[1,4,5,5]; const w f32[4,1,3,3] = rand; " BN_PARAMS
     "c = Conv(x, w) group=4; " BN_OF("c"),
     APPLIED("fold-batchnorm", NULL, "Conv=1 BatchNormalization=0", 1)},
    {"fold_bn_conv1d", 13,
     "in x f32s[1,3,7]; const w f32[4,3,2] = rand; " BN_PARAMS "c = Conv(x, w); " BN_OF("c"),
     APPLIED("fold-batchnorm", NULL, "Conv=1 BatchNormalization=0", 1)},
    /* The weight is shared: the other Conv keeps the old one. */
    {"fold_bn_shared_weight", 13,
     CONV BN_PARAMS "c = Conv(x, w, b); c2 = Conv(x, w, b); y = BatchNormalization(c, sc, bb, "
     "mu, var); z = Add(y, c2); out z",
     APPLIED("fold-batchnorm", NULL, "Conv=2 BatchNormalization=0", 1)},
    {"fold_mul_channel", 13,
     CONV "const k f32[4,1,1] = rand; c = Conv(x, w, b); y = Mul(c, k); out y",
     APPLIED("fold-mul", "Mul by a constant of shape [4,1,1]", "Conv=1 Mul=0", 1)},
    {"fold_mul_scalar_first", 13, CONV "const k f32[] = 0.5; c = Conv(x, w); y = Mul(k, c); out y",
     APPLIED("fold-mul", NULL, "Conv=1 Mul=0", 1)},
    {"fold_mul_then_add", 13,
     CONV "const k f32[1,4,1,1] = rand; const a f32[4,1,1] = rand; c = Conv(x, w, b); "
     "m = Mul(c, k); y = Add(m, a); out y",
     APPLIED("fold-add", "Add of a constant of shape [4,1,1]", "Conv=1 Mul=0 Add=0", 2)},
    {"fold_add_no_bias", 13,
     CONV "const a f32[1,4,1,1] = rand; c = Conv(x, w); y = Add(a, c); out y",
     APPLIED("fold-add", NULL, "Conv=1 Add=0", 1)},
    {"fold_bn_then_silu", 13,
     CONV BN_PARAMS "c = Conv(x, w, b); bn = BatchNormalization(c, sc, bb, mu, var); "
     "s = Sigmoid(bn); y = Mul(bn, s); out y",
     APPLIED("silu", NULL, "Conv=1 BatchNormalization=0 graphlab.Silu=1", 2)},

    {"fold_bn_conv_is_output", 13, CONV BN_PARAMS "c = Conv(x, w, b); " BN_OF("c") ", c",
     REFUSED("fold-batchnorm", "'c' (output of Conv 'n_c') is a graph output")},
    {"fold_bn_conv_read_twice", 13,
     CONV BN_PARAMS "c = Conv(x, w, b); y = BatchNormalization(c, sc, bb, mu, var); "
     "r = Relu(c); z = Add(y, r); out z",
     REFUSED("fold-batchnorm", "'c' (output of Conv 'n_c') is also read by Relu 'n_r'")},
    {"fold_bn_var_input", 13,
     CONV "const sc f32[4] = rand; const bb f32[4] = rand; const mu f32[4] = rand; "
     "in var f32[4] = 1,2,3,4; c = Conv(x, w, b); " BN_OF("c"),
     REFUSED("fold-batchnorm", "var 'var' is not a constant")},
    {"fold_mul_weight_overridable", 13,
     CONV "const k f32[4,1,1] = rand; c = Conv(x, w, b); y = Mul(c, k); out y",
     REFUSED("fold-mul", "weight 'w' is a graph input with a default"), .extra = make_w_an_input},
    {"fold_mul_not_per_channel", 13,
     CONV "const k f32[1,1,4,1] = rand; c = Conv(x, w, b); y = Mul(c, k); out y",
     REFUSED("fold-mul", "constant 'k' has shape [1,1,4,1]: not per channel")},
    {"fold_mul_raises_rank", 13,
     CONV "const k f32[1,1,4,1,1] = rand; c = Conv(x, w, b); y = Mul(c, k); out y",
     REFUSED("fold-mul", "has shape [1,1,4,1,1]: not per channel")},
    /* A residual Add and a product of two activations are not constants. */
    {"conv_residual", 13,
     "in x f32s[1,4,6,6]; const w f32[4,4,3,3] = rand; c = Conv(x, w) pads=[1,1,1,1]; "
     "y = Add(c, x); out y",
     UNTOUCHED},
};

Test(patterns, fold_into_conv) { RUN(fold_cases); }

/* ==== a per-channel op moved above a Concat ============================================= */

#define HOIST_OK(ops_) APPLIED("hoist-above-concat", "moved above Concat 'n_c'", ops_, 0)
#define CAT_AB "in a f32s[1,3,6,6]; in b f32s[1,5,6,6]; c = Concat(a, b) axis=1; "

/* The MaxPool of the row made graphlab's channels-last form. */
static void make_nhwc_pool(gl_model *m)
{
    gl_node *n = gl_find_node(m->graph, "n_p");
    free(n->domain);
    n->domain = gl_xstrdup("graphlab");
    gl_model_set_opset(m, "graphlab", 1);
}

/* What a hoist makes goes away only when a 1x1 convolution that fusion splits over the
 * Concat's inputs reads the result, or (an activation) when convolutions or matrix
 * products make every Concat input: C1X1 is that reader, 8 channels in, 4 out. */
#define C1X1 "const w f32[4,8,1,1] = rand; y = Conv(p, w); out y"
#define COST(what_) REFUSED("hoist-above-concat", what_)

static const pcase hoist_cases[] = {
    /* squeezenet's Fire output: ceil_mode and stride 2, one MaxPool per input. */
    {"hoist_maxpool", 13, CAT_AB "p = MaxPool(c) kernel_shape=[3,3] strides=[2,2] ceil_mode=1; "
     C1X1, HOIST_OK("MaxPool=2 Concat=1")},
    {"hoist_avgpool_pads", 13, CAT_AB "p = AveragePool(c) kernel_shape=[3,3] pads=[1,1,1,1] "
     "count_include_pad=0; " C1X1, HOIST_OK("AveragePool=2 Concat=1")},
    {"hoist_global_pool_neg_axis", 13,
     "in a f32s[2,3,4,4]; in b f32s[2,1,4,4]; in d f32s[2,4,4,4]; c = Concat(a, b, d) axis=-3; "
     "p = GlobalAveragePool(c); " C1X1, HOIST_OK("GlobalAveragePool=3 Concat=1")},
    /* Elementwise: any axis; the producers take the copies as post-ops. */
    {"hoist_relu_any_axis", 13, "in x f32s[2,4]; in z f32s[4,4]; const wa f32[4,3] = rand; "
     "a = MatMul(x, wa); e = MatMul(z, wa); c = Concat(a, e) axis=0; p = Relu(c); out p",
     HOIST_OK("Relu=2 Concat=1")},
    {"hoist_relu_over_convs", 13, "in x f32s[1,3,6,6]; const wa f32[3,3,1,1] = rand; "
     "const wb f32[5,3,3,3] = rand; a = Conv(x, wa); e = Conv(x, wb) pads=[1,1,1,1]; "
     "c = Concat(a, e) axis=1; p = Relu(c); out p", HOIST_OK("Relu=2 Concat=1")},
    /* Clip's bounds are read by every copy. */
    {"hoist_clip_bounds", 13, CAT_AB "const lo f32[] = -0.5; const hi f32[] = 0.25; "
     "p = Clip(c, lo, hi); " C1X1, HOIST_OK("Clip=2 Concat=1")},

    /* The cost: the Concat would stay, the graph would only grow. */
    {"hoist_cost_no_conv", 13, CAT_AB "p = MaxPool(c) kernel_shape=[3,3] strides=[2,2]; out p",
     COST("cost: MaxPool 'n_p' copied 2 times would leave Concat 'n_c' in place")},
    {"hoist_cost_pool_then_relu", 13, CAT_AB "p = MaxPool(c) kernel_shape=[2,2]; "
     "r = Relu(p); out r", COST("its reader Relu 'n_r' is no convolution of it")},
    {"hoist_cost_readers", 13, CAT_AB "p = MaxPool(c) kernel_shape=[2,2]; "
     "const w f32[4,8,1,1] = rand; y = Conv(p, w); r = Relu(p); out y, r",
     COST("its output has several readers")},
    {"hoist_cost_conv_widens", 13, CAT_AB "p = MaxPool(c) kernel_shape=[2,2]; "
     "const w f32[16,8,1,1] = rand; y = Conv(p, w); out y",
     COST("16 output channels from 8 input channels")},
    {"hoist_cost_conv_3x3", 13, CAT_AB "p = MaxPool(c) kernel_shape=[2,2]; "
     "const w f32[4,8,3,3] = rand; y = Conv(p, w); out y", COST("not 1x1 weights")},
    {"hoist_cost_conv_grouped", 13, CAT_AB "p = MaxPool(c) kernel_shape=[2,2]; "
     "const w f32[4,4,1,1] = rand; y = Conv(p, w) group=2; out y", COST("group 2")},
    {"hoist_cost_relu_over_inputs", 13, CAT_AB "p = Relu(c); out p",
     COST("not every Concat input is a convolution or matrix product")},
    {"hoist_cost_relu_producer_branches", 13, "in x f32s[1,3,6,6]; "
     "const wa f32[3,3,1,1] = rand; a = Conv(x, wa); e = Sigmoid(x); "
     "c = Concat(a, e) axis=1; p = Relu(c); out p, a",
     COST("not every Concat input is a convolution or matrix product")},

    {"hoist_concat_read_twice", 13, CAT_AB "p = MaxPool(c) kernel_shape=[2,2]; "
     "r = Relu(c); out p, r", REFUSED("hoist-above-concat", "is read by 2 nodes")},
    {"hoist_concat_is_output", 13, CAT_AB "p = MaxPool(c) kernel_shape=[2,2]; out p, c",
     REFUSED("hoist-above-concat", "'c' is a graph output")},
    {"hoist_pool_spatial_axis", 13,
     "in a f32s[1,3,6,6]; in b f32s[1,3,2,6]; c = Concat(a, b) axis=2; "
     "p = MaxPool(c) kernel_shape=[2,2]; out p",
     REFUSED("hoist-above-concat", "joins along axis 2 of rank 4")},
    {"hoist_maxpool_indices", 13, CAT_AB "p, i = MaxPool(c) kernel_shape=[2,2]; out p, i",
     REFUSED("hoist-above-concat", "Indices")},
    {"hoist_unknown_shape", 13,
     "in a f32?[1,3,6,6]; in b f32s[1,5,6,6]; c = Concat(a, b) axis=1; "
     "p = MaxPool(c) kernel_shape=[2,2]; out p",
     REFUSED("hoist-above-concat", "input 0 'a' has no known size along axis 1")},
    /* Channels-last: the channel axis is the last; a Concat along dim 1 is spatial. */
    {"hoist_nhwc_axis_1", 13,
     "in a f32s[1,3,6,4]; in b f32s[1,5,6,4]; c = Concat(a, b) axis=1; "
     "p = NhwcMaxPool(c) kernel_shape=[2,2]; out p",
     REFUSED("hoist-above-concat", "along axis 3 only"), .extra = make_nhwc_pool},
    /* Not the pattern: a Concat read by a Conv, a binary op over a Concat. */
    {"hoist_concat_conv", 13, CAT_AB "const w f32[2,8,1,1] = rand; y = Conv(c, w); out y",
     UNTOUCHED},
    {"hoist_concat_add", 13, CAT_AB "y = Add(c, c); out y", UNTOUCHED},
};

Test(patterns, hoist_above_concat) { RUN(hoist_cases); }

/* ==== an average pooling run before the 1x1 convolution it reads ======================= */

#define POOL_FIRST(ops_)                                                                   \
    APPLIED("pool-before-conv1x1", "runs before Conv 'n_c'", ops_, 1)
#define CONV1X1 "in x f32s[2,8,6,6]; const w f32[4,8,1,1] = rand; const b f32[4] = rand; "
#define NOT_FIRST(why_) REFUSED("pool-before-conv1x1", why_)

/* Each applied row computes what it did (the table's run on random inputs): a pooling
 * that lost the convolution's bias, or kept the convolution's channel count, fails. */
static const pcase pool_first_cases[] = {
    /* DenseNet's transition: Relu, 1x1 convolution, AveragePool 2x2 stride 2 */
    {"pool_first_transition", 13, CONV1X1 "r = Relu(x); c = Conv(r, w, b); "
     "p = AveragePool(c) kernel_shape=[2,2] strides=[2,2]; out p",
     POOL_FIRST("AveragePool=1 Conv=1 Relu=1")},
    {"pool_first_3x3_stride_2_no_bias", 13, "in x f32s[1,5,7,7]; const w f32[3,5,1,1] = rand; "
     "c = Conv(x, w); p = AveragePool(c) kernel_shape=[3,3] strides=[2,2]; out p",
     POOL_FIRST("AveragePool=1 Conv=1")},
    {"pool_first_grouped", 13, "in x f32s[2,8,6,6]; const w f32[4,4,1,1] = rand; "
     "const b f32[4] = rand; c = Conv(x, w, b) group=2 kernel_shape=[1,1]; "
     "p = AveragePool(c) kernel_shape=[2,2] strides=[2,2]; out p",
     POOL_FIRST("AveragePool=1 Conv=1")},
    {"pool_first_1d", 13, "in x f32s[2,6,10]; const w f32[4,6,1] = rand; c = Conv(x, w); "
     "p = AveragePool(c) kernel_shape=[2] strides=[2]; out p", POOL_FIRST("AveragePool=1 Conv=1")},

    /* A 1x1 stride-1 pool, the one unpadded pool that does not shrink the map, is
     * removed by noop elimination first (noop_elimination's unit_avgpool row). */
    {"pool_first_conv_3x3", 13, "in x f32s[1,8,6,6]; const w f32[4,8,3,3] = rand; "
     "c = Conv(x, w) pads=[1,1,1,1]; p = AveragePool(c) kernel_shape=[2,2] strides=[2,2]; "
     "out p", NOT_FIRST("is not 1x1")},
    {"pool_first_conv_strided", 13, CONV1X1 "c = Conv(x, w, b) strides=[2,2]; "
     "p = AveragePool(c) kernel_shape=[3,3]; out p", NOT_FIRST("is not 1x1, stride 1")},
    {"pool_first_pool_pads", 13, CONV1X1 "c = Conv(x, w, b); "
     "p = AveragePool(c) kernel_shape=[2,2] strides=[2,2] pads=[1,1,1,1]; out p",
     NOT_FIRST("pads or has ceil_mode")},
    {"pool_first_ceil_mode", 13, "in x f32s[1,8,7,7]; const w f32[4,8,1,1] = rand; "
     "c = Conv(x, w); p = AveragePool(c) kernel_shape=[2,2] strides=[2,2] ceil_mode=1; out p",
     NOT_FIRST("pads or has ceil_mode")},
    {"pool_first_conv_read_twice", 13, CONV1X1 "c = Conv(x, w, b); "
     "p = AveragePool(c) kernel_shape=[2,2] strides=[2,2]; r = Relu(c); out p, r",
     NOT_FIRST("'c'")},
    /* Not the pattern: a pooling of anything else, a MaxPool of a 1x1 convolution. */
    {"pool_first_of_relu", 13, "in x f32s[1,8,6,6]; r = Relu(x); "
     "p = AveragePool(r) kernel_shape=[2,2] strides=[2,2]; out p", UNTOUCHED},
    {"pool_first_maxpool", 13, CONV1X1 "c = Conv(x, w, b); "
     "p = MaxPool(c) kernel_shape=[2,2] strides=[2,2]; out p", UNTOUCHED},
};

Test(patterns, pool_before_conv1x1) { RUN(pool_first_cases); }

/* Channels-last pooling along the last axis moves too, and a hoist the cost refused is
 * forced by its id. Apart from the table: the model has no function for NhwcMaxPool
 * (layout adds it), so only its kernel runs it. */
#define HOIST_NHWC                                                                        \
    "in a f32s[1,6,6,3]; in b f32s[1,6,6,5]; c = Concat(a, b) axis=3; "                   \
    "p = NhwcMaxPool(c) kernel_shape=[2,2] strides=[2,2]; out p"

/* The run's first hoist-above-concat record (the test fails without one). */
static const gl_decision *hoist_record(const gl_pipeline *p)
{
    for (size_t i = 0; i < p->log.n; i++)
        if (!strcmp(p->log.items[i].rule, "hoist-above-concat"))
            return &p->log.items[i];
    cr_assert(false, "no hoist-above-concat record");
    return NULL;
}

Test(patterns, hoist_nhwc_pool_forced)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes("hoist_nhwc", 13, HOIST_NHWC, make_nhwc_pool, PASSES, &b);
    cr_assert(p);
    const gl_decision *refused = hoist_record(p);
    cr_expect_eq(refused->verdict, GL_REFUSED);
    cr_expect(strstr(refused->reason, "cost: NhwcMaxPool 'n_p'"), "%s", refused->reason);
    cr_expect_eq(gl_decision_number_value(refused, "forceable"), 1);
    gn_expect_op_counts("hoist_nhwc", "graphlab.NhwcMaxPool=1 Concat=1",
                        gl_pipeline_result(p)->graph);
    char set[64];
    snprintf(set, sizeof(set), "patterns.force=%lld", (long long)refused->id);
    gl_pipeline_free(p);

    p = gn_run_passes_set("hoist_nhwc", 13, HOIST_NHWC, make_nhwc_pool, PASSES, set, &b);
    cr_assert(p);
    const gl_model *before = p->steps[p->n_steps - 2].model, *after = gl_pipeline_result(p);
    const gl_decision *d = hoist_record(p);
    cr_expect_eq(d->verdict, GL_APPLIED);
    cr_expect(strstr(d->reason, "forced (--set patterns.force=") == d->reason, "%s", d->reason);
    /* what was done first, then what it overrode (issue 24: it said only the refusal) */
    cr_expect(strstr(d->reason, "): NhwcMaxPool 'n_p' moved above Concat '"), "%s", d->reason);
    cr_expect(strstr(d->reason, "; overriding cost: NhwcMaxPool 'n_p' copied 2 times"), "%s",
              d->reason);
    cr_expect_eq(gl_graph_verify(after->graph, false), GL_OK, "%s", gl_error_message());
    gn_expect_op_counts("hoist_nhwc", "graphlab.NhwcMaxPool=2 Concat=1", after->graph);
    gn_expect_same_outputs("hoist_nhwc", &b, before, after, RTOL, ATOL, false);
    gl_pipeline_free(p);
}

/* ==== nodes that compute nothing; a Pad folded into its reader ========================== */

#define NOOP_OK(rule_, ops_) APPLIED(rule_, "removed: it passes", ops_, 0)
#define X14 "in x f32s[1,4]; "

static const pcase noop_cases[] = {
    {"identity", 13, X14 "a = Identity(x); y = Relu(a); out y",
     NOOP_OK("eliminate-identity", "Identity=0 Relu=1")},
    /* The graph output keeps its name: the Relu makes 'y' itself. */
    {"identity_output", 13, X14 "a = Relu(x); y = Identity(a); out y",
     NOOP_OK("eliminate-identity", "Identity=0 Relu=1")},
    {"identity_chain", 13, X14 "a = Identity(x); b = Relu(a); c = Identity(b); y = Identity(c); "
     "out y", APPLIED("eliminate-identity", NULL, "Identity=0 Relu=1", 3)},
    {"identity_input_to_output", 13, X14 "y = Identity(x); out y",
     REFUSED("eliminate-identity", "'x' is a graph input or a constant")},
    {"identity_output_shared_input", 13, X14 "a = Relu(x); y = Identity(a); z = Sigmoid(a); "
     "out y, z", REFUSED("eliminate-identity", "read by other nodes as well")},
    {"dropout", 13, X14 "a = Relu(x); d = Dropout(a); y = Sigmoid(d); out y",
     NOOP_OK("eliminate-dropout", "Dropout=0 Relu=1 Sigmoid=1")},
    {"dropout_ratio_input", 13, X14 "const r f32[] = 0.3; a = Relu(x); d = Dropout(a, r); "
     "y = Sigmoid(d); out y", NOOP_OK("eliminate-dropout", "Dropout=0 Relu=1 Sigmoid=1")},
    {"dropout_not_training", 13, X14 "const r f32[] = 0.3; const t bool[] = 0; a = Relu(x); "
     "d = Dropout(a, r, t); y = Sigmoid(d); out y",
     NOOP_OK("eliminate-dropout", "Dropout=0 Relu=1 Sigmoid=1")},
    /* Training with ratio 0 drops nothing and scales by 1: x exactly (swin_t's). */
    {"dropout_training_ratio_0", 13, X14 "const r f32[] = 0; const t bool[] = 1; a = Relu(x); "
     "d = Dropout(a, r, t); y = Sigmoid(d); out y",
     NOOP_OK("eliminate-dropout", "Dropout=0 Relu=1 Sigmoid=1")},
    {"dropout_training", 13, X14 "const r f32[] = 0.3; const t bool[] = 1; a = Relu(x); "
     "d = Dropout(a, r, t); y = Sigmoid(d); out y",
     REFUSED("eliminate-dropout", "training_mode is true and its ratio is not 0"), .random = true},
    {"dropout_training_default_ratio", 13, X14 "const t bool[] = 1; a = Relu(x); "
     "d = Dropout(a, , t); y = Sigmoid(d); out y",
     REFUSED("eliminate-dropout", "its ratio is 0.5 (the default)"), .random = true},
    {"dropout_training_ratio_input", 13, X14 "in r f32[]; const t bool[] = 1; a = Relu(x); "
     "d = Dropout(a, r, t); y = Sigmoid(d); out y",
     REFUSED("eliminate-dropout", "its ratio is not a constant"), .random = true},

    {"dropout_mask_read", 13, X14 "a = Relu(x); d, k = Dropout(a); y = Sigmoid(d); out y, k",
     REFUSED("eliminate-dropout", "its mask 'k' is read")},
    {"cast_same_type", 13, X14 "a = Relu(x); c = Cast(a) to=1; y = Sigmoid(c); out y",
     NOOP_OK("eliminate-cast", "Cast=0 Relu=1 Sigmoid=1")},
    {"cast_converts", 13, X14 "a = Relu(x); c = Cast(a) to=11; out c", UNTOUCHED},
    /* torchvision's AdaptiveAvgPool2d on an input of its output size (AlexNet, VGG) */
    {"unit_avgpool", 13, "in x f32s[2,3,6,6]; a = Relu(x); p = AveragePool(a) "
     "kernel_shape=[1,1] strides=[1,1]; y = Sigmoid(p); out y",
     NOOP_OK("eliminate-unit-avgpool", "AveragePool=0 Relu=1 Sigmoid=1")},
    {"unit_maxpool_same", 13, "in x f32s[1,2,5,4]; a = Relu(x); p = MaxPool(a) "
     "kernel_shape=[1,1] auto_pad=\"SAME_UPPER\"; y = Sigmoid(p); out y",
     NOOP_OK("eliminate-unit-maxpool", "MaxPool=0 Relu=1 Sigmoid=1")},
    {"unit_maxpool_indices_read", 13, "in x f32s[1,2,5,4]; a = Relu(x); p, i = MaxPool(a) "
     "kernel_shape=[1,1]; y = Sigmoid(p); out y, i",
     REFUSED("eliminate-unit-maxpool", "output 1 'i' is read")},
    {"avgpool_stride_2", 13, "in x f32s[1,2,6,6]; p = AveragePool(x) kernel_shape=[1,1] "
     "strides=[2,2]; y = Relu(p); out y", UNTOUCHED},
    {"avgpool_padded", 13, "in x f32s[1,2,6,6]; p = AveragePool(x) kernel_shape=[1,1] "
     "pads=[1,1,1,1] count_include_pad=1; y = Relu(p); out y", UNTOUCHED},
    {"maxpool_2x1", 13, "in x f32s[1,2,6,6]; p = MaxPool(x) kernel_shape=[2,1]; "
     "y = Relu(p); out y", UNTOUCHED},
};

Test(patterns, noop_elimination) { RUN(noop_cases); }

#define PAD_IN "in x f32s[1,2,5,5]; "
#define PAD11 "const p i64[8] = 0,0,1,1,0,0,1,1; "
#define FOLDED(reader_) APPLIED("fold-pad", "folded into " reader_, "Pad=0 " reader_ "=1", 1)

static const pcase pad_cases[] = {
    {"pad_zeros", 13, PAD_IN "const p i64[8] = 0,0,0,0,0,0,0,0; t = Pad(x, p); y = Relu(t); "
     "out y", APPLIED("fold-pad", "every pad is 0", "Pad=0 Relu=1", 1)},
    /* inception_v3's branch pool: a zero Pad, then an unpadded average. */
    {"pad_avgpool", 13, PAD_IN PAD11 "t = Pad(x, p); y = AveragePool(t) kernel_shape=[3,3]; "
     "out y", FOLDED("AveragePool")},
    {"pad_avgpool_counting", 13, PAD_IN PAD11 "t = Pad(x, p); y = AveragePool(t) "
     "kernel_shape=[2,2] pads=[0,1,1,0] count_include_pad=1 strides=[2,2]; out y",
     FOLDED("AveragePool")},
    {"pad_conv_uneven", 13, PAD_IN "const p i64[8] = 0,0,1,2,0,0,2,1; t = Pad(x, p); "
     "const w f32[3,2,3,3] = rand; y = Conv(t, w) pads=[1,0,0,1]; out y", FOLDED("Conv")},
    {"pad_maxpool_minus_inf", 13, PAD_IN PAD11 "const v f32[] = -inf; t = Pad(x, p, v); "
     "y = MaxPool(t) kernel_shape=[3,3] strides=[2,2]; out y", FOLDED("MaxPool")},
    {"pad_opset10_attrs", 10, PAD_IN "t = Pad(x) pads=[0,0,1,1,0,0,1,1]; "
     "y = AveragePool(t) kernel_shape=[3,3]; out y", FOLDED("AveragePool")},

    {"pad_avgpool_ceil", 13, PAD_IN PAD11 "t = Pad(x, p); y = AveragePool(t) "
     "kernel_shape=[2,2] strides=[2,2] ceil_mode=1; out y",
     REFUSED("fold-pad", "ceil_mode 1")},
    {"pad_avgpool_not_counting", 13, PAD_IN PAD11 "t = Pad(x, p); y = AveragePool(t) "
     "kernel_shape=[3,3] pads=[1,1,1,1]; out y",
     REFUSED("fold-pad", "pads itself without counting the padding")},
    {"pad_maxpool_ceil", 13, PAD_IN PAD11 "const v f32[] = -inf; t = Pad(x, p, v); "
     "y = MaxPool(t) kernel_shape=[2,2] strides=[2,2] ceil_mode=1; out y",
     REFUSED("fold-pad", "MaxPool 'n_y' has ceil_mode 1")},
    {"pad_maxpool_indices", 13, PAD_IN PAD11 "const v f32[] = -inf; t = Pad(x, p, v); "
     "y, i = MaxPool(t) kernel_shape=[3,3]; out y, i", REFUSED("fold-pad", "has Indices")},
    {"pad_maxpool_zero", 13, PAD_IN PAD11 "t = Pad(x, p); y = MaxPool(t) kernel_shape=[3,3]; "
     "out y", REFUSED("fold-pad", "pads with 0: MaxPool 'n_y' ignores its padding")},
    {"pad_conv_value", 13, PAD_IN PAD11 "const v f32[] = 2.5; t = Pad(x, p, v); "
     "const w f32[3,2,3,3] = rand; y = Conv(t, w); out y", REFUSED("fold-pad", "pads with 2.5")},
    {"pad_channels", 13, PAD_IN "const p i64[8] = 0,1,0,0,0,0,0,0; t = Pad(x, p); "
     "const w f32[3,3,1,1] = rand; y = Conv(t, w); out y",
     REFUSED("fold-pad", "pads axis 1 (batch or channels)")},
    {"pad_crops", 13, PAD_IN "const p i64[8] = 0,0,-1,0,0,0,0,0; t = Pad(x, p); "
     "const w f32[3,2,1,1] = rand; y = Conv(t, w); out y", REFUSED("fold-pad", "crops")},
    {"pad_reflect", 13, PAD_IN PAD11 "t = Pad(x, p) mode=\"reflect\"; "
     "const w f32[3,2,3,3] = rand; y = Conv(t, w); out y", REFUSED("fold-pad", "mode reflect")},
    {"pad_zeros_input_to_output", 13, PAD_IN "const p i64[8] = 0,0,0,0,0,0,0,0; "
     "y = Pad(x, p); out y", REFUSED("fold-pad", "is a graph input")},
    /* A Pad of its own, or read by two nodes: not the pattern. */
    {"pad_alone", 13, PAD_IN PAD11 "t = Pad(x, p); y = Relu(t); out y", UNTOUCHED},
};

Test(patterns, fold_pad) { RUN(pad_cases); }

/* ==== the pass as a whole ================================================================= */

/* PASS:K stops after K rewrites, with the same decisions as the first K of a full run. */
Test(patterns, budget)
{
    gn_graph b;
    cr_assert(gn_build("budget", 13,
                       "in x f32w[2,3]; s = Sigmoid(x); y = Mul(x, s); s2 = Sigmoid(y); "
                       "y2 = Mul(y, s2); out y2",
                       &b),
              "%s", b.err);
    gl_pass_step *plan = NULL;
    size_t n = 0;
    cr_assert_eq(gl_pass_list_parse("toposort,shape-inference,patterns:1", &plan, &n), GL_OK);
    gl_pipeline *p = NULL;
    cr_assert_eq(gl_pipeline_run(b.m, plan, n, NULL, 0, &p), GL_OK, "%s", gl_error_message());
    const gl_graph *g = gl_pipeline_result(p)->graph;
    cr_expect_eq(gn_count_op(g, "graphlab.Silu"), 1);
    cr_expect_eq(gn_count_op(g, "Sigmoid"), 1);
    cr_expect_eq(p->steps[p->n_steps - 1].rewrites, 1);
    free(plan);
    gl_pipeline_free(p);
}

/* In the default pipeline, after the second dce. */
Test(patterns, in_default_pipeline)
{
    gl_pass_step *plan = NULL;
    size_t n = 0;
    cr_assert_eq(gl_pass_list_parse("all", &plan, &n), GL_OK);
    size_t at = n, last_dce = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(plan[i].pass->name, "patterns"))
            at = i;
        if (!strcmp(plan[i].pass->name, "dce"))
            last_dce = i;
    }
    cr_expect(at < n && at > last_dce, "patterns at step %zu, the last dce at %zu", at, last_dce);
    free(plan);
}

/* Every rule is in the table once, with its documentation. */
Test(patterns, rule_table)
{
    size_t n;
    const gl_pt_rule *r = gl_pt_rules(&n);
    cr_assert_geq(n, 9);
    for (size_t i = 0; i < n; i++) {
        cr_expect(r[i].name && r[i].anchor && r[i].pattern && r[i].replacement && r[i].check &&
                      r[i].apply,
                  "rule %zu is incomplete", i);
        for (size_t j = 0; j < i; j++)
            cr_expect(strcmp(r[i].name, r[j].name), "rule %s twice", r[i].name);
    }
}

/* dn_eltwise.c — unary elementwise ops as oneDNN eltwise primitives.
 *
 * An eltwise primitive works on any layout: the output takes the input's layout, so a
 * Relu between two convolutions stays in nChw16c. A row of the table maps an ONNX op to
 * an algorithm and its alpha/beta (from attributes, or — Clip from opset 11, Pow — from
 * constant inputs), and optionally a second step as a post-op (HardSigmoid is a linear
 * step clipped to [0, 1]; oneDNN 2.6 has no hardsigmoid; Selu is gamma times elu).
 *
 * graphlab's activations (Gelu, GeluTanh, Silu, HardSwish: what the `patterns` pass makes
 * before ONNX has the op) and ONNX's Gelu-20 are rows too, so they run here alone and as
 * post-ops of a fused unit (dn_fused.c) from this one table.
 *
 * Small plain tensors stay on the reference kernel: below DN_OPS_SMALL elements the
 * OpenMP fork and join of a primitive costs more than the loop (the plan says so).
 *
 * tanh and gelu_tanh on a CPU without AVX-512 run graphlab's own AVX2 kernel instead
 * (dn_node.native): oneDNN 2.6's tanh there is five times its logistic (128x512 floats,
 * one thread: tanh 279 us, gelu_tanh 326 us, logistic 56 us, gelu_erf 68 us), which
 * made a GPT-2 block's Gelu 0.25 ms of its 1.2 ms at batch 8 (ONNX Runtime's FastGelu:
 * 0.07 ms). As post-ops they are as slow, so on such a CPU they are none
 * (dn_eltwise_post_slow): the fusion pass leaves them apart and a fused unit runs them
 * as a segment of their own, natively. SiLU too: oneDNN's swish post-op there costs more
 * than the convolution it follows (1x1 16->96 at 112x112, one thread: 0.54 ms alone, 1.33
 * with the swish, 1.07 with graphlab's SiLU after it), and apart the convolution may take
 * a kernel that has no swish (Winograd: efficientnet_v2_s at one thread, per-node
 * minimums summed, 84.5 -> 61 ms).
 */
#include "exec/dnnl/dn_opkit.h"
#include "exec/target.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec/dnnl/dn_avx2.h"


/* How an op becomes an eltwise: the algorithm with alpha/beta read from attributes
 * (NULL name: the default is the value), and an optional post-op step. Clip and Pow
 * take their parameters from inputs instead (params()). */
struct elt_args;

typedef struct elt_row {
    const char *domain;       /* NULL: ai.onnx */
    const char *op;
    int since;
    dnnl_alg_kind_t alg;
    /* The algorithm from the node instead (NULL: alg); false when it has none. */
    bool (*pick)(const gl_node *n, dnnl_alg_kind_t *alg);
    const char *alpha_attr;
    float alpha;
    const char *beta_attr;
    float beta;
    dnnl_alg_kind_t post;     /* 0: none */
    const char *post_alpha_attr;
    float post_alpha, post_beta;
    /* Parameters from inputs (NULL: none); false (why set) when they are not scalars. */
    bool (*params)(const struct elt_args *a, float *alpha, float *beta, const char **why);
} elt_row;

/* The node and its inputs as a build (or a fused unit) sees them. */
typedef struct elt_args {
    const gl_node *node;
    int64_t opset;
    const gl_tensor *const *in;
    const bool *fixed;        /* in[i] holds the same value on every run */
    size_t n_in;
} elt_args;

/* A scalar float32 input i that holds the same value on every run (absent: `dflt`):
 * the primitive is built with its value. False when it is not one. */
static bool scalar_input(const elt_args *a, size_t i, float dflt, float *out)
{
    const gl_tensor *t = i < a->n_in ? a->in[i] : NULL;
    if (!t) {
        *out = dflt;
        return true;
    }
    if (t->dtype != GL_DT_FLOAT || t->count != 1 || t->layout || !a->fixed[i])
        return false;
    *out = *(const float *)gl_tensor_data(t);
    return true;
}

/* Clip: min/max as attributes before opset 11, as optional inputs from 11; either way an
 * absent bound is the float range's (ONNX: numeric_limits lowest() and max()). */
static bool clip_params(const elt_args *a, float *lo, float *hi, const char **why)
{
    if (a->opset < 11) {
        *lo = gl_node_attr_float(a->node, "min", -FLT_MAX);
        *hi = gl_node_attr_float(a->node, "max", FLT_MAX);
    } else if (!scalar_input(a, 1, -FLT_MAX, lo) || !scalar_input(a, 2, FLT_MAX, hi)) {
        *why = "min/max are not fixed float32 scalars";
        return false;
    }
    if (isnan(*lo) || isnan(*hi)) {
        *why = "a NaN bound";
        return false;
    }
    return true;
}

/* Pow(x, e) with a scalar e: oneDNN's pow is alpha * x^beta. */
static bool pow_params(const elt_args *a, float *alpha, float *beta, const char **why)
{
    *alpha = 1.0f;
    if (!scalar_input(a, 1, 1.0f, beta)) {
        *why = "the exponent is not a fixed float32 scalar";
        return false;
    }
    return true;
}

/* ai.onnx Gelu-20: gelu_erf, or gelu_tanh under approximate="tanh". */
static bool gelu_pick(const gl_node *n, dnnl_alg_kind_t *alg)
{
    const char *approx = gl_node_attr_string(n, "approximate", "none");
    *alg = strcmp(approx, "tanh") == 0 ? dnnl_eltwise_gelu_tanh : dnnl_eltwise_gelu_erf;
    return strcmp(approx, "tanh") == 0 || strcmp(approx, "none") == 0;
}

#define ROW(name, since_, alg_, ...) {.op = name, .since = since_, .alg = alg_, __VA_ARGS__}
/* graphlab's activations (the patterns pass makes them) */
#define GL_ROW(name, alg_, ...)                                                          \
    {.domain = "graphlab", .op = name, .since = 1, .alg = alg_, __VA_ARGS__}
static const elt_row elt_rows[] = {
    ROW("Relu", 1, dnnl_eltwise_relu, .alpha = 0),
    ROW("LeakyRelu", 1, dnnl_eltwise_relu, .alpha_attr = "alpha", .alpha = 0.01f),
    ROW("Elu", 1, dnnl_eltwise_elu, .alpha_attr = "alpha", .alpha = 1.0f),
    /* gamma * elu(x) with elu's alpha: Selu exactly */
    ROW("Selu", 1, dnnl_eltwise_elu, .alpha_attr = "alpha", .alpha = 1.67326319217681884765625f,
        .post = dnnl_eltwise_linear, .post_alpha_attr = "gamma",
        .post_alpha = 1.05070102214813232421875f),
    ROW("Sigmoid", 1, dnnl_eltwise_logistic, .alpha = 0),
    ROW("Tanh", 1, dnnl_eltwise_tanh, .alpha = 0),
    /* oneDNN 2.6 has no hardsigmoid: clip(alpha * x + beta, 0, 1) */
    ROW("HardSigmoid", 1, dnnl_eltwise_linear, .alpha_attr = "alpha", .alpha = 0.2f,
        .beta_attr = "beta", .beta = 0.5f, .post = dnnl_eltwise_clip_v2, .post_alpha = 0.0f,
        .post_beta = 1.0f),
    ROW("HardSwish", 14, dnnl_eltwise_hardswish, .alpha = 0),
    ROW("Exp", 1, dnnl_eltwise_exp, .alpha = 0),
    ROW("Log", 1, dnnl_eltwise_log, .alpha = 0),
    ROW("Sqrt", 1, dnnl_eltwise_sqrt, .alpha = 0),
    ROW("Abs", 1, dnnl_eltwise_abs, .alpha = 0),
    ROW("Softplus", 1, dnnl_eltwise_soft_relu, .alpha = 0),
    ROW("Round", 11, dnnl_eltwise_round, .alpha = 0),
    ROW("Neg", 1, dnnl_eltwise_linear, .alpha = -1.0f),
    ROW("Reciprocal", 1, dnnl_eltwise_pow, .alpha = 1.0f, .beta = -1.0f),
    ROW("Clip", 1, dnnl_eltwise_clip_v2, .params = clip_params),
    ROW("Pow", 1, dnnl_eltwise_pow, .params = pow_params),
    ROW("Gelu", 20, dnnl_eltwise_gelu_erf, .pick = gelu_pick),
    GL_ROW("Gelu", dnnl_eltwise_gelu_erf, .alpha = 0),
    GL_ROW("GeluTanh", dnnl_eltwise_gelu_tanh, .alpha = 0),
    GL_ROW("Silu", dnnl_eltwise_swish, .alpha = 1.0f),
    GL_ROW("HardSwish", dnnl_eltwise_hardswish, .alpha = 0),
};
#undef ROW
#undef GL_ROW

static const elt_row *row_of(const gl_node *n)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(elt_rows); i++) {
        const elt_row *r = &elt_rows[i];
        if (gl_node_is_in(n, r->domain, r->op))
            return r;
    }
    return NULL;
}

static float attr_or(const gl_node *n, const char *name, float dflt)
{
    return name ? gl_node_attr_float(n, name, dflt) : dflt;
}

/* The row's steps for the node: the algorithm and its parameters, then the row's post-op. */
static bool row_posts(const elt_row *row, const elt_args *a, dn_post post[2], size_t *n_post,
                      const char **why)
{
    const gl_node *n = a->node;
    float alpha = attr_or(n, row->alpha_attr, row->alpha);
    float beta = attr_or(n, row->beta_attr, row->beta);
    if (row->params && !row->params(a, &alpha, &beta, why))
        return false;
    dnnl_alg_kind_t alg = row->alg;
    if (row->pick && !row->pick(n, &alg)) {
        *why = "an attribute value oneDNN has no algorithm for";
        return false;
    }
    post[0] = (dn_post){alg, alpha, beta, 1.0f, NULL};
    post[1] = (dn_post){row->post, attr_or(n, row->post_alpha_attr, row->post_alpha),
                        row->post_beta, 1.0f, NULL};
    *n_post = row->post ? 2 : 1;
    return true;
}

bool dn_eltwise_posts(const gl_node *n, int64_t opset, const gl_tensor *const *in,
                      const bool *fixed, size_t n_in, dn_post *post, size_t *n_post,
                      const char **why)
{
    const elt_row *row = row_of(n);
    if (!row || (!row->domain && opset < row->since)) {
        *why = NULL;
        return false;
    }
    elt_args a = {n, opset, in, fixed, n_in};
    return row_posts(row, &a, post, n_post, why);
}

static bool reference_kernel(const_dnnl_primitive_desc_t pd)
{
    const char *impl = NULL;
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) ==
               dnnl_success && impl && strncmp(impl, "ref", 3) == 0;
}

/* oneDNN 2.6 runs an eltwise with a post-op on its reference kernel only, about a
 * hundred times slower than its jit one (HardSigmoid over mobilenet_v3's activations:
 * 3.5 ms instead of 0.03): the first step alone as *pd, the second as a primitive of its
 * own that the node runs in place on its output (dn_node.then). */
static dnnl_status_t second_step_apart(dn_build *b, const dnnl_eltwise_desc_t *first,
                                       const dn_post *second, dnnl_primitive_desc_t *pd)
{
    dnnl_primitive_desc_destroy(*pd);
    *pd = NULL;
    dnnl_status_t r = dnnl_primitive_desc_create(pd, first, NULL, b->c->engine, NULL);
    dnnl_eltwise_desc_t ed;
    dnnl_primitive_desc_t then_pd = NULL;
    if (r == dnnl_success)
        r = dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, second->alg,
                                           dn_pd_md(*pd, dnnl_query_dst_md, 0), second->alpha,
                                           second->beta);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(&then_pd, &ed, NULL, b->c->engine, NULL);
    if (r == dnnl_success)
        r = dnnl_primitive_create(&b->s->then, then_pd);
    dnnl_primitive_desc_destroy(then_pd);
    return r;
}

/* ---- tanh, gelu_tanh and SiLU on AVX2 ---------------------------------------------------- */

/* oneDNN runs its AVX2 kernels: no AVX-512 (the ISA is the effective one, so
 * ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 machine says true). */
static bool isa_avx2_only(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2 &&
           (isa & dnnl_cpu_isa_avx512_core) != dnnl_cpu_isa_avx512_core;
}

/* The activations graphlab's kernel runs in oneDNN's place, and why: each maps 0 to 0,
 * so the kernel may run over a blocked layout's padding too. SiLU is oneDNN's swish of
 * alpha 1 (dn_eltwise.c's Silu row). */
typedef enum { NATIVE_NONE, NATIVE_TANH, NATIVE_GELU_TANH, NATIVE_SILU } native_act;

static const struct native_row {
    native_act act;
    const char *name; /* the plan's impl: "graphlab:avx2 NAME" */
    const char *slow; /* dn_eltwise_post_slow's reason */
} native_rows[] = {
    [NATIVE_TANH] = {NATIVE_TANH, "tanh",
                     "oneDNN 2.6's tanh on AVX2 is five times its logistic (128x512 floats: 279 "
                     "us against 56); graphlab's own kernel runs it apart"},
    [NATIVE_GELU_TANH] = {NATIVE_GELU_TANH, "gelu_tanh",
                          "oneDNN 2.6's gelu_tanh on AVX2 is six times its logistic (128x512 "
                          "floats: 326 us against 56); graphlab's own kernel runs it apart"},
    [NATIVE_SILU] = {NATIVE_SILU, "silu",
                     "oneDNN 2.6's swish post-op on AVX2 costs more than the convolution it "
                     "follows (1x1 16->96 at 112x112: 0.54 ms, 1.33 with the swish); "
                     "graphlab's own kernel runs it apart"},
};

/* The native activation for this step on this CPU (our kernel needs FMA too, which every
 * AVX2 CPU we know has), or NATIVE_NONE. */
static native_act native_here(const dn_post *p)
{
#ifdef __x86_64__
    native_act a = p->alg == dnnl_eltwise_tanh                         ? NATIVE_TANH
                   : p->alg == dnnl_eltwise_gelu_tanh                  ? NATIVE_GELU_TANH
                   : p->alg == dnnl_eltwise_swish && p->alpha == 1.0f ? NATIVE_SILU
                                                                       : NATIVE_NONE;
    return a != NATIVE_NONE && isa_avx2_only() && __builtin_cpu_supports("fma") ? a
                                                                                : NATIVE_NONE;
#else
    (void)p;
    return NATIVE_NONE;
#endif
}

const char *dn_eltwise_post_slow(const dn_post *p)
{
    native_act a = p->alg ? native_here(p) : NATIVE_NONE;
    return a != NATIVE_NONE ? native_rows[a].slow : NULL;
}

/* ---- the activations of graphlab's epilogue ---------------------------------------------- */

/* The eltwise steps graphlab's kernels apply themselves (dn_act), and the parameters
 * they need: the ONNX op's (relu of alpha 0, swish of alpha 1: SiLU) or, for clip,
 * alpha and beta as the bounds. */
static const struct act_row {
    dnnl_alg_kind_t alg;
    dn_act_kind kind;
    const char *name;
    bool alpha_zero, alpha_one;
} act_rows[] = {
    {dnnl_eltwise_relu, DN_ACT_RELU, "relu", true, false},
    {dnnl_eltwise_gelu_erf, DN_ACT_GELU_ERF, "gelu_erf", false, false},
    {dnnl_eltwise_gelu_tanh, DN_ACT_GELU_TANH, "gelu_tanh", false, false},
    {dnnl_eltwise_logistic, DN_ACT_SIGMOID, "sigmoid", false, false},
    {dnnl_eltwise_swish, DN_ACT_SILU, "silu", false, true},
    {dnnl_eltwise_clip, DN_ACT_CLIP, "clip", false, false},
    {dnnl_eltwise_clip_v2, DN_ACT_CLIP, "clip", false, false},
    {dnnl_eltwise_hardswish, DN_ACT_HARDSWISH, "hardswish", false, false},
};

bool dn_post_act(const dn_post *p, dn_act *act)
{
    *act = (dn_act){DN_ACT_NONE, 0.0f, 0.0f};
    if (!p->alg || p->src1 || p->scale != 1.0f)
        return false;
    for (size_t i = 0; i < GL_ARRAY_LEN(act_rows); i++) {
        const struct act_row *r = &act_rows[i];
        if (r->alg != p->alg || (r->alpha_zero && p->alpha != 0.0f) ||
            (r->alpha_one && p->alpha != 1.0f))
            continue;
        *act = (dn_act){r->kind, p->alpha, p->beta};
        return true;
    }
    return false;
}

const char *dn_act_name(dn_act_kind kind)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(act_rows); i++)
        if (act_rows[i].kind == kind)
            return act_rows[i].name;
    return "none";
}

typedef struct elt_native {
    size_t count;      /* floats in the buffer, padding included (each maps 0 to 0) */
    native_act act;
} elt_native;

#ifdef __x86_64__
__attribute__((target("avx2,fma"))) static inline __m256 native8(native_act a, __m256 x)
{
    return a == NATIVE_SILU        ? dn_silu8(x)
           : a == NATIVE_GELU_TANH ? dn_gelu_tanh8(x)
                                   : dn_tanh8(x);
}

/* Elements [lo, hi) of the node's buffer (one call: the act's loop unswitched). */
#define NATIVE_LOOP(act_)                                                                  \
    for (; i + 8 <= hi; i += 8)                                                            \
        _mm256_storeu_ps(y + i, native8(act_, _mm256_loadu_ps(x + i)))

__attribute__((target("avx2,fma"))) static void native_span(const elt_native *e,
                                                            const float *x, float *y,
                                                            size_t lo, size_t hi)
{
    size_t i = lo;
    switch (e->act) {
    case NATIVE_SILU: NATIVE_LOOP(NATIVE_SILU); break;
    case NATIVE_GELU_TANH: NATIVE_LOOP(NATIVE_GELU_TANH); break;
    default: NATIVE_LOOP(NATIVE_TANH); break;
    }
    if (i == hi)
        return;
    float tail[8] = {0};
    memcpy(tail, x + i, (hi - i) * sizeof(float));
    _mm256_storeu_ps(tail, native8(e->act, _mm256_loadu_ps(tail)));
    memcpy(y + i, tail, (hi - i) * sizeof(float));
}

/* Spans of this many floats (64 KB) over the node's threads: a [1,96,112,112] SiLU is 18
 * of them; a squeeze-excitation's [1, C, 1, 1] is one, run without a parallel region. */
#define NATIVE_SPAN 16384

typedef struct native_work {
    const elt_native *e;
    const float *x;
    float *y;
} native_work;

static void native_spans(void *arg, int64_t lo, int64_t hi, int thread)
{
    (void)thread;
    const native_work *w = arg;
    size_t end = (size_t)hi * NATIVE_SPAN;
    native_span(w->e, w->x, w->y, (size_t)lo * NATIVE_SPAN, end < w->e->count ? end : w->e->count);
}

static void native_run(void *extra, const void *const *src, void *dst)
{
    const elt_native *e = extra;
    native_work w = {e, src[0], dst};
    dn_parallel_for((int64_t)((e->count + NATIVE_SPAN - 1) / NATIVE_SPAN), 0, native_spans, &w);
}
#endif

/* The node runs native_run instead of oneDNN's primitive (pd: its one step, act). */
static void take_native(dn_build *b, const_dnnl_primitive_desc_t pd, native_act act)
{
#ifdef __x86_64__
    elt_native *e = gl_xmalloc(sizeof(*e));
    e->count = dnnl_memory_desc_get_size(dn_pd_md(pd, dnnl_query_dst_md, 0)) / sizeof(float);
    e->act = act;
    dn_take_native(b, native_run, e, free, "graphlab:avx2 %s", native_rows[act].name);
#else
    (void)b, (void)pd, (void)act;
#endif
}

/* The eltwise of post[0] over src with the rest as post-ops, or, where that is oneDNN's
 * reference code, the first step alone and the second apart (second_step_apart). */
static dnnl_status_t eltwise_pd(dn_build *b, const dnnl_memory_desc_t *src, const dn_post *post,
                                size_t n_post, dnnl_primitive_desc_t *pd)
{
    dnnl_eltwise_desc_t ed;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_status_t r = dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, post[0].alg,
                                                     src, post[0].alpha, post[0].beta);
    if (r == dnnl_success)
        r = dn_attr_post_ops(&post[1], n_post - 1, &attr);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &ed, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (r == dnnl_success && n_post == 2 && reference_kernel(*pd))
        r = second_step_apart(b, &ed, &post[1], pd);
    return r;
}

static gl_status eltwise_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = dn_f32_input(k, 0);
    const elt_row *row = row_of(k->node);
    if (!x || x->count == 0 || !row)
        return dn_refuse(b, "not a non-empty float32 tensor");
    bool fixed[3] = {false, false, false};
    for (size_t i = 0; i < k->n_inputs && i < 3; i++)
        fixed[i] = i < k->node->n_inputs && dn_value_fixed(k->node->inputs[i]);
    elt_args a = {k->node, k->opset, k->in, fixed, k->n_inputs < 3 ? k->n_inputs : 3};
    dn_post post[2];
    size_t n_post = 0;
    const char *why = "";
    if (!row_posts(row, &a, post, &n_post, &why))
        return dn_refuse(b, "%s", why);
    /* graphlab's kernel has no threads to start: it takes small tensors too */
    native_act native = n_post == 1 ? native_here(&post[0]) : NATIVE_NONE;
    if (!x->layout && x->count < DN_OPS_SMALL && !native)
        return dn_refuse(b, "%lld elements: below the oneDNN threshold (%d)",
                         (long long)x->count, DN_OPS_SMALL);
    dnnl_status_t r = eltwise_pd(b, &b->md[0], post, n_post, pd);
    /* Over a blocked tensor whose channels leave padding in the last block oneDNN 2.6's
     * eltwise is its reference code (a DBNet head's one-channel Sigmoid at batch 8, in
     * nChw16c: 1.42 ms, ONNX Runtime's 0.05): on the plain tensor instead, converted
     * first, when that is a jit kernel. */
    dnnl_memory_desc_t plain;
    bool to_plain = false;
    if (r == dnnl_success && reference_kernel(*pd) && x->layout &&
        dn_md_plain(&plain, x->rank, x->dims, NULL) == dnnl_success) {
        dnnl_primitive_desc_t blocked = *pd;
        dnnl_primitive_t then = b->s->then;
        b->s->then = NULL;
        *pd = NULL;
        if (eltwise_pd(b, &plain, post, n_post, pd) == dnnl_success && !reference_kernel(*pd)) {
            dnnl_primitive_desc_destroy(blocked);
            if (then)
                dnnl_primitive_destroy(then);
            to_plain = true;
        } else { /* the blocked one, reference code and all */
            dnnl_primitive_desc_destroy(*pd);
            if (b->s->then)
                dnnl_primitive_destroy(b->s->then);
            *pd = blocked;
            b->s->then = then;
        }
    }
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no eltwise for this (%s)", dnnl_status2str(r));
    /* relu, clip, exp... turn a NaN into a number (dn_special.c) */
    gl_status st = dn_guard_specials(b, dn_post_drops_specials(&post[0]) ||
                                            (n_post > 1 && dn_post_drops_specials(&post[1])));
    if (st != GL_OK)
        return st;
    dn_bind_input(b, DNNL_ARG_SRC, 0, to_plain ? &plain : NULL);
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), x->rank, x->dims);
    if (to_plain)
        dn_set_note(b->c, b->s, "plain: oneDNN's kernel for the blocked tensor is its "
                                "reference code");
    if (native && dnnl_memory_desc_equal(dn_pd_md(*pd, dnnl_query_src_md, 0),
                               dn_pd_md(*pd, dnnl_query_dst_md, 0)))
        take_native(b, *pd, native);
    return GL_OK;
}

static bool eltwise_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 0, DNNL_MAX_NDIMS)) {
        snprintf(why, len, "input is not float32");
        return false;
    }
    return true;
}

#define ELT(op, since) {"", op, since, eltwise_claim, eltwise_build, NULL}
static const dn_op eltwise_ops[] = {
    ELT("Relu", 1),     ELT("LeakyRelu", 1),   ELT("Elu", 1),        ELT("Selu", 1),
    ELT("Sigmoid", 1),  ELT("Tanh", 1),        ELT("HardSigmoid", 1), ELT("HardSwish", 14),
    ELT("Exp", 1),      ELT("Log", 1),         ELT("Sqrt", 1),       ELT("Abs", 1),
    ELT("Softplus", 1), ELT("Round", 11),      ELT("Neg", 1),        ELT("Reciprocal", 1),
    ELT("Clip", 1),     ELT("Pow", 1),          ELT("Gelu", 20),
    {"graphlab", "Gelu", 1, eltwise_claim, eltwise_build, NULL},
    {"graphlab", "GeluTanh", 1, eltwise_claim, eltwise_build, NULL},
    {"graphlab", "Silu", 1, eltwise_claim, eltwise_build, NULL},
    {"graphlab", "HardSwish", 1, eltwise_claim, eltwise_build, NULL},
};
#undef ELT
_Static_assert(GL_ARRAY_LEN(eltwise_ops) == GL_ARRAY_LEN(elt_rows), "one dn_op per eltwise row");
const dn_op_table dn_eltwise_ops = {eltwise_ops, GL_ARRAY_LEN(eltwise_ops)};

int dn_eltwise_steps(const gl_node *n, int64_t opset)
{
    const elt_row *row = row_of(n);
    if (!row || (!row->domain && opset < row->since))
        return -1;
    return row->post ? 2 : 1;
}

size_t dn_eltwise_names(char (*names)[GL_TARGET_NAME_LEN], size_t cap)
{
    for (size_t i = 0; i < cap && i < GL_ARRAY_LEN(elt_rows); i++) {
        const elt_row *r = &elt_rows[i];
        snprintf(names[i], GL_TARGET_NAME_LEN, "%s%s%s", r->domain ? r->domain : "",
                 r->domain ? "." : "", r->op);
    }
    return GL_ARRAY_LEN(elt_rows);
}

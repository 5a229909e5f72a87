/* dn_special.c — NaN and the infinities on the oneDNN backend (issue 26).
 *
 * ONNX keeps a NaN through Relu, Clip, Max, MaxPool, ReduceMax, Softmax...; oneDNN 2.6's
 * kernels do not, mostly because they clamp with maxps/minps, which return their second
 * operand when either is NaN. Measured on every kernel graphlab uses (jit and brgemm
 * convolutions, jit_dw, gemm, brgemm matmul, standalone eltwise on nchw / nhwc /
 * nChw16c; AVX-512, AVX2 and SSE4.1 through ONEDNN_MAX_CPU_ISA) with NaN, ±Inf, -0, ±FLT_MAX:
 *
 *   relu (alpha 0)   NaN -> 0; on the gemm convolution -Inf -> NaN (0 * -Inf)
 *   clip, clip_v2    NaN -> the lower bound (also HardSigmoid's second step)
 *   exp              NaN -> +Inf (the argument is clamped to [ln FLT_MIN, ln FLT_MAX])
 *   logistic         NaN -> 0 on the reference and gemm kernels (NaN on the jit ones)
 *   pow beta 0.5     -Inf -> NaN (sqrt; pow(-Inf, 0.5) is +Inf)
 *   binary max, min  the operand that is not NaN, as a primitive and as a post-op
 *   max pooling      a NaN is skipped; a window of NaN and -Inf gives -FLT_MAX
 *   reduction max/min  keeps a NaN only when it is the last one read
 *   softmax, logsoftmax  a row with a NaN is not all NaN
 * and right: relu with alpha != 0 and elu (their blend keeps x where !(x <= 0), which a
 * NaN is), tanh, soft_relu, gelu, swish, hardswish, abs, sqrt, log, round, linear, pow
 * with beta -1, 1 or 2, the other binary algorithms, sum, average pooling, batch and
 * layer normalization, prelu. (-0 becomes +0 through relu and clip: -0 == 0, it stays.)
 *
 * What the backend does about it, per case, the cheapest way that is right:
 *  - a primitive of its own (an eltwise, binary, pooling, reduction, softmax node) that
 *    gets one wrong runs its reference kernel, this run, when an input holds a NaN or an
 *    infinity, its outputs then put back into the layouts the primitive writes, so that
 *    what reads them does not build again (dn_node.c);
 *  - a fused unit whose post-ops get one wrong runs its members on the reference kernels
 *    instead (dn_fused.c, dn_catconv.c). The pre-activation value inside a primitive is
 *    never seen, so no mending after the fact could know where a NaN was lost.
 * Whether an input holds one is mostly known without looking: every oneDNN node vouches
 * for its outputs after each run (dn_vouch) when its inputs were free of NaN and
 * infinities and its op makes none out of finite values (dn_node_makes_specials: Div, Log,
 * Sqrt, Pow, Exp...; a convolution or a matmul makes none, overflow aside: a sum of huge
 * values is a matter of precision, which the reference, summing in double, does not
 * share). So in a CNN only the first unit looks at its input (the image); the others
 * read vouched tensors. A look is one vectorized read, ~100 GB/s while the tensor is in
 * cache; looking at every unit's input each run was measured at ~3% of resnet18 and
 * 10-15% of MobileNetV2 and SqueezeNet (they read 10-30 MB of activations a run).
 * A chain in which a member drops a NaN that an earlier member can make out of finite
 * values (0/0, the log of a negative...) is not fused: nothing vouches for it.
 * A NaN-keeping formulation of the post-ops exists for relu (elu 0.5, relu 2^-149,
 * linear: exact, NaN kept on every kernel above), but its exp made memory-bound 1x1 and
 * depthwise convolutions 3-7 times slower; clip has none that is exact.
 */
#include "exec/dnnl/dn_opkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- which algorithms ------------------------------------------------------------------ */

bool dn_alg_drops_specials(dnnl_alg_kind_t alg, float alpha, float beta)
{
    switch ((int)alg) {
    case dnnl_eltwise_relu:
    case dnnl_eltwise_relu_use_dst_for_bwd:
        return alpha == 0.0f; /* -0.0 too: oneDNN takes its maxps path on alpha == 0 */
    case dnnl_eltwise_pow:
        return beta != -1.0f && beta != 1.0f && beta != 2.0f;
    case dnnl_eltwise_clip:
    case dnnl_eltwise_clip_v2:
    case dnnl_eltwise_clip_v2_use_dst_for_bwd:
    case dnnl_eltwise_bounded_relu:
    case dnnl_eltwise_exp:
    case dnnl_eltwise_exp_use_dst_for_bwd:
    case dnnl_eltwise_logistic:
    case dnnl_eltwise_logistic_use_dst_for_bwd:
    case dnnl_binary_max:
    case dnnl_binary_min:
    case dnnl_pooling_max:
    case dnnl_reduction_max:
    case dnnl_reduction_min:
    case dnnl_softmax_accurate:
    case dnnl_softmax_log:
        return true;
    default:
        return false;
    }
}

bool dn_post_drops_specials(const dn_post *p)
{
    return p->alg && dn_alg_drops_specials(p->alg, p->alpha, p->beta); /* 0: a sum */
}

/* ONNX ops whose output may hold a NaN or an infinity when their inputs hold none
 * (overflow aside): a division by 0, the log or square root of a negative or of 0, a
 * power of those, exp of a large value, LRN's x / bias^beta with a bias of 0. */
static const char *const specials_makers[] = {
    "Div", "Exp", "Log", "LRN", "Pow", "Reciprocal", "ReduceLogSum", "ReduceLogSumExp", "Sqrt",
};

bool dn_node_makes_specials(const gl_node *n)
{
    if (*n->domain)
        return false; /* graphlab's ops (Gelu, Silu, NhwcConv...) make none */
    for (size_t i = 0; i < GL_ARRAY_LEN(specials_makers); i++)
        if (strcmp(n->op_type, specials_makers[i]) == 0)
            return true;
    return false;
}

/* ---- looking for them ------------------------------------------------------------------- */

#define SCAN_BLOCK 64 /* a fixed trip count: -O2's very-cheap cost model vectorizes it */

/* What x[0..SCAN_BLOCK) holds: SCAN_OTHER a NaN or +inf, SCAN_NEG_INF -inf (all exponent
 * bits set; -inf is the sign bit too, nothing else). Also built for AVX2 and AVX-512,
 * picked when the program loads (as ops/elementwise.c's erf). */
enum { SCAN_OTHER = 1, SCAN_NEG_INF = 2 };

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && defined(__x86_64__) && \
    defined(__linux__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
static uint32_t block_special(const float *restrict x)
{
    uint32_t other = 0, neg_inf = 0;
    for (int i = 0; i < SCAN_BLOCK; i++) {
        uint32_t b;
        memcpy(&b, &x[i], sizeof(b));
        uint32_t ni = b == 0xff800000u;
        other |= ((b & 0x7f800000u) == 0x7f800000u) & !ni;
        neg_inf |= ni;
    }
    return other * SCAN_OTHER | neg_inf * SCAN_NEG_INF;
}

/* What x[0..n) holds (SCAN_OTHER, SCAN_NEG_INF or both; 0: finite values only). One read
 * of x. */
static uint32_t floats_special(const float *x, size_t n)
{
    uint32_t any = 0;
    size_t i = 0;
    for (; i + SCAN_BLOCK <= n; i += SCAN_BLOCK)
        any |= block_special(x + i);
    for (; i < n; i++)
        any |= isinf(x[i]) && x[i] < 0 ? SCAN_NEG_INF : isfinite(x[i]) ? 0 : SCAN_OTHER;
    return any;
}

/* The floats from t's buffer start that hold its elements: its count, or in a oneDNN
 * layout what its descriptor spans from the start (a view's offset included; padding
 * and what a view skips are looked at too, which at worst sends a run to the reference
 * kernel for nothing). */
static size_t stored_floats(const gl_tensor *t)
{
    size_t n = (size_t)t->count;
    if (t->layout) {
        const dnnl_memory_desc_t *md = &((const dn_layout *)t->layout)->md;
        n = (size_t)md->offset0 + dnnl_memory_desc_get_size(md) / sizeof(float);
    }
    size_t have = t->buf ? t->buf->size / sizeof(float) : 0;
    return n < have ? n : have;
}

/* A look at a large tensor is spread over the node's threads, SCAN_SPLIT floats a work
 * item: at batch 8 a MobileNet-V3's first depthwise unit looks at its [8,16,112,112]
 * input (the stem's HardSwish vouches for nothing: it gets no NaN wrong, so it does not
 * look at the image), 6.4 MB a run that one thread read at ~21 GB/s (0.3 ms). */
#define SCAN_SPLIT (64 * 1024)

typedef struct scan_job {
    const float *x;
    size_t n;
    uint32_t any; /* what the items found, or-ed */
} scan_job;

static void scan_items(void *arg, int64_t lo, int64_t hi, int thread)
{
    scan_job *j = arg;
    (void)thread;
    uint32_t any = 0;
    for (int64_t it = lo; it < hi; it++) {
        size_t a = (size_t)it * SCAN_SPLIT, z = a + SCAN_SPLIT < j->n ? a + SCAN_SPLIT : j->n;
        any |= floats_special(j->x + a, z - a);
    }
    __atomic_fetch_or(&j->any, any, __ATOMIC_RELAXED);
}

static uint32_t tensor_special(const gl_tensor *t)
{
    if (!t || t->dtype != GL_DT_FLOAT || !t->buf)
        return 0;
    scan_job j = {.x = t->buf->data, .n = stored_floats(t)};
    if (j.n <= 2 * SCAN_SPLIT)
        return floats_special(j.x, j.n);
    dn_parallel_for((int64_t)((j.n + SCAN_SPLIT - 1) / SCAN_SPLIT), 0, scan_items, &j);
    return j.any;
}

/* ---- what the producers vouch for ---------------------------------------------------------- */

/* An open-addressing table of values, by address: what their producer said at its last
 * run. Every run of a oneDNN node says it for each of its outputs (dn_vouch), before any
 * node that reads them runs: an entry is never older than the run that reads it. A value
 * no oneDNN node of this plan makes (a graph input, a reference node's output) has none. */
static size_t slot_of(const dn_vouched *t, const gl_value *v)
{
    size_t i = ((uintptr_t)v >> 4) * 0x9e3779b97f4a7c15ull & (t->cap - 1);
    while (t->keys[i] && t->keys[i] != v)
        i = (i + 1) & (t->cap - 1);
    return i;
}

static void vouched_grow(dn_vouched *t)
{
    dn_vouched old = *t;
    t->cap = old.cap ? 2 * old.cap : 64;
    t->keys = gl_xcalloc(t->cap, sizeof(*t->keys));
    t->finite = gl_xcalloc(t->cap, sizeof(*t->finite));
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i]) {
            size_t j = slot_of(t, old.keys[i]);
            t->keys[j] = old.keys[i];
            t->finite[j] = old.finite[i];
        }
    free(old.keys);
    free(old.finite);
}

void dn_vouched_free(dn_vouched *t)
{
    free(t->keys);
    free(t->finite);
    memset(t, 0, sizeof(*t));
}

static bool vouched_finite(const dn_vouched *t, const gl_value *v)
{
    if (!v || !t->cap)
        return false;
    size_t i = slot_of(t, v);
    return t->keys[i] == v && t->finite[i];
}

void dn_vouch(dn_ctx *c, const gl_kernel_ctx *k, bool finite)
{
    dn_vouched *t = &c->vouched;
    for (size_t o = 0; o < k->node->n_outputs; o++) {
        const gl_value *v = k->node->outputs[o];
        if (!v)
            continue;
        if (2 * (t->n + 1) > t->cap)
            vouched_grow(t);
        size_t i = slot_of(t, v);
        t->n += !t->keys[i];
        t->keys[i] = v;
        t->finite[i] = finite;
    }
}

/* Constants more than this many times the bytes of the node's other float inputs are
 * not looked at only to vouch for its outputs (dn_inputs_look). What that leaves to the
 * nodes downstream is a look a run at values about the size of its inputs or outputs,
 * and only where one of them gets a NaN wrong; a CNN's convolutions (weights smaller
 * than their activations but in the last stages, and most with a Relu: they look
 * anyway) keep vouching. */
#define DN_CONSTS_OUTWEIGH 16

/* Do k's float constants outweigh its other float inputs (DN_CONSTS_OUTWEIGH)? */
static bool consts_outweigh(const gl_kernel_ctx *k)
{
    size_t consts = 0, others = 0;
    for (size_t i = 0; i < k->n_inputs; i++) {
        const gl_tensor *t = k->in[i];
        if (t && t->dtype == GL_DT_FLOAT)
            *(dn_input_constant(k, i) ? &consts : &others) += stored_floats(t);
    }
    return consts > (size_t)DN_CONSTS_OUTWEIGH * others;
}

dn_inputs dn_inputs_look(dn_ctx *c, const gl_kernel_ctx *k, dn_special_check *sc, bool look)
{
    /* A node that gets no NaN wrong (!look) looks at its constants only to vouch for its
     * outputs. When they are much bigger than its other inputs (a decoder's MatMul
     * weights: 4-16 MB against 64 kB of activations, 1.2 GB read on the first run), it
     * does not: its outputs go unvouched, and a node downstream that would get a NaN
     * wrong looks at the values it reads, which hold whatever the constants put there. */
    if (!sc->consts_known && (look || !consts_outweigh(k))) {
        for (size_t i = 0; i < k->n_inputs && !sc->consts_special; i++)
            sc->consts_special = dn_input_constant(k, i) && tensor_special(k->in[i]) != 0;
        sc->consts_known = true;
    }
    if (sc->consts_special)
        return DN_INPUTS_SPECIAL;
    dn_inputs known = sc->consts_known ? DN_INPUTS_FINITE : DN_INPUTS_UNKNOWN;
    bool neg_inf = false;
    for (size_t i = 0; i < k->n_inputs; i++) {
        const gl_tensor *t = k->in[i];
        const gl_value *v = i < k->node->n_inputs ? k->node->inputs[i] : NULL;
        if (!t || t->dtype != GL_DT_FLOAT || dn_input_constant(k, i) ||
            vouched_finite(&c->vouched, v))
            continue;
        if (!look) {
            known = DN_INPUTS_UNKNOWN;
            continue;
        }
        uint32_t holds = tensor_special(t);
        if (holds & SCAN_OTHER || (holds && !sc->neg_inf_ok))
            return DN_INPUTS_SPECIAL;
        neg_inf = neg_inf || holds;
    }
    return neg_inf ? DN_INPUTS_NEG_INF : known;
}

gl_status dn_guard_specials(dn_build *b, bool drops)
{
    return drops ? dn_reference_kernel(b, &b->s->special_ref) : GL_OK;
}

/* ---- the reference's outputs in the primitive's layouts ------------------------------------ */

gl_status dn_from_plain(dn_ctx *c, const gl_tensor *plain, const dnnl_memory_desc_t *md,
                        void *data, const char *where)
{
    dnnl_memory_desc_t pmd;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t r = NULL;
    dnnl_memory_t from = NULL, to = NULL;
    const char *call = "dn_md_of";
    dnnl_status_t e = dn_md_of(plain, &pmd);
    if (e == dnnl_success && (call = "dnnl_reorder_primitive_desc_create"))
        e = dnnl_reorder_primitive_desc_create(&rpd, &pmd, c->engine, md, c->engine, NULL);
    if (e == dnnl_success && (call = "dnnl_primitive_create"))
        e = dnnl_primitive_create(&r, rpd);
    if (e == dnnl_success && (call = "dnnl_memory_create"))
        e = dnnl_memory_create(&from, &pmd, c->engine, plain->buf ? plain->buf->data : NULL);
    if (e == dnnl_success)
        e = dnnl_memory_create(&to, md, c->engine, data);
    if (e == dnnl_success && (call = "dnnl_primitive_execute")) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
        e = dnnl_primitive_execute(r, c->stream, 2, args);
        if (e == dnnl_success)
            e = dnnl_stream_wait(c->stream);
    }
    dnnl_memory_destroy(from);
    dnnl_memory_destroy(to);
    dnnl_primitive_destroy(r);
    dnnl_primitive_desc_destroy(rpd);
    return e == dnnl_success ? GL_OK : dn_fail(where, call, e);
}

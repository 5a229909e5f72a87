/* dn_bnorm.c — inference BatchNormalization (and its fused unit's Relu or LeakyRelu) on
 * graphlab's own AVX2 kernel (taken by dn_norm.c's build).
 *
 * With constant statistics the op is y = x * scale + shift per channel, scale =
 * gamma / sqrt(var + eps) and shift = beta - mean * scale, folded once at build (in
 * double, as the reference computes, then rounded once: the fold's error is an ulp of
 * mean * scale, far inside the suite's tolerance): one FMA (and a max for the Relu) per
 * 8 floats. DenseNet-121's 62 pre-activation BatchNormalization+Relu units (nChw8c,
 * 64..1024 channels, 56x56..7x7) are memory-bound passes of 0.01-0.2 ms each; ONNX
 * Runtime runs them as NCHWc depthwise 1x1 convolutions with the activation. What the
 * kernel wins against oneDNN 2.6's bnorm_jit:avx2 is per run overhead on the small ones
 * and the choice of stores (dn_bnorm_take has the numbers).
 *
 * NaN and infinities: x * scale + shift keeps them as the formula gives; the Relu is
 * max(0, v) with v the second operand (maxps returns it when either is NaN) and keeps
 * -0 as the reference's x < 0 ? 0 : x does; the LeakyRelu blends on v < 0. (A fused
 * unit whose Relu drops them on oneDNN still sends runs with them to the reference
 * kernels, dn_fused.c.) Statistics that fold to a scale or shift that is not finite
 * (var + eps <= 0, infinite values) and statistics that are not constants stay on
 * oneDNN.
 */
#include "exec/dnnl/dn_opkit.h"

#include <math.h>
#include <stdlib.h>

#ifdef __x86_64__
#include <immintrin.h>
#include <stdint.h>

/* How the bytes lie: nC..8c blocks of 8 channels, channels-last rows of C, or plain
 * planes of one channel. */
typedef enum bn_form { BN_BLOCKED, BN_CHANNELS_LAST, BN_PLAIN } bn_form;

/* What follows the normalization: nothing, a Relu, a LeakyRelu. */
typedef enum bn_act { BN_NONE, BN_RELU, BN_LEAKY } bn_act;

typedef struct bn_kernel {
    bn_form form;
    int64_t items;  /* work items: blocks of 8 channels of an image, pixels, or planes */
    int64_t len;    /* floats per item */
    int64_t ch;     /* channels (BN_BLOCKED: padded to 8, the padding's scale and shift 0) */
    float *scale, *shift; /* ch each, in coef[] */
    bn_act act;
    float alpha;    /* BN_LEAKY's slope */
    int max_threads; /* small tensors: fewer threads than the fork costs */
    bool stream;    /* write past the caches (see dn_bnorm_take) ... */
    bool nt;        /* ... this run: the destination is aligned for it */
    const float *x; /* this run's */
    float *y;
    float coef[];   /* scale, then shift: one allocation, freed with the struct */
} bn_kernel;

/* One vector of 8 normalized (and activated) values; `act` is a constant where the
 * inlined loops are made (bn_items), so each gets its own. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256
bn_vec(__m256 x, __m256 s, __m256 t, bn_act act, __m256 alpha)
{
    __m256 v = _mm256_fmadd_ps(x, s, t), zero = _mm256_setzero_ps();
    if (act == BN_RELU)
        return _mm256_max_ps(zero, v); /* v second: a NaN stays, and -0 */
    if (act == BN_LEAKY)
        return _mm256_blendv_ps(v, _mm256_mul_ps(v, alpha), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
    return v;
}

/* Lanes [0, n) of 8 set: the tail of a row that is not a multiple of 8. */
__attribute__((target("avx2"), always_inline)) static inline __m256i bn_tail_mask(int64_t n)
{
    static const int32_t ramp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n),
                              _mm256_loadu_si256((const __m256i *)ramp));
}

/* v to y, past the caches when `nt` (y then aligned to 32 bytes). */
__attribute__((target("avx2"), always_inline)) static inline void bn_store(float *y, __m256 v,
                                                                          bool nt)
{
    if (nt)
        _mm256_stream_ps(y, v);
    else
        _mm256_storeu_ps(y, v);
}

/* count floats of x to y, with the 8 lanes of scale s and shift t for every vector;
 * `nt`: every vector past the caches (count then a multiple of 8, y aligned). */
__attribute__((target("avx2,fma"), always_inline)) static inline void
bn_span(const float *x, float *y, int64_t count, __m256 s, __m256 t, bn_act act, __m256 alpha,
        bool nt)
{
    int64_t i = 0;
    for (; i + 32 <= count; i += 32) {
        __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        __m256 c = _mm256_loadu_ps(x + i + 16), d = _mm256_loadu_ps(x + i + 24);
        bn_store(y + i, bn_vec(a, s, t, act, alpha), nt);
        bn_store(y + i + 8, bn_vec(b, s, t, act, alpha), nt);
        bn_store(y + i + 16, bn_vec(c, s, t, act, alpha), nt);
        bn_store(y + i + 24, bn_vec(d, s, t, act, alpha), nt);
    }
    for (; i + 8 <= count; i += 8)
        bn_store(y + i, bn_vec(_mm256_loadu_ps(x + i), s, t, act, alpha), nt);
    if (i < count) {
        __m256i m = bn_tail_mask(count - i);
        __m256 v = bn_vec(_mm256_maskload_ps(x + i, m), s, t, act, alpha);
        _mm256_maskstore_ps(y + i, m, v);
    }
}

__attribute__((target("avx2,fma"), always_inline)) static inline void
bn_items_as(const bn_kernel *g, int64_t lo, int64_t hi, bn_act act)
{
    __m256 alpha = _mm256_set1_ps(g->alpha);
    for (int64_t it = lo; it < hi; it++) {
        const float *x = g->x + it * g->len;
        float *y = g->y + it * g->len;
        if (g->form == BN_PLAIN) {
            int64_t c = it % g->ch;
            bn_span(x, y, g->len, _mm256_set1_ps(g->scale[c]), _mm256_set1_ps(g->shift[c]),
                    act, alpha, g->nt);
        } else if (g->form == BN_BLOCKED) {
            int64_t c = it % (g->ch / 8) * 8;
            bn_span(x, y, g->len, _mm256_loadu_ps(g->scale + c), _mm256_loadu_ps(g->shift + c),
                    act, alpha, g->nt);
        } else { /* a pixel's C channels: scale and shift move along with x */
            int64_t c = 0;
            for (; c + 8 <= g->ch; c += 8)
                _mm256_storeu_ps(y + c, bn_vec(_mm256_loadu_ps(x + c),
                                               _mm256_loadu_ps(g->scale + c),
                                               _mm256_loadu_ps(g->shift + c), act, alpha));
            if (c < g->ch) {
                __m256i m = bn_tail_mask(g->ch - c);
                __m256 v = bn_vec(_mm256_maskload_ps(x + c, m), _mm256_maskload_ps(g->scale + c, m),
                                  _mm256_maskload_ps(g->shift + c, m), act, alpha);
                _mm256_maskstore_ps(y + c, m, v);
            }
        }
    }
}

/* Work items [lo, hi) (bn_kernel.items). */
__attribute__((target("avx2,fma"))) static void bn_items(void *arg, int64_t lo, int64_t hi,
                                                         int thread)
{
    const bn_kernel *g = arg;
    (void)thread;
    switch (g->act) {
    case BN_NONE:
        bn_items_as(g, lo, hi, BN_NONE);
        break;
    case BN_RELU:
        bn_items_as(g, lo, hi, BN_RELU);
        break;
    case BN_LEAKY:
        bn_items_as(g, lo, hi, BN_LEAKY);
        break;
    }
    if (g->nt)
        _mm_sfence(); /* the streamed stores are seen before the join */
}

static void bn_run(void *extra, const void *const *src, void *dst)
{
    bn_kernel *g = extra;
    g->x = src[0];
    g->y = dst;
    g->nt = g->stream && ((uintptr_t)dst & 31) == 0;
    dn_parallel_for(g->items, g->max_threads, bn_items, g);
}

/* The layout md (dims md->dims) is: BN_BLOCKED, BN_CHANNELS_LAST, BN_PLAIN, or -1. */
static int bn_form_of(const dnnl_memory_desc_t *md)
{
    if (dn_md_is_plain(md))
        return BN_PLAIN;
    static const dnnl_format_tag_t tags[][2] = {
        /* rank 3, 4, 5: blocked, channels-last */
        {dnnl_nCw8c, dnnl_nwc}, {dnnl_nChw8c, dnnl_nhwc}, {dnnl_nCdhw8c, dnnl_ndhwc}};
    if (md->ndims < 3 || md->ndims > 5)
        return -1;
    for (int f = 0; f < 2; f++) {
        dnnl_memory_desc_t a;
        if (dn_md_tag(&a, md->ndims, md->dims, tags[md->ndims - 3][f]) == dnnl_success &&
            dnnl_memory_desc_equal(md, &a))
            return f == 0 ? BN_BLOCKED : BN_CHANNELS_LAST;
    }
    return -1;
}

/* The unit's post-ops in attr: none, or one relu (any alpha, scale 1). */
static bool bn_posts(const_dnnl_primitive_attr_t attr, bn_act *act, float *alpha)
{
    *act = BN_NONE;
    *alpha = 0.0f;
    const_dnnl_post_ops_t po = NULL;
    if (!attr || dnnl_primitive_attr_get_post_ops(attr, &po) != dnnl_success || !po ||
        dnnl_post_ops_len(po) == 0)
        return true;
    float scale, beta;
    dnnl_alg_kind_t alg;
    if (dnnl_post_ops_len(po) != 1 || dnnl_post_ops_get_kind(po, 0) != dnnl_eltwise ||
        dnnl_post_ops_get_params_eltwise(po, 0, &scale, &alg, alpha, &beta) != dnnl_success ||
        alg != dnnl_eltwise_relu || scale != 1.0f)
        return false;
    *act = *alpha == 0.0f ? BN_RELU : BN_LEAKY;
    return true;
}

/* scale and shift from the constant statistics (inputs 1..4, ch floats each) into g
 * (zero past ch); false when one is not finite. */
static bool bn_fold(const gl_kernel_ctx *k, int64_t ch, float eps, bn_kernel *g)
{
    const float *gamma = gl_tensor_data(k->in[1]), *beta = gl_tensor_data(k->in[2]);
    const float *mean = gl_tensor_data(k->in[3]), *var = gl_tensor_data(k->in[4]);
    for (int64_t c = 0; c < ch; c++) {
        double s = (double)gamma[c] / sqrt((double)var[c] + (double)eps);
        double t = (double)beta[c] - (double)mean[c] * s;
        g->scale[c] = (float)s;
        g->shift[c] = (float)t;
        if (!isfinite(g->scale[c]) || !isfinite(g->shift[c]))
            return false;
    }
    return true;
}
#endif

void dn_bnorm_take(dn_build *b, const_dnnl_primitive_desc_t pd, const_dnnl_primitive_attr_t attr,
                   float eps)
{
#ifdef __x86_64__
    const gl_kernel_ctx *k = b->k;
    if (!b->c->avx2)
        return;
    for (size_t i = 1; i <= 4; i++)
        if (!dn_input_constant(k, i))
            return;
    const dnnl_memory_desc_t *md = dn_pd_md(pd, dnnl_query_src_md, 0);
    int form = bn_form_of(md);
    if (form < 0 || !dnnl_memory_desc_equal(md, dn_pd_md(pd, dnnl_query_dst_md, 0)))
        return;
    bn_act act;
    float alpha;
    if (!bn_posts(attr, &act, &alpha))
        return;
    int64_t n = md->dims[0], ch = md->dims[1], inner = 1;
    for (int d = 2; d < md->ndims; d++)
        inner *= md->dims[d];
    int64_t padded = form == BN_BLOCKED ? (ch + 7) / 8 * 8 : ch;
    bn_kernel *g = gl_xcalloc(1, sizeof(*g) + (size_t)(2 * padded) * sizeof(float));
    g->scale = g->coef;
    g->shift = g->coef + padded;
    g->form = (bn_form)form;
    g->act = act;
    g->alpha = alpha;
    g->ch = padded;
    switch (g->form) {
    case BN_BLOCKED:
        g->items = n * (g->ch / 8), g->len = inner * 8;
        break;
    case BN_CHANNELS_LAST:
        g->items = n * inner, g->len = ch;
        break;
    case BN_PLAIN:
        g->items = n * ch, g->len = inner;
        break;
    }
    if (!bn_fold(k, ch, eps, g)) {
        free(g);
        return;
    }
    /* One thread below ~64 KB: a fork and join costs more than the pass over it. */
    g->max_threads = g->items * g->len < 16384 ? 1 : 0;
    /* Past a core's L2 (512 KB on the EPYC measured) the consumer reads the output from
     * L3 anyway: streaming stores skip reading the destination's lines first (with
     * plain stores the units were 20% slower than oneDNN's there, with them as fast);
     * below, plain stores leave the output in L2 for the consumer.
     * Every vector is streamed, so that the items' rows (49 pixels of 8 floats in a
     * 7x7 nChw8c block: half a line at each end) fill whole lines between them: a line
     * written half streamed, half plainly made DenseNet's 7x7 units at batch 8 three
     * times slower than oneDNN's. Channels-last rows and plain planes with a masked
     * tail are not streamed.
     * Measured A/B against oneDNN's bnorm_jit:avx2 (+ relu post-op) at one thread,
     * minimums of 3x20 interleaved runs (graphlab profile), ms. DenseNet-121 (g16
     * variant) at batch 1, per dense block, the units and the 1x1 convolutions reading
     * them, oneDNN / plain stores / streamed: 56x56 2.604 / 2.614 / 2.569, 28x28
     * 2.735 / 2.754 / 2.745, 14x14 2.911 / 2.904 / 2.892, 7x7 0.809 / 0.734 / 0.889
     * (hence the 512 KB). The 62 units alone, as taken: batch 1 2.22 -> 2.31 (their
     * convolutions 8.04 -> 7.84, every node 20.94 -> 20.82); DenseNet-121 batch 1
     * 3.84 -> 3.85 (every node 64.51 -> 64.51), batch 8 21.36 -> 19.75 (2x8 runs;
     * every dense block faster: 8.46 -> 7.38, 6.33 -> 6.18, 5.45 -> 5.17, 1.11 -> 1.02).
     * Never slower with its reader, so taken wherever it applies. */
    g->stream = g->items * g->len * 4 > 512 * 1024 &&
                (form == BN_BLOCKED || (form == BN_PLAIN && inner % 8 == 0));
    char name[24];
    dn_md_name(md, name, sizeof(name));
    dn_take_native(b, bn_run, g, free, "graphlab:avx2 %s", name);
#else
    (void)b, (void)pd, (void)attr, (void)eps;
#endif
}

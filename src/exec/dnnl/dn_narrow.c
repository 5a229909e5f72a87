/* dn_narrow.c — a 1x1 convolution to a few channels, from blocked activations to plain
 * NCHW, on graphlab's own AVX2 kernel (taken by dn_conv.c's build).
 *
 * Segmentation and detection heads end in one: UNet's 16 -> 2 classes at 128x128, a
 * decoder's head, a side output of 64 -> 2 resized and added to it. On the blocked plan
 * oneDNN 2.6 writes its 2 channels padded to a block of 16 (8x the bytes), whatever
 * reads them (a Resize, the sum's operand) reads 16 channels too, and a graph output is
 * reordered to plain after; oneDNN has no kernel that writes plain from a blocked source
 * (ref:any, 400x slower). Here the output is plain: each pixel's channel vectors are
 * multiplied by each output channel's weights, and a tile of 8 such sums (pixels by
 * output channels) is reduced across its lanes at once (hadd); then the bias, the sum
 * post-op (the operand the fused unit wrote into the destination) and a relu, as
 * oneDNN's post-ops would.
 * unet_small at batch 8, two threads, per-node minimums of 3 rounds: the last unit
 * (16 -> 2 + Add at 128x128) 1.50 ms on oneDNN's (the sum operand's copy, the
 * convolution, the output's reorder to plain) -> 0.54 here; the side output (64 -> 2 at
 * 32x32) 0.12 -> 0.09, and the Resize of its 2 channels to 128x128 0.53 -> 0.19, now
 * plain. Where the convolution is all there is (a decoder's 16 -> 2 head), the kernel
 * reads its source about as fast as oneDNN's jit_1x1 (bound by memory: 0.146 against
 * 0.131 ms at one thread), and the output's reorder is saved.
 *
 * When: a 2-D 1x1 convolution of stride 1 without pads, one group, weights and bias
 * constants, whose source arrives blocked (nChw8c or nChw16c, the plan's block) and
 * whose output channels fill at most a quarter of the block; post-ops only a sum of
 * scale 1 and relu. The pd is made with the source blocked and the destination plain
 * (oneDNN's reference kernel takes any layouts): it stands for "built", and its
 * descriptors are the bindings'.
 */
#include "exec/dnnl/dn_opkit.h"

#include <stdlib.h>
#include <string.h>

/* At most this many output channels (a quarter of AVX-512's block of 16). */
#define NARROW_MAX_OC 4
#define NARROW_MAX_POSTS 4
/* Pixels per work item: whole 8-pixel tiles, a few KB of source per block. */
#define NARROW_ITEM 64

#ifdef __x86_64__
#include <immintrin.h>

typedef struct narrow {
    int64_t n, ic, oc, hw;   /* batch, channels in and out, pixels per image */
    int lanes;               /* the source's channel block: 8 or 16 */
    int64_t padded;          /* the source's channels, padded to the block */
    int64_t groups;          /* 8-channel groups holding the ic channels */
    int ocpt;                /* output channels per tile: 1, 2 or 4 (narrow_tile) */
    float *w;                /* [oc rounded up to ocpt][groups * 8]: 0 past oc and ic */
    float bias[NARROW_MAX_OC][8]; /* per tile of output channels, as its lanes */
    int n_posts, posts[NARROW_MAX_POSTS];
    const float *x;
    float *y;
} narrow;

/* The 8 sums of 8 vectors' lanes: lane i of the result is the sum of v[i]'s lanes. */
__attribute__((target("avx2"))) static inline __m256 sum8(const __m256 *v)
{
    __m256 t0 = _mm256_hadd_ps(v[0], v[1]), t1 = _mm256_hadd_ps(v[2], v[3]);
    __m256 t2 = _mm256_hadd_ps(v[4], v[5]), t3 = _mm256_hadd_ps(v[6], v[7]);
    __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
    /* u0: v0..v3's low-half sums, then their high-half sums; u1 the same for v4..v7 */
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
                         _mm256_permute2f128_ps(u0, u1, 0x31));
}

/* A tile is 8 outputs: PPT pixels of OCPT output channels (8 pixels of 1, 4 of 2, 2 of
 * 4; an odd count is padded with zero weights), its products summed across the lanes at
 * once: lane o * PPT + p of the result is output channel o0 + o at pixel p0 + p. The
 * constants make every loop over them unrolled, the accumulators registers. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
narrow_tile(const narrow *q, const int OCPT, int64_t img, int64_t p0, int count, int64_t o0,
            __m256i tail)
{
    const int PPT = 8 / OCPT;
    __m256 acc[8];
    int64_t block_floats = q->hw * q->lanes; /* one channel block of one image */
    const float *x0 = q->x + img * q->padded * q->hw + p0 * q->lanes;
    const float *w0 = q->w + o0 * q->groups * 8;
    int64_t full = q->ic / 8; /* groups without channels past ic */
    #pragma GCC unroll 8
    for (int j = 0; j < 8; j++)
        acc[j] = _mm256_setzero_ps();
    for (int64_t gi = 0; gi < q->groups; gi++) {
        const float *x = x0 + gi * 8 / q->lanes * block_floats + gi * 8 % q->lanes;
        const float *w = w0 + gi * 8;
        __m256 xv[8];
        if (count == PPT && gi < full) {
            #pragma GCC unroll 8
            for (int p = 0; p < PPT; p++)
                xv[p] = _mm256_loadu_ps(x + p * q->lanes);
        } else { /* the lanes past ic are not read: a block's padding is not this
                  * kernel's to trust (0 * NaN is NaN); nor the pixels past count */
            __m256i m = gi < full ? _mm256_set1_epi32(-1) : tail;
            #pragma GCC unroll 8
            for (int p = 0; p < PPT; p++)
                xv[p] = p < count ? _mm256_maskload_ps(x + p * q->lanes, m)
                                  : _mm256_setzero_ps();
        }
        #pragma GCC unroll 8
        for (int o = 0; o < OCPT; o++) {
            __m256 wv = _mm256_loadu_ps(w + o * q->groups * 8);
            #pragma GCC unroll 8
            for (int p = 0; p < PPT; p++)
                acc[o * PPT + p] = _mm256_fmadd_ps(xv[p], wv, acc[o * PPT + p]);
        }
    }
    __m256 r = _mm256_add_ps(sum8(acc), _mm256_loadu_ps(q->bias[o0 / OCPT]));
    float *y = q->y + (img * q->oc + o0) * q->hw + p0; /* output channel o0's pixel p0 */
    int outs = q->oc - o0 < OCPT ? (int)(q->oc - o0) : OCPT;
    bool whole = count == PPT && outs == OCPT;
    for (int i = 0; i < q->n_posts; i++) {
        if (q->posts[i] == DN_OWN_SUM) { /* the operand the fused unit wrote into y */
            float old[8] = {0};
            for (int o = 0; o < outs; o++)
                for (int p = 0; p < count; p++)
                    old[o * PPT + p] = y[o * q->hw + p];
            r = _mm256_add_ps(r, _mm256_loadu_ps(old));
        } else { /* relu: max(0, NaN) is NaN, as the reference's x < 0 ? 0 : x */
            r = _mm256_max_ps(_mm256_setzero_ps(), r);
        }
    }
    if (whole && PPT == 8) {
        _mm256_storeu_ps(y, r);
    } else if (whole && PPT == 4) {
        _mm_storeu_ps(y, _mm256_castps256_ps128(r));
        _mm_storeu_ps(y + q->hw, _mm256_extractf128_ps(r, 1));
    } else {
        float out[8];
        _mm256_storeu_ps(out, r);
        for (int o = 0; o < outs; o++)
            for (int p = 0; p < count; p++)
                y[o * q->hw + p] = out[o * PPT + p];
    }
}

/* The items' tiles, with OCPT output channels a tile. */
#define NARROW_ITEMS(OCPT)                                                                 \
    __attribute__((target("avx2,fma"))) static void narrow_items_##OCPT(                   \
        void *arg, int64_t lo, int64_t hi, int thread)                                     \
    {                                                                                      \
        const narrow *q = arg;                                                             \
        (void)thread;                                                                      \
        __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(q->ic % 8)),             \
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));      \
        int64_t per_image = (q->hw + NARROW_ITEM - 1) / NARROW_ITEM;                       \
        for (int64_t it = lo; it < hi; it++) {                                             \
            int64_t img = it / per_image, p = it % per_image * NARROW_ITEM;                \
            int64_t end = p + NARROW_ITEM < q->hw ? p + NARROW_ITEM : q->hw;               \
            for (; p < end; p += 8 / (OCPT))                                               \
                for (int64_t o0 = 0; o0 < q->oc; o0 += (OCPT))                             \
                    narrow_tile(q, (OCPT), img, p,                                         \
                                end - p < 8 / (OCPT) ? (int)(end - p) : 8 / (OCPT), o0,    \
                                tail);                                                     \
        }                                                                                  \
    }
NARROW_ITEMS(1)
NARROW_ITEMS(2)
NARROW_ITEMS(4)
#undef NARROW_ITEMS

static void narrow_run(void *extra, const void *const *src, void *dst)
{
    narrow *q = extra;
    q->x = src[0];
    q->y = dst;
    dn_range_fn *items = q->ocpt == 1 ? narrow_items_1 : q->ocpt == 2 ? narrow_items_2
                                                                       : narrow_items_4;
    dn_parallel_for(q->n * ((q->hw + NARROW_ITEM - 1) / NARROW_ITEM), 0, items, q);
}

static void narrow_free(void *extra)
{
    narrow *q = extra;
    free(q->w);
    free(q);
}

#endif

dnnl_format_tag_t dn_narrow_source(const dn_build *b, const dnnl_memory_desc_t *src,
                                   int rank, const int64_t *xd, const int64_t *yd,
                                   const int64_t *kernel, const dn_conv_geom *g,
                                   int64_t group)
{
#ifdef __x86_64__
    const gl_kernel_ctx *k = b->k;
    if (!b->c->has_avx2 || rank != 4 || group != 1 || b->s->then || yd[1] < 1 ||
        yd[1] * 4 > b->c->block || yd[1] > NARROW_MAX_OC || kernel[0] != 1 ||
        kernel[1] != 1 || !dn_input_constant(k, 1) ||
        (k->n_inputs > 2 && k->in[2] && !dn_input_constant(k, 2)))
        return dnnl_format_tag_undef;
    for (int d = 0; d < 2; d++)
        if (g->strides[d] != 1 || g->dilates[d] != 0 || g->pad_l[d] || g->pad_r[d])
            return dnnl_format_tag_undef;
    /* nChw8c or nChw16c of the plan's block (nhwc and others have no lanes) */
    dn_own_layout l = dn_md_own_layout(src, xd, true);
    return dn_own_layout_lanes(l) == b->c->block ? dn_own_layout_tag(l)
                                                 : dnnl_format_tag_undef;
#else
    (void)b, (void)src, (void)rank, (void)xd, (void)yd, (void)kernel, (void)g, (void)group;
    return dnnl_format_tag_undef;
#endif
}

bool dn_narrow_take(dn_build *b, const_dnnl_primitive_desc_t pd, const int64_t *xd,
                    const int64_t *yd)
{
#ifdef __x86_64__
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *w = k->in[1], *bias = k->n_inputs > 2 ? k->in[2] : NULL;
    /* the block the pd's source is in: what the bindings hand the kernel */
    int lanes = dn_own_layout_lanes(dn_md_own_layout(dn_pd_md(pd, dnnl_query_src_md, 0), xd,
                                                     true));
    if (lanes != 8 && lanes != 16)
        return false;
    narrow q = {.n = xd[0], .ic = xd[1], .oc = yd[1], .hw = xd[2] * xd[3], .lanes = lanes};
    q.padded = (q.ic + q.lanes - 1) / q.lanes * q.lanes;
    q.groups = (q.ic + 7) / 8;
    if (!dn_own_posts_of(pd, q.posts, NARROW_MAX_POSTS, &q.n_posts))
        return false;
    q.ocpt = q.oc == 1 ? 1 : q.oc == 2 ? 2 : 4;
    int ppt = 8 / q.ocpt;
    int64_t rows = (q.oc + q.ocpt - 1) / q.ocpt * q.ocpt;
    q.w = gl_xcalloc((size_t)(rows * q.groups * 8), sizeof(float));
    const float *wv = gl_tensor_data(w); /* [oc, ic, 1, 1] */
    for (int64_t o = 0; o < q.oc; o++) {
        memcpy(q.w + o * q.groups * 8, wv + o * q.ic, (size_t)q.ic * sizeof(float));
        for (int p = 0; p < ppt; p++)
            q.bias[o / q.ocpt][o % q.ocpt * ppt + p] =
                bias ? ((const float *)gl_tensor_data(bias))[o] : 0.0f;
    }
    narrow *kept = gl_xmalloc(sizeof(*kept));
    *kept = q;
    /* (a fused unit's note adds its post-ops to the name) */
    dn_take_native(b, narrow_run, kept, narrow_free, "graphlab:avx2 1x1 nChw%dc>nchw",
                   q.lanes);
    return true;
#else
    (void)b, (void)pd, (void)xd, (void)yd;
    return false;
#endif
}

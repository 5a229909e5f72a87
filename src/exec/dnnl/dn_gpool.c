/* dn_gpool.c — GlobalAveragePool on graphlab's own AVX2 kernel (taken by dn_pool.c's build;
 * on AVX-512 machines in nChw16c only).
 *
 * oneDNN 2.6's jit:avx2 pooling runs a global average as a window the size of the map,
 * output pixel by output pixel: 0.31 ms for [8,960,14,14] in nChw8c on one thread (a
 * squeeze-excite's pooling in EfficientNet-V2 at batch 8), where summing each channel
 * block's 8-float vectors in four independent accumulators takes 0.11 ms (0.040 against
 * 0.012 ms at batch 1); ONNX Runtime's NCHWc pooling is in between. EfficientNet-V2-S
 * has 31 of them (9.9 ms against ORT's 4.5 at batch 8, one thread), RegNet-Y 16. The
 * pd is still made: it stands for "built" and its descriptors are the bindings'.
 */
#include "exec/dnnl/dn.h"

#include <stdlib.h>
#include <string.h>

#ifdef __x86_64__
#include <immintrin.h>

/* nhwc: the channels summed GAP_CHUNK at a time, pixel after pixel: up to 8 vectors of
 * accumulators in registers over one run of up to 256 bytes of each pixel (whole cache
 * lines). Summing 8 channels down the whole image, then the next 8, read each line of a
 * wide map twice or more: efficientnet_b0's 17 pools, one thread (AVX2), 0.305 -> 0.27
 * ms, two threads 0.445 -> 0.365. The work items are the chunks of all images, and of a
 * large map with fewer chunks than two per thread its pixels in GAP_PARTS parts too,
 * summed into `part` and added up after. */
#define GAP_CHUNK 64
#define GAP_PARTS 4

typedef struct gap_geom {
    int64_t lanes;     /* a blocked layout's block (8: nChw8c, 16: nChw16c); 0: nhwc */
    int64_t n, ch, hw; /* batch, channels (blocked: padded to the block), H*W */
    int64_t chunks;    /* nhwc: per image, runs of GAP_CHUNK channels */
    int64_t parts;     /* nhwc: per chunk, runs of pixels (1: the whole map) */
    float *part;       /* parts > 1: n x parts x ch sums */
    const float *x;    /* this run's source and destination */
    float *y;
} gap_geom;

/* The mean of `count` vectors of 8 floats `stride` floats apart, into y[0..8). */
__attribute__((target("avx2"))) static void gap_lanes(const float *x, int64_t count,
                                                      int64_t stride, float scale, float *y)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 4 <= count; i += 4) {
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i * stride));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + (i + 1) * stride));
        a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + (i + 2) * stride));
        a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + (i + 3) * stride));
    }
    for (; i < count; i++)
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i * stride));
    __m256 sum = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    _mm256_storeu_ps(y, _mm256_mul_ps(sum, _mm256_set1_ps(scale)));
}

/* nv (a constant where inlined) vectors of 8 channels summed over `count` pixels
 * `stride` floats apart, times scale, into y. */
__attribute__((target("avx2"), always_inline)) static inline void
gap_vectors(const float *x, int64_t count, int64_t stride, float scale, float *y, int nv)
{
    __m256 a[GAP_CHUNK / 8];
    for (int v = 0; v < nv; v++)
        a[v] = _mm256_setzero_ps();
    for (int64_t i = 0; i < count; i++, x += stride)
        for (int v = 0; v < nv; v++)
            a[v] = _mm256_add_ps(a[v], _mm256_loadu_ps(x + 8 * v));
    for (int v = 0; v < nv; v++)
        _mm256_storeu_ps(y + 8 * v, _mm256_mul_ps(a[v], _mm256_set1_ps(scale)));
}

/* Channels [c, end) of `count` pixels: whole vectors by 8, 4, 2, 1 (each a kernel of
 * its own, its accumulators in registers), the last few channels one by one. */
__attribute__((target("avx2"))) static void gap_channels(const float *x, int64_t count,
                                                        int64_t stride, float scale, float *y,
                                                        int64_t c, int64_t end)
{
    for (; c + 64 <= end; c += 64)
        gap_vectors(x + c, count, stride, scale, y + c, 8);
    if (c + 32 <= end)
        gap_vectors(x + c, count, stride, scale, y + c, 4), c += 32;
    if (c + 16 <= end)
        gap_vectors(x + c, count, stride, scale, y + c, 2), c += 16;
    if (c + 8 <= end)
        gap_vectors(x + c, count, stride, scale, y + c, 1), c += 8;
    for (; c < end; c++) { /* the channels past the last 8 */
        float s = 0.0f;
        for (int64_t i = 0; i < count; i++)
            s += x[i * stride + c];
        y[c] = s * scale;
    }
}

/* Work items [lo, hi): blocked channel blocks of all images (each HW*lanes floats, its
 * mean `lanes` floats), or nhwc (image, chunk, part)s. */
__attribute__((target("avx2"))) static void gap_items(void *arg, int64_t lo, int64_t hi,
                                                     int thread)
{
    const gap_geom *g = arg;
    (void)thread;
    float scale = 1.0f / (float)g->hw;
    for (int64_t it = lo; it < hi; it++) {
        if (g->lanes) {
            for (int64_t l = 0; l < g->lanes; l += 8)
                gap_lanes(g->x + it * g->hw * g->lanes + l, g->hw, g->lanes, scale,
                          g->y + it * g->lanes + l);
            continue;
        }
        int64_t part = it % g->parts, rest = it / g->parts;
        int64_t img = rest / g->chunks, c0 = rest % g->chunks * GAP_CHUNK;
        int64_t p0 = g->hw * part / g->parts, p1 = g->hw * (part + 1) / g->parts;
        int64_t end = c0 + GAP_CHUNK < g->ch ? c0 + GAP_CHUNK : g->ch;
        const float *x = g->x + (img * g->hw + p0) * g->ch;
        if (g->parts == 1)
            gap_channels(x, p1 - p0, g->ch, scale, g->y + img * g->ch, c0, end);
        else /* sums: the parts are added up and scaled after */
            gap_channels(x, p1 - p0, g->ch, 1.0f, g->part + (img * g->parts + part) * g->ch,
                         c0, end);
    }
}

static void gap_run(void *extra, const void *const *src, void *dst)
{
    gap_geom *g = extra;
    g->x = src[0];
    g->y = dst;
    int64_t items = g->lanes ? g->n * (g->ch / g->lanes) : g->n * g->chunks * g->parts;
    dn_parallel_for(items, 0, gap_items, g);
    if (g->parts == 1)
        return;
    float scale = 1.0f / (float)g->hw;
    for (int64_t img = 0; img < g->n; img++)
        for (int64_t c = 0; c < g->ch; c++) {
            float s = 0.0f;
            for (int64_t p = 0; p < g->parts; p++)
                s += g->part[(img * g->parts + p) * g->ch + c];
            g->y[img * g->ch + c] = s * scale;
        }
}

static void gap_free(void *extra)
{
    gap_geom *g = extra;
    free(g->part);
    free(g);
}
#endif

void dn_gap_take(dn_build *b, const_dnnl_primitive_desc_t pd, const int64_t *xd)
{
#ifdef __x86_64__
    int64_t yd[4] = {xd[0], xd[1], 1, 1};
    dn_own_layout l = dn_pd_own_layout(pd, xd, yd, true);
    /* On AVX-512 oneDNN's own pooling is ahead in nhwc (efficientnet_b0's 17, one thread:
     * 0.21 ms against 0.28), far behind in nChw16c (efficientnet_v2_s's 31: 0.80 against
     * 0.23; two threads 0.87 against 0.37, ONNX Runtime's 0.38) */
    if (l == DN_OWN_NONE || (!b->c->avx2 && l != DN_OWN_NCHW16C))
        return;
    gap_geom *g = gl_xcalloc(1, sizeof(*g));
    g->lanes = dn_own_layout_lanes(l);
    g->n = xd[0];
    g->ch = g->lanes ? (xd[1] + g->lanes - 1) / g->lanes * g->lanes : xd[1];
    g->hw = xd[2] * xd[3];
    g->chunks = (xd[1] + GAP_CHUNK - 1) / GAP_CHUNK;
    /* fewer items than two per thread over a large map (a squeeze-excite's first pool at
     * batch 1): its pixels in parts too */
    int threads = b->c->max_threads > 1 ? b->c->max_threads : 1;
    g->parts = !g->lanes && g->n * g->chunks < 2 * threads && g->hw >= 1024 ? GAP_PARTS : 1;
    if (g->parts > 1)
        g->part = gl_xmalloc((size_t)(g->n * g->parts * g->ch) * sizeof(float));
    dn_take_native(b, gap_run, g, gap_free, "graphlab:avx2 %s", dn_own_layout_name(l));
#else
    (void)b, (void)pd, (void)xd;
#endif
}

/* dn_gpool.c — GlobalAveragePool on graphlab's own AVX2 kernel (taken by dn_pool.c's build).
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

typedef struct gap_geom {
    bool blocked;      /* nChw8c, else nhwc */
    int64_t n, ch, hw; /* batch, channels (nChw8c: padded to the block), H*W */
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

/* Work items [lo, hi): nChw8c channel blocks of all images (each HW*8 floats, its mean 8
 * floats), or nhwc images (HW rows of C floats, their mean C floats). */
__attribute__((target("avx2"))) static void gap_items(void *arg, int64_t lo, int64_t hi,
                                                     int thread)
{
    const gap_geom *g = arg;
    (void)thread;
    float scale = 1.0f / (float)g->hw;
    for (int64_t it = lo; it < hi; it++) {
        if (g->blocked) {
            gap_lanes(g->x + it * g->hw * 8, g->hw, 8, scale, g->y + it * 8);
            continue;
        }
        const float *x = g->x + it * g->hw * g->ch;
        float *y = g->y + it * g->ch;
        int64_t c = 0;
        for (; c + 8 <= g->ch; c += 8)
            gap_lanes(x + c, g->hw, g->ch, scale, y + c);
        for (; c < g->ch; c++) { /* the channels past the last 8 */
            float s = 0.0f;
            for (int64_t i = 0; i < g->hw; i++)
                s += x[i * g->ch + c];
            y[c] = s * scale;
        }
    }
}

static void gap_run(void *extra, const void *const *src, void *dst)
{
    gap_geom *g = extra;
    g->x = src[0];
    g->y = dst;
    int64_t items = g->blocked ? g->n * (g->ch / 8) : g->n;
    dn_parallel_for(items, 0, gap_items, g);
}
#endif

void dn_gap_take(dn_build *b, const_dnnl_primitive_desc_t pd, const int64_t *xd)
{
#ifdef __x86_64__
    int64_t yd[4] = {xd[0], xd[1], 1, 1};
    dn_own_layout l = dn_pd_own_layout(pd, xd, yd);
    if (l == DN_OWN_NONE)
        return;
    gap_geom *g = gl_xcalloc(1, sizeof(*g));
    g->blocked = l == DN_OWN_NCHW8C;
    g->n = xd[0];
    g->ch = g->blocked ? (xd[1] + 7) / 8 * 8 : xd[1];
    g->hw = xd[2] * xd[3];
    dn_take_native(b, gap_run, g, free, "graphlab:avx2 %s", dn_own_layout_name(l));
#else
    (void)b, (void)pd, (void)xd;
#endif
}

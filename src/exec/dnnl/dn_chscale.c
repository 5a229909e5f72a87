/* dn_chscale.c — a Mul of an [N, C, H, W] activation by one value per image and channel
 * ([N, C, 1, 1]) on graphlab's own AVX2 kernel (taken by dn_binary.c's build).
 *
 * That is the squeeze-and-excitation scale of EfficientNet, MobileNet-V3, RegNet-Y and
 * MnasNet. oneDNN 2.6's jit:uni binary broadcasts the second source element by element:
 * on one thread 0.26 ms for efficientnet_b0's [1,32,112,112] nhwc where ONNX Runtime
 * takes 0.09, 0.15 against 0.09 at [1,144,56,56] (its 16 scales 0.95 ms against 0.64).
 * Here each image's C scales are loaded once per pixel row of C floats (nhwc) or once per
 * channel block (nChw8c) and the activation streams through one multiply. On AVX-512 too
 * (nhwc; its block, nChw16c, stays on oneDNN): oneDNN's jit:uni binary is no faster
 * there, per-node minimums summed, one thread, regnet_y_400mf's 16 0.43 -> 0.25-0.33 ms,
 * efficientnet_b0's 16 1.09-1.17 -> 0.96-1.03; in nChw16c efficientnet_v2_s's 30 were
 * 1.68-1.71 against 1.77 (memory-bound either way). The pd is still made: it stands for
 * "built" and its descriptors are the bindings'.
 */
#include "exec/dnnl/dn.h"

#include <stdlib.h>
#include <string.h>

#ifdef __x86_64__
#include <immintrin.h>

typedef struct chs_geom {
    bool blocked;      /* nChw8c, else nhwc */
    int64_t n, c, hw;  /* batch, channels, H*W */
    int64_t cp;        /* channels as laid out (nChw8c: padded to the block) */
    int64_t s_stride;  /* floats between two images' scales: C (plain), cp (nChw8c), 0 */
    const float *x, *s;
    float *y;
} chs_geom;

/* nChw8c: work items are the channel blocks of all images, each hw vectors of 8. The
 * block's 8 scales are read into a vector once; the lanes past C are 0 (the padding the
 * destination keeps zero whatever plain scales lie beyond this image's C). */
__attribute__((target("avx2"))) static void chs_blocks(void *arg, int64_t lo, int64_t hi,
                                                      int thread)
{
    const chs_geom *g = arg;
    (void)thread;
    int64_t blocks = g->cp / 8;
    for (int64_t it = lo; it < hi; it++) {
        int64_t img = it / blocks, c0 = it % blocks * 8;
        float lanes[8] = {0};
        for (int64_t l = 0; l < 8 && c0 + l < g->c; l++)
            lanes[l] = g->s[img * g->s_stride + c0 + l];
        __m256 sv = _mm256_loadu_ps(lanes);
        const float *x = g->x + it * g->hw * 8;
        float *y = g->y + it * g->hw * 8;
        for (int64_t i = 0; i < g->hw; i++)
            _mm256_storeu_ps(y + i * 8, _mm256_mul_ps(_mm256_loadu_ps(x + i * 8), sv));
    }
}

/* nhwc: work items are the pixels of all images, each a row of C floats scaled by its
 * image's C scales (read from cache: C is at most a few thousand floats). */
__attribute__((target("avx2"))) static void chs_pixels(void *arg, int64_t lo, int64_t hi,
                                                      int thread)
{
    const chs_geom *g = arg;
    (void)thread;
    for (int64_t it = lo; it < hi; it++) {
        const float *s = g->s + it / g->hw * g->s_stride;
        const float *x = g->x + it * g->c;
        float *y = g->y + it * g->c;
        int64_t c = 0;
        for (; c + 8 <= g->c; c += 8)
            _mm256_storeu_ps(y + c, _mm256_mul_ps(_mm256_loadu_ps(x + c), _mm256_loadu_ps(s + c)));
        for (; c < g->c; c++) /* the channels past the last 8 */
            y[c] = x[c] * s[c];
    }
}

static void chs_run(void *extra, const void *const *src, void *dst)
{
    chs_geom *g = extra;
    g->x = src[0];
    g->s = src[1];
    g->y = dst;
    if (g->blocked)
        dn_parallel_for(g->n * (g->cp / 8), 0, chs_blocks, g);
    else
        dn_parallel_for(g->n * g->hw, 0, chs_pixels, g);
}
#endif

void dn_chscale_take(dn_build *b, const dnnl_memory_desc_t *md0, const int64_t *xd,
                     const dnnl_memory_desc_t *md1, const int64_t *sd)
{
#ifdef __x86_64__
    if (!b->c->has_avx2 || sd[1] != xd[1] || sd[2] != 1 || sd[3] != 1 ||
        (sd[0] != 1 && sd[0] != xd[0]))
        return;
    dn_own_layout l = dn_md_own_layout(md0, xd, false);
    if (l == DN_OWN_NONE)
        return;
    /* the scales plain (or nhwc: the same bytes at 1x1), or in the activation's nChw8c */
    bool s_plain = dn_md_is_plain(md1);
    if (!s_plain && !(l == DN_OWN_NCHW8C && dn_md_own_layout(md1, sd, false) == DN_OWN_NCHW8C))
        return;
    chs_geom *g = gl_xcalloc(1, sizeof(*g));
    g->blocked = l == DN_OWN_NCHW8C;
    g->n = xd[0];
    g->c = xd[1];
    g->hw = xd[2] * xd[3];
    g->cp = g->blocked ? (xd[1] + 7) / 8 * 8 : xd[1];
    g->s_stride = sd[0] == 1 ? 0 : s_plain ? g->c : g->cp; /* [1, C, 1, 1]: every image's */
    dn_take_native(b, chs_run, g, free, "graphlab:avx2 %s", dn_own_layout_name(l));
#else
    (void)b, (void)md0, (void)xd, (void)md1, (void)sd;
#endif
}

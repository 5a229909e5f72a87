/* dn_chscale.c — a Mul of an [N, C, H, W] activation by one value per image and channel
 * ([N, C, 1, 1]) on graphlab's own AVX2 kernel (taken by dn_binary.c's build).
 *
 * That is the squeeze-and-excitation scale of EfficientNet, MobileNet-V3, RegNet-Y and
 * MnasNet. oneDNN 2.6's jit:uni binary broadcasts the second source element by element:
 * on one thread 0.26 ms for efficientnet_b0's [1,32,112,112] nhwc where ONNX Runtime
 * takes 0.09, 0.15 against 0.09 at [1,144,56,56] (its 16 scales 0.95 ms against 0.64).
 * Here each image's C scales are loaded once per pixel row of C floats (nhwc) or once per
 * channel block (nChw8c, nChw16c) and the activation streams through one multiply.
 * Per-node minimums summed, two threads, this kernel against oneDNN's (issue 22):
 * nhwc, regnet_y_400mf's 16 0.43 -> 0.25-0.33 ms (one thread), efficientnet_b0's 16
 * 1.09-1.17 -> 0.96-1.03 (one thread); nChw16c, efficientnet_b0's 0.195 -> 0.163,
 * efficientnet_v2_s's 30 0.307 -> 0.279 (jit:uni); and where oneDNN has only its
 * reference code, regnet_y_400mf's scales over its grouped convolutions' nChw8c on
 * AVX-512 (a block of 8 where the plan's is 16), 0.66 -> 0.10 ms at batch 1, 5.36 ->
 * 0.49 at batch 8 (the run 50.1 -> 41.9 ms). The pd is still made: it stands for
 * "built" and its descriptors are the bindings'.
 */
#include "exec/dnnl/dn.h"

#include <stdlib.h>
#include <string.h>

#ifdef __x86_64__
#include <immintrin.h>

typedef struct chs_geom {
    int lanes;         /* the channel block, 8 or 16; 0: nhwc */
    int64_t n, c, hw;  /* batch, channels, H*W */
    int64_t cp;        /* channels as laid out (blocked: padded to the block) */
    int64_t s_stride;  /* floats between two images' scales: C (plain), cp (blocked), 0 */
    const float *x, *s;
    float *y;
} chs_geom;

/* Blocked: work items are the channel blocks of all images, each hw pixels of `lanes`
 * floats. The block's scales are read into one or two vectors once; the lanes past C
 * are 0 (the padding the destination keeps zero whatever plain scales lie beyond this
 * image's C). */
__attribute__((target("avx2"))) static void chs_blocks(void *arg, int64_t lo, int64_t hi,
                                                      int thread)
{
    const chs_geom *g = arg;
    (void)thread;
    int64_t blocks = g->cp / g->lanes;
    for (int64_t it = lo; it < hi; it++) {
        int64_t img = it / blocks, c0 = it % blocks * g->lanes;
        float lanes[16] = {0};
        for (int64_t l = 0; l < g->lanes && c0 + l < g->c; l++)
            lanes[l] = g->s[img * g->s_stride + c0 + l];
        __m256 lo8 = _mm256_loadu_ps(lanes), hi8 = _mm256_loadu_ps(lanes + 8);
        const float *x = g->x + it * g->hw * g->lanes;
        float *y = g->y + it * g->hw * g->lanes;
        if (g->lanes == 8) {
            for (int64_t i = 0; i < g->hw; i++)
                _mm256_storeu_ps(y + i * 8, _mm256_mul_ps(_mm256_loadu_ps(x + i * 8), lo8));
            continue;
        }
        for (int64_t i = 0; i < g->hw; i++) {
            _mm256_storeu_ps(y + i * 16, _mm256_mul_ps(_mm256_loadu_ps(x + i * 16), lo8));
            _mm256_storeu_ps(y + i * 16 + 8, _mm256_mul_ps(_mm256_loadu_ps(x + i * 16 + 8), hi8));
        }
    }
}

/* nhwc: work items are the pixels of all images, each a row of C floats scaled by its
 * image's C scales (read from cache: C is at most a few thousand floats). The image is
 * worked out once per run of its pixels, not by a division per pixel. */
__attribute__((target("avx2"))) static void chs_pixels(void *arg, int64_t lo, int64_t hi,
                                                      int thread)
{
    const chs_geom *g = arg;
    (void)thread;
    const float *x = g->x + lo * g->c;
    float *y = g->y + lo * g->c;
    for (int64_t it = lo; it < hi;) {
        int64_t img = it / g->hw, end = (img + 1) * g->hw < hi ? (img + 1) * g->hw : hi;
        const float *s = g->s + img * g->s_stride;
        for (; it < end; it++, x += g->c, y += g->c) {
            int64_t c = 0;
            for (; c + 8 <= g->c; c += 8)
                _mm256_storeu_ps(y + c,
                                 _mm256_mul_ps(_mm256_loadu_ps(x + c), _mm256_loadu_ps(s + c)));
            for (; c < g->c; c++) /* the channels past the last 8 */
                y[c] = x[c] * s[c];
        }
    }
}

static void chs_run(void *extra, const void *const *src, void *dst)
{
    chs_geom *g = extra;
    g->x = src[0];
    g->s = src[1];
    g->y = dst;
    if (g->lanes)
        dn_parallel_for(g->n * (g->cp / g->lanes), 0, chs_blocks, g);
    else
        dn_parallel_for(g->n * g->hw, 0, chs_pixels, g);
}

/* The activation's layout graphlab's kernel reads md0 in, with the scales md1 plain or
 * in that same blocked layout; DN_OWN_NONE when it cannot. */
static dn_own_layout chs_layout(const dn_build *b, const dnnl_memory_desc_t *md0,
                                const int64_t *xd, const dnnl_memory_desc_t *md1,
                                const int64_t *sd)
{
    if (!b->c->has_avx2 || sd[1] != xd[1] || sd[2] != 1 || sd[3] != 1 ||
        (sd[0] != 1 && sd[0] != xd[0]))
        return DN_OWN_NONE;
    dn_own_layout l = dn_md_own_layout(md0, xd, true);
    if (l == DN_OWN_NONE || dn_md_is_plain(md1))
        return l;
    return l != DN_OWN_NHWC && dn_md_own_layout(md1, sd, true) == l ? l : DN_OWN_NONE;
}
#endif

bool dn_chscale_fits(const dn_build *b, const dnnl_memory_desc_t *md0, const int64_t *xd,
                     const dnnl_memory_desc_t *md1, const int64_t *sd)
{
#ifdef __x86_64__
    return chs_layout(b, md0, xd, md1, sd) != DN_OWN_NONE;
#else
    (void)b, (void)md0, (void)xd, (void)md1, (void)sd;
    return false;
#endif
}

void dn_chscale_take(dn_build *b, const dnnl_memory_desc_t *md0, const int64_t *xd,
                     const dnnl_memory_desc_t *md1, const int64_t *sd)
{
#ifdef __x86_64__
    dn_own_layout l = chs_layout(b, md0, xd, md1, sd);
    if (l == DN_OWN_NONE)
        return;
    chs_geom *g = gl_xcalloc(1, sizeof(*g));
    g->lanes = dn_own_layout_lanes(l);
    g->n = xd[0];
    g->c = xd[1];
    g->hw = xd[2] * xd[3];
    g->cp = g->lanes ? (xd[1] + g->lanes - 1) / g->lanes * g->lanes : xd[1];
    /* [1, C, 1, 1]: every image's */
    g->s_stride = sd[0] == 1 ? 0 : dn_md_is_plain(md1) ? g->c : g->cp;
    dn_take_native(b, chs_run, g, free, "graphlab:avx2 %s", dn_own_layout_name(l));
#else
    (void)b, (void)md0, (void)xd, (void)md1, (void)sd;
#endif
}

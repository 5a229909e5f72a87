/* dn_pool.c — MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool as oneDNN pooling.
 *
 * The source is read in the plan's activation layout (converted when it comes plain),
 * the destination left to oneDNN (it keeps the source's layout). The window is resolved
 * by ops/window.h, as for the reference kernel; ceil_mode by growing the right padding
 * so that oneDNN's floor gives ONNX's ceiling. AveragePool's count_include_pad picks the algorithm; with
 * ceil_mode the extra right padding would be counted too, so that combination stays on
 * the reference kernel, as does MaxPool's Indices output. graphlab's NhwcMaxPool etc.
 * (the layout pass's channels-last pools) read and write nhwc over their plain bytes.
 *
 * Max pooling also takes uint8 and int8 tensors (ONNX's MaxPool does since opset 12; the
 * qdq pass makes DequantizeLinear -> MaxPool -> QuantizeLinear of one scale and zero point
 * a MaxPool of the int8 tensor): the maximum is exact in any type. An int8 tensor is read
 * in its layout (nhwc, as the int8 convolutions write it; dn_qprod.c), a plain one
 * converted to nwc/nhwc/ndhwc whatever the policy (oneDNN 2.6 pools int8 nchw only with
 * its reference code), and written in that layout.
 *
 * Float max pooling over 2-D images in nChw8c, nChw16c or nhwc runs graphlab's own
 * (AVX2) kernel instead of oneDNN 2.6's jit one. On AVX2 machines oneDNN's was
 * 3-5x slower than ONNX Runtime's on GoogLeNet's pools (192x28x28, 3x3 stride 1: 0.55
 * ms against 0.09; this kernel 0.11 ms, one thread). The window's maximum is separable: each
 * input row's maxima over the window's columns first (one 8-lane vector per output
 * column) into a ring of as many rows as a window spans, then each output row's over
 * the window's rows as soon as its last row is in: 2 + 2 vector maxima per output of a
 * 3x3 window instead of 9, the input read once in order. The usual windows (2 or 3 wide
 * and tall, stride 1 or 2, no dilation, up to 32 lanes) go the other way round without
 * the ring: each input column's maximum over the window's rows, carried in registers
 * along the row (np_direct_row). Session 38, one thread, against the kernel before (a
 * plane's reduced rows at once: ShuffleNet's 24x112x112 pool kept 600 KB a thread):
 * GoogLeNet's 13 pools 1.25 -> 0.85 ms, SqueezeNet's 5 0.35 -> 0.24, a UNet's two 2x2
 * pools at batch 8 1.0 -> 0.7, ShuffleNet's stem pool at batch 8 0.9 -> 0.65. The
 * output rows are split over the plan's threads (a ResNet's stem pool, 64x112x112 3x3
 * stride 2, one thread: ONNX Runtime 0.26 ms; this kernel 0.79 when it looked each
 * window up per pixel and per run, then 0.30).
 * AveragePool (2-D float, either count_include_pad, ceil_mode where pool_window takes it)
 * runs the same kernel with sums for maxima, each output pixel's sum then multiplied by
 * its window's reciprocal divisor, resolved per output row and column at build time
 * (np_scales). Session 38, one thread, per-node minimums against oneDNN's jit:avx2:
 * DenseNet-121's three 2x2 stride-2 transition pools 0.86 -> 0.38 ms (batch 8: 7.0 ->
 * 3.0), Inception-v3's nine 3x3 ones 0.91 -> 0.69 (7.4 -> 6.4), none slower. On AVX-512
 * it was first taken only where oneDNN has nothing but its reference code (dilated
 * windows); session 41 measured it against oneDNN's jit:avx512_core everywhere (two
 * threads, per-node minimums of 10 runs summed): GoogLeNet's 13 max pools 0.91 -> 0.67
 * ms (batch 8: 5.9 -> 4.5), Inception-v3's 13 pools 1.43 -> 1.15 (10.6 -> 8.6),
 * DenseNet-121's 4 0.54 -> 0.34 (4.9 -> 3.2), ResNet-50's stem pool 0.15 -> 0.08 (1.56 ->
 * 1.16), VGG-11's 5 1.36 -> 0.97, ResNet-18 nhwc's at batch 8 0.43 -> 0.34 (ONNX
 * Runtime 0.28), none slower.
 * A window wholly in the padding, or taller than NP_MAX_TAPS rows, keeps oneDNN's kernel
 * (ONNX's -inf there is no maximum of anything); a NaN input takes the reference
 * kernel, as before (dn_guard_specials).
 */
#include "exec/dnnl/dn_opkit.h"
#include "ops/window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __x86_64__
#include <immintrin.h>
#endif

#define POOL_MAX_SP 3

typedef struct pool_geom {
    dnnl_dims_t strides, kernel, dilation, pad_l, pad_r;
    int64_t out[POOL_MAX_SP];
} pool_geom;

/* The window of MaxPool/AveragePool as the reference kernel resolves it (ops/window.h),
 * in oneDNN's terms; false (why set) when this path does not take it. oneDNN derives
 * the output size by flooring, so ceil_mode's extra window comes from a larger right
 * pad. */
static bool pool_window(const gl_kernel_ctx *k, int nsp, const int64_t *in, bool is_max,
                        pool_geom *g, const char **why)
{
    gl_window w;
    *why = "window attributes the oneDNN path does not handle";
    if (gl_window_read(k->node, k->where, nsp, NULL, &w) != GL_OK ||
        gl_window_resolve(&w, in, k->where, g->out) != GL_OK) {
        gl_error_clear();
        return false;
    }
    if (!is_max && w.ceil_mode && gl_node_attr_int(k->node, "count_include_pad", 0)) {
        *why = "ceil_mode with count_include_pad";
        return false;
    }
    for (int d = 0; d < nsp; d++) {
        if (!is_max && w.dil[d] != 1) {
            *why = "AveragePool with dilations";
            return false;
        }
        int64_t span = (w.kernel[d] - 1) * w.dil[d] + 1;
        int64_t right = (g->out[d] - 1) * w.stride[d] + span - in[d] - w.pad_begin[d];
        g->strides[d] = w.stride[d];
        g->kernel[d] = w.kernel[d];
        g->dilation[d] = w.dil[d] - 1;
        g->pad_l[d] = w.pad_begin[d];
        g->pad_r[d] = right > w.pad_end[d] ? right : w.pad_end[d];
    }
    return true;
}

/* ---- graphlab's max pooling on AVX2 --------------------------------------------------- */

/* The tallest window the kernel takes (a row pointer per tap on the stack); taller ones
 * keep oneDNN's kernel. */
#define NP_MAX_TAPS 16
/* The widest pixel np_direct_row takes: it sweeps a row once per 8 lanes, and over
 * ResNet's 64 channels at batch 8 (8x64x112x112 from DRAM, rows of 28 KB) those strided
 * sweeps took 0.80-0.95 ms where the ring's pixel-by-pixel reads took 0.65-0.70. */
#define NP_DIRECT_LANES 32

/* One image's pooling: `blocks` planes of H x W pixels, each pixel `lanes` floats (8 in
 * nChw8c, C in nhwc, a multiple of 8 or not), into OH x OW pixels. Each output column's
 * and row's window (its first input position and the taps inside the image) is resolved
 * once at build time, not per pixel per run. */
typedef struct np_taps_of {
    int32_t start; /* the input position of tap 0 (in the padding or not) */
    int32_t t0, t1; /* the taps inside the image: t0..t1-1 */
} np_taps_of;

typedef struct np_geom {
    int64_t n, blocks, lanes, h, w, oh, ow;
    int64_t dh, dw; /* ONNX's dilations (1: none), the distance between taps */
    int64_t kw, sw;   /* the window's width and its stride along the row */
    int64_t in0, in1; /* the columns whose taps are all inside the row (np_fast_cols) */
    bool direct;      /* small undilated windows over whole vectors: np_direct_row */
    bool avg;         /* AveragePool: sums times `scale` instead of maxima */
    float *scale;     /* AveragePool: OH x OW reciprocals of each window's divisor */
    np_taps_of *cols, *rows_of;             /* per output column, per output row */
    int scratch_threads;                    /* how many threads `rows` has room for */
    int64_t span; /* input rows a window spans: the ring's rows */
    float *rows;  /* scratch per thread: a ring of span rows of ow pixels (direct: none) */
    const float *x; /* this run's source and destination */
    float *y;
} np_geom;

static void np_free(void *extra)
{
    np_geom *g = extra;
    free(g->rows);
    free(g->cols);
    free(g->rows_of);
    free(g->scale);
    free(g);
}

/* The window's first and one-past-last taps that fall inside [0, size): positions
 * start + t*dil for t in [0, k). */
static void np_taps(int64_t start, int64_t k, int64_t dil, int64_t size, int64_t *t0,
                    int64_t *t1)
{
    int64_t a = 0, b = k;
    while (a < b && start + a * dil < 0)
        a++;
    while (b > a && start + (b - 1) * dil >= size)
        b--;
    *t0 = a;
    *t1 = b;
}

/* Every output position's taps along one axis (out of them, stride s, pad, dilation dil,
 * k taps over `in` positions). */
static np_taps_of *np_taps_table(int64_t out, int64_t k, int64_t s, int64_t dil, int64_t pad,
                                 int64_t in)
{
    np_taps_of *t = gl_xmalloc((size_t)out * sizeof(*t));
    for (int64_t o = 0; o < out; o++) {
        int64_t t0, t1;
        np_taps(o * s - pad, k, dil, in, &t0, &t1);
        t[o] = (np_taps_of){(int32_t)(o * s - pad), (int32_t)t0, (int32_t)t1};
    }
    return t;
}

#ifdef __x86_64__
/* The kernel's reduction: the maximum of two vectors, or (AveragePool) their sum. `avg`
 * is a constant wherever this is inlined (np_run_max, np_run_avg). */
__attribute__((target("avx2"), always_inline)) static inline __m256 np_red(__m256 a, __m256 b,
                                                                          bool avg)
{
    return avg ? _mm256_add_ps(a, b) : _mm256_max_ps(a, b);
}

static inline float np_red1(float a, float b, bool avg)
{
    return avg ? a + b : b > a ? b : a;
}

/* The maximum (sum) of n vectors `step` floats apart from p: the window's usual 2 and 3
 * taps unrolled, the rest in a loop. */
__attribute__((target("avx2"), always_inline)) static inline __m256
np_max_taps(const float *p, int64_t n, int64_t step, bool avg)
{
    __m256 v = _mm256_loadu_ps(p);
    if (n == 3)
        return np_red(np_red(v, _mm256_loadu_ps(p + step), avg), _mm256_loadu_ps(p + 2 * step),
                      avg);
    if (n == 2)
        return np_red(v, _mm256_loadu_ps(p + step), avg);
    for (int64_t t = 1; t < n; t++)
        v = np_red(v, _mm256_loadu_ps(p + t * step), avg);
    return v;
}

/* The scalar of np_max_taps, for lanes past the last whole vector. */
static inline float np_max_taps1(const float *p, int64_t n, int64_t step, bool avg)
{
    float v = p[0];
    for (int64_t t = 1; t < n; t++)
        v = np_red1(v, p[t * step], avg);
    return v;
}

/* AveragePool's output row of OW pixels of `lanes` floats: each pixel's sum times its
 * window's reciprocal divisor (scale: the row's OW of them). */
__attribute__((target("avx2"), always_inline)) static inline void
np_scale_row(float *out, const float *scale, int64_t ow, int64_t lanes)
{
    for (int64_t o = 0; o < ow; o++, out += lanes) {
        __m256 s = _mm256_set1_ps(scale[o]);
        int64_t l = 0;
        for (; l + 8 <= lanes; l += 8)
            _mm256_storeu_ps(out + l, _mm256_mul_ps(_mm256_loadu_ps(out + l), s));
        for (; l < lanes; l++)
            out[l] *= scale[o];
    }
}

/* An output row from its window rows' maxima (sums): out[j] = max over the n rows of
 * rows[t][j], j < len (an output row's OW x lanes floats). */
__attribute__((target("avx2"), always_inline)) static inline void
np_vmax(float *out, const float *const *rows, int64_t n, int64_t len, bool avg)
{
    int64_t j = 0;
    for (; j + 8 <= len; j += 8) {
        __m256 v = _mm256_loadu_ps(rows[0] + j);
        if (n == 3)
            v = np_red(np_red(v, _mm256_loadu_ps(rows[1] + j), avg),
                       _mm256_loadu_ps(rows[2] + j), avg);
        else
            for (int64_t t = 1; t < n; t++)
                v = np_red(v, _mm256_loadu_ps(rows[t] + j), avg);
        _mm256_storeu_ps(out + j, v);
    }
    for (; j < len; j++) {
        float v = rows[0][j];
        for (int64_t t = 1; t < n; t++)
            v = np_red1(v, rows[t][j], avg);
        out[j] = v;
    }
}

/* One input row's maxima over each output column's window: out[ow] = max over the
 * column taps of v[pixel] (v: W pixels of `lanes` floats), each window's taps as
 * np_taps_table resolved them. Inlined with lanes = 8 (nChw8c) so that loop is one
 * vector. */
__attribute__((target("avx2"), always_inline)) static inline void
np_hmax(float *out, const float *v, const np_geom *g, int64_t lanes, bool avg)
{
    const int64_t step = g->dw * lanes;
    for (int64_t ow = 0; ow < g->ow; ow++) {
        const np_taps_of *c = &g->cols[ow];
        const float *first = v + (c->start + c->t0 * g->dw) * lanes;
        const int64_t n = c->t1 - c->t0;
        float *o = out + ow * lanes;
        int64_t l = 0;
        for (; l + 8 <= lanes; l += 8)
            _mm256_storeu_ps(o + l, np_max_taps(first + l, n, step, avg));
        for (; l < lanes; l++)
            o[l] = np_max_taps1(first + l, n, step, avg);
    }
}

/* np_direct_row's output columns [a, z), all taps inside the row, 8 lanes (x, out: at
 * the lane): each input column's maximum (sum) over the n rows once, carried in
 * registers to the next window; AveragePool's sums times the row's reciprocal divisors
 * (scale). */
__attribute__((target("avx2"), always_inline)) static inline void
np_direct_cols(float *out, const float *x, int64_t n, const np_geom *g, int64_t a, int64_t z,
               int64_t lanes, bool avg, const float *scale)
{
    const int64_t in_row = g->w * lanes;
    const float *p = x + g->cols[a].start * lanes;
    float *o = out + a * lanes;
    __m256 left = np_max_taps(p, n, in_row, avg), v;
#define NP_STORE(ow_, v_)                                                                  \
    _mm256_storeu_ps(o, avg ? _mm256_mul_ps(v_, _mm256_set1_ps(scale[ow_])) : v_)
    if (g->kw == 3 && g->sw == 1) {
        __m256 mid = np_max_taps(p + lanes, n, in_row, avg);
        for (int64_t ow = a; ow < z; ow++, p += lanes, o += lanes) {
            __m256 right = np_max_taps(p + 2 * lanes, n, in_row, avg);
            v = np_red(np_red(left, mid, avg), right, avg);
            NP_STORE(ow, v);
            left = mid;
            mid = right;
        }
    } else if (g->kw == 3) {
        for (int64_t ow = a; ow < z; ow++, p += 2 * lanes, o += lanes) {
            __m256 mid = np_max_taps(p + lanes, n, in_row, avg);
            __m256 right = np_max_taps(p + 2 * lanes, n, in_row, avg);
            v = np_red(np_red(left, mid, avg), right, avg);
            NP_STORE(ow, v);
            left = right;
        }
    } else if (g->sw == 1) {
        for (int64_t ow = a; ow < z; ow++, p += lanes, o += lanes) {
            __m256 right = np_max_taps(p + lanes, n, in_row, avg);
            v = np_red(left, right, avg);
            NP_STORE(ow, v);
            left = right;
        }
    } else {
        for (int64_t ow = a; ow < z; ow++, p += 2 * lanes, o += lanes) {
            if (ow > a)
                left = np_max_taps(p, n, in_row, avg);
            v = np_red(left, np_max_taps(p + lanes, n, in_row, avg), avg);
            NP_STORE(ow, v);
        }
    }
#undef NP_STORE
}

/* One output row of a 2- or 3-wide, 2- or 3-tall undilated window of stride 1 or 2 over
 * whole vectors, straight from its n window rows (in_row floats apart from first): each
 * input column's maximum (sum) over the rows once, carried in registers to the next
 * window; 3 loads an output of a 3x3 window at stride 1, 6 at stride 2, 4 of a 2x2 one,
 * and no scratch, where the ring of reduced rows (np_run_units) stores and loads each
 * twice. scale: AveragePool's reciprocal divisors of the row's OW pixels. */
__attribute__((target("avx2"), always_inline)) static inline void
np_direct_row(float *out, const float *first, int64_t n, const np_geom *g, int64_t lanes,
              bool avg, const float *scale)
{
    const int64_t in_row = g->w * lanes;
    for (int64_t l = 0; l < lanes; l += 8) {
        const float *x = first + l;
        for (int64_t ow = 0; ow < g->ow; ow++) {
            if (ow == g->in0 && g->in0 < g->in1) {
                np_direct_cols(out + l, x, n, g, g->in0, g->in1, lanes, avg, scale);
                ow = g->in1 - 1;
                continue;
            }
            const np_taps_of *c = &g->cols[ow]; /* at the edges: tap by tap */
            __m256 v = np_max_taps(x + (c->start + c->t0) * lanes, n, in_row, avg);
            for (int64_t t = c->t0 + 1; t < c->t1; t++)
                v = np_red(v, np_max_taps(x + (c->start + t) * lanes, n, in_row, avg), avg);
            if (avg)
                v = _mm256_mul_ps(v, _mm256_set1_ps(scale[ow]));
            _mm256_storeu_ps(out + ow * lanes + l, v);
        }
    }
}

/* Output rows [u0, u1) of the image's planes counted plane by plane (unit u: plane
 * u / oh, row u % oh): np_direct_row's, or with `ring` (span rows of OW pixels) as
 * scratch: the input rows
 * in order, each reduced over the output columns' windows into the ring, and each
 * output row made from the ring as soon as its last window row is in. The input is
 * read once, in order, and the ring stays in L1/L2: the reduced rows of a whole plane
 * (ShuffleNet's 24x112x112 pool: 600 KB a thread) went out of L2 and back. */
__attribute__((target("avx2"), always_inline)) static inline void
np_run_units(const np_geom *g, const float *x, float *y, float *ring, int64_t u0, int64_t u1,
             bool avg)
{
    const int64_t L = g->lanes, in_row = g->w * L, out_row = g->ow * L;
    const float *taps[NP_MAX_TAPS];
    if (g->direct) {
        for (int64_t u = u0; u < u1; u++) {
            int64_t plane = u / g->oh, oh = u % g->oh;
            const np_taps_of *r = &g->rows_of[oh];
            const float *first = x + (plane * g->h + r->start + r->t0) * in_row;
            float *out = y + u * out_row;
            const float *scale = avg ? g->scale + oh * g->ow : NULL;
            if (L == 8)
                np_direct_row(out, first, r->t1 - r->t0, g, 8, avg, scale);
            else
                np_direct_row(out, first, r->t1 - r->t0, g, L, avg, scale);
        }
        return;
    }
    for (int64_t u = u0; u < u1;) {
        int64_t plane = u / g->oh, oh = u % g->oh;
        int64_t oh1 = oh + (u1 - u) < g->oh ? oh + (u1 - u) : g->oh;
        /* the rows from the first's first tap to the last tap of any (with dilations
         * an output row's last tap can come before the one above's) */
        const np_taps_of *a = &g->rows_of[oh];
        int64_t ih0 = a->start + a->t0 * g->dh, ih1 = ih0;
        for (int64_t o = oh; o < oh1; o++) {
            const np_taps_of *r = &g->rows_of[o];
            int64_t end = r->start + (r->t1 - 1) * g->dh + 1;
            ih1 = end > ih1 ? end : ih1;
        }
        const float *xp = x + plane * g->h * in_row;
        float *yp = y + plane * g->oh * out_row;
        u += oh1 - oh;
        for (int64_t ih = ih0; ih < ih1; ih++) {
            if (L == 8)
                np_hmax(ring + (ih % g->span) * out_row, xp + ih * in_row, g, 8, avg);
            else
                np_hmax(ring + (ih % g->span) * out_row, xp + ih * in_row, g, L, avg);
            for (; oh < oh1; oh++) {
                const np_taps_of *r = &g->rows_of[oh];
                if (r->start + (r->t1 - 1) * g->dh > ih)
                    break; /* its last row is still to come */
                for (int64_t t = r->t0; t < r->t1; t++)
                    taps[t - r->t0] = ring + ((r->start + t * g->dh) % g->span) * out_row;
                np_vmax(yp + oh * out_row, taps, r->t1 - r->t0, out_row, avg);
                if (avg)
                    np_scale_row(yp + oh * out_row, g->scale + oh * g->ow, g->ow, L);
            }
        }
    }
}

/* np_run_units made twice, its reduction a constant in each. */
__attribute__((target("avx2"))) static void np_run_max(const np_geom *g, const float *x,
                                                       float *y, float *ring, int64_t u0,
                                                       int64_t u1)
{
    np_run_units(g, x, y, ring, u0, u1, false);
}

__attribute__((target("avx2"))) static void np_run_avg(const np_geom *g, const float *x,
                                                       float *y, float *ring, int64_t u0,
                                                       int64_t u1)
{
    np_run_units(g, x, y, ring, u0, u1, true);
}

/* The rows of thread `thread` (dn_parallel_for), with its own scratch. */
static void np_rows(void *extra, int64_t lo, int64_t hi, int thread)
{
    np_geom *g = extra;
    float *ring = g->rows ? g->rows + thread * g->span * g->ow * g->lanes : NULL;
    (g->avg ? np_run_avg : np_run_max)(g, g->x, g->y, ring, lo, hi);
}

/* The output rows of all planes split over the node's threads: planes alone would
 * leave a thread idle on an nhwc image (one plane). */
static void np_run(void *extra, const void *const *src, void *dst)
{
    np_geom *g = extra;
    g->x = src[0];
    g->y = dst;
    dn_parallel_for(g->n * g->blocks * g->oh, g->scratch_threads, np_rows, g);
}
#endif

/* Whether np_direct_row takes the rows (windows 2 or 3 wide and tall, strides 1 or 2,
 * undilated, over whole vectors of at most NP_DIRECT_LANES lanes), and its output
 * columns whose taps are all inside the row (none: in0 = in1 = 0). */
static void np_fast_cols(np_geom *g, const int64_t *k, const int64_t *stride)
{
    g->kw = k[1];
    g->sw = stride[1];
    g->in0 = g->in1 = 0;
    g->direct = false;
    if (k[1] < 2 || k[1] > 3 || g->dw != 1 || (g->sw != 1 && g->sw != 2) || g->lanes % 8 != 0)
        return;
    int64_t a = 0, b = g->ow;
    while (a < b && (g->cols[a].t0 != 0 || g->cols[a].t1 != k[1]))
        a++;
    while (b > a && (g->cols[b - 1].t0 != 0 || g->cols[b - 1].t1 != k[1]))
        b--;
    g->in0 = a;
    g->in1 = b;
    g->direct = k[0] >= 2 && k[0] <= 3 && g->dh == 1 && (stride[0] == 1 || stride[0] == 2) &&
                g->lanes <= NP_DIRECT_LANES;
}

/* Every output's window holds at least one input position (taps: n outputs'). */
static bool np_windows_nonempty(const np_taps_of *taps, int64_t n)
{
    for (int64_t o = 0; o < n; o++)
        if (taps[o].t0 >= taps[o].t1)
            return false;
    return true;
}

/* How many of one axis's taps an average divides by, per output position: the taps
 * inside the image (count_include_pad 0), or inside the image and its pads (1; pad_l
 * before, pad_r after, ceil_mode's extra not counted: pool_window refuses that case). */
static void np_divisors(const np_taps_of *taps, int64_t out, int64_t k, bool include_pad,
                        int64_t pad_l, int64_t pad_r, int64_t in, int64_t *count)
{
    for (int64_t o = 0; o < out; o++) {
        if (!include_pad) {
            count[o] = taps[o].t1 - taps[o].t0;
            continue;
        }
        int64_t lo = taps[o].start, hi = taps[o].start + k;
        lo = lo < -pad_l ? -pad_l : lo;
        hi = hi > in + pad_r ? in + pad_r : hi;
        count[o] = hi - lo;
    }
}

/* AveragePool's OH x OW reciprocal divisors: rows' count times columns'. */
static float *np_scales(const np_geom *g, const pool_geom *pg, bool include_pad)
{
    int64_t *rc = gl_xmalloc((size_t)(g->oh + g->ow) * sizeof(int64_t)), *cc = rc + g->oh;
    np_divisors(g->rows_of, g->oh, pg->kernel[0], include_pad, pg->pad_l[0], pg->pad_r[0],
                g->h, rc);
    np_divisors(g->cols, g->ow, pg->kernel[1], include_pad, pg->pad_l[1], pg->pad_r[1], g->w,
                cc);
    float *s = gl_xmalloc((size_t)(g->oh * g->ow) * sizeof(float));
    for (int64_t oh = 0; oh < g->oh; oh++)
        for (int64_t ow = 0; ow < g->ow; ow++)
            s[oh * g->ow + ow] = (float)(1.0 / (double)(rc[oh] * cc[ow]));
    free(rc);
    return s;
}

/* The native kernel writes its source's layout: where oneDNN picked another destination
 * (its reference code for some windows does), the pd is made again with that one.
 * wide: nChw16c too, taken only where oneDNN 2.6 has no kernel of its own for the window
 * (a dilated one on AVX-512: its jit pooling takes none). */
static dnnl_status_t np_dst_like_src(dn_build *b, dnnl_primitive_desc_t *pd,
                                     dnnl_pooling_v2_desc_t *pdsc, const int64_t *xd,
                                     const int64_t *yd, bool wide)
{
    dn_own_layout l = dn_md_own_layout(dn_pd_md(*pd, dnnl_query_src_md, 0), xd, wide);
    if (l == DN_OWN_NONE || dn_pd_own_layout(*pd, xd, yd, wide) == l)
        return dnnl_success;
    dnnl_status_t r = dn_md_tag(&pdsc->dst_desc, 4, yd, dn_own_layout_tag(l));
    if (r != dnnl_success)
        return r;
    dnnl_primitive_desc_t again;
    r = dnnl_primitive_desc_create(&again, pdsc, NULL, b->c->engine, NULL);
    if (r == dnnl_success) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = again;
    }
    return dnnl_success; /* no pd for that destination: oneDNN's own kernel stays */
}

/* Take the native kernel for this float max (avg: average) pooling when the pd's source
 * and destination are both in one of its layouts (xd: N, C, H, W; wide: nChw16c too). */
static void np_take(dn_build *b, dnnl_primitive_desc_t pd, const int64_t *xd,
                    const pool_geom *pg, bool avg, bool include_pad, bool wide)
{
#ifdef __x86_64__
    int64_t yd[4] = {xd[0], xd[1], pg->out[0], pg->out[1]};
    dn_own_layout l = dn_pd_own_layout(pd, xd, yd, wide);
    if (l == DN_OWN_NONE || pg->kernel[0] > NP_MAX_TAPS)
        return;
    np_geom g = {.n = xd[0], .h = xd[2], .w = xd[3], .oh = pg->out[0], .ow = pg->out[1],
                 .dh = pg->dilation[0] + 1, .dw = pg->dilation[1] + 1};
    g.lanes = l == DN_OWN_NHWC ? xd[1] : dn_own_layout_lanes(l);
    g.blocks = l == DN_OWN_NHWC ? 1 : (xd[1] + g.lanes - 1) / g.lanes;
    g.cols = np_taps_table(g.ow, pg->kernel[1], pg->strides[1], g.dw, pg->pad_l[1], g.w);
    g.rows_of = np_taps_table(g.oh, pg->kernel[0], pg->strides[0], g.dh, pg->pad_l[0], g.h);
    if (!np_windows_nonempty(g.cols, g.ow) || !np_windows_nonempty(g.rows_of, g.oh)) {
        free(g.cols);
        free(g.rows_of);
        return;
    }
    np_fast_cols(&g, pg->kernel, pg->strides);
    g.avg = avg;
    g.scale = avg ? np_scales(&g, pg, include_pad) : NULL;
    g.span = (pg->kernel[0] - 1) * g.dh + 1;
    np_geom *kept = gl_xmalloc(sizeof(*kept));
    *kept = g;
    kept->scratch_threads = b->c->max_threads > 1 ? b->c->max_threads : 1;
    /* np_direct_row needs no ring */
    kept->rows = g.direct ? NULL
                          : gl_xmalloc((size_t)(kept->scratch_threads * g.span * g.ow *
                                                g.lanes) * sizeof(float));
    dn_take_native(b, np_run, kept, np_free, "graphlab:avx2 %s%s", avg ? "avg " : "",
                   dn_own_layout_name(l));
#else
    (void)b, (void)pd, (void)xd, (void)pg, (void)avg, (void)include_pad, (void)wide;
#endif
}

static gl_status pool_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_node *n = k->node;
    /* graphlab's NhwcMaxPool etc.: X[N,H,W,C] held plain, read as oneDNN's nhwc */
    bool nhwc = strncmp(n->op_type, "Nhwc", 4) == 0;
    const char *op = n->op_type + (nhwc ? 4 : 0);
    bool global = strncmp(op, "Global", 6) == 0;
    bool is_max = strstr(op, "Max") != NULL;
    const gl_tensor *x = is_max ? dn_f32_int8_input(k, 0) : dn_f32_input(k, 0);
    if (!x || x->count == 0)
        return dn_refuse(b, is_max ? "not a non-empty float32, uint8 or int8 tensor"
                                   : "not a non-empty float32 tensor");
    bool int8 = x->dtype != GL_DT_FLOAT;
    int nsp = x->rank - 2;
    if (nsp < 1 || nsp > POOL_MAX_SP || (nhwc && x->rank != 4))
        return dn_refuse(b, "rank %d", x->rank);
    int64_t xd[POOL_MAX_SP + 2]; /* X's logical NC... dims */
    if (nhwc)
        dn_nhwc_dims(x->dims, xd);
    else
        memcpy(xd, x->dims, (size_t)x->rank * sizeof(int64_t));
    if (is_max && n->n_outputs > 1 && n->outputs[1])
        return dn_refuse(b, "MaxPool's Indices output");
    pool_geom g = {0};
    if (global) {
        for (int d = 0; d < nsp; d++) {
            g.kernel[d] = xd[2 + d];
            g.strides[d] = 1;
            g.out[d] = 1;
        }
    } else {
        const char *why;
        if (!pool_window(k, nsp, xd + 2, is_max, &g, &why))
            return dn_refuse(b, "%s", why);
    }
    dnnl_alg_kind_t alg = is_max ? dnnl_pooling_max
                          : gl_node_attr_int(n, "count_include_pad", 0)
                              ? dnnl_pooling_avg_include_padding
                              : dnnl_pooling_avg_exclude_padding;
    int64_t out_dims[POOL_MAX_SP + 2] = {xd[0], xd[1]};
    memcpy(out_dims + 2, g.out, (size_t)nsp * sizeof(int64_t));
    static const dnnl_format_tag_t channels_last[] = {dnnl_nwc, dnnl_nhwc, dnnl_ndhwc};
    dnnl_format_tag_t act = int8 ? channels_last[nsp - 1] : dn_act_tag(b->c, x->rank);
    dnnl_memory_desc_t src, dst;
    dnnl_status_t r = nhwc ? dn_md_tag(&src, 4, xd, dnnl_nhwc)
                      : act == dnnl_format_tag_undef || x->layout
                          ? (src = b->md[0], dnnl_success)
                          : dn_md_tag(&src, x->rank, x->dims, act);
    if (r == dnnl_success)
        r = dn_md_tag(&dst, x->rank, out_dims, nhwc ? dnnl_nhwc : dnnl_format_tag_any);
    if (r == dnnl_success && int8) /* dn_md_tag makes f32; src may be b->md[0] already */
        r = dn_md_retype(&src, x->dtype);
    if (r == dnnl_success && int8)
        r = dn_md_retype(&dst, x->dtype);
    dnnl_pooling_v2_desc_t pdsc;
    if (r == dnnl_success)
        r = dnnl_pooling_v2_forward_desc_init(&pdsc, dnnl_forward_inference, alg, &src, &dst,
                                              g.strides, g.kernel, g.dilation, g.pad_l, g.pad_r);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &pdsc, NULL, b->c->engine, NULL);
    /* graphlab's kernel wherever its layout is (and the CPU runs AVX2) */
    bool native = !int8 && !global && nsp == 2 && r == dnnl_success && b->c->has_avx2;
    bool wide = native && !b->c->avx2;
    if (r == dnnl_success && native)
        r = np_dst_like_src(b, pd, &pdsc, xd, out_dims, wide);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no pooling for this (%s)", dnnl_status2str(r));
    if (dn_pd_is_ref(*pd) && int8)
        return dn_refuse_ref(b, pd, "int8 max pooling in this layout");
    /* max pooling skips a NaN (dn_special.c); an int8 tensor holds none */
    gl_status st = dn_guard_specials(b, !int8 && dn_alg_drops_specials(alg, 0.0f, 0.0f));
    if (st != GL_OK)
        return st;
    if (nhwc) {
        int64_t y_nhwc[4] = {out_dims[0], out_dims[2], out_dims[3], out_dims[1]};
        dn_bind_input_view(b, DNNL_ARG_SRC, 0, dn_pd_md(*pd, dnnl_query_src_md, 0));
        dn_bind_output_nhwc(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), y_nhwc);
    } else {
        dn_bind_input(b, DNNL_ARG_SRC, 0, dn_pd_md(*pd, dnnl_query_src_md, 0));
        dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), x->rank,
                       out_dims);
    }
    if (native)
        np_take(b, *pd, xd, &g, !is_max, alg == dnnl_pooling_avg_include_padding, wide);
    else if (global && !is_max && !int8 && nsp == 2 && b->c->has_avx2)
        dn_gap_take(b, *pd, xd);
    return GL_OK;
}

static bool pool_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 3, 2 + POOL_MAX_SP)) {
        snprintf(why, len, "not a float32 1-D, 2-D or 3-D pooling");
        return false;
    }
    return true;
}

static bool nhwc_pool_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 4, 4)) {
        snprintf(why, len, "not a float32 2-D pooling");
        return false;
    }
    return true;
}

/* Max pooling: float32, uint8 or int8. */
static bool max_pool_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    bool nhwc = strncmp(n->op_type, "Nhwc", 4) == 0;
    if (!dn_input_fits_int8(n, 0, nhwc ? 4 : 3, nhwc ? 4 : 2 + POOL_MAX_SP)) {
        snprintf(why, len, "not a float32, uint8 or int8 %s pooling",
                 nhwc ? "2-D" : "1-D, 2-D or 3-D");
        return false;
    }
    return true;
}

#define POOL(op) {"", op, 1, pool_claim, pool_build, NULL}
#define MAX_POOL(op) {"", op, 1, max_pool_claim, pool_build, NULL}
#define NHWC_POOL(op) {"graphlab", "Nhwc" op, 1, nhwc_pool_claim, pool_build, NULL}
#define NHWC_MAX_POOL(op) {"graphlab", "Nhwc" op, 1, max_pool_claim, pool_build, NULL}
static const dn_op pool_ops[] = {
    MAX_POOL("MaxPool"),           POOL("AveragePool"),
    MAX_POOL("GlobalMaxPool"),     POOL("GlobalAveragePool"),
    NHWC_MAX_POOL("MaxPool"),      NHWC_POOL("AveragePool"),
    NHWC_MAX_POOL("GlobalMaxPool"), NHWC_POOL("GlobalAveragePool"),
};
#undef POOL
#undef MAX_POOL
#undef NHWC_POOL
#undef NHWC_MAX_POOL
const dn_op_table dn_pool_ops = {pool_ops, GL_ARRAY_LEN(pool_ops)};

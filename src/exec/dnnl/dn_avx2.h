/* dn_avx2.h — the AVX2 pieces graphlab's own kernels share: tanh and the logistic on 8
 * floats (dn_eltwise.c's tanh, dn_rnn_avx2.c's gates), the activations of a kernel's
 * epilogue (dn_act, dn.h: dn_matmul.c's Gemm kernels apply them to a tile of output still
 * in the cache) and the product of 8 rows by one panel of 8 packed columns (dn_matmul.c's
 * few-rows Gemm, dn_rnn_avx2.c's steps).
 * Static inline: each caller compiles them into its own target("avx2,fma") functions.
 */
#ifndef GL_DN_AVX2_H
#define GL_DN_AVX2_H

#include "exec/dnnl/dn.h"

#ifdef __x86_64__
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

/* The panel width of packed weights: 8 columns, one __m256. */
#define DN_AVX2_LANES 8

/* tanh(x) as p(x)/q(x) on [-9, 9], p odd of degree 13 and q even of degree 6: the
 * rational minimax approximation whose coefficients Eigen and ONNX Runtime's MLAS
 * publish; beyond 9, tanh is +-1 in float. min/max take the bound as their first
 * operand so that a NaN (returned as the second operand) goes through as a NaN. */
__attribute__((target("avx2,fma"))) static inline __m256 dn_tanh8(__m256 x)
{
    const __m256 lim = _mm256_set1_ps(9.0f), one = _mm256_set1_ps(1.0f);
    x = _mm256_max_ps(_mm256_set1_ps(-9.0f), _mm256_min_ps(lim, x));
    __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(-2.76076847742355e-16f);
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.00018790482477e-13f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-8.60467152213735e-11f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(5.12229709037114e-08f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(1.48572235717979e-05f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(6.37261928875436e-04f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(4.89352455891786e-03f));
    p = _mm256_mul_ps(p, x);
    __m256 q = _mm256_set1_ps(1.19825839466702e-06f);
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(1.18534705686654e-04f));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(2.26843463243900e-03f));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(4.89352518554385e-03f));
    __m256 t = _mm256_div_ps(p, q);
    return _mm256_max_ps(_mm256_set1_ps(-1.0f), _mm256_min_ps(one, t));
}

/* The logistic 1 / (1 + e^-x) = (1 + tanh(x/2)) / 2: one kernel's accuracy for both of a
 * cell's activations (a NaN stays a NaN). */
__attribute__((target("avx2,fma"))) static inline __m256 dn_sigmoid8(__m256 x)
{
    const __m256 half = _mm256_set1_ps(0.5f);
    return _mm256_fmadd_ps(half, dn_tanh8(_mm256_mul_ps(half, x)), half);
}

/* e^x for x in [ln FLT_MIN, 88] (no range handling: the caller's): 2^n e^r with n =
 * round(x / ln 2) and |r| <= ln 2 / 2 (ln 2 in two parts, so r is exact), e^r = 1 + r +
 * c2 r^2 + ... + c5 r^5, the c fitted by least squares on Chebyshev nodes of that
 * interval (relative error 1.2e-7). n comes from adding 1.5 * 2^23 + 127 to x / ln 2: the
 * sum's rounding is n's, and its low bits are n + 127, 2^n's exponent field once shifted
 * (11 operations for 8 floats, no conversion). */
__attribute__((target("avx2,fma"))) static inline __m256 dn_exp8_core(__m256 x)
{
    const __m256 shifter = _mm256_set1_ps(12582912.0f + 127.0f);
    __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), shifter);
    __m256 n = _mm256_sub_ps(t, shifter);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187045e-06f), r);
    __m256 p = _mm256_set1_ps(0.00833383761f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.0418985784f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.166668862f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.499991417f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_castps_si256(t), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* e^x for every x, as expf: clamped to [ln FLT_MIN, 88] for dn_exp8_core (2^n a normal
 * float), then 0 below ln FLT_MIN and +inf above ln FLT_MAX; a NaN stays a NaN (the
 * clamp keeps it: min/max return their second operand, x, for it). Between 88 and ln
 * FLT_MAX (88.72) it gives e^88: no caller reads e^x so large but as +-inf's stand-in. */
__attribute__((target("avx2,fma"))) static inline __m256 dn_exp8(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(-87.33654f);
    __m256 y = dn_exp8_core(_mm256_max_ps(lo, _mm256_min_ps(_mm256_set1_ps(88.0f), x)));
    y = _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
    return _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()),
                            _mm256_cmp_ps(x, _mm256_set1_ps(88.72284f), _CMP_GT_OQ));
}

/* 0.5 x (1 + erf(x / sqrt 2)), ONNX's Gelu. With z = |x| / sqrt 2, 1 + erf(x / sqrt 2) is
 * q = erfc(z) for x < 0 and 2 - q for x >= 0, and erfc(z) = t P(t) e^(-z^2) with t =
 * 1 / (1 + p z), P of degree 4: Abramowitz and Stegun's 7.1.26 (absolute error below
 * 1.5e-7; the form oneDNN's gelu_erf takes too). 28 operations for 8 floats, the
 * exponential's range handling folded into one mask: q is 0 from |x| = 12 (where it is
 * below 1e-31: the result differs from the reference by less than that), which also
 * gives the reference's values at the ends: +inf at +inf, NaN (-inf * 0) at -inf, NaN
 * for NaN. Error against double over [-10, 10]: bench/README session 39. */
__attribute__((target("avx2,fma"))) static inline __m256 dn_gelu_erf8(__m256 x)
{
    __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f),
                             _mm256_fmadd_ps(ax, _mm256_set1_ps(0.3275911f * 0.70710678f),
                                             _mm256_set1_ps(1.0f)));
    __m256 p = _mm256_set1_ps(1.061405429f);
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
    __m256 hx = _mm256_mul_ps(_mm256_set1_ps(0.5f), x);
    __m256 e = dn_exp8_core(_mm256_fnmadd_ps(hx, x, _mm256_setzero_ps())); /* e^(-z^2) */
    __m256 q = _mm256_mul_ps(_mm256_mul_ps(p, t), e);
    q = _mm256_and_ps(q, _mm256_cmp_ps(ax, _mm256_set1_ps(12.0f), _CMP_LT_OQ));
    __m256 f = _mm256_blendv_ps(q, _mm256_sub_ps(_mm256_set1_ps(2.0f), q),
                                _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
    return _mm256_mul_ps(hx, f);
}

/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), ONNX's Gelu approximate="tanh". */
__attribute__((target("avx2,fma"))) static inline __m256 dn_gelu_tanh8(__m256 x)
{
    const __m256 c = _mm256_set1_ps(0.7978845608028654f);            /* sqrt(2/pi) */
    const __m256 c3 = _mm256_set1_ps(0.7978845608028654f * 0.044715f);
    __m256 u = _mm256_mul_ps(x, _mm256_fmadd_ps(c3, _mm256_mul_ps(x, x), c));
    __m256 half_x = _mm256_mul_ps(_mm256_set1_ps(0.5f), x);
    return _mm256_fmadd_ps(half_x, dn_tanh8(u), half_x);
}

/* x / (1 + e^-x), the reference's formula: the small values of negative x keep their
 * relative accuracy, and -inf gives -inf / inf = NaN as the reference does. */
__attribute__((target("avx2,fma"))) static inline __m256 dn_silu8(__m256 x)
{
    __m256 d = _mm256_add_ps(_mm256_set1_ps(1.0f),
                             dn_exp8(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f))));
    return _mm256_div_ps(x, d);
}

/* x * max(0, min(1, x / 6 + 1/2)), ONNX's HardSwish (NaN and -inf give NaN through the
 * product, as the reference). */
__attribute__((target("avx2,fma"))) static inline __m256 dn_hardswish8(__m256 x)
{
    __m256 g = _mm256_fmadd_ps(x, _mm256_set1_ps(1.0f / 6), _mm256_set1_ps(0.5f));
    g = _mm256_max_ps(_mm256_setzero_ps(), _mm256_min_ps(_mm256_set1_ps(1.0f), g));
    return _mm256_mul_ps(x, g);
}

/* Activation `kind` of 8 floats (Clip's bounds lo, hi). Clip's bounds are the first
 * operands of min/max, so that a NaN (their second operand's answer) stays a NaN, as
 * ONNX's Clip keeps it. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256
dn_act8(dn_act_kind kind, __m256 lo, __m256 hi, __m256 v)
{
    switch (kind) {
    case DN_ACT_NONE:
        return v;
    case DN_ACT_RELU:
        return _mm256_max_ps(v, _mm256_setzero_ps());
    case DN_ACT_GELU_ERF:
        return dn_gelu_erf8(v);
    case DN_ACT_GELU_TANH:
        return dn_gelu_tanh8(v);
    case DN_ACT_SIGMOID:
        return dn_sigmoid8(v);
    case DN_ACT_SILU:
        return dn_silu8(v);
    case DN_ACT_CLIP:
        return _mm256_min_ps(hi, _mm256_max_ps(lo, v));
    case DN_ACT_HARDSWISH:
        return dn_hardswish8(v);
    }
    return v;
}

/* dn_avx2_act_tile for one activation: `kind` a constant where inlined, so the loop holds
 * that activation's code alone. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
dn_avx2_act_rows(dn_act_kind kind, const dn_act *a, float *y, int64_t ldy, int64_t rows,
                 int64_t cols)
{
    const __m256 lo = _mm256_set1_ps(a->lo), hi = _mm256_set1_ps(a->hi);
    for (int64_t r = 0; r < rows; r++) {
        float *row = y + r * ldy;
        int64_t j = 0;
        /* two independent vectors a step: a kernel's tile row is a pair of panels */
        for (; j + 16 <= cols; j += 16) {
            __m256 v0 = dn_act8(kind, lo, hi, _mm256_loadu_ps(row + j));
            __m256 v1 = dn_act8(kind, lo, hi, _mm256_loadu_ps(row + j + 8));
            _mm256_storeu_ps(row + j, v0);
            _mm256_storeu_ps(row + j + 8, v1);
        }
        for (; j + 8 <= cols; j += 8)
            _mm256_storeu_ps(row + j, dn_act8(kind, lo, hi, _mm256_loadu_ps(row + j)));
        if (j == cols)
            continue;
        float tail[8] = {0};
        memcpy(tail, row + j, (size_t)(cols - j) * sizeof(float));
        _mm256_storeu_ps(tail, dn_act8(kind, lo, hi, _mm256_loadu_ps(tail)));
        memcpy(row + j, tail, (size_t)(cols - j) * sizeof(float));
    }
}

/* The epilogue: y[r * ldy + j] = a(y[r * ldy + j]) for r < rows, j < cols, over a tile a
 * kernel has just stored (it is in L1: one more load and store per 8 floats, where the
 * activation's own arithmetic is 10-30 operations). Out of line: one copy per caller's
 * file, not one per unrolled tile shape; the activation chosen once per tile. */
__attribute__((target("avx2,fma"), noinline, unused)) static void
dn_avx2_act_tile(const dn_act *a, float *y, int64_t ldy, int64_t rows, int64_t cols)
{
#define DN_ACT_ROWS_CASE(K)                                                                 \
    case K:                                                                                 \
        dn_avx2_act_rows(K, a, y, ldy, rows, cols);                                         \
        break;
    switch (a->kind) {
    case DN_ACT_NONE:
        break;
        DN_ACT_ROWS_CASE(DN_ACT_RELU)
        DN_ACT_ROWS_CASE(DN_ACT_GELU_ERF)
        DN_ACT_ROWS_CASE(DN_ACT_GELU_TANH)
        DN_ACT_ROWS_CASE(DN_ACT_SIGMOID)
        DN_ACT_ROWS_CASE(DN_ACT_SILU)
        DN_ACT_ROWS_CASE(DN_ACT_CLIP)
        DN_ACT_ROWS_CASE(DN_ACT_HARDSWISH)
    }
#undef DN_ACT_ROWS_CASE
}

/* The first m (at most 8) rows of A (lda floats apart, k columns) as [k][8], rows past m
 * zero: what dn_avx2_rows8 reads. */
static inline void dn_avx2_rows_transposed(float *at, const float *a, int64_t lda, int64_t m,
                                           int64_t k)
{
    for (int64_t i = 0; i < k; i++)
        for (int64_t r = 0; r < 8; r++)
            at[i * 8 + r] = r < m ? a[r * lda + i] : 0.0f;
}

/* acc[r] += sum_k at[k * 8 + r] * w[k * 8 .. k * 8 + 8) for the 8 rows r: A transposed into
 * [K][8] (rows past the real ones 0), one panel of 8 packed columns [K][8]. Eight named
 * accumulators: an array indexed in a loop may stay in memory at -O2. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
dn_avx2_rows8(const float *at, const float *w, int64_t k, __m256 *acc)
{
    __m256 c0 = acc[0], c1 = acc[1], c2 = acc[2], c3 = acc[3], c4 = acc[4], c5 = acc[5],
           c6 = acc[6], c7 = acc[7];
    for (int64_t i = 0; i < k; i++) {
        __m256 wk = _mm256_loadu_ps(w + i * DN_AVX2_LANES);
        const float *a = at + i * 8;
        c0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a), wk, c0);
        c1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 1), wk, c1);
        c2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 2), wk, c2);
        c3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 3), wk, c3);
        c4 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 4), wk, c4);
        c5 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 5), wk, c5);
        c6 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 6), wk, c6);
        c7 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 7), wk, c7);
    }
    acc[0] = c0, acc[1] = c1, acc[2] = c2, acc[3] = c3;
    acc[4] = c4, acc[5] = c5, acc[6] = c6, acc[7] = c7;
}
#endif

#endif

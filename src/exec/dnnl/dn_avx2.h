/* dn_avx2.h — the AVX2 pieces graphlab's own kernels share: tanh and the logistic on 8
 * floats (dn_eltwise.c's tanh, dn_rnn_avx2.c's gates) and the product of 8 rows by one
 * panel of 8 packed columns (dn_matmul.c's few-rows Gemm, dn_rnn_avx2.c's steps).
 * Static inline: each caller compiles them into its own target("avx2,fma") functions.
 */
#ifndef GL_DN_AVX2_H
#define GL_DN_AVX2_H

#ifdef __x86_64__
#include <immintrin.h>
#include <stdint.h>

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

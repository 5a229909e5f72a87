/* dn_wino.c — graphlab's Winograd F(2x2, 3x3), F(4x4, 3x3) and F(6x6, 3x3) convolutions
 * on AVX2, nChw8c or nhwc.
 *
 * On AVX-512, dn_conv.c runs 3x3 stride-1 convolutions with oneDNN's Winograd kernels
 * (dn_winograd_fits); oneDNN 2.6 has none for AVX2, where its direct jit:avx2 kernel runs
 * them (in nChw8c, and in nhwc for graphlab's NhwcConv). That kernel is already at the
 * machine's FMA peak (resnet18's 256x14x14 3x3 at 2.45-2.6 ms on one thread, 89-94
 * GFLOP/s; a hand-written register-tiled direct kernel measured the same), and so is ONNX
 * Runtime's MLAS NCHWc kernel: no direct kernel beats it. Winograd F(m x m, 3x3) does
 * fewer multiplications: each (m+2)x(m+2) input tile (B^T d B) times each transformed
 * filter (G g G^T, made once when the plan is built) is (m+2)^2 independent matrix
 * products [tiles x IC] x [IC x OC], and each product tile gives m x m outputs
 * (A^T m A). F(2x2) does 2.25 times fewer multiplications than the direct kernel,
 * F(4x4) 4 times, F(6x6) 5.06 times, each with more rounding (below) and transformed
 * filters 16/9, 36/9, 64/9 the size of the weights.
 *
 * Which (wino_kind_for), measured one thread (node minimums, ms, oneDNN's direct kernel /
 * F(2x2) / F(4x4), bench/conv_shapes.sh's shapes, loaded machine, 2026-12-07): 512ch 7x7
 * 2.1 / 2.07 / 2.35 (F(4x4) has 4 tiles, each transformed filter read for 4 rows only);
 * 256ch 14x14 2.5 / 1.77 / 1.45; 512ch 14x14 6.0 / 5.9 / 6.0 (its 37.7 MB of F(4x4)
 * filters do not stay in the L3 cache: F(2x2)); 128ch 28x28 2.49 / 1.52 / 0.95-1.30;
 * 512ch 28x28 26 / 31 / 17; 64ch 56x56 2.44 / 1.98 / 1.21; 256ch 56x56 49 / - / 17-21;
 * 64->128ch 112x112 21.7 / - / 9.7-9.9; at a batch of 8, 512ch 7x7 15.4 / 14.6 / 10.0.
 * Hence F(4x4) where the batch has 16 or more of its tiles (WINO_F4_TILES) unless its
 * filters are big with few tiles, F(6x6) rather where its filters are small and its
 * tiles pad the image little (WINO_F6_PRODUCTS: 28x28, 56x56, 112x112; not 7x7 or
 * 14x14), F(2x2) on smaller batches of small images, and no
 * size above which oneDNN's kernel is kept: large images go through in spans of tiles
 * (WINO_SPAN) whose transforms stay in cache.
 *
 * The products run on a register tile of 3 tiles x 4 blocks of 8 output channels (12
 * accumulators, the inputs broadcast, 4 weight vectors per input channel). Threads: the
 * plan's count, an OpenMP team as oneDNN's primitives have (wino_run). Few channels
 * (WINO_TILES_U_BYTES): each thread takes whole chunks of tiles through the three steps.
 * Many: three phases per span of tiles split among them (input transform by channel
 * block x tile, products by position x group of 32 output channels, output transform by
 * channel block x tile) with a barrier between phases, so that each thread reads only
 * its share of the transformed filters (16.8 MB for 512 channels in and out, F(2x2)).
 *
 * Post-ops: the bias, and a chain of sum (scale 1: the destination holds the Add's
 * operand, written by the fused unit before the run) and relu (alpha 0) post-ops, applied
 * in order at the store; any other chain keeps oneDNN's kernel. The transforms mix a
 * tile's inputs (an infinity becomes NaN: Inf - Inf), so, as for oneDNN's Winograd, a run
 * whose inputs hold a NaN or an infinity takes the reference kernel (dn_special.c).
 * Results differ from the reference by rounding, measured on single convolutions of
 * resnet18's and vgg11's shapes (He-scaled weights, unit inputs, outputs of about 1):
 * max_abs 1.5e-5 to 4.1e-5 for F(4x4) (nmse 1.2e-12 to 8.4e-12), where oneDNN's direct
 * kernel is at 6.7e-6 to 1.8e-5 (nmse 2e-13 to 1.6e-12) and F(2x2) at 512ch 7x7 4.5e-6;
 * against the data sets' expected outputs resnet18, resnet50 and vgg11 measure as with
 * F(2x2) alone (max_abs 2.9e-6, 1.2e-4, 9.7e-7 against 2.9e-6, 1.2e-4, 8.5e-7). F(6x6)
 * rounds 3-5 times more than F(4x4) (single convolutions: 5.5e-5 at 64ch 56x56 against
 * 1.5e-5); where it runs the models' outputs against their data sets measure resnet18
 * 3.8e-6 (F(4x4) 3.6e-6), resnet50 2.4e-4 (2.1e-4), densenet121 3.6e-6 (2.9e-6), vgg11
 * 8.8e-7 (9.5e-7), all within the suite's tolerance.
 */
#include "exec/dnnl/dn_opkit.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>
#ifdef __x86_64__
#include <immintrin.h>
#endif

#define WINO_MAX_POSTS 4
#define WINO_MAX_THREADS 64
/* Transformed filters of at most this many bytes (F(2x2): 128 channels in and out, 1 MB)
 * are read by every thread, each taking chunks of about WINO_CHUNK 4x4 tiles' bytes
 * (WINO_CHUNK * 16 / 36 6x6 tiles) through all three steps in its own scratch (which
 * stays in its L2 cache), with no barrier; larger ones are split among the threads by
 * output channels. User CPU of 200 runs, one thread, F(2x2), 128 channels at 28x28:
 * 0.76-0.84 s in chunks of 32, 0.84-0.88 of 64, 0.81-0.97 whole images (oneDNN's direct
 * kernel 1.30-1.40). */
#define WINO_TILES_U_BYTES (1 << 20)
#define WINO_CHUNK 32
/* Split by output channels, the phases run on spans of about WINO_SPAN tiles of the
 * batch (a span may end in the next image), whose transforms stay in cache, and read all
 * the transformed filters once a span: 64->128ch at 112x112, F(4x4), one thread, 9.7-9.9
 * ms in spans of 48, 12.5-13.4 of 24, 10.4-13.7 of 96, 16.8-27 whole images. Filters of
 * more than WINO_BIG_U_BYTES do not stay in the L3 cache (32 MB, shared): those take
 * longer spans (512ch at 28x28, F(4x4): 17-23 ms in one span of its 49 tiles, 26-33 in
 * spans of 25). */
#define WINO_SPAN 48
#define WINO_BIG_U_BYTES (16 << 20)
/* With filters over WINO_BIG_U_BYTES, spans of as many tiles (of the whole batch) as have
 * their transforms in this many bytes (in the L3 cache): fewer passes over the filters. */
#define WINO_BIG_SPAN_BYTES (8 << 20)
/* F(4x4) from this many of its tiles in the batch (7x7: 4, F(2x2) faster; 14x14: 16,
 * F(4x4) faster), and with filters over WINO_BIG_U_BYTES from WINO_F4_BIG_TILES (512ch
 * at 14x14, 16 tiles: a tie; at 7x7 and a batch of 8, 32: F(4x4) 10.0-10.8 ms, F(2x2)
 * 14.6-16.9; at 28x28, 49: F(4x4) 17 ms, F(2x2) 31). */
#define WINO_F4_TILES 16
#define WINO_F4_BIG_TILES 32
/* F(6x6) rather than F(4x4) where its transformed filters are at most WINO_F6_U_BYTES
 * (64->128ch at 112x112, 2 MB: 7.3-8.1 ms against 8.7-9.0; 128ch at 28x28, 4 MB: 0.84
 * against 0.88; 128->256ch at 56x56, 8 MB: 6.7-7.9 against 7.0-7.1; 256ch at 56x56, 16
 * MB: 14.1-31 against 13.3-14.0; 512ch at 28x28, 64 MB: 14.0-23 against 13.7-26) and
 * its products, padded tiles counted, are at most WINO_F6_PRODUCTS percent of F(4x4)'s
 * (56x56 and 28x28: 91%, 112x112: 82%; 14x14: 100%, 256ch at 14x14 1.14-1.33 against
 * 1.06-1.10; 7x7: 178%). One thread, node minimums. */
#define WINO_F6_U_BYTES (4 << 20)
#define WINO_F6_PRODUCTS 91

enum { WINO_AT_MAX = 8 }; /* the largest input tile's side: F(6x6, 3x3) */

/* A tile size: F(mt x mt, 3x3) on input tiles of at x at (at = mt + 2) by the filter
 * transform g (at x 3). */
typedef struct wino_kind {
    int mt, at;
    const double (*g)[3];
    const char *name;
} wino_kind;

typedef struct wino {
    int64_t n, ic, oc, h, w, oh, ow, pt, pl; /* pt, pl: top and left padding */
    bool nhwc;                               /* else nChw8c */
    const wino_kind *kind;                   /* F(2x2, 3x3) or F(4x4, 3x3) */
    int64_t np;                              /* positions per tile: kind->at squared */
    int64_t tw, tiles;                       /* tiles per row, per image */
    int64_t nocg;                            /* groups of 32 output channels */
    float *u;     /* [np][nocg][ic][32]: the transformed filters */
    float *bias;  /* [nocg * 32], zeros past oc */
    /* scratch: [np][tiles][ic] and [np][tiles][oc] for the whole image; by_tiles: one
     * [np][chunk][ic] and [np][chunk][oc] per thread */
    float *v, *m;
    bool by_tiles;
    int64_t chunk;
    int posts[WINO_MAX_POSTS], n_posts;
    int threads; /* at most this many (the scratch's), an OpenMP team */
} wino;

static void wino_free(void *extra)
{
    wino *q = extra;
    free(q->u);
    free(q->bias);
    free(q->v);
    free(q->m);
    free(q);
}

/* The filter transforms G (at x 3): F(2x2, 3x3) at the points 0, 1, -1 (and infinity);
 * F(4x4, 3x3) at 0, 1, -1, 1/2, -2, which round 2.3-2.7 times less than the usual 0, 1,
 * -1, 2, -2 (max_abs over 4x4 outputs of 256 channels, He-scaled filters, unit inputs,
 * float32 against float64: 2.0e-5 against 5.3e-5; 0, +-1, +-1/2: 4.6e-5), as Barabasz et
 * al. found ("Error analysis and improving the accuracy of Winograd convolution", 2020).
 * Made in double, then rounded. */
static const double wino_g2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
static const double wino_g4[6][3] = {
    {1, 0, 0},
    {1.0 / 3, 1.0 / 3, 1.0 / 3},
    {-1.0 / 3, 1.0 / 3, -1.0 / 3},
    {-16.0 / 15, -8.0 / 15, -4.0 / 15},
    {1.0 / 15, -2.0 / 15, 4.0 / 15},
    {0, 0, 1},
};
/* F(6x6, 3x3) at 0, +-A6, +-B6, +-C6 (and infinity): symmetric pairs, so that each
 * 1-D transform works on the sum and the difference of a pair's two rows (about 27
 * vector operations where the dense 8x8 matrix has 64). Of the symmetric sets, 0, +-1,
 * +-2, +-1/2 rounds least (float32 simulation, 6x6 outputs of 256 channels, He-scaled
 * filters, unit inputs, against float64, max_abs / mean of the tiles' max_abs): 8.0e-5 /
 * 2.9e-5; +-1, +-2.5, +-1/2 9.5e-5; +-1, +-1/2, +-3/2 9.7e-5; +-1, +-3/2, +-2/3 1.1e-4;
 * +-1, +-1/2, +-3 1.9e-4; +-1, +-2, +-1/4 3.7e-4; +-1, +-2, +-3 8.1e-3; +-1, +-1/2, +-1/4
 * 1.1e-2. Row j of B^T holds the coefficients of the product of (x - p) over the finite
 * points p other than p_j (the infinity's row: over all of them), G's row j is p_j^k
 * divided by that product at p_j, A^T's column j is p_j^i. */
#define A6 1.0
#define B6 2.0
#define C6 0.5
/* the product at p of (p - q) over the other finite points, for p one of a pair */
#define WINO_N8(p, q, r) (2 * (p) * (p) * ((p) * (p) - (q) * (q)) * ((p) * (p) - (r) * (r)))
#define WINO_G8_PAIR(p, q, r)                                                                 \
    {1 / WINO_N8(p, q, r), (p) / WINO_N8(p, q, r), (p) * (p) / WINO_N8(p, q, r)},             \
        {1 / WINO_N8(p, q, r), -(p) / WINO_N8(p, q, r), (p) * (p) / WINO_N8(p, q, r)}
static const double wino_g8[8][3] = {
    {-1 / (A6 * A6 * B6 * B6 * C6 * C6), 0, 0},
    WINO_G8_PAIR(A6, B6, C6),
    WINO_G8_PAIR(B6, A6, C6),
    WINO_G8_PAIR(C6, A6, B6),
    {0, 0, 1},
};
static const wino_kind wino_f2 = {2, 4, wino_g2, "winograd_2x3"};
static const wino_kind wino_f4 = {4, 6, wino_g4, "winograd_4x3"};
static const wino_kind wino_f6 = {6, 8, wino_g8, "winograd_6x3"};

/* u[p][og][i][o % 32] = (G g G^T)[p] for each filter g = w[o][i] (3x3), in double. */
static void wino_pack(wino *q, const float *w)
{
    int at = q->kind->at;
    const double(*gm)[3] = q->kind->g;
    for (int64_t o = 0; o < q->oc; o++)
        for (int64_t i = 0; i < q->ic; i++) {
            const float *g = w + (o * q->ic + i) * 9;
            double t[WINO_AT_MAX][3];
            for (int r = 0; r < at; r++)
                for (int c = 0; c < 3; c++)
                    t[r][c] = gm[r][0] * g[c] + gm[r][1] * g[3 + c] + gm[r][2] * g[6 + c];
            for (int r = 0; r < at; r++)
                for (int c = 0; c < at; c++) {
                    double u = gm[c][0] * t[r][0] + gm[c][1] * t[r][1] + gm[c][2] * t[r][2];
                    q->u[(((r * at + c) * q->nocg + o / 32) * q->ic + i) * 32 + o % 32] =
                        (float)u;
                }
        }
}

#ifdef __x86_64__
/* Where channel block cb of pixel px (y * w + x) of an image of `ch` channels and `plane`
 * pixels starts: nChw8c or nhwc. */
static inline int64_t wino_at(const wino *q, int64_t cb, int64_t px, int64_t ch, int64_t plane)
{
    return q->nhwc ? px * ch + cb * 8 : (cb * plane + px) * 8;
}

/* Tiles [t0, t0 + nt) of one image, transformed into v, multiplied into m. */
typedef struct wino_span {
    float *v, *m;
    int64_t t0, nt;
} wino_span;

#define WINO_AVX2 __attribute__((target("avx2,fma"))) static inline
#define WINO_INLINE __attribute__((target("avx2,fma"), always_inline)) static inline
/* The transforms' loops, of constant counts up to 8 (64 for a tile's positions) once
 * inlined: fully unrolled so that every vector stays a register or a fixed stack slot
 * (F(6x6)'s 8x8 tiles pass GCC's own limit: its output transform took 29% of a 64-channel
 * 56x56 convolution looping, the products 37%). */
#define WINO_UNROLL _Pragma("GCC unroll 64")

/* o = B^T d, F(2x2, 3x3): 4 values. */
WINO_INLINE void wino_bt4(const __m256 *d, __m256 *o)
{
    o[0] = _mm256_sub_ps(d[0], d[2]);
    o[1] = _mm256_add_ps(d[1], d[2]);
    o[2] = _mm256_sub_ps(d[2], d[1]);
    o[3] = _mm256_sub_ps(d[1], d[3]);
}

/* o = B^T d, F(4x4, 3x3): 6 values (rows 1 -3/2 -2 3/2 1 0, 0 -1 1/2 5/2 1 0,
 * 0 1 -5/2 1/2 1 0, 0 -2 -1 2 1 0, 0 1/2 -1 -1/2 1 0, 0 1 -3/2 -2 3/2 1). */
WINO_INLINE void wino_bt6(const __m256 *d, __m256 *o)
{
    __m256 half = _mm256_set1_ps(0.5f), two = _mm256_set1_ps(2), k15 = _mm256_set1_ps(1.5f),
           k25 = _mm256_set1_ps(2.5f);
    __m256 c = _mm256_sub_ps(d[4], d[2]), e = _mm256_sub_ps(d[3], d[1]);
    o[0] = _mm256_fmadd_ps(k15, e, _mm256_fnmadd_ps(two, d[2], _mm256_add_ps(d[0], d[4])));
    o[1] = _mm256_fmadd_ps(k25, d[3], _mm256_fmadd_ps(half, d[2], _mm256_sub_ps(d[4], d[1])));
    o[2] = _mm256_fmadd_ps(half, d[3], _mm256_fnmadd_ps(k25, d[2], _mm256_add_ps(d[4], d[1])));
    o[3] = _mm256_fmadd_ps(two, e, c);
    o[4] = _mm256_fnmadd_ps(half, e, c);
    o[5] = _mm256_fmadd_ps(k15, c, _mm256_fnmadd_ps(two, d[3], _mm256_add_ps(d[1], d[5])));
}

/* o = A^T m, F(2x2, 3x3): 2 values of 4. */
WINO_INLINE void wino_at4(const __m256 *m, __m256 *o)
{
    o[0] = _mm256_add_ps(_mm256_add_ps(m[0], m[1]), m[2]);
    o[1] = _mm256_sub_ps(_mm256_sub_ps(m[1], m[2]), m[3]);
}

/* o = A^T m, F(4x4, 3x3): 4 values of 6 (rows 1 1 1 1 1 0, 0 1 -1 1/2 -2 0,
 * 0 1 1 1/4 4 0, 0 1 -1 1/8 -8 1). */
WINO_INLINE void wino_at6(const __m256 *m, __m256 *o)
{
    __m256 a1 = _mm256_add_ps(m[1], m[2]), b1 = _mm256_sub_ps(m[1], m[2]);
    o[0] = _mm256_add_ps(_mm256_add_ps(m[0], a1), _mm256_add_ps(m[3], m[4]));
    o[1] = _mm256_fmadd_ps(_mm256_set1_ps(0.5f), m[3],
                           _mm256_fnmadd_ps(_mm256_set1_ps(2), m[4], b1));
    o[2] = _mm256_fmadd_ps(_mm256_set1_ps(0.25f), m[3],
                           _mm256_fmadd_ps(_mm256_set1_ps(4), m[4], a1));
    o[3] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(0.125f), m[3],
                                         _mm256_fnmadd_ps(_mm256_set1_ps(8), m[4], b1)),
                         m[5]);
}

/* o = B^T d, F(6x6, 3x3): 8 values. Rows: 0 the point 0, 7 the infinity, and for each
 * pair +-p (q, r the other two) E + O and E - O, with E = q^2 r^2 d2 - (q^2 + r^2) d4 + d6
 * and O = p (q^2 r^2 d1 - (q^2 + r^2) d3 + d5). */
WINO_INLINE void wino_bt8_pair(const __m256 *d, __m256 *o, const float p, const float q2r2,
                               const float q2_r2)
{
    __m256 e = _mm256_fmadd_ps(_mm256_set1_ps(q2r2), d[2],
                               _mm256_fnmadd_ps(_mm256_set1_ps(q2_r2), d[4], d[6]));
    __m256 f = _mm256_fmadd_ps(_mm256_set1_ps(p * q2r2), d[1],
                               _mm256_fnmadd_ps(_mm256_set1_ps(p * q2_r2), d[3],
                                                _mm256_mul_ps(_mm256_set1_ps(p), d[5])));
    o[0] = _mm256_add_ps(e, f);
    o[1] = _mm256_sub_ps(e, f);
}

WINO_INLINE void wino_bt8(const __m256 *d, __m256 *o)
{
    const float a2 = (float)(A6 * A6), b2 = (float)(B6 * B6), c2 = (float)(C6 * C6);
    const float s1 = a2 + b2 + c2, s2 = a2 * b2 + a2 * c2 + b2 * c2, s3 = a2 * b2 * c2;
    __m256 k1 = _mm256_set1_ps(s1), k2 = _mm256_set1_ps(s2), k3 = _mm256_set1_ps(s3);
    o[0] = _mm256_fmadd_ps(k2, d[2], _mm256_fnmadd_ps(k3, d[0], _mm256_fnmadd_ps(k1, d[4], d[6])));
    wino_bt8_pair(d, o + 1, (float)A6, b2 * c2, b2 + c2);
    wino_bt8_pair(d, o + 3, (float)B6, a2 * c2, a2 + c2);
    wino_bt8_pair(d, o + 5, (float)C6, a2 * b2, a2 + b2);
    o[7] = _mm256_fmadd_ps(k2, d[3], _mm256_fnmadd_ps(k3, d[1], _mm256_fnmadd_ps(k1, d[5], d[7])));
}

/* p^i, folded where p and i are constants */
WINO_INLINE double wino_pow(double p, int i)
{
    double r = 1;
    for (int e = 0; e < i; e++)
        r *= p;
    return r;
}

/* o = A^T m, F(6x6, 3x3): 6 values of 8, o_i = [i = 0] m0 + the sum over the pairs of
 * p^i (m+ + m-) for even i, p^i (m+ - m-) for odd, + [i = 5] m7. */
WINO_INLINE void wino_at8(const __m256 *m, __m256 *o)
{
#define WINO_P(p, i) _mm256_set1_ps((float)wino_pow(p, i))
#define WINO_AT8_ROW(i, x)                                                                    \
    _mm256_fmadd_ps(WINO_P(C6, i), x[2],                                                        \
                    _mm256_fmadd_ps(WINO_P(B6, i), x[1], _mm256_mul_ps(WINO_P(A6, i), x[0])))
    __m256 s[3], d[3];
    for (int k = 0; k < 3; k++) {
        s[k] = _mm256_add_ps(m[1 + 2 * k], m[2 + 2 * k]);
        d[k] = _mm256_sub_ps(m[1 + 2 * k], m[2 + 2 * k]);
    }
    o[0] = _mm256_add_ps(_mm256_add_ps(m[0], s[0]), _mm256_add_ps(s[1], s[2]));
    o[1] = WINO_AT8_ROW(1, d);
    o[2] = WINO_AT8_ROW(2, s);
    o[3] = WINO_AT8_ROW(3, d);
    o[4] = WINO_AT8_ROW(4, s);
    o[5] = _mm256_add_ps(WINO_AT8_ROW(5, d), m[7]);
#undef WINO_AT8_ROW
#undef WINO_P
}

/* One 1-D transform of F(MT x MT): the input's B^T (AT values) or the output's A^T (AT
 * values to MT). */
WINO_INLINE void wino_1d(const __m256 *x, __m256 *o, const int MT, const bool in)
{
    if (in && MT == 2)
        wino_bt4(x, o);
    else if (in && MT == 4)
        wino_bt6(x, o);
    else if (in)
        wino_bt8(x, o);
    else if (MT == 2)
        wino_at4(x, o);
    else if (MT == 4)
        wino_at6(x, o);
    else
        wino_at8(x, o);
}

/* dst's columns = the 1-D transform of src's (AT rows in, AT or MT out). */
WINO_INLINE void wino_cols(__m256 (*src)[WINO_AT_MAX], __m256 (*dst)[WINO_AT_MAX], const int MT,
                           const bool in)
{
    const int AT = MT + 2, rows = in ? AT : MT;
    __m256 col[WINO_AT_MAX], o[WINO_AT_MAX];
    WINO_UNROLL for (int c = 0; c < AT; c++) {
        WINO_UNROLL for (int r = 0; r < AT; r++)
            col[r] = src[r][c];
        wino_1d(col, o, MT, in);
        WINO_UNROLL for (int r = 0; r < rows; r++)
            dst[r][c] = o[r];
    }
}

/* v[p][t][icb*8..] = (B^T d B)[p] for the span's input tile t (AT x AT, MT outputs a
 * side), channel block icb (x: one image); pixels past the edges are zeros. */
WINO_INLINE void wino_in_n(const wino *q, const float *x, const wino_span *s, int64_t icb,
                           int64_t t, const int MT)
{
    const int AT = MT + 2;
    int64_t img = (s->t0 + t) / q->tiles, tt = (s->t0 + t) % q->tiles;
    int64_t y0 = tt / q->tw * MT - q->pt, x0 = tt % q->tw * MT - q->pl;
    x += img * q->ic * q->h * q->w;
    __m256 d[WINO_AT_MAX][WINO_AT_MAX], e[WINO_AT_MAX][WINO_AT_MAX], o[WINO_AT_MAX];
    if (y0 >= 0 && x0 >= 0 && y0 + AT <= q->h && x0 + AT <= q->w) {
        /* inside the image: no edge to check (most tiles of a large image) */
        const float *p = x + wino_at(q, icb, y0 * q->w + x0, q->ic, q->h * q->w);
        int64_t cs = q->nhwc ? q->ic : 8, rs = cs * q->w;
        WINO_UNROLL for (int r = 0; r < AT; r++)
            WINO_UNROLL for (int c = 0; c < AT; c++)
                d[r][c] = _mm256_loadu_ps(p + r * rs + c * cs);
    } else {
        for (int r = 0; r < AT; r++)
            for (int c = 0; c < AT; c++) {
                int64_t yy = y0 + r, xx = x0 + c;
                d[r][c] = yy >= 0 && yy < q->h && xx >= 0 && xx < q->w
                              ? _mm256_loadu_ps(x + wino_at(q, icb, yy * q->w + xx, q->ic,
                                                             q->h * q->w))
                              : _mm256_setzero_ps();
            }
    }
    wino_cols(d, e, MT, true);
    WINO_UNROLL for (int r = 0; r < AT; r++) {
        wino_1d(e[r], o, MT, true);
        WINO_UNROLL for (int c = 0; c < AT; c++)
            _mm256_storeu_ps(s->v + ((r * AT + c) * s->nt + t) * q->ic + icb * 8, o[c]);
    }
}

WINO_AVX2 void wino_in2(const wino *q, const float *x, const wino_span *s, int64_t icb,
                        int64_t t)
{
    wino_in_n(q, x, s, icb, t, 2);
}

WINO_AVX2 void wino_in4(const wino *q, const float *x, const wino_span *s, int64_t icb,
                        int64_t t)
{
    wino_in_n(q, x, s, icb, t, 4);
}

/* The post-ops on one output vector: old is the destination's value (the sum's operand). */
WINO_INLINE __m256 wino_posts(const wino *q, __m256 acc, const float *old)
{
    for (int i = 0; i < q->n_posts; i++)
        acc = q->posts[i] == DN_OWN_SUM ? _mm256_add_ps(acc, _mm256_loadu_ps(old))
                                      : _mm256_max_ps(acc, _mm256_setzero_ps());
    return acc;
}

/* y's MT x MT outputs of the span's tile t, channel block ocb: (A^T m A) + bias, then the
 * post-ops; the rows and columns past the edges are not stored. */
WINO_INLINE void wino_out_n(const wino *q, float *y, const wino_span *s, int64_t ocb,
                            int64_t t, const int MT)
{
    const int AT = MT + 2;
    int64_t img = (s->t0 + t) / q->tiles, tt = (s->t0 + t) % q->tiles;
    int64_t ty = tt / q->tw * MT, tx = tt % q->tw * MT;
    y += img * q->oc * q->oh * q->ow;
    __m256 m[WINO_AT_MAX][WINO_AT_MAX], a[WINO_AT_MAX][WINO_AT_MAX], o[WINO_AT_MAX];
    WINO_UNROLL for (int p = 0; p < AT * AT; p++)
        m[p / AT][p % AT] = _mm256_loadu_ps(s->m + (p * s->nt + t) * q->oc + ocb * 8);
    wino_cols(m, a, MT, false);
    __m256 bias = _mm256_loadu_ps(q->bias + ocb * 8);
    int64_t rows = q->oh - ty < MT ? q->oh - ty : MT, cols = q->ow - tx < MT ? q->ow - tx : MT;
    WINO_UNROLL for (int r = 0; r < MT; r++) {
        if (r == rows)
            break;
        wino_1d(a[r], o, MT, false);
        WINO_UNROLL for (int c = 0; c < MT; c++) {
            if (c == cols)
                break;
            float *yp = y + wino_at(q, ocb, (ty + r) * q->ow + tx + c, q->oc, q->oh * q->ow);
            _mm256_storeu_ps(yp, wino_posts(q, _mm256_add_ps(o[c], bias), yp));
        }
    }
}

WINO_AVX2 void wino_out2(const wino *q, float *y, const wino_span *s, int64_t ocb, int64_t t)
{
    wino_out_n(q, y, s, ocb, t, 2);
}

WINO_AVX2 void wino_out4(const wino *q, float *y, const wino_span *s, int64_t ocb, int64_t t)
{
    wino_out_n(q, y, s, ocb, t, 4);
}

WINO_AVX2 void wino_in6(const wino *q, const float *x, const wino_span *s, int64_t icb,
                        int64_t t)
{
    wino_in_n(q, x, s, icb, t, 6);
}

WINO_AVX2 void wino_out6(const wino *q, float *y, const wino_span *s, int64_t ocb, int64_t t)
{
    wino_out_n(q, y, s, ocb, t, 6);
}

static void wino_in(const wino *q, const float *x, const wino_span *s, int64_t icb, int64_t t)
{
    if (q->kind->mt == 2)
        wino_in2(q, x, s, icb, t);
    else if (q->kind->mt == 4)
        wino_in4(q, x, s, icb, t);
    else
        wino_in6(q, x, s, icb, t);
}

static void wino_out(const wino *q, float *y, const wino_span *s, int64_t ocb, int64_t t)
{
    if (q->kind->mt == 2)
        wino_out2(q, y, s, ocb, t);
    else if (q->kind->mt == 4)
        wino_out4(q, y, s, ocb, t);
    else
        wino_out6(q, y, s, ocb, t);
}

/* m rows r[0..NP) (32 channels from m0, at most NB blocks of 8) = v rows r x u (ic x 32). */
#define WINO_TILE(NB, NP)                                                                      \
    __attribute__((target("avx2,fma"))) static void wino_tile_##NB##_##NP(                      \
        const float *u, const float *const *v, float *const *m, int64_t ic)                     \
    {                                                                                           \
        __m256 acc[NB][NP];                                                                     \
        _Pragma("GCC unroll 4") for (int i = 0; i < NB; i++)                                    \
            _Pragma("GCC unroll 3") for (int j = 0; j < NP; j++) acc[i][j] = _mm256_setzero_ps(); \
        for (int64_t k = 0; k < ic; k += 8)                                                     \
            _Pragma("GCC unroll 8") for (int c = 0; c < 8; c++) {                               \
                __m256 b[NP];                                                                   \
                _Pragma("GCC unroll 3") for (int j = 0; j < NP; j++)                            \
                    b[j] = _mm256_broadcast_ss(v[j] + k + c);                                   \
                _Pragma("GCC unroll 4") for (int i = 0; i < NB; i++) {                          \
                    __m256 wv = _mm256_loadu_ps(u + (k + c) * 32 + 8 * i);                      \
                    _Pragma("GCC unroll 3") for (int j = 0; j < NP; j++)                        \
                        acc[i][j] = _mm256_fmadd_ps(wv, b[j], acc[i][j]);                       \
                }                                                                               \
            }                                                                                   \
        _Pragma("GCC unroll 4") for (int i = 0; i < NB; i++)                                    \
            _Pragma("GCC unroll 3") for (int j = 0; j < NP; j++)                                \
                _mm256_storeu_ps(m[j] + 8 * i, acc[i][j]);                                      \
    }
WINO_TILE(1, 1) WINO_TILE(1, 2) WINO_TILE(1, 3)
WINO_TILE(2, 1) WINO_TILE(2, 2) WINO_TILE(2, 3)
WINO_TILE(3, 1) WINO_TILE(3, 2) WINO_TILE(3, 3)
WINO_TILE(4, 1) WINO_TILE(4, 2) WINO_TILE(4, 3)
#undef WINO_TILE

typedef void (*wino_tile_fn)(const float *u, const float *const *v, float *const *m,
                             int64_t ic);
/* [blocks - 1][rows - 1] */
static const wino_tile_fn wino_tiles[4][3] = {
    {wino_tile_1_1, wino_tile_1_2, wino_tile_1_3},
    {wino_tile_2_1, wino_tile_2_2, wino_tile_2_3},
    {wino_tile_3_1, wino_tile_3_2, wino_tile_3_3},
    {wino_tile_4_1, wino_tile_4_2, wino_tile_4_3},
};

/* The products of position p, output channel group og, over the span's tiles. */
static void wino_products(const wino *q, const wino_span *s, int64_t p, int64_t og)
{
    int64_t nocb = q->oc / 8, nb = nocb - og * 4 < 4 ? nocb - og * 4 : 4;
    const float *u = q->u + (p * q->nocg + og) * q->ic * 32;
    for (int64_t t0 = 0; t0 < s->nt; t0 += 3) {
        int64_t np = s->nt - t0 < 3 ? s->nt - t0 : 3;
        const float *v[3];
        float *m[3];
        for (int64_t j = 0; j < np; j++) {
            v[j] = s->v + (p * s->nt + t0 + j) * q->ic;
            m[j] = s->m + (p * s->nt + t0 + j) * q->oc + og * 32;
        }
        wino_tiles[nb - 1][np - 1](u, v, m, q->ic);
    }
}

/* ---- threads ------------------------------------------------------------------------------- */

typedef struct wino_team {
    const wino *q;
    const float *x;
    float *y;
    int id, threads; /* this thread's (the team is copied per thread), of how many */
} wino_team;

/* This thread's share [*a, *b) of n items. */
static void wino_share(const wino_team *j, int64_t n, int64_t *a, int64_t *b)
{
    *a = n * j->id / j->threads;
    *b = n * (j->id + 1) / j->threads;
}

static void wino_sync(const wino_team *j)
{
#ifdef _OPENMP
    if (j->threads > 1) {
#pragma omp barrier
    }
#else
    (void)j;
#endif
}

static void wino_work(const wino_team *j)
{
    const wino *q = j->q;
    int64_t a, b, icb_n = q->ic / 8, ocb_n = q->oc / 8, all = q->n * q->tiles;
    if (q->by_tiles) {
        /* chunks of tiles, each thread its own, in its own scratch: no barrier */
        wino_share(j, (all + q->chunk - 1) / q->chunk, &a, &b);
        for (int64_t i = a; i < b; i++) {
            int64_t t0 = i * q->chunk;
            wino_span s = {q->v + j->id * q->np * q->chunk * q->ic,
                           q->m + j->id * q->np * q->chunk * q->oc, t0,
                           all - t0 < q->chunk ? all - t0 : q->chunk};
            for (int64_t c = 0; c < icb_n * s.nt; c++)
                wino_in(q, j->x, &s, c / s.nt, c % s.nt);
            for (int64_t c = 0; c < q->np * q->nocg; c++)
                wino_products(q, &s, c / q->nocg, c % q->nocg);
            for (int64_t c = 0; c < ocb_n * s.nt; c++)
                wino_out(q, j->y, &s, c / s.nt, c % s.nt);
        }
        return;
    }
    for (int64_t t0 = 0; t0 < all; t0 += q->chunk) {
        wino_span s = {q->v, q->m, t0, all - t0 < q->chunk ? all - t0 : q->chunk};
        wino_share(j, icb_n * s.nt, &a, &b);
        for (int64_t i = a; i < b; i++)
            wino_in(q, j->x, &s, i / s.nt, i % s.nt);
        wino_sync(j);
        wino_share(j, q->np * q->nocg, &a, &b);
        for (int64_t i = a; i < b; i++)
            wino_products(q, &s, i / q->nocg, i % q->nocg);
        wino_sync(j);
        wino_share(j, ocb_n * s.nt, &a, &b);
        for (int64_t i = a; i < b; i++)
            wino_out(q, j->y, &s, i / s.nt, i % s.nt);
        if (t0 + q->chunk < all) /* the next span overwrites v and m */
            wino_sync(j);
    }
}

/* The team: OpenMP's threads, the ones oneDNN's primitives run on (AC_OPENMP: the same
 * libgomp), at the node's count (dn_ctx_threads) and at most the scratch's. Threads of
 * our own beside OpenMP's fought them for the cores: an OpenMP thread that waits spins
 * (for milliseconds by default, always with OMP_WAIT_POLICY=active) and 2 threads took
 * 9-11 ms where one took 1.4-2.3. Each thread its number and the team's size as OpenMP
 * gives them (fewer than asked when nested in another parallel region). */
static void wino_run(void *extra, const void *const *src, void *dst)
{
    const wino *q = extra;
    wino_team team = {.q = q, .x = src[0], .y = dst, .id = 0, .threads = 1};
#ifdef _OPENMP
    int threads = omp_get_max_threads();
    if (threads > q->threads)
        threads = q->threads;
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
        {
            wino_team j = team;
            j.id = omp_get_thread_num();
            j.threads = omp_get_num_threads();
            wino_work(&j);
        }
        return;
    }
#endif
    wino_work(&team);
}
#endif

/* ---- taking a convolution ------------------------------------------------------------------ */

/* The products of F(mt x mt, 3x3) over an image: (mt + 2)^2 per tile, whole tiles. */
static int64_t wino_products_of(int mt, int64_t oh, int64_t ow)
{
    return (int64_t)(mt + 2) * (mt + 2) * ((oh + mt - 1) / mt) * ((ow + mt - 1) / mt);
}

/* The tile size (the numbers at the top): F(4x4, 3x3) where the batch has at least
 * WINO_F4_TILES of its tiles and its transformed filters stay in the L3 cache
 * (WINO_BIG_U_BYTES) or it has at least WINO_F4_BIG_TILES, F(6x6, 3x3) rather where its
 * filters are at most WINO_F6_U_BYTES and its products (with the padded tiles') at most
 * WINO_F6_PRODUCTS percent of F(4x4)'s; F(2x2, 3x3) else. */
static const wino_kind *wino_kind_for(int64_t n, int64_t ic, int64_t oc, int64_t oh,
                                      int64_t ow)
{
    int64_t tiles = n * ((oh + 3) / 4) * ((ow + 3) / 4);
    int64_t u = 36 * ic * oc * (int64_t)sizeof(float);
    if (tiles < WINO_F4_TILES || (u > WINO_BIG_U_BYTES && tiles < WINO_F4_BIG_TILES))
        return &wino_f2;
    if (64 * ic * oc * (int64_t)sizeof(float) <= WINO_F6_U_BYTES &&
        100 * wino_products_of(6, oh, ow) <= WINO_F6_PRODUCTS * wino_products_of(4, oh, ow))
        return &wino_f6;
    return &wino_f4;
}

gl_status dn_wino_take(dn_build *b, const_dnnl_primitive_desc_t pd, const int64_t *xd,
                       const int64_t *yd, const dn_conv_geom *g)
{
#ifdef __x86_64__
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *w = k->in[1], *bias = k->n_inputs > 2 ? k->in[2] : NULL;
    bool dilated = g->dilates[0] || g->dilates[1];
    if (!b->c->avx2 || b->c->no_own_winograd || b->s->then ||
        !dn_winograd_fits(2, w->dims + 2, g->strides, dilated,
                          gl_node_attr_int(k->node, "group", 1), xd[1], yd[1]) ||
        xd[1] % 8 || yd[1] % 8 || !dn_input_constant(k, 1) ||
        (bias && !dn_input_constant(k, 2)))
        return GL_OK;
    dn_own_layout l = dn_pd_own_layout(pd, xd, yd, false);
    if (l == DN_OWN_NONE)
        return GL_OK;
    const wino_kind *kind = wino_kind_for(xd[0], xd[1], yd[1], yd[2], yd[3]);
    wino q = {.n = xd[0], .ic = xd[1], .oc = yd[1], .h = xd[2], .w = xd[3], .oh = yd[2],
              .ow = yd[3], .pt = g->pad_l[0], .pl = g->pad_l[1], .kind = kind,
              .np = kind->at * kind->at, .tw = (yd[3] + kind->mt - 1) / kind->mt,
              .nocg = (yd[1] + 31) / 32, .threads = b->c->max_threads,
              .nhwc = l == DN_OWN_NHWC};
    if (!dn_own_posts_of(pd, q.posts, WINO_MAX_POSTS, &q.n_posts))
        return GL_OK;
    gl_status st = dn_guard_specials(b, true);
    if (st != GL_OK)
        return st;
    q.tiles = (yd[2] + kind->mt - 1) / kind->mt * q.tw;
    if (q.threads < 1)
        q.threads = 1;
    if (q.threads > WINO_MAX_THREADS)
        q.threads = WINO_MAX_THREADS;
    q.by_tiles = q.np * q.ic * q.oc * (int64_t)sizeof(float) <= WINO_TILES_U_BYTES;
    int64_t all = q.n * q.tiles;
    if (q.by_tiles) { /* chunks of about WINO_CHUNK 4x4 tiles' bytes, as many chunks for
                       * every thread */
        int64_t per = WINO_CHUNK * 16 / q.np;
        int64_t chunks = (all + per - 1) / per;
        chunks = (chunks + q.threads - 1) / q.threads * q.threads;
        q.chunk = (all + chunks - 1) / chunks;
        /* whole rows of the products' register tile (wino_products: 3 tiles): 64ch at
         * 56x56, one thread, F(4x4) 1.02-1.03 ms in chunks of 15 against 1.09 in chunks
         * of 14 (a pair at each chunk's end); F(6x6) 1.03 against 1.20 in chunks of 8 */
        q.chunk = (q.chunk + 2) / 3 * 3;
    } else { /* spans of about WINO_SPAN tiles, or as many as WINO_BIG_SPAN_BYTES hold */
        int64_t span = WINO_SPAN, bytes = q.np * (q.ic + q.oc) * (int64_t)sizeof(float);
        if (q.np * q.ic * q.oc * (int64_t)sizeof(float) > WINO_BIG_U_BYTES &&
            WINO_BIG_SPAN_BYTES / bytes > span)
            span = WINO_BIG_SPAN_BYTES / bytes;
        int64_t spans = (all + span - 1) / span;
        q.chunk = (all + spans - 1) / spans;
    }
    wino *kept = gl_xmalloc(sizeof(*kept));
    *kept = q;
    kept->u = gl_xcalloc((size_t)(q.np * q.nocg * q.ic * 32), sizeof(float));
    kept->bias = gl_xcalloc((size_t)(q.nocg * 32), sizeof(float));
    int64_t rows = q.by_tiles ? q.threads * q.chunk : q.chunk;
    kept->v = gl_xmalloc((size_t)(q.np * rows * q.ic) * sizeof(float));
    kept->m = gl_xmalloc((size_t)(q.np * rows * q.oc) * sizeof(float));
    wino_pack(kept, gl_tensor_data(w));
    if (bias)
        memcpy(kept->bias, gl_tensor_data(bias), (size_t)q.oc * sizeof(float));
    dn_take_native(b, wino_run, kept, wino_free, "graphlab:avx2 %s %s", kind->name,
                   q.nhwc ? "nhwc" : "nChw8c");
#else
    (void)b, (void)pd, (void)xd, (void)yd, (void)g;
#endif
    return GL_OK;
}

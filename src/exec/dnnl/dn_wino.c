/* dn_wino.c — graphlab's Winograd F(2x2, 3x3) convolution on AVX2, nChw8c or nhwc.
 *
 * On AVX-512, dn_conv.c runs 3x3 stride-1 convolutions with oneDNN's Winograd kernels
 * (dn_winograd_fits); oneDNN 2.6 has none for AVX2, where its direct jit:avx2 kernel runs
 * them (in nChw8c, and in nhwc for graphlab's NhwcConv). That kernel is already at the
 * machine's FMA peak (resnet18's 256x14x14 3x3 at 2.45-2.6 ms on one thread, 89-94
 * GFLOP/s; a hand-written register-tiled direct kernel measured the same), and so is ONNX
 * Runtime's MLAS NCHWc kernel: no direct kernel beats it. Winograd F(2x2, 3x3) does 2.25
 * times fewer multiplications: each 4x4 input tile (B^T d B) times each transformed
 * filter (G g G^T, made once when the plan is built) is 16 independent matrix products
 * [tiles x IC] x [IC x OC], and each 4x4 product tile gives 2x2 outputs (A^T m A).
 *
 * Measured one thread, interleaved with oneDNN in one process (minimums of 100 runs,
 * loaded machine, 2026-12-07), oneDNN's direct kernel against this one: 512ch 7x7
 * 2.91/2.46 ms, 256ch 14x14 2.46/1.53, 128ch 28x28 2.44/1.70, 64ch 56x56 2.38/2.59 (its
 * 16 x 784 tiles no longer stay in cache). Hence the rule (wino_pays): outputs of at most
 * 28x28 per image. The tile's 23% waste at 7x7 (16 tiles for 49 outputs) is why the gain
 * is smallest there.
 *
 * The products run on a register tile of 3 tiles x 4 blocks of 8 output channels (12
 * accumulators, the inputs broadcast, 4 weight vectors per input channel). Threads: the
 * plan's count, an OpenMP team as oneDNN's primitives have (wino_run). Few channels
 * (WINO_TILES_U_BYTES): each thread takes whole chunks of tiles through the three steps.
 * Many: three phases per image split among them (input transform by channel block x
 * tile, products by position x group of 32 output channels, output transform by channel
 * block x tile) with a barrier between phases, so that each thread reads only its share
 * of the transformed filters (16.8 MB for 512 channels in and out).
 *
 * Post-ops: the bias, and a chain of sum (scale 1: the destination holds the Add's
 * operand, written by the fused unit before the run) and relu (alpha 0) post-ops, applied
 * in order at the store; any other chain keeps oneDNN's kernel. The transforms mix a
 * tile's inputs (an infinity becomes NaN: Inf - Inf), so, as for oneDNN's Winograd, a run
 * whose inputs hold a NaN or an infinity takes the reference kernel (dn_special.c).
 * Results differ from the direct kernel's by rounding (~1e-5 relative on resnet18's
 * layers).
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
/* Transformed filters of at most this many bytes (128 channels in and out: 1 MB) are
 * read by every thread, each taking chunks of about WINO_CHUNK tiles through all three
 * steps in its own scratch (which stays in its L2 cache), with no barrier; larger ones
 * are split among the threads by output channels. User CPU of 200 runs, one thread, 128
 * channels at 28x28: 0.76-0.84 s in chunks of 32, 0.84-0.88 of 64, 0.81-0.97 whole
 * images (oneDNN's direct kernel 1.30-1.40); at 56x56 with 64 channels the chunks gained
 * 5-10% only (1.32-1.37 s against 1.39-1.54): the transforms weigh more against
 * products of 64 channels, and wino_pays keeps those to oneDNN. */
#define WINO_TILES_U_BYTES (1 << 20)
#define WINO_CHUNK 32

enum { POST_SUM, POST_RELU };

typedef struct wino {
    int64_t n, ic, oc, h, w, oh, ow, pt, pl; /* pt, pl: top and left padding */
    bool nhwc;                               /* else nChw8c */
    int64_t tw, tiles;                       /* tiles per row, per image */
    int64_t nocg;                            /* groups of 32 output channels */
    float *u;     /* [16][nocg][ic][32]: the transformed filters */
    float *bias;  /* [nocg * 32], zeros past oc */
    /* scratch: [16][tiles][ic] and [16][tiles][oc] for the whole image; by_tiles: one
     * [16][chunk][ic] and [16][chunk][oc] per thread */
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

/* u[p][og][i][o % 32] = (G g G^T)[p] for each filter g = w[o][i] (3x3). */
static void wino_pack(wino *q, const float *w)
{
    for (int64_t o = 0; o < q->oc; o++)
        for (int64_t i = 0; i < q->ic; i++) {
            const float *g = w + (o * q->ic + i) * 9;
            float t[4][3], u[4][4];
            for (int c = 0; c < 3; c++) {
                t[0][c] = g[c];
                t[1][c] = 0.5f * (g[c] + g[3 + c] + g[6 + c]);
                t[2][c] = 0.5f * (g[c] - g[3 + c] + g[6 + c]);
                t[3][c] = g[6 + c];
            }
            for (int r = 0; r < 4; r++) {
                u[r][0] = t[r][0];
                u[r][1] = 0.5f * (t[r][0] + t[r][1] + t[r][2]);
                u[r][2] = 0.5f * (t[r][0] - t[r][1] + t[r][2]);
                u[r][3] = t[r][2];
            }
            for (int p = 0; p < 16; p++)
                q->u[((p * q->nocg + o / 32) * q->ic + i) * 32 + o % 32] = u[p / 4][p % 4];
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

/* v[p][t][icb*8..] = (B^T d B)[p] for the span's input tile t, channel block icb (x: one
 * image). */
__attribute__((target("avx2"))) static void wino_in(const wino *q, const float *x,
                                                    const wino_span *s, int64_t icb, int64_t t)
{
    int64_t y0 = (s->t0 + t) / q->tw * 2 - q->pt, x0 = (s->t0 + t) % q->tw * 2 - q->pl;
    __m256 d[4][4], e[4][4];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            int64_t yy = y0 + r, xx = x0 + c;
            d[r][c] = yy >= 0 && yy < q->h && xx >= 0 && xx < q->w
                          ? _mm256_loadu_ps(x + wino_at(q, icb, yy * q->w + xx, q->ic,
                                                         q->h * q->w))
                          : _mm256_setzero_ps();
        }
    for (int c = 0; c < 4; c++) {
        e[0][c] = _mm256_sub_ps(d[0][c], d[2][c]);
        e[1][c] = _mm256_add_ps(d[1][c], d[2][c]);
        e[2][c] = _mm256_sub_ps(d[2][c], d[1][c]);
        e[3][c] = _mm256_sub_ps(d[1][c], d[3][c]);
    }
    for (int r = 0; r < 4; r++) {
        __m256 v[4] = {_mm256_sub_ps(e[r][0], e[r][2]), _mm256_add_ps(e[r][1], e[r][2]),
                       _mm256_sub_ps(e[r][2], e[r][1]), _mm256_sub_ps(e[r][1], e[r][3])};
        for (int c = 0; c < 4; c++)
            _mm256_storeu_ps(s->v + ((r * 4 + c) * s->nt + t) * q->ic + icb * 8, v[c]);
    }
}

/* The post-ops on one output vector: old is the destination's value (the sum's operand). */
__attribute__((target("avx2"))) static inline __m256 wino_posts(const wino *q, __m256 acc,
                                                                const float *old)
{
    for (int i = 0; i < q->n_posts; i++)
        acc = q->posts[i] == POST_SUM ? _mm256_add_ps(acc, _mm256_loadu_ps(old))
                                      : _mm256_max_ps(acc, _mm256_setzero_ps());
    return acc;
}

/* y's 2x2 outputs of the span's tile t, channel block ocb: (A^T m A) + bias, then the
 * post-ops. */
__attribute__((target("avx2"))) static void wino_out(const wino *q, float *y, const wino_span *s,
                                                     int64_t ocb, int64_t t)
{
    int64_t ty = (s->t0 + t) / q->tw * 2, tx = (s->t0 + t) % q->tw * 2;
    __m256 m[4][4], a[2][4];
    for (int p = 0; p < 16; p++)
        m[p / 4][p % 4] = _mm256_loadu_ps(s->m + (p * s->nt + t) * q->oc + ocb * 8);
    for (int c = 0; c < 4; c++) {
        a[0][c] = _mm256_add_ps(_mm256_add_ps(m[0][c], m[1][c]), m[2][c]);
        a[1][c] = _mm256_sub_ps(_mm256_sub_ps(m[1][c], m[2][c]), m[3][c]);
    }
    __m256 bias = _mm256_loadu_ps(q->bias + ocb * 8);
    for (int r = 0; r < 2 && ty + r < q->oh; r++) {
        __m256 o[2] = {_mm256_add_ps(_mm256_add_ps(a[r][0], a[r][1]), a[r][2]),
                       _mm256_sub_ps(_mm256_sub_ps(a[r][1], a[r][2]), a[r][3])};
        for (int c = 0; c < 2 && tx + c < q->ow; c++) {
            float *yp = y + wino_at(q, ocb, (ty + r) * q->ow + tx + c, q->oc, q->oh * q->ow);
            _mm256_storeu_ps(yp, wino_posts(q, _mm256_add_ps(o[c], bias), yp));
        }
    }
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
    int64_t a, b, icb_n = q->ic / 8, ocb_n = q->oc / 8;
    if (q->by_tiles) {
        /* chunks of tiles, each thread its own, in its own scratch: no barrier */
        int64_t chunks = (q->tiles + q->chunk - 1) / q->chunk;
        wino_share(j, q->n * chunks, &a, &b);
        for (int64_t i = a; i < b; i++) {
            int64_t img = i / chunks, t0 = i % chunks * q->chunk;
            wino_span s = {q->v + j->id * 16 * q->chunk * q->ic,
                           q->m + j->id * 16 * q->chunk * q->oc, t0,
                           q->tiles - t0 < q->chunk ? q->tiles - t0 : q->chunk};
            const float *x = j->x + img * q->ic * q->h * q->w;
            for (int64_t c = 0; c < icb_n * s.nt; c++)
                wino_in(q, x, &s, c / s.nt, c % s.nt);
            for (int64_t c = 0; c < 16 * q->nocg; c++)
                wino_products(q, &s, c / q->nocg, c % q->nocg);
            for (int64_t c = 0; c < ocb_n * s.nt; c++)
                wino_out(q, j->y + img * q->oc * q->oh * q->ow, &s, c / s.nt, c % s.nt);
        }
        return;
    }
    wino_span s = {q->v, q->m, 0, q->tiles};
    for (int64_t img = 0; img < q->n; img++) {
        const float *x = j->x + img * q->ic * q->h * q->w;
        float *y = j->y + img * q->oc * q->oh * q->ow;
        wino_share(j, icb_n * q->tiles, &a, &b);
        for (int64_t i = a; i < b; i++)
            wino_in(q, x, &s, i / q->tiles, i % q->tiles);
        wino_sync(j);
        wino_share(j, 16 * q->nocg, &a, &b);
        for (int64_t i = a; i < b; i++)
            wino_products(q, &s, i / q->nocg, i % q->nocg);
        wino_sync(j);
        wino_share(j, ocb_n * q->tiles, &a, &b);
        for (int64_t i = a; i < b; i++)
            wino_out(q, y, &s, i / q->tiles, i % q->tiles);
        if (img + 1 < q->n) /* the next image's transforms overwrite v and m */
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

/* The pd's post-ops as wino's chain: false when one is not a sum of scale 1 or a relu of
 * alpha 0 and scale 1. */
static bool wino_posts_of(const_dnnl_primitive_desc_t pd, wino *q)
{
    const_dnnl_primitive_attr_t attr = NULL;
    const_dnnl_post_ops_t po = NULL;
    if (dnnl_primitive_desc_get_attr(pd, &attr) != dnnl_success ||
        dnnl_primitive_attr_get_post_ops(attr, &po) != dnnl_success)
        return false;
    int n = dnnl_post_ops_len(po);
    if (n > WINO_MAX_POSTS)
        return false;
    for (int i = 0; i < n; i++) {
        float scale = 0, alpha = 0, beta = 0;
        dnnl_alg_kind_t alg;
        dnnl_primitive_kind_t kind = dnnl_post_ops_get_kind(po, i);
        if (kind == dnnl_sum && dnnl_post_ops_get_params_sum(po, i, &scale) == dnnl_success &&
            scale == 1.0f)
            q->posts[i] = POST_SUM;
        else if (kind == dnnl_eltwise &&
                 dnnl_post_ops_get_params_eltwise(po, i, &scale, &alg, &alpha, &beta) ==
                     dnnl_success &&
                 alg == dnnl_eltwise_relu && alpha == 0.0f && scale == 1.0f)
            q->posts[i] = POST_RELU;
        else
            return false;
    }
    q->n_posts = n;
    return true;
}

/* Measured faster than oneDNN's direct kernel (the numbers at the top): at most 28x28
 * outputs per image. */
static bool wino_pays(int64_t oh, int64_t ow)
{
    return oh * ow <= 28 * 28;
}

/* The layouts the kernel reads and writes (the same for source and destination). */
static const dnnl_format_tag_t wino_tags[] = {dnnl_nChw8c, dnnl_nhwc};

/* Which of wino_tags md is over dims, or -1. */
static int wino_tag_of(const dnnl_memory_desc_t *md, const int64_t *dims)
{
    return dn_md_tag_index(md, dims, wino_tags, GL_ARRAY_LEN(wino_tags));
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
        xd[1] % 8 || yd[1] % 8 || !wino_pays(yd[2], yd[3]) || !dn_input_constant(k, 1) ||
        (bias && !dn_input_constant(k, 2)))
        return GL_OK;
    int tag = wino_tag_of(dn_pd_md(pd, dnnl_query_src_md, 0), xd);
    if (tag < 0 || wino_tag_of(dn_pd_md(pd, dnnl_query_dst_md, 0), yd) != tag)
        return GL_OK;
    wino q = {.n = xd[0], .ic = xd[1], .oc = yd[1], .h = xd[2], .w = xd[3], .oh = yd[2],
              .ow = yd[3], .pt = g->pad_l[0], .pl = g->pad_l[1], .tw = (yd[3] + 1) / 2,
              .nocg = (yd[1] + 31) / 32, .threads = b->c->max_threads,
              .nhwc = wino_tags[tag] == dnnl_nhwc};
    if (!wino_posts_of(pd, &q))
        return GL_OK;
    gl_status st = dn_guard_specials(b, true);
    if (st != GL_OK)
        return st;
    q.tiles = (yd[2] + 1) / 2 * q.tw;
    if (q.threads < 1)
        q.threads = 1;
    if (q.threads > WINO_MAX_THREADS)
        q.threads = WINO_MAX_THREADS;
    q.by_tiles = 16 * q.ic * q.oc * (int64_t)sizeof(float) <= WINO_TILES_U_BYTES;
    if (q.by_tiles) { /* about WINO_CHUNK tiles a chunk, as many chunks for every thread */
        int64_t chunks = (q.tiles + WINO_CHUNK - 1) / WINO_CHUNK;
        chunks = (chunks + q.threads - 1) / q.threads * q.threads;
        q.chunk = (q.tiles + chunks - 1) / chunks;
    }
    wino *kept = gl_xmalloc(sizeof(*kept));
    *kept = q;
    kept->u = gl_xcalloc((size_t)(16 * q.nocg * q.ic * 32), sizeof(float));
    kept->bias = gl_xcalloc((size_t)(q.nocg * 32), sizeof(float));
    int64_t rows = q.by_tiles ? q.threads * q.chunk : q.tiles;
    kept->v = gl_xmalloc((size_t)(16 * rows * q.ic) * sizeof(float));
    kept->m = gl_xmalloc((size_t)(16 * rows * q.oc) * sizeof(float));
    wino_pack(kept, gl_tensor_data(w));
    if (bias)
        memcpy(kept->bias, gl_tensor_data(bias), (size_t)q.oc * sizeof(float));
    b->s->extra = kept;
    b->s->extra_free = wino_free;
    b->s->native = wino_run;
    dn_set_impl(b->c, b->s, "graphlab:avx2 winograd_2x3 %s", q.nhwc ? "nhwc" : "nChw8c");
#else
    (void)b, (void)pd, (void)xd, (void)yd, (void)g;
#endif
    return GL_OK;
}

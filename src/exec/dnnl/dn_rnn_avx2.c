/* dn_rnn_avx2.c — LSTM, GRU (either linear_before_reset) and RNN (Tanh) on graphlab's own
 * AVX2 kernel, taken by dn_rnn.c's build (dn_rnn_take).
 *
 * Why: oneDNN 2.6 on AVX2 runs its recurrent primitives with a reference driver around
 * jitted cells (it packs the weights only from batch 16): the bidirectional LSTM(64 ->
 * 128) of lstm_tagger, T 32, took 1.96 ms at batch 8 on one thread (0.37 at batch 1),
 * its GRU 1.18 ms, where ONNX Runtime runs the whole model in 1.83 ms on two.
 *
 * How (as ONNX Runtime does it): one product of all T*N rows of X by W, the biases folded
 * in, before the steps; then per step the product of h_{t-1} [N, H] by R and the gates
 * with the vectorized logistic and tanh of dn_avx2.h. W and R are packed once, at build,
 * in panels of 8 columns ([K][8] each, dn_avx2_rows8's operand), every gate's H columns
 * padded to Hp (a multiple of 8) so that a gate is a whole number of panels: GRU's h gate
 * (linear_before_reset 0) is a product of its own, of r * h_{t-1}, after r. The padding
 * lanes compute on zero weights and stay 0 in h and c. Directions run on the node's
 * threads (two: one each, dn_parallel_for).
 *
 * The bytes are those dn_rnn.c binds for oneDNN's primitive: X tnc (layout 1: ntc), the
 * initial states ldnc [D][N][H] (a reorder makes them so for layout 1), Y as dst_layer
 * [T][N][D*H] (ntc: [N][T][D*H]), Y_h and Y_c ldnc. sequence_lens (which oneDNN has not)
 * follows the reference kernel: a row runs its first len steps (reverse: from len - 1
 * down), Y is 0 past them, Y_h and Y_c are its states after its last step.
 */
#include "exec/dnnl/dn.h"
#include "exec/dnnl/dn_avx2.h"

#include <stdlib.h>
#include <string.h>

#ifdef __x86_64__
#define LANES DN_AVX2_LANES

/* One direction: its packed weights and its scratch. */
typedef struct rnn_dir {
    float *w, *r;   /* panels [G*Hp/8][I (H)][8] */
    float *bias;    /* [G*Hp] Wb + Rb (linear_before_reset: the h gate's Wb alone) */
    float *rbh;     /* linear_before_reset: Rb_h [Hp], inside r * (R_h h + Rb_h) */
    float *peep;    /* LSTM peepholes [3][Hp] (i, o, f), or NULL */
    float *xw;      /* [T*N][G*Hp]: X's rows (as stored) by W, biased */
    float *hr;      /* [N][G*Hp]: h_{t-1} by R this step (GRU: z, then r * h, then R_h) */
    float *h, *c;   /* [N][Hp] */
    float *at;      /* [max(I, H)][8]: 8 rows of A transposed (rows4_by_3, dn_avx2_rows8) */
} rnn_dir;

typedef struct rnn_native {
    dn_rnn_spec sp;     /* lens: our copy */
    int64_t *lens;      /* owned */
    int64_t hp, ghp;    /* H padded to 8; G * Hp */
    rnn_dir dir[2];
    /* this run's */
    const float *x, *h0, *c0;
    float *y, *yh, *yc;
} rnn_native;

/* 4 rows (of A transposed, [K][8] from at: rows at[0..4)) by 3 panels: out[r][0..24) for
 * r < m (<= 4). Twelve accumulators, each k loading 3 panel vectors and broadcasting 4
 * values for 12 FMAs, where dn_avx2_rows8 loads 9 for 8: the load ports, not the FMAs,
 * were its limit (lstm_tagger at batch 8, one thread, a run's per-round minimum 2.61-2.71
 * -> 2.33-2.39 ms; its bidirectional LSTM alone 1.50 -> 1.34). */
__attribute__((target("avx2,fma"))) static void rows4_by_3(const float *at, int64_t k,
                                                           const float *w, const float *bias,
                                                           float *out, int64_t ldo, int64_t m)
{
    const float *w1 = w + k * LANES, *w2 = w1 + k * LANES;
    __m256 b0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    __m256 b1 = bias ? _mm256_loadu_ps(bias + LANES) : _mm256_setzero_ps();
    __m256 b2 = bias ? _mm256_loadu_ps(bias + 2 * LANES) : _mm256_setzero_ps();
    __m256 c00 = b0, c01 = b1, c02 = b2, c10 = b0, c11 = b1, c12 = b2, c20 = b0, c21 = b1,
           c22 = b2, c30 = b0, c31 = b1, c32 = b2;
    for (int64_t i = 0; i < k; i++) {
        __m256 v0 = _mm256_loadu_ps(w + i * LANES), v1 = _mm256_loadu_ps(w1 + i * LANES),
               v2 = _mm256_loadu_ps(w2 + i * LANES);
        const float *a = at + i * 8;
        __m256 x = _mm256_broadcast_ss(a);
        c00 = _mm256_fmadd_ps(x, v0, c00), c01 = _mm256_fmadd_ps(x, v1, c01);
        c02 = _mm256_fmadd_ps(x, v2, c02);
        x = _mm256_broadcast_ss(a + 1);
        c10 = _mm256_fmadd_ps(x, v0, c10), c11 = _mm256_fmadd_ps(x, v1, c11);
        c12 = _mm256_fmadd_ps(x, v2, c12);
        x = _mm256_broadcast_ss(a + 2);
        c20 = _mm256_fmadd_ps(x, v0, c20), c21 = _mm256_fmadd_ps(x, v1, c21);
        c22 = _mm256_fmadd_ps(x, v2, c22);
        x = _mm256_broadcast_ss(a + 3);
        c30 = _mm256_fmadd_ps(x, v0, c30), c31 = _mm256_fmadd_ps(x, v1, c31);
        c32 = _mm256_fmadd_ps(x, v2, c32);
    }
    __m256 rows[4][3] = {{c00, c01, c02}, {c10, c11, c12}, {c20, c21, c22}, {c30, c31, c32}};
    for (int64_t r = 0; r < m; r++)
        for (int q = 0; q < 3; q++)
            _mm256_storeu_ps(out + r * ldo + q * LANES, rows[r][q]);
}

/* Eight panels by one row a (K = k each): out[q*8 .. q*8+8) = bias[q*8 ..] + sum_i a[i] *
 * panel q's row i. a[i] is broadcast once for eight FMAs (9 loads, where one panel at a
 * time loads 2 for each), eight independent sums. lstm_tagger's bidirectional LSTM at
 * batch 1, one thread, per-node minimums of 30 runs: 0.39 -> 0.32 ms. (The eight panels
 * interleaved into one stream, not eight 4 KB apart: no faster.) */
__attribute__((target("avx2,fma"))) static void row_by_8_panels(const float *a, int64_t k,
                                                               const float *w,
                                                               const float *bias, float *out)
{
    __m256 acc[8];
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++)
        acc[q] = bias ? _mm256_loadu_ps(bias + q * LANES) : _mm256_setzero_ps();
    for (int64_t i = 0; i < k; i++, w += LANES) {
        __m256 x = _mm256_broadcast_ss(a + i);
#pragma GCC unroll 8
        for (int q = 0; q < 8; q++)
            acc[q] = _mm256_fmadd_ps(x, _mm256_loadu_ps(w + q * k * LANES), acc[q]);
    }
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++)
        _mm256_storeu_ps(out + q * LANES, acc[q]);
}

/* out[r][p*8 .. p*8+8) = bias[p*8 ..] + sum_i a[r][i] * panel p [i][8], rows r < m (m <= 8,
 * a's rows lda apart, out's ldo), panels [p0, p1) of `panels` (K = k each). One row is a
 * matrix-vector product: eight panels at a time, the ones left over with four
 * accumulators over i, not 8 rows of which 7 are padding. */
__attribute__((target("avx2,fma"))) static void rows_by_panels(float *at, const float *a,
                                                               int64_t lda, int64_t m,
                                                               int64_t k, const float *panels,
                                                               int64_t p0, int64_t p1,
                                                               const float *bias, float *out,
                                                               int64_t ldo)
{
    if (m == 1) {
        int64_t p = p0;
        for (; p + 8 <= p1; p += 8)
            row_by_8_panels(a, k, panels + p * k * LANES, bias ? bias + p * LANES : NULL,
                            out + p * LANES);
        for (; p < p1; p++) {
            const float *w = panels + p * k * LANES;
            __m256 a0 = bias ? _mm256_loadu_ps(bias + p * LANES) : _mm256_setzero_ps();
            __m256 a1 = _mm256_setzero_ps(), a2 = a1, a3 = a1;
            int64_t i = 0;
            for (; i + 4 <= k; i += 4) {
                a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i), _mm256_loadu_ps(w), a0);
                a1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i + 1),
                                     _mm256_loadu_ps(w + LANES), a1);
                a2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i + 2),
                                     _mm256_loadu_ps(w + 2 * LANES), a2);
                a3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i + 3),
                                     _mm256_loadu_ps(w + 3 * LANES), a3);
                w += 4 * LANES;
            }
            for (; i < k; i++, w += LANES)
                a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i), _mm256_loadu_ps(w), a0);
            _mm256_storeu_ps(out + p * LANES,
                             _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
        }
        return;
    }
    dn_avx2_rows_transposed(at, a, lda, m, k);
    /* panels in threes, 4 rows at a time; the 1-2 panels left over, all m rows at once */
    int64_t p3 = p0 + (p1 - p0) / 3 * 3;
    for (int64_t r = 0; r < m; r += 4)
        for (int64_t p = p0; p < p3; p += 3)
            rows4_by_3(at + r, k, panels + p * k * LANES, bias ? bias + p * LANES : NULL,
                       out + r * ldo + p * LANES, ldo, m - r < 4 ? m - r : 4);
    for (int64_t p = p3; p < p1; p++) {
        __m256 acc[8];
        __m256 b0 = bias ? _mm256_loadu_ps(bias + p * LANES) : _mm256_setzero_ps();
        for (int q = 0; q < 8; q++)
            acc[q] = b0;
        dn_avx2_rows8(at, panels + p * k * LANES, k, acc);
        for (int64_t q = 0; q < m; q++)
            _mm256_storeu_ps(out + q * ldo + p * LANES, acc[q]);
    }
}

/* The same for any number of rows, 8 at a time. */
static void product(float *at, const float *a, int64_t lda, int64_t rows, int64_t k,
                    const float *panels, int64_t p0, int64_t p1, const float *bias, float *out,
                    int64_t ldo)
{
    for (int64_t r = 0; r < rows; r += 8)
        rows_by_panels(at, a + r * lda, lda, rows - r < 8 ? rows - r : 8, k, panels, p0, p1,
                       bias, out + r * ldo, ldo);
}

/* The row of X (and of xw) of step t, batch row n, as X is stored. */
static int64_t x_row(const dn_rnn_spec *sp, int64_t t, int64_t n)
{
    return sp->layout ? n * sp->T + t : t * sp->N + n;
}

/* One LSTM step of row n: gx its projection, gh its h_{t-1} by R. */
__attribute__((target("avx2,fma"))) static void lstm_gates(const rnn_native *e,
                                                           const rnn_dir *d, const float *gx,
                                                           const float *gh, float *h, float *c)
{
    int64_t hp = e->hp;
    const float *p = d->peep;
    for (int64_t j = 0; j < hp; j += LANES) {
        __m256 cv = _mm256_loadu_ps(c + j);
#define GATE(q) \
    _mm256_add_ps(_mm256_loadu_ps(gx + (q) * hp + j), _mm256_loadu_ps(gh + (q) * hp + j))
        __m256 xi = GATE(0), xo = GATE(1), xf = GATE(2), xc = GATE(3);
#undef GATE
        if (p) {
            xi = _mm256_fmadd_ps(_mm256_loadu_ps(p + j), cv, xi);
            xf = _mm256_fmadd_ps(_mm256_loadu_ps(p + 2 * hp + j), cv, xf);
        }
        __m256 cn = _mm256_fmadd_ps(dn_sigmoid8(xf), cv,
                                    _mm256_mul_ps(dn_sigmoid8(xi), dn_tanh8(xc)));
        if (p)
            xo = _mm256_fmadd_ps(_mm256_loadu_ps(p + hp + j), cn, xo);
        _mm256_storeu_ps(c + j, cn);
        _mm256_storeu_ps(h + j, _mm256_mul_ps(dn_sigmoid8(xo), dn_tanh8(cn)));
    }
}

/* GRU's z and r of row n: z kept in gh's z slot, r * h_{t-1} written in its r slot (the
 * operand of R_h, linear_before_reset 0); with linear_before_reset the step ends here. */
__attribute__((target("avx2,fma"))) static void gru_gates(const rnn_native *e,
                                                          const rnn_dir *d, const float *gx,
                                                          float *gh, float *h)
{
    int64_t hp = e->hp;
    bool lbr = e->sp.lbr;
    for (int64_t j = 0; j < hp; j += LANES) {
        __m256 z = dn_sigmoid8(
            _mm256_add_ps(_mm256_loadu_ps(gx + j), _mm256_loadu_ps(gh + j)));
        __m256 r = dn_sigmoid8(
            _mm256_add_ps(_mm256_loadu_ps(gx + hp + j), _mm256_loadu_ps(gh + hp + j)));
        __m256 hv = _mm256_loadu_ps(h + j);
        if (!lbr) {
            _mm256_storeu_ps(gh + j, z);
            _mm256_storeu_ps(gh + hp + j, _mm256_mul_ps(r, hv));
            continue;
        }
        __m256 rh = _mm256_add_ps(_mm256_loadu_ps(gh + 2 * hp + j), _mm256_loadu_ps(d->rbh + j));
        __m256 hh = dn_tanh8(_mm256_fmadd_ps(r, rh, _mm256_loadu_ps(gx + 2 * hp + j)));
        _mm256_storeu_ps(h + j, _mm256_fmadd_ps(z, _mm256_sub_ps(hv, hh), hh));
    }
}

/* GRU (linear_before_reset 0) after R_h by r * h_{t-1}: h = (1 - z) hh + z h_{t-1}. */
__attribute__((target("avx2,fma"))) static void gru_finish(const rnn_native *e,
                                                           const float *gx, const float *gh,
                                                           float *h)
{
    int64_t hp = e->hp;
    for (int64_t j = 0; j < hp; j += LANES) {
        __m256 hh = dn_tanh8(_mm256_add_ps(_mm256_loadu_ps(gx + 2 * hp + j),
                                           _mm256_loadu_ps(gh + 2 * hp + j)));
        __m256 hv = _mm256_loadu_ps(h + j);
        _mm256_storeu_ps(h + j, _mm256_fmadd_ps(_mm256_loadu_ps(gh + j), _mm256_sub_ps(hv, hh),
                                                hh));
    }
}

__attribute__((target("avx2,fma"))) static void rnn_gates(const rnn_native *e,
                                                          const float *gx, const float *gh,
                                                          float *h)
{
    for (int64_t j = 0; j < e->hp; j += LANES)
        _mm256_storeu_ps(h + j, dn_tanh8(_mm256_add_ps(_mm256_loadu_ps(gx + j),
                                                       _mm256_loadu_ps(gh + j))));
}

/* Steps of direction `di`: time index t of row n at step s, or -1 when the row is done. */
static int64_t step_time(const rnn_native *e, bool reverse, int64_t s, int64_t n)
{
    int64_t len = e->sp.lens ? e->sp.lens[n] : e->sp.T;
    if (s >= len)
        return -1;
    return reverse ? len - 1 - s : s;
}

static void run_direction(rnn_native *e, int di)
{
    const dn_rnn_spec *sp = &e->sp;
    rnn_dir *d = &e->dir[di];
    int64_t N = sp->N, H = sp->H, hp = e->hp, ghp = e->ghp, T = sp->T, DH = sp->dirs * H;
    bool reverse = di == 1 || sp->reverse;
    size_t hbytes = (size_t)H * sizeof(float);
    product(d->at, e->x, sp->I, T * N, sp->I, d->w, 0, ghp / LANES, d->bias, d->xw, ghp);
    memset(d->h, 0, (size_t)(N * hp) * sizeof(float));
    memset(d->c, 0, (size_t)(N * hp) * sizeof(float));
    for (int64_t n = 0; n < N; n++) {
        if (e->h0)
            memcpy(d->h + n * hp, e->h0 + (di * N + n) * H, hbytes);
        if (e->c0)
            memcpy(d->c + n * hp, e->c0 + (di * N + n) * H, hbytes);
        for (int64_t t = sp->lens ? sp->lens[n] : T; e->y && t < T; t++) /* past its length */
            memset(e->y + x_row(sp, t, n) * DH + di * H, 0, hbytes);
    }
    /* GRU without linear_before_reset: z and r first, h's gate after */
    int64_t first = sp->cell == DN_CELL_GRU && !sp->lbr ? 2 * hp / LANES : ghp / LANES;
    for (int64_t s = 0; s < T; s++) {
        product(d->at, d->h, hp, N, H, d->r, 0, first, NULL, d->hr, ghp);
        for (int64_t n = 0; n < N; n++) {
            int64_t t = step_time(e, reverse, s, n);
            if (t < 0)
                continue;
            const float *gx = d->xw + x_row(sp, t, n) * ghp;
            float *gh = d->hr + n * ghp, *h = d->h + n * hp;
            if (sp->cell == DN_CELL_LSTM)
                lstm_gates(e, d, gx, gh, h, d->c + n * hp);
            else if (sp->cell == DN_CELL_GRU)
                gru_gates(e, d, gx, gh, h);
            else
                rnn_gates(e, gx, gh, h);
        }
        if (first != ghp / LANES) {
            product(d->at, d->hr + hp, ghp, N, H, d->r, first, ghp / LANES, NULL, d->hr, ghp);
            for (int64_t n = 0; n < N; n++) {
                int64_t t = step_time(e, reverse, s, n);
                if (t >= 0)
                    gru_finish(e, d->xw + x_row(sp, t, n) * ghp, d->hr + n * ghp,
                               d->h + n * hp);
            }
        }
        for (int64_t n = 0; e->y && n < N; n++) {
            int64_t t = step_time(e, reverse, s, n);
            if (t >= 0)
                memcpy(e->y + x_row(sp, t, n) * DH + di * H, d->h + n * hp, hbytes);
        }
    }
    for (int64_t n = 0; n < N; n++) {
        if (e->yh)
            memcpy(e->yh + (di * N + n) * H, d->h + n * hp, hbytes);
        if (e->yc)
            memcpy(e->yc + (di * N + n) * H, d->c + n * hp, hbytes);
    }
}

static void run_directions(void *arg, int64_t lo, int64_t hi, int thread)
{
    (void)thread;
    for (int64_t di = lo; di < hi; di++)
        run_direction(arg, (int)di);
}

static void rnn_native_run(void *extra, const void *const *src, void *dst)
{
    rnn_native *e = extra;
    (void)dst; /* output 0 may be a scratch of the primitive's: dn_rnn_native_prepare's */
    e->x = src[0];
    e->h0 = e->sp.h0 >= 0 ? src[e->sp.h0] : NULL;
    e->c0 = e->sp.c0 >= 0 ? src[e->sp.c0] : NULL;
    dn_parallel_for(e->sp.dirs, 0, run_directions, e);
}

/* ---- packing, at build ------------------------------------------------------------------- */

/* One direction's W or R [G*H][K] into panels of 8 columns, gate g's column j at g*Hp + j
 * (zeros past H). */
static void pack_panels(float *dst, const float *src, int gates, int64_t H, int64_t hp,
                        int64_t k)
{
    for (int g = 0; g < gates; g++)
        for (int64_t j = 0; j < H; j++) {
            int64_t col = g * hp + j;
            float *panel = dst + (col / LANES) * k * LANES + col % LANES;
            const float *row = src + (g * H + j) * k;
            for (int64_t i = 0; i < k; i++)
                panel[i * LANES] = row[i];
        }
}

static void pack_direction(rnn_native *e, int di)
{
    const dn_rnn_spec *sp = &e->sp;
    rnn_dir *d = &e->dir[di];
    int64_t H = sp->H, hp = e->hp, ghp = e->ghp, G = sp->gates, kmax = sp->I > H ? sp->I : H;
    d->w = gl_xcalloc((size_t)(ghp * sp->I), sizeof(float));
    d->r = gl_xcalloc((size_t)(ghp * H), sizeof(float));
    d->bias = gl_xcalloc((size_t)ghp, sizeof(float));
    d->xw = gl_xcalloc((size_t)(sp->T * sp->N * ghp), sizeof(float));
    d->hr = gl_xcalloc((size_t)(sp->N * ghp), sizeof(float));
    d->h = gl_xcalloc((size_t)(sp->N * hp), sizeof(float));
    d->c = gl_xcalloc((size_t)(sp->N * hp), sizeof(float));
    d->at = gl_xcalloc((size_t)(kmax * 8), sizeof(float));
    pack_panels(d->w, sp->w + di * G * H * sp->I, (int)G, H, hp, sp->I);
    pack_panels(d->r, sp->r + di * G * H * H, (int)G, H, hp, H);
    if (sp->lbr)
        d->rbh = gl_xcalloc((size_t)hp, sizeof(float));
    if (sp->b) {
        const float *wb = sp->b + di * 2 * G * H, *rb = wb + G * H;
        for (int64_t g = 0; g < G; g++)
            for (int64_t j = 0; j < H; j++)
                d->bias[g * hp + j] = wb[g * H + j] + (sp->lbr && g == 2 ? 0 : rb[g * H + j]);
        if (sp->lbr)
            memcpy(d->rbh, rb + 2 * H, (size_t)H * sizeof(float));
    }
    if (sp->p) {
        d->peep = gl_xcalloc((size_t)(3 * hp), sizeof(float));
        for (int q = 0; q < 3; q++)
            memcpy(d->peep + q * hp, sp->p + (di * 3 + q) * H, (size_t)H * sizeof(float));
    }
}

static void rnn_native_free(void *p)
{
    rnn_native *e = p;
    for (int di = 0; di < 2; di++) {
        rnn_dir *d = &e->dir[di];
        free(d->w), free(d->r), free(d->bias), free(d->rbh), free(d->peep);
        free(d->xw), free(d->hr), free(d->h), free(d->c), free(d->at);
    }
    free(e->lens);
    free(e);
}
#endif

/* Where graphlab's kernel was measured the faster: up to 64 batch rows. Bidirectional, T
 * 32, one thread, the minimum over rounds in ms of oneDNN 2.6's primitive against ours
 * (a loaded machine; bench/README, session 38):
 *     LSTM I 64 H 128:  N 1 0.359/0.319, N 8 1.97/1.50, N 16 3.78/3.07, N 32 15.7/6.3,
 *                       N 64 28.6/25.1
 *     LSTM I 64 H 32:   N 1 0.061/0.035, N 8 0.36/0.23, N 64 2.70/1.91
 *     LSTM I 64 H 512:  N 1 5.22/5.21 (both read R from memory each step), N 8 23.0/16.5
 *     lbr GRU I 256 H 128: N 1 0.376/0.355, N 8 2.42/2.09, N 16 4.59/4.50, N 32 16.1/9.3,
 *                       N 64 35.0/30.5
 * On two threads ours runs the two directions at once (lstm_tagger's LSTM at batch 1:
 * 0.35 against 0.20). Above 64 rows, not measured: oneDNN's. */
#define RNN_NATIVE_MAX_ROWS 64

/* On AVX-512 oneDNN 2.6 runs LSTM on brgemm and GRU on its reference driver (packed
 * sgemm per step). lstm_tagger (bidirectional LSTM 64 -> 128, T 32; two threads,
 * per-node minimums of 20 runs, 3 rounds, session 42): at batch 1 this kernel 0.20 ms
 * against brgemm's 0.34 (one thread 0.39 against 0.43), at batch 8 0.74-0.76 against
 * 0.69-0.75 (one thread 1.46 against 0.84); its GRU here 0.146 against 0.122 at batch 1,
 * 0.52 against 0.29 at batch 8 (gru_lbr). */
bool dn_rnn_native_here(const dn_ctx *c, dn_cell cell, int64_t n)
{
    return c->avx2 || (cell == DN_CELL_LSTM && n == 1);
}

bool dn_rnn_take(dn_build *b, const dn_rnn_spec *sp, const char **why)
{
#ifdef __x86_64__
    if (!dn_rnn_native_here(b->c, sp->cell, sp->N) || !__builtin_cpu_supports("fma")) {
        *why = NULL; /* oneDNN's own kernels, measured faster (dn_rnn_native_here) */
        return false;
    }
    if (sp->N > RNN_NATIVE_MAX_ROWS) {
        *why = "more batch rows than graphlab's kernel was measured faster for (64)";
        return false;
    }
    rnn_native *e = gl_xcalloc(1, sizeof(*e));
    e->sp = *sp;
    if (sp->lens) {
        e->lens = gl_xmalloc((size_t)sp->N * sizeof(int64_t));
        memcpy(e->lens, sp->lens, (size_t)sp->N * sizeof(int64_t));
    }
    e->sp.lens = e->lens;
    e->hp = (sp->H + LANES - 1) / LANES * LANES;
    e->ghp = sp->gates * e->hp;
    for (int di = 0; di < sp->dirs; di++)
        pack_direction(e, di);
    static const char *const names[] = {"rnn", "gru", "lstm"};
    dn_take_native(b, rnn_native_run, e, rnn_native_free, "graphlab:avx2 %s%s",
                   sp->lbr ? "lbr_" : "", names[sp->cell]);
    dn_set_note(b->c, b->s, "%s", "");
    return true;
#else
    (void)b, (void)sp;
    *why = NULL;
    return false;
#endif
}

gl_status dn_rnn_native_prepare(dn_node *s)
{
#ifdef __x86_64__
    rnn_native *e = s->extra;
    float **dst[] = {&e->y, &e->yh, &e->yc};
    e->y = e->yh = e->yc = NULL;
    for (size_t i = 0; i < s->n_out; i++) {
        void *p = NULL;
        if (s->out[i].output < GL_ARRAY_LEN(dst) &&
            dnnl_memory_get_data_handle(s->out[i].mem, &p) == dnnl_success)
            *dst[s->out[i].output] = p;
    }
#else
    (void)s;
#endif
    return GL_OK;
}

/* nn.c — neural-network ops: convolution, pooling, normalization, dropout, resizing,
 * grid sampling, RoiAlign and non-max suppression.
 *
 * Kernels follow the ONNX operator definitions; where onnx's numpy reference (which
 * produced the conformance outputs) and ONNX Runtime disagree, the reference wins and
 * the function says so. Convolutions run in float32 (accumulating in float, as other
 * runtimes do) through im2col and a packed, register-blocked GEMM; the other ops compute
 * in double and round once on the way out, which keeps long sums well inside the
 * conformance tolerance (atol 1e-7).
 *
 * Layout: helpers (tensor loading, window geometry in ops/window.h, GEMM) first, then one section per
 * op group, and the registry table at the end as the file's index.
 */
#include "ops/families.h"
#include "ops/opkit.h"
#include "ops/window.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ==== tensors in and out ============================================================= */

static gl_status nomem(const char *where)
{
    return gl_fail(GL_ERR_NOMEM, "%s: out of memory", where);
}

/* Optional input i: NULL when omitted or empty (ONNX's "" and zero-element inputs
 * both mean "not given" for scales/sizes/roi-like inputs). */
static const gl_tensor *opt_input(const gl_kernel_ctx *k, size_t i)
{
    if (i >= k->n_inputs || !k->in[i] || k->in[i]->count == 0)
        return NULL;
    return k->in[i];
}

static gl_status need_float(gl_kernel_ctx *k, const gl_tensor *t, const char *name)
{
    if (gl_dtype_is_float(t->dtype))
        return GL_OK;
    return gl_fail(GL_ERR_INPUT, "%s: input '%s' has type %s, expected a float type",
                   k->where, name, gl_dtype_name(t->dtype));
}

/* The elements of t as floats: float tensors are read in place (*owned false),
 * others converted into a malloc'd copy. NULL when memory runs out. */
static const float *load_f32(const gl_tensor *t, bool *owned)
{
    *owned = false;
    if (t->dtype == GL_DT_FLOAT && t->count)
        return gl_tensor_data(t);
    float *v = malloc((size_t)(t->count ? t->count : 1) * sizeof(float));
    if (!v)
        return NULL;
    for (int64_t i = 0; i < t->count; i++)
        v[i] = (float)gl_elem_f64(t, i);
    *owned = true;
    return v;
}

static float *out_f32_data(gl_tensor *t)
{
    return t->count ? (float *)t->buf->data : NULL;
}

/* ==== GEMM: C += A * B in float ======================================================= */

/* Goto-style blocking: B is packed into KC x NR column panels, A into MR x KC row
 * panels, and a 4x8 register block accumulates each MR x NR tile. The fixed-size inner
 * loops let the compiler keep the tile in vector registers. */
enum { GEMM_MR = 4, GEMM_NR = 8, GEMM_KC = 256, GEMM_MC = 128, GEMM_NC = 2048 };

typedef struct gemm_ws {
    float *pa; /* GEMM_MC x GEMM_KC */
    float *pb; /* GEMM_KC x GEMM_NC */
} gemm_ws;

static gl_status gemm_ws_init(gemm_ws *ws, const char *where)
{
    ws->pa = malloc(sizeof(float) * GEMM_MC * GEMM_KC);
    ws->pb = malloc(sizeof(float) * GEMM_KC * GEMM_NC);
    if (!ws->pa || !ws->pb) {
        free(ws->pa);
        free(ws->pb);
        ws->pa = ws->pb = NULL;
        return nomem(where);
    }
    return GL_OK;
}

static void gemm_ws_free(gemm_ws *ws)
{
    free(ws->pa);
    free(ws->pb);
}

/* B[kc x nc] (leading dim ldb) into NR-wide panels, zero-padded on the right. */
static void pack_b(int64_t kc, int64_t nc, const float *b, int64_t ldb, float *pb)
{
    for (int64_t j0 = 0; j0 < nc; j0 += GEMM_NR) {
        int64_t nr = nc - j0 < GEMM_NR ? nc - j0 : GEMM_NR;
        for (int64_t p = 0; p < kc; p++) {
            const float *src = b + p * ldb + j0;
            int64_t j = 0;
            for (; j < nr; j++)
                pb[j] = src[j];
            for (; j < GEMM_NR; j++)
                pb[j] = 0;
            pb += GEMM_NR;
        }
    }
}

/* A[mc x kc] (leading dim lda) into MR-tall panels, zero-padded at the bottom. */
static void pack_a(int64_t mc, int64_t kc, const float *a, int64_t lda, float *pa)
{
    for (int64_t i0 = 0; i0 < mc; i0 += GEMM_MR) {
        int64_t mr = mc - i0 < GEMM_MR ? mc - i0 : GEMM_MR;
        for (int64_t p = 0; p < kc; p++) {
            int64_t i = 0;
            for (; i < mr; i++)
                pa[i] = a[(i0 + i) * lda + p];
            for (; i < GEMM_MR; i++)
                pa[i] = 0;
            pa += GEMM_MR;
        }
    }
}

static void gemm_tile(int64_t kc, const float *restrict a, const float *restrict b,
                      float *restrict c, int64_t ldc, int64_t mr, int64_t nr)
{
    float acc[GEMM_MR][GEMM_NR];
    memset(acc, 0, sizeof(acc));
    for (int64_t p = 0; p < kc; p++) {
        /* Fully unrolled, the tile lives in vector registers for the whole k loop. */
#pragma GCC unroll 4
        for (int i = 0; i < GEMM_MR; i++)
#pragma GCC unroll 8
            for (int j = 0; j < GEMM_NR; j++)
                acc[i][j] += a[i] * b[j];
        a += GEMM_MR;
        b += GEMM_NR;
    }
    for (int64_t i = 0; i < mr; i++)
        for (int64_t j = 0; j < nr; j++)
            c[i * ldc + j] += acc[i][j];
}

/* C[M x N] += A[M x K] * B[K x N], all row-major with the given leading dims. */
static void sgemm(gemm_ws *ws, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                  const float *B, int64_t ldb, float *C, int64_t ldc)
{
    for (int64_t jc = 0; jc < N; jc += GEMM_NC) {
        int64_t nc = N - jc < GEMM_NC ? N - jc : GEMM_NC;
        for (int64_t pc = 0; pc < K; pc += GEMM_KC) {
            int64_t kc = K - pc < GEMM_KC ? K - pc : GEMM_KC;
            pack_b(kc, nc, B + pc * ldb + jc, ldb, ws->pb);
            for (int64_t ic = 0; ic < M; ic += GEMM_MC) {
                int64_t mc = M - ic < GEMM_MC ? M - ic : GEMM_MC;
                pack_a(mc, kc, A + ic * lda + pc, lda, ws->pa);
                for (int64_t jr = 0; jr < nc; jr += GEMM_NR) {
                    int64_t nr = nc - jr < GEMM_NR ? nc - jr : GEMM_NR;
                    const float *pb = ws->pb + jr * kc;
                    for (int64_t ir = 0; ir < mc; ir += GEMM_MR) {
                        int64_t mr = mc - ir < GEMM_MR ? mc - ir : GEMM_MR;
                        gemm_tile(kc, ws->pa + ir * kc, pb, C + (ic + ir) * ldc + jc + jr,
                                  ldc, mr, nr);
                    }
                }
            }
        }
    }
}

/* ==== convolution ======================================================================= */

/* A float buffer of n elements, NULL when n is absurd or memory runs out. */
static float *alloc_floats(int64_t n)
{
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(float) / 2)
        return NULL;
    return malloc((size_t)(n ? n : 1) * sizeof(float));
}

/* Sizes of one convolution: spatial dims in and out, and element counts. */
typedef struct conv_dims {
    int64_t in[GL_WINDOW_MAX_SP], out[GL_WINDOW_MAX_SP];
    int64_t in_sz, out_sz, k_sz;
} conv_dims;

typedef struct conv_plan {
    gl_window win;
    conv_dims g;
    int64_t batch, group;
    int64_t cg, mg; /* input and output channels per group */
} conv_plan;

static void kernel_index(const gl_window *w, int64_t ki, int64_t *kk)
{
    for (int d = w->n - 1; d >= 0; d--) {
        kk[d] = ki % w->kernel[d];
        ki /= w->kernel[d];
    }
}

/* The positions o in [0, n_o) with 0 <= o * s + off < len: [*lo, *hi). */
static void valid_range(int64_t off, int64_t s, int64_t len, int64_t n_o, int64_t *lo,
                        int64_t *hi)
{
    int64_t a = gl_ceil_div(-off, s), b = gl_floor_div(len - 1 - off, s) + 1;
    *lo = a < 0 ? 0 : a;
    *hi = b > n_o ? n_o : b;
    if (*hi < *lo)
        *hi = *lo;
}

/* The im2col buffer holds a few MB whatever the image size: convolutions go through it
 * in chunks of whole "runs" (rows of the last spatial dim). */
#define CONV_COLS_FLOATS ((int64_t)4 << 20)

/* Runs per chunk when each column of the buffer has `rows` entries. */
static int64_t runs_per_chunk(int64_t rows, int64_t run)
{
    int64_t per_run = rows * run > 0 ? rows * run : 1;
    return CONV_COLS_FLOATS / per_run > 1 ? CONV_COLS_FLOATS / per_run : 1;
}

/* The multi-index (dims 0..n-1) of row-major position r. */
static void unravel(int64_t r, const int64_t *dims, int n, int64_t *idx)
{
    for (int d = n - 1; d >= 0; d--) {
        idx[d] = dims[d] ? r % dims[d] : 0;
        r = dims[d] ? r / dims[d] : 0;
    }
}

/* cols[(c, kernel offset), output position] = x[c] at the input position the kernel
 * offset sees from that output position (0 in the padding), for the output positions
 * of runs [r0, r0 + n_runs). The last spatial dim is done as one strided run per row so
 * the inner loop is a plain copy. */
static void im2col(const float *x, int64_t channels, const gl_window *w, const conv_dims *g,
                   int64_t r0, int64_t n_runs, float *cols)
{
    int n = w->n, last = n - 1;
    int64_t in_strides[GL_WINDOW_MAX_SP], outer[GL_WINDOW_MAX_SP], kk[GL_WINDOW_MAX_SP], o[GL_WINDOW_MAX_SP];
    gl_strides(g->in, n, in_strides);
    int64_t run = g->out[last], s = w->stride[last], width = n_runs * run;
    for (int d = 0; d < last; d++)
        outer[d] = g->out[d];
    for (int64_t c = 0; c < channels; c++) {
        const float *xc = x + c * g->in_sz;
        for (int64_t ki = 0; ki < g->k_sz; ki++) {
            kernel_index(w, ki, kk);
            float *row = cols + (c * g->k_sz + ki) * width;
            int64_t off = kk[last] * w->dil[last] - w->pad_begin[last], lo, hi;
            valid_range(off, s, g->in[last], run, &lo, &hi);
            unravel(r0, outer, last, o);
            for (int64_t r = 0; r < n_runs; r++, gl_odometer_next(o, outer, last)) {
                float *dst = row + r * run;
                int64_t base = 0;
                bool inside = lo < hi;
                for (int d = 0; d < last && inside; d++) {
                    int64_t i = o[d] * w->stride[d] + kk[d] * w->dil[d] - w->pad_begin[d];
                    inside = i >= 0 && i < g->in[d];
                    base += i * in_strides[d];
                }
                if (!inside) {
                    memset(dst, 0, (size_t)run * sizeof(float));
                    continue;
                }
                const float *src = xc + base;
                for (int64_t j = 0; j < lo; j++)
                    dst[j] = 0;
                if (s == 1)
                    memcpy(dst + lo, src + lo + off, (size_t)(hi - lo) * sizeof(float));
                else
                    for (int64_t j = lo; j < hi; j++)
                        dst[j] = src[j * s + off];
                for (int64_t j = hi; j < run; j++)
                    dst[j] = 0;
            }
        }
    }
}

/* The transpose of im2col with accumulation: y[c] at the output position a kernel
 * offset reaches from each input position += cols[(c, offset), input position], for
 * the input positions of runs [r0, r0 + n_runs). */
static void col2im_add(const float *cols, int64_t channels, const gl_window *w,
                       const conv_dims *g, int64_t r0, int64_t n_runs, float *y)
{
    int n = w->n, last = n - 1;
    int64_t out_strides[GL_WINDOW_MAX_SP], outer[GL_WINDOW_MAX_SP], kk[GL_WINDOW_MAX_SP], i[GL_WINDOW_MAX_SP];
    gl_strides(g->out, n, out_strides);
    int64_t run = g->in[last], s = w->stride[last], width = n_runs * run;
    for (int d = 0; d < last; d++)
        outer[d] = g->in[d];
    for (int64_t c = 0; c < channels; c++) {
        float *yc = y + c * g->out_sz;
        for (int64_t ki = 0; ki < g->k_sz; ki++) {
            kernel_index(w, ki, kk);
            const float *row = cols + (c * g->k_sz + ki) * width;
            int64_t off = kk[last] * w->dil[last] - w->pad_begin[last], lo, hi;
            valid_range(off, s, g->out[last], run, &lo, &hi);
            if (lo >= hi)
                continue;
            unravel(r0, outer, last, i);
            for (int64_t r = 0; r < n_runs; r++, gl_odometer_next(i, outer, last)) {
                int64_t base = 0;
                bool inside = true;
                for (int d = 0; d < last && inside; d++) {
                    int64_t o = i[d] * w->stride[d] + kk[d] * w->dil[d] - w->pad_begin[d];
                    inside = o >= 0 && o < g->out[d];
                    base += o * out_strides[d];
                }
                if (!inside)
                    continue;
                const float *src = row + r * run;
                float *dst = yc + base;
                for (int64_t j = lo; j < hi; j++)
                    dst[j * s + off] += src[j];
            }
        }
    }
}

/* One channel of a depthwise 2-D convolution, straight from the input: each kernel tap
 * adds a scaled, strided input row segment to an output row. */
static void conv_depthwise2d(const float *x, const float *w, float *y, const gl_window *win,
                             const conv_dims *g)
{
    int64_t ih_n = g->in[0], iw_n = g->in[1], oh_n = g->out[0], ow_n = g->out[1];
    int64_t kh_n = win->kernel[0], kw_n = win->kernel[1];
    int64_t sh = win->stride[0], sw = win->stride[1];
    for (int64_t oh = 0; oh < oh_n; oh++) {
        float *yr = y + oh * ow_n;
        for (int64_t kh = 0; kh < kh_n; kh++) {
            int64_t ih = oh * sh + kh * win->dil[0] - win->pad_begin[0];
            if (ih < 0 || ih >= ih_n)
                continue;
            const float *xr = x + ih * iw_n;
            for (int64_t kw = 0; kw < kw_n; kw++) {
                float wv = w[kh * kw_n + kw];
                int64_t off = kw * win->dil[1] - win->pad_begin[1], lo, hi;
                valid_range(off, sw, iw_n, ow_n, &lo, &hi);
                if (sw == 1)
                    for (int64_t ow = lo; ow < hi; ow++)
                        yr[ow] += wv * xr[ow + off];
                else
                    for (int64_t ow = lo; ow < hi; ow++)
                        yr[ow] += wv * xr[ow * sw + off];
            }
        }
    }
}

static void fill_bias(float *y, int64_t channels, int64_t size, const float *b)
{
    for (int64_t c = 0; c < channels; c++) {
        float v = b ? b[c] : 0.0f;
        for (int64_t i = 0; i < size; i++)
            y[c * size + i] = v;
    }
}

static bool window_is_pointwise(const gl_window *w)
{
    for (int d = 0; d < w->n; d++)
        if (w->kernel[d] != 1 || w->stride[d] != 1 || w->pad_begin[d] || w->pad_end[d])
            return false;
    return true;
}

static gl_status conv_run(const conv_plan *p, const float *x, const float *w, const float *b,
                          float *y, const char *where)
{
    const conv_dims *g = &p->g;
    bool depthwise = p->cg == 1 && p->mg == 1 && p->win.n == 2;
    bool pointwise = window_is_pointwise(&p->win);
    int64_t c_all = p->cg * p->group, m_all = p->mg * p->group, kdim = p->cg * g->k_sz;
    int64_t run = g->out[p->win.n - 1], runs = run ? g->out_sz / run : 0;
    int64_t chunk = runs_per_chunk(kdim, run);
    float *cols = NULL;
    gemm_ws ws = {0};
    if (!depthwise) {
        if (!pointwise && !(cols = alloc_floats(kdim * (chunk < runs ? chunk : runs) * run)))
            return nomem(where);
        if (gemm_ws_init(&ws, where)) {
            free(cols);
            return GL_ERR_NOMEM;
        }
    }
    for (int64_t n = 0; n < p->batch; n++) {
        for (int64_t grp = 0; grp < p->group; grp++) {
            const float *xg = x + (n * c_all + grp * p->cg) * g->in_sz;
            const float *wg = w + grp * p->mg * kdim;
            float *yg = y + (n * m_all + grp * p->mg) * g->out_sz;
            fill_bias(yg, p->mg, g->out_sz, b ? b + grp * p->mg : NULL);
            if (depthwise) {
                conv_depthwise2d(xg, wg, yg, &p->win, g);
            } else if (pointwise) {
                sgemm(&ws, p->mg, g->out_sz, p->cg, wg, p->cg, xg, g->in_sz, yg, g->out_sz);
            } else {
                for (int64_t r0 = 0; r0 < runs; r0 += chunk) {
                    int64_t nr = runs - r0 < chunk ? runs - r0 : chunk;
                    im2col(xg, p->cg, &p->win, g, r0, nr, cols);
                    sgemm(&ws, p->mg, nr * run, kdim, wg, kdim, cols, nr * run, yg + r0 * run,
                          g->out_sz);
                }
            }
        }
    }
    free(cols);
    gemm_ws_free(&ws);
    return GL_OK;
}

/* X and W present, float, same dtype, W of X's rank, group dividing the channels. */
static gl_status conv_check_inputs(gl_kernel_ctx *k, bool transpose, int64_t *group)
{
    const gl_tensor *x = gl_need_input(k, 0, "X");
    const gl_tensor *w = x ? gl_need_input(k, 1, "W") : NULL;
    if (!w)
        return GL_ERR_INPUT;
    gl_status st;
    if ((st = need_float(k, x, "X")) || (st = need_float(k, w, "W")))
        return st;
    if (w->dtype != x->dtype)
        return gl_fail(GL_ERR_INPUT, "%s: W has type %s but X has %s", k->where,
                       gl_dtype_name(w->dtype), gl_dtype_name(x->dtype));
    if (x->rank < 3 || w->rank != x->rank)
        return gl_fail(GL_ERR_INPUT, "%s: X has rank %d and W rank %d (expected equal "
                       "ranks >= 3)", k->where, x->rank, w->rank);
    *group = gl_node_attr_int(k->node, "group", 1);
    if (*group < 1)
        return gl_fail(GL_ERR_INPUT, "%s: group %lld must be positive", k->where,
                       (long long)*group);
    int64_t c = x->dims[1];
    bool ok = transpose ? w->dims[0] == c && c % *group == 0
                        : w->dims[1] * *group == c && w->dims[0] % *group == 0;
    if (!ok)
        return gl_fail(GL_ERR_INPUT, "%s: X has %lld channels, W has shape [%lld, %lld, ...] "
                       "and group is %lld", k->where, (long long)c, (long long)w->dims[0],
                       (long long)w->dims[1], (long long)*group);
    return GL_OK;
}

static gl_status check_bias(gl_kernel_ctx *k, const gl_tensor *b, int64_t m)
{
    if (!b)
        return GL_OK;
    if (b->rank != 1 || b->dims[0] != m || b->dtype != k->in[0]->dtype)
        return gl_fail(GL_ERR_INPUT, "%s: bias B must be a %s vector of %lld elements",
                       k->where, gl_dtype_name(k->in[0]->dtype), (long long)m);
    return GL_OK;
}

/* Run a float convolution-like computation on any float dtype: inputs are read as
 * float, and the result converted into y when y is not float32. */
typedef gl_status (*conv_fn)(const conv_plan *p, const float *x, const float *w,
                             const float *b, float *y, const char *where);

static gl_status run_in_float(gl_kernel_ctx *k, const conv_plan *p, const gl_tensor *b,
                              gl_tensor *y, conv_fn fn)
{
    bool own_x, own_w, own_b = false;
    const float *xf = load_f32(k->in[0], &own_x);
    const float *wf = load_f32(k->in[1], &own_w);
    const float *bf = b ? load_f32(b, &own_b) : NULL;
    float *yf = y->dtype == GL_DT_FLOAT ? out_f32_data(y) : alloc_floats(y->count);
    gl_status st;
    if (!xf || !wf || (b && !bf) || (y->count && !yf))
        st = nomem(k->where);
    else
        st = y->count ? fn(p, xf, wf, bf, yf, k->where) : GL_OK;
    if (st == GL_OK && y->dtype != GL_DT_FLOAT)
        for (int64_t i = 0; i < y->count; i++)
            gl_elem_set_f64(y, i, yf[i]);
    if (own_x)
        free((void *)xf);
    if (own_w)
        free((void *)wf);
    if (own_b)
        free((void *)bf);
    if (y->dtype != GL_DT_FLOAT)
        free(yf);
    return st;
}

static gl_status conv_kernel(gl_kernel_ctx *k)
{
    conv_plan p = {0};
    gl_status st = conv_check_inputs(k, false, &p.group);
    if (st)
        return st;
    const gl_tensor *x = k->in[0], *w = k->in[1], *b = opt_input(k, 2);
    int nsp = x->rank - 2;
    if ((st = gl_window_read(k->node, k->where, nsp, w->dims + 2, &p.win)))
        return st;
    memcpy(p.g.in, x->dims + 2, (size_t)nsp * sizeof(int64_t));
    if ((st = gl_window_resolve(&p.win, p.g.in, k->where, p.g.out)))
        return st;
    p.batch = x->dims[0];
    p.cg = w->dims[1];
    p.mg = w->dims[0] / p.group;
    p.g.in_sz = gl_dims_product(p.g.in, 0, nsp);
    p.g.out_sz = gl_dims_product(p.g.out, 0, nsp);
    p.g.k_sz = gl_dims_product(p.win.kernel, 0, nsp);
    if ((st = check_bias(k, b, w->dims[0])))
        return st;
    int64_t ydims[GL_MAX_RANK] = {x->dims[0], w->dims[0]};
    memcpy(ydims + 2, p.g.out, (size_t)nsp * sizeof(int64_t));
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, ydims);
    if (!y)
        return GL_ERR_NOMEM;
    return run_in_float(k, &p, b, y, conv_run);
}

/* Shape function shared by Conv and ConvTranspose up to the spatial dims. Returns false
 * (with *st set) when nothing more can be said. */
static bool conv_infer_start(gl_infer_ctx *c, bool transpose, int64_t *wk, gl_shape *s,
                             gl_status *st)
{
    *st = GL_OK;
    const gl_type *x = gl_infer_input(c, 0), *w = gl_infer_input(c, 1);
    if (!x)
        return false;
    int rank = x->shape.rank;
    if (rank == GL_RANK_UNKNOWN && w)
        rank = w->shape.rank;
    if (rank == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
        return false;
    }
    if (rank < 3 || (x->shape.rank >= 0 && x->shape.rank != rank) ||
        (w && w->shape.rank >= 0 && w->shape.rank != rank)) {
        *st = gl_fail(GL_ERR_INPUT, "%s: X and W must have the same rank >= 3", c->where);
        return false;
    }
    const gl_dim *wd = w && w->shape.rank == rank ? w->shape.dims : NULL;
    for (int d = 0; d < rank - 2; d++)
        wk[d] = wd ? wd[d + 2].value : -1;
    int64_t group = gl_node_attr_int(c->node, "group", 1);
    if (group < 1) {
        *st = gl_fail(GL_ERR_INPUT, "%s: group %lld must be positive", c->where,
                      (long long)group);
        return false;
    }
    const gl_dim *xd = x->shape.rank == rank ? x->shape.dims : NULL;
    int64_t cin = xd ? xd[1].value : -1;
    int64_t w0 = wd ? wd[0].value : -1, w1 = wd ? wd[1].value : -1;
    if (cin >= 0 && !transpose && w1 >= 0 && w1 * group != cin) {
        *st = gl_fail(GL_ERR_INPUT, "%s: X has %lld channels but W expects %lld x group %lld",
                      c->where, (long long)cin, (long long)w1, (long long)group);
        return false;
    }
    if (cin >= 0 && transpose && w0 >= 0 && w0 != cin) {
        *st = gl_fail(GL_ERR_INPUT, "%s: X has %lld channels but W has %lld", c->where,
                      (long long)cin, (long long)w0);
        return false;
    }
    gl_shape_init_unknown(s);
    gl_shape_set_rank(s, rank);
    if (xd)
        gl_dim_copy(&s->dims[0], &xd[0]);
    if (wd && !transpose)
        gl_dim_copy(&s->dims[1], &wd[0]);
    else if (wd && w1 >= 0)
        s->dims[1].value = w1 * group;
    return true;
}

static gl_status conv_infer(gl_infer_ctx *c)
{
    int64_t wk[GL_MAX_RANK];
    gl_shape s;
    gl_status st;
    if (!conv_infer_start(c, false, wk, &s, &st))
        return st;
    const gl_type *x = gl_infer_input(c, 0);
    gl_window w;
    if ((st = gl_window_read(c->node, c->where, s.rank - 2, wk, &w)) == GL_OK &&
        x->shape.rank == s.rank)
        for (int d = 0; d < w.n && st == GL_OK; d++)
            st = gl_window_infer_dim(&w, d, &x->shape.dims[d + 2], c->where, &s.dims[d + 2]);
    if (st == GL_OK)
        gl_infer_set(c, 0, x->dtype, &s);
    gl_shape_free(&s);
    return st;
}

/* ==== transposed convolution ============================================================ */

/* Output length and begin padding of spatial dim d of a ConvTranspose (the ONNX
 * formulas: output_shape, when given, decides the pads; SAME makes the output in *
 * stride; otherwise the pads decide the output). Padding may come out negative when an
 * explicit output_shape is larger than the full result: the extra rows are zeros. */
static gl_status convtranspose_dim(const gl_node *n, const char *where, gl_window *w, int d,
                                   int64_t in, int64_t *out)
{
    int64_t span = (w->kernel[d] - 1) * w->dil[d] + 1, s = w->stride[d];
    int64_t out_pad = 0;
    size_t cnt;
    const int64_t *op = gl_attr_ints(n, "output_padding", &cnt);
    if (op && cnt == (size_t)w->n)
        out_pad = op[d];
    else if (op && cnt == (size_t)w->n + 2)
        out_pad = op[d + 2];
    else if (op)
        return gl_fail(GL_ERR_INPUT, "%s: output_padding has %zu values, expected %d", where,
                       cnt, w->n);
    if (out_pad < 0 || out_pad > GL_WINDOW_MAX_ATTR)
        return gl_fail(GL_ERR_INPUT, "%s: output_padding[%d] = %lld is out of range", where,
                       d, (long long)out_pad);
    gl_status st = gl_window_check_spatial(&in, 1, where);
    if (st)
        return st;
    int64_t full = s * (in - 1) + out_pad + span;
    const int64_t *os = gl_attr_ints(n, "output_shape", &cnt);
    bool same = w->pad_mode == GL_PAD_SAME_UPPER || w->pad_mode == GL_PAD_SAME_LOWER;
    if (os && cnt != (size_t)w->n && cnt != (size_t)w->n + 2)
        return gl_fail(GL_ERR_INPUT, "%s: output_shape has %zu values, expected %d", where,
                       cnt, w->n);
    if (os || same) {
        *out = os ? os[cnt - (size_t)w->n + (size_t)d] : in * s;
        if (*out < 0 || *out > GL_WINDOW_MAX_DIM)
            return gl_fail(GL_ERR_INPUT, "%s: output_shape[%d] = %lld is out of range", where,
                           d, (long long)*out);
        int64_t total = full - *out, half = gl_floor_div(total, 2);
        w->pad_begin[d] = w->pad_mode == GL_PAD_SAME_UPPER ? half : total - half;
        w->pad_end[d] = total - w->pad_begin[d];
    } else {
        if (w->pad_mode == GL_PAD_VALID)
            w->pad_begin[d] = w->pad_end[d] = 0;
        *out = full - w->pad_begin[d] - w->pad_end[d];
    }
    if (*out < 0)
        return gl_fail(GL_ERR_INPUT, "%s: spatial dimension %d of the output would be %lld",
                       where, d, (long long)*out);
    return GL_OK;
}

static gl_status convtranspose_run(const conv_plan *p, const float *x, const float *w,
                                   const float *b, float *y, const char *where)
{
    const conv_dims *g = &p->g;
    int64_t rows = p->mg * g->k_sz; /* (output channel, kernel offset) pairs per group */
    int64_t run = g->in[p->win.n - 1], runs = run ? g->in_sz / run : 0;
    int64_t chunk = runs_per_chunk(rows, run);
    float *wt = alloc_floats(p->group * rows * p->cg);
    float *cols = alloc_floats(rows * (chunk < runs ? chunk : runs) * run);
    gemm_ws ws = {0};
    if (!wt || !cols || gemm_ws_init(&ws, where)) {
        free(wt);
        free(cols);
        return nomem(where);
    }
    /* W is [C, M/group, k...]: per group a (cg x rows) matrix; the GEMM wants it
     * transposed so each column of the product is one input position's contribution. */
    for (int64_t grp = 0; grp < p->group; grp++)
        for (int64_t ci = 0; ci < p->cg; ci++)
            for (int64_t r = 0; r < rows; r++)
                wt[(grp * rows + r) * p->cg + ci] = w[(grp * p->cg + ci) * rows + r];
    int64_t c_all = p->cg * p->group, m_all = p->mg * p->group;
    for (int64_t n = 0; n < p->batch; n++) {
        for (int64_t grp = 0; grp < p->group; grp++) {
            const float *xg = x + (n * c_all + grp * p->cg) * g->in_sz;
            float *yg = y + (n * m_all + grp * p->mg) * g->out_sz;
            fill_bias(yg, p->mg, g->out_sz, b ? b + grp * p->mg : NULL);
            for (int64_t r0 = 0; r0 < runs; r0 += chunk) {
                int64_t nr = runs - r0 < chunk ? runs - r0 : chunk;
                memset(cols, 0, (size_t)(rows * nr * run) * sizeof(float));
                sgemm(&ws, rows, nr * run, p->cg, wt + grp * rows * p->cg, p->cg,
                      xg + r0 * run, g->in_sz, cols, nr * run);
                col2im_add(cols, p->mg, &p->win, g, r0, nr, yg);
            }
        }
    }
    free(wt);
    free(cols);
    gemm_ws_free(&ws);
    return GL_OK;
}

static gl_status convtranspose_kernel(gl_kernel_ctx *k)
{
    conv_plan p = {0};
    gl_status st = conv_check_inputs(k, true, &p.group);
    if (st)
        return st;
    const gl_tensor *x = k->in[0], *w = k->in[1], *b = opt_input(k, 2);
    int nsp = x->rank - 2;
    if ((st = gl_window_read(k->node, k->where, nsp, w->dims + 2, &p.win)))
        return st;
    memcpy(p.g.in, x->dims + 2, (size_t)nsp * sizeof(int64_t));
    for (int d = 0; d < nsp; d++)
        if ((st = convtranspose_dim(k->node, k->where, &p.win, d, p.g.in[d], &p.g.out[d])))
            return st;
    p.batch = x->dims[0];
    p.cg = x->dims[1] / p.group;
    p.mg = w->dims[1];
    p.g.in_sz = gl_dims_product(p.g.in, 0, nsp);
    p.g.out_sz = gl_dims_product(p.g.out, 0, nsp);
    p.g.k_sz = gl_dims_product(p.win.kernel, 0, nsp);
    if ((st = check_bias(k, b, p.mg * p.group)))
        return st;
    int64_t ydims[GL_MAX_RANK] = {x->dims[0], p.mg * p.group};
    memcpy(ydims + 2, p.g.out, (size_t)nsp * sizeof(int64_t));
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, ydims);
    if (!y)
        return GL_ERR_NOMEM;
    return run_in_float(k, &p, b, y, convtranspose_run);
}

static gl_status convtranspose_infer(gl_infer_ctx *c)
{
    int64_t wk[GL_MAX_RANK];
    gl_shape s;
    gl_status st;
    if (!conv_infer_start(c, true, wk, &s, &st))
        return st;
    const gl_type *x = gl_infer_input(c, 0);
    gl_window w;
    if ((st = gl_window_read(c->node, c->where, s.rank - 2, wk, &w)) == GL_OK &&
        x->shape.rank == s.rank) {
        for (int d = 0; d < w.n && st == GL_OK; d++) {
            const gl_dim *in = &x->shape.dims[d + 2];
            int64_t out;
            size_t cnt;
            const int64_t *os = gl_attr_ints(c->node, "output_shape", &cnt);
            if (in->value >= 0 && w.kernel[d] >= 0) {
                st = convtranspose_dim(c->node, c->where, &w, d, in->value, &out);
                s.dims[d + 2].value = out;
            } else if (os && cnt >= (size_t)w.n) {
                s.dims[d + 2].value = os[cnt - (size_t)w.n + (size_t)d];
            }
        }
    }
    if (st == GL_OK)
        gl_infer_set(c, 0, x->dtype, &s);
    gl_shape_free(&s);
    return st;
}

/* ==== pooling =========================================================================== */

typedef enum pool_kind { POOL_AVG, POOL_MAX, POOL_LP } pool_kind;

typedef struct pool_plan {
    pool_kind kind;
    gl_window win;
    int64_t in[GL_WINDOW_MAX_SP], out[GL_WINDOW_MAX_SP];
    int64_t in_sz, out_sz, planes;
    bool count_include_pad; /* AveragePool: the padding counts in the divisor */
    bool column_major;      /* MaxPool storage_order 1: Indices run column-major */
    double p;               /* LpPool's exponent */
} pool_plan;

/* Advance k through the box [lo, hi) (row-major); false when done. */
static bool box_next(int64_t *k, const int64_t *lo, const int64_t *hi, int n)
{
    for (int d = n - 1; d >= 0; d--) {
        if (++k[d] < hi[d])
            return true;
        k[d] = lo[d];
    }
    return false;
}

/* Does tap v take a max pooling window's place from acc? A NaN does, and keeps it: a
 * window that holds a NaN is NaN whatever the order of its taps, as numpy.max, PyTorch's
 * max pooling and our own Max and ReduceMax have it (issue 26; the first tap used to seed
 * the max and a later NaN never won; ONNX Runtime's answer depends on the tap order). */
static inline bool max_takes(double v, double acc)
{
    return v > acc || (isnan(v) && !isnan(acc));
}

/* One output element of a pooling window starting at `start` (per dim, in input
 * coordinates; the in-bounds kernel taps are [lo, hi)). */
static double pool_window(const pool_plan *pp, const double *x, const int64_t *start,
                          const int64_t *lo, const int64_t *hi, const int64_t *in_strides,
                          const int64_t *col_strides, int64_t *argmax)
{
    const gl_window *w = &pp->win;
    int64_t k[GL_WINDOW_MAX_SP];
    memcpy(k, lo, (size_t)w->n * sizeof(int64_t));
    double acc = pp->kind == POOL_MAX ? -INFINITY : 0.0;
    int64_t best = -1;
    do {
        int64_t off = 0, col = 0;
        for (int d = 0; d < w->n; d++) {
            int64_t i = start[d] + k[d] * w->dil[d];
            off += i * in_strides[d];
            col += i * col_strides[d];
        }
        double v = x[off];
        if (pp->kind == POOL_AVG) {
            acc += v;
        } else if (pp->kind == POOL_LP) {
            acc += pow(fabs(v), pp->p);
        } else if (best < 0 || max_takes(v, acc)) {
            acc = v;
            best = pp->column_major ? col : off;
        }
    } while (box_next(k, lo, hi, w->n));
    *argmax = best;
    return acc;
}

static void pool_plane(const pool_plan *pp, const double *x, double *y, int64_t *ind,
                       int64_t plane)
{
    const gl_window *w = &pp->win;
    int n = w->n;
    int64_t in_strides[GL_WINDOW_MAX_SP], col_strides[GL_WINDOW_MAX_SP], o[GL_WINDOW_MAX_SP] = {0};
    gl_strides(pp->in, n, in_strides);
    int64_t col = 1;
    for (int d = 0; d < n; col *= pp->in[d], d++)
        col_strides[d] = col;
    for (int64_t oi = 0; oi < pp->out_sz; oi++, gl_odometer_next(o, pp->out, n)) {
        int64_t start[GL_WINDOW_MAX_SP], lo[GL_WINDOW_MAX_SP], hi[GL_WINDOW_MAX_SP], plo, phi;
        int64_t n_valid = 1, n_padded = 1;
        for (int d = 0; d < n; d++) {
            start[d] = o[d] * w->stride[d] - w->pad_begin[d];
            valid_range(start[d], w->dil[d], pp->in[d], w->kernel[d], &lo[d], &hi[d]);
            /* Taps inside input + pads (a ceil_mode gl_window may hang past the pads). */
            valid_range(start[d] + w->pad_begin[d], w->dil[d],
                        pp->in[d] + w->pad_begin[d] + w->pad_end[d], w->kernel[d], &plo,
                        &phi);
            n_valid *= hi[d] - lo[d];
            n_padded *= phi - plo;
        }
        int64_t argmax = -1;
        double v;
        if (n_valid == 0) {
            v = pp->kind == POOL_MAX ? -INFINITY : 0.0;
        } else {
            v = pool_window(pp, x, start, lo, hi, in_strides, col_strides, &argmax);
            if (pp->kind == POOL_AVG)
                v /= (double)(pp->count_include_pad ? n_padded : n_valid);
            else if (pp->kind == POOL_LP)
                v = pow(v, 1.0 / pp->p);
        }
        y[oi] = v;
        if (ind)
            ind[oi] = argmax < 0 ? -1 : plane * pp->in_sz + argmax;
    }
}

/* ---- float32 2-D fast path ----
 * The generic path above converts to double and walks every tap through n-D index
 * arithmetic; squeezenet-style models spend most of their reference time there. For
 * the common case (float32, two spatial dims, Average/MaxPool without Indices) the
 * in-bounds tap range of each output row and column is computed once, so the inner
 * loops are plain strided reads with no bound checks. AveragePool still sums in double
 * in the generic path's tap order: a float sum of mixed-sign values that cancels near
 * zero misses atol 1e-7, and the widening costs little next to the index arithmetic
 * saved. MaxPool keeps the generic path's NaN rule (max_takes). Both paths therefore agree
 * bit for bit. */

/* In-bounds taps [lo, hi) of one output position along one spatial dim, and how many
 * taps fall inside input + pads (AveragePool's count_include_pad divisor). */
typedef struct tap_range {
    int64_t start, lo, hi, padded;
} tap_range;

static void tap_ranges(const gl_window *w, int d, int64_t in, int64_t out, tap_range *r)
{
    for (int64_t o = 0; o < out; o++) {
        int64_t plo, phi;
        r[o].start = o * w->stride[d] - w->pad_begin[d];
        valid_range(r[o].start, w->dil[d], in, w->kernel[d], &r[o].lo, &r[o].hi);
        valid_range(r[o].start + w->pad_begin[d], w->dil[d],
                    in + w->pad_begin[d] + w->pad_end[d], w->kernel[d], &plo, &phi);
        r[o].padded = phi - plo;
    }
}

/* Offset of a window's first in-bounds tap. Windows are walked by integer offsets,
 * never by pointers that could leave the plane when the window starts in the pads. */
static int64_t first_tap(int64_t width, const tap_range *rh, const tap_range *rw,
                         int64_t dh, int64_t dw)
{
    return (rh->start + rh->lo * dh) * width + rw->start + rw->lo * dw;
}

static float pool2d_max_window(const float *x, int64_t width, const tap_range *rh,
                               const tap_range *rw, int64_t dh, int64_t dw)
{
    int64_t row = first_tap(width, rh, rw, dh, dw), taps = rw->hi - rw->lo;
    float acc = x[row];
    for (int64_t kh = rh->lo; kh < rh->hi; kh++, row += dh * width)
        for (int64_t t = 0; t < taps; t++)
            if (max_takes(x[row + t * dw], acc))
                acc = x[row + t * dw];
    return acc;
}

static double pool2d_sum_window(const float *x, int64_t width, const tap_range *rh,
                                const tap_range *rw, int64_t dh, int64_t dw)
{
    int64_t row = first_tap(width, rh, rw, dh, dw), taps = rw->hi - rw->lo;
    double acc = 0.0;
    for (int64_t kh = rh->lo; kh < rh->hi; kh++, row += dh * width)
        for (int64_t t = 0; t < taps; t++)
            acc += x[row + t * dw];
    return acc;
}

static void pool2d_f32_plane(const pool_plan *pp, const tap_range *rh, const tap_range *rw,
                             const float *x, float *y)
{
    int64_t dh = pp->win.dil[0], dw = pp->win.dil[1], width = pp->in[1];
    for (int64_t oh = 0; oh < pp->out[0]; oh++) {
        const tap_range *h = &rh[oh];
        for (int64_t ow = 0; ow < pp->out[1]; ow++, y++) {
            const tap_range *c = &rw[ow];
            int64_t n_valid = (h->hi - h->lo) * (c->hi - c->lo);
            if (n_valid == 0) {
                *y = pp->kind == POOL_MAX ? -INFINITY : 0.0f;
            } else if (pp->kind == POOL_MAX) {
                *y = pool2d_max_window(x, width, h, c, dh, dw);
            } else {
                int64_t n = pp->count_include_pad ? h->padded * c->padded : n_valid;
                *y = (float)(pool2d_sum_window(x, width, h, c, dh, dw) / (double)n);
            }
        }
    }
}

/* Whether pool_kernel can take the float32 2-D path for input x. */
static bool pool2d_f32_fits(const pool_plan *pp, const gl_tensor *x, bool with_indices)
{
    return x->dtype == GL_DT_FLOAT && pp->win.n == 2 && pp->kind != POOL_LP &&
           !with_indices && x->count > 0;
}

static gl_status pool2d_f32(gl_kernel_ctx *k, const pool_plan *pp, const gl_tensor *x,
                            gl_tensor *y)
{
    if (y->count == 0)
        return GL_OK;
    tap_range *rh = malloc((size_t)(pp->out[0] + pp->out[1]) * sizeof(tap_range));
    if (!rh)
        return nomem(k->where);
    tap_range *rw = rh + pp->out[0];
    tap_ranges(&pp->win, 0, pp->in[0], pp->out[0], rh);
    tap_ranges(&pp->win, 1, pp->in[1], pp->out[1], rw);
    const float *xv = gl_tensor_data(x);
    float *yv = out_f32_data(y);
    for (int64_t pl = 0; pl < pp->planes; pl++)
        pool2d_f32_plane(pp, rh, rw, xv + pl * pp->in_sz, yv + pl * pp->out_sz);
    free(rh);
    return GL_OK;
}

static gl_status pool_check_x(gl_kernel_ctx *k, bool any_numeric, const gl_tensor **out)
{
    const gl_tensor *x = gl_need_input(k, 0, "X");
    if (!x)
        return GL_ERR_INPUT;
    bool ok = any_numeric ? x->dtype != GL_DT_STRING && x->dtype != GL_DT_BOOL &&
                                x->dtype != GL_DT_COMPLEX64 && x->dtype != GL_DT_COMPLEX128
                          : gl_dtype_is_float(x->dtype);
    if (!ok)
        return gl_fail(GL_ERR_INPUT, "%s: input X has unsupported type %s", k->where,
                       gl_dtype_name(x->dtype));
    if (x->rank < 3)
        return gl_fail(GL_ERR_INPUT, "%s: input X has rank %d, expected >= 3 (N, C, "
                       "spatial...)", k->where, x->rank);
    *out = x;
    return GL_OK;
}

/* LpPool's p: a FLOAT attribute in opset 1, an INT from opset 2. */
static double lp_exponent(const gl_node *n)
{
    const gl_attr *f = gl_node_attr_typed(n, "p", GL_ATTR_FLOAT);
    return f ? f->f : (double)gl_node_attr_int(n, "p", 2);
}

static gl_status pool_kernel(gl_kernel_ctx *k, pool_kind kind)
{
    const gl_tensor *x;
    gl_status st = pool_check_x(k, kind == POOL_MAX, &x);
    if (st)
        return st;
    pool_plan pp = {.kind = kind};
    int nsp = x->rank - 2;
    if ((st = gl_window_read(k->node, k->where, nsp, NULL, &pp.win)))
        return st;
    memcpy(pp.in, x->dims + 2, (size_t)nsp * sizeof(int64_t));
    if ((st = gl_window_resolve(&pp.win, pp.in, k->where, pp.out)))
        return st;
    pp.count_include_pad = gl_node_attr_int(k->node, "count_include_pad", 0) != 0;
    pp.column_major = gl_node_attr_int(k->node, "storage_order", 0) == 1;
    pp.p = lp_exponent(k->node);
    if (kind == POOL_LP && !(pp.p > 0))
        return gl_fail(GL_ERR_INPUT, "%s: p must be positive", k->where);
    pp.in_sz = gl_dims_product(pp.in, 0, nsp);
    pp.out_sz = gl_dims_product(pp.out, 0, nsp);
    pp.planes = x->dims[0] * x->dims[1];
    int64_t ydims[GL_MAX_RANK] = {x->dims[0], x->dims[1]};
    memcpy(ydims + 2, pp.out, (size_t)nsp * sizeof(int64_t));
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, ydims);
    gl_tensor *ind = y && kind == POOL_MAX && gl_out_wanted(k, 1)
                         ? gl_out_new(k, 1, GL_DT_INT64, x->rank, ydims) : NULL;
    if (!y || (kind == POOL_MAX && gl_out_wanted(k, 1) && !ind))
        return GL_ERR_NOMEM;
    if (pool2d_f32_fits(&pp, x, ind != NULL))
        return pool2d_f32(k, &pp, x, y);
    double *xv = gl_tensor_to_f64(x, k->where);
    double *yv = malloc((size_t)(y->count ? y->count : 1) * sizeof(double));
    if (!xv || !yv) {
        free(xv);
        free(yv);
        return nomem(k->where);
    }
    int64_t *iv = ind && ind->count ? (int64_t *)ind->buf->data : NULL;
    for (int64_t pl = 0; pl < pp.planes; pl++)
        pool_plane(&pp, xv + pl * pp.in_sz, yv + pl * pp.out_sz,
                   iv ? iv + pl * pp.out_sz : NULL, pl);
    gl_tensor_store_f64(y, yv, false);
    free(xv);
    free(yv);
    return GL_OK;
}

static gl_status averagepool_kernel(gl_kernel_ctx *k) { return pool_kernel(k, POOL_AVG); }
static gl_status maxpool_kernel(gl_kernel_ctx *k) { return pool_kernel(k, POOL_MAX); }
static gl_status lppool_kernel(gl_kernel_ctx *k) { return pool_kernel(k, POOL_LP); }

/* N and C of X's shape into s (rank of X), spatial dims unknown. False when X's rank is
 * unknown (output rank unknown too) or invalid (*st set). */
static bool nc_shape_start(gl_infer_ctx *c, gl_shape *s, gl_status *st)
{
    *st = GL_OK;
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return false;
    if (x->shape.rank == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
        return false;
    }
    if (x->shape.rank < 3) {
        *st = gl_fail(GL_ERR_INPUT, "%s: input X has rank %d, expected >= 3", c->where,
                      x->shape.rank);
        return false;
    }
    gl_shape_init_unknown(s);
    gl_shape_set_rank(s, x->shape.rank);
    gl_dim_copy(&s->dims[0], &x->shape.dims[0]);
    gl_dim_copy(&s->dims[1], &x->shape.dims[1]);
    return true;
}

static gl_status pool_infer(gl_infer_ctx *c)
{
    gl_shape s;
    gl_status st;
    if (!nc_shape_start(c, &s, &st))
        return st;
    const gl_type *x = gl_infer_input(c, 0);
    gl_window w;
    if ((st = gl_window_read(c->node, c->where, s.rank - 2, NULL, &w)) == GL_OK)
        for (int d = 0; d < w.n && st == GL_OK; d++)
            st = gl_window_infer_dim(&w, d, &x->shape.dims[d + 2], c->where, &s.dims[d + 2]);
    if (st == GL_OK) {
        gl_infer_set(c, 0, x->dtype, &s);
        if (c->n_outputs > 1 && c->node->outputs[1])
            gl_infer_set(c, 1, GL_DT_INT64, &s);
    }
    gl_shape_free(&s);
    return st;
}

/* GlobalAverage/MaxPool on float32 read the input in place instead of converting it to
 * double first; the mean still sums in double (planes can be large), and the max uses
 * the generic loop's rule (max_takes), so results are identical. */
static void global_pool_f32(pool_kind kind, const float *x, float *y, int64_t planes,
                            int64_t sz)
{
    for (int64_t pl = 0; pl < planes; pl++, x += sz) {
        if (kind == POOL_MAX) {
            float acc = -INFINITY;
            for (int64_t i = 0; i < sz; i++)
                acc = max_takes(x[i], acc) ? x[i] : acc;
            y[pl] = acc;
        } else {
            double acc = 0.0;
            for (int64_t i = 0; i < sz; i++)
                acc += x[i];
            y[pl] = (float)(acc / (double)sz);
        }
    }
}

static gl_status global_pool_kernel(gl_kernel_ctx *k, pool_kind kind)
{
    const gl_tensor *x;
    gl_status st = pool_check_x(k, kind == POOL_MAX, &x);
    if (st)
        return st;
    double p = lp_exponent(k->node);
    int64_t ydims[GL_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        ydims[d] = d < 2 ? x->dims[d] : 1;
    int64_t planes = x->dims[0] * x->dims[1], sz = gl_dims_product(x->dims, 2, x->rank);
    if (sz == 0 && planes > 0)
        return gl_fail(GL_ERR_INPUT, "%s: input X has an empty spatial extent", k->where);
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, ydims);
    if (!y)
        return GL_ERR_NOMEM;
    if (x->dtype == GL_DT_FLOAT && kind != POOL_LP) {
        if (planes > 0)
            global_pool_f32(kind, gl_tensor_data(x), out_f32_data(y), planes, sz);
        return GL_OK;
    }
    double *xv = gl_tensor_to_f64(x, k->where);
    double *yv = malloc((size_t)(planes ? planes : 1) * sizeof(double));
    if (!xv || !yv) {
        free(xv);
        free(yv);
        return nomem(k->where);
    }
    for (int64_t pl = 0; pl < planes; pl++) {
        const double *v = xv + pl * sz;
        double acc = kind == POOL_MAX ? -INFINITY : 0.0;
        for (int64_t i = 0; i < sz; i++)
            acc = kind == POOL_MAX ? (max_takes(v[i], acc) ? v[i] : acc)
                  : kind == POOL_AVG ? acc + v[i] : acc + pow(fabs(v[i]), p);
        yv[pl] = kind == POOL_AVG ? acc / (double)sz : kind == POOL_LP ? pow(acc, 1.0 / p) : acc;
    }
    gl_tensor_store_f64(y, yv, false);
    free(xv);
    free(yv);
    return GL_OK;
}

static gl_status global_averagepool_kernel(gl_kernel_ctx *k)
{
    return global_pool_kernel(k, POOL_AVG);
}

static gl_status global_maxpool_kernel(gl_kernel_ctx *k)
{
    return global_pool_kernel(k, POOL_MAX);
}

static gl_status global_lppool_kernel(gl_kernel_ctx *k)
{
    return global_pool_kernel(k, POOL_LP);
}

static gl_status global_pool_infer(gl_infer_ctx *c)
{
    gl_shape s;
    gl_status st;
    if (!nc_shape_start(c, &s, &st))
        return st;
    for (int d = 2; d < s.rank; d++)
        s.dims[d].value = 1;
    gl_infer_set(c, 0, gl_infer_input(c, 0)->dtype, &s);
    gl_shape_free(&s);
    return GL_OK;
}

/* ==== MaxUnpool ========================================================================== */

/* Spatial length MaxUnpool restores when no output_shape is given. */
static int64_t unpool_dim(const gl_window *w, int d, int64_t in)
{
    return (in - 1) * w->stride[d] + w->kernel[d] - w->pad_begin[d] - w->pad_end[d];
}

/* Indices are flat positions in the tensor of the default (un-padded) unpooled shape.
 * An explicit, larger output_shape keeps each value at the same coordinates and leaves
 * the extra rows and columns zero: that is what onnx's reference (and so the
 * conformance suite) computes; ONNX Runtime instead reads the indices as positions in
 * the output_shape tensor. */
static gl_status maxunpool_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "X");
    const gl_tensor *ind = x ? gl_need_input(k, 1, "I") : NULL;
    if (!ind)
        return GL_ERR_INPUT;
    if (x->rank < 3 || ind->rank != x->rank ||
        memcmp(ind->dims, x->dims, (size_t)x->rank * sizeof(int64_t)) != 0 ||
        ind->dtype != GL_DT_INT64)
        return gl_fail(GL_ERR_INPUT, "%s: X must have rank >= 3 and I be int64 of X's shape",
                       k->where);
    int nsp = x->rank - 2;
    gl_window w;
    gl_status st = gl_window_read(k->node, k->where, nsp, NULL, &w);
    if (st || (st = gl_window_check_spatial(x->dims + 2, nsp, k->where)))
        return st;
    int64_t def[GL_MAX_RANK] = {x->dims[0], x->dims[1]}, out[GL_MAX_RANK];
    for (int d = 0; d < nsp; d++)
        if ((def[d + 2] = unpool_dim(&w, d, x->dims[d + 2])) < 0)
            return gl_fail(GL_ERR_INPUT, "%s: spatial dimension %d would be negative",
                           k->where, d);
    memcpy(out, def, (size_t)x->rank * sizeof(int64_t));
    const gl_tensor *os = opt_input(k, 2);
    if (os) {
        int64_t *v;
        size_t n;
        if (!gl_tensor_ints(os, k->where, "output_shape", &v, &n))
            return GL_ERR_INPUT;
        bool ok = n == (size_t)x->rank && v[0] == x->dims[0] && v[1] == x->dims[1];
        for (size_t d = 2; ok && d < n; d++)
            ok = v[d] >= def[d];
        if (ok)
            memcpy(out, v, n * sizeof(int64_t));
        free(v);
        if (!ok)
            return gl_fail(GL_ERR_INPUT, "%s: output_shape must keep N and C and be at least "
                           "the unpooled shape", k->where);
    }
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, out);
    if (!y)
        return GL_ERR_NOMEM;
    int64_t def_count = gl_dims_product(def, 0, x->rank), out_strides[GL_MAX_RANK];
    gl_strides(out, x->rank, out_strides);
    size_t esz = gl_dtype_size(x->dtype);
    const int64_t *iv = gl_tensor_data(ind);
    for (int64_t i = 0; i < x->count; i++) {
        int64_t idx = iv[i], pos = 0;
        if (idx < 0 || idx >= def_count)
            return gl_fail(GL_ERR_INPUT, "%s: index %lld in I is outside [0, %lld)", k->where,
                           (long long)idx, (long long)def_count);
        for (int d = x->rank - 1; d >= 0; d--) {
            pos += (idx % def[d]) * out_strides[d];
            idx /= def[d];
        }
        memcpy((char *)y->buf->data + (size_t)pos * esz,
               (const char *)gl_tensor_data(x) + (size_t)i * esz, esz);
    }
    return GL_OK;
}

static gl_status maxunpool_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int64_t *v;
    size_t n;
    if (gl_infer_const_ints(c, 2, &v, &n)) {
        gl_shape s;
        gl_shape_init_unknown(&s);
        gl_shape_set_rank(&s, (int)n);
        for (size_t d = 0; d < n; d++)
            s.dims[d].value = v[d] >= 0 ? v[d] : GL_DIM_UNKNOWN;
        free(v);
        gl_infer_set(c, 0, x->dtype, &s);
        gl_shape_free(&s);
        return GL_OK;
    }
    gl_shape s;
    gl_status st;
    if (!nc_shape_start(c, &s, &st))
        return st;
    gl_window w;
    if ((st = gl_window_read(c->node, c->where, s.rank - 2, NULL, &w)) == GL_OK &&
        !(c->n_inputs > 2 && c->in_types[2])) /* a run-time output_shape: spatial unknown */
        for (int d = 0; d < w.n; d++)
            if (x->shape.dims[d + 2].value >= 0 && x->shape.dims[d + 2].value <= GL_WINDOW_MAX_DIM)
                s.dims[d + 2].value = unpool_dim(&w, d, x->shape.dims[d + 2].value);
    if (st == GL_OK)
        gl_infer_set(c, 0, x->dtype, &s);
    gl_shape_free(&s);
    return st;
}

/* ==== normalization ====================================================================== */

/* Inputs first..first+n-1 present, float, each with `count` elements. */
static gl_status need_param_vectors(gl_kernel_ctx *k, size_t first, size_t n,
                                    const char *const *names, int64_t count)
{
    for (size_t i = 0; i < n; i++) {
        const gl_tensor *t = gl_need_input(k, first + i, names[i]);
        if (!t)
            return GL_ERR_INPUT;
        gl_status st = need_float(k, t, names[i]);
        if (st)
            return st;
        if (t->count != count)
            return gl_fail(GL_ERR_INPUT, "%s: input '%s' has %lld elements, expected %lld",
                           k->where, names[i], (long long)t->count, (long long)count);
    }
    return GL_OK;
}

/* Load inputs first..first+n-1 as doubles into v[]; false (all freed) on failure. */
static bool load_many(gl_kernel_ctx *k, size_t first, size_t n, double **v)
{
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok = (v[i] = gl_tensor_to_f64(k->in[first + i], k->where)) != NULL && ok;
    if (!ok)
        for (size_t i = 0; i < n; i++) {
            free(v[i]);
            v[i] = NULL;
        }
    return ok;
}

static void free_many(double **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}

/* Per-channel mean and (population) variance over N and the spatial dims. */
static void channel_stats(const double *x, int64_t batch, int64_t ch, int64_t inner,
                          double *mean, double *var)
{
    double cnt = (double)(batch * inner);
    for (int64_t c = 0; c < ch; c++) {
        double s = 0, q = 0;
        for (int64_t n = 0; n < batch; n++)
            for (int64_t i = 0; i < inner; i++)
                s += x[(n * ch + c) * inner + i];
        double m = cnt > 0 ? s / cnt : 0;
        for (int64_t n = 0; n < batch; n++)
            for (int64_t i = 0; i < inner; i++) {
                double dv = x[(n * ch + c) * inner + i] - m;
                q += dv * dv;
            }
        mean[c] = m;
        var[c] = cnt > 0 ? q / cnt : 0;
    }
}

/* Inference uses the given statistics; training mode (opset >= 14, training_mode=1)
 * normalizes with the batch statistics and returns updated running statistics.
 * Before opset 9, spatial=0 means one parameter per (channel, position). */
static gl_status batchnorm_kernel(gl_kernel_ctx *k)
{
    static const char *const names[] = {"scale", "B", "input_mean", "input_var"};
    const gl_tensor *x = gl_need_input(k, 0, "X");
    if (!x)
        return GL_ERR_INPUT;
    gl_status st = need_float(k, x, "X");
    if (st)
        return st;
    if (x->rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: input X has rank %d, expected >= 2", k->where,
                       x->rank);
    bool training = k->opset >= 14 && gl_node_attr_int(k->node, "training_mode", 0) != 0;
    if (k->opset < 14 && (gl_out_wanted(k, 1) || gl_out_wanted(k, 2) || gl_out_wanted(k, 3) ||
                          gl_out_wanted(k, 4)))
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: training-mode BatchNormalization (extra "
                       "outputs) before opset 14 is not supported", k->where);
    int64_t batch = x->dims[0], ch = x->dims[1], inner = gl_dims_product(x->dims, 2, x->rank);
    bool per_position = k->opset < 9 && gl_node_attr_int(k->node, "spatial", 1) == 0;
    if (training && per_position)
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: spatial=0 in training mode", k->where);
    int64_t n_param = per_position ? ch * inner : ch;
    if ((st = need_param_vectors(k, 1, 4, names, n_param)))
        return st;
    double eps = gl_node_attr_float(k->node, "epsilon", 1e-5f);
    double momentum = gl_node_attr_float(k->node, "momentum", 0.9f);
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    double *v[5] = {0}; /* x, scale, B, mean, var */
    double *yv = malloc((size_t)(x->count ? x->count : 1) * sizeof(double));
    double *stats = malloc((size_t)(2 * ch + 1) * sizeof(double));
    if (!yv || !stats || !load_many(k, 0, 5, v)) {
        free(yv);
        free(stats);
        return nomem(k->where);
    }
    const double *mean = v[3], *var = v[4];
    if (training) {
        channel_stats(v[0], batch, ch, inner, stats, stats + ch);
        mean = stats;
        var = stats + ch;
    }
    for (int64_t n = 0; n < batch; n++)
        for (int64_t c = 0; c < ch; c++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t e = (n * ch + c) * inner + i, p = per_position ? c * inner + i : c;
                yv[e] = v[1][p] * (v[0][e] - mean[p]) / sqrt(var[p] + eps) + v[2][p];
            }
    gl_tensor_store_f64(y, yv, false);
    /* Running statistics: updated in training mode, passed through otherwise. */
    for (size_t o = 1; o <= 2 && st == GL_OK; o++) {
        if (!gl_out_wanted(k, o))
            continue;
        const gl_tensor *src = k->in[o + 2];
        gl_tensor *r = gl_out_new(k, o, src->dtype, src->rank, src->dims);
        if (!r) {
            st = GL_ERR_NOMEM;
            break;
        }
        double *rv = v[o + 2];
        if (training)
            for (int64_t c = 0; c < ch; c++)
                rv[c] = rv[c] * momentum + (o == 1 ? mean : var)[c] * (1 - momentum);
        gl_tensor_store_f64(r, rv, false);
    }
    free_many(v, 5);
    free(yv);
    free(stats);
    return st;
}

static gl_status batchnorm_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (x && x->shape.rank >= 0 && x->shape.rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: input X has rank %d, expected >= 2", c->where,
                       x->shape.rank);
    gl_infer_like_input(c, 0, 0);
    for (size_t o = 1; o < c->n_outputs && o <= 2; o++)
        if (c->node->outputs[o])
            gl_infer_like_input(c, o + 2, o);
    return GL_OK;
}

/* y = scale * (x - mean) / sqrt(var + epsilon) + B with mean and variance per (n, c). */
static gl_status instancenorm_kernel(gl_kernel_ctx *k)
{
    static const char *const names[] = {"scale", "B"};
    const gl_tensor *x = gl_need_input(k, 0, "input");
    if (!x)
        return GL_ERR_INPUT;
    gl_status st = need_float(k, x, "input");
    if (st)
        return st;
    if (x->rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: input has rank %d, expected >= 2", k->where,
                       x->rank);
    int64_t ch = x->dims[1], inner = gl_dims_product(x->dims, 2, x->rank);
    if ((st = need_param_vectors(k, 1, 2, names, ch)))
        return st;
    double eps = gl_node_attr_float(k->node, "epsilon", 1e-5f);
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    double *v[3] = {0};
    if (!load_many(k, 0, 3, v))
        return nomem(k->where);
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t c = 0; c < ch; c++) {
            double *p = v[0] + (n * ch + c) * inner, mean, var;
            channel_stats(p, 1, 1, inner, &mean, &var);
            double a = v[1][c] / sqrt(var + eps);
            for (int64_t i = 0; i < inner; i++)
                p[i] = a * (p[i] - mean) + v[2][c];
        }
    gl_tensor_store_f64(y, v[0], false);
    free_many(v, 3);
    return GL_OK;
}

/* Scale and B broadcast (one way) to X: the operand's element offset for each X element,
 * in row-major order, or false when it does not broadcast. */
static gl_status one_way_offsets(gl_kernel_ctx *k, const gl_tensor *x, const gl_tensor *t,
                                 const char *name, int64_t **offs)
{
    gl_bcast b;
    const gl_tensor *ts[2] = {x, t};
    *offs = NULL;
    if (gl_bcast_init(&b, ts, 2, k->where) != GL_OK || b.rank != x->rank ||
        memcmp(b.dims, x->dims, (size_t)x->rank * sizeof(int64_t)) != 0)
        return gl_fail(GL_ERR_INPUT, "%s: input '%s' does not broadcast to X's shape",
                       k->where, name);
    *offs = malloc((size_t)(x->count ? x->count : 1) * sizeof(int64_t));
    if (!*offs)
        return nomem(k->where);
    gl_bcast_iter it;
    gl_bcast_iter_start(&it, &b);
    for (int64_t i = 0; i < b.count; i++, gl_bcast_iter_next(&it))
        (*offs)[i] = it.off[1];
    return GL_OK;
}

/* The shape of LayerNormalization's Mean and InvStdDev: X's dims before axis, 1 after. */
static void reduced_dims(const gl_tensor *x, int axis, int64_t *dims)
{
    for (int d = 0; d < x->rank; d++)
        dims[d] = d < axis ? x->dims[d] : 1;
}

static gl_dtype stash_dtype(const gl_node *n)
{
    int64_t st = gl_node_attr_int(n, "stash_type", GL_DT_FLOAT);
    return gl_dtype_valid((int)st) && gl_dtype_is_float((gl_dtype)st) ? (gl_dtype)st
                                                                   : GL_DT_FLOAT;
}

static gl_status layernorm_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "X");
    const gl_tensor *scale = x ? gl_need_input(k, 1, "Scale") : NULL;
    if (!scale)
        return GL_ERR_INPUT;
    const gl_tensor *bias = opt_input(k, 2);
    gl_status st;
    if ((st = need_float(k, x, "X")) || (st = need_float(k, scale, "Scale")) ||
        (bias && (st = need_float(k, bias, "B"))))
        return st;
    int axis;
    if (!gl_axis_normalize(gl_node_attr_int(k->node, "axis", -1), x->rank, false, k->where,
                           "axis", &axis))
        return GL_ERR_INPUT;
    double eps = gl_node_attr_float(k->node, "epsilon", 1e-5f);
    int64_t rows = gl_dims_product(x->dims, 0, axis);
    int64_t cols = gl_dims_product(x->dims, axis, x->rank);
    int64_t *s_off = NULL, *b_off = NULL;
    if ((st = one_way_offsets(k, x, scale, "Scale", &s_off)) ||
        (bias && (st = one_way_offsets(k, x, bias, "B", &b_off)))) {
        free(s_off);
        return st;
    }
    int64_t rdims[GL_MAX_RANK];
    reduced_dims(x, axis, rdims);
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, x->dims);
    gl_tensor *mean_t = y && gl_out_wanted(k, 1)
                            ? gl_out_new(k, 1, stash_dtype(k->node), x->rank, rdims) : NULL;
    gl_tensor *inv_t = y && gl_out_wanted(k, 2)
                           ? gl_out_new(k, 2, stash_dtype(k->node), x->rank, rdims) : NULL;
    double *xv = gl_tensor_to_f64(x, k->where), *sv = gl_tensor_to_f64(scale, k->where);
    double *bv = bias ? gl_tensor_to_f64(bias, k->where) : NULL;
    double *stats = malloc((size_t)(2 * rows + 1) * sizeof(double));
    if (!y || (gl_out_wanted(k, 1) && !mean_t) || (gl_out_wanted(k, 2) && !inv_t) || !xv ||
        !sv || (bias && !bv) || !stats) {
        st = nomem(k->where);
    } else {
        for (int64_t r = 0; r < rows; r++) {
            double *p = xv + r * cols, mean, var;
            channel_stats(p, 1, 1, cols, &mean, &var);
            double inv = 1.0 / sqrt(var + eps);
            for (int64_t i = 0; i < cols; i++) {
                int64_t e = r * cols + i;
                p[i] = (p[i] - mean) * inv * sv[s_off[e]] + (bv ? bv[b_off[e]] : 0.0);
            }
            stats[r] = mean;
            stats[rows + r] = inv;
        }
        gl_tensor_store_f64(y, xv, false);
        if (mean_t)
            gl_tensor_store_f64(mean_t, stats, false);
        if (inv_t)
            gl_tensor_store_f64(inv_t, stats + rows, false);
    }
    free(xv);
    free(sv);
    free(bv);
    free(stats);
    free(s_off);
    free(b_off);
    return st;
}

static gl_status layernorm_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    gl_infer_set(c, 0, x->dtype, &x->shape);
    if (x->shape.rank == GL_RANK_UNKNOWN) {
        for (size_t o = 1; o < c->n_outputs && o <= 2; o++)
            gl_infer_set_rank(c, o, stash_dtype(c->node), GL_RANK_UNKNOWN);
        return GL_OK;
    }
    int axis;
    if (!gl_axis_normalize(gl_node_attr_int(c->node, "axis", -1), x->shape.rank, false,
                           c->where, "axis", &axis))
        return GL_ERR_INPUT;
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, x->shape.rank);
    for (int d = 0; d < s.rank; d++) {
        if (d < axis)
            gl_dim_copy(&s.dims[d], &x->shape.dims[d]);
        else
            s.dims[d].value = 1;
    }
    for (size_t o = 1; o < c->n_outputs && o <= 2; o++)
        if (c->node->outputs[o])
            gl_infer_set(c, o, stash_dtype(c->node), &s);
    gl_shape_free(&s);
    return GL_OK;
}

/* Local response normalization across channels:
 * y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta. */
static gl_status lrn_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "X");
    if (!x)
        return GL_ERR_INPUT;
    gl_status st = need_float(k, x, "X");
    if (st)
        return st;
    if (x->rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: input X has rank %d, expected >= 2", k->where,
                       x->rank);
    int64_t size = gl_node_attr_int(k->node, "size", 0);
    if (size < 1)
        return gl_fail(GL_ERR_INPUT, "%s: attribute size must be given and positive",
                       k->where);
    double alpha = gl_node_attr_float(k->node, "alpha", 1e-4f);
    double beta = gl_node_attr_float(k->node, "beta", 0.75f);
    double bias = gl_node_attr_float(k->node, "bias", 1.0f);
    int64_t ch = x->dims[1], inner = gl_dims_product(x->dims, 2, x->rank);
    int64_t before = (size - 1) / 2, after = size - 1 - before;
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    double *xv = gl_tensor_to_f64(x, k->where);
    double *yv = malloc((size_t)(x->count ? x->count : 1) * sizeof(double));
    if (!xv || !yv) {
        free(xv);
        free(yv);
        return nomem(k->where);
    }
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t c = 0; c < ch; c++) {
            int64_t lo = c - before < 0 ? 0 : c - before;
            int64_t hi = c + after >= ch ? ch - 1 : c + after;
            for (int64_t i = 0; i < inner; i++) {
                double sq = 0;
                for (int64_t j = lo; j <= hi; j++) {
                    double v = xv[(n * ch + j) * inner + i];
                    sq += v * v;
                }
                int64_t e = (n * ch + c) * inner + i;
                yv[e] = xv[e] / pow(bias + alpha / (double)size * sq, beta);
            }
        }
    gl_tensor_store_f64(y, yv, false);
    free(xv);
    free(yv);
    return GL_OK;
}

/* For every element of a tensor of `dims`, the index of its group when the dims in
 * `reduced` are collapsed (row-major over the kept dims). */
static void group_ids(const int64_t *dims, int rank, const bool *reduced, int64_t *ids)
{
    int64_t gstride[GL_MAX_RANK], s = 1, idx[GL_MAX_RANK] = {0};
    for (int d = rank - 1; d >= 0; d--) {
        gstride[d] = reduced[d] ? 0 : s;
        if (!reduced[d])
            s *= dims[d];
    }
    int64_t count = gl_dims_product(dims, 0, rank), g = 0;
    for (int64_t i = 0; i < count; i++) {
        ids[i] = g;
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < dims[d]) {
                g += gstride[d];
                break;
            }
            g -= gstride[d] * (dims[d] - 1);
            idx[d] = 0;
        }
    }
}

/* (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes` (default N, H, W): the ONNX
 * function body's formula, epsilon added to the deviation. */
static gl_status mvn_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "X");
    if (!x)
        return GL_ERR_INPUT;
    gl_status st = need_float(k, x, "X");
    if (st)
        return st;
    static const int64_t default_axes[] = {0, 2, 3};
    size_t n_axes;
    const int64_t *axes = gl_attr_ints(k->node, "axes", &n_axes);
    if (!axes) {
        axes = default_axes;
        n_axes = 3;
    }
    bool reduced[GL_MAX_RANK] = {false};
    for (size_t i = 0; i < n_axes; i++) {
        int a;
        if (!gl_axis_normalize(axes[i], x->rank, false, k->where, "axes value", &a))
            return GL_ERR_INPUT;
        reduced[a] = true;
    }
    int64_t groups = 1;
    for (int d = 0; d < x->rank; d++)
        if (!reduced[d])
            groups *= x->dims[d];
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    double *xv = gl_tensor_to_f64(x, k->where);
    double *acc = calloc((size_t)(3 * groups + 1), sizeof(double));
    int64_t *ids = malloc((size_t)(x->count ? x->count : 1) * sizeof(int64_t));
    if (!xv || !acc || !ids) {
        free(xv);
        free(acc);
        free(ids);
        return nomem(k->where);
    }
    group_ids(x->dims, x->rank, reduced, ids);
    double *sum = acc, *sq = acc + groups, *cnt = acc + 2 * groups;
    for (int64_t i = 0; i < x->count; i++) {
        sum[ids[i]] += xv[i];
        sq[ids[i]] += xv[i] * xv[i];
        cnt[ids[i]] += 1;
    }
    for (int64_t g = 0; g < groups; g++) {
        double m = cnt[g] > 0 ? sum[g] / cnt[g] : 0, var = cnt[g] > 0 ? sq[g] / cnt[g] - m * m : 0;
        sum[g] = m;
        sq[g] = sqrt(var > 0 ? var : 0) + 1e-9;
    }
    for (int64_t i = 0; i < x->count; i++)
        xv[i] = (xv[i] - sum[ids[i]]) / sq[ids[i]];
    gl_tensor_store_f64(y, xv, false);
    free(xv);
    free(acc);
    free(ids);
    return GL_OK;
}

static gl_status like_x_infer(gl_infer_ctx *c)
{
    return gl_infer_like_input(c, 0, 0);
}

/* ==== Dropout ============================================================================ */

/* Inference Dropout is the identity with an all-ones mask. Training mode (opset >= 12,
 * training_mode input true) with a ratio above 0 draws random numbers, which a
 * reference kernel cannot reproduce: it is refused rather than faked. */
static gl_status dropout_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data");
    if (!x)
        return GL_ERR_INPUT;
    const gl_tensor *ratio_t = opt_input(k, 1), *train_t = opt_input(k, 2);
    double ratio = k->opset >= 12 ? (ratio_t ? gl_elem_f64(ratio_t, 0) : 0.5)
                                  : gl_node_attr_float(k->node, "ratio", 0.5f);
    bool training = k->opset >= 12 && train_t && gl_elem_f64(train_t, 0) != 0;
    if (training && (ratio < 0 || ratio >= 1))
        return gl_fail(GL_ERR_INPUT, "%s: ratio %g is outside [0, 1)", k->where, ratio);
    if (training && ratio > 0)
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: training-mode Dropout (ratio %g) is random",
                       k->where, ratio);
    if (!gl_out_share(k, 0, x))
        return GL_ERR_INTERNAL;
    if (!gl_out_wanted(k, 1))
        return GL_OK;
    gl_dtype mdt = k->opset >= 10 ? GL_DT_BOOL : x->dtype;
    gl_tensor *mask = gl_out_new(k, 1, mdt, x->rank, x->dims);
    if (!mask)
        return GL_ERR_NOMEM;
    for (int64_t i = 0; i < mask->count; i++)
        gl_elem_set_f64(mask, i, 1.0);
    return GL_OK;
}

static gl_status dropout_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    gl_infer_set(c, 0, x->dtype, &x->shape);
    if (c->n_outputs > 1 && c->node->outputs[1])
        gl_infer_set(c, 1, c->opset >= 10 ? GL_DT_BOOL : x->dtype, &x->shape);
    return GL_OK;
}

/* ==== Resize and Upsample ================================================================ */

typedef enum rs_mode { RS_NEAREST, RS_LINEAR, RS_CUBIC } rs_mode;

typedef enum rs_coord {
    RC_HALF_PIXEL, RC_HALF_PIXEL_SYMMETRIC, RC_ASYMMETRIC, RC_PYTORCH_HALF_PIXEL,
    RC_TF_HALF_PIXEL_FOR_NN, RC_ALIGN_CORNERS, RC_TF_CROP_AND_RESIZE,
} rs_coord;

/* RN_SIMPLE is the rounding of Upsample and Resize-10, which had no nearest_mode (as
 * ONNX Runtime keeps it): truncate when upsampling, round up when downsampling. */
typedef enum rs_nearest { RN_SIMPLE, RN_PREFER_FLOOR, RN_PREFER_CEIL, RN_FLOOR, RN_CEIL } rs_nearest;

typedef enum rs_aspect { RA_STRETCH, RA_NOT_LARGER, RA_NOT_SMALLER } rs_aspect;

typedef struct resize_attrs {
    bool upsample;   /* the Upsample op (scales as attribute before opset 9) */
    rs_mode mode;
    rs_coord coord;
    rs_nearest nearest;
    rs_aspect aspect;
    double cubic_a, extrapolation;
    bool exclude_outside;
    const int64_t *axes; /* opset 18: the dims that scales/sizes/roi talk about */
    size_t n_axes;
} resize_attrs;

typedef struct name_value {
    const char *name;
    int value;
} name_value;

static gl_status lookup_name(const gl_node *n, const char *where, const char *attr,
                             const char *dflt, const name_value *table, size_t count,
                             int *out)
{
    const char *s = gl_node_attr_string(n, attr, dflt);
    for (size_t i = 0; i < count; i++) {
        if (strcmp(s, table[i].name) == 0) {
            *out = table[i].value;
            return GL_OK;
        }
    }
    return gl_fail(GL_ERR_INPUT, "%s: %s '%s' is not supported", where, attr, s);
}

static gl_status read_resize_attrs(const gl_node *n, const char *where, int64_t opset,
                                   bool upsample, resize_attrs *a)
{
    static const name_value modes[] = {
        {"nearest", RS_NEAREST}, {"linear", RS_LINEAR}, {"bilinear", RS_LINEAR},
        {"cubic", RS_CUBIC},
    };
    static const name_value coords[] = {
        {"half_pixel", RC_HALF_PIXEL}, {"half_pixel_symmetric", RC_HALF_PIXEL_SYMMETRIC},
        {"asymmetric", RC_ASYMMETRIC}, {"pytorch_half_pixel", RC_PYTORCH_HALF_PIXEL},
        {"tf_half_pixel_for_nn", RC_TF_HALF_PIXEL_FOR_NN},
        {"align_corners", RC_ALIGN_CORNERS}, {"tf_crop_and_resize", RC_TF_CROP_AND_RESIZE},
    };
    static const name_value nearests[] = {
        {"round_prefer_floor", RN_PREFER_FLOOR}, {"round_prefer_ceil", RN_PREFER_CEIL},
        {"floor", RN_FLOOR}, {"ceil", RN_CEIL},
    };
    static const name_value aspects[] = {
        {"stretch", RA_STRETCH}, {"not_larger", RA_NOT_LARGER},
        {"not_smaller", RA_NOT_SMALLER},
    };
    memset(a, 0, sizeof(*a));
    a->upsample = upsample;
    a->cubic_a = gl_node_attr_float(n, "cubic_coeff_a", -0.75f);
    a->extrapolation = gl_node_attr_float(n, "extrapolation_value", 0.0f);
    a->exclude_outside = gl_node_attr_int(n, "exclude_outside", 0) != 0;
    int mode = RS_NEAREST, coord = RC_ASYMMETRIC, nearest = RN_SIMPLE, aspect = RA_STRETCH;
    gl_status st = lookup_name(n, where, "mode", "nearest", modes, GL_ARRAY_LEN(modes), &mode);
    if (st == GL_OK && !upsample && opset >= 11) {
        if ((st = lookup_name(n, where, "coordinate_transformation_mode", "half_pixel",
                              coords, GL_ARRAY_LEN(coords), &coord)) == GL_OK)
            st = lookup_name(n, where, "nearest_mode", "round_prefer_floor", nearests,
                             GL_ARRAY_LEN(nearests), &nearest);
    }
    if (st == GL_OK && !upsample && opset >= 18) {
        st = lookup_name(n, where, "keep_aspect_ratio_policy", "stretch", aspects,
                         GL_ARRAY_LEN(aspects), &aspect);
        a->axes = gl_attr_ints(n, "axes", &a->n_axes);
        if (st == GL_OK && gl_node_attr_int(n, "antialias", 0) != 0)
            st = gl_fail(GL_ERR_UNSUPPORTED, "%s: antialias=1 is not supported", where);
    }
    a->mode = (rs_mode)mode;
    a->coord = (rs_coord)coord;
    a->nearest = (rs_nearest)nearest;
    a->aspect = (rs_aspect)aspect;
    return st;
}

/* What the op asks for, per dim of X: scales or sizes, and the roi. */
typedef struct resize_request {
    int rank;
    bool by_sizes;
    double scales[GL_MAX_RANK]; /* by scales: as given (float32 values) */
    int64_t sizes[GL_MAX_RANK]; /* by sizes; -1 for dims the axes leave alone */
    double roi_lo[GL_MAX_RANK], roi_hi[GL_MAX_RANK];
} resize_request;

/* The dim each entry of scales/sizes/roi refers to (axes, or all dims). */
static gl_status resize_axes(const resize_attrs *a, int rank, const char *where, int *dims,
                             size_t *n)
{
    if (!a->axes) {
        for (int d = 0; d < rank; d++)
            dims[d] = d;
        *n = (size_t)rank;
        return GL_OK;
    }
    bool seen[GL_MAX_RANK] = {false};
    for (size_t i = 0; i < a->n_axes; i++) {
        if (!gl_axis_normalize(a->axes[i], rank, false, where, "axes value", &dims[i]))
            return GL_ERR_INPUT;
        if (seen[dims[i]])
            return gl_fail(GL_ERR_INPUT, "%s: axis %d repeats in axes", where, dims[i]);
        seen[dims[i]] = true;
    }
    *n = a->n_axes;
    return GL_OK;
}

/* Fill r from the scales/sizes/roi tensors (any may be NULL: not given). */
static gl_status resize_request_from(const resize_attrs *a, int rank, const char *where,
                                     const gl_tensor *roi, const gl_tensor *scales,
                                     const gl_tensor *sizes, const float *attr_scales,
                                     size_t n_attr_scales, resize_request *r)
{
    int dims[GL_MAX_RANK];
    size_t n = 0;
    gl_status st = resize_axes(a, rank, where, dims, &n);
    if (st)
        return st;
    memset(r, 0, sizeof(*r));
    r->rank = rank;
    for (int d = 0; d < rank; d++) {
        r->scales[d] = 1.0;
        r->sizes[d] = -1;
        r->roi_lo[d] = 0.0;
        r->roi_hi[d] = 1.0;
    }
    if ((scales || attr_scales) && sizes)
        return gl_fail(GL_ERR_INPUT, "%s: only one of scales and sizes may be given", where);
    if (!scales && !attr_scales && !sizes)
        return gl_fail(GL_ERR_INPUT, "%s: one of scales and sizes is required", where);
    if (sizes) {
        if (!gl_dtype_is_int(sizes->dtype) || sizes->count != (int64_t)n)
            return gl_fail(GL_ERR_INPUT, "%s: sizes must hold %zu integers", where, n);
        r->by_sizes = true;
        for (size_t i = 0; i < n; i++)
            if ((r->sizes[dims[i]] = gl_elem_i64(sizes, (int64_t)i)) < 0)
                return gl_fail(GL_ERR_INPUT, "%s: sizes[%zu] is negative", where, i);
    } else {
        size_t cnt = scales ? (size_t)scales->count : n_attr_scales;
        if ((scales && !gl_dtype_is_float(scales->dtype)) || cnt != n)
            return gl_fail(GL_ERR_INPUT, "%s: scales must hold %zu floats", where, n);
        for (size_t i = 0; i < n; i++) {
            double s = scales ? gl_elem_f64(scales, (int64_t)i) : attr_scales[i];
            if (!(s > 0) || (a->upsample && s < 1))
                return gl_fail(GL_ERR_INPUT, "%s: scale %g is out of range", where, s);
            r->scales[dims[i]] = s;
        }
    }
    if (roi && a->coord == RC_TF_CROP_AND_RESIZE) {
        if (roi->count != 2 * (int64_t)n || !gl_dtype_is_float(roi->dtype))
            return gl_fail(GL_ERR_INPUT, "%s: roi must hold %zu floats", where, 2 * n);
        for (size_t i = 0; i < n; i++) {
            r->roi_lo[dims[i]] = gl_elem_f64(roi, (int64_t)i);
            r->roi_hi[dims[i]] = gl_elem_f64(roi, (int64_t)(n + i));
        }
    }
    return GL_OK;
}

/* Output dims, the scale each dim uses, and the output "length" the coordinate
 * transforms divide by. Like onnx's reference, that length is scale * input length
 * (in float32 when the scale came as a float32), not the rounded output size: it only
 * matters for align_corners/tf_crop_and_resize/pytorch_half_pixel with scales that
 * do not divide evenly, where it is what the conformance outputs were made with. */
static gl_status resize_out_dims(const resize_attrs *a, const resize_request *r,
                                 const int64_t *in, const char *where, int64_t *out,
                                 double *scale, double *out_len)
{
    double common = -1;
    if (r->by_sizes && a->aspect != RA_STRETCH) {
        for (int d = 0; d < r->rank; d++) {
            if (r->sizes[d] < 0 || in[d] == 0)
                continue;
            double s = (double)r->sizes[d] / (double)in[d];
            if (common < 0 || (a->aspect == RA_NOT_LARGER ? s < common : s > common))
                common = s;
        }
    }
    for (int d = 0; d < r->rank; d++) {
        double len;
        if (r->by_sizes && r->sizes[d] >= 0) {
            scale[d] = common >= 0 ? common
                       : in[d] ? (double)r->sizes[d] / (double)in[d] : 1.0;
            len = common >= 0 ? round(common * (double)in[d]) : (double)r->sizes[d];
            out_len[d] = scale[d] * (double)in[d];
        } else {
            scale[d] = r->scales[d];
            len = floor(scale[d] * (double)in[d]);
            out_len[d] = (double)((float)scale[d] * (float)in[d]);
        }
        if (!(len >= 0 && len <= (double)GL_WINDOW_MAX_DIM))
            return gl_fail(GL_ERR_INPUT, "%s: output dimension %d would be %g", where, d, len);
        out[d] = (int64_t)len;
    }
    return GL_OK;
}

/* Interpolation taps of one dim: for output position o, n[o] pairs (input index, weight),
 * or n[o] == 0 when the position lies outside the crop (tf_crop_and_resize). */
typedef struct axis_taps {
    int64_t *idx; /* 4 per output position, already multiplied by the dim's stride */
    double *w;    /* 4 per output position */
    uint8_t *n;
} axis_taps;

/* Where output position o falls in input coordinates. */
static double resize_source(const resize_attrs *a, double o, int64_t in, double scale,
                            double out_len, int64_t out, double lo, double hi, bool *outside)
{
    double x;
    *outside = false;
    switch (a->coord) {
    case RC_ASYMMETRIC: return o / scale;
    case RC_TF_HALF_PIXEL_FOR_NN: return (o + 0.5) / scale;
    case RC_PYTORCH_HALF_PIXEL: return out_len == 1 ? -0.5 : (o + 0.5) / scale - 0.5;
    case RC_ALIGN_CORNERS:
        return out_len == 1 ? 0.0 : o * (double)(in - 1) / (out_len - 1);
    case RC_HALF_PIXEL_SYMMETRIC: {
        double adjust = (double)out / out_len, center = (double)in / 2;
        return center * (1 - adjust) + (o + 0.5) / scale - 0.5;
    }
    case RC_TF_CROP_AND_RESIZE:
        x = out_len == 1 ? (hi - lo) * (double)(in - 1) / 2
                         : o * (hi - lo) * (double)(in - 1) / (out_len - 1);
        x += lo * (double)(in - 1);
        *outside = x < 0 || x > (double)(in - 1);
        return x;
    case RC_HALF_PIXEL:
        break;
    }
    return (o + 0.5) / scale - 0.5;
}

static void cubic_coeffs(double t, double A, double *c)
{
    double s = t + 1, u = 1 - t, v = 2 - t;
    c[0] = ((A * s - 5 * A) * s + 8 * A) * s - 4 * A;
    c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    c[2] = ((A + 2) * u - (A + 3)) * u * u + 1;
    c[3] = ((A * v - 5 * A) * v + 8 * A) * v - 4 * A;
}

/* The taps of one output position. A source position that is a whole number x is taken
 * as ratio 1 past x - 1 (onnx's reference does so), which gives the same result as
 * ratio 0 at x for every mode. Indices are clamped to the input (edge padding). */
static int resize_taps_at(const resize_attrs *a, double x, int64_t in, double scale,
                          int64_t *idx, double *w)
{
    double fl = floor(x), ratio = x - fl;
    int64_t left = (int64_t)fl, first = left;
    int n = 0;
    if (ratio == 0) {
        ratio = 1;
        left -= 1;
        first = left;
    }
    if (a->mode == RS_NEAREST) {
        int64_t pick;
        switch (a->nearest) {
        case RN_SIMPLE: pick = scale < 1 ? (int64_t)ceil(x) : (int64_t)x; break;
        case RN_FLOOR: pick = ratio == 1 ? left + 1 : left; break;
        case RN_CEIL: pick = left + 1; break;
        case RN_PREFER_CEIL: pick = ratio < 0.5 ? left : left + 1; break;
        default: pick = ratio <= 0.5 ? left : left + 1; break;
        }
        idx[0] = pick;
        w[0] = 1;
        n = 1;
    } else if (a->mode == RS_LINEAR) {
        idx[0] = left;
        idx[1] = left + 1;
        w[0] = 1 - ratio;
        w[1] = ratio;
        n = 2;
    } else {
        first = left - 1;
        cubic_coeffs(ratio, a->cubic_a, w);
        for (int i = 0; i < 4; i++)
            idx[i] = first + i;
        n = 4;
        if (a->exclude_outside) {
            double sum = 0;
            for (int i = 0; i < 4; i++) {
                if (idx[i] < 0 || idx[i] >= in)
                    w[i] = 0;
                sum += w[i];
            }
            for (int i = 0; i < 4 && sum != 0; i++)
                w[i] /= sum;
        }
    }
    /* Clamp, and drop taps that do not contribute. */
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (w[i] == 0 && !(kept == 0 && i == n - 1))
            continue;
        idx[kept] = idx[i] < 0 ? 0 : idx[i] >= in ? in - 1 : idx[i];
        w[kept++] = w[i];
    }
    return kept;
}

static void resize_axis(const resize_attrs *a, const resize_request *r, int d, int64_t in,
                        int64_t out, double scale, double out_len, int64_t stride,
                        axis_taps *t)
{
    for (int64_t o = 0; o < out; o++) {
        bool outside;
        double x = resize_source(a, (double)o, in, scale, out_len, out, r->roi_lo[d],
                                 r->roi_hi[d], &outside);
        if (!(fabs(x) < 1e15)) /* a NaN or absurd roi: nothing to interpolate */
            outside = true;
        int64_t *idx = t->idx + 4 * o;
        double *w = t->w + 4 * o;
        t->n[o] = outside ? 0 : (uint8_t)resize_taps_at(a, x, in, scale, idx, w);
        for (int i = 0; i < t->n[o]; i++)
            idx[i] *= stride;
    }
}

/* y at every output position: the weighted sum over the product of the dims' taps. */
static void resize_apply(const double *x, double *y, int rank, const int64_t *out,
                         const axis_taps *t, double extrapolation)
{
    int64_t o[GL_MAX_RANK] = {0}, sel[GL_MAX_RANK];
    int64_t count = gl_dims_product(out, 0, rank);
    for (int64_t e = 0; e < count; e++, gl_odometer_next(o, out, rank)) {
        bool outside = false;
        for (int d = 0; d < rank && !outside; d++)
            outside = t[d].n[o[d]] == 0;
        if (outside) {
            y[e] = extrapolation;
            continue;
        }
        memset(sel, 0, (size_t)rank * sizeof(int64_t));
        double acc = 0;
        for (;;) {
            double w = 1;
            int64_t off = 0;
            for (int d = 0; d < rank; d++) {
                w *= t[d].w[4 * o[d] + sel[d]];
                off += t[d].idx[4 * o[d] + sel[d]];
            }
            acc += w * x[off];
            int d = rank - 1;
            for (; d >= 0; d--) {
                if (++sel[d] < t[d].n[o[d]])
                    break;
                sel[d] = 0;
            }
            if (d < 0)
                break;
        }
        y[e] = acc;
    }
}

static gl_status resize_run(gl_kernel_ctx *k, const resize_attrs *a, const resize_request *r)
{
    const gl_tensor *x = k->in[0];
    int rank = x->rank;
    int64_t out[GL_MAX_RANK], strides[GL_MAX_RANK];
    double scale[GL_MAX_RANK], out_len[GL_MAX_RANK];
    gl_status st = resize_out_dims(a, r, x->dims, k->where, out, scale, out_len);
    if (st)
        return st;
    for (int d = 0; d < rank; d++)
        if (x->dims[d] == 0 && out[d] > 0)
            return gl_fail(GL_ERR_INPUT, "%s: cannot resize an empty dimension %d to %lld",
                           k->where, d, (long long)out[d]);
    gl_tensor *y = gl_out_new(k, 0, x->dtype, rank, out);
    if (!y)
        return GL_ERR_NOMEM;
    if (y->count == 0)
        return GL_OK;
    gl_strides(x->dims, rank, strides);
    axis_taps taps[GL_MAX_RANK] = {{0}};
    double *xv = gl_tensor_to_f64(x, k->where), *yv = malloc((size_t)y->count * sizeof(double));
    bool ok = xv && yv;
    for (int d = 0; d < rank && ok; d++) {
        taps[d].idx = malloc((size_t)out[d] * 4 * sizeof(int64_t));
        taps[d].w = malloc((size_t)out[d] * 4 * sizeof(double));
        taps[d].n = malloc((size_t)out[d]);
        ok = taps[d].idx && taps[d].w && taps[d].n;
        if (ok)
            resize_axis(a, r, d, x->dims[d], out[d], scale[d], out_len[d], strides[d],
                        &taps[d]);
    }
    if (ok) {
        resize_apply(xv, yv, rank, out, taps, a->extrapolation);
        gl_tensor_store_f64(y, yv, true);
    }
    for (int d = 0; d < rank; d++) {
        free(taps[d].idx);
        free(taps[d].w);
        free(taps[d].n);
    }
    free(xv);
    free(yv);
    return ok ? GL_OK : nomem(k->where);
}

/* Resize-10 and Upsample take (X, scales); Upsample-7 has scales as an attribute;
 * Resize from 11 takes (X, roi, scales, sizes). */
static gl_status resize_common(gl_kernel_ctx *k, bool upsample)
{
    const gl_tensor *x = gl_need_input(k, 0, "X");
    if (!x)
        return GL_ERR_INPUT;
    if (x->dtype == GL_DT_STRING || x->dtype == GL_DT_COMPLEX64 ||
        x->dtype == GL_DT_COMPLEX128)
        return gl_fail(GL_ERR_INPUT, "%s: input X has unsupported type %s", k->where,
                       gl_dtype_name(x->dtype));
    resize_attrs a;
    gl_status st = read_resize_attrs(k->node, k->where, k->opset, upsample, &a);
    if (st)
        return st;
    resize_request r;
    size_t n_attr = 0;
    const float *attr_scales = upsample && k->opset < 9
                                   ? gl_attr_floats(k->node, "scales", &n_attr) : NULL;
    bool legacy = upsample || k->opset < 11;
    st = resize_request_from(&a, x->rank, k->where, legacy ? NULL : opt_input(k, 1),
                             attr_scales ? NULL : opt_input(k, legacy ? 1 : 2),
                             legacy ? NULL : opt_input(k, 3), attr_scales, n_attr, &r);
    return st ? st : resize_run(k, &a, &r);
}

static gl_status resize_kernel(gl_kernel_ctx *k) { return resize_common(k, false); }
static gl_status upsample_kernel(gl_kernel_ctx *k) { return resize_common(k, true); }

static gl_status resize_infer_common(gl_infer_ctx *c, bool upsample)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int rank = x->shape.rank;
    if (rank == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
        return GL_OK;
    }
    resize_attrs a;
    gl_status st = read_resize_attrs(c->node, c->where, c->opset, upsample, &a);
    if (st)
        return st;
    bool legacy = upsample || c->opset < 11;
    const gl_tensor *vals[4] = {NULL};
    bool given[4] = {false};
    for (size_t i = 1; i < 4 && i < c->n_inputs; i++) {
        given[i] = c->in_types[i] != NULL;
        vals[i] = c->in_values ? c->in_values[i] : NULL;
        if (vals[i] && vals[i]->count == 0) {
            vals[i] = NULL; /* an empty tensor means "not given" */
            given[i] = false;
        }
    }
    size_t n_attr = 0;
    const float *attr_scales = upsample && c->opset < 9
                                   ? gl_attr_floats(c->node, "scales", &n_attr) : NULL;
    size_t si = legacy ? 1 : 2;
    /* A scales/sizes input computed at run time leaves the dims unknown. */
    bool known = attr_scales || (given[si] ? vals[si] != NULL
                                           : !legacy && given[3] && vals[3] != NULL);
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, rank);
    resize_request r;
    if (known) {
        st = resize_request_from(&a, rank, c->where, NULL, attr_scales ? NULL : vals[si],
                                 legacy ? NULL : vals[3], attr_scales, n_attr, &r);
        bool all_in = true;
        int64_t in[GL_MAX_RANK], out[GL_MAX_RANK];
        double scale[GL_MAX_RANK], out_len[GL_MAX_RANK];
        for (int d = 0; d < rank; d++) {
            in[d] = x->shape.dims[d].value;
            all_in = all_in && in[d] >= 0;
        }
        for (int d = 0; d < rank && st == GL_OK; d++) {
            bool plain = !r.by_sizes || a.aspect == RA_STRETCH;
            if (r.by_sizes && r.sizes[d] >= 0 && plain)
                s.dims[d].value = r.sizes[d];
            else if ((r.by_sizes ? r.sizes[d] < 0 : r.scales[d] == 1.0) && plain)
                gl_dim_copy(&s.dims[d], &x->shape.dims[d]);
        }
        /* Dims the scales change need the input length; the aspect policies need all. */
        if (st == GL_OK && all_in)
            st = resize_out_dims(&a, &r, in, c->where, out, scale, out_len);
        for (int d = 0; d < rank && st == GL_OK && all_in; d++)
            s.dims[d].value = out[d];
        for (int d = 0; d < rank && st == GL_OK && !all_in && !r.by_sizes; d++) {
            double len = floor(r.scales[d] * (double)in[d]);
            if (in[d] >= 0 && r.scales[d] != 1.0 && len >= 0 && len <= (double)GL_WINDOW_MAX_DIM)
                s.dims[d].value = (int64_t)len;
        }
    }
    if (st == GL_OK)
        gl_infer_set(c, 0, x->dtype, &s);
    gl_shape_free(&s);
    return st;
}

static gl_status resize_infer(gl_infer_ctx *c) { return resize_infer_common(c, false); }
static gl_status upsample_infer(gl_infer_ctx *c) { return resize_infer_common(c, true); }

/* ==== GridSample ========================================================================= */

/* GridSample-16: 4-D input, grid of (x, y) in [-1, 1]; PyTorch's grid_sample semantics
 * (the conformance outputs come from it). */
typedef enum gs_mode { GS_BILINEAR, GS_NEAREST, GS_BICUBIC } gs_mode;
typedef enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECTION } gs_pad;

typedef struct gs_plane {
    const double *x; /* one (n, c) image */
    int64_t h, w;
    gs_pad pad;
    bool align;
} gs_plane;

static double gs_unnormalize(double v, int64_t size, bool align)
{
    return align ? (v + 1) / 2 * (double)(size - 1) : ((v + 1) * (double)size - 1) / 2;
}

/* Reflect v into [twice_lo / 2, twice_hi / 2] (bounds given doubled so that the
 * half-pixel edges -0.5 and size - 0.5 stay integers). */
static double gs_reflect(double v, double twice_lo, double twice_hi)
{
    if (twice_lo == twice_hi)
        return 0;
    double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
    v = fabs(v - lo);
    double extra = fmod(v, span), flips = floor(v / span);
    return fmod(flips, 2.0) == 0 ? extra + lo : span - extra + lo;
}

static double gs_clip(double v, int64_t size)
{
    return v < 0 ? 0 : v > (double)(size - 1) ? (double)(size - 1) : v;
}

/* A source coordinate after the padding mode (zeros leaves it alone). */
static double gs_pad_coord(double v, int64_t size, gs_pad pad, bool align)
{
    if (pad == GS_BORDER)
        return gs_clip(v, size);
    if (pad == GS_REFLECTION) {
        v = align ? gs_reflect(v, 0, 2.0 * (double)(size - 1))
                  : gs_reflect(v, -1, 2.0 * (double)size - 1);
        return gs_clip(v, size);
    }
    return v;
}

/* weight * the pixel at whole-number coordinates (doubles, so that NaN or huge grid
 * values are simply outside); pixels outside the image add nothing, whatever the
 * weight (as in PyTorch, a NaN weight of an outside tap does not poison the sum). */
static double gs_tap(const gs_plane *p, double iy, double ix, double weight)
{
    if (!(iy >= 0 && iy < (double)p->h && ix >= 0 && ix < (double)p->w))
        return 0.0;
    return weight * p->x[(int64_t)iy * p->w + (int64_t)ix];
}

static double gs_sample(const gs_plane *p, gs_mode mode, double gx, double gy)
{
    double ix = gs_unnormalize(gx, p->w, p->align), iy = gs_unnormalize(gy, p->h, p->align);
    if (mode == GS_BICUBIC) {
        /* Taps around the unpadded position; the padding mode maps each tap. */
        double x0 = floor(ix), y0 = floor(iy), cx[4], cy[4], acc = 0;
        cubic_coeffs(ix - x0, -0.75, cx);
        cubic_coeffs(iy - y0, -0.75, cy);
        for (int i = 0; i < 4; i++) {
            double ty = gs_pad_coord(y0 - 1 + i, p->h, p->pad, p->align);
            for (int j = 0; j < 4; j++) {
                double tx = gs_pad_coord(x0 - 1 + j, p->w, p->pad, p->align);
                acc += gs_tap(p, floor(ty), floor(tx), cy[i] * cx[j]);
            }
        }
        return acc;
    }
    ix = gs_pad_coord(ix, p->w, p->pad, p->align);
    iy = gs_pad_coord(iy, p->h, p->pad, p->align);
    if (mode == GS_NEAREST)
        return gs_tap(p, nearbyint(iy), nearbyint(ix), 1.0);
    double x0 = floor(ix), y0 = floor(iy), fx = ix - x0, fy = iy - y0;
    return gs_tap(p, y0, x0, (1 - fx) * (1 - fy)) + gs_tap(p, y0, x0 + 1, fx * (1 - fy)) +
           gs_tap(p, y0 + 1, x0, (1 - fx) * fy) + gs_tap(p, y0 + 1, x0 + 1, fx * fy);
}

static gl_status gridsample_kernel(gl_kernel_ctx *k)
{
    static const name_value modes[] = {
        {"bilinear", GS_BILINEAR}, {"nearest", GS_NEAREST}, {"bicubic", GS_BICUBIC},
    };
    static const name_value pads[] = {
        {"zeros", GS_ZEROS}, {"border", GS_BORDER}, {"reflection", GS_REFLECTION},
    };
    const gl_tensor *x = gl_need_input(k, 0, "X");
    const gl_tensor *grid = x ? gl_need_input(k, 1, "grid") : NULL;
    if (!grid)
        return GL_ERR_INPUT;
    gl_status st;
    if ((st = need_float(k, x, "X")) || (st = need_float(k, grid, "grid")))
        return st;
    if (x->rank != 4 || grid->rank != 4 || grid->dims[0] != x->dims[0] || grid->dims[3] != 2)
        return gl_fail(GL_ERR_INPUT, "%s: X must be [N, C, H, W] and grid [N, H_out, W_out, 2]",
                       k->where);
    int mode = GS_BILINEAR, pad = GS_ZEROS;
    if ((st = lookup_name(k->node, k->where, "mode", "bilinear", modes, GL_ARRAY_LEN(modes),
                          &mode)) ||
        (st = lookup_name(k->node, k->where, "padding_mode", "zeros", pads,
                          GL_ARRAY_LEN(pads), &pad)))
        return st;
    int64_t n_b = x->dims[0], n_c = x->dims[1], ho = grid->dims[1], wo = grid->dims[2];
    int64_t ydims[4] = {n_b, n_c, ho, wo};
    gl_tensor *y = gl_out_new(k, 0, x->dtype, 4, ydims);
    if (!y)
        return GL_ERR_NOMEM;
    double *xv = gl_tensor_to_f64(x, k->where), *gv = gl_tensor_to_f64(grid, k->where);
    double *yv = malloc((size_t)(y->count ? y->count : 1) * sizeof(double));
    if (!xv || !gv || !yv) {
        free(xv);
        free(gv);
        free(yv);
        return nomem(k->where);
    }
    gs_plane p = {.h = x->dims[2], .w = x->dims[3], .pad = (gs_pad)pad,
                  .align = gl_node_attr_int(k->node, "align_corners", 0) != 0};
    for (int64_t n = 0; n < n_b; n++)
        for (int64_t c = 0; c < n_c; c++) {
            p.x = xv + (n * n_c + c) * p.h * p.w;
            const double *g = gv + n * ho * wo * 2;
            double *out = yv + (n * n_c + c) * ho * wo;
            for (int64_t i = 0; i < ho * wo; i++)
                out[i] = gs_sample(&p, (gs_mode)mode, g[2 * i], g[2 * i + 1]);
        }
    gl_tensor_store_f64(y, yv, false);
    free(xv);
    free(gv);
    free(yv);
    return GL_OK;
}

static gl_status gridsample_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0), *g = gl_infer_input(c, 1);
    if (!x)
        return GL_OK;
    if ((x->shape.rank >= 0 && x->shape.rank != 4) || (g && g->shape.rank >= 0 && g->shape.rank != 4))
        return gl_fail(GL_ERR_INPUT, "%s: X and grid must have rank 4", c->where);
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, 4);
    if (x->shape.rank == 4) {
        gl_dim_copy(&s.dims[0], &x->shape.dims[0]);
        gl_dim_copy(&s.dims[1], &x->shape.dims[1]);
    }
    if (g && g->shape.rank == 4) {
        gl_dim_copy(&s.dims[2], &g->shape.dims[1]);
        gl_dim_copy(&s.dims[3], &g->shape.dims[2]);
    }
    gl_infer_set(c, 0, x->dtype, &s);
    gl_shape_free(&s);
    return GL_OK;
}

/* ==== RoiAlign =========================================================================== */

typedef struct roi_box {
    double y0, x0;       /* top-left in input coordinates */
    double bin_h, bin_w; /* one output cell */
    int64_t grid_h, grid_w;
} roi_box;

/* Bilinear sample of one image at (y, x) as RoiAlign defines it: positions more than a
 * pixel outside contribute nothing; inside, coordinates clamp to the last row/column.
 * The four weighted corners go to parts[] (max mode takes the largest of them). */
static void roi_bilinear(const double *img, int64_t h, int64_t w, double y, double x,
                         double *parts)
{
    parts[0] = parts[1] = parts[2] = parts[3] = 0;
    if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w)
        return;
    y = y <= 0 ? 0 : y;
    x = x <= 0 ? 0 : x;
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
    if (yl >= h - 1) {
        yh = yl = h - 1;
        y = (double)yl;
    } else {
        yh = yl + 1;
    }
    if (xl >= w - 1) {
        xh = xl = w - 1;
        x = (double)xl;
    } else {
        xh = xl + 1;
    }
    double ly = y - (double)yl, lx = x - (double)xl, hy = 1 - ly, hx = 1 - lx;
    parts[0] = hy * hx * img[yl * w + xl];
    parts[1] = hy * lx * img[yl * w + xh];
    parts[2] = ly * hx * img[yh * w + xl];
    parts[3] = ly * lx * img[yh * w + xh];
}

static double roi_cell(const double *img, int64_t h, int64_t w, const roi_box *b, int64_t ph,
                       int64_t pw, bool max_mode)
{
    double acc = 0;
    bool first = true;
    for (int64_t iy = 0; iy < b->grid_h; iy++) {
        double y = b->y0 + (double)ph * b->bin_h + ((double)iy + 0.5) * b->bin_h / (double)b->grid_h;
        for (int64_t ix = 0; ix < b->grid_w; ix++) {
            double x = b->x0 + (double)pw * b->bin_w +
                       ((double)ix + 0.5) * b->bin_w / (double)b->grid_w;
            double parts[4];
            roi_bilinear(img, h, w, y, x, parts);
            if (!max_mode) {
                acc += parts[0] + parts[1] + parts[2] + parts[3];
                continue;
            }
            double v = fmax(fmax(parts[0], parts[1]), fmax(parts[2], parts[3]));
            acc = first ? v : fmax(acc, v);
            first = false;
        }
    }
    int64_t count = b->grid_h * b->grid_w;
    return max_mode ? acc : acc / (double)(count > 0 ? count : 1);
}

/* Sampling grid of one roi; `half_pixel` shifts by half a pixel (opset 16's default),
 * output_half_pixel (opset 10) instead makes every roi at least 1x1. */
static gl_status roi_geometry(const double *r, double scale, bool half_pixel, int64_t oh,
                              int64_t ow, int64_t ratio, const char *where, roi_box *b)
{
    double off = half_pixel ? 0.5 : 0.0;
    double x0 = r[0] * scale - off, y0 = r[1] * scale - off;
    double rw = r[2] * scale - off - x0, rh = r[3] * scale - off - y0;
    if (!half_pixel) {
        rw = rw > 1 ? rw : 1;
        rh = rh > 1 ? rh : 1;
    }
    b->y0 = y0;
    b->x0 = x0;
    b->bin_h = rh / (double)oh;
    b->bin_w = rw / (double)ow;
    double gh = ratio > 0 ? (double)ratio : ceil(rh / (double)oh);
    double gw = ratio > 0 ? (double)ratio : ceil(rw / (double)ow);
    /* An absurd roi would make the adaptive grid loop nearly forever. */
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(rw) || !isfinite(rh) || !(gh < 65536) ||
        !(gw < 65536))
        return gl_fail(GL_ERR_INPUT, "%s: roi (%g, %g, %g, %g) is not a usable box", where,
                       r[0], r[1], r[2], r[3]);
    b->grid_h = gh > 0 ? (int64_t)gh : 0;
    b->grid_w = gw > 0 ? (int64_t)gw : 0;
    return GL_OK;
}

static gl_status roialign_kernel(gl_kernel_ctx *k)
{
    static const name_value modes[] = {{"avg", 0}, {"max", 1}};
    static const name_value coords[] = {{"half_pixel", 1}, {"output_half_pixel", 0}};
    const gl_tensor *x = gl_need_input(k, 0, "X");
    const gl_tensor *rois = x ? gl_need_input(k, 1, "rois") : NULL;
    const gl_tensor *bi = rois ? gl_need_input(k, 2, "batch_indices") : NULL;
    if (!bi)
        return GL_ERR_INPUT;
    gl_status st;
    if ((st = need_float(k, x, "X")) || (st = need_float(k, rois, "rois")))
        return st;
    if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 ||
        bi->dims[0] != rois->dims[0] || !gl_dtype_is_int(bi->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: expected X [N, C, H, W], rois [R, 4] and integer "
                       "batch_indices [R]", k->where);
    int max_mode = 0, half_pixel = 0;
    if ((st = lookup_name(k->node, k->where, "mode", "avg", modes, GL_ARRAY_LEN(modes),
                          &max_mode)) ||
        (st = lookup_name(k->node, k->where, "coordinate_transformation_mode",
                          k->opset >= 16 ? "half_pixel" : "output_half_pixel", coords,
                          GL_ARRAY_LEN(coords), &half_pixel)))
        return st;
    int64_t oh = gl_node_attr_int(k->node, "output_height", 1);
    int64_t ow = gl_node_attr_int(k->node, "output_width", 1);
    int64_t ratio = gl_node_attr_int(k->node, "sampling_ratio", 0);
    double scale = gl_node_attr_float(k->node, "spatial_scale", 1.0f);
    if (oh < 1 || ow < 1 || ratio < 0)
        return gl_fail(GL_ERR_INPUT, "%s: output_height/output_width must be positive and "
                       "sampling_ratio not negative", k->where);
    int64_t n_r = rois->dims[0], n_c = x->dims[1], h = x->dims[2], w = x->dims[3];
    int64_t ydims[4] = {n_r, n_c, oh, ow};
    gl_tensor *y = gl_out_new(k, 0, x->dtype, 4, ydims);
    if (!y)
        return GL_ERR_NOMEM;
    double *xv = gl_tensor_to_f64(x, k->where), *rv = gl_tensor_to_f64(rois, k->where);
    double *yv = malloc((size_t)(y->count ? y->count : 1) * sizeof(double));
    st = xv && rv && yv ? GL_OK : nomem(k->where);
    for (int64_t r = 0; r < n_r && st == GL_OK; r++) {
        int64_t b = gl_elem_i64(bi, r);
        roi_box box = {0};
        if (b < 0 || b >= x->dims[0]) {
            st = gl_fail(GL_ERR_INPUT, "%s: batch_indices[%lld] = %lld is outside [0, %lld)",
                         k->where, (long long)r, (long long)b, (long long)x->dims[0]);
            break;
        }
        if ((st = roi_geometry(rv + 4 * r, scale, half_pixel, oh, ow, ratio, k->where, &box)))
            break;
        for (int64_t c = 0; c < n_c; c++) {
            const double *img = xv + (b * n_c + c) * h * w;
            double *out = yv + (r * n_c + c) * oh * ow;
            for (int64_t ph = 0; ph < oh; ph++)
                for (int64_t pw = 0; pw < ow; pw++)
                    out[ph * ow + pw] = h > 0 && w > 0
                                            ? roi_cell(img, h, w, &box, ph, pw, max_mode) : 0;
        }
    }
    if (st == GL_OK)
        gl_tensor_store_f64(y, yv, false);
    free(xv);
    free(rv);
    free(yv);
    return st;
}

static gl_status roialign_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0), *rois = gl_infer_input(c, 1);
    const gl_type *bi = gl_infer_input(c, 2);
    if (!x)
        return GL_OK;
    if ((x->shape.rank >= 0 && x->shape.rank != 4) ||
        (rois && rois->shape.rank >= 0 && rois->shape.rank != 2))
        return gl_fail(GL_ERR_INPUT, "%s: X must have rank 4 and rois rank 2", c->where);
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, 4);
    if (rois && rois->shape.rank == 2)
        gl_dim_copy(&s.dims[0], &rois->shape.dims[0]);
    else if (bi && bi->shape.rank == 1)
        gl_dim_copy(&s.dims[0], &bi->shape.dims[0]);
    if (x->shape.rank == 4)
        gl_dim_copy(&s.dims[1], &x->shape.dims[1]);
    s.dims[2].value = gl_node_attr_int(c->node, "output_height", 1);
    s.dims[3].value = gl_node_attr_int(c->node, "output_width", 1);
    gl_infer_set(c, 0, x->dtype, &s);
    gl_shape_free(&s);
    return GL_OK;
}

/* ==== NonMaxSuppression ================================================================== */

typedef struct nms_box {
    double y0, x0, y1, x1, area;
} nms_box;

typedef struct nms_cand {
    double score;
    int64_t index;
} nms_cand;

/* Best score first; equal scores keep the lower box index first. */
static int nms_cand_cmp(const void *pa, const void *pb)
{
    const nms_cand *a = pa, *b = pb;
    if (isnan(a->score) != isnan(b->score))
        return isnan(a->score) ? 1 : -1; /* NaN scores last, keeping the order total */
    if (a->score != b->score && !isnan(a->score))
        return a->score > b->score ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static nms_box nms_decode(const double *v, bool center)
{
    nms_box b;
    if (center) {
        b.x0 = v[0] - v[2] / 2;
        b.x1 = v[0] + v[2] / 2;
        b.y0 = v[1] - v[3] / 2;
        b.y1 = v[1] + v[3] / 2;
    } else {
        /* Corners may come in either order. */
        b.y0 = fmin(v[0], v[2]);
        b.y1 = fmax(v[0], v[2]);
        b.x0 = fmin(v[1], v[3]);
        b.x1 = fmax(v[1], v[3]);
    }
    b.area = (b.y1 - b.y0) * (b.x1 - b.x0);
    return b;
}

static bool nms_overlaps(const nms_box *a, const nms_box *b, double threshold)
{
    double ih = fmin(a->y1, b->y1) - fmax(a->y0, b->y0);
    double iw = fmin(a->x1, b->x1) - fmax(a->x0, b->x0);
    if (ih <= 0 || iw <= 0 || a->area <= 0 || b->area <= 0)
        return false;
    double inter = ih * iw, uni = a->area + b->area - inter;
    return uni > 0 && inter / uni > threshold;
}

/* Greedy selection for one (batch, class); appends (batch, class, box) triples. */
static void nms_select(const nms_box *boxes, const double *scores, int64_t n, int64_t limit,
                       double iou, bool use_score, double score_threshold, nms_cand *cand,
                       int64_t *chosen, int64_t batch, int64_t cls, int64_t **out,
                       size_t *count, size_t *cap)
{
    int64_t m = 0, picked = 0;
    for (int64_t i = 0; i < n; i++)
        if (!use_score || scores[i] > score_threshold)
            cand[m++] = (nms_cand){scores[i], i};
    qsort(cand, (size_t)m, sizeof(*cand), nms_cand_cmp);
    for (int64_t i = 0; i < m && picked < limit; i++) {
        const nms_box *b = &boxes[cand[i].index];
        bool suppressed = false;
        for (int64_t j = 0; j < picked && !suppressed; j++)
            suppressed = nms_overlaps(&boxes[chosen[j]], b, iou);
        if (suppressed)
            continue;
        chosen[picked++] = cand[i].index;
        GL_GROW(*out, *cap, 3 * (*count + 1));
        (*out)[3 * *count] = batch;
        (*out)[3 * *count + 1] = cls;
        (*out)[3 * *count + 2] = cand[i].index;
        (*count)++;
    }
}

static gl_status nms_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *boxes = gl_need_input(k, 0, "boxes");
    const gl_tensor *scores = boxes ? gl_need_input(k, 1, "scores") : NULL;
    if (!scores)
        return GL_ERR_INPUT;
    gl_status st;
    if ((st = need_float(k, boxes, "boxes")) || (st = need_float(k, scores, "scores")))
        return st;
    if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 ||
        scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
        return gl_fail(GL_ERR_INPUT, "%s: expected boxes [B, S, 4] and scores [B, C, S]",
                       k->where);
    const gl_tensor *max_t = opt_input(k, 2), *iou_t = opt_input(k, 3), *thr_t = opt_input(k, 4);
    int64_t limit = max_t ? gl_elem_i64(max_t, 0) : 0;
    double iou = iou_t ? gl_elem_f64(iou_t, 0) : 0.0;
    double thr = thr_t ? gl_elem_f64(thr_t, 0) : 0.0;
    if (iou < 0 || iou > 1)
        return gl_fail(GL_ERR_INPUT, "%s: iou_threshold %g is outside [0, 1]", k->where, iou);
    bool center = gl_node_attr_int(k->node, "center_point_box", 0) != 0;
    int64_t n_b = boxes->dims[0], n_s = boxes->dims[1], n_c = scores->dims[1];
    double *bv = gl_tensor_to_f64(boxes, k->where), *sv = gl_tensor_to_f64(scores, k->where);
    nms_box *dec = malloc((size_t)(n_s ? n_s : 1) * sizeof(*dec));
    nms_cand *cand = malloc((size_t)(n_s ? n_s : 1) * sizeof(*cand));
    int64_t *chosen = malloc((size_t)(n_s ? n_s : 1) * sizeof(*chosen));
    int64_t *sel = NULL;
    size_t count = 0, cap = 0;
    if (!bv || !sv || !dec || !cand || !chosen) {
        st = nomem(k->where);
    } else {
        for (int64_t b = 0; b < n_b && limit > 0; b++) {
            for (int64_t i = 0; i < n_s; i++)
                dec[i] = nms_decode(bv + (b * n_s + i) * 4, center);
            for (int64_t c = 0; c < n_c; c++)
                nms_select(dec, sv + (b * n_c + c) * n_s, n_s, limit, iou, thr_t != NULL, thr,
                           cand, chosen, b, c, &sel, &count, &cap);
        }
        int64_t ydims[2] = {(int64_t)count, 3};
        gl_tensor *y = gl_out_new(k, 0, GL_DT_INT64, 2, ydims);
        if (!y)
            st = GL_ERR_NOMEM;
        else if (count)
            memcpy(y->buf->data, sel, count * 3 * sizeof(int64_t));
    }
    free(bv);
    free(sv);
    free(dec);
    free(cand);
    free(chosen);
    free(sel);
    return st;
}

static gl_status nms_infer(gl_infer_ctx *c)
{
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, 2);
    s.dims[1].value = 3;
    gl_infer_set(c, 0, GL_DT_INT64, &s);
    gl_shape_free(&s);
    return GL_OK;
}

/* ==== the registry ======================================================================= */

#define LAYOUT GL_OP_LAYOUT_SENSITIVE

static const gl_op_def nn_ops[] = {
    /* domain, op, since, infer, kernel, flags */
    {"", "AveragePool", 1, pool_infer, averagepool_kernel, LAYOUT},
    {"", "BatchNormalization", 1, batchnorm_infer, batchnorm_kernel, LAYOUT},
    {"", "BatchNormalization", 9, batchnorm_infer, batchnorm_kernel, LAYOUT},
    {"", "BatchNormalization", 14, batchnorm_infer, batchnorm_kernel, LAYOUT},
    {"", "Conv", 1, conv_infer, conv_kernel, LAYOUT},
    {"", "ConvTranspose", 1, convtranspose_infer, convtranspose_kernel, LAYOUT},
    {"", "Dropout", 1, dropout_infer, dropout_kernel, 0},
    {"", "Dropout", 10, dropout_infer, dropout_kernel, 0},
    {"", "Dropout", 12, dropout_infer, dropout_kernel, 0},
    {"", "GlobalAveragePool", 1, global_pool_infer, global_averagepool_kernel, LAYOUT},
    {"", "GlobalLpPool", 1, global_pool_infer, global_lppool_kernel, LAYOUT},
    {"", "GlobalMaxPool", 1, global_pool_infer, global_maxpool_kernel, LAYOUT},
    {"", "GridSample", 16, gridsample_infer, gridsample_kernel, LAYOUT},
    {"", "InstanceNormalization", 1, like_x_infer, instancenorm_kernel, LAYOUT},
    {"", "LRN", 1, like_x_infer, lrn_kernel, LAYOUT},
    {"", "LayerNormalization", 17, layernorm_infer, layernorm_kernel, 0},
    {"", "LpPool", 1, pool_infer, lppool_kernel, LAYOUT},
    {"", "MaxPool", 1, pool_infer, maxpool_kernel, LAYOUT},
    {"", "MaxUnpool", 9, maxunpool_infer, maxunpool_kernel, LAYOUT},
    {"", "MeanVarianceNormalization", 9, like_x_infer, mvn_kernel, 0},
    {"", "NonMaxSuppression", 10, nms_infer, nms_kernel, 0},
    {"", "Resize", 10, resize_infer, resize_kernel, 0},
    {"", "Resize", 11, resize_infer, resize_kernel, 0},
    {"", "Resize", 18, resize_infer, resize_kernel, 0},
    {"", "RoiAlign", 10, roialign_infer, roialign_kernel, LAYOUT},
    {"", "RoiAlign", 16, roialign_infer, roialign_kernel, LAYOUT},
    {"", "Upsample", 7, upsample_infer, upsample_kernel, 0},
    {"", "Upsample", 9, upsample_infer, upsample_kernel, 0},
};

const gl_op_family gl_ops_nn = {"nn", nn_ops, GL_ARRAY_LEN(nn_ops)};

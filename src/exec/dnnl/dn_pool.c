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
 * On AVX2 (no AVX-512), float max pooling over 2-D images in nChw8c or nhwc runs
 * graphlab's own kernel instead of oneDNN 2.6's jit:avx2 one, which was 3-5x slower
 * than ONNX Runtime's on GoogLeNet's pools (192x28x28, 3x3 stride 1: 0.55 ms against
 * 0.09; this kernel 0.11 ms, one thread). The window's maximum is separable: each
 * input row's maxima over the window's columns first (one 8-lane vector per output
 * column), then each output's over the window's rows, 2 + 2 vector maxima per output of
 * a 3x3 window instead of 9, each window's maximum kept in a register until it is
 * stored. The output rows are split over the plan's threads (a ResNet's stem pool,
 * 64x112x112 3x3 stride 2, one thread: ONNX Runtime 0.26 ms; this kernel 0.79 when it
 * looked each window up per pixel and per run, now 0.30).
 * A window wholly in the padding keeps oneDNN's kernel
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
    np_taps_of *cols, *rows_of;             /* per output column, per output row */
    int scratch_threads;                    /* how many threads `rows` has room for */
    float *rows; /* scratch per thread: h x ow pixels of row maxima */
    const float *x; /* this run's source and destination */
    float *y;
} np_geom;

static void np_free(void *extra)
{
    np_geom *g = extra;
    free(g->rows);
    free(g->cols);
    free(g->rows_of);
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
/* One input row's maxima over each output column's window: r[ow] = max over the taps of
 * row[pixel], `lanes` floats a pixel, 8 lanes at a time in a register. Inlined with
 * lanes = 8 (nChw8c) so that loop is one vector. */
__attribute__((target("avx2"), always_inline)) static inline void
np_row_max(float *r, const float *row, const np_geom *g, int64_t lanes)
{
    const int64_t dw = g->dw * lanes;
    for (int64_t ow = 0; ow < g->ow; ow++) {
        const np_taps_of *c = &g->cols[ow];
        const float *first = row + (c->start + c->t0 * g->dw) * lanes;
        float *out = r + ow * lanes;
        int64_t l = 0;
        for (; l + 8 <= lanes; l += 8) {
            __m256 v = _mm256_loadu_ps(first + l);
            for (int64_t t = 1; t < c->t1 - c->t0; t++)
                v = _mm256_max_ps(v, _mm256_loadu_ps(first + t * dw + l));
            _mm256_storeu_ps(out + l, v);
        }
        for (; l < lanes; l++) {
            float v = first[l];
            for (int64_t t = 1; t < c->t1 - c->t0; t++)
                v = first[t * dw + l] > v ? first[t * dw + l] : v;
            out[l] = v;
        }
    }
}

/* One output row from the row maxima: out[j] = max over the window's rows of rows[j],
 * over the row's ow x lanes floats (contiguous in both). */
__attribute__((target("avx2"))) static void np_col_max(float *out, const float *first,
                                                       int64_t taps, int64_t step, int64_t len)
{
    int64_t j = 0;
    for (; j + 8 <= len; j += 8) {
        __m256 v = _mm256_loadu_ps(first + j);
        for (int64_t t = 1; t < taps; t++)
            v = _mm256_max_ps(v, _mm256_loadu_ps(first + t * step + j));
        _mm256_storeu_ps(out + j, v);
    }
    for (; j < len; j++) {
        float v = first[j];
        for (int64_t t = 1; t < taps; t++)
            v = first[t * step + j] > v ? first[t * step + j] : v;
        out[j] = v;
    }
}

/* Output rows [u0, u1) of the image's planes counted plane by plane (unit u: plane
 * u / oh, row u % oh), with `rows` as scratch: per plane, the row maxima of just the
 * input rows those output rows read, then the output rows. */
__attribute__((target("avx2"))) static void np_run_units(const np_geom *g, const float *x,
                                                         float *y, float *rows, int64_t u0,
                                                         int64_t u1)
{
    const int64_t L = g->lanes, row_len = g->ow * L;
    for (int64_t u = u0; u < u1;) {
        int64_t plane = u / g->oh, oh0 = u % g->oh;
        int64_t oh1 = oh0 + (u1 - u) < g->oh ? oh0 + (u1 - u) : g->oh;
        const np_taps_of *a = &g->rows_of[oh0], *z = &g->rows_of[oh1 - 1];
        int64_t ih0 = a->start + a->t0 * g->dh, ih1 = z->start + (z->t1 - 1) * g->dh + 1;
        const float *xp = x + plane * g->h * g->w * L;
        float *yp = y + plane * g->oh * row_len;
        for (int64_t ih = ih0; ih < ih1; ih++) {
            if (L == 8)
                np_row_max(rows + (ih - ih0) * row_len, xp + ih * g->w * 8, g, 8);
            else
                np_row_max(rows + (ih - ih0) * row_len, xp + ih * g->w * L, g, L);
        }
        for (int64_t oh = oh0; oh < oh1; oh++) {
            const np_taps_of *r = &g->rows_of[oh];
            np_col_max(yp + oh * row_len, rows + (r->start + r->t0 * g->dh - ih0) * row_len,
                       r->t1 - r->t0, g->dh * row_len, row_len);
        }
        u += oh1 - oh0;
    }
}

/* The rows of thread `thread` (dn_parallel_for), with its own scratch. */
static void np_rows(void *extra, int64_t lo, int64_t hi, int thread)
{
    np_geom *g = extra;
    np_run_units(g, g->x, g->y, g->rows + thread * g->h * g->ow * g->lanes, lo, hi);
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

/* Every output's window holds at least one input position (taps: n outputs'). */
static bool np_windows_nonempty(const np_taps_of *taps, int64_t n)
{
    for (int64_t o = 0; o < n; o++)
        if (taps[o].t0 >= taps[o].t1)
            return false;
    return true;
}

static const dnnl_format_tag_t np_tags[] = {dnnl_nChw8c, dnnl_nhwc};

/* Which of np_tags md is for dims (4-D), or -1. */
static int np_tag_of(const dnnl_memory_desc_t *md, const int64_t *dims)
{
    return dn_md_tag_index(md, dims, np_tags, GL_ARRAY_LEN(np_tags));
}

/* The native kernel writes its source's layout: where oneDNN picked another destination
 * (its reference code for some windows does), the pd is made again with that one. */
static dnnl_status_t np_dst_like_src(dn_build *b, dnnl_primitive_desc_t *pd,
                                     dnnl_pooling_v2_desc_t *pdsc, const int64_t *xd,
                                     const int64_t *yd)
{
    int tag = np_tag_of(dn_pd_md(*pd, dnnl_query_src_md, 0), xd);
    if (tag < 0 || np_tag_of(dn_pd_md(*pd, dnnl_query_dst_md, 0), yd) == tag)
        return dnnl_success;
    dnnl_status_t r = dn_md_tag(&pdsc->dst_desc, 4, yd, np_tags[tag]);
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

/* Take the native kernel for this float max pooling when the pd's source and
 * destination are both nChw8c or both nhwc (xd: N, C, H, W). */
static void np_take(dn_build *b, dnnl_primitive_desc_t pd, const int64_t *xd,
                    const pool_geom *pg)
{
#ifdef __x86_64__
    int64_t yd[4] = {xd[0], xd[1], pg->out[0], pg->out[1]};
    int tag = np_tag_of(dn_pd_md(pd, dnnl_query_src_md, 0), xd);
    if (tag < 0 || np_tag_of(dn_pd_md(pd, dnnl_query_dst_md, 0), yd) != tag)
        return;
    np_geom g = {.n = xd[0], .h = xd[2], .w = xd[3], .oh = pg->out[0], .ow = pg->out[1],
                 .dh = pg->dilation[0] + 1, .dw = pg->dilation[1] + 1};
    g.blocks = np_tags[tag] == dnnl_nChw8c ? (xd[1] + 7) / 8 : 1;
    g.lanes = np_tags[tag] == dnnl_nChw8c ? 8 : xd[1];
    g.cols = np_taps_table(g.ow, pg->kernel[1], pg->strides[1], g.dw, pg->pad_l[1], g.w);
    g.rows_of = np_taps_table(g.oh, pg->kernel[0], pg->strides[0], g.dh, pg->pad_l[0], g.h);
    if (!np_windows_nonempty(g.cols, g.ow) || !np_windows_nonempty(g.rows_of, g.oh)) {
        free(g.cols);
        free(g.rows_of);
        return;
    }
    np_geom *kept = gl_xmalloc(sizeof(*kept));
    *kept = g;
    kept->scratch_threads = b->c->max_threads > 1 ? b->c->max_threads : 1;
    kept->rows = gl_xmalloc((size_t)(kept->scratch_threads * g.h * g.ow * g.lanes) *
                            sizeof(float));
    b->s->extra = kept;
    b->s->extra_free = np_free;
    b->s->native = np_run;
    dn_set_impl(b->c, b->s, "graphlab:avx2 %s", np_tags[tag] == dnnl_nChw8c ? "nChw8c" : "nhwc");
#else
    (void)b, (void)pd, (void)xd, (void)pg;
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
    bool native = is_max && !int8 && !global && nsp == 2 && b->c->avx2;
    if (r == dnnl_success && native)
        r = np_dst_like_src(b, pd, &pdsc, xd, out_dims);
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
        np_take(b, *pd, xd, &g);
    else if (global && !is_max && !int8 && nsp == 2 && b->c->avx2)
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

/* dn_matmul.c — MatMul and Gemm as oneDNN matmul.
 *
 *   MatMul  numpy batch broadcasting (oneDNN broadcasts dims of 1 when both operands have
 *           the same rank: leading 1s are added); a 1-D operand becomes a 1-row / 1-column
 *           matrix and the output takes the ONNX shape. A constant B (weights) is packed
 *           once into the layout oneDNN picks (mapped weights of a product of few rows
 *           are read in place: packs_weights). On AVX2 a constant 2-D B times more than 8
 *           rows of A (its matrices stacked) runs on graphlab's kernel instead, B packed
 *           in panels (many_rows_product).
 *   FusedMatMul (graphlab) as MatMul, an operand whose transX is 1 read through a view
 *           that swaps the strides of its last two dims (no reorder; a constant B is
 *           packed once, as MatMul's); alpha an eltwise_linear post-op.
 *   Gemm    matmul on strided views of A and B (transA/transB cost nothing; a constant B is
 *           packed once, transposed or not); alpha an eltwise_linear post-op. A per-column
 *           C ([N], [1, N]) is the matmul bias: alpha*A*B + beta*C = alpha * (A*B +
 *           (beta/alpha)*C), scaled into a buffer of our own unless beta == alpha (once
 *           when C is a constant, else every run). Other shapes of C are broadcast into
 *           the output before the run and added by a sum post-op of scale beta/alpha.
 *           beta == 0 ignores C, as BLAS does (the reference computes 0 * C: they differ
 *           only where C holds a NaN or an infinity).
 * Heading a fused unit (dn_fused.c), MatMul, FusedMatMul of alpha 1 and Gemm without C
 * (of alpha 1) take the unit's first member, an Add of one value per output column, as
 * the matmul's bias argument instead of a binary post-op (dn_tail_bias).
 * Operands and results are plain row-major: an operand in another layout is converted.
 */
#include "exec/dnnl/dn.h"

#include <stdlib.h>
#include <string.h>

/* ---- MatMul ------------------------------------------------------------------------------ */

/* A MatMul operand as a matrix stack of rank `nd`: leading 1s, and a 1-D operand as one
 * row (A) or one column (B). `trans`: the stored matrices read transposed, their last two
 * dims and strides swapped (strides NULL: plain row-major, no swap). */
static void matmul_view(const gl_tensor *t, bool is_a, bool trans, int nd, int64_t *dims,
                        int64_t *strides)
{
    for (int i = 0; i < nd; i++)
        dims[i] = 1;
    if (t->rank == 1)
        dims[is_a ? nd - 1 : nd - 2] = t->dims[0];
    else
        memcpy(dims + nd - t->rank, t->dims, (size_t)t->rank * sizeof(int64_t));
    if (!trans)
        return;
    strides[nd - 1] = 1;
    for (int i = nd - 1; i-- > 0;)
        strides[i] = strides[i + 1] * dims[i + 1];
    int64_t d = dims[nd - 2], s = strides[nd - 2];
    dims[nd - 2] = dims[nd - 1];
    strides[nd - 2] = strides[nd - 1];
    dims[nd - 1] = d;
    strides[nd - 1] = s;
}

/* Packing constant weights into oneDNN's layout makes a copy of them and costs a reorder
 * at build; it pays back when many rows of A stream past the same weights, run after run.
 * A plan that runs many times (the workbench, bisect) packs and gives the mapping's pages
 * back after the node's first run (dn_node.c), so the weights are held once, packed.
 * gl_exec_options.dnnl_weights_in_place is set where packing does not pay: a profile,
 * whose reference and two oneDNN plans hold the same weights at once, and `run`, whose
 * plan runs once (gl_session_plan). There, weights mapped from a file (external data) are
 * read where they lie when the product has fewer than DN_PACK_MIN_ROWS rows: a GPT-like
 * decoder run on 16 tokens holds its 1.2 GB of weights once on every backend and reaches
 * its result without a 1.2 GB reorder. The price is each later run: oneDNN copies plain
 * weights block by block ([16,1024] x [1024,4096]: 14.4 ms against 7.8 packed). Weights
 * held in memory (inline in the model: small models) are always packed. Measured in
 * bench/README ("weights held once", "the decoder"). */
#define DN_PACK_MIN_ROWS 64

/* Whether the constant B of a product with `rows` rows of A (all of A's matrices stacked)
 * is packed once at build; false for an operand computed at run time. */
static bool packs_weights(const dn_build *b, size_t input, int64_t rows)
{
    const gl_tensor *w = b->k->in[input];
    if (!dn_input_constant(b->k, input) || w->layout)
        return false;
    bool mapped = w->buf && w->buf->kind == GL_BUF_MMAP;
    return !b->c->weights_in_place || !mapped || rows >= DN_PACK_MIN_ROWS;
}

/* Bind B: packed into the layout the primitive chose when `pack`, else read as it is. */
static void bind_weights(dn_build *b, size_t input, bool pack, const dnnl_memory_desc_t *view,
                         const_dnnl_primitive_desc_t pd)
{
    if (pack)
        dn_bind_input_from(b, DNNL_ARG_WEIGHTS, input, view,
                           dn_pd_md(pd, dnnl_query_weights_md, 0));
    else
        dn_bind_input_view(b, DNNL_ARG_WEIGHTS, input, view);
}

/* The weights descriptor to build with: `any` when B is packed (oneDNN picks the
 * layout), else the view itself. */
static dnnl_status_t weights_md(bool pack, int nd, const int64_t *dims,
                                const dnnl_memory_desc_t *view, dnnl_memory_desc_t *md)
{
    if (pack)
        return dn_md_tag(md, nd, dims, dnnl_format_tag_any);
    *md = *view;
    return dnnl_success;
}

/* A product as product_build reads it off the operands: nd dims (ONNX broadcasting
 * applied, leading 1s added), the views of A and B (dims, element strides: a transposed
 * operand's differ from its dims' order), Y's dims, and FusedMatMul's transA/transB and
 * alpha. */
typedef struct product_shape {
    int nd;
    int64_t ad[DNNL_MAX_NDIMS], as[DNNL_MAX_NDIMS];
    int64_t bd[DNNL_MAX_NDIMS], bs[DNNL_MAX_NDIMS];
    int64_t yd[DNNL_MAX_NDIMS];
    bool ta, tb;
    float alpha;
    bool pack_b; /* packs_weights */
    bool bias;   /* a fused unit's per-column Add as the matmul's bias (dn_tail_bias) */
} product_shape;

/* The descriptors a built product binds: A and B's views as built, and Y. */
typedef struct product_mds {
    dnnl_memory_desc_t a, b_view, y, bias;
} product_mds;

/* The matmul of the views as one product (tall: the stacked rows of A as one matrix, B a
 * matrix) or as the stack. */
static dnnl_status_t product_pd(dn_build *b, dnnl_primitive_desc_t *pd, bool tall,
                                const product_shape *s, product_mds *out)
{
    product_shape v = *s; /* the dims as built: tall folds the stack into rows */
    int n = s->nd, nd = s->nd;
    if (tall) {
        int64_t rows = 1;
        for (int i = 0; i < nd - 1; i++)
            rows *= v.ad[i];
        v.ad[0] = v.yd[0] = rows;
        v.ad[1] = s->ad[nd - 1];
        v.bd[0] = s->bd[nd - 2];
        v.bd[1] = v.yd[1] = s->bd[nd - 1];
        v.bs[0] = s->bs[nd - 2];
        v.bs[1] = s->bs[nd - 1];
        n = 2;
    }
    dnnl_memory_desc_t bmd;
    if (dn_md_plain(&out->a, n, v.ad, s->ta ? v.as : NULL) != dnnl_success ||
        dn_md_plain(&out->b_view, n, v.bd, s->tb ? v.bs : NULL) != dnnl_success ||
        weights_md(s->pack_b, n, v.bd, &out->b_view, &bmd) != dnnl_success ||
        dn_md_plain(&out->y, n, v.yd, NULL) != dnnl_success)
        return dnnl_unimplemented;
    /* the bias: one row of the output's columns, 1 in every other dim */
    int64_t bias_dims[DNNL_MAX_NDIMS];
    for (int i = 0; i < n; i++)
        bias_dims[i] = i == n - 1 ? v.yd[i] : 1;
    if (s->bias && dn_md_plain(&out->bias, n, bias_dims, NULL) != dnnl_success)
        return dnnl_unimplemented;
    /* FusedMatMul's alpha first, then what a fused unit adds after the product (for the
     * destination of ONNX rank: nd dims, leading 1s aside) */
    dn_post scale = {dnnl_eltwise_linear, s->alpha, 0.0f, 1.0f, NULL};
    dnnl_primitive_attr_t attr = NULL;
    bool scaled = s->alpha != 1.0f;
    dnnl_status_t r = tall ? dn_build_attr_rows(b, &scale, scaled, nd, s->yd, &attr)
                           : dn_build_attr(b, &scale, scaled, nd, s->yd, &attr);
    dnnl_matmul_desc_t md;
    if (r == dnnl_success)
        r = dnnl_matmul_desc_init(&md, &out->a, &bmd, s->bias ? &out->bias : NULL, &out->y);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &md, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    return r;
}

static bool many_rows_product(dn_build *b, const_dnnl_primitive_desc_t pd,
                              const product_shape *s, const gl_tensor *a, const gl_tensor *w,
                              const product_mds *mds);

/* MatMul, and FusedMatMul's alpha * MatMul(A', B'). */
static gl_status product_build(dn_build *b, dnnl_primitive_desc_t *pd, bool ta, bool tb,
                               float alpha)
{
    const gl_tensor *a = dn_f32_input(b->k, 0), *w = dn_f32_input(b->k, 1);
    if (!a || !w)
        return dn_refuse(b, "not float32");
    if (a->rank < 1 || w->rank < 1 || a->count == 0 || w->count == 0)
        return dn_refuse(b, "empty or scalar operand");
    if ((ta && a->rank < 2) || (tb && w->rank < 2))
        return dn_refuse(b, "a transposed operand of rank 1");
    int nd = a->rank > w->rank ? a->rank : w->rank;
    nd = nd < 2 ? 2 : nd;
    if (nd > DNNL_MAX_NDIMS)
        return dn_refuse(b, "rank %d", nd);
    product_shape ps = {.nd = nd, .ta = ta, .tb = tb, .alpha = alpha};
    int64_t *ad = ps.ad, *bd = ps.bd, *yd = ps.yd;
    matmul_view(a, true, ta, nd, ad, ps.as);
    matmul_view(w, false, tb, nd, bd, ps.bs);
    if (ad[nd - 1] != bd[nd - 2])
        return dn_refuse(b, "inner dims differ");
    for (int i = 0; i < nd - 2; i++) {
        if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1)
            return dn_refuse(b, "batch dims do not broadcast");
        yd[i] = ad[i] == 1 ? bd[i] : ad[i];
    }
    yd[nd - 2] = ad[nd - 2];
    yd[nd - 1] = bd[nd - 1];
    ps.pack_b = packs_weights(b, 1, a->count / ad[nd - 1]);
    /* alpha * (A*B + bias) is not alpha * A*B + bias: a scaled product keeps the post-op */
    size_t bias_in = alpha == 1.0f ? dn_tail_bias(b, nd, yd[nd - 1]) : SIZE_MAX;
    ps.bias = bias_in != SIZE_MAX;
    /* The ONNX output drops the dim a 1-D operand did not have. */
    int out_rank = 0;
    int64_t out_dims[DNNL_MAX_NDIMS];
    for (int i = 0; i < nd; i++)
        if ((i != nd - 2 || a->rank >= 2) && (i != nd - 1 || w->rank >= 2))
            out_dims[out_rank++] = yd[i];
    /* A stack of matrices times one matrix is one product of [batch * M, K] by B: the same
     * bytes, and oneDNN's kernels work far better on one tall matrix than on a batch of
     * thin ones ([16,1,128] x [128,384], an attention projection: 46 µs as 16 products
     * of one row, a few as one; inside a fused unit as well, its binary operands then
     * described over the tall matrix when they can be, else the stack it stays). */
    bool tall = nd > 2 && w->rank <= 2 && !ta;
    product_mds mds;
    dnnl_status_t r = dnnl_unimplemented;
    for (int attempt = tall ? 0 : 1; attempt < 2 && r != dnnl_success; attempt++)
        r = product_pd(b, pd, attempt == 0, &ps, &mds);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no matmul for these shapes");
    dn_bind_input_view(b, DNNL_ARG_SRC, 0, &mds.a);
    if (!many_rows_product(b, *pd, &ps, a, w, &mds))
        bind_weights(b, 1, ps.pack_b, &mds.b_view, *pd);
    if (ps.bias)
        dn_bind_input_view(b, DNNL_ARG_BIAS, bias_in, &mds.bias);
    dn_bind_output(b, DNNL_ARG_DST, 0, &mds.y, out_rank, out_dims);
    return GL_OK;
}

static gl_status matmul_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    return product_build(b, pd, false, false, 1.0f);
}

static gl_status fused_matmul_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_node *n = b->k->node;
    return product_build(b, pd, gl_node_attr_int(n, "transA", 0) != 0,
                         gl_node_attr_int(n, "transB", 0) != 0,
                         gl_node_attr_float(n, "alpha", 1.0f));
}

/* ---- Gemm -------------------------------------------------------------------------------- */

typedef struct gemm_extra {
    float bias_scale;         /* own bias = C * bias_scale, per run when C is not constant */
    bool bias_per_run;
    bool c_in_dst;            /* C broadcast into the output before each run */
    int64_t m, n;
    int64_t c_strides[2];     /* element strides of C over [M, N] (0: broadcast) */
    /* graphlab's few-rows kernel (few_rows_take): K, bias bound as input 2, an
     * activation after (the epilogue, dn_avx2.h), and A transposed into [K, 8] each run */
    int64_t k;
    bool bias;
    dn_act act;
    float *at;
    const float *w, *bias_v;  /* this run's packed B and bias */
    const float *a;           /* this run's A (many_rows_run) */
    bool mul;                 /* many_rows_*: a per-column [N] factor, bound at mul_at
                               * (after B and the bias), this run's scale; then */
    size_t mul_at;
    const float *scale;
    bool add;                 /* a residual [M, N] added before the activation, */
    size_t res_at;            /* bound input res_at (a fused unit's operand, after B, the
                               * bias and the factor), this run's res */
    const float *res;
    int64_t pairs_per_item;   /* many_rows_items: panel pairs in one work item, */
    int64_t rows_per_chunk;   /* and rows */
    float *y;
} gemm_extra;

static void gemm_extra_free(void *p)
{
    gemm_extra *x = p;
    free(x->at);
    free(x);
}

/* ---- a few rows by constant weights (graphlab's kernel) ----------------------------------
 * A fully connected layer on a batch of a few rows ([8, 9216] x [9216, 4096], AlexNet's
 * classifier at batch 8) reads 151 MB of weights to do 8 multiply-adds with each: the time
 * is the weights' bandwidth. oneDNN 2.6's gemm:jit reaches ~4.5 GB/s there on one thread
 * (32 ms, as ONNX Runtime's MLAS), its inner product is the same gemm. Packed in panels of
 * 8 columns ([N/8][K][8], padded with zeros: one reorder at build, as oneDNN's packing)
 * and read once, each 8-float load feeding 8 rows' FMAs from a transposed A of [K][8] in
 * the cache, the same product streams at ~7 GB/s (20-22 ms). Above 8 rows A no longer
 * fits eight accumulators: many_rows_* tiles it; one row is oneDNN's gemv's case. */
#define FEW_ROWS_MIN 2
#define FEW_ROWS_MAX 8
#define FEW_ROWS_LANES 8
#define MANY_ROWS_KC 256 /* many_rows_*: K in blocks of this many steps */

/* B [K, N] as panels of 8 columns: dims (K, N), N blocked by 8 innermost, the panels
 * outermost; oneDNN's reorder packs into it and zeroes the padding. */
static void few_rows_weights_md(int64_t k, int64_t n, dnnl_memory_desc_t *md)
{
    memset(md, 0, sizeof(*md));
    md->ndims = 2;
    md->dims[0] = md->padded_dims[0] = k;
    md->dims[1] = n;
    md->padded_dims[1] = (n + FEW_ROWS_LANES - 1) / FEW_ROWS_LANES * FEW_ROWS_LANES;
    md->data_type = dnnl_f32;
    md->format_kind = dnnl_blocked;
    md->format_desc.blocking.strides[0] = FEW_ROWS_LANES;
    md->format_desc.blocking.strides[1] = k * FEW_ROWS_LANES;
    md->format_desc.blocking.inner_nblks = 1;
    md->format_desc.blocking.inner_blks[0] = FEW_ROWS_LANES;
    md->format_desc.blocking.inner_idxs[0] = 1;
}

#ifdef __x86_64__
#include "exec/dnnl/dn_avx2.h"

/* One panel: y[r][j] (r < m, j < cols) = act(bias + sum_k at[k][r] * w[k][j]). */
__attribute__((target("avx2,fma"))) static void few_rows_panel(const gemm_extra *x,
                                                                const float *at,
                                                                const float *w,
                                                                const float *bias, float *y,
                                                                int64_t cols)
{
    __m256 acc[FEW_ROWS_MAX];
    for (int r = 0; r < FEW_ROWS_MAX; r++)
        acc[r] = _mm256_setzero_ps();
    dn_avx2_rows8(at, w, x->k, acc);
    float row[FEW_ROWS_LANES] = {0}; /* lanes past cols stay 0: read, never stored */
    for (int64_t r = 0; r < x->m; r++) {
        __m256 v = acc[r];
        if (bias) {
            memcpy(row, bias, (size_t)cols * sizeof(float));
            v = _mm256_add_ps(v, _mm256_loadu_ps(row));
        }
        if (x->act.kind == DN_ACT_RELU) /* max(v, 0) gives 0 for a NaN, as oneDNN's relu */
            v = _mm256_max_ps(v, _mm256_setzero_ps());
        _mm256_storeu_ps(row, v);
        memcpy(y + r * x->n, row, (size_t)cols * sizeof(float));
    }
    if (x->act.kind > DN_ACT_RELU)
        dn_avx2_act_tile(&x->act, y, x->n, x->m, cols);
}

/* Panels [lo, hi) of this run (dn_parallel_for). */
__attribute__((target("avx2,fma"))) static void few_rows_panels(void *extra, int64_t lo,
                                                                 int64_t hi, int thread)
{
    const gemm_extra *x = extra;
    (void)thread;
    for (int64_t p = lo; p < hi; p++) {
        int64_t j = p * FEW_ROWS_LANES;
        int64_t cols = x->n - j < FEW_ROWS_LANES ? x->n - j : FEW_ROWS_LANES;
        few_rows_panel(x, x->at, x->w + p * x->k * FEW_ROWS_LANES,
                       x->bias_v ? x->bias_v + j : NULL, x->y + j, cols);
    }
}

/* The native kernel: src A [M, K] plain, B packed (few_rows_weights_md), bias [N] when
 * bound; dst Y [M, N] plain. Panels split among the plan's threads. */
static void few_rows_run(void *extra, const void *const *src, void *dst)
{
    gemm_extra *x = extra;
    const float *a = src[0];
    int64_t k = x->k, m = x->m;
    dn_avx2_rows_transposed(x->at, a, k, m, k);
    x->w = src[1];
    x->bias_v = x->bias ? src[2] : NULL;
    x->y = dst;
    dn_parallel_for((x->n + FEW_ROWS_LANES - 1) / FEW_ROWS_LANES, 0, few_rows_panels, x);
}

/* ---- any number of rows by constant weights (graphlab's kernel) --------------------------
 * The same packed panels for a product of many rows ([1576, 768] x [768, 3072], a ViT MLP
 * at batch 8): oneDNN 2.6's gemm:jit on AVX2 packs B again on every call, which the
 * panels packed once at build save. A register tile of MANY_ROWS_TILE rows by two panels
 * (12 accumulators, 2 loads of B and a broadcast of A: 15 of the 16 ymm registers), A read
 * in place, K in blocks of MANY_ROWS_KC so the two panels' block (16 KB) stays in L1
 * while the tiles of a chunk of MANY_ROWS_MC rows (72 KB of A, in L2) pass over it. The
 * work is chunks of rows by groups of MANY_ROWS_PAIRS panel pairs. */
#define MANY_ROWS_TILE 6
#define MANY_ROWS_MC 72
#define MANY_ROWS_PAIRS 8
#define MANY_ROWS_MIN_ITEMS 8

/* One tile of mr rows by np panels (both constant where inlined, so the loops unroll and
 * the accumulators stay in registers) over kn steps of K: y (ldy apart) += a (lda apart)
 * times the panels (w: the first at k0, the second pstride further); `first`: start from
 * the bias (or 0) instead of y, `last`: times the per-column factor (scale: the tile's
 * first column's, x->mul), the residual added (x->add) and the activation after (x->act:
 * a Relu in the registers, any other over the stored tile, dn_avx2_act_tile), in the
 * order of oneDNN's post-ops. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
many_rows_tile(const gemm_extra *x, const float *a, const float *w, const float *bias,
               const float *scale, float *y, int64_t cols, int64_t kn, bool first, bool last,
               int mr, int np)
{
    const int64_t lda = x->k, ldy = x->n, pstride = x->k * FEW_ROWS_LANES;
    __m256 acc[MANY_ROWS_TILE][2], mul[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    float row[2 * FEW_ROWS_LANES] = {0}; /* a partial tile's columns go through here */
    float srow[2 * FEW_ROWS_LANES] = {0};
    bool full = cols == np * FEW_ROWS_LANES;
    if (last && scale) {
        if (!full) {
            memcpy(srow, scale, (size_t)cols * sizeof(float));
            scale = srow;
        }
#pragma GCC unroll 2
        for (int q = 0; q < np; q++)
            mul[q] = _mm256_loadu_ps(scale + q * FEW_ROWS_LANES);
    }
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
        const float *src = first ? bias : y + r * ldy;
        if (src && !full) {
            memcpy(row, src, (size_t)cols * sizeof(float));
            src = row;
        }
#pragma GCC unroll 2
        for (int q = 0; q < np; q++)
            acc[r][q] = src ? _mm256_loadu_ps(src + q * FEW_ROWS_LANES) : _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < kn; k++) {
        __m256 w0 = _mm256_loadu_ps(w + k * FEW_ROWS_LANES);
        __m256 w1 = np > 1 ? _mm256_loadu_ps(w + pstride + k * FEW_ROWS_LANES) : w0;
#pragma GCC unroll 6
        for (int r = 0; r < mr; r++) {
            __m256 ar = _mm256_broadcast_ss(a + r * lda + k);
            acc[r][0] = _mm256_fmadd_ps(ar, w0, acc[r][0]);
            if (np > 1)
                acc[r][1] = _mm256_fmadd_ps(ar, w1, acc[r][1]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
        float *dst = full ? y + r * ldy : row;
        float rrow[2 * FEW_ROWS_LANES] = {0};
        const float *res = last && x->add ? x->res + (y - x->y) + r * ldy : NULL;
        if (res && !full) {
            memcpy(rrow, res, (size_t)cols * sizeof(float));
            res = rrow;
        }
#pragma GCC unroll 2
        for (int q = 0; q < np; q++) {
            __m256 v = acc[r][q];
            if (last && scale)
                v = _mm256_mul_ps(v, mul[q]);
            if (res)
                v = _mm256_add_ps(v, _mm256_loadu_ps(res + q * FEW_ROWS_LANES));
            if (last && x->act.kind == DN_ACT_RELU) /* NaN gives 0, as oneDNN's relu */
                v = _mm256_max_ps(v, _mm256_setzero_ps());
            _mm256_storeu_ps(dst + q * FEW_ROWS_LANES, v);
        }
        if (!full)
            memcpy(y + r * ldy, row, (size_t)cols * sizeof(float));
    }
    if (last && x->act.kind > DN_ACT_RELU)
        dn_avx2_act_tile(&x->act, y, ldy, mr, cols);
}

/* The tile's (mr, np) as constants: one unrolled copy of many_rows_tile each. */
#define MANY_ROWS_CASE(R)                                                                   \
    case R:                                                                                 \
        if (np == 2)                                                                        \
            many_rows_tile(x, a, w, bias, scale, y, cols, kn, first, last, R, 2);           \
        else                                                                                \
            many_rows_tile(x, a, w, bias, scale, y, cols, kn, first, last, R, 1);           \
        break;

__attribute__((target("avx2,fma"))) static void
many_rows_dispatch(const gemm_extra *x, const float *a, const float *w, const float *bias,
                   const float *scale, float *y, int64_t cols, int64_t kn, bool first,
                   bool last, int mr, int np)
{
    switch (mr) {
        MANY_ROWS_CASE(1)
        MANY_ROWS_CASE(2)
        MANY_ROWS_CASE(3)
        MANY_ROWS_CASE(4)
        MANY_ROWS_CASE(5)
        MANY_ROWS_CASE(6)
    }
}

/* The chunks of x->rows_per_chunk rows across M. */
static int64_t many_rows_chunks(const gemm_extra *x)
{
    return (x->m + x->rows_per_chunk - 1) / x->rows_per_chunk;
}

/* The groups of x->pairs_per_item panel pairs across N. */
static int64_t many_rows_groups(const gemm_extra *x)
{
    int64_t pairs = (x->n + 2 * FEW_ROWS_LANES - 1) / (2 * FEW_ROWS_LANES);
    return (pairs + x->pairs_per_item - 1) / x->pairs_per_item;
}

/* Work items [lo, hi): item t is the chunk of rows t / groups by the group of panel pairs
 * t % groups (dn_parallel_for). */
static void many_rows_items(void *extra, int64_t lo, int64_t hi, int thread)
{
    const gemm_extra *x = extra;
    int64_t panels = (x->n + FEW_ROWS_LANES - 1) / FEW_ROWS_LANES;
    int64_t groups = many_rows_groups(x), span = 2 * x->pairs_per_item;
    (void)thread;
    for (int64_t t = lo; t < hi; t++) {
        int64_t r0 = t / groups * x->rows_per_chunk, r1 = r0 + x->rows_per_chunk;
        int64_t p0 = t % groups * span, p1 = p0 + span;
        r1 = r1 < x->m ? r1 : x->m;
        p1 = p1 < panels ? p1 : panels;
        for (int64_t k0 = 0; k0 < x->k; k0 += MANY_ROWS_KC) {
            int64_t kn = x->k - k0 < MANY_ROWS_KC ? x->k - k0 : MANY_ROWS_KC;
            bool first = k0 == 0, last = k0 + kn == x->k;
            for (int64_t p = p0; p < p1; p += 2) {
                int np = p1 - p >= 2 ? 2 : 1;
                int64_t j = p * FEW_ROWS_LANES;
                int64_t cols = x->n - j < np * FEW_ROWS_LANES ? x->n - j : np * FEW_ROWS_LANES;
                const float *w = x->w + p * x->k * FEW_ROWS_LANES + k0 * FEW_ROWS_LANES;
                const float *bias = x->bias_v ? x->bias_v + j : NULL;
                const float *scale = x->scale ? x->scale + j : NULL;
                for (int64_t r = r0; r < r1; r += MANY_ROWS_TILE) {
                    int mr = r1 - r < MANY_ROWS_TILE ? (int)(r1 - r) : MANY_ROWS_TILE;
                    many_rows_dispatch(x, x->a + r * x->k + k0, w, bias, scale,
                                       x->y + r * x->n + j, cols, kn, first, last, mr, np);
                }
            }
        }
    }
}

/* The native kernel for more than FEW_ROWS_MAX rows: as few_rows_run, A read in place. */
static void many_rows_run(void *extra, const void *const *src, void *dst)
{
    gemm_extra *x = extra;
    x->a = src[0];
    x->w = src[1];
    x->bias_v = x->bias ? src[2] : NULL;
    x->scale = x->mul ? src[x->mul_at] : NULL;
    x->res = x->add ? src[x->res_at] : NULL;
    x->y = dst;
    dn_parallel_for(many_rows_chunks(x) * many_rows_groups(x), 0, many_rows_items, x);
}
#endif

/* Bind B packed in panels for many_rows_run and set the node to run it: after B its
 * bias when `bias`, then a fused unit's per-column factor when `mul` and its residual
 * operand when `add` (dn_fused.c binds a unit's operands after its head's inputs, in the
 * order of its post-ops); the activation `act` after. */
static void many_rows_bind(dn_build *b, gemm_extra *x, int64_t kk, int64_t n,
                           const dnnl_memory_desc_t *bview, bool bias, bool mul, bool add,
                           dn_act act)
{
    dnnl_memory_desc_t panels;
    few_rows_weights_md(kk, n, &panels);
    dn_bind_input_from(b, DNNL_ARG_WEIGHTS, 1, bview, &panels);
    x->k = kk;
    x->bias = bias;
    x->mul = mul;
    x->mul_at = bias ? 3 : 2;
    x->add = add;
    x->res_at = x->mul_at + mul;
    x->act = act;
#ifdef __x86_64__
    /* chunks of about the same rows, whole tiles but the last (128 rows as 72 + 56 kept
     * one of 2 threads waiting for the other) */
    int64_t chunks = (x->m + MANY_ROWS_MC - 1) / MANY_ROWS_MC;
    x->rows_per_chunk = ((x->m + chunks - 1) / chunks + MANY_ROWS_TILE - 1) / MANY_ROWS_TILE *
                        MANY_ROWS_TILE;
    /* groups of fewer pairs where the rows are few, so that MANY_ROWS_MIN_ITEMS items share
     * the threads evenly enough ([50, 96] x [96, 288] in 3 items left one of 2 threads
     * idle a third of the time) */
    x->pairs_per_item = MANY_ROWS_PAIRS;
    while (x->pairs_per_item > 1 &&
           many_rows_chunks(x) * many_rows_groups(x) < MANY_ROWS_MIN_ITEMS)
        x->pairs_per_item /= 2;
    b->s->native = many_rows_run;
#endif
    dn_set_impl(b->c, b->s, "graphlab:avx2 %lld rows tiled%s%s%s%s", (long long)x->m,
                mul ? " + mul" : "", add ? " + add" : "", act.kind ? " + " : "",
                act.kind ? dn_act_name(act.kind) : "");
}

/* A post-op i of a binary alg over a plain f32 operand of [rows, n]. */
static bool post_binary_is(const_dnnl_post_ops_t po, int i, dnnl_alg_kind_t want,
                           int64_t rows, int64_t n)
{
    dnnl_alg_kind_t alg;
    const dnnl_memory_desc_t *src1 = NULL;
    return i < dnnl_post_ops_len(po) && dnnl_post_ops_get_kind(po, i) == dnnl_binary &&
           dnnl_post_ops_get_params_binary(po, i, &alg, &src1) == dnnl_success &&
           alg == want && src1->ndims == 2 && src1->dims[0] == rows && src1->dims[1] == n &&
           src1->data_type == dnnl_f32 && dn_md_is_plain(src1);
}

/* The pd's post-ops as graphlab's kernels apply them: none, then (mul and add not NULL:
 * the many-rows kernel) a binary_mul by a plain [1, n] operand (ConvNeXt's layer scale),
 * a binary_add of a plain [m, n] operand (a residual), then at most one activation the
 * epilogue has (dn_post_act: a fused Gemm -> Relu, MatMul -> Gelu). *mul, *add and *act
 * say which are there. */
static bool posts_kernel_applies(const_dnnl_primitive_desc_t pd, int64_t m, int64_t n,
                                 bool *mul, bool *add, dn_act *act)
{
    const_dnnl_primitive_attr_t attr = NULL;
    const_dnnl_post_ops_t po = NULL;
    *act = (dn_act){DN_ACT_NONE, 0.0f, 0.0f};
    if (add)
        *add = *mul = false;
    if (dnnl_primitive_desc_get_attr(pd, &attr) != dnnl_success ||
        dnnl_primitive_attr_get_post_ops(attr, &po) != dnnl_success)
        return false;
    int len = dnnl_post_ops_len(po), i = 0;
    if (add && post_binary_is(po, i, dnnl_binary_mul, 1, n))
        *mul = true, i++;
    if (add && post_binary_is(po, i, dnnl_binary_add, m, n))
        *add = true, i++;
    if (i == len)
        return true;
    dn_post p = {0};
    if (len != i + 1 || dnnl_post_ops_get_kind(po, i) != dnnl_eltwise ||
        dnnl_post_ops_get_params_eltwise(po, i, &p.scale, &p.alg, &p.alpha, &p.beta) !=
            dnnl_success)
        return false;
    return dn_post_act(&p, act);
}

/* What both of graphlab's Gemm kernels need: AVX2 and FMA, a plain A, constant B packed,
 * no alpha, C absent or a bias added as it is. */
static bool own_kernel_fits(const dn_build *b, bool ta, bool pack_b, float alpha,
                            bool bias_view, bool use_c)
{
#ifdef __x86_64__
    return b->c->avx2 && __builtin_cpu_supports("fma") && !ta && pack_b && alpha == 1.0f &&
           (bias_view || !use_c);
#else
    (void)b, (void)ta, (void)pack_b, (void)alpha, (void)bias_view, (void)use_c;
    return false;
#endif
}

/* Whether graphlab's few-rows kernel takes this Gemm: own_kernel_fits,
 * FEW_ROWS_MIN..MAX rows, at most an activation after. */
static bool few_rows_take(const dn_build *b, const_dnnl_primitive_desc_t pd, bool ta,
                          bool pack_b, float alpha, bool bias_view, bool use_c, int64_t m,
                          int64_t kk, dn_act *act)
{
    return own_kernel_fits(b, ta, pack_b, alpha, bias_view, use_c) && m >= FEW_ROWS_MIN &&
           m <= FEW_ROWS_MAX && kk > 0 && posts_kernel_applies(pd, m, 0, NULL, NULL, act);
}

/* Whether graphlab's many-rows kernel takes this product of [m, kk] by [kk, n]:
 * own_kernel_fits, more than FEW_ROWS_MAX rows, K of at least MANY_ROWS_MIN_K (and not one
 * wide block, below), a per-column Mul (*mul, up to MANY_ROWS_MUL_MAX_K), a residual
 * Add (*add) and an activation (*act; other than Relu over at most MANY_ROWS_ACT_MAX_ROWS)
 * after at most. Per-node minimums, gemm:jit ->
 * graphlab, µs, 1 thread | 2 threads, interleaved (bench/README, session 38): [32, 256] x
 * [256, 1024] 216 -> 186 | 238 -> 200; [256, 256] x [256, 1024] 1566 -> 1405 | 1612 ->
 * 1435; [128, 512] x [512, 128] 181 -> 177 | 205 -> 190; [197, 768] x [768, 3072] and
 * [400, 384] x [384, 96] even. With K = 96 a tile's 12 loads and stores of Y weigh
 * against 96 steps of 12 FMAs: [400, 96] x [96, 384] 326 -> 330 | 341 -> 344, [50, 96] x
 * [96, 288] 38 -> 39 | 43 -> 45: those stay on oneDNN. The MatMul heads of the corpus
 * (many_rows_product; fused units, per-node minimums of 50 reps, main's build interleaved
 * 3x, session 38 "MatMul heads"), rows x K x N: 256x256x512 + bias + Relu (mlp_ffn batch
 * 8) 762 -> 723 | 590 -> 416; 256x512x256 + bias + Relu 725 -> 711 | 566 -> 481;
 * 256x256x64 + bias 96 -> 93 | 119 -> 105; 32x256x512 (batch 1) 101 -> 94 | 123 -> 76;
 * 32x512x256 97 -> 94 | 118 -> 86; 128x128x128 + bias (bert batch 8) 46 -> 46 | 66 ->
 * 55; 16x128x128 8 -> 7 | 8 -> 6; the FFN whose second product (256x1024x256 + bias) it
 * takes 3293 -> 3299 | 2301 -> 2138. With the residual Add in the kernel: 128x128x128 +
 * bias + residual (bert, gpt2 batch 8) 50 -> 49 | 71 -> 59; 128x512x128 (gpt2 c_proj)
 * 185 -> 183 | 168-211 -> 195-198 (the 2-thread numbers drift with the load); 400x384x96
 * (vit) 322 -> 318 | 351 -> 189-334; batch 1: 16x128x128 9 -> 7 | 9 -> 7, 16x512x128 29
 * -> 24 | 29 -> 24, 50x384x96 43 -> 42 | 62 -> 52. The one slower at 1 thread (5 pairs,
 * the same with chunks of 12 to 72 rows): 128x128x384 + bias after gpt2's layer norm
 * 145-146 -> 148-150 | 169-178 -> 155-162; 128x128x512 there 231-232 -> 229-230 | 252-255
 * -> 225-244 and 128x128x128 46-49 -> 47-48 | 66-67 -> 56-58 are even at 1 thread. So a
 * single K block (K < MANY_ROWS_KC) over 64 rows or more and more than 256 columns stays
 * on gemm:jit (16x128x384 at batch 1 takes the kernel: 23 -> 21 | 24 -> 21). The same
 * limits hold with an activation the kernel applies where oneDNN's post-op costs ~1 ns an
 * output (session 39, Gelu, 1 thread, per-node minimums interleaved, ms: 3136x96x384
 * gemm:jit 3.60-3.64 against the kernel 3.55-3.60, 784x192x768 2.97-2.98 against
 * 2.96-2.98, 400x96x384 0.46-0.47 both: 1% at most, alone, for a packed copy of B). */
#define MANY_ROWS_MIN_K 128
#define MANY_ROWS_ONE_BLOCK_ROWS 64
#define MANY_ROWS_ONE_BLOCK_COLS 256
/* ConvNeXt's second product (bias, a per-column layer scale, the residual: *mul) at most
 * this K. Per-stage sums of per-node minimums, 20 reps at 1 thread, 3 pairs interleaved
 * with gemm:jit (bench/README session 38, "layer scale"), ms: 3 x 3136x384x96 8.76-8.81 ->
 * 8.04-8.39, 3 x 784x768x192 7.82-7.93 -> 7.75-7.87; with more K blocks over fewer rows
 * Y's trips between the blocks cost more than the packing saves: 9 x 196x1536x384
 * 23.40-23.47 -> 23.78-24.29, 3 x 49x3072x768 8.10-8.32 -> 8.59-8.72. */
#define MANY_ROWS_MUL_MAX_K 768
/* A product whose unit ends in an activation other than Relu (the epilogue applies it,
 * dn_avx2_act_tile) at most this many rows, two chunks of MANY_ROWS_MC: each chunk reads
 * all of packed B again, and inside a model, where B is out of the cache, gemm:jit with
 * oneDNN's post-op is as fast or faster past that (session 39, 1 thread, per-node
 * minimums, 3 pairs interleaved, gemm:jit -> kernel, ms: LN + MatMul + bias + Gelu units
 * of 196x384x1536, convnext_tiny 2.90-2.98 -> 2.88-3.04, swin_t 2.96-3.03 -> 3.00-3.06;
 * alone, 1568x384x1536 21.5-22.2 -> 22.5-22.6). Below it wins: 49x768x3072 in convnext
 * 3.02-3.10 -> 3.02-3.06 and in swin_t 3.03-3.16 -> 3.03-3.07, bert's 16x128x512 FFN
 * unit 0.070-0.074 -> 0.055, alone 128x768x3072 7.80-7.86 -> 6.98-7.04. */
#define MANY_ROWS_ACT_MAX_ROWS (2 * MANY_ROWS_MC)
static bool many_rows_take(const dn_build *b, const_dnnl_primitive_desc_t pd, bool ta,
                           bool pack_b, float alpha, bool bias_view, bool use_c, int64_t m,
                           int64_t kk, int64_t n, bool *mul, bool *add, dn_act *act)
{
    if (!own_kernel_fits(b, ta, pack_b, alpha, bias_view, use_c) || m <= FEW_ROWS_MAX ||
        !posts_kernel_applies(pd, m, n, mul, add, act) || (*mul && kk > MANY_ROWS_MUL_MAX_K) ||
        (act->kind > DN_ACT_RELU && m > MANY_ROWS_ACT_MAX_ROWS))
        return false;
    bool one_block_wide = kk < MANY_ROWS_KC && m >= MANY_ROWS_ONE_BLOCK_ROWS &&
                          n > MANY_ROWS_ONE_BLOCK_COLS;
    return kk >= MANY_ROWS_MIN_K && !one_block_wide;
}

/* A MatMul (or FusedMatMul) of a constant 2-D B on graphlab's many-rows kernel, where
 * many_rows_take takes the product: A [..., M, K] plain, its matrices stacked as one of
 * rows = A's count / K (the tall product: the same bytes, Y's too), the unit's per-column
 * Add (dn_tail_bias) as the kernel's bias, at most a residual Add of [rows, N] and an
 * activation after (dn_post_act). False: oneDNN runs it. */
static bool many_rows_product(dn_build *b, const_dnnl_primitive_desc_t pd,
                              const product_shape *s, const gl_tensor *a, const gl_tensor *w,
                              const product_mds *mds)
{
    int64_t kk = s->ad[s->nd - 1], n = s->bd[s->nd - 1], rows = a->count / kk;
    bool mul = false, add = false;
    dn_act act;
    /* B of rank 2 and built so (the tall product, or two dims): the panels are 2-D */
    if (w->rank != 2 || a->rank < 2 || mds->b_view.ndims != 2 ||
        !many_rows_take(b, pd, s->ta, s->pack_b, s->alpha, true, false, rows, kk, n, &mul,
                        &add, &act))
        return false;
    gemm_extra *x = gl_xcalloc(1, sizeof(*x));
    b->s->extra = x;
    b->s->extra_free = gemm_extra_free;
    x->m = rows;
    x->n = n;
    many_rows_bind(b, x, kk, n, &mds->b_view, s->bias, mul, add, act);
    return true;
}

/* C as a [rows, cols] bias that broadcasts to [m, n]; false when it does not. */
static bool gemm_bias_dims(const gl_tensor *c, int64_t m, int64_t n, int64_t *dims)
{
    if (c->rank > 2)
        return false;
    dims[0] = c->rank == 2 ? c->dims[0] : 1;
    dims[1] = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
    return (dims[0] == 1 || dims[0] == m) && (dims[1] == 1 || dims[1] == n);
}

static void scale_into(float *dst, const gl_tensor *c, float scale)
{
    const float *src = gl_tensor_data(c);
    for (int64_t i = 0; i < c->count; i++)
        dst[i] = scale * src[i];
}

static gl_status gemm_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *a = dn_f32_input(k, 0), *w = dn_f32_input(k, 1);
    const gl_tensor *c = k->n_inputs > 2 ? k->in[2] : NULL;
    if (!a || !w || (c && c->dtype != GL_DT_FLOAT))
        return dn_refuse(b, "not float32");
    if (a->rank != 2 || w->rank != 2 || a->count == 0 || w->count == 0 || (c && c->count == 0))
        return dn_refuse(b, "operands are not non-empty matrices");
    if (!c && k->opset < 11) /* C is required there: the reference kernel says so */
        return dn_refuse(b, "C missing before opset 11");
    bool ta = gl_node_attr_int(k->node, "transA", 0) != 0;
    bool tb = gl_node_attr_int(k->node, "transB", 0) != 0;
    float alpha = gl_node_attr_float(k->node, "alpha", 1.0f);
    float beta = gl_node_attr_float(k->node, "beta", 1.0f);
    if (alpha == 0.0f)
        return dn_refuse(b, "alpha is 0");
    int64_t m = a->dims[ta], kk = a->dims[!ta], kb = w->dims[tb], n = w->dims[!tb];
    if (kk != kb)
        return dn_refuse(b, "inner dims differ");
    /* A transposed operand is the stored matrix read with swapped strides. */
    int64_t adims[2] = {m, kk}, astr[2] = {ta ? 1 : kk, ta ? m : 1};
    int64_t bdims[2] = {kk, n}, bstr[2] = {tb ? 1 : n, tb ? kk : 1};
    int64_t ydims[2] = {m, n}, cdims[2];
    gemm_extra *x = gl_xcalloc(1, sizeof(*x));
    b->s->extra = x;
    b->s->extra_free = gemm_extra_free;
    x->m = m;
    x->n = n;
    bool use_c = c && beta != 0.0f;
    if (use_c && !gemm_bias_dims(c, m, n, cdims))
        return dn_refuse(b, "C does not broadcast to [%lld, %lld]", (long long)m, (long long)n);
    bool as_bias = use_c && cdims[0] == 1 && cdims[1] == n;
    /* Without a C of its own, a fused unit's per-column Add (alpha 1: the bias is not
     * scaled) is the bias, read as it is. */
    size_t unit_bias = !use_c && alpha == 1.0f ? dn_tail_bias(b, 2, n) : SIZE_MAX;
    if (unit_bias != SIZE_MAX) {
        as_bias = true;
        cdims[0] = 1;
        cdims[1] = n;
    }
    dnnl_memory_desc_t amd, bview, bmd, ymd, cmd;
    bool pack_b = packs_weights(b, 1, m);
    if (dn_md_plain(&amd, 2, adims, astr) != dnnl_success ||
        dn_md_plain(&bview, 2, bdims, bstr) != dnnl_success ||
        weights_md(pack_b, 2, bdims, &bview, &bmd) != dnnl_success ||
        dn_md_plain(&ymd, 2, ydims, NULL) != dnnl_success ||
        (as_bias && dn_md_plain(&cmd, 2, cdims, NULL) != dnnl_success))
        return dn_refuse(b, "shapes oneDNN does not describe");
    if (use_c && !as_bias) {
        x->c_in_dst = true;
        x->c_strides[0] = cdims[0] == 1 ? 0 : cdims[1];
        x->c_strides[1] = cdims[1] == 1 ? 0 : 1;
    }
    /* Post-ops: + (beta/alpha) * (C already in the output), then * alpha. Sum first: the
     * gemm-based matmul (AVX2 machines) takes sum-then-eltwise, not the other order. */
    dn_post post[2];
    size_t n_post = 0;
    if (x->c_in_dst)
        post[n_post++] = (dn_post){.scale = beta / alpha};
    if (alpha != 1.0f)
        post[n_post++] = (dn_post){dnnl_eltwise_linear, alpha, 0.0f, 1.0f, NULL};
    dnnl_primitive_attr_t attr = NULL;
    dnnl_status_t r = dn_build_attr(b, post, n_post, 2, ydims, &attr);
    dnnl_matmul_desc_t md;
    if (r == dnnl_success)
        r = dnnl_matmul_desc_init(&md, &amd, &bmd, as_bias ? &cmd : NULL, &ymd);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &md, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no matmul for this Gemm");
    dn_bind_input_view(b, DNNL_ARG_SRC, 0, &amd);
    bool mul = false, add = false;
    dn_act act;
    /* (a unit's bias Add stays with oneDNN's matmul: the few-rows kernel reads C only) */
    if (unit_bias == SIZE_MAX &&
        few_rows_take(b, *pd, ta, pack_b, alpha, as_bias && beta == alpha, use_c, m, kk,
                      &act)) {
        dnnl_memory_desc_t panels;
        few_rows_weights_md(kk, n, &panels);
        dn_bind_input_from(b, DNNL_ARG_WEIGHTS, 1, &bview, &panels);
        x->k = kk;
        x->bias = use_c;
        x->act = act;
        x->at = gl_xmalloc((size_t)kk * FEW_ROWS_MAX * sizeof(float));
#ifdef __x86_64__
        b->s->native = few_rows_run;
#endif
        dn_set_impl(b->c, b->s, "graphlab:avx2 %lld rows%s%s", (long long)m,
                    act.kind ? " + " : "", act.kind ? dn_act_name(act.kind) : "");
    } else if (many_rows_take(b, *pd, ta, pack_b, alpha, as_bias && beta == alpha, use_c, m,
                              kk, n, &mul, &add, &act)) {
        many_rows_bind(b, x, kk, n, &bview, as_bias, mul, add, act);
    } else {
        bind_weights(b, 1, pack_b, &bview, *pd);
    }
    if (unit_bias != SIZE_MAX) {
        dn_bind_input_view(b, DNNL_ARG_BIAS, unit_bias, &cmd);
    } else if (as_bias && beta == alpha) {
        dn_bind_input_view(b, DNNL_ARG_BIAS, 2, &cmd);
    } else if (as_bias) {
        x->bias_scale = beta / alpha;
        float *buf = dn_bind_own(b, DNNL_ARG_BIAS, &cmd);
        x->bias_per_run = !dn_input_constant(k, 2) || c->layout;
        if (!x->bias_per_run)
            scale_into(buf, c, x->bias_scale);
    }
    dn_bind_output(b, DNNL_ARG_DST, 0, &ymd, 2, ydims);
    return GL_OK;
}

static gl_status gemm_prepare(const gl_kernel_ctx *k, dn_node *s)
{
    const gemm_extra *x = s->extra;
    const gl_tensor *c = k->n_inputs > 2 ? k->in[2] : NULL;
    if (c && c->layout && (x->bias_per_run || x->c_in_dst))
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: Gemm's C in a oneDNN layout", k->where);
    if (x->bias_per_run)
        scale_into(s->own[0].buf, c, x->bias_scale);
    if (x->c_in_dst) {
        const float *cv = gl_tensor_data(c);
        float *y = k->out[0]->buf->data;
        for (int64_t i = 0; i < x->m; i++)
            for (int64_t j = 0; j < x->n; j++)
                y[i * x->n + j] = cv[i * x->c_strides[0] + j * x->c_strides[1]];
    }
    return GL_OK;
}

static bool matmul_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 1, DNNL_MAX_NDIMS) || !dn_input_fits(n, 1, 1, DNNL_MAX_NDIMS)) {
        snprintf(why, len, "operands are not float32");
        return false;
    }
    return true;
}

static bool gemm_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 2, 2) || !dn_input_fits(n, 1, 2, 2)) {
        snprintf(why, len, "operands are not float32 matrices");
        return false;
    }
    return true;
}

static const dn_op matmul_ops[] = {
    {"", "MatMul", 1, matmul_claim, matmul_build, NULL},
    {"", "Gemm", 1, gemm_claim, gemm_build, gemm_prepare},
    {"graphlab", "FusedMatMul", 1, matmul_claim, fused_matmul_build, NULL},
};
const dn_op_table dn_matmul_ops = {matmul_ops, GL_ARRAY_LEN(matmul_ops)};

/* linalg.c — matrix products, Einsum, quantization, integer convolution and Det.
 *
 * MatMul-like ops (MatMul, MatMulInteger, QLinearMatMul) share one shape rule — numpy's
 * matmul: a 1-D operand is promoted to a matrix and its dim dropped again, batch dims
 * broadcast — at inference and at run time. float32 products go through one
 * cache-blocked kernel; other dtypes are converted to float/double/int64 working copies
 * once and use the same loop. Quantized ops compute exact integer accumulators, then
 * requantize in float with round-half-to-even and saturation (the ONNX definition, and
 * what ONNX Runtime does).
 */
#include "ops/families.h"
#include "ops/opkit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small shared helpers ----------------------------------------------------------- */

static bool is_quant8(gl_dtype dt)
{
    return dt == GL_DT_UINT8 || dt == GL_DT_INT8;
}

/* Whole tensors as working copies in float or int64, like gl_tensor_to_f64 (malloc'd;
 * NULL with a message when memory runs out). Rare dtypes pay one conversion instead of a
 * switch per element. */
static float *tensor_to_f32(const gl_tensor *t, const char *where)
{
    float *v = malloc((size_t)(t->count ? t->count : 1) * sizeof(float));
    if (!v) {
        gl_fail(GL_ERR_NOMEM, "%s: out of memory converting a tensor", where);
        return NULL;
    }
    for (int64_t i = 0; i < t->count; i++)
        v[i] = (float)gl_elem_f64(t, i);
    return v;
}

static int64_t *tensor_to_i64(const gl_tensor *t, const char *where)
{
    int64_t *v = malloc((size_t)(t->count ? t->count : 1) * sizeof(int64_t));
    if (!v) {
        gl_fail(GL_ERR_NOMEM, "%s: out of memory converting a tensor", where);
        return NULL;
    }
    for (int64_t i = 0; i < t->count; i++)
        v[i] = gl_elem_i64(t, i);
    return v;
}


/* The common cases of QuantizeLinear and DequantizeLinear, per tensor between float32 and
 * 8 bits, as plain loops: gl_quantize_value's arithmetic without a call and a dtype switch
 * per element (a transformer's small activations run here, below oneDNN's threshold). */
static void quantize_f32(const float *x, int64_t n, float scale, int64_t zero, gl_dtype dt,
                         void *out)
{
    float lo = dt == GL_DT_INT8 ? -128.f : 0.f, hi = dt == GL_DT_INT8 ? 127.f : 255.f;
    float z = (float)zero;
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf(x[i] / scale) + z;
        v = isnan(v) ? z : v < lo ? lo : v > hi ? hi : v;
        if (dt == GL_DT_INT8)
            ((int8_t *)out)[i] = (int8_t)v;
        else
            ((uint8_t *)out)[i] = (uint8_t)v;
    }
}

static void dequantize_8bit(const void *x, gl_dtype dt, int64_t n, float scale, int64_t zero,
                            float *out)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v = dt == GL_DT_INT8 ? ((const int8_t *)x)[i] : ((const uint8_t *)x)[i];
        out[i] = (float)(v - zero) * scale;
    }
}

/* ---- matrix product kernels ---------------------------------------------------------- */

/* c[m,n] += a[m,k] * b[k,n], all dense row-major. The k and n loops are blocked so that a
 * panel of b (BLOCK_K x BLOCK_N) stays in cache while the rows of a stream over it; i-k-j
 * order makes the inner loop a contiguous axpy the compiler vectorizes, and four rows of
 * c are updated per load of b (register reuse). Each c element still sums over k in
 * order. One definition per working type. */
enum { MM_BLOCK_K = 64, MM_BLOCK_N = 256 };

#define DEFINE_MATMUL(name, T)                                                             \
    static void name(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n)         \
    {                                                                                      \
        for (int64_t j0 = 0; j0 < n; j0 += MM_BLOCK_N) {                                   \
            int64_t j1 = j0 + MM_BLOCK_N < n ? j0 + MM_BLOCK_N : n;                        \
            for (int64_t p0 = 0; p0 < k; p0 += MM_BLOCK_K) {                               \
                int64_t p1 = p0 + MM_BLOCK_K < k ? p0 + MM_BLOCK_K : k;                    \
                int64_t i = 0;                                                             \
                for (; i + 4 <= m; i += 4) {                                               \
                    T *restrict c0 = c + i * n, *restrict c1 = c0 + n;                     \
                    T *restrict c2 = c1 + n, *restrict c3 = c2 + n;                        \
                    const T *a0 = a + i * k;                                               \
                    for (int64_t p = p0; p < p1; p++) {                                    \
                        const T v0 = a0[p], v1 = a0[k + p], v2 = a0[2 * k + p];            \
                        const T v3 = a0[3 * k + p];                                        \
                        const T *restrict brow = b + p * n;                                \
                        for (int64_t j = j0; j < j1; j++) {                                \
                            const T bv = brow[j];                                          \
                            c0[j] += v0 * bv;                                              \
                            c1[j] += v1 * bv;                                              \
                            c2[j] += v2 * bv;                                              \
                            c3[j] += v3 * bv;                                              \
                        }                                                                  \
                    }                                                                      \
                }                                                                          \
                for (; i < m; i++) {                                                       \
                    T *restrict crow = c + i * n;                                          \
                    const T *arow = a + i * k;                                             \
                    for (int64_t p = p0; p < p1; p++) {                                    \
                        const T av = arow[p];                                              \
                        const T *restrict brow = b + p * n;                                \
                        for (int64_t j = j0; j < j1; j++)                                  \
                            crow[j] += av * brow[j];                                       \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

DEFINE_MATMUL(matmul_f32, float)
DEFINE_MATMUL(matmul_f64, double)
DEFINE_MATMUL(matmul_i64, int64_t)

/* ---- numpy matmul geometry ----------------------------------------------------------- */

typedef struct mm_geom {
    int64_t m, k, n;          /* one product: [m,k] x [k,n] */
    gl_bcast batch;           /* broadcast of the batch dims (in units of matrices) */
    int rank;                 /* output rank */
    int64_t dims[GL_MAX_RANK];
} mm_geom;

static gl_status mm_geom_init(mm_geom *g, const gl_tensor *a, const gl_tensor *b,
                              const char *where)
{
    if (a->rank < 1 || b->rank < 1)
        return gl_fail(GL_ERR_INPUT, "%s: matrix operands must have rank >= 1, got ranks "
                       "%d and %d", where, a->rank, b->rank);
    g->m = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    g->k = a->dims[a->rank - 1];
    int64_t kb = b->rank >= 2 ? b->dims[b->rank - 2] : b->dims[0];
    g->n = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    if (kb != g->k)
        return gl_fail(GL_ERR_INPUT, "%s: inner dimensions differ: A has %lld columns, B "
                       "has %lld rows", where, (long long)g->k, (long long)kb);
    /* Headers only: gl_bcast_init reads ranks and dims. */
    gl_tensor_frame fa, fb;
    gl_tensor *ba = gl_tensor_frame_init(&fa, NULL), *bb = gl_tensor_frame_init(&fb, NULL);
    ba->rank = a->rank > 2 ? a->rank - 2 : 0;
    bb->rank = b->rank > 2 ? b->rank - 2 : 0;
    memcpy(ba->dims, a->dims, (size_t)ba->rank * sizeof(int64_t));
    memcpy(bb->dims, b->dims, (size_t)bb->rank * sizeof(int64_t));
    const gl_tensor *ts[2] = {ba, bb};
    gl_status st = gl_bcast_init(&g->batch, ts, 2, where);
    if (st)
        return st;
    g->rank = g->batch.rank;
    memcpy(g->dims, g->batch.dims, (size_t)g->rank * sizeof(int64_t));
    if (a->rank >= 2)
        g->dims[g->rank++] = g->m;
    if (b->rank >= 2)
        g->dims[g->rank++] = g->n;
    return GL_OK;
}

/* Offsets (in elements) of batch `it`'s matrices in A and B. */
static void mm_batch_offsets(const mm_geom *g, const gl_bcast_iter *it, int64_t *a_off,
                             int64_t *b_off)
{
    *a_off = it->off[0] * g->m * g->k;
    *b_off = it->off[1] * g->k * g->n;
}

#define MM_FOR_EACH_BATCH(g, it, bi)                                                       \
    gl_bcast_iter it;                                                                      \
    gl_bcast_iter_start(&it, &(g)->batch);                                                 \
    for (int64_t bi = 0; bi < (g)->batch.count; bi++, gl_bcast_iter_next(&it))

/* t with its last two dims swapped, as a dense copy in *out (FusedMatMul's transA and
 * transB): the product loops then read every operand row-major. */
static gl_status mm_transposed(const gl_tensor *t, const char *what, const char *where,
                               gl_tensor **out)
{
    *out = NULL;
    if (t->rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: %s has rank %d: a transposed operand needs rank "
                       ">= 2", where, what, t->rank);
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, t->dims, (size_t)t->rank * sizeof(int64_t));
    int64_t rows = dims[t->rank - 2], cols = dims[t->rank - 1];
    dims[t->rank - 2] = cols;
    dims[t->rank - 1] = rows;
    gl_tensor *c = gl_tensor_new(t->dtype, t->rank, dims);
    if (!c)
        return gl_fail(GL_ERR_NOMEM, "%s: out of memory transposing %s", where, what);
    *out = c;
    if (t->count == 0)
        return GL_OK;
    size_t es = gl_dtype_size(t->dtype);
    const char *src = gl_tensor_data(t);
    char *dst = gl_tensor_make_writable(c);
    int64_t mat = rows * cols;
    for (int64_t m0 = 0; m0 < t->count; m0 += mat)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t q = 0; q < cols; q++)
                memcpy(dst + (size_t)(m0 + q * rows + r) * es,
                       src + (size_t)(m0 + r * cols + q) * es, es);
    return GL_OK;
}

/* Y = alpha * A x B for numpy-matmul operands already in their logical shapes. */
static gl_status matmul_run(gl_kernel_ctx *k, const gl_tensor *a, const gl_tensor *b,
                            float alpha)
{
    gl_status st;
    if ((st = gl_need_number(k, a, false, "input A")))
        return st;
    if (a->dtype != b->dtype)
        return gl_fail(GL_ERR_INPUT, "%s: inputs A (%s) and B (%s) differ in type", k->where,
                       gl_dtype_name(a->dtype), gl_dtype_name(b->dtype));
    mm_geom g;
    if ((st = mm_geom_init(&g, a, b, k->where)))
        return st;
    gl_tensor *y = gl_out_new(k, 0, a->dtype, g.rank, g.dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (y->count == 0 || g.k == 0)
        return GL_OK; /* K = 0: the zeroed output is the product (empty operands have no
                       * data pointer to offset) */
    int64_t mn = g.m * g.n;
    void *yd = gl_tensor_make_writable(y);
    if (a->dtype == GL_DT_FLOAT || a->dtype == GL_DT_DOUBLE) {
        bool f = a->dtype == GL_DT_FLOAT;
        MM_FOR_EACH_BATCH(&g, it, bi) {
            int64_t ao, bo;
            mm_batch_offsets(&g, &it, &ao, &bo);
            if (f)
                matmul_f32((const float *)gl_tensor_data(a) + ao,
                           (const float *)gl_tensor_data(b) + bo, (float *)yd + bi * mn, g.m,
                           g.k, g.n);
            else
                matmul_f64((const double *)gl_tensor_data(a) + ao,
                           (const double *)gl_tensor_data(b) + bo, (double *)yd + bi * mn,
                           g.m, g.k, g.n);
        }
        for (int64_t i = 0; alpha != 1.0f && i < y->count; i++) {
            if (f)
                ((float *)yd)[i] *= alpha;
            else
                ((double *)yd)[i] *= alpha;
        }
        return GL_OK;
    }
    if (gl_dtype_is_int(a->dtype)) {
        if (alpha != 1.0f)
            return gl_fail(GL_ERR_INPUT, "%s: alpha %g on %s operands", k->where, alpha,
                           gl_dtype_name(a->dtype));
        int64_t *av = tensor_to_i64(a, k->where), *bv = tensor_to_i64(b, k->where);
        int64_t *yv = calloc((size_t)y->count, sizeof(int64_t));
        if (av && bv && yv) {
            MM_FOR_EACH_BATCH(&g, it, bi) {
                int64_t ao, bo;
                mm_batch_offsets(&g, &it, &ao, &bo);
                matmul_i64(av + ao, bv + bo, yv + bi * mn, g.m, g.k, g.n);
            }
            for (int64_t i = 0; i < y->count; i++)
                gl_elem_set_i64(y, i, yv[i]);
        }
        st = av && bv && yv ? GL_OK : gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
        free(av), free(bv), free(yv);
        return st;
    }
    /* float16 / bfloat16: accumulate in float, round once at the end. */
    float *av = tensor_to_f32(a, k->where), *bv = tensor_to_f32(b, k->where);
    float *yv = calloc((size_t)y->count, sizeof(float));
    if (av && bv && yv) {
        MM_FOR_EACH_BATCH(&g, it, bi) {
            int64_t ao, bo;
            mm_batch_offsets(&g, &it, &ao, &bo);
            matmul_f32(av + ao, bv + bo, yv + bi * mn, g.m, g.k, g.n);
        }
        for (int64_t i = 0; i < y->count; i++)
            gl_elem_set_f64(y, i, alpha * yv[i]);
    }
    st = av && bv && yv ? GL_OK : gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
    free(av), free(bv), free(yv);
    return st;
}

static gl_status matmul_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 2);
    return st ? st : matmul_run(k, k->in[0], k->in[1], 1.0f);
}

gl_status gl_matmul_trans_kernel(gl_kernel_ctx *k, bool ta, bool tb, float alpha)
{
    gl_status st = gl_need_inputs(k, 2);
    if (st)
        return st;
    /* Numbers only: the copies below move elements as bytes. */
    if ((st = gl_need_number(k, k->in[0], false, "input A")) ||
        (st = gl_need_number(k, k->in[1], false, "input B")))
        return st;
    gl_tensor *a = NULL, *b = NULL;
    if (!(ta && (st = mm_transposed(k->in[0], "input A", k->where, &a))) &&
        !(tb && (st = mm_transposed(k->in[1], "input B", k->where, &b))))
        st = matmul_run(k, a ? a : k->in[0], b ? b : k->in[1], alpha);
    gl_tensor_free(a);
    gl_tensor_free(b);
    return st;
}

/* Inference of numpy matmul shapes: broadcast batch dims, then M (unless A is 1-D) and N
 * (unless B is 1-D). Unknown ranks leave the shape unknown. */
static gl_status matmul_infer_shape(gl_infer_ctx *c, const gl_type *a, const gl_type *b,
                                    gl_shape *out)
{
    gl_shape_init_unknown(out);
    int ra = a->shape.rank, rb = b->shape.rank;
    if (ra == GL_RANK_UNKNOWN || rb == GL_RANK_UNKNOWN)
        return GL_OK;
    if (ra == 0 || rb == 0)
        return gl_fail(GL_ERR_INPUT, "%s: matrix operands must have rank >= 1, got ranks %d "
                       "and %d", c->where, ra, rb);
    const gl_dim *ka = &a->shape.dims[ra - 1], *kb = &b->shape.dims[rb >= 2 ? rb - 2 : 0];
    if (ka->value >= 0 && kb->value >= 0 && ka->value != kb->value)
        return gl_fail(GL_ERR_INPUT, "%s: inner dimensions differ: A has %lld columns, B has "
                       "%lld rows", c->where, (long long)ka->value, (long long)kb->value);
    /* Batch dims are a prefix of each shape: broadcast them with the shared helper. */
    gl_type ta = {.kind = GL_TYPE_TENSOR, .dtype = a->dtype,
                  .shape = {ra > 2 ? ra - 2 : 0, a->shape.dims}};
    gl_type tb = {.kind = GL_TYPE_TENSOR, .dtype = b->dtype,
                  .shape = {rb > 2 ? rb - 2 : 0, b->shape.dims}};
    const gl_type *bt[2] = {&ta, &tb};
    gl_infer_ctx sub = *c;
    sub.in_types = bt;
    sub.in_values = NULL;
    sub.n_inputs = 2;
    gl_shape batch;
    gl_status st = gl_infer_broadcast(&sub, 0, 2, &batch);
    if (st)
        return st;
    gl_shape_set_rank(out, batch.rank + (ra >= 2) + (rb >= 2));
    int d = 0;
    for (; d < batch.rank; d++)
        gl_dim_copy(&out->dims[d], &batch.dims[d]);
    if (ra >= 2)
        gl_dim_copy(&out->dims[d++], &a->shape.dims[ra - 2]);
    if (rb >= 2)
        gl_dim_copy(&out->dims[d++], &b->shape.dims[rb - 1]);
    gl_shape_free(&batch);
    return GL_OK;
}

/* Shared by MatMul, MatMulInteger, QLinearMatMul: operands at ia, ib; output dtype from
 * `dt` (UNDEFINED: A's dtype). */
static gl_status matmul_like_infer(gl_infer_ctx *c, size_t ia, size_t ib, gl_dtype dt)
{
    const gl_type *a = gl_infer_input(c, ia), *b = gl_infer_input(c, ib);
    if (!a || !b)
        return GL_OK;
    gl_shape s;
    gl_status st = matmul_infer_shape(c, a, b, &s);
    if (st)
        return st;
    gl_infer_set(c, 0, dt == GL_DT_UNDEFINED ? a->dtype : dt, &s);
    gl_shape_free(&s);
    return GL_OK;
}

static gl_status matmul_infer(gl_infer_ctx *c)
{
    return matmul_like_infer(c, 0, 1, GL_DT_UNDEFINED);
}

/* t's type with its last two dims swapped, sharing t's dims (read only; dims[] holds
 * the view's own order). An unknown rank stays unknown. */
static gl_status mm_swapped_type(const gl_infer_ctx *c, const gl_type *t, const char *what,
                                 gl_dim *dims, gl_type *view)
{
    *view = *t;
    int r = t->shape.rank;
    if (r == GL_RANK_UNKNOWN)
        return GL_OK;
    if (r < 2)
        return gl_fail(GL_ERR_INPUT, "%s: %s has rank %d: a transposed operand needs rank "
                       ">= 2", c->where, what, r);
    memcpy(dims, t->shape.dims, (size_t)r * sizeof(gl_dim));
    dims[r - 2] = t->shape.dims[r - 1];
    dims[r - 1] = t->shape.dims[r - 2];
    view->shape.dims = dims;
    return GL_OK;
}

gl_status gl_matmul_trans_infer(gl_infer_ctx *c, bool ta, bool tb)
{
    const gl_type *a = gl_infer_input(c, 0), *b = gl_infer_input(c, 1);
    if (!a || !b)
        return GL_OK;
    if (a->dtype != GL_DT_UNDEFINED && b->dtype != GL_DT_UNDEFINED && a->dtype != b->dtype)
        return gl_fail(GL_ERR_INPUT, "%s: inputs A (%s) and B (%s) differ in type", c->where,
                       gl_dtype_name(a->dtype), gl_dtype_name(b->dtype));
    gl_dim da[GL_MAX_RANK], db[GL_MAX_RANK];
    gl_type va, vb;
    gl_status st;
    if ((a->shape.rank > GL_MAX_RANK || b->shape.rank > GL_MAX_RANK) && (ta || tb))
        return gl_fail(GL_ERR_INPUT, "%s: rank above %d", c->where, GL_MAX_RANK);
    if ((st = ta ? mm_swapped_type(c, a, "input A", da, &va) : (va = *a, GL_OK)) ||
        (st = tb ? mm_swapped_type(c, b, "input B", db, &vb) : (vb = *b, GL_OK)))
        return st;
    gl_shape s;
    if ((st = matmul_infer_shape(c, &va, &vb, &s)))
        return st;
    gl_infer_set(c, 0, a->dtype, &s);
    gl_shape_free(&s);
    return GL_OK;
}

/* ---- an ONNX product with some inputs seen swapped (graphlab's MatMulIntegerT, ...) ---- */

gl_status gl_infer_swapped(gl_infer_ctx *c, gl_infer_fn plain, const gl_swap *swap)
{
    gl_dim dims[GL_MAX_SWAPPED][GL_MAX_RANK];
    gl_type views[GL_MAX_SWAPPED];
    const gl_type *types[GL_MAX_SWAPPED];
    const gl_tensor *values[GL_MAX_SWAPPED];
    if (c->n_inputs > GL_MAX_SWAPPED)
        return gl_fail(GL_ERR_INPUT, "%s: %zu inputs, expected at most %d", c->where,
                       c->n_inputs, GL_MAX_SWAPPED);
    for (size_t i = 0; i < c->n_inputs; i++) {
        const gl_type *t = gl_infer_input(c, i);
        types[i] = t;
        values[i] = c->in_values ? c->in_values[i] : NULL;
        if (!t || swap[i] == GL_SWAP_NO || t->kind != GL_TYPE_TENSOR ||
            (swap[i] == GL_SWAP_PARAM && t->shape.rank < 2))
            continue;
        if (t->shape.rank > GL_MAX_RANK)
            return gl_fail(GL_ERR_INPUT, "%s: rank above %d", c->where, GL_MAX_RANK);
        char what[32];
        snprintf(what, sizeof(what), "input %zu", i);
        gl_status st = mm_swapped_type(c, t, what, dims[i], &views[i]);
        if (st)
            return st;
        types[i] = &views[i];
        values[i] = NULL;
    }
    gl_infer_ctx sub = *c;
    sub.in_types = types;
    sub.in_values = values;
    return plain(&sub);
}

gl_status gl_kernel_swapped(gl_kernel_ctx *k, gl_kernel_fn plain, const gl_swap *swap)
{
    if (k->n_inputs > GL_MAX_SWAPPED)
        return gl_fail(GL_ERR_INPUT, "%s: %zu inputs, expected at most %d", k->where,
                       k->n_inputs, GL_MAX_SWAPPED);
    const gl_tensor *in[GL_MAX_SWAPPED];
    gl_tensor *copies[GL_MAX_SWAPPED] = {0};
    gl_status st = GL_OK;
    for (size_t i = 0; i < k->n_inputs && st == GL_OK; i++) {
        const gl_tensor *t = in[i] = k->in[i];
        if (!t || swap[i] == GL_SWAP_NO || (swap[i] == GL_SWAP_PARAM && t->rank < 2))
            continue;
        char what[32];
        snprintf(what, sizeof(what), "input %zu", i);
        if ((st = mm_transposed(t, what, k->where, &copies[i])) == GL_OK)
            in[i] = copies[i];
    }
    if (st == GL_OK) {
        gl_kernel_ctx sub = *k;
        sub.in = in;
        st = plain(&sub);
        k->reorder_ns += sub.reorder_ns;
    }
    for (size_t i = 0; i < k->n_inputs; i++)
        gl_tensor_free(copies[i]);
    return st;
}

/* ---- Gemm ----------------------------------------------------------------------------- */

/* A Gemm operand as a dense row-major matrix of its logical (transposed) shape: the
 * tensor's own floats when they already are that, else a converted copy in *owned. */
static const float *gemm_operand_f32(const gl_tensor *t, bool trans, float **owned,
                                     const char *where)
{
    static const float none = 0.0f; /* an empty operand (K = 0) has no data pointer */
    *owned = NULL;
    if (t->count == 0)
        return &none;
    if (t->dtype == GL_DT_FLOAT && !trans)
        return gl_tensor_data(t);
    int64_t rows = t->dims[0], cols = t->dims[1];
    float *v = malloc((size_t)(t->count ? t->count : 1) * sizeof(float));
    if (!v) {
        gl_fail(GL_ERR_NOMEM, "%s: out of memory", where);
        return NULL;
    }
    bool f = t->dtype == GL_DT_FLOAT;
    const float *src = gl_tensor_data(t);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t q = 0; q < cols; q++) {
            int64_t i = r * cols + q;
            v[trans ? q * rows + r : i] = f ? src[i] : (float)gl_elem_f64(t, i);
        }
    *owned = v;
    return v;
}

static const double *gemm_operand_f64(const gl_tensor *t, bool trans, double **owned,
                                      const char *where)
{
    static const double none = 0.0;
    *owned = NULL;
    if (t->count == 0)
        return &none;
    if (t->dtype == GL_DT_DOUBLE && !trans)
        return gl_tensor_data(t);
    int64_t rows = t->dims[0], cols = t->dims[1];
    double *v = malloc((size_t)(t->count ? t->count : 1) * sizeof(double));
    if (!v) {
        gl_fail(GL_ERR_NOMEM, "%s: out of memory", where);
        return NULL;
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t q = 0; q < cols; q++)
            v[trans ? q * rows + r : r * cols + q] = gl_elem_f64(t, r * cols + q);
    *owned = v;
    return v;
}

/* C broadcasts unidirectionally to [M, N]: right-aligned dims of 1 or equal. Element
 * (i, j) of the broadcast C is c_at[i * rs + j * cs]. */
typedef struct gemm_bias {
    int64_t rs, cs;
} gemm_bias;

static gl_status gemm_bias_init(gemm_bias *bias, const gl_tensor *c, int64_t m, int64_t n,
                                const char *where)
{
    if (c->rank > 2)
        return gl_fail(GL_ERR_INPUT, "%s: input C has rank %d, expected at most 2", where,
                       c->rank);
    int64_t cr = c->rank == 2 ? c->dims[0] : 1, cc = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
    if ((cr != 1 && cr != m) || (cc != 1 && cc != n))
        return gl_fail(GL_ERR_INPUT, "%s: input C of shape [%lld, %lld] does not broadcast "
                       "to [%lld, %lld]", where, (long long)cr, (long long)cc, (long long)m,
                       (long long)n);
    bias->rs = cr == 1 ? 0 : cc;
    bias->cs = cc == 1 ? 0 : 1;
    return GL_OK;
}

static gl_status gemm_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 2);
    if (st)
        return st;
    const gl_tensor *a = k->in[0], *b = k->in[1], *c = gl_opt_input(k, 2);
    bool ta = gl_node_attr_int(k->node, "transA", 0) != 0;
    bool tb = gl_node_attr_int(k->node, "transB", 0) != 0;
    float alpha = gl_node_attr_float(k->node, "alpha", 1.0f);
    float beta = gl_node_attr_float(k->node, "beta", 1.0f);
    if ((st = gl_need_number(k, a, false, "input A")) ||
        (st = gl_need_number(k, b, false, "input B")) ||
        (c && (st = gl_need_number(k, c, false, "input C"))))
        return st;
    if (a->rank != 2 || b->rank != 2)
        return gl_fail(GL_ERR_INPUT, "%s: inputs A and B must have rank 2, got %d and %d",
                       k->where, a->rank, b->rank);
    int64_t m = a->dims[ta ? 1 : 0], kk = a->dims[ta ? 0 : 1];
    int64_t kb = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
    if (kk != kb)
        return gl_fail(GL_ERR_INPUT, "%s: inner dimensions differ: A' has %lld columns, B' "
                       "has %lld rows", k->where, (long long)kk, (long long)kb);
    gemm_bias bias = {0, 0};
    if (c && (st = gemm_bias_init(&bias, c, m, n, k->where)))
        return st;
    gl_tensor *y = gl_out_new(k, 0, a->dtype, 2, (int64_t[]){m, n});
    if (!y)
        return GL_ERR_NOMEM;
    if (y->count == 0)
        return GL_OK;
    /* float32 and the half types work in float (as the float32 reference does), double
     * and integers in double. */
    bool in_float = a->dtype == GL_DT_FLOAT || a->dtype == GL_DT_FLOAT16 ||
                    a->dtype == GL_DT_BFLOAT16;
    if (in_float) {
        float *oa = NULL, *ob = NULL;
        const float *av = gemm_operand_f32(a, ta, &oa, k->where);
        const float *bv = av ? gemm_operand_f32(b, tb, &ob, k->where) : NULL;
        bool direct = a->dtype == GL_DT_FLOAT; /* accumulate straight into Y */
        float *yv = direct ? gl_tensor_make_writable(y) : calloc((size_t)y->count, sizeof(float));
        if (!av || !bv || !yv) {
            free(oa), free(ob);
            if (!direct)
                free(yv);
            return gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
        }
        matmul_f32(av, bv, yv, m, kk, n);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float v = alpha * yv[i * n + j];
                if (c)
                    v += beta * (float)gl_elem_f64(c, i * bias.rs + j * bias.cs);
                yv[i * n + j] = v;
            }
        if (!direct) {
            for (int64_t i = 0; i < y->count; i++)
                gl_elem_set_f64(y, i, yv[i]);
            free(yv);
        }
        free(oa), free(ob);
        return GL_OK;
    }
    double *oa = NULL, *ob = NULL;
    const double *av = gemm_operand_f64(a, ta, &oa, k->where);
    const double *bv = av ? gemm_operand_f64(b, tb, &ob, k->where) : NULL;
    double *yv = calloc((size_t)y->count, sizeof(double));
    if (!av || !bv || !yv) {
        free(oa), free(ob), free(yv);
        return gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
    }
    matmul_f64(av, bv, yv, m, kk, n);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double v = alpha * yv[i * n + j];
            if (c)
                v += beta * gl_elem_f64(c, i * bias.rs + j * bias.cs);
            gl_elem_set_f64(y, i * n + j, v);
        }
    free(oa), free(ob), free(yv);
    return GL_OK;
}

static gl_status gemm_infer_common(gl_infer_ctx *c, bool c_required)
{
    if (c_required && (c->n_inputs < 3 || !c->in_types[2]))
        return gl_fail(GL_ERR_INPUT, "%s: input C is required before opset 11", c->where);
    const gl_type *a = gl_infer_input(c, 0), *b = gl_infer_input(c, 1);
    if (!a || !b)
        return GL_OK;
    bool ta = gl_node_attr_int(c->node, "transA", 0) != 0;
    bool tb = gl_node_attr_int(c->node, "transB", 0) != 0;
    int ra = a->shape.rank, rb = b->shape.rank;
    if ((ra != GL_RANK_UNKNOWN && ra != 2) || (rb != GL_RANK_UNKNOWN && rb != 2))
        return gl_fail(GL_ERR_INPUT, "%s: inputs A and B must have rank 2, got %d and %d",
                       c->where, ra, rb);
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, 2);
    if (ra == 2)
        gl_dim_copy(&s.dims[0], &a->shape.dims[ta ? 1 : 0]);
    if (rb == 2)
        gl_dim_copy(&s.dims[1], &b->shape.dims[tb ? 0 : 1]);
    if (ra == 2 && rb == 2) {
        int64_t ka = a->shape.dims[ta ? 0 : 1].value, kb = b->shape.dims[tb ? 1 : 0].value;
        if (ka >= 0 && kb >= 0 && ka != kb) {
            gl_shape_free(&s);
            return gl_fail(GL_ERR_INPUT, "%s: inner dimensions differ: A' has %lld columns, "
                           "B' has %lld rows", c->where, (long long)ka, (long long)kb);
        }
    }
    const gl_type *ct = gl_infer_input(c, 2);
    if (ct && ct->shape.rank > 2) {
        gl_shape_free(&s);
        return gl_fail(GL_ERR_INPUT, "%s: input C has rank %d, expected at most 2", c->where,
                       ct->shape.rank);
    }
    for (int d = 0; ct && d < ct->shape.rank; d++) {
        int64_t cv = ct->shape.dims[d].value;
        int64_t want = s.dims[2 - ct->shape.rank + d].value;
        if (cv > 1 && want >= 0 && cv != want) {
            gl_shape_free(&s);
            return gl_fail(GL_ERR_INPUT, "%s: input C's dimension %d (%lld) does not "
                           "broadcast to %lld", c->where, d, (long long)cv, (long long)want);
        }
    }
    gl_infer_set(c, 0, a->dtype, &s);
    gl_shape_free(&s);
    return GL_OK;
}

static gl_status gemm_infer_v1(gl_infer_ctx *c) { return gemm_infer_common(c, true); }
static gl_status gemm_infer_v11(gl_infer_ctx *c) { return gemm_infer_common(c, false); }

static gl_status gemm_kernel_v1(gl_kernel_ctx *k)
{
    if (!gl_opt_input(k, 2))
        return gl_fail(GL_ERR_INPUT, "%s: input C is required before opset 11", k->where);
    return gemm_kernel(k);
}

/* ---- Einsum ---------------------------------------------------------------------------- */

/* Labels: the letters a-z and A-Z are ids 0..51; the broadcast ellipsis dims (right
 * aligned across operands) are ids EIN_ELLIPSIS + e. */
enum { EIN_LETTERS = 52, EIN_ELLIPSIS = 52, EIN_MAX_LABELS = EIN_LETTERS + GL_MAX_RANK };

/* One term of the equation as written: letter ids, and where "..." stands. */
typedef struct ein_term {
    int n;                    /* letters */
    int ids[GL_MAX_RANK];
    int ellipsis_at;          /* index in ids before which "..." stands; -1 none */
} ein_term;

typedef struct ein_eq {
    size_t n_in;
    ein_term *in;             /* n_in terms (owned) */
    ein_term out;             /* explicit, or made from the implicit rule */
} ein_eq;

static int ein_letter_id(char ch)
{
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a';
    if (ch >= 'A' && ch <= 'Z')
        return 26 + ch - 'A';
    return -1;
}

static char ein_letter(int id)
{
    return (char)(id < 26 ? 'a' + id : 'A' + id - 26);
}

/* Parse one term from s[0..len); spaces already removed. */
static gl_status ein_parse_term(const char *s, size_t len, ein_term *t, const char *where)
{
    t->n = 0;
    t->ellipsis_at = -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (t->ellipsis_at >= 0 || len - i < 3 || s[i + 1] != '.' || s[i + 2] != '.')
                return gl_fail(GL_ERR_INPUT, "%s: equation term '%.*s' has a malformed or "
                               "repeated ellipsis", where, (int)len, s);
            t->ellipsis_at = t->n;
            i += 2;
            continue;
        }
        int id = ein_letter_id(s[i]);
        if (id < 0)
            return gl_fail(GL_ERR_INPUT, "%s: equation term '%.*s' has an invalid character "
                           "'%c'", where, (int)len, s, s[i]);
        if (t->n >= GL_MAX_RANK)
            return gl_fail(GL_ERR_INPUT, "%s: equation term '%.*s' has too many labels",
                           where, (int)len, s);
        t->ids[t->n++] = id;
    }
    return GL_OK;
}

/* The implicit output: "..." if any operand has one, then the letters that occur once
 * in the whole equation, in alphabetical (ASCII) order, as numpy does. */
static void ein_implicit_output(ein_eq *eq)
{
    int seen[EIN_LETTERS] = {0};
    bool ellipsis = false;
    for (size_t i = 0; i < eq->n_in; i++) {
        ellipsis |= eq->in[i].ellipsis_at >= 0;
        for (int j = 0; j < eq->in[i].n; j++)
            seen[eq->in[i].ids[j]]++;
    }
    eq->out.n = 0;
    eq->out.ellipsis_at = ellipsis ? 0 : -1;
    for (int j = 0; j < EIN_LETTERS; j++) {
        int id = (j + 26) % EIN_LETTERS; /* 'A'..'Z' (ids 26..51) sort before 'a'..'z' */
        if (seen[id] == 1)
            eq->out.ids[eq->out.n++] = id;
    }
}

static void ein_free(ein_eq *eq)
{
    free(eq->in);
    eq->in = NULL;
}

static gl_status ein_parse(const char *equation, size_t n_in, ein_eq *eq, const char *where)
{
    memset(eq, 0, sizeof(*eq));
    size_t len = strlen(equation);
    char *s = gl_xmalloc(len + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (equation[i] != ' ' && equation[i] != '\t')
            s[n++] = equation[i];
    s[n] = '\0';
    char *arrow = strstr(s, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - s) : n;
    size_t terms = 1;
    for (size_t i = 0; i < lhs_len; i++)
        terms += s[i] == ',';
    gl_status st = GL_OK;
    if (terms != n_in) {
        st = gl_fail(GL_ERR_INPUT, "%s: equation '%s' has %zu operand terms for %zu inputs",
                     where, equation, terms, n_in);
        goto done;
    }
    eq->n_in = n_in;
    eq->in = gl_xcalloc(n_in ? n_in : 1, sizeof(ein_term));
    size_t start = 0, t = 0;
    for (size_t i = 0; i <= lhs_len && !st; i++)
        if (i == lhs_len || s[i] == ',') {
            st = ein_parse_term(s + start, i - start, &eq->in[t++], where);
            start = i + 1;
        }
    if (st)
        goto done;
    if (!arrow) {
        ein_implicit_output(eq);
        goto done;
    }
    if ((st = ein_parse_term(arrow + 2, n - lhs_len - 2, &eq->out, where)))
        goto done;
    bool in_any[EIN_LETTERS] = {false}, in_out[EIN_LETTERS] = {false};
    for (size_t i = 0; i < n_in; i++)
        for (int j = 0; j < eq->in[i].n; j++)
            in_any[eq->in[i].ids[j]] = true;
    for (int j = 0; j < eq->out.n; j++) {
        int id = eq->out.ids[j];
        if (in_out[id] || !in_any[id]) {
            st = gl_fail(GL_ERR_INPUT, "%s: output label '%c' of equation '%s' is %s", where,
                         ein_letter(id), equation,
                         in_out[id] ? "repeated" : "not in any operand");
            goto done;
        }
        in_out[id] = true;
    }
done:
    free(s);
    if (st)
        ein_free(eq);
    return st;
}

/* Number of dims "..." stands for in operand i of rank `rank` (-1 with a message when the
 * rank does not fit the term). */
static int ein_ellipsis_rank(const ein_term *t, int rank, size_t i, const char *where)
{
    if (t->ellipsis_at < 0 ? rank != t->n : rank < t->n) {
        gl_fail(GL_ERR_INPUT, "%s: input %zu has rank %d but its equation term has %d "
                "labels%s", where, i, rank, t->n, t->ellipsis_at >= 0 ? " and '...'" : "");
        return -1;
    }
    return rank - t->n;
}

/* Label of dim d of an operand whose "..." covers `ell` dims of the `ell_max` broadcast
 * ellipsis dims. */
static int ein_dim_label(const ein_term *t, int ell, int ell_max, int d)
{
    int e0 = t->ellipsis_at;
    if (e0 < 0 || d < e0)
        return t->ids[d];
    if (d < e0 + ell)
        return EIN_ELLIPSIS + (ell_max - ell) + (d - e0);
    return t->ids[d - ell];
}

/* Everything the kernel iterates over: sizes of all labels, per-operand strides per
 * label (repeated labels add up: diagonals), the output labels then the summed ones. */
typedef struct ein_plan {
    int n_out, n_sum;
    int order[EIN_MAX_LABELS];     /* output labels first, then summed labels */
    int64_t size[EIN_MAX_LABELS];  /* -1: label unused */
    int64_t *strides;              /* n_in x EIN_MAX_LABELS (owned) */
    int out_rank;
    int64_t out_dims[GL_MAX_RANK];
} ein_plan;

/* Upper bound on multiply-adds a generic Einsum will run: a hostile equation over small
 * operands (one label per operand, many operands) could otherwise loop for ages. */
#define EIN_MAX_WORK ((int64_t)1 << 36)

static gl_status ein_plan_init(ein_plan *p, const ein_eq *eq, const gl_tensor *const *ts,
                               const char *where)
{
    memset(p, 0, sizeof(*p));
    for (int l = 0; l < EIN_MAX_LABELS; l++)
        p->size[l] = -1;
    int ell_max = 0, *ell = gl_xcalloc(eq->n_in ? eq->n_in : 1, sizeof(int));
    for (size_t i = 0; i < eq->n_in; i++) {
        if ((ell[i] = ein_ellipsis_rank(&eq->in[i], ts[i]->rank, i, where)) < 0) {
            free(ell);
            return GL_ERR_INPUT;
        }
        if (ell[i] > ell_max)
            ell_max = ell[i];
    }
    for (size_t i = 0; i < eq->n_in; i++)
        for (int d = 0; d < ts[i]->rank; d++) {
            int l = ein_dim_label(&eq->in[i], ell[i], ell_max, d);
            int64_t v = ts[i]->dims[d], *sz = &p->size[l];
            if (*sz < 0 || (l >= EIN_ELLIPSIS && *sz == 1))
                *sz = v;
            else if (v != *sz && !(l >= EIN_ELLIPSIS && v == 1)) {
                free(ell);
                return gl_fail(GL_ERR_INPUT, "%s: input %zu's dimension %d (%lld) differs from "
                               "%lld elsewhere for the same label", where, i, d, (long long)v,
                               (long long)*sz);
            }
        }
    p->strides = gl_xcalloc(eq->n_in ? eq->n_in : 1, EIN_MAX_LABELS * sizeof(int64_t));
    for (size_t i = 0; i < eq->n_in; i++) {
        int64_t st[GL_MAX_RANK];
        gl_strides(ts[i]->dims, ts[i]->rank, st);
        for (int d = 0; d < ts[i]->rank; d++)
            if (ts[i]->dims[d] != 1) /* a broadcast 1 stays put */
                p->strides[i * EIN_MAX_LABELS + ein_dim_label(&eq->in[i], ell[i], ell_max, d)] +=
                    st[d];
    }
    free(ell);
    bool is_out[EIN_MAX_LABELS] = {false};
    for (int j = 0; j <= eq->out.n; j++) {
        if (j == eq->out.ellipsis_at)
            for (int e = 0; e < ell_max; e++) {
                is_out[EIN_ELLIPSIS + e] = true;
                p->order[p->n_out++] = EIN_ELLIPSIS + e;
            }
        if (j < eq->out.n) {
            is_out[eq->out.ids[j]] = true;
            p->order[p->n_out++] = eq->out.ids[j];
        }
    }
    if (p->n_out > GL_MAX_RANK) {
        free(p->strides);
        return gl_fail(GL_ERR_INPUT, "%s: output rank %d exceeds %d", where, p->n_out,
                       GL_MAX_RANK);
    }
    p->out_rank = p->n_out;
    int64_t work = 1;
    for (int j = 0; j < p->n_out; j++) {
        p->out_dims[j] = p->size[p->order[j]];
        work = work > 0 && p->out_dims[j] > EIN_MAX_WORK / work ? EIN_MAX_WORK + 1
                                                                 : work * p->out_dims[j];
    }
    for (int l = 0; l < EIN_MAX_LABELS; l++)
        if (p->size[l] >= 0 && !is_out[l]) {
            p->order[p->n_out + p->n_sum++] = l;
            work = work > 0 && p->size[l] > EIN_MAX_WORK / work ? EIN_MAX_WORK + 1
                                                                : work * p->size[l];
        }
    if (work > EIN_MAX_WORK) {
        free(p->strides);
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: the equation needs more than 2^36 products; "
                       "the generic Einsum does not run it", where);
    }
    return GL_OK;
}

/* Generic evaluation over the index space: output labels outer, summed labels inner, an
 * odometer that moves every operand's offset by its label strides. T is double for
 * floating types, int64 for integers. */
#define DEFINE_EINSUM_EVAL(name, T)                                                        \
    static void name(const ein_plan *p, size_t n_in, const T *const *x, T *y,              \
                     int64_t out_count)                                                    \
    {                                                                                      \
        int n_lab = p->n_out + p->n_sum;                                                   \
        int64_t idx[EIN_MAX_LABELS] = {0};                                                 \
        int64_t *off = gl_xcalloc(n_in ? n_in : 1, sizeof(int64_t));                       \
        int64_t inner = 1;                                                                 \
        for (int j = p->n_out; j < n_lab; j++)                                             \
            inner *= p->size[p->order[j]];                                                 \
        for (int64_t o = 0; o < out_count; o++) {                                          \
            T acc = 0;                                                                     \
            for (int64_t s = 0; s < inner; s++) {                                          \
                T prod = 1;                                                                \
                for (size_t i = 0; i < n_in; i++)                                          \
                    prod *= x[i][off[i]];                                                  \
                acc += prod;                                                               \
                for (int j = n_lab - 1; j >= 0; j--) {                                     \
                    int l = p->order[j];                                                   \
                    if (++idx[j] < p->size[l]) {                                           \
                        for (size_t i = 0; i < n_in; i++)                                  \
                            off[i] += p->strides[i * EIN_MAX_LABELS + l];                  \
                        break;                                                             \
                    }                                                                      \
                    idx[j] = 0;                                                            \
                    for (size_t i = 0; i < n_in; i++)                                      \
                        off[i] -= p->strides[i * EIN_MAX_LABELS + l] * (p->size[l] - 1);   \
                }                                                                          \
            }                                                                              \
            y[o] = acc;                                                                    \
        }                                                                                  \
        free(off);                                                                         \
    }

DEFINE_EINSUM_EVAL(einsum_eval_f64, double)
DEFINE_EINSUM_EVAL(einsum_eval_i64, int64_t)

static gl_status einsum_kernel(gl_kernel_ctx *k)
{
    size_t n_in = k->n_inputs;
    gl_status st = gl_need_inputs(k, n_in);
    if (st)
        return st;
    if (n_in == 0)
        return gl_fail(GL_ERR_INPUT, "%s: Einsum needs at least one input", k->where);
    gl_dtype dt = k->in[0]->dtype;
    if ((st = gl_need_number(k, k->in[0], false, "input 0")))
        return st;
    for (size_t i = 1; i < n_in; i++)
        if (k->in[i]->dtype != dt)
            return gl_fail(GL_ERR_INPUT, "%s: input %zu is %s, input 0 is %s", k->where, i,
                           gl_dtype_name(k->in[i]->dtype), gl_dtype_name(dt));
    ein_eq eq;
    if ((st = ein_parse(gl_node_attr_string(k->node, "equation", ""), n_in, &eq, k->where)))
        return st;
    ein_plan p;
    if ((st = ein_plan_init(&p, &eq, k->in, k->where))) {
        ein_free(&eq);
        return st;
    }
    ein_free(&eq);
    gl_tensor *y = gl_out_new(k, 0, dt, p.out_rank, p.out_dims);
    if (!y) {
        free(p.strides);
        return GL_ERR_NOMEM;
    }
    bool ints = gl_dtype_is_int(dt);
    void **x = gl_xcalloc(n_in, sizeof(void *));
    void *yv = calloc((size_t)(y->count ? y->count : 1), 8);
    bool ok = yv != NULL;
    for (size_t i = 0; i < n_in && ok; i++) {
        x[i] = ints ? (void *)tensor_to_i64(k->in[i], k->where)
                    : (void *)gl_tensor_to_f64(k->in[i], k->where);
        ok = x[i] != NULL;
    }
    if (ok && ints) {
        einsum_eval_i64(&p, n_in, (const int64_t *const *)x, yv, y->count);
        for (int64_t i = 0; i < y->count; i++)
            gl_elem_set_i64(y, i, ((int64_t *)yv)[i]);
    } else if (ok) {
        einsum_eval_f64(&p, n_in, (const double *const *)x, yv, y->count);
        gl_tensor_store_f64(y, yv, false);
    }
    for (size_t i = 0; i < n_in; i++)
        free(x[i]);
    free(x);
    free(yv);
    free(p.strides);
    return ok ? GL_OK : gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
}

/* Merge dim `d` of an operand into the label's inferred dim: known sizes win over
 * symbols; broadcast ellipsis dims of 1 give way. */
static void ein_merge_dim(gl_dim *acc, bool *set, const gl_dim *d, bool ellipsis)
{
    if (!*set || (ellipsis && acc->value == 1) || (acc->value < 0 && d->value >= 0 &&
                                                    !(ellipsis && d->value == 1))) {
        gl_dim_copy(acc, d);
        *set = true;
    }
}

static gl_status einsum_infer(gl_infer_ctx *c)
{
    ein_eq eq;
    gl_status st = ein_parse(gl_node_attr_string(c->node, "equation", ""), c->n_inputs, &eq,
                             c->where);
    if (st)
        return st;
    const gl_type *t0 = gl_infer_input(c, 0);
    gl_dtype dt = t0 ? t0->dtype : GL_DT_UNDEFINED;
    gl_dim dims[EIN_MAX_LABELS];
    bool set[EIN_MAX_LABELS] = {false};
    memset(dims, 0, sizeof(dims));
    int ell_max = 0, *ell = gl_xcalloc(c->n_inputs ? c->n_inputs : 1, sizeof(int));
    bool ranks_known = true;
    for (size_t i = 0; i < c->n_inputs; i++) {
        const gl_type *t = gl_infer_input(c, i);
        ell[i] = -1;
        if (!t || t->shape.rank == GL_RANK_UNKNOWN) {
            ranks_known = false;
            continue;
        }
        if ((ell[i] = ein_ellipsis_rank(&eq.in[i], t->shape.rank, i, c->where)) < 0) {
            ein_free(&eq);
            free(ell);
            return GL_ERR_INPUT;
        }
        if (ell[i] > ell_max)
            ell_max = ell[i];
    }
    for (size_t i = 0; i < c->n_inputs; i++) {
        const gl_type *t = gl_infer_input(c, i);
        for (int d = 0; ell[i] >= 0 && d < t->shape.rank; d++) {
            int l = ein_dim_label(&eq.in[i], ell[i], ell_max, d);
            const gl_dim *dd = &t->shape.dims[d];
            if (set[l] && dims[l].value >= 0 && dd->value >= 0 && dims[l].value != dd->value &&
                !(l >= EIN_ELLIPSIS && (dd->value == 1 || dims[l].value == 1))) {
                st = gl_fail(GL_ERR_INPUT, "%s: input %zu's dimension %d (%lld) differs from "
                             "the same label's %lld elsewhere", c->where, i, d,
                             (long long)dd->value, (long long)dims[l].value);
                break;
            }
            ein_merge_dim(&dims[l], &set[l], dd, l >= EIN_ELLIPSIS);
        }
    }
    bool out_ellipsis = eq.out.ellipsis_at >= 0;
    if (!st && (ranks_known || !out_ellipsis)) {
        gl_shape s;
        gl_shape_init_unknown(&s);
        gl_shape_set_rank(&s, eq.out.n + (out_ellipsis ? ell_max : 0));
        int o = 0;
        for (int j = 0; j <= eq.out.n; j++) {
            if (j == eq.out.ellipsis_at)
                for (int e = 0; e < ell_max; e++, o++)
                    if (set[EIN_ELLIPSIS + e])
                        gl_dim_copy(&s.dims[o], &dims[EIN_ELLIPSIS + e]);
            if (j < eq.out.n) {
                if (set[eq.out.ids[j]])
                    gl_dim_copy(&s.dims[o], &dims[eq.out.ids[j]]);
                o++;
            }
        }
        gl_infer_set(c, 0, dt, &s);
        gl_shape_free(&s);
    } else if (!st) {
        gl_infer_set(c, 0, dt, NULL);
    }
    for (int l = 0; l < EIN_MAX_LABELS; l++)
        free(dims[l].sym);
    ein_free(&eq);
    free(ell);
    return st;
}

/* ---- integer matrix products ----------------------------------------------------------- */

/* Per-tensor or per-row (A) / per-column (B) quantization vector: entry `i` of a vector
 * of `count` values (count 1: the same for all). */
typedef struct qvec {
    const gl_tensor *t;   /* NULL: the default (0 for zero points, 1 for scales) */
    int64_t count;
} qvec;

/* Which dim of an N-D parameter holds the vector: A's rows are [..., M, 1], B's columns
 * [..., 1, N] (MatMulInteger's N-D zero points; accepted for the scales too, with every
 * batch dim 1: one vector for all batches). */
typedef enum qvec_side { QV_1D = 0, QV_ROWS = 2, QV_COLUMNS = 1 } qvec_side;

static gl_status qvec_init(qvec *q, const gl_tensor *t, int64_t along, qvec_side side,
                           const char *what, const char *where)
{
    q->t = t;
    q->count = 1;
    if (!t || t->count == 1)
        return GL_OK;
    if ((t->rank == 1 && t->dims[0] == along) ||
        (side && t->rank >= 2 && t->count == along && t->dims[t->rank - (int)side] == along)) {
        q->count = along;
        return GL_OK;
    }
    return gl_fail(GL_ERR_INPUT, "%s: %s must be a scalar or a vector of %lld values%s, got "
                   "%lld values", where, what, (long long)along,
                   side == QV_ROWS ? " ([M] or [..., M, 1])" :
                   side == QV_COLUMNS ? " ([N] or [..., 1, N])" : "", (long long)t->count);
}

static double qvec_at(const qvec *q, int64_t i, double dflt)
{
    if (!q->t)
        return dflt;
    return gl_elem_f64(q->t, q->count == 1 ? 0 : i);
}

/* acc[m,n] = sum_k (a[m,k] - a_zero[m]) * (b[k,n] - b_zero[n]) for every batch; the
 * accumulators are int64 (exact). */
static gl_status int_matmul(gl_kernel_ctx *k, const gl_tensor *a, const gl_tensor *b,
                            const gl_tensor *a_zero, const gl_tensor *b_zero, mm_geom *g,
                            int64_t **acc_out)
{
    *acc_out = NULL;
    if (!is_quant8(a->dtype) || !is_quant8(b->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: inputs must be int8 or uint8, got %s and %s",
                       k->where, gl_dtype_name(a->dtype), gl_dtype_name(b->dtype));
    gl_status st = mm_geom_init(g, a, b, k->where);
    if (st)
        return st;
    qvec za, zb;
    if ((st = qvec_init(&za, a_zero, g->m, QV_ROWS, "A's zero point", k->where)) ||
        (st = qvec_init(&zb, b_zero, g->n, QV_COLUMNS, "B's zero point", k->where)))
        return st;
    int64_t *av = tensor_to_i64(a, k->where), *bv = tensor_to_i64(b, k->where);
    int64_t out_count = g->batch.count * g->m * g->n;
    int64_t *acc = calloc((size_t)(out_count ? out_count : 1), sizeof(int64_t));
    if (!av || !bv || !acc) {
        free(av), free(bv), free(acc);
        return gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
    }
    /* Subtract zero points once: rows of A (every batch), columns of B. */
    for (int64_t i = 0; i < a->count; i++)
        av[i] -= (int64_t)qvec_at(&za, (i / g->k) % g->m, 0);
    for (int64_t i = 0; i < b->count; i++)
        bv[i] -= (int64_t)qvec_at(&zb, i % g->n, 0);
    int64_t mn = g->m * g->n;
    if (out_count > 0) { /* an empty product may still have many (empty) batches */
        MM_FOR_EACH_BATCH(g, it, bi) {
            int64_t ao, bo;
            mm_batch_offsets(g, &it, &ao, &bo);
            matmul_i64(av + ao, bv + bo, acc + bi * mn, g->m, g->k, g->n);
        }
    }
    free(av), free(bv);
    *acc_out = acc;
    return GL_OK;
}

static gl_status matmulinteger_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 2);
    if (st)
        return st;
    mm_geom g;
    int64_t *acc;
    if ((st = int_matmul(k, k->in[0], k->in[1], gl_opt_input(k, 2), gl_opt_input(k, 3), &g, &acc)))
        return st;
    gl_tensor *y = gl_out_new(k, 0, GL_DT_INT32, g.rank, g.dims);
    if (y) {
        int32_t *yd = y->count ? gl_tensor_make_writable(y) : NULL;
        for (int64_t i = 0; i < y->count; i++)
            yd[i] = (int32_t)(uint32_t)acc[i]; /* wraps like an int32 accumulator */
    }
    free(acc);
    return y ? GL_OK : GL_ERR_NOMEM;
}

static gl_status matmulinteger_infer(gl_infer_ctx *c)
{
    return matmul_like_infer(c, 0, 1, GL_DT_INT32);
}

/* y = saturate(round(acc * a_scale[m] * b_scale[n] / y_scale) + y_zero), in float. */
static gl_status qlinearmatmul_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 8);
    if (st)
        return st;
    const gl_tensor *y_zero = k->in[7];
    if (!is_quant8(y_zero->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: y_zero_point must be int8 or uint8", k->where);
    mm_geom g;
    int64_t *acc;
    if ((st = int_matmul(k, k->in[0], k->in[3], k->in[2], k->in[5], &g, &acc)))
        return st;
    qvec sa, sb, sy;
    if ((st = qvec_init(&sa, k->in[1], g.m, QV_ROWS, "a_scale", k->where)) ||
        (st = qvec_init(&sb, k->in[4], g.n, QV_COLUMNS, "b_scale", k->where)) ||
        (st = qvec_init(&sy, k->in[6], 1, QV_1D, "y_scale", k->where)) ||
        (y_zero->count != 1 &&
         (st = gl_fail(GL_ERR_INPUT, "%s: y_zero_point must be a scalar", k->where)))) {
        free(acc);
        return st;
    }
    gl_tensor *y = gl_out_new(k, 0, y_zero->dtype, g.rank, g.dims);
    if (!y) {
        free(acc);
        return GL_ERR_NOMEM;
    }
    float ys = (float)qvec_at(&sy, 0, 1);
    int64_t yz = gl_elem_i64(y_zero, 0);
    for (int64_t i = 0; i < y->count; i++) {
        int64_t col = i % g.n, row = (i / g.n) % g.m;
        float scale = (float)qvec_at(&sa, row, 1) * (float)qvec_at(&sb, col, 1);
        gl_elem_set_i64(y, i, gl_quantize_value((float)acc[i] * scale, ys, yz, y->dtype));
    }
    free(acc);
    return GL_OK;
}

static gl_status qlinearmatmul_infer(gl_infer_ctx *c)
{
    const gl_type *zp = gl_infer_input(c, 7);
    return matmul_like_infer(c, 0, 3, zp ? zp->dtype : GL_DT_UNDEFINED);
}

/* ---- QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear ---------------------- */

/* Per-tensor or per-axis parameters: element i of x uses entry (i / inner) % channels. */
typedef struct qaxis {
    int64_t channels, inner;
} qaxis;

static gl_status qaxis_init(qaxis *q, const gl_kernel_ctx *k, const gl_tensor *x,
                            const gl_tensor *scale, const gl_tensor *zero, bool per_axis)
{
    q->channels = 1;
    q->inner = 1;
    if (zero && zero->count != scale->count)
        return gl_fail(GL_ERR_INPUT, "%s: zero point has %lld values but scale has %lld",
                       k->where, (long long)zero->count, (long long)scale->count);
    if (scale->count == 1 && scale->rank <= 1) /* a scalar or [1]: per tensor */
        return GL_OK;
    if (!per_axis)
        return gl_fail(GL_ERR_INPUT, "%s: scale must be a scalar before opset 13", k->where);
    if (scale->rank != 1)
        return gl_fail(GL_ERR_INPUT, "%s: scale must be a scalar or a 1-D tensor, got rank %d",
                       k->where, scale->rank);
    int axis;
    if (!gl_axis_normalize(gl_node_attr_int(k->node, "axis", 1), x->rank, false, k->where,
                           "axis", &axis))
        return GL_ERR_INPUT;
    if (scale->dims[0] != x->dims[axis])
        return gl_fail(GL_ERR_INPUT, "%s: scale has %lld values but x's axis %d has %lld",
                       k->where, (long long)scale->dims[0], axis, (long long)x->dims[axis]);
    q->channels = x->dims[axis];
    q->inner = gl_dims_product(x->dims, axis + 1, x->rank);
    return GL_OK;
}

static gl_status quantize_run(gl_kernel_ctx *k, bool per_axis)
{
    gl_status st = gl_need_inputs(k, 2);
    if (st)
        return st;
    const gl_tensor *x = k->in[0], *scale = k->in[1], *zero = gl_opt_input(k, 2);
    gl_dtype dt = zero ? zero->dtype : GL_DT_UINT8;
    if (!is_quant8(dt))
        return gl_fail(GL_ERR_INPUT, "%s: y_zero_point must be int8 or uint8, got %s",
                       k->where, gl_dtype_name(dt));
    if ((st = gl_need_number(k, x, false, "input x")) ||
        (st = gl_need_number(k, scale, false, "y_scale")))
        return st;
    qaxis q;
    if ((st = qaxis_init(&q, k, x, scale, zero, per_axis)))
        return st;
    gl_tensor *y = gl_out_new(k, 0, dt, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    const float *xf = x->dtype == GL_DT_FLOAT ? gl_tensor_data(x) : NULL;
    if (xf && q.channels == 1 && scale->dtype == GL_DT_FLOAT) {
        quantize_f32(xf, x->count, *(const float *)gl_tensor_data(scale),
                     zero ? gl_elem_i64(zero, 0) : 0, dt, y->buf->data);
        return GL_OK;
    }
    for (int64_t i = 0; i < x->count; i++) {
        int64_t ch = (i / q.inner) % q.channels;
        float xv = xf ? xf[i] : (float)gl_elem_f64(x, i);
        int64_t zv = zero ? gl_elem_i64(zero, ch) : 0;
        gl_elem_set_i64(y, i, gl_quantize_value(xv, (float)gl_elem_f64(scale, ch), zv, dt));
    }
    return GL_OK;
}

static gl_status dequantize_run(gl_kernel_ctx *k, bool per_axis)
{
    gl_status st = gl_need_inputs(k, 2);
    if (st)
        return st;
    const gl_tensor *x = k->in[0], *scale = k->in[1], *zero = gl_opt_input(k, 2);
    if (zero && zero->dtype != x->dtype)
        return gl_fail(GL_ERR_INPUT, "%s: x_zero_point (%s) must have x's type (%s)", k->where,
                       gl_dtype_name(zero->dtype), gl_dtype_name(x->dtype));
    if (!gl_dtype_is_float(scale->dtype) || !(gl_dtype_is_int(x->dtype)))
        return gl_fail(GL_ERR_INPUT, "%s: x must be an integer tensor and x_scale a float one",
                       k->where);
    qaxis q;
    if ((st = qaxis_init(&q, k, x, scale, zero, per_axis)))
        return st;
    gl_tensor *y = gl_out_new(k, 0, scale->dtype, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (is_quant8(x->dtype) && q.channels == 1 && scale->dtype == GL_DT_FLOAT) {
        dequantize_8bit(gl_tensor_data(x), x->dtype, x->count,
                        *(const float *)gl_tensor_data(scale),
                        zero ? gl_elem_i64(zero, 0) : 0, y->buf->data);
        return GL_OK;
    }
    for (int64_t i = 0; i < x->count; i++) {
        int64_t ch = (i / q.inner) % q.channels;
        int64_t zv = zero ? gl_elem_i64(zero, ch) : 0;
        float v = (float)(gl_elem_i64(x, i) - zv) * (float)gl_elem_f64(scale, ch);
        gl_elem_set_f64(y, i, v);
    }
    return GL_OK;
}

/* Opset 13 added per-axis parameters (the axis attribute). */
static gl_status quantizelinear_kernel_v10(gl_kernel_ctx *k) { return quantize_run(k, false); }
static gl_status quantizelinear_kernel_v13(gl_kernel_ctx *k) { return quantize_run(k, true); }
static gl_status dequantizelinear_kernel_v10(gl_kernel_ctx *k) { return dequantize_run(k, false); }
static gl_status dequantizelinear_kernel_v13(gl_kernel_ctx *k) { return dequantize_run(k, true); }

static gl_status quantizelinear_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0), *zp = gl_infer_input(c, 2);
    if (!x)
        return GL_OK;
    gl_infer_set(c, 0, zp ? zp->dtype : GL_DT_UINT8, &x->shape);
    return GL_OK;
}

static gl_status dequantizelinear_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0), *scale = gl_infer_input(c, 1);
    if (!x)
        return GL_OK;
    gl_infer_set(c, 0, scale ? scale->dtype : GL_DT_FLOAT, &x->shape);
    return GL_OK;
}

/* uint8 quantization of x over [min(0, min x), max(0, max x)], computed in float as the
 * spec writes it. */
static gl_status dynamicquantizelinear_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 1);
    if (st)
        return st;
    const gl_tensor *x = k->in[0];
    if (!gl_dtype_is_float(x->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: x must be a float tensor, got %s", k->where,
                       gl_dtype_name(x->dtype));
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < x->count; i++) {
        float v = (float)gl_elem_f64(x, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    float scale = (hi - lo) / 255.0f;
    /* All zeros: any scale works; 0 would divide by zero below. */
    float zero_f = scale > 0 ? nearbyintf((0 - lo) / scale) : 0;
    int64_t zero = zero_f < 0 ? 0 : zero_f > 255 ? 255 : (int64_t)zero_f;
    gl_tensor *y = gl_out_new(k, 0, GL_DT_UINT8, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    for (int64_t i = 0; scale > 0 && i < x->count; i++)
        gl_elem_set_i64(y, i, gl_quantize_value((float)gl_elem_f64(x, i), scale, zero,
                                             GL_DT_UINT8));
    if (gl_out_wanted(k, 1)) {
        gl_tensor *s = gl_out_new(k, 1, GL_DT_FLOAT, 0, NULL);
        if (!s)
            return GL_ERR_NOMEM;
        *(float *)gl_tensor_make_writable(s) = scale;
    }
    if (gl_out_wanted(k, 2)) {
        gl_tensor *z = gl_out_new(k, 2, GL_DT_UINT8, 0, NULL);
        if (!z)
            return GL_ERR_NOMEM;
        *(uint8_t *)gl_tensor_make_writable(z) = (uint8_t)zero;
    }
    return GL_OK;
}

static gl_status dynamicquantizelinear_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (x)
        gl_infer_set(c, 0, GL_DT_UINT8, &x->shape);
    gl_shape scalar = {0, NULL};
    gl_infer_set(c, 1, GL_DT_FLOAT, &scalar);
    gl_infer_set(c, 2, GL_DT_UINT8, &scalar);
    return GL_OK;
}

/* ---- ConvInteger / QLinearConv ---------------------------------------------------------- */

/* Geometry of an N-d convolution x[N, C, in...] * w[M, C/group, k...]. */
typedef struct conv_geom {
    int sp;                                   /* spatial rank */
    int64_t n, c, m, group;
    int64_t in[GL_MAX_RANK], k[GL_MAX_RANK], out[GL_MAX_RANK];
    int64_t stride[GL_MAX_RANK], dil[GL_MAX_RANK], pad[GL_MAX_RANK]; /* pad: begin */
    int64_t in_size, k_size, out_size;        /* spatial element counts */
} conv_geom;

/* Output size of one spatial dim and its leading pad, by auto_pad. `in` < 0: unknown
 * (the output is then unknown too, -1). False when the dim comes out negative. */
static bool conv_out_dim(const char *auto_pad, int64_t in, int64_t k, int64_t s, int64_t d,
                         int64_t pb, int64_t pe, int64_t *out, int64_t *pad_begin)
{
    int64_t span = (k - 1) * d + 1;
    *pad_begin = pb;
    if (in < 0) {
        *out = -1;
        return true;
    }
    if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
        *out = (in + s - 1) / s;
        int64_t total = (*out - 1) * s + span - in;
        total = total < 0 ? 0 : total;
        *pad_begin = !strcmp(auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
        return true;
    }
    if (!strcmp(auto_pad, "VALID"))
        pb = pe = *pad_begin = 0;
    int64_t room = in + pb + pe - span;
    if (room < 0)
        return false;
    *out = room / s + 1;
    return true;
}

/* Attributes shared by kernel and inference: strides, dilations, pads (default 1,1,0),
 * validated against the spatial rank. */
static gl_status conv_attrs(const gl_node *node, int sp, int64_t *stride, int64_t *dil,
                            int64_t *pads, const char *where)
{
    size_t ns, nd, np, nk;
    const int64_t *s = gl_attr_ints(node, "strides", &ns);
    const int64_t *d = gl_attr_ints(node, "dilations", &nd);
    const int64_t *p = gl_attr_ints(node, "pads", &np);
    gl_attr_ints(node, "kernel_shape", &nk);
    if ((s && ns != (size_t)sp) || (d && nd != (size_t)sp) || (p && np != 2 * (size_t)sp) ||
        (nk && nk != (size_t)sp))
        return gl_fail(GL_ERR_INPUT, "%s: strides/dilations/pads/kernel_shape do not match %d "
                       "spatial dims", where, sp);
    for (int i = 0; i < sp; i++) {
        stride[i] = s ? s[i] : 1;
        dil[i] = d ? d[i] : 1;
        pads[i] = p ? p[i] : 0;
        pads[sp + i] = p ? p[sp + i] : 0;
        /* The upper bound keeps the size arithmetic below far from overflow. */
        if (stride[i] < 1 || dil[i] < 1 || pads[i] < 0 || pads[sp + i] < 0 ||
            stride[i] > INT32_MAX || dil[i] > INT32_MAX || pads[i] > INT32_MAX ||
            pads[sp + i] > INT32_MAX)
            return gl_fail(GL_ERR_INPUT, "%s: strides and dilations must be in [1, 2^31) and "
                           "pads in [0, 2^31)", where);
    }
    return GL_OK;
}

static gl_status conv_geom_init(conv_geom *g, const gl_node *node, const gl_tensor *x,
                                const gl_tensor *w, const char *where)
{
    memset(g, 0, sizeof(*g));
    if (x->rank < 3 || w->rank != x->rank)
        return gl_fail(GL_ERR_INPUT, "%s: x (rank %d) and w (rank %d) must have the same rank "
                       ">= 3", where, x->rank, w->rank);
    g->sp = x->rank - 2;
    g->n = x->dims[0];
    g->c = x->dims[1];
    g->m = w->dims[0];
    g->group = gl_node_attr_int(node, "group", 1);
    if (g->group < 1 || g->c != w->dims[1] * g->group || g->m % g->group != 0)
        return gl_fail(GL_ERR_INPUT, "%s: x has %lld channels, w is [%lld, %lld, ...] with "
                       "group %lld", where, (long long)g->c, (long long)g->m,
                       (long long)w->dims[1], (long long)g->group);
    int64_t pads[2 * GL_MAX_RANK];
    gl_status st = conv_attrs(node, g->sp, g->stride, g->dil, pads, where);
    if (st)
        return st;
    size_t nk;
    const int64_t *ks = gl_attr_ints(node, "kernel_shape", &nk);
    const char *auto_pad = gl_node_attr_string(node, "auto_pad", "NOTSET");
    /* Spatial element counts: products of dims a file may make huge when x or w is
     * empty elsewhere, so checked like any tensor size. */
    if (!gl_dims_count(x->dims + 2, g->sp, 1, INT64_MAX, &g->in_size, "x's spatial dims") ||
        !gl_dims_count(w->dims + 2, g->sp, 1, INT64_MAX, &g->k_size, "w's spatial dims")) {
        gl_error_prefix("%s", where);
        return GL_ERR_INPUT;
    }
    g->out_size = 1;
    for (int i = 0; i < g->sp; i++) {
        g->in[i] = x->dims[2 + i];
        g->k[i] = w->dims[2 + i];
        if (ks && ks[i] != g->k[i])
            return gl_fail(GL_ERR_INPUT, "%s: kernel_shape[%d] = %lld but w has %lld", where,
                           i, (long long)ks[i], (long long)g->k[i]);
        if (!conv_out_dim(auto_pad, g->in[i], g->k[i], g->stride[i], g->dil[i], pads[i],
                          pads[g->sp + i], &g->out[i], &g->pad[i]))
            return gl_fail(GL_ERR_INPUT, "%s: spatial dim %d (%lld) is smaller than the "
                           "dilated kernel", where, i, (long long)g->in[i]);
    }
    int64_t out_dims[GL_MAX_RANK] = {g->n, g->m}, count;
    memcpy(out_dims + 2, g->out, (size_t)g->sp * sizeof(int64_t));
    if (!gl_dims_count(out_dims, g->sp + 2, sizeof(int64_t), INT64_MAX, &count, "output") ||
        !gl_dims_count(g->out, g->sp, 1, INT64_MAX, &g->out_size, "output's spatial dims")) {
        gl_error_prefix("%s", where);
        return GL_ERR_INPUT;
    }
    return GL_OK;
}

/* y[n, m, o] = sum over the group's channels c and kernel positions q of
 * x[n, c, o * stride + q * dilation - pad] * w[m, c, q], positions outside x being zero.
 * x and w hold values minus their zero points. */
static void conv_int_direct(const conv_geom *g, const int32_t *x, const int32_t *w,
                            int64_t *y)
{
    int64_t cg = g->c / g->group, mg = g->m / g->group;
    int64_t in_strides[GL_MAX_RANK];
    gl_strides(g->in, g->sp, in_strides);
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t m = 0; m < g->m; m++) {
            int64_t c0 = (m / mg) * cg;
            int64_t o_idx[GL_MAX_RANK] = {0};
            for (int64_t o = 0; o < g->out_size; o++) {
                int64_t acc = 0;
                for (int64_t c = 0; c < cg; c++) {
                    const int32_t *xc = x + (n * g->c + c0 + c) * g->in_size;
                    const int32_t *wc = w + (m * cg + c) * g->k_size;
                    int64_t q_idx[GL_MAX_RANK] = {0};
                    for (int64_t q = 0; q < g->k_size; q++) {
                        int64_t off = 0;
                        bool inside = true;
                        for (int d = 0; d < g->sp && inside; d++) {
                            int64_t pos = o_idx[d] * g->stride[d] + q_idx[d] * g->dil[d] -
                                          g->pad[d];
                            inside = pos >= 0 && pos < g->in[d];
                            off += pos * in_strides[d];
                        }
                        if (inside)
                            acc += (int64_t)xc[off] * wc[q];
                        for (int d = g->sp - 1; d >= 0 && ++q_idx[d] == g->k[d]; d--)
                            q_idx[d] = 0;
                    }
                }
                y[(n * g->m + m) * g->out_size + o] = acc;
                for (int d = g->sp - 1; d >= 0 && ++o_idx[d] == g->out[d]; d--)
                    o_idx[d] = 0;
            }
        }
}

/* Run the integer convolution: x_zero scalar, w_zero scalar or one per output channel.
 * *acc receives N*M*out_size int64 accumulators (malloc'd). */
static gl_status conv_int_run(gl_kernel_ctx *k, const gl_tensor *x, const gl_tensor *w,
                              const gl_tensor *x_zero, const gl_tensor *w_zero,
                              conv_geom *g, int64_t **acc)
{
    *acc = NULL;
    if (!is_quant8(x->dtype) || !is_quant8(w->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: x and w must be int8 or uint8, got %s and %s",
                       k->where, gl_dtype_name(x->dtype), gl_dtype_name(w->dtype));
    gl_status st = conv_geom_init(g, k->node, x, w, k->where);
    if (st)
        return st;
    if (x_zero && x_zero->count != 1)
        return gl_fail(GL_ERR_INPUT, "%s: x's zero point must be a scalar", k->where);
    qvec wz;
    if ((st = qvec_init(&wz, w_zero, g->m, QV_1D, "w's zero point", k->where)))
        return st;
    int64_t out_count = g->n * g->m * g->out_size;
    int32_t *xv = malloc((size_t)(x->count ? x->count : 1) * sizeof(int32_t));
    int32_t *wv = malloc((size_t)(w->count ? w->count : 1) * sizeof(int32_t));
    int64_t *y = calloc((size_t)(out_count ? out_count : 1), sizeof(int64_t));
    if (!xv || !wv || !y) {
        free(xv), free(wv), free(y);
        return gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
    }
    int64_t xz = x_zero ? gl_elem_i64(x_zero, 0) : 0;
    for (int64_t i = 0; i < x->count; i++)
        xv[i] = (int32_t)(gl_elem_i64(x, i) - xz);
    int64_t w_per_m = g->m ? w->count / g->m : 0;
    for (int64_t i = 0; i < w->count; i++)
        wv[i] = (int32_t)(gl_elem_i64(w, i) - (int64_t)qvec_at(&wz, i / w_per_m, 0));
    if (out_count > 0)
        conv_int_direct(g, xv, wv, y);
    free(xv), free(wv);
    *acc = y;
    return GL_OK;
}

static void conv_out_dims(const conv_geom *g, int64_t *dims)
{
    dims[0] = g->n;
    dims[1] = g->m;
    memcpy(dims + 2, g->out, (size_t)g->sp * sizeof(int64_t));
}

static gl_status convinteger_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 2);
    if (st)
        return st;
    conv_geom g;
    int64_t *acc;
    if ((st = conv_int_run(k, k->in[0], k->in[1], gl_opt_input(k, 2), gl_opt_input(k, 3), &g,
                           &acc)))
        return st;
    int64_t dims[GL_MAX_RANK];
    conv_out_dims(&g, dims);
    gl_tensor *y = gl_out_new(k, 0, GL_DT_INT32, g.sp + 2, dims);
    if (y) {
        int32_t *yd = y->count ? gl_tensor_make_writable(y) : NULL;
        for (int64_t i = 0; i < y->count; i++)
            yd[i] = (int32_t)(uint32_t)acc[i];
    }
    free(acc);
    return y ? GL_OK : GL_ERR_NOMEM;
}

/* y = saturate(round((acc + bias[m]) * x_scale * w_scale[m] / y_scale) + y_zero). */
static gl_status qlinearconv_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 8);
    if (st)
        return st;
    const gl_tensor *y_zero = k->in[7], *bias = gl_opt_input(k, 8);
    if (!is_quant8(y_zero->dtype) || y_zero->count != 1 || k->in[1]->count != 1 ||
        k->in[6]->count != 1)
        return gl_fail(GL_ERR_INPUT, "%s: x_scale, y_scale and y_zero_point must be scalars "
                       "(y_zero_point int8 or uint8)", k->where);
    conv_geom g;
    int64_t *acc;
    if ((st = conv_int_run(k, k->in[0], k->in[3], k->in[2], k->in[5], &g, &acc)))
        return st;
    qvec ws, bv;
    if ((st = qvec_init(&ws, k->in[4], g.m, QV_1D, "w_scale", k->where)) ||
        (st = qvec_init(&bv, bias, g.m, QV_1D, "B", k->where))) {
        free(acc);
        return st;
    }
    int64_t dims[GL_MAX_RANK];
    conv_out_dims(&g, dims);
    gl_tensor *y = gl_out_new(k, 0, y_zero->dtype, g.sp + 2, dims);
    if (!y) {
        free(acc);
        return GL_ERR_NOMEM;
    }
    float xs = (float)gl_elem_f64(k->in[1], 0), ys = (float)gl_elem_f64(k->in[6], 0);
    int64_t yz = gl_elem_i64(y_zero, 0);
    for (int64_t i = 0; i < y->count; i++) {
        int64_t m = (i / g.out_size) % g.m;
        int64_t v = acc[i] + (int64_t)qvec_at(&bv, m, 0);
        float scale = xs * (float)qvec_at(&ws, m, 1);
        gl_elem_set_i64(y, i, gl_quantize_value((float)v * scale, ys, yz, y->dtype));
    }
    free(acc);
    return GL_OK;
}

/* Output shape [N, M, out...]: spatial dims from the known input dims and attributes. */
static gl_status conv_like_infer(gl_infer_ctx *c, size_t ix, size_t iw, gl_dtype dt)
{
    const gl_type *x = gl_infer_input(c, ix), *w = gl_infer_input(c, iw);
    if (!x)
        return GL_OK;
    int rank = x->shape.rank;
    if (rank == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, dt, rank);
        return GL_OK;
    }
    if (rank < 3 || (w && w->shape.rank != GL_RANK_UNKNOWN && w->shape.rank != rank))
        return gl_fail(GL_ERR_INPUT, "%s: x (rank %d) and w (rank %d) must have the same rank "
                       ">= 3", c->where, rank, w ? w->shape.rank : -1);
    int sp = rank - 2;
    int64_t stride[GL_MAX_RANK], dil[GL_MAX_RANK], pads[2 * GL_MAX_RANK];
    gl_status st = conv_attrs(c->node, sp, stride, dil, pads, c->where);
    if (st)
        return st;
    size_t nk;
    const int64_t *ks = gl_attr_ints(c->node, "kernel_shape", &nk);
    bool w_known = w && w->shape.rank == rank;
    const char *auto_pad = gl_node_attr_string(c->node, "auto_pad", "NOTSET");
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, rank);
    gl_dim_copy(&s.dims[0], &x->shape.dims[0]);
    if (w_known)
        gl_dim_copy(&s.dims[1], &w->shape.dims[0]);
    for (int i = 0; i < sp && !st; i++) {
        int64_t kd = ks ? ks[i] : w_known ? w->shape.dims[2 + i].value : -1, out, pb;
        if (kd < 0)
            continue;
        if (!conv_out_dim(auto_pad, x->shape.dims[2 + i].value, kd, stride[i], dil[i],
                          pads[i], pads[sp + i], &out, &pb))
            st = gl_fail(GL_ERR_INPUT, "%s: spatial dim %d (%lld) is smaller than the dilated "
                         "kernel", c->where, i, (long long)x->shape.dims[2 + i].value);
        s.dims[2 + i].value = out;
    }
    if (!st)
        gl_infer_set(c, 0, dt, &s);
    gl_shape_free(&s);
    return st;
}

static gl_status convinteger_infer(gl_infer_ctx *c)
{
    return conv_like_infer(c, 0, 1, GL_DT_INT32);
}

static gl_status qlinearconv_infer(gl_infer_ctx *c)
{
    const gl_type *zp = gl_infer_input(c, 7), *x = gl_infer_input(c, 0);
    return conv_like_infer(c, 0, 3, zp ? zp->dtype : x ? x->dtype : GL_DT_UNDEFINED);
}

/* ---- Det -------------------------------------------------------------------------------- */

/* Determinant of the n x n row-major matrix a (overwritten) by LU decomposition with
 * partial pivoting. */
static double det_lu(double *a, int64_t n)
{
    double det = 1;
    for (int64_t col = 0; col < n; col++) {
        int64_t piv = col;
        for (int64_t r = col + 1; r < n; r++)
            if (fabs(a[r * n + col]) > fabs(a[piv * n + col]))
                piv = r;
        if (a[piv * n + col] == 0)
            return 0;
        if (piv != col) {
            for (int64_t j = 0; j < n; j++) {
                double t = a[col * n + j];
                a[col * n + j] = a[piv * n + j];
                a[piv * n + j] = t;
            }
            det = -det;
        }
        double p = a[col * n + col];
        det *= p;
        for (int64_t r = col + 1; r < n; r++) {
            double f = a[r * n + col] / p;
            for (int64_t j = col + 1; j < n; j++)
                a[r * n + j] -= f * a[col * n + j];
        }
    }
    return det;
}

static gl_status det_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 1);
    if (st)
        return st;
    const gl_tensor *x = k->in[0];
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return gl_fail(GL_ERR_INPUT, "%s: input X must be [..., M, M], got rank %d", k->where,
                       x->rank);
    if (!gl_dtype_is_float(x->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: input X must be a float tensor", k->where);
    int64_t n = x->dims[x->rank - 1];
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank - 2, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (y->count == 0)
        return GL_OK;
    double *a = malloc((size_t)(n > 0 ? n * n : 1) * sizeof(double));
    if (!a)
        return gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
    for (int64_t b = 0; b < y->count; b++) {
        for (int64_t i = 0; i < n * n; i++)
            a[i] = gl_elem_f64(x, b * n * n + i);
        gl_elem_set_f64(y, b, det_lu(a, n));
    }
    free(a);
    return GL_OK;
}

static gl_status det_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int r = x->shape.rank;
    if (r == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, r);
        return GL_OK;
    }
    if (r < 2)
        return gl_fail(GL_ERR_INPUT, "%s: input X must have rank >= 2, got %d", c->where, r);
    int64_t a = x->shape.dims[r - 2].value, b = x->shape.dims[r - 1].value;
    if (a >= 0 && b >= 0 && a != b)
        return gl_fail(GL_ERR_INPUT, "%s: input X's matrices are %lld x %lld, not square",
                       c->where, (long long)a, (long long)b);
    gl_shape s = {r - 2, x->shape.dims};
    gl_infer_set(c, 0, x->dtype, &s);
    return GL_OK;
}

/* ---- the table ---------------------------------------------------------------------- */

static const gl_op_def linalg_ops[] = {
    {"", "ConvInteger", 10, convinteger_infer, convinteger_kernel, GL_OP_LAYOUT_SENSITIVE},
    {"", "DequantizeLinear", 10, dequantizelinear_infer, dequantizelinear_kernel_v10, 0},
    {"", "DequantizeLinear", 13, dequantizelinear_infer, dequantizelinear_kernel_v13, 0},
    {"", "Det", 11, det_infer, det_kernel, 0},
    {"", "DynamicQuantizeLinear", 11, dynamicquantizelinear_infer,
     dynamicquantizelinear_kernel, 0},
    {"", "Einsum", 12, einsum_infer, einsum_kernel, 0},
    {"", "Gemm", 1, gemm_infer_v1, gemm_kernel_v1, 0},
    {"", "Gemm", 11, gemm_infer_v11, gemm_kernel, 0},
    {"", "MatMul", 1, matmul_infer, matmul_kernel, 0},
    {"", "MatMulInteger", 10, matmulinteger_infer, matmulinteger_kernel, 0},
    {"", "QLinearConv", 10, qlinearconv_infer, qlinearconv_kernel, GL_OP_LAYOUT_SENSITIVE},
    {"", "QLinearMatMul", 10, qlinearmatmul_infer, qlinearmatmul_kernel, 0},
    {"", "QuantizeLinear", 10, quantizelinear_infer, quantizelinear_kernel_v10, 0},
    {"", "QuantizeLinear", 13, quantizelinear_infer, quantizelinear_kernel_v13, 0},
};

const gl_op_family gl_ops_linalg = {"linalg", linalg_ops, GL_ARRAY_LEN(linalg_ops)};

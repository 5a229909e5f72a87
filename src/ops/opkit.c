/* opkit.c — helpers shared by shape functions and kernels. */
#include "ops/opkit.h"

#include "ir/limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- axes and attributes ------------------------------------------------------------- */

bool gl_axis_normalize(int64_t axis, int rank, bool inclusive, const char *where,
                       const char *what, int *out)
{
    int64_t hi = inclusive ? rank + 1 : rank;
    if (axis < -hi || axis >= hi) {
        gl_fail(GL_ERR_INPUT, "%s: %s %lld is out of range for rank %d", where, what,
                (long long)axis, rank);
        return false;
    }
    *out = (int)(axis < 0 ? axis + hi : axis);
    return true;
}

const int64_t *gl_attr_ints(const gl_node *n, const char *name, size_t *count)
{
    const gl_attr *a = gl_node_attr_typed(n, name, GL_ATTR_INTS);
    *count = a ? a->n : 0;
    return a ? a->ints : NULL;
}

const float *gl_attr_floats(const gl_node *n, const char *name, size_t *count)
{
    const gl_attr *a = gl_node_attr_typed(n, name, GL_ATTR_FLOATS);
    *count = a ? a->n : 0;
    return a ? a->floats : NULL;
}

/* ---- inference ----------------------------------------------------------------------- */

void gl_infer_set(gl_infer_ctx *c, size_t out, gl_dtype dt, const gl_shape *shape)
{
    if (out >= c->n_outputs)
        return;
    gl_type *t = &c->out_types[out];
    gl_type_free(t);
    t->kind = GL_TYPE_TENSOR;
    t->dtype = dt;
    if (shape)
        gl_shape_copy(&t->shape, shape);
    else
        gl_shape_init_unknown(&t->shape);
}

void gl_infer_set_rank(gl_infer_ctx *c, size_t out, gl_dtype dt, int rank)
{
    gl_infer_set(c, out, dt, NULL);
    if (out < c->n_outputs && rank != GL_RANK_UNKNOWN)
        gl_shape_set_rank(&c->out_types[out].shape, rank);
}

const gl_type *gl_infer_input(const gl_infer_ctx *c, size_t i)
{
    if (i >= c->n_inputs || !c->in_types[i] || c->in_types[i]->kind != GL_TYPE_TENSOR)
        return NULL;
    return c->in_types[i];
}

gl_status gl_infer_like_input(gl_infer_ctx *c, size_t in, size_t out)
{
    const gl_type *t = gl_infer_input(c, in);
    if (t)
        gl_infer_set(c, out, t->dtype, &t->shape);
    return GL_OK;
}

/* One dim of a broadcast: `acc` is what the operands so far give. */
static bool broadcast_dim(gl_dim *acc, const gl_dim *d)
{
    if (d->value == 1)
        return true; /* 1 broadcasts to anything */
    if (acc->value == 1) {
        gl_dim_copy(acc, d);
        return true;
    }
    if (d->value > 1) {
        if (acc->value > 1 && acc->value != d->value)
            return false;
        /* A symbol or unknown against a known k > 1 must be k (or 1, but then the
         * result is still k). */
        gl_dim_set(acc, d->value);
        return true;
    }
    if (d->value == 0) {
        if (acc->value > 1)
            return false;
        gl_dim_set(acc, 0);
        return true;
    }
    /* d is unknown or symbolic */
    if (acc->value >= 0)
        return true; /* acc known (>1 or 0): it wins; (acc == 1 handled above) */
    if (acc->sym && d->sym && strcmp(acc->sym, d->sym) == 0)
        return true;
    /* two different unknowns: could be either or 1: unknown */
    gl_dim_set(acc, GL_DIM_UNKNOWN);
    return true;
}

gl_status gl_infer_broadcast(gl_infer_ctx *c, size_t first, size_t n, gl_shape *out)
{
    gl_shape_init_unknown(out);
    int rank = 0;
    for (size_t i = first; i < first + n && i < c->n_inputs; i++) {
        const gl_type *t = gl_infer_input(c, i);
        if (!c->in_types[i])
            continue; /* omitted */
        if (!t || t->shape.rank == GL_RANK_UNKNOWN)
            return GL_OK;
        if (t->shape.rank > rank)
            rank = t->shape.rank;
    }
    gl_shape_set_rank(out, rank);
    for (int d = 0; d < rank; d++)
        out->dims[d].value = 1;
    for (size_t i = first; i < first + n && i < c->n_inputs; i++) {
        const gl_type *t = gl_infer_input(c, i);
        if (!t)
            continue;
        int off = rank - t->shape.rank;
        for (int d = 0; d < t->shape.rank; d++) {
            if (!broadcast_dim(&out->dims[off + d], &t->shape.dims[d])) {
                gl_shape_free(out);
                return gl_fail(GL_ERR_INPUT, "%s: input %zu's dimension %d (%lld) does not "
                               "broadcast with the others", c->where, i, d,
                               (long long)t->shape.dims[d].value);
            }
        }
    }
    return GL_OK;
}

bool gl_infer_const_ints(const gl_infer_ctx *c, size_t i, int64_t **vals, size_t *count)
{
    *vals = NULL;
    *count = 0;
    if (i >= c->n_inputs || !c->in_values || !c->in_values[i])
        return false;
    const gl_tensor *t = c->in_values[i];
    if (!gl_dtype_is_int(t->dtype))
        return false;
    return gl_tensor_ints(t, c->where, "input", vals, count);
}

bool gl_infer_const_int(const gl_infer_ctx *c, size_t i, int64_t *v)
{
    int64_t *vals;
    size_t n;
    bool ok = gl_infer_const_ints(c, i, &vals, &n) && n == 1;
    if (ok)
        *v = vals[0];
    free(vals);
    return ok;
}

/* ---- dims and index arithmetic ------------------------------------------------------- */

void gl_dim_set(gl_dim *d, int64_t value)
{
    free(d->sym);
    d->sym = NULL;
    d->value = value >= 0 ? value : GL_DIM_UNKNOWN;
}

void gl_dim_copy(gl_dim *dst, const gl_dim *src)
{
    if (src->sym)
        gl_dim_set_sym(dst, src->sym);
    else
        gl_dim_set(dst, src->value);
}

int64_t gl_dims_product(const int64_t *dims, int from, int to)
{
    uint64_t p = 1;
    for (int d = from; d < to; d++)
        p *= (uint64_t)dims[d];
    return (int64_t)p;
}

void gl_strides(const int64_t *dims, int rank, int64_t *strides)
{
    /* Unsigned: an empty tensor ([0, 2^40, 2^40]) may have strides that overflow; they are
     * never used to address anything, but signed overflow would be undefined. */
    uint64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        strides[d] = (int64_t)s;
        s *= (uint64_t)dims[d];
    }
}

bool gl_odometer_next(int64_t *idx, const int64_t *dims, int rank)
{
    for (int d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

gl_axis_view gl_axis_view_of(const int64_t *dims, int rank, int axis)
{
    return (gl_axis_view){gl_dims_product(dims, 0, axis), rank ? dims[axis] : 1,
                          gl_dims_product(dims, axis + 1, rank)};
}

/* ---- kernels: inputs and outputs ----------------------------------------------------- */

const gl_tensor *gl_opt_input(const gl_kernel_ctx *k, size_t i)
{
    return i < k->n_inputs ? k->in[i] : NULL;
}

const gl_tensor *gl_need_input(const gl_kernel_ctx *k, size_t i, const char *what)
{
    if (i < k->n_inputs && k->in[i])
        return k->in[i];
    gl_fail(GL_ERR_INPUT, "%s: input %zu ('%s') is missing", k->where, i, what);
    return NULL;
}

gl_status gl_need_inputs(const gl_kernel_ctx *k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!gl_opt_input(k, i))
            return gl_fail(GL_ERR_INPUT, "%s: required input %zu is missing", k->where, i);
    return GL_OK;
}

bool gl_out_wanted(const gl_kernel_ctx *k, size_t i)
{
    return i < k->n_outputs && i < k->node->n_outputs && k->node->outputs[i];
}

gl_status gl_need_number(const gl_kernel_ctx *k, const gl_tensor *t, bool bool_ok,
                         const char *what)
{
    if (gl_dtype_is_float(t->dtype) || gl_dtype_is_int(t->dtype) ||
        (bool_ok && t->dtype == GL_DT_BOOL))
        return GL_OK;
    return gl_fail(GL_ERR_INPUT, "%s: %s has type %s, expected a number type", k->where, what,
                   gl_dtype_name(t->dtype));
}

bool gl_scalar_int(const gl_tensor *t, const char *where, const char *what, int64_t *v)
{
    if (!t || t->count != 1 || !gl_dtype_is_int(t->dtype)) {
        gl_fail(GL_ERR_INPUT, "%s: %s must be a single integer", where, what);
        return false;
    }
    *v = gl_elem_i64(t, 0);
    return true;
}

/* An output over a buffer the executor lends (see gl_kernel_ctx.alloc). */
static gl_tensor *out_from_executor(gl_kernel_ctx *k, size_t i, gl_dtype dt, int rank,
                                   const int64_t *dims)
{
    int64_t count;
    if (!gl_dtype_valid(dt)) {
        gl_fail(GL_ERR_INPUT, "tensor of undefined element type");
        return NULL;
    }
    if (!gl_dims_count(dims, rank, gl_dtype_size(dt), INT64_MAX, &count, "tensor"))
        return NULL;
    gl_buffer *buf = NULL;
    if (count > 0 && !(buf = k->alloc(k, i, (size_t)count * gl_dtype_size(dt), false)))
        return NULL;
    return gl_tensor_wrap(dt, rank, dims, count, buf);
}

gl_tensor *gl_out_new(gl_kernel_ctx *k, size_t i, gl_dtype dt, int rank, const int64_t *dims)
{
    if (i >= k->n_outputs) {
        gl_fail(GL_ERR_INTERNAL, "%s: output %zu does not exist", k->where, i);
        return NULL;
    }
    const gl_value *v = k->node->outputs[i];
    if (gl_limits_check_output(k->where, v ? v->name : NULL, dt, rank, dims) != GL_OK)
        return NULL;
    gl_tensor *t = k->alloc && dt != GL_DT_STRING ? out_from_executor(k, i, dt, rank, dims)
                                                  : gl_tensor_new(dt, rank, dims);
    if (!t) {
        gl_error_prefix("%s: output %zu", k->where, i);
        return NULL;
    }
    gl_tensor_free(k->out[i]);
    k->out[i] = t;
    return t;
}

gl_tensor *gl_out_share(gl_kernel_ctx *k, size_t i, const gl_tensor *t)
{
    if (i >= k->n_outputs) {
        gl_fail(GL_ERR_INTERNAL, "%s: output %zu does not exist", k->where, i);
        return NULL;
    }
    gl_tensor_free(k->out[i]);
    k->out[i] = gl_tensor_share(t);
    return k->out[i];
}

bool gl_tensor_ints(const gl_tensor *t, const char *where, const char *what, int64_t **vals,
                    size_t *count)
{
    *vals = NULL;
    *count = 0;
    if (!t || !gl_dtype_is_int(t->dtype)) {
        gl_fail(GL_ERR_INPUT, "%s: %s must be an integer tensor", where, what);
        return false;
    }
    *vals = gl_xmalloc((size_t)(t->count ? t->count : 1) * sizeof(int64_t));
    for (int64_t i = 0; i < t->count; i++)
        (*vals)[i] = gl_elem_i64(t, i);
    *count = (size_t)t->count;
    return true;
}

/* ---- kernels: elements --------------------------------------------------------------- */

double gl_elem_f64(const gl_tensor *t, int64_t i) { return gl_tensor_get_f64(t, i); }

int64_t gl_quantize_value(float x, float scale, int64_t zero, gl_dtype dt)
{
    double lo = dt == GL_DT_INT8 ? -128 : 0, hi = dt == GL_DT_INT8 ? 127 : 255;
    double v = (double)nearbyintf(x / scale) + (double)zero;
    if (isnan(v))
        v = (double)zero;
    return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

int64_t gl_elem_i64(const gl_tensor *t, int64_t i)
{
    const void *p = gl_tensor_data(t);
    switch (t->dtype) {
    case GL_DT_INT64: return ((const int64_t *)p)[i];
    case GL_DT_UINT64: return (int64_t)((const uint64_t *)p)[i];
    case GL_DT_INT32: return ((const int32_t *)p)[i];
    case GL_DT_UINT32: return ((const uint32_t *)p)[i];
    case GL_DT_INT16: return ((const int16_t *)p)[i];
    case GL_DT_UINT16: return ((const uint16_t *)p)[i];
    case GL_DT_INT8: return ((const int8_t *)p)[i];
    case GL_DT_UINT8: return ((const uint8_t *)p)[i];
    case GL_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: {
        double v = gl_tensor_get_f64(t, i);
        if (isnan(v))
            return 0;
        if (v >= 9.2233720368547758e18)
            return INT64_MAX;
        if (v <= -9.2233720368547758e18)
            return INT64_MIN;
        return (int64_t)v;
    }
    }
}

void gl_elem_set_f64(gl_tensor *t, int64_t i, double v)
{
    void *p = t->buf->data; /* kernels write tensors they just created */
    switch (t->dtype) {
    case GL_DT_FLOAT: ((float *)p)[i] = (float)v; break;
    case GL_DT_DOUBLE: ((double *)p)[i] = v; break;
    case GL_DT_FLOAT16: ((uint16_t *)p)[i] = gl_f32_to_f16((float)v); break;
    case GL_DT_BFLOAT16: ((uint16_t *)p)[i] = gl_f32_to_bf16((float)v); break;
    case GL_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case GL_DT_COMPLEX64: ((float *)p)[2 * i] = (float)v; ((float *)p)[2 * i + 1] = 0; break;
    case GL_DT_COMPLEX128: ((double *)p)[2 * i] = v; ((double *)p)[2 * i + 1] = 0; break;
    default:
        if (isnan(v))
            v = 0;
        gl_elem_set_i64(t, i, v >= 9.2233720368547758e18 ? INT64_MAX
                             : v <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)v);
    }
}

void gl_elem_set_i64(gl_tensor *t, int64_t i, int64_t v)
{
    void *p = t->buf->data;
    switch (t->dtype) {
    case GL_DT_INT64: ((int64_t *)p)[i] = v; break;
    case GL_DT_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case GL_DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case GL_DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case GL_DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case GL_DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case GL_DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case GL_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case GL_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case GL_DT_FLOAT: case GL_DT_DOUBLE: case GL_DT_FLOAT16: case GL_DT_BFLOAT16:
    case GL_DT_COMPLEX64: case GL_DT_COMPLEX128:
        gl_elem_set_f64(t, i, (double)v);
        break;
    default:
        break; /* strings and undefined have no numeric elements: callers check first */
    }
}

int gl_elem_cmp(const gl_tensor *t, int64_t i, int64_t j)
{
    switch (t->dtype) {
    case GL_DT_STRING: {
        const gl_bytes *items = gl_tensor_data(t), *x = items + i, *y = items + j;
        size_t n = x->len < y->len ? x->len : y->len;
        int c = n ? memcmp(x->data, y->data, n) : 0;
        return c ? c : (x->len > y->len) - (x->len < y->len);
    }
    case GL_DT_UINT64: {
        const uint64_t *p = gl_tensor_data(t);
        return (p[i] > p[j]) - (p[i] < p[j]);
    }
    default:
        if (gl_dtype_is_float(t->dtype)) {
            double x = gl_elem_f64(t, i), y = gl_elem_f64(t, j);
            if (isnan(x) || isnan(y))
                return isnan(x) - isnan(y);
            return (x > y) - (x < y);
        } else {
            int64_t x = gl_elem_i64(t, i), y = gl_elem_i64(t, j);
            return (x > y) - (x < y);
        }
    }
}

void gl_copy_elems(gl_tensor *dst, int64_t di, const gl_tensor *src, int64_t si, int64_t n)
{
    if (n <= 0)
        return;
    if (dst->dtype != GL_DT_STRING) {
        size_t es = gl_dtype_size(dst->dtype);
        memcpy((uint8_t *)dst->buf->data + (size_t)di * es,
               (const uint8_t *)gl_tensor_data(src) + (size_t)si * es, (size_t)n * es);
        return;
    }
    gl_bytes *d = (gl_bytes *)dst->buf->data + di;
    const gl_bytes *s = (const gl_bytes *)gl_tensor_data(src) + si;
    for (int64_t i = 0; i < n; i++)
        gl_bytes_assign(&d[i], &s[i]);
}

void gl_bytes_assign(gl_bytes *dst, const gl_bytes *src)
{
    /* gl_xmalloc, as gl_tensor_make_writable uses for string copies: one string is small
     * next to the tensor that holds it, and no kernel can go on without its copy. */
    uint8_t *copy = gl_xmalloc(src->len ? src->len : 1);
    if (src->len)
        memcpy(copy, src->data, src->len);
    free(dst->data);
    dst->data = copy;
    dst->len = src->len;
}

double *gl_tensor_to_f64(const gl_tensor *t, const char *where)
{
    double *v = malloc((size_t)(t->count ? t->count : 1) * sizeof(double));
    if (!v) {
        gl_fail(GL_ERR_NOMEM, "%s: out of memory converting a tensor", where);
        return NULL;
    }
    const void *p = gl_tensor_data(t);
    if (t->dtype == GL_DT_FLOAT) {
        for (int64_t i = 0; i < t->count; i++)
            v[i] = ((const float *)p)[i];
    } else if (t->dtype == GL_DT_DOUBLE) {
        if (t->count)
            memcpy(v, p, (size_t)t->count * sizeof(double));
    } else {
        for (int64_t i = 0; i < t->count; i++)
            v[i] = gl_elem_f64(t, i);
    }
    return v;
}

void gl_tensor_store_f64(gl_tensor *t, const double *v, bool round_ints)
{
    if (t->count == 0)
        return;
    void *p = t->buf->data;
    if (t->dtype == GL_DT_FLOAT) {
        for (int64_t i = 0; i < t->count; i++)
            ((float *)p)[i] = (float)v[i];
    } else if (t->dtype == GL_DT_DOUBLE) {
        memcpy(p, v, (size_t)t->count * sizeof(double));
    } else {
        bool rnd = round_ints && gl_dtype_is_int(t->dtype);
        for (int64_t i = 0; i < t->count; i++)
            gl_elem_set_f64(t, i, rnd ? nearbyint(v[i]) : v[i]);
    }
}

/* ---- broadcasting at run time -------------------------------------------------------- */

gl_status gl_bcast_init(gl_bcast *b, const gl_tensor *const *ts, size_t n, const char *where)
{
    memset(b, 0, sizeof(*b));
    if (n > GL_BCAST_MAX_OPERANDS)
        return gl_fail(GL_ERR_INTERNAL, "%s: %zu operands to broadcast (max %d)", where, n,
                       GL_BCAST_MAX_OPERANDS);
    b->n = n;
    for (size_t k = 0; k < n; k++)
        if (ts[k]->rank > b->rank)
            b->rank = ts[k]->rank;
    for (int d = 0; d < b->rank; d++)
        b->dims[d] = 1;
    for (size_t k = 0; k < n; k++) {
        int off = b->rank - ts[k]->rank;
        for (int d = 0; d < ts[k]->rank; d++) {
            int64_t x = ts[k]->dims[d], *acc = &b->dims[off + d];
            if (x == *acc || x == 1)
                continue;
            if (*acc != 1)
                return gl_fail(GL_ERR_INPUT, "%s: input %zu's dimension %d (%lld) does not "
                               "broadcast with %lld", where, k, d, (long long)x,
                               (long long)*acc);
            *acc = x;
        }
    }
    /* The count without overflow: 0 if any dim is (an empty tensor may have huge other
     * dims), else checked. */
    if (!gl_dims_count(b->dims, b->rank, 0, INT64_MAX, &b->count, "broadcast result")) {
        gl_error_prefix("%s", where);
        return GL_ERR_INPUT;
    }
    for (size_t k = 0; k < n; k++) {
        int off = b->rank - ts[k]->rank;
        int64_t own[GL_MAX_RANK];
        gl_strides(ts[k]->dims, ts[k]->rank, own);
        for (int d = 0; d < b->rank; d++) {
            int sd = d - off;
            b->strides[k][d] = sd < 0 || ts[k]->dims[sd] == 1 ? 0 : own[sd];
        }
    }
    return GL_OK;
}

void gl_bcast_iter_start(gl_bcast_iter *it, const gl_bcast *b)
{
    memset(it, 0, sizeof(*it));
    it->b = b;
}

void gl_bcast_iter_next(gl_bcast_iter *it)
{
    const gl_bcast *b = it->b;
    for (int d = b->rank - 1; d >= 0; d--) {
        if (++it->idx[d] < b->dims[d]) {
            for (size_t k = 0; k < b->n; k++)
                it->off[k] += b->strides[k][d];
            return;
        }
        it->idx[d] = 0;
        for (size_t k = 0; k < b->n; k++)
            it->off[k] -= b->strides[k][d] * (b->dims[d] - 1);
    }
}

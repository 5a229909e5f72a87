/* movement.c — shape and data movement ops: Identity, Constant*, Shape, Size, Reshape,
 * Flatten, Transpose, Squeeze/Unsqueeze, Concat, Split, Slice, Gather*, Scatter*, Pad,
 * Tile, Expand, Range, NonZero, Compress, OneHot, EyeLike, Trilu, DepthToSpace,
 * SpaceToDepth, ReverseSequence, Unique.
 *
 * Two shared engines keep the kernels small:
 *  - gl_copy_elems (opkit.h), fill_run and view_copy move elements of any dtype
 *    (strings get their own copies of the bytes: a string buffer owns its items).
 *    view_copy walks a strided "view" of the source (dims, per-dim source strides,
 *    offset) and writes the output contiguously, merging dims so the innermost run is as
 *    long as possible and copied with memcpy when contiguous. Transpose, Slice, Expand,
 *    Tile, DepthToSpace and SpaceToDepth are each just a view.
 *  - symprod: products of symbolic dims for shape functions (Flatten of [N,3,4] is
 *    [N*12]; Reshape can split it back), see below.
 * Ops that only change the dims (Reshape, Flatten, Squeeze, Unsqueeze, Identity) share
 * the input's buffer (copy-on-write), they never copy.
 */
#include "ops/families.h"
#include "ops/opkit.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== symbolic dims =================================================================== */

/* A product of dims as shape functions see it: an integer coefficient times symbols.
 * The canonical spelling of a symbolic product is its symbols in strcmp order joined by
 * '*', then the coefficient when it is not 1 ("N*seq*12"), so equal products spell the
 * same and a later Reshape can divide them again ("N*12" / 12 = "N"). A symbol holding
 * other operators ("N+1") is one opaque factor. A product with an unknown factor, or
 * with more than SYM_FACTORS symbols, is unknown: we keep simple products only. */
#define SYM_FACTORS 8
#define SYM_LEN 64

typedef struct symprod {
    bool known;
    int64_t coef;
    int n;
    char fac[SYM_FACTORS][SYM_LEN];
} symprod;

static void sp_init(symprod *p)
{
    p->known = true;
    p->coef = 1;
    p->n = 0;
}

static void sp_mul_int(symprod *p, int64_t k)
{
    if (k < 0 || (p->coef != 0 && k > INT64_MAX / p->coef)) {
        p->known = false;
        return;
    }
    p->coef *= k;
}

static void sp_add_factor(symprod *p, const char *s, size_t len)
{
    if (p->n == SYM_FACTORS || len == 0 || len >= SYM_LEN) {
        p->known = false;
        return;
    }
    char f[SYM_LEN];
    memcpy(f, s, len);
    f[len] = '\0';
    int at = p->n;
    while (at > 0 && strcmp(p->fac[at - 1], f) > 0) {
        memcpy(p->fac[at], p->fac[at - 1], SYM_LEN);
        at--;
    }
    memcpy(p->fac[at], f, len + 1);
    p->n++;
}

static bool all_digits(const char *s, size_t len)
{
    if (len == 0 || len > 18)
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

static void sp_mul_sym(symprod *p, const char *sym)
{
    size_t n = strlen(sym);
    if (strpbrk(sym, "+-/()%^ ") || strstr(sym, "**") || sym[0] == '*' ||
        (n && sym[n - 1] == '*')) {
        sp_add_factor(p, sym, n); /* not a plain product: one opaque factor */
        return;
    }
    for (const char *s = sym;;) {
        const char *star = strchr(s, '*');
        size_t len = star ? (size_t)(star - s) : strlen(s);
        if (all_digits(s, len))
            sp_mul_int(p, strtoll(s, NULL, 10));
        else
            sp_add_factor(p, s, len);
        if (!star)
            break;
        s = star + 1;
    }
}

static void sp_mul_dim(symprod *p, const gl_dim *d)
{
    if (d->value >= 0)
        sp_mul_int(p, d->value);
    else if (d->sym)
        sp_mul_sym(p, d->sym);
    else
        p->known = false;
}

/* q = num / den when the division is exact as products (den's symbols all in num, the
 * coefficients divide); false otherwise. */
static bool sp_div(const symprod *num, const symprod *den, symprod *q)
{
    if (!num->known || !den->known || den->coef == 0 || num->coef % den->coef != 0)
        return false;
    *q = *num;
    q->coef /= den->coef;
    for (int i = 0; i < den->n; i++) {
        int at = 0;
        while (at < q->n && strcmp(q->fac[at], den->fac[i]) != 0)
            at++;
        if (at == q->n)
            return false;
        for (int j = at; j + 1 < q->n; j++)
            memcpy(q->fac[j], q->fac[j + 1], SYM_LEN);
        q->n--;
    }
    return true;
}

static void dim_unknown(gl_dim *d) { gl_dim_set(d, GL_DIM_UNKNOWN); }

static void sp_to_dim(const symprod *p, gl_dim *d)
{
    if (!p->known) {
        dim_unknown(d);
        return;
    }
    if (p->n == 0 || p->coef == 0) {
        gl_dim_set(d, p->coef);
        return;
    }
    char buf[SYM_FACTORS * SYM_LEN + 32];
    size_t pos = 0;
    for (int i = 0; i < p->n; i++)
        pos += (size_t)snprintf(buf + pos, sizeof(buf) - pos, "%s%s", i ? "*" : "", p->fac[i]);
    if (p->coef != 1)
        snprintf(buf + pos, sizeof(buf) - pos, "*%lld", (long long)p->coef);
    gl_dim_set_sym(d, buf);
}

/* Product of dims [from, to) of a shape. */
static void sp_of_dims(symprod *p, const gl_shape *s, int from, int to)
{
    sp_init(p);
    for (int i = from; i < to; i++)
        sp_mul_dim(p, &s->dims[i]);
}

/* d * k (k >= 0), symbols kept. */
static void dim_mul(gl_dim *out, const gl_dim *d, int64_t k)
{
    symprod p;
    sp_init(&p);
    sp_mul_dim(&p, d);
    sp_mul_int(&p, k);
    sp_to_dim(&p, out);
}

/* d / k when exact (symbolic d: when d is a product carrying k); else unknown. False
 * when d is known and k does not divide it. */
static bool dim_div(gl_dim *out, const gl_dim *d, int64_t k)
{
    if (d->value >= 0) {
        if (k <= 0 || d->value % k != 0)
            return false;
        gl_dim_set(out, d->value / k);
        return true;
    }
    symprod num, den, q;
    sp_init(&num);
    sp_mul_dim(&num, d);
    sp_init(&den);
    sp_mul_int(&den, k);
    if (sp_div(&num, &den, &q))
        sp_to_dim(&q, out);
    else
        dim_unknown(out);
    return true;
}

/* ==== shape-function helpers ========================================================== */

/* dst = a copy of src (dst need not be initialized). */
static void shape_dup(gl_shape *dst, const gl_shape *src)
{
    gl_shape_init_unknown(dst);
    gl_shape_copy(dst, src);
}

/* Output `i` gets dtype and *s; *s is freed. */
static void set_out(gl_infer_ctx *c, size_t i, gl_dtype dt, gl_shape *s)
{
    gl_infer_set(c, i, dt, s);
    gl_shape_free(s);
}

static int known_rank(const gl_type *t)
{
    return t ? t->shape.rank : GL_RANK_UNKNOWN;
}

/* Length of a 1-D input whose values are not known but whose shape may be. */
static int64_t vector_len(const gl_infer_ctx *c, size_t i)
{
    const gl_type *t = gl_infer_input(c, i);
    if (!t || t->shape.rank != 1)
        return -1;
    return t->shape.dims[0].value;
}

static bool has_input(const gl_infer_ctx *c, size_t i)
{
    return i < c->n_inputs && c->in_types[i] != NULL;
}

/* ==== kernel helpers ================================================================== */

static size_t elem_size(gl_dtype dt)
{
    return dt == GL_DT_STRING ? sizeof(gl_bytes) : gl_dtype_size(dt);
}

static bool mul_i64(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

/* Output i as x's bytes under new dims (no copy). */
static gl_status out_reshaped(gl_kernel_ctx *k, size_t i, const gl_tensor *x, int rank,
                              const int64_t *dims)
{
    if (i >= k->n_outputs)
        return gl_fail(GL_ERR_INTERNAL, "%s: output %zu does not exist", k->where, i);
    gl_tensor_free(k->out[i]);
    k->out[i] = gl_tensor_wrap(x->dtype, rank, dims, x->count, gl_buffer_ref(x->buf));
    return GL_OK;
}

/* Integer values of input i (malloc'd). */
static bool in_ints(gl_kernel_ctx *k, size_t i, const char *what, int64_t **v, size_t *n)
{
    const gl_tensor *t = gl_need_input(k, i, what);
    return t && gl_tensor_ints(t, k->where, what, v, n);
}

/* One integer of a scalar (or one-element) input. */
static bool in_scalar_int(gl_kernel_ctx *k, size_t i, const char *what, int64_t *v)
{
    const gl_tensor *t = gl_need_input(k, i, what);
    if (!t)
        return false;
    if (t->count != 1 || (!gl_dtype_is_int(t->dtype) && !gl_dtype_is_float(t->dtype))) {
        gl_fail(GL_ERR_INPUT, "%s: input '%s' must be one number", k->where, what);
        return false;
    }
    *v = gl_elem_i64(t, 0);
    return true;
}

/* ---- moving elements ------------------------------------------------------------------- */

static uint8_t *bytes_at(gl_tensor *t, int64_t i)
{
    return (uint8_t *)t->buf->data + (size_t)i * elem_size(t->dtype);
}

static const uint8_t *cbytes_at(const gl_tensor *t, int64_t i)
{
    return (const uint8_t *)t->buf->data + (size_t)i * elem_size(t->dtype);
}

/* dst[di .. di+n) = n copies of src[si]. */
static void fill_run(gl_tensor *dst, int64_t di, const gl_tensor *src, int64_t si, int64_t n)
{
    if (n <= 0)
        return;
    if (dst->dtype == GL_DT_STRING) {
        const gl_bytes *s = (const gl_bytes *)src->buf->data + si;
        gl_bytes *d = (gl_bytes *)dst->buf->data + di;
        for (int64_t i = 0; i < n; i++)
            gl_bytes_assign(&d[i], s);
        return;
    }
    size_t es = elem_size(dst->dtype);
    uint8_t *d = bytes_at(dst, di);
    memmove(d, cbytes_at(src, si), es);
    /* doubling copies: log(n) memcpy calls */
    for (size_t done = 1, total = (size_t)n; done < total;) {
        size_t more = done < total - done ? done : total - done;
        memcpy(d + done * es, d, more * es);
        done += more;
    }
}

/* n elements from src at si, si+stride, ... into dst at di.. */
static void strided_run(gl_tensor *dst, int64_t di, const gl_tensor *src, int64_t si,
                        int64_t stride, int64_t n)
{
    if (dst->dtype == GL_DT_STRING) {
        gl_bytes *d = (gl_bytes *)dst->buf->data + di;
        const gl_bytes *s = (const gl_bytes *)src->buf->data;
        for (int64_t i = 0; i < n; i++)
            gl_bytes_assign(&d[i], &s[si + i * stride]);
        return;
    }
    size_t es = elem_size(dst->dtype);
    void *dp = bytes_at(dst, di);
    const void *sp = src->buf->data;
#define STRIDED(T)                                                                          \
    for (int64_t i = 0; i < n; i++)                                                         \
        ((T *)dp)[i] = ((const T *)sp)[si + i * stride];                                    \
    break
    switch (es) {
    case 1: STRIDED(uint8_t);
    case 2: STRIDED(uint16_t);
    case 4: STRIDED(uint32_t);
    case 8: STRIDED(uint64_t);
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy((uint8_t *)dp + (size_t)i * es,
                   (const uint8_t *)sp + (size_t)(si + i * stride) * es, es);
    }
#undef STRIDED
}

/* A strided view of a source tensor: output element (i0, .., ik) (row-major over dims)
 * is source element offset + sum(i_d * strides[d]). Twice GL_MAX_RANK dims: Tile and
 * DepthToSpace views split dims. */
#define VIEW_MAX (2 * GL_MAX_RANK)

typedef struct view {
    int rank;
    int64_t dims[VIEW_MAX];
    int64_t strides[VIEW_MAX]; /* source element strides: 0 repeats, < 0 walks back */
    int64_t offset;
} view;

/* Drop unit dims and merge neighbours that are contiguous with each other, so the
 * innermost run is as long as possible. Returns the element count. */
static int64_t view_simplify(view *v)
{
    int64_t count = 1;
    int r = 0;
    for (int d = 0; d < v->rank; d++) {
        int64_t n = v->dims[d], s = v->strides[d];
        if (n == 0) {
            v->rank = 0;
            return 0;
        }
        count *= n;
        if (n == 1)
            continue;
        if (r > 0 && v->strides[r - 1] == s * n) {
            v->dims[r - 1] *= n;
            v->strides[r - 1] = s;
        } else {
            v->dims[r] = n;
            v->strides[r] = s;
            r++;
        }
    }
    v->rank = r;
    return count;
}

/* Write the elements of view v of src contiguously into dst from element di. */
static void view_copy(gl_tensor *dst, int64_t di, const gl_tensor *src, view *v)
{
    int64_t count = view_simplify(v);
    if (count == 0)
        return;
    if (v->rank == 0) {
        gl_copy_elems(dst, di, src, v->offset, 1);
        return;
    }
    int r = v->rank;
    int64_t inner = v->dims[r - 1], istride = v->strides[r - 1];
    int64_t idx[VIEW_MAX] = {0};
    int64_t si = v->offset;
    for (int64_t o = 0, outer = count / inner; o < outer; o++, di += inner) {
        if (istride == 1)
            gl_copy_elems(dst, di, src, si, inner);
        else if (istride == 0)
            fill_run(dst, di, src, si, inner);
        else
            strided_run(dst, di, src, si, istride, inner);
        for (int d = r - 2; d >= 0; d--) {
            si += v->strides[d];
            if (++idx[d] < v->dims[d])
                break;
            si -= v->strides[d] * v->dims[d];
            idx[d] = 0;
        }
    }
}

/* A view covering all of x in order. */
static void view_of(view *v, const gl_tensor *x)
{
    v->rank = x->rank;
    memcpy(v->dims, x->dims, (size_t)x->rank * sizeof(int64_t));
    gl_strides(x->dims, x->rank, v->strides);
    v->offset = 0;
}

/* A new output i holding a copy of x's elements. */
static gl_tensor *out_copy(gl_kernel_ctx *k, size_t i, const gl_tensor *x)
{
    gl_tensor *y = gl_out_new(k, i, x->dtype, x->rank, x->dims);
    if (y)
        gl_copy_elems(y, 0, x, 0, x->count);
    return y;
}

/* Scatter reductions. */
typedef enum reduction { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } reduction;

static gl_status parse_reduction(const gl_node *n, int64_t opset, const char *where,
                                 reduction *out)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *s = gl_node_attr_string(n, "reduction", "none");
    size_t allowed = opset >= 18 ? 5 : opset >= 16 ? 3 : 1;
    for (size_t i = 0; i < allowed; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (reduction)i;
            return GL_OK;
        }
    return gl_fail(GL_ERR_INPUT, "%s: reduction '%s' is not supported at opset %lld", where,
                   s, (long long)opset);
}

static double reduce_f64(reduction r, double a, double b)
{
    switch (r) {
    case RED_ADD: return a + b;
    case RED_MUL: return a * b;
    case RED_MAX: return a > b ? a : b;
    case RED_MIN: return a < b ? a : b;
    default: return b;
    }
}

static int64_t reduce_i64(reduction r, int64_t a, int64_t b)
{
    switch (r) {
    case RED_ADD: return (int64_t)((uint64_t)a + (uint64_t)b); /* wraps like the type */
    case RED_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case RED_MAX: return a > b ? a : b;
    case RED_MIN: return a < b ? a : b;
    default: return b;
    }
}

/* dst[di] = dst[di] (op) src[si]. */
static void combine(gl_tensor *dst, int64_t di, const gl_tensor *src, int64_t si, reduction r)
{
    if (r == RED_NONE) {
        gl_copy_elems(dst, di, src, si, 1);
        return;
    }
    switch (dst->dtype) {
    case GL_DT_FLOAT: {
        float *d = (float *)dst->buf->data + di, s = ((const float *)src->buf->data)[si];
        /* exact in double, so one rounding to float: the same as float arithmetic */
        *d = (float)reduce_f64(r, *d, s);
        break;
    }
    case GL_DT_DOUBLE:
    case GL_DT_FLOAT16:
    case GL_DT_BFLOAT16:
        gl_elem_set_f64(dst, di, reduce_f64(r, gl_elem_f64(dst, di), gl_elem_f64(src, si)));
        break;
    case GL_DT_UINT64: {
        uint64_t *d = (uint64_t *)dst->buf->data + di, s = ((const uint64_t *)src->buf->data)[si];
        *d = r == RED_ADD ? *d + s : r == RED_MUL ? *d * s : r == RED_MAX ? (*d > s ? *d : s)
                                                                        : (*d < s ? *d : s);
        break;
    }
    default:
        gl_elem_set_i64(dst, di, reduce_i64(r, gl_elem_i64(dst, di), gl_elem_i64(src, si)));
    }
}

/* Shape of the given dims (all known). */
static void shape_of_dims(gl_shape *s, int rank, const int64_t *dims)
{
    gl_shape_init_unknown(s);
    gl_shape_set_rank(s, rank);
    for (int i = 0; i < rank; i++)
        s->dims[i].value = dims[i];
}

/* Output i has the given dtype and dims. */
static void set_out_dims(gl_infer_ctx *c, size_t i, gl_dtype dt, int rank, const int64_t *dims)
{
    gl_shape s;
    shape_of_dims(&s, rank, dims);
    set_out(c, i, dt, &s);
}

/* Dims of a constant shape vector (ConstantOfShape, Expand): false with a message when
 * it is too long or holds a negative dim. */
static bool dims_from_vector(const int64_t *v, size_t n, const char *where, const char *what)
{
    if (n > GL_MAX_RANK) {
        gl_fail(GL_ERR_INPUT, "%s: '%s' has %zu entries (rank at most %d)", where, what, n,
                GL_MAX_RANK);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0) {
            gl_fail(GL_ERR_INPUT, "%s: '%s'[%zu] is negative (%lld)", where, what, i,
                    (long long)v[i]);
            return false;
        }
    return true;
}

/* ==== Identity ======================================================================== */

static gl_status identity_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input");
    if (!x)
        return GL_ERR_INPUT;
    return gl_out_share(k, 0, x) ? GL_OK : GL_ERR_INTERNAL;
}

static gl_status identity_infer(gl_infer_ctx *c) { return gl_infer_like_input(c, 0, 0); }

/* ==== Constant ======================================================================== */

static const char *const constant_attrs[] = {
    "value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints",
    "value_string", "value_strings",
};

static const gl_attr *constant_attr(const gl_node *n, const char *where, gl_status *st)
{
    const gl_attr *found = NULL;
    for (size_t i = 0; i < GL_ARRAY_LEN(constant_attrs); i++) {
        const gl_attr *a = gl_node_attr(n, constant_attrs[i]);
        if (a && found) {
            *st = gl_fail(GL_ERR_INPUT, "%s: both '%s' and '%s' are set", where, found->name,
                          a->name);
            return NULL;
        }
        if (a)
            found = a;
    }
    if (!found)
        *st = gl_fail(GL_ERR_INPUT, "%s: none of the value attributes is set", where);
    return found;
}

/* The constant's tensor (a new tensor; `value` is shared, not copied). */
static gl_status constant_tensor(const gl_node *n, const char *where, gl_tensor **out)
{
    gl_status st = GL_OK;
    const gl_attr *a = constant_attr(n, where, &st);
    *out = NULL;
    if (!a)
        return st;
    static const gl_attr_type expected[] = {
        GL_ATTR_TENSOR, GL_ATTR_SPARSE_TENSOR, GL_ATTR_FLOAT, GL_ATTR_FLOATS,
        GL_ATTR_INT, GL_ATTR_INTS, GL_ATTR_STRING, GL_ATTR_STRINGS,
    };
    size_t kind = 0;
    while (strcmp(constant_attrs[kind], a->name) != 0)
        kind++;
    if (a != gl_node_attr_typed(n, a->name, expected[kind]))
        return gl_fail(GL_ERR_INPUT, "%s: attribute '%s' is %s, expected %s", where, a->name,
                       gl_attr_type_name(a->type), gl_attr_type_name(expected[kind]));
    int64_t len = (int64_t)a->n;
    gl_tensor *t = NULL;
    switch (a->type) {
    case GL_ATTR_TENSOR:
        if (!a->t)
            return gl_fail(GL_ERR_INPUT, "%s: attribute 'value' holds no tensor", where);
        *out = gl_tensor_share(a->t);
        return GL_OK;
    case GL_ATTR_SPARSE_TENSOR:
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: 'sparse_value' constants are not supported "
                       "(store the constant densely)", where);
    case GL_ATTR_FLOAT:
        if ((t = gl_tensor_new(GL_DT_FLOAT, 0, NULL)))
            ((float *)t->buf->data)[0] = a->f;
        break;
    case GL_ATTR_INT:
        if ((t = gl_tensor_new(GL_DT_INT64, 0, NULL)))
            ((int64_t *)t->buf->data)[0] = a->i;
        break;
    case GL_ATTR_FLOATS:
        if ((t = gl_tensor_new(GL_DT_FLOAT, 1, &len)) && len)
            memcpy(t->buf->data, a->floats, a->n * sizeof(float));
        break;
    case GL_ATTR_INTS:
        if ((t = gl_tensor_new(GL_DT_INT64, 1, &len)) && len)
            memcpy(t->buf->data, a->ints, a->n * sizeof(int64_t));
        break;
    case GL_ATTR_STRING:
        if ((t = gl_tensor_new(GL_DT_STRING, 0, NULL)))
            gl_bytes_assign(t->buf->data, &a->s);
        break;
    default: /* GL_ATTR_STRINGS */
        if ((t = gl_tensor_new(GL_DT_STRING, 1, &len)))
            for (size_t i = 0; i < a->n; i++)
                gl_bytes_assign((gl_bytes *)t->buf->data + i, &a->strings[i]);
        break;
    }
    if (!t)
        return GL_ERR_NOMEM;
    *out = t;
    return GL_OK;
}

static gl_status constant_kernel(gl_kernel_ctx *k)
{
    gl_tensor *t;
    if (k->n_outputs < 1)
        return gl_fail(GL_ERR_INTERNAL, "%s: no output", k->where);
    gl_status st = constant_tensor(k->node, k->where, &t);
    if (st)
        return st;
    gl_tensor_free(k->out[0]);
    k->out[0] = t;
    return GL_OK;
}

static gl_status constant_infer(gl_infer_ctx *c)
{
    gl_tensor *t;
    gl_status st = constant_tensor(c->node, c->where, &t);
    if (st == GL_ERR_UNSUPPORTED) {
        gl_error_clear(); /* a sparse constant: its type stays as declared */
        return GL_OK;
    }
    if (st)
        return st;
    set_out_dims(c, 0, t->dtype, t->rank, t->dims);
    gl_tensor_free(t);
    return GL_OK;
}

/* ==== ConstantOfShape ================================================================= */

/* The fill value (NULL: float 0). */
static gl_status cos_value(const gl_node *n, const char *where, const gl_tensor **v)
{
    const gl_attr *a = gl_node_attr(n, "value");
    *v = NULL;
    if (!a)
        return GL_OK;
    if (a->type != GL_ATTR_TENSOR || !a->t || a->t->count != 1)
        return gl_fail(GL_ERR_INPUT, "%s: attribute 'value' must be a one-element tensor",
                       where);
    *v = a->t;
    return GL_OK;
}

static gl_status cos_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *v;
    int64_t *dims;
    size_t n;
    gl_status st = cos_value(k->node, k->where, &v);
    if (st)
        return st;
    if (!in_ints(k, 0, "input", &dims, &n))
        return GL_ERR_INPUT;
    gl_tensor *y = NULL;
    if (dims_from_vector(dims, n, k->where, "input") &&
        (y = gl_out_new(k, 0, v ? v->dtype : GL_DT_FLOAT, (int)n, dims)) && v)
        fill_run(y, 0, v, 0, y->count);
    free(dims);
    return y ? GL_OK : GL_ERR_INPUT;
}

static gl_status cos_infer(gl_infer_ctx *c)
{
    const gl_tensor *v;
    gl_status st = cos_value(c->node, c->where, &v);
    if (st)
        return st;
    gl_dtype dt = v ? v->dtype : GL_DT_FLOAT;
    int64_t *dims;
    size_t n;
    if (gl_infer_const_ints(c, 0, &dims, &n)) {
        bool ok = dims_from_vector(dims, n, c->where, "input");
        if (ok)
            set_out_dims(c, 0, dt, (int)n, dims);
        free(dims);
        return ok ? GL_OK : GL_ERR_INPUT;
    }
    int64_t len = vector_len(c, 0);
    gl_infer_set_rank(c, 0, dt, len >= 0 && len <= GL_MAX_RANK ? (int)len : GL_RANK_UNKNOWN);
    return GL_OK;
}

/* ==== Shape, Size ===================================================================== */

/* [start, end) of the dims Shape returns (start/end attributes from opset 15). */
static void shape_range(const gl_node *n, int64_t opset, int rank, int64_t *start, int64_t *end)
{
    int64_t s = opset >= 15 ? gl_node_attr_int(n, "start", 0) : 0;
    int64_t e = opset >= 15 ? gl_node_attr_int(n, "end", rank) : rank;
    if (s < 0)
        s += rank;
    if (e < 0)
        e += rank;
    s = s < 0 ? 0 : s > rank ? rank : s;
    e = e < 0 ? 0 : e > rank ? rank : e;
    *start = s;
    *end = e < s ? s : e;
}

static gl_status shape_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data");
    if (!x)
        return GL_ERR_INPUT;
    int64_t s, e;
    shape_range(k->node, k->opset, x->rank, &s, &e);
    int64_t n = e - s;
    gl_tensor *y = gl_out_new(k, 0, GL_DT_INT64, 1, &n);
    if (!y)
        return GL_ERR_NOMEM;
    if (n)
        memcpy(y->buf->data, x->dims + s, (size_t)n * sizeof(int64_t));
    return GL_OK;
}

static gl_status shape_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    int64_t s, e, n = GL_DIM_UNKNOWN;
    if (x && x->shape.rank != GL_RANK_UNKNOWN) {
        shape_range(c->node, c->opset, x->shape.rank, &s, &e);
        n = e - s;
    }
    set_out_dims(c, 0, GL_DT_INT64, 1, &n);
    return GL_OK;
}

static gl_status size_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data");
    gl_tensor *y = x ? gl_out_new(k, 0, GL_DT_INT64, 0, NULL) : NULL;
    if (!y)
        return GL_ERR_INPUT;
    ((int64_t *)y->buf->data)[0] = x->count;
    return GL_OK;
}

static gl_status size_infer(gl_infer_ctx *c)
{
    set_out_dims(c, 0, GL_DT_INT64, 0, NULL);
    return GL_OK;
}

/* ==== Reshape ========================================================================= */

/* The requested shape: attribute `shape` before opset 5, input 1 after. */
static bool reshape_spec_attr(const gl_node *n, int64_t **spec, size_t *count)
{
    const int64_t *a = gl_attr_ints(n, "shape", count);
    if (!a)
        return false;
    *spec = gl_xmalloc((*count ? *count : 1) * sizeof(int64_t));
    memcpy(*spec, a, *count * sizeof(int64_t));
    return true;
}

/* Checks that hold without the input: rank, at most one -1, no dim below -1, and
 * allowzero=1 does not mix 0 with -1. Returns the index of -1 (or -1) in *neg. */
static bool reshape_check_spec(const int64_t *spec, size_t n, bool allowzero,
                               const char *where, int *neg)
{
    bool zero = false;
    *neg = -1;
    if (n > GL_MAX_RANK) {
        gl_fail(GL_ERR_INPUT, "%s: 'shape' has %zu entries (rank at most %d)", where, n,
                GL_MAX_RANK);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (spec[i] == -1 && *neg >= 0) {
            gl_fail(GL_ERR_INPUT, "%s: 'shape' has more than one -1", where);
            return false;
        }
        if (spec[i] < -1) {
            gl_fail(GL_ERR_INPUT, "%s: 'shape'[%zu] is %lld", where, i, (long long)spec[i]);
            return false;
        }
        if (spec[i] == -1)
            *neg = (int)i;
        zero |= spec[i] == 0;
    }
    if (allowzero && zero && *neg >= 0) {
        gl_fail(GL_ERR_INPUT, "%s: 'shape' has both 0 and -1 with allowzero=1", where);
        return false;
    }
    return true;
}

static gl_status reshape_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data");
    if (!x)
        return GL_ERR_INPUT;
    int64_t *spec;
    size_t n;
    if (k->opset < 5) {
        if (!reshape_spec_attr(k->node, &spec, &n))
            return gl_fail(GL_ERR_INPUT, "%s: attribute 'shape' is missing", k->where);
    } else if (!in_ints(k, 1, "shape", &spec, &n)) {
        return GL_ERR_INPUT;
    }
    bool allowzero = k->opset >= 14 && gl_node_attr_int(k->node, "allowzero", 0) != 0;
    int neg;
    int64_t dims[GL_MAX_RANK], known = 1;
    gl_status st = GL_OK;
    if (!reshape_check_spec(spec, n, allowzero, k->where, &neg)) {
        st = GL_ERR_INPUT;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        dims[i] = spec[i];
        if (spec[i] == 0 && !allowzero) {
            if ((int)i >= x->rank) {
                st = gl_fail(GL_ERR_INPUT, "%s: 'shape'[%zu] is 0 (copy) but the input has "
                             "rank %d", k->where, i, x->rank);
                goto done;
            }
            dims[i] = x->dims[i];
        }
        if ((int)i != neg && !mul_i64(known, dims[i], &known)) {
            st = gl_fail(GL_ERR_INPUT, "%s: 'shape' overflows", k->where);
            goto done;
        }
    }
    if (neg >= 0) {
        if (known == 0 || x->count % known != 0) {
            st = gl_fail(GL_ERR_INPUT, "%s: cannot reshape %lld elements with -1 and the "
                         "other dims multiplying to %lld", k->where, (long long)x->count,
                         (long long)known);
            goto done;
        }
        dims[neg] = x->count / known;
    } else if (known != x->count) {
        st = gl_fail(GL_ERR_INPUT, "%s: cannot reshape %lld elements into %lld", k->where,
                     (long long)x->count, (long long)known);
        goto done;
    }
    st = out_reshaped(k, 0, x, (int)n, dims);
done:
    free(spec);
    return st;
}

static gl_status reshape_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int64_t *spec;
    size_t n;
    bool have = c->opset < 5 ? reshape_spec_attr(c->node, &spec, &n)
                             : gl_infer_const_ints(c, 1, &spec, &n);
    if (!have) {
        int64_t len = c->opset < 5 ? -1 : vector_len(c, 1);
        gl_infer_set_rank(c, 0, x->dtype, len >= 0 && len <= GL_MAX_RANK ? (int)len
                                                                          : GL_RANK_UNKNOWN);
        return GL_OK;
    }
    bool allowzero = c->opset >= 14 && gl_node_attr_int(c->node, "allowzero", 0) != 0;
    int neg;
    if (!reshape_check_spec(spec, n, allowzero, c->where, &neg)) {
        free(spec);
        return GL_ERR_INPUT;
    }
    int r = x->shape.rank;
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, (int)n);
    bool copied[GL_MAX_RANK] = {false};
    symprod out_rest; /* the output dims that are not copied and not -1 */
    sp_init(&out_rest);
    gl_status st = GL_OK;
    for (size_t i = 0; i < n; i++) {
        if (spec[i] == 0 && !allowzero) {
            if (r != GL_RANK_UNKNOWN && (int)i >= r) {
                st = gl_fail(GL_ERR_INPUT, "%s: 'shape'[%zu] is 0 (copy) but the input has "
                             "rank %d", c->where, i, r);
                goto done;
            }
            if (r != GL_RANK_UNKNOWN)
                gl_dim_copy(&s.dims[i], &x->shape.dims[i]);
            copied[i] = true;
        } else if (spec[i] >= 0) {
            gl_dim_set(&s.dims[i], spec[i]);
            sp_mul_int(&out_rest, spec[i]);
        }
    }
    if (r != GL_RANK_UNKNOWN) {
        /* A copied dim is the same on both sides: leave it out of both products, so
         * [?,3,4] with [0,-1] gives [?,12]. */
        symprod in_rest, q;
        sp_init(&in_rest);
        for (int d = 0; d < r; d++)
            if (!(d < (int)n && copied[d]))
                sp_mul_dim(&in_rest, &x->shape.dims[d]);
        bool all_ints = in_rest.known && out_rest.known && in_rest.n == 0 && out_rest.n == 0;
        if (neg >= 0 && sp_div(&in_rest, &out_rest, &q)) {
            sp_to_dim(&q, &s.dims[neg]);
        } else if (all_ints && (neg >= 0 ? out_rest.coef != 0 &&
                                               in_rest.coef % out_rest.coef != 0
                                         : in_rest.coef != out_rest.coef)) {
            st = gl_fail(GL_ERR_INPUT, "%s: cannot reshape %s into the requested shape",
                         c->where, "the input");
            goto done;
        }
    }
    gl_infer_set(c, 0, x->dtype, &s);
done:
    gl_shape_free(&s);
    free(spec);
    return st;
}

/* ==== Flatten ========================================================================= */

static bool flatten_axis(const gl_node *n, int64_t opset, int rank, const char *where, int *axis)
{
    int64_t a = gl_node_attr_int(n, "axis", 1);
    if (a < -rank || a > rank || (a < 0 && opset < 11)) {
        gl_fail(GL_ERR_INPUT, "%s: axis %lld is out of range for rank %d", where, (long long)a,
                rank);
        return false;
    }
    *axis = (int)(a < 0 ? a + rank : a);
    return true;
}

static gl_status flatten_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input");
    int axis;
    if (!x || !flatten_axis(k->node, k->opset, x->rank, k->where, &axis))
        return GL_ERR_INPUT;
    int64_t dims[2] = {gl_dims_product(x->dims, 0, axis), gl_dims_product(x->dims, axis, x->rank)};
    return out_reshaped(k, 0, x, 2, dims);
}

static gl_status flatten_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    int axis, r = known_rank(x);
    if (!x)
        return GL_OK;
    if (r == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, 2);
        return GL_OK;
    }
    if (!flatten_axis(c->node, c->opset, r, c->where, &axis))
        return GL_ERR_INPUT;
    gl_shape s;
    symprod p;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, 2);
    sp_of_dims(&p, &x->shape, 0, axis);
    sp_to_dim(&p, &s.dims[0]);
    sp_of_dims(&p, &x->shape, axis, r);
    sp_to_dim(&p, &s.dims[1]);
    set_out(c, 0, x->dtype, &s);
    return GL_OK;
}

/* ==== Squeeze, Unsqueeze ============================================================== */

typedef enum axes_state { AXES_NONE, AXES_KNOWN, AXES_UNKNOWN } axes_state;

/* Axes of Squeeze/Unsqueeze: attribute `axes` before opset 13, optional input 1 from 13
 * (an empty list counts as none). *axes is malloc'd when AXES_KNOWN. */
static axes_state infer_axes(const gl_infer_ctx *c, int64_t **axes, size_t *n)
{
    *axes = NULL;
    *n = 0;
    if (c->opset < 13) {
        const int64_t *a = gl_attr_ints(c->node, "axes", n);
        if (!a || !*n)
            return AXES_NONE;
        *axes = gl_xmalloc(*n * sizeof(int64_t));
        memcpy(*axes, a, *n * sizeof(int64_t));
        return AXES_KNOWN;
    }
    if (!has_input(c, 1))
        return AXES_NONE;
    if (!gl_infer_const_ints(c, 1, axes, n))
        return AXES_UNKNOWN;
    if (*n == 0) {
        free(*axes);
        *axes = NULL;
        return AXES_NONE;
    }
    return AXES_KNOWN;
}

static bool kernel_axes(gl_kernel_ctx *k, int64_t **axes, size_t *n)
{
    *axes = NULL;
    *n = 0;
    if (k->opset < 13) {
        const int64_t *a = gl_attr_ints(k->node, "axes", n);
        if (a && *n) {
            *axes = gl_xmalloc(*n * sizeof(int64_t));
            memcpy(*axes, a, *n * sizeof(int64_t));
        }
        return true;
    }
    if (!gl_opt_input(k, 1))
        return true;
    return in_ints(k, 1, "axes", axes, n);
}

/* Normalize axes against rank into marks[] (true = listed); duplicates and (before
 * opset 11) negative axes are errors. */
static bool mark_axes(const int64_t *axes, size_t n, int rank, int64_t opset, const char *where,
                      bool *marks)
{
    memset(marks, 0, (size_t)(rank > 0 ? rank : 1) * sizeof(bool));
    for (size_t i = 0; i < n; i++) {
        int a;
        if (axes[i] < 0 && opset < 11) {
            gl_fail(GL_ERR_INPUT, "%s: negative axis %lld needs opset 11", where,
                    (long long)axes[i]);
            return false;
        }
        if (!gl_axis_normalize(axes[i], rank, false, where, "axis", &a))
            return false;
        if (marks[a]) {
            gl_fail(GL_ERR_INPUT, "%s: axis %lld is listed twice", where, (long long)axes[i]);
            return false;
        }
        marks[a] = true;
    }
    return true;
}

static gl_status squeeze_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data");
    int64_t *axes, dims[GL_MAX_RANK];
    size_t n;
    bool marks[GL_MAX_RANK];
    if (!x || !kernel_axes(k, &axes, &n))
        return GL_ERR_INPUT;
    bool ok = mark_axes(axes, n, x->rank, k->opset, k->where, marks);
    free(axes);
    if (!ok)
        return GL_ERR_INPUT;
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        if (n == 0 ? x->dims[d] == 1 : marks[d]) {
            if (x->dims[d] != 1)
                return gl_fail(GL_ERR_INPUT, "%s: cannot squeeze axis %d of size %lld",
                               k->where, d, (long long)x->dims[d]);
            continue;
        }
        dims[r++] = x->dims[d];
    }
    return out_reshaped(k, 0, x, r, dims);
}

static gl_status squeeze_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int r = x->shape.rank;
    int64_t *axes;
    size_t n;
    axes_state as = infer_axes(c, &axes, &n);
    bool marks[GL_MAX_RANK];
    if (r == GL_RANK_UNKNOWN || as == AXES_UNKNOWN) {
        int64_t len = as == AXES_UNKNOWN ? vector_len(c, 1) : -1;
        gl_infer_set_rank(c, 0, x->dtype, r != GL_RANK_UNKNOWN && len >= 0 && len <= r
                                              ? r - (int)len : GL_RANK_UNKNOWN);
        free(axes);
        return GL_OK;
    }
    if (as == AXES_NONE) {
        /* All unit dims go: the rank is known only if every dim is. */
        for (int d = 0; d < r; d++)
            if (x->shape.dims[d].value < 0) {
                gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
                return GL_OK;
            }
        for (int d = 0; d < r; d++)
            marks[d] = x->shape.dims[d].value == 1;
    } else {
        bool ok = mark_axes(axes, n, r, c->opset, c->where, marks);
        free(axes);
        if (!ok)
            return GL_ERR_INPUT;
    }
    int out = 0;
    for (int d = 0; d < r; d++) {
        if (marks[d] && x->shape.dims[d].value > 1)
            return gl_fail(GL_ERR_INPUT, "%s: cannot squeeze axis %d of size %lld", c->where,
                           d, (long long)x->shape.dims[d].value);
        out += !marks[d];
    }
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, out);
    for (int d = 0, o = 0; d < r; d++)
        if (!marks[d])
            gl_dim_copy(&s.dims[o++], &x->shape.dims[d]);
    set_out(c, 0, x->dtype, &s);
    return GL_OK;
}

/* Output rank of Unsqueeze and the marks of the new unit dims. */
static bool unsqueeze_marks(const int64_t *axes, size_t n, int rank, int64_t opset,
                            const char *where, bool *marks, int *out_rank)
{
    if (n == 0) {
        gl_fail(GL_ERR_INPUT, "%s: 'axes' is missing or empty", where);
        return false;
    }
    if ((size_t)rank + n > GL_MAX_RANK) {
        gl_fail(GL_ERR_INPUT, "%s: output rank %zu exceeds %d", where, (size_t)rank + n,
                GL_MAX_RANK);
        return false;
    }
    *out_rank = rank + (int)n;
    return mark_axes(axes, n, *out_rank, opset, where, marks);
}

static gl_status unsqueeze_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data");
    int64_t *axes, dims[GL_MAX_RANK];
    size_t n;
    bool marks[GL_MAX_RANK];
    int r;
    if (!x || !kernel_axes(k, &axes, &n))
        return GL_ERR_INPUT;
    bool ok = unsqueeze_marks(axes, n, x->rank, k->opset, k->where, marks, &r);
    free(axes);
    if (!ok)
        return GL_ERR_INPUT;
    for (int d = 0, src = 0; d < r; d++)
        dims[d] = marks[d] ? 1 : x->dims[src++];
    return out_reshaped(k, 0, x, r, dims);
}

static gl_status unsqueeze_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int64_t *axes;
    size_t n;
    axes_state as = infer_axes(c, &axes, &n);
    int r = x->shape.rank, out_rank;
    if (r == GL_RANK_UNKNOWN || as != AXES_KNOWN) {
        int64_t len = as == AXES_UNKNOWN ? vector_len(c, 1) : -1;
        gl_infer_set_rank(c, 0, x->dtype, r != GL_RANK_UNKNOWN && len >= 0 &&
                                              r + len <= GL_MAX_RANK ? r + (int)len
                                                                     : GL_RANK_UNKNOWN);
        free(axes);
        return as == AXES_NONE && r != GL_RANK_UNKNOWN
                   ? gl_fail(GL_ERR_INPUT, "%s: 'axes' is missing or empty", c->where)
                   : GL_OK;
    }
    bool marks[GL_MAX_RANK];
    bool ok = unsqueeze_marks(axes, n, r, c->opset, c->where, marks, &out_rank);
    free(axes);
    if (!ok)
        return GL_ERR_INPUT;
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, out_rank);
    for (int d = 0, src = 0; d < out_rank; d++) {
        if (marks[d])
            gl_dim_set(&s.dims[d], 1);
        else
            gl_dim_copy(&s.dims[d], &x->shape.dims[src++]);
    }
    set_out(c, 0, x->dtype, &s);
    return GL_OK;
}

/* ==== Transpose ======================================================================= */

/* perm (default: reversed dims) validated as a permutation of 0..rank-1. */
static bool transpose_perm(const gl_node *n, int rank, const char *where, int *perm)
{
    size_t count;
    const int64_t *p = gl_attr_ints(n, "perm", &count);
    if (!p) {
        for (int d = 0; d < rank; d++)
            perm[d] = rank - 1 - d;
        return true;
    }
    if ((int64_t)count != rank) {
        gl_fail(GL_ERR_INPUT, "%s: 'perm' has %zu entries for rank %d", where, count, rank);
        return false;
    }
    bool seen[GL_MAX_RANK] = {false};
    for (int d = 0; d < rank; d++) {
        if (p[d] < 0 || p[d] >= rank || seen[p[d]]) {
            gl_fail(GL_ERR_INPUT, "%s: 'perm' is not a permutation of 0..%d", where, rank - 1);
            return false;
        }
        seen[p[d]] = true;
        perm[d] = (int)p[d];
    }
    return true;
}

static gl_status transpose_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data");
    int perm[GL_MAX_RANK];
    if (!x || !transpose_perm(k->node, x->rank, k->where, perm))
        return GL_ERR_INPUT;
    view v = {.rank = x->rank};
    int64_t in_strides[GL_MAX_RANK];
    gl_strides(x->dims, x->rank, in_strides);
    for (int d = 0; d < x->rank; d++) {
        v.dims[d] = x->dims[perm[d]];
        v.strides[d] = in_strides[perm[d]];
    }
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, v.dims);
    if (!y)
        return GL_ERR_NOMEM;
    view_copy(y, 0, x, &v);
    return GL_OK;
}

static gl_status transpose_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    int perm[GL_MAX_RANK];
    if (!x)
        return GL_OK;
    int r = x->shape.rank;
    if (r == GL_RANK_UNKNOWN) {
        size_t count;
        gl_infer_set_rank(c, 0, x->dtype, gl_attr_ints(c->node, "perm", &count) &&
                                              count <= GL_MAX_RANK ? (int)count
                                                                   : GL_RANK_UNKNOWN);
        return GL_OK;
    }
    if (!transpose_perm(c->node, r, c->where, perm))
        return GL_ERR_INPUT;
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, r);
    for (int d = 0; d < r; d++)
        gl_dim_copy(&s.dims[d], &x->shape.dims[perm[d]]);
    set_out(c, 0, x->dtype, &s);
    return GL_OK;
}

/* ==== Concat ========================================================================== */

/* axis: default 1 before opset 4, required after; negative from 11. */
static bool concat_axis(const gl_node *n, int64_t opset, int rank, const char *where, int *axis)
{
    const gl_attr *a = gl_node_attr_typed(n, "axis", GL_ATTR_INT);
    if (!a && opset >= 4) {
        gl_fail(GL_ERR_INPUT, "%s: attribute 'axis' is missing", where);
        return false;
    }
    int64_t v = a ? a->i : 1;
    if (v < 0 && opset < 11) {
        gl_fail(GL_ERR_INPUT, "%s: negative axis %lld needs opset 11", where, (long long)v);
        return false;
    }
    return gl_axis_normalize(v, rank, false, where, "axis", axis);
}

static gl_status concat_kernel(gl_kernel_ctx *k)
{
    if (k->n_inputs == 0)
        return gl_fail(GL_ERR_INPUT, "%s: no inputs", k->where);
    for (size_t i = 0; i < k->n_inputs; i++)
        if (!gl_need_input(k, i, "inputs"))
            return GL_ERR_INPUT;
    const gl_tensor *first = k->in[0];
    int axis;
    if (!concat_axis(k->node, k->opset, first->rank, k->where, &axis))
        return GL_ERR_INPUT;
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, first->dims, (size_t)first->rank * sizeof(int64_t));
    dims[axis] = 0;
    for (size_t i = 0; i < k->n_inputs; i++) {
        const gl_tensor *t = k->in[i];
        if (t->dtype != first->dtype || t->rank != first->rank)
            return gl_fail(GL_ERR_INPUT, "%s: input %zu is %s of rank %d, input 0 %s of rank "
                           "%d", k->where, i, gl_dtype_name(t->dtype), t->rank,
                           gl_dtype_name(first->dtype), first->rank);
        for (int d = 0; d < t->rank; d++)
            if (d != axis && t->dims[d] != first->dims[d])
                return gl_fail(GL_ERR_INPUT, "%s: input %zu has dim %d = %lld, input 0 %lld",
                               k->where, i, d, (long long)t->dims[d],
                               (long long)first->dims[d]);
        dims[axis] += t->dims[axis];
    }
    gl_tensor *y = gl_out_new(k, 0, first->dtype, first->rank, dims);
    if (!y)
        return GL_ERR_NOMEM;
    int64_t outer = gl_dims_product(dims, 0, axis), off = 0;
    int64_t inner = gl_dims_product(dims, axis + 1, first->rank);
    for (int64_t o = 0; o < outer; o++)
        for (size_t i = 0; i < k->n_inputs; i++) {
            int64_t block = k->in[i]->dims[axis] * inner;
            gl_copy_elems(y, off, k->in[i], o * block, block);
            off += block;
        }
    return GL_OK;
}

/* Merge dim `d` of another operand into `acc` (dims that must be equal): known values
 * win; two different known values are an error. */
static bool merge_equal_dim(gl_dim *acc, const gl_dim *d)
{
    if (d->value >= 0) {
        if (acc->value >= 0 && acc->value != d->value)
            return false;
        gl_dim_set(acc, d->value);
    } else if (acc->value < 0 && !acc->sym && d->sym) {
        gl_dim_set_sym(acc, d->sym);
    }
    return true;
}

static gl_status concat_infer(gl_infer_ctx *c)
{
    const gl_type *ref = NULL;
    bool all_ranked = c->n_inputs > 0;
    for (size_t i = 0; i < c->n_inputs; i++) {
        const gl_type *t = gl_infer_input(c, i);
        if (t && t->shape.rank != GL_RANK_UNKNOWN) {
            if (ref && ref->shape.rank != t->shape.rank)
                return gl_fail(GL_ERR_INPUT, "%s: input %zu has rank %d, another rank %d",
                               c->where, i, t->shape.rank, ref->shape.rank);
            if (!ref)
                ref = t;
        } else {
            all_ranked = false;
        }
    }
    const gl_type *any = ref ? ref : gl_infer_input(c, 0);
    if (!any)
        return GL_OK;
    if (!ref) {
        gl_infer_set_rank(c, 0, any->dtype, GL_RANK_UNKNOWN);
        return GL_OK;
    }
    int r = ref->shape.rank, axis;
    if (!concat_axis(c->node, c->opset, r, c->where, &axis))
        return GL_ERR_INPUT;
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, r);
    int64_t sum = 0;
    bool sum_known = all_ranked;
    for (size_t i = 0; i < c->n_inputs; i++) {
        const gl_type *t = gl_infer_input(c, i);
        if (!t || t->shape.rank == GL_RANK_UNKNOWN)
            continue;
        for (int d = 0; d < r; d++) {
            if (d == axis) {
                sum_known &= t->shape.dims[d].value >= 0;
                sum += t->shape.dims[d].value;
            } else if (!merge_equal_dim(&s.dims[d], &t->shape.dims[d])) {
                long long other = (long long)s.dims[d].value;
                gl_shape_free(&s);
                return gl_fail(GL_ERR_INPUT, "%s: input %zu has dim %d = %lld, another %lld",
                               c->where, i, d, (long long)t->shape.dims[d].value, other);
            }
        }
    }
    gl_dim_set(&s.dims[axis], sum_known ? sum : GL_DIM_UNKNOWN);
    set_out(c, 0, ref->dtype, &s);
    return GL_OK;
}

/* ==== Split =========================================================================== */

static bool split_axis(const gl_node *n, int64_t opset, int rank, const char *where, int *axis)
{
    int64_t a = gl_node_attr_int(n, "axis", 0);
    if (a < 0 && opset < 11) {
        gl_fail(GL_ERR_INPUT, "%s: negative axis %lld needs opset 11", where, (long long)a);
        return false;
    }
    return gl_axis_normalize(a, rank, false, where, "axis", axis);
}

/* Equal parts of dim for n outputs: from opset 18 (num_outputs) the last part may be
 * smaller; before, dim must divide evenly. */
static bool split_equal(int64_t dim, size_t n, int64_t opset, const char *where, int64_t *sizes)
{
    if (n == 0) {
        gl_fail(GL_ERR_INPUT, "%s: no outputs", where);
        return false;
    }
    int64_t part = (dim + (int64_t)n - 1) / (int64_t)n;
    if (opset < 18 && dim % (int64_t)n != 0) {
        gl_fail(GL_ERR_INPUT, "%s: dim %lld does not split into %zu equal parts", where,
                (long long)dim, n);
        return false;
    }
    for (size_t i = 0, left = (size_t)dim; i < n; i++) {
        sizes[i] = (size_t)part < left ? part : (int64_t)left;
        left -= (size_t)sizes[i];
    }
    return true;
}

static bool split_sizes_valid(const int64_t *sizes, size_t n, size_t n_out, int64_t dim,
                              const char *where)
{
    int64_t sum = 0;
    if (n != n_out) {
        gl_fail(GL_ERR_INPUT, "%s: 'split' has %zu entries for %zu outputs", where, n, n_out);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (sizes[i] < 0 || sizes[i] > INT64_MAX - sum) {
            gl_fail(GL_ERR_INPUT, "%s: 'split'[%zu] is %lld", where, i, (long long)sizes[i]);
            return false;
        }
        sum += sizes[i];
    }
    if (dim >= 0 && sum != dim) {
        gl_fail(GL_ERR_INPUT, "%s: 'split' sums to %lld, the axis has %lld", where,
                (long long)sum, (long long)dim);
        return false;
    }
    return true;
}

/* Explicit sizes from the attribute (before 13; opset 1 also as input 1). */
static bool split_attr_sizes(const gl_node *n, int64_t **sizes, size_t *count)
{
    const int64_t *a = gl_attr_ints(n, "split", count);
    if (!a)
        return false;
    *sizes = gl_xmalloc((*count ? *count : 1) * sizeof(int64_t));
    memcpy(*sizes, a, *count * sizeof(int64_t));
    return true;
}

static bool split_sizes_from_input(int64_t opset)
{
    return opset >= 13 || opset < 2;
}

static gl_status split_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input");
    int axis;
    if (!x || !split_axis(k->node, k->opset, x->rank, k->where, &axis))
        return GL_ERR_INPUT;
    size_t n_out = k->n_outputs, n = 0;
    int64_t *sizes = NULL, dim = x->dims[axis];
    bool given = false;
    if (k->opset < 13)
        given = split_attr_sizes(k->node, &sizes, &n);
    if (!given && split_sizes_from_input(k->opset) && gl_opt_input(k, 1)) {
        if (!in_ints(k, 1, "split", &sizes, &n))
            return GL_ERR_INPUT;
        given = true;
    }
    bool ok;
    if (given) {
        ok = split_sizes_valid(sizes, n, n_out, dim, k->where);
    } else {
        sizes = gl_xmalloc((n_out ? n_out : 1) * sizeof(int64_t));
        ok = split_equal(dim, n_out, k->opset, k->where, sizes);
    }
    int64_t outer = gl_dims_product(x->dims, 0, axis), off = 0;
    int64_t inner = gl_dims_product(x->dims, axis + 1, x->rank);
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof(int64_t));
    for (size_t i = 0; ok && i < n_out; off += sizes[i], i++) {
        if (!gl_out_wanted(k, i))
            continue;
        dims[axis] = sizes[i];
        gl_tensor *y = gl_out_new(k, i, x->dtype, x->rank, dims);
        if (!y) {
            ok = false;
            break;
        }
        int64_t block = sizes[i] * inner;
        for (int64_t o = 0; o < outer; o++)
            gl_copy_elems(y, o * block, x, (o * dim + off) * inner, block);
    }
    free(sizes);
    return ok ? GL_OK : GL_ERR_INPUT;
}

static gl_status split_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int r = x->shape.rank, axis;
    size_t n_out = c->n_outputs, n = 0;
    if (r == GL_RANK_UNKNOWN) {
        for (size_t i = 0; i < n_out; i++)
            gl_infer_set_rank(c, i, x->dtype, GL_RANK_UNKNOWN);
        return GL_OK;
    }
    if (!split_axis(c->node, c->opset, r, c->where, &axis))
        return GL_ERR_INPUT;
    int64_t *sizes = NULL;
    const gl_dim *dim = &x->shape.dims[axis];
    bool given = false, known = true;
    if (c->opset < 13)
        given = split_attr_sizes(c->node, &sizes, &n);
    if (!given && split_sizes_from_input(c->opset) && has_input(c, 1)) {
        given = true;
        known = gl_infer_const_ints(c, 1, &sizes, &n);
    }
    if (given && known && !split_sizes_valid(sizes, n, n_out, dim->value, c->where)) {
        free(sizes);
        return GL_ERR_INPUT;
    }
    if (!given && dim->value >= 0) {
        given = true;
        sizes = gl_xmalloc((n_out ? n_out : 1) * sizeof(int64_t));
        if (!split_equal(dim->value, n_out, c->opset, c->where, sizes)) {
            free(sizes);
            return GL_ERR_INPUT;
        }
    }
    for (size_t i = 0; i < n_out; i++) {
        gl_shape s;
        shape_dup(&s, &x->shape);
        if (given && known)
            gl_dim_set(&s.dims[axis], sizes[i]);
        else if (given || !dim_div(&s.dims[axis], dim, (int64_t)n_out))
            dim_unknown(&s.dims[axis]);
        set_out(c, i, x->dtype, &s);
    }
    free(sizes);
    return GL_OK;
}

/* ==== Slice =========================================================================== */

typedef struct slice_args {
    size_t n;
    int64_t *starts, *ends, *axes, *steps; /* malloc'd; axes/steps NULL: the defaults */
} slice_args;

static void slice_args_free(slice_args *a)
{
    free(a->starts);
    free(a->ends);
    free(a->axes);
    free(a->steps);
    memset(a, 0, sizeof(*a));
}

static int64_t *dup_ints(const int64_t *v, size_t n)
{
    int64_t *d = gl_xmalloc((n ? n : 1) * sizeof(int64_t));
    if (n)
        memcpy(d, v, n * sizeof(int64_t));
    return d;
}

/* Opset 1: attributes starts/ends (required) and axes. */
static bool slice_args_attrs(const gl_node *node, const char *where, slice_args *a)
{
    size_t ns, ne, na;
    const int64_t *s = gl_attr_ints(node, "starts", &ns), *e = gl_attr_ints(node, "ends", &ne);
    const int64_t *ax = gl_attr_ints(node, "axes", &na);
    if (!s || !e) {
        gl_fail(GL_ERR_INPUT, "%s: attributes 'starts' and 'ends' are required", where);
        return false;
    }
    a->n = ns;
    a->starts = dup_ints(s, ns);
    a->ends = dup_ints(e, ne);
    a->axes = ax ? dup_ints(ax, na) : NULL;
    if (ne != ns || (ax && na != ns)) {
        gl_fail(GL_ERR_INPUT, "%s: starts, ends and axes differ in length", where);
        return false;
    }
    return true;
}

static bool slice_lengths_agree(const slice_args *a, size_t ne, size_t na, size_t nst,
                                const char *where)
{
    if (ne != a->n || (a->axes && na != a->n) || (a->steps && nst != a->n)) {
        gl_fail(GL_ERR_INPUT, "%s: starts, ends, axes and steps differ in length", where);
        return false;
    }
    return true;
}

static bool slice_args_kernel(gl_kernel_ctx *k, slice_args *a)
{
    memset(a, 0, sizeof(*a));
    if (k->opset < 10)
        return slice_args_attrs(k->node, k->where, a);
    size_t ne = 0, na = 0, nst = 0;
    if (!in_ints(k, 1, "starts", &a->starts, &a->n) || !in_ints(k, 2, "ends", &a->ends, &ne))
        return false;
    if (gl_opt_input(k, 3) && !in_ints(k, 3, "axes", &a->axes, &na))
        return false;
    if (gl_opt_input(k, 4) && !in_ints(k, 4, "steps", &a->steps, &nst))
        return false;
    return slice_lengths_agree(a, ne, na, nst, k->where);
}

/* Normalized axis of each entry (distinct), steps non-zero. */
static bool slice_axes(const slice_args *a, int rank, const char *where, int *ax)
{
    bool seen[GL_MAX_RANK] = {false};
    for (size_t i = 0; i < a->n; i++) {
        int64_t want = a->axes ? a->axes[i] : (int64_t)i;
        if (!gl_axis_normalize(want, rank, false, where, "axis", &ax[i]))
            return false;
        if (seen[ax[i]]) {
            gl_fail(GL_ERR_INPUT, "%s: axis %lld is sliced twice", where, (long long)want);
            return false;
        }
        seen[ax[i]] = true;
        if (a->steps && a->steps[i] == 0) {
            gl_fail(GL_ERR_INPUT, "%s: step %zu is 0", where, i);
            return false;
        }
    }
    return true;
}

/* The spec's clamping: negative start/end count from the back; then for step > 0 both
 * are clamped to [0, dim], for step < 0 start to [0, dim-1] and end to [-1, dim-1].
 * *first is the first source index, *count the number taken. */
static void slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first,
                       int64_t *count)
{
    if (dim == 0) { /* [0, dim-1] is empty: nothing to take in either direction */
        *first = *count = 0;
        return;
    }
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    int64_t lo_s = 0, hi_s = step > 0 ? dim : dim - 1;
    int64_t lo_e = step > 0 ? 0 : -1, hi_e = step > 0 ? dim : dim - 1;
    start = start < lo_s ? lo_s : start > hi_s ? hi_s : start;
    end = end < lo_e ? lo_e : end > hi_e ? hi_e : end;
    int64_t span = step > 0 ? end - start : start - end;
    uint64_t mag = step > 0 ? (uint64_t)step : (uint64_t)(-(step + 1)) + 1;
    *count = span <= 0 ? 0 : (int64_t)((uint64_t)span / mag + ((uint64_t)span % mag != 0));
    *first = *count ? start : 0;
}

bool gl_slice_select(gl_kernel_ctx *k, const gl_tensor *x, int64_t *first, int64_t *count,
                     int64_t *step)
{
    slice_args a;
    int ax[GL_MAX_RANK];
    bool ok = false;
    if (!slice_args_kernel(k, &a))
        goto done;
    if (a.n > (size_t)x->rank) {
        gl_fail(GL_ERR_INPUT, "%s: %zu axes sliced in a rank-%d input", k->where, a.n, x->rank);
        goto done;
    }
    if (!slice_axes(&a, x->rank, k->where, ax))
        goto done;
    for (int d = 0; d < x->rank; d++) {
        first[d] = 0;
        count[d] = x->dims[d];
        step[d] = 1;
    }
    for (size_t i = 0; i < a.n; i++) {
        int d = ax[i];
        step[d] = a.steps ? a.steps[i] : 1;
        slice_axis(x->dims[d], a.starts[i], a.ends[i], step[d], &first[d], &count[d]);
    }
    ok = true;
done:
    slice_args_free(&a);
    return ok;
}

static gl_status slice_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data");
    int64_t first[GL_MAX_RANK], count[GL_MAX_RANK], step[GL_MAX_RANK];
    if (!x || !gl_slice_select(k, x, first, count, step))
        return GL_ERR_INPUT;
    view v;
    view_of(&v, x);
    int64_t in_strides[GL_MAX_RANK];
    memcpy(in_strides, v.strides, sizeof(int64_t) * (size_t)x->rank);
    for (int d = 0; d < x->rank; d++) {
        v.dims[d] = count[d];
        v.offset += first[d] * in_strides[d];
        v.strides[d] = count[d] > 1 ? in_strides[d] * step[d] : 0;
    }
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, v.dims);
    if (!y)
        return GL_ERR_NOMEM;
    view_copy(y, 0, x, &v);
    return GL_OK;
}

/* An end that means "to the end" in exporters' spelling (INT32_MAX, INT64_MAX...). */
#define SLICE_FAR ((int64_t)INT32_MAX)

/* The sliced dim when dim is not known: only the whole-axis forms keep it. */
static void slice_unknown_dim(gl_dim *out, const gl_dim *d, int64_t start, int64_t end,
                              int64_t step)
{
    bool whole_fwd = step == 1 && start == 0 && end >= SLICE_FAR;
    bool whole_back = step == -1 && (start == -1 || start >= SLICE_FAR) && end <= -SLICE_FAR;
    if (whole_fwd || whole_back)
        gl_dim_copy(out, d);
    else
        dim_unknown(out);
}

static gl_status slice_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int r = x->shape.rank, ax[GL_MAX_RANK];
    if (r == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
        return GL_OK;
    }
    slice_args a;
    memset(&a, 0, sizeof(a));
    bool values = true, axes_known = true;
    size_t n_axes = 0;
    if (c->opset < 10) {
        if (!slice_args_attrs(c->node, c->where, &a)) {
            slice_args_free(&a);
            return GL_ERR_INPUT;
        }
    } else {
        size_t ne = 0, nst = 0;
        values = gl_infer_const_ints(c, 1, &a.starts, &a.n) &&
                 gl_infer_const_ints(c, 2, &a.ends, &ne);
        if (has_input(c, 3))
            axes_known = gl_infer_const_ints(c, 3, &a.axes, &n_axes);
        if (has_input(c, 4))
            values &= gl_infer_const_ints(c, 4, &a.steps, &nst);
        if (values && axes_known && !slice_lengths_agree(&a, ne, n_axes, nst, c->where)) {
            slice_args_free(&a);
            return GL_ERR_INPUT;
        }
    }
    gl_shape s;
    shape_dup(&s, &x->shape);
    if (!axes_known || (!values && !a.axes)) {
        /* Which axes are sliced is not known: every dim may change. */
        for (int d = 0; d < r; d++)
            dim_unknown(&s.dims[d]);
    } else if (!values) {
        for (size_t i = 0; i < n_axes; i++) {
            int d;
            if (gl_axis_normalize(a.axes[i], r, false, c->where, "axis", &d))
                dim_unknown(&s.dims[d]);
        }
        gl_error_clear();
    } else {
        if (a.n > (size_t)r || !slice_axes(&a, r, c->where, ax)) {
            if (a.n > (size_t)r)
                gl_fail(GL_ERR_INPUT, "%s: %zu axes sliced in a rank-%d input", c->where, a.n,
                        r);
            gl_shape_free(&s);
            slice_args_free(&a);
            return GL_ERR_INPUT;
        }
        for (size_t i = 0; i < a.n; i++) {
            const gl_dim *d = &x->shape.dims[ax[i]];
            int64_t step = a.steps ? a.steps[i] : 1, first, count;
            if (d->value >= 0) {
                slice_axis(d->value, a.starts[i], a.ends[i], step, &first, &count);
                gl_dim_set(&s.dims[ax[i]], count);
            } else {
                slice_unknown_dim(&s.dims[ax[i]], d, a.starts[i], a.ends[i], step);
            }
        }
    }
    set_out(c, 0, x->dtype, &s);
    slice_args_free(&a);
    return GL_OK;
}

/* ==== Gather, GatherElements, GatherND ================================================ */

/* Advance a row-major odometer over dims, moving *off by strides[d] per step of d. */
static void odo_next(int rank, const int64_t *dims, const int64_t *strides, int64_t *idx,
                     int64_t *off)
{
    for (int d = rank - 1; d >= 0; d--) {
        *off += strides[d];
        if (++idx[d] < dims[d])
            return;
        *off -= strides[d] * dims[d];
        idx[d] = 0;
    }
}

/* Bring index *v (entry `pos` of input `what`) into [0, dim), negative counting from the
 * back; false with a message when it is outside [-dim, dim). */
static bool normalize_index(int64_t *v, int64_t dim, const char *where, const char *what,
                            int64_t pos)
{
    if (*v < -dim || *v >= dim) {
        gl_fail(GL_ERR_INPUT, "%s: %s[%lld] = %lld is out of range for a dim of %lld", where,
                what, (long long)pos, (long long)*v, (long long)dim);
        return false;
    }
    if (*v < 0)
        *v += dim;
    return true;
}

static bool index_input(gl_kernel_ctx *k, size_t i, int64_t **v, size_t *n)
{
    const gl_tensor *t = gl_need_input(k, i, "indices");
    if (t && t->dtype != GL_DT_INT32 && t->dtype != GL_DT_INT64) {
        gl_fail(GL_ERR_INPUT, "%s: 'indices' must be int32 or int64, not %s", k->where,
                gl_dtype_name(t->dtype));
        return false;
    }
    return t && gl_tensor_ints(t, k->where, "indices", v, n);
}

static bool attr_axis(const gl_node *n, int rank, const char *where, int *axis)
{
    return gl_axis_normalize(gl_node_attr_int(n, "axis", 0), rank, false, where, "axis", axis);
}

static gl_status gather_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data"), *ind = gl_opt_input(k, 1);
    int64_t *idx = NULL;
    size_t n;
    int axis;
    if (!x || !index_input(k, 1, &idx, &n))
        return GL_ERR_INPUT;
    gl_status st = GL_ERR_INPUT;
    if (x->rank == 0) {
        gl_fail(GL_ERR_INPUT, "%s: 'data' must have rank >= 1", k->where);
        goto done;
    }
    if (!attr_axis(k->node, x->rank, k->where, &axis))
        goto done;
    int64_t dim = x->dims[axis];
    for (size_t j = 0; j < n; j++)
        if (!normalize_index(&idx[j], dim, k->where, "indices", (int64_t)j))
            goto done;
    int r = x->rank - 1 + ind->rank;
    if (r > GL_MAX_RANK) {
        gl_fail(GL_ERR_INPUT, "%s: output rank %d exceeds %d", k->where, r, GL_MAX_RANK);
        goto done;
    }
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, x->dims, (size_t)axis * sizeof(int64_t));
    memcpy(dims + axis, ind->dims, (size_t)ind->rank * sizeof(int64_t));
    memcpy(dims + axis + ind->rank, x->dims + axis + 1,
           (size_t)(x->rank - axis - 1) * sizeof(int64_t));
    gl_tensor *y = gl_out_new(k, 0, x->dtype, r, dims);
    if (!y) {
        st = GL_ERR_NOMEM;
        goto done;
    }
    int64_t outer = gl_dims_product(x->dims, 0, axis);
    int64_t inner = gl_dims_product(x->dims, axis + 1, x->rank);
    for (int64_t o = 0; o < outer; o++)
        for (size_t j = 0; j < n; j++)
            gl_copy_elems(y, (o * (int64_t)n + (int64_t)j) * inner, x, (o * dim + idx[j]) * inner,
                          inner);
    st = GL_OK;
done:
    free(idx);
    return st;
}

static gl_status gather_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0), *ind = gl_infer_input(c, 1);
    int axis;
    if (!x)
        return GL_OK;
    if (x->shape.rank == GL_RANK_UNKNOWN || !ind || ind->shape.rank == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
        return GL_OK;
    }
    int xr = x->shape.rank, q = ind->shape.rank;
    if (xr == 0)
        return gl_fail(GL_ERR_INPUT, "%s: 'data' must have rank >= 1", c->where);
    if (!attr_axis(c->node, xr, c->where, &axis))
        return GL_ERR_INPUT;
    if (xr - 1 + q > GL_MAX_RANK)
        return gl_fail(GL_ERR_INPUT, "%s: output rank %d exceeds %d", c->where, xr - 1 + q,
                       GL_MAX_RANK);
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, xr - 1 + q);
    for (int d = 0; d < axis; d++)
        gl_dim_copy(&s.dims[d], &x->shape.dims[d]);
    for (int d = 0; d < q; d++)
        gl_dim_copy(&s.dims[axis + d], &ind->shape.dims[d]);
    for (int d = axis + 1; d < xr; d++)
        gl_dim_copy(&s.dims[q + d - 1], &x->shape.dims[d]);
    set_out(c, 0, x->dtype, &s);
    return GL_OK;
}

/* GatherElements/ScatterElements: data and indices of one rank; every dim of indices
 * off the axis within data's. */
static bool elements_shapes(const gl_tensor *x, const gl_tensor *ind, int axis,
                            const char *where)
{
    if (ind->rank != x->rank) {
        gl_fail(GL_ERR_INPUT, "%s: 'indices' has rank %d, 'data' rank %d", where, ind->rank,
                x->rank);
        return false;
    }
    for (int d = 0; d < x->rank; d++)
        if (d != axis && ind->dims[d] > x->dims[d]) {
            gl_fail(GL_ERR_INPUT, "%s: 'indices' dim %d (%lld) exceeds the data's (%lld)",
                    where, d, (long long)ind->dims[d], (long long)x->dims[d]);
            return false;
        }
    return true;
}

/* The data offset of each index of an Elements op (validated), into idx in place. */
static bool elements_offsets(const gl_tensor *x, const gl_tensor *ind, int axis, int64_t *idx,
                             const char *where)
{
    int64_t xs[GL_MAX_RANK], st[GL_MAX_RANK], pos[GL_MAX_RANK] = {0}, off = 0;
    gl_strides(x->dims, x->rank, xs);
    for (int d = 0; d < x->rank; d++)
        st[d] = d == axis ? 0 : xs[d];
    for (int64_t j = 0; j < ind->count; j++) {
        if (!normalize_index(&idx[j], x->dims[axis], where, "indices", j))
            return false;
        idx[j] = off + idx[j] * xs[axis];
        odo_next(ind->rank, ind->dims, st, pos, &off);
    }
    return true;
}

static gl_status gather_elements_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data"), *ind = gl_opt_input(k, 1);
    int64_t *idx = NULL;
    size_t n;
    int axis;
    if (!x || !index_input(k, 1, &idx, &n))
        return GL_ERR_INPUT;
    gl_status st = GL_ERR_INPUT;
    gl_tensor *y;
    if (x->rank == 0) {
        gl_fail(GL_ERR_INPUT, "%s: 'data' must have rank >= 1", k->where);
        goto done;
    }
    if (!attr_axis(k->node, x->rank, k->where, &axis) ||
        !elements_shapes(x, ind, axis, k->where) ||
        !elements_offsets(x, ind, axis, idx, k->where))
        goto done;
    if (!(y = gl_out_new(k, 0, x->dtype, ind->rank, ind->dims))) {
        st = GL_ERR_NOMEM;
        goto done;
    }
    for (size_t j = 0; j < n; j++)
        gl_copy_elems(y, (int64_t)j, x, idx[j], 1);
    st = GL_OK;
done:
    free(idx);
    return st;
}

static gl_status gather_elements_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0), *ind = gl_infer_input(c, 1);
    if (!x)
        return GL_OK;
    if (!ind) {
        gl_infer_set_rank(c, 0, x->dtype, x->shape.rank);
        return GL_OK;
    }
    if (x->shape.rank != GL_RANK_UNKNOWN && ind->shape.rank != GL_RANK_UNKNOWN &&
        x->shape.rank != ind->shape.rank)
        return gl_fail(GL_ERR_INPUT, "%s: 'indices' has rank %d, 'data' rank %d", c->where,
                       ind->shape.rank, x->shape.rank);
    gl_infer_set(c, 0, x->dtype, &ind->shape);
    return GL_OK;
}

/* GatherND/ScatterND geometry. */
typedef struct nd_geom {
    int b;          /* batch dims */
    int64_t kk;     /* index tuple length */
    int64_t batches, per_batch, tuples, slice; /* see gather_nd_kernel */
} nd_geom;

static bool nd_geometry(const gl_tensor *x, const gl_tensor *ind, int b, const char *where,
                        nd_geom *g)
{
    int r = x->rank, q = ind->rank;
    if (q < 1 || r < 1 || b < 0 || b >= q || b >= r) {
        gl_fail(GL_ERR_INPUT, "%s: ranks %d (data) and %d (indices) with batch_dims %d are "
                "invalid", where, r, q, b);
        return false;
    }
    g->b = b;
    g->kk = ind->dims[q - 1];
    if (g->kk > r - b) {
        gl_fail(GL_ERR_INPUT, "%s: index tuples of %lld entries for %d dims", where,
                (long long)g->kk, r - b);
        return false;
    }
    for (int d = 0; d < b; d++)
        if (ind->dims[d] != x->dims[d]) {
            gl_fail(GL_ERR_INPUT, "%s: batch dim %d differs: %lld (indices), %lld (data)",
                    where, d, (long long)ind->dims[d], (long long)x->dims[d]);
            return false;
        }
    g->batches = gl_dims_product(x->dims, 0, b);
    g->per_batch = gl_dims_product(x->dims, b, r);
    g->tuples = gl_dims_product(ind->dims, b, q - 1);
    g->slice = gl_dims_product(x->dims, b + (int)g->kk, r);
    return true;
}

/* Offsets (within the batch block) of each index tuple, in place into off[]. */
static bool nd_offsets(const gl_tensor *x, const nd_geom *g, const int64_t *idx, int64_t n_tuples,
                       int64_t *off, const char *where)
{
    int64_t xs[GL_MAX_RANK];
    gl_strides(x->dims, x->rank, xs);
    for (int64_t j = 0; j < n_tuples; j++) {
        int64_t o = 0;
        for (int64_t t = 0; t < g->kk; t++) {
            int64_t v = idx[j * g->kk + t];
            if (!normalize_index(&v, x->dims[g->b + t], where, "indices", j * g->kk + t))
                return false;
            o += v * xs[g->b + t];
        }
        off[j] = o;
    }
    return true;
}

static gl_status gather_nd_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data"), *ind = gl_opt_input(k, 1);
    int64_t *idx = NULL, *off = NULL;
    size_t n;
    nd_geom g;
    if (!x || !index_input(k, 1, &idx, &n))
        return GL_ERR_INPUT;
    int b = k->opset >= 12 ? (int)gl_node_attr_int(k->node, "batch_dims", 0) : 0;
    gl_status st = GL_ERR_INPUT;
    if (!nd_geometry(x, ind, b, k->where, &g))
        goto done;
    int64_t all = g.batches * g.tuples;
    off = gl_xmalloc((size_t)(all ? all : 1) * sizeof(int64_t));
    if (!nd_offsets(x, &g, idx, all, off, k->where))
        goto done;
    int r = ind->rank - 1 + x->rank - b - (int)g.kk;
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, ind->dims, (size_t)(ind->rank - 1) * sizeof(int64_t));
    memcpy(dims + ind->rank - 1, x->dims + b + g.kk,
           (size_t)(x->rank - b - g.kk) * sizeof(int64_t));
    gl_tensor *y = gl_out_new(k, 0, x->dtype, r, dims);
    if (!y) {
        st = GL_ERR_NOMEM;
        goto done;
    }
    for (int64_t bi = 0; bi < g.batches; bi++)
        for (int64_t j = 0; j < g.tuples; j++) {
            int64_t t = bi * g.tuples + j;
            gl_copy_elems(y, t * g.slice, x, bi * g.per_batch + off[t], g.slice);
        }
    st = GL_OK;
done:
    free(idx);
    free(off);
    return st;
}

static gl_status gather_nd_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0), *ind = gl_infer_input(c, 1);
    if (!x)
        return GL_OK;
    int b = c->opset >= 12 ? (int)gl_node_attr_int(c->node, "batch_dims", 0) : 0;
    int r = x->shape.rank, q = ind ? ind->shape.rank : GL_RANK_UNKNOWN;
    int64_t kk = q >= 1 ? ind->shape.dims[q - 1].value : -1;
    if (r == GL_RANK_UNKNOWN || q == GL_RANK_UNKNOWN || kk < 0) {
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
        return GL_OK;
    }
    if (q < 1 || r < 1 || b < 0 || b >= q || b >= r || kk > r - b)
        return gl_fail(GL_ERR_INPUT, "%s: ranks %d (data) and %d (indices) with batch_dims %d "
                       "and tuples of %lld are invalid", c->where, r, q, b, (long long)kk);
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, q - 1 + r - b - (int)kk);
    for (int d = 0; d < q - 1; d++)
        gl_dim_copy(&s.dims[d], &ind->shape.dims[d]);
    for (int d = b + (int)kk; d < r; d++)
        gl_dim_copy(&s.dims[q - 1 + d - b - (int)kk], &x->shape.dims[d]);
    set_out(c, 0, x->dtype, &s);
    return GL_OK;
}

/* ==== Scatter, ScatterElements, ScatterND ============================================= */

static bool same_dims(const gl_tensor *a, const gl_tensor *b)
{
    return a->rank == b->rank &&
           memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(int64_t)) == 0;
}

static gl_status scatter_elements_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data"), *ind = gl_opt_input(k, 1);
    const gl_tensor *upd = gl_need_input(k, 2, "updates");
    int64_t *idx = NULL;
    size_t n;
    int axis;
    reduction red = RED_NONE;
    if (!x || !upd || !index_input(k, 1, &idx, &n))
        return GL_ERR_INPUT;
    gl_status st = GL_ERR_INPUT;
    gl_tensor *y;
    if (x->rank == 0 || !same_dims(ind, upd) || upd->dtype != x->dtype) {
        gl_fail(GL_ERR_INPUT, "%s: 'updates' must have the shape of 'indices' and the type "
                "of 'data' (rank >= 1)", k->where);
        goto done;
    }
    if ((st = parse_reduction(k->node, k->opset, k->where, &red)))
        goto done;
    st = GL_ERR_INPUT;
    if (red != RED_NONE && x->dtype == GL_DT_STRING) {
        gl_fail(GL_ERR_INPUT, "%s: a reduction needs numbers, not strings", k->where);
        goto done;
    }
    if (!attr_axis(k->node, x->rank, k->where, &axis) ||
        !elements_shapes(x, ind, axis, k->where) ||
        !elements_offsets(x, ind, axis, idx, k->where))
        goto done;
    if (!(y = out_copy(k, 0, x))) {
        st = GL_ERR_NOMEM;
        goto done;
    }
    for (size_t j = 0; j < n; j++)
        combine(y, idx[j], upd, (int64_t)j, red);
    st = GL_OK;
done:
    free(idx);
    return st;
}

static gl_status scatter_nd_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data"), *ind = gl_opt_input(k, 1);
    const gl_tensor *upd = gl_need_input(k, 2, "updates");
    int64_t *idx = NULL, *off = NULL;
    size_t n;
    nd_geom g;
    reduction red = RED_NONE;
    if (!x || !upd || !index_input(k, 1, &idx, &n))
        return GL_ERR_INPUT;
    gl_status st = parse_reduction(k->node, k->opset, k->where, &red);
    gl_tensor *y;
    if (st)
        goto done;
    st = GL_ERR_INPUT;
    if (!nd_geometry(x, ind, 0, k->where, &g))
        goto done;
    /* updates: indices.shape[:-1] + data.shape[kk:] */
    int ur = ind->rank - 1 + x->rank - (int)g.kk;
    bool ok = upd->rank == ur && upd->dtype == x->dtype;
    for (int d = 0, q1 = ind->rank - 1; ok && d < ur; d++)
        ok = upd->dims[d] == (d < q1 ? ind->dims[d] : x->dims[g.kk + d - q1]);
    if (!ok || (red != RED_NONE && x->dtype == GL_DT_STRING)) {
        gl_fail(GL_ERR_INPUT, "%s: 'updates' must be %s of shape indices.shape[:-1] + "
                "data.shape[%lld:]", k->where, gl_dtype_name(x->dtype), (long long)g.kk);
        goto done;
    }
    off = gl_xmalloc((size_t)(g.tuples ? g.tuples : 1) * sizeof(int64_t));
    if (!nd_offsets(x, &g, idx, g.tuples, off, k->where))
        goto done;
    if (!(y = out_copy(k, 0, x))) {
        st = GL_ERR_NOMEM;
        goto done;
    }
    for (int64_t j = 0; j < g.tuples; j++) {
        if (red == RED_NONE)
            gl_copy_elems(y, off[j], upd, j * g.slice, g.slice);
        else
            for (int64_t e = 0; e < g.slice; e++)
                combine(y, off[j] + e, upd, j * g.slice + e, red);
    }
    st = GL_OK;
done:
    free(idx);
    free(off);
    return st;
}

/* Scatter* output: the data's type. */
static gl_status scatter_infer(gl_infer_ctx *c) { return gl_infer_like_input(c, 0, 0); }

/* ==== Pad ============================================================================= */

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;

static bool parse_pad_mode(const gl_node *n, int64_t opset, const char *where, pad_mode *m)
{
    static const char *const names[] = {"constant", "reflect", "edge", "wrap"};
    const char *s = gl_node_attr_string(n, "mode", "constant");
    size_t allowed = opset >= 19 ? 4 : 3;
    for (size_t i = 0; i < allowed; i++)
        if (strcmp(s, names[i]) == 0) {
            *m = (pad_mode)i;
            return true;
        }
    gl_fail(GL_ERR_INPUT, "%s: mode '%s' is not supported", where, s);
    return false;
}

/* Attribute pads before opset 11 ("paddings" in opset 1). */
static const int64_t *pad_attr(const gl_node *n, int64_t opset, size_t *count)
{
    return gl_attr_ints(n, opset < 2 ? "paddings" : "pads", count);
}

/* Expand pads given for `axes` (opset 18 input 3; NULL: all dims) into begin/end per
 * dim of a rank-`rank` input. */
static bool pads_full(const int64_t *pads, size_t n, const int64_t *axes, size_t n_axes,
                      int rank, const char *where, int64_t *begin, int64_t *end)
{
    size_t na = axes ? n_axes : (size_t)rank;
    if (n != 2 * na) {
        gl_fail(GL_ERR_INPUT, "%s: 'pads' has %zu entries, expected %zu", where, n, 2 * na);
        return false;
    }
    memset(begin, 0, sizeof(int64_t) * (size_t)rank);
    memset(end, 0, sizeof(int64_t) * (size_t)rank);
    bool seen[GL_MAX_RANK] = {false};
    for (size_t i = 0; i < na; i++) {
        int d = (int)i;
        if (axes && !gl_axis_normalize(axes[i], rank, false, where, "axis", &d))
            return false;
        if (seen[d]) {
            gl_fail(GL_ERR_INPUT, "%s: axis %d is padded twice", where, d);
            return false;
        }
        seen[d] = true;
        begin[d] = pads[i];
        end[d] = pads[na + i];
        if (begin[d] < -(INT64_MAX / 4) || begin[d] > INT64_MAX / 4 ||
            end[d] < -(INT64_MAX / 4) || end[d] > INT64_MAX / 4) {
            gl_fail(GL_ERR_INPUT, "%s: pads of axis %d are absurd", where, d);
            return false;
        }
    }
    return true;
}

/* Source index of output index o on an axis of `dim` padded by `begin`; -1: the
 * constant. */
static int64_t pad_source(int64_t o, int64_t begin, int64_t dim, pad_mode m)
{
    int64_t i = o - begin;
    if (i >= 0 && i < dim)
        return i;
    switch (m) {
    case PAD_EDGE:
        return i < 0 ? 0 : dim - 1;
    case PAD_WRAP:
        return ((i % dim) + dim) % dim;
    case PAD_REFLECT: {
        if (dim == 1)
            return 0;
        int64_t period = 2 * (dim - 1), p = ((i % period) + period) % period;
        return p < dim ? p : period - p;
    }
    default:
        return -1;
    }
}

static gl_status pad_run(gl_kernel_ctx *k, const gl_tensor *x, const int64_t *begin,
                         const int64_t *end, pad_mode mode, const gl_tensor *fv)
{
    int r = x->rank;
    int64_t dims[GL_MAX_RANK], xs[GL_MAX_RANK];
    for (int d = 0; d < r; d++) {
        dims[d] = x->dims[d] + begin[d] + end[d];
        if (dims[d] < 0)
            return gl_fail(GL_ERR_INPUT, "%s: pads make axis %d negative (%lld)", k->where, d,
                           (long long)dims[d]);
        if (mode != PAD_CONSTANT && x->dims[d] == 0 && dims[d] > 0)
            return gl_fail(GL_ERR_INPUT, "%s: cannot pad the empty axis %d in this mode",
                           k->where, d);
    }
    gl_tensor *y = gl_out_new(k, 0, x->dtype, r, dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (y->count == 0)
        return GL_OK;
    if (r == 0) {
        gl_copy_elems(y, 0, x, 0, 1);
        return GL_OK;
    }
    gl_strides(x->dims, r, xs);
    /* map[d][o]: the source index along d of output index o (-1: the constant) */
    int64_t total = 0, *maps[GL_MAX_RANK];
    for (int d = 0; d < r; d++)
        total += dims[d];
    int64_t *store = gl_xmalloc((size_t)total * sizeof(int64_t));
    int64_t at = 0;
    for (int d = 0; d < r; at += dims[d], d++) {
        maps[d] = store + at;
        for (int64_t o = 0; o < dims[d]; o++)
            maps[d][o] = pad_source(o, begin[d], x->dims[d], mode);
    }
    int64_t inner = dims[r - 1], pos[GL_MAX_RANK] = {0};
    const int64_t *last = maps[r - 1];
    for (int64_t di = 0; di < y->count; di += inner) {
        int64_t base = 0;
        bool constant_row = false;
        for (int d = 0; d < r - 1; d++) {
            int64_t m = maps[d][pos[d]];
            constant_row |= m < 0;
            base += m * xs[d];
        }
        if (constant_row) {
            fill_run(y, di, fv, 0, inner);
        } else {
            for (int64_t j = 0; j < inner;) {
                int64_t m = last[j], len = 1;
                if (m < 0) {
                    while (j + len < inner && last[j + len] < 0)
                        len++;
                    fill_run(y, di + j, fv, 0, len);
                } else {
                    while (j + len < inner && last[j + len] == m + len)
                        len++;
                    gl_copy_elems(y, di + j, x, base + m, len);
                }
                j += len;
            }
        }
        for (int d = r - 2; d >= 0; d--) {
            if (++pos[d] < dims[d])
                break;
            pos[d] = 0;
        }
    }
    free(store);
    return GL_OK;
}

static gl_status pad_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "data");
    pad_mode mode;
    if (!x || !parse_pad_mode(k->node, k->opset, k->where, &mode))
        return GL_ERR_INPUT;
    int64_t *pads = NULL, *axes = NULL, begin[GL_MAX_RANK], end[GL_MAX_RANK];
    size_t n = 0, n_axes = 0;
    gl_tensor *fv = gl_tensor_new(x->dtype, 0, NULL);
    gl_status st = GL_ERR_INPUT;
    if (!fv)
        return GL_ERR_NOMEM;
    if (k->opset < 11) {
        const int64_t *a = pad_attr(k->node, k->opset, &n);
        if (!a) {
            gl_fail(GL_ERR_INPUT, "%s: attribute 'pads' is missing", k->where);
            goto done;
        }
        pads = dup_ints(a, n);
        if (x->dtype != GL_DT_STRING)
            gl_elem_set_f64(fv, 0, gl_node_attr_float(k->node, "value", 0.0f));
    } else {
        if (!in_ints(k, 1, "pads", &pads, &n))
            goto done;
        const gl_tensor *v = gl_opt_input(k, 2);
        if (v) {
            if (v->dtype != x->dtype || v->count != 1) {
                gl_fail(GL_ERR_INPUT, "%s: 'constant_value' must be one %s", k->where,
                        gl_dtype_name(x->dtype));
                goto done;
            }
            gl_copy_elems(fv, 0, v, 0, 1);
        }
        if (gl_opt_input(k, 3) && !in_ints(k, 3, "axes", &axes, &n_axes))
            goto done;
    }
    if (!pads_full(pads, n, axes, n_axes, x->rank, k->where, begin, end))
        goto done;
    st = pad_run(k, x, begin, end, mode, fv);
done:
    free(pads);
    free(axes);
    gl_tensor_free(fv);
    return st;
}

static gl_status pad_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    pad_mode mode;
    if (!x)
        return GL_OK;
    if (!parse_pad_mode(c->node, c->opset, c->where, &mode))
        return GL_ERR_INPUT;
    int r = x->shape.rank;
    int64_t *pads = NULL, *axes = NULL, begin[GL_MAX_RANK], end[GL_MAX_RANK];
    size_t n = 0, n_axes = 0;
    bool known;
    if (c->opset < 11) {
        const int64_t *a = pad_attr(c->node, c->opset, &n);
        if (!a)
            return gl_fail(GL_ERR_INPUT, "%s: attribute 'pads' is missing", c->where);
        pads = dup_ints(a, n);
        known = true;
    } else {
        known = gl_infer_const_ints(c, 1, &pads, &n);
        if (has_input(c, 3))
            known &= gl_infer_const_ints(c, 3, &axes, &n_axes);
    }
    gl_status st = GL_OK;
    if (r == GL_RANK_UNKNOWN || !known) {
        gl_infer_set_rank(c, 0, x->dtype, r);
        goto done;
    }
    if (!pads_full(pads, n, axes, n_axes, r, c->where, begin, end)) {
        st = GL_ERR_INPUT;
        goto done;
    }
    gl_shape s;
    shape_dup(&s, &x->shape);
    for (int d = 0; d < r; d++) {
        int64_t v = x->shape.dims[d].value, grow = begin[d] + end[d];
        if (v >= 0 && v + grow < 0) {
            gl_shape_free(&s);
            st = gl_fail(GL_ERR_INPUT, "%s: pads make axis %d negative (%lld)", c->where, d,
                         (long long)(v + grow));
            goto done;
        }
        if (v >= 0)
            gl_dim_set(&s.dims[d], v + grow);
        else if (grow != 0)
            dim_unknown(&s.dims[d]);
    }
    set_out(c, 0, x->dtype, &s);
done:
    free(pads);
    free(axes);
    return st;
}

/* ==== Tile ============================================================================ */

/* repeats per dim: input 1 (opset 6), or tiles/axis scalar inputs (opset 1). */
static bool tile_repeats(gl_kernel_ctx *k, int rank, int64_t *reps)
{
    if (k->opset < 6) {
        int64_t tiles, axis;
        int a;
        if (!in_scalar_int(k, 1, "tiles", &tiles) || !in_scalar_int(k, 2, "axis", &axis) ||
            !gl_axis_normalize(axis, rank, false, k->where, "axis", &a))
            return false;
        for (int d = 0; d < rank; d++)
            reps[d] = d == a ? tiles : 1;
    } else {
        int64_t *v;
        size_t n;
        if (!in_ints(k, 1, "repeats", &v, &n))
            return false;
        bool ok = (int64_t)n == rank;
        if (ok)
            memcpy(reps, v, n * sizeof(int64_t));
        free(v);
        if (!ok) {
            gl_fail(GL_ERR_INPUT, "%s: 'repeats' has %zu entries for rank %d", k->where, n,
                    rank);
            return false;
        }
    }
    for (int d = 0; d < rank; d++)
        if (reps[d] < 0) {
            gl_fail(GL_ERR_INPUT, "%s: repeat %d is negative (%lld)", k->where, d,
                    (long long)reps[d]);
            return false;
        }
    return true;
}

static gl_status tile_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input");
    int64_t reps[GL_MAX_RANK], dims[GL_MAX_RANK], xs[GL_MAX_RANK];
    if (!x || !tile_repeats(k, x->rank, reps))
        return GL_ERR_INPUT;
    /* Output index along d is rep * dim + i: a view of 2*rank dims (rep, i) with stride
     * 0 on the repeat. */
    view v = {.rank = 2 * x->rank};
    gl_strides(x->dims, x->rank, xs);
    for (int d = 0; d < x->rank; d++) {
        if (!mul_i64(x->dims[d], reps[d], &dims[d]))
            return gl_fail(GL_ERR_INPUT, "%s: tiled axis %d overflows", k->where, d);
        v.dims[2 * d] = reps[d];
        v.strides[2 * d] = 0;
        v.dims[2 * d + 1] = x->dims[d];
        v.strides[2 * d + 1] = xs[d];
    }
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, dims);
    if (!y)
        return GL_ERR_NOMEM;
    view_copy(y, 0, x, &v);
    return GL_OK;
}

static gl_status tile_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int r = x->shape.rank;
    int64_t *reps = NULL;
    size_t n = 0;
    bool known = c->opset >= 6 && gl_infer_const_ints(c, 1, &reps, &n);
    if (r == GL_RANK_UNKNOWN || !known) {
        gl_infer_set_rank(c, 0, x->dtype, r);
        free(reps);
        return GL_OK;
    }
    gl_status st = GL_OK;
    if ((int64_t)n != r) {
        st = gl_fail(GL_ERR_INPUT, "%s: 'repeats' has %zu entries for rank %d", c->where, n, r);
    } else {
        gl_shape s;
        shape_dup(&s, &x->shape);
        for (int d = 0; d < r && !st; d++) {
            if (reps[d] < 0)
                st = gl_fail(GL_ERR_INPUT, "%s: repeat %d is negative (%lld)", c->where, d,
                             (long long)reps[d]);
            else
                dim_mul(&s.dims[d], &x->shape.dims[d], reps[d]);
        }
        if (!st)
            set_out(c, 0, x->dtype, &s);
        gl_shape_free(&s);
    }
    free(reps);
    return st;
}

/* ==== Expand ========================================================================== */

static gl_status expand_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input");
    int64_t *shape;
    size_t n;
    if (!x || !in_ints(k, 1, "shape", &shape, &n))
        return GL_ERR_INPUT;
    gl_status st = GL_ERR_INPUT;
    if (!dims_from_vector(shape, n, k->where, "shape"))
        goto done;
    int r = x->rank > (int)n ? x->rank : (int)n;
    view v = {.rank = r};
    int64_t xs[GL_MAX_RANK];
    gl_strides(x->dims, x->rank, xs);
    for (int d = 0; d < r; d++) {
        int xd = d - (r - x->rank), sd = d - (r - (int)n);
        int64_t a = xd >= 0 ? x->dims[xd] : 1, b = sd >= 0 ? shape[sd] : 1;
        if (a != b && a != 1 && b != 1) {
            gl_fail(GL_ERR_INPUT, "%s: input dim %lld does not expand to %lld", k->where,
                    (long long)a, (long long)b);
            goto done;
        }
        v.dims[d] = a == 1 ? b : a;
        v.strides[d] = a == 1 ? 0 : xs[xd];
    }
    gl_tensor *y = gl_out_new(k, 0, x->dtype, r, v.dims);
    if (!y) {
        st = GL_ERR_NOMEM;
        goto done;
    }
    view_copy(y, 0, x, &v);
    st = GL_OK;
done:
    free(shape);
    return st;
}

/* One output dim of Expand from input dim a and requested value b (b < 0: unknown). */
static bool expand_dim(gl_dim *out, const gl_dim *a, int64_t b)
{
    if (b < 0) {
        /* unknown request: a known a > 1 (or 0) must stay */
        if (a->value >= 0 && a->value != 1)
            gl_dim_set(out, a->value);
        else
            dim_unknown(out);
        return true;
    }
    if (b == 1 || (a->value >= 0 && a->value == b)) {
        gl_dim_copy(out, a);
        return true;
    }
    if (a->value == 1 || a->value < 0) {
        gl_dim_set(out, b); /* a symbol must be 1 or b: either way b */
        return true;
    }
    return false;
}

static gl_status expand_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int64_t *shape = NULL;
    size_t n = 0;
    bool known = gl_infer_const_ints(c, 1, &shape, &n);
    int64_t len = known ? (int64_t)n : vector_len(c, 1);
    int xr = x->shape.rank;
    if (xr == GL_RANK_UNKNOWN || len < 0 || len > GL_MAX_RANK) {
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
        free(shape);
        return GL_OK;
    }
    int r = xr > (int)len ? xr : (int)len;
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, r);
    gl_dim one = {.value = 1, .sym = NULL};
    for (int d = 0; d < r; d++) {
        int xd = d - (r - xr), sd = d - (r - (int)len);
        const gl_dim *a = xd >= 0 ? &x->shape.dims[xd] : &one;
        int64_t b = sd < 0 ? 1 : known ? shape[sd] : -1;
        if (known && sd >= 0 && shape[sd] < 0) {
            gl_shape_free(&s);
            free(shape);
            return gl_fail(GL_ERR_INPUT, "%s: 'shape'[%d] is negative", c->where, sd);
        }
        if (!expand_dim(&s.dims[d], a, b)) {
            gl_shape_free(&s);
            free(shape);
            return gl_fail(GL_ERR_INPUT, "%s: input dim %lld does not expand to %lld",
                           c->where, (long long)a->value, (long long)b);
        }
    }
    set_out(c, 0, x->dtype, &s);
    free(shape);
    return GL_OK;
}

/* ==== Range =========================================================================== */

static bool range_operands(const gl_tensor *const *t, const char *where)
{
    static const char *const names[] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; i++) {
        if (!t[i] || t[i]->count != 1 || t[i]->dtype != t[0]->dtype ||
            (!gl_dtype_is_int(t[i]->dtype) && !gl_dtype_is_float(t[i]->dtype))) {
            gl_fail(GL_ERR_INPUT, "%s: '%s' must be one number of the type of 'start'", where,
                    names[i]);
            return false;
        }
    }
    return true;
}

/* max(ceil((limit - start) / delta), 0), exactly for integers. */
static bool range_count(const gl_tensor *const *t, const char *where, int64_t *n)
{
    if (!range_operands(t, where))
        return false;
    if (gl_dtype_is_float(t[0]->dtype)) {
        double a = gl_elem_f64(t[0], 0), b = gl_elem_f64(t[1], 0), d = gl_elem_f64(t[2], 0);
        double q = ceil((b - a) / d);
        if (d == 0 || isnan(q) || q > 9.0e15) {
            gl_fail(GL_ERR_INPUT, "%s: delta %g from %g to %g gives no usable count", where, d,
                    a, b);
            return false;
        }
        *n = q > 0 ? (int64_t)q : 0;
        return true;
    }
    int64_t a = gl_elem_i64(t[0], 0), b = gl_elem_i64(t[1], 0), d = gl_elem_i64(t[2], 0);
    if (d == 0) {
        gl_fail(GL_ERR_INPUT, "%s: 'delta' is 0", where);
        return false;
    }
    uint64_t span = d > 0 ? (b > a ? (uint64_t)b - (uint64_t)a : 0)
                          : (a > b ? (uint64_t)a - (uint64_t)b : 0);
    uint64_t step = d > 0 ? (uint64_t)d : (uint64_t)(-(d + 1)) + 1;
    uint64_t q = span / step + (span % step != 0);
    *n = q > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)q;
    return true;
}

static gl_status range_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *t[3] = {gl_opt_input(k, 0), gl_opt_input(k, 1), gl_opt_input(k, 2)};
    int64_t n;
    if (!range_count(t, k->where, &n))
        return GL_ERR_INPUT;
    gl_tensor *y = gl_out_new(k, 0, t[0]->dtype, 1, &n);
    if (!y)
        return GL_ERR_NOMEM;
    if (n == 0)
        return GL_OK; /* an empty tensor has no buffer to write through */
    if (y->dtype == GL_DT_FLOAT) {
        double a = gl_elem_f64(t[0], 0), d = gl_elem_f64(t[2], 0);
        float *p = y->buf->data;
        for (int64_t i = 0; i < n; i++)
            p[i] = (float)(a + (double)i * d);
    } else if (gl_dtype_is_float(y->dtype)) {
        double a = gl_elem_f64(t[0], 0), d = gl_elem_f64(t[2], 0);
        for (int64_t i = 0; i < n; i++)
            gl_elem_set_f64(y, i, a + (double)i * d);
    } else {
        uint64_t a = (uint64_t)gl_elem_i64(t[0], 0), d = (uint64_t)gl_elem_i64(t[2], 0);
        for (int64_t i = 0; i < n; i++)
            gl_elem_set_i64(y, i, (int64_t)(a + (uint64_t)i * d));
    }
    return GL_OK;
}

static gl_status range_infer(gl_infer_ctx *c)
{
    const gl_type *s = gl_infer_input(c, 0);
    if (!s)
        return GL_OK;
    const gl_tensor *t[3] = {NULL, NULL, NULL};
    bool all = c->in_values != NULL;
    for (size_t i = 0; i < 3 && all; i++)
        all = i < c->n_inputs && (t[i] = c->in_values[i]) != NULL;
    int64_t n = GL_DIM_UNKNOWN;
    if (all && !range_count(t, c->where, &n))
        return GL_ERR_INPUT;
    set_out_dims(c, 0, s->dtype, 1, &n);
    return GL_OK;
}

/* ==== NonZero ========================================================================= */

static bool elem_nonzero(const gl_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case GL_DT_FLOAT: return ((const float *)t->buf->data)[i] != 0;
    case GL_DT_BOOL:
    case GL_DT_UINT8:
    case GL_DT_INT8: return ((const uint8_t *)t->buf->data)[i] != 0;
    default:
        return gl_dtype_is_float(t->dtype) ? gl_elem_f64(t, i) != 0 : gl_elem_i64(t, i) != 0;
    }
}

static gl_status nonzero_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "X");
    if (!x)
        return GL_ERR_INPUT;
    if (x->dtype == GL_DT_STRING || x->dtype == GL_DT_COMPLEX64 || x->dtype == GL_DT_COMPLEX128)
        return gl_fail(GL_ERR_INPUT, "%s: NonZero of %s", k->where, gl_dtype_name(x->dtype));
    int64_t nnz = 0;
    for (int64_t i = 0; i < x->count; i++)
        nnz += elem_nonzero(x, i);
    /* A scalar counts as a one-element vector, as numpy does. */
    int r = x->rank ? x->rank : 1;
    int64_t dims[2] = {r, nnz}, one = 1;
    const int64_t *xd = x->rank ? x->dims : &one;
    gl_tensor *y = gl_out_new(k, 0, GL_DT_INT64, 2, dims);
    if (!y)
        return GL_ERR_NOMEM;
    int64_t *out = y->buf ? y->buf->data : NULL, pos[GL_MAX_RANK] = {0}, col = 0;
    for (int64_t i = 0; i < x->count; i++) {
        if (elem_nonzero(x, i)) {
            for (int d = 0; d < r; d++)
                out[d * nnz + col] = pos[d];
            col++;
        }
        gl_odometer_next(pos, xd, r);
    }
    return GL_OK;
}

static gl_status nonzero_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int64_t dims[2] = {x->shape.rank == GL_RANK_UNKNOWN ? GL_DIM_UNKNOWN
                                                         : x->shape.rank ? x->shape.rank : 1,
                       GL_DIM_UNKNOWN};
    set_out_dims(c, 0, GL_DT_INT64, 2, dims);
    return GL_OK;
}

/* ==== Compress ======================================================================== */

/* axis (absent: the flattened input), negative from opset 11. has_axis false: none. */
static bool compress_axis(const gl_node *n, int64_t opset, int rank, const char *where,
                          bool *has_axis, int *axis)
{
    const gl_attr *a = gl_node_attr_typed(n, "axis", GL_ATTR_INT);
    *has_axis = a != NULL;
    if (!a)
        return true;
    if (a->i < 0 && opset < 11) {
        gl_fail(GL_ERR_INPUT, "%s: negative axis %lld needs opset 11", where, (long long)a->i);
        return false;
    }
    return gl_axis_normalize(a->i, rank, false, where, "axis", axis);
}

/* Number of selected entries; entries past `dim` must be false. */
static bool compress_count(const gl_tensor *cond, int64_t dim, const char *where, int64_t *n)
{
    if (cond->rank != 1 || cond->dtype == GL_DT_STRING) {
        gl_fail(GL_ERR_INPUT, "%s: 'condition' must be a 1-D bool tensor", where);
        return false;
    }
    *n = 0;
    for (int64_t j = 0; j < cond->count; j++) {
        if (!elem_nonzero(cond, j))
            continue;
        if (j >= dim) {
            gl_fail(GL_ERR_INPUT, "%s: 'condition'[%lld] selects past the axis (%lld)", where,
                    (long long)j, (long long)dim);
            return false;
        }
        (*n)++;
    }
    return true;
}

static gl_status compress_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input"), *cond = gl_need_input(k, 1, "condition");
    bool has_axis;
    int axis = 0;
    if (!x || !cond || !compress_axis(k->node, k->opset, x->rank, k->where, &has_axis, &axis))
        return GL_ERR_INPUT;
    int64_t dim = has_axis ? x->dims[axis] : x->count, n;
    int64_t outer = has_axis ? gl_dims_product(x->dims, 0, axis) : 1;
    int64_t inner = has_axis ? gl_dims_product(x->dims, axis + 1, x->rank) : 1;
    if (!compress_count(cond, dim, k->where, &n))
        return GL_ERR_INPUT;
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof(int64_t));
    dims[has_axis ? axis : 0] = n;
    gl_tensor *y = gl_out_new(k, 0, x->dtype, has_axis ? x->rank : 1, dims);
    if (!y)
        return GL_ERR_NOMEM;
    int64_t di = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < cond->count && j < dim; j++)
            if (elem_nonzero(cond, j)) {
                gl_copy_elems(y, di, x, (o * dim + j) * inner, inner);
                di += inner;
            }
    return GL_OK;
}

static gl_status compress_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    bool has_axis = gl_node_attr_typed(c->node, "axis", GL_ATTR_INT) != NULL;
    int axis = 0, r = x->shape.rank;
    if (has_axis && r == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
        return GL_OK;
    }
    if (!compress_axis(c->node, c->opset, has_axis ? r : 1, c->where, &has_axis, &axis))
        return GL_ERR_INPUT;
    const gl_tensor *cond = c->in_values && c->n_inputs > 1 ? c->in_values[1] : NULL;
    int64_t n = GL_DIM_UNKNOWN;
    if (cond && !compress_count(cond, INT64_MAX, c->where, &n))
        return GL_ERR_INPUT;
    gl_shape s;
    if (has_axis) {
        shape_dup(&s, &x->shape);
    } else {
        gl_shape_init_unknown(&s);
        gl_shape_set_rank(&s, 1);
    }
    gl_dim_set(&s.dims[axis], n);
    set_out(c, 0, x->dtype, &s);
    return GL_OK;
}

/* ==== OneHot ========================================================================== */

static bool onehot_depth(const gl_tensor *t, const char *where, int64_t *depth)
{
    if (t->count != 1 || t->dtype == GL_DT_STRING) {
        gl_fail(GL_ERR_INPUT, "%s: 'depth' must be one number", where);
        return false;
    }
    *depth = gl_elem_i64(t, 0);
    if (*depth < 1) {
        gl_fail(GL_ERR_INPUT, "%s: 'depth' is %lld", where, (long long)*depth);
        return false;
    }
    return true;
}

static bool onehot_axis(const gl_node *n, int q, const char *where, int *axis)
{
    return gl_axis_normalize(gl_node_attr_int(n, "axis", -1), q, true, where, "axis", axis);
}

static gl_status onehot_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *ind = gl_need_input(k, 0, "indices"), *dt = gl_need_input(k, 1, "depth");
    const gl_tensor *vals = gl_need_input(k, 2, "values");
    int64_t depth;
    int axis;
    if (!ind || !dt || !vals || !onehot_depth(dt, k->where, &depth) ||
        !onehot_axis(k->node, ind->rank, k->where, &axis))
        return GL_ERR_INPUT;
    if (vals->count != 2 || ind->dtype == GL_DT_STRING)
        return gl_fail(GL_ERR_INPUT, "%s: 'values' must hold [off, on] and 'indices' numbers",
                       k->where);
    if (ind->rank + 1 > GL_MAX_RANK)
        return gl_fail(GL_ERR_INPUT, "%s: output rank exceeds %d", k->where, GL_MAX_RANK);
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, ind->dims, (size_t)axis * sizeof(int64_t));
    dims[axis] = depth;
    memcpy(dims + axis + 1, ind->dims + axis, (size_t)(ind->rank - axis) * sizeof(int64_t));
    gl_tensor *y = gl_out_new(k, 0, vals->dtype, ind->rank + 1, dims);
    if (!y)
        return GL_ERR_NOMEM;
    fill_run(y, 0, vals, 0, y->count);
    int64_t inner = gl_dims_product(ind->dims, axis, ind->rank);
    int64_t outer = gl_dims_product(ind->dims, 0, axis);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t v = gl_elem_i64(ind, o * inner + i);
            if (v < 0 && k->opset >= 11)
                v += depth; /* from opset 11 negative indices count from the back */
            if (v >= 0 && v < depth)
                gl_copy_elems(y, (o * depth + v) * inner + i, vals, 1, 1);
        }
    return GL_OK;
}

static gl_status onehot_infer(gl_infer_ctx *c)
{
    const gl_type *ind = gl_infer_input(c, 0), *vals = gl_infer_input(c, 2);
    if (!ind || !vals)
        return GL_OK;
    int q = ind->shape.rank, axis;
    if (q == GL_RANK_UNKNOWN || q + 1 > GL_MAX_RANK) {
        gl_infer_set_rank(c, 0, vals->dtype, GL_RANK_UNKNOWN);
        return GL_OK;
    }
    if (!onehot_axis(c->node, q, c->where, &axis))
        return GL_ERR_INPUT;
    const gl_tensor *dt = c->in_values && c->n_inputs > 1 ? c->in_values[1] : NULL;
    int64_t depth = GL_DIM_UNKNOWN;
    if (dt && !onehot_depth(dt, c->where, &depth))
        return GL_ERR_INPUT;
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, q + 1);
    for (int d = 0, src = 0; d <= q; d++) {
        if (d == axis)
            gl_dim_set(&s.dims[d], depth);
        else
            gl_dim_copy(&s.dims[d], &ind->shape.dims[src++]);
    }
    set_out(c, 0, vals->dtype, &s);
    return GL_OK;
}

/* ==== EyeLike ========================================================================= */

static bool eyelike_dtype(const gl_node *n, gl_dtype input, const char *where, gl_dtype *dt)
{
    const gl_attr *a = gl_node_attr_typed(n, "dtype", GL_ATTR_INT);
    *dt = a ? (gl_dtype)a->i : input;
    if ((a && !gl_dtype_valid((int)a->i)) || *dt == GL_DT_STRING) {
        gl_fail(GL_ERR_INPUT, "%s: output type %lld is not supported", where,
                (long long)(a ? a->i : (int64_t)input));
        return false;
    }
    return true;
}

static gl_status eyelike_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input");
    gl_dtype dt;
    if (!x || !eyelike_dtype(k->node, x->dtype, k->where, &dt))
        return GL_ERR_INPUT;
    if (x->rank != 2)
        return gl_fail(GL_ERR_INPUT, "%s: 'input' must have rank 2, not %d", k->where, x->rank);
    gl_tensor *y = gl_out_new(k, 0, dt, 2, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    int64_t kk = gl_node_attr_int(k->node, "k", 0), rows = x->dims[0], cols = x->dims[1];
    if (kk >= cols || kk <= -rows)
        return GL_OK;
    for (int64_t i = kk < 0 ? -kk : 0; i < rows && i + kk < cols; i++)
        gl_elem_set_f64(y, i * cols + i + kk, 1.0);
    return GL_OK;
}

static gl_status eyelike_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    gl_dtype dt;
    if (!x)
        return GL_OK;
    if (!eyelike_dtype(c->node, x->dtype, c->where, &dt))
        return GL_ERR_INPUT;
    if (x->shape.rank != GL_RANK_UNKNOWN && x->shape.rank != 2)
        return gl_fail(GL_ERR_INPUT, "%s: 'input' must have rank 2, not %d", c->where,
                       x->shape.rank);
    gl_infer_set(c, 0, dt, &x->shape);
    if (x->shape.rank == GL_RANK_UNKNOWN)
        gl_infer_set_rank(c, 0, dt, 2);
    return GL_OK;
}

/* ==== Trilu =========================================================================== */

static gl_status trilu_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input");
    int64_t kk = 0;
    if (!x || (gl_opt_input(k, 1) && !in_scalar_int(k, 1, "k", &kk)))
        return GL_ERR_INPUT;
    if (x->rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: 'input' must have rank >= 2, not %d", k->where,
                       x->rank);
    bool upper = gl_node_attr_int(k->node, "upper", 1) != 0;
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    if (rows * cols == 0)
        return GL_OK;
    /* keep j - i >= k (upper) or j - i <= k (lower); clamping k avoids overflow */
    kk = kk < -rows - 1 ? -rows - 1 : kk > cols + 1 ? cols + 1 : kk;
    for (int64_t m = 0, mats = x->count / (rows * cols); m < mats; m++)
        for (int64_t i = 0; i < rows; i++) {
            int64_t row = (m * rows + i) * cols;
            int64_t from = upper ? i + kk : 0, to = upper ? cols : i + kk + 1;
            from = from < 0 ? 0 : from > cols ? cols : from;
            to = to < 0 ? 0 : to > cols ? cols : to;
            gl_copy_elems(y, row + from, x, row + from, to - from);
        }
    return GL_OK;
}

static gl_status trilu_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (x && x->shape.rank != GL_RANK_UNKNOWN && x->shape.rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: 'input' must have rank >= 2, not %d", c->where,
                       x->shape.rank);
    return gl_infer_like_input(c, 0, 0);
}

/* ==== DepthToSpace, SpaceToDepth ====================================================== */

static bool blocksize(const gl_node *n, const char *where, int64_t *b, int64_t *bb)
{
    *b = gl_node_attr_int(n, "blocksize", 0);
    if (*b < 1 || !mul_i64(*b, *b, bb)) {
        gl_fail(GL_ERR_INPUT, "%s: 'blocksize' must be a positive number (got %lld)", where,
                (long long)*b);
        return false;
    }
    return true;
}

/* DCR (the default; the only mode before opset 11) or CRD. */
static bool d2s_crd(const gl_node *n, int64_t opset, const char *where, bool *crd)
{
    const char *m = opset >= 11 ? gl_node_attr_string(n, "mode", "DCR") : "DCR";
    *crd = strcmp(m, "CRD") == 0;
    if (!*crd && strcmp(m, "DCR") != 0) {
        gl_fail(GL_ERR_INPUT, "%s: mode '%s' is neither DCR nor CRD", where, m);
        return false;
    }
    return true;
}

/* Output = the 6-D reshape `in6` of x (row-major) permuted by perm, as a view. */
static void permuted_view(view *v, const int64_t *in6, const int *perm)
{
    int64_t s6[6];
    gl_strides(in6, 6, s6);
    v->rank = 6;
    v->offset = 0;
    for (int d = 0; d < 6; d++) {
        v->dims[d] = in6[perm[d]];
        v->strides[d] = s6[perm[d]];
    }
}

static gl_status depth_to_space_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input");
    int64_t b, bb;
    bool crd;
    if (!x || !blocksize(k->node, k->where, &b, &bb) || !d2s_crd(k->node, k->opset, k->where, &crd))
        return GL_ERR_INPUT;
    if (x->rank != 4 || x->dims[1] % bb != 0)
        return gl_fail(GL_ERR_INPUT, "%s: 'input' must be 4-D with channels divisible by %lld",
                       k->where, (long long)bb);
    int64_t n = x->dims[0], c = x->dims[1] / bb, h = x->dims[2], w = x->dims[3], dims[4];
    if (!mul_i64(h, b, &dims[2]) || !mul_i64(w, b, &dims[3]))
        return gl_fail(GL_ERR_INPUT, "%s: output dims overflow", k->where);
    dims[0] = n;
    dims[1] = c;
    static const int dcr[6] = {0, 3, 4, 1, 5, 2}, crd_perm[6] = {0, 1, 4, 2, 5, 3};
    int64_t in_dcr[6] = {n, b, b, c, h, w}, in_crd[6] = {n, c, b, b, h, w};
    view v;
    permuted_view(&v, crd ? in_crd : in_dcr, crd ? crd_perm : dcr);
    gl_tensor *y = gl_out_new(k, 0, x->dtype, 4, dims);
    if (!y)
        return GL_ERR_NOMEM;
    view_copy(y, 0, x, &v);
    return GL_OK;
}

static gl_status space_to_depth_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input");
    int64_t b, bb;
    if (!x || !blocksize(k->node, k->where, &b, &bb))
        return GL_ERR_INPUT;
    if (x->rank != 4 || x->dims[2] % b != 0 || x->dims[3] % b != 0)
        return gl_fail(GL_ERR_INPUT, "%s: 'input' must be 4-D with height and width divisible "
                       "by %lld", k->where, (long long)b);
    int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2] / b, w = x->dims[3] / b, dims[4];
    if (!mul_i64(c, bb, &dims[1]))
        return gl_fail(GL_ERR_INPUT, "%s: output dims overflow", k->where);
    dims[0] = n;
    dims[2] = h;
    dims[3] = w;
    static const int perm[6] = {0, 3, 5, 1, 2, 4};
    int64_t in6[6] = {n, c, h, b, w, b};
    view v;
    permuted_view(&v, in6, perm);
    gl_tensor *y = gl_out_new(k, 0, x->dtype, 4, dims);
    if (!y)
        return GL_ERR_NOMEM;
    view_copy(y, 0, x, &v);
    return GL_OK;
}

/* Shape of both: channels divided or multiplied by b*b, height and width the other way. */
static gl_status block_infer(gl_infer_ctx *c, bool to_space)
{
    const gl_type *x = gl_infer_input(c, 0);
    int64_t b, bb;
    bool crd;
    if (!x)
        return GL_OK;
    if (!blocksize(c->node, c->where, &b, &bb) ||
        (to_space && !d2s_crd(c->node, c->opset, c->where, &crd)))
        return GL_ERR_INPUT;
    if (x->shape.rank == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, 4);
        return GL_OK;
    }
    if (x->shape.rank != 4)
        return gl_fail(GL_ERR_INPUT, "%s: 'input' must be 4-D, not rank %d", c->where,
                       x->shape.rank);
    gl_shape s;
    shape_dup(&s, &x->shape);
    const gl_dim *in = x->shape.dims;
    bool ok = to_space ? dim_div(&s.dims[1], &in[1], bb)
                       : dim_div(&s.dims[2], &in[2], b) && dim_div(&s.dims[3], &in[3], b);
    if (!ok) {
        gl_shape_free(&s);
        return gl_fail(GL_ERR_INPUT, "%s: dims do not divide by the block size %lld", c->where,
                       (long long)b);
    }
    if (to_space) {
        dim_mul(&s.dims[2], &in[2], b);
        dim_mul(&s.dims[3], &in[3], b);
    } else {
        dim_mul(&s.dims[1], &in[1], bb);
    }
    set_out(c, 0, x->dtype, &s);
    return GL_OK;
}

static gl_status depth_to_space_infer(gl_infer_ctx *c) { return block_infer(c, true); }
static gl_status space_to_depth_infer(gl_infer_ctx *c) { return block_infer(c, false); }

/* ==== ReverseSequence ================================================================= */

static gl_status reverse_sequence_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "input");
    int64_t *lens;
    size_t n;
    if (!x || !in_ints(k, 1, "sequence_lens", &lens, &n))
        return GL_ERR_INPUT;
    int64_t ba = gl_node_attr_int(k->node, "batch_axis", 1);
    int64_t ta = gl_node_attr_int(k->node, "time_axis", 0);
    gl_status st = GL_ERR_INPUT;
    if (x->rank < 2 || ba == ta || (ba != 0 && ba != 1) || (ta != 0 && ta != 1)) {
        gl_fail(GL_ERR_INPUT, "%s: needs rank >= 2 and batch_axis/time_axis 0 and 1", k->where);
        goto done;
    }
    int64_t batch = x->dims[ba], time = x->dims[ta], inner = gl_dims_product(x->dims, 2, x->rank);
    if ((int64_t)n != batch) {
        gl_fail(GL_ERR_INPUT, "%s: 'sequence_lens' has %zu entries for a batch of %lld",
                k->where, n, (long long)batch);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (lens[i] < 0 || lens[i] > time) {
            gl_fail(GL_ERR_INPUT, "%s: 'sequence_lens'[%zu] = %lld is outside [0, %lld]",
                    k->where, i, (long long)lens[i], (long long)time);
            goto done;
        }
    gl_tensor *y = out_copy(k, 0, x);
    if (!y) {
        st = GL_ERR_NOMEM;
        goto done;
    }
    /* element offset of (time t, batch b) */
    int64_t t_step = (ta == 0 ? batch : 1) * inner, b_step = (ta == 0 ? 1 : time) * inner;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < lens[b]; t++)
            gl_copy_elems(y, t * t_step + b * b_step, x, (lens[b] - 1 - t) * t_step + b * b_step,
                          inner);
    st = GL_OK;
done:
    free(lens);
    return st;
}

static gl_status reverse_sequence_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (x && x->shape.rank != GL_RANK_UNKNOWN && x->shape.rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: 'input' must have rank >= 2", c->where);
    return gl_infer_like_input(c, 0, 0);
}

/* ==== Unique ========================================================================== */

/* The slices along the axis ("rows"), compared as numpy does: lexicographically over
 * the other dims in row-major order. */
typedef struct rows {
    const gl_tensor *x;
    int64_t outer, len, inner;
} rows;

static int row_cmp(const rows *r, int64_t a, int64_t b)
{
    for (int64_t o = 0; o < r->outer; o++) {
        int64_t pa = (o * r->len + a) * r->inner, pb = (o * r->len + b) * r->inner;
        for (int64_t i = 0; i < r->inner; i++) {
            int c = gl_elem_cmp(r->x, pa + i, pb + i);
            if (c)
                return c;
        }
    }
    return 0;
}

/* Stable bottom-up merge sort of row numbers. */
static void sort_rows(int64_t *v, int64_t n, const rows *r)
{
    int64_t *tmp = gl_xmalloc((size_t)(n ? n : 1) * sizeof(int64_t)), *src = v, *dst = tmp;
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = row_cmp(r, src[i], src[j]) <= 0 ? src[i++] : src[j++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, (size_t)n * sizeof(int64_t));
    free(tmp);
}

static bool unique_axis(const gl_node *n, int rank, const char *where, bool *has, int *axis)
{
    const gl_attr *a = gl_node_attr_typed(n, "axis", GL_ATTR_INT);
    *has = a != NULL;
    return !a || gl_axis_normalize(a->i, rank, false, where, "axis", axis);
}

static gl_status unique_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = gl_need_input(k, 0, "X");
    bool has_axis;
    int axis = 0;
    if (!x || !unique_axis(k->node, x->rank, k->where, &has_axis, &axis))
        return GL_ERR_INPUT;
    bool sorted = gl_node_attr_int(k->node, "sorted", 1) != 0;
    rows r = {x, 1, x->count, 1};
    if (has_axis) {
        gl_axis_view v = gl_axis_view_of(x->dims, x->rank, axis);
        r = (rows){x, v.outer, v.n, v.inner};
    }
    int64_t len = r.len;
    size_t sz = (size_t)(len ? len : 1) * sizeof(int64_t);
    int64_t *ord = gl_xmalloc(sz), *grp = gl_xmalloc(sz), *first = gl_xmalloc(sz),
            *cnt = gl_xmalloc(sz), *pos = gl_xmalloc(sz);
    for (int64_t i = 0; i < len; i++)
        ord[i] = i;
    sort_rows(ord, len, &r);
    /* groups of equal rows in sorted order; the stable sort puts each group's first
     * occurrence first */
    int64_t nu = 0;
    for (int64_t i = 0; i < len; i++) {
        if (i == 0 || row_cmp(&r, ord[i - 1], ord[i]) != 0) {
            first[nu] = ord[i];
            cnt[nu++] = 0;
        }
        grp[ord[i]] = nu - 1;
        cnt[nu - 1]++;
    }
    /* output position of each group: sorted order, or order of first occurrence */
    for (int64_t g = 0; g < nu; g++)
        pos[g] = sorted ? g : -1;
    for (int64_t i = 0, next = 0; i < len && !sorted; i++)
        if (pos[grp[i]] < 0)
            pos[grp[i]] = next++;
    gl_status st = GL_ERR_NOMEM;
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof(int64_t));
    dims[axis] = nu;
    gl_tensor *y = NULL, *ind = NULL, *inv = NULL, *counts = NULL;
    if (gl_out_wanted(k, 0) && !(y = gl_out_new(k, 0, x->dtype, has_axis ? x->rank : 1, dims)))
        goto done;
    if ((gl_out_wanted(k, 1) && !(ind = gl_out_new(k, 1, GL_DT_INT64, 1, &nu))) ||
        (gl_out_wanted(k, 2) && !(inv = gl_out_new(k, 2, GL_DT_INT64, 1, &len))) ||
        (gl_out_wanted(k, 3) && !(counts = gl_out_new(k, 3, GL_DT_INT64, 1, &nu))))
        goto done;
    for (int64_t g = 0; g < nu; g++) {
        if (ind)
            ((int64_t *)ind->buf->data)[pos[g]] = first[g];
        if (counts)
            ((int64_t *)counts->buf->data)[pos[g]] = cnt[g];
        for (int64_t o = 0; y && o < r.outer; o++)
            gl_copy_elems(y, (o * nu + pos[g]) * r.inner, x, (o * len + first[g]) * r.inner,
                          r.inner);
    }
    for (int64_t i = 0; inv && i < len; i++)
        ((int64_t *)inv->buf->data)[i] = pos[grp[i]];
    st = GL_OK;
done:
    free(ord);
    free(grp);
    free(first);
    free(cnt);
    free(pos);
    return st;
}

static gl_status unique_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    bool has_axis;
    int axis = 0, rank = x->shape.rank;
    int64_t unknown = GL_DIM_UNKNOWN;
    if (gl_node_attr_typed(c->node, "axis", GL_ATTR_INT) && rank == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
    } else {
        if (!unique_axis(c->node, rank, c->where, &has_axis, &axis))
            return GL_ERR_INPUT;
        gl_shape s, inv;
        gl_shape_init_unknown(&inv);
        gl_shape_set_rank(&inv, 1);
        if (has_axis) {
            shape_dup(&s, &x->shape);
            dim_unknown(&s.dims[axis]);
            gl_dim_copy(&inv.dims[0], &x->shape.dims[axis]);
        } else {
            gl_shape_init_unknown(&s);
            gl_shape_set_rank(&s, 1);
            if (rank != GL_RANK_UNKNOWN) {
                symprod p;
                sp_of_dims(&p, &x->shape, 0, rank);
                sp_to_dim(&p, &inv.dims[0]);
            }
        }
        set_out(c, 0, x->dtype, &s);
        set_out(c, 2, GL_DT_INT64, &inv);
    }
    set_out_dims(c, 1, GL_DT_INT64, 1, &unknown);
    set_out_dims(c, 3, GL_DT_INT64, 1, &unknown);
    if (c->n_outputs > 2 && c->out_types[2].kind == GL_TYPE_NONE)
        set_out_dims(c, 2, GL_DT_INT64, 1, &unknown);
    return GL_OK;
}

/* ==== the table ======================================================================= */

#define LAYOUT GL_OP_LAYOUT_SENSITIVE

/* One row per (op, first opset of changed semantics); functions read c->opset/k->opset
 * for the differences. Later versions that only widened the type lists share a row. */
static const gl_op_def movement_ops[] = {
    {"", "Compress", 9, compress_infer, compress_kernel, 0},
    {"", "Compress", 11, compress_infer, compress_kernel, 0},          /* negative axis */
    {"", "Concat", 1, concat_infer, concat_kernel, 0},                 /* axis defaults to 1 */
    {"", "Concat", 4, concat_infer, concat_kernel, 0},                 /* axis required */
    {"", "Concat", 11, concat_infer, concat_kernel, 0},                /* negative axis */
    {"", "Constant", 1, constant_infer, constant_kernel, 0},           /* value_* from 12 */
    {"", "ConstantOfShape", 9, cos_infer, cos_kernel, 0},
    {"", "DepthToSpace", 1, depth_to_space_infer, depth_to_space_kernel, LAYOUT},
    {"", "DepthToSpace", 11, depth_to_space_infer, depth_to_space_kernel, LAYOUT}, /* mode */
    {"", "Expand", 8, expand_infer, expand_kernel, 0},
    {"", "EyeLike", 9, eyelike_infer, eyelike_kernel, 0},
    {"", "Flatten", 1, flatten_infer, flatten_kernel, 0},
    {"", "Flatten", 11, flatten_infer, flatten_kernel, 0},             /* negative axis */
    {"", "Gather", 1, gather_infer, gather_kernel, 0},
    {"", "GatherElements", 11, gather_elements_infer, gather_elements_kernel, 0},
    {"", "GatherND", 11, gather_nd_infer, gather_nd_kernel, 0},
    {"", "GatherND", 12, gather_nd_infer, gather_nd_kernel, 0},        /* batch_dims */
    {"", "Identity", 1, identity_infer, identity_kernel, 0},
    {"", "NonZero", 9, nonzero_infer, nonzero_kernel, 0},
    {"", "OneHot", 9, onehot_infer, onehot_kernel, 0},
    {"", "OneHot", 11, onehot_infer, onehot_kernel, 0},                /* negative indices */
    {"", "Pad", 1, pad_infer, pad_kernel, 0},                          /* paddings, value */
    {"", "Pad", 2, pad_infer, pad_kernel, 0},                          /* pads, value */
    {"", "Pad", 11, pad_infer, pad_kernel, 0},                         /* inputs */
    {"", "Range", 11, range_infer, range_kernel, 0},
    {"", "Reshape", 1, reshape_infer, reshape_kernel, 0},              /* shape attribute */
    {"", "Reshape", 5, reshape_infer, reshape_kernel, 0},              /* shape input */
    {"", "Reshape", 14, reshape_infer, reshape_kernel, 0},             /* allowzero */
    {"", "ReverseSequence", 10, reverse_sequence_infer, reverse_sequence_kernel, 0},
    {"", "Scatter", 9, scatter_infer, scatter_elements_kernel, 0},     /* = ScatterElements */
    {"", "ScatterElements", 11, scatter_infer, scatter_elements_kernel, 0},
    {"", "ScatterElements", 16, scatter_infer, scatter_elements_kernel, 0}, /* reduction */
    {"", "ScatterND", 11, scatter_infer, scatter_nd_kernel, 0},
    {"", "ScatterND", 16, scatter_infer, scatter_nd_kernel, 0},        /* reduction */
    {"", "Shape", 1, shape_infer, shape_kernel, 0},
    {"", "Shape", 15, shape_infer, shape_kernel, 0},                   /* start, end */
    {"", "Size", 1, size_infer, size_kernel, 0},
    {"", "Slice", 1, slice_infer, slice_kernel, 0},                    /* attributes */
    {"", "Slice", 10, slice_infer, slice_kernel, 0},                   /* inputs, steps */
    {"", "SpaceToDepth", 1, space_to_depth_infer, space_to_depth_kernel, LAYOUT},
    {"", "Split", 1, split_infer, split_kernel, 0},                    /* split attr or input */
    {"", "Split", 2, split_infer, split_kernel, 0},                    /* split attribute */
    {"", "Split", 11, split_infer, split_kernel, 0},                   /* negative axis */
    {"", "Split", 13, split_infer, split_kernel, 0},                   /* split input */
    {"", "Split", 18, split_infer, split_kernel, 0},                   /* num_outputs */
    {"", "Squeeze", 1, squeeze_infer, squeeze_kernel, 0},
    {"", "Squeeze", 11, squeeze_infer, squeeze_kernel, 0},             /* negative axes */
    {"", "Squeeze", 13, squeeze_infer, squeeze_kernel, 0},             /* axes input */
    {"", "Tile", 1, tile_infer, tile_kernel, 0},                       /* tiles, axis inputs */
    {"", "Tile", 6, tile_infer, tile_kernel, 0},                       /* repeats input */
    {"", "Transpose", 1, transpose_infer, transpose_kernel, 0},
    {"", "Trilu", 14, trilu_infer, trilu_kernel, 0},
    {"", "Unique", 11, unique_infer, unique_kernel, 0},
    {"", "Unsqueeze", 1, unsqueeze_infer, unsqueeze_kernel, 0},
    {"", "Unsqueeze", 11, unsqueeze_infer, unsqueeze_kernel, 0},       /* negative axes */
    {"", "Unsqueeze", 13, unsqueeze_infer, unsqueeze_kernel, 0},       /* axes input */
};

const gl_op_family gl_ops_movement = {"movement", movement_ops, GL_ARRAY_LEN(movement_ops)};

/* elementwise.c — math, activations, arithmetic, comparisons, logic, Clip, Where and
 * Cast: one output element per (broadcast) input element.
 *
 * Every op is a small descriptor — the dtypes it accepts and its element function per
 * dtype class — run by a few generic drivers (unary, binary, comparison, variadic).
 * Broadcasting runs by rows: the innermost run of the (simplified) broadcast, where each
 * operand either walks or stays put (for_each_row). float32, what models compute in, has
 * typed row loops the compiler can vectorise; int64 and double have typed element loops;
 * the remaining dtypes go through gl_elem_*: in double for floating types, in int64 for
 * signed ints and bool, in uint64 for unsigned ints where signedness changes the answer
 * (Div, Mod, Max, Min, comparisons, shifts). Integer arithmetic wraps like numpy's;
 * integer division by zero gives 0 instead of trapping.
 */
#include "ops/families.h"
#include "ops/opkit.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <tgmath.h> /* one expression per op serves float (expf...) and double (exp...) */

/* ---- dtype classes ------------------------------------------------------------------- */

enum {
    C_FLOAT = 1u << 0, /* float, double, float16, bfloat16 */
    C_SINT = 1u << 1,
    C_UINT = 1u << 2,
    C_BOOL = 1u << 3,
    C_STRING = 1u << 4,
};
#define C_INT (C_SINT | C_UINT)
#define C_NUM (C_FLOAT | C_INT)
#define C_ANY (C_NUM | C_BOOL | C_STRING)

static unsigned dtype_class(gl_dtype dt)
{
    switch (dt) {
    case GL_DT_FLOAT: case GL_DT_DOUBLE: case GL_DT_FLOAT16: case GL_DT_BFLOAT16:
        return C_FLOAT;
    case GL_DT_INT8: case GL_DT_INT16: case GL_DT_INT32: case GL_DT_INT64:
        return C_SINT;
    case GL_DT_UINT8: case GL_DT_UINT16: case GL_DT_UINT32: case GL_DT_UINT64:
        return C_UINT;
    case GL_DT_BOOL:
        return C_BOOL;
    case GL_DT_STRING:
        return C_STRING;
    default:
        return 0;
    }
}

static const char *input_name(const gl_node *n, size_t i)
{
    return i < n->n_inputs && n->inputs[i] ? n->inputs[i]->name : "?";
}

static gl_status check_dtype(const char *where, const gl_node *n, size_t i, gl_dtype dt,
                             unsigned accepted)
{
    if (dtype_class(dt) & accepted)
        return GL_OK;
    return gl_fail(GL_ERR_INPUT, "%s: input '%s' has type %s, which %s does not accept",
                   where, input_name(n, i), gl_dtype_name(dt), n->op_type);
}

static gl_status check_same_dtype(const char *where, const gl_node *n, size_t i, gl_dtype dt,
                                  size_t j, gl_dtype want)
{
    if (dt == want)
        return GL_OK;
    return gl_fail(GL_ERR_INPUT, "%s: input '%s' has type %s, expected %s like input '%s'",
                   where, input_name(n, i), gl_dtype_name(dt), gl_dtype_name(want),
                   input_name(n, j));
}

static const char *format_dims(const int64_t *dims, int rank, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < rank && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", d ? "," : "",
                                 (long long)dims[d]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
    return buf;
}

/* ---- kernel plumbing ----------------------------------------------------------------- */

static gl_status need_input(const gl_kernel_ctx *k, size_t i, const gl_tensor **t)
{
    if (i >= k->n_inputs || !k->in[i])
        return gl_fail(GL_ERR_INPUT, "%s: input %zu is missing", k->where, i);
    *t = k->in[i];
    return GL_OK;
}

static gl_status new_output(gl_kernel_ctx *k, gl_dtype dt, int rank, const int64_t *dims,
                            gl_tensor **y)
{
    *y = gl_out_new(k, 0, dt, rank, dims);
    return *y ? GL_OK : GL_ERR_NOMEM;
}

/* ---- broadcasting by rows ------------------------------------------------------------ */

/* Drop output dims of 1 and merge neighbours that every operand walks contiguously, so
 * that the innermost dim — the run a row loop gets — is as long as it can be. Along it
 * every operand's stride is then 0 (broadcast) or 1. */
static void bcast_simplify(gl_bcast *b)
{
    int r = 0;
    for (int d = 0; d < b->rank; d++) {
        if (b->dims[d] == 1)
            continue;
        bool merge = r > 0;
        for (size_t k = 0; merge && k < b->n; k++)
            merge = b->strides[k][r - 1] == b->strides[k][d] * b->dims[d];
        int to = merge ? r - 1 : r++;
        b->dims[to] = merge ? b->dims[to] * b->dims[d] : b->dims[d];
        for (size_t k = 0; k < b->n; k++)
            b->strides[k][to] = b->strides[k][d];
    }
    b->rank = r;
}

/* fn(ctx, off, step, out_off, n) for each run of the innermost dim: operand k's run
 * starts at element off[k] and advances by step[k] (0 or 1); the output's at out_off. */
typedef void (*row_fn)(void *ctx, const int64_t *off, const int64_t *step, int64_t out_off,
                       int64_t n);

static void for_each_row(const gl_bcast *shape, row_fn fn, void *ctx)
{
    if (shape->count == 0)
        return;
    gl_bcast b = *shape;
    bcast_simplify(&b);
    int64_t step[GL_BCAST_MAX_OPERANDS] = {0};
    int64_t inner = 1;
    if (b.rank > 0) {
        inner = b.dims[b.rank - 1];
        for (size_t k = 0; k < b.n; k++)
            step[k] = b.strides[k][b.rank - 1];
        b.rank--; /* the iterator walks the outer dims */
    }
    gl_bcast_iter it;
    gl_bcast_iter_start(&it, &b);
    for (int64_t o = 0; o < shape->count; o += inner, gl_bcast_iter_next(&it))
        fn(ctx, it.off, step, o, inner);
}

/* A float32 row loop specialised for the stride patterns: both operands walk, one is
 * held, or both are (a row of one value). EXPR reads floats `a` and `b`. */
#define F32_ROW(NAME, OUT_T, EXPR)                                                         \
    static void NAME(const float *pa, int64_t sa, const float *pb, int64_t sb, OUT_T *py,  \
                     int64_t n)                                                            \
    {                                                                                      \
        if (sa && sb) {                                                                    \
            for (int64_t i = 0; i < n; i++) {                                              \
                float a = pa[i], b = pb[i];                                                \
                (void)a, (void)b;                                                          \
                py[i] = (EXPR);                                                            \
            }                                                                              \
        } else if (sb) {                                                                   \
            float a = pa[0];                                                               \
            (void)a;                                                                       \
            for (int64_t i = 0; i < n; i++) {                                              \
                float b = pb[i];                                                           \
                py[i] = (EXPR);                                                            \
            }                                                                              \
        } else if (sa) {                                                                   \
            float b = pb[0];                                                               \
            for (int64_t i = 0; i < n; i++) {                                              \
                float a = pa[i];                                                           \
                (void)a;                                                                   \
                py[i] = (EXPR);                                                            \
            }                                                                              \
        } else {                                                                           \
            float a = pa[0], b = pb[0];                                                    \
            OUT_T v = (EXPR);                                                              \
            (void)a, (void)b;                                                              \
            for (int64_t i = 0; i < n; i++)                                                \
                py[i] = v;                                                                 \
        }                                                                                  \
    }

/* ---- shape functions ----------------------------------------------------------------- */

/* Output 0 has input 0's type; input 0's dtype must be one the op accepts. */
static gl_status infer_unary_types(gl_infer_ctx *c, unsigned accepted)
{
    const gl_type *t = gl_infer_input(c, 0);
    if (!t)
        return GL_OK;
    if (t->dtype != GL_DT_UNDEFINED) {
        gl_status st = check_dtype(c->where, c->node, 0, t->dtype, accepted);
        if (st)
            return st;
    }
    gl_infer_set(c, 0, t->dtype, &t->shape);
    return GL_OK;
}

/* Output 0 has input 0's shape and dtype `dt` (IsNaN, Cast, ...). */
static gl_status infer_shape_as_input(gl_infer_ctx *c, unsigned accepted, gl_dtype dt)
{
    const gl_type *t = gl_infer_input(c, 0);
    if (!t)
        return GL_OK;
    if (t->dtype != GL_DT_UNDEFINED) {
        gl_status st = check_dtype(c->where, c->node, 0, t->dtype, accepted);
        if (st)
            return st;
    }
    gl_infer_set(c, 0, dt, &t->shape);
    return GL_OK;
}

/* The dtype shared by inputs first..first+n-1 (UNDEFINED when none is known); each
 * known one must be accepted and equal the others. */
static gl_status infer_common_dtype(gl_infer_ctx *c, size_t first, size_t n, unsigned accepted,
                                    gl_dtype *dt, bool *any_known)
{
    *dt = GL_DT_UNDEFINED;
    *any_known = false;
    size_t seen = first;
    for (size_t i = first; i < first + n && i < c->n_inputs; i++) {
        const gl_type *t = gl_infer_input(c, i);
        if (!t)
            continue;
        *any_known = true;
        if (t->dtype == GL_DT_UNDEFINED)
            continue;
        gl_status st = check_dtype(c->where, c->node, i, t->dtype, accepted);
        if (!st && *dt != GL_DT_UNDEFINED)
            st = check_same_dtype(c->where, c->node, i, t->dtype, seen, *dt);
        if (st)
            return st;
        if (*dt == GL_DT_UNDEFINED) {
            *dt = t->dtype;
            seen = i;
        }
    }
    return GL_OK;
}

/* numpy broadcasting of inputs first..first+n-1 of one dtype; the output has that dtype,
 * or `out_dt` when given (comparisons: bool). */
static gl_status infer_broadcast_op(gl_infer_ctx *c, size_t first, size_t n, unsigned accepted,
                                    gl_dtype out_dt)
{
    gl_dtype dt;
    bool any_known;
    gl_status st = infer_common_dtype(c, first, n, accepted, &dt, &any_known);
    if (st || !any_known)
        return st;
    gl_shape shape;
    if ((st = gl_infer_broadcast(c, first, n, &shape)))
        return st;
    gl_infer_set(c, 0, out_dt != GL_DT_UNDEFINED ? out_dt : dt, &shape);
    gl_shape_free(&shape);
    return GL_OK;
}

/* Opset < 7 binary ops: the output has A's shape (B broadcasts into it by the
 * `broadcast`/`axis` attributes). */
static gl_status infer_legacy_binary(gl_infer_ctx *c, unsigned accepted, gl_dtype out_dt)
{
    gl_dtype dt;
    bool any_known;
    gl_status st = infer_common_dtype(c, 0, 2, accepted, &dt, &any_known);
    const gl_type *a = gl_infer_input(c, 0);
    if (st || !a)
        return st;
    gl_infer_set(c, 0, out_dt != GL_DT_UNDEFINED ? out_dt : dt, &a->shape);
    return GL_OK;
}

/* ---- unary ops ----------------------------------------------------------------------- */

/* Attributes of the activations, read once per node. */
typedef struct act_attrs {
    float alpha, beta, gamma, lambd, bias;
} act_attrs;

typedef struct unary_def {
    unsigned types;
    const act_attrs *defaults; /* NULL: the op has no float attributes */
    void (*f32)(const float *x, float *y, int64_t n, const act_attrs *a);
    double (*f64)(double x, const act_attrs *a);
    /* Integer inputs: NULL computes them through f64 (truncating the result). */
    int64_t (*i64)(int64_t x, bool is_unsigned);
} unary_def;

static act_attrs read_act(const gl_node *n, const act_attrs *defaults)
{
    act_attrs a = {0};
    if (!defaults)
        return a;
    a.alpha = gl_node_attr_float(n, "alpha", defaults->alpha);
    a.beta = gl_node_attr_float(n, "beta", defaults->beta);
    a.gamma = gl_node_attr_float(n, "gamma", defaults->gamma);
    a.lambd = gl_node_attr_float(n, "lambd", defaults->lambd);
    a.bias = gl_node_attr_float(n, "bias", defaults->bias);
    return a;
}

static gl_status run_unary(gl_kernel_ctx *k, const unary_def *d)
{
    const gl_tensor *x = NULL;
    gl_tensor *y;
    gl_status st = need_input(k, 0, &x);
    if (st || (st = check_dtype(k->where, k->node, 0, x->dtype, d->types)) ||
        (st = new_output(k, x->dtype, x->rank, x->dims, &y)) || x->count == 0)
        return st;
    act_attrs a = read_act(k->node, d->defaults);
    unsigned cls = dtype_class(x->dtype);
    if (x->dtype == GL_DT_FLOAT) {
        float *out = gl_tensor_make_writable(y);
        d->f32(gl_tensor_data(x), out, x->count, &a);
    } else if (x->dtype == GL_DT_DOUBLE) {
        const double *in = gl_tensor_data(x);
        double *out = gl_tensor_make_writable(y);
        for (int64_t i = 0; i < x->count; i++)
            out[i] = d->f64(in[i], &a);
    } else if ((cls & C_INT) && d->i64) {
        for (int64_t i = 0; i < x->count; i++)
            gl_elem_set_i64(y, i, d->i64(gl_elem_i64(x, i), cls == C_UINT));
    } else {
        for (int64_t i = 0; i < x->count; i++)
            gl_elem_set_f64(y, i, d->f64(gl_elem_f64(x, i), &a));
    }
    return GL_OK;
}

/* The element function of a unary op as a float32 loop and a double function; EXPR
 * reads `x` (float or double) and the attributes `a`. */
#define UNARY_FN(NAME, EXPR)                                                               \
    static void NAME##_f32(const float *px, float *py, int64_t n, const act_attrs *a)      \
    {                                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                  \
            float x = px[i];                                                               \
            py[i] = (EXPR);                                                                \
        }                                                                                  \
    }                                                                                      \
    static double NAME##_f64(double x, const act_attrs *a) { return (EXPR); }

/* The descriptor, shape function and kernel of a unary op. */
#define UNARY_OP(NAME, TYPES, DEFAULTS, I64)                                               \
    static const unary_def NAME##_def = {TYPES, DEFAULTS, NAME##_f32, NAME##_f64, I64};    \
    static gl_status infer_##NAME(gl_infer_ctx *c)                                         \
    {                                                                                      \
        return infer_unary_types(c, NAME##_def.types);                                     \
    }                                                                                      \
    static gl_status kernel_##NAME(gl_kernel_ctx *k) { return run_unary(k, &NAME##_def); }

static int64_t neg_i64(int64_t x, bool is_unsigned)
{
    return (int64_t)(0 - (uint64_t)x); /* wraps like numpy: -INT_MIN == INT_MIN */
}

static int64_t abs_i64(int64_t x, bool is_unsigned)
{
    return is_unsigned || x >= 0 ? x : neg_i64(x, false);
}

static int64_t sign_i64(int64_t x, bool is_unsigned)
{
    return is_unsigned ? x != 0 : (x > 0) - (x < 0);
}

static int64_t relu_i64(int64_t x, bool is_unsigned)
{
    return is_unsigned || x > 0 ? x : 0;
}

static const act_attrs celu_defaults = {.alpha = 1.0f};
static const act_attrs elu_defaults = {.alpha = 1.0f};
static const act_attrs hardsigmoid_defaults = {.alpha = 0.2f, .beta = 0.5f};
static const act_attrs leakyrelu_defaults = {.alpha = 0.01f};
static const act_attrs selu_defaults = {.alpha = 1.67326319217681884765625f,
                                        .gamma = 1.05070102214813232421875f};
static const act_attrs shrink_defaults = {.lambd = 0.5f, .bias = 0.0f};
static const act_attrs thresholdedrelu_defaults = {.alpha = 1.0f};

UNARY_FN(Abs, fabs(x))
UNARY_FN(Acos, acos(x))
UNARY_FN(Acosh, acosh(x))
UNARY_FN(Asin, asin(x))
UNARY_FN(Asinh, asinh(x))
UNARY_FN(Atan, atan(x))
UNARY_FN(Atanh, atanh(x))
UNARY_FN(Ceil, ceil(x))
UNARY_FN(Celu, x > 0 ? x : a->alpha * expm1(x / a->alpha))
UNARY_FN(Cos, cos(x))
UNARY_FN(Cosh, cosh(x))
UNARY_FN(Elu, x < 0 ? a->alpha * expm1(x) : x)
UNARY_FN(Exp, exp(x))
UNARY_FN(Floor, floor(x))
/* v clamped to [0, 1], a NaN kept: ONNX's HardSigmoid is max(0, min(1, alpha * x + beta))
 * with its Max and Min, which keep a NaN (fmin and fmax would drop it). */
#define CLAMP01(v) ((v) < 0 ? 0 : (v) > 1 ? 1 : (v))
UNARY_FN(HardSigmoid, CLAMP01(a->alpha * x + a->beta))
UNARY_FN(HardSwish, x * fmax(0.0f, fmin(1.0f, x / 6 + 0.5f)))
UNARY_FN(LeakyRelu, x < 0 ? a->alpha * x : x)
UNARY_FN(Log, log(x))
UNARY_FN(Neg, -x)
UNARY_FN(Reciprocal, 1 / x)
UNARY_FN(Relu, x < 0 ? 0 : x)
UNARY_FN(Round, nearbyint(x)) /* the default rounding mode: half to even */
UNARY_FN(Selu, x > 0 ? a->gamma * x : a->gamma * a->alpha * expm1(x))
UNARY_FN(Shrink, x < -a->lambd ? x + a->bias : x > a->lambd ? x - a->bias : 0)
UNARY_FN(Sigmoid, 1 / (1 + exp(-x)))
UNARY_FN(Sign, x > 0 ? 1 : x < 0 ? -1 : x) /* keeps 0 and NaN */
UNARY_FN(Sin, sin(x))
UNARY_FN(Sinh, sinh(x))
UNARY_FN(Softplus, x > 0 ? x + log1p(exp(-x)) : log1p(exp(x))) /* no overflow for big x */
UNARY_FN(Softsign, x / (1 + fabs(x)))
UNARY_FN(Sqrt, sqrt(x))
UNARY_FN(Tan, tan(x))
UNARY_FN(Tanh, tanh(x))
UNARY_FN(ThresholdedRelu, x > a->alpha ? x : 0)

/* Erf in float32: a GELU's hot op, and oneDNN 2.6 has no plain erf primitive. libm's
 * erff is one call per element; this is two polynomials (fitted by bench/erf_fit.py) in
 * double, rounded once, with every branch written as bit selects so that GCC's if-conversion
 * (under -ftrapping-math, at -O2) vectorises the loop. Within 0.63 ulp of erf() in double
 * over every float (checked exhaustively on [0, 5]; tests/test_ops_elementwise.c samples). Not
 * threaded: at the 16K-32K elements of the shared transformers the op takes tens of
 * microseconds, less than waking a second thread would gain. */
#define ERF_BLOCK 16 /* a fixed trip count: -O2's very-cheap cost model vectorises it */

/* Also built for AVX2+FMA and for AVX-512, picked when the program loads on a CPU that has
 * them: AVX-512's eight doubles a vector halve the time (32K elements of a GELU on an
 * AVX-512 machine: 80 µs with AVX2, 40 with AVX-512; the ulp test passes on both). */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && defined(__x86_64__) && \
    defined(__linux__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
static void erf_block(const float *restrict px, float *restrict py)
{
    for (int i = 0; i < ERF_BLOCK; i++) {
        uint32_t xb, sign, ab, cb, rb, small_b, big_b;
        memcpy(&xb, &px[i], sizeof(xb));
        sign = xb & 0x80000000u;
        ab = xb ^ sign;
        cb = ab < 0x407ae148u ? ab : 0x407ae148u; /* |x| clamped to 3.92f: erf rounds to 1 */
        float af;
        memcpy(&af, &cb, sizeof(af));
        double a = af, u = a * a;
        double t = a * 0.68493150684931503 - 1.6849315068493151; /* [1, 3.92] -> [-1, 1] */
        double p = 7.8538610643413831e-05; /* erf(a) / a in u = a^2, for a < 1 */
        p = p * u - 0.00080101936037450805;
        p = p * u + 0.0051883276925156208;
        p = p * u - 0.026853811945382916;
        p = p * u + 0.11283585149097836;
        p = p * u - 0.37612625824319806;
        p = p * u + 1.1283791657267521;
        double q = -0.00021811782775874207; /* erfc(a) in t, for a >= 1 */
        q = q * t - 1.4572478296783712e-05;
        q = q * t + 0.0016235029171626303;
        q = q * t - 0.0015822720787613805;
        q = q * t - 0.0033340436643320079;
        q = q * t + 0.0090247324782309641;
        q = q * t - 0.0073494396862881541;
        q = q * t - 0.0064914377619103032;
        q = q * t + 0.028448184468993561;
        q = q * t - 0.045108127836524299;
        q = q * t + 0.045047191780504828;
        q = q * t - 0.030599806643582344;
        q = q * t + 0.013928986744399418;
        q = q * t - 0.0038781109636404215;
        q = q * t + 0.0005033535983072539;
        float small = (float)(a * p), big = (float)(1.0 - q);
        memcpy(&small_b, &small, sizeof(small_b));
        memcpy(&big_b, &big, sizeof(big_b));
        uint32_t use_small = -(uint32_t)(ab < 0x3f800000u); /* |x| < 1 */
        uint32_t is_nan = -(uint32_t)(ab > 0x7f800000u);
        rb = ((small_b & use_small) | (big_b & ~use_small)) | sign;
        rb = (xb & is_nan) | (rb & ~is_nan);
        memcpy(&py[i], &rb, sizeof(rb));
    }
}

static void Erf_f32(const float *px, float *py, int64_t n, const act_attrs *a)
{
    int64_t i = 0;
    for (; n - i >= ERF_BLOCK; i += ERF_BLOCK)
        erf_block(px + i, py + i);
    if (i < n) {
        float x[ERF_BLOCK] = {0}, y[ERF_BLOCK];
        memcpy(x, px + i, (size_t)(n - i) * sizeof(*x));
        erf_block(x, y);
        memcpy(py + i, y, (size_t)(n - i) * sizeof(*y));
    }
}

static double Erf_f64(double x, const act_attrs *a)
{
    return erf(x);
}

UNARY_OP(Abs, C_NUM, NULL, abs_i64)
UNARY_OP(Acos, C_FLOAT, NULL, NULL)
UNARY_OP(Acosh, C_FLOAT, NULL, NULL)
UNARY_OP(Asin, C_FLOAT, NULL, NULL)
UNARY_OP(Asinh, C_FLOAT, NULL, NULL)
UNARY_OP(Atan, C_FLOAT, NULL, NULL)
UNARY_OP(Atanh, C_FLOAT, NULL, NULL)
UNARY_OP(Ceil, C_FLOAT, NULL, NULL)
UNARY_OP(Celu, C_FLOAT, &celu_defaults, NULL)
UNARY_OP(Cos, C_FLOAT, NULL, NULL)
UNARY_OP(Cosh, C_FLOAT, NULL, NULL)
UNARY_OP(Elu, C_FLOAT, &elu_defaults, NULL)
UNARY_OP(Erf, C_NUM, NULL, NULL) /* Erf-9 accepts ints: erf of an int, truncated */
UNARY_OP(Exp, C_FLOAT, NULL, NULL)
UNARY_OP(Floor, C_FLOAT, NULL, NULL)
UNARY_OP(HardSigmoid, C_FLOAT, &hardsigmoid_defaults, NULL)
UNARY_OP(HardSwish, C_FLOAT, NULL, NULL)
UNARY_OP(LeakyRelu, C_FLOAT, &leakyrelu_defaults, NULL)
UNARY_OP(Log, C_FLOAT, NULL, NULL)
UNARY_OP(Neg, C_FLOAT | C_SINT, NULL, neg_i64)
UNARY_OP(Reciprocal, C_FLOAT, NULL, NULL)
UNARY_OP(Relu, C_FLOAT | C_SINT, NULL, relu_i64)
UNARY_OP(Round, C_FLOAT, NULL, NULL)
UNARY_OP(Selu, C_FLOAT, &selu_defaults, NULL)
UNARY_OP(Shrink, C_NUM, &shrink_defaults, NULL)
UNARY_OP(Sigmoid, C_FLOAT, NULL, NULL)
UNARY_OP(Sign, C_NUM, NULL, sign_i64)
UNARY_OP(Sin, C_FLOAT, NULL, NULL)
UNARY_OP(Sinh, C_FLOAT, NULL, NULL)
UNARY_OP(Softplus, C_FLOAT, NULL, NULL)
UNARY_OP(Softsign, C_FLOAT, NULL, NULL)
UNARY_OP(Sqrt, C_FLOAT, NULL, NULL)
UNARY_OP(Tan, C_FLOAT, NULL, NULL)
UNARY_OP(Tanh, C_FLOAT, NULL, NULL)
UNARY_OP(ThresholdedRelu, C_FLOAT, &thresholdedrelu_defaults, NULL)

/* ---- IsNaN, IsInf, Not: unary ops with a bool side ----------------------------------- */

static gl_status infer_IsNaN(gl_infer_ctx *c)
{
    return infer_shape_as_input(c, C_FLOAT, GL_DT_BOOL);
}

static gl_status infer_IsInf(gl_infer_ctx *c)
{
    return infer_shape_as_input(c, C_FLOAT, GL_DT_BOOL);
}

static gl_status infer_Not(gl_infer_ctx *c) { return infer_unary_types(c, C_BOOL); }

/* Which special values IsNaN / IsInf report. */
typedef struct special_values {
    bool nan, pos_inf, neg_inf;
} special_values;

static gl_status run_special_test(gl_kernel_ctx *k, special_values want)
{
    const gl_tensor *x = NULL;
    gl_tensor *y;
    gl_status st = need_input(k, 0, &x);
    if (st || (st = check_dtype(k->where, k->node, 0, x->dtype, C_FLOAT)) ||
        (st = new_output(k, GL_DT_BOOL, x->rank, x->dims, &y)) || x->count == 0)
        return st;
    uint8_t *out = gl_tensor_make_writable(y);
    const float *f = x->dtype == GL_DT_FLOAT ? gl_tensor_data(x) : NULL;
    for (int64_t i = 0; i < x->count; i++) {
        double v = f ? f[i] : gl_elem_f64(x, i);
        out[i] = isnan(v) ? want.nan : isinf(v) && (v > 0 ? want.pos_inf : want.neg_inf);
    }
    return GL_OK;
}

static gl_status kernel_IsNaN(gl_kernel_ctx *k)
{
    return run_special_test(k, (special_values){.nan = true});
}

static gl_status kernel_IsInf(gl_kernel_ctx *k)
{
    return run_special_test(k, (special_values){
        .pos_inf = gl_node_attr_int(k->node, "detect_positive", 1) != 0,
        .neg_inf = gl_node_attr_int(k->node, "detect_negative", 1) != 0,
    });
}

static gl_status kernel_Not(gl_kernel_ctx *k)
{
    const gl_tensor *x = NULL;
    gl_tensor *y;
    gl_status st = need_input(k, 0, &x);
    if (st || (st = check_dtype(k->where, k->node, 0, x->dtype, C_BOOL)) ||
        (st = new_output(k, GL_DT_BOOL, x->rank, x->dims, &y)) || x->count == 0)
        return st;
    const uint8_t *in = gl_tensor_data(x);
    uint8_t *out = gl_tensor_make_writable(y);
    for (int64_t i = 0; i < x->count; i++)
        out[i] = !in[i];
    return GL_OK;
}

/* ---- binary arithmetic --------------------------------------------------------------- */

typedef void (*f32_row_fn)(const float *a, int64_t sa, const float *b, int64_t sb, float *y,
                           int64_t n);

typedef struct binary_def {
    unsigned types;
    f32_row_fn f32;                      /* float32 fast path; NULL: through f64 */
    double (*f64)(double a, double b);   /* floating types; NULL: not accepted */
    int64_t (*i64)(int64_t a, int64_t b);
    uint64_t (*u64)(uint64_t a, uint64_t b); /* unsigned ints, where it differs from i64 */
} binary_def;

/* The float32 row loop and double function of a binary op; EXPR reads `a` and `b`. */
#define BINARY_FN(NAME, EXPR)                                                              \
    F32_ROW(NAME##_row, float, EXPR)                                                       \
    static double NAME##_f64(double a, double b) { return (EXPR); }

BINARY_FN(Add, a + b)
BINARY_FN(Sub, a - b)
BINARY_FN(Mul, a * b)
BINARY_FN(Div, a / b)
BINARY_FN(Pow, pow(a, b))
BINARY_FN(Fmod, fmod(a, b))
BINARY_FN(Max, a > b || isnan(a) ? a : b) /* NaN wins, as in numpy.maximum */
BINARY_FN(Min, a < b || isnan(a) ? a : b)
BINARY_FN(Second, b)
BINARY_FN(PRelu, a < 0 ? a * b : a)

static int64_t add_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t sub_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t mul_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t second_i64(int64_t a, int64_t b) { return b; }
static int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Truncates toward zero (C, ONNX Runtime; numpy's // floors, which agrees for the
 * unsigned cases of the suite). x / 0 is 0 and INT64_MIN / -1 wraps, instead of a trap. */
static int64_t div_i64(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    return b == -1 ? sub_i64(0, a) : a / b;
}

static uint64_t div_u64(uint64_t a, uint64_t b) { return b ? a / b : 0; }

/* Mod with fmod=0: the sign of the divisor, as Python's %. */
static int64_t pymod_i64(int64_t a, int64_t b)
{
    if (b == 0 || b == -1)
        return 0;
    int64_t r = a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

/* Mod with fmod=1: the sign of the dividend, as C's %. */
static int64_t cmod_i64(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }
static uint64_t mod_u64(uint64_t a, uint64_t b) { return b ? a % b : 0; }

static uint64_t shl_u64(uint64_t a, uint64_t b) { return b < 64 ? a << b : 0; }
static uint64_t shr_u64(uint64_t a, uint64_t b) { return b < 64 ? a >> b : 0; }

static int64_t prelu_i64(int64_t a, int64_t b) { return a < 0 ? mul_i64(a, b) : a; }
static uint64_t first_u64(uint64_t a, uint64_t b) { return a; } /* never negative */

static const binary_def ADD = {C_NUM, Add_row, Add_f64, add_i64, NULL};
static const binary_def SUB = {C_NUM, Sub_row, Sub_f64, sub_i64, NULL};
static const binary_def MUL = {C_NUM, Mul_row, Mul_f64, mul_i64, NULL};
static const binary_def DIV = {C_NUM, Div_row, Div_f64, div_i64, div_u64};
static const binary_def MAX = {C_NUM, Max_row, Max_f64, max_i64, max_u64};
static const binary_def MIN = {C_NUM, Min_row, Min_f64, min_i64, min_u64};
static const binary_def SUM = {C_FLOAT, Add_row, Add_f64, add_i64, NULL};
static const binary_def COPY = {C_ANY, Second_row, Second_f64, second_i64, NULL};
static const binary_def MOD_PYTHON = {C_INT, NULL, NULL, pymod_i64, mod_u64};
static const binary_def MOD_FMOD = {C_NUM, Fmod_row, Fmod_f64, cmod_i64, mod_u64};
static const binary_def SHIFT_LEFT = {C_UINT, NULL, NULL, NULL, shl_u64};
static const binary_def SHIFT_RIGHT = {C_UINT, NULL, NULL, NULL, shr_u64};
static const binary_def PRELU = {C_FLOAT | C_INT, PRelu_row, PRelu_f64, prelu_i64, first_u64};

struct f32_binary_ctx {
    f32_row_fn fn;
    const float *a, *b;
    float *y;
};

static void f32_binary_row(void *ctx, const int64_t *off, const int64_t *step, int64_t o,
                           int64_t n)
{
    const struct f32_binary_ctx *c = ctx;
    c->fn(c->a + off[0], step[0], c->b + off[1], step[1], c->y + o, n);
}

struct generic_binary_ctx {
    const binary_def *d;
    const gl_tensor *a, *b;
    gl_tensor *y;
    unsigned cls;
};

/* Element by element: int64 and double tensors through typed pointers, the rest through
 * gl_elem_* in double (floating types), int64 or uint64. */
static void generic_binary_row(void *ctx, const int64_t *off, const int64_t *step, int64_t o,
                               int64_t n)
{
    const struct generic_binary_ctx *c = ctx;
    const binary_def *d = c->d;
    int64_t ia = off[0], ib = off[1];
    gl_dtype dt = c->a->dtype;
    if (dt == GL_DT_INT64 || dt == GL_DT_DOUBLE) {
        const void *pa = gl_tensor_data(c->a), *pb = gl_tensor_data(c->b);
        void *py = c->y->buf->data;
        for (int64_t i = o; i < o + n; i++, ia += step[0], ib += step[1]) {
            if (dt == GL_DT_INT64)
                ((int64_t *)py)[i] = d->i64(((const int64_t *)pa)[ia], ((const int64_t *)pb)[ib]);
            else
                ((double *)py)[i] = d->f64(((const double *)pa)[ia], ((const double *)pb)[ib]);
        }
        return;
    }
    for (int64_t i = o; i < o + n; i++, ia += step[0], ib += step[1]) {
        if (c->cls == C_FLOAT)
            gl_elem_set_f64(c->y, i, d->f64(gl_elem_f64(c->a, ia), gl_elem_f64(c->b, ib)));
        else if (c->cls == C_UINT && d->u64)
            gl_elem_set_i64(c->y, i, (int64_t)d->u64((uint64_t)gl_elem_i64(c->a, ia),
                                                     (uint64_t)gl_elem_i64(c->b, ib)));
        else
            gl_elem_set_i64(c->y, i, d->i64(gl_elem_i64(c->a, ia), gl_elem_i64(c->b, ib)));
    }
}

/* y = d(a, b) for y already of the broadcast shape and a's dtype. y may be a itself
 * (a then has the full shape, so each element is read before it is written). */
static void binary_into(const binary_def *d, const gl_bcast *bc, const gl_tensor *a,
                        const gl_tensor *b, gl_tensor *y)
{
    if (bc->count == 0)
        return;
    if (d->f32 && a->dtype == GL_DT_FLOAT && b->dtype == GL_DT_FLOAT) {
        float *out = gl_tensor_make_writable(y);
        struct f32_binary_ctx c = {d->f32, gl_tensor_data(a), gl_tensor_data(b), out};
        for_each_row(bc, f32_binary_row, &c);
        return;
    }
    struct generic_binary_ctx c = {d, a, b, y, dtype_class(a->dtype)};
    gl_tensor_make_writable(y);
    for_each_row(bc, generic_binary_row, &c);
}

/* The output of a broadcasting op over tensors ts: created with the broadcast shape. */
static gl_status broadcast_output(gl_kernel_ctx *k, const gl_tensor *const *ts, size_t n,
                                  gl_dtype dt, gl_bcast *bc, gl_tensor **y)
{
    gl_status st = gl_bcast_init(bc, ts, n, k->where);
    return st ? st : new_output(k, dt, bc->rank, bc->dims, y);
}

static gl_status binary_on(gl_kernel_ctx *k, const binary_def *d, const gl_tensor *a,
                           const gl_tensor *b)
{
    gl_bcast bc;
    gl_tensor *y;
    const gl_tensor *ops[2] = {a, b};
    gl_status st = check_dtype(k->where, k->node, 0, a->dtype, d->types);
    if (st || (st = check_same_dtype(k->where, k->node, 1, b->dtype, 0, a->dtype)) ||
        (st = broadcast_output(k, ops, 2, a->dtype, &bc, &y)))
        return st;
    binary_into(d, &bc, a, b, y);
    return GL_OK;
}

static gl_status run_binary(gl_kernel_ctx *k, const binary_def *d)
{
    const gl_tensor *a = NULL, *b = NULL;
    gl_status st = need_input(k, 0, &a);
    if (st || (st = need_input(k, 1, &b)))
        return st;
    return binary_on(k, d, a, b);
}

/* Opset < 7 broadcasting: with broadcast=1, B's dims match a run of A's dims starting at
 * `axis` (default: A's trailing dims), 1 matching anything; with broadcast=0 the shapes
 * are equal. *view is B seen with A's rank, so that numpy broadcasting does the rest. */
static gl_status legacy_operand(const gl_kernel_ctx *k, const gl_tensor *a, const gl_tensor *b,
                                gl_tensor_frame *f)
{
    char sa[256], sb[256];
    gl_tensor *view = gl_tensor_frame_init(f, b); /* a header over b's bytes: never freed */
    if (!gl_node_attr_int(k->node, "broadcast", 0)) {
        if (a->rank == b->rank &&
            (a->rank == 0 || memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(int64_t)) == 0))
            return GL_OK;
        return gl_fail(GL_ERR_INPUT, "%s: input '%s' %s differs from input '%s' %s and "
                       "broadcast is 0", k->where, input_name(k->node, 1),
                       format_dims(b->dims, b->rank, sb, sizeof(sb)), input_name(k->node, 0),
                       format_dims(a->dims, a->rank, sa, sizeof(sa)));
    }
    int64_t axis = gl_node_attr_int(k->node, "axis", a->rank - b->rank);
    if (axis < 0)
        axis += a->rank;
    bool fits = b->rank <= a->rank && axis >= 0 && axis + b->rank <= a->rank;
    for (int d = 0; fits && d < b->rank; d++)
        fits = b->dims[d] == 1 || b->dims[d] == a->dims[axis + d];
    if (!fits)
        return gl_fail(GL_ERR_INPUT, "%s: input '%s' %s does not broadcast into input '%s' %s "
                       "at axis %lld", k->where, input_name(k->node, 1),
                       format_dims(b->dims, b->rank, sb, sizeof(sb)), input_name(k->node, 0),
                       format_dims(a->dims, a->rank, sa, sizeof(sa)), (long long)axis);
    view->rank = a->rank;
    for (int d = 0; d < a->rank; d++)
        view->dims[d] = d >= axis && d < axis + b->rank ? b->dims[d - axis] : 1;
    return GL_OK;
}

static gl_status run_binary_legacy(gl_kernel_ctx *k, const binary_def *d)
{
    const gl_tensor *a = NULL, *b = NULL;
    gl_tensor_frame view;
    gl_status st = need_input(k, 0, &a);
    if (st || (st = need_input(k, 1, &b)) || (st = legacy_operand(k, a, b, &view)))
        return st;
    return binary_on(k, d, a, &view.t);
}

/* Shape function and kernel of a binary op, and of its opset < 7 form. */
#define BINARY_OP(NAME, DEF)                                                               \
    static gl_status infer_##NAME(gl_infer_ctx *c)                                         \
    {                                                                                      \
        return infer_broadcast_op(c, 0, 2, (DEF).types, GL_DT_UNDEFINED);                  \
    }                                                                                      \
    static gl_status kernel_##NAME(gl_kernel_ctx *k) { return run_binary(k, &(DEF)); }     \
    static gl_status infer_##NAME##_legacy(gl_infer_ctx *c)                                \
    {                                                                                      \
        return infer_legacy_binary(c, (DEF).types, GL_DT_UNDEFINED);                       \
    }                                                                                      \
    static gl_status kernel_##NAME##_legacy(gl_kernel_ctx *k)                              \
    {                                                                                      \
        return run_binary_legacy(k, &(DEF));                                               \
    }

BINARY_OP(Add, ADD)
BINARY_OP(Sub, SUB)
BINARY_OP(Mul, MUL)
BINARY_OP(Div, DIV)

/* ---- Mod, BitShift: binary ops chosen by an attribute -------------------------------- */

static gl_status mod_def(const char *where, const gl_node *n, gl_dtype dt, const binary_def **d)
{
    bool fmod_attr = gl_node_attr_int(n, "fmod", 0) != 0;
    if (!fmod_attr && dtype_class(dt) == C_FLOAT)
        return gl_fail(GL_ERR_INPUT, "%s: fmod must be 1 for %s inputs", where,
                       gl_dtype_name(dt));
    *d = fmod_attr ? &MOD_FMOD : &MOD_PYTHON;
    return GL_OK;
}

static gl_status infer_Mod(gl_infer_ctx *c)
{
    const gl_type *t = gl_infer_input(c, 0);
    const binary_def *d;
    if (t && t->dtype != GL_DT_UNDEFINED) {
        gl_status st = mod_def(c->where, c->node, t->dtype, &d);
        if (st)
            return st;
    }
    return infer_broadcast_op(c, 0, 2, C_NUM, GL_DT_UNDEFINED);
}

static gl_status kernel_Mod(gl_kernel_ctx *k)
{
    const gl_tensor *a = NULL;
    const binary_def *d;
    gl_status st = need_input(k, 0, &a);
    if (st || (st = mod_def(k->where, k->node, a->dtype, &d)))
        return st;
    return run_binary(k, d);
}

static gl_status shift_def(const char *where, const gl_node *n, const binary_def **d)
{
    const char *dir = gl_node_attr_string(n, "direction", "");
    if (strcmp(dir, "LEFT") == 0)
        *d = &SHIFT_LEFT;
    else if (strcmp(dir, "RIGHT") == 0)
        *d = &SHIFT_RIGHT;
    else
        return gl_fail(GL_ERR_INPUT, "%s: direction '%s' is neither LEFT nor RIGHT", where, dir);
    return GL_OK;
}

static gl_status infer_BitShift(gl_infer_ctx *c)
{
    const binary_def *d;
    gl_status st = shift_def(c->where, c->node, &d);
    return st ? st : infer_broadcast_op(c, 0, 2, C_UINT, GL_DT_UNDEFINED);
}

static gl_status kernel_BitShift(gl_kernel_ctx *k)
{
    const binary_def *d;
    gl_status st = shift_def(k->where, k->node, &d);
    return st ? st : run_binary(k, d);
}

/* ---- Pow: the exponent may have another dtype than the base -------------------------- */

#define POW_BASE_TYPES (C_FLOAT | C_SINT)

/* base^e in wrapping integer arithmetic; a negative e gives 0 unless |base| is 1 (the
 * truncated real result). */
static int64_t ipow(int64_t base, uint64_t e, bool e_negative)
{
    if (e_negative)
        return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
    uint64_t r = 1, b = (uint64_t)base;
    for (; e; e >>= 1, b *= b)
        if (e & 1)
            r *= b;
    return (int64_t)r;
}

static gl_status infer_pow_types(gl_infer_ctx *c)
{
    const gl_type *base = gl_infer_input(c, 0), *e = gl_infer_input(c, 1);
    gl_status st = GL_OK;
    if (base && base->dtype != GL_DT_UNDEFINED)
        st = check_dtype(c->where, c->node, 0, base->dtype, POW_BASE_TYPES);
    if (!st && e && e->dtype != GL_DT_UNDEFINED)
        st = check_dtype(c->where, c->node, 1, e->dtype, C_NUM);
    return st;
}

static gl_status infer_Pow(gl_infer_ctx *c)
{
    gl_shape shape;
    const gl_type *base = gl_infer_input(c, 0);
    gl_status st = infer_pow_types(c);
    if (st || !base || (st = gl_infer_broadcast(c, 0, 2, &shape)))
        return st;
    gl_infer_set(c, 0, base->dtype, &shape);
    gl_shape_free(&shape);
    return GL_OK;
}

static gl_status infer_Pow_legacy(gl_infer_ctx *c)
{
    return infer_legacy_binary(c, C_FLOAT, GL_DT_UNDEFINED);
}

static void pow_generic(const gl_bcast *bc, const gl_tensor *a, const gl_tensor *b, gl_tensor *y)
{
    bool int_base = dtype_class(a->dtype) != C_FLOAT;
    unsigned e_cls = dtype_class(b->dtype);
    gl_bcast_iter it;
    gl_bcast_iter_start(&it, bc);
    for (int64_t i = 0; i < bc->count; i++, gl_bcast_iter_next(&it)) {
        if (int_base && (e_cls & C_INT)) {
            int64_t e = gl_elem_i64(b, it.off[1]);
            bool negative = e_cls == C_SINT && e < 0;
            gl_elem_set_i64(y, i, ipow(gl_elem_i64(a, it.off[0]), (uint64_t)e, negative));
        } else {
            /* as numpy: in double, then converted (truncated for an int base) */
            gl_elem_set_f64(y, i, pow(gl_elem_f64(a, it.off[0]), gl_elem_f64(b, it.off[1])));
        }
    }
}

static gl_status pow_on(gl_kernel_ctx *k, const gl_tensor *a, const gl_tensor *b)
{
    static const binary_def POW = {C_FLOAT, Pow_row, Pow_f64, NULL, NULL};
    gl_bcast bc;
    gl_tensor *y;
    const gl_tensor *ops[2] = {a, b};
    gl_status st = check_dtype(k->where, k->node, 0, a->dtype, POW_BASE_TYPES);
    if (st || (st = check_dtype(k->where, k->node, 1, b->dtype, C_NUM)) ||
        (st = broadcast_output(k, ops, 2, a->dtype, &bc, &y)))
        return st;
    /* x^2, a decomposed LayerNorm's variance: one multiply, the same correctly rounded
     * result as powf (NaN and infinities included), where powf is a libm call each. */
    if (a->dtype == GL_DT_FLOAT && b->dtype == GL_DT_FLOAT && b->count == 1 &&
        *(const float *)gl_tensor_data(b) == 2.0f && y->count == a->count) {
        const float *x = gl_tensor_data(a);
        float *out = gl_tensor_make_writable(y);
        for (int64_t i = 0; i < a->count; i++)
            out[i] = x[i] * x[i];
    } else if (a->dtype == GL_DT_FLOAT && b->dtype == GL_DT_FLOAT)
        binary_into(&POW, &bc, a, b, y);
    else
        pow_generic(&bc, a, b, y);
    return GL_OK;
}

static gl_status kernel_Pow(gl_kernel_ctx *k)
{
    const gl_tensor *a = NULL, *b = NULL;
    gl_status st = need_input(k, 0, &a);
    if (st || (st = need_input(k, 1, &b)))
        return st;
    return pow_on(k, a, b);
}

static gl_status kernel_Pow_legacy(gl_kernel_ctx *k)
{
    const gl_tensor *a = NULL, *b = NULL;
    gl_tensor_frame view;
    gl_status st = need_input(k, 0, &a);
    if (st || (st = need_input(k, 1, &b)) || (st = legacy_operand(k, a, b, &view)))
        return st;
    return pow_on(k, a, &view.t);
}

/* ---- comparisons and logic: bool outputs --------------------------------------------- */

typedef void (*f32_cmp_row_fn)(const float *a, int64_t sa, const float *b, int64_t sb,
                               uint8_t *y, int64_t n);

typedef struct compare_def {
    unsigned types;
    f32_cmp_row_fn f32;
    bool (*f64)(double a, double b);
    bool (*i64)(int64_t a, int64_t b); /* signed ints and bool */
    bool (*u64)(uint64_t a, uint64_t b);
} compare_def;

#define COMPARE_FN(NAME, EXPR)                                                             \
    F32_ROW(NAME##_row, uint8_t, EXPR)                                                     \
    static bool NAME##_f64(double a, double b) { return (EXPR); }                          \
    static bool NAME##_i64(int64_t a, int64_t b) { return (EXPR); }                        \
    static bool NAME##_u64(uint64_t a, uint64_t b) { return (EXPR); }

COMPARE_FN(Equal, a == b)
COMPARE_FN(Greater, a > b)
COMPARE_FN(GreaterOrEqual, a >= b)
COMPARE_FN(Less, a < b)
COMPARE_FN(LessOrEqual, a <= b)

static bool and_i64(int64_t a, int64_t b) { return a && b; }
static bool or_i64(int64_t a, int64_t b) { return a || b; }
static bool xor_i64(int64_t a, int64_t b) { return !a != !b; }

static const compare_def EQUAL = {C_NUM | C_BOOL, Equal_row, Equal_f64, Equal_i64, Equal_u64};
static const compare_def GREATER = {C_NUM, Greater_row, Greater_f64, Greater_i64, Greater_u64};
static const compare_def GREATER_OR_EQUAL = {C_NUM, GreaterOrEqual_row, GreaterOrEqual_f64,
                                             GreaterOrEqual_i64, GreaterOrEqual_u64};
static const compare_def LESS = {C_NUM, Less_row, Less_f64, Less_i64, Less_u64};
static const compare_def LESS_OR_EQUAL = {C_NUM, LessOrEqual_row, LessOrEqual_f64,
                                          LessOrEqual_i64, LessOrEqual_u64};
static const compare_def AND = {C_BOOL, NULL, NULL, and_i64, NULL};
static const compare_def OR = {C_BOOL, NULL, NULL, or_i64, NULL};
static const compare_def XOR = {C_BOOL, NULL, NULL, xor_i64, NULL};

struct f32_compare_ctx {
    f32_cmp_row_fn fn;
    const float *a, *b;
    uint8_t *y;
};

static void f32_compare_row(void *ctx, const int64_t *off, const int64_t *step, int64_t o,
                            int64_t n)
{
    const struct f32_compare_ctx *c = ctx;
    c->fn(c->a + off[0], step[0], c->b + off[1], step[1], c->y + o, n);
}

static void compare_generic(const compare_def *d, const gl_bcast *bc, const gl_tensor *a,
                            const gl_tensor *b, uint8_t *out)
{
    unsigned cls = dtype_class(a->dtype);
    gl_bcast_iter it;
    gl_bcast_iter_start(&it, bc);
    if (cls == C_FLOAT) {
        for (int64_t i = 0; i < bc->count; i++, gl_bcast_iter_next(&it))
            out[i] = d->f64(gl_elem_f64(a, it.off[0]), gl_elem_f64(b, it.off[1]));
    } else if (cls == C_UINT && d->u64) {
        for (int64_t i = 0; i < bc->count; i++, gl_bcast_iter_next(&it))
            out[i] = d->u64((uint64_t)gl_elem_i64(a, it.off[0]),
                            (uint64_t)gl_elem_i64(b, it.off[1]));
    } else {
        for (int64_t i = 0; i < bc->count; i++, gl_bcast_iter_next(&it))
            out[i] = d->i64(gl_elem_i64(a, it.off[0]), gl_elem_i64(b, it.off[1]));
    }
}

static gl_status compare_on(gl_kernel_ctx *k, const compare_def *d, const gl_tensor *a,
                            const gl_tensor *b)
{
    gl_bcast bc;
    gl_tensor *y;
    const gl_tensor *ops[2] = {a, b};
    gl_status st = check_dtype(k->where, k->node, 0, a->dtype, d->types);
    if (st || (st = check_same_dtype(k->where, k->node, 1, b->dtype, 0, a->dtype)) ||
        (st = broadcast_output(k, ops, 2, GL_DT_BOOL, &bc, &y)) || bc.count == 0)
        return st;
    uint8_t *out = gl_tensor_make_writable(y);
    if (d->f32 && a->dtype == GL_DT_FLOAT) {
        struct f32_compare_ctx c = {d->f32, gl_tensor_data(a), gl_tensor_data(b), out};
        for_each_row(&bc, f32_compare_row, &c);
    } else {
        compare_generic(d, &bc, a, b, out);
    }
    return GL_OK;
}

static gl_status run_compare(gl_kernel_ctx *k, const compare_def *d)
{
    const gl_tensor *a = NULL, *b = NULL;
    gl_status st = need_input(k, 0, &a);
    if (st || (st = need_input(k, 1, &b)))
        return st;
    return compare_on(k, d, a, b);
}

static gl_status run_compare_legacy(gl_kernel_ctx *k, const compare_def *d)
{
    const gl_tensor *a = NULL, *b = NULL;
    gl_tensor_frame view;
    gl_status st = need_input(k, 0, &a);
    if (st || (st = need_input(k, 1, &b)) || (st = legacy_operand(k, a, b, &view)))
        return st;
    return compare_on(k, d, a, &view.t);
}

#define COMPARE_OP(NAME, DEF)                                                              \
    static gl_status infer_##NAME(gl_infer_ctx *c)                                         \
    {                                                                                      \
        return infer_broadcast_op(c, 0, 2, (DEF).types, GL_DT_BOOL);                       \
    }                                                                                      \
    static gl_status kernel_##NAME(gl_kernel_ctx *k) { return run_compare(k, &(DEF)); }

#define COMPARE_OP_LEGACY(NAME, DEF)                                                       \
    static gl_status infer_##NAME##_legacy(gl_infer_ctx *c)                                \
    {                                                                                      \
        return infer_legacy_binary(c, (DEF).types, GL_DT_BOOL);                            \
    }                                                                                      \
    static gl_status kernel_##NAME##_legacy(gl_kernel_ctx *k)                              \
    {                                                                                      \
        return run_compare_legacy(k, &(DEF));                                              \
    }

COMPARE_OP(Equal, EQUAL)
COMPARE_OP(Greater, GREATER)
COMPARE_OP(GreaterOrEqual, GREATER_OR_EQUAL)
COMPARE_OP(Less, LESS)
COMPARE_OP(LessOrEqual, LESS_OR_EQUAL)
COMPARE_OP(And, AND)
COMPARE_OP(Or, OR)
COMPARE_OP(Xor, XOR)
COMPARE_OP_LEGACY(Equal, EQUAL)
COMPARE_OP_LEGACY(Greater, GREATER)
COMPARE_OP_LEGACY(Less, LESS)
COMPARE_OP_LEGACY(And, AND)
COMPARE_OP_LEGACY(Or, OR)
COMPARE_OP_LEGACY(Xor, XOR)

/* ---- variadic: Sum, Mean, Max, Min --------------------------------------------------- */

static gl_status infer_variadic(gl_infer_ctx *c, unsigned accepted)
{
    if (c->n_inputs == 0)
        return gl_fail(GL_ERR_INPUT, "%s: needs at least one input", c->where);
    return infer_broadcast_op(c, 0, c->n_inputs, accepted, GL_DT_UNDEFINED);
}

/* Folds the inputs into the output with d, pairwise, so any number of inputs works with
 * two-operand broadcasting: y = in0 broadcast, then y = d(y, in_i). */
static gl_status run_variadic(gl_kernel_ctx *k, const binary_def *d, bool mean)
{
    const gl_tensor *t = NULL;
    gl_tensor_frame fs;
    gl_tensor *shape = gl_tensor_frame_init(&fs, NULL), *y;
    gl_bcast bc;
    gl_status st = k->n_inputs ? need_input(k, 0, &t)
                               : gl_fail(GL_ERR_INPUT, "%s: needs at least one input", k->where);
    if (st || (st = check_dtype(k->where, k->node, 0, t->dtype, d->types)))
        return st;
    gl_dtype dt = t->dtype;
    shape->rank = t->rank;
    memcpy(shape->dims, t->dims, (size_t)t->rank * sizeof(int64_t));
    for (size_t i = 1; i < k->n_inputs; i++) {
        const gl_tensor *ops[2] = {shape, NULL};
        if ((st = need_input(k, i, &ops[1])) ||
            (st = check_same_dtype(k->where, k->node, i, ops[1]->dtype, 0, dt)) ||
            (st = gl_bcast_init(&bc, ops, 2, k->where)))
            return st;
        shape->rank = bc.rank;
        memcpy(shape->dims, bc.dims, (size_t)bc.rank * sizeof(int64_t));
    }
    if ((st = new_output(k, dt, shape->rank, shape->dims, &y)) || y->count == 0)
        return st;
    for (size_t i = 0; i < k->n_inputs; i++) {
        const gl_tensor *ops[2] = {y, k->in[i]};
        if ((st = gl_bcast_init(&bc, ops, 2, k->where)))
            return st;
        binary_into(i == 0 ? &COPY : d, &bc, y, k->in[i], y);
    }
    if (mean) {
        float *f = dt == GL_DT_FLOAT ? gl_tensor_make_writable(y) : NULL;
        for (int64_t i = 0; i < y->count; i++) {
            if (f)
                f[i] /= (float)k->n_inputs;
            else
                gl_elem_set_f64(y, i, gl_elem_f64(y, i) / (double)k->n_inputs);
        }
    }
    return GL_OK;
}

static gl_status infer_Sum(gl_infer_ctx *c) { return infer_variadic(c, SUM.types); }
static gl_status infer_Mean(gl_infer_ctx *c) { return infer_variadic(c, SUM.types); }
static gl_status infer_Max(gl_infer_ctx *c) { return infer_variadic(c, MAX.types); }
static gl_status infer_Min(gl_infer_ctx *c) { return infer_variadic(c, MIN.types); }
static gl_status kernel_Sum(gl_kernel_ctx *k) { return run_variadic(k, &SUM, false); }
static gl_status kernel_Mean(gl_kernel_ctx *k) { return run_variadic(k, &SUM, true); }
static gl_status kernel_Max(gl_kernel_ctx *k) { return run_variadic(k, &MAX, false); }
static gl_status kernel_Min(gl_kernel_ctx *k) { return run_variadic(k, &MIN, false); }

/* ---- Clip ---------------------------------------------------------------------------- */

/* The bounds, each known in the three arithmetics; an absent bound does not clip an
 * integer (its default is the dtype's limit) and is the dtype's largest finite value for
 * a float (clip_float_defaults). */
typedef struct clip_bounds {
    bool has_lo, has_hi;
    double flo, fhi;
    int64_t ilo, ihi;
} clip_bounds;

/* Opset >= 11: min and max are optional scalar inputs of x's dtype. */
static gl_status clip_bound_input(const gl_kernel_ctx *k, size_t i, gl_dtype dt, bool *has,
                                  double *f, int64_t *v)
{
    const gl_tensor *t = gl_opt_input(k, i);
    *has = t != NULL;
    if (!t)
        return GL_OK;
    gl_status st = check_same_dtype(k->where, k->node, i, t->dtype, 0, dt);
    if (st)
        return st;
    if (t->count != 1)
        return gl_fail(GL_ERR_INPUT, "%s: input '%s' must hold one value, it holds %lld",
                       k->where, input_name(k->node, i), (long long)t->count);
    *f = gl_elem_f64(t, 0);
    *v = gl_elem_i64(t, 0);
    return GL_OK;
}

static void clip_f32(const float *x, float *y, int64_t n, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++) {
        float v = x[i] < lo ? lo : x[i]; /* NaN stays NaN; lo > hi gives hi, as numpy */
        y[i] = v > hi ? hi : v;
    }
}

static void clip_generic(const gl_tensor *x, gl_tensor *y, const clip_bounds *b)
{
    unsigned cls = dtype_class(x->dtype);
    for (int64_t i = 0; i < x->count; i++) {
        if (cls == C_FLOAT) {
            double v = gl_elem_f64(x, i);
            v = b->has_lo && v < b->flo ? b->flo : v;
            gl_elem_set_f64(y, i, b->has_hi && v > b->fhi ? b->fhi : v);
        } else if (cls == C_UINT) {
            uint64_t v = (uint64_t)gl_elem_i64(x, i);
            uint64_t lo = (uint64_t)b->ilo, hi = (uint64_t)b->ihi;
            v = b->has_lo && v < lo ? lo : v;
            gl_elem_set_i64(y, i, (int64_t)(b->has_hi && v > hi ? hi : v));
        } else {
            int64_t v = gl_elem_i64(x, i);
            v = b->has_lo && v < b->ilo ? b->ilo : v;
            gl_elem_set_i64(y, i, b->has_hi && v > b->ihi ? b->ihi : v);
        }
    }
}

static gl_status clip_apply(gl_kernel_ctx *k, const gl_tensor *x, const clip_bounds *b)
{
    gl_tensor *y;
    gl_status st = new_output(k, x->dtype, x->rank, x->dims, &y);
    if (st || x->count == 0)
        return st;
    if (x->dtype == GL_DT_FLOAT)
        clip_f32(gl_tensor_data(x), gl_tensor_make_writable(y), x->count,
                 b->has_lo ? (float)b->flo : -INFINITY, b->has_hi ? (float)b->fhi : INFINITY);
    else
        clip_generic(x, y, b);
    return GL_OK;
}

/* ONNX: min and max "default to numeric_limits::lowest() and numeric_limits::max()": an
 * infinity clips to the largest finite value of x's float dtype (as ONNX Runtime does). */
static void clip_float_defaults(gl_dtype dt, clip_bounds *b)
{
    double max = dt == GL_DT_DOUBLE     ? DBL_MAX
                 : dt == GL_DT_FLOAT16  ? 65504.0
                 : dt == GL_DT_BFLOAT16 ? 0x1.fep127 /* 0x7f7f */
                                        : FLT_MAX;
    if (!b->has_lo)
        b->flo = -max;
    if (!b->has_hi)
        b->fhi = max;
    b->has_lo = b->has_hi = true;
}

static gl_status kernel_Clip(gl_kernel_ctx *k)
{
    const gl_tensor *x = NULL;
    clip_bounds b = {0};
    gl_status st = need_input(k, 0, &x);
    if (st || (st = check_dtype(k->where, k->node, 0, x->dtype, C_NUM)) ||
        (st = clip_bound_input(k, 1, x->dtype, &b.has_lo, &b.flo, &b.ilo)) ||
        (st = clip_bound_input(k, 2, x->dtype, &b.has_hi, &b.fhi, &b.ihi)))
        return st;
    if (dtype_class(x->dtype) == C_FLOAT)
        clip_float_defaults(x->dtype, &b);
    return clip_apply(k, x, &b);
}

/* Opset < 11: float attributes whose defaults are the float range. */
static gl_status kernel_Clip_legacy(gl_kernel_ctx *k)
{
    const gl_tensor *x = NULL;
    gl_status st = need_input(k, 0, &x);
    if (st || (st = check_dtype(k->where, k->node, 0, x->dtype, C_FLOAT)))
        return st;
    clip_bounds b = {.has_lo = true, .has_hi = true,
                     .flo = gl_node_attr_float(k->node, "min", -FLT_MAX),
                     .fhi = gl_node_attr_float(k->node, "max", FLT_MAX)};
    return clip_apply(k, x, &b);
}

static gl_status infer_Clip(gl_infer_ctx *c)
{
    gl_dtype dt;
    bool any_known;
    gl_status st = infer_common_dtype(c, 0, 3, C_NUM, &dt, &any_known);
    return st ? st : infer_unary_types(c, C_NUM);
}

static gl_status infer_Clip_legacy(gl_infer_ctx *c) { return infer_unary_types(c, C_FLOAT); }

/* ---- Where --------------------------------------------------------------------------- */

struct where_ctx {
    size_t esize;
    const uint8_t *cond;
    const char *x, *w;
    char *y;
};

#define WHERE_ROW(T)                                                                       \
    for (int64_t i = 0; i < n; i++)                                                        \
        ((T *)c->y)[o + i] = c->cond[off[0] + i * step[0]]                                 \
                                 ? ((const T *)c->x)[off[1] + i * step[1]]                 \
                                 : ((const T *)c->w)[off[2] + i * step[2]]

static void where_row(void *ctx, const int64_t *off, const int64_t *step, int64_t o, int64_t n)
{
    const struct where_ctx *c = ctx;
    switch (c->esize) {
    case 1: WHERE_ROW(uint8_t); break;
    case 2: WHERE_ROW(uint16_t); break;
    case 4: WHERE_ROW(uint32_t); break;
    case 8: WHERE_ROW(uint64_t); break;
    default: /* complex */
        for (int64_t i = 0; i < n; i++) {
            const char *src = c->cond[off[0] + i * step[0]]
                                  ? c->x + (off[1] + i * step[1]) * c->esize
                                  : c->w + (off[2] + i * step[2]) * c->esize;
            memcpy(c->y + (o + i) * c->esize, src, c->esize);
        }
    }
}

static gl_status where_strings(gl_kernel_ctx *k, const gl_bcast *bc, const gl_tensor *const *ops,
                               gl_tensor *y)
{
    const uint8_t *cond = gl_tensor_data(ops[0]);
    const gl_bytes *x = gl_tensor_data(ops[1]), *w = gl_tensor_data(ops[2]);
    gl_bytes *out = gl_tensor_make_writable(y);
    gl_bcast_iter it;
    gl_bcast_iter_start(&it, bc);
    for (int64_t i = 0; i < bc->count; i++, gl_bcast_iter_next(&it)) {
        const gl_bytes *s = cond[it.off[0]] ? &x[it.off[1]] : &w[it.off[2]];
        if (!(out[i].data = malloc(s->len + 1)))
            return gl_fail(GL_ERR_NOMEM, "%s: out of memory copying strings", k->where);
        if (s->len)
            memcpy(out[i].data, s->data, s->len);
        out[i].data[s->len] = 0;
        out[i].len = s->len;
    }
    return GL_OK;
}

static gl_status kernel_Where(gl_kernel_ctx *k)
{
    const gl_tensor *ops[3];
    gl_bcast bc;
    gl_tensor *y;
    gl_status st = GL_OK;
    for (size_t i = 0; i < 3 && !st; i++)
        st = need_input(k, i, &ops[i]);
    if (st || (st = check_dtype(k->where, k->node, 0, ops[0]->dtype, C_BOOL)) ||
        (st = check_same_dtype(k->where, k->node, 2, ops[2]->dtype, 1, ops[1]->dtype)) ||
        (st = broadcast_output(k, ops, 3, ops[1]->dtype, &bc, &y)) || bc.count == 0)
        return st;
    if (y->dtype == GL_DT_STRING)
        return where_strings(k, &bc, ops, y);
    struct where_ctx c = {gl_dtype_size(y->dtype), gl_tensor_data(ops[0]), gl_tensor_data(ops[1]),
                          gl_tensor_data(ops[2]), gl_tensor_make_writable(y)};
    for_each_row(&bc, where_row, &c);
    return GL_OK;
}

static gl_status infer_Where(gl_infer_ctx *c)
{
    const gl_type *cond = gl_infer_input(c, 0);
    if (cond && cond->dtype != GL_DT_UNDEFINED) {
        gl_status st = check_dtype(c->where, c->node, 0, cond->dtype, C_BOOL);
        if (st)
            return st;
    }
    gl_dtype dt;
    bool any_known;
    gl_shape shape;
    gl_status st = infer_common_dtype(c, 1, 2, C_ANY, &dt, &any_known);
    if (st || !any_known || (st = gl_infer_broadcast(c, 0, 3, &shape)))
        return st;
    gl_infer_set(c, 0, dt, &shape);
    gl_shape_free(&shape);
    return GL_OK;
}

/* ---- PRelu --------------------------------------------------------------------------- */

/* Opset >= 7: the slope broadcasts to X's shape (unidirectionally). */
static gl_status prelu_on(gl_kernel_ctx *k, const gl_tensor *x, const gl_tensor *slope)
{
    gl_bcast bc;
    const gl_tensor *ops[2] = {x, slope};
    gl_status st = gl_bcast_init(&bc, ops, 2, k->where);
    if (st)
        return st;
    if (bc.rank != x->rank || memcmp(bc.dims, x->dims, (size_t)x->rank * sizeof(int64_t)) != 0) {
        char sx[256], ss[256];
        return gl_fail(GL_ERR_INPUT, "%s: slope '%s' %s does not broadcast to X's shape %s",
                       k->where, input_name(k->node, 1),
                       format_dims(slope->dims, slope->rank, ss, sizeof(ss)),
                       format_dims(x->dims, x->rank, sx, sizeof(sx)));
    }
    return binary_on(k, &PRELU, x, slope);
}

static gl_status kernel_PRelu(gl_kernel_ctx *k)
{
    const gl_tensor *x = NULL, *slope = NULL;
    gl_status st = need_input(k, 0, &x);
    if (st || (st = need_input(k, 1, &slope)))
        return st;
    return prelu_on(k, x, slope);
}

/* Opset < 7 (Caffe's PReLU): one slope for all, or one per channel (X's dim 1). Any
 * other slope shape must broadcast to X as in later opsets. */
static gl_status kernel_PRelu_legacy(gl_kernel_ctx *k)
{
    const gl_tensor *x = NULL, *slope = NULL;
    gl_status st = need_input(k, 0, &x);
    if (st || (st = need_input(k, 1, &slope)))
        return st;
    gl_tensor_frame f;
    gl_tensor *view = gl_tensor_frame_init(&f, slope); /* a header over slope's bytes */
    if (slope->count == 1) {
        view->rank = 0;
    } else if (slope->rank == 1 && x->rank >= 2 && slope->dims[0] == x->dims[1]) {
        view->rank = x->rank;
        for (int d = 0; d < x->rank; d++)
            view->dims[d] = d == 1 ? slope->dims[0] : 1;
    }
    return prelu_on(k, x, view);
}

static gl_status infer_PRelu(gl_infer_ctx *c)
{
    gl_dtype dt;
    bool any_known;
    gl_status st = infer_common_dtype(c, 0, 2, PRELU.types, &dt, &any_known);
    return st ? st : infer_unary_types(c, PRELU.types);
}

static gl_status infer_PRelu_legacy(gl_infer_ctx *c) { return infer_PRelu(c); }

/* ---- Cast and CastLike --------------------------------------------------------------- */

/* One number in the arithmetic its dtype needs, so no conversion goes through a type
 * that loses precision (int64 -> float is rounded once, uint64 keeps its top bit). */
typedef struct num {
    enum { NUM_F, NUM_I, NUM_U } kind;
    double f;
    int64_t i;
    uint64_t u;
} num;

static num load_num(const gl_tensor *t, int64_t i)
{
    switch (dtype_class(t->dtype)) {
    case C_FLOAT: return (num){.kind = NUM_F, .f = gl_elem_f64(t, i)};
    case C_UINT: return (num){.kind = NUM_U, .u = (uint64_t)gl_elem_i64(t, i)};
    default: return (num){.kind = NUM_I, .i = gl_elem_i64(t, i)};
    }
}

static float num_to_f32(num v)
{
    return v.kind == NUM_F ? (float)v.f : v.kind == NUM_I ? (float)v.i : (float)v.u;
}

/* Integer bits of v for an integer destination: floats truncate toward zero, NaN is 0,
 * values beyond the 64-bit range saturate (C leaves those undefined). */
static int64_t num_to_int_bits(num v, bool to_u64)
{
    if (v.kind == NUM_I)
        return v.i;
    if (v.kind == NUM_U)
        return (int64_t)v.u;
    if (isnan(v.f))
        return 0;
    if (to_u64 && v.f >= 9223372036854775808.0)
        return v.f >= 18446744073709551616.0 ? (int64_t)UINT64_MAX : (int64_t)(uint64_t)v.f;
    if (v.f >= 9223372036854775808.0)
        return INT64_MAX;
    if (v.f < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v.f;
}

/* float -> bfloat16 the way the onnx 1.12 reference (and its suite) does before opset
 * 19: the top 16 bits, NaN kept quiet. */
static uint16_t f32_to_bf16_truncate(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return (uint16_t)(isnan(f) ? (u >> 16) | 0x40 : u >> 16);
}

/* bf16_round: round to nearest even (opset >= 19), else truncate. */
static void store_num(gl_tensor *t, int64_t i, num v, bool bf16_round)
{
    void *p = t->buf->data; /* a tensor the kernel just created */
    switch (t->dtype) {
    case GL_DT_FLOAT: ((float *)p)[i] = num_to_f32(v); break;
    case GL_DT_DOUBLE:
        ((double *)p)[i] = v.kind == NUM_F ? v.f : v.kind == NUM_I ? (double)v.i : (double)v.u;
        break;
    case GL_DT_FLOAT16: ((uint16_t *)p)[i] = gl_f32_to_f16(num_to_f32(v)); break;
    case GL_DT_BFLOAT16:
        ((uint16_t *)p)[i] = bf16_round ? gl_f32_to_bf16(num_to_f32(v))
                                        : f32_to_bf16_truncate(num_to_f32(v));
        break;
    case GL_DT_BOOL: /* NaN is true, as in numpy */
        ((uint8_t *)p)[i] = v.kind == NUM_F ? v.f != 0 : v.kind == NUM_I ? v.i != 0 : v.u != 0;
        break;
    default: gl_elem_set_i64(t, i, num_to_int_bits(v, t->dtype == GL_DT_UINT64));
    }
}

/* Shortest decimal digits that read back as v in dtype dt (numpy's repr): "d.ddde±x". */
static bool reads_back(const char *s, double v, gl_dtype dt)
{
    switch (dt) {
    case GL_DT_FLOAT: return strtof(s, NULL) == (float)v;
    case GL_DT_FLOAT16: return gl_f32_to_f16(strtof(s, NULL)) == gl_f32_to_f16((float)v);
    case GL_DT_BFLOAT16: return gl_f32_to_bf16(strtof(s, NULL)) == gl_f32_to_bf16((float)v);
    default: return strtod(s, NULL) == v;
    }
}


/* A float as numpy's str() prints a scalar of its dtype: the shortest digits that read
 * back as the same value, positional ("0.5", "100.0") for 1e-4 <= |v| < 1e16, else
 * scientific ("1e-05", "1.5e+16"); "nan", "inf", "-inf". `out` holds 64 bytes. */
static void format_float(double v, gl_dtype dt, char *out)
{
    if (isnan(v) || isinf(v) || v == 0) {
        strcpy(out, isnan(v) ? "nan" : isinf(v) ? (v < 0 ? "-inf" : "inf")
                                     : signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char sci[48], digits[24];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(sci, sizeof(sci), "%.*e", prec, v);
        if (reads_back(sci, v, dt))
            break;
    }
    /* sci is "[-]d.ddde±xx": keep the digits without trailing zeros, and the exponent */
    const char *p = sci;
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    int e10 = *p == 'e' ? atoi(p + 1) : 0;
    size_t n = 0;
    if (v < 0)
        out[n++] = '-';
    if (fabs(v) >= 1e-4 && fabs(v) < 1e16) {
        if (e10 >= 0) {
            for (int i = 0; i <= e10; i++)
                out[n++] = i < nd ? digits[i] : '0';
            out[n++] = '.';
            for (int i = e10 + 1; i < nd; i++)
                out[n++] = digits[i];
            if (nd <= e10 + 1)
                out[n++] = '0';
        } else {
            out[n++] = '0';
            out[n++] = '.';
            for (int i = 0; i < -e10 - 1; i++)
                out[n++] = '0';
            for (int i = 0; i < nd; i++)
                out[n++] = digits[i];
        }
        out[n] = 0;
    } else {
        out[n++] = digits[0];
        if (nd > 1)
            out[n++] = '.';
        for (int i = 1; i < nd; i++)
            out[n++] = digits[i];
        snprintf(out + n, 64 - n, "e%c%02d", e10 < 0 ? '-' : '+', abs(e10));
    }
}

/* Element i as text, as numpy's str() would print it. `out` holds 64 bytes. */
static void format_num(const gl_tensor *t, int64_t i, char *out)
{
    switch (dtype_class(t->dtype)) {
    case C_FLOAT: format_float(gl_elem_f64(t, i), t->dtype, out); break;
    case C_UINT: snprintf(out, 64, "%" PRIu64, (uint64_t)gl_elem_i64(t, i)); break;
    case C_BOOL: strcpy(out, gl_elem_i64(t, i) ? "True" : "False"); break;
    default: snprintf(out, 64, "%" PRId64, gl_elem_i64(t, i)); break;
    }
}

/* Text s (NUL-terminated, surrounding blanks allowed) as a number for dtype dt: "1.5",
 * "-1e-5", "INF", "+INF", "-inf", "NaN" in any case (as strtod reads them); integer
 * text stays exact for integer dtypes; "true"/"false" for bool. */
static bool parse_num(char *s, gl_dtype dt, num *v)
{
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    char *stop = s + strlen(s);
    while (stop > s && (stop[-1] == ' ' || stop[-1] == '\t' || stop[-1] == '\n'))
        *--stop = 0;
    if (stop == s)
        return false;
    if (dt == GL_DT_BOOL && (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0)) {
        *v = (num){.kind = NUM_I, .i = strcasecmp(s, "true") == 0};
        return true;
    }
    char *end;
    errno = 0;
    if (dt == GL_DT_UINT64 && !strchr(s, '-')) {
        unsigned long long u = strtoull(s, &end, 10);
        if (end == stop && errno == 0) {
            *v = (num){.kind = NUM_U, .u = u};
            return true;
        }
    } else if (dtype_class(dt) & C_INT) {
        long long i = strtoll(s, &end, 10);
        if (end == stop && errno == 0) {
            *v = (num){.kind = NUM_I, .i = i};
            return true;
        }
    }
    /* float32 text is rounded once, straight to float */
    bool single = dt == GL_DT_FLOAT || dt == GL_DT_FLOAT16 || dt == GL_DT_BFLOAT16;
    double f = single ? strtof(s, &end) : strtod(s, &end);
    *v = (num){.kind = NUM_F, .f = f};
    return end == stop;
}

static gl_status cast_to_strings(gl_kernel_ctx *k, const gl_tensor *x, gl_tensor *y)
{
    gl_bytes *out = gl_tensor_make_writable(y);
    char text[64];
    for (int64_t i = 0; i < x->count; i++) {
        format_num(x, i, text);
        size_t len = strlen(text);
        if (!(out[i].data = malloc(len + 1)))
            return gl_fail(GL_ERR_NOMEM, "%s: out of memory formatting numbers", k->where);
        memcpy(out[i].data, text, len + 1);
        out[i].len = len;
    }
    return GL_OK;
}

static gl_status cast_from_strings(gl_kernel_ctx *k, const gl_tensor *x, gl_tensor *y,
                                   bool bf16_round)
{
    const gl_bytes *in = gl_tensor_data(x);
    char small[128];
    for (int64_t i = 0; i < x->count; i++) {
        size_t len = in[i].len;
        char *text = len < sizeof(small) ? small : malloc(len + 1);
        if (!text)
            return gl_fail(GL_ERR_NOMEM, "%s: out of memory parsing strings", k->where);
        if (len)
            memcpy(text, in[i].data, len);
        text[len] = 0;
        num v;
        bool ok = strlen(text) == len && parse_num(text, y->dtype, &v);
        if (text != small)
            free(text);
        if (!ok)
            return gl_fail(GL_ERR_INPUT, "%s: element %lld of input '%s' ('%.*s') is not a "
                           "number", k->where, (long long)i, input_name(k->node, 0),
                           (int)(len > 40 ? 40 : len), len ? (const char *)in[i].data : "");
        store_num(y, i, v, bf16_round);
    }
    return GL_OK;
}

/* Text conversions must not depend on the process locale (a TUI may set one whose
 * decimal point is ','): they run under the C locale, for this thread only. */
static gl_status cast_text(gl_kernel_ctx *k, const gl_tensor *x, gl_tensor *y, bool bf16_round)
{
    locale_t c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
    gl_status st = y->dtype == GL_DT_STRING ? cast_to_strings(k, x, y)
                                             : cast_from_strings(k, x, y, bf16_round);
    if (c_locale) {
        uselocale(old);
        freelocale(c_locale);
    }
    return st;
}

static gl_status cast_to(gl_kernel_ctx *k, const gl_tensor *x, gl_dtype to, bool bf16_round)
{
    gl_tensor *y;
    gl_status st = check_dtype(k->where, k->node, 0, x->dtype, C_ANY);
    if (st)
        return st;
    if (to == x->dtype)
        return gl_out_share(k, 0, x) ? GL_OK : GL_ERR_INTERNAL;
    if ((st = new_output(k, to, x->rank, x->dims, &y)) || x->count == 0)
        return st;
    if (to == GL_DT_STRING || x->dtype == GL_DT_STRING)
        return cast_text(k, x, y, bf16_round);
    for (int64_t i = 0; i < x->count; i++)
        store_num(y, i, load_num(x, i), bf16_round);
    return GL_OK;
}

/* The `to` attribute: a type number, or in Cast-1 a type name ("FLOAT"). */
static gl_status cast_target(const char *where, const gl_node *n, gl_dtype *to)
{
    const gl_attr *a = gl_node_attr(n, "to");
    if (!a)
        return gl_fail(GL_ERR_INPUT, "%s: attribute 'to' is missing", where);
    *to = GL_DT_UNDEFINED;
    if (a->type == GL_ATTR_STRING) {
        const char *name = a->s.data ? (const char *)a->s.data : "";
        for (int dt = 1; dt < GL_DT_COUNT; dt++)
            if (strcasecmp(name, gl_dtype_onnx_name((gl_dtype)dt)) == 0)
                *to = (gl_dtype)dt;
        if (*to == GL_DT_UNDEFINED)
            return gl_fail(GL_ERR_INPUT, "%s: to '%s' is not a type", where, name);
    } else if (a->type == GL_ATTR_INT && gl_dtype_valid((int)a->i) && a->i == (int)a->i) {
        *to = (gl_dtype)a->i;
    } else {
        return gl_fail(GL_ERR_INPUT, "%s: to %lld is not a type", where, (long long)a->i);
    }
    if (!(dtype_class(*to) & C_ANY))
        return gl_fail(GL_ERR_INPUT, "%s: cannot cast to %s", where, gl_dtype_name(*to));
    return GL_OK;
}

static gl_status infer_Cast(gl_infer_ctx *c)
{
    gl_dtype to;
    gl_status st = cast_target(c->where, c->node, &to);
    return st ? st : infer_shape_as_input(c, C_ANY, to);
}

static gl_status run_cast(gl_kernel_ctx *k, bool bf16_round)
{
    const gl_tensor *x = NULL;
    gl_dtype to;
    gl_status st = need_input(k, 0, &x);
    if (st || (st = cast_target(k->where, k->node, &to)))
        return st;
    return cast_to(k, x, to, bf16_round);
}

static gl_status kernel_Cast(gl_kernel_ctx *k) { return run_cast(k, false); }
static gl_status kernel_Cast_19(gl_kernel_ctx *k) { return run_cast(k, true); }

static gl_status infer_CastLike(gl_infer_ctx *c)
{
    const gl_type *like = gl_infer_input(c, 1);
    gl_dtype to = like ? like->dtype : GL_DT_UNDEFINED;
    if (to != GL_DT_UNDEFINED) {
        gl_status st = check_dtype(c->where, c->node, 1, to, C_ANY);
        if (st)
            return st;
    }
    return infer_shape_as_input(c, C_ANY, to);
}

static gl_status run_castlike(gl_kernel_ctx *k, bool bf16_round)
{
    const gl_tensor *x = NULL, *like = NULL;
    gl_status st = need_input(k, 0, &x);
    if (st || (st = need_input(k, 1, &like)) ||
        (st = check_dtype(k->where, k->node, 1, like->dtype, C_ANY)))
        return st;
    return cast_to(k, x, like->dtype, bf16_round);
}

static gl_status kernel_CastLike(gl_kernel_ctx *k) { return run_castlike(k, false); }
static gl_status kernel_CastLike_19(gl_kernel_ctx *k) { return run_castlike(k, true); }

/* ---- the table ----------------------------------------------------------------------- */

/* Entries cover opsets from `since` to the next entry of the op. The opset < 7 binary
 * ops broadcast by their `broadcast`/`axis` attributes, not numpy's rules, so they carry
 * no GL_OP_BROADCAST. Sum/Mean/Max/Min required equal shapes before opset 8: numpy
 * broadcasting of equal shapes is the identity, so one entry serves all. */
#define EW GL_OP_ELEMENTWISE
#define BC GL_OP_BROADCAST
#define UNARY(OP, SINCE) {"", #OP, SINCE, infer_##OP, kernel_##OP, EW}
#define BINARY(OP, SINCE) {"", #OP, SINCE, infer_##OP, kernel_##OP, BC}
#define LEGACY(OP, SINCE, FLAGS) {"", #OP, SINCE, infer_##OP##_legacy, kernel_##OP##_legacy, FLAGS}

static const gl_op_def elementwise_ops[] = {
    UNARY(Abs, 1),
    UNARY(Acos, 7),
    UNARY(Acosh, 9),
    LEGACY(Add, 1, 0),
    BINARY(Add, 7),
    LEGACY(And, 1, 0),
    BINARY(And, 7),
    UNARY(Asin, 7),
    UNARY(Asinh, 9),
    UNARY(Atan, 7),
    UNARY(Atanh, 9),
    BINARY(BitShift, 11),
    UNARY(Cast, 1),
    {"", "Cast", 19, infer_Cast, kernel_Cast_19, EW}, /* bfloat16 rounds to nearest even */
    {"", "CastLike", 15, infer_CastLike, kernel_CastLike, 0},
    {"", "CastLike", 19, infer_CastLike, kernel_CastLike_19, 0},
    UNARY(Ceil, 1),
    UNARY(Celu, 12),
    LEGACY(Clip, 1, EW),
    UNARY(Clip, 11), /* min/max are scalar inputs: still one element per element of X */
    UNARY(Cos, 7),
    UNARY(Cosh, 9),
    LEGACY(Div, 1, 0),
    BINARY(Div, 7),
    UNARY(Elu, 1),
    LEGACY(Equal, 1, 0),
    BINARY(Equal, 7),
    UNARY(Erf, 9),
    UNARY(Exp, 1),
    UNARY(Floor, 1),
    LEGACY(Greater, 1, 0),
    BINARY(Greater, 7),
    BINARY(GreaterOrEqual, 12),
    UNARY(HardSigmoid, 1),
    UNARY(HardSwish, 14),
    UNARY(IsInf, 10),
    UNARY(IsNaN, 9),
    UNARY(LeakyRelu, 1),
    LEGACY(Less, 1, 0),
    BINARY(Less, 7),
    BINARY(LessOrEqual, 12),
    UNARY(Log, 1),
    BINARY(Max, 1),
    BINARY(Mean, 1),
    BINARY(Min, 1),
    BINARY(Mod, 10),
    LEGACY(Mul, 1, 0),
    BINARY(Mul, 7),
    UNARY(Neg, 1),
    UNARY(Not, 1),
    LEGACY(Or, 1, 0),
    BINARY(Or, 7),
    LEGACY(PRelu, 1, 0),
    BINARY(PRelu, 7),
    LEGACY(Pow, 1, 0),
    BINARY(Pow, 7),
    UNARY(Reciprocal, 1),
    UNARY(Relu, 1),
    UNARY(Round, 11),
    UNARY(Selu, 1),
    UNARY(Shrink, 9),
    UNARY(Sigmoid, 1),
    UNARY(Sign, 9),
    UNARY(Sin, 7),
    UNARY(Sinh, 9),
    UNARY(Softplus, 1),
    UNARY(Softsign, 1),
    UNARY(Sqrt, 1),
    LEGACY(Sub, 1, 0),
    BINARY(Sub, 7),
    BINARY(Sum, 1),
    UNARY(Tan, 7),
    UNARY(Tanh, 1),
    UNARY(ThresholdedRelu, 10),
    BINARY(Where, 9),
    LEGACY(Xor, 1, 0),
    BINARY(Xor, 7),
};

const gl_op_family gl_ops_elementwise = {"elementwise", elementwise_ops,
                                         GL_ARRAY_LEN(elementwise_ops)};

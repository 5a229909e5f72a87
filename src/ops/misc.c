/* misc.c — signal processing (DFT, STFT, window functions, mel filter banks), text
 * (TfIdfVectorizer, StringNormalizer) and random generators.
 *
 * Fourier transforms run in double whatever the tensor dtype, with an O(n log n) FFT for
 * every length (mixed radix for small prime factors, Bluestein's chirp-z otherwise): the
 * conformance references are numpy's double-precision FFTs rounded to float. */
#include "ops/families.h"
#include "ops/opkit.h"
#include "util/hash.h"
#include "util/rng.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- shared helpers -------------------------------------------------------------------------- */

/* Like gl_scalar_int, for a one-element number of any int or float type. */
static bool scalar_float(const gl_tensor *t, const char *where, const char *what, double *v)
{
    if (!t || t->count != 1 || (!gl_dtype_is_float(t->dtype) && !gl_dtype_is_int(t->dtype))) {
        gl_fail(GL_ERR_INPUT, "%s: %s must be a single number", where, what);
        return false;
    }
    *v = gl_elem_f64(t, 0);
    return true;
}

/* v as an output dtype, which must be one of `allowed`. */
static gl_status dtype_allowed(int64_t v, const gl_dtype *allowed, size_t n_allowed,
                               const char *where, const char *what, gl_dtype *out)
{
    for (size_t i = 0; i < n_allowed; i++) {
        if (allowed[i] == v) {
            *out = (gl_dtype)v;
            return GL_OK;
        }
    }
    return gl_fail(GL_ERR_INPUT, "%s: %s %lld (%s) is not an allowed output type", where, what,
                   (long long)v, gl_dtype_valid((int)v) ? gl_dtype_name((gl_dtype)v) : "invalid");
}

/* The dtype attribute `name` (or dflt when absent), which must be one of `allowed`. */
static gl_status dtype_attr(const gl_node *n, const char *name, gl_dtype dflt,
                            const gl_dtype *allowed, size_t n_allowed, const char *where,
                            gl_dtype *out)
{
    return dtype_allowed(gl_node_attr_int(n, name, dflt), allowed, n_allowed, where, name, out);
}

static const gl_dtype real_types[] = {
    GL_DT_UINT8, GL_DT_UINT16, GL_DT_UINT32, GL_DT_UINT64, GL_DT_INT8, GL_DT_INT16,
    GL_DT_INT32, GL_DT_INT64, GL_DT_FLOAT16, GL_DT_FLOAT, GL_DT_DOUBLE, GL_DT_BFLOAT16,
};
static const gl_dtype float_types[] = {GL_DT_FLOAT16, GL_DT_FLOAT, GL_DT_DOUBLE};

/* ---- FFT ---------------------------------------------------------------------------------- */

typedef struct cplx {
    double re, im;
} cplx;

static inline cplx cmul(cplx a, cplx b)
{
    return (cplx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

/* Largest prime factor handled by the mixed-radix recursion (its combine step costs
 * n * factor); lengths with larger prime factors go through Bluestein. */
#define FFT_MAX_RADIX 64

typedef struct fft_plan {
    int64_t n;
    cplx *tw;             /* exp(-2 pi i k / n), k < n */
    cplx *scratch;        /* combine buffer, n entries */
    /* Bluestein (NULL sub when not used): */
    struct fft_plan *sub; /* power-of-two plan of length m >= 2n - 1 */
    cplx *chirp;          /* exp(-pi i k^2 / n), k < n */
    cplx *kernel;         /* FFT of the conjugate chirp, wrapped, m entries */
    cplx *work;           /* m entries */
} fft_plan;

static int64_t smallest_factor(int64_t n)
{
    for (int64_t f = 2; f * f <= n; f++)
        if (n % f == 0)
            return f;
    return n;
}

static int64_t largest_factor(int64_t n)
{
    int64_t big = 1;
    for (int64_t f = 2; f * f <= n; f++)
        while (n % f == 0)
            n /= f, big = f;
    return n > 1 ? n : big;
}

static void fft_plan_free(fft_plan *p)
{
    if (!p)
        return;
    free(p->tw);
    free(p->scratch);
    free(p->chirp);
    free(p->kernel);
    free(p->work);
    fft_plan_free(p->sub);
    free(p->sub);
    memset(p, 0, sizeof(*p));
}

static void fft_run(const fft_plan *p, const cplx *in, cplx *out);

static gl_status fft_plan_init(fft_plan *p, int64_t n)
{
    memset(p, 0, sizeof(*p));
    p->n = n;
    p->tw = malloc((size_t)n * sizeof(cplx));
    p->scratch = malloc((size_t)n * sizeof(cplx));
    if (!p->tw || !p->scratch)
        goto nomem;
    for (int64_t k = 0; k < n; k++) {
        double a = -2.0 * M_PI * (double)k / (double)n;
        p->tw[k] = (cplx){cos(a), sin(a)};
    }
    if (n <= FFT_MAX_RADIX || largest_factor(n) <= FFT_MAX_RADIX)
        return GL_OK;
    int64_t m = 1;
    while (m < 2 * n - 1)
        m *= 2;
    p->sub = calloc(1, sizeof(*p->sub));
    p->chirp = malloc((size_t)n * sizeof(cplx));
    p->kernel = calloc((size_t)m, sizeof(cplx));
    p->work = malloc((size_t)m * sizeof(cplx));
    if (!p->sub || !p->chirp || !p->kernel || !p->work || fft_plan_init(p->sub, m) != GL_OK)
        goto nomem;
    /* k^2 mod 2n by differences keeps the angle exact for large k. */
    for (int64_t k = 0, sq = 0; k < n; k++) {
        double a = -M_PI * (double)sq / (double)n;
        p->chirp[k] = (cplx){cos(a), sin(a)};
        sq = (sq + 2 * k + 1) % (2 * n);
    }
    for (int64_t k = 0; k < n; k++) {
        cplx c = {p->chirp[k].re, -p->chirp[k].im};
        p->work[k] = c;
        if (k)
            p->work[m - k] = c;
    }
    for (int64_t k = n; k <= m - n; k++)
        p->work[k] = (cplx){0, 0};
    fft_run(p->sub, p->work, p->kernel);
    return GL_OK;
nomem:
    fft_plan_free(p);
    return gl_fail(GL_ERR_NOMEM, "cannot allocate an FFT of length %lld", (long long)n);
}

/* Mixed-radix decimation in time: n points of `in` (stride `stride`) into out[0..n);
 * tw_step = N / n picks this size's roots from the top-level table. */
static void fft_rec(const fft_plan *p, const cplx *in, int64_t stride, cplx *out, int64_t n,
                    int64_t tw_step)
{
    if (n == 1) {
        out[0] = in[0];
        return;
    }
    int64_t r = smallest_factor(n), m = n / r;
    for (int64_t j = 0; j < r; j++)
        fft_rec(p, in + j * stride, stride * r, out + j * m, m, tw_step * r);
    cplx *t = p->scratch; /* free here: the children's combines are done */
    for (int64_t k = 0; k < m; k++) {
        for (int64_t j = 0; j < r; j++)
            t[j] = cmul(out[j * m + k], p->tw[j * k * tw_step]);
        for (int64_t q = 0; q < r; q++) {
            cplx acc = t[0];
            for (int64_t j = 1; j < r; j++) {
                cplx w = p->tw[((j * q) % r) * m * tw_step];
                cplx v = cmul(t[j], w);
                acc.re += v.re;
                acc.im += v.im;
            }
            out[q * m + k] = acc;
        }
    }
}

/* Forward DFT of in[0..n) into out[0..n) (in != out). */
static void fft_run(const fft_plan *p, const cplx *in, cplx *out)
{
    if (!p->sub) {
        fft_rec(p, in, 1, out, p->n, 1);
        return;
    }
    /* Bluestein: X_k = w_k * sum_j (x_j w_j) conj(w_{k-j}), a convolution done by FFTs. */
    int64_t n = p->n, m = p->sub->n;
    cplx *a = p->work;
    cplx *buf = malloc((size_t)m * sizeof(cplx));
    if (!buf) { /* fall back to the direct sum: slower, never wrong */
        for (int64_t k = 0; k < n; k++) {
            cplx acc = {0, 0};
            for (int64_t j = 0; j < n; j++) {
                cplx v = cmul(in[j], p->tw[(j * k) % n]);
                acc.re += v.re, acc.im += v.im;
            }
            out[k] = acc;
        }
        return;
    }
    for (int64_t k = 0; k < m; k++)
        a[k] = k < n ? cmul(in[k], p->chirp[k]) : (cplx){0, 0};
    fft_run(p->sub, a, buf);
    for (int64_t k = 0; k < m; k++) {
        cplx v = cmul(buf[k], p->kernel[k]);
        a[k] = (cplx){v.re, -v.im}; /* inverse FFT as conj(FFT(conj(.))) / m */
    }
    fft_run(p->sub, a, buf);
    for (int64_t k = 0; k < n; k++) {
        cplx v = {buf[k].re / (double)m, -buf[k].im / (double)m};
        out[k] = cmul(v, p->chirp[k]);
    }
    free(buf);
}

/* DFT (or inverse, scaled by 1/n) of in[0..n) into out[0..n). */
static void dft_line(const fft_plan *p, cplx *in, cplx *out, bool inverse)
{
    if (!inverse) {
        fft_run(p, in, out);
        return;
    }
    for (int64_t k = 0; k < p->n; k++)
        in[k].im = -in[k].im;
    fft_run(p, in, out);
    for (int64_t k = 0; k < p->n; k++)
        out[k] = (cplx){out[k].re / (double)p->n, -out[k].im / (double)p->n};
}

/* ---- DFT ------------------------------------------------------------------------------------ */

/* Element i of a float tensor as double (fast path for float32). */
static inline double fget(const gl_tensor *t, int64_t i)
{
    return t->dtype == GL_DT_FLOAT ? ((const float *)gl_tensor_data(t))[i] : gl_elem_f64(t, i);
}

static inline void fset(gl_tensor *t, int64_t i, double v)
{
    if (t->dtype == GL_DT_FLOAT)
        ((float *)t->buf->data)[i] = (float)v;
    else
        gl_elem_set_f64(t, i, v);
}

typedef struct dft_args {
    int axis;        /* in the input's dims */
    int64_t n;       /* transform length (dft_length or the axis' size) */
    int64_t out_len; /* n, or n/2 + 1 when onesided */
    bool inverse, onesided;
} dft_args;

static gl_status dft_attrs(const gl_node *n, int rank, const char *where, dft_args *a)
{
    if (rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: input has rank %d, expected at least 2 "
                       "([batch, signal..., 1 or 2])", where, rank);
    a->inverse = gl_node_attr_int(n, "inverse", 0) != 0;
    a->onesided = gl_node_attr_int(n, "onesided", 0) != 0;
    /* The axis counts the signal dims (the last, complex, one excluded). */
    return gl_axis_normalize(gl_node_attr_int(n, "axis", 1), rank - 1, false, where, "axis",
                             &a->axis) ? GL_OK : GL_ERR_INPUT;
}

static gl_status dft_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x || x->shape.rank == GL_RANK_UNKNOWN) {
        if (x)
            gl_infer_set(c, 0, x->dtype, NULL);
        return GL_OK;
    }
    dft_args a;
    gl_status st = dft_attrs(c->node, x->shape.rank, c->where, &a);
    if (st != GL_OK)
        return st;
    int last = x->shape.rank - 1;
    int64_t cdim = x->shape.dims[last].value;
    if (cdim >= 0 && cdim != 1 && cdim != 2)
        return gl_fail(GL_ERR_INPUT, "%s: the last dimension is %lld, expected 1 (real) or 2 "
                       "(complex)", c->where, (long long)cdim);
    int64_t n = -1;
    bool has_len = c->n_inputs > 1 && c->in_types[1];
    if (has_len && gl_infer_const_int(c, 1, &n) && n < 1)
        return gl_fail(GL_ERR_INPUT, "%s: dft_length %lld must be positive", c->where,
                       (long long)n);
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_copy(&s, &x->shape);
    gl_dim_set(&s.dims[last], 2);
    if (!has_len)
        n = s.dims[a.axis].value;
    if (has_len || a.onesided)
        gl_dim_set(&s.dims[a.axis], n < 0 ? GL_DIM_UNKNOWN : a.onesided ? n / 2 + 1 : n);
    gl_infer_set(c, 0, x->dtype, &s);
    gl_shape_free(&s);
    return GL_OK;
}

static gl_status dft_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = k->in[0];
    if (!x || !gl_dtype_is_float(x->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: input must be a float tensor", k->where);
    dft_args a;
    gl_status st = dft_attrs(k->node, x->rank, k->where, &a);
    if (st != GL_OK)
        return st;
    int last = x->rank - 1;
    int64_t comps = x->dims[last];
    if (comps != 1 && comps != 2)
        return gl_fail(GL_ERR_INPUT, "%s: the last dimension is %lld, expected 1 (real) or 2 "
                       "(complex)", k->where, (long long)comps);
    a.n = x->dims[a.axis];
    if (k->n_inputs > 1 && k->in[1] && !gl_scalar_int(k->in[1], k->where, "dft_length", &a.n))
        return GL_ERR_INPUT;
    if (a.n < 1)
        return gl_fail(GL_ERR_INPUT, "%s: transform length %lld must be positive", k->where,
                       (long long)a.n);
    a.out_len = a.onesided ? a.n / 2 + 1 : a.n;
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[a.axis] = a.out_len;
    dims[last] = 2;
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, dims);
    if (!y)
        return GL_ERR_NOMEM;
    /* Lines along the axis: outer (dims before it) x inner (between it and the last). */
    int64_t outer = gl_dims_product(x->dims, 0, a.axis), len_in = x->dims[a.axis];
    int64_t inner = gl_dims_product(x->dims, a.axis + 1, last);
    if (outer * inner == 0)
        return GL_OK;
    fft_plan plan;
    if ((st = fft_plan_init(&plan, a.n)) != GL_OK)
        return st;
    cplx *in = malloc((size_t)a.n * sizeof(cplx)), *out = malloc((size_t)a.n * sizeof(cplx));
    if (!in || !out) {
        free(in), free(out), fft_plan_free(&plan);
        return gl_fail(GL_ERR_NOMEM, "%s: cannot allocate a line of %lld", k->where,
                       (long long)a.n);
    }
    gl_tensor_make_writable(y);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t t = 0; t < a.n; t++) {
                int64_t e = ((o * len_in + t) * inner + i) * comps;
                in[t] = t < len_in ? (cplx){fget(x, e), comps == 2 ? fget(x, e + 1) : 0}
                                   : (cplx){0, 0};
            }
            dft_line(&plan, in, out, a.inverse);
            for (int64_t t = 0; t < a.out_len; t++) {
                int64_t e = ((o * a.out_len + t) * inner + i) * 2;
                fset(y, e, out[t].re);
                fset(y, e + 1, out[t].im);
            }
        }
    }
    free(in), free(out), fft_plan_free(&plan);
    return GL_OK;
}

/* ---- STFT ----------------------------------------------------------------------------------- */

typedef struct stft_args {
    int64_t step, frame, frames, bins;
    bool onesided;
} stft_args;

static gl_status stft_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = k->in[0], *win = gl_opt_input(k, 2);
    if (!x || !gl_dtype_is_float(x->dtype) || x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        return gl_fail(GL_ERR_INPUT, "%s: signal must be a float tensor [batch, length, 1 or 2]",
                       k->where);
    stft_args a = {.onesided = gl_node_attr_int(k->node, "onesided", 1) != 0, .frame = -1};
    if (!gl_scalar_int(gl_opt_input(k, 1), k->where, "frame_step", &a.step))
        return GL_ERR_INPUT;
    if (a.step < 1)
        return gl_fail(GL_ERR_INPUT, "%s: frame_step %lld must be positive", k->where,
                       (long long)a.step);
    if (k->n_inputs > 3 && k->in[3] && !gl_scalar_int(k->in[3], k->where, "frame_length", &a.frame))
        return GL_ERR_INPUT;
    if (win) {
        if (win->rank != 1 || win->dtype != x->dtype)
            return gl_fail(GL_ERR_INPUT, "%s: window must be a 1-D %s tensor", k->where,
                           gl_dtype_name(x->dtype));
        if (a.frame >= 0 && a.frame != win->dims[0])
            return gl_fail(GL_ERR_INPUT, "%s: frame_length %lld differs from the window's "
                           "length %lld", k->where, (long long)a.frame, (long long)win->dims[0]);
        a.frame = win->dims[0];
    }
    if (a.frame < 1)
        return gl_fail(GL_ERR_INPUT, "%s: needs a positive frame_length or a window", k->where);
    int64_t batch = x->dims[0], len = x->dims[1], comps = x->dims[2];
    a.frames = len < a.frame ? 0 : (len - a.frame) / a.step + 1;
    a.bins = a.onesided ? a.frame / 2 + 1 : a.frame;
    gl_tensor *y = gl_out_new(k, 0, x->dtype, 4, (int64_t[]){batch, a.frames, a.bins, 2});
    if (!y)
        return GL_ERR_NOMEM;
    if (batch * a.frames == 0)
        return GL_OK;
    fft_plan plan;
    gl_status st = fft_plan_init(&plan, a.frame);
    if (st != GL_OK)
        return st;
    cplx *in = malloc((size_t)a.frame * sizeof(cplx)), *out = malloc((size_t)a.frame * sizeof(cplx));
    if (!in || !out) {
        free(in), free(out), fft_plan_free(&plan);
        return gl_fail(GL_ERR_NOMEM, "%s: cannot allocate a frame of %lld", k->where,
                       (long long)a.frame);
    }
    gl_tensor_make_writable(y);
    bool f32 = x->dtype == GL_DT_FLOAT;
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t f = 0; f < a.frames; f++) {
            for (int64_t t = 0; t < a.frame; t++) {
                int64_t e = (b * len + f * a.step + t) * comps;
                double w = win ? fget(win, t) : 1.0;
                double re = fget(x, e) * w, im = comps == 2 ? fget(x, e + 1) * w : 0;
                /* float32 signal * float32 window rounds to float32, as numpy does */
                in[t] = f32 ? (cplx){(float)re, (float)im} : (cplx){re, im};
            }
            fft_run(&plan, in, out);
            for (int64_t t = 0; t < a.bins; t++) {
                int64_t e = ((b * a.frames + f) * a.bins + t) * 2;
                fset(y, e, out[t].re);
                fset(y, e + 1, out[t].im);
            }
        }
    }
    free(in), free(out), fft_plan_free(&plan);
    return GL_OK;
}

static gl_status stft_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0), *win = gl_infer_input(c, 2);
    if (!x)
        return GL_OK;
    if (x->shape.rank != GL_RANK_UNKNOWN && x->shape.rank != 3)
        return gl_fail(GL_ERR_INPUT, "%s: signal has rank %d, expected 3", c->where,
                       x->shape.rank);
    if (win && win->shape.rank != GL_RANK_UNKNOWN && win->shape.rank != 1)
        return gl_fail(GL_ERR_INPUT, "%s: window has rank %d, expected 1", c->where,
                       win->shape.rank);
    gl_infer_set_rank(c, 0, x->dtype, 4);
    gl_dim *d = c->out_types[0].shape.dims;
    d[3].value = 2;
    if (x->shape.rank != 3)
        return GL_OK;
    if (x->shape.dims[0].sym)
        gl_dim_set_sym(&d[0], x->shape.dims[0].sym);
    else
        d[0].value = x->shape.dims[0].value;
    int64_t step = -1, frame = -1, len = x->shape.dims[1].value;
    bool onesided = gl_node_attr_int(c->node, "onesided", 1) != 0;
    if (!gl_infer_const_int(c, 1, &step))
        step = -1;
    if (!(c->n_inputs > 3 && c->in_types[3] && gl_infer_const_int(c, 3, &frame)) && win &&
        win->shape.rank == 1)
        frame = win->shape.dims[0].value;
    if (frame > 0)
        d[2].value = onesided ? frame / 2 + 1 : frame;
    if (frame > 0 && step > 0 && len >= 0)
        d[1].value = len < frame ? 0 : (len - frame) / step + 1;
    return GL_OK;
}

/* ---- window functions ------------------------------------------------------------------------ */

/* w(k) = sum_j a_j cos(2 pi j k / N), N = size (periodic) or size - 1 (symmetric). */
typedef struct window_coeffs {
    double a[3];
} window_coeffs;

static const window_coeffs hann_coeffs = {{0.5, -0.5, 0}};
static const window_coeffs hamming_coeffs = {{25.0 / 46.0, -(1 - 25.0 / 46.0), 0}};
static const window_coeffs blackman_coeffs = {{0.42, -0.5, 0.08}};

static gl_status window_infer(gl_infer_ctx *c)
{
    gl_dtype dt;
    gl_status st = dtype_attr(c->node, "output_datatype", GL_DT_FLOAT, real_types,
                              GL_ARRAY_LEN(real_types), c->where, &dt);
    if (st != GL_OK)
        return st;
    gl_infer_set_rank(c, 0, dt, 1);
    int64_t size;
    if (gl_infer_const_int(c, 0, &size)) {
        if (size < 0)
            return gl_fail(GL_ERR_INPUT, "%s: size %lld is negative", c->where, (long long)size);
        c->out_types[0].shape.dims[0].value = size;
    }
    return GL_OK;
}

static gl_status window_kernel(gl_kernel_ctx *k, const window_coeffs *w)
{
    gl_dtype dt;
    int64_t size;
    gl_status st = dtype_attr(k->node, "output_datatype", GL_DT_FLOAT, real_types,
                              GL_ARRAY_LEN(real_types), k->where, &dt);
    if (st != GL_OK)
        return st;
    if (!gl_scalar_int(k->in[0], k->where, "size", &size))
        return GL_ERR_INPUT;
    if (size < 0)
        return gl_fail(GL_ERR_INPUT, "%s: size %lld is negative", k->where, (long long)size);
    bool periodic = gl_node_attr_int(k->node, "periodic", 1) != 0;
    gl_tensor *y = gl_out_new(k, 0, dt, 1, &size);
    if (!y)
        return GL_ERR_NOMEM;
    int64_t n = periodic ? size : size - 1;
    for (int64_t i = 0; i < size; i++) {
        double v = 1.0; /* a symmetric window of one point (n == 0) is just its peak */
        if (n > 0) {
            double x = 2.0 * M_PI * (double)i / (double)n;
            v = w->a[0] + w->a[1] * cos(x) + w->a[2] * cos(2 * x);
        }
        gl_elem_set_f64(y, i, v);
    }
    return GL_OK;
}

static gl_status hann_kernel(gl_kernel_ctx *k) { return window_kernel(k, &hann_coeffs); }
static gl_status hamming_kernel(gl_kernel_ctx *k) { return window_kernel(k, &hamming_coeffs); }
static gl_status blackman_kernel(gl_kernel_ctx *k) { return window_kernel(k, &blackman_coeffs); }

/* ---- MelWeightMatrix ------------------------------------------------------------------------ */

static gl_status mel_infer(gl_infer_ctx *c)
{
    gl_dtype dt;
    gl_status st = dtype_attr(c->node, "output_datatype", GL_DT_FLOAT, real_types,
                              GL_ARRAY_LEN(real_types), c->where, &dt);
    if (st != GL_OK)
        return st;
    gl_infer_set_rank(c, 0, dt, 2);
    int64_t bins, len;
    if (gl_infer_const_int(c, 1, &len) && len > 0)
        c->out_types[0].shape.dims[0].value = len / 2 + 1;
    if (gl_infer_const_int(c, 0, &bins) && bins > 0)
        c->out_types[0].shape.dims[1].value = bins;
    return GL_OK;
}

/* Triangular filters between mel-spaced edges (mel(f) = 2595 log10(1 + f/700)); each
 * filter's edges are spectrogram bins floor((dft_length + 1) * f / sample_rate). The mel
 * range is cut into num_mel_bins + 2 steps, as ONNX's reference does. */
static gl_status mel_kernel(gl_kernel_ctx *k)
{
    gl_dtype dt;
    int64_t bins, len, rate;
    double lo, hi;
    gl_status st = dtype_attr(k->node, "output_datatype", GL_DT_FLOAT, real_types,
                              GL_ARRAY_LEN(real_types), k->where, &dt);
    if (st != GL_OK)
        return st;
    if (k->n_inputs < 5 || !gl_scalar_int(k->in[0], k->where, "num_mel_bins", &bins) ||
        !gl_scalar_int(k->in[1], k->where, "dft_length", &len) ||
        !gl_scalar_int(k->in[2], k->where, "sample_rate", &rate) ||
        !scalar_float(k->in[3], k->where, "lower_edge_hertz", &lo) ||
        !scalar_float(k->in[4], k->where, "upper_edge_hertz", &hi))
        return k->n_inputs < 5 ? gl_fail(GL_ERR_INPUT, "%s: needs 5 inputs", k->where)
                               : GL_ERR_INPUT;
    if (bins < 1 || len < 1 || rate < 1 || !(lo >= 0) || !(hi > lo))
        return gl_fail(GL_ERR_INPUT, "%s: needs num_mel_bins, dft_length, sample_rate > 0 and "
                       "0 <= lower_edge_hertz < upper_edge_hertz", k->where);
    int64_t spec = len / 2 + 1;
    gl_tensor *y = gl_out_new(k, 0, dt, 2, (int64_t[]){spec, bins});
    if (!y)
        return GL_ERR_NOMEM;
    int64_t *edge = malloc((size_t)(bins + 2) * sizeof(int64_t));
    if (!edge)
        return gl_fail(GL_ERR_NOMEM, "%s: cannot allocate %lld bins", k->where, (long long)bins);
    double lo_mel = 2595.0 * log10(1.0 + lo / 700.0), hi_mel = 2595.0 * log10(1.0 + hi / 700.0);
    double step = (hi_mel - lo_mel) / (double)(bins + 2);
    for (int64_t i = 0; i < bins + 2; i++) {
        double hz = 700.0 * (pow(10.0, ((double)i * step + lo_mel) / 2595.0) - 1.0);
        edge[i] = (int64_t)floor((double)(len + 1) * hz / (double)rate);
    }
    for (int64_t i = 0; i < bins && st == GL_OK; i++) {
        int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
        if (left < 0 || right >= spec + 1 || center >= spec) {
            st = gl_fail(GL_ERR_INPUT, "%s: mel band %lld reaches spectrogram bin %lld of %lld "
                         "(upper_edge_hertz above the Nyquist frequency?)", k->where,
                         (long long)i, (long long)right, (long long)spec);
            break;
        }
        if (center == left)
            gl_elem_set_f64(y, center * bins + i, 1.0);
        for (int64_t j = left; center > left && j <= center; j++)
            gl_elem_set_f64(y, j * bins + i, (double)(j - left) / (double)(center - left));
        for (int64_t j = center; j < right; j++)
            gl_elem_set_f64(y, j * bins + i, (double)(right - j) / (double)(right - center));
    }
    free(edge);
    return st;
}

/* ---- TfIdfVectorizer -------------------------------------------------------------------------
 * Tokens become int64 ids (the value itself, or for strings the index of the word in the
 * sorted pool vocabulary, -1 when absent); the pool's n-grams go into a hash table keyed by
 * their ids. An n-gram is every (start, skip) with items start, start + skip + 1, ...;
 * unigrams are counted once per position. */

typedef struct tfidf {
    const char *mode;        /* "TF", "IDF", "TFIDF" */
    int64_t min_n, max_n, max_skip;
    size_t n_grams;          /* n-grams in the pool */
    int64_t *gram_len;       /* per pool n-gram: n */
    int64_t *gram_at;        /* per pool n-gram: offset of its first item in `items` */
    int64_t *items;          /* pool items as ids */
    const int64_t *out_index; /* ngram_indexes */
    const float *weights;    /* NULL: all 1 */
    int64_t out_size;
    /* string vocabulary: sorted unique pool words */
    const gl_bytes **vocab;
    size_t n_vocab;
    /* hash table of pool n-grams (index + 1; 0 = empty) */
    size_t *table;
    size_t cap;
} tfidf;

static void tfidf_free(tfidf *t)
{
    free(t->gram_len);
    free(t->gram_at);
    free(t->items);
    free(t->vocab);
    free(t->table);
}

static int bytes_cmp(const gl_bytes *a, const gl_bytes *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->data, b->data, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static int bytes_ptr_cmp(const void *x, const void *y)
{
    return bytes_cmp(*(const gl_bytes *const *)x, *(const gl_bytes *const *)y);
}

static int64_t vocab_id(const tfidf *t, const gl_bytes *w)
{
    size_t lo = 0, hi = t->n_vocab;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = bytes_cmp(t->vocab[mid], w);
        if (c == 0)
            return (int64_t)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static uint64_t gram_hash(const int64_t *ids, int64_t n)
{
    return gl_hash_bytes(ids, (size_t)n * sizeof(*ids));
}

/* The pool n-gram equal to ids[0..n), or -1. `gap` is the distance between items. */
static int64_t tfidf_find(const tfidf *t, const int64_t *ids, int64_t n)
{
    for (size_t s = gram_hash(ids, n) & (t->cap - 1);; s = (s + 1) & (t->cap - 1)) {
        size_t e = t->table[s];
        if (!e)
            return -1;
        size_t g = e - 1;
        if (t->gram_len[g] == n &&
            memcmp(t->items + t->gram_at[g], ids, (size_t)n * sizeof(int64_t)) == 0)
            return (int64_t)g;
    }
}

static gl_status tfidf_setup(const gl_node *n, const char *where, tfidf *t)
{
    memset(t, 0, sizeof(*t));
    t->mode = gl_node_attr_string(n, "mode", "");
    t->min_n = gl_node_attr_int(n, "min_gram_length", 0);
    t->max_n = gl_node_attr_int(n, "max_gram_length", 0);
    t->max_skip = gl_node_attr_int(n, "max_skip_count", -1);
    if (strcmp(t->mode, "TF") && strcmp(t->mode, "IDF") && strcmp(t->mode, "TFIDF"))
        return gl_fail(GL_ERR_INPUT, "%s: mode '%s' is not TF, IDF or TFIDF", where, t->mode);
    if (t->min_n < 1 || t->max_n < t->min_n || t->max_skip < 0)
        return gl_fail(GL_ERR_INPUT, "%s: needs 1 <= min_gram_length <= max_gram_length and "
                       "max_skip_count >= 0", where);
    size_t n_counts, n_index, n_ints, n_weights;
    const int64_t *counts = gl_attr_ints(n, "ngram_counts", &n_counts);
    t->out_index = gl_attr_ints(n, "ngram_indexes", &n_index);
    const int64_t *ints = gl_attr_ints(n, "pool_int64s", &n_ints);
    const gl_attr *strs = gl_node_attr_typed(n, "pool_strings", GL_ATTR_STRINGS);
    size_t n_strs = strs ? strs->n : 0;
    t->weights = gl_attr_floats(n, "weights", &n_weights);
    if ((ints != NULL) == (n_strs != 0))
        return gl_fail(GL_ERR_INPUT, "%s: exactly one of pool_int64s and pool_strings must be "
                       "set", where);
    size_t pool = ints ? n_ints : n_strs;
    if (!counts)
        return gl_fail(GL_ERR_INPUT, "%s: needs the attribute ngram_counts", where);
    /* count the pool's n-grams level by level */
    t->gram_len = gl_xcalloc(pool + 1, sizeof(int64_t));
    t->gram_at = gl_xcalloc(pool + 1, sizeof(int64_t));
    for (size_t lvl = 0; lvl < n_counts; lvl++) {
        int64_t start = counts[lvl], end = lvl + 1 < n_counts ? counts[lvl + 1] : (int64_t)pool;
        int64_t len = (int64_t)lvl + 1;
        if (start < 0 || end < start || end > (int64_t)pool || (end - start) % len)
            return gl_fail(GL_ERR_INPUT, "%s: ngram_counts[%zu] = %lld does not split the pool "
                           "into %lld-grams", where, lvl, (long long)start, (long long)len);
        for (int64_t at = start; at < end; at += len) {
            t->gram_len[t->n_grams] = len;
            t->gram_at[t->n_grams++] = at;
        }
    }
    if (n_index != t->n_grams)
        return gl_fail(GL_ERR_INPUT, "%s: ngram_indexes has %zu entries for %zu pool n-grams",
                       where, n_index, t->n_grams);
    if (t->weights && n_weights != t->n_grams)
        return gl_fail(GL_ERR_INPUT, "%s: weights has %zu entries for %zu pool n-grams", where,
                       n_weights, t->n_grams);
    for (size_t i = 0; i < n_index; i++) {
        if (t->out_index[i] < 0 || t->out_index[i] > (INT32_MAX))
            return gl_fail(GL_ERR_INPUT, "%s: ngram_indexes[%zu] = %lld is out of range", where,
                           i, (long long)t->out_index[i]);
        if (t->out_index[i] + 1 > t->out_size)
            t->out_size = t->out_index[i] + 1;
    }
    /* items as ids */
    t->items = gl_xcalloc(pool + 1, sizeof(int64_t));
    if (ints) {
        memcpy(t->items, ints, pool * sizeof(int64_t));
    } else {
        t->vocab = gl_xcalloc(pool + 1, sizeof(*t->vocab));
        for (size_t i = 0; i < pool; i++)
            t->vocab[i] = &strs->strings[i];
        qsort(t->vocab, pool, sizeof(*t->vocab), bytes_ptr_cmp);
        for (size_t i = 0; i < pool; i++)
            if (!t->n_vocab || bytes_cmp(t->vocab[t->n_vocab - 1], t->vocab[i]))
                t->vocab[t->n_vocab++] = t->vocab[i];
        for (size_t i = 0; i < pool; i++)
            t->items[i] = vocab_id(t, &strs->strings[i]);
    }
    for (t->cap = 16; t->cap < 2 * t->n_grams; t->cap *= 2)
        ;
    t->table = gl_xcalloc(t->cap, sizeof(size_t));
    for (size_t g = 0; g < t->n_grams; g++) {
        const int64_t *ids = t->items + t->gram_at[g];
        if (tfidf_find(t, ids, t->gram_len[g]) >= 0)
            continue; /* a repeated n-gram: the first one counts */
        size_t s = gram_hash(ids, t->gram_len[g]) & (t->cap - 1);
        while (t->table[s])
            s = (s + 1) & (t->cap - 1);
        t->table[s] = g + 1;
    }
    return GL_OK;
}

static gl_status tfidf_infer(gl_infer_ctx *c)
{
    tfidf t;
    gl_status st = tfidf_setup(c->node, c->where, &t);
    int64_t size = t.out_size;
    tfidf_free(&t);
    if (st != GL_OK)
        return st;
    const gl_type *x = gl_infer_input(c, 0);
    if (!x || x->shape.rank == GL_RANK_UNKNOWN) {
        gl_infer_set(c, 0, GL_DT_FLOAT, NULL);
        return GL_OK;
    }
    if (x->shape.rank != 1 && x->shape.rank != 2)
        return gl_fail(GL_ERR_INPUT, "%s: input has rank %d, expected 1 or 2", c->where,
                       x->shape.rank);
    gl_infer_set_rank(c, 0, GL_DT_FLOAT, x->shape.rank);
    gl_dim *d = c->out_types[0].shape.dims;
    if (x->shape.rank == 2) {
        if (x->shape.dims[0].sym)
            gl_dim_set_sym(&d[0], x->shape.dims[0].sym);
        else
            d[0].value = x->shape.dims[0].value;
    }
    d[x->shape.rank - 1].value = size;
    return GL_OK;
}

static gl_status tfidf_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = k->in[0];
    tfidf t;
    gl_status st = tfidf_setup(k->node, k->where, &t);
    if (st == GL_OK && (!x || (x->rank != 1 && x->rank != 2)))
        st = gl_fail(GL_ERR_INPUT, "%s: input must have rank 1 or 2", k->where);
    if (st == GL_OK && (x->dtype == GL_DT_STRING) != (t.vocab != NULL))
        st = gl_fail(GL_ERR_INPUT, "%s: %s input with a pool of %s", k->where,
                     gl_dtype_name(x->dtype), t.vocab ? "strings" : "int64s");
    if (st == GL_OK && x->dtype != GL_DT_STRING && !gl_dtype_is_int(x->dtype))
        st = gl_fail(GL_ERR_INPUT, "%s: input must be int32, int64 or string", k->where);
    if (st != GL_OK) {
        tfidf_free(&t);
        return st;
    }
    int64_t rows = x->rank == 2 ? x->dims[0] : 1, cols = x->dims[x->rank - 1];
    gl_tensor *y = x->rank == 2 ? gl_out_new(k, 0, GL_DT_FLOAT, 2, (int64_t[]){rows, t.out_size})
                                : gl_out_new(k, 0, GL_DT_FLOAT, 1, &t.out_size);
    int64_t *ids = malloc((size_t)(cols + 1) * sizeof(int64_t));
    int64_t *gram = malloc((size_t)(t.max_n + 1) * sizeof(int64_t));
    double *counts = calloc(t.n_grams + 1, sizeof(double));
    if (!y || !ids || !gram || !counts) {
        st = y ? gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where) : GL_ERR_NOMEM;
        goto done;
    }
    if (y->count == 0)
        goto done;
    gl_tensor_make_writable(y);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < cols; i++)
            ids[i] = x->dtype == GL_DT_STRING
                         ? vocab_id(&t, &((const gl_bytes *)gl_tensor_data(x))[r * cols + i])
                         : gl_elem_i64(x, r * cols + i);
        memset(counts, 0, t.n_grams * sizeof(double));
        for (int64_t start = 0; start < cols; start++) {
            for (int64_t skip = 0; skip <= t.max_skip; skip++) {
                for (int64_t n = 1; n <= t.max_n; n++) {
                    int64_t at = start + (n - 1) * (skip + 1);
                    if (at >= cols)
                        break;
                    gram[n - 1] = ids[at];
                    /* a unigram has no gaps: count it at skip 0 only */
                    if (n < t.min_n || (n == 1 && skip > 0))
                        continue;
                    int64_t g = tfidf_find(&t, gram, n);
                    if (g >= 0)
                        counts[g] += 1;
                }
            }
        }
        float *out = (float *)y->buf->data + r * t.out_size;
        for (size_t g = 0; g < t.n_grams; g++) {
            double v = counts[g];
            if (strcmp(t.mode, "IDF") == 0)
                v = v > 0 ? 1 : 0;
            if (strcmp(t.mode, "TF") != 0 && t.weights)
                v *= t.weights[g];
            out[t.out_index[g]] += (float)v; /* pool n-grams sharing an index add up */
        }
    }
done:
    free(ids);
    free(gram);
    free(counts);
    tfidf_free(&t);
    return st;
}

/* ---- StringNormalizer ------------------------------------------------------------------------
 * Case folding and case-insensitive matching are ASCII only (the "C" locale): bytes >= 0x80
 * (any non-ASCII UTF-8) pass unchanged, whatever `locale` says. On ASCII text this is what
 * en_US does. */

static bool ascii_equal(const gl_bytes *a, const gl_bytes *b, bool case_sensitive)
{
    if (a->len != b->len)
        return false;
    for (size_t i = 0; i < a->len; i++) {
        int x = a->data[i], y = b->data[i];
        if (!case_sensitive && x < 0x80 && y < 0x80) {
            x = tolower(x);
            y = tolower(y);
        }
        if (x != y)
            return false;
    }
    return true;
}

typedef enum case_action { CASE_NONE, CASE_LOWER, CASE_UPPER } case_action;

static gl_status strnorm_action(const gl_node *n, const char *where, case_action *out)
{
    const char *a = gl_node_attr_string(n, "case_change_action", "NONE");
    if (strcmp(a, "NONE") == 0)
        *out = CASE_NONE;
    else if (strcmp(a, "LOWER") == 0)
        *out = CASE_LOWER;
    else if (strcmp(a, "UPPER") == 0)
        *out = CASE_UPPER;
    else
        return gl_fail(GL_ERR_INPUT, "%s: case_change_action '%s' is not LOWER, UPPER or NONE",
                       where, a);
    return GL_OK;
}

static gl_status strnorm_infer(gl_infer_ctx *c)
{
    case_action act;
    gl_status st = strnorm_action(c->node, c->where, &act);
    if (st != GL_OK)
        return st;
    const gl_type *x = gl_infer_input(c, 0);
    if (!x || x->shape.rank == GL_RANK_UNKNOWN) {
        gl_infer_set(c, 0, GL_DT_STRING, NULL);
        return GL_OK;
    }
    int r = x->shape.rank;
    if ((r != 1 && r != 2) || (r == 2 && x->shape.dims[0].value >= 0 && x->shape.dims[0].value != 1))
        return gl_fail(GL_ERR_INPUT, "%s: input must be [C] or [1, C]", c->where);
    size_t n_stop = 0;
    const gl_attr *stop = gl_node_attr_typed(c->node, "stopwords", GL_ATTR_STRINGS);
    if (stop)
        n_stop = stop->n;
    if (n_stop == 0) {
        gl_infer_set(c, 0, GL_DT_STRING, &x->shape); /* nothing removed */
        return GL_OK;
    }
    gl_infer_set_rank(c, 0, GL_DT_STRING, r);
    if (r == 2)
        c->out_types[0].shape.dims[0].value = 1;
    return GL_OK;
}

static gl_status strnorm_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = k->in[0];
    case_action act;
    gl_status st = strnorm_action(k->node, k->where, &act);
    if (st != GL_OK)
        return st;
    if (!x || x->dtype != GL_DT_STRING || (x->rank != 1 && x->rank != 2) ||
        (x->rank == 2 && x->dims[0] != 1))
        return gl_fail(GL_ERR_INPUT, "%s: input must be a string tensor [C] or [1, C]",
                       k->where);
    bool sensitive = gl_node_attr_int(k->node, "is_case_sensitive", 0) != 0;
    const gl_attr *stop = gl_node_attr_typed(k->node, "stopwords", GL_ATTR_STRINGS);
    size_t n_stop = stop ? stop->n : 0;
    const gl_bytes *in = gl_tensor_data(x);
    bool *keep = gl_xcalloc((size_t)x->count + 1, sizeof(bool));
    int64_t kept = 0;
    for (int64_t i = 0; i < x->count; i++) {
        keep[i] = true;
        for (size_t s = 0; s < n_stop && keep[i]; s++)
            keep[i] = !ascii_equal(&in[i], &stop->strings[s], sensitive);
        kept += keep[i];
    }
    /* Everything dropped: one empty string, [1] or [1, 1]. */
    int64_t dims[2] = {1, kept ? kept : 1};
    gl_tensor *y = x->rank == 2 ? gl_out_new(k, 0, GL_DT_STRING, 2, dims)
                                : gl_out_new(k, 0, GL_DT_STRING, 1, &dims[1]);
    if (!y) {
        free(keep);
        return GL_ERR_NOMEM;
    }
    gl_bytes *out = gl_tensor_make_writable(y);
    if (!kept)
        out[0].data = gl_xcalloc(1, 1);
    for (int64_t i = 0, o = 0; i < x->count; i++) {
        if (!keep[i])
            continue;
        uint8_t *s = malloc(in[i].len + 1);
        if (!s) {
            free(keep);
            return gl_fail(GL_ERR_NOMEM, "%s: cannot copy a string of %zu bytes", k->where,
                           in[i].len);
        }
        for (size_t j = 0; j < in[i].len; j++) {
            int ch = in[i].data[j];
            if (ch < 0x80 && act != CASE_NONE)
                ch = act == CASE_LOWER ? tolower(ch) : toupper(ch);
            s[j] = (uint8_t)ch;
        }
        s[in[i].len] = 0;
        out[o].data = s;
        out[o++].len = in[i].len;
    }
    free(keep);
    return GL_OK;
}

/* ---- random generators ----------------------------------------------------------------------
 * A splitmix64 stream per kernel call, seeded from the `seed` attribute (its float bits) or,
 * when absent, a fixed constant: outputs are reproducible run to run, which ONNX allows
 * ("may not produce the same values in different implementations"). */

static gl_rng rng_for(const gl_node *n)
{
    const gl_attr *a = gl_node_attr_typed(n, "seed", GL_ATTR_FLOAT);
    uint64_t seed = 0x853c49e6748fea9bull;
    if (a) {
        uint32_t bits;
        memcpy(&bits, &a->f, sizeof(bits));
        seed ^= (uint64_t)bits * 0x9e3779b97f4a7c15ull;
    }
    return (gl_rng){seed};
}

/* Standard normal (Box-Muller; 1 - u keeps the log away from 0). */
static double rng_normal(gl_rng *r)
{
    double u = 1.0 - gl_rng_unit(r), v = gl_rng_unit(r);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static const gl_dtype bernoulli_types[] = {
    GL_DT_FLOAT16, GL_DT_FLOAT, GL_DT_DOUBLE, GL_DT_BFLOAT16, GL_DT_UINT8, GL_DT_UINT16,
    GL_DT_UINT32, GL_DT_UINT64, GL_DT_INT8, GL_DT_INT16, GL_DT_INT32, GL_DT_INT64, GL_DT_BOOL,
};
static const gl_dtype index_types[] = {GL_DT_INT32, GL_DT_INT64};

/* The output dtype of Bernoulli and the *Like generators: the dtype attribute, else the
 * input's. */
static gl_status like_dtype(const gl_node *n, gl_dtype input, const gl_dtype *allowed,
                            size_t n_allowed, const char *where, gl_dtype *out)
{
    if (gl_node_attr_typed(n, "dtype", GL_ATTR_INT))
        return dtype_attr(n, "dtype", GL_DT_FLOAT, allowed, n_allowed, where, out);
    return dtype_allowed(input, allowed, n_allowed, where, "input dtype", out);
}

/* The `shape` attribute of RandomNormal/RandomUniform. */
static gl_status shape_attr(const gl_node *n, const char *where, const int64_t **dims,
                            int *rank)
{
    size_t count;
    *dims = gl_attr_ints(n, "shape", &count);
    if (!*dims && !gl_node_attr_typed(n, "shape", GL_ATTR_INTS))
        return gl_fail(GL_ERR_INPUT, "%s: needs the attribute 'shape'", where);
    if (count > GL_MAX_RANK)
        return gl_fail(GL_ERR_INPUT, "%s: shape has %zu dimensions", where, count);
    for (size_t i = 0; i < count; i++)
        if ((*dims)[i] < 0)
            return gl_fail(GL_ERR_INPUT, "%s: shape[%zu] = %lld is negative", where, i,
                           (long long)(*dims)[i]);
    *rank = (int)count;
    return GL_OK;
}

typedef enum dist_kind { DIST_NORMAL, DIST_UNIFORM } dist_kind;

/* mean + scale * N(0,1), or low + (high - low) * U[0,1). */
static void fill_random(gl_tensor *y, const gl_node *n, dist_kind kind)
{
    gl_rng r = rng_for(n);
    double a = kind == DIST_NORMAL ? gl_node_attr_float(n, "mean", 0.0f)
                                   : gl_node_attr_float(n, "low", 0.0f);
    double b = kind == DIST_NORMAL ? gl_node_attr_float(n, "scale", 1.0f)
                                   : gl_node_attr_float(n, "high", 1.0f) - a;
    for (int64_t i = 0; i < y->count; i++)
        fset(y, i, a + b * (kind == DIST_NORMAL ? rng_normal(&r) : gl_rng_unit(&r)));
}

static gl_status random_infer(gl_infer_ctx *c)
{
    gl_dtype dt;
    const int64_t *dims;
    int rank;
    gl_status st = dtype_attr(c->node, "dtype", GL_DT_FLOAT, float_types,
                              GL_ARRAY_LEN(float_types), c->where, &dt);
    if (st == GL_OK)
        st = shape_attr(c->node, c->where, &dims, &rank);
    if (st != GL_OK)
        return st;
    gl_infer_set_rank(c, 0, dt, rank);
    for (int d = 0; d < rank; d++)
        c->out_types[0].shape.dims[d].value = dims[d];
    return GL_OK;
}

static gl_status random_kernel(gl_kernel_ctx *k, dist_kind kind)
{
    gl_dtype dt;
    const int64_t *dims;
    int rank;
    gl_status st = dtype_attr(k->node, "dtype", GL_DT_FLOAT, float_types,
                              GL_ARRAY_LEN(float_types), k->where, &dt);
    if (st == GL_OK)
        st = shape_attr(k->node, k->where, &dims, &rank);
    if (st != GL_OK)
        return st;
    gl_tensor *y = gl_out_new(k, 0, dt, rank, dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (y->count)
        gl_tensor_make_writable(y);
    fill_random(y, k->node, kind);
    return GL_OK;
}

static gl_status random_normal_kernel(gl_kernel_ctx *k) { return random_kernel(k, DIST_NORMAL); }
static gl_status random_uniform_kernel(gl_kernel_ctx *k) { return random_kernel(k, DIST_UNIFORM); }

static gl_status random_like_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    gl_dtype dt;
    if (!x && !gl_node_attr_typed(c->node, "dtype", GL_ATTR_INT))
        return GL_OK;
    gl_status st = like_dtype(c->node, x ? x->dtype : GL_DT_UNDEFINED, float_types,
                              GL_ARRAY_LEN(float_types), c->where, &dt);
    if (st != GL_OK)
        return st;
    gl_infer_set(c, 0, dt, x ? &x->shape : NULL);
    return GL_OK;
}

static gl_status random_like_kernel(gl_kernel_ctx *k, dist_kind kind)
{
    const gl_tensor *x = k->in[0];
    gl_dtype dt;
    if (!x)
        return gl_fail(GL_ERR_INPUT, "%s: input is missing", k->where);
    gl_status st = like_dtype(k->node, x->dtype, float_types, GL_ARRAY_LEN(float_types),
                              k->where, &dt);
    if (st != GL_OK)
        return st;
    gl_tensor *y = gl_out_new(k, 0, dt, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (y->count)
        gl_tensor_make_writable(y);
    fill_random(y, k->node, kind);
    return GL_OK;
}

static gl_status random_normal_like_kernel(gl_kernel_ctx *k)
{
    return random_like_kernel(k, DIST_NORMAL);
}

static gl_status random_uniform_like_kernel(gl_kernel_ctx *k)
{
    return random_like_kernel(k, DIST_UNIFORM);
}

static gl_status bernoulli_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    gl_dtype dt;
    if (!x)
        return GL_OK;
    gl_status st = like_dtype(c->node, x->dtype, bernoulli_types, GL_ARRAY_LEN(bernoulli_types),
                              c->where, &dt);
    if (st == GL_OK)
        gl_infer_set(c, 0, dt, &x->shape);
    return st;
}

static gl_status bernoulli_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = k->in[0];
    gl_dtype dt;
    if (!x || !gl_dtype_is_float(x->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: input must be a float tensor of probabilities",
                       k->where);
    gl_status st = like_dtype(k->node, x->dtype, bernoulli_types, GL_ARRAY_LEN(bernoulli_types),
                              k->where, &dt);
    if (st != GL_OK)
        return st;
    for (int64_t i = 0; i < x->count; i++) {
        double p = fget(x, i);
        if (!(p >= 0 && p <= 1))
            return gl_fail(GL_ERR_INPUT, "%s: probability %g at element %lld is outside [0, 1]",
                           k->where, p, (long long)i);
    }
    gl_tensor *y = gl_out_new(k, 0, dt, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (y->count)
        gl_tensor_make_writable(y);
    gl_rng r = rng_for(k->node);
    for (int64_t i = 0; i < x->count; i++)
        gl_elem_set_f64(y, i, gl_rng_unit(&r) < fget(x, i) ? 1.0 : 0.0);
    return GL_OK;
}

static gl_status multinomial_infer(gl_infer_ctx *c)
{
    gl_dtype dt;
    gl_status st = dtype_attr(c->node, "dtype", GL_DT_INT32, index_types,
                              GL_ARRAY_LEN(index_types), c->where, &dt);
    if (st != GL_OK)
        return st;
    int64_t samples = gl_node_attr_int(c->node, "sample_size", 1);
    if (samples < 1)
        return gl_fail(GL_ERR_INPUT, "%s: sample_size must be positive", c->where);
    const gl_type *x = gl_infer_input(c, 0);
    if (x && x->shape.rank != GL_RANK_UNKNOWN && x->shape.rank != 2)
        return gl_fail(GL_ERR_INPUT, "%s: input has rank %d, expected 2 [batch, classes]",
                       c->where, x->shape.rank);
    gl_infer_set_rank(c, 0, dt, 2);
    gl_dim *d = c->out_types[0].shape.dims;
    if (x && x->shape.rank == 2) {
        if (x->shape.dims[0].sym)
            gl_dim_set_sym(&d[0], x->shape.dims[0].sym);
        else
            d[0].value = x->shape.dims[0].value;
    }
    d[1].value = samples;
    return GL_OK;
}

/* Each row: classes drawn with probability softmax(row), sample_size times. */
static gl_status multinomial_kernel(gl_kernel_ctx *k)
{
    const gl_tensor *x = k->in[0];
    gl_dtype dt;
    gl_status st = dtype_attr(k->node, "dtype", GL_DT_INT32, index_types,
                              GL_ARRAY_LEN(index_types), k->where, &dt);
    if (st != GL_OK)
        return st;
    int64_t samples = gl_node_attr_int(k->node, "sample_size", 1);
    if (samples < 1)
        return gl_fail(GL_ERR_INPUT, "%s: sample_size must be positive", k->where);
    if (!x || x->rank != 2 || !gl_dtype_is_float(x->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: input must be a float tensor [batch, classes]",
                       k->where);
    int64_t batch = x->dims[0], classes = x->dims[1];
    if (classes < 1 && batch > 0)
        return gl_fail(GL_ERR_INPUT, "%s: no classes to draw from", k->where);
    gl_tensor *y = gl_out_new(k, 0, dt, 2, (int64_t[]){batch, samples});
    double *cum = malloc((size_t)(classes + 1) * sizeof(double));
    if (!y || !cum) {
        free(cum);
        return y ? gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where) : GL_ERR_NOMEM;
    }
    if (y->count)
        gl_tensor_make_writable(y);
    gl_rng r = rng_for(k->node);
    for (int64_t b = 0; b < batch; b++) {
        double top = -INFINITY, total = 0;
        for (int64_t j = 0; j < classes; j++)
            top = fmax(top, fget(x, b * classes + j));
        for (int64_t j = 0; j < classes; j++) {
            double e = isinf(top) && top < 0 ? 1.0 : exp(fget(x, b * classes + j) - top);
            cum[j] = (total += e);
        }
        for (int64_t s = 0; s < samples; s++) {
            double u = gl_rng_unit(&r) * total;
            int64_t lo = 0, hi = classes - 1; /* first j with cum[j] > u */
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                if (cum[mid] > u)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            gl_elem_set_i64(y, b * samples + s, lo);
        }
    }
    free(cum);
    return GL_OK;
}

/* ---- the table ------------------------------------------------------------------------------ */

static const gl_op_def misc_ops[] = {
    {"", "Bernoulli", 15, bernoulli_infer, bernoulli_kernel, GL_OP_RANDOM},
    {"", "BlackmanWindow", 17, window_infer, blackman_kernel, 0},
    {"", "DFT", 17, dft_infer, dft_kernel, 0},
    {"", "HammingWindow", 17, window_infer, hamming_kernel, 0},
    {"", "HannWindow", 17, window_infer, hann_kernel, 0},
    {"", "MelWeightMatrix", 17, mel_infer, mel_kernel, 0},
    {"", "Multinomial", 7, multinomial_infer, multinomial_kernel, GL_OP_RANDOM},
    {"", "RandomNormal", 1, random_infer, random_normal_kernel, GL_OP_RANDOM},
    {"", "RandomNormalLike", 1, random_like_infer, random_normal_like_kernel, GL_OP_RANDOM},
    {"", "RandomUniform", 1, random_infer, random_uniform_kernel, GL_OP_RANDOM},
    {"", "RandomUniformLike", 1, random_like_infer, random_uniform_like_kernel, GL_OP_RANDOM},
    {"", "STFT", 17, stft_infer, stft_kernel, 0},
    {"", "StringNormalizer", 10, strnorm_infer, strnorm_kernel, 0},
    {"", "TfIdfVectorizer", 9, tfidf_infer, tfidf_kernel, 0},
};

const gl_op_family gl_ops_misc = {"misc", misc_ops, GL_ARRAY_LEN(misc_ops)};

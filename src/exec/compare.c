/* compare.c — tensor comparison (numpy.allclose's rule plus the error measures the
 * reports show). */
#include "exec/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* max_rel's denominator floor: keeps |a-b|/|b| finite where b is 0. */
#define REL_TINY 1e-30

/* ---- comparison ------------------------------------------------------------------------ */

static bool same_shape(const gl_tensor *a, const gl_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    return true;
}

static void mark_bad(gl_compare *r, int64_t i)
{
    if (r->first_bad < 0)
        r->first_bad = i;
}

/* Running sums for NMSE, and how far past its tolerance the worst element so far is. */
typedef struct sums {
    double err2, ref2;
    double worst_excess;
} sums;

/* Element i is `excess` past its tolerance (INFINITY: a NaN/Inf mismatch). */
static void note_excess(gl_compare *r, sums *s, int64_t i, double excess)
{
    if (r->worst < 0 || excess > s->worst_excess) {
        r->worst = i;
        s->worst_excess = excess;
    }
}

static void add_difference(gl_compare *r, sums *s, double diff, double b)
{
    if (diff > r->max_abs)
        r->max_abs = diff;
    double rel = diff / fmax(fabs(b), REL_TINY);
    if (rel > r->max_rel)
        r->max_rel = rel;
    s->err2 += diff * diff;
    s->ref2 += b * b;
}

static void count_nonfinite(double v, int64_t *nan, int64_t *inf)
{
    *nan += isnan(v) != 0;
    *inf += isinf(v) != 0;
}

static void compare_floats(gl_compare *r, sums *s, int64_t i, double a, double b, double rtol,
                           double atol)
{
    if (!isfinite(a) || !isfinite(b)) {
        count_nonfinite(a, &r->nan_got, &r->inf_got);
        count_nonfinite(b, &r->nan_expected, &r->inf_expected);
        bool same = isnan(a) ? isnan(b) : a == b;
        if (!same) {
            r->nan_mismatch++;
            mark_bad(r, i);
            note_excess(r, s, i, INFINITY);
        }
        return;
    }
    double diff = fabs(a - b), tol = atol + rtol * fabs(b);
    add_difference(r, s, diff, b);
    note_excess(r, s, i, diff - tol);
    if (diff > tol) {
        r->over_tol++;
        mark_bad(r, i);
    }
}

/* Element i of a floating tensor as double; complex tensors are read as pairs of reals,
 * so i counts components. */
static double float_at(const void *data, gl_dtype dt, int64_t i)
{
    switch (dt) {
    case GL_DT_FLOAT:
    case GL_DT_COMPLEX64: return ((const float *)data)[i];
    case GL_DT_DOUBLE:
    case GL_DT_COMPLEX128: return ((const double *)data)[i];
    case GL_DT_FLOAT16: return gl_f16_to_f32(((const uint16_t *)data)[i]);
    case GL_DT_BFLOAT16: return gl_bf16_to_f32(((const uint16_t *)data)[i]);
    default: return 0;
    }
}

static bool is_floating(gl_dtype dt)
{
    return gl_dtype_is_float(dt) || dt == GL_DT_COMPLEX64 || dt == GL_DT_COMPLEX128;
}

/* Integers and bools: signed types as int64, unsigned ones as uint64, so that equality
 * is exact for every value. */
static bool int_at(const void *data, gl_dtype dt, int64_t i, int64_t *s, uint64_t *u)
{
    switch (dt) {
    case GL_DT_INT8: *s = ((const int8_t *)data)[i]; return true;
    case GL_DT_INT16: *s = ((const int16_t *)data)[i]; return true;
    case GL_DT_INT32: *s = ((const int32_t *)data)[i]; return true;
    case GL_DT_INT64: *s = ((const int64_t *)data)[i]; return true;
    case GL_DT_BOOL:
    case GL_DT_UINT8: *u = ((const uint8_t *)data)[i]; return false;
    case GL_DT_UINT16: *u = ((const uint16_t *)data)[i]; return false;
    case GL_DT_UINT32: *u = ((const uint32_t *)data)[i]; return false;
    default: *u = ((const uint64_t *)data)[i]; return false;
    }
}

static void compare_ints(gl_compare *r, sums *s, const gl_tensor *got, const gl_tensor *exp)
{
    const void *a = gl_tensor_data(got), *b = gl_tensor_data(exp);
    for (int64_t i = 0; i < got->count; i++) {
        int64_t sa = 0, sb = 0;
        uint64_t ua = 0, ub = 0;
        bool is_signed = int_at(a, got->dtype, i, &sa, &ua);
        int_at(b, exp->dtype, i, &sb, &ub);
        bool equal = is_signed ? sa == sb : ua == ub;
        double da = is_signed ? (double)sa : (double)ua, db = is_signed ? (double)sb : (double)ub;
        add_difference(r, s, fabs(da - db), db);
        note_excess(r, s, i, fabs(da - db));
        if (!equal) {
            r->over_tol++;
            mark_bad(r, i);
        }
    }
}

static void compare_strings(gl_compare *r, const gl_tensor *got, const gl_tensor *exp)
{
    const gl_bytes *a = gl_tensor_data(got), *b = gl_tensor_data(exp);
    for (int64_t i = 0; i < got->count; i++) {
        bool equal = a[i].len == b[i].len && (a[i].len == 0 || !memcmp(a[i].data, b[i].data,
                                                                         a[i].len));
        if (!equal) {
            r->over_tol++;
            mark_bad(r, i);
        }
    }
    r->worst = r->count ? (r->first_bad >= 0 ? r->first_bad : 0) : -1;
}

void gl_compare_tensors(const gl_tensor *got, const gl_tensor *expected, double rtol,
                        double atol, gl_compare *r)
{
    *r = (gl_compare){.first_bad = -1, .worst = -1};
    r->same_shape = same_shape(got, expected);
    if (!r->same_shape)
        return;
    r->count = got->count;
    sums s = {0, 0, -INFINITY};
    gl_dtype dt = got->dtype;
    if (got->count == 0) {
        /* nothing to compare */
    } else if (dt == GL_DT_STRING) {
        compare_strings(r, got, expected);
    } else if (is_floating(dt)) {
        int64_t n = got->count * (dt == GL_DT_COMPLEX64 || dt == GL_DT_COMPLEX128 ? 2 : 1);
        const void *a = gl_tensor_data(got), *b = gl_tensor_data(expected);
        for (int64_t i = 0; i < n; i++)
            compare_floats(r, &s, i, float_at(a, dt, i), float_at(b, dt, i), rtol, atol);
    } else {
        compare_ints(r, &s, got, expected);
    }
    if (s.ref2 > 0)
        r->nmse = s.err2 / s.ref2;
    else
        r->nmse = s.err2 > 0 ? INFINITY : 0;
    r->ok = r->over_tol == 0 && r->nan_mismatch == 0;
}

/* Both tensors the same shape, of a numeric type (strings and complex numbers have no
 * scale). */
static bool steps_apply(const gl_tensor *got, const gl_tensor *expected)
{
    gl_dtype dt = got->dtype;
    return dt == expected->dtype && dt != GL_DT_STRING && dt != GL_DT_COMPLEX64 &&
           dt != GL_DT_COMPLEX128;
}

void gl_compare_in_steps(const gl_tensor *got, const gl_tensor *expected, const gl_quant *q,
                         double steps, gl_compare *r)
{
    *r = (gl_compare){.first_bad = -1, .worst = -1, .in_steps = true, .steps = steps};
    r->same_shape = same_shape(got, expected) && steps_apply(got, expected);
    if (!r->same_shape)
        return;
    r->count = got->count;
    sums s = {0, 0, -INFINITY};
    for (int64_t i = 0; i < got->count; i++) {
        double a = gl_quant_real_at(q, got, i), b = gl_quant_real_at(q, expected, i);
        double scale = fabs(gl_quant_scale_at(q, got, i));
        compare_floats(r, &s, i, a, b, 0, (steps + GL_STEP_SLACK) * scale);
        double apart = fabs(a - b) / fmax(scale, REL_TINY);
        if (isfinite(a) && isfinite(b) && apart > r->max_steps)
            r->max_steps = apart;
    }
    if (s.ref2 > 0)
        r->nmse = s.err2 / s.ref2;
    else
        r->nmse = s.err2 > 0 ? INFINITY : 0;
    r->ok = r->over_tol == 0 && r->nan_mismatch == 0;
}

void gl_compare_value(const gl_value *v, const gl_tensor *got, const gl_tensor *expected,
                      const gl_tolerance *tol, gl_compare *r)
{
    gl_quant q;
    if (gl_quant_of(v, &q))
        gl_compare_in_steps(got, expected, &q, tol->steps, r);
    else
        gl_compare_tensors(got, expected, tol->rtol, tol->atol, r);
}

void gl_compare_format(const gl_compare *r, char *buf, size_t len)
{
    if (!r->same_shape) {
        snprintf(buf, len, "dtype or shape differs");
        return;
    }
    int n;
    if (r->in_steps)
        n = snprintf(buf, len, "max_abs %.3g, max_steps %.3g, nmse %.3g, %lld over %g step%s",
                     r->max_abs, r->max_steps, r->nmse, (long long)r->over_tol, r->steps,
                     r->steps == 1 ? "" : "s");
    else
        n = snprintf(buf, len, "max_abs %.3g, max_rel %.3g, nmse %.3g, %lld over tolerance",
                     r->max_abs, r->max_rel, r->nmse, (long long)r->over_tol);
    if (r->nan_mismatch && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", %lld NaN/Inf mismatch%s",
                 (long long)r->nan_mismatch, r->nan_mismatch == 1 ? "" : "es");
}

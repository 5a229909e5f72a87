/* test_ops_misc.c — DFT, STFT, window functions, MelWeightMatrix, TfIdfVectorizer,
 * StringNormalizer and the random generators: kernels run directly, shape functions on
 * the IR's types.
 *
 * Expected values are worked out by hand from the ONNX definitions (small DFTs, window
 * formulas at quarter periods, a mel filter bank with its edges computed in the comment),
 * or for long transforms from the DFT's defining sum evaluated in the test. Random
 * generators are checked for shape, dtype, range and reproducibility only. */
#include "testutil.h"

#include "ops/opkit.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- helpers ----------------------------------------------------------------------------- */

/* A model with one node `op` over inputs shaped like `in` (NULL entries: omitted). */
static gl_node *node_for(gl_model *m, const char *op, const gl_tensor *const *in, size_t n_in)
{
    gl_value *v[8] = {0};
    for (size_t i = 0; i < n_in; i++) {
        if (!in[i])
            continue;
        char name[16];
        snprintf(name, sizeof(name), "in%zu", i);
        v[i] = tu_input(m->graph, name, in[i]->dtype, in[i]->rank, in[i]->dims);
    }
    return gl_add_node(m->graph, op, "", "n", v, n_in, 1);
}

static void expect_values(const gl_tensor *t, gl_dtype dt, int rank, const int64_t *dims,
                          const double *want, double tol, const char *what)
{
    cr_assert_not_null(t, "%s: no output (%s)", what, gl_error_message());
    cr_assert_eq(t->dtype, dt, "%s: dtype %s", what, gl_dtype_name(t->dtype));
    cr_assert_eq(t->rank, rank, "%s: rank %d, expected %d", what, t->rank, rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(t->dims[d], dims[d], "%s: dim %d is %lld, expected %lld", what, d,
                     (long long)t->dims[d], (long long)dims[d]);
    for (int64_t i = 0; i < t->count; i++) {
        double v = gl_elem_f64(t, i);
        cr_expect(fabs(v - want[i]) <= tol * (1 + fabs(want[i])),
                  "%s: element %lld is %.9g, expected %.9g", what, (long long)i, v, want[i]);
    }
}

static gl_tensor *i64_scalar(int64_t v) { return tu_tensor_i64(0, NULL, &v); }

static gl_tensor *f32_scalar(float v) { return tu_tensor_f32(0, NULL, &v); }

static void set_strings(gl_node *n, const char *attr, const char *const *s, size_t count)
{
    gl_attr a = {0};
    a.name = strdup(attr);
    a.type = GL_ATTR_STRINGS;
    a.n = count;
    a.strings = calloc(count ? count : 1, sizeof(gl_bytes));
    for (size_t i = 0; i < count; i++) {
        a.strings[i].len = strlen(s[i]);
        a.strings[i].data = (uint8_t *)strdup(s[i]);
    }
    gl_node_take_attr(n, &a);
}

static gl_tensor *strings_tensor(int rank, const int64_t *dims, const char *const *s)
{
    gl_tensor *t = gl_tensor_new(GL_DT_STRING, rank, dims);
    gl_bytes *b = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < t->count; i++) {
        b[i].len = strlen(s[i]);
        b[i].data = (uint8_t *)strdup(s[i]);
    }
    return t;
}

/* ---- DFT ------------------------------------------------------------------------------------- */

typedef struct dft_case {
    const char *name;
    int64_t axis, inverse, onesided, dft_length; /* dft_length 0: input omitted */
    int rank;
    int64_t dims[4];
    double x[16];
    int64_t out_dims[4];
    double y[32];
} dft_case;

Test(dft, small_cases)
{
    static const double s3 = 0.86602540378443864676; /* sin(pi/3) */
    static const dft_case cases[] = {
        {"real [1,2,3,4]", 1, 0, 0, 0, 3, {1, 4, 1}, {1, 2, 3, 4}, {1, 4, 2},
         {10, 0, -2, 2, -2, 0, -2, -2}},
        {"onesided", 1, 0, 1, 0, 3, {1, 4, 1}, {1, 2, 3, 4}, {1, 3, 2}, {10, 0, -2, 2, -2, 0}},
        {"inverse of the spectrum", 1, 1, 0, 0, 3, {1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2},
         {1, 4, 2}, {1, 0, 2, 0, 3, 0, 4, 0}},
        {"zero-padded to 6", 1, 0, 0, 6, 3, {1, 2, 1}, {1, 1}, {1, 6, 2},
         {2, 0, 1.5, -s3, 0.5, -s3, 0, 0, 0.5, s3, 1.5, s3}},
        {"truncated to 2", 1, 0, 0, 2, 3, {1, 4, 1}, {1, 2, 3, 4}, {1, 2, 2}, {3, 0, -1, 0}},
        {"axis 2 (rows)", 2, 0, 0, 0, 4, {1, 2, 2, 1}, {1, 2, 3, 4}, {1, 2, 2, 2},
         {3, 0, -1, 0, 7, 0, -1, 0}},
        {"axis -1 (rows)", -1, 0, 0, 0, 4, {1, 2, 2, 1}, {1, 2, 3, 4}, {1, 2, 2, 2},
         {3, 0, -1, 0, 7, 0, -1, 0}},
        {"axis 1 (columns)", 1, 0, 0, 0, 4, {1, 2, 2, 1}, {1, 2, 3, 4}, {1, 2, 2, 2},
         {4, 0, 6, 0, -2, 0, -2, 0}},
        {"complex input, batch 2", 1, 0, 0, 0, 3, {2, 2, 2}, {0, 1, 0, 1, 1, 0, -1, 0},
         {2, 2, 2}, {0, 2, 0, 0, 0, 0, 2, 0}},
        {"empty batch", 1, 0, 0, 0, 3, {0, 4, 1}, {0}, {0, 4, 2}, {0}},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        const dft_case *c = &cases[i];
        gl_model *m = tu_model(17);
        gl_tensor *x = gl_tensor_new(GL_DT_FLOAT, c->rank, c->dims);
        for (int64_t e = 0; e < x->count; e++)
            ((float *)gl_tensor_make_writable(x))[e] = (float)c->x[e];
        gl_tensor *len = c->dft_length ? i64_scalar(c->dft_length) : NULL;
        const gl_tensor *in[2] = {x, len};
        gl_node *n = node_for(m, "DFT", in, len ? 2 : 1);
        gl_node_set_attr_int(n, "axis", c->axis);
        gl_node_set_attr_int(n, "inverse", c->inverse);
        gl_node_set_attr_int(n, "onesided", c->onesided);
        gl_tensor *y = NULL;
        cr_assert_eq(tu_run_kernel(m, n, in, &y), GL_OK, "%s: %s", c->name, gl_error_message());
        expect_values(y, GL_DT_FLOAT, c->rank, c->out_dims, c->y, 1e-6, c->name);
        gl_tensor_free(y);
        gl_tensor_free(x);
        gl_tensor_free(len);
        gl_model_free(m);
    }
}

/* Long transforms (radix 2, mixed radix, a large prime through Bluestein) against the
 * defining sum X_k = sum_t x_t exp(-2 pi i k t / n), in double. */
Test(dft, long_lengths_match_the_definition)
{
    static const int64_t lengths[] = {128, 60, 67, 134, 1};
    for (size_t li = 0; li < GL_ARRAY_LEN(lengths); li++) {
        int64_t n = lengths[li];
        for (int inverse = 0; inverse < 2; inverse++) {
            gl_model *m = tu_model(17);
            gl_tensor *x = gl_tensor_new(GL_DT_DOUBLE, 3, (int64_t[]){1, n, 2});
            double *xv = gl_tensor_make_writable(x);
            for (int64_t t = 0; t < n; t++) {
                xv[2 * t] = sin(0.37 * (double)t) + 0.1 * (double)(t % 7);
                xv[2 * t + 1] = cos(1.3 * (double)t) - 0.05 * (double)(t % 3);
            }
            gl_node *n0 = node_for(m, "DFT", (const gl_tensor *[]){x}, 1);
            gl_node_set_attr_int(n0, "inverse", inverse);
            gl_tensor *y = NULL;
            cr_assert_eq(tu_run_kernel(m, n0, (const gl_tensor *[]){x}, &y), GL_OK, "%s",
                         gl_error_message());
            double *want = calloc((size_t)(2 * n), sizeof(double)), sign = inverse ? 1 : -1;
            for (int64_t k = 0; k < n; k++) {
                for (int64_t t = 0; t < n; t++) {
                    double a = sign * 2 * M_PI * (double)((k * t) % n) / (double)n;
                    want[2 * k] += xv[2 * t] * cos(a) - xv[2 * t + 1] * sin(a);
                    want[2 * k + 1] += xv[2 * t] * sin(a) + xv[2 * t + 1] * cos(a);
                }
                if (inverse)
                    want[2 * k] /= (double)n, want[2 * k + 1] /= (double)n;
            }
            char what[64];
            snprintf(what, sizeof(what), "n=%lld inverse=%d", (long long)n, inverse);
            expect_values(y, GL_DT_DOUBLE, 3, (int64_t[]){1, n, 2}, want, 1e-10, what);
            free(want);
            gl_tensor_free(y);
            gl_tensor_free(x);
            gl_model_free(m);
        }
    }
}

Test(dft, dtypes_and_errors)
{
    /* float16 in, float16 out: [1, 2] -> [3, -1] exactly */
    gl_model *m = tu_model(17);
    uint16_t h[2] = {gl_f32_to_f16(1), gl_f32_to_f16(2)};
    gl_tensor *x = tu_tensor_of(GL_DT_FLOAT16, 3, (int64_t[]){1, 2, 1}, h), *y = NULL;
    gl_node *n = node_for(m, "DFT", (const gl_tensor *[]){x}, 1);
    cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *[]){x}, &y), GL_OK, "%s",
                 gl_error_message());
    expect_values(y, GL_DT_FLOAT16, 3, (int64_t[]){1, 2, 2}, (double[]){3, 0, -1, 0}, 0,
                  "float16");
    gl_tensor_free(y);
    gl_tensor_free(x);
    gl_model_free(m);

    static const struct {
        const char *name;
        int64_t dims[3], axis, len;
    } bad[] = {
        {"last dimension 3", {1, 2, 3}, 1, 0},
        {"dft_length 0", {1, 2, 1}, 1, -100},
        {"axis past the signal dims", {1, 2, 1}, 2, 0},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(bad); i++) {
        m = tu_model(17);
        x = tu_tensor_f32(3, bad[i].dims, NULL);
        gl_tensor *len = bad[i].len ? i64_scalar(bad[i].len == -100 ? 0 : bad[i].len) : NULL;
        const gl_tensor *in[2] = {x, len};
        n = node_for(m, "DFT", in, len ? 2 : 1);
        gl_node_set_attr_int(n, "axis", bad[i].axis);
        y = NULL;
        cr_expect_eq(tu_run_kernel(m, n, in, &y), GL_ERR_INPUT, "%s", bad[i].name);
        cr_expect(strstr(gl_error_message(), "(DFT)") != NULL, "%s: %s", bad[i].name,
                  gl_error_message());
        gl_tensor_free(y);
        gl_tensor_free(x);
        gl_tensor_free(len);
        gl_model_free(m);
    }
}

Test(dft, shape_function)
{
    static const struct {
        const char *name;
        int64_t onesided, len; /* len < 0: no dft_length input; 0: input not constant */
        int64_t want1;         /* -1 with sym "T": the symbol kept */
        bool keeps_sym;
    } cases[] = {
        {"plain keeps the symbol", 0, -1, -1, true},
        {"onesided of a symbol: unknown", 1, -1, -1, false},
        {"constant dft_length", 0, 10, 10, false},
        {"onesided constant dft_length", 1, 10, 6, false},
        {"dft_length not constant", 0, 0, -1, false},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(17);
        gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 3, (int64_t[]){-1, -1, 1});
        gl_dim_set_sym(&x->type.shape.dims[0], "N");
        gl_dim_set_sym(&x->type.shape.dims[1], "T");
        gl_value *len = NULL;
        if (cases[i].len > 0)
            len = tu_const_i64(m->graph, "len", 0, NULL, &cases[i].len);
        else if (cases[i].len == 0)
            len = tu_input(m->graph, "len", GL_DT_INT64, 0, NULL);
        gl_node *n = gl_add_node(m->graph, "DFT", "", "d", (gl_value *[]){x, len},
                                 len ? 2 : 1, 1);
        gl_node_set_attr_int(n, "onesided", cases[i].onesided);
        gl_type t;
        cr_assert_eq(tu_infer(m, n, &t), GL_OK, "%s: %s", cases[i].name, gl_error_message());
        cr_assert_eq(t.shape.rank, 3, "%s", cases[i].name);
        cr_expect_str_eq(t.shape.dims[0].sym, "N", "%s: batch symbol", cases[i].name);
        cr_expect_eq(t.shape.dims[1].value, cases[i].want1, "%s", cases[i].name);
        cr_expect_eq(t.shape.dims[1].sym != NULL, cases[i].keeps_sym, "%s", cases[i].name);
        cr_expect_eq(t.shape.dims[2].value, 2, "%s: complex dim", cases[i].name);
        gl_type_free(&t);
        gl_model_free(m);
    }
}

/* ---- STFT ------------------------------------------------------------------------------------ */

Test(stft, frames)
{
    static const struct {
        const char *name;
        bool window, frame_length;
        int64_t onesided, bins;
        double y[2 * 4 * 2];
    } cases[] = {
        /* frames [0,1,2,3] and [4,5,6,7] */
        {"no window", false, true, 1, 3, {6, 0, -2, 2, -2, 0, 22, 0, -2, 2, -2, 0}},
        /* window [0,1,1,0]: [0,1,2,0] and [0,5,6,0] */
        {"window", true, false, 1, 3, {3, 0, -2, -1, 1, 0, 11, 0, -6, -5, 1, 0}},
        {"window and frame_length", true, true, 1, 3, {3, 0, -2, -1, 1, 0, 11, 0, -6, -5, 1, 0}},
        {"two-sided", true, false, 0, 4,
         {3, 0, -2, -1, 1, 0, -2, 1, 11, 0, -6, -5, 1, 0, -6, 5}},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(17);
        gl_tensor *sig = tu_tensor_f32(3, (int64_t[]){1, 8, 1}, (float[]){0, 1, 2, 3, 4, 5, 6, 7});
        gl_tensor *step = i64_scalar(4), *len = cases[i].frame_length ? i64_scalar(4) : NULL;
        gl_tensor *win = cases[i].window ? tu_tensor_f32(1, (int64_t[]){4}, (float[]){0, 1, 1, 0})
                                         : NULL;
        const gl_tensor *in[4] = {sig, step, win, len};
        gl_node *n = node_for(m, "STFT", in, len ? 4 : 3);
        gl_node_set_attr_int(n, "onesided", cases[i].onesided);
        gl_tensor *y = NULL;
        cr_assert_eq(tu_run_kernel(m, n, in, &y), GL_OK, "%s: %s", cases[i].name,
                     gl_error_message());
        expect_values(y, GL_DT_FLOAT, 4, (int64_t[]){1, 2, cases[i].bins, 2}, cases[i].y, 1e-6,
                      cases[i].name);
        gl_tensor_free(y);
        gl_tensor_free(sig), gl_tensor_free(step), gl_tensor_free(len), gl_tensor_free(win);
        gl_model_free(m);
    }
}

Test(stft, errors_and_shape)
{
    static const struct {
        const char *name;
        int64_t sig_rank, step, frame_length, window;
    } bad[] = {
        {"frame_length differs from the window", 3, 4, 5, 4},
        {"frame_step 0", 3, 0, 4, 0},
        {"signal of rank 2", 2, 4, 4, 0},
        {"neither window nor frame_length", 3, 4, 0, 0},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(bad); i++) {
        gl_model *m = tu_model(17);
        gl_tensor *sig = bad[i].sig_rank == 3 ? tu_tensor_f32(3, (int64_t[]){1, 8, 1}, NULL)
                                              : tu_tensor_f32(2, (int64_t[]){1, 8}, NULL);
        gl_tensor *step = i64_scalar(bad[i].step);
        gl_tensor *len = bad[i].frame_length ? i64_scalar(bad[i].frame_length) : NULL;
        gl_tensor *win = bad[i].window ? tu_tensor_f32(1, (int64_t[]){bad[i].window}, NULL) : NULL;
        const gl_tensor *in[4] = {sig, step, win, len};
        gl_node *n = node_for(m, "STFT", in, 4);
        gl_tensor *y = NULL;
        cr_expect_eq(tu_run_kernel(m, n, in, &y), GL_ERR_INPUT, "%s", bad[i].name);
        gl_tensor_free(y);
        gl_tensor_free(sig), gl_tensor_free(step), gl_tensor_free(len), gl_tensor_free(win);
        gl_model_free(m);
    }
    /* shape: [N, 128, 1], step 8, frame_length 16 (constants) -> [N, 15, 9, 2] */
    gl_model *m = tu_model(17);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 3, (int64_t[]){-1, 128, 1});
    gl_dim_set_sym(&x->type.shape.dims[0], "N");
    gl_value *step = tu_const_i64(m->graph, "step", 0, NULL, (int64_t[]){8});
    gl_value *len = tu_const_i64(m->graph, "len", 0, NULL, (int64_t[]){16});
    gl_node *n = gl_add_node(m->graph, "STFT", "", "s", (gl_value *[]){x, step, NULL, len}, 4, 1);
    gl_type t;
    cr_assert_eq(tu_infer(m, n, &t), GL_OK, "%s", gl_error_message());
    cr_assert_eq(t.shape.rank, 4);
    cr_expect_str_eq(t.shape.dims[0].sym, "N");
    cr_expect_eq(t.shape.dims[1].value, 15);
    cr_expect_eq(t.shape.dims[2].value, 9);
    cr_expect_eq(t.shape.dims[3].value, 2);
    gl_type_free(&t);
    gl_model_free(m);
}

/* ---- windows --------------------------------------------------------------------------------- */

Test(windows, values)
{
    static const double a = 25.0 / 46.0;
    static const struct {
        const char *op;
        int64_t periodic, size, dtype;
        double want[4];
    } cases[] = {
        /* periodic N = 4: cos(2 pi k / 4) = 1, 0, -1, 0 */
        {"HannWindow", 1, 4, 1, {0, 0.5, 1, 0.5}},
        {"HammingWindow", 1, 4, 1, {2 * a - 1, a, 1, a}},
        {"BlackmanWindow", 1, 4, 1, {0, 0.34, 1, 0.34}},
        /* symmetric N = 3: cos(2 pi / 3) = -1/2 */
        {"HannWindow", 0, 4, 1, {0, 0.75, 0.75, 0}},
        {"HannWindow", 0, 4, 11, {0, 0.75, 0.75, 0}},
        {"HannWindow", 0, 3, 6, {0, 1, 0}},
        {"HannWindow", 0, 1, 1, {1}},
        {"BlackmanWindow", 1, 0, 1, {0}},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(17);
        int32_t size = (int32_t)cases[i].size;
        gl_tensor *s = tu_tensor_of(GL_DT_INT32, 0, NULL, &size), *y = NULL;
        gl_node *n = node_for(m, cases[i].op, (const gl_tensor *[]){s}, 1);
        gl_node_set_attr_int(n, "periodic", cases[i].periodic);
        gl_node_set_attr_int(n, "output_datatype", cases[i].dtype);
        char what[64];
        snprintf(what, sizeof(what), "%s periodic=%lld size=%lld dtype=%lld", cases[i].op,
                 (long long)cases[i].periodic, (long long)cases[i].size,
                 (long long)cases[i].dtype);
        cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *[]){s}, &y), GL_OK, "%s: %s", what,
                     gl_error_message());
        expect_values(y, (gl_dtype)cases[i].dtype, 1, &cases[i].size, cases[i].want,
                      cases[i].dtype == 1 ? 1e-6 : 1e-12, what);
        gl_tensor_free(y);
        gl_tensor_free(s);
        gl_model_free(m);
    }
}

Test(windows, errors_and_shape)
{
    gl_model *m = tu_model(17);
    gl_tensor *neg = i64_scalar(-1), *y = NULL;
    gl_node *n = node_for(m, "HannWindow", (const gl_tensor *[]){neg}, 1);
    cr_expect_eq(tu_run_kernel(m, n, (const gl_tensor *[]){neg}, &y), GL_ERR_INPUT, "size -1");
    gl_node_set_attr_int(n, "output_datatype", GL_DT_STRING);
    gl_type t;
    cr_expect_eq(tu_infer(m, n, &t), GL_ERR_INPUT, "string output");
    gl_type_free(&t);
    gl_tensor_free(neg);
    gl_model_free(m);

    m = tu_model(17);
    gl_value *c = tu_const_i64(m->graph, "size", 0, NULL, (int64_t[]){10});
    gl_value *v = tu_input(m->graph, "dyn", GL_DT_INT64, 0, NULL);
    gl_node *a = tu_node(m->graph, "HammingWindow", "a", 1, c);
    gl_node *b = tu_node(m->graph, "BlackmanWindow", "b", 1, v);
    gl_node_set_attr_int(b, "output_datatype", GL_DT_DOUBLE);
    cr_assert_eq(tu_infer(m, a, &t), GL_OK);
    cr_expect_eq(t.dtype, GL_DT_FLOAT);
    cr_assert_eq(t.shape.rank, 1);
    cr_expect_eq(t.shape.dims[0].value, 10);
    gl_type_free(&t);
    cr_assert_eq(tu_infer(m, b, &t), GL_OK);
    cr_expect_eq(t.dtype, GL_DT_DOUBLE);
    cr_assert_eq(t.shape.rank, 1);
    cr_expect_eq(t.shape.dims[0].value, GL_DIM_UNKNOWN);
    gl_type_free(&t);
    gl_model_free(m);
}

/* ---- MelWeightMatrix ------------------------------------------------------------------------- */

/* 2 bins, dft_length 16, 16 kHz, 0..8000 Hz: mel(8000) = 2840.03, 4 steps of 710.008 mel;
 * edges 0, 614.3, 1767.8, 3933.6 Hz -> spectrogram bins floor(17 f / 16000) = 0, 0, 1, 4.
 * Filter 0 (0,0,1): a peak at bin 0. Filter 1 (0,1,4): rises 0 -> 1 over bins 0..1, falls
 * 3/3, 2/3, 1/3 over bins 1..3. */
Test(mel, filter_bank)
{
    gl_model *m = tu_model(17);
    gl_tensor *in[5] = {i64_scalar(2), i64_scalar(16), i64_scalar(16000), f32_scalar(0),
                        f32_scalar(8000)};
    gl_node *n = node_for(m, "MelWeightMatrix", (const gl_tensor *const *)in, 5);
    gl_tensor *y = NULL;
    cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *const *)in, &y), GL_OK, "%s",
                 gl_error_message());
    double want[18] = {1, 0, 0, 1, 0, 2.0 / 3, 0, 1.0 / 3};
    expect_values(y, GL_DT_FLOAT, 2, (int64_t[]){9, 2}, want, 1e-6, "filter bank");
    gl_tensor_free(y);

    /* shape from the constants, output_datatype double */
    gl_node_set_attr_int(n, "output_datatype", GL_DT_DOUBLE);
    gl_type t;
    cr_assert_eq(tu_infer(m, n, &t), GL_OK);
    cr_expect_eq(t.dtype, GL_DT_DOUBLE);
    cr_expect_eq(t.shape.rank, 2);
    gl_type_free(&t);

    /* an upper edge far above Nyquist would index past the matrix */
    gl_tensor_free(in[4]);
    in[4] = f32_scalar(30000);
    cr_expect_eq(tu_run_kernel(m, n, (const gl_tensor *const *)in, &y), GL_ERR_INPUT);
    cr_expect(strstr(gl_error_message(), "Nyquist") != NULL, "%s", gl_error_message());
    gl_tensor_free(y);
    for (size_t i = 0; i < 5; i++)
        gl_tensor_free(in[i]);
    gl_model_free(m);

    m = tu_model(17);
    gl_value *v[5] = {
        tu_const_i64(m->graph, "bins", 0, NULL, (int64_t[]){8}),
        tu_const_i64(m->graph, "len", 0, NULL, (int64_t[]){16}),
        tu_input(m->graph, "rate", GL_DT_INT64, 0, NULL),
        tu_input(m->graph, "lo", GL_DT_FLOAT, 0, NULL),
        tu_input(m->graph, "hi", GL_DT_FLOAT, 0, NULL),
    };
    n = gl_add_node(m->graph, "MelWeightMatrix", "", "mel", v, 5, 1);
    cr_assert_eq(tu_infer(m, n, &t), GL_OK);
    cr_assert_eq(t.shape.rank, 2);
    cr_expect_eq(t.shape.dims[0].value, 9);
    cr_expect_eq(t.shape.dims[1].value, 8);
    gl_type_free(&t);
    gl_model_free(m);
}

/* ---- TfIdfVectorizer ------------------------------------------------------------------------- */

typedef struct tfidf_case {
    const char *name, *mode;
    int64_t min_n, max_n, skip;
    int64_t counts[3], n_counts, indexes[8], n_indexes;
    float weights[8];
    size_t n_weights;
    const char *pool_s[8];
    size_t n_pool_s;
    int64_t pool_i[16];
    size_t n_pool_i;
    const char *x_s[8]; /* x_s[0] NULL: the int32 input x_i */
    int32_t x_i[16];
    int x_rank;
    int64_t x_dims[2];
    int64_t y_dims[2];
    double y[16];
} tfidf_case;

static gl_status run_tfidf(const tfidf_case *c, gl_tensor **y, gl_type *t)
{
    gl_model *m = tu_model(9);
    gl_tensor *x = c->x_s[0] ? strings_tensor(c->x_rank, c->x_dims, c->x_s)
                               : tu_tensor_of(GL_DT_INT32, c->x_rank, c->x_dims, c->x_i);
    gl_node *n = node_for(m, "TfIdfVectorizer", (const gl_tensor *[]){x}, 1);
    gl_node_set_attr_string(n, "mode", c->mode);
    gl_node_set_attr_int(n, "min_gram_length", c->min_n);
    gl_node_set_attr_int(n, "max_gram_length", c->max_n);
    gl_node_set_attr_int(n, "max_skip_count", c->skip);
    gl_node_set_attr_ints(n, "ngram_counts", c->counts, (size_t)c->n_counts);
    gl_node_set_attr_ints(n, "ngram_indexes", c->indexes, (size_t)c->n_indexes);
    if (c->n_weights)
        gl_node_set_attr_floats(n, "weights", c->weights, c->n_weights);
    if (c->n_pool_s)
        set_strings(n, "pool_strings", c->pool_s, c->n_pool_s);
    if (c->n_pool_i)
        gl_node_set_attr_ints(n, "pool_int64s", c->pool_i, c->n_pool_i);
    gl_status st = tu_run_kernel(m, n, (const gl_tensor *[]){x}, y);
    if (t && tu_infer(m, n, t) != GL_OK)
        st = GL_ERR_INTERNAL;
    gl_tensor_free(x);
    gl_model_free(m);
    return st;
}

Test(tfidf, counts)
{
    static const tfidf_case cases[] = {
        /* ONNX's example: bigrams (5,6) (7,8) (6,7) with skips up to 5 */
        {"ints, uni- and bigrams, skip 5", "TF", 1, 2, 5, {0, 4}, 2, {0, 1, 2, 3, 4, 5, 6}, 7,
         {0}, 0, {0}, 0, {2, 3, 5, 4, 5, 6, 7, 8, 6, 7}, 10, {0},
         {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}, 1, {12}, {7}, {0, 3, 1, 0, 1, 3, 1}},
        {"ints, bigrams only, no skip, batch", "TF", 2, 2, 0, {0, 4}, 2,
         {0, 1, 2, 3, 4, 5, 6}, 7, {0}, 0, {0}, 0, {2, 3, 5, 4, 5, 6, 7, 8, 6, 7}, 10, {0},
         {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}, 2, {2, 6}, {2, 7},
         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}},
        /* x: 2 (index 2), y: 2 (index 0), (x,y) once at 0-1 (index 1) */
        {"strings, remapped indexes", "TF", 1, 2, 0, {0, 2}, 2, {2, 0, 1}, 3, {0}, 0,
         {"x", "y", "x", "y"}, 4, {0}, 0, {"x", "y", "y", "z", "x"}, {0}, 1, {5}, {3},
         {2, 1, 2}},
        {"IDF with weights", "IDF", 1, 2, 0, {0, 2}, 2, {2, 0, 1}, 3, {0.5f, 2, 3}, 3,
         {"x", "y", "x", "y"}, 4, {0}, 0, {"x", "y", "y", "z", "x"}, {0}, 1, {5}, {3},
         {2, 3, 0.5}},
        {"TFIDF with weights", "TFIDF", 1, 2, 0, {0, 2}, 2, {2, 0, 1}, 3, {0.5f, 2, 3}, 3,
         {"x", "y", "x", "y"}, 4, {0}, 0, {"x", "y", "y", "z", "x"}, {0}, 1, {5}, {3},
         {4, 3, 1}},
        /* trigram (7,8,9): at skip 0 from 0, at skip 1 from 3 (7 _ 8 _ 9) */
        {"trigram with skip 1", "TF", 3, 3, 1, {0, 0, 0}, 3, {0}, 1, {0}, 0, {0}, 0,
         {7, 8, 9}, 3, {0}, {7, 8, 9, 7, 0, 8, 0, 9}, 2, {1, 8}, {1, 1}, {2}},
        {"empty rows", "TF", 1, 1, 0, {0}, 1, {0, 1}, 2, {0}, 0, {0}, 0, {4, 5}, 2, {0}, {0}, 2,
         {3, 0}, {3, 2}, {0}},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        const tfidf_case *c = &cases[i];
        gl_tensor *y = NULL;
        gl_type t;
        cr_assert_eq(run_tfidf(c, &y, &t), GL_OK, "%s: %s", c->name, gl_error_message());
        expect_values(y, GL_DT_FLOAT, c->x_rank, c->y_dims, c->y, 0, c->name);
        cr_assert_eq(t.shape.rank, c->x_rank, "%s: inferred rank", c->name);
        for (int d = 0; d < c->x_rank; d++)
            cr_expect_eq(t.shape.dims[d].value, c->y_dims[d], "%s: inferred dim %d", c->name, d);
        gl_type_free(&t);
        gl_tensor_free(y);
    }
}

Test(tfidf, errors)
{
    tfidf_case base = {"", "TF", 1, 1, 0, {0}, 1, {0, 1}, 2, {0}, 0, {0}, 0, {4, 5}, 2, {0},
                       {4, 5}, 1, {2}, {2}, {1, 1}};
    gl_tensor *y = NULL;
    cr_assert_eq(run_tfidf(&base, &y, NULL), GL_OK, "the base case is valid: %s",
                 gl_error_message());
    gl_tensor_free(y);
    tfidf_case c = base;
    c.mode = "BM25";
    cr_expect_eq(run_tfidf(&c, &y, NULL), GL_ERR_INPUT, "mode");
    c = base;
    c.n_indexes = 1;
    cr_expect_eq(run_tfidf(&c, &y, NULL), GL_ERR_INPUT, "ngram_indexes count");
    c = base;
    c.indexes[1] = -1;
    cr_expect_eq(run_tfidf(&c, &y, NULL), GL_ERR_INPUT, "negative index");
    c = base;
    c.pool_s[0] = "a", c.pool_s[1] = "b", c.n_pool_s = 2;
    cr_expect_eq(run_tfidf(&c, &y, NULL), GL_ERR_INPUT, "both pools");
    c = base;
    c.min_n = 2;
    cr_expect_eq(run_tfidf(&c, &y, NULL), GL_ERR_INPUT, "min > max");
    c = base;
    c.n_weights = 1, c.mode = "IDF";
    cr_expect_eq(run_tfidf(&c, &y, NULL), GL_ERR_INPUT, "weights count");
    cr_expect(strstr(gl_error_message(), "(TfIdfVectorizer)") != NULL, "%s",
              gl_error_message());
}

/* ---- StringNormalizer ------------------------------------------------------------------------ */

Test(strnorm, cases)
{
    static const struct {
        const char *name, *action;
        int64_t sensitive;
        const char *stop[2];
        size_t n_stop;
        int rank;
        int64_t n;
        const char *x[4];
        int64_t y_n;
        const char *y[4];
    } cases[] = {
        {"lower, ASCII only", "LOWER", 0, {0}, 0, 1, 3, {"Hello", "WORLD", "\xc3\x84" "B"}, 3,
         {"hello", "world", "\xc3\x84" "b"}},
        {"upper", "UPPER", 0, {0}, 0, 1, 2, {"monday", "Tu3"}, 2, {"MONDAY", "TU3"}},
        {"stopwords, insensitive", "NONE", 0, {"the"}, 1, 1, 3, {"The", "cat", "THE"}, 1,
         {"cat"}},
        {"stopwords, sensitive", "NONE", 1, {"the"}, 1, 1, 3, {"The", "cat", "THE"}, 3,
         {"The", "cat", "THE"}},
        {"[1, C], upper after removal", "UPPER", 0, {"monday"}, 1, 2, 3,
         {"Monday", "tuesday", "x"}, 2, {"TUESDAY", "X"}},
        {"everything removed, [C]", "UPPER", 1, {"monday"}, 1, 1, 2, {"monday", "monday"}, 1,
         {""}},
        {"everything removed, [1, C]", "NONE", 0, {"a", "b"}, 2, 2, 2, {"A", "b"}, 1, {""}},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(10);
        int64_t dims[2] = {1, cases[i].n};
        gl_tensor *x = cases[i].rank == 2 ? strings_tensor(2, dims, cases[i].x)
                                          : strings_tensor(1, &cases[i].n, cases[i].x);
        gl_node *n = node_for(m, "StringNormalizer", (const gl_tensor *[]){x}, 1);
        gl_node_set_attr_string(n, "case_change_action", cases[i].action);
        gl_node_set_attr_int(n, "is_case_sensitive", cases[i].sensitive);
        if (cases[i].n_stop)
            set_strings(n, "stopwords", cases[i].stop, cases[i].n_stop);
        gl_tensor *y = NULL;
        cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *[]){x}, &y), GL_OK, "%s: %s",
                     cases[i].name, gl_error_message());
        cr_assert_eq(y->dtype, GL_DT_STRING, "%s", cases[i].name);
        cr_assert_eq(y->rank, cases[i].rank, "%s", cases[i].name);
        cr_assert_eq(y->dims[cases[i].rank - 1], cases[i].y_n, "%s: count", cases[i].name);
        if (cases[i].rank == 2)
            cr_expect_eq(y->dims[0], 1, "%s", cases[i].name);
        const gl_bytes *b = gl_tensor_data(y);
        for (int64_t e = 0; e < cases[i].y_n; e++)
            cr_expect(b[e].len == strlen(cases[i].y[e]) &&
                          memcmp(b[e].data, cases[i].y[e], b[e].len) == 0,
                      "%s: element %lld is '%.*s', expected '%s'", cases[i].name, (long long)e,
                      (int)b[e].len, (const char *)b[e].data, cases[i].y[e]);
        gl_type t;
        cr_assert_eq(tu_infer(m, n, &t), GL_OK, "%s", cases[i].name);
        cr_expect_eq(t.dtype, GL_DT_STRING);
        cr_assert_eq(t.shape.rank, cases[i].rank, "%s: inferred rank", cases[i].name);
        int64_t last = t.shape.dims[cases[i].rank - 1].value;
        cr_expect_eq(last, cases[i].n_stop ? GL_DIM_UNKNOWN : cases[i].n,
                     "%s: inferred length", cases[i].name);
        gl_type_free(&t);
        gl_tensor_free(y);
        gl_tensor_free(x);
        gl_model_free(m);
    }
}

Test(strnorm, errors)
{
    gl_model *m = tu_model(10);
    const char *s[4] = {"a", "b", "c", "d"};
    gl_tensor *x = strings_tensor(2, (int64_t[]){2, 2}, s), *y = NULL;
    gl_node *n = node_for(m, "StringNormalizer", (const gl_tensor *[]){x}, 1);
    cr_expect_eq(tu_run_kernel(m, n, (const gl_tensor *[]){x}, &y), GL_ERR_INPUT, "[2, 2]");
    gl_type t;
    cr_expect_eq(tu_infer(m, n, &t), GL_ERR_INPUT, "[2, 2] in the shape function");
    gl_type_free(&t);
    gl_tensor_free(x);
    x = strings_tensor(1, (int64_t[]){4}, s);
    gl_node_set_attr_string(n, "case_change_action", "TITLE");
    cr_expect_eq(tu_run_kernel(m, n, (const gl_tensor *[]){x}, &y), GL_ERR_INPUT, "TITLE");
    gl_tensor_free(x);
    gl_model_free(m);
}

/* ---- random generators ----------------------------------------------------------------------- */

Test(random, flags)
{
    static const struct {
        const char *op;
        int opset;
    } ops[] = {{"Bernoulli", 15}, {"RandomNormal", 1}, {"RandomUniform", 1},
               {"RandomNormalLike", 1}, {"RandomUniformLike", 1}, {"Multinomial", 7}};
    for (size_t i = 0; i < GL_ARRAY_LEN(ops); i++) {
        const gl_op_def *d = gl_op_lookup("", ops[i].op, ops[i].opset);
        cr_assert_not_null(d, "%s registered", ops[i].op);
        cr_expect(d->flags & GL_OP_RANDOM, "%s is random", ops[i].op);
    }
    cr_expect_not(gl_op_lookup("", "DFT", 17)->flags & GL_OP_RANDOM);
}

static gl_tensor *run_uniform(float seed, bool with_seed)
{
    gl_model *m = tu_model(13);
    gl_node *n = gl_add_node(m->graph, "RandomUniform", "", "u", NULL, 0, 1);
    gl_node_set_attr_ints(n, "shape", (int64_t[]){2, 3}, 2);
    gl_node_set_attr_int(n, "dtype", GL_DT_DOUBLE);
    gl_node_set_attr_float(n, "low", 2);
    gl_node_set_attr_float(n, "high", 5);
    if (with_seed)
        gl_node_set_attr_float(n, "seed", seed);
    gl_tensor *y = NULL;
    cr_assert_eq(tu_run_kernel(m, n, NULL, &y), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
    return y;
}

Test(random, uniform_range_and_seed)
{
    gl_tensor *a = run_uniform(1, true), *b = run_uniform(1, true), *c = run_uniform(2, true);
    gl_tensor *d = run_uniform(0, false);
    cr_assert_eq(a->dtype, GL_DT_DOUBLE);
    cr_assert_eq(a->rank, 2);
    cr_assert(a->dims[0] == 2 && a->dims[1] == 3);
    for (int64_t i = 0; i < a->count; i++) {
        double v = ((double *)a->buf->data)[i];
        cr_expect(v >= 2 && v < 5, "element %lld = %g in [2, 5)", (long long)i, v);
    }
    cr_expect(gl_tensor_equal(a, b), "same seed, same values");
    cr_expect_not(gl_tensor_equal(a, c), "another seed, other values");
    cr_expect_eq(d->count, 6);
    gl_tensor_free(a), gl_tensor_free(b), gl_tensor_free(c), gl_tensor_free(d);
}

Test(random, normal_moments)
{
    gl_model *m = tu_model(13);
    gl_node *n = gl_add_node(m->graph, "RandomNormal", "", "r", NULL, 0, 1);
    gl_node_set_attr_ints(n, "shape", (int64_t[]){4000}, 1);
    gl_node_set_attr_float(n, "mean", 3);
    gl_node_set_attr_float(n, "scale", 2);
    gl_tensor *y = NULL;
    cr_assert_eq(tu_run_kernel(m, n, NULL, &y), GL_OK, "%s", gl_error_message());
    cr_assert_eq(y->dtype, GL_DT_FLOAT);
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < y->count; i++) {
        double v = ((float *)y->buf->data)[i];
        sum += v, sq += v * v;
    }
    double mean = sum / 4000, sd = sqrt(sq / 4000 - mean * mean);
    cr_expect(fabs(mean - 3) < 0.2, "mean %g", mean);
    cr_expect(fabs(sd - 2) < 0.2, "sd %g", sd);
    gl_type t;
    cr_assert_eq(tu_infer(m, n, &t), GL_OK);
    cr_expect_eq(t.dtype, GL_DT_FLOAT);
    cr_assert_eq(t.shape.rank, 1);
    cr_expect_eq(t.shape.dims[0].value, 4000);
    gl_type_free(&t);
    gl_node_set_attr_int(n, "dtype", GL_DT_INT32);
    cr_expect_eq(tu_infer(m, n, &t), GL_ERR_INPUT, "int32 is not a RandomNormal type");
    gl_type_free(&t);
    gl_node_remove_attr(n, "dtype");
    gl_node_remove_attr(n, "shape");
    cr_expect_eq(tu_infer(m, n, &t), GL_ERR_INPUT, "shape is required");
    gl_type_free(&t);
    gl_tensor_free(y);
    gl_model_free(m);
}

Test(random, like_and_bernoulli_and_multinomial)
{
    /* *Like: shape copied; dtype from the input unless given; ints need a dtype */
    gl_model *m = tu_model(15);
    gl_tensor *xi = tu_tensor_of(GL_DT_INT32, 2, (int64_t[]){2, 2}, (int32_t[]){1, 2, 3, 4});
    gl_node *n = node_for(m, "RandomUniformLike", (const gl_tensor *[]){xi}, 1);
    gl_tensor *y = NULL;
    cr_expect_eq(tu_run_kernel(m, n, (const gl_tensor *[]){xi}, &y), GL_ERR_INPUT,
                 "int32 input without dtype");
    gl_node_set_attr_int(n, "dtype", GL_DT_FLOAT16);
    cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *[]){xi}, &y), GL_OK, "%s",
                 gl_error_message());
    cr_expect_eq(y->dtype, GL_DT_FLOAT16);
    cr_expect(y->rank == 2 && y->dims[0] == 2 && y->dims[1] == 2);
    for (int64_t i = 0; i < y->count; i++)
        cr_expect(gl_elem_f64(y, i) >= 0 && gl_elem_f64(y, i) <= 1);
    gl_type t;
    cr_assert_eq(tu_infer(m, n, &t), GL_OK);
    cr_expect_eq(t.dtype, GL_DT_FLOAT16);
    cr_expect_eq(t.shape.rank, 2);
    gl_type_free(&t);
    gl_tensor_free(y);
    gl_tensor_free(xi);

    /* Bernoulli: p 0 and 1 are certain */
    gl_tensor *p = tu_tensor_f32(1, (int64_t[]){4}, (float[]){0, 1, 0, 1});
    n = node_for(m, "Bernoulli", (const gl_tensor *[]){p}, 1);
    cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *[]){p}, &y), GL_OK, "%s",
                 gl_error_message());
    expect_values(y, GL_DT_FLOAT, 1, (int64_t[]){4}, (double[]){0, 1, 0, 1}, 0, "bernoulli");
    gl_tensor_free(y);
    gl_node_set_attr_int(n, "dtype", GL_DT_BOOL);
    cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *[]){p}, &y), GL_OK);
    expect_values(y, GL_DT_BOOL, 1, (int64_t[]){4}, (double[]){0, 1, 0, 1}, 0,
                  "bernoulli bool");
    gl_tensor_free(y);
    cr_assert_eq(tu_infer(m, n, &t), GL_OK);
    cr_expect_eq(t.dtype, GL_DT_BOOL);
    gl_type_free(&t);
    gl_tensor_free(p);
    p = tu_tensor_f32(1, (int64_t[]){1}, (float[]){1.5f});
    cr_expect_eq(tu_run_kernel(m, n, (const gl_tensor *[]){p}, &y), GL_ERR_INPUT, "p = 1.5");
    gl_tensor_free(p);

    /* Multinomial: log-probabilities so lopsided that every draw is the same class */
    gl_tensor *lp = tu_tensor_f32(2, (int64_t[]){2, 2}, (float[]){0, -1000, -1000, 0});
    n = node_for(m, "Multinomial", (const gl_tensor *[]){lp}, 1);
    gl_node_set_attr_int(n, "sample_size", 5);
    cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *[]){lp}, &y), GL_OK, "%s",
                 gl_error_message());
    expect_values(y, GL_DT_INT32, 2, (int64_t[]){2, 5}, (double[]){0, 0, 0, 0, 0, 1, 1, 1, 1, 1},
                  0, "multinomial");
    gl_tensor_free(y);
    gl_node_set_attr_int(n, "dtype", GL_DT_INT64);
    cr_assert_eq(tu_infer(m, n, &t), GL_OK);
    cr_expect_eq(t.dtype, GL_DT_INT64);
    cr_assert_eq(t.shape.rank, 2);
    cr_expect_eq(t.shape.dims[0].value, 2);
    cr_expect_eq(t.shape.dims[1].value, 5);
    gl_type_free(&t);
    gl_node_set_attr_int(n, "dtype", GL_DT_FLOAT);
    cr_expect_eq(tu_run_kernel(m, n, (const gl_tensor *[]){lp}, &y), GL_ERR_INPUT,
                 "float is not a Multinomial output type");
    gl_tensor_free(lp);
    gl_model_free(m);
}

/* test_ops_nn.c — kernels and shape functions of the nn family (src/ops/nn.c).
 *
 * Kernel cases are tables of (node, inputs, expected outputs); expected values are
 * worked out by hand from the ONNX operator definitions (or taken from the examples in
 * the ONNX operator documentation), never produced by the code under test. One large
 * convolution is checked against a naive loop written here from the definition, to
 * cover the blocked GEMM's edges. Shape cases give input types as text
 * ("float[N,3,224,224]") and expect the output types as text. */
#include <criterion/criterion.h>

#include "ops/opkit.h"
#define TU_CASE_SHORTHANDS /* T(), D(), AI(), F, ...: see testutil.h */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- case tables ------------------------------------------------------------------------
 * tu_kcase rows (testutil.h). Float outputs within 1e-6 + 1e-5 |want|, float16 within 1e-2
 * relative, NaN and infinities as themselves; integers exactly. */

static const tu_tol nn_tol = {.abs = 1e-6, .rel = 1e-5, .rel_half = 1e-2, .rel_double = 1e-5};

/* 0..24: the 5x5 image of the ONNX Conv/Pool examples (values 1..25 are SEQ25 + 1). */
#define SEQ25 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, \
              22, 23, 24
#define ONE25 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, \
              23, 24, 25
#define ONES9 1, 1, 1, 1, 1, 1, 1, 1, 1

/* ---- convolution ------------------------------------------------------------------------ */

static const tu_kcase conv_cases[] = {
    {"conv no padding", "Conv", 11, {{0}}, 2,
     {T(F, 4, D(1, 1, 5, 5), SEQ25), T(F, 4, D(1, 1, 3, 3), ONES9)}, 1,
     {T(F, 4, D(1, 1, 3, 3), 54, 63, 72, 99, 108, 117, 144, 153, 162)}},
    {"conv pads 1", "Conv", 11, {AINTS("pads", 4, 1, 1, 1, 1)}, 2,
     {T(F, 4, D(1, 1, 5, 5), SEQ25), T(F, 4, D(1, 1, 3, 3), ONES9)}, 1,
     {T(F, 4, D(1, 1, 5, 5), 12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81, 93,
        144, 153, 162, 111, 72, 111, 117, 123, 84)}},
    {"conv stride 2 pads 1", "Conv", 11,
     {AINTS("pads", 4, 1, 1, 1, 1), AINTS("strides", 2, 2, 2), AINTS("kernel_shape", 2, 3, 3)}, 2,
     {T(F, 4, D(1, 1, 5, 5), SEQ25), T(F, 4, D(1, 1, 3, 3), ONES9)}, 1,
     {T(F, 4, D(1, 1, 3, 3), 12, 27, 24, 63, 108, 81, 72, 117, 84)}},
    {"conv SAME_UPPER stride 2", "Conv", 11,
     {AS("auto_pad", "SAME_UPPER"), AINTS("strides", 2, 2, 2)}, 2,
     {T(F, 4, D(1, 1, 5, 5), SEQ25), T(F, 4, D(1, 1, 3, 3), ONES9)}, 1,
     {T(F, 4, D(1, 1, 3, 3), 12, 27, 24, 63, 108, 81, 72, 117, 84)}},
    {"conv 1d SAME_LOWER", "Conv", 11, {AS("auto_pad", "SAME_LOWER")}, 2,
     {T(F, 3, D(1, 1, 3), 1, 2, 3), T(F, 3, D(1, 1, 2), 1, 10)}, 1,
     {T(F, 3, D(1, 1, 3), 10, 21, 32)}},
    {"conv 1d SAME_UPPER", "Conv", 11, {AS("auto_pad", "SAME_UPPER")}, 2,
     {T(F, 3, D(1, 1, 3), 1, 2, 3), T(F, 3, D(1, 1, 2), 1, 10)}, 1,
     {T(F, 3, D(1, 1, 3), 21, 32, 3)}},
    {"conv 1d VALID ignores pads", "Conv", 11,
     {AS("auto_pad", "VALID"), AINTS("pads", 2, 3, 3)}, 2,
     {T(F, 3, D(1, 1, 3), 1, 2, 3), T(F, 3, D(1, 1, 2), 1, 10)}, 1, {T(F, 3, D(1, 1, 2), 21, 32)}},
    {"conv 1d dilation 2", "Conv", 11, {AINTS("dilations", 1, 2)}, 2,
     {T(F, 3, D(1, 1, 5), 1, 2, 3, 4, 5), T(F, 3, D(1, 1, 2), 1, 1)}, 1,
     {T(F, 3, D(1, 1, 3), 4, 6, 8)}},
    {"conv depthwise with bias", "Conv", 11, {AI("group", 2)}, 3,
     {T(F, 4, D(1, 2, 1, 2), 1, 2, 3, 4), T(F, 4, D(2, 1, 1, 1), 2, 3), T(F, 1, D(2), 10, 20)}, 1,
     {T(F, 4, D(1, 2, 1, 2), 12, 14, 29, 32)}},
    {"conv group 2 multiplier 2", "Conv", 11, {AI("group", 2)}, 2,
     {T(F, 4, D(1, 2, 1, 2), 1, 2, 3, 4), T(F, 4, D(4, 1, 1, 1), 1, 2, 3, 4)}, 1,
     {T(F, 4, D(1, 4, 1, 2), 1, 2, 2, 4, 9, 12, 12, 16)}},
    {"conv direct depthwise stride 2 pads 1", "Conv", 11,
     {AINTS("strides", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1)}, 2,
     {T(F, 4, D(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9), T(F, 4, D(1, 1, 2, 2), 1, 0, 0, 1)}, 1,
     {T(F, 4, D(1, 1, 2, 2), 1, 3, 7, 14)}},
    {"conv im2col stride 2 pads 1", "Conv", 11,
     {AINTS("strides", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1)}, 2,
     {T(F, 4, D(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9),
      T(F, 4, D(2, 1, 2, 2), 1, 0, 0, 1, 0, 1, 1, 0)}, 1,
     {T(F, 4, D(1, 2, 2, 2), 1, 3, 7, 14, 0, 2, 4, 14)}},
    {"conv 3d", "Conv", 11, {{0}}, 2,
     {T(F, 5, D(1, 1, 2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8),
     T(F, 5, D(1, 1, 2, 2, 2), 1, 1, 1, 1, 1, 1, 1, 1)},
     1, {T(F, 5, D(1, 1, 1, 1, 1), 36)}},
    {"conv two images two channels", "Conv", 11, {{0}}, 3,
     {T(F, 4, D(2, 2, 1, 1), 1, 2, 3, 4), T(F, 4, D(1, 2, 1, 1), 10, 100), T(F, 1, D(1), 0.5)}, 1,
     {T(F, 4, D(2, 1, 1, 1), 210.5, 430.5)}},
    {"conv double", "Conv", 11, {{0}}, 2,
     {T(GL_DT_DOUBLE, 4, D(1, 1, 5, 5), SEQ25), T(GL_DT_DOUBLE, 4, D(1, 1, 3, 3), ONES9)}, 1,
     {T(GL_DT_DOUBLE, 4, D(1, 1, 3, 3), 54, 63, 72, 99, 108, 117, 144, 153, 162)}},
    {"conv float16", "Conv", 11, {{0}}, 2,
     {T(GL_DT_FLOAT16, 4, D(1, 1, 5, 5), SEQ25), T(GL_DT_FLOAT16, 4, D(1, 1, 3, 3), ONES9)}, 1,
     {T(GL_DT_FLOAT16, 4, D(1, 1, 3, 3), 54, 63, 72, 99, 108, 117, 144, 153, 162)}},
    {"conv empty batch", "Conv", 11, {{0}}, 2,
     {EMPTY(GL_DT_FLOAT, 4, D(0, 1, 5, 5)), T(F, 4, D(2, 1, 3, 3), ONES9, ONES9)}, 1,
     {EMPTY(GL_DT_FLOAT, 4, D(0, 2, 3, 3))}},
    {"conv channel mismatch", "Conv", 11, {{0}}, 2,
     {T(F, 4, D(1, 2, 1, 1), 1, 2), T(F, 4, D(1, 1, 1, 1), 1)}, 1, {OMIT}, GL_ERR_INPUT},
    {"conv kernel_shape mismatch", "Conv", 11, {AINTS("kernel_shape", 2, 2, 2)}, 2,
     {T(F, 4, D(1, 1, 5, 5), SEQ25), T(F, 4, D(1, 1, 3, 3), ONES9)}, 1, {OMIT}, GL_ERR_INPUT},
    {"conv window larger than input", "Conv", 11, {{0}}, 2,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 3), 1, 1, 1)}, 1, {OMIT}, GL_ERR_INPUT},
    {"conv bias length", "Conv", 11, {{0}}, 3,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 1), 1), T(F, 1, D(2), 1, 2)}, 1, {OMIT},
     GL_ERR_INPUT},
    {"conv bad auto_pad", "Conv", 11, {AS("auto_pad", "SAME")}, 2,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 1), 1)}, 1, {OMIT}, GL_ERR_INPUT},
    {"conv absurd pads", "Conv", 11, {AINTS("pads", 2, (int64_t)1 << 40, 0)}, 2,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 1), 1)}, 1, {OMIT}, GL_ERR_INPUT},
    {"conv integer input", "Conv", 11, {{0}}, 2,
     {T(I64, 3, D(1, 1, 2), 1, 2), T(I64, 3, D(1, 1, 1), 1)}, 1, {OMIT}, GL_ERR_INPUT},
};

/* The ONNX ConvTranspose example: 3x3 ramp, all-ones 3x3 kernels, two outputs. */
#define CT_FULL 0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15, 9, 20, 33, 24, 13, 6, 13, \
                21, 15, 8

static const tu_kcase convtranspose_cases[] = {
    {"convtranspose 2d", "ConvTranspose", 11, {{0}}, 2,
     {T(F, 4, D(1, 1, 3, 3), 0, 1, 2, 3, 4, 5, 6, 7, 8), T(F, 4, D(1, 2, 3, 3), ONES9, ONES9)}, 1,
     {T(F, 4, D(1, 2, 5, 5), CT_FULL, CT_FULL)}},
    {"convtranspose 1d", "ConvTranspose", 11, {{0}}, 2,
     {T(F, 3, D(1, 1, 3), 0, 1, 2), T(F, 3, D(1, 2, 3), 1, 1, 1, 1, 1, 1)}, 1,
     {T(F, 3, D(1, 2, 5), 0, 1, 3, 3, 2, 0, 1, 3, 3, 2)}},
    {"convtranspose stride 2", "ConvTranspose", 11, {AINTS("strides", 1, 2)}, 2,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 3), 1, 1, 1)}, 1,
     {T(F, 3, D(1, 1, 5), 1, 1, 3, 2, 2)}},
    {"convtranspose pads", "ConvTranspose", 11, {AINTS("strides", 1, 2), AINTS("pads", 2, 1, 1)}, 2,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 3), 1, 1, 1)}, 1, {T(F, 3, D(1, 1, 3), 1, 3, 2)}},
    {"convtranspose output_padding", "ConvTranspose", 11,
     {AINTS("strides", 1, 2), AINTS("output_padding", 1, 1)}, 2,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 3), 1, 1, 1)}, 1,
     {T(F, 3, D(1, 1, 6), 1, 1, 3, 2, 2, 0)}},
    {"convtranspose output_shape", "ConvTranspose", 11,
     {AINTS("strides", 1, 2), AINTS("output_shape", 1, 6)}, 2,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 3), 1, 1, 1)}, 1,
     {T(F, 3, D(1, 1, 6), 1, 1, 3, 2, 2, 0)}},
    {"convtranspose SAME_UPPER", "ConvTranspose", 11,
     {AINTS("strides", 1, 2), AS("auto_pad", "SAME_UPPER")}, 2,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 3), 1, 1, 1)}, 1,
     {T(F, 3, D(1, 1, 4), 1, 1, 3, 2)}},
    {"convtranspose SAME_LOWER", "ConvTranspose", 11,
     {AINTS("strides", 1, 2), AS("auto_pad", "SAME_LOWER")}, 2,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 3), 1, 1, 1)}, 1,
     {T(F, 3, D(1, 1, 4), 1, 3, 2, 2)}},
    {"convtranspose dilation 2", "ConvTranspose", 11, {AINTS("dilations", 1, 2)}, 2,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 3, D(1, 1, 2), 1, 1)}, 1, {T(F, 3, D(1, 1, 4), 1, 2, 1, 2)}},
    {"convtranspose group and bias", "ConvTranspose", 11, {AI("group", 2)}, 3,
     {T(F, 3, D(1, 2, 2), 1, 2, 3, 4), T(F, 3, D(2, 1, 1), 2, 3), T(F, 1, D(2), 1, 1)}, 1,
     {T(F, 3, D(1, 2, 2), 3, 5, 10, 13)}},
    {"convtranspose channels mismatch", "ConvTranspose", 11, {{0}}, 2,
     {T(F, 3, D(1, 2, 1), 1, 2), T(F, 3, D(1, 1, 1), 1)}, 1, {OMIT}, GL_ERR_INPUT},
};

Test(conv, kernels) { tu_run_kernel_cases_within(conv_cases, GL_ARRAY_LEN(conv_cases), &nn_tol); }
Test(convtranspose, kernels)
{
    tu_run_kernel_cases_within(convtranspose_cases, GL_ARRAY_LEN(convtranspose_cases), &nn_tol);
}

/* Large convolutions checked against the definition summed in double: they cross every
 * GEMM block edge (K > 256 rows, > 2048 columns not a multiple of 8, output channels
 * not a multiple of 4) and the chunking of the im2col buffer (4M floats). */
typedef struct big_conv {
    bool transpose;
    int c, m, h, w, k, pad, stride;
} big_conv;

static float lcg_value(unsigned *seed, float scale)
{
    *seed = *seed * 1103515245u + 12345u;
    return (float)(*seed >> 16 & 0xff) / 256.0f * scale - scale / 2;
}

/* y[m, oh, ow] of the definition: Conv reads x at oh * s + ki - pad; ConvTranspose
 * writes x[i, j] to i * s + ki - pad. */
static double conv_definition(const big_conv *b, const float *x, const float *w, int mo,
                              int oh, int ow)
{
    double acc = mo;
    for (int c = 0; c < b->c; c++)
        for (int ki = 0; ki < b->k; ki++)
            for (int kj = 0; kj < b->k; kj++) {
                int r, q;
                double wv;
                if (!b->transpose) {
                    r = oh * b->stride + ki - b->pad;
                    q = ow * b->stride + kj - b->pad;
                    wv = w[((mo * b->c + c) * b->k + ki) * b->k + kj];
                } else {
                    int tr = oh + b->pad - ki, tq = ow + b->pad - kj;
                    if (tr % b->stride || tq % b->stride)
                        continue;
                    r = tr / b->stride;
                    q = tq / b->stride;
                    wv = w[((c * b->m + mo) * b->k + ki) * b->k + kj];
                }
                if (r >= 0 && r < b->h && q >= 0 && q < b->w)
                    acc += wv * x[(c * b->h + r) * b->w + q];
            }
    return acc;
}

static void check_big_conv(const big_conv *b)
{
    int64_t xd[4] = {1, b->c, b->h, b->w}, bd[1] = {b->m};
    int64_t wd[4] = {b->transpose ? b->c : b->m, b->transpose ? b->m : b->c, b->k, b->k};
    size_t nx = (size_t)b->c * b->h * b->w, nw = (size_t)b->m * b->c * b->k * b->k;
    float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw);
    float *bias = malloc(sizeof(float) * b->m);
    unsigned seed = 12345;
    for (size_t i = 0; i < nx; i++)
        x[i] = lcg_value(&seed, 2.0f);
    for (size_t i = 0; i < nw; i++)
        w[i] = lcg_value(&seed, 1.0f);
    for (int i = 0; i < b->m; i++)
        bias[i] = (float)i;
    gl_model *m = tu_model(13);
    gl_value *vx = tu_input(m->graph, "x", GL_DT_FLOAT, 4, xd);
    gl_value *vw = tu_input(m->graph, "w", GL_DT_FLOAT, 4, wd);
    gl_value *vb = tu_input(m->graph, "b", GL_DT_FLOAT, 1, bd);
    gl_node *n = tu_node(m->graph, b->transpose ? "ConvTranspose" : "Conv", "big", 3, vx, vw, vb);
    int64_t p = b->pad, st = b->stride;
    gl_node_set_attr_ints(n, "pads", (const int64_t[]){p, p, p, p}, 4);
    gl_node_set_attr_ints(n, "strides", (const int64_t[]){st, st}, 2);
    const gl_tensor *in[3] = {tu_tensor_f32(4, xd, x), tu_tensor_f32(4, wd, w),
                              tu_tensor_f32(1, bd, bias)};
    gl_tensor *out[1] = {NULL};
    cr_assert_eq(tu_run_kernel(m, n, in, out), GL_OK, "%s", gl_error_message());
    int oh = b->transpose ? (b->h - 1) * b->stride + b->k - 2 * b->pad
                          : (b->h + 2 * b->pad - b->k) / b->stride + 1;
    int ow = b->transpose ? (b->w - 1) * b->stride + b->k - 2 * b->pad
                          : (b->w + 2 * b->pad - b->k) / b->stride + 1;
    cr_assert_eq(out[0]->dims[2], oh);
    cr_assert_eq(out[0]->dims[3], ow);
    const float *y = gl_tensor_data(out[0]);
    int bad = 0;
    for (int mo = 0; mo < b->m; mo++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                double want = conv_definition(b, x, w, mo, i, j);
                double got = y[((size_t)mo * oh + i) * ow + j];
                if (fabs(got - want) > 1e-3 + 1e-4 * fabs(want) && bad++ < 5)
                    cr_expect_fail("%s C%d M%d: y[%d,%d,%d] = %g, expected %g",
                                   b->transpose ? "ConvTranspose" : "Conv", b->c, b->m, mo, i,
                                   j, got, want);
            }
    cr_expect_eq(bad, 0, "%d elements differ", bad);
    for (int i = 0; i < 3; i++)
        gl_tensor_free((gl_tensor *)in[i]);
    gl_tensor_free(out[0]);
    gl_model_free(m);
    free(x);
    free(w);
    free(bias);
}

Test(conv, large_cases_match_definition)
{
    static const big_conv cases[] = {
        {false, 40, 9, 51, 49, 3, 1, 1},   /* GEMM block edges */
        {false, 7, 5, 20, 23, 5, 2, 3},    /* strided im2col */
        {false, 512, 3, 2, 1000, 3, 1, 1}, /* im2col in chunks of one row */
        {true, 2, 512, 2, 1000, 3, 1, 1},  /* ConvTranspose in chunks */
        {true, 3, 4, 9, 11, 4, 1, 2},      /* strided col2im */
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        check_big_conv(&cases[i]);
}

/* ---- pooling ---------------------------------------------------------------------------- */

static const tu_kcase pool_cases[] = {
    {"avgpool strides", "AveragePool", 11,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)},
     1, {T(F, 4, D(1, 1, 5, 5), ONE25)}, 1, {T(F, 4, D(1, 1, 2, 2), 4, 6, 14, 16)}},
    {"avgpool pads exclude", "AveragePool", 11,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1)}, 1,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4)}, 1,
     {T(F, 4, D(1, 1, 3, 3), 1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4)}},
    {"avgpool pads include", "AveragePool", 11,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1), AI("count_include_pad", 1)}, 1,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4)}, 1,
     {T(F, 4, D(1, 1, 3, 3), 0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1)}},
    {"avgpool ceil", "AveragePool", 11,
     {AINTS("kernel_shape", 2, 3, 3), AINTS("strides", 2, 2, 2), AI("ceil_mode", 1)}, 1,
     {T(F, 4, D(1, 1, 4, 4), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)}, 1,
     {T(F, 4, D(1, 1, 2, 2), 6, 7.5, 12, 13.5)}},
    {"avgpool 1d SAME_LOWER", "AveragePool", 11,
     {AINTS("kernel_shape", 1, 2), AS("auto_pad", "SAME_LOWER")}, 1, {T(F, 3, D(1, 1, 3), 1, 2, 3)},
     1, {T(F, 3, D(1, 1, 3), 1, 1.5, 2.5)}},
    {"avgpool 1d SAME_UPPER", "AveragePool", 11,
     {AINTS("kernel_shape", 1, 2), AS("auto_pad", "SAME_UPPER")}, 1, {T(F, 3, D(1, 1, 3), 1, 2, 3)},
     1, {T(F, 3, D(1, 1, 3), 1.5, 2.5, 3)}},
    {"avgpool without kernel_shape", "AveragePool", 11, {{0}}, 1, {T(F, 3, D(1, 1, 3), 1, 2, 3)},
     1, {OMIT}, GL_ERR_INPUT},
    {"avgpool rank 2", "AveragePool", 11, {AINTS("kernel_shape", 1, 1)}, 1,
     {T(F, 2, D(1, 3), 1, 2, 3)}, 1, {OMIT}, GL_ERR_INPUT},
    {"maxpool pads with indices", "MaxPool", 12,
     {AINTS("kernel_shape", 2, 5, 5), AINTS("pads", 4, 2, 2, 2, 2)}, 1,
     {T(F, 4, D(1, 1, 5, 5), ONE25)}, 2,
     {T(F, 4, D(1, 1, 5, 5), 13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25, 23, 24,
        25, 25, 25, 23, 24, 25, 25, 25),
      T(I64, 4, D(1, 1, 5, 5), 12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24, 24, 24, 22,
          23, 24, 24, 24, 22, 23, 24, 24, 24)}},
    {"maxpool storage_order 1", "MaxPool", 12,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2), AI("storage_order", 1)}, 1,
     {T(F, 4, D(1, 1, 5, 5), ONE25)}, 2,
     {T(F, 4, D(1, 1, 2, 2), 7, 9, 17, 19), T(I64, 4, D(1, 1, 2, 2), 6, 16, 8, 18)}},
    {"maxpool indices count planes", "MaxPool", 12, {AINTS("kernel_shape", 2, 1, 2)}, 1,
     {T(F, 4, D(2, 1, 1, 2), 1, 3, 5, 2)}, 2,
     {T(F, 4, D(2, 1, 1, 1), 3, 5), T(I64, 4, D(2, 1, 1, 1), 1, 2)}},
    {"maxpool dilations", "MaxPool", 12,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("dilations", 2, 2, 2)},
     1, {T(F, 4, D(1, 1, 4, 4), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)}, 1,
     {T(F, 4, D(1, 1, 2, 2), 11, 12, 15, 16)}},
    {"maxpool uint8", "MaxPool", 12, {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)}, 1,
     {T(GL_DT_UINT8, 4, D(1, 1, 5, 5), ONE25)}, 1,
     {T(GL_DT_UINT8, 4, D(1, 1, 2, 2), 7, 9, 17, 19)}},
    {"maxpool negative values in padding", "MaxPool", 12,
     {AINTS("kernel_shape", 1, 2), AINTS("pads", 2, 1, 1)}, 1, {T(F, 3, D(1, 1, 2), -5, -3)}, 1,
     {T(F, 3, D(1, 1, 3), -5, -3, -3)}},
    {"maxpool 1d ceil", "MaxPool", 12,
     {AINTS("kernel_shape", 1, 2), AINTS("strides", 1, 2), AI("ceil_mode", 1)}, 1,
     {T(F, 3, D(1, 1, 5), 1, 2, 3, 4, 5)}, 1, {T(F, 3, D(1, 1, 3), 2, 4, 5)}},
    {"maxpool ceil drops a window in the padding", "MaxPool", 12,
     {AINTS("kernel_shape", 1, 1), AINTS("strides", 1, 2), AINTS("pads", 2, 0, 1),
     AI("ceil_mode", 1)},
     1, {T(F, 3, D(1, 1, 2), 1, 2)}, 1, {T(F, 3, D(1, 1, 1), 1)}},
    {"maxpool 3d", "MaxPool", 12, {AINTS("kernel_shape", 3, 2, 2, 2)}, 1,
     {T(F, 5, D(1, 1, 2, 2, 2), 1, 8, 3, 4, 5, 6, 7, 2)}, 2,
     {T(F, 5, D(1, 1, 1, 1, 1), 8), T(I64, 5, D(1, 1, 1, 1, 1), 1)}},
    /* a window with a NaN is NaN, wherever the NaN sits in it (issue 26) */
    {"maxpool NaN in any tap (float 2-D path)", "MaxPool", 12,
     {AINTS("kernel_shape", 2, 1, 2), AINTS("strides", 2, 1, 2)}, 1,
     {T(F, 4, D(1, 1, 1, 6), 1, NAN, NAN, 2, -INFINITY, -INFINITY)}, 1,
     {T(F, 4, D(1, 1, 1, 3), NAN, NAN, -INFINITY)}},
    {"maxpool NaN with indices: the NaN's", "MaxPool", 12,
     {AINTS("kernel_shape", 1, 2), AINTS("strides", 1, 2)}, 1,
     {T(F, 3, D(1, 1, 4), 3, NAN, NAN, 4)}, 2,
     {T(F, 3, D(1, 1, 2), NAN, NAN), T(I64, 3, D(1, 1, 2), 1, 2)}},
    {"globalmaxpool NaN anywhere, -Inf", "GlobalMaxPool", 1, {{0}}, 1,
     {T(F, 4, D(1, 3, 1, 2), 1, NAN, NAN, 1, -INFINITY, -INFINITY)}, 1,
     {T(F, 4, D(1, 3, 1, 1), NAN, NAN, -INFINITY)}},
    {"globalmaxpool double NaN", "GlobalMaxPool", 1, {{0}}, 1,
     {T(GL_DT_DOUBLE, 3, D(1, 1, 2), 2, NAN)}, 1, {T(GL_DT_DOUBLE, 3, D(1, 1, 1), NAN)}},
    {"lppool p2", "LpPool", 11, {AINTS("kernel_shape", 1, 2)}, 1, {T(F, 3, D(1, 1, 2), 3, 4)}, 1,
     {T(F, 3, D(1, 1, 1), 5)}},
    {"lppool p1", "LpPool", 11, {AINTS("kernel_shape", 1, 2), AI("p", 1)}, 1,
     {T(F, 3, D(1, 1, 3), 3, -4, 1)}, 1, {T(F, 3, D(1, 1, 2), 7, 5)}},
    {"globalaveragepool", "GlobalAveragePool", 1, {{0}}, 1,
     {T(F, 4, D(1, 2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8)}, 1, {T(F, 4, D(1, 2, 1, 1), 2.5, 6.5)}},
    {"globalmaxpool", "GlobalMaxPool", 1, {{0}}, 1,
     {T(F, 4, D(1, 2, 2, 2), 1, 2, 3, 4, 5, 9, 7, 8)}, 1, {T(F, 4, D(1, 2, 1, 1), 4, 9)}},
    {"globallppool", "GlobalLpPool", 2, {{0}}, 1, {T(F, 3, D(1, 1, 2), 3, 4)}, 1,
     {T(F, 3, D(1, 1, 1), 5)}},
    {"globalaveragepool double 3d", "GlobalAveragePool", 1, {{0}}, 1,
     {T(GL_DT_DOUBLE, 5, D(1, 1, 1, 1, 2), 1, 2)}, 1, {T(GL_DT_DOUBLE, 5, D(1, 1, 1, 1, 1), 1.5)}},
    {"maxunpool", "MaxUnpool", 11, {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)}, 2,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4), T(I64, 4, D(1, 1, 2, 2), 5, 7, 13, 15)}, 1,
     {T(F, 4, D(1, 1, 4, 4), 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4)}},
    /* onnx's reference keeps the coordinates of the default 4x4 shape (see nn.c). */
    {"maxunpool output_shape", "MaxUnpool", 11,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)}, 3,
     {T(F, 4, D(1, 1, 2, 2), 5, 6, 7, 8), T(I64, 4, D(1, 1, 2, 2), 5, 7, 13, 15),
      T(I64, 1, D(4), 1, 1, 5, 5)}, 1,
     {T(F, 4, D(1, 1, 5, 5), 0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0,
        0, 0)}},
    {"maxunpool index out of range", "MaxUnpool", 11,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)}, 2,
     {T(F, 4, D(1, 1, 1, 1), 1), T(I64, 4, D(1, 1, 1, 1), 4)}, 1, {OMIT}, GL_ERR_INPUT},
    {"maxunpool negative index", "MaxUnpool", 11,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)}, 2,
     {T(F, 4, D(1, 1, 1, 1), 1), T(I64, 4, D(1, 1, 1, 1), -1)}, 1, {OMIT}, GL_ERR_INPUT},
};

Test(pool, kernels) { tu_run_kernel_cases_within(pool_cases, GL_ARRAY_LEN(pool_cases), &nn_tol); }

/* ---- normalization and dropout ------------------------------------------------------------ */

static const tu_kcase norm_cases[] = {
    {"batchnorm inference", "BatchNormalization", 15, {AF("epsilon", 0)}, 5,
     {T(F, 4, D(1, 2, 1, 2), 1, 2, 3, 4), T(F, 1, D(2), 1, 2), T(F, 1, D(2), 0, 1),
     T(F, 1, D(2), 1, 3),
      T(F, 1, D(2), 4, 1)}, 1, {T(F, 4, D(1, 2, 1, 2), 0, 0.5, 1, 3)}},
    {"batchnorm 2d input", "BatchNormalization", 9, {AF("epsilon", 0)}, 5,
     {T(F, 2, D(2, 1), 3, 5), T(F, 1, D(1), 2), T(F, 1, D(1), 1), T(F, 1, D(1), 3),
     T(F, 1, D(1), 4)}, 1,
     {T(F, 2, D(2, 1), 1, 3)}},
    {"batchnorm training", "BatchNormalization", 15,
     {AF("epsilon", 0), AI("training_mode", 1)}, 5,
     {T(F, 4, D(2, 1, 1, 1), 1, 3), T(F, 1, D(1), 1), T(F, 1, D(1), 0), T(F, 1, D(1), 0),
     T(F, 1, D(1), 1)},
     3, {T(F, 4, D(2, 1, 1, 1), -1, 1), T(F, 1, D(1), 0.2), T(F, 1, D(1), 1.0)}},
    {"batchnorm spatial 0", "BatchNormalization", 7, {AF("epsilon", 0), AI("spatial", 0)}, 5,
     {T(F, 3, D(1, 1, 2), 1, 2), T(F, 1, D(2), 1, 1), T(F, 1, D(2), 0, 10), T(F, 1, D(2), 1, 2),
      T(F, 1, D(2), 1, 1)}, 1, {T(F, 3, D(1, 1, 2), 0, 10)}},
    {"batchnorm wrong parameter length", "BatchNormalization", 15, {{0}}, 5,
     {T(F, 4, D(1, 2, 1, 1), 1, 2), T(F, 1, D(1), 1), T(F, 1, D(2), 0, 1), T(F, 1, D(2), 1, 3),
      T(F, 1, D(2), 4, 1)}, 1, {OMIT}, GL_ERR_INPUT},
    {"batchnorm training before 14", "BatchNormalization", 9, {{0}}, 5,
     {T(F, 2, D(1, 1), 1), T(F, 1, D(1), 1), T(F, 1, D(1), 0), T(F, 1, D(1), 0), T(F, 1, D(1), 1)},
     3,
     {OMIT}, GL_ERR_UNSUPPORTED},
    {"instancenorm", "InstanceNormalization", 6, {AF("epsilon", 0)}, 3,
     {T(F, 4, D(1, 2, 1, 3), -1, 0, 1, 2, 3, 4), T(F, 1, D(2), 1, 1.5), T(F, 1, D(2), 0, 1)}, 1,
     {T(F, 4, D(1, 2, 1, 3), -1.2247449, 0, 1.2247449, -0.8371173, 1, 2.8371173)}},
    {"layernorm last axis", "LayerNormalization", 17, {AF("epsilon", 0)}, 3,
     {T(F, 2, D(2, 2), 1, 3, 0, 4), T(F, 1, D(2), 1, 2), T(F, 1, D(2), 0, 1)}, 3,
     {T(F, 2, D(2, 2), -1, 3, -1, 3), T(F, 2, D(2, 1), 2, 2), T(F, 2, D(2, 1), 1, 0.5)}},
    {"layernorm axis 0 no bias", "LayerNormalization", 17, {AF("epsilon", 0), AI("axis", 0)}, 2,
     {T(F, 2, D(2, 2), 1, 3, 0, 4), T(F, 2, D(2, 2), 1, 1, 1, 1)}, 3,
     {T(F, 2, D(2, 2), -0.63245553, 0.63245553, -1.26491106, 1.26491106), T(F, 2, D(1, 1), 2),
      T(F, 2, D(1, 1), 0.63245553)}},
    {"layernorm scale broadcasts", "LayerNormalization", 17, {AF("epsilon", 0), AI("axis", -2)},
     2, {T(F, 3, D(1, 2, 2), 1, 3, 0, 4), T(F, 1, D(2), 1, 10)}, 1,
     {T(F, 3, D(1, 2, 2), -0.63245553, 6.3245553, -1.26491106, 12.6491106)}},
    {"layernorm scale does not broadcast", "LayerNormalization", 17, {{0}}, 2,
     {T(F, 2, D(2, 2), 1, 3, 0, 4), T(F, 1, D(3), 1, 1, 1)}, 1, {OMIT}, GL_ERR_INPUT},
    {"layernorm axis out of range", "LayerNormalization", 17, {AI("axis", 2)}, 2,
     {T(F, 2, D(2, 2), 1, 3, 0, 4), T(F, 1, D(2), 1, 1)}, 1, {OMIT}, GL_ERR_INPUT},
    {"lrn size 3", "LRN", 13, {AI("size", 3), AF("alpha", 3), AF("beta", 1), AF("bias", 1)}, 1,
     {T(F, 4, D(1, 3, 1, 1), 1, 2, 3)}, 1, {T(F, 4, D(1, 3, 1, 1), 1.0 / 6, 2.0 / 15, 3.0 / 14)}},
    {"lrn size 2 looks ahead", "LRN", 13,
     {AI("size", 2), AF("alpha", 2), AF("beta", 1), AF("bias", 1)}, 1,
     {T(F, 4, D(1, 3, 1, 1), 1, 2, 3)}, 1, {T(F, 4, D(1, 3, 1, 1), 1.0 / 6, 2.0 / 14, 3.0 / 10)}},
    {"lrn without size", "LRN", 13, {{0}}, 1, {T(F, 4, D(1, 3, 1, 1), 1, 2, 3)}, 1, {OMIT},
     GL_ERR_INPUT},
    {"mvn default axes", "MeanVarianceNormalization", 13, {{0}}, 1,
     {T(F, 4, D(1, 2, 1, 2), 1, 3, 2, 2)}, 1, {T(F, 4, D(1, 2, 1, 2), -1, 1, 0, 0)}},
    {"mvn last axis", "MeanVarianceNormalization", 13, {AINTS("axes", 1, -1)}, 1,
     {T(F, 2, D(2, 2), 1, 3, 0, 4)}, 1, {T(F, 2, D(2, 2), -1, 1, -1, 1)}},
    {"dropout inference with mask", "Dropout", 13, {{0}}, 2,
     {T(F, 2, D(1, 3), 1, -2, 3), T(GL_DT_FLOAT, 0, D(0), 0.5)}, 2,
     {T(F, 2, D(1, 3), 1, -2, 3), T(GL_DT_BOOL, 2, D(1, 3), 1, 1, 1)}},
    {"dropout opset 7 mask of T", "Dropout", 7, {AF("ratio", 0.3)}, 1, {T(F, 1, D(2), 4, 5)}, 2,
     {T(F, 1, D(2), 4, 5), T(F, 1, D(2), 1, 1)}},
    {"dropout training ratio 0", "Dropout", 13, {{0}}, 3,
     {T(F, 1, D(2), 4, 5), T(F, 0, D(0), 0), T(GL_DT_BOOL, 0, D(0), 1)}, 2,
     {T(F, 1, D(2), 4, 5), T(GL_DT_BOOL, 1, D(2), 1, 1)}},
    {"dropout training is random", "Dropout", 13, {{0}}, 3,
     {T(F, 1, D(2), 4, 5), T(F, 0, D(0), 0.5), T(GL_DT_BOOL, 0, D(0), 1)}, 1, {OMIT},
     GL_ERR_UNSUPPORTED},
    {"dropout training bad ratio", "Dropout", 13, {{0}}, 3,
     {T(F, 1, D(2), 4, 5), T(F, 0, D(0), 1.5), T(GL_DT_BOOL, 0, D(0), 1)}, 1, {OMIT}, GL_ERR_INPUT},
};

Test(norm, kernels) { tu_run_kernel_cases_within(norm_cases, GL_ARRAY_LEN(norm_cases), &nn_tol); }

/* ---- resizing ---------------------------------------------------------------------------- */

#define CUBIC_X2 1, 1.40625, 2, 2.5, 3, 3.59375, 4, 4.09375

static const tu_kcase resize_cases[] = {
    {"resize nearest up", "Resize", 13, {AS("mode", "nearest")}, 3,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4), OMIT, T(F, 1, D(4), 1, 1, 2, 3)}, 1,
     {T(F, 4, D(1, 1, 4, 6), 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4,
        4)}},
    {"resize linear half_pixel", "Resize", 13, {AS("mode", "linear")}, 3,
     {T(F, 1, D(2), 1, 2), OMIT, T(F, 1, D(1), 2)}, 1, {T(F, 1, D(4), 1, 1.25, 1.75, 2)}},
    {"resize linear align_corners sizes", "Resize", 13,
     {AS("mode", "linear"), AS("coordinate_transformation_mode", "align_corners")}, 4,
     {T(F, 1, D(2), 1, 2), OMIT, OMIT, T(I64, 1, D(1), 4)}, 1,
     {T(F, 1, D(4), 1, 4.0 / 3, 5.0 / 3, 2)}},
    /* The reference's quirk: the align_corners length is scale * 4 = 2.4, not 2. */
    {"resize linear align_corners down", "Resize", 13,
     {AS("mode", "linear"), AS("coordinate_transformation_mode", "align_corners")}, 3,
     {T(F, 4, D(1, 1, 2, 4), 1, 2, 3, 4, 5, 6, 7, 8), OMIT, T(F, 1, D(4), 1, 1, 0.6, 0.6)}, 1,
     {T(F, 4, D(1, 1, 1, 2), 1, 3.142857)}},
    {"resize cubic asymmetric", "Resize", 13,
     {AS("mode", "cubic"), AS("coordinate_transformation_mode", "asymmetric")}, 3,
     {T(F, 1, D(4), 1, 2, 3, 4), OMIT, T(F, 1, D(1), 2)}, 1, {T(F, 1, D(8), CUBIC_X2)}},
    {"resize cubic exclude_outside", "Resize", 13,
     {AS("mode", "cubic"), AS("coordinate_transformation_mode", "asymmetric"),
      AI("exclude_outside", 1)}, 3,
     {T(F, 1, D(4), 1, 2, 3, 4), OMIT, T(F, 1, D(1), 2)}, 1,
     {T(F, 1, D(8), 1, 1.5 / 1.09375, 2, 2.5, 3, (-0.09375 * 2 + 0.59375 * 3 + 0.59375 * 4) /
        1.09375, 4, (-0.09375 * 3 + 0.59375 * 4) / 0.5)}},
    {"resize tf_crop_and_resize", "Resize", 13,
     {AS("mode", "linear"), AS("coordinate_transformation_mode", "tf_crop_and_resize"),
      AF("extrapolation_value", 10)}, 4,
     {T(F, 1, D(5), 1, 2, 3, 4, 5), T(F, 1, D(2), 0.5, 1.5), OMIT, T(I64, 1, D(1), 3)}, 1,
     {T(F, 1, D(3), 3, 5, 10)}},
    {"resize nearest round_prefer_ceil", "Resize", 13,
     {AS("coordinate_transformation_mode", "asymmetric"), AS("nearest_mode", "round_prefer_ceil")},
     4, {T(F, 1, D(3), 1, 2, 3), OMIT, OMIT, T(I64, 1, D(1), 6)}, 1,
     {T(F, 1, D(6), 1, 2, 2, 3, 3, 3)}},
    {"resize nearest round_prefer_floor", "Resize", 13,
     {AS("coordinate_transformation_mode", "asymmetric")}, 4,
     {T(F, 1, D(3), 1, 2, 3), OMIT, OMIT, T(I64, 1, D(1), 6)}, 1,
     {T(F, 1, D(6), 1, 1, 2, 2, 3, 3)}},
    {"resize nearest floor", "Resize", 13,
     {AS("coordinate_transformation_mode", "asymmetric"), AS("nearest_mode", "floor")}, 4,
     {T(F, 1, D(3), 1, 2, 3), OMIT, OMIT, T(I64, 1, D(1), 6)}, 1,
     {T(F, 1, D(6), 1, 1, 2, 2, 3, 3)}},
    {"resize nearest ceil", "Resize", 13,
     {AS("coordinate_transformation_mode", "asymmetric"), AS("nearest_mode", "ceil")}, 4,
     {T(F, 1, D(3), 1, 2, 3), OMIT, OMIT, T(I64, 1, D(1), 6)}, 1,
     {T(F, 1, D(6), 1, 2, 2, 3, 3, 3)}},
    {"resize uint8 rounds", "Resize", 13, {AS("mode", "linear")}, 3,
     {T(GL_DT_UINT8, 1, D(2), 0, 3), OMIT, T(F, 1, D(1), 2)}, 1,
     {T(GL_DT_UINT8, 1, D(4), 0, 1, 2, 3)}},
    {"resize 10 nearest down rounds up", "Resize", 10, {{0}}, 2,
     {T(F, 1, D(4), 1, 2, 3, 4), T(F, 1, D(1), 0.5)}, 1, {T(F, 1, D(2), 1, 3)}},
    {"resize 18 axes", "Resize", 18, {AINTS("axes", 1, 1)}, 3,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), OMIT, T(F, 1, D(1), 2)}, 1,
     {T(F, 2, D(2, 4), 1, 1, 2, 2, 3, 3, 4, 4)}},
    {"resize 18 not_larger", "Resize", 18,
     {AS("keep_aspect_ratio_policy", "not_larger"), AS("mode", "linear")}, 4,
     {T(F, 2, D(1, 2), 1, 2), OMIT, OMIT, T(I64, 1, D(2), 2, 8)}, 1,
     {T(F, 2, D(2, 4), 1, 1.25, 1.75, 2,
                                                                    1, 1.25, 1.75, 2)}},
    {"resize scales and sizes", "Resize", 13, {{0}}, 4,
     {T(F, 1, D(2), 1, 2), OMIT, T(F, 1, D(1), 2), T(I64, 1, D(1), 4)}, 1, {OMIT}, GL_ERR_INPUT},
    {"resize scales count", "Resize", 13, {{0}}, 3,
     {T(F, 1, D(2), 1, 2), OMIT, T(F, 1, D(2), 2, 2)},
     1, {OMIT}, GL_ERR_INPUT},
    {"resize no scales nor sizes", "Resize", 13, {{0}}, 1, {T(F, 1, D(2), 1, 2)}, 1, {OMIT},
     GL_ERR_INPUT},
    {"resize absurd scale", "Resize", 13, {{0}}, 3,
     {T(F, 1, D(2), 1, 2), OMIT, T(F, 1, D(1), 1e30)},
     1, {OMIT}, GL_ERR_INPUT},
    {"resize bad mode", "Resize", 13, {AS("mode", "area")}, 3,
     {T(F, 1, D(2), 1, 2), OMIT, T(F, 1, D(1), 2)}, 1, {OMIT}, GL_ERR_INPUT},
    {"upsample 9 nearest", "Upsample", 9, {{0}}, 2, {T(F, 1, D(2), 1, 2), T(F, 1, D(1), 3)}, 1,
     {T(F, 1, D(6), 1, 1, 1, 2, 2, 2)}},
    {"upsample 7 attribute scales", "Upsample", 7, {AFLOATS("scales", 2, 1, 2)}, 1,
     {T(F, 2, D(1, 2), 1, 2)}, 1, {T(F, 2, D(1, 4), 1, 1, 2, 2)}},
    {"upsample linear", "Upsample", 9, {AS("mode", "linear")}, 2,
     {T(F, 1, D(2), 1, 3), T(F, 1, D(1), 2)}, 1, {T(F, 1, D(4), 1, 2, 3, 3)}},
    {"upsample scale below 1", "Upsample", 9, {{0}}, 2, {T(F, 1, D(2), 1, 3), T(F, 1, D(1), 0.5)},
     1,
     {OMIT}, GL_ERR_INPUT},
};

Test(resize,
kernels) { tu_run_kernel_cases_within(resize_cases, GL_ARRAY_LEN(resize_cases), &nn_tol); }

/* ---- sampling and detection -------------------------------------------------------------- */

#define RAMP16 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15

static const tu_kcase sample_cases[] = {
    {"gridsample align corners", "GridSample", 16, {AI("align_corners", 1)}, 2,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4), T(F, 4, D(1, 1, 5, 2), -1, -1, 1, -1, -1, 1, 1, 1, 0, 0)},
     1, {T(F, 4, D(1, 1, 1, 5), 1, 2, 3, 4, 2.5)}},
    {"gridsample zeros", "GridSample", 16, {{0}}, 2,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4), T(F, 4, D(1, 1, 1, 2), -1, -1)}, 1,
     {T(F, 4, D(1, 1, 1, 1), 0.25)}},
    {"gridsample border", "GridSample", 16, {AS("padding_mode", "border")}, 2,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4), T(F, 4, D(1, 1, 1, 2), -1, -1)}, 1,
     {T(F, 4, D(1, 1, 1, 1), 1)}},
    {"gridsample reflection", "GridSample", 16, {AS("padding_mode", "reflection")}, 2,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4), T(F, 4, D(1, 1, 2, 2), -1, -1, 1.5, -1)}, 1,
     {T(F, 4, D(1, 1, 1, 2), 1, 2)}},
    {"gridsample nearest", "GridSample", 16, {AS("mode", "nearest"), AI("align_corners", 1)}, 2,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4), T(F, 4, D(1, 1, 2, 2), 0.1, -1, 0, -1)}, 1,
     {T(F, 4, D(1, 1, 1, 2), 2, 1)}},
    {"gridsample bicubic", "GridSample", 16, {AS("mode", "bicubic"), AI("align_corners", 1)}, 2,
     {T(F, 4, D(1, 1, 1, 4), 1, 2, 3, 4), T(F, 4, D(1, 1, 2, 2), 0, -1, -1, -1)}, 1,
     {T(F, 4, D(1, 1, 1, 2), 2.5, 1)}},
    {"gridsample bicubic zeros vs border", "GridSample", 16,
     {AS("mode", "bicubic"), AI("align_corners", 1), AS("padding_mode", "border")}, 2,
     {T(F, 4, D(1, 1, 1, 4), 1, 2, 3, 4), T(F, 4, D(1, 1, 1, 2), -2.0 / 3, -1)}, 1,
     {T(F, 4, D(1, 1, 1, 1), 1.40625)}},
    {"gridsample bicubic zeros", "GridSample", 16, {AS("mode", "bicubic"), AI("align_corners", 1)},
     2, {T(F, 4, D(1, 1, 1, 4), 1, 2, 3, 4), T(F, 4, D(1, 1, 1, 2), -2.0 / 3, -1)}, 1,
     {T(F, 4, D(1, 1, 1, 1), 1.5)}},
    {"gridsample NaN and huge grid values", "GridSample", 16, {{0}}, 2,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4), T(F, 4, D(1, 1, 2, 2), NAN, 0, 1e30, -1e30)}, 1,
     {T(F, 4, D(1, 1, 1, 2), 0, 0)}},
    {"gridsample wrong grid", "GridSample", 16, {{0}}, 2,
     {T(F, 4, D(1, 1, 2, 2), 1, 2, 3, 4), T(F, 4, D(1, 1, 1, 3), 0, 0, 0)}, 1, {OMIT},
     GL_ERR_INPUT},
    {"roialign half_pixel", "RoiAlign", 16, {AI("sampling_ratio", 1)}, 3,
     {T(F, 4, D(1, 1, 4, 4), RAMP16), T(F, 2, D(1, 4), 0, 0, 3, 3), T(I64, 1, D(1), 0)}, 1,
     {T(F, 4, D(1, 1, 1, 1), 5)}},
    {"roialign output_half_pixel", "RoiAlign", 16,
     {AI("sampling_ratio", 1), AS("coordinate_transformation_mode", "output_half_pixel")}, 3,
     {T(F, 4, D(1, 1, 4, 4), RAMP16), T(F, 2, D(1, 4), 0, 0, 3, 3), T(I64, 1, D(1), 0)}, 1,
     {T(F, 4, D(1, 1, 1, 1), 7.5)}},
    {"roialign opset 10 default", "RoiAlign", 10, {AI("sampling_ratio", 1)}, 3,
     {T(F, 4, D(1, 1, 4, 4), RAMP16), T(F, 2, D(1, 4), 0, 0, 3, 3), T(I64, 1, D(1), 0)}, 1,
     {T(F, 4, D(1, 1, 1, 1), 7.5)}},
    {"roialign avg 2x2 samples", "RoiAlign", 10, {AI("sampling_ratio", 2)}, 3,
     {T(F, 4, D(1, 1, 4, 4), RAMP16), T(F, 2, D(1, 4), 0, 0, 2, 2), T(I64, 1, D(1), 0)}, 1,
     {T(F, 4, D(1, 1, 1, 1), 5)}},
    {"roialign max", "RoiAlign", 10, {AI("sampling_ratio", 2), AS("mode", "max")}, 3,
     {T(F, 4, D(1, 1, 4, 4), RAMP16), T(F, 2, D(1, 4), 0, 0, 2, 2), T(I64, 1, D(1), 0)}, 1,
     {T(F, 4, D(1, 1, 1, 1), 2.5)}},
    {"roialign spatial_scale", "RoiAlign", 16,
     {AI("sampling_ratio", 1), AF("spatial_scale", 0.5)}, 3,
     {T(F, 4, D(1, 1, 4, 4), RAMP16), T(F, 2, D(1, 4), 0, 0, 6, 6), T(I64, 1, D(1), 0)}, 1,
     {T(F, 4, D(1, 1, 1, 1), 5)}},
    {"roialign NaN roi", "RoiAlign", 16, {AI("sampling_ratio", 1)}, 3,
     {T(F, 4, D(1, 1, 4, 4), RAMP16), T(F, 2, D(1, 4), 0, 0, NAN, 3), T(I64, 1, D(1), 0)}, 1,
     {OMIT},
     GL_ERR_INPUT},
    {"roialign bad batch index", "RoiAlign", 16, {{0}}, 3,
     {T(F, 4, D(1, 1, 4, 4), RAMP16), T(F, 2, D(1, 4), 0, 0, 3, 3), T(I64, 1, D(1), 1)}, 1, {OMIT},
     GL_ERR_INPUT},
};

Test(sample,
kernels) { tu_run_kernel_cases_within(sample_cases, GL_ARRAY_LEN(sample_cases), &nn_tol); }

/* The boxes of the ONNX NonMaxSuppression examples: a cluster of three at the origin,
 * two around x = 10, one far away. */
#define NMS_BOXES                                                                          \
    T(F, 3, D(1, 6, 4), 0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1,  \
      11.1, 0, 100, 1, 101)
#define NMS_SCORES T(F, 3, D(1, 1, 6), 0.9, 0.75, 0.6, 0.95, 0.5, 0.3)

static const tu_kcase nms_cases[] = {
    {"nms suppress by iou", "NonMaxSuppression", 11, {{0}}, 5,
     {NMS_BOXES, NMS_SCORES, T(I64, 1, D(1), 3), T(F, 1, D(1), 0.5), T(F, 1, D(1), 0)}, 1,
     {T(I64, 2, D(3, 3), 0, 0, 3, 0, 0, 0, 0, 0, 5)}},
    {"nms score threshold", "NonMaxSuppression", 11, {{0}}, 5,
     {NMS_BOXES, NMS_SCORES, T(I64, 1, D(1), 3), T(F, 1, D(1), 0.5), T(F, 1, D(1), 0.4)}, 1,
     {T(I64, 2, D(2, 3), 0, 0, 3, 0, 0, 0)}},
    {"nms center boxes", "NonMaxSuppression", 11, {AI("center_point_box", 1)}, 5,
     {T(F, 3, D(1, 6, 4), 0.5, 0.5, 1, 1, 0.5, 0.6, 1, 1, 0.5, 0.4, 1, 1, 0.5, 10.5, 1, 1, 0.5,
        10.6, 1, 1, 0.5, 100.5, 1, 1),
      NMS_SCORES, T(I64, 1, D(1), 3), T(F, 1, D(1), 0.5), T(F, 1, D(1), 0)}, 1,
     {T(I64, 2, D(3, 3), 0, 0, 3, 0, 0, 0, 0, 0, 5)}},
    {"nms flipped corners", "NonMaxSuppression", 11, {{0}}, 5,
     {T(F, 3, D(1, 6, 4), 1, 1, 0, 0, 0, 0.1, 1, 1.1, 0, 0.9, 1, -0.1, 0, 10, 1, 11, 1, 10.1, 0,
        11.1, 1, 101, 0, 100),
      NMS_SCORES, T(I64, 1, D(1), 3), T(F, 1, D(1), 0.5), T(F, 1, D(1), 0)}, 1,
     {T(I64, 2, D(3, 3), 0, 0, 3, 0, 0, 0, 0, 0, 5)}},
    {"nms two classes limit 2", "NonMaxSuppression", 11, {{0}}, 5,
     {NMS_BOXES,
     T(F, 3, D(1, 2, 6), 0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.9, 0.75, 0.6, 0.95, 0.5, 0.3),
      T(I64, 1, D(1), 2), T(F, 1, D(1), 0.5), T(F, 1, D(1), 0)}, 1,
     {T(I64, 2, D(4, 3), 0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0)}},
    {"nms identical boxes and scores", "NonMaxSuppression", 11, {{0}}, 4,
     {T(F, 3, D(1, 3, 4), 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1), T(F, 3, D(1, 1, 3), 0.9, 0.9, 0.9),
      T(I64, 1, D(1), 3), T(F, 1, D(1), 0.5)}, 1, {T(I64, 2, D(1, 3), 0, 0, 0)}},
    {"nms no limit selects nothing", "NonMaxSuppression", 11, {{0}}, 2,
     {NMS_BOXES, NMS_SCORES}, 1, {EMPTY(GL_DT_INT64, 2, D(0, 3))}},
    {"nms NaN score sorts last", "NonMaxSuppression", 11, {{0}}, 3,
     {T(F, 3, D(1, 2, 4), 0, 0, 1, 1, 5, 5, 6, 6), T(F, 3, D(1, 1, 2), NAN, 0.5),
     T(I64, 1, D(1), 2)}, 1,
     {T(I64, 2, D(2, 3), 0, 0, 1, 0, 0, 0)}},
    {"nms shapes disagree", "NonMaxSuppression", 11, {{0}}, 2,
     {NMS_BOXES, T(F, 3, D(1, 1, 2), 0.5, 0.5)}, 1, {OMIT}, GL_ERR_INPUT},
};

Test(nms, kernels) { tu_run_kernel_cases_within(nms_cases, GL_ARRAY_LEN(nms_cases), &nn_tol); }

/* ---- shape functions -------------------------------------------------------------------- */

typedef struct ispec {
    const char *type;   /* "float[N,3,?,224]", "float[?]" (rank unknown), "?" (no type),
                           NULL (omitted) */
    const double *cval; /* a constant input with these values (type fully known) */
} ispec;

typedef struct icase {
    const char *name, *op;
    int opset;
    tu_attr attrs[6];
    int n_in;
    ispec in[5];
    int n_out;
    const char *out[3]; /* expected gl_type_format of each output */
    gl_status status;
} icase;

#define CV(...) (const double[]){__VA_ARGS__}

static gl_value *make_const(gl_graph *g, const char *name, const char *text, const double *v)
{
    gl_value tmp = {0};
    tu_parse_type(text, &tmp.type);
    int64_t dims[8];
    for (int d = 0; d < tmp.type.shape.rank; d++)
        dims[d] = tmp.type.shape.dims[d].value;
    gl_tensor *t = gl_tensor_new(tmp.type.dtype, tmp.type.shape.rank, dims);
    if (t->count)
        gl_tensor_make_writable(t);
    for (int64_t i = 0; i < t->count; i++)
        gl_elem_set_f64(t, i, v[i]);
    gl_value *c = gl_add_initializer(g, name, t);
    gl_type_free(&c->type);
    gl_type_copy(&c->type, &tmp.type);
    gl_type_free(&tmp.type);
    return c;
}

static void run_icase(const icase *c)
{
    gl_model *m = tu_model(c->opset);
    gl_value *ins[5] = {0};
    for (int i = 0; i < c->n_in; i++) {
        if (!c->in[i].type)
            continue;
        char nm[16];
        snprintf(nm, sizeof(nm), "in%d", i);
        if (c->in[i].cval) {
            ins[i] = make_const(m->graph, nm, c->in[i].type, c->in[i].cval);
        } else {
            ins[i] = gl_add_value(m->graph, nm);
            gl_graph_add_input(m->graph, ins[i]);
            gl_type_free(&ins[i]->type);
            tu_parse_type(c->in[i].type, &ins[i]->type);
        }
    }
    gl_node *n = gl_add_node(m->graph, c->op, "", c->name, ins, (size_t)c->n_in,
                             (size_t)c->n_out);
    cr_assert_not_null(n);
    tu_apply_attrs(n, c->attrs);
    gl_type out[3];
    gl_error_clear();
    gl_status st = tu_infer(m, n, out);
    cr_expect_eq(st, c->status, "%s: status %s, expected %s (%s)", c->name,
                 gl_status_name(st), gl_status_name(c->status), gl_error_message());
    if (st != GL_OK && c->status != GL_OK)
        cr_expect(strstr(gl_error_message(), c->name) != NULL,
                  "%s: the message does not name the node: %s", c->name, gl_error_message());
    for (int k = 0; k < c->n_out; k++) {
        char buf[256];
        gl_type_format(&out[k], buf, sizeof(buf));
        if (st == GL_OK && c->status == GL_OK)
            cr_expect_str_eq(buf, c->out[k], "%s: output %d is %s, expected %s", c->name, k,
                             buf, c->out[k]);
        gl_type_free(&out[k]);
    }
    gl_model_free(m);
}

static const icase infer_cases[] = {
    {"conv stride 2", "Conv", 13, {AINTS("strides", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1)}, 2,
     {{"float[N,3,224,224]"}, {"float[16,3,3,3]"}}, 1, {"float[N,16,112,112]"}},
    {"conv keeps symbolic spatial dims", "Conv", 13, {AINTS("pads", 4, 1, 1, 1, 1)}, 2,
     {{"float[N,3,H,W]"}, {"float[16,3,3,3]"}}, 1, {"float[N,16,H,W]"}},
    {"conv SAME keeps symbols", "Conv", 13, {AS("auto_pad", "SAME_UPPER")}, 2,
     {{"float[N,3,H,W]"}, {"float[16,3,5,5]"}}, 1, {"float[N,16,H,W]"}},
    {"conv stride 2 on a symbol", "Conv", 13, {AINTS("strides", 2, 2, 2)}, 2,
     {{"float[N,3,H,W]"}, {"float[16,3,1,1]"}}, 1, {"float[N,16,?,?]"}},
    {"conv unknown weight shape", "Conv", 13, {{0}}, 2, {{"float[1,3,8,8]"}, {"float[?]"}}, 1,
     {"float[1,?,?,?]"}},
    {"conv kernel_shape with unknown weight", "Conv", 13, {AINTS("kernel_shape", 2, 3, 3)}, 2,
     {{"float[1,3,8,8]"}, {"float[?]"}}, 1, {"float[1,?,6,6]"}},
    {"conv 1d dilation", "Conv", 13, {AINTS("dilations", 1, 2)}, 2,
     {{"double[2,1,10]"}, {"double[4,1,3]"}}, 1, {"double[2,4,6]"}},
    {"conv unknown input type", "Conv", 13, {{0}}, 2, {{"?"}, {"float[16,3,3,3]"}}, 1, {"?"}},
    {"conv unknown rank", "Conv", 13, {{0}}, 2, {{"float[?]"}, {"float[?]"}}, 1, {"float[?]"}},
    {"conv rank 2", "Conv", 13, {{0}}, 2, {{"float[1,3]"}, {"float[1,3]"}}, 1, {"?"},
     GL_ERR_INPUT},
    {"conv channel mismatch", "Conv", 13, {AI("group", 2)}, 2,
     {{"float[1,4,8,8]"}, {"float[8,4,3,3]"}}, 1, {"?"}, GL_ERR_INPUT},
    {"conv too few strides", "Conv", 13, {AINTS("strides", 1, 2)}, 2,
     {{"float[1,3,8,8]"}, {"float[8,3,3,3]"}}, 1, {"?"}, GL_ERR_INPUT},
    {"convtranspose", "ConvTranspose", 13, {{0}}, 2,
     {{"float[N,1,3,3]"}, {"float[1,2,3,3]"}}, 1, {"float[N,2,5,5]"}},
    {"convtranspose group", "ConvTranspose", 13, {AI("group", 3), AINTS("strides", 2, 2, 2)}, 2,
     {{"float[1,6,3,3]"}, {"float[6,2,3,3]"}}, 1, {"float[1,6,7,7]"}},
    {"convtranspose output_shape", "ConvTranspose", 13,
     {AINTS("strides", 2, 3, 2), AINTS("output_shape", 2, 10, 8)}, 2,
     {{"float[1,1,H,W]"}, {"float[1,2,3,3]"}}, 1, {"float[1,2,10,8]"}},
    {"maxpool with indices", "MaxPool", 12,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)},
     1, {{"float[N,3,32,32]"}}, 2, {"float[N,3,16,16]", "int64[N,3,16,16]"}},
    {"maxpool ceil", "MaxPool", 12,
     {AINTS("kernel_shape", 2, 3, 3), AINTS("strides", 2, 2, 2), AI("ceil_mode", 1)}, 1,
     {{"uint8[1,1,4,4]"}}, 1, {"uint8[1,1,2,2]"}},
    {"averagepool needs kernel_shape", "AveragePool", 11, {{0}}, 1, {{"float[1,3,4,4]"}}, 1,
     {"?"}, GL_ERR_INPUT},
    {"averagepool negative pads", "AveragePool", 11,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("pads", 4, -1, 0, 0, 0)}, 1, {{"float[1,3,4,4]"}}, 1,
     {"?"}, GL_ERR_INPUT},
    {"globalaveragepool", "GlobalAveragePool", 1, {{0}}, 1, {{"float[N,C,H,W]"}}, 1,
     {"float[N,C,1,1]"}},
    {"globalmaxpool rank unknown", "GlobalMaxPool", 1, {{0}}, 1, {{"float[?]"}}, 1, {"float[?]"}},
    {"maxunpool", "MaxUnpool", 11, {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)}, 2,
     {{"float[1,1,2,2]"}, {"int64[1,1,2,2]"}}, 1, {"float[1,1,4,4]"}},
    {"maxunpool constant output_shape", "MaxUnpool", 11,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)}, 3,
     {{"float[1,1,2,2]"}, {"int64[1,1,2,2]"}, {"int64[4]", CV(1, 1, 5, 5)}}, 1,
     {"float[1,1,5,5]"}},
    {"maxunpool run-time output_shape", "MaxUnpool", 11,
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)}, 3,
     {{"float[1,1,2,2]"}, {"int64[1,1,2,2]"}, {"int64[4]"}}, 1, {"float[1,1,?,?]"}},
    {"batchnorm", "BatchNormalization", 15, {{0}}, 5,
     {{"float[N,3,H,W]"}, {"float[3]"}, {"float[3]"}, {"float[3]"}, {"float[3]"}}, 1,
     {"float[N,3,H,W]"}},
    {"batchnorm training outputs", "BatchNormalization", 15, {AI("training_mode", 1)}, 5,
     {{"float[N,3,H,W]"}, {"float[3]"}, {"float[3]"}, {"double[3]"}, {"double[3]"}}, 3,
     {"float[N,3,H,W]", "double[3]", "double[3]"}},
    {"instancenorm", "InstanceNormalization", 6, {{0}}, 3,
     {{"float16[N,3,H,W]"}, {"float16[3]"}, {"float16[3]"}}, 1, {"float16[N,3,H,W]"}},
    {"layernorm", "LayerNormalization", 17, {{0}}, 3,
     {{"float[N,16,128]"}, {"float[128]"}, {"float[128]"}}, 3,
     {"float[N,16,128]", "float[N,16,1]", "float[N,16,1]"}},
    {"layernorm axis 1 stash double", "LayerNormalization", 17,
     {AI("axis", 1), AI("stash_type", 11)}, 2, {{"float[N,16,128]"}, {"float[16,128]"}}, 3,
     {"float[N,16,128]", "double[N,1,1]", "double[N,1,1]"}},
    {"layernorm bad axis", "LayerNormalization", 17, {AI("axis", 3)}, 2,
     {{"float[N,16,128]"}, {"float[128]"}}, 1, {"?"}, GL_ERR_INPUT},
    {"lrn", "LRN", 13, {AI("size", 3)}, 1, {{"float[N,3,H,W]"}}, 1, {"float[N,3,H,W]"}},
    {"mvn", "MeanVarianceNormalization", 13, {{0}}, 1, {{"float[N,3,H,W]"}}, 1,
     {"float[N,3,H,W]"}},
    {"dropout 13", "Dropout", 13, {{0}}, 1, {{"float[N,5]"}}, 2, {"float[N,5]", "bool[N,5]"}},
    {"dropout 7", "Dropout", 7, {{0}}, 1, {{"double[N,5]"}}, 2, {"double[N,5]", "double[N,5]"}},
    {"resize constant scales", "Resize", 13, {{0}}, 3,
     {{"float[1,3,4,4]"}, {NULL}, {"float[4]", CV(1, 1, 2, 1.5)}}, 1, {"float[1,3,8,6]"}},
    {"resize constant scales symbolic", "Resize", 13, {{0}}, 3,
     {{"float[N,3,H,W]"}, {NULL}, {"float[4]", CV(1, 1, 2, 2)}}, 1, {"float[N,3,?,?]"}},
    {"resize constant sizes", "Resize", 13, {{0}}, 4,
     {{"float[N,3,H,W]"}, {NULL}, {NULL}, {"int64[4]", CV(1, 3, 5, 7)}}, 1,
     {"float[1,3,5,7]"}},
    {"resize run-time sizes", "Resize", 13, {{0}}, 4,
     {{"float[N,3,H,W]"}, {NULL}, {NULL}, {"int64[4]"}}, 1, {"float[?,?,?,?]"}},
    {"resize 18 axes sizes", "Resize", 18, {AINTS("axes", 2, 2, 3)}, 4,
     {{"float[N,3,H,W]"}, {NULL}, {NULL}, {"int64[2]", CV(5, 7)}}, 1, {"float[N,3,5,7]"}},
    {"resize 18 not_larger", "Resize", 18, {AS("keep_aspect_ratio_policy", "not_larger")}, 4,
     {{"float[1,3,4,8]"}, {NULL}, {NULL}, {"int64[4]", CV(1, 3, 8, 8)}}, 1,
     {"float[1,3,4,8]"}},
    {"resize 10 scales", "Resize", 10, {{0}}, 2,
     {{"float[1,3,4,4]"}, {"float[4]", CV(1, 1, 0.5, 0.5)}}, 1, {"float[1,3,2,2]"}},
    {"resize both given", "Resize", 13, {{0}}, 4,
     {{"float[1,3,4,4]"}, {NULL}, {"float[4]", CV(1, 1, 2, 2)}, {"int64[4]", CV(1, 3, 8, 8)}},
     1, {"?"}, GL_ERR_INPUT},
    {"upsample 7 attribute", "Upsample", 7, {AFLOATS("scales", 4, 1, 1, 2, 2)}, 1,
     {{"float[N,3,4,4]"}}, 1, {"float[N,3,8,8]"}},
    {"gridsample", "GridSample", 16, {{0}}, 2, {{"float[N,C,H,W]"}, {"float[N,5,6,2]"}}, 1,
     {"float[N,C,5,6]"}},
    {"roialign", "RoiAlign", 16, {AI("output_height", 7), AI("output_width", 5)}, 3,
     {{"float[1,256,H,W]"}, {"float[R,4]"}, {"int64[R]"}}, 1, {"float[R,256,7,5]"}},
    {"nms", "NonMaxSuppression", 11, {{0}}, 2, {{"float[1,6,4]"}, {"float[1,1,6]"}}, 1,
     {"int64[?,3]"}},
};

Test(infer, shapes)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(infer_cases); i++)
        run_icase(&infer_cases[i]);
}

/* ---- registry entries ----------------------------------------------------------------------- */

Test(registry, versions_and_flags)
{
    static const struct {
        const char *op;
        int opset, since;
        unsigned flags;
    } rows[] = {
        {"Conv", 13, 1, GL_OP_LAYOUT_SENSITIVE},
        {"ConvTranspose", 17, 1, GL_OP_LAYOUT_SENSITIVE},
        {"MaxPool", 12, 1, GL_OP_LAYOUT_SENSITIVE},
        {"GlobalAveragePool", 13, 1, GL_OP_LAYOUT_SENSITIVE},
        {"MaxUnpool", 11, 9, GL_OP_LAYOUT_SENSITIVE},
        {"BatchNormalization", 15, 14, GL_OP_LAYOUT_SENSITIVE},
        {"BatchNormalization", 13, 9, GL_OP_LAYOUT_SENSITIVE},
        {"BatchNormalization", 7, 1, GL_OP_LAYOUT_SENSITIVE},
        {"InstanceNormalization", 6, 1, GL_OP_LAYOUT_SENSITIVE},
        {"LRN", 13, 1, GL_OP_LAYOUT_SENSITIVE},
        {"GridSample", 16, 16, GL_OP_LAYOUT_SENSITIVE},
        {"LayerNormalization", 17, 17, 0},
        {"Dropout", 13, 12, 0},
        {"Dropout", 11, 10, 0},
        {"Resize", 13, 11, 0},
        {"Resize", 10, 10, 0},
        {"Upsample", 9, 9, 0},
        {"NonMaxSuppression", 11, 10, 0},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        const gl_op_def *d = gl_op_lookup("", rows[i].op, rows[i].opset);
        cr_assert_not_null(d, "%s-%d not registered", rows[i].op, rows[i].opset);
        cr_expect_eq(d->since, rows[i].since, "%s-%d: entry since %d, expected %d", rows[i].op,
                     rows[i].opset, d->since, rows[i].since);
        cr_expect_eq(d->flags, rows[i].flags, "%s: flags %#x, expected %#x", rows[i].op,
                     d->flags, rows[i].flags);
        cr_expect(d->infer && d->kernel, "%s: missing shape function or kernel", rows[i].op);
    }
    cr_expect_null(gl_op_lookup("", "LayerNormalization", 16), "LayerNormalization before 17");
    cr_expect_null(gl_op_lookup("", "GridSample", 15), "GridSample before 16");
}

/* The registry row in effect, found the slow way: every row of that domain and op, the
 * largest since at or below the opset. */
static const gl_op_def *lookup_by_scan(const char *domain, const char *op, int opset)
{
    const gl_op_def *best = NULL;
    for (size_t i = 0; i < gl_op_count(); i++) {
        const gl_op_def *d = gl_op_at(i);
        if (strcmp(d->op, op) == 0 &&
            strcmp(gl_domain_canonical(d->domain), gl_domain_canonical(domain)) == 0 &&
            d->since <= opset && (!best || d->since >= best->since))
            best = d;
    }
    return best;
}

/* gl_op_lookup agrees with the scan for every registered op under each spelling of its
 * domain, at every opset from 0 to past the last, and finds nothing for near misses. */
Test(registry, lookup_agrees_with_a_scan_of_every_row)
{
    for (size_t i = 0; i < gl_op_count(); i++) {
        const gl_op_def *row = gl_op_at(i);
        const char *spellings[] = {row->domain, gl_domain_display(row->domain),
                                   *gl_domain_canonical(row->domain) ? row->domain : NULL};
        for (size_t s = 0; s < GL_ARRAY_LEN(spellings); s++)
            for (int opset = 0; opset <= 30; opset++)
                cr_assert_eq(gl_op_lookup(spellings[s], row->op, opset),
                             lookup_by_scan(spellings[s], row->op, opset),
                             "%s '%s' at opset %d", gl_domain_display(row->domain), row->op,
                             opset);
    }
    static const struct {
        const char *domain, *op;
    } misses[] = {
        {"", "Con"},            /* a prefix of an op */
        {"", "Convv"},          /* an op and more */
        {"", "conv"},           /* case counts */
        {"com.example", "Conv"}, /* a default-domain op in another domain */
        {"", ""},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(misses); i++)
        cr_expect_null(gl_op_lookup(misses[i].domain, misses[i].op, 17), "'%s' '%s'",
                       misses[i].domain, misses[i].op);
    cr_expect_null(gl_op_lookup("", NULL, 17));
}

/* test_ops_elementwise.c — kernels and shape functions of src/ops/elementwise.c.
 *
 * Expected values are worked out by hand from the ONNX operator definitions (and, for
 * the text forms of Cast, from what numpy's str() prints, which the ONNX suite uses),
 * never taken from the code under test. Each table row names its case in messages.
 */
#include "ops/opkit.h"
#define TU_CASE_SHORTHANDS /* T(), D(), AI(), F, ...: see testutil.h */
#include "testutil.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EM1 (-0.6321205588285577)     /* e^-1 - 1 */
#define SIGMOID2 0.8807970779778823 /* 1 / (1 + e^-2) */
#define NAN_ NAN
#define INF_ INFINITY

/* Hand-computed values: float32 within 2e-6 relative, float16 and bfloat16 within 2e-3,
 * double within 1e-12 (each + 1e-7); integers, bools and refusals exactly. */
static const tu_tol ew_tol = {.abs = 1e-7, .rel = 2e-6, .rel_half = 2e-3, .rel_double = 1e-12};

/* ---- unary math and activations on float32 ---- */

static const tu_kcase unary_float32_cases[] = {
    {"Abs", "Abs", 13, {{0}}, 1, {T(F, 1, D(3), -1.5, 0, 2.25)}, 1, {T(F, 1, D(3), 1.5, 0, 2.25)}},
    {"Acos", "Acos", 7, {{0}}, 1, {T(F, 1, D(3), 1, 0, -1)}, 1, {T(F, 1, D(3), 0, M_PI / 2, M_PI)}},
    {"Acosh", "Acosh", 9, {{0}}, 1, {T(F, 1, D(2), 1, 2)}, 1, {T(F, 1, D(2), 0, 1.3169578969)}},
    {"Asin", "Asin", 7, {{0}}, 1, {T(F, 1, D(3), 0, 1, -0.5)}, 1,
     {T(F, 1, D(3), 0, M_PI / 2, -M_PI / 6)}},
    {"Asinh", "Asinh", 9, {{0}}, 1, {T(F, 1, D(2), 0, 1)}, 1, {T(F, 1, D(2), 0, 0.8813735870)}},
    {"Atan", "Atan", 7, {{0}}, 1, {T(F, 1, D(2), 1, -1)}, 1, {T(F, 1, D(2), M_PI / 4, -M_PI / 4)}},
    {"Atanh", "Atanh", 9, {{0}}, 1, {T(F, 1, D(2), 0, 0.5)}, 1, {T(F, 1, D(2), 0, 0.5493061443)}},
    {"Ceil", "Ceil", 13, {{0}}, 1, {T(F, 1, D(3), -1.5, 1.2, 2)}, 1, {T(F, 1, D(3), -1, 2, 2)}},
    {"Celu alpha 2", "Celu", 12, {AF("alpha", 2)}, 1, {T(F, 1, D(2), 1, -2)}, 1,
     {T(F, 1, D(2), 1, 2 * (EM1))}},
    {"Cos", "Cos", 7, {{0}}, 1, {T(F, 1, D(2), 0, M_PI)}, 1, {T(F, 1, D(2), 1, -1)}},
    {"Cosh", "Cosh", 9, {{0}}, 1, {T(F, 1, D(2), 0, 1)}, 1, {T(F, 1, D(2), 1, 1.5430806348)}},
    {"Elu default", "Elu", 6, {{0}}, 1, {T(F, 1, D(2), 2, -1)}, 1, {T(F, 1, D(2), 2, EM1)}},
    {"Elu alpha 2", "Elu", 6, {AF("alpha", 2)}, 1, {T(F, 1, D(2), 2, -1)}, 1,
     {T(F, 1, D(2), 2, 2 * (EM1))}},
    {"Erf", "Erf", 13, {{0}}, 1, {T(F, 1, D(3), 0, 1, -0.5)}, 1,
     {T(F, 1, D(3), 0, 0.8427007929, -0.5204998778)}},
    {"Exp", "Exp", 13, {{0}}, 1, {T(F, 1, D(3), 0, 1, -1)}, 1, {T(F, 1, D(3), 1, M_E, 1 / M_E)}},
    {"Floor", "Floor", 13, {{0}}, 1, {T(F, 1, D(3), -1.5, 1.7, 2)}, 1, {T(F, 1, D(3), -2, 1, 2)}},
    {"HardSigmoid default", "HardSigmoid", 6, {{0}}, 1, {T(F, 1, D(4), 0, 3, -3, 1)}, 1,
     {T(F, 1, D(4), 0.5, 1, 0, 0.7)}},
    {"HardSigmoid alpha beta", "HardSigmoid", 6, {AF("alpha", 0.5), AF("beta", 0.25)}, 1,
     {T(F, 1, D(2), 1, -0.25)}, 1, {T(F, 1, D(2), 0.75, 0.125)}},
    /* max(0, min(1, NaN)) is NaN with ONNX's Max and Min (issue 26: it was 1) */
    {"HardSigmoid keeps NaN, clamps infinities", "HardSigmoid", 6, {{0}}, 1,
     {T(F, 1, D(3), NAN_, INF_, -INF_)}, 1, {T(F, 1, D(3), NAN_, 1, 0)}},
    {"HardSwish", "HardSwish", 14, {{0}}, 1, {T(F, 1, D(4), 3, -3, 1, 0)}, 1,
     {T(F, 1, D(4), 3, 0, 2.0 / 3, 0)}},
    {"LeakyRelu default", "LeakyRelu", 16, {{0}}, 1, {T(F, 1, D(2), -2, 3)}, 1,
     {T(F, 1, D(2), -0.02, 3)}},
    {"LeakyRelu alpha", "LeakyRelu", 16, {AF("alpha", 0.1)}, 1, {T(F, 1, D(2), -2, 3)}, 1,
     {T(F, 1, D(2), -0.2, 3)}},
    {"Log", "Log", 13, {{0}}, 1, {T(F, 1, D(3), 1, M_E, 0)}, 1, {T(F, 1, D(3), 0, 1, -INF_)}},
    {"Neg", "Neg", 13, {{0}}, 1, {T(F, 1, D(3), 1, -2, 0)}, 1, {T(F, 1, D(3), -1, 2, 0)}},
    {"Reciprocal", "Reciprocal", 13, {{0}}, 1, {T(F, 1, D(3), 2, -4, 0.5)}, 1,
     {T(F, 1, D(3), 0.5, -0.25, 2)}},
    {"Relu", "Relu", 14, {{0}}, 1, {T(F, 1, D(3), -1, 0, 2.5)}, 1, {T(F, 1, D(3), 0, 0, 2.5)}},
    {"Round half to even", "Round", 11, {{0}}, 1,
     {T(F, 1, D(7), 0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6)}, 1,
     {T(F, 1, D(7), 0, 2, 2, 0, -2, 2, -3)}},
    {"Selu default", "Selu", 6, {{0}}, 1, {T(F, 1, D(3), 1, -1, 0)}, 1,
     {T(F, 1, D(3), 1.0507009873554805, 1.0507009873554805 * 1.6732632423543772 * (EM1), 0)}},
    {"Shrink hard", "Shrink", 9, {AF("lambd", 1.5)}, 1, {T(F, 1, D(5), -2, -1, 0, 1, 2)}, 1,
     {T(F, 1, D(5), -2, 0, 0, 0, 2)}},
    {"Shrink soft", "Shrink", 9, {AF("lambd", 1.5), AF("bias", 1.5)}, 1,
     {T(F, 1, D(5), -2, -1, 0, 1, 2)}, 1, {T(F, 1, D(5), -0.5, 0, 0, 0, 0.5)}},
    {"Sigmoid", "Sigmoid", 13, {{0}}, 1, {T(F, 1, D(3), 0, 2, -100)}, 1,
     {T(F, 1, D(3), 0.5, SIGMOID2, 0)}},
    {"Sign", "Sign", 13, {{0}}, 1, {T(F, 1, D(3), -3, 0, 2.5)}, 1, {T(F, 1, D(3), -1, 0, 1)}},
    {"Sin", "Sin", 7, {{0}}, 1, {T(F, 1, D(2), 0, M_PI / 2)}, 1, {T(F, 1, D(2), 0, 1)}},
    {"Sinh", "Sinh", 9, {{0}}, 1, {T(F, 1, D(2), 0, 1)}, 1, {T(F, 1, D(2), 0, 1.1752011936)}},
    {"Softplus", "Softplus", 1, {{0}}, 1, {T(F, 1, D(4), 0, 1, -100, 100)}, 1,
     {T(F, 1, D(4), M_LN2, 1.3132616875, 0, 100)}},
    {"Softsign", "Softsign", 1, {{0}}, 1, {T(F, 1, D(2), 1, -3)}, 1, {T(F, 1, D(2), 0.5, -0.75)}},
    {"Sqrt", "Sqrt", 13, {{0}}, 1, {T(F, 1, D(3), 4, 2, -1)}, 1, {T(F, 1, D(3), 2, M_SQRT2, NAN_)}},
    {"Tan", "Tan", 7, {{0}}, 1, {T(F, 1, D(2), 0, M_PI / 4)}, 1, {T(F, 1, D(2), 0, 1)}},
    {"Tanh", "Tanh", 13, {{0}}, 1, {T(F, 1, D(2), 0, 1)}, 1, {T(F, 1, D(2), 0, 0.7615941560)}},
    {"ThresholdedRelu default", "ThresholdedRelu", 10, {{0}}, 1, {T(F, 1, D(3), 0.5, 1, 2)}, 1,
     {T(F, 1, D(3), 0, 0, 2)}},
    {"ThresholdedRelu alpha", "ThresholdedRelu", 10, {AF("alpha", 0.4)}, 1,
     {T(F, 1, D(3), 0.3, 1, 2)}, 1, {T(F, 1, D(3), 0, 1, 2)}},
    {"Relu on a 2x2", "Relu", 13, {{0}}, 1, {T(F, 2, D(2, 2), -1, 1, -2, 2)}, 1,
     {T(F, 2, D(2, 2), 0, 1, 0, 2)}},
    {"Relu on a scalar", "Relu", 13, {{0}}, 1, {T(F, 0, D(0), -4)}, 1, {T(F, 0, D(0), 0)}},
    {"Exp of an empty tensor", "Exp", 13, {{0}}, 1, {EMPTY(F, 2, D(0, 3))}, 1,
     {EMPTY(F, 2, D(0, 3))}},
};

Test(elementwise, unary_float32)
{
    tu_run_kernel_cases_within(unary_float32_cases, GL_ARRAY_LEN(unary_float32_cases), &ew_tol);
}

/* ---- unary ops on the other dtypes, and refusals ---- */

static const tu_kcase unary_other_dtypes_cases[] = {
    {"Abs int32 (INT_MIN wraps)", "Abs", 13, {{0}}, 1, {T(I32, 1, D(3), -3, 4, -2147483648.0)}, 1,
     {T(I32, 1, D(3), 3, 4, -2147483648.0)}},
    {"Abs uint8", "Abs", 13, {{0}}, 1, {T(U8, 1, D(2), 200, 0)}, 1, {T(U8, 1, D(2), 200, 0)}},
    {"Neg int64", "Neg", 13, {{0}}, 1, {T(I64, 1, D(2), 5, -7)}, 1, {T(I64, 1, D(2), -5, 7)}},
    {"Neg int8 -128 wraps", "Neg", 13, {{0}}, 1, {T(I8, 1, D(2), -128, 3)}, 1,
     {T(I8, 1, D(2), -128, -3)}},
    {"Sign int8", "Sign", 13, {{0}}, 1, {T(I8, 1, D(3), -5, 0, 7)}, 1, {T(I8, 1, D(3), -1, 0, 1)}},
    {"Sign uint16", "Sign", 13, {{0}}, 1, {T(U16, 1, D(2), 0, 9)}, 1, {T(U16, 1, D(2), 0, 1)}},
    {"Relu int32", "Relu", 14, {{0}}, 1, {T(I32, 1, D(2), -5, 3)}, 1, {T(I32, 1, D(2), 0, 3)}},
    {"Relu float16", "Relu", 14, {{0}}, 1, {T(F16, 1, D(2), -1, 2)}, 1, {T(F16, 1, D(2), 0, 2)}},
    {"Exp double", "Exp", 13, {{0}}, 1, {T(F64, 1, D(1), 1)}, 1, {T(F64, 1, D(1), M_E)}},
    {"Exp float16 rounds to half", "Exp", 13, {{0}}, 1, {T(F16, 1, D(1), 1)}, 1,
     {T(F16, 1, D(1), 2.71875)}},
    {"Sqrt bfloat16", "Sqrt", 13, {{0}}, 1, {T(BF16, 1, D(2), 4, 16)}, 1, {T(BF16, 1, D(2), 2, 4)}},
    {"Sigmoid double", "Sigmoid", 13, {{0}}, 1, {T(F64, 1, D(1), 0)}, 1, {T(F64, 1, D(1), 0.5)}},
    {"LeakyRelu double keeps alpha", "LeakyRelu", 16, {AF("alpha", 0.5)}, 1,
     {T(F64, 1, D(2), -4, 4)}, 1, {T(F64, 1, D(2), -2, 4)}},
    {"IsNaN", "IsNaN", 13, {{0}}, 1, {T(F, 1, D(3), NAN_, 1, INF_)}, 1,
     {T(BOOL, 1, D(3), 1, 0, 0)}},
    {"IsNaN float16", "IsNaN", 13, {{0}}, 1, {T(F16, 1, D(2), NAN_, 1)}, 1,
     {T(BOOL, 1, D(2), 1, 0)}},
    {"IsInf", "IsInf", 10, {{0}}, 1, {T(F, 1, D(4), -INF_, NAN_, INF_, 2)}, 1,
     {T(BOOL, 1, D(4), 1, 0, 1, 0)}},
    {"IsInf positive only", "IsInf", 10, {AI("detect_negative", 0)}, 1,
     {T(F, 1, D(4), -INF_, NAN_, INF_, 2)}, 1, {T(BOOL, 1, D(4), 0, 0, 1, 0)}},
    {"IsInf negative only", "IsInf", 10, {AI("detect_positive", 0)}, 1,
     {T(F64, 1, D(4), -INF_, NAN_, INF_, 2)}, 1, {T(BOOL, 1, D(4), 1, 0, 0, 0)}},
    {"Not", "Not", 1, {{0}}, 1, {T(BOOL, 2, D(2, 2), 1, 0, 0, 1)}, 1,
     {T(BOOL, 2, D(2, 2), 0, 1, 1, 0)}},
    {"Cos refuses int32", "Cos", 7, {{0}}, 1, {T(I32, 1, D(1), 0)}, 1, {{0}}, GL_ERR_INPUT},
    {"Abs refuses bool", "Abs", 13, {{0}}, 1, {T(BOOL, 1, D(1), 0)}, 1, {{0}}, GL_ERR_INPUT},
    {"Neg refuses uint8", "Neg", 13, {{0}}, 1, {T(U8, 1, D(1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"Not refuses float", "Not", 1, {{0}}, 1, {T(F, 1, D(1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"IsNaN refuses int64", "IsNaN", 13, {{0}}, 1, {T(I64, 1, D(1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"Relu without its input", "Relu", 13, {{0}}, 1, {OMIT}, 1, {{0}}, GL_ERR_INPUT},
};

Test(elementwise, unary_other_dtypes)
{
    tu_run_kernel_cases_within(unary_other_dtypes_cases, GL_ARRAY_LEN(unary_other_dtypes_cases),
    &ew_tol);
}

/* ---- binary arithmetic ---- */

static const tu_kcase binary_arithmetic_cases[] = {
    {"Add same shape", "Add", 14, {{0}}, 2, {T(F, 1, D(3), 1, 2, 3), T(F, 1, D(3), 10, 20, 30)}, 1,
     {T(F, 1, D(3), 11, 22, 33)}},
    {"Add rows + vector", "Add", 14, {{0}}, 2,
     {T(F, 2, D(2, 3), 1, 2, 3, 4, 5, 6), T(F, 1, D(3), 10, 20, 30)}, 1,
     {T(F, 2, D(2, 3), 11, 22, 33, 14, 25, 36)}},
    {"Add column + row (outer)", "Add", 14, {{0}}, 2,
     {T(F, 2, D(2, 1), 1, 2), T(F, 2, D(1, 3), 10, 20, 30)}, 1,
     {T(F, 2, D(2, 3), 11, 21, 31, 12, 22, 32)}},
    {"Add scalar + matrix", "Add", 14, {{0}}, 2,
     {T(F, 0, D(0), 0.5), T(F, 2, D(2, 2), 1, 2, 3, 4)}, 1, {T(F, 2, D(2, 2), 1.5, 2.5, 3.5, 4.5)}},
    {"Add empty", "Add", 14, {{0}}, 2, {EMPTY(F, 2, D(0, 3)), T(F, 1, D(3), 1, 2, 3)}, 1,
     {EMPTY(F, 2, D(0, 3))}},
    {"Add empty broadcast against 1", "Add", 14, {{0}}, 2, {EMPTY(F, 1, D(0)), T(F, 1, D(1), 1)},
     1, {EMPTY(F, 1, D(0))}},
    {"Add shapes that do not broadcast", "Add", 14, {{0}}, 2,
     {ZEROS(F, 2, D(2, 3)), ZEROS(F, 1, D(2))}, 1, {{0}}, GL_ERR_INPUT},
    {"Add mixed dtypes", "Add", 14, {{0}}, 2, {T(F, 1, D(1), 1), T(I32, 1, D(1), 1)}, 1, {{0}},
     GL_ERR_INPUT},
    {"Add bool", "Add", 14, {{0}}, 2, {T(BOOL, 1, D(1), 1), T(BOOL, 1, D(1), 1)}, 1, {{0}},
     GL_ERR_INPUT},
    {"Add uint8 wraps", "Add", 14, {{0}}, 2, {T(U8, 1, D(2), 250, 3), T(U8, 1, D(2), 10, 4)}, 1,
     {T(U8, 1, D(2), 4, 7)}},
    {"Add int16 wraps", "Add", 14, {{0}}, 2, {T(I16, 1, D(1), 32767), T(I16, 1, D(1), 1)}, 1,
     {T(I16, 1, D(1), -32768)}},
    {"Add float16", "Add", 14, {{0}}, 2, {T(F16, 1, D(2), 1, 2), T(F16, 1, D(2), 0.5, 0.25)}, 1,
     {T(F16, 1, D(2), 1.5, 2.25)}},
    {"Add double broadcast", "Add", 14, {{0}}, 2,
     {T(F64, 2, D(2, 1), 1, 2), T(F64, 1, D(2), 0.25, 0.5)}, 1,
     {T(F64, 2, D(2, 2), 1.25, 1.5, 2.25, 2.5)}},
    {"Sub column - row", "Sub", 14, {{0}}, 2,
     {T(F, 2, D(3, 1), 1, 2, 3), T(F, 2, D(1, 2), 10, 20)}, 1,
     {T(F, 2, D(3, 2), -9, -19, -8, -18, -7, -17)}},
    {"Sub int64", "Sub", 14, {{0}}, 2, {T(I64, 1, D(2), 5, -5), T(I64, 0, D(0), 7)}, 1,
     {T(I64, 1, D(2), -2, -12)}},
    {"Mul middle-axis broadcast", "Mul", 14, {{0}}, 2,
     {T(F, 3, D(2, 2, 2), 0, 1, 2, 3, 4, 5, 6, 7), T(F, 3, D(2, 1, 2), 1, 10, 100, 1000)}, 1,
     {T(F, 3, D(2, 2, 2), 0, 10, 2, 30, 400, 5000, 600, 7000)}},
    {"Mul int32", "Mul", 14, {{0}}, 2, {T(I32, 1, D(2), -3, 4), T(I32, 1, D(2), 5, 6)}, 1,
     {T(I32, 1, D(2), -15, 24)}},
    {"Div float", "Div", 14, {{0}}, 2, {T(F, 1, D(3), 1, -3, 1), T(F, 1, D(3), 2, 2, 0)}, 1,
     {T(F, 1, D(3), 0.5, -1.5, INF_)}},
    {"Div int32 truncates, x/0 is 0", "Div", 14, {{0}}, 2,
     {T(I32, 1, D(4), 7, -7, 7, -7), T(I32, 1, D(4), 2, 2, -2, 0)}, 1,
     {T(I32, 1, D(4), 3, -3, -3, 0)}},
    {"Div int32 INT_MIN / -1 wraps", "Div", 14, {{0}}, 2,
     {T(I32, 1, D(1), -2147483648.0), T(I32, 1, D(1), -1)}, 1, {T(I32, 1, D(1), -2147483648.0)}},
    {"Div uint8", "Div", 14, {{0}}, 2, {T(U8, 1, D(3), 200, 7, 23), T(U8, 1, D(3), 3, 0, 24)}, 1,
     {T(U8, 1, D(3), 66, 0, 0)}},
    {"Pow float", "Pow", 15, {{0}}, 2, {T(F, 1, D(2), 2, 3), T(F, 1, D(2), 3, 0.5)}, 1,
     {T(F, 1, D(2), 8, 1.7320508076)}},
    {"Pow float ^ scalar", "Pow", 15, {{0}}, 2, {T(F, 1, D(3), 1, 2, 3), T(F, 0, D(0), 2)}, 1,
     {T(F, 1, D(3), 1, 4, 9)}},
    {"Pow float ^ 2: NaN, infinities, -0, overflow", "Pow", 15, {{0}}, 2,
     {T(F, 1, D(6), -3, NAN_, -INF_, -0.0, 1e20, 0.5), T(F, 1, D(1), 2)}, 1,
     {T(F, 1, D(6), 9, NAN_, INF_, 0, INF_, 0.25)}},
    {"Pow float ^ 2 broadcast to the exponent's rank", "Pow", 15, {{0}}, 2,
     {T(F, 1, D(2), -1.5, 4), T(F, 2, D(1, 1), 2)}, 1, {T(F, 2, D(1, 2), 2.25, 16)}},
    {"Pow float ^ 2 from a base of one element", "Pow", 15, {{0}}, 2,
     {T(F, 1, D(1), 3), T(F, 1, D(3), 2, 2, 2)}, 1, {T(F, 1, D(3), 9, 9, 9)}},
    {"Pow float ^ int64", "Pow", 15, {{0}}, 2, {T(F, 1, D(2), 2, 3), T(I64, 1, D(2), 3, -1)}, 1,
     {T(F, 1, D(2), 8, 1.0 / 3)}},
    {"Pow float ^ uint64", "Pow", 15, {{0}}, 2, {T(F, 1, D(2), 2, 3), T(U64, 1, D(2), 4, 0)}, 1,
     {T(F, 1, D(2), 16, 1)}},
    {"Pow int64 ^ float truncates", "Pow", 15, {{0}}, 2,
     {T(I64, 1, D(2), 2, 9), T(F, 1, D(2), 0.5, 0.5)}, 1, {T(I64, 1, D(2), 1, 3)}},
    {"Pow int32 ^ int32", "Pow", 15, {{0}}, 2,
     {T(I32, 1, D(4), 2, -3, 5, -1), T(I32, 1, D(4), 10, 3, -1, -3)}, 1,
     {T(I32, 1, D(4), 1024, -27, 0, -1)}},
    {"Pow double ^ float16", "Pow", 15, {{0}}, 2, {T(F64, 1, D(1), 4), T(F16, 1, D(1), 0.5)}, 1,
     {T(F64, 1, D(1), 2)}},
    {"Pow refuses a bool base", "Pow", 15, {{0}}, 2, {T(BOOL, 1, D(1), 1), T(F, 1, D(1), 1)}, 1,
     {{0}}, GL_ERR_INPUT},
    {"Mod int32 Python sign", "Mod", 13, {{0}}, 2,
     {T(I32, 1, D(6), -4, 7, 5, 4, -7, 8), T(I32, 1, D(6), 2, -3, 8, -2, 3, 5)}, 1,
     {T(I32, 1, D(6), 0, -2, 5, 0, 2, 3)}},
    {"Mod int64 fmod", "Mod", 13, {AI("fmod", 1)}, 2,
     {T(I64, 1, D(6), -4, 7, 5, 4, -7, 8), T(I64, 1, D(6), 2, -3, 8, -2, 3, 5)}, 1,
     {T(I64, 1, D(6), 0, 1, 5, 0, -1, 3)}},
    {"Mod float fmod", "Mod", 13, {AI("fmod", 1)}, 2,
     {T(F, 1, D(2), -4.5, 7.5), T(F, 1, D(2), 2, -2)}, 1, {T(F, 1, D(2), -0.5, 1.5)}},
    {"Mod float16 fmod", "Mod", 13, {AI("fmod", 1)}, 2, {T(F16, 1, D(1), 5.5), T(F16, 1, D(1), 2)},
     1, {T(F16, 1, D(1), 1.5)}},
    {"Mod float without fmod", "Mod", 13, {{0}}, 2, {T(F, 1, D(1), 1), T(F, 1, D(1), 1)}, 1, {{0}},
     GL_ERR_INPUT},
    {"Mod by zero is 0", "Mod", 13, {{0}}, 2, {T(I8, 1, D(2), 5, -128), T(I8, 1, D(2), 0, -1)}, 1,
     {T(I8, 1, D(2), 0, 0)}},
    {"Mod uint8 broadcast", "Mod", 13, {{0}}, 2, {T(U8, 1, D(3), 4, 7, 5), T(U8, 1, D(1), 3)}, 1,
     {T(U8, 1, D(3), 1, 1, 2)}},
    {"BitShift left uint8", "BitShift", 11, {AS("direction", "LEFT")}, 2,
     {T(U8, 1, D(3), 16, 4, 1), T(U8, 1, D(3), 1, 2, 3)}, 1, {T(U8, 1, D(3), 32, 16, 8)}},
    {"BitShift right uint16", "BitShift", 11, {AS("direction", "RIGHT")}, 2,
     {T(U16, 1, D(3), 16, 4, 1), T(U16, 1, D(3), 1, 2, 3)}, 1, {T(U16, 1, D(3), 8, 1, 0)}},
    {"BitShift past the width", "BitShift", 11, {AS("direction", "LEFT")}, 2,
     {T(U32, 1, D(2), 1, 1), T(U32, 1, D(2), 40, 31)}, 1, {T(U32, 1, D(2), 0, 2147483648.0)}},
    {"BitShift by 64 and more", "BitShift", 11, {AS("direction", "RIGHT")}, 2,
     {T(U64, 1, D(2), 8, 8), T(U64, 1, D(2), 64, 1000)}, 1, {T(U64, 1, D(2), 0, 0)}},
    {"BitShift bad direction", "BitShift", 11, {AS("direction", "UP")}, 2,
     {T(U8, 1, D(1), 1), T(U8, 1, D(1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"BitShift refuses int32", "BitShift", 11, {AS("direction", "LEFT")}, 2,
     {T(I32, 1, D(1), 1), T(I32, 1, D(1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"Div without its second input", "Div", 14, {{0}}, 2, {T(F, 1, D(1), 1), OMIT}, 1, {{0}},
     GL_ERR_INPUT},
};

Test(elementwise, binary_arithmetic)
{
    tu_run_kernel_cases_within(binary_arithmetic_cases, GL_ARRAY_LEN(binary_arithmetic_cases),
    &ew_tol);
}

/* ---- comparisons and logic ---- */

static const tu_kcase comparisons_and_logic_cases[] = {
    {"Equal float with NaN", "Equal", 13, {{0}}, 2,
     {T(F, 1, D(3), 1, 2, NAN_), T(F, 1, D(3), 1, 3, NAN_)}, 1, {T(BOOL, 1, D(3), 1, 0, 0)}},
    {"Greater matrix > scalar", "Greater", 13, {{0}}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 0), T(F, 0, D(0), 1.5)}, 1, {T(BOOL, 2, D(2, 2), 0, 1, 1, 0)}},
    {"Greater scalar > row", "Greater", 13, {{0}}, 2,
     {T(F, 0, D(0), 1.5), T(F, 1, D(3), 1, 2, NAN_)}, 1, {T(BOOL, 1, D(3), 1, 0, 0)}},
    {"GreaterOrEqual int32", "GreaterOrEqual", 16, {{0}}, 2,
     {T(I32, 1, D(3), 1, 2, 3), T(I32, 1, D(1), 2)}, 1, {T(BOOL, 1, D(3), 0, 1, 1)}},
    {"Less int64", "Less", 13, {{0}}, 2, {T(I64, 1, D(2), -1, 5), T(I64, 1, D(2), 0, 5)}, 1,
     {T(BOOL, 1, D(2), 1, 0)}},
    {"Less int8 negative", "Less", 13, {{0}}, 2, {T(I8, 1, D(2), -100, 100), T(I8, 1, D(2), 1, 1)},
     1, {T(BOOL, 1, D(2), 1, 0)}},
    {"LessOrEqual float16", "LessOrEqual", 16, {{0}}, 2,
     {T(F16, 1, D(2), 1, 2), T(F16, 1, D(2), 1, 1.5)}, 1, {T(BOOL, 1, D(2), 1, 0)}},
    {"Equal bool", "Equal", 13, {{0}}, 2, {T(BOOL, 1, D(2), 1, 0), T(BOOL, 1, D(2), 1, 1)}, 1,
     {T(BOOL, 1, D(2), 1, 0)}},
    {"Equal int32 outer", "Equal", 13, {{0}}, 2, {T(I32, 2, D(2, 1), 1, 2), T(I32, 1, D(2), 1, 2)},
     1, {T(BOOL, 2, D(2, 2), 1, 0, 0, 1)}},
    {"Equal empty", "Equal", 13, {{0}}, 2, {EMPTY(F, 1, D(0)), T(F, 0, D(0), 1)}, 1,
     {EMPTY(BOOL, 1, D(0))}},
    {"Equal mixed dtypes", "Equal", 13, {{0}}, 2, {T(F, 1, D(1), 1), T(F64, 1, D(1), 1)}, 1, {{0}},
     GL_ERR_INPUT},
    {"Greater refuses bool", "Greater", 13, {{0}}, 2, {T(BOOL, 1, D(1), 1), T(BOOL, 1, D(1), 1)},
     1, {{0}}, GL_ERR_INPUT},
    {"And broadcast", "And", 7, {{0}}, 2,
     {T(BOOL, 2, D(2, 2), 1, 1, 0, 0), T(BOOL, 1, D(2), 1, 0)}, 1,
     {T(BOOL, 2, D(2, 2), 1, 0, 0, 0)}},
    {"Or broadcast", "Or", 7, {{0}}, 2, {T(BOOL, 2, D(2, 2), 1, 1, 0, 0), T(BOOL, 1, D(2), 1, 0)},
     1, {T(BOOL, 2, D(2, 2), 1, 1, 1, 0)}},
    {"Xor broadcast", "Xor", 7, {{0}}, 2,
     {T(BOOL, 2, D(2, 2), 1, 1, 0, 0), T(BOOL, 1, D(2), 1, 0)}, 1,
     {T(BOOL, 2, D(2, 2), 0, 1, 1, 0)}},
    {"And refuses int32", "And", 7, {{0}}, 2, {T(I32, 1, D(1), 1), T(I32, 1, D(1), 1)}, 1, {{0}},
     GL_ERR_INPUT},
};

Test(elementwise, comparisons_and_logic)
{
    tu_run_kernel_cases_within(comparisons_and_logic_cases,
    GL_ARRAY_LEN(comparisons_and_logic_cases), &ew_tol);
}

/* ---- opset < 7: broadcast by attribute ---- */

static const tu_kcase legacy_broadcast_cases[] = {
    {"Add-6 broadcast at axis 1", "Add", 6, {AI("broadcast", 1), AI("axis", 1)}, 2,
     {T(F, 3, D(2, 3, 2), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), T(F, 1, D(3), 100, 200, 300)}, 1,
     {T(F, 3, D(2, 3, 2), 100, 101, 202, 203, 304, 305, 106, 107, 208, 209, 310, 311)}},
    {"Add-6 broadcast of trailing dims", "Add", 6, {AI("broadcast", 1)}, 2,
     {T(F, 2, D(2, 3), 1, 2, 3, 4, 5, 6), T(F, 1, D(3), 10, 20, 30)}, 1,
     {T(F, 2, D(2, 3), 11, 22, 33, 14, 25, 36)}},
    {"Mul-6 by a scalar", "Mul", 6, {AI("broadcast", 1)}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 0, D(0), 2)}, 1, {T(F, 2, D(2, 2), 2, 4, 6, 8)}},
    {"Sub-1 equal shapes", "Sub", 1, {{0}}, 2, {T(F, 1, D(2), 5, 6), T(F, 1, D(2), 1, 2)}, 1,
     {T(F, 1, D(2), 4, 4)}},
    {"Add-6 without broadcast needs equal shapes", "Add", 6, {{0}}, 2,
     {ZEROS(F, 2, D(2, 3)), ZEROS(F, 1, D(3))}, 1, {{0}}, GL_ERR_INPUT},
    {"Add-6 axis that does not fit", "Add", 6, {AI("broadcast", 1), AI("axis", 0)}, 2,
     {ZEROS(F, 2, D(2, 3)), ZEROS(F, 1, D(3))}, 1, {{0}}, GL_ERR_INPUT},
    {"Div-6 B larger than A", "Div", 6, {AI("broadcast", 1)}, 2,
     {ZEROS(F, 1, D(3)), ZEROS(F, 2, D(2, 3))}, 1, {{0}}, GL_ERR_INPUT},
    {"Greater-1 broadcast", "Greater", 1, {AI("broadcast", 1)}, 2,
     {T(F, 2, D(2, 2), 1, 5, 3, 0), T(F, 1, D(2), 2, 2)}, 1, {T(BOOL, 2, D(2, 2), 0, 1, 1, 0)}},
    {"And-1 broadcast", "And", 1, {AI("broadcast", 1)}, 2,
     {T(BOOL, 2, D(2, 2), 1, 1, 0, 1), T(BOOL, 1, D(2), 1, 0)}, 1,
     {T(BOOL, 2, D(2, 2), 1, 0, 0, 0)}},
    {"Pow-1 broadcast", "Pow", 1, {AI("broadcast", 1)}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 1, D(2), 2, 1)}, 1, {T(F, 2, D(2, 2), 1, 2, 9, 4)}},
};

Test(elementwise, legacy_broadcast)
{
    tu_run_kernel_cases_within(legacy_broadcast_cases, GL_ARRAY_LEN(legacy_broadcast_cases),
    &ew_tol);
}

/* ---- Sum, Mean, Max, Min ---- */

static const tu_kcase variadic_cases[] = {
    {"Sum with broadcast", "Sum", 13, {{0}}, 3,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 1, D(2), 10, 20), T(F, 0, D(0), 100)}, 1,
     {T(F, 2, D(2, 2), 111, 122, 113, 124)}},
    {"Sum growing the shape", "Sum", 13, {{0}}, 2, {T(F, 1, D(2), 1, 2), T(F, 2, D(2, 1), 10, 20)},
     1, {T(F, 2, D(2, 2), 11, 12, 21, 22)}},
    {"Sum one input", "Sum", 13, {{0}}, 1, {T(F, 1, D(2), 1, 2)}, 1, {T(F, 1, D(2), 1, 2)}},
    {"Mean", "Mean", 13, {{0}}, 3,
     {T(F, 1, D(3), 3, 2, 1), T(F, 1, D(3), 1, 4, 4), T(F, 1, D(3), 2, 5, 3)}, 1,
     {T(F, 1, D(3), 2, 11.0 / 3, 8.0 / 3)}},
    {"Mean float16", "Mean", 13, {{0}}, 2, {T(F16, 1, D(2), 1, 2), T(F16, 1, D(2), 2, 4)}, 1,
     {T(F16, 1, D(2), 1.5, 3)}},
    {"Mean double", "Mean", 13, {{0}}, 2, {T(F64, 1, D(1), 1), T(F64, 1, D(1), 2)}, 1,
     {T(F64, 1, D(1), 1.5)}},
    {"Max", "Max", 13, {{0}}, 3,
     {T(F, 1, D(3), 3, 2, 1), T(F, 1, D(3), 1, 4, 4), T(F, 1, D(3), 2, 5, 3)}, 1,
     {T(F, 1, D(3), 3, 5, 4)}},
    {"Min", "Min", 13, {{0}}, 3,
     {T(F, 1, D(3), 3, 2, 1), T(F, 1, D(3), 1, 4, 4), T(F, 1, D(3), 2, 5, 3)}, 1,
     {T(F, 1, D(3), 1, 2, 1)}},
    {"Max NaN wins", "Max", 13, {{0}}, 2, {T(F, 1, D(3), 1, NAN_, 3), T(F, 1, D(3), 2, 0, NAN_)},
     1, {T(F, 1, D(3), 2, NAN_, NAN_)}},
    {"Min NaN wins", "Min", 13, {{0}}, 2, {T(F, 1, D(2), NAN_, 3), T(F, 1, D(2), 0, NAN_)}, 1,
     {T(F, 1, D(2), NAN_, NAN_)}},
    {"Max int8", "Max", 13, {{0}}, 2, {T(I8, 1, D(2), 3, -2), T(I8, 1, D(2), 1, -4)}, 1,
     {T(I8, 1, D(2), 3, -2)}},
    {"Min uint16 broadcast", "Min", 13, {{0}}, 2,
     {T(U16, 1, D(3), 3, 60000, 1), T(U16, 0, D(0), 2)}, 1, {T(U16, 1, D(3), 2, 2, 1)}},
    {"Max float16", "Max", 13, {{0}}, 2, {T(F16, 1, D(2), 3, -2), T(F16, 1, D(2), 1, 4)}, 1,
     {T(F16, 1, D(2), 3, 4)}},
    {"Sum refuses int32", "Sum", 13, {{0}}, 2, {T(I32, 1, D(1), 1), T(I32, 1, D(1), 1)}, 1, {{0}},
     GL_ERR_INPUT},
    {"Max mixed dtypes", "Max", 13, {{0}}, 2, {T(F, 1, D(1), 1), T(F64, 1, D(1), 1)}, 1, {{0}},
     GL_ERR_INPUT},
    {"Min shapes that do not broadcast", "Min", 13, {{0}}, 2,
     {ZEROS(F, 1, D(2)), ZEROS(F, 1, D(3))}, 1, {{0}}, GL_ERR_INPUT},
    {"Sum with no input", "Sum", 13, {{0}}, 0, {{0}}, 1, {{0}}, GL_ERR_INPUT},
};

Test(elementwise, variadic)
{
    tu_run_kernel_cases_within(variadic_cases, GL_ARRAY_LEN(variadic_cases), &ew_tol);
}

/* More operands than a single broadcast can take (GL_BCAST_MAX_OPERANDS). */
Test(elementwise, sum_of_many_inputs)
{
    enum { N = 12 };
    gl_model *m = tu_model(13);
    gl_value *vals[N];
    gl_tensor *ins[N];
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof(name), "x%d", i);
        int64_t dims[1] = {i % 2 ? 1 : 2};
        vals[i] = tu_input(m->graph, name, GL_DT_FLOAT, 1, dims);
        float v[2] = {(float)i, (float)(10 * i)};
        ins[i] = tu_tensor_f32(1, dims, v);
    }
    gl_node *n = gl_add_node(m->graph, "Sum", "", "n", vals, N, 1);
    gl_tensor *out = NULL;
    cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *const *)ins, &out), GL_OK, "%s",
                 gl_error_message());
    /* even i contribute (i, 10 i); odd i contribute i to both */
    const float *y = gl_tensor_data(out);
    cr_expect_eq(out->count, 2);
    cr_expect_float_eq(y[0], 0 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11, 1e-6);
    cr_expect_float_eq(y[1], 10 * (0 + 2 + 4 + 6 + 8 + 10) + (1 + 3 + 5 + 7 + 9 + 11), 1e-6);
    gl_tensor_free(out);
    for (int i = 0; i < N; i++)
        gl_tensor_free(ins[i]);
    gl_model_free(m);
}

/* ---- Clip, Where, PRelu ---- */

static const tu_kcase clip_where_prelu_cases[] = {
    {"Clip both bounds", "Clip", 13, {{0}}, 3,
     {T(F, 1, D(3), -2, 0, 2), T(F, 0, D(0), -1), T(F, 0, D(0), 1)}, 1, {T(F, 1, D(3), -1, 0, 1)}},
    {"Clip min only", "Clip", 13, {{0}}, 2, {T(F, 1, D(3), -2, 0.5, 7), T(F, 0, D(0), 0)}, 1,
     {T(F, 1, D(3), 0, 0.5, 7)}},
    {"Clip max only", "Clip", 13, {{0}}, 3, {T(F, 1, D(3), -2, 0.5, 7), OMIT, T(F, 0, D(0), 0)}, 1,
     {T(F, 1, D(3), -2, 0, 0)}},
    /* ONNX: the bounds default to numeric_limits lowest() and max() (issue 26) */
    {"Clip no bounds: infinities clip to the float range", "Clip", 13, {{0}}, 1,
     {T(F, 1, D(3), -INF_, 3, INF_)}, 1, {T(F, 1, D(3), -FLT_MAX, 3, FLT_MAX)}},
    {"Clip min only: +Inf clips to FLT_MAX", "Clip", 13, {{0}}, 2,
     {T(F, 1, D(3), -INF_, NAN_, INF_), T(F, 0, D(0), 0)}, 1, {T(F, 1, D(3), 0, NAN_, FLT_MAX)}},
    {"Clip double no bounds: DBL_MAX", "Clip", 13, {{0}}, 1, {T(F64, 1, D(2), -INF_, INF_)}, 1,
     {T(F64, 1, D(2), -DBL_MAX, DBL_MAX)}},
    {"Clip float16 no bounds: 65504", "Clip", 13, {{0}}, 1, {T(F16, 1, D(2), -INF_, INF_)}, 1,
     {T(F16, 1, D(2), -65504, 65504)}},
    {"Clip keeps NaN", "Clip", 13, {{0}}, 3,
     {T(F, 1, D(1), NAN_), T(F, 0, D(0), -1), T(F, 0, D(0), 1)}, 1, {T(F, 1, D(1), NAN_)}},
    {"Clip min > max gives max", "Clip", 13, {{0}}, 3,
     {T(F, 1, D(3), 0, 5, 10), T(F, 0, D(0), 6), T(F, 0, D(0), 4)}, 1, {T(F, 1, D(3), 4, 4, 4)}},
    {"Clip int8 min", "Clip", 13, {{0}}, 2, {T(I8, 1, D(3), -5, 3, 127), T(I8, 0, D(0), 0)}, 1,
     {T(I8, 1, D(3), 0, 3, 127)}},
    {"Clip uint8 both", "Clip", 13, {{0}}, 3,
     {T(U8, 1, D(3), 1, 100, 250), T(U8, 1, D(1), 10), T(U8, 1, D(1), 200)}, 1,
     {T(U8, 1, D(3), 10, 100, 200)}},
    {"Clip double", "Clip", 13, {{0}}, 3,
     {T(F64, 1, D(2), -3, 3), T(F64, 0, D(0), -1), T(F64, 0, D(0), 1)}, 1,
     {T(F64, 1, D(2), -1, 1)}},
    {"Clip bound of another dtype", "Clip", 13, {{0}}, 2, {T(F, 1, D(1), 0), T(F64, 0, D(0), 0)},
     1, {{0}}, GL_ERR_INPUT},
    {"Clip bound with two values", "Clip", 13, {{0}}, 2, {T(F, 1, D(1), 0), T(F, 1, D(2), 0, 1)},
     1, {{0}}, GL_ERR_INPUT},
    {"Clip-6 attributes", "Clip", 6, {AF("min", -1), AF("max", 1)}, 1, {T(F, 1, D(3), -2, 0, 2)},
     1, {T(F, 1, D(3), -1, 0, 1)}},
    {"Clip-6 defaults are the float range", "Clip", 6, {{0}}, 1, {T(F, 1, D(3), -INF_, 1, INF_)},
     1, {T(F, 1, D(3), -FLT_MAX, 1, FLT_MAX)}},
    {"Where", "Where", 16, {{0}}, 3,
     {T(BOOL, 2, D(2, 2), 1, 0, 1, 1), T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 2, D(2, 2), 9, 8, 7, 6)},
     1, {T(F, 2, D(2, 2), 1, 8, 3, 4)}},
    {"Where broadcasts all three", "Where", 16, {{0}}, 3,
     {T(BOOL, 2, D(2, 1), 1, 0), T(F, 1, D(3), 1, 2, 3), T(F, 0, D(0), -1)}, 1,
     {T(F, 2, D(2, 3), 1, 2, 3, -1, -1, -1)}},
    {"Where int64", "Where", 16, {{0}}, 3,
     {T(BOOL, 1, D(2), 0, 1), T(I64, 1, D(2), 1, 2), T(I64, 1, D(2), 9, 8)}, 1,
     {T(I64, 1, D(2), 9, 2)}},
    {"Where uint8", "Where", 16, {{0}}, 3,
     {T(BOOL, 1, D(2), 0, 1), T(U8, 1, D(2), 1, 2), T(U8, 1, D(2), 9, 8)}, 1,
     {T(U8, 1, D(2), 9, 2)}},
    {"Where float16", "Where", 16, {{0}}, 3,
     {T(BOOL, 1, D(2), 1, 0), T(F16, 0, D(0), 0.5), T(F16, 1, D(2), 9, 8)}, 1,
     {T(F16, 1, D(2), 0.5, 8)}},
    {"Where empty", "Where", 16, {{0}}, 3,
     {EMPTY(BOOL, 1, D(0)), T(F, 1, D(1), 1), T(F, 1, D(1), 2)}, 1, {EMPTY(F, 1, D(0))}},
    {"Where condition not bool", "Where", 16, {{0}}, 3,
     {T(F, 1, D(1), 1), T(F, 1, D(1), 1), T(F, 1, D(1), 2)}, 1, {{0}}, GL_ERR_INPUT},
    {"Where x and y differ", "Where", 16, {{0}}, 3,
     {T(BOOL, 1, D(1), 1), T(F, 1, D(1), 1), T(F64, 1, D(1), 2)}, 1, {{0}}, GL_ERR_INPUT},
    {"PRelu slope per last dim", "PRelu", 16, {{0}}, 2,
     {T(F, 2, D(2, 3), -1, 2, -3, 4, -5, 6), T(F, 1, D(3), 0.1, 0.2, 0.3)}, 1,
     {T(F, 2, D(2, 3), -0.1, 2, -0.9, 4, -1, 6)}},
    {"PRelu full slope", "PRelu", 16, {{0}}, 2, {T(F, 1, D(2), -2, -2), T(F, 1, D(2), 0.5, 2)}, 1,
     {T(F, 1, D(2), -1, -4)}},
    {"PRelu int32", "PRelu", 16, {{0}}, 2, {T(I32, 1, D(2), -3, 3), T(I32, 1, D(1), 2)}, 1,
     {T(I32, 1, D(2), -6, 3)}},
    {"PRelu float16", "PRelu", 16, {{0}}, 2, {T(F16, 1, D(2), -3, 3), T(F16, 1, D(1), 0.5)}, 1,
     {T(F16, 1, D(2), -1.5, 3)}},
    {"PRelu slope larger than X", "PRelu", 16, {{0}}, 2, {ZEROS(F, 1, D(3)), ZEROS(F, 2, D(2, 3))},
     1, {{0}}, GL_ERR_INPUT},
    {"PRelu-6 per channel", "PRelu", 6, {{0}}, 2,
     {T(F, 3, D(1, 2, 2), -1, -2, -3, 4), T(F, 1, D(2), 0.5, 0.25)}, 1,
     {T(F, 3, D(1, 2, 2), -0.5, -1, -0.75, 4)}},
    {"PRelu-6 shared slope", "PRelu", 6, {{0}}, 2, {T(F, 2, D(1, 2), -2, 2), T(F, 1, D(1), 0.5)},
     1, {T(F, 2, D(1, 2), -1, 2)}},
    {"PRelu-6 slope of another length", "PRelu", 6, {{0}}, 2,
     {ZEROS(F, 3, D(1, 2, 2)), ZEROS(F, 1, D(3))}, 1, {{0}}, GL_ERR_INPUT},
};

Test(elementwise, clip_where_prelu)
{
    tu_run_kernel_cases_within(clip_where_prelu_cases, GL_ARRAY_LEN(clip_where_prelu_cases),
    &ew_tol);
}

/* ---- Cast, numeric ---- */

static const tu_kcase cast_numeric_cases[] = {
    {"float -> int32 truncates", "Cast", 13, {AI("to", GL_DT_INT32)}, 1,
     {T(F, 1, D(3), 1.9, -1.9, 0)}, 1, {T(I32, 1, D(3), 1, -1, 0)}},
    {"float -> uint8", "Cast", 13, {AI("to", GL_DT_UINT8)}, 1, {T(F, 1, D(2), 255.9, 3)}, 1,
     {T(U8, 1, D(2), 255, 3)}},
    {"float -> bool (NaN is true)", "Cast", 13, {AI("to", GL_DT_BOOL)}, 1,
     {T(F, 1, D(3), 0, -0.5, NAN_)}, 1, {T(BOOL, 1, D(3), 0, 1, 1)}},
    {"bool -> float", "Cast", 13, {AI("to", GL_DT_FLOAT)}, 1, {T(BOOL, 1, D(2), 1, 0)}, 1,
     {T(F, 1, D(2), 1, 0)}},
    {"float -> float16", "Cast", 13, {AI("to", GL_DT_FLOAT16)}, 1,
     {T(F, 1, D(4), 1, 65504, 1e5, 0.1)}, 1, {T(F16, 1, D(4), 1, 65504, INF_, 0.0999755859375)}},
    {"float16 -> float", "Cast", 13, {AI("to", GL_DT_FLOAT)}, 1, {T(F16, 1, D(2), 0.1, -2)}, 1,
     {T(F, 1, D(2), 0.0999755859375, -2)}},
    {"float16 -> double", "Cast", 13, {AI("to", GL_DT_DOUBLE)}, 1, {T(F16, 1, D(1), 0.1)}, 1,
     {T(F64, 1, D(1), 0.0999755859375)}},
    {"float -> bfloat16", "Cast", 13, {AI("to", GL_DT_BFLOAT16)}, 1,
     {T(F, 1, D(3), 1, 3.140625, -INF_)}, 1, {T(BF16, 1, D(3), 1, 3.140625, -INF_)}},
    {"float -> bfloat16 truncates before opset 19", "Cast", 13, {AI("to", GL_DT_BFLOAT16)}, 1,
     {T(F, 1, D(2), 0.48033667, -0.48033667)}, 1, {T(BF16, 1, D(2), 0.478515625, -0.478515625)}},
    {"float -> bfloat16 rounds to even from opset 19", "Cast", 19, {AI("to", GL_DT_BFLOAT16)}, 1,
     {T(F, 1, D(2), 0.48033667, -0.48033667)}, 1, {T(BF16, 1, D(2), 0.48046875, -0.48046875)}},
    {"CastLike float -> bfloat16 truncates", "CastLike", 15, {{0}}, 2,
     {T(F, 1, D(1), 0.48033667), T(BF16, 0, D(0), 0)}, 1, {T(BF16, 1, D(1), 0.478515625)}},
    {"bfloat16 -> float", "Cast", 13, {AI("to", GL_DT_FLOAT)}, 1, {T(BF16, 1, D(2), 0.5, NAN_)}, 1,
     {T(F, 1, D(2), 0.5, NAN_)}},
    {"double -> float", "Cast", 13, {AI("to", GL_DT_FLOAT)}, 1, {T(F64, 1, D(1), 0.1)}, 1,
     {T(F, 1, D(1), (float)0.1)}},
    {"int64 -> float rounds once", "Cast", 13, {AI("to", GL_DT_FLOAT)}, 1,
     {T(I64, 1, D(2), 16777217, -3)}, 1, {T(F, 1, D(2), 16777216, -3)}},
    {"int64 -> double", "Cast", 13, {AI("to", GL_DT_DOUBLE)}, 1,
     {T(I64, 1, D(1), 9007199254740991.0)}, 1, {T(F64, 1, D(1), 9007199254740991.0)}},
    {"uint8 -> int8 wraps", "Cast", 13, {AI("to", GL_DT_INT8)}, 1, {T(U8, 1, D(2), 200, 5)}, 1,
     {T(I8, 1, D(2), -56, 5)}},
    {"int32 -> bool", "Cast", 13, {AI("to", GL_DT_BOOL)}, 1, {T(I32, 1, D(3), 0, -7, 2)}, 1,
     {T(BOOL, 1, D(3), 0, 1, 1)}},
    {"float -> int64 of NaN is 0", "Cast", 13, {AI("to", GL_DT_INT64)}, 1,
     {T(F, 1, D(2), NAN_, -2.5)}, 1, {T(I64, 1, D(2), 0, -2)}},
    {"Cast-1 names the type", "Cast", 1, {AS("to", "FLOAT")}, 1, {T(I32, 1, D(1), 3)}, 1,
     {T(F, 1, D(1), 3)}},
    {"Cast-6 empty tensor", "Cast", 6, {AI("to", GL_DT_DOUBLE)}, 1, {EMPTY(F, 1, D(0))}, 1,
     {EMPTY(F64, 1, D(0))}},
    {"Cast to a missing type", "Cast", 13, {AI("to", 99)}, 1, {T(F, 1, D(1), 0)}, 1, {{0}},
     GL_ERR_INPUT},
    {"Cast to complex", "Cast", 13, {AI("to", GL_DT_COMPLEX64)}, 1, {T(F, 1, D(1), 0)}, 1, {{0}},
     GL_ERR_INPUT},
    {"Cast-1 to an unknown name", "Cast", 1, {AS("to", "REAL")}, 1, {T(F, 1, D(1), 0)}, 1, {{0}},
     GL_ERR_INPUT},
    {"Cast without to", "Cast", 13, {{0}}, 1, {T(F, 1, D(1), 0)}, 1, {{0}}, GL_ERR_INPUT},
    {"CastLike float -> int32", "CastLike", 15, {{0}}, 2,
     {T(F, 1, D(2), 1.5, -2.5), T(I32, 0, D(0), 0)}, 1, {T(I32, 1, D(2), 1, -2)}},
    {"CastLike double -> float16", "CastLike", 15, {{0}}, 2,
     {T(F64, 1, D(1), 0.1), EMPTY(F16, 1, D(0))}, 1, {T(F16, 1, D(1), 0.0999755859375)}},
};

Test(elementwise, cast_numeric)
{
    tu_run_kernel_cases_within(cast_numeric_cases, GL_ARRAY_LEN(cast_numeric_cases), &ew_tol);
}

/* Values that doubles cannot carry through the table: 64-bit integers near the limits. */
Test(elementwise, int64_and_uint64_limits)
{
    gl_model *m = tu_model(14);
    int64_t one[1] = {2};
    gl_value *a = tu_input(m->graph, "a", GL_DT_INT64, 1, one);
    gl_value *b = tu_input(m->graph, "b", GL_DT_INT64, 1, one);
    gl_value *ua = tu_input(m->graph, "ua", GL_DT_UINT64, 1, one);
    gl_value *ub = tu_input(m->graph, "ub", GL_DT_UINT64, 1, one);
    gl_node *add = tu_node(m->graph, "Add", "add", 2, a, b);
    gl_node *div = tu_node(m->graph, "Div", "div", 2, a, b);
    gl_node *udiv = tu_node(m->graph, "Div", "udiv", 2, ua, ub);
    gl_node *ugt = tu_node(m->graph, "Greater", "ugt", 2, ua, ub);
    gl_node *umax = tu_node(m->graph, "Max", "umax", 2, ua, ub);
    gl_node *tof = tu_node(m->graph, "Cast", "tof", 1, ua);
    gl_node_set_attr_int(tof, "to", GL_DT_DOUBLE);

    int64_t av[2] = {INT64_MAX, INT64_MIN}, bv[2] = {1, -1};
    uint64_t uav[2] = {UINT64_MAX, 1ull << 63}, ubv[2] = {2, 1};
    gl_tensor *ta = tu_tensor_i64(1, one, av), *tb = tu_tensor_i64(1, one, bv);
    gl_tensor *tua = tu_tensor_of(GL_DT_UINT64, 1, one, uav);
    gl_tensor *tub = tu_tensor_of(GL_DT_UINT64, 1, one, ubv);
    gl_tensor *out = NULL;

    cr_assert_eq(tu_run_kernel(m, add, (const gl_tensor *[]){ta, tb}, &out), GL_OK);
    const int64_t *y = gl_tensor_data(out);
    cr_expect_eq(y[0], INT64_MIN, "INT64_MAX + 1 wraps");
    cr_expect_eq(y[1], INT64_MAX, "INT64_MIN + -1 wraps");
    gl_tensor_free(out);

    cr_assert_eq(tu_run_kernel(m, div, (const gl_tensor *[]){ta, tb}, &out), GL_OK);
    y = gl_tensor_data(out);
    cr_expect_eq(y[0], INT64_MAX);
    cr_expect_eq(y[1], INT64_MIN, "INT64_MIN / -1 wraps instead of trapping");
    gl_tensor_free(out);

    cr_assert_eq(tu_run_kernel(m, udiv, (const gl_tensor *[]){tua, tub}, &out), GL_OK);
    const uint64_t *u = gl_tensor_data(out);
    cr_expect_eq(u[0], UINT64_MAX / 2, "unsigned division");
    cr_expect_eq(u[1], 1ull << 63);
    gl_tensor_free(out);

    cr_assert_eq(tu_run_kernel(m, ugt, (const gl_tensor *[]){tua, tub}, &out), GL_OK);
    const uint8_t *g = gl_tensor_data(out);
    cr_expect(g[0] && g[1], "2^64-1 > 2 and 2^63 > 1 compare unsigned");
    gl_tensor_free(out);

    cr_assert_eq(tu_run_kernel(m, umax, (const gl_tensor *[]){tua, tub}, &out), GL_OK);
    u = gl_tensor_data(out);
    cr_expect_eq(u[0], UINT64_MAX);
    cr_expect_eq(u[1], 1ull << 63);
    gl_tensor_free(out);

    cr_assert_eq(tu_run_kernel(m, tof, (const gl_tensor *[]){tua}, &out), GL_OK);
    const double *d = gl_tensor_data(out);
    cr_expect_eq(d[0], 18446744073709551616.0);
    cr_expect_eq(d[1], 9223372036854775808.0);
    gl_tensor_free(out);

    gl_tensor_free(ta);
    gl_tensor_free(tb);
    gl_tensor_free(tua);
    gl_tensor_free(tub);
    gl_model_free(m);
}

/* ---- Cast to and from text ---- */

static gl_tensor *string_tensor(const char *const *items, int64_t n)
{
    int64_t dims[1] = {n};
    gl_tensor *t = gl_tensor_new(GL_DT_STRING, 1, dims);
    gl_bytes *b = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < n; i++) {
        b[i].len = strlen(items[i]);
        b[i].data = (uint8_t *)strdup(items[i]);
    }
    return t;
}

/* Runs Cast (to `to`) or CastLike on one input; returns the output (caller frees). */
static gl_tensor *cast_one(const gl_tensor *x, gl_dtype to, gl_status *st)
{
    gl_model *m = tu_model(13);
    gl_value *v = tu_input(m->graph, "x", x->dtype, x->rank, x->dims);
    gl_node *n = tu_node(m->graph, "Cast", "c", 1, v);
    gl_node_set_attr_int(n, "to", to);
    gl_tensor *out = NULL;
    *st = tu_run_kernel(m, n, (const gl_tensor *[]){x}, &out);
    gl_model_free(m);
    return out;
}

Test(elementwise, cast_to_string_prints_like_numpy)
{
    /* what numpy's str() prints for these float32 values (the ONNX suite's reference) */
    static const struct {
        float v;
        const char *text;
    } f32[] = {
        {0.9767611f, "0.9767611"}, {0.039187793f, "0.039187793"}, {1e-5f, "1e-05"},
        {100.0f, "100.0"}, {1e16f, "1e+16"}, {123456789.0f, "123456790.0"}, {-0.0f, "-0.0"},
        {NAN, "nan"}, {INFINITY, "inf"}, {-INFINITY, "-inf"}, {0.0001f, "1e-04"},
        {1.5e-7f, "1.5e-07"}, {0.00010001f, "0.00010001"}, {3.4028235e38f, "3.4028235e+38"},
        {1e15f, "1000000000000000.0"}, {0.5f, "0.5"}, {-2.25f, "-2.25"},
    };
    int64_t dims[1] = {(int64_t)GL_ARRAY_LEN(f32)};
    float vals[GL_ARRAY_LEN(f32)];
    for (size_t i = 0; i < GL_ARRAY_LEN(f32); i++)
        vals[i] = f32[i].v;
    gl_tensor *x = tu_tensor_f32(1, dims, vals);
    gl_status st;
    gl_tensor *y = cast_one(x, GL_DT_STRING, &st);
    cr_assert_eq(st, GL_OK, "%s", gl_error_message());
    cr_assert_eq(y->dtype, GL_DT_STRING);
    const gl_bytes *s = gl_tensor_data(y);
    for (size_t i = 0; i < GL_ARRAY_LEN(f32); i++)
        cr_expect(s[i].len == strlen(f32[i].text) && memcmp(s[i].data, f32[i].text, s[i].len) == 0,
                  "float %zu: '%.*s', expected '%s'", i, (int)s[i].len, (const char *)s[i].data,
                  f32[i].text);
    gl_tensor_free(x);
    gl_tensor_free(y);

    /* double, float16, int and bool */
    static const struct {
        gl_dtype dt;
        double v;
        const char *text;
    } other[] = {
        {GL_DT_DOUBLE, 0.1, "0.1"}, {GL_DT_DOUBLE, 1.0 / 3, "0.3333333333333333"},
        {GL_DT_DOUBLE, 2.5e-300, "2.5e-300"}, {GL_DT_FLOAT16, 0.1, "0.1"},
        {GL_DT_FLOAT16, 65504, "65500.0"}, {GL_DT_INT64, -42, "-42"}, {GL_DT_UINT8, 200, "200"},
        {GL_DT_BOOL, 1, "True"}, {GL_DT_BOOL, 0, "False"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(other); i++) {
        gl_tensor *t = gl_tensor_new(other[i].dt, 1, (const int64_t[]){1});
        gl_elem_set_f64(t, 0, other[i].v);
        gl_tensor *r = cast_one(t, GL_DT_STRING, &st);
        cr_assert_eq(st, GL_OK, "%s", gl_error_message());
        const gl_bytes *b = gl_tensor_data(r);
        bool same = b[0].len == strlen(other[i].text) &&
                    memcmp(b[0].data, other[i].text, b[0].len) == 0;
        cr_expect(same,
                  "%s %g: '%.*s', expected '%s'", gl_dtype_name(other[i].dt), other[i].v,
                  (int)b[0].len, (const char *)b[0].data, other[i].text);
        gl_tensor_free(t);
        gl_tensor_free(r);
    }
}

Test(elementwise, cast_from_string)
{
    static const char *const texts[] = {"0.47892547", "NaN", "INF", "+INF", "-INF", "1e-3",
                                        " 2.5 ", "-inf", "1E8"};
    static const float want[] = {0.47892547f, NAN, INFINITY, INFINITY, -INFINITY, 1e-3f, 2.5f,
                                 -INFINITY, 1e8f};
    gl_tensor *x = string_tensor(texts, GL_ARRAY_LEN(texts));
    gl_status st;
    gl_tensor *y = cast_one(x, GL_DT_FLOAT, &st);
    cr_assert_eq(st, GL_OK, "%s", gl_error_message());
    const float *f = gl_tensor_data(y);
    for (size_t i = 0; i < GL_ARRAY_LEN(want); i++)
        cr_expect(isnan(want[i]) ? isnan(f[i]) : f[i] == want[i], "'%s' gave %.9g", texts[i],
                  f[i]);
    gl_tensor_free(x);
    gl_tensor_free(y);

    static const char *const ints[] = {"123456789012345678", "-5", "7.9"};
    x = string_tensor(ints, 3);
    y = cast_one(x, GL_DT_INT64, &st);
    cr_assert_eq(st, GL_OK, "%s", gl_error_message());
    const int64_t *iv = gl_tensor_data(y);
    cr_expect_eq(iv[0], 123456789012345678ll, "integers stay exact");
    cr_expect_eq(iv[1], -5);
    cr_expect_eq(iv[2], 7, "a decimal truncates");
    gl_tensor_free(x);
    gl_tensor_free(y);

    static const char *const bools[] = {"true", "0", "2", "FALSE"};
    x = string_tensor(bools, 4);
    y = cast_one(x, GL_DT_BOOL, &st);
    cr_assert_eq(st, GL_OK, "%s", gl_error_message());
    const uint8_t *bv = gl_tensor_data(y);
    cr_expect(bv[0] == 1 && bv[1] == 0 && bv[2] == 1 && bv[3] == 0);
    gl_tensor_free(x);
    gl_tensor_free(y);

    static const char *const bad[] = {"1.5", "abc"};
    x = string_tensor(bad, 2);
    y = cast_one(x, GL_DT_FLOAT, &st);
    cr_expect_eq(st, GL_ERR_INPUT, "a word is not a number");
    cr_expect(strstr(gl_error_message(), "abc") != NULL, "%s", gl_error_message());
    gl_tensor_free(x);
    gl_tensor_free(y);

    static const char *const empty[] = {""};
    x = string_tensor(empty, 1);
    y = cast_one(x, GL_DT_DOUBLE, &st);
    cr_expect_eq(st, GL_ERR_INPUT, "an empty string is not a number");
    gl_tensor_free(x);
    gl_tensor_free(y);
}

Test(elementwise, where_on_strings_and_cast_to_same_type)
{
    static const char *const xs[] = {"a", "bb"}, *const ws[] = {"ccc", ""};
    gl_model *m = tu_model(16);
    int64_t two[1] = {2};
    gl_value *c = tu_input(m->graph, "c", GL_DT_BOOL, 1, two);
    gl_value *x = tu_input(m->graph, "x", GL_DT_STRING, 1, two);
    gl_value *w = tu_input(m->graph, "w", GL_DT_STRING, 1, two);
    gl_node *n = tu_node(m->graph, "Where", "n", 3, c, x, w);
    uint8_t cv[2] = {0, 1};
    gl_tensor *tc = tu_tensor_of(GL_DT_BOOL, 1, two, cv);
    gl_tensor *tx = string_tensor(xs, 2), *tw = string_tensor(ws, 2), *out = NULL;
    cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *[]){tc, tx, tw}, &out), GL_OK, "%s",
                 gl_error_message());
    const gl_bytes *s = gl_tensor_data(out);
    cr_expect(s[0].len == 3 && memcmp(s[0].data, "ccc", 3) == 0);
    cr_expect(s[1].len == 2 && memcmp(s[1].data, "bb", 2) == 0);
    cr_expect(s[0].data != ((const gl_bytes *)gl_tensor_data(tw))[0].data, "strings are copied");
    gl_tensor_free(out);

    gl_status st;
    gl_tensor *same = cast_one(tx, GL_DT_STRING, &st);
    cr_expect_eq(st, GL_OK);
    cr_expect_eq(same->buf, tx->buf, "a cast to the same type shares the bytes");
    gl_tensor_free(same);
    gl_tensor_free(tc);
    gl_tensor_free(tx);
    gl_tensor_free(tw);
    gl_model_free(m);
}

/* The float32 row loops against a naive broadcast written here, on shapes that exercise
 * every stride pattern (both walk, one held, both held) and dim merging. */
Test(elementwise, float32_rows_match_naive_broadcast)
{
    static const struct {
        int ra;
        int64_t a[4];
        int rb;
        int64_t b[4];
    } shapes[] = {
        {2, {3, 4}, 2, {3, 4}},       {2, {3, 4}, 1, {4}},       {2, {3, 1}, 2, {1, 4}},
        {3, {2, 3, 4}, 2, {3, 1}},    {4, {2, 1, 3, 1}, 3, {5, 1, 4}}, {1, {1}, 3, {2, 2, 2}},
        {3, {2, 1, 5}, 3, {2, 3, 5}}, {0, {0}, 2, {2, 3}},       {4, {1, 3, 1, 2}, 4, {2, 1, 4, 1}},
    };
    for (size_t s = 0; s < GL_ARRAY_LEN(shapes); s++) {
        int ra = shapes[s].ra, rb = shapes[s].rb, r = ra > rb ? ra : rb;
        int64_t ca = 1, cb = 1, dims[4], cnt = 1;
        for (int d = 0; d < ra; d++)
            ca *= shapes[s].a[d];
        for (int d = 0; d < rb; d++)
            cb *= shapes[s].b[d];
        for (int d = 0; d < r; d++) {
            int da = d - (r - ra), db = d - (r - rb);
            int64_t x = da >= 0 ? shapes[s].a[da] : 1, y = db >= 0 ? shapes[s].b[db] : 1;
            dims[d] = x > y ? x : y;
            cnt *= dims[d];
        }
        float *va = malloc((size_t)ca * sizeof(float)), *vb = malloc((size_t)cb * sizeof(float));
        for (int64_t i = 0; i < ca; i++)
            va[i] = (float)(i + 1);
        for (int64_t i = 0; i < cb; i++)
            vb[i] = (float)(1000 * (i + 1));
        gl_tensor *ta = tu_tensor_f32(ra, shapes[s].a, va);
        gl_tensor *tb = tu_tensor_f32(rb, shapes[s].b, vb);
        gl_model *m = tu_model(14);
        gl_value *x = tu_input(m->graph, "a", GL_DT_FLOAT, ra, shapes[s].a);
        gl_value *y = tu_input(m->graph, "b", GL_DT_FLOAT, rb, shapes[s].b);
        gl_node *n = tu_node(m->graph, "Sub", "n", 2, x, y);
        gl_tensor *out = NULL;
        cr_assert_eq(tu_run_kernel(m, n, (const gl_tensor *[]){ta, tb}, &out), GL_OK,
                     "shape %zu: %s", s, gl_error_message());
        cr_assert_eq(out->count, cnt, "shape %zu", s);
        const float *o = gl_tensor_data(out);
        for (int64_t i = 0; i < cnt; i++) {
            /* unravel i, then index each operand with its own (broadcast) dims */
            int64_t rem = i, ia = 0, ib = 0, sa = 1, sb = 1;
            for (int d = r - 1; d >= 0; d--) {
                int64_t idx = rem % dims[d];
                rem /= dims[d];
                int da = d - (r - ra), db = d - (r - rb);
                if (da >= 0) {
                    ia += (shapes[s].a[da] == 1 ? 0 : idx) * sa;
                    sa *= shapes[s].a[da];
                }
                if (db >= 0) {
                    ib += (shapes[s].b[db] == 1 ? 0 : idx) * sb;
                    sb *= shapes[s].b[db];
                }
            }
            cr_expect_eq(o[i], va[ia] - vb[ib], "shape %zu element %lld", s, (long long)i);
        }
        gl_tensor_free(out);
        gl_tensor_free(ta);
        gl_tensor_free(tb);
        free(va);
        free(vb);
        gl_model_free(m);
    }
}

/* ---- shape functions ---- */

typedef struct icase {
    const char *what;
    int opset;
    const char *op;
    tu_attr attrs[2];
    int n_in;
    const char *in[3]; /* "" omitted */
    const char *out;   /* NULL: GL_ERR_INPUT */
} icase;

Test(elementwise, shape_functions)
{
    static const icase cases[] = {
        {"unary keeps symbols", 14, "Relu", {{0}}, 1, {"float[N,3]"}, "float[N,3]"},
        {"unary of unknown", 14, "Relu", {{0}}, 1, {"?"}, "?"},
        {"unary refuses a dtype", 7, "Cos", {{0}}, 1, {"int32[2]"}, NULL},
        {"unary keeps unknown rank", 13, "Exp", {{0}}, 1, {"double[?]"}, "double[?]"},
        {"IsNaN gives bool", 13, "IsNaN", {{0}}, 1, {"float16[2,N]"}, "bool[2,N]"},
        {"IsInf refuses ints", 10, "IsInf", {{0}}, 1, {"int32[2]"}, NULL},
        {"Not", 1, "Not", {{0}}, 1, {"bool[3]"}, "bool[3]"},
        {"Add symbol and vector", 14, "Add", {{0}}, 2, {"float[N,3]", "float[3]"}, "float[N,3]"},
        {"Add outer symbols", 14, "Add", {{0}}, 2, {"float[N,1]", "float[1,M]"}, "float[N,M]"},
        {"Add mismatch", 14, "Add", {{0}}, 2, {"float[2,3]", "float[4]"}, NULL},
        {"Add mixed dtypes", 14, "Add", {{0}}, 2, {"float[2]", "int64[2]"}, NULL},
        {"Add with an unknown side", 14, "Add", {{0}}, 2, {"float[N]", "?"}, "float[?]"},
        {"Add of unknowns", 14, "Add", {{0}}, 2, {"?", "?"}, "?"},
        {"Add-6 keeps A's shape", 6, "Add", {AI("broadcast", 1)}, 2,
         {"float[2,3,4]", "float[3,4]"}, "float[2,3,4]"},
        {"Equal gives bool", 13, "Equal", {{0}}, 2, {"int64[2,3]", "int64[3]"}, "bool[2,3]"},
        {"Greater-1 gives bool", 1, "Greater", {AI("broadcast", 1)}, 2,
         {"float[2,3]", "float[3]"}, "bool[2,3]"},
        {"Less refuses strings", 13, "Less", {{0}}, 2, {"string[2]", "string[2]"}, NULL},
        {"And", 7, "And", {{0}}, 2, {"bool[2,1]", "bool[3]"}, "bool[2,3]"},
        {"Or refuses floats", 7, "Or", {{0}}, 2, {"float[2]", "float[2]"}, NULL},
        {"Pow keeps the base dtype", 15, "Pow", {{0}}, 2, {"int64[2]", "float[1]"}, "int64[2]"},
        {"Pow float ^ int", 15, "Pow", {{0}}, 2, {"float[N]", "int32[]"}, "float[N]"},
        {"Pow refuses bool", 15, "Pow", {{0}}, 2, {"bool[1]", "float[1]"}, NULL},
        {"Mod int", 13, "Mod", {{0}}, 2, {"int32[4]", "int32[1]"}, "int32[4]"},
        {"Mod float needs fmod", 13, "Mod", {{0}}, 2, {"float[4]", "float[1]"}, NULL},
        {"Mod float with fmod", 13, "Mod", {AI("fmod", 1)}, 2, {"float[4]", "float[4]"},
         "float[4]"},
        {"BitShift", 11, "BitShift", {AS("direction", "RIGHT")}, 2,
         {"uint8[3]", "uint8[3]"}, "uint8[3]"},
        {"BitShift without direction", 11, "BitShift", {{0}}, 2, {"uint8[3]", "uint8[3]"}, NULL},
        {"BitShift refuses signed", 11, "BitShift", {AS("direction", "LEFT")}, 2,
         {"int8[3]", "int8[3]"}, NULL},
        {"Sum of three", 13, "Sum", {{0}}, 3, {"float[N,1]", "float[3]", "float[1]"},
         "float[N,3]"},
        {"Sum refuses ints", 13, "Sum", {{0}}, 2, {"int32[1]", "int32[1]"}, NULL},
        {"Sum of nothing", 13, "Sum", {{0}}, 0, {""}, NULL},
        {"Max int8", 13, "Max", {{0}}, 2, {"int8[2]", "int8[2]"}, "int8[2]"},
        {"Min mismatch", 13, "Min", {{0}}, 2, {"float[2]", "float[3]"}, NULL},
        {"Where", 16, "Where", {{0}}, 3, {"bool[2,1]", "float[3]", "float[]"}, "float[2,3]"},
        {"Where condition not bool", 16, "Where", {{0}}, 3, {"int32[2]", "float[2]", "float[2]"},
         NULL},
        {"Where x, y differ", 16, "Where", {{0}}, 3, {"bool[2]", "float[2]", "int32[2]"}, NULL},
        {"Where strings", 16, "Where", {{0}}, 3, {"bool[2]", "string[2]", "string[1]"},
         "string[2]"},
        {"Cast", 13, "Cast", {AI("to", GL_DT_INT64)}, 1, {"float[N]"}, "int64[N]"},
        {"Cast to string", 13, "Cast", {AI("to", GL_DT_STRING)}, 1, {"float[2]"}, "string[2]"},
        {"Cast-1 by name", 1, "Cast", {AS("to", "DOUBLE")}, 1, {"int32[2]"}, "double[2]"},
        {"Cast to nothing", 13, "Cast", {AI("to", 99)}, 1, {"float[2]"}, NULL},
        {"CastLike", 15, "CastLike", {{0}}, 2, {"float[2,N]", "int32[]"}, "int32[2,N]"},
        {"CastLike unknown target", 15, "CastLike", {{0}}, 2, {"float[2]", "?"}, "?[2]"},
        {"Clip with bounds", 13, "Clip", {{0}}, 3, {"float[N]", "float[]", "float[]"}, "float[N]"},
        {"Clip max only", 13, "Clip", {{0}}, 3, {"int8[N]", "", "int8[]"}, "int8[N]"},
        {"Clip bound of another dtype", 13, "Clip", {{0}}, 2, {"float[N]", "int32[]"}, NULL},
        {"Clip-6 refuses ints", 6, "Clip", {{0}}, 1, {"int32[2]"}, NULL},
        {"PRelu", 16, "PRelu", {{0}}, 2, {"float[N,3]", "float[3]"}, "float[N,3]"},
        {"PRelu slope dtype", 16, "PRelu", {{0}}, 2, {"float[N,3]", "double[3]"}, NULL},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        const icase *c = &cases[i];
        gl_model *m = tu_model(c->opset);
        gl_value *vals[3] = {0};
        for (int k = 0; k < c->n_in; k++) {
            if (!c->in[k][0])
                continue;
            char name[16];
            snprintf(name, sizeof(name), "x%d", k);
            vals[k] = gl_add_value(m->graph, name);
            gl_graph_add_input(m->graph, vals[k]);
            gl_type_free(&vals[k]->type);
            tu_parse_type(c->in[k], &vals[k]->type);
        }
        gl_node *n = gl_add_node(m->graph, c->op, "", "n", vals, (size_t)c->n_in, 1);
        tu_apply_attrs(n, c->attrs);
        gl_type out;
        gl_status st = tu_infer(m, n, &out);
        if (!c->out) {
            cr_expect_eq(st, GL_ERR_INPUT, "%s: expected a refusal", c->what);
            cr_expect(strstr(gl_error_message(), "node 'n'") != NULL, "%s: %s", c->what,
                      gl_error_message());
        } else {
            char text[128];
            gl_type_format(&out, text, sizeof(text));
            cr_expect_eq(st, GL_OK, "%s: %s", c->what, gl_error_message());
            cr_expect_str_eq(text, c->out, "%s: %s, expected %s", c->what, text, c->out);
        }
        gl_type_free(&out);
        gl_model_free(m);
    }
}

/* ---- the registry entries ---- */

Test(elementwise, registry_versions_and_flags)
{
    static const struct {
        const char *op;
        int opset;
        unsigned flags;
    } rows[] = {
        {"Relu", 14, GL_OP_ELEMENTWISE}, {"Cast", 13, GL_OP_ELEMENTWISE},
        {"IsNaN", 13, GL_OP_ELEMENTWISE}, {"Add", 14, GL_OP_BROADCAST},
        {"Add", 6, 0}, {"Equal", 13, GL_OP_BROADCAST}, {"Where", 16, GL_OP_BROADCAST},
        {"Sum", 13, GL_OP_BROADCAST}, {"PRelu", 16, GL_OP_BROADCAST},
        {"Clip", 13, GL_OP_ELEMENTWISE},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        const gl_op_def *d = gl_op_lookup("", rows[i].op, rows[i].opset);
        cr_assert_not_null(d, "%s-%d", rows[i].op, rows[i].opset);
        cr_expect_eq(d->flags, rows[i].flags, "%s-%d flags", rows[i].op, rows[i].opset);
        cr_expect(d->infer && d->kernel, "%s-%d has both functions", rows[i].op, rows[i].opset);
    }
    /* semantics changed at these versions: different entries on either side */
    static const struct {
        const char *op;
        int before, from;
    } changes[] = {
        {"Add", 6, 7}, {"Sub", 6, 7}, {"Mul", 6, 7}, {"Div", 6, 7}, {"Pow", 6, 7},
        {"And", 6, 7}, {"Equal", 6, 7}, {"Greater", 6, 7}, {"Less", 6, 7}, {"PRelu", 6, 7},
        {"Clip", 10, 11},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(changes); i++) {
        const gl_op_def *a = gl_op_lookup("", changes[i].op, changes[i].before);
        const gl_op_def *b = gl_op_lookup("", changes[i].op, changes[i].from);
        cr_assert(a && b, "%s", changes[i].op);
        cr_expect_neq(a->kernel, b->kernel, "%s changes at %d", changes[i].op, changes[i].from);
        cr_expect_eq(b->since, changes[i].from, "%s", changes[i].op);
    }
    static const char *const ops[] = {
        "Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh", "BitShift",
        "Cast", "CastLike", "Ceil", "Celu", "Clip", "Cos", "Cosh", "Div", "Elu", "Equal", "Erf",
        "Exp", "Floor", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "IsInf",
        "IsNaN", "LeakyRelu", "Less", "LessOrEqual", "Log", "Max", "Mean", "Min", "Mod", "Mul",
        "Neg", "Not", "Or", "PRelu", "Pow", "Reciprocal", "Relu", "Round", "Selu", "Shrink",
        "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tan",
        "Tanh", "ThresholdedRelu", "Where", "Xor",
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(ops); i++)
        cr_expect_not_null(gl_op_lookup("", ops[i], 17), "%s is registered", ops[i]);
    cr_expect_null(gl_op_lookup("", "Acos", 6), "Acos came with opset 7");
    cr_expect_null(gl_op_lookup("", "CastLike", 14), "CastLike came with opset 15");
}

/* ---- Erf in float32 against erf() in double ---- */

/* The distance from got to the double `want`, in units of the float spacing at want. */
static double ulps(float got, double want)
{
    float w = (float)want;
    double spacing = fabs((double)nextafterf(w, INFINITY) - w);
    if (fabsf(w) == 1.0f)
        spacing = 0x1p-24; /* the spacing just below 1, where erf approaches from */
    return fabs((double)got - want) / spacing;
}

Test(elementwise, erf_float32_within_one_ulp)
{
    /* Every 4099th float from 0 to 5 (past 3.92 erf rounds to 1), both signs, in one
     * tensor whose length is no multiple of the kernel's blocks; then the edges. */
    const uint32_t last = 0x40a00000u; /* 5.0f */
    const uint32_t step = 4099;
    int64_t half = last / step + 1;
    static const float edges[] = {0.0f, -0.0f, 1.0f, -1.0f, 0x1.fffffep-1f, 0x1.000002p+0f,
                                  3.92f, 0x1p-149f, -0x1p-126f, 1e-20f, 10.0f, -1e30f,
                                  INFINITY, -INFINITY};
    int64_t n = 2 * half + (int64_t)GL_ARRAY_LEN(edges);
    float *x = malloc((size_t)n * sizeof(*x));
    cr_assert(x);
    for (int64_t i = 0; i < half; i++) {
        uint32_t bits = (uint32_t)i * step;
        memcpy(&x[2 * i], &bits, sizeof(bits));
        x[2 * i + 1] = -x[2 * i];
    }
    memcpy(x + 2 * half, edges, sizeof(edges));
    gl_model *m = tu_model(13);
    gl_value *in = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (int64_t[]){n});
    gl_node *node = tu_node(m->graph, "Erf", "erf", 1, in);
    gl_tensor *t = tu_tensor_f32(1, (int64_t[]){n}, x), *out = NULL;
    cr_assert_eq(tu_run_kernel(m, node, (const gl_tensor *[]){t}, &out), GL_OK, "%s",
                 gl_error_message());
    const float *y = gl_tensor_data(out);
    double worst = 0;
    int64_t worst_i = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = ulps(y[i], erf((double)x[i]));
        if (e > worst)
            worst = e, worst_i = i;
        cr_expect(signbit(y[i]) == signbit(x[i]), "erf(%a) = %a: the sign", x[i], y[i]);
    }
    cr_expect_leq(worst, 1.0, "erf(%a) = %a, %.3f ulp from %a", x[worst_i], y[worst_i], worst,
                  erf((double)x[worst_i]));
    gl_tensor_free(out);

    /* NaN passes through; a tensor shorter than one block */
    float nan_in[3] = {NAN, -0.5f, -NAN};
    gl_tensor *tn = tu_tensor_f32(1, (int64_t[]){3}, nan_in);
    cr_assert_eq(tu_run_kernel(m, node, (const gl_tensor *[]){tn}, &out), GL_OK);
    y = gl_tensor_data(out);
    cr_expect(isnan(y[0]) && isnan(y[2]), "NaN in, NaN out");
    cr_expect_leq(ulps(y[1], erf(-0.5)), 1.0);
    gl_tensor_free(out);
    gl_tensor_free(tn);
    gl_tensor_free(t);
    free(x);
    gl_model_free(m);
}

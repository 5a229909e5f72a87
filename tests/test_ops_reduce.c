/* test_ops_reduce.c — Reduce*, ArgMax/ArgMin, CumSum, Softmax/LogSoftmax/Hardmax, TopK,
 * NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
 *
 * Table-driven: each kernel case lists its inputs and the expected outputs, worked out
 * by hand from the ONNX definitions (comments show the arithmetic where it is not
 * obvious); each shape case lists input types (symbolic dims by name) and the expected
 * output types. */
#include "ops/ops.h"

#define TU_CASE_SHORTHANDS /* T(), D(), AI(), F, ...: see testutil.h */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>

#define KC(rank_, dims_, ...)                                                              \
    {.dt = GL_DT_INT64, .rank = (rank_), .dims = dims_, .konst = true, .cv = {__VA_ARGS__}}
#define LN2 0.6931471805599453
#define LN3 1.0986122886681098

/* ---- Reduce* ---------------------------------------------------------------------------- */

#define X3 T(F, 3, D(3, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)

static const tu_kcase reduce_cases[] = {
    {"rs_axes_input", "ReduceSum", 13, {{0}}, 2, {X3, T(I64, 1, D(1), 1)}, 1,
     {T(F, 3, D(3, 1, 2), 4, 6, 12, 14, 20, 22)}, GL_OK},
    {"rs_no_axes", "ReduceSum", 13, {{0}}, 1, {X3}, 1, {T(F, 3, D(1, 1, 1), 78)}, GL_OK},
    {"rs_empty_axes", "ReduceSum", 13, {{0}}, 2, {X3, EMPTY(I64, 1, D(0))}, 1,
     {T(F, 3, D(1, 1, 1), 78)}, GL_OK},
    {"rs_noop", "ReduceSum", 13, {AI("noop_with_empty_axes", 1)}, 2,
     {X3, EMPTY(I64, 1, D(0))}, 1, {X3}, GL_OK},
    {"rs_noop_absent_axes", "ReduceSum", 13, {AI("noop_with_empty_axes", 1)}, 1, {X3}, 1,
     {X3}, GL_OK},
    {"rs_negative_axis", "ReduceSum", 13, {AI("keepdims", 0)}, 2, {X3, T(I64, 1, D(1), -1)},
     1, {T(F, 2, D(3, 2), 3, 7, 11, 15, 19, 23)}, GL_OK},
    /* axes 0 and 2: 1+2+5+6+9+10, 3+4+7+8+11+12 */
    {"rs_attr_v11", "ReduceSum", 11, {AINTS("axes", 2, 0, 2), AI("keepdims", 0)}, 1, {X3},
     1, {T(F, 1, D(2), 33, 45)}, GL_OK},
    {"rs_int32", "ReduceSum", 13, {AI("keepdims", 0)}, 1, {T(I32, 1, D(3), 1, 2, -5)}, 1,
     {T(I32, 0, D(0), -2)}, GL_OK},
    {"rs_float16", "ReduceSum", 13, {{0}}, 1, {T(F16, 1, D(2), 0.5, 0.25)}, 1,
     {T(F16, 1, D(1), 0.75)}, GL_OK},
    {"rs_empty_input", "ReduceSum", 13, {AI("keepdims", 0)}, 1, {EMPTY(F, 1, D(0))}, 1,
     {T(F, 0, D(0), 0)}, GL_OK},
    {"rs_empty_other_dim", "ReduceSum", 13, {{0}}, 2, {EMPTY(F, 2, D(0, 3)),
     T(I64, 1, D(1), 1)}, 1, {EMPTY(F, 2, D(0, 1))}, GL_OK},
    {"rs_strings", "ReduceSum", 13, {AI("keepdims", 0)}, 1, {EMPTY(GL_DT_STRING, 1, D(0))},
     1, {{0}}, GL_ERR_INPUT},
    {"rmean_bool", "ReduceMean", 13, {{0}}, 1, {T(GL_DT_BOOL, 1, D(2), 1, 0)}, 1, {{0}},
     GL_ERR_INPUT},
    {"rmax_bool", "ReduceMax", 13, {AI("keepdims", 0)}, 1, {T(GL_DT_BOOL, 1, D(2), 1, 0)}, 1,
     {T(GL_DT_BOOL, 0, D(0), 1)}, GL_OK},
    {"rmean_empty_huge", "ReduceMean", 13, {AINTS("axes", 2, 0, 1), AI("keepdims", 0)}, 1,
     {EMPTY(F, 3, D(BIG, BIG, 0))}, 1, {EMPTY(F, 1, D(0))}, GL_OK},
    {"rs_bad_axis", "ReduceSum", 13, {{0}}, 2, {X3, T(I64, 1, D(1), 3)}, 1, {{0}},
     GL_ERR_INPUT},
    {"rs_repeated_axis", "ReduceSum", 13, {{0}}, 2, {X3, T(I64, 1, D(2), 0, -3)}, 1, {{0}},
     GL_ERR_INPUT},
    {"rs_float_axes", "ReduceSum", 13, {{0}}, 2, {X3, T(F, 1, D(1), 0)}, 1, {{0}},
     GL_ERR_INPUT},
    {"rmean_attr", "ReduceMean", 13, {AINTS("axes", 1, 1)}, 1, {X3}, 1,
     {T(F, 3, D(3, 1, 2), 2, 3, 6, 7, 10, 11)}, GL_OK},
    {"rmean_v18_input", "ReduceMean", 18, {AI("keepdims", 0)}, 2, {X3, T(I64, 1, D(1), 1)},
     1, {T(F, 2, D(3, 2), 2, 3, 6, 7, 10, 11)}, GL_OK},
    {"rmean_double", "ReduceMean", 13, {{0}}, 1, {T(F64, 1, D(2), 1, 2)}, 1,
     {T(F64, 1, D(1), 1.5)}, GL_OK},
    {"rmean_empty", "ReduceMean", 13, {AI("keepdims", 0)}, 1, {EMPTY(F, 1, D(0))}, 1,
     {T(F, 0, D(0), NAN)}, GL_OK},
    {"rmax", "ReduceMax", 13, {AINTS("axes", 1, 1), AI("keepdims", 0)}, 1, {X3}, 1,
     {T(F, 2, D(3, 2), 3, 4, 7, 8, 11, 12)}, GL_OK},
    {"rmin", "ReduceMin", 13, {AINTS("axes", 1, 1), AI("keepdims", 0)}, 1, {X3}, 1,
     {T(F, 2, D(3, 2), 1, 2, 5, 6, 9, 10)}, GL_OK},
    {"rmax_int8", "ReduceMax", 13, {AI("keepdims", 0)}, 1, {T(I8, 1, D(3), -5, 3, -128)}, 1,
     {T(I8, 0, D(0), 3)}, GL_OK},
    {"rmin_uint8", "ReduceMin", 13, {AI("keepdims", 0)}, 1, {T(U8, 1, D(3), 200, 7, 255)}, 1,
     {T(U8, 0, D(0), 7)}, GL_OK},
    {"rmax_empty", "ReduceMax", 13, {AI("keepdims", 0)}, 1, {EMPTY(F, 1, D(0))}, 1,
     {T(F, 0, D(0), -INFINITY)}, GL_OK},
    {"rprod", "ReduceProd", 13, {AINTS("axes", 1, 1), AI("keepdims", 0)}, 1,
     {T(F, 2, D(2, 2), 1, 2, 3, 4)}, 1, {T(F, 1, D(2), 2, 12)}, GL_OK},
    {"rprod_empty", "ReduceProd", 13, {AI("keepdims", 0)}, 1, {EMPTY(F, 1, D(0))}, 1,
     {T(F, 0, D(0), 1)}, GL_OK},
    {"rprod_int64", "ReduceProd", 13, {AI("keepdims", 0)}, 1, {T(I64, 1, D(3), -2, 3, 4)}, 1,
     {T(I64, 0, D(0), -24)}, GL_OK},
    {"rl1", "ReduceL1", 13, {AINTS("axes", 1, 1), AI("keepdims", 0)}, 1,
     {T(F, 2, D(2, 2), -1, 2, -3, 4)}, 1, {T(F, 1, D(2), 3, 7)}, GL_OK},
    {"rl1_int32", "ReduceL1", 13, {AI("keepdims", 0)}, 1, {T(I32, 1, D(2), -1, -2)}, 1,
     {T(I32, 0, D(0), 3)}, GL_OK},
    {"rl2", "ReduceL2", 13, {AINTS("axes", 1, -1), AI("keepdims", 0)}, 1,
     {T(F, 2, D(2, 2), 3, 4, 6, 8)}, 1, {T(F, 1, D(2), 5, 10)}, GL_OK},
    {"rsumsq", "ReduceSumSquare", 13, {AINTS("axes", 1, 0), AI("keepdims", 0)}, 1,
     {T(F, 2, D(2, 2), 1, 2, 3, 4)}, 1, {T(F, 1, D(2), 10, 20)}, GL_OK},
    {"rlogsum", "ReduceLogSum", 13, {AI("keepdims", 0)}, 1, {T(F, 2, D(2, 2), 1, 2, 3, 4)}, 1,
     {T(F, 0, D(0), 2.302585092994046)}, GL_OK},
    {"rlogsumexp_zeros", "ReduceLogSumExp", 13, {{0}}, 1, {T(F, 2, D(2, 2), 0, 0, 0, 0)}, 1,
     {T(F, 2, D(1, 1), 2 * LN2)}, GL_OK},
    /* exp(1000) overflows: the max is subtracted first */
    {"rlogsumexp_large", "ReduceLogSumExp", 13, {AI("keepdims", 0)}, 1,
     {T(F, 1, D(2), 1000, 1000)}, 1, {T(F, 0, D(0), 1000 + LN2)}, GL_OK},
    {"rlogsumexp_v18", "ReduceLogSumExp", 18, {AI("keepdims", 0)}, 2,
     {T(F64, 2, D(2, 2), 0, 1, 0, 1), T(I64, 1, D(1), 0)}, 1,
     {T(F64, 1, D(2), LN2, 1 + LN2)}, GL_OK},
    {"rl2_v18_noop", "ReduceL2", 18, {AI("noop_with_empty_axes", 1)}, 1,
     {T(F, 1, D(2), -3, 4)}, 1, {T(F, 1, D(2), -3, 4)}, GL_OK},
    /* before 18 axes is an attribute (absent: all) and noop_with_empty_axes does not
     * exist */
    {"rl2_v13_all", "ReduceL2", 13, {AI("noop_with_empty_axes", 1)}, 1,
     {T(F, 1, D(2), -3, 4)}, 1, {T(F, 1, D(1), 5)}, GL_OK},
};

Test(reduce, reduce_kernels)
{
    tu_run_kernel_cases(reduce_cases, GL_ARRAY_LEN(reduce_cases));
}

static const tu_scase reduce_shapes[] = {
    {"rs_shape_const_axes", "ReduceSum", 13, {AI("keepdims", 0)}, 2,
     {SY(F, 3, D(U, 3, 4), "N"), KC(1, D(1), 1)}, 1, {SY(F, 2, D(U, 4), "N")}, GL_OK},
    {"rs_shape_dyn_axes_keep", "ReduceSum", 13, {{0}}, 2,
     {SY(F, 3, D(U, 3, 4), "N"), S(I64, 1, D(1))}, 1, {S(F, 3, D(U, U, U))}, GL_OK},
    {"rs_shape_dyn_axes_nokeep", "ReduceSum", 13, {AI("keepdims", 0)}, 2,
     {S(F, 3, D(2, 3, 4)), S(I64, 1, D(1))}, 1, {S0(F, -1)}, GL_OK},
    {"rs_shape_noop", "ReduceSum", 13, {AI("noop_with_empty_axes", 1)}, 2,
     {SY(F, 3, D(U, 3, 4), "N"), KC(1, D(0), 0)}, 1, {SY(F, 3, D(U, 3, 4), "N")}, GL_OK},
    {"rs_shape_no_axes", "ReduceSum", 13, {{0}}, 1, {SY(F, 3, D(U, 3, 4), "N")}, 1,
     {S(F, 3, D(1, 1, 1))}, GL_OK},
    {"rmean_shape_attr", "ReduceMean", 13, {AINTS("axes", 1, -1)}, 1,
     {SY(F, 3, D(U, 3, 4), "N")}, 1, {SY(F, 3, D(U, 3, 1), "N")}, GL_OK},
    {"rmean_shape_v18", "ReduceMean", 18, {AI("keepdims", 0)}, 2,
     {SY(F16, 3, D(U, 3, 4), "N"), KC(1, D(1), 0)}, 1, {S(F16, 2, D(3, 4))}, GL_OK},
    {"rmax_shape_unknown_rank", "ReduceMax", 13, {AINTS("axes", 1, 0)}, 1, {S0(F, -1)}, 1,
     {S0(F, -1)}, GL_OK},
    {"rmax_shape_untyped", "ReduceMax", 13, {{0}}, 1, {NOTYPE}, 1, {NOTYPE}, GL_OK},
    {"rs_shape_bad_axis", "ReduceSum", 13, {{0}}, 2, {S(F, 3, D(1, 2, 3)), KC(1, D(1), 5)}, 1,
     {{0}}, GL_ERR_INPUT},
    {"rprod_shape_repeated", "ReduceProd", 13, {AINTS("axes", 2, 1, 1)}, 1,
     {S(F, 2, D(1, 2))}, 1, {{0}}, GL_ERR_INPUT},
};

Test(reduce, reduce_shapes)
{
    tu_run_shape_cases(reduce_shapes, GL_ARRAY_LEN(reduce_shapes));
}

/* ---- ArgMax / ArgMin -------------------------------------------------------------------- */

static const tu_kcase arg_cases[] = {
    {"am_axis0", "ArgMax", 13, {{0}}, 1, {T(F, 2, D(2, 2), 2, 1, 3, 10)}, 1,
     {T(I64, 2, D(1, 2), 1, 1)}, GL_OK},
    {"am_axis1_nokeep", "ArgMax", 13, {AI("axis", 1), AI("keepdims", 0)}, 1,
     {T(F, 2, D(2, 2), 2, 1, 3, 10)}, 1, {T(I64, 1, D(2), 0, 1)}, GL_OK},
    {"am_ties_first", "ArgMax", 13, {AI("axis", 1), AI("keepdims", 0)}, 1,
     {T(F, 2, D(2, 2), 2, 2, 3, 10)}, 1, {T(I64, 1, D(2), 0, 1)}, GL_OK},
    {"am_ties_last", "ArgMax", 13, {AI("axis", 1), AI("keepdims", 0),
     AI("select_last_index", 1)}, 1, {T(F, 2, D(2, 2), 2, 2, 3, 10)}, 1,
     {T(I64, 1, D(2), 1, 1)}, GL_OK},
    {"amin_negative_axis", "ArgMin", 13, {AI("axis", -1)}, 1,
     {T(F, 2, D(2, 2), 2, 1, 3, 10)}, 1, {T(I64, 2, D(2, 1), 1, 0)}, GL_OK},
    {"amin_ties_last", "ArgMin", 13, {AI("axis", 1), AI("keepdims", 0),
     AI("select_last_index", 1)}, 1, {T(F, 2, D(1, 4), 1, 1, 0, 0)}, 1,
     {T(I64, 1, D(1), 3)}, GL_OK},
    {"am_int64", "ArgMax", 13, {{0}}, 1, {T(I64, 1, D(3), 5, -1, 7)}, 1,
     {T(I64, 1, D(1), 2)}, GL_OK},
    {"am_3d_default", "ArgMax", 13, {{0}}, 1, {T(F64, 3, D(2, 1, 2), 1, 5, 4, 2)}, 1,
     {T(I64, 3, D(1, 1, 2), 1, 0)}, GL_OK},
    {"am_uint8", "ArgMin", 11, {AI("keepdims", 0)}, 1, {T(U8, 1, D(3), 9, 255, 0)}, 1,
     {T(I64, 0, D(0), 2)}, GL_OK},
    {"am_empty_huge", "ArgMax", 13, {{0}}, 1, {EMPTY(F, 2, D(BIG, 0))}, 1,
     {EMPTY(I64, 2, D(1, 0))}, GL_OK},
    {"am_bad_axis", "ArgMax", 13, {AI("axis", 2)}, 1, {T(F, 2, D(1, 1), 1)}, 1, {{0}},
     GL_ERR_INPUT},
    {"am_empty_axis", "ArgMax", 13, {{0}}, 1, {EMPTY(F, 2, D(0, 2))}, 1, {{0}},
     GL_ERR_INPUT},
};

Test(reduce, arg_kernels)
{
    tu_run_kernel_cases(arg_cases, GL_ARRAY_LEN(arg_cases));
}

/* ---- CumSum ------------------------------------------------------------------------------- */

#define V5 T(F64, 1, D(5), 1, 2, 3, 4, 5)

static const tu_kcase cumsum_cases[] = {
    {"cs_1d", "CumSum", 14, {{0}}, 2, {V5, T(I32, 0, D(0), 0)}, 1,
     {T(F64, 1, D(5), 1, 3, 6, 10, 15)}, GL_OK},
    {"cs_exclusive", "CumSum", 14, {AI("exclusive", 1)}, 2, {V5, T(I32, 0, D(0), 0)}, 1,
     {T(F64, 1, D(5), 0, 1, 3, 6, 10)}, GL_OK},
    {"cs_reverse", "CumSum", 14, {AI("reverse", 1)}, 2, {V5, T(I32, 0, D(0), 0)}, 1,
     {T(F64, 1, D(5), 15, 14, 12, 9, 5)}, GL_OK},
    {"cs_reverse_exclusive", "CumSum", 14, {AI("reverse", 1), AI("exclusive", 1)}, 2,
     {V5, T(I32, 0, D(0), 0)}, 1, {T(F64, 1, D(5), 14, 12, 9, 5, 0)}, GL_OK},
    {"cs_axis1", "CumSum", 14, {{0}}, 2, {T(F, 2, D(2, 3), 1, 2, 3, 4, 5, 6),
     T(I64, 0, D(0), 1)}, 1, {T(F, 2, D(2, 3), 1, 3, 6, 4, 9, 15)}, GL_OK},
    {"cs_negative_axis", "CumSum", 14, {{0}}, 2, {T(F, 2, D(2, 3), 1, 2, 3, 4, 5, 6),
     T(I64, 0, D(0), -2)}, 1, {T(F, 2, D(2, 3), 1, 2, 3, 5, 7, 9)}, GL_OK},
    {"cs_int32", "CumSum", 11, {{0}}, 2, {T(I32, 1, D(3), 1, -2, 3), T(I64, 1, D(1), 0)}, 1,
     {T(I32, 1, D(3), 1, -1, 2)}, GL_OK},
    {"cs_empty", "CumSum", 14, {{0}}, 2, {EMPTY(F, 2, D(2, 0)), T(I64, 0, D(0), 1)}, 1,
     {EMPTY(F, 2, D(2, 0))}, GL_OK},
    {"cs_empty_huge", "CumSum", 14, {{0}}, 2, {EMPTY(F, 2, D(BIG, 0)), T(I64, 0, D(0), 0)}, 1,
     {EMPTY(F, 2, D(BIG, 0))}, GL_OK},
    {"cs_float_axis", "CumSum", 14, {{0}}, 2, {V5, T(F, 0, D(0), 0)}, 1, {{0}}, GL_ERR_INPUT},
    {"cs_bad_axis", "CumSum", 14, {{0}}, 2, {V5, T(I64, 0, D(0), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"cs_two_axes", "CumSum", 14, {{0}}, 2, {V5, T(I64, 1, D(2), 0, 0)}, 1, {{0}},
     GL_ERR_INPUT},
};

Test(reduce, cumsum_kernels)
{
    tu_run_kernel_cases(cumsum_cases, GL_ARRAY_LEN(cumsum_cases));
}

/* ---- Softmax / LogSoftmax / Hardmax ----------------------------------------------------- */

#define Z122 T(F, 3, D(1, 2, 2), 0, 0, 0, 0)

static const tu_kcase softmax_cases[] = {
    /* e^1, e^2, e^3 over their sum 30.19287485 */
    {"sm_row", "Softmax", 13, {{0}}, 1, {T(F, 2, D(1, 3), 1, 2, 3)}, 1,
     {T(F, 2, D(1, 3), 0.09003057317, 0.2447284711, 0.6652409558)}, GL_OK},
    {"sm_large", "Softmax", 13, {{0}}, 1, {T(F, 2, D(1, 3), 1000, 1001, 1002)}, 1,
     {T(F, 2, D(1, 3), 0.09003057317, 0.2447284711, 0.6652409558)}, GL_OK},
    /* columns: [0, ln3] -> [1/4, 3/4], [0, 0] -> [1/2, 1/2] */
    {"sm_axis0", "Softmax", 13, {AI("axis", 0)}, 1, {T(F, 2, D(2, 2), 0, 0, LN3, 0)}, 1,
     {T(F, 2, D(2, 2), 0.25, 0.5, 0.75, 0.5)}, GL_OK},
    /* from 13 the default axis is -1: rows of 2 */
    {"sm_v13_default_axis", "Softmax", 13, {{0}}, 1, {Z122}, 1,
     {T(F, 3, D(1, 2, 2), 0.5, 0.5, 0.5, 0.5)}, GL_OK},
    {"sm_v13_axis1", "Softmax", 13, {AI("axis", 1)}, 1, {Z122}, 1,
     {T(F, 3, D(1, 2, 2), 0.5, 0.5, 0.5, 0.5)}, GL_OK},
    /* before 13 the input is flattened to 2-D at axis 1: one row of 4 */
    {"sm_v11_flatten", "Softmax", 11, {{0}}, 1, {Z122}, 1,
     {T(F, 3, D(1, 2, 2), 0.25, 0.25, 0.25, 0.25)}, GL_OK},
    /* the default axis before 13 is 1: rows [0, ln3] and [0, 0] (axis 0 would make one
     * row of 4) */
    {"sm_v11_default_axis", "Softmax", 11, {{0}}, 1, {T(F, 2, D(2, 2), 0, LN3, 0, 0)}, 1,
     {T(F, 2, D(2, 2), 0.25, 0.75, 0.5, 0.5)}, GL_OK},
    /* a negative axis counts from the end before 13 too */
    {"sm_v11_negative_axis", "Softmax", 11, {AI("axis", -1)}, 1,
     {T(F, 2, D(2, 2), 0, LN3, 0, 0)}, 1, {T(F, 2, D(2, 2), 0.25, 0.75, 0.5, 0.5)}, GL_OK},
    /* axis == rank: rows of one element */
    {"sm_v11_axis_rank", "Softmax", 11, {AI("axis", 2)}, 1, {T(F, 2, D(1, 2), 0, 5)}, 1,
     {T(F, 2, D(1, 2), 1, 1)}, GL_OK},
    {"sm_v11_axis_too_small", "Softmax", 11, {AI("axis", -3)}, 1, {T(F, 2, D(1, 2), 0, 5)},
     1, {{0}}, GL_ERR_INPUT},
    {"sm_v1_axis0", "Softmax", 1, {AI("axis", 0)}, 1, {T(F, 2, D(2, 1), 0, 0)}, 1,
     {T(F, 2, D(2, 1), 0.5, 0.5)}, GL_OK},
    {"sm_double", "Softmax", 13, {{0}}, 1, {T(F64, 1, D(2), 0, LN3)}, 1,
     {T(F64, 1, D(2), 0.25, 0.75)}, GL_OK},
    {"sm_float16", "Softmax", 13, {{0}}, 1, {T(F16, 1, D(2), 0, 0)}, 1,
     {T(F16, 1, D(2), 0.5, 0.5)}, GL_OK},
    {"sm_empty", "Softmax", 13, {{0}}, 1, {EMPTY(F, 2, D(0, 3))}, 1, {EMPTY(F, 2, D(0, 3))},
     GL_OK},
    {"lsm_row", "LogSoftmax", 13, {{0}}, 1, {T(F, 2, D(1, 3), 1, 2, 3)}, 1,
     {T(F, 2, D(1, 3), -2.407605964, -1.407605964, -0.4076059644)}, GL_OK},
    {"lsm_large", "LogSoftmax", 13, {{0}}, 1, {T(F, 2, D(1, 3), 1000, 1001, 1002)}, 1,
     {T(F, 2, D(1, 3), -2.407605964, -1.407605964, -0.4076059644)}, GL_OK},
    {"lsm_v11_flatten", "LogSoftmax", 11, {{0}}, 1, {Z122}, 1,
     {T(F, 3, D(1, 2, 2), -2 * LN2, -2 * LN2, -2 * LN2, -2 * LN2)}, GL_OK},
    /* ties: the first maximum wins */
    {"hm_rows", "Hardmax", 13, {{0}}, 1, {T(F, 2, D(2, 3), 1, 3, 3, 2, 0, 1)}, 1,
     {T(F, 2, D(2, 3), 0, 1, 0, 1, 0, 0)}, GL_OK},
    {"hm_axis0", "Hardmax", 13, {AI("axis", 0)}, 1, {T(F, 2, D(2, 2), 1, 3, 2, 0)}, 1,
     {T(F, 2, D(2, 2), 0, 1, 1, 0)}, GL_OK},
    {"hm_v13_rows", "Hardmax", 13, {{0}}, 1, {T(F, 3, D(1, 2, 2), 1, 4, 4, 2)}, 1,
     {T(F, 3, D(1, 2, 2), 0, 1, 1, 0)}, GL_OK},
    {"hm_v11_flatten", "Hardmax", 11, {{0}}, 1, {T(F, 3, D(1, 2, 2), 1, 4, 4, 2)}, 1,
     {T(F, 3, D(1, 2, 2), 0, 1, 0, 0)}, GL_OK},
    {"sm_empty_huge", "Softmax", 13, {{0}}, 1, {EMPTY(F, 3, D(BIG, BIG, 0))}, 1,
     {EMPTY(F, 3, D(BIG, BIG, 0))}, GL_OK},
    {"lsm_v11_empty_huge", "LogSoftmax", 11, {{0}}, 1, {EMPTY(F, 3, D(BIG, 0, BIG))}, 1,
     {EMPTY(F, 3, D(BIG, 0, BIG))}, GL_OK},
    {"sm_int", "Softmax", 13, {{0}}, 1, {T(I32, 1, D(2), 1, 2)}, 1, {{0}}, GL_ERR_INPUT},
    {"sm_bad_axis", "Softmax", 13, {AI("axis", 2)}, 1, {T(F, 2, D(1, 1), 1)}, 1, {{0}},
     GL_ERR_INPUT},
};

Test(reduce, softmax_kernels)
{
    tu_run_kernel_cases(softmax_cases, GL_ARRAY_LEN(softmax_cases));
}

/* ---- TopK ---------------------------------------------------------------------------------- */

#define X34 T(F, 2, D(3, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)

static const tu_kcase topk_cases[] = {
    {"tk_largest", "TopK", 11, {AI("axis", 1)}, 2, {X34, T(I64, 1, D(1), 3)}, 2,
     {T(F, 2, D(3, 3), 3, 2, 1, 7, 6, 5, 11, 10, 9), T(I64, 2, D(3, 3), 3, 2, 1, 3, 2, 1, 3,
     2, 1)}, GL_OK},
    {"tk_smallest", "TopK", 11, {AI("largest", 0)}, 2, {X34, T(I64, 1, D(1), 3)}, 2,
     {T(F, 2, D(3, 3), 0, 1, 2, 4, 5, 6, 8, 9, 10), T(I64, 2, D(3, 3), 0, 1, 2, 0, 1, 2, 0,
     1, 2)}, GL_OK},
    {"tk_ties", "TopK", 11, {{0}}, 2, {T(F, 2, D(1, 4), 1, 3, 3, 2), T(I64, 1, D(1), 2)}, 2,
     {T(F, 2, D(1, 2), 3, 3), T(I64, 2, D(1, 2), 1, 2)}, GL_OK},
    {"tk_ties_smallest", "TopK", 11, {AI("largest", 0)}, 2,
     {T(F, 2, D(1, 4), 2, 1, 1, 3), T(I64, 1, D(1), 2)}, 2,
     {T(F, 2, D(1, 2), 1, 1), T(I64, 2, D(1, 2), 1, 2)}, GL_OK},
    {"tk_axis0", "TopK", 11, {AI("axis", 0)}, 2, {T(F, 2, D(3, 2), 1, 6, 5, 2, 3, 4),
     T(I64, 1, D(1), 1)}, 2, {T(F, 2, D(1, 2), 5, 6), T(I64, 2, D(1, 2), 1, 0)}, GL_OK},
    {"tk_k0", "TopK", 11, {{0}}, 2, {T(F, 2, D(2, 2), 1, 2, 3, 4), T(I64, 1, D(1), 0)}, 2,
     {EMPTY(F, 2, D(2, 0)), EMPTY(I64, 2, D(2, 0))}, GL_OK},
    {"tk_v1_attr", "TopK", 1, {AI("k", 1)}, 1, {T(F, 1, D(4), 3, 1, 4, 1)}, 2,
     {T(F, 1, D(1), 4), T(I64, 1, D(1), 2)}, GL_OK},
    {"tk_v10_input", "TopK", 10, {{0}}, 2, {T(F, 1, D(4), 3, 1, 4, 1), T(I64, 1, D(1), 2)},
     2, {T(F, 1, D(2), 4, 3), T(I64, 1, D(2), 2, 0)}, GL_OK},
    {"tk_int64", "TopK", 11, {{0}}, 2, {T(I64, 1, D(3), 5, -7, 9), T(I64, 1, D(1), 2)}, 2,
     {T(I64, 1, D(2), 9, 5), T(I64, 1, D(2), 2, 0)}, GL_OK},
    {"tk_double_smallest", "TopK", 11, {AI("largest", 0)}, 2,
     {T(F64, 1, D(3), 0.5, -0.25, 2), T(I64, 1, D(1), 1)}, 2,
     {T(F64, 1, D(1), -0.25), T(I64, 1, D(1), 1)}, GL_OK},
    /* NaN sorts above every number */
    {"tk_nan", "TopK", 11, {{0}}, 2, {T(F, 1, D(3), 1, NAN, 2), T(I64, 1, D(1), 2)}, 2,
     {T(F, 1, D(2), NAN, 2), T(I64, 1, D(2), 1, 2)}, GL_OK},
    {"tk_empty_huge", "TopK", 11, {{0}}, 2, {EMPTY(F, 2, D(BIG, 0)), T(I64, 1, D(1), 0)}, 2,
     {EMPTY(F, 2, D(BIG, 0)), EMPTY(I64, 2, D(BIG, 0))}, GL_OK},
    {"tk_k_too_big", "TopK", 11, {{0}}, 2, {X34, T(I64, 1, D(1), 5)}, 2, {{0}},
     GL_ERR_INPUT},
    {"tk_k_negative", "TopK", 11, {{0}}, 2, {X34, T(I64, 1, D(1), -1)}, 2, {{0}},
     GL_ERR_INPUT},
    {"tk_k_two_values", "TopK", 11, {{0}}, 2, {X34, T(I64, 1, D(2), 1, 1)}, 2, {{0}},
     GL_ERR_INPUT},
};

Test(reduce, topk_kernels)
{
    tu_run_kernel_cases(topk_cases, GL_ARRAY_LEN(topk_cases));
}

/* Many equal values: the order among them is by index (a stable sort). */
Test(reduce, topk_stable_many_ties)
{
    enum { N = 1000, K = 700 };
    gl_model *m = tu_model(11);
    gl_value *vx = tu_input(m->graph, "x", F, 1, (int64_t[]){N});
    gl_value *vk = tu_input(m->graph, "k", I64, 1, (int64_t[]){1});
    gl_node *node = gl_add_node(m->graph, "TopK", "", "ties", (gl_value *[]){vx, vk}, 2, 2);
    gl_tensor *x = gl_tensor_new(F, 1, (int64_t[]){N});
    float *xd = gl_tensor_make_writable(x);
    for (int i = 0; i < N; i++)
        xd[i] = (float)(i % 3); /* 0,1,2,0,1,2,... */
    gl_tensor *k = tu_tensor_i64(1, (int64_t[]){1}, (int64_t[]){K});
    gl_tensor *out[2] = {0};
    cr_assert_eq(tu_run_kernel(m, node, (const gl_tensor *[]){x, k}, out), GL_OK, "%s",
                 gl_error_message());
    const int64_t *idx = gl_tensor_data(out[1]);
    /* 333 twos (indices 2,5,...,998), then 333 ones (1,4,...,997), then zeros 0,3,6,... */
    for (int j = 0; j < K; j++) {
        int64_t want = j < 333 ? 2 + 3 * j : j < 666 ? 1 + 3 * (j - 333) : 3 * (j - 666);
        cr_assert_eq(idx[j], want, "index %d is %lld, expected %lld", j, (long long)idx[j],
                     (long long)want);
    }
    gl_tensor_free(x);
    gl_tensor_free(k);
    gl_tensor_free(out[0]);
    gl_tensor_free(out[1]);
    gl_model_free(m);
}

static const tu_scase arg_topk_shapes[] = {
    {"am_shape", "ArgMax", 13, {AI("axis", 1), AI("keepdims", 0)}, 1,
     {SY(F, 2, D(U, 3), "N")}, 1, {SY(I64, 1, D(U), "N")}, GL_OK},
    {"am_shape_keep", "ArgMin", 13, {{0}}, 1, {SY(F, 2, D(U, 3), "N")}, 1,
     {S(I64, 2, D(1, 3))}, GL_OK},
    {"am_shape_bad_axis", "ArgMin", 13, {AI("axis", -3)}, 1, {S(F, 2, D(1, 3))}, 1, {{0}},
     GL_ERR_INPUT},
    {"tk_shape_const", "TopK", 11, {{0}}, 2, {SY(F, 2, D(U, 5), "N"), KC(1, D(1), 2)}, 2,
     {SY(F, 2, D(U, 2), "N"), SY(I64, 2, D(U, 2), "N")}, GL_OK},
    {"tk_shape_dynamic", "TopK", 11, {{0}}, 2, {SY(F, 2, D(U, 5), "N"), S(I64, 1, D(1))}, 2,
     {SY(F, 2, D(U, U), "N"), SY(I64, 2, D(U, U), "N")}, GL_OK},
    {"tk_shape_bad_k", "TopK", 11, {{0}}, 2, {S(F, 2, D(3, 5)), KC(1, D(1), 7)}, 2,
     {{0}}, GL_ERR_INPUT},
    {"tk_shape_v1", "TopK", 1, {AI("k", 3), AI("axis", 0)}, 1, {S(F, 2, D(4, 6))}, 2,
     {S(F, 2, D(3, 6)), S(I64, 2, D(3, 6))}, GL_OK},
    {"sm_shape", "Softmax", 13, {{0}}, 1, {SY(F, 2, D(U, 10), "N")}, 1,
     {SY(F, 2, D(U, 10), "N")}, GL_OK},
    {"sm_shape_bad_axis", "Softmax", 13, {AI("axis", 2)}, 1, {S(F, 2, D(2, 10))}, 1,
     {{0}}, GL_ERR_INPUT},
    /* flattening at axis == rank is allowed before 13 (one column) */
    {"lsm_shape_v11_axis_rank", "LogSoftmax", 11, {AI("axis", 2)}, 1, {S(F, 2, D(2, 10))}, 1,
     {S(F, 2, D(2, 10))}, GL_OK},
    {"cs_shape", "CumSum", 14, {{0}}, 2, {SY(F, 2, D(U, 3), "N"), S(I64, 0, D(0))}, 1,
     {SY(F, 2, D(U, 3), "N")}, GL_OK},
};

Test(reduce, arg_topk_softmax_shapes)
{
    tu_run_shape_cases(arg_topk_shapes, GL_ARRAY_LEN(arg_topk_shapes));
}

/* ---- losses ----------------------------------------------------------------------------- */

#define LP T(F, 2, D(2, 3), -1, -2, -3, -4, -5, -6)
#define TG T(I64, 1, D(2), 0, 2)

static const tu_kcase loss_cases[] = {
    {"nll_none", "NegativeLogLikelihoodLoss", 13, {AS("reduction", "none")}, 2, {LP, TG}, 1,
     {T(F, 1, D(2), 1, 6)}, GL_OK},
    {"nll_mean_default", "NegativeLogLikelihoodLoss", 13, {{0}}, 2, {LP, TG}, 1,
     {T(F, 0, D(0), 3.5)}, GL_OK},
    {"nll_sum", "NegativeLogLikelihoodLoss", 13, {AS("reduction", "sum")}, 2, {LP, TG}, 1,
     {T(F, 0, D(0), 7)}, GL_OK},
    /* weights 1 and 3 for classes 0 and 2: (1*1 + 6*3) / (1 + 3) */
    {"nll_weight_mean", "NegativeLogLikelihoodLoss", 13, {{0}}, 3,
     {LP, TG, T(F, 1, D(3), 1, 2, 3)}, 1, {T(F, 0, D(0), 4.75)}, GL_OK},
    {"nll_weight_none", "NegativeLogLikelihoodLoss", 13, {AS("reduction", "none")}, 3,
     {LP, TG, T(F, 1, D(3), 1, 2, 3)}, 1, {T(F, 1, D(2), 1, 18)}, GL_OK},
    {"nll_ignore_mean", "NegativeLogLikelihoodLoss", 13, {AI("ignore_index", 2)}, 2,
     {LP, TG}, 1, {T(F, 0, D(0), 1)}, GL_OK},
    {"nll_ignore_none", "NegativeLogLikelihoodLoss", 13,
     {AI("ignore_index", 2), AS("reduction", "none")}, 2, {LP, TG}, 1,
     {T(F, 1, D(2), 1, 0)}, GL_OK},
    {"nll_ignore_negative", "NegativeLogLikelihoodLoss", 13, {AI("ignore_index", -1)}, 3,
     {LP, T(I64, 1, D(2), -1, 2), T(F, 1, D(3), 1, 2, 3)}, 1, {T(F, 0, D(0), 6)}, GL_OK},
    /* [N=1, C=2, D=2]: class 1 at d0 (-2), class 0 at d1 (-3) */
    {"nll_spatial", "NegativeLogLikelihoodLoss", 13, {AS("reduction", "none")}, 2,
     {T(F, 3, D(1, 2, 2), -1, -3, -2, -4), T(I64, 2, D(1, 2), 1, 0)}, 1,
     {T(F, 2, D(1, 2), 2, 3)}, GL_OK},
    {"nll_spatial_mean", "NegativeLogLikelihoodLoss", 13, {{0}}, 2,
     {T(F, 3, D(1, 2, 2), -1, -3, -2, -4), T(I64, 2, D(1, 2), 1, 0)}, 1,
     {T(F, 0, D(0), 2.5)}, GL_OK},
    {"nll_double_int32_target", "NegativeLogLikelihoodLoss", 13, {AS("reduction", "sum")}, 2,
     {T(F64, 2, D(1, 2), -0.5, -0.25), T(I32, 1, D(1), 1)}, 1, {T(F64, 0, D(0), 0.25)},
     GL_OK},
    {"nll_empty_huge", "NegativeLogLikelihoodLoss", 13, {AS("reduction", "none")}, 2,
     {EMPTY(F, 3, D(BIG, 2, 0)), EMPTY(I64, 2, D(BIG, 0))}, 1, {EMPTY(F, 2, D(BIG, 0))},
     GL_OK},
    {"nll_target_out_of_range", "NegativeLogLikelihoodLoss", 13, {{0}}, 2,
     {LP, T(I64, 1, D(2), 0, 3)}, 1, {{0}}, GL_ERR_INPUT},
    {"nll_bad_target_shape", "NegativeLogLikelihoodLoss", 13, {{0}}, 2,
     {LP, T(I64, 1, D(3), 0, 0, 0)}, 1, {{0}}, GL_ERR_INPUT},
    {"nll_bad_weight", "NegativeLogLikelihoodLoss", 13, {{0}}, 3,
     {LP, TG, T(F, 1, D(2), 1, 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"nll_bad_reduction", "NegativeLogLikelihoodLoss", 13, {AS("reduction", "avg")}, 2,
     {LP, TG}, 1, {{0}}, GL_ERR_INPUT},
    {"sce_uniform", "SoftmaxCrossEntropyLoss", 13, {{0}}, 2,
     {T(F, 2, D(1, 3), 0, 0, 0), T(I64, 1, D(1), 1)}, 2,
     {T(F, 0, D(0), LN3), T(F, 2, D(1, 3), -LN3, -LN3, -LN3)}, GL_OK},
    {"sce_stable_none", "SoftmaxCrossEntropyLoss", 13, {AS("reduction", "none")}, 2,
     {T(F, 2, D(2, 2), 0, 0, 1000, 1000), T(I64, 1, D(2), 0, 1)}, 1,
     {T(F, 1, D(2), LN2, LN2)}, GL_OK},
    {"sce_weight_mean", "SoftmaxCrossEntropyLoss", 13, {{0}}, 3,
     {T(F, 2, D(2, 2), 0, 0, 0, 0), T(I64, 1, D(2), 0, 1), T(F, 1, D(2), 1, 3)}, 1,
     {T(F, 0, D(0), LN2)}, GL_OK},
    {"sce_ignore_sum", "SoftmaxCrossEntropyLoss", 13,
     {AI("ignore_index", 1), AS("reduction", "sum")}, 2,
     {T(F, 2, D(2, 2), 0, 0, 0, 0), T(I64, 1, D(2), 0, 1)}, 1, {T(F, 0, D(0), LN2)}, GL_OK},
    /* [N=1, C=2, D=2]: d0 scores (0, 0), d1 scores (0, ln3) -> p = (1/4, 3/4) */
    {"sce_spatial_log_prob", "SoftmaxCrossEntropyLoss", 13, {AS("reduction", "none")}, 2,
     {T(F, 3, D(1, 2, 2), 0, 0, 0, LN3), T(I64, 2, D(1, 2), 0, 1)}, 2,
     {T(F, 2, D(1, 2), LN2, 0.2876820725),
      T(F, 3, D(1, 2, 2), -LN2, -2 * LN2, -LN2, -0.2876820725)}, GL_OK},
    {"sce_rank1", "SoftmaxCrossEntropyLoss", 13, {{0}}, 2,
     {T(F, 1, D(2), 0, 0), T(I64, 1, D(1), 0)}, 1, {{0}}, GL_ERR_INPUT},
};

Test(reduce, loss_kernels)
{
    tu_run_kernel_cases(loss_cases, GL_ARRAY_LEN(loss_cases));
}

static const tu_scase loss_shapes[] = {
    {"nll_shape_none", "NegativeLogLikelihoodLoss", 13, {AS("reduction", "none")}, 2,
     {SY(F, 3, D(U, U, 4), "N", "C"), SY(I64, 2, D(U, 4), "N")}, 1,
     {SY(F, 2, D(U, 4), "N")}, GL_OK},
    {"nll_shape_mean", "NegativeLogLikelihoodLoss", 13, {{0}}, 2,
     {SY(F, 3, D(U, U, 4), "N", "C"), SY(I64, 2, D(U, 4), "N")}, 1, {S0(F, 0)}, GL_OK},
    {"sce_shape_log_prob", "SoftmaxCrossEntropyLoss", 13, {AS("reduction", "none")}, 2,
     {SY(F, 2, D(U, 5), "N"), SY(I64, 1, D(U), "N")}, 2,
     {SY(F, 1, D(U), "N"), SY(F, 2, D(U, 5), "N")}, GL_OK},
    {"nll_shape_rank1", "NegativeLogLikelihoodLoss", 13, {{0}}, 2,
     {S(F, 1, D(5)), S(I64, 0, D(0))}, 1, {{0}}, GL_ERR_INPUT},
    {"nll_shape_bad_reduction", "NegativeLogLikelihoodLoss", 13, {AS("reduction", "x")}, 2,
     {S(F, 2, D(2, 5)), S(I64, 1, D(2))}, 1, {{0}}, GL_ERR_INPUT},
};

Test(reduce, loss_shapes)
{
    tu_run_shape_cases(loss_shapes, GL_ARRAY_LEN(loss_shapes));
}

/* Which version reads axes where: the entries change at ReduceSum-13 and Reduce*-18. */
Test(reduce, registry_versions)
{
    static const struct {
        const char *op;
        int opset, since;
    } want[] = {
        {"ReduceSum", 12, 1}, {"ReduceSum", 13, 13}, {"ReduceMean", 17, 1},
        {"ReduceMean", 18, 18}, {"ReduceLogSumExp", 18, 18}, {"Softmax", 12, 1},
        {"Softmax", 13, 13}, {"Hardmax", 13, 13}, {"LogSoftmax", 11, 1}, {"TopK", 9, 1},
        {"TopK", 11, 10}, {"ArgMax", 13, 1}, {"CumSum", 14, 11},
        {"NegativeLogLikelihoodLoss", 13, 12}, {"SoftmaxCrossEntropyLoss", 13, 12},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(want); i++) {
        const gl_op_def *d = gl_op_lookup("", want[i].op, want[i].opset);
        cr_assert(d, "%s-%d not found", want[i].op, want[i].opset);
        cr_expect_eq(d->since, want[i].since, "%s at opset %d: entry since %d, expected %d",
                     want[i].op, want[i].opset, d->since, want[i].since);
    }
}

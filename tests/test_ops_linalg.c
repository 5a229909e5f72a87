/* test_ops_linalg.c — MatMul, graphlab FusedMatMul, Gemm, Einsum, quantization,
 * ConvInteger/QLinearConv, Det.
 *
 * Table-driven: each kernel case lists its inputs and the expected outputs, worked out
 * by hand from the ONNX definitions (comments show the arithmetic where it is not
 * obvious); each shape case lists input types (symbolic dims by name) and the expected
 * output types. */
#include "ops/ops.h"

#define TU_CASE_SHORTHANDS /* T(), D(), AI(), F, ...: see testutil.h */
#include "testutil.h"

#include <criterion/criterion.h>

/* ---- MatMul ------------------------------------------------------------------------- */

static const tu_kcase matmul_cases[] = {
    /* [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] */
    {"mm_2d", "MatMul", 13, {{0}}, 2,
     {T(F, 2, D(2, 3), 1, 2, 3, 4, 5, 6), T(F, 2, D(3, 2), 7, 8, 9, 10, 11, 12)}, 1,
     {T(F, 2, D(2, 2), 58, 64, 139, 154)}, GL_OK},
    {"mm_vec_vec", "MatMul", 13, {{0}}, 2,
     {T(F, 1, D(3), 1, 2, 3), T(F, 1, D(3), 4, 5, 6)}, 1, {T(F, 0, D(0), 32)}, GL_OK},
    {"mm_vec_mat", "MatMul", 13, {{0}}, 2,
     {T(F, 1, D(2), 1, 2), T(F, 2, D(2, 3), 1, 2, 3, 4, 5, 6)}, 1,
     {T(F, 1, D(3), 9, 12, 15)}, GL_OK},
    {"mm_mat_vec", "MatMul", 13, {{0}}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 1, D(2), 1, 1)}, 1, {T(F, 1, D(2), 3, 7)}, GL_OK},
    /* A: two 1x2 rows a0=[1,2], a1=[3,4]; B: three 2x1 columns [1,0],[0,1],[1,1]:
     * batch dims [2,1] and [3] broadcast to [2,3]; out[i,j] = a_i . b_j */
    {"mm_batch_broadcast", "MatMul", 13, {{0}}, 2,
     {T(F, 4, D(2, 1, 1, 2), 1, 2, 3, 4), T(F, 3, D(3, 2, 1), 1, 0, 0, 1, 1, 1)}, 1,
     {T(F, 4, D(2, 3, 1, 1), 1, 2, 3, 3, 4, 7)}, GL_OK},
    {"mm_batch_vec", "MatMul", 13, {{0}}, 2,
     {T(F, 3, D(2, 1, 2), 1, 2, 3, 4), T(F, 1, D(2), 1, 10)}, 1,
     {T(F, 2, D(2, 1), 21, 43)}, GL_OK},
    {"mm_int32", "MatMul", 13, {{0}}, 2,
     {T(I32, 2, D(2, 2), 1, 2, 3, 4), T(I32, 2, D(2, 2), 5, 6, 7, 8)}, 1,
     {T(I32, 2, D(2, 2), 19, 22, 43, 50)}, GL_OK},
    {"mm_int64_negative", "MatMul", 13, {{0}}, 2,
     {T(I64, 2, D(1, 2), -3, 4), T(I64, 2, D(2, 1), 5, -6)}, 1,
     {T(I64, 2, D(1, 1), -39)}, GL_OK},
    {"mm_double", "MatMul", 13, {{0}}, 2,
     {T(F64, 2, D(1, 2), 0.5, 0.25), T(F64, 2, D(2, 1), 4, 8)}, 1,
     {T(F64, 2, D(1, 1), 4)}, GL_OK},
    {"mm_float16", "MatMul", 13, {{0}}, 2,
     {T(F16, 2, D(2, 2), 1, 2, 3, 4), T(F16, 2, D(2, 2), 5, 6, 7, 8)}, 1,
     {T(F16, 2, D(2, 2), 19, 22, 43, 50)}, GL_OK},
    {"mm_empty_rows", "MatMul", 13, {{0}}, 2,
     {EMPTY(F, 2, D(0, 3)), T(F, 2, D(3, 2), 1, 2, 3, 4, 5, 6)}, 1,
     {EMPTY(F, 2, D(0, 2))}, GL_OK},
    {"mm_empty_inner", "MatMul", 13, {{0}}, 2, {EMPTY(F, 2, D(2, 0)), EMPTY(F, 2, D(0, 3))},
     1, {T(F, 2, D(2, 3), 0, 0, 0, 0, 0, 0)}, GL_OK},
    {"mm_empty_huge_batch", "MatMul", 13, {{0}}, 2,
     {EMPTY(F, 3, D(BIG, 0, 2)), T(F, 2, D(2, 1), 1, 1)}, 1, {EMPTY(F, 3, D(BIG, 0, 1))},
     GL_OK},
    {"mm_inner_mismatch", "MatMul", 13, {{0}}, 2,
     {T(F, 2, D(2, 3), 1, 2, 3, 4, 5, 6), T(F, 2, D(2, 2), 1, 2, 3, 4)}, 1, {{0}},
     GL_ERR_INPUT},
    {"mm_batch_mismatch", "MatMul", 13, {{0}}, 2,
     {T(F, 3, D(2, 1, 1), 1, 2), T(F, 3, D(3, 1, 1), 1, 2, 3)}, 1, {{0}}, GL_ERR_INPUT},
    {"mm_scalar", "MatMul", 13, {{0}}, 2, {T(F, 0, D(0), 2), T(F, 1, D(1), 3)}, 1, {{0}},
     GL_ERR_INPUT},
    /* the product of two empty vectors is a scalar: strings must be refused first */
    {"mm_strings", "MatMul", 13, {{0}}, 2,
     {EMPTY(GL_DT_STRING, 1, D(0)), EMPTY(GL_DT_STRING, 1, D(0))}, 1, {{0}}, GL_ERR_INPUT},
    {"mm_type_mismatch", "MatMul", 13, {{0}}, 2, {T(F, 1, D(1), 2), T(F64, 1, D(1), 3)}, 1,
     {{0}}, GL_ERR_INPUT},
};

Test(linalg, matmul_kernels)
{
    tu_run_kernel_cases(matmul_cases, GL_ARRAY_LEN(matmul_cases));
}

/* Sizes that cross the cache blocks (k > 64, n > 256) and a batch: A[i,p] = i + 1,
 * B[p,j] = j - 3, so C[i,j] = K * (i + 1) * (j - 3) exactly. */
Test(linalg, matmul_blocked_large)
{
    const int64_t batch = 2, mm = 5, kk = 131, nn = 300;
    gl_model *m = tu_model(13);
    gl_value *va = tu_input(m->graph, "a", F, 3, (int64_t[]){batch, mm, kk});
    gl_value *vb = tu_input(m->graph, "b", F, 2, (int64_t[]){kk, nn});
    gl_node *node = tu_node(m->graph, "MatMul", "big", 2, va, vb);
    gl_tensor *a = gl_tensor_new(F, 3, (int64_t[]){batch, mm, kk});
    gl_tensor *b = gl_tensor_new(F, 2, (int64_t[]){kk, nn});
    float *ad = gl_tensor_make_writable(a), *bd = gl_tensor_make_writable(b);
    for (int64_t i = 0; i < a->count; i++)
        ad[i] = (float)((i / kk) % mm + 1);
    for (int64_t i = 0; i < b->count; i++)
        bd[i] = (float)(i % nn - 3);
    gl_tensor *out[1] = {NULL};
    const gl_tensor *in[2] = {a, b};
    cr_assert_eq(tu_run_kernel(m, node, in, out), GL_OK, "%s", gl_error_message());
    cr_assert_eq(out[0]->rank, 3);
    cr_assert_eq(out[0]->dims[2], nn);
    const float *y = gl_tensor_data(out[0]);
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t i = 0; i < mm; i++)
            for (int64_t j = 0; j < nn; j++) {
                float want = (float)(kk * (i + 1) * (j - 3));
                cr_assert_eq(y[(bi * mm + i) * nn + j], want, "y[%lld,%lld,%lld] = %g, want %g",
                             (long long)bi, (long long)i, (long long)j,
                             y[(bi * mm + i) * nn + j], want);
            }
    gl_tensor_free(a);
    gl_tensor_free(b);
    gl_tensor_free(out[0]);
    gl_model_free(m);
}

static const tu_scase matmul_shapes[] = {
    {"mm_sym_batch", "MatMul", 13, {{0}}, 2,
     {SY(F, 3, D(U, 3, 4), "N"), S(F, 2, D(4, 5))}, 1, {SY(F, 3, D(U, 3, 5), "N")}, GL_OK},
    {"mm_bcast_batch", "MatMul", 13, {{0}}, 2,
     {S(F, 4, D(2, 1, 3, 4)), S(F, 3, D(5, 4, 6))}, 1, {S(F, 4, D(2, 5, 3, 6))}, GL_OK},
    {"mm_sym_mn", "MatMul", 13, {{0}}, 2,
     {SY(F, 2, D(U, U), "M", "K"), SY(F, 2, D(U, U), "K", "N")}, 1,
     {SY(F, 2, D(U, U), "M", "N")}, GL_OK},
    {"mm_vectors", "MatMul", 13, {{0}}, 2, {S(F, 1, D(3)), S(F, 1, D(3))}, 1,
     {S(F, 0, D(0))}, GL_OK},
    {"mm_vec_right", "MatMul", 13, {{0}}, 2, {S(F, 3, D(2, 3, 4)), S(F, 1, D(4))}, 1,
     {S(F, 2, D(2, 3))}, GL_OK},
    {"mm_unknown_rank", "MatMul", 13, {{0}}, 2, {S0(F, -1), S(F, 2, D(4, 5))}, 1,
     {S0(F, -1)}, GL_OK},
    {"mm_untyped", "MatMul", 13, {{0}}, 2, {NOTYPE, S(F, 2, D(4, 5))}, 1, {NOTYPE}, GL_OK},
    {"mm_bad_inner", "MatMul", 13, {{0}}, 2, {S(F, 2, D(2, 3)), S(F, 2, D(4, 5))}, 1,
     {{0}}, GL_ERR_INPUT},
    {"mm_bad_batch", "MatMul", 13, {{0}}, 2, {S(F, 3, D(2, 2, 3)), S(F, 3, D(3, 3, 5))}, 1,
     {{0}}, GL_ERR_INPUT},
    {"mmi_shape", "MatMulInteger", 10, {{0}}, 2, {SY(U8, 2, D(U, 4), "N"), S(U8, 2, D(4, 3))},
     1, {SY(I32, 2, D(U, 3), "N")}, GL_OK},
    {"qlmm_shape", "QLinearMatMul", 10, {{0}}, 8,
     {S(I8, 3, D(2, 2, 4)), S0(F, 0), S0(I8, 0), S(I8, 2, D(4, 3)), S0(F, 0), S0(I8, 0), S0(F, 0),
      S0(I8, 0)},
     1, {S(I8, 3, D(2, 2, 3))}, GL_OK},
};

Test(linalg, matmul_shapes)
{
    tu_run_shape_cases(matmul_shapes, GL_ARRAY_LEN(matmul_shapes));
}

/* ---- graphlab FusedMatMul: MatMul of operands with their last two dims swapped ---------- */

static const tu_kcase kernel_cases[] = {
    /* A' = [[1,2],[3,4]] stored transposed; B = [[5,6],[7,8]] */
    {"fmm_transA", "graphlab.FusedMatMul", 13, {AI("transA", 1)}, 2,
     {T(F, 2, D(2, 2), 1, 3, 2, 4), T(F, 2, D(2, 2), 5, 6, 7, 8)}, 1,
     {T(F, 2, D(2, 2), 19, 22, 43, 50)}, GL_OK},
    {"fmm_transB_alpha", "graphlab.FusedMatMul", 13, {AI("transB", 1), AF("alpha", 0.5f)}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 2, D(2, 2), 5, 7, 6, 8)}, 1,
     {T(F, 2, D(2, 2), 9.5, 11, 21.5, 25)}, GL_OK},
    /* two batches of [1,2]' x [1,1]: A stored [2,2,1] */
    {"fmm_batch_both", "graphlab.FusedMatMul", 13, {AI("transA", 1), AI("transB", 1)}, 2,
     {T(F, 3, D(2, 2, 1), 1, 2, 3, 4), T(F, 3, D(2, 1, 2), 1, 1, 2, 0)}, 1,
     {T(F, 3, D(2, 1, 1), 3, 6)}, GL_OK},
    /* B [3,2] transposed is [2,3], broadcast over A's batch of 2 */
    {"fmm_broadcast_B", "graphlab.FusedMatMul", 13, {AI("transB", 1)}, 2,
     {T(F, 3, D(2, 1, 2), 1, 0, 0, 1), T(F, 2, D(3, 2), 1, 2, 3, 4, 5, 6)}, 1,
     {T(F, 3, D(2, 1, 3), 1, 3, 5, 2, 4, 6)}, GL_OK},
    {"fmm_double", "graphlab.FusedMatMul", 13, {AI("transA", 1)}, 2,
     {T(F64, 2, D(2, 1), 0.5, 0.25), T(F64, 2, D(2, 1), 4, 8)}, 1,
     {T(F64, 2, D(1, 1), 4)}, GL_OK},
    {"fmm_float16", "graphlab.FusedMatMul", 13, {AI("transB", 1)}, 2,
     {T(F16, 2, D(1, 2), 1, 2), T(F16, 2, D(1, 2), 3, 4)}, 1, {T(F16, 2, D(1, 1), 11)},
     GL_OK},
    {"fmm_no_trans", "graphlab.FusedMatMul", 13, {{0}}, 2,
     {T(F, 1, D(2), 1, 2), T(F, 1, D(2), 3, 4)}, 1, {T(F, 0, D(0), 11)}, GL_OK},
    {"fmm_empty", "graphlab.FusedMatMul", 13, {AI("transA", 1)}, 2,
     {EMPTY(F, 2, D(3, 0)), T(F, 2, D(3, 1), 1, 2, 3)}, 1, {EMPTY(F, 2, D(0, 1))}, GL_OK},
    {"fmm_trans_rank1", "graphlab.FusedMatMul", 13, {AI("transA", 1)}, 2,
     {T(F, 1, D(2), 1, 2), T(F, 2, D(2, 1), 3, 4)}, 1, {{0}}, GL_ERR_INPUT},
    {"fmm_inner_mismatch", "graphlab.FusedMatMul", 13, {AI("transB", 1)}, 2,
     {T(F, 2, D(1, 2), 1, 2), T(F, 2, D(2, 1), 3, 4)}, 1, {{0}}, GL_ERR_INPUT},
    {"fmm_strings", "graphlab.FusedMatMul", 13, {AI("transA", 1)}, 2,
     {EMPTY(GL_DT_STRING, 2, D(0, 1)), EMPTY(GL_DT_STRING, 2, D(0, 1))}, 1, {{0}},
     GL_ERR_INPUT},
};

Test(linalg, fused_matmul_kernels)
{
    tu_run_kernel_cases(kernel_cases, GL_ARRAY_LEN(kernel_cases));
}

static const tu_scase shape_cases[] = {
    {"fmm_shape_transA", "graphlab.FusedMatMul", 13, {AI("transA", 1)}, 2,
     {SY(F, 3, D(U, 4, 3), "N"), S(F, 2, D(4, 5))}, 1, {SY(F, 3, D(U, 3, 5), "N")}, GL_OK},
    {"fmm_shape_transB_bcast", "graphlab.FusedMatMul", 13, {AI("transB", 1)}, 2,
     {S(F, 4, D(2, 1, 3, 4)), S(F, 3, D(5, 6, 4))}, 1, {S(F, 4, D(2, 5, 3, 6))}, GL_OK},
    {"fmm_shape_sym", "graphlab.FusedMatMul", 13, {AI("transA", 1), AI("transB", 1)}, 2,
     {SY(F, 2, D(U, U), "K", "M"), SY(F, 2, D(U, U), "N", "K")}, 1,
     {SY(F, 2, D(U, U), "M", "N")}, GL_OK},
    {"fmm_shape_unknown_rank", "graphlab.FusedMatMul", 13, {AI("transA", 1)}, 2,
     {S0(F, -1), S(F, 2, D(4, 5))}, 1, {S0(F, -1)}, GL_OK},
    {"fmm_shape_rank1", "graphlab.FusedMatMul", 13, {AI("transB", 1)}, 2,
     {S(F, 2, D(2, 3)), S(F, 1, D(3))}, 1, {{0}}, GL_ERR_INPUT},
    {"fmm_shape_bad_inner", "graphlab.FusedMatMul", 13, {AI("transA", 1)}, 2,
     {S(F, 2, D(2, 3)), S(F, 2, D(3, 5))}, 1, {{0}}, GL_ERR_INPUT},
    {"fmm_shape_types_differ", "graphlab.FusedMatMul", 13, {{0}}, 2,
     {S(F, 2, D(2, 3)), S(F64, 2, D(3, 5))}, 1, {{0}}, GL_ERR_INPUT},
};

Test(linalg, fused_matmul_shapes)
{
    tu_run_shape_cases(shape_cases, GL_ARRAY_LEN(shape_cases));
}

/* ---- Gemm ----------------------------------------------------------------------------- */

static const tu_kcase gemm_cases[] = {
    {"gemm_no_c", "Gemm", 13, {{0}}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 2, D(2, 2), 5, 6, 7, 8)}, 1,
     {T(F, 2, D(2, 2), 19, 22, 43, 50)}, GL_OK},
    /* A' = [[1,2],[3,4]] stored transposed, B' = [[5,6],[7,8]] stored transposed:
     * 0.5 * [[19,22],[43,50]] + 2 * [1,2] */
    {"gemm_trans_alpha_beta", "Gemm", 13,
     {AI("transA", 1), AI("transB", 1), AF("alpha", 0.5f), AF("beta", 2.0f)}, 3,
     {T(F, 2, D(2, 2), 1, 3, 2, 4), T(F, 2, D(2, 2), 5, 7, 6, 8), T(F, 1, D(2), 1, 2)}, 1,
     {T(F, 2, D(2, 2), 11.5, 15, 23.5, 29)}, GL_OK},
    {"gemm_scalar_c", "Gemm", 13, {{0}}, 3,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 2, D(2, 2), 5, 6, 7, 8), T(F, 0, D(0), 10)}, 1,
     {T(F, 2, D(2, 2), 29, 32, 53, 60)}, GL_OK},
    {"gemm_column_c", "Gemm", 13, {{0}}, 3,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 2, D(2, 2), 5, 6, 7, 8), T(F, 2, D(2, 1), 1, 100)},
     1, {T(F, 2, D(2, 2), 20, 23, 143, 150)}, GL_OK},
    {"gemm_matrix_c", "Gemm", 11, {{0}}, 3,
     {T(F, 2, D(1, 3), 1, 2, 3), T(F, 2, D(3, 2), 1, 0, 0, 1, 1, 1), T(F, 2, D(1, 2), -4, -5)},
     1, {T(F, 2, D(1, 2), 0, 0)}, GL_OK},
    {"gemm_double", "Gemm", 13, {AF("alpha", 2.0f)}, 2,
     {T(F64, 2, D(1, 2), 0.25, 0.5), T(F64, 2, D(2, 1), 2, 4)}, 1, {T(F64, 2, D(1, 1), 5)},
     GL_OK},
    {"gemm_int32", "Gemm", 13, {{0}}, 3,
     {T(I32, 2, D(1, 2), 3, -2), T(I32, 2, D(2, 1), 4, 5), T(I32, 1, D(1), 7)}, 1,
     {T(I32, 2, D(1, 1), 9)}, GL_OK},
    {"gemm_float16", "Gemm", 13, {AI("transB", 1)}, 2,
     {T(F16, 2, D(1, 2), 1, 2), T(F16, 2, D(1, 2), 3, 4)}, 1, {T(F16, 2, D(1, 1), 11)},
     GL_OK},
    {"gemm_c_required_v9", "Gemm", 9, {{0}}, 2,
     {T(F, 2, D(1, 1), 1), T(F, 2, D(1, 1), 2)}, 1, {{0}}, GL_ERR_INPUT},
    {"gemm_bad_c", "Gemm", 13, {{0}}, 3,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 2, D(2, 2), 5, 6, 7, 8), T(F, 1, D(3), 1, 2, 3)},
     1, {{0}}, GL_ERR_INPUT},
    {"gemm_rank3", "Gemm", 13, {{0}}, 2,
     {T(F, 3, D(1, 1, 1), 1), T(F, 2, D(1, 1), 2)}, 1, {{0}}, GL_ERR_INPUT},
    /* K = 0 (issue 26): A' x B' is a matrix of zeros, Y = beta * C broadcast; the empty
     * operands have no data pointer (this was a false "out of memory"). */
    {"gemm_empty_inner", "Gemm", 13, {AF("alpha", 2.0f), AF("beta", 0.5f)}, 3,
     {EMPTY(F, 2, D(2, 0)), EMPTY(F, 2, D(0, 3)), T(F, 1, D(3), 1, -2, 3)}, 1,
     {T(F, 2, D(2, 3), 0.5, -1, 1.5, 0.5, -1, 1.5)}, GL_OK},
    {"gemm_empty_inner_trans", "Gemm", 13, {AI("transA", 1), AI("transB", 1)}, 3,
     {EMPTY(F, 2, D(0, 2)), EMPTY(F, 2, D(3, 0)), T(F, 2, D(2, 1), 4, 5)}, 1,
     {T(F, 2, D(2, 3), 4, 4, 4, 5, 5, 5)}, GL_OK},
    {"gemm_empty_inner_no_c", "Gemm", 13, {{0}}, 2,
     {EMPTY(F, 2, D(1, 0)), EMPTY(F, 2, D(0, 2))}, 1, {T(F, 2, D(1, 2), 0, 0)}, GL_OK},
    {"gemm_empty_inner_double", "Gemm", 13, {AF("beta", 2.0f)}, 3,
     {EMPTY(F64, 2, D(1, 0)), EMPTY(F64, 2, D(0, 2)), T(F64, 0, D(0), 1.5)}, 1,
     {T(F64, 2, D(1, 2), 3, 3)}, GL_OK},
    {"gemm_empty_inner_float16", "Gemm", 13, {{0}}, 3,
     {EMPTY(F16, 2, D(1, 0)), EMPTY(F16, 2, D(0, 2)), T(F16, 1, D(2), 1, 2)}, 1,
     {T(F16, 2, D(1, 2), 1, 2)}, GL_OK},
    {"gemm_empty_inner_int32", "Gemm", 13, {{0}}, 3,
     {EMPTY(I32, 2, D(1, 0)), EMPTY(I32, 2, D(0, 2)), T(I32, 1, D(2), 7, -7)}, 1,
     {T(I32, 2, D(1, 2), 7, -7)}, GL_OK},
    {"gemm_inner_mismatch", "Gemm", 13, {AI("transA", 1)}, 2,
     {T(F, 2, D(1, 2), 1, 2), T(F, 2, D(2, 1), 2, 3)}, 1, {{0}}, GL_ERR_INPUT},
};

Test(linalg, gemm_kernels)
{
    tu_run_kernel_cases(gemm_cases, GL_ARRAY_LEN(gemm_cases));
}

static const tu_scase gemm_shapes[] = {
    {"gemm_shape_trans", "Gemm", 13, {AI("transA", 1)}, 2,
     {SY(F, 2, D(4, U), NULL, "M"), S(F, 2, D(4, 5))}, 1, {SY(F, 2, D(U, 5), "M")}, GL_OK},
    {"gemm_shape_c", "Gemm", 9, {AI("transB", 1)}, 3,
     {S(F, 2, D(3, 4)), SY(F, 2, D(U, 4), "N"), S(F, 1, D(1))}, 1,
     {SY(F, 2, D(3, U), NULL, "N")}, GL_OK},
    {"gemm_shape_bad_c", "Gemm", 13, {{0}}, 3, {S(F, 2, D(3, 4)), S(F, 2, D(4, 5)),
     S(F, 1, D(3))}, 1, {{0}}, GL_ERR_INPUT},
    {"gemm_shape_no_c_v7", "Gemm", 7, {{0}}, 2, {S(F, 2, D(3, 4)), S(F, 2, D(4, 5))}, 1,
     {{0}}, GL_ERR_INPUT},
    {"gemm_shape_rank1", "Gemm", 13, {{0}}, 2, {S(F, 1, D(4)), S(F, 2, D(4, 5))}, 1, {{0}},
     GL_ERR_INPUT},
    {"gemm_shape_unknown", "Gemm", 13, {{0}}, 2, {S0(F, -1), S(F, 2, D(4, 5))}, 1,
     {S(F, 2, D(U, 5))}, GL_OK},
};

Test(linalg, gemm_shapes)
{
    tu_run_shape_cases(gemm_shapes, GL_ARRAY_LEN(gemm_shapes));
}

/* ---- Einsum ----------------------------------------------------------------------------- */

static const tu_kcase einsum_cases[] = {
    {"ein_transpose", "Einsum", 12, {AS("equation", "ij->ji")}, 1,
     {T(F, 2, D(2, 3), 1, 2, 3, 4, 5, 6)}, 1, {T(F, 2, D(3, 2), 1, 4, 2, 5, 3, 6)}, GL_OK},
    {"ein_diagonal", "Einsum", 12, {AS("equation", "ii->i")}, 1,
     {T(F, 2, D(2, 2), 1, 2, 3, 4)}, 1, {T(F, 1, D(2), 1, 4)}, GL_OK},
    {"ein_trace_implicit", "Einsum", 12, {AS("equation", "ii")}, 1,
     {T(F, 2, D(2, 2), 1, 2, 3, 4)}, 1, {T(F, 0, D(0), 5)}, GL_OK},
    {"ein_matmul_implicit", "Einsum", 12, {AS("equation", "ij,jk")}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 2, D(2, 2), 5, 6, 7, 8)}, 1,
     {T(F, 2, D(2, 2), 19, 22, 43, 50)}, GL_OK},
    {"ein_batch_diagonal", "Einsum", 12, {AS("equation", "...ii ->...i")}, 1,
     {T(F64, 3, D(2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8)}, 1, {T(F64, 2, D(2, 2), 1, 4, 5, 8)},
     GL_OK},
    {"ein_inner", "Einsum", 12, {AS("equation", "i,i")}, 2,
     {T(F64, 1, D(3), 1, 2, 3), T(F64, 1, D(3), 4, 5, 6)}, 1, {T(F64, 0, D(0), 32)}, GL_OK},
    {"ein_outer", "Einsum", 12, {AS("equation", "i,j->ij")}, 2,
     {T(F, 1, D(2), 1, 2), T(F, 1, D(3), 3, 4, 5)}, 1,
     {T(F, 2, D(2, 3), 3, 4, 5, 6, 8, 10)}, GL_OK},
    /* implicit output sorts the labels: "ba" -> "ab", a transpose */
    {"ein_implicit_sorted", "Einsum", 12, {AS("equation", "ba")}, 1,
     {T(F, 2, D(2, 3), 1, 2, 3, 4, 5, 6)}, 1, {T(F, 2, D(3, 2), 1, 4, 2, 5, 3, 6)}, GL_OK},
    /* upper case sorts before lower case: "bA" -> "Ab" */
    {"ein_implicit_upper", "Einsum", 12, {AS("equation", "bA")}, 1,
     {T(F, 2, D(2, 3), 1, 2, 3, 4, 5, 6)}, 1, {T(F, 2, D(3, 2), 1, 4, 2, 5, 3, 6)}, GL_OK},
    /* the ellipsis dims broadcast: [2] against [1] */
    {"ein_ellipsis_broadcast", "Einsum", 12, {AS("equation", "...i,...i->...")}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 2, D(1, 2), 1, 1)}, 1, {T(F, 1, D(2), 3, 7)}, GL_OK},
    {"ein_batch_matmul", "Einsum", 12, {AS("equation", "bij,bjk->bik")}, 2,
     {T(F, 3, D(2, 1, 2), 1, 2, 3, 4), T(F, 3, D(2, 2, 1), 1, 1, 2, -1)}, 1,
     {T(F, 3, D(2, 1, 1), 3, 2)}, GL_OK},
    {"ein_sum_int64", "Einsum", 12, {AS("equation", "ij->")}, 1,
     {T(I64, 2, D(2, 2), 1, 2, 3, -4)}, 1, {T(I64, 0, D(0), 2)}, GL_OK},
    {"ein_terms_mismatch", "Einsum", 12, {AS("equation", "ij,jk->ik")}, 1,
     {T(F, 2, D(1, 1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"ein_output_unknown_label", "Einsum", 12, {AS("equation", "i->j")}, 1,
     {T(F, 1, D(1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"ein_rank_mismatch", "Einsum", 12, {AS("equation", "ij->i")}, 1,
     {T(F, 3, D(1, 1, 1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"ein_size_mismatch", "Einsum", 12, {AS("equation", "ij,jk->ik")}, 2,
     {T(F, 2, D(1, 2), 1, 2), T(F, 2, D(3, 1), 1, 2, 3)}, 1, {{0}}, GL_ERR_INPUT},
    {"ein_bad_char", "Einsum", 12, {AS("equation", "i1->i")}, 1, {T(F, 1, D(1), 1)}, 1,
     {{0}}, GL_ERR_INPUT},
    {"ein_two_ellipses", "Einsum", 12, {AS("equation", "...i...->i")}, 1,
     {T(F, 1, D(1), 1)}, 1, {{0}}, GL_ERR_INPUT},
};

Test(linalg, einsum_kernels)
{
    tu_run_kernel_cases(einsum_cases, GL_ARRAY_LEN(einsum_cases));
}

static const tu_scase einsum_shapes[] = {
    {"ein_shape_bmm", "Einsum", 12, {AS("equation", "bij,bjk->bik")}, 2,
     {SY(F, 3, D(U, 2, 3), "B"), SY(F, 3, D(U, 3, 4), "B")}, 1,
     {SY(F, 3, D(U, 2, 4), "B")}, GL_OK},
    {"ein_shape_diag", "Einsum", 12, {AS("equation", "...ii->...i")}, 1,
     {S(F64, 3, D(3, 5, 5))}, 1, {S(F64, 2, D(3, 5))}, GL_OK},
    /* a symbol on one operand, the size on the other: the size wins */
    {"ein_shape_known_wins", "Einsum", 12, {AS("equation", "ij,jk->ik")}, 2,
     {SY(F, 2, D(U, 3), "M"), SY(F, 2, D(3, U), NULL, "K")}, 1,
     {SY(F, 2, D(U, U), "M", "K")}, GL_OK},
    {"ein_shape_unknown_rank", "Einsum", 12, {AS("equation", "ij->j")}, 1, {S0(F, -1)}, 1,
     {S(F, 1, D(U))}, GL_OK},
    {"ein_shape_bad_rank", "Einsum", 12, {AS("equation", "ij->j")}, 1, {S(F, 1, D(3))}, 1,
     {{0}}, GL_ERR_INPUT},
    {"ein_shape_bad_size", "Einsum", 12, {AS("equation", "ij,jk")}, 2,
     {S(F, 2, D(2, 3)), S(F, 2, D(4, 2))}, 1, {{0}}, GL_ERR_INPUT},
};

Test(linalg, einsum_shapes)
{
    tu_run_shape_cases(einsum_shapes, GL_ARRAY_LEN(einsum_shapes));
}

/* ---- integer and quantized matrix products ------------------------------------------- */

static const tu_kcase qmatmul_cases[] = {
    /* (A - 1) = [[0,1],[2,3]], (B - 5) = [[0,1],[2,3]] */
    {"mmi_zero_points", "MatMulInteger", 10, {{0}}, 4,
     {T(U8, 2, D(2, 2), 1, 2, 3, 4), T(U8, 2, D(2, 2), 5, 6, 7, 8), T(U8, 0, D(0), 1),
      T(U8, 0, D(0), 5)},
     1, {T(I32, 2, D(2, 2), 2, 3, 6, 11)}, GL_OK},
    {"mmi_int8", "MatMulInteger", 10, {{0}}, 2,
     {T(I8, 2, D(1, 2), -1, 2), T(I8, 2, D(2, 1), 3, -4)}, 1, {T(I32, 2, D(1, 1), -11)},
     GL_OK},
    /* per-row zero point of A: rows minus 1 and 3 */
    {"mmi_per_row", "MatMulInteger", 10, {{0}}, 4,
     {T(U8, 2, D(2, 2), 1, 2, 3, 4), T(U8, 2, D(2, 2), 1, 0, 0, 1), T(U8, 1, D(2), 1, 3),
      OMIT},
     1, {T(I32, 2, D(2, 2), 0, 1, 0, 1)}, GL_OK},
    /* per-column zero point of B: columns minus 1 and 2 */
    {"mmi_per_col", "MatMulInteger", 10, {{0}}, 4,
     {T(U8, 2, D(1, 2), 1, 1), T(U8, 2, D(2, 2), 1, 2, 3, 4), OMIT, T(U8, 1, D(2), 1, 2)},
     1, {T(I32, 2, D(1, 2), 2, 2)}, GL_OK},
    /* the same zero points as N-D: A's rows [M, 1], B's columns [1, N] */
    {"mmi_per_row_nd", "MatMulInteger", 10, {{0}}, 4,
     {T(U8, 2, D(2, 2), 1, 2, 3, 4), T(U8, 2, D(2, 2), 1, 0, 0, 1), T(U8, 2, D(2, 1), 1, 3),
      OMIT},
     1, {T(I32, 2, D(2, 2), 0, 1, 0, 1)}, GL_OK},
    {"mmi_per_col_nd", "MatMulInteger", 10, {{0}}, 4,
     {T(U8, 2, D(1, 2), 1, 1), T(U8, 2, D(2, 2), 1, 2, 3, 4), OMIT, T(U8, 3, D(1, 1, 2), 1, 2)},
     1, {T(I32, 2, D(1, 2), 2, 2)}, GL_OK},
    {"mmi_zero_point_matrix", "MatMulInteger", 10, {{0}}, 3,
     {T(U8, 2, D(2, 2), 1, 2, 3, 4), T(U8, 2, D(2, 2), 1, 0, 0, 1),
      T(U8, 2, D(2, 2), 1, 2, 3, 4)}, 1, {{0}}, GL_ERR_INPUT},
    /* A's rows stored as a column where B's are expected */
    {"mmi_per_row_as_row", "MatMulInteger", 10, {{0}}, 3,
     {T(U8, 2, D(2, 2), 1, 2, 3, 4), T(U8, 2, D(2, 2), 1, 0, 0, 1), T(U8, 2, D(1, 2), 1, 3)},
     1, {{0}}, GL_ERR_INPUT},
    {"mmi_batched", "MatMulInteger", 10, {{0}}, 2,
     {T(U8, 3, D(2, 1, 2), 1, 2, 3, 4), T(U8, 2, D(2, 1), 10, 1)}, 1,
     {T(I32, 3, D(2, 1, 1), 12, 34)}, GL_OK},
    {"mmi_empty_huge_batch", "MatMulInteger", 10, {{0}}, 2,
     {EMPTY(U8, 3, D(BIG, 0, 2)), T(U8, 2, D(2, 1), 1, 1)}, 1, {EMPTY(I32, 3, D(BIG, 0, 1))},
     GL_OK},
    {"mmi_float", "MatMulInteger", 10, {{0}}, 2, {T(F, 2, D(1, 1), 1), T(U8, 2, D(1, 1), 1)},
     1, {{0}}, GL_ERR_INPUT},
    {"mmi_bad_zero", "MatMulInteger", 10, {{0}}, 3,
     {T(U8, 2, D(1, 1), 1), T(U8, 2, D(1, 1), 1), T(U8, 1, D(3), 1, 2, 3)}, 1, {{0}},
     GL_ERR_INPUT},
    /* 2*3 = 6, / y_scale 2 = 3, + 10 */
    {"qlmm_simple", "QLinearMatMul", 10, {{0}}, 8,
     {T(U8, 2, D(1, 1), 2), T(F, 0, D(0), 1), T(U8, 0, D(0), 0), T(U8, 2, D(1, 1), 3),
      T(F, 0, D(0), 1), T(U8, 0, D(0), 0), T(F, 0, D(0), 2), T(U8, 0, D(0), 10)},
     1, {T(U8, 2, D(1, 1), 13)}, GL_OK},
    /* 15/2 = 7.5 and 21/2 = 10.5 round to even: 8 and 10; 765/2 saturates */
    {"qlmm_round_saturate", "QLinearMatMul", 10, {{0}}, 8,
     {T(U8, 2, D(3, 1), 5, 7, 255), T(F, 1, D(1), 1), T(U8, 1, D(1), 0), T(U8, 2, D(1, 1), 3),
      T(F, 1, D(1), 1), T(U8, 1, D(1), 0), T(F, 1, D(1), 2), T(U8, 1, D(1), 0)},
     1, {T(U8, 2, D(3, 1), 8, 10, 255)}, GL_OK},
    {"qlmm_int8", "QLinearMatMul", 10, {{0}}, 8,
     {T(I8, 2, D(1, 2), -10, 20), T(F, 0, D(0), 0.5), T(I8, 0, D(0), 0), T(I8, 2, D(2, 1), 3, 1),
      T(F, 0, D(0), 1), T(I8, 0, D(0), 1), T(F, 0, D(0), 1), T(I8, 0, D(0), -1)},
     /* (-10*2 + 20*0) * 0.5 = -10, - 1 */
     1, {T(I8, 2, D(1, 1), -11)}, GL_OK},
    /* The example of the ONNX QLinearMatMul documentation. */
    {"qlmm_spec_example", "QLinearMatMul", 10, {{0}}, 8,
     {T(U8, 2, D(2, 4), 208, 236, 0, 238, 3, 214, 255, 29), T(F, 1, D(1), 0.0066),
      T(U8, 1, D(1), 113), T(U8, 2, D(4, 3), 152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247),
      T(F, 1, D(1), 0.00705), T(U8, 1, D(1), 114), T(F, 1, D(1), 0.0107), T(U8, 1, D(1), 118)},
     1, {T(U8, 2, D(2, 3), 168, 115, 255, 1, 66, 151)}, GL_OK},
    {"qlmm_missing_input", "QLinearMatMul", 10, {{0}}, 8,
     {T(U8, 2, D(1, 1), 2), T(F, 0, D(0), 1), T(U8, 0, D(0), 0), T(U8, 2, D(1, 1), 3),
      T(F, 0, D(0), 1), T(U8, 0, D(0), 0), OMIT, T(U8, 0, D(0), 10)},
     1, {{0}}, GL_ERR_INPUT},
};

Test(linalg, quantized_matmul_kernels)
{
    tu_run_kernel_cases(qmatmul_cases, GL_ARRAY_LEN(qmatmul_cases));
}

/* ---- graphlab MatMulIntegerT, QLinearMatMulT: the ONNX ops on swapped operands -------- */

#define MMIT "graphlab.MatMulIntegerT"
#define QLMMT "graphlab.QLinearMatMulT"

static const tu_kcase trans_qmatmul_cases[] = {
    /* A' = [[1,2],[3,4]] stored transposed, its per-row zero point [1, 3] stored as a row
     * [1, 2] (read swapped: [2, 1]); (A' - zero) = [[0,1],[0,1]] times I */
    {"mmit_transA_zero_point_nd", MMIT, 13, {AI("transA", 1)}, 4,
     {T(U8, 2, D(2, 2), 1, 3, 2, 4), T(U8, 2, D(2, 2), 1, 0, 0, 1), T(U8, 2, D(1, 2), 1, 3),
      T(U8, 0, D(0), 0)},
     1, {T(I32, 2, D(2, 2), 0, 1, 0, 1)}, GL_OK},
    /* the same zero point as a vector: the same in either layout */
    {"mmit_transA_zero_point_1d", MMIT, 13, {AI("transA", 1)}, 4,
     {T(U8, 2, D(2, 2), 1, 3, 2, 4), T(U8, 2, D(2, 2), 1, 0, 0, 1), T(U8, 1, D(2), 1, 3),
      T(U8, 0, D(0), 0)},
     1, {T(I32, 2, D(2, 2), 0, 1, 0, 1)}, GL_OK},
    /* B' = [[1,2],[3,4]] stored transposed, per-column zero point [1, 2] stored [2, 1]:
     * B' - zero = [[0,0],[2,2]]; [1,1] times it */
    {"mmit_transB_zero_point_nd", MMIT, 13, {AI("transB", 1)}, 4,
     {T(U8, 2, D(1, 2), 1, 1), T(U8, 2, D(2, 2), 1, 3, 2, 4), T(U8, 0, D(0), 0),
      T(U8, 2, D(2, 1), 1, 2)},
     1, {T(I32, 2, D(1, 2), 2, 2)}, GL_OK},
    {"mmit_no_trans", MMIT, 13, {{0}}, 4,
     {T(I8, 2, D(1, 2), -1, 2), T(I8, 2, D(2, 1), 3, -4), T(I8, 0, D(0), 0), T(I8, 0, D(0), 0)},
     1, {T(I32, 2, D(1, 1), -11)}, GL_OK},
    {"mmit_trans_rank1", MMIT, 13, {AI("transA", 1)}, 4,
     {T(U8, 1, D(2), 1, 2), T(U8, 2, D(2, 1), 3, 4), T(U8, 0, D(0), 0), T(U8, 0, D(0), 0)}, 1,
     {{0}}, GL_ERR_INPUT},
    /* b' = [[1],[1]] stored [1, 2], its scale [[0.5]]: acc 1 + 2 = 3, * 0.5 = 1.5, rounds
     * half to even: 2 */
    {"qlmmt_transB", QLMMT, 13, {AI("transB", 1)}, 8,
     {T(U8, 2, D(1, 2), 1, 2), T(F, 0, D(0), 1), T(U8, 0, D(0), 0), T(U8, 2, D(1, 2), 1, 1),
      T(F, 2, D(1, 1), 0.5), T(U8, 0, D(0), 0), T(F, 0, D(0), 1), T(U8, 0, D(0), 0)},
     1, {T(U8, 2, D(1, 1), 2)}, GL_OK},
    /* a' = [[1],[3]] stored [1, 2] with per-row scales [1, 0.5] stored [1, 2]: rows 1*2
     * and 3*2*0.5 = 3, / y_scale 1, + 10 */
    {"qlmmt_transA_per_row_scale", QLMMT, 13, {AI("transA", 1)}, 8,
     {T(U8, 2, D(1, 2), 1, 3), T(F, 2, D(1, 2), 1, 0.5), T(U8, 0, D(0), 0),
      T(U8, 2, D(1, 1), 2), T(F, 0, D(0), 1), T(U8, 0, D(0), 0), T(F, 0, D(0), 1),
      T(U8, 0, D(0), 10)},
     1, {T(U8, 2, D(2, 1), 12, 13)}, GL_OK},
};

Test(linalg, trans_quantized_matmul_kernels)
{
    tu_run_kernel_cases(trans_qmatmul_cases, GL_ARRAY_LEN(trans_qmatmul_cases));
}

static const tu_scase trans_qmatmul_shapes[] = {
    {"mmit_shape_transA", MMIT, 13, {AI("transA", 1)}, 4,
     {SY(U8, 3, D(U, 4, 3), "N"), S(I8, 2, D(4, 5)), S0(U8, 0), S0(I8, 0)}, 1,
     {SY(I32, 3, D(U, 3, 5), "N")}, GL_OK},
    {"qlmmt_shape_transB", QLMMT, 13, {AI("transB", 1)}, 8,
     {S(U8, 2, D(2, 4)), S0(F, 0), S0(U8, 0), S(I8, 2, D(3, 4)), S(F, 2, D(3, 1)), S0(I8, 0),
      S0(F, 0), S0(I8, 0)},
     1, {S(I8, 2, D(2, 3))}, GL_OK},
    {"mmit_shape_bad_inner", MMIT, 13, {AI("transB", 1)}, 4,
     {S(U8, 2, D(2, 4)), S(I8, 2, D(4, 3)), S0(U8, 0), S0(I8, 0)}, 1, {{0}}, GL_ERR_INPUT},
};

Test(linalg, trans_quantized_matmul_shapes)
{
    tu_run_shape_cases(trans_qmatmul_shapes, GL_ARRAY_LEN(trans_qmatmul_shapes));
}

/* ---- QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear ------------------------ */

static const tu_kcase quant_cases[] = {
    /* x / 1 rounded half to even, + 128, saturated */
    {"q_uint8", "QuantizeLinear", 13, {{0}}, 3,
     {T(F, 1, D(6), 0, 1, 2.5, 3.5, -1000, 1000), T(F, 0, D(0), 1), T(U8, 0, D(0), 128)}, 1,
     {T(U8, 1, D(6), 128, 129, 130, 132, 0, 255)}, GL_OK},
    {"q_int8", "QuantizeLinear", 13, {{0}}, 3,
     {T(F, 1, D(4), -1000, -1.5, 0.5, 1.5), T(F, 0, D(0), 1), T(I8, 0, D(0), 0)}, 1,
     {T(I8, 1, D(4), -128, -2, 0, 2)}, GL_OK},
    {"q_no_zero_point", "QuantizeLinear", 10, {{0}}, 2,
     {T(F, 1, D(3), 2, 3, 5), T(F, 0, D(0), 2)}, 1, {T(U8, 1, D(3), 1, 2, 2)}, GL_OK},
    /* channel 0: scale 1, zp 0; channel 1: 3/2 = 1.5 -> 2, 4/2 = 2, + 10 */
    {"q_per_axis", "QuantizeLinear", 13, {AI("axis", 1)}, 3,
     {T(F, 3, D(1, 2, 2), 1, 2, 3, 4), T(F, 1, D(2), 1, 2), T(U8, 1, D(2), 0, 10)}, 1,
     {T(U8, 3, D(1, 2, 2), 1, 2, 12, 12)}, GL_OK},
    {"q_per_axis_negative", "QuantizeLinear", 13, {AI("axis", -1)}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 1, D(2), 1, 2)}, 1,
     {T(U8, 2, D(2, 2), 1, 1, 3, 2)}, GL_OK},
    /* a one-element 1-D scale is per tensor whatever the axis */
    {"q_one_element_scale", "QuantizeLinear", 13, {AI("axis", 1)}, 3,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 1, D(1), 2), T(U8, 1, D(1), 1)}, 1,
     {T(U8, 2, D(2, 2), 1, 2, 3, 3)}, GL_OK},
    {"q_per_axis_v10", "QuantizeLinear", 10, {{0}}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 1, D(2), 1, 2)}, 1, {{0}}, GL_ERR_INPUT},
    {"q_bad_axis_len", "QuantizeLinear", 13, {AI("axis", 0)}, 2,
     {T(F, 2, D(2, 2), 1, 2, 3, 4), T(F, 1, D(3), 1, 2, 3)}, 1, {{0}}, GL_ERR_INPUT},
    {"q_bad_zero_type", "QuantizeLinear", 13, {{0}}, 3,
     {T(F, 1, D(1), 1), T(F, 0, D(0), 1), T(I32, 0, D(0), 0)}, 1, {{0}}, GL_ERR_INPUT},
    {"q_empty", "QuantizeLinear", 13, {{0}}, 2, {EMPTY(F, 1, D(0)), T(F, 0, D(0), 1)}, 1,
     {EMPTY(U8, 1, D(0))}, GL_OK},
    {"dq_uint8", "DequantizeLinear", 13, {{0}}, 3,
     {T(U8, 1, D(4), 0, 3, 128, 255), T(F, 0, D(0), 2), T(U8, 0, D(0), 128)}, 1,
     {T(F, 1, D(4), -256, -250, 0, 254)}, GL_OK},
    {"dq_int8", "DequantizeLinear", 10, {{0}}, 2,
     {T(I8, 1, D(2), -128, 127), T(F, 0, D(0), 0.5)}, 1, {T(F, 1, D(2), -64, 63.5)}, GL_OK},
    {"dq_per_axis", "DequantizeLinear", 13, {AI("axis", 0)}, 3,
     {T(U8, 2, D(2, 2), 10, 20, 30, 40), T(F, 1, D(2), 1, 10), T(U8, 1, D(2), 10, 20)}, 1,
     {T(F, 2, D(2, 2), 0, 10, 100, 200)}, GL_OK},
    {"dq_int32", "DequantizeLinear", 13, {{0}}, 2,
     {T(I32, 1, D(2), -5, 7), T(F, 0, D(0), 2)}, 1, {T(F, 1, D(2), -10, 14)}, GL_OK},
    {"dq_bad_axis", "DequantizeLinear", 13, {AI("axis", 2)}, 2,
     {T(U8, 2, D(2, 2), 1, 2, 3, 4), T(F, 1, D(2), 1, 2)}, 1, {{0}}, GL_ERR_INPUT},
    {"dq_zero_type_mismatch", "DequantizeLinear", 13, {{0}}, 3,
     {T(U8, 1, D(1), 1), T(F, 0, D(0), 1), T(I8, 0, D(0), 0)}, 1, {{0}}, GL_ERR_INPUT},
    /* range [-51, 204] spans 255: scale 1, zero point 51; 10.5 -> 10 and 11.5 -> 12 */
    {"dql_mixed", "DynamicQuantizeLinear", 11, {{0}}, 1,
     {T(F, 1, D(5), -51, 0, 10.5, 11.5, 204)}, 3,
     {T(U8, 1, D(5), 0, 51, 61, 63, 255), T(F, 0, D(0), 1), T(U8, 0, D(0), 51)}, GL_OK},
    /* all positive: the range starts at 0 */
    {"dql_positive", "DynamicQuantizeLinear", 11, {{0}}, 1, {T(F, 1, D(2), 0.5, 255)}, 3,
     {T(U8, 1, D(2), 0, 255), T(F, 0, D(0), 1), T(U8, 0, D(0), 0)}, GL_OK},
    /* all negative: the range ends at 0, zero point 255 */
    {"dql_negative", "DynamicQuantizeLinear", 11, {{0}}, 1, {T(F, 2, D(1, 2), -255, -10.5)},
     3, {T(U8, 2, D(1, 2), 0, 245), T(F, 0, D(0), 1), T(U8, 0, D(0), 255)}, GL_OK},
    {"dql_zeros", "DynamicQuantizeLinear", 11, {{0}}, 1, {T(F, 1, D(2), 0, 0)}, 3,
     {T(U8, 1, D(2), 0, 0), T(F, 0, D(0), 0), T(U8, 0, D(0), 0)}, GL_OK},
    {"dql_int_input", "DynamicQuantizeLinear", 11, {{0}}, 1, {T(I32, 1, D(1), 1)}, 3, {{0}},
     GL_ERR_INPUT},
};

Test(linalg, quantize_kernels)
{
    tu_run_kernel_cases(quant_cases, GL_ARRAY_LEN(quant_cases));
}

static const tu_scase quant_shapes[] = {
    {"q_shape_default", "QuantizeLinear", 13, {{0}}, 2,
     {SY(F, 2, D(U, 3), "N"), S0(F, 0)}, 1, {SY(U8, 2, D(U, 3), "N")}, GL_OK},
    {"q_shape_int8", "QuantizeLinear", 13, {{0}}, 3, {S(F, 1, D(4)), S0(F, 0), S0(I8, 0)}, 1,
     {S(I8, 1, D(4))}, GL_OK},
    {"dq_shape", "DequantizeLinear", 13, {{0}}, 2, {SY(I8, 2, D(2, U), NULL, "C"), S0(F, 0)},
     1, {SY(F, 2, D(2, U), NULL, "C")}, GL_OK},
    {"dql_shape", "DynamicQuantizeLinear", 11, {{0}}, 1, {SY(F, 1, D(U), "N")}, 3,
     {SY(U8, 1, D(U), "N"), S0(F, 0), S0(U8, 0)}, GL_OK},
    {"q_shape_untyped", "QuantizeLinear", 13, {{0}}, 2, {NOTYPE, S0(F, 0)}, 1, {NOTYPE}, GL_OK},
};

Test(linalg, quantize_shapes)
{
    tu_run_shape_cases(quant_shapes, GL_ARRAY_LEN(quant_shapes));
}

/* ---- ConvInteger / QLinearConv -------------------------------------------------------- */

static const tu_kcase conv_cases[] = {
    /* x - 1 = [[0,1,2],[3,4,5],[6,7,8]], 2x2 window sums */
    {"ci_zero_point", "ConvInteger", 10, {{0}}, 3,
     {T(U8, 4, D(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9), T(U8, 4, D(1, 1, 2, 2), 1, 1, 1, 1),
      T(U8, 0, D(0), 1)},
     1, {T(I32, 4, D(1, 1, 2, 2), 8, 12, 20, 24)}, GL_OK},
    /* zero-padded 5x5 around 1..9, 2x2 window sums */
    {"ci_pads", "ConvInteger", 10, {AINTS("pads", 4, 1, 1, 1, 1)}, 2,
     {T(U8, 4, D(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9), T(U8, 4, D(1, 1, 2, 2), 1, 1, 1, 1)},
     1,
     {T(I32, 4, D(1, 1, 4, 4), 1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9)}, GL_OK},
    {"ci_1d_stride", "ConvInteger", 10, {AINTS("strides", 1, 2)}, 2,
     {T(I8, 3, D(1, 1, 5), 1, 2, 3, 4, 5), T(I8, 3, D(1, 1, 2), 1, -1)}, 1,
     {T(I32, 3, D(1, 1, 2), -1, -1)}, GL_OK},
    {"ci_group", "ConvInteger", 10, {AI("group", 2)}, 2,
     {T(I8, 4, D(1, 2, 1, 2), 1, 2, 3, 4), T(I8, 4, D(2, 1, 1, 1), 2, 3)}, 1,
     {T(I32, 4, D(1, 2, 1, 2), 2, 4, 9, 12)}, GL_OK},
    /* w - w_zero per output channel: 5-4 = 1, 7-5 = 2 */
    {"ci_per_channel_zero", "ConvInteger", 10, {{0}}, 4,
     {T(U8, 4, D(1, 1, 1, 2), 3, 4), T(U8, 4, D(2, 1, 1, 1), 5, 7), OMIT,
      T(U8, 1, D(2), 4, 5)},
     1, {T(I32, 4, D(1, 2, 1, 2), 3, 4, 6, 8)}, GL_OK},
    /* total pad 1: SAME_UPPER puts it at the end, SAME_LOWER at the start */
    {"ci_same_upper", "ConvInteger", 10, {AS("auto_pad", "SAME_UPPER")}, 2,
     {T(U8, 3, D(1, 1, 3), 1, 2, 3), T(U8, 3, D(1, 1, 2), 1, 1)}, 1,
     {T(I32, 3, D(1, 1, 3), 3, 5, 3)}, GL_OK},
    {"ci_same_lower", "ConvInteger", 10, {AS("auto_pad", "SAME_LOWER")}, 2,
     {T(U8, 3, D(1, 1, 3), 1, 2, 3), T(U8, 3, D(1, 1, 2), 1, 1)}, 1,
     {T(I32, 3, D(1, 1, 3), 1, 3, 5)}, GL_OK},
    {"ci_dilation", "ConvInteger", 10, {AINTS("dilations", 1, 2)}, 2,
     {T(U8, 3, D(1, 1, 5), 1, 2, 3, 4, 5), T(U8, 3, D(1, 1, 2), 1, 1)}, 1,
     {T(I32, 3, D(1, 1, 3), 4, 6, 8)}, GL_OK},
    {"ci_batch2", "ConvInteger", 10, {{0}}, 2,
     {T(U8, 3, D(2, 1, 2), 1, 2, 3, 4), T(U8, 3, D(1, 1, 2), 1, 10)}, 1,
     {T(I32, 3, D(2, 1, 1), 21, 43)}, GL_OK},
    /* no input channels: the sums are empty, every output is 0 */
    {"ci_no_channels", "ConvInteger", 10, {{0}}, 2,
     {EMPTY(U8, 3, D(1, 0, 2)), EMPTY(U8, 3, D(2, 0, 1))}, 1,
     {T(I32, 3, D(1, 2, 2), 0, 0, 0, 0)}, GL_OK},
    /* an empty batch whose spatial size overflows int64 is refused, not computed */
    {"ci_empty_huge", "ConvInteger", 10, {{0}}, 2,
     {EMPTY(U8, 4, D(0, 1, BIG, BIG)), T(U8, 4, D(1, 1, 1, 1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"ci_empty_batch", "ConvInteger", 10, {{0}}, 2,
     {EMPTY(U8, 3, D(0, 1, BIG)), T(U8, 3, D(1, 1, 1), 1)}, 1, {EMPTY(I32, 3, D(0, 1, BIG))},
     GL_OK},
    {"ci_channel_mismatch", "ConvInteger", 10, {{0}}, 2,
     {T(U8, 3, D(1, 2, 1), 1, 2), T(U8, 3, D(1, 1, 1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"ci_kernel_too_big", "ConvInteger", 10, {{0}}, 2,
     {T(U8, 3, D(1, 1, 1), 1), T(U8, 3, D(1, 1, 2), 1, 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"ci_bad_strides", "ConvInteger", 10, {AINTS("strides", 2, 1, 1)}, 2,
     {T(U8, 3, D(1, 1, 2), 1, 1), T(U8, 3, D(1, 1, 1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"ci_huge_pads", "ConvInteger", 10, {AINTS("pads", 2, INT64_MAX, 1)}, 2,
     {T(U8, 3, D(1, 1, 2), 1, 1), T(U8, 3, D(1, 1, 1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    {"ci_kernel_shape_mismatch", "ConvInteger", 10, {AINTS("kernel_shape", 1, 2)}, 2,
     {T(U8, 3, D(1, 1, 2), 1, 1), T(U8, 3, D(1, 1, 1), 1)}, 1, {{0}}, GL_ERR_INPUT},
    /* (x - 10) * (w - 1) = [0,20,40,60], * 0.5 * 1 / 2 = [0,5,10,15], + 5 */
    {"qlc_simple", "QLinearConv", 10, {{0}}, 8,
     {T(U8, 4, D(1, 1, 2, 2), 10, 20, 30, 40), T(F, 0, D(0), 0.5), T(U8, 0, D(0), 10),
      T(U8, 4, D(1, 1, 1, 1), 3), T(F, 0, D(0), 1), T(U8, 0, D(0), 1), T(F, 0, D(0), 2),
      T(U8, 0, D(0), 5)},
     1, {T(U8, 4, D(1, 1, 2, 2), 5, 10, 15, 20)}, GL_OK},
    /* with bias 4: [4,24,44,64] * 0.25 = [1,6,11,16], + 5 */
    {"qlc_bias", "QLinearConv", 10, {{0}}, 9,
     {T(U8, 4, D(1, 1, 2, 2), 10, 20, 30, 40), T(F, 0, D(0), 0.5), T(U8, 0, D(0), 10),
      T(U8, 4, D(1, 1, 1, 1), 3), T(F, 0, D(0), 1), T(U8, 0, D(0), 1), T(F, 0, D(0), 2),
      T(U8, 0, D(0), 5), T(I32, 1, D(1), 4)},
     1, {T(U8, 4, D(1, 1, 2, 2), 6, 11, 16, 21)}, GL_OK},
    /* per-channel w_scale [1, 2]: 4*2*1 = 8, 4*3*2 = 24; 4*100 saturates at 127 */
    {"qlc_per_channel_int8", "QLinearConv", 10, {{0}}, 8,
     {T(I8, 4, D(1, 1, 1, 1), 4), T(F, 0, D(0), 1), T(I8, 0, D(0), 0),
      T(I8, 4, D(3, 1, 1, 1), 2, 3, 100), T(F, 1, D(3), 1, 2, 1), T(I8, 1, D(3), 0, 0, 0),
      T(F, 0, D(0), 1), T(I8, 0, D(0), 0)},
     1, {T(I8, 4, D(1, 3, 1, 1), 8, 24, 127)}, GL_OK},
    {"qlc_bad_w_scale", "QLinearConv", 10, {{0}}, 8,
     {T(I8, 4, D(1, 1, 1, 1), 4), T(F, 0, D(0), 1), T(I8, 0, D(0), 0),
      T(I8, 4, D(1, 1, 1, 1), 2), T(F, 1, D(2), 1, 2), T(I8, 0, D(0), 0), T(F, 0, D(0), 1),
      T(I8, 0, D(0), 0)},
     1, {{0}}, GL_ERR_INPUT},
};

Test(linalg, conv_integer_kernels)
{
    tu_run_kernel_cases(conv_cases, GL_ARRAY_LEN(conv_cases));
}

static const tu_scase conv_shapes[] = {
    /* (5 + 2 - 3) / 2 + 1 = 3 */
    {"ci_shape", "ConvInteger", 10, {AINTS("pads", 4, 1, 1, 1, 1), AINTS("strides", 2, 2, 2)},
     2, {SY(U8, 4, D(U, 1, 5, 5), "N"), S(U8, 4, D(2, 1, 3, 3))}, 1,
     {SY(I32, 4, D(U, 2, 3, 3), "N")}, GL_OK},
    {"ci_shape_sym_spatial", "ConvInteger", 10, {{0}}, 2,
     {SY(U8, 3, D(1, 1, U), NULL, NULL, "L"), S(U8, 3, D(4, 1, 3))}, 1,
     {S(I32, 3, D(1, 4, U))}, GL_OK},
    {"ci_shape_same", "ConvInteger", 10, {AS("auto_pad", "SAME_UPPER"), AINTS("strides", 1, 2)},
     2, {S(U8, 3, D(1, 1, 7)), S(U8, 3, D(1, 1, 3))}, 1, {S(I32, 3, D(1, 1, 4))}, GL_OK},
    {"ci_shape_rank2", "ConvInteger", 10, {{0}}, 2, {S(U8, 2, D(1, 1)), S(U8, 2, D(1, 1))}, 1,
     {{0}}, GL_ERR_INPUT},
    {"qlc_shape", "QLinearConv", 10, {{0}}, 8,
     {S(I8, 4, D(1, 3, 4, 4)), S0(F, 0), S0(I8, 0), S(I8, 4, D(8, 3, 2, 2)), S0(F, 0), S0(I8, 0),
      S0(F, 0), S0(I8, 0)},
     1, {S(I8, 4, D(1, 8, 3, 3))}, GL_OK},
};

Test(linalg, conv_integer_shapes)
{
    tu_run_shape_cases(conv_shapes, GL_ARRAY_LEN(conv_shapes));
}

/* ---- Det -------------------------------------------------------------------------------- */

static const tu_kcase det_cases[] = {
    {"det_2x2", "Det", 11, {{0}}, 1, {T(F, 2, D(2, 2), 1, 2, 3, 4)}, 1, {T(F, 0, D(0), -2)},
     GL_OK},
    /* the second matrix needs a row swap */
    {"det_batch", "Det", 11, {{0}}, 1, {T(F, 3, D(2, 2, 2), 2, 0, 0, 3, 0, 1, 1, 0)}, 1,
     {T(F, 1, D(2), 6, -1)}, GL_OK},
    /* 2(0*5 + 4) + 3(10 + 1) + (8 - 0) = 49 */
    {"det_3x3", "Det", 11, {{0}}, 1, {T(F64, 2, D(3, 3), 2, -3, 1, 2, 0, -1, 1, 4, 5)}, 1,
     {T(F64, 0, D(0), 49)}, GL_OK},
    {"det_singular", "Det", 11, {{0}}, 1, {T(F, 2, D(2, 2), 1, 2, 2, 4)}, 1,
     {T(F, 0, D(0), 0)}, GL_OK},
    {"det_empty_matrix", "Det", 11, {{0}}, 1, {EMPTY(F, 2, D(0, 0))}, 1, {T(F, 0, D(0), 1)},
     GL_OK},
    {"det_empty_batch", "Det", 11, {{0}}, 1, {EMPTY(F, 3, D(0, 2, 2))}, 1,
     {EMPTY(F, 1, D(0))}, GL_OK},
    {"det_empty_huge", "Det", 11, {{0}}, 1, {EMPTY(F, 3, D(0, BIG, BIG))}, 1,
     {EMPTY(F, 1, D(0))}, GL_OK},
    {"det_not_square", "Det", 11, {{0}}, 1, {T(F, 2, D(1, 2), 1, 2)}, 1, {{0}}, GL_ERR_INPUT},
    {"det_int", "Det", 11, {{0}}, 1, {T(I32, 2, D(1, 1), 1)}, 1, {{0}}, GL_ERR_INPUT},
};

Test(linalg, det_kernels)
{
    tu_run_kernel_cases(det_cases, GL_ARRAY_LEN(det_cases));
}

static const tu_scase det_shapes[] = {
    {"det_shape", "Det", 11, {{0}}, 1, {SY(F, 3, D(U, 3, 3), "N")}, 1,
     {SY(F, 1, D(U), "N")}, GL_OK},
    {"det_shape_sym_square", "Det", 11, {{0}}, 1, {SY(F, 2, D(U, U), "M", "M")}, 1,
     {S0(F, 0)}, GL_OK},
    {"det_shape_not_square", "Det", 11, {{0}}, 1, {S(F, 2, D(2, 3))}, 1, {{0}}, GL_ERR_INPUT},
    {"det_shape_rank1", "Det", 11, {{0}}, 1, {S(F, 1, D(2))}, 1, {{0}}, GL_ERR_INPUT},
};

Test(linalg, det_shapes)
{
    tu_run_shape_cases(det_shapes, GL_ARRAY_LEN(det_shapes));
}

/* The registry knows every op of the family at the versions where it changed. */
Test(linalg, registry_versions)
{
    static const struct {
        const char *op;
        int opset, since;
    } want[] = {
        {"MatMul", 13, 1}, {"Gemm", 10, 1}, {"Gemm", 13, 11}, {"Einsum", 12, 12},
        {"MatMulInteger", 10, 10}, {"QLinearMatMul", 13, 10}, {"QuantizeLinear", 12, 10},
        {"QuantizeLinear", 13, 13}, {"DequantizeLinear", 13, 13},
        {"DynamicQuantizeLinear", 11, 11}, {"ConvInteger", 10, 10}, {"QLinearConv", 10, 10},
        {"Det", 11, 11},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(want); i++) {
        const gl_op_def *d = gl_op_lookup("", want[i].op, want[i].opset);
        cr_assert(d, "%s-%d not found", want[i].op, want[i].opset);
        cr_expect_eq(d->since, want[i].since, "%s at opset %d: entry since %d, expected %d",
                     want[i].op, want[i].opset, d->since, want[i].since);
    }
    cr_expect_null(gl_op_lookup("", "Einsum", 11), "Einsum exists from opset 12 only");
    const gl_op_def *ci = gl_op_lookup("", "ConvInteger", 13);
    cr_assert(ci);
    cr_expect(ci->flags & GL_OP_LAYOUT_SENSITIVE);
}

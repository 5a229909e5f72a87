/* test_fold_transpose.c — the `fold-transpose` pass as a table of cases (seed 002's
 * rows: shapes, perm, dtype, the transA/transB expected, folded or not, why not; and its
 * quantized rows: DequantizeLinear before or after the Transpose, MatMulInteger and
 * QLinearMatMul on either side with their scales and zero points per tensor, per token
 * and per channel, transposed or reshaped with the operand or not matching).
 *
 * Each row is a graph in graphnote.h's notation whose output `y` is the product. It
 * runs toposort,shape-inference,fold-transpose; then:
 *   - applied rows: that many applied decisions, the op counts after, and the node
 *     producing `y` carrying the row's transA/transB; refused rows: the graph unchanged
 *     and a refusal whose reason holds the row's text; untouched rows: no decision;
 *   - the result verifies, and computes what the graph computed before on seeded random
 *     inputs (reference backend: graphlab's FusedMatMul kernel);
 *   - rows with a graphlab op (FusedMatMul, MatMulIntegerT, QLinearMatMulT) also run with
 *     the op's model-local function body in place of the kernel, and the saved model
 *     loads again and computes the same; when GL_PYTHON has onnx, onnx.checker
 *     (full_check) accepts the saved files.
 * (The graphlab ops' kernels and shapes: test_ops_linalg.c; FusedMatMul on oneDNN:
 * test_dnnl_ops.c; MatMulIntegerT and QLinearMatMulT run on the reference kernels only.)
 *
 * Quantized rows compare their integer outputs with the same tolerance, which holds them
 * exact (the graphlab ops compute what ONNX's op computes on the swapped inputs).
 *
 * GL_FTTEST_SHOW=NAME prints that row's decisions and the graph after.
 */
#include "graphnote.h"
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASSES "toposort,shape-inference,fold-transpose"
#define RTOL 1e-5
#define ATOL 1e-6

typedef enum want { FOLD, REFUSE, NONE } want;

typedef struct fcase {
    const char *name;
    int opset;
    const char *graph;
    want want;
    int ta, tb;         /* FOLD: the attributes of y's producer after */
    const char *ops;    /* FOLD: op counts after ("Gemm=1 MatMul=0 Transpose=0") */
    int applied;        /* FOLD: applied decisions */
    const char *reason; /* REFUSE: part of the reason; FOLD: part of the applied text */
} fcase;

#define FOLDED(ta_, tb_, ops_, n_) .want = FOLD, .ta = (ta_), .tb = (tb_), .ops = (ops_), \
    .applied = (n_)
#define REFUSED(why_) .want = REFUSE, .reason = (why_)

#define GEMM_OK "Gemm=1 MatMul=0 Transpose=0"
#define FUSED_OK "graphlab.FusedMatMul=1 MatMul=0 Transpose=0"
#define DQ_GEMM_OK "Gemm=1 Transpose=0 DequantizeLinear=1"
#define S4 "const s f32[4] = 0.1,0.2,0.3,0.4; "
#define MMI_OK "graphlab.MatMulIntegerT=1 MatMulInteger=0 Transpose=0"
#define MMI_OK_R "graphlab.MatMulIntegerT=1 MatMulInteger=0 Reshape=0"
#define QLMM_OK "graphlab.QLinearMatMulT=1 QLinearMatMul=0 Transpose=0"
/* QLinearMatMul's parameters: A per tensor, B [4,3] per column, y per tensor. */
#define QLMM_A_SCALES "const as f32[] = 0.02; const az u8[] = 128; "
#define QLMM_Y "const ys f32[] = 0.5; const yz u8[] = 128; "
#define QLMM_W "const w i8[4,3] = rand; const ws f32[3] = 0.01,0.02,0.03; " \
    "const wz i8[3] = 0,0,0; " QLMM_Y

static const fcase cases[] = {
    /* ---- rank 2: Gemm ---- */
    {"mm2_transA", 13, "in a f32s[3,2]; in b f32s[3,4]; t = Transpose(a) perm=[1,0]; "
     "y = MatMul(t, b); out y", FOLDED(1, 0, GEMM_OK, 1)},
    {"mm2_transB_weights", 13, "in x f32s[2,3]; const w f32s[4,3] = rand; "
     "t = Transpose(w) perm=[1,0]; y = MatMul(x, t); out y", FOLDED(0, 1, GEMM_OK, 1)},
    {"mm2_both", 17, "in a f32s[3,2]; in b f32s[4,3]; ta = Transpose(a) perm=[1,0]; "
     "tb = Transpose(b) perm=[1,0]; y = MatMul(ta, tb); out y", FOLDED(1, 1, GEMM_OK, 1)},
    {"mm2_no_perm_attr", 13, "in a f32s[3,2]; in b f32s[3,4]; t = Transpose(a); "
     "y = MatMul(t, b); out y", FOLDED(1, 0, GEMM_OK, 1)},
    {"gemm_toggles_transA", 13, "in a f32s[2,3]; in b f32s[3,4]; t = Transpose(a) "
     "perm=[1,0]; y = Gemm(t, b) transA=1; out y", FOLDED(0, 0, "Gemm=1 Transpose=0", 1)},
    {"gemm_transB_with_c", 11, "in x f32s[2,3]; const w f32s[4,3] = rand; const c f32s[4] "
     "= rand; t = Transpose(w) perm=[1,0]; y = Gemm(x, t, c) alpha=0.5 beta=2.0; out y",
     FOLDED(0, 1, "Gemm=1 Transpose=0", 1)},
    {"gemm_f64", 13, "in a f64[3,2]; in b f64[3,4]; t = Transpose(a) perm=[1,0]; "
     "y = Gemm(t, b); out y", FOLDED(1, 0, "Gemm=1 Transpose=0", 1)},
    /* ---- other ranks: FusedMatMul ---- */
    {"mm3_transB", 13, "in x f32s[2,3,4]; in w f32s[2,5,4]; t = Transpose(w) perm=[0,2,1]; "
     "y = MatMul(x, t); out y", FOLDED(0, 1, FUSED_OK, 1)},
    {"mm4_both", 17, "in a f32s[2,3,5,4]; in b f32s[2,3,6,5]; ta = Transpose(a) "
     "perm=[0,1,3,2]; tb = Transpose(b) perm=[0,1,3,2]; y = MatMul(ta, tb); out y",
     FOLDED(1, 1, FUSED_OK, 1)},
    {"mm4_batch_broadcast", 13, "in a f32s[2,1,4,3]; in b f32s[3,4,5]; "
     "t = Transpose(a) perm=[0,1,3,2]; y = MatMul(t, b); out y", FOLDED(1, 0, FUSED_OK, 1)},
    {"mm_rank2_by_rank3", 13, "in a f32s[4,3]; in b f32s[2,4,5]; t = Transpose(a) "
     "perm=[1,0]; y = MatMul(t, b); out y", FOLDED(1, 0, FUSED_OK, 1)},
    {"mm3_f64_op17", 17, "in x f64[2,3,4]; in w f64[2,5,4]; t = Transpose(w) perm=[0,2,1]; "
     "y = MatMul(x, t); out y", FOLDED(0, 1, FUSED_OK, 1)},
    {"mm2_int32_fused", 17, "in a i32[3,2]; in b i32[3,4]; t = Transpose(a) perm=[1,0]; "
     "y = MatMul(t, b); out y", FOLDED(1, 0, FUSED_OK " Gemm=0", 1)},
    {"mm3_int64_transB", 17, "in x i64[2,3,4]; in w i64[2,5,4]; t = Transpose(w) "
     "perm=[0,2,1]; y = MatMul(x, t); out y", FOLDED(0, 1, FUSED_OK, 1)},
    {"mm2_uint32_both", 17, "in a u32[3,2]; in b u32[4,3]; ta = Transpose(a) perm=[1,0]; "
     "tb = Transpose(b) perm=[1,0]; y = MatMul(ta, tb); out y", FOLDED(1, 1, FUSED_OK, 1)},
    {"mm3_unknown_batch", 13, "in x f32s[?2,3,4]; in w f32s[?2,5,4]; "
     "t = Transpose(w) perm=[0,2,1]; y = MatMul(x, t); out y", FOLDED(0, 1, FUSED_OK, 1)},
    /* ---- Reshapes that are Transposes ---- */
    {"reshape_col_to_row", 13, "in x f32s[2,3]; in v f32s[1,3]; const s i64[2] = 3,1; "
     "r = Reshape(v, s); y = MatMul(x, r); out y", FOLDED(0, 1, "Gemm=1 Reshape=0", 1)},
    {"reshape_3d", 13, "in x f32s[2,3,4]; in v f32s[2,1,4]; const s i64[3] = 2,4,1; "
     "r = Reshape(v, s); y = MatMul(x, r); out y",
     FOLDED(0, 1, "graphlab.FusedMatMul=1 Reshape=0", 1)},
    /* ---- other readers ---- */
    {"shared_with_relu", 13, "in x f32s[2,3]; in w f32s[4,3]; t = Transpose(w) perm=[1,0]; "
     "y = MatMul(x, t); z = Relu(t); out y, z", FOLDED(0, 1, "Gemm=1 Transpose=1", 1)},
    {"shared_by_two_products", 13, "in x f32s[2,3]; in u f32s[5,4]; in w f32s[4,3]; "
     "t = Transpose(w) perm=[1,0]; p = MatMul(x, t); q = MatMul(u, w); y = Add(p, p); "
     "z = MatMul(q, t); out y, z", FOLDED(-1, -1, "Gemm=2 Transpose=0", 2)},
    {"transpose_is_output", 13, "in x f32s[2,3]; in w f32s[4,3]; t = Transpose(w) "
     "perm=[1,0]; y = MatMul(x, t); out y, t", FOLDED(0, 1, "Gemm=1 Transpose=1", 1)},
    /* ---- refused ---- */
    {"batch_perm", 13, "in a f32s[3,2,4]; in b f32s[4,5]; t = Transpose(a) perm=[1,0,2]; "
     "y = MatMul(t, b); out y", REFUSED("moves batch dim 0")},
    {"attention_heads", 13, "in x f32s[1,4,2,3]; in b f32s[3,5]; "
     "t = Transpose(x) perm=[0,2,1,3]; y = MatMul(t, b); out y", REFUSED("moves batch dim 1")},
    {"key_transposed_with_heads", 13, "in k f32s[4,2,3]; in q f32s[2,5,3]; "
     "t = Transpose(k) perm=[1,2,0]; y = MatMul(q, t); out y",
     REFUSED("perm [1,2,0]) moves batch dim 0")},
    {"identity_perm", 13, "in a f32s[2,3]; in b f32s[3,4]; t = Transpose(a) perm=[0,1]; "
     "y = MatMul(t, b); out y", REFUSED("swaps nothing")},
    {"rank1", 13, "in a f32s[3]; in b f32s[3,4]; t = Transpose(a) perm=[0]; "
     "y = MatMul(t, b); out y", REFUSED("rank 1")},
    /* MatMul's integer types fold into FusedMatMul where ONNX Runtime folds none (issue
     * 22): never into Gemm (its kernel works in double); the body needs opset 15. */
    {"int32_opset13", 13, "in a i32[3,2]; in b i32[3,4]; t = Transpose(a) perm=[1,0]; "
     "y = MatMul(t, b); out y", REFUSED("opset 13, int32: below opset 15")},
    {"int64_gemm", 13, "in a i64[3,2]; in b i64[3,4]; t = Transpose(a) perm=[1,0]; "
     "y = Gemm(t, b); out y", REFUSED("is int64: Gemm's reference kernel computes integers")},
    {"reshape_dynamic", 13, "in x f32s[2,3]; in v f32s?[1,3]; in s i64[2] = 3,1; "
     "r = Reshape(v, s); y = MatMul(x, r); out y", REFUSED("is not known")},
    {"reshape_not_size1", 13, "in x f32s[2,3]; in v f32s[2,3]; const s i64[2] = 3,2; "
     "r = Reshape(v, s); y = MatMul(v, r); out y",
     REFUSED("only equals a transpose when one of them is 1")},
    {"fused_needs_opset12", 11, "in x f32s[2,3,4]; in w f32s[2,5,4]; "
     "t = Transpose(w) perm=[0,2,1]; y = MatMul(x, t); out y", REFUSED("needs opset 12")},
    {"gemm_needs_c_below_11", 9, "in a f32s[3,2]; in b f32s[3,4]; "
     "t = Transpose(a) perm=[1,0]; y = MatMul(t, b); out y", REFUSED("needs opset 12")},
    {"f64_fused_below_15", 13, "in x f64[2,3,4]; in w f64[2,5,4]; "
     "t = Transpose(w) perm=[0,2,1]; y = MatMul(x, t); out y", REFUSED("float32 only")},
    /* ---- quantized: DequantizeLinear around the Transpose (issue 21, seed 002) ---- */
    {"dq_weight_transpose_gemm", 13, "in x f32s[2,3]; const w i8[4,3] = rand; "
     "const s f32[4] = 0.1,0.2,0.3,0.4; d = DequantizeLinear(w, s) axis=0; "
     "t = Transpose(d) perm=[1,0]; y = MatMul(x, t); out y",
     FOLDED(0, 1, DQ_GEMM_OK, 1)},
    {"dq_activation_transpose_fused", 13, "in xq u8[2,4,3]; const xs f32[] = 0.05; "
     "const xz u8[] = 128; in w f32s[4,5]; d = DequantizeLinear(xq, xs, xz); "
     "t = Transpose(d) perm=[0,2,1]; y = MatMul(t, w); out y",
     FOLDED(1, 0, FUSED_OK " DequantizeLinear=1", 1)},
    {"transpose_dq_per_axis", 13, "in x f32s[2,3]; const w i8[4,3] = rand; "
     S4 "t = Transpose(w) perm=[1,0]; "
     "d = DequantizeLinear(t, s) axis=1; y = MatMul(x, d); out y",
     FOLDED(0, 1, DQ_GEMM_OK, 1)},
    {"transpose_dq_negative_axis", 13, "in x f32s[2,3]; const w i8[4,3] = rand; "
     S4 "t = Transpose(w) perm=[1,0]; "
     "d = DequantizeLinear(t, s) axis=-1; y = MatMul(x, d); out y",
     FOLDED(0, 1, DQ_GEMM_OK, 1)},
    {"transpose_dq_activation_gemm", 13, "in xq u8[3,2]; const xs f32[] = 0.05; "
     "const xz u8[] = 128; in w f32s[3,4]; t = Transpose(xq) perm=[1,0]; "
     "d = DequantizeLinear(t, xs, xz); y = Gemm(d, w); out y",
     FOLDED(1, 0, "Gemm=1 Transpose=0 DequantizeLinear=1", 1)},
    {"transpose_dq_rank3_batch_axis", 13, "in x f32s[2,5,3]; const w i8[2,4,3] = rand; "
     "const s f32[2] = 0.1,0.3; t = Transpose(w) perm=[0,2,1]; "
     "d = DequantizeLinear(t, s) axis=0; y = MatMul(x, d); out y",
     FOLDED(0, 1, FUSED_OK " DequantizeLinear=1", 1)},
    {"transpose_dq_kept_for_other_readers", 13, "in x f32s[2,3]; in w i8[4,3]; "
     S4 "t = Transpose(w) perm=[1,0]; "
     "d = DequantizeLinear(t, s) axis=1; y = MatMul(x, d); c = Cast(t) to=1; out y, c",
     FOLDED(0, 1, "Gemm=1 Transpose=1 DequantizeLinear=1", 1)},
    {"transpose_dq_read_by_others", 13, "in x f32s[2,3]; in w i8[4,3]; "
     S4 "t = Transpose(w) perm=[1,0]; "
     "d = DequantizeLinear(t, s) axis=1; y = MatMul(x, d); r = Relu(d); out y, r",
     FOLDED(0, 1, "Gemm=1 Transpose=1 DequantizeLinear=2", 1)},
    {"transpose_dq_batch_perm", 13, "in x f32s[3,5,4]; const w i8[4,3,4] = rand; "
     "const s f32[] = 0.1; t = Transpose(w) perm=[1,0,2]; d = DequantizeLinear(t, s); "
     "y = MatMul(x, d); out y", REFUSED("moves batch dim 0")},
    /* ---- MatMulInteger -> graphlab.MatMulIntegerT ---- */
    {"mmi_transA", 13, "in at u8[4,2]; in b i8[4,3]; const az u8[] = 128; "
     "const bz i8[] = 0; t = Transpose(at) perm=[1,0]; y = MatMulInteger(t, b, az, bz); "
     "out y", FOLDED(1, 0, MMI_OK, 1)},
    {"mmi_transB_no_zero_points", 13, "in a u8[2,4]; const w i8[3,4] = rand; "
     "t = Transpose(w) perm=[1,0]; y = MatMulInteger(a, t); out y", FOLDED(0, 1, MMI_OK, 1)},
    {"mmi_both", 13, "in at u8[4,2]; in bt u8[3,4]; t = Transpose(at) perm=[1,0]; "
     "tb = Transpose(bt) perm=[1,0]; y = MatMulInteger(t, tb); out y", FOLDED(1, 1, MMI_OK, 1)},
    {"mmi_per_token_zero_point_1d", 13, "in at u8[4,2]; in b u8[4,3]; "
     "const az u8[2] = 120,130; const bz u8[] = 128; t = Transpose(at) perm=[1,0]; "
     "y = MatMulInteger(t, b, az, bz); out y", FOLDED(1, 0, MMI_OK, 1)},
    {"mmi_per_token_zero_point_transposed", 13, "in at u8[4,2]; in b u8[4,3]; "
     "const azt u8[1,2] = 120,130; const bz u8[] = 128; t = Transpose(at) perm=[1,0]; "
     "tz = Transpose(azt) perm=[1,0]; y = MatMulInteger(t, b, tz, bz); out y",
     FOLDED(1, 0, MMI_OK, 1), .reason = "with its scale branch"},
    {"mmi_per_channel_zero_point_reshaped", 13, "in a u8[2,4]; const bt u8[3,4] = rand; "
     "const bzt u8[3,1] = 100,128,150; const shp i64[2] = 1,3; t = Transpose(bt) perm=[1,0]; "
     "rz = Reshape(bzt, shp); y = MatMulInteger(a, t, , rz); out y",
     FOLDED(0, 1, MMI_OK " Reshape=0", 1), .reason = "with its scale branch"},
    {"mmi_reshape_as_transpose", 13, "in a u8[2,4]; in v i8[1,4]; const shp i64[2] = 4,1; "
     "r = Reshape(v, shp); y = MatMulInteger(a, r); out y", FOLDED(0, 1, MMI_OK_R, 1)},
    {"mmi_batch3_transB", 13, "in a u8[2,3,4]; in bt i8[2,5,4]; "
     "t = Transpose(bt) perm=[0,2,1]; y = MatMulInteger(a, t); out y", FOLDED(0, 1, MMI_OK, 1)},
    {"mmi_dynamic_batch", 13, "in a u8[?2,3,4]; in bt i8[?2,5,4]; "
     "t = Transpose(bt) perm=[0,2,1]; y = MatMulInteger(a, t); out y", FOLDED(0, 1, MMI_OK, 1)},
    {"mmi_kept_for_other_readers", 13, "in a u8[2,4]; in w i8[3,4]; "
     "t = Transpose(w) perm=[1,0]; y = MatMulInteger(a, t); out y, t",
     FOLDED(0, 1, "graphlab.MatMulIntegerT=1 Transpose=1", 1)},
    {"mmi_batch_perm", 13, "in a u8[2,3,4]; in bt i8[2,3,4,5]; "
     "t = Transpose(bt) perm=[1,0,2,3]; y = MatMulInteger(a, t); out y",
     REFUSED("moves batch dim 0")},
    {"mmi_zero_point_constant", 13, "in at u8[4,2]; in b u8[4,3]; "
     "const az u8[2,1] = 120,130; t = Transpose(at) perm=[1,0]; "
     "y = MatMulInteger(t, b, az); out y", FOLDED(1, 0, MMI_OK, 1),
     .reason = "with its scale branch"},
    {"mmi_zero_point_does_not_match", 13, "in at u8[4,2]; in b u8[4,3]; "
     "in az u8[2,1] = 120,130; t = Transpose(at) perm=[1,0]; "
     "y = MatMulInteger(t, b, az); out y", REFUSED("scale branch does not match")},
    {"mmi_dynamic_reshape", 13, "in a u8[2,4]; in v i8?[1,4]; in s i64[2] = 4,1; "
     "r = Reshape(v, s); y = MatMulInteger(a, r); out y", REFUSED("is not known")},
    {"mmi_zero_point_dynamic_reshape", 13, "in at u8[4,2]; in b u8[4,3]; "
     "in azt u8?[1,2]; in s i64[2] = 2,1; t = Transpose(at) perm=[1,0]; "
     "rz = Reshape(azt, s); y = MatMulInteger(t, b, rz); out y",
     REFUSED("scale branch does not match")},
    {"mmi_needs_opset12", 11, "in at u8[4,2]; in b i8[4,3]; t = Transpose(at) perm=[1,0]; "
     "y = MatMulInteger(t, b); out y", REFUSED("needs opset 12")},
    /* ---- QLinearMatMul -> graphlab.QLinearMatMulT ---- */
    {"qlmm_transA_per_tensor", 13, "in at u8[4,2]; " QLMM_A_SCALES QLMM_W
     "t = Transpose(at) perm=[1,0]; y = QLinearMatMul(t, as, az, w, ws, wz, ys, yz); out y",
     FOLDED(1, 0, QLMM_OK, 1)},
    {"qlmm_per_channel_transB", 13, "in a u8[2,4]; const as f32[] = 0.02; "
     "const az u8[] = 128; const wt i8[3,4] = rand; const ws f32[3] = 0.01,0.02,0.03; "
     "const wz i8[3] = 0,0,0; " QLMM_Y "t = Transpose(wt) perm=[1,0]; "
     "y = QLinearMatMul(a, as, az, t, ws, wz, ys, yz); out y", FOLDED(0, 1, QLMM_OK, 1)},
    {"qlmm_per_token_transposed", 13, "in at u8[4,2]; const ast f32[1,2] = 0.02,0.03; "
     "const azt u8[1,2] = 120,130; const shp i64[2] = 2,1; " QLMM_W
     "t = Transpose(at) perm=[1,0]; rs = Reshape(ast, shp); tz = Transpose(azt) perm=[1,0]; "
     "y = QLinearMatMul(t, rs, tz, w, ws, wz, ys, yz); out y",
     FOLDED(1, 0, QLMM_OK " Reshape=0", 1), .reason = "with its scale branch"},
    {"qlmm_per_channel_scale_transposed", 13, "in a u8[2,4]; const as f32[] = 0.02; "
     "const az u8[] = 128; const wt i8[3,4] = rand; const wst f32[3,1] = 0.01,0.02,0.03; "
     "const wz i8[] = 0; " QLMM_Y "t = Transpose(wt) perm=[1,0]; "
     "ts = Transpose(wst) perm=[1,0]; y = QLinearMatMul(a, as, az, t, ts, wz, ys, yz); out y",
     FOLDED(0, 1, QLMM_OK, 1), .reason = "with its scale branch"},
    {"qlmm_per_channel_scale_constant", 13, "in a u8[2,4]; const as f32[] = 0.02; "
     "const az u8[] = 128; const wt i8[3,4] = rand; const ws f32[1,3] = 0.01,0.02,0.03; "
     "const wz i8[] = 0; " QLMM_Y "t = Transpose(wt) perm=[1,0]; "
     "y = QLinearMatMul(a, as, az, t, ws, wz, ys, yz); out y", FOLDED(0, 1, QLMM_OK, 1),
     .reason = "with its scale branch"},
    {"qlmm_scale_does_not_match", 13, "in a u8[2,4]; const as f32[] = 0.02; "
     "const az u8[] = 128; const wt i8[3,4] = rand; in ws f32[1,3] = 0.01,0.02,0.03; "
     "const wz i8[] = 0; " QLMM_Y "t = Transpose(wt) perm=[1,0]; "
     "y = QLinearMatMul(a, as, az, t, ws, wz, ys, yz); out y",
     REFUSED("scale branch does not match")},
    {"qlmm_batch_perm", 13, "in at u8[2,3,4]; const as f32[] = 0.02; const az u8[] = 128; "
     "const w i8[4,3] = rand; const ws f32[] = 0.01; const wz i8[] = 0; " QLMM_Y
     "t = Transpose(at) perm=[1,0,2]; y = QLinearMatMul(t, as, az, w, ws, wz, ys, yz); out y",
     REFUSED("moves batch dim 0")},
    /* ---- nothing to do ---- */
    {"plain_matmul", 13, "in a f32s[2,3]; in b f32s[3,4]; y = MatMul(a, b); out y", .want = NONE},
    {"reshape_heads_merged_dynamic", 13, "in a f32s[?1,?5,4,8]; in b f32s[32,6]; "
     "in s i64[3] = 1,5,32; r = Reshape(a, s); y = MatMul(r, b); out y", .want = NONE},
    {"reshape_flatten", 13, "in a f32s[2,3,4]; in b f32s[12,5]; const s i64[2] = 2,12; "
     "r = Reshape(a, s); y = MatMul(r, b); out y", .want = NONE},
};

/* ---- running one row ------------------------------------------------------------------- */

static void show(const fcase *c, const gl_pipeline *p, const gl_snapshot *s, const gl_graph *g)
{
    const char *only = getenv("GL_FTTEST_SHOW");
    if (!only || strcmp(only, c->name))
        return;
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++)
        gl_decision_print(&p->log.items[i], stderr);
    gn_print_graph(g, stderr);
}

static void check_decisions(const fcase *c, const gl_pipeline *p, const gl_snapshot *s,
                            const gl_snapshot *prev)
{
    size_t applied = 0, refused = 0, matching = 0;
    for (size_t i = s->first_decision; i < s->first_decision + s->n_decisions; i++) {
        const gl_decision *d = &p->log.items[i];
        cr_expect_str_eq(d->rule, "fold-transpose", "%s", c->name);
        applied += d->verdict == GL_APPLIED;
        refused += d->verdict == GL_REFUSED;
        matching += c->reason && strstr(d->reason, c->reason) &&
                    d->verdict == (c->want == FOLD ? GL_APPLIED : GL_REFUSED);
    }
    switch (c->want) {
    case FOLD:
        cr_expect_eq(applied, (size_t)c->applied, "%s: %zu applied, expected %d", c->name,
                     applied, c->applied);
        cr_expect(!c->reason || matching > 0, "%s: no applied decision saying '%s'", c->name,
                  c->reason);
        break;
    case REFUSE:
        cr_expect(matching > 0 && applied == 0, "%s: no refusal saying '%s' (%zu applied)",
                  c->name, c->reason, applied);
        break;
    case NONE:
        cr_expect_eq(applied + refused, 0, "%s: %zu decisions, expected none", c->name,
                     applied + refused);
        break;
    }
    if (c->want != FOLD)
        cr_expect(s->fingerprint == prev->fingerprint, "%s: the graph changed", c->name);
}

static void check_product(const fcase *c, const gl_graph *g)
{
    const gl_value *y = gl_find_value(g, "y");
    const gl_node *n = y ? y->producer : NULL;
    cr_assert_not_null(n, "%s: no producer of y", c->name);
    if (c->ta >= 0)
        cr_expect_eq(gl_node_attr_int(n, "transA", 0), c->ta, "%s: transA of %s", c->name,
                     n->op_type);
    if (c->tb >= 0)
        cr_expect_eq(gl_node_attr_int(n, "transB", 0), c->tb, "%s: transB of %s", c->name,
                     n->op_type);
}

/* With the function bodies instead of the kernel, and saved and loaded again. */
static void check_saved(const fcase *c, const gn_graph *b, const gl_model *before,
                        const gl_model *after, const char *dir)
{
    gl_model *bodies = gn_bodies_only(after);
    cr_expect(gn_count_domain(bodies->graph, "test.body") > 0, "%s", c->name);
    gn_expect_same_outputs(c->name, b, before, bodies, RTOL, ATOL, false);
    gl_model_free(bodies);
    gn_expect_saved_same(c->name, b, after, dir);
}

static void run_case(const fcase *c, const char *dir)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes(c->name, c->opset, c->graph, NULL, PASSES, &b);
    if (p) {
        size_t k = p->n_steps - 1;
        const gl_model *before = p->steps[k - 1].model, *after = p->steps[k].model;
        show(c, p, &p->steps[k], after->graph);
        cr_expect_eq(gl_graph_verify(after->graph, false), GL_OK, "%s: %s", c->name,
                     gl_error_message());
        check_decisions(c, p, &p->steps[k], &p->steps[k - 1]);
        if (c->want == FOLD) {
            gn_expect_op_counts(c->name, c->ops, after->graph);
            check_product(c, after->graph);
        }
        gn_expect_same_outputs(c->name, &b, before, after, RTOL, ATOL, false);
        if (gn_count_domain(after->graph, "graphlab"))
            check_saved(c, &b, before, after, dir);
    }
    gl_pipeline_free(p);
}

Test(fold_transpose, cases)
{
    char *dir = tu_tmpdir();
    cr_assert(dir, "no temporary folder");
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        run_case(&cases[i], dir);
    gn_expect_onnx_checker(dir);
    tu_rmtree(dir);
    free(dir);
}

/* `fold-transpose:1` stops after one rewrite, as every pass does. */
Test(fold_transpose, budget)
{
    gn_graph b;
    cr_assert(gn_build("budget", 13, "in x f32s[2,3]; in u f32s[2,3]; in w f32s[4,3]; "
                       "t = Transpose(w) perm=[1,0]; p = MatMul(x, t); q = MatMul(u, t); "
                       "out p, q", &b), "%s", b.err);
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    cr_assert_eq(gl_pass_list_parse("toposort,shape-inference,fold-transpose:1", &plan,
                                    &n_plan), GL_OK);
    gl_pipeline *p = NULL;
    cr_assert_eq(gl_pipeline_run(b.m, plan, n_plan, NULL, 0, &p), GL_OK, "%s",
                 gl_error_message());
    free(plan);
    const gl_graph *g = gl_pipeline_result(p)->graph;
    cr_expect_eq(gn_count_op(g, "Gemm"), 1);
    cr_expect_eq(gn_count_op(g, "MatMul"), 1);
    cr_expect_eq(gn_count_op(g, "Transpose"), 1, "the other MatMul still reads it");
    gl_pipeline_free(p);
}

/* families.h — the op families, one per file in src/ops/. registry.c lists them. */
#ifndef GL_OPS_FAMILIES_H
#define GL_OPS_FAMILIES_H

#include "ops/ops.h"

extern const gl_op_family gl_ops_elementwise; /* elementwise.c: math, logic, activations, Cast */
extern const gl_op_family gl_ops_movement;    /* movement.c: shape and data movement */
extern const gl_op_family gl_ops_nn;          /* nn.c: conv, pooling, normalization, resize */
extern const gl_op_family gl_ops_linalg;      /* linalg.c: MatMul, Gemm, Einsum, quantization */
extern const gl_op_family gl_ops_reduce;      /* reduce.c: reductions, softmax, TopK, losses */
extern const gl_op_family gl_ops_control;     /* control.c: If, Loop, Scan; RNN, GRU, LSTM */
extern const gl_op_family gl_ops_misc;        /* misc.c: signal, text, detection, random */
extern const gl_op_family gl_ops_graphlab;    /* graphlab.c: domain graphlab; Gelu-20 */
extern const gl_op_family gl_ops_graphlab_layout; /* graphlab_layout.c: NhwcConv, NhwcMaxPool, ... */

/* MatMul with its operands' last two dims swapped first (ta, tb) and the product scaled
 * by alpha: linalg.c's loops for graphlab's FusedMatMul (graphlab.c). */
gl_status gl_matmul_trans_kernel(gl_kernel_ctx *k, bool ta, bool tb, float alpha);
gl_status gl_matmul_trans_infer(gl_infer_ctx *c, bool ta, bool tb);

/* An ONNX op's shape function or kernel run with some inputs seen with their last two
 * dims swapped first: graphlab's MatMulIntegerT and QLinearMatMulT (graphlab.c) are
 * MatMulInteger and QLinearMatMul so. swap[] has one entry per input: an operand must
 * have rank >= 2; a parameter (a scale or zero point) of rank 0 or 1 is taken as it is. */
typedef enum gl_swap { GL_SWAP_NO, GL_SWAP_OPERAND, GL_SWAP_PARAM } gl_swap;
#define GL_MAX_SWAPPED 8
gl_status gl_infer_swapped(gl_infer_ctx *c, gl_infer_fn plain, const gl_swap *swap);
gl_status gl_kernel_swapped(gl_kernel_ctx *k, gl_kernel_fn plain, const gl_swap *swap);

/* graphlab's quantized products with transA/transB and the ONNX op each extends
 * (graphlab.c), for the fold-transpose pass that makes them. `inputs` has one letter per
 * input: 'A'/'B' the operand, 'a'/'b' its scale or zero point, '.' neither. */
typedef struct gl_trans_product {
    const char *op, *onnx;  /* "MatMulIntegerT" (domain graphlab), "MatMulInteger" */
    int64_t onnx_since;
    const char *inputs;     /* "ABab" */
} gl_trans_product;
/* The row for n: a graphlab op of the table, or the ai.onnx op one extends; NULL. */
const gl_trans_product *gl_trans_product_of(const gl_node *n);

#endif

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

#endif

/* passes.h — the passes' entry points, with the pass interface (pass_ctx.h).
 *
 * A pass is data (name, the bar's name, one-line summary, run function, what it needs,
 * its --set options) in one table (pass_table.h, pass_table.c);
 * `--passes` lists pick from that table by name, with repeats and an optional rewrite
 * budget `PASS:K`. The decision records, snapshots and rewrite stepping of DESIGN.md
 * grow out of gl_pass_ctx.
 */
#ifndef GL_PASSES_H
#define GL_PASSES_H

#include "ir/graph.h"
#include "passes/decisions.h"
#include "passes/pass_ctx.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- passes ---------------------------------------------------------------------- */

/* Topological sort (Kahn's algorithm, smallest current position first, so a valid order
 * is kept and ties keep the file's order; implicit uses by subgraphs count as edges;
 * subgraphs are sorted too). *moved (may be NULL) receives how many nodes changed
 * position. On a cycle: GL_ERR_INPUT naming the nodes of one cycle in order; the graph
 * that has the cycle is left unchanged. */
gl_status gl_toposort(gl_graph *g, size_t *moved);
gl_status gl_pass_toposort(gl_graph *g, gl_pass_ctx *ctx);
/* Every node comes after the producers of its inputs (implicit ones too). */
bool gl_graph_is_sorted(const gl_graph *g);
/* The same check without reordering anything: GL_ERR_INPUT naming one cycle. */
gl_status gl_check_acyclic(const gl_graph *g);

/* Shape inference: every node output's dtype and shape from the op registry's shape
 * functions, merged into the declared types (the more specific wins; a contradiction
 * keeps the declared type and is a refusal). Small values computable from constants and
 * static shapes are evaluated on the side (nothing in the graph changes but types), so
 * Shape->Gather->Concat->Reshape chains get known shapes. Needs a sorted graph. */
gl_status gl_pass_shape_inference(gl_graph *g, gl_pass_ctx *ctx);
/* The same on any graph of m, for other passes: ctx NULL records nothing and has no
 * budget. *changed (may be NULL) receives how many nodes' outputs gained information. */
gl_status gl_infer_graph(gl_model *m, gl_graph *g, gl_pass_ctx *ctx, size_t *changed);
/* Why node n cannot be evaluated at optimization time (random, marked not foldable,
 * unknown op, no kernel, a function call, ...), written into buf; NULL when it can be
 * (given constant inputs). Shared by shape inference and constant folding. */
const char *gl_node_eval_blocker(const gl_model *m, const gl_node *n, char *buf, size_t len);
/* A Shape or Size node's value from its input's type: a new int64 tensor when the dims
 * it reads are known (a Shape's start/end range, all of them for Size), else NULL. The
 * same for a Gather of constant indices from a Shape node when the dims it picks are
 * known (the static H of an [N,C,H,W]). */
gl_tensor *gl_shape_node_value(const gl_node *n);
/* Constant folding: nodes whose inputs are all constants are evaluated and their outputs
 * become initializers; Shape/Size of static shapes too; Constant nodes become
 * initializers. Iterates with shape inference to a fixed point. Option max-bytes. */
gl_status gl_pass_constant_folding(gl_graph *g, gl_pass_ctx *ctx);

/* Common-subexpression elimination: nodes with the same op, domain, attributes and
 * inputs compute the same values; later ones are replaced by the first. Identical small
 * constants are merged too. */
gl_status gl_pass_cse(gl_graph *g, gl_pass_ctx *ctx);
/* Dead-code elimination: nodes whose outputs reach no graph output (nor a subgraph),
 * and initializers nothing reads. */
gl_status gl_pass_dce(gl_graph *g, gl_pass_ctx *ctx);
gl_status gl_pass_transpose_push(gl_graph *g, gl_pass_ctx *ctx);
/* Pattern recognition (patterns.c): decomposed Gelu, LayerNormalization, SiLU and
 * HardSwish become one op (ai.onnx's where the opset has it, else graphlab's, saved
 * with a model-local function); BatchNormalization and per-channel Mul/Add after a Conv
 * go into its weights; Identity, inference Dropout, same-type Cast and zero Pads go; a
 * Pad goes into the Conv or pooling that reads it; a per-channel op that is a channel
 * Concat's only reader moves above it. */
gl_status gl_pass_patterns(gl_graph *g, gl_pass_ctx *ctx);
/* Layout-sensitive nodes to channels-last (graphlab's Nhwc* ops between Transposes)
 * where transpose-push then leaves fewer Transposes (layout.c). Option ignore-cost. */
gl_status gl_pass_layout(gl_graph *g, gl_pass_ctx *ctx);
/* A Transpose (or a Reshape that is one) swapping the last two dims of a MatMul or Gemm
 * operand goes into the product: Gemm's transA/transB, or graphlab's FusedMatMul saved
 * with a model-local function (fold_transpose.c). */
gl_status gl_pass_fold_transpose(gl_graph *g, gl_pass_ctx *ctx);
/* qdq.c: a QDQ model's DequantizeLinear -> Conv/MatMul/Gemm (+ bias, activations) ->
 * QuantizeLinear units become graphlab.fused groups the oneDNN backend runs as one int8
 * kernel; Relu/Clip that a QuantizeLinear's range makes redundant go. */
gl_status gl_pass_qdq(gl_graph *g, gl_pass_ctx *ctx);
/* Fusion (fusion.c, rules in fusion_rules.c): chains the target runs as one kernel (a
 * convolution or matmul with post-ops, seed 004's FFN/attention units, ONNX Runtime's
 * fusions) become one node calling a model-local function of domain graphlab.fused whose
 * body is the chain's nodes; rank-2 MatMul + Add becomes a Gemm. Options exact-shapes,
 * units, probe, measure. */
gl_status gl_pass_fusion(gl_graph *g, gl_pass_ctx *ctx);
/* Memory plan (memory_plan.c): every intermediate's lifetime in the executor's order and
 * its offset in one arena, outputs in place of dying inputs where the op allows; stored
 * as m->memory_plan (ir/memplan.h). Changes nothing in the graph. */
gl_status gl_pass_memory_plan(gl_graph *g, gl_pass_ctx *ctx);

/* ---- what passes may assume about a node (effects.c) ------------------------------- */

/* Ordered by how much they forbid. PURE: a deterministic function of the inputs (cse
 * may merge it, dce may drop it). RANDOM: no side effects, but every run draws new
 * values (dce may drop it, cse must not merge it). UNKNOWN: nothing is known; it may
 * have side effects (keep it, do not merge it). */
typedef enum gl_op_effects { GL_EFFECT_PURE, GL_EFFECT_RANDOM, GL_EFFECT_UNKNOWN } gl_op_effects;
/* Ops of ai.onnx and ai.onnx.ml are known; a call of a model-local function is what its
 * body is; a node holding subgraphs is also what the nodes inside are. */
gl_op_effects gl_node_effects(const gl_node *n);
/* Every op of the domain is free of side effects ("", ai.onnx, ai.onnx.ml). */
bool gl_domain_is_pure(const char *domain);

#endif

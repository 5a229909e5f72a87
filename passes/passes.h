/* passes.h — the pass interface, the pass table and the passes' entry points.
 *
 * A pass is data (name, the bar's name, one-line summary, run function, what it needs,
 * its --set options) in one table (pipeline.c);
 * `--passes` lists pick from that table by name, with repeats and an optional rewrite
 * budget `PASS:K`. The decision records, snapshots and rewrite stepping of DESIGN.md
 * grow out of gl_pass_ctx.
 */
#ifndef GL_PASSES_H
#define GL_PASSES_H

#include "ir/graph.h"
#include "passes/decisions.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GL_BUDGET_UNLIMITED INT64_MAX

typedef struct gl_pass gl_pass;
typedef struct gl_settings gl_settings;

typedef struct gl_pass_ctx {
    gl_model *model;
    const gl_pass *pass;
    int step;                   /* pipeline step (1 = first pass) */
    int64_t budget;             /* rewrites this pass may apply (PASS:K) */
    int64_t applied;            /* rewrites applied so far */
    gl_decision_log *log;       /* where decisions go; NULL: kept in `scratch` only */
    const gl_settings *settings; /* --set values; NULL: defaults */
    gl_decision scratch;        /* the last decision when there is no log */
    /* Vetoes (--set PASS.veto=ID): the rewrites refused so far in this step, as
     * "rule\nreason", so that a pass meeting the same rewrite again (a fixed-point loop)
     * refuses it again instead of applying it under a new id. */
    char **vetoed;
    size_t n_vetoed, cap_vetoed;
    int64_t unheeded;           /* vetoes the pass did not ask gl_pass_vetoed about */
} gl_pass_ctx;

/* The protocol of a rewrite (DESIGN.md: check everything before the first edit):
 *
 *     if (!gl_pass_may_rewrite(ctx)) break;             // budget spent: stop
 *     ... check; on refusal: gl_pass_decide(ctx, "rule", GL_REFUSED, "why"); continue;
 *     gl_decision *d = gl_pass_decide(ctx, "rule", GL_APPLIED, "what");  // counts it
 *     gl_decision_add_node_ref(d, node); ... then edit, giving new nodes provenance d->id.
 *
 *     if (gl_pass_vetoed(ctx, d)) continue;            // --set PASS.veto=ID
 *
 * So "apply the first K rewrites" works for every pass without pass code. */
bool gl_pass_may_rewrite(const gl_pass_ctx *ctx);
gl_decision *gl_pass_decide(gl_pass_ctx *ctx, const char *rule, gl_verdict v,
                            const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* After gl_pass_decide(ctx, rule, GL_APPLIED, ...): true when that rewrite is vetoed
 * (`--set PASS.veto=ID`, decisions.h): its record says refused ("vetoed ..."), it costs
 * no budget, and the pass must leave the graph as it is and go on with the next
 * candidate. A pass that applies without asking ends in an error naming the rule (its
 * rewrites cannot be vetoed yet), never in a record that says refused over an edit. */
bool gl_pass_vetoed(gl_pass_ctx *ctx, const gl_decision *d);
/* A refusal. When `forceable` (the rule refuses on a cost or a guard: never on a check
 * of correctness) the record carries forceable=1, and --set PASS.force=ID can override
 * it: when ID is the id it gets and the budget allows one more rewrite, it is recorded as
 * applied ("forced (...): reason"), counts against the budget, and the pass must make
 * the rewrite exactly as if it had been accepted:
 *
 *     d = gl_pass_refuse(ctx, "rule", true, "why not");
 *     if (d->verdict != GL_APPLIED) continue;   // refused: as before
 *     ... the rewrite, provenance d->id ... */
gl_decision *gl_pass_refuse(gl_pass_ctx *ctx, const char *rule, bool forceable,
                            const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Count one applied rewrite without a record (a pass whose rewrite is not a decision,
 * such as a reordering). */
void gl_pass_count_rewrite(gl_pass_ctx *ctx);
/* Run `fn` on each subgraph of g's If, Loop, Scan and SequenceMap nodes: bodies the node
 * runs, whose outputs are all it reads back (fn recurses deeper itself). Stops at the
 * first failure (pipeline.c). */
gl_status gl_pass_on_bodies(gl_graph *g, gl_pass_ctx *ctx,
                            gl_status (*fn)(gl_graph *, gl_pass_ctx *));
/* An integer option of the running pass ("max-bytes"): the --set value, else the
 * default from the pass's option table. */
int64_t gl_pass_option_value(const gl_pass_ctx *ctx, const char *name);

typedef struct gl_pass_option {
    const char *name; /* "max-bytes": set as --set PASS.max-bytes=V */
    int64_t dflt;     /* -1: none shown (id lists, text) */
    const char *help;
    /* The value is text (a node name: dnnl.fault=NAME), kept as given and read with
     * gl_settings_lookup_text; otherwise a whole number. */
    bool text;
} gl_pass_option;

/* What a pass needs from the graph before it runs, checked by gl_pass_run so no pass
 * checks it by hand. SORTED: the graph and the bodies it runs are in topological order
 * (else GL_ERR_INPUT naming the graph). TYPES: values have their dtypes and shapes; when
 * no shape-inference step ran before it and some value has no dtype, the step's first
 * record is a note saying how many (the pass then refuses, value by value, what needs
 * one). */
typedef enum gl_pass_needs {
    GL_PASS_NEEDS_SORTED = 1u << 0,
    GL_PASS_NEEDS_TYPES = 1u << 1,
} gl_pass_needs;

struct gl_pass {
    const char *name;    /* "transpose-push": --passes and --set use it */
    const char *shown;   /* "tpush": the workbench's bar */
    const char *summary; /* one line for --help and the TUI */
    gl_status (*run)(gl_graph *g, gl_pass_ctx *ctx);
    unsigned needs;      /* gl_pass_needs */
    const gl_pass_option *options; /* may be NULL */
    size_t n_options;
};

/* Run ctx->pass on g after checking what it needs (gl_pass_needs): the one way to run a
 * pass, for the pipeline and for tests alike. */
gl_status gl_pass_run(gl_graph *g, gl_pass_ctx *ctx);

const gl_pass *gl_pass_find(const char *name);
/* The table, for help listings. */
const gl_pass *gl_pass_table(size_t *count);
/* The pass names of `--passes all`, in order. */
const char *const *gl_pass_default_pipeline(size_t *count);

typedef struct gl_pass_step {
    const gl_pass *pass;
    int64_t budget; /* GL_BUDGET_UNLIMITED unless PASS:K */
    /* all:K: `budget` is K, the whole pipeline's, counted over the steps that share it:
     * each runs with what the ones before it left, and none runs once it is spent. */
    bool shared;
} gl_pass_step;

/* Parse a --passes value: "all" (the default pipeline), "all:K" (the default pipeline
 * stopped after its first K rewrites, counted over all its steps: bisect's numbering),
 * "none", or a comma list of NAME or NAME:K (K >= 0), repeats allowed. *steps is
 * malloc'd. GL_ERR_INPUT with a message naming the unknown pass (and the passes there
 * are) or the bad budget. */
gl_status gl_pass_list_parse(const char *spec, gl_pass_step **steps, size_t *n_steps);

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
 * it reads are known (a Shape's start/end range, all of them for Size), else NULL. */
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

/* transpose.h — the transpose push-down pass, inside: what its handlers share, and the
 * small extension API the backend-aware `layout` pass will use.
 *
 * The pass (transpose_push.c) follows ONNX Runtime's transpose optimizer: nodes are
 * visited in topological order; a node fed by a Transpose asks its op's handler which
 * inputs a Transpose may pass, the cost model whether pushing pays, and the handler to
 * rewrite: inputs get the inverse permutation (cancelling or composing with Transposes
 * above, or transposing constants in place), outputs get the Transpose. Handlers live in
 * one table (transpose_handlers.c), keyed by op type and opset range. What they share
 * with the sweep (permutations, values, quantized units, the rewrites of inputs and
 * outputs) is in transpose_rewrite.c, which calls neither: sweep -> handlers -> rewrite.
 *
 * Permutations follow ONNX: Transpose(x, perm) has dim i = x's dim perm[i]. All arrays
 * here hold `rank` entries, rank <= GL_MAX_RANK.
 */
#ifndef GL_TRANSPOSE_H
#define GL_TRANSPOSE_H

#include "ir/journal.h"
#include "passes/passes.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Opsets of ai.onnx the handlers are written for (ONNX Runtime's range). */
#define GL_TP_MIN_OPSET 7
#define GL_TP_MAX_OPSET 21

/* ---- permutations and axes (transpose_rewrite.c) -------------------------------------------------------- */

/* Each of 0..rank-1 exactly once. */
bool gl_tp_perm_valid(const int64_t *perm, int rank);
bool gl_tp_perm_is_identity(const int64_t *perm, int rank);
bool gl_tp_perm_equal(const int64_t *a, const int64_t *b, int rank);
/* out = perm^-1 (out may not alias perm). */
void gl_tp_perm_invert(const int64_t *perm, int rank, int64_t *out);
/* Transpose(Transpose(x, first), second) == Transpose(x, out): out[i] = first[second[i]]. */
void gl_tp_perm_compose(const int64_t *first, const int64_t *second, int rank, int64_t *out);
/* Normalize axes (negative + rank) in place; false when one is out of [0, rank) or
 * repeats. */
bool gl_tp_axes_normalize(int64_t *axes, size_t n, int rank);
/* A node read t = Transpose(x, perm) along `axes` (normalized); reading x instead, the
 * same dims are out[k] = perm[axes[k]]: sorted when `sorted` (Reduce, Squeeze), in the
 * given order otherwise (Slice, whose axes line up with starts/ends). Returns the
 * count. */
size_t gl_tp_axes_through(const int64_t *axes, size_t n, const int64_t *perm, int rank,
                          bool sorted, int64_t *out);
/* The perm of the output after removing `axes` (normalized, of x) from a tensor
 * transposed by perm: rank - n entries. */
void gl_tp_perm_squeeze(const int64_t *perm, int rank, const int64_t *axes, size_t n,
                        int64_t *out);
/* The perm of the output after inserting size-1 dims at `axes` (normalized against
 * rank + n): the 1-dims stay in place, the others move as perm says. */
void gl_tp_perm_unsqueeze(const int64_t *perm, int rank, const int64_t *axes, size_t n,
                          int64_t *out);
/* Where `axis` lands after inserting dims at `axes` (normalized against the new rank). */
int64_t gl_tp_axis_unsqueezed(const int64_t *axes, size_t n, int64_t axis);
/* The perm of a Transpose node (absent: the reversal of its input's dims, when that
 * rank is known); false when it is not a valid permutation. */
bool gl_tp_read_perm(const gl_node *t, int64_t *perm, int *rank);
/* "0,3,1,2" into buf. */
void gl_tp_perm_format(const int64_t *perm, int rank, char *buf, size_t len);

/* ---- the run ----------------------------------------------------------------------------- */

typedef struct gl_tp_registry gl_tp_registry;
/* What the pass remembers about nodes while it runs (transpose_push.c). */
typedef struct gl_tp_memo gl_tp_memo;
/* The net-transposes guard (transpose_guard.c, below). */
typedef struct gl_tp_guard gl_tp_guard;
typedef struct gl_tp_regions gl_tp_regions;

typedef struct gl_tp_run {
    gl_graph *g;
    gl_model *m;
    gl_pass_ctx *ctx;
    int64_t opset;                   /* ai.onnx version of the model */
    const gl_tp_registry *registry;  /* extension handlers and cost check; may be NULL */
    uint8_t *leads;                  /* by value id: the value leads to a Transpose */
    size_t n_leads;
    bool stopped;                    /* the rewrite budget is spent */
    bool have_dq;                    /* the graph holds DequantizeLinear nodes */
    bool ort_only;                   /* option ort-only: no rules beyond ONNX Runtime's */
    /* While a rewrite is applied: the node new nodes stand in for, and the decision. */
    gl_node *for_node;
    int64_t decision;
    /* Handlers by node id (ids are never reused and a node's op never changes), so the
     * op tables are searched once per node; NULL (a run built by hand): no memo. */
    gl_tp_memo *memo;
    /* The guard's refusals (NULL: none, as under ort-only) and, in a trial sweep, its
     * bookkeeping of this graph's Transposes (NULL otherwise). */
    gl_tp_guard *guard;
    gl_tp_regions *regions;
} gl_tp_run;

/* Whether value v is one of the outputs that lead (through ops a Transpose can pass) to
 * a Transpose: computed once per graph by a reverse-topological sweep. */
bool gl_tp_leads_to_transpose(const gl_tp_run *run, const gl_value *v);

/* ---- handlers ----------------------------------------------------------------------------- */

/* Which inputs a Transpose may pass. */
typedef enum gl_tp_inputs {
    GL_TP_FIRST,      /* input 0 (the data) only */
    GL_TP_ALL,        /* every present input (Concat, Sum, ...) */
    GL_TP_NON_SCALAR, /* every present input not known to be rank 0 (broadcasting ops) */
} gl_tp_inputs;

typedef struct gl_tp_args {
    gl_tp_run *run;
    gl_node *transpose;   /* the Transpose being pushed */
    gl_node *node;        /* the node it feeds */
    size_t slot;          /* which input of node it feeds */
    int rank;
    const int64_t *perm;  /* the Transpose's perm */
    const int64_t *perm_inv;
    const size_t *inputs; /* transposable inputs of node */
    size_t n_inputs;
} gl_tp_args;

/* What a handler's check found, for its apply (and the cost: whether and how the
 * outputs get transposed). */
typedef struct gl_tp_plan {
    const char *rule;        /* decision rule when not "push-through-<Op>" ("cancel", ...) */
    bool transposes_outputs; /* outputs get a Transpose that the cost model counts */
    const char *out_note;    /* why the outputs do not count, for the decision */
    int out_rank;
    int64_t out_perm[GL_MAX_RANK];
    int64_t axis;
    size_t n_axes;
    int64_t axes[GL_MAX_RANK];
    int mode;                /* handler-specific sub-case */
    size_t n_shape;          /* Reshape pushed through: the new shape for the input */
    int64_t shape[GL_MAX_RANK];
} gl_tp_plan;

/* A handler checks everything before its first edit: check() edits nothing and either
 * fills the plan and returns true, or writes why not (one sentence) and returns false.
 * apply() then makes the whole rewrite; it fails only on a bug (GL_ERR_INTERNAL). */
typedef struct gl_tp_handler {
    const char *family; /* "elementwise", "broadcast", "axis", ... for decisions */
    gl_tp_inputs inputs;
    bool transposes_outputs; /* for the reverse sweep: its outputs carry the Transpose */
    bool (*check)(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len);
    gl_status (*apply)(gl_tp_args *a, const gl_tp_plan *plan);
} gl_tp_handler;

/* A check's refusal: the reason into why (len bytes), false (transpose_handlers.c). */
bool gl_tp_refuse(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The built-in handler for node n at the model's opset (transpose_handlers.c); NULL when
 * the op has none. */
const gl_tp_handler *gl_tp_builtin_handler(const gl_node *n, int64_t opset);
/* Resize is not pushed by default (backends implement it for one layout); an extension
 * may register this handler for it. */
extern const gl_tp_handler gl_tp_resize_handler;

/* ---- extensions (for the `layout` pass) ---------------------------------------------- */

typedef enum gl_tp_cost_result {
    GL_TP_COST_FALL_THROUGH, /* let the default cost model decide */
    GL_TP_COST_PUSH,
    GL_TP_COST_STOP,
} gl_tp_cost_result;

/* Asked before the default cost model for every push considered. */
typedef gl_tp_cost_result (*gl_tp_cost_fn)(const gl_tp_run *run, const gl_node *node,
                                           const int64_t *perm, int rank, void *user);

typedef struct gl_tp_extension {
    char *key;                  /* "Op" for ai.onnx, "domain.Op" otherwise; owned */
    const gl_tp_handler *handler;
} gl_tp_extension;

struct gl_tp_registry {
    gl_tp_extension *items; /* looked up before the built-in table */
    size_t n, cap;
    gl_tp_cost_fn cost_check; /* NULL: default cost model only */
    void *cost_user;
};

/* Register (or replace) the handler for domain ("" = ai.onnx) and op. */
void gl_tp_registry_add(gl_tp_registry *r, const char *domain, const char *op,
                        const gl_tp_handler *h);
void gl_tp_registry_set_cost_check(gl_tp_registry *r, gl_tp_cost_fn fn, void *user);
void gl_tp_registry_free(gl_tp_registry *r);
/* The handler for n: the registry's first, then the built-in table; NULL for a
 * layout-sensitive op without an extension (with *layout_sensitive set). */
const gl_tp_handler *gl_tp_find_handler(const gl_tp_run *run, const gl_node *n,
                                        bool *layout_sensitive);

/* The pass with extensions (gl_pass_transpose_push is this with r == NULL). */
gl_status gl_transpose_push_with(gl_graph *g, gl_pass_ctx *ctx, const gl_tp_registry *r);

/* ---- the net-transposes guard (transpose_guard.c) ------------------------------------
 *
 * Beyond ONNX Runtime, off under ort-only=1. ORT's cost model counts a Transpose as
 * likely to go once every reader has a handler, and pushes it through one reader even
 * when another reader will refuse it; counting a Transpose read twice (Concat(t, t)) as
 * two gains does the same. Such a run ends with more Transposes than it found. The guard
 * sweeps a clone first (a trial) and follows every push: the Transposes a push consumes,
 * creates, cancels, merges with or reuses join one region (a union-find by node id). A
 * region that ends with more Transposes than it would hold without its pushes (its own
 * at the start, less those that two of them meeting remove anyway: a Transpose read
 * only by a Transpose meets it whatever is pushed) is a region whose pushes did not
 * pay: those pushes are refused in the next trial, until a trial leaves no such region
 * (at most GL_TP_GUARD_ROUNDS trials; after that every push that is not a Transpose
 * meeting a Transpose is refused). Should the last trial still end with more
 * Transposes than the first (ORT's pushes), the refusals are dropped (issue 22). The
 * real sweep then runs with the same refusals, each recorded with its region's
 * numbers: a clone is exact (ids, order, uses), so the real sweep makes the last
 * trial's decisions. When nothing can hold the real sweep back (no budget, veto or
 * force), the first trial runs on the graph itself under an undo journal (ir/journal.h):
 * if it finds nothing to refuse it was the real sweep, else the journal takes the graph
 * back to what a clone would have kept (transpose_push.c, trial_in_place). */

#define GL_TP_GUARD_ROUNDS 8

gl_tp_guard *gl_tp_guard_new(void);
void gl_tp_guard_free(gl_tp_guard *gd);
/* Sweeps from now on are trials (they keep regions) or the real one. */
void gl_tp_guard_set_trial(gl_tp_guard *gd, bool trial);
/* After a trial: true when it found regions that grew (their pushes are refused from
 * now on: run another trial); false when it found none, or the rounds are spent (then
 * every push is refused). */
bool gl_tp_guard_next_round(gl_tp_guard *gd);
/* A graph's sweep starts (trial: its Transposes become regions) and ends (trial: the
 * regions that grew give refusals for the next round). */
void gl_tp_guard_begin(gl_tp_run *run);
void gl_tp_guard_end(gl_tp_run *run);
/* Around one push through a->node (`meeting`: a->node is a Transpose). */
void gl_tp_guard_before_push(gl_tp_run *run, const gl_tp_args *a);
void gl_tp_guard_after_push(gl_tp_run *run, bool meeting);
/* No refusal stands (none found so far, the rounds not spent): a sweep now makes the
 * same pushes as a trial without the guard, ONNX Runtime's. */
bool gl_tp_guard_refuses_nothing(const gl_tp_guard *gd);
/* The last trial ends with `guarded` Transposes, more than the first (ONNX Runtime's
 * pushes, no refusals) with `unguarded`: the refusals are dropped, so the real sweep
 * makes ORT's pushes, and the report says why. Not when the rounds are spent. */
void gl_tp_guard_keep_ort(gl_tp_guard *gd, size_t guarded, size_t unguarded);
/* Whether the guard refuses the push of t through n; then *start and *end receive the
 * Transposes its region started and ended with in the trial that refused it, and
 * *region (may be NULL) the names of the region's first Transposes ("'t1', 't2', ..."),
 * valid while the guard lives. */
bool gl_tp_guard_refuses(const gl_tp_run *run, const gl_node *t, const gl_node *n, int *start,
                         int *end, const char **region);
/* The real sweep's summary (a note) when the guard refused anything. */
void gl_tp_guard_report(const gl_tp_guard *gd, gl_pass_ctx *ctx);

/* ---- the cost model (transpose_push.c) ------------------------------------------------------------------ */

/* ONNX Runtime's estimate: the rank without size-1 dims; 5 when the shape is unknown. */
int gl_tp_estimate_rank(const gl_value *v);
/* The cost of transposing input v by perm^-1 when a Transpose with `perm` is pushed:
 * 0 for a constant (or a DequantizeLinear of one), -rank when v comes from a Transpose
 * with `perm` that is then likely to go, 0 when it comes from another Transpose (they
 * compose), else +rank. `why` receives the reason ("inverse Transpose 't1'
 * disappears"). */
int gl_tp_input_cost(const gl_tp_run *run, const gl_value *v, const int64_t *perm, int rank,
                     char *why, size_t len);
/* A constant (for the cost model): an initializer that is not a graph input with a
 * default, a capture of one, or the output of a DequantizeLinear of one whose only
 * reader is one node. */
bool gl_tp_is_constant(const gl_value *v);

/* ---- rewrite helpers for handlers' apply (transpose_rewrite.c) ------------------------------------------ */

/* Values of a constant int32/int64 tensor (malloc'd); false when v is not one. */
bool gl_tp_const_ints(const gl_value *v, int64_t **vals, size_t *n);
/* Axes of a node: the INTS attribute `attr` before opset `input_since`, else constant
 * input `slot`. *present is false when absent (attribute unset or input omitted);
 * false returned when present but not readable (non-constant input). vals malloc'd. */
bool gl_tp_read_axes(const gl_tp_run *run, const gl_node *n, const char *attr, size_t slot,
                     int64_t input_since, int64_t **vals, size_t *count, bool *present);
/* A node standing in for run->for_node (provenance and decision set), named after it. */
gl_node *gl_tp_add_node(gl_tp_run *run, const char *op, gl_value *const *inputs,
                        size_t n_inputs, size_t n_outputs);
/* A new 1-D int64 (or int32 when dt says so) constant. */
gl_value *gl_tp_add_ints(gl_tp_run *run, const char *hint, const int64_t *vals, size_t n,
                         gl_dtype dt);
/* Replace input `slot` of n by that value transposed by `by` (rank entries): cancels a
 * Transpose above, composes with it, reuses an equal Transpose, transposes a constant in
 * place (other readers get the inverse Transpose) or adds a Transpose. */
gl_status gl_tp_transpose_input(gl_tp_run *run, gl_node *n, size_t slot, const int64_t *by,
                                int rank);
/* Each of a->inputs transposed by a->perm_inv. */
gl_status gl_tp_transpose_inputs(gl_tp_args *a);
/* Replace input `slot` by it with size-1 dims inserted at `axes` (normalized). */
gl_status gl_tp_unsqueeze_input(gl_tp_run *run, gl_node *n, size_t slot, const int64_t *axes,
                                size_t n_axes);
/* Put a Transpose with `perm` after every output of n (nothing for an identity perm);
 * n's outputs get the un-transposed shapes. */
gl_status gl_tp_transpose_outputs(gl_tp_run *run, gl_node *n, const int64_t *perm, int rank);
/* Input `slot`, a 1-D per-axis list (pads, repeats, sizes), becomes
 * list[idx[0]], list[idx[1]], ...: a new constant, or a Gather. */
gl_status gl_tp_permute_list_input(gl_tp_run *run, gl_node *n, size_t slot,
                                   const int64_t *idx, size_t n_idx);
/* Input `slot`, a list of axis numbers, becomes perm[axes] (Gather with the perm when not
 * constant; negative axes work too since Gather wraps them). */
gl_status gl_tp_remap_axes_input(gl_tp_run *run, gl_node *n, size_t slot, const int64_t *perm,
                                 int rank);
/* Remove n when nothing reads its outputs and none is a graph output. */
gl_status gl_tp_remove_if_dead(gl_tp_run *run, gl_node *n);
/* The Transpose `second` (fed by `first`) composed: cancelled when the composition is the
 * identity (output handed to first's input, names kept), else merged into one Transpose
 * with `node_perm` applied after first's perm. `second` may be a Reshape that acts as a
 * Transpose with node_perm. */
gl_status gl_tp_merge_transposes(gl_tp_run *run, gl_node *first, gl_node *second,
                                 const int64_t *node_perm, int rank);
/* Dims of t (a tensor value's shape) permuted: dim i = old dim perm[i]. */
void gl_tp_shape_permute(gl_shape *s, const int64_t *perm, int rank);

/* ---- shared by the sweep and the rewrites (transpose_rewrite.c) ---------------------- */

typedef struct gl_tp_quant_info {
    bool per_axis;
    int64_t axis; /* normalized; per-axis only */
} gl_tp_quant_info;

/* Q/DQ live in ai.onnx and in ONNX Runtime's com.microsoft. */
bool gl_tp_is_qdq_op(const gl_node *n, const char *op);
bool gl_tp_is_transpose(const gl_node *n);
/* A constant of this graph whose bytes the pass may change: not a graph input (even a
 * frozen one keeps its declared shape), not a capture. */
bool gl_tp_local_constant(const gl_graph *g, const gl_value *v);
/* The tensor of a constant, or of the outer constant a capture reads. */
const gl_tensor *gl_tp_constant_tensor(const gl_value *v);
/* Drop a constant nothing reads any more (the pass replaced it). */
void gl_tp_remove_constant_if_unused(gl_tp_run *run, gl_value *v);
/* An internal error naming the node being rewritten (or the graph). */
gl_status gl_tp_internal(const gl_tp_run *run, const char *what);
/* Transpose the tensor's bytes (copy-on-write: shared bytes are copied first). */
gl_status gl_tp_tensor_transpose(gl_tensor *t, const int64_t *perm, int rank);
/* Make n's output `slot` value be `x` instead (the node goes afterwards): readers switch
 * over; a graph output keeps its name by moving to x's producer, or failing that, to an
 * Identity of x. n is removed, and so is `also` (the node n read) when that is dead. */
gl_status gl_tp_bypass(gl_tp_run *run, gl_node *n, gl_value *x, gl_node *also);
/* Per-tensor (scalar or one-element scale) or per-axis; false for what the pass does
 * not rewrite: blocked quantization, unknown scale shape, bad axis. */
bool gl_tp_quant_info_of(const gl_node *q, gl_tp_quant_info *qi);
/* A DequantizeLinear producing v from a local constant, v read by one node only: the
 * pass may change that constant as if the DQ were not there. */
gl_node *gl_tp_dq_of_constant(const gl_graph *g, const gl_value *v);
/* v has exactly one use (one node in one slot: not Mul(x, x)) and nothing else sees it:
 * not a graph output, not read by a subgraph. Stricter than gl_value_single_reader. */
bool gl_tp_sole_use(const gl_value *v);
/* Set a Q or DQ node's attributes as the opset allows (axis exists from 13). */
void gl_tp_set_quant_axis(gl_tp_run *run, gl_node *n, const gl_tp_quant_info *qi);
/* DQ -> next (a Transpose or Unsqueeze the pass added) becomes DQ -> next -> Q -> DQ with
 * the DQ's scale and zero point: the unit around the op the DQ feeds stays whole. */
gl_status gl_tp_make_qdq_unit(gl_tp_run *run, gl_node *dq);
/* The Reshape target that a Transpose moving only size-1 dims amounts to: known dims as
 * numbers, a dim still at its place as 0 (copy), at most one other as -1. */
bool gl_tp_reshape_target(const gl_shape *in, const int64_t *perm, int rank, int64_t *shape);

#endif

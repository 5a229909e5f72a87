/* fusion.h — the `fusion` pass, inside: the rule table's row and what the pass and its
 * tests read from it.
 *
 * A rule is a chain: a head op, then followers, each reading the previous member's
 * first output. A step of the chain is a set of ops (or a class: oneDNN's eltwise
 * post-ops, its binary post-ops) with a repetition, and flags for what the target needs
 * of that step. A group found by a rule becomes one node calling a model-local function
 * of domain graphlab.fused whose body is the group's nodes (fusion.c), or, for
 * ONNX Runtime's MatMul + Add of rank 2, one ai.onnx Gemm.
 */
#ifndef GL_FUSION_H
#define GL_FUSION_H

#include "passes/group.h"
#include "passes/passes.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GL_FU_MAX_STEPS 8
/* The longest chain the pass walks: above every rule's maximum and the target's post-op
 * limit (oneDNN's 32), so a longer candidate is seen whole and refused, never cut. */
#define GL_FU_MAX_CHAIN 40
/* The most inputs and outputs a member may have (Conv, Clip, Gemm: 3 inputs;
 * BatchNormalization: 5; LayerNormalization: 3 outputs); a node past them is refused
 * (check_node in fusion.c). A Concat's inputs are the target's to limit
 * (gl_target.max_concat_parts: the parts its split kernels take, oneDNN's 8), up to this
 * room. */
#define GL_FU_MAX_INPUTS 16
#define GL_FU_MAX_OUTPUTS 3

typedef enum gl_fu_rep {
    GL_FU_ONE,  /* exactly one */
    GL_FU_OPT,  /* zero or one */
    GL_FU_STAR, /* zero or more */
    GL_FU_PLUS, /* one or more */
} gl_fu_rep;

typedef enum gl_fu_class {
    GL_FU_OPS,     /* the ops listed in `ops` */
    GL_FU_ELTWISE, /* an op oneDNN has as an eltwise post-op */
    GL_FU_BINARY,  /* Add Sub Mul Div Max Min: a binary (or sum) post-op */
    GL_FU_POST,    /* either */
} gl_fu_class;

enum {
    GL_FU_SCALAR = 1 << 0, /* binary: the other operand is one number (a scale) */
    GL_FU_MASK = 1 << 1,   /* binary: same shape, or broadcast over leading dims only */
    GL_FU_1X1 = 1 << 2,    /* Conv: 1x1, stride 1, no padding, group 1 */
    GL_FU_DW = 1 << 3,     /* Conv: depthwise 3x3, stride 1 or 2, padding 1 */
    GL_FU_RANK2 = 1 << 4,  /* MatMul of two rank-2 operands; Add of [N] or [M,N] */
    GL_FU_BIAS = 1 << 5,   /* binary: the other operand is a constant of the last dim */
    GL_FU_CAT_C = 1 << 6,  /* Concat: rank-4 tensors joined along the channels (axis 1) */
    /* Conv reading a channel Concat: 1x1, stride 1, no padding, group 1, constant
     * weights, at most as many output channels as input channels (it runs as one 1x1
     * convolution per Concat input, summed into one destination) */
    GL_FU_SPLIT_K = 1 << 7,
    /* A channel shuffle's Reshape [N,C,H,W] -> [N,g,C/g,H,W], Transpose [0,2,1,3,4],
     * Reshape back to [N,C,H,W]; a Slice of the shuffled channels (constant bounds,
     * step 1) */
    GL_FU_SHUFFLE = 1 << 8,
    /* The step takes every reader of the chain's value at once (each must be in the
     * step); its members end the chain and their outputs are the group's. */
    GL_FU_FANOUT = 1 << 9,
    /* BatchNormalization as the target's inference primitive (the running statistics):
     * not in training mode, Y its only output, X of rank 4 or 5. */
    GL_FU_INFER = 1 << 10,
};

typedef struct gl_fu_step {
    gl_fu_class cls;
    const char *ops; /* GL_FU_OPS: "MatMul graphlab.FusedMatMul" (domain.Op for others) */
    gl_fu_rep rep;
    unsigned flags;
} gl_fu_step;

typedef enum gl_fu_target {
    GL_FU_POST_OPS, /* one oneDNN primitive with post-ops (counted against 32) */
    GL_FU_UNIT,     /* several oneDNN primitives run as one unit */
    GL_FU_GEMM,     /* not a function: one ai.onnx Gemm */
} gl_fu_target;

typedef struct gl_fu_rule {
    const char *name;   /* the decision's rule: "conv-activation" */
    const char *fused;  /* the function's name before its counter; NULL: from the ops */
    const char *origin; /* where the row comes from: "seed 004", "ONNX Runtime ..." */
    gl_fu_step steps[GL_FU_MAX_STEPS];
    size_t n_steps;
    size_t max_ops;
    gl_fu_target target;
    const char *kernel; /* for people: how the target runs it */
} gl_fu_rule;

/* The table (fusion_rules.c), in priority order: at one head the candidate with the
 * most nodes wins, ties go to the earlier row. */
const gl_fu_rule *gl_fu_rules(size_t *count);
/* Which rules may take a node as their head, by its op (domain, type): an index of the
 * table's head steps, built from it, so that a node is offered only to those rules (the
 * rest would refuse it at their first step). A superset: the rules still check. */
#define GL_FU_MAX_HEADS 32 /* distinct head ops; past it a rule is offered every node */
typedef struct gl_fu_head_key {
    const char *domain, *op; /* into the table's op lists (not terminated) */
    size_t domain_len, op_len;
    uint64_t rules; /* bit r: rule r of gl_fu_rules */
} gl_fu_head_key;
typedef struct gl_fu_heads {
    gl_fu_head_key keys[GL_FU_MAX_HEADS];
    size_t n;
    uint64_t any; /* rules whose head step is a class of the target's (no op list) */
} gl_fu_heads;
void gl_fu_heads_init(gl_fu_heads *h);
uint64_t gl_fu_heads_of(const gl_fu_heads *h, const gl_node *n);
/* n's op is in the step's set. */
bool gl_fu_step_has(const gl_fu_step *s, const gl_node *n);
/* oneDNN post-ops n takes as a follower (HardSigmoid: linear then clip = 2; Cast: 0,
 * the destination's data type); -1 when n is no eltwise follower. */
int gl_fu_eltwise_post_ops(const gl_node *n);
bool gl_fu_is_binary(const gl_node *n);
/* Whether concat-conv1x1 can split Conv n over the inputs of the Concat it reads: NULL
 * when it can, else the constraint that refuses ("target" or "cost") with why[] saying
 * which value broke it (fusion.c; patterns' hoist-above-concat asks it too). */
const char *gl_fu_conv_split_refusal(const gl_node *n, char *why, size_t len);

/* fusion_trial.c: the members nodes[0..n) alone as a model returning the outputs
 * (out_owner[i], output out_index[i]); copy_ids[i] is the id of nodes[i]'s copy (names
 * may repeat; ids do not, and a clone keeps them). NULL (why set) when a value's type is
 * not known well enough to feed it. */
gl_model *gl_fu_trial_model(const gl_model *m, gl_node *const *nodes, size_t n,
                            gl_node *const *out_owner, const size_t *out_index, size_t n_out,
                            uint32_t *copy_ids, char *why, size_t len);
/* What makes the target's answer on a trial model: its ops, attributes, types, where
 * each value comes from and the small constants (parameters), not names or weights.
 * Equal signatures get one probe (the layers of a network repeat). */
uint64_t gl_fu_trial_signature(const gl_model *trial);

#endif

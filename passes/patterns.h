/* patterns.h — the `patterns` pass, inside: the rule table's row, what a rule's check
 * returns, and the helpers the rule files share.
 *
 * A rule is found from its anchor, an op that is rare outside the pattern (Erf, Tanh,
 * Sigmoid, HardSigmoid, ReduceMean, BatchNormalization; Mul/Add after a Conv; a Concat
 * read by a per-channel op). Its check edits nothing and says one of three things:
 *  - NONE: the anchor is not at the heart of this pattern at all (a Sigmoid whose output
 *    no Mul multiplies with the Sigmoid's input): nothing is recorded;
 *  - REFUSE: it looks like the pattern but one of the rule's conditions fails; `why`
 *    says which with the numbers found ("Mul 'm' multiplies by 0.49, expected 0.5"),
 *    and the pass records the refusal;
 *  - MATCH: every node the rewrite removes, the values the replacement reads, and the
 *    constants found, for the decision and for apply.
 * apply then makes the whole rewrite and fails only on a bug.
 */
#ifndef GL_PATTERNS_H
#define GL_PATTERNS_H

#include "passes/passes.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How far a constant may be from the value a rule expects (relative): exporters write
 * sqrt(2), 1/sqrt(2) and sqrt(2/pi) rounded to float or to a few digits. */
#define GL_PT_TOL 1e-4
/* LayerNormalization's epsilon: what exporters write (1e-12 .. 1e-5) and some room. */
#define GL_PT_MAX_EPS 1e-2

#define GL_PT_MAX_NODES 16
#define GL_PT_MAX_NUMBERS 8

typedef enum gl_pt_verdict { GL_PT_NONE, GL_PT_REFUSE, GL_PT_MATCH } gl_pt_verdict;

typedef struct gl_pt_number {
    const char *key; /* static */
    double value;
} gl_pt_num;

typedef struct gl_pt_match {
    gl_node *nodes[GL_PT_MAX_NODES]; /* examined; on a match, every node that goes away */
    size_t n_nodes;
    gl_node *last;       /* the node whose output the replacement produces */
    gl_value *in[3];     /* the replacement's inputs: x (, gamma, beta) */
    size_t n_in;
    const char *op;      /* the replacement: op and domain ("" or "graphlab") */
    const char *domain;
    const char *approximate; /* ai.onnx Gelu: its attribute; NULL: none */
    bool layernorm;      /* LayerNormalization: axis and epsilon below */
    int64_t axis;
    float epsilon;
    gl_node *conv;       /* folds: the Conv that absorbs nodes[] */
    char variant[96];    /* which export form matched ("Div by sqrt(2); Mul(x, 0.5) last") */
    bool hoist;          /* the rewrite moves m->last above nodes[0] instead of replacing */
    bool forceable;      /* REFUSE by a cost only: --set patterns.force=ID applies it */
    gl_pt_num numbers[GL_PT_MAX_NUMBERS];
    size_t n_numbers;
    char done[200];      /* MATCH: the applied record's reason, when the rule writes it */
    char why[512];       /* REFUSE: the reason (as long as a decision's) */
} gl_pt_match;

typedef struct gl_pt_ctx {
    gl_graph *g;
    gl_model *m;
    int64_t opset; /* ai.onnx version of the model */
} gl_pt_ctx;

typedef struct gl_pt_rule {
    const char *name;        /* "gelu-erf": the decision's rule */
    const char *anchor;      /* ai.onnx op type the check starts from */
    const char *pattern;     /* for people: "x * 0.5 * (1 + Erf(x / sqrt(2)))" */
    const char *replacement; /* for people: "Gelu (ai.onnx from opset 20, else graphlab)" */
    gl_pt_verdict (*check)(const gl_pt_ctx *c, gl_node *anchor, gl_pt_match *m);
    gl_status (*apply)(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision);
} gl_pt_rule;

/* The table (patterns.c), for listings and tests. */
const gl_pt_rule *gl_pt_rules(size_t *count);

/* ---- checks (patterns.c) ----------------------------------------------------------- */

/* Return from a check unless `expr` (a verdict) is a match. */
#define GL_PT_CHECK(expr)                                                                 \
    do {                                                                                  \
        gl_pt_verdict v_ = (expr);                                                        \
        if (v_ != GL_PT_MATCH)                                                            \
            return v_;                                                                    \
    } while (0)

/* Record why, return GL_PT_REFUSE. */
gl_pt_verdict gl_pt_refuse(gl_pt_match *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void gl_pt_number(gl_pt_match *m, const char *key, double value);
/* Add n to the examined nodes (once). */
void gl_pt_add(gl_pt_match *m, gl_node *n);
/* The producer of v when it is an ai.onnx `op` with its first output, else NULL. */
gl_node *gl_pt_producer(const gl_value *v, const char *op);
/* A node that reads v and is an ai.onnx `op` (the first such), or NULL. */
gl_node *gl_pt_reader(const gl_value *v, const char *op);
/* A two-input node reading v: its other input (NULL when n does not read v in slot 0 or
 * 1, or has not two inputs). */
gl_value *gl_pt_other(const gl_node *n, const gl_value *v);
/* The tensor of a constant: an initializer that is not an overridable input, the output
 * of a Constant node with a `value`, or a subgraph's capture of either. NULL otherwise. */
const gl_tensor *gl_pt_const(const gl_value *v);
/* A constant of one float element, no higher in rank than `x` (so broadcasting it
 * changes no shape), whose value is within GL_PT_TOL of `want` (relative). MATCH, or a
 * refusal naming node n and `what` ("the divisor") with the value found. `key` names
 * the number in the decision. */
gl_pt_verdict gl_pt_expect_const(gl_pt_match *m, const gl_node *n, const gl_value *c,
                                 const gl_value *x, const char *what, const char *key,
                                 double want);
/* got is within GL_PT_TOL of want (relative); else a refusal naming node n and `what`
 * with both values. `key` names the number in the decision. */
gl_pt_verdict gl_pt_expect_near(gl_pt_match *m, const gl_node *n, const char *what,
                                const char *key, double got, double want);
/* v as the shortest text that reads back as the same float ("0.49", "1e-05"). */
void gl_pt_format(double v, char *buf, size_t len);
/* The one element of a constant (any numeric dtype) in *v; false otherwise. */
bool gl_pt_scalar(const gl_value *c, double *v);
/* The ints attribute `name` of n is absent or every value is v (strides, dilations, pads,
 * kernel_shape of a window). */
bool gl_pt_ints_all(const gl_node *n, const char *name, int64_t v);
/* x is float32 (the rules' dtype); else a refusal naming the dtype found. */
gl_pt_verdict gl_pt_expect_float(gl_pt_match *m, const gl_value *x);
/* The outputs of every matched node but m->last are read only by matched nodes and are
 * not graph outputs; else a refusal naming the value and its outside reader. */
gl_pt_verdict gl_pt_expect_private(gl_pt_match *m);

/* ---- rewrites (patterns.c) --------------------------------------------------------- */

/* A copy of n (its plain attributes, its provenance under `decision`) named after `hint`,
 * reading inputs[0..n_in), its output typed as `like` with dims[axis] taken from `dim`:
 * the one node of a rewrite that moves an op across another which changes one dim (a
 * pool before a 1x1 conv: the channels; an op into each Concat input: the axis). NULL
 * when a copy fails. */
gl_node *gl_pt_copy_node(gl_pt_ctx *c, const gl_node *n, const char *hint,
                         gl_value *const *inputs, size_t n_in, const gl_value *like, int axis,
                         const gl_dim *dim, int64_t decision);

/* The matched nodes become one node m->op (m->domain) reading m->in, producing what
 * m->last produced; constants left unread go too. */
gl_status gl_pt_replace(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision);
/* Remove these nodes (their outputs unread, or read only among them) and then the
 * constants they read that nothing reads any more. */
gl_status gl_pt_remove_nodes(gl_pt_ctx *c, gl_node *const *nodes, size_t n);
/* Drop v when nothing reads it any more and it is a constant of c->g (an initializer
 * that is not an input or output, or the output of a Constant node). */
gl_status gl_pt_drop_if_unused(gl_pt_ctx *c, gl_value *v);
/* A DequantizeLinear like dq (its scale, zero point and attributes) reading x instead;
 * `axis` >= 0 replaces its axis (the scale's dim moved with the data). Provenance from
 * srcs. NULL on failure. Used by the passes that move a Transpose through a DQ of a
 * constant or past one (constant-folding, fold-transpose). */
gl_node *gl_pt_dequantize_again(gl_graph *g, const gl_node *dq, gl_value *x, int axis,
                                 gl_node *const *srcs, size_t n_srcs, int64_t decision);

/* ---- the graphlab ops as functions (patterns_functions.c) ------------------------- */

/* The model imports domain graphlab and has the function of `op` (Gelu, GeluTanh,
 * Silu, HardSwish, LayerNormalization), its body written for the model's ai.onnx
 * opset. GL_ERR_INTERNAL for an op without a body. */
gl_status gl_pt_ensure_function(gl_model *m, const char *op);
/* The lowest ai.onnx opset the body of `op` can be written in (LayerNormalization's
 * reads its epsilon through Constant's value_float: 12). */
int64_t gl_pt_function_min_opset(const char *op);

/* ---- the rules' checks and applies (patterns_act.c, patterns_norm.c, patterns_fold.c) */

gl_pt_verdict gl_pt_check_gelu_erf(const gl_pt_ctx *c, gl_node *erf, gl_pt_match *m);
gl_pt_verdict gl_pt_check_gelu_tanh(const gl_pt_ctx *c, gl_node *tanh_node, gl_pt_match *m);
gl_pt_verdict gl_pt_check_silu(const gl_pt_ctx *c, gl_node *sigmoid, gl_pt_match *m);
gl_pt_verdict gl_pt_check_hardswish(const gl_pt_ctx *c, gl_node *hsig, gl_pt_match *m);
gl_pt_verdict gl_pt_check_layernorm(const gl_pt_ctx *c, gl_node *mean, gl_pt_match *m);
gl_pt_verdict gl_pt_check_fold_bn(const gl_pt_ctx *c, gl_node *bn, gl_pt_match *m);
gl_pt_verdict gl_pt_check_fold_mul(const gl_pt_ctx *c, gl_node *mul, gl_pt_match *m);
gl_pt_verdict gl_pt_check_fold_add(const gl_pt_ctx *c, gl_node *add, gl_pt_match *m);
gl_status gl_pt_apply_fold(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision);

/* ---- a per-channel op moved above the Concat it reads (patterns_concat.c) ---------- */

gl_pt_verdict gl_pt_check_hoist(const gl_pt_ctx *c, gl_node *concat, gl_pt_match *m);
gl_status gl_pt_apply_hoist(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision);

/* ---- an average pooling run before the 1x1 convolution it reads (patterns_pool.c) -- */
gl_pt_verdict gl_pt_check_pool_first(const gl_pt_ctx *c, gl_node *pool, gl_pt_match *m);
gl_status gl_pt_apply_pool_first(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision);

/* ---- nodes that compute nothing; a Pad folded into its reader (patterns_noop.c) ---- */

/* Identity, Dropout at inference, Cast to the input's own type. */
gl_pt_verdict gl_pt_check_noop(const gl_pt_ctx *c, gl_node *n, gl_pt_match *m);
gl_status gl_pt_apply_noop(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision);
/* A Pad of zeros (removed), or one a Conv, AveragePool or MaxPool takes in its pads. */
gl_pt_verdict gl_pt_check_pad(const gl_pt_ctx *c, gl_node *pad, gl_pt_match *m);
gl_status gl_pt_apply_pad(gl_pt_ctx *c, const gl_pt_match *m, int64_t decision);

#endif

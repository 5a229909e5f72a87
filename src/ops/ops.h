/* ops.h — the op registry: one entry per (domain, op type, since-version).
 *
 * Each op declares in one place what it does to types and shapes (infer), how it
 * computes in plain C (kernel, the ground truth every backend is compared with), and
 * flags that passes read (random, layout-sensitive, ...). The transpose handler is not
 * here: elementwise and broadcasting ops get transpose-push's generic handlers by their
 * flags, ops with axes a row of passes/transpose_handlers.c; what fuses is the
 * backend's word (exec/target.h). Entries live in one file per family
 * (src/ops/elementwise.c, nn.c, ...), each exporting a gl_op_family; registry.c lists the
 * families. Adding an op is its entry in its family's table plus its rows in arity.def
 * and (ai.onnx ops) attrs.def, which tests/test_arity.c and tests/test_attrs.c demand;
 * README.md's "Extending graphlab" has the whole checklist.
 *
 * Versions: an entry covers opsets from `since` up to the next entry of the same op.
 * gl_op_lookup(domain, op, opset) picks the entry with the largest since <= opset.
 */
#ifndef GL_OPS_H
#define GL_OPS_H

#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- shape and type inference ------------------------------------------------------ */

typedef struct gl_infer_ctx gl_infer_ctx;

struct gl_infer_ctx {
    const gl_node *node;
    const gl_model *model;
    int64_t opset;            /* version of the node's domain */
    const char *where;        /* "m.onnx: node 'c1' (Conv)" for messages */
    size_t n_inputs;
    const gl_type *const *in_types;     /* NULL entries: omitted inputs */
    const gl_tensor *const *in_values;  /* constant inputs (initializers, folded values),
                                           NULL when not known: shape functions that depend
                                           on data (Reshape's shape, Slice's starts) use it */
    size_t n_outputs;
    gl_type *out_types;       /* filled by the function; start as GL_TYPE_NONE */
    /* For ops with subgraphs (If/Loop/Scan): infer a body given the types of its inputs;
     * writes the types of its outputs. */
    gl_status (*infer_body)(gl_infer_ctx *c, const gl_graph *body, const gl_type *in_types,
                            size_t n_in, gl_type *out_types, size_t n_out);
    void *user;               /* the shape-inference pass's state */
};

/* An inference function returns GL_OK having filled what it could (unknown stays
 * unknown: never invent a dim), or GL_ERR_INPUT with a message (via gl_fail, starting
 * with c->where) when the node is invalid: wrong rank, mismatched dims, bad attribute. */
typedef gl_status (*gl_infer_fn)(gl_infer_ctx *c);

/* ---- kernels ---------------------------------------------------------------------- */

typedef struct gl_kernel_ctx gl_kernel_ctx;

struct gl_kernel_ctx {
    const gl_node *node;
    const gl_model *model;
    int64_t opset;
    const char *where;          /* "m.onnx: node 'c1' (Conv)" */
    size_t n_inputs;
    const gl_tensor *const *in; /* NULL entries: omitted inputs */
    size_t n_outputs;
    gl_tensor **out;            /* the kernel creates out[i] (gl_tensor_new) for every i
                                   where node->outputs[i] != NULL; the caller owns them */
    /* Run a subgraph (If/Loop/Scan bodies) with the given inputs; outer values it reads
     * are resolved by the executor. out[] receives n_out new tensors (caller frees). */
    gl_status (*run_body)(gl_kernel_ctx *k, const gl_graph *body,
                          const gl_tensor *const *inputs, size_t n_in, gl_tensor **out,
                          size_t n_out);
    void *exec;                 /* the executor's state */
    /* Where gl_out_new takes output i's bytes from (NULL: a new zeroed buffer). The
     * executor lends buffers that come back run after run: zeroed, as gl_tensor_new's
     * are, unless `whole` (the caller writes every byte: a oneDNN destination). */
    gl_buffer *(*alloc)(gl_kernel_ctx *k, size_t i, size_t bytes, bool whole);
    /* Output i written over input tensor x: x's buffer (one more reference), when the
     * executor allows it — x is the frame's own tensor of a value this node reads last,
     * nothing else holds its buffer, no other input of the node is that value, the
     * output is not a graph output, and x has `bytes`. NULL: not allowed (or no
     * executor); lend with alloc. The kernel must read each element of x before it
     * writes over it. */
    gl_buffer *(*alloc_over)(gl_kernel_ctx *k, size_t i, const gl_tensor *x, size_t bytes);
    /* What a backend spent converting layouts inside run (oneDNN reorders of inputs):
     * added up by the backend, read by the executor's timing. */
    uint64_t reorder_ns;
    unsigned reorders;
    void *backend_ctx;          /* the plan's context of the backend that runs the node */
};

/* A kernel returns GL_OK with every output set, or an error with a message starting
 * with k->where (bad input data, e.g. an index out of range, is GL_ERR_INPUT). */
typedef gl_status (*gl_kernel_fn)(gl_kernel_ctx *k);

/* ---- the registry -------------------------------------------------------------------- */

enum gl_op_flags {
    GL_OP_RANDOM = 1u << 0,           /* output depends on an RNG: never fold, never cse */
    GL_OP_LAYOUT_SENSITIVE = 1u << 1, /* NCHW-specific: stops transpose push-down */
    GL_OP_ELEMENTWISE = 1u << 2,      /* one output element per input element (unary) */
    GL_OP_BROADCAST = 1u << 3,        /* n-ary numpy-broadcasting elementwise */
    GL_OP_NO_FOLD = 1u << 4,          /* never constant-folded (e.g. output grows huge) */
    GL_OP_CONTROL_FLOW = 1u << 5,     /* holds subgraphs */
};

typedef struct gl_op_def {
    const char *domain;  /* "" for ai.onnx */
    const char *op;
    int since;           /* first opset version this entry covers */
    gl_infer_fn infer;   /* NULL: types unknown (the declared value_info is used) */
    gl_kernel_fn kernel; /* NULL: cannot run (reported as unsupported) */
    unsigned flags;
} gl_op_def;

typedef struct gl_op_family {
    const char *name;    /* "elementwise" */
    const gl_op_def *ops;
    size_t n_ops;
} gl_op_family;

/* The entry for a node's op at the model's opset for its domain; NULL if unknown. */
const gl_op_def *gl_op_lookup(const char *domain, const char *op, int64_t opset);
const gl_op_def *gl_op_for_node(const gl_model *m, const gl_node *n);
/* Every entry (for listings and tests), in family order. */
const gl_op_def *gl_op_at(size_t i);
size_t gl_op_count(void);
/* "m.onnx: node 'c1' (Conv)" into buf. */
void gl_node_where(const gl_model *m, const gl_node *n, char *buf, size_t len);

#endif

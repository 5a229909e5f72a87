/* exec.h — running a graph on CPU.
 *
 * A plan is built once for a model: every node gets its op entry (an unknown op is an
 * error naming the node) and a backend. Backends claim the nodes they can run (oneDNN:
 * Conv, MatMul, Gemm in float32); everything else falls back to the reference kernels
 * of the op registry. The assignment — backend and implementation per node — is
 * printable: the "operator replacement" step of graph compilers made explicit.
 *
 * Values live in a table indexed by value->index; a tensor is freed after its last
 * use. Subgraphs (If/Loop/Scan bodies) run through the same executor, their captures
 * read from the enclosing frame. Calls to model-local functions run the function body:
 * its nodes are looked up with the function's opset imports, and a body attribute
 * that refers to a caller attribute (ref_attr_name) takes the caller's value (or is
 * absent when the caller does not set it). Plans for subgraphs and function bodies are
 * built with the plan, so an unknown op anywhere is reported by gl_exec_create.
 *
 * The order of execution is a topological order of the graph (the file's order when it
 * is one), so an unsorted but acyclic graph runs too.
 */
#ifndef GL_EXEC_H
#define GL_EXEC_H

#include "ir/graph.h"
#include "ir/limits.h"
#include "ops/ops.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct gl_exec gl_exec;

/* ---- backends ------------------------------------------------------------------------- */

typedef struct gl_backend {
    const char *name; /* "ref", "dnnl" */
    /* Whether this backend runs the node (types/shapes from the IR; may be unknown). */
    bool (*claims)(const gl_model *m, const gl_node *n);
    /* Run the node. `state` is a per-node slot the backend may fill on first run
     * (primitives built for concrete shapes; rebuilt when shapes change). */
    gl_status (*run)(gl_kernel_ctx *k, void **state);
    void (*release)(void *state); /* may be NULL: nothing to release */
    /* Implementation name for the assignment listing (e.g. "jit:avx2", "gemm"); `state`
     * is NULL before the first run. */
    const char *(*impl)(const void *state);
    /* Thread count for what the backend runs (gl_exec_options.threads > 0), set when a
     * plan is created, before the backend builds anything for it; NULL: ignored. */
    void (*set_threads)(int threads);
} gl_backend;

/* The reference backend: claims every node whose op has a registry kernel, and runs
 * that kernel (looked up at the opset the executor passes in k->opset). */
const gl_backend *gl_backend_ref(void);
const gl_backend *gl_backend_dnnl(void); /* NULL when built without oneDNN */
/* oneDNN primitives built so far in this process (tests and benchmarks: a plan builds
 * once per node and input shapes, not once per run). */
size_t gl_backend_dnnl_builds(void);
/* "ref" or "dnnl"; NULL for an unknown name or a backend not built in. */
const gl_backend *gl_backend_find(const char *name);

/* ---- plans and runs ---------------------------------------------------------------------- */

typedef struct gl_exec_options {
    const char *backend; /* "ref" (default) or "dnnl" */
    int threads;         /* 0: the backend's default. The reference kernels are
                            single-threaded and ignore it. */
    /* Check only the dtype of inputs, not their declared shape. For the ONNX
     * conformance runner: onnx's own runner does not check shapes, and a few cases feed
     * data whose shape disagrees with the declared one (CastLike's `like`). */
    bool no_shape_check;
    /* Bounds of one run (ir/limits.h), so that no model can hang it or take the
     * machine's memory. No tensor may take more than max_memory bytes, nor all tensors
     * alive together (the given inputs included); a tensor over it is refused before it is
     * allocated (0: gl_limits_default_bytes()). Loop and Scan iterations, all loops of
     * the run together, stop past max_iterations (0: GL_EXEC_MAX_ITERATIONS). Setting
     * *cancel (another thread, a signal handler) stops the run at the next node or loop
     * iteration with GL_ERR_CANCELLED (NULL: not cancellable). */
    size_t max_memory;
    uint64_t max_iterations;
    const atomic_bool *cancel;
} gl_exec_options;

/* A simple loop body runs about 700,000 iterations a second here: at 2^24, an endless
 * loop ends in about half a minute, and real loops (a token per iteration) fit. */
#define GL_EXEC_MAX_ITERATIONS ((uint64_t)1 << 24)

/* Build a plan for `m` (not owned; must outlive the plan and not change while it
 * lives). `o` may be NULL. GL_ERR_INPUT for an unknown backend, GL_ERR_UNSUPPORTED
 * naming node, op and domain for an op that is unknown or has no kernel (and is not a
 * model-local function), GL_ERR_INPUT for a cycle or recursive function calls. */
gl_status gl_exec_create(const gl_model *m, const gl_exec_options *o, gl_exec **out);
void gl_exec_free(gl_exec *e);

/* Run with inputs given in graph-input order (n_inputs == m->graph->n_inputs; a NULL
 * entry uses the input's default initializer, or is an error naming the input). Inputs
 * are checked against the declared dtype and shape (known dims must match; a symbolic
 * dim binds to the same value across inputs): GL_ERR_INPUT naming the input, the dim,
 * what was expected and what was given. outputs[] receives one new tensor per graph
 * output (n_outputs == m->graph->n_outputs; caller frees; its name is the output's
 * name). On failure outputs[] is all NULL. The inputs are only read. */
gl_status gl_exec_run(gl_exec *e, const gl_tensor *const *inputs, size_t n_inputs,
                      gl_tensor **outputs, size_t n_outputs);

/* What the last gl_exec_run held: the most tensors (and their bytes) alive at once in
 * the frames of the run, graph inputs and outputs included, initializers not. Freeing
 * after the last use keeps this at the width of the graph, not its length. */
typedef struct gl_exec_stats {
    size_t peak_tensors;
    size_t peak_bytes;
    size_t nodes_run; /* kernel calls, subgraph and function-body nodes included */
} gl_exec_stats;
void gl_exec_get_stats(const gl_exec *e, gl_exec_stats *s);

/* Per-node assignment, one line per node: op, 'name', backend, implementation
 * ("Conv  'c1'  dnnl  jit:avx2"); subgraph and function-body nodes follow their
 * node, indented. */
void gl_exec_print_plan(const gl_exec *e, FILE *f);

/* Evaluate one node with the reference kernel on constant inputs (constant folding,
 * shape-inference fixed points). outputs[] receives node->n_outputs tensors (NULL for
 * omitted outputs). Subgraph ops are evaluated too: values their bodies read from
 * outside must be constants (initializers that are not overridable inputs). Calls of
 * model-local functions run the body. Under the thread's current run limits when there
 * are some, else under the default memory limit and GL_EVAL_MAX_ITERATIONS: folding is
 * optional, and a loop that runs longer is left to run time. */
#define GL_EVAL_MAX_ITERATIONS ((uint64_t)1 << 16)
gl_status gl_eval_node(const gl_model *m, const gl_node *n, const gl_tensor *const *inputs,
                       gl_tensor **outputs);

#endif

/* exec.h — running a graph on CPU.
 *
 * A plan is built once for a model: every node gets its op entry (an unknown op is an
 * error naming the node) and a backend. The chosen backend is offered each node first —
 * a call of a model-local function (a fused group saved as a function) is offered whole,
 * before it is expanded into its body — and what it does not claim runs on the
 * reference kernels of the op registry (or, for a function call, as its body). The plan
 * is data (gl_exec_plan_at): per node the backend, the implementation, the layouts of
 * its inputs and outputs, the layout conversions it costs, and why a node did not go to
 * the chosen backend: the "operator replacement" step of graph compilers made explicit.
 *
 * Each plan owns its backends' contexts (oneDNN: engine, stream, layout policy, the
 * primitives built for the shapes seen, weights reordered once) and the buffers its
 * outputs are written to, lent again on every run: a plan run a second time with the
 * same input shapes allocates no tensor memory and reorders no constant.
 *
 * Tensors between two nodes of a backend may stay in that backend's layout
 * (gl_tensor.layout: oneDNN's blocked nChw16c or nhwc); the executor converts such a
 * tensor to plain row-major only where a consumer needs it (a reference kernel, a graph
 * output, an observer asking for it), once per value and run, and counts the
 * conversion in the plan.
 *
 * An observer sees every node begin and end, with the node's outputs and its wall time
 * (layout conversions included and also given apart): profiling, the Chrome trace,
 * intermediate comparison and the workbench's run view hang off it.
 *
 * Values live in a frame indexed by value->index; a tensor is released after its last
 * use. Subgraphs (If/Loop/Scan bodies) run through the same executor, their captures
 * read from the enclosing frame. A function body runs with the function's opset imports,
 * and a body attribute that refers to a caller attribute (ref_attr_name) takes the
 * caller's value (or is absent when the caller does not set it). Plans for subgraphs
 * and function bodies are built with the plan, so an unknown op anywhere is reported by
 * gl_exec_create.
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
#include <stdint.h>
#include <stdio.h>

typedef struct gl_exec gl_exec;
typedef struct gl_exec_options gl_exec_options;

/* ---- backends ------------------------------------------------------------------------- */

typedef struct gl_backend gl_backend;

/* A backend's own layout of a tensor's bytes (see gl_tensor.layout). Backends embed this
 * at the start of their layout records; the records live as long as the plan. */
typedef struct gl_tensor_layout {
    const gl_backend *owner; /* the backend that reads and converts it */
    const char *name;        /* "nChw16c", "nhwc": for plans and profiles */
} gl_tensor_layout;

/* What the plan shows of one node a backend runs (filled by gl_backend.describe). The
 * texts are never NULL ("" when there is nothing to say) and live as long as the plan:
 * static, or interned (util/text_pool.h) in the plan's pool or in the backend context's.
 * A row holds pointers: char arrays made every row of a 100k-node plan 472 bytes (issue
 * 23), and the texts repeat from node to node. */
typedef struct gl_plan_info {
    const char *impl;        /* "brg:avx512_core", "jit:uni", "ref" */
    const char *note;        /* why the node runs as it does when it is not the obvious way:
                              * "ref: ReLU on 96 elements (below the oneDNN threshold)",
                              * "reference kernel: auto_pad SAME_LOWER with dilations" */
    const char *in_layouts;  /* per input, comma separated: "nChw16c,plain,-" */
    const char *out_layouts;
    unsigned const_reorders; /* constants reordered (once, when built) */
    unsigned builds;         /* primitives built so far for this node */
    /* The backend's count of (re)builds of the node this info describes: describe may
     * return at once when it has not changed (it is called after every run). */
    unsigned generation;
} gl_plan_info;

/* The same as text of its own, for what outlives the plan it was read from (a profile's
 * cells): gl_plan_info_copy fills it. */
typedef struct gl_backend_info {
    char impl[96];
    char note[160];
    char in_layouts[96];
    char out_layouts[64];
    unsigned const_reorders, builds, generation;
} gl_backend_info;

void gl_plan_info_copy(const gl_plan_info *from, gl_backend_info *to);

/* A plan's scratch: bytes it keeps from run to run only to write them again before any
 * read (gl_exec_scratch): given to fn one range at a time. */
typedef void (*gl_scratch_fn)(void *arg, void *data, size_t bytes);
/* A slot's idle buffer as scratch (a lent one is someone's tensor: left alone). */
void gl_scratch_slot(const gl_buffer_slot *slot, gl_scratch_fn fn, void *arg);

struct gl_backend {
    const char *name; /* "ref", "dnnl" */
    /* The plan's context (NULL when the backend needs none): made when a plan is built,
     * before any claim, with the model and the options (threads, layout policy). */
    gl_status (*ctx_create)(const gl_model *m, const gl_exec_options *o, void **ctx);
    void (*ctx_free)(void *ctx);
    /* Whether this backend runs the node. For a call of a model-local function `fn` is
     * the function (its body is the group the node stands for), else NULL, and the node
     * has a reference kernel (the plan offers no other: the fallback exists). Types and
     * shapes come from the IR and may be unknown; the final word comes with the shapes
     * of the first run, when a backend may still send a node to the reference kernel
     * (and say why in describe). On refusal `why` may say why (may stay empty). */
    bool (*claims)(void *ctx, const gl_model *m, const gl_node *n, const gl_function *fn,
                   char *why, size_t why_len);
    /* Run the node. `state` is a per-node slot the backend may fill on first run
     * (primitives built for concrete shapes; rebuilt when shapes change). Inputs may
     * carry this backend's layouts; a backend that runs a node on the reference kernel
     * converts them first (to_plain). Outputs the backend makes in its own layout carry
     * it. k->backend_ctx is the plan's context. */
    gl_status (*run)(gl_kernel_ctx *k, void **state);
    void (*release)(void *state); /* may be NULL: nothing to release */
    /* What the plan shows; `state` is NULL before the first run. Called after every run
     * of the node: keep it cheap when nothing changed (info->generation). The texts it
     * sets must live as long as ctx (intern them there). May be NULL. */
    void (*describe)(void *ctx, const void *state, gl_plan_info *info);
    /* A new plain (row-major) tensor with the values of t, which carries one of this
     * backend's layouts, its bytes from `slot` (NULL: a new buffer). NULL (with a
     * message) on failure. */
    gl_tensor *(*to_plain)(void *ctx, const gl_tensor *t, gl_buffer_slot *slot);
    /* A line for the plan's header ("layout nhwc: 8 Concat on 4-D activations"); NULL. */
    void (*summary)(const void *ctx, char *buf, size_t len);
    /* The scratch of a node (its state) or, state NULL, of the plan's context: every
     * buffer it keeps between runs whose bytes its next run writes before it reads them
     * (outputs, per-run conversions; never constants converted at build). May be NULL:
     * none (the buffers then stay resident). */
    void (*scratch)(void *ctx, void *state, gl_scratch_fn fn, void *arg);
};

/* The reference backend: claims every node whose op has a registry kernel, and runs
 * that kernel (looked up at the opset the executor passes in k->opset). */
const gl_backend *gl_backend_ref(void);
const gl_backend *gl_backend_dnnl(void); /* NULL when built without oneDNN */
/* oneDNN primitives built so far in this process (tests and benchmarks: a plan builds
 * once per node and input shapes, not once per run). */
size_t gl_backend_dnnl_builds(void);
/* "ref" or "dnnl"; NULL for an unknown name or a backend not built in. */
const gl_backend *gl_backend_find(const char *name);

/* The order a plan runs g's nodes in (a call of a function is one node): a topological
 * order, the file's when it is one. *order (malloc'd, *count entries) borrows g's nodes.
 * GL_ERR_INPUT naming a node on a cycle. The memory plan's steps are positions in it. */
gl_status gl_exec_order(const gl_graph *g, const gl_node ***order, size_t *count);

/* ---- plans and runs ---------------------------------------------------------------------- */

struct gl_exec_options {
    const char *backend; /* "ref" (default) or "dnnl" */
    /* Tests and tools: this backend instead of the one `backend` names (NULL: none). */
    const gl_backend *custom_backend;
    int threads;         /* 0: the backend's default. The reference kernels are
                            single-threaded and ignore it. */
    /* oneDNN's layout for 4-D/5-D activations: "auto" (NULL: the plan decides by rule and
     * says so), "plain", "nhwc" or "blocked" (nChw8c/nChw16c, as oneDNN picks). */
    const char *layout;
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
    /* The reference backend allocates the intermediates of the model's graph from one
     * arena at the offsets of the model's memory plan (m->memory_plan, the memory-plan
     * pass) when it has one that fits the graph; true: as if it had none. */
    bool no_memory_plan;
    /* Test-only injections of the oneDNN backend, for tests of `bisect` (--set
     * dnnl.fault=NAME, dnnl.delay=NAME): after the node or fused group NAME runs on oneDNN,
     * 1.0 is added to every element of its first output (fault), or the run sleeps
     * GL_DNNL_DELAY_MS (delay; NAME@N: only in the first N plans of the process that reach
     * NAME). NULL: none. The reference backend ignores them; a node
     * oneDNN does not run is not touched. Copied by the backend. */
    const char *dnnl_fault, *dnnl_delay;
    /* --set dnnl.winograd=0: oneDNN's direct convolutions only (dn_conv.c). */
    bool dnnl_no_winograd;
    /* Weights mapped from a file (external data) of products of few rows are read where
     * they lie instead of packed (dn_matmul.c): set by profile, whose backends all hold
     * the model's weights at once, and by `run`'s plan of one run (gl_session_plan), for
     * which packing does not pay; other plans pack them and give the mapping back. */
    bool dnnl_weights_in_place;
    /* The batch of the run the plan is made for, where the model leaves it symbolic
     * (gl_inputs_batch; 0: not known, counted as 1): `--layout auto` weighs the layouts
     * at it (dn_cost.c), chosen when the plan is made, before any input is seen. */
    int64_t batch;
};

/* The leading dim of the first of `inputs` (in the order of g's inputs) whose declared
 * leading dim is not a number: the batch a run of them has where the model leaves it
 * symbolic. 0 when no input has a symbolic leading dim or none is given. */
int64_t gl_inputs_batch(const gl_graph *g, const gl_tensor *const *inputs, size_t n_inputs);

/* What --set dnnl.delay=NAME adds to a run: far above the noise of a small model's run. */
#define GL_DNNL_DELAY_MS 20

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
 * what was expected and what was given. outputs[] receives one new plain tensor per
 * graph output (n_outputs == m->graph->n_outputs; caller frees; its name is the
 * output's name); they stay valid after later runs. On failure outputs[] is all NULL.
 * The inputs are only read. */
gl_status gl_exec_run(gl_exec *e, const gl_tensor *const *inputs, size_t n_inputs,
                      gl_tensor **outputs, size_t n_outputs);

/* What the last gl_exec_run did. */
typedef struct gl_exec_stats {
    size_t peak_tensors;   /* most tensors alive at once in the frames of the run (graph
                            * inputs and outputs included, initializers not) ... */
    size_t peak_bytes;     /* ... and their bytes. Freeing after the last use keeps this
                            * at the width of the graph, not its length. */
    size_t nodes_run;      /* kernel calls, subgraph and function-body nodes included */
    size_t conversions;    /* tensors the executor converted to plain layout */
    size_t reorders;       /* layout conversions inside backends (oneDNN reorders of
                            * non-constant inputs) */
    size_t const_reorders; /* constants reordered: 0 once the plan is built for the
                            * shapes at hand (the weight cache) */
    size_t builds;         /* primitives built during the run: 0 once built for the
                            * shapes at hand */
    size_t arena_bytes;    /* the memory plan's arena (0: no plan used) */
    size_t arena_lent;     /* outputs placed at their planned offset, all runs so far ... */
    size_t arena_refused;  /* ... and those allocated apart (range busy or size differs) */
    size_t in_place;       /* outputs written over an input's bytes (alloc_over) */
} gl_exec_stats;
void gl_exec_get_stats(const gl_exec *e, gl_exec_stats *s);

/* The plan's scratch between runs (never during one): its nodes' output buffers, plain
 * copies of values held in a backend's layout, a backend's per-run conversions, the
 * memory plan's block; not the constants a backend converted at build, nor buffers out
 * with a caller (outputs still held). For a caller that holds several plans and runs
 * one at a time (`profile`): GL_SCRATCH_RELEASE gives the scratch's pages back to the
 * system — the buffers keep their addresses, their bytes read as zeros and come back
 * on the next write; GL_SCRATCH_FAULT makes them resident again now, so that the next
 * run does not spend its time in page faults. Whole pages only (a buffer's first and
 * last page may hold another allocation's bytes). Returns the bytes of the pages. */
typedef enum gl_scratch_op { GL_SCRATCH_RELEASE, GL_SCRATCH_FAULT } gl_scratch_op;
size_t gl_exec_scratch(gl_exec *e, gl_scratch_op op);
/* Every range of that scratch, whole or not, to fn (what gl_exec_scratch walks; tests
 * write over it to prove the next run does not read it). */
void gl_exec_scratch_each(gl_exec *e, gl_scratch_fn fn, void *arg);

/* ---- the plan as data -------------------------------------------------------------------- */

typedef struct gl_plan_entry {
    const gl_node *node;     /* as kernels see it (a function-body node may be a copy with
                              * the caller's attributes substituted) */
    int depth;               /* 0: the model's graph; deeper: subgraph or function body */
    size_t parent;           /* entry of the node whose body this node is in; SIZE_MAX */
    const char *backend;     /* "ref", "dnnl", or "body" for a function call that runs as
                              * its body (its nodes follow, one deeper) */
    bool fell_back;          /* the chosen backend did not take it (see info.note) */
    gl_plan_info info;       /* implementation, layouts, note: as of the last run (before
                              * the first run, what the claim knew) */
    size_t conversions;      /* inputs the executor converted to plain in the last run */
    const char *over;        /* the input value whose bytes output 0 was written over in
                              * the last run (gl_kernel_ctx.alloc_over), else NULL */
} gl_plan_entry;

size_t gl_exec_plan_count(const gl_exec *e);
const gl_plan_entry *gl_exec_plan_at(const gl_exec *e, size_t i);
const gl_model *gl_exec_model(const gl_exec *e);
const char *gl_exec_backend_name(const gl_exec *e);
/* The plan's header line from the backend (layout policy and why), "" when none. */
void gl_exec_summary(const gl_exec *e, char *buf, size_t len);

/* Per-node assignment, one line per entry: op, 'name', backend, implementation,
 * layouts, note; subgraph and function-body nodes follow their node, indented. */
void gl_exec_print_plan(const gl_exec *e, FILE *f);

/* ---- observing a run ------------------------------------------------------------------- */

typedef struct gl_exec_event {
    size_t entry;               /* index into the plan (gl_exec_plan_at) */
    const gl_node *node;
    int depth;
    /* node_end only: */
    gl_status status;
    size_t n_outputs;
    gl_tensor *const *outputs;  /* node->n_outputs entries (NULL: omitted); may carry a
                                 * backend layout: gl_exec_plain gives a plain one */
    uint64_t ns;                /* wall time of the node, layout conversions included */
    uint64_t convert_ns;        /* of which converting layouts (inputs to plain, backend
                                 * reorders of inputs) */
} gl_exec_event;

typedef struct gl_exec_observer {
    void *ctx;
    void (*run_begin)(void *ctx, const gl_exec *e);              /* may be NULL */
    void (*node_begin)(void *ctx, const gl_exec *e, const gl_exec_event *ev); /* may be NULL */
    void (*node_end)(void *ctx, const gl_exec *e, const gl_exec_event *ev);   /* may be NULL */
    void (*run_end)(void *ctx, const gl_exec *e, gl_status st);  /* may be NULL */
} gl_exec_observer;

/* Observe the runs of this plan (NULL: none). The observer is copied; its ctx must
 * outlive the runs. Time spent in the observer is not counted in any node's time. */
void gl_exec_set_observer(gl_exec *e, const gl_exec_observer *o);
/* A plain tensor with the values of t (a share when t is plain already). Caller frees. */
gl_tensor *gl_exec_plain(gl_exec *e, const gl_tensor *t);
/* The same, on a buffer of its own: what an observer keeps past the node's end. A share
 * of a buffer the memory plan lends would be written again by a later node of the same
 * run (intermediates and profile captures read it after the run). Caller frees. */
gl_tensor *gl_exec_plain_kept(gl_exec *e, const gl_tensor *t);

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

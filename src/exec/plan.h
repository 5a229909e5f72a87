/* plan.h — the executor's inside: plans (plan.c) and the run loop (exec.c) share these.
 *
 * A plan mirrors a graph: one plan_node per node in execution order, each with its op
 * entry and backend, the subgraph plans of its attributes, or — for a call of a
 * model-local function that no backend claimed — the plan of the body instantiated for
 * that call site. Every plan_node has an entry in the gl_exec's table (the plan as data),
 * in depth-first order: a node, then the nodes of its bodies.
 */
#ifndef GL_EXEC_PLAN_H
#define GL_EXEC_PLAN_H

#include "exec/exec.h"
#include "ir/calls.h"
#include "util/text_pool.h"

typedef struct plan plan;

/* Where outputs of a plan's nodes get their buffers run after run: a shelf is shared by
 * outputs whose lifetimes do not overlap (plan.c's plan_shelves), so a chain of 100k
 * nodes lends 2 buffers, not 100k (issue 23). A few slots, so that outputs of
 * different sizes on one shelf each keep a buffer of their size from run to run; the
 * plan puts an output on a free shelf that has its size already where it can (`sizes`,
 * from the value types), so that no run frees a buffer to make one of another size,
 * and the bytes an output is written into are those just freed (still in cache). Twice
 * as many slots as sizes: a buffer may be out longer than its value lives (a view of
 * it, an output written over it: gl_kernel_ctx.alloc_over), and the next output of its
 * size then takes a second one rather than another size's. */
#define PLAN_SHELF_SIZES 4
#define PLAN_SHELF_SLOTS (2 * PLAN_SHELF_SIZES)
typedef struct plan_shelf {
    gl_buffer_slot slot[PLAN_SHELF_SLOTS];
    size_t sizes[PLAN_SHELF_SIZES]; /* the bytes of the outputs planned on it */
    size_t n_sizes;
} plan_shelf;

typedef struct plan_body {
    const gl_graph *graph;
    plan *plan;
} plan_body;

typedef struct plan_node {
    const gl_model *m;
    const gl_node *node;        /* as kernels see it: the graph's node, or `inst` */
    gl_node *inst;              /* owned: a function-body node with the caller's
                                 * attributes substituted (shallow copy), else NULL */
    const gl_op_def *def;       /* NULL for a function call */
    const gl_backend *backend;  /* NULL for a function call run as its body */
    void *backend_ctx;          /* the plan's context of that backend */
    void *state;                /* the backend's per-node slot */
    int64_t opset;
    char *where;                /* "m.onnx: node 'c1' (Conv)" */
    plan *call;                 /* function call run as its body: the instantiated body */
    const gl_function *fn;      /* the function called (claimed whole or expanded) */
    plan_body *bodies;          /* subgraphs held by the node's attributes */
    size_t n_bodies;
    size_t *frees;              /* value indexes whose last use is this node */
    size_t n_frees;
    gl_buffer_slot *out_slots;  /* one per output: buffers lent to the kernel run after run,
                                 * for a node outside a plan (gl_eval_node) */
    plan_shelf **out_shelves;   /* one per output (NULL: none), the plan's: in a plan */
    size_t entry;               /* index in the gl_exec's plan table; SIZE_MAX outside one */
} plan_node;

struct plan {
    const gl_graph *graph;
    plan_node *nodes;
    size_t n_nodes;
    /* One per value of the graph: where a value held in a backend's layout is converted
     * to plain for the nodes that need it, run after run. */
    gl_buffer_slot *plain_slots;
    plan_shelf **shelves;       /* owned; the nodes' out_shelves point here */
    size_t n_shelves, cap_shelves;
};

struct gl_exec {
    const gl_model *m;
    const gl_backend *backend;  /* the chosen backend */
    void *backend_ctx;          /* its context for this plan (may be NULL) */
    plan *root;
    gl_exec_options opts;
    gl_exec_stats stats;
    size_t live_tensors, live_bytes; /* during a run */
    gl_plan_entry *entries;
    size_t n_entries, cap_entries;
    gl_text_pool texts;         /* the entries' texts that are not static: claim notes */
    gl_exec_observer observer;
    bool observed;
    struct gl_arena *arena;     /* the memory plan's block (exec/arena.h); NULL: none */
};

/* Where a plan is built: inside a function instance, ops are looked up with the
 * function's opsets and body attributes may refer to the caller's. */
typedef struct plan_scope {
    const gl_model *m;
    gl_exec *e;                 /* the plan table to fill; NULL for gl_eval_node */
    const gl_backend *backend;  /* the chosen one; the reference backend is the fallback */
    void *backend_ctx;
    const gl_function *fn;      /* NULL outside function bodies */
    const gl_node *caller;      /* the call node whose attributes body nodes may read */
    const char *caller_where;   /* prefix of messages about body nodes */
    int depth;
    size_t parent_entry;        /* SIZE_MAX at the top */
    gl_expansion *calls;        /* the calls expanded so far in this plan tree (shared) */
} plan_scope;

gl_status gl_plan_build(const plan_scope *s, const gl_graph *g, plan **out);
/* One node on its own (gl_eval_node). */
gl_status gl_plan_node_init(const plan_scope *s, const gl_node *src, plan_node *pn);
void gl_plan_node_release(plan_node *pn);
void gl_plan_free(plan *p);

#endif

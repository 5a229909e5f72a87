/* exec.c — plans and runs: the executor behind `graphlab run`, `conformance` and
 * constant folding.
 *
 * A plan mirrors a graph: one plan_node per node in execution order, each with its op
 * entry, backend, the subgraph plans of its attributes, or — for a call of a
 * model-local function — the plan of the body instantiated for that call site. A run
 * walks a plan with a frame: the tensors of the graph's values indexed by
 * value->index, owned by the frame and freed after their last use. Subgraph frames
 * point at the frame of the enclosing graph, so captures resolve through ->outer.
 */
#include "exec/exec.h"
#include "util/escape.h"

#include "ir/calls.h"

#include <stdlib.h>
#include <string.h>

/* Deeply nested subgraphs should not exhaust the stack. (Function calls are bounded by
 * the expansion, ir/calls.h: each call site gets its own plan of the body, with the
 * caller's attributes substituted, so calls of calls multiply.) */
#define MAX_PLAN_DEPTH 64
/* Kernel argument arrays up to this size live on the stack. */
#define SMALL_ARGS 16

typedef struct plan plan;

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
    const gl_backend *backend;  /* NULL for a function call */
    void *state;                /* the backend's per-node slot */
    int64_t opset;
    char *where;                /* "m.onnx: node 'c1' (Conv)" */
    plan *call;                 /* function call: the instantiated body */
    const gl_function *fn;      /* the function called */
    plan_body *bodies;          /* subgraphs held by the node's attributes */
    size_t n_bodies;
    size_t *frees;              /* value indexes whose last use is this node */
    size_t n_frees;
} plan_node;

struct plan {
    const gl_graph *graph;
    plan_node *nodes;
    size_t n_nodes;
};

struct gl_exec {
    const gl_model *m;
    const gl_backend *backend;
    plan *root;
    gl_exec_options opts;
    gl_exec_stats stats;
    size_t live_tensors, live_bytes; /* during a run */
};

/* ---- backends ------------------------------------------------------------------------ */

static const struct {
    const char *name;
    const gl_backend *(*get)(void);
} backend_table[] = {
    {"ref", gl_backend_ref},
    {"dnnl", gl_backend_dnnl},
};

const gl_backend *gl_backend_find(const char *name)
{
    for (size_t i = 0; name && i < GL_ARRAY_LEN(backend_table); i++)
        if (strcmp(backend_table[i].name, name) == 0)
            return backend_table[i].get();
    return NULL;
}

static bool backend_known(const char *name)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(backend_table); i++)
        if (strcmp(backend_table[i].name, name) == 0)
            return true;
    return false;
}

/* ---- building plans ------------------------------------------------------------------ */

/* Where a plan is built: inside a function instance, ops are looked up with the
 * function's opsets and body attributes may refer to the caller's. */
typedef struct plan_scope {
    const gl_model *m;
    const gl_backend *backend;  /* the chosen one; the reference backend is the fallback */
    const gl_function *fn;      /* NULL outside function bodies */
    const gl_node *caller;      /* the call node whose attributes body nodes may read */
    const char *caller_where;   /* prefix of messages about body nodes */
    int depth;
    gl_expansion *calls;        /* the calls expanded so far in this plan tree (shared) */
} plan_scope;

static void plan_free(plan *p);
static gl_status plan_build(const plan_scope *s, const gl_graph *g, plan **out);

static const char *domain_name(const char *d)
{
    return d && *d ? d : "ai.onnx";
}

/* "" and "ai.onnx" both name the default domain. */
static const char *canonical_domain(const char *d)
{
    return d && strcmp(d, "ai.onnx") != 0 ? d : "";
}

static bool same_domain(const char *a, const char *b)
{
    return strcmp(canonical_domain(a), canonical_domain(b)) == 0;
}

static int64_t scope_opset(const plan_scope *s, const char *domain)
{
    for (size_t i = 0; s->fn && i < s->fn->n_opsets; i++)
        if (same_domain(s->fn->opsets[i].domain, domain))
            return s->fn->opsets[i].version;
    int64_t v = gl_model_opset(s->m, domain ? domain : "");
    if (v == 0 && same_domain(domain, ""))
        v = 1; /* a default-domain node in a model that imports no opset */
    return v;
}

static bool refers_to_caller(const gl_node *n)
{
    for (size_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].ref_attr_name)
            return true;
    return false;
}

/* A shallow copy of a function-body node whose referring attributes take the caller's
 * value under the body's attribute name; those the caller does not set are absent, so
 * the kernel uses the op's default. The copy owns only its attrs array. */
static gl_node *instantiate(const gl_node *src, const gl_node *caller)
{
    gl_node *c = gl_xmalloc(sizeof(*c));
    *c = *src;
    c->attrs = gl_xcalloc(src->n_attrs ? src->n_attrs : 1, sizeof(*c->attrs));
    c->n_attrs = 0;
    c->cap_attrs = src->n_attrs;
    for (size_t i = 0; i < src->n_attrs; i++) {
        const gl_attr *a = &src->attrs[i];
        if (!a->ref_attr_name) {
            c->attrs[c->n_attrs++] = *a;
            continue;
        }
        const gl_attr *given = gl_node_attr(caller, a->ref_attr_name);
        if (!given)
            continue;
        gl_attr copy = *given;
        copy.name = a->name;
        copy.ref_attr_name = NULL;
        c->attrs[c->n_attrs++] = copy;
    }
    return c;
}

static void release_inst(gl_node *inst)
{
    if (inst) {
        free(inst->attrs);
        free(inst);
    }
}

static char *node_where(const plan_scope *s, const gl_node *n)
{
    char buf[1024];
    if (s->caller_where)
        snprintf(buf, sizeof(buf), "%s: node '%s' (%s)", s->caller_where, n->name ? n->name : "",
                 n->op_type ? n->op_type : "?");
    else
        gl_node_where(s->m, n, buf, sizeof(buf));
    return gl_xstrdup(buf);
}

static gl_status plan_call(const plan_scope *s, plan_node *pn)
{
    if (s->depth >= MAX_PLAN_DEPTH)
        return gl_fail(GL_ERR_INPUT, "%s: subgraphs and function calls nest deeper than %d "
                       "levels", pn->where, MAX_PLAN_DEPTH);
    gl_status st = gl_expansion_enter(s->calls, pn->fn, pn->where);
    if (st != GL_OK)
        return st;
    plan_scope inner = {.m = s->m, .backend = s->backend, .fn = pn->fn, .caller = pn->node,
                        .caller_where = pn->where, .depth = s->depth + 1,
                        .calls = s->calls};
    st = plan_build(&inner, pn->fn->body, &pn->call);
    gl_expansion_leave(s->calls);
    return st;
}

static gl_status plan_subgraph(const plan_scope *s, plan_node *pn, const gl_graph *g)
{
    if (!g)
        return GL_OK;
    for (size_t i = 0; i < pn->n_bodies; i++)
        if (pn->bodies[i].graph == g)
            return GL_OK;
    if (s->depth >= MAX_PLAN_DEPTH)
        return gl_fail(GL_ERR_INPUT, "%s: subgraphs nest deeper than %d levels", pn->where,
                       MAX_PLAN_DEPTH);
    plan_scope inner = *s;
    inner.depth++;
    plan *sub = NULL;
    gl_status st = plan_build(&inner, g, &sub);
    if (st != GL_OK)
        return st;
    pn->bodies = gl_xrealloc(pn->bodies, (pn->n_bodies + 1) * sizeof(*pn->bodies));
    pn->bodies[pn->n_bodies++] = (plan_body){g, sub};
    return GL_OK;
}

static gl_status plan_subgraphs(const plan_scope *s, plan_node *pn)
{
    const gl_node *n = pn->node;
    for (size_t i = 0; i < n->n_attrs; i++) {
        const gl_attr *a = &n->attrs[i];
        gl_status st = GL_OK;
        if (a->type == GL_ATTR_GRAPH)
            st = plan_subgraph(s, pn, a->g);
        for (size_t j = 0; a->type == GL_ATTR_GRAPHS && j < a->n && st == GL_OK; j++)
            st = plan_subgraph(s, pn, a->graphs[j]);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

static gl_status plan_node_init(const plan_scope *s, const gl_node *src, plan_node *pn)
{
    if (s->caller && refers_to_caller(src))
        pn->inst = instantiate(src, s->caller);
    pn->node = pn->inst ? pn->inst : src;
    pn->m = s->m;
    const gl_node *n = pn->node;
    pn->where = node_where(s, n);
    pn->opset = scope_opset(s, n->domain);
    pn->def = gl_op_lookup(n->domain ? n->domain : "", n->op_type, pn->opset);
    if (!pn->def || !pn->def->kernel) {
        pn->fn = gl_called_function(s->m, n);
        if (pn->fn)
            return plan_call(s, pn);
        if (!pn->def)
            return gl_fail(GL_ERR_UNSUPPORTED, "%s: unknown op '%s' (domain '%s', opset %lld)",
                           pn->where, n->op_type, domain_name(n->domain), (long long)pn->opset);
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: op '%s' (domain '%s', opset %lld) has no kernel",
                       pn->where, n->op_type, domain_name(n->domain), (long long)pn->opset);
    }
    const gl_backend *ref = gl_backend_ref();
    pn->backend = s->backend != ref && s->backend->claims(s->m, n) ? s->backend : ref;
    return plan_subgraphs(s, pn);
}

/* ---- execution order ------------------------------------------------------------------- */

/* The producer in g of the k-th thing node n reads (explicit inputs, then the outer
 * values its subgraphs read), or NULL. */
static const gl_node *dep_producer(const gl_graph *g, const gl_node *n, size_t k)
{
    const gl_value *v = k < n->n_inputs ? n->inputs[k] : n->implicit[k - n->n_inputs];
    return v && v->producer && v->producer->graph == g ? v->producer : NULL;
}

/* Depth-first topological order (iterative: chains may be long). A graph already in
 * order comes back unchanged. GL_ERR_INPUT naming a node on a cycle. */
static gl_status topo_order(const gl_graph *g, const gl_node ***order, size_t *count)
{
    size_t n = g->n_nodes, done = 0, sp = 0;
    unsigned char *state = gl_xcalloc(n ? n : 1, 1); /* 0 new, 1 on the stack, 2 placed */
    size_t *cursor = gl_xcalloc(n ? n : 1, sizeof(*cursor));
    const gl_node **stack = gl_xcalloc(n ? n : 1, sizeof(*stack));
    const gl_node **out = gl_xcalloc(n ? n : 1, sizeof(*out));
    gl_status st = GL_OK;
    for (size_t r = 0; r < n && st == GL_OK; r++) {
        const gl_node *root = g->nodes[r];
        if (!root)
            continue;
        if (root->index != r) {
            st = gl_fail(GL_ERR_INTERNAL, "node '%s' has index %zu at position %zu",
                         root->name ? root->name : "", root->index, r);
            break;
        }
        if (state[r])
            continue;
        state[root->index] = 1;
        stack[sp++] = root;
        while (sp && st == GL_OK) {
            const gl_node *top = stack[sp - 1];
            size_t deps = top->n_inputs + top->n_implicit;
            const gl_node *next = NULL;
            while (!next && cursor[top->index] < deps) {
                const gl_node *p = dep_producer(g, top, cursor[top->index]++);
                if (p && p->index < n && g->nodes[p->index] == p && state[p->index] != 2) {
                    if (state[p->index] == 1)
                        st = gl_fail(GL_ERR_INPUT, "%s: node '%s' (%s) is on a cycle",
                                     g->model && g->model->path ? g->model->path : "<model>",
                                     p->name ? p->name : "", p->op_type);
                    next = p;
                }
            }
            if (st != GL_OK)
                break;
            if (next) {
                state[next->index] = 1;
                stack[sp++] = next;
            } else {
                state[top->index] = 2;
                out[done++] = top;
                sp--;
            }
        }
    }
    free(state);
    free(cursor);
    free(stack);
    if (st != GL_OK) {
        free(out);
        return st;
    }
    *order = out;
    *count = done;
    return GL_OK;
}

/* Each value is freed after the node that reads it last (or, unread, after the node
 * that makes it). Graph outputs stay for the caller; initializers and captures are
 * never in a frame, so they are never freed. */
static void plan_lifetimes(plan *p)
{
    const gl_graph *g = p->graph;
    size_t nv = g->n_values;
    size_t *last = gl_xmalloc((nv ? nv : 1) * sizeof(*last));
    const size_t none = (size_t)-1;
    for (size_t i = 0; i < nv; i++)
        last[i] = none;
    for (size_t k = 0; k < p->n_nodes; k++) {
        const gl_node *n = p->nodes[k].node;
        for (size_t i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] && n->outputs[i]->index < nv)
                last[n->outputs[i]->index] = k;
        for (size_t i = 0; i < n->n_inputs + n->n_implicit; i++) {
            const gl_value *v = i < n->n_inputs ? n->inputs[i] : n->implicit[i - n->n_inputs];
            if (v && v->graph == g && v->index < nv)
                last[v->index] = k;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] && g->outputs[i]->graph == g)
            last[g->outputs[i]->index] = none;
    size_t *counts = gl_xcalloc(p->n_nodes ? p->n_nodes : 1, sizeof(*counts));
    for (size_t i = 0; i < nv; i++)
        if (last[i] != none)
            counts[last[i]]++;
    for (size_t k = 0; k < p->n_nodes; k++)
        if (counts[k])
            p->nodes[k].frees = gl_xmalloc(counts[k] * sizeof(size_t));
    for (size_t i = 0; i < nv; i++)
        if (last[i] != none) {
            plan_node *pn = &p->nodes[last[i]];
            pn->frees[pn->n_frees++] = i;
        }
    free(counts);
    free(last);
}

static gl_status plan_build(const plan_scope *s, const gl_graph *g, plan **out)
{
    *out = NULL;
    const gl_node **order = NULL;
    size_t count = 0;
    gl_status st = topo_order(g, &order, &count);
    if (st != GL_OK)
        return st;
    plan *p = gl_xcalloc(1, sizeof(*p));
    p->graph = g;
    p->nodes = gl_xcalloc(count ? count : 1, sizeof(*p->nodes));
    for (size_t k = 0; k < count && st == GL_OK; k++, p->n_nodes++)
        st = plan_node_init(s, order[k], &p->nodes[k]);
    free(order);
    if (st != GL_OK) {
        plan_free(p);
        return st;
    }
    plan_lifetimes(p);
    *out = p;
    return GL_OK;
}

static void plan_node_release(plan_node *pn)
{
    if (pn->state && pn->backend && pn->backend->release)
        pn->backend->release(pn->state);
    for (size_t i = 0; i < pn->n_bodies; i++)
        plan_free(pn->bodies[i].plan);
    free(pn->bodies);
    plan_free(pn->call);
    free(pn->frees);
    free(pn->where);
    release_inst(pn->inst);
}

static void plan_free(plan *p)
{
    if (!p)
        return;
    for (size_t k = 0; k < p->n_nodes; k++)
        plan_node_release(&p->nodes[k]);
    free(p->nodes);
    free(p);
}

/* ---- frames ------------------------------------------------------------------------------ */

typedef struct frame {
    const gl_graph *graph;
    gl_tensor **vals;          /* owned, by value index; NULL when vals is absent */
    const struct frame *outer; /* the enclosing graph's frame (captures) */
    bool consts_only;          /* gl_eval_node: defaults of inputs are not values */
    gl_exec *e;                /* statistics; NULL in gl_eval_node */
} frame;

/* The tensor a value has in frame f: bound in the frame, else its initializer, else
 * (a capture) the outer value in the enclosing frame. NULL when it has none yet. */
static const gl_tensor *frame_get(const frame *f, const gl_value *v)
{
    for (; v; v = v->outer, f = f ? f->outer : NULL) {
        if (f && f->vals && f->graph == v->graph && v->index < f->graph->n_values &&
            f->vals[v->index])
            return f->vals[v->index];
        if (v->init && (gl_value_is_constant(v) || (f && !f->consts_only)))
            return v->init;
    }
    return NULL;
}

static void frame_count(frame *f, const gl_tensor *t, int sign)
{
    gl_exec *e = f->e;
    if (!e || !t)
        return;
    size_t bytes = gl_tensor_nbytes(t);
    if (sign > 0) {
        e->live_tensors++;
        e->live_bytes += bytes;
        if (e->live_tensors > e->stats.peak_tensors)
            e->stats.peak_tensors = e->live_tensors;
        if (e->live_bytes > e->stats.peak_bytes)
            e->stats.peak_bytes = e->live_bytes;
    } else {
        e->live_tensors--;
        e->live_bytes -= bytes;
    }
}

static gl_status frame_open(frame *f, const gl_graph *g, const frame *outer, gl_exec *e)
{
    *f = (frame){.graph = g, .outer = outer, .e = e};
    f->vals = calloc(g->n_values ? g->n_values : 1, sizeof(*f->vals));
    return f->vals ? GL_OK : gl_fail(GL_ERR_NOMEM, "cannot allocate a frame of %zu values",
                                     g->n_values);
}

/* Takes ownership of t. */
static void frame_set(frame *f, const gl_value *v, gl_tensor *t)
{
    gl_tensor **slot = &f->vals[v->index];
    if (*slot) {
        frame_count(f, *slot, -1);
        gl_tensor_free(*slot);
    }
    *slot = t;
    frame_count(f, t, +1);
}

static void frame_drop(frame *f, size_t index)
{
    gl_tensor **slot = &f->vals[index];
    if (*slot) {
        frame_count(f, *slot, -1);
        gl_tensor_free(*slot);
        *slot = NULL;
    }
}

static void frame_close(frame *f)
{
    if (!f->vals)
        return;
    for (size_t i = 0; i < f->graph->n_values; i++)
        frame_drop(f, i);
    free(f->vals);
    f->vals = NULL;
}

/* A share of t named `name` (graph outputs carry their names back). */
static gl_tensor *share_named(const gl_tensor *t, const char *name)
{
    gl_tensor *s = gl_tensor_share(t);
    if (name) {
        free(s->name);
        s->name = gl_xstrdup(name);
    }
    return s;
}

/* ---- running ------------------------------------------------------------------------------- */

static gl_status run_plan(const plan *p, frame *f);
static gl_status run_node(plan_node *pn, frame *f, const gl_tensor *const *in,
                          gl_tensor **out);

/* What a kernel's run_body needs: the node that runs it and the frame it runs in. */
typedef struct node_run {
    plan_node *pn;
    frame *f;
} node_run;

/* Bind `inputs` to g->inputs in order, run, and hand back shares of g->outputs. */
static gl_status run_graph(const plan *p, frame *outer, const gl_tensor *const *inputs,
                           size_t n_in, gl_tensor **out, size_t n_out, const char *where)
{
    const gl_graph *g = p->graph;
    for (size_t i = 0; i < n_out; i++)
        out[i] = NULL;
    frame f;
    gl_status st = frame_open(&f, g, outer, outer ? outer->e : NULL);
    if (st != GL_OK)
        return st;
    f.consts_only = outer && outer->consts_only;
    for (size_t i = 0; i < n_in && i < g->n_inputs; i++)
        if (inputs[i] && g->inputs[i])
            frame_set(&f, g->inputs[i], gl_tensor_share(inputs[i]));
    st = run_plan(p, &f);
    for (size_t i = 0; i < n_out && st == GL_OK; i++) {
        const gl_value *v = g->outputs[i];
        const gl_tensor *t = v ? frame_get(&f, v) : NULL;
        if (!t)
            st = gl_fail(GL_ERR_INPUT, "%s: subgraph output %zu '%s' has no value", where, i,
                         v ? v->name : "");
        else
            out[i] = gl_tensor_share(t);
    }
    frame_close(&f);
    if (st != GL_OK)
        for (size_t i = 0; i < n_out; i++) {
            gl_tensor_free(out[i]);
            out[i] = NULL;
        }
    return st;
}

static gl_status exec_run_body(gl_kernel_ctx *k, const gl_graph *body,
                               const gl_tensor *const *inputs, size_t n_in, gl_tensor **out,
                               size_t n_out)
{
    node_run *nr = k->exec;
    const plan *p = NULL;
    for (size_t i = 0; nr && i < nr->pn->n_bodies; i++)
        if (nr->pn->bodies[i].graph == body)
            p = nr->pn->bodies[i].plan;
    if (!p)
        return gl_fail(GL_ERR_INTERNAL, "%s: run_body: the subgraph is not one of the node's",
                       k->where);
    if (n_in != body->n_inputs)
        return gl_fail(GL_ERR_INPUT, "%s: subgraph '%s' takes %zu inputs, %zu given", k->where,
                       body->name ? body->name : "", body->n_inputs, n_in);
    if (n_out != body->n_outputs)
        return gl_fail(GL_ERR_INPUT, "%s: subgraph '%s' has %zu outputs, %zu expected",
                       k->where, body->name ? body->name : "", body->n_outputs, n_out);
    return run_graph(p, nr->f, inputs, n_in, out, n_out, k->where);
}

/* A call of a model-local function: formal inputs bound to the actual ones (trailing
 * optional inputs may be omitted), formal outputs handed back. */
static gl_status run_call(plan_node *pn, frame *f, const gl_tensor *const *in,
                          gl_tensor **out)
{
    const gl_node *n = pn->node;
    const gl_graph *body = pn->call->graph;
    if (n->n_inputs > body->n_inputs)
        return gl_fail(GL_ERR_INPUT, "%s: %zu inputs given, function '%s' takes %zu",
                       pn->where, n->n_inputs, pn->fn->name, body->n_inputs);
    if (n->n_outputs > body->n_outputs)
        return gl_fail(GL_ERR_INPUT, "%s: %zu outputs used, function '%s' has %zu", pn->where,
                       n->n_outputs, pn->fn->name, body->n_outputs);
    frame cf;
    gl_status st = frame_open(&cf, body, NULL, f->e);
    if (st != GL_OK)
        return st;
    for (size_t i = 0; i < n->n_inputs; i++)
        if (in[i])
            frame_set(&cf, body->inputs[i], gl_tensor_share(in[i]));
    st = run_plan(pn->call, &cf);
    for (size_t i = 0; i < n->n_outputs && st == GL_OK; i++) {
        if (!n->outputs[i])
            continue;
        const gl_tensor *t = frame_get(&cf, body->outputs[i]);
        if (!t)
            st = gl_fail(GL_ERR_INPUT, "%s: function output '%s' has no value", pn->where,
                         body->outputs[i]->name);
        else
            out[i] = gl_tensor_share(t);
    }
    frame_close(&cf);
    return st;
}

static gl_status run_kernel(plan_node *pn, frame *f, const gl_tensor *const *in,
                            gl_tensor **out)
{
    const gl_node *n = pn->node;
    node_run nr = {.pn = pn, .f = f};
    gl_kernel_ctx k = {
        .node = n, .model = pn->m, .opset = pn->opset,
        .where = pn->where, .n_inputs = n->n_inputs, .in = in, .n_outputs = n->n_outputs,
        .out = out, .run_body = exec_run_body, .exec = &nr,
    };
    /* Tensors the kernel allocates are refused in its name (a Loop's: in its body
     * nodes' names while they run). */
    gl_limits *lim = gl_limits_current();
    const char *outer_where = lim ? lim->where : NULL;
    if (lim) {
        lim->where = pn->where;
        lim->refused = GL_OK;
    }
    gl_error_clear();
    gl_status st = pn->backend->run(&k, &pn->state);
    if (st != GL_OK && !*gl_error_message())
        gl_fail(st, "%s: the kernel failed (%s)", pn->where, gl_status_name(st));
    if (lim) {
        lim->where = outer_where;
        if (st != GL_OK && lim->refused)
            st = lim->refused;
    }
    return st;
}

/* Run one node on resolved inputs; out[] (n_outputs entries) receives its outputs,
 * every non-omitted one set, or all NULL on failure. */
static gl_status run_node(plan_node *pn, frame *f, const gl_tensor *const *in,
                          gl_tensor **out)
{
    const gl_node *n = pn->node;
    for (size_t i = 0; i < n->n_outputs; i++)
        out[i] = NULL;
    gl_status st = pn->call ? run_call(pn, f, in, out) : run_kernel(pn, f, in, out);
    if (f->e)
        f->e->stats.nodes_run++;
    for (size_t i = 0; i < n->n_outputs && st == GL_OK; i++)
        if (n->outputs[i] && !out[i])
            st = gl_fail(GL_ERR_INTERNAL, "%s: output %zu '%s' was not set by the %s", pn->where,
                         i, n->outputs[i]->name, pn->call ? "function" : "kernel");
    for (size_t i = 0; i < n->n_outputs; i++)
        if (out[i] && (st != GL_OK || !n->outputs[i])) {
            gl_tensor_free(out[i]);
            out[i] = NULL;
        }
    return st;
}

/* Resolve node inputs from the frame, run, store outputs, free what is dead. */
static gl_status step(plan_node *pn, frame *f)
{
    const gl_node *n = pn->node;
    const gl_tensor *in_small[SMALL_ARGS];
    gl_tensor *out_small[SMALL_ARGS];
    const gl_tensor **in = n->n_inputs <= SMALL_ARGS
                               ? in_small
                               : gl_xmalloc(n->n_inputs * sizeof(*in));
    gl_tensor **out = n->n_outputs <= SMALL_ARGS ? out_small
                                                 : gl_xmalloc(n->n_outputs * sizeof(*out));
    gl_status st = GL_OK;
    for (size_t i = 0; i < n->n_inputs && st == GL_OK; i++) {
        in[i] = n->inputs[i] ? frame_get(f, n->inputs[i]) : NULL;
        if (n->inputs[i] && !in[i])
            st = gl_fail(GL_ERR_INPUT, "%s: input %zu '%s' has no value", pn->where, i,
                         n->inputs[i]->name);
    }
    if (st == GL_OK)
        st = run_node(pn, f, in, out);
    for (size_t i = 0; i < n->n_outputs && st == GL_OK; i++)
        if (out[i])
            frame_set(f, n->outputs[i], out[i]);
    if (st == GL_OK)
        for (size_t i = 0; i < pn->n_frees; i++)
            frame_drop(f, pn->frees[i]);
    if (in != in_small)
        free(in);
    if (out != out_small)
        free(out);
    return st;
}

static gl_status run_plan(const plan *p, frame *f)
{
    for (size_t k = 0; k < p->n_nodes; k++) {
        gl_status st = gl_limits_poll(p->nodes[k].where);
        if (st == GL_OK)
            st = step(&p->nodes[k], f);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* ---- inputs --------------------------------------------------------------------------------- */

typedef struct sym_binding {
    const char *sym;
    int64_t value;
    const char *input; /* the input that bound it */
} sym_binding;

typedef struct sym_table {
    sym_binding *items;
    size_t n, cap;
} sym_table;

static const char *model_path(const gl_model *m)
{
    return m->path ? m->path : "<model>";
}

static gl_status check_dim(const gl_model *m, const gl_value *v, int d, const gl_dim *want,
                           int64_t got, sym_table *syms)
{
    if (want->value >= 0) {
        if (got != want->value)
            return gl_fail(GL_ERR_INPUT, "%s: input '%s': dim %d is %lld, expected %lld",
                           model_path(m), v->name, d, (long long)got, (long long)want->value);
        return GL_OK;
    }
    if (!want->sym || !*want->sym)
        return GL_OK;
    for (size_t i = 0; i < syms->n; i++) {
        const sym_binding *b = &syms->items[i];
        if (strcmp(b->sym, want->sym) != 0)
            continue;
        if (b->value != got)
            return gl_fail(GL_ERR_INPUT,
                           "%s: input '%s': dim %d ('%s') is %lld, expected %lld as bound by "
                           "input '%s'",
                           model_path(m), v->name, d, want->sym, (long long)got,
                           (long long)b->value, b->input);
        return GL_OK;
    }
    GL_GROW(syms->items, syms->cap, syms->n + 1);
    syms->items[syms->n++] = (sym_binding){want->sym, got, v->name};
    return GL_OK;
}

static gl_status check_input(const gl_exec *e, const gl_value *v, const gl_tensor *t,
                             sym_table *syms)
{
    const gl_model *m = e->m;
    if (v->type.kind == GL_TYPE_OPAQUE)
        return gl_fail(GL_ERR_UNSUPPORTED,
                       "%s: input '%s' is not a tensor (sequence, map or optional)",
                       model_path(m), v->name);
    if (v->type.kind != GL_TYPE_TENSOR)
        return GL_OK;
    if (v->type.dtype != GL_DT_UNDEFINED && t->dtype != v->type.dtype)
        return gl_fail(GL_ERR_INPUT, "%s: input '%s' has dtype %s, expected %s", model_path(m),
                       v->name, gl_dtype_name(t->dtype), gl_dtype_name(v->type.dtype));
    const gl_shape *s = &v->type.shape;
    if (e->opts.no_shape_check || s->rank == GL_RANK_UNKNOWN)
        return GL_OK;
    if (t->rank != s->rank)
        return gl_fail(GL_ERR_INPUT, "%s: input '%s' has rank %d, expected %d", model_path(m),
                       v->name, t->rank, s->rank);
    for (int d = 0; d < s->rank; d++) {
        gl_status st = check_dim(m, v, d, &s->dims[d], t->dims[d], syms);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* Check every input and bind the given ones (defaults stay initializers). */
static gl_status bind_inputs(gl_exec *e, frame *f, const gl_tensor *const *inputs)
{
    const gl_graph *g = e->m->graph;
    sym_table syms = {0};
    gl_status st = GL_OK;
    for (size_t i = 0; i < g->n_inputs && st == GL_OK; i++) {
        const gl_value *v = g->inputs[i];
        const gl_tensor *t = inputs[i] ? inputs[i] : v->init;
        if (!t)
            st = gl_fail(GL_ERR_INPUT, "%s: input '%s' has no value and no default",
                         model_path(e->m), v->name);
        else
            st = check_input(e, v, t, &syms);
        if (st == GL_OK && inputs[i])
            frame_set(f, v, gl_tensor_share(inputs[i]));
    }
    free(syms.items);
    return st;
}

/* ---- the public interface ------------------------------------------------------------------ */

gl_status gl_exec_create(const gl_model *m, const gl_exec_options *o, gl_exec **out)
{
    *out = NULL;
    gl_exec_options opts = o ? *o : (gl_exec_options){0};
    const char *name = opts.backend ? opts.backend : "ref";
    const gl_backend *b = gl_backend_find(name);
    if (!b && backend_known(name))
        return gl_fail(GL_ERR_UNSUPPORTED, "backend '%s' is not available in this build", name);
    if (!b)
        return gl_fail(GL_ERR_INPUT, "unknown backend '%s' (ref, dnnl)", name);
    if (!m || !m->graph)
        return gl_fail(GL_ERR_INPUT, "exec: no model");
    gl_exec *e = gl_xcalloc(1, sizeof(*e));
    e->m = m;
    e->backend = b;
    e->opts = opts;
    e->opts.backend = b->name;
    if (!e->opts.max_memory)
        e->opts.max_memory = gl_limits_default_bytes();
    if (!e->opts.max_iterations)
        e->opts.max_iterations = GL_EXEC_MAX_ITERATIONS;
    if (opts.threads > 0 && b->set_threads)
        b->set_threads(opts.threads);
    gl_expansion calls;
    gl_expansion_init(&calls, m);
    plan_scope s = {.m = m, .backend = b, .calls = &calls};
    gl_status st = plan_build(&s, m->graph, &e->root);
    if (st != GL_OK) {
        gl_exec_free(e);
        return st;
    }
    *out = e;
    return GL_OK;
}

void gl_exec_free(gl_exec *e)
{
    if (!e)
        return;
    plan_free(e->root);
    free(e);
}

gl_status gl_exec_run(gl_exec *e, const gl_tensor *const *inputs, size_t n_inputs,
                      gl_tensor **outputs, size_t n_outputs)
{
    const gl_graph *g = e->m->graph;
    for (size_t i = 0; i < n_outputs; i++)
        outputs[i] = NULL;
    if (n_inputs != g->n_inputs)
        return gl_fail(GL_ERR_INPUT, "%s: the model takes %zu inputs, %zu given",
                       model_path(e->m), g->n_inputs, n_inputs);
    if (n_outputs != g->n_outputs)
        return gl_fail(GL_ERR_INPUT, "%s: the model has %zu outputs, room for %zu given",
                       model_path(e->m), g->n_outputs, n_outputs);
    e->stats = (gl_exec_stats){0};
    e->live_tensors = e->live_bytes = 0;
    gl_limits lim = {.max_bytes = e->opts.max_memory, .max_iterations = e->opts.max_iterations,
                     .cancel = e->opts.cancel, .max_bytes_option = "--max-memory",
                     .max_iterations_option = "--max-iterations"};
    for (size_t i = 0; i < n_inputs; i++) /* the caller's, alive all along */
        lim.live_bytes += inputs[i] ? gl_tensor_nbytes(inputs[i]) : 0;
    gl_limits_push(&lim);
    frame f;
    gl_status st = frame_open(&f, g, NULL, e);
    if (st == GL_OK)
        st = bind_inputs(e, &f, inputs);
    if (st == GL_OK)
        st = run_plan(e->root, &f);
    for (size_t i = 0; i < n_outputs && st == GL_OK; i++) {
        const gl_tensor *t = frame_get(&f, g->outputs[i]);
        if (!t)
            st = gl_fail(GL_ERR_INTERNAL, "%s: graph output '%s' has no value", model_path(e->m),
                         g->outputs[i]->name);
        else
            outputs[i] = share_named(t, g->outputs[i]->name);
    }
    frame_close(&f);
    if (st != GL_OK)
        for (size_t i = 0; i < n_outputs; i++) {
            gl_tensor_free(outputs[i]);
            outputs[i] = NULL;
        }
    gl_limits_pop(&lim);
    return st;
}

void gl_exec_get_stats(const gl_exec *e, gl_exec_stats *s)
{
    *s = e->stats;
}

static void print_plan(const plan *p, int indent, FILE *f)
{
    for (size_t k = 0; k < p->n_nodes; k++) {
        const plan_node *pn = &p->nodes[k];
        const gl_node *n = pn->node;
        char name[256];
        snprintf(name, sizeof(name), "'%s'", gl_esc(n->name)); /* printed: escaped */
        const char *backend = pn->backend ? pn->backend->name : "call";
        char impl[256];
        if (pn->call)
            snprintf(impl, sizeof(impl), "function %s.%s", gl_esc(domain_name(pn->fn->domain)),
                     gl_esc(pn->fn->name));
        else
            snprintf(impl, sizeof(impl), "%s",
                     pn->backend->impl ? pn->backend->impl(pn->state) : "-");
        fprintf(f, "%*s%-18s %-28s %-5s %s\n", indent, "", gl_esc(n->op_type), name, backend,
                impl);
        if (pn->call)
            print_plan(pn->call, indent + 2, f);
        for (size_t i = 0; i < pn->n_bodies; i++)
            print_plan(pn->bodies[i].plan, indent + 2, f);
    }
}

void gl_exec_print_plan(const gl_exec *e, FILE *f)
{
    print_plan(e->root, 0, f);
}

gl_status gl_eval_node(const gl_model *m, const gl_node *n, const gl_tensor *const *inputs,
                       gl_tensor **outputs)
{
    for (size_t i = 0; i < n->n_outputs; i++)
        outputs[i] = NULL;
    gl_expansion calls = {0}; /* the fixed bound: sizing it by the model costs per node */
    plan_scope s = {.m = m, .backend = gl_backend_ref(), .calls = &calls};
    plan_node pn = {0};
    gl_limits own = {.max_bytes = gl_limits_default_bytes(),
                     .max_iterations = GL_EVAL_MAX_ITERATIONS};
    bool push = !gl_limits_current();
    if (push)
        gl_limits_push(&own);
    gl_status st = plan_node_init(&s, n, &pn);
    if (st == GL_OK) {
        frame f = {.graph = n->graph, .consts_only = true};
        st = run_node(&pn, &f, inputs, outputs);
    }
    plan_node_release(&pn);
    if (push)
        gl_limits_pop(&own);
    return st;
}

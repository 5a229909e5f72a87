/* exec.c — running plans: the executor behind `graphlab run`, `profile`, `conformance`
 * and constant folding.
 *
 * A run walks a plan (plan.c) with a frame: the tensors of the graph's values indexed by
 * value->index, owned by the frame and released after their last use. Subgraph frames
 * point at the frame of the enclosing graph, so captures resolve through ->outer.
 *
 * A tensor a backend made in its own layout stays so in the frame; a node of another
 * backend that reads it gets a plain copy, made once per value and run and kept beside
 * the value (frame->plain) until the value is released. Reference kernels write their
 * outputs into buffers the plan lends again on every run (plan_node.out_shelves).
 */
#include "exec/arena.h"
#include "exec/plan.h"
#include "util/escape.h"
#include "util/clock.h"

#include <stdlib.h>
#include <string.h>

/* Kernel argument arrays up to this size live on the stack. */
#define SMALL_ARGS 16

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

/* ---- frames ------------------------------------------------------------------------------ */

typedef struct frame {
    const gl_graph *graph;
    gl_tensor **vals;          /* owned, by value index; NULL when vals is absent */
    gl_tensor **plain;         /* owned, by value index: plain copies of values held in a
                                * backend's layout, made on first need; NULL until then */
    struct frame *outer;       /* the enclosing graph's frame (captures) */
    gl_buffer_slot *slots;     /* the plan's per-value slots for plain copies (may be NULL) */
    bool consts_only;          /* gl_eval_node: defaults of inputs are not values */
    gl_exec *e;                /* statistics, observer; NULL in gl_eval_node */
    /* A function body run for a node of the model's graph: its outputs are that node's,
     * placed by the memory plan (NULL elsewhere). */
    const gl_node *caller;
} frame;

/* The tensor a value has in frame f: bound in the frame, else its initializer, else
 * (a capture) the outer value in the enclosing frame. NULL when it has none yet.
 * *owner (may be NULL) receives the frame that holds it (NULL for an initializer). */
static const gl_tensor *frame_find(frame *f, const gl_value *v, frame **owner)
{
    if (owner)
        *owner = NULL;
    for (; v; v = v->outer, f = f ? f->outer : NULL) {
        if (f && f->vals && f->graph == v->graph && v->index < f->graph->n_values &&
            f->vals[v->index]) {
            if (owner)
                *owner = f;
            return f->vals[v->index];
        }
        if (v->init && (gl_value_is_constant(v) || (f && !f->consts_only)))
            return v->init;
    }
    return NULL;
}

static const gl_tensor *frame_get(frame *f, const gl_value *v)
{
    return frame_find(f, v, NULL);
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

static gl_status frame_open(frame *f, const gl_graph *g, frame *outer, gl_exec *e)
{
    *f = (frame){.graph = g, .outer = outer, .e = e};
    f->vals = calloc(g->n_values ? g->n_values : 1, sizeof(*f->vals));
    return f->vals ? GL_OK : gl_fail(GL_ERR_NOMEM, "cannot allocate a frame of %zu values",
                                     g->n_values);
}

static void frame_drop(frame *f, size_t index)
{
    gl_tensor **slot = &f->vals[index];
    if (*slot) {
        frame_count(f, *slot, -1);
        gl_tensor_free(*slot);
        *slot = NULL;
    }
    if (f->plain && f->plain[index]) {
        gl_tensor_free(f->plain[index]);
        f->plain[index] = NULL;
    }
}

/* Takes ownership of t. */
static void frame_set(frame *f, const gl_value *v, gl_tensor *t)
{
    frame_drop(f, v->index);
    f->vals[v->index] = t;
    frame_count(f, t, +1);
}

static void frame_close(frame *f)
{
    if (!f->vals)
        return;
    for (size_t i = 0; i < f->graph->n_values; i++)
        frame_drop(f, i);
    free(f->vals);
    free(f->plain);
    f->vals = f->plain = NULL;
}

/* A plain tensor for something in a backend's layout, its bytes from `slot` (NULL: a
 * new buffer). */
static gl_tensor *to_plain(gl_exec *e, const gl_tensor *t, gl_buffer_slot *slot)
{
    const gl_backend *owner = t->layout->owner;
    void *ctx = e && owner == e->backend ? e->backend_ctx : NULL;
    if (!owner->to_plain)
        return (void)gl_fail(GL_ERR_INTERNAL, "backend %s cannot convert its layout %s",
                             owner->name, t->layout->name), NULL;
    return owner->to_plain(ctx, t, slot);
}

/* Value v's tensor as backend b reads it: as it is when plain or in b's own layout;
 * else a plain copy, made once and kept beside the value in the frame that holds it. */
static gl_status frame_read(frame *f, const gl_value *v, const gl_backend *b,
                            const gl_tensor **out, bool *converted)
{
    frame *owner = NULL;
    const gl_tensor *t = frame_find(f, v, &owner);
    *out = t;
    if (!t || !t->layout || t->layout->owner == b)
        return GL_OK;
    size_t i = v->index;
    if (owner->plain && owner->plain[i]) {
        *out = owner->plain[i];
        return GL_OK;
    }
    gl_tensor *p = to_plain(owner->e, t, owner->slots ? &owner->slots[i] : NULL);
    if (!p)
        return gl_error_prefix("value '%s'", v->name), GL_ERR_INTERNAL;
    if (!owner->plain)
        owner->plain = gl_xcalloc(owner->graph->n_values ? owner->graph->n_values : 1,
                                  sizeof(*owner->plain));
    owner->plain[i] = p;
    *out = p;
    *converted = true;
    if (owner->e)
        owner->e->stats.conversions++;
    return GL_OK;
}

/* A share of t named `name` that leaves the executor: plain, and on a buffer of its own
 * (one the plan lends would be written again by the next run). */
static gl_tensor *share_out(gl_exec *e, const gl_tensor *t, const char *name)
{
    gl_tensor *s = t->layout ? to_plain(e, t, NULL) : gl_tensor_share(t);
    if (!s)
        return NULL;
    /* Bytes in the arena are the next run's: the caller gets a copy (the frame still
     * holds t, so making it writable copies). */
    if (s->buf && s->buf->kind == GL_BUF_VIEW)
        gl_tensor_make_writable(s);
    gl_buffer_detach(s->buf);
    if (name) {
        free(s->name);
        s->name = gl_xstrdup(name);
    }
    return s;
}

gl_tensor *gl_exec_plain(gl_exec *e, const gl_tensor *t)
{
    return t->layout ? to_plain(e, t, NULL) : gl_tensor_share(t);
}

gl_tensor *gl_exec_plain_kept(gl_exec *e, const gl_tensor *t)
{
    return share_out(e, t, NULL);
}

/* ---- running ------------------------------------------------------------------------------- */

static gl_status run_plan(const plan *p, frame *f);

/* What a kernel's run_body and alloc need: the node that runs it and the frame it runs in. */
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
    f.slots = p->plain_slots;
    for (size_t i = 0; i < n_in && i < g->n_inputs; i++)
        if (inputs[i] && g->inputs[i])
            frame_set(&f, g->inputs[i], gl_tensor_share(inputs[i]));
    st = run_plan(p, &f);
    for (size_t i = 0; i < n_out && st == GL_OK; i++) {
        const gl_value *v = g->outputs[i];
        const gl_tensor *t = NULL;
        /* The caller is a reference kernel (If/Loop/Scan): it reads plain tensors. */
        if (v)
            st = frame_read(&f, v, gl_backend_ref(), &t, &(bool){false});
        if (st == GL_OK && !t)
            st = gl_fail(GL_ERR_INPUT, "%s: subgraph output %zu '%s' has no value", where, i,
                         v ? v->name : "");
        else if (st == GL_OK)
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

/* The memory plan's range for output i of the node running in frame f, when it has
 * one: outputs of the model's graph's nodes, and the outputs of a function body run for
 * one of them. NULL: allocate as usual. */
static gl_buffer *arena_alloc(const frame *f, const gl_node *n, size_t i, size_t bytes,
                              bool zero)
{
    gl_exec *e = f->e;
    const gl_value *v = n->outputs[i];
    if (!e || !e->arena || !v)
        return NULL;
    if (f->graph == e->m->graph)
        return gl_arena_lend(e->arena, v->index, bytes, zero, 1);
    for (size_t k = 0; f->caller && k < f->graph->n_outputs && k < f->caller->n_outputs; k++)
        if (f->graph->outputs[k] == v && f->caller->outputs[k])
            return gl_arena_lend(e->arena, f->caller->outputs[k]->index, bytes, zero, 2);
    return NULL;
}

/* A buffer from a shelf (plan.h): from the slot whose idle buffer has this size, else an
 * empty slot, else one not lent (its idle buffer of another size is replaced), else the
 * first (it lends a new buffer; the one out is freed when its tensor goes). */
static gl_buffer *shelf_lend(plan_shelf *sh, size_t bytes, bool zero)
{
    gl_buffer_slot *pick = NULL;
    for (size_t i = 0; i < PLAN_SHELF_SLOTS && !pick; i++)
        if (sh->slot[i].idle && sh->slot[i].idle->size == bytes)
            pick = &sh->slot[i];
    for (size_t i = 0; i < PLAN_SHELF_SLOTS && !pick; i++)
        if (!sh->slot[i].idle && !sh->slot[i].lent)
            pick = &sh->slot[i];
    for (size_t i = 0; i < PLAN_SHELF_SLOTS && !pick; i++)
        if (!sh->slot[i].lent)
            pick = &sh->slot[i];
    return gl_buffer_from_slot(pick ? pick : &sh->slot[0], bytes, zero);
}

/* The node's own slot for output i (a node outside a plan), made on first need. */
static gl_buffer_slot *own_slot(plan_node *pn, size_t i)
{
    if (!pn->out_slots)
        pn->out_slots = gl_xcalloc(pn->node->n_outputs ? pn->node->n_outputs : 1,
                                  sizeof(*pn->out_slots));
    return &pn->out_slots[i];
}

/* gl_out_new's buffers: the memory plan's range, else lent by the output's shelf (or
 * the node's own slot), back for the next run. */
static gl_buffer *exec_alloc(gl_kernel_ctx *k, size_t i, size_t bytes, bool whole)
{
    node_run *nr = k->exec;
    if (i >= nr->pn->node->n_outputs) {
        gl_fail(GL_ERR_INTERNAL, "%s: output %zu does not exist", k->where, i);
        return NULL;
    }
    /* Elementwise kernels write every element: no need to zero what they get. */
    const gl_op_def *def = nr->pn->def;
    bool zero = !whole && (!def || !(def->flags & (GL_OP_ELEMENTWISE | GL_OP_BROADCAST)));
    gl_buffer *b = arena_alloc(nr->f, nr->pn->node, i, bytes, zero);
    if (b)
        return b;
    plan_shelf *sh = nr->pn->out_shelves ? nr->pn->out_shelves[i] : NULL;
    return sh ? shelf_lend(sh, bytes, zero) : gl_buffer_from_slot(own_slot(nr->pn, i), bytes, zero);
}

static bool node_frees(const plan_node *pn, size_t index)
{
    for (size_t i = 0; i < pn->n_frees; i++)
        if (pn->frees[i] == index)
            return true;
    return false;
}

/* gl_kernel_ctx.alloc_over: x's buffer for output i, when no one can see it change. The
 * buffer keeps its home: when the output goes, it is back where x's producer lends it
 * from next run. The executor runs one node at a time, so `refs` is stable here. */
static gl_buffer *exec_alloc_over(gl_kernel_ctx *k, size_t i, const gl_tensor *x, size_t bytes)
{
    node_run *nr = k->exec;
    const gl_node *n = nr->pn->node;
    frame *f = nr->f;
    gl_buffer *b = x ? x->buf : NULL;
    if (!f->e || i >= n->n_outputs || !n->outputs[i] || !b || b->kind != GL_BUF_HEAP ||
        b->readonly || __atomic_load_n(&b->refs, __ATOMIC_ACQUIRE) != 1 || b->size != bytes ||
        gl_graph_has_output(f->graph, n->outputs[i]))
        return NULL;
    const gl_value *v = NULL;
    for (size_t j = 0; j < n->n_inputs; j++) {
        const gl_value *u = n->inputs[j];
        if (!u || u->graph != f->graph || f->vals[u->index] != x)
            continue;
        if (v) /* read through two inputs */
            return NULL;
        v = u;
    }
    for (size_t j = 0; v && j < n->n_implicit; j++)
        if (n->implicit[j] == v) /* a subgraph of the node reads it too */
            return NULL;
    if (!v || v->init || !node_frees(nr->pn, v->index) || gl_graph_has_input(f->graph, v))
        return NULL;
    f->e->stats.in_place++;
    if (nr->pn->entry < f->e->n_entries)
        f->e->entries[nr->pn->entry].over = v->name;
    return gl_buffer_ref(b);
}

/* A call of a model-local function run as its body: formal inputs bound to the actual
 * ones (trailing optional inputs may be omitted), formal outputs handed back. */
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
    cf.slots = pn->call->plain_slots;
    if (f->e && f->graph == f->e->m->graph)
        cf.caller = n;
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
                            gl_tensor **out, uint64_t *reorder_ns)
{
    const gl_node *n = pn->node;
    node_run nr = {.pn = pn, .f = f};
    gl_kernel_ctx k = {
        .node = n, .model = pn->m, .opset = pn->opset,
        .where = pn->where, .n_inputs = n->n_inputs, .in = in, .n_outputs = n->n_outputs,
        .out = out, .run_body = exec_run_body, .exec = &nr,
        .alloc = f->e ? exec_alloc : NULL, .alloc_over = f->e ? exec_alloc_over : NULL,
        .backend_ctx = pn->backend_ctx,
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
    *reorder_ns += k.reorder_ns;
    if (f->e)
        f->e->stats.reorders += k.reorders;
    return st;
}

/* Run one node on resolved inputs; out[] (n_outputs entries) receives its outputs,
 * every non-omitted one set, or all NULL on failure. */
static gl_status run_node(plan_node *pn, frame *f, const gl_tensor *const *in,
                          gl_tensor **out, uint64_t *reorder_ns)
{
    const gl_node *n = pn->node;
    for (size_t i = 0; i < n->n_outputs; i++)
        out[i] = NULL;
    gl_status st = pn->call ? run_call(pn, f, in, out) : run_kernel(pn, f, in, out, reorder_ns);
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

/* The node's inputs from the frame, as its backend reads them (a function call run as
 * its body passes them on as they are: its nodes convert what they need). */
static gl_status resolve_inputs(plan_node *pn, frame *f, const gl_tensor **in,
                                size_t *conversions)
{
    const gl_node *n = pn->node;
    for (size_t i = 0; i < n->n_inputs; i++) {
        in[i] = NULL;
        if (!n->inputs[i])
            continue;
        bool converted = false;
        gl_status st = pn->call ? (in[i] = frame_get(f, n->inputs[i]), GL_OK)
                                : frame_read(f, n->inputs[i], pn->backend, &in[i], &converted);
        if (st != GL_OK)
            return gl_error_prefix("%s: input %zu", pn->where, i), st;
        if (!in[i])
            return gl_fail(GL_ERR_INPUT, "%s: input %zu '%s' has no value", pn->where, i,
                           n->inputs[i]->name);
        *conversions += converted;
    }
    return GL_OK;
}

static void entry_update(gl_exec *e, plan_node *pn, size_t conversions)
{
    if (pn->entry >= e->n_entries)
        return;
    gl_plan_entry *en = &e->entries[pn->entry];
    en->conversions = conversions;
    if (!pn->backend || !pn->backend->describe)
        return;
    unsigned builds = en->info.builds, const_reorders = en->info.const_reorders;
    pn->backend->describe(pn->backend_ctx, pn->state, &en->info);
    e->stats.builds += en->info.builds - builds;
    e->stats.const_reorders += en->info.const_reorders - const_reorders;
}

/* Resolve node inputs from the frame, run, store outputs, release what is dead. */
static gl_status step(plan_node *pn, frame *f)
{
    const gl_node *n = pn->node;
    gl_exec *e = f->e;
    bool observed = e && e->observed;
    const gl_tensor *in_small[SMALL_ARGS];
    gl_tensor *out_small[SMALL_ARGS];
    const gl_tensor **in = n->n_inputs <= SMALL_ARGS
                               ? in_small
                               : gl_xmalloc(n->n_inputs * sizeof(*in));
    gl_tensor **out = n->n_outputs <= SMALL_ARGS ? out_small
                                                 : gl_xmalloc(n->n_outputs * sizeof(*out));
    gl_exec_event ev = {.entry = pn->entry, .node = n};
    if (observed) {
        ev.depth = pn->entry < e->n_entries ? e->entries[pn->entry].depth : 0;
        if (e->observer.node_begin)
            e->observer.node_begin(e->observer.ctx, e, &ev);
    }
    uint64_t t0 = observed ? gl_now_ns() : 0, reorder_ns = 0;
    size_t conversions = 0;
    if (e && pn->entry < e->n_entries)
        e->entries[pn->entry].over = NULL; /* until exec_alloc_over says otherwise */
    gl_status st = resolve_inputs(pn, f, in, &conversions);
    uint64_t t1 = observed ? gl_now_ns() : 0;
    if (st == GL_OK)
        st = run_node(pn, f, in, out, &reorder_ns);
    if (e)
        entry_update(e, pn, conversions);
    if (observed) {
        uint64_t t2 = gl_now_ns();
        ev.status = st;
        ev.ns = t2 - t0;
        ev.convert_ns = (t1 - t0) + reorder_ns;
        ev.n_outputs = n->n_outputs;
        ev.outputs = out;
        if (e->observer.node_end)
            e->observer.node_end(e->observer.ctx, e, &ev);
    }
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

int64_t gl_inputs_batch(const gl_graph *g, const gl_tensor *const *inputs, size_t n_inputs)
{
    for (size_t i = 0; inputs && i < g->n_inputs && i < n_inputs; i++) {
        const gl_type *ty = &g->inputs[i]->type;
        const gl_tensor *t = inputs[i];
        if (t && t->rank >= 1 && ty->kind == GL_TYPE_TENSOR && ty->shape.rank >= 1 &&
            ty->shape.dims[0].value < 0)
            return t->dims[0];
    }
    return 0;
}

gl_status gl_exec_create(const gl_model *m, const gl_exec_options *o, gl_exec **out)
{
    *out = NULL;
    gl_exec_options opts = o ? *o : (gl_exec_options){0};
    const char *name = opts.backend ? opts.backend : "ref";
    const gl_backend *b = opts.custom_backend ? opts.custom_backend : gl_backend_find(name);
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
    gl_status st = b->ctx_create ? b->ctx_create(m, &e->opts, &e->backend_ctx) : GL_OK;
    if (!e->opts.max_memory)
        e->opts.max_memory = gl_limits_default_bytes();
    if (!e->opts.max_iterations)
        e->opts.max_iterations = GL_EXEC_MAX_ITERATIONS;
    gl_expansion calls;
    gl_expansion_init(&calls, m);
    plan_scope s = {.m = m, .e = e, .backend = b, .backend_ctx = e->backend_ctx,
                    .parent_entry = SIZE_MAX, .calls = &calls};
    /* A row per node of the graph at least (subgraphs and bodies grow it). */
    e->cap_entries = m->graph->n_nodes;
    e->entries = gl_xcalloc(e->cap_entries ? e->cap_entries : 1, sizeof(*e->entries));
    if (st == GL_OK)
        st = gl_plan_build(&s, m->graph, &e->root);
    if (st != GL_OK) {
        gl_exec_free(e);
        return st;
    }
    /* The reference backend's intermediates go where the memory plan puts them. */
    if (b == gl_backend_ref() && !opts.no_memory_plan)
        e->arena = gl_arena_create(m, e->opts.max_memory);
    *out = e;
    return GL_OK;
}

void gl_exec_free(gl_exec *e)
{
    if (!e)
        return;
    gl_plan_free(e->root);
    gl_arena_free(e->arena);
    if (e->backend_ctx && e->backend->ctx_free)
        e->backend->ctx_free(e->backend_ctx);
    free(e->entries);
    gl_text_pool_free(&e->texts);
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
    if (e->observed && e->observer.run_begin)
        e->observer.run_begin(e->observer.ctx, e);
    gl_limits lim = {.max_bytes = e->opts.max_memory, .max_iterations = e->opts.max_iterations,
                     .cancel = e->opts.cancel, .max_bytes_option = "--max-memory",
                     .max_iterations_option = "--max-iterations"};
    for (size_t i = 0; i < n_inputs; i++) /* the caller's, alive all along */
        lim.live_bytes += inputs[i] ? gl_tensor_nbytes(inputs[i]) : 0;
    lim.live_bytes += gl_arena_size(e->arena); /* the plan's block, alive all along */
    gl_limits_push(&lim);
    frame f;
    gl_status st = frame_open(&f, g, NULL, e);
    f.slots = e->root->plain_slots;
    if (st == GL_OK)
        st = bind_inputs(e, &f, inputs);
    if (st == GL_OK)
        st = run_plan(e->root, &f);
    for (size_t i = 0; i < n_outputs && st == GL_OK; i++) {
        const gl_tensor *t = frame_get(&f, g->outputs[i]);
        if (!t)
            st = gl_fail(GL_ERR_INTERNAL, "%s: graph output '%s' has no value", model_path(e->m),
                         g->outputs[i]->name);
        else if (!(outputs[i] = share_out(e, t, g->outputs[i]->name))) {
            gl_error_prefix("%s: graph output '%s'", model_path(e->m), g->outputs[i]->name);
            st = GL_ERR_INTERNAL;
        }
    }
    frame_close(&f);
    gl_limits_pop(&lim);
    if (st != GL_OK)
        for (size_t i = 0; i < n_outputs; i++) {
            gl_tensor_free(outputs[i]);
            outputs[i] = NULL;
        }
    if (e->observed && e->observer.run_end)
        e->observer.run_end(e->observer.ctx, e, st);
    return st;
}

void gl_exec_get_stats(const gl_exec *e, gl_exec_stats *s)
{
    *s = e->stats;
    s->arena_bytes = gl_arena_size(e->arena);
    gl_arena_counts(e->arena, &s->arena_lent, &s->arena_refused);
}

void gl_exec_set_observer(gl_exec *e, const gl_exec_observer *o)
{
    e->observed = o != NULL;
    e->observer = o ? *o : (gl_exec_observer){0};
}

size_t gl_exec_plan_count(const gl_exec *e)
{
    return e->n_entries;
}

const gl_plan_entry *gl_exec_plan_at(const gl_exec *e, size_t i)
{
    return i < e->n_entries ? &e->entries[i] : NULL;
}

const gl_model *gl_exec_model(const gl_exec *e)
{
    return e->m;
}

const char *gl_exec_backend_name(const gl_exec *e)
{
    return e->backend->name;
}

void gl_exec_summary(const gl_exec *e, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (e->backend->summary)
        e->backend->summary(e->backend_ctx, buf, len);
}

void gl_exec_print_plan(const gl_exec *e, FILE *f)
{
    char summary[400];
    gl_exec_summary(e, summary, sizeof(summary));
    if (summary[0])
        fprintf(f, "# %s\n", summary);
    for (size_t i = 0; i < e->n_entries; i++) {
        const gl_plan_entry *en = &e->entries[i];
        const gl_node *n = en->node;
        char name[256];
        snprintf(name, sizeof(name), "'%s'", gl_esc(n->name)); /* printed: escaped */
        fprintf(f, "%*s%-18s %-28s %-5s %s", 2 * en->depth, "", gl_esc(n->op_type), name,
                en->backend, gl_esc(en->info.impl));
        if (en->info.in_layouts[0] || en->info.out_layouts[0])
            fprintf(f, "  [%s -> %s]", en->info.in_layouts, en->info.out_layouts);
        if (en->conversions)
            fprintf(f, "  %zu input%s converted to plain", en->conversions,
                    en->conversions == 1 ? "" : "s");
        if (en->over)
            fprintf(f, "  written over '%s'", gl_esc(en->over));
        if (en->info.note[0])
            fprintf(f, "  (%s)", gl_esc(en->info.note));
        fputc('\n', f);
    }
}

void gl_plan_info_copy(const gl_plan_info *from, gl_backend_info *to)
{
    snprintf(to->impl, sizeof(to->impl), "%s", from->impl);
    snprintf(to->note, sizeof(to->note), "%s", from->note);
    snprintf(to->in_layouts, sizeof(to->in_layouts), "%s", from->in_layouts);
    snprintf(to->out_layouts, sizeof(to->out_layouts), "%s", from->out_layouts);
    to->const_reorders = from->const_reorders;
    to->builds = from->builds;
    to->generation = from->generation;
}

gl_status gl_eval_node(const gl_model *m, const gl_node *n, const gl_tensor *const *inputs,
                       gl_tensor **outputs)
{
    for (size_t i = 0; i < n->n_outputs; i++)
        outputs[i] = NULL;
    gl_expansion calls = {0}; /* the fixed bound: sizing it by the model costs per node */
    plan_scope s = {.m = m, .backend = gl_backend_ref(), .parent_entry = SIZE_MAX,
                    .calls = &calls};
    plan_node pn = {0};
    gl_limits own = {.max_bytes = gl_limits_default_bytes(),
                     .max_iterations = GL_EVAL_MAX_ITERATIONS};
    bool push = !gl_limits_current();
    if (push)
        gl_limits_push(&own);
    gl_status st = gl_plan_node_init(&s, n, &pn);
    if (st == GL_OK) {
        frame f = {.graph = n->graph, .consts_only = true};
        uint64_t reorder_ns = 0;
        st = run_node(&pn, &f, inputs, outputs, &reorder_ns);
    }
    gl_plan_node_release(&pn);
    if (push)
        gl_limits_pop(&own);
    return st;
}

/* plan.c — building plans: execution order, backends per node, function calls claimed
 * whole or expanded into their bodies, subgraph plans, value lifetimes, and the plan
 * table (the plan as data) that `run --plan`, profiles and the workbench read.
 */
#include "exec/plan.h"

#include <stdlib.h>
#include <string.h>

/* Deeply nested subgraphs should not exhaust the stack. (Function calls are bounded by
 * the expansion, ir/calls.h: each call site gets its own plan of the body, with the
 * caller's attributes substituted, so calls of calls multiply.) */
#define MAX_PLAN_DEPTH 64

/* ---- building plans ------------------------------------------------------------------ */


static bool same_domain(const char *a, const char *b)
{
    return strcmp(gl_domain_canonical(a), gl_domain_canonical(b)) == 0;
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

/* The caller's constant bound to body value v when v is a formal input of the function
 * the scope instantiates, else NULL. Only initializers that no run can override: a
 * frame finds those by themselves, whatever graph the frame is of (exec.c's frame_find). */
static gl_value *bound_constant(const plan_scope *s, const gl_value *v)
{
    const gl_graph *body = s->fn ? s->fn->body : NULL;
    if (!v || !body || !s->caller || v->graph != body)
        return NULL;
    for (size_t i = 0; i < body->n_inputs && i < s->caller->n_inputs; i++)
        if (body->inputs[i] == v) {
            gl_value *cv = s->caller->inputs[i];
            return cv && cv->init && gl_value_is_constant(cv) ? cv : NULL;
        }
    return NULL;
}

static bool reads_bound_constant(const plan_scope *s, const gl_node *n)
{
    for (size_t i = 0; i < n->n_inputs; i++)
        if (bound_constant(s, n->inputs[i]))
            return true;
    return false;
}

/* A shallow copy of a function-body node for one call site. Attributes that refer to
 * the caller's take its value under the body's attribute name; those the caller does not
 * set are absent, so the kernel uses the op's default. Inputs bound to the caller's
 * constants read those constants themselves: to a backend, a weight inside the body is
 * then the initializer it is (packed once, a Clip's bounds fixed), not a value that may
 * change from run to run. The copy owns only its attrs and inputs arrays. */
static gl_node *instantiate(const plan_scope *s, const gl_node *src)
{
    const gl_node *caller = s->caller;
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
    c->inputs = gl_xcalloc(src->n_inputs ? src->n_inputs : 1, sizeof(*c->inputs));
    c->cap_inputs = src->n_inputs;
    for (size_t i = 0; i < src->n_inputs; i++) {
        gl_value *k = bound_constant(s, src->inputs[i]);
        c->inputs[i] = k ? k : src->inputs[i];
    }
    return c;
}

static void release_inst(gl_node *inst)
{
    if (inst) {
        free(inst->attrs);
        free(inst->inputs);
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
    plan_scope inner = {.m = s->m, .e = s->e, .backend = s->backend,
                        .backend_ctx = s->backend_ctx, .fn = pn->fn, .caller = pn->node,
                        .caller_where = pn->where, .depth = s->depth + 1,
                        .parent_entry = pn->entry, .calls = s->calls};
    st = gl_plan_build(&inner, pn->fn->body, &pn->call);
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
    inner.parent_entry = pn->entry;
    plan *sub = NULL;
    gl_status st = gl_plan_build(&inner, g, &sub);
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

/* A new row of the plan table for pn (none outside a gl_exec). */
static gl_plan_entry *add_entry(const plan_scope *s, plan_node *pn)
{
    pn->entry = SIZE_MAX;
    gl_exec *e = s->e;
    if (!e)
        return NULL;
    GL_GROW(e->entries, e->cap_entries, e->n_entries + 1);
    pn->entry = e->n_entries++;
    gl_plan_entry *en = &e->entries[pn->entry];
    *en = (gl_plan_entry){.node = pn->node, .depth = s->depth, .parent = s->parent_entry,
                          .info = {.impl = "", .note = "", .in_layouts = "", .out_layouts = ""}};
    return en;
}

/* The chosen backend first; what it refuses runs on the reference kernels (why, when
 * the backend says, goes to the plan). */
static void choose_backend(const plan_scope *s, plan_node *pn, gl_plan_entry *en)
{
    const gl_backend *ref = gl_backend_ref();
    char why[sizeof((gl_backend_info){0}.note)] = "";
    if (s->backend != ref &&
        s->backend->claims(s->backend_ctx, s->m, pn->node, NULL, why, sizeof(why))) {
        pn->backend = s->backend;
        pn->backend_ctx = s->backend_ctx;
    } else {
        pn->backend = ref;
        pn->backend_ctx = NULL;
        if (en && s->backend != ref) {
            en->fell_back = true;
            en->info.note = gl_text_intern(&s->e->texts, why);
        }
    }
    if (en) {
        en->backend = pn->backend->name;
        en->info.impl = pn->backend == ref ? "ref" : "(built on first run)";
    }
}

/* A call of a model-local function: the chosen backend may run the whole group (a fused
 * node saved as a function); else the body is planned for this call site. */
static gl_status plan_function_call(const plan_scope *s, plan_node *pn, gl_plan_entry *en)
{
    const gl_backend *ref = gl_backend_ref();
    char why[sizeof((gl_backend_info){0}.note)] = "";
    if (s->backend != ref &&
        s->backend->claims(s->backend_ctx, s->m, pn->node, pn->fn, why, sizeof(why))) {
        pn->backend = s->backend;
        pn->backend_ctx = s->backend_ctx;
        if (en) {
            en->backend = pn->backend->name;
            en->info.impl = "(built on first run)";
        }
        return GL_OK;
    }
    if (en) {
        en->backend = "body";
        en->info.impl = gl_text_internf(&s->e->texts, "function %s.%s",
                                        gl_domain_display(pn->fn->domain), pn->fn->name);
        if (s->backend != ref)
            en->info.note = gl_text_intern(&s->e->texts, why);
    }
    return plan_call(s, pn);
}

gl_status gl_plan_node_init(const plan_scope *s, const gl_node *src, plan_node *pn)
{
    if (s->caller && (refers_to_caller(src) || reads_bound_constant(s, src)))
        pn->inst = instantiate(s, src);
    pn->node = pn->inst ? pn->inst : src;
    pn->m = s->m;
    const gl_node *n = pn->node;
    pn->where = node_where(s, n);
    pn->opset = scope_opset(s, n->domain);
    gl_plan_entry *en = add_entry(s, pn);
    pn->def = gl_op_lookup(n->domain, n->op_type, pn->opset);
    if (!pn->def || !pn->def->kernel) {
        pn->fn = gl_called_function(s->m, n);
        if (pn->fn)
            return plan_function_call(s, pn, en);
        if (!pn->def)
            return gl_fail(GL_ERR_UNSUPPORTED, "%s: unknown op '%s' (domain '%s', opset %lld)",
                           pn->where, n->op_type, gl_domain_display(n->domain), (long long)pn->opset);
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: op '%s' (domain '%s', opset %lld) has no kernel",
                       pn->where, n->op_type, gl_domain_display(n->domain), (long long)pn->opset);
    }
    choose_backend(s, pn, en);
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
gl_status gl_exec_order(const gl_graph *g, const gl_node ***order, size_t *count)
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

static plan_shelf *new_shelf(plan *p)
{
    GL_GROW(p->shelves, p->cap_shelves, p->n_shelves + 1);
    return p->shelves[p->n_shelves++] = gl_xcalloc(1, sizeof(plan_shelf));
}

/* Whether shelf sh has a slot planned for outputs of `bytes`. */
static bool shelf_has_size(const plan_shelf *sh, size_t bytes)
{
    for (size_t i = 0; i < sh->n_sizes; i++)
        if (sh->sizes[i] == bytes)
            return true;
    return false;
}

/* How deep take_free_shelf looks into the stack of free shelves: a graph that frees
 * thousands at once (a wide Concat's inputs) plans in linear time still. */
#define SHELF_LOOK 64

/* The free shelf for an output of `bytes` (0: not known from its type), taken off the
 * stack of free shelves: of the SHELF_LOOK most recently freed, the latest that has
 * that size, else the latest with a size to spare, else NULL. */
static plan_shelf *take_free_shelf(plan_shelf **free_shelves, size_t *n_free, size_t bytes)
{
    size_t pick = SIZE_MAX, low = *n_free > SHELF_LOOK ? *n_free - SHELF_LOOK : 0;
    for (size_t j = *n_free; j-- > low && pick == SIZE_MAX;)
        if (!bytes || shelf_has_size(free_shelves[j], bytes))
            pick = j;
    for (size_t j = *n_free; j-- > low && pick == SIZE_MAX;)
        if (free_shelves[j]->n_sizes < PLAN_SHELF_SIZES)
            pick = j;
    if (pick == SIZE_MAX)
        return NULL;
    plan_shelf *sh = free_shelves[pick];
    memmove(free_shelves + pick, free_shelves + pick + 1,
            (*n_free - pick - 1) * sizeof(*free_shelves));
    (*n_free)--;
    return sh;
}

/* Put every output of the plan's nodes on a shelf, greedily in execution order: a shelf
 * is free again after the node that reads its last value has run (its frees), and the
 * next output takes a free one (take_free_shelf). A graph output leaves with the
 * caller: it gets a shelf of its own, so that the intermediates keep their buffers from
 * run to run. */
static void plan_shelves(plan *p)
{
    const gl_graph *g = p->graph;
    size_t nv = g->n_values;
    plan_shelf **of_value = gl_xcalloc(nv ? nv : 1, sizeof(*of_value));
    bool *leaves = gl_xcalloc(nv ? nv : 1, sizeof(*leaves));
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] && g->outputs[i]->graph == g && g->outputs[i]->index < nv)
            leaves[g->outputs[i]->index] = true;
    plan_shelf **free_shelves = NULL;
    size_t n_free = 0, cap_free = 0;
    for (size_t k = 0; k < p->n_nodes; k++) {
        plan_node *pn = &p->nodes[k];
        const gl_node *n = pn->node;
        pn->out_shelves = gl_xcalloc(n->n_outputs ? n->n_outputs : 1, sizeof(*pn->out_shelves));
        for (size_t i = 0; i < n->n_outputs; i++) {
            const gl_value *v = n->outputs[i];
            if (!v || v->graph != g || v->index >= nv)
                continue;
            bool shared = !leaves[v->index];
            size_t bytes = 0; /* stays 0 when the type does not give it */
            gl_value_static_bytes(v, &bytes);
            plan_shelf *sh = shared ? take_free_shelf(free_shelves, &n_free, bytes) : NULL;
            if (!sh)
                sh = new_shelf(p);
            if (bytes && !shelf_has_size(sh, bytes)) /* a size to spare: take_free_shelf */
                sh->sizes[sh->n_sizes++] = bytes;
            pn->out_shelves[i] = sh;
            if (shared)
                of_value[v->index] = sh;
        }
        for (size_t j = 0; j < pn->n_frees; j++)
            if (of_value[pn->frees[j]]) {
                GL_GROW(free_shelves, cap_free, n_free + 1);
                free_shelves[n_free++] = of_value[pn->frees[j]];
                of_value[pn->frees[j]] = NULL;
            }
    }
    free(free_shelves);
    free(leaves);
    free(of_value);
}

gl_status gl_plan_build(const plan_scope *s, const gl_graph *g, plan **out)
{
    *out = NULL;
    const gl_node **order = NULL;
    size_t count = 0;
    gl_status st = gl_exec_order(g, &order, &count);
    if (st != GL_OK)
        return st;
    plan *p = gl_xcalloc(1, sizeof(*p));
    p->graph = g;
    p->nodes = gl_xcalloc(count ? count : 1, sizeof(*p->nodes));
    p->plain_slots = gl_xcalloc(g->n_values ? g->n_values : 1, sizeof(*p->plain_slots));
    for (size_t k = 0; k < count && st == GL_OK; k++, p->n_nodes++)
        st = gl_plan_node_init(s, order[k], &p->nodes[k]);
    free(order);
    if (st != GL_OK) {
        gl_plan_free(p);
        return st;
    }
    plan_lifetimes(p);
    plan_shelves(p);
    *out = p;
    return GL_OK;
}

void gl_plan_node_release(plan_node *pn)
{
    if (pn->state && pn->backend && pn->backend->release)
        pn->backend->release(pn->state);
    for (size_t i = 0; i < pn->n_bodies; i++)
        gl_plan_free(pn->bodies[i].plan);
    free(pn->bodies);
    gl_plan_free(pn->call);
    free(pn->frees);
    free(pn->where);
    for (size_t i = 0; pn->out_slots && i < pn->node->n_outputs; i++)
        gl_buffer_slot_clear(&pn->out_slots[i]);
    free(pn->out_slots);
    free(pn->out_shelves); /* the shelves are the plan's */
    release_inst(pn->inst);
}

void gl_plan_free(plan *p)
{
    if (!p)
        return;
    for (size_t k = 0; k < p->n_nodes; k++)
        gl_plan_node_release(&p->nodes[k]);
    for (size_t i = 0; p->plain_slots && i < p->graph->n_values; i++)
        gl_buffer_slot_clear(&p->plain_slots[i]);
    free(p->plain_slots);
    for (size_t i = 0; i < p->n_shelves; i++) {
        for (size_t j = 0; j < PLAN_SHELF_SLOTS; j++)
            gl_buffer_slot_clear(&p->shelves[i]->slot[j]);
        free(p->shelves[i]);
    }
    free(p->shelves);
    free(p->nodes);
    free(p);
}


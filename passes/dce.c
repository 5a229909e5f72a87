/* dce.c — dead-code elimination.
 *
 * A node is live when a graph output depends on it. Marking walks backwards from the
 * graph outputs over input edges and implicit ones: a value that a subgraph reads is an
 * implicit input of the node holding that subgraph, so it is live exactly when that node
 * is (nothing reads a value unseen). Nodes that may have side effects stay, and so does
 * what they read. The dead nodes are then removed consumers first (reverse topological
 * order), so each removal is legal; then the constants nothing reads any more.
 *
 * The bodies of live If/Loop/Scan/SequenceMap nodes are cleaned the same way, their
 * outputs being the roots. A capture left unused there stays: dropping it could make
 * values outside dead, which would need another round on the outer graph.
 */
#include "passes/passes.h"

#include "ir/calls.h"
#include "ops/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- liveness ------------------------------------------------------------------------ */

typedef struct liveness {
    const gl_graph *g;
    bool *live;       /* by node position */
    gl_node **stack;  /* marked, inputs not yet visited; each node enters once */
    size_t depth;
} liveness;

static void mark_node(liveness *l, gl_node *n)
{
    if (!l->live[n->index]) {
        l->live[n->index] = true;
        l->stack[l->depth++] = n;
    }
}

static void mark_value(liveness *l, const gl_value *v)
{
    if (v && v->producer && v->producer->graph == l->g)
        mark_node(l, v->producer);
}

/* Everything the marked nodes read, explicitly or through their subgraphs. */
static void propagate(liveness *l)
{
    while (l->depth) {
        const gl_node *n = l->stack[--l->depth];
        for (size_t i = 0; i < n->n_inputs; i++)
            mark_value(l, n->inputs[i]);
        for (size_t i = 0; i < n->n_implicit; i++)
            mark_value(l, n->implicit[i]);
    }
}

/* The marked nodes' inputs, visited by position from the last node back: in a sorted
 * graph a node's producers come before it, so one pass reaches them all, reading the
 * node list in order rather than chasing each producer (on the 100k-node ladder the
 * chase was cache misses). A producer after its reader (a graph that is not sorted, or a
 * body's outer value) is followed by the stack instead. Marks what propagate would. */
static void sweep_back(liveness *l)
{
    const gl_graph *g = l->g;
    l->depth = 0; /* the stack's nodes are visited in the sweep */
    for (size_t i = g->n_nodes; i-- > 0;) {
        const gl_node *n = g->nodes[i];
        if (!n || !l->live[i])
            continue;
        for (size_t k = 0; k < n->n_inputs + n->n_implicit; k++) {
            const gl_value *v = k < n->n_inputs ? n->inputs[k] : n->implicit[k - n->n_inputs];
            gl_node *p = v ? v->producer : NULL;
            if (!p || p->graph != g || l->live[p->index])
                continue;
            if (p->index < i)
                l->live[p->index] = true;
            else
                mark_node(l, p);
        }
    }
    propagate(l);
}

/* Why a node that no output needs must stay anyway; NULL: it may go. */
static const char *keep_reason(const gl_node *n, char *buf, size_t len)
{
    if (n->n_outputs == 0)
        snprintf(buf, len, "%s '%s' has no outputs: it can only act through side effects",
                 n->op_type, n->name);
    else if (gl_node_effects(n) != GL_EFFECT_UNKNOWN)
        return NULL;
    else if (!gl_domain_is_pure(n->domain))
        snprintf(buf, len, "%s '%s': domain '%s' may have side effects", n->op_type, n->name,
                 n->domain);
    else
        snprintf(buf, len, "%s '%s': its subgraphs hold ops that may have side effects",
                 n->op_type, n->name);
    return buf;
}

static void add_context(gl_decision *d, const gl_graph *g)
{
    if (g->parent_node)
        gl_decision_add_text(d, "inside", g->parent_node->name);
}

/* Mark what the outputs need, then what the nodes that must stay need (each such node
 * is a refusal). False when the budget ran out first. */
static bool mark_live(gl_graph *g, gl_pass_ctx *ctx, liveness *l)
{
    for (size_t i = 0; i < g->n_outputs; i++)
        mark_value(l, g->outputs[i]);
    sweep_back(l);
    gl_node *n;
    gl_foreach_node(g, i, n) {
        char why[256];
        if (l->live[i] || !keep_reason(n, why, sizeof(why)))
            continue;
        if (!gl_pass_may_rewrite(ctx))
            return false;
        gl_decision *d = gl_pass_decide(ctx, "dead-node", GL_REFUSED, "%s", why);
        gl_decision_add_node_ref(d, n);
        add_context(d, g);
        mark_node(l, n);
        propagate(l);
    }
    return true;
}

static size_t present_outputs(const gl_node *n)
{
    size_t k = 0;
    for (size_t i = 0; i < n->n_outputs; i++)
        k += n->outputs[i] != NULL;
    return k;
}

static bool outputs_unread(const gl_node *n)
{
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && (n->outputs[i]->n_uses || n->outputs[i]->n_output_refs))
            return false;
    return true;
}

/* Consumers first: in a sorted graph every reader of a dead node is a later dead node. */
static gl_status remove_dead_nodes(gl_graph *g, gl_pass_ctx *ctx, const bool *live)
{
    for (size_t i = g->n_nodes; i-- > 0;) {
        gl_node *n = g->nodes[i];
        if (!n || live[i])
            continue;
        if (!gl_pass_may_rewrite(ctx))
            break;
        if (!outputs_unread(n))
            return gl_fail(GL_ERR_INTERNAL, "dce: node '%s' (%s) is dead but still read",
                           n->name, n->op_type);
        gl_decision *d = gl_pass_decide(ctx, "dead-node", GL_APPLIED,
                                        "%s '%s': no graph output depends on it", n->op_type,
                                        n->name);
        gl_decision_add_node_ref(d, n);
        gl_decision_add_number(d, "outputs", (double)present_outputs(n));
        add_context(d, g);
        gl_status st = gl_remove_node(g, n);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

static gl_status remove_dead_constants(gl_graph *g, gl_pass_ctx *ctx)
{
    /* gl_remove_value edits g->inits: walk a copy. */
    size_t n = g->n_inits;
    gl_value **inits = gl_xmalloc((n ? n : 1) * sizeof(*inits));
    if (n)
        memcpy(inits, g->inits, n * sizeof(*inits));
    gl_status st = GL_OK;
    for (size_t i = 0; i < n && st == GL_OK; i++) {
        gl_value *v = inits[i];
        if (!gl_value_is_constant(v) || v->is_input || v->n_uses || v->n_output_refs)
            continue;
        if (!gl_pass_may_rewrite(ctx))
            break;
        char type[128];
        gl_type_format(&v->type, type, sizeof(type));
        size_t bytes = gl_tensor_nbytes(v->init);
        gl_decision *d = gl_pass_decide(ctx, "dead-initializer", GL_APPLIED,
                                        "constant '%s' (%s, %zu bytes) is read by nothing",
                                        v->name, type, bytes);
        gl_decision_add_text(d, "value", v->name);
        gl_decision_add_number(d, "bytes", (double)bytes);
        add_context(d, g);
        if (!gl_pass_vetoed(ctx, d))
            st = gl_remove_value(g, v);
    }
    free(inits);
    return st;
}

static gl_status dce_graph(gl_graph *g, gl_pass_ctx *ctx)
{
    liveness l = {g, gl_xcalloc(g->n_nodes + 1, sizeof(bool)),
                  gl_xmalloc((g->n_nodes + 1) * sizeof(gl_node *)), 0};
    gl_status st = GL_OK;
    if (mark_live(g, ctx, &l))
        st = remove_dead_nodes(g, ctx, l.live);
    free(l.live);
    free(l.stack);
    if (st == GL_OK)
        st = remove_dead_constants(g, ctx);
    if (st == GL_OK)
        st = gl_pass_on_bodies(g, ctx, dce_graph);
    return st;
}

gl_status gl_pass_dce(gl_graph *g, gl_pass_ctx *ctx) { return dce_graph(g, ctx); }

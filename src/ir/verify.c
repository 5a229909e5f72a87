/* verify.c — gl_graph_verify: check the invariants of graph.h, in linear time.
 *
 * The checks come in layers, each trusting the ones before it: array bookkeeping (index,
 * graph, live count, ids) and names, producers, use lists, the interface lists (inputs,
 * initializers, captures, outputs), availability of every read value, subgraphs, and
 * finally order or acyclicity. The first violation wins and is reported with the graph,
 * node and value it concerns, as GL_ERR_INTERNAL: a broken invariant is our bug.
 *
 * The layers share walks over the node and value arrays: a walk does, per node or value,
 * what every layer before the next walk asks of it, so no check reads what an earlier
 * layer has not vouched for yet. The pipeline verifies after every step that touched the
 * graph, and on a 100k-node graph the dozen walks of one layer after another (the arrays
 * do not fit in cache) cost as much as a pass: six walks instead (issue 23).
 */
#include "ir/graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct verifier {
    const gl_graph *g;
    bool allow_unsorted;
    unsigned char *ids;    /* the ids seen so far by the walk over nodes, then values */
    size_t *input_base;    /* per node index: first slot of its inputs in in_marks */
    size_t *implicit_base; /* per node index: first slot of its implicit list */
    unsigned char *in_marks, *implicit_marks;
    int *output_refs;      /* per value index: occurrences in g->outputs */
    size_t flagged_inputs, flagged_inits, flagged_captures; /* values so marked */
    size_t *indegree;      /* per node index, for the cycle check */
} verifier;

static const char *gname(const gl_graph *g)
{
    return g->name && *g->name ? g->name : "(unnamed)";
}

static const char *str_or(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

static gl_status bad(const verifier *vf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static gl_status bad(const verifier *vf, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return gl_fail(GL_ERR_INTERNAL, "graph '%s': %s", gname(vf->g), msg);
}

#define NODE_FMT "node '%s' (%s)"
#define NODE_ARGS(n) str_or((n)->name, "(null)"), str_or((n)->op_type, "(null)")

static bool owns_value(const gl_graph *g, const gl_value *v)
{
    return v && v->graph == g && v->index < g->n_values && g->values[v->index] == v;
}

static bool owns_node(const gl_graph *g, const gl_node *n)
{
    return n && n->graph == g && n->index < g->n_nodes && g->nodes[n->index] == n;
}

/* A value a node may read: produced here, or coming from outside the node list. */
static bool available(const gl_value *v)
{
    return v->producer || v->is_input || v->init || v->outer;
}

/* ---- layers 1 and 2: arrays, ids and names ---- */

static bool id_seen(unsigned char *bits, uint32_t id)
{
    bool seen = bits[id / 8] & (1u << (id % 8));
    bits[id / 8] |= (unsigned char)(1u << (id % 8));
    return seen;
}

static gl_status check_node_slot(verifier *vf, const gl_node *n, size_t i)
{
    const gl_graph *g = vf->g;
    if (!n->name || !n->op_type)
        return bad(vf, "node at position %zu has no name or no op_type", i);
    /* "" is canonical: only another spelling needs the comparison. */
    if (!n->domain || (*n->domain && strcmp(n->domain, gl_domain_canonical(n->domain)) != 0))
        return bad(vf, NODE_FMT ": domain '%s' is not canonical (the default domain is \"\")",
                   NODE_ARGS(n), n->domain ? n->domain : "(null)");
    if (n->graph != g || n->index != i)
        return bad(vf, NODE_FMT ": graph pointer or index (%zu) does not match its position %zu",
                   NODE_ARGS(n), n->index, i);
    if (n->id >= g->next_node_id)
        return bad(vf, NODE_FMT ": id %u is not below next_node_id %u", NODE_ARGS(n),
                   (unsigned)n->id, (unsigned)g->next_node_id);
    if (id_seen(vf->ids, n->id))
        return bad(vf, NODE_FMT ": id %u is used by another node", NODE_ARGS(n), (unsigned)n->id);
    return GL_OK;
}

/* A lookup may read the name of any node or value in the index: the names are checked
 * in the walks after the one over every slot. */
static gl_status check_node_name(const verifier *vf, const gl_node *n)
{
    const gl_node *found = gl_find_node(vf->g, n->name);
    if (!found || !owns_node(vf->g, found) || strcmp(found->name, n->name) != 0)
        return bad(vf, NODE_FMT ": name is missing from the node index", NODE_ARGS(n));
    return GL_OK;
}

/* Walk 1, the nodes: their slots; where each one's marks go (layer 4). */
static gl_status walk_node_slots(verifier *vf)
{
    const gl_graph *g = vf->g;
    size_t live = 0, n_in = 0, n_imp = 0;
    vf->ids = gl_xcalloc((size_t)g->next_node_id / 8 + 1, 1);
    vf->input_base = gl_xcalloc(g->n_nodes + 1, sizeof(size_t));
    vf->implicit_base = gl_xcalloc(g->n_nodes + 1, sizeof(size_t));
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        vf->input_base[i] = n_in;
        vf->implicit_base[i] = n_imp;
        if (!n)
            continue;
        live++;
        gl_status st = check_node_slot(vf, n, i);
        if (st)
            return st;
        n_in += n->n_inputs;
        n_imp += n->n_implicit;
    }
    if (live != g->live_nodes)
        return bad(vf, "live_nodes is %zu but %zu nodes are live", g->live_nodes, live);
    vf->in_marks = gl_xcalloc(n_in + 1, 1);
    vf->implicit_marks = gl_xcalloc(n_imp + 1, 1);
    return GL_OK;
}

static gl_status check_value_slot(verifier *vf, const gl_value *v, size_t i)
{
    const gl_graph *g = vf->g;
    if (!v->name || !*v->name)
        return bad(vf, "value at position %zu has no name", i);
    if (v->graph != g || v->index != i)
        return bad(vf, "value '%s': graph pointer or index (%zu) does not match its position %zu",
                   v->name, v->index, i);
    if (v->id >= g->next_value_id)
        return bad(vf, "value '%s': id %u is not below next_value_id %u", v->name,
                   (unsigned)v->id, (unsigned)g->next_value_id);
    if (id_seen(vf->ids, v->id))
        return bad(vf, "value '%s': id %u is used by another value", v->name, (unsigned)v->id);
    return GL_OK;
}

static gl_status check_value_name(const verifier *vf, const gl_value *v)
{
    const gl_value *found = gl_find_value(vf->g, v->name);
    if (found != v)
        return bad(vf, "value '%s': name %s", v->name,
                   found ? "is shared with another value" : "is missing from the name index");
    return GL_OK;
}

/* Walk 2, the values: their slots; how many are marked as inputs, initializers and
 * captures (layer 5 matches the lists against these counts). */
static gl_status walk_value_slots(verifier *vf)
{
    const gl_graph *g = vf->g;
    free(vf->ids);
    vf->ids = gl_xcalloc((size_t)g->next_value_id / 8 + 1, 1);
    for (size_t i = 0; i < g->n_values; i++) {
        const gl_value *v = g->values[i];
        if (!v)
            continue;
        gl_status st = check_value_slot(vf, v, i);
        if (st)
            return st;
        vf->flagged_inputs += v->is_input;
        vf->flagged_inits += v->init != NULL;
        vf->flagged_captures += v->outer != NULL;
    }
    return GL_OK;
}

/* ---- layer 3: producers ---- */

static gl_status check_node_outputs(const verifier *vf, const gl_node *n)
{
    const gl_graph *g = vf->g;
    for (size_t s = 0; s < n->n_outputs; s++) {
        const gl_value *v = n->outputs[s];
        if (!v)
            continue;
        if (!owns_value(g, v))
            return bad(vf, NODE_FMT ": output %zu is not a value of this graph", NODE_ARGS(n), s);
        if (v->producer != n || v->producer_slot != (int)s)
            return bad(vf, NODE_FMT ": output %zu '%s' names %s as its producer (slot %d)",
                       NODE_ARGS(n), s, v->name,
                       v->producer ? str_or(v->producer->name, "(null)") : "no node",
                       v->producer_slot);
    }
    return GL_OK;
}

static gl_status check_value_producer(const verifier *vf, const gl_value *v)
{
    const gl_node *p = v->producer;
    if (!p)
        return GL_OK;
    if (!owns_node(vf->g, p))
        return bad(vf, "value '%s': producer is not a live node of this graph", v->name);
    if (v->producer_slot < 0 || (size_t)v->producer_slot >= p->n_outputs ||
        p->outputs[v->producer_slot] != v)
        return bad(vf, "value '%s': producer " NODE_FMT " does not list it as output %d",
                   v->name, NODE_ARGS(p), v->producer_slot);
    if (v->outer || v->init || v->is_input)
        return bad(vf, "value '%s': produced by " NODE_FMT " but also a %s", v->name,
                   NODE_ARGS(p), v->outer ? "capture" : v->init ? "initializer" : "graph input");
    return GL_OK;
}

/* Walk 3, the nodes: the name (layer 2), each output names its node as producer (the
 * nodes' side of layer 3), and every input is a value of this graph (before layer 4
 * reads use lists: a foreign input would otherwise surface as a missing use). */
static gl_status walk_node_edges(verifier *vf)
{
    const gl_graph *g = vf->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        if (!n)
            continue;
        gl_status st = check_node_name(vf, n);
        if (!st)
            st = check_node_outputs(vf, n);
        if (st)
            return st;
        for (size_t s = 0; s < n->n_inputs; s++)
            if (n->inputs[s] && !owns_value(g, n->inputs[s]))
                return bad(vf, NODE_FMT ": input %zu '%s' is not a value of this graph",
                           NODE_ARGS(n), s, str_or(n->inputs[s]->name, "(null)"));
    }
    return GL_OK;
}

/* ---- layer 4: use lists ----
 * Every input slot and implicit slot of every node gets one mark cell; each use entry
 * marks its cell. A cell marked twice is a duplicate entry, a cell left at zero a
 * missing one: multiplicity is exact without searching any use list. */

static gl_status mark_implicit_use(verifier *vf, const gl_value *v, const gl_node *n)
{
    for (size_t k = 0; k < n->n_implicit; k++) {
        if (n->implicit[k] != v)
            continue;
        unsigned char *cell = &vf->implicit_marks[vf->implicit_base[n->index] + k];
        if (*cell)
            return bad(vf, "value '%s': implicit use by " NODE_FMT " is listed twice", v->name,
                       NODE_ARGS(n));
        *cell = 1;
        return GL_OK;
    }
    return bad(vf, "value '%s': has an implicit use by " NODE_FMT " which does not list it as implicit input",
               v->name, NODE_ARGS(n));
}

static gl_status mark_uses_of(verifier *vf, const gl_value *v)
{
    for (size_t u = 0; u < v->n_uses; u++) {
        const gl_node *n = v->uses[u].node;
        int slot = v->uses[u].slot;
        if (!owns_node(vf->g, n))
            return bad(vf, "value '%s': use %zu points at a node that is not live in this graph",
                       v->name, u);
        if (slot == GL_USE_IMPLICIT) {
            gl_status st = mark_implicit_use(vf, v, n);
            if (st)
                return st;
            continue;
        }
        if (slot < 0 || (size_t)slot >= n->n_inputs || n->inputs[slot] != v)
            return bad(vf, "value '%s': lists a use by " NODE_FMT " input %d, which reads %s",
                       v->name, NODE_ARGS(n), slot,
                       slot >= 0 && (size_t)slot < n->n_inputs && n->inputs[slot]
                           ? n->inputs[slot]->name
                           : "nothing");
        unsigned char *cell = &vf->in_marks[vf->input_base[n->index] + (size_t)slot];
        if (*cell)
            return bad(vf, "value '%s': use by " NODE_FMT " input %d is listed twice", v->name,
                       NODE_ARGS(n), slot);
        *cell = 1;
    }
    return GL_OK;
}

/* Every input and implicit input of n has its use (walk 3 vouched for the inputs
 * being values of this graph). */
static gl_status check_node_reads(const verifier *vf, const gl_node *n)
{
    for (size_t s = 0; s < n->n_inputs; s++) {
        const gl_value *v = n->inputs[s];
        if (v && !vf->in_marks[vf->input_base[n->index] + s])
            return bad(vf, NODE_FMT ": input %zu '%s' is missing from the value's use list",
                       NODE_ARGS(n), s, v->name);
    }
    for (size_t k = 0; k < n->n_implicit; k++) {
        const gl_value *v = n->implicit[k];
        if (!owns_value(vf->g, v))
            return bad(vf, NODE_FMT ": implicit input %zu is not a value of this graph",
                       NODE_ARGS(n), k);
        if (!vf->implicit_marks[vf->implicit_base[n->index] + k])
            return bad(vf, NODE_FMT ": implicit input '%s' is %s", NODE_ARGS(n), v->name,
                       "missing from the value's use list or listed twice by the node");
    }
    return GL_OK;
}

/* ---- layer 5: interface lists ---- */

/* The graph's outputs are its values, each available; output_refs counts them (walk 4
 * matches each value's n_output_refs against it). */
static gl_status count_outputs(verifier *vf)
{
    const gl_graph *g = vf->g;
    vf->output_refs = gl_xcalloc(g->n_values + 1, sizeof(int));
    for (size_t i = 0; i < g->n_outputs; i++) {
        const gl_value *v = g->outputs[i];
        if (!owns_value(g, v))
            return bad(vf, "output %zu is not a value of this graph", i);
        if (!available(v))
            return bad(vf, "output %zu '%s' is not produced by any node, nor an input, initializer or capture",
                       i, v->name);
        vf->output_refs[v->index]++;
    }
    return GL_OK;
}

/* Walk 4, the values: the name (layer 2), the values' side of layer 3, their use lists
 * marked (layer 4), their count of graph-output entries (layer 5). */
static gl_status walk_value_edges(verifier *vf)
{
    const gl_graph *g = vf->g;
    gl_status st = count_outputs(vf);
    for (size_t i = 0; i < g->n_values && !st; i++) {
        const gl_value *v = g->values[i];
        if (!v)
            continue;
        st = check_value_name(vf, v);
        if (!st)
            st = check_value_producer(vf, v);
        if (!st)
            st = mark_uses_of(vf, v);
        if (!st && v->n_output_refs != vf->output_refs[i])
            st = bad(vf, "value '%s': n_output_refs is %d but the output list names it %d time(s)",
                     v->name, v->n_output_refs, vf->output_refs[i]);
    }
    return st;
}

/* `list` holds exactly the `flagged` values with `flag`, each once. */
static gl_status check_flag_list(const verifier *vf, gl_value *const *list, size_t n,
                                 bool (*flag)(const gl_value *), size_t flagged,
                                 const char *what)
{
    const gl_graph *g = vf->g;
    unsigned char *seen = gl_xcalloc(g->n_values + 1, 1);
    gl_status st = GL_OK;
    for (size_t i = 0; i < n && !st; i++) {
        const gl_value *v = list[i];
        if (!owns_value(g, v))
            st = bad(vf, "%s %zu is not a value of this graph", what, i);
        else if (!flag(v))
            st = bad(vf, "%s %zu '%s' is not marked as one", what, i, v->name);
        else if (seen[v->index]++)
            st = bad(vf, "%s '%s' is listed twice", what, v->name);
    }
    free(seen);
    if (!st && flagged != n)
        st = bad(vf, "%zu values are marked %s but the list holds %zu", flagged, what, n);
    return st;
}

static bool is_input(const gl_value *v) { return v->is_input; }
static bool has_init(const gl_value *v) { return v->init != NULL; }
static bool is_capture(const gl_value *v) { return v->outer != NULL; }

static gl_status check_captures(const verifier *vf)
{
    const gl_graph *g = vf->g;
    if (g->n_captures && !g->parent)
        return bad(vf, "has %zu captures but no enclosing graph", g->n_captures);
    for (size_t i = 0; i < g->n_captures; i++) {
        const gl_value *c = g->captures[i];
        if (!owns_value(g, c))
            return bad(vf, "capture %zu is not a value of this graph", i);
        if (!c->outer || !owns_value(g->parent, c->outer))
            return bad(vf, "capture '%s' does not point at a live value of the enclosing graph '%s'",
                       c->name, gname(g->parent));
        if (c->init || c->is_input)
            return bad(vf, "capture '%s' is also an %s", c->name,
                       c->init ? "initializer" : "input");
        for (size_t j = 0; j < i; j++)
            if (g->captures[j]->outer == c->outer)
                return bad(vf, "captures '%s' and '%s' both read '%s'", g->captures[j]->name,
                           c->name, c->outer->name);
    }
    return check_flag_list(vf, g->captures, g->n_captures, is_capture, vf->flagged_captures,
                           "capture");
}

static gl_status check_lists(verifier *vf)
{
    const gl_graph *g = vf->g;
    gl_status st = check_flag_list(vf, g->inputs, g->n_inputs, is_input, vf->flagged_inputs,
                                   "input");
    if (!st)
        st = check_flag_list(vf, g->inits, g->n_inits, has_init, vf->flagged_inits,
                             "initializer");
    if (!st)
        st = check_captures(vf);
    return st;
}

/* ---- layer 6: every read value exists, subgraphs agree with their holders ---- */

static gl_status check_available(const verifier *vf, const gl_node *n)
{
    for (size_t s = 0; s < n->n_inputs; s++) {
        const gl_value *v = n->inputs[s];
        if (v && !available(v))
            return bad(vf, NODE_FMT ": input %zu '%s' is not produced by any node, nor a graph input, initializer or capture",
                       NODE_ARGS(n), s, v->name);
    }
    for (size_t k = 0; k < n->n_implicit; k++) {
        const gl_value *v = n->implicit[k];
        if (!available(v))
            return bad(vf, NODE_FMT ": implicit input '%s' is not produced by any node, nor a graph input, initializer or capture",
                       NODE_ARGS(n), v->name);
    }
    return GL_OK;
}

static size_t node_subgraphs(const gl_attr *a, gl_graph *const **out)
{
    if (a->g) {
        *out = (gl_graph *const *)&a->g;
        return 1;
    }
    *out = a->graphs;
    return a->graphs ? a->n : 0;
}

static bool captured_by_some_subgraph(const gl_node *n, const gl_value *outer)
{
    for (size_t a = 0; a < n->n_attrs; a++) {
        gl_graph *const *subs;
        size_t n_subs = node_subgraphs(&n->attrs[a], &subs);
        for (size_t j = 0; j < n_subs; j++)
            for (size_t c = 0; subs[j] && c < subs[j]->n_captures; c++)
                if (subs[j]->captures[c]->outer == outer)
                    return true;
    }
    return false;
}

static bool in_implicit(const gl_node *n, const gl_value *v)
{
    for (size_t k = 0; k < n->n_implicit; k++)
        if (n->implicit[k] == v)
            return true;
    return false;
}

static gl_status check_subgraph(const verifier *vf, const gl_node *n, const gl_graph *sub)
{
    if (sub->parent != vf->g || sub->parent_node != n)
        return bad(vf, NODE_FMT ": subgraph '%s' has the wrong parent or parent_node",
                   NODE_ARGS(n), gname(sub));
    if (sub->model != vf->g->model)
        return bad(vf, NODE_FMT ": subgraph '%s' belongs to another model", NODE_ARGS(n), gname(sub));
    /* Inside first: a broken capture is better reported as such than as a mismatch. */
    gl_status st = gl_graph_verify(sub, vf->allow_unsorted);
    if (st) {
        gl_error_prefix("graph '%s': " NODE_FMT, gname(vf->g), NODE_ARGS(n));
        return st;
    }
    for (size_t c = 0; c < sub->n_captures; c++) {
        const gl_value *outer = sub->captures[c]->outer;
        if (!in_implicit(n, outer))
            return bad(vf, NODE_FMT ": subgraph '%s' captures '%s', which is not an implicit input of the node",
                       NODE_ARGS(n), gname(sub), outer->name);
    }
    return GL_OK;
}

/* n->implicit is exactly the set of values its subgraphs capture. */
static gl_status check_node_subgraphs(const verifier *vf, const gl_node *n)
{
    for (size_t a = 0; a < n->n_attrs; a++) {
        gl_graph *const *subs;
        size_t n_subs = node_subgraphs(&n->attrs[a], &subs);
        for (size_t j = 0; j < n_subs; j++) {
            gl_status st = subs[j] ? check_subgraph(vf, n, subs[j]) : GL_OK;
            if (st)
                return st;
        }
    }
    for (size_t k = 0; k < n->n_implicit; k++)
        if (!captured_by_some_subgraph(n, n->implicit[k]))
            return bad(vf, NODE_FMT ": implicit input '%s' is captured by none of its subgraphs",
                       NODE_ARGS(n), n->implicit[k]->name);
    return GL_OK;
}

/* ---- layer 7: order ---- */

static gl_status check_sorted(const verifier *vf, const gl_node *n)
{
    for (size_t s = 0; s < n->n_inputs; s++) {
        const gl_value *v = n->inputs[s];
        if (v && v->producer && v->producer->index >= n->index)
            return bad(vf, NODE_FMT ": input %zu '%s' is produced by " NODE_FMT ", which comes later",
                       NODE_ARGS(n), s, v->name, NODE_ARGS(v->producer));
    }
    for (size_t k = 0; k < n->n_implicit; k++) {
        const gl_value *v = n->implicit[k];
        if (v->producer && v->producer->index >= n->index)
            return bad(vf, NODE_FMT ": implicit input '%s' is produced by " NODE_FMT ", which comes later",
                       NODE_ARGS(n), v->name, NODE_ARGS(v->producer));
    }
    return GL_OK;
}

/* An input of `n` whose producer Kahn's algorithm never released, or NULL. */
static const gl_node *stuck_producer(const verifier *vf, const gl_node *n)
{
    for (size_t s = 0; s < n->n_inputs + n->n_implicit; s++) {
        const gl_value *v = s < n->n_inputs ? n->inputs[s] : n->implicit[s - n->n_inputs];
        if (v && v->producer && vf->indegree[v->producer->index])
            return v->producer;
    }
    return NULL;
}

/* Walk back from a stuck node through stuck producers until a node repeats: that node
 * lies on a cycle (a stuck node always has a stuck producer). */
static gl_status report_cycle(const verifier *vf, const gl_node *start)
{
    unsigned char *seen = gl_xcalloc(vf->g->n_nodes + 1, 1);
    const gl_node *n = start;
    while (n && !seen[n->index]) {
        seen[n->index] = 1;
        n = stuck_producer(vf, n);
    }
    free(seen);
    if (!n)
        n = start;
    return bad(vf, NODE_FMT " lies on a cycle", NODE_ARGS(n));
}

static void release(verifier *vf, const gl_node *n, size_t *queue, size_t *tail)
{
    for (size_t s = 0; s < n->n_outputs; s++) {
        const gl_value *v = n->outputs[s];
        for (size_t u = 0; v && u < v->n_uses; u++) {
            size_t j = v->uses[u].node->index;
            if (--vf->indegree[j] == 0)
                queue[(*tail)++] = j;
        }
    }
}

/* Kahn's algorithm, iterative: deep chains cannot overflow the stack. */
static gl_status check_acyclic(verifier *vf)
{
    const gl_graph *g = vf->g;
    vf->indegree = gl_xcalloc(g->n_nodes + 1, sizeof(size_t));
    size_t *queue = gl_xmalloc((g->n_nodes + 1) * sizeof(size_t));
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        if (!n)
            continue;
        for (size_t s = 0; s < n->n_inputs + n->n_implicit; s++) {
            const gl_value *v = s < n->n_inputs ? n->inputs[s] : n->implicit[s - n->n_inputs];
            vf->indegree[i] += v && v->producer;
        }
        if (!vf->indegree[i])
            queue[tail++] = i;
    }
    while (head < tail)
        release(vf, g->nodes[queue[head++]], queue, &tail);
    free(queue);
    if (tail == g->live_nodes)
        return GL_OK;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i] && vf->indegree[i])
            return report_cycle(vf, g->nodes[i]);
    return bad(vf, "cycle check lost count of nodes");
}

/* Walk 6, the nodes: each one's reads are in the use lists (the nodes' side of layer
 * 4), available, its subgraphs agree with it, and it comes after its producers. */
static gl_status walk_nodes(verifier *vf)
{
    const gl_graph *g = vf->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        if (!n)
            continue;
        gl_status st = check_node_reads(vf, n);
        if (!st)
            st = check_available(vf, n);
        if (!st)
            st = check_node_subgraphs(vf, n);
        if (!st && !vf->allow_unsorted)
            st = check_sorted(vf, n);
        if (st)
            return st;
    }
    /* Sorted implies acyclic; unsorted graphs still must not loop. */
    return vf->allow_unsorted ? check_acyclic(vf) : GL_OK;
}

static void verifier_free(verifier *vf)
{
    free(vf->ids);
    free(vf->input_base);
    free(vf->implicit_base);
    free(vf->in_marks);
    free(vf->implicit_marks);
    free(vf->output_refs);
    free(vf->indegree);
}

gl_status gl_graph_verify(const gl_graph *g, bool allow_unsorted)
{
    if (!g)
        return gl_fail(GL_ERR_INTERNAL, "verify: no graph");
    verifier vf = {.g = g, .allow_unsorted = allow_unsorted};
    gl_status (*const walks[])(verifier *) = {
        walk_node_slots,
        walk_value_slots,
        walk_node_edges,
        walk_value_edges,
        check_lists,
        walk_nodes,
    };
    gl_status st = GL_OK;
    for (size_t i = 0; i < GL_ARRAY_LEN(walks) && !st; i++)
        st = walks[i](&vf);
    verifier_free(&vf);
    return st;
}

/* toposort.c — topological sort of a graph (and of its subgraphs).
 *
 * Kahn's algorithm with a min-heap on each node's current position: among the nodes that
 * are ready, the one that came first in the file goes first. So an order that is already
 * valid comes out unchanged, and otherwise ties keep the file's order: diffs stay small
 * and the sort is stable. O(E + V log V).
 *
 * Edges are uses: an input slot (a node reading x twice is two edges, and also decrements
 * twice) and an implicit use by a node whose subgraph reads the value.
 */
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A binary min-heap of node positions (node->index). */
typedef struct index_heap {
    size_t *items;
    size_t len;
} index_heap;

static void heap_push(index_heap *h, size_t v)
{
    size_t i = h->len++;
    h->items[i] = v;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h->items[parent] <= h->items[i])
            break;
        size_t t = h->items[parent];
        h->items[parent] = h->items[i];
        h->items[i] = t;
        i = parent;
    }
}

static size_t heap_pop(index_heap *h)
{
    size_t top = h->items[0];
    h->items[0] = h->items[--h->len];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->len && h->items[l] < h->items[m])
            m = l;
        if (r < h->len && h->items[r] < h->items[m])
            m = r;
        if (m == i)
            break;
        size_t t = h->items[m];
        h->items[m] = h->items[i];
        h->items[i] = t;
        i = m;
    }
    return top;
}

/* The producer of `v` in this graph, if any. */
static gl_node *producer_in(const gl_graph *g, const gl_value *v)
{
    return v && v->producer && v->producer->graph == g ? v->producer : NULL;
}

/* How many edges enter n: one per input slot and per implicit input with a producer. */
static size_t count_in_edges(const gl_graph *g, const gl_node *n)
{
    size_t k = 0;
    for (size_t i = 0; i < n->n_inputs; i++)
        k += producer_in(g, n->inputs[i]) != NULL;
    for (size_t i = 0; i < n->n_implicit; i++)
        k += producer_in(g, n->implicit[i]) != NULL;
    return k;
}

/* A predecessor of n that was not emitted (exists for every node left after Kahn). */
static gl_node *unemitted_pred(const gl_graph *g, const gl_node *n, const size_t *indeg)
{
    for (size_t i = 0; i < n->n_inputs + n->n_implicit; i++) {
        const gl_value *v = i < n->n_inputs ? n->inputs[i] : n->implicit[i - n->n_inputs];
        gl_node *p = producer_in(g, v);
        if (p && indeg[p->index] > 0)
            return p;
    }
    return NULL;
}

/* Walk back from a node left over by Kahn's algorithm until a node repeats: that loop is
 * a cycle. Report it in forward order. */
static gl_status report_cycle(const gl_graph *g, const size_t *indeg)
{
    gl_node *start = NULL;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (indeg[n->index] > 0) {
            start = n;
            break;
        }
    }
    size_t cap = g->n_nodes;
    size_t *seen_at = malloc(cap * sizeof(size_t)); /* step + 1 at which a node was seen */
    gl_node **path = malloc(cap * sizeof(gl_node *));
    if (!seen_at || !path) {
        free(seen_at);
        free(path);
        return gl_fail(GL_ERR_INPUT, "%s: graph '%s' has a cycle",
                       g->model && g->model->path ? g->model->path : "<graph>",
                       g->name ? g->name : "");
    }
    memset(seen_at, 0, cap * sizeof(size_t));
    size_t len = 0;
    n = start;
    while (n && !seen_at[n->index]) {
        seen_at[n->index] = len + 1;
        path[len++] = n;
        n = unemitted_pred(g, n, indeg);
    }
    /* path[first..len-1] is the cycle walked backwards (each is the successor of the next). */
    size_t first = n ? seen_at[n->index] - 1 : 0;
    char msg[768];
    size_t off = 0;
    size_t shown = 0;
    for (size_t k = len; k-- > first && off < sizeof(msg) - 64; shown++) {
        if (shown == 12) {
            off += (size_t)snprintf(msg + off, sizeof(msg) - off, " -> ... (%zu nodes)",
                                    len - first);
            break;
        }
        off += (size_t)snprintf(msg + off, sizeof(msg) - off, "%s'%s' (%s)",
                                shown ? " -> " : "", path[k]->name, path[k]->op_type);
    }
    if (shown < 12 && off < sizeof(msg) - 64)
        snprintf(msg + off, sizeof(msg) - off, " -> '%s'", path[len - 1]->name);
    free(seen_at);
    free(path);
    return gl_fail(GL_ERR_INPUT, "%s: graph '%s' has a cycle: %s",
                   g->model && g->model->path ? g->model->path : "<graph>",
                   g->name ? g->name : "", msg);
}

/* Kahn over one graph. With `moved` NULL only check (nothing changes); else reorder. */
static gl_status sort_one_graph(gl_graph *g, size_t *moved)
{
    size_t n_slots = g->n_nodes;
    size_t *indeg = calloc(n_slots ? n_slots : 1, sizeof(size_t));
    index_heap heap = {malloc((n_slots ? n_slots : 1) * sizeof(size_t)), 0};
    gl_node **order = malloc((n_slots ? n_slots : 1) * sizeof(gl_node *));
    if (!indeg || !heap.items || !order) {
        free(indeg);
        free(heap.items);
        free(order);
        return gl_fail(GL_ERR_NOMEM, "toposort: out of memory for %zu nodes", n_slots);
    }

    gl_node *n;
    gl_foreach_node(g, i, n) {
        indeg[i] = count_in_edges(g, n);
        if (indeg[i] == 0)
            heap_push(&heap, i);
    }

    size_t emitted = 0;
    while (heap.len > 0) {
        gl_node *ready = g->nodes[heap_pop(&heap)];
        order[emitted++] = ready;
        for (size_t o = 0; o < ready->n_outputs; o++) {
            const gl_value *v = ready->outputs[o];
            for (size_t u = 0; v && u < v->n_uses; u++) {
                gl_node *succ = v->uses[u].node;
                if (succ->graph == g && --indeg[succ->index] == 0)
                    heap_push(&heap, succ->index);
            }
        }
    }

    gl_status st = GL_OK;
    if (emitted < g->live_nodes) {
        st = report_cycle(g, indeg);
    } else {
        size_t changed = 0, k = 0;
        gl_foreach_node(g, i, n)
            changed += order[k++] != n;
        if (moved && changed)
            gl_graph_set_order(g, order, emitted);
        if (moved)
            *moved += changed;
    }
    free(indeg);
    free(heap.items);
    free(order);
    return st;
}

static gl_status sort_subgraphs(gl_graph *g, size_t *moved);

/* moved == NULL: check only. */
static gl_status sort_recursive(gl_graph *g, size_t *moved)
{
    gl_status st = sort_one_graph(g, moved);
    return st ? st : sort_subgraphs(g, moved);
}

static gl_status sort_subgraphs(gl_graph *g, size_t *moved)
{
    gl_node *n;
    gl_foreach_node(g, i, n) {
        for (size_t a = 0; a < n->n_attrs; a++) {
            const gl_attr *at = &n->attrs[a];
            gl_status st = GL_OK;
            if (at->type == GL_ATTR_GRAPH && at->g)
                st = sort_recursive(at->g, moved);
            for (size_t k = 0; !st && at->type == GL_ATTR_GRAPHS && k < at->n; k++)
                st = sort_recursive(at->graphs[k], moved);
            if (st)
                return st;
        }
    }
    return GL_OK;
}

gl_status gl_check_acyclic(const gl_graph *g)
{
    /* sort_recursive does not modify the graph when moved is NULL. */
    return sort_recursive((gl_graph *)g, NULL);
}

gl_status gl_toposort(gl_graph *g, size_t *moved)
{
    size_t local = 0;
    gl_status st = sort_recursive(g, &local);
    if (moved)
        *moved = local;
    return st;
}

/* As a pass, the whole reordering is one rewrite: budget 0 leaves the order alone. */
gl_status gl_pass_toposort(gl_graph *g, gl_pass_ctx *ctx)
{
    if (!gl_pass_may_rewrite(ctx))
        return GL_OK;
    size_t moved = 0;
    gl_status st = gl_toposort(g, &moved);
    if (st == GL_OK && moved > 0)
        gl_pass_count_rewrite(ctx);
    return st;
}

/* cost.c — how much work dot's layout of a view is, known before running it (stages.h).
 *
 * dot ranks the boxes, splits every edge that spans k ranks into k-1 virtual nodes,
 * orders each rank (mincross), then positions every node, real and virtual, with network
 * simplex and routes splines around them. With the effort bounded (nslimit=1) the
 * positioning runs at most `boxes` iterations over the whole auxiliary graph, and the
 * routing walks every virtual node: the work is about boxes x (boxes + virtual) plus a
 * weight per virtual node. A DenseNet's dense blocks, where every feature map feeds
 * every later Concat of its block, have ~50 virtual nodes per box: that, not the box
 * count, is what makes their layout slow.
 *
 * Ranks are estimated by longest path from the sources; a box without inputs (a
 * constant, a graph input) moves down next to its first reader, as dot's ranking puts
 * it; an edge with a `label` (not an xlabel) takes two ranks, since dot gives labels a
 * rank of their own. Cycles (groups can read each other) are broken at the first box
 * left unranked, in view order. Linear in boxes + edges.
 */
#include "render/stages.h"

#include <stdlib.h>
#include <string.h>

/* Weight of a virtual node against one unit of positioning work (box x node): spline
 * routing and mincross per virtual node, fitted on DenseNet views (bench_render). */
#define VIRTUAL_WEIGHT 300

typedef struct adjacency {
    size_t *start; /* by box: first out-edge in `to` (CSR) */
    uint32_t *to;
    uint32_t *indegree;
} adjacency;

static void adjacency_build(const view *v, adjacency *a)
{
    size_t n = v->n_boxes;
    a->start = gl_xcalloc(n + 2, sizeof(*a->start));
    a->to = gl_xmalloc((v->n_edges + 1) * sizeof(*a->to));
    a->indegree = gl_xcalloc(n + 1, sizeof(*a->indegree));
    for (size_t i = 0; i < v->n_edges; i++)
        if (v->edges[i].from != v->edges[i].to)
            a->start[v->edges[i].from + 2]++;
    for (size_t i = 0; i < n; i++)
        a->start[i + 2] += a->start[i + 1];
    for (size_t i = 0; i < v->n_edges; i++) {
        const vedge *e = &v->edges[i];
        if (e->from == e->to)
            continue;
        a->to[a->start[e->from + 1]++] = e->to;
        a->indegree[e->to]++;
    }
}

static void adjacency_free(adjacency *a)
{
    free(a->start);
    free(a->to);
    free(a->indegree);
}

/* Longest-path ranks, every edge `span` long; cycles broken in view order. */
static void rank_boxes(const view *v, const adjacency *a, uint32_t span, uint64_t *rank)
{
    size_t n = v->n_boxes;
    uint32_t *left = gl_xmalloc((n + 1) * sizeof(*left));
    memcpy(left, a->indegree, n * sizeof(*left));
    uint32_t *queue = gl_xmalloc((n + 1) * sizeof(*queue));
    bool *done = gl_xcalloc(n + 1, sizeof(*done));
    size_t head = 0, tail = 0, next_unranked = 0;
    for (size_t i = 0; i < n; i++)
        if (!left[i])
            queue[tail++] = (uint32_t)i;
    for (size_t ranked = 0; ranked < n; ranked++) {
        if (head == tail) { /* a cycle: take the first box not ranked yet */
            while (done[next_unranked])
                next_unranked++;
            queue[tail++] = (uint32_t)next_unranked;
        }
        uint32_t b = queue[head++];
        done[b] = true;
        for (size_t k = a->start[b]; k < a->start[b + 1]; k++) {
            uint32_t t = a->to[k];
            if (done[t])
                continue;
            if (rank[t] < rank[b] + span)
                rank[t] = rank[b] + span;
            if (left[t] && --left[t] == 0)
                queue[tail++] = t;
        }
    }
    /* Sources sit just above their nearest reader. */
    for (size_t b = 0; b < n; b++) {
        if (a->indegree[b] || a->start[b] == a->start[b + 1])
            continue;
        uint64_t lowest = UINT64_MAX;
        for (size_t k = a->start[b]; k < a->start[b + 1]; k++)
            if (rank[a->to[k]] < lowest)
                lowest = rank[a->to[k]];
        if (lowest >= span && lowest - span > rank[b])
            rank[b] = lowest - span;
    }
    free(left);
    free(queue);
    free(done);
}

layout_cost gl_rv_layout_cost(const view *v, bool labelled_edges)
{
    layout_cost c = {.boxes = v->n_boxes, .edges = v->n_edges};
    if (!v->n_boxes)
        return c;
    uint32_t span = labelled_edges ? 2 : 1;
    adjacency a;
    adjacency_build(v, &a);
    uint64_t *rank = gl_xcalloc(v->n_boxes + 1, sizeof(*rank));
    rank_boxes(v, &a, span, rank);
    for (size_t i = 0; i < v->n_edges; i++) {
        const vedge *e = &v->edges[i];
        if (e->from == e->to)
            continue;
        uint64_t rf = rank[e->from], rt = rank[e->to];
        uint64_t length = rt > rf ? rt - rf : rf - rt;
        c.virtual_nodes += (length > span ? length : span) - 1;
    }
    for (size_t b = 0; b < v->n_boxes; b++)
        if (rank[b] > c.ranks)
            c.ranks = rank[b];
    c.work = (uint64_t)c.boxes * (c.boxes + c.virtual_nodes) + VIRTUAL_WEIGHT * c.virtual_nodes;
    free(rank);
    adjacency_free(&a);
    return c;
}

/* bench_toposort.c — the toposort pass on a large shuffled graph.
 *
 *   bench_toposort [-n NODES] [-r RUNS] [-s SEED]
 *
 * Builds a random DAG of NODES nodes (default 100000) through the IR edit API: each
 * node reads 1..3 earlier values, mostly recent ones (long chains) and now and then one
 * far back (long edges, many consumers). Before every timed run the node order is
 * shuffled (untimed, same seed for every contender), then three things are timed:
 *   toposort  gl_toposort(g, NULL), the pass;
 *   kahn      a plain FIFO Kahn's algorithm over the same IR plus gl_graph_set_order:
 *             what a simple O(V+E) sort costs here (it keeps no original order, which
 *             the pass does);
 *   reorder   gl_graph_set_order with the current order: the cost of applying any
 *             order, which every sort pays;
 *   walk      visiting every node, input and use once: the memory-touching floor.
 * The pass's result is checked with gl_graph_verify once. Medians are printed.
 */
#include "ir/graph.h"
#include "passes/passes.h"
#include "bench/benchutil.h"
#include "util/rng.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_NODES 100000
#define DEFAULT_RUNS 7
#define MAX_RUNS 1000
#define RECENT_WINDOW 8   /* most inputs come from the last few values */
#define FAR_EDGE_ONE_IN 16 /* one input in 16 reaches anywhere back */

static size_t random_below(gl_rng *rng, size_t bound)
{
    return (size_t)(gl_rng_next(rng) % bound);
}

static gl_value *pick_input(gl_value **vals, size_t nv, gl_rng *rng)
{
    if (random_below(rng, FAR_EDGE_ONE_IN) == 0)
        return vals[random_below(rng, nv)];
    size_t window = nv < RECENT_WINDOW ? nv : RECENT_WINDOW;
    return vals[nv - 1 - random_below(rng, window)];
}

static gl_model *random_dag(size_t n_nodes, uint64_t seed)
{
    static const char *const op_by_arity[] = {"Relu", "Add", "Sum"};
    gl_model *m = gl_model_new();
    m->ir_version = 8;
    gl_model_set_opset(m, "", 13);
    m->graph = gl_graph_new(m, NULL, "bench_toposort");
    gl_graph *g = m->graph;
    gl_value **vals = gl_xmalloc((n_nodes + 2) * sizeof(*vals));
    size_t nv = 0;
    static const char *const input_names[] = {"x", "y"};
    for (size_t i = 0; i < GL_ARRAY_LEN(input_names); i++) {
        vals[nv] = gl_add_value(g, input_names[i]);
        gl_graph_add_input(g, vals[nv++]);
    }
    gl_rng rng = {seed};
    for (size_t i = 0; i < n_nodes; i++) {
        size_t arity = 1 + random_below(&rng, 3);
        gl_value *ins[3];
        for (size_t a = 0; a < arity; a++)
            ins[a] = pick_input(vals, nv, &rng);
        gl_node *n = gl_add_node(g, op_by_arity[arity - 1], "", NULL, ins, arity, 1);
        vals[nv++] = n->outputs[0];
    }
    for (size_t i = GL_ARRAY_LEN(input_names); i < nv; i++)
        if (vals[i]->n_uses == 0)
            gl_graph_add_output(g, vals[i]);
    free(vals);
    return m;
}

static gl_node **live_nodes(const gl_graph *g, size_t *count)
{
    gl_node **order = gl_xmalloc((g->live_nodes + 1) * sizeof(*order));
    size_t k = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i])
            order[k++] = g->nodes[i];
    *count = k;
    return order;
}

static void shuffle_order(gl_graph *g, uint64_t seed)
{
    size_t n;
    gl_node **order = live_nodes(g, &n);
    gl_rng rng = {seed};
    for (size_t i = n; i > 1; i--) {
        size_t j = random_below(&rng, i);
        gl_node *t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    gl_graph_set_order(g, order, n);
    free(order);
}

/* ---- the contenders ------------------------------------------------------------- */

static void run_pass(gl_graph *g)
{
    if (gl_toposort(g, NULL) != GL_OK) {
        fprintf(stderr, "bench_toposort: gl_toposort failed: %s\n", gl_error_message());
        exit(1);
    }
}

static bool produced_here(const gl_value *v, const gl_graph *g)
{
    return v && v->producer && v->producer->graph == g;
}

/* FIFO Kahn over node ids: in-degree = inputs (explicit and implicit) made by a node
 * of this graph; each use of an output releases one unit. */
static void run_kahn(gl_graph *g)
{
    size_t n;
    gl_node **queue = live_nodes(g, &n);
    uint32_t *indegree = gl_xcalloc(g->next_node_id + 1, sizeof(*indegree));
    size_t head = 0, tail = 0;
    gl_node **ready = gl_xmalloc((n + 1) * sizeof(*ready));
    for (size_t i = 0; i < n; i++) {
        gl_node *node = queue[i];
        for (size_t k = 0; k < node->n_inputs; k++)
            indegree[node->id] += produced_here(node->inputs[k], g);
        for (size_t k = 0; k < node->n_implicit; k++)
            indegree[node->id] += produced_here(node->implicit[k], g);
        if (indegree[node->id] == 0)
            ready[tail++] = node;
    }
    while (head < tail) {
        gl_node *node = ready[head++];
        for (size_t o = 0; o < node->n_outputs; o++) {
            gl_value *v = node->outputs[o];
            for (size_t u = 0; v && u < v->n_uses; u++)
                if (--indegree[v->uses[u].node->id] == 0)
                    ready[tail++] = v->uses[u].node;
        }
    }
    if (tail != n) {
        fprintf(stderr, "bench_toposort: kahn placed %zu of %zu nodes\n", tail, n);
        exit(1);
    }
    gl_graph_set_order(g, ready, n);
    free(ready);
    free(indegree);
    free(queue);
}

static void run_reorder(gl_graph *g)
{
    size_t n;
    gl_node **order = live_nodes(g, &n);
    gl_graph_set_order(g, order, n);
    free(order);
}

static volatile uint64_t walk_sink; /* keeps the walk from being optimized away */

static void run_walk(gl_graph *g)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *node = g->nodes[i];
        if (!node)
            continue;
        for (size_t k = 0; k < node->n_inputs; k++)
            sum += node->inputs[k] ? node->inputs[k]->id : 0;
        for (size_t o = 0; o < node->n_outputs; o++) {
            const gl_value *v = node->outputs[o];
            for (size_t u = 0; v && u < v->n_uses; u++)
                sum += v->uses[u].node->id;
        }
    }
    walk_sink = sum;
}

/* ---- driver ---------------------------------------------------------------------- */

typedef struct contender {
    const char *name;
    void (*run)(gl_graph *g);
    double seconds[MAX_RUNS];
} contender;

static bool parse_count(const char *arg, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*end || end == arg || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    long nodes = DEFAULT_NODES, runs = DEFAULT_RUNS, seed = 1;
    int opt;
    while ((opt = getopt(argc, argv, "n:r:s:h")) != -1) {
        bool ok = (opt == 'n' && parse_count(optarg, 1, 50000000, &nodes)) ||
                  (opt == 'r' && parse_count(optarg, 1, MAX_RUNS, &runs)) ||
                  (opt == 's' && parse_count(optarg, 0, INT32_MAX, &seed));
        if (!ok) {
            fprintf(stderr, "usage: bench_toposort [-n NODES] [-r RUNS 1..%d] [-s SEED]\n",
                    MAX_RUNS);
            return opt == 'h' ? 0 : 2;
        }
    }

    double t0 = bench_now_seconds();
    gl_model *m = random_dag((size_t)nodes, (uint64_t)seed);
    gl_graph *g = m->graph;
    double build = bench_now_seconds() - t0;

    /* correctness once: the pass must leave a verified topological order */
    shuffle_order(g, (uint64_t)seed + 1);
    run_pass(g);
    if (gl_graph_verify(g, false) != GL_OK) {
        fprintf(stderr, "bench_toposort: order after gl_toposort is wrong: %s\n",
                gl_error_message());
        return 1;
    }

    static contender contenders[] = {
        {"toposort", run_pass, {0}}, {"kahn", run_kahn, {0}},
        {"reorder", run_reorder, {0}}, {"walk", run_walk, {0}}};
    for (long r = 0; r < runs; r++) {
        for (size_t c = 0; c < GL_ARRAY_LEN(contenders); c++) {
            shuffle_order(g, (uint64_t)seed + 100 + (uint64_t)r);
            double start = bench_now_seconds();
            contenders[c].run(g);
            contenders[c].seconds[r] = bench_now_seconds() - start;
        }
    }

    size_t edges = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i])
            edges += g->nodes[i]->n_inputs;
    printf("# %zu nodes, %zu edges, built in %.0f ms with the edit API; %ld runs, medians,"
           " shuffled before each\n",
           g->live_nodes, edges, build * 1e3, runs);
    printf("%-10s %10s %12s %10s\n", "contender", "ms", "ns/node", "x walk");
    double walk = bench_median(contenders[GL_ARRAY_LEN(contenders) - 1].seconds, (int)runs);
    for (size_t c = 0; c < GL_ARRAY_LEN(contenders); c++) {
        double med = bench_median(contenders[c].seconds, (int)runs);
        printf("%-10s %10.2f %12.1f %10.1f\n", contenders[c].name, med * 1e3,
               med * 1e9 / (double)g->live_nodes, med / walk);
    }
    gl_model_free(m);
    return 0;
}

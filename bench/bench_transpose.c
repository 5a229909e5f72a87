/* bench_transpose.c — how the transpose-push pass's time grows with the graph.
 *
 *   bench_transpose [-r RUNS] [-n NODES,NODES,...] [-s PASS.OPT=V]...
 *
 * Builds, through the IR edit API, graphs of the given sizes (default 2500, 5000, 10000,
 * 20000, 40000 nodes) made of one block repeated: an NCHW->NHWC Transpose, a chain of
 * elementwise and broadcast ops in NHWC with channel-last constants, a Split into two
 * branches joined again by a Concat, a residual Add with the block's first Transpose,
 * the NHWC->NCHW Transpose back, and a 1x1 Conv (layout-sensitive: it stops the push,
 * so every block is a sandwich of its own, as in exported TensorFlow models). Shape
 * inference runs once on each graph (untimed) so values carry their types.
 *
 * Each size is built twice: with one set of constants shared by every block (what cse
 * leaves: a bias or a scalar read by thousands of nodes) and with fresh constants per
 * block. For each size, RUNS times (default 5), on a fresh clone each time (untimed):
 *   transpose-push  the pass, with a decision log as the pipeline keeps one;
 *   toposort        the toposort pass on the same graph: the cost of one O(V+E) walk
 *                   that reorders nothing, the baseline.
 * The first result is checked (gl_graph_verify) and its Transposes counted. Medians are
 * printed, with the ratio to the next smaller size: about 2 per doubling is linear.
 * -s sets a pass option as --set does: -s transpose-push.ort-only=1 times ONNX Runtime's
 * rules alone (no net-transposes guard, whose trial sweeps the default pays for).
 */
#include "ir/graph.h"
#include "passes/pipeline.h"
#include "bench/benchutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RUNS 200
#define MAX_SIZES 16
#define CHANNELS 8
#define HALF (CHANNELS / 2)
#define SPATIAL 4

static const long default_sizes[] = {2500, 5000, 10000, 20000, 40000};

/* ---- the graph ------------------------------------------------------------------------ */

typedef struct builder {
    gl_graph *g;
    bool per_block; /* fresh constants in every block, else one set for the graph */
    gl_value *bias, *scale, *zero, *weight, *split_sizes;
} builder;

static gl_value *constant(gl_graph *g, const char *name, gl_dtype dt, int rank,
                          const int64_t *dims, double fill)
{
    gl_tensor *t = gl_tensor_new(dt, rank, dims);
    void *p = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < t->count; i++) {
        if (dt == GL_DT_INT64)
            ((int64_t *)p)[i] = (int64_t)fill;
        else
            ((float *)p)[i] = (float)(fill * (double)(i % 7 + 1) / 7.0);
    }
    return gl_add_initializer(g, name, t);
}

static gl_value *op1(builder *b, const char *op, gl_value *x)
{
    return gl_add_node(b->g, op, "", NULL, &x, 1, 1)->outputs[0];
}

static gl_value *op2(builder *b, const char *op, gl_value *x, gl_value *y)
{
    gl_value *ins[2] = {x, y};
    return gl_add_node(b->g, op, "", NULL, ins, 2, 1)->outputs[0];
}

static gl_value *transpose(builder *b, gl_value *x, const int64_t *perm)
{
    gl_node *n = gl_add_node(b->g, "Transpose", "", NULL, &x, 1, 1);
    gl_node_set_attr_ints(n, "perm", perm, 4);
    return n->outputs[0];
}

static void make_constants(builder *b)
{
    b->bias = constant(b->g, "bias", GL_DT_FLOAT, 1, (int64_t[]){CHANNELS}, 0.5);
    b->scale = constant(b->g, "scale", GL_DT_FLOAT, 4, (int64_t[]){1, 1, 1, HALF}, 2.0);
    b->zero = constant(b->g, "zero", GL_DT_FLOAT, 0, NULL, 0.0);
    b->weight = constant(b->g, "w", GL_DT_FLOAT, 4, (int64_t[]){CHANNELS, CHANNELS, 1, 1}, 0.1);
    b->split_sizes = constant(b->g, "halves", GL_DT_INT64, 1, (int64_t[]){2}, HALF);
}

/* One block (16 nodes): NCHW in, NCHW out. */
static gl_value *block(builder *b, gl_value *x)
{
    static const int64_t to_nhwc[] = {0, 2, 3, 1}, to_nchw[] = {0, 3, 1, 2};
    if (b->per_block)
        make_constants(b);
    gl_value *a = transpose(b, x, to_nhwc);
    gl_value *c = op2(b, "Add", op1(b, "Relu", a), b->bias);
    gl_value *split_in[2] = {c, b->split_sizes};
    gl_node *split = gl_add_node(b->g, "Split", "", NULL, split_in, 2, 2);
    gl_node_set_attr_int(split, "axis", 3);
    gl_value *left = op1(b, "Sigmoid", op2(b, "Mul", split->outputs[0], b->scale));
    gl_value *right = op1(b, "Abs", op1(b, "Neg", split->outputs[1]));
    gl_value *parts[2] = {left, right};
    gl_node *concat = gl_add_node(b->g, "Concat", "", NULL, parts, 2, 1);
    gl_node_set_attr_int(concat, "axis", 3);
    gl_value *r = op2(b, "Max", op2(b, "Add", concat->outputs[0], a), b->zero);
    gl_value *back = transpose(b, op1(b, "Exp", op1(b, "Neg", r)), to_nchw);
    gl_value *conv_in[2] = {back, b->weight};
    gl_node *conv = gl_add_node(b->g, "Conv", "", NULL, conv_in, 2, 1);
    return op1(b, "Relu", conv->outputs[0]);
}

#define NODES_PER_BLOCK 16

static gl_model *sandwich_graph(long nodes, bool per_block)
{
    gl_model *m = gl_model_new();
    m->ir_version = 8;
    gl_model_set_opset(m, "", 13);
    m->graph = gl_graph_new(m, NULL, "bench_transpose");
    builder b = {.g = m->graph, .per_block = per_block};
    gl_value *x = gl_add_value(b.g, "x");
    x->type.kind = GL_TYPE_TENSOR;
    x->type.dtype = GL_DT_FLOAT;
    gl_shape_set_rank(&x->type.shape, 4);
    const int64_t shape[] = {1, CHANNELS, SPATIAL, SPATIAL};
    for (int i = 0; i < 4; i++)
        x->type.shape.dims[i].value = shape[i];
    gl_graph_add_input(b.g, x);
    if (!per_block)
        make_constants(&b);
    long blocks = nodes / NODES_PER_BLOCK > 0 ? nodes / NODES_PER_BLOCK : 1;
    gl_value *cur = x;
    for (long i = 0; i < blocks; i++)
        cur = block(&b, cur);
    gl_graph_add_output(b.g, cur);
    if (gl_infer_graph(m, m->graph, NULL, NULL) != GL_OK) {
        fprintf(stderr, "bench_transpose: shape inference: %s\n", gl_error_message());
        exit(1);
    }
    return m;
}

static size_t count_op(const gl_graph *g, const char *op)
{
    size_t n = 0;
    const gl_node *node;
    gl_foreach_node(g, i, node) n += gl_node_is(node, op);
    return n;
}

/* ---- timing ----------------------------------------------------------------------------- */

/* -s options */
static gl_settings settings;

/* Run `pass` on a fresh clone of m; returns seconds; *out keeps the clone if wanted. */
static double time_pass(const gl_model *m, const gl_pass *pass, gl_model **out)
{
    gl_model *c = gl_model_clone(m);
    gl_decision_log log = {0};
    gl_pass_ctx ctx = {.model = c, .pass = pass, .step = 1, .budget = GL_BUDGET_UNLIMITED,
                       .log = &log, .settings = &settings};
    double t0 = bench_now_seconds();
    gl_status st = pass->run(c->graph, &ctx);
    double t = bench_now_seconds() - t0;
    gl_decision_clear(&ctx.scratch);
    gl_decision_log_free(&log);
    if (st != GL_OK) {
        fprintf(stderr, "bench_transpose: %s failed: %s\n", pass->name, gl_error_message());
        exit(1);
    }
    if (out)
        *out = c;
    else
        gl_model_free(c);
    return t;
}

typedef struct row {
    size_t nodes, transposes_before, transposes_after;
    double push_ms, topo_ms;
} row;

static row measure(long nodes, bool per_block, long runs, const gl_pass *push,
                   const gl_pass *topo)
{
    gl_model *m = sandwich_graph(nodes, per_block);
    row r = {.nodes = m->graph->live_nodes,
             .transposes_before = count_op(m->graph, "Transpose")};
    gl_model *first;
    time_pass(m, push, &first);
    if (gl_graph_verify(first->graph, false) != GL_OK) {
        fprintf(stderr, "bench_transpose: graph broken after the pass: %s\n",
                gl_error_message());
        exit(1);
    }
    r.transposes_after = count_op(first->graph, "Transpose");
    gl_model_free(first);
    double push_s[MAX_RUNS], topo_s[MAX_RUNS];
    for (long i = 0; i < runs; i++) {
        push_s[i] = time_pass(m, push, NULL);
        topo_s[i] = time_pass(m, topo, NULL);
    }
    r.push_ms = bench_median(push_s, (int)runs) * 1e3;
    r.topo_ms = bench_median(topo_s, (int)runs) * 1e3;
    gl_model_free(m);
    return r;
}

static void print_table(bool per_block, const char *what, const long *sizes, size_t n_sizes,
                        long runs, const gl_pass *push, const gl_pass *topo)
{
    printf("# transpose-push on NHWC sandwiches (%d nodes a block), %s; medians of %ld runs,"
           " each on a fresh clone\n", NODES_PER_BLOCK, what, runs);
    printf("%8s %11s %7s %10s %9s %8s %12s %9s\n", "nodes", "transposes", "after", "push ms",
           "ns/node", "x prev", "toposort ms", "push/topo");
    double prev_ms = 0;
    for (size_t i = 0; i < n_sizes; i++) {
        row r = measure(sizes[i], per_block, runs, push, topo);
        char growth[32] = "-";
        if (i > 0)
            snprintf(growth, sizeof(growth), "%.2f", r.push_ms / prev_ms);
        printf("%8zu %11zu %7zu %10.2f %9.0f %8s %12.2f %9.1f\n", r.nodes,
               r.transposes_before, r.transposes_after, r.push_ms,
               r.push_ms * 1e6 / (double)r.nodes, growth, r.topo_ms, r.push_ms / r.topo_ms);
        fflush(stdout);
        prev_ms = r.push_ms;
    }
}

/* ---- driver -------------------------------------------------------------------------------- */

static bool parse_long(const char *s, long lo, long hi, long *out, char **end)
{
    long v = strtol(s, end, 10);
    if (*end == s || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_sizes(const char *arg, long *sizes, size_t *n)
{
    *n = 0;
    const char *p = arg;
    while (*p && *n < MAX_SIZES) {
        char *end;
        if (!parse_long(p, NODES_PER_BLOCK, 10000000, &sizes[*n], &end))
            return false;
        (*n)++;
        if (*end == ',')
            end++;
        else if (*end)
            return false;
        p = end;
    }
    return *n > 0 && !*p;
}

int main(int argc, char **argv)
{
    long runs = 5, sizes[MAX_SIZES];
    size_t n_sizes = GL_ARRAY_LEN(default_sizes);
    memcpy(sizes, default_sizes, sizeof(default_sizes));
    int opt;
    while ((opt = getopt(argc, argv, "r:n:s:h")) != -1) {
        char *end = NULL;
        bool ok = (opt == 'r' && parse_long(optarg, 1, MAX_RUNS, &runs, &end) && !*end) ||
                  (opt == 'n' && parse_sizes(optarg, sizes, &n_sizes)) ||
                  (opt == 's' && gl_settings_apply(&settings, optarg) == GL_OK);
        if (!ok) {
            if (opt == 's')
                fprintf(stderr, "bench_transpose: %s\n", gl_error_message());
            fprintf(stderr, "usage: bench_transpose [-r RUNS 1..%d] [-n NODES,NODES,...] "
                    "[-s PASS.OPT=V]...\n", MAX_RUNS);
            return opt == 'h' ? 0 : 2;
        }
    }
    const gl_pass *push = gl_pass_find("transpose-push"), *topo = gl_pass_find("toposort");
    if (!push || !topo) {
        fprintf(stderr, "bench_transpose: no '%s' pass in this build\n",
                push ? "toposort" : "transpose-push");
        return 1;
    }
    static const struct {
        bool per_block;
        const char *what;
    } modes[] = {{false, "one set of constants shared by every block (as after cse)"},
                 {true, "fresh constants in every block"}};
    for (size_t i = 0; i < settings.n; i++)
        printf("# --set %s.%s=%lld\n", settings.items[i].pass, settings.items[i].option,
               (long long)settings.items[i].value);
    for (size_t k = 0; k < GL_ARRAY_LEN(modes); k++)
        print_table(modes[k].per_block, modes[k].what, sizes, n_sizes, runs, push, topo);
    gl_settings_free(&settings);
    return 0;
}

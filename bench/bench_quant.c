/* bench_quant.c — stand-alone QuantizeLinear and DequantizeLinear on the reference
 * kernels and on oneDNN (src/exec/dnnl/dn_quant.c), issue 21.
 *
 *   bench/bench_quant [-n RUNS] [-t THREADS] [-l LAYOUT]
 *
 * One model per case, x of [1,64,56,56] (a ResNet stage's activation): QuantizeLinear
 * (float32 -> uint8, zero point 128) and DequantizeLinear (uint8 -> float32), per tensor
 * and per channel (axis 1). Per backend, one plan is built and run 3 times untimed (the
 * first builds the primitives), then RUNS times timed (default 50); the medians and the
 * minimums (ms) and their ratios (reference / oneDNN) are printed, and the oneDNN outputs are checked bit for bit
 * against the reference's. THREADS (default 0: OpenMP's default) goes to the dnnl
 * backend, LAYOUT (default plain) to --layout; the reference kernels are single-threaded.
 */
#include "bench/benchutil.h"
#include "exec/exec.h"
#include "ir/graph.h"
#include "ops/opkit.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RUNS 1000
static const int64_t x_dims[4] = {1, 64, 56, 56};

typedef struct qcase {
    const char *name, *op;
    bool per_channel;
} qcase;

static const qcase cases[] = {
    {"QuantizeLinear per tensor", "QuantizeLinear", false},
    {"QuantizeLinear per channel", "QuantizeLinear", true},
    {"DequantizeLinear per tensor", "DequantizeLinear", false},
    {"DequantizeLinear per channel", "DequantizeLinear", true},
};

static gl_value *typed(gl_value *v, gl_dtype dt, int rank, const int64_t *dims)
{
    v->type.kind = GL_TYPE_TENSOR;
    v->type.dtype = dt;
    gl_shape_set_rank(&v->type.shape, rank);
    for (int i = 0; i < rank; i++)
        v->type.shape.dims[i].value = dims[i];
    return v;
}

static gl_value *constant(gl_graph *g, const char *name, gl_tensor *t)
{
    return typed(gl_add_initializer(g, name, t), t->dtype, t->rank, t->dims);
}

/* x -> op(x, scale, zero) -> y, with one graph input of the op's input type. */
static gl_model *model_of(const qcase *c, gl_dtype x_type)
{
    gl_model *m = gl_model_new();
    m->ir_version = 8;
    gl_model_set_opset(m, "", 13);
    gl_graph *g = m->graph = gl_graph_new(m, NULL, "bench");
    gl_value *x = typed(gl_add_value(g, "x"), x_type, 4, x_dims);
    gl_graph_add_input(g, x);
    int64_t n = c->per_channel ? x_dims[1] : 1;
    gl_tensor *s = gl_tensor_new(GL_DT_FLOAT, c->per_channel, &n);
    gl_tensor *z = gl_tensor_new(GL_DT_UINT8, c->per_channel, &n);
    for (int64_t i = 0; i < n; i++) {
        gl_elem_set_f64(s, i, 0.0173 * (double)(1 + i % 5));
        gl_elem_set_i64(z, i, 128);
    }
    gl_value *in[3] = {x, constant(g, "scale", s), constant(g, "zero", z)};
    gl_node *node = gl_add_node(g, c->op, "", "q", in, 3, 1);
    if (c->per_channel)
        gl_node_set_attr_int(node, "axis", 1);
    gl_graph_add_output(g, node->outputs[0]);
    return m;
}

static gl_tensor *input_of(gl_dtype dt)
{
    gl_tensor *t = gl_tensor_new(dt, 4, x_dims);
    uint32_t seed = 1;
    for (int64_t i = 0; i < t->count; i++) {
        seed = seed * 1664525u + 1013904223u;
        if (dt == GL_DT_FLOAT)
            gl_elem_set_f64(t, i, ((double)(seed >> 8) / (1 << 24) - 0.5) * 8.0);
        else
            gl_elem_set_i64(t, i, seed >> 24);
    }
    return t;
}

/* Median milliseconds of `runs` runs of m on `backend` (after 3 untimed), their minimum
 * in *min_ms; *out keeps the last output. Negative on failure (message printed). */
static double time_backend(const gl_model *m, const char *backend, const char *layout,
                           int threads, const gl_tensor *x, int runs, gl_tensor **out,
                           double *min_ms)
{
    gl_exec_options o = {.backend = backend, .layout = layout, .threads = threads};
    gl_exec *e = NULL;
    if (gl_exec_create(m, &o, &e) != GL_OK) {
        fprintf(stderr, "bench_quant: %s: %s\n", backend, gl_error_message());
        return -1;
    }
    double ms[MAX_RUNS];
    for (int i = -3; i < runs; i++) {
        gl_tensor_free(*out);
        *out = NULL;
        double t0 = bench_now_seconds();
        if (gl_exec_run(e, &x, 1, out, 1) != GL_OK) {
            fprintf(stderr, "bench_quant: %s run: %s\n", backend, gl_error_message());
            gl_exec_free(e);
            return -1;
        }
        if (i >= 0)
            ms[i] = (bench_now_seconds() - t0) * 1e3;
    }
    gl_exec_free(e);
    double median = bench_median(ms, runs); /* sorts ms */
    *min_ms = ms[0];
    return median;
}

static bool same_bits(const gl_tensor *a, const gl_tensor *b)
{
    return a && b && a->dtype == b->dtype && a->count == b->count &&
           memcmp(gl_tensor_data(a), gl_tensor_data(b),
                  (size_t)a->count * gl_dtype_size(a->dtype)) == 0;
}

int main(int argc, char **argv)
{
    int runs = 50, threads = 0, opt;
    const char *layout = "plain";
    while ((opt = getopt(argc, argv, "n:t:l:")) != -1) {
        if (opt == 'n')
            runs = atoi(optarg);
        else if (opt == 't')
            threads = atoi(optarg);
        else if (opt == 'l')
            layout = optarg;
        else {
            fprintf(stderr, "usage: bench_quant [-n RUNS] [-t THREADS] [-l LAYOUT]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "bench_quant: RUNS must be in [1, %d]\n", MAX_RUNS);
        return 2;
    }
    printf("x [1,64,56,56], medians of %d runs, dnnl threads %d, layout %s\n", runs, threads,
           layout);
    printf("%-30s %7s %7s %7s %7s %6s %6s %s\n", "case", "ref", "min", "dnnl", "min", "ratio",
           "min", "bitwise");
    int rc = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const qcase *c = &cases[i];
        gl_dtype x_type = strcmp(c->op, "QuantizeLinear") == 0 ? GL_DT_FLOAT : GL_DT_UINT8;
        gl_model *m = model_of(c, x_type);
        gl_tensor *x = input_of(x_type), *want = NULL, *got = NULL;
        double ref_min, dn_min;
        double ref = time_backend(m, "ref", NULL, 0, x, runs, &want, &ref_min);
        double dn = time_backend(m, "dnnl", layout, threads, x, runs, &got, &dn_min);
        bool same = same_bits(got, want);
        if (ref < 0 || dn < 0 || !same)
            rc = 1;
        printf("%-30s %7.3f %7.3f %7.3f %7.3f %6.1f %6.1f %s\n", c->name, ref, ref_min, dn,
               dn_min, dn > 0 ? ref / dn : 0.0, dn_min > 0 ? ref_min / dn_min : 0.0,
               same ? "equal" : "DIFFERENT");
        gl_tensor_free(want);
        gl_tensor_free(got);
        gl_tensor_free(x);
        gl_model_free(m);
    }
    return rc;
}

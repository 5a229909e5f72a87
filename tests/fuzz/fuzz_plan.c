/* fuzz_plan.c — libFuzzer target: what optimizes (fuzz_optimize) gets an executor plan on
 * the reference and the oneDNN backend (gl_exec_create), and, when the run is cheap
 * enough to end well inside libFuzzer's -timeout, one run on each with small made-up
 * inputs.
 *
 * The run budget. A slow input must be a finding, not the harness's own doing, so a run
 * happens only when all of these hold:
 *   - every graph input without a default has a numeric tensor type with every dim known,
 *     at most MAX_INPUT_ELEMS elements each and MAX_TOTAL_ELEMS together (the inputs are
 *     made here; a model that declares x[16384,16384] is `run`'s finding, not this one's);
 *   - at most MAX_RUN_NODES nodes would run, counting every subgraph body and every
 *     model-local function body once per place it is used (nested calls multiply);
 *   - loading and optimizing took less than MAX_SETUP_MS;
 * and the run itself is bounded by the executor's own limits, set low: RUN_MAX_ITERATIONS
 * loop iterations in all, no tensor (nor all alive together) over RUN_MAX_MEMORY bytes, so
 * that neither an endless Loop nor one big kernel (a Conv over a tensor a constant shape
 * blew up) makes a slow input. What an input makes the run do within that stays a finding.
 */
#include "fuzz.h"

#include "exec/exec.h"
#include "ops/opkit.h"
#include "util/clock.h"

#include <stdlib.h>
#include <string.h>

#define MAX_INPUT_ELEMS 64
#define MAX_TOTAL_ELEMS 256
#define MAX_RUN_NODES 2000
#define MAX_SETUP_MS 2000.0
#define MAX_CALL_DEPTH 16
#define RUN_MAX_ITERATIONS 100
#define RUN_MAX_MEMORY (256u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the run budget ----------------------------------------------------------------- */

typedef struct run_cost {
    const gl_model *m;
    size_t nodes;
    bool over; /* too many nodes, or calls nested too deep */
} run_cost;

static const gl_graph *called_body(const gl_model *m, const gl_node *n)
{
    for (size_t i = 0; i < m->n_functions; i++) {
        const gl_function *f = &m->functions[i];
        if (strcmp(f->name, n->op_type) == 0 && strcmp(f->domain ? f->domain : "", n->domain) == 0)
            return f->body;
    }
    return NULL;
}

static void count_graph(run_cost *c, const gl_graph *g, int depth)
{
    const gl_node *n;
    if (depth > MAX_CALL_DEPTH) {
        c->over = true;
        return;
    }
    gl_foreach_node(g, i, n) {
        if (c->over || ++c->nodes > MAX_RUN_NODES) {
            c->over = true;
            return;
        }
        for (size_t a = 0; a < n->n_attrs; a++) {
            const gl_attr *at = &n->attrs[a];
            if (at->type == GL_ATTR_GRAPH && at->g)
                count_graph(c, at->g, depth + 1);
            for (size_t k = 0; at->type == GL_ATTR_GRAPHS && k < at->n; k++)
                if (at->graphs[k])
                    count_graph(c, at->graphs[k], depth + 1);
        }
        const gl_graph *body = called_body(c->m, n);
        if (body)
            count_graph(c, body, depth + 1);
    }
}

/* Made-up inputs for every graph input without a default; false when one cannot be made
 * within the budget. */
static bool make_inputs(const gl_graph *g, gl_tensor **in)
{
    int64_t total = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const gl_value *v = g->inputs[i];
        const gl_type *t = &v->type;
        if (v->init)
            continue;
        if (t->kind != GL_TYPE_TENSOR || !gl_dtype_valid(t->dtype) ||
            t->dtype == GL_DT_STRING || t->shape.rank == GL_RANK_UNKNOWN ||
            t->shape.rank > GL_MAX_RANK)
            return false;
        int64_t dims[GL_MAX_RANK], count = 1;
        for (int d = 0; d < t->shape.rank; d++) {
            dims[d] = t->shape.dims[d].value;
            if (dims[d] < 0 || dims[d] > MAX_INPUT_ELEMS)
                return false;
            count *= dims[d];
            if (count > MAX_INPUT_ELEMS)
                return false;
        }
        if ((total += count) > MAX_TOTAL_ELEMS)
            return false;
        if (!(in[i] = gl_tensor_new(t->dtype, t->shape.rank, dims)))
            return false;
        /* small values of both signs: valid indices, axes and counts more often than not */
        double scale = gl_dtype_is_float(t->dtype) ? 0.5 : 1.0;
        for (int64_t e = 0; e < count; e++)
            gl_elem_set_f64(in[i], e, (double)(((int64_t)i * 3 + e * 5) % 7 - 3) * scale);
    }
    return true;
}

/* ---- the target ----------------------------------------------------------------------- */

static void plan_and_run(const gl_model *m, const char *backend, bool run, gl_tensor **in)
{
    gl_exec *e = NULL;
    gl_exec_options o = {.backend = backend, .threads = 1,
                         .max_memory = RUN_MAX_MEMORY, .max_iterations = RUN_MAX_ITERATIONS};
    if (!fuzz_check(gl_exec_create(m, &o, &e), backend))
        return;
    size_t n_out = m->graph->n_outputs;
    gl_tensor **out = run ? calloc(n_out ? n_out : 1, sizeof(*out)) : NULL;
    if (out && fuzz_check(gl_exec_run(e, (const gl_tensor *const *)in, m->graph->n_inputs,
                                      out, n_out),
                          backend))
        for (size_t i = 0; i < n_out; i++)
            gl_tensor_free(out[i]);
    free(out);
    gl_exec_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    double t0 = gl_now_ms();
    gl_model *loaded = fuzz_load(data, size);
    gl_pipeline *p = loaded ? fuzz_optimize(loaded) : NULL;
    if (!p)
        return 0;
    const gl_model *m = gl_pipeline_result(p);
    run_cost cost = {.m = m};
    count_graph(&cost, m->graph, 0);
    size_t n_in = m->graph->n_inputs;
    gl_tensor **in = calloc(n_in ? n_in : 1, sizeof(*in));
    bool run = in && !cost.over && make_inputs(m->graph, in);
    const gl_backend *dnnl = gl_backend_dnnl();
    if (run)
        run = gl_now_ms() - t0 < MAX_SETUP_MS;
    plan_and_run(m, "ref", run, in);
    if (dnnl)
        plan_and_run(m, dnnl->name, run, in);
    for (size_t i = 0; in && i < n_in; i++)
        gl_tensor_free(in[i]);
    free(in);
    gl_pipeline_free(p);
    return 0;
}

/* test_exec_big.c — what a plan costs per node of a long graph (issue 23).
 *
 * A decomposed export reaches 100k nodes; a plan for it must stay a small multiple of
 * the graph itself. Each case builds a chain of N elementwise nodes on a small tensor,
 * plans and runs it once, and measures the heap the plan holds afterwards (glibc's
 * mallinfo2: bytes in use, so no timing and no dependence on the machine's load). The
 * bound per node is above what a plan needs (its table row, the node's records) and
 * below what fixed char arrays cost: 472 bytes in each row of the plan table and 256 in
 * each oneDNN node record made the reference backend's plan 744 bytes a node and the
 * oneDNN backend's 1429 (second round of issue 23; the texts now live once in a pool).
 * Far below a per-node fixed array of oneDNN descriptors (9.7 KB a node before issue 23:
 * 1 GB for a 100k chain), or a buffer kept per node.
 *
 * Under AddressSanitizer mallinfo2 says nothing, and the cases are skipped.
 */
#include "exec/exec.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define HEAP_MEASURABLE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_MEASURABLE 0
#endif
#endif
#ifndef HEAP_MEASURABLE
#define HEAP_MEASURABLE 1
#endif

typedef struct big_case {
    const char *backend;
    const char *op;
    size_t nodes;
    int64_t width;             /* the chain's tensor is float [1, width] */
    size_t max_bytes_per_node; /* the plan's heap after one run, per node */
} big_case;

static const big_case cases[] = {
    /* 16 floats: below oneDNN's threshold, every node runs the reference kernel under
     * the dnnl backend (the 100k Relu chain of bench/make_big_models.py). */
    {"ref", "Relu", 20000, 16, 512},
    {"dnnl", "Relu", 20000, 16, 1024},
    {"dnnl", "Neg", 20000, 16, 1024},
    /* 8192 floats (32 KB): outputs whose lifetimes do not overlap share their buffers
     * (plan.h's shelves), the chain lends 3, not one a node (33 KB a node before). On
     * oneDNN each primitive still keeps its own output buffer (dn_out.slot). */
    {"ref", "Relu", 2000, 8192, 512},
};

/* Bytes the heap holds now. */
static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* x -> op -> op -> ... -> y, `nodes` nodes. */
static gl_model *chain_model(const big_case *c)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    int64_t dims[2] = {1, c->width};
    gl_value *v = tu_input(g, "x", GL_DT_FLOAT, 2, dims);
    for (size_t i = 0; i < c->nodes; i++) {
        char name[32];
        snprintf(name, sizeof(name), "n%zu", i);
        v = tu_node(g, c->op, name, 1, v)->outputs[0];
    }
    tu_output(g, v);
    return m;
}

/* The plan's bytes per node after one run, and the value of the chain's first output
 * element for input element 1.0 - the run must be right, not just small. */
static size_t plan_bytes_per_node(const big_case *c, const gl_model *m, float *first)
{
    int64_t dims[2] = {1, c->width};
    gl_tensor *x = gl_tensor_new(GL_DT_FLOAT, 2, dims);
    float *xp = gl_tensor_make_writable(x);
    for (int64_t i = 0; i < c->width; i++)
        xp[i] = 1.0f;
    size_t before = heap_in_use();
    gl_exec_options o = {.backend = c->backend, .threads = 1};
    gl_exec *e = NULL;
    gl_status st = gl_exec_create(m, &o, &e);
    cr_assert_eq(st, GL_OK, "%s %s: %s", c->backend, c->op, gl_error_message());
    gl_tensor *y = NULL;
    st = gl_exec_run(e, (const gl_tensor *const *)&x, 1, &y, 1);
    cr_assert_eq(st, GL_OK, "%s %s: %s", c->backend, c->op, gl_error_message());
    *first = ((const float *)gl_tensor_data(y))[0];
    gl_tensor_free(y);
    size_t after = heap_in_use();
    gl_exec_free(e);
    gl_tensor_free(x);
    return after > before ? (after - before) / c->nodes : 0;
}

Test(exec_big, plan_bytes_per_node_of_a_long_chain)
{
    if (!HEAP_MEASURABLE)
        cr_skip_test("AddressSanitizer: mallinfo2 reports no heap");
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        const big_case *c = &cases[i];
        if (!gl_backend_find(c->backend))
            continue; /* built without oneDNN */
        gl_model *m = chain_model(c);
        float first = 0;
        size_t per_node = plan_bytes_per_node(c, m, &first);
        cr_log_info("%s %s x%zu: %zu bytes per node", c->backend, c->op, c->nodes, per_node);
        /* Relu keeps 1, Neg flips the sign once per node: an even count gives 1 back. */
        cr_expect_eq(first, 1.0f, "%s %s x%zu: the chain computed %g", c->backend, c->op,
                     c->nodes, first);
        cr_expect(per_node <= c->max_bytes_per_node,
                  "%s %s x%zu of [1,%lld]: the plan holds %zu bytes per node (at most %zu)",
                  c->backend, c->op, c->nodes, (long long)c->width, per_node,
                  c->max_bytes_per_node);
        gl_model_free(m);
    }
}

/* The rows of a long plan say the same thing with the same text, stored once: after a
 * run every node of the chain fell to the reference kernel for the same reason. */
Test(exec_big, the_rows_of_a_long_plan_share_their_texts)
{
    big_case c = {"dnnl", "Relu", 1000, 16, 0};
    if (!gl_backend_find(c.backend))
        cr_skip_test("built without oneDNN");
    gl_model *m = chain_model(&c);
    int64_t dims[2] = {1, c.width};
    gl_tensor *x = gl_tensor_new(GL_DT_FLOAT, 2, dims), *y = NULL;
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &(gl_exec_options){.backend = "dnnl", .threads = 1}, &e),
                 GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)&x, 1, &y, 1), GL_OK, "%s",
                 gl_error_message());
    cr_assert_eq(gl_exec_plan_count(e), c.nodes);
    const gl_plan_entry *first = gl_exec_plan_at(e, 0);
    cr_expect_str_eq(first->info.impl, "ref");
    cr_expect(strstr(first->info.note, "16 elements"), "the first row's note: %s",
              first->info.note);
    for (size_t i = 1; i < c.nodes; i++) {
        const gl_plan_entry *en = gl_exec_plan_at(e, i);
        cr_expect(en->info.impl == first->info.impl && en->info.note == first->info.note,
                  "row %zu: '%s' (%s) is a text of its own", i, en->info.impl, en->info.note);
    }
    gl_tensor_free(y);
    gl_tensor_free(x);
    gl_exec_free(e);
    gl_model_free(m);
}

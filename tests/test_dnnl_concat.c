/* test_dnnl_concat.c — channel Concats written in place (src/exec/dnnl/dn_concat.c, issue
 * 22): the producers of a Concat's inputs write straight into their channel slice of one
 * block-wide buffer, and the Concat's output is its range of it.
 *
 * Each row: a graph whose Concat inputs come from convolutions (DenseNet's block: every
 * concat re-reads the earlier features) and whose concat outputs are read by more nodes,
 * run through toposort and shape-inference (no fusion: the Concats stay nodes); the layout
 * policy ('a' auto, 'n' nhwc, 'b' blocked); for each Concat named, the plan's
 * implementation must be (or not be) "in place" and its note contain `note`. Every run
 * must equal the reference run, a second run too (the buffer comes back from its slot),
 * and no convolution may fall to a reference kernel (ref:any: a strided slice).
 */
#include "exec/compare.h"
#include "exec/exec.h"
#include "graphnote.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CATS 3

typedef struct cat_expect {
    const char *node;  /* the Concat's node ("n_" and its output) */
    bool in_place;
    const char *note;  /* in its note */
    const char *impl;  /* the start of its implementation (NULL: in_place says) */
} cat_expect;

typedef struct icase {
    const char *name;
    const char *graph;
    char layout;       /* 'a' auto, 'n' nhwc, 'b' blocked */
    const char *policy; /* in the plan's header (the backend's summary) */
    cat_expect cats[MAX_CATS];
    size_t n_out;
} icase;

/* Sums of up to 288 products of values near 1 in another order (oneDNN's kernels): an
 * element near 0 after cancelling differs by a few 1e-4. */
#define RTOL 1e-3
#define ATOL 1e-3

/* 3x3 weights, and the pads that keep the spatial dims. DenseNet's block of two layers:
 * x0 the block input, f1 and f2 the new features, c1 and c2 the concats. */
#define W3(name, o, i) "const " name " f32s[" #o "," #i ",3,3] = rand; "
#define W1(name, o, i) "const " name " f32s[" #o "," #i ",1,1] = rand; "
#define PADS " pads=[1,1,1,1]; "

static const icase cases[] = {
    {"DenseNet block of two layers, 16 channels a layer",
     "in x f32s[1,16,16,16]; " W3("w0", 16, 16) W3("w1", 16, 16) W3("w2", 16, 32)
     "x0 = Conv(x, w0)" PADS "f1 = Conv(x0, w1)" PADS "c1 = Concat(x0, f1) axis=1; "
     "f2 = Conv(c1, w2)" PADS "c2 = Concat(x0, f1, f2) axis=1; r1 = Relu(c1); "
     "r2 = Relu(c2); out r1, r2",
     'a', "2 Concat (2 in place if blocked)",
     {{"n_c1", true, "channels 0..32 of one buffer of 48", NULL},
      {"n_c2", true, "channels 0..48 of one buffer of 48", NULL}}, 2},
    {"the same, blocked as asked; a concat output is a graph output",
     "in x f32s[1,16,16,16]; " W3("w0", 16, 16) W3("w1", 16, 16) W3("w2", 16, 32)
     "x0 = Conv(x, w0)" PADS "f1 = Conv(x0, w1)" PADS "c1 = Concat(x0, f1) axis=1; "
     "f2 = Conv(c1, w2)" PADS "c2 = Concat(x0, f1, f2) axis=1; r1 = Relu(c1); out r1, c2",
     'b', "as asked",
     {{"n_c1", true, "batch 1", NULL}, {"n_c2", true, "batch 1", NULL}}, 2},
    {"nhwc as asked: a channel slice would be strided rows, copies",
     "in x f32s[1,16,16,16]; " W3("w0", 16, 16) W3("w1", 16, 16) W3("w2", 16, 32)
     "x0 = Conv(x, w0)" PADS "f1 = Conv(x0, w1)" PADS "c1 = Concat(x0, f1) axis=1; "
     "f2 = Conv(c1, w2)" PADS "c2 = Concat(x0, f1, f2) axis=1; r1 = Relu(c1); out r1, c2",
     'n', "as asked",
     {{"n_c1", false, "activations not blocked", NULL}, {"n_c2", false, "activations not blocked", NULL}},
     2},
    {"12 channels a layer: off the block, copies, nhwc by the cost",
     "in x f32s[1,16,16,16]; " W3("w0", 16, 16) W3("w1", 12, 16) W3("w2", 16, 28)
     "x0 = Conv(x, w0)" PADS "f1 = Conv(x0, w1)" PADS "c1 = Concat(x0, f1) axis=1; "
     "f2 = Conv(c1, w2)" PADS "r2 = Relu(f2); out r2, c1",
     'a', "1 Concat (0 in place if blocked)",
     {{"n_c1", false, "not a multiple of the block", NULL}}, 2},
    {"batch 2: a slice is strided, copies",
     "in x f32s[2,16,16,16]; " W3("w0", 16, 16) W3("w1", 16, 16) W3("w2", 16, 32)
     "x0 = Conv(x, w0)" PADS "f1 = Conv(x0, w1)" PADS "c1 = Concat(x0, f1) axis=1; "
     "f2 = Conv(c1, w2)" PADS "out f2",
     'b', "as asked", {{"n_c1", false, "batch > 1", NULL}}, 1},
    {"an input straight from the graph: nothing writes it in place, copies",
     "in x f32s[1,16,16,16]; " W3("w1", 16, 16) W3("w2", 16, 32)
     "f1 = Conv(x, w1)" PADS "c1 = Concat(x, f1) axis=1; f2 = Conv(c1, w2)" PADS "out f2",
     'b', "as asked", {{"n_c1", false, "not made by a node", NULL}}, 1},
    /* Sin has no oneDNN primitive: its output comes from the reference kernel, not from
     * the family's buffer. The plan placed it; the run finds it elsewhere and copies. */
    {"a producer on the reference kernel: the run finds its input elsewhere, copies",
     "in x f32s[1,16,16,16]; " W3("w0", 16, 16) W3("w2", 16, 32)
     "x0 = Conv(x, w0)" PADS "f1 = Sin(x0); c1 = Concat(x0, f1) axis=1; "
     "f2 = Conv(c1, w2)" PADS "out f2",
     'b', "as asked", {{"n_c1", false, "input 1 was not written at its place", NULL}}, 1},
};

static void expect_outputs(gl_tensor **got, gl_tensor **want, size_t n, const char *what,
                           const char *run)
{
    gl_compare r;
    char line[256];
    for (size_t o = 0; o < n; o++) {
        gl_compare_tensors(got[o], want[o], RTOL, ATOL, &r);
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok, "%s: output %zu, %s run, dnnl vs ref: %s", what, o, run, line);
        gl_tensor_free(got[o]);
        got[o] = NULL;
    }
}

/* The plan as the row says: each Concat in place or copying (and why); no convolution on
 * a reference kernel. */
static void expect_plan(const icase *c, const gl_model *m, gl_exec *dn)
{
    char header[256];
    gl_exec_summary(dn, header, sizeof(header));
    cr_expect(strstr(header, c->policy), "%s: the plan's header says '%s'", c->name, header);
    for (size_t i = 0; i < MAX_CATS && c->cats[i].node; i++) {
        const cat_expect *k = &c->cats[i];
        const gl_plan_entry *en = tu_plan_entry(dn, k->node, 0);
        cr_assert_not_null(en, "%s: no plan entry '%s'", c->name, k->node);
        if (k->impl) {
            cr_expect(strncmp(en->info.impl, k->impl, strlen(k->impl)) == 0,
                      "%s: %s expected '%s...', got %s (%s)", c->name, k->node, k->impl,
                      en->info.impl, en->info.note);
            continue;
        }
        bool in_place = strcmp(en->info.impl, "in place") == 0;
        cr_expect(in_place == k->in_place && strstr(en->info.note, k->note),
                  "%s: %s expected %s with '%s', got %s (%s)", c->name, k->node,
                  k->in_place ? "in place" : "a copy", k->note, en->info.impl, en->info.note);
    }
    for (size_t i = 0; i < m->graph->n_nodes; i++) {
        const gl_node *n = m->graph->nodes[i];
        if (!gl_node_is(n, "Conv"))
            continue;
        const gl_plan_entry *en = tu_plan_entry(dn, n->name, 0);
        cr_expect(en && strcmp(en->backend, "dnnl") == 0 && !strstr(en->info.impl, "ref"),
                  "%s: %s runs on %s", c->name, n->name, en ? en->info.impl : "nothing");
    }
}

static void run_case(const icase *c)
{
    gn_graph b;
    cr_assert(gn_build(c->name, 13, c->graph, &b), "%s: %s", c->name, b.err);
    gl_pipeline *p = tu_passes(b.m, "toposort,shape-inference", c->name);
    const gl_model *m = p->steps[p->n_steps - 1].model;
    gl_tensor **in = gn_feeds(&b, m->graph, c->name);
    size_t n_in = m->graph->n_inputs;
    gl_tensor *want[2] = {NULL, NULL}, *got[2] = {NULL, NULL};
    cr_assert(c->n_out <= 2);
    gl_exec *ref = tu_exec_run(m, "ref", NULL, in, n_in, want, c->n_out, c->name);
    const char *layout = c->layout == 'a' ? NULL : tu_layout_name(c->layout);
    gl_exec *dn = tu_exec_run(m, "dnnl", layout, in, n_in, got, c->n_out, c->name);
    if (getenv("GL_TEST_PLAN"))
        gl_exec_print_plan(dn, stderr);
    expect_outputs(got, want, c->n_out, c->name, "first");
    expect_plan(c, m, dn);
    tu_exec_rerun_cached(dn, (const gl_tensor *const *)in, n_in, got, c->n_out, c->name);
    expect_outputs(got, want, c->n_out, c->name, "second");
    expect_plan(c, m, dn);
    gl_exec_free(dn);
    for (size_t o = 0; o < c->n_out; o++)
        gl_tensor_free(want[o]);
    gl_exec_free(ref);
    gn_free_tensors(in, n_in);
    gl_pipeline_free(p);
}

Test(dnnl_concat, channel_concats_are_written_in_place_by_their_producers)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        run_case(&cases[i]);
}

/* Concats over plain strides (nhwc, slices of it) copy with graphlab's loop (dn_nary.c),
 * one run per input and outer index: swin_t's roll is two slices of one tensor along a
 * spatial axis, concatenated the other way round. */
#define ROLL(axis, cut, len)                                                               \
    "const s0 i64[1] = " #cut "; const e0 i64[1] = " #len "; const s1 i64[1] = 0; "      \
    "const e1 i64[1] = " #cut "; const ax i64[1] = " #axis "; "                         \
    "a = Slice(x0, s0, e0, ax); b = Slice(x0, s1, e1, ax); c1 = Concat(a, b) axis=" #axis "; "

static const icase copy_cases[] = {
    {"a roll along H: two slices, each one run per image",
     "in x f32s[1,16,8,8]; " W3("w0", 16, 16) "x0 = Conv(x, w0)" PADS ROLL(2, 5, 8)
     "r = Relu(c1); out r", 'n', "as asked", {{"n_c1", false, "", "graphlab:copy"}}, 1},
    {"a roll along W: one run per row",
     "in x f32s[1,16,8,8]; " W3("w0", 16, 16) "x0 = Conv(x, w0)" PADS ROLL(3, 3, 8)
     "r = Relu(c1); out r", 'n', "as asked", {{"n_c1", false, "", "graphlab:copy"}}, 1},
    {"a roll of a batch of 2 along H",
     "in x f32s[2,16,6,7]; " W3("w0", 16, 16) "x0 = Conv(x, w0)" PADS ROLL(2, 1, 6)
     "r = Relu(c1); out r", 'n', "as asked", {{"n_c1", false, "", "graphlab:copy"}}, 1},
    {"channels of three conv outputs: one run of each per pixel",
     "in x f32s[2,16,5,3]; " W3("w0", 16, 16) W3("w1", 8, 16) W3("w2", 24, 16)
     "x0 = Conv(x, w0)" PADS "f1 = Conv(x, w1)" PADS "f2 = Conv(x, w2)" PADS
     "c1 = Concat(x0, f1, f2) axis=1; r = Relu(c1); out r",
     'n', "as asked", {{"n_c1", false, "", "graphlab:copy"}}, 1},
    /* over 512 KB: the rows split over two threads, unevenly (3 images, one run each) */
    {"a roll along H of 3 x 37 x 48 x 48",
     "in x f32s[3,37,48,48]; " W1("w0", 37, 37) "x0 = Conv(x, w0); " ROLL(2, 17, 48)
     "r = Relu(c1); out r", 'n',
     "as asked", {{"n_c1", false, "", "graphlab:copy"}}, 1},
    {"channels of two 2 x 40 x 40 x 48 nhwc inputs",
     "in x f32s[2,48,40,40]; " W1("w0", 48, 48) W1("w1", 40, 48)
     "x0 = Conv(x, w0); f1 = Conv(x, w1); c1 = Concat(x0, f1) axis=1; r = Relu(c1); out r",
     'n', "as asked", {{"n_c1", false, "", "graphlab:copy"}}, 1},
};

Test(dnnl_concat, plain_strided_concats_copy_runs)
{
    tu_omp_threads(2); /* large copies split their rows over the plan's threads */
    for (size_t i = 0; i < GL_ARRAY_LEN(copy_cases); i++)
        run_case(&copy_cases[i]);
}

/* test_dnnl_catconv.c — fusion rule concat-conv1x1 end to end: a graph with a channel
 * Concat read by a 1x1 Conv (and activations) goes through toposort, shape-inference and
 * fusion, and the oneDNN backend runs the group as one 1x1 convolution per Concat input
 * into one destination (src/exec/dnnl/dn_catconv.c).
 *
 * Each row: the graph (graphnote.h), the fused node's name, the plan's implementation
 * must contain `what` (e.g. "x2 + sum + eltwise_relu"), under each layout policy the row
 * names ('p' plain, 'n' nhwc, 'b' blocked); the dnnl run must equal the reference run of
 * the graph before fusion, and a second run builds nothing and reorders no constant.
 * Rows with dims unknown to the IR (?N) are built at the first run, not at the claim.
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

typedef struct ccase {
    const char *name;
    const char *graph;
    const char *layouts;
    const char *node; /* the fused node */
    const char *what; /* in its implementation */
} ccase;

#define RTOL 1e-4
#define ATOL 1e-5

static const ccase cases[] = {
    {"two inputs of 16 channels, bias, Relu",
     "in a f32s[1,16,6,6]; in b f32s[1,16,6,6]; const w f32[8,32,1,1] = rand; "
     "const k f32[8] = rand; c = Concat(a, b) axis=1; y = Conv(c, w, k); r = Relu(y); out r",
     "pnb", "FusedConcatConvRelu_1", "x2 + sum + eltwise_relu"},
    {"three inputs of odd channels (padded blocks), no bias, no activation",
     "in a f32s[1,8,5,7]; in b f32s[1,5,5,7]; in d f32s[1,11,5,7]; "
     "const w f32[6,24,1,1] = rand; c = Concat(a, b, d) axis=1; y = Conv(c, w); out y",
     "pnb", "FusedConcatConv_1", "x3 + sum"},
    {"axis -3, batch 2, dims unknown to the IR, Clip",
     "in a f32s[?2,16,?4,?4]; in b f32s[?2,24,?4,?4]; const w f32[12,40,1,1] = rand; "
     "const k f32[12] = rand; const lo f32[] = 0; const hi f32[] = 0.5; "
     "c = Concat(a, b) axis=-3; y = Conv(c, w, k); r = Clip(y, lo, hi); out r",
     "nb", "FusedConcatConvClip_1", "x2 + sum + eltwise_clip"},
    {"one input twice",
     "in a f32s[1,16,4,4]; const w f32[16,32,1,1] = rand; c = Concat(a, a) axis=1; "
     "y = Conv(c, w); r = Relu(y); out r",
     "nb", "FusedConcatConvRelu_1", "x2 + sum + eltwise_relu"},
};

/* The pipeline's steps on b's model: the last is the fused one, the one before it the
 * graph before fusion. */
static gl_pipeline *fuse(const ccase *c, gn_graph *b)
{
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    cr_assert_eq(gl_pass_list_parse("toposort,shape-inference,fusion", &plan, &n_plan), GL_OK);
    gl_settings s = {0};
    gl_pipeline *p = NULL;
    gl_status st = gl_pipeline_run(b->m, plan, n_plan, &s, GL_PIPELINE_KEEP_SNAPSHOTS, &p);
    free(plan);
    cr_assert_eq(st, GL_OK, "%s: %s", c->name, gl_error_message());
    return p;
}

static void run_case(const ccase *c)
{
    gn_graph b;
    cr_assert(gn_build(c->name, 13, c->graph, &b), "%s: %s", c->name, b.err);
    gl_pipeline *p = fuse(c, &b);
    const gl_model *m = p->steps[p->n_steps - 1].model;
    const gl_model *before = p->steps[p->n_steps - 2].model;
    cr_assert_eq(gn_count_domain(m->graph, "graphlab.fused"), 1u, "%s: not one group",
                 c->name);
    gl_tensor **in = gn_feeds(&b, before->graph, c->name);
    size_t n_in = before->graph->n_inputs;
    gl_tensor *want = NULL;
    gl_exec *ref = tu_exec_run(before, "ref", NULL, in, n_in, &want, 1, c->name);
    for (const char *l = c->layouts; *l; l++) {
        char what[200];
        snprintf(what, sizeof(what), "%s (%s)", c->name, tu_layout_name(*l));
        gl_tensor *got = NULL;
        gl_exec *dn = tu_exec_run(m, "dnnl", tu_layout_name(*l), in, n_in, &got, 1, what);
        if (getenv("GL_TEST_PLAN"))
            gl_exec_print_plan(dn, stderr);
        gl_compare r;
        char line[256];
        gl_compare_tensors(got, want, RTOL, ATOL, &r);
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok, "%s: dnnl vs ref: %s", what, line);
        const gl_plan_entry *en = tu_plan_entry(dn, c->node, 0);
        cr_assert_not_null(en, "%s: no plan entry '%s'", what, c->node);
        cr_expect(!strcmp(en->backend, "dnnl") && !strstr(en->info.impl, "ref") &&
                      strstr(en->info.impl, c->what) && strstr(en->info.note, "fused: Concat"),
                  "%s: expected '%s', got %s %s (%s)", what, c->what, en->backend,
                  en->info.impl, en->info.note);
        gl_tensor_free(got);
        got = NULL;
        tu_exec_rerun_cached(dn, (const gl_tensor *const *)in, n_in, &got, 1, what);
        gl_compare_tensors(got, want, RTOL, ATOL, &r);
        cr_expect(r.ok, "%s: second run differs", what);
        gl_tensor_free(got);
        gl_exec_free(dn);
    }
    gl_tensor_free(want);
    gl_exec_free(ref);
    gn_free_tensors(in, n_in);
    gl_pipeline_free(p);
}

Test(dnnl_catconv, concat_then_1x1_conv_runs_as_one_convolution_per_input)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        run_case(&cases[i]);
}

/* test_dnnl_inplace.c — outputs written over an input's bytes on the oneDNN backend
 * (gl_kernel_ctx.alloc_over): when the executor lends them, and that the numbers stay
 * the reference's.
 *
 * Each row is a small graph (tests/graphnote.h's notation) and one node of it; after the
 * row's passes, the graph runs on dnnl under each layout policy (auto, plain, nhwc,
 * blocked) twice, on two sets of random inputs (a buffer lent back wrong shows on the
 * second), and must equal the reference run on each. The node's plan entry must say it
 * wrote its output over `over` in the last run, or over nothing (NULL): an eltwise or a
 * binary writes over its first source, a convolution with a sum post-op over the sum's
 * operand, and only when nothing can read those bytes afterwards. The tolerance, 1e-3,
 * is for three chained convolutions of unscaled weights (values in the tens); an output
 * computed from bytes already written over is off by about its own size.
 */
#define TU_CASE_SHORTHANDS
#include "exec/compare.h"
#include "exec/exec.h"
#include "graphnote.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-3
#define ATOL 1e-3

#define SHAPES "toposort,shape-inference"
#define FUSION "toposort,shape-inference,fusion"

/* 16 channels of 16x16 (4096 elements: at oneDNN's threshold, not on the reference
 * kernels), weights for 3x3 convolutions that keep the shape */
#define X "in x f32s[1,16,16,16]; const w f32s[16,16,3,3] = rand; " \
          "const v f32s[16,16,3,3] = rand; "
#define CONV(out, in) out " = Conv(" in ", w) pads=[1,1,1,1]; "
#define CONV_V(out, in) out " = Conv(" in ", v) pads=[1,1,1,1]; "
/* a residual R in the layout made by a pooling, which takes no Add: a Conv+Add's Conv is
 * then the other operand's (the fusion could take either Conv) */
#define RESIDUAL CONV_V("P", "x") "R = MaxPool(P) kernel_shape=[3,3] pads=[1,1,1,1]; "

typedef struct icase {
    const char *name;
    const char *graph;
    const char *passes;
    const char *node;   /* the node's name, or the prefix of a fused call's ("FusedConv") */
    const char *over;   /* the value its output is written over; NULL: none */
} icase;

static const icase cases[] = {
    {"a Relu over the Conv output it reads last", X CONV("C", "x") "R = Relu(C); "
     CONV("D", "R") "out D", SHAPES, "n_R", "C"},
    {"not while a later node reads it", X CONV("C", "x") "R = Relu(C); A = Add(R, C); "
     CONV("D", "A") "out D", SHAPES, "n_R", NULL},
    {"the Add after it: over its first operand, read last there", X CONV("C", "x")
     "R = Relu(C); A = Add(R, C); " CONV("D", "A") "out D", SHAPES, "n_A", "R"},
    {"not over the second operand (oneDNN writes over its first source only)",
     X CONV("C", "x") CONV_V("P", "x") "A = Add(P, C); B = Add(A, P); " CONV("D", "B")
     "out D", SHAPES, "n_A", NULL},
    {"not when the node reads the value twice", X CONV("C", "x") "M = Mul(C, C); "
     CONV("D", "M") "out D", SHAPES, "n_M", NULL},
    {"not over a graph input", X "R = Relu(x); " CONV("D", "R") "out D", SHAPES, "n_R",
     NULL},
    {"not into a graph output", X CONV("C", "x") "R = Relu(C); out R", SHAPES, "n_R", NULL},
    {"a squeeze-excite scale over the activation it scales", X CONV("C", "x")
     "G = GlobalAveragePool(C); S = Sigmoid(G); M = Mul(C, S); " CONV("D", "M") "out D",
     SHAPES, "n_M", "C"},
    {"a Conv+Add over the residual (the sum's operand)", X CONV("C", "x") RESIDUAL
     CONV("H", "C") "A = Add(H, R); " CONV("D", "A") "out D", FUSION, "FusedConv", "R"},
    {"not when the Conv reads the residual too (Add(Conv(C), C))", X CONV("C", "x")
     CONV("H", "C") "A = Add(H, C); " CONV("D", "A") "out D", FUSION, "FusedConv", NULL},
    {"not when the residual is read after the Conv+Add", X CONV("C", "x") RESIDUAL
     CONV("H", "C") "A = Add(H, R); B = Add(A, R); " CONV("D", "B") "out D", FUSION,
     "FusedConv", NULL},
};

/* The plan entry of the node named `name`, or of the first whose name starts with it. */
static const gl_plan_entry *entry_of(const gl_exec *e, const char *name)
{
    const gl_plan_entry *en = tu_plan_entry(e, name, 0);
    for (size_t i = 0; !en && i < gl_exec_plan_count(e); i++) {
        const gl_plan_entry *p = gl_exec_plan_at(e, i);
        if (p->depth == 0 && p->node->name && strncmp(p->node->name, name, strlen(name)) == 0)
            en = p;
    }
    return en;
}

static void run_case(const icase *c)
{
    gn_graph b;
    gl_pipeline *p = gn_run_passes(c->name, 13, c->graph, NULL, c->passes, &b);
    cr_assert_not_null(p, "%s: %s", c->name, b.err);
    const gl_model *m = p->steps[p->n_steps - 1].model;
    size_t n_in = m->graph->n_inputs;
    gl_tensor **in[2] = {gn_feeds(&b, m->graph, c->name), gn_feeds(&b, m->graph, "again")};
    gl_tensor *want[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++)
        gl_exec_free(tu_exec_run(m, "ref", NULL, in[k], n_in, &want[k], 1, c->name));
    for (size_t i = 0; i < GL_ARRAY_LEN(tu_layouts); i++) {
        const char *layout = tu_layouts[i];
        char what[200];
        tu_layout_what(what, sizeof(what), c->name, layout);
        gl_tensor *got = NULL;
        gl_exec *dn = tu_exec_run(m, "dnnl", layout, in[0], n_in, &got, 1, what);
        tu_expect_close(got, want[0], RTOL, ATOL, what);
        gl_tensor_free(got);
        got = NULL;
        cr_assert_eq(gl_exec_run(dn, (const gl_tensor *const *)in[1], n_in, &got, 1), GL_OK,
                     "%s: second run: %s", what, gl_error_message());
        tu_expect_close(got, want[1], RTOL, ATOL, what);
        gl_tensor_free(got);
        if (getenv("GL_TEST_PLAN"))
            gl_exec_print_plan(dn, stderr);
        const gl_plan_entry *en = entry_of(dn, c->node);
        cr_assert_not_null(en, "%s: no plan entry '%s'", what, c->node);
        cr_expect(strcmp(en->backend, "dnnl") == 0, "%s: %s runs on %s", what, c->node,
                  en->backend);
        if (c->over)
            cr_expect(en->over && strcmp(en->over, c->over) == 0,
                      "%s: %s written over '%s', expected '%s'", what, en->node->name,
                      en->over ? en->over : "(nothing)", c->over);
        else
            cr_expect(!en->over, "%s: %s written over '%s', expected nothing", what,
                      en->node->name, en->over);
        gl_exec_stats st;
        gl_exec_get_stats(dn, &st);
        cr_expect(!c->over || st.in_place >= 1, "%s: %zu outputs in place in the last run",
                  what, st.in_place);
        gl_exec_free(dn);
    }
    for (int k = 0; k < 2; k++) {
        gl_tensor_free(want[k]);
        gn_free_tensors(in[k], n_in);
    }
    gl_pipeline_free(p);
}

Test(dnnl_inplace, written_over_an_input_only_when_nothing_reads_it_after)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        run_case(&cases[i]);
}

/* The inner primitives of fused units write into the plan's unit scratch (dn_ctx's
 * unit_scratch), one buffer per position shared by every unit. Three MatMuls each with
 * a Softmax after it fuse into two units: MatMul, Softmax, MatMul (inner outputs at
 * positions 0 and 1, [2,8,24]) and Softmax, MatMul (its inner output [2,8,64] at
 * position 0: larger, the scratch grows between the units). Two runs on two input sets
 * equal the reference. */
Test(dnnl_inplace, units_share_their_scratch)
{
    static const char *graph =
        "in a f32s[2,8,32]; const b f32s[32,24] = rand; const c f32s[24,64] = rand; "
        "const d f32s[64,16] = rand; M1 = MatMul(a, b); S1 = Softmax(M1) axis=-1; "
        "M2 = MatMul(S1, c); S2 = Softmax(M2) axis=-1; M3 = MatMul(S2, d); "
        "S3 = Softmax(M3) axis=-1; out S3";
    gn_graph b;
    gl_pipeline *p = gn_run_passes("units", 13, graph, NULL, FUSION, &b);
    cr_assert_not_null(p, "%s", b.err);
    const gl_model *m = p->steps[p->n_steps - 1].model;
    size_t n_in = m->graph->n_inputs;
    gl_tensor **in[2] = {gn_feeds(&b, m->graph, "units"), gn_feeds(&b, m->graph, "again")};
    gl_exec *dn = NULL;
    for (int k = 0; k < 2; k++) {
        gl_tensor *want = NULL, *got = NULL;
        gl_exec_free(tu_exec_run(m, "ref", NULL, in[k], n_in, &want, 1, "units"));
        if (!dn)
            dn = tu_exec_run(m, "dnnl", NULL, in[k], n_in, &got, 1, "units");
        else
            cr_assert_eq(gl_exec_run(dn, (const gl_tensor *const *)in[k], n_in, &got, 1),
                         GL_OK, "second run: %s", gl_error_message());
        tu_expect_close(got, want, 1e-4, 1e-5, k ? "units, second run" : "units");
        gl_tensor_free(want);
        gl_tensor_free(got);
    }
    if (getenv("GL_TEST_PLAN"))
        gl_exec_print_plan(dn, stderr);
    size_t units = 0;
    for (size_t i = 0; i < gl_exec_plan_count(dn); i++) {
        const gl_plan_entry *en = gl_exec_plan_at(dn, i);
        units += en->depth == 0 && strcmp(en->backend, "dnnl") == 0 &&
                 strstr(en->info.impl, " | ") != NULL;
    }
    cr_expect_eq(units, 2, "%zu units of several primitives, expected 2", units);
    gl_exec_free(dn);
    for (int k = 0; k < 2; k++)
        gn_free_tensors(in[k], n_in);
    gl_pipeline_free(p);
}

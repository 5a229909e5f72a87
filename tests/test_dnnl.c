/* test_dnnl.c — the oneDNN backend against the reference kernels.
 *
 * Each configuration builds a one-node model whose operands are graph inputs, runs it
 * through the executor with --backend dnnl, and compares the output with the registry's
 * reference kernel on the same random inputs (fixed seed): rtol 1e-4, atol 1e-5. The
 * reference is the ground truth here; its own correctness is test_ops_nn/linalg's job.
 * The plan must show the node on dnnl with a oneDNN implementation name, so a silent
 * fallback to the reference (which would make the comparison trivially pass) fails too.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */

#include "exec/compare.h"
#include "exec/exec.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-4
#define ATOL 1e-5

/* ---- helpers ------------------------------------------------------------------------- */

/* A small LCG: the same inputs on every run and machine. Values in [-1, 1). */
static float next_uniform(uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return (float)(*seed >> 8) / (float)(1u << 23) - 1.0f;
}

static gl_tensor *random_tensor(int rank, const int64_t *dims, uint32_t *seed)
{
    gl_tensor *t = gl_tensor_new(GL_DT_FLOAT, rank, dims);
    float *p = t->count ? gl_tensor_make_writable(t) : NULL;
    for (int64_t i = 0; i < t->count; i++)
        p[i] = next_uniform(seed);
    return t;
}

/* The plan of e as text (malloc'd). */
static char *plan_text(const gl_exec *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gl_exec_print_plan(e, f);
    fclose(f);
    return buf;
}

/* The plan line of node `name` (a static copy), or "" when there is none. */
static const char *plan_line(const char *plan, const char *name)
{
    static char line[512];
    char quoted[128];
    snprintf(quoted, sizeof(quoted), "'%s'", name);
    const char *p = strstr(plan, quoted);
    line[0] = 0;
    if (!p)
        return line;
    while (p > plan && p[-1] != '\n')
        p--;
    size_t n = strcspn(p, "\n");
    snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) - 1 ? n : sizeof(line) - 1), p);
    return line;
}

/* Node `name` runs on dnnl with a fast oneDNN implementation: not our fallback, and not
 * oneDNN's own reference code ("ref:any"), which the post-op order in backend_dnnl.c
 * avoids on AVX-512 and AVX2 machines alike (try ONEDNN_MAX_CPU_ISA=AVX2). */
static void expect_on_dnnl(const char *plan, const char *name, const char *what)
{
    const char *line = plan_line(plan, name);
    cr_expect(strstr(line, " dnnl ") != NULL, "%s: not on dnnl: '%s'", what, line);
    cr_expect(strstr(line, "  ref  ") == NULL && strstr(line, "first run") == NULL,
              "%s: no oneDNN implementation: '%s'", what, line);
    cr_expect(strstr(line, " ref:") == NULL, "%s: oneDNN's reference implementation: '%s'",
              what, line);
}

/* Compare `got` with the reference kernel's output for node n on `in`. */
static void expect_like_ref(const gl_model *m, const gl_node *n, const gl_tensor *const *in,
                            const gl_tensor *got, const char *what)
{
    gl_tensor *want = NULL;
    gl_status st = tu_run_kernel(m, n, in, &want);
    cr_assert_eq(st, GL_OK, "%s: reference: %s", what, gl_error_message());
    gl_compare r;
    gl_compare_tensors(got, want, RTOL, ATOL, &r);
    char line[256];
    gl_compare_format(&r, line, sizeof(line));
    cr_expect(r.ok, "%s: dnnl vs ref: %s", what, line);
    gl_tensor_free(want);
}

/* Run model m (one node `n`, one output) on dnnl with inputs `in` and compare with the
 * reference; the plan must show n on dnnl unless `fallback`. */
static void check_node(const gl_model *m, const gl_node *n, const gl_tensor *const *in,
                       size_t n_in, bool fallback, const char *what)
{
    gl_exec_options o = {.backend = "dnnl"};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s: %s", what, gl_error_message());
    gl_tensor *got = NULL;
    gl_status st = gl_exec_run(e, in, n_in, &got, 1);
    cr_assert_eq(st, GL_OK, "%s: dnnl run: %s", what, gl_error_message());
    expect_like_ref(m, n, in, got, what);
    char *plan = plan_text(e);
    if (fallback)
        cr_expect(strstr(plan_line(plan, n->name), " dnnl  ref  (") != NULL,
                  "%s: expected the reference fallback with its reason: '%s'", what,
                  plan_line(plan, n->name));
    else
        expect_on_dnnl(plan, n->name, what);
    free(plan);
    gl_tensor_free(got);
    gl_exec_free(e);
}

static void free_tensors(gl_tensor **t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gl_tensor_free(t[i]);
}

/* ---- Conv ---------------------------------------------------------------------------- */

typedef struct conv_case {
    const char *name;
    int nsp;                      /* spatial dims */
    int64_t n, c, oc, group;
    int64_t in[3], k[3];
    int64_t strides[3], dil[3];   /* 0: attribute absent */
    int64_t pads[6];              /* begins then ends; used when has_pads */
    bool has_pads, bias;
    const char *auto_pad;         /* NULL: absent */
} conv_case;

static const conv_case conv_cases[] = {
    {"3x3 pad 1 bias", 2, 1, 3, 4, 1, {8, 8}, {3, 3}, {0}, {0}, {1, 1, 1, 1}, true, true, NULL},
    {"1x1 batch 2 no bias", 2, 2, 5, 7, 1, {6, 5}, {1, 1}, {0}, {0}, {0}, false, false, NULL},
    {"stride 2 asymmetric pads", 2, 1, 3, 4, 1, {9, 8}, {3, 3}, {2, 2}, {0}, {0, 1, 2, 0}, true,
     true, NULL},
    {"dilation 2", 2, 2, 4, 3, 1, {10, 10}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}, true, true, NULL},
    {"dilation (1,3) stride (2,1)", 2, 1, 2, 2, 1, {9, 11}, {3, 2}, {2, 1}, {1, 3}, {1, 0, 1, 2},
     true, false, NULL},
    {"group 2", 2, 1, 4, 6, 2, {7, 7}, {3, 3}, {0}, {0}, {1, 1, 1, 1}, true, true, NULL},
    {"depthwise stride 2", 2, 2, 8, 8, 8, {9, 9}, {3, 3}, {2, 2}, {0}, {1, 1, 1, 1}, true, true,
     NULL},
    {"depthwise multiplier 2", 2, 1, 4, 8, 4, {6, 6}, {3, 3}, {0}, {0}, {1, 1, 1, 1}, true, false,
     NULL},
    {"SAME_UPPER stride 2", 2, 1, 3, 4, 1, {7, 7}, {3, 3}, {2, 2}, {0}, {0}, false, true,
     "SAME_UPPER"},
    {"SAME_LOWER even kernel", 2, 1, 3, 2, 1, {6, 5}, {4, 2}, {0}, {0}, {0}, false, true,
     "SAME_LOWER"},
    {"VALID stride 2", 2, 1, 2, 3, 1, {8, 7}, {3, 3}, {2, 2}, {0}, {5, 5, 5, 5}, true, false,
     "VALID"},
    {"rectangular 1x5 batch 3", 2, 3, 3, 5, 1, {5, 9}, {1, 5}, {1, 2}, {0}, {0, 2, 0, 2}, true,
     true, NULL},
    {"kernel larger than input", 2, 1, 2, 3, 1, {3, 3}, {5, 5}, {0}, {0}, {1, 1, 1, 1}, true, true,
     NULL},
    {"1-D stride 2 dilation 2", 1, 2, 3, 4, 1, {20}, {5}, {2}, {2}, {2, 1}, true, true, NULL},
    {"1-D depthwise", 1, 1, 6, 6, 6, {12}, {3}, {0}, {0}, {1, 1}, true, false, NULL},
    {"3-D group 2 bias", 3, 1, 4, 4, 2, {5, 6, 4}, {3, 3, 2}, {1, 2, 1}, {0}, {1, 1, 0, 1, 0, 1},
     true, true, NULL},
};

static gl_model *conv_model(const conv_case *c, gl_node **node, gl_tensor **in, size_t *n_in,
                            uint32_t *seed)
{
    int rank = c->nsp + 2;
    int64_t xd[5] = {c->n, c->c}, wd[5] = {c->oc, c->c / c->group};
    for (int d = 0; d < c->nsp; d++) {
        xd[2 + d] = c->in[d];
        wd[2 + d] = c->k[d];
    }
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, rank, xd);
    gl_value *w = tu_input(g, "w", GL_DT_FLOAT, rank, wd);
    gl_value *b = c->bias ? tu_input(g, "b", GL_DT_FLOAT, 1, &c->oc) : NULL;
    gl_node *n = c->bias ? tu_node(g, "Conv", "conv", 3, x, w, b)
                         : tu_node(g, "Conv", "conv", 2, x, w);
    if (c->group != 1)
        gl_node_set_attr_int(n, "group", c->group);
    if (c->strides[0])
        gl_node_set_attr_ints(n, "strides", c->strides, (size_t)c->nsp);
    if (c->dil[0])
        gl_node_set_attr_ints(n, "dilations", c->dil, (size_t)c->nsp);
    if (c->has_pads)
        gl_node_set_attr_ints(n, "pads", c->pads, 2 * (size_t)c->nsp);
    if (c->auto_pad)
        gl_node_set_attr_string(n, "auto_pad", c->auto_pad);
    gl_node_set_attr_ints(n, "kernel_shape", c->k, (size_t)c->nsp);
    tu_output(g, n->outputs[0]);
    in[0] = random_tensor(rank, xd, seed);
    in[1] = random_tensor(rank, wd, seed);
    in[2] = c->bias ? random_tensor(1, &c->oc, seed) : NULL;
    *n_in = c->bias ? 3 : 2;
    *node = n;
    return m;
}

Test(dnnl, conv_matches_reference)
{
    uint32_t seed = 1;
    for (size_t i = 0; i < GL_ARRAY_LEN(conv_cases); i++) {
        const conv_case *c = &conv_cases[i];
        gl_tensor *in[3];
        size_t n_in;
        gl_node *n;
        gl_model *m = conv_model(c, &n, in, &n_in, &seed);
        check_node(m, n, (const gl_tensor *const *)in, n_in, false, c->name);
        free_tensors(in, n_in);
        gl_model_free(m);
    }
}

/* ---- MatMul -------------------------------------------------------------------------- */

typedef struct matmul_case {
    const char *name;
    int ra, rb;
    int64_t a[4], b[4];
} matmul_case;

static const matmul_case matmul_cases[] = {
    {"2-D", 2, 2, {4, 5}, {5, 3}},
    {"3-D x 2-D", 3, 2, {2, 4, 5}, {5, 3}},
    {"2-D x 3-D", 2, 3, {4, 5}, {3, 5, 2}},
    {"batch broadcast [2,1] x [3]", 4, 3, {2, 1, 4, 5}, {3, 5, 6}},
    {"batch broadcast [1] x [2]", 3, 3, {1, 4, 5}, {2, 5, 6}},
    {"batch broadcast both ways", 4, 4, {3, 1, 4, 5}, {1, 2, 5, 6}},
    {"1-D x 2-D", 1, 2, {5}, {5, 3}},
    {"3-D x 1-D", 3, 1, {2, 4, 5}, {5}},
    {"1-D x 1-D", 1, 1, {7}, {7}},
    {"1-D x 3-D", 1, 3, {5}, {2, 5, 3}},
    {"64x128 x 128x96", 2, 2, {64, 128}, {128, 96}},
    {"attention-shaped", 4, 4, {1, 4, 16, 32}, {1, 4, 32, 16}},
};

Test(dnnl, matmul_matches_reference)
{
    uint32_t seed = 2;
    for (size_t i = 0; i < GL_ARRAY_LEN(matmul_cases); i++) {
        const matmul_case *c = &matmul_cases[i];
        gl_model *m = tu_model(13);
        gl_value *a = tu_input(m->graph, "a", GL_DT_FLOAT, c->ra, c->a);
        gl_value *b = tu_input(m->graph, "b", GL_DT_FLOAT, c->rb, c->b);
        gl_node *n = tu_node(m->graph, "MatMul", "mm", 2, a, b);
        tu_output(m->graph, n->outputs[0]);
        gl_tensor *in[2] = {random_tensor(c->ra, c->a, &seed), random_tensor(c->rb, c->b, &seed)};
        check_node(m, n, (const gl_tensor *const *)in, 2, false, c->name);
        free_tensors(in, 2);
        gl_model_free(m);
    }
}

/* ---- Gemm ---------------------------------------------------------------------------- */

typedef struct gemm_case {
    const char *name;
    int64_t m, k, n;
    int trans_a, trans_b;
    float alpha, beta;           /* 1, 1 are also set explicitly: the same thing */
    int rc;                      /* rank of C; -1: no C */
    int64_t c[2];
    bool fallback;               /* alpha 0 runs the reference kernel */
} gemm_case;

static const gemm_case gemm_cases[] = {
    {"no C", 4, 5, 3, 0, 0, 1, 1, -1, {0}, false},
    {"transA", 4, 5, 3, 1, 0, 1, 1, -1, {0}, false},
    {"transB, C [N]", 6, 5, 3, 0, 1, 1, 1, 1, {3}, false},
    {"both transposed, C [M,N], alpha 0.5 beta 2", 4, 7, 3, 1, 1, 0.5f, 2.0f, 2, {4, 3}, false},
    {"C [M,1], beta 0.5", 4, 5, 6, 0, 0, 1, 0.5f, 2, {4, 1}, false},
    {"C scalar, alpha = beta = 2", 3, 5, 4, 0, 1, 2, 2, 0, {0}, false},
    {"C [1,N], beta 0", 3, 5, 4, 0, 0, 1, 0, 2, {1, 4}, false},
    {"C [1,1], alpha -1.5", 5, 3, 2, 1, 0, -1.5f, 1, 2, {1, 1}, false},
    {"FC head 1x1280 x 1000x1280", 1, 1280, 1000, 0, 1, 1, 1, 1, {1000}, false},
    {"alpha 0: reference", 3, 4, 5, 0, 0, 0, 1, 1, {5}, true},
};

Test(dnnl, gemm_matches_reference)
{
    uint32_t seed = 3;
    for (size_t i = 0; i < GL_ARRAY_LEN(gemm_cases); i++) {
        const gemm_case *c = &gemm_cases[i];
        int64_t ad[2] = {c->trans_a ? c->k : c->m, c->trans_a ? c->m : c->k};
        int64_t bd[2] = {c->trans_b ? c->n : c->k, c->trans_b ? c->k : c->n};
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        gl_value *a = tu_input(g, "a", GL_DT_FLOAT, 2, ad);
        gl_value *b = tu_input(g, "b", GL_DT_FLOAT, 2, bd);
        gl_value *cv = c->rc >= 0 ? tu_input(g, "c", GL_DT_FLOAT, c->rc, c->c) : NULL;
        gl_node *n = cv ? tu_node(g, "Gemm", "gemm", 3, a, b, cv)
                        : tu_node(g, "Gemm", "gemm", 2, a, b);
        gl_node_set_attr_int(n, "transA", c->trans_a);
        gl_node_set_attr_int(n, "transB", c->trans_b);
        gl_node_set_attr_float(n, "alpha", c->alpha);
        gl_node_set_attr_float(n, "beta", c->beta);
        tu_output(g, n->outputs[0]);
        gl_tensor *in[3] = {random_tensor(2, ad, &seed), random_tensor(2, bd, &seed),
                            cv ? random_tensor(c->rc, c->c, &seed) : NULL};
        size_t n_in = cv ? 3 : 2;
        check_node(m, n, (const gl_tensor *const *)in, n_in, c->fallback, c->name);
        free_tensors(in, n_in);
        gl_model_free(m);
    }
}

/* ---- plans, shapes, fallbacks, errors ------------------------------------------------ */

/* y = MatMul(Relu(Conv(x, w)) flattened...): Conv -> Relu -> Reshape -> MatMul, with a
 * MatMul on int64 beside it. */
Test(dnnl, plan_assigns_claimed_nodes_to_dnnl_and_the_rest_to_ref)
{
    uint32_t seed = 4;
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){1, 2, 4, 4});
    gl_tensor *wt = random_tensor(4, (int64_t[]){3, 2, 3, 3}, &seed);
    gl_value *w = tu_const_f32(g, "w", 4, wt->dims, gl_tensor_data(wt));
    gl_node *conv = tu_node(g, "Conv", "conv", 2, x, w);
    gl_node *relu = tu_node(g, "Relu", "relu", 1, conv->outputs[0]);
    gl_value *shape = tu_const_i64(g, "shape", 2, (int64_t[]){1, 2}, (int64_t[]){1, 12});
    gl_node *flat = tu_node(g, "Reshape", "flat", 2, relu->outputs[0], shape);
    gl_tensor *pt = random_tensor(2, (int64_t[]){12, 5}, &seed);
    gl_value *p = tu_const_f32(g, "p", 2, pt->dims, gl_tensor_data(pt));
    gl_node *mm = tu_node(g, "MatMul", "mm", 2, flat->outputs[0], p);
    gl_value *ia = tu_input(g, "ia", GL_DT_INT64, 2, (int64_t[]){2, 2});
    gl_node *imm = tu_node(g, "MatMul", "int_mm", 2, ia, ia);
    tu_output(g, mm->outputs[0]);
    tu_output(g, imm->outputs[0]);

    gl_exec_options o = {.backend = "dnnl"};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    char *before = plan_text(e);
    cr_expect(strstr(plan_line(before, "conv"), "(built on first run)") != NULL, "%s",
              plan_line(before, "conv"));
    free(before);
    gl_tensor *in[2] = {random_tensor(4, (int64_t[]){1, 2, 4, 4}, &seed),
                        tu_tensor_i64(2, (int64_t[]){2, 2}, (int64_t[]){1, 2, 3, 4})};
    gl_tensor *out[2] = {0};
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)in, 2, out, 2), GL_OK, "%s",
                 gl_error_message());
    char *plan = plan_text(e);
    /* The Relu's and Reshape's outputs have no declared type: the MatMul is claimed on
     * its known float operand and settled at run time. */
    expect_on_dnnl(plan, "conv", "conv");
    expect_on_dnnl(plan, "mm", "mm");
    /* The Relu reads the Conv's output in oneDNN's layout: it stays there too. */
    expect_on_dnnl(plan, "relu", "relu");
    /* The Reshape merges nhwc's C with H and W: no view, one reorder to plain (what the
     * MatMul reads) */
    cr_expect(strstr(plan_line(plan, "flat"), " dnnl  jit:") != NULL &&
                  strstr(plan_line(plan, "flat"), "-> plain") != NULL,
              "%s", plan_line(plan, "flat"));
    cr_expect(strstr(plan_line(plan, "int_mm"), " ref ") != NULL, "int64 MatMul: %s",
              plan_line(plan, "int_mm"));
    /* [[1,2],[3,4]]^2 = [[7,10],[15,22]] */
    const int64_t *sq = gl_tensor_data(out[1]);
    cr_expect(sq[0] == 7 && sq[1] == 10 && sq[2] == 15 && sq[3] == 22, "int64 MatMul result");
    free(plan);
    free_tensors(out, 2);
    free_tensors(in, 2);
    gl_tensor_free(wt);
    gl_tensor_free(pt);
    gl_exec_free(e);
    gl_model_free(m);
}

/* One plan, inputs of changing shape: a primitive per shape, reused while it holds. */
Test(dnnl, shape_change_rebuilds_the_primitive)
{
    uint32_t seed = 5;
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){-1, 3, -1, -1});
    gl_tensor *wt = random_tensor(4, (int64_t[]){4, 3, 3, 3}, &seed);
    gl_value *w = tu_const_f32(g, "w", 4, wt->dims, gl_tensor_data(wt));
    gl_node *n = tu_node(g, "Conv", "conv", 2, x, w);
    gl_node_set_attr_string(n, "auto_pad", "SAME_UPPER");
    gl_node_set_attr_ints(n, "strides", (int64_t[]){2, 2}, 2);
    tu_output(g, n->outputs[0]);
    gl_exec_options o = {.backend = "dnnl"};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    static const struct {
        int64_t dims[4];
        size_t new_builds;
    } runs[] = {
        {{1, 3, 8, 8}, 1}, {{1, 3, 8, 8}, 0}, {{2, 3, 11, 7}, 1}, {{2, 3, 11, 7}, 0},
        {{1, 3, 8, 8}, 1},
    };
    for (size_t r = 0; r < GL_ARRAY_LEN(runs); r++) {
        gl_tensor *in[2] = {random_tensor(4, runs[r].dims, &seed), wt};
        size_t before = gl_backend_dnnl_builds();
        gl_tensor *got = NULL;
        cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)in, 1, &got, 1), GL_OK,
                     "run %zu: %s", r, gl_error_message());
        cr_expect_eq(gl_backend_dnnl_builds() - before, runs[r].new_builds,
                     "run %zu: %zu primitives built, expected %zu", r,
                     gl_backend_dnnl_builds() - before, runs[r].new_builds);
        char what[32];
        snprintf(what, sizeof(what), "run %zu", r);
        /* SAME_UPPER, stride 2: ceil(in / 2) */
        cr_expect(got->dims[2] == (runs[r].dims[2] + 1) / 2 &&
                  got->dims[3] == (runs[r].dims[3] + 1) / 2, "%s: output dims", what);
        expect_like_ref(m, n, (const gl_tensor *const *)in, got, what);
        gl_tensor_free(got);
        gl_tensor_free(in[0]);
    }
    gl_tensor_free(wt);
    gl_exec_free(e);
    gl_model_free(m);
}

/* X of unknown rank is claimed; at run time a 4-D convolution (rank 6) is beyond oneDNN
 * and an empty batch is beyond this backend: both run the reference kernel. */
Test(dnnl, unsupported_shapes_fall_back_to_the_reference)
{
    uint32_t seed = 6;
    static const struct {
        const char *name;
        int rank;
        int64_t x[6], w[6];
    } cases[] = {
        {"4 spatial dims", 6, {1, 2, 4, 3, 3, 4}, {2, 2, 2, 1, 2, 3}},
        {"empty batch", 4, {0, 2, 5, 5}, {3, 2, 3, 3}},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(13);
        gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 0, NULL);
        gl_shape_free(&x->type.shape); /* rank unknown */
        gl_value *w = tu_input(m->graph, "w", GL_DT_FLOAT, 0, NULL);
        gl_shape_free(&w->type.shape);
        gl_node *n = tu_node(m->graph, "Conv", "conv", 2, x, w);
        tu_output(m->graph, n->outputs[0]);
        gl_tensor *in[2] = {random_tensor(cases[i].rank, cases[i].x, &seed),
                            random_tensor(cases[i].rank, cases[i].w, &seed)};
        check_node(m, n, (const gl_tensor *const *)in, 2, true, cases[i].name);
        free_tensors(in, 2);
        gl_model_free(m);
    }
}

/* Known non-float or out-of-range operands are not claimed. */
Test(dnnl, claims_only_float32_of_handled_ranks)
{
    const gl_backend *b = gl_backend_dnnl();
    cr_assert_not_null(b);
    static const struct {
        const char *op;
        gl_dtype dt;
        int rank;
        bool claimed;
    } cases[] = {
        {"Conv", GL_DT_FLOAT, 4, true},      {"Conv", GL_DT_FLOAT, 3, true},
        {"Conv", GL_DT_FLOAT, 5, true},      {"Conv", GL_DT_FLOAT, 6, false},
        {"Conv", GL_DT_DOUBLE, 4, false},    {"Conv", GL_DT_FLOAT16, 4, false},
        {"Conv", GL_DT_UNDEFINED, 4, true},  {"MatMul", GL_DT_FLOAT, 1, true},
        {"MatMul", GL_DT_FLOAT, 12, true},   {"MatMul", GL_DT_FLOAT, 13, false},
        {"MatMul", GL_DT_INT32, 2, false},   {"Gemm", GL_DT_FLOAT, 2, true},
        {"Gemm", GL_DT_DOUBLE, 2, false},    {"Relu", GL_DT_FLOAT, 2, true},
        {"Relu", GL_DT_INT32, 2, false},     {"Erf", GL_DT_FLOAT, 2, false},
        {"ConvTranspose", GL_DT_FLOAT, 4, true},     {"ConvTranspose", GL_DT_DOUBLE, 4, false},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(13);
        int64_t dims[16];
        for (int d = 0; d < 16; d++)
            dims[d] = 2;
        gl_value *a = tu_input(m->graph, "a", cases[i].dt, cases[i].rank, dims);
        gl_value *c = tu_input(m->graph, "c", cases[i].dt, cases[i].rank, dims);
        gl_node *n = tu_node(m->graph, cases[i].op, "n", 2, a, c);
        char why[160] = "";
        cr_expect_eq(b->claims(NULL, m, n, NULL, why, sizeof(why)), cases[i].claimed, "%s %s rank %d: claims %d", cases[i].op,
                     gl_dtype_name(cases[i].dt), cases[i].rank, !cases[i].claimed);
        gl_model_free(m);
    }
}

/* Invalid inputs get the reference kernel's message, naming the node. */
Test(dnnl, invalid_inputs_fail_with_the_node_named)
{
    uint32_t seed = 7;
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 4, (int64_t[]){1, 3, 5, 5});
    gl_value *w = tu_input(m->graph, "w", GL_DT_FLOAT, 4, (int64_t[]){2, 4, 3, 3});
    gl_node *n = tu_node(m->graph, "Conv", "bad_conv", 2, x, w);
    tu_output(m->graph, n->outputs[0]);
    gl_exec_options o = {.backend = "dnnl"};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    gl_tensor *in[2] = {random_tensor(4, (int64_t[]){1, 3, 5, 5}, &seed),
                        random_tensor(4, (int64_t[]){2, 4, 3, 3}, &seed)};
    gl_tensor *got = NULL;
    gl_status st = gl_exec_run(e, (const gl_tensor *const *)in, 2, &got, 1);
    cr_expect_eq(st, GL_ERR_INPUT, "status %s", gl_status_name(st));
    cr_expect(strstr(gl_error_message(), "'bad_conv'") != NULL, "message: %s",
              gl_error_message());
    cr_expect_null(got);
    free_tensors(in, 2);
    gl_exec_free(e);
    gl_model_free(m);
}

/* --threads reaches OpenMP (criterion runs each test in its own process). */
Test(dnnl, threads_option_sets_the_openmp_thread_count)
{
    int (*max_threads)(void) = NULL;
    *(void **)&max_threads = dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    cr_assert_not_null(max_threads, "libgomp is not loaded");
    gl_model *m = tu_model(13);
    gl_value *a = tu_input(m->graph, "a", GL_DT_FLOAT, 2, (int64_t[]){2, 2});
    gl_node *n = tu_node(m->graph, "MatMul", "mm", 2, a, a);
    tu_output(m->graph, n->outputs[0]);
    for (int t = 1; t <= 3; t++) {
        gl_exec_options o = {.backend = "dnnl", .threads = t};
        gl_exec *e = NULL;
        cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
        cr_expect_eq(max_threads(), t, "threads %d: OpenMP has %d", t, max_threads());
        gl_exec_free(e);
    }
    gl_model_free(m);
}

/* A primitive whose estimated work is under DN_ONE_THREAD_NS is made on one thread, and
 * the plan says so ("1 thread: ~N us of work"). A transcendental activation is ~0.5 ns an
 * element on one thread, a memory-bound one ~0.1: 64K elements of SiLU or Tanh (26-59 us
 * measured) go on the plan's two threads, the same Relu (~6.5 us) and 16K of SiLU on one.
 * The plan's threads are asked for here; the machine may have fewer (that is OpenMP's). */
Test(dnnl, small_work_goes_on_one_thread_by_its_estimated_time)
{
    static const struct {
        const char *op;
        int64_t channels; /* x is [1, channels, 32, 32] */
        bool one_thread;
    } cases[] = {
        {"graphlab.Silu", 64, false}, {"Tanh", 64, false},     {"Sigmoid", 64, false},
        {"Relu", 64, true},           {"graphlab.Silu", 16, true}, {"Abs", 64, true},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_model *m = tu_model(13);
        gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 4,
                               (int64_t[]){1, cases[i].channels, 32, 32});
        const char *dot = strchr(cases[i].op, '.');
        if (dot)
            gl_model_set_opset(m, "graphlab", 1);
        gl_node *n = gl_add_node(m->graph, dot ? dot + 1 : cases[i].op, dot ? "graphlab" : "",
                                 "act", &x, 1, 1);
        tu_output(m->graph, n->outputs[0]);
        gl_exec_options o = {.backend = "dnnl", .threads = 2};
        gl_exec *e = NULL;
        cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
        uint32_t seed = 7;
        gl_tensor *in = random_tensor(4, (int64_t[]){1, cases[i].channels, 32, 32}, &seed);
        gl_tensor *got = NULL;
        cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)&in, 1, &got, 1), GL_OK, "%s",
                     gl_error_message());
        gl_tensor_free(in);
        gl_tensor_free(got);
        const gl_plan_entry *en = tu_plan_entry(e, "act", 0);
        cr_assert_not_null(en, "%s: no plan entry", cases[i].op);
        bool one = strstr(en->info.note, "1 thread") != NULL;
        cr_expect_eq(one, cases[i].one_thread, "%s of [1,%lld,32,32]: '%s' (%s)", cases[i].op,
                     (long long)cases[i].channels, en->info.note, en->info.impl);
        gl_exec_free(e);
        gl_model_free(m);
    }
}

/* ---- NaN and infinities in big constants ------------------------------------------------ */

/* x[64,64] -> Relu -> MatMul(W[64,cols]) -> (Add a bias) -> `then`, W holding `special` at two
 * places. A MatMul whose constant far outweighs its input does not look at it only to
 * vouch for its output (dn_special.c): the Relu or Softmax after it, which oneDNN gets
 * wrong on a NaN or an infinity, must then look at what it reads. The whole model on
 * dnnl must equal the reference run, NaN for NaN; with a W no bigger than the input
 * the MatMul looks at W itself. */
Test(dnnl, specials_in_a_big_constant_are_found_downstream)
{
    static const struct {
        const char *name;
        int64_t cols;  /* W is [64, cols] */
        float special;
        bool bias;     /* an Add between: what it outputs is not vouched for either */
        const char *then;
    } cases[] = {
        {"NaN in W, Relu", 2048, NAN, false, "Relu"},
        {"+Inf in W, Relu", 2048, INFINITY, false, "Relu"},
        {"-Inf in W, Relu", 2048, -INFINITY, false, "Relu"},
        {"NaN in W, Softmax", 2048, NAN, false, "Softmax"},
        {"+Inf in W, Softmax", 2048, INFINITY, false, "Softmax"},
        {"NaN in W, Add, Relu", 2048, NAN, true, "Relu"},
        {"NaN in a W no bigger than x, Relu", 64, NAN, false, "Relu"},
        {"+Inf in a W no bigger than x, Softmax", 64, INFINITY, false, "Softmax"},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        uint32_t seed = 23;
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        int64_t xd[2] = {64, 64}, wd[2] = {64, cases[c].cols}, bd[1] = {cases[c].cols};
        gl_tensor *w = random_tensor(2, wd, &seed);
        float *wp = gl_tensor_make_writable(w);
        wp[5 * cases[c].cols + 7] = cases[c].special;
        wp[40 * cases[c].cols + cases[c].cols / 2] = cases[c].special;
        gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 2, xd);
        /* a Relu looks at x and vouches for what it outputs: the MatMul reads vouched
         * values, and vouches for its output when it knows W is free of specials */
        gl_value *vouched = tu_node(g, "Relu", "pre", 1, x)->outputs[0];
        gl_node *mm = tu_node(g, "MatMul", "mm", 2, vouched, tu_const_tensor(g, "w", w));
        gl_value *y = mm->outputs[0];
        if (cases[c].bias) /* the model owns its constants */
            y = tu_node(g, "Add", "add", 2, y,
                         tu_const_tensor(g, "b", random_tensor(1, bd, &seed)))->outputs[0];
        tu_output(g, tu_node(g, cases[c].then, "then", 1, y)->outputs[0]);
        gl_tensor *in = random_tensor(2, xd, &seed);

        gl_tensor *got = NULL, *want = NULL;
        gl_exec *dn = tu_exec_run(m, "dnnl", NULL, &in, 1, &got, 1, cases[c].name);
        gl_exec *ref = tu_exec_run(m, "ref", NULL, &in, 1, &want, 1, cases[c].name);
        size_t specials = 0;
        const float *wv = gl_tensor_data(want);
        for (int64_t i = 0; i < want->count; i++)
            specials += !isfinite(wv[i]);
        cr_expect(specials > 0, "%s: the reference output holds no NaN or infinity",
                  cases[c].name);
        gl_compare r;
        gl_compare_tensors(got, want, RTOL, ATOL, &r);
        char line[256];
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok && r.nan_mismatch == 0, "%s: dnnl vs ref: %s", cases[c].name, line);
        char *plan = plan_text(dn);
        expect_on_dnnl(plan, "mm", cases[c].name);
        free(plan);
        gl_tensor_free(got);
        gl_tensor_free(want);
        gl_exec_free(dn);
        gl_exec_free(ref);
        gl_tensor_free(in);
        gl_model_free(m);
    }
}

/* x[8,4,16,16] -> Softmax (-> MatMul with v[8,4,16,32], fused as one unit of two
 * primitives), x holding `special` where a causal mask puts -inf (above the diagonal of
 * each [16,16] block) or at one place. oneDNN's softmax gets -inf right (0 there) and
 * a NaN or +inf wrong: a masked run stays on its primitive, the others take the
 * reference kernels, and the plan's summary counts those runs. Before, every masked
 * run took the reference (a GPT-2 block's attention, batch 8: 0.34 ms instead of 0.04).
 * Each case equals the reference run, NaN for NaN. */
Test(dnnl, softmax_keeps_its_primitive_under_a_minus_inf_mask)
{
    static const struct {
        const char *name;
        float special;
        bool causal;  /* every position above the diagonal; else one */
        bool unit;    /* Softmax -> MatMul through the fusion pass */
        bool to_ref;  /* the runs take the reference kernels */
    } cases[] = {
        {"causal -inf mask", -INFINITY, true, false, false},
        {"causal -inf mask, softmax-matmul unit", -INFINITY, true, true, false},
        {"one NaN", NAN, false, false, true},
        {"one +inf", INFINITY, false, false, true},
        {"one NaN, softmax-matmul unit", NAN, false, true, true},
        {"one +inf, softmax-matmul unit", INFINITY, false, true, true},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        const char *what = cases[c].name;
        uint32_t seed = 29;
        gl_model *m = tu_model(13);
        gl_graph *g = m->graph;
        int64_t xd[4] = {8, 4, 16, 16}, vd[4] = {8, 4, 16, 32};
        gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, xd);
        gl_value *p = tu_node(g, "Softmax", "sm", 1, x)->outputs[0];
        gl_tensor *in[2] = {random_tensor(4, xd, &seed), NULL};
        size_t n_in = 1;
        if (cases[c].unit) {
            gl_value *v = tu_input(g, "v", GL_DT_FLOAT, 4, vd);
            p = tu_node(g, "MatMul", "mm", 2, p, v)->outputs[0];
            in[n_in++] = random_tensor(4, vd, &seed);
        }
        tu_output(g, p);
        float *xp = gl_tensor_make_writable(in[0]);
        for (int64_t r = 0; r < 8 * 4 * 16; r++)
            for (int64_t col = 0; col < 16; col++)
                if (cases[c].causal ? col > r % 16 : r == 37 && col == 5)
                    xp[r * 16 + col] = cases[c].special;
        gl_pipeline *pl = NULL;
        const gl_model *run = m;
        if (cases[c].unit) {
            pl = tu_passes(m, "toposort,shape-inference,fusion", what);
            run = pl->steps[pl->n_steps - 1].model;
        }
        gl_tensor *got = NULL, *want = NULL;
        gl_exec *dn = tu_exec_run(run, "dnnl", NULL, in, n_in, &got, 1, what);
        gl_exec *ref = tu_exec_run(run, "ref", NULL, in, n_in, &want, 1, what);
        gl_compare r;
        gl_compare_tensors(got, want, RTOL, ATOL, &r);
        char line[256];
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok && r.nan_mismatch == 0, "%s: dnnl vs ref: %s", what, line);
        char *plan = plan_text(dn);
        expect_on_dnnl(plan, cases[c].unit ? "FusedSoftmaxMatMul_1" : "sm", what);
        free(plan);
        char summary[512];
        gl_exec_summary(dn, summary, sizeof(summary));
        bool to_ref = strstr(summary, "on the reference kernels for a NaN") != NULL;
        cr_expect(to_ref == cases[c].to_ref, "%s: expected the run %s the reference kernels; "
                  "the plan says '%s'", what, cases[c].to_ref ? "on" : "off", summary);
        gl_tensor_free(got);
        gl_tensor_free(want);
        gl_exec_free(dn);
        gl_exec_free(ref);
        for (size_t i = 0; i < n_in; i++)
            gl_tensor_free(in[i]);
        if (pl)
            gl_pipeline_free(pl); /* it took m */
        else
            gl_model_free(m);
    }
}

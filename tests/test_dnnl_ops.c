/* test_dnnl_ops.c — the oneDNN primitives for normalization, softmax, reductions, n-ary
 * ops, PRelu, Resize, ConvTranspose, Transpose, graphlab's channels-last ops and its
 * FusedMatMul, against the reference kernels.
 *
 * Each row is one node (named "op") with its attributes and inputs, run under the layout
 * policies the row names: 'p' plain, 'n' nhwc, 'b' blocked (nChw16c or nChw8c, as the
 * CPU has). An input of kind 'X' reaches the node through a 1x1 Conv, so under nhwc and
 * blocked it arrives in that layout. The model runs on the reference backend and on
 * dnnl; every output must agree (rtol 1e-4, atol 1e-5 unless the row says otherwise), and
 * the plan must show the node where the row expects it:
 *   DN      on dnnl with a vectorized oneDNN kernel (the implementation names no "ref");
 *   DN_REF  on dnnl with what oneDNN calls its reference code, accepted (Concat, Sum:
 *           a reorder per input), the note saying why;
 *   REF     on the reference kernel, the plan's note naming the reason (`why`);
 *   DN512   DN where oneDNN runs avx512_core kernels, else REF for want of one (LRN on
 *           nhwc has no AVX2 kernel: try ONEDNN_MAX_CPU_ISA=AVX2);
 *   VIEW    on dnnl as a view of its input's bytes: no primitive, no copy.
 * `then` puts a unary op after the node (its output is the graph's): what reads the output
 * may decide the node's layout. A second run must build nothing and reorder no constant
 * (the weight cache).
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#define TU_CASE_SHORTHANDS
#include "exec/compare.h"
#include "exec/exec.h"
#include "exec/dnnl/dn_avx2.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-4
#define ATOL 1e-5

typedef enum { DN, DN_REF, REF, DN512, VIEW } where_run;

/* An input of the node: 0 ends the list.
 *   'x' graph input, random      'X' graph input, random, through a 1x1 Conv first
 *   's' graph input, random with -0, NaN, +Inf and -Inf planted (tu_with_specials)
 *   'S' the same through a 1x1 Conv first (it spreads a NaN or an infinity over the
 *       channels of its pixel)
 *   'y' graph input, positive    'I' int64 graph input of v[]
 *   'c' constant, random         'p' constant, random and positive (variances)
 *   'i' int64 constant of v[]    'f' float constant of v[]
 *   'e' empty float constant     'o' omitted */
typedef struct in_spec {
    char kind;
    int rank;
    int64_t dims[6];
    int n;
    double v[8];
} in_spec;

typedef struct op_case {
    const char *name, *op;
    int opset;
    const char *layouts;
    tu_attr attrs[6];
    in_spec in[6];
    where_run expect;
    const char *why;     /* REF, DN_REF: a part of the plan's note */
    const char *not_why; /* what the plan's note must not say */
    bool keeps;          /* the output stays in the layout input 0 arrives in */
    const char *out;     /* the node's output layout, when given ("plain") */
    const char *then;    /* a unary op reading output 0 (NULL: none) */
    double rtol, atol;   /* 0: RTOL, ATOL */
    int n_out;           /* outputs the node has (0: 1) */
    const char *impl_has; /* a part of the plan's implementation name (NULL: any) */
    const char *impl_not; /* what it must not contain */
    const char *avx2_impl; /* a part of it on a CPU without AVX-512 (NULL: no check) */
    const char *native_on_avx512; /* run_cases_avx2: the layouts ('n', 'b', 'p' as in
                                     `layouts`) in which impl_has holds on AVX-512 too */
    bool ref_on_avx512;    /* run_cases_avx2: oneDNN's reference code on AVX-512 (the
                              channels fill no whole blocks of 16 there) */
} op_case;

#define IN(kind_, rank_, dims_) {.kind = (kind_), .rank = (rank_), .dims = dims_}
#define VALS(kind_, rank_, dims_, ...)                                                     \
    {                                                                                      \
        .kind = (kind_), .rank = (rank_), .dims = dims_,                                   \
        .n = (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), .v = {__VA_ARGS__}   \
    }
#define OMITTED {.kind = 'o'}
#define EMPTY_F {.kind = 'e', .rank = 1, .dims = {0}}

/* ---- building and running one row ------------------------------------------------------- */

typedef struct built {
    gl_model *m;
    gl_tensor *in[6]; /* graph inputs, in order */
    size_t n_in;
} built;

static gl_value *const_value(gl_graph *g, const char *name, const in_spec *s, uint32_t *seed)
{
    gl_tensor *t;
    if (s->kind == 'i') {
        int64_t v[8];
        for (int i = 0; i < s->n; i++)
            v[i] = (int64_t)s->v[i];
        t = tu_tensor_i64(s->rank, s->dims, v);
    } else if (s->kind == 'f' || s->kind == 'e') {
        float v[8];
        for (int i = 0; i < s->n; i++)
            v[i] = (float)s->v[i];
        t = tu_tensor_f32(s->rank, s->dims, s->kind == 'e' ? NULL : v);
    } else {
        t = tu_random_f32(s->rank, s->dims, seed);
        float *p = t->count ? gl_tensor_make_writable(t) : NULL;
        for (int64_t i = 0; s->kind == 'p' && i < t->count; i++)
            p[i] = p[i] < 0 ? 0.5f - p[i] : 0.5f + p[i]; /* in [0.5, 1.5) */
    }
    cr_assert(t, "%s: tensor", name);
    gl_value *v = gl_add_initializer(g, name, t);
    v->type.kind = GL_TYPE_TENSOR;
    v->type.dtype = t->dtype;
    gl_shape_set_rank(&v->type.shape, t->rank);
    for (int d = 0; d < t->rank; d++)
        v->type.shape.dims[d].value = t->dims[d];
    return v;
}

/* The model of row c: graph inputs and constants, 1x1 Convs before 'X' inputs, the node. */
static built build_row(const op_case *c, uint32_t *seed)
{
    built b = {.m = tu_model(c->opset)};
    gl_graph *g = b.m->graph;
    gl_value *ins[6] = {0};
    size_t n = 0;
    for (; n < GL_ARRAY_LEN(c->in) && c->in[n].kind; n++) {
        const in_spec *s = &c->in[n];
        char name[16];
        snprintf(name, sizeof(name), "in%zu", n);
        if (s->kind == 'o')
            continue;
        if (s->kind == 'I') {
            int64_t v[8];
            for (int i = 0; i < s->n; i++)
                v[i] = (int64_t)s->v[i];
            ins[n] = tu_input(g, name, GL_DT_INT64, s->rank, s->dims);
            b.in[b.n_in++] = tu_tensor_i64(s->rank, s->dims, v);
            continue;
        }
        if (!strchr("xXysS", s->kind)) {
            ins[n] = const_value(g, name, s, seed);
            continue;
        }
        ins[n] = tu_input(g, name, GL_DT_FLOAT, s->rank, s->dims);
        gl_tensor *t = b.in[b.n_in++] = tu_random_f32(s->rank, s->dims, seed);
        float *p = s->kind == 'y' && t->count ? gl_tensor_make_writable(t) : NULL;
        for (int64_t i = 0; p && i < t->count; i++)
            p[i] = p[i] < 0 ? 0.5f - p[i] : 0.5f + p[i];
        if (s->kind == 's' || s->kind == 'S') {
            b.in[b.n_in - 1] = tu_with_specials(t);
            gl_tensor_free(t);
        }
        if (s->kind == 'X' || s->kind == 'S') {
            int64_t wd[5] = {s->dims[1], s->dims[1], 1, 1, 1};
            in_spec w = {.kind = 'c', .rank = s->rank};
            memcpy(w.dims, wd, sizeof(wd));
            char wname[16], cname[16];
            snprintf(wname, sizeof(wname), "w%zu", n);
            snprintf(cname, sizeof(cname), "conv%zu", n);
            gl_node *conv = tu_node(g, "Conv", cname, 2, ins[n], const_value(g, wname, &w, seed));
            ins[n] = conv->outputs[0];
        }
    }
    /* "domain.Op" (graphlab.NhwcConv): an op of that domain, imported at version 1 */
    const char *dot = strchr(c->op, '.'), *op_type = dot ? dot + 1 : c->op;
    char domain[32] = "";
    if (dot) {
        snprintf(domain, sizeof(domain), "%.*s", (int)(dot - c->op), c->op);
        gl_model_set_opset(b.m, domain, 1);
    }
    gl_node *op = gl_add_node(g, op_type, domain, "op", ins, n,
                              (size_t)(c->n_out ? c->n_out : 1));
    tu_apply_attrs(op, c->attrs);
    gl_node *then = c->then ? tu_node(g, c->then, "then", 1, op->outputs[0]) : NULL;
    for (size_t i = 0; i < op->n_outputs; i++)
        tu_output(g, i == 0 && then ? then->outputs[0] : op->outputs[i]);
    return b;
}

static void free_built(built *b)
{
    for (size_t i = 0; i < b->n_in; i++)
        gl_tensor_free(b->in[i]);
    gl_model_free(b->m);
}

static void check_node(const op_case *c, const gl_plan_entry *en, const char *what)
{
    const char *impl = en->info.impl, *note = en->info.note;
    if (c->impl_has)
        cr_expect(strstr(impl, c->impl_has) != NULL, "%s: the implementation '%s' has no '%s'",
                  what, impl, c->impl_has);
    if (c->impl_not)
        cr_expect(strstr(impl, c->impl_not) == NULL, "%s: the implementation '%s' has '%s'",
                  what, impl, c->impl_not);
    if (c->avx2_impl && !tu_cpu_has_avx512())
        cr_expect(strstr(impl, c->avx2_impl) != NULL, "%s: the implementation '%s' has no "
                  "'%s' (a CPU without AVX-512)", what, impl, c->avx2_impl);
    bool on_dnnl = strcmp(en->backend, "dnnl") == 0 && !en->fell_back;
    bool ours = strcmp(impl, "ref") == 0, theirs = !ours && strstr(impl, "ref") != NULL;
    where_run expect = c->expect;
    if (expect == DN512) {
        bool avx512 = tu_cpu_has_avx512();
        expect = avx512 ? DN : REF;
        if (!avx512)
            cr_expect(strstr(note, "reference code") != NULL, "%s: the note '%s'", what, note);
    }
    switch (expect) {
    case DN:
        cr_expect(on_dnnl && !ours && !theirs, "%s: expected a oneDNN kernel, got %s %s (%s)",
                  what, en->backend, impl, note);
        break;
    case DN_REF:
        cr_expect(on_dnnl && theirs, "%s: expected oneDNN's reference code, got %s %s (%s)",
                  what, en->backend, impl, note);
        break;
    case VIEW:
        cr_expect(on_dnnl && strcmp(impl, "view") == 0, "%s: expected a view, got %s %s (%s)",
                  what, en->backend, impl, note);
        break;
    case REF:
    case DN512:
        cr_expect(!on_dnnl || ours, "%s: expected the reference kernel, got %s %s (%s)", what,
                  en->backend, impl, note);
        break;
    }
    if (c->why)
        cr_expect(strstr(note, c->why) != NULL, "%s: the note '%s' does not say '%s'", what,
                  note, c->why);
    if (c->not_why)
        cr_expect(strstr(note, c->not_why) == NULL, "%s: the note '%s' says '%s'", what, note,
                  c->not_why);
    if (c->out)
        cr_expect(strcmp(en->info.out_layouts, c->out) == 0, "%s: output layout %s, expected %s",
                  what, en->info.out_layouts, c->out);
    if (c->keeps && expect != REF) {
        /* "nhwc -> nhwc": what input 0 arrives in is what the output leaves in. */
        const char *comma = strchr(en->info.in_layouts, ',');
        size_t len = comma ? (size_t)(comma - en->info.in_layouts) : strlen(en->info.in_layouts);
        cr_expect(strncmp(en->info.in_layouts, en->info.out_layouts, len) == 0 &&
                      en->info.out_layouts[len] == '\0',
                  "%s: layouts %s -> %s: the output leaves the input's layout", what,
                  en->info.in_layouts, en->info.out_layouts);
    }
}

static void check_entry(const op_case *c, const gl_exec *e, const char *what)
{
    const gl_plan_entry *en = tu_plan_entry(e, "op", -1);
    cr_assert_not_null(en, "%s: no plan entry", what);
    check_node(c, en, what);
}

static void run_case(const op_case *c, uint32_t *seed)
{
    for (const char *p = c->layouts; *p; p++) {
        char what[160];
        snprintf(what, sizeof(what), "%s %s (%s)", c->op, c->name, tu_layout_name(*p));
        built b = build_row(c, seed);
        size_t n_out = b.m->graph->n_outputs;
        gl_tensor *want[4] = {0}, *got[4] = {0};
        gl_exec *ref = tu_exec_run(b.m, "ref", NULL, b.in, b.n_in, want, n_out, what);
        gl_exec *dn = tu_exec_run(b.m, "dnnl", tu_layout_name(*p), b.in, b.n_in, got, n_out, what);
        for (size_t i = 0; i < n_out; i++) {
            gl_compare r;
            gl_compare_tensors(got[i], want[i], c->rtol ? c->rtol : RTOL,
                               c->atol ? c->atol : ATOL, &r);
            char line[256];
            gl_compare_format(&r, line, sizeof(line));
            cr_expect(r.ok, "%s: output %zu, dnnl vs ref: %s", what, i, line);
            gl_tensor_free(got[i]);
        }
        op_case here = *c; /* run_cases_avx2's rows: graphlab's kernel in some layouts */
        if (c->native_on_avx512 && !strchr(c->native_on_avx512, *p))
            here.impl_has = NULL, here.impl_not = "graphlab";
        check_entry(&here, dn, what);
        if (getenv("GL_TEST_PLAN")) { /* to see every plan while writing rows */
            fprintf(stderr, "== %s\n", what);
            gl_exec_print_plan(dn, stderr);
        }
        /* Again: nothing is built and no constant reordered a second time. */
        tu_exec_rerun_cached(dn, (const gl_tensor *const *)b.in, b.n_in, got, n_out, what);
        for (size_t i = 0; i < n_out; i++) {
            gl_tensor_free(got[i]);
            gl_tensor_free(want[i]);
        }
        gl_exec_free(ref);
        gl_exec_free(dn);
        free_built(&b);
    }
}

static void run_cases(const op_case *cases, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i], &seed);
}

/* ---- normalization ------------------------------------------------------------------ */

#define BN_PARAMS(c)                                                                       \
    IN('c', 1, D(c)), IN('c', 1, D(c)), IN('c', 1, D(c)), IN('p', 1, D(c))

static const op_case norm_cases[] = {
    {"4-D, 24 channels", "BatchNormalization", 15, "pnb", {AF("epsilon", 1e-3f)},
     {IN('X', 4, D(2, 24, 5, 7)), BN_PARAMS(24)}, .keeps = true},
    {"opset 9, 19 channels, odd spatial", "BatchNormalization", 9, "pnb", {{0}},
     {IN('X', 4, D(1, 19, 9, 3)), BN_PARAMS(19)}, .keeps = true},
    {"opset 7, 2-D", "BatchNormalization", 7, "p", {{0}}, {IN('x', 2, D(6, 40)), BN_PARAMS(40)}, .expect = DN},
    {"3-D: a 4-D view", "BatchNormalization", 14, "p", {{0}},
     {IN('x', 3, D(2, 5, 33)), BN_PARAMS(5)}, .expect = DN},
    {"5-D, 32 channels", "BatchNormalization", 14, "pnb", {{0}},
     {IN('X', 5, D(1, 32, 3, 4, 5)), BN_PARAMS(32)}, .keeps = true},
    /* ndhwc with 17 channels: reference code in oneDNN, so the plain 4-D view instead */
    {"5-D, 17 channels", "BatchNormalization", 14, "pnb", {{0}},
     {IN('X', 5, D(1, 17, 3, 4, 5)), BN_PARAMS(17)}, .expect = DN},
    {"rank 6: a 4-D view", "BatchNormalization", 14, "p", {{0}},
     {IN('x', 6, D(2, 3, 2, 2, 3, 2)), BN_PARAMS(3)}, .expect = DN},
    {"training_mode=1", "BatchNormalization", 15, "p", {AI("training_mode", 1)},
     {IN('x', 4, D(2, 3, 4, 4)), BN_PARAMS(3)}, .expect = REF, .why = "training_mode=1"},
    {"opset 7 spatial=0", "BatchNormalization", 7, "p", {AI("spatial", 0)},
     {IN('x', 3, D(2, 3, 4)), IN('c', 2, D(3, 4)), IN('c', 2, D(3, 4)), IN('c', 2, D(3, 4)),
      IN('p', 2, D(3, 4))},
     .expect = REF, .why = "spatial=0"},

    {"N=1 in its layout", "InstanceNormalization", 6, "pnb", {AF("epsilon", 1e-4f)},
     {IN('X', 4, D(1, 20, 6, 5)), IN('c', 1, D(20)), IN('c', 1, D(20))}, .keeps = true,
     .rtol = 1e-3, .atol = 1e-4},
    {"N=3: [1, N*C] view", "InstanceNormalization", 6, "pn", {{0}},
     {IN('X', 4, D(3, 5, 7, 6)), IN('c', 1, D(5)), IN('c', 1, D(5))}, .rtol = 1e-3,
     .atol = 1e-4},
    {"3-D, scale as a graph input", "InstanceNormalization", 6, "p", {{0}},
     {IN('x', 3, D(2, 4, 50)), IN('x', 1, D(4)), IN('c', 1, D(4))}, .rtol = 1e-3, .atol = 1e-4},

    {"axis -1 (transformer)", "LayerNormalization", 17, "p", {{0}},
     {IN('x', 3, D(2, 7, 48)), IN('c', 1, D(48)), IN('c', 1, D(48))}, .rtol = 1e-3,
     .atol = 1e-4},
    {"axis 1 of 4-D, no B", "LayerNormalization", 17, "pn", {AI("axis", 1)},
     {IN('X', 4, D(2, 6, 3, 5)), IN('c', 3, D(6, 3, 5))}, .rtol = 1e-3, .atol = 1e-4},
    {"axis -2, Scale with leading 1s", "LayerNormalization", 17, "p", {AI("axis", -2)},
     {IN('x', 3, D(3, 4, 5)), IN('c', 3, D(1, 4, 5)), IN('c', 2, D(4, 5))}, .rtol = 1e-3,
     .atol = 1e-4},
    {"axis 0", "LayerNormalization", 17, "p", {AI("axis", 0)},
     {IN('x', 2, D(3, 8)), IN('c', 2, D(3, 8)), IN('c', 2, D(3, 8))}, .rtol = 1e-3,
     .atol = 1e-4},
    {"Scale broadcasting within the normalized dims", "LayerNormalization", 17, "p", {{0}},
     {IN('x', 3, D(2, 3, 8)), IN('c', 1, D(1))}, .expect = REF, .why = "Scale or B"},
    {"Mean output asked for", "LayerNormalization", 17, "p", {{0}},
     {IN('x', 2, D(3, 8)), IN('c', 1, D(8))}, .expect = REF, .why = "Mean", .n_out = 2},
    {"graphlab's at opset 13 (the patterns pass's)", "graphlab.LayerNormalization", 13, "p",
     {AF("epsilon", 1e-5f)},
     {IN('x', 3, D(16, 1, 128)), IN('c', 1, D(128)), IN('c', 1, D(128))}, .rtol = 1e-3,
     .atol = 1e-4},
    {"graphlab's, Mean output asked for", "graphlab.LayerNormalization", 13, "p", {{0}},
     {IN('x', 2, D(3, 8)), IN('c', 1, D(8))}, .expect = REF, .why = "Mean", .n_out = 2},

    {"size 5, beta 0.75", "LRN", 13, "pn", {AI("size", 5), AF("alpha", 2e-4f), AF("bias", 2.0f)},
     {IN('X', 4, D(2, 24, 5, 7))}, .keeps = true},
    {"size 3: nhwc", "LRN", 13, "pn", {AI("size", 3)}, {IN('X', 4, D(1, 19, 6, 5))},
     .expect = DN512},
    {"beta 0.6: oneDNN's reference code", "LRN", 13, "pn", {AI("size", 5), AF("beta", 0.6f)},
     {IN('X', 4, D(1, 19, 6, 5))}, .expect = REF, .why = "reference code"},
    {"blocked: nhwc instead", "LRN", 13, "b", {AI("size", 3)}, {IN('X', 4, D(1, 32, 4, 4))},
     .expect = DN512},
    {"even size", "LRN", 13, "p", {AI("size", 4)}, {IN('x', 4, D(1, 13, 3, 4))}, .expect = REF,
     .why = "even size"},
};

Test(dnnl_ops, normalization)
{
    run_cases(norm_cases, GL_ARRAY_LEN(norm_cases), 11);
}

/* ---- activations the patterns pass makes, and ONNX's Gelu-20: eltwise primitives ------- */

static const op_case activation_cases[] = {
    {"graphlab Gelu on a transformer's FFN [16,512]", "graphlab.Gelu", 13, "p", {{0}},
     {IN('x', 2, D(16, 512))}, .rtol = 1e-3, .atol = 1e-5},
    {"graphlab GeluTanh, 4-D in its layout", "graphlab.GeluTanh", 13, "pnb", {{0}},
     {IN('X', 4, D(1, 32, 16, 16))}, .keeps = true, .rtol = 1e-3, .atol = 1e-5,
     .avx2_impl = "graphlab:avx2 gelu_tanh"},
    {"graphlab Silu", "graphlab.Silu", 13, "p", {{0}}, {IN('x', 2, D(8, 1024))},
     .rtol = 1e-4, .atol = 1e-6, .avx2_impl = "graphlab:avx2 silu"},
    /* oneDNN 2.6's swish on AVX2 costs more than a convolution: graphlab's kernel, in spans
     * of 16384 floats over the threads (21780 here: two, the second ending in a tail of 4),
     * over nChw8c's padding too (20 channels in blocks of 8) */
    {"graphlab Silu of 20 channels, 4-D in its layout", "graphlab.Silu", 13, "pnb", {{0}},
     {IN('X', 4, D(1, 20, 33, 33))}, .keeps = true, .rtol = 1e-4, .atol = 1e-6,
     .avx2_impl = "graphlab:avx2 silu"},
    {"graphlab HardSwish", "graphlab.HardSwish", 13, "p", {{0}}, {IN('x', 2, D(8, 1024))},
     .expect = DN},
    {"ai.onnx Gelu-20", "Gelu", 20, "p", {{0}}, {IN('x', 2, D(16, 512))}, .rtol = 1e-3,
     .atol = 1e-5},
    {"ai.onnx Gelu-20, approximate tanh", "Gelu", 20, "p", {AS("approximate", "tanh")},
     {IN('x', 2, D(16, 512))}, .rtol = 1e-3, .atol = 1e-5, .avx2_impl = "graphlab:avx2"},
    /* oneDNN 2.6's tanh without AVX-512 is five times its logistic: graphlab's kernel,
     * 8 lanes at a time and a tail (7203 floats) */
    {"Tanh of 7 x 1029, graphlab's kernel on AVX2", "Tanh", 13, "p", {{0}},
     {IN('x', 2, D(7, 1029))}, .expect = DN, .avx2_impl = "graphlab:avx2 tanh"},
    {"graphlab GeluTanh of 7 x 1029", "graphlab.GeluTanh", 13, "p", {{0}},
     {IN('x', 2, D(7, 1029))}, .expect = DN, .rtol = 1e-3, .atol = 1e-5,
     .avx2_impl = "graphlab:avx2 gelu_tanh"},
    /* Two steps: oneDNN 2.6 takes the second as a post-op only on its reference kernel, so
     * it runs as a second jit primitive, in place. */
    {"HardSigmoid, two jit eltwise steps", "HardSigmoid", 6, "pnb",
     {AF("alpha", 0.25), AF("beta", 0.4)}, {IN('X', 4, D(1, 32, 16, 16))}, .expect = DN,
     .keeps = true},
    {"Selu, elu then linear", "Selu", 6, "p", {AF("alpha", 1.5), AF("gamma", 0.75)},
     {IN('x', 2, D(8, 1024))}, .expect = DN},
    {"graphlab Gelu below the threshold", "graphlab.Gelu", 13, "p", {{0}},
     {IN('x', 2, D(16, 128))}, .expect = REF, .why = "below the oneDNN threshold"},
};

Test(dnnl_ops, activations_of_the_patterns_pass)
{
    run_cases(activation_cases, GL_ARRAY_LEN(activation_cases), 12);
}

/* ---- reductions and softmax ------------------------------------------------------------ */

static const op_case reduce_cases[] = {
    {"SE block: axes [2, 3] of conv output", "ReduceMean", 13, "pnb",
     {AINTS("axes", 2, 2, 3)}, {IN('X', 4, D(2, 24, 7, 5))}, .expect = DN},
    {"global mean of nhwc, keepdims 0: a pooling", "ReduceMean", 13, "n",
     {AINTS("axes", 2, 2, 3), AI("keepdims", 0)}, {IN('X', 4, D(2, 40, 7, 5))}, .expect = DN,
     .why = "pooling", .out = "plain"},
    {"global max of ndhwc: a pooling", "ReduceMax", 13, "n", {AINTS("axes", 3, 2, 3, 4)},
     {IN('X', 5, D(1, 24, 3, 4, 5))}, .expect = DN, .why = "pooling"},
    /* blocked: converted to nhwc and pooled (as a reduction, 12x slower at batch 8) */
    {"global mean of plain: a reduction", "ReduceMean", 13, "p",
     {AINTS("axes", 2, -1, -2)}, {IN('X', 4, D(2, 40, 7, 5))}, .expect = DN,
     .not_why = "pooling"},
    {"global mean of blocked, keepdims 0: converted, a pooling", "ReduceMean", 13, "b",
     {AINTS("axes", 2, -1, -2), AI("keepdims", 0)}, {IN('X', 4, D(3, 40, 7, 5))},
     .expect = DN, .why = "converted to channels innermost", .out = "plain"},
    {"global max of blocked: converted, a pooling", "ReduceMax", 13, "b",
     {AINTS("axes", 2, 2, 3)}, {IN('X', 4, D(2, 24, 6, 6))}, .expect = DN,
     .why = "converted to channels innermost"},
    {"axes input [-1], keepdims 0", "ReduceMean", 18, "p", {AI("keepdims", 0)},
     {IN('x', 3, D(2, 7, 48)), VALS('i', 1, D(1), -1)}, .expect = DN},
    {"middle axis: oneDNN's reference code", "ReduceSum", 13, "p", {{0}},
     {IN('x', 3, D(3, 5, 7)), VALS('i', 1, D(1), 1)}, .expect = REF, .why = "reference code"},
    {"opset 11, every axis, keepdims 0", "ReduceSum", 11, "p", {AI("keepdims", 0)},
     {IN('x', 3, D(3, 5, 7))}, .expect = DN},
    {"axes [0, -1]", "ReduceMax", 13, "p", {AINTS("axes", 2, 0, -1)},
     {IN('x', 3, D(4, 3, 6))}, .expect = REF, .why = "reference code"},
    {"5-D axes input [2, 3, 4], keepdims 0", "ReduceMin", 18, "pn", {AI("keepdims", 0)},
     {IN('X', 5, D(1, 3, 4, 2, 5)), VALS('i', 1, D(3), 2, 3, 4)}, .expect = DN},
    {"last axis", "ReduceProd", 13, "p", {AINTS("axes", 1, -1)}, {IN('x', 2, D(5, 6))},
     .expect = DN},
    /* oneDNN 2.6 has the norms in its reference code only */
    {"L1 over axis 1", "ReduceL1", 13, "p", {AINTS("axes", 1, 1)}, {IN('x', 3, D(2, 9, 3))},
     .expect = REF, .why = "reference code"},
    {"L2 over the last axis", "ReduceL2", 18, "p", {{0}},
     {IN('x', 3, D(2, 9, 3)), VALS('i', 1, D(1), 2)}, .expect = REF, .why = "reference code"},
    {"SumSquare, keepdims 0", "ReduceSumSquare", 13, "p",
     {AINTS("axes", 1, 2), AI("keepdims", 0)}, {IN('x', 3, D(2, 9, 3))}, .expect = REF,
     .why = "reference code"},
    {"LogSum: sum and a log post-op", "ReduceLogSum", 13, "p", {AINTS("axes", 1, -1)},
     {IN('y', 3, D(2, 3, 10))}, .expect = DN},
    {"LogSumExp: no algorithm", "ReduceLogSumExp", 13, "p", {{0}}, {IN('x', 2, D(3, 4))},
     .expect = REF, .why = "no oneDNN primitive"},
    /* a few integers: the shape guard keys them by value (issue 22) */
    {"axes computed at run time", "ReduceSum", 13, "p", {{0}},
     {IN('x', 2, D(3, 4)), VALS('I', 1, D(1), 1)}, .expect = DN},
    {"noop_with_empty_axes", "ReduceSum", 13, "p", {AI("noop_with_empty_axes", 1)},
     {IN('x', 2, D(3, 4))}, .expect = REF, .why = "noop_with_empty_axes"},
    {"only dims of length 1", "ReduceMean", 13, "p", {AINTS("axes", 1, 1)},
     {IN('x', 3, D(3, 1, 4))}, .expect = REF, .why = "length 1"},

    {"opset 13, last axis", "Softmax", 13, "p", {{0}}, {IN('x', 3, D(2, 7, 48))}, .expect = DN},
    {"opset 13, axis 1 of plain NCHW", "Softmax", 13, "p", {AI("axis", 1)},
     {IN('X', 4, D(2, 19, 3, 5))}, .expect = REF, .why = "innermost"},
    {"opset 13, axis 1 of nhwc / blocked", "Softmax", 13, "nb", {AI("axis", 1)},
     {IN('X', 4, D(2, 19, 3, 5))}, .expect = DN, .keeps = true},
    {"opset 11, axis 1: 2-D coercion", "Softmax", 11, "pn", {{0}}, {IN('X', 4, D(2, 3, 4, 5))},
     .expect = DN},
    {"opset 11, default axis, 2-D", "LogSoftmax", 11, "p", {{0}}, {IN('x', 2, D(3, 33))},
     .expect = DN},
    {"opset 13, axis 0", "LogSoftmax", 13, "p", {AI("axis", 0)}, {IN('x', 3, D(3, 4, 5))},
     .expect = REF, .why = "innermost"},
    {"opset 13, axis -2", "Softmax", 13, "p", {AI("axis", -2)}, {IN('x', 3, D(3, 4, 5))},
     .expect = REF, .why = "innermost"},
};

Test(dnnl_ops, reductions_and_softmax)
{
    run_cases(reduce_cases, GL_ARRAY_LEN(reduce_cases), 12);
}
/* ---- Concat, Sum, Mean, Max, Min ---------------------------------------------------------- */

static const op_case nary_cases[] = {
    {"two conv outputs, 64 + 64 channels", "Concat", 13, "nb", {AI("axis", 1)},
     {IN('X', 4, D(1, 64, 5, 5)), IN('X', 4, D(1, 64, 5, 5))}, .expect = DN, .keeps = true,
     .then = "Relu"},
    {"32 + 16 + 8 channels", "Concat", 13, "n", {AI("axis", 1)},
     {IN('X', 4, D(2, 32, 3, 5)), IN('X', 4, D(2, 16, 3, 5)), IN('X', 4, D(2, 8, 3, 5))},
     .expect = DN, .keeps = true, .then = "Relu"},
    /* channels that are no multiple of the block: oneDNN's ref concat */
    {"20 + 12 + 4 channels, blocked", "Concat", 13, "b", {AI("axis", 1)},
     {IN('X', 4, D(2, 20, 3, 5)), IN('X', 4, D(2, 12, 3, 5)), IN('X', 4, D(2, 4, 3, 5))},
     .expect = DN_REF, .why = "reorder per input", .keeps = true, .then = "Relu"},
    {"a plain input joins the layout", "Concat", 13, "nb", {AI("axis", -3)},
     {IN('X', 4, D(1, 16, 4, 6)), IN('x', 4, D(1, 16, 4, 6))}, .expect = DN, .keeps = true,
     .then = "Relu"},
    {"5-D on the channels", "Concat", 13, "n", {AI("axis", 1)},
     {IN('X', 5, D(1, 8, 2, 3, 4)), IN('X', 5, D(1, 8, 2, 3, 4))}, .expect = DN, .keeps = true,
     .then = "Relu"},
    {"axis 2 of conv outputs", "Concat", 13, "n", {AI("axis", 2)},
     {IN('X', 4, D(1, 16, 3, 5)), IN('X', 4, D(1, 16, 4, 5))}, .expect = DN, .keeps = true,
     .then = "Relu"},
    /* the Concat feeds an op with no oneDNN row: plain, the reference kernel */
    {"mixed inputs feeding a Floor", "Concat", 13, "nb", {AI("axis", 1)},
     {IN('X', 4, D(1, 24, 7, 7)), IN('x', 4, D(1, 24, 7, 7))}, .expect = REF,
     .why = "plain concat", .then = "Floor"},
    /* ... or a Flatten (a oneDNN row: one reorder to plain), it stays in the layout */
    {"mixed inputs feeding a Flatten", "Concat", 13, "n", {AI("axis", 1)},
     {IN('X', 4, D(1, 24, 7, 7)), IN('x', 4, D(1, 24, 7, 7))}, .expect = DN, .keeps = true,
     .then = "Flatten"},
    {"plain policy", "Concat", 13, "p", {AI("axis", 1)},
     {IN('X', 4, D(1, 64, 5, 5)), IN('X', 4, D(1, 64, 5, 5))}, .expect = REF,
     .why = "plain concat", .then = "Relu"},
    {"rank 3, axis -1", "Concat", 13, "p", {AI("axis", -1)},
     {IN('x', 3, D(2, 3, 5)), IN('x', 3, D(2, 3, 1)), IN('c', 3, D(2, 3, 7))}, .expect = REF,
     .why = "plain concat"},
    {"an empty input", "Concat", 13, "p", {AI("axis", 0)},
     {IN('x', 2, D(0, 3)), IN('x', 2, D(2, 3))}, .expect = REF, .why = "non-empty"},

    {"3 conv outputs of 32 channels", "Sum", 13, "pnb", {{0}},
     {IN('X', 4, D(1, 32, 12, 12)), IN('X', 4, D(1, 32, 12, 12)), IN('X', 4, D(1, 32, 12, 12))},
     .expect = DN, .keeps = true},
    {"3 conv outputs of 20 channels, blocked", "Sum", 13, "b", {{0}},
     {IN('X', 4, D(1, 20, 9, 11)), IN('X', 4, D(1, 20, 9, 11)), IN('X', 4, D(1, 20, 9, 11))},
     .expect = DN_REF, .why = "sum", .keeps = true},
    {"3 of one shape", "Mean", 13, "p", {{0}},
     {IN('x', 4, D(2, 3, 40, 20)), IN('x', 4, D(2, 3, 40, 20)), IN('c', 4, D(2, 3, 40, 20))},
     .expect = DN},
    {"3 of one shape: a binary chain", "Max", 13, "pn", {{0}},
     {IN('X', 4, D(2, 16, 12, 12)), IN('x', 4, D(2, 16, 12, 12)), IN('X', 4, D(2, 16, 12, 12))},
     .expect = DN, .keeps = true},
    {"4, broadcasting per channel and a scalar", "Min", 13, "pn", {{0}},
     {IN('X', 4, D(2, 24, 9, 11)), IN('c', 3, D(24, 1, 1)), IN('x', 1, D(1)),
      IN('X', 4, D(2, 24, 9, 11))},
     .expect = DN, .keeps = true},
    {"3, broadcasting", "Sum", 8, "p", {{0}},
     {IN('x', 3, D(6, 1, 30)), IN('x', 3, D(6, 40, 30)), IN('x', 2, D(40, 1))}, .expect = DN},
    /* a post-op operand broadcast over a middle dim: oneDNN's reference code */
    {"3, broadcasting", "Mean", 13, "p", {{0}},
     {IN('x', 3, D(6, 40, 30)), IN('x', 1, D(30)), IN('x', 3, D(6, 1, 30))}, .expect = REF,
     .why = "post-op operand"},
    {"one input: a copy", "Sum", 13, "p", {{0}}, {IN('x', 2, D(70, 70))}, .expect = DN},
    {"two inputs: the binary row", "Max", 13, "p", {{0}},
     {IN('x', 2, D(70, 70)), IN('x', 1, D(70))}, .expect = DN},
    {"small tensors", "Sum", 13, "p", {{0}},
     {IN('x', 2, D(3, 4)), IN('x', 2, D(3, 4)), IN('x', 2, D(3, 4))}, .expect = REF,
     .why = "threshold"},
    {"no input has the output's shape", "Sum", 13, "p", {{0}},
     {IN('x', 2, D(300, 1)), IN('x', 2, D(1, 40)), IN('x', 2, D(1, 1))}, .expect = REF,
     .why = "output's shape"},
};

Test(dnnl_ops, concat_and_variadic)
{
    run_cases(nary_cases, GL_ARRAY_LEN(nary_cases), 13);
}

/* ---- PRelu ------------------------------------------------------------------------------- */

static const op_case prelu_cases[] = {
    {"per channel [C, 1, 1]", "PRelu", 16, "pnb", {{0}},
     {IN('X', 4, D(2, 24, 9, 11)), IN('c', 3, D(24, 1, 1))}, .expect = DN, .keeps = true},
    {"opset 6: a [C] slope is per channel", "PRelu", 6, "pn", {{0}},
     {IN('X', 4, D(2, 19, 12, 11)), IN('c', 1, D(19))}, .expect = DN, .keeps = true},
    {"opset 16: a [W] slope runs along W", "PRelu", 16, "p", {{0}},
     {IN('x', 4, D(2, 19, 12, 11)), IN('c', 1, D(11))}, .expect = REF, .why = "slope"},
    {"a constant scalar slope: leaky relu", "PRelu", 9, "pnb", {{0}},
     {IN('X', 4, D(2, 19, 12, 11)), IN('c', 1, D(1))}, .expect = DN, .keeps = true},
    {"a scalar slope as a graph input", "PRelu", 16, "p", {{0}},
     {IN('x', 4, D(2, 19, 12, 11)), IN('x', 1, D(1))}, .expect = REF, .why = "slope"},
    {"full-shape slope, graph input", "PRelu", 16, "p", {{0}},
     {IN('x', 3, D(4, 40, 30)), IN('x', 3, D(4, 40, 30))}, .expect = DN},
    {"2-D per column", "PRelu", 16, "p", {{0}}, {IN('x', 2, D(80, 64)), IN('c', 1, D(64))},
     .expect = DN},
    {"small", "PRelu", 16, "p", {{0}}, {IN('x', 2, D(3, 4)), IN('c', 1, D(4))},
     .expect = REF, .why = "threshold"},
};

Test(dnnl_ops, prelu)
{
    run_cases(prelu_cases, GL_ARRAY_LEN(prelu_cases), 14);
}

/* ---- binary ops with a broadcast operand (dn_binary.c) ------------------------------------ */

/* A squeeze-and-excitation scale [N, C, 1, 1] over the activations: oneDNN 2.6 broadcasts
 * it over nChw16c in its jit kernel only when it is read blocked too (issue 22: plain, it
 * fell to the reference code, 16 of efficientnet_b0's nodes). */
static const op_case binary_cases[] = {
    {"SE scale of batch 2, both conv outputs", "Mul", 13, "nb", {{0}},
     {IN('X', 4, D(2, 32, 9, 11)), IN('X', 4, D(2, 32, 1, 1))}, .expect = DN, .keeps = true},
    {"SE scale of batch 1, the scale a plain graph input", "Mul", 13, "nb", {{0}},
     {IN('X', 4, D(1, 32, 7, 7)), IN('x', 4, D(1, 32, 1, 1))}, .expect = DN, .keeps = true},
    {"24 channels (off the block), scale first: it commutes", "Mul", 13, "nb", {{0}},
     {IN('X', 4, D(2, 24, 1, 1)), IN('X', 4, D(2, 24, 6, 5))}, .expect = DN, .keeps = false},
    {"per-sample Add of batch 3", "Add", 13, "nb", {{0}},
     {IN('X', 4, D(3, 48, 5, 5)), IN('x', 4, D(3, 48, 1, 1))}, .expect = DN, .keeps = true},
    {"Div by a positive [N, C, 1, 1]", "Div", 13, "nb", {{0}},
     {IN('X', 4, D(2, 32, 6, 6)), IN('y', 4, D(2, 32, 1, 1))}, .expect = DN, .keeps = true},
};

Test(dnnl_ops, binary_broadcasts)
{
    run_cases(binary_cases, GL_ARRAY_LEN(binary_cases), 15);
}

/* ---- ConvTranspose, Transpose ------------------------------------------------------------ */

static const op_case deconv_cases[] = {
    {"3x3 stride 2 pads 1 output_padding 1, bias", "ConvTranspose", 11, "pnb",
     {AINTS("strides", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1),
      AINTS("output_padding", 2, 1, 1)},
     {IN('X', 4, D(1, 8, 5, 7)), IN('c', 4, D(8, 6, 3, 3)), IN('c', 1, D(6))}, .expect = DN},
    /* oneDNN 2.6 adds a deconvolution's own bias in a reference loop: a constant bias is
     * a jit binary add after it (dn_deconv.c); one that may change per run stays inside. */
    {"2x2 stride 2, constant bias: added after", "ConvTranspose", 11, "pnb",
     {AINTS("strides", 2, 2, 2)},
     {IN('X', 4, D(1, 16, 9, 9)), IN('c', 4, D(16, 32, 2, 2)), IN('c', 1, D(32))}, .expect = DN,
     .impl_has = " + jit"},
    /* one output channel: plain, on oneDNN's gemm kernel, whatever the policy, its bias
     * added after it (oneDNN 2.6's binary adds a [1,1,1,1] bias in place over a
     * one-channel nChw16c destination not at all on AVX-512: a blocked destination would
     * fail here) */
    {"4x4 stride 2 pads 1 to one channel, constant bias, a batch of 2", "ConvTranspose", 11,
     "pnb", {AINTS("strides", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(2, 16, 12, 12)), IN('c', 4, D(16, 1, 4, 4)), IN('c', 1, D(1))}, .expect = DN,
     .impl_has = "gemm", .out = "plain"},
    {"bias as a graph input: inside the deconvolution", "ConvTranspose", 11, "pnb",
     {AINTS("strides", 2, 2, 2)},
     {IN('X', 4, D(1, 16, 9, 9)), IN('c', 4, D(16, 8, 2, 2)), IN('x', 1, D(8))}, .expect = DN,
     .impl_not = " + "},
    {"group 2, 19 channels out", "ConvTranspose", 11, "pnb", {AI("group", 2)},
     {IN('X', 4, D(2, 8, 5, 5)), IN('c', 4, D(8, 19, 3, 3))}, .expect = DN},
    {"depthwise, stride 2", "ConvTranspose", 11, "pnb",
     {AI("group", 16), AINTS("strides", 2, 2, 2)},
     {IN('X', 4, D(1, 16, 6, 6)), IN('c', 4, D(16, 1, 3, 3)), IN('c', 1, D(16))}, .expect = DN},
    {"dilations 2, asymmetric pads", "ConvTranspose", 11, "pn",
     {AINTS("dilations", 2, 2, 2), AINTS("pads", 4, 0, 1, 2, 0)},
     {IN('X', 4, D(1, 3, 6, 5)), IN('c', 4, D(3, 4, 3, 2))}, .expect = DN},
    {"output_shape", "ConvTranspose", 11, "pn",
     {AINTS("strides", 2, 2, 2), AINTS("output_shape", 2, 10, 14)},
     {IN('X', 4, D(1, 4, 5, 7)), IN('c', 4, D(4, 5, 3, 3))}, .expect = DN},
    {"SAME_UPPER stride 2", "ConvTranspose", 11, "pn",
     {AS("auto_pad", "SAME_UPPER"), AINTS("strides", 2, 2, 2)},
     {IN('X', 4, D(1, 4, 5, 6)), IN('c', 4, D(4, 3, 4, 3))}, .expect = DN},
    {"SAME_LOWER stride 3", "ConvTranspose", 11, "p",
     {AS("auto_pad", "SAME_LOWER"), AINTS("strides", 2, 3, 3)},
     {IN('x', 4, D(1, 4, 5, 6)), IN('c', 4, D(4, 3, 4, 4))}, .expect = DN},
    {"VALID ignores pads", "ConvTranspose", 11, "p",
     {AS("auto_pad", "VALID"), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('x', 4, D(1, 4, 5, 6)), IN('c', 4, D(4, 3, 3, 3))}, .expect = DN},
    {"1-D stride 3", "ConvTranspose", 11, "pn", {AINTS("strides", 1, 3)},
     {IN('X', 3, D(2, 4, 9)), IN('c', 3, D(4, 3, 5)), IN('c', 1, D(3))}, .expect = DN},
    {"3-D", "ConvTranspose", 11, "pnb", {AINTS("strides", 3, 2, 1, 2)},
     {IN('X', 5, D(1, 4, 3, 4, 5)), IN('c', 5, D(4, 2, 2, 3, 3))}, .expect = DN},
    {"weights as a graph input", "ConvTranspose", 11, "pn", {{0}},
     {IN('X', 4, D(1, 4, 5, 6)), IN('x', 4, D(4, 3, 3, 3))}, .expect = DN},
    {"output_shape beyond the kernel's reach", "ConvTranspose", 11, "p",
     {AINTS("output_shape", 2, 9, 9)}, {IN('x', 4, D(1, 4, 5, 5)), IN('c', 4, D(4, 3, 3, 3))},
     .expect = REF, .why = "negative pads"},

    {"NCHW to NHWC", "Transpose", 13, "p", {AINTS("perm", 4, 0, 2, 3, 1)},
     {IN('x', 4, D(2, 3, 40, 20))}, .expect = DN},
    {"a conv output to NHWC", "Transpose", 13, "pnb", {AINTS("perm", 4, 0, 2, 3, 1)},
     {IN('X', 4, D(1, 19, 15, 17))}, .expect = DN},
    {"default: reversed", "Transpose", 13, "p", {{0}}, {IN('x', 3, D(30, 20, 10))},
     .expect = DN},
    {"attention heads", "Transpose", 13, "p", {AINTS("perm", 4, 0, 2, 1, 3)},
     {IN('x', 4, D(1, 32, 12, 16))}, .expect = DN},
    {"channel shuffle", "Transpose", 13, "p", {AINTS("perm", 5, 0, 2, 1, 3, 4)},
     {IN('x', 5, D(1, 2, 29, 9, 9))}, .expect = DN},
    {"rank 6", "Transpose", 13, "p", {AINTS("perm", 6, 5, 4, 0, 1, 3, 2)},
     {IN('x', 6, D(2, 3, 4, 5, 6, 8))}, .expect = DN},
    {"identity, 1-D", "Transpose", 13, "p", {{0}}, {IN('x', 1, D(5000))}, .expect = DN},
    {"small", "Transpose", 13, "p", {{0}}, {IN('x', 2, D(3, 4))}, .expect = REF,
     .why = "threshold"},
};

Test(dnnl_ops, convtranspose_and_transpose)
{
    run_cases(deconv_cases, GL_ARRAY_LEN(deconv_cases), 15);
}

/* ---- views: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice, Gather, Shape ---------- */

/* Under nhwc a view is kept when its readers take it (Floor: the executor converts once;
 * Relu: one reorder to dense nhwc), made dense once otherwise; under blocked only dims
 * of 1 come and go; what cannot be a view is one reorder (jit:uni). Plain inputs of
 * Reshape and the like are the reference kernel's (it shares the buffer). */
static const op_case view_cases[] = {
    {"split C of nhwc (the shuffle's first)", "Reshape", 13, "n", {{0}},
     {IN('X', 4, D(2, 38, 5, 7)), VALS('i', 1, D(5), 2, 2, 19, 5, 7)}, .expect = VIEW,
     .out = "adebc:view", .then = "Floor"},
    {"split C, read by a primitive", "Reshape", 13, "n", {{0}},
     {IN('X', 4, D(2, 38, 5, 7)), VALS('i', 1, D(5), 2, 2, 19, 5, 7)}, .expect = VIEW,
     .then = "Relu"},
    {"split C of nChw16c: one reorder", "Reshape", 13, "b", {{0}},
     {IN('X', 4, D(1, 38, 5, 7)), VALS('i', 1, D(5), 1, 2, 19, 5, 7)}, .expect = DN,
     .then = "Floor"},
    {"merge C with H (Flatten-like): one reorder", "Reshape", 13, "nb", {{0}},
     {IN('X', 4, D(2, 16, 5, 7)), VALS('i', 1, D(2), 2, -1)}, .expect = DN, .out = "plain",
     .then = "Floor"},
    {"shape computed at run time", "Reshape", 13, "n", {{0}},
     {IN('X', 4, D(1, 38, 5, 7)), VALS('I', 1, D(5), 0, 2, -1, 5, 7)}, .expect = VIEW,
     .then = "Floor"},
    {"plain input: the reference kernel shares", "Reshape", 13, "n", {{0}},
     {IN('x', 4, D(1, 38, 5, 7)), VALS('i', 1, D(2), 1, -1)}, .expect = REF, .why = "plain"},
    /* nhwc with H = W = 1 is plain row-major: an ordinary plain tensor */
    {"global pool output [N,C,1,1] to [N,C]", "Flatten", 13, "n", {{0}},
     {IN('X', 4, D(3, 40, 1, 1))}, .expect = REF, .why = "plain", .then = "Floor"},
    {"[N,C,1,1] of nChw16c: padded channels, one reorder", "Flatten", 13, "b", {{0}},
     {IN('X', 4, D(3, 40, 1, 1))}, .expect = DN, .then = "Floor"},
    {"axis 2 of nhwc: one reorder", "Flatten", 13, "n", {AI("axis", 2)},
     {IN('X', 4, D(2, 8, 3, 5))}, .expect = DN, .then = "Floor"},
    {"drop W of 1 of nhwc", "Squeeze", 13, "n", {{0}},
     {IN('X', 4, D(2, 24, 3, 1)), VALS('i', 1, D(1), 3)}, .expect = VIEW, .then = "Floor"},
    {"drop H, W of 1 of nChw16c: one reorder", "Squeeze", 13, "b", {{0}},
     {IN('X', 4, D(2, 24, 1, 1)), VALS('i', 1, D(2), 2, 3)}, .expect = DN, .then = "Floor"},
    {"a dim of 1 in front", "Unsqueeze", 13, "n", {{0}},
     {IN('X', 4, D(1, 19, 4, 6)), VALS('i', 1, D(1), 0)}, .expect = VIEW, .then = "Floor"},
    {"a dim of 1 in front of nChw16c: 5-D is not nCdhw16c, one reorder", "Unsqueeze", 13, "b",
     {{0}}, {IN('X', 4, D(1, 19, 4, 6)), VALS('i', 1, D(1), 0)}, .expect = DN, .then = "Floor"},
    {"opset 11 axes attribute", "Unsqueeze", 11, "n", {AINTS("axes", 1, 4)},
     {IN('X', 4, D(1, 19, 4, 6))}, .expect = VIEW, .then = "Relu"},

    {"channel half of nhwc", "Slice", 13, "n", {{0}},
     {IN('X', 4, D(2, 38, 5, 7)), VALS('i', 1, D(1), 19), VALS('i', 1, D(1), 38),
      VALS('i', 1, D(1), 1)},
     .expect = VIEW, .out = "nhwc:view", .then = "Relu"},
    {"channels, steps 3, read by the executor", "Slice", 13, "n", {{0}},
     {IN('X', 4, D(1, 38, 5, 7)), VALS('i', 1, D(1), 1), VALS('i', 1, D(1), 30),
      VALS('i', 1, D(1), 1), VALS('i', 1, D(1), 3)},
     .expect = VIEW, .then = "Floor"},
    {"H and W windows, starts at run time", "Slice", 13, "n", {{0}},
     {IN('X', 4, D(2, 16, 9, 8)), VALS('I', 1, D(2), 1, -6), VALS('i', 1, D(2), 7, 100),
      VALS('i', 1, D(2), 2, 3)},
     .expect = VIEW, .then = "Relu"},
    {"channels of nChw16c on the block", "Slice", 13, "b", {{0}},
     {IN('X', 4, D(1, 48, 5, 7)), VALS('i', 1, D(1), 16), VALS('i', 1, D(1), 48),
      VALS('i', 1, D(1), 1)},
     .expect = DN, .then = "Relu"},
    {"channels of nChw16c off the block", "Slice", 13, "b", {{0}},
     {IN('X', 4, D(1, 38, 5, 7)), VALS('i', 1, D(1), 3), VALS('i', 1, D(1), 20),
      VALS('i', 1, D(1), 1)},
     .expect = REF, .why = "no view", .then = "Relu"},
    {"negative step", "Slice", 13, "n", {{0}},
     {IN('X', 4, D(1, 8, 5, 7)), VALS('i', 1, D(1), -1), VALS('i', 1, D(1), -100),
      VALS('i', 1, D(1), 3), VALS('i', 1, D(1), -1)},
     .expect = REF, .why = "negative step"},
    {"opset 1 attributes", "Slice", 1, "n", {AINTS("starts", 1, 2), AINTS("ends", 1, 9),
                                              AINTS("axes", 1, 1)},
     {IN('X', 4, D(1, 12, 5, 7))}, .expect = VIEW, .then = "Relu"},

    {"channels of nhwc, 19 + 19", "Split", 13, "n", {AI("axis", 1)},
     {IN('X', 4, D(2, 38, 5, 7)), VALS('i', 1, D(2), 19, 19)}, .expect = VIEW, .n_out = 2},
    {"H of nhwc in three, opset 11", "Split", 11, "n", {AI("axis", 2)},
     {IN('X', 4, D(1, 16, 9, 7))}, .expect = VIEW, .n_out = 3},
    {"channels of nChw16c on the block", "Split", 13, "b", {AI("axis", 1)},
     {IN('X', 4, D(1, 48, 5, 7)), VALS('i', 1, D(2), 32, 16)}, .expect = VIEW, .n_out = 2},
    {"channels of nChw16c off the block", "Split", 13, "b", {AI("axis", 1)},
     {IN('X', 4, D(1, 38, 5, 7)), VALS('i', 1, D(2), 19, 19)}, .expect = REF, .why = "no view",
     .n_out = 2},
    {"nhwc to NHWC order: plain, a view", "Transpose", 13, "n", {AINTS("perm", 4, 0, 2, 3, 1)},
     {IN('X', 4, D(1, 19, 15, 17))}, .expect = VIEW, .out = "plain", .then = "Floor"},
    {"swap H and W of nhwc, read by a primitive", "Transpose", 13, "nb",
     {AINTS("perm", 4, 0, 1, 3, 2)}, {IN('X', 4, D(1, 19, 15, 17))}, .expect = DN, .then = "Relu"},
    /* Gather of one index: a window of its input, an ordinary tensor kept as a view, any
     * other one reorder into plain (attention's q, k and v read by products) */
    {"one image of nhwc, index [1]: a view", "Gather", 13, "n", {AI("axis", 0)},
     {IN('X', 4, D(3, 19, 5, 7)), VALS('i', 1, D(1), 0)}, .expect = VIEW, .then = "Relu"},
    {"the last image of nhwc, scalar -1: offset, one reorder to plain", "Gather", 13, "n",
     {AI("axis", 0)}, {IN('X', 4, D(3, 19, 5, 7)), VALS('i', 0, D(0), -1)}, .expect = DN,
     .out = "plain", .then = "Relu"},
    {"a channel of nhwc, scalar: strided, one reorder to plain", "Gather", 13, "n",
     {AI("axis", 1)}, {IN('X', 4, D(2, 19, 5, 7)), VALS('i', 0, D(0), 7)}, .expect = DN,
     .out = "plain", .then = "Floor"},
    {"a channel of nChw8c inside a block: the reference kernel", "Gather", 13, "b",
     {AI("axis", 1)}, {IN('X', 4, D(2, 19, 5, 7)), VALS('i', 0, D(0), 7)}, .expect = REF,
     .why = "no view", .then = "Floor"},
    {"the second image of nChw8c: one reorder to plain", "Gather", 13, "b", {AI("axis", 0)},
     {IN('X', 4, D(2, 19, 5, 7)), VALS('i', 0, D(0), 1)}, .expect = DN, .out = "plain",
     .then = "Relu"},
    {"W index at run time, axis -1", "Gather", 13, "n", {AI("axis", -1)},
     {IN('X', 4, D(2, 16, 5, 7)), VALS('I', 0, D(0), 4)}, .expect = DN, .out = "plain",
     .then = "Relu"},
    {"two indices: the reference kernel", "Gather", 13, "n", {AI("axis", 1)},
     {IN('X', 4, D(2, 19, 5, 7)), VALS('i', 1, D(2), 3, 1)}, .expect = REF,
     .why = "indices other than one integer", .then = "Relu"},
    {"Shape of nhwc: the header, not a copy", "Shape", 15, "nb", {{0}},
     {IN('X', 4, D(1, 19, 5, 7))}, .expect = REF, .why = "dims only"},
};

Test(dnnl_ops, views)
{
    run_cases(view_cases, GL_ARRAY_LEN(view_cases), 23);
}

/* ShuffleNet's block tail: two conv outputs joined, the channel shuffle (Reshape,
 * Transpose, Reshape), the halves sliced off for a Relu and a Conv; beside it a Transpose
 * that two primitives read. Each node is expected where the rule puts it (nhwc: views
 * but for one strided reorder; a view two primitives read is made dense once), and no
 * node converts an input to plain. */
typedef struct chain_expect {
    const char *node;
    where_run where;
    const char *out; /* output layout (NULL: not checked) */
} chain_expect;

static gl_node *node_with(gl_graph *g, const char *op, const char *name, const tu_attr *attrs,
                          size_t n, gl_value *a, gl_value *b)
{
    gl_node *nd = n == 1 ? tu_node(g, op, name, 1, a) : tu_node(g, op, name, 2, a, b);
    if (attrs)
        tu_apply_attrs(nd, attrs);
    return nd;
}

static gl_model *shuffle_model(int64_t n, int64_t half, int64_t h, int64_t w, uint32_t *seed)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *joined[2];
    for (int i = 0; i < 2; i++) {
        char name[16], wname[16];
        snprintf(name, sizeof(name), "x%d", i);
        snprintf(wname, sizeof(wname), "w%d", i);
        gl_value *x = tu_input(g, name, GL_DT_FLOAT, 4, (int64_t[]){n, half, h, w});
        in_spec ws = {.kind = 'c', .rank = 4, .dims = {half, half, 1, 1}};
        snprintf(name, sizeof(name), "conv%d", i);
        joined[i] = tu_node(g, "Conv", name, 2, x, const_value(g, wname, &ws, seed))->outputs[0];
    }
    gl_node *cat = tu_node(g, "Concat", "concat", 2, joined[0], joined[1]);
    tu_apply_attrs(cat, (tu_attr[]){AI("axis", 1), {0}});
    gl_value *s5 = tu_const_i64(g, "s5", 1, (int64_t[]){5}, (int64_t[]){n, 2, half, h, w});
    gl_value *s4 = tu_const_i64(g, "s4", 1, (int64_t[]){4}, (int64_t[]){n, 2 * half, h, w});
    gl_node *r1 = node_with(g, "Reshape", "reshape1", NULL, 2, cat->outputs[0], s5);
    gl_node *t = node_with(g, "Transpose", "transpose",
                           (tu_attr[]){AINTS("perm", 5, 0, 2, 1, 3, 4), {0}}, 1, r1->outputs[0],
                           NULL);
    gl_node *r2 = node_with(g, "Reshape", "reshape2", NULL, 2, t->outputs[0], s4);
    gl_value *ax = tu_const_i64(g, "ax", 1, (int64_t[]){1}, (int64_t[]){1});
    gl_value *bounds[3];
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "b%d", i);
        bounds[i] = tu_const_i64(g, name, 1, (int64_t[]){1}, (int64_t[]){i * half});
    }
    gl_value *sl[2];
    for (int i = 0; i < 2; i++) {
        char name[8];
        snprintf(name, sizeof(name), "slice%d", i);
        gl_value *ins[4] = {r2->outputs[0], bounds[i], bounds[i + 1], ax};
        sl[i] = gl_add_node(g, "Slice", "", name, ins, 4, 1)->outputs[0];
    }
    in_spec ws = {.kind = 'c', .rank = 4, .dims = {half, half, 1, 1}};
    tu_output(g, tu_node(g, "Relu", "relu", 1, sl[0])->outputs[0]);
    tu_output(g, tu_node(g, "Conv", "conv2", 2, sl[1], const_value(g, "w2", &ws, seed))
                     ->outputs[0]);
    gl_node *hw = node_with(g, "Transpose", "swap_hw",
                            (tu_attr[]){AINTS("perm", 4, 0, 1, 3, 2), {0}}, 1, cat->outputs[0],
                            NULL);
    tu_output(g, tu_node(g, "Relu", "relu_hw", 1, hw->outputs[0])->outputs[0]);
    tu_output(g, tu_node(g, "Sigmoid", "sigmoid_hw", 1, hw->outputs[0])->outputs[0]);
    return m;
}

Test(dnnl_ops, channel_shuffle_views)
{
    static const struct {
        char layout;
        chain_expect nodes[8];
    } rows[] = {
        {'n',
         {{"concat", DN, "nhwc"},
          {"reshape1", VIEW, "daebc:view"},
          {"transpose", VIEW, "daecb:view"},
          {"reshape2", DN, "nhwc"},
          {"slice0", VIEW, "nhwc:view"},
          {"slice1", VIEW, "nhwc:view"},
          {"swap_hw", DN, "nhwc"}}},
        {'b', {{"reshape1", DN, "plain"}, {"transpose", VIEW, NULL}, {"slice1", VIEW, NULL}}},
        {'p', {{"reshape1", REF, NULL}, {"transpose", VIEW, NULL}, {"reshape2", DN, "plain"}}},
    };
    uint32_t seed = 31;
    for (size_t r = 0; r < GL_ARRAY_LEN(rows); r++) {
        char what[64];
        snprintf(what, sizeof(what), "channel shuffle (%s)", tu_layout_name(rows[r].layout));
        gl_model *m = shuffle_model(1, 29, 9, 11, &seed);
        gl_tensor *in[2] = {tu_random_f32(4, (int64_t[]){1, 29, 9, 11}, &seed),
                            tu_random_f32(4, (int64_t[]){1, 29, 9, 11}, &seed)};
        gl_tensor *want[4] = {0}, *got[4] = {0};
        gl_exec *ref = tu_exec_run(m, "ref", NULL, in, 2, want, 4, what);
        gl_exec *dn = tu_exec_run(m, "dnnl", tu_layout_name(rows[r].layout), in, 2, got, 4, what);
        for (size_t i = 0; i < 4; i++) {
            gl_compare c;
            gl_compare_tensors(got[i], want[i], RTOL, ATOL, &c);
            char line[256];
            gl_compare_format(&c, line, sizeof(line));
            cr_expect(c.ok, "%s: output %zu, dnnl vs ref: %s", what, i, line);
        }
        for (size_t i = 0; i < GL_ARRAY_LEN(rows[r].nodes) && rows[r].nodes[i].node; i++) {
            const chain_expect *x = &rows[r].nodes[i];
            op_case c = {.name = x->node, .op = "", .expect = x->where, .out = x->out};
            const gl_plan_entry *en = tu_plan_entry(dn, x->node, -1);
            cr_assert_not_null(en, "%s: no entry %s", what, x->node);
            char node_what[96];
            snprintf(node_what, sizeof(node_what), "%s: %s", what, x->node);
            check_node(&c, en, node_what);
        }
        for (size_t i = 0; rows[r].layout == 'n' && i < gl_exec_plan_count(dn); i++)
            cr_expect(gl_exec_plan_at(dn, i)->conversions == 0, "%s: %s converts an input",
                      what, gl_exec_plan_at(dn, i)->node->name);
        for (size_t i = 0; i < 4; i++) {
            gl_tensor_free(got[i]);
            gl_tensor_free(want[i]);
        }
        gl_tensor_free(in[0]);
        gl_tensor_free(in[1]);
        gl_exec_free(ref);
        gl_exec_free(dn);
        gl_model_free(m);
    }
}

/* A Swin attention's q, k and v: the projection [windows, 49, 3*heads*dim] reshaped to
 * [windows, 49, 3, heads, dim], Transposed to [3, windows, heads, 49, dim] and Gathered at
 * 0, 1 and 2. The Transpose stays a view (its readers are the Gathers), each Gather is
 * one reorder of its third into plain (what the products read), the values the
 * reference's; Mul, Relu and Sigmoid stand for the readers. */
Test(dnnl_ops, attention_qkv_gathers)
{
    const int64_t win = 4, tok = 49, heads = 2, dim = 16;
    uint32_t seed = 41;
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 3, (int64_t[]){win, tok, 3 * heads * dim});
    gl_value *s5 = tu_const_i64(g, "s5", 1, (int64_t[]){5}, (int64_t[]){win, tok, 3, heads, dim});
    gl_node *r = node_with(g, "Reshape", "reshape", NULL, 2, x, s5);
    gl_node *t = node_with(g, "Transpose", "transpose",
                           (tu_attr[]){AINTS("perm", 5, 2, 0, 3, 1, 4), {0}}, 1, r->outputs[0],
                           NULL);
    static const char *const readers[] = {"Relu", "Sigmoid", "Floor"};
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "i%d", i);
        gl_value *idx = tu_const_i64(g, name, 0, NULL, (int64_t[]){i});
        snprintf(name, sizeof(name), "gather%d", i);
        gl_node *ga = node_with(g, "Gather", name, (tu_attr[]){AI("axis", 0), {0}}, 2,
                                t->outputs[0], idx);
        tu_output(g, tu_node(g, readers[i], readers[i], 1, ga->outputs[0])->outputs[0]);
    }
    gl_tensor *in[1] = {tu_random_f32(3, (int64_t[]){win, tok, 3 * heads * dim}, &seed)};
    gl_tensor *want[3] = {0}, *got[3] = {0};
    gl_exec *ref = tu_exec_run(m, "ref", NULL, in, 1, want, 3, "qkv");
    gl_exec *dn = tu_exec_run(m, "dnnl", "nhwc", in, 1, got, 3, "qkv");
    for (size_t i = 0; i < 3; i++) {
        gl_compare c;
        gl_compare_tensors(got[i], want[i], RTOL, ATOL, &c);
        char line[256];
        gl_compare_format(&c, line, sizeof(line));
        cr_expect(c.ok, "qkv: output %zu, dnnl vs ref: %s", i, line);
    }
    static const chain_expect nodes[] = {{"transpose", VIEW, NULL},
                                         {"gather0", DN, "plain"},
                                         {"gather1", DN, "plain"},
                                         {"gather2", DN, "plain"}};
    for (size_t i = 0; i < GL_ARRAY_LEN(nodes); i++) {
        op_case c = {.name = nodes[i].node, .op = "", .expect = nodes[i].where,
                     .out = nodes[i].out};
        const gl_plan_entry *en = tu_plan_entry(dn, nodes[i].node, -1);
        cr_assert_not_null(en, "qkv: no entry %s", nodes[i].node);
        check_node(&c, en, nodes[i].node);
    }
    for (size_t i = 0; i < 3; i++) {
        gl_tensor_free(got[i]);
        gl_tensor_free(want[i]);
    }
    gl_tensor_free(in[0]);
    gl_exec_free(ref);
    gl_exec_free(dn);
    gl_model_free(m);
}

/* ---- graphlab's channels-last ops (the layout pass's) ------------------------------------- */

/* X[N,H,W,C] is plain to the executor and nhwc to oneDNN: whatever the plan's policy, the
 * node reads and writes plain tensors with no conversion. */
static const op_case nhwc_cases[] = {
    {"3x3 pads 1, bias", "graphlab.NhwcConv", 13, "pnb", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('x', 4, D(1, 9, 11, 8)), IN('c', 4, D(16, 8, 3, 3)), IN('c', 1, D(16))},
     .expect = DN, .out = "plain"},
    {"first conv: 3 channels, stride 2", "graphlab.NhwcConv", 13, "pn",
     {AINTS("strides", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('x', 4, D(2, 32, 30, 3)), IN('c', 4, D(16, 3, 3, 3))}, .expect = DN, .out = "plain"},
    {"depthwise", "graphlab.NhwcConv", 13, "pb", {AI("group", 32), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('x', 4, D(1, 14, 14, 32)), IN('c', 4, D(32, 1, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, .out = "plain"},
    {"1x1, 19 channels", "graphlab.NhwcConv", 13, "p", {{0}},
     {IN('x', 4, D(1, 7, 5, 19)), IN('c', 4, D(24, 19, 1, 1))}, .expect = DN, .out = "plain"},
    {"SAME_UPPER, dilations 2", "graphlab.NhwcConv", 13, "p",
     {AS("auto_pad", "SAME_UPPER"), AINTS("dilations", 2, 2, 2)},
     {IN('x', 4, D(1, 10, 9, 8)), IN('c', 4, D(8, 8, 3, 3))}, .expect = DN, .out = "plain"},
    {"max 3x3 stride 2", "graphlab.NhwcMaxPool", 13, "pn",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("strides", 2, 2, 2)},
     {IN('x', 4, D(1, 17, 15, 24))}, .expect = DN, .out = "plain"},
    {"average, ceil_mode, pads", "graphlab.NhwcAveragePool", 13, "p",
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2), AI("ceil_mode", 1),
      AINTS("pads", 4, 1, 0, 1, 0)},
     {IN('x', 4, D(2, 9, 7, 16))}, .expect = DN, .out = "plain"},
    {"global average", "graphlab.NhwcGlobalAveragePool", 13, "pb", {{0}},
     {IN('x', 4, D(2, 7, 7, 40))}, .expect = DN, .out = "plain"},
    {"global max", "graphlab.NhwcGlobalMaxPool", 13, "p", {{0}},
     {IN('x', 4, D(1, 6, 5, 24))}, .expect = DN, .out = "plain"},
};

Test(dnnl_ops, channels_last)
{
    run_cases(nhwc_cases, GL_ARRAY_LEN(nhwc_cases), 16);
}

/* Max pooling's windows (dn_pool.c). Float max pooling over nhwc and the blocked layout
 * (nChw8c, nChw16c with AVX-512) runs graphlab's own kernel (its implementation says so)
 * with the same values as the reference: edges, ceil_mode's last window, strides and
 * dilations, channels off the block, a batch, NaN and infinities. */
static const op_case max_pool_cases[] = {
    {"3x3 stride 1 pads 1, 24 channels", "MaxPool", 12, "nb",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 24, 14, 14))}, .expect = DN},
    {"3x3 stride 2 ceil_mode, a batch of 2", "MaxPool", 12, "nb",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("strides", 2, 2, 2), AI("ceil_mode", 1)},
     {IN('X', 4, D(2, 16, 15, 13))}, .expect = DN},
    {"2x2 stride 2, 20 channels", "MaxPool", 12, "nb",
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 2, 2)},
     {IN('X', 4, D(1, 20, 12, 10))}, .expect = DN},
    /* oneDNN 2.6 pools dilated windows with its reference code only: graphlab's kernel
     * on AVX-512 too, in nChw16c there (blocked), over 24 channels (a block and a half) */
    {"3x3 dilations 2 pads 2", "MaxPool", 12, "nb",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("dilations", 2, 2, 2),
      AINTS("pads", 4, 2, 2, 2, 2)},
     {IN('X', 4, D(1, 24, 11, 9))}, .expect = DN},
    {"2x3 strides 1x2, pads only at the start", "MaxPool", 12, "nb",
     {AINTS("kernel_shape", 2, 2, 3), AINTS("strides", 2, 1, 2),
      AINTS("pads", 4, 1, 1, 0, 0)},
     {IN('X', 4, D(1, 12, 7, 9))}, .expect = DN},
    {"NaN and infinities", "MaxPool", 12, "nb",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('S', 4, D(2, 16, 12, 12))}, .expect = DN},
    {"channels last, 3x3 stride 1 pads 1, 20 channels", "graphlab.NhwcMaxPool", 13, "p",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('x', 4, D(1, 9, 11, 20))}, .expect = DN, .out = "plain"},
    {"channels last, 3x3 stride 2 ceil_mode, 3 channels", "graphlab.NhwcMaxPool", 13, "p",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("strides", 2, 2, 2), AI("ceil_mode", 1)},
     {IN('x', 4, D(2, 10, 9, 3))}, .expect = DN, .out = "plain"},
    /* large enough to run on two threads: the output rows split between them mid-plane */
    {"a ResNet's stem: 64x112x112, 3x3 stride 2 pads 1", "MaxPool", 12, "nb",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("strides", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 64, 112, 112))}, .expect = DN},
    {"3 images of 20 channels (a partial block), 57x57, 3x3 stride 2 pads 1", "MaxPool", 12,
     "nb", {AINTS("kernel_shape", 2, 3, 3), AINTS("strides", 2, 2, 2),
            AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(3, 20, 57, 57))}, .expect = DN},
    {"channels last, 64 channels, 56x56, 3x3 stride 2 pads 1", "graphlab.NhwcMaxPool", 13, "p",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("strides", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('x', 4, D(1, 56, 56, 64))}, .expect = DN, .out = "plain"},
    {"channels last, 13 channels, 40x40, 2x2 stride 1", "graphlab.NhwcMaxPool", 13, "p",
     {AINTS("kernel_shape", 2, 2, 2)}, {IN('x', 4, D(2, 40, 40, 13))}, .expect = DN,
     .out = "plain"},
    /* session 38: the ring of reduced window rows (windows whose rows no other shares,
     * rows no window reads, the most rows it takes) and the direct rows (2- and 3-wide
     * windows at strides 1 and 2, columns carried in registers, over 8 and 16 lanes) */
    {"channels last, 16 channels, 3x3 stride 1 pads 1, 13 rows", "graphlab.NhwcMaxPool", 13,
     "p", {AINTS("kernel_shape", 2, 3, 3), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('x', 4, D(1, 13, 10, 16))}, .expect = DN, .out = "plain"},
    {"2x2 stride 3: rows and columns no window reads", "MaxPool", 12, "nb",
     {AINTS("kernel_shape", 2, 2, 2), AINTS("strides", 2, 3, 3)},
     {IN('X', 4, D(1, 16, 11, 11))}, .expect = DN},
    {"2x2 stride 1, 16 channels", "MaxPool", 12, "nb", {AINTS("kernel_shape", 2, 2, 2)},
     {IN('X', 4, D(1, 16, 9, 10))}, .expect = DN},
    {"3x2 strides 2x1 pads 1", "MaxPool", 12, "nb",
     {AINTS("kernel_shape", 2, 3, 2), AINTS("strides", 2, 2, 1), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(2, 8, 9, 7))}, .expect = DN},
    {"3x3 pads 1 over 2 columns: no window wholly inside a row", "MaxPool", 12, "nb",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 16, 5, 2))}, .expect = DN},
    {"1x3 window, stride 1", "MaxPool", 12, "nb", {AINTS("kernel_shape", 2, 1, 3)},
     {IN('X', 4, D(2, 8, 5, 9))}, .expect = DN},
    {"16x1 window, 18 rows", "MaxPool", 12, "nb", {AINTS("kernel_shape", 2, 16, 1)},
     {IN('X', 4, D(1, 8, 18, 4))}, .expect = DN},
};

/* Windows taller than graphlab's kernel takes (a row pointer per tap) stay on oneDNN's. */
static const op_case max_pool_tall_cases[] = {
    {"17x1 window: oneDNN's kernel", "MaxPool", 12, "nb", {AINTS("kernel_shape", 2, 17, 1)},
     {IN('X', 4, D(1, 8, 20, 4))}, .expect = DN, .impl_not = "graphlab"},
};

/* Groups of fewer channels than a block (dn_conv.c): merged into groups of whole blocks,
 * zero weights across the old groups, on oneDNN's jit kernel (ResNeXt's 32 groups of 4
 * channels ran as gemm with reorders); the same values as the reference, an input with
 * NaN and infinities too (those runs take the reference kernel: a zero weight times an
 * infinity would be NaN). */
static const op_case widened_group_cases[] = {
    {"32 groups of 4 channels, 3x3", "Conv", 11, "nb",
     {AI("group", 32), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 128, 9, 9)), IN('c', 4, D(128, 4, 3, 3)), IN('c', 1, D(128))},
     .expect = DN, .impl_has = "jit", .impl_not = "gemm", .rtol = 1e-3, .atol = 1e-4},
    {"8 groups of 2 channels, stride 2, a batch of 2", "Conv", 11, "nb",
     {AI("group", 8), AINTS("strides", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(2, 16, 9, 8)), IN('c', 4, D(16, 2, 3, 3))},
     .expect = DN, .impl_has = "jit", .impl_not = "gemm", .rtol = 1e-3, .atol = 1e-4},
    {"NaN and infinities in the input", "Conv", 11, "nb",
     {AI("group", 32), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('S', 4, D(2, 128, 6, 6)), IN('c', 4, D(128, 4, 3, 3))},
     .expect = DN, .impl_has = "jit", .rtol = 1e-3, .atol = 1e-4},
};

Test(dnnl_ops, grouped_convolutions_widened_to_the_block)
{
    run_cases(widened_group_cases, GL_ARRAY_LEN(widened_group_cases), 29);
}

/* GlobalAveragePool (dn_gpool.c): without AVX-512, over nChw8c and nhwc graphlab's own
 * kernel (its implementation says so; with AVX-512 in nChw16c only); the same values as the
 * reference: channels past the last block of 8 (padding, a scalar tail), maps whose
 * size is no multiple of the four accumulators, a batch, NaN and infinities. */
static const op_case global_average_cases[] = {
    {"20 channels, 7x7, a batch of 3", "GlobalAveragePool", 13, "nb", {{0}},
     {IN('X', 4, D(3, 20, 7, 7))}, .expect = DN, .impl_has = "graphlab:avx2", .native_on_avx512 = "b"},
    {"64 channels, 14x14", "GlobalAveragePool", 13, "nb", {{0}},
     {IN('X', 4, D(2, 64, 14, 14))}, .expect = DN, .impl_has = "graphlab:avx2", .native_on_avx512 = "b"},
    {"8 channels, 1x3", "GlobalAveragePool", 13, "nb", {{0}}, {IN('X', 4, D(1, 8, 1, 3))},
     .expect = DN, .impl_has = "graphlab:avx2", .native_on_avx512 = "b"},
    {"NaN and infinities", "GlobalAveragePool", 13, "nb", {{0}},
     {IN('S', 4, D(2, 16, 5, 5))}, .expect = DN, .impl_has = "graphlab:avx2", .native_on_avx512 = "b"},
    {"channels last, 43 channels", "graphlab.NhwcGlobalAveragePool", 13, "p", {{0}},
     {IN('x', 4, D(2, 5, 6, 43))}, .expect = DN, .out = "plain", .impl_has = "graphlab:avx2", .native_on_avx512 = "b"},
    /* nhwc: one image's pixels in parts over the threads (40 channels: one chunk), a
     * chunk of 64 and one of 8 + 3, 24 channels in nChw16c (a block and a half) */
    {"one image of 40 channels, 36x36", "GlobalAveragePool", 13, "nb", {{0}},
     {IN('X', 4, D(1, 40, 36, 36))}, .expect = DN, .impl_has = "graphlab:avx2", .native_on_avx512 = "b"},
    {"75 channels, 32x33", "GlobalAveragePool", 13, "nb", {{0}},
     {IN('X', 4, D(1, 75, 32, 33))}, .expect = DN, .impl_has = "graphlab:avx2", .native_on_avx512 = "b"},
    {"24 channels, 9x9, a batch of 2", "GlobalAveragePool", 13, "nb", {{0}},
     {IN('X', 4, D(2, 24, 9, 9))}, .expect = DN, .impl_has = "graphlab:avx2", .native_on_avx512 = "b"},
    {"plain NCHW: oneDNN's", "GlobalAveragePool", 13, "p", {{0}},
     {IN('x', 4, D(2, 16, 5, 5))}, .expect = DN, .impl_not = "graphlab"},
};

/* 3x3 stride-1 convolutions without AVX-512 (dn_wino.c): graphlab's Winograd kernels on
 * nChw8c and nhwc, F(2x2) on batches of fewer than 16 4x4 tiles, F(4x4) on larger ones,
 * and F(6x6) where its filters are small and its padded tiles do at most 91% of F(4x4)'s
 * products (17x19: 12 tiles of 64 against 25 of 36; 13x14 and 16x16: as many), the same values as the reference (edges and partial tiles of odd sizes, output
 * channels off the group of 32, a batch, filters split by channels or tiles in chunks
 * among the threads, images in spans of tiles, pads on some edges only, SAME padding, one
 * tile; NaN and infinities take the reference kernel); and the rows it leaves to oneDNN.
 * A kernel that dropped a tile's last row or column, or a post-op, fails here (its sums
 * and relus: test_dnnl_fused.c). */
#define WINO_RTOL 1e-3, .atol = 1e-4
#define F2 .impl_has = "graphlab:avx2 winograd_2x3", .rtol = WINO_RTOL
/* Winograd rounds more than a direct sum: F(4x4) to about 1e-5 of the outputs' scale
 * (nmse ~1e-12), F(2x2) to a few 1e-6; these outputs reach 100-300 with 128 or 256 input
 * channels ('X': the input through a 1x1 Conv of unscaled weights), so max_abs up to
 * 2.4e-3 (F(4x4)) and 4e-4 (F(2x2)) next to zero: F4 and the F(2x2) rows of 256
 * channels (F2_WIDE) take an atol of 5e-3. A dropped row, column, bias or post-op is off
 * by 1 to 100. */
#define F4 .impl_has = "graphlab:avx2 winograd_4x3", .rtol = 1e-3, .atol = 5e-3
#define F2_WIDE .impl_has = "graphlab:avx2 winograd_2x3", .rtol = 1e-3, .atol = 5e-3
/* F(6x6) rounds 3-5 times more than F(4x4) (max_abs up to 1.1e-2 on these outputs of
 * 100-300 next to zero; the corpus models' outputs stay within the suite's tolerance,
 * resnet50's max_abs 2.1e-4 -> 2.4e-4): atol 2e-2, far below a dropped row, bias or
 * post-op. */
#define F6 .impl_has = "graphlab:avx2 winograd_6x3", .rtol = 1e-3, .atol = 2e-2
static const op_case wino_cases[] = {
    {"32 channels, 7x7, pads 1, bias", "Conv", 11, "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 32, 7, 7)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F2},
    {"64 -> 40 channels, 13x14 (F(4x4): 16 tiles)", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 64, 13, 14)), IN('c', 4, D(40, 64, 3, 3)), IN('c', 1, D(40))},
     .expect = DN, F4},
    {"64 -> 40 channels, 9x11, a batch of 2 (18 4x4 tiles: F(6x6), last tiles of 3 and 5)",
     "Conv", 11, "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(2, 64, 9, 11)), IN('c', 4, D(40, 64, 3, 3)), IN('c', 1, D(40))},
     .expect = DN, F6},
    {"64 -> 40 channels, 9x11 (F(2x2): 9 tiles)", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 64, 9, 11)), IN('c', 4, D(40, 64, 3, 3)), IN('c', 1, D(40))},
     .expect = DN, F2},
    {"256 -> 72 channels, 5x5, a batch of 2 (filters split by channels)", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(2, 256, 5, 5)), IN('c', 4, D(72, 256, 3, 3)), IN('c', 1, D(72))},
     .expect = DN, F2_WIDE},
    {"48 channels, no pads, 10x10", "Conv", 11, "b", {{0}},
     {IN('X', 4, D(1, 48, 10, 10)), IN('c', 4, D(48, 48, 3, 3))}, .expect = DN, F2},
    {"pads at the top and right only", "Conv", 11, "b", {AINTS("pads", 4, 1, 0, 0, 1)},
     {IN('X', 4, D(1, 32, 6, 9)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F2},
    {"SAME_UPPER, 5x6", "Conv", 11, "b", {AS("auto_pad", "SAME_UPPER")},
     {IN('X', 4, D(1, 32, 5, 6)), IN('c', 4, D(32, 32, 3, 3))}, .expect = DN, F2},
    {"one tile (4x4, no pads)", "Conv", 11, "b", {{0}},
     {IN('X', 4, D(1, 32, 4, 4)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F2},
    {"NaN and infinities in the input", "Conv", 11, "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('S', 4, D(2, 32, 6, 6)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F2},
    {"nhwc activations, 40 channels, a batch of 2", "Conv", 11, "n",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(2, 40, 7, 9)), IN('c', 4, D(40, 40, 3, 3)), IN('c', 1, D(40))},
     .expect = DN, F2},
    {"graphlab's NhwcConv ([N,H,W,C] plain)", "graphlab.NhwcConv", 13, "pnb",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('x', 4, D(1, 7, 7, 32)), IN('c', 4, D(48, 32, 3, 3)), IN('c', 1, D(48))},
     .expect = DN, .out = "plain", F2},
    /* F(4x4): 6x6 input tiles, 4x4 outputs each */
    {"F(4x4): 16x16, 32 channels (chunks of tiles)", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 32, 16, 16)), IN('c', 4, D(32, 32, 3, 3))}, .expect = DN, F4},
    {"F(4x4): 13x15 (last tiles of 1 and 3 outputs), a batch of 2, bias", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(2, 32, 13, 15)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F4},
    {"F(4x4): 13x14 (last tile rows of 1 and 2 outputs), 40 -> 48 channels", "Conv", 11,
     "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 40, 13, 14)), IN('c', 4, D(48, 40, 3, 3)), IN('c', 1, D(48))},
     .expect = DN, F4},
    {"F(4x4): 256 -> 40 channels, 14x14 (filters split by channels)", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 256, 14, 14)), IN('c', 4, D(40, 256, 3, 3)), IN('c', 1, D(40))},
     .expect = DN, F4},
    {"F(4x4): 128 -> 64 channels, 13x13, a batch of 5 (spans of 40 tiles, across images)",
     "Conv", 11, "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(5, 128, 13, 13)), IN('c', 4, D(64, 128, 3, 3)), IN('c', 1, D(64))},
     .expect = DN, F4},
    {"F(4x4): 7x7, a batch of 4 (16 tiles in the batch), chunks across images", "Conv", 11,
     "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(4, 32, 7, 7)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F4},
    {"F(4x4): no pads, 18x18 -> 16x16 (whole tiles)", "Conv", 11, "b", {{0}},
     {IN('X', 4, D(1, 32, 18, 18)), IN('c', 4, D(32, 32, 3, 3))}, .expect = DN, F4},
    {"F(4x4): pads at the top and right only, 14x16", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 0, 0, 1)},
     {IN('X', 4, D(1, 32, 14, 16)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F4},
    {"F(4x4): SAME_LOWER, 15x13", "Conv", 11, "b", {AS("auto_pad", "SAME_LOWER")},
     {IN('X', 4, D(1, 32, 15, 13)), IN('c', 4, D(32, 32, 3, 3))}, .expect = DN, F4},
    {"F(4x4): NaN and infinities in the input", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('S', 4, D(2, 32, 16, 16)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F4},
    {"F(4x4): nhwc activations, 40 channels, 15x13, a batch of 2", "Conv", 11, "n",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(2, 40, 15, 13)), IN('c', 4, D(40, 40, 3, 3)), IN('c', 1, D(40))},
     .expect = DN, F4},
    {"F(4x4): graphlab's NhwcConv ([N,H,W,C] plain), 14x14", "graphlab.NhwcConv", 13, "pnb",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('x', 4, D(1, 14, 14, 32)), IN('c', 4, D(48, 32, 3, 3)), IN('c', 1, D(48))},
     .expect = DN, .out = "plain", F4},
    /* F(6x6): 8x8 input tiles, 6x6 outputs each */
    {"F(6x6): 28x28, 32 channels (chunks of tiles, last of 4 outputs)", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 32, 28, 28)), IN('c', 4, D(32, 32, 3, 3))}, .expect = DN, F6},
    {"F(6x6): 17x19 (last tiles of 5 and 1 outputs), a batch of 2, bias", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(2, 32, 17, 19)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F6},
    {"F(6x6): 22x21 (last tile rows of 4 and 3 outputs), 40 -> 48 channels", "Conv", 11,
     "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 40, 22, 21)), IN('c', 4, D(48, 40, 3, 3)), IN('c', 1, D(48))},
     .expect = DN, F6},
    {"F(6x6): 128 -> 64 channels, 30x30, a batch of 3 (filters split by channels, spans "
     "of 38 tiles, one across two images)", "Conv", 11, "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(3, 128, 30, 30)), IN('c', 4, D(64, 128, 3, 3)), IN('c', 1, D(64))},
     .expect = DN, F6},
    {"F(6x6): 9x9, a batch of 3 (12 tiles), chunks across images", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(3, 32, 9, 9)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F6},
    {"F(6x6): no pads, 20x20 -> 18x18 (whole tiles)", "Conv", 11, "b", {{0}},
     {IN('X', 4, D(1, 32, 20, 20)), IN('c', 4, D(32, 32, 3, 3))}, .expect = DN, F6},
    {"F(6x6): pads at the top and right only, 20x18", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 0, 0, 1)},
     {IN('X', 4, D(1, 32, 20, 18)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F6},
    {"F(6x6): SAME_LOWER, 15x17", "Conv", 11, "b", {AS("auto_pad", "SAME_LOWER")},
     {IN('X', 4, D(1, 32, 15, 17)), IN('c', 4, D(32, 32, 3, 3))}, .expect = DN, F6},
    {"F(6x6): NaN and infinities in the input", "Conv", 11, "b",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('S', 4, D(2, 32, 18, 18)), IN('c', 4, D(32, 32, 3, 3)), IN('c', 1, D(32))},
     .expect = DN, F6},
    {"F(6x6): nhwc activations, 40 channels, 15x17, a batch of 2", "Conv", 11, "n",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(2, 40, 15, 17)), IN('c', 4, D(40, 40, 3, 3)), IN('c', 1, D(40))},
     .expect = DN, F6},
    {"F(6x6): graphlab's NhwcConv ([N,H,W,C] plain), 17x17", "graphlab.NhwcConv", 13, "pnb",
     {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('x', 4, D(1, 17, 17, 32)), IN('c', 4, D(48, 32, 3, 3)), IN('c', 1, D(48))},
     .expect = DN, .out = "plain", F6},
};
#undef F2
#undef F2_WIDE
#undef F4
#undef F6

/* What graphlab's Winograd kernel leaves to oneDNN's direct one (288 products a sum:
 * oneDNN's order is not the reference's either). */
#define WINO_DIRECT .impl_not = "graphlab", .rtol = WINO_RTOL
static const op_case wino_refused_cases[] = {
    {"stride 2", "Conv", 11, "b", {AINTS("strides", 2, 2, 2), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 32, 14, 14)), IN('c', 4, D(32, 32, 3, 3))}, .expect = DN, WINO_DIRECT},
    {"dilations 2", "Conv", 11, "b", {AINTS("dilations", 2, 2, 2), AINTS("pads", 4, 2, 2, 2, 2)},
     {IN('X', 4, D(1, 32, 9, 9)), IN('c', 4, D(32, 32, 3, 3))}, .expect = DN, WINO_DIRECT},
    {"2 groups", "Conv", 11, "b", {AI("group", 2), AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 64, 7, 7)), IN('c', 4, D(64, 32, 3, 3))}, .expect = DN, WINO_DIRECT},
    {"36 channels (not whole blocks of 8)", "Conv", 11, "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 36, 7, 7)), IN('c', 4, D(36, 36, 3, 3))}, .expect = DN, WINO_DIRECT},
    {"16 channels (direct as fast)", "Conv", 11, "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 16, 7, 7)), IN('c', 4, D(16, 16, 3, 3))}, .expect = DN, WINO_DIRECT},
    {"5x5 kernel", "Conv", 11, "b", {AINTS("pads", 4, 2, 2, 2, 2)},
     {IN('X', 4, D(1, 32, 7, 7)), IN('c', 4, D(32, 32, 5, 5))}, .expect = DN, WINO_DIRECT},
    {"1x1 kernel", "Conv", 11, "b", {{0}},
     {IN('X', 4, D(1, 32, 7, 7)), IN('c', 4, D(32, 32, 1, 1))}, .expect = DN, WINO_DIRECT},
    {"weights a graph input", "Conv", 11, "b", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 32, 7, 7)), IN('x', 4, D(32, 32, 3, 3))}, .expect = DN, WINO_DIRECT},
    {"plain activations", "Conv", 11, "p", {AINTS("pads", 4, 1, 1, 1, 1)},
     {IN('X', 4, D(1, 32, 7, 7)), IN('c', 4, D(32, 32, 3, 3))}, .expect = DN, WINO_DIRECT},
};

/* Rows whose implementation is graphlab's own kernel on every CPU (that runs AVX2):
 * impl_has in each. */
static void run_cases_native(const op_case *rows, size_t n, const char *impl_has, uint32_t seed)
{
    op_case *cases = gl_xmalloc(n * sizeof(*cases));
    memcpy(cases, rows, n * sizeof(*cases));
    for (size_t i = 0; i < n; i++)
        cases[i].impl_has = impl_has;
    run_cases(cases, n, seed);
    free(cases);
}

/* Rows whose implementation, without AVX-512, is graphlab's own kernel: impl_has (NULL:
 * as each row says); with AVX-512 oneDNN's runs instead, and the rows that named
 * graphlab's must not. */
static void run_cases_avx2(const op_case *rows, size_t n, const char *impl_has, uint32_t seed)
{
    op_case *cases = gl_xmalloc(n * sizeof(*cases));
    memcpy(cases, rows, n * sizeof(*cases));
    for (size_t i = 0; i < n; i++) {
        if (impl_has)
            cases[i].impl_has = impl_has;
        if (tu_cpu_has_avx512() && cases[i].impl_has && !cases[i].native_on_avx512)
            cases[i].impl_has = NULL, cases[i].impl_not = "graphlab";
        else if (!tu_cpu_has_avx512())
            cases[i].native_on_avx512 = NULL; /* impl_has in every layout */
        if (tu_cpu_has_avx512() && cases[i].ref_on_avx512)
            cases[i].expect = DN_REF;
    }
    run_cases(cases, n, seed);
    free(cases);
}

/* A blocked channel Concat of more than one image whose output passes 512 KB: without
 * AVX-512, graphlab's copy loop with streaming stores (dn_nary.c), one run of whole
 * channel blocks per image and input; the same numbers as the reference, at odd batches
 * split over two threads. Channels that are no multiple of the block, one image, or a
 * small output stay on oneDNN's concat. With AVX-512 the rows of whole blocks of 16
 * copy too (with plain stores: concat_blocked_copied's rows). */
#define STREAMED .expect = DN, .impl_has = "graphlab:copy", .keeps = true, .then = "Relu"
static const op_case concat_streamed_cases[] = {
    {"batch 2, 64 + 32 + 24 channels, 28x28", "Concat", 13, "b", {AI("axis", 1)},
     {IN('X', 4, D(2, 64, 28, 28)), IN('X', 4, D(2, 32, 28, 28)), IN('X', 4, D(2, 24, 28, 28))},
     STREAMED},
    {"batch 3, 40 + 8 channels, 32x32 (576 KB)", "Concat", 13, "b", {AI("axis", -3)},
     {IN('X', 4, D(3, 40, 32, 32)), IN('X', 4, D(3, 8, 32, 32))}, STREAMED,
     .ref_on_avx512 = true},
    {"batch 8, five inputs of 16 channels and one of 32, 7x7x4 (5-D)", "Concat", 13, "b",
     {AI("axis", 1)},
     {IN('X', 5, D(8, 32, 7, 7, 4)), IN('X', 5, D(8, 16, 7, 7, 4)), IN('X', 5, D(8, 16, 7, 7, 4)),
      IN('X', 5, D(8, 16, 7, 7, 4)), IN('X', 5, D(8, 16, 7, 7, 4)), IN('X', 5, D(8, 16, 7, 7, 4))},
     STREAMED, .native_on_avx512 = "b"},
    {"batch 2, 21 + 11 channels, 64x64 (not whole blocks)", "Concat", 13, "b",
     {AI("axis", 1)}, {IN('X', 4, D(2, 21, 64, 64)), IN('X', 4, D(2, 11, 64, 64))},
     .expect = DN_REF, .why = "reorder per input", .keeps = true, .then = "Relu"},
    {"batch 1, 64 + 64 channels, 56x56, one a graph input (not in place)", "Concat", 13,
     "b", {AI("axis", 1)}, {IN('X', 4, D(1, 64, 56, 56)), IN('x', 4, D(1, 64, 56, 56))},
     .expect = DN, .impl_not = "graphlab", .keeps = true, .then = "Relu"},
};
#undef STREAMED

Test(dnnl_ops, concat_blocked_streamed)
{
    tu_omp_threads(2); /* the images split over two threads */
    run_cases_avx2(concat_streamed_cases, GL_ARRAY_LEN(concat_streamed_cases), NULL, 53);
}

/* Blocked channel Concats under 512 KB: on AVX-512 (nChw16c) graphlab's copy loop takes
 * every one of more than one image whose channels fill whole blocks of 16, with plain
 * stores (they beat oneDNN 2.6's simple concat at every size measured and leave the
 * output in the caches for its reader); without AVX-512 none of them (streaming pays only
 * past L2, and plain stores lost to oneDNN's there). One image, or channels off the
 * block, stay on oneDNN's concat on both. */
#define COPIED .expect = DN, .impl_has = "graphlab:copy", .keeps = true, .then = "Relu"
#define ONEDNN .expect = DN, .impl_not = "graphlab", .keeps = true, .then = "Relu"
static const op_case concat_copied_cases[] = {
    {"batch 2, 32 + 32 channels, 28x28 (392 KB)", "Concat", 13, "b", {AI("axis", 1)},
     {IN('X', 4, D(2, 32, 28, 28)), IN('X', 4, D(2, 32, 28, 28))}, COPIED},
    {"batch 3, 48 + 16 + 64 channels, 9x11", "Concat", 13, "b", {AI("axis", -3)},
     {IN('X', 4, D(3, 48, 9, 11)), IN('X', 4, D(3, 16, 9, 11)), IN('X', 4, D(3, 64, 9, 11))},
     COPIED},
    {"batch 2, 16 + 16 channels, 1x1", "Concat", 13, "b", {AI("axis", 1)},
     {IN('X', 4, D(2, 16, 1, 1)), IN('X', 4, D(2, 16, 1, 1))}, COPIED},
    {"batch 1, 64 + 32 channels, 14x14 (one image: oneDNN splits its runs)", "Concat", 13,
     "b", {AI("axis", 1)}, {IN('X', 4, D(1, 64, 14, 14)), IN('X', 4, D(1, 32, 14, 14))},
     ONEDNN},
    {"batch 2, 24 + 40 channels, 14x14 (off the block of 16)", "Concat", 13, "b",
     {AI("axis", 1)}, {IN('X', 4, D(2, 24, 14, 14)), IN('X', 4, D(2, 40, 14, 14))}, ONEDNN,
     .ref_on_avx512 = true},
};
#undef COPIED
#undef ONEDNN

Test(dnnl_ops, concat_blocked_copied)
{
    op_case rows[GL_ARRAY_LEN(concat_copied_cases)];
    memcpy(rows, concat_copied_cases, sizeof(rows));
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        if (!tu_cpu_has_avx512()) /* under 512 KB: oneDNN's concat */
            rows[i].impl_has = NULL, rows[i].impl_not = "graphlab";
        else if (rows[i].ref_on_avx512)
            rows[i].expect = DN_REF;
    }
    tu_omp_threads(2);
    run_cases(rows, GL_ARRAY_LEN(rows), 59);
}

Test(dnnl_ops, global_average_pool)
{
    tu_omp_threads(2); /* a map's pixels in parts over the threads */
    run_cases_avx2(global_average_cases, GL_ARRAY_LEN(global_average_cases), NULL, 37);
}

/* A Mul by one value per image and channel, [N, C, 1, 1] (dn_chscale.c: a squeeze-and-
 * excitation scale): over nChw8c, nChw16c and nhwc graphlab's own kernel; the same values
 * as the reference: channels past the last block (the padding, a scalar tail in nhwc),
 * the scales first or second, one set of scales for the whole batch ([1, C, 1, 1] and
 * [C, 1, 1]), the scales arriving in the activations' layout or plain where oneDNN
 * would read them only in its reference code (channels off the block: a plain scale
 * read as if blocked would take the next image's scales at a batch above 1), NaN and
 * infinities on either side; and the rows it leaves to oneDNN. */
static const op_case channel_scale_cases[] = {
    {"20 channels, 7x7, a batch of 3", "Mul", 14, "nb", {{0}},
     {IN('X', 4, D(3, 20, 7, 7)), IN('x', 4, D(3, 20, 1, 1))}, .expect = DN,
     .impl_has = "graphlab:avx2", .native_on_avx512 = "nb"},
    {"the scales first, 64 channels, 14x14", "Mul", 14, "nb", {{0}},
     {IN('x', 4, D(2, 64, 1, 1)), IN('X', 4, D(2, 64, 14, 14))}, .expect = DN,
     .impl_has = "graphlab:avx2", .native_on_avx512 = "nb"},
    {"[1, C, 1, 1] over a batch of 2, 27 channels", "Mul", 14, "nb", {{0}},
     {IN('X', 4, D(2, 27, 5, 3)), IN('x', 4, D(1, 27, 1, 1))}, .expect = DN,
     .impl_has = "graphlab:avx2", .native_on_avx512 = "nb"},
    {"[C, 1, 1] over a batch of 3", "Mul", 14, "nb", {{0}},
     {IN('X', 4, D(3, 16, 4, 4)), IN('x', 3, D(16, 1, 1))}, .expect = DN,
     .impl_has = "graphlab:avx2", .native_on_avx512 = "nb"},
    {"the scales in the activations' layout, 12 channels", "Mul", 14, "nb", {{0}},
     {IN('X', 4, D(2, 12, 6, 6)), IN('X', 4, D(2, 12, 1, 1))}, .expect = DN,
     .impl_has = "graphlab:avx2", .native_on_avx512 = "nb"},
    {"NaN and infinities in the activation", "Mul", 14, "nb", {{0}},
     {IN('S', 4, D(2, 16, 5, 5)), IN('x', 4, D(2, 16, 1, 1))}, .expect = DN,
     .impl_has = "graphlab:avx2", .native_on_avx512 = "nb"},
    {"NaN and infinities in the scales", "Mul", 14, "nb", {{0}},
     {IN('X', 4, D(1, 40, 3, 3)), IN('s', 4, D(1, 40, 1, 1))}, .expect = DN,
     .impl_has = "graphlab:avx2", .native_on_avx512 = "nb"},
    {"36 channels (off the block of 16), a batch of 2, a plain scale", "Mul", 14, "nb", {{0}},
     {IN('X', 4, D(2, 36, 9, 9)), IN('x', 4, D(2, 36, 1, 1))}, .expect = DN,
     .impl_has = "graphlab:avx2", .native_on_avx512 = "nb"},
    {"Add: oneDNN's", "Add", 14, "nb", {{0}},
     {IN('X', 4, D(2, 16, 5, 5)), IN('x', 4, D(2, 16, 1, 1))}, .expect = DN,
     .impl_not = "graphlab"},
    {"one value per image [N, 1, 1, 1]: oneDNN's", "Mul", 14, "nb", {{0}},
     {IN('X', 4, D(2, 16, 5, 5)), IN('x', 4, D(2, 1, 1, 1))}, .expect = REF,
     .why = "broadcast", .impl_not = "graphlab"},
    {"plain NCHW: oneDNN's", "Mul", 14, "p", {{0}},
     {IN('x', 4, D(2, 16, 16, 16)), IN('x', 4, D(2, 16, 1, 1))}, .expect = DN,
     .impl_not = "graphlab"},
};

Test(dnnl_ops, channel_scale)
{
    run_cases_avx2(channel_scale_cases, GL_ARRAY_LEN(channel_scale_cases), NULL, 47);
}

/* Gemm of a few rows by constant weights (dn_matmul.c): graphlab's kernel on weights
 * packed in panels of 8 columns where there are 2 to 8 rows (a fully connected layer at
 * batch 8), oneDNN's gemm for one row, more than 8, or an alpha; the same values as the
 * reference, a partial last panel and NaN and infinities in A too. `impl_has` is set
 * below for AVX2 machines (graphlab's row) or left as the row says. */
static const op_case few_rows_cases[] = {
    {"8 rows, transB, C [N], N = 21 (a partial panel)", "Gemm", 13, "p", {AI("transB", 1)},
     {IN('x', 2, D(8, 37)), IN('c', 2, D(21, 37)), IN('c', 1, D(21))}, .expect = DN,
     .impl_has = "graphlab:avx2 8 rows"},
    {"2 rows, no C", "Gemm", 13, "p", {{0}}, {IN('x', 2, D(2, 40)), IN('c', 2, D(40, 16))},
     .expect = DN, .impl_has = "graphlab:avx2 2 rows"},
    {"5 rows, C [1, N] from a graph input", "Gemm", 13, "p", {{0}},
     {IN('x', 2, D(5, 9)), IN('c', 2, D(9, 8)), IN('x', 2, D(1, 8))}, .expect = DN,
     .impl_has = "graphlab:avx2 5 rows"},
    {"NaN and infinities in A", "Gemm", 13, "p", {AI("transB", 1)},
     {IN('s', 2, D(8, 24)), IN('c', 2, D(10, 24)), IN('c', 1, D(10))}, .expect = DN,
     .impl_has = "graphlab:avx2 8 rows"},
    {"1 row: oneDNN's gemm", "Gemm", 13, "p", {AI("transB", 1)},
     {IN('x', 2, D(1, 37)), IN('c', 2, D(21, 37)), IN('c', 1, D(21))}, .expect = DN,
     .impl_not = "graphlab"},
    {"9 rows: oneDNN's gemm", "Gemm", 13, "p", {{0}},
     {IN('x', 2, D(9, 37)), IN('c', 2, D(37, 21)), IN('c', 1, D(21))}, .expect = DN,
     .impl_not = "graphlab"},
    {"alpha 2: oneDNN's gemm", "Gemm", 13, "p", {AF("alpha", 2.0f)},
     {IN('x', 2, D(8, 37)), IN('c', 2, D(37, 21)), IN('c', 1, D(21))}, .expect = DN,
     .impl_not = "graphlab"},
    {"B a graph input: oneDNN's gemm", "Gemm", 13, "p", {{0}},
     {IN('x', 2, D(8, 37)), IN('x', 2, D(37, 21)), IN('c', 1, D(21))}, .expect = DN,
     .impl_not = "graphlab"},
};

Test(dnnl_ops, gemm_of_few_rows)
{
    run_cases_avx2(few_rows_cases, GL_ARRAY_LEN(few_rows_cases), NULL, 31);
}

/* Gemm of more rows by constant weights (dn_matmul.c many_rows_*): graphlab's kernel on
 * the same packed panels in tiles of 6 rows by 16 columns where K is 128 or more, A read
 * in place, K in blocks of 256; M, K and N off the tile and block sizes (a last tile of
 * fewer rows, a lone last panel, a partial one), C [N] and [1, N], NaN and infinities
 * in A; oneDNN's gemm below K = 128, for A transposed or C [M, N] (an alpha and B
 * computed at run time: few_rows_cases, the same few_rows_take). */
static const op_case many_rows_cases[] = {
    {"9 rows, K 130, N 21, C [N]", "Gemm", 13, "p", {{0}},
     {IN('x', 2, D(9, 130)), IN('c', 2, D(130, 21)), IN('c', 1, D(21))}, .expect = DN,
     .impl_has = "graphlab:avx2 9 rows tiled"},
    {"17 rows, transB, K 300 (two blocks), N 40 (a lone last panel)", "Gemm", 13, "p",
     {AI("transB", 1)}, {IN('x', 2, D(17, 300)), IN('c', 2, D(40, 300)), IN('c', 1, D(40))},
     .expect = DN, .impl_has = "graphlab:avx2 17 rows tiled"},
    {"100 rows, no C, N 37", "Gemm", 13, "p", {{0}},
     {IN('x', 2, D(100, 129)), IN('c', 2, D(129, 37))}, .expect = DN,
     .impl_has = "graphlab:avx2 100 rows tiled"},
    {"197 rows (chunks of rows), K 520, N 70, C [1, N] a graph input", "Gemm", 13, "p", {{0}},
     {IN('x', 2, D(197, 520)), IN('c', 2, D(520, 70)), IN('x', 2, D(1, 70))}, .expect = DN,
     .impl_has = "graphlab:avx2 197 rows tiled"},
    {"NaN and infinities in A", "Gemm", 13, "p", {AI("transB", 1)},
     {IN('s', 2, D(20, 128)), IN('c', 2, D(19, 128)), IN('c', 1, D(19))}, .expect = DN,
     .impl_has = "graphlab:avx2 20 rows tiled"},
    {"K 127: oneDNN's gemm", "Gemm", 13, "p", {{0}},
     {IN('x', 2, D(40, 127)), IN('c', 2, D(127, 24)), IN('c', 1, D(24))}, .expect = DN,
     .impl_not = "graphlab"},
    {"transA: oneDNN's gemm", "Gemm", 13, "p", {AI("transA", 1)},
     {IN('x', 2, D(130, 40)), IN('c', 2, D(130, 24)), IN('c', 1, D(24))}, .expect = DN,
     .impl_not = "graphlab"},
    {"C [M, N]: oneDNN's gemm", "Gemm", 13, "p", {{0}},
     {IN('x', 2, D(40, 130)), IN('c', 2, D(130, 24)), IN('c', 2, D(40, 24))}, .expect = DN,
     .impl_not = "graphlab"},
};

Test(dnnl_ops, gemm_of_many_rows)
{
    run_cases_avx2(many_rows_cases, GL_ARRAY_LEN(many_rows_cases), NULL, 41);
}

/* MatMul of a constant 2-D B on the same kernel (dn_matmul.c many_rows_product): A's
 * matrices stacked as one of rows = A's count / K, 2-D or 3-D, M, K and N off the tile
 * and the K block, NaN and infinities in A; oneDNN's gemm for K under 128, one wide K
 * block over 64 rows or more (many_rows_take), 8 rows (the few-rows kernel is Gemm's
 * only), a B computed at run time or a stack of B. A unit's bias, residual and Relu:
 * test_dnnl_fused.c's matmul_rows_cases. */
static const op_case matmul_rows_cases[] = {
    {"2-D A: 9 rows, K 130, N 21", "MatMul", 13, "p", {{0}},
     {IN('x', 2, D(9, 130)), IN('c', 2, D(130, 21))}, .expect = DN,
     .impl_has = "graphlab:avx2 9 rows tiled"},
    {"3-D A [1, 17, 300] (two K blocks), N 40", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(1, 17, 300)), IN('c', 2, D(300, 40))}, .expect = DN,
     .impl_has = "graphlab:avx2 17 rows tiled"},
    {"3-D A [4, 25, 129]: 100 rows, N 37", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(4, 25, 129)), IN('c', 2, D(129, 37))}, .expect = DN,
     .impl_has = "graphlab:avx2 100 rows tiled"},
    {"3-D A [1, 197, 520], N 70", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(1, 197, 520)), IN('c', 2, D(520, 70))}, .expect = DN,
     .impl_has = "graphlab:avx2 197 rows tiled"},
    {"NaN and infinities in A", "MatMul", 13, "p", {{0}},
     {IN('s', 3, D(2, 10, 128)), IN('c', 2, D(128, 19))}, .expect = DN,
     .impl_has = "graphlab:avx2 20 rows tiled"},
    {"K 127: oneDNN's gemm", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(2, 20, 127)), IN('c', 2, D(127, 24))}, .expect = DN,
     .impl_not = "graphlab"},
    {"one K block over 64 rows and 264 columns: oneDNN's gemm", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(1, 64, 128)), IN('c', 2, D(128, 264))}, .expect = DN,
     .impl_not = "graphlab"},
    {"one K block over 63 rows and 264 columns", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(1, 63, 128)), IN('c', 2, D(128, 264))}, .expect = DN,
     .impl_has = "graphlab:avx2 63 rows tiled"},
    {"8 rows: oneDNN's gemm", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(2, 4, 130)), IN('c', 2, D(130, 24))}, .expect = DN,
     .impl_not = "graphlab"},
    {"B a graph input: oneDNN's gemm", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(2, 20, 130)), IN('x', 2, D(130, 24))}, .expect = DN,
     .impl_not = "graphlab"},
    {"a stack of B: oneDNN's gemm", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(2, 20, 130)), IN('c', 3, D(2, 130, 24))}, .expect = DN,
     .impl_not = "graphlab"},
    /* FusedMatMul: a transposed constant B is packed from its strided view */
    {"FusedMatMul, transB, B [21, 130]", "graphlab.FusedMatMul", 13, "p", {AI("transB", 1)},
     {IN('x', 3, D(2, 20, 130)), IN('c', 2, D(21, 130))}, .expect = DN,
     .impl_has = "graphlab:avx2 40 rows tiled"},
    {"FusedMatMul, alpha 0.5: oneDNN's gemm", "graphlab.FusedMatMul", 13, "p",
     {AF("alpha", 0.5f)}, {IN('x', 3, D(2, 20, 130)), IN('c', 2, D(130, 21))}, .expect = DN,
     .impl_not = "graphlab"},
    {"FusedMatMul, transA: oneDNN's gemm", "graphlab.FusedMatMul", 13, "p", {AI("transA", 1)},
     {IN('x', 2, D(130, 20)), IN('c', 2, D(130, 21))}, .expect = DN, .impl_not = "graphlab"},
};

Test(dnnl_ops, matmul_of_many_rows)
{
    run_cases_avx2(matmul_rows_cases, GL_ARRAY_LEN(matmul_rows_cases), NULL, 43);
}

#ifdef __x86_64__
/* The activations of graphlab's epilogue (dn_avx2.h dn_avx2_act_tile) against ONNX's
 * formulas in double: x over [-10, 10] (a step of 1/64) and NaN, +-inf, -0, +-FLT_MAX,
 * through a tile of 3 rows of 13 columns (a partial vector) 16 floats apart, the columns
 * past 13 untouched. Where the formula gives NaN (gelu at -inf: -inf * 0) the kernel must
 * too; an infinity must be the same; else within 1e-6 + 2e-6 |ref|. Relu keeps oneDNN's
 * NaN -> 0 (the unit knows, dn_special.c). Fused rows: test_dnnl_fused.c. */
static double act_ref(const dn_act *a, double x)
{
    switch (a->kind) {
    case DN_ACT_NONE:
        return x;
    case DN_ACT_RELU:
        return isnan(x) ? 0.0 : fmax(x, 0.0);
    case DN_ACT_GELU_ERF:
        return isinf(x) || isnan(x) ? 0.5 * x * (1.0 + erf(x / sqrt(2.0)))
                                    : 0.5 * x * erfc(-x / sqrt(2.0));
    case DN_ACT_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case DN_ACT_SIGMOID:
        return 1.0 / (1.0 + exp(-x));
    case DN_ACT_SILU:
        return x / (1.0 + exp(-x));
    case DN_ACT_CLIP:
        return isnan(x) ? x : fmin(a->hi, fmax(a->lo, x));
    case DN_ACT_HARDSWISH:
        return x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5));
    }
    return x;
}

static const dn_act epilogue_acts[] = {
    {DN_ACT_RELU, 0, 0},      {DN_ACT_GELU_ERF, 0, 0}, {DN_ACT_GELU_TANH, 0, 0},
    {DN_ACT_SIGMOID, 0, 0},   {DN_ACT_SILU, 0, 0},     {DN_ACT_CLIP, -1.5f, 2.25f},
    {DN_ACT_HARDSWISH, 0, 0},
};

Test(dnnl_ops, epilogue_activations)
{
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return;
    const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, FLT_MAX, -FLT_MAX};
    enum { ROWS = 3, COLS = 13, LD = 16, GRID = 20 * 64 + 1 };
    size_t n = GRID + GL_ARRAY_LEN(specials);
    float *x = gl_xmalloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = i < GRID ? -10.0f + (float)i / 64 : specials[i - GRID];
    for (size_t k = 0; k < GL_ARRAY_LEN(epilogue_acts); k++) {
        const dn_act *a = &epilogue_acts[k];
        double worst = 0;
        for (size_t i0 = 0; i0 < n; i0 += ROWS * COLS) {
            float y[ROWS * LD];
            for (size_t j = 0; j < ROWS * LD; j++) {
                size_t r = j / LD, c = j % LD, i = i0 + r * COLS + c;
                y[j] = c < COLS && i < n ? x[i] : 7.0f; /* past the tile: must stay 7 */
            }
            dn_avx2_act_tile(a, y, LD, ROWS, COLS);
            for (size_t j = 0; j < ROWS * LD; j++) {
                size_t r = j / LD, c = j % LD, i = i0 + r * COLS + c;
                if (c >= COLS || i >= n) {
                    cr_expect(y[j] == 7.0f, "%s: wrote past the tile", dn_act_name(a->kind));
                    continue;
                }
                double want = act_ref(a, x[i]), got = y[j];
                if (isnan(want) || isinf(want)) {
                    cr_expect(isnan(want) ? isnan(got) : got == want, "%s(%g) = %g, want %g",
                              dn_act_name(a->kind), (double)x[i], got, want);
                    continue;
                }
                double err = fabs(got - want);
                cr_expect(err <= 1e-6 + 2e-6 * fabs(want), "%s(%.9g) = %.9g, want %.9g",
                          dn_act_name(a->kind), (double)x[i], got, want);
                worst = err > worst ? err : worst;
            }
        }
        if (getenv("GL_TEST_VERBOSE"))
            printf("%s: max abs error %.3g over [-10, 10]\n", dn_act_name(a->kind), worst);
    }
    free(x);
}
#endif

Test(dnnl_ops, winograd_on_avx2)
{
    run_cases_avx2(wino_cases, GL_ARRAY_LEN(wino_cases), NULL, 37);
    run_cases(wino_refused_cases, GL_ARRAY_LEN(wino_refused_cases), 41);
    tu_omp_threads(2); /* chunks, channel splits and spans shared by two threads */
    run_cases_avx2(wino_cases, GL_ARRAY_LEN(wino_cases), NULL, 43);
}

Test(dnnl_ops, max_pool_windows)
{
    tu_omp_threads(2); /* the kernel splits output rows over the plan's threads */
    run_cases_native(max_pool_cases, GL_ARRAY_LEN(max_pool_cases), "graphlab:avx2", 23);
    run_cases(max_pool_tall_cases, GL_ARRAY_LEN(max_pool_tall_cases), 23);
}

/* Average pooling on graphlab's kernel (dn_pool.c): the same values as
 * the reference with either count_include_pad, so a divisor wrong at any edge (padded
 * rows and columns, ceil_mode's last window, odd sizes) fails a row; DenseNet's 2x2
 * stride 2 and GoogLeNet's 3x3 stride 1 pads 1 windows over nChw8c and nhwc, channels
 * off the block of 8 and past the 32 lanes the direct rows take (the ring of window
 * rows), NaN and infinities, a tensor split over two threads mid-plane. */
#define K2(a, b) AINTS("kernel_shape", 2, a, b)
#define PADS1 AINTS("pads", 4, 1, 1, 1, 1)
static const op_case avg_pool_cases[] = {
    {"2x2 stride 2, 32 channels, 14x14", "AveragePool", 11, "nb",
     {K2(2, 2), AINTS("strides", 2, 2, 2)}, {IN('X', 4, D(1, 32, 14, 14))}, .expect = DN},
    {"2x2 stride 2, 20 channels, odd 15x13, ceil_mode", "AveragePool", 11, "nb",
     {K2(2, 2), AINTS("strides", 2, 2, 2), AI("ceil_mode", 1)},
     {IN('X', 4, D(2, 20, 15, 13))}, .expect = DN},
    {"3x3 stride 1 pads 1, pads not counted", "AveragePool", 11, "nb", {K2(3, 3), PADS1},
     {IN('X', 4, D(1, 24, 9, 11))}, .expect = DN},
    {"3x3 stride 1 pads 1, pads counted", "AveragePool", 11, "nb",
     {K2(3, 3), PADS1, AI("count_include_pad", 1)}, {IN('X', 4, D(1, 24, 9, 11))},
     .expect = DN},
    {"3x3 stride 2 ceil_mode pads 1, a batch of 2", "AveragePool", 11, "nb",
     {K2(3, 3), AINTS("strides", 2, 2, 2), PADS1, AI("ceil_mode", 1)},
     {IN('X', 4, D(2, 16, 12, 10))}, .expect = DN},
    {"2x3 strides 1x2, pads only at the start, counted", "AveragePool", 11, "nb",
     {K2(2, 3), AINTS("strides", 2, 1, 2), AINTS("pads", 4, 1, 1, 0, 0),
      AI("count_include_pad", 1)},
     {IN('X', 4, D(1, 12, 7, 9))}, .expect = DN},
    {"5x5 pads 2 (the ring), not counted", "AveragePool", 11, "nb",
     {K2(5, 5), AINTS("pads", 4, 2, 2, 2, 2)}, {IN('X', 4, D(1, 8, 9, 8))}, .expect = DN},
    {"5x5 pads 2 (the ring), counted", "AveragePool", 11, "nb",
     {K2(5, 5), AINTS("pads", 4, 2, 2, 2, 2), AI("count_include_pad", 1)},
     {IN('X', 4, D(1, 8, 9, 8))}, .expect = DN},
    {"NaN and infinities", "AveragePool", 11, "nb", {K2(3, 3), PADS1},
     {IN('S', 4, D(2, 16, 12, 12))}, .expect = DN},
    {"channels last, 13 channels, 3x3 pads 1 counted", "graphlab.NhwcAveragePool", 13, "p",
     {K2(3, 3), PADS1, AI("count_include_pad", 1)}, {IN('x', 4, D(1, 9, 11, 13))},
     .expect = DN, .out = "plain"},
    {"channels last, 40 channels, 3x3 pads 1 not counted", "graphlab.NhwcAveragePool", 13,
     "p", {K2(3, 3), PADS1}, {IN('x', 4, D(2, 7, 8, 40))}, .expect = DN, .out = "plain"},
    {"channels last, 3 channels, 2x2 stride 2 ceil_mode", "graphlab.NhwcAveragePool", 13, "p",
     {K2(2, 2), AINTS("strides", 2, 2, 2), AI("ceil_mode", 1)},
     {IN('x', 4, D(1, 7, 9, 3))}, .expect = DN, .out = "plain"},
    /* two threads, the output rows split mid-plane */
    {"128 channels, 56x56, 2x2 stride 2", "AveragePool", 11, "nb",
     {K2(2, 2), AINTS("strides", 2, 2, 2)}, {IN('X', 4, D(1, 128, 56, 56))}, .expect = DN},
};
#undef K2
#undef PADS1

Test(dnnl_ops, avg_pool_windows)
{
    tu_omp_threads(2);
    run_cases_native(avg_pool_cases, GL_ARRAY_LEN(avg_pool_cases), "graphlab:avx2 avg", 29);
}

/* Inference BatchNormalization with constant statistics on graphlab's kernel (AVX2,
 * dn_bnorm.c): scale and shift folded once at build, every layout (nChw8c and nCdhw8c
 * with a partial last block, channels-last with a tail of channels past the last 8,
 * plain with planes not a multiple of 8), the spread of a NaN and the infinities, and
 * tensors past 512 KB (streaming stores) on two threads. Statistics that are graph
 * inputs stay on oneDNN. (The Relu of the fused unit: test_dnnl_fused.c.) */
static const op_case batchnorm_avx2_cases[] = {
    {"19 channels, 9x5, a batch of 2", "BatchNormalization", 15, "pnb", {AF("epsilon", 1e-3f)},
     {IN('X', 4, D(2, 19, 9, 5)), BN_PARAMS(19)}, .keeps = true, .impl_has = "graphlab:avx2"},
    {"NaN and infinities", "BatchNormalization", 15, "pnb", {{0}},
     {IN('S', 4, D(1, 21, 6, 7)), BN_PARAMS(21)}, .keeps = true, .impl_has = "graphlab:avx2"},
    {"5-D, 12 channels", "BatchNormalization", 14, "pnb", {{0}},
     {IN('X', 5, D(1, 12, 3, 4, 5)), BN_PARAMS(12)}, .keeps = true, .impl_has = "graphlab:avx2"},
    {"3-D as planes of 33", "BatchNormalization", 14, "p", {{0}},
     {IN('x', 3, D(2, 5, 33)), BN_PARAMS(5)}, .impl_has = "graphlab:avx2 plain"},
    {"2-D", "BatchNormalization", 9, "p", {{0}}, {IN('x', 2, D(6, 40)), BN_PARAMS(40)},
     .impl_has = "graphlab:avx2 plain"},
    {"590 KB: streamed, two threads", "BatchNormalization", 15, "pnb", {{0}},
     {IN('X', 4, D(2, 36, 32, 64)), BN_PARAMS(36)}, .keeps = true, .impl_has = "graphlab:avx2"},
    {"mean and var graph inputs: oneDNN's", "BatchNormalization", 15, "pnb", {{0}},
     {IN('X', 4, D(1, 19, 5, 6)), IN('c', 1, D(19)), IN('c', 1, D(19)), IN('x', 1, D(19)),
      IN('y', 1, D(19))},
     .keeps = true, .impl_not = "graphlab"},
    {"scale a graph input: oneDNN's", "BatchNormalization", 15, "nb", {{0}},
     {IN('X', 4, D(1, 16, 5, 6)), IN('x', 1, D(16)), IN('c', 1, D(16)), IN('c', 1, D(16)),
      IN('p', 1, D(16))},
     .keeps = true, .impl_not = "graphlab"},
};

Test(dnnl_ops, batchnorm_on_avx2)
{
    tu_omp_threads(2);
    run_cases_avx2(batchnorm_avx2_cases, GL_ARRAY_LEN(batchnorm_avx2_cases), NULL, 43);
}

/* ---- Resize, Upsample --------------------------------------------------------------------- */

#define NO_ROI OMITTED
#define SCALES(...) VALS('f', 1, D(4), __VA_ARGS__)
#define SIZES(...) VALS('i', 1, D(4), __VA_ARGS__)

static const op_case resize_cases[] = {
    {"nearest x2, half_pixel, round_prefer_floor", "Resize", 13, "pnb", {{0}},
     {IN('X', 4, D(1, 19, 5, 7)), NO_ROI, SCALES(1, 1, 2, 2)}, .expect = DN, .keeps = true},
    {"nearest x2, asymmetric floor", "Resize", 13, "pn",
     {AS("coordinate_transformation_mode", "asymmetric"), AS("nearest_mode", "floor")},
     {IN('X', 4, D(1, 5, 5, 7)), NO_ROI, SCALES(1, 1, 2, 2)}, .expect = DN, .keeps = true},
    {"opset 10, nearest x(2, 3)", "Resize", 10, "pn", {{0}},
     {IN('X', 4, D(1, 5, 5, 7)), SCALES(1, 1, 2, 3)}, .expect = DN, .keeps = true},
    {"opset 9 Upsample x2", "Upsample", 9, "p", {{0}},
     {IN('x', 4, D(2, 5, 5, 7)), SCALES(1, 1, 2, 2)}, .expect = DN},
    {"opset 7 Upsample, scales attribute (3, 2)", "Upsample", 7, "p",
     {{.name = "scales", .kind = 'F', .n = 4, .fl = {1, 1, 3, 2}}},
     {IN('x', 4, D(1, 5, 5, 7))}, .expect = DN},
    {"linear x2, half_pixel, odd sizes", "Resize", 13, "pnb", {AS("mode", "linear")},
     {IN('X', 4, D(1, 5, 7, 9)), NO_ROI, SCALES(1, 1, 2, 2)}, .expect = DN, .keeps = true},
    {"linear by sizes 7x9 -> 3x4", "Resize", 13, "pn", {AS("mode", "linear")},
     {IN('X', 4, D(1, 5, 7, 9)), NO_ROI, EMPTY_F, SIZES(1, 5, 3, 4)}, .expect = DN},
    {"linear pytorch_half_pixel by sizes", "Resize", 13, "p",
     {AS("mode", "linear"), AS("coordinate_transformation_mode", "pytorch_half_pixel")},
     {IN('x', 4, D(1, 5, 7, 9)), NO_ROI, EMPTY_F, SIZES(1, 5, 11, 5)}, .expect = DN},
    {"nearest /2, round_prefer_ceil: ties go up in both", "Resize", 13, "p",
     {AS("nearest_mode", "round_prefer_ceil")},
     {IN('x', 4, D(1, 5, 8, 10)), NO_ROI, SCALES(1, 1, 0.5, 0.5)}, .expect = DN},
    {"1-D nearest x2", "Resize", 13, "pn", {{0}},
     {IN('X', 3, D(2, 3, 11)), NO_ROI, VALS('f', 1, D(3), 1, 1, 2)}, .expect = DN},
    {"3-D linear x2", "Resize", 13, "pn", {AS("mode", "linear")},
     {IN('X', 5, D(1, 3, 3, 4, 5)), NO_ROI, VALS('f', 1, D(5), 1, 1, 2, 2, 2)}, .expect = DN},
    {"opset 18, axes [2, 3]", "Resize", 18, "p", {AINTS("axes", 2, 2, 3)},
     {IN('x', 4, D(1, 3, 5, 6)), NO_ROI, VALS('f', 1, D(2), 2, 2)}, .expect = DN},
    {"nearest /2, round_prefer_floor: every source a tie", "Resize", 13, "p", {{0}},
     {IN('x', 4, D(1, 5, 8, 10)), NO_ROI, SCALES(1, 1, 0.5, 0.5)}, .expect = REF,
     .why = "maps dim"},
    {"align_corners", "Resize", 13, "p",
     {AS("mode", "linear"), AS("coordinate_transformation_mode", "align_corners")},
     {IN('x', 4, D(1, 5, 7, 9)), NO_ROI, SCALES(1, 1, 2, 2)}, .expect = REF, .why = "maps dim"},
    {"linear x1.7: the scale is not out/in", "Resize", 13, "p", {AS("mode", "linear")},
     {IN('x', 4, D(1, 5, 7, 9)), NO_ROI, SCALES(1, 1, 1.7, 1.7)}, .expect = REF,
     .why = "maps dim"},
    {"channels resized", "Resize", 13, "p", {{0}},
     {IN('x', 4, D(1, 5, 7, 9)), NO_ROI, SCALES(1, 2, 1, 1)}, .expect = REF, .why = "dim 1"},
    {"cubic", "Resize", 13, "p", {AS("mode", "cubic")},
     {IN('x', 4, D(1, 5, 7, 9)), NO_ROI, SCALES(1, 1, 2, 2)}, .expect = REF, .why = "cubic"},
    /* a few integers: the shape guard keys them by value (issue 22) */
    {"sizes computed at run time", "Resize", 13, "pn", {{0}},
     {IN('X', 4, D(1, 5, 7, 9)), NO_ROI, EMPTY_F, VALS('I', 1, D(4), 1, 5, 14, 18)},
     .expect = DN, .keeps = true},
    {"scales computed at run time", "Resize", 13, "p", {{0}},
     {IN('x', 4, D(1, 5, 7, 9)), NO_ROI, IN('y', 1, D(4))}, .expect = REF,
     .why = "scales computed at run time"},
};

Test(dnnl_ops, resize)
{
    run_cases(resize_cases, GL_ARRAY_LEN(resize_cases), 16);
}

/* torch's F.interpolate(x, size=skip.shape[2:]) with a symbolic batch: sizes =
 * Shape(x)[0:2] ++ Shape(skip)[2:4], computed each run. The Resize runs on oneDNN, built
 * from the sizes of its first run; a run with another batch, then one with the same x but
 * another skip size (only the sizes' values differ), build again, and each agrees with
 * the reference; a run like the last builds nothing. */
static gl_value *shape_part(gl_graph *g, gl_value *x, int64_t lo, int64_t hi)
{
    gl_value *in[3] = {tu_node(g, "Shape", NULL, 1, x)->outputs[0],
                       tu_const_i64(g, "lo", 1, (int64_t[]){1}, &lo), tu_const_i64(g, "hi", 1, (int64_t[]){1}, &hi)};
    return gl_add_node(g, "Slice", "", NULL, in, 3, 1)->outputs[0];
}

static gl_model *resize_to_skip_model(const char *mode)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){1, 16, 6, 5});
    gl_value *skip = tu_input(g, "skip", GL_DT_FLOAT, 4, (int64_t[]){1, 3, 12, 10});
    gl_dim_set_sym(&x->type.shape.dims[0], "N");
    gl_dim_set_sym(&skip->type.shape.dims[0], "N"); /* skip [N,3,H,W] */
    gl_dim_set_sym(&skip->type.shape.dims[2], "H");
    gl_dim_set_sym(&skip->type.shape.dims[3], "W");
    gl_node *cat = tu_node(g, "Concat", NULL, 2, shape_part(g, x, 0, 2),
                           shape_part(g, skip, 2, 4));
    gl_node_set_attr_int(cat, "axis", 0);
    gl_value *in[4] = {x, NULL, NULL, cat->outputs[0]};
    gl_node *rs = gl_add_node(g, "Resize", "", "resize", in, 4, 1);
    gl_node_set_attr_string(rs, "mode", mode);
    tu_output(g, rs->outputs[0]);
    return m;
}

Test(dnnl_ops, resize_to_sizes_computed_each_run)
{
    static const int64_t runs[][3] = {{1, 12, 10}, {2, 12, 10}, {2, 18, 15}, {2, 18, 15}};
    static const char *const modes[] = {"nearest", "linear"};
    for (size_t k = 0; k < 2 * GL_ARRAY_LEN(modes); k++) {
        const char *mode = modes[k % 2], *layout = tu_layout_name(k < 2 ? 'p' : 'n');
        gl_model *m = resize_to_skip_model(mode);
        gl_exec *dn = NULL;
        uint32_t seed = 22;
        for (size_t r = 0; r < GL_ARRAY_LEN(runs); r++) {
            char what[96];
            snprintf(what, sizeof(what), "%s, %s, run %zu", mode, layout, r + 1);
            const int64_t *run = runs[r]; /* batch, skip H, skip W */
            gl_tensor *in[2] = {tu_random_f32(4, (int64_t[]){run[0], 16, 6, 5}, &seed),
                                tu_random_f32(4, (int64_t[]){run[0], 3, run[1], run[2]}, &seed)};
            gl_tensor *want = NULL, *got = NULL;
            gl_exec_free(tu_exec_run(m, "ref", NULL, in, 2, &want, 1, what));
            if (!dn)
                dn = tu_exec_run(m, "dnnl", layout, in, 2, &got, 1, what);
            else if (r == 3)
                tu_exec_rerun_cached(dn, (const gl_tensor *const *)in, 2, &got, 1, what);
            else
                cr_assert_eq(gl_exec_run(dn, (const gl_tensor *const *)in, 2, &got, 1), GL_OK,
                             "%s: %s", what, gl_error_message());
            gl_exec_stats st;
            gl_exec_get_stats(dn, &st);
            cr_expect(r == 3 || st.builds > 0, "%s: a new shape or sizes builds", what);
            const gl_plan_entry *en = tu_plan_entry(dn, "resize", 0);
            cr_expect(en && !strcmp(en->backend, "dnnl") && !en->fell_back,
                      "%s: the Resize runs on oneDNN (%s)", what, en ? en->info.note : "none");
            gl_compare cmp;
            gl_compare_tensors(got, want, RTOL, ATOL, &cmp);
            char line[256];
            gl_compare_format(&cmp, line, sizeof(line));
            cr_expect(cmp.ok && got->dims[2] == run[1] && got->dims[3] == run[2],
                      "%s: dnnl vs ref: %s", what, line);
            gl_tensor_free(got);
            gl_tensor_free(want);
            gl_tensor_free(in[0]);
            gl_tensor_free(in[1]);
        }
        gl_exec_free(dn);
        gl_model_free(m);
    }
}

/* ---- graphlab FusedMatMul: transposed operands read through swapped strides ---------- */

#define FMM "graphlab.FusedMatMul"
#define TA AI("transA", 1)
#define TB AI("transB", 1)

static const op_case fused_matmul_cases[] = {
    {"2-D, transA", FMM, 13, "p", {TA}, {IN('x', 2, D(7, 5)), IN('x', 2, D(7, 9))}, .expect = DN},
    {"2-D, transB", FMM, 13, "p", {TB}, {IN('x', 2, D(5, 7)), IN('x', 2, D(9, 7))}, .expect = DN},
    {"2-D, both, alpha 0.5", FMM, 13, "p", {TA, TB, AF("alpha", 0.5f)},
     {IN('x', 2, D(7, 5)), IN('x', 2, D(9, 7))}, .expect = DN},
    {"2-D, neither", FMM, 13, "p", {{0}}, {IN('x', 2, D(5, 7)), IN('x', 2, D(7, 9))}, .expect = DN},
    {"2-D, constant B transposed (packed once)", FMM, 13, "p", {TB},
     {IN('x', 2, D(5, 16)), IN('c', 2, D(24, 16))}, .expect = DN},
    {"3-D, transB (attention scores)", FMM, 13, "p", {TB},
     {IN('x', 3, D(4, 16, 32)), IN('x', 3, D(4, 16, 32))}, .expect = DN},
    {"3-D, transA", FMM, 13, "p", {TA}, {IN('x', 3, D(2, 6, 5)), IN('x', 3, D(2, 6, 3))}, .expect = DN},
    {"3-D, both", FMM, 13, "p", {TA, TB}, {IN('x', 3, D(3, 6, 5)), IN('x', 3, D(3, 4, 6))}, .expect = DN},
    {"4-D, transB", FMM, 13, "p", {TB},
     {IN('x', 4, D(2, 3, 5, 8)), IN('x', 4, D(2, 3, 7, 8))}, .expect = DN},
    {"4-D, both, alpha 2", FMM, 13, "p", {TA, TB, AF("alpha", 2.0f)},
     {IN('x', 4, D(2, 3, 8, 5)), IN('x', 4, D(2, 3, 7, 8))}, .expect = DN},
    {"4-D by 2-D constant, transB: batch broadcast", FMM, 13, "p", {TB},
     {IN('x', 4, D(2, 3, 5, 8)), IN('c', 2, D(6, 8))}, .expect = DN},
    {"4-D A transposed, 3-D B: batch broadcast", FMM, 13, "p", {TA},
     {IN('x', 4, D(2, 1, 8, 5)), IN('x', 3, D(3, 8, 4))}, .expect = DN},
    {"3-D by 4-D, both: broadcast on both sides", FMM, 13, "p", {TA, TB},
     {IN('x', 3, D(3, 8, 5)), IN('x', 4, D(2, 1, 4, 8))}, .expect = DN},
    {"1-D B, transA", FMM, 13, "p", {TA}, {IN('x', 3, D(2, 6, 5)), IN('x', 1, D(6))}, .expect = DN},
};

Test(dnnl_ops, fused_matmul)
{
    run_cases(fused_matmul_cases, GL_ARRAY_LEN(fused_matmul_cases), 91);
}

/* ---- NaN and infinities (issue 26) ----------------------------------------------------------
 * ONNX keeps a NaN through Relu, Clip, Max, pooling... where oneDNN's kernels drop it
 * (maxps keeps its second operand when either is NaN: relu(NaN) = 0, clip(NaN) = its
 * lower bound, max pooling skips it) or make one (pow(-Inf, 0.5) through sqrt). Every
 * unary and reducing op of the backend's tables, on inputs with -0, NaN, +Inf and -Inf
 * planted, against the reference; the node still runs on oneDNN (a run with such an input
 * takes the reference kernel where the primitive would be wrong). Plain tensors are of
 * 4096 elements or more, or oneDNN would not run them at all. */
#define SP4 IN('S', 4, D(2, 16, 12, 12))
static const op_case special_cases[] = {
    {"", "Relu", 13, "pnb", {{0}}, {SP4}, .expect = DN, .keeps = true},
    {"alpha 0", "LeakyRelu", 13, "pnb", {AF("alpha", 0)}, {SP4}, .expect = DN, .keeps = true},
    {"alpha 0.1", "LeakyRelu", 13, "pnb", {AF("alpha", 0.1f)}, {SP4}, .expect = DN},
    {"", "Elu", 13, "pnb", {{0}}, {SP4}, .expect = DN},
    {"", "Selu", 13, "p", {{0}}, {SP4}, .expect = DN},
    {"", "Sigmoid", 13, "pnb", {{0}}, {SP4}, .expect = DN},
    /* 4 channels, 1 channel: off the block of both nChw16c (AVX-512) and nChw8c (AVX2),
     * where oneDNN's eltwise is its reference code: the plain tensor, converted first */
    {"4 channels blocked: on the plain tensor", "Sigmoid", 13, "b", {{0}},
     {IN('S', 4, D(4, 4, 16, 16))}, .expect = DN, .why = "plain: oneDNN's kernel",
     .out = "plain"},
    {"1 channel blocked: on the plain tensor", "Sigmoid", 13, "b", {{0}},
     {IN('X', 4, D(3, 1, 20, 24))}, .expect = DN, .why = "plain: oneDNN's kernel",
     .out = "plain"},
    {"1 channel blocked, a second step: on the plain tensor", "HardSigmoid", 6, "b", {{0}},
     {IN('X', 4, D(3, 1, 20, 24))}, .expect = DN, .why = "plain: oneDNN's kernel",
     .out = "plain"},
    {"", "Tanh", 13, "pnb", {{0}}, {SP4}, .expect = DN, .rtol = 1e-3,
     .avx2_impl = "graphlab:avx2 tanh"},
    {"", "HardSigmoid", 6, "pnb", {{0}}, {SP4}, .expect = DN},
    {"", "HardSwish", 14, "pnb", {{0}}, {SP4}, .expect = DN},
    {"", "Exp", 13, "pnb", {{0}}, {SP4}, .expect = DN, .rtol = 1e-3},
    {"", "Log", 13, "p", {{0}}, {IN('s', 2, D(64, 128))}, .expect = DN, .rtol = 1e-3},
    {"", "Sqrt", 13, "p", {{0}}, {IN('s', 2, D(64, 128))}, .expect = DN},
    {"", "Abs", 13, "pnb", {{0}}, {SP4}, .expect = DN},
    {"", "Softplus", 13, "pnb", {{0}}, {SP4}, .expect = DN, .rtol = 1e-3},
    {"", "Round", 13, "p", {{0}}, {SP4}, .expect = DN},
    {"", "Neg", 13, "p", {{0}}, {SP4}, .expect = DN},
    {"", "Reciprocal", 13, "p", {{0}}, {IN('s', 2, D(64, 128))}, .expect = DN},
    {"min and max", "Clip", 13, "pnb", {{0}},
     {SP4, VALS('f', 0, D(0), 0), VALS('f', 0, D(0), 6)}, .expect = DN, .keeps = true},
    {"min only", "Clip", 13, "p", {{0}}, {SP4, VALS('f', 0, D(0), -0.5)}, .expect = DN},
    {"neither", "Clip", 13, "p", {{0}}, {SP4}, .expect = DN},
    {"opset 6", "Clip", 6, "pnb", {AF("min", -1), AF("max", 1)}, {SP4}, .expect = DN},
    {"exponent 0.5", "Pow", 13, "p", {{0}}, {SP4, VALS('f', 0, D(0), 0.5)}, .expect = DN},
    {"exponent 2", "Pow", 13, "p", {{0}}, {SP4, VALS('f', 0, D(0), 2)}, .expect = DN},
    {"exact", "Gelu", 20, "p", {{0}}, {SP4}, .expect = DN, .rtol = 1e-3, .atol = 1e-5},
    {"", "graphlab.Silu", 13, "pnb", {{0}}, {SP4}, .expect = DN, .atol = 1e-6,
     .avx2_impl = "graphlab:avx2 silu"},
    {"", "graphlab.GeluTanh", 13, "p", {{0}}, {SP4}, .expect = DN, .rtol = 1e-3,
     .atol = 1e-5, .avx2_impl = "graphlab:avx2 gelu_tanh"},
    {"two inputs", "Max", 13, "pnb", {{0}}, {SP4, IN('X', 4, D(2, 16, 12, 12))},
     .expect = DN},
    {"the NaN in the second input", "Min", 13, "pnb", {{0}},
     {IN('X', 4, D(2, 16, 12, 12)), SP4}, .expect = DN},
    {"a scalar constant", "Max", 13, "p", {{0}}, {SP4, VALS('f', 1, D(1), 0)}, .expect = DN},
    {"three inputs", "Min", 13, "pn", {{0}}, {SP4, IN('X', 4, D(2, 16, 12, 12)), SP4},
     .expect = DN},
    {"two inputs", "Sum", 13, "pnb", {{0}}, {SP4, SP4}, .expect = DN},
    {"", "PRelu", 16, "pnb", {{0}}, {SP4, IN('c', 3, D(16, 1, 1))}, .expect = DN},
    {"a constant slope of 0: a relu", "PRelu", 16, "pnb", {{0}}, {SP4, VALS('f', 1, D(1), 0)},
     .expect = DN},
    {"2x2 stride 2", "MaxPool", 12, "pnb", {AINTS("kernel_shape", 2, 2, 2),
     AINTS("strides", 2, 2, 2)}, {SP4}, .expect = DN},
    {"2x2 read by an Abs in its layout", "MaxPool", 12, "nb", {AINTS("kernel_shape", 2, 2, 2)},
     {SP4}, .expect = DN, .then = "Abs"},
    {"3x3 pads 1", "MaxPool", 12, "pnb", {AINTS("kernel_shape", 2, 3, 3),
     AINTS("pads", 4, 1, 1, 1, 1)}, {SP4}, .expect = DN},
    {"2x2", "AveragePool", 11, "pnb", {AINTS("kernel_shape", 2, 2, 2)}, {SP4},
     .expect = DN},
    {"", "GlobalMaxPool", 1, "pnb", {{0}}, {SP4}, .expect = DN},
    {"", "GlobalAveragePool", 1, "pnb", {{0}}, {SP4}, .expect = DN},
    {"last axis", "ReduceMax", 13, "p", {AINTS("axes", 1, -1)}, {SP4}, .expect = DN},
    {"last axis", "ReduceMin", 13, "p", {AINTS("axes", 1, -1)}, {SP4}, .expect = DN},
    {"spatial axes of nhwc: a pooling", "ReduceMax", 13, "n", {AINTS("axes", 2, 2, 3)},
     {SP4}, .expect = DN, .why = "pooling"},
    {"last axis", "ReduceSum", 13, "p", {AINTS("axes", 1, -1)}, {SP4}, .expect = DN},
    {"last axis", "Softmax", 13, "p", {{0}}, {SP4}, .expect = DN},
    {"axis 1 of nhwc / blocked", "Softmax", 13, "nb", {AI("axis", 1)}, {SP4}, .expect = DN},
    {"last axis", "LogSoftmax", 13, "p", {{0}}, {SP4}, .expect = DN},
    {"", "BatchNormalization", 15, "pnb", {{0}}, {SP4, BN_PARAMS(16)}, .expect = DN},
    {"axis -1", "LayerNormalization", 17, "p", {{0}},
     {SP4, IN('c', 1, D(12)), IN('c', 1, D(12))}, .expect = DN, .rtol = 1e-3, .atol = 1e-4},
};
#undef SP4

Test(dnnl_ops, nan_and_infinities)
{
    run_cases(special_cases, GL_ARRAY_LEN(special_cases), 26);
}

/* A oneDNN node vouches for its output when its inputs held no NaN and it makes none, and
 * the Relu that reads a vouched tensor does not look at it again; a Div makes them (here
 * 0 / 0 where the first Relu gave 0): what it outputs is looked at, and the second Relu's
 * NaN stays NaN. Finite inputs, then the same with NaN, then finite again, one plan. */
Test(dnnl_ops, a_nan_made_inside_the_model_is_seen)
{
    uint32_t seed = 27;
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    int64_t d[4] = {1, 16, 16, 16};
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, d);
    gl_node *first = tu_node(g, "Relu", "relu", 1, x);
    gl_node *div = tu_node(g, "Div", "div", 2, first->outputs[0],
                           tu_const_f32(g, "zero", 0, NULL, (float[]){0.0f}));
    tu_output(g, tu_node(g, "Relu", "op", 1, div->outputs[0])->outputs[0]);
    gl_tensor *in = tu_random_f32(4, d, &seed), *special = tu_with_specials(in);
    gl_tensor *runs[3] = {in, special, in}, *want = NULL, *got = NULL;
    gl_exec *dn = NULL;
    for (int i = 0; i < 3; i++) {
        gl_exec_free(tu_exec_run(m, "ref", NULL, &runs[i], 1, &want, 1, "reference"));
        if (i == 0)
            dn = tu_exec_run(m, "dnnl", "plain", &runs[i], 1, &got, 1, "relu, div, relu");
        else
            tu_exec_rerun_cached(dn, (const gl_tensor *const *)&runs[i], 1, &got, 1,
                                 "relu, div, relu");
        gl_compare r;
        gl_compare_tensors(got, want, RTOL, ATOL, &r);
        char line[256];
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok, "run %d: dnnl vs ref: %s", i + 1, line);
        gl_tensor_free(got);
        gl_tensor_free(want);
        got = want = NULL;
    }
    const gl_plan_entry *en = tu_plan_entry(dn, "op", -1);
    cr_expect(en && !strcmp(en->backend, "dnnl") && strstr(en->info.impl, "jit"),
              "the second Relu runs on oneDNN: %s", en ? en->info.impl : "(no entry)");
    gl_exec_free(dn);
    gl_tensor_free(in);
    gl_tensor_free(special);
    gl_model_free(m);
}

/* A look at a large input is spread over the threads (dn_special.c, SCAN_SPLIT floats a
 * work item): a NaN or an infinity in any item, the last, partial one too, sends the
 * run to the reference kernel, whose Relu keeps the NaN and the infinity. */
Test(dnnl_ops, a_look_over_threads_sees_every_part)
{
    tu_omp_threads(2);
    uint32_t seed = 28;
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    int64_t d[4] = {2, 9, 150, 151}; /* 407700 floats: 6 whole items and a part */
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, d);
    tu_output(g, tu_node(g, "Relu", "op", 1, x)->outputs[0]);
    gl_tensor *in = tu_random_f32(4, d, &seed);
    int64_t at[] = {-1, 407699, 3 * 65536 + 17, 65535, -1};
    float what[] = {0.0f, NAN, INFINITY, -INFINITY, 0.0f};
    gl_exec *dn = NULL;
    for (size_t i = 0; i < GL_ARRAY_LEN(at); i++) {
        gl_tensor *run = gl_tensor_share(in), *want = NULL, *got = NULL;
        if (at[i] >= 0)
            ((float *)gl_tensor_make_writable(run))[at[i]] = what[i];
        gl_exec_free(tu_exec_run(m, "ref", NULL, &run, 1, &want, 1, "reference"));
        if (!dn)
            dn = tu_exec_run(m, "dnnl", "plain", &run, 1, &got, 1, "relu");
        else
            tu_exec_rerun_cached(dn, (const gl_tensor *const *)&run, 1, &got, 1, "relu");
        gl_compare r;
        gl_compare_tensors(got, want, RTOL, ATOL, &r);
        char line[256];
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok, "run %zu (%g at %lld): dnnl vs ref: %s", i + 1, (double)what[i],
                  (long long)at[i], line);
        gl_tensor_free(got);
        gl_tensor_free(want);
        gl_tensor_free(run);
    }
    gl_exec_free(dn);
    gl_tensor_free(in);
    gl_model_free(m);
}

/* ---- threads per primitive, and a stack of matrices by one matrix as one product ------- */

/* Below ~16 µs of one thread's work a primitive is made and run on one thread, the plan's
 * note says so; above, it keeps the plan's threads. Either side agrees with the reference.
 * A MatMul of a stack of matrices by one matrix runs as one [batch * M, K] product. */
#define ONE "1 thread"
static const op_case thread_cases[] = {
    {"16K elements: one thread", "Add", 13, "p", {{0}},
     {IN('x', 3, D(4, 64, 64)), IN('x', 3, D(4, 64, 64))}, .expect = DN, .why = ONE},
    {"256K elements: the plan's threads", "Add", 13, "p", {{0}},
     {IN('x', 3, D(8, 64, 512)), IN('x', 3, D(8, 64, 512))}, .expect = DN, .not_why = ONE},
    {"per-channel bias, 16K elements: one thread", "Add", 13, "p", {{0}},
     {IN('x', 3, D(4, 64, 64)), IN('c', 1, D(64))}, .expect = DN, .why = ONE},
    {"16K elements: one thread", "Relu", 13, "p", {{0}}, {IN('x', 2, D(128, 128))},
     .expect = DN, .why = ONE},
    {"256K elements: the plan's threads", "Relu", 13, "p", {{0}}, {IN('x', 2, D(512, 512))},
     .expect = DN, .not_why = ONE},
    {"16K elements: one thread", "Softmax", 13, "p", {AI("axis", -1)},
     {IN('x', 3, D(8, 16, 128))}, .expect = DN, .why = ONE},
    {"[16,1,128] by [128,384]: one product of 16 rows, one thread", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(16, 1, 128)), IN('c', 2, D(128, 384))}, .expect = DN, .why = ONE},
    {"[1,1024] by [1024,1000]: one row, but 4 MB of weights to read: the plan's threads",
     "MatMul", 13, "p", {{0}}, {IN('x', 2, D(1, 1024)), IN('c', 2, D(1024, 1000))},
     .expect = DN, .not_why = ONE},
    {"[4,32,256] by [256,512]: one product of 128 rows, the plan's threads", "MatMul", 13, "p",
     {{0}}, {IN('x', 3, D(4, 32, 256)), IN('c', 2, D(256, 512))}, .expect = DN, .not_why = ONE},
    {"4-D by a 2-D input", "MatMul", 13, "p", {{0}},
     {IN('x', 4, D(2, 3, 5, 8)), IN('x', 2, D(8, 6))}, .expect = DN},
    {"3-D by 1-D", "MatMul", 13, "p", {{0}}, {IN('x', 3, D(2, 5, 8)), IN('c', 1, D(8))},
     .expect = DN},
    {"3-D by 3-D: a batch of products", "MatMul", 13, "p", {{0}},
     {IN('x', 3, D(4, 16, 32)), IN('x', 3, D(4, 32, 16))}, .expect = DN},
    {"4-D in the plan's layout by a constant", "MatMul", 13, "pnb", {{0}},
     {IN('X', 4, D(1, 8, 4, 16)), IN('c', 2, D(16, 24))}, .expect = DN},
    {"3-D by transposed 2-D constant", FMM, 13, "p", {TB},
     {IN('x', 3, D(16, 1, 128)), IN('c', 2, D(384, 128))}, .expect = DN, .why = ONE},
};
#undef ONE

Test(dnnl_ops, threads_per_primitive)
{
    tu_omp_threads(2); /* the rule needs a plan of more than one thread */
    run_cases(thread_cases, GL_ARRAY_LEN(thread_cases), 23);
}

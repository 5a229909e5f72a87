/* test_dnnl_qprod.c — int8 products on the oneDNN backend (issue 21, point 3): QDQ groups
 * (graphlab.fused calls whose body is DequantizeLinear x/w[/b], Conv|MatMul|Gemm [+ Add],
 * activations, QuantizeLinear: what the qdq pass makes, built here by hand) and ONNX's
 * QLinearConv / QLinearMatMul nodes, against the reference run of the same model; and QAdd
 * groups (DequantizeLinear a, DequantizeLinear b, Add, activations, QuantizeLinear: the
 * residual additions between the int8 convolutions) as one int8 binary primitive.
 *
 * Each row is one product. Its int8 output on dnnl must agree with the reference's within
 * one step of y_scale, and exactly wherever the exact value is not within 1e-3 of a step
 * of a rounding tie: the exact value is the float model's (the same DequantizeLinears,
 * head and activations without the QuantizeLinear, on the reference), divided by
 * y_scale; the wanted step is saturate(round half to even + y_zero), which the reference
 * must give too. With power-of-two scales (`pow2`) every float of the reference is exact:
 * the ties are real ties, and dnnl must equal the reference everywhere (round half to
 * even, the zero point added after the rounding). The plan must show the product as the
 * row expects:
 *   INT8     one entry on dnnl whose implementation is a oneDNN kernel (no "ref"), a group
 *            with its note "int8: ..." naming the members;
 *   BODY     a group refused at the claim: the executor runs the body, the note says `what`;
 *   MEMBERS  a group refused at its first run (the claim did not know the source's dims):
 *            "ref (members)", the note saying `what`;
 *   REF      a QLinear node on its reference kernel, the note saying `what`.
 * A second run builds nothing and reorders no constant (the weights packed once).
 */
#define TU_CASE_SHORTHANDS
#include "exec/exec.h"
#include "ops/opkit.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { INT8, BODY, MEMBERS, REF } expect_t;

typedef struct qcase {
    const char *name;
    char head;          /* 'c' Conv, 'm' MatMul, 'g' Gemm, 'a' Add groups; 'C' QLinearConv,
                         * 'M' QLinearMatMul nodes */
    int rank;
    int64_t xd[4];      /* the source's dims (Conv: N, C, H, W) */
    int64_t oc;         /* output channels: Conv M, MatMul/Gemm N */
    int kernel, stride, pad, group; /* Conv */
    bool trans_b;       /* Gemm */
    gl_dtype xt, yt;    /* u8 or s8 */
    int x_zero, y_zero;
    bool per_channel;   /* the weights' scales */
    bool bias;
    const char *acts[3]; /* Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid */
    bool pow2;          /* power-of-two scales: exact ties */
    double y_scale;     /* 0: the row's default */
    char bad;           /* 'z' a weight zero point is not 0, 's' x_scale a graph input,
                         * 'a' Gemm's alpha 2 */
    bool unknown;       /* the source's dims unknown to the IR: the first run builds */
    /* Add groups: b's dtype, zero point and dims (b_rank 0: a's); a is x */
    gl_dtype bt;
    int b_zero, b_rank;
    int64_t bd[4];
    expect_t expect;
    const char *what;
} qcase;

#define U8_ GL_DT_UINT8
#define S8_ GL_DT_INT8
#define CONV(n_, c_, hw_, m_, k_, s_, p_, g_) 'c', 4, {n_, c_, hw_, hw_}, m_, k_, s_, p_, g_
#define QADD(n_, c_, h_, w_) 'a', 4, {n_, c_, h_, w_}

/* ---- building one row ------------------------------------------------------------------- */

static uint32_t seed = 21;

static int rnd(int lo, int hi) /* in [lo, hi] */
{
    seed = seed * 1664525u + 1013904223u;
    return lo + (int)((seed >> 8) % (uint32_t)(hi - lo + 1));
}

/* Nodes go into a function's body (the group) or straight into the graph (the float
 * model, and QLinear nodes). */
typedef struct bld {
    gl_model *m;
    gl_graph *g;        /* where nodes go */
    gl_function *f;     /* NULL: into the graph */
    gl_value *actual[24];
    size_t n_act;
} bld;

static int n_names; /* names of constants and nodes: unique in the process */

/* v, a value of the model's graph, as the nodes read it. */
static gl_value *use(bld *b, gl_value *v)
{
    if (!b->f || !v)
        return v;
    char name[16];
    snprintf(name, sizeof(name), "F%zu", b->n_act);
    gl_value *fv = gl_add_value(b->f->body, name);
    gl_graph_add_input(b->f->body, fv);
    b->actual[b->n_act++] = v;
    return fv;
}

/* A constant of the model's graph, as the nodes read it. */
static gl_value *konst(bld *b, gl_dtype dt, int rank, const int64_t *dims, const void *data)
{
    char name[16];
    snprintf(name, sizeof(name), "k%d", n_names++);
    int64_t none = 0;
    return use(b, gl_add_initializer(b->m->graph, name,
                                     tu_tensor_of(dt, rank, rank ? dims : &none, data)));
}

static gl_value *scalar_f(bld *b, float v)
{
    return konst(b, GL_DT_FLOAT, 0, NULL, &v);
}

static gl_value *scalar_q(bld *b, gl_dtype dt, int v)
{
    uint8_t u = (uint8_t)v;
    int8_t s = (int8_t)v;
    return konst(b, dt, 0, NULL, dt == GL_DT_UINT8 ? (const void *)&u : (const void *)&s);
}

static gl_node *node(bld *b, const char *op, gl_value **ins, size_t n)
{
    char name[16];
    snprintf(name, sizeof(name), "n%d", n_names++);
    return gl_add_node(b->g, op, "", name, ins, n, 1);
}

/* The row's parameters, drawn once so that both models hold the same numbers. */
typedef struct qparams {
    float x_scale, y_scale, w_scale[32];
    int64_t wd[4], w_count, w_rank, channels;
    int8_t w[4096];
    int32_t bias[32];
    float b_scale[32];
} qparams;

static qparams draw_params(const qcase *c)
{
    qparams p;
    memset(&p, 0, sizeof(p));
    bool conv = c->head == 'c' || c->head == 'C';
    int64_t k = conv ? c->xd[1] / c->group : c->xd[c->rank - 1];
    p.channels = c->oc;
    if (conv) {
        int64_t wd[4] = {c->oc, k, c->kernel, c->kernel};
        memcpy(p.wd, wd, sizeof(wd));
        p.w_rank = 4;
    } else {
        p.wd[0] = c->trans_b ? c->oc : k;
        p.wd[1] = c->trans_b ? k : c->oc;
        p.w_rank = 2;
    }
    p.w_count = 1;
    for (int i = 0; i < p.w_rank; i++)
        p.w_count *= p.wd[i];
    for (int64_t i = 0; i < p.w_count; i++)
        p.w[i] = (int8_t)rnd(-9, 9);
    p.x_scale = c->pow2 ? 1.0f / 16 : 0.0173f;
    for (int64_t i = 0; i < c->oc; i++) {
        p.w_scale[i] = c->pow2 ? ldexpf(1.0f, -3 - (int)(c->per_channel ? i % 3 : 0))
                               : 0.0031f * (c->per_channel ? 1.0f + 0.13f * (float)(i % 5) : 1);
        p.bias[i] = rnd(-3000, 3000);
        p.b_scale[i] = p.x_scale * p.w_scale[i];
    }
    p.y_scale = c->y_scale ? (float)c->y_scale : c->pow2 ? 0.25f : 0.0567f;
    if (c->head == 'a')
        p.w_scale[0] = c->pow2 ? 1.0f / 8 : 0.0219f; /* b's scale */
    return p;
}

/* The activations after v, in real units. */
static gl_value *add_acts(bld *b, const qcase *c, const qparams *p, gl_value *v)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(c->acts) && c->acts[i]; i++) {
        if (strcmp(c->acts[i], "Clip") == 0) {
            v = node(b, "Clip", (gl_value *[]){v, scalar_f(b, -20 * p->y_scale),
                                               scalar_f(b, 40 * p->y_scale)}, 3)->outputs[0];
            continue;
        }
        gl_node *n = node(b, c->acts[i], &v, 1);
        if (strcmp(c->acts[i], "LeakyRelu") == 0)
            tu_apply_attrs(n, (tu_attr[]){AF("alpha", 0.25f), {0}});
        v = n->outputs[0];
    }
    return v;
}

/* The head and what follows it, on dequantized x; `quantize`: then the QuantizeLinear. */
static gl_value *add_product(bld *b, const qcase *c, const qparams *p, gl_value *xq,
                             bool quantize)
{
    bool conv = c->head == 'c' || c->head == 'C', gemm = c->head == 'g';
    int64_t oc = c->oc;
    int8_t wz[32] = {0};
    if (c->bad == 'z')
        wz[1] = 1;
    int32_t bz[32] = {0};
    xq = use(b, xq); /* the call's inputs in the order the body reads them: x_q first */
    gl_value *xs = c->bad == 's' ? tu_input(b->m->graph, "xs", GL_DT_FLOAT, 0, NULL) : NULL;
    xs = xs ? use(b, xs) : scalar_f(b, p->x_scale);
    gl_value *x = node(b, "DequantizeLinear",
                       (gl_value *[]){xq, xs, scalar_q(b, c->xt, c->x_zero)}, 3)->outputs[0];
    int64_t nsc = c->per_channel ? oc : 1;
    gl_node *dqw = node(b, "DequantizeLinear",
                        (gl_value *[]){konst(b, GL_DT_INT8, (int)p->w_rank, p->wd, p->w),
                                       konst(b, GL_DT_FLOAT, c->per_channel, &nsc, p->w_scale),
                                       konst(b, GL_DT_INT8, c->per_channel, &nsc, wz)}, 3);
    int axis = conv || (gemm && c->trans_b) ? 0 : 1;
    tu_apply_attrs(dqw, (tu_attr[]){AI("axis", axis), {0}});
    gl_value *bias = NULL;
    if (c->bias) {
        gl_node *dqb = node(b, "DequantizeLinear",
                            (gl_value *[]){konst(b, GL_DT_INT32, 1, &oc, p->bias),
                                           konst(b, GL_DT_FLOAT, c->per_channel, &nsc,
                                                 p->b_scale),
                                           konst(b, GL_DT_INT32, c->per_channel, &nsc, bz)}, 3);
        tu_apply_attrs(dqb, (tu_attr[]){AI("axis", 0), {0}});
        bias = dqb->outputs[0];
    }
    gl_value *y;
    if (conv) {
        gl_node *h = node(b, "Conv", (gl_value *[]){x, dqw->outputs[0], bias}, bias ? 3 : 2);
        tu_apply_attrs(h, (tu_attr[]){AI("group", c->group),
                                      AINTS("strides", 2, c->stride, c->stride),
                                      AINTS("pads", 4, c->pad, c->pad, c->pad, c->pad), {0}});
        y = h->outputs[0];
    } else if (gemm) {
        gl_node *h = node(b, "Gemm", (gl_value *[]){x, dqw->outputs[0], bias}, bias ? 3 : 2);
        tu_apply_attrs(h, (tu_attr[]){AI("transB", c->trans_b),
                                      AF("alpha", c->bad == 'a' ? 2.0f : 1.0f), {0}});
        y = h->outputs[0];
    } else {
        y = node(b, "MatMul", (gl_value *[]){x, dqw->outputs[0]}, 2)->outputs[0];
        if (bias)
            y = node(b, "Add", (gl_value *[]){y, bias}, 2)->outputs[0];
    }
    y = add_acts(b, c, p, y);
    if (!quantize)
        return y;
    return node(b, "QuantizeLinear",
                (gl_value *[]){y, scalar_f(b, p->y_scale), scalar_q(b, c->yt, c->y_zero)}, 3)
        ->outputs[0];
}

/* A QAdd's body on aq, bq: DequantizeLinear each, Add, the activations; `quantize`: then
 * the QuantizeLinear. */
static gl_value *add_qadd(bld *b, const qcase *c, const qparams *p, gl_value *aq,
                          gl_value *bq, bool quantize)
{
    aq = use(b, aq);
    gl_value *xs = c->bad == 's' ? tu_input(b->m->graph, "xs", GL_DT_FLOAT, 0, NULL) : NULL;
    xs = xs ? use(b, xs) : scalar_f(b, p->x_scale);
    gl_value *a = node(b, "DequantizeLinear",
                       (gl_value *[]){aq, xs, scalar_q(b, c->xt, c->x_zero)}, 3)->outputs[0];
    gl_value *bv = node(b, "DequantizeLinear",
                        (gl_value *[]){use(b, bq), scalar_f(b, p->w_scale[0]),
                                       scalar_q(b, c->bt, c->b_zero)}, 3)->outputs[0];
    gl_value *y = add_acts(b, c, p, node(b, "Add", (gl_value *[]){a, bv}, 2)->outputs[0]);
    if (!quantize)
        return y;
    return node(b, "QuantizeLinear",
                (gl_value *[]){y, scalar_f(b, p->y_scale), scalar_q(b, c->yt, c->y_zero)}, 3)
        ->outputs[0];
}

/* A QLinearConv / QLinearMatMul node named "g". */
static gl_value *add_qlinear(bld *b, const qcase *c, const qparams *p, gl_value *xq)
{
    int64_t nsc = c->per_channel ? c->oc : 1, oc = c->oc;
    int8_t wz[32] = {0};
    if (c->bad == 'z')
        wz[1] = 1;
    gl_value *xs = c->bad == 's' ? tu_input(b->m->graph, "xs", GL_DT_FLOAT, 0, NULL)
                                 : scalar_f(b, p->x_scale);
    gl_value *ins[9] = {xq, xs, scalar_q(b, c->xt, c->x_zero),
                        konst(b, GL_DT_INT8, (int)p->w_rank, p->wd, p->w),
                        konst(b, GL_DT_FLOAT, c->per_channel, &nsc, p->w_scale),
                        konst(b, GL_DT_INT8, c->per_channel, &nsc, wz),
                        scalar_f(b, p->y_scale), scalar_q(b, c->yt, c->y_zero),
                        c->bias ? konst(b, GL_DT_INT32, 1, &oc, p->bias) : NULL};
    bool conv = c->head == 'C';
    gl_node *n = gl_add_node(b->g, conv ? "QLinearConv" : "QLinearMatMul", "", "g", ins,
                             conv && c->bias ? 9 : 8, 1);
    if (conv)
        tu_apply_attrs(n, (tu_attr[]){AI("group", c->group),
                                      AINTS("strides", 2, c->stride, c->stride),
                                      AINTS("pads", 4, c->pad, c->pad, c->pad, c->pad), {0}});
    return n->outputs[0];
}

/* A call named `name` of a group of row c on xq (and bq, an Add's second operand; values
 * of m's graph): its output. */
static gl_value *add_group(gl_model *m, const qcase *c, const qparams *p, gl_value *xq,
                           gl_value *bq, const char *name)
{
    static int functions;
    char fname[32];
    snprintf(fname, sizeof(fname), "%s_%d",
             c->head == 'c'   ? "QConv"
             : c->head == 'g' ? "QGemm"
             : c->head == 'a' ? "QAdd"
                              : "QMatMul",
             ++functions);
    bld b = {.m = m};
    b.f = gl_model_add_function(m, "graphlab.fused", fname);
    b.f->opsets = gl_xcalloc(1, sizeof(*b.f->opsets));
    b.f->opsets[0] = (gl_opset){gl_xstrdup(""), 17};
    b.f->n_opsets = 1;
    b.g = b.f->body;
    gl_graph_add_output(b.g, c->head == 'a' ? add_qadd(&b, c, p, xq, bq, true)
                                             : add_product(&b, c, p, xq, true));
    return gl_add_node(m->graph, fname, "graphlab.fused", name, b.actual, b.n_act, 1)
        ->outputs[0];
}

static gl_model *new_model(void)
{
    gl_model *m = tu_model(17);
    gl_model_set_opset(m, "graphlab.fused", 1);
    return m;
}

/* An Add's second operand: its rank and dims. */
static int b_rank(const qcase *c)
{
    return c->b_rank ? c->b_rank : c->rank;
}

static const int64_t *b_dims(const qcase *c)
{
    return c->b_rank ? c->bd : c->xd;
}

/* The row's model: `quantized` the group (or QLinear node) with an int8 output, else the
 * float model (no QuantizeLinear at the end). */
static gl_model *build_model(const qcase *c, const qparams *p, bool quantized)
{
    bld b = {.m = new_model()};
    b.g = b.m->graph;
    int64_t unknown[4] = {U, U, U, U};
    gl_value *xq = tu_input(b.g, "x", c->xt, c->rank, c->unknown ? unknown : c->xd);
    gl_value *bq = c->head == 'a' ? tu_input(b.g, "b", c->bt, b_rank(c),
                                             c->unknown ? unknown : b_dims(c))
                                  : NULL;
    gl_value *y;
    if (!quantized)
        y = c->head == 'a' ? add_qadd(&b, c, p, xq, bq, false) : add_product(&b, c, p, xq, false);
    else if (c->head == 'C' || c->head == 'M')
        y = add_qlinear(&b, c, p, xq);
    else
        y = add_group(b.m, c, p, xq, bq, "g");
    tu_output(b.m->graph, y);
    return b.m;
}

static gl_tensor *draw_tensor(gl_dtype dt, int rank, const int64_t *dims)
{
    int64_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    uint8_t *v = gl_xmalloc((size_t)count);
    for (int64_t i = 0; i < count; i++)
        v[i] = dt == GL_DT_UINT8 ? (uint8_t)rnd(0, 255) : (uint8_t)(int8_t)rnd(-128, 127);
    gl_tensor *t = tu_tensor_of(dt, rank, dims, v);
    free(v);
    return t;
}

static gl_tensor *draw_input(const qcase *c)
{
    return draw_tensor(c->xt, c->rank, c->xd);
}

/* ---- checking ----------------------------------------------------------------------------- */

static int64_t wanted_step(double v, const qcase *c)
{
    double lo = c->yt == GL_DT_INT8 ? -128 : 0, hi = c->yt == GL_DT_INT8 ? 127 : 255;
    double q = nearbyint(v) + c->y_zero;
    return (int64_t)(q < lo ? lo : q > hi ? hi : q);
}

/* got (dnnl) and ref against the float model's values y (real units). */
static void compare(const qcase *c, const qparams *p, const gl_tensor *got,
                    const gl_tensor *ref, const gl_tensor *y, const char *what)
{
    cr_assert(got->dtype == c->yt && got->count == ref->count && got->count == y->count,
              "%s: dnnl gave %s of %lld elements, the reference %lld", what,
              gl_dtype_name(got->dtype), (long long)got->count, (long long)ref->count);
    const float *yv = gl_tensor_data(y);
    int64_t ties = 0, off = 0, ref_off = 0, far = 0, saturated = 0;
    for (int64_t i = 0; i < got->count; i++) {
        double v = yv[i] / p->y_scale, frac = v - floor(v);
        bool tie = fabs(frac - 0.5) < 1e-3;
        int64_t want = wanted_step(v, c), g = gl_elem_i64(got, i), r = gl_elem_i64(ref, i);
        ties += tie;
        saturated += want == (c->yt == GL_DT_INT8 ? 127 : 255) ||
                     want == (c->yt == GL_DT_INT8 ? -128 : 0);
        far += llabs(g - r) > 1;
        off += g != r && (c->pow2 || !tie);
        ref_off += !tie && r != want;
    }
    cr_expect(far == 0, "%s: %lld elements differ from the reference by more than one step",
              what, (long long)far);
    cr_expect(off == 0, "%s: %lld elements differ from the reference where no tie is", what,
              (long long)off);
    cr_expect(ref_off == 0, "%s: the reference differs from the exact value at %lld elements",
              what, (long long)ref_off);
    cr_log_info("%s: %lld elements, %lld ties, %lld saturated", what, (long long)got->count,
                (long long)ties, (long long)saturated);
}


static void check_entry(const qcase *c, const gl_exec *e, const char *what)
{
    const gl_plan_entry *en = tu_plan_entry(e, "g", 0);
    cr_assert_not_null(en, "%s: no plan entry", what);
    const char *impl = en->info.impl, *note = en->info.note;
    if (c->expect == INT8 && !tu_cpu_has_vnni() && strstr(note, "no VNNI")) {
        cr_log_info("%s: refused on this CPU: %s", what, note);
        return;
    }
    bool group = c->head == 'c' || c->head == 'm' || c->head == 'g' || c->head == 'a';
    switch (c->expect) {
    case INT8:
        cr_expect(strcmp(en->backend, "dnnl") == 0 && !strstr(impl, "ref") && impl[0] &&
                      strstr(note, "int8"),
                  "%s: expected one oneDNN int8 kernel, got %s '%s' (%s)", what, en->backend,
                  impl, note);
        cr_expect(!group || gl_exec_plan_count(e) == 1, "%s: the members have entries", what);
        cr_log_info("%s: %s (%s) out %s", what, impl, note, en->info.out_layouts);
        break;
    case BODY:
        cr_expect(strcmp(en->backend, "body") == 0 && strstr(note, c->what),
                  "%s: expected the body, saying '%s'; got %s '%s' (%s)", what, c->what,
                  en->backend, impl, note);
        break;
    case MEMBERS:
        cr_expect(strcmp(en->backend, "dnnl") == 0 && strcmp(impl, "ref (members)") == 0 &&
                      strstr(note, c->what),
                  "%s: expected the members on the reference kernels, saying '%s'; got %s "
                  "'%s' (%s)", what, c->what, en->backend, impl, note);
        break;
    case REF:
        cr_expect(strstr(impl, "ref") || strcmp(en->backend, "ref") == 0,
                  "%s: expected the reference kernel, got %s '%s' (%s)", what, en->backend,
                  impl, note);
        cr_expect(strstr(note, c->what), "%s: expected a note saying '%s', got '%s'", what,
                  c->what, note);
        break;
    }
}

static void run_case(const qcase *c)
{
    const char *layouts[] = {NULL, "nhwc", "blocked"};
    size_t n_layouts = c->head == 'c' || c->head == 'C' || c->head == 'a' ? 3 : 1;
    for (size_t li = 0; li < n_layouts; li++) {
        char what[160];
        snprintf(what, sizeof(what), "%s (%s)", c->name, layouts[li] ? layouts[li] : "auto");
        qparams p = draw_params(c);
        gl_model *qm = build_model(c, &p, true), *fm = build_model(c, &p, false);
        gl_tensor *in[2] = {draw_input(c),
                            c->head == 'a' ? draw_tensor(c->bt, b_rank(c), b_dims(c))
                                           : tu_tensor_f32(0, NULL, &p.x_scale)};
        size_t n_in = c->bad == 's' || c->head == 'a' ? 2 : 1;
        gl_tensor *got = NULL, *ref = NULL, *y = NULL;
        gl_exec *re = tu_exec_run(qm, "ref", NULL, in, n_in, &ref, 1, what);
        gl_exec *fe = tu_exec_run(fm, "ref", NULL, in, n_in, &y, 1, what);
        gl_exec *de = tu_exec_run(qm, "dnnl", layouts[li], in, n_in, &got, 1, what);
        if (getenv("GL_TEST_PLAN")) {
            fprintf(stderr, "== %s\n", what);
            gl_exec_print_plan(de, stderr);
        }
        compare(c, &p, got, ref, y, what);
        check_entry(c, de, what);
        gl_tensor *again = NULL;
        tu_exec_rerun_cached(de, (const gl_tensor *const *)in, n_in, &again, 1, what);
        cr_expect(again && again->count == got->count &&
                      memcmp(again->buf->data, got->buf->data, (size_t)got->count) == 0,
                  "%s: the second run differs", what);
        gl_tensor_free(again);
        gl_tensor_free(got);
        gl_tensor_free(ref);
        gl_tensor_free(y);
        gl_tensor_free(in[0]);
        gl_tensor_free(in[1]);
        gl_exec_free(re);
        gl_exec_free(fe);
        gl_exec_free(de);
        gl_model_free(qm);
        gl_model_free(fm);
    }
}

/* ---- the rows ------------------------------------------------------------------------------- */

static const qcase conv_cases[] = {
    {"1x1 Conv, u8, per channel, bias", CONV(1, 16, 6, 24, 1, 1, 0, 1), .xt = U8_, .yt = U8_,
     .x_zero = 128, .y_zero = 3, .per_channel = true, .bias = true, .expect = INT8},
    {"3x3 Conv pad 1, u8, per tensor, no bias, exact ties (odd y_zero)",
     CONV(1, 8, 7, 16, 3, 1, 1, 1), .xt = U8_, .yt = U8_, .x_zero = 131, .y_zero = 7,
     .pow2 = true, .expect = INT8},
    {"3x3 Conv stride 2, s8 source, s8 out, per channel, exact ties",
     CONV(2, 8, 9, 16, 3, 2, 1, 1), .xt = S8_, .yt = S8_, .x_zero = -3, .y_zero = -5,
     .per_channel = true, .bias = true, .pow2 = true, .expect = INT8},
    {"grouped 3x3 Conv (4 groups), Relu", CONV(1, 16, 6, 16, 3, 1, 1, 4), .xt = U8_,
     .yt = U8_, .x_zero = 120, .y_zero = 0, .per_channel = true, .bias = true,
     .acts = {"Relu"}, .expect = INT8},
    {"depthwise 3x3 Conv, Clip, exact ties", CONV(1, 16, 8, 16, 3, 1, 1, 16), .xt = U8_,
     .yt = U8_, .x_zero = 128, .y_zero = 64, .per_channel = true, .bias = true,
     .acts = {"Clip"}, .pow2 = true, .expect = INT8},
    {"3x3 Conv, LeakyRelu, zero points 0", CONV(1, 8, 6, 16, 3, 1, 1, 1), .xt = U8_,
     .yt = S8_, .per_channel = true, .bias = true, .acts = {"LeakyRelu"}, .expect = INT8},
    {"1x1 Conv, Sigmoid (1/y_scale a linear step)", CONV(1, 16, 5, 16, 1, 1, 0, 1),
     .xt = U8_, .yt = U8_, .x_zero = 128, .per_channel = true, .bias = true,
     .acts = {"Sigmoid"}, .y_scale = 1.0 / 256, .expect = INT8},
    {"1x1 Conv, HardSigmoid (1/y_scale into its linear step)", CONV(1, 16, 5, 16, 1, 1, 0, 1),
     .xt = U8_, .yt = U8_, .x_zero = 128, .per_channel = true, .acts = {"HardSigmoid"},
     .y_scale = 1.0 / 256, .expect = INT8},
    {"3x3 Conv, the source's dims unknown at the claim", CONV(1, 8, 6, 16, 3, 1, 1, 1),
     .xt = U8_, .yt = U8_, .x_zero = 128, .y_zero = 3, .per_channel = true, .bias = true,
     .acts = {"Relu"}, .unknown = true, .expect = INT8},
    {"3x3 Conv saturating both ways", CONV(1, 8, 6, 16, 3, 1, 1, 1), .xt = U8_, .yt = U8_,
     .x_zero = 128, .y_zero = 128, .per_channel = true, .bias = true, .y_scale = 0.004,
     .expect = INT8},
};

static const qcase matmul_cases[] = {
    {"MatMul rank 2 + Add bias, per channel", 'm', 2, {6, 32}, 24, .xt = U8_, .yt = U8_,
     .x_zero = 128, .y_zero = 5, .per_channel = true, .bias = true, .expect = INT8},
    {"MatMul rank 3 (a stack of rows), Relu, exact ties", 'm', 3, {2, 5, 32}, 24, .xt = U8_,
     .yt = U8_, .x_zero = 100, .y_zero = 1, .per_channel = true, .bias = true,
     .acts = {"Relu"}, .pow2 = true, .expect = INT8},
    {"MatMul s8 source, per tensor, no bias", 'm', 2, {8, 16}, 16, .xt = S8_, .yt = S8_,
     .x_zero = 7, .y_zero = -1, .expect = INT8},
    {"Gemm transB 1, bias, per channel", 'g', 2, {6, 32}, 24, .trans_b = true, .xt = U8_,
     .yt = U8_, .x_zero = 128, .y_zero = 9, .per_channel = true, .bias = true,
     .expect = INT8},
    {"Gemm transB 0, Clip, exact ties", 'g', 2, {6, 32}, 24, .xt = U8_, .yt = U8_,
     .x_zero = 128, .y_zero = 9, .per_channel = true, .bias = true, .acts = {"Clip"},
     .pow2 = true, .expect = INT8},
};

static const qcase qlinear_cases[] = {
    {"QLinearConv 3x3, per channel, bias", 'C', 4, {1, 8, 6, 6}, 16, 3, 1, 1, 1, .xt = U8_,
     .yt = U8_, .x_zero = 128, .y_zero = 3, .per_channel = true, .bias = true, .expect = INT8},
    {"QLinearConv depthwise stride 2, exact ties", 'C', 4, {1, 16, 8, 8}, 16, 3, 2, 1, 16,
     .xt = U8_, .yt = U8_, .x_zero = 127, .y_zero = 1, .per_channel = true, .pow2 = true,
     .expect = INT8},
    {"QLinearMatMul rank 3, s8, exact ties", 'M', 3, {2, 4, 16}, 8, .xt = S8_, .yt = S8_,
     .x_zero = -2, .y_zero = 3, .per_channel = true, .pow2 = true, .expect = INT8},
};

/* QAdd groups: a + b (b of a's dims unless given), activations. */
static const qcase add_cases[] = {
    {"QAdd u8, odd zero points, exact ties", QADD(1, 16, 7, 7), .xt = U8_, .bt = U8_,
     .yt = U8_, .x_zero = 131, .b_zero = 7, .y_zero = 5, .pow2 = true, .expect = INT8},
    {"QAdd u8, Relu, exact ties", QADD(1, 16, 7, 7), .xt = U8_, .bt = U8_, .yt = U8_,
     .x_zero = 128, .b_zero = 120, .y_zero = 0, .acts = {"Relu"}, .pow2 = true,
     .expect = INT8},
    {"QAdd u8, Relu, odd y_zero", QADD(2, 8, 5, 6), .xt = U8_, .bt = U8_, .yt = U8_,
     .x_zero = 100, .b_zero = 140, .y_zero = 3, .acts = {"Relu"}, .expect = INT8},
    {"QAdd s8 + s8 -> s8, Clip, exact ties", QADD(1, 8, 6, 6), .xt = S8_, .bt = S8_,
     .yt = S8_, .x_zero = -3, .b_zero = 5, .y_zero = -1, .acts = {"Clip"}, .pow2 = true,
     .expect = INT8},
    {"QAdd u8 + s8 -> s8, zero points 0", QADD(1, 8, 6, 6), .xt = U8_, .bt = S8_, .yt = S8_,
     .expect = INT8},
    {"QAdd saturating both ways", QADD(1, 8, 6, 6), .xt = U8_, .bt = U8_, .yt = U8_,
     .x_zero = 128, .b_zero = 128, .y_zero = 128, .y_scale = 0.004, .expect = INT8},
    {"QAdd, b broadcast per channel [1, 16, 1, 1]", QADD(1, 16, 5, 5), .xt = U8_, .bt = U8_,
     .yt = U8_, .x_zero = 128, .b_zero = 9, .y_zero = 7, .b_rank = 4, .bd = {1, 16, 1, 1},
     .pow2 = true, .expect = INT8},
    {"QAdd, a broadcasts (the operands swap)", 'a', 4, {1, 1, 5, 5}, .xt = U8_, .bt = U8_,
     .yt = U8_, .x_zero = 11, .b_zero = 130, .y_zero = 9, .b_rank = 4, .bd = {1, 16, 5, 5},
     .pow2 = true, .expect = INT8},
    {"QAdd rank 2", 'a', 2, {6, 40}, .xt = U8_, .bt = U8_, .yt = U8_, .x_zero = 128,
     .b_zero = 3, .y_zero = 1, .expect = INT8},
    {"QAdd, Sigmoid (1/y_scale a linear step)", QADD(1, 8, 5, 5), .xt = U8_, .bt = U8_,
     .yt = U8_, .x_zero = 128, .b_zero = 128, .acts = {"Sigmoid"}, .y_scale = 1.0 / 256,
     .expect = INT8},
    {"QAdd, the dims unknown at the claim", QADD(1, 16, 6, 6), .xt = U8_, .bt = U8_,
     .yt = U8_, .x_zero = 128, .b_zero = 120, .y_zero = 3, .acts = {"Relu"}, .pow2 = true,
     .unknown = true, .expect = INT8},
    {"QAdd of LeakyRelu then Relu (one algorithm, two slopes)", QADD(1, 8, 6, 6), .xt = U8_,
     .bt = U8_, .yt = U8_, .x_zero = 128, .b_zero = 128, .acts = {"LeakyRelu", "Relu"},
     .expect = BODY, .what = "one algorithm"},
};

/* Products the int8 primitive must not take. */
static const qcase refused_cases[] = {
    {"a group whose weight zero point is not 0", CONV(1, 8, 6, 16, 3, 1, 1, 1), .xt = U8_,
     .yt = U8_, .x_zero = 128, .per_channel = true, .bad = 'z', .expect = BODY,
     .what = "zero points are not all 0"},
    {"a group whose x_scale is a graph input", CONV(1, 8, 6, 16, 3, 1, 1, 1), .xt = U8_,
     .yt = U8_, .x_zero = 128, .bad = 's', .expect = BODY, .what = "is not a constant"},
    {"a Gemm with alpha 2", 'g', 2, {6, 32}, 24, .trans_b = true, .xt = U8_, .yt = U8_,
     .x_zero = 128, .bias = true, .bad = 'a', .expect = BODY, .what = "alpha or beta"},
    {"a Gemm with alpha 2, found at the first run", 'g', 2, {6, 32}, 24, .trans_b = true,
     .xt = U8_, .yt = U8_, .x_zero = 128, .bias = true, .bad = 'a', .unknown = true,
     .expect = MEMBERS, .what = "alpha or beta"},
    {"a group of LeakyRelu then Relu (one algorithm, two slopes)",
     CONV(1, 8, 6, 16, 3, 1, 1, 1), .xt = U8_, .yt = U8_, .x_zero = 128, .bias = true,
     .acts = {"LeakyRelu", "Relu"}, .expect = BODY, .what = "one algorithm"},
    {"a QLinearConv whose w_zero_point is not 0", 'C', 4, {1, 8, 6, 6}, 16, 3, 1, 1, 1,
     .xt = U8_, .yt = U8_, .x_zero = 128, .per_channel = true, .bad = 'z', .expect = REF,
     .what = "w_zero_point is not all 0"},
    {"a QLinearMatMul whose x_scale is a graph input", 'M', 2, {4, 16}, 8, .xt = U8_,
     .yt = U8_, .x_zero = 128, .bad = 's', .expect = REF, .what = "is not a constant"},
};

static void run_cases(const qcase *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i]);
}

Test(dnnl_qprod, qdq_conv_groups_run_as_one_int8_convolution)
{
    run_cases(conv_cases, GL_ARRAY_LEN(conv_cases));
}

Test(dnnl_qprod, qdq_matmul_and_gemm_groups_run_as_one_int8_matmul)
{
    run_cases(matmul_cases, GL_ARRAY_LEN(matmul_cases));
}

Test(dnnl_qprod, qlinearconv_and_qlinearmatmul_run_on_onednn)
{
    run_cases(qlinear_cases, GL_ARRAY_LEN(qlinear_cases));
}

Test(dnnl_qprod, qadd_groups_run_as_one_int8_binary)
{
    run_cases(add_cases, GL_ARRAY_LEN(add_cases));
}

Test(dnnl_qprod, refused_products_run_the_reference_and_say_why)
{
    run_cases(refused_cases, GL_ARRAY_LEN(refused_cases));
}

/* What a test of a chain of groups made and ran. */
static void free_chain_run(gl_tensor *in, gl_tensor *got, gl_tensor *ref, gl_exec *re,
                           gl_exec *de, gl_model *m)
{
    gl_tensor_free(in);
    gl_tensor_free(got);
    gl_tensor_free(ref);
    gl_exec_free(re);
    gl_exec_free(de);
    gl_model_free(m);
}

/* Two groups in a row: the second reads the first's int8 nhwc output as it is (no
 * reorder), and the pair equals the reference exactly (power-of-two scales). */
Test(dnnl_qprod, a_group_reads_the_previous_groups_int8_output_without_a_reorder)
{
    static const qcase first = {"3x3 Conv", CONV(1, 8, 7, 16, 3, 1, 1, 1), .xt = U8_, .yt = U8_,
                                .x_zero = 128, .y_zero = 128, .per_channel = true,
                                .bias = true, .acts = {"Relu"}, .pow2 = true};
    static const qcase second = {"1x1 Conv", CONV(1, 16, 7, 16, 1, 1, 0, 1), .xt = U8_,
                                 .yt = U8_, .x_zero = 128, .y_zero = 3, .per_channel = true,
                                 .bias = true, .pow2 = true};
    qparams p1 = draw_params(&first), p2 = draw_params(&second);
    gl_model *m = new_model();
    gl_value *x = tu_input(m->graph, "x", GL_DT_UINT8, 4, first.xd);
    tu_output(m->graph, add_group(m, &second, &p2, add_group(m, &first, &p1, x, NULL, "g1"),
                                  NULL, "g2"));
    gl_tensor *in = draw_input(&first), *got = NULL, *ref = NULL;
    gl_exec *re = tu_exec_run(m, "ref", NULL, &in, 1, &ref, 1, "two groups");
    gl_exec *de = tu_exec_run(m, "dnnl", "nhwc", &in, 1, &got, 1, "two groups");
    cr_assert(got->count == ref->count && got->dtype == GL_DT_UINT8);
    cr_expect(memcmp(got->buf->data, ref->buf->data, (size_t)got->count) == 0,
              "two groups: dnnl differs from the reference");
    const gl_plan_entry *g1 = tu_plan_entry(de, "g1", 0), *g2 = tu_plan_entry(de, "g2", 0);
    cr_assert(g1 && g2);
    if (!tu_cpu_has_vnni()) {
        cr_expect(strstr(g2->info.note, "no VNNI"), "g2: %s", g2->info.note);
        cr_log_info("two groups: refused on this CPU: %s", g2->info.note);
        goto done;
    }
    cr_expect(strcmp(g1->info.out_layouts, "nhwc") == 0, "g1 writes %s", g1->info.out_layouts);
    cr_expect(strncmp(g2->info.in_layouts, "nhwc,", 5) == 0 && g2->conversions == 0,
              "g2 reads %s (%zu conversions)", g2->info.in_layouts, g2->conversions);
    cr_expect(!strstr(g2->info.impl, "ref") && strstr(g2->info.note, "int8"), "g2: %s (%s)",
              g2->info.impl, g2->info.note);
done:
    free_chain_run(in, got, ref, re, de, m);
}

/* A residual block's tail: two int8 convolutions' nhwc outputs added by a QAdd group,
 * which reads them as they are (no reorder) and writes nhwc for the next convolution;
 * equal to the reference (power-of-two scales), under every layout policy. */
Test(dnnl_qprod, a_qadd_group_reads_and_writes_nhwc_int8_without_a_reorder)
{
    static const qcase conv = {"3x3 Conv", CONV(1, 8, 7, 16, 3, 1, 1, 1), .xt = U8_,
                               .yt = U8_, .x_zero = 128, .y_zero = 131, .per_channel = true,
                               .bias = true, .pow2 = true};
    static const qcase add = {"QAdd", QADD(1, 16, 7, 7), .xt = U8_, .bt = U8_, .yt = U8_,
                              .x_zero = 131, .b_zero = 131, .y_zero = 3, .acts = {"Relu"},
                              .pow2 = true};
    if (!tu_cpu_has_vnni()) {
        cr_log_info("skipped: no VNNI on this CPU, the int8 convolutions run their bodies");
        return;
    }
    const char *layouts[] = {NULL, "nhwc", "blocked"};
    for (size_t li = 0; li < GL_ARRAY_LEN(layouts); li++) {
        const char *what = layouts[li] ? layouts[li] : "auto";
        qparams pc = draw_params(&conv), pa = draw_params(&add);
        gl_model *m = new_model();
        gl_value *x = tu_input(m->graph, "x", GL_DT_UINT8, 4, conv.xd);
        gl_value *c1 = add_group(m, &conv, &pc, x, NULL, "c1");
        gl_value *c2 = add_group(m, &conv, &pc, x, NULL, "c2");
        tu_output(m->graph, add_group(m, &add, &pa, c1, c2, "g"));
        gl_tensor *in = draw_input(&conv), *got = NULL, *ref = NULL;
        gl_exec *re = tu_exec_run(m, "ref", NULL, &in, 1, &ref, 1, what);
        gl_exec *de = tu_exec_run(m, "dnnl", layouts[li], &in, 1, &got, 1, what);
        cr_assert(got->count == ref->count && got->dtype == GL_DT_UINT8);
        cr_expect(memcmp(got->buf->data, ref->buf->data, (size_t)got->count) == 0,
                  "%s: dnnl differs from the reference", what);
        const gl_plan_entry *g = tu_plan_entry(de, "g", 0);
        cr_assert(g);
        /* the call's inputs: a_q, a_scale, a_zero, b_q, ... */
        cr_expect(strncmp(g->info.in_layouts, "nhwc,plain,plain,nhwc,", 22) == 0 &&
                      g->conversions == 0,
                  "%s: the QAdd reads %s (%zu conversions)", what, g->info.in_layouts,
                  g->conversions);
        cr_expect(strcmp(g->info.out_layouts, "nhwc") == 0, "%s: the QAdd writes %s", what,
                  g->info.out_layouts);
        cr_expect(!strstr(g->info.impl, "ref") && strstr(g->info.note, "int8"), "%s: %s (%s)",
                  what, g->info.impl, g->info.note);
        free_chain_run(in, got, ref, re, de, m);
    }
}

/* ---- int8 tensors through max pooling and data movement ----------------------------------- */

/* One node "op" on an int8 tensor: a graph input (plain), or a QConv group's nhwc output
 * (`after_conv`, the convolution reading xd). Exact against the reference; on dnnl as the
 * row expects: a oneDNN kernel (no "ref") or a view, reading its input with no conversion
 * when it comes from the convolution. */
typedef struct int8_case {
    const char *name, *op;  /* "MaxPool", "graphlab.NhwcMaxPool", "Flatten", ... */
    tu_attr attrs[4];
    gl_dtype dt;
    int64_t xd[4];
    bool after_conv;
    bool view;              /* expect a view (else a oneDNN kernel) */
    const char *before;     /* an op between the input and "op" (GlobalMaxPool), or NULL */
    int n_shape;            /* Reshape's shape (a constant), when given */
    int64_t shape[4];
} int8_case;

static const int8_case int8_cases[] = {
    {"u8 3x3 stride 2 pads 1", "MaxPool",
     {AINTS("kernel_shape", 2, 3, 3), AINTS("strides", 2, 2, 2),
      AINTS("pads", 4, 1, 1, 1, 1)}, U8_, {1, 16, 9, 9}, .after_conv = true},
    {"u8 2x2 from a plain input", "MaxPool", {AINTS("kernel_shape", 2, 2, 2)}, U8_,
     {2, 8, 6, 6}},
    {"s8 3x3 ceil_mode", "MaxPool", {AINTS("kernel_shape", 2, 3, 3), AINTS("strides", 2, 2, 2),
                                     AI("ceil_mode", 1)}, S8_, {1, 8, 8, 8}},
    {"u8 global", "GlobalMaxPool", {{0}}, U8_, {1, 16, 7, 7}, .after_conv = true},
    {"u8 channels-last 3x3", "graphlab.NhwcMaxPool", {AINTS("kernel_shape", 2, 3, 3)}, U8_,
     {1, 7, 7, 16}},
    {"u8 nhwc [1,16,7,7] to [1,784] (one reorder)", "Flatten", {AI("axis", 1)}, U8_,
     {1, 16, 7, 7}, .after_conv = true},
    {"u8 nhwc [1,16,7,7] to [1,16,49] (H and W merge)", "Reshape", {{0}}, U8_, {1, 16, 7, 7},
     .after_conv = true, .view = true, .n_shape = 3, .shape = {1, 16, 49}},
    {"u8 nhwc to NHWC (its own bytes)", "Transpose", {AINTS("perm", 4, 0, 2, 3, 1)}, U8_,
     {1, 16, 7, 7}, .after_conv = true, .view = true},
};

static gl_value *int8_node(gl_model *m, const int8_case *c, gl_value *x)
{
    const char *dot = strchr(c->op, '.'), *op = dot ? dot + 1 : c->op;
    if (dot)
        gl_model_set_opset(m, "graphlab", 1);
    if (c->before)
        x = tu_node(m->graph, c->before, "before", 1, x)->outputs[0];
    gl_value *ins[2] = {x, NULL};
    if (c->n_shape) {
        int64_t n = c->n_shape;
        ins[1] = gl_add_initializer(m->graph, "shape", tu_tensor_i64(1, &n, c->shape));
    }
    gl_node *n = gl_add_node(m->graph, op, dot ? "graphlab" : "", "op", ins, ins[1] ? 2 : 1, 1);
    tu_apply_attrs(n, c->attrs);
    return n->outputs[0];
}

static void run_int8_case(const int8_case *c, const char *layout)
{
    static const qcase conv_row = {"3x3 Conv", CONV(1, 8, 7, 16, 3, 1, 1, 1), .xt = U8_,
                                   .yt = U8_, .x_zero = 128, .y_zero = 100,
                                   .per_channel = true, .bias = true, .pow2 = true};
    char what[160];
    snprintf(what, sizeof(what), "%s %s (%s)", c->op, c->name, layout ? layout : "auto");
    qcase conv = conv_row;
    if (c->after_conv)
        memcpy(conv.xd, (int64_t[]){c->xd[0], 8, c->xd[2], c->xd[3]}, sizeof(conv.xd));
    qparams pc = draw_params(&conv);
    gl_model *m = new_model();
    gl_value *x = tu_input(m->graph, "x", c->after_conv ? GL_DT_UINT8 : c->dt, 4,
                           c->after_conv ? conv.xd : c->xd);
    if (c->after_conv)
        x = add_group(m, &conv, &pc, x, NULL, "conv");
    tu_output(m->graph, int8_node(m, c, x));
    gl_tensor *in = c->after_conv ? draw_input(&conv) : draw_tensor(c->dt, 4, c->xd);
    gl_tensor *got = NULL, *ref = NULL;
    gl_exec *re = tu_exec_run(m, "ref", NULL, &in, 1, &ref, 1, what);
    gl_exec *de = tu_exec_run(m, "dnnl", layout, &in, 1, &got, 1, what);
    if (getenv("GL_TEST_PLAN")) {
        fprintf(stderr, "== %s\n", what);
        gl_exec_print_plan(de, stderr);
    }
    cr_assert(got->count == ref->count && got->dtype == ref->dtype && got->rank == ref->rank,
              "%s: dnnl gave %s of %lld elements", what, gl_dtype_name(got->dtype),
              (long long)got->count);
    cr_expect(memcmp(got->buf->data, ref->buf->data, (size_t)got->count) == 0,
              "%s: dnnl differs from the reference", what);
    const gl_plan_entry *en = tu_plan_entry(de, "op", 0);
    cr_assert(en, "%s: no plan entry", what);
    bool kernel = strcmp(en->backend, "dnnl") == 0 && !en->fell_back && en->info.impl[0] &&
                  !strstr(en->info.impl, "ref");
    cr_expect(kernel && (c->view ? strcmp(en->info.impl, "view") == 0
                                 : strcmp(en->info.impl, "view") != 0),
              "%s: expected %s on dnnl, got %s '%s' (%s)", what,
              c->view ? "a view" : "a oneDNN kernel", en->backend, en->info.impl, en->info.note);
    cr_expect(!c->after_conv || en->conversions == 0, "%s: %zu conversions of its input (%s)",
              what, en->conversions, en->info.in_layouts);
    cr_log_info("%s: %s (%s) %s -> %s", what, en->info.impl, en->info.note,
                en->info.in_layouts, en->info.out_layouts);
    free_chain_run(in, got, ref, re, de, m);
}

Test(dnnl_qprod, int8_max_pooling_and_views_run_on_onednn_exactly)
{
    /* The rows read a QConv's nhwc output: without VNNI the convolution runs its body and
     * hands on a plain tensor, which the expectations do not describe. */
    if (!tu_cpu_has_vnni()) {
        cr_log_info("skipped: no VNNI on this CPU, the int8 convolutions run their bodies");
        return;
    }
    const char *layouts[] = {NULL, "nhwc", "blocked", "plain"};
    for (size_t i = 0; i < GL_ARRAY_LEN(int8_cases); i++)
        for (size_t li = 0; li < GL_ARRAY_LEN(layouts); li++)
            run_int8_case(&int8_cases[i], layouts[li]);
}

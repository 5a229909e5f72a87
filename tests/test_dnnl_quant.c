/* test_dnnl_quant.c — QuantizeLinear and DequantizeLinear on oneDNN (dn_quant.c) against
 * the reference kernels, bit for bit (issue 21).
 *
 * Each row is a chain: x -> [an identity 1x1 Conv] -> QuantizeLinear "q" -> DequantizeLinear
 * "dq", both outputs the graph's. The identity Conv (weights the identity matrix, no bias)
 * hands x over unchanged but in the plan's activation layout (nhwc, nChw16c/nChw8c), so
 * that q reads a layout and dq reads q's 8-bit output in it. A row of kind DQ_ONLY has
 * just dq on an integer graph input. The data sits on and one ulp around the rounding
 * ties (k + 0.5) * scale and reaches past the 8-bit range on both sides, so rounding half
 * to even and saturation are what is compared; 's' rows plant NaN and infinities. Every
 * output must equal the reference run's exactly, and each node must run where the row
 * says: on a oneDNN kernel (no "ref" in its implementation) or on the reference kernel
 * with the plan's note naming why.
 *
 * MatMulInteger and ConvInteger rows (mmi_cases) run one node "mm" on an integer graph
 * input A and a constant B (W) whose values reach +-b_max; its int32 output must equal
 * the reference's (run under ONEDNN_MAX_CPU_ISA=AVX512_CORE to see the CPUs without VNNI
 * refused).
 */
#define TU_CASE_SHORTHANDS
#include "exec/compare.h"
#include "exec/exec.h"
#include "ops/opkit.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_TENSOR 99 /* axis of a per-tensor row */

typedef enum { DN, REF } where_run;
typedef enum { ZP_OMIT, ZP_ZERO, ZP_SAME, ZP_VARY } zp_kind;
typedef enum { CHAIN, DQ_ONLY } row_kind;

typedef struct quant_case {
    const char *name;
    row_kind kind;
    int opset;
    gl_dtype qtype;     /* the quantized type: uint8, int8 (int32: DQ_ONLY) */
    int rank;
    int64_t dims[5];
    int axis;           /* PER_TENSOR, or the axis attribute (may be negative) */
    zp_kind zp;
    char data;          /* 't' ties and saturation, 's' the same with NaN and infinities */
    bool conv;          /* x through the identity Conv (arrives in the plan's layout) */
    const char *layouts;
    where_run q, dq;
    const char *why;    /* a REF node's note says this */
    int64_t block_size; /* set as an attribute when not 0 */
    const char *dq_in;  /* under nhwc and blocked, dq's input layout ("nhwc", "nChw": the
                         * plain-free path); under blocked, "nhwc" stands for "nChw" */
    bool relu_after;    /* DQ_ONLY: dq's output read by a Relu (a oneDNN node) */
    const char *dq_out; /* under nhwc, dq's output layout */
} quant_case;

/* ---- building the model --------------------------------------------------------------- */

static int normal_axis(const quant_case *c)
{
    return c->axis == PER_TENSOR ? -1 : c->axis < 0 ? c->axis + c->rank : c->axis;
}

static int64_t channels(const quant_case *c)
{
    int a = normal_axis(c);
    return a < 0 ? 1 : c->dims[a];
}

static float scale_of(int64_t ch)
{
    static const float s[] = {0.0173f, 0.1f, 0.25f, 0.0078125f, 0.0337f, 1.3f, 0.003f};
    return s[ch % (int64_t)GL_ARRAY_LEN(s)];
}

static int64_t zero_of(const quant_case *c, int64_t ch)
{
    int64_t base = c->qtype == GL_DT_UINT8 ? 128 : c->qtype == GL_DT_INT8 ? -3 : 0;
    switch (c->zp) {
    case ZP_VARY:
        return base + (ch % 5) - 2;
    case ZP_SAME:
        return base + 1; /* odd: a zero point added before the rounding flips ties */
    default:
        return 0;
    }
}

/* Element i's channel along the row's axis. */
static int64_t channel_at(const quant_case *c, int64_t i)
{
    int a = normal_axis(c);
    if (a < 0)
        return 0;
    return (i / gl_dims_product(c->dims, a + 1, c->rank)) % c->dims[a];
}

/* x on and around the ties (k + 0.5) * scale for k in [-300, 300), some uniform. */
static gl_tensor *float_input(const quant_case *c)
{
    gl_tensor *t = tu_tensor_f32(c->rank, c->dims, NULL);
    float *x = gl_tensor_make_writable(t);
    uint32_t seed = 7;
    for (int64_t i = 0; i < t->count; i++) {
        float s = scale_of(channel_at(c, i)), k = (float)((i * 7919) % 600 - 300);
        float tie = (k + 0.5f) * s;
        switch (i % 4) {
        case 0:
            x[i] = tie;
            break;
        case 1:
            x[i] = nextafterf(tie, INFINITY);
            break;
        case 2:
            x[i] = nextafterf(tie, -INFINITY);
            break;
        default:
            x[i] = tu_uniform(&seed) * 300 * s;
        }
    }
    static const float exact[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.5f, 254.5f, 255.5f};
    for (size_t i = 0; i < GL_ARRAY_LEN(exact) && (int64_t)i * 3 < t->count; i++)
        x[i * 3] = exact[i] * scale_of(channel_at(c, (int64_t)i * 3));
    if (c->data == 's') {
        x[5] = NAN;
        x[t->count / 3] = INFINITY;
        x[2 * t->count / 3] = -INFINITY;
    }
    return t;
}

/* Integers of the row's type: the whole 8-bit range, or int32 far beyond 2^24. */
static gl_tensor *int_input(const quant_case *c)
{
    gl_tensor *t = tu_tensor_of(c->qtype, c->rank, c->dims, NULL);
    void *p = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < t->count; i++) {
        uint32_t h = (uint32_t)i * 2654435761u;
        if (c->qtype == GL_DT_INT32)
            ((int32_t *)p)[i] = (int32_t)h;
        else
            ((uint8_t *)p)[i] = (uint8_t)(h >> 24);
    }
    return t;
}

/* Scale and zero point constants of the row (the zero point NULL when omitted). */
static void add_params(gl_graph *g, const quant_case *c, const char *prefix, gl_value **scale,
                       gl_value **zero)
{
    int64_t n = channels(c);
    int rank = c->axis == PER_TENSOR ? 0 : 1;
    gl_tensor *s = tu_tensor_f32(rank, &n, NULL), *z = tu_tensor_of(c->qtype, rank, &n, NULL);
    float *sp = gl_tensor_make_writable(s);
    for (int64_t i = 0; i < n; i++) {
        sp[i] = scale_of(i);
        gl_elem_set_i64(z, i, zero_of(c, i));
    }
    char name[32];
    snprintf(name, sizeof(name), "%s_scale", prefix);
    *scale = tu_const_tensor(g, name, s);
    snprintf(name, sizeof(name), "%s_zero", prefix);
    *zero = c->zp == ZP_OMIT ? (gl_tensor_free(z), NULL) : tu_const_tensor(g, name, z);
}

static gl_node *add_quant_node(gl_graph *g, const quant_case *c, const char *op,
                               const char *name, gl_value *x, const char *prefix)
{
    gl_value *in[3] = {x};
    add_params(g, c, prefix, &in[1], &in[2]);
    gl_node *n = gl_add_node(g, op, "", name, in, in[2] ? 3 : 2, 1);
    tu_attr attrs[3] = {{0}};
    size_t k = 0;
    if (c->axis != PER_TENSOR)
        attrs[k++] = (tu_attr)AI("axis", c->axis);
    if (c->block_size)
        attrs[k++] = (tu_attr)AI("block_size", c->block_size);
    tu_apply_attrs(n, attrs);
    return n;
}

/* The identity 1x1 Conv over x's channels: x exactly, in the plan's layout. */
static gl_value *identity_conv(gl_graph *g, const quant_case *c, gl_value *x)
{
    int64_t ch = c->dims[1], wd[5] = {ch, ch, 1, 1, 1};
    gl_tensor *w = tu_tensor_f32(c->rank, wd, NULL);
    float *wp = gl_tensor_make_writable(w);
    for (int64_t i = 0; i < ch; i++)
        wp[i * ch + i] = 1.0f;
    return tu_node(g, "Conv", "conv", 2, x, tu_const_tensor(g, "w", w))->outputs[0];
}

static gl_model *build_row(const quant_case *c, gl_tensor **input)
{
    gl_model *m = tu_model(c->opset);
    gl_graph *g = m->graph;
    if (c->kind == DQ_ONLY) {
        gl_value *x = tu_input(g, "x", c->qtype, c->rank, c->dims);
        *input = int_input(c);
        gl_value *y = add_quant_node(g, c, "DequantizeLinear", "dq", x, "dq")->outputs[0];
        tu_output(g, c->relu_after ? tu_node(g, "Relu", "relu", 1, y)->outputs[0] : y);
        return m;
    }
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, c->rank, c->dims);
    *input = float_input(c);
    if (c->conv)
        x = identity_conv(g, c, x);
    gl_node *q = add_quant_node(g, c, "QuantizeLinear", "q", x, "q");
    gl_node *dq = add_quant_node(g, c, "DequantizeLinear", "dq", q->outputs[0], "dq");
    tu_output(g, q->outputs[0]);
    tu_output(g, dq->outputs[0]);
    return m;
}

/* ---- checking --------------------------------------------------------------------------- */

static void expect_same_bits(const gl_tensor *got, const gl_tensor *want, const char *what)
{
    cr_assert(got && want, "%s: an output is missing", what);
    cr_assert(got->dtype == want->dtype && got->count == want->count, "%s: %s[%lld] vs %s[%lld]",
              what, gl_dtype_name(got->dtype), (long long)got->count,
              gl_dtype_name(want->dtype), (long long)want->count);
    size_t es = gl_dtype_size(got->dtype);
    const unsigned char *a = gl_tensor_data(got), *b = gl_tensor_data(want);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < got->count; i++)
        if (memcmp(a + i * es, b + i * es, es) != 0 && bad++ == 0)
            first = i;
    cr_expect(bad == 0, "%s: %lld of %lld elements differ from the reference, first at %lld "
              "(%g against %g)", what, (long long)bad, (long long)got->count, (long long)first,
              bad ? gl_elem_f64(got, first) : 0.0, bad ? gl_elem_f64(want, first) : 0.0);
}

static void check_node(const quant_case *c, const gl_exec *e, const char *node, where_run want,
                       const char *what)
{
    const gl_plan_entry *en = tu_plan_entry(e, node, -1);
    cr_assert_not_null(en, "%s: no plan entry for %s", what, node);
    const char *impl = en->info.impl, *note = en->info.note;
    bool on_dnnl = strcmp(en->backend, "dnnl") == 0 && !en->fell_back;
    bool kernel = on_dnnl && strstr(impl, "ref") == NULL;
    if (want == DN) {
        cr_expect(kernel, "%s: %s expected on a oneDNN kernel, got %s %s (%s)", what, node,
                  en->backend, impl, note);
        return;
    }
    cr_expect(!kernel, "%s: %s expected on the reference kernel, got %s %s", what, node,
              en->backend, impl);
    if (c->why)
        cr_expect(strstr(note, c->why) != NULL, "%s: %s's note '%s' does not say '%s'", what,
                  node, note, c->why);
}

static void run_case(const quant_case *c)
{
    for (const char *p = c->layouts; *p; p++) {
        char what[160];
        snprintf(what, sizeof(what), "%s (%s)", c->name, tu_layout_name(*p));
        gl_tensor *in;
        gl_model *m = build_row(c, &in);
        size_t n_out = m->graph->n_outputs;
        gl_tensor *want[2] = {0}, *got[2] = {0};
        gl_exec *ref = tu_exec_run(m, "ref", NULL, &in, 1, want, n_out, what);
        gl_exec *dn = tu_exec_run(m, "dnnl", tu_layout_name(*p), &in, 1, got, n_out, what);
        for (size_t i = 0; i < n_out; i++) {
            char out_what[200];
            snprintf(out_what, sizeof(out_what), "%s output %zu", what, i);
            expect_same_bits(got[i], want[i], out_what);
            gl_tensor_free(got[i]);
        }
        if (c->kind == CHAIN)
            check_node(c, dn, "q", c->q, what);
        check_node(c, dn, "dq", c->dq, what);
        const gl_plan_entry *dq = tu_plan_entry(dn, "dq", -1);
        if (c->dq_in && *p != 'p') {
            const char *want_in = *p == 'n' ? c->dq_in : "nChw";
            cr_expect(strncmp(dq->info.in_layouts, want_in, strlen(want_in)) == 0,
                      "%s: dq reads %s, expected %s", what, dq->info.in_layouts, want_in);
        }
        if (c->dq_out && *p == 'n')
            cr_expect(strcmp(dq->info.out_layouts, c->dq_out) == 0,
                      "%s: dq writes %s, expected %s", what, dq->info.out_layouts, c->dq_out);
        if (getenv("GL_TEST_PLAN")) {
            fprintf(stderr, "== %s\n", what);
            gl_exec_print_plan(dn, stderr);
        }
        /* again: nothing built, every output still the reference's */
        tu_exec_rerun_cached(dn, (const gl_tensor *const *)&in, 1, got, n_out, what);
        for (size_t i = 0; i < n_out; i++) {
            expect_same_bits(got[i], want[i], what);
            gl_tensor_free(got[i]);
            gl_tensor_free(want[i]);
        }
        gl_exec_free(ref);
        gl_exec_free(dn);
        gl_tensor_free(in);
        gl_model_free(m);
    }
}

/* ---- the cases ---------------------------------------------------------------------------- */

#define U8 GL_DT_UINT8
#define S8 GL_DT_INT8
#define S32 GL_DT_INT32
#define DIMS4 4, D(1, 32, 12, 13)

static const quant_case cases[] = {
    /* per tensor, activations in every layout: dq reads q's output where it is */
    {"u8 per tensor, zero 129", CHAIN, 13, U8, DIMS4, PER_TENSOR, ZP_SAME, 't', true, "pnb",
     DN, DN, .dq_in = "nhwc"},
    {"s8 per tensor, zero -2", CHAIN, 13, S8, DIMS4, PER_TENSOR, ZP_SAME, 't', true, "pnb", DN,
     DN, .dq_in = "nhwc"},
    /* 20 channels: nChw16c pads them, so q reads the plain view */
    {"u8 per tensor, 20 padded channels", CHAIN, 13, U8, 4, D(1, 20, 16, 17), PER_TENSOR,
     ZP_SAME, 't', true, "pnb", DN, DN},
    /* a NaN or an infinity through the Conv: q runs the reference, its output put back
     * into the layout q writes */
    {"u8 per tensor, NaN in a layout", CHAIN, 13, U8, DIMS4, PER_TENSOR, ZP_SAME, 's', true,
     "nb", DN, DN, .dq_in = "nhwc"},
    {"u8 per tensor, zero omitted", CHAIN, 13, U8, DIMS4, PER_TENSOR, ZP_OMIT, 't', true, "pn",
     DN, DN},
    {"s8 per tensor, zero 0", CHAIN, 13, S8, DIMS4, PER_TENSOR, ZP_ZERO, 't', false, "p", DN,
     DN},
    {"opset 10 u8 per tensor", CHAIN, 10, U8, DIMS4, PER_TENSOR, ZP_SAME, 't', false, "p", DN,
     DN},
    /* per axis: the channels in any layout, the other axes through the plain view */
    {"u8 axis 1, zero points alike", CHAIN, 13, U8, DIMS4, 1, ZP_SAME, 't', true, "pnb", DN, DN},
    {"s8 axis 1, zero 0", CHAIN, 13, S8, DIMS4, 1, ZP_ZERO, 't', true, "pnb", DN, DN},
    {"u8 axis 0", CHAIN, 13, U8, 4, D(6, 8, 10, 11), 0, ZP_SAME, 't', false, "p", DN, DN},
    {"s8 axis -1 (last)", CHAIN, 13, S8, DIMS4, -1, ZP_SAME, 't', true, "pnb", DN, DN},
    {"u8 axis 2 of 3-D", CHAIN, 13, U8, 3, D(16, 12, 29), 2, ZP_ZERO, 't', false, "p", DN, DN},
    {"u8 axis -2", CHAIN, 13, U8, DIMS4, -2, ZP_SAME, 't', true, "pn", DN, DN},
    {"s8 axis 1 of 2-D", CHAIN, 13, S8, 2, D(64, 80), 1, ZP_SAME, 't', false, "p", DN, DN},
    /* zero points that differ per channel: q adds them; dq's reorder takes one */
    {"u8 axis 1, zero points differ", CHAIN, 13, U8, DIMS4, 1, ZP_VARY, 't', true, "pn", DN,
     REF, .why = "per-axis zero points that differ"},
    /* NaN quantizes to the zero point: those runs take the reference kernel */
    {"u8 NaN and infinities", CHAIN, 13, U8, DIMS4, PER_TENSOR, ZP_SAME, 's', false, "p", DN,
     DN},
    {"s8 axis 1, NaN and infinities", CHAIN, 13, S8, DIMS4, 1, ZP_SAME, 's', false, "p", DN, DN},
    /* what stays on the reference */
    {"small: below the threshold", CHAIN, 13, U8, 2, D(4, 5), PER_TENSOR, ZP_SAME, 't', false,
     "p", REF, REF, .why = "below the oneDNN threshold"},
    {"opset 21 block_size", CHAIN, 21, U8, DIMS4, PER_TENSOR, ZP_SAME, 't', false, "p", REF,
     REF, .why = "block_size", .block_size = 2},
    /* DequantizeLinear alone on integer inputs */
    {"dq u8 per tensor", DQ_ONLY, 13, U8, DIMS4, PER_TENSOR, ZP_SAME, 't', false, "p", DN, DN},
    /* read by a oneDNN node: written in the plan's activation layout */
    {"dq u8 axis 1 into the layout", DQ_ONLY, 13, U8, DIMS4, 1, ZP_SAME, 't', false, "pnb", DN,
     DN, .relu_after = true, .dq_out = "nhwc"},
    {"dq s8 axis 0, zero omitted", DQ_ONLY, 13, S8, 4, D(32, 8, 4, 5), 0, ZP_OMIT, 't', false,
     "p", DN, DN},
    {"dq int32 axis 1, zero 0 (bias)", DQ_ONLY, 13, S32, 2, D(70, 64), 1, ZP_ZERO, 't', false,
     "p", DN, DN},
    {"dq int32 with a zero point", DQ_ONLY, 13, S32, 2, D(70, 64), PER_TENSOR, ZP_SAME, 't',
     false, "p", REF, REF, .why = "int32 zero point"},
};

Test(dnnl_quant, against_the_reference_bit_for_bit)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        run_case(&cases[i]);
}

/* ---- MatMulInteger ------------------------------------------------------------------------ */

typedef struct mmi_case {
    const char *name;
    gl_dtype a_type;
    int a_rank;
    int64_t a_dims[4];    /* the last is K */
    gl_dtype b_type;
    int64_t n;            /* B is [K, n] */
    int b_max;            /* B's values in [-b_max, b_max] (uint8: [0, b_max]) */
    int a_zero, b_zero;   /* zero points (NO_ZERO: omitted) */
    where_run expect;
    const char *why;
    bool big;             /* A and B in the upper halves of their ranges: large sums */
    /* ConvInteger: W [n, C/group, k, k] over A [N, C, H, W]; attributes */
    int64_t conv_k;       /* 0: a MatMulInteger row */
    tu_attr attrs[4];
} mmi_case;

#define NO_ZERO 999

static gl_tensor *random_ints(gl_dtype dt, int rank, const int64_t *dims, int lo, int hi,
                              uint32_t seed)
{
    gl_tensor *t = tu_tensor_of(dt, rank, dims, NULL);
    for (int64_t i = 0; i < t->count; i++) {
        seed = seed * 1664525u + 1013904223u;
        gl_elem_set_i64(t, i, lo + (int64_t)((seed >> 8) % (uint32_t)(hi - lo + 1)));
    }
    return t;
}

static gl_value *zero_const(gl_graph *g, const char *name, gl_dtype dt, int v)
{
    if (v == NO_ZERO)
        return NULL;
    gl_tensor *t = tu_tensor_of(dt, 0, NULL, NULL);
    gl_elem_set_i64(t, 0, v);
    return tu_const_tensor(g, name, t);
}

static void run_mmi_case(const mmi_case *c)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    int64_t kdim = c->a_dims[c->a_rank - 1], b_dims[4] = {kdim, c->n};
    int b_rank = 2;
    if (c->conv_k) { /* W [n, C/group, k, k] */
        int64_t group = 1;
        for (const tu_attr *at = c->attrs; at->name; at++)
            if (!strcmp(at->name, "group"))
                group = at->i;
        b_rank = 4;
        b_dims[0] = c->n;
        b_dims[1] = c->a_dims[1] / group;
        b_dims[2] = b_dims[3] = c->conv_k;
    }
    gl_value *in[4] = {tu_input(g, "a", c->a_type, c->a_rank, c->a_dims)};
    int b_lo = c->big ? c->b_max / 2 : c->b_type == GL_DT_UINT8 ? 0 : -c->b_max;
    in[1] = tu_const_tensor(g, "b",
                            random_ints(c->b_type, b_rank, b_dims, b_lo, c->b_max, 11));
    in[2] = zero_const(g, "a_zero", c->a_type, c->a_zero);
    in[3] = zero_const(g, "b_zero", c->b_type, c->b_zero);
    size_t n_in = in[3] ? 4 : in[2] ? 3 : 2;
    if (n_in == 4 && !in[2])
        in[2] = NULL; /* omitted */
    gl_node *mm = gl_add_node(g, c->conv_k ? "ConvInteger" : "MatMulInteger", "", "mm", in,
                              n_in, 1);
    tu_apply_attrs(mm, c->attrs);
    tu_output(g, mm->outputs[0]);
    bool s8 = c->a_type == GL_DT_INT8;
    int a_lo = s8 ? (c->big ? 64 : -128) : (c->big ? 128 : 0);
    gl_tensor *a = random_ints(c->a_type, c->a_rank, c->a_dims, a_lo, s8 ? 127 : 255, 5);
    gl_tensor *want = NULL, *got = NULL;
    gl_exec *ref = tu_exec_run(m, "ref", NULL, &a, 1, &want, 1, c->name);
    gl_exec *dn = tu_exec_run(m, "dnnl", "plain", &a, 1, &got, 1, c->name);
    expect_same_bits(got, want, c->name);
    /* without VNNI oneDNN's int8 sums saturate: every product stays on the reference */
    bool vnni = tu_cpu_has_vnni();
    quant_case as_row = {.why = vnni ? c->why : "no VNNI"};
    check_node(&as_row, dn, "mm", vnni ? c->expect : REF, c->name);
    if (getenv("GL_TEST_PLAN")) {
        fprintf(stderr, "== %s\n", c->name);
        gl_exec_print_plan(dn, stderr);
    }
    gl_tensor_free(got);
    tu_exec_rerun_cached(dn, (const gl_tensor *const *)&a, 1, &got, 1, c->name);
    expect_same_bits(got, want, c->name);
    gl_tensor_free(got);
    gl_tensor_free(want);
    gl_tensor_free(a);
    gl_exec_free(ref);
    gl_exec_free(dn);
    gl_model_free(m);
}

static const mmi_case mmi_cases[] = {
    {"u8 A, zero 128, by s8 B", U8, 3, D(2, 40, 64), S8, 48, 127, 128, NO_ZERO, DN},
    {"s8 A, no zero points", S8, 2, D(64, 96), S8, 32, 100, NO_ZERO, NO_ZERO, DN},
    {"u8 A by u8 B of at most 127, zeros 0", U8, 2, D(80, 64), U8, 24, 127, 0, 0, DN},
    {"near the 2^24 bound: K 128 of +-127, zero 255", U8, 2, D(64, 128), S8, 16, 127, 255,
     NO_ZERO, DN},
    {"u8 B above 127", U8, 2, D(80, 64), U8, 24, 200, 3, NO_ZERO, REF,
     "uint8 weights above 127"},
    {"B's zero point 1", U8, 2, D(80, 64), S8, 24, 100, 3, 1, REF,
     "the weights' zero point is not 0"},
    /* sums of ~4.4e7: oneDNN's would lose their low bits */
    {"sums past 2^24: K 2048", U8, 2, D(8, 2048), S8, 16, 127, 7, NO_ZERO, REF,
     "sums may pass 2^24", .big = true},
    {"small", U8, 2, D(4, 8), S8, 4, 100, 3, NO_ZERO, REF, "below the oneDNN threshold"},
    /* ConvInteger: padded taps add nothing (oneDNN pads with the zero point) */
    {"conv 3x3 pads 1, u8 zero 100", U8, 4, D(1, 32, 12, 13), S8, 16, 60, 100, NO_ZERO, DN,
     .conv_k = 3, .attrs = {AINTS("pads", 4, 1, 1, 1, 1)}},
    {"conv s8, stride 2, dilation 2, no zero", S8, 4, D(2, 16, 15, 14), S8, 24, 127, NO_ZERO,
     NO_ZERO, DN, .conv_k = 3,
     .attrs = {AINTS("strides", 2, 2, 2), AINTS("dilations", 2, 2, 2),
               AINTS("pads", 4, 2, 1, 0, 2)}},
    {"conv group 4, SAME_UPPER, zero 0", U8, 4, D(1, 32, 12, 13), S8, 32, 127, 0, 0, DN,
     .conv_k = 3, .attrs = {AI("group", 4), AS("auto_pad", "SAME_UPPER")}},
    {"conv 1x1, u8 W of at most 127", U8, 4, D(1, 64, 9, 9), U8, 32, 127, 7, 0, DN,
     .conv_k = 1},
    {"conv W zero point 2", U8, 4, D(1, 32, 12, 13), S8, 16, 60, 3, 2, REF,
     "the weights' zero point is not 0", .conv_k = 3},
    /* 128 channels x 3x3 of ~95 times ~180: ~2e7 per sum */
    {"conv sums past 2^24", U8, 4, D(1, 128, 8, 8), S8, 8, 127, 9, NO_ZERO, REF,
     "sums may pass 2^24", .big = true, .conv_k = 3, .attrs = {AINTS("pads", 4, 1, 1, 1, 1)}},
};

Test(dnnl_quant, matmulinteger_bit_for_bit)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(mmi_cases); i++)
        run_mmi_case(&mmi_cases[i]);
}

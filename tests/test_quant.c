/* test_quant.c — a tensor's quantization read off a QDQ graph, comparisons in steps of a
 * scale, the Q -> DQ pairs on activations with the pairs that feed them, and the graph
 * with its pairs removed (issue 21, points 4 and 5).
 *
 * The graphs are built here, small enough to check by hand:
 *
 *   x -> Q(xq) -> DQ(xdq) -> Relu(r) -> Q(rq) -> DQ(rdq) -> MatMul(mm, DQ(w)) -> y
 *                                                            Add(add, xdq, ...)   (pairs_*)
 */
#include "exec/compare.h"
#include "exec/exec.h"
#include "exec/intermediates.h"
#include "exec/qerror.h"
#include "exec/quant.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

/* ---- building QDQ graphs ---------------------------------------------------------------- */

static gl_value *const_of(gl_graph *g, const char *name, gl_dtype dt, int rank,
                          const int64_t *dims, const void *data)
{
    return gl_add_initializer(g, name, tu_tensor_of(dt, rank, dims, data));
}

static gl_value *scalar_f32(gl_graph *g, const char *name, float v)
{
    return const_of(g, name, GL_DT_FLOAT, 0, NULL, &v);
}

static gl_value *scalar_u8(gl_graph *g, const char *name, uint8_t v)
{
    return const_of(g, name, GL_DT_UINT8, 0, NULL, &v);
}

/* Q -> DQ on `src` with uint8 scale and zero point named after `name`; returns the DQ's
 * output. The Q is node "q_NAME", the DQ "dq_NAME". */
static gl_value *qdq(gl_graph *g, const char *name, gl_value *src, float scale, uint8_t zero)
{
    char sn[64], zn[64], qn[64], dn[64];
    snprintf(sn, sizeof(sn), "%s_scale", name);
    snprintf(zn, sizeof(zn), "%s_zero", name);
    snprintf(qn, sizeof(qn), "q_%s", name);
    snprintf(dn, sizeof(dn), "dq_%s", name);
    gl_value *s = scalar_f32(g, sn, scale), *z = scalar_u8(g, zn, zero);
    gl_node *q = tu_node(g, "QuantizeLinear", qn, 3, src, s, z);
    return tu_node(g, "DequantizeLinear", dn, 3, q->outputs[0], s, z)->outputs[0];
}

/* The int8 weight [4,2] per output channel (axis 1), behind its DequantizeLinear. */
static const int8_t W_Q[8] = {10, -20, 30, 40, -50, 60, 70, -80};
static const float W_SCALE[2] = {0.01f, 0.02f};

static gl_value *weight(gl_graph *g)
{
    static const int8_t zero[2] = {0, 0};
    gl_value *w = const_of(g, "w_q", GL_DT_INT8, 2, (int64_t[]){4, 2}, W_Q);
    gl_value *s = const_of(g, "w_scale", GL_DT_FLOAT, 1, (int64_t[]){2}, W_SCALE);
    gl_value *z = const_of(g, "w_zero", GL_DT_INT8, 1, (int64_t[]){2}, zero);
    gl_node *dq = tu_node(g, "DequantizeLinear", "dq_w", 3, w, s, z);
    gl_node_set_attr_int(dq, "axis", 1);
    return dq->outputs[0];
}

#define X_SCALE 0.05f
#define R_SCALE 0.1f

/* x[1,4] -> Q/DQ -> Relu -> Q/DQ -> MatMul(w) -> y, the pairs' scales given. */
static gl_model *chain_with(float x_scale, float r_scale)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 2, (int64_t[]){1, 4});
    gl_value *xdq = qdq(g, "x", x, x_scale, 128);
    gl_value *r = tu_node(g, "Relu", "relu", 1, xdq)->outputs[0];
    gl_value *rdq = qdq(g, "r", r, r_scale, 0);
    tu_output(g, tu_node(g, "MatMul", "mm", 2, rdq, weight(g))->outputs[0]);
    return m;
}

static gl_model *chain(void)
{
    return chain_with(X_SCALE, R_SCALE);
}

static gl_value *output_of(gl_model *m, const char *node)
{
    gl_node *n = gl_find_node(m->graph, node);
    cr_assert(n, "no node %s", node);
    return n->outputs[0];
}

/* ---- gl_quant_of ------------------------------------------------------------------------ */

typedef struct quant_case {
    const char *node;   /* the value is this node's first output */
    bool quantized;
    bool integer;
    float scale0;       /* the scale's first element */
    int64_t scale_count;
} quant_case;

static const quant_case quant_cases[] = {
    {"q_x", true, true, X_SCALE, 1},    /* a Q's output: the integers */
    {"dq_x", true, false, X_SCALE, 1},  /* a DQ's output: the real values */
    {"dq_r", true, false, R_SCALE, 1},
    {"dq_w", true, false, 0.01f, 2},    /* per axis */
    {"relu", false, false, 0, 0},       /* read by a Q, but not made by one */
    {"mm", false, false, 0, 0},
};

Test(quant, of_each_value)
{
    gl_model *m = chain();
    for (size_t i = 0; i < GL_ARRAY_LEN(quant_cases); i++) {
        const quant_case *c = &quant_cases[i];
        gl_quant q;
        bool got = gl_quant_of(output_of(m, c->node), &q);
        cr_expect_eq(got, c->quantized, "%s: quantized %d", c->node, got);
        if (!got || !c->quantized) {
            cr_expect_null(q.scale, "%s: a scale for a value not quantized", c->node);
            continue;
        }
        cr_expect_eq(q.integer, c->integer, "%s: integer", c->node);
        cr_expect_eq(q.scale->count, c->scale_count, "%s: scale count", c->node);
        cr_expect_float_eq(gl_tensor_get_f64(q.scale, 0), c->scale0, 1e-9, "%s", c->node);
    }
    gl_model_free(m);
}

/* A scale that is computed, not a constant: no quantization known. */
Test(quant, computed_scale_is_not_known)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_value *s = tu_input(g, "s", GL_DT_FLOAT, 0, NULL);
    gl_node *q = tu_node(g, "QuantizeLinear", "q", 3, x, s, scalar_u8(g, "z", 0));
    tu_output(g, q->outputs[0]);
    gl_quant info;
    cr_expect_not(gl_quant_of(q->outputs[0], &info));
    cr_expect_not(gl_quant_of(NULL, &info));
    gl_model_free(m);
}

/* ---- comparing in steps ------------------------------------------------------------------ */

typedef struct steps_case {
    const char *name;
    gl_dtype dtype;
    int64_t n;
    double got[4], expected[4];
    float scales[2];     /* 1 or 2 (per axis 1 of a [2,2]) */
    int64_t n_scales;
    uint8_t zero;
    double steps;        /* the tolerance */
    bool ok;
    int64_t over;
    double max_steps;
} steps_case;

static const steps_case steps_cases[] = {
    /* uint8 integers: a flipped rounding tie is one step, within the default tolerance */
    {"u8_same", GL_DT_UINT8, 4, {1, 2, 3, 4}, {1, 2, 3, 4}, {0.5f}, 1, 0, 1, true, 0, 0},
    {"u8_one_step", GL_DT_UINT8, 4, {1, 2, 3, 4}, {1, 3, 3, 4}, {0.5f}, 1, 0, 1, true, 0, 1},
    {"u8_two_steps", GL_DT_UINT8, 4, {1, 2, 3, 4}, {1, 4, 3, 4}, {0.5f}, 1, 0, 1, false, 1, 2},
    {"u8_two_of_two", GL_DT_UINT8, 4, {1, 2, 3, 4}, {1, 4, 3, 4}, {0.5f}, 1, 0, 2, true, 0, 2},
    {"u8_exact", GL_DT_UINT8, 4, {1, 2, 3, 4}, {1, 3, 3, 4}, {0.5f}, 1, 0, 0, false, 1, 1},
    /* dequantized floats: one step of 0.25 with float noise is one step */
    {"f32_one_step", GL_DT_FLOAT, 4, {0.25, 0.5, 0.75, 1.0}, {0.25, 0.75000003, 0.75, 1.0},
     {0.25f}, 1, 0, 1, true, 0, 1},
    {"f32_three_steps", GL_DT_FLOAT, 4, {0.25, 0.5, 0.75, 1.0}, {1.0, 0.5, 0.75, 1.0},
     {0.25f}, 1, 0, 1, false, 1, 3},
    /* per axis (axis 1 of [2,2]): element 1 is channel 1, scale 0.5: 0.5 apart is 1 step;
     * element 2 is channel 0, scale 0.1: 0.5 apart is 5 steps */
    {"f32_per_axis_ok", GL_DT_FLOAT, 4, {0, 0, 0, 0}, {0, 0.5, 0, 0}, {0.1f, 0.5f}, 2, 0, 1,
     true, 0, 1},
    {"f32_per_axis_bad", GL_DT_FLOAT, 4, {0, 0, 0, 0}, {0, 0, 0.5, 0}, {0.1f, 0.5f}, 2, 0, 1,
     false, 1, 5},
};

static gl_tensor *steps_tensor(const steps_case *c, const double *v)
{
    int64_t dims[2] = {2, 2};
    gl_tensor *t = gl_tensor_new(c->dtype, 2, dims);
    void *p = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < c->n; i++) {
        if (c->dtype == GL_DT_UINT8)
            ((uint8_t *)p)[i] = (uint8_t)v[i];
        else
            ((float *)p)[i] = (float)v[i];
    }
    return t;
}

Test(quant, compare_in_steps)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(steps_cases); i++) {
        const steps_case *c = &steps_cases[i];
        gl_tensor *got = steps_tensor(c, c->got), *exp = steps_tensor(c, c->expected);
        gl_tensor *scale = tu_tensor_of(GL_DT_FLOAT, c->n_scales > 1 ? 1 : 0,
                                        (int64_t[]){c->n_scales}, c->scales);
        gl_tensor *zero = tu_tensor_of(GL_DT_UINT8, c->n_scales > 1 ? 1 : 0,
                                       (int64_t[]){c->n_scales},
                                       (uint8_t[]){c->zero, c->zero});
        gl_quant q = {.scale = scale, .zero = zero, .axis = 1,
                      .integer = c->dtype == GL_DT_UINT8};
        gl_compare r;
        gl_compare_in_steps(got, exp, &q, c->steps, &r);
        cr_expect(r.in_steps && r.same_shape, "%s", c->name);
        cr_expect_eq(r.ok, c->ok, "%s: ok %d", c->name, r.ok);
        cr_expect_eq(r.over_tol, c->over, "%s: %lld over", c->name, (long long)r.over_tol);
        cr_expect_float_eq(r.max_steps, c->max_steps, 1e-3, "%s: max_steps %g", c->name,
                           r.max_steps);
        char line[200];
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(strstr(line, "step"), "%s: '%s' says steps", c->name, line);
        gl_tensor_free(got);
        gl_tensor_free(exp);
        gl_tensor_free(scale);
        gl_tensor_free(zero);
    }
}

/* gl_compare_value picks the rule from the graph: the DQ's output in steps, the
 * MatMul's output with atol. One step of x's scale passes the one and fails the other. */
Test(quant, compare_value_by_the_graph)
{
    gl_model *m = chain();
    gl_tolerance tol = {.rtol = 0, .atol = 1e-4, .steps = 1};
    gl_tensor *a = tu_tensor_f32(2, (int64_t[]){1, 4}, (float[]){0, 0.05f, 0.1f, 0.15f});
    gl_tensor *b = tu_tensor_f32(2, (int64_t[]){1, 4}, (float[]){0, 0.1f, 0.1f, 0.15f});
    gl_compare r;
    gl_compare_value(output_of(m, "dq_x"), a, b, &tol, &r);
    cr_expect(r.ok && r.in_steps, "a dequantized value one step off is within 1 step");
    gl_compare_value(output_of(m, "mm"), a, b, &tol, &r);
    cr_expect(!r.ok && !r.in_steps, "a float value 0.05 off is over atol 1e-4");
    gl_compare_value(NULL, a, b, &tol, &r);
    cr_expect(!r.ok && !r.in_steps, "no value: the float rule");
    gl_tensor_free(a);
    gl_tensor_free(b);
    gl_model_free(m);
}

/* ---- the pairs ------------------------------------------------------------------------- */

/* chain() plus an Add of x's DQ and r's DQ, quantized again: that pair is fed by both. */
static gl_model *diamond(void)
{
    gl_model *m = chain();
    gl_graph *g = m->graph;
    gl_value *add = tu_node(g, "Add", "add", 2, output_of(m, "dq_x"),
                            output_of(m, "dq_r"))->outputs[0];
    tu_output(g, qdq(g, "a", add, 0.2f, 10));
    return m;
}

Test(quant, pairs_and_their_feeders)
{
    gl_model *m = diamond();
    gl_qdq_pairs p;
    gl_qdq_pairs_find(m->graph, &p);
    cr_assert_eq(p.n, 3, "x, relu and add are quantized: %zu pairs", p.n);
    static const struct {
        const char *tensor, *node, *q_output, *dq_output;
        float scale;
        size_t n_feeders;
    } want[] = {
        {"x", "q_x", "q_x_out0", "dq_x_out0", X_SCALE, 0},
        {"relu_out0", "q_r", "q_r_out0", "dq_r_out0", R_SCALE, 1},
        {"add_out0", "q_a", "q_a_out0", "dq_a_out0", 0.2f, 2},
    };
    for (size_t k = 0; k < p.n; k++) {
        const gl_qdq_pair *q = &p.items[k];
        cr_expect_str_eq(q->tensor, want[k].tensor);
        cr_expect_str_eq(q->node, want[k].node);
        cr_expect_str_eq(q->q_output, want[k].q_output);
        cr_expect_str_eq(q->dq_output, want[k].dq_output);
        cr_expect_float_eq(gl_tensor_get_f64(q->scale, 0), want[k].scale, 1e-9);
        cr_expect_eq(q->n_feeders, want[k].n_feeders, "%s: %zu feeders", q->tensor,
                     q->n_feeders);
    }
    cr_expect_eq(p.items[1].feeders[0], 0, "relu's pair is fed by x's");
    cr_expect(p.items[2].feeders[0] + p.items[2].feeders[1] == 1, "add's by x's and relu's");
    gl_qdq_pairs_free(&p);
    gl_model_free(m);
}

/* ---- the float model ------------------------------------------------------------------- */

static size_t count_op(const gl_graph *g, const char *op)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        n += g->nodes[i] && gl_node_is(g->nodes[i], op);
    return n;
}

static gl_tensor *run_ref(const gl_model *m, const gl_tensor *x)
{
    gl_exec *e = NULL;
    gl_exec_options o = {.backend = "ref"};
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    gl_tensor *out = NULL;
    cr_assert_eq(gl_exec_run(e, &x, 1, &out, 1), GL_OK, "%s", gl_error_message());
    gl_exec_free(e);
    return out;
}

/* Stripped, the chain computes relu(x) @ dequantized w in float: x is not on either
 * pair's grid, so the quantized chain computes something else. */
Test(quant, strip_makes_the_float_model)
{
    gl_model *m = chain();
    const float xv[4] = {-0.33f, 0.41f, 1.07f, 0.26f};
    gl_tensor *x = tu_tensor_f32(2, (int64_t[]){1, 4}, xv);
    gl_tensor *quantized = run_ref(m, x);
    size_t removed = 0;
    cr_assert_eq(gl_qdq_strip(m->graph, &removed), GL_OK, "%s", gl_error_message());
    cr_expect_eq(removed, 2, "two pairs bypassed, %zu", removed);
    cr_expect_eq(count_op(m->graph, "QuantizeLinear"), 0);
    cr_expect_eq(count_op(m->graph, "DequantizeLinear"), 1, "the weight's DQ stays");
    cr_expect_eq(count_op(m->graph, "Identity"), 2);
    cr_expect_eq(gl_graph_verify(m->graph, false), GL_OK, "%s", gl_error_message());
    cr_expect(gl_find_value(m->graph, "dq_r_out0"), "the DQ's output keeps its name");
    gl_tensor *f = run_ref(m, x);
    const float *y = gl_tensor_data(f), *yq = gl_tensor_data(quantized);
    bool differs = false;
    for (int c = 0; c < 2; c++) {
        double want = 0;
        for (int k = 0; k < 4; k++)
            want += fmax(xv[k], 0) * W_Q[k * 2 + c] * W_SCALE[c];
        cr_expect_float_eq(y[c], want, 1e-5, "y[%d] %g, float %g", c, y[c], want);
        differs = differs || fabs(yq[c] - want) > 1e-4;
    }
    cr_expect(differs, "the quantized chain differs from the float one");
    gl_tensor_free(x);
    gl_tensor_free(f);
    gl_tensor_free(quantized);
    gl_model_free(m);
}

/* A Q whose output is also a graph output stays (its DQ is bypassed all the same). */
Test(quant, strip_keeps_a_q_the_graph_outputs)
{
    gl_model *m = chain();
    tu_output(m->graph, output_of(m, "q_r"));
    size_t removed = 0;
    cr_assert_eq(gl_qdq_strip(m->graph, &removed), GL_OK);
    cr_expect_eq(removed, 2);
    cr_expect_eq(count_op(m->graph, "QuantizeLinear"), 1);
    cr_expect_eq(gl_graph_verify(m->graph, false), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
}

/* ---- recorded runs: intermediates in steps, the quantization-error report ---------------- */

/* The chain's input: on neither pair's grid. */
static const float X_VALUES[4] = {-0.33f, 0.41f, 1.07f, 0.26f};

static gl_inter_rec *record_ref(const gl_model *m, const char *label)
{
    gl_inter_rec *rec = gl_inter_rec_new(&(gl_inter_rec_options){.label = label});
    gl_exec *e = NULL;
    gl_exec_options o = {.backend = "ref"};
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    gl_inter_rec_attach(rec, e);
    gl_tensor *x = tu_tensor_f32(2, (int64_t[]){1, 4}, X_VALUES), *y = NULL;
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *const *)&x, 1, &y, 1), GL_OK, "%s",
                 gl_error_message());
    gl_tensor_free(x);
    gl_tensor_free(y);
    gl_exec_free(e);
    cr_assert_eq(gl_inter_rec_status(rec), GL_OK);
    return rec;
}

/* Two runs a rounding tie apart: the relu's pair one step up in the second. Compared
 * tensor by tensor, that Q's output is within one step, not within none, and its row
 * says it was compared in steps. */
Test(quant, intermediates_in_steps)
{
    gl_model *m = chain();
    gl_inter_rec *a = record_ref(m, "ref"), *b = record_ref(m, "other");
    const gl_inter_tensor *t = gl_inter_rec_find(b, "q_r_out0");
    cr_assert(t && t->quant.scale && t->quant.integer, "the Q's output is kept quantized");
    ((uint8_t *)gl_tensor_make_writable(t->t))[2] += 1;
    for (int steps = 0; steps <= 1; steps++) {
        gl_inter_report r;
        gl_inter_compare(a, b, &(gl_tolerance){0, 0, steps}, &r);
        size_t row = SIZE_MAX;
        for (size_t k = 0; k < r.n_rows; k++)
            if (strcmp(r.rows[k].a->key, "q_r_out0") == 0)
                row = k;
        cr_assert_neq(row, SIZE_MAX);
        cr_expect(r.rows[row].cmp.in_steps, "compared in steps");
        cr_expect_eq(r.rows[row].cmp.ok, steps == 1, "within %d steps: %d", steps,
                     r.rows[row].cmp.ok);
        cr_expect_eq(r.in_steps, 5, "the Q and DQ outputs of both pairs and the weight's DQ, %zu",
                     r.in_steps);
        gl_inter_report_free(&r);
    }
    gl_inter_rec_free(a);
    gl_inter_rec_free(b);
    gl_model_free(m);
}

/* The quantization-error report on the chain, with the pairs' scales as each case says.
 * Worked by hand on X_VALUES: x's pair alone at 0.05 is nmse 6.7e-4, at 0.5 nmse 0.067;
 * relu's at 0.1 adds to 3.3e-3 (5x x's), at 0.5 to 0.051 (76x). */
typedef struct qerror_case {
    const char *name;
    float x_scale, r_scale;
    size_t first_jump;  /* the pair: 0 x, 1 relu; SIZE_MAX none */
    size_t most_lost;
    size_t worst;       /* worst[0] */
} qerror_case;

static const qerror_case qerror_cases[] = {
    {"fine", 0.05f, 0.1f, SIZE_MAX, 1, 1},          /* relu's 5x: no jump */
    {"coarse_relu", 0.05f, 0.5f, 1, 1, 1},          /* 76x: relu jumps */
    {"coarse_input", 0.5f, 0.1f, 0, 0, 0},          /* x over the floor, fed by nothing */
};

Test(quant, qerror_report)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(qerror_cases); i++) {
        const qerror_case *c = &qerror_cases[i];
        gl_model *m = chain_with(c->x_scale, c->r_scale);
        gl_session flt;
        gl_qdq_pairs pairs;
        cr_assert_eq(gl_session_open_float(m, &flt, &pairs), GL_OK, "%s", gl_error_message());
        gl_inter_rec *q = record_ref(m, "ref"), *f = record_ref(flt.model, "float");
        gl_qerror_report r;
        gl_qerror_compare(&pairs, q, f, &r);
        cr_expect_eq(r.compared, 2, "%s: %zu compared", c->name, r.compared);
        cr_expect_eq(r.first_jump, c->first_jump, "%s: first jump %zu", c->name, r.first_jump);
        cr_expect_eq(r.most_lost, c->most_lost, "%s: most lost %zu", c->name, r.most_lost);
        cr_expect_eq(r.worst[0], c->worst, "%s: worst %zu", c->name, r.worst[0]);
        cr_expect_float_eq(r.rows[1].feed_nmse, r.rows[0].cmp.nmse, 1e-12,
                           "%s: relu's pair is fed by x's", c->name);
        cr_expect_eq(r.rows[0].feed_nmse, 0, "%s: nothing feeds x's pair", c->name);
        char head[128];
        gl_qerror_headline(&r, head, sizeof(head));
        cr_expect(strstr(head, c->most_lost ? "'relu_out0' loses most" : "'x' loses most"),
                  "%s: %s", c->name, head);
        gl_qerror_report_free(&r);
        gl_inter_rec_free(q);
        gl_inter_rec_free(f);
        gl_qdq_pairs_free(&pairs);
        gl_session_close(&flt);
        gl_model_free(m);
    }
}

/* ---- a fused QDQ group: a call whose body ends in its QuantizeLinear ------------------------ */

/* x -> call QRelu(x, y_scale, y_zero) -> y_q, the body DQ(x) -> Relu -> Q(., F1, F2) with
 * the scale and zero point its formal inputs F1, F2, and a second output made by the Relu
 * (not quantized). */
Test(quant, of_a_call_is_its_bodys)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_UINT8, 1, (int64_t[]){4});
    gl_value *ys = scalar_f32(g, "y_scale", 0.25f), *yz = scalar_u8(g, "y_zero", 3);
    gl_function *f = gl_model_add_function(m, "graphlab.fused", "QRelu_1");
    gl_value *formal[3];
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "F%d", i);
        formal[i] = gl_add_value(f->body, name);
        gl_graph_add_input(f->body, formal[i]);
    }
    gl_value *xs = scalar_f32(f->body, "x_scale", 0.5f), *xz = scalar_u8(f->body, "x_zero", 0);
    gl_value *xr = tu_node(f->body, "DequantizeLinear", "dq", 3, formal[0], xs, xz)->outputs[0];
    gl_value *r = tu_node(f->body, "Relu", "relu", 1, xr)->outputs[0];
    gl_node *q = tu_node(f->body, "QuantizeLinear", "q", 3, r, formal[1], formal[2]);
    gl_graph_add_output(f->body, q->outputs[0]);
    gl_graph_add_output(f->body, r);
    gl_node *call = gl_add_node(g, "QRelu_1", "graphlab.fused", "group",
                                (gl_value *[]){x, ys, yz}, 3, 2);
    tu_output(g, call->outputs[0]);
    tu_output(g, call->outputs[1]);
    gl_quant info;
    cr_assert(gl_quant_of(call->outputs[0], &info), "the group's Q output is quantized");
    cr_expect(info.integer);
    cr_expect_float_eq(gl_tensor_get_f64(info.scale, 0), 0.25, 1e-12, "the call site's scale");
    cr_expect_float_eq(gl_tensor_get_f64(info.zero, 0), 3, 1e-12, "and zero point");
    cr_expect_not(gl_quant_of(call->outputs[1], &info), "the Relu's output is not");
    gl_model_free(m);
}

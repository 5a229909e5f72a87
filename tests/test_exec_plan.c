/* test_exec_plan.c — the executor's seams: the plan as data, the observer, buffers lent
 * run after run, function calls offered whole to a backend before they are expanded,
 * and, on oneDNN, layouts kept between primitives, conversions where a consumer needs
 * plain memory, constants reordered once and the shape guard.
 */
#include "exec/exec.h"
#include "exec/compare.h"
#include "ops/opkit.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers --------------------------------------------------------------------------- */

static uint32_t lcg(uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return *seed >> 8;
}

static gl_tensor *random_f32(int rank, const int64_t *dims, uint32_t seed)
{
    gl_tensor *t = gl_tensor_new(GL_DT_FLOAT, rank, dims);
    float *p = t->count ? gl_tensor_make_writable(t) : NULL;
    for (int64_t i = 0; i < t->count; i++)
        p[i] = (float)lcg(&seed) / (float)(1u << 23) - 1.0f;
    return t;
}

static gl_value *random_const(gl_graph *g, const char *name, int rank, const int64_t *dims,
                              uint32_t seed)
{
    gl_tensor *t = random_f32(rank, dims, seed);
    gl_value *v = tu_const_f32(g, name, rank, dims, gl_tensor_data(t));
    gl_tensor_free(t);
    return v;
}

static const gl_plan_entry *entry_named(const gl_exec *e, const char *name)
{
    for (size_t i = 0; i < gl_exec_plan_count(e); i++) {
        const gl_plan_entry *en = gl_exec_plan_at(e, i);
        if (en->node->name && strcmp(en->node->name, name) == 0)
            return en;
    }
    return NULL;
}

/* Run m once on backend `backend` (layout policy `layout`) and once on the reference;
 * the single outputs must agree. */
static void expect_like_reference(const gl_model *m, gl_exec *e, const gl_tensor *const *in,
                                  size_t n_in)
{
    gl_exec *ref = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &ref), GL_OK, "%s", gl_error_message());
    gl_tensor *want = NULL, *got = NULL;
    cr_assert_eq(gl_exec_run(ref, in, n_in, &want, 1), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_exec_run(e, in, n_in, &got, 1), GL_OK, "%s", gl_error_message());
    gl_compare r;
    gl_compare_tensors(got, want, 1e-4, 1e-5, &r);
    char line[256];
    gl_compare_format(&r, line, sizeof(line));
    cr_expect(r.ok, "against the reference: %s", line);
    gl_tensor_free(want);
    gl_tensor_free(got);
    gl_exec_free(ref);
}

/* ---- the observer ------------------------------------------------------------------------ */

typedef struct seen {
    char order[16][32];
    int n_begin, n_end, runs_begun, runs_ended;
    bool outputs_present, ns_set;
    const void *data[16]; /* the first output's bytes per event, last run */
} seen;

static void on_run_begin(void *ctx, const gl_exec *e)
{
    (void)e;
    seen *s = ctx;
    s->runs_begun++;
    s->n_begin = s->n_end = 0;
}

static void on_begin(void *ctx, const gl_exec *e, const gl_exec_event *ev)
{
    (void)e;
    seen *s = ctx;
    if (s->n_begin < 16)
        snprintf(s->order[s->n_begin], sizeof(s->order[0]), "%s", ev->node->name);
    s->n_begin++;
}

static void on_end(void *ctx, const gl_exec *e, const gl_exec_event *ev)
{
    (void)e;
    seen *s = ctx;
    if (s->n_end < 16) {
        cr_expect_str_eq(s->order[s->n_end], ev->node->name, "end follows begin");
        s->data[s->n_end] = ev->outputs[0] ? gl_tensor_data(ev->outputs[0]) : NULL;
    }
    s->outputs_present &= ev->n_outputs == ev->node->n_outputs && ev->outputs[0] != NULL;
    s->ns_set &= ev->status == GL_OK;
    s->n_end++;
}

static void on_run_end(void *ctx, const gl_exec *e, gl_status st)
{
    (void)e;
    seen *s = ctx;
    cr_expect_eq(st, GL_OK);
    s->runs_ended++;
}

/* x -> Relu r -> Neg n -> Abs a -> y: three nodes in order, begin and end each. */
static gl_model *chain_model(void)
{
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (int64_t[]){4, 8});
    gl_node *r = tu_node(m->graph, "Relu", "r", 1, x);
    gl_node *n = tu_node(m->graph, "Neg", "n", 1, r->outputs[0]);
    gl_node *a = tu_node(m->graph, "Abs", "a", 1, n->outputs[0]);
    tu_output(m->graph, a->outputs[0]);
    return m;
}

Test(exec_plan, observer_sees_every_node_in_order_with_its_outputs)
{
    gl_model *m = chain_model();
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK, "%s", gl_error_message());
    seen s = {.outputs_present = true, .ns_set = true};
    gl_exec_observer o = {&s, on_run_begin, on_begin, on_end, on_run_end};
    gl_exec_set_observer(e, &o);
    gl_tensor *x = random_f32(2, (int64_t[]){4, 8}, 1);
    const void *first[3];
    for (int run = 0; run < 3; run++) {
        gl_tensor *y = NULL;
        cr_assert_eq(gl_exec_run(e, (const gl_tensor *[]){x}, 1, &y, 1), GL_OK, "%s",
                     gl_error_message());
        cr_expect_eq(s.n_begin, 3);
        cr_expect_eq(s.n_end, 3);
        cr_expect_str_eq(s.order[0], "r");
        cr_expect_str_eq(s.order[1], "n");
        cr_expect_str_eq(s.order[2], "a");
        if (run == 1)
            memcpy(first, s.data, sizeof(first));
        /* Intermediates are written into the same lent buffers from the second run on. */
        if (run == 2)
            for (int i = 0; i < 2; i++)
                cr_expect_eq(s.data[i], first[i], "node %d writes where it wrote before", i);
        gl_tensor_free(y);
    }
    cr_expect(s.outputs_present && s.ns_set);
    cr_expect_eq(s.runs_begun, 3);
    cr_expect_eq(s.runs_ended, 3);
    /* Without an observer nothing is called. */
    gl_exec_set_observer(e, NULL);
    gl_tensor *y = NULL;
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *[]){x}, 1, &y, 1), GL_OK);
    cr_expect_eq(s.runs_begun, 3);
    gl_tensor_free(y);
    gl_tensor_free(x);
    gl_exec_free(e);
    gl_model_free(m);
}

/* Outputs handed to the caller are its own: later runs do not write into them. */
Test(exec_plan, outputs_survive_later_runs)
{
    gl_model *m = chain_model();
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK);
    gl_tensor *x1 = random_f32(2, (int64_t[]){4, 8}, 1), *x2 = random_f32(2, (int64_t[]){4, 8}, 2);
    gl_tensor *y1 = NULL, *y2 = NULL;
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *[]){x1}, 1, &y1, 1), GL_OK);
    float keep[32];
    memcpy(keep, gl_tensor_data(y1), sizeof(keep));
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *[]){x2}, 1, &y2, 1), GL_OK);
    cr_expect(gl_tensor_data(y1) != gl_tensor_data(y2));
    cr_expect(memcmp(keep, gl_tensor_data(y1), sizeof(keep)) == 0, "y1 unchanged by run 2");
    gl_tensor_free(y1);
    gl_tensor_free(y2);
    gl_tensor_free(x1);
    gl_tensor_free(x2);
    gl_exec_free(e);
    gl_model_free(m);
}

/* ---- the plan table ------------------------------------------------------------------------ */

/* custom.Twice(X) = Add(X, X): a model-local function. */
static gl_model *function_model(void)
{
    gl_model *m = tu_model(13);
    gl_model_set_opset(m, "custom", 1);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (const int64_t[]){3});
    gl_node *call = gl_add_node(m->graph, "Twice", "custom", "call", &x, 1, 1);
    gl_node *after = tu_node(m->graph, "Relu", "after", 1, call->outputs[0]);
    tu_output(m->graph, after->outputs[0]);
    m->functions = gl_xcalloc(1, sizeof(*m->functions));
    m->n_functions = 1;
    gl_function *f = &m->functions[0];
    f->name = gl_xstrdup("Twice");
    f->domain = gl_xstrdup("custom");
    f->opsets = gl_xcalloc(1, sizeof(*f->opsets));
    f->opsets[0] = (gl_opset){gl_xstrdup(""), 13};
    f->n_opsets = 1;
    f->body = gl_graph_new(m, NULL, "Twice");
    gl_value *in = gl_add_value(f->body, "X");
    gl_graph_add_input(f->body, in);
    gl_node *add = tu_node(f->body, "Add", "add", 2, in, in);
    gl_graph_add_output(f->body, add->outputs[0]);
    return m;
}

Test(exec_plan, table_has_every_node_with_depth_and_parent)
{
    gl_model *m = function_model();
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, NULL, &e), GL_OK, "%s", gl_error_message());
    /* call (body), its Add one deeper, then Relu */
    cr_assert_eq(gl_exec_plan_count(e), 3);
    const gl_plan_entry *call = gl_exec_plan_at(e, 0), *add = gl_exec_plan_at(e, 1),
                        *relu = gl_exec_plan_at(e, 2);
    cr_expect_str_eq(call->node->name, "call");
    cr_expect_str_eq(call->backend, "body");
    cr_expect_eq(call->depth, 0);
    cr_expect_eq(call->parent, SIZE_MAX);
    cr_expect_str_eq(add->node->op_type, "Add");
    cr_expect_eq(add->depth, 1);
    cr_expect_eq(add->parent, 0);
    cr_expect_str_eq(add->backend, "ref");
    cr_expect_str_eq(relu->node->name, "after");
    cr_expect_eq(relu->depth, 0);
    cr_expect_null(gl_exec_plan_at(e, 3));
    gl_exec_free(e);
    gl_model_free(m);
}

/* ---- a backend may take a function call whole ------------------------------------------------ */

static int whole_runs;

static bool whole_claims(void *ctx, const gl_model *m, const gl_node *n, const gl_function *fn,
                         char *why, size_t len)
{
    (void)ctx, (void)m, (void)n;
    if (!fn)
        snprintf(why, len, "only whole function calls");
    return fn != NULL && strcmp(fn->name, "Twice") == 0;
}

/* Runs the call as one unit: 2 * X, computed here (not by the body). */
static gl_status whole_run(gl_kernel_ctx *k, void **state)
{
    (void)state;
    whole_runs++;
    const gl_tensor *x = k->in[0];
    gl_tensor *y = gl_out_new(k, 0, GL_DT_FLOAT, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    float *py = gl_tensor_make_writable(y);
    const float *px = gl_tensor_data(x);
    for (int64_t i = 0; i < x->count; i++)
        py[i] = 2 * px[i];
    return GL_OK;
}

static const gl_backend whole_backend = {.name = "whole", .claims = whole_claims,
                                         .run = whole_run};

Test(exec_plan, a_backend_claims_a_function_call_before_it_is_expanded)
{
    gl_model *m = function_model();
    gl_exec_options o = {.custom_backend = &whole_backend};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    /* No body entries: the call is one unit; Relu falls back with the backend's reason. */
    cr_assert_eq(gl_exec_plan_count(e), 2);
    const gl_plan_entry *call = gl_exec_plan_at(e, 0), *relu = gl_exec_plan_at(e, 1);
    cr_expect_str_eq(call->backend, "whole");
    cr_expect_str_eq(relu->backend, "ref");
    cr_expect(relu->fell_back);
    cr_expect_str_eq(relu->info.note, "only whole function calls");
    gl_tensor *x = tu_tensor_f32(1, (const int64_t[]){3}, (const float[]){-1, 2, 3});
    gl_tensor *y = NULL;
    whole_runs = 0;
    cr_assert_eq(gl_exec_run(e, (const gl_tensor *[]){x}, 1, &y, 1), GL_OK, "%s",
                 gl_error_message());
    cr_expect_eq(whole_runs, 1);
    const float *p = gl_tensor_data(y);
    cr_expect(p[0] == 0 && p[1] == 4 && p[2] == 6, "relu(2x): %g %g %g", p[0], p[1], p[2]);
    gl_tensor_free(y);
    gl_tensor_free(x);
    gl_exec_free(e);
    gl_model_free(m);
}

/* ---- oneDNN: layouts, conversions, the weight cache, the shape guard ---------------------------- */

/* Conv c1 -> Relu r -> Conv c2 -> Flatten f (reference) -> Relu fr (plain, small) -> y,
 * and c2's output also to Floor g (a second reference consumer of the same value). */
static gl_model *conv_chain_model(int64_t channels)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    int64_t xd[4] = {1, channels, 8, 8}, wd[4] = {channels, channels, 3, 3};
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, xd);
    gl_value *w1 = random_const(g, "w1", 4, wd, 11), *w2 = random_const(g, "w2", 4, wd, 12);
    gl_node *c1 = tu_node(g, "Conv", "c1", 2, x, w1);
    gl_node_set_attr_ints(c1, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    gl_node *r = tu_node(g, "Relu", "r", 1, c1->outputs[0]);
    gl_node *c2 = tu_node(g, "Conv", "c2", 2, r->outputs[0], w2);
    gl_node_set_attr_ints(c2, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    gl_node *f = tu_node(g, "Flatten", "f", 1, c2->outputs[0]);
    gl_node *ab = tu_node(g, "Floor", "g", 1, c2->outputs[0]);
    gl_node *sum = tu_node(g, "ReduceSum", "s", 1, ab->outputs[0]);
    gl_node *fr = tu_node(g, "Relu", "fr", 1, f->outputs[0]);
    tu_output(g, fr->outputs[0]);
    (void)sum;
    return m;
}

Test(exec_plan, dnnl_keeps_layouts_and_converts_once_for_plain_consumers)
{
    static const char *layouts[] = {"nhwc", "blocked"};
    for (size_t l = 0; l < GL_ARRAY_LEN(layouts); l++) {
        gl_model *m = conv_chain_model(16);
        gl_exec_options o = {.backend = "dnnl", .layout = layouts[l]};
        gl_exec *e = NULL;
        cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
        gl_tensor *x = random_f32(4, (int64_t[]){1, 16, 8, 8}, 3);
        expect_like_reference(m, e, (const gl_tensor *[]){x}, 1);
        const gl_plan_entry *c1 = entry_named(e, "c1"), *r = entry_named(e, "r"),
                            *f = entry_named(e, "f"), *g = entry_named(e, "g");
        cr_assert(c1 && r && f && g);
        const char *act = strcmp(layouts[l], "nhwc") == 0 ? "nhwc" : "nChw";
        cr_expect(strstr(c1->info.out_layouts, act), "%s: c1 writes %s", layouts[l],
                  c1->info.out_layouts);
        cr_expect(strncmp(r->info.in_layouts, act, strlen(act)) == 0 &&
                      strstr(r->info.out_layouts, act),
                  "%s: the Relu stays in the layout: %s -> %s", layouts[l], r->info.in_layouts,
                  r->info.out_layouts);
        cr_expect_eq(r->conversions, 0);
        /* c2's output goes to plain once, for Flatten and Floor. */
        gl_exec_stats st;
        gl_exec_get_stats(e, &st);
        cr_expect_eq(f->conversions + g->conversions, 1, "%s: one conversion for two readers",
                     layouts[l]);
        cr_expect_eq(st.conversions, 1);
        gl_tensor_free(x);
        gl_exec_free(e);
        gl_model_free(m);
    }
}

Test(exec_plan, dnnl_second_run_builds_nothing_and_reorders_no_constant)
{
    gl_model *m = conv_chain_model(16);
    gl_exec_options o = {.backend = "dnnl", .layout = "blocked"};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    gl_tensor *x = random_f32(4, (int64_t[]){1, 16, 8, 8}, 3);
    gl_exec_stats st[3];
    for (int run = 0; run < 3; run++) {
        gl_tensor *y = NULL;
        cr_assert_eq(gl_exec_run(e, (const gl_tensor *[]){x}, 1, &y, 1), GL_OK, "%s",
                     gl_error_message());
        gl_exec_get_stats(e, &st[run]);
        gl_tensor_free(y);
    }
    cr_expect_gt(st[0].builds, 0);
    cr_expect_eq(st[0].const_reorders, 2, "both weights reordered in the first run: %zu",
                 st[0].const_reorders);
    for (int run = 1; run < 3; run++) {
        cr_expect_eq(st[run].builds, 0, "run %d builds %zu", run, st[run].builds);
        cr_expect_eq(st[run].const_reorders, 0, "run %d reorders %zu constants", run,
                     st[run].const_reorders);
        cr_expect_eq(st[run].reorders, st[0].reorders);
    }
    gl_tensor_free(x);
    gl_exec_free(e);
    gl_model_free(m);
}

/* A run with another input shape rebuilds (and reorders the weights again); going back
 * rebuilds once more; the results always match the reference. */
Test(exec_plan, dnnl_shape_guard_rebuilds_for_new_shapes)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, (int64_t[]){-1, 8, -1, -1});
    gl_value *w = random_const(g, "w", 4, (int64_t[]){8, 8, 1, 1}, 5);
    gl_node *c = tu_node(g, "Conv", "c", 2, x, w);
    gl_node *r = tu_node(g, "Relu", "r", 1, c->outputs[0]);
    tu_output(g, r->outputs[0]);
    gl_exec_options o = {.backend = "dnnl", .layout = "nhwc"};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    static const int64_t shapes[][4] = {{1, 8, 6, 6}, {1, 8, 6, 6}, {2, 8, 5, 7}, {1, 8, 6, 6}};
    static const bool rebuilds[] = {true, false, true, true};
    for (size_t i = 0; i < GL_ARRAY_LEN(shapes); i++) {
        gl_tensor *t = random_f32(4, shapes[i], (uint32_t)i + 1);
        expect_like_reference(m, e, (const gl_tensor *[]){t}, 1);
        gl_exec_stats st;
        gl_exec_get_stats(e, &st);
        cr_expect_eq(st.builds > 0, rebuilds[i], "shape %zu: %zu builds", i, st.builds);
        cr_expect_eq(st.const_reorders > 0, rebuilds[i], "shape %zu: %zu constant reorders", i,
                     st.const_reorders);
        gl_tensor_free(t);
    }
    gl_exec_free(e);
    gl_model_free(m);
}

/* ---- oneDNN: a call's body sees the caller's constants ---------------------------------------- */

/* graphlab.fused.F(x, w1, w2, lo, hi) with w1, w2, lo, hi initializers of the caller; the
 * body Conv 1x1 (W1) -> Clip (LO, HI) -> then, `whole`: a depthwise 3x3 Conv (W2) and a
 * Clip, a unit oneDNN runs as two primitives with their post-ops; else a 3x3 Conv (W2),
 * then Floor, which oneDNN has no primitive for, so the executor expands the call. */
static gl_model *unit_model(bool whole)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_model_set_opset(m, "graphlab.fused", 1);
    int64_t c = 16;
    gl_value *args[5];
    args[0] = tu_input(g, "x", GL_DT_FLOAT, 4, (const int64_t[]){1, c, 8, 8});
    args[1] = random_const(g, "w1", 4, (const int64_t[]){c, c, 1, 1}, 21);
    args[2] = random_const(g, "w2", 4, (const int64_t[]){c, whole ? 1 : c, 3, 3}, 22);
    args[3] = tu_const_f32(g, "lo", 0, NULL, (const float[]){0.0f});
    args[4] = tu_const_f32(g, "hi", 0, NULL, (const float[]){0.5f});
    gl_node *call = gl_add_node(g, "F", "graphlab.fused", "call", args, 5, 1);
    tu_output(g, call->outputs[0]);
    m->functions = gl_xcalloc(1, sizeof(*m->functions));
    m->n_functions = 1;
    gl_function *f = &m->functions[0];
    f->name = gl_xstrdup("F");
    f->domain = gl_xstrdup("graphlab.fused");
    f->opsets = gl_xcalloc(1, sizeof(*f->opsets));
    f->opsets[0] = (gl_opset){gl_xstrdup(""), 13};
    f->n_opsets = 1;
    gl_graph *b = f->body = gl_graph_new(m, NULL, "F");
    static const char *const formal[] = {"X", "W1", "W2", "LO", "HI"};
    gl_value *in[5];
    for (size_t i = 0; i < 5; i++) {
        in[i] = gl_add_value(b, formal[i]);
        gl_graph_add_input(b, in[i]);
    }
    gl_node *c1 = tu_node(b, "Conv", "c1", 2, in[0], in[1]);
    gl_node *r1 = tu_node(b, "Clip", "r1", 3, c1->outputs[0], in[3], in[4]);
    gl_node *c2 = tu_node(b, "Conv", "c2", 2, r1->outputs[0], in[2]);
    gl_node_set_attr_ints(c2, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    if (whole)
        gl_node_set_attr_int(c2, "group", c);
    gl_node *last = whole ? tu_node(b, "Clip", "r2", 3, c2->outputs[0], in[3], in[4])
                          : tu_node(b, "Floor", "fl", 1, c2->outputs[0]);
    gl_graph_add_output(b, last->outputs[0]);
    return m;
}

/* Three runs: the first reorders `first_reorders` constants, the later ones none and build
 * nothing; every run computes what the reference does. */
static void expect_constants_once(const gl_model *m, gl_exec *e, size_t first_reorders)
{
    gl_tensor *x = random_f32(4, (int64_t[]){1, 16, 8, 8}, 7);
    for (int run = 0; run < 3; run++) {
        expect_like_reference(m, e, (const gl_tensor *[]){x}, 1);
        gl_exec_stats st;
        gl_exec_get_stats(e, &st);
        if (run == 0) {
            cr_expect_eq(st.const_reorders, first_reorders, "run 0 reorders %zu constants",
                         st.const_reorders);
            continue;
        }
        cr_expect_eq(st.builds, 0, "run %d builds %zu", run, st.builds);
        cr_expect_eq(st.const_reorders, 0, "run %d reorders %zu constants", run,
                     st.const_reorders);
    }
    gl_tensor_free(x);
}

Test(exec_plan, dnnl_expanded_body_reads_the_callers_weights_as_constants)
{
    gl_model *m = unit_model(false);
    gl_exec_options o = {.backend = "dnnl", .layout = "blocked"};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    const gl_plan_entry *call = entry_named(e, "call");
    cr_assert(call);
    cr_expect_str_eq(call->backend, "body");
    expect_constants_once(m, e, 2);
    const gl_plan_entry *c1 = entry_named(e, "c1"), *r1 = entry_named(e, "r1");
    cr_assert(c1 && r1);
    cr_expect_str_eq(c1->backend, "dnnl");
    cr_expect(strstr(c1->info.in_layouts, "(once)"), "the weight is packed once: %s",
              c1->info.in_layouts);
    /* Clip's bounds are the caller's constants: oneDNN's clip, not the reference. */
    cr_expect_str_eq(r1->backend, "dnnl");
    cr_expect(strcmp(r1->info.impl, "ref") != 0, "Clip runs %s (%s)", r1->info.impl,
              r1->info.note);
    gl_exec_free(e);
    gl_model_free(m);
}

Test(exec_plan, dnnl_runs_a_unit_as_its_primitives_with_constant_weights)
{
    gl_model *m = unit_model(true);
    gl_exec_options o = {.backend = "dnnl", .layout = "blocked"};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_exec_plan_count(e), 1, "the call is one row, not expanded");
    expect_constants_once(m, e, 2);
    const gl_plan_entry *call = entry_named(e, "call");
    cr_assert(call);
    cr_expect_str_eq(call->backend, "dnnl");
    cr_expect(strstr(call->info.impl, "clip") && strstr(call->info.impl, " | "),
              "two primitives with their clip post-ops: %s", call->info.impl);
    cr_expect(strstr(call->info.note, "unit of 2"), "%s", call->info.note);
    gl_exec_free(e);
    gl_model_free(m);
}

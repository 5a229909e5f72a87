/* test_dnnl_rnn.c — LSTM, GRU and RNN on oneDNN's recurrent primitives (dn_rnn.c) and on
 * graphlab's AVX2 kernel (dn_rnn_avx2.c) against the reference kernels (ops/control.c).
 *
 * Each row is one recurrent node (named "op", opset 14) with random inputs of its sizes:
 * X and the initial states are graph inputs; W, R, B and P constants (or graph inputs
 * when the row says `fed`: then they are packed every run); sequence_lens an int32
 * constant. The model runs on the reference backend and on dnnl; every output the row
 * asks for must agree (rtol 1e-4, atol 1e-5), and the plan must show the node where the
 * row expects it: DN on oneDNN's primitive, REF on the reference kernel with the plan's
 * note naming the reason (`why`). A row marked `own` runs graphlab's AVX2 kernel instead
 * on a CPU without AVX-512 (the plan's impl names it); elsewhere `expect` and `why` hold,
 * and no other row may run it. A second run builds nothing and reorders no constant.
 */
#define TU_CASE_SHORTHANDS
#include "exec/compare.h"
#include "exec/exec.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-4
#define ATOL 1e-5

typedef enum { DN, REF } where_run;

typedef struct rnn_case {
    const char *name, *op;     /* "LSTM", "GRU", "RNN" */
    const char *dir;           /* NULL: forward */
    int layout;
    int64_t T, N, I, H;
    const char *given;         /* optional inputs present: 'b' B, 'h' initial_h,
                                * 'c' initial_c, 'p' P, 'l' sequence_lens (all T), 's'
                                * sequence_lens with a shorter row, 'S' with rows of
                                * every length down to 0, 'L' sequence_lens (all T) as a
                                * graph input, 'n' a NaN in X's row 1 at step 1 */
    const char *outs;          /* outputs asked for: 'y' Y, 'h' Y_h, 'c' Y_c */
    bool fed;                  /* W, R, B, P are graph inputs */
    tu_attr attrs[4];          /* more attributes (linear_before_reset, activations, ...) */
    where_run expect;
    const char *why;           /* REF: a part of the plan's note */
    const char *own;           /* graphlab's kernel on AVX2: its impl ("graphlab:avx2 lstm"),
                                * NULL: not that kernel */
    const char *own_no;        /* on AVX2, a part of the note: why not graphlab's kernel */
} rnn_case;

static bool has(const char *set, char c)
{
    return set && strchr(set, c);
}

typedef struct built {
    gl_model *m;
    gl_tensor *in[8]; /* graph inputs, in order */
    size_t n_in;
    size_t n_out;
} built;

/* Random values in [-0.5, 0.5): a relu cell stays bounded over the steps. */
static gl_tensor *random_half(int rank, const int64_t *dims, uint32_t *seed)
{
    gl_tensor *t = tu_random_f32(rank, dims, seed);
    float *p = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < t->count; i++)
        p[i] *= 0.5f;
    return t;
}

/* A float input of the node: a graph input (its tensor kept for the run) or a constant. */
static gl_value *float_input(built *b, const char *name, bool fed, int rank,
                             const int64_t *dims, uint32_t *seed)
{
    gl_tensor *t = random_half(rank, dims, seed);
    if (!fed)
        return tu_const_tensor(b->m->graph, name, t);
    b->in[b->n_in++] = t;
    return tu_input(b->m->graph, name, GL_DT_FLOAT, rank, dims);
}

static built build_row(const rnn_case *c, uint32_t *seed)
{
    built b = {.m = tu_model(14)};
    gl_graph *g = b.m->graph;
    bool lstm = strcmp(c->op, "LSTM") == 0;
    int64_t gates = lstm ? 4 : strcmp(c->op, "GRU") == 0 ? 3 : 1;
    int64_t D = c->dir && strcmp(c->dir, "bidirectional") == 0 ? 2 : 1;
    int64_t x_dims[] = {c->T, c->N, c->I}, w_dims[] = {D, gates * c->H, c->I},
            r_dims[] = {D, gates * c->H, c->H}, b_dims[] = {D, 2 * gates * c->H},
            s_dims[] = {D, c->N, c->H}, p_dims[] = {D, 3 * c->H};
    if (c->layout) {
        x_dims[0] = c->N, x_dims[1] = c->T;
        s_dims[0] = c->N, s_dims[1] = D;
    }
    gl_value *ins[8] = {0};
    ins[0] = float_input(&b, "X", true, 3, x_dims, seed);
    if (has(c->given, 'n')) /* row 1 at step 1 (layout 1: [N, T, I]) */
        ((float *)gl_tensor_make_writable(b.in[0]))[(c->layout ? c->T + 1 : c->N + 1) * c->I] =
            NAN;
    ins[1] = float_input(&b, "W", c->fed, 3, w_dims, seed);
    ins[2] = float_input(&b, "R", c->fed, 3, r_dims, seed);
    if (has(c->given, 'b'))
        ins[3] = float_input(&b, "B", c->fed, 2, b_dims, seed);
    if (has(c->given, 'l') || has(c->given, 's') || has(c->given, 'S') || has(c->given, 'L')) {
        int32_t lens[32];
        cr_assert(c->N <= 32, "%s: at most 32 rows", c->name);
        for (int64_t i = 0; i < c->N; i++)
            lens[i] = (int32_t)(has(c->given, 'S')                 ? c->T - i % (c->T + 1)
                                : has(c->given, 's') && i == 0 ? c->T - 1
                                                                 : c->T);
        gl_tensor *t = tu_tensor_of(GL_DT_INT32, 1, &c->N, lens);
        if (has(c->given, 'L')) {
            ins[4] = tu_input(g, "lens", GL_DT_INT32, 1, &c->N);
            b.in[b.n_in++] = t;
        } else {
            ins[4] = tu_const_tensor(g, "lens", t);
        }
    }
    if (has(c->given, 'h'))
        ins[5] = float_input(&b, "h0", true, 3, s_dims, seed);
    if (has(c->given, 'c'))
        ins[6] = float_input(&b, "c0", true, 3, s_dims, seed);
    if (has(c->given, 'p'))
        ins[7] = float_input(&b, "P", c->fed, 2, p_dims, seed);
    size_t n_in = 8;
    while (!ins[n_in - 1])
        n_in--;
    const char *names[3] = {has(c->outs, 'y') ? "Y" : NULL, has(c->outs, 'h') ? "Y_h" : NULL,
                            has(c->outs, 'c') ? "Y_c" : NULL};
    size_t n_out = 3;
    while (!names[n_out - 1])
        n_out--;
    gl_node *op = gl_add_node_named(g, c->op, "", "op", ins, n_in, names, n_out);
    cr_assert_not_null(op, "%s: node", c->name);
    gl_node_set_attr_int(op, "hidden_size", c->H);
    gl_node_set_attr_int(op, "layout", c->layout);
    if (c->dir)
        gl_node_set_attr_string(op, "direction", c->dir);
    tu_apply_attrs(op, c->attrs);
    for (size_t i = 0; i < n_out; i++)
        if (op->outputs[i]) {
            tu_output(g, op->outputs[i]);
            b.n_out++;
        }
    return b;
}

static void check_entry(const rnn_case *c, const gl_exec *e, const char *what)
{
    const gl_plan_entry *en = tu_plan_entry(e, "op", -1);
    cr_assert_not_null(en, "%s: no plan entry", what);
    const char *impl = en->info.impl, *note = en->info.note;
    /* impl "ref" is the reference kernel, unless the note says it is oneDNN's (GRU) */
    bool theirs = strstr(note, "oneDNN's reference implementation") != NULL;
    bool on_dnnl = strcmp(en->backend, "dnnl") == 0 && !en->fell_back &&
                   (strcmp(impl, "ref") != 0 || theirs);
    /* graphlab's kernel where dn_rnn_native_here says: without AVX-512, and on it for an
     * LSTM of one batch row */
    bool own_here = c->own && (!tu_cpu_has_avx512() || (strcmp(c->op, "LSTM") == 0 && c->N == 1));
    if (own_here) {
        cr_expect(on_dnnl && strcmp(impl, c->own) == 0, "%s: expected %s, got %s %s (%s)",
                  what, c->own, en->backend, impl, note);
        return;
    }
    cr_expect(strncmp(impl, "graphlab:", 9) != 0, "%s: expected oneDNN's primitive or the "
              "reference kernel, got %s (%s)", what, impl, note);
    if (c->own_no && !tu_cpu_has_avx512())
        cr_expect(strstr(note, c->own_no) != NULL, "%s: the note '%s' does not say '%s'",
                  what, note, c->own_no);
    if (c->expect == DN)
        cr_expect(on_dnnl, "%s: expected oneDNN's primitive, got %s %s (%s)", what,
                  en->backend, impl, note);
    else
        cr_expect(!on_dnnl, "%s: expected the reference kernel, got %s %s (%s)", what,
                  en->backend, impl, note);
    if (c->why)
        cr_expect(strstr(note, c->why) != NULL, "%s: the note '%s' does not say '%s'", what,
                  note, c->why);
}

static void run_case(const rnn_case *c, uint32_t *seed)
{
    char what[160];
    snprintf(what, sizeof(what), "%s %s", c->op, c->name);
    built b = build_row(c, seed);
    gl_tensor *want[3] = {0}, *got[3] = {0};
    gl_exec *ref = tu_exec_run(b.m, "ref", NULL, b.in, b.n_in, want, b.n_out, what);
    gl_exec *dn = tu_exec_run(b.m, "dnnl", NULL, b.in, b.n_in, got, b.n_out, what);
    for (size_t i = 0; i < b.n_out; i++) {
        gl_compare r;
        gl_compare_tensors(got[i], want[i], RTOL, ATOL, &r);
        char line[256];
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok, "%s: output %zu, dnnl vs ref: %s", what, i, line);
        gl_tensor_free(got[i]);
    }
    check_entry(c, dn, what);
    if (getenv("GL_TEST_PLAN")) {
        fprintf(stderr, "== %s\n", what);
        gl_exec_print_plan(dn, stderr);
    }
    tu_exec_rerun_cached(dn, (const gl_tensor *const *)b.in, b.n_in, got, b.n_out, what);
    for (size_t i = 0; i < b.n_out; i++) {
        gl_tensor_free(got[i]);
        gl_tensor_free(want[i]);
    }
    gl_exec_free(ref);
    gl_exec_free(dn);
    for (size_t i = 0; i < b.n_in; i++)
        gl_tensor_free(b.in[i]);
    gl_model_free(b.m);
}

static void run_cases(const rnn_case *cases, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i], &seed);
}

#define BIDI "bidirectional"
#define LBR AI("linear_before_reset", 1)

/* name, op, direction, layout, T, N, I, H, inputs given, outputs, fed */
/* graphlab's kernel's names (dn_rnn_avx2.c) */
#define OWN_LSTM "graphlab:avx2 lstm"
#define OWN_GRU "graphlab:avx2 gru"
#define OWN_LBR "graphlab:avx2 lbr_gru"
#define OWN_RNN "graphlab:avx2 rnn"

static const rnn_case lstm_cases[] = {
    {"plain", "LSTM", NULL, 0, 5, 3, 4, 6, "", "y", .expect = DN, .own = OWN_LSTM},
    {"all_out", "LSTM", NULL, 0, 5, 3, 4, 6, "bhc", "yhc", .expect = DN, .own = OWN_LSTM},
    {"reverse", "LSTM", "reverse", 0, 4, 2, 3, 5, "bhc", "yhc", .expect = DN, .own = OWN_LSTM},
    {"bidi", "LSTM", BIDI, 0, 6, 3, 5, 7, "bhc", "yhc", .expect = DN, .own = OWN_LSTM},
    {"bidi_y_only", "LSTM", BIDI, 0, 3, 1, 8, 16, "b", "y", .expect = DN, .own = OWN_LSTM},
    {"bidi_states", "LSTM", BIDI, 0, 3, 2, 4, 5, "bh", "yhc", .expect = DN, .own = OWN_LSTM},
    {"no_y", "LSTM", BIDI, 0, 3, 2, 4, 5, "bh", "hc", .expect = DN, .own = OWN_LSTM},
    {"c_only", "LSTM", NULL, 1, 3, 2, 4, 5, "bhc", "c", .expect = DN, .own = OWN_LSTM},
    {"batchwise", "LSTM", NULL, 1, 5, 3, 4, 6, "bhc", "yhc", .expect = DN, .own = OWN_LSTM},
    {"batchwise_bidi", "LSTM", BIDI, 1, 4, 3, 5, 9, "bhc", "yhc", .expect = DN, .own = OWN_LSTM},
    {"h0_without_c0", "LSTM", NULL, 0, 3, 2, 3, 4, "bh", "yc", .expect = DN, .own = OWN_LSTM},
    {"c0_without_h0", "LSTM", "reverse", 1, 3, 2, 3, 4, "c", "yh", .expect = DN, .own = OWN_LSTM},
    {"odd_sizes", "LSTM", BIDI, 0, 7, 5, 13, 11, "bhc", "yhc", .expect = DN, .own = OWN_LSTM},
    {"wide", "LSTM", NULL, 0, 4, 2, 64, 128, "b", "yh", .expect = DN, .own = OWN_LSTM},
    {"fed_weights", "LSTM", BIDI, 0, 4, 2, 3, 5, "bhcp", "yhc", true, .expect = DN,
     .own_no = "given each run"},
    {"peepholes", "LSTM", BIDI, 0, 5, 2, 3, 6, "bhcp", "yhc", .expect = DN, .own = OWN_LSTM},
    {"lens_all_T", "LSTM", NULL, 0, 4, 3, 3, 5, "bl", "yh", .expect = DN, .own = OWN_LSTM},
    {"lens_fed_few", "LSTM", NULL, 0, 4, 8, 3, 5, "bL", "yh", .expect = DN, .own = OWN_LSTM},
    /* more rows than the shape guard keeps by value: a build could not trust them */
    {"lens_fed_many", "LSTM", NULL, 0, 4, 9, 3, 5, "bL", "yh", .expect = REF,
     .why = "given each run"},
    {"lens_shorter", "LSTM", NULL, 0, 4, 3, 3, 5, "bs", "yh", .expect = REF,
     .why = "sequence_lens not all", .own = OWN_LSTM},
    {"clip", "LSTM", NULL, 0, 4, 2, 3, 5, "b", "y", .attrs = {AF("clip", 0.5f)}, .expect = REF,
     .why = "clip"},
    {"input_forget", "LSTM", NULL, 0, 4, 2, 3, 5, "b", "y", .attrs = {AI("input_forget", 1)},
     .expect = REF, .why = "input_forget"},
    {"activations", "LSTM", NULL, 0, 4, 2, 3, 5, "b", "y",
     .attrs = {ASTRINGS("activations", 3, "Sigmoid", "Relu", "Tanh")}, .expect = REF,
     .why = "activation 'Relu'"},
    {"default_activations_named", "LSTM", NULL, 0, 4, 2, 3, 5, "b", "y",
     .attrs = {ASTRINGS("activations", 3, "sigmoid", "tanh", "tanh")}, .expect = DN,
     .own = OWN_LSTM},
    /* graphlab's kernel: batch 1, 3, 8, H not a multiple of 8, states, lengths, NaN */
    {"b1_fwd", "LSTM", NULL, 0, 6, 1, 5, 11, "bhc", "yhc", .expect = DN, .own = OWN_LSTM},
    {"b8_bidi", "LSTM", BIDI, 0, 5, 8, 7, 13, "bhc", "yhc", .expect = DN, .own = OWN_LSTM},
    {"b3_rev_batchwise", "LSTM", "reverse", 1, 4, 3, 9, 8, "bh", "yhc", .expect = DN,
     .own = OWN_LSTM},
    {"b1_bidi_wide", "LSTM", BIDI, 0, 4, 1, 64, 128, "b", "yhc", .expect = DN,
     .own = OWN_LSTM},
    /* one row by R: 12 panels, eight at a time and four one at a time */
    {"b1_groups_and_panels", "LSTM", "reverse", 0, 4, 1, 7, 24, "bhc", "yhc", .expect = DN,
     .own = OWN_LSTM},
    {"lens_every", "LSTM", BIDI, 0, 5, 8, 3, 6, "bhcS", "yhc", .expect = REF,
     .why = "sequence_lens not all", .own = OWN_LSTM},
    {"lens_every_batchwise", "LSTM", "reverse", 1, 5, 8, 3, 9, "bS", "yhc", .expect = REF,
     .why = "sequence_lens not all", .own = OWN_LSTM},
    {"peep_lens", "LSTM", BIDI, 0, 5, 8, 4, 10, "bhcpS", "yhc", .expect = REF,
     .why = "sequence_lens not all", .own = OWN_LSTM},
    {"nan", "LSTM", BIDI, 0, 4, 3, 5, 6, "bn", "yhc", .expect = DN, .own = OWN_LSTM},
    /* many rows of X (T * N 72 and 140) */
    {"rows_72", "LSTM", NULL, 0, 9, 8, 5, 6, "bhc", "yhc", .expect = DN, .own = OWN_LSTM},
    {"rows_140_lens", "LSTM", BIDI, 1, 20, 7, 3, 9, "bS", "yhc", .expect = REF,
     .why = "sequence_lens not all", .own = OWN_LSTM},
    /* more rows than graphlab's kernel takes: oneDNN's */
    {"rows_65", "LSTM", BIDI, 0, 3, 65, 4, 5, "bh", "yhc", .expect = DN,
     .own_no = "more batch rows"},
};

static const rnn_case gru_cases[] = {
    {"plain", "GRU", NULL, 0, 5, 3, 4, 6, "", "y", .expect = DN, .own = OWN_GRU},
    {"bias_h0", "GRU", NULL, 0, 5, 3, 4, 6, "bh", "yh", .expect = DN, .own = OWN_GRU},
    {"lbr", "GRU", NULL, 0, 5, 3, 4, 6, "bh", "yh", .attrs = {LBR}, .expect = DN, .own = OWN_LBR},
    {"reverse_lbr", "GRU", "reverse", 0, 4, 2, 3, 5, "bh", "yh", .attrs = {LBR}, .expect = DN,
     .own = OWN_LBR},
    {"bidi", "GRU", BIDI, 0, 6, 3, 5, 7, "bh", "yh", .expect = DN, .own = OWN_GRU},
    {"bidi_lbr", "GRU", BIDI, 0, 6, 3, 5, 7, "bh", "yh", .attrs = {LBR}, .expect = DN,
     .own = OWN_LBR},
    {"batchwise", "GRU", NULL, 1, 5, 3, 4, 6, "bh", "yh", .expect = DN, .own = OWN_GRU},
    {"batchwise_bidi_lbr", "GRU", BIDI, 1, 4, 5, 3, 9, "bh", "yh", .attrs = {LBR},
     .expect = DN, .own = OWN_LBR},
    {"h_only", "GRU", BIDI, 0, 4, 2, 3, 5, "b", "h", .expect = DN, .own = OWN_GRU},
    {"odd_sizes", "GRU", BIDI, 0, 7, 5, 13, 11, "bh", "yh", .attrs = {LBR}, .expect = DN,
     .own = OWN_LBR},
    {"wide", "GRU", NULL, 0, 4, 1, 256, 128, "bh", "yh", .expect = DN, .own = OWN_GRU},
    {"fed_weights", "GRU", NULL, 0, 4, 2, 3, 5, "bh", "yh", true, .attrs = {LBR},
     .expect = DN, .own_no = "given each run"},
    {"lens_shorter", "GRU", NULL, 0, 4, 3, 3, 5, "bs", "yh", .expect = REF,
     .why = "sequence_lens not all", .own = OWN_GRU},
    {"activations", "GRU", NULL, 0, 4, 2, 3, 5, "b", "y",
     .attrs = {ASTRINGS("activations", 2, "Sigmoid", "Relu")}, .expect = REF,
     .why = "activation 'Relu'"},
    {"b1_bidi", "GRU", BIDI, 0, 5, 1, 6, 11, "bh", "yh", .expect = DN, .own = OWN_GRU},
    /* z and r: 10 panels (eight at once, two alone), then h's 5 from panel 10 */
    {"b1_groups_and_panels", "GRU", NULL, 0, 4, 1, 9, 40, "bh", "yh", .expect = DN,
     .own = OWN_GRU},
    {"b1_bidi_lbr", "GRU", BIDI, 0, 5, 1, 6, 11, "bh", "yh", .attrs = {LBR}, .expect = DN,
     .own = OWN_LBR},
    {"b8_rev", "GRU", "reverse", 0, 5, 8, 4, 9, "bh", "yh", .expect = DN, .own = OWN_GRU},
    {"b8_rev_lbr", "GRU", "reverse", 0, 5, 8, 4, 9, "bh", "yh", .attrs = {LBR},
     .expect = DN, .own = OWN_LBR},
    {"b3_batchwise_bidi", "GRU", BIDI, 1, 4, 3, 7, 16, "bh", "yh", .expect = DN,
     .own = OWN_GRU},
    {"lens_every", "GRU", BIDI, 0, 5, 8, 3, 6, "bhS", "yh", .expect = REF,
     .why = "sequence_lens not all", .own = OWN_GRU},
    {"lens_every_lbr", "GRU", BIDI, 1, 5, 8, 3, 6, "bhS", "yh", .attrs = {LBR},
     .expect = REF, .why = "sequence_lens not all", .own = OWN_LBR},
    {"nan", "GRU", BIDI, 0, 4, 3, 5, 6, "bn", "yh", .expect = DN, .own = OWN_GRU},
    {"rows_140", "GRU", BIDI, 0, 20, 7, 3, 9, "bh", "yh", .expect = DN, .own = OWN_GRU},
    {"nan_lbr", "GRU", BIDI, 0, 4, 3, 5, 6, "bn", "yh", .attrs = {LBR}, .expect = DN,
     .own = OWN_LBR},
    {"rows_65", "GRU", NULL, 0, 3, 65, 4, 5, "bh", "yh", .attrs = {LBR}, .expect = DN,
     .own_no = "more batch rows"},
};

static const rnn_case vanilla_cases[] = {
    {"plain", "RNN", NULL, 0, 5, 3, 4, 6, "", "y", .expect = DN, .own = OWN_RNN},
    {"bias_h0", "RNN", NULL, 0, 5, 3, 4, 6, "bh", "yh", .expect = DN, .own = OWN_RNN},
    {"relu", "RNN", "reverse", 0, 5, 3, 4, 6, "bh", "yh",
     .attrs = {ASTRINGS("activations", 1, "Relu")}, .expect = DN,
     .own_no = "other than Tanh"},
    {"sigmoid_bidi", "RNN", BIDI, 0, 5, 3, 4, 6, "bh", "yh",
     .attrs = {ASTRINGS("activations", 2, "Sigmoid", "Sigmoid")}, .expect = DN},
    {"batchwise_bidi", "RNN", BIDI, 1, 4, 3, 5, 9, "bh", "yh", .expect = DN, .own = OWN_RNN},
    {"odd_sizes", "RNN", BIDI, 1, 7, 5, 13, 11, "bh", "yh", .expect = DN, .own = OWN_RNN},
    {"fed_weights", "RNN", NULL, 0, 4, 2, 3, 5, "bh", "yh", true, .expect = DN,
     .own_no = "given each run"},
    {"h_only", "RNN", "reverse", 1, 4, 2, 3, 5, "bh", "h", .expect = DN, .own = OWN_RNN},
    {"two_activations", "RNN", BIDI, 0, 4, 2, 3, 5, "b", "y",
     .attrs = {ASTRINGS("activations", 2, "Tanh", "Relu")}, .expect = REF,
     .why = "every direction"},
    {"affine", "RNN", NULL, 0, 4, 2, 3, 5, "b", "y",
     .attrs = {ASTRINGS("activations", 1, "Affine")}, .expect = REF,
     .why = "activation 'Affine'"},
    {"lens_shorter", "RNN", NULL, 0, 4, 3, 3, 5, "bs", "yh", .expect = REF,
     .why = "sequence_lens not all", .own = OWN_RNN},
    {"b8_bidi", "RNN", BIDI, 0, 5, 8, 6, 10, "bh", "yh", .expect = DN, .own = OWN_RNN},
    {"b1_rev", "RNN", "reverse", 0, 6, 1, 3, 5, "bh", "yh", .expect = DN, .own = OWN_RNN},
    {"lens_every", "RNN", BIDI, 1, 5, 8, 4, 7, "bhS", "yh", .expect = REF,
     .why = "sequence_lens not all", .own = OWN_RNN},
    {"nan", "RNN", NULL, 0, 4, 3, 4, 5, "bn", "yh", .expect = DN, .own = OWN_RNN},
};

Test(dnnl_rnn, lstm) { run_cases(lstm_cases, GL_ARRAY_LEN(lstm_cases), 11); }
Test(dnnl_rnn, gru) { run_cases(gru_cases, GL_ARRAY_LEN(gru_cases), 22); }
Test(dnnl_rnn, rnn) { run_cases(vanilla_cases, GL_ARRAY_LEN(vanilla_cases), 33); }

/* dn_rnn.c — LSTM, GRU and RNN as oneDNN's recurrent primitives (forward_inference):
 * lstm (with peepholes: lstm_v2), gru, lbr_gru (linear_before_reset=1) and vanilla_rnn,
 * one layer, forward, reverse or bidirectional.
 *
 * The tensors, ONNX against oneDNN:
 *   X [T, N, I] (layout 1: [N, T, I])       src_layer tnc (ntc): the same bytes.
 *   Y [T, D, N, H] (layout 1: [N, T, D, H]) dst_layer [T, N, D*H] tnc (ntc); one direction
 *       or layout 1: the same bytes. Bidirectional with layout 0: dst_layer concatenates
 *       the directions per row, [T, N, D, H] in memory; Y carries that as a strided
 *       layout (a view: what reads it converts it once, and the Transpose(0, 2, 1, 3)
 *       torch puts after it reads it as it is, plain).
 *   initial_h, initial_c [D, N, H] (layout 1: [N, D, H])  src_iter(_c) ldnc [1, D, N, H]
 *       (layout 1: one reorder); Y_h, Y_c likewise from dst_iter(_c) (layout 1: a
 *       strided layout).
 *   W [D, G*H, I], R [D, G*H, H]            weights ldigo [1, D, I|H, G, H], its gates in
 *       oneDNN's order, packed by us and reordered into the primitive's layout: once at
 *       build when they are constants, else before every run.
 *   B [D, 2*G*H] (Wb then Rb)               bias ldgo [1, D, G, H]: Wb + Rb per gate; for
 *       lbr_gru G+1 gates, the last Rb_h alone (it sits inside r * (R_h h + Rb_h)).
 *   P [D, 3*H] (LSTM peepholes i, o, f)     weights_peephole ldgo [1, D, 3, H] (i, f, o).
 * Gate orders: ONNX LSTM i, o, f, c against oneDNN's i, f, c~, o; GRU z, r, h against
 * u, r, o (the same); RNN has one.
 *
 * On a CPU without AVX-512, constant weights, the default activations (an RNN's Tanh)
 * and at most 64 batch rows, graphlab's own kernel runs the node instead of the primitive
 * (dn_rnn_avx2.c, on the same bindings): oneDNN 2.6 has only its reference driver there.
 * It also takes sequence_lens shorter than the sequence.
 *
 * What stays on the reference kernel, the plan saying why: clip, input_forget,
 * activations other than the defaults (an RNN takes one of Tanh, Relu, Sigmoid for both
 * directions), sequence_lens that are not all the sequence length (oneDNN has no per-row
 * lengths) where graphlab's kernel does not run, float types other than float32, inputs
 * the reference kernel would reject (wrong shapes: it says what is wrong).
 */
#include "exec/dnnl/dn_opkit.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the cells ------------------------------------------------------------------------ */

typedef enum rnn_kind { RNN_VANILLA, RNN_GRU, RNN_LSTM } rnn_kind;

typedef struct cell_def {
    rnn_kind kind;
    int gates;                 /* ONNX's blocks of H rows in W and R (oneDNN has as many) */
    const int *onnx_gate;      /* oneDNN gate g is ONNX gate onnx_gate[g] */
    int n_acts;                /* activations per direction */
    const char *defaults[3];   /* ONNX's default activations */
} cell_def;

static const int lstm_gates[] = {0, 2, 3, 1}; /* i, f, c~, o from i, o, f, c */
static const int same_gates[] = {0, 1, 2};    /* GRU u, r, o = z, r, h; RNN's one */
static const int peep_gates[] = {0, 2, 1};    /* i, f, o from P's i, o, f */

static const cell_def cell_lstm = {RNN_LSTM, 4, lstm_gates, 3, {"Sigmoid", "Tanh", "Tanh"}};
static const cell_def cell_gru = {RNN_GRU, 3, same_gates, 2, {"Sigmoid", "Tanh"}};
static const cell_def cell_rnn = {RNN_VANILLA, 1, same_gates, 1, {"Tanh"}};

static const cell_def *cell_of(const gl_node *n)
{
    return strcmp(n->op_type, "LSTM") == 0 ? &cell_lstm
           : strcmp(n->op_type, "GRU") == 0 ? &cell_gru
                                            : &cell_rnn;
}

/* ONNX's node inputs and outputs. */
enum { IN_X, IN_W, IN_R, IN_B, IN_LENS, IN_H0, IN_C0, IN_P };
enum { OUT_Y, OUT_YH, OUT_YC };

/* What the attributes ask for, when oneDNN can do it. */
typedef struct rnn_attrs {
    const cell_def *cell;
    int dirs;
    dnnl_rnn_direction_t direction;
    int layout;                /* 0: sequence first; 1: batch first */
    bool lbr;                  /* GRU linear_before_reset */
    dnnl_alg_kind_t act;       /* RNN: its activation */
} rnn_attrs;

/* The vanilla RNN's activation of ONNX name s (0: none oneDNN has). */
static dnnl_alg_kind_t vanilla_act(const gl_bytes *s)
{
    static const struct {
        const char *name;
        dnnl_alg_kind_t alg;
    } acts[] = {{"Tanh", dnnl_eltwise_tanh}, {"Relu", dnnl_eltwise_relu},
                {"Sigmoid", dnnl_eltwise_logistic}};
    for (size_t i = 0; i < GL_ARRAY_LEN(acts); i++)
        if (strlen(acts[i].name) == s->len &&
            strncasecmp(acts[i].name, (const char *)s->data, s->len) == 0)
            return acts[i].alg;
    return (dnnl_alg_kind_t)0;
}

/* The activations attribute: LSTM and GRU only with their defaults, RNN with one of
 * oneDNN's for every direction. */
static bool acts_fit(const gl_node *n, rnn_attrs *a, char *why, size_t len)
{
    const gl_attr *names = gl_node_attr_typed(n, "activations", GL_ATTR_STRINGS);
    size_t per = (size_t)a->cell->n_acts;
    a->act = dnnl_eltwise_tanh;
    if (!names || names->n == 0)
        return true;
    for (size_t i = 0; i < per * (size_t)a->dirs; i++) {
        const gl_bytes *s = &names->strings[i % names->n];
        const char *want = a->cell->defaults[i % per];
        if (a->cell->kind == RNN_VANILLA) {
            dnnl_alg_kind_t alg = vanilla_act(s);
            if (!alg || (i > 0 && alg != a->act)) {
                snprintf(why, len, "activation '%.*s' (oneDNN: one of Tanh, Relu, Sigmoid for "
                         "every direction)", (int)s->len, (const char *)s->data);
                return false;
            }
            a->act = alg;
        } else if (strlen(want) != s->len ||
                   strncasecmp(want, (const char *)s->data, s->len) != 0) {
            snprintf(why, len, "activation '%.*s' where oneDNN's cell has %s", (int)s->len,
                     (const char *)s->data, want);
            return false;
        }
    }
    return true;
}

/* The node's attributes in oneDNN's terms; false with why when oneDNN has no such cell. */
static bool attrs_fit(const gl_node *n, rnn_attrs *a, char *why, size_t len)
{
    memset(a, 0, sizeof(*a));
    a->cell = cell_of(n);
    const char *dir = gl_node_attr_string(n, "direction", "forward");
    a->dirs = 1;
    if (strcmp(dir, "bidirectional") == 0) {
        a->dirs = 2;
        a->direction = dnnl_bidirectional_concat;
    } else if (strcmp(dir, "reverse") == 0) {
        a->direction = dnnl_unidirectional_right2left;
    } else if (strcmp(dir, "forward") == 0 || strcmp(dir, "foward") == 0) { /* GRU-1's */
        a->direction = dnnl_unidirectional_left2right;
    } else {
        snprintf(why, len, "direction '%s'", dir);
        return false;
    }
    a->layout = (int)gl_node_attr_int(n, "layout", 0);
    a->lbr = a->cell->kind == RNN_GRU && gl_node_attr_int(n, "linear_before_reset", 0) != 0;
    if (a->layout != 0 && a->layout != 1) {
        snprintf(why, len, "layout %d", a->layout);
        return false;
    }
    if (gl_node_attr_typed(n, "clip", GL_ATTR_FLOAT)) {
        snprintf(why, len, "clip: oneDNN's cells do not clip their gates");
        return false;
    }
    if (a->cell->kind == RNN_LSTM && gl_node_attr_int(n, "input_forget", 0) != 0) {
        snprintf(why, len, "input_forget: oneDNN's LSTM has its own forget gate");
        return false;
    }
    return acts_fit(n, a, why, len);
}

/* ---- sizes ------------------------------------------------------------------------------ */

typedef struct rnn_dims {
    int64_t T, N, I, H, D;
    int G;   /* oneDNN's gates (the bias of lbr_gru has one more) */
    int GB;  /* gates in oneDNN's bias */
} rnn_dims;

static bool has_dims(const gl_tensor *t, int rank, const int64_t *dims)
{
    return t->rank == rank && memcmp(t->dims, dims, (size_t)rank * sizeof(*dims)) == 0;
}

/* Input i is omitted, or float32 plain of exactly dims (rank). */
static bool optional_fits(const gl_kernel_ctx *k, size_t i, int rank, const int64_t *dims)
{
    const gl_tensor *t = i < k->n_inputs ? k->in[i] : NULL;
    return !t || (t->dtype == GL_DT_FLOAT && has_dims(t, rank, dims));
}

/* The sizes, when every input is float32 of the shape ONNX asks for (else the reference
 * kernel runs and names what is wrong). */
static const char *dims_fit(const gl_kernel_ctx *k, const rnn_attrs *a, rnn_dims *d)
{
    const gl_tensor *x = dn_f32_input(k, IN_X), *w = dn_f32_input(k, IN_W),
                    *r = dn_f32_input(k, IN_R);
    if (!x || !w || !r || x->rank != 3 || r->rank != 3)
        return "X, W and R are not float32 tensors of rank 3";
    d->T = x->dims[a->layout ? 1 : 0];
    d->N = x->dims[a->layout ? 0 : 1];
    d->I = x->dims[2];
    d->H = r->dims[2];
    d->D = a->dirs;
    d->G = a->cell->gates;
    d->GB = d->G + (a->lbr ? 1 : 0);
    int64_t gh = d->G * d->H, hid = gl_node_attr_int(k->node, "hidden_size", d->H);
    int64_t w_dims[] = {d->D, gh, d->I}, r_dims[] = {d->D, gh, d->H}, b_dims[] = {d->D, 2 * gh},
            p_dims[] = {d->D, 3 * d->H}, h_dims[] = {d->D, d->N, d->H};
    if (a->layout)
        h_dims[0] = d->N, h_dims[1] = d->D;
    if (x->count == 0 || d->H == 0 || hid != d->H)
        return "an empty X or R, or a hidden_size other than R's";
    if (!has_dims(w, 3, w_dims) || !has_dims(r, 3, r_dims) || !optional_fits(k, IN_B, 2, b_dims) ||
        !optional_fits(k, IN_H0, 3, h_dims))
        return "W, R, B or initial_h is not float32 of ONNX's shape";
    if (a->cell->kind == RNN_LSTM &&
        (!optional_fits(k, IN_C0, 3, h_dims) || !optional_fits(k, IN_P, 2, p_dims)))
        return "initial_c or P is not float32 of ONNX's shape";
    return NULL;
}

/* sequence_lens, when given, must be T for every row: oneDNN runs every row T steps. The
 * build reads its values: they must be a constant or part of the shape guard's key. When
 * some row is shorter, *shorter gets the values (owned): graphlab's kernel runs them. */
static const char *lens_fit(const gl_kernel_ctx *k, const rnn_dims *d, int64_t **shorter)
{
    const gl_tensor *t = IN_LENS < k->n_inputs ? k->in[IN_LENS] : NULL;
    if (!t)
        return NULL;
    if (!dn_value_fixed(k->node->inputs[IN_LENS]) && t->count > DN_KEY_VALS)
        return "sequence_lens given each run, of more rows than the shape guard keeps "
               "(oneDNN has no per-row lengths)";
    int64_t *lens;
    size_t n;
    if (!dn_input_ints(k, IN_LENS, &lens, &n))
        return "sequence_lens is not an integer tensor";
    bool all_t = (int64_t)n == d->N, in_range = all_t;
    for (size_t i = 0; i < n && all_t; i++)
        all_t = lens[i] == d->T;
    for (size_t i = 0; i < n && in_range; i++)
        in_range = lens[i] >= 0 && lens[i] <= d->T;
    if (all_t || !in_range) /* out of range: the reference kernel says what is wrong */
        free(lens);
    else
        *shorter = lens;
    return all_t ? NULL
                 : "sequence_lens not all the sequence length (oneDNN has no per-row lengths)";
}

/* ---- packing W, R, B, P into oneDNN's order ------------------------------------------- */

/* A weights argument the node fills: our plain ldigo/ldgo bytes (`plain`), reordered into
 * the primitive's layout (own buffer `own`) when that differs. */
typedef struct packed {
    size_t own;                /* index in dn_node.own */
    float *plain;              /* NULL: packed straight into the own buffer */
    dnnl_primitive_t reorder;
    dnnl_memory_t from, to;
} packed;

typedef struct rnn_extra {
    rnn_attrs a;
    rnn_dims d;
    dn_ctx *c;
    bool per_run;              /* some of W, R, B, P are not constants: pack every run */
    packed w, r, bias, peep;
    bool has_peep;
} rnn_extra;

static void packed_free(packed *p)
{
    if (p->reorder)
        dnnl_primitive_destroy(p->reorder);
    if (p->from)
        dnnl_memory_destroy(p->from);
    if (p->to)
        dnnl_memory_destroy(p->to);
    free(p->plain);
}

static void extra_free(void *x)
{
    rnn_extra *e = x;
    packed_free(&e->w);
    packed_free(&e->r);
    packed_free(&e->bias);
    packed_free(&e->peep);
    free(e);
}

/* W or R [D, G*H, C] (ONNX gates) into ldigo [D, C, G, H] (oneDNN gates). */
static void pack_matrix(float *dst, const float *src, const rnn_dims *d, int64_t C,
                        const int *onnx_gate)
{
    for (int64_t dir = 0; dir < d->D; dir++)
        for (int64_t c = 0; c < C; c++)
            for (int g = 0; g < d->G; g++) {
                const float *row = src + (dir * d->G + onnx_gate[g]) * d->H * C + c;
                float *out = dst + ((dir * C + c) * d->G + g) * d->H;
                for (int64_t h = 0; h < d->H; h++)
                    out[h] = row[h * C];
            }
}

/* B [D, 2*G*H] (Wb, Rb) into ldgo [D, GB, H]: Wb + Rb per gate; lbr_gru's candidate gate
 * takes Wb_h and its extra gate Rb_h. No B: zeros. */
static void pack_bias(float *dst, const gl_tensor *b, const rnn_attrs *a, const rnn_dims *d)
{
    int64_t H = d->H, GH = d->G * H;
    memset(dst, 0, (size_t)(d->D * d->GB * H) * sizeof(float));
    if (!b)
        return;
    const float *src = gl_tensor_data(b);
    for (int64_t dir = 0; dir < d->D; dir++) {
        const float *wb = src + dir * 2 * GH, *rb = wb + GH;
        float *out = dst + dir * d->GB * H;
        for (int g = 0; g < d->G; g++) {
            int64_t q = a->cell->onnx_gate[g] * H;
            bool apart = a->lbr && g == 2; /* Rb_h goes to the extra gate */
            for (int64_t h = 0; h < H; h++)
                out[g * H + h] = wb[q + h] + (apart ? 0 : rb[q + h]);
        }
        if (a->lbr)
            memcpy(out + 3 * H, rb + 2 * H, (size_t)H * sizeof(float));
    }
}

/* P [D, 3*H] (i, o, f) into ldgo [D, 3, H] (i, f, o). */
static void pack_peepholes(float *dst, const gl_tensor *p, const rnn_dims *d)
{
    const float *src = gl_tensor_data(p);
    for (int64_t dir = 0; dir < d->D; dir++)
        for (int g = 0; g < 3; g++)
            memcpy(dst + (dir * 3 + g) * d->H, src + (dir * 3 + peep_gates[g]) * d->H,
                   (size_t)d->H * sizeof(float));
}

/* The buffer to pack into: our plain one when a reorder follows, else the own buffer. */
static float *pack_target(const dn_node *s, const packed *p)
{
    return p->plain ? p->plain : s->own[p->own].buf;
}

static gl_status pack_finish(rnn_extra *e, const gl_kernel_ctx *k, packed *p)
{
    if (!p->reorder)
        return GL_OK;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, p->from}, {DNNL_ARG_TO, p->to}};
    dnnl_status_t r = dnnl_primitive_execute(p->reorder, e->c->stream, 2, args);
    if (r == dnnl_success)
        r = dnnl_stream_wait(e->c->stream);
    return r == dnnl_success ? GL_OK : dn_fail(k->where, "reorder of the packed weights", r);
}

/* Pack W, R, B (and P) of this run's inputs into the primitive's arguments. */
static gl_status pack_all(const gl_kernel_ctx *k, dn_node *s)
{
    rnn_extra *e = s->extra;
    const int *gates = e->a.cell->onnx_gate;
    pack_matrix(pack_target(s, &e->w), gl_tensor_data(k->in[IN_W]), &e->d, e->d.I, gates);
    pack_matrix(pack_target(s, &e->r), gl_tensor_data(k->in[IN_R]), &e->d, e->d.H, gates);
    pack_bias(pack_target(s, &e->bias), IN_B < k->n_inputs ? k->in[IN_B] : NULL, &e->a, &e->d);
    if (e->has_peep)
        pack_peepholes(pack_target(s, &e->peep), k->in[IN_P], &e->d);
    gl_status st = pack_finish(e, k, &e->w);
    if (st == GL_OK)
        st = pack_finish(e, k, &e->r);
    return st;
}

static gl_status rnn_prepare(const gl_kernel_ctx *k, dn_node *s)
{
    if (s->native)
        return dn_rnn_native_prepare(s);
    const rnn_extra *e = s->extra;
    return e && e->per_run ? pack_all(k, s) : GL_OK;
}

/* Bind a weights argument of the primitive's layout `want` (from pd) that we pack as the
 * plain descriptor `plain`: an own buffer, and a reorder into it when they differ. */
static dnnl_status_t bind_packed(dn_build *b, int arg, const dnnl_memory_desc_t *plain,
                                 const dnnl_memory_desc_t *want, packed *p)
{
    p->own = b->s->n_own;
    void *buf = dn_bind_own(b, arg, want);
    if (dnnl_memory_desc_equal(plain, want))
        return dnnl_success;
    p->plain = gl_xcalloc(1, dnnl_memory_desc_get_size(plain));
    dnnl_primitive_desc_t pd = NULL;
    dnnl_engine_t eng = b->c->engine;
    dnnl_status_t r = dnnl_reorder_primitive_desc_create(&pd, plain, eng, want, eng, NULL);
    if (r == dnnl_success)
        r = dnnl_primitive_create(&p->reorder, pd);
    dnnl_primitive_desc_destroy(pd);
    if (r == dnnl_success)
        r = dnnl_memory_create(&p->from, plain, eng, p->plain);
    if (r == dnnl_success)
        r = dnnl_memory_create(&p->to, want, eng, buf);
    return r;
}

/* ---- descriptors ------------------------------------------------------------------------- */

/* The primitive's descriptors: *_layer [T, N, C] tnc or ntc, *_iter ldnc [1, D, N, H]
 * (zero when the node has no such tensor), weights "any", bias and peepholes ldgo. */
typedef struct rnn_mds {
    dnnl_memory_desc_t src_layer, src_iter, src_iter_c, w_layer, w_iter, w_peep, bias,
        dst_layer, dst_iter, dst_iter_c;
    dnnl_memory_desc_t w_layer_plain, w_iter_plain; /* ldigo: how we pack them */
} rnn_mds;

static bool present(const gl_kernel_ctx *k, size_t i)
{
    return i < k->n_inputs && k->in[i];
}

static bool wanted(const gl_kernel_ctx *k, size_t o)
{
    return o < k->node->n_outputs && k->node->outputs[o];
}

/* Does the node read or write the states (initial_h/c; Y_h/Y_c)? LSTM's h and c go
 * together: one given, the other is bound too (zeros in, scratch out). */
static bool reads_states(const gl_kernel_ctx *k, const rnn_attrs *a)
{
    return present(k, IN_H0) || (a->cell->kind == RNN_LSTM && present(k, IN_C0));
}

static bool writes_states(const gl_kernel_ctx *k, const rnn_attrs *a)
{
    return wanted(k, OUT_YH) || (a->cell->kind == RNN_LSTM && wanted(k, OUT_YC));
}

static dnnl_status_t make_mds(const gl_kernel_ctx *k, const rnn_attrs *a, const rnn_dims *d,
                              rnn_mds *m)
{
    memset(m, 0, sizeof(*m));
    dnnl_format_tag_t seq = a->layout ? dnnl_ntc : dnnl_tnc;
    int64_t src[] = {d->T, d->N, d->I}, dst[] = {d->T, d->N, d->D * d->H};
    int64_t iter[] = {1, d->D, d->N, d->H}, wl[] = {1, d->D, d->I, d->G, d->H},
            wi[] = {1, d->D, d->H, d->G, d->H}, bias[] = {1, d->D, d->GB, d->H},
            peep[] = {1, d->D, 3, d->H};
    bool lstm = a->cell->kind == RNN_LSTM;
    dnnl_status_t r = dn_md_tag(&m->src_layer, 3, src, seq);
    if (r == dnnl_success)
        r = dn_md_tag(&m->dst_layer, 3, dst, seq);
    if (r == dnnl_success && reads_states(k, a))
        r = dn_md_tag(&m->src_iter, 4, iter, dnnl_ldnc);
    if (r == dnnl_success && reads_states(k, a) && lstm)
        r = dn_md_tag(&m->src_iter_c, 4, iter, dnnl_ldnc);
    if (r == dnnl_success && writes_states(k, a))
        r = dn_md_tag(&m->dst_iter, 4, iter, dnnl_ldnc);
    if (r == dnnl_success && writes_states(k, a) && lstm)
        r = dn_md_tag(&m->dst_iter_c, 4, iter, dnnl_ldnc);
    if (r == dnnl_success)
        r = dn_md_tag(&m->w_layer, 5, wl, dnnl_format_tag_any);
    if (r == dnnl_success)
        r = dn_md_tag(&m->w_iter, 5, wi, dnnl_format_tag_any);
    if (r == dnnl_success)
        r = dn_md_tag(&m->w_layer_plain, 5, wl, dnnl_ldigo);
    if (r == dnnl_success)
        r = dn_md_tag(&m->w_iter_plain, 5, wi, dnnl_ldigo);
    if (r == dnnl_success)
        r = dn_md_tag(&m->bias, 4, bias, dnnl_ldgo);
    if (r == dnnl_success && lstm && present(k, IN_P))
        r = dn_md_tag(&m->w_peep, 4, peep, dnnl_ldgo);
    return r;
}

static dnnl_status_t make_pd(dn_build *b, const rnn_attrs *a, const rnn_mds *m,
                             dnnl_primitive_desc_t *pd)
{
    dnnl_rnn_desc_t d;
    dnnl_prop_kind_t inf = dnnl_forward_inference;
    dnnl_status_t r;
    switch (a->cell->kind) {
    case RNN_LSTM:
        r = dnnl_lstm_forward_desc_init_v2(&d, inf, a->direction, &m->src_layer, &m->src_iter,
                                           &m->src_iter_c, &m->w_layer, &m->w_iter,
                                           &m->w_peep, &m->bias, &m->dst_layer, &m->dst_iter,
                                           &m->dst_iter_c, dnnl_rnn_flags_undef);
        break;
    case RNN_GRU:
        r = (a->lbr ? dnnl_lbr_gru_forward_desc_init : dnnl_gru_forward_desc_init)(
            &d, inf, a->direction, &m->src_layer, &m->src_iter, &m->w_layer, &m->w_iter,
            &m->bias, &m->dst_layer, &m->dst_iter, dnnl_rnn_flags_undef);
        break;
    default:
        r = dnnl_vanilla_rnn_forward_desc_init(&d, inf, a->act, a->direction, &m->src_layer,
                                               &m->src_iter, &m->w_layer, &m->w_iter, &m->bias,
                                               &m->dst_layer, &m->dst_iter,
                                               dnnl_rnn_flags_undef, 0.0f, 0.0f);
        break;
    }
    return r == dnnl_success ? dnnl_primitive_desc_create(pd, &d, NULL, b->c->engine, NULL) : r;
}

/* ---- binding ------------------------------------------------------------------------------ */

/* The ONNX description of a state tensor's bytes [1, D, N, H] (ldnc): [D, N, H], or for
 * layout 1 [N, D, H] with strides that walk them in ldnc order. */
static dnnl_status_t state_md(const rnn_attrs *a, const rnn_dims *d, dnnl_memory_desc_t *md)
{
    int64_t dims[] = {d->D, d->N, d->H}, strides[] = {d->N * d->H, d->H, 1};
    if (a->layout) {
        int64_t dims1[] = {d->N, d->D, d->H}, strides1[] = {d->H, d->N * d->H, 1};
        return dn_md_plain(md, 3, dims1, strides1);
    }
    return dn_md_plain(md, 3, dims, strides);
}

/* The ONNX description of dst_layer's bytes ([T, N, D, H] or [N, T, D, H] in memory) as
 * Y [T, D, N, H] (layout 1: [N, T, D, H], plain). */
static dnnl_status_t y_md(const rnn_attrs *a, const rnn_dims *d, dnnl_memory_desc_t *md)
{
    if (a->layout) {
        int64_t dims[] = {d->N, d->T, d->D, d->H};
        return dn_md_plain(md, 4, dims, NULL);
    }
    int64_t dims[] = {d->T, d->D, d->N, d->H};
    int64_t strides[] = {d->N * d->D * d->H, d->H, d->D * d->H, 1};
    return dn_md_plain(md, 4, dims, strides);
}

/* Output o as argument arg written as prim (the primitive's descriptor), the tensor
 * described by onnx over the same bytes; a scratch buffer when the node has no such
 * output. */
static void bind_out(dn_build *b, int arg, size_t o, const dnnl_memory_desc_t *prim,
                     const dnnl_memory_desc_t *onnx)
{
    if (!wanted(b->k, o)) {
        dn_bind_own(b, arg, prim);
        return;
    }
    dn_bind_output(b, arg, o, prim, onnx->ndims, onnx->dims);
    b->s->out[b->s->n_out - 1].layout = dn_view_layout(b->c, onnx);
}

/* A state input as src_iter(_c): its bytes described as [1, D, N, H] (layout 1 walks
 * [N, D, H]: one reorder to ldnc); an omitted one of a pair is zeros. False when it is in
 * a layout of ours (not plain). */
static bool bind_state(dn_build *b, int arg, size_t i, const rnn_mds *m, const rnn_attrs *a,
                       const rnn_dims *d)
{
    if (!present(b->k, i)) {
        dn_bind_own(b, arg, &m->src_iter);
        return true;
    }
    if (b->k->in[i]->layout)
        return false;
    int64_t dims[] = {1, d->D, d->N, d->H};
    int64_t strides[] = {d->D * d->N * d->H, d->N * d->H, d->H, 1};
    if (a->layout)
        strides[1] = d->H, strides[2] = d->D * d->H;
    dnnl_memory_desc_t given;
    if (dn_md_plain(&given, 4, dims, strides) != dnnl_success)
        return false;
    dn_bind_input_from(b, arg, i, &given, &m->src_iter);
    return true;
}

static gl_status bind_all(dn_build *b, const rnn_attrs *a, const rnn_dims *d,
                          const rnn_mds *m)
{
    bool lstm = a->cell->kind == RNN_LSTM;
    dn_bind_input_view(b, DNNL_ARG_SRC_LAYER, IN_X, &m->src_layer);
    if (reads_states(b->k, a) &&
        (!bind_state(b, DNNL_ARG_SRC_ITER, IN_H0, m, a, d) ||
         (lstm && !bind_state(b, DNNL_ARG_SRC_ITER_C, IN_C0, m, a, d))))
        return dn_refuse(b, "initial_h or initial_c arrives in a layout of its own");
    dnnl_memory_desc_t y, state;
    if (y_md(a, d, &y) != dnnl_success || state_md(a, d, &state) != dnnl_success)
        return dn_refuse(b, "shapes oneDNN does not describe");
    bind_out(b, DNNL_ARG_DST_LAYER, OUT_Y, &m->dst_layer, &y);
    if (writes_states(b->k, a)) {
        bind_out(b, DNNL_ARG_DST_ITER, OUT_YH, &m->dst_iter, &state);
        if (lstm)
            bind_out(b, DNNL_ARG_DST_ITER_C, OUT_YC, &m->dst_iter_c, &state);
    }
    return GL_OK;
}

/* ---- the build ------------------------------------------------------------------------------ */

/* Inputs the node packs itself (W, R, B, P), as against those it binds (X, the states). */
static bool is_weights(size_t i)
{
    return i == IN_W || i == IN_R || i == IN_B || i == IN_P;
}

/* The node on graphlab's AVX2 kernel (dn_rnn_avx2.c), its X, states and outputs bound:
 * constant weights, default activations (an RNN's Tanh). False with *why (NULL: no reason
 * worth a note, as on a CPU whose oneDNN kernels it was not measured against). */
static bool take_native(dn_build *b, const rnn_attrs *a, const rnn_dims *d,
                        const int64_t *lens, const char **why)
{
    const gl_kernel_ctx *k = b->k;
    *why = NULL;
    static const dn_cell cell_of[] = {[RNN_VANILLA] = DN_CELL_RNN, [RNN_GRU] = DN_CELL_GRU,
                                      [RNN_LSTM] = DN_CELL_LSTM};
    if (!dn_rnn_native_here(b->c, cell_of[a->cell->kind], d->N))
        return false;
    if (a->cell->kind == RNN_VANILLA && a->act != dnnl_eltwise_tanh) {
        *why = "an RNN activation other than Tanh";
        return false;
    }
    for (size_t i = IN_W; i < k->n_inputs; i++)
        if (is_weights(i) && k->in[i] && !dn_input_constant(k, i)) {
            *why = "W, R, B or P given each run (it packs constants once)";
            return false;
        }
    bool lstm = a->cell->kind == RNN_LSTM, states = reads_states(k, a);
    dn_rnn_spec sp = {
        .cell = cell_of[a->cell->kind], .gates = a->cell->gates, .lbr = a->lbr,
        .reverse = a->direction == dnnl_unidirectional_right2left, .dirs = (int)d->D,
        .layout = a->layout, .T = d->T, .N = d->N, .I = d->I, .H = d->H,
        .w = gl_tensor_data(k->in[IN_W]), .r = gl_tensor_data(k->in[IN_R]),
        .b = present(k, IN_B) ? gl_tensor_data(k->in[IN_B]) : NULL,
        .p = lstm && present(k, IN_P) ? gl_tensor_data(k->in[IN_P]) : NULL, .lens = lens,
        /* bound after X in this order when present (bind_all) */
        .h0 = states && present(k, IN_H0) ? 1 : -1,
        .c0 = states && lstm && present(k, IN_C0) ? (present(k, IN_H0) ? 2 : 1) : -1};
    return dn_rnn_take(b, &sp, why);
}

static gl_status rnn_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    char why[160];
    rnn_attrs a;
    if (!attrs_fit(k->node, &a, why, sizeof(why)))
        return dn_refuse(b, "%s", why);
    rnn_dims d;
    int64_t *shorter = NULL; /* sequence_lens with rows shorter than T */
    const char *no = dims_fit(k, &a, &d), *lens_no = NULL;
    if (!no)
        lens_no = lens_fit(k, &d, &shorter);
    if (lens_no && !shorter)
        no = lens_no;
    for (size_t i = IN_W; !no && i < k->n_inputs; i++)
        if (is_weights(i) && k->in[i] && (k->in[i]->layout || !k->in[i]->buf))
            no = "W, R, B or P arrives in a layout of its own";
    if (no) {
        free(shorter);
        return dn_refuse(b, "%s", no);
    }
    rnn_mds m;
    dnnl_status_t r = make_mds(k, &a, &d, &m);
    if (r == dnnl_success)
        r = make_pd(b, &a, &m, pd);
    if (r != dnnl_success) {
        free(shorter);
        return dn_refuse(b, "oneDNN has no %s cell for this (%s)", k->node->op_type,
                         dnnl_status2str(r));
    }
    /* oneDNN 2.6 has brgemm kernels for LSTM and vanilla cells only; its "ref" GRU is
     * packed sgemm per step, still 60-100x our reference kernel (the tagger's GRU(128):
     * 0.09 ms against 6-10 ms) */
    dn_note_ref(b, *pd, "packed sgemm per step (no brgemm GRU in oneDNN 2.6)");
    gl_status st = bind_all(b, &a, &d, &m);
    const char *own_no = NULL;
    bool own = st == GL_OK && !b->s->fallback && take_native(b, &a, &d, shorter, &own_no);
    free(shorter);
    if (st != GL_OK || b->s->fallback || own)
        return st;
    if (lens_no)
        return dn_refuse(b, "%s%s%s", lens_no, own_no ? "; not graphlab's kernel: " : "",
                         own_no ? own_no : "");
    rnn_extra *e = gl_xcalloc(1, sizeof(*e));
    b->s->extra = e;
    b->s->extra_free = extra_free;
    e->a = a;
    e->d = d;
    e->c = b->c;
    e->has_peep = a.cell->kind == RNN_LSTM && present(k, IN_P);
    for (size_t i = IN_W; i < k->n_inputs; i++)
        if (is_weights(i) && k->in[i] && !dn_input_constant(k, i))
            e->per_run = true;
    r = bind_packed(b, DNNL_ARG_WEIGHTS_LAYER, &m.w_layer_plain,
                    dn_pd_md(*pd, dnnl_query_weights_md, 0), &e->w);
    if (r == dnnl_success)
        r = bind_packed(b, DNNL_ARG_WEIGHTS_ITER, &m.w_iter_plain,
                        dn_pd_md(*pd, dnnl_query_weights_md, 1), &e->r);
    if (r == dnnl_success)
        r = bind_packed(b, DNNL_ARG_BIAS, &m.bias, &m.bias, &e->bias);
    if (r == dnnl_success && e->has_peep)
        r = bind_packed(b, DNNL_ARG_WEIGHTS_PEEPHOLE, &m.w_peep, &m.w_peep, &e->peep);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN cannot reorder the packed weights (%s)",
                         dnnl_status2str(r));
    if (own_no)
        dn_set_note(b->c, b->s, "%s%snot graphlab's kernel: %s", b->s->note,
                    *b->s->note ? "; " : "", own_no);
    /* constants: packed once, here */
    return e->per_run ? GL_OK : pack_all(k, b->s);
}

static bool rnn_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    rnn_attrs a;
    if (!attrs_fit(n, &a, why, len))
        return false;
    for (size_t i = 0; i < 3; i++)
        if (!dn_input_fits(n, i, 3, 3)) {
            snprintf(why, len, "input %zu is not float32 of rank 3", i);
            return false;
        }
    return true;
}

static const dn_op rnn_ops[] = {
    {"", "GRU", 1, rnn_claim, rnn_build, rnn_prepare},
    {"", "LSTM", 1, rnn_claim, rnn_build, rnn_prepare},
    {"", "RNN", 1, rnn_claim, rnn_build, rnn_prepare},
};
const dn_op_table dn_rnn_ops = {rnn_ops, GL_ARRAY_LEN(rnn_ops)};

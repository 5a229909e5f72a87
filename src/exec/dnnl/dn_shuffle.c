/* dn_shuffle.c — a fused group [Concat along the channels, Reshape [N,g,C/g,H,W],
 * Transpose [0,2,1,3,4], Reshape [N,C,H,W], channel Slices] (fusion rule
 * channel-shuffle: ShuffleNet's channel shuffle) as oneDNN reorders that move every
 * byte once, from a Concat input straight to its place in an output.
 *
 * Channel y of the Concat (row a = y / K, column b = y % K, K = C/g) is channel b*g + a
 * of the shuffled tensor. So a Concat input's channels within one row go to every g-th
 * channel from a: in each output (a Slice of the shuffled channels, or the whole tensor)
 * a run of them is one reorder whose source is a channel range of the input (a
 * sub-memory, views read as they are) and whose destination is the output's layout with
 * its channel stride times g and an offset. ShuffleNet's g = 2, two equal inputs and two
 * halves make four reorders; the Concat's copy, the strided reorder of the unfused
 * shuffle and the dense copy a Slice view costs its convolution are gone.
 *
 * ShuffleNet's reorders are small (9K to 38K floats) and oneDNN's run of one costs about
 * as much as its copy: with g = 2 and the channels innermost on both sides (nhwc), the
 * two moves whose channels alternate in one output are one interleaving loop instead
 * (the unit's whole work on one thread, below SH_ONE_THREAD_ELEMS); larger units keep
 * oneDNN's reorders and their threads.
 *
 * Outputs are written in the plan's activation layout when it is plain or nhwc (a
 * strided channel is no blocked layout: under nChw16c they are nhwc, and their readers
 * convert). A blocked input is first reordered to nhwc on a scratch buffer (a channel
 * range of nChw16c that does not start on a block is no sub-memory).
 *
 * Everything is decided at the build, from the inputs' dims and the Reshape shapes and
 * Slice bounds (small integer inputs, in the shape guard's key by value); a build whose
 * shapes are no channel shuffle runs the members on the reference kernels, as any group.
 */
#include "exec/dnnl/dn_opkit.h"
#include "ir/calls.h"
#include "ir/limits.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define NONE SIZE_MAX
#define SH_MAX_PARTS DN_CAT_MAX_PARTS
#define SH_MAX_OUTS DN_MAX_OUTPUTS
#define SH_MAX_MOVES 32
/* Slice(data, starts, ends, axes, steps): the call inputs of inputs 1..4 */
#define SH_SLICE_ARGS 4

typedef struct sh_reorder {
    dnnl_primitive_t prim;
    dnnl_memory_t from, to;
} sh_reorder;

typedef struct sh_move {
    size_t part, output;
    int64_t src_c, dst_c, n; /* first source channel, first output channel, count */
    dnnl_memory_desc_t from, to;
    sh_reorder ro;            /* unless interleaved */
    size_t pair;              /* the move whose channels this one's alternate with (NONE) */
    bool second;              /* written by its pair's interleave */
} sh_move;

typedef struct sh_stage {  /* a blocked input, reordered to nhwc first */
    dnnl_memory_desc_t md;
    sh_reorder ro;
    void *buf;
} sh_stage;

typedef struct sh_unit {
    dn_node node;             /* first: the backend reads a unit's state as a dn_node */
    const gl_node *concat, *reshape, *transpose, *merge;
    size_t part_in[SH_MAX_PARTS], n_parts;
    size_t shape_in[2];       /* the call inputs of the Reshapes' shapes */
    size_t slice_in[SH_MAX_OUTS][SH_SLICE_ARGS];
    size_t n_outs;
    bool whole;               /* no Slices: output 0 is the shuffled tensor */
    /* per build */
    bool refused;
    int threads;
    sh_move moves[SH_MAX_MOVES];
    size_t n_moves;
    sh_stage stage[SH_MAX_PARTS];
} sh_unit;

static const dn_op shuffle_op = {"", "(channel-shuffle group)", 1, NULL, NULL, NULL};

bool dn_shuffle_state(const void *state)
{
    return state && ((const dn_node *)state)->op == &shuffle_op;
}

static void reorder_free(sh_reorder *ro)
{
    if (ro->prim)
        dnnl_primitive_destroy(ro->prim);
    if (ro->from)
        dnnl_memory_destroy(ro->from);
    if (ro->to)
        dnnl_memory_destroy(ro->to);
}

static void build_clear(sh_unit *u)
{
    for (size_t i = 0; i < u->n_moves; i++)
        reorder_free(&u->moves[i].ro);
    for (size_t j = 0; j < SH_MAX_PARTS; j++) {
        reorder_free(&u->stage[j].ro);
        free(u->stage[j].buf);
    }
    memset(u->moves, 0, sizeof(u->moves));
    memset(u->stage, 0, sizeof(u->stage));
    u->n_moves = 0;
    u->refused = false;
    u->threads = 0;
    dn_node_clear(&u->node);
}

void dn_shuffle_release(void *state)
{
    sh_unit *u = state;
    if (!u)
        return;
    build_clear(u);
    free(u);
}

/* ---- the body --------------------------------------------------------------------------- */

bool dn_shuffle_is(const gl_function *fn)
{
    const gl_graph *b = fn ? fn->body : NULL;
    return b && b->n_nodes >= 4 && gl_node_is(b->nodes[0], "Concat") &&
           gl_node_is(b->nodes[1], "Reshape") && gl_node_is(b->nodes[2], "Transpose") &&
           gl_node_is(b->nodes[3], "Reshape");
}

/* The call's input in the place of body value v (NONE: not a body input). */
static size_t call_input(const gl_function *fn, const gl_node *call, const gl_value *v)
{
    for (size_t i = 0; v && i < fn->body->n_inputs && i < call->n_inputs; i++)
        if (fn->body->inputs[i] == v)
            return call->inputs[i] ? i : NONE;
    return NONE;
}

/* n reads `v`, read by `uses` nodes and no body output, as its input 0. */
static bool reads(const gl_node *n, const gl_value *v, size_t uses)
{
    return n && n->n_inputs >= 1 && n->inputs[0] == v && v && v->n_uses == uses &&
           !v->n_output_refs && n->n_outputs >= 1 && n->outputs[0];
}

static sh_unit *unit_new(const gl_node *call, const gl_function *fn, char *why, size_t len)
{
    const gl_graph *b = fn->body;
    const gl_node *cat = b->nodes[0], *r1 = b->nodes[1], *t = b->nodes[2], *r2 = b->nodes[3];
    int64_t axis = gl_node_attr_int(cat, "axis", 0);
    const gl_attr *perm = gl_node_attr_typed(t, "perm", GL_ATTR_INTS);
    static const int64_t swap[5] = {0, 2, 1, 3, 4};
    bool ok = (axis == 1 || axis == -3) && cat->n_inputs >= 1 &&
              cat->n_inputs <= SH_MAX_PARTS && cat->n_outputs >= 1 && r1->n_inputs == 2 &&
              r2->n_inputs == 2 && reads(r1, cat->outputs[0], 1) &&
              reads(t, r1->outputs[0], 1) && reads(r2, t->outputs[0], 1) && perm &&
              perm->n == 5 && !memcmp(perm->ints, swap, sizeof(swap)) &&
              gl_node_attr_int(r1, "allowzero", 0) == 0 &&
              gl_node_attr_int(r2, "allowzero", 0) == 0;
    sh_unit *u = ok ? gl_xcalloc(1, sizeof(*u)) : NULL;
    if (u) {
        dn_node_init(&u->node, &shuffle_op);
        u->concat = cat, u->reshape = r1, u->transpose = t, u->merge = r2;
        u->n_parts = cat->n_inputs;
        for (size_t j = 0; j < u->n_parts && ok; j++)
            ok = (u->part_in[j] = call_input(fn, call, cat->inputs[j])) != NONE;
        ok = ok && (u->shape_in[0] = call_input(fn, call, r1->inputs[1])) != NONE &&
             (u->shape_in[1] = call_input(fn, call, r2->inputs[1])) != NONE;
        u->whole = b->n_nodes == 4;
        u->n_outs = u->whole ? 1 : b->n_nodes - 4;
        const gl_value *y = r2->outputs[0];
        ok = ok && u->n_outs <= SH_MAX_OUTS && b->n_outputs == u->n_outs &&
             call->n_outputs == u->n_outs;
        if (ok && u->whole)
            ok = b->outputs[0] == y;
        for (size_t o = 0; ok && !u->whole && o < u->n_outs; o++) {
            const gl_node *s = b->nodes[4 + o];
            ok = gl_node_is(s, "Slice") && s->n_inputs >= 3 && s->n_inputs <= 5 &&
                 s->inputs[0] == y && y->n_uses == u->n_outs && !y->n_output_refs &&
                 b->outputs[o] == s->outputs[0];
            for (size_t a = 0; ok && a < SH_SLICE_ARGS; a++) {
                const gl_value *v = a + 1 < s->n_inputs ? s->inputs[a + 1] : NULL;
                u->slice_in[o][a] = v ? call_input(fn, call, v) : NONE;
                ok = !v || u->slice_in[o][a] != NONE;
            }
        }
    }
    if (!ok) {
        snprintf(why, len, "the body is no channel shuffle: Concat of the channels (at most "
                 "%d inputs), Reshape, Transpose [0,2,1,3,4], Reshape, then at most %d "
                 "Slices of its output, bounds from the call's inputs", SH_MAX_PARTS,
                 SH_MAX_OUTS);
        free(u);
        return NULL;
    }
    return u;
}

/* ---- building ----------------------------------------------------------------------------- */

/* The integer values of the call's input i (NULL input: none, *n 0). */
static bool ints_of(const gl_kernel_ctx *k, size_t i, int64_t *vals, size_t cap, size_t *n)
{
    *n = 0;
    const gl_tensor *t = i < k->n_inputs ? k->in[i] : NULL;
    if (i == NONE || !t)
        return true;
    if (!gl_dtype_is_int(t->dtype) || t->rank > 1 || t->count > (int64_t)cap || t->layout)
        return false;
    for (int64_t e = 0; e < t->count; e++)
        vals[e] = gl_elem_i64(t, e);
    *n = (size_t)t->count;
    return true;
}

/* ONNX Reshape (allowzero 0) of dims `in` by the call's input i into out[]: its rank, or
 * -1 when it does not resolve. */
static int reshaped(const gl_kernel_ctx *k, size_t i, const int64_t *in, int in_rank,
                    int64_t *out)
{
    int64_t s[8];
    size_t n;
    if (!ints_of(k, i, s, 8, &n) || n < 1 || n > 5)
        return -1;
    int64_t total = 1, known = 1;
    int infer = -1;
    for (int d = 0; d < in_rank; d++)
        total *= in[d];
    for (size_t d = 0; d < n; d++) {
        out[d] = s[d] == 0 && (int)d < in_rank ? in[d] : s[d];
        if (out[d] == -1 && infer < 0)
            infer = (int)d;
        else if (out[d] <= 0)
            return -1;
        else
            known *= out[d];
    }
    if (infer >= 0) {
        if (!known || total % known)
            return -1;
        out[infer] = total / known;
    } else if (known != total) {
        return -1;
    }
    return (int)n;
}

/* Slice o's channel range [*lo, *hi) of the C shuffled channels. */
static bool slice_range(const gl_kernel_ctx *k, const sh_unit *u, size_t o, int64_t c,
                        int64_t *lo, int64_t *hi)
{
    int64_t v[SH_SLICE_ARGS] = {0, 0, 0, 1}; /* no axes: axis 0 for one start */
    for (size_t a = 0; a < SH_SLICE_ARGS; a++) {
        int64_t x[2];
        size_t n;
        if (!ints_of(k, u->slice_in[o][a], x, 2, &n) || n > 1 || (n == 0 && a < 3))
            return false;
        if (n)
            v[a] = x[0];
    }
    if ((v[2] != 1 && v[2] != -3) || v[3] != 1)
        return false;
    for (int e = 0; e < 2; e++) {
        int64_t x = v[e] < 0 ? v[e] + c : v[e];
        v[e] = x < 0 ? 0 : x > c ? c : x;
    }
    *lo = v[0];
    *hi = v[1];
    return *hi > *lo;
}

static gl_status refuse(dn_ctx *c, sh_unit *u, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static gl_status refuse(dn_ctx *c, sh_unit *u, const char *fmt, ...)
{
    char why[DN_NOTE_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    dn_note_runs_members(c, &u->node, why);
    u->refused = true;
    return GL_OK;
}

/* The channel range [c0, c0+n) of a rank-4 descriptor, other dims whole. */
static dnnl_status_t channels(const dnnl_memory_desc_t *md, int64_t c0, int64_t n,
                              dnnl_memory_desc_t *sub)
{
    dnnl_dims_t dims = {md->dims[0], n, md->dims[2], md->dims[3]};
    dnnl_dims_t offs = {0, c0, 0, 0};
    return dnnl_memory_desc_init_submemory(sub, md, dims, offs);
}

/* Output channels from `first`, every g-th, n of them, of dense descriptor md: its
 * sub-memory, the channel stride scaled after (oneDNN's constructors refuse strides
 * whose extent passes the next dim's, as g*n does for an odd count of nhwc channels;
 * every element still has its own place). */
static dnnl_status_t strided(const dnnl_memory_desc_t *md, int64_t first, int64_t n,
                             int64_t g, dnnl_memory_desc_t *out)
{
    dnnl_dims_t dims = {md->dims[0], n, md->dims[2], md->dims[3]};
    dnnl_dims_t offs = {0, first, 0, 0};
    dnnl_status_t r = dnnl_memory_desc_init_submemory(out, md, dims, offs);
    out->format_desc.blocking.strides[1] *= g;
    return r;
}

static dnnl_status_t make_reorder(dn_ctx *c, const dnnl_memory_desc_t *from,
                                  const dnnl_memory_desc_t *to, sh_reorder *ro, char *impl,
                                  size_t len)
{
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t r = dnnl_reorder_primitive_desc_create(&pd, from, c->engine, to, c->engine,
                                                         NULL);
    const char *name = NULL;
    if (r == dnnl_success && impl &&
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) == dnnl_success)
        snprintf(impl, len, "%s", name);
    if (r == dnnl_success)
        r = dnnl_primitive_create(&ro->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (r == dnnl_success)
        r = dnnl_memory_create(&ro->from, from, c->engine, DNNL_MEMORY_NONE);
    if (r == dnnl_success)
        r = dnnl_memory_create(&ro->to, to, c->engine, DNNL_MEMORY_NONE);
    return r;
}

/* Queue the reorder from `from` to `to` on the stream (the caller waits). */
static dnnl_status_t reorder_run(dn_ctx *c, sh_reorder *ro, const void *from, void *to)
{
    dnnl_status_t r = dnnl_memory_set_data_handle(ro->from, (void *)from);
    if (r == dnnl_success)
        r = dnnl_memory_set_data_handle(ro->to, to);
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, ro->from}, {DNNL_ARG_TO, ro->to}};
    return r == dnnl_success ? dnnl_primitive_execute(ro->prim, c->stream, 2, args) : r;
}

/* Channels innermost: one float apart (step 1) in md. */
static bool channel_step(const dnnl_memory_desc_t *md, int64_t step)
{
    return md->format_kind == dnnl_blocked && md->format_desc.blocking.inner_nblks == 0 &&
           md->format_desc.blocking.strides[1] == step;
}

/* Pair the moves whose channels alternate in one output (g = 2): dst_c d and d + 1, the
 * same count, channels innermost in both sources and the output. How many pairs. */
static size_t pair_moves(sh_unit *u)
{
    size_t pairs = 0;
    for (size_t i = 0; i < u->n_moves; i++) {
        sh_move *x = &u->moves[i];
        for (size_t j = 0; j < u->n_moves && x->pair == NONE && !x->second; j++) {
            sh_move *y = &u->moves[j];
            if (j == i || y->pair != NONE || y->second || y->output != x->output ||
                y->n != x->n || y->dst_c != x->dst_c + 1 || !channel_step(&x->from, 1) ||
                !channel_step(&y->from, 1) || !channel_step(&x->to, 2))
                continue;
            x->pair = j;
            y->second = true;
            pairs++;
        }
    }
    return pairs;
}

/* A pair of moves x, y: out[2c] = a[c], out[2c+1] = b[c] at every pixel, one pass over
 * the output's bytes (x's destination: the even channels). */
static void interleave(const sh_move *x, const sh_move *y, const float *a, const float *b,
                       float *out)
{
    const int64_t *as = x->from.format_desc.blocking.strides;
    const int64_t *bs = y->from.format_desc.blocking.strides;
    const int64_t *os = x->to.format_desc.blocking.strides;
    const int64_t n = x->n, *d = x->from.dims;
    a += x->from.offset0;
    b += y->from.offset0;
    out += x->to.offset0;
    for (int64_t i = 0; i < d[0]; i++)
        for (int64_t h = 0; h < d[2]; h++)
            for (int64_t w = 0; w < d[3]; w++) {
                const float *pa = a + i * as[0] + h * as[2] + w * as[3];
                const float *pb = b + i * bs[0] + h * bs[2] + w * bs[3];
                float *po = out + i * os[0] + h * os[2] + w * os[3];
                int64_t k = 0;
#ifdef __SSE2__
                for (; k + 4 <= n; k += 4) {
                    __m128 p = _mm_loadu_ps(pa + k), q = _mm_loadu_ps(pb + k);
                    _mm_storeu_ps(po + 2 * k, _mm_unpacklo_ps(p, q));
                    _mm_storeu_ps(po + 2 * k + 4, _mm_unpackhi_ps(p, q));
                }
#endif
                for (; k < n; k++) {
                    po[2 * k] = pa[k];
                    po[2 * k + 1] = pb[k];
                }
            }
}

static bool has_blocks(const dnnl_memory_desc_t *md)
{
    return md->format_kind != dnnl_blocked || md->format_desc.blocking.inner_nblks != 0;
}

/* Small work runs on one thread, as dn_node.c's primitives (its DN_ONE_THREAD_NS line at
 * ~10 G elements/s of a memory-bound op). */
#define SH_ONE_THREAD_ELEMS 160000

static gl_status build(dn_ctx *c, const gl_kernel_ctx *k, sh_unit *u)
{
    build_clear(u);
    if (!dn_key_set(&u->node, k))
        return refuse(c, u, "more than %d dims", DNNL_MAX_NDIMS);
    /* The Concat's inputs: rank-4 float32 of one [N,.,H,W]. */
    dnnl_memory_desc_t src[SH_MAX_PARTS];
    int64_t start[SH_MAX_PARTS + 1] = {0}, x[4] = {0};
    for (size_t j = 0; j < u->n_parts; j++) {
        const gl_tensor *t = k->in[u->part_in[j]];
        if (!t || t->dtype != GL_DT_FLOAT || t->rank != 4 ||
            (j && (t->dims[0] != x[0] || t->dims[2] != x[2] || t->dims[3] != x[3])))
            return refuse(c, u, "Concat input %zu is not float32 [N,C,H,W] alike the others", j);
        memcpy(x, t->dims, sizeof(x));
        start[j + 1] = start[j] + t->dims[1];
        if (dn_md_of(t, &src[j]) != dnnl_success)
            return refuse(c, u, "Concat input %zu: no descriptor", j);
    }
    x[1] = start[u->n_parts];
    int64_t y[8], z[8];
    if (reshaped(k, u->shape_in[0], x, 4, y) != 5 || y[0] != x[0] || y[3] != x[2] ||
        y[4] != x[3] || y[1] < 1 || reshaped(k, u->shape_in[1], y, 5, z) != 4 ||
        memcmp(z, x, sizeof(x)) != 0)
        return refuse(c, u, "the Reshapes are no [N,g,C/g,H,W] and back of the Concat's "
                      "[%lld,%lld,%lld,%lld]", (long long)x[0], (long long)x[1],
                      (long long)x[2], (long long)x[3]);
    int64_t g = y[1], kk = y[2], C = x[1];
    int64_t lo[SH_MAX_OUTS], hi[SH_MAX_OUTS];
    for (size_t o = 0; o < u->n_outs; o++)
        if (u->whole)
            lo[o] = 0, hi[o] = C;
        else if (!slice_range(k, u, o, C, &lo[o], &hi[o]))
            return refuse(c, u, "Slice %zu: no non-empty range of the channels with step 1", o);
    /* Outputs in the activation layout when it has strides to scale. */
    dnnl_format_tag_t tag = dn_act_tag(c, 4);
    dnnl_memory_desc_t probe;
    if (tag == dnnl_format_tag_undef)
        tag = dnnl_nchw;
    else if (dn_md_tag(&probe, 4, x, tag) != dnnl_success || has_blocks(&probe))
        tag = dnnl_nhwc;
    int64_t elems = 0;
    for (size_t o = 0; o < u->n_outs; o++) {
        dn_out *out = &dn_node_outputs(&u->node)[o];
        out->output = o;
        out->rank = 4;
        memcpy(out->dims, x, sizeof(x));
        out->dims[1] = hi[o] - lo[o];
        elems += x[0] * out->dims[1] * x[2] * x[3];
        if (dn_md_tag(&out->md, 4, out->dims, tag) != dnnl_success ||
            dnnl_memory_create(&out->mem, &out->md, c->engine, DNNL_MEMORY_NONE) !=
                dnnl_success)
            return refuse(c, u, "output %zu: no descriptor", o);
        out->layout = dn_layout_of(c, &out->md);
        u->node.n_out++;
    }
    u->threads = c->max_threads > 1 && elems < SH_ONE_THREAD_ELEMS ? 1 : 0;
    if (u->threads)
        dn_ctx_threads(c, u->threads);
    char impl[64] = "";
    dnnl_status_t r = dnnl_success;
    /* Blocked inputs: to nhwc on a scratch buffer first. */
    for (size_t j = 0; j < u->n_parts && r == dnnl_success; j++) {
        sh_stage *sg = &u->stage[j];
        if (!has_blocks(&src[j]))
            continue;
        const gl_tensor *t = k->in[u->part_in[j]];
        r = dn_md_tag(&sg->md, 4, t->dims, dnnl_nhwc);
        if (r == dnnl_success)
            r = make_reorder(c, &src[j], &sg->md, &sg->ro, NULL, 0);
        if (r == dnnl_success) {
            size_t bytes = (dnnl_memory_desc_get_size(&sg->md) + 63) & ~(size_t)63;
            sg->buf = aligned_alloc(64, bytes ? bytes : 64);
            r = sg->buf ? dnnl_success : dnnl_out_of_memory;
        }
        src[j] = sg->md;
    }
    /* The moves: input j's channels in row a, within output o. */
    for (size_t j = 0; j < u->n_parts && r == dnnl_success; j++)
        for (int64_t a = 0; a < g && r == dnnl_success; a++) {
            int64_t y0 = start[j] > a * kk ? start[j] : a * kk;
            int64_t y1 = start[j + 1] < (a + 1) * kk ? start[j + 1] : (a + 1) * kk;
            for (size_t o = 0; o < u->n_outs && y0 < y1 && r == dnnl_success; o++) {
                /* columns b with b*g + a in [lo, hi) */
                int64_t b0 = lo[o] - a <= 0 ? 0 : (lo[o] - a + g - 1) / g;
                int64_t b1 = hi[o] - a <= 0 ? 0 : (hi[o] - a + g - 1) / g;
                b0 = b0 > y0 - a * kk ? b0 : y0 - a * kk;
                b1 = b1 < y1 - a * kk ? b1 : y1 - a * kk;
                if (b0 >= b1)
                    continue;
                if (u->n_moves == SH_MAX_MOVES) {
                    dn_ctx_threads(c, 0);
                    return refuse(c, u, "more than %d pieces to move", SH_MAX_MOVES);
                }
                sh_move *mv = &u->moves[u->n_moves++];
                mv->part = j;
                mv->output = o;
                mv->src_c = a * kk + b0 - start[j];
                mv->dst_c = b0 * g + a - lo[o];
                mv->n = b1 - b0;
                mv->pair = NONE;
                r = channels(&src[j], mv->src_c, mv->n, &mv->from);
                if (r == dnnl_success)
                    r = strided(&u->node.out[o].md, mv->dst_c, mv->n, g, &mv->to);
            }
        }
    size_t pairs = g == 2 && u->threads ? pair_moves(u) : 0;
    for (size_t i = 0; i < u->n_moves && r == dnnl_success; i++) {
        sh_move *mv = &u->moves[i];
        if (mv->pair == NONE && !mv->second)
            r = make_reorder(c, &mv->from, &mv->to, &mv->ro, impl[0] ? NULL : impl,
                             sizeof(impl));
    }
    dn_ctx_threads(c, 0);
    if (r != dnnl_success)
        return refuse(c, u, "oneDNN makes no reorder of these pieces: %s", dnnl_status2str(r));
    int64_t blocked = 0;
    for (size_t j = 0; j < u->n_parts; j++)
        blocked += u->stage[j].ro.prim != NULL;
    dn_set_impl(c, &u->node, "%s%s%s x%zu", impl, impl[0] && pairs ? "+" : "",
                pairs ? "interleave" : "", u->n_moves);
    dn_set_note(c, &u->node, "fused: channel shuffle of %zu inputs, g=%lld, %zu outputs: one "
                "reorder per piece (%zu pairs interleaved)%s%s", u->n_parts, (long long)g,
                u->n_outs, pairs, blocked ? ", blocked inputs to nhwc first" : "",
                u->threads ? " (1 thread)" : "");
    return GL_OK;
}

static gl_status finish_build(dn_ctx *c, const gl_kernel_ctx *k, sh_unit *u)
{
    gl_status st = build(c, k, u);
    if (st == GL_OK && !u->refused) {
        u->node.builds++;
        c->builds++;
    }
    u->node.built = st == GL_OK;
    u->node.generation++;
    return st;
}

/* ---- the backend's entry points --------------------------------------------------------- */

bool dn_shuffle_claims(dn_ctx *c, const gl_model *m, const gl_node *call,
                       const gl_function *fn, char *why, size_t len)
{
    sh_unit *u = unit_new(call, fn, why, len);
    if (!u)
        return false;
    bool ok = true;
    for (size_t j = 0; j < u->n_parts && ok; j++)
        if (!dn_input_fits(call, u->part_in[j], 4, 4)) {
            snprintf(why, len, "Concat input '%s' is not float32 of rank 4",
                     call->inputs[u->part_in[j]]->name);
            ok = false;
        }
    /* Every shape known: build now, so that a group that is no shuffle is expanded by
     * the executor (and the plan says why). */
    const gl_tensor **in = gl_xcalloc(call->n_inputs + 1, sizeof(*in));
    gl_tensor **made = gl_xcalloc(call->n_inputs + 1, sizeof(*made));
    bool known = ok;
    for (size_t i = 0; i < call->n_inputs && known; i++)
        known = !call->inputs[i] || dn_stand_in(call->inputs[i], &in[i], &made[i]);
    if (known) {
        char where[512];
        gl_node_where(m, call, where, sizeof(where));
        gl_kernel_ctx k = {.node = call, .model = m, .where = where,
                           .n_inputs = call->n_inputs, .in = in,
                           .n_outputs = call->n_outputs, .backend_ctx = c};
        if (build(c, &k, u) != GL_OK) {
            snprintf(why, len, "%s", gl_error_message());
            gl_error_clear();
            ok = false;
        } else if (u->refused) {
            snprintf(why, len, "%s", u->node.note);
            ok = false;
        }
    }
    for (size_t i = 0; i < call->n_inputs; i++)
        gl_tensor_free(made[i]);
    free(in);
    free(made);
    dn_shuffle_release(u);
    return ok;
}

/* Concat input j's bytes as the moves read them (staged when blocked). */
static const float *part_data(const gl_kernel_ctx *k, const sh_unit *u, size_t j)
{
    const gl_tensor *t = k->in[u->part_in[j]];
    return u->stage[j].buf ? u->stage[j].buf : t->buf ? t->buf->data : NULL;
}

static gl_status execute(dn_ctx *c, gl_kernel_ctx *k, sh_unit *u)
{
    gl_status st = dn_take_outputs(k, &u->node);
    dnnl_status_t r = dnnl_success;
    for (size_t j = 0; j < u->n_parts && st == GL_OK && r == dnnl_success; j++) {
        sh_stage *sg = &u->stage[j];
        const gl_tensor *t = k->in[u->part_in[j]];
        if (sg->ro.prim) {
            r = reorder_run(c, &sg->ro, t->buf ? t->buf->data : NULL, sg->buf);
            k->reorders++;
        }
    }
    for (size_t i = 0; i < u->n_moves && st == GL_OK && r == dnnl_success; i++) {
        sh_move *mv = &u->moves[i];
        if (mv->second)
            continue;
        void *to = k->out[mv->output]->buf->data;
        if (mv->pair == NONE)
            r = reorder_run(c, &mv->ro, part_data(k, u, mv->part), to);
        else
            interleave(mv, &u->moves[mv->pair], part_data(k, u, mv->part),
                       part_data(k, u, u->moves[mv->pair].part), to);
    }
    if (st == GL_OK && r == dnnl_success)
        r = dnnl_stream_wait(c->stream);
    return st != GL_OK ? st : r == dnnl_success ? GL_OK
                                                : dn_fail(k->where, "channel shuffle reorder", r);
}

gl_status dn_shuffle_run(dn_ctx *c, gl_kernel_ctx *k, void **state)
{
    sh_unit *u = *state;
    if (!u) {
        char why[256] = "";
        const gl_function *fn = gl_called_function(k->model, k->node);
        u = fn ? unit_new(k->node, fn, why, sizeof(why)) : NULL;
        if (!u)
            return gl_fail(GL_ERR_INTERNAL, "%s: claimed as a fused group, yet %s", k->where,
                           why);
        *state = u;
    }
    gl_status st = GL_OK;
    if (!u->node.built || !dn_key_matches(&u->node, k))
        st = finish_build(c, k, u);
    if (st != GL_OK)
        return st;
    if (u->refused)
        return dn_fused_run_members(c, k);
    if (!u->threads)
        return execute(c, k, u);
    dn_ctx_threads(c, u->threads);
    st = execute(c, k, u);
    dn_ctx_threads(c, 0);
    return st;
}

/* dn_nary.c — ops over any number of inputs: Concat as oneDNN concat; Sum, Mean, Max
 * and Min with other than two inputs as oneDNN sum or as a binary primitive with binary
 * post-ops (with two inputs they are dn_binary.c's rows, which these rows hand over to).
 *
 *   Concat  the inputs in the plan's activation layout when most of them (by elements)
 *       arrive in it and a consumer of the output is an op this backend runs (so a Conv
 *       after it reads it as it is, ShuffleNet's channel shuffle views it; inputs in
 *       other layouts are converted, views — a channel Slice of a wider tensor — read
 *       where they are, simple concat copies their runs of channels as it does a dense
 *       input's). Otherwise the output would be plain, and a plain concat stays on the
 *       reference kernel: oneDNN 2.6's simple concat took 0.38 ms
 *       for two plain [1,116,28,28] where the reference kernel's copies take 0.016 (one
 *       thread; equal at [8,64,56,56]). oneDNN 2.6's simple concat copies, for every
 *       index of the dims outside the concatenated one, each input's contiguous run:
 *       on nhwc a run of C_i floats per pixel, on nChw16c one run of (C_i/16)·H·W·16
 *       floats per image and input (fewer, longer copies). On nChw16c it needs every C_i
 *       to be a multiple of 16; otherwise oneDNN runs its ref concat — one reorder per
 *       input into the output — accepted, and the plan says so.
 *       A channel Concat that dn_concat.c planned in place copies nothing when its
 *       inputs are at their places (dn_node_run asks first); this build is what runs
 *       when they are not.
 *       Where every input and the output have plain strides (nhwc, or a slice of it) and
 *       each input's part of an output row is one contiguous run, graphlab's own copy
 *       loop runs instead (nc_*): oneDNN 2.6's simple concat took 0.9 ms for swin_t's
 *       roll (two slices of [1,56,56,96] along a spatial axis), ONNX Runtime 0.08.
 *       So does a blocked channel Concat of more than one image whose inputs fill whole
 *       channel blocks: on nChw8c (AVX2) when its output passes L2 (512 KB), with streaming
 *       stores: each input is one run per image, and the output's lines are not read
 *       before they are written. DenseNet-121 g16 at batch 8 (62 such Concats, not in
 *       place: dn_concat.c needs batch 1), one thread: oneDNN's simple concat 13.4-13.8
 *       ms, this loop with plain stores 13.8-14.5, streamed 9.8-9.9 (ONNX Runtime 9.9);
 *       the BatchNormalization+Relu units that read them from memory, not the caches,
 *       10.9-11.1 against 9.0-9.7. On nChw16c (AVX-512; another machine: 2 MB of L2 a
 *       core, a large L3) plain stores beat oneDNN's at every size (0.4 to 13 MB), and
 *       streaming is no surer a gain: DenseNet-121 g16 at batch 8, two threads, per-node
 *       minimums, the 62 Concats 12.5 ms on oneDNN's, 9.6 plain (their BN+ReLU readers
 *       unchanged), 6.7 streamed but the readers 1.8 ms slower; Inception-v3's 11 Concats
 *       5.1 -> 4.4 plain, 3.6 streamed with its pools 1.2 ms slower. So plain stores.
 *   Sum, Mean  with inputs of one shape: oneDNN sum (scales 1, or 1/n for Mean), the
 *       inputs read in the layout of the first that has one. With broadcasting: as Max/Min.
 *   Max, Min  (and Sum/Mean that broadcast) a binary primitive over two inputs, one of
 *       them with the output's shape, and a binary post-op per further input (Mean then
 *       scales by 1/n); a post-op operand oneDNN broadcasts only in its reference code
 *       (over a middle dim) sends the node to our reference kernel. A single input is a
 *       copy through oneDNN sum.
 * Small plain tensors stay on the reference kernel (see DN_OPS_SMALL).
 */
#include "exec/dnnl/dn_opkit.h"

#ifdef __x86_64__
#include <immintrin.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Inputs a primitive here takes (execute() passes at most 64 arguments). */
#define NARY_MAX 60

static bool same_dims(const gl_tensor *t, int rank, const int64_t *dims)
{
    return t->rank == rank && memcmp(t->dims, dims, (size_t)rank * sizeof(int64_t)) == 0;
}

/* ---- Concat ---------------------------------------------------------------------------- */

/* ---- Concat by graphlab's copy loop ---------------------------------------------------- */

/* The output, with the dims outside the concatenated one's run (dst order, outermost
 * first) and per input where its runs start and how long they are. */
typedef struct nc_part {
    int64_t stride[DNNL_MAX_NDIMS]; /* per outer dim, in floats */
    int64_t offset, dst_offset;     /* in floats: the first run's start in src and dst */
    size_t run;                     /* floats per run */
} nc_part;

typedef struct nc_geom {
    int n_outer;
    int64_t rows;           /* indexes of the outer dims: each input's run once per row */
    int threads;            /* at most this many (NC_PER_THREAD) */
    bool stream;            /* runs of whole 8-float vectors written past the caches */
    bool nt;                /* this run streams: stream, and dst aligned to 32 bytes */
    const void *const *src; /* this run's inputs and output */
    void *dst;
    int64_t dims[DNNL_MAX_NDIMS], dst_stride[DNNL_MAX_NDIMS];
    size_t n_in;
    nc_part part[NARY_MAX];
} nc_geom;

/* n floats of x to y (aligned to 32 bytes, n a multiple of 8) past the caches (elsewhere
 * than x86-64, where the build never sets `stream`, a copy). */
#ifdef __x86_64__
__attribute__((target("avx2"))) static void nc_stream(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        __m256 c = _mm256_loadu_ps(x + i + 16), d = _mm256_loadu_ps(x + i + 24);
        _mm256_stream_ps(y + i, a);
        _mm256_stream_ps(y + i + 8, b);
        _mm256_stream_ps(y + i + 16, c);
        _mm256_stream_ps(y + i + 24, d);
    }
    for (; i < n; i += 8)
        _mm256_stream_ps(y + i, _mm256_loadu_ps(x + i));
}

static void nc_stream_fence(void) { _mm_sfence(); }
#else
static void nc_stream(const float *x, float *y, size_t n) { memcpy(y, x, n * sizeof(float)); }
static void nc_stream_fence(void) {}
#endif

/* The runs of output rows [r0, r1) (a row: one index of the outer dims, counted in
 * dst order, outermost first). */
static void nc_copy_rows(void *extra, int64_t r0, int64_t r1, int thread)
{
    const nc_geom *g = extra;
    int64_t idx[DNNL_MAX_NDIMS] = {0}, rest = r0;
    (void)thread;
    for (int d = g->n_outer - 1; d >= 0; d--) {
        idx[d] = rest % g->dims[d];
        rest /= g->dims[d];
    }
    for (int64_t row = r0; row < r1; row++) {
        int64_t at = 0;
        for (int d = 0; d < g->n_outer; d++)
            at += idx[d] * g->dst_stride[d];
        for (size_t i = 0; i < g->n_in; i++) {
            const nc_part *p = &g->part[i];
            int64_t from = p->offset;
            for (int d = 0; d < g->n_outer; d++)
                from += idx[d] * p->stride[d];
            float *y = (float *)g->dst + p->dst_offset + at;
            const float *x = (const float *)g->src[i] + from;
            if (g->nt)
                nc_stream(x, y, p->run);
            else
                memcpy(y, x, p->run * sizeof(float));
        }
        int d = g->n_outer - 1;
        while (d >= 0 && ++idx[d] == g->dims[d])
            idx[d--] = 0;
    }
    if (g->nt)
        nc_stream_fence(); /* the streamed stores are seen before the join */
}

/* The rows split over the node's threads, each copying NC_PER_THREAD bytes or more. */
#define NC_PER_THREAD (256 * 1024)
/* A blocked output past a core's L2: written with streaming stores. */
#define NC_STREAM_BYTES (512 * 1024)

static void nc_run(void *extra, const void *const *src, void *dst)
{
    nc_geom *g = extra;
    g->src = src;
    g->dst = dst;
    g->nt = g->stream && ((uintptr_t)dst & 31) == 0;
    dn_parallel_for(g->rows, g->threads, nc_copy_rows, g);
}

/* md's strides when it is float32, plain (blk 1: no inner blocks) or blocked by blk along
 * the concatenated axis only (nChw8c along the channels) with no padding there, else
 * NULL. Per index of the outer dims a blocked tensor whose channels fill whole blocks is
 * one run of its blocks, as a plain one's channels are. */
static const int64_t *nc_strides(const dnnl_memory_desc_t *md, int axis, int64_t blk)
{
    const dnnl_blocking_desc_t *bk = &md->format_desc.blocking;
    if (md->format_kind != dnnl_blocked || md->data_type != dnnl_f32)
        return NULL;
    if (blk == 1 ? bk->inner_nblks != 0
                 : bk->inner_nblks != 1 || bk->inner_idxs[0] != axis ||
                       bk->inner_blks[0] != blk || md->dims[axis] % blk ||
                       md->padded_dims[axis] != md->dims[axis])
        return NULL;
    return bk->strides;
}

/* Take the copy loop when the dims inside the concatenated one (those of smaller output
 * strides) are dense in the output and in every input, with the same strides, so that an
 * input's extent along the axis times them is one run (src: the inputs' descriptors). */
static void nc_take(dn_build *b, const dnnl_memory_desc_t *src, size_t n,
                    const dnnl_memory_desc_t *dst, int axis)
{
    const dnnl_blocking_desc_t *bk = &dst->format_desc.blocking;
    int64_t blk = dst->format_kind == dnnl_blocked && bk->inner_nblks == 1 ? bk->inner_blks[0]
                                                                          : 1;
    const int64_t *ds = nc_strides(dst, axis, blk);
    if (!ds)
        return;
    int rank = dst->ndims;
    int64_t inner = 1;
    for (int d = 0; d < rank; d++)
        if (d != axis && ds[d] < ds[axis])
            inner *= dst->dims[d];
    if (ds[axis] != inner * blk)
        return; /* the inner dims are not dense in the output */
    nc_geom *g = gl_xcalloc(1, sizeof(*g));
    for (int d = 0; d < rank; d++) /* outer dims, outermost (largest stride) first */
        if (d != axis && ds[d] > ds[axis])
            g->dims[g->n_outer++] = d;
    for (int i = 1; i < g->n_outer; i++) /* insertion sort by stride, descending */
        for (int j = i; j > 0 && ds[g->dims[j]] > ds[g->dims[j - 1]]; j--) {
            int64_t t = g->dims[j];
            g->dims[j] = g->dims[j - 1];
            g->dims[j - 1] = t;
        }
    int outer_axis[DNNL_MAX_NDIMS];
    for (int o = 0; o < g->n_outer; o++) {
        outer_axis[o] = (int)g->dims[o];
        g->dst_stride[o] = ds[outer_axis[o]];
        g->dims[o] = dst->dims[outer_axis[o]];
    }
    g->n_in = n;
    int64_t along = 0;
    size_t row_bytes = 0; /* of the output: every input's run */
    for (size_t i = 0; i < n; i++) {
        const int64_t *ss = nc_strides(&src[i], axis, blk);
        bool ok = ss && ss[axis] == inner * blk;
        for (int d = 0; ok && d < rank; d++)
            if (d != axis && ds[d] < ds[axis])
                ok = ss[d] == ds[d];
        if (!ok) {
            free(g);
            return;
        }
        nc_part *p = &g->part[i];
        for (int o = 0; o < g->n_outer; o++)
            p->stride[o] = ss[outer_axis[o]];
        p->offset = src[i].offset0;
        p->dst_offset = dst->offset0 + along * inner;
        p->run = (size_t)(src[i].dims[axis] * inner);
        along += src[i].dims[axis];
        row_bytes += p->run * sizeof(float);
    }
    g->rows = 1;
    for (int o = 0; o < g->n_outer; o++)
        g->rows *= g->dims[o];
    /* Blocked: more than one image (oneDNN's copy splits one image's runs over the
     * threads, this loop would copy each run on one), every run whole blocks at whole
     * blocks of the output (aligned where the output is: nc_run checks). On nChw16c
     * (AVX-512) with plain stores, which beat oneDNN's copy at every size there and keep
     * the output in the caches for its reader; on nChw8c (AVX2) only streamed past L2,
     * where plain stores lost to oneDNN's (see the top). */
    if (blk > 1) {
        bool whole = g->rows > 1 && dst->offset0 % blk == 0;
        g->stream = blk == 8 && b->c->avx2 && whole &&
                    row_bytes * (size_t)g->rows > NC_STREAM_BYTES;
        if (!g->stream && !(blk == 16 && whole)) {
            free(g);
            return;
        }
    }
    size_t by_size = row_bytes * (size_t)g->rows / NC_PER_THREAD;
    g->threads = by_size > 1 ? (by_size < 256 ? (int)by_size : 256) : 1;
    dn_take_native(b, nc_run, g, free, "graphlab:copy (%zu %s per run)", g->part[0].run,
                   g->part[0].run == 1 ? "float" : "floats");
}

static gl_status concat_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    size_t n = k->n_inputs;
    const gl_tensor *x0 = dn_f32_input(k, 0);
    if (n < 1 || n > NARY_MAX || !x0 || x0->rank < 1)
        return dn_refuse(b, "%zu inputs", n);
    int rank = x0->rank, axis;
    if (k->opset >= 4 && !gl_node_attr(k->node, "axis"))
        return dn_refuse(b, "no axis");
    if (!gl_axis_normalize(gl_node_attr_int(k->node, "axis", 1), rank, false, k->where, "axis",
                           &axis)) {
        gl_error_clear();
        return dn_refuse(b, "axis out of range");
    }
    int64_t out[DNNL_MAX_NDIMS];
    memcpy(out, x0->dims, (size_t)rank * sizeof(int64_t));
    out[axis] = 0;
    int64_t in_layout = 0, in_plain = 0; /* elements */
    for (size_t i = 0; i < n; i++) {
        const gl_tensor *t = dn_f32_input(k, i);
        if (!t || t->rank != rank || t->count == 0)
            return dn_refuse(b, "input %zu is not a non-empty float32 tensor of rank %d", i,
                             rank);
        for (int d = 0; d < rank; d++)
            if (d != axis && t->dims[d] != x0->dims[d])
                return dn_refuse(b, "inputs differ in dim %d", d);
        out[axis] += t->dims[axis];
        *(t->layout ? &in_layout : &in_plain) += t->count;
    }
    dnnl_format_tag_t tag = in_layout > 0 && in_layout >= in_plain && dn_read_by_backend(k)
                                ? dn_act_tag(b->c, rank)
                                : dnnl_format_tag_undef;
    if (tag == dnnl_format_tag_undef)
        return dn_refuse(b, "a plain concat: the reference kernel copies faster");
    dnnl_memory_desc_t src[NARY_MAX], dst;
    dnnl_status_t r = dn_md_tag(&dst, rank, out, tag);
    for (size_t i = 0; i < n && r == dnnl_success; i++) {
        const dn_layout *l = (const dn_layout *)k->in[i]->layout;
        if (l && l->view) /* a slice of a wider tensor: read where it is */
            src[i] = b->held[i];
        else
            r = dn_md_tag(&src[i], rank, k->in[i]->dims, tag);
    }
    if (r == dnnl_success)
        r = dnnl_concat_primitive_desc_create(pd, &dst, (int)n, axis, src, NULL, b->c->engine);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no concat for this (%s)", dnnl_status2str(r));
    dn_note_ref(b, *pd, "concat as one reorder per input (channels not a multiple of the block)");
    for (size_t i = 0; i < n; i++)
        dn_bind_input(b, DNNL_ARG_MULTIPLE_SRC + (int)i, i, &src[i]);
    const dnnl_memory_desc_t *to = dn_pd_md(*pd, dnnl_query_dst_md, 0);
    dn_bind_output(b, DNNL_ARG_DST, 0, to, rank, out);
    nc_take(b, src, n, to, axis);
    return GL_OK;
}

static bool concat_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (n->n_inputs > NARY_MAX) {
        snprintf(why, len, "more than %d inputs", NARY_MAX);
        return false;
    }
    return dn_inputs_fit(n, 1, DNNL_MAX_NDIMS, why, len);
}

/* ---- Sum, Mean, Max, Min ------------------------------------------------------------- */

/* The primitive over n inputs of one shape: oneDNN sum with scales. */
static gl_status sum_build(dn_build *b, dnnl_primitive_desc_t *pd, size_t first, float scale)
{
    const gl_kernel_ctx *k = b->k;
    size_t n = k->n_inputs;
    float scales[NARY_MAX] = {0};
    dnnl_memory_desc_t src[NARY_MAX];
    memset(src, 0, sizeof(src));
    for (size_t i = 0; i < n; i++) {
        scales[i] = scale;
        src[i] = b->md[first]; /* every input read in the layout of the first with one */
    }
    dnnl_status_t r = dnnl_sum_primitive_desc_create(pd, &b->md[first], (int)n, scales, src,
                                                     NULL, b->c->engine);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no sum for this (%s)", dnnl_status2str(r));
    dn_note_ref(b, *pd, "a sum as a reorder per input (padded channels)");
    for (size_t i = 0; i < n; i++)
        dn_bind_input(b, DNNL_ARG_MULTIPLE_SRC + (int)i, i, &src[i]);
    const gl_tensor *t = k->in[first];
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), t->rank, t->dims);
    return GL_OK;
}

/* How an operand other than the first is read: in the first's layout when it has the
 * output's shape, else as plain dims with leading 1s (oneDNN broadcasts dims of 1). */
static bool operand_md(const dn_build *b, size_t i, size_t s0, int rank, const int64_t *out,
                       dnnl_memory_desc_t *md, bool *full)
{
    *full = same_dims(b->k->in[i], rank, out);
    if (*full) {
        *md = b->md[s0];
        return true;
    }
    return dn_md_leading_ones(md, rank, b->k->in[i]) == dnnl_success;
}

static void bind_operand(dn_build *b, int arg, size_t i, const dnnl_memory_desc_t *md, bool full)
{
    if (full)
        dn_bind_input(b, arg, i, md);
    else
        dn_bind_input_view(b, arg, i, md);
}

/* A binary primitive over inputs s0 and the next, a binary post-op per further input. */
static gl_status chain_build(dn_build *b, dnnl_primitive_desc_t *pd, size_t s0, int rank,
                             const int64_t *out)
{
    const gl_kernel_ctx *k = b->k;
    const char *op = k->node->op_type;
    size_t n = k->n_inputs;
    dnnl_alg_kind_t alg = strcmp(op, "Max") == 0   ? dnnl_binary_max
                          : strcmp(op, "Min") == 0 ? dnnl_binary_min
                                                   : dnnl_binary_add;
    size_t order[NARY_MAX], m = 0; /* the operands after s0 */
    for (size_t i = 0; i < n; i++)
        if (i != s0)
            order[m++] = i;
    dnnl_memory_desc_t md[NARY_MAX];
    bool full[NARY_MAX];
    for (size_t j = 0; j < m; j++)
        if (!operand_md(b, order[j], s0, rank, out, &md[j], &full[j]))
            return dn_refuse(b, "shapes oneDNN does not describe");
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_status_t r = dnnl_primitive_attr_create(&attr);
    if (r == dnnl_success)
        r = dnnl_post_ops_create(&po);
    for (size_t j = 1; j < m && r == dnnl_success; j++)
        r = dnnl_post_ops_append_binary(po, alg, &md[j]);
    if (r == dnnl_success && strcmp(op, "Mean") == 0)
        r = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, 1.0f / (float)n, 0.0f);
    if (r == dnnl_success)
        r = dnnl_primitive_attr_set_post_ops(attr, po);
    dnnl_binary_desc_t d;
    if (r == dnnl_success)
        r = dnnl_binary_desc_init(&d, alg, &b->md[s0], &md[0], &b->md[s0]);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &d, attr, b->c->engine, NULL);
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no binary chain for this (%s)", dnnl_status2str(r));
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "this broadcast of a post-op operand");
    /* max and min keep the operand that is not NaN (dn_special.c) */
    gl_status st = dn_guard_specials(b, dn_alg_drops_specials(alg, 0.0f, 0.0f));
    if (st != GL_OK)
        return st;
    dn_bind_input(b, DNNL_ARG_SRC_0, s0, NULL);
    bind_operand(b, DNNL_ARG_SRC_1, order[0], &md[0], full[0]);
    for (size_t j = 1; j < m; j++)
        bind_operand(b, DNNL_ARG_ATTR_MULTIPLE_POST_OP((int)j - 1) | DNNL_ARG_SRC_1, order[j],
                     &md[j], full[j]);
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), rank, out);
    return GL_OK;
}

static gl_status variadic_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    size_t n = k->n_inputs;
    const dn_op *pair = dn_table_row(&dn_binary_ops, k->node->op_type);
    if (n == 2 && pair)
        return pair->build(b, pd);
    if (n < 1 || n > NARY_MAX)
        return dn_refuse(b, "%zu inputs", n);
    const gl_tensor *ts[NARY_MAX];
    for (size_t i = 0; i < n; i++)
        if (!(ts[i] = dn_f32_input(k, i)) || ts[i]->count == 0)
            return dn_refuse(b, "input %zu is not a non-empty float32 tensor", i);
    /* The output's shape (numpy broadcasting), and the first input that has it, one in
     * our layout if there is one. */
    int rank = 0;
    for (size_t i = 0; i < n; i++)
        rank = ts[i]->rank > rank ? ts[i]->rank : rank;
    if (rank == 0 || rank > DNNL_MAX_NDIMS)
        return dn_refuse(b, "rank %d", rank);
    int64_t out[DNNL_MAX_NDIMS];
    for (int d = 0; d < rank; d++) {
        out[d] = 1;
        for (size_t i = 0; i < n; i++) {
            int j = d - (rank - ts[i]->rank);
            int64_t v = j >= 0 ? ts[i]->dims[j] : 1;
            if (v != 1 && out[d] != 1 && v != out[d])
                return dn_refuse(b, "shapes do not broadcast");
            out[d] = v != 1 ? v : out[d];
        }
    }
    size_t s0 = n, full = 0;
    for (size_t i = 0; i < n; i++) {
        if (!same_dims(ts[i], rank, out))
            continue;
        full++;
        if (s0 == n || (!ts[s0]->layout && ts[i]->layout))
            s0 = i;
    }
    if (s0 == n)
        return dn_refuse(b, "no input has the output's shape");
    if (!ts[s0]->layout && ts[s0]->count < DN_OPS_SMALL)
        return dn_refuse(b, "%lld elements: below the oneDNN threshold (%d)",
                         (long long)ts[s0]->count, DN_OPS_SMALL);
    const char *op = k->node->op_type;
    bool adds = strcmp(op, "Sum") == 0 || strcmp(op, "Mean") == 0;
    if (n == 1 || (full == n && adds))
        return sum_build(b, pd, s0, strcmp(op, "Mean") == 0 ? 1.0f / (float)n : 1.0f);
    return chain_build(b, pd, s0, rank, out);
}

static bool variadic_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    const dn_op *pair = dn_table_row(&dn_binary_ops, n->op_type);
    if (n->n_inputs == 2 && pair)
        return pair->claim(m, n, why, len);
    if (n->n_inputs > NARY_MAX) {
        snprintf(why, len, "more than %d inputs", NARY_MAX);
        return false;
    }
    return dn_inputs_fit(n, 0, DNNL_MAX_NDIMS, why, len);
}

/* From opset 6 (before it, Sum/Mean/Max/Min carried consumed_inputs and the two-input
 * rows of dn_binary.c serve them alone). */
#define NARY(op) {"", op, 6, variadic_claim, variadic_build, NULL}
static const dn_op nary_ops[] = {
    {"", "Concat", 1, concat_claim, concat_build, NULL},
    NARY("Sum"), NARY("Mean"), NARY("Max"), NARY("Min"),
};
#undef NARY
const dn_op_table dn_nary_ops = {nary_ops, GL_ARRAY_LEN(nary_ops)};

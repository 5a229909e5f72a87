/* dn_cost.c — `--layout auto`: the plan's activation layout by estimated cost.
 *
 * Each convolution of the model (the members of fused groups counted as they would run
 * unfused, graphlab's NhwcConv among them) gets an estimated time in nhwc and in the
 * blocked layout: a roofline base (its FLOPs at the rate oneDNN's kernels reach here, or
 * its bytes at the memory bandwidth, whichever is longer) times a factor per kind of
 * convolution and layout, measured (bench/bench_dnnl_layout, oneDNN 2.6, AVX-512, 2
 * threads; the table below says which row came from where). A Concat of activations
 * (unless a fused 1x1 convolution reads it: dn_catconv.c never makes it) adds the time
 * of moving its output: at the reorder bandwidth in nhwc, at oneDNN's
 * simple:any rate in the blocked layouts. The plan takes the layout of the smaller sum
 * and says both sums (dn_ctx_summary); each convolution's note says its own pair
 * (dn_conv.c).
 *
 * A ConvTranspose is costed as the convolution it transposes (its own row), a
 * BatchNormalization by the bytes it moves (tally_norm); nhwc's first layer adds the
 * reorder of the image (dn_conv_cost_us). Session 42 set these from whole runs that the
 * former sums chose wrong at batch 1 (blocked ahead, `graphlab profile --layout`):
 * convtranspose_decoder 0.90 ms blocked against 1.08 nhwc, dbnet_head 0.37/0.41,
 * efficientnet_b0 5.67/6.02, mnasnet0_5 1.27/1.33, mobilenet_v3_large 2.63/2.75,
 * mobilenet_v3_small 1.02/1.09 (per-node minimums summed, 3 rounds).
 *
 * Not counted: the other ops between convolutions (they follow the convolutions' layout
 * in either policy), and the conversions at the plan's edges (the same in both). One layout
 * per plan, not per region: measured per convolution, the two layouts differ by less
 * than the reorder a region boundary would cost for most convolutions of the corpus
 * (a 1 MB activation reorders in ~25 us; a 1x1 convolution of it takes ~40-70 us).
 * A model with no convolution keeps plain activations, and so does one whose products by
 * weights outweigh its convolutions (PRODUCTS_OVER_CONVS); one whose convolutions have no
 * known shapes is chosen by the former rule (Concat: nhwc; a quarter or more depthwise:
 * blocked; else nhwc).
 */
#include "exec/dnnl/dn.h"
#include "ir/calls.h"
#include "ops/window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Roofline constants measured with bench/bench_dnnl_layout (2 threads, AVX-512): a 3x3
 * 64->64 convolution at 56x56 (231 MFLOP) in ~520 us, a 1x1 16->96 at 112x112 moving
 * 5.6 MB in ~106 us; reorders between nhwc and nChw16c at 30-60 bytes/ns. */
#define FLOPS_PER_US 4.0e5
#define BYTES_PER_US 4.0e4
/* oneDNN 2.6's concat on blocked activations whose channels are off the block (a block
 * of 16 split between two inputs) is a reorder per input, element by element (the reason
 * the former rule kept nhwc for nets with Concat). With every input's channels a
 * multiple of the block it is simple:any, the same copy of whole rows as in nhwc:
 * densenet121_g16 at batch 8 (62 Concats, none in place: dn_concat.c needs batch 1),
 * `graphlab profile --layout blocked|nhwc`, 53 against 50 ms in all (loaded machine). */
#define BLOCKED_CONCAT_BYTES_PER_US 4.0e3
/* Winograd's time over the direct blocked kernel's (dn_winograd_fits), 3x3 stride 1, 2
 * threads, bench/bench_dnnl_layout's last table: 64 channels at 56x56 0.29 against 0.58 ms
 * (jit_fp32_wino_2x3), 128 at 28x28 0.22/0.57 (jit_wino_4x3), 256 at 14x14 0.27/0.57, 512
 * at 7x7 0.38/0.60, 32 at 112x112 0.37/0.59, 48 at 28x28 0.051/0.084, 16 at 56x56
 * 0.035/0.038 to 1.08 (hence the floor of 32 channels); batch 8 at 56x56 and 14x14 0.42
 * and 0.49. Inside a whole model the gain is smaller on deep layers, whose Winograd
 * weights (16/9 or 36/9 of the direct ones) no longer stay in cache: resnet18's 512-channel
 * 3x3 convolutions 0.80 against 0.90-0.97 ms (nhwc brgconv). */
#define WINOGRAD_OVER_DIRECT 0.55
/* A model whose products by weights (MatMul, Gemm) outweigh its convolutions (and
 * Concats) this many times keeps plain activations: the products read rows, and under
 * nhwc swin_t's one Conv (its patch embedding) put a transposing reorder of its [1, H, W,
 * C] activations (NHWC already in ONNX terms) at each residual Add and LayerNorm: 5.2 ms
 * of conversions per run at one thread, 1.1 plain; per-node minimums 126 -> 122 ms. A
 * CNN's classifier is a few percent of its convolutions (resnet50: ~4 MFLOP of ~8 G). */
#define PRODUCTS_OVER_CONVS 10.0

/* One kind of convolution: its time in nhwc relative to the blocked layout, at batch 1
 * and at a larger batch (oneDNN's nhwc kernels, brgconv and brdgmm, gain less from a
 * batch than its blocked jit kernels do), on AVX-512; and on AVX2, where oneDNN 2.6 runs
 * the same jit kernels in both layouts (no brgconv, no brdgmm, no Winograd). */
typedef struct layout_row {
    const char *kind;
    bool (*matches)(const dn_conv_dims *d);
    double nhwc_over_blocked;
    double nhwc_over_blocked_batched; /* batch > 1 */
    double nhwc_over_blocked_avx2;    /* any batch */
} layout_row;

static bool is_depthwise(const dn_conv_dims *d)
{
    return d->group > 1 && d->group == d->ic && d->group == d->oc;
}

static bool depthwise_large(const dn_conv_dims *d)
{
    return is_depthwise(d) && d->in_spatial >= 56 * 56;
}

static bool depthwise_small(const dn_conv_dims *d)
{
    return is_depthwise(d) && d->in_spatial < 56 * 56;
}

static bool first_layer(const dn_conv_dims *d)
{
    return d->ic <= 4;
}

static bool transposed(const dn_conv_dims *d)
{
    return d->transposed;
}

/* Grouped with a group's channels off AVX-512's block of 16 (RegNet-Y's 8, ResNeXt's 4
 * and 8): oneDNN writes those in nChw8c inside a nChw16c plan. */
static bool grouped_off_block(const dn_conv_dims *d)
{
    return d->group > 1 && !is_depthwise(d) && (d->ic / d->group) % 16 != 0;
}

static bool pointwise_few_channels(const dn_conv_dims *d)
{
    return d->ksize == 1 && d->group == 1 && d->ic < 128 && d->in_spatial > 1;
}

static bool pointwise(const dn_conv_dims *d)
{
    return d->ksize == 1 && d->group == 1;
}

bool dn_winograd_fits(int nsp, const int64_t *kernel, const int64_t *stride, bool dilated,
                      int64_t group, int64_t ic, int64_t oc)
{
    return nsp == 2 && kernel[0] == 3 && kernel[1] == 3 && stride[0] == 1 && stride[1] == 1 &&
           !dilated && group == 1 && ic >= 32 && oc >= 32;
}

static bool dense(const dn_conv_dims *d)
{
    return d->group == 1;
}

static bool any_conv(const dn_conv_dims *d)
{
    (void)d;
    return true;
}

/* First match wins. Ratios from bench/bench_dnnl_layout at 2 threads (the fastest run
 * of each round, median of 3 rounds, two sweeps on a loaded machine) unless said
 * otherwise; at 1 thread the depthwise rows lean further to blocked (1.05-1.53).
 * Batch > 1 (the last column): `graphlab profile M --layout nhwc|blocked --passes all
 * --backends fused --threads 2` at batch 8, the faster of two rounds per node (loaded
 * machine), mnasnet0_5, efficientnet_b0 and densenet121_g16 (session 34, issue 22):
 * first layers 1.9-6.8 (brgconv reads the image reordered to nhwc, the blocked jit
 * reads it plain), depthwise at 112x112 3.1 (efficientnet's all together 1.3),
 * depthwise below 56x56 1.0-1.4, 1x1 1.1-1.5 (densenet's 58 together 1.65), 3x3 dense
 * 0.94 (densenet's 58). */
/* The AVX2 column (AMD EPYC, AVX2 only). Per convolution (bench/bench_dnnl_layout -t 1,
 * the fastest of 30 runs, median of 3 rounds, loaded machine): jit_1x1:avx2 in both
 * layouts 0.89-1.07 (32 -> 16 at 112x112 1.20); jit:avx2 3x3 dense 1.07, 1.18, 1.06, 1.40
 * from 56x56 to 7x7; jit_dw:avx2 at 112x112 and 56x56 0.93, 1.12, 1.30, below 0.91,
 * 0.92, 1.18, 0.59. The depthwise rows were then set from whole runs (quiet machine, 2
 * threads, `graphlab profile M --passes all --backends fused --layout nhwc|blocked --reps
 * 10`, two rounds): nhwc ahead on mobilenet_v2 6.1/6.3 against 6.2/7.4 ms, efficientnet_b0
 * 10.1/10.4 against 12.0/15.0, shufflenet_v2_x0_5; blocked ahead on the dense nets,
 * resnet18 30/27 against 43/39 ms, squeezenet1_1, googlenet, resnet50, inception_v3,
 * efficientnet_v2_s; and on the grouped (not depthwise) convolutions, whose row is set like
 * dense kxk from two sessions of rounds: regnet_y_400mf 7.9/7.9 blocked against 9.0/8.4
 * nhwc, resnext50_32x4d 63/70 against 80/85 ms (those AVX2 rounds; on AVX-512 session 42
 * found regnet_y_400mf well ahead nhwc, see grouped_off_block). mobilenet_v3_small and
 * _large, chosen wrong until session 42, now go blocked by nhwc's first layer paying the
 * image's reorder (dn_conv_cost_us). Batch 8 was not weighed apart: the batch-1 ratios
 * are used at every batch. */
static const layout_row layout_rows[] = {
    /* oneDNN's jit deconvolution in both layouts; convtranspose_decoder's 4 took 0.568 ms
     * nhwc against 0.475 blocked, dbnet_head's 0.165 against 0.158 (session 42: 2 threads,
     * per-node minimums of 3 rounds of 20 runs, `graphlab profile M --passes all
     * --backends dnnl --layout nhwc|blocked`, as for the rows below that name it) */
    {"transposed", transposed, 1.15, 1.00, 1.00},
    /* At batch 1 the factor is 1: nhwc's extra is the image's reorder, added in
     * dn_conv_cost_us (the batch-8 factor was measured with it). */
    {"first layer (<= 4 input channels)", first_layer, 1.00, 2.00, 1.00},
    /* brdgmm_dw (nhwc) against jit_dw (blocked): 0.83/0.87 at 112x112, 0.73/0.76 and
     * 0.83/0.96 at 56x56 (strided 3x3 and 5x5) */
    {"depthwise, input >= 56x56", depthwise_large, 0.85, 1.20, 0.95},
    /* 1.21/1.25 at 28x28 stride 2, 1.17/1.41 and 1.01/1.16 at 14x14, 1.28/1.02 at 7x7
     * alone; whole runs (2 threads, quiet machine, fused, medians of 20) put nhwc ahead
     * on the nets made of them: mobilenet_v3_large 2.64 ms nhwc against 3.02 blocked,
     * mobilenet_v3_small 0.89 against 1.04, efficientnet_b0 5.86 against 6.99, mnasnet0_5
     * 1.19 against 1.20; mobilenet_v2 2.75 against 2.65 in one pair, 2.75-3.25 against
     * 3.05-3.42 in three later ones. */
    {"depthwise, input < 56x56", depthwise_small, 1.05, 1.15, 0.90},
    /* brgconv_1x1 (nhwc) against jit_1x1 (blocked): alone, within 15% either way (and
     * nhwc ahead with a SiLU post-op). Issue 22's profile had efficientnet_b0's 1x1
     * convolutions of few input channels at 417 us nhwc against 243 us blocked, and this
     * row once took 1.40 from it; whole runs disagreed (2 threads, quiet machine, fused,
     * whole-run medians of 20: efficientnet_b0 5.74 ms nhwc against 7.29 blocked,
     * regnet_y_400mf 4.37 against 5.31), so the row says neither wins. */
    {"1x1, < 128 input channels", pointwise_few_channels, 1.00, 1.25, 1.00},
    {"1x1", pointwise, 1.00, 1.25, 1.00},
    /* brgconv (nhwc) against jit (blocked), 3x3: 0.93, 0.88, 0.96, 0.76 from 56x56 to
     * 7x7 (1 thread: 0.92 to 0.63) */
    {"dense kxk", dense, 0.88, 0.94, 1.15},
    /* Groups off the block: the factor is 1, blocked's extra is two reorders, added in
     * dn_conv_cost_us. */
    {"grouped, channels a group off the block", grouped_off_block, 1.00, 1.00, 1.15},
    {"grouped", any_conv, 1.00, 1.00, 1.15},
};

/* The roofline time of d in microseconds, whatever the layout. */
static double roofline_us(const dn_conv_dims *d)
{
    double n = (double)d->n, cin = (double)d->ic, cout = (double)d->oc;
    double flops = 2.0 * n * cout * (double)d->out_spatial * (cin / (double)d->group) *
                   (double)d->ksize;
    double bytes = 4.0 * (n * cin * (double)d->in_spatial + n * cout * (double)d->out_spatial +
                          cout * (cin / (double)d->group) * (double)d->ksize);
    double compute = flops / FLOPS_PER_US, memory = bytes / BYTES_PER_US;
    return compute > memory ? compute : memory;
}

static const layout_row *row_of(const dn_conv_dims *d)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(layout_rows); i++)
        if (layout_rows[i].matches(d))
            return &layout_rows[i];
    return &layout_rows[GL_ARRAY_LEN(layout_rows) - 1];
}

double dn_conv_cost_us(const dn_conv_dims *d, dn_policy p)
{
    double base = roofline_us(d);
    /* Plain NCHW reaches oneDNN's gemm or reference kernels: never cheaper. */
    if (p == DN_LAYOUT_PLAIN)
        return base * 4.0;
    if (p == DN_LAYOUT_NHWC) {
        const layout_row *row = row_of(d);
        double us = base * (d->avx2    ? row->nhwc_over_blocked_avx2
                            : d->n > 1 ? row->nhwc_over_blocked_batched
                                       : row->nhwc_over_blocked);
        /* oneDNN's blocked jit reads an image (<= 4 channels) plain, nhwc's brgconv
         * after a reorder of it to nhwc: its bytes read and written. Measured at batch 1
         * (session 42, `graphlab profile M --passes all --backends dnnl --layout
         * nhwc|blocked`, 2 threads, per-node minimums of 3 rounds of 20 runs), the first
         * convolution of a 224x224 image took 37-80 us longer in nhwc on eight models:
         * efficientnet_b0 0.254 against 0.188 ms, mnasnet0_5 0.100/0.063,
         * mobilenet_v3_large 0.099/0.058, mobilenet_v3_small 0.098/0.057, regnet_y_400mf
         * 0.132/0.095, shufflenet_v2_x1_0 0.136/0.099, resnext50_32x4d's 7x7 0.835/0.755;
         * dbnet_head's smaller image 0.037/0.024. */
        if (!d->avx2 && first_layer(d) && !d->transposed)
            us += 8.0 * (double)(d->n * d->ic * d->in_spatial) / BYTES_PER_US;
        return us;
    }
    /* A grouped convolution whose groups are off AVX-512's block of 16 reads and writes
     * nChw8c in a nChw16c plan: its input and its output are reordered, at oneDNN's
     * simple:any rate (BLOCKED_CONCAT_BYTES_PER_US: the first below moved its 4.8 MB
     * input at batch 8 in 1.71 ms). Measured (session 42, `graphlab profile M --passes
     * all --backends dnnl --layout nhwc|blocked`, 2 threads, per-node minimums of 3
     * rounds):
     * regnet_y_400mf's groups of 8 at batch 1 0.155 ms nhwc against 0.273 blocked at
     * 56x56, 0.080/0.239, 0.077/0.121, and the 1x1 convolution after each 0.067 against
     * 0.115; at batch 8 the first took 3.34 ms blocked, 1.71 of it the reorder of its
     * input; whole runs 4.2 ms nhwc against 6.3 blocked (batch 8: 33 against 42).
     * resnext50_32x4d's groups of 4 0.48-0.50 against 0.54, of 8 0.37 against 0.49, its
     * groups of 16 and 32 the other way (0.26 against 0.13, 0.14 against 0.11): whole
     * runs level at batch 1 (32.1/32.8 ms), blocked 3% ahead at batch 8. */
    if (!d->avx2 && grouped_off_block(d))
        base += 4.0 * (double)(d->n * (d->ic * d->in_spatial + d->oc * d->out_spatial)) /
                BLOCKED_CONCAT_BYTES_PER_US;
    return d->winograd ? base * WINOGRAD_OVER_DIRECT : base;
}

const char *dn_conv_cost_kind(const dn_conv_dims *d)
{
    return row_of(d)->kind;
}

/* ---- the model's convolutions ----------------------------------------------------------- */

/* Shapes as the tally knows them: a value's own type when every dim is known (a
 * symbolic batch counts as the run's, dn_ctx.batch, when the plan is made for one, else
 * as 1), else what the walk worked out for the values a fused
 * group's body makes (their types are often empty): a convolution's output from its
 * window, any other member's output as its first input's (the members of a fused
 * group after a convolution are elementwise). */
#define MEMO_MAX_RANK 5

typedef struct known_shape {
    const gl_value *v;
    int rank;
    int64_t dims[MEMO_MAX_RANK];
} known_shape;

typedef struct shape_memo {
    known_shape *items;
    size_t n, cap;
    int64_t batch; /* what a symbolic leading dim counts as */
} shape_memo;

static bool shape_of(const shape_memo *memo, const gl_value *v, known_shape *out)
{
    for (size_t i = 0; v && i < memo->n; i++)
        if (memo->items[i].v == v) {
            *out = memo->items[i];
            return true;
        }
    if (!v || v->type.kind != GL_TYPE_TENSOR || v->type.shape.rank < 1 ||
        v->type.shape.rank > MEMO_MAX_RANK)
        return false;
    out->v = v;
    out->rank = v->type.shape.rank;
    for (int i = 0; i < out->rank; i++) {
        int64_t x = v->type.shape.dims[i].value;
        if (x < 0 && i > 0)
            return false;
        out->dims[i] = x > 0 ? x : i == 0 ? memo->batch : 1;
    }
    return true;
}

static void memo_add(shape_memo *memo, const known_shape *k)
{
    if (memo->n == memo->cap) {
        memo->cap = memo->cap ? memo->cap * 2 : 16;
        memo->items = gl_xrealloc(memo->items, memo->cap * sizeof(*memo->items));
    }
    memo->items[memo->n++] = *k;
}

static int64_t product(const int64_t *d, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++)
        p *= d[i];
    return p;
}

/* The dims of convolution n with input x (weights w: the caller's value when n is in a
 * fused group's body), and its output's shape in *y; false when they are not known. */
static bool conv_dims_of(const gl_node *n, const known_shape *x, const gl_value *w,
                         bool channels_last, bool no_winograd, bool avx2, dn_conv_dims *d,
                         known_shape *y)
{
    const gl_tensor *t = w ? w->init : NULL;
    if (!t || t->rank < 3 || t->rank != x->rank)
        return false;
    int rank = x->rank, nsp = rank - 2, sp = channels_last ? 1 : 2;
    int64_t in_sp[MEMO_MAX_RANK], out_sp[MEMO_MAX_RANK];
    memcpy(in_sp, x->dims + sp, (size_t)nsp * sizeof(int64_t));
    gl_window win;
    if (gl_window_read(n, n->name, nsp, t->dims + 2, &win) != GL_OK ||
        gl_window_resolve(&win, in_sp, n->name, out_sp) != GL_OK) {
        gl_error_clear();
        return false;
    }
    *d = (dn_conv_dims){.n = x->dims[0], .ic = x->dims[channels_last ? rank - 1 : 1],
                        .oc = t->dims[0], .group = gl_node_attr_int(n, "group", 1),
                        .ksize = product(t->dims, 2, t->rank),
                        .in_spatial = product(in_sp, 0, nsp),
                        .out_spatial = product(out_sp, 0, nsp), .avx2 = avx2};
    bool dilated = false;
    for (int i = 0; i < nsp; i++)
        dilated |= win.dil[i] != 1;
    /* graphlab's NhwcConv (channels_last) keeps nhwc bytes: never Winograd. */
    d->winograd = !no_winograd && !channels_last &&
                  dn_winograd_fits(nsp, t->dims + 2, win.stride, dilated, d->group, d->ic,
                                   d->oc);
    y->rank = rank;
    y->dims[0] = d->n;
    y->dims[channels_last ? rank - 1 : 1] = d->oc;
    memcpy(y->dims + sp, out_sp, (size_t)nsp * sizeof(int64_t));
    return d->ic > 0 && d->group > 0;
}

/* The dims of ConvTranspose n with input x (weights w [IC, OC/G, k...]) as those of the
 * convolution it transposes (from its output back to its input: the same FLOPs and
 * bytes), its output y from its own type; false when they are not known. */
static bool deconv_dims_of(const shape_memo *memo, const gl_node *n, const known_shape *x,
                           const gl_value *w, const gl_value *out, bool avx2, dn_conv_dims *d,
                           known_shape *y)
{
    const gl_tensor *t = w ? w->init : NULL;
    if (!t || t->rank < 3 || t->rank != x->rank || !shape_of(memo, out, y) || y->rank != x->rank)
        return false;
    int64_t group = gl_node_attr_int(n, "group", 1);
    *d = (dn_conv_dims){.n = x->dims[0], .ic = y->dims[1], .oc = x->dims[1], .group = group,
                        .ksize = product(t->dims, 2, t->rank),
                        .in_spatial = product(y->dims, 2, y->rank),
                        .out_spatial = product(x->dims, 2, x->rank), .avx2 = avx2,
                        .transposed = true};
    return d->ic > 0 && d->oc > 0 && group > 0;
}

typedef struct layout_tally {
    size_t convs, depthwise, concats, costed;
    bool no_winograd;          /* dn_ctx.no_winograd */
    int block;                 /* dn_ctx.block: channels of the blocked layout */
    bool avx2;                 /* dn_ctx.avx2 */
    double us[3];              /* per dn_policy */
    double concat_us[3];
    double product_us;         /* MatMul and Gemm by constant weights (tally_product) */
    size_t norms;              /* BatchNormalization on 4-D activations */
    double norm_us[3];
} layout_tally;

static bool is_graphlab_op(const gl_node *n, const char *op)
{
    return strcmp(n->domain, "graphlab") == 0 && strcmp(n->op_type, op) == 0;
}

/* The value w stands for outside the fused group `call` of body fn (a body input or
 * output: the call's), else w. */
static const gl_value *caller_value(const gl_value *w, const gl_node *call, const gl_function *fn)
{
    for (size_t i = 0; call && w && i < fn->body->n_inputs; i++)
        if (fn->body->inputs[i] == w)
            return i < call->n_inputs ? call->inputs[i] : NULL;
    for (size_t i = 0; call && w && i < fn->body->n_outputs; i++)
        if (fn->body->outputs[i] == w && i < call->n_outputs)
            return call->outputs[i];
    return w;
}

/* Depthwise by its weights alone (group == output channels, one input channel each):
 * known even when the activations' shapes are not. */
static bool weights_depthwise(const gl_node *n, const gl_value *w)
{
    int64_t group = gl_node_attr_int(n, "group", 1);
    const gl_tensor *t = w ? w->init : NULL;
    return group > 1 && t && t->rank >= 3 && t->dims[1] == 1 && t->dims[0] == group;
}

static void tally_conv(layout_tally *k, shape_memo *memo, const gl_node *n, const gl_value *x,
                       const gl_value *w, const gl_value *out, bool channels_last)
{
    dn_conv_dims d;
    known_shape xs, ys;
    k->convs++;
    k->depthwise += weights_depthwise(n, w);
    bool dims = shape_of(memo, x, &xs) &&
                (strcmp(n->op_type, "ConvTranspose") == 0
                     ? deconv_dims_of(memo, n, &xs, w, out, k->avx2, &d, &ys)
                     : conv_dims_of(n, &xs, w, channels_last, k->no_winograd, k->avx2, &d, &ys));
    if (!dims)
        return;
    ys.v = n->outputs[0];
    memo_add(memo, &ys);
    k->costed++;
    /* graphlab's NhwcConv (channels_last) runs on nhwc bytes whatever the policy: the
     * same time in each, so it weighs nothing in the choice. */
    for (int p = 0; p < 3; p++)
        k->us[p] += dn_conv_cost_us(&d, channels_last ? DN_LAYOUT_NHWC : (dn_policy)p);
}

/* Every input of Concat n has a known channel count (along its axis) that is a multiple
 * of block, at a batch above 1: in the blocked layout, oneDNN copies whole blocks. At
 * batch 1 the slow rate stays, measured again (session 38, AVX2, one thread, per-node
 * times of 20 runs, two rounds): unet_dynbatch's two Concats on whole blocks of 8 (96
 * channels at 64x64, 48 at 128x128; not in place: its batch is symbolic) took
 * 0.76-1.20 and 1.51-2.44 ms blocked (oneDNN's simple:any) against 0.13-0.14 and
 * 0.31-0.32 nhwc, 6-8x; at batch 8 2.63 and 1.08 against 2.67 and 1.18. */
static bool concat_on_blocks(const shape_memo *memo, const gl_node *n, const gl_node *call,
                             const gl_function *fn, int block)
{
    int64_t axis = gl_node_attr_int(n, "axis", 1);
    for (size_t i = 0; i < n->n_inputs; i++) {
        known_shape in;
        if (!shape_of(memo, caller_value(n->inputs[i], call, fn), &in))
            return false;
        int64_t a = axis < 0 ? axis + in.rank : axis;
        if (a != 1 || block <= 0 || in.dims[0] <= 1 || in.dims[1] % block != 0)
            return false;
    }
    return n->n_inputs > 0;
}

/* The shape of Concat n's output from its inputs' (inside a fused group's body, where
 * its own type is often empty): false when one of them is not known. */
static bool concat_shape(const shape_memo *memo, const gl_node *n, const gl_node *call,
                         const gl_function *fn, known_shape *out)
{
    int64_t axis = gl_node_attr_int(n, "axis", 1);
    for (size_t i = 0; i < n->n_inputs; i++) {
        known_shape in;
        if (!shape_of(memo, caller_value(n->inputs[i], call, fn), &in))
            return false;
        if (axis < 0)
            axis += in.rank;
        if (axis < 0 || axis >= in.rank || (i > 0 && in.rank != out->rank))
            return false;
        if (i == 0)
            *out = in;
        else
            out->dims[axis] += in.dims[axis];
    }
    out->v = n->outputs[0];
    return n->n_inputs > 0;
}

/* Is Concat n, in the body of fn, read by a Conv of that body? Then it is fusion rule
 * concat-conv1x1's: dn_catconv.c convolves each of its inputs into one destination and
 * the Concat is never made, in either layout (squeezenet's Fire modules). */
static bool concat_split_by_conv(const gl_node *n, const gl_function *fn)
{
    for (size_t i = 0; fn && i < fn->body->n_nodes; i++) {
        const gl_node *r = fn->body->nodes[i];
        if (r && !*r->domain && strcmp(r->op_type, "Conv") == 0 && r->n_inputs > 0 &&
            r->inputs[0] == n->outputs[0])
            return true;
    }
    return false;
}

static void tally_concat(layout_tally *k, shape_memo *memo, const gl_node *n,
                         const gl_node *call, const gl_function *fn)
{
    const gl_value *v = caller_value(n->outputs[0], call, fn);
    int rank = gl_value_rank(v);
    if (rank != 4 && rank != 5 && rank != GL_RANK_UNKNOWN)
        return;
    bool made = !concat_split_by_conv(n, fn);
    k->concats += made;
    known_shape out;
    if (!shape_of(memo, v, &out) && !concat_shape(memo, n, call, fn, &out))
        return;
    out.v = n->outputs[0];
    memo_add(memo, &out); /* for the convolution reading it */
    if (!made)
        return;
    double bytes = 4.0 * (double)product(out.dims, 0, out.rank);
    k->concat_us[DN_LAYOUT_PLAIN] += bytes / BYTES_PER_US;
    k->concat_us[DN_LAYOUT_NHWC] += bytes / BYTES_PER_US;
    bool whole_blocks = concat_on_blocks(memo, n, call, fn, k->block);
    k->concat_us[DN_LAYOUT_BLOCKED] +=
        bytes / (whole_blocks ? BYTES_PER_US : BLOCKED_CONCAT_BYTES_PER_US);
}

/* BatchNormalization (with its Relu, when fused) reads and writes its activations once:
 * its bytes at the memory bandwidth, times BNORM_NHWC_OVER_BLOCKED in nhwc with oneDNN's
 * AVX-512 kernels (bnorm_jit in both layouts, session 42, per-node minimums, 2 threads:
 * convtranspose_decoder's 4 BN+Relu 0.215 ms nhwc against 0.145 blocked, dbnet_head's 3
 * 0.061 against 0.038). On AVX2 graphlab's kernel runs either layout alike (dn_bnorm.c). */
#define BNORM_NHWC_OVER_BLOCKED 1.5

static void tally_norm(layout_tally *k, shape_memo *memo, const gl_value *x)
{
    known_shape xs;
    if (!shape_of(memo, x, &xs) || xs.rank != 4)
        return;
    double us = 8.0 * (double)product(xs.dims, 0, xs.rank) / BYTES_PER_US;
    k->norms++;
    k->norm_us[DN_LAYOUT_PLAIN] += us;
    k->norm_us[DN_LAYOUT_BLOCKED] += us;
    k->norm_us[DN_LAYOUT_NHWC] += us * (k->avx2 ? 1.0 : BNORM_NHWC_OVER_BLOCKED);
}

/* A MatMul or Gemm of a known A by constant 2-D weights: its FLOPs at the convolutions'
 * rate, for the share of the work the convolutions are (dn_choose_layout). */
static void tally_product(layout_tally *k, shape_memo *memo, const gl_value *a,
                          const gl_value *w)
{
    known_shape as;
    const gl_tensor *t = w ? w->init : NULL;
    if (!t || t->rank != 2 || !shape_of(memo, a, &as) || as.dims[as.rank - 1] <= 0)
        return;
    double n = (double)t->count / (double)as.dims[as.rank - 1]; /* B [K, N] or [N, K] */
    k->product_us += 2.0 * (double)product(as.dims, 0, as.rank) * n / FLOPS_PER_US;
}

/* Count n; `call` is the fused group whose body fn holds n (NULL: the model's graph). */
static void tally_op(layout_tally *k, shape_memo *memo, const gl_node *n, const gl_node *call,
                     const gl_function *fn)
{
    /* graphlab's NhwcConv (the layout pass's; its weights stay OIHW) is a convolution
     * too, inside fused groups as well. */
    bool nhwc_conv = n && is_graphlab_op(n, "NhwcConv");
    if (!n || (!nhwc_conv && *n->domain) || n->n_outputs == 0)
        return;
    const gl_value *x = n->n_inputs ? caller_value(n->inputs[0], call, fn) : NULL;
    if (nhwc_conv || strcmp(n->op_type, "Conv") == 0 ||
        strcmp(n->op_type, "ConvTranspose") == 0) {
        const gl_value *w = n->n_inputs > 1 ? caller_value(n->inputs[1], call, fn) : NULL;
        tally_conv(k, memo, n, x, w, caller_value(n->outputs[0], call, fn), nhwc_conv);
        return;
    }
    if (strcmp(n->op_type, "Concat") == 0) {
        tally_concat(k, memo, n, call, fn);
        return;
    }
    if (strcmp(n->op_type, "BatchNormalization") == 0)
        tally_norm(k, memo, x); /* and its output's shape, below */
    if ((strcmp(n->op_type, "MatMul") == 0 || strcmp(n->op_type, "Gemm") == 0) &&
        n->n_inputs > 1) {
        tally_product(k, memo, x, caller_value(n->inputs[1], call, fn));
        return;
    }
    known_shape s;
    if (call && shape_of(memo, x, &s)) { /* a member after the group's convolution */
        s.v = n->outputs[0];
        memo_add(memo, &s);
    }
}

/* The former rule, for convolutions of unknown shapes. */
static void choose_by_rule(dn_ctx *c, const layout_tally *k)
{
    if (k->concats > 0) {
        c->policy = DN_LAYOUT_NHWC;
        snprintf(c->policy_why, sizeof(c->policy_why),
                 "%zu Concat of activations (slow on blocked layouts in oneDNN 2.6)",
                 k->concats);
    } else if (k->depthwise * 4 >= k->convs) {
        c->policy = DN_LAYOUT_BLOCKED;
        snprintf(c->policy_why, sizeof(c->policy_why), "%zu of %zu convolutions depthwise",
                 k->depthwise, k->convs);
    } else {
        c->policy = DN_LAYOUT_NHWC;
        snprintf(c->policy_why, sizeof(c->policy_why), "%zu convolutions, no Concat", k->convs);
    }
}

void dn_choose_layout(dn_ctx *c, const gl_model *m)
{
    layout_tally k;
    memset(&k, 0, sizeof(k));
    k.no_winograd = c->no_winograd;
    k.block = c->block;
    k.avx2 = c->avx2;
    /* The batch decides: unet_dynbatch (symbolic batch) at batch 8 ran 81 ms blocked
     * against 135 nhwc, one thread, when its batch counted as 1 (its two Concats at the
     * batch-1 rate outweighing the convolutions). */
    shape_memo memo = {NULL, 0, 0, c->batch > 0 ? c->batch : 1};
    const gl_graph *g = m->graph;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        const gl_function *fn = n ? gl_called_function(m, n) : NULL;
        if (!fn)
            tally_op(&k, &memo, n, NULL, NULL);
        for (size_t j = 0; fn && j < fn->body->n_nodes; j++)
            tally_op(&k, &memo, fn->body->nodes[j], n, fn);
    }
    free(memo.items);
    c->by_cost = false;
    if (k.convs == 0) {
        c->policy = DN_LAYOUT_PLAIN;
        snprintf(c->policy_why, sizeof(c->policy_why), "no convolution: activations stay plain");
        return;
    }
    if (k.costed == 0) {
        choose_by_rule(c, &k);
        return;
    }
    /* Concats their producers write in place (dn_concat.c, blocked only) cost nothing:
     * the planned share of them comes off blocked's sum. */
    size_t in_place = k.concats ? dn_places_if_blocked(c, m) : 0;
    if (in_place > k.concats)
        in_place = k.concats;
    if (in_place)
        k.concat_us[DN_LAYOUT_BLOCKED] *= (double)(k.concats - in_place) / (double)k.concats;
    double nhwc = k.us[DN_LAYOUT_NHWC] + k.concat_us[DN_LAYOUT_NHWC] + k.norm_us[DN_LAYOUT_NHWC];
    double blocked =
        k.us[DN_LAYOUT_BLOCKED] + k.concat_us[DN_LAYOUT_BLOCKED] + k.norm_us[DN_LAYOUT_BLOCKED];
    double least = nhwc < blocked ? nhwc : blocked;
    if (k.costed == k.convs && least * PRODUCTS_OVER_CONVS < k.product_us) {
        c->policy = DN_LAYOUT_PLAIN;
        snprintf(c->policy_why, sizeof(c->policy_why),
                 "estimated convolutions %.1f us against products by weights %.1f us: "
                 "activations stay plain",
                 least, k.product_us);
        return;
    }
    c->by_cost = true;
    c->policy = blocked < nhwc ? DN_LAYOUT_BLOCKED : DN_LAYOUT_NHWC;
    char concats[96] = "", norms[80] = "", batch[40] = "";
    if (c->batch > 0) /* only for a symbolic leading dim (gl_inputs_batch) */
        snprintf(batch, sizeof(batch), " at the run's batch %lld", (long long)c->batch);
    if (k.concats)
        snprintf(concats, sizeof(concats), " + %zu Concat (%zu in place if blocked) %.1f us / "
                 "%.1f us", k.concats, in_place, k.concat_us[DN_LAYOUT_NHWC],
                 k.concat_us[DN_LAYOUT_BLOCKED]);
    if (k.norms)
        snprintf(norms, sizeof(norms), " + %zu BatchNormalization %.1f us / %.1f us", k.norms,
                 k.norm_us[DN_LAYOUT_NHWC], k.norm_us[DN_LAYOUT_BLOCKED]);
    snprintf(c->policy_why, sizeof(c->policy_why),
             "estimated nhwc %.1f us vs blocked %.1f us%s: %zu of %zu convolutions costed "
             "(%zu depthwise)%s%s",
             nhwc, blocked, batch, k.costed, k.convs, k.depthwise, concats, norms);
}

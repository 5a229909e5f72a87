/* dn_conv.c — Conv as a oneDNN convolution.
 *
 * Activations in the plan's layout (dn_act_tag; under --layout auto the note says what
 * this convolution weighed in the choice, dn_cost.c): the source left to oneDNN (it picks the
 * plain NCHW source of a first convolution with 3 input channels, the activation layout
 * otherwise), the destination fixed to the activation layout so the next primitive reads
 * it as it is. Weights in the layout oneDNN picks, reordered once when they are
 * constants. A convolution that oneDNN would run on its reference implementation is
 * rebuilt with the source fixed too, then left to our reference kernel, and the plan
 * says so: a Conv on ref:any is not accepted silently.
 *
 * A 3x3 stride-1 convolution on blocked activations takes oneDNN's Winograd algorithm
 * (dn_winograd_fits; the implementation name says jit_wino_4x3 or jit_fp32_wino_2x3):
 * about twice the direct kernel's speed, its results within ~1e-5 relative of them; it
 * gets NaN and infinities wrong, so inputs that may hold them are looked at (dn_special.c).
 * `--set dnnl.winograd=0` keeps the direct kernels.
 *
 * A 1x1 convolution to a few channels (at most a quarter of the block: a segmentation
 * head's classes) whose source arrives blocked runs graphlab's kernel, which writes them
 * plain where oneDNN would pad them to the block (dn_narrow.c).
 *
 * oneDNN runs the first implementation it lists; where a later one was measured faster
 * (kernel_rows: jit_1x1 for nhwc 1x1 convolutions that widen few channels), the build
 * asks for it by name and the plan's note says so.
 *
 * Grouped weights [OC, IC/G, k...] are the same bytes as [G, OC/G, IC/G, k...]; dilation
 * is ONNX's minus one (oneDNN counts the gaps); pads and auto_pad are resolved by
 * ops/window.h, as for the reference kernel.
 *
 * graphlab's NhwcConv (the layout pass's channels-last Conv) is the same primitive with
 * source and destination fixed to nhwc over the plain [N,H,W,C] bytes.
 */
#include "exec/dnnl/dn_opkit.h"
#include "ops/window.h"

#include <stdlib.h>
#include <string.h>

/* The window as the reference kernel resolves it (ops/window.h). */
bool dn_conv_window(const gl_node *n, const char *where, int nsp, const int64_t *in,
                    const int64_t *kernel, dn_conv_geom *g)
{
    gl_window w;
    if (gl_window_read(n, where, nsp, kernel, &w) != GL_OK ||
        gl_window_resolve(&w, in, where, g->out) != GL_OK) {
        gl_error_clear();
        return false;
    }
    for (int d = 0; d < nsp; d++) {
        g->strides[d] = w.stride[d];
        g->dilates[d] = w.dil[d] - 1; /* oneDNN counts the gaps between taps */
        g->pad_l[d] = w.pad_begin[d];
        g->pad_r[d] = w.pad_end[d];
    }
    return true;
}

/* Does oneDNN's implementation name start with prefix ("brgconv_1x1", "jit_1x1")? */
static bool impl_is(const char *name, const char *prefix)
{
    return name && strncmp(name, prefix, strlen(prefix)) == 0;
}

/* The first implementation oneDNN lists for cd under attr whose name starts with
 * `impl`; dnnl_unimplemented when it lists none. */
static dnnl_status_t pd_named(const dnnl_convolution_desc_t *cd,
                              const_dnnl_primitive_attr_t attr, dnnl_engine_t engine,
                              const char *impl, dnnl_primitive_desc_t *pd)
{
    dnnl_primitive_desc_iterator_t it = NULL;
    dnnl_status_t r = dnnl_primitive_desc_iterator_create(&it, cd, attr, engine, NULL);
    *pd = NULL;
    for (dnnl_status_t more = r; more == dnnl_success && !*pd;
         more = dnnl_primitive_desc_iterator_next(it)) {
        dnnl_primitive_desc_t cand = dnnl_primitive_desc_iterator_fetch(it);
        const char *name = NULL;
        if (cand && dnnl_primitive_desc_query(cand, dnnl_query_impl_info_str, 0, &name) ==
                        dnnl_success && impl_is(name, impl))
            *pd = cand;
        else
            dnnl_primitive_desc_destroy(cand);
    }
    dnnl_primitive_desc_iterator_destroy(it);
    return r != dnnl_success ? r : *pd ? dnnl_success : dnnl_unimplemented;
}

/* A convolution primitive descriptor of algorithm alg for source/destination layouts
 * src_tag/dst_tag (dnnl_format_tag_any: oneDNN's choice; undef: plain), on the
 * implementation oneDNN lists first or, given `impl`, on the first one so named. */
static dnnl_status_t conv_pd(dn_build *b, dnnl_alg_kind_t alg, const dn_conv_geom *g,
                             const dnnl_memory_desc_t *wei,
                             const dnnl_memory_desc_t *bias, int rank, const int64_t *in_dims,
                             const int64_t *out_dims, dnnl_format_tag_t src_tag,
                             dnnl_format_tag_t dst_tag, const char *impl,
                             dnnl_primitive_desc_t *pd)
{
    dnnl_memory_desc_t src, dst;
    dnnl_status_t r = src_tag == dnnl_format_tag_undef ? dn_md_plain(&src, rank, in_dims, NULL)
                                                       : dn_md_tag(&src, rank, in_dims, src_tag);
    if (r == dnnl_success)
        r = dst_tag == dnnl_format_tag_undef ? dn_md_plain(&dst, rank, out_dims, NULL)
                                             : dn_md_tag(&dst, rank, out_dims, dst_tag);
    dnnl_convolution_desc_t cd;
    dnnl_primitive_attr_t attr = NULL;
    if (r == dnnl_success)
        r = dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, alg,
                                                       &src, wei, bias,
                                                       &dst, g->strides, g->dilates, g->pad_l,
                                                       g->pad_r);
    if (r == dnnl_success)
        r = dn_build_attr(b, NULL, 0, rank, out_dims, &attr);
    if (r == dnnl_success)
        r = impl ? pd_named(&cd, attr, b->c->engine, impl, pd)
                 : dnnl_primitive_desc_create(pd, &cd, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    return r;
}

/* The convolution as the cost model and the kernel rows see it. */
static dn_conv_dims conv_dims(const dn_build *b, const int64_t *xd, int rank,
                              const int64_t *out_dims, const gl_tensor *w)
{
    dn_conv_dims d = {.n = xd[0], .ic = xd[1], .oc = w->dims[0],
                      .group = gl_node_attr_int(b->k->node, "group", 1), .ksize = 1,
                      .in_spatial = 1, .out_spatial = 1, .avx2 = b->c->avx2};
    for (int i = 2; i < rank; i++) {
        d.ksize *= w->dims[i];
        d.in_spatial *= xd[i];
        d.out_spatial *= out_dims[i];
    }
    return d;
}

/* The plan chose its layout by cost (dn_cost.c): this convolution's share of the
 * decision, in the plan's note. */
static void note_layout_cost(dn_build *b, const dn_conv_dims *d)
{
    dn_set_note(b->c, b->s, "layout cost: nhwc %.1f us vs blocked %.1f us (%s)",
                dn_conv_cost_us(d, DN_LAYOUT_NHWC), dn_conv_cost_us(d, DN_LAYOUT_BLOCKED),
                dn_conv_cost_kind(d));
}

/* ---- kernels oneDNN lists first but runs slower ------------------------------------------ */

/* oneDNN 2.6 takes the first implementation it lists that accepts a convolution; a row
 * here names a later one measured faster for some shapes, taken when oneDNN lists it. */
typedef struct kernel_row {
    dnnl_format_tag_t act;        /* for activations in this layout */
    const char *listed_first;     /* instead of this implementation (a name prefix) */
    const char *take;             /* this one */
    bool (*fits)(const dn_conv_dims *d);
    const char *why;              /* the plan's note */
} kernel_row;

/* A 1x1 convolution that widens few channels at least four times over a large image:
 * MobileNetV2's and EfficientNet's expansions (16 -> 96 at 112x112, 24 -> 144 at 56x56,
 * 32 -> 192 at 28x28). */
static bool expands_few_channels(const dn_conv_dims *d)
{
    return d->ksize == 1 && d->group == 1 && d->ic <= 64 && d->oc >= 4 * d->ic &&
           d->out_spatial >= 28 * 28;
}

static const kernel_row kernel_rows[] = {
    /* Inside mobilenet_v2 (graphlab profile, per-node minimums over 30 runs, 1 thread, nhwc,
     * with their Clip post-op): 16 -> 96 at 112x112 531 us on brgconv_1x1, 388 on
     * jit_1x1; 24 -> 144 at 56x56 204/159 and 208/148; 32 -> 192 at 28x28 77/64, 79/60,
     * 78/60; at 2 threads the units holding them 749/581, 413/337, 298/236 us; batch 8,
     * 1 thread, 24 -> 144 1572/1181 and 32 -> 192 559/434 (16 -> 96 at 112x112 varies
     * 4.2-8.5 ms on either). Alone, on buffers it has just used, brgconv_1x1 is as fast
     * or faster (16 -> 96: 220 against 258 us): the gap is inside models. A 1x1 that
     * narrows (32 -> 16 at 112x112) stays on brgconv_1x1 (133 against 142 us). The
     * expansions of squeezenet1_1 (16 -> 64 at 55x55, 78/62 us), efficientnet_b0 and
     * mobilenet_v3_large gain too or hold. */
    {dnnl_nhwc, "brgconv_1x1", "jit_1x1", expands_few_channels,
     "jit_1x1 over brgconv_1x1 (a 1x1 widening few channels)"},
};

/* The row of a convolution built on pd with activations act, or NULL. */
static const kernel_row *kernel_row_of(const_dnnl_primitive_desc_t pd, dnnl_format_tag_t act,
                                       const dn_conv_dims *d)
{
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
        !impl)
        return NULL;
    for (size_t i = 0; i < GL_ARRAY_LEN(kernel_rows); i++) {
        const kernel_row *r = &kernel_rows[i];
        if (r->act == act && impl_is(impl, r->listed_first) && r->fits(d))
            return r;
    }
    return NULL;
}

/* ---- grouped convolutions widened to the channel block --------------------------------
 *
 * oneDNN 2.6's jit kernels take a grouped convolution on blocked activations only when
 * each group's channels fill whole blocks; ResNeXt-50's first stage has 32 groups of 4
 * channels, and oneDNN ran them as gemm with reorders to plain and back (7.6-16 ms each
 * at one thread, 12% of the model, on AVX2). Merging f = block / 4 neighbouring groups
 * into one, with zero weights from the inputs of one old group to the outputs of
 * another, gives groups of whole blocks: f times the multiplications, on the jit kernel
 * (32 groups of 4 channels, 56x56: 1.5 ms against 7.6). A zero weight times an infinity
 * is NaN where the model has no product at all, so a run whose input holds one takes the
 * reference kernel (dn_guard_specials). */

/* The merge factor for `group` groups of `cpg` input and output channels each: the
 * smallest f with f * cpg a multiple of the block and dividing the groups; 0 when none
 * (or when the groups fill blocks already). */
static int64_t widen_factor(const dn_build *b, int64_t group, int64_t icg, int64_t ocg)
{
    int64_t block = b->c->block;
    if (group < 2 || icg != ocg || icg % block == 0 || block % icg != 0)
        return 0;
    int64_t f = block / icg;
    return group % f == 0 ? f : 0;
}

/* Weights [G*OCg, ICg, k...] as [G/f, f*OCg, f*ICg, k...] (plain goihw): new group q's
 * output o (old group q*f + o / OCg) reads its own old group's inputs, zero elsewhere. */
static float *widen_weights(const gl_tensor *w, int64_t group, int64_t f)
{
    int64_t ocg = w->dims[0] / group, icg = w->dims[1], taps = 1;
    for (int d = 2; d < w->rank; d++)
        taps *= w->dims[d];
    int64_t wicg = f * icg;
    float *out = gl_xcalloc((size_t)(w->dims[0] * wicg * taps), sizeof(float));
    const float *in = gl_tensor_data(w);
    for (int64_t oc = 0; oc < w->dims[0]; oc++) {
        int64_t slot = (oc / ocg) % f; /* the old group's place in its new one */
        for (int64_t ic = 0; ic < icg; ic++)
            memcpy(out + (oc * wicg + slot * icg + ic) * taps, in + (oc * icg + ic) * taps,
                   (size_t)taps * sizeof(float));
    }
    return out;
}

/* A jit pd of the convolution with groups merged by f (on the plan's blocked layout),
 * or NULL; *wmd its weights' plain description. */
static dnnl_primitive_desc_t widened_pd(dn_build *b, const dn_conv_geom *g,
                                        const dnnl_memory_desc_t *bias, int rank,
                                        const int64_t *xd, const int64_t *out_dims,
                                        const gl_tensor *w, int64_t group, int64_t f,
                                        dnnl_memory_desc_t *wmd)
{
    int64_t wd[DN_CONV_MAX_SP + 3] = {group / f, f * (w->dims[0] / group), f * w->dims[1]};
    memcpy(wd + 3, w->dims + 2, (size_t)(w->rank - 2) * sizeof(int64_t));
    dnnl_memory_desc_t wany;
    dnnl_format_tag_t act = dn_act_tag(b->c, rank);
    dnnl_primitive_desc_t pd = NULL;
    if (dn_md_plain(wmd, w->rank + 1, wd, NULL) != dnnl_success ||
        dn_md_tag(&wany, w->rank + 1, wd, dnnl_format_tag_any) != dnnl_success ||
        conv_pd(b, dnnl_convolution_direct, g, &wany, bias, rank, xd, out_dims, act, act, NULL,
                &pd) != dnnl_success)
        return NULL;
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    if (!impl || strstr(impl, "jit") != impl || dn_pd_is_ref(pd)) { /* gemm or ref: no gain */
        dnnl_primitive_desc_destroy(pd);
        return NULL;
    }
    return pd;
}

/* Binds the widened convolution: its weights made once from the constant input 1 into
 * an own buffer in the pd's layout. */
static gl_status bind_widened(dn_build *b, dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *wmd,
                              const gl_tensor *w, int64_t group, int64_t f, bool bias, int rank,
                              const int64_t *out_dims)
{
    const dnnl_memory_desc_t *want = dn_pd_md(pd, dnnl_query_weights_md, 0);
    dn_bind_input(b, DNNL_ARG_SRC, 0, dn_pd_md(pd, dnnl_query_src_md, 0));
    void *own = dn_bind_own(b, DNNL_ARG_WEIGHTS, want);
    if (bias)
        dn_bind_input(b, DNNL_ARG_BIAS, 2, NULL);
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(pd, dnnl_query_dst_md, 0), rank, out_dims);
    float *plain = widen_weights(w, group, f);
    dnnl_memory_t from = NULL, to = NULL;
    dnnl_status_t r = dnnl_memory_create(&from, wmd, b->c->engine, plain);
    if (r == dnnl_success)
        r = dnnl_memory_create(&to, want, b->c->engine, own);
    if (r == dnnl_success)
        r = dn_reorder_once(b->c, wmd, from, want, to);
    dnnl_memory_destroy(from);
    dnnl_memory_destroy(to);
    free(plain);
    return r == dnnl_success ? GL_OK : dn_fail(b->k->where, "widened weights reorder", r);
}

/* Conv, or graphlab's NhwcConv when `nhwc`: the same convolution over X[N,H,W,C] held
 * plain, which is oneDNN's nhwc: source and destination fixed to it, so the node reads
 * and writes plain tensors and nothing around it converts. */
static gl_status conv_build_as(dn_build *b, dnnl_primitive_desc_t *pd, bool nhwc)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = dn_f32_input(k, 0), *w = dn_f32_input(k, 1);
    const gl_tensor *bias = k->n_inputs > 2 ? k->in[2] : NULL;
    if (!x || !w || (bias && bias->dtype != GL_DT_FLOAT))
        return dn_refuse(b, "not float32");
    int nsp = x->rank - 2;
    if (nsp < 1 || nsp > DN_CONV_MAX_SP || w->rank != x->rank || (nhwc && x->rank != 4))
        return dn_refuse(b, "rank %d", x->rank);
    if (x->count == 0 || w->count == 0)
        return dn_refuse(b, "empty tensor");
    int64_t xd[DN_CONV_MAX_SP + 2]; /* X's logical NC... dims */
    if (nhwc)
        dn_nhwc_dims(x->dims, xd);
    else
        memcpy(xd, x->dims, (size_t)x->rank * sizeof(int64_t));
    int64_t group = gl_node_attr_int(k->node, "group", 1), oc = w->dims[0];
    if (group < 1 || group > xd[1] || w->dims[1] * group != xd[1] || oc % group != 0)
        return dn_refuse(b, "group %lld does not divide the channels", (long long)group);
    if (bias && (bias->rank != 1 || bias->dims[0] != oc))
        return dn_refuse(b, "bias is not [%lld]", (long long)oc);
    if (w->layout || (bias && bias->layout))
        return dn_refuse(b, "weights in a oneDNN layout");
    dn_conv_geom g;
    if (!dn_conv_window(k->node, k->where, nsp, xd + 2, w->dims + 2, &g))
        return dn_refuse(b, "window attributes the oneDNN path does not handle");
    int64_t out_dims[DN_CONV_MAX_SP + 2] = {xd[0], oc};
    memcpy(out_dims + 2, g.out, (size_t)nsp * sizeof(int64_t));

    /* Weights: the given bytes (grouped: with the group dim split off), oneDNN's layout. */
    int64_t wdims[DN_CONV_MAX_SP + 3] = {group, oc / group};
    memcpy(wdims + 2, w->dims + 1, (size_t)(w->rank - 1) * sizeof(int64_t));
    int wrank = group == 1 ? w->rank : w->rank + 1;
    const int64_t *wd = group == 1 ? w->dims : wdims;
    dnnl_memory_desc_t wgiven, wany, bmd;
    if (dn_md_plain(&wgiven, wrank, wd, NULL) != dnnl_success ||
        dn_md_tag(&wany, wrank, wd, dnnl_format_tag_any) != dnnl_success ||
        (bias && dn_md_plain(&bmd, 1, &oc, NULL) != dnnl_success))
        return dn_refuse(b, "shapes oneDNN does not describe");

    /* Layouts to try, best first. */
    dnnl_format_tag_t act = nhwc ? dnnl_nhwc : dn_act_tag(b->c, x->rank);
    struct { dnnl_format_tag_t src, dst; } tries[3] = {
        {dnnl_format_tag_any, act}, {act, act}, {dnnl_format_tag_any, dnnl_format_tag_any}};
    size_t n_tries = 3;
    if (nhwc) {
        tries[0].src = dnnl_nhwc; /* the bytes are what they are */
        n_tries = 1;
    } else if (act == dnnl_format_tag_undef) {
        tries[0].src = tries[0].dst = dnnl_format_tag_undef;
        n_tries = 1;
    }
    dnnl_status_t r = dnnl_unimplemented;
    /* Winograd first where it pays (dn_winograd_fits): oneDNN 2.6 has it on blocked
     * activations only, and not with every post-op; without it, the direct tries. */
    bool dilated = false;
    for (int d = 0; d < nsp; d++)
        dilated |= g.dilates[d] != 0;
    if (!nhwc && b->c->policy == DN_LAYOUT_BLOCKED && !b->c->no_winograd &&
        dn_winograd_fits(nsp, w->dims + 2, g.strides, dilated, group, xd[1], oc)) {
        r = conv_pd(b, dnnl_convolution_winograd, &g, &wany, bias ? &bmd : NULL, x->rank, xd,
                    out_dims, act, act, NULL, pd);
        if (r == dnnl_success && !dn_pd_is_ref(*pd)) {
            n_tries = 0;
            /* Its transforms mix a tile's inputs: an infinity becomes NaN (Inf - Inf) and a
             * NaN spreads past its window, so a run whose input holds one takes the
             * reference kernel (dn_special.c). */
            gl_status st = dn_guard_specials(b, true);
            if (st != GL_OK) {
                dnnl_primitive_desc_destroy(*pd);
                *pd = NULL;
                return st;
            }
        }
    }
    for (size_t i = 0; i < n_tries; i++) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        r = conv_pd(b, dnnl_convolution_direct, &g, &wany, bias ? &bmd : NULL, x->rank, xd,
                    out_dims, tries[i].src, tries[i].dst, NULL, pd);
        if (r == dnnl_success && !dn_pd_is_ref(*pd))
            break;
    }
    /* groups of less than a block: merged to whole blocks when that brings a jit kernel
     * where oneDNN would run gemm (or its reference code) */
    int64_t widen = nhwc || !dn_input_constant(k, 1) ? 0 : widen_factor(b, group, w->dims[1],
                                                                          oc / group);
    const char *impl = NULL;
    if (widen && r == dnnl_success)
        dnnl_primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &impl);
    dnnl_memory_desc_t widened_wmd;
    dnnl_primitive_desc_t widened =
        widen && (r != dnnl_success || dn_pd_is_ref(*pd) || (impl && strstr(impl, "gemm")))
            ? widened_pd(b, &g, bias ? &bmd : NULL, x->rank, xd, out_dims, w, group, widen,
                         &widened_wmd)
            : NULL;
    if (widened) {
        gl_status st = dn_guard_specials(b, true);
        if (st == GL_OK)
            dn_set_note(b->c, b->s, "%lld groups of %lld channels as %lld of %lld (zeros "
                        "across them): jit, not %s", (long long)group, (long long)w->dims[1],
                        (long long)(group / widen), (long long)(w->dims[1] * widen),
                        impl ? impl : "ref");
        dnnl_primitive_desc_destroy(*pd);
        *pd = widened;
        return st != GL_OK ? st
                           : bind_widened(b, *pd, &widened_wmd, w, group, widen, bias != NULL,
                                          x->rank, out_dims);
    }
    if (r != dnnl_success) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        return dn_refuse(b, "oneDNN has no convolution for this configuration");
    }
    if (dn_pd_is_ref(*pd) && act != dnnl_format_tag_undef) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        return dn_refuse(b, "oneDNN would run its reference convolution (ref:any)");
    }
    dn_conv_dims d = conv_dims(b, xd, x->rank, out_dims, w);
    if (b->c->by_cost && !b->s->note[0])
        note_layout_cost(b, &d);
    /* A 1x1 to a few channels from blocked activations: written plain, not padded to
     * the block, by graphlab's kernel (dn_narrow.c) */
    dnnl_format_tag_t narrow_src = nhwc ? dnnl_format_tag_undef
                                        : dn_narrow_source(b, &b->md[0], x->rank, xd, out_dims,
                                                           w->dims + 2, &g, group);
    if (narrow_src != dnnl_format_tag_undef) {
        dnnl_primitive_desc_t narrow = NULL;
        if (conv_pd(b, dnnl_convolution_direct, &g, &wgiven, bias ? &bmd : NULL, x->rank, xd,
                    out_dims, narrow_src, dnnl_format_tag_undef, NULL, &narrow) ==
                dnnl_success &&
            dn_narrow_take(b, narrow, xd, out_dims)) {
            dnnl_primitive_desc_destroy(*pd);
            *pd = narrow;
            dn_bind_input(b, DNNL_ARG_SRC, 0, dn_pd_md(*pd, dnnl_query_src_md, 0));
            dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), x->rank,
                           out_dims);
            return GL_OK;
        }
        dnnl_primitive_desc_destroy(narrow);
    }
    const kernel_row *row = kernel_row_of(*pd, act, &d);
    dnnl_primitive_desc_t taken = NULL;
    /* the row's kernel wants its source fixed: with "any", oneDNN 2.6 does not list it */
    if (row && conv_pd(b, dnnl_convolution_direct, &g, &wany, bias ? &bmd : NULL, x->rank, xd,
                       out_dims, act, act, row->take, &taken) == dnnl_success) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = taken;
        const char *before = b->s->note; /* interned: read before the new one is made */
        dn_set_note(b->c, b->s, "%s%s%s", before, before[0] ? "; " : "", row->why);
    }
    /* graphlab's Winograd kernel packs the weights itself and reads only the source: the
     * primitive's copy of them would be held for nothing (70 MB in resnet18) */
    gl_status st = nsp == 2 && !row ? dn_wino_take(b, *pd, xd, out_dims, &g) : GL_OK;
    if (st != GL_OK)
        return st;
    bool own = b->s->native != NULL;
    if (!nhwc && !own) {
        dn_bind_weighted(b, *pd, &wgiven, bias != NULL, x->rank, out_dims);
        return GL_OK;
    }
    if (!nhwc) {
        dn_bind_input(b, DNNL_ARG_SRC, 0, dn_pd_md(*pd, dnnl_query_src_md, 0));
        dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), x->rank,
                       out_dims);
        return GL_OK;
    }
    int64_t y_nhwc[4] = {out_dims[0], out_dims[2], out_dims[3], out_dims[1]};
    dn_bind_input_view(b, DNNL_ARG_SRC, 0, dn_pd_md(*pd, dnnl_query_src_md, 0));
    if (!own)
        dn_bind_input_from(b, DNNL_ARG_WEIGHTS, 1, &wgiven,
                           dn_pd_md(*pd, dnnl_query_weights_md, 0));
    if (bias && !own)
        dn_bind_input(b, DNNL_ARG_BIAS, 2, NULL);
    dn_bind_output_nhwc(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), y_nhwc);
    return GL_OK;
}

static gl_status conv_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    return conv_build_as(b, pd, false);
}

static gl_status nhwc_conv_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    return conv_build_as(b, pd, true);
}

static bool conv_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 3, 2 + DN_CONV_MAX_SP) ||
        !dn_input_fits(n, 1, 3, 2 + DN_CONV_MAX_SP)) {
        snprintf(why, len, "not a float32 1-D, 2-D or 3-D convolution");
        return false;
    }
    return true;
}

static bool nhwc_conv_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits(n, 0, 4, 4) || !dn_input_fits(n, 1, 4, 4)) {
        snprintf(why, len, "not a float32 2-D convolution");
        return false;
    }
    return true;
}

static const dn_op conv_ops[] = {
    {"", "Conv", 1, conv_claim, conv_build, NULL},
    {"graphlab", "NhwcConv", 1, nhwc_conv_claim, nhwc_conv_build, NULL},
};
const dn_op_table dn_conv_ops = {conv_ops, GL_ARRAY_LEN(conv_ops)};

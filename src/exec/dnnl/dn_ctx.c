/* dn_ctx.c — the oneDNN backend's context per plan: engine and stream, threads, the
 * activation layout policy, interned layouts, descriptor helpers, and the conversion of
 * a tensor in one of our layouts back to plain row-major.
 *
 * The layout policy (measured on oneDNN 2.6, see STACK.md): convolutions only reach
 * oneDNN's direct kernels (jit/brgemm) when activations are not plain NCHW, and fusion
 * only pays once tensors stay in oneDNN's layout between primitives. Between nhwc and
 * the blocked nChw16c (nChw8c on AVX2), `--layout auto` takes the one of smaller
 * estimated cost (dn_cost.c), a Concat written in place by its producers (dn_concat.c:
 * DenseNet; only blocked allows it) costing nothing; `--layout` forces one; the plan's
 * header says which it is and why.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */

#include "exec/dnnl/dn.h"

#include <dlfcn.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>

gl_status dn_fail(const char *where, const char *call, dnnl_status_t s)
{
    gl_status st = s == dnnl_out_of_memory    ? GL_ERR_NOMEM
                   : s == dnnl_unimplemented ? GL_ERR_UNSUPPORTED
                                             : GL_ERR_INTERNAL;
    return gl_fail(st, "%s: oneDNN %s failed: %s", where, call, dnnl_status2str(s));
}

/* ---- descriptors -------------------------------------------------------------------- */

dnnl_status_t dn_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                          const int64_t *strides)
{
    dnnl_dims_t d, s;
    int64_t acc = 1;
    if (rank > DNNL_MAX_NDIMS)
        return dnnl_unimplemented;
    if (rank == 0) { /* oneDNN has no rank 0: a scalar is one element of rank 1 */
        d[0] = 1;
        s[0] = 1;
        return dnnl_memory_desc_init_by_strides(md, 1, d, dnnl_f32, s);
    }
    for (int i = rank - 1; i >= 0; i--) {
        d[i] = dims[i];
        s[i] = strides ? strides[i] : acc;
        acc *= dims[i] > 0 ? dims[i] : 1;
    }
    return dnnl_memory_desc_init_by_strides(md, rank, d, dnnl_f32, s);
}

dnnl_status_t dn_md_tag(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                        dnnl_format_tag_t tag)
{
    dnnl_dims_t d;
    if (rank < 1 || rank > DNNL_MAX_NDIMS)
        return dnnl_unimplemented;
    for (int i = 0; i < rank; i++)
        d[i] = dims[i];
    return dnnl_memory_desc_init_by_tag(md, rank, d, dnnl_f32, tag);
}

/* Which of tags[0..n) md is, over the 4-D dims (dn_md_tag's descriptor), or -1. */
static int md_tag_index(const dnnl_memory_desc_t *md, const int64_t *dims,
                        const dnnl_format_tag_t *tags, size_t n)
{
    for (size_t t = 0; t < n; t++) {
        dnnl_memory_desc_t a;
        if (dn_md_tag(&a, 4, dims, tags[t]) == dnnl_success && dnnl_memory_desc_equal(md, &a))
            return (int)t;
    }
    return -1;
}

static const dnnl_format_tag_t own_tags[] = {[DN_OWN_NCHW8C] = dnnl_nChw8c,
                                             [DN_OWN_NHWC] = dnnl_nhwc,
                                             [DN_OWN_NCHW16C] = dnnl_nChw16c};
static const char *const own_names[] = {[DN_OWN_NCHW8C] = "nChw8c", [DN_OWN_NHWC] = "nhwc",
                                        [DN_OWN_NCHW16C] = "nChw16c"};

dn_own_layout dn_md_own_layout(const dnnl_memory_desc_t *md, const int64_t *dims, bool wide)
{
    return (dn_own_layout)md_tag_index(md, dims, own_tags, wide ? 3 : 2);
}

dn_own_layout dn_pd_own_layout(const_dnnl_primitive_desc_t pd, const int64_t *xd,
                               const int64_t *yd, bool wide)
{
    dn_own_layout l = dn_md_own_layout(dn_pd_md(pd, dnnl_query_src_md, 0), xd, wide);
    return l != DN_OWN_NONE && dn_md_own_layout(dn_pd_md(pd, dnnl_query_dst_md, 0), yd, wide) == l
               ? l
               : DN_OWN_NONE;
}

dnnl_format_tag_t dn_own_layout_tag(dn_own_layout l)
{
    return own_tags[l];
}

int dn_own_layout_lanes(dn_own_layout l)
{
    return l == DN_OWN_NCHW8C ? 8 : l == DN_OWN_NCHW16C ? 16 : 0;
}

const char *dn_own_layout_name(dn_own_layout l)
{
    return own_names[l];
}

bool dn_md_is_plain(const dnnl_memory_desc_t *md)
{
    if (md->format_kind != dnnl_blocked || md->format_desc.blocking.inner_nblks != 0 ||
        md->offset0 != 0)
        return false;
    int64_t acc = 1;
    for (int i = md->ndims - 1; i >= 0; i--) {
        if (md->padded_dims[i] != md->dims[i])
            return false;
        if (md->dims[i] != 1 && md->format_desc.blocking.strides[i] != acc)
            return false;
        acc *= md->dims[i];
    }
    return true;
}

/* The dims of md from outermost to innermost stride, as letters (a = dim 0), upper case
 * when the dim is also blocked: nchw -> "abcd", nhwc -> "acdb", nChw16c -> "aBcd16b". */
static void md_letters(const dnnl_memory_desc_t *md, char *buf, size_t len)
{
    int order[DNNL_MAX_NDIMS], n = md->ndims;
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++) /* insertion sort by stride, largest first, stable */
        for (int j = i; j > 0 && b->strides[order[j]] > b->strides[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t k = 0;
    for (int i = 0; i < n && k + 1 < len; i++) {
        bool blocked = false;
        for (int j = 0; j < b->inner_nblks; j++)
            blocked |= b->inner_idxs[j] == order[i];
        buf[k++] = (char)((blocked ? 'A' : 'a') + order[i]);
    }
    for (int j = 0; j < b->inner_nblks && k + 8 < len; j++)
        k += (size_t)snprintf(buf + k, len - k, "%lld%c", (long long)b->inner_blks[j],
                              'a' + (int)b->inner_idxs[j]);
    buf[k < len ? k : len - 1] = '\0';
}

void dn_md_name(const dnnl_memory_desc_t *md, char *buf, size_t len)
{
    if (md->format_kind == dnnl_format_kind_any) {
        snprintf(buf, len, "any");
        return;
    }
    if (md->format_kind != dnnl_blocked) {
        snprintf(buf, len, "opaque");
        return;
    }
    if (dn_md_is_plain(md)) {
        snprintf(buf, len, "plain");
        return;
    }
    char letters[48];
    md_letters(md, letters, sizeof(letters));
    /* The activation layouts by the names people know them by. */
    static const struct {
        const char *letters, *name;
    } known[] = {
        {"acb", "nwc"},          {"acdb", "nhwc"},          {"acdeb", "ndhwc"},
        {"aBc8b", "nCw8c"},      {"aBcd8b", "nChw8c"},      {"aBcde8b", "nCdhw8c"},
        {"aBc16b", "nCw16c"},    {"aBcd16b", "nChw16c"},    {"aBcde16b", "nCdhw16c"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(known); i++)
        if (strcmp(letters, known[i].letters) == 0) {
            snprintf(buf, len, "%s", known[i].name);
            return;
        }
    snprintf(buf, len, "%s", letters);
}

dnnl_data_type_t dn_dtype(gl_dtype dt)
{
    switch (dt) {
    case GL_DT_FLOAT: return dnnl_f32;
    case GL_DT_UINT8: return dnnl_u8;
    case GL_DT_INT8: return dnnl_s8;
    case GL_DT_INT32: return dnnl_s32;
    default: return dnnl_data_type_undef;
    }
}

gl_dtype dn_gl_dtype(dnnl_data_type_t dt)
{
    switch (dt) {
    case dnnl_u8: return GL_DT_UINT8;
    case dnnl_s8: return GL_DT_INT8;
    case dnnl_s32: return GL_DT_INT32;
    default: return GL_DT_FLOAT;
    }
}

dnnl_status_t dn_md_retype(dnnl_memory_desc_t *md, gl_dtype dt)
{
    /* A 2.x descriptor counts strides in elements: only the element type changes. */
    dnnl_data_type_t d = dn_dtype(dt);
    if (d == dnnl_data_type_undef)
        return dnnl_unimplemented;
    md->data_type = d;
    return dnnl_success;
}

dnnl_status_t dn_md_of(const gl_tensor *t, dnnl_memory_desc_t *md)
{
    if (t->layout) {
        *md = ((const dn_layout *)t->layout)->md;
        return dnnl_success;
    }
    dnnl_status_t r = dn_md_plain(md, t->rank, t->dims, NULL);
    return r == dnnl_success && t->dtype != GL_DT_FLOAT ? dn_md_retype(md, t->dtype) : r;
}

const gl_tensor_layout *dn_layout_of(dn_ctx *c, const dnnl_memory_desc_t *md)
{
    if (dn_md_is_plain(md))
        return NULL;
    for (dn_layout *l = c->layouts; l; l = l->next)
        if (dnnl_memory_desc_equal(&l->md, md))
            return &l->base;
    dn_layout *l = gl_xcalloc(1, sizeof(*l));
    l->md = *md;
    dn_md_name(md, l->name, sizeof(l->name));
    l->base.owner = gl_backend_dnnl();
    l->base.name = l->name;
    l->next = c->layouts;
    c->layouts = l;
    return &l->base;
}

dnnl_format_tag_t dn_act_tag(const dn_ctx *c, int rank)
{
    if (c->policy == DN_LAYOUT_PLAIN || rank < 3 || rank > 5)
        return dnnl_format_tag_undef;
    static const dnnl_format_tag_t nhwc[] = {dnnl_nwc, dnnl_nhwc, dnnl_ndhwc};
    static const dnnl_format_tag_t b16[] = {dnnl_nCw16c, dnnl_nChw16c, dnnl_nCdhw16c};
    static const dnnl_format_tag_t b8[] = {dnnl_nCw8c, dnnl_nChw8c, dnnl_nCdhw8c};
    if (c->policy == DN_LAYOUT_NHWC)
        return nhwc[rank - 3];
    return c->block == 16 ? b16[rank - 3] : b8[rank - 3];
}

/* ---- converting back to plain --------------------------------------------------------- */

/* The layout's reorder to plain (made once per layout and plan). */
static dnnl_status_t plain_reorder(dn_ctx *c, dn_layout *l, const char **call)
{
    if (l->to_plain)
        return dnnl_success;
    dnnl_memory_desc_t plain;
    dnnl_primitive_desc_t pd = NULL;
    *call = "dnnl_memory_desc_init_by_strides";
    dnnl_status_t r = dn_md_plain(&plain, l->md.ndims, l->md.dims, NULL);
    plain.data_type = l->md.data_type; /* an int8 activation stays int8 */
    if (r == dnnl_success && (*call = "dnnl_reorder_primitive_desc_create"))
        r = dnnl_reorder_primitive_desc_create(&pd, &l->md, c->engine, &plain, c->engine, NULL);
    if (r == dnnl_success && (*call = "dnnl_primitive_create"))
        r = dnnl_primitive_create(&l->to_plain, pd);
    dnnl_primitive_desc_destroy(pd);
    if (r == dnnl_success && (*call = "dnnl_memory_create"))
        r = dnnl_memory_create(&l->from, &l->md, c->engine, DNNL_MEMORY_NONE);
    if (r == dnnl_success)
        r = dnnl_memory_create(&l->to, &plain, c->engine, DNNL_MEMORY_NONE);
    return r;
}

gl_tensor *dn_to_plain(void *ctx, const gl_tensor *t, gl_buffer_slot *slot)
{
    dn_ctx *c = ctx;
    dn_layout *l = (dn_layout *)t->layout;
    if (!c) {
        gl_fail(GL_ERR_INTERNAL, "a oneDNN tensor outside its plan");
        return NULL;
    }
    size_t bytes = (size_t)t->count * gl_dtype_size(t->dtype);
    gl_buffer *buf = slot ? gl_buffer_from_slot(slot, bytes, false) : NULL;
    if (!slot) {
        void *data = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
        buf = data ? gl_buffer_new_heap(data, bytes) : NULL;
    }
    if (!buf) {
        gl_fail(GL_ERR_NOMEM, "cannot allocate %zu bytes to convert a tensor to plain", bytes);
        return NULL;
    }
    gl_tensor *p = gl_tensor_wrap(t->dtype, t->rank, t->dims, t->count, buf);
    const char *call = "";
    dnnl_status_t r = plain_reorder(c, l, &call);
    if (r == dnnl_success && (call = "dnnl_memory_set_data_handle"))
        r = dnnl_memory_set_data_handle(l->from, t->buf ? t->buf->data : NULL);
    if (r == dnnl_success)
        r = dnnl_memory_set_data_handle(l->to, buf->data);
    if (r == dnnl_success && (call = "dnnl_primitive_execute")) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, l->from}, {DNNL_ARG_TO, l->to}};
        r = dnnl_primitive_execute(l->to_plain, c->stream, 2, args);
    }
    if (r == dnnl_success && (call = "dnnl_stream_wait"))
        r = dnnl_stream_wait(c->stream);
    if (r != dnnl_success) {
        dn_fail("converting a tensor to plain layout", call, r);
        gl_tensor_free(p);
        return NULL;
    }
    return p;
}

/* ---- the context ------------------------------------------------------------------------ */

/* libgomp comes in through libdnnl, not our link line: its entry points are found with
 * dlsym (a function pointer through dlsym: POSIX guarantees the conversion works). */
static void *omp_symbol(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

void dn_ctx_threads(dn_ctx *c, int n)
{
    if (c->set_threads && c->max_threads > 1)
        c->set_threads(n > 0 ? n : c->max_threads);
}

void dn_parallel_for(int64_t n, int max_threads, dn_range_fn *fn, void *arg)
{
#ifdef _OPENMP
    int threads = omp_get_max_threads(); /* omp_set_num_threads': the node's count */
    if (max_threads > 0 && threads > max_threads)
        threads = max_threads;
    if (threads > n)
        threads = (int)n;
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
        {
            int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
            if (lo < hi)
                fn(arg, lo, hi, (int)t);
        }
        return;
    }
#endif
    (void)max_threads;
    if (n > 0)
        fn(arg, 0, n, 0);
}

/* The channel block of oneDNN's blocked activations on this CPU: 16 floats (one
 * AVX-512 register) where its avx512_core kernels run, else 8 (AVX2). Asking a
 * convolution with every layout left `any` does not tell: on avx512_core oneDNN 2.6
 * prefers its brgemm kernels on nhwc then. */
static int probe_block(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core ? 16 : 8;
}

/* Plan the Concats written in place (dn_concat.c) as if the activations were blocked:
 * only there is a channel slice a dense tensor of its own. How many. */
size_t dn_places_if_blocked(dn_ctx *c, const gl_model *m)
{
    dn_policy was = c->policy;
    c->policy = DN_LAYOUT_BLOCKED;
    dn_places_free(c);
    size_t n = dn_places_plan(c, m);
    c->policy = was;
    return n;
}

gl_status dn_ctx_create(const gl_model *m, const gl_exec_options *o, void **out)
{
    *out = NULL;
    const char *layout = o && o->layout ? o->layout : "auto";
    dn_ctx *c = gl_xcalloc(1, sizeof(*c));
    c->block = probe_block(); /* before the policy: in-place Concats need it */
    c->avx2 = c->block != 16;
    c->has_avx2 = (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2;
    /* Before the policy: the cost counts it. oneDNN 2.6's Winograd kernels are AVX-512
     * ones (jit_avx512_core_fp32_wino_conv_*): on AVX2 the layout cost must not expect
     * them, nor the build ask for them. */
    c->no_own_winograd = o && o->dnnl_no_winograd;
    c->no_winograd = c->no_own_winograd || c->avx2;
    c->weights_in_place = o && o->dnnl_weights_in_place;
    c->batch = o && o->batch > 0 ? o->batch : 0; /* before the policy: the cost counts it */
    if (strcmp(layout, "auto") == 0) {
        dn_choose_layout(c, m);
    } else if (strcmp(layout, "plain") == 0 || strcmp(layout, "nchw") == 0) {
        c->policy = DN_LAYOUT_PLAIN;
    } else if (strcmp(layout, "nhwc") == 0) {
        c->policy = DN_LAYOUT_NHWC;
    } else if (strcmp(layout, "blocked") == 0) {
        c->policy = DN_LAYOUT_BLOCKED;
    } else {
        free(c);
        return gl_fail(GL_ERR_INPUT, "unknown layout '%s' (auto, plain, nhwc, blocked)", layout);
    }
    if (strcmp(layout, "auto") != 0)
        snprintf(c->policy_why, sizeof(c->policy_why), "as asked (--layout %s)", layout);
    /* Threads before anything is built: oneDNN sizes scratchpads per thread. */
    c->threads = o ? o->threads : 0;
    *(void **)&c->set_threads = omp_symbol("omp_set_num_threads");
    int (*get_max)(void) = NULL;
    *(void **)&get_max = omp_symbol("omp_get_max_threads");
    if (c->set_threads && c->threads > 0)
        c->set_threads(c->threads);
    c->max_threads = get_max ? get_max() : 1;
    dnnl_status_t r = dnnl_engine_create(&c->engine, dnnl_cpu, 0);
    if (r != dnnl_success) {
        dn_places_free(c);
        free(c);
        return dn_fail("oneDNN backend", "dnnl_engine_create", r);
    }
    r = dnnl_stream_create(&c->stream, c->engine, dnnl_stream_default_flags);
    if (r != dnnl_success) {
        dnnl_engine_destroy(c->engine);
        dn_places_free(c);
        free(c);
        return dn_fail("oneDNN backend", "dnnl_stream_create", r);
    }
    if (!c->places)
        dn_places_if_blocked(c, m);
    if (c->policy != DN_LAYOUT_BLOCKED) /* nhwc: oneDNN 2.6's reference convolutions */
        dn_places_disable(c, "activations not blocked: a channel slice would be strided rows");
    if (o && o->dnnl_fault)
        c->fault = gl_xstrdup(o->dnnl_fault);
    if (o && o->dnnl_delay) {
        c->delay = gl_xstrdup(o->dnnl_delay);
        char *at = strrchr(c->delay, '@'), *end = NULL;
        long n = at ? strtol(at + 1, &end, 10) : 0;
        if (at && end != at + 1 && !*end && n > 0) {
            *at = '\0';
            c->delay_plans = n;
        }
    }
    *out = c;
    return GL_OK;
}

gl_buffer *dn_unit_scratch_lend(dn_ctx *c, size_t pos, size_t bytes)
{
    if (pos >= DN_UNIT_SCRATCH)
        return NULL;
    gl_buffer *p = c->unit_scratch[pos];
    if (p && __atomic_load_n(&p->refs, __ATOMIC_ACQUIRE) > 1)
        return NULL; /* a view of it is still out */
    if (!p || p->size < bytes) {
        void *data = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
        if (!data)
            return NULL;
        gl_buffer_unref(p);
        p = c->unit_scratch[pos] = gl_buffer_new_heap(data, bytes);
    }
    return gl_buffer_new_view(p, p->data, bytes);
}

void dn_unit_scratch_scratch(const dn_ctx *c, gl_scratch_fn fn, void *arg)
{
    for (size_t i = 0; i < DN_UNIT_SCRATCH; i++) {
        const gl_buffer *p = c->unit_scratch[i];
        if (p && __atomic_load_n(&p->refs, __ATOMIC_ACQUIRE) == 1)
            fn(arg, p->data, p->size);
    }
}

void dn_ctx_free(void *ctx)
{
    dn_ctx *c = ctx;
    if (!c)
        return;
    for (dn_layout *l = c->layouts, *next; l; l = next) {
        next = l->next;
        dnnl_primitive_destroy(l->to_plain);
        dnnl_memory_destroy(l->from);
        dnnl_memory_destroy(l->to);
        free(l);
    }
    dnnl_stream_destroy(c->stream);
    dnnl_engine_destroy(c->engine);
    dn_vouched_free(&c->vouched);
    dn_places_free(c);
    for (size_t i = 0; i < DN_UNIT_SCRATCH; i++)
        gl_buffer_unref(c->unit_scratch[i]);
    gl_text_pool_free(&c->texts);
    free(c->fault);
    free(c->delay);
    free(c);
}

void dn_ctx_summary(const void *ctx, char *buf, size_t len)
{
    const dn_ctx *c = ctx;
    static const char *names[] = {"plain", "nhwc", "blocked"};
    int k;
    if (c->policy == DN_LAYOUT_BLOCKED)
        k = snprintf(buf, len, "oneDNN activations: nChw%dc (%s)", c->block, c->policy_why);
    else
        k = snprintf(buf, len, "oneDNN activations: %s (%s)", names[c->policy], c->policy_why);
    if (c->special_runs && k >= 0 && (size_t)k < len)
        snprintf(buf + k, len - (size_t)k, "; %lu node runs on the reference kernels for a "
                 "NaN or an infinity in their inputs", c->special_runs);
}

/* Does this CPU's oneDNN have int8 dot products (VNNI)? Without them oneDNN 2.6 adds
 * pairs of u8*s8 products in int16 (vpmaddubsw), which saturates: measured under
 * ONEDNN_MAX_CPU_ISA=AVX512_CORE and AVX2 (gemm:jit), every sum of a [64,64]x[64,64]
 * product of 255s and ~110s came back wrong; and it halves the weights of an s8 source
 * (scale_adjust 0.5: odd weights lose their last bit). The ISA is the effective one:
 * ONEDNN_MAX_CPU_ISA lowers it. */
bool dn_cpu_has_vnni(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx512_core_vnni) == dnnl_cpu_isa_avx512_core_vnni ||
           (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
}

/* backend_dnnl.c — the oneDNN backend: Conv, MatMul and Gemm in float32, one primitive
 * per node, on plain (row-major) layouts.
 *
 * claims() looks at the IR only: the op, and operands not known to be anything but
 * float32 of a rank this file handles (unknown types are claimed: see input_fits).
 * Shapes are settled at run time: the first run builds a primitive for the concrete
 * input shapes and keeps it in the node's state slot with memory objects that are
 * re-pointed at the input and output buffers on every run (no copies); a run with other
 * input shapes rebuilds it. Shapes or attributes this file does not handle — an empty
 * tensor, a Conv with more than 3 spatial dims, a Gemm with alpha 0, a dtype other than
 * float32, anything invalid — run the registry's reference kernel instead, which also
 * gives invalid nodes their usual error; so does a configuration oneDNN reports as
 * unimplemented. impl() then says "ref (fallback)".
 *
 *   Conv    convolution_direct, dilation = ONNX dilation - 1, asymmetric pads, auto_pad
 *           resolved from the input shape; groups through a 'goihw' weight view of the
 *           same ONNX bytes (depthwise included).
 *   MatMul  matmul with numpy batch broadcasting (oneDNN broadcasts dims of 1 when both
 *           operands have the same rank: leading 1s are added); a 1-D operand becomes a
 *           1-row / 1-column matrix and the output takes the ONNX shape.
 *   Gemm    matmul on strided views of A and B (transA/transB cost nothing); alpha an
 *           eltwise_linear post-op. A per-column C ([N], [1, N]) is the matmul bias:
 *           alpha*A*B + beta*C = alpha * (A*B + (beta/alpha)*C), C scaled into a buffer
 *           unless beta == alpha. Other shapes of C are broadcast into the output first
 *           and added by a sum post-op of scale beta/alpha (see gemm_c). beta == 0 ignores C,
 *           as BLAS does (the reference computes 0 * C: they differ only where C holds
 *           a NaN or an infinity).
 *
 * Engine and stream are created once per process (pthread_once) and shared; a run is
 * synchronous (the stream is waited on), and plans are not run concurrently.
 * Threads: oneDNN's CPU runtime here is OpenMP, which reads OMP_NUM_THREADS when the
 * process starts; --threads N calls omp_set_num_threads(N) (found with dlsym, since
 * libgomp comes in through libdnnl rather than our link line) before the plan builds its
 * primitives. It is process-wide, and oneDNN expects a primitive to run under the thread
 * count it was built with (scratchpads are sized per thread): live plans with different
 * counts are unsupported.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */

#include "exec/exec.h"
#include "ops/opkit.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the process-wide engine and stream ---------------------------------------------- */

static struct {
    pthread_once_t once;
    dnnl_status_t status;
    const char *failed_call;
    dnnl_engine_t engine;
    dnnl_stream_t stream;
} rt = {.once = PTHREAD_ONCE_INIT};

static atomic_size_t primitive_builds;

static void rt_init(void)
{
    rt.status = dnnl_engine_create(&rt.engine, dnnl_cpu, 0);
    if (rt.status != dnnl_success) {
        rt.failed_call = "dnnl_engine_create";
        return;
    }
    rt.status = dnnl_stream_create(&rt.stream, rt.engine, dnnl_stream_default_flags);
    if (rt.status != dnnl_success)
        rt.failed_call = "dnnl_stream_create";
}

static gl_status dn_fail(const char *where, const char *call, dnnl_status_t s)
{
    gl_status st = s == dnnl_out_of_memory    ? GL_ERR_NOMEM
                   : s == dnnl_unimplemented ? GL_ERR_UNSUPPORTED
                                             : GL_ERR_INTERNAL;
    return gl_fail(st, "%s: oneDNN %s failed: %s", where, call, dnnl_status2str(s));
}

static gl_status dn_check(const char *where, const char *call, dnnl_status_t s)
{
    return s == dnnl_success ? GL_OK : dn_fail(where, call, s);
}

static gl_status rt_get(const char *where)
{
    pthread_once(&rt.once, rt_init);
    return rt.status == dnnl_success ? GL_OK : dn_fail(where, rt.failed_call, rt.status);
}

size_t gl_backend_dnnl_builds(void)
{
    return atomic_load(&primitive_builds);
}

/* ---- what one primitive computes ----------------------------------------------------- */

typedef enum dn_op { DN_CONV, DN_MATMUL, DN_GEMM } dn_op;

/* Memory arguments, in this order everywhere. */
enum { DN_SRC, DN_WEI, DN_BIAS, DN_DST, DN_N_ARGS };
static const int dn_arg_ids[DN_N_ARGS] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS,
                                          DNNL_ARG_DST};
/* Which node input feeds each argument (the output is not an input). */
static const int dn_arg_inputs[DN_N_ARGS] = {0, 1, 2, -1};

/* The descriptors of one primitive for the shapes at hand, and the ONNX output shape. */
typedef struct dn_spec {
    dnnl_memory_desc_t md[DN_N_ARGS];
    bool has_bias;
    float bias_scale;   /* Gemm: the bias is C times this (1: C itself) */
    float out_scale;    /* Gemm: alpha as an eltwise_linear post-op (1: none) */
    bool c_in_dst;      /* Gemm: C is broadcast into the output before the run and */
    float sum_scale;    /* accumulated by a sum post-op with this scale (beta/alpha) */
    int64_t c_strides[2]; /* element strides of C over [M, N] (0: broadcast) */
    dnnl_dims_t strides, dilates, pad_l, pad_r; /* Conv */
    int out_rank;
    int64_t out_dims[GL_MAX_RANK];
} dn_spec;

/* A plain memory descriptor: row-major unless `strides` are given. */
static dnnl_status_t md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                              const int64_t *strides)
{
    dnnl_dims_t d, s;
    int64_t acc = 1;
    for (int i = rank - 1; i >= 0; i--) {
        d[i] = dims[i];
        s[i] = strides ? strides[i] : acc;
        acc *= dims[i];
    }
    return dnnl_memory_desc_init_by_strides(md, rank, d, dnnl_f32, s);
}

static bool is_f32(const gl_tensor *t)
{
    return t && t->dtype == GL_DT_FLOAT;
}

static const gl_tensor *opt_in(const gl_kernel_ctx *k, size_t i)
{
    return i < k->n_inputs ? k->in[i] : NULL;
}

/* Empty tensors are the reference kernels' business: oneDNN wants data to point at. */
static bool non_empty(const gl_tensor *t)
{
    return t->count > 0;
}

/* ---- Conv ---------------------------------------------------------------------------- */

#define DN_CONV_MAX_SP 3 /* oneDNN convolutions: 1-D, 2-D, 3-D */

/* Attribute values beyond this are left to the reference kernel (which refuses them),
 * so that the window arithmetic below cannot overflow. */
#define DN_MAX_ATTR ((int64_t)1 << 24)

/* An INTS attribute of exactly `want` values in [min, DN_MAX_ATTR], or absent (defaults
 * kept). */
static bool ints_attr(const gl_node *n, const char *name, int want, int64_t min, int64_t *dst)
{
    size_t count;
    const int64_t *v = gl_attr_ints(n, name, &count);
    if (!v)
        return true;
    if (count != (size_t)want)
        return false;
    for (int i = 0; i < want; i++) {
        if (v[i] < min || v[i] > DN_MAX_ATTR)
            return false;
        dst[i] = v[i];
    }
    return true;
}

/* Pads for each spatial dim from pads/auto_pad, as the ONNX spec (and nn.c) resolve them;
 * false when the window does not fit or the attributes are not understood. */
static bool conv_window(const gl_node *n, int nsp, const int64_t *in, const int64_t *kernel,
                        dn_spec *s, int64_t *out)
{
    int64_t stride[DN_CONV_MAX_SP] = {1, 1, 1}, dil[DN_CONV_MAX_SP] = {1, 1, 1};
    int64_t pads[2 * DN_CONV_MAX_SP] = {0}, kshape[DN_CONV_MAX_SP];
    memcpy(kshape, kernel, (size_t)nsp * sizeof(*kshape));
    if (!ints_attr(n, "kernel_shape", nsp, 1, kshape) || !ints_attr(n, "strides", nsp, 1, stride) ||
        !ints_attr(n, "dilations", nsp, 1, dil) || !ints_attr(n, "pads", 2 * nsp, 0, pads))
        return false;
    const char *mode = gl_node_attr_string(n, "auto_pad", "NOTSET");
    bool same_upper = strcmp(mode, "SAME_UPPER") == 0, same_lower = strcmp(mode, "SAME_LOWER") == 0;
    bool valid = strcmp(mode, "VALID") == 0;
    if (!same_upper && !same_lower && !valid && strcmp(mode, "NOTSET") != 0 && *mode)
        return false;
    for (int d = 0; d < nsp; d++) {
        if (kshape[d] != kernel[d])
            return false;
        int64_t span = (kernel[d] - 1) * dil[d] + 1, begin = pads[d], end = pads[nsp + d];
        if (same_upper || same_lower) {
            int64_t o = (in[d] + stride[d] - 1) / stride[d];
            int64_t total = (o - 1) * stride[d] + span - in[d];
            total = total < 0 ? 0 : total;
            begin = same_upper ? total / 2 : total - total / 2;
            end = total - begin;
        } else if (valid) {
            begin = end = 0;
        }
        int64_t room = in[d] + begin + end - span;
        if (room < 0)
            return false;
        out[d] = room / stride[d] + 1;
        s->strides[d] = stride[d];
        s->dilates[d] = dil[d] - 1; /* oneDNN counts the gaps between taps */
        s->pad_l[d] = begin;
        s->pad_r[d] = end;
    }
    return true;
}

static bool conv_spec(const gl_kernel_ctx *k, dn_spec *s)
{
    const gl_tensor *x = opt_in(k, 0), *w = opt_in(k, 1), *b = opt_in(k, 2);
    if (!is_f32(x) || !is_f32(w) || (b && !is_f32(b)))
        return false;
    int nsp = x->rank - 2;
    if (nsp < 1 || nsp > DN_CONV_MAX_SP || w->rank != x->rank || !non_empty(x) || !non_empty(w))
        return false;
    int64_t group = gl_node_attr_int(k->node, "group", 1), oc = w->dims[0];
    if (group < 1 || group > x->dims[1] || w->dims[1] * group != x->dims[1] || oc % group != 0)
        return false;
    if (b && (b->rank != 1 || b->dims[0] != oc))
        return false;
    int64_t out[DN_CONV_MAX_SP];
    if (!conv_window(k->node, nsp, x->dims + 2, w->dims + 2, s, out))
        return false;
    s->out_rank = x->rank;
    s->out_dims[0] = x->dims[0];
    s->out_dims[1] = oc;
    memcpy(s->out_dims + 2, out, (size_t)nsp * sizeof(*out));
    /* Grouped weights [OC, IC/G, k...] are the same bytes as [G, OC/G, IC/G, k...]. */
    int64_t wdims[DN_CONV_MAX_SP + 3] = {group, oc / group};
    memcpy(wdims + 2, w->dims + 1, (size_t)(w->rank - 1) * sizeof(int64_t));
    s->has_bias = b != NULL;
    return md_plain(&s->md[DN_SRC], x->rank, x->dims, NULL) == dnnl_success &&
           (group == 1 ? md_plain(&s->md[DN_WEI], w->rank, w->dims, NULL)
                       : md_plain(&s->md[DN_WEI], w->rank + 1, wdims, NULL)) == dnnl_success &&
           (!b || md_plain(&s->md[DN_BIAS], 1, &oc, NULL) == dnnl_success) &&
           md_plain(&s->md[DN_DST], s->out_rank, s->out_dims, NULL) == dnnl_success;
}

/* ---- MatMul -------------------------------------------------------------------------- */

/* dims of a MatMul operand as a matrix stack of rank `nd`: leading 1s, and a 1-D operand
 * as one row (A) or one column (B). */
static void matmul_view(const gl_tensor *t, bool is_a, int nd, int64_t *dims)
{
    for (int i = 0; i < nd; i++)
        dims[i] = 1;
    if (t->rank == 1)
        dims[is_a ? nd - 1 : nd - 2] = t->dims[0];
    else
        memcpy(dims + nd - t->rank, t->dims, (size_t)t->rank * sizeof(int64_t));
}

static bool matmul_spec(const gl_kernel_ctx *k, dn_spec *s)
{
    const gl_tensor *a = opt_in(k, 0), *b = opt_in(k, 1);
    if (!is_f32(a) || !is_f32(b) || a->rank < 1 || b->rank < 1 || !non_empty(a) ||
        !non_empty(b))
        return false;
    int nd = a->rank > b->rank ? a->rank : b->rank;
    nd = nd < 2 ? 2 : nd;
    if (nd > DNNL_MAX_NDIMS)
        return false;
    int64_t ad[DNNL_MAX_NDIMS], bd[DNNL_MAX_NDIMS], yd[DNNL_MAX_NDIMS];
    matmul_view(a, true, nd, ad);
    matmul_view(b, false, nd, bd);
    if (ad[nd - 1] != bd[nd - 2])
        return false;
    for (int i = 0; i < nd - 2; i++) {
        if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1)
            return false;
        yd[i] = ad[i] == 1 ? bd[i] : ad[i];
    }
    yd[nd - 2] = ad[nd - 2];
    yd[nd - 1] = bd[nd - 1];
    /* The ONNX output drops the dim a 1-D operand did not have. */
    s->out_rank = 0;
    for (int i = 0; i < nd; i++)
        if ((i != nd - 2 || a->rank >= 2) && (i != nd - 1 || b->rank >= 2))
            s->out_dims[s->out_rank++] = yd[i];
    s->has_bias = false;
    return md_plain(&s->md[DN_SRC], nd, ad, NULL) == dnnl_success &&
           md_plain(&s->md[DN_WEI], nd, bd, NULL) == dnnl_success &&
           md_plain(&s->md[DN_DST], nd, yd, NULL) == dnnl_success;
}

/* ---- Gemm ---------------------------------------------------------------------------- */

/* C as a [rows, cols] bias that broadcasts to [m, n]; false when it does not. */
static bool gemm_bias_dims(const gl_tensor *c, int64_t m, int64_t n, int64_t *dims)
{
    if (c->rank > 2)
        return false;
    dims[0] = c->rank == 2 ? c->dims[0] : 1;
    dims[1] = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
    return (dims[0] == 1 || dims[0] == m) && (dims[1] == 1 || dims[1] == n);
}

/* Gemm's C: a per-column vector ([N] or [1, N], as nn.Linear exports) is a matmul bias,
 * which oneDNN's fast matmul supports; any other shape (scalar, [M, 1], [M, N]) would
 * send it to its slow reference matmul, so it is copied into the output instead and
 * added by a sum post-op. */
static bool gemm_c(const gl_tensor *c, int64_t m, int64_t n, float alpha, float beta,
                   dn_spec *s)
{
    int64_t cdims[2];
    if (!c || beta == 0.0f)
        return true;
    if (!gemm_bias_dims(c, m, n, cdims))
        return false;
    if (cdims[0] == 1 && cdims[1] == n) {
        s->has_bias = true;
        s->bias_scale = beta / alpha;
        return md_plain(&s->md[DN_BIAS], 2, cdims, NULL) == dnnl_success;
    }
    s->c_in_dst = true;
    s->sum_scale = beta / alpha;
    s->c_strides[0] = cdims[0] == 1 ? 0 : cdims[1];
    s->c_strides[1] = cdims[1] == 1 ? 0 : 1;
    return true;
}

static bool gemm_spec(const gl_kernel_ctx *k, dn_spec *s)
{
    const gl_tensor *a = opt_in(k, 0), *b = opt_in(k, 1), *c = opt_in(k, 2);
    if (!is_f32(a) || !is_f32(b) || (c && !is_f32(c)) || a->rank != 2 || b->rank != 2 ||
        !non_empty(a) || !non_empty(b) || (c && !non_empty(c)))
        return false;
    if (!c && k->opset < 11) /* C is required there: the reference kernel says so */
        return false;
    bool ta = gl_node_attr_int(k->node, "transA", 0) != 0;
    bool tb = gl_node_attr_int(k->node, "transB", 0) != 0;
    float alpha = gl_node_attr_float(k->node, "alpha", 1.0f);
    float beta = gl_node_attr_float(k->node, "beta", 1.0f);
    if (alpha == 0.0f)
        return false;
    int64_t m = a->dims[ta], kk = a->dims[!ta], kb = b->dims[tb], n = b->dims[!tb];
    if (kk != kb)
        return false;
    /* A transposed operand is the stored matrix read with swapped strides. */
    int64_t adims[2] = {m, kk}, astr[2] = {ta ? 1 : kk, ta ? m : 1};
    int64_t bdims[2] = {kk, n}, bstr[2] = {tb ? 1 : n, tb ? kk : 1};
    s->out_rank = 2;
    s->out_dims[0] = m;
    s->out_dims[1] = n;
    s->out_scale = alpha;
    s->has_bias = false;
    return gemm_c(c, m, n, alpha, beta, s) &&
           md_plain(&s->md[DN_SRC], 2, adims, astr) == dnnl_success &&
           md_plain(&s->md[DN_WEI], 2, bdims, bstr) == dnnl_success &&
           md_plain(&s->md[DN_DST], 2, s->out_dims, NULL) == dnnl_success;
}

/* ---- per-node state ------------------------------------------------------------------ */

static const struct {
    const char *op;
    dn_op kind;
    bool (*spec)(const gl_kernel_ctx *k, dn_spec *s);
} dn_ops[] = {
    {"Conv", DN_CONV, conv_spec},
    {"Gemm", DN_GEMM, gemm_spec},
    {"MatMul", DN_MATMUL, matmul_spec},
};

#define DN_KEY_INPUTS 3

/* The input shapes a primitive was built for. */
typedef struct dn_key {
    bool present[DN_KEY_INPUTS];
    gl_dtype dtype[DN_KEY_INPUTS];
    int rank[DN_KEY_INPUTS];
    int64_t dims[DN_KEY_INPUTS][GL_MAX_RANK];
} dn_key;

typedef struct dn_state {
    size_t op;                 /* index into dn_ops */
    bool built;
    dn_key key;
    const gl_op_def *fallback; /* set: these shapes run the reference kernel */
    dnnl_primitive_t prim;
    dnnl_memory_t mem[DN_N_ARGS];
    dn_spec spec;
    float *bias_buf;           /* Gemm: beta/alpha * C, refilled every run */
    int64_t bias_count;
    char impl[128];
} dn_state;

static void key_of(const gl_kernel_ctx *k, dn_key *key)
{
    memset(key, 0, sizeof(*key));
    for (size_t i = 0; i < DN_KEY_INPUTS; i++) {
        const gl_tensor *t = opt_in(k, i);
        if (!t)
            continue;
        key->present[i] = true;
        key->dtype[i] = t->dtype;
        key->rank[i] = t->rank;
        memcpy(key->dims[i], t->dims, (size_t)t->rank * sizeof(int64_t));
    }
}

static void state_clear(dn_state *s)
{
    if (s->prim)
        dnnl_primitive_destroy(s->prim);
    for (int i = 0; i < DN_N_ARGS; i++)
        if (s->mem[i])
            dnnl_memory_destroy(s->mem[i]);
    free(s->bias_buf);
    size_t op = s->op;
    memset(s, 0, sizeof(*s));
    s->op = op;
}

static void dn_release(void *state)
{
    if (state) {
        state_clear(state);
        free(state);
    }
}

/* These shapes run the reference kernel (looked up at the node's opset). */
static gl_status use_fallback(const gl_kernel_ctx *k, dn_state *s)
{
    s->fallback = gl_op_lookup(k->node->domain ? k->node->domain : "", k->node->op_type, k->opset);
    if (!s->fallback || !s->fallback->kernel)
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: no reference kernel at opset %lld", k->where,
                       (long long)k->opset);
    snprintf(s->impl, sizeof(s->impl), "ref (fallback)");
    s->built = true;
    return GL_OK;
}

/* Post-ops: + (beta/alpha) * (C already in the output), then * alpha. Sum first: the
 * gemm-based matmul (AVX2 machines) takes sum-then-eltwise, not the other order. */
static dnnl_status_t make_attr(const dn_spec *sp, dnnl_primitive_attr_t *attr)
{
    *attr = NULL;
    if (sp->out_scale == 1.0f && !sp->c_in_dst)
        return dnnl_success;
    dnnl_post_ops_t po = NULL;
    dnnl_status_t r = dnnl_primitive_attr_create(attr);
    if (r == dnnl_success)
        r = dnnl_post_ops_create(&po);
    if (r == dnnl_success && sp->c_in_dst)
        r = dnnl_post_ops_append_sum(po, sp->sum_scale);
    if (r == dnnl_success && sp->out_scale != 1.0f)
        r = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, sp->out_scale, 0.0f);
    if (r == dnnl_success)
        r = dnnl_primitive_attr_set_post_ops(*attr, po);
    if (po)
        dnnl_post_ops_destroy(po);
    return r;
}

/* The primitive descriptor for the op; *call names the oneDNN call on failure. */
static dnnl_status_t make_pd(dn_op kind, const dn_spec *sp, dnnl_primitive_attr_t attr,
                             dnnl_primitive_desc_t *pd, const char **call)
{
    const dnnl_memory_desc_t *bias = sp->has_bias ? &sp->md[DN_BIAS] : NULL;
    dnnl_status_t r;
    if (kind == DN_CONV) {
        dnnl_convolution_desc_t cd;
        *call = "dnnl_dilated_convolution_forward_desc_init";
        r = dnnl_dilated_convolution_forward_desc_init(
            &cd, dnnl_forward_inference, dnnl_convolution_direct, &sp->md[DN_SRC],
            &sp->md[DN_WEI], bias, &sp->md[DN_DST], sp->strides, sp->dilates, sp->pad_l,
            sp->pad_r);
        if (r != dnnl_success)
            return r;
        *call = "dnnl_primitive_desc_create (convolution)";
        return dnnl_primitive_desc_create(pd, &cd, attr, rt.engine, NULL);
    }
    dnnl_matmul_desc_t md;
    *call = "dnnl_matmul_desc_init";
    r = dnnl_matmul_desc_init(&md, &sp->md[DN_SRC], &sp->md[DN_WEI], bias, &sp->md[DN_DST]);
    if (r != dnnl_success)
        return r;
    *call = "dnnl_primitive_desc_create (matmul)";
    return dnnl_primitive_desc_create(pd, &md, attr, rt.engine, NULL);
}

/* Primitive, memory objects (data handles set per run) and the implementation name. */
static gl_status build_primitive(const gl_kernel_ctx *k, dn_state *s)
{
    const dn_spec *sp = &s->spec;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    const char *call = "dnnl_primitive_attr_create";
    dnnl_status_t r = make_attr(sp, &attr);
    if (r == dnnl_success)
        r = make_pd(dn_ops[s->op].kind, sp, attr, &pd, &call);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (r == dnnl_unimplemented)
        return use_fallback(k, s);
    if (r != dnnl_success)
        return dn_fail(k->where, call, r);
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success)
        impl = NULL;
    snprintf(s->impl, sizeof(s->impl), "%s", impl ? impl : "?");
    r = dnnl_primitive_create(&s->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    gl_status st = dn_check(k->where, "dnnl_primitive_create", r);
    for (int i = 0; i < DN_N_ARGS && st == GL_OK; i++)
        if (i != DN_BIAS || sp->has_bias)
            st = dn_check(k->where, "dnnl_memory_create",
                          dnnl_memory_create(&s->mem[i], &sp->md[i], rt.engine, DNNL_MEMORY_NONE));
    if (st == GL_OK)
        atomic_fetch_add(&primitive_builds, 1);
    s->built = st == GL_OK;
    return st;
}

/* Gemm's bias when beta != alpha: a buffer the size of C, filled on every run. */
static gl_status alloc_bias_buf(const gl_kernel_ctx *k, dn_state *s)
{
    if (!s->spec.has_bias || s->spec.bias_scale == 1.0f)
        return GL_OK;
    s->bias_count = k->in[2]->count;
    s->bias_buf = malloc((size_t)s->bias_count * sizeof(float));
    return s->bias_buf ? GL_OK : gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
}

/* Build for the shapes of this run unless the cached primitive already is for them. */
static gl_status prepare(const gl_kernel_ctx *k, dn_state *s)
{
    dn_key key;
    key_of(k, &key);
    if (s->built && memcmp(&key, &s->key, sizeof(key)) == 0)
        return GL_OK;
    state_clear(s);
    s->key = key;
    s->spec.bias_scale = s->spec.out_scale = s->spec.sum_scale = 1.0f;
    if (!dn_ops[s->op].spec(k, &s->spec))
        return use_fallback(k, s);
    gl_status st = rt_get(k->where);
    if (st == GL_OK)
        st = build_primitive(k, s);
    if (st == GL_OK && !s->fallback)
        st = alloc_bias_buf(k, s);
    if (st != GL_OK)
        state_clear(s);
    return st;
}

static void *bias_data(const gl_kernel_ctx *k, dn_state *s)
{
    const float *c = gl_tensor_data(k->in[2]);
    if (!s->bias_buf)
        return (void *)c; /* only read */
    for (int64_t i = 0; i < s->bias_count; i++)
        s->bias_buf[i] = s->spec.bias_scale * c[i];
    return s->bias_buf;
}

/* Gemm: the output starts as C broadcast to [M, N] (the sum post-op adds to it). */
static void fill_with_c(const gl_tensor *c, const dn_spec *sp, float *y)
{
    const float *cv = gl_tensor_data(c);
    int64_t m = sp->out_dims[0], n = sp->out_dims[1];
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            y[i * n + j] = cv[i * sp->c_strides[0] + j * sp->c_strides[1]];
}

static gl_status execute(gl_kernel_ctx *k, dn_state *s)
{
    const dn_spec *sp = &s->spec;
    gl_tensor *y = gl_out_new(k, 0, GL_DT_FLOAT, sp->out_rank, sp->out_dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (sp->c_in_dst)
        fill_with_c(k->in[2], sp, gl_tensor_make_writable(y));
    dnnl_exec_arg_t args[DN_N_ARGS];
    int n_args = 0;
    gl_status st = GL_OK;
    for (int i = 0; i < DN_N_ARGS && st == GL_OK; i++) {
        if (!s->mem[i])
            continue;
        int in = dn_arg_inputs[i];
        /* oneDNN takes non-const handles; sources and weights are only read. */
        void *data = in < 0 ? gl_tensor_make_writable(y)
                     : i == DN_BIAS ? bias_data(k, s)
                                    : (void *)gl_tensor_data(k->in[in]);
        st = dn_check(k->where, "dnnl_memory_set_data_handle",
                      dnnl_memory_set_data_handle(s->mem[i], data));
        args[n_args++] = (dnnl_exec_arg_t){dn_arg_ids[i], s->mem[i]};
    }
    if (st == GL_OK)
        st = dn_check(k->where, "dnnl_primitive_execute",
                      dnnl_primitive_execute(s->prim, rt.stream, n_args, args));
    if (st == GL_OK)
        st = dn_check(k->where, "dnnl_stream_wait", dnnl_stream_wait(rt.stream));
    return st;
}

/* ---- the backend --------------------------------------------------------------------- */

static int op_index(const gl_node *n)
{
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
        return -1;
    for (size_t i = 0; i < GL_ARRAY_LEN(dn_ops); i++)
        if (strcmp(n->op_type, dn_ops[i].op) == 0)
            return (int)i;
    return -1;
}

/* Input i may be float32 of a rank in [lo, hi]: nothing known to the contrary. Types of
 * intermediate values are unknown until shape inference has run (`graphlab run` runs no
 * pass by default), so an unknown dtype or rank is claimed and settled at run time. */
static bool input_fits(const gl_node *n, size_t i, int lo, int hi)
{
    const gl_value *v = i < n->n_inputs ? n->inputs[i] : NULL;
    if (!v)
        return false;
    if (v->type.kind == GL_TYPE_OPAQUE)
        return false;
    if (v->type.kind != GL_TYPE_TENSOR)
        return true;
    if (v->type.dtype != GL_DT_FLOAT && v->type.dtype != GL_DT_UNDEFINED)
        return false;
    int r = v->type.shape.rank;
    return r == GL_RANK_UNKNOWN || (r >= lo && r <= hi);
}

static bool dn_claims(const gl_model *m, const gl_node *n)
{
    int op = op_index(n);
    if (op < 0 || n->n_outputs < 1 || !n->outputs[0])
        return false;
    const gl_op_def *def = gl_op_for_node(m, n);
    if (!def || !def->kernel) /* the fallback must exist */
        return false;
    switch (dn_ops[op].kind) {
    case DN_CONV:
        return input_fits(n, 0, 3, 2 + DN_CONV_MAX_SP) &&
               input_fits(n, 1, 3, 2 + DN_CONV_MAX_SP);
    case DN_MATMUL:
        return input_fits(n, 0, 1, DNNL_MAX_NDIMS) && input_fits(n, 1, 1, DNNL_MAX_NDIMS);
    case DN_GEMM:
        return input_fits(n, 0, 2, 2) && input_fits(n, 1, 2, 2);
    }
    return false;
}

static gl_status dn_run(gl_kernel_ctx *k, void **state)
{
    dn_state *s = *state;
    if (!s) {
        int op = op_index(k->node);
        if (op < 0)
            return gl_fail(GL_ERR_INTERNAL, "%s: the oneDNN backend does not run %s", k->where,
                           k->node->op_type);
        s = gl_xcalloc(1, sizeof(*s));
        s->op = (size_t)op;
        *state = s;
    }
    gl_status st = prepare(k, s);
    if (st != GL_OK)
        return st;
    return s->fallback ? s->fallback->kernel(k) : execute(k, s);
}

static const char *dn_impl(const void *state)
{
    const dn_state *s = state;
    return s && s->built ? s->impl : "(built on first run)";
}

static void dn_set_threads(int threads)
{
    void (*set)(int) = NULL;
    /* A function pointer through dlsym: POSIX guarantees the conversion works. */
    *(void **)&set = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (set && threads > 0)
        set(threads);
}

static const gl_backend dnnl_backend = {
    .name = "dnnl",
    .claims = dn_claims,
    .run = dn_run,
    .release = dn_release,
    .impl = dn_impl,
    .set_threads = dn_set_threads,
};

const gl_backend *gl_backend_dnnl(void)
{
    return &dnnl_backend;
}

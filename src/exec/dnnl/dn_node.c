/* dn_node.c — what every oneDNN node shares: the shape guard, building (an op's build
 * function, then memory objects, input conversions, constants reordered once), running
 * (buffers lent to outputs, non-constant inputs converted, execute, wait), and the
 * reference kernel for what a build refused. See dn.h for the story.
 */
#include "exec/dnnl/dn.h"
#include "ir/limits.h"
#include "util/clock.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static atomic_size_t primitive_builds;

size_t gl_backend_dnnl_builds(void)
{
    return atomic_load(&primitive_builds);
}

/* ---- helpers for op files ------------------------------------------------------------- */

bool dn_posts_repeat_alg(const dn_post *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (!ops[i].src1 && ops[i].alg && ops[j].alg == ops[i].alg && !ops[j].src1 &&
                (ops[j].alpha != ops[i].alpha || ops[j].beta != ops[i].beta))
                return true;
    return false;
}

dnnl_status_t dn_attr_post_ops(const dn_post *ops, size_t n, dnnl_primitive_attr_t *attr)
{
    *attr = NULL;
    if (n == 0)
        return dnnl_success;
    if (dn_posts_repeat_alg(ops, n))
        return dnnl_unimplemented;
    dnnl_post_ops_t po = NULL;
    dnnl_status_t r = dnnl_primitive_attr_create(attr);
    if (r == dnnl_success)
        r = dnnl_post_ops_create(&po);
    for (size_t i = 0; i < n && r == dnnl_success; i++)
        r = ops[i].src1  ? dnnl_post_ops_append_binary(po, ops[i].alg, ops[i].src1)
            : ops[i].alg ? dnnl_post_ops_append_eltwise(po, 1.0f, ops[i].alg, ops[i].alpha,
                                                        ops[i].beta)
                         : dnnl_post_ops_append_sum(po, ops[i].scale);
    if (r == dnnl_success)
        r = dnnl_primitive_attr_set_post_ops(*attr, po);
    dnnl_post_ops_destroy(po);
    if (r != dnnl_success) {
        dnnl_primitive_attr_destroy(*attr);
        *attr = NULL;
    }
    return r;
}

/* More post-ops than any primitive of oneDNN 2.6 takes (its limit is 32). */
#define DN_MAX_POST 32

static dnnl_status_t build_attr(dn_build *b, const dn_post *own, size_t n_own, int rank,
                                const int64_t *dims, bool rows, dnnl_primitive_attr_t *attr)
{
    if (!b->tail)
        return dn_attr_post_ops(own, n_own, attr);
    *attr = NULL;
    dn_post all[DN_MAX_POST];
    if (n_own > DN_MAX_POST)
        return dnnl_unimplemented;
    if (n_own) /* own may be NULL then */
        memcpy(all, own, n_own * sizeof(*own));
    b->tail->rows = rows;
    int n = b->tail->posts(b->tail, b, rank, dims, all + n_own, DN_MAX_POST - n_own);
    b->tail->rows = false;
    if (n < 0)
        return dnnl_unimplemented;
    b->tail->first = n_own;
    b->tail->taken = true;
    return dn_attr_post_ops(all, n_own + (size_t)n, attr);
}

size_t dn_tail_bias(dn_build *b, int rank, int64_t n)
{
    if (!b->tail || !b->tail->bias)
        return SIZE_MAX;
    size_t slot = b->tail->bias(b->tail, b, rank, n);
    b->tail->biased = slot != SIZE_MAX;
    return slot;
}

dnnl_status_t dn_build_attr(dn_build *b, const dn_post *own, size_t n_own, int rank,
                            const int64_t *dims, dnnl_primitive_attr_t *attr)
{
    return build_attr(b, own, n_own, rank, dims, false, attr);
}

dnnl_status_t dn_build_attr_rows(dn_build *b, const dn_post *own, size_t n_own, int rank,
                                 const int64_t *dims, dnnl_primitive_attr_t *attr)
{
    return build_attr(b, own, n_own, rank, dims, true, attr);
}

const dnnl_memory_desc_t *dn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int i)
{
    return dnnl_primitive_desc_query_md(pd, what, i);
}

bool dn_input_constant(const gl_kernel_ctx *k, size_t i)
{
    const gl_value *v = i < k->node->n_inputs ? k->node->inputs[i] : NULL;
    return v && v->init && gl_value_is_constant(v) && i < k->n_inputs && k->in[i] == v->init;
}

const gl_tensor *dn_f32_input(const gl_kernel_ctx *k, size_t i)
{
    const gl_tensor *t = i < k->n_inputs ? k->in[i] : NULL;
    return t && t->dtype == GL_DT_FLOAT ? t : NULL;
}

bool dn_input_fits(const gl_node *n, size_t i, int lo, int hi)
{
    const gl_value *v = i < n->n_inputs ? n->inputs[i] : NULL;
    if (!v || v->type.kind == GL_TYPE_OPAQUE)
        return false;
    if (v->type.kind != GL_TYPE_TENSOR)
        return true;
    if (v->type.dtype != GL_DT_FLOAT && v->type.dtype != GL_DT_UNDEFINED)
        return false;
    int r = v->type.shape.rank;
    return r == GL_RANK_UNKNOWN || (r >= lo && r <= hi);
}

bool dn_claim_f32_any(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    for (size_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && !dn_input_fits(n, i, 0, DNNL_MAX_NDIMS)) {
            snprintf(why, len, "input %zu is not float32 of rank <= %d", i, DNNL_MAX_NDIMS);
            return false;
        }
    return true;
}

gl_status dn_reference_kernel(const dn_build *b, const gl_op_def **def)
{
    const gl_node *n = b->k->node;
    *def = gl_op_lookup(n->domain, n->op_type, b->k->opset);
    if (!*def || !(*def)->kernel)
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: no reference kernel at opset %lld",
                       b->k->where, (long long)b->k->opset);
    return GL_OK;
}

/* The formatted text cut at len - 1 bytes (a plan column's width), interned in c. */
static const char *column_text(dn_ctx *c, size_t len, const char *fmt, va_list ap)
{
    char text[DN_NOTE_LEN > DN_IMPL_LEN ? DN_NOTE_LEN : DN_IMPL_LEN];
    vsnprintf(text, len < sizeof(text) ? len : sizeof(text), fmt, ap);
    return gl_text_intern(&c->texts, text);
}

void dn_set_notev(dn_ctx *c, dn_node *s, const char *fmt, va_list ap)
{
    s->note = column_text(c, DN_NOTE_LEN, fmt, ap);
}

void dn_set_note(dn_ctx *c, dn_node *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dn_set_notev(c, s, fmt, ap);
    va_end(ap);
}

void dn_set_impl(dn_ctx *c, dn_node *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s->impl = column_text(c, DN_IMPL_LEN, fmt, ap);
    va_end(ap);
}

void dn_take_native(dn_build *b, void (*run)(void *extra, const void *const *src, void *dst),
                    void *extra, void (*extra_free)(void *extra), const char *fmt, ...)
{
    b->s->extra = extra;
    b->s->extra_free = extra_free;
    b->s->native = run;
    va_list ap;
    va_start(ap, fmt);
    b->s->impl = column_text(b->c, DN_IMPL_LEN, fmt, ap);
    va_end(ap);
}

gl_status dn_refuse(dn_build *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dn_set_notev(b->c, b->s, fmt, ap);
    va_end(ap);
    return dn_reference_kernel(b, &b->s->fallback);
}

static dn_in *add_in(dn_build *b, int arg, size_t input)
{
    dn_node *s = b->s;
    GL_GROW(s->in, s->cap_in, s->n_in + 1);
    dn_in *in = &s->in[s->n_in++];
    memset(in, 0, sizeof(*in));
    in->arg = arg;
    in->input = input;
    in->given = b->held ? b->held[input] : b->md[input];
    in->constant = dn_input_constant(b->k, input);
    return in;
}

void dn_bind_input(dn_build *b, int arg, size_t input, const dnnl_memory_desc_t *want)
{
    dn_in *in = add_in(b, arg, input);
    in->want = want ? *want : b->md[input];
    in->view = in->want;
    in->convert = !dnnl_memory_desc_equal(&in->want, &in->given);
}

void dn_bind_input_view(dn_build *b, int arg, size_t input, const dnnl_memory_desc_t *view)
{
    dn_in *in = add_in(b, arg, input);
    if (dn_md_is_plain(&in->given)) {
        in->want = in->given;
    } else {
        const gl_tensor *t = b->k->in[input];
        dn_md_plain(&in->want, t->rank, t->dims, NULL);
        in->want.data_type = in->given.data_type;
    }
    in->view = *view;
    in->convert = !dnnl_memory_desc_equal(&in->want, &in->given);
}

void dn_bind_input_from(dn_build *b, int arg, size_t input, const dnnl_memory_desc_t *given,
                        const dnnl_memory_desc_t *want)
{
    dn_in *in = add_in(b, arg, input);
    in->given = *given;
    in->want = want ? *want : *given;
    in->view = in->want;
    in->convert = !dnnl_memory_desc_equal(&in->want, &in->given);
}

dn_out *dn_node_outputs(dn_node *s)
{
    if (!s->out)
        s->out = gl_xcalloc(DN_MAX_OUTPUTS, sizeof(*s->out));
    return s->out;
}

void dn_bind_output(dn_build *b, int arg, size_t output, const dnnl_memory_desc_t *md, int rank,
                    const int64_t *dims)
{
    dn_node *s = b->s;
    dn_out *o = &dn_node_outputs(s)[s->n_out++];
    memset(o, 0, sizeof(*o));
    o->arg = arg;
    o->output = output;
    o->md = *md;
    o->rank = rank;
    memcpy(o->dims, dims, (size_t)rank * sizeof(*dims));
    o->layout = dn_layout_of(b->c, md);
}

void dn_bind_view(dn_build *b, size_t output, size_t input, const dnnl_memory_desc_t *md,
                  int rank, const int64_t *dims)
{
    dn_bind_output(b, 0, output, md, rank, dims);
    dn_out *o = &b->s->out[b->s->n_out - 1];
    o->view = true;
    o->from = input;
    o->layout = dn_view_layout(b->c, md);
}

dnnl_status_t dn_reorder_once(dn_ctx *c, const dnnl_memory_desc_t *fmd, dnnl_memory_t from,
                              const dnnl_memory_desc_t *tmd, dnnl_memory_t to)
{
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_status_t r = dnnl_reorder_primitive_desc_create(&pd, fmd, c->engine, tmd, c->engine,
                                                         NULL);
    if (r == dnnl_success)
        r = dnnl_primitive_create(&prim, pd);
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    if (r == dnnl_success)
        r = dnnl_primitive_execute(prim, c->stream, 2, args);
    if (r == dnnl_success)
        r = dnnl_stream_wait(c->stream);
    dnnl_primitive_destroy(prim);
    dnnl_primitive_desc_destroy(pd);
    return r;
}

void *dn_bind_own(dn_build *b, int arg, const dnnl_memory_desc_t *md)
{
    dn_node *s = b->s;
    if (!s->own)
        s->own = gl_xcalloc(DN_MAX_OWN, sizeof(*s->own));
    dn_own *o = &s->own[s->n_own++];
    memset(o, 0, sizeof(*o));
    o->arg = arg;
    o->md = *md;
    o->bytes = dnnl_memory_desc_get_size(md);
    o->buf = gl_xcalloc(1, o->bytes ? o->bytes : 1);
    return o->buf;
}

/* ---- the shape guard ---------------------------------------------------------------------- */

bool dn_key_matches(const dn_node *s, const gl_kernel_ctx *k)
{
    if (s->n_key != k->n_inputs)
        return false;
    for (size_t i = 0; i < k->n_inputs; i++) {
        const gl_tensor *t = k->in[i];
        const dn_key *key = &s->key[i];
        if (!t != !key->present)
            return false;
        if (t && (t->dtype != key->dtype || t->rank != key->rank || t->layout != key->layout ||
                  memcmp(t->dims, key->dims, (size_t)t->rank * sizeof(int64_t)) != 0))
            return false;
        for (int j = 0; t && j < key->n_vals; j++)
            if (gl_elem_i64(t, j) != key->vals[j])
                return false;
    }
    return true;
}

/* Record the inputs of this build; false when one has more dims than oneDNN takes. */
bool dn_key_set(dn_node *s, const gl_kernel_ctx *k)
{
    s->key = gl_xcalloc(k->n_inputs ? k->n_inputs : 1, sizeof(*s->key));
    s->n_key = k->n_inputs;
    bool fits = true;
    for (size_t i = 0; i < k->n_inputs; i++) {
        const gl_tensor *t = k->in[i];
        if (!t)
            continue;
        dn_key *key = &s->key[i];
        key->present = true;
        key->dtype = t->dtype;
        key->rank = t->rank;
        key->layout = t->layout;
        key->n_vals = -1;
        if (dn_key_by_value(t)) {
            key->n_vals = (int)t->count;
            for (int j = 0; j < key->n_vals; j++)
                key->vals[j] = gl_elem_i64(t, j);
        }
        if (t->rank > DNNL_MAX_NDIMS) {
            fits = false;
            key->rank = DNNL_MAX_NDIMS + 1;
            continue;
        }
        memcpy(key->dims, t->dims, (size_t)t->rank * sizeof(int64_t));
    }
    return fits;
}

/* ---- building ------------------------------------------------------------------------------ */

bool dn_key_by_value(const gl_tensor *t)
{
    return gl_dtype_is_int(t->dtype) && t->count <= DN_KEY_VALS && !t->layout;
}

void dn_note_runs_members(dn_ctx *c, dn_node *s, const char *why)
{
    dn_set_impl(c, s, "ref (members)");
    dn_set_note(c, s, "runs its members on the reference kernels: %.110s", why ? why : s->note);
}

void dn_node_init(dn_node *s, const dn_op *op)
{
    s->op = op;
    s->impl = s->note = "";
}

void dn_node_clear(dn_node *s)
{
    if (s->prim)
        dnnl_primitive_destroy(s->prim);
    if (s->then)
        dnnl_primitive_destroy(s->then);
    if (s->then_src1)
        dnnl_memory_destroy(s->then_src1);
    free(s->then_buf);
    for (size_t i = 0; i < s->n_in; i++) {
        dn_in *in = &s->in[i];
        if (in->reorder)
            dnnl_primitive_destroy(in->reorder);
        if (in->from)
            dnnl_memory_destroy(in->from);
        if (in->to)
            dnnl_memory_destroy(in->to);
        if (in->mem)
            dnnl_memory_destroy(in->mem);
        free(in->buf);
    }
    for (size_t i = 0; i < s->n_out; i++) {
        if (s->out[i].mem)
            dnnl_memory_destroy(s->out[i].mem);
        gl_buffer_slot_clear(&s->out[i].slot);
    }
    for (size_t i = 0; i < s->n_own; i++) {
        if (s->own[i].mem)
            dnnl_memory_destroy(s->own[i].mem);
        free(s->own[i].buf);
    }
    if (s->extra && s->extra_free)
        s->extra_free(s->extra);
    free(s->in);
    free(s->key);
    free(s->out);
    free(s->own);
    const dn_op *op = s->op;
    unsigned builds = s->builds, const_reorders = s->const_reorders, gen = s->generation;
    memset(s, 0, sizeof(*s));
    dn_node_init(s, op);
    s->builds = builds;
    s->const_reorders = const_reorders;
    s->generation = gen;
}

/* Run a reorder from `from` to `to` now; time it into k when k is given. */
static dnnl_status_t reorder_now(dn_ctx *c, dn_in *in)
{
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, in->from}, {DNNL_ARG_TO, in->to}};
    dnnl_status_t r = dnnl_primitive_execute(in->reorder, c->stream, 2, args);
    return r == dnnl_success ? dnnl_stream_wait(c->stream) : r;
}

/* Bytes a converted constant of at least this size is written into come in huge pages:
 * a 16 MB packed weight then costs 8 page faults instead of 4096 (the packing of a 1.2 GB
 * decoder's weights spent more time in page faults than in the reorder). */
#define DN_HUGE_CONSTANT (4u << 20)
#define DN_HUGE_PAGE (2u << 20)

/* A buffer of `size` bytes for an input's converted bytes; a big constant's in huge
 * pages where the system gives them (a hint: small pages otherwise). */
static void *converted_alloc(size_t size, bool constant)
{
    bool huge = constant && size >= DN_HUGE_CONSTANT;
    size_t align = huge ? DN_HUGE_PAGE : 64;
    void *buf = aligned_alloc(align, (size + align - 1) & ~(align - 1));
    if (buf && huge)
        madvise(buf, (size + align - 1) & ~(align - 1), MADV_HUGEPAGE);
    return buf;
}

/* Memory objects and the conversion of one input; a constant is converted right away. */
static gl_status finish_input(dn_ctx *c, const gl_kernel_ctx *k, dn_node *s, dn_in *in)
{
    const char *call = "dnnl_memory_create";
    dnnl_status_t r = dnnl_success;
    if (in->convert) {
        in->buf = converted_alloc(dnnl_memory_desc_get_size(&in->want), in->constant);
        if (!in->buf)
            return gl_fail(GL_ERR_NOMEM, "%s: out of memory converting input %zu", k->where,
                           in->input);
        dnnl_primitive_desc_t pd = NULL;
        call = "dnnl_reorder_primitive_desc_create";
        r = dnnl_reorder_primitive_desc_create(&pd, &in->given, c->engine, &in->want, c->engine,
                                               NULL);
        if (r == dnnl_success && (call = "dnnl_primitive_create"))
            r = dnnl_primitive_create(&in->reorder, pd);
        dnnl_primitive_desc_destroy(pd);
        if (r == dnnl_success && (call = "dnnl_memory_create"))
            r = dnnl_memory_create(&in->from, &in->given, c->engine, DNNL_MEMORY_NONE);
        if (r == dnnl_success)
            r = dnnl_memory_create(&in->to, &in->want, c->engine, in->buf);
    }
    if (r == dnnl_success)
        r = dnnl_memory_create(&in->mem, &in->view, c->engine,
                               in->convert ? in->buf : DNNL_MEMORY_NONE);
    if (r == dnnl_success && in->convert && in->constant) {
        const gl_tensor *t = k->in[in->input];
        call = "dnnl_memory_set_data_handle";
        r = dnnl_memory_set_data_handle(in->from, t->buf ? t->buf->data : NULL);
        if (r == dnnl_success && (call = "reorder of a constant"))
            r = reorder_now(c, in);
        s->const_reorders++;
        s->release_constants = r == dnnl_success;
    }
    return r == dnnl_success ? GL_OK : dn_fail(k->where, call, r);
}

static gl_status finish(dn_ctx *c, const gl_kernel_ctx *k, dn_node *s, dnnl_primitive_desc_t pd)
{
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success)
        impl = NULL;
    const_dnnl_primitive_desc_t then_pd = NULL;
    const char *then_impl = NULL;
    if (s->then && dnnl_primitive_get_primitive_desc(s->then, &then_pd) == dnnl_success &&
        dnnl_primitive_desc_query(then_pd, dnnl_query_impl_info_str, 0, &then_impl) ==
            dnnl_success && then_impl)
        dn_set_impl(c, s, "%s + %s", impl ? impl : "?", then_impl);
    else if (!s->native) /* a native kernel's build named it */
        dn_set_impl(c, s, "%s", impl ? impl : "?");
    dnnl_status_t r = dnnl_primitive_create(&s->prim, pd);
    if (r != dnnl_success)
        return dn_fail(k->where, "dnnl_primitive_create", r);
    for (size_t i = 0; i < s->n_out && r == dnnl_success; i++)
        r = dnnl_memory_create(&s->out[i].mem, &s->out[i].md, c->engine, DNNL_MEMORY_NONE);
    for (size_t i = 0; i < s->n_own && r == dnnl_success; i++)
        r = dnnl_memory_create(&s->own[i].mem, &s->own[i].md, c->engine, s->own[i].buf);
    if (r != dnnl_success)
        return dn_fail(k->where, "dnnl_memory_create", r);
    gl_status st = GL_OK;
    for (size_t i = 0; i < s->n_in && st == GL_OK; i++)
        st = finish_input(c, k, s, &s->in[i]);
    if (st == GL_OK) {
        s->builds++;
        c->builds++;
        atomic_fetch_add(&primitive_builds, 1);
    }
    return st;
}

/* ---- threads per primitive ---------------------------------------------------------------- */

/* A primitive whose work would take less than DN_ONE_THREAD_NS on one thread is made and
 * run on one: OpenMP's fork and join cost more than the second thread saves. Measured
 * with bench/bench_dnnl_threads (2 threads against 1, minimums over interleaved rounds on
 * an AVX-512 machine): a second thread never helped below ~65K elements of a binary
 * add (4.6 µs), a relu of 65K elements took 2.6 µs on one thread and 4.8 on two, a
 * [16,128]x[128,384] matmul 7.5 µs on either, [16,128]x[128,512] 12 on one and 15 on two,
 * [16,512]x[512,128] 10 and 8.3. Between 8 and 16 µs a second thread saves 2 µs at best,
 * and on a loaded machine every parallel region may wait a time slice for a thread that
 * is not scheduled: a transformer layer whose primitives all stay under the line runs
 * no parallel region at all (medians 0.10-0.17 ms where a line at 8 µs left two regions
 * and some runs of 50 had a median of 7-70 ms). The work is estimated from the
 * primitive's descriptors: one thread's nanoseconds per element (elementwise,
 * normalization, pooling: memory bound) or per FLOP. */
#define DN_ONE_THREAD_NS 16000.0

static double md_elems(const dnnl_memory_desc_t *md)
{
    if (!md || md->ndims <= 0)
        return 0;
    double n = 1;
    for (int i = 0; i < md->ndims; i++)
        n *= (double)md->dims[i];
    return n;
}

/* An activation computed through an exponential or a division (a polynomial or rational
 * approximation per element): ~0.5 ns an element on one thread, not a memory-bound op's
 * 0.1. Estimated at 0.1, efficientnet_b0's SiLUs of 56K-130K elements (26-59 us on one
 * thread, graphlab's kernel) stayed on one thread at batch 1 and 2 threads. */
static bool eltwise_transcendental(dnnl_alg_kind_t alg)
{
    static const dnnl_alg_kind_t heavy[] = {
        dnnl_eltwise_tanh,      dnnl_eltwise_elu,       dnnl_eltwise_exp,
        dnnl_eltwise_logistic,  dnnl_eltwise_swish,     dnnl_eltwise_gelu_tanh,
        dnnl_eltwise_gelu_erf,  dnnl_eltwise_log,       dnnl_eltwise_soft_relu,
        dnnl_eltwise_pow,       dnnl_eltwise_mish,      dnnl_eltwise_logsigmoid,
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(heavy); i++)
        if (alg == heavy[i])
            return true;
    return false;
}

/* Nanoseconds the primitive's work takes on one thread, roughly: matmul ~200 GFLOP/s,
 * convolutions (direct kernels on few channels) ~50, a memory-bound op ~10 G elements/s,
 * a transcendental activation ~2 G elements/s. */
static double work_ns(const_dnnl_primitive_desc_t pd)
{
    dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
    if (dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind) != dnnl_success)
        return DN_ONE_THREAD_NS; /* unknown: keep the plan's threads */
    const dnnl_memory_desc_t *src = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *dst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t *w = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    double out = md_elems(dst), in = md_elems(src);
    /* Reading the weights is memory-bound work of its own: a classifier's product of one
     * row ([1,1024] by [1024,1000], shufflenet's Gemm) does few FLOPs on 4 MB. */
    double weights = md_elems(w) * 0.1, flops;
    switch (kind) {
    case dnnl_matmul:
        flops = src && src->ndims >= 2 ? 2.0 * out * (double)src->dims[src->ndims - 1] * 0.005
                                       : DN_ONE_THREAD_NS;
        return flops > weights ? flops : weights;
    case dnnl_convolution:
    case dnnl_deconvolution:
    case dnnl_inner_product:
        /* MACs per output: the weights of one output channel */
        flops = dst && dst->ndims >= 2 && dst->dims[1] > 0
                    ? 2.0 * out * md_elems(w) / (double)dst->dims[1] * 0.02
                    : DN_ONE_THREAD_NS;
        return flops > weights ? flops : weights;
    case dnnl_rnn: {
        /* every step multiplies each row by W and R (weights_md 0 and 1, all directions):
         * lstm_tagger's bidirectional LSTM(64 -> 128) of 32 steps at batch 1, ~63 us,
         * whose directions graphlab's kernel runs on two threads (dn_rnn_avx2.c) */
        const dnnl_memory_desc_t *wi =
            dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1);
        double rows = src && src->ndims == 3 ? (double)(src->dims[0] * src->dims[1]) : 0;
        return 2.0 * rows * (md_elems(w) + md_elems(wi)) * 0.005;
    }
    case dnnl_eltwise: {
        const dnnl_eltwise_desc_t *ed = NULL;
        bool heavy = dnnl_primitive_desc_query(pd, dnnl_query_eltwise_d, 0, &ed) == dnnl_success &&
                     ed && eltwise_transcendental(ed->alg_kind);
        return (in > out ? in : out) * (heavy ? 0.5 : 0.1);
    }
    default:
        return (in > out ? in : out) * 0.1;
    }
}

/* ---- building (continued) -------------------------------------------------------------------- */

/* The op's build on the node's inputs: *pd set unless the node falls back. */
static gl_status build_pd(dn_ctx *c, const gl_kernel_ctx *k, dn_node *s, dnnl_memory_desc_t *md,
                          dnnl_memory_desc_t *held, dnnl_primitive_desc_t *pd)
{
    dn_node_clear(s);
    s->makes_specials = dn_node_makes_specials(k->node);
    bool fits = dn_key_set(s, k);
    dn_build b = {.c = c, .k = k, .s = s, .md = md, .held = held};
    for (size_t i = 0; i < k->n_inputs && fits; i++) {
        const gl_tensor *t = k->in[i];
        if (!t || dn_dtype(t->dtype) == dnnl_data_type_undef)
            continue;
        fits = dn_md_of(t, &held[i]) == dnnl_success;
        md[i] = held[i];
        /* primitives read a view in its dense form: one reorder, in feed_inputs */
        if (fits && t->layout && ((const dn_layout *)t->layout)->view)
            fits = dn_view_dense(c, &held[i], &md[i]) == dnnl_success;
    }
    *pd = NULL;
    if (!fits)
        return dn_refuse(&b, "more than %d dims", DNNL_MAX_NDIMS);
    gl_status st = s->op->build(&b, pd);
    bool views = s->n_out > 0 && s->out[0].view;
    if (st == GL_OK && !s->fallback && !views && !*pd)
        st = gl_fail(GL_ERR_INTERNAL, "%s: the oneDNN build made no primitive", k->where);
    return st;
}

/* Inputs up to this many get their descriptors for a build on the stack (696 bytes
 * each, twice). calloc bypasses glibc's per-thread cache of freed chunks: a pair of
 * callocs per build, freed at once, searched the heap's bins every time (6% of `run` on
 * a 100k-node chain, issue 23). */
#define BUILD_SMALL_ARGS 8

size_t dn_node_reads(const dn_node *s, size_t input)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_in; i++)
        n += s->in[i].input == input;
    return n;
}

/* May output 0 be written over its source's bytes? An eltwise or a binary primitive
 * reads each element of its (first) source before it writes that element of its
 * destination (oneDNN allows dst == src for both), as graphlab's kernels taken on those
 * descriptors do (dn_eltwise.c's, dn_chscale.c). The source must be read as it is
 * stored (no reorder), laid out as the destination, and by that argument only. */
static void allow_over(dn_node *s, const_dnnl_primitive_desc_t pd)
{
    dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
    if (s->n_out != 1 || s->out[0].view || s->out[0].over_ok ||
        dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind) != dnnl_success ||
        (kind != dnnl_eltwise && kind != dnnl_binary))
        return;
    for (size_t i = 0; i < s->n_in; i++) {
        const dn_in *in = &s->in[i];
        if (in->arg != DNNL_ARG_SRC_0) /* DNNL_ARG_SRC too */
            continue;
        if (!in->convert && dnnl_memory_desc_equal(&in->given, &s->out[0].md) &&
            dnnl_memory_desc_equal(&in->view, &s->out[0].md) &&
            dn_node_reads(s, in->input) == 1) {
            s->out[0].over_ok = true;
            s->out[0].over = in->input;
        }
        return;
    }
}

static gl_status build(dn_ctx *c, const gl_kernel_ctx *k, dn_node *s)
{
    size_t n_md = k->n_inputs ? k->n_inputs : 1;
    dnnl_memory_desc_t md_small[BUILD_SMALL_ARGS], held_small[BUILD_SMALL_ARGS];
    bool small = n_md <= BUILD_SMALL_ARGS;
    dnnl_memory_desc_t *md = small ? md_small : gl_xmalloc(n_md * sizeof(*md));
    dnnl_memory_desc_t *held = small ? held_small : gl_xmalloc(n_md * sizeof(*held));
    memset(md, 0, n_md * sizeof(*md));
    memset(held, 0, n_md * sizeof(*held));
    dnnl_primitive_desc_t pd = NULL;
    gl_status st = build_pd(c, k, s, md, held, &pd);
    bool views = st == GL_OK && !s->fallback && s->n_out > 0 && s->out[0].view;
    /* Small work: made again under one thread (oneDNN sizes a primitive's partition of
     * the work and its scratchpad by the threads it is made with). */
    int threads = 0;
    double ns = st == GL_OK && !s->fallback && !views ? work_ns(pd) : 0;
    if (st == GL_OK && !s->fallback && !views && c->max_threads > 1 && ns < DN_ONE_THREAD_NS) {
        dnnl_primitive_desc_destroy(pd);
        threads = 1;
        dn_ctx_threads(c, threads);
        st = build_pd(c, k, s, md, held, &pd);
    }
    if (st == GL_OK && !s->fallback && views)
        s->impl = "view";
    else if (st == GL_OK && !s->fallback)
        st = finish(c, k, s, pd);
    if (st == GL_OK && !s->fallback && !views)
        allow_over(s, pd);
    dn_ctx_threads(c, 0);
    dnnl_primitive_desc_destroy(pd);
    if (!small) {
        free(md);
        free(held);
    }
    if (st != GL_OK) {
        dn_node_clear(s);
        return st;
    }
    if (s->fallback)
        s->impl = "ref";
    else if ((s->threads = threads) && !s->note[0])
        dn_set_note(c, s, "1 thread: ~%.1f us of work", ns / 1000);
    s->built = true;
    s->generation++;
    return GL_OK;
}

/* ---- running ---------------------------------------------------------------------------------- */

/* Inputs up to this many convert into arrays on the stack. */
#define REF_SMALL_ARGS 16

/* Reference kernel `def` on plain copies of the inputs (the ones in our layouts). */
static gl_status run_reference(dn_ctx *c, gl_kernel_ctx *k, dn_node *s, const gl_op_def *def)
{
    /* The common case, small plain tensors below DN_OPS_SMALL, costs the kernel only:
     * no clock read, no allocation. */
    bool any_layout = false;
    for (size_t i = 0; i < k->n_inputs; i++)
        any_layout = any_layout || (k->in[i] && k->in[i]->layout);
    if (!any_layout)
        return def->kernel(k);
    size_t n = k->n_inputs;
    const gl_tensor *plain_small[REF_SMALL_ARGS];
    gl_tensor *owned_small[REF_SMALL_ARGS] = {NULL};
    const gl_tensor **plain = n <= REF_SMALL_ARGS ? plain_small : gl_xmalloc(n * sizeof(*plain));
    gl_tensor **owned = n <= REF_SMALL_ARGS ? owned_small : gl_xcalloc(n, sizeof(*owned));
    gl_status st = GL_OK;
    uint64_t t0 = gl_now_ns();
    gl_tensor headers_small[REF_SMALL_ARGS];
    gl_tensor *headers = !s->dims_only ? NULL
                         : n <= REF_SMALL_ARGS ? headers_small
                                               : gl_xmalloc(n * sizeof(*headers));
    for (size_t i = 0; i < n; i++) {
        plain[i] = k->in[i];
        if (headers && k->in[i]) {
            headers[i] = *k->in[i];
            headers[i].layout = NULL; /* the bytes are not read */
            plain[i] = &headers[i];
        } else if (st == GL_OK && k->in[i] && k->in[i]->layout) {
            plain[i] = owned[i] = dn_to_plain(c, k->in[i], NULL);
            if (!owned[i])
                st = GL_ERR_INTERNAL;
            k->reorders++;
        }
    }
    k->reorder_ns += gl_now_ns() - t0;
    const gl_tensor *const *given = k->in;
    if (st == GL_OK) {
        k->in = plain;
        st = def->kernel(k);
        k->in = given;
    }
    for (size_t i = 0; i < n; i++)
        gl_tensor_free(owned[i]);
    if (plain != plain_small)
        free(plain);
    if (owned != owned_small)
        free(owned);
    if (headers != headers_small)
        free(headers);
    return st;
}

static gl_status set_handle(const gl_kernel_ctx *k, dnnl_memory_t mem, void *data)
{
    dnnl_status_t r = dnnl_memory_set_data_handle(mem, data);
    return r == dnnl_success ? GL_OK : dn_fail(k->where, "dnnl_memory_set_data_handle", r);
}

void dn_node_scratch(const dn_node *s, gl_scratch_fn fn, void *arg)
{
    for (size_t i = 0; i < s->n_in; i++)
        if (s->in[i].convert && !s->in[i].constant && s->in[i].buf)
            fn(arg, s->in[i].buf, dnnl_memory_desc_get_size(&s->in[i].want));
    for (size_t i = 0; i < s->n_out; i++)
        gl_scratch_slot(&s->out[i].slot, fn, arg);
}

/* Output o over the input its build allowed (dn_out.over), when the executor allows it
 * too and no other input of this kernel holds those bytes (the same value in two of a
 * fused unit's slots, a view of it). */
static gl_buffer *take_over(gl_kernel_ctx *k, const dn_out *o, size_t bytes)
{
    const gl_tensor *x = o->over < k->n_inputs ? k->in[o->over] : NULL;
    if (!k->alloc_over || !x || !x->buf)
        return NULL;
    for (size_t j = 0; j < k->n_inputs; j++)
        if (j != o->over && k->in[j] && k->in[j]->buf == x->buf)
            return NULL;
    return k->alloc_over(k, o->output, x, bytes);
}

/* Lend a buffer to output o and wrap it as the node's output tensor: a Concat's slice,
 * else an input's bytes it may be written over, else a unit's scratch (an inner
 * primitive of a fused unit), else the executor's (its shelves: the bytes an earlier
 * output of the run had, still in cache), else the node's own. */
static gl_status take_output(gl_kernel_ctx *k, dn_out *o)
{
    if (o->into) {
        const gl_tensor *t = k->out[o->output];
        if (!t || !t->buf || t->buf->size < dnnl_memory_desc_get_size(&o->md))
            return gl_fail(GL_ERR_INTERNAL, "%s: output %zu has no tensor to write into",
                           k->where, o->output);
        return set_handle(k, o->mem, t->buf->data);
    }
    const gl_value *v = k->node->outputs[o->output];
    gl_dtype dt = dn_gl_dtype(o->md.data_type); /* float32, or an int8 product's */
    if (gl_limits_check_output(k->where, v ? v->name : NULL, dt, o->rank, o->dims) != GL_OK)
        return GL_ERR_NOMEM;
    size_t bytes = dnnl_memory_desc_get_size(&o->md);
    gl_buffer *buf = dn_place_lend(k->backend_ctx, v, &o->md, bytes);
    if (!buf && o->over_ok)
        buf = take_over(k, o, bytes);
    if (!buf && o->scratch)
        buf = dn_unit_scratch_lend(k->backend_ctx, o->scratch - 1, bytes);
    if (!buf)
        buf = k->alloc ? k->alloc(k, o->output, bytes, true)
                       : gl_buffer_from_slot(&o->slot, bytes, false);
    if (!buf)
        return gl_error_prefix("%s: output %zu", k->where, o->output), GL_ERR_NOMEM;
    int64_t count = 1;
    for (int d = 0; d < o->rank; d++)
        count *= o->dims[d];
    gl_tensor *t = gl_tensor_wrap(dt, o->rank, o->dims, count, buf);
    t->layout = o->layout;
    gl_tensor_free(k->out[o->output]);
    k->out[o->output] = t;
    return set_handle(k, o->mem, buf->data);
}

gl_status dn_take_outputs(gl_kernel_ctx *k, dn_node *s)
{
    gl_status st = GL_OK;
    for (size_t i = 0; i < s->n_out && st == GL_OK; i++)
        st = take_output(k, &s->out[i]);
    return st;
}

gl_status dn_node_adopt(dn_ctx *c, gl_kernel_ctx *k, dn_node *s)
{
    gl_status st = GL_OK;
    for (size_t i = 0; i < s->n_out && st == GL_OK; i++) {
        dn_out *o = &s->out[i];
        gl_tensor *plain = k->out[o->output];
        if (!o->layout || o->into || !plain)
            continue; /* plain: the reference wrote the primitive's bytes */
        k->out[o->output] = NULL;
        st = take_output(k, o);
        /* the layout's descriptor: the primitive may write the same bytes as another
         * (a quantization's flat vector, dn_quant.c) */
        if (st == GL_OK)
            st = dn_from_plain(c, plain, &((const dn_layout *)o->layout)->md,
                               k->out[o->output]->buf->data, k->where);
        gl_tensor_free(plain);
    }
    return st;
}

/* A run whose inputs hold a NaN or an infinity the primitive would get wrong: the
 * reference kernel, its outputs in the primitive's layouts. */
static gl_status run_reference_as_built(dn_ctx *c, gl_kernel_ctx *k, dn_node *s)
{
    c->special_runs++;
    gl_status st = run_reference(c, k, s, s->special_ref);
    return st == GL_OK ? dn_node_adopt(c, k, s) : st;
}

/* Point the inputs at this run's tensors; convert those whose layout differs. */
static gl_status feed_inputs(dn_ctx *c, gl_kernel_ctx *k, dn_node *s)
{
    uint64_t t0 = 0;
    unsigned converted = 0;
    for (size_t i = 0; i < s->n_in; i++) {
        dn_in *in = &s->in[i];
        const gl_tensor *t = k->in[in->input];
        /* oneDNN takes non-const handles; inputs are only read. */
        void *data = t && t->buf ? t->buf->data : NULL;
        if (!in->convert) {
            gl_status st = set_handle(k, in->mem, data);
            if (st != GL_OK)
                return st;
            continue;
        }
        if (in->constant)
            continue; /* converted once, at build */
        if (!converted++)
            t0 = gl_now_ns();
        gl_status st = set_handle(k, in->from, data);
        dnnl_status_t r = st == GL_OK ? reorder_now(c, in) : dnnl_success;
        if (st == GL_OK && r != dnnl_success)
            st = dn_fail(k->where, "reorder of an input", r);
        if (st != GL_OK)
            return st;
    }
    if (converted) {
        k->reorder_ns += gl_now_ns() - t0;
        k->reorders += converted;
    }
    return GL_OK;
}

/* The outputs of a view node: its input's buffer under new dims and description. */
static gl_status take_views(gl_kernel_ctx *k, dn_node *s)
{
    for (size_t i = 0; i < s->n_out; i++) {
        dn_out *o = &s->out[i];
        const gl_tensor *x = k->in[o->from];
        int64_t count = 1;
        for (int d = 0; d < o->rank; d++)
            count *= o->dims[d];
        gl_tensor *t = gl_tensor_wrap(x->dtype, o->rank, o->dims, count, /* float32, int8 */
                                      x->buf ? gl_buffer_ref(x->buf) : NULL);
        t->layout = o->layout;
        gl_tensor_free(k->out[o->output]);
        k->out[o->output] = t;
    }
    return GL_OK;
}

/* The native kernel on the bound inputs' and output 0's bytes (after the input
 * reorders, which run on the stream: waited for first). */
static gl_status execute_native(dn_ctx *c, gl_kernel_ctx *k, dn_node *s)
{
    const void *src[64];
    void *dst = NULL;
    dnnl_status_t r = dnnl_stream_wait(c->stream);
    for (size_t i = 0; i < s->n_in && i < GL_ARRAY_LEN(src) && r == dnnl_success; i++)
        r = dnnl_memory_get_data_handle(s->in[i].mem, (void **)&src[i]);
    if (r == dnnl_success)
        r = dnnl_memory_get_data_handle(s->out[0].mem, &dst);
    if (r != dnnl_success)
        return dn_fail(k->where, "dnnl_memory_get_data_handle", r);
    s->native(s->extra, src, dst);
    return GL_OK;
}

static gl_status execute_as_built(dn_ctx *c, gl_kernel_ctx *k, dn_node *s)
{
    if (!s->prim)
        return take_views(k, s);
    gl_status st = dn_take_outputs(k, s);
    if (st == GL_OK && s->op->prepare)
        st = s->op->prepare(k, s);
    if (st == GL_OK)
        st = feed_inputs(c, k, s);
    if (st != GL_OK)
        return st;
    dnnl_exec_arg_t args[64];
    size_t n = 0;
    for (size_t i = 0; i < s->n_in && n < GL_ARRAY_LEN(args); i++)
        args[n++] = (dnnl_exec_arg_t){s->in[i].arg, s->in[i].mem};
    for (size_t i = 0; i < s->n_out && n < GL_ARRAY_LEN(args); i++)
        args[n++] = (dnnl_exec_arg_t){s->out[i].arg, s->out[i].mem};
    for (size_t i = 0; i < s->n_own && n < GL_ARRAY_LEN(args); i++)
        args[n++] = (dnnl_exec_arg_t){s->own[i].arg, s->own[i].mem};
    if (n != s->n_in + s->n_out + s->n_own)
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: more than %zu oneDNN arguments", k->where,
                       GL_ARRAY_LEN(args));
    if (s->native)
        return execute_native(c, k, s);
    dnnl_status_t r = dnnl_primitive_execute(s->prim, c->stream, (int)n, args);
    if (r == dnnl_success && s->then) {
        dnnl_exec_arg_t in_place[3] = {{DNNL_ARG_SRC, s->out[0].mem},
                                       {DNNL_ARG_DST, s->out[0].mem},
                                       {DNNL_ARG_SRC_1, s->then_src1}};
        r = dnnl_primitive_execute(s->then, c->stream, s->then_src1 ? 3 : 2, in_place);
    }
    if (r == dnnl_success)
        r = dnnl_stream_wait(c->stream);
    return r == dnnl_success ? GL_OK : dn_fail(k->where, "dnnl_primitive_execute", r);
}

/* Under the threads the primitive (and its input reorders) was made with. */
static gl_status execute(dn_ctx *c, gl_kernel_ctx *k, dn_node *s)
{
    if (!s->threads)
        return execute_as_built(c, k, s);
    dn_ctx_threads(c, s->threads);
    gl_status st = execute_as_built(c, k, s);
    dn_ctx_threads(c, 0);
    return st;
}

gl_status dn_node_ready(dn_ctx *c, const gl_kernel_ctx *k, dn_node *s, bool *rebuilt)
{
    *rebuilt = !s->built || !dn_key_matches(s, k);
    return *rebuilt ? build(c, k, s) : GL_OK;
}

/* The node reads its converted copies of its constants from now on: mapped originals
 * (external data) need not stay resident next to them. Done after the first run, not
 * at the reorder: the first run looks at the constants for NaN (dn_inputs_look), which
 * would page them in again. */
static void release_converted_constants(const gl_kernel_ctx *k, dn_node *s)
{
    for (size_t i = 0; i < s->n_in; i++)
        if (s->in[i].constant && s->in[i].convert && k->in[s->in[i].input])
            gl_buffer_release_pages(k->in[s->in[i].input]->buf);
    s->release_constants = false;
}

gl_status dn_node_exec_known(dn_ctx *c, gl_kernel_ctx *k, dn_node *s, dn_inputs known,
                             bool *finite)
{
    bool drops = s->special_ref && !s->fallback;
    dn_inputs in = known == DN_INPUTS_UNKNOWN ? dn_inputs_look(c, k, &s->specials, drops)
                                              : known;
    gl_status st = s->fallback                          ? run_reference(c, k, s, s->fallback)
                   : drops && in == DN_INPUTS_SPECIAL ? run_reference_as_built(c, k, s)
                                                      : execute(c, k, s);
    if (s->release_constants)
        release_converted_constants(k, s);
    *finite = in == DN_INPUTS_FINITE && !s->makes_specials;
    return st;
}

gl_status dn_node_exec(dn_ctx *c, gl_kernel_ctx *k, dn_node *s)
{
    bool finite;
    return dn_node_exec_known(c, k, s, DN_INPUTS_UNKNOWN, &finite);
}

gl_status dn_node_run(dn_ctx *c, gl_kernel_ctx *k, dn_node *s)
{
    bool rebuilt, finite = false;
    gl_status st = dn_node_ready(c, k, s, &rebuilt);
    if (st == GL_OK && strcmp(s->op->op, "Concat") == 0 && !*s->op->domain &&
        dn_concat_in_place(c, k, s)) {
        dn_vouch(c, k, false);
        return GL_OK;
    }
    if (st == GL_OK)
        st = dn_node_exec_known(c, k, s, DN_INPUTS_UNKNOWN, &finite);
    dn_vouch(c, k, st == GL_OK && finite);
    return st;
}

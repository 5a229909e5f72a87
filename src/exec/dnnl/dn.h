/* dn.h — inside the oneDNN backend: the plan's context, one node's primitive, and the
 * table of ops. backend_dnnl.c is the backend (claims, run, describe); dn_node.c the
 * machinery every op shares; one file per op family (dn_conv.c, dn_matmul.c, ...) says
 * how its ops become primitives.
 *
 * How a node runs. The first run (and any run whose input shapes or layouts differ from
 * the last build: the shape guard) builds: the op's build function turns the node's
 * attributes and the memory descriptors of its inputs into a primitive descriptor and
 * binds each primitive argument — a node input (as it arrives, or converted to the
 * layout the primitive wants), an output (a buffer the node keeps and lends again every
 * run), or a buffer the op fills itself (Gemm's scaled bias, BatchNormalization's
 * scale/shift). Constant inputs (initializers: weights, biases) are converted once, at
 * build: a run never reorders a constant again. Then every run only points the memory
 * objects at this run's buffers, converts the non-constant inputs whose layout differs,
 * executes and waits.
 *
 * Layouts. Activations of rank 4 and 5 stay in the plan's activation layout (nhwc, or
 * oneDNN's blocked nChw16c/nChw8c) from one primitive to the next; the policy is chosen
 * per plan (dn_cost.c: by estimated cost, or --layout). A tensor in a non-plain layout carries an
 * interned dn_layout (gl_tensor.layout) with its memory descriptor; the executor hands
 * it back only to this backend, and converts it (dn_to_plain) for anyone else.
 *
 * Views. A data-movement node (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice)
 * whose output is its input's bytes under another descriptor — oneDNN's descriptors
 * carry strides and an offset — is a view: no primitive, no copy, `view` in the plan
 * (dn_view.c states the rule: when a view, when one reorder instead). A descriptor no
 * primitive should read as it is (strided, offset, an unusual order) is marked a view
 * layout: builds see its dense form (dn_build.md; dn_build.held has it as it is) and the
 * node reorders it once; ops that read views as they are (the movement ops, Concat) use
 * held. Small integer inputs are keyed by value, so a build may read a shape or slice
 * bounds that nodes compute each run. The other way round, a channel Concat may be
 * written in place: its inputs' producers write into their slices of one buffer and it
 * outputs its range, `in place` in the plan (dn_concat.c).
 *
 * Dtypes. Activations are float32, except the int8 products (dn_qprod.c: QDQ groups,
 * QLinearConv, QLinearMatMul) and QAdd groups (dn_qadd.c) that read and write u8/s8
 * tensors, nhwc for convolutions; max pooling and the movement ops pass u8/s8 tensors
 * through in their layout. Descriptors, outputs and the conversions to plain follow a
 * tensor's dtype.
 *
 * When oneDNN cannot run a node as asked — a configuration it does not implement, a
 * dtype other than float32, a shape a primitive does not take, an implementation that
 * would be oneDNN's slow reference (ref:any) where ours is as good, a tensor too small
 * to pay for the threads — the node runs the registry's reference kernel on plain
 * copies of its inputs, and the plan says why (dn_node.note).
 */
#ifndef GL_DN_H
#define GL_DN_H

#include "exec/exec.h"
#include "ops/opkit.h"
#include "util/text_pool.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- the plan's context ------------------------------------------------------------- */

typedef enum dn_policy { DN_LAYOUT_PLAIN, DN_LAYOUT_NHWC, DN_LAYOUT_BLOCKED } dn_policy;

/* A non-plain layout a tensor can carry: interned per context, freed with it. */
typedef struct dn_layout {
    gl_tensor_layout base;   /* first: gl_tensor.layout points here */
    dnnl_memory_desc_t md;   /* dims are the tensor's (ONNX) dims */
    char name[24];           /* "nChw16c", "nhwc" */
    /* A view's description (dn_view.c): strided, offset or in an order no primitive is
     * asked to read; builds see its dense form and the input is reordered to it. */
    bool view;
    /* The reorder of this layout to plain row-major, made on first need. */
    dnnl_primitive_t to_plain;
    dnnl_memory_t from, to;
    struct dn_layout *next;
} dn_layout;

/* Values a oneDNN node of the plan vouched for at its last run (dn_special.c). */
typedef struct dn_vouched {
    const gl_value **keys;
    bool *finite;
    size_t cap, n;
} dn_vouched;

typedef struct dn_places dn_places;

#define DN_UNIT_SCRATCH 16 /* positions: the primitives of a unit (dn_fused.c's MAX_SEGS) */

typedef struct dn_ctx {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dn_policy policy;
    bool by_cost;            /* --layout auto chose the policy by estimated cost (dn_cost.c) */
    char policy_why[320];
    int block;               /* channel block of the blocked layout (8 or 16) */
    bool avx2;               /* block 8: oneDNN runs its AVX2 kernels (no AVX-512: no
                              * Winograd, the layout cost's AVX2 column) */
    bool has_avx2;           /* the CPU runs AVX2 (AVX-512 ones too): graphlab's kernels
                              * that beat oneDNN on either ISA may run (dn_gpool.c,
                              * dn_chscale.c) */
    int64_t batch;           /* gl_exec_options.batch: the run's symbolic batch (0: unknown) */
    int threads;             /* as asked (0: OpenMP's default) */
    int max_threads;         /* what primitives run with unless they are small (dn_node.c) */
    void (*set_threads)(int); /* omp_set_num_threads, NULL when not found */
    dn_layout *layouts;      /* interned */
    size_t builds;           /* primitives built by this plan */
    char *fault, *delay;     /* gl_exec_options.dnnl_fault/dnnl_delay (owned), or NULL */
    /* Node runs (or a unit's) sent to the reference kernels by a NaN or an infinity in
     * their inputs (dn_special.c), which the plan's summary counts: a model whose every
     * run takes them (a -inf mask before a softmax) says so. */
    unsigned long special_runs;
    long delay_plans;        /* dnnl.delay=NAME@N: only the first N plans delay (0: all) */
    int delay_state;         /* 0: not yet reached NAME, 1: delays, -1: past N, never */
    bool no_winograd;        /* gl_exec_options.dnnl_no_winograd, or AVX2: no oneDNN
                              * Winograd */
    bool no_own_winograd;    /* gl_exec_options.dnnl_no_winograd: nor graphlab's
                              * (dn_wino.c) */
    bool weights_in_place;   /* gl_exec_options.dnnl_weights_in_place */
    dn_vouched vouched;      /* outputs free of NaN and infinities, this run */
    dn_places *places;       /* channel Concats written in place (dn_concat.c), or NULL */
    /* Where the inner primitives of fused units write (dn_fused.c): a buffer per position
     * in a unit, shared by every unit of the plan. A unit's intermediates die with it, so
     * the next unit writes into the bytes the last one just read (still in cache), not
     * into a buffer of its own last touched a run ago. Each grows to the largest asked. */
    gl_buffer *unit_scratch[DN_UNIT_SCRATCH];
    gl_text_pool texts;      /* what the plan shows of the nodes (dn_describe) */
} dn_ctx;

/* A view of `bytes` of unit scratch `pos` for an inner primitive's output, or NULL when
 * none can be had (that position's bytes are still out, or memory ran out): the node's
 * own buffer then. */
gl_buffer *dn_unit_scratch_lend(dn_ctx *c, size_t pos, size_t bytes);
/* The unit scratch not out as scratch pages (gl_backend.scratch). */
void dn_unit_scratch_scratch(const dn_ctx *c, gl_scratch_fn fn, void *arg);

/* The plan's activation layout for a tensor of `rank` dims: a format tag, or
 * dnnl_format_tag_undef when activations of that rank stay plain. */
dnnl_format_tag_t dn_act_tag(const dn_ctx *c, int rank);
/* A convolution as the layout cost model sees it (dn_cost.c): batch, channels, group,
 * kernel elements, input and output spatial elements. */
typedef struct dn_conv_dims {
    int64_t n, ic, oc, group, ksize, in_spatial, out_spatial;
    /* Blocked activations run it with Winograd (dn_winograd_fits, unless --set
     * dnnl.winograd=0). */
    bool winograd;
    /* oneDNN runs its AVX2 kernels here (dn_ctx.avx2): the cost table's AVX2 column. */
    bool avx2;
    /* a ConvTranspose: ic and oc as the convolution it transposes would read and write
     * them, in_spatial its input's, out_spatial its output's */
    bool transposed;
} dn_conv_dims;
/* A convolution oneDNN 2.6 runs faster with Winograd than direct on blocked activations
 * (bench/bench_dnnl_layout: 1.1-2.6x): 2-D 3x3, stride 1, no dilation, no groups, 32 or
 * more channels in and out (with 16, the direct kernel is as fast). */
bool dn_winograd_fits(int nsp, const int64_t *kernel, const int64_t *stride,
                      bool dilated, int64_t group, int64_t ic, int64_t oc);
/* Its estimated time in microseconds with activations in policy p's layout. */
double dn_conv_cost_us(const dn_conv_dims *d, dn_policy p);
/* The row of the cost table it falls in ("1x1, < 128 input channels"). */
const char *dn_conv_cost_kind(const dn_conv_dims *d);
/* --layout auto: set c->policy, c->policy_why and c->by_cost from the model's
 * convolutions and Concats. */
void dn_choose_layout(dn_ctx *c, const gl_model *m);
/* The interned layout of md (NULL when md is plain row-major over its dims). */
const gl_tensor_layout *dn_layout_of(dn_ctx *c, const dnnl_memory_desc_t *md);

/* Images of a batch (dn_slice.c). How many images at a time a unit of primitives runs
 * whose intermediate takes `bytes` at the whole batch: `batch` (all at once) unless the
 * intermediate would leave the cache, else a divisor of batch. */
int64_t dn_slice_images(int64_t batch, size_t bytes);
/* Whether md's images are its outermost dimension, dense and back to back (nchw, nhwc,
 * nChw8c; not a view): a run of images is then one range of bytes. */
bool dn_md_batch_outer(const dnnl_memory_desc_t *md);
/* md with `batch` images (md's batch outermost). */
void dn_md_with_batch(const dnnl_memory_desc_t *md, int64_t batch, dnnl_memory_desc_t *out);
/* Images [first, first + n) of t (its batch outermost) as a tensor of their own, in the
 * layout of n images, over t's bytes (a view of its buffer). */
gl_tensor *dn_slice_of(dn_ctx *c, const gl_tensor *t, int64_t first, int64_t n);
/* The descriptor of a tensor as it is stored: its layout's, or plain row-major (of its
 * dtype: f32, u8, s8 or s32; dnnl_unimplemented for a dtype oneDNN has not). */
dnnl_status_t dn_md_of(const gl_tensor *t, dnnl_memory_desc_t *md);
/* oneDNN's element type for a dtype (dnnl_data_type_undef: none), and back (f32 for any
 * other). dn_md_retype gives md (f32 as dn_md_plain/dn_md_tag make it) another one. */
dnnl_data_type_t dn_dtype(gl_dtype dt);
gl_dtype dn_gl_dtype(dnnl_data_type_t dt);
dnnl_status_t dn_md_retype(dnnl_memory_desc_t *md, gl_dtype dt);
dnnl_status_t dn_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                          const int64_t *strides);
dnnl_status_t dn_md_tag(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                        dnnl_format_tag_t tag);
/* The 4-D layouts graphlab's own AVX2 kernels (max and average pooling, global average
 * pooling, Winograd, the channel scale) read and write: channels in vectors of 8 (nChw8c)
 * or last (nhwc); and, for the kernels that take two vectors a pixel (pooling, global
 * average pooling), AVX-512's block, nChw16c, when asked for (`wide`). */
typedef enum { DN_OWN_NONE = -1, DN_OWN_NCHW8C, DN_OWN_NHWC, DN_OWN_NCHW16C } dn_own_layout;
/* Which own layout md is over the 4-D dims (nChw16c only when wide), or DN_OWN_NONE. */
dn_own_layout dn_md_own_layout(const dnnl_memory_desc_t *md, const int64_t *dims, bool wide);
/* The own layout of both the pd's source (over xd) and its destination (over yd); else
 * DN_OWN_NONE (such a kernel writes its source's layout). */
dn_own_layout dn_pd_own_layout(const_dnnl_primitive_desc_t pd, const int64_t *xd,
                               const int64_t *yd, bool wide);
dnnl_format_tag_t dn_own_layout_tag(dn_own_layout l);
/* The floats of one pixel's vector run: 8, 16 (blocked), 0 (nhwc: all of its channels). */
int dn_own_layout_lanes(dn_own_layout l);
const char *dn_own_layout_name(dn_own_layout l); /* "nChw8c", "nhwc", "nChw16c" (the plan's impl) */
/* md lays out its dims densely in row-major order (strides of size-1 dims ignored):
 * the bytes are what a plain gl_tensor of those dims holds. */
bool dn_md_is_plain(const dnnl_memory_desc_t *md);
/* "nChw16c", "nhwc", "plain", "any" */
void dn_md_name(const dnnl_memory_desc_t *md, char *buf, size_t len);
gl_tensor *dn_to_plain(void *ctx, const gl_tensor *t, gl_buffer_slot *slot);
gl_status dn_ctx_create(const gl_model *m, const gl_exec_options *o, void **out);
/* Make and run the primitives that follow with n threads (0: the plan's count). */
void dn_ctx_threads(dn_ctx *c, int n);
/* graphlab's own kernels beside oneDNN's primitives run on the same OpenMP (libgomp)
 * threads, at the count the plan set for the node (dn_ctx_threads): fn(arg, lo, hi,
 * thread) over [0, n) in contiguous ranges, one per thread (numbered from 0), at most
 * max_threads of them (0: no limit; a kernel's per-thread scratch sets one), and never
 * more threads than items. */
typedef void dn_range_fn(void *arg, int64_t lo, int64_t hi, int thread);
void dn_parallel_for(int64_t n, int max_threads, dn_range_fn *fn, void *arg);
void dn_ctx_free(void *ctx);
void dn_ctx_summary(const void *ctx, char *buf, size_t len);
gl_status dn_fail(const char *where, const char *call, dnnl_status_t s);
/* The CPU has int8 dot products (VNNI): oneDNN 2.6's int8 kernels are exact only then. */
bool dn_cpu_has_vnni(void);

/* ---- one node ------------------------------------------------------------------------ */

#define DN_MAX_OUTPUTS 4
#define DN_MAX_OWN 8 /* dn_rnn.c: W, R, B, P, zero states, scratch outputs */

/* A primitive argument fed by a node input. */
typedef struct dn_in {
    int arg;                  /* DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, ... */
    size_t input;             /* node input index */
    dnnl_memory_desc_t given; /* as the tensor is stored */
    dnnl_memory_desc_t want;  /* the layout the primitive reads it in (same dims) */
    dnnl_memory_desc_t view;  /* what the primitive sees of those bytes (may reshape) */
    bool convert;             /* want differs from given: a reorder every run, or once */
    bool constant;            /* an initializer: converted once, at build */
    dnnl_primitive_t reorder;
    dnnl_memory_t from, to, mem; /* mem: the view the primitive reads */
    void *buf;                /* converted bytes (owned) */
} dn_in;

/* A primitive argument that is a node output: written into buffers the node lends. Or a
 * view (dn_bind_view): input `from`'s bytes under another description, no primitive. */
typedef struct dn_out {
    int arg;
    size_t output;            /* node output index */
    bool view;
    size_t from;              /* a view: the node input it shares */
    dnnl_memory_desc_t md;    /* as the primitive writes it */
    int rank;                 /* the ONNX dims of the output tensor */
    int64_t dims[DNNL_MAX_NDIMS];
    const gl_tensor_layout *layout; /* interned; NULL when plain */
    /* Write into the tensor already in the kernel's output (one a unit's earlier
     * primitive made, md alike) rather than a buffer of the node's own. */
    bool into;
    /* May be written over input `over`'s bytes (gl_kernel_ctx.alloc_over), as the build
     * found (dn_node.c's allow_over, a sum post-op's operand in dn_fused.c). */
    bool over_ok;
    size_t over;
    /* 1 + the unit scratch position it is written into (dn_ctx.unit_scratch), 0: none */
    unsigned scratch;
    dnnl_memory_t mem;
    gl_buffer_slot slot; /* the buffer between runs when the executor lends none */
} dn_out;

/* A primitive argument the op fills itself (from constants at build, or per run). */
typedef struct dn_own {
    int arg;
    dnnl_memory_desc_t md;
    dnnl_memory_t mem;
    void *buf;                /* owned */
    size_t bytes;
} dn_own;

/* Integer inputs of up to this many elements are part of the key by value: a build may
 * read them (Reshape's shape, Slice's starts) even when a node computes them each run. */
#define DN_KEY_VALS 8
/* Does the shape guard key tensor t by its values (an integer tensor of at most
 * DN_KEY_VALS elements, plain)? */
bool dn_key_by_value(const gl_tensor *t);

/* One input's shape and layout as a build saw it (the shape guard compares them). */
typedef struct dn_key {
    bool present;
    gl_dtype dtype;
    int rank;
    int64_t dims[DNNL_MAX_NDIMS];
    const gl_tensor_layout *layout;
    int n_vals;               /* -1: not kept by value */
    int64_t vals[DN_KEY_VALS];
} dn_key;

typedef struct dn_op dn_op;

/* Do a node's inputs hold a NaN or an infinity (dn_special.c)? Its constants are looked
 * at once per build. */
typedef struct dn_special_check {
    bool consts_known, consts_special;
    /* The primitive gets -inf right (softmax: exp(-inf) is 0 on its kernels, a masked
     * attention score): an input holding -inf is no reason for the reference kernel,
     * only a NaN or +inf is. Set by the build. */
    bool neg_inf_ok;
} dn_special_check;

/* What is known of a node's float inputs this run: all free of NaN and infinities, one
 * holding one (known only by looking), or neither known; DN_INPUTS_NEG_INF: looked at,
 * some hold -inf and none a NaN or +inf, which a node with neg_inf_ok runs as built (its
 * outputs vouched for by nobody). */
typedef enum dn_inputs {
    DN_INPUTS_FINITE,
    DN_INPUTS_UNKNOWN,
    DN_INPUTS_SPECIAL,
    DN_INPUTS_NEG_INF
} dn_inputs;

typedef struct dn_node {
    const dn_op *op;
    bool built;
    dn_key *key;              /* one per node input */
    size_t n_key;
    dnnl_primitive_t prim;
    dnnl_primitive_t then;    /* run after prim, in place on output 0 (NULL: none): an
                               * eltwise step that oneDNN 2.6 takes as a post-op only on
                               * its reference kernel (dn_eltwise.c), or a binary one with
                               * then_src1 as its second operand (dn_deconv.c's bias) */
    dnnl_memory_t then_src1;  /* owned, with its bytes then_buf (NULL: an eltwise then) */
    void *then_buf;
    /* graphlab's own kernel run instead of prim (NULL: prim runs), where oneDNN's is
     * slow (dn_pool.c: max pooling on AVX2; dn_nary.c: concat of plain strides): the
     * bytes of the bound inputs (n_in of them, in binding order) and of output 0, the
     * node's extra. prim is still made: it stands for "built", and its descriptors are
     * the bindings'. */
    void (*native)(void *extra, const void *const *src, void *dst);
    dn_in *in;                /* owned */
    size_t n_in, cap_in;
    /* DN_MAX_OUTPUTS and DN_MAX_OWN entries, allocated by the first bind (NULL before):
     * inline they made every node ~9.5 KB, and a node that runs the reference kernel binds
     * none (a 100k-node chain held 1 GB of them, issue 23). Freed by dn_node_clear. */
    dn_out *out;
    size_t n_out;
    dn_own *own;
    size_t n_own;
    /* Run on the reference kernel instead (with the reason in note). */
    const gl_op_def *fallback;
    /* The primitive gets a NaN or an infinity wrong (dn_special.c): a run whose inputs
     * hold one takes this reference kernel instead (NULL: the primitive runs them). */
    const gl_op_def *special_ref;
    dn_special_check specials;
    bool makes_specials;      /* its op may make one out of finite inputs */
    bool dims_only;           /* ... which reads only its inputs' dims (Shape): given their
                               * headers, not plain copies */
    /* What the plan shows (dn_describe): texts interned in the plan's context (dn_set_impl,
     * dn_set_note), "" when none. Char arrays here made every node 256 bytes longer (25 MB
     * for a 100k-node chain whose nodes all say the same, issue 23). */
    const char *impl;
    const char *note;
    int threads;              /* made and run with this many (0: the plan's count) */
    unsigned builds, const_reorders;
    bool release_constants;   /* constants converted at the last build: their mapped
                               * pages go after the next run (dn_node.c) */
    unsigned generation;      /* every build or refusal: describe's cue */
    /* Op-specific data, freed with the build (may be NULL). */
    void *extra;
    void (*extra_free)(void *extra);
} dn_node;

/* How many of s's primitive arguments read node input `input`. */
size_t dn_node_reads(const dn_node *s, size_t input);

typedef struct dn_build dn_build;
typedef struct dn_post dn_post;

/* The post-ops of a fused unit (dn_fused.c) that its head op's primitive takes after its
 * own: `posts` fills post[] (at most cap) for a destination of ONNX dims (rank, dims) and
 * returns how many, or -1 when they do not fit that destination (the unit says why). */
typedef struct dn_tail {
    int (*posts)(struct dn_tail *t, dn_build *b, int rank, const int64_t *dims, dn_post *post,
                 size_t cap);
    size_t first; /* the index of the tail's first post-op in the primitive's chain */
    bool taken;   /* the head op's build asked for the tail (dn_build_attr) */
    /* Set for the call to posts: the primitive writes (rank, dims) as one matrix
     * [prod(dims[0..rank-2]), dims[rank-1]] (dn_build_attr_rows), and its binary
     * operands are described over that matrix. */
    bool rows;
    /* A matmul head's own bias (dn_tail_bias): the slot of the first member's operand
     * when that member adds it per column, else SIZE_MAX. */
    size_t (*bias)(struct dn_tail *t, const dn_build *b, int rank, int64_t n);
    bool biased;  /* the head took the first member as its bias: posts leaves it out */
} dn_tail;

/* What a build sees: the node, its inputs (their stored descriptors in md[]), the
 * context. */
struct dn_build {
    dn_ctx *c;
    const gl_kernel_ctx *k;
    dn_node *s;
    const dnnl_memory_desc_t *md; /* k->n_inputs entries (zeroed for omitted inputs); a
                                   * view is given as its dense form (dn_view_dense) */
    const dnnl_memory_desc_t *held; /* as the tensors hold them (views as they are) */
    dn_tail *tail;                /* the node heads a fused unit: its post-ops (else NULL) */
};

struct dn_op {
    const char *domain;       /* "" for ai.onnx */
    const char *op;
    int since;                /* first opset this row covers (the registry's entries) */
    /* From the IR alone: may the backend take this node? (types may be unknown: then
     * yes, and the build decides). On refusal, why (may stay ""). */
    bool (*claim)(const gl_model *m, const gl_node *n, char *why, size_t len);
    /* Make the primitive descriptor and bind the arguments (dn_bind_*), or refuse with
     * dn_refuse (the node then runs the reference kernel). */
    gl_status (*build)(dn_build *b, dnnl_primitive_desc_t *pd);
    /* Before each execute (may be NULL): refill own buffers from non-constant inputs,
     * prefill an output (Gemm's C under a sum post-op). */
    gl_status (*prepare)(const gl_kernel_ctx *k, dn_node *s);
};

/* ---- for build functions ------------------------------------------------------------- */

/* The node's reference kernel (the registry's at its opset) in *def; an error naming the
 * node when it has none. */
gl_status dn_reference_kernel(const dn_build *b, const gl_op_def **def);
/* Refuse: the node runs the reference kernel, the plan shows `fmt`. Returns GL_OK. */
gl_status dn_refuse(dn_build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The node's DN_MAX_OUTPUTS output records, allocated on first need (dn_node.out). */
dn_out *dn_node_outputs(dn_node *s);
/* Node input `input` as primitive argument `arg`, read in layout `want` (same dims as
 * b->md[input]; the given layout when want is NULL). */
void dn_bind_input(dn_build *b, int arg, size_t input, const dnnl_memory_desc_t *want);
/* The same, read through `view` (another shape over the plain row-major bytes: matmul's
 * leading 1s, Gemm's transposed strides); the input is converted to plain first when it
 * is not. */
void dn_bind_input_view(dn_build *b, int arg, size_t input, const dnnl_memory_desc_t *view);
/* The same, the input's bytes described by `given` (another shape over the same bytes:
 * grouped weights [G, OC/G, ...], a matmul operand with leading 1s; the input must be
 * plain) and read as `want` (NULL: as given). */
void dn_bind_input_from(dn_build *b, int arg, size_t input, const dnnl_memory_desc_t *given,
                        const dnnl_memory_desc_t *want);
/* Output `output` as argument `arg`, written as `md`; the tensor has ONNX dims
 * (rank, dims). */
void dn_bind_output(dn_build *b, int arg, size_t output, const dnnl_memory_desc_t *md,
                    int rank, const int64_t *dims);
/* Convert `from` (described by fmd) into `to` (tmd) now, with a reorder made for it
 * (constants converted once at a build). */
dnnl_status_t dn_reorder_once(dn_ctx *c, const dnnl_memory_desc_t *fmd, dnnl_memory_t from,
                              const dnnl_memory_desc_t *tmd, dnnl_memory_t to);
/* A buffer of md's size the op fills; returns it (zeroed). */
void *dn_bind_own(dn_build *b, int arg, const dnnl_memory_desc_t *md);
/* Output `output` is node input `input`'s bytes described by `md` (ONNX dims rank,
 * dims): a view. A build that binds views binds nothing else and makes no primitive. */
void dn_bind_view(dn_build *b, size_t output, size_t input, const dnnl_memory_desc_t *md,
                  int rank, const int64_t *dims);

/* A post-op: an eltwise step (alg, alpha, beta); with alg 0, a sum of what the
 * destination held, times `scale`; with src1, a binary step (alg) with that operand. */
struct dn_post {
    dnnl_alg_kind_t alg;
    float alpha, beta, scale;
    const dnnl_memory_desc_t *src1;
};
/* Do two eltwise post-ops share an algorithm with different parameters? oneDNN 2.6's
 * jit and brgemm kernels run the second with the first's alpha and beta (measured:
 * linear(0.5) then linear(1, 3) of 32 gave 8; clip(0, 100) then clip(0, 3) gave 32;
 * relu(0.5), linear(-1), relu(0) of 32 gave -16; on brgconv, brg and gemm:jit matmul,
 * f32 and int8 alike). */
bool dn_posts_repeat_alg(const dn_post *ops, size_t n);
/* Primitive attributes with these post-ops, in order (*attr NULL when n is 0; the caller
 * destroys it); dnnl_unimplemented for a chain dn_posts_repeat_alg refuses. */
dnnl_status_t dn_attr_post_ops(const dn_post *ops, size_t n, dnnl_primitive_attr_t *attr);
/* The attributes of an op that may head a fused unit: its own post-ops, then the unit's
 * (b->tail) for a destination of ONNX dims (rank, dims). dnnl_unimplemented when the
 * unit's do not fit that destination. */
dnnl_status_t dn_build_attr(dn_build *b, const dn_post *own, size_t n_own, int rank,
                            const int64_t *dims, dnnl_primitive_attr_t *attr);
/* The same for a matmul that writes the ONNX output (rank, dims) as one matrix of all its
 * rows (a stack of products made one tall product). */
dnnl_status_t dn_build_attr_rows(dn_build *b, const dn_post *own, size_t n_own, int rank,
                                 const int64_t *dims, dnnl_primitive_attr_t *attr);

/* A matmul's bias argument is cheaper than the same Add as a binary post-op (oneDNN 2.6's
 * gemm:jit, 1 thread, 400x96 by 96x384: 329 against 399 us; bench/README, session 37):
 * when the unit's first member adds n values along the last dim of the ONNX output of
 * rank `rank` ([n], [1,n], [1,1,n]...), the input slot to bind as DNNL_ARG_BIAS (its
 * plain bytes are the n values), and the tail leaves that member out of its post-ops;
 * SIZE_MAX (nothing taken) otherwise, or without a unit. A head that scales its product
 * (alpha != 1) must not ask: the bias would be scaled with it. */
size_t dn_tail_bias(dn_build *b, int rank, int64_t n);

/* Descriptor queries on a primitive descriptor. */
const dnnl_memory_desc_t *dn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int i);

/* Is node input i a constant (an initializer that is not an overridable input)? */
bool dn_input_constant(const gl_kernel_ctx *k, size_t i);
/* Input i when present and float32 (else NULL). */
const gl_tensor *dn_f32_input(const gl_kernel_ctx *k, size_t i);

/* Claim helpers: input i may be float32 of a rank in [lo, hi] (unknown: yes). */
bool dn_input_fits(const gl_node *n, size_t i, int lo, int hi);
bool dn_claim_f32_any(const gl_model *m, const gl_node *n, char *why, size_t len);

/* ---- views (dn_view.c) ------------------------------------------------------------------ */

/* The interned layout of a view's description, marked a view when no primitive should be
 * asked to read it as it is (dn_view_dense gives what they read). NULL when plain. */
const gl_tensor_layout *dn_view_layout(dn_ctx *c, const dnnl_memory_desc_t *md);
/* What a primitive reads of a view: the same dims, dense, in the plan's activation
 * layout for that rank, else plain. */
dnnl_status_t dn_view_dense(const dn_ctx *c, const dnnl_memory_desc_t *md,
                            dnnl_memory_desc_t *dense);
/* Does this op read a view as it is (a view op, Concat)? */
bool dn_view_reader(const gl_node *n);

/* ---- the machinery (dn_node.c) -------------------------------------------------------- */

gl_status dn_node_run(dn_ctx *c, gl_kernel_ctx *k, dn_node *s);
/* dn_node_run in two steps: build when the inputs differ from the last build (the shape
 * guard; *rebuilt says whether it did), then run the primitive or the reference kernel. */
gl_status dn_node_ready(dn_ctx *c, const gl_kernel_ctx *k, dn_node *s, bool *rebuilt);
gl_status dn_node_exec(dn_ctx *c, gl_kernel_ctx *k, dn_node *s);
/* The same when the caller knows the inputs are free of NaN and infinities (known
 * DN_INPUTS_FINITE: no look; DN_INPUTS_UNKNOWN: look as dn_node_exec does); *finite: may
 * its outputs be vouched for (dn_vouch)? */
gl_status dn_node_exec_known(dn_ctx *c, gl_kernel_ctx *k, dn_node *s, dn_inputs known,
                             bool *finite);
/* k->out holds a reference run's plain outputs of built node s (a run its primitive
 * would get wrong): write them where the primitive writes them, in the layouts it was
 * built for, so that what reads them keeps its build (a plain tensor would make it build
 * again, and again when the next run goes back to the primitive). */
gl_status dn_node_adopt(dn_ctx *c, gl_kernel_ctx *k, dn_node *s);
/* A new node record of op (zeroed memory): its texts "". */
void dn_node_init(dn_node *s, const dn_op *op);
void dn_node_clear(dn_node *s);
/* Its scratch (gl_backend.scratch): the outputs' idle buffers, the inputs converted every
 * run; not the constants converted at build, nor its own buffers (some are filled at
 * build). */
void dn_node_scratch(const dn_node *s, gl_scratch_fn fn, void *arg);
/* A unit refused at its first run runs its members on the reference kernels: say so in
 * impl and note, with `why` as the reason (NULL: the refusal's note it has). */
void dn_note_runs_members(dn_ctx *c, dn_node *s, const char *why);
/* Set s->impl or s->note to the formatted text, interned in c (cut at DN_IMPL_LEN - 1 and
 * DN_NOTE_LEN - 1 bytes: the plan's columns). */
#define DN_IMPL_LEN 96
#define DN_NOTE_LEN 160
void dn_set_impl(dn_ctx *c, dn_node *s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The node runs graphlab's own kernel `run` on `extra` (owned: freed by extra_free) instead
 * of its primitive, named by the formatted impl ("graphlab:avx2 ..."). */
void dn_take_native(dn_build *b, void (*run)(void *extra, const void *const *src, void *dst),
                    void *extra, void (*extra_free)(void *extra), const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void dn_set_note(dn_ctx *c, dn_node *s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void dn_set_notev(dn_ctx *c, dn_node *s, const char *fmt, va_list ap);
/* The shape guard for units that build without dn_node_ready (dn_shuffle.c): record the
 * inputs of this build (false when one has more dims than oneDNN takes); do they match? */
bool dn_key_set(dn_node *s, const gl_kernel_ctx *k);
bool dn_key_matches(const dn_node *s, const gl_kernel_ctx *k);
/* Lend a buffer to every output of s (out[i].mem set and pointed at it) and wrap it as
 * the kernel's output tensor. */
gl_status dn_take_outputs(gl_kernel_ctx *k, dn_node *s);

/* ---- fused units (dn_fused.c) --------------------------------------------------------- */

/* A call of a model-local function whose body is a head (Conv, ConvTranspose, MatMul,
 * Gemm) and a chain of activations and binary ops: claimed as one primitive with
 * post-ops when oneDNN runs it with a kernel of its own. */
bool dn_fused_claims(dn_ctx *c, const gl_model *m, const gl_node *call, const gl_function *fn,
                     char *why, size_t len);
gl_status dn_fused_run(dn_ctx *c, gl_kernel_ctx *k, void **state);
/* state is a fused unit's (the backend's release and describe tell them apart). */
bool dn_fused_state(const void *state);
/* Why a fused group of this head does not take `member` (binary: as a binary post-op,
 * else as an eltwise one, read at `opset`); NULL: it takes it (the target's answer, from
 * the unit's head table). */
const char *dn_fused_head_refusal(const gl_node *head, const gl_node *member, int64_t opset,
                                  bool binary);
void dn_fused_release(void *state);
/* A fused unit's scratch: every segment's (dn_node_scratch). The split units (catconv,
 * shuffle, int8 groups) report none: their buffers stay resident. */
void dn_fused_scratch(const void *state, gl_scratch_fn fn, void *arg);
/* The call's body on the reference kernels, on plain copies of its inputs. */
gl_status dn_fused_run_members(dn_ctx *c, gl_kernel_ctx *k);

/* The Concat inputs the split units take (dn_catconv.c, dn_shuffle.c): their per-part
 * state is in arrays of this size; the fusion pass asks it (gl_target.max_concat_parts). */
#define DN_CAT_MAX_PARTS 8

/* A group [Concat along the channels, 1x1 Conv, activations] (dn_catconv.c): one 1x1
 * convolution per Concat input into one destination. dn_fused.c hands such calls over. */
bool dn_catconv_is(const gl_function *fn);
bool dn_catconv_claims(dn_ctx *c, const gl_model *m, const gl_node *call,
                       const gl_function *fn, char *why, size_t len);
/* *finite: the output is free of NaN and infinities (dn_vouch) */
gl_status dn_catconv_run(dn_ctx *c, gl_kernel_ctx *k, void **state, bool *finite);
bool dn_catconv_state(const void *state);
void dn_catconv_release(void *state);

/* A channel shuffle [Concat, Reshape, Transpose, Reshape, channel Slices]
 * (dn_shuffle.c): one reorder per (Concat input, output) piece into the shuffled places.
 * dn_fused.c hands such calls over. */
bool dn_shuffle_is(const gl_function *fn);
bool dn_shuffle_claims(dn_ctx *c, const gl_model *m, const gl_node *call,
                       const gl_function *fn, char *why, size_t len);
gl_status dn_shuffle_run(dn_ctx *c, gl_kernel_ctx *k, void **state);
bool dn_shuffle_state(const void *state);
void dn_shuffle_release(void *state);

/* ---- channel Concats in place (dn_concat.c) ------------------------------------------- */

/* Plan which Concats of m's graph their producers write in place, as if the activations
 * were blocked (c->block): owned by c. Returns how many. */
size_t dn_places_plan(dn_ctx *c, const gl_model *m);
/* The same whatever c's policy is now (the layout choice asks it before choosing). */
size_t dn_places_if_blocked(dn_ctx *c, const gl_model *m);
/* None after all (the plan's activations are not blocked): every Concat says `why`. */
void dn_places_disable(dn_ctx *c, const char *why);
void dn_places_free(dn_ctx *c);
/* The family buffers as scratch, between runs: the idle ones, and this run's when no
 * tensor holds it any more. */
void dn_places_scratch(const dn_ctx *c, gl_scratch_fn fn, void *arg);
/* The slice of this run's family buffer where value v goes, when the plan placed it and
 * its producer writes it as `md` (`bytes`); NULL: a buffer of its own. */
gl_buffer *dn_place_lend(dn_ctx *c, const gl_value *v, const dnnl_memory_desc_t *md,
                         size_t bytes);
/* Concat node s: its output made as its range of the family buffer when every input is
 * at its place this run (true; the plan says "in place"), else false (it copies, and the
 * plan's note says why). */
bool dn_concat_in_place(dn_ctx *c, gl_kernel_ctx *k, dn_node *s);

/* ---- int8 products (dn_qprod.c; dn_qgroup.c, dn_qlinear.c make them) ------------------- */

/* A quantized product as ONE oneDNN int8 primitive:
 *   y_q = saturate(round(act(x_scale * w_scale[c] * (sum (x_q - x_zero) * w_q + bias_q))
 *                        / y_scale) + y_zero)
 * x_q u8 or s8 per tensor, w_q s8 constant with zero point 0, per tensor or per output
 * channel, bias int32 in accumulator units (or dequantized with its own scale), act
 * eltwise post-ops in real units, y u8 or s8. Made from a QDQ group's body
 * (dn_qgroup.c) or a QLinearConv/QLinearMatMul node (dn_qlinear.c). */
#define DN_QNONE SIZE_MAX
#define DN_QMAX_ACTS 8

typedef enum dn_qkind { DN_QCONV, DN_QMATMUL, DN_QGEMM } dn_qkind;

typedef struct dn_qprod {
    dn_qkind kind;
    const gl_node *head;       /* its attributes: Conv's window and group, Gemm's trans* */
    size_t x, w, bias;         /* kernel inputs: x_q, w_q, bias_q (DN_QNONE: none) */
    float x_scale, y_scale;
    int32_t x_zero, y_zero;
    gl_dtype x_dtype, y_dtype; /* GL_DT_UINT8 or GL_DT_INT8, as the zero points say */
    float *w_scale;            /* owned: 1 or one per output channel */
    int64_t n_w_scale;
    /* NULL: the bias is in accumulator units (its scale x_scale * w_scale[c], zero point
     * 0) and read as it is; else its own scales (owned, 1 or per channel) and zero point. */
    float *b_scale;
    int64_t n_b_scale;
    int32_t b_zero;
    dn_post acts[DN_QMAX_ACTS]; /* activations, in real units */
    size_t n_acts;
    const gl_op_def *refused;  /* what runs when the build refuses (NULL: the node's own
                                * reference kernel) */
} dn_qprod;

/* The post-ops of an int8 primitive writing y_q: acts (in real units) with 1 / y_scale
 * among them, then an eltwise round (half to even: the destination's zero point is added
 * after it). 1 / y_scale goes into *factor (to multiply the primitive's scales by) when the
 * activations commute with a positive scale, else into the chain; *n post-ops in post
 * (DN_QMAX_POSTS room). False (why) for a chain oneDNN 2.6 would run wrong. */
#define DN_QMAX_POSTS (DN_QMAX_ACTS + 2)
bool dn_qpost_chain(const dn_post *acts, size_t n_acts, float y_scale, dn_post *post,
                    size_t *n, float *factor, const char **why);
/* Refuse an int8 build: the plan's note says `fmt`; `refused` runs (NULL: the node's
 * reference kernel). Returns GL_OK. */
gl_status dn_qrefuse(dn_build *b, const gl_op_def *refused, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void dn_qprod_clear(dn_qprod *q);
/* The primitive of q on the kernel's inputs (b->k), bound; or a refusal (the plan's note
 * says why, q->refused or the node's reference kernel runs). */
gl_status dn_qprod_build(dn_build *b, const dn_qprod *q, dnnl_primitive_desc_t *pd);
/* A per-tensor scale or zero point, or one per `along` entries: scales finite and > 0
 * (*vals owned), zero points of an 8-bit dtype. False with why. */
bool dn_qscales(const gl_tensor *t, int64_t along, float **vals, int64_t *n, const char *what,
                char *why, size_t len);
bool dn_qzero(const gl_tensor *t, gl_dtype *dt, int32_t *zero, const char *what, char *why,
              size_t len);
/* Every element of t (NULL: none) is 0. */
bool dn_qzeros(const gl_tensor *t);

/* A quantized Add (dn_qadd.c) as ONE oneDNN int8 binary primitive:
 *   y_q = saturate(round(act(a_scale * (a_q - a_zero) + b_scale * (b_q - b_zero)) / y_scale)
 *                  + y_zero)
 * a_q, b_q u8 or s8 per tensor (b may broadcast to a's shape), act eltwise post-ops in
 * real units, y u8 or s8. Made from a QAdd group's body (dn_qgroup.c). */
typedef struct dn_qadd {
    size_t a, b;               /* kernel inputs: a_q, b_q */
    float a_scale, b_scale, y_scale;
    int32_t a_zero, b_zero, y_zero;
    gl_dtype a_dtype, b_dtype, y_dtype;
    dn_post acts[DN_QMAX_ACTS];
    size_t n_acts;
    const gl_op_def *refused;  /* what runs when the build refuses */
} dn_qadd;

gl_status dn_qadd_build(dn_build *b, const dn_qadd *q, dnnl_primitive_desc_t *pd);

/* A QDQ group (dn_qgroup.c): a graphlab.fused call whose body is DequantizeLinear of the
 * source, weights and bias, Conv/MatMul/Gemm (a MatMul's bias an Add), activations, then
 * QuantizeLinear; or a QAdd group: DequantizeLinear of a and of b, Add, activations,
 * QuantizeLinear. dn_fused.c hands such calls over. */
bool dn_qgroup_is(const gl_function *fn);
bool dn_qgroup_claims(dn_ctx *c, const gl_model *m, const gl_node *call, const gl_function *fn,
                      char *why, size_t len);
gl_status dn_qgroup_run(dn_ctx *c, gl_kernel_ctx *k, void **state);
bool dn_qgroup_state(const void *state);
void dn_qgroup_release(void *state);

/* How many eltwise steps (post-ops) n becomes at `opset`: 1 or 2 (HardSigmoid, Selu);
 * -1 when no row of the eltwise table maps it. */
int dn_eltwise_steps(const gl_node *n, int64_t opset);
/* The ops of the eltwise table, "Relu" or "graphlab.Gelu" (up to cap); their count. */
size_t dn_eltwise_names(char (*names)[32], size_t cap);
/* Exposed by the op files for fused units. The eltwise steps (at most 2) of unary node n
 * at `opset` as post-ops; parameter inputs (Clip's min/max, Pow's exponent) from in[]
 * (n_in entries, NULL: omitted), usable only when fixed[i]. False with *why saying why its
 * parameters do not fit, or NULL when n is no activation the table has. */
bool dn_eltwise_posts(const gl_node *n, int64_t opset, const gl_tensor *const *in,
                      const bool *fixed, size_t n_in, dn_post *post, size_t *n_post,
                      const char **why);
/* An activation that graphlab's own kernels apply to a tile of their output while it is
 * still in the cache (the epilogue: dn_avx2_act_tile, dn_avx2.h), instead of oneDNN's
 * post-op or a pass of its own over memory. */
typedef enum dn_act_kind {
    DN_ACT_NONE,
    DN_ACT_RELU,      /* max(x, 0): NaN gives 0, as oneDNN's relu (the unit knows) */
    DN_ACT_GELU_ERF,
    DN_ACT_GELU_TANH,
    DN_ACT_SIGMOID,
    DN_ACT_SILU,      /* x * sigmoid(x) */
    DN_ACT_CLIP,      /* [lo, hi] */
    DN_ACT_HARDSWISH,
} dn_act_kind;
typedef struct dn_act {
    dn_act_kind kind;
    float lo, hi;     /* DN_ACT_CLIP's bounds */
} dn_act;
/* The activation eltwise step p is, when graphlab's epilogue has it (scale 1, the
 * parameters ONNX's op gives); false otherwise. */
bool dn_post_act(const dn_post *p, dn_act *act);
/* Its name in an impl column ("gelu_erf"). */
const char *dn_act_name(dn_act_kind kind);
/* Why eltwise step p is no post-op on this CPU though oneDNN has it (it runs slower so than
 * graphlab's own kernel runs it apart: tanh and gelu_tanh on AVX2), or NULL. */
const char *dn_eltwise_post_slow(const dn_post *p);
/* The binary algorithm of op (Add, Sub, Mul, Div, Max, Min), 0 when none; *commutes. */
dnnl_alg_kind_t dn_binary_alg(const char *op, bool *commutes);
/* The ops dn_binary_alg maps (up to cap written); their count. */
size_t dn_binary_names(char (*names)[32], size_t cap);

/* ---- NaN and infinities (dn_special.c) ------------------------------------------------- */

/* Does oneDNN's algorithm (eltwise with alpha and beta, binary, pooling, reduction,
 * softmax) get a NaN or an infinity wrong, where ONNX keeps it? */
bool dn_alg_drops_specials(dnnl_alg_kind_t alg, float alpha, float beta);
/* The same for a post-op (a sum gets them right). */
bool dn_post_drops_specials(const dn_post *p);
/* May ONNX op n (a call: one of its body's) output a NaN or an infinity when its inputs
 * hold none (Div, Log, Sqrt, Pow, Exp...)? */
bool dn_node_makes_specials(const gl_node *n);

/* What a node knows of its float inputs before it runs (dn_inputs): constants are looked
 * at once per build (sc) — without `look`, only when they do not far outweigh its other
 * inputs (else they count as not known) —, values a oneDNN node of the plan vouched for
 * this run are free of them, the others are looked at with `look`. */
dn_inputs dn_inputs_look(dn_ctx *c, const gl_kernel_ctx *k, dn_special_check *sc, bool look);
/* After every run of a oneDNN node (every one, or an earlier run's word would stand): are
 * its outputs free of NaN and infinities (its inputs were, and it makes none)? */
void dn_vouch(dn_ctx *c, const gl_kernel_ctx *k, bool finite);
void dn_vouched_free(dn_vouched *t);

/* For a build whose primitive gets them wrong (drops): a run whose inputs hold a NaN or
 * an infinity runs the node's reference kernel instead (dn_node_exec). */
gl_status dn_guard_specials(dn_build *b, bool drops);
/* The plain tensor's values written at `data` as md lays them out (same dims). */
gl_status dn_from_plain(dn_ctx *c, const gl_tensor *plain, const dnnl_memory_desc_t *md,
                        void *data, const char *where);

/* GlobalAveragePool (dn_pool.c's build, pd made, X's dims xd [N, C, H, W]) on graphlab's
 * AVX2 kernel when the pd's source and destination are both nChw8c or both nhwc
 * (dn_gpool.c); else the pd's kernel stays. */
void dn_gap_take(dn_build *b, const_dnnl_primitive_desc_t pd, const int64_t *xd);
/* A Mul of x (dims xd, descriptor md0) by scales of dims sd ([N or 1, C, 1, 1], md1)
 * into md0, bound by dn_binary.c's build, on graphlab's AVX2 kernel when x is nChw8c,
 * nChw16c or nhwc and the scales plain or in x's blocked layout (dn_chscale.c); else the
 * pd's kernel stays. dn_chscale_fits: would it take it? */
bool dn_chscale_fits(const dn_build *b, const dnnl_memory_desc_t *md0, const int64_t *xd,
                     const dnnl_memory_desc_t *md1, const int64_t *sd);
void dn_chscale_take(dn_build *b, const dnnl_memory_desc_t *md0, const int64_t *xd,
                     const dnnl_memory_desc_t *md1, const int64_t *sd);

/* A recurrent node (LSTM, GRU, RNN) as dn_rnn.c's build saw it, for graphlab's AVX2
 * kernel (dn_rnn_avx2.c). */
typedef enum dn_cell { DN_CELL_RNN, DN_CELL_GRU, DN_CELL_LSTM } dn_cell;
typedef struct dn_rnn_spec {
    dn_cell cell;
    int gates;                /* ONNX's: 1, 3, 4 */
    bool lbr, reverse;        /* GRU linear_before_reset; one direction, reverse */
    int dirs, layout;
    int64_t T, N, I, H;
    const float *w, *r, *b, *p; /* constants in ONNX's layout (b, p NULL: omitted) */
    const int64_t *lens;      /* sequence_lens (N of them), NULL: every row T steps */
    int h0, c0;               /* the bound input (binding order) of initial_h, initial_c;
                               * -1: zeros */
} dn_rnn_spec;
/* Run the node (its pd made; X, the states and the outputs bound as for the primitive)
 * on graphlab's kernel where that is the faster; false with *why (NULL: no reason worth
 * a note) when not. */
bool dn_rnn_take(dn_build *b, const dn_rnn_spec *sp, const char **why);
/* Is graphlab's kernel measured faster than oneDNN's for a cell of n batch rows under
 * context c: everywhere oneDNN runs its AVX2 kernels; on AVX-512 an LSTM of one row. */
bool dn_rnn_native_here(const dn_ctx *c, dn_cell cell, int64_t n);
/* Before each run of a node dn_rnn_take took (its outputs lent): where they go. */
gl_status dn_rnn_native_prepare(dn_node *s);

/* ---- the op tables (one per family file) ---------------------------------------------- */

typedef struct dn_op_table {
    const dn_op *ops;
    size_t n;
} dn_op_table;

extern const dn_op_table dn_conv_ops, dn_matmul_ops, dn_eltwise_ops, dn_binary_ops,
    dn_pool_ops, dn_norm_ops, dn_reduce_ops, dn_nary_ops, dn_prelu_ops, dn_deconv_ops,
    dn_movement_ops, dn_resize_ops, dn_qlinear_ops, dn_rnn_ops;

/* QuantizeLinear, DequantizeLinear, MatMulInteger, ConvInteger (dn_quant.c) */
extern const dn_op_table dn_quant_ops;

/* The row for a node at its opset, NULL when the backend has none. */
const dn_op *dn_op_find(const char *domain, const char *op, int64_t opset);
/* Does the row build nodes whose output 0 is omitted? Without it a node has nothing to
 * compute, except the recurrent ops, whose outputs are all optional (Y_h alone is
 * common): dn_rnn.c binds what is asked. */
bool dn_op_all_outputs_optional(const dn_op *row);

#endif

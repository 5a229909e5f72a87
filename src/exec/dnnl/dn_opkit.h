/* dn_opkit.h — what the oneDNN op files share beyond dn_node.c's binding machinery:
 * choosing among primitive descriptors when oneDNN would fall to its own reference code,
 * inputs whose values a build may read (axes, scales, sizes), and reading them.
 *
 * oneDNN's reference implementations (ref:any, lrn_ref:any, bnorm_ref:any) compute every
 * element's offset through the generic memory descriptor. Measured on one thread against
 * our reference kernels (which also pay for plain copies of their inputs): softmax over
 * the channels of [8,64,56,56] 400 ms against 60, ReduceL2 of [8,64,3136] 139 against 17,
 * PRelu with a scalar slope on [1,64,56,56] 14 against 1.6, a Mean whose post-op operand
 * broadcasts over a middle dim 233 against 3.3, LRN 12 against 11.5. So a build tries the
 * layouts that give a vectorized kernel first and refuses oneDNN's reference code when
 * nothing else is left (dn_refuse_ref). Concat and sum are the exceptions: their "ref"
 * implementations are a reorder per input, vectorized (Sum of three [1,20,56,56] in
 * nChw16c: 0.03 ms against 0.06), and keep the plan's layout; they are accepted with a
 * note (dn_note_ref).
 */
#ifndef GL_DN_OPKIT_H
#define GL_DN_OPKIT_H

#include "exec/dnnl/dn.h"

/* Below this many elements a plain elementwise op is cheaper on the reference kernel:
 * the OpenMP fork and join of a primitive costs more than the loop (as dn_eltwise.c). */
#define DN_OPS_SMALL 4096

/* pd runs oneDNN's reference code rather than a vectorized kernel. */
bool dn_pd_is_ref(const_dnnl_primitive_desc_t pd);

/* One way to make a primitive descriptor (way = 0, 1, ...): dnnl_unimplemented or any
 * error when this way does not apply. */
typedef dnnl_status_t (*dn_pd_way)(dn_build *b, void *arg, int way, dnnl_primitive_desc_t *pd);

/* Try ways 0..n-1 in order and keep, in *pd, the first that oneDNN implements with a
 * kernel of its own, else the first it implements at all. Returns the way kept, -1 when
 * none worked (*pd NULL). */
int dn_pd_pick(dn_build *b, void *arg, int n, dn_pd_way fn, dnnl_primitive_desc_t *pd);

/* pd is oneDNN's reference code: destroy it and send the node to the reference kernel
 * ("oneDNN has only its reference code for <what>"). */
gl_status dn_refuse_ref(dn_build *b, dnnl_primitive_desc_t *pd, const char *what);

/* Accept pd as it is; when it is oneDNN's reference code, the plan's note says so
 * ("oneDNN's reference implementation: <why>"). */
void dn_note_ref(dn_build *b, const_dnnl_primitive_desc_t pd, const char *why);

/* v holds the same contents on every run (a build may read it): a constant initializer
 * or a Constant node's output. NULL (an omitted input) counts as fixed. */
bool dn_value_fixed(const gl_value *v);

/* A build may read kernel input i: fixed, or an integer tensor the shape guard keys by
 * value (at most DN_KEY_VALS elements, plain), so that other values build again. Claims
 * accept integer parameters computed at run time (Resize sizes, Reduce axes) because
 * this holds at build for any valid node; the build checks it and refuses otherwise. */
bool dn_input_keyed(const gl_kernel_ctx *k, size_t i);

/* The values of integer input i of the kernel (malloc'd, *count of them; NULL input:
 * NULL, 0). False when the input is not an integer tensor. */
bool dn_input_ints(const gl_kernel_ctx *k, size_t i, int64_t **vals, size_t *count);

/* A plain float32 descriptor of `rank` dims for the tensor's bytes read as those dims
 * (a view with the same element count): dims padded with leading 1s up to rank, or the
 * given dims as they are. */
dnnl_status_t dn_md_leading_ones(dnnl_memory_desc_t *md, int rank, const gl_tensor *t);

/* The arguments of a convolution-like primitive: input 0 as the primitive reads it,
 * input 1 (weights, its bytes described by `wgiven`) packed into the primitive's weights
 * layout (once when constant), input 2 (bias) as it is when `bias`, output 0 with ONNX
 * dims (rank, dims) as the primitive writes it (Conv, ConvTranspose). */
void dn_bind_weighted(dn_build *b, const_dnnl_primitive_desc_t pd,
                      const dnnl_memory_desc_t *wgiven, bool bias, int rank, const int64_t *dims);

/* A convolution's window (dn_conv.c) as the reference kernel resolves it (ops/window.h)
 * from node n's attributes, in oneDNN's terms (dilation counts the gaps); false when the
 * attributes are invalid (the reference kernel then says why). */
#define DN_CONV_MAX_SP 3 /* oneDNN convolutions: 1-D, 2-D, 3-D */
typedef struct dn_conv_geom {
    dnnl_dims_t strides, dilates, pad_l, pad_r;
    int64_t out[DN_CONV_MAX_SP];
} dn_conv_geom;
bool dn_conv_window(const gl_node *n, const char *where, int nsp, const int64_t *in,
                    const int64_t *kernel, dn_conv_geom *g);
/* On AVX2, a 2-D 3x3 stride-1 convolution whose pd reads and writes nChw8c (or nhwc),
 * with constant weights, runs graphlab's Winograd kernel instead (dn_wino.c) where that
 * measured faster; otherwise nothing changes. xd, yd: the source's and destination's NCHW dims.
 * Not GL_OK only when the reference kernel it keeps for NaN and infinities failed. */
gl_status dn_wino_take(dn_build *b, const_dnnl_primitive_desc_t pd, const int64_t *xd,
                       const int64_t *yd, const dn_conv_geom *g);

/* The post-ops graphlab's kernels that stand in for a convolution apply (dn_wino.c,
 * dn_narrow.c): the pd's chain as DN_OWN_SUM (a sum of scale 1, its operand already in the
 * destination) and DN_OWN_RELU (alpha 0, scale 1) in posts[0 .. *n); false when the chain
 * is longer than max or holds anything else. */
enum { DN_OWN_SUM, DN_OWN_RELU };
bool dn_own_posts_of(const_dnnl_primitive_desc_t pd, int *posts, int max, int *n);

/* A 2-D 1x1 convolution of stride 1 without pads or groups, constant weights and bias,
 * whose source (src, NCHW dims xd) arrives in the plan's block (nChw8c or nChw16c) and
 * whose yd[1] output channels fill at most a quarter of it: graphlab's kernel writes it
 * plain (dn_narrow.c). dn_narrow_source gives that source's tag when it may
 * (dnnl_format_tag_undef when not); dn_narrow_take, given a pd of that source and a plain
 * destination with the unit's post-ops, takes it unless a post-op is other than a sum or
 * a relu (false: nothing changed). */
dnnl_format_tag_t dn_narrow_source(const dn_build *b, const dnnl_memory_desc_t *src,
                                   int rank, const int64_t *xd, const int64_t *yd,
                                   const int64_t *kernel, const dn_conv_geom *g,
                                   int64_t group);
bool dn_narrow_take(dn_build *b, const_dnnl_primitive_desc_t pd, const int64_t *xd,
                    const int64_t *yd);

/* Inference BatchNormalization (dn_norm.c's build, pd made and bound, with the unit's
 * post-ops in attr, NULL: none) on graphlab's AVX2 kernel when its statistics are
 * constants, the pd's source and destination are alike (nC..8c, channels-last or plain)
 * and the post-ops are none or one relu (dn_bnorm.c); else the pd's kernel stays. */
void dn_bnorm_take(dn_build *b, const_dnnl_primitive_desc_t pd, const_dnnl_primitive_attr_t attr,
                   float eps);

/* graphlab's channels-last ops (NhwcConv, NhwcMaxPool, ...: src/ops/graphlab_layout.c)
 * hold X[N,H,W,C] as a plain tensor: oneDNN's nhwc over the logical dims [N,C,H,W], the
 * same bytes. `nchw` gets those logical dims of a 4-D NHWC shape; `md` the nhwc
 * descriptor over them. */
void dn_nhwc_dims(const int64_t *nhwc, int64_t *nchw);
dnnl_status_t dn_md_nhwc_of(dnnl_memory_desc_t *md, const int64_t *nhwc);
/* Output `output` written by the primitive as `md` (nhwc over [N,C,H,W]) into a plain
 * tensor of ONNX dims [N,H,W,C]: no layout to carry, no conversion for any consumer. */
void dn_bind_output_nhwc(dn_build *b, int arg, size_t output, const dnnl_memory_desc_t *md,
                         const int64_t *nhwc);

/* Does some consumer of the node's output 0 have a row in this backend (so it may read
 * the output in our layout, where a reference kernel needs it converted)? A call of a
 * fused group counts by the op that heads its body. */
bool dn_read_by_backend(const gl_kernel_ctx *k);

/* md (f32) described with other dims over the same bytes in the same row-major order
 * (Reshape), by strides alone; on blocked layouts only dims of 1 may come and go.
 * dnnl_unimplemented when that takes a copy. */
dnnl_status_t dn_md_reshape(const dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                            dnnl_memory_desc_t *out);
/* A movement op's output 0 (ONNX dims rank, dims) is `view`, a description of input 0's
 * bytes (NULL when none exists: then the op keeps row-major order, a Reshape): bound as
 * a view, or as one reorder into the layout its readers want (dn_view.c's rule). */
gl_status dn_view_bind(dn_build *b, const dnnl_memory_desc_t *view, int rank,
                       const int64_t *dims, dnnl_primitive_desc_t *pd);
/* The same, but a view only when it is an ordinary tensor (plain, or the activation
 * layout at offset 0), else one reorder into plain: for an op whose readers are not
 * images (Gather's q, k and v of an attention, read by products in row-major order, for
 * which a 4-D nhwc would be one more reorder). */
gl_status dn_view_bind_plain(dn_build *b, const dnnl_memory_desc_t *view, int rank,
                             const int64_t *dims, dnnl_primitive_desc_t *pd);

/* What stands for value v when a claim builds a descriptor ahead of any run: its
 * initializer when v is a constant, else a tensor of v's dtype and dims without bytes
 * (*made: the caller frees it). False when the IR does not know v's dims. */
bool dn_stand_in(const gl_value *v, const gl_tensor **in, gl_tensor **made);

/* A claim's build of node n ahead of any run, when the IR knows the dims of all its
 * inputs: op's build on their stand-ins, into s (cleared after). False (why) when the
 * build fails or refuses; true when it succeeds or cannot be tried yet. */
bool dn_claim_build(dn_ctx *c, const gl_model *m, const gl_node *n, dn_node *s,
                    const dn_op *op, char *why, size_t len);

/* The row of `op` in `table` (NULL when the table has none). */
const dn_op *dn_table_row(const dn_op_table *table, const char *op);

/* Claim helper: every present input may be float32 of a rank in [lo, hi]. */
bool dn_inputs_fit(const gl_node *n, int lo, int hi, char *why, size_t len);

/* Ops that move or select elements without arithmetic (max pooling, views) take int8
 * tensors as they take float32 ones: input i may be float32, uint8 or int8 of a rank in
 * [lo, hi] (unknown: yes); input i when present and of one of those dtypes (else NULL). */
bool dn_input_fits_int8(const gl_node *n, size_t i, int lo, int hi);
const gl_tensor *dn_f32_int8_input(const gl_kernel_ctx *k, size_t i);

#endif

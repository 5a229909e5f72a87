/* opkit.h — what shape functions and kernels of every op family share: axes,
 * attributes, constant inputs, dims and index arithmetic, kernel inputs and outputs,
 * typed element access, numpy broadcasting. Kernels are written once over these helpers
 * instead of each family re-deriving them; a helper only one family needs stays in that
 * family's file. */
#ifndef GL_OPKIT_H
#define GL_OPKIT_H

#include "ops/ops.h"

/* ---- axes and attributes ---------------------------------------------------------- */

/* axis in [-rank, rank) (or [-rank-1, rank] when `inclusive`, for Unsqueeze-like ops)
 * normalized to [0, rank]; false with a message naming `what` when out of range. */
bool gl_axis_normalize(int64_t axis, int rank, bool inclusive, const char *where,
                       const char *what, int *out);
/* The ints of an INTS attribute (NULL, 0 when absent or of another type; an empty list
 * may be NULL, 0 too). */
const int64_t *gl_attr_ints(const gl_node *n, const char *name, size_t *count);
const float *gl_attr_floats(const gl_node *n, const char *name, size_t *count);

/* ---- inference -------------------------------------------------------------------- */

/* out_types[out] = tensor of dtype with the shape (copied, symbols kept). */
void gl_infer_set(gl_infer_ctx *c, size_t out, gl_dtype dt, const gl_shape *shape);
/* out_types[out] = tensor of dtype and rank with all dims unknown (rank may be
 * GL_RANK_UNKNOWN). */
void gl_infer_set_rank(gl_infer_ctx *c, size_t out, gl_dtype dt, int rank);
/* Output `out` has input `in`'s type (unary elementwise ops). */
gl_status gl_infer_like_input(gl_infer_ctx *c, size_t in, size_t out);
/* The tensor type of input i, or NULL when omitted/unknown/non-tensor. */
const gl_type *gl_infer_input(const gl_infer_ctx *c, size_t i);
/* numpy broadcasting of the shapes of `n` inputs (first..first+n-1; omitted skipped).
 * Known dims: equal, or 1 broadcasts. Symbols: a symbol against 1 stays the symbol,
 * equal symbols unify, a symbol against k > 1 gives k; unknown against 1 stays
 * unknown. Unknown rank anywhere: rank unknown. GL_ERR_INPUT on a proven mismatch. */
gl_status gl_infer_broadcast(gl_infer_ctx *c, size_t first, size_t n, gl_shape *out);
/* A constant int64/int32 input as int64 values (malloc'd): false when not constant. */
bool gl_infer_const_ints(const gl_infer_ctx *c, size_t i, int64_t **vals, size_t *count);
/* The one value of a constant one-element integer input (TopK's K, STFT's frame_length):
 * false when it is not constant or not one element. */
bool gl_infer_const_int(const gl_infer_ctx *c, size_t i, int64_t *v);

/* ---- dims and index arithmetic ---------------------------------------------------- */

/* d = value when value >= 0, else unknown; d's symbol is dropped either way. */
void gl_dim_set(gl_dim *d, int64_t value);
/* dst = src: its symbol, or its value (dst's old symbol freed). */
void gl_dim_copy(gl_dim *dst, const gl_dim *src);
/* The product of dims[from, to) (1 when the range is empty). Unsigned inside: an empty
 * tensor may have huge other dims, whose product means nothing but must not overflow. */
int64_t gl_dims_product(const int64_t *dims, int from, int to);
/* Row-major strides (elements) of dims. */
void gl_strides(const int64_t *dims, int rank, int64_t *strides);
/* Advance the row-major multi-index idx over dims[0, rank); false when it wraps back to
 * all zeros (the walk is over). */
bool gl_odometer_next(int64_t *idx, const int64_t *dims, int rank);
/* A tensor as [outer, n, inner] around `axis`, the view of every op that works along one
 * axis: element (o, i, j) is at (o * n + i) * inner + j. A scalar is [1, 1, 1]. */
typedef struct gl_axis_view {
    int64_t outer, n, inner;
} gl_axis_view;

gl_axis_view gl_axis_view_of(const int64_t *dims, int rank, int axis);
/* What Slice (at k's opset: attributes, or inputs starts/ends/axes/steps) takes of x: per
 * dim the first index, the count and the step (0, dims[d], 1 for dims it does not
 * slice). False with a message naming k->where for bad arguments. */
bool gl_slice_select(gl_kernel_ctx *k, const gl_tensor *x, int64_t *first, int64_t *count,
                     int64_t *step);

/* ---- kernels: inputs and outputs -------------------------------------------------- */

/* Input i, or NULL when the node omits it. */
const gl_tensor *gl_opt_input(const gl_kernel_ctx *k, size_t i);
/* Input i, or NULL with a message naming it (`what`) when the node omits it. */
const gl_tensor *gl_need_input(const gl_kernel_ctx *k, size_t i, const char *what);
/* GL_ERR_INPUT with a message when any of inputs 0..n-1 is omitted. */
gl_status gl_need_inputs(const gl_kernel_ctx *k, size_t n);
/* GL_OK when t holds numbers (any int or float type; bool too when `bool_ok`), else
 * GL_ERR_INPUT naming `what`: strings and complex numbers have no order or arithmetic
 * the reference kernels implement. */
gl_status gl_need_number(const gl_kernel_ctx *k, const gl_tensor *t, bool bool_ok,
                         const char *what);
/* The value of a one-element integer tensor; false with a message naming `what` when t
 * is missing, not an integer or not one element. */
bool gl_scalar_int(const gl_tensor *t, const char *where, const char *what, int64_t *v);
/* Values of an integer tensor (int8..uint64) as int64 (malloc'd), for shape/axes/index
 * inputs. False with a message naming input `what` when it is not an integer tensor. */
bool gl_tensor_ints(const gl_tensor *t, const char *where, const char *what, int64_t **vals,
                    size_t *count);

/* Whether the node asks for output i (an omitted optional output need not be made). */
bool gl_out_wanted(const gl_kernel_ctx *k, size_t i);
/* Create output i (k->out[i]) with zeroed storage; NULL with a message on failure. */
gl_tensor *gl_out_new(gl_kernel_ctx *k, size_t i, gl_dtype dt, int rank, const int64_t *dims);
/* Output i as a copy-free share of tensor t (Identity-like ops). */
gl_tensor *gl_out_share(gl_kernel_ctx *k, size_t i, const gl_tensor *t);

/* ---- kernels: elements ------------------------------------------------------------ */

/* Element i as double / int64 (any numeric or bool dtype; float16/bfloat16 converted). */
double gl_elem_f64(const gl_tensor *t, int64_t i);
int64_t gl_elem_i64(const gl_tensor *t, int64_t i);
/* Store v into element i of t converted to t's dtype (saturation/rounding as C casts
 * from double do for ints, round-to-nearest-even for float16/bfloat16). Numeric and bool
 * tensors only: a string tensor is left unchanged. */
void gl_elem_set_f64(gl_tensor *t, int64_t i, double v);
void gl_elem_set_i64(gl_tensor *t, int64_t i, int64_t v);
/* ONNX's QuantizeLinear of one value into 8-bit dt (uint8 or int8): x / scale rounded half
 * to even, plus the zero point, saturated; NaN gives the zero point. */
int64_t gl_quantize_value(float x, float scale, int64_t zero, gl_dtype dt);
/* Three-way order of elements i and j of t (as numpy sorts): numbers by value, exact for
 * 64-bit integers, NaN after every number and equal to NaN; strings bytewise. */
int gl_elem_cmp(const gl_tensor *t, int64_t i, int64_t j);
/* dst[di, di + n) = src[si, si + n), same dtype, any dtype: strings are copied, since a
 * string buffer owns its bytes. dst is a tensor the kernel created. */
void gl_copy_elems(gl_tensor *dst, int64_t di, const gl_tensor *src, int64_t si, int64_t n);
/* *dst = a copy of src's bytes; dst's old bytes are freed. */
void gl_bytes_assign(gl_bytes *dst, const gl_bytes *src);

/* Whole tensors in double, for kernels that compute in double whatever the dtype: one
 * conversion instead of a dtype switch per element. The elements of t (malloc'd), NULL
 * with a message when memory runs out. */
double *gl_tensor_to_f64(const gl_tensor *t, const char *where);
/* Write t->count doubles into t (a fresh output), converted to its dtype; integer
 * outputs round to nearest when `round_ints` (interpolating ops), else truncate like C. */
void gl_tensor_store_f64(gl_tensor *t, const double *v, bool round_ints);

/* ---- broadcasting at run time ----------------------------------------------------- */

/* numpy broadcasting at run time. */
typedef struct gl_bcast {
    int rank;
    int64_t dims[GL_MAX_RANK];     /* output dims */
    int64_t count;                 /* output elements */
    size_t n;                      /* operands */
    int64_t strides[8][GL_MAX_RANK]; /* element strides per operand; 0 on broadcast dims */
} gl_bcast;

#define GL_BCAST_MAX_OPERANDS 8

/* The broadcast output shape of `n` tensors (n <= GL_BCAST_MAX_OPERANDS); GL_ERR_INPUT
 * naming the dims that do not broadcast. */
gl_status gl_bcast_init(gl_bcast *b, const gl_tensor *const *ts, size_t n, const char *where);

/* Iterating: offsets of every operand for each output element in row-major order.
 *     gl_bcast_iter it; gl_bcast_iter_start(&it, &b);
 *     for (int64_t i = 0; i < b.count; i++, gl_bcast_iter_next(&it)) use it.off[k];  */
typedef struct gl_bcast_iter {
    const gl_bcast *b;
    int64_t idx[GL_MAX_RANK];
    int64_t off[GL_BCAST_MAX_OPERANDS];
} gl_bcast_iter;

void gl_bcast_iter_start(gl_bcast_iter *it, const gl_bcast *b);
void gl_bcast_iter_next(gl_bcast_iter *it);

#endif

/* dn_movement.c — data movement as views of the input's bytes (dn_view.c has the rule)
 * or, where no view exists, one oneDNN reorder.
 *
 *   Transpose  the input's description with its axes permuted
 *       (dnnl_memory_desc_permute_axes takes the inverse of ONNX's perm): the output's
 *       element (i0, i1, ...) is the input's at the permuted index. A view on unblocked
 *       layouts; on blocked ones a reorder from that description.
 *   Reshape, Flatten, Squeeze, Unsqueeze  the output's dims come from the reference
 *       kernel run on the input's header (it only reads dims and shares the buffer, so
 *       every spelling of the shape and every error is the registry's); a view when the
 *       description reshapes by strides (dn_md_reshape). A plain input is the reference
 *       kernel's: it shares the buffer as a view would.
 *   Slice  positive steps: the input's description with offset and strides scaled; on
 *       blocked layouts a oneDNN submemory (steps of 1, offsets on block boundaries).
 *   Split  every output a view of its part (sizes from the reference kernel, run once
 *       per build on the header), kept whatever reads it.
 *   Gather  one index (a scalar drops the axis, [1] keeps it): a Slice of that one
 *       element of the axis, a view when an ordinary tensor, else one reorder into
 *       plain. Swin's q, k and v (Gathers 0, 1, 2 of its [3, windows, heads, 49, 32]
 *       Transpose) were a reorder of the whole, then three single-threaded copies of
 *       the reference kernel; now the Transpose is a view and each Gather one reorder
 *       of its third on the node's threads, into the plain order its products read.
 *   Shape  reads dims only: the reference kernel on the input's header, never a plain
 *       copy of its bytes.
 * Parameters (shape, axes, starts...) may be computed at run time when they are small:
 * the shape guard keys them by value (dn.h, DN_KEY_VALS). Small plain tensors stay on
 * the reference kernel. uint8 and int8 tensors move alike (dn_view.c).
 */
#include "exec/dnnl/dn_opkit.h"

#include <stdlib.h>
#include <string.h>

/* Inputs past the data are parameters a build reads: fixed, or small enough to key. */
static bool params_keyed(const gl_kernel_ctx *k)
{
    for (size_t i = 1; i < k->n_inputs; i++)
        if (!dn_input_keyed(k, i))
            return false;
    return true;
}

static gl_status data_input(dn_build *b, const gl_tensor **x)
{
    *x = dn_f32_int8_input(b->k, 0);
    if (!b->held) /* a fused unit's claim, on shapes only */
        return dn_refuse(b, "no tensor to view");
    if (!*x || (*x)->rank < 1 || (*x)->count == 0)
        return dn_refuse(b, "not a non-empty float32, uint8 or int8 tensor");
    if (!(*x)->layout && (*x)->count < DN_OPS_SMALL)
        return dn_refuse(b, "%lld elements: below the oneDNN threshold (%d)",
                         (long long)(*x)->count, DN_OPS_SMALL);
    if (!params_keyed(b->k))
        return dn_refuse(b, "parameters computed at run time with more than %d values",
                         DN_KEY_VALS);
    return GL_OK;
}

/* ---- Transpose ------------------------------------------------------------------------- */

static gl_status transpose_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x;
    gl_status st = data_input(b, &x);
    if (st != GL_OK || b->s->fallback)
        return st;
    int rank = x->rank, inv[DNNL_MAX_NDIMS];
    size_t n_perm;
    const int64_t *perm = gl_attr_ints(k->node, "perm", &n_perm);
    if (perm && n_perm != (size_t)rank)
        return dn_refuse(b, "perm has %zu values for rank %d", n_perm, rank);
    bool seen[DNNL_MAX_NDIMS] = {false};
    int64_t out[DNNL_MAX_NDIMS];
    for (int j = 0; j < rank; j++) {
        int64_t p = perm ? perm[j] : rank - 1 - j;
        if (p < 0 || p >= rank || seen[p])
            return dn_refuse(b, "perm is not a permutation");
        seen[p] = true;
        inv[p] = j;
        out[j] = x->dims[p];
    }
    dnnl_memory_desc_t view;
    dnnl_status_t r = dnnl_memory_desc_permute_axes(&view, &b->held[0], inv);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN cannot permute this layout (%s)", dnnl_status2str(r));
    return dn_view_bind(b, &view, rank, out, pd);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze ------------------------------------------------- */

#define SHAPE_MAX_INPUTS 4

/* The reference kernel's outputs (out[k->n_outputs], caller frees) from the input's
 * header: for their dims. Reshape and the like only share the buffer; Split copies, once
 * per build, bytes that mean nothing here. */
static gl_status by_reference(dn_build *b, gl_tensor **out)
{
    const gl_kernel_ctx *k = b->k;
    const gl_op_def *def = gl_op_lookup(k->node->domain,
                                        k->node->op_type, k->opset);
    if (!def || !def->kernel || k->n_inputs > SHAPE_MAX_INPUTS)
        return dn_refuse(b, "no reference kernel to read the shape from");
    gl_tensor header = *k->in[0];
    header.layout = NULL; /* the kernel reads dims only; the bytes are shared, not read */
    const gl_tensor *in[SHAPE_MAX_INPUTS];
    memcpy(in, k->in, k->n_inputs * sizeof(*in));
    in[0] = &header;
    gl_kernel_ctx rk = *k;
    rk.in = in;
    rk.out = out;
    rk.alloc = NULL;
    rk.alloc_over = NULL;
    gl_status st = def->kernel(&rk);
    if (st != GL_OK || !out[0]) {
        gl_error_clear();
        for (size_t i = 0; i < k->n_outputs; i++) {
            gl_tensor_free(out[i]);
            out[i] = NULL;
        }
        return dn_refuse(b, "the reference kernel refuses these arguments");
    }
    return GL_OK;
}

static gl_status reshape_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_tensor *x = b->k->in[0];
    if (x && !x->layout)
        return dn_refuse(b, "plain: the reference kernel shares the buffer");
    gl_status st = data_input(b, &x);
    if (st != GL_OK || b->s->fallback)
        return st;
    gl_tensor *out = NULL;
    if (b->k->n_outputs != 1)
        return dn_refuse(b, "%zu outputs", b->k->n_outputs);
    st = by_reference(b, &out);
    if (st != GL_OK || b->s->fallback)
        return st;
    int rank = out->rank;
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, out->dims, (size_t)rank * sizeof(*dims));
    gl_tensor_free(out);
    if (rank < 1 || rank > DNNL_MAX_NDIMS)
        return dn_refuse(b, "rank %d out of oneDNN's range", rank);
    dnnl_memory_desc_t view;
    bool is_view = dn_md_reshape(&b->held[0], rank, dims, &view) == dnnl_success;
    return dn_view_bind(b, is_view ? &view : NULL, rank, dims, pd);
}

/* ---- Slice, Split ------------------------------------------------------------------------- */

/* Input 0's description restricted to count[d] elements from first[d] by step[d]. */
static dnnl_status_t window(const dnnl_memory_desc_t *held, int rank, const int64_t *first,
                            const int64_t *count, const int64_t *step, dnnl_memory_desc_t *view)
{
    dnnl_dims_t d, s, off;
    bool unit = true;
    int64_t offset = held->offset0;
    for (int i = 0; i < rank; i++) {
        if (count[i] == 0 || step[i] < 0)
            return dnnl_unimplemented;
        unit = unit && step[i] == 1;
        d[i] = count[i];
        off[i] = first[i];
        s[i] = held->format_desc.blocking.strides[i] * step[i];
        offset += first[i] * held->format_desc.blocking.strides[i];
    }
    if (held->format_desc.blocking.inner_nblks != 0)
        return unit ? dnnl_memory_desc_init_submemory(view, held, d, off) : dnnl_unimplemented;
    dnnl_status_t r = dnnl_memory_desc_init_by_strides(view, rank, d, held->data_type, s);
    view->offset0 = offset;
    return r;
}

static gl_status slice_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_tensor *x;
    gl_status st = data_input(b, &x);
    if (st != GL_OK || b->s->fallback)
        return st;
    int64_t first[GL_MAX_RANK], count[GL_MAX_RANK], step[GL_MAX_RANK];
    gl_kernel_ctx rk = *b->k;
    if (!gl_slice_select(&rk, x, first, count, step)) {
        gl_error_clear();
        return dn_refuse(b, "the reference kernel refuses these arguments");
    }
    dnnl_memory_desc_t view;
    dnnl_status_t r = window(&b->held[0], x->rank, first, count, step, &view);
    if (r != dnnl_success)
        return dn_refuse(b, "no view of this layout for that slice: an empty slice, a negative "
                            "step or offsets off the block (%s)", dnnl_status2str(r));
    return dn_view_bind(b, &view, x->rank, count, pd);
}

/* Every output a view: its part of the axis (what reads it densely reorders it). */
static gl_status split_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    (void)pd;
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x;
    gl_status st = data_input(b, &x);
    if (st != GL_OK || b->s->fallback)
        return st;
    if (k->n_outputs > DN_MAX_OUTPUTS)
        return dn_refuse(b, "more than %d outputs", DN_MAX_OUTPUTS);
    gl_tensor *outs[DN_MAX_OUTPUTS] = {NULL};
    st = by_reference(b, outs);
    if (st != GL_OK || b->s->fallback)
        return st;
    int axis = 0; /* the dim the outputs part */
    for (size_t i = 0; i < k->n_outputs; i++)
        for (int d = 0; outs[i] && d < x->rank; d++)
            if (outs[i]->dims[d] != x->dims[d])
                axis = d;
    int64_t first[GL_MAX_RANK] = {0}, step[GL_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        step[d] = 1;
    for (size_t i = 0; i < k->n_outputs && !b->s->fallback; i++) {
        if (!outs[i])
            continue;
        dnnl_memory_desc_t view;
        if (window(&b->held[0], x->rank, first, outs[i]->dims, step, &view) != dnnl_success)
            st = dn_refuse(b, "no view of this layout for output %zu", i);
        else
            dn_bind_view(b, i, 0, &view, x->rank, outs[i]->dims);
        first[axis] += outs[i]->dims[axis];
    }
    for (size_t i = 0; i < k->n_outputs; i++)
        gl_tensor_free(outs[i]);
    return st;
}

/* One index of the axis: the window of that element, the axis dropped for a scalar. */
static gl_status gather_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x, *ind = k->n_inputs > 1 ? k->in[1] : NULL;
    gl_status st = data_input(b, &x);
    if (st != GL_OK || b->s->fallback)
        return st;
    int64_t *idx = NULL;
    size_t n = 0;
    if (!ind || ind->rank > 1 || !dn_input_ints(k, 1, &idx, &n) || n != 1) {
        free(idx);
        return dn_refuse(b, "indices other than one integer");
    }
    int64_t i = idx[0], axis = gl_node_attr_int(k->node, "axis", 0);
    free(idx);
    axis += axis < 0 ? x->rank : 0;
    int rank = x->rank - (ind->rank == 0);
    if (axis < 0 || axis >= x->rank || rank < 1)
        return dn_refuse(b, "axis out of range or a scalar output");
    i += i < 0 ? x->dims[axis] : 0;
    if (i < 0 || i >= x->dims[axis])
        return dn_refuse(b, "index out of range: the reference kernel says so");
    int64_t first[GL_MAX_RANK] = {0}, count[GL_MAX_RANK], step[GL_MAX_RANK], dims[GL_MAX_RANK];
    for (int d = 0, o = 0; d < x->rank; d++) {
        count[d] = d == axis ? 1 : x->dims[d];
        step[d] = 1;
        if (d != axis || ind->rank == 1)
            dims[o++] = count[d];
    }
    first[axis] = i;
    dnnl_memory_desc_t win, view;
    if (window(&b->held[0], x->rank, first, count, step, &win) != dnnl_success ||
        dn_md_reshape(&win, rank, dims, &view) != dnnl_success)
        return dn_refuse(b, "no view of this layout for that index");
    return dn_view_bind_plain(b, &view, rank, dims, pd);
}

/* ---- Shape ------------------------------------------------------------------------------- */

static gl_status shape_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    (void)pd;
    b->s->dims_only = true;
    return dn_refuse(b, "dims only: the reference kernel on the tensor's header");
}

static bool data_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (!dn_input_fits_int8(n, 0, 1, DNNL_MAX_NDIMS)) {
        snprintf(why, len, "input is not float32, uint8 or int8 of rank 1 to %d",
                 DNNL_MAX_NDIMS);
        return false;
    }
    return true;
}

static const dn_op movement_ops[] = {
    {"", "Transpose", 1, data_claim, transpose_build, NULL},
    {"", "Reshape", 1, data_claim, reshape_build, NULL},
    {"", "Flatten", 1, data_claim, reshape_build, NULL},
    {"", "Squeeze", 1, data_claim, reshape_build, NULL},
    {"", "Unsqueeze", 1, data_claim, reshape_build, NULL},
    {"", "Slice", 1, data_claim, slice_build, NULL},
    {"", "Split", 1, data_claim, split_build, NULL},
    {"", "Gather", 1, data_claim, gather_build, NULL},
    {"", "Shape", 1, data_claim, shape_build, NULL},
};
const dn_op_table dn_movement_ops = {movement_ops, GL_ARRAY_LEN(movement_ops)};

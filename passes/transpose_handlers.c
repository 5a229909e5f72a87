/* transpose_handlers.c — how a Transpose passes each op: one row per op type and opset
 * range, naming which inputs it may pass, whether the outputs then carry it, and the
 * rewrite (a check that edits nothing, then the edit).
 *
 * DESIGN.md puts the transpose handler in the op's registry entry. The table lives here
 * instead, like ONNX Runtime's handler map keyed by domain.op: the op files stay about
 * what an op computes, and the pass's rules — which inputs, which attributes remap, the
 * opset forms — are read in one place. The registry still decides two things by its
 * flags: GL_OP_ELEMENTWISE and GL_OP_BROADCAST ops without a row of their own get the
 * elementwise and broadcasting handlers, and GL_OP_LAYOUT_SENSITIVE ops get none.
 *
 * Notation in the comments: the node read t = Transpose(x, perm), so t's dim i is x's dim
 * perm[i]; after the push it reads x, and a Transpose with perm (or a derived perm) goes
 * after its outputs.
 */
#include "passes/transpose.h"

#include "ops/opkit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared ------------------------------------------------------------------------------ */

static gl_node *node_of(const gl_tp_args *a) { return a->node; }

#define refuse gl_tp_refuse

bool gl_tp_refuse(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return false;
}

/* axis in [-rank, rank) normalized into *out. */
static bool axis_in_range(int64_t axis, int rank, int64_t *out)
{
    if (axis < -rank || axis >= rank)
        return false;
    *out = axis < 0 ? axis + rank : axis;
    return true;
}

static bool check_nothing(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    (void)a, (void)plan, (void)why, (void)len;
    return true;
}

/* Inputs by perm^-1, outputs by the plan's perm. */
static gl_status apply_simple(gl_tp_args *a, const gl_tp_plan *plan)
{
    gl_status st = gl_tp_transpose_inputs(a);
    return st == GL_OK ? gl_tp_transpose_outputs(a->run, a->node, plan->out_perm, plan->out_rank)
                       : st;
}

/* Replace constant input `slot` (axes, shape) by new int64 values; drop the old one when
 * nothing else reads it. */
static gl_status replace_ints_input(gl_tp_args *a, size_t slot, const int64_t *vals, size_t n,
                                    gl_dtype dt)
{
    gl_node *node = a->node;
    gl_value *old = slot < node->n_inputs ? node->inputs[slot] : NULL;
    gl_value *c = gl_tp_add_ints(a->run, old ? old->name : "axes", vals, n, dt);
    if (!c)
        return GL_ERR_NOMEM;
    gl_status st = gl_set_input(a->run->g, node, slot, c);
    if (st == GL_OK && old && old->init && !old->n_uses && !old->is_input && !old->n_output_refs &&
        !old->outer && !old->producer)
        st = gl_remove_value(a->run->g, old);
    return st;
}

/* A 1-D list input whose length is known (a constant, or a static shape) and differs
 * from `expected`: an invalid model the handler must not read past. */
static bool list_length_wrong(const gl_value *v, int64_t expected)
{
    int64_t *vals = NULL;
    size_t n;
    if (gl_tp_const_ints(v, &vals, &n)) {
        free(vals);
        return (int64_t)n != expected;
    }
    const gl_shape *s = &v->type.shape;
    return v->type.kind == GL_TYPE_TENSOR && s->rank >= 0 &&
           (s->rank != 1 || (s->dims[0].value >= 0 && s->dims[0].value != expected));
}

/* ---- elementwise and broadcasting ---------------------------------------------------------- */

static const gl_tp_handler elementwise_handler = {"elementwise", GL_TP_FIRST, true,
                                                  check_nothing, apply_simple};
static const gl_tp_handler all_inputs_handler = {"elementwise", GL_TP_ALL, true,
                                                 check_nothing, apply_simple};

/* Every transposable input must line up with the Transpose's rank: lower ranks get
 * leading 1-dims (numpy broadcasting), so their rank must be known. */
static bool check_broadcast(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    (void)plan;
    for (size_t k = 0; k < a->n_inputs; k++) {
        const gl_value *v = node_of(a)->inputs[a->inputs[k]];
        int r = gl_value_rank(v);
        if (r < 0)
            return refuse(why, len, "%s '%s': the rank of input %zu ('%s') is unknown, so it "
                          "cannot be lined up for broadcasting", a->node->op_type,
                          a->node->name, a->inputs[k], v->name);
        if (r > a->rank)
            return refuse(why, len, "%s '%s': input %zu ('%s') has rank %d, more than the "
                          "Transpose's %d", a->node->op_type, a->node->name, a->inputs[k],
                          v->name, r, a->rank);
    }
    return true;
}

static gl_status apply_broadcast(gl_tp_args *a, const gl_tp_plan *plan)
{
    int64_t axes[GL_MAX_RANK];
    for (size_t k = 0; k < a->n_inputs; k++) {
        size_t slot = a->inputs[k];
        int diff = a->rank - gl_value_rank(a->node->inputs[slot]);
        for (int i = 0; i < diff; i++)
            axes[i] = i;
        gl_status st = diff > 0 ? gl_tp_unsqueeze_input(a->run, a->node, slot, axes, (size_t)diff)
                                : GL_OK;
        if (st != GL_OK)
            return st;
    }
    return apply_simple(a, plan);
}

static const gl_tp_handler broadcast_handler = {"broadcast", GL_TP_NON_SCALAR, true,
                                                check_broadcast, apply_broadcast};

/* ---- ops with an axis --------------------------------------------------------------------- */

/* The default axis when the attribute is absent; false when it is required. */
static bool default_axis(const gl_node *n, int64_t *axis)
{
    if (gl_node_is(n, "Split")) {
        *axis = 0;
        return true;
    }
    if (gl_node_is(n, "Softmax") || gl_node_is(n, "LogSoftmax") || gl_node_is(n, "Hardmax")) {
        *axis = -1;
        return true;
    }
    return false; /* Concat */
}

static bool check_axis(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    const gl_attr *at = gl_node_attr_typed(a->node, "axis", GL_ATTR_INT);
    int64_t axis;
    if (at)
        axis = at->i;
    else if (!default_axis(a->node, &axis))
        return refuse(why, len, "%s '%s' has no axis attribute", a->node->op_type,
                      a->node->name);
    if (!axis_in_range(axis, a->rank, &axis))
        return refuse(why, len, "%s '%s': axis %lld is out of range for rank %d",
                      a->node->op_type, a->node->name, (long long)(at ? at->i : axis), a->rank);
    plan->axis = a->perm[axis];
    return true;
}

static gl_status apply_axis(gl_tp_args *a, const gl_tp_plan *plan)
{
    gl_status st = apply_simple(a, plan);
    if (st == GL_OK)
        gl_node_set_attr_int(a->node, "axis", plan->axis);
    return st;
}

static const gl_tp_handler concat_handler = {"axis", GL_TP_ALL, true, check_axis, apply_axis};
static const gl_tp_handler axis_handler = {"axis", GL_TP_FIRST, true, check_axis, apply_axis};

/* Softmax/LogSoftmax/Hardmax before opset 13 flatten the input to 2-D at `axis` (default
 * 1): fine as long as no dim crosses that line, and then the axis stays. */
static bool check_softmax_flatten(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    (void)plan;
    int64_t axis;
    if (!axis_in_range(gl_node_attr_int(a->node, "axis", 1), a->rank, &axis))
        return refuse(why, len, "%s '%s': axis out of range for rank %d", a->node->op_type,
                      a->node->name, a->rank);
    for (int i = 0; i < a->rank; i++)
        if ((i < axis) != (a->perm[i] < axis))
            return refuse(why, len, "%s '%s' (opset < 13) flattens its input at axis %lld "
                          "and the perm moves dims across it", a->node->op_type,
                          a->node->name, (long long)axis);
    return true;
}

static const gl_tp_handler softmax_flatten_handler = {"axis", GL_TP_FIRST, true,
                                                      check_softmax_flatten, apply_simple};

/* ArgMin/ArgMax: one axis, dropped unless keepdims. */
static bool check_argminmax(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    int64_t axis;
    if (!axis_in_range(gl_node_attr_int(a->node, "axis", 0), a->rank, &axis))
        return refuse(why, len, "%s '%s': axis out of range for rank %d", a->node->op_type,
                      a->node->name, a->rank);
    plan->axis = a->perm[axis];
    if (!gl_node_attr_int(a->node, "keepdims", 1)) {
        gl_tp_perm_squeeze(a->perm, a->rank, &plan->axis, 1, plan->out_perm);
        plan->out_rank = a->rank - 1;
    }
    return true;
}

static const gl_tp_handler argminmax_handler = {"reduce", GL_TP_FIRST, true, check_argminmax,
                                                apply_axis};

/* Gather along `axis`: indices of rank q replace that dim. The output dims keep their
 * order around the indices' dims, so the output perm follows perm with the axis
 * expanded to q dims. */
static bool check_gather(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    int64_t axis;
    const gl_value *ind = a->node->n_inputs > 1 ? a->node->inputs[1] : NULL;
    int q = gl_value_rank(ind);
    if (!axis_in_range(gl_node_attr_int(a->node, "axis", 0), a->rank, &axis))
        return refuse(why, len, "Gather '%s': axis out of range for rank %d", a->node->name,
                      a->rank);
    if (q < 0)
        return refuse(why, len, "Gather '%s': the rank of the indices is unknown, so is the "
                      "output's layout", a->node->name);
    if (a->rank - 1 + q > GL_MAX_RANK)
        return refuse(why, len, "Gather '%s': output rank over %d", a->node->name, GL_MAX_RANK);
    int64_t new_axis = a->perm[axis];
    /* Position of x's dim d in the new output. */
    int64_t pos[GL_MAX_RANK];
    for (int d = 0; d < a->rank; d++)
        pos[d] = d < new_axis ? d : d - 1 + q;
    int out = 0;
    for (int i = 0; i < axis; i++)
        plan->out_perm[out++] = pos[a->perm[i]];
    for (int k = 0; k < q; k++)
        plan->out_perm[out++] = new_axis + k;
    for (int i = (int)axis + 1; i < a->rank; i++)
        plan->out_perm[out++] = pos[a->perm[i]];
    plan->out_rank = out;
    plan->axis = new_axis;
    return true;
}

static const gl_tp_handler gather_handler = {"gather", GL_TP_FIRST, true, check_gather,
                                             apply_axis};

/* ---- Shape ----------------------------------------------------------------------------------- */

/* Shape(Transpose(x, perm)) = Gather(Shape(x), perm) — of perm[start:end] from opset 15. */
static bool check_shape(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    gl_tensor *known = gl_shape_node_value(a->node);
    gl_tensor_free(known);
    if (known)
        return refuse(why, len, "Shape '%s': the dims it returns are known, so it needs no "
                      "Transpose at all (dead-transpose, or constant folding, takes it)",
                      a->node->name);
    int64_t start = 0, end = a->rank;
    if (a->run->opset >= 15) {
        start = gl_node_attr_int(a->node, "start", 0);
        end = gl_node_attr_int(a->node, "end", a->rank);
        start = start < 0 ? start + a->rank : start;
        end = end < 0 ? end + a->rank : end;
        start = start < 0 ? 0 : start > a->rank ? a->rank : start;
        end = end < 0 ? 0 : end > a->rank ? a->rank : end;
    }
    plan->n_axes = 0;
    for (int64_t i = start; i < end; i++)
        plan->axes[plan->n_axes++] = a->perm[i];
    plan->transposes_outputs = false;
    return true;
}

static gl_status apply_shape(gl_tp_args *a, const gl_tp_plan *plan)
{
    gl_tp_run *run = a->run;
    gl_node *shape = a->node;
    gl_status st = gl_tp_transpose_inputs(a);
    if (st != GL_OK)
        return st;
    gl_node_remove_attr(shape, "start");
    gl_node_remove_attr(shape, "end");
    gl_value *idx = gl_tp_add_ints(run, "perm", plan->axes, plan->n_axes, GL_DT_INT64);
    gl_value *ins[2] = {NULL, idx};
    gl_node *gather = idx ? gl_tp_add_node(run, "Gather", ins, 2, 1) : NULL;
    if (!gather)
        return GL_ERR_NOMEM;
    gl_node_set_attr_int(gather, "axis", 0);
    if ((st = gl_move_output(run->g, shape, 0, gather, 0)) != GL_OK ||
        (st = gl_set_input(run->g, gather, 0, shape->outputs[0])) != GL_OK)
        return st;
    gl_type *t = &shape->outputs[0]->type; /* now the whole shape of x */
    t->kind = GL_TYPE_TENSOR;
    t->dtype = GL_DT_INT64;
    gl_shape_set_rank(&t->shape, 1);
    t->shape.dims[0].value = a->rank;
    return GL_OK;
}

static const gl_tp_handler shape_handler = {"shape", GL_TP_FIRST, false, check_shape,
                                            apply_shape};

/* ---- per-axis lists: Pad, Tile, Resize ---------------------------------------------------- */

/* new[d] = list[perm_inv[d]] for lists of `copies` blocks of rank entries (pads: begins
 * then ends). */
static size_t list_index(const gl_tp_args *a, int copies, int64_t *idx)
{
    size_t n = 0;
    for (int c = 0; c < copies; c++)
        for (int d = 0; d < a->rank; d++)
            idx[n++] = a->perm_inv[d] + (int64_t)c * a->rank;
    return n;
}

enum { PAD_ATTR, PAD_INPUT, PAD_AXES };

static bool check_pad(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    const gl_node *n = a->node;
    if (a->run->opset < 11) {
        const gl_attr *pads = gl_node_attr(n, "pads");
        if (!pads || pads != gl_node_attr_typed(n, "pads", GL_ATTR_INTS) ||
            pads->n != 2 * (size_t)a->rank)
            return refuse(why, len, "Pad '%s': pads attribute absent or not 2 x rank %d long",
                          n->name, a->rank);
        plan->mode = PAD_ATTR;
        return true;
    }
    if (n->n_inputs < 2 || !n->inputs[1])
        return refuse(why, len, "Pad '%s' has no pads input", n->name);
    plan->mode = PAD_INPUT;
    if (!(n->n_inputs > 3 && n->inputs[3]) && list_length_wrong(n->inputs[1], 2 * a->rank))
        return refuse(why, len, "Pad '%s': pads is not 2 x rank %d long", n->name, a->rank);
    if (n->n_inputs > 3 && n->inputs[3]) {
        int64_t *axes = NULL;
        size_t count;
        if (!gl_tp_const_ints(n->inputs[3], &axes, &count))
            return refuse(why, len, "Pad '%s': axes computed at run time", n->name);
        bool ok = gl_tp_axes_normalize(axes, count, a->rank);
        free(axes);
        if (!ok)
            return refuse(why, len, "Pad '%s': axes out of range for rank %d", n->name, a->rank);
        plan->mode = PAD_AXES;
    }
    return true;
}

static gl_status apply_pad(gl_tp_args *a, const gl_tp_plan *plan)
{
    int64_t idx[2 * GL_MAX_RANK];
    size_t n = list_index(a, 2, idx);
    gl_status st = GL_OK;
    if (plan->mode == PAD_ATTR) {
        const gl_attr *pads = gl_node_attr(a->node, "pads");
        int64_t permuted[2 * GL_MAX_RANK];
        for (size_t k = 0; k < n; k++)
            permuted[k] = pads->ints[idx[k]];
        gl_node_set_attr_ints(a->node, "pads", permuted, n);
    } else if (plan->mode == PAD_INPUT) {
        st = gl_tp_permute_list_input(a->run, a->node, 1, idx, n);
    } else {
        st = gl_tp_remap_axes_input(a->run, a->node, 3, a->perm, a->rank);
    }
    return st == GL_OK ? apply_simple(a, plan) : st;
}

static const gl_tp_handler pad_handler = {"per-axis list", GL_TP_FIRST, true, check_pad,
                                          apply_pad};

static bool check_tile(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    (void)plan;
    if (a->node->n_inputs < 2 || !a->node->inputs[1])
        return refuse(why, len, "Tile '%s' has no repeats input", a->node->name);
    if (list_length_wrong(a->node->inputs[1], a->rank))
        return refuse(why, len, "Tile '%s': repeats is not %d long (the rank)", a->node->name,
                      a->rank);
    return true;
}

static gl_status apply_tile(gl_tp_args *a, const gl_tp_plan *plan)
{
    int64_t idx[GL_MAX_RANK];
    size_t n = list_index(a, 1, idx);
    gl_status st = gl_tp_permute_list_input(a->run, a->node, 1, idx, n);
    return st == GL_OK ? apply_simple(a, plan) : st;
}

static const gl_tp_handler tile_handler = {"per-axis list", GL_TP_FIRST, true, check_tile,
                                           apply_tile};

enum { RESIZE_SCALES_ONLY, RESIZE_LISTS, RESIZE_AXES };

static bool check_resize(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    const gl_attr *axes = gl_node_attr(a->node, "axes");
    const gl_node *n = a->node;
    plan->mode = a->run->opset < 11 ? RESIZE_SCALES_ONLY : RESIZE_LISTS;
    for (size_t s = 1; s < n->n_inputs && s < 4 && !(a->run->opset >= 18 && axes); s++) {
        const gl_value *v = n->inputs[s];
        int64_t want = plan->mode == RESIZE_LISTS && s == 1 ? 2 * a->rank : a->rank;
        const gl_tensor *t = v && gl_value_is_constant(v) ? v->init : NULL;
        if (v && !(t && t->count == 0) && list_length_wrong(v, want))
            return refuse(why, len, "Resize '%s': input %zu is not %lld long", n->name, s,
                          (long long)want);
    }
    if (a->run->opset >= 18 && axes) {
        if (axes != gl_node_attr_typed(n, "axes", GL_ATTR_INTS) || axes->n > GL_MAX_RANK)
            return refuse(why, len, "Resize '%s': bad axes attribute", a->node->name);
        int64_t norm[GL_MAX_RANK];
        memcpy(norm, axes->ints, axes->n * sizeof(int64_t));
        if (!gl_tp_axes_normalize(norm, axes->n, a->rank))
            return refuse(why, len, "Resize '%s': axes out of range", a->node->name);
        plan->n_axes = gl_tp_axes_through(norm, axes->n, a->perm, a->rank, false, plan->axes);
        plan->mode = RESIZE_AXES;
    }
    return true;
}

static gl_status apply_resize(gl_tp_args *a, const gl_tp_plan *plan)
{
    int64_t idx[2 * GL_MAX_RANK];
    gl_node *n = a->node;
    gl_status st = GL_OK;
    if (plan->mode == RESIZE_AXES) {
        gl_node_set_attr_ints(n, "axes", plan->axes, plan->n_axes);
    } else if (plan->mode == RESIZE_SCALES_ONLY) {
        if (n->n_inputs > 1 && n->inputs[1])
            st = gl_tp_permute_list_input(a->run, n, 1, idx, list_index(a, 1, idx));
    } else {
        if (n->n_inputs > 1 && n->inputs[1])
            st = gl_tp_permute_list_input(a->run, n, 1, idx, list_index(a, 2, idx));
        for (size_t s = 2; s < 4 && s < n->n_inputs && st == GL_OK; s++)
            if (n->inputs[s])
                st = gl_tp_permute_list_input(a->run, n, s, idx, list_index(a, 1, idx));
    }
    return st == GL_OK ? apply_simple(a, plan) : st;
}

const gl_tp_handler gl_tp_resize_handler = {"per-axis list", GL_TP_FIRST, true, check_resize,
                                            apply_resize};

/* ---- reductions ----------------------------------------------------------------------------- */

enum { REDUCE_ATTR, REDUCE_CONST, REDUCE_EMPTY, REDUCE_GATHER };

/* Axes come as an input from opset 13 for ReduceSum, from 18 for the others. */
static int64_t reduce_axes_input_since(const gl_node *n)
{
    return gl_node_is(n, "ReduceSum") ? 13 : 18;
}

/* The output perm once `axes` (of x, sorted) are reduced. */
static void reduce_out(const gl_tp_args *a, gl_tp_plan *plan, bool keepdims)
{
    if (keepdims)
        return; /* perm as is */
    gl_tp_perm_squeeze(a->perm, a->rank, plan->axes, plan->n_axes, plan->out_perm);
    plan->out_rank = a->rank - (int)plan->n_axes;
}

static bool check_reduce(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    const gl_node *n = a->node;
    bool keepdims = gl_node_attr_int(n, "keepdims", 1) != 0;
    bool as_input = a->run->opset >= reduce_axes_input_since(n);
    int64_t *axes = NULL;
    size_t count = 0;
    bool present;
    bool readable = gl_tp_read_axes(a->run, n, "axes", 1, reduce_axes_input_since(n), &axes,
                                    &count, &present);
    bool empty = !present || (readable && count == 0);
    if (empty) {
        /* Every axis, or none at all with noop_with_empty_axes. */
        free(axes);
        bool noop = as_input && gl_node_attr_int(n, "noop_with_empty_axes", 0);
        plan->mode = as_input ? REDUCE_EMPTY : REDUCE_ATTR;
        plan->n_axes = 0;
        if (!noop && !keepdims)
            plan->out_rank = 0; /* a scalar: nothing to transpose after */
        return true;
    }
    if (!readable) {
        if (!keepdims)
            return refuse(why, len, "%s '%s': axes computed at run time and keepdims=0: the "
                          "output's layout is not known", n->op_type, n->name);
        plan->mode = REDUCE_GATHER;
        return true;
    }
    bool ok = gl_tp_axes_normalize(axes, count, a->rank);
    if (ok)
        plan->n_axes = gl_tp_axes_through(axes, count, a->perm, a->rank, true, plan->axes);
    free(axes);
    if (!ok)
        return refuse(why, len, "%s '%s': axes out of range for rank %d (or repeated)",
                      n->op_type, n->name, a->rank);
    plan->mode = as_input ? REDUCE_CONST : REDUCE_ATTR;
    reduce_out(a, plan, keepdims);
    return true;
}

static gl_status apply_reduce(gl_tp_args *a, const gl_tp_plan *plan)
{
    gl_status st = GL_OK;
    if (plan->mode == REDUCE_ATTR && plan->n_axes)
        gl_node_set_attr_ints(a->node, "axes", plan->axes, plan->n_axes);
    else if (plan->mode == REDUCE_CONST)
        st = replace_ints_input(a, 1, plan->axes, plan->n_axes, GL_DT_INT64);
    else if (plan->mode == REDUCE_GATHER)
        st = gl_tp_remap_axes_input(a->run, a->node, 1, a->perm, a->rank);
    return st == GL_OK ? apply_simple(a, plan) : st;
}

static const gl_tp_handler reduce_handler = {"reduce", GL_TP_FIRST, true, check_reduce,
                                             apply_reduce};

/* ---- Squeeze, Unsqueeze ------------------------------------------------------------------------ */

static bool check_squeeze(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    int64_t *axes = NULL;
    size_t count;
    bool present;
    if (!gl_tp_read_axes(a->run, a->node, "axes", 1, 13, &axes, &count, &present))
        return refuse(why, len, "Squeeze '%s': axes computed at run time", a->node->name);
    if (!present || count == 0) {
        free(axes);
        return refuse(why, len, "Squeeze '%s' has no axes: which dims go depends on the "
                      "data, so does the output's layout", a->node->name);
    }
    bool ok = gl_tp_axes_normalize(axes, count, a->rank);
    if (ok)
        plan->n_axes = gl_tp_axes_through(axes, count, a->perm, a->rank, true, plan->axes);
    free(axes);
    if (!ok)
        return refuse(why, len, "Squeeze '%s': axes out of range for rank %d", a->node->name,
                      a->rank);
    gl_tp_perm_squeeze(a->perm, a->rank, plan->axes, plan->n_axes, plan->out_perm);
    plan->out_rank = a->rank - (int)plan->n_axes;
    return true;
}

static gl_status apply_squeeze(gl_tp_args *a, const gl_tp_plan *plan)
{
    gl_status st = GL_OK;
    if (a->run->opset < 13)
        gl_node_set_attr_ints(a->node, "axes", plan->axes, plan->n_axes);
    else
        st = replace_ints_input(a, 1, plan->axes, plan->n_axes, GL_DT_INT64);
    return st == GL_OK ? apply_simple(a, plan) : st;
}

static const gl_tp_handler squeeze_handler = {"squeeze", GL_TP_FIRST, true, check_squeeze,
                                              apply_squeeze};

/* The axes stay; the new 1-dims keep their places and the others move as perm says. */
static bool check_unsqueeze(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    int64_t *axes = NULL;
    size_t count;
    bool present;
    if (!gl_tp_read_axes(a->run, a->node, "axes", 1, 13, &axes, &count, &present) || !present)
        return refuse(why, len, "Unsqueeze '%s': axes absent or computed at run time",
                      a->node->name);
    int new_rank = a->rank + (int)count;
    bool ok = new_rank <= GL_MAX_RANK && gl_tp_axes_normalize(axes, count, new_rank);
    if (ok)
        gl_tp_perm_unsqueeze(a->perm, a->rank, axes, count, plan->out_perm);
    free(axes);
    if (!ok)
        return refuse(why, len, "Unsqueeze '%s': axes out of range for rank %d", a->node->name,
                      new_rank);
    plan->out_rank = new_rank;
    return true;
}

static const gl_tp_handler unsqueeze_handler = {"squeeze", GL_TP_FIRST, true, check_unsqueeze,
                                                apply_simple};

/* ---- Slice ----------------------------------------------------------------------------------- */

enum { SLICE_ATTR, SLICE_DEFAULT_AXES, SLICE_REMAP_AXES };

/* How many dims starts covers: its constant length, or its static shape. */
static bool starts_count(const gl_value *starts, size_t *n)
{
    int64_t *vals = NULL;
    if (gl_tp_const_ints(starts, &vals, n)) {
        free(vals);
        return true;
    }
    const gl_shape *s = &starts->type.shape;
    if (starts->type.kind == GL_TYPE_TENSOR && s->rank == 1 && s->dims[0].value >= 0) {
        *n = (size_t)s->dims[0].value;
        return true;
    }
    return false;
}

static bool check_slice(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    const gl_node *n = a->node;
    if (a->run->opset < 10) {
        size_t ns = 0;
        const int64_t *starts = gl_attr_ints(n, "starts", &ns);
        size_t na;
        const int64_t *ax = gl_attr_ints(n, "axes", &na);
        int64_t axes[GL_MAX_RANK];
        if (!starts || ns > (size_t)a->rank || (ax && na != ns))
            return refuse(why, len, "Slice '%s': starts/axes attributes do not fit rank %d",
                          n->name, a->rank);
        for (size_t k = 0; k < ns; k++)
            axes[k] = ax ? ax[k] : (int64_t)k;
        if (!gl_tp_axes_normalize(axes, ns, a->rank))
            return refuse(why, len, "Slice '%s': axes out of range", n->name);
        plan->n_axes = gl_tp_axes_through(axes, ns, a->perm, a->rank, false, plan->axes);
        plan->mode = SLICE_ATTR;
        return true;
    }
    if (n->n_inputs < 3 || !n->inputs[1])
        return refuse(why, len, "Slice '%s' lacks starts/ends", n->name);
    if (n->n_inputs > 3 && n->inputs[3]) {
        int64_t *axes = NULL;
        size_t count;
        if (gl_tp_const_ints(n->inputs[3], &axes, &count)) {
            bool ok = gl_tp_axes_normalize(axes, count, a->rank);
            free(axes);
            if (!ok)
                return refuse(why, len, "Slice '%s': axes out of range for rank %d", n->name,
                              a->rank);
        }
        plan->mode = SLICE_REMAP_AXES; /* a Gather when they are computed */
        return true;
    }
    size_t count;
    if (!starts_count(n->inputs[1], &count) || count > (size_t)a->rank)
        return refuse(why, len, "Slice '%s' has no axes and the length of starts is unknown: "
                      "the default axes cannot be written out", n->name);
    for (size_t k = 0; k < count; k++)
        plan->axes[k] = a->perm[k];
    plan->n_axes = count;
    plan->axis = n->inputs[1]->type.dtype == GL_DT_INT32 ? GL_DT_INT32 : GL_DT_INT64;
    plan->mode = SLICE_DEFAULT_AXES;
    return true;
}

static gl_status apply_slice(gl_tp_args *a, const gl_tp_plan *plan)
{
    gl_status st = GL_OK;
    if (plan->mode == SLICE_ATTR)
        gl_node_set_attr_ints(a->node, "axes", plan->axes, plan->n_axes);
    else if (plan->mode == SLICE_DEFAULT_AXES)
        st = replace_ints_input(a, 3, plan->axes, plan->n_axes, (gl_dtype)plan->axis);
    else
        st = gl_tp_remap_axes_input(a->run, a->node, 3, a->perm, a->rank);
    return st == GL_OK ? apply_simple(a, plan) : st;
}

static const gl_tp_handler slice_handler = {"slice", GL_TP_FIRST, true, check_slice,
                                            apply_slice};

/* ---- Transpose, Reshape ----------------------------------------------------------------------- */

/* A Transpose (or a Reshape acting as one, whose perm the plan holds) after the pushed
 * one: they merge, or cancel. */
static void plan_meeting(const gl_tp_args *a, gl_tp_plan *plan, const int64_t *node_perm)
{
    int64_t composed[GL_MAX_RANK];
    memcpy(plan->axes, node_perm, (size_t)a->rank * sizeof(int64_t));
    plan->n_axes = (size_t)a->rank;
    gl_tp_perm_compose(a->perm, node_perm, a->rank, composed);
    plan->rule = gl_tp_perm_is_identity(composed, a->rank) ? "cancel" : "merge-transposes";
    plan->transposes_outputs = false;
}

static bool check_transpose(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    int64_t node_perm[GL_MAX_RANK];
    int rank;
    if (!gl_tp_read_perm(a->node, node_perm, &rank) || rank != a->rank)
        return refuse(why, len, "Transpose '%s': its perm is not a permutation of the %d "
                      "dims of '%s'", a->node->name, a->rank, a->transpose->name);
    plan_meeting(a, plan, node_perm);
    return true;
}

static gl_status apply_meeting(gl_tp_args *a, const gl_tp_plan *plan)
{
    return gl_tp_merge_transposes(a->run, a->transpose, a->node, plan->axes, a->rank);
}

/* Dims of a value when every one is known. */
static bool static_dims(const gl_value *v, int64_t *dims, int *rank)
{
    *rank = gl_value_rank(v);
    if (*rank < 0)
        return false;
    for (int i = 0; i < *rank; i++)
        if ((dims[i] = v->type.shape.dims[i].value) < 0)
            return false;
    return true;
}

/* Reshape's requested shape against a static input: 0 copies (unless allowzero), one -1
 * is inferred. False when it does not fit. */
static bool finalize_reshape(const int64_t *in, int in_rank, const int64_t *req, size_t n,
                             bool allowzero, int64_t *out)
{
    int64_t total = 1, known = 1;
    int infer = -1;
    for (int i = 0; i < in_rank; i++)
        total *= in[i];
    for (size_t i = 0; i < n; i++) {
        out[i] = req[i];
        if (req[i] == -1) {
            if (infer >= 0)
                return false;
            infer = (int)i;
            continue;
        }
        if (req[i] == 0 && !allowzero) {
            if ((int)i >= in_rank)
                return false;
            out[i] = in[i];
        }
        if (out[i] < 0)
            return false;
        known *= out[i];
    }
    if (infer >= 0) {
        if (known == 0 || total % known)
            return false;
        out[infer] = total / known;
        return true;
    }
    return known == total;
}

/* The perm p with out[i] = in[p[i]] that keeps the non-1 dims in order, when one
 * exists. */
static bool reshape_as_perm(const int64_t *in, const int64_t *out, int rank, int64_t *perm)
{
    int ones_in[GL_MAX_RANK], big_in[GL_MAX_RANK], n1 = 0, nb = 0, k1 = 0, kb = 0;
    for (int i = 0; i < rank; i++) {
        if (in[i] == 1)
            ones_in[n1++] = i;
        else
            big_in[nb++] = i;
    }
    for (int i = 0; i < rank; i++) {
        if (out[i] == 1) {
            if (k1 == n1)
                return false;
            perm[i] = ones_in[k1++];
        } else {
            if (kb == nb || in[big_in[kb]] != out[i])
                return false;
            perm[i] = big_in[kb++];
        }
    }
    return k1 == n1 && kb == nb;
}

/* y's dims as contiguous groups, one per dim of t, each multiplying to it: t's dim i
 * splits into y[start[i] .. start[i] + count[i]). A dim of t of size 1 takes a 1 of y
 * standing at its place, else none; other 1s of y join the next group, trailing ones
 * the last. */
static bool split_groups(const int64_t *t, int rank, const int64_t *y, int ny, int *start,
                         int *count)
{
    int pos = 0;
    for (int i = 0; i < rank; i++) {
        start[i] = pos;
        int64_t prod = 1;
        if (t[i] == 0)
            return false;
        if (t[i] == 1 && pos < ny && y[pos] == 1)
            pos++; /* a 1 of y at this place stays with the 1 of t */
        while (t[i] != 1 && pos < ny && prod < t[i])
            prod *= y[pos++];
        if (prod != t[i])
            return false;
        count[i] = pos - start[i];
    }
    for (; pos < ny; pos++) {
        if (y[pos] != 1 || rank == 0)
            return false;
        count[rank - 1]++;
    }
    return true;
}

/* The refusal of a Reshape that merges dims, saying what stops the push: a merged group
 * whose dims the Transpose takes from non-adjacent (or reordered) dims of its input has no
 * counterpart before the Transpose; groups that are adjacent could be merged there, but
 * transpose-push only rewrites Transpose-like and splitting Reshapes. */
static bool refuse_merge(const gl_tp_args *a, const int64_t *t, int rt, const int64_t *y,
                         int ny, char *why, size_t len)
{
    const gl_node *n = a->node;
    int start[GL_MAX_RANK], count[GL_MAX_RANK];
    if (split_groups(y, ny, t, rt, start, count)) {
        for (int g = 0; g < ny; g++) {
            int prev = -1; /* the last non-1 dim of t in this group */
            for (int i = start[g]; i < start[g] + count[g]; i++) {
                if (t[i] == 1)
                    continue;
                if (prev >= 0 && a->perm[i] != a->perm[prev] + 1)
                    return refuse(why, len, "Reshape '%s' merges dims %d and %d (rank %d -> "
                                  "%d), which Transpose '%s' takes from dims %lld and %lld of "
                                  "its input: not adjacent in that order, so the merge has no "
                                  "counterpart before the Transpose", n->name, prev, i, rt,
                                  ny, a->transpose->name, (long long)a->perm[prev],
                                  (long long)a->perm[i]);
                prev = i;
            }
        }
    }
    return refuse(why, len, "Reshape '%s' merges dims (rank %d -> %d): transpose-push only "
                  "moves a Transpose through a Reshape that acts as a Transpose or splits "
                  "dims", n->name, rt, ny);
}

enum { RESHAPE_AS_TRANSPOSE, RESHAPE_SPLIT };

static bool check_reshape(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    const gl_node *n = a->node;
    int64_t t[GL_MAX_RANK], x[GL_MAX_RANK], y[GL_MAX_RANK];
    int rt, rx;
    int64_t *req = NULL;
    size_t nreq;
    if (!static_dims(a->transpose->inputs[0], x, &rx) || !static_dims(n->inputs[0], t, &rt) ||
        rt != a->rank)
        return refuse(why, len, "Reshape '%s': the shapes around Transpose '%s' are not all "
                      "known", n->name, a->transpose->name);
    if (n->n_inputs < 2 || !gl_tp_const_ints(n->inputs[1], &req, &nreq))
        return refuse(why, len, "Reshape '%s': the target shape is computed at run time",
                      n->name);
    bool allowzero = a->run->opset >= 14 && gl_node_attr_int(n, "allowzero", 0);
    bool fits = nreq <= GL_MAX_RANK && finalize_reshape(t, rt, req, nreq, allowzero, y);
    free(req);
    if (!fits)
        return refuse(why, len, "Reshape '%s': the target shape does not fit its input",
                      n->name);
    int ny = (int)nreq;
    int64_t node_perm[GL_MAX_RANK];
    if (ny == rt && reshape_as_perm(t, y, rt, node_perm)) {
        plan->mode = RESHAPE_AS_TRANSPOSE;
        plan_meeting(a, plan, node_perm);
        return true;
    }
    int start[GL_MAX_RANK], count[GL_MAX_RANK];
    /* Only a Reshape that adds dims is a split: at the same rank the Transpose that comes
     * out after it moves more non-1 dims than the one pushed in (ORT's cost grows). */
    if (ny < rt)
        return refuse_merge(a, t, rt, y, ny, why, len);
    if (ny == rt)
        return refuse(why, len, "Reshape '%s' keeps the rank (%d) but moves elements "
                      "between dims, so it is not a Transpose and not a split", n->name, rt);
    if (!split_groups(t, rt, y, ny, start, count))
        return refuse(why, len, "Reshape '%s' neither acts as a Transpose nor splits dims "
                      "into contiguous groups", n->name);
    /* x's dim d is t's dim perm_inv[d]: the reshaped x holds the groups in x's order; the
     * output takes them back in t's order. */
    int64_t offset[GL_MAX_RANK];
    size_t ns = 0;
    for (int d = 0; d < rx; d++) {
        int i = (int)a->perm_inv[d];
        offset[i] = (int64_t)ns;
        for (int k = 0; k < count[i]; k++)
            plan->shape[ns++] = y[start[i] + k];
    }
    plan->n_shape = ns;
    int out = 0;
    for (int i = 0; i < rt; i++)
        for (int k = 0; k < count[i]; k++)
            plan->out_perm[out++] = offset[i] + k;
    plan->out_rank = out;
    /* The Transpose after moves the same elements as the one it replaces; like ONNX
     * Runtime's Reshape handler, the outputs are not counted. */
    plan->transposes_outputs = false;
    plan->out_note = "the same elements move after the Reshape: not counted";
    plan->mode = RESHAPE_SPLIT;
    return true;
}

static gl_status apply_reshape(gl_tp_args *a, const gl_tp_plan *plan)
{
    if (plan->mode == RESHAPE_AS_TRANSPOSE)
        return apply_meeting(a, plan);
    gl_status st = replace_ints_input(a, 1, plan->shape, plan->n_shape, GL_DT_INT64);
    return st == GL_OK ? apply_simple(a, plan) : st;
}

static const gl_tp_handler transpose_handler = {"transpose", GL_TP_FIRST, false,
                                                check_transpose, apply_meeting};
static const gl_tp_handler reshape_handler = {"reshape", GL_TP_FIRST, false, check_reshape,
                                              apply_reshape};

/* ---- QuantizeLinear, DequantizeLinear ---------------------------------------------------------- */

static bool check_qdq(const gl_tp_args *a, gl_tp_plan *plan, char *why, size_t len)
{
    const gl_node *n = a->node;
    plan->mode = 0;
    if (a->run->opset < 13)
        return true; /* no axis before 13: per-tensor only */
    const gl_value *scale = n->n_inputs > 1 ? n->inputs[1] : NULL;
    if (scale && gl_value_rank(scale) == 0)
        return true;
    if (gl_node_attr_int(n, "block_size", 0) != 0)
        return refuse(why, len, "%s '%s' quantizes in blocks: its scale would need "
                      "transposing too", n->op_type, n->name);
    int64_t axis;
    if (!axis_in_range(gl_node_attr_int(n, "axis", 1), a->rank, &axis))
        return refuse(why, len, "%s '%s': axis out of range for rank %d", n->op_type, n->name,
                      a->rank);
    plan->axis = a->perm[axis];
    plan->mode = 1;
    return true;
}

static gl_status apply_qdq(gl_tp_args *a, const gl_tp_plan *plan)
{
    gl_status st = apply_simple(a, plan);
    if (st == GL_OK && plan->mode == 1)
        gl_node_set_attr_int(a->node, "axis", plan->axis);
    return st;
}

static const gl_tp_handler qdq_handler = {"quantize", GL_TP_FIRST, true, check_qdq,
                                          apply_qdq};

/* ---- the table --------------------------------------------------------------------------------- */

typedef struct handler_row {
    const char *op;
    int min_opset, max_opset; /* max 0: no upper bound */
    const gl_tp_handler *handler;
} handler_row;

static const handler_row rows[] = {
    /* Ops the registry does not flag elementwise, yet one element out per element in. */
    {"Identity", 1, 0, &all_inputs_handler},
    {"Gelu", 20, 0, &elementwise_handler},
    {"CastLike", 15, 0, &elementwise_handler}, /* `like` gives only the type */

    {"Concat", 4, 0, &concat_handler},
    {"Split", 2, 0, &axis_handler},
    {"Softmax", 1, 12, &softmax_flatten_handler},
    {"Softmax", 13, 0, &axis_handler},
    {"LogSoftmax", 1, 12, &softmax_flatten_handler},
    {"LogSoftmax", 13, 0, &axis_handler},
    {"Hardmax", 1, 12, &softmax_flatten_handler},
    {"Hardmax", 13, 0, &axis_handler},
    {"ArgMax", 1, 0, &argminmax_handler},
    {"ArgMin", 1, 0, &argminmax_handler},
    {"Gather", 1, 0, &gather_handler},

    {"ReduceL1", 1, 0, &reduce_handler},
    {"ReduceL2", 1, 0, &reduce_handler},
    {"ReduceLogSum", 1, 0, &reduce_handler},
    {"ReduceLogSumExp", 1, 0, &reduce_handler},
    {"ReduceMax", 1, 0, &reduce_handler},
    {"ReduceMean", 1, 0, &reduce_handler},
    {"ReduceMin", 1, 0, &reduce_handler},
    {"ReduceProd", 1, 0, &reduce_handler},
    {"ReduceSum", 1, 0, &reduce_handler},
    {"ReduceSumSquare", 1, 0, &reduce_handler},

    {"Squeeze", 1, 0, &squeeze_handler},
    {"Unsqueeze", 1, 0, &unsqueeze_handler},
    {"Slice", 1, 0, &slice_handler},
    {"Pad", 2, 0, &pad_handler},
    {"Tile", 6, 0, &tile_handler},
    {"Shape", 1, 0, &shape_handler},

    {"Transpose", 1, 0, &transpose_handler},
    {"Reshape", 5, 0, &reshape_handler},

    {"QuantizeLinear", 10, 0, &qdq_handler},
    {"DequantizeLinear", 10, 0, &qdq_handler},
    /* Resize: not by default (see gl_tp_resize_handler). */
};

const gl_tp_handler *gl_tp_builtin_handler(const gl_node *n, int64_t opset)
{
    if (strcmp(n->domain, "graphlab") == 0) {
        /* graphlab's activations (patterns makes them): elementwise as ONNX's */
        const gl_op_def *def = gl_op_lookup("graphlab", n->op_type, 1);
        return def && (def->flags & GL_OP_ELEMENTWISE) ? &elementwise_handler : NULL;
    }
    if (*n->domain)
        return NULL;
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        const handler_row *r = &rows[i];
        if (strcmp(r->op, n->op_type) == 0 && opset >= r->min_opset &&
            (r->max_opset == 0 || opset <= r->max_opset))
            return r->handler;
    }
    /* The registry's families: unary elementwise, numpy-broadcasting n-ary ops (incl.
     * Where, PRelu, Mod, BitShift and the comparisons). */
    const gl_op_def *def = gl_op_lookup("", n->op_type, opset);
    if (def && (def->flags & GL_OP_BROADCAST))
        return &broadcast_handler;
    if (def && (def->flags & GL_OP_ELEMENTWISE))
        return &elementwise_handler;
    return NULL;
}

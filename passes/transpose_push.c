/* transpose_push.c — push Transposes down through the ops that allow it, so that they
 * meet and cancel (ONNX Runtime's transpose optimizer, re-thought for this IR).
 *
 * One sweep over the nodes in topological order. A node fed by a Transpose asks, in
 * turn: is there a handler for its op (none for layout-sensitive ops)? may a Transpose
 * pass this input? does pushing pay? — the cost model counts the transposed dims each
 * input would need (a constant is transposed in place: free; a Transpose above that
 * cancels: a gain; one that composes: free; anything else: a new Transpose) plus the
 * outputs' unless an output leads to a Transpose anyway (a reverse-topological sweep
 * finds those first). A push happens only when the input cost and the total both
 * strictly fall, so repeated runs cannot flip a Transpose between two inputs; a
 * Transpose meeting a Transpose always merges. Each consideration is a decision record.
 *
 * The handler (transpose_handlers.c) checks everything first, then rewrites: inputs get
 * the inverse permutation (gl_tp_transpose_input: cancel, compose, reuse, transpose a
 * constant in place, or add a Transpose), outputs a Transpose each, attributes their
 * remapped axes. Pushed Transposes are new nodes appended to the graph; the sweep sees
 * them as producers of later nodes' inputs, and the graph is sorted again at the end.
 *
 * Afterwards, rules ONNX Runtime does not have: a Transpose that only moves size-1 dims
 * is a Reshape (or nothing), and one read only for its type or a static shape is dead.
 * In quantized graphs, DequantizeLinear -> op -> QuantizeLinear units are kept whole.
 * Before the sweep, the net-transposes guard (transpose_guard.c) sweeps clones to find
 * the pushes whose region would end with more Transposes than it found, and the sweep
 * refuses those: the pass never leaves more Transposes than it found.
 */
#include "passes/transpose.h"

#include "ops/opkit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== permutations and axes ============================================================ */

bool gl_tp_perm_valid(const int64_t *perm, int rank)
{
    bool seen[GL_MAX_RANK] = {false};
    if (rank < 0 || rank > GL_MAX_RANK)
        return false;
    for (int i = 0; i < rank; i++) {
        if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]])
            return false;
        seen[perm[i]] = true;
    }
    return true;
}

bool gl_tp_perm_is_identity(const int64_t *perm, int rank)
{
    for (int i = 0; i < rank; i++)
        if (perm[i] != i)
            return false;
    return true;
}

bool gl_tp_perm_equal(const int64_t *a, const int64_t *b, int rank)
{
    return rank == 0 || memcmp(a, b, (size_t)rank * sizeof(int64_t)) == 0;
}

void gl_tp_perm_invert(const int64_t *perm, int rank, int64_t *out)
{
    for (int i = 0; i < rank; i++)
        out[perm[i]] = i;
}

void gl_tp_perm_compose(const int64_t *first, const int64_t *second, int rank, int64_t *out)
{
    for (int i = 0; i < rank; i++)
        out[i] = first[second[i]];
}

bool gl_tp_axes_normalize(int64_t *axes, size_t n, int rank)
{
    bool seen[GL_MAX_RANK] = {false};
    if (rank < 0 || rank > GL_MAX_RANK)
        return false;
    for (size_t k = 0; k < n; k++) {
        if (axes[k] < 0)
            axes[k] += rank;
        if (axes[k] < 0 || axes[k] >= rank || seen[axes[k]])
            return false;
        seen[axes[k]] = true;
    }
    return true;
}

size_t gl_tp_axes_through(const int64_t *axes, size_t n, const int64_t *perm, int rank,
                          bool sorted, int64_t *out)
{
    if (!sorted) {
        for (size_t k = 0; k < n; k++)
            out[k] = perm[axes[k]];
        return n;
    }
    bool take[GL_MAX_RANK] = {false};
    for (size_t k = 0; k < n; k++)
        take[perm[axes[k]]] = true;
    size_t count = 0;
    for (int d = 0; d < rank; d++)
        if (take[d])
            out[count++] = d;
    return count;
}

void gl_tp_perm_squeeze(const int64_t *perm, int rank, const int64_t *axes, size_t n,
                        int64_t *out)
{
    bool removed[GL_MAX_RANK] = {false};
    int64_t renumber[GL_MAX_RANK];
    for (size_t k = 0; k < n; k++)
        removed[axes[k]] = true;
    for (int d = 0, next = 0; d < rank; d++)
        renumber[d] = removed[d] ? -1 : next++;
    for (int i = 0, k = 0; i < rank; i++)
        if (!removed[perm[i]])
            out[k++] = renumber[perm[i]];
}

void gl_tp_perm_unsqueeze(const int64_t *perm, int rank, const int64_t *axes, size_t n,
                          int64_t *out)
{
    int new_rank = rank + (int)n;
    bool added[GL_MAX_RANK] = {false};
    int64_t place[GL_MAX_RANK]; /* old dim -> its position in the unsqueezed tensor */
    for (size_t k = 0; k < n; k++)
        added[axes[k]] = true;
    for (int i = 0, d = 0; i < new_rank; i++)
        if (!added[i])
            place[d++] = i;
    for (int i = 0, j = 0; i < new_rank; i++)
        out[i] = added[i] ? i : place[perm[j++]];
}

int64_t gl_tp_axis_unsqueezed(const int64_t *axes, size_t n, int64_t axis)
{
    /* Walk the new positions in order: each inserted dim at or before the axis pushes
     * it one further. Sorting first makes that a single pass. */
    int64_t sorted[GL_MAX_RANK];
    memcpy(sorted, axes, n * sizeof(int64_t));
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            int64_t t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    for (size_t k = 0; k < n; k++)
        if (sorted[k] <= axis)
            axis++;
    return axis;
}

void gl_tp_perm_format(const int64_t *perm, int rank, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s%lld", i ? "," : "", (long long)perm[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

/* ==== values, constants, nodes ========================================================== */

static bool is_default_domain(const gl_node *n)
{
    return !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

/* Q/DQ live in ai.onnx and in ONNX Runtime's com.microsoft. */
static bool is_qdq_op(const gl_node *n, const char *op)
{
    return n && strcmp(n->op_type, op) == 0 &&
           (is_default_domain(n) || strcmp(n->domain, "com.microsoft") == 0);
}

static bool is_transpose(const gl_node *n) { return n && gl_node_is(n, "Transpose"); }


int gl_tp_rank(const gl_value *v)
{
    return v && v->type.kind == GL_TYPE_TENSOR ? v->type.shape.rank : GL_RANK_UNKNOWN;
}

/* A constant of this graph whose bytes the pass may change: not a graph input (even a
 * frozen one keeps its declared shape), not a capture. */
static bool local_constant(const gl_graph *g, const gl_value *v)
{
    return v && v->graph == g && gl_value_is_constant(v) && !v->is_input && !v->outer;
}

/* The tensor of a constant, or of the outer constant a capture reads. */
static const gl_tensor *constant_tensor(const gl_value *v)
{
    for (; v; v = v->outer)
        if (gl_value_is_constant(v))
            return v->init;
    return NULL;
}

bool gl_tp_const_ints(const gl_value *v, int64_t **vals, size_t *n)
{
    const gl_tensor *t = constant_tensor(v);
    *vals = NULL;
    *n = 0;
    if (!t || (t->dtype != GL_DT_INT64 && t->dtype != GL_DT_INT32) || t->rank > 1 ||
        t->count > GL_MAX_RANK * 4)
        return false;
    *vals = gl_xmalloc((size_t)(t->count ? t->count : 1) * sizeof(int64_t));
    const void *data = gl_tensor_data(t);
    for (int64_t i = 0; i < t->count; i++)
        (*vals)[i] = t->dtype == GL_DT_INT64 ? ((const int64_t *)data)[i]
                                             : ((const int32_t *)data)[i];
    *n = (size_t)t->count;
    return true;
}

bool gl_tp_read_axes(const gl_tp_run *run, const gl_node *n, const char *attr, size_t slot,
                     int64_t input_since, int64_t **vals, size_t *count, bool *present)
{
    *vals = NULL;
    *count = 0;
    if (run->opset < input_since) {
        const gl_attr *a = gl_node_attr(n, attr);
        *present = a != NULL;
        /* axes of another type are no axes we can read: never "all axes" */
        if (a && (a != gl_node_attr_typed(n, attr, GL_ATTR_INTS) || a->n > GL_MAX_RANK))
            return false;
        if (*present) {
            *vals = gl_xmalloc((a->n ? a->n : 1) * sizeof(int64_t));
            if (a->n)
                memcpy(*vals, a->ints, a->n * sizeof(int64_t));
            *count = a->n;
        }
        return true;
    }
    *present = slot < n->n_inputs && n->inputs[slot];
    return !*present || gl_tp_const_ints(n->inputs[slot], vals, count);
}

void gl_tp_shape_permute(gl_shape *s, const int64_t *perm, int rank)
{
    if (s->rank != rank)
        return; /* unknown rank stays unknown */
    gl_dim old[GL_MAX_RANK];
    memcpy(old, s->dims, (size_t)rank * sizeof(gl_dim));
    for (int i = 0; i < rank; i++)
        s->dims[i] = old[perm[i]]; /* symbols move along, still owned once */
}

/* Insert size-1 dims at the (normalized, new-rank) axes. */
static void shape_unsqueeze(gl_shape *s, const int64_t *axes, size_t n)
{
    if (s->rank < 0)
        return;
    int new_rank = s->rank + (int)n;
    bool added[GL_MAX_RANK] = {false};
    for (size_t k = 0; k < n; k++)
        added[axes[k]] = true;
    gl_dim *dims = gl_xcalloc((size_t)new_rank, sizeof(gl_dim));
    for (int i = 0, j = 0; i < new_rank; i++)
        dims[i] = added[i] ? (gl_dim){1, NULL} : s->dims[j++];
    free(s->dims);
    s->dims = dims;
    s->rank = new_rank;
}

static void type_permuted(gl_type *dst, const gl_type *src, const int64_t *perm, int rank)
{
    gl_type_copy(dst, src);
    gl_tp_shape_permute(&dst->shape, perm, rank);
}

gl_node *gl_tp_add_node(gl_tp_run *run, const char *op, gl_value *const *inputs,
                        size_t n_inputs, size_t n_outputs)
{
    char hint[200];
    snprintf(hint, sizeof(hint), "%.150s/%s", run->for_node ? run->for_node->name : "tp", op);
    char *name = gl_unique_node_name(run->g, hint);
    gl_node *n = gl_add_node(run->g, op, "", name, inputs, n_inputs, n_outputs);
    free(name);
    if (n && run->for_node)
        gl_node_inherit_provenance(n, &run->for_node, 1, run->decision);
    else if (n)
        gl_node_set_provenance(n, NULL, 0, run->decision);
    return n;
}

gl_value *gl_tp_add_ints(gl_tp_run *run, const char *hint, const int64_t *vals, size_t n,
                         gl_dtype dt)
{
    int64_t dims[1] = {(int64_t)n};
    if (dt != GL_DT_INT32)
        dt = GL_DT_INT64;
    gl_tensor *t = gl_tensor_new(dt, 1, dims);
    if (!t)
        return NULL;
    void *data = n ? gl_tensor_make_writable(t) : NULL;
    for (size_t i = 0; i < n; i++) {
        if (dt == GL_DT_INT64)
            ((int64_t *)data)[i] = vals[i];
        else
            ((int32_t *)data)[i] = (int32_t)vals[i];
    }
    return gl_add_initializer(run->g, hint, t);
}

/* A Transpose node (input may be NULL: set later) with its perm. */
static gl_node *add_transpose(gl_tp_run *run, gl_value *in, const int64_t *perm, int rank)
{
    gl_node *t = gl_tp_add_node(run, "Transpose", &in, 1, 1);
    if (t)
        gl_node_set_attr_ints(t, "perm", perm, (size_t)rank);
    return t;
}

/* Squeeze/Unsqueeze in the form the opset expects: axes as an attribute before 13. */
static gl_node *add_squeeze_like(gl_tp_run *run, const char *op, gl_value *in,
                                 const int64_t *axes, size_t n)
{
    if (run->opset < 13) {
        gl_node *s = gl_tp_add_node(run, op, &in, 1, 1);
        if (s)
            gl_node_set_attr_ints(s, "axes", axes, n);
        return s;
    }
    gl_value *c = gl_tp_add_ints(run, "axes", axes, n, GL_DT_INT64);
    gl_value *ins[2] = {in, c};
    return c ? gl_tp_add_node(run, op, ins, 2, 1) : NULL;
}

gl_status gl_tp_remove_if_dead(gl_tp_run *run, gl_node *n)
{
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && (n->outputs[i]->n_uses || n->outputs[i]->n_output_refs))
            return GL_OK;
    return gl_remove_node(run->g, n);
}

/* Drop a constant nothing reads any more (the pass replaced it). */
static void remove_constant_if_unused(gl_tp_run *run, gl_value *v)
{
    if (v && v->graph == run->g && v->init && !v->producer && !v->n_uses && !v->is_input &&
        !v->n_output_refs && !v->outer)
        gl_remove_value(run->g, v);
}

static gl_status internal(const gl_tp_run *run, const char *what)
{
    char where[300];
    if (run->for_node)
        gl_node_where(run->m, run->for_node, where, sizeof(where));
    else
        snprintf(where, sizeof(where), "graph '%s'", run->g->name ? run->g->name : "");
    if (*gl_error_message()) {
        gl_error_prefix("transpose-push: %s: %s", where, what);
        return GL_ERR_INTERNAL;
    }
    return gl_fail(GL_ERR_INTERNAL, "transpose-push: %s: %s", where, what);
}

/* Element size in the buffer: strings are gl_bytes records. */
static size_t elem_size(gl_dtype dt)
{
    return dt == GL_DT_STRING ? sizeof(gl_bytes) : gl_dtype_size(dt);
}

/* Transpose the tensor's bytes (copy-on-write: shared bytes are copied first). */
static gl_status tensor_transpose(gl_tensor *t, const int64_t *perm, int rank)
{
    if (t->rank != rank)
        return gl_fail(GL_ERR_INTERNAL, "tensor of rank %d transposed with rank %d", t->rank,
                       rank);
    int64_t old_strides[GL_MAX_RANK], new_dims[GL_MAX_RANK], idx[GL_MAX_RANK] = {0};
    for (int i = 0; i < rank; i++)
        new_dims[i] = t->dims[perm[i]];
    size_t elem = elem_size(t->dtype);
    if (t->count > 1 && t->buf) {
        if (!elem)
            return gl_fail(GL_ERR_UNSUPPORTED, "tensor of dtype %s", gl_dtype_name(t->dtype));
        size_t bytes = (size_t)t->count * elem;
        uint8_t *dst = gl_tensor_make_writable(t);
        uint8_t *src = malloc(bytes);
        if (!src)
            return gl_fail(GL_ERR_NOMEM, "no memory to transpose a %zu-byte constant", bytes);
        memcpy(src, dst, bytes); /* records of a string tensor move, still owned once */
        gl_strides(t->dims, rank, old_strides);
        for (int64_t o = 0; o < t->count; o++) {
            int64_t from = 0;
            for (int i = 0; i < rank; i++)
                from += idx[i] * old_strides[perm[i]];
            memcpy(dst + (size_t)o * elem, src + (size_t)from * elem, elem);
            for (int i = rank - 1; i >= 0 && ++idx[i] == new_dims[i]; i--)
                idx[i] = 0;
        }
        free(src);
    }
    memcpy(t->dims, new_dims, (size_t)rank * sizeof(int64_t));
    return GL_OK;
}

/* Make n's output `slot` value be `x` instead (the node goes afterwards): readers switch
 * over; a graph output keeps its name by moving to x's producer, or failing that, to an
 * Identity of x. n is removed, and so is `also` (the node n read) when that is dead. */
static gl_status bypass(gl_tp_run *run, gl_node *n, gl_value *x, gl_node *also)
{
    gl_graph *g = run->g;
    gl_value *y = n->outputs[0];
    gl_status st;
    if (gl_value_uses_comprehensive(y)) {
        st = gl_replace_all_uses(g, y, x);
    } else if (x->producer && gl_value_uses_comprehensive(x)) {
        gl_node *p = x->producer;
        size_t ps = (size_t)x->producer_slot;
        if ((st = gl_set_input(g, n, 0, NULL)) == GL_OK &&
            (st = gl_replace_all_uses(g, x, y)) == GL_OK)
            st = gl_move_output(g, n, 0, p, ps);
    } else {
        gl_node *id = gl_tp_add_node(run, "Identity", &x, 1, 1);
        st = id ? gl_move_output(g, n, 0, id, 0) : internal(run, "adding an Identity");
    }
    if (st == GL_OK)
        st = gl_remove_node(g, n);
    if (st == GL_OK && also)
        st = gl_tp_remove_if_dead(run, also);
    return st;
}

/* ==== quantized graphs =================================================================== */

typedef struct quant_info {
    bool per_axis;
    int64_t axis; /* normalized; per-axis only */
} quant_info;

/* Per-tensor (scalar or one-element scale) or per-axis; false for what the pass does
 * not rewrite: blocked quantization, unknown scale shape, bad axis. */
static bool quant_info_of(const gl_node *q, quant_info *qi)
{
    if (q->n_inputs < 2 || !q->inputs[1] || !q->inputs[0])
        return false;
    const gl_shape *s = &q->inputs[1]->type.shape;
    if (q->inputs[1]->type.kind != GL_TYPE_TENSOR || s->rank < 0)
        return false;
    if (s->rank == 0 || (s->rank == 1 && s->dims[0].value == 1)) {
        *qi = (quant_info){false, 1};
        return true;
    }
    int rank = gl_tp_rank(q->inputs[0]);
    int64_t axis = gl_node_attr_int(q, "axis", 1);
    if (rank < 0 || gl_node_attr_int(q, "block_size", 0) != 0 || axis < -rank || axis >= rank)
        return false;
    *qi = (quant_info){true, axis < 0 ? axis + rank : axis};
    return true;
}

/* v has one reader, a node, and nothing else sees it. */
static bool single_reader(const gl_value *v)
{
    return v->n_uses == 1 && gl_value_uses_comprehensive(v);
}

/* A DequantizeLinear producing v from a local constant, v read by one node only: the
 * pass may change that constant as if the DQ were not there. */
static gl_node *dq_of_constant(const gl_graph *g, const gl_value *v)
{
    gl_node *dq = v ? v->producer : NULL;
    quant_info qi;
    if (!is_qdq_op(dq, "DequantizeLinear") || !local_constant(g, dq->inputs[0]) ||
        !quant_info_of(dq, &qi) || !gl_value_uses_comprehensive(dq->inputs[0]) ||
        !single_reader(v))
        return NULL;
    return dq;
}

/* The DQ's input 0 was transposed by `by`: its axis (qi: as it was before, NULL when
 * per-tensor) and output shape follow. */
static void dq_follow_transpose(gl_node *dq, const quant_info *qi, const int64_t *by, int rank)
{
    int64_t inv[GL_MAX_RANK];
    gl_tp_perm_invert(by, rank, inv);
    if (qi && qi->per_axis)
        gl_node_set_attr_int(dq, "axis", inv[qi->axis]);
    gl_tp_shape_permute(&dq->outputs[0]->type.shape, by, rank);
}

/* Set a Q or DQ node's attributes as the opset allows (axis exists from 13). */
static void set_quant_axis(gl_tp_run *run, gl_node *n, const quant_info *qi)
{
    if (qi->per_axis && run->opset >= 13)
        gl_node_set_attr_int(n, "axis", qi->axis);
}

/* DQ -> next (a Transpose or Unsqueeze the pass added) becomes DQ -> next -> Q -> DQ with
 * the DQ's scale and zero point: the unit around the op the DQ feeds stays whole. */
static gl_status make_qdq_unit(gl_tp_run *run, gl_node *dq)
{
    gl_value *out = dq->outputs[0];
    quant_info qi;
    if (!out || !single_reader(out) || !quant_info_of(dq, &qi))
        return GL_OK;
    gl_node *next = out->uses[0].node;
    if (qi.per_axis && is_transpose(next)) {
        int64_t perm[GL_MAX_RANK], inv[GL_MAX_RANK];
        int rank;
        if (!gl_tp_read_perm(next, perm, &rank) || rank != gl_tp_rank(out))
            return GL_OK;
        gl_tp_perm_invert(perm, rank, inv);
        qi.axis = inv[qi.axis];
    } else if (qi.per_axis && gl_node_is(next, "Unsqueeze")) {
        int64_t *axes = NULL;
        size_t n;
        bool present;
        int rank = gl_tp_rank(out);
        if (rank < 0 || !gl_tp_read_axes(run, next, "axes", 1, 13, &axes, &n, &present) ||
            !present || !gl_tp_axes_normalize(axes, n, rank + (int)n)) {
            free(axes);
            return GL_OK;
        }
        qi.axis = gl_tp_axis_unsqueezed(axes, n, qi.axis);
        free(axes);
    }
    gl_value *ins[3] = {NULL, dq->inputs[1], dq->n_inputs > 2 ? dq->inputs[2] : NULL};
    size_t n_ins = dq->n_inputs > 2 && dq->inputs[2] ? 3 : 2;
    gl_node *q = gl_tp_add_node(run, "QuantizeLinear", ins, n_ins, 1);
    if (!q)
        return internal(run, "adding a QuantizeLinear");
    gl_value *dq_ins[3] = {q->outputs[0], ins[1], ins[2]};
    gl_node *dq2 = gl_tp_add_node(run, "DequantizeLinear", dq_ins, n_ins, 1);
    if (!dq2)
        return internal(run, "adding a DequantizeLinear");
    free(q->domain);
    q->domain = gl_xstrdup(dq->domain ? dq->domain : "");
    free(dq2->domain);
    dq2->domain = gl_xstrdup(dq->domain ? dq->domain : "");
    set_quant_axis(run, q, &qi);
    set_quant_axis(run, dq2, &qi);
    gl_type_copy(&q->outputs[0]->type, &next->outputs[0]->type);
    q->outputs[0]->type.dtype = dq->inputs[0]->type.dtype;
    gl_status st = gl_move_output(run->g, next, 0, dq2, 0);
    if (st == GL_OK)
        st = gl_set_input(run->g, q, 0, next->outputs[0]);
    return st;
}

/* ==== rewriting inputs and outputs ======================================================== */

/* Case 1 of transposing or unsqueezing an input: the value is a constant (perhaps behind
 * a DQ read by this node only, returned in *dq) the pass may change in place. */
static gl_value *editable_constant(gl_tp_run *run, gl_node *n, size_t slot, gl_node **dq)
{
    gl_value *v = n->inputs[slot];
    *dq = NULL;
    if (local_constant(run->g, v))
        return gl_value_uses_comprehensive(v) ? v : NULL;
    *dq = dq_of_constant(run->g, v);
    return *dq ? (*dq)->inputs[0] : NULL;
}

static gl_status transpose_constant(gl_tp_run *run, gl_node *n, size_t slot, gl_value *c,
                                    gl_node *dq, const int64_t *by, int rank)
{
    gl_graph *g = run->g;
    gl_node *holder = dq ? dq : n;
    size_t hslot = dq ? 0 : slot;
    int64_t inv[GL_MAX_RANK];
    gl_tp_perm_invert(by, rank, inv);
    quant_info qi;
    bool per_axis = dq && quant_info_of(dq, &qi) && qi.per_axis; /* read before detaching */
    bool moves = c->init->count > 1;
    for (int i = 0; i < rank && !moves; i++)
        moves = c->init->dims[by[i]] != c->init->dims[i]; /* an empty tensor's dims */
    gl_status st = gl_set_input(g, holder, hslot, NULL);
    if (st == GL_OK && moves) {
        if (c->n_uses) {
            /* The other readers keep seeing the old layout. */
            gl_node *undo = add_transpose(run, NULL, inv, rank);
            if (!undo)
                return internal(run, "adding a Transpose");
            gl_type_copy(&undo->outputs[0]->type, &c->type);
            if ((st = gl_replace_all_uses(g, c, undo->outputs[0])) == GL_OK)
                st = gl_set_input(g, undo, 0, c);
        }
        if (st == GL_OK && (st = tensor_transpose(c->init, by, rank)) == GL_OK)
            gl_tp_shape_permute(&c->type.shape, by, rank);
    }
    if (st == GL_OK && dq)
        dq_follow_transpose(dq, per_axis ? &qi : NULL, by, rank);
    return st == GL_OK ? gl_set_input(g, holder, hslot, c) : st;
}

gl_status gl_tp_transpose_input(gl_tp_run *run, gl_node *n, size_t slot, const int64_t *by,
                                int rank)
{
    gl_graph *g = run->g;
    gl_value *v = n->inputs[slot];
    gl_node *dq;
    gl_value *c = editable_constant(run, n, slot, &dq);
    if (c && c->init && c->init->rank == rank)
        return transpose_constant(run, n, slot, c, dq, by, rank);

    /* A Transpose above (perhaps behind a DQ only this node reads): cancel or compose. */
    gl_node *p = v->producer, *dq2 = NULL;
    if (is_qdq_op(p, "DequantizeLinear") && single_reader(v)) {
        quant_info qi;
        dq2 = quant_info_of(p, &qi) ? p : NULL;
        p = dq2 && dq2->inputs[0] ? dq2->inputs[0]->producer : NULL;
    }
    int64_t perm2[GL_MAX_RANK], composed[GL_MAX_RANK];
    int rank2;
    if (is_transpose(p) && gl_tp_read_perm(p, perm2, &rank2) && rank2 == rank) {
        gl_tp_perm_compose(perm2, by, rank, composed);
        gl_value *pre = p->inputs[0];
        gl_status st;
        if (gl_tp_perm_is_identity(composed, rank)) {
            if (dq2) {
                quant_info qi;
                bool per_axis = quant_info_of(dq2, &qi) && qi.per_axis;
                st = gl_set_input(g, dq2, 0, pre);
                dq_follow_transpose(dq2, per_axis ? &qi : NULL, by, rank);
            } else {
                st = gl_set_input(g, n, slot, pre);
            }
            return st == GL_OK ? gl_tp_remove_if_dead(run, p) : st;
        }
        if (!dq2) {
            gl_node *t = add_transpose(run, pre, composed, rank);
            if (!t)
                return internal(run, "adding a Transpose");
            type_permuted(&t->outputs[0]->type, &v->type, by, rank);
            st = gl_set_input(g, n, slot, t->outputs[0]);
            return st == GL_OK ? gl_tp_remove_if_dead(run, p) : st;
        }
    }

    /* An equal Transpose of v exists already. */
    for (size_t u = 0; u < v->n_uses; u++) {
        gl_node *other = v->uses[u].node;
        int64_t operm[GL_MAX_RANK];
        int orank;
        if (other != n && v->uses[u].slot == 0 && is_transpose(other) &&
            gl_tp_read_perm(other, operm, &orank) && orank == rank &&
            gl_tp_perm_equal(operm, by, rank) && other->outputs[0])
            return gl_set_input(g, n, slot, other->outputs[0]);
    }

    gl_node *t = add_transpose(run, v, by, rank);
    if (!t)
        return internal(run, "adding a Transpose");
    type_permuted(&t->outputs[0]->type, &v->type, by, rank);
    gl_status st = gl_set_input(g, n, slot, t->outputs[0]);
    if (st == GL_OK && is_qdq_op(v->producer, "DequantizeLinear"))
        st = make_qdq_unit(run, v->producer);
    return st;
}

gl_status gl_tp_transpose_inputs(gl_tp_args *a)
{
    gl_status st = GL_OK;
    for (size_t k = 0; k < a->n_inputs && st == GL_OK; k++)
        if (a->node->inputs[a->inputs[k]])
            st = gl_tp_transpose_input(a->run, a->node, a->inputs[k], a->perm_inv, a->rank);
    return st;
}

gl_status gl_tp_transpose_outputs(gl_tp_run *run, gl_node *n, const int64_t *perm, int rank)
{
    if (gl_tp_perm_is_identity(perm, rank))
        return GL_OK;
    int64_t inv[GL_MAX_RANK];
    gl_tp_perm_invert(perm, rank, inv);
    for (size_t j = 0; j < n->n_outputs; j++) {
        if (!n->outputs[j])
            continue;
        gl_node *t = add_transpose(run, NULL, perm, rank);
        if (!t)
            return internal(run, "adding a Transpose");
        /* The value (readers, graph-output name) moves to the Transpose; n gets a fresh
         * value in the un-transposed layout. */
        gl_status st = gl_move_output(run->g, n, j, t, 0);
        if (st == GL_OK)
            st = gl_set_input(run->g, t, 0, n->outputs[j]);
        if (st != GL_OK)
            return st;
        gl_tp_shape_permute(&n->outputs[j]->type.shape, inv, rank);
    }
    return GL_OK;
}

/* Push the Transpose feeding Unsqueeze u through it at once (ONNX Runtime does the same:
 * the Unsqueeze is new, so the sweep will not visit it). */
static gl_status push_through_new_unsqueeze(gl_tp_run *run, gl_node *u, gl_node *t,
                                            const int64_t *axes, size_t n_axes)
{
    int64_t perm[GL_MAX_RANK], inv[GL_MAX_RANK], out_perm[GL_MAX_RANK];
    int rank;
    if (!gl_tp_read_perm(t, perm, &rank))
        return GL_OK;
    gl_tp_perm_invert(perm, rank, inv);
    gl_tp_perm_unsqueeze(perm, rank, axes, n_axes, out_perm);
    gl_status st = gl_tp_transpose_input(run, u, 0, inv, rank);
    return st == GL_OK ? gl_tp_transpose_outputs(run, u, out_perm, rank + (int)n_axes) : st;
}

static bool squeeze_axes_equal(gl_tp_run *run, const gl_node *sq, const int64_t *axes,
                               size_t n_axes)
{
    int64_t *sq_axes = NULL;
    size_t n;
    bool present;
    int rank = gl_tp_rank(sq->inputs[0]);
    bool same = false;
    if (rank >= 0 && gl_tp_read_axes(run, sq, "axes", 1, 13, &sq_axes, &n, &present) &&
        present && n == n_axes && gl_tp_axes_normalize(sq_axes, n, rank))
        same = gl_tp_perm_equal(sq_axes, axes, (int)n);
    free(sq_axes);
    return same;
}

/* Case 1 of unsqueezing: the constant takes the new dims itself (other readers get a
 * Squeeze back, which a later Unsqueeze of theirs cancels). */
static gl_status unsqueeze_constant(gl_tp_run *run, gl_node *n, size_t slot, gl_value *c,
                                    gl_node *dq, const int64_t *axes, size_t n_axes)
{
    gl_graph *g = run->g;
    gl_node *holder = dq ? dq : n;
    size_t hslot = dq ? 0 : slot;
    quant_info qi;
    bool per_axis = dq && quant_info_of(dq, &qi) && qi.per_axis; /* before detaching */
    gl_status st = gl_set_input(g, holder, hslot, NULL);
    if (st != GL_OK)
        return st;
    if (c->n_uses) {
        gl_node *sq = add_squeeze_like(run, "Squeeze", NULL, axes, n_axes);
        if (!sq)
            return internal(run, "adding a Squeeze");
        gl_type_copy(&sq->outputs[0]->type, &c->type);
        if ((st = gl_replace_all_uses(g, c, sq->outputs[0])) != GL_OK ||
            (st = gl_set_input(g, sq, 0, c)) != GL_OK)
            return st;
    }
    /* Only the header changes (it is this value's own; the bytes stay shared). */
    shape_unsqueeze(&c->type.shape, axes, n_axes);
    for (int i = 0; i < c->type.shape.rank; i++)
        c->init->dims[i] = c->type.shape.dims[i].value;
    c->init->rank = c->type.shape.rank;
    if (dq) {
        if (per_axis)
            gl_node_set_attr_int(dq, "axis", gl_tp_axis_unsqueezed(axes, n_axes, qi.axis));
        shape_unsqueeze(&dq->outputs[0]->type.shape, axes, n_axes);
    }
    return gl_set_input(g, holder, hslot, c);
}

gl_status gl_tp_unsqueeze_input(gl_tp_run *run, gl_node *n, size_t slot, const int64_t *axes,
                                size_t n_axes)
{
    gl_graph *g = run->g;
    gl_value *v = n->inputs[slot];
    gl_node *dq;
    gl_value *c = editable_constant(run, n, slot, &dq);
    gl_status st;
    if (c && c->init)
        return unsqueeze_constant(run, n, slot, c, dq, axes, n_axes);

    /* A Squeeze of the same axes above (perhaps behind a DQ only this node reads). */
    gl_node *p = v->producer, *dq2 = NULL;
    if (is_qdq_op(p, "DequantizeLinear") && single_reader(v)) {
        quant_info qi;
        dq2 = quant_info_of(p, &qi) ? p : NULL;
        p = dq2 && dq2->inputs[0] ? dq2->inputs[0]->producer : NULL;
    }
    if (p && gl_node_is(p, "Squeeze") && squeeze_axes_equal(run, p, axes, n_axes)) {
        if (dq2) {
            quant_info qi;
            bool per_axis = quant_info_of(dq2, &qi) && qi.per_axis;
            st = gl_set_input(g, dq2, 0, p->inputs[0]);
            if (per_axis)
                gl_node_set_attr_int(dq2, "axis", gl_tp_axis_unsqueezed(axes, n_axes, qi.axis));
            shape_unsqueeze(&dq2->outputs[0]->type.shape, axes, n_axes);
        } else {
            st = gl_set_input(g, n, slot, p->inputs[0]);
        }
        return st == GL_OK ? gl_tp_remove_if_dead(run, p) : st;
    }

    gl_node *u = add_squeeze_like(run, "Unsqueeze", v, axes, n_axes);
    if (!u)
        return internal(run, "adding an Unsqueeze");
    gl_type_copy(&u->outputs[0]->type, &v->type);
    shape_unsqueeze(&u->outputs[0]->type.shape, axes, n_axes);
    if ((st = gl_set_input(g, n, slot, u->outputs[0])) != GL_OK)
        return st;
    if (is_transpose(v->producer))
        return push_through_new_unsqueeze(run, u, v->producer, axes, n_axes);
    if (is_qdq_op(v->producer, "DequantizeLinear"))
        return make_qdq_unit(run, v->producer);
    return GL_OK;
}

gl_status gl_tp_permute_list_input(gl_tp_run *run, gl_node *n, size_t slot,
                                   const int64_t *idx, size_t n_idx)
{
    gl_graph *g = run->g;
    gl_value *v = n->inputs[slot];
    const gl_tensor *t = constant_tensor(v);
    if (t && t->rank == 1 && t->count == 0)
        return GL_OK; /* an empty list (Resize's roi) says nothing per axis */
    if (t && t->rank == 1 && t->count == (int64_t)n_idx && elem_size(t->dtype) &&
        t->dtype != GL_DT_STRING) {
        gl_tensor *nt = gl_tensor_new(t->dtype, 1, t->dims);
        if (!nt)
            return GL_ERR_NOMEM;
        size_t es = elem_size(t->dtype);
        uint8_t *dst = gl_tensor_make_writable(nt);
        const uint8_t *src = gl_tensor_data(t);
        for (size_t k = 0; k < n_idx; k++)
            memcpy(dst + k * es, src + (size_t)idx[k] * es, es);
        gl_value *c = gl_add_initializer(g, v->name, nt);
        gl_status st = gl_set_input(g, n, slot, c);
        remove_constant_if_unused(run, v);
        return st;
    }
    gl_value *ic = gl_tp_add_ints(run, "perm", idx, n_idx, GL_DT_INT64);
    gl_value *ins[2] = {v, ic};
    gl_node *gather = ic ? gl_tp_add_node(run, "Gather", ins, 2, 1) : NULL;
    if (!gather)
        return internal(run, "adding a Gather");
    gl_node_set_attr_int(gather, "axis", 0);
    gl_type_copy(&gather->outputs[0]->type, &v->type);
    return gl_set_input(g, n, slot, gather->outputs[0]);
}

gl_status gl_tp_remap_axes_input(gl_tp_run *run, gl_node *n, size_t slot, const int64_t *perm,
                                 int rank)
{
    gl_graph *g = run->g;
    gl_value *v = n->inputs[slot];
    gl_dtype dt = v->type.kind == GL_TYPE_TENSOR && v->type.dtype == GL_DT_INT32 ? GL_DT_INT32
                                                                                 : GL_DT_INT64;
    int64_t *axes = NULL;
    size_t count;
    if (gl_tp_const_ints(v, &axes, &count)) {
        int64_t mapped[GL_MAX_RANK * 4];
        bool ok = gl_tp_axes_normalize(axes, count, rank);
        for (size_t k = 0; ok && k < count; k++)
            mapped[k] = perm[axes[k]];
        free(axes);
        if (!ok)
            return internal(run, "axes the check accepted are out of range");
        gl_value *c = gl_tp_add_ints(run, v->name, mapped, count, constant_tensor(v)->dtype);
        gl_status st = c ? gl_set_input(g, n, slot, c) : internal(run, "adding axes");
        remove_constant_if_unused(run, v);
        return st;
    }
    /* perm[axes] at run time; Gather wraps negative axes as the op would. */
    gl_value *pc = gl_tp_add_ints(run, "perm", perm, (size_t)rank, dt);
    gl_value *ins[2] = {pc, v};
    gl_node *gather = pc ? gl_tp_add_node(run, "Gather", ins, 2, 1) : NULL;
    if (!gather)
        return internal(run, "adding a Gather");
    gl_node_set_attr_int(gather, "axis", 0);
    gl_type_copy(&gather->outputs[0]->type, &v->type);
    return gl_set_input(g, n, slot, gather->outputs[0]);
}

gl_status gl_tp_merge_transposes(gl_tp_run *run, gl_node *first, gl_node *second,
                                 const int64_t *node_perm, int rank)
{
    int64_t perm[GL_MAX_RANK], composed[GL_MAX_RANK];
    int r;
    if (!gl_tp_read_perm(first, perm, &r) || r != rank)
        return internal(run, "merging Transposes of different ranks");
    gl_tp_perm_compose(perm, node_perm, rank, composed);
    gl_value *x = first->inputs[0];
    if (gl_tp_perm_is_identity(composed, rank))
        return bypass(run, second, x, first);
    gl_status st;
    if (is_transpose(second)) {
        st = gl_set_input(run->g, second, 0, x);
        gl_node_set_attr_ints(second, "perm", composed, (size_t)rank);
    } else {
        /* A Reshape acting as a Transpose becomes one. */
        gl_node *t = add_transpose(run, x, composed, rank);
        if (!t)
            return internal(run, "adding a Transpose");
        if ((st = gl_move_output(run->g, second, 0, t, 0)) == GL_OK)
            st = gl_remove_node(run->g, second);
    }
    return st == GL_OK ? gl_tp_remove_if_dead(run, first) : st;
}

/* The Reshape target that a Transpose moving only size-1 dims amounts to: known dims as
 * numbers, a dim still at its place as 0 (copy), at most one other as -1. */
static bool reshape_target(const gl_shape *in, const int64_t *perm, int rank, int64_t *shape)
{
    int free_dims = 0;
    int64_t last = -1;
    for (int i = 0; i < rank; i++) {
        int64_t v = in->dims[perm[i]].value;
        if (v == 0)
            return false; /* empty tensors: a 0 in the target would mean "copy" */
        if (v != 1) {
            if (perm[i] < last)
                return false; /* dims that are not 1 change order: a real Transpose */
            last = perm[i];
        }
    }
    for (int i = 0; i < rank; i++) {
        int64_t v = in->dims[perm[i]].value;
        shape[i] = v > 0 ? v : perm[i] == i ? 0 : -1;
        free_dims += shape[i] < 0;
    }
    return free_dims <= 1;
}

/* ==== the cost model ======================================================================== */

int gl_tp_estimate_rank(const gl_value *v)
{
    if (!v || v->type.kind != GL_TYPE_TENSOR || v->type.shape.rank < 0)
        return 5; /* likely a large activation, not a weight */
    int rank = 0;
    for (int i = 0; i < v->type.shape.rank; i++)
        rank += v->type.shape.dims[i].value != 1;
    return rank;
}

bool gl_tp_is_constant(const gl_value *v)
{
    if (!v->producer)
        return constant_tensor(v) != NULL;
    return dq_of_constant(v->graph, v) != NULL;
}

/* Every reader of the Transpose's output is an op the push can pass. */
static bool can_likely_remove(const gl_tp_run *run, const gl_node *t)
{
    const gl_value *out = t->outputs[0];
    if (!out || !gl_value_uses_comprehensive(out))
        return false;
    for (size_t u = 0; u < out->n_uses; u++) {
        bool layout;
        if (!gl_tp_find_handler(run, out->uses[u].node, &layout))
            return false;
    }
    return true;
}

int gl_tp_input_cost(const gl_tp_run *run, const gl_value *v, const int64_t *perm, int rank,
                     char *why, size_t len)
{
    if (gl_tp_is_constant(v)) {
        if (v->producer)
            snprintf(why, len, "constant '%s' behind DequantizeLinear '%s'",
                     v->producer->inputs[0]->name, v->producer->name);
        else
            snprintf(why, len, "constant '%s'", v->name);
        return 0;
    }
    /* Look past a DQ (and a Squeeze the pass put on a shared constant) as the rewrite
     * does. */
    gl_node *p = v->producer;
    if (is_qdq_op(p, "DequantizeLinear") && p->inputs[0] && p->inputs[0]->producer) {
        gl_node *q = p->inputs[0]->producer;
        if (gl_node_is(q, "Squeeze")) {
            gl_node *qq = q->inputs[0] ? q->inputs[0]->producer : NULL;
            if (is_transpose(qq))
                p = qq;
        } else {
            p = q;
        }
    }
    int64_t perm2[GL_MAX_RANK];
    int rank2;
    if (is_transpose(p) && gl_tp_read_perm(p, perm2, &rank2)) {
        if (rank2 == rank && gl_tp_perm_equal(perm2, perm, rank)) {
            if (can_likely_remove(run, p)) {
                snprintf(why, len, "inverse Transpose '%s' disappears", p->name);
                return -gl_tp_estimate_rank(v);
            }
            snprintf(why, len, "inverse Transpose '%s' stays (a reader no Transpose can "
                     "pass): they compose", p->name);
            return 0;
        }
        /* Better than ONNX Runtime: two pushes that meet compose into a Transpose that
         * moves only size-1 dims, which the size-1 rule turns into a Reshape. */
        int64_t inv[GL_MAX_RANK], composed[GL_MAX_RANK], shape[GL_MAX_RANK];
        const gl_value *pre = p->inputs[0];
        gl_tp_perm_invert(perm, rank, inv);
        if (!run->ort_only && p == v->producer && rank2 == rank && gl_tp_rank(pre) == rank) {
            gl_tp_perm_compose(perm2, inv, rank, composed);
            if (reshape_target(&pre->type.shape, composed, rank, shape) &&
                can_likely_remove(run, p)) {
                snprintf(why, len, "Transpose '%s' composes into one that moves only size-1 "
                         "dims: a Reshape", p->name);
                return -gl_tp_estimate_rank(v);
            }
        }
        snprintf(why, len, "Transpose '%s' composes", p->name);
        return 0;
    }
    int r = gl_tp_estimate_rank(v);
    snprintf(why, len, "needs a Transpose (rank %d%s)", r,
             gl_tp_rank(v) < 0 ? ", unknown: counted as 5" : "");
    return r;
}

/* ==== extensions ============================================================================= */

static char *handler_key(const char *domain, const char *op)
{
    bool dflt = !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
    size_t len = (dflt ? 0 : strlen(domain) + 1) + strlen(op) + 1;
    char *key = gl_xmalloc(len);
    snprintf(key, len, "%s%s%s", dflt ? "" : domain, dflt ? "" : ".", op);
    return key;
}

void gl_tp_registry_add(gl_tp_registry *r, const char *domain, const char *op,
                        const gl_tp_handler *h)
{
    char *key = handler_key(domain, op);
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].key, key) == 0) {
            r->items[i].handler = h;
            free(key);
            return;
        }
    GL_GROW(r->items, r->cap, r->n + 1);
    r->items[r->n++] = (gl_tp_extension){key, h};
}

void gl_tp_registry_set_cost_check(gl_tp_registry *r, gl_tp_cost_fn fn, void *user)
{
    r->cost_check = fn;
    r->cost_user = user;
}

void gl_tp_registry_free(gl_tp_registry *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->items[i].key);
    free(r->items);
    memset(r, 0, sizeof(*r));
}

/* The memo: one entry per node id. */
typedef struct memo_handler {
    const gl_tp_handler *handler;
    uint8_t state; /* MEMO_UNKNOWN, or what the lookup found */
} memo_handler;

enum { MEMO_UNKNOWN, MEMO_FOUND, MEMO_LAYOUT_SENSITIVE };

struct gl_tp_memo {
    memo_handler *handlers;
    size_t n_handlers;
};

static const gl_tp_handler *lookup_handler(const gl_tp_run *run, const gl_node *n,
                                           bool *layout_sensitive);

const gl_tp_handler *gl_tp_find_handler(const gl_tp_run *run, const gl_node *n,
                                        bool *layout_sensitive)
{
    gl_tp_memo *memo = run->memo;
    if (!memo)
        return lookup_handler(run, n, layout_sensitive);
    if (n->id >= memo->n_handlers) {
        size_t grown = (size_t)n->id + 1 + memo->n_handlers / 2;
        memo->handlers = gl_xrealloc(memo->handlers, grown * sizeof(memo_handler));
        memset(memo->handlers + memo->n_handlers, 0,
               (grown - memo->n_handlers) * sizeof(memo_handler));
        memo->n_handlers = grown;
    }
    memo_handler *e = &memo->handlers[n->id];
    if (e->state == MEMO_UNKNOWN) {
        bool layout;
        e->handler = lookup_handler(run, n, &layout);
        e->state = layout ? MEMO_LAYOUT_SENSITIVE : MEMO_FOUND;
    }
    *layout_sensitive = e->state == MEMO_LAYOUT_SENSITIVE;
    return e->handler;
}

static const gl_tp_handler *lookup_handler(const gl_tp_run *run, const gl_node *n,
                                           bool *layout_sensitive)
{
    *layout_sensitive = false;
    const gl_tp_registry *r = run->registry;
    if (r && r->n) {
        char *key = handler_key(n->domain, n->op_type);
        const gl_tp_handler *h = NULL;
        for (size_t i = 0; i < r->n && !h; i++)
            if (strcmp(r->items[i].key, key) == 0)
                h = r->items[i].handler;
        free(key);
        if (h)
            return h;
    }
    /* Other domains' layout-sensitive ops (graphlab's channels-last ones) stop the push
     * as ONNX's do: only the Transposes around them move. */
    bool dflt = is_default_domain(n);
    const gl_op_def *def = dflt ? gl_op_lookup("", n->op_type, run->opset)
                           : run->m ? gl_op_for_node(run->m, n) : NULL;
    if (def && (def->flags & GL_OP_LAYOUT_SENSITIVE)) {
        *layout_sensitive = true;
        return NULL;
    }
    return dflt ? gl_tp_builtin_handler(n, run->opset) : NULL;
}

/* ==== which inputs, which outputs lead to a Transpose ======================================== */

/* The inputs of n a Transpose may pass, into out (n->n_inputs entries). */
static size_t transposable_inputs(const gl_node *n, gl_tp_inputs which, size_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n->n_inputs; i++) {
        const gl_value *v = n->inputs[i];
        if (!v || (which == GL_TP_FIRST && i > 0))
            continue;
        if (which == GL_TP_NON_SCALAR && gl_tp_rank(v) == 0)
            continue;
        out[k++] = i;
    }
    return k;
}

static void lead_mark(gl_tp_run *run, const gl_value *v)
{
    if (v && v->id / 8 < run->n_leads)
        run->leads[v->id / 8] |= (uint8_t)(1u << (v->id % 8));
}

bool gl_tp_leads_to_transpose(const gl_tp_run *run, const gl_value *v)
{
    return v && v->id / 8 < run->n_leads && (run->leads[v->id / 8] >> (v->id % 8)) & 1u;
}

static void find_leads(gl_tp_run *run)
{
    gl_graph *g = run->g;
    run->n_leads = g->next_value_id / 8 + 1;
    run->leads = gl_xcalloc(run->n_leads, 1);
    size_t *ins = NULL, cap = 0;
    for (size_t i = g->n_nodes; i-- > 0;) {
        gl_node *n = g->nodes[i];
        if (!n)
            continue;
        if (is_transpose(n)) {
            lead_mark(run, n->inputs[0]);
            continue;
        }
        bool leads = false;
        for (size_t o = 0; o < n->n_outputs && !leads; o++)
            leads = gl_tp_leads_to_transpose(run, n->outputs[o]);
        bool layout;
        const gl_tp_handler *h = leads ? gl_tp_find_handler(run, n, &layout) : NULL;
        if (!h || !h->transposes_outputs)
            continue;
        GL_GROW(ins, cap, n->n_inputs + 1);
        size_t k = transposable_inputs(n, h->inputs, ins);
        for (size_t j = 0; j < k; j++)
            lead_mark(run, n->inputs[ins[j]]);
    }
    free(ins);
}

/* ==== the sweep ================================================================================ */

bool gl_tp_read_perm(const gl_node *t, int64_t *perm, int *rank)
{
    const gl_attr *a = gl_node_attr(t, "perm");
    if (a) {
        /* A perm of another type is no permutation we can read: never the default. */
        if (a != gl_node_attr_typed(t, "perm", GL_ATTR_INTS) || a->n > GL_MAX_RANK)
            return false;
        for (size_t i = 0; i < a->n; i++)
            perm[i] = a->ints[i];
        *rank = (int)a->n;
    } else {
        int r = t->n_inputs ? gl_tp_rank(t->inputs[0]) : GL_RANK_UNKNOWN;
        if (r < 0)
            return false;
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
        *rank = r;
    }
    return gl_tp_perm_valid(perm, *rank);
}

typedef struct input_cost {
    size_t slot;
    int cost;
    char why[200];
} input_cost;

typedef struct cost_report {
    input_cost *inputs;
    size_t n;
    int in_cost;
    int out_rank;     /* estimate over the outputs (the largest) */
    bool out_leads;   /* an output leads to a Transpose */
    int out_cost;     /* what the outputs add: 0 when they lead to one or are untouched */
    int total;
} cost_report;

static void compute_cost(const gl_tp_args *a, const gl_tp_plan *plan, cost_report *c)
{
    const gl_node *n = a->node;
    c->inputs = gl_xcalloc(a->n_inputs ? a->n_inputs : 1, sizeof(input_cost));
    c->n = a->n_inputs;
    c->in_cost = 0;
    for (size_t k = 0; k < a->n_inputs; k++) {
        input_cost *ic = &c->inputs[k];
        ic->slot = a->inputs[k];
        ic->cost = gl_tp_input_cost(a->run, n->inputs[ic->slot], a->perm, a->rank, ic->why,
                                    sizeof(ic->why));
        c->in_cost += ic->cost;
    }
    c->out_rank = 0;
    c->out_leads = false;
    for (size_t o = 0; o < n->n_outputs; o++) {
        if (!n->outputs[o])
            continue;
        int r = gl_tp_estimate_rank(n->outputs[o]);
        c->out_rank = r > c->out_rank ? r : c->out_rank;
        c->out_leads = c->out_leads || gl_tp_leads_to_transpose(a->run, n->outputs[o]);
    }
    /* Outputs count only when the inputs gain (as ONNX Runtime does) and a Transpose
     * really lands after them. */
    bool outputs_moved = plan->transposes_outputs &&
                         !gl_tp_perm_is_identity(plan->out_perm, plan->out_rank);
    c->out_cost = c->in_cost < 0 && outputs_moved && !c->out_leads ? c->out_rank : 0;
    c->total = c->in_cost + c->out_cost;
}

static void add_cost_numbers(gl_decision *d, const cost_report *c, const gl_tp_plan *plan,
                             bool outputs_moved)
{
    char key[32];
    for (size_t k = 0; k < c->n; k++) {
        snprintf(key, sizeof(key), "in%zu_cost", c->inputs[k].slot);
        gl_decision_add_number(d, key, c->inputs[k].cost);
        snprintf(key, sizeof(key), "in%zu", c->inputs[k].slot);
        gl_decision_add_text(d, key, c->inputs[k].why);
    }
    gl_decision_add_number(d, "in_cost", c->in_cost);
    gl_decision_add_number(d, "out_cost", c->out_cost);
    gl_decision_add_text(d, "out", plan->out_note  ? plan->out_note
                                   : !outputs_moved ? "outputs keep their layout"
                                   : c->out_leads  ? "an output leads to a Transpose"
                                   : c->in_cost < 0 ? "outputs need a Transpose"
                                                    : "not counted: the inputs gain nothing");
    gl_decision_add_number(d, "out_leads_to_transpose", c->out_leads);
    gl_decision_add_number(d, "total", c->total);
}

static void add_common(gl_decision *d, const gl_tp_args *a)
{
    char perm[GL_MAX_RANK * 4];
    gl_decision_add_node(d, a->transpose->name);
    gl_decision_add_node(d, a->node->name);
    gl_tp_perm_format(a->perm, a->rank, perm, sizeof(perm));
    gl_decision_add_text(d, "perm", perm);
    if (a->run->g->parent_node)
        gl_decision_add_text(d, "inside", a->run->g->parent_node->name);
}

static void refuse_simple(gl_tp_run *run, const gl_tp_args *a, const char *decided_by,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void refuse_simple(gl_tp_run *run, const gl_tp_args *a, const char *decided_by,
                          const char *fmt, ...)
{
    char rule[160], reason[400];
    snprintf(rule, sizeof(rule), "push-through-%s", a->node->op_type);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    gl_decision *d = gl_pass_decide(run->ctx, rule, GL_REFUSED, "%s", reason);
    add_common(d, a);
    gl_decision_add_text(d, "decided_by", decided_by);
}

typedef enum verdict_source { BY_DEFAULT, BY_CUSTOM, BY_MEETING, BY_HANDLER, BY_GUARD } verdict_source;

static const char *source_name(verdict_source s)
{
    static const char *const names[] = {"default cost", "custom check",
                                        "transpose meets transpose", "handler",
                                        "net-transposes guard"};
    return names[s];
}

/* What the guard found about a push it refuses. */
typedef struct guard_finding {
    int start, end;
    const char *region;
} guard_finding;

static gl_status apply_push(gl_tp_run *run, gl_tp_args *a, const gl_tp_handler *h,
                            const gl_tp_plan *plan, const cost_report *c, verdict_source by,
                            bool outputs_moved, bool *vetoed)
{
    char rule[160], perm[GL_MAX_RANK * 4];
    gl_tp_perm_format(a->perm, a->rank, perm, sizeof(perm));
    gl_decision *d;
    if (plan->rule) {
        snprintf(rule, sizeof(rule), "%s", plan->rule);
        d = gl_pass_decide(run->ctx, rule, GL_APPLIED, "%s '%s' follows Transpose '%s' "
                           "(perm %s): %s", a->node->op_type, a->node->name,
                           a->transpose->name, perm,
                           strcmp(plan->rule, "cancel") == 0
                               ? "they cancel, both go"
                               : "they merge into one Transpose");
    } else {
        snprintf(rule, sizeof(rule), "push-through-%s", a->node->op_type);
        d = gl_pass_decide(run->ctx, rule, GL_APPLIED, "Transpose '%s' (perm %s) moves "
                           "below %s '%s': input cost %d, total %d", a->transpose->name,
                           perm, a->node->op_type, a->node->name, c->in_cost, c->total);
    }
    add_common(d, a);
    gl_decision_add_text(d, "handler", h->family);
    if (by != BY_MEETING)
        add_cost_numbers(d, c, plan, outputs_moved);
    gl_decision_add_text(d, "decided_by", source_name(by));
    if ((*vetoed = gl_pass_vetoed(run->ctx, d)))
        return GL_OK;
    run->for_node = a->node;
    run->decision = d->id;
    gl_status st = h->apply(a, plan);
    run->for_node = NULL;
    return st;
}

/* A push the cost (or the handler) turned down, with everything that was weighed. */
static void record_refusal(gl_tp_run *run, const gl_tp_args *a, const gl_tp_handler *h,
                           const gl_tp_plan *plan, const cost_report *c, verdict_source by,
                           bool outputs_moved, const char *handler_why,
                           const guard_finding *gf)
{
    char rule[160], perm_text[GL_MAX_RANK * 4];
    const gl_node *n = a->node, *t = a->transpose;
    snprintf(rule, sizeof(rule), "push-through-%s", n->op_type);
    gl_tp_perm_format(a->perm, a->rank, perm_text, sizeof(perm_text));
    gl_decision *d;
    if (by == BY_CUSTOM)
        d = gl_pass_decide(run->ctx, rule, GL_REFUSED, "the custom cost check stops "
                           "Transpose '%s' above %s '%s'", t->name, n->op_type, n->name);
    else if (by == BY_HANDLER)
        d = gl_pass_decide(run->ctx, rule, GL_REFUSED, "%s", handler_why);
    else if (by == BY_GUARD && gf->start < 0)
        d = gl_pass_decide(run->ctx, rule, GL_REFUSED, "Transpose '%s' (perm %s) stays "
                           "above %s '%s': the cost model pushes (input cost %d, total %d), "
                           "but trial sweeps kept ending with more Transposes than they "
                           "found, so no push is made", t->name, perm_text, n->op_type,
                           n->name, c->in_cost, c->total);
    else if (by == BY_GUARD)
        d = gl_pass_decide(run->ctx, rule, GL_REFUSED, "Transpose '%s' (perm %s) stays "
                           "above %s '%s': the cost model pushes (input cost %d, total %d), "
                           "but in a trial sweep the pushes of its region ended with %d "
                           "Transposes where it had %d (%s)", t->name, perm_text, n->op_type,
                           n->name, c->in_cost, c->total, gf->end, gf->start, gf->region);
    else
        d = gl_pass_decide(run->ctx, rule, GL_REFUSED, "Transpose '%s' (perm %s) stays "
                           "above %s '%s': input cost %d, total %d (both must fall below "
                           "0)", t->name, perm_text, n->op_type, n->name, c->in_cost,
                           c->total);
    add_common(d, a);
    gl_decision_add_text(d, "handler", h->family);
    add_cost_numbers(d, c, plan, outputs_moved);
    gl_decision_add_text(d, "decided_by", source_name(by));
    if (by == BY_GUARD && gf->start >= 0) {
        gl_decision_add_number(d, "region_transposes_before", gf->start);
        gl_decision_add_number(d, "region_transposes_after", gf->end);
    }
}

/* No handler, or not an input a Transpose may pass: recorded, nothing else. */
static bool refused_early(gl_tp_run *run, gl_tp_args *a, const gl_tp_handler *h, bool layout)
{
    const gl_node *n = a->node, *t = a->transpose;
    if (!h) {
        if (layout)
            refuse_simple(run, a, "layout-sensitive", "layout-sensitive op: %s '%s' "
                          "computes in its own layout, Transpose '%s' stops above it",
                          n->op_type, n->name, t->name);
        else
            refuse_simple(run, a, "no handler", "no handler for %s: Transpose '%s' stops "
                          "above '%s'", n->op_type, t->name, n->name);
        return true;
    }
    for (size_t k = 0; k < a->n_inputs; k++)
        if (a->inputs[k] == a->slot)
            return false;
    refuse_simple(run, a, "handler", "input %zu of %s '%s' is not one a Transpose can pass "
                  "(%s handler)", a->slot, n->op_type, n->name, h->family);
    return true;
}

/* Consider pushing Transpose t (perm) through n, which reads it at `slot`: the handler's
 * check (it edits nothing), the custom cost check, the default cost; then refuse or
 * apply. */
static gl_status consider(gl_tp_run *run, gl_node *t, gl_node *n, size_t slot,
                          const int64_t *perm, int rank, bool *pushed)
{
    *pushed = false;
    int64_t inv[GL_MAX_RANK];
    gl_tp_perm_invert(perm, rank, inv);
    size_t *ins = gl_xcalloc(n->n_inputs + 1, sizeof(size_t));
    gl_tp_args a = {.run = run, .transpose = t, .node = n, .slot = slot, .rank = rank,
                    .perm = perm, .perm_inv = inv, .inputs = ins};
    bool layout;
    const gl_tp_handler *h = gl_tp_find_handler(run, n, &layout);
    if (h)
        a.n_inputs = transposable_inputs(n, h->inputs, ins);
    if (refused_early(run, &a, h, layout)) {
        free(ins);
        return GL_OK;
    }
    gl_tp_plan plan;
    memset(&plan, 0, sizeof(plan));
    plan.transposes_outputs = h->transposes_outputs;
    plan.out_rank = rank;
    memcpy(plan.out_perm, perm, (size_t)rank * sizeof(int64_t));
    char why[300] = "";
    bool ok = h->check(&a, &plan, why, sizeof(why));

    gl_tp_cost_result custom = GL_TP_COST_FALL_THROUGH;
    if (run->registry && run->registry->cost_check)
        custom = run->registry->cost_check(run, n, perm, rank, run->registry->cost_user);
    bool meeting = is_transpose(n);
    verdict_source by = custom != GL_TP_COST_FALL_THROUGH ? BY_CUSTOM
                        : meeting                      ? BY_MEETING
                                                       : BY_DEFAULT;
    cost_report c = {0};
    compute_cost(&a, &plan, &c);
    bool outputs_moved = plan.transposes_outputs &&
                         !gl_tp_perm_is_identity(plan.out_perm, plan.out_rank);
    bool push = custom == GL_TP_COST_PUSH ||
                (custom == GL_TP_COST_FALL_THROUGH &&
                 (meeting || (c.in_cost < 0 && c.total < 0)));
    gl_status st = GL_OK;
    guard_finding gf = {-1, -1, ""};
    if (push && ok && !meeting &&
        gl_tp_guard_refuses(run, t, n, &gf.start, &gf.end, &gf.region))
        record_refusal(run, &a, h, &plan, &c, BY_GUARD, outputs_moved, why, &gf);
    else if (!push || !ok)
        record_refusal(run, &a, h, &plan, &c, push ? BY_HANDLER : by, outputs_moved, why,
                       &gf);
    else {
        gl_tp_guard_before_push(run, &a);
        bool vetoed = false;
        st = apply_push(run, &a, h, &plan, &c, by, outputs_moved, &vetoed);
        if (st == GL_OK && !vetoed)
            gl_tp_guard_after_push(run, meeting);
        *pushed = st == GL_OK && !vetoed;
    }
    free(c.inputs);
    free(ins);
    return st;
}

/* Each input of n that a Transpose produces, until one is pushed (n may be gone then). */
static gl_status visit(gl_tp_run *run, gl_node *n)
{
    for (size_t j = 0; j < n->n_inputs; j++) {
        gl_value *v = n->inputs[j];
        gl_node *t = v ? v->producer : NULL;
        bool seen = false; /* Add(t, t): one consideration is enough */
        for (size_t k = 0; k < j && !seen; k++)
            seen = n->inputs[k] == v;
        if (seen)
            continue;
        int64_t perm[GL_MAX_RANK];
        int rank;
        if (!is_transpose(t) || !gl_tp_read_perm(t, perm, &rank))
            continue;
        if (!gl_pass_may_rewrite(run->ctx)) {
            run->stopped = true;
            return GL_OK;
        }
        bool pushed;
        gl_status st = consider(run, t, n, j, perm, rank, &pushed);
        if (st != GL_OK || pushed)
            return st;
    }
    return GL_OK;
}

/* ==== after the sweep ========================================================================= */

/* Record an applied rule about one node; later edits give new nodes its provenance. */
static gl_decision *decide_on(gl_tp_run *run, gl_node *n, const char *rule, const char *fmt,
                              ...) __attribute__((format(printf, 4, 5)));
static gl_decision *decide_on(gl_tp_run *run, gl_node *n, const char *rule, const char *fmt,
                              ...)
{
    char reason[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    gl_decision *d = gl_pass_decide(run->ctx, rule, GL_APPLIED, "%s", reason);
    gl_decision_add_node(d, n->name);
    if (run->g->parent_node)
        gl_decision_add_text(d, "inside", run->g->parent_node->name);
    run->for_node = n;
    run->decision = d->id;
    return d;
}

/* A copy of constant c, transposed or squeezed as node n (Transpose/Squeeze) does. */
static gl_tensor *folded_constant(gl_tp_run *run, const gl_node *n, const gl_value *c)
{
    gl_tensor *t = gl_tensor_share(c->init);
    if (is_transpose(n)) {
        int64_t perm[GL_MAX_RANK];
        int rank;
        if (gl_tp_read_perm(n, perm, &rank) && rank == t->rank && tensor_transpose(t, perm, rank) == GL_OK)
            return t;
        gl_error_clear();
    } else {
        int64_t *axes = NULL;
        size_t na;
        bool present;
        if (gl_tp_read_axes(run, n, "axes", 1, 13, &axes, &na, &present) && present &&
            gl_tp_axes_normalize(axes, na, t->rank)) {
            bool drop[GL_MAX_RANK] = {false};
            bool fine = true;
            for (size_t k = 0; k < na; k++) {
                drop[axes[k]] = true;
                fine = fine && t->dims[axes[k]] == 1;
            }
            int r = 0;
            for (int i = 0; i < t->rank; i++)
                if (!drop[i])
                    t->dims[r++] = t->dims[i];
            t->rank = r;
            free(axes);
            if (fine)
                return t;
        } else {
            free(axes);
        }
    }
    gl_tensor_free(t);
    return NULL;
}

/* Quantized graphs: Transpose/Squeeze of constants the pass left in front of a DQ fold
 * now (constant folding would fold the DQ as well and break the unit). */
static gl_status fold_into_constants(gl_tp_run *run)
{
    gl_node *n;
    gl_foreach_node(run->g, i, n) {
        if (!is_transpose(n) && !gl_node_is(n, "Squeeze"))
            continue;
        gl_value *c = n->inputs[0], *out = n->outputs[0];
        if (!local_constant(run->g, c) || !out || !out->n_uses || !gl_value_uses_comprehensive(out))
            continue;
        if (!gl_pass_may_rewrite(run->ctx)) {
            run->stopped = true;
            return GL_OK;
        }
        gl_tensor *t = folded_constant(run, n, c);
        if (!t)
            continue;
        gl_decision *d = decide_on(run, n, "fold-into-constant", "%s '%s' of constant '%s' "
                                   "folds into a new constant: the DequantizeLinear unit "
                                   "after it stays whole", n->op_type, n->name, c->name);
        if (gl_pass_vetoed(run->ctx, d)) {
            gl_tensor_free(t);
            continue;
        }
        gl_value *nc = gl_add_initializer(run->g, c->name, t);
        gl_status st = gl_replace_all_uses(run->g, out, nc);
        if (st == GL_OK)
            st = gl_tp_remove_if_dead(run, n);
        remove_constant_if_unused(run, c);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

static bool same_constant(const gl_value *a, const gl_value *b)
{
    if (a == b)
        return true;
    const gl_tensor *ta = a ? constant_tensor(a) : NULL, *tb = b ? constant_tensor(b) : NULL;
    return ta && tb && gl_tensor_equal(ta, tb);
}

/* A zero point given as a constant of zeros equals an omitted one. */
static bool zero_point_default(const gl_value *zp)
{
    const gl_tensor *t = zp ? constant_tensor(zp) : NULL;
    if (!zp)
        return true;
    if (!t)
        return false;
    for (int64_t i = 0; i < t->count; i++)
        if (gl_tensor_get_f64(t, i) != 0)
            return false;
    return true;
}

static bool qdq_pair_matches(const gl_node *dq, const gl_node *q)
{
    if (strcmp(dq->domain ? dq->domain : "", q->domain ? q->domain : "") ||
        dq->inputs[0]->type.dtype != q->outputs[0]->type.dtype ||
        dq->inputs[0]->type.dtype == GL_DT_UNDEFINED ||
        !same_constant(dq->inputs[1], q->inputs[1]))
        return false;
    gl_value *zd = dq->n_inputs > 2 ? dq->inputs[2] : NULL;
    gl_value *zq = q->n_inputs > 2 ? q->inputs[2] : NULL;
    if (zd && zq)
        return same_constant(zd, zq);
    return zero_point_default(zd) && zero_point_default(zq);
}

/* DQ -> Q with nothing between (a Transpose cancelled out of the unit): both go. */
static gl_status remove_empty_dq_q(gl_tp_run *run, gl_node *q, bool *done)
{
    *done = false;
    gl_node *dq = q->inputs[0] ? q->inputs[0]->producer : NULL;
    if (!is_qdq_op(dq, "DequantizeLinear") || !single_reader(dq->outputs[0]) ||
        !q->outputs[0] || !qdq_pair_matches(dq, q))
        return GL_OK;
    gl_value *qin = dq->inputs[0], *qout = q->outputs[0];
    bool consumer_path = gl_value_uses_comprehensive(qout);
    bool output_path = !consumer_path && !qout->n_uses && qin->producer &&
                       single_reader(qin);
    if (!consumer_path && !output_path)
        return GL_OK;
    if (!gl_pass_may_rewrite(run->ctx)) {
        run->stopped = true;
        return GL_OK;
    }
    gl_decision *d = decide_on(run, q, "qdq-remove-pair", "DequantizeLinear '%s' -> "
                               "QuantizeLinear '%s' with the same scale and zero point and "
                               "nothing between: both go", dq->name, q->name);
    gl_decision_add_node(d, dq->name);
    gl_status st;
    if (consumer_path) {
        st = gl_replace_all_uses(run->g, qout, qin);
    } else {
        gl_node *p = qin->producer;
        size_t ps = (size_t)qin->producer_slot;
        if ((st = gl_set_input(run->g, dq, 0, NULL)) == GL_OK)
            st = gl_move_output(run->g, q, 0, p, ps);
    }
    if (st == GL_OK && (st = gl_remove_node(run->g, q)) == GL_OK)
        st = gl_remove_node(run->g, dq);
    *done = st == GL_OK;
    return st;
}

/* DQ -> Transpose -> (not a Q): the Transpose's unit lost its Q; add Q -> DQ after it. */
static gl_status restore_missing_q(gl_tp_run *run, gl_node *t, bool *done)
{
    *done = false;
    gl_node *dq = t->inputs[0] ? t->inputs[0]->producer : NULL;
    gl_value *out = t->outputs[0];
    quant_info qi;
    if (!is_qdq_op(dq, "DequantizeLinear") || !out || !single_reader(dq->outputs[0]) ||
        !quant_info_of(dq, &qi))
        return GL_OK;
    if (out->n_uses > 1 || (out->n_uses == 1 && is_qdq_op(out->uses[0].node, "QuantizeLinear")) ||
        (out->n_uses == 0 && !out->n_output_refs))
        return GL_OK;
    if (!gl_pass_may_rewrite(run->ctx)) {
        run->stopped = true;
        return GL_OK;
    }
    decide_on(run, t, "qdq-restore-q", "Transpose '%s' after DequantizeLinear '%s' is no "
              "longer followed by a QuantizeLinear: Q -> DQ added so the unit stays whole",
              t->name, dq->name);
    *done = true;
    return make_qdq_unit(run, dq);
}

/* prev -> Transpose -> Q: the Transpose's unit lost its DQ; add Q -> DQ before it. */
static gl_status restore_missing_dq(gl_tp_run *run, gl_node *t, bool *done)
{
    *done = false;
    gl_value *in = t->inputs[0], *out = t->outputs[0];
    gl_node *q = out && single_reader(out) ? out->uses[0].node : NULL;
    gl_node *prev = in ? in->producer : NULL;
    quant_info qi;
    int64_t perm[GL_MAX_RANK];
    int rank;
    if (!is_qdq_op(q, "QuantizeLinear") || !prev || is_qdq_op(prev, "DequantizeLinear") ||
        in->n_uses != 1 || !quant_info_of(q, &qi) || !gl_tp_read_perm(t, perm, &rank))
        return GL_OK;
    if (qi.per_axis)
        qi.axis = perm[qi.axis];
    if (!gl_pass_may_rewrite(run->ctx)) {
        run->stopped = true;
        return GL_OK;
    }
    decide_on(run, t, "qdq-restore-dq", "Transpose '%s' before QuantizeLinear '%s' has no "
              "DequantizeLinear in front: Q -> DQ added so the unit stays whole", t->name,
              q->name);
    *done = true;
    size_t n_ins = q->n_inputs > 2 && q->inputs[2] ? 3 : 2;
    gl_value *ins[3] = {NULL, q->inputs[1], n_ins > 2 ? q->inputs[2] : NULL};
    gl_node *nq = gl_tp_add_node(run, "QuantizeLinear", ins, n_ins, 1);
    gl_value *dins[3] = {nq ? nq->outputs[0] : NULL, ins[1], ins[2]};
    gl_node *ndq = nq ? gl_tp_add_node(run, "DequantizeLinear", dins, n_ins, 1) : NULL;
    if (!ndq)
        return internal(run, "adding a Q -> DQ pair");
    set_quant_axis(run, nq, &qi);
    set_quant_axis(run, ndq, &qi);
    gl_type_copy(&nq->outputs[0]->type, &in->type);
    nq->outputs[0]->type.dtype = q->outputs[0]->type.dtype;
    size_t ps = (size_t)in->producer_slot; /* `in` moves to the new DQ */
    gl_status st = gl_move_output(run->g, prev, ps, ndq, 0);
    if (st == GL_OK)
        st = gl_set_input(run->g, nq, 0, prev->outputs[ps]);
    return st;
}

static gl_status fix_qdq_units(gl_tp_run *run)
{
    gl_node *n;
    gl_foreach_node(run->g, i, n) {
        bool done = false;
        gl_status st = GL_OK;
        if (is_qdq_op(n, "QuantizeLinear"))
            st = remove_empty_dq_q(run, n, &done);
        else if (is_transpose(n) && (st = restore_missing_q(run, n, &done)) == GL_OK && !done)
            st = restore_missing_dq(run, n, &done);
        if (st != GL_OK || run->stopped)
            return st;
    }
    return GL_OK;
}

/* Readers that look only at the Transpose's type or static shape: CastLike's `like`,
 * Size, and Shape when the dims it returns are all known. */
static bool reads_type_only(const gl_use *u)
{
    const gl_node *n = u->node;
    if (gl_node_is(n, "CastLike"))
        return u->slot == 1;
    if (gl_node_is(n, "Size"))
        return u->slot == 0;
    if (gl_node_is(n, "Shape") && u->slot == 0) {
        gl_tensor *t = gl_shape_node_value(n);
        gl_tensor_free(t);
        return t != NULL;
    }
    return false;
}

static gl_status remove_dead_transpose(gl_tp_run *run, gl_node *t)
{
    gl_value *out = t->outputs[0], *x = t->inputs[0];
    if (!out || !x || !out->n_uses || !gl_value_uses_comprehensive(out))
        return GL_OK;
    for (size_t u = 0; u < out->n_uses; u++)
        if (!reads_type_only(&out->uses[u]))
            return GL_OK;
    if (!gl_pass_may_rewrite(run->ctx)) {
        run->stopped = true;
        return GL_OK;
    }
    gl_decision *d = decide_on(run, t, "dead-transpose", "Transpose '%s' is read only for "
                               "its type or its static shape (%zu reader(s)): it goes",
                               t->name, out->n_uses);
    gl_decision_add_number(d, "readers", (double)out->n_uses);
    if (gl_pass_vetoed(run->ctx, d))
        return GL_OK;
    while (out->n_uses) {
        gl_use u = out->uses[0];
        gl_status st;
        if (gl_node_is(u.node, "Shape")) {
            gl_tensor *shape = gl_shape_node_value(u.node);
            st = gl_value_make_constant(run->g, u.node->outputs[0], shape);
            if (st != GL_OK) {
                gl_tensor_free(shape);
                return st;
            }
            st = gl_remove_node(run->g, u.node);
        } else {
            st = gl_set_input(run->g, u.node, (size_t)u.slot, x);
        }
        if (st != GL_OK)
            return st;
    }
    return gl_remove_node(run->g, t);
}

static gl_status simplify_size_one_transpose(gl_tp_run *run, gl_node *t)
{
    int64_t perm[GL_MAX_RANK], shape[GL_MAX_RANK];
    int rank;
    gl_value *x = t->inputs[0], *out = t->outputs[0];
    if (!x || !out || !gl_tp_read_perm(t, perm, &rank) || gl_tp_rank(x) != rank)
        return GL_OK;
    bool identity = true;
    for (int i = 0; i < rank; i++)
        identity = identity && (perm[i] == i || (x->type.shape.dims[i].value == 1 &&
                                                 x->type.shape.dims[perm[i]].value == 1));
    if (!identity && !reshape_target(&x->type.shape, perm, rank, shape))
        return GL_OK;
    if (!gl_pass_may_rewrite(run->ctx)) {
        run->stopped = true;
        return GL_OK;
    }
    char perm_text[GL_MAX_RANK * 4], type[200];
    gl_tp_perm_format(perm, rank, perm_text, sizeof(perm_text));
    gl_type_format(&x->type, type, sizeof(type));
    if (identity) {
        gl_decision *d = decide_on(run, t, "identity-transpose", "Transpose '%s' (perm %s) "
                                   "of %s changes nothing: it goes", t->name, perm_text, type);
        gl_decision_add_text(d, "perm", perm_text);
        return gl_pass_vetoed(run->ctx, d) ? GL_OK : bypass(run, t, x, NULL);
    }
    gl_decision *d = decide_on(run, t, "transpose-is-reshape", "Transpose '%s' (perm %s) of "
                               "%s moves only dims of size 1: a Reshape, which moves no "
                               "data", t->name, perm_text, type);
    gl_decision_add_text(d, "perm", perm_text);
    if (gl_pass_vetoed(run->ctx, d))
        return GL_OK;
    gl_value *target = gl_tp_add_ints(run, "shape", shape, (size_t)rank, GL_DT_INT64);
    gl_value *ins[2] = {x, target};
    gl_node *r = target ? gl_tp_add_node(run, "Reshape", ins, 2, 1) : NULL;
    if (!r)
        return internal(run, "adding a Reshape");
    gl_status st = gl_move_output(run->g, t, 0, r, 0);
    return st == GL_OK ? gl_remove_node(run->g, t) : st;
}

static gl_status simplify_remaining(gl_tp_run *run)
{
    gl_node *n;
    gl_foreach_node(run->g, i, n) {
        if (!is_transpose(n))
            continue;
        gl_status st = remove_dead_transpose(run, n);
        if (st == GL_OK && !run->stopped && run->g->nodes[i])
            st = simplify_size_one_transpose(run, n);
        run->for_node = NULL;
        if (st != GL_OK || run->stopped)
            return st;
    }
    return GL_OK;
}

/* ==== the pass ================================================================================== */

static bool has_dq(const gl_graph *g)
{
    gl_node *n;
    gl_foreach_node(g, i, n)
        if (is_qdq_op(n, "DequantizeLinear"))
            return true;
    return false;
}

static gl_status push_graph(gl_graph *g, gl_pass_ctx *ctx, const gl_tp_registry *r,
                            gl_model *m, int64_t opset, gl_tp_guard *guard);

static const char *const body_ops[] = {"If", "Loop", "Scan", "SequenceMap"};

static gl_status push_bodies(gl_graph *g, gl_pass_ctx *ctx, const gl_tp_registry *r,
                             gl_model *m, int64_t opset, gl_tp_guard *guard)
{
    gl_node *n;
    gl_foreach_node(g, i, n) {
        bool runs_bodies = false;
        for (size_t k = 0; k < GL_ARRAY_LEN(body_ops); k++)
            runs_bodies = runs_bodies || gl_node_is(n, body_ops[k]);
        for (size_t a = 0; runs_bodies && a < n->n_attrs; a++) {
            gl_attr *at = &n->attrs[a];
            size_t count = at->type == GL_ATTR_GRAPH ? 1 : at->type == GL_ATTR_GRAPHS ? at->n : 0;
            for (size_t s = 0; s < count; s++) {
                gl_graph *body = at->type == GL_ATTR_GRAPH ? at->g : at->graphs[s];
                gl_status st = body ? push_graph(body, ctx, r, m, opset, guard) : GL_OK;
                if (st != GL_OK)
                    return st;
            }
        }
    }
    return GL_OK;
}

static gl_status push_graph(gl_graph *g, gl_pass_ctx *ctx, const gl_tp_registry *r,
                            gl_model *m, int64_t opset, gl_tp_guard *guard)
{
    gl_tp_run run = {.g = g, .m = m, .ctx = ctx, .opset = opset, .registry = r,
                     .decision = -1, .have_dq = has_dq(g),
                     .ort_only = gl_pass_option_value(ctx, "ort-only") != 0,
                     .guard = guard};
    gl_tp_memo memo = {0};
    run.memo = &memo;
    find_leads(&run);
    gl_tp_guard_begin(&run);
    gl_status st = GL_OK;
    /* The nodes there are now, in order; the ones the sweep adds are reached as
     * producers of these. */
    size_t n0 = g->n_nodes;
    for (size_t i = 0; i < n0 && st == GL_OK && !run.stopped; i++)
        if (g->nodes[i])
            st = visit(&run, g->nodes[i]);
    if (st == GL_OK && !run.stopped && run.have_dq)
        st = fold_into_constants(&run);
    if (st == GL_OK && !run.stopped && run.have_dq)
        st = fix_qdq_units(&run);
    if (st == GL_OK && !run.stopped && !run.ort_only)
        st = simplify_remaining(&run);
    gl_tp_guard_end(&run);
    free(run.leads);
    free(memo.handlers);
    /* New nodes went to the end; put them where they belong (also after a stop). */
    if (st == GL_OK)
        st = gl_toposort(g, NULL);
    if (st == GL_OK && !run.stopped && gl_pass_may_rewrite(ctx))
        st = push_bodies(g, ctx, r, m, opset, guard);
    return st;
}

/* A Transpose anywhere in g or its bodies: without one, a sweep changes nothing. */
static bool holds_transposes(const gl_graph *g)
{
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (is_transpose(n))
            return true;
        for (size_t a = 0; a < n->n_attrs; a++) {
            const gl_attr *at = &n->attrs[a];
            if (at->type == GL_ATTR_GRAPH && at->g && holds_transposes(at->g))
                return true;
            for (size_t k = 0; at->type == GL_ATTR_GRAPHS && k < at->n; k++)
                if (at->graphs[k] && holds_transposes(at->graphs[k]))
                    return true;
        }
    }
    return false;
}

/* The guard's trial sweeps, on clones of m with no budget and no records, until one
 * leaves no region with more Transposes than it found (transpose.h). */
static gl_status plan_refusals(gl_pass_ctx *ctx, const gl_tp_registry *r, gl_model *m,
                               int64_t opset, gl_tp_guard *guard)
{
    gl_status st = GL_OK;
    gl_tp_guard_set_trial(guard, true);
    do {
        gl_model *trial = gl_model_clone(m);
        gl_pass_ctx tctx = {.model = trial, .pass = ctx->pass, .step = ctx->step,
                            .budget = GL_BUDGET_UNLIMITED, .settings = ctx->settings};
        st = push_graph(trial->graph, &tctx, r, trial, opset, guard);
        gl_decision_clear(&tctx.scratch);
        gl_model_free(trial);
    } while (st == GL_OK && gl_tp_guard_next_round(guard));
    gl_tp_guard_set_trial(guard, false);
    return st;
}

gl_status gl_transpose_push_with(gl_graph *g, gl_pass_ctx *ctx, const gl_tp_registry *r)
{
    gl_model *m = ctx->model ? ctx->model : g->model;
    int64_t opset = m ? gl_model_opset(m, "") : 0;
    if (opset == 0)
        return GL_OK; /* no ai.onnx ops: nothing a handler knows */
    if (opset < GL_TP_MIN_OPSET || opset > GL_TP_MAX_OPSET) {
        gl_decision *d = gl_pass_decide(ctx, "unsupported-opset", GL_REFUSED,
                                        "ai.onnx opset %lld is outside %d..%d, the range "
                                        "the handlers are written for: graph unchanged",
                                        (long long)opset, GL_TP_MIN_OPSET, GL_TP_MAX_OPSET);
        gl_decision_add_number(d, "opset", (double)opset);
        return GL_OK;
    }
    gl_tp_guard *guard = NULL;
    gl_status st = GL_OK;
    if (!gl_pass_option_value(ctx, "ort-only") && g == m->graph && holds_transposes(g)) {
        guard = gl_tp_guard_new();
        st = plan_refusals(ctx, r, m, opset, guard);
    }
    if (st == GL_OK)
        st = push_graph(g, ctx, r, m, opset, guard);
    if (st == GL_OK)
        gl_tp_guard_report(guard, ctx);
    gl_tp_guard_free(guard);
    return st;
}

gl_status gl_pass_transpose_push(gl_graph *g, gl_pass_ctx *ctx)
{
    return gl_transpose_push_with(g, ctx, NULL);
}

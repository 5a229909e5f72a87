/* transpose_rewrite.c — what transpose-push's sweep and its handlers share: the algebra
 * of permutations and axes, reading and adding values and nodes, keeping quantized units
 * whole, and the rewrites of a node's inputs and outputs.
 *
 * The handlers (transpose_handlers.c) and the sweep (transpose_push.c) both call down
 * into this file and it calls neither, so the three form a line, not a cycle.
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
        int r = t->n_inputs ? gl_value_rank(t->inputs[0]) : GL_RANK_UNKNOWN;
        if (r < 0)
            return false;
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
        *rank = r;
    }
    return gl_tp_perm_valid(perm, *rank);
}

/* ==== values, constants, nodes ========================================================== */

bool gl_tp_is_qdq_op(const gl_node *n, const char *op)
{
    return n && strcmp(n->op_type, op) == 0 &&
           (!*n->domain || strcmp(n->domain, "com.microsoft") == 0);
}

bool gl_tp_is_transpose(const gl_node *n) { return n && gl_node_is(n, "Transpose"); }

bool gl_tp_local_constant(const gl_graph *g, const gl_value *v)
{
    return v && v->graph == g && gl_value_is_constant(v) && !v->is_input && !v->outer;
}

const gl_tensor *gl_tp_constant_tensor(const gl_value *v)
{
    for (; v; v = v->outer)
        if (gl_value_is_constant(v))
            return v->init;
    return NULL;
}

bool gl_tp_const_ints(const gl_value *v, int64_t **vals, size_t *n)
{
    const gl_tensor *t = gl_tp_constant_tensor(v);
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

void gl_tp_remove_constant_if_unused(gl_tp_run *run, gl_value *v)
{
    if (v && v->graph == run->g && v->init && !v->producer && !v->n_uses && !v->is_input &&
        !v->n_output_refs && !v->outer)
        gl_remove_value(run->g, v);
}

gl_status gl_tp_internal(const gl_tp_run *run, const char *what)
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

gl_status gl_tp_tensor_transpose(gl_tensor *t, const int64_t *perm, int rank)
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

gl_status gl_tp_bypass(gl_tp_run *run, gl_node *n, gl_value *x, gl_node *also)
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
        st = id ? gl_move_output(g, n, 0, id, 0) : gl_tp_internal(run, "adding an Identity");
    }
    if (st == GL_OK)
        st = gl_remove_node(g, n);
    if (st == GL_OK && also)
        st = gl_tp_remove_if_dead(run, also);
    return st;
}

/* ==== quantized graphs =================================================================== */

bool gl_tp_quant_info_of(const gl_node *q, gl_tp_quant_info *qi)
{
    if (q->n_inputs < 2 || !q->inputs[1] || !q->inputs[0])
        return false;
    const gl_shape *s = &q->inputs[1]->type.shape;
    if (q->inputs[1]->type.kind != GL_TYPE_TENSOR || s->rank < 0)
        return false;
    if (s->rank == 0 || (s->rank == 1 && s->dims[0].value == 1)) {
        *qi = (gl_tp_quant_info){false, 1};
        return true;
    }
    int rank = gl_value_rank(q->inputs[0]);
    int64_t axis = gl_node_attr_int(q, "axis", 1);
    if (rank < 0 || gl_node_attr_int(q, "block_size", 0) != 0 || axis < -rank || axis >= rank)
        return false;
    *qi = (gl_tp_quant_info){true, axis < 0 ? axis + rank : axis};
    return true;
}

bool gl_tp_sole_use(const gl_value *v)
{
    return v->n_uses == 1 && gl_value_uses_comprehensive(v);
}

gl_node *gl_tp_dq_of_constant(const gl_graph *g, const gl_value *v)
{
    gl_node *dq = v ? v->producer : NULL;
    gl_tp_quant_info qi;
    if (!gl_tp_is_qdq_op(dq, "DequantizeLinear") || !gl_tp_local_constant(g, dq->inputs[0]) ||
        !gl_tp_quant_info_of(dq, &qi) || !gl_value_uses_comprehensive(dq->inputs[0]) ||
        !gl_tp_sole_use(v))
        return NULL;
    return dq;
}

/* The DQ's input 0 was transposed by `by`: its axis (qi: as it was before, NULL when
 * per-tensor) and output shape follow. */
static void dq_follow_transpose(gl_node *dq, const gl_tp_quant_info *qi, const int64_t *by, int rank)
{
    int64_t inv[GL_MAX_RANK];
    gl_tp_perm_invert(by, rank, inv);
    if (qi && qi->per_axis)
        gl_node_set_attr_int(dq, "axis", inv[qi->axis]);
    gl_journal_touch_value(dq->graph, dq->outputs[0]);
    gl_tp_shape_permute(&dq->outputs[0]->type.shape, by, rank);
}

void gl_tp_set_quant_axis(gl_tp_run *run, gl_node *n, const gl_tp_quant_info *qi)
{
    if (qi->per_axis && run->opset >= 13)
        gl_node_set_attr_int(n, "axis", qi->axis);
}

gl_status gl_tp_make_qdq_unit(gl_tp_run *run, gl_node *dq)
{
    gl_value *out = dq->outputs[0];
    gl_tp_quant_info qi;
    if (!out || !gl_tp_sole_use(out) || !gl_tp_quant_info_of(dq, &qi))
        return GL_OK;
    gl_node *next = out->uses[0].node;
    if (qi.per_axis && gl_tp_is_transpose(next)) {
        int64_t perm[GL_MAX_RANK], inv[GL_MAX_RANK];
        int rank;
        if (!gl_tp_read_perm(next, perm, &rank) || rank != gl_value_rank(out))
            return GL_OK;
        gl_tp_perm_invert(perm, rank, inv);
        qi.axis = inv[qi.axis];
    } else if (qi.per_axis && gl_node_is(next, "Unsqueeze")) {
        int64_t *axes = NULL;
        size_t n;
        bool present;
        int rank = gl_value_rank(out);
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
        return gl_tp_internal(run, "adding a QuantizeLinear");
    gl_value *dq_ins[3] = {q->outputs[0], ins[1], ins[2]};
    gl_node *dq2 = gl_tp_add_node(run, "DequantizeLinear", dq_ins, n_ins, 1);
    if (!dq2)
        return gl_tp_internal(run, "adding a DequantizeLinear");
    free(q->domain);
    q->domain = gl_xstrdup(dq->domain);
    free(dq2->domain);
    dq2->domain = gl_xstrdup(dq->domain);
    gl_tp_set_quant_axis(run, q, &qi);
    gl_tp_set_quant_axis(run, dq2, &qi);
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
    if (gl_tp_local_constant(run->g, v))
        return gl_value_uses_comprehensive(v) ? v : NULL;
    *dq = gl_tp_dq_of_constant(run->g, v);
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
    gl_tp_quant_info qi;
    bool per_axis = dq && gl_tp_quant_info_of(dq, &qi) && qi.per_axis; /* read before detaching */
    bool moves = c->init->count > 1;
    for (int i = 0; i < rank && !moves; i++)
        moves = c->init->dims[by[i]] != c->init->dims[i]; /* an empty tensor's dims */
    gl_status st = gl_set_input(g, holder, hslot, NULL);
    if (st == GL_OK && moves) {
        if (c->n_uses) {
            /* The other readers keep seeing the old layout. */
            gl_node *undo = add_transpose(run, NULL, inv, rank);
            if (!undo)
                return gl_tp_internal(run, "adding a Transpose");
            gl_type_copy(&undo->outputs[0]->type, &c->type);
            if ((st = gl_replace_all_uses(g, c, undo->outputs[0])) == GL_OK)
                st = gl_set_input(g, undo, 0, c);
        }
        gl_journal_touch_value(g, c); /* its header and bytes change in place */
        if (st == GL_OK && (st = gl_tp_tensor_transpose(c->init, by, rank)) == GL_OK)
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
    if (gl_tp_is_qdq_op(p, "DequantizeLinear") && gl_tp_sole_use(v)) {
        gl_tp_quant_info qi;
        dq2 = gl_tp_quant_info_of(p, &qi) ? p : NULL;
        p = dq2 && dq2->inputs[0] ? dq2->inputs[0]->producer : NULL;
    }
    int64_t perm2[GL_MAX_RANK], composed[GL_MAX_RANK];
    int rank2;
    if (gl_tp_is_transpose(p) && gl_tp_read_perm(p, perm2, &rank2) && rank2 == rank) {
        gl_tp_perm_compose(perm2, by, rank, composed);
        gl_value *pre = p->inputs[0];
        gl_status st;
        if (gl_tp_perm_is_identity(composed, rank)) {
            if (dq2) {
                gl_tp_quant_info qi;
                bool per_axis = gl_tp_quant_info_of(dq2, &qi) && qi.per_axis;
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
                return gl_tp_internal(run, "adding a Transpose");
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
        if (other != n && v->uses[u].slot == 0 && gl_tp_is_transpose(other) &&
            gl_tp_read_perm(other, operm, &orank) && orank == rank &&
            gl_tp_perm_equal(operm, by, rank) && other->outputs[0])
            return gl_set_input(g, n, slot, other->outputs[0]);
    }

    gl_node *t = add_transpose(run, v, by, rank);
    if (!t)
        return gl_tp_internal(run, "adding a Transpose");
    type_permuted(&t->outputs[0]->type, &v->type, by, rank);
    gl_status st = gl_set_input(g, n, slot, t->outputs[0]);
    if (st == GL_OK && gl_tp_is_qdq_op(v->producer, "DequantizeLinear"))
        st = gl_tp_make_qdq_unit(run, v->producer);
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
        /* An output nothing reads (a Split's unused part) needs no Transpose: one there
         * would be dead, yet the guard's trial counts it as growth and refuses a push
         * that dce makes a gain (issue 22). ONNX Runtime adds it; ort-only does too. */
        if (!run->ort_only && !n->outputs[j]->n_uses && !n->outputs[j]->n_output_refs) {
            gl_journal_touch_value(run->g, n->outputs[j]);
            gl_tp_shape_permute(&n->outputs[j]->type.shape, inv, rank);
            continue;
        }
        gl_node *t = add_transpose(run, NULL, perm, rank);
        if (!t)
            return gl_tp_internal(run, "adding a Transpose");
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
    int rank = gl_value_rank(sq->inputs[0]);
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
    gl_tp_quant_info qi;
    bool per_axis = dq && gl_tp_quant_info_of(dq, &qi) && qi.per_axis; /* before detaching */
    gl_status st = gl_set_input(g, holder, hslot, NULL);
    if (st != GL_OK)
        return st;
    if (c->n_uses) {
        gl_node *sq = add_squeeze_like(run, "Squeeze", NULL, axes, n_axes);
        if (!sq)
            return gl_tp_internal(run, "adding a Squeeze");
        gl_type_copy(&sq->outputs[0]->type, &c->type);
        if ((st = gl_replace_all_uses(g, c, sq->outputs[0])) != GL_OK ||
            (st = gl_set_input(g, sq, 0, c)) != GL_OK)
            return st;
    }
    /* Only the header changes (it is this value's own; the bytes stay shared). */
    gl_journal_touch_value(g, c);
    shape_unsqueeze(&c->type.shape, axes, n_axes);
    gl_tensor_set_rank(c->init, c->type.shape.rank);
    for (int i = 0; i < c->type.shape.rank; i++)
        c->init->dims[i] = c->type.shape.dims[i].value;
    if (dq) {
        if (per_axis)
            gl_node_set_attr_int(dq, "axis", gl_tp_axis_unsqueezed(axes, n_axes, qi.axis));
        gl_journal_touch_value(g, dq->outputs[0]);
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
    if (gl_tp_is_qdq_op(p, "DequantizeLinear") && gl_tp_sole_use(v)) {
        gl_tp_quant_info qi;
        dq2 = gl_tp_quant_info_of(p, &qi) ? p : NULL;
        p = dq2 && dq2->inputs[0] ? dq2->inputs[0]->producer : NULL;
    }
    if (p && gl_node_is(p, "Squeeze") && squeeze_axes_equal(run, p, axes, n_axes)) {
        if (dq2) {
            gl_tp_quant_info qi;
            bool per_axis = gl_tp_quant_info_of(dq2, &qi) && qi.per_axis;
            st = gl_set_input(g, dq2, 0, p->inputs[0]);
            if (per_axis)
                gl_node_set_attr_int(dq2, "axis", gl_tp_axis_unsqueezed(axes, n_axes, qi.axis));
            gl_journal_touch_value(g, dq2->outputs[0]);
            shape_unsqueeze(&dq2->outputs[0]->type.shape, axes, n_axes);
        } else {
            st = gl_set_input(g, n, slot, p->inputs[0]);
        }
        return st == GL_OK ? gl_tp_remove_if_dead(run, p) : st;
    }

    gl_node *u = add_squeeze_like(run, "Unsqueeze", v, axes, n_axes);
    if (!u)
        return gl_tp_internal(run, "adding an Unsqueeze");
    gl_type_copy(&u->outputs[0]->type, &v->type);
    shape_unsqueeze(&u->outputs[0]->type.shape, axes, n_axes);
    if ((st = gl_set_input(g, n, slot, u->outputs[0])) != GL_OK)
        return st;
    if (gl_tp_is_transpose(v->producer))
        return push_through_new_unsqueeze(run, u, v->producer, axes, n_axes);
    if (gl_tp_is_qdq_op(v->producer, "DequantizeLinear"))
        return gl_tp_make_qdq_unit(run, v->producer);
    return GL_OK;
}

gl_status gl_tp_permute_list_input(gl_tp_run *run, gl_node *n, size_t slot,
                                   const int64_t *idx, size_t n_idx)
{
    gl_graph *g = run->g;
    gl_value *v = n->inputs[slot];
    const gl_tensor *t = gl_tp_constant_tensor(v);
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
        gl_tp_remove_constant_if_unused(run, v);
        return st;
    }
    gl_value *ic = gl_tp_add_ints(run, "perm", idx, n_idx, GL_DT_INT64);
    gl_value *ins[2] = {v, ic};
    gl_node *gather = ic ? gl_tp_add_node(run, "Gather", ins, 2, 1) : NULL;
    if (!gather)
        return gl_tp_internal(run, "adding a Gather");
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
            return gl_tp_internal(run, "axes the check accepted are out of range");
        gl_value *c = gl_tp_add_ints(run, v->name, mapped, count, gl_tp_constant_tensor(v)->dtype);
        gl_status st = c ? gl_set_input(g, n, slot, c) : gl_tp_internal(run, "adding axes");
        gl_tp_remove_constant_if_unused(run, v);
        return st;
    }
    /* perm[axes] at run time; Gather wraps negative axes as the op would. */
    gl_value *pc = gl_tp_add_ints(run, "perm", perm, (size_t)rank, dt);
    gl_value *ins[2] = {pc, v};
    gl_node *gather = pc ? gl_tp_add_node(run, "Gather", ins, 2, 1) : NULL;
    if (!gather)
        return gl_tp_internal(run, "adding a Gather");
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
        return gl_tp_internal(run, "merging Transposes of different ranks");
    gl_tp_perm_compose(perm, node_perm, rank, composed);
    gl_value *x = first->inputs[0];
    if (gl_tp_perm_is_identity(composed, rank))
        return gl_tp_bypass(run, second, x, first);
    gl_status st;
    if (gl_tp_is_transpose(second)) {
        st = gl_set_input(run->g, second, 0, x);
        gl_node_set_attr_ints(second, "perm", composed, (size_t)rank);
    } else {
        /* A Reshape acting as a Transpose becomes one. */
        gl_node *t = add_transpose(run, x, composed, rank);
        if (!t)
            return gl_tp_internal(run, "adding a Transpose");
        if ((st = gl_move_output(run->g, second, 0, t, 0)) == GL_OK)
            st = gl_remove_node(run->g, second);
    }
    return st == GL_OK ? gl_tp_remove_if_dead(run, first) : st;
}

bool gl_tp_reshape_target(const gl_shape *in, const int64_t *perm, int rank, int64_t *shape)
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

/* control.c — ops that hold subgraphs (If, Loop, Scan) and the recurrent layers (RNN,
 * GRU, LSTM), whose time loop is the same idea written out in C.
 *
 * Subgraph kernels never evaluate nodes themselves: they bind tensors to a body's inputs
 * and call k->run_body, which the executor provides (outer values a body reads are its
 * business). They own every tensor run_body hands back and pass it on or free it. */
#include "ops/families.h"
#include "ops/opkit.h"

#include "ir/limits.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- tensor pieces: slices along an axis ------------------------------------------------ */

/* The sub-tensor of t at index idx along axis (rank one less); NULL with a message. */
static gl_tensor *take_slice(const gl_tensor *t, int axis, int64_t idx)
{
    int64_t dims[GL_MAX_RANK];
    int r = 0;
    for (int d = 0; d < t->rank; d++)
        if (d != axis)
            dims[r++] = t->dims[d];
    gl_tensor *s = gl_tensor_new(t->dtype, r, dims);
    if (!s)
        return NULL;
    gl_axis_view v = gl_axis_view_of(t->dims, t->rank, axis);
    for (int64_t o = 0; o < v.outer; o++)
        gl_copy_elems(s, o * v.inner, t, (o * v.n + idx) * v.inner, v.inner);
    return s;
}

/* A zeroed tensor of dtype whose shape is elem_dims with `len` inserted at `axis`. Stacked
 * outputs grow with the iterations a body runs: `what` (may be NULL) names the output
 * when the run's memory limit refuses it. */
static gl_tensor *new_with_axis(const char *where, const char *what, gl_dtype dt,
                                const int64_t *elem_dims, int elem_rank, int axis, int64_t len)
{
    int64_t dims[GL_MAX_RANK];
    if (elem_rank + 1 > GL_MAX_RANK) {
        gl_fail(GL_ERR_INPUT, "rank %d is too large", elem_rank + 1);
        return NULL;
    }
    for (int d = 0, e = 0; d <= elem_rank; d++)
        dims[d] = d == axis ? len : elem_dims[e++];
    if (gl_limits_check_tensor(where, what, dt, elem_rank + 1, dims) != GL_OK)
        return NULL;
    return gl_tensor_new(dt, elem_rank + 1, dims);
}

/* "scan output 'ys'": output i of the node, for messages. */
static const char *out_label(const gl_kernel_ctx *k, size_t i, char *buf, size_t len)
{
    const gl_value *v = i < k->n_outputs ? k->node->outputs[i] : NULL;
    snprintf(buf, len, "scan output '%s'", v && v->name ? v->name : "");
    return buf;
}

/* Whether `piece` has dst's dtype and dst's shape without axis. */
static bool piece_fits(const gl_tensor *dst, int axis, const gl_tensor *piece)
{
    bool same = piece->dtype == dst->dtype && piece->rank == dst->rank - 1;
    for (int d = 0, e = 0; same && d < dst->rank; d++)
        if (d != axis && dst->dims[d] != piece->dims[e++])
            same = false;
    return same;
}

/* Write `piece` (dst's shape without axis) at index idx along axis of dst. */
static gl_status put_slice(gl_tensor *dst, int axis, int64_t idx, const gl_tensor *piece,
                           const char *where, const char *what)
{
    if (!piece_fits(dst, axis, piece))
        return gl_fail(GL_ERR_INPUT, "%s: %s changes type or shape between iterations", where,
                       what);
    gl_axis_view v = gl_axis_view_of(dst->dims, dst->rank, axis);
    for (int64_t o = 0; o < v.outer; o++)
        gl_copy_elems(dst, (o * v.n + idx) * v.inner, piece, o * v.inner, v.inner);
    return GL_OK;
}

/* An empty scan output when the body never ran: `len` inserted at axis into the body
 * output's declared shape (unknown dims as 0: no element is stored either way). */
static gl_tensor *empty_from_declared(const gl_value *v, int axis, int64_t len)
{
    int64_t dims[GL_MAX_RANK] = {0};
    int rank = 0;
    gl_dtype dt = GL_DT_FLOAT;
    if (v && v->type.kind == GL_TYPE_TENSOR) {
        if (gl_dtype_valid(v->type.dtype))
            dt = v->type.dtype;
        if (v->type.shape.rank > 0 && v->type.shape.rank < GL_MAX_RANK) {
            rank = v->type.shape.rank;
            for (int d = 0; d < rank; d++)
                dims[d] = v->type.shape.dims[d].value > 0 ? v->type.shape.dims[d].value : 0;
        }
    }
    if (axis > rank)
        axis = rank;
    return new_with_axis(NULL, NULL, dt, dims, rank, axis, len);
}

static void free_tensors(gl_tensor **ts, size_t n)
{
    if (!ts)
        return;
    for (size_t i = 0; i < n; i++) {
        gl_tensor_free(ts[i]);
        ts[i] = NULL;
    }
}

/* ---- subgraph plumbing ------------------------------------------------------------------- */

static const gl_graph *graph_attr(const gl_node *n, const char *name)
{
    const gl_attr *a = gl_node_attr(n, name);
    return a && a->type == GL_ATTR_GRAPH ? a->g : NULL;
}

static gl_status need_executor(const gl_kernel_ctx *k)
{
    if (k->run_body)
        return GL_OK;
    return gl_fail(GL_ERR_UNSUPPORTED, "%s: subgraphs run only inside the executor", k->where);
}

/* A single-element condition (bool, or any number: nonzero is true). */
static gl_status read_cond(const gl_kernel_ctx *k, const gl_tensor *t, const char *what,
                           bool *out)
{
    if (!t || t->count != 1 || t->dtype == GL_DT_STRING)
        return gl_fail(GL_ERR_INPUT, "%s: %s must be a single boolean", k->where, what);
    *out = gl_elem_i64(t, 0) != 0 || gl_elem_f64(t, 0) != 0;
    return GL_OK;
}

/* Hand body results to the node's outputs; results of omitted outputs are dropped. */
static void emit_outputs(gl_kernel_ctx *k, gl_tensor **results, size_t n)
{
    for (size_t i = 0; i < n && i < k->n_outputs; i++) {
        if (k->node->outputs[i]) {
            gl_tensor_free(k->out[i]);
            k->out[i] = results[i];
        } else {
            gl_tensor_free(results[i]);
        }
        results[i] = NULL;
    }
}

/* gl_type arrays for infer_body, every entry "nothing known". */
static gl_type *types_new(size_t n)
{
    gl_type *t = gl_xcalloc(n ? n : 1, sizeof(gl_type));
    for (size_t i = 0; i < n; i++)
        gl_shape_init_unknown(&t[i].shape);
    return t;
}

static void types_free(gl_type *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gl_type_free(&t[i]);
    free(t);
}

/* What both a and b allow: the common dtype, dims kept where they agree. Used where a
 * value is one of two things (If branches, a loop-carried value before and after). */
static void merge_types(gl_type *out, const gl_type *a, const gl_type *b)
{
    gl_type_free(out);
    gl_shape_init_unknown(&out->shape);
    if (a->kind == GL_TYPE_OPAQUE && b->kind == GL_TYPE_OPAQUE && a->opaque.len == b->opaque.len &&
        (a->opaque.len == 0 || memcmp(a->opaque.data, b->opaque.data, a->opaque.len) == 0)) {
        gl_type_copy(out, a);
        return;
    }
    if (a->kind != GL_TYPE_TENSOR || b->kind != GL_TYPE_TENSOR || a->dtype != b->dtype)
        return;
    out->kind = GL_TYPE_TENSOR;
    out->dtype = a->dtype;
    if (a->shape.rank == GL_RANK_UNKNOWN || a->shape.rank != b->shape.rank)
        return;
    gl_shape_set_rank(&out->shape, a->shape.rank);
    for (int d = 0; d < a->shape.rank; d++) {
        const gl_dim *x = &a->shape.dims[d], *y = &b->shape.dims[d];
        if ((x->value >= 0 && x->value == y->value) ||
            (x->sym && y->sym && strcmp(x->sym, y->sym) == 0))
            gl_dim_copy(&out->shape.dims[d], x);
    }
}

/* dst = src without dimension `axis` (NONE when src's rank is unknown or too small). */
static void type_drop_axis(gl_type *dst, const gl_type *src, int axis)
{
    gl_type_free(dst);
    gl_shape_init_unknown(&dst->shape);
    if (!src || src->kind != GL_TYPE_TENSOR)
        return;
    dst->kind = GL_TYPE_TENSOR;
    dst->dtype = src->dtype;
    if (src->shape.rank == GL_RANK_UNKNOWN || axis >= src->shape.rank)
        return;
    gl_shape_set_rank(&dst->shape, src->shape.rank - 1);
    for (int d = 0, e = 0; d < src->shape.rank; d++)
        if (d != axis)
            gl_dim_copy(&dst->shape.dims[e++], &src->shape.dims[d]);
}

/* dst = src with `len` inserted at axis (axis may be negative: counted on rank + 1). */
static void type_insert_axis(gl_type *dst, const gl_type *src, int64_t axis, const gl_dim *len)
{
    gl_type_free(dst);
    gl_shape_init_unknown(&dst->shape);
    if (!src || src->kind != GL_TYPE_TENSOR)
        return;
    dst->kind = GL_TYPE_TENSOR;
    dst->dtype = src->dtype;
    int rank = src->shape.rank;
    if (rank == GL_RANK_UNKNOWN || axis < -(rank + 1) || axis > rank)
        return;
    int ax = (int)(axis < 0 ? axis + rank + 1 : axis);
    gl_shape_set_rank(&dst->shape, rank + 1);
    for (int d = 0, e = 0; d <= rank; d++) {
        if (d == ax) {
            if (len)
                gl_dim_copy(&dst->shape.dims[d], len);
        } else {
            gl_dim_copy(&dst->shape.dims[d], &src->shape.dims[e++]);
        }
    }
}

static void type_scalar(gl_type *t, gl_dtype dt)
{
    gl_type_free(t);
    t->kind = GL_TYPE_TENSOR;
    t->dtype = dt;
    gl_shape_init_unknown(&t->shape);
    gl_shape_set_rank(&t->shape, 0);
}

static void type_from_input(gl_type *dst, const gl_infer_ctx *c, size_t i)
{
    gl_type_free(dst);
    gl_shape_init_unknown(&dst->shape);
    if (i < c->n_inputs && c->in_types[i])
        gl_type_copy(dst, c->in_types[i]);
}

/* ---- If ------------------------------------------------------------------------------------ */

static gl_status if_branches(const gl_node *n, size_t n_outputs, const char *where,
                             const gl_graph **then_g, const gl_graph **else_g)
{
    *then_g = graph_attr(n, "then_branch");
    *else_g = graph_attr(n, "else_branch");
    if (!*then_g || !*else_g)
        return gl_fail(GL_ERR_INPUT, "%s: needs graph attributes then_branch and else_branch",
                       where);
    if ((*then_g)->n_outputs != n_outputs || (*else_g)->n_outputs != n_outputs)
        return gl_fail(GL_ERR_INPUT, "%s: branches yield %zu and %zu outputs, the node has %zu",
                       where, (*then_g)->n_outputs, (*else_g)->n_outputs, n_outputs);
    return GL_OK;
}

static gl_status if_infer(gl_infer_ctx *c)
{
    const gl_graph *then_g, *else_g;
    gl_status st = if_branches(c->node, c->n_outputs, c->where, &then_g, &else_g);
    if (st != GL_OK)
        return st;
    const gl_type *cond = gl_infer_input(c, 0);
    if (cond && cond->dtype != GL_DT_BOOL && cond->dtype != GL_DT_UNDEFINED)
        return gl_fail(GL_ERR_INPUT, "%s: cond must be bool, not %s", c->where,
                       gl_dtype_name(cond->dtype));
    if (!c->infer_body)
        return GL_OK;
    gl_type *a = types_new(c->n_outputs), *b = types_new(c->n_outputs);
    st = c->infer_body(c, then_g, NULL, 0, a, c->n_outputs);
    if (st == GL_OK)
        st = c->infer_body(c, else_g, NULL, 0, b, c->n_outputs);
    for (size_t i = 0; st == GL_OK && i < c->n_outputs; i++)
        merge_types(&c->out_types[i], &a[i], &b[i]);
    types_free(a, c->n_outputs);
    types_free(b, c->n_outputs);
    return st;
}

static gl_status if_kernel(gl_kernel_ctx *k)
{
    const gl_graph *then_g, *else_g;
    bool cond;
    gl_status st = need_executor(k);
    if (st == GL_OK)
        st = if_branches(k->node, k->n_outputs, k->where, &then_g, &else_g);
    if (st == GL_OK)
        st = read_cond(k, gl_opt_input(k, 0), "cond", &cond);
    if (st != GL_OK)
        return st;
    gl_tensor **results = gl_xcalloc(k->n_outputs ? k->n_outputs : 1, sizeof(*results));
    st = k->run_body(k, cond ? then_g : else_g, NULL, 0, results, k->n_outputs);
    if (st == GL_OK)
        emit_outputs(k, results, k->n_outputs);
    free_tensors(results, k->n_outputs);
    free(results);
    return st;
}

/* ---- Loop -------------------------------------------------------------------------------------
 * Inputs (M, cond, v_initial...); body (iteration_num, cond, carried...) -> (cond, carried...,
 * scan...); node outputs (carried final..., scan outputs stacked on a new first axis). The
 * body's cond output always decides whether another iteration runs (as ONNX Runtime does):
 * with both M and cond omitted that is the only way the loop ends. */

static gl_status loop_shape(const gl_node *n, size_t n_inputs, size_t n_outputs,
                            const char *where, const gl_graph **body, size_t *n_carried,
                            size_t *n_scan)
{
    *body = graph_attr(n, "body");
    if (!*body)
        return gl_fail(GL_ERR_INPUT, "%s: needs a graph attribute 'body'", where);
    size_t carried = n_inputs > 2 ? n_inputs - 2 : 0;
    if ((*body)->n_inputs != carried + 2)
        return gl_fail(GL_ERR_INPUT, "%s: body takes %zu inputs, expected %zu (iteration, cond, "
                       "%zu loop-carried)", where, (*body)->n_inputs, carried + 2, carried);
    if ((*body)->n_outputs != n_outputs + 1 || n_outputs < carried)
        return gl_fail(GL_ERR_INPUT, "%s: body yields %zu outputs, expected cond + %zu carried + "
                       "the node's %zu scan outputs", where, (*body)->n_outputs, carried,
                       n_outputs > carried ? n_outputs - carried : 0);
    *n_carried = carried;
    *n_scan = n_outputs - carried;
    return GL_OK;
}

static gl_status loop_infer(gl_infer_ctx *c)
{
    const gl_graph *body;
    size_t nc, ns;
    gl_status st = loop_shape(c->node, c->n_inputs, c->n_outputs, c->where, &body, &nc, &ns);
    if (st != GL_OK)
        return st;
    if (!c->infer_body) {
        for (size_t i = 0; i < nc; i++) {
            const gl_type *t = gl_infer_input(c, 2 + i);
            if (t)
                gl_infer_set_rank(c, i, t->dtype, GL_RANK_UNKNOWN);
        }
        return GL_OK;
    }
    size_t n_in = nc + 2, n_out = 1 + nc + ns;
    gl_type *in = types_new(n_in), *out = types_new(n_out);
    type_scalar(&in[0], GL_DT_INT64);
    type_scalar(&in[1], GL_DT_BOOL);
    for (size_t i = 0; i < nc; i++)
        type_from_input(&in[2 + i], c, 2 + i);
    st = c->infer_body(c, body, in, n_in, out, n_out);
    for (size_t i = 0; st == GL_OK && i < nc; i++)
        merge_types(&c->out_types[i], &in[2 + i], &out[1 + i]);
    for (size_t i = 0; st == GL_OK && i < ns; i++)
        type_insert_axis(&c->out_types[nc + i], &out[1 + nc + i], 0, NULL);
    types_free(in, n_in);
    types_free(out, n_out);
    return st;
}

typedef struct loop_state {
    size_t nc, ns;
    gl_tensor **carried;    /* current loop-carried values (owned) */
    /* Per scan output: the pieces so far stacked on a new axis 0, which has room for more
     * (owned; NULL before the first iteration). Stacking as they come, rather than keeping
     * each iteration's tensor, costs one piece per iteration, not a piece and a header:
     * a loop of a million empty pieces takes no memory. */
    gl_tensor **stacks;
    size_t n_iter;
} loop_state;

static void loop_state_free(loop_state *s)
{
    free_tensors(s->carried, s->nc);
    free(s->carried);
    free_tensors(s->stacks, s->ns);
    free(s->stacks);
}

/* Put this iteration's piece of scan output j on its stack, doubling the stack when it is
 * full (checked against the memory limit in the output's name). */
static gl_status loop_push(gl_kernel_ctx *k, loop_state *s, size_t j, const gl_tensor *piece)
{
    char what[300];
    out_label(k, s->nc + j, what, sizeof(what));
    gl_tensor *stack = s->stacks[j];
    if (stack && !piece_fits(stack, 0, piece))
        return gl_fail(GL_ERR_INPUT, "%s: %s changes type or shape between iterations",
                       k->where, what);
    if (!stack || (int64_t)s->n_iter == stack->dims[0]) {
        int64_t room = stack ? 2 * stack->dims[0] : 1;
        gl_tensor *grown = new_with_axis(k->where, what, piece->dtype, piece->dims, piece->rank,
                                         0, room);
        if (!grown)
            return GL_ERR_NOMEM;
        if (stack)
            gl_copy_elems(grown, 0, stack, 0, stack->count);
        gl_tensor_free(stack);
        s->stacks[j] = grown;
    }
    return put_slice(s->stacks[j], 0, (int64_t)s->n_iter, piece, k->where, what);
}

/* One iteration: run the body, take its outputs into the state. */
static gl_status loop_step(gl_kernel_ctx *k, const gl_graph *body, loop_state *s, int64_t iter,
                           bool *cond)
{
    size_t n_in = 2 + s->nc, n_out = 1 + s->nc + s->ns;
    gl_tensor *it = gl_tensor_new(GL_DT_INT64, 0, NULL);
    gl_tensor *cd = gl_tensor_new(GL_DT_BOOL, 0, NULL);
    const gl_tensor **in = gl_xcalloc(n_in, sizeof(*in));
    gl_tensor **out = gl_xcalloc(n_out, sizeof(*out));
    gl_status st = it && cd ? GL_OK : GL_ERR_NOMEM;
    if (st == GL_OK) {
        *(int64_t *)gl_tensor_make_writable(it) = iter;
        *(uint8_t *)gl_tensor_make_writable(cd) = *cond;
        in[0] = it;
        in[1] = cd;
        for (size_t i = 0; i < s->nc; i++)
            in[2 + i] = s->carried[i];
        st = k->run_body(k, body, in, n_in, out, n_out);
    }
    for (size_t i = 0; st == GL_OK && i < n_out; i++)
        if (!out[i])
            st = gl_fail(GL_ERR_INTERNAL, "%s: body output %zu missing", k->where, i);
    if (st == GL_OK)
        st = read_cond(k, out[0], "the body's cond output", cond);
    for (size_t j = 0; st == GL_OK && j < s->ns; j++)
        st = loop_push(k, s, j, out[1 + s->nc + j]);
    if (st == GL_OK) {
        for (size_t i = 0; i < s->nc; i++) {
            gl_tensor_free(s->carried[i]);
            s->carried[i] = out[1 + i];
            out[1 + i] = NULL;
        }
        s->n_iter++;
    }
    free_tensors(out, n_out);
    free(out);
    free(in);
    gl_tensor_free(it);
    gl_tensor_free(cd);
    return st;
}

/* Scan output j: the pieces of every iteration stacked on a new first axis (its stack,
 * cut to the iterations run). */
static gl_tensor *loop_stack(gl_kernel_ctx *k, const gl_graph *body, loop_state *s, size_t j)
{
    gl_tensor *stack = s->stacks[j];
    if (s->n_iter == 0)
        return empty_from_declared(body->outputs[1 + s->nc + j], 0, 0);
    if (stack->dims[0] == (int64_t)s->n_iter) {
        s->stacks[j] = NULL;
        return stack;
    }
    char what[300];
    gl_tensor *t = new_with_axis(k->where, out_label(k, s->nc + j, what, sizeof(what)),
                                 stack->dtype, stack->dims + 1, stack->rank - 1, 0,
                                 (int64_t)s->n_iter);
    if (t)
        gl_copy_elems(t, 0, stack, 0, t->count);
    return t;
}

static gl_status loop_kernel(gl_kernel_ctx *k)
{
    const gl_graph *body;
    loop_state s = {0};
    gl_status st = need_executor(k);
    if (st == GL_OK)
        st = loop_shape(k->node, k->n_inputs, k->n_outputs, k->where, &body, &s.nc, &s.ns);
    if (st != GL_OK)
        return st;
    const gl_tensor *m = gl_opt_input(k, 0), *c0 = gl_opt_input(k, 1);
    int64_t trips = INT64_MAX;
    bool cond = true;
    if (m && !gl_scalar_int(m, k->where, "M", &trips))
        return GL_ERR_INPUT;
    if (c0 && (st = read_cond(k, c0, "cond", &cond)) != GL_OK)
        return st;
    s.carried = gl_xcalloc(s.nc ? s.nc : 1, sizeof(*s.carried));
    s.stacks = gl_xcalloc(s.ns ? s.ns : 1, sizeof(*s.stacks));
    for (size_t i = 0; i < s.nc && st == GL_OK; i++) {
        if (!k->in[2 + i])
            st = gl_fail(GL_ERR_INPUT, "%s: loop-carried input %zu is missing", k->where, i);
        else
            s.carried[i] = gl_tensor_share(k->in[2 + i]);
    }
    for (int64_t i = 0; st == GL_OK && i < trips && cond; i++)
        if ((st = gl_limits_iteration(k->where)) == GL_OK)
            st = loop_step(k, body, &s, i, &cond);
    gl_tensor **results = gl_xcalloc(s.nc + s.ns + 1, sizeof(*results));
    for (size_t i = 0; st == GL_OK && i < s.nc; i++) {
        results[i] = s.carried[i];
        s.carried[i] = NULL;
    }
    for (size_t j = 0; st == GL_OK && j < s.ns; j++)
        if (!(results[s.nc + j] = loop_stack(k, body, &s, j)))
            st = GL_ERR_INPUT;
    if (st == GL_OK)
        emit_outputs(k, results, s.nc + s.ns);
    free_tensors(results, s.nc + s.ns);
    free(results);
    loop_state_free(&s);
    return st;
}

/* ---- Scan -------------------------------------------------------------------------------------
 * Opset 9+: inputs (states..., scan inputs...), each scan input iterated along its own axis
 * and direction; scan outputs stacked along their own axis/direction. Opset 8: a leading
 * optional sequence_lens input and a batch axis 0 on everything, the sequence axis 1; the
 * scan outputs of shorter sequences are zero-padded. */

typedef struct scan_plan {
    size_t n_state, n_in, n_out;
    int *in_axis;    /* per scan input, normalized */
    bool *in_rev;
    int64_t *out_axis; /* per scan output, raw (normalized against the piece's rank + 1) */
    bool *out_rev;
} scan_plan;

static void scan_plan_free(scan_plan *p)
{
    free(p->in_axis);
    free(p->in_rev);
    free(p->out_axis);
    free(p->out_rev);
}

/* The INTS attribute `name` as n values (default `dflt` when absent); its values must lie
 * in [lo, hi]. */
static gl_status scan_ints(const gl_node *n, const char *name, size_t count, int64_t dflt,
                           int64_t lo, int64_t hi, const char *where, int64_t **out)
{
    size_t got;
    const int64_t *v = gl_attr_ints(n, name, &got);
    *out = gl_xcalloc(count ? count : 1, sizeof(int64_t));
    if (v && got != count)
        return gl_fail(GL_ERR_INPUT, "%s: %s has %zu entries, expected %zu", where, name, got,
                       count);
    for (size_t i = 0; i < count; i++) {
        (*out)[i] = v ? v[i] : dflt;
        if ((*out)[i] < lo || (*out)[i] > hi)
            return gl_fail(GL_ERR_INPUT, "%s: %s[%zu] = %lld is out of range", where, name, i,
                           (long long)(*out)[i]);
    }
    return GL_OK;
}

/* The counts of states, scan inputs and scan outputs, checked against the body. */
static gl_status scan_counts(const gl_node *n, size_t n_inputs, size_t n_outputs, bool v8,
                             const char *where, const gl_graph **body, scan_plan *p)
{
    *body = graph_attr(n, "body");
    if (!*body)
        return gl_fail(GL_ERR_INPUT, "%s: needs a graph attribute 'body'", where);
    int64_t m = gl_node_attr_int(n, "num_scan_inputs", -1);
    size_t first = v8 ? 1 : 0;
    if (n_inputs < first || m < 1 || (size_t)m > n_inputs - first)
        return gl_fail(GL_ERR_INPUT, "%s: num_scan_inputs %lld does not fit %zu inputs", where,
                       (long long)m, n_inputs);
    p->n_in = (size_t)m;
    p->n_state = n_inputs - first - p->n_in;
    if (n_outputs < p->n_state)
        return gl_fail(GL_ERR_INPUT, "%s: %zu outputs for %zu state variables", where, n_outputs,
                       p->n_state);
    p->n_out = n_outputs - p->n_state;
    if ((*body)->n_inputs != p->n_state + p->n_in || (*body)->n_outputs != n_outputs)
        return gl_fail(GL_ERR_INPUT, "%s: body has %zu inputs and %zu outputs, expected %zu and "
                       "%zu", where, (*body)->n_inputs, (*body)->n_outputs,
                       p->n_state + p->n_in, n_outputs);
    return GL_OK;
}

/* Axes and directions of a Scan-9+ node; input axes are normalized when ranks are known
 * (rank[j] < 0: unknown, left raw). */
static gl_status scan_plan_v9(const gl_node *n, const char *where, const int *ranks,
                              scan_plan *p)
{
    int64_t *ia = NULL, *id = NULL, *oa = NULL, *od = NULL;
    gl_status st = scan_ints(n, "scan_input_axes", p->n_in, 0, -GL_MAX_RANK, GL_MAX_RANK, where,
                             &ia);
    if (st == GL_OK)
        st = scan_ints(n, "scan_input_directions", p->n_in, 0, 0, 1, where, &id);
    if (st == GL_OK)
        st = scan_ints(n, "scan_output_axes", p->n_out, 0, -GL_MAX_RANK, GL_MAX_RANK, where, &oa);
    if (st == GL_OK)
        st = scan_ints(n, "scan_output_directions", p->n_out, 0, 0, 1, where, &od);
    p->in_axis = gl_xcalloc(p->n_in + 1, sizeof(int));
    p->in_rev = gl_xcalloc(p->n_in + 1, sizeof(bool));
    p->out_rev = gl_xcalloc(p->n_out + 1, sizeof(bool));
    p->out_axis = oa;
    oa = NULL;
    for (size_t j = 0; st == GL_OK && j < p->n_in; j++) {
        p->in_rev[j] = id[j] != 0;
        p->in_axis[j] = (int)ia[j];
        if (ranks[j] >= 0 && !gl_axis_normalize(ia[j], ranks[j], false, where,
                                                "scan_input_axes entry", &p->in_axis[j]))
            st = GL_ERR_INPUT;
    }
    for (size_t j = 0; st == GL_OK && j < p->n_out; j++)
        p->out_rev[j] = od[j] != 0;
    free(ia);
    free(id);
    free(oa);
    free(od);
    return st;
}

static gl_status scan_infer(gl_infer_ctx *c)
{
    bool v8 = c->opset < 9;
    const gl_graph *body;
    scan_plan p = {0};
    gl_status st = scan_counts(c->node, c->n_inputs, c->n_outputs, v8, c->where, &body, &p);
    if (st != GL_OK)
        return st;
    size_t first = v8 ? 1 : 0, x0 = first + p.n_state;
    int *ranks = gl_xcalloc(p.n_in, sizeof(int));
    for (size_t j = 0; j < p.n_in; j++) {
        const gl_type *t = gl_infer_input(c, x0 + j);
        ranks[j] = t ? t->shape.rank : -1;
    }
    if (v8) {
        p.in_axis = gl_xcalloc(p.n_in + 1, sizeof(int));
        p.out_axis = gl_xcalloc(p.n_out + 1, sizeof(int64_t));
        for (size_t j = 0; j < p.n_in; j++)
            p.in_axis[j] = 1;
        for (size_t j = 0; j < p.n_out; j++)
            p.out_axis[j] = 1;
    } else {
        st = scan_plan_v9(c->node, c->where, ranks, &p);
    }
    free(ranks);
    if (st != GL_OK || !c->infer_body) {
        scan_plan_free(&p);
        return st;
    }
    size_t n_in = p.n_state + p.n_in, n_out = p.n_state + p.n_out;
    gl_type *in = types_new(n_in), *out = types_new(n_out), tmp = {0};
    gl_shape_init_unknown(&tmp.shape);
    for (size_t i = 0; i < p.n_state; i++) {
        if (v8)
            type_drop_axis(&in[i], gl_infer_input(c, first + i), 0);
        else
            type_from_input(&in[i], c, first + i);
    }
    const gl_dim *len = NULL, *batch = NULL;
    for (size_t j = 0; j < p.n_in; j++) {
        const gl_type *t = gl_infer_input(c, x0 + j);
        if (v8) {
            type_drop_axis(&tmp, t, 0);
            type_drop_axis(&in[p.n_state + j], &tmp, 0);
            if (j == 0 && t && t->shape.rank >= 2)
                batch = &t->shape.dims[0];
        } else {
            type_drop_axis(&in[p.n_state + j], t, p.in_axis[j]);
        }
        if (j == 0 && t && t->shape.rank > p.in_axis[j])
            len = &t->shape.dims[p.in_axis[j]];
    }
    st = c->infer_body(c, body, in, n_in, out, n_out);
    for (size_t i = 0; st == GL_OK && i < p.n_state; i++) {
        if (v8) {
            type_insert_axis(&tmp, &out[i], 0, batch);
            merge_types(&c->out_types[i], c->in_types[first + i] ? c->in_types[first + i] : &tmp,
                        &tmp);
        } else {
            merge_types(&c->out_types[i], &in[i], &out[i]);
        }
    }
    for (size_t j = 0; st == GL_OK && j < p.n_out; j++) {
        if (v8) {
            type_insert_axis(&tmp, &out[p.n_state + j], 0, len);
            type_insert_axis(&c->out_types[p.n_state + j], &tmp, 0, batch);
        } else {
            type_insert_axis(&c->out_types[p.n_state + j], &out[p.n_state + j], p.out_axis[j], len);
        }
    }
    gl_type_free(&tmp);
    types_free(in, n_in);
    types_free(out, n_out);
    scan_plan_free(&p);
    return st;
}

/* One scan over `len` positions running `steps` iterations (steps <= len): results[]
 * receives the final states then the scan outputs (positions past `steps` stay zero). */
static gl_status scan_core(gl_kernel_ctx *k, const gl_graph *body, const scan_plan *p,
                           const gl_tensor *const *states, const gl_tensor *const *xs,
                           int64_t len, int64_t steps, gl_tensor **results)
{
    size_t n_in = p->n_state + p->n_in, n_out = p->n_state + p->n_out;
    const gl_tensor **in = gl_xcalloc(n_in, sizeof(*in));
    gl_tensor **out = gl_xcalloc(n_out, sizeof(*out));
    gl_tensor **cur = gl_xcalloc(p->n_state + 1, sizeof(*cur));
    gl_tensor **slices = gl_xcalloc(p->n_in + 1, sizeof(*slices));
    gl_status st = GL_OK;
    for (size_t i = 0; i < p->n_state; i++)
        cur[i] = gl_tensor_share(states[i]);
    for (int64_t t = 0; st == GL_OK && t < steps; t++) {
        st = gl_limits_iteration(k->where);
        for (size_t j = 0; st == GL_OK && j < p->n_in; j++) {
            slices[j] = take_slice(xs[j], p->in_axis[j], p->in_rev[j] ? steps - 1 - t : t);
            if (!slices[j])
                st = GL_ERR_NOMEM;
        }
        for (size_t i = 0; i < p->n_state; i++)
            in[i] = cur[i];
        for (size_t j = 0; j < p->n_in; j++)
            in[p->n_state + j] = slices[j];
        if (st == GL_OK)
            st = k->run_body(k, body, in, n_in, out, n_out);
        free_tensors(slices, p->n_in);
        for (size_t i = 0; st == GL_OK && i < n_out; i++)
            if (!out[i])
                st = gl_fail(GL_ERR_INTERNAL, "%s: body output %zu missing", k->where, i);
        for (size_t i = 0; st == GL_OK && i < p->n_state; i++) {
            gl_tensor_free(cur[i]);
            cur[i] = out[i];
            out[i] = NULL;
        }
        for (size_t j = 0; st == GL_OK && j < p->n_out; j++) {
            const gl_tensor *piece = out[p->n_state + j];
            gl_tensor **acc = &results[p->n_state + j];
            int ax;
            if (!*acc) {
                if (!gl_axis_normalize(p->out_axis[j], piece->rank, true, k->where,
                                       "scan_output_axes entry", &ax)) {
                    st = GL_ERR_INPUT;
                    break;
                }
                char what[300];
                out_label(k, p->n_state + j, what, sizeof(what));
                if (!(*acc = new_with_axis(k->where, what, piece->dtype, piece->dims,
                                           piece->rank, ax, len))) {
                    st = GL_ERR_NOMEM;
                    break;
                }
            }
            ax = (int)(p->out_axis[j] < 0 ? p->out_axis[j] + (*acc)->rank : p->out_axis[j]);
            char what[64];
            snprintf(what, sizeof(what), "scan output %zu", j);
            st = put_slice(*acc, ax, p->out_rev[j] ? steps - 1 - t : t, piece, k->where, what);
        }
        free_tensors(out, n_out);
    }
    for (size_t j = 0; st == GL_OK && j < p->n_out; j++) {
        gl_tensor **acc = &results[p->n_state + j];
        if (!*acc) {
            const gl_value *decl = body->outputs[p->n_state + j];
            int rank = decl && decl->type.kind == GL_TYPE_TENSOR ? decl->type.shape.rank : 0;
            int64_t ax = p->out_axis[j] < 0 ? p->out_axis[j] + rank + 1 : p->out_axis[j];
            if (!(*acc = empty_from_declared(decl, ax < 0 ? 0 : (int)ax, len)))
                st = GL_ERR_NOMEM;
        }
    }
    for (size_t i = 0; i < p->n_state; i++) {
        if (st == GL_OK)
            results[i] = cur[i];
        else
            gl_tensor_free(cur[i]);
    }
    free(cur);
    free(slices);
    free(out);
    free(in);
    return st;
}

/* The common length of the scan inputs along their axes. */
static gl_status scan_length(const gl_kernel_ctx *k, const gl_tensor *const *xs, const int *axes,
                             size_t n, int64_t *len)
{
    for (size_t j = 0; j < n; j++) {
        if (!xs[j])
            return gl_fail(GL_ERR_INPUT, "%s: scan input %zu is missing", k->where, j);
        if (axes[j] < 0 || axes[j] >= xs[j]->rank)
            return gl_fail(GL_ERR_INPUT, "%s: scan input %zu has rank %d, no axis %d", k->where,
                           j, xs[j]->rank, axes[j]);
        int64_t l = xs[j]->dims[axes[j]];
        if (j == 0)
            *len = l;
        else if (l != *len)
            return gl_fail(GL_ERR_INPUT, "%s: scan input %zu has %lld steps, input 0 has %lld",
                           k->where, j, (long long)l, (long long)*len);
    }
    return GL_OK;
}

static gl_status scan9_kernel(gl_kernel_ctx *k, const gl_graph *body, scan_plan *p)
{
    const gl_tensor *const *states = k->in, *const *xs = k->in + p->n_state;
    for (size_t i = 0; i < p->n_state; i++)
        if (!states[i])
            return gl_fail(GL_ERR_INPUT, "%s: state input %zu is missing", k->where, i);
    for (size_t j = 0; j < p->n_in; j++)
        if (!xs[j])
            return gl_fail(GL_ERR_INPUT, "%s: scan input %zu is missing", k->where, j);
    int *ranks = gl_xcalloc(p->n_in, sizeof(int));
    for (size_t j = 0; j < p->n_in; j++)
        ranks[j] = xs[j]->rank;
    int64_t len = 0;
    gl_status st = scan_plan_v9(k->node, k->where, ranks, p);
    free(ranks);
    if (st == GL_OK)
        st = scan_length(k, xs, p->in_axis, p->n_in, &len);
    if (st != GL_OK)
        return st;
    gl_tensor **results = gl_xcalloc(k->n_outputs + 1, sizeof(*results));
    st = scan_core(k, body, p, states, xs, len, len, results);
    if (st == GL_OK)
        emit_outputs(k, results, k->n_outputs);
    free_tensors(results, k->n_outputs);
    free(results);
    return st;
}

/* Scan-8: per batch entry, the slices at batch b run as one Scan-9 style scan. */
static gl_status scan8_batch(gl_kernel_ctx *k, const gl_graph *body, const scan_plan *p,
                             const int64_t *lens, int64_t len, int64_t b, gl_tensor **finals)
{
    const gl_tensor *const *states = k->in + 1, *const *xs = k->in + 1 + p->n_state;
    size_t n_out = p->n_state + p->n_out;
    gl_tensor **sl = gl_xcalloc(p->n_state + p->n_in + 1, sizeof(*sl));
    gl_tensor **res = gl_xcalloc(n_out + 1, sizeof(*res));
    gl_status st = GL_OK;
    for (size_t i = 0; st == GL_OK && i < p->n_state + p->n_in; i++) {
        const gl_tensor *src = i < p->n_state ? states[i] : xs[i - p->n_state];
        if (!(sl[i] = take_slice(src, 0, b)))
            st = GL_ERR_NOMEM;
    }
    int64_t steps = lens ? lens[b] : len;
    if (st == GL_OK)
        st = scan_core(k, body, p, (const gl_tensor *const *)sl,
                       (const gl_tensor *const *)sl + p->n_state, len, steps, res);
    int64_t batch = xs[0]->dims[0];
    for (size_t i = 0; st == GL_OK && i < n_out; i++) {
        if (!finals[i] &&
            !(finals[i] = new_with_axis(k->where, NULL, res[i]->dtype, res[i]->dims,
                                        res[i]->rank, 0, batch))) {
            st = GL_ERR_NOMEM;
            break;
        }
        char what[64];
        snprintf(what, sizeof(what), "output %zu", i);
        st = put_slice(finals[i], 0, b, res[i], k->where, what);
    }
    free_tensors(sl, p->n_state + p->n_in);
    free_tensors(res, n_out);
    free(sl);
    free(res);
    return st;
}

static gl_status scan8_kernel(gl_kernel_ctx *k, const gl_graph *body, scan_plan *p)
{
    const gl_tensor *const *states = k->in + 1, *const *xs = k->in + 1 + p->n_state;
    int64_t *dirs = NULL, *lens = NULL, len = 0;
    size_t n_lens = 0;
    gl_status st = scan_ints(k->node, "directions", p->n_in, 0, 0, 1, k->where, &dirs);
    p->in_axis = gl_xcalloc(p->n_in + 1, sizeof(int));
    p->in_rev = gl_xcalloc(p->n_in + 1, sizeof(bool));
    p->out_axis = gl_xcalloc(p->n_out + 1, sizeof(int64_t));
    p->out_rev = gl_xcalloc(p->n_out + 1, sizeof(bool));
    int *seq_axes = gl_xcalloc(p->n_in, sizeof(int)); /* axis 1 before slicing the batch */
    for (size_t j = 0; j < p->n_in; j++) {
        p->in_rev[j] = st == GL_OK && dirs[j];
        seq_axes[j] = 1;
    }
    if (st == GL_OK)
        st = scan_length(k, xs, seq_axes, p->n_in, &len);
    free(seq_axes);
    int64_t batch = st == GL_OK ? xs[0]->dims[0] : 0;
    for (size_t i = 0; st == GL_OK && i < p->n_state + p->n_in; i++) {
        const gl_tensor *t = i < p->n_state ? states[i] : xs[i - p->n_state];
        if (!t || t->rank < 1 || t->dims[0] != batch)
            st = gl_fail(GL_ERR_INPUT, "%s: input %zu must have the batch size %lld as its first "
                         "dimension", k->where, i + 1, (long long)batch);
    }
    if (st == GL_OK && k->in[0]) {
        if (!gl_tensor_ints(k->in[0], k->where, "sequence_lens", &lens, &n_lens))
            st = GL_ERR_INPUT;
        else if ((int64_t)n_lens != batch)
            st = gl_fail(GL_ERR_INPUT, "%s: sequence_lens has %zu entries for batch %lld",
                         k->where, n_lens, (long long)batch);
        for (size_t b = 0; st == GL_OK && b < n_lens; b++)
            if (lens[b] < 0 || lens[b] > len)
                st = gl_fail(GL_ERR_INPUT, "%s: sequence_lens[%zu] = %lld is outside [0, %lld]",
                             k->where, b, (long long)lens[b], (long long)len);
    }
    gl_tensor **finals = gl_xcalloc(k->n_outputs + 1, sizeof(*finals));
    for (int64_t b = 0; st == GL_OK && b < batch; b++)
        st = scan8_batch(k, body, p, lens, len, b, finals);
    for (size_t i = 0; st == GL_OK && batch == 0 && i < k->n_outputs; i++) {
        if (i < p->n_state)
            finals[i] = gl_tensor_share(states[i]);
        else if (!(finals[i] = empty_from_declared(body->outputs[i], 0, len)))
            st = GL_ERR_NOMEM;
        if (st == GL_OK && i >= p->n_state) {
            gl_tensor *t = new_with_axis(NULL, NULL, finals[i]->dtype, finals[i]->dims,
                                         finals[i]->rank, 0, 0);
            gl_tensor_free(finals[i]);
            if (!(finals[i] = t))
                st = GL_ERR_NOMEM;
        }
    }
    if (st == GL_OK)
        emit_outputs(k, finals, k->n_outputs);
    free_tensors(finals, k->n_outputs);
    free(finals);
    free(dirs);
    free(lens);
    return st;
}

static gl_status scan_kernel(gl_kernel_ctx *k)
{
    bool v8 = k->opset < 9;
    const gl_graph *body;
    scan_plan p = {0};
    gl_status st = need_executor(k);
    if (st == GL_OK)
        st = scan_counts(k->node, k->n_inputs, k->n_outputs, v8, k->where, &body, &p);
    if (st == GL_OK)
        st = v8 ? scan8_kernel(k, body, &p) : scan9_kernel(k, body, &p);
    scan_plan_free(&p);
    return st;
}

/* ---- RNN, GRU, LSTM -------------------------------------------------------------------------
 * One engine: per direction, per time step, per batch row, a cell update. Computation is in
 * double over float16/float/double inputs; sequence_lens limits each row (outputs past a
 * row's length stay zero; a reverse pass starts at the row's last valid step). */

typedef enum act_kind {
    ACT_RELU, ACT_TANH, ACT_SIGMOID, ACT_AFFINE, ACT_LEAKY_RELU, ACT_THRESHOLDED_RELU,
    ACT_SCALED_TANH, ACT_HARD_SIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS,
} act_kind;

/* Activation names and which of activation_alpha/_beta each consumes (with the defaults of
 * the ONNX operator of the same name). */
static const struct act_info {
    const char *name;
    act_kind kind;
    bool takes_alpha, takes_beta;
    double alpha, beta;
} act_table[] = {
    {"Relu", ACT_RELU, false, false, 0, 0},
    {"Tanh", ACT_TANH, false, false, 0, 0},
    {"Sigmoid", ACT_SIGMOID, false, false, 0, 0},
    {"Affine", ACT_AFFINE, true, true, 1.0, 0.0},
    {"LeakyRelu", ACT_LEAKY_RELU, true, false, 0.01, 0},
    {"ThresholdedRelu", ACT_THRESHOLDED_RELU, true, false, 1.0, 0},
    {"ScaledTanh", ACT_SCALED_TANH, true, true, 1.0, 1.0},
    {"HardSigmoid", ACT_HARD_SIGMOID, true, true, 0.2, 0.5},
    {"Elu", ACT_ELU, true, false, 1.0, 0},
    {"Softsign", ACT_SOFTSIGN, false, false, 0, 0},
    {"Softplus", ACT_SOFTPLUS, false, false, 0, 0},
};

typedef struct rnn_act {
    act_kind kind;
    double alpha, beta;
} rnn_act;

static double act_apply(const rnn_act *a, double x)
{
    switch (a->kind) {
    case ACT_RELU: return x > 0 ? x : 0;
    case ACT_TANH: return tanh(x);
    case ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case ACT_AFFINE: return a->alpha * x + a->beta;
    case ACT_LEAKY_RELU: return x >= 0 ? x : a->alpha * x;
    case ACT_THRESHOLDED_RELU: return x >= a->alpha ? x : 0;
    case ACT_SCALED_TANH: return a->alpha * tanh(a->beta * x);
    case ACT_HARD_SIGMOID: return fmin(fmax(a->alpha * x + a->beta, 0), 1);
    case ACT_ELU: return x >= 0 ? x : a->alpha * (exp(x) - 1);
    case ACT_SOFTSIGN: return x / (1 + fabs(x));
    case ACT_SOFTPLUS: return x > 30 ? x : log1p(exp(x));
    }
    return x;
}

typedef enum cell_kind { CELL_RNN, CELL_GRU, CELL_LSTM } cell_kind;

static const struct cell_info {
    cell_kind kind;
    int gates;        /* blocks of hidden_size rows in W and R */
    int n_acts;       /* activations per direction */
    act_kind defaults[3];
} cell_rnn = {CELL_RNN, 1, 1, {ACT_TANH}},
  cell_gru = {CELL_GRU, 3, 2, {ACT_SIGMOID, ACT_TANH}},
  cell_lstm = {CELL_LSTM, 4, 3, {ACT_SIGMOID, ACT_TANH, ACT_TANH}};

typedef struct cell_info cell_info;

typedef struct rnn_cfg {
    const cell_info *cell;
    int dirs;          /* 1 or 2 */
    bool reverse;      /* direction "reverse" (the only direction) */
    int layout;        /* 0: [seq, batch, ...]; 1: [batch, seq, ...] */
    int64_t hidden;    /* hidden_size attribute, -1 when absent */
    double clip;       /* INFINITY: no clipping */
    bool linear_before_reset, input_forget;
    rnn_act acts[2][3];
} rnn_cfg;

static gl_status rnn_activations(const gl_node *n, const char *where, rnn_cfg *cfg)
{
    const gl_attr *names = gl_node_attr_typed(n, "activations", GL_ATTR_STRINGS);
    size_t n_alpha, n_beta, ia = 0, ib = 0, per = (size_t)cfg->cell->n_acts;
    const float *alpha = gl_attr_floats(n, "activation_alpha", &n_alpha);
    const float *beta = gl_attr_floats(n, "activation_beta", &n_beta);
    size_t given = names ? names->n : 0;
    if (given && given != per * (size_t)cfg->dirs && given != per)
        return gl_fail(GL_ERR_INPUT, "%s: activations lists %zu functions, expected %zu", where,
                       given, per * (size_t)cfg->dirs);
    for (size_t i = 0; i < per * (size_t)cfg->dirs; i++) {
        rnn_act *a = &cfg->acts[i / per][i % per];
        a->kind = cfg->cell->defaults[i % per];
        if (!given)
            continue;
        const gl_bytes *s = &names->strings[i % given];
        const struct act_info *info = NULL;
        for (size_t j = 0; j < GL_ARRAY_LEN(act_table); j++)
            if (strlen(act_table[j].name) == s->len &&
                strncasecmp(act_table[j].name, (const char *)s->data, s->len) == 0)
                info = &act_table[j];
        if (!info)
            return gl_fail(GL_ERR_INPUT, "%s: unknown activation '%.*s'", where, (int)s->len,
                           (const char *)s->data);
        a->kind = info->kind;
        a->alpha = info->takes_alpha && ia < n_alpha ? alpha[ia++] : info->alpha;
        a->beta = info->takes_beta && ib < n_beta ? beta[ib++] : info->beta;
    }
    return GL_OK;
}

static gl_status rnn_config(const gl_node *n, const cell_info *cell, const char *where,
                            rnn_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->cell = cell;
    const char *dir = gl_node_attr_string(n, "direction", "forward");
    cfg->dirs = 1;
    if (strcmp(dir, "bidirectional") == 0)
        cfg->dirs = 2;
    else if (strcmp(dir, "reverse") == 0)
        cfg->reverse = true;
    else if (strcmp(dir, "forward") != 0 && strcmp(dir, "foward") != 0) /* GRU-1's default */
        return gl_fail(GL_ERR_INPUT, "%s: direction '%s' is not forward, reverse or "
                       "bidirectional", where, dir);
    cfg->layout = (int)gl_node_attr_int(n, "layout", 0);
    if (cfg->layout != 0 && cfg->layout != 1)
        return gl_fail(GL_ERR_INPUT, "%s: layout must be 0 or 1", where);
    cfg->hidden = gl_node_attr_int(n, "hidden_size", -1);
    if (gl_node_attr_typed(n, "hidden_size", GL_ATTR_INT) && cfg->hidden <= 0)
        return gl_fail(GL_ERR_INPUT, "%s: hidden_size must be positive", where);
    const gl_attr *clip = gl_node_attr_typed(n, "clip", GL_ATTR_FLOAT);
    cfg->clip = clip ? clip->f : INFINITY;
    if (clip && !(cfg->clip > 0))
        return gl_fail(GL_ERR_INPUT, "%s: clip must be positive", where);
    cfg->linear_before_reset = gl_node_attr_int(n, "linear_before_reset", 0) != 0;
    cfg->input_forget = gl_node_attr_int(n, "input_forget", 0) != 0;
    return rnn_activations(n, where, cfg);
}

/* ---- RNN shape function ---- */

static void dim_from(gl_dim *d, const gl_type *t, int axis)
{
    if (t && t->shape.rank > axis)
        gl_dim_copy(d, &t->shape.dims[axis]);
}

static gl_status rnn_infer(gl_infer_ctx *c, const cell_info *cell)
{
    rnn_cfg cfg;
    gl_status st = rnn_config(c->node, cell, c->where, &cfg);
    if (st != GL_OK)
        return st;
    const gl_type *x = gl_infer_input(c, 0), *w = gl_infer_input(c, 1), *r = gl_infer_input(c, 2);
    for (size_t i = 0; i < 3; i++) {
        const gl_type *t = gl_infer_input(c, i);
        if (t && t->shape.rank != GL_RANK_UNKNOWN && t->shape.rank != 3)
            return gl_fail(GL_ERR_INPUT, "%s: input %zu has rank %d, expected 3", c->where, i,
                           t->shape.rank);
    }
    if (w && w->shape.rank == 3 && w->shape.dims[0].value >= 0 &&
        w->shape.dims[0].value != cfg.dirs)
        return gl_fail(GL_ERR_INPUT, "%s: W's first dimension is %lld, expected %d directions",
                       c->where, (long long)w->shape.dims[0].value, cfg.dirs);
    gl_dim hidden = {GL_DIM_UNKNOWN, NULL};
    if (cfg.hidden > 0)
        hidden.value = cfg.hidden;
    else
        dim_from(&hidden, r && r->shape.rank == 3 ? r : NULL, 2);
    if (r && r->shape.rank == 3 && hidden.value >= 0 && r->shape.dims[2].value >= 0 &&
        r->shape.dims[2].value != hidden.value)
        return gl_fail(GL_ERR_INPUT, "%s: R's last dimension is %lld, hidden_size %lld", c->where,
                       (long long)r->shape.dims[2].value, (long long)hidden.value);
    gl_dtype dt = x ? x->dtype : w ? w->dtype : GL_DT_UNDEFINED;
    bool known = x && x->shape.rank == 3;
    int seq_ax = cfg.layout ? 1 : 0, batch_ax = cfg.layout ? 0 : 1;
    size_t n_states = cell->kind == CELL_LSTM ? 2 : 1;
    for (size_t o = 0; o < c->n_outputs && o <= n_states; o++) {
        if (!c->node->outputs[o] || dt == GL_DT_UNDEFINED)
            continue;
        int rank = o == 0 ? 4 : 3;
        gl_infer_set_rank(c, o, dt, known ? rank : GL_RANK_UNKNOWN);
        if (!known)
            continue;
        gl_dim *d = c->out_types[o].shape.dims;
        /* Y: [seq, dirs, batch, H] or [batch, seq, dirs, H]; Y_h/Y_c: [dirs, batch, H] or
         * [batch, dirs, H]. */
        int off = o == 0 ? 1 : 0;
        if (o == 0)
            dim_from(&d[cfg.layout ? 1 : 0], x, seq_ax);
        d[cfg.layout ? off + 1 : off].value = cfg.dirs;
        dim_from(&d[cfg.layout ? 0 : off + 1], x, batch_ax);
        gl_dim_copy(&d[rank - 1], &hidden);
    }
    free(hidden.sym);
    return GL_OK;
}

static gl_status rnn_infer_rnn(gl_infer_ctx *c) { return rnn_infer(c, &cell_rnn); }
static gl_status gru_infer(gl_infer_ctx *c) { return rnn_infer(c, &cell_gru); }
static gl_status lstm_infer(gl_infer_ctx *c) { return rnn_infer(c, &cell_lstm); }

/* ---- RNN kernels ---- */

typedef struct rnn_run {
    rnn_cfg cfg;
    int64_t seq, batch, in, hid;   /* sizes */
    double *x, *w, *r, *b, *h0, *c0, *p; /* inputs as double; b/h0/c0/p NULL when omitted */
    int64_t *lens;                 /* per batch row, NULL: all seq */
    gl_tensor *y, *yh, *yc;        /* outputs (NULL when omitted) */
} rnn_run;

/* Optional input i must have exactly `dims` (rank) and a float dtype. */
static gl_status rnn_check(const gl_kernel_ctx *k, size_t i, const char *what, int rank,
                           const int64_t *dims)
{
    const gl_tensor *t = gl_opt_input(k, i);
    if (!t)
        return GL_OK;
    bool ok = t->rank == rank && (i == 4 ? gl_dtype_is_int(t->dtype) : t->dtype == k->in[0]->dtype);
    for (int d = 0; ok && d < rank; d++)
        ok = t->dims[d] == dims[d];
    if (ok)
        return GL_OK;
    char want[128] = "";
    for (int d = 0, len = 0; d < rank; d++)
        len += snprintf(want + len, sizeof(want) - (size_t)len, d ? ",%lld" : "%lld",
                        (long long)dims[d]);
    return gl_fail(GL_ERR_INPUT, "%s: input '%s' must be %s[%s]", k->where, what,
                   i == 4 ? "int" : gl_dtype_name(k->in[0]->dtype), want);
}

static gl_status rnn_inputs(gl_kernel_ctx *k, rnn_run *s)
{
    const gl_tensor *x = gl_opt_input(k, 0), *w = gl_opt_input(k, 1), *r = gl_opt_input(k, 2);
    const rnn_cfg *cfg = &s->cfg;
    int64_t gates = cfg->cell->gates;
    if (!x || !w || !r)
        return gl_fail(GL_ERR_INPUT, "%s: X, W and R are required", k->where);
    if (!gl_dtype_is_float(x->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: X must be a float tensor, not %s", k->where,
                       gl_dtype_name(x->dtype));
    if (x->rank != 3 || r->rank != 3)
        return gl_fail(GL_ERR_INPUT, "%s: X and R must have rank 3", k->where);
    s->seq = x->dims[cfg->layout ? 1 : 0];
    s->batch = x->dims[cfg->layout ? 0 : 1];
    s->in = x->dims[2];
    s->hid = r->dims[2];
    if (cfg->hidden > 0 && cfg->hidden != s->hid)
        return gl_fail(GL_ERR_INPUT, "%s: hidden_size %lld but R's last dimension is %lld",
                       k->where, (long long)cfg->hidden, (long long)s->hid);
    int64_t d = cfg->dirs, gh = gates * s->hid;
    int64_t w_dims[] = {d, gh, s->in}, r_dims[] = {d, gh, s->hid}, b_dims[] = {d, 2 * gh},
            l_dims[] = {s->batch}, p_dims[] = {d, 3 * s->hid};
    int64_t h_dims[] = {d, s->batch, s->hid};
    if (cfg->layout)
        h_dims[0] = s->batch, h_dims[1] = d;
    gl_status st = rnn_check(k, 1, "W", 3, w_dims);
    if (st == GL_OK)
        st = rnn_check(k, 2, "R", 3, r_dims);
    if (st == GL_OK)
        st = rnn_check(k, 3, "B", 2, b_dims);
    if (st == GL_OK)
        st = rnn_check(k, 4, "sequence_lens", 1, l_dims);
    if (st == GL_OK)
        st = rnn_check(k, 5, "initial_h", 3, h_dims);
    if (st == GL_OK && cfg->cell->kind == CELL_LSTM)
        st = rnn_check(k, 6, "initial_c", 3, h_dims);
    if (st == GL_OK && cfg->cell->kind == CELL_LSTM)
        st = rnn_check(k, 7, "P", 2, p_dims);
    if (st != GL_OK)
        return st;
    size_t nl;
    if (k->n_inputs > 4 && k->in[4]) {
        if (!gl_tensor_ints(k->in[4], k->where, "sequence_lens", &s->lens, &nl))
            return GL_ERR_INPUT;
        for (int64_t b = 0; b < s->batch; b++)
            if (s->lens[b] < 0 || s->lens[b] > s->seq)
                return gl_fail(GL_ERR_INPUT, "%s: sequence_lens[%lld] = %lld is outside [0, %lld]",
                               k->where, (long long)b, (long long)s->lens[b], (long long)s->seq);
    }
    struct { size_t i; double **dst; } conv[] = {
        {0, &s->x}, {1, &s->w}, {2, &s->r}, {3, &s->b}, {5, &s->h0}, {6, &s->c0}, {7, &s->p},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(conv); i++) {
        if (conv[i].i >= k->n_inputs || !k->in[conv[i].i])
            continue;
        if (conv[i].i >= 6 && cfg->cell->kind != CELL_LSTM)
            continue;
        if (!(*conv[i].dst = gl_tensor_to_f64(k->in[conv[i].i], k->where)))
            return GL_ERR_NOMEM;
    }
    return GL_OK;
}

static gl_status rnn_outputs(gl_kernel_ctx *k, rnn_run *s)
{
    gl_dtype dt = k->in[0]->dtype;
    int64_t d = s->cfg.dirs;
    int64_t y_dims[] = {s->seq, d, s->batch, s->hid}, h_dims[] = {d, s->batch, s->hid};
    if (s->cfg.layout) {
        int64_t y1[] = {s->batch, s->seq, d, s->hid}, h1[] = {s->batch, d, s->hid};
        memcpy(y_dims, y1, sizeof(y1));
        memcpy(h_dims, h1, sizeof(h1));
    }
    gl_tensor **slots[] = {&s->y, &s->yh, &s->yc};
    size_t n = s->cfg.cell->kind == CELL_LSTM ? 3 : 2;
    for (size_t o = 0; o < n && o < k->n_outputs; o++) {
        if (!k->node->outputs[o])
            continue;
        if (!(*slots[o] = gl_out_new(k, o, dt, o == 0 ? 4 : 3, o == 0 ? y_dims : h_dims)))
            return GL_ERR_NOMEM;
    }
    return GL_OK;
}

static double clip_to(double v, double c) { return v > c ? c : v < -c ? -c : v; }

/* out[g] = bias[g] + sum_k m[g][k] * v[k] for rows g in [0, rows). */
static void matvec(double *out, const double *m, const double *v, int64_t rows, int64_t cols,
                   const double *bias)
{
    for (int64_t g = 0; g < rows; g++) {
        const double *row = m + g * cols;
        double acc = bias ? bias[g] : 0;
        for (int64_t j = 0; j < cols; j++)
            acc += row[j] * v[j];
        out[g] = acc;
    }
}

typedef struct cell_buf {
    double *gx, *gh, *tmp; /* gates from x, gates from h, scratch (gates*hid each) */
} cell_buf;

/* One step of one batch row in direction d: h (and c) are updated in place. */
static void cell_step(const rnn_run *s, int d, const double *x, double *h, double *c,
                      cell_buf *buf)
{
    const rnn_cfg *cfg = &s->cfg;
    int64_t H = s->hid, G = cfg->cell->gates, GH = G * H;
    const double *w = s->w + d * GH * s->in, *r = s->r + d * GH * H;
    const double *wb = s->b ? s->b + d * 2 * GH : NULL, *rb = s->b ? s->b + d * 2 * GH + GH : NULL;
    const rnn_act *f = &cfg->acts[d][0], *g = &cfg->acts[d][1], *ha = &cfg->acts[d][2];
    double clip = cfg->clip;
    matvec(buf->gx, w, x, GH, s->in, wb);
    switch (cfg->cell->kind) {
    case CELL_RNN:
        matvec(buf->gh, r, h, H, H, rb);
        for (int64_t j = 0; j < H; j++)
            h[j] = act_apply(f, clip_to(buf->gx[j] + buf->gh[j], clip));
        break;
    case CELL_GRU: {
        /* gates z, r, h */
        bool lbr = cfg->linear_before_reset;
        matvec(buf->gh, r, h, lbr ? 3 * H : 2 * H, H, rb);
        double *z = buf->tmp, *rt = buf->tmp + H, *rh = buf->tmp + 2 * H;
        for (int64_t j = 0; j < H; j++) {
            z[j] = act_apply(f, clip_to(buf->gx[j] + buf->gh[j], clip));
            rt[j] = act_apply(f, clip_to(buf->gx[H + j] + buf->gh[H + j], clip));
        }
        if (!lbr) {
            for (int64_t j = 0; j < H; j++)
                rh[j] = rt[j] * h[j];
            matvec(buf->gh + 2 * H, r + 2 * H * H, rh, H, H, rb ? rb + 2 * H : NULL);
        }
        for (int64_t j = 0; j < H; j++) {
            double pre = lbr ? buf->gx[2 * H + j] + rt[j] * buf->gh[2 * H + j]
                             : buf->gx[2 * H + j] + buf->gh[2 * H + j];
            double hh = act_apply(g, clip_to(pre, clip));
            h[j] = (1 - z[j]) * hh + z[j] * h[j];
        }
        break;
    }
    case CELL_LSTM: {
        /* gates i, o, f, c; peepholes P[i, o, f] */
        matvec(buf->gh, r, h, GH, H, rb);
        const double *p = s->p ? s->p + d * 3 * H : NULL;
        for (int64_t j = 0; j < H; j++) {
            double *gate = buf->gx;
            const double *hg = buf->gh;
            double it = act_apply(f, clip_to(gate[j] + hg[j] + (p ? p[j] * c[j] : 0), clip));
            double ft = cfg->input_forget
                            ? 1 - it
                            : act_apply(f, clip_to(gate[2 * H + j] + hg[2 * H + j] +
                                                       (p ? p[2 * H + j] * c[j] : 0), clip));
            double ct = act_apply(g, clip_to(gate[3 * H + j] + hg[3 * H + j], clip));
            double cn = ft * c[j] + it * ct;
            double ot = act_apply(f, clip_to(gate[H + j] + hg[H + j] + (p ? p[H + j] * cn : 0),
                                             clip));
            c[j] = cn;
            buf->tmp[j] = ot * act_apply(ha, cn);
        }
        memcpy(h, buf->tmp, (size_t)H * sizeof(double));
        break;
    }
    }
}

/* Element offset of [t, d, b, 0] in Y and of [d, b, 0] in Y_h/Y_c/initial states. */
static int64_t y_off(const rnn_run *s, int64_t t, int64_t d, int64_t b)
{
    int64_t nd = s->cfg.dirs;
    return (s->cfg.layout ? (b * s->seq + t) * nd + d : (t * nd + d) * s->batch + b) * s->hid;
}

static int64_t h_off(const rnn_run *s, int64_t d, int64_t b)
{
    return (s->cfg.layout ? b * s->cfg.dirs + d : d * s->batch + b) * s->hid;
}

static int64_t x_off(const rnn_run *s, int64_t t, int64_t b)
{
    return (s->cfg.layout ? b * s->seq + t : t * s->batch + b) * s->in;
}

static void store_row(gl_tensor *t, int64_t off, const double *v, int64_t n)
{
    if (!t || n == 0)
        return;
    if (t->dtype == GL_DT_FLOAT) {
        float *f = (float *)gl_tensor_make_writable(t) + off;
        for (int64_t i = 0; i < n; i++)
            f[i] = (float)v[i];
    } else {
        for (int64_t i = 0; i < n; i++)
            gl_elem_set_f64(t, off + i, v[i]);
    }
}

static gl_status rnn_direction(rnn_run *s, int d)
{
    int64_t H = s->hid, GH = s->cfg.cell->gates * H;
    bool reverse = d == 1 || s->cfg.reverse;
    double *h = calloc((size_t)(s->batch * H + 1), sizeof(double));
    double *c = calloc((size_t)(s->batch * H + 1), sizeof(double));
    double *scratch = malloc((size_t)(3 * GH + 1) * sizeof(double));
    if (!h || !c || !scratch) {
        free(h), free(c), free(scratch);
        return gl_fail(GL_ERR_NOMEM, "cannot allocate the recurrent state");
    }
    cell_buf buf = {scratch, scratch + GH, scratch + 2 * GH};
    for (int64_t b = 0; b < s->batch; b++) {
        if (s->h0)
            memcpy(h + b * H, s->h0 + h_off(s, d, b), (size_t)H * sizeof(double));
        if (s->c0)
            memcpy(c + b * H, s->c0 + h_off(s, d, b), (size_t)H * sizeof(double));
    }
    for (int64_t step = 0; step < s->seq; step++) {
        for (int64_t b = 0; b < s->batch; b++) {
            int64_t len = s->lens ? s->lens[b] : s->seq;
            if (step >= len)
                continue;
            int64_t t = reverse ? len - 1 - step : step;
            cell_step(s, d, s->x + x_off(s, t, b), h + b * H, c + b * H, &buf);
            store_row(s->y, y_off(s, t, d, b), h + b * H, H);
        }
    }
    for (int64_t b = 0; b < s->batch; b++) {
        store_row(s->yh, h_off(s, d, b), h + b * H, H);
        store_row(s->yc, h_off(s, d, b), c + b * H, H);
    }
    free(h), free(c), free(scratch);
    return GL_OK;
}

static gl_status rnn_kernel_common(gl_kernel_ctx *k, const cell_info *cell)
{
    rnn_run s = {0};
    gl_status st = rnn_config(k->node, cell, k->where, &s.cfg);
    if (st == GL_OK)
        st = rnn_inputs(k, &s);
    if (st == GL_OK)
        st = rnn_outputs(k, &s);
    for (int d = 0; st == GL_OK && d < s.cfg.dirs; d++)
        st = rnn_direction(&s, d);
    free(s.x), free(s.w), free(s.r), free(s.b), free(s.h0), free(s.c0), free(s.p);
    free(s.lens);
    return st;
}

static gl_status rnn_kernel(gl_kernel_ctx *k) { return rnn_kernel_common(k, &cell_rnn); }
static gl_status gru_kernel(gl_kernel_ctx *k) { return rnn_kernel_common(k, &cell_gru); }
static gl_status lstm_kernel(gl_kernel_ctx *k) { return rnn_kernel_common(k, &cell_lstm); }

/* ---- the table -------------------------------------------------------------------------------- */

static const gl_op_def control_ops[] = {
    {"", "GRU", 1, gru_infer, gru_kernel, 0},
    {"", "If", 1, if_infer, if_kernel, GL_OP_CONTROL_FLOW},
    {"", "LSTM", 1, lstm_infer, lstm_kernel, 0},
    {"", "Loop", 1, loop_infer, loop_kernel, GL_OP_CONTROL_FLOW},
    {"", "RNN", 1, rnn_infer_rnn, rnn_kernel, 0},
    {"", "Scan", 8, scan_infer, scan_kernel, GL_OP_CONTROL_FLOW},
    {"", "Scan", 9, scan_infer, scan_kernel, GL_OP_CONTROL_FLOW},
};

const gl_op_family gl_ops_control = {"control", control_ops, GL_ARRAY_LEN(control_ops)};

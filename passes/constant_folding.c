/* constant_folding.c — compute at optimization time what does not depend on the inputs.
 *
 * A node folds when every input it reads is a constant (an initializer that is not a
 * graph input with a default, unless the model freezes its inputs; omitted optional
 * inputs are fine), or when it is Shape or Size of a tensor whose shape is static. The
 * reference kernel computes its outputs (gl_eval_node), each output value becomes an
 * initializer under its own name (graph outputs keep theirs) and the node goes. Constant
 * nodes become initializers this way too.
 *
 * Nodes are visited in topological order, so a chain folds in one sweep. Folding data
 * can make shapes known further down (Shape -> Gather -> Concat -> Reshape -> Shape...):
 * after each sweep that folded something, shape inference runs again and another sweep
 * follows, until one folds nothing — the fixed point.
 *
 * Never folded: ops that draw random values or are marked not to fold, ops the registry
 * does not know or cannot run, calls of model-local functions, nodes holding subgraphs
 * that read non-constant outer values, and outputs larger than the max-bytes option (or
 * whose size is unknown before computing them). Each refusal is recorded once per node.
 *
 * Nor DequantizeLinear, ever (as ONNX Runtime): its output is a float copy of an int8
 * (or int32) constant, four times the bytes, and folding it hides the int8 path from
 * the QDQ fusions that look for DequantizeLinear -> Conv/MatMul/Gemm. A Transpose, or a
 * Reshape that only moves dims of 1, after the DequantizeLinear of a constant folds
 * *through* it instead: DQ(w_q) -> Transpose becomes DQ(transposed w_q), the integer
 * weight stays integer and a per-axis scale's axis follows its dim (rule
 * fold-through-dequantize). A Transpose of the integer constant before a DQ folds as
 * any other (the DQ then reads the transposed constant, its axis unchanged).
 *
 * Each fold is one rewrite (PASS:K stops after K folds). Bodies of If/Loop/Scan are
 * folded too, with captured outer constants counting as constants.
 */
#include "passes/passes.h"
#include "passes/patterns.h"

#include "exec/exec.h"
#include "ops/ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fold_run {
    gl_model *m;
    gl_graph *g;
    gl_pass_ctx *ctx;
    int64_t max_bytes;
    bool *refused; /* by node id: a refusal was recorded already */
    size_t n_refused;
    bool stopped;  /* budget spent */
} fold_run;

static void add_context(gl_decision *d, const gl_graph *g)
{
    if (g->parent_node)
        gl_decision_add_text(d, "inside", g->parent_node->name);
}

/* The tensor a constant input holds: an initializer, or the outer constant a capture
 * reads. NULL when not a constant. */
static const gl_tensor *constant_of(const gl_value *v)
{
    for (; v; v = v->outer)
        if (gl_value_is_constant(v))
            return v->init;
    return NULL;
}

static bool static_shape(const gl_type *t)
{
    if (t->kind != GL_TYPE_TENSOR || t->shape.rank < 0)
        return false;
    for (int i = 0; i < t->shape.rank; i++)
        if (t->shape.dims[i].value < 0)
            return false;
    return true;
}

static bool outputs_read(const gl_node *n)
{
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && (n->outputs[i]->n_uses || n->outputs[i]->n_output_refs))
            return true;
    return false;
}

/* ---- which nodes are candidates ------------------------------------------------------- */

typedef enum candidacy {
    NOT_CANDIDATE,     /* reads something computed at run time */
    CANDIDATE,         /* every input constant */
    SHAPE_OF_STATIC,   /* Shape/Size whose dims are known from the type */
    READS_DEFAULT,     /* constant but for graph inputs with defaults */
} candidacy;

static candidacy classify(const gl_node *n, const gl_value **default_input)
{
    *default_input = NULL;
    gl_tensor *shape = gl_shape_node_value(n); /* cheap: a few dims */
    if (shape) {
        gl_tensor_free(shape);
        return SHAPE_OF_STATIC;
    }
    for (size_t i = 0; i < n->n_inputs + n->n_implicit; i++) {
        const gl_value *v = i < n->n_inputs ? n->inputs[i] : n->implicit[i - n->n_inputs];
        if (!v || constant_of(v))
            continue;
        if (v->init && v->is_input && !*default_input)
            *default_input = v;
        else if (!(v->init && v->is_input))
            return NOT_CANDIDATE;
    }
    return *default_input ? READS_DEFAULT : CANDIDATE;
}

/* Bytes the outputs will take from their inferred types; -1 when a size is unknown. */
static int64_t expected_bytes(const gl_node *n)
{
    int64_t total = 0;
    for (size_t i = 0; i < n->n_outputs; i++) {
        const gl_value *v = n->outputs[i];
        if (!v)
            continue;
        const gl_type *t = &v->type;
        size_t elem = gl_dtype_size(t->dtype);
        if (!static_shape(t) || (elem == 0 && t->dtype != GL_DT_STRING))
            return -1;
        int64_t count = 1;
        for (int d = 0; d < t->shape.rank; d++) {
            int64_t x = t->shape.dims[d].value;
            if (x && count > INT64_MAX / 16 / x)
                return -1;
            count *= x;
        }
        /* Strings: their lengths are unknown; the count is a lower bound, checked again
         * after evaluation. */
        total += count * (int64_t)(elem ? elem : 1);
        if (total < 0)
            return -1;
    }
    return total;
}

/* ---- refusals ------------------------------------------------------------------------- */

/* Record a refusal about node n once per pass run. */
static gl_decision *refuse_once(fold_run *r, const gl_node *n, const char *rule,
                                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static gl_decision *refuse_once(fold_run *r, const gl_node *n, const char *rule,
                                const char *fmt, ...)
{
    if (n->id >= r->n_refused) { /* a node this run made */
        size_t grown = n->id + 1 > 2 * r->n_refused ? n->id + 1 : 2 * r->n_refused;
        r->refused = gl_xrealloc(r->refused, grown * sizeof(bool));
        memset(r->refused + r->n_refused, 0, (grown - r->n_refused) * sizeof(bool));
        r->n_refused = grown;
    }
    if (r->refused[n->id])
        return NULL;
    r->refused[n->id] = true;
    char reason[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    gl_decision *d = gl_pass_decide(r->ctx, rule, GL_REFUSED, "%s", reason);
    gl_decision_add_node_ref(d, n);
    add_context(d, r->g);
    return d;
}

/* ---- DequantizeLinear: kept, and folded through ---------------------------------------- */

/* Never fold a DequantizeLinear: say what keeping it saves. */
static void keep_dequantize(fold_run *r, const gl_node *dq)
{
    const gl_tensor *x = dq->n_inputs ? constant_of(dq->inputs[0]) : NULL;
    int64_t as_float = expected_bytes(dq);
    gl_decision *d = refuse_once(r, dq, "keep-dequantize", "DequantizeLinear '%s' of a "
                                 "constant stays: folding it would drop the %s path the QDQ "
                                 "fusions look for and store %lld float bytes instead of %zu",
                                 dq->name, x ? gl_dtype_name(x->dtype) : "integer",
                                 (long long)as_float, x ? gl_tensor_nbytes(x) : 0);
    if (d && x) {
        gl_decision_add_number(d, "bytes_int", (double)gl_tensor_nbytes(x));
        gl_decision_add_number(d, "bytes_float", (double)as_float);
    }
}

/* A Transpose or Reshape after the DequantizeLinear of a constant, as a plan. */
typedef struct through_dq {
    gl_node *reorder;   /* the Transpose or Reshape */
    gl_node *dq;
    gl_tensor *moved;   /* the integer constant transposed or reshaped (owned) */
    int axis_before;    /* the scale's axis; -1: per tensor */
    int axis_after;
} through_dq;

/* The DequantizeLinear n reads, when every input of it is a constant. */
static gl_node *dequantize_of_constant(const gl_node *n)
{
    gl_node *dq = n->n_inputs && n->inputs[0] ? n->inputs[0]->producer : NULL;
    if (!gl_node_is(dq, "DequantizeLinear") || dq->n_inputs < 2)
        return NULL;
    for (size_t i = 0; i < dq->n_inputs; i++)
        if (dq->inputs[i] && !constant_of(dq->inputs[i]))
            return NULL;
    return dq;
}

/* Where dim `axis` of `in` goes in `out` when the reshape only adds or drops dims of 1
 * (the other dims in the same order); -1 otherwise, or when that dim is itself 1. */
static int axis_through_reshape(const gl_tensor *in, const gl_tensor *out, int axis)
{
    if (in->dims[axis] == 1)
        return -1;
    int i = 0, o = 0, found = -1;
    for (;; i++, o++) {
        while (i < in->rank && in->dims[i] == 1)
            i++;
        while (o < out->rank && out->dims[o] == 1)
            o++;
        if (i == in->rank || o == out->rank)
            return i == in->rank && o == out->rank ? found : -1;
        if (in->dims[i] != out->dims[o])
            return -1;
        if (i == axis)
            found = o;
    }
}

/* Where the scale's axis goes; false with `why` when it cannot follow. */
static bool move_axis(through_dq *t, const gl_tensor *wq, char *why, size_t len)
{
    const gl_node *n = t->reorder;
    if (gl_node_is(n, "Transpose")) {
        const gl_attr *a = gl_node_attr_typed(n, "perm", GL_ATTR_INTS);
        for (int j = 0; j < wq->rank; j++)
            if ((a ? a->ints[j] : wq->rank - 1 - j) == t->axis_before) {
                t->axis_after = j;
                return true;
            }
        snprintf(why, len, "Transpose '%s': its perm does not hold axis %d", n->name,
                 t->axis_before);
        return false;
    }
    int to = axis_through_reshape(wq, t->moved, t->axis_before);
    if (to < 0) {
        snprintf(why, len, "Reshape '%s' does more than move dims of 1 around the scale's "
                 "axis %d: the per-axis scale cannot follow", n->name, t->axis_before);
        return false;
    }
    t->axis_after = to;
    return true;
}

/* The check: nothing is edited. true with t filled (t->moved computed) when n folds
 * through its DequantizeLinear; false with `why` set for a refusal, or empty when n is
 * not such a node at all. */
static bool check_through_dequantize(fold_run *r, gl_node *n, through_dq *t, char *why,
                                     size_t len)
{
    why[0] = '\0';
    *t = (through_dq){.reorder = n, .axis_before = -1, .axis_after = -1};
    bool reshape = gl_node_is(n, "Reshape");
    if (!(gl_node_is(n, "Transpose") || reshape) || !(t->dq = dequantize_of_constant(n)))
        return false;
    const gl_tensor *shape = reshape && n->n_inputs > 1 ? constant_of(n->inputs[1]) : NULL;
    if (reshape && !shape)
        return false;
    const gl_node *dq = t->dq;
    const gl_tensor *wq = constant_of(dq->inputs[0]), *scale = constant_of(dq->inputs[1]);
    if (gl_node_attr_int(dq, "block_size", 0)) {
        snprintf(why, len, "DequantizeLinear '%s' is blocked (block_size): its scale would "
                 "move with the weight", dq->name);
        return false;
    }
    if (scale->rank >= 1) {
        int64_t axis = gl_node_attr_int(dq, "axis", 1);
        t->axis_before = (int)(axis < 0 ? axis + wq->rank : axis);
        if (t->axis_before < 0 || t->axis_before >= wq->rank) {
            snprintf(why, len, "DequantizeLinear '%s': axis %lld is outside rank %d",
                     dq->name, (long long)axis, wq->rank);
            return false;
        }
    }
    if ((int64_t)gl_tensor_nbytes(wq) > r->max_bytes) {
        snprintf(why, len, "the weight '%s' takes %zu bytes, more than max-bytes (%lld)",
                 dq->inputs[0]->name, gl_tensor_nbytes(wq), (long long)r->max_bytes);
        return false;
    }
    const gl_tensor *in[2] = {wq, shape};
    gl_tensor *out[1] = {NULL};
    if (n->n_outputs != 1 || gl_eval_node(r->m, n, in, out) != GL_OK) {
        snprintf(why, len, "%s '%s' does not run on the weight '%s': %s", n->op_type, n->name,
                 dq->inputs[0]->name, gl_error_message());
        gl_error_clear();
        return false;
    }
    t->moved = out[0];
    if (t->axis_before >= 0 && !move_axis(t, wq, why, len)) {
        gl_tensor_free(t->moved);
        t->moved = NULL;
        return false;
    }
    return true;
}

/* The rewrite: a new DequantizeLinear of the moved constant takes n's output; n goes,
 * and the old DequantizeLinear and its weight when nothing else reads them. */
static gl_status apply_through_dequantize(fold_run *r, through_dq *t, int64_t decision)
{
    gl_node *dq = t->dq, *n = t->reorder;
    gl_value *moved = gl_add_initializer(r->g, dq->inputs[0]->name, t->moved);
    t->moved = NULL;
    gl_node *srcs[2] = {dq, n};
    gl_node *nd = gl_pt_dequantize_again(r->g, dq, moved, t->axis_after, srcs, 2, decision);
    if (!nd)
        return GL_ERR_INTERNAL;
    gl_status st = gl_move_output(r->g, n, 0, nd, 0);
    if (st == GL_OK)
        st = gl_remove_node(r->g, n);
    if (st != GL_OK || outputs_read(dq))
        return st;
    gl_pt_ctx pc = {r->g, r->m, 0};
    return gl_pt_remove_nodes(&pc, &dq, 1); /* and the weight, when only it read it */
}

/* Check, record, apply — or refuse. */
static gl_status fold_through_dequantize(fold_run *r, gl_node *n, bool *folded)
{
    *folded = false;
    through_dq t;
    char why[320];
    if (!check_through_dequantize(r, n, &t, why, sizeof(why))) {
        if (why[0])
            refuse_once(r, n, "fold-through-dequantize", "%s", why);
        return GL_OK;
    }
    const gl_value *w = t.dq->inputs[0];
    int64_t bytes_int = (int64_t)gl_tensor_nbytes(t.moved);
    int64_t bytes_float = expected_bytes(n);
    char axis[64] = "per tensor";
    if (t.axis_before >= 0)
        snprintf(axis, sizeof(axis), "the scale's axis %d -> %d", t.axis_before,
                 t.axis_after);
    gl_decision *d = gl_pass_decide(r->ctx, "fold-through-dequantize", GL_APPLIED,
                                    "%s '%s' after DequantizeLinear '%s' folds into the %s "
                                    "weight '%s' (%s): %lld bytes stay %s instead of %lld "
                                    "float bytes", n->op_type, n->name, t.dq->name,
                                    gl_dtype_name(t.moved->dtype), w->name, axis,
                                    (long long)bytes_int, gl_dtype_name(t.moved->dtype),
                                    (long long)bytes_float);
    gl_decision_add_node_ref(d, n);
    gl_decision_add_node_ref(d, t.dq);
    gl_decision_add_number(d, "bytes_int", (double)bytes_int);
    gl_decision_add_number(d, "bytes_float", (double)bytes_float);
    if (t.axis_before >= 0) {
        gl_decision_add_number(d, "axis_before", t.axis_before);
        gl_decision_add_number(d, "axis_after", t.axis_after);
    }
    add_context(d, r->g);
    if (gl_pass_vetoed(r->ctx, d)) {
        gl_tensor_free(t.moved);
        return GL_OK;
    }
    gl_status st = apply_through_dequantize(r, &t, d->id);
    gl_tensor_free(t.moved);
    *folded = st == GL_OK;
    return st;
}

/* ---- evaluating and applying ------------------------------------------------------------- */

/* outs[] receives n->n_outputs tensors. */
static gl_status compute(fold_run *r, const gl_node *n, candidacy c, gl_tensor **outs)
{
    if (c == SHAPE_OF_STATIC) {
        outs[0] = gl_shape_node_value(n);
        return outs[0] ? GL_OK : gl_fail(GL_ERR_INPUT, "node '%s' (%s): the size does not "
                                         "fit in int64", n->name, n->op_type);
    }
    const gl_tensor **in = gl_xcalloc(n->n_inputs ? n->n_inputs : 1, sizeof(*in));
    for (size_t i = 0; i < n->n_inputs; i++)
        in[i] = constant_of(n->inputs[i]);
    gl_status st = gl_eval_node(r->m, n, in, outs);
    free(in);
    return st;
}

static int64_t outputs_bytes(const gl_node *n, gl_tensor *const *outs)
{
    int64_t total = 0;
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && outs[i])
            total += (int64_t)gl_tensor_nbytes(outs[i]);
    return total;
}

static void free_outputs(gl_tensor **outs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gl_tensor_free(outs[i]);
    free(outs);
}

/* Outputs that something reads become constants; the node goes. */
static gl_status replace_by_constants(fold_run *r, gl_node *n, gl_tensor **outs,
                                      size_t *made)
{
    *made = 0;
    for (size_t i = 0; i < n->n_outputs; i++) {
        gl_value *v = n->outputs[i];
        if (!v || !(v->n_uses || v->n_output_refs))
            continue;
        if (!outs[i])
            return gl_fail(GL_ERR_INTERNAL, "constant-folding: node '%s' (%s): the kernel "
                           "left output %zu unset", n->name, n->op_type, i);
        gl_status st = gl_value_make_constant(r->g, v, outs[i]);
        if (st != GL_OK)
            return st;
        outs[i] = NULL;
        (*made)++;
    }
    return gl_remove_node(r->g, n);
}

/* Check, compute, record, apply — or refuse. */
static gl_status fold_node(fold_run *r, gl_node *n, candidacy c, bool *folded)
{
    *folded = false;
    char why[320];
    if (c != SHAPE_OF_STATIC && gl_node_eval_blocker(r->m, n, why, sizeof(why))) {
        refuse_once(r, n, "not-foldable", "%s", why);
        return GL_OK;
    }
    int64_t expected = c == SHAPE_OF_STATIC ? 0 : expected_bytes(n);
    if (expected < 0) {
        refuse_once(r, n, "size-unknown", "%s '%s': the size of its outputs is not known "
                    "before computing them", n->op_type, n->name);
        return GL_OK;
    }
    if (expected > r->max_bytes) {
        gl_decision *d = refuse_once(r, n, "too-large", "%s '%s': its outputs would take "
                                     "%lld bytes, more than max-bytes (%lld)", n->op_type,
                                     n->name, (long long)expected, (long long)r->max_bytes);
        if (d) {
            gl_decision_add_number(d, "bytes", (double)expected);
            gl_decision_add_number(d, "max_bytes", (double)r->max_bytes);
        }
        return GL_OK;
    }
    gl_tensor **outs = gl_xcalloc(n->n_outputs ? n->n_outputs : 1, sizeof(gl_tensor *));
    if (compute(r, n, c, outs) != GL_OK) {
        refuse_once(r, n, "eval-failed", "%s", gl_error_message());
        gl_error_clear();
        free_outputs(outs, n->n_outputs);
        return GL_OK;
    }
    int64_t bytes = outputs_bytes(n, outs);
    if (bytes > r->max_bytes) {
        gl_decision *d = refuse_once(r, n, "too-large", "%s '%s': its outputs take %lld "
                                     "bytes, more than max-bytes (%lld)", n->op_type,
                                     n->name, (long long)bytes, (long long)r->max_bytes);
        if (d) {
            gl_decision_add_number(d, "bytes", (double)bytes);
            gl_decision_add_number(d, "max_bytes", (double)r->max_bytes);
        }
        free_outputs(outs, n->n_outputs);
        return GL_OK;
    }
    gl_decision *d;
    if (gl_node_is(n, "Constant"))
        d = gl_pass_decide(r->ctx, "fold", GL_APPLIED, "Constant '%s' becomes an "
                           "initializer (%lld bytes)", n->name, (long long)bytes);
    else
        d = gl_pass_decide(r->ctx, "fold", GL_APPLIED, "%s '%s' reads only %s: computed "
                           "now (%lld bytes of constants)", n->op_type, n->name,
                           c == SHAPE_OF_STATIC ? "a static shape" : "constants",
                           (long long)bytes);
    gl_decision_add_node_ref(d, n);
    gl_decision_add_number(d, "bytes", (double)bytes);
    add_context(d, r->g);
    if (gl_pass_vetoed(r->ctx, d)) {
        free_outputs(outs, n->n_outputs);
        return GL_OK;
    }
    size_t made, n_outputs = n->n_outputs; /* n is gone afterwards */
    gl_status st = replace_by_constants(r, n, outs, &made);
    gl_decision_add_number(d, "outputs", (double)made);
    free_outputs(outs, n_outputs);
    *folded = st == GL_OK;
    return st;
}

/* One sweep in topological order; *folded counts the folds. */
static gl_status sweep(fold_run *r, size_t *folded)
{
    *folded = 0;
    gl_node *n;
    gl_foreach_node(r->g, i, n) {
        const gl_value *dflt;
        candidacy c = classify(n, &dflt);
        if (!outputs_read(n) || (c == NOT_CANDIDATE && !dequantize_of_constant(n)))
            continue;
        if (!gl_pass_may_rewrite(r->ctx)) {
            r->stopped = true;
            break;
        }
        bool done;
        gl_status st;
        if (c == NOT_CANDIDATE) {
            if ((st = fold_through_dequantize(r, n, &done)) != GL_OK)
                return st;
            *folded += done;
            continue;
        }
        if (gl_node_is(n, "DequantizeLinear")) {
            keep_dequantize(r, n);
            continue;
        }
        if (c == READS_DEFAULT) {
            refuse_once(r, n, "input-with-default", "%s '%s' reads graph input '%s', "
                        "which has a default but may be fed: not a constant (--set "
                        "load.freeze-inputs=1 treats it as one)", n->op_type, n->name,
                        dflt->name);
            continue;
        }
        if ((st = fold_node(r, n, c, &done)) != GL_OK)
            return st;
        *folded += done;
    }
    return GL_OK;
}

static gl_status fold_graph(gl_graph *g, gl_pass_ctx *ctx)
{
    if (!gl_pass_may_rewrite(ctx))
        return GL_OK;
    fold_run r = {.m = ctx->model ? ctx->model : g->model, .g = g, .ctx = ctx,
                  .max_bytes = gl_pass_option_value(ctx, "max-bytes"),
                  .refused = gl_xcalloc(g->next_node_id + 1, sizeof(bool)),
                  .n_refused = g->next_node_id + 1};
    gl_status st = GL_OK;
    /* The graph as a whole type inference left it (shape-inference just ran, and nothing
     * changed since: the pipeline's fingerprints say so). Inference only merges what it
     * infers into the types it finds, so inferring that graph again changes nothing: the
     * first sweep goes without it (on the 100k-node ladder, about 0.2 s). */
    bool typed = g == r.m->graph && ctx->fingerprint != 0 &&
                 ctx->fingerprint == r.m->types_fingerprint;
    /* Each sweep that folds removes a node: at most as many sweeps as nodes. */
    for (size_t folded = 1; folded && !r.stopped && st == GL_OK; typed = false) {
        if (!typed)
            st = gl_infer_graph(r.m, g, NULL, NULL);
        if (st == GL_OK)
            st = sweep(&r, &folded);
        /* A DequantizeLinear made by fold-through-dequantize comes last in the list. */
        if (st == GL_OK && folded)
            st = gl_toposort(g, NULL);
    }
    free(r.refused);
    if (st == GL_OK && !r.stopped)
        st = gl_pass_on_bodies(g, ctx, fold_graph);
    return st;
}

gl_status gl_pass_constant_folding(gl_graph *g, gl_pass_ctx *ctx) { return fold_graph(g, ctx); }

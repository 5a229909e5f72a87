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
 * Each fold is one rewrite (PASS:K stops after K folds). Bodies of If/Loop/Scan are
 * folded too, with captured outer constants counting as constants.
 */
#include "passes/passes.h"

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
    if (n->id < r->n_refused && r->refused[n->id])
        return NULL;
    if (n->id < r->n_refused)
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
        if (c == NOT_CANDIDATE || !outputs_read(n))
            continue;
        if (!gl_pass_may_rewrite(r->ctx)) {
            r->stopped = true;
            break;
        }
        if (c == READS_DEFAULT) {
            refuse_once(r, n, "input-with-default", "%s '%s' reads graph input '%s', "
                        "which has a default but may be fed: not a constant (--set "
                        "load.freeze-inputs=1 treats it as one)", n->op_type, n->name,
                        dflt->name);
            continue;
        }
        bool done;
        gl_status st = fold_node(r, n, c, &done);
        if (st != GL_OK)
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
    /* Each sweep that folds removes a node: at most as many sweeps as nodes. */
    for (size_t folded = 1; folded && !r.stopped && st == GL_OK;) {
        st = gl_infer_graph(r.m, g, NULL, NULL);
        if (st == GL_OK)
            st = sweep(&r, &folded);
    }
    free(r.refused);
    if (st == GL_OK && !r.stopped)
        st = gl_pass_on_bodies(g, ctx, fold_graph);
    return st;
}

gl_status gl_pass_constant_folding(gl_graph *g, gl_pass_ctx *ctx) { return fold_graph(g, ctx); }

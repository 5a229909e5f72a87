/* shape_inference.c — types and shapes of every value, from the op registry.
 *
 * Nodes are visited in topological order. Each node's shape function sees its inputs'
 * types and, where known, their values: constants, and values this pass computes on the
 * side — small outputs of nodes whose inputs are all known (evaluated with the reference
 * kernel) and Shape/Size of tensors whose shape is static. That partial evaluation is
 * what gives a Reshape fed by Shape->Gather->Concat a known output shape without changing
 * the graph (constant folding changes it later, with this pass's help). Where a shape
 * holds symbols ([1,seq,32]), its elements still travel through such chains one by one
 * and fill the dims of Reshape, Expand, ConstantOfShape and Resize (by sizes) outputs
 * ([1,seq,4,8]; [N,64,64,64] for a Resize to a skip's size).
 *
 * What a shape function says is merged into the value's declared type: a known dim beats
 * a symbol, a symbol beats an unknown dim, a known rank or dtype beats none. Two
 * different known dims, ranks or dtypes contradict each other: the declared type stays
 * and the contradiction is a refusal. Ops the registry does not know, or knows without a
 * shape function, keep their declared types (one refusal per op type). Calls of
 * model-local functions are typed through the function's body, on the side.
 *
 * A node whose outputs gained information is one rewrite (PASS:K stops after K such
 * nodes); one summary record stands for them instead of a record per node. Records
 * whose numbers are only known at the end (the summary, the count of nodes without a
 * shape function) are made when their subject first shows up and completed at the end,
 * so that the records of a budgeted run are the first records of the full run.
 */
#include "passes/passes.h"

#include "exec/exec.h"
#include "ir/calls.h"
#include "ops/opkit.h"
#include "util/plural.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values computed on the side stay small, and so do the inputs they are computed from:
 * they feed shape functions, nothing else, and must stay cheap (a product of two large
 * weights is constant folding's business). */
#define EVAL_MAX_ELEMENTS (64 * 1024)
/* Bodies within bodies (and function calls within functions): deeper is refused. */
#define MAX_NESTING 32

/* ---- merging types --------------------------------------------------------------------- */

typedef enum merge_result { MERGE_SAME, MERGE_GAINED, MERGE_CONFLICT } merge_result;

/* Merge one inferred dim into `d` (a copy of the declared one). */
static merge_result merge_dim(gl_dim *d, const gl_dim *inferred)
{
    if (d->value >= 0)
        return inferred->value >= 0 && inferred->value != d->value ? MERGE_CONFLICT
                                                                    : MERGE_SAME;
    if (inferred->value >= 0) {
        free(d->sym);
        d->sym = NULL;
        d->value = inferred->value;
        return MERGE_GAINED;
    }
    if (!d->sym && inferred->sym) {
        gl_dim_set_sym(d, inferred->sym);
        return MERGE_GAINED;
    }
    return MERGE_SAME; /* two symbols: the declared name stays */
}

static merge_result merge_shape(gl_shape *s, const gl_shape *inferred)
{
    if (inferred->rank == GL_RANK_UNKNOWN)
        return MERGE_SAME;
    if (s->rank == GL_RANK_UNKNOWN) {
        gl_shape_copy(s, inferred);
        return MERGE_GAINED;
    }
    if (s->rank != inferred->rank)
        return MERGE_CONFLICT;
    merge_result r = MERGE_SAME;
    for (int i = 0; i < s->rank; i++) {
        merge_result d = merge_dim(&s->dims[i], &inferred->dims[i]);
        if (d == MERGE_CONFLICT)
            return MERGE_CONFLICT;
        if (d == MERGE_GAINED)
            r = MERGE_GAINED;
    }
    return r;
}

/* *out = declared made more specific by inferred (out is initialized here). On a
 * conflict *out is the declared type. */
static merge_result merge_type(const gl_type *declared, const gl_type *inferred, gl_type *out)
{
    memset(out, 0, sizeof(*out));
    gl_shape_init_unknown(&out->shape);
    /* Inferring a typed graph again (constant folding after a rewrite) meets this for
     * every value: equal types merge to the same, with no copy of the declared one made
     * and freed (issue 23). Opaque types take the other way: their bytes are not
     * compared here. */
    if (declared->kind == inferred->kind && declared->kind != GL_TYPE_OPAQUE &&
        declared->dtype == inferred->dtype && gl_shape_equal(&declared->shape, &inferred->shape))
        return MERGE_SAME;
    gl_type_copy(out, declared);
    if (inferred->kind == GL_TYPE_NONE)
        return MERGE_SAME;
    if (declared->kind == GL_TYPE_NONE) {
        gl_type_copy(out, inferred);
        return MERGE_GAINED;
    }
    if (declared->kind != inferred->kind)
        return MERGE_CONFLICT;
    if (declared->kind == GL_TYPE_OPAQUE)
        return MERGE_SAME; /* sequences, maps: what the file says */
    merge_result r = MERGE_SAME;
    if (inferred->dtype != GL_DT_UNDEFINED) {
        if (out->dtype == GL_DT_UNDEFINED) {
            out->dtype = inferred->dtype;
            r = MERGE_GAINED;
        } else if (out->dtype != inferred->dtype) {
            return MERGE_CONFLICT;
        }
    }
    merge_result s = merge_shape(&out->shape, &inferred->shape);
    if (s == MERGE_CONFLICT) {
        gl_type_copy(out, declared);
        return MERGE_CONFLICT;
    }
    return s == MERGE_GAINED ? MERGE_GAINED : r;
}

static bool type_fully_known(const gl_type *t)
{
    if (t->kind != GL_TYPE_TENSOR || t->dtype == GL_DT_UNDEFINED || t->shape.rank < 0)
        return false;
    for (int i = 0; i < t->shape.rank; i++)
        if (t->shape.dims[i].value < 0)
            return false;
    return true;
}

/* Elements of a static shape; -1 when not static or beyond `limit`. */
static int64_t shape_count(const gl_shape *s, int64_t limit)
{
    if (s->rank < 0)
        return -1;
    int64_t count = 1;
    for (int i = 0; i < s->rank; i++) {
        int64_t d = s->dims[i].value;
        if (d < 0 || (d != 0 && count > limit / d))
            return -1;
        count *= d;
    }
    return count <= limit ? count : -1;
}

/* The same for a tensor type whose dtype is known too. */
static int64_t static_count(const gl_type *t, int64_t limit)
{
    return type_fully_known(t) ? shape_count(&t->shape, limit) : -1;
}

/* ---- what may be evaluated ------------------------------------------------------------ */

/* The function a node runs as, or NULL. As in the executor, an op with a registry kernel
 * runs that kernel even when the model also has a function of its name (graphlab's own
 * ops carry one for other runtimes). */
static const gl_function *called_function(const gl_model *m, const gl_node *n)
{
    const gl_op_def *def = m ? gl_op_for_node(m, n) : NULL;
    return def && def->kernel ? NULL : gl_called_function(m, n);
}

const char *gl_node_eval_blocker(const gl_model *m, const gl_node *n, char *buf, size_t len)
{
    const gl_op_def *def = called_function(m, n) ? NULL : gl_op_for_node(m, n);
    const char *dom = gl_domain_display(n->domain);
    if (called_function(m, n))
        snprintf(buf, len, "%s '%s' calls a model-local function", n->op_type, n->name);
    else if (!def)
        snprintf(buf, len, "%s '%s': op not in the registry (domain '%s')", n->op_type,
                 n->name, dom);
    else if (!def->kernel)
        snprintf(buf, len, "%s '%s': the op has no reference kernel", n->op_type, n->name);
    else if (def->flags & GL_OP_RANDOM)
        snprintf(buf, len, "%s '%s' draws random values: every run differs", n->op_type,
                 n->name);
    else if (def->flags & GL_OP_NO_FOLD)
        snprintf(buf, len, "%s '%s': the op is marked never to be folded", n->op_type,
                 n->name);
    else if (gl_node_effects(n) != GL_EFFECT_PURE)
        snprintf(buf, len, "%s '%s' (or a node in its subgraphs) is random or may have "
                 "side effects", n->op_type, n->name);
    else
        return NULL;
    return buf;
}

/* ---- the walk ------------------------------------------------------------------------- */

typedef struct missing_op {
    char *domain, *op, *first_node;
    const char *why;
    size_t nodes;
    int64_t record; /* id of its decision in ctx->log; -1: none yet */
} missing_op;

typedef struct infer_run {
    gl_model *m;
    gl_pass_ctx *ctx;  /* NULL: no records, no budget */
    size_t changed;    /* nodes whose outputs gained information */
    size_t gained;     /* values that did */
    bool stopped;      /* the rewrite budget is spent */
    bool quiet;        /* inside a function body: nothing recorded or counted */
    int depth;         /* bodies and function calls being inferred */
    gl_expansion calls; /* every call typed in this run, against the shared bound */
    gl_status fatal;   /* a call refused by that bound: the run stops and fails */
    char fatal_msg[1024];
    missing_op *missing;
    size_t n_missing, cap_missing;
} infer_run;

/* Values known in one graph while it is walked. */
typedef struct graph_state {
    gl_graph *g;
    const struct graph_state *outer; /* the enclosing graph's, for captures */
    const gl_tensor **known;         /* by value index */
    bool *owned;                     /* known[i] was computed here (freed at the end) */
    struct symval **sym;             /* by value index: shape values known per element */
    size_t n;
} graph_state;

/* What a node's shape function gets as c->user. */
typedef struct node_job {
    infer_run *run;
    graph_state *gs;
} node_job;

static void add_context(gl_decision *d, const gl_graph *g)
{
    if (g->parent_node)
        gl_decision_add_text(d, "inside", g->parent_node->name);
}

static bool recording(const infer_run *r) { return r->ctx && !r->quiet; }

/* The value of v if this pass knows it: a constant, a value computed on the side, or
 * (for a capture) the value it captures. */
static const gl_tensor *known_value(const graph_state *gs, const gl_value *v)
{
    for (; v; v = v->outer) {
        if (gl_value_is_constant(v))
            return v->init;
        while (gs && gs->g != v->graph)
            gs = gs->outer;
        if (gs && v->index < gs->n && gs->known[v->index])
            return gs->known[v->index];
    }
    return NULL;
}

/* A record made earlier in this run (NULL without a log: scratch records do not last). */
static gl_decision *logged(const gl_pass_ctx *ctx, int64_t id)
{
    return gl_decision_log_at(ctx ? ctx->log : NULL, id);
}

static void set_reason(gl_decision *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(gl_decision *d, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    free(d->reason);
    d->reason = gl_xstrdup(reason);
}

static void describe_missing(gl_decision *d, const missing_op *mo)
{
    set_reason(d, "no shape function for %s%s%s (%zu node%s): declared types kept%s",
               mo->domain, *mo->domain ? "." : "", mo->op, mo->nodes,
               mo->nodes == 1 ? "" : "s", mo->why);
}

static void note_missing(infer_run *r, const gl_node *n, const char *why)
{
    const char *dom = n->domain;
    for (size_t i = 0; i < r->n_missing; i++) {
        if (!strcmp(r->missing[i].op, n->op_type) && !strcmp(r->missing[i].domain, dom)) {
            r->missing[i].nodes++;
            return;
        }
    }
    GL_GROW(r->missing, r->cap_missing, r->n_missing + 1);
    missing_op *mo = &r->missing[r->n_missing++];
    *mo = (missing_op){gl_xstrdup(dom), gl_xstrdup(n->op_type), gl_xstrdup(n->name), why,
                       1, -1};
    /* made here, completed at the end; a log that only counts keeps no record to
     * complete: report_missing makes it (the same count) */
    if (r->ctx && r->ctx->log && !r->ctx->log->count_only) {
        gl_decision *d = gl_pass_decide(r->ctx, "no-shape-function", GL_REFUSED, "%s",
                                        n->op_type);
        describe_missing(d, mo);
        gl_decision_add_node_ref(d, n);
        gl_decision_add_text(d, "op", mo->op);
        mo->record = d->id;
    }
}

/* Complete (or, without a log, make) the records of ops without a shape function. */
static void report_missing(infer_run *r)
{
    for (size_t i = 0; i < r->n_missing; i++) {
        missing_op *mo = &r->missing[i];
        gl_decision *d = logged(r->ctx, mo->record);
        if (!d && r->ctx) {
            d = gl_pass_decide(r->ctx, "no-shape-function", GL_REFUSED, "%s", mo->op);
            gl_decision_add_node(d, mo->first_node);
            gl_decision_add_text(d, "op", mo->op);
        }
        if (d) {
            describe_missing(d, mo);
            gl_decision_add_number(d, "nodes", (double)mo->nodes);
        }
        free(mo->domain);
        free(mo->op);
        free(mo->first_node);
    }
    free(r->missing);
    r->missing = NULL;
    r->n_missing = r->cap_missing = 0;
}

static void record_conflict(infer_run *r, const gl_node *n, const gl_value *v,
                            const gl_type *inferred)
{
    if (!recording(r))
        return;
    char declared_s[256], inferred_s[256];
    gl_type_format(&v->type, declared_s, sizeof(declared_s));
    gl_type_format(inferred, inferred_s, sizeof(inferred_s));
    gl_decision *d = gl_pass_decide(r->ctx, "conflict", GL_REFUSED,
                                    "%s '%s': output '%s' is declared %s but infers as %s: "
                                    "the declared type is kept", n->op_type, n->name,
                                    v->name, declared_s, inferred_s);
    gl_decision_add_node_ref(d, n);
    gl_decision_add_text(d, "value", v->name);
    gl_decision_add_text(d, "declared", declared_s);
    gl_decision_add_text(d, "inferred", inferred_s);
    add_context(d, n->graph);
}

static void record_shape_error(infer_run *r, const gl_node *n)
{
    if (!recording(r))
        return;
    gl_decision *d = gl_pass_decide(r->ctx, "shape-function-error", GL_REFUSED,
                                    "%s: declared types kept", gl_error_message());
    gl_decision_add_node_ref(d, n);
    add_context(d, n->graph);
}

/* Merge the inferred types into the node's outputs. False when the budget stopped it. */
/* Most nodes have a few inputs and outputs: the per-node arrays below live on the stack
 * up to this many (a calloc and a free of each, for every node, were a tenth of
 * inferring the 100k ladder: issue 23). */
#define FEW 8

/* An array of `n` zeroed elements of `size`: `few` (FEW of them) when they fit. */
static void *zeroed(void *few, size_t n, size_t size)
{
    if (n > FEW)
        return gl_xcalloc(n, size);
    memset(few, 0, FEW * size);
    return few;
}

static void release(void *array, void *few)
{
    if (array != few)
        free(array);
}

static bool apply_types(infer_run *r, gl_node *n, gl_type *inferred)
{
    size_t no = n->n_outputs;
    gl_type merged_few[FEW];
    merge_result res_few[FEW];
    gl_type *merged = zeroed(merged_few, no, sizeof(gl_type));
    merge_result *res = zeroed(res_few, no, sizeof(merge_result));
    size_t gained = 0;
    for (size_t i = 0; i < no; i++) {
        gl_shape_init_unknown(&merged[i].shape);
        if (!n->outputs[i])
            continue;
        res[i] = merge_type(&n->outputs[i]->type, &inferred[i], &merged[i]);
        gained += res[i] == MERGE_GAINED;
    }
    bool go = !gained || r->quiet || !r->ctx || gl_pass_may_rewrite(r->ctx);
    for (size_t i = 0; i < no && go; i++) {
        gl_value *v = n->outputs[i];
        if (res[i] == MERGE_CONFLICT)
            record_conflict(r, n, v, &inferred[i]);
        if (res[i] != MERGE_GAINED)
            continue;
        gl_type_free(&v->type);
        v->type = merged[i]; /* moved */
        memset(&merged[i], 0, sizeof(merged[i]));
    }
    if (go && gained && !r->quiet) {
        r->changed++;
        r->gained += gained;
        if (r->ctx)
            gl_pass_count_rewrite(r->ctx);
    }
    for (size_t i = 0; i < no; i++)
        gl_type_free(&merged[i]);
    release(merged, merged_few);
    release(res, res_few);
    r->stopped = r->stopped || !go;
    return go;
}

/* ---- partial evaluation --------------------------------------------------------------- */

static bool outputs_read(const gl_node *n)
{
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && n->outputs[i]->n_uses)
            return true;
    return false;
}

/* The dims a Shape node returns: [start, end) of `rank`, opset 15's attributes clamped
 * as the operator says. */
static void shape_range(const gl_node *n, int64_t rank, int64_t *start, int64_t *end)
{
    int64_t s = gl_node_attr_int(n, "start", 0), e = gl_node_attr_int(n, "end", rank);
    s = s < 0 ? s + rank : s;
    e = e < 0 ? e + rank : e;
    *start = s < 0 ? 0 : s > rank ? rank : s;
    *end = e < *start ? *start : e > rank ? rank : e;
}

/* Gather(Shape(x), constant indices) along its only axis, when every dim it picks is
 * known: Gather(Shape([N,16,128,128]), 2) is 128 whatever N is. Exports of a symbolic
 * batch build Resize sizes and Reshape shapes from such picks. */
static gl_tensor *gathered_dims_value(const gl_node *n)
{
    const gl_node *shape = n->n_inputs == 2 && n->inputs[0] ? n->inputs[0]->producer : NULL;
    const gl_value *iv = n->n_inputs == 2 ? n->inputs[1] : NULL;
    const gl_tensor *idx = iv && gl_value_is_constant(iv) ? iv->init : NULL;
    int64_t axis = gl_node_attr_int(n, "axis", 0);
    if (!gl_node_is(shape, "Shape") || shape->n_inputs < 1 || !shape->inputs[0] || !idx ||
        !gl_dtype_is_int(idx->dtype) || idx->rank > 1 || (axis != 0 && axis != -1))
        return NULL;
    const gl_type *t = &shape->inputs[0]->type;
    if (t->kind != GL_TYPE_TENSOR || t->shape.rank < 0)
        return NULL;
    int64_t start, end;
    shape_range(shape, t->shape.rank, &start, &end);
    for (int64_t i = 0; i < idx->count; i++) {
        int64_t k = gl_elem_i64(idx, i);
        k = k < 0 ? k + (end - start) : k;
        if (k < 0 || k >= end - start || t->shape.dims[start + k].value < 0)
            return NULL;
    }
    gl_tensor *out = gl_tensor_new(GL_DT_INT64, idx->rank, idx->dims);
    int64_t *p = out && idx->count ? gl_tensor_make_writable(out) : NULL;
    for (int64_t i = 0; p && i < idx->count; i++) {
        int64_t k = gl_elem_i64(idx, i);
        p[i] = t->shape.dims[start + (k < 0 ? k + (end - start) : k)].value;
    }
    return out;
}

gl_tensor *gl_shape_node_value(const gl_node *n)
{
    if (gl_node_is(n, "Gather"))
        return gathered_dims_value(n);
    bool shape = gl_node_is(n, "Shape"), size = gl_node_is(n, "Size");
    if ((!shape && !size) || n->n_inputs < 1 || !n->inputs[0] || n->n_outputs < 1)
        return NULL;
    const gl_type *t = &n->inputs[0]->type;
    if (t->kind != GL_TYPE_TENSOR || t->shape.rank < 0)
        return NULL;
    if (size) {
        int64_t count = shape_count(&t->shape, INT64_MAX);
        gl_tensor *out = count >= 0 ? gl_tensor_new(GL_DT_INT64, 0, NULL) : NULL;
        if (out)
            *(int64_t *)gl_tensor_make_writable(out) = count;
        return out;
    }
    int64_t start, end;
    shape_range(n, t->shape.rank, &start, &end);
    for (int64_t i = start; i < end; i++)
        if (t->shape.dims[i].value < 0)
            return NULL;
    int64_t len = end - start;
    gl_tensor *out = gl_tensor_new(GL_DT_INT64, 1, &len);
    if (out && len) {
        int64_t *p = gl_tensor_make_writable(out);
        for (int64_t i = 0; i < len; i++)
            p[i] = t->shape.dims[start + i].value;
    }
    return out;
}

/* All explicit inputs known (collected in vals) and small, every implicit one a
 * constant. */
static bool inputs_known(const gl_node *n, const gl_tensor *const *vals)
{
    for (size_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && (!vals[i] || vals[i]->count > EVAL_MAX_ELEMENTS))
            return false;
    for (size_t i = 0; i < n->n_implicit; i++)
        if (!gl_value_is_constant(n->implicit[i]))
            return false;
    return true;
}

static bool outputs_small(const gl_node *n)
{
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && static_count(&n->outputs[i]->type, EVAL_MAX_ELEMENTS) < 0)
            return false;
    return true;
}

static void remember(graph_state *gs, const gl_value *v, gl_tensor *t)
{
    if (!v || !t || v->index >= gs->n || gs->known[v->index]) {
        gl_tensor_free(t);
        return;
    }
    gs->known[v->index] = t;
    gs->owned[v->index] = true;
}

/* Compute n's outputs on the side when that is cheap and allowed. */
static void evaluate(infer_run *r, graph_state *gs, const gl_node *n,
                     const gl_tensor *const *vals)
{
    if (!outputs_read(n))
        return;
    gl_tensor *t = gl_shape_node_value(n);
    if (t) {
        remember(gs, n->outputs[0], t);
        return;
    }
    char why[256];
    if (!inputs_known(n, vals) || !outputs_small(n) ||
        gl_node_eval_blocker(r->m, n, why, sizeof(why)))
        return;
    gl_tensor **outs = gl_xcalloc(n->n_outputs ? n->n_outputs : 1, sizeof(gl_tensor *));
    if (gl_eval_node(r->m, n, vals, outs) == GL_OK) {
        for (size_t i = 0; i < n->n_outputs; i++) {
            remember(gs, n->outputs[i], outs[i]);
            outs[i] = NULL;
        }
    } else {
        gl_error_clear(); /* the data is bad: constant folding reports it, not us */
    }
    for (size_t i = 0; i < n->n_outputs; i++)
        gl_tensor_free(outs[i]);
    free(outs);
}

/* ---- symbolic shape values ------------------------------------------------------------ */

/* Shape of [1,seq,32] is no tensor we can compute, but each element is known: a number or
 * a symbol. Such shape values go through the ops shape chains are made of (Gather, Slice,
 * Concat, Unsqueeze, Squeeze, Cast, Identity) and, where a shape input decides an output
 * shape (Reshape, Expand, ConstantOfShape, Resize), fill the dims the shape function
 * could not: what onnx calls data propagation. Unknown stays unknown; nothing is
 * invented. */

#define SYMVEC_MAX 64

typedef struct symelem {
    bool known;
    int64_t value; /* when known (may be negative: Reshape's -1) */
    char *sym;     /* owned; a symbol when not known; NULL: nothing known */
} symelem;

typedef struct symval {
    bool scalar; /* a 0-D value (one element) */
    size_t n;
    symelem e[SYMVEC_MAX];
} symval;

static void symval_free(symval *sv)
{
    if (!sv)
        return;
    for (size_t i = 0; i < sv->n; i++)
        free(sv->e[i].sym);
    free(sv);
}

static symval *symval_new(size_t n, bool scalar)
{
    symval *sv = gl_xcalloc(1, sizeof(*sv));
    sv->n = n;
    sv->scalar = scalar;
    return sv;
}

static void elem_copy(symelem *dst, const symelem *src)
{
    free(dst->sym);
    *dst = (symelem){src->known, src->value, gl_xstrdup(src->sym)};
}

static void elem_of_dim(symelem *e, const gl_dim *d)
{
    free(e->sym);
    *e = (symelem){d->value >= 0, d->value, d->value >= 0 ? NULL : gl_xstrdup(d->sym)};
}

/* The shape value of v: a small known integer tensor, or what propagation found. A new
 * symval (symval_free it); NULL when nothing is known. */
static symval *sym_of(const graph_state *gs, const gl_value *v)
{
    if (!v)
        return NULL;
    const gl_tensor *t = known_value(gs, v);
    if (t && gl_dtype_is_int(t->dtype) && t->rank <= 1 && t->count <= SYMVEC_MAX) {
        symval *sv = symval_new((size_t)t->count, t->rank == 0);
        for (int64_t i = 0; i < t->count; i++)
            sv->e[i] = (symelem){true, gl_elem_i64(t, i), NULL};
        return sv;
    }
    if (v->graph != gs->g || v->index >= gs->n || !gs->sym[v->index])
        return NULL;
    const symval *src = gs->sym[v->index];
    symval *sv = symval_new(src->n, src->scalar);
    for (size_t i = 0; i < src->n; i++)
        elem_copy(&sv->e[i], &src->e[i]);
    return sv;
}

/* The one element of a known integer input; `dflt` when the input is omitted. */
static bool input_scalar(const graph_state *gs, const gl_node *n, size_t input,
                         int64_t dflt, int64_t *out)
{
    if (input < n->n_inputs && n->inputs[input]) {
        const gl_tensor *t = known_value(gs, n->inputs[input]);
        if (!t || !gl_dtype_is_int(t->dtype) || t->count != 1)
            return false;
        *out = gl_elem_i64(t, 0);
        return true;
    }
    *out = dflt;
    return true;
}

static symval *prop_shape(const graph_state *gs, const gl_node *n)
{
    (void)gs;
    const gl_type *t = n->n_inputs && n->inputs[0] ? &n->inputs[0]->type : NULL;
    if (!t || t->kind != GL_TYPE_TENSOR || t->shape.rank < 0 || t->shape.rank > SYMVEC_MAX)
        return NULL;
    int64_t start, end;
    shape_range(n, t->shape.rank, &start, &end);
    symval *sv = symval_new((size_t)(end - start), false);
    for (int64_t i = start; i < end; i++)
        elem_of_dim(&sv->e[i - start], &t->shape.dims[i]);
    return sv;
}

static symval *prop_identity(const graph_state *gs, const gl_node *n)
{
    if (gl_node_is(n, "Cast")) {
        int64_t to = gl_node_attr_int(n, "to", 0);
        if (to != GL_DT_INT64 && to != GL_DT_INT32)
            return NULL;
    }
    return sym_of(gs, n->n_inputs ? n->inputs[0] : NULL);
}

static symval *prop_gather(const graph_state *gs, const gl_node *n)
{
    int64_t axis = gl_node_attr_int(n, "axis", 0);
    const gl_tensor *idx = n->n_inputs > 1 ? known_value(gs, n->inputs[1]) : NULL;
    if ((axis != 0 && axis != -1) || !idx || !gl_dtype_is_int(idx->dtype) || idx->rank > 1 ||
        idx->count > SYMVEC_MAX)
        return NULL;
    symval *data = sym_of(gs, n->inputs[0]), *sv = NULL;
    if (data && !data->scalar) {
        sv = symval_new((size_t)idx->count, idx->rank == 0);
        for (int64_t i = 0; i < idx->count && sv; i++) {
            int64_t k = gl_elem_i64(idx, i);
            k = k < 0 ? k + (int64_t)data->n : k;
            if (k < 0 || k >= (int64_t)data->n) {
                symval_free(sv);
                sv = NULL;
            } else {
                elem_copy(&sv->e[i], &data->e[k]);
            }
        }
    }
    symval_free(data);
    return sv;
}

/* A scalar unsqueezed to [1], or [1] squeezed to a scalar. */
static symval *prop_unsqueeze(const graph_state *gs, const gl_node *n)
{
    bool squeeze = gl_node_is(n, "Squeeze");
    symval *sv = sym_of(gs, n->n_inputs ? n->inputs[0] : NULL);
    if (sv && (squeeze ? !sv->scalar && sv->n == 1 : sv->scalar)) {
        sv->scalar = squeeze;
        return sv;
    }
    symval_free(sv);
    return NULL;
}

static symval *prop_concat(const graph_state *gs, const gl_node *n)
{
    int64_t axis = gl_node_attr_int(n, "axis", 0);
    if (axis != 0 && axis != -1)
        return NULL;
    symval *sv = symval_new(0, false);
    for (size_t i = 0; i < n->n_inputs; i++) {
        symval *part = sym_of(gs, n->inputs[i]);
        bool fits = part && !part->scalar && sv->n + part->n <= SYMVEC_MAX;
        for (size_t k = 0; fits && k < part->n; k++)
            elem_copy(&sv->e[sv->n++], &part->e[k]);
        symval_free(part);
        if (!fits) {
            symval_free(sv);
            return NULL;
        }
    }
    return sv;
}

/* Slice of a 1-D shape value along its only axis, numpy's clamping. */
static symval *prop_slice(const graph_state *gs, const gl_node *n, int64_t opset)
{
    int64_t start, end, step = 1, axis = 0;
    if (opset < 10) {
        size_t ns, ne, na;
        const int64_t *s = gl_attr_ints(n, "starts", &ns), *e = gl_attr_ints(n, "ends", &ne);
        const int64_t *a = gl_attr_ints(n, "axes", &na);
        if (ns != 1 || ne != 1 || (a && na != 1))
            return NULL;
        start = s[0];
        end = e[0];
        axis = a ? a[0] : 0;
    } else if (n->n_inputs < 3 || !n->inputs[1] || !n->inputs[2] ||
               !input_scalar(gs, n, 1, 0, &start) || !input_scalar(gs, n, 2, 0, &end) ||
               !input_scalar(gs, n, 3, 0, &axis) || !input_scalar(gs, n, 4, 1, &step)) {
        return NULL;
    }
    symval *data = sym_of(gs, n->inputs[0]);
    if (!data || data->scalar || (axis != 0 && axis != -1) || step == 0) {
        symval_free(data);
        return NULL;
    }
    int64_t len = (int64_t)data->n;
    step = step > len ? len + 1 : step < -len - 1 ? -len - 1 : step; /* no overflow below */
    start = start < 0 ? start + len : start;
    end = end < 0 ? end + len : end;
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? len : len - 1;
    start = start < lo ? lo : start > hi ? hi : start;
    end = end < lo ? lo : end > hi ? hi : end;
    symval *sv = symval_new(0, false);
    for (int64_t i = start; step > 0 ? i < end : i > end; i += step)
        elem_copy(&sv->e[sv->n++], &data->e[i]);
    symval_free(data);
    return sv;
}

typedef symval *(*prop_fn)(const graph_state *gs, const gl_node *n);

static symval *prop_slice_node(const graph_state *gs, const gl_node *n)
{
    const gl_model *m = n->graph ? n->graph->model : NULL;
    return prop_slice(gs, n, m ? gl_model_opset(m, "") : 13);
}

static const struct {
    const char *op;
    prop_fn fn;
} propagators[] = {
    {"Cast", prop_identity},      {"Concat", prop_concat},   {"Gather", prop_gather},
    {"Identity", prop_identity},  {"Shape", prop_shape},     {"Slice", prop_slice_node},
    {"Squeeze", prop_unsqueeze},  {"Unsqueeze", prop_unsqueeze},
};

/* Remember the shape value of n's output when n is a shape-chain op. */
static void propagate_sym(graph_state *gs, const gl_node *n)
{
    const gl_value *v = n->n_outputs == 1 ? n->outputs[0] : NULL;
    if (!v || !v->n_uses || v->index >= gs->n || gs->known[v->index] || gs->sym[v->index])
        return;
    for (size_t i = 0; i < GL_ARRAY_LEN(propagators); i++)
        if (gl_node_is(n, propagators[i].op)) {
            gs->sym[v->index] = propagators[i].fn(gs, n);
            return;
        }
}

/* Fill dim d from element e when d is not known: never over a known dim. */
static void fill_dim(gl_dim *d, const symelem *e)
{
    if (d->value >= 0)
        return;
    if (e->known && e->value >= 0) {
        free(d->sym);
        d->sym = NULL;
        d->value = e->value;
    } else if (!e->known && e->sym && !d->sym) {
        gl_dim_set_sym(d, e->sym);
    }
}

static void fill_from_dim(gl_dim *d, const gl_dim *src)
{
    symelem e = {0};
    elem_of_dim(&e, src);
    fill_dim(d, &e);
    free(e.sym);
}

/* A product of dims as a coefficient and a list of symbols. */
#define PROD_SYMS 16
typedef struct product {
    int64_t coef;
    size_t n;
    const char *syms[PROD_SYMS];
} product;

static bool product_mul(product *p, bool known, int64_t value, const char *sym)
{
    if (known) {
        if (value < 0 || (value && p->coef > INT64_MAX / value))
            return false;
        p->coef *= value;
        return true;
    }
    if (!sym || p->n == PROD_SYMS)
        return false;
    p->syms[p->n++] = sym;
    return true;
}

/* Reshape's -1: the input's product over the other output dims, when that division
 * leaves a number or one plain symbol. */
static void solve_minus_one(gl_dim *out, const gl_shape *in, const symval *spec,
                            const bool *copied, size_t neg)
{
    product num = {1, 0, {0}}, den = {1, 0, {0}};
    for (int d = 0; d < in->rank; d++)
        if (!((size_t)d < spec->n && copied[d]) &&
            !product_mul(&num, in->dims[d].value >= 0, in->dims[d].value, in->dims[d].sym))
            return;
    for (size_t i = 0; i < spec->n; i++)
        if (i != neg && !copied[i] &&
            !product_mul(&den, spec->e[i].known, spec->e[i].value, spec->e[i].sym))
            return;
    for (size_t i = 0; i < den.n; i++) {
        size_t k = 0;
        while (k < num.n && strcmp(num.syms[k], den.syms[i]) != 0)
            k++;
        if (k == num.n)
            return;
        num.syms[k] = num.syms[--num.n];
    }
    if (den.coef == 0 || num.coef % den.coef != 0)
        return;
    int64_t q = num.coef / den.coef;
    if (num.n == 0)
        fill_dim(out, &(symelem){true, q, NULL});
    else if (num.n == 1 && q == 1)
        fill_dim(out, &(symelem){false, 0, (char *)num.syms[0]});
}

/* out is the shape function's type; make sure it has `rank` dims to fill. */
static bool shape_to_fill(gl_type *out, gl_dtype dt, int rank)
{
    if (out->kind == GL_TYPE_NONE) {
        out->kind = GL_TYPE_TENSOR;
        out->dtype = dt;
    }
    if (out->kind != GL_TYPE_TENSOR)
        return false;
    if (out->shape.rank == GL_RANK_UNKNOWN)
        gl_shape_set_rank(&out->shape, rank);
    return out->shape.rank == rank;
}

static void refine_reshape(const gl_node *n, const gl_type *x, const symval *spec,
                           int64_t opset, gl_type *out)
{
    if (!x || spec->scalar || spec->n > GL_MAX_RANK ||
        !shape_to_fill(out, x->dtype, (int)spec->n))
        return;
    bool allowzero = opset >= 14 && gl_node_attr_int(n, "allowzero", 0) != 0;
    bool copied[GL_MAX_RANK] = {false};
    size_t neg = SIZE_MAX;
    for (size_t i = 0; i < spec->n; i++) {
        const symelem *e = &spec->e[i];
        if (e->known && e->value == 0 && !allowzero) {
            if (x->shape.rank < 0 || (int)i >= x->shape.rank)
                return;
            copied[i] = true;
            fill_from_dim(&out->shape.dims[i], &x->shape.dims[i]);
        } else if (e->known && e->value == -1) {
            neg = i;
        } else {
            fill_dim(&out->shape.dims[i], e);
        }
    }
    if (neg != SIZE_MAX && x->shape.rank >= 0)
        solve_minus_one(&out->shape.dims[neg], &x->shape, spec, copied, neg);
}

/* numpy broadcasting of the input's dims with the shape value. */
static void refine_expand(const gl_type *x, const symval *spec, gl_type *out)
{
    if (!x || x->shape.rank < 0 || spec->scalar || spec->n > GL_MAX_RANK)
        return;
    int r = x->shape.rank, ns = (int)spec->n, rank = r > ns ? r : ns;
    if (!shape_to_fill(out, x->dtype, rank))
        return;
    for (int i = 0; i < rank; i++) {
        symelem one = {true, 1, NULL};
        const symelem *e = i - (rank - ns) >= 0 ? &spec->e[i - (rank - ns)] : &one;
        const gl_dim *d = i - (rank - r) >= 0 ? &x->shape.dims[i - (rank - r)] : NULL;
        gl_dim *o = &out->shape.dims[i];
        if (e->known && e->value == 1) {
            if (d)
                fill_from_dim(o, d);
        } else if (!d || d->value == 1) {
            fill_dim(o, e);
        } else if (e->known && e->value > 1) {
            fill_dim(o, e);
        } else if (!e->known && e->sym && d->sym && !strcmp(e->sym, d->sym)) {
            fill_dim(o, e);
        }
    }
}

static void refine_constant_of_shape(const symval *spec, gl_type *out)
{
    if (spec->scalar || spec->n > GL_MAX_RANK || out->kind != GL_TYPE_TENSOR ||
        !shape_to_fill(out, out->dtype, (int)spec->n))
        return;
    for (size_t i = 0; i < spec->n; i++)
        fill_dim(&out->shape.dims[i], &spec->e[i]);
}

/* Resize by sizes (every dim, stretched): the output's dims are the sizes, element by
 * element. Exports that upsample to a skip's size compute them as
 * Concat(Shape(x)[0:2], Shape(skip)[2:4]): [N,C,H,W] with N a symbol. */
static void refine_resize(const gl_type *x, const symval *spec, gl_type *out)
{
    if (!x || spec->scalar || x->shape.rank < 0 || spec->n != (size_t)x->shape.rank ||
        !shape_to_fill(out, x->dtype, x->shape.rank))
        return;
    for (size_t i = 0; i < spec->n; i++)
        if (!spec->e[i].known || spec->e[i].value >= 0)
            fill_dim(&out->shape.dims[i], &spec->e[i]);
}

/* Is n a Resize whose output dims are its sizes input (opset 11 on), one per dim: no
 * scales given, no axes, the default stretch policy? */
static bool resize_by_all_sizes(const graph_state *gs, const gl_node *n, int64_t opset)
{
    if (!gl_node_is(n, "Resize") || opset < 11 || n->n_inputs < 4 || !n->inputs[3] ||
        gl_node_attr(n, "axes") ||
        strcmp(gl_node_attr_string(n, "keep_aspect_ratio_policy", "stretch"), "stretch"))
        return false;
    const gl_tensor *scales = n->inputs[2] ? known_value(gs, n->inputs[2]) : NULL;
    return !n->inputs[2] || (scales && scales->count == 0);
}

/* Fill what the shape function left unknown from a shape value it could not read. */
static void refine_with_sym(const graph_state *gs, const gl_node *n, int64_t opset,
                            gl_type *out)
{
    bool reshape = gl_node_is(n, "Reshape") && opset >= 5, expand = gl_node_is(n, "Expand");
    bool cos = gl_node_is(n, "ConstantOfShape"), resize = resize_by_all_sizes(gs, n, opset);
    size_t in = cos ? 0 : resize ? 3 : 1;
    if ((!reshape && !expand && !cos && !resize) || n->n_outputs < 1 || in >= n->n_inputs ||
        known_value(gs, n->inputs[in]))
        return;
    symval *spec = sym_of(gs, n->inputs[in]);
    if (!spec)
        return;
    const gl_type *x = !cos && n->inputs[0] && n->inputs[0]->type.kind == GL_TYPE_TENSOR
                           ? &n->inputs[0]->type
                           : NULL;
    if (reshape)
        refine_reshape(n, x, spec, opset, &out[0]);
    else if (resize)
        refine_resize(x, spec, &out[0]);
    else if (expand)
        refine_expand(x, spec, &out[0]);
    else
        refine_constant_of_shape(spec, &out[0]);
    symval_free(spec);
}

/* ---- nodes, bodies, function calls ----------------------------------------------------- */

static gl_status infer_graph(infer_run *r, gl_graph *g, const graph_state *outer);
static gl_status infer_body(gl_infer_ctx *c, const gl_graph *body, const gl_type *in_types,
                            size_t n_in, gl_type *out_types, size_t n_out);
static gl_status infer_call(infer_run *r, graph_state *gs, const gl_node *n,
                            const gl_function *f, const gl_type *const *in_types,
                            gl_type *out_types);

/* Run the node's shape function (or its function's body) into out[]. GL_ERR_UNSUPPORTED
 * when there is none (noted); other errors are the shape function's. */
static gl_status run_shape_function(infer_run *r, graph_state *gs, gl_node *n,
                                    const gl_type *const *types,
                                    const gl_tensor *const *vals, gl_type *out)
{
    const gl_function *f = called_function(r->m, n);
    if (f)
        return infer_call(r, gs, n, f, types, out);
    const gl_op_def *def = gl_op_for_node(r->m, n);
    if (!def || !def->infer) {
        note_missing(r, n, def ? "" : " (the op is not in the registry)");
        return GL_ERR_UNSUPPORTED;
    }
    char where[512];
    gl_node_where(r->m, n, where, sizeof(where));
    node_job job = {r, gs};
    gl_infer_ctx c = {
        .node = n, .model = r->m, .opset = gl_model_opset(r->m, n->domain),
        .where = where, .n_inputs = n->n_inputs, .in_types = types, .in_values = vals,
        .n_outputs = n->n_outputs, .out_types = out, .infer_body = infer_body, .user = &job,
    };
    return def->infer(&c);
}

static void infer_node(infer_run *r, graph_state *gs, gl_node *n)
{
    size_t ni = n->n_inputs, no = n->n_outputs;
    const gl_type *types_few[FEW];
    const gl_tensor *vals_few[FEW];
    gl_type out_few[FEW];
    const gl_type **types = zeroed(types_few, ni, sizeof(*types));
    const gl_tensor **vals = zeroed(vals_few, ni, sizeof(*vals));
    gl_type *out = zeroed(out_few, no, sizeof(gl_type));
    for (size_t i = 0; i < ni; i++) {
        types[i] = n->inputs[i] ? &n->inputs[i]->type : NULL;
        vals[i] = known_value(gs, n->inputs[i]);
    }
    for (size_t i = 0; i < no; i++)
        gl_shape_init_unknown(&out[i].shape);
    gl_status st = run_shape_function(r, gs, n, types, vals, out);
    if (st == GL_OK) {
        refine_with_sym(gs, n, gl_model_opset(r->m, n->domain), out);
        if (apply_types(r, n, out)) {
            evaluate(r, gs, n, vals);
            propagate_sym(gs, n);
        }
    } else if (st != GL_ERR_UNSUPPORTED && !r->fatal) {
        record_shape_error(r, n);
    }
    gl_error_clear();
    for (size_t i = 0; i < no; i++)
        gl_type_free(&out[i]);
    release(out, out_few);
    release(types, types_few);
    release(vals, vals_few);
}

/* Captures read outer values: they take the outer types (a body states none). */
static void sync_captures(gl_graph *g)
{
    for (size_t i = 0; i < g->n_captures; i++) {
        gl_value *cap = g->captures[i];
        gl_type merged;
        if (cap->outer && merge_type(&cap->type, &cap->outer->type, &merged) == MERGE_GAINED) {
            gl_type_free(&cap->type);
            cap->type = merged;
        } else {
            gl_type_free(&merged);
        }
    }
}

/* Given types merge into the declared types of a body's inputs. */
static void seed_inputs(gl_graph *g, const gl_type *const *given, size_t n_given)
{
    for (size_t i = 0; i < n_given && i < g->n_inputs; i++) {
        gl_type merged;
        if (given[i] && merge_type(&g->inputs[i]->type, given[i], &merged) == MERGE_GAINED) {
            gl_type_free(&g->inputs[i]->type);
            g->inputs[i]->type = merged;
        } else if (given[i]) {
            gl_type_free(&merged);
        }
    }
}

static gl_status infer_body(gl_infer_ctx *c, const gl_graph *body, const gl_type *in_types,
                            size_t n_in, gl_type *out_types, size_t n_out)
{
    node_job *job = c->user;
    infer_run *r = job->run;
    if (r->depth >= MAX_NESTING)
        return gl_fail(GL_ERR_INPUT, "%s: subgraphs nest deeper than %d", c->where,
                       MAX_NESTING);
    /* The pass owns the graph: typing the body's values is part of its job. */
    gl_graph *g = (gl_graph *)body;
    const gl_type **given = gl_xcalloc(n_in ? n_in : 1, sizeof(*given));
    for (size_t i = 0; i < n_in; i++)
        given[i] = in_types ? &in_types[i] : NULL;
    seed_inputs(g, given, n_in);
    free(given);
    sync_captures(g);
    r->depth++;
    gl_status st = infer_graph(r, g, job->gs);
    r->depth--;
    for (size_t i = 0; st == GL_OK && i < n_out && i < g->n_outputs; i++)
        gl_type_copy(&out_types[i], &g->outputs[i]->type);
    return st;
}

/* A function body is shared by its call sites: it is typed for this call and then put
 * back as it was. Its nodes read the caller's attributes through ref_attr_name: for
 * the call, each such attribute takes the caller's value (or, when the caller has none,
 * is hidden so the op's default applies). */
typedef struct attr_swap {
    gl_attr *a;
    gl_attr saved;
} attr_swap;

static size_t bind_attributes(gl_graph *body, const gl_node *call, attr_swap **swaps)
{
    static char hidden[] = "";
    size_t n = 0, cap = 0;
    *swaps = NULL;
    gl_node *bn;
    gl_foreach_node(body, i, bn) {
        for (size_t k = 0; k < bn->n_attrs; k++) {
            gl_attr *a = &bn->attrs[k];
            if (!a->ref_attr_name)
                continue;
            GL_GROW(*swaps, cap, n + 1);
            (*swaps)[n++] = (attr_swap){a, *a};
            const gl_attr *given = gl_node_attr(call, a->ref_attr_name);
            if (given) {
                *a = *given; /* a shallow view, restored before anything frees */
                a->name = (*swaps)[n - 1].saved.name;
                a->ref_attr_name = NULL;
            } else {
                a->name = hidden;
            }
        }
    }
    return n;
}

static void restore_attributes(attr_swap *swaps, size_t n)
{
    for (size_t i = n; i-- > 0;)
        *swaps[i].a = swaps[i].saved;
    free(swaps);
}

static gl_status infer_call(infer_run *r, graph_state *gs, const gl_node *n,
                            const gl_function *f, const gl_type *const *in_types,
                            gl_type *out_types)
{
    (void)gs; /* a function body sees only its parameters */
    gl_graph *body = f->body;
    char where[512];
    gl_node_where(r->m, n, where, sizeof(where));
    if (!body)
        return gl_fail(GL_ERR_INPUT, "%s: function '%s' has no body", where, f->name);
    if (r->depth >= MAX_NESTING)
        return gl_fail(GL_ERR_INPUT, "%s: function calls nest deeper than %d", where,
                       MAX_NESTING);
    /* Unlike a shape function's complaint about one node, a call the bound refuses
     * (recursion, a fan-out of calls) stops the whole run: going on would expand the
     * next call of the same kind, and the next. */
    gl_status st = gl_expansion_enter(&r->calls, f, where);
    if (st != GL_OK) {
        r->fatal = st;
        snprintf(r->fatal_msg, sizeof(r->fatal_msg), "%s", gl_error_message());
        return st;
    }
    /* Keep every type of the body to put back afterwards. */
    gl_type *saved = gl_xcalloc(body->n_values ? body->n_values : 1, sizeof(gl_type));
    for (size_t i = 0; i < body->n_values; i++) {
        gl_shape_init_unknown(&saved[i].shape);
        if (body->values[i])
            gl_type_copy(&saved[i], &body->values[i]->type);
    }
    attr_swap *swaps;
    size_t n_swaps = bind_attributes(body, n, &swaps);
    seed_inputs(body, in_types, n->n_inputs);
    bool quiet = r->quiet;
    r->quiet = true;
    r->depth++;
    st = infer_graph(r, body, NULL);
    r->depth--;
    r->quiet = quiet;
    gl_expansion_leave(&r->calls);
    for (size_t i = 0; st == GL_OK && i < n->n_outputs && i < body->n_outputs; i++)
        gl_type_copy(&out_types[i], &body->outputs[i]->type);
    restore_attributes(swaps, n_swaps);
    for (size_t i = 0; i < body->n_values; i++) {
        if (body->values[i]) {
            gl_type_free(&body->values[i]->type);
            body->values[i]->type = saved[i]; /* moved back */
        } else {
            gl_type_free(&saved[i]);
        }
    }
    free(saved);
    return st;
}

static gl_status infer_graph(infer_run *r, gl_graph *g, const graph_state *outer)
{
    if (!gl_graph_is_sorted(g))
        return gl_fail(GL_ERR_INPUT, "shape-inference: graph '%s' is not in topological "
                       "order (run toposort first)", g->name ? g->name : "");
    graph_state gs = {g, outer, gl_xcalloc(g->n_values + 1, sizeof(gl_tensor *)),
                      gl_xcalloc(g->n_values + 1, sizeof(bool)),
                      gl_xcalloc(g->n_values + 1, sizeof(symval *)), g->n_values};
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (r->stopped || r->fatal)
            break;
        infer_node(r, &gs, n);
    }
    for (size_t i = 0; i < gs.n; i++) {
        if (gs.owned[i])
            gl_tensor_free((gl_tensor *)gs.known[i]);
        symval_free(gs.sym[i]);
    }
    free(gs.known);
    free(gs.owned);
    free(gs.sym);
    return GL_OK;
}

static gl_status infer_root(infer_run *r, gl_graph *g)
{
    gl_expansion_init(&r->calls, r->m);
    gl_status st = infer_graph(r, g, NULL);
    if (r->fatal)
        st = gl_fail(r->fatal, "%s", r->fatal_msg);
    report_missing(r);
    return st;
}

gl_status gl_infer_graph(gl_model *m, gl_graph *g, gl_pass_ctx *ctx, size_t *changed)
{
    infer_run r = {.m = m, .ctx = ctx};
    gl_status st = infer_root(&r, g);
    if (changed)
        *changed = r.changed;
    return st;
}

/* ---- the pass ------------------------------------------------------------------------- */

typedef struct type_census {
    size_t values, typed, fully_known;
} type_census;

static void count_types(const gl_graph *g, type_census *c, int depth)
{
    gl_node *n;
    gl_foreach_node(g, i, n) {
        for (size_t k = 0; k < n->n_outputs; k++) {
            const gl_type *t = n->outputs[k] ? &n->outputs[k]->type : NULL;
            if (!t)
                continue;
            c->values++;
            c->typed += t->kind == GL_TYPE_OPAQUE ||
                        (t->kind == GL_TYPE_TENSOR && t->dtype != GL_DT_UNDEFINED &&
                         t->shape.rank >= 0);
            c->fully_known += type_fully_known(t);
        }
        for (size_t a = 0; a < n->n_attrs && depth < MAX_NESTING; a++) {
            const gl_attr *at = &n->attrs[a];
            if (at->type == GL_ATTR_GRAPH && at->g)
                count_types(at->g, c, depth + 1);
            for (size_t s = 0; at->type == GL_ATTR_GRAPHS && s < at->n; s++)
                if (at->graphs[s])
                    count_types(at->graphs[s], c, depth + 1);
        }
    }
}

/* The summary is a note, not a rewrite: it costs no budget. */
static gl_decision *summary_record(gl_pass_ctx *ctx)
{
    return gl_pass_decide(ctx, "summary", GL_NOTE, "typing values");
}

gl_status gl_pass_shape_inference(gl_graph *g, gl_pass_ctx *ctx)
{
    infer_run r = {.m = ctx->model ? ctx->model : g->model, .ctx = ctx};
    int64_t summary = ctx->log && !ctx->log->count_only && gl_graph_is_sorted(g)
                          ? summary_record(ctx)->id
                          : -1;
    gl_status st = infer_root(&r, g);
    if (st != GL_OK)
        return st;
    type_census c = {0};
    count_types(g, &c, 0);
    gl_decision *d = logged(ctx, summary);
    if (!d)
        d = summary_record(ctx);
    set_reason(d, "typed %zu %s (%zu fully known)%s", c.typed,
               gl_noun((long long)c.typed, "value", "values"), c.fully_known,
               r.stopped ? "; stopped by the rewrite budget" : "");
    gl_decision_add_number(d, "values", (double)c.values);
    gl_decision_add_number(d, "typed", (double)c.typed);
    gl_decision_add_number(d, "fully_known", (double)c.fully_known);
    gl_decision_add_number(d, "unknown", (double)(c.values - c.typed));
    gl_decision_add_number(d, "gained", (double)r.gained);
    gl_decision_add_number(d, "nodes_changed", (double)r.changed);
    /* Without records and budget this was gl_infer_graph: the graph is as that leaves it. */
    ctx->typed = !r.stopped && g == r.m->graph;
    return GL_OK;
}

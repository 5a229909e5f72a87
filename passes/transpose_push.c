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
 * The handler (transpose_handlers.c) checks everything first, then rewrites with the
 * helpers of transpose_rewrite.c (which calls neither the sweep nor a handler): inputs get
 * the inverse permutation (gl_tp_transpose_input: cancel, compose, reuse, transpose a
 * constant in place, or add a Transpose), outputs a Transpose each, attributes their
 * remapped axes. Pushed Transposes are new nodes appended to the graph; the sweep sees
 * them as producers of later nodes' inputs, and the graph is sorted again at the end.
 *
 * Afterwards, rules ONNX Runtime does not have: a Transpose that only moves size-1 dims
 * is a Reshape (or nothing), and one read only for its type or a static shape is dead.
 * In quantized graphs, DequantizeLinear -> op -> QuantizeLinear units are kept whole.
 * Before the sweep, the net-transposes guard (transpose_guard.c) sweeps in trial to find
 * the pushes whose region would end with more Transposes than it found, and the sweep
 * refuses those: the pass never leaves more Transposes than it found. A first trial that
 * finds none is kept as the sweep (trial_in_place).
 */
#include "passes/transpose.h"

#include "ops/opkit.h"
#include "util/hash.h"
#include "util/plural.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        return gl_tp_constant_tensor(v) != NULL;
    return gl_tp_dq_of_constant(v->graph, v) != NULL;
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
    if (gl_tp_is_qdq_op(p, "DequantizeLinear") && p->inputs[0] && p->inputs[0]->producer) {
        gl_node *q = p->inputs[0]->producer;
        if (gl_node_is(q, "Squeeze")) {
            gl_node *qq = q->inputs[0] ? q->inputs[0]->producer : NULL;
            if (gl_tp_is_transpose(qq))
                p = qq;
        } else {
            p = q;
        }
    }
    int64_t perm2[GL_MAX_RANK];
    int rank2;
    if (gl_tp_is_transpose(p) && gl_tp_read_perm(p, perm2, &rank2)) {
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
        if (!run->ort_only && p == v->producer && rank2 == rank && gl_value_rank(pre) == rank) {
            gl_tp_perm_compose(perm2, inv, rank, composed);
            if (gl_tp_reshape_target(&pre->type.shape, composed, rank, shape) &&
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
             gl_value_rank(v) < 0 ? ", unknown: counted as 5" : "");
    return r;
}

/* ==== extensions ============================================================================= */

static char *handler_key(const char *domain, const char *op)
{
    bool dflt = !*gl_domain_canonical(domain);
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

/* The memo: one entry per node id, and one per op (domain and op type) met. */
typedef struct memo_handler {
    const gl_tp_handler *handler;
    uint8_t state; /* MEMO_UNKNOWN, or what the lookup found */
} memo_handler;

enum { MEMO_UNKNOWN, MEMO_FOUND, MEMO_LAYOUT_SENSITIVE };

typedef struct memo_op {
    uint64_t hash;  /* of the op type */
    char *domain, *op_type; /* copies: the nodes that had them may go */
    memo_handler found;
} memo_op;

struct gl_tp_memo {
    memo_handler *handlers;
    size_t n_handlers;
    memo_op *ops;
    size_t n_ops, cap_ops;
};

static const gl_tp_handler *lookup_handler(const gl_tp_run *run, const gl_node *n,
                                           bool *layout_sensitive);

/* What the lookup finds depends only on the node's domain and op type (the run's opset,
 * registry and model are fixed), so a graph of 100k nodes and a dozen ops looks each op
 * up once: the lookup searches the registry, the op table and the handler rows with
 * string compares, which were most of the sweep's reverse pass (find_leads) on the
 * 100k-node ladder (issue 23). */
static memo_handler lookup_op(const gl_tp_run *run, gl_tp_memo *memo, const gl_node *n)
{
    uint64_t h = gl_hash_bytes(n->op_type, strlen(n->op_type));
    for (size_t i = 0; i < memo->n_ops; i++) {
        const memo_op *o = &memo->ops[i];
        if (o->hash == h && !strcmp(o->op_type, n->op_type) && !strcmp(o->domain, n->domain))
            return o->found;
    }
    bool layout;
    const gl_tp_handler *handler = lookup_handler(run, n, &layout);
    GL_GROW(memo->ops, memo->cap_ops, memo->n_ops + 1);
    memo_op *o = &memo->ops[memo->n_ops++];
    *o = (memo_op){h, gl_xstrdup(n->domain), gl_xstrdup(n->op_type),
                   {handler, layout ? MEMO_LAYOUT_SENSITIVE : MEMO_FOUND}};
    return o->found;
}

static void memo_free(gl_tp_memo *memo)
{
    for (size_t i = 0; i < memo->n_ops; i++) {
        free(memo->ops[i].domain);
        free(memo->ops[i].op_type);
    }
    free(memo->ops);
    free(memo->handlers);
}

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
    if (e->state == MEMO_UNKNOWN)
        *e = lookup_op(run, memo, n);
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
    bool dflt = !*n->domain;
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
        if (which == GL_TP_NON_SCALAR && gl_value_rank(v) == 0)
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
        if (gl_tp_is_transpose(n)) {
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
    gl_decision_add_node_ref(d, a->transpose);
    gl_decision_add_node_ref(d, a->node);
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

/* A forced push's record says the push was made and what it overrode (the refusal's
 * text says the Transpose stays). Only a cost, the custom check or the guard refuse in a
 * way that can be forced: a handler's refusal is one of correctness. */
static void say_forced(gl_tp_run *run, gl_decision *d, const gl_tp_args *a,
                       const char *perm_text, verdict_source by, const cost_report *c,
                       const guard_finding *gf)
{
    char overrode[300];
    if (by == BY_CUSTOM)
        snprintf(overrode, sizeof(overrode), "the custom cost check");
    else if (by == BY_GUARD && gf->start < 0)
        snprintf(overrode, sizeof(overrode), "the guard: trial sweeps kept ending with more "
                 "Transposes than they found");
    else if (by == BY_GUARD)
        snprintf(overrode, sizeof(overrode), "the guard: in a trial sweep the pushes of its "
                 "region ended with %d %s where it had %d without them (%s)", gf->end,
                 gl_noun(gf->end, "Transpose", "Transposes"), gf->start, gf->region);
    else
        snprintf(overrode, sizeof(overrode), "the cost model: input cost %d, total %d (both "
                 "must fall below 0)", c->in_cost, c->total);
    gl_pass_forced_reason(run->ctx, d, "Transpose '%s' (perm %s) pushed below %s '%s', "
                          "overriding %s", a->transpose->name, perm_text, a->node->op_type,
                          a->node->name, overrode);
}

/* A push the cost (or the handler) turned down, with everything that was weighed. A
 * refusal by the cost model or the guard may be forced (--set transpose-push.force=ID):
 * the handler found the push correct, only not worth it. The record is returned: applied
 * when forced. */
static gl_decision *record_refusal(gl_tp_run *run, const gl_tp_args *a, const gl_tp_handler *h,
                                   const gl_tp_plan *plan, const cost_report *c,
                                   verdict_source by, bool outputs_moved,
                                   const char *handler_why, const guard_finding *gf,
                                   bool forceable)
{
    char rule[160], perm_text[GL_MAX_RANK * 4];
    const gl_node *n = a->node, *t = a->transpose;
    snprintf(rule, sizeof(rule), "push-through-%s", n->op_type);
    gl_tp_perm_format(a->perm, a->rank, perm_text, sizeof(perm_text));
    gl_decision *d;
    if (by == BY_CUSTOM)
        d = gl_pass_refuse(run->ctx, rule, forceable, "the custom cost check stops "
                           "Transpose '%s' above %s '%s'", t->name, n->op_type, n->name);
    else if (by == BY_HANDLER)
        d = gl_pass_refuse(run->ctx, rule, forceable, "%s", handler_why);
    else if (by == BY_GUARD && gf->start < 0)
        d = gl_pass_refuse(run->ctx, rule, forceable, "Transpose '%s' (perm %s) stays "
                           "above %s '%s': the cost model pushes (input cost %d, total %d), "
                           "but trial sweeps kept ending with more Transposes than they "
                           "found, so no push is made", t->name, perm_text, n->op_type,
                           n->name, c->in_cost, c->total);
    else if (by == BY_GUARD)
        d = gl_pass_refuse(run->ctx, rule, forceable, "Transpose '%s' (perm %s) stays "
                           "above %s '%s': the cost model pushes (input cost %d, total %d), "
                           "but in a trial sweep the pushes of its region ended with %d "
                           "Transposes where it had %d without them (%s)", t->name, perm_text, n->op_type,
                           n->name, c->in_cost, c->total, gf->end, gf->start, gf->region);
    else
        d = gl_pass_refuse(run->ctx, rule, forceable, "Transpose '%s' (perm %s) stays "
                           "above %s '%s': input cost %d, total %d (both must fall below "
                           "0)", t->name, perm_text, n->op_type, n->name, c->in_cost,
                           c->total);
    say_forced(run, d, a, perm_text, by, c, gf);
    add_common(d, a);
    gl_decision_add_text(d, "handler", h->family);
    add_cost_numbers(d, c, plan, outputs_moved);
    gl_decision_add_text(d, "decided_by", source_name(by));
    if (by == BY_GUARD && gf->start >= 0) {
        gl_decision_add_number(d, "region_transposes_before", gf->start);
        gl_decision_add_number(d, "region_transposes_after", gf->end);
    }
    return d;
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
    bool meeting = gl_tp_is_transpose(n);
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
    gl_decision *refusal = NULL;
    if (push && ok && !meeting &&
        gl_tp_guard_refuses(run, t, n, &gf.start, &gf.end, &gf.region))
        refusal = record_refusal(run, &a, h, &plan, &c, BY_GUARD, outputs_moved, why, &gf,
                                 true);
    else if (!push || !ok)
        refusal = record_refusal(run, &a, h, &plan, &c, push ? BY_HANDLER : by, outputs_moved,
                                 why, &gf, ok);
    if (refusal && refusal->verdict == GL_APPLIED) { /* forced */
        gl_tp_guard_before_push(run, &a);
        run->for_node = a.node;
        run->decision = refusal->id;
        st = h->apply(&a, &plan);
        run->for_node = NULL;
        if (st == GL_OK)
            gl_tp_guard_after_push(run, meeting);
        *pushed = st == GL_OK;
    } else if (!refusal) {
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

/* The one budget gate: every rewrite asks it before its first edit. Once the budget
 * (PASS:K) is spent the whole sweep stops, not just this candidate, so "the first K
 * rewrites" means the same in every replay. */
static bool budget_spent(gl_tp_run *run)
{
    if (!run->stopped && !gl_pass_may_rewrite(run->ctx))
        run->stopped = true;
    return run->stopped;
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
        if (!gl_tp_is_transpose(t) || !gl_tp_read_perm(t, perm, &rank))
            continue;
        if (budget_spent(run))
            return GL_OK;
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
    gl_decision_add_node_ref(d, n);
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
    if (gl_tp_is_transpose(n)) {
        int64_t perm[GL_MAX_RANK];
        int rank;
        if (gl_tp_read_perm(n, perm, &rank) && rank == t->rank && gl_tp_tensor_transpose(t, perm, rank) == GL_OK)
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
        if (!gl_tp_is_transpose(n) && !gl_node_is(n, "Squeeze"))
            continue;
        gl_value *c = n->inputs[0], *out = n->outputs[0];
        if (!gl_tp_local_constant(run->g, c) || !out || !out->n_uses || !gl_value_uses_comprehensive(out))
            continue;
        if (budget_spent(run))
            return GL_OK;
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
        gl_tp_remove_constant_if_unused(run, c);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

static bool same_constant(const gl_value *a, const gl_value *b)
{
    if (a == b)
        return true;
    const gl_tensor *ta = a ? gl_tp_constant_tensor(a) : NULL, *tb = b ? gl_tp_constant_tensor(b) : NULL;
    return ta && tb && gl_tensor_equal(ta, tb);
}

/* A zero point given as a constant of zeros equals an omitted one. */
static bool zero_point_default(const gl_value *zp)
{
    const gl_tensor *t = zp ? gl_tp_constant_tensor(zp) : NULL;
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
    if (strcmp(dq->domain, q->domain) ||
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
    if (!gl_tp_is_qdq_op(dq, "DequantizeLinear") || !gl_tp_sole_use(dq->outputs[0]) ||
        !q->outputs[0] || !qdq_pair_matches(dq, q))
        return GL_OK;
    gl_value *qin = dq->inputs[0], *qout = q->outputs[0];
    bool consumer_path = gl_value_uses_comprehensive(qout);
    bool output_path = !consumer_path && !qout->n_uses && qin->producer &&
                       gl_tp_sole_use(qin);
    if (!consumer_path && !output_path)
        return GL_OK;
    if (budget_spent(run))
        return GL_OK;
    gl_decision *d = decide_on(run, q, "qdq-remove-pair", "DequantizeLinear '%s' -> "
                               "QuantizeLinear '%s' with the same scale and zero point and "
                               "nothing between: both go", dq->name, q->name);
    gl_decision_add_node_ref(d, dq);
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
    gl_tp_quant_info qi;
    if (!gl_tp_is_qdq_op(dq, "DequantizeLinear") || !out || !gl_tp_sole_use(dq->outputs[0]) ||
        !gl_tp_quant_info_of(dq, &qi))
        return GL_OK;
    if (out->n_uses > 1 || (out->n_uses == 1 && gl_tp_is_qdq_op(out->uses[0].node, "QuantizeLinear")) ||
        (out->n_uses == 0 && !out->n_output_refs))
        return GL_OK;
    if (budget_spent(run))
        return GL_OK;
    decide_on(run, t, "qdq-restore-q", "Transpose '%s' after DequantizeLinear '%s' is no "
              "longer followed by a QuantizeLinear: Q -> DQ added so the unit stays whole",
              t->name, dq->name);
    *done = true;
    return gl_tp_make_qdq_unit(run, dq);
}

/* prev -> Transpose -> Q: the Transpose's unit lost its DQ; add Q -> DQ before it. */
static gl_status restore_missing_dq(gl_tp_run *run, gl_node *t, bool *done)
{
    *done = false;
    gl_value *in = t->inputs[0], *out = t->outputs[0];
    gl_node *q = out && gl_tp_sole_use(out) ? out->uses[0].node : NULL;
    gl_node *prev = in ? in->producer : NULL;
    gl_tp_quant_info qi;
    int64_t perm[GL_MAX_RANK];
    int rank;
    if (!gl_tp_is_qdq_op(q, "QuantizeLinear") || !prev || gl_tp_is_qdq_op(prev, "DequantizeLinear") ||
        in->n_uses != 1 || !gl_tp_quant_info_of(q, &qi) || !gl_tp_read_perm(t, perm, &rank))
        return GL_OK;
    if (qi.per_axis)
        qi.axis = perm[qi.axis];
    if (budget_spent(run))
        return GL_OK;
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
        return gl_tp_internal(run, "adding a Q -> DQ pair");
    gl_tp_set_quant_axis(run, nq, &qi);
    gl_tp_set_quant_axis(run, ndq, &qi);
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
        if (gl_tp_is_qdq_op(n, "QuantizeLinear"))
            st = remove_empty_dq_q(run, n, &done);
        else if (gl_tp_is_transpose(n) && (st = restore_missing_q(run, n, &done)) == GL_OK && !done)
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
    if (budget_spent(run))
        return GL_OK;
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
    if (!x || !out || !gl_tp_read_perm(t, perm, &rank) || gl_value_rank(x) != rank)
        return GL_OK;
    bool identity = true;
    for (int i = 0; i < rank; i++)
        identity = identity && (perm[i] == i || (x->type.shape.dims[i].value == 1 &&
                                                 x->type.shape.dims[perm[i]].value == 1));
    if (!identity && !gl_tp_reshape_target(&x->type.shape, perm, rank, shape))
        return GL_OK;
    if (budget_spent(run))
        return GL_OK;
    char perm_text[GL_MAX_RANK * 4], type[200];
    gl_tp_perm_format(perm, rank, perm_text, sizeof(perm_text));
    gl_type_format(&x->type, type, sizeof(type));
    if (identity) {
        gl_decision *d = decide_on(run, t, "identity-transpose", "Transpose '%s' (perm %s) "
                                   "of %s changes nothing: it goes", t->name, perm_text, type);
        gl_decision_add_text(d, "perm", perm_text);
        return gl_pass_vetoed(run->ctx, d) ? GL_OK : gl_tp_bypass(run, t, x, NULL);
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
        return gl_tp_internal(run, "adding a Reshape");
    gl_status st = gl_move_output(run->g, t, 0, r, 0);
    return st == GL_OK ? gl_remove_node(run->g, t) : st;
}

static gl_status simplify_remaining(gl_tp_run *run)
{
    gl_node *n;
    gl_foreach_node(run->g, i, n) {
        if (!gl_tp_is_transpose(n))
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
        if (gl_tp_is_qdq_op(n, "DequantizeLinear"))
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
    memo_free(&memo);
    /* New nodes went to the end; put them where they belong (also after a stop). */
    if (st == GL_OK)
        st = gl_toposort(g, NULL);
    if (st == GL_OK && !run.stopped && gl_pass_may_rewrite(ctx))
        st = push_bodies(g, ctx, r, m, opset, guard);
    return st;
}

/* The Transposes in g and its bodies: without one, a sweep changes nothing. */
static size_t count_transposes(const gl_graph *g)
{
    size_t count = 0;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        count += gl_tp_is_transpose(n);
        for (size_t a = 0; a < n->n_attrs; a++) {
            const gl_attr *at = &n->attrs[a];
            if (at->type == GL_ATTR_GRAPH && at->g)
                count += count_transposes(at->g);
            for (size_t k = 0; at->type == GL_ATTR_GRAPHS && k < at->n; k++)
                if (at->graphs[k])
                    count += count_transposes(at->graphs[k]);
        }
    }
    return count;
}

/* A trial on a clone of m, with no budget and no records: m stays as it is. */
static gl_status trial_on_clone(const gl_pass_ctx *ctx, const gl_tp_registry *r,
                                const gl_model *m, int64_t opset, gl_tp_guard *guard,
                                size_t *transposes)
{
    gl_model *trial = gl_model_clone(m);
    gl_pass_ctx tctx = {.model = trial, .pass = ctx->pass, .step = ctx->step,
                        .budget = GL_BUDGET_UNLIMITED, .settings = ctx->settings};
    gl_status st = push_graph(trial->graph, &tctx, r, trial, opset, guard);
    *transposes = count_transposes(trial->graph);
    gl_decision_clear(&tctx.scratch);
    gl_model_free(trial);
    return st;
}

/* The first trial makes ONNX Runtime's pushes (no refusal exists yet); when it finds
 * nothing to refuse, the real sweep makes exactly those pushes again, on a graph equal
 * to the trial's clone (ids, order, uses), and records exactly what a sweep records.
 * So the first trial may be the real sweep itself when nothing the trials ignore can
 * hold the real sweep back: no budget (PASS:K) and no --set veto or force (a trial
 * records nothing, so those never apply to it). Not with extensions (the layout pass's
 * registry): their handlers and cost check are asked once per trial and once in the
 * sweep, as before, since they may count or remember what they are asked. */
static bool first_trial_in_place(const gl_pass_ctx *ctx, const gl_tp_registry *r)
{
    return !r && ctx->budget == GL_BUDGET_UNLIMITED && !gl_pass_overridden(ctx);
}

/* The first trial on m itself, with the real records, under an undo journal
 * (ir/journal.h). When it finds nothing to refuse (*kept) it was the real sweep: the
 * journal commits, and that is one sweep fewer (on the 100k-node ladder, whose trial
 * refuses nothing, about 0.15 s). When it does (or fails), the journal takes the graph
 * back and the log its records, which leaves everything as a trial on a clone would
 * have: the trials after it and the real sweep run as before. The journal keeps only what
 * the trial touches, where a clone kept aside copied the whole model (about 70 MB of the
 * ladder's 181 MB heap peak, and 0.35 s to make and free). A rollback that does not give
 * back the graph the step began with (ctx->fingerprint) is a bug: an error, not a graph
 * the pass silently changed. */
static gl_status trial_in_place(gl_pass_ctx *ctx, const gl_tp_registry *r, gl_model *m,
                                int64_t opset, gl_tp_guard *guard, size_t *transposes,
                                bool *kept)
{
    gl_journal *j = gl_journal_begin(m->graph);
    if (!j) /* a journal runs already (a caller's trial): this one goes on a clone */
        return *kept = false, trial_on_clone(ctx, r, m, opset, guard, transposes);
    size_t logged = ctx->log ? ctx->log->n : 0;
    int64_t applied = ctx->applied;
    gl_status st = push_graph(m->graph, ctx, r, m, opset, guard);
    *transposes = count_transposes(m->graph);
    *kept = st == GL_OK && gl_tp_guard_refuses_nothing(guard);
    if (*kept) {
        gl_journal_commit(j);
        return st;
    }
    gl_journal_rollback(j);
    if (ctx->log)
        gl_decision_log_truncate(ctx->log, logged);
    ctx->applied = applied;
    if (st == GL_OK && ctx->fingerprint && gl_graph_fingerprint(m->graph) != ctx->fingerprint)
        st = gl_fail(GL_ERR_INTERNAL, "%s: the guard's first trial was taken back, but the "
                     "graph differs from the one the step began with (journal rollback)",
                     ctx->pass ? ctx->pass->name : "transpose-push");
    return st;
}

/* The guard's trial sweeps until one leaves no region with more Transposes than it
 * found (transpose.h); *swept when the first was the real sweep (trial_in_place). The
 * first trial makes ONNX Runtime's pushes (no refusals yet); when the last one, which
 * the real sweep repeats, ends with more Transposes than that, the refusals are dropped:
 * the guard never leaves more than ORT's cost model does (issue 22). */
static gl_status plan_refusals(gl_pass_ctx *ctx, const gl_tp_registry *r, gl_model *m,
                               int64_t opset, gl_tp_guard *guard, bool *swept)
{
    gl_status st = GL_OK;
    size_t unguarded = 0, guarded = 0;
    bool first = true;
    *swept = false;
    gl_tp_guard_set_trial(guard, true);
    do {
        if (first && first_trial_in_place(ctx, r))
            st = trial_in_place(ctx, r, m, opset, guard, &guarded, swept);
        else
            st = trial_on_clone(ctx, r, m, opset, guard, &guarded);
        if (first)
            unguarded = guarded;
        first = false;
    } while (st == GL_OK && gl_tp_guard_next_round(guard));
    gl_tp_guard_set_trial(guard, false);
    if (st == GL_OK && guarded > unguarded)
        gl_tp_guard_keep_ort(guard, guarded, unguarded);
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
    bool swept = false;
    if (!gl_pass_option_value(ctx, "ort-only") && g == m->graph && count_transposes(g) > 0) {
        guard = gl_tp_guard_new();
        st = plan_refusals(ctx, r, m, opset, guard, &swept);
    }
    if (st == GL_OK && !swept)
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

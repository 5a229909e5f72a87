/* fusion.c — the `fusion` pass: chains of nodes the target runs as one kernel (or one
 * unit of kernels) become one node calling a model-local function of domain
 * graphlab.fused whose body is the chain's own nodes, names kept.
 *
 * Greedy in topological order (seed 004): each node is offered, as a head, to every
 * rule of the table (fusion_rules.c). A rule's candidate is found in two phases that
 * edit nothing:
 *  1. the walk: from the head along first outputs, each next node the single reader of
 *     the previous one and in the rule's next step; a link where the value is also a
 *     graph output, or has other readers, ends the walk ("graph-output", "branch") when
 *     a reader would have continued the chain; a fan-out step (the channel Slices after
 *     a channel shuffle) takes every reader of the value at once, all in the step or none,
 *     and ends the walk: the group returns each of their outputs;
 *  2. the constraints, node by node: one precision along the chain ("precision"); no
 *     implicit broadcast but what the fused kernel implements, a per-channel or [N]
 *     operand or a scalar ("broadcast"; all three refused under fusion.exact-shapes=1,
 *     "exact-shapes"); shapes that must be known to be proven ("shapes"); what oneDNN
 *     2.6 can run ("target": binary post-op operand order, Clip bounds fixed, the 1x1
 *     and depthwise convolutions of its depthwise post-op, a BatchNormalization in
 *     inference of rank 4 or 5, at most 32 post-ops).
 * The candidate is the longest prefix of the walk that passes them. It is refused whole
 * when it has more nodes than the rule's maximum ("max-ops") or more post-ops than
 * oneDNN takes ("target"): a longer chain is never cut to fit, and no shorter rule
 * takes that head either. A unit the backend runs as several primitives (FFN, attention,
 * 1x1+depthwise, ...: the rows whose target is GL_FU_UNIT) is grouped by default; under
 * --set fusion.units=0 it is refused ("units") and shorter rules may take its head.
 * Of the candidates at one head the longest wins, ties going
 * to the earlier row. Each group is one decision listing its members; a head where rules
 * matched the pattern but every one was refused gets one refusal (of the rule that
 * walked furthest) naming the constraint and the value, shape or dtype that broke it.
 *
 * Near misses (issue 24: "why was this not fused" always has an answer). A walk that
 * stops at a node no rule takes as a head, whose one reader would have completed the
 * rule as its next member, records one refusal of that rule at that head (constraint
 * "near-miss") naming the node between: "Gemm -> Reshape -> Gelu: Reshape 'r' between
 * Gemm 'g' and Gelu 'a' is not a member of rule gemm-activation". Nothing is said where
 * the node between heads a rule itself (Conv -> Conv -> Relu: the Relu is the second
 * Conv's), where the head is an optional step (attention's scale), or where a value
 * branches. Where the node between is a view (Reshape, Flatten, Squeeze, Unsqueeze) and
 * the next member elementwise with scalar parameters (GPT-2's Hugging Face Conv1D form,
 * Gemm -> Reshape -> Gelu), the member is moved before the view instead (decision
 * "move-before-view": the same values, exactly) and the head offered again, so the rule
 * takes it.
 *
 * The function of a group takes the group's inputs from outside it (initializers too:
 * ONNX functions have none of their own) and returns the last node's outputs; the model
 * imports graphlab.fused and gets IR 8. The fused node is named after its function
 * (FusedConvRelu_3) and keeps the provenance of its members. A node of graphlab.fused,
 * from an earlier run or a saved model, is in no rule: groups are never fused twice.
 * Only the model's graph is fused, not the bodies of If/Loop/Scan.
 */
#include "passes/fusion.h"
#include "exec/target.h"
#include "ops/opkit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The target's answer on a group, kept for groups with the same signature (the layers of
 * a network repeat: one probe, one measurement for all of them). */
typedef struct fu_memo {
    uint64_t signature;
    char *head;          /* the head of the group it was asked for (owned) */
    struct fu_verdict *verdict;
} fu_memo;

typedef struct fu_ctx {
    gl_graph *g;
    gl_model *m;
    gl_pass_ctx *pass;
    bool exact;
    bool units; /* fusion.units (default 1): group units of several primitives too */
    bool probe;   /* fusion.probe (default 1): ask the target how it runs each group */
    bool measure; /* fusion.measure: time each group fused against its members */
    fu_memo *memo; /* owned */
    size_t n_memo, cap_memo;
    int64_t opset;
    int counter; /* the next function number tried */
    gl_fu_heads heads; /* which rules may take a node as head */
} fu_ctx;

typedef struct fu_cand {
    const gl_fu_rule *rule;
    gl_node *nodes[GL_FU_MAX_CHAIN]; /* the walk */
    int step_of[GL_FU_MAX_CHAIN];
    size_t n;
    size_t fan_from;      /* the first member of a fan-out step (GL_FU_FANOUT), or 0 */
    size_t cut;           /* the prefix that passes the constraints */
    gl_node *blocked;     /* where a constraint stopped the candidate, or NULL */
    int blocked_step;     /* the step the blocked reader of a link would have taken */
    const char *constraint;
    int post_ops;
    /* A near miss: the walk stopped at `between`, which no rule takes, and its one
     * reader `beyond` would have been the rule's next member (Gemm -> Reshape -> Gelu). */
    gl_node *between, *beyond;
    bool too_long; /* refused for its length: no shorter rule takes the head either */
    enum { FU_NONE, FU_REFUSE, FU_MATCH } verdict;
    /* why[] is written only when `loud`: most candidates are refused silently (a walk
     * that ends before the rule's pattern is whole), and formatting their text for each
     * node of a big graph cost more than the rest of the pass. A candidate that speaks
     * in a decision is evaluated again, loudly (speak). Last: evaluate clears what comes
     * before it. */
    bool loud;
    char why[480];
} fu_cand;

static void format_why(fu_cand *k, const char *constraint, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void format_why(fu_cand *k, const char *constraint, const char *fmt, ...)
{
    k->constraint = constraint;
    int w = snprintf(k->why, sizeof(k->why), "%s: ", constraint);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->why + w, sizeof(k->why) - (size_t)w, fmt, ap);
    va_end(ap);
}

/* The constraint that stops k, with its text when k is loud: a macro, so that the text's
 * arguments (type_text's formatting among them) are not even computed when it is not. */
#define set_why(k, constraint_, ...)                                                        \
    ((k)->loud ? format_why((k), (constraint_), __VA_ARGS__)                               \
               : (void)((k)->constraint = (constraint_)))

static const char *type_text(const gl_value *v, char *buf, size_t len)
{
    gl_type_format(&v->type, buf, len);
    return buf;
}

/* ---- shapes ------------------------------------------------------------------------ */

typedef enum shape_rel {
    SH_SAME,    /* the same shape */
    SH_SCALAR,  /* one element, no higher rank */
    SH_CHANNEL, /* 1 everywhere but the channel axis */
    SH_LAST,    /* 1 everywhere but the last axis: an [N] bias */
    SH_LEADING, /* the trailing dims equal, 1 before: a mask broadcast over batch/heads */
    SH_OTHER,
    SH_UNKNOWN,
} shape_rel;

static const char *rel_name(shape_rel r)
{
    static const char *const names[] = {"same shape", "scalar", "per-channel", "[N]",
                                        "broadcast over leading dims", "other", "unknown"};
    return names[r];
}

static bool dim_eq(const gl_dim *a, const gl_dim *b)
{
    if (a->value >= 0 && b->value >= 0)
        return a->value == b->value;
    return a->sym && b->sym && !strcmp(a->sym, b->sym);
}

static bool dim_known(const gl_dim *d) { return d->value >= 0; }

/* How `o`, the other operand of an elementwise node, broadcasts against `x`, the
 * chain's value; channel: x's channel axis (-1: none). */
static shape_rel classify(const gl_value *o, const gl_value *x, int channel)
{
    if (o->type.kind != GL_TYPE_TENSOR || x->type.kind != GL_TYPE_TENSOR)
        return SH_UNKNOWN;
    const gl_shape *so = &o->type.shape, *sx = &x->type.shape;
    if (so->rank < 0 || sx->rank < 0)
        return SH_UNKNOWN;
    if (so->rank > sx->rank)
        return SH_OTHER;
    int off = sx->rank - so->rank;
    bool same = so->rank == sx->rank, all_one = true, unknown = false;
    for (int k = 0; k < so->rank; k++) {
        const gl_dim *od = &so->dims[k], *xd = &sx->dims[k + off];
        same &= dim_eq(od, xd);
        all_one &= od->value == 1;
        unknown |= !dim_eq(od, xd) && (!dim_known(od) || !dim_known(xd));
    }
    if (same)
        return SH_SAME;
    if (all_one)
        return SH_SCALAR;
    int axes[2] = {channel, sx->rank - 1};
    for (int a = 0; a < 2; a++) {
        int ax = axes[a];
        if (ax < off || ax >= sx->rank)
            continue;
        bool ok = true;
        for (int k = 0; k < so->rank && ok; k++)
            ok = k + off == ax ? dim_eq(&so->dims[k], &sx->dims[ax]) : so->dims[k].value == 1;
        if (ok)
            return a == 0 ? SH_CHANNEL : SH_LAST;
    }
    /* Leading: 1s, then dims equal to x's to the end. */
    int k = 0;
    while (k < so->rank && so->dims[k].value == 1)
        k++;
    bool lead = true;
    for (int j = k; j < so->rank && lead; j++)
        lead = dim_eq(&so->dims[j], &sx->dims[j + off]);
    if (lead)
        return SH_LEADING;
    return unknown ? SH_UNKNOWN : SH_OTHER;
}

/* The channel axis of a convolution head's output; -1 for other heads. */
static int channel_axis(const gl_node *head)
{
    int r = gl_value_rank(head->outputs[0]);
    if (gl_node_is(head, "Conv") || gl_node_is(head, "ConvTranspose"))
        return 1;
    if (!strcmp(head->domain, "graphlab") && !strcmp(head->op_type, "NhwcConv"))
        return r > 0 ? r - 1 : -1;
    return -1;
}

/* ---- the walk ------------------------------------------------------------------------ */

/* n takes the chain's value v where the step needs it (v NULL: n is the head). */
static bool reads_chain(const gl_fu_step *s, const gl_node *n, const gl_value *v)
{
    if (!v)
        return true;
    if (s->cls == GL_FU_BINARY || (s->cls == GL_FU_POST && gl_fu_is_binary(n)))
        return n->n_inputs == 2 && (n->inputs[0] == v || n->inputs[1] == v);
    if (!n->n_inputs || n->inputs[0] != v)
        return false;
    for (size_t i = 1; i < n->n_inputs; i++)
        if (n->inputs[i] == v)
            return false;
    return true;
}

/* What a step's flags make part of the pattern itself (so not a refusal): the two
 * rank-2 operands of ONNX Runtime's MatMul-to-Gemm, a 1x1 convolution, a depthwise one. */
static bool shaped(const gl_fu_step *s, const gl_node *n)
{
    /* Rank 2 is the pattern where the other MatMul rules take other ranks (the fused
     * kernels' float types); for float64 only this rule could take the head, so the ranks
     * are a constraint whose refusal says why (check_gemm_head). */
    if ((s->flags & GL_FU_RANK2) && !gl_fu_is_binary(n))
        return n->n_inputs == 2 &&
               ((gl_value_rank(n->inputs[0]) == 2 && gl_value_rank(n->inputs[1]) == 2) ||
                (n->outputs[0]->type.kind == GL_TYPE_TENSOR &&
                 n->outputs[0]->type.dtype == GL_DT_DOUBLE));
    if (!(s->flags & (GL_FU_1X1 | GL_FU_DW | GL_FU_SPLIT_K)))
        return true;
    const gl_value *w = n->n_inputs > 1 ? n->inputs[1] : NULL;
    const gl_tensor *t = w && gl_value_is_constant(w) ? w->init : NULL;
    int64_t group = gl_node_attr_int(n, "group", 1);
    if (!t || t->rank != 4)
        return false;
    if (s->flags & (GL_FU_1X1 | GL_FU_SPLIT_K))
        return t->dims[2] == 1 && t->dims[3] == 1 && group == 1;
    return t->dims[1] == 1 && group > 1 && group == t->dims[0];
}

/* The step at or after `from` that n can take, or -1. */
static int next_step(const gl_fu_rule *r, size_t from, const int *cnt, const gl_node *n,
                     const gl_value *v)
{
    for (size_t q = from; q < r->n_steps; q++) {
        const gl_fu_step *s = &r->steps[q];
        if (gl_fu_step_has(s, n) && reads_chain(s, n, v) && shaped(s, n))
            return (int)q;
        if (s->rep == GL_FU_ONE || (s->rep == GL_FU_PLUS && !cnt[q]))
            return -1;
    }
    return -1;
}

static size_t after(const gl_fu_rule *r, int q)
{
    gl_fu_rep rep = r->steps[q].rep;
    return rep == GL_FU_STAR || rep == GL_FU_PLUS ? (size_t)q : (size_t)q + 1;
}

/* A fan-out step at `pending` takes every reader of v, each in the step: they end the
 * walk (true). More readers than the rule's maximum leaves them all out (the group ends
 * at v, the link a "branch"), rather than refusing the whole group. */
static bool fan_out(const gl_fu_rule *r, size_t pending, const gl_value *v, fu_cand *k)
{
    if (pending >= r->n_steps || !(r->steps[pending].flags & GL_FU_FANOUT) ||
        k->n + v->n_uses > r->max_ops)
        return false;
    const gl_fu_step *s = &r->steps[pending];
    for (size_t u = 0; u < v->n_uses; u++) {
        gl_node *rd = v->uses[u].node;
        if (v->uses[u].slot < 0 || !gl_fu_step_has(s, rd) || !reads_chain(s, rd, v))
            return false;
    }
    k->fan_from = k->n;
    for (size_t u = 0; u < v->n_uses; u++) {
        k->nodes[k->n] = v->uses[u].node;
        k->step_of[k->n++] = (int)pending;
    }
    return true;
}

/* Some rule takes n as its head (it may be fused on its own). */
static bool heads_a_rule(const fu_ctx *c, const gl_node *n)
{
    size_t n_rules;
    const gl_fu_rule *rules = gl_fu_rules(&n_rules);
    uint64_t may = gl_fu_heads_of(&c->heads, n);
    int none[GL_FU_MAX_STEPS] = {0};
    for (size_t r = 0; r < n_rules; r++)
        if (((may >> r) & 1) && next_step(&rules[r], 0, none, n, NULL) >= 0)
            return true;
    return false;
}

/* The step that takes the head is one the rule requires (the head of attention is its
 * MatMul, not the optional scale before it): a near miss is of the rule's own head. */
static bool head_required(const gl_fu_rule *r, int head_step)
{
    gl_fu_rep rep = r->steps[head_step].rep;
    return rep == GL_FU_ONE || rep == GL_FU_PLUS;
}

static bool complete(const fu_cand *k, size_t len, int extra_step);

/* The walk stopped at `between`, the single reader of the chain's value: a near miss
 * when `between` is no head of any rule (else its reader may be its own group's: Conv
 * -> Conv -> Relu is no near miss of the first Conv), reads the chain as its data, has
 * one reader, and that reader would complete the rule as its next member. */
static void look_past(const fu_ctx *c, const gl_fu_rule *r, size_t pending, const int *cnt,
                      gl_node *between, fu_cand *k)
{
    const gl_value *chain = k->nodes[k->n - 1]->outputs[0];
    if (!head_required(r, k->step_of[0]) || !between->n_inputs ||
        between->inputs[0] != chain || !between->n_outputs || heads_a_rule(c, between))
        return;
    for (size_t o = 1; o < between->n_outputs; o++)
        if (between->outputs[o] &&
            (between->outputs[o]->n_uses || between->outputs[o]->n_output_refs))
            return;
    gl_value *v = between->outputs[0];
    gl_node *beyond = v ? gl_value_single_reader(v) : NULL;
    if (!beyond || v->n_output_refs)
        return;
    int q = next_step(r, pending, cnt, beyond, v);
    if (q >= 0 && complete(k, k->n, q)) {
        k->between = between;
        k->beyond = beyond;
    }
}

static void walk(const fu_ctx *c, const gl_fu_rule *r, gl_node *head, fu_cand *k)
{
    int cnt[GL_FU_MAX_STEPS] = {0};
    int q = next_step(r, 0, cnt, head, NULL);
    if (q < 0)
        return;
    k->nodes[0] = head;
    k->step_of[0] = q;
    k->n = 1;
    cnt[q]++;
    size_t pending = after(r, q);
    while (k->n < GL_FU_MAX_CHAIN) {
        gl_node *cur = k->nodes[k->n - 1];
        gl_value *v = cur->outputs[0];
        if (!v->n_uses)
            return;
        gl_node *next = gl_value_single_reader(v);
        if (next && !v->n_output_refs) {
            if ((q = next_step(r, pending, cnt, next, v)) < 0) {
                look_past(c, r, pending, cnt, next, k);
                return;
            }
            k->nodes[k->n] = next;
            k->step_of[k->n++] = q;
            cnt[q]++;
            pending = after(r, q);
            continue;
        }
        if (!v->n_output_refs && fan_out(r, pending, v, k))
            return;
        /* Only a reader that would continue the chain makes this a refusal. */
        for (size_t u = 0; u < v->n_uses; u++) {
            gl_node *rd = v->uses[u].node;
            if (v->uses[u].slot < 0 || (q = next_step(r, pending, cnt, rd, v)) < 0)
                continue;
            k->blocked = rd;
            k->blocked_step = q;
            char other[200] = "";
            for (size_t w = 0; k->loud && w < v->n_uses && !other[0]; w++)
                if (v->uses[w].node != rd)
                    snprintf(other, sizeof(other), "%s '%s'", v->uses[w].node->op_type,
                             v->uses[w].node->name);
            if (v->n_output_refs)
                set_why(k, "graph-output", "'%s' (output of %s '%s') is a graph output: it "
                        "cannot become an intermediate of a fused group with %s '%s'",
                        v->name, cur->op_type, cur->name, rd->op_type, rd->name);
            else
                set_why(k, "branch", "'%s' (output of %s '%s') is read by %zu nodes (%s "
                        "'%s' and %s): an intermediate of a fused group has one reader",
                        v->name, cur->op_type, cur->name, v->n_uses, rd->op_type, rd->name,
                        other[0] ? other : "a subgraph");
            return;
        }
        return;
    }
}

/* ---- the constraints ----------------------------------------------------------------- */

static bool is_matmul(const gl_node *n)
{
    return gl_node_is(n, "MatMul") || (!strcmp(n->domain, "graphlab") &&
                                       !strcmp(n->op_type, "FusedMatMul"));
}

static bool float_dtype(gl_dtype dt)
{
    return dt == GL_DT_FLOAT || dt == GL_DT_FLOAT16 || dt == GL_DT_BFLOAT16;
}

static bool dtype_known(const gl_value *v)
{
    return v->type.kind == GL_TYPE_TENSOR && v->type.dtype != GL_DT_UNDEFINED;
}

static bool check_dtype(fu_cand *k, const gl_node *n, const gl_value *v, gl_dtype want)
{
    if (!dtype_known(v)) {
        set_why(k, "precision", "the dtype of '%s' (%s '%s') is not known (run "
                "shape-inference first)", v->name, n->op_type, n->name);
        return false;
    }
    if (v->type.dtype != want) {
        set_why(k, "precision", "%s '%s': '%s' is %s, the chain computes in %s: one "
                "precision along a fused group", n->op_type, n->name, v->name,
                gl_dtype_name(v->type.dtype), gl_dtype_name(want));
        return false;
    }
    return true;
}

static int64_t attr_ints_all(const gl_node *n, const char *name, int64_t want, size_t *count)
{
    const gl_attr *a = gl_node_attr_typed(n, name, GL_ATTR_INTS);
    *count = a ? a->n : 0;
    for (size_t i = 0; a && i < a->n; i++)
        if (a->ints[i] != want)
            return a->ints[i];
    return want;
}

/* A Conv for oneDNN's depthwise post-op: 1x1 (head) or depthwise 3x3 (follower). */
static bool check_conv_shape(fu_cand *k, const gl_node *n, unsigned flags)
{
    const gl_value *x = n->inputs[0], *w = n->n_inputs > 1 ? n->inputs[1] : NULL;
    const gl_tensor *wt = w && gl_value_is_constant(w) ? w->init : NULL;
    const gl_target *t = gl_target_default();
    int dk = t->dw_post.kernel, dp = t->dw_post.pad;
    char what[96];
    if (flags & GL_FU_1X1)
        snprintf(what, sizeof(what), "a 1x1 convolution (stride 1, no padding, group 1)");
    else
        snprintf(what, sizeof(what), "a depthwise %dx%d convolution (stride %d or %d, "
                 "padding %d)", dk, dk, t->dw_post.min_stride, t->dw_post.max_stride, dp);
    size_t cn;
    if (!wt || wt->rank != 4 || gl_value_rank(x) != 4) {
        set_why(k, "target", "Conv '%s': weights not a constant of rank 4 on a rank-4 input; "
                "oneDNN's depthwise post-op needs %s", n->name, what);
        return false;
    }
    const char *pad = gl_node_attr_string(n, "auto_pad", "NOTSET");
    int64_t group = gl_node_attr_int(n, "group", 1);
    int64_t dil = attr_ints_all(n, "dilations", 1, &cn);
    if (strcmp(pad, "NOTSET") || dil != 1) {
        set_why(k, "target", "Conv '%s': auto_pad %s, dilation %lld; oneDNN's depthwise "
                "post-op needs %s", n->name, pad, (long long)dil, what);
        return false;
    }
    if (flags & GL_FU_1X1) {
        int64_t stride = attr_ints_all(n, "strides", 1, &cn);
        int64_t p = attr_ints_all(n, "pads", 0, &cn);
        if (wt->dims[2] != 1 || wt->dims[3] != 1 || group != 1 || stride != 1 || p != 0) {
            set_why(k, "target", "Conv '%s': kernel %lldx%lld, group %lld, stride %lld, pad "
                    "%lld; oneDNN's depthwise post-op follows %s", n->name,
                    (long long)wt->dims[2], (long long)wt->dims[3], (long long)group,
                    (long long)stride, (long long)p, what);
            return false;
        }
        return true;
    }
    const gl_dim *c = &x->type.shape.dims[1];
    const gl_attr *st = gl_node_attr_typed(n, "strides", GL_ATTR_INTS);
    int64_t s0 = st && st->n == 2 ? st->ints[0] : 1, s1 = st && st->n == 2 ? st->ints[1] : 1;
    int64_t p = attr_ints_all(n, "pads", dp, &cn);
    if (wt->dims[2] != dk || wt->dims[3] != dk || wt->dims[1] != 1 || !dim_known(c) ||
        group != c->value || wt->dims[0] != group || s0 != s1 ||
        s0 < t->dw_post.min_stride || s0 > t->dw_post.max_stride || p != dp || cn != 4) {
        set_why(k, "target", "Conv '%s': kernel %lldx%lld, group %lld of %lld channels, "
                "stride %lld; oneDNN's depthwise post-op is %s", n->name,
                (long long)wt->dims[2], (long long)wt->dims[3], (long long)group,
                (long long)c->value, (long long)s0, what);
        return false;
    }
    return true;
}

/* A channel Concat and the 1x1 convolution reading it, run as one convolution per
 * Concat input summed into one destination: the Concat's copy goes, each further input
 * costs a read of the destination (the sum). Measured on squeezenet1_1 (2 threads):
 * squeeze convolutions of 16-64 channels over Concats of 128-512 gain, the classifier's
 * 1000 channels over 512 lose (the sum re-reads twice the bytes the Concat copied). */
static bool check_split(fu_cand *k, const gl_node *n, unsigned flags)
{
    if (flags & GL_FU_CAT_C) {
        int r = gl_value_rank(n->outputs[0]);
        int64_t axis = gl_node_attr_int(n, "axis", 0);
        bool ranks = r == 4 && n->n_inputs >= 2;
        for (size_t i = 0; i < n->n_inputs && ranks; i++)
            ranks = n->inputs[i] && gl_value_rank(n->inputs[i]) == 4;
        if (!ranks || (axis != 1 && axis != -3)) {
            set_why(k, "target", "Concat '%s': %zu inputs of rank %d along axis %lld; the "
                    "split convolution takes two or more rank-4 inputs joined along the "
                    "channels (axis 1)", n->name, n->n_inputs, r, (long long)axis);
            return false;
        }
        return true;
    }
    char why[400];
    const char *constraint = gl_fu_conv_split_refusal(n, why, sizeof(why));
    if (constraint) {
        set_why(k, constraint, "%s", why);
        return false;
    }
    return true;
}

const char *gl_fu_conv_split_refusal(const gl_node *n, char *why, size_t len)
{
    const gl_value *w = n->n_inputs > 1 ? n->inputs[1] : NULL;
    const gl_tensor *wt = w && gl_value_is_constant(w) ? w->init : NULL;
    size_t cn;
    int64_t stride = attr_ints_all(n, "strides", 1, &cn);
    int64_t pad = attr_ints_all(n, "pads", 0, &cn);
    int64_t dil = attr_ints_all(n, "dilations", 1, &cn);
    const char *ap = gl_node_attr_string(n, "auto_pad", "NOTSET");
    int64_t group = gl_node_attr_int(n, "group", 1);
    bool one_by_one = wt && wt->rank == 4 && wt->dims[2] == 1 && wt->dims[3] == 1;
    if (!one_by_one || group != 1 || stride != 1 || pad != 0 || dil != 1 ||
        (strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))) {
        snprintf(why, len, "Conv '%s': %s weights, group %lld, stride %lld, pad %lld, "
                 "dilation %lld, auto_pad %s; a convolution split over its input channels is "
                 "1x1, group 1, stride 1, unpadded, with constant weights", n->name,
                 !wt ? "non-constant" : one_by_one ? "1x1" : "not 1x1", (long long)group,
                 (long long)stride, (long long)pad, (long long)dil, ap);
        return "target";
    }
    if (wt->dims[0] > wt->dims[1]) {
        snprintf(why, len, "Conv '%s': %lld output channels from %lld input channels; split "
                 "over its Concat's inputs, each sum would re-read more bytes than the Concat "
                 "copies", n->name, (long long)wt->dims[0], (long long)wt->dims[1]);
        return "cost";
    }
    return NULL;
}

/* v has `rank` dims, all known: into dims[]. */
static bool known_dims(const gl_value *v, int rank, int64_t *dims)
{
    if (!v || gl_value_rank(v) != rank)
        return false;
    for (int d = 0; d < rank; d++)
        if ((dims[d] = v->type.shape.dims[d].value) < 0)
            return false;
    return true;
}

/* The one value of a constant integer input (Slice's starts, ends, axes, steps); a
 * missing input gives `dflt`. False when the input is not one constant integer. */
static bool const_int1(const gl_node *n, size_t i, int64_t dflt, int64_t *out)
{
    const gl_value *x = i < n->n_inputs ? n->inputs[i] : NULL;
    if (!x) {
        *out = dflt;
        return true;
    }
    const gl_tensor *t = gl_value_is_constant(x) ? x->init : NULL;
    if (!t || !gl_dtype_is_int(t->dtype) || t->count != 1)
        return false;
    *out = gl_elem_i64(t, 0);
    return true;
}

/* A channel shuffle (ShuffleNet): the Concat's [N,C,H,W] (v: the chain's value) as
 * [N,g,C/g,H,W], its two middle dims swapped, back to [N,C,H,W]; then Slices of its
 * channels with constant bounds and step 1. What the oneDNN unit moves is read from the
 * IR's shapes, so each is proven here. */
static bool check_shuffle(fu_cand *k, const gl_node *n, const gl_value *v)
{
    int64_t cat[4], x[5], y[5];
    const gl_value *cv = k->nodes[0]->outputs[0], *out = n->outputs[0];
    int rv = gl_value_rank(v), ry = gl_value_rank(out);
    if (!known_dims(cv, 4, cat) || rv < 0 || rv > 5 || ry < 0 || ry > 5 ||
        !known_dims(v, rv, x) || !known_dims(out, ry, y)) {
        char tv[96], to[96];
        set_why(k, "shapes", "%s '%s': '%s' %s to '%s' %s: a channel shuffle is moved by "
                "shapes the IR knows", n->op_type, n->name, v->name,
                type_text(v, tv, sizeof(tv)), out->name, type_text(out, to, sizeof(to)));
        return false;
    }
    if (gl_node_is(n, "Reshape") && ry == 5) {
        if (y[0] == cat[0] && y[1] >= 2 && y[1] * y[2] == cat[1] && y[3] == cat[2] &&
            y[4] == cat[3])
            return true;
        set_why(k, "target", "Reshape '%s': [%lld,%lld,%lld,%lld] to [%lld,%lld,%lld,%lld,%lld];"
                " a channel shuffle splits the channels into [g, C/g], g >= 2",
                n->name, (long long)cat[0], (long long)cat[1], (long long)cat[2],
                (long long)cat[3], (long long)y[0], (long long)y[1], (long long)y[2],
                (long long)y[3], (long long)y[4]);
        return false;
    }
    if (gl_node_is(n, "Transpose")) {
        static const int64_t swap[5] = {0, 2, 1, 3, 4};
        const gl_attr *a = gl_node_attr_typed(n, "perm", GL_ATTR_INTS);
        bool ok = a && a->n == 5;
        for (size_t d = 0; ok && d < 5; d++)
            ok = a->ints[d] == swap[d];
        if (!ok)
            set_why(k, "target", "Transpose '%s': a channel shuffle swaps dims 1 and 2 of 5 "
                    "(perm [0,2,1,3,4])", n->name);
        return ok;
    }
    if (gl_node_is(n, "Reshape")) {
        bool ok = ry == 4 && !memcmp(y, cat, sizeof(cat));
        if (!ok)
            set_why(k, "target", "Reshape '%s': a channel shuffle ends as the Concat's "
                    "[%lld,%lld,%lld,%lld] again", n->name, (long long)cat[0],
                    (long long)cat[1], (long long)cat[2], (long long)cat[3]);
        return ok;
    }
    /* Slice(data, starts, ends, axes, steps) of the channels. */
    int64_t start, end, axis, step;
    bool ok = n->n_inputs >= 3 && n->n_inputs <= 5 && const_int1(n, 1, 0, &start) &&
              const_int1(n, 2, 0, &end) && const_int1(n, 3, 0, &axis) &&
              const_int1(n, 4, 1, &step) && (axis == 1 || axis == -3) && step == 1 &&
              ry == 4 && y[0] == cat[0] && y[2] == cat[2] && y[3] == cat[3] && y[1] > 0;
    if (!ok)
        set_why(k, "target", "Slice '%s': a channel shuffle's Slice takes constant bounds "
                "of axis 1 with step 1 (inputs, opset 10 on)", n->name);
    return ok;
}

/* A BatchNormalization the target runs with its follower as a post-op: an inference one
 * (the statistics are its mean and var inputs), making Y alone, of rank 4 or 5 (oneDNN
 * 2.6's jit kernels take the relu post-op in nchw, nhwc and blocked layouts; 3-D runs as
 * a plain view, others not at all). Training mode (opset 14's training_mode=1) needs
 * the batch's statistics, opset 7's spatial=0 a parameter per position: neither is the
 * target's inference primitive (nor what the executor runs unfused, ops/nn.c). */
static bool check_batchnorm(const fu_ctx *c, fu_cand *k, const gl_node *n)
{
    const char *mode = c->opset >= 14 && gl_node_attr_int(n, "training_mode", 0) != 0
                           ? "training_mode=1"
                       : c->opset < 9 && gl_node_attr_int(n, "spatial", 1) == 0 ? "spatial=0"
                                                                                : NULL;
    if (mode) {
        set_why(k, "target", "BatchNormalization '%s': %s; the fused kernel normalizes with "
                "the given mean and var, one per channel (inference)", n->name, mode);
        return false;
    }
    for (size_t o = 1; o < n->n_outputs; o++)
        if (n->outputs[o]) {
            set_why(k, "target", "BatchNormalization '%s' makes output %zu ('%s'); the fused "
                    "kernel makes Y alone", n->name, o, n->outputs[o]->name);
            return false;
        }
    const gl_value *x = n->n_inputs ? n->inputs[0] : NULL;
    int rank = gl_value_rank(x);
    if (rank < 0) {
        set_why(k, "shapes", "BatchNormalization '%s': the rank of its X '%s' is not known "
                "(run shape-inference first)", n->name, x ? x->name : "");
        return false;
    }
    if (rank != 4 && rank != 5) {
        set_why(k, "target", "BatchNormalization '%s': its X '%s' has rank %d; the fused "
                "kernel takes rank 4 or 5", n->name, x->name, rank);
        return false;
    }
    return true;
}

/* An elementwise binary node's other operand against the chain's value x. */
static bool check_operand(const fu_ctx *c, fu_cand *k, const gl_node *n, const gl_value *x,
                          const gl_value *o, unsigned flags, int channel)
{
    char tx[96], to[96];
    shape_rel rel = classify(o, x, channel);
    if (rel == SH_UNKNOWN) {
        set_why(k, "shapes", "%s '%s': '%s' %s against '%s' %s: the shapes are not known "
                "well enough to prove no implicit broadcast", n->op_type, n->name, o->name,
                type_text(o, to, sizeof(to)), x->name, type_text(x, tx, sizeof(tx)));
        return false;
    }
    bool ok;
    const char *implements;
    if (flags & GL_FU_SCALAR) {
        ok = rel == SH_SCALAR;
        implements = "a scalar scale";
    } else if (flags & GL_FU_MASK) {
        ok = rel == SH_SAME || rel == SH_LEADING || rel == SH_SCALAR;
        implements = "the same shape, or a mask broadcast over leading dims";
    } else if (flags & GL_FU_RANK2) {
        ok = gl_value_rank(x) == 2 && (rel == SH_SAME || rel == SH_LAST || rel == SH_SCALAR);
        implements = "Gemm's C: [N], [M,N] or a scalar on a rank-2 product";
    } else if (flags & GL_FU_BIAS) {
        ok = (rel == SH_LAST || rel == SH_SCALAR) && gl_value_is_constant(o);
        implements = "a constant [N] bias";
    } else {
        ok = rel == SH_SAME || rel == SH_SCALAR || rel == (channel >= 0 ? SH_CHANNEL : SH_LAST);
        implements = channel >= 0 ? "the same shape, a per-channel operand or a scalar"
                                  : "the same shape, an [N] operand or a scalar";
    }
    if (!ok) {
        set_why(k, "broadcast", "%s '%s': '%s' %s against '%s' %s is %s; the fused kernel "
                "implements %s", n->op_type, n->name, o->name, type_text(o, to, sizeof(to)),
                x->name, type_text(x, tx, sizeof(tx)), rel_name(rel), implements);
        return false;
    }
    if (c->exact && rel != SH_SAME) {
        set_why(k, "exact-shapes", "%s '%s': '%s' %s broadcasts against '%s' %s (%s), "
                "refused under fusion.exact-shapes=1", n->op_type, n->name, o->name,
                type_text(o, to, sizeof(to)), x->name, type_text(x, tx, sizeof(tx)),
                rel_name(rel));
        return false;
    }
    return true;
}

/* The binary head of a rule (a scale, a bias, a skip): which operand is the data. */
static bool check_binary_head(const fu_ctx *c, fu_cand *k, const gl_node *n, unsigned flags)
{
    if (n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1])
        return false;
    bool commutes = false;
    gl_target_default()->binary_post(n, &commutes);
    if (check_operand(c, k, n, n->inputs[0], n->inputs[1], flags, -1))
        return true;
    if (!commutes)
        return false;
    /* The operands the other way round: the refusal that speaks stays the first one's. */
    const char *constraint = k->constraint;
    bool loud = k->loud;
    k->loud = false;
    bool ok = check_operand(c, k, n, n->inputs[1], n->inputs[0], flags, -1);
    k->loud = loud;
    k->constraint = constraint;
    return ok;
}

static bool check_binary(const fu_ctx *c, fu_cand *k, const gl_node *n, const gl_value *v,
                         unsigned flags, int channel)
{
    if (n->inputs[0] == n->inputs[1]) {
        set_why(k, "target", "%s '%s' reads '%s' as both operands: a binary post-op's "
                "operand comes from outside the fused kernel", n->op_type, n->name, v->name);
        return false;
    }
    const gl_value *o = n->inputs[0] == v ? n->inputs[1] : n->inputs[0];
    if (!o) {
        set_why(k, "target", "%s '%s' has no second operand", n->op_type, n->name);
        return false;
    }
    bool commutes = false;
    gl_target_default()->binary_post(n, &commutes);
    if (n->inputs[1] == v && !commutes) {
        set_why(k, "target", "%s '%s' computes %s('%s', '%s'): oneDNN's binary post-op puts "
                "the kernel's result first", n->op_type, n->name, n->op_type, o->name,
                v->name);
        return false;
    }
    return check_operand(c, k, n, v, o, flags, channel);
}

/* A MatMul following the chain: its B broadcasts over no batch dim it does not have. */
static bool check_matmul_b(fu_cand *k, const gl_node *n, const gl_value *a)
{
    const gl_value *b = n->n_inputs > 1 ? n->inputs[1] : NULL;
    int ra = gl_value_rank(a), rb = gl_value_rank(b);
    char ta[96], tb[96];
    if (!b || ra < 0 || rb < 0) {
        set_why(k, "shapes", "MatMul '%s': the ranks of its operands are not known", n->name);
        return false;
    }
    if (rb <= 2)
        return true;
    bool ok = ra == rb;
    for (int d = 0; ok && d < ra - 2; d++)
        ok = dim_eq(&a->type.shape.dims[d], &b->type.shape.dims[d]);
    if (!ok)
        set_why(k, "broadcast", "%s '%s': '%s' %s and '%s' %s differ in their batch dims: "
                "an implicit broadcast the fused kernel does not implement", n->op_type,
                n->name, a->name, type_text(a, ta, sizeof(ta)), b->name,
                type_text(b, tb, sizeof(tb)));
    return ok;
}

/* An activation member's parameters (Clip's bounds, Pow's exponent) as the target takes
 * them: constants it reads at n's own opset (a Clip of opset 6 has them as attributes,
 * of opset 11 on as inputs). */
static bool check_eltwise_params(const fu_ctx *c, fu_cand *k, const gl_node *n)
{
    const gl_target *t = gl_target_default();
    const gl_tensor *params[GL_FU_MAX_INPUTS] = {NULL};
    for (size_t j = 1; j < n->n_inputs && j < GL_FU_MAX_INPUTS; j++) {
        if (n->inputs[j] && !gl_value_is_constant(n->inputs[j])) {
            set_why(k, "target", "%s '%s': its input %zu '%s' is not a constant; %s's "
                    "post-ops take fixed parameters", n->op_type, n->name, j,
                    n->inputs[j]->name, t->name);
            return false;
        }
        params[j] = n->inputs[j] ? n->inputs[j]->init : NULL;
    }
    int64_t opset = gl_model_opset(c->m, n->domain);
    const char *why = "";
    if (t->eltwise_params(n, opset ? opset : 1, params, GL_FU_MAX_INPUTS, &why))
        return true;
    set_why(k, "target", "%s '%s': %s", n->op_type, n->name, why);
    return false;
}

/* The head dtype a rule takes: a fused kernel's float types; ONNX Runtime's MatMul +
 * Add becomes graphlab's Gemm reference kernel, which takes float32 and float64 and
 * computes them as MatMul then Add do, so exactly (issue 22). Not the half types: Gemm
 * rounds once where MatMul then Add round twice. */
static const char *head_dtype_refusal(const gl_fu_rule *r, gl_dtype dt)
{
    if (r->target == GL_FU_GEMM)
        return dt == GL_DT_FLOAT || dt == GL_DT_DOUBLE
                   ? NULL
                   : "the Gemm it becomes computes float and double as MatMul then Add do";
    return float_dtype(dt) ? NULL : "fused kernels take float, float16 or bfloat16";
}

/* ONNX Runtime's MatMul-to-Gemm head: two matrices, and Gemm broadcasts C from opset 7. */
static bool check_gemm_head(const fu_ctx *c, fu_cand *k, const gl_node *n)
{
    int ra = gl_value_rank(n->inputs[0]), rb = gl_value_rank(n->inputs[1]);
    if (ra != 2 || rb != 2) {
        char ta[96], tb[96];
        set_why(k, "shapes", "%s '%s': '%s' %s and '%s' %s: Gemm takes two matrices (rank "
                "2)", n->op_type, n->name, n->inputs[0]->name,
                type_text(n->inputs[0], ta, sizeof(ta)), n->inputs[1]->name,
                type_text(n->inputs[1], tb, sizeof(tb)));
        return false;
    }
    if (c->opset < 7) {
        set_why(k, "target", "opset %lld: Gemm broadcasts C from opset 7", (long long)c->opset);
        return false;
    }
    return true;
}

/* The head takes member n as a post-op at its own speed on the target (not oneDNN
 * 2.6's deconvolution, whose post-ops run in a reference loop). */
static bool check_head_takes(const fu_ctx *c, fu_cand *k, const gl_node *n, bool binary)
{
    const gl_node *head = k->nodes[0];
    bool slow = false;
    int64_t opset = gl_model_opset(c->m, n->domain);
    const char *why = gl_target_default()->head_post_ops_refusal(head, n, opset ? opset : 1,
                                                                 binary, &slow);
    if (!why || (slow && !c->probe)) /* fusion.probe=0: the rule table alone */
        return true;
    set_why(k, "target", "%s '%s' takes no %s member ('%s', %s) here: %s", head->op_type,
            head->name, binary ? "binary" : "eltwise", n->name, n->op_type, why);
    return false;
}

/* A member's inputs and outputs fit the kernels: a Concat's inputs the target's split
 * kernels (one convolution or set of moves per input), any other's the rules' ops. */
static bool check_arity(fu_cand *k, const gl_node *n)
{
    const gl_target *t = gl_target_default();
    size_t parts = t->max_concat_parts < GL_FU_MAX_INPUTS ? (size_t)t->max_concat_parts
                                                           : GL_FU_MAX_INPUTS;
    if (gl_node_is(n, "Concat") && n->n_inputs > parts) {
        set_why(k, "target", "Concat '%s' has %zu inputs; the split kernels of %s take at "
                "most %zu (one convolution or set of moves per input)", n->name, n->n_inputs,
                t->name, parts);
        return false;
    }
    if (n->n_inputs > GL_FU_MAX_INPUTS || n->n_outputs > GL_FU_MAX_OUTPUTS) {
        set_why(k, "target", "%s '%s' has %zu inputs and %zu outputs; no op a rule takes has "
                "more than %d and %d", n->op_type, n->name, n->n_inputs, n->n_outputs,
                GL_FU_MAX_INPUTS, GL_FU_MAX_OUTPUTS);
        return false;
    }
    return true;
}

/* Node i of the walk; false with k->why on the first constraint it breaks. */
static bool check_node(const fu_ctx *c, fu_cand *k, size_t i)
{
    const gl_node *n = k->nodes[i], *head = k->nodes[0];
    const gl_fu_step *s = &k->rule->steps[k->step_of[i]];
    size_t prev = k->fan_from && i >= k->fan_from ? k->fan_from - 1 : i - 1;
    const gl_value *v = i ? k->nodes[prev]->outputs[0] : NULL;
    gl_dtype want = head->outputs[0]->type.dtype;
    if (!check_arity(k, n))
        return false;
    for (size_t o = 1; o < n->n_outputs; o++)
        if (!n->outputs[o - 1] && n->outputs[o]) {
            set_why(k, "target", "%s '%s': output %zu follows an omitted one; a call returns "
                    "leading outputs only", n->op_type, n->name, o);
            return false;
        }
    const char *dtype_no = i == 0 && dtype_known(head->outputs[0])
                               ? head_dtype_refusal(k->rule, want)
                               : NULL;
    if (dtype_no) {
        set_why(k, "precision", "%s '%s' computes %s; %s", n->op_type, n->name,
                gl_dtype_name(want), dtype_no);
        return false;
    }
    for (size_t o = 0; o < n->n_outputs; o++)
        if (n->outputs[o] && !check_dtype(k, n, n->outputs[o], want))
            return false;
    bool binary = s->cls == GL_FU_BINARY || (s->cls == GL_FU_POST && gl_fu_is_binary(n));
    if (i > 0 && k->rule->target == GL_FU_POST_OPS && !check_head_takes(c, k, n, binary))
        return false;
    if (binary) {
        for (size_t j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] && !check_dtype(k, n, n->inputs[j], want))
                return false;
        if (i == 0)
            return check_binary_head(c, k, n, s->flags);
        return check_binary(c, k, n, v, s->flags, channel_axis(head));
    }
    if (i == 0 && (s->flags & GL_FU_RANK2) && !check_gemm_head(c, k, n))
        return false;
    if ((s->flags & (GL_FU_1X1 | GL_FU_DW)) && !check_conv_shape(k, n, s->flags))
        return false;
    if ((s->flags & (GL_FU_CAT_C | GL_FU_SPLIT_K)) && !check_split(k, n, s->flags))
        return false;
    if ((s->flags & GL_FU_SHUFFLE) && !check_shuffle(k, n, v))
        return false;
    if ((s->flags & GL_FU_INFER) && !check_batchnorm(c, k, n))
        return false;
    if (i > 0 && !binary && gl_fu_eltwise_post_ops(n) >= 0 && !check_eltwise_params(c, k, n))
        return false;
    if (i > 0 && s->cls == GL_FU_OPS && is_matmul(n))
        return check_matmul_b(k, n, v);
    return true;
}

/* Every required step from the head's on is taken by one of the first `len` nodes (and
 * by `extra_step`, a blocked reader's, when >= 0). */
static bool complete(const fu_cand *k, size_t len, int extra_step)
{
    int cnt[GL_FU_MAX_STEPS] = {0};
    for (size_t i = 0; i < len; i++)
        cnt[k->step_of[i]]++;
    if (extra_step >= 0)
        cnt[extra_step]++;
    for (size_t q = (size_t)k->step_of[0]; q < k->rule->n_steps; q++) {
        gl_fu_rep rep = k->rule->steps[q].rep;
        if ((rep == GL_FU_ONE || rep == GL_FU_PLUS) && !cnt[q])
            return false;
    }
    return true;
}

static int post_ops(const fu_cand *k, size_t len)
{
    int total = 0;
    for (size_t i = 1; i < len; i++) {
        int e = gl_fu_eltwise_post_ops(k->nodes[i]);
        total += e >= 0 ? e : 1; /* binary, or the depthwise convolution */
    }
    return total;
}

/* Outputs past the first of an intermediate are read or are graph outputs. */
static bool check_intermediate(fu_cand *k, size_t i)
{
    const gl_node *n = k->nodes[i];
    for (size_t o = 1; o < n->n_outputs; o++) {
        const gl_value *v = n->outputs[o];
        if (v && (v->n_uses || v->n_output_refs)) {
            set_why(k, v->n_uses ? "branch" : "graph-output", "%s '%s': its output %zu "
                    "('%s') is %s, so it cannot be inside a fused group", n->op_type, n->name,
                    o, v->name, v->n_uses ? "read" : "a graph output");
            return false;
        }
    }
    return true;
}

/* A rule at a head: the walk, the constraints, the verdict. */
static void evaluate(const fu_ctx *c, const gl_fu_rule *r, gl_node *head, fu_cand *k,
                     bool loud)
{
    memset(k, 0, offsetof(fu_cand, why));
    k->why[0] = '\0';
    k->rule = r;
    k->blocked_step = -1;
    k->loud = loud;
    walk(c, r, head, k);
    /* One node, and no blocked reader after it: neither a group nor a refusal can come of
     * it whatever the constraints say (below: both need two), and a near miss the walk
     * found speaks without them. Most heads of a big graph end here. */
    if (k->n + (k->blocked_step >= 0) < 2)
        return;
    bool link_blocked = k->blocked != NULL;
    char link_why[sizeof(k->why)];
    const char *link_constraint = k->constraint;
    if (loud)
        memcpy(link_why, k->why, sizeof(link_why));
    k->cut = k->n;
    for (size_t i = 0; i < k->n; i++) {
        if (!check_node(c, k, i)) {
            /* A fan-out is taken whole or not at all: its value stays the group's. */
            k->cut = k->fan_from && i > k->fan_from ? k->fan_from : i;
            k->blocked = k->nodes[i];
            k->blocked_step = -1;
            break;
        }
        if (i + 1 < k->n && !(k->fan_from && i >= k->fan_from) &&
            !check_intermediate(k, i)) {
            k->cut = i + 1;
            k->blocked = k->nodes[i + 1];
            k->blocked_step = -1;
            break;
        }
    }
    if (k->cut == k->n && link_blocked) {
        k->constraint = link_constraint;
        if (loud)
            memcpy(k->why, link_why, sizeof(link_why));
    } else if (k->cut == k->n) {
        k->constraint = NULL;
    }
    if (k->cut >= 2 && complete(k, k->cut, -1)) {
        k->post_ops = post_ops(k, k->cut);
        char members[96];
        snprintf(members, sizeof(members), "%s '%s' and %zu more", head->op_type, head->name,
                 k->cut - 1);
        const gl_target *t = gl_target_default();
        if (r->target == GL_FU_POST_OPS && k->post_ops > t->max_post_ops) {
            set_why(k, "target", "%s need %d post-ops; %s takes at most %d on one "
                    "primitive", members, k->post_ops, t->name, t->max_post_ops);
            k->verdict = FU_REFUSE;
            k->too_long = true;
        } else if (k->cut > r->max_ops) {
            set_why(k, "max-ops", "%s: a chain of %zu nodes, the rule takes at most %zu; "
                    "refused whole rather than cut", members, k->cut, r->max_ops);
            k->verdict = FU_REFUSE;
            k->too_long = true;
        } else if (r->target == GL_FU_UNIT && !c->units) {
            /* Shorter rules may still take the head. */
            set_why(k, "units", "%s: a unit of several oneDNN primitives (%s), left apart "
                    "under --set fusion.units=0", members, r->kernel);
            k->verdict = FU_REFUSE;
        } else {
            k->verdict = FU_MATCH;
        }
        return;
    }
    /* Refused only where the pattern was all there but for the constraint. */
    if (k->constraint && k->n + (k->blocked_step >= 0) >= 2 &&
        complete(k, k->n, k->blocked_step))
        k->verdict = FU_REFUSE;
}

/* ---- the rewrite ------------------------------------------------------------------------ */

/* "FusedConvAddRelu" (the rule's name for it, else from the members' ops), then the
 * first free counter: FusedConvAddRelu_3. */
static void base_name(const fu_cand *k, char *base, size_t len)
{
    if (k->rule->fused) {
        snprintf(base, len, "%s", k->rule->fused);
        return;
    }
    size_t w = (size_t)snprintf(base, len, "Fused");
    for (size_t i = 0; i < k->cut && w + 1 < len - 16; i++)
        w += (size_t)snprintf(base + w, len - 16 - w, "%s", k->nodes[i]->op_type);
}

static char *function_name(fu_ctx *c, const fu_cand *k)
{
    char base[80];
    base_name(k, base, sizeof(base));
    char name[128];
    for (;; c->counter++) {
        snprintf(name, sizeof(name), "%s_%d", base, c->counter);
        if (!gl_model_function(c->m, GL_FUSED_DOMAIN, name))
            break;
    }
    c->counter++;
    return gl_xstrdup(name);
}

/* How many leading outputs of the last node are present: the call returns those. */
static size_t present_outputs(const gl_node *last)
{
    size_t n = 0;
    while (n < last->n_outputs && last->outputs[n])
        n++;
    return n;
}

/* The members whose outputs the call returns: a fan-out's, else the last one. */
static size_t terminal_first(const fu_cand *k)
{
    return k->fan_from && k->cut > k->fan_from ? k->fan_from : k->cut - 1;
}

/* The group's outputs, in order: each terminal member's present outputs. */
static size_t group_outputs(const fu_cand *k, gl_node **owner, size_t *index, size_t cap)
{
    size_t n = 0;
    for (size_t i = terminal_first(k); i < k->cut; i++)
        for (size_t o = 0; o < present_outputs(k->nodes[i]) && n < cap; o++) {
            owner[n] = k->nodes[i];
            index[n++] = o;
        }
    return n;
}

/* Remove the members, readers first. */
static gl_status remove_members(fu_ctx *c, const fu_cand *k)
{
    gl_status st = GL_OK;
    for (size_t i = k->cut; i-- > 0 && st == GL_OK;)
        st = gl_remove_node(c->g, k->nodes[i]);
    return st;
}

static gl_status apply_function(fu_ctx *c, const fu_cand *k, int64_t decision, char *fname)
{
    char doc[256];
    snprintf(doc, sizeof(doc), "graphlab fusion rule %s (%s): %s", k->rule->name,
             k->rule->origin, k->rule->kernel);
    gl_node *owner[GL_FU_MAX_CHAIN * GL_FU_MAX_OUTPUTS];
    size_t index[GL_ARRAY_LEN(owner)];
    size_t n_out = group_outputs(k, owner, index, GL_ARRAY_LEN(owner));
    gl_group_spec spec = {k->nodes, k->cut, owner, index, n_out, fname, doc, decision};
    return gl_group_make(c->m, c->g, &spec, NULL);
}

/* ONNX Runtime's MatMulAddFusion: MatMul(A, B) + C of rank 2 is Gemm(A, B, C). */
static gl_status apply_gemm(fu_ctx *c, const fu_cand *k, int64_t decision)
{
    gl_node *mm = k->nodes[0], *add = k->nodes[1];
    gl_value *bias = add->inputs[0] == mm->outputs[0] ? add->inputs[1] : add->inputs[0];
    gl_value *ins[3] = {mm->inputs[0], mm->inputs[1], bias};
    char hint[256];
    snprintf(hint, sizeof(hint), "%s/Gemm", mm->name);
    char *name = gl_unique_node_name(c->g, hint);
    gl_node *gemm = gl_add_node(c->g, "Gemm", "", name, ins, 3, 1);
    free(name);
    if (!gemm) {
        gl_error_prefix("fusion: adding a Gemm");
        return GL_ERR_INTERNAL;
    }
    gl_node_inherit_provenance(gemm, k->nodes, 2, decision);
    gl_status st = gl_move_output(c->g, add, 0, gemm, 0);
    return st == GL_OK ? remove_members(c, k) : st;
}


/* ---- the group on the target, before the edit ------------------------------------------- */

/* What the target said of a candidate (fusion.probe, fusion.measure). */
typedef struct fu_verdict {
    bool asked;          /* a trial model was made and run */
    bool refused;        /* the target runs it on a reference kernel, or it lost */
    char impl[96];       /* the fused kernel's implementation, as the probe saw it */
    char why[400];       /* the refusal, or why nothing was asked */
    bool timed;
    gl_target_timing t;  /* a: fused, b: members */
    const char *shared;  /* the answer is the one given for the group headed by this node
                          * (the same signature; the memo's); NULL: asked for this group */
} fu_verdict;

/* The group alone twice, as members and fused, the fused one's call in *call. */
static bool trial_pair(fu_ctx *c, const fu_cand *k, const char *fname, gl_model **members,
                       gl_model **fused, const gl_node **call, char *why, size_t len)
{
    gl_node *owner[GL_FU_MAX_CHAIN * GL_FU_MAX_OUTPUTS];
    size_t index[GL_ARRAY_LEN(owner)];
    size_t n_out = group_outputs(k, owner, index, GL_ARRAY_LEN(owner));
    uint32_t ids[GL_FU_MAX_CHAIN];
    *members = gl_fu_trial_model(c->m, k->nodes, k->cut, owner, index, n_out, ids, why, len);
    *fused = *members ? gl_model_clone(*members) : NULL;
    if (!*fused)
        return false;
    fu_cand copy = *k;
    for (size_t i = 0; i < k->cut; i++)
        copy.nodes[i] = gl_find_node_by_id((*fused)->graph, ids[i]);
    fu_ctx tc = *c;
    tc.g = (*fused)->graph;
    tc.m = *fused;
    gl_status st = apply_function(&tc, &copy, -1, (char *)fname);
    if (st == GL_OK)
        st = gl_toposort(tc.g, NULL);
    *call = NULL;
    const gl_node *n;
    gl_foreach_node(tc.g, i, n) if (!strcmp(n->domain, GL_FUSED_DOMAIN))
        *call = n;
    if (st != GL_OK || !*call) {
        snprintf(why, len, "the group alone could not be made: %s", gl_error_message());
        gl_error_clear();
        return false;
    }
    return true;
}

/* Rounds of the measurement: enough for a median that a busy second core moves little,
 * few enough that a model of a hundred groups is measured in seconds. */
#define MEASURE_WARMUP 3
#define MEASURE_ROUNDS 15

/* How much slower fused must be to lose: the measured noise, and never under 3%. A group
 * as fast as its members is kept (one node, one buffer less), and two runs of the pass
 * on a busy machine make the same groups unless a group really loses. */
#define MEASURE_MIN_MARGIN 0.03

static double measure_margin(const gl_target_timing *t)
{
    return t->noise > MEASURE_MIN_MARGIN ? t->noise : MEASURE_MIN_MARGIN;
}

/* Ask the target about trial models of the group (members and fused). */
static void ask_trials(fu_ctx *c, gl_model *members, gl_model *fused, const gl_node *call,
                       fu_verdict *v)
{
    v->asked = true;
    char pwhy[sizeof(v->why) - 64];
    bool fast = gl_target_probe(fused, call, v->impl, sizeof(v->impl), pwhy, sizeof(pwhy));
    if (!fast && c->probe) {
        v->refused = true;
        snprintf(v->why, sizeof(v->why), "%s runs the group as %s", gl_target_default()->name,
                 pwhy);
    }
    if (v->refused || !c->measure)
        return;
    gl_status st = gl_target_time(fused, members, MEASURE_WARMUP, MEASURE_ROUNDS, &v->t);
    v->timed = st == GL_OK;
    if (st != GL_OK) {
        snprintf(v->why, sizeof(v->why), "not measured: %s", gl_error_message());
        gl_error_clear();
    } else if (v->t.a_ms > v->t.b_ms * (1 + measure_margin(&v->t))) {
        v->refused = true;
        snprintf(v->why, sizeof(v->why), "fused %.4f ms is slower than its members' %.4f "
                 "ms beyond noise (%.0f%%; medians of %d interleaved runs on %s)",
                 v->t.a_ms, v->t.b_ms, 100 * measure_margin(&v->t), v->t.rounds,
                 gl_target_default()->name);
    }
}

static const fu_memo *memo_find(const fu_ctx *c, uint64_t signature)
{
    for (size_t i = 0; i < c->n_memo; i++)
        if (c->memo[i].signature == signature)
            return &c->memo[i];
    return NULL;
}

static void memo_add(fu_ctx *c, uint64_t signature, const gl_node *head, const fu_verdict *v)
{
    if (c->n_memo == c->cap_memo) {
        c->cap_memo = c->cap_memo ? 2 * c->cap_memo : 16;
        c->memo = gl_xrealloc(c->memo, c->cap_memo * sizeof(fu_memo));
    }
    fu_memo *m = &c->memo[c->n_memo++];
    m->signature = signature;
    m->head = gl_xstrdup(head->name);
    m->verdict = gl_xcalloc(1, sizeof(fu_verdict));
    *m->verdict = *v;
}

static void ask_target(fu_ctx *c, const fu_cand *k, const char *fname, fu_verdict *v)
{
    memset(v, 0, sizeof(*v));
    if (!c->probe && !c->measure)
        return;
    gl_model *members = NULL, *fused = NULL;
    const gl_node *call = NULL;
    char why[sizeof(v->why)] = "";
    if (!trial_pair(c, k, fname, &members, &fused, &call, why, sizeof(why))) {
        snprintf(v->why, sizeof(v->why), "not asked: %s", why);
    } else {
        uint64_t sig = gl_fu_trial_signature(members);
        const fu_memo *m = memo_find(c, sig);
        if (m) {
            *v = *m->verdict;
            v->shared = m->head;
        } else {
            ask_trials(c, members, fused, call, v);
            memo_add(c, sig, k->nodes[0], v);
        }
    }
    gl_model_free(members);
    gl_model_free(fused);
}

static void record_verdict(gl_decision *d, const fu_verdict *v)
{
    if (v->impl[0])
        gl_decision_add_text(d, "implementation", v->impl);
    if (v->shared)
        gl_decision_add_text(d, "asked_for", v->shared);
    if (!v->asked && v->why[0])
        gl_decision_add_text(d, "probe", v->why);
    if (v->timed) {
        gl_decision_add_number(d, "measured_fused_ms", v->t.a_ms);
        gl_decision_add_number(d, "measured_members_ms", v->t.b_ms);
        gl_decision_add_number(d, "measured_noise", v->t.noise);
    } else if (v->asked && v->why[0] && !v->refused) {
        gl_decision_add_text(d, "measure", v->why);
    }
}

/* ---- the run ----------------------------------------------------------------------------- */

static void describe(gl_decision *d, const fu_cand *k, size_t len)
{
    char members[1024] = "";
    size_t w = 0;
    for (size_t i = 0; i < len; i++) {
        gl_decision_add_node_ref(d, k->nodes[i]);
        if (w < sizeof(members))
            w += (size_t)snprintf(members + w, sizeof(members) - w, "%s%s", i ? ", " : "",
                                  k->nodes[i]->name);
    }
    gl_decision_add_text(d, "members", members);
    gl_decision_add_number(d, "nodes", (double)len);
    gl_decision_add_number(d, "max_ops", (double)k->rule->max_ops);
    gl_decision_add_text(d, "origin", k->rule->origin);
}

static size_t walked(const fu_cand *k) { return k->n + (k->blocked_step >= 0); }

/* The group `best` at `head`: asked of the target (fusion.probe, fusion.measure), then
 * made, or refused with the target's reason (*target_refused: the caller may offer the
 * next candidate at the head). */
static gl_status make_group(fu_ctx *c, gl_node *head, const fu_cand *best, bool *changed,
                            bool *target_refused)
{
    *target_refused = false;
    gl_status st;
    bool gemm = best->rule->target == GL_FU_GEMM;
    const char *domain = gemm ? "" : GL_FUSED_DOMAIN;
    fu_verdict v = {0};
    char base[80];
    base_name(best, base, sizeof(base));
    /* The trial's function has a name of its own: the group's name (its counter) is
     * taken only when the group is made, so fusion:K names its K-th group whatever the
     * target refused before it (dnnl.fault=NAME and the tests rely on it). */
    if (!gemm)
        ask_target(c, best, base, &v);
    /* A rule of one primitive with post-ops that oneDNN builds as several ("A | B"): no
     * kernel is saved, and the decision would claim one. */
    if (!v.refused && c->probe && best->rule->target == GL_FU_POST_OPS &&
        strstr(v.impl, " | ")) {
        v.refused = true;
        snprintf(v.why, sizeof(v.why), "%s runs the group as several primitives (%s), not "
                 "one with post-ops", gl_target_default()->name, v.impl);
    }
    char *fname = gemm ? gl_xstrdup("Gemm") : v.refused ? gl_xstrdup(base)
                                                        : function_name(c, best);
    gl_decision *d;
    if (v.refused) {
        /* A cost, not a correctness refusal: --set fusion.force=ID makes the group
         * (the plan then runs what the probe saw). */
        d = gl_pass_refuse(c->pass, best->rule->name, true, "%s %s '%s' not fused: "
                           "target: %s", best->rule->name, head->op_type, head->name,
                           v.why);
        gl_decision_add_text(d, "constraint", v.timed ? "measured" : "target");
        if (d->verdict == GL_APPLIED) { /* forced: the group is made, and named */
            free(fname);
            fname = function_name(c, best);
        }
    } else {
        d = gl_pass_decide(c->pass, best->rule->name, GL_APPLIED, "%zu nodes from %s "
                           "'%s' become one %s%s%s (%s)", best->cut, head->op_type,
                           head->name, domain, *domain ? "." : "", fname,
                           best->rule->kernel);
    }
    describe(d, best, best->cut);
    gl_decision_add_text(d, "fused", fname);
    record_verdict(d, &v);
    if (best->rule->target == GL_FU_POST_OPS)
        gl_decision_add_number(d, "post_ops", best->post_ops);
    if (best->constraint && best->blocked) {
        char stop[600];
        snprintf(stop, sizeof(stop), "%s '%s': %s", best->blocked->op_type,
                 best->blocked->name, best->why);
        gl_decision_add_text(d, "stopped_before", stop);
    }
    *target_refused = v.refused && d->verdict != GL_APPLIED;
    /* A refusal stands unless forced; an acceptance, unless vetoed. */
    if (v.refused ? d->verdict != GL_APPLIED : gl_pass_vetoed(c->pass, d)) {
        free(fname);
        return GL_OK;
    }
    int64_t id = d->id;
    *changed = true;
    st = gemm ? apply_gemm(c, best, id) : apply_function(c, best, id, fname);
    free(fname);
    return st;
}

/* n's op in any step of any rule. */
static bool in_any_rule(const gl_node *n)
{
    size_t n_rules;
    const gl_fu_rule *rules = gl_fu_rules(&n_rules);
    for (size_t r = 0; r < n_rules; r++)
        for (size_t q = 0; q < rules[r].n_steps; q++)
            if (gl_fu_step_has(&rules[r].steps[q], n))
                return true;
    return false;
}

/* The walk's members, the node between and the next member: "Gemm -> Reshape -> Gelu"
 * (sep " -> ", as written) or "gemm-reshape-gelu" (sep "-", lowercase: the name a rule
 * taking them would have). */
static void near_miss_chain(const fu_cand *k, const char *sep, bool lower, char *buf,
                            size_t len)
{
    size_t w = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < k->n + 2 && w + 1 < len; i++) {
        const gl_node *n = i < k->n ? k->nodes[i] : i == k->n ? k->between : k->beyond;
        w += (size_t)snprintf(buf + w, len - w, "%s", i ? sep : "");
        for (const char *p = n->op_type; *p && w + 1 < len; p++)
            buf[w++] = (char)(lower && *p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        buf[w < len ? w : len - 1] = '\0';
    }
}

/* The refusal that says why a pattern that almost matched was not fused: the node
 * between two members, which the rule does not take. One per (rule, head). */
static void record_near_miss(fu_ctx *c, gl_node *head, const fu_cand *k)
{
    const gl_node *prev = k->nodes[k->n - 1];
    char chain[160], would[160];
    near_miss_chain(k, " -> ", false, chain, sizeof(chain));
    near_miss_chain(k, "-", true, would, sizeof(would));
    bool anywhere = in_any_rule(k->between);
    gl_decision *d = gl_pass_decide(
        c->pass, k->rule->name, GL_REFUSED, "%s %s '%s' not fused: near miss: %s: %s '%s' "
        "between %s '%s' and %s '%s' is not a member of %s%s (would need %s)",
        k->rule->name, head->op_type, head->name, chain, k->between->op_type,
        k->between->name, prev->op_type, prev->name, k->beyond->op_type, k->beyond->name,
        anywhere ? "rule " : "any rule", anywhere ? k->rule->name : "", would);
    describe(d, k, k->n);
    gl_decision_add_node_ref(d, k->between);
    gl_decision_add_node_ref(d, k->beyond);
    gl_decision_add_text(d, "constraint", "near-miss");
    gl_decision_add_text(d, "between", k->between->name);
    gl_decision_add_text(d, "next_member", k->beyond->name);
}

/* ---- a near miss made a match: an elementwise op moved before a view ------------------- */

/* Ops that only re-view their input: the same elements in the same order, new dims. */
static bool is_view(const gl_node *n)
{
    return gl_node_is(n, "Reshape") || gl_node_is(n, "Flatten") || gl_node_is(n, "Squeeze") ||
           gl_node_is(n, "Unsqueeze");
}

/* n computes each output element from the input element at the same position alone:
 * an eltwise post-op whose other inputs are constant scalars (Clip's bounds), one
 * output. Such an op gives the same values before a view as after it. */
static bool elementwise_unary(const gl_node *n)
{
    if (gl_fu_is_binary(n) || gl_fu_eltwise_post_ops(n) < 0 || n->n_outputs != 1 ||
        n->n_inputs > GL_FU_MAX_INPUTS)
        return false;
    for (size_t j = 1; j < n->n_inputs; j++)
        if (n->inputs[j] && !(gl_value_is_constant(n->inputs[j]) &&
                              n->inputs[j]->init->count == 1))
            return false;
    return true;
}

/* A near miss whose node between is a view and whose next member is elementwise: moving
 * the member before the view is exact, and the rule then takes it. */
static bool movable(const fu_cand *k)
{
    return k->between && is_view(k->between) && elementwise_unary(k->beyond);
}

/* `beyond` (E) reading `between` (B) reading the chain's value v becomes E' reading v,
 * B reading E' and making E's output (its name and readers kept: it may be a graph
 * output). E' is a copy of E, with E's name, attributes and provenance. */
static gl_status move_before_view(fu_ctx *c, const fu_cand *k, int64_t decision)
{
    gl_node *b = k->between, *e = k->beyond;
    gl_value *v = b->inputs[0];
    gl_value *ins[GL_FU_MAX_INPUTS] = {v};
    for (size_t j = 1; j < e->n_inputs && j < GL_FU_MAX_INPUTS; j++)
        ins[j] = e->inputs[j];
    gl_node *moved = gl_add_node(c->g, e->op_type, e->domain, e->name, ins, e->n_inputs, 1);
    if (!moved) {
        gl_error_prefix("fusion: moving %s '%s' before %s '%s'", e->op_type, e->name,
                        b->op_type, b->name);
        return GL_ERR_INTERNAL;
    }
    gl_node_copy_attrs(moved, e);
    gl_node_inherit_provenance(moved, &e, 1, decision);
    gl_value *out = moved->outputs[0];
    gl_type_copy(&out->type, &v->type);
    out->type.dtype = e->outputs[0]->type.dtype;
    gl_status st = gl_set_input(c->g, b, 0, out);
    if (st == GL_OK)
        st = gl_set_input(c->g, e, 0, NULL);
    if (st == GL_OK)
        st = gl_move_output(c->g, e, 0, b, 0);
    return st == GL_OK ? gl_remove_node(c->g, e) : st;
}

/* The move as a decision of its own (vetoable, within the budget); *moved when made. */
static gl_status decide_move(fu_ctx *c, gl_node *head, const fu_cand *k, bool *moved)
{
    *moved = false;
    if (!gl_pass_may_rewrite(c->pass))
        return GL_OK;
    gl_decision *d = gl_pass_decide(
        c->pass, "move-before-view", GL_APPLIED, "%s '%s' moved before %s '%s' (an "
        "elementwise op gives the same values on either side of a view), so that rule %s "
        "takes it after %s '%s'", k->beyond->op_type, k->beyond->name, k->between->op_type,
        k->between->name, k->rule->name, k->nodes[k->n - 1]->op_type,
        k->nodes[k->n - 1]->name);
    gl_decision_add_node_ref(d, k->beyond);
    gl_decision_add_node_ref(d, k->between);
    gl_decision_add_node_ref(d, head);
    gl_decision_add_text(d, "for_rule", k->rule->name);
    if (gl_pass_vetoed(c->pass, d))
        return GL_OK;
    *moved = true;
    return move_before_view(c, k, d->id);
}

/* A near miss speaks where its rule would have taken more than the group made. */
static bool near_miss_speaks(const fu_cand *k, const fu_cand *best)
{
    return k->between && k->verdict != FU_REFUSE && (!best || k->n + 1 > best->cut);
}

/* k was evaluated quietly: again, with the text of its refusal, before a decision says it
 * (the graph has not changed since, so nothing else about k does). */
static void speak(const fu_ctx *c, gl_node *head, fu_cand *k)
{
    if (!k->loud)
        evaluate(c, k->rule, head, k, true);
}

static gl_status offer(fu_ctx *c, gl_node *head, bool *changed)
{
    size_t n_rules;
    const gl_fu_rule *rules = gl_fu_rules(&n_rules);
    /* The rules that may take the head, in the table's order; the others would find no
     * candidate (gl_fu_heads_of). */
    uint64_t may = gl_fu_heads_of(&c->heads, head);
    if (!may) /* no candidate, so no group, refusal or near miss */
        return GL_OK;
    fu_cand *cands = gl_xmalloc(n_rules * sizeof(fu_cand));
    size_t n_cands = 0;
    fu_cand *best = NULL, *refused = NULL, *whole = NULL;
    char refusing[512] = "";
    size_t wr = 0;
    for (size_t r = 0; r < n_rules; r++) {
        if (!((may >> r) & 1))
            continue;
        fu_cand *k = &cands[n_cands++];
        evaluate(c, &rules[r], head, k, false);
        if (k->verdict == FU_MATCH && (!best || k->cut > best->cut))
            best = k;
        if (k->verdict == FU_REFUSE) {
            /* The most specific pattern speaks: the longest walk, ties to the earlier row. */
            if (!refused || walked(k) > walked(refused))
                refused = k;
            if (!whole && k->too_long)
                whole = k;
            if (wr < sizeof(refusing))
                wr += (size_t)snprintf(refusing + wr, sizeof(refusing) - wr, "%s%s",
                                       wr ? ", " : "", rules[r].name);
        }
    }
    gl_status st = GL_OK;
    if (whole)
        best = NULL, refused = whole;
    /* A near miss that moving its next member before a view makes a match: the move is
     * made and the head offered again (each move takes a view one node further down the
     * chain, so this ends). */
    bool moved = false;
    for (size_t i = 0; i < n_cands; i++)
        if (near_miss_speaks(&cands[i], best) && movable(&cands[i])) {
            /* one decision per move: vetoed, it is not offered again for another rule */
            st = decide_move(c, head, &cands[i], &moved);
            break;
        }
    if (moved || st != GL_OK) {
        free(cands);
        *changed |= moved;
        return st == GL_OK ? offer(c, head, changed) : st;
    }
    /* A refusal speaks where no group is made, and where the refused rule would have
     * taken more than the group made (why the FFN is a matmul with a gelu post-op). */
    if (refused && (!best || walked(refused) > best->cut)) {
        speak(c, head, refused);
        size_t len = refused->n > refused->cut ? refused->n : refused->cut;
        gl_decision *d = gl_pass_decide(c->pass, refused->rule->name, GL_REFUSED, "%s %s '%s' "
                                        "not fused: %s", refused->rule->name, head->op_type,
                                        head->name, refused->why);
        describe(d, refused, len);
        bool listed = false;
        for (size_t i = 0; i < len && refused->blocked; i++)
            listed |= refused->nodes[i] == refused->blocked;
        if (refused->blocked && !listed)
            gl_decision_add_node_ref(d, refused->blocked);
        gl_decision_add_text(d, "constraint", refused->constraint);
        gl_decision_add_text(d, "rules_refusing", refusing);
    }
    for (size_t i = 0; i < n_cands; i++)
        if (near_miss_speaks(&cands[i], best))
            record_near_miss(c, head, &cands[i]);
    /* The longest candidate the target takes: one it refuses (a reference kernel, or
     * slower than its members) leaves the head to the next longest. */
    while (best && st == GL_OK && gl_pass_may_rewrite(c->pass)) {
        bool target_refused = false;
        speak(c, head, best);
        st = make_group(c, head, best, changed, &target_refused);
        if (!target_refused)
            break;
        const fu_cand *was = best;
        best = NULL;
        for (size_t i = 0; i < n_cands; i++)
            if (cands[i].verdict == FU_MATCH && cands[i].cut < was->cut &&
                (!best || cands[i].cut > best->cut))
                best = &cands[i];
    }
    free(cands);
    return st;
}

static size_t count_fused(const gl_graph *g)
{
    size_t k = 0;
    gl_node *n;
    gl_foreach_node(g, i, n)
        k += n->domain[0] && !strcmp(n->domain, GL_FUSED_DOMAIN); /* most are ai.onnx's */
    return k;
}

gl_status gl_pass_fusion(gl_graph *g, gl_pass_ctx *ctx)
{
    fu_ctx c = {.g = g, .m = ctx->model, .pass = ctx,
                .exact = gl_pass_option_value(ctx, "exact-shapes") != 0,
                .units = gl_pass_option_value(ctx, "units") != 0,
                .probe = gl_pass_option_value(ctx, "probe") != 0,
                .measure = gl_pass_option_value(ctx, "measure") != 0,
                .opset = gl_model_opset(ctx->model, ""), .counter = 1};
    gl_fu_heads_init(&c.heads);
    size_t before = count_fused(g);
    if (before) {
        gl_decision *d = gl_pass_decide(ctx, "fused-groups", GL_NOTE, "%zu nodes are fused "
                                        "groups already (domain %s): left as they are",
                                        before, GL_FUSED_DOMAIN);
        gl_decision_add_number(d, "groups", (double)before);
    }
    bool changed = false;
    gl_status st = GL_OK;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (!gl_pass_may_rewrite(ctx) || (st = offer(&c, n, &changed)) != GL_OK)
            break;
    }
    for (size_t i = 0; i < c.n_memo; i++) {
        free(c.memo[i].verdict);
        free(c.memo[i].head);
    }
    free(c.memo);
    /* Fused nodes were appended after their readers. */
    return st == GL_OK && changed ? gl_toposort(g, NULL) : st;
}

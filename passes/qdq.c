/* qdq.c — the `qdq` pass: the quantized units of a QDQ model become int8 groups.
 *
 * A QDQ model (what ONNX Runtime's quantize_static writes, and tests/data/quantize.py)
 * says "this Conv runs in int8" with a pattern, not an op:
 *
 *     x_q -> DequantizeLinear -> Conv (w: DequantizeLinear of int8, b: of int32)
 *         -> [activations] -> QuantizeLinear -> y_q
 *
 * Run as written, every DequantizeLinear makes a float copy, the Conv runs in float and
 * the QuantizeLinear rounds it back. The pass makes each such unit one node calling a
 * graphlab.fused function whose body is the unit itself (group.h): the reference
 * backend runs the body as it is (fake quantization, the meaning of the graph), and the
 * oneDNN backend runs it as one int8 convolution, matmul or inner product (output scales
 * x_scale * w_scale[c], source and destination zero points, the activations as post-ops).
 * ONNX Runtime's QDQ selectors (QDQSelectorActionTransformer) make the same units into its
 * QLinearConv / QGemm kernels.
 *
 * Two rules, each a decision:
 *  - qdq-absorb-activation: a Relu or Clip right before a QuantizeLinear whose range makes
 *    it redundant goes: Q(Relu(y)) == Q(y) exactly when Q's zero point is the smallest
 *    value of its dtype (every y < 0 saturates to it anyway); a Clip's bounds likewise
 *    when each lies at or beyond the value its end of the range saturates to. ONNX
 *    Runtime's quantizer drops them the same way (QDQRemovableActivation).
 *  - qdq-group: the unit above becomes one group when the int8 kernel can take it: the
 *    scales and zero points are constants, per tensor for x and y, per tensor or per
 *    output channel for the weights (the axis the output channel is on), the weights'
 *    zero points all 0 (oneDNN 2.6 takes symmetric int8 weights only), the activations
 *    post-ops of the target with fixed parameters; then the target is asked how it runs
 *    the group built alone (qdq.probe, as the fusion pass does): a group it would run on
 *    reference kernels is refused, since the unit would then run slower than its float
 *    members. A DequantizeLinear another node reads too stays for it; the group has its
 *    own copy.
 * A unit that matches but breaks a constraint gets one refusal naming the constraint and
 * the value. A QuantizeLinear after anything else (an Add, a MaxPool) is no unit: no
 * record.
 *
 * Why a pass of its own, before the layout pass and again before fusion: grouped, a
 * quantized Conv is out of the layout pass's reach (the int8 kernel picks nhwc itself),
 * and the float fusion pass must not take its Conv + Relu as a float group. The second
 * run takes the units fold-transpose made by folding a Transpose into the product.
 */
#include "passes/fusion.h"
#include "passes/passes.h"
#include "exec/target.h"
#include "ops/opkit.h"
#include "util/plural.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ACTS 4

typedef enum qkind { Q_PRODUCT, Q_ADD } qkind;

typedef struct qunit {
    qkind kind;
    /* Q_PRODUCT: x, weights, bias (NULL without one). Q_ADD: dq_x and dq_w are the
     * DequantizeLinears of the Add's two operands, dq_b NULL. */
    gl_node *dq_x, *dq_w, *dq_b;
    gl_node *head;               /* Conv, MatMul, Gemm; or the Add of a Q_ADD unit */
    gl_node *bias_add;           /* a MatMul's Add of dq_b's output, or NULL */
    gl_node *acts[MAX_ACTS];     /* in order */
    size_t n_acts;
    gl_node *q;
    bool float_bias;             /* the head reads a bias that is no DequantizeLinear's */
} qunit;

typedef struct qdq_run {
    gl_model *m;
    gl_graph *g;
    gl_pass_ctx *ctx;
    int64_t opset;
    bool probe;
    int counter;
} qdq_run;

/* ---- small facts about values -------------------------------------------------------- */

/* The first letters tell most ops apart without a call (each of the three walks asks it
 * of every node). */
static bool is_op(const gl_node *n, const char *op)
{
    return n && n->op_type[0] == op[0] && gl_node_is(n, op);
}

static const gl_tensor *const_of(const gl_value *v)
{
    return v && gl_value_is_constant(v) ? v->init : NULL;
}

/* How many read v (a graph output counts as one). */
static size_t readers(const gl_value *v) { return v->n_uses + (v->n_output_refs ? 1 : 0); }

/* The node that produces v and is its only reader's, or NULL. */
static gl_node *sole_producer(const gl_value *v)
{
    return v && v->producer && readers(v) == 1 ? v->producer : NULL;
}

static bool is_q8(gl_dtype dt) { return dt == GL_DT_UINT8 || dt == GL_DT_INT8; }

static int64_t q_min(gl_dtype dt) { return dt == GL_DT_UINT8 ? 0 : -128; }
static int64_t q_max(gl_dtype dt) { return dt == GL_DT_UINT8 ? 255 : 127; }

/* A Q/DQ node's zero point's dtype: its input 2's, else uint8 (ONNX's default). */
static gl_dtype zero_dtype(const gl_node *n)
{
    const gl_value *z = n->n_inputs > 2 ? n->inputs[2] : NULL;
    return z && z->type.kind == GL_TYPE_TENSOR ? z->type.dtype : GL_DT_UINT8;
}

/* Every scale of a Q/DQ node is a finite positive constant: count in *n. Else why. */
static bool scales_ok(const gl_node *n, size_t *count, char *why, size_t len)
{
    const gl_tensor *s = n->n_inputs > 1 ? const_of(n->inputs[1]) : NULL;
    if (!s) {
        snprintf(why, len, "%s '%s': its scale '%s' is not a constant", n->op_type, n->name,
                 n->n_inputs > 1 && n->inputs[1] ? n->inputs[1]->name : "");
        return false;
    }
    for (int64_t i = 0; i < s->count; i++) {
        double v = gl_tensor_get_f64(s, i);
        if (!(v > 0) || !isfinite(v)) {
            snprintf(why, len, "%s '%s': scale '%s'[%lld] is %g, not a finite positive "
                     "number", n->op_type, n->name, n->inputs[1]->name, (long long)i, v);
            return false;
        }
    }
    *count = (size_t)s->count;
    return true;
}

/* The zero point is a constant (or absent); *all_zero says whether every entry is 0. */
static bool zero_ok(const gl_node *n, bool *all_zero, char *why, size_t len)
{
    const gl_value *z = n->n_inputs > 2 ? n->inputs[2] : NULL;
    *all_zero = true;
    if (!z)
        return true;
    const gl_tensor *t = const_of(z);
    if (!t) {
        snprintf(why, len, "%s '%s': its zero point '%s' is not a constant", n->op_type,
                 n->name, z->name);
        return false;
    }
    for (int64_t i = 0; i < t->count; i++)
        *all_zero &= gl_tensor_get_f64(t, i) == 0;
    return true;
}

static int64_t zero_value(const gl_node *n)
{
    const gl_tensor *t = n->n_inputs > 2 ? const_of(n->inputs[2]) : NULL;
    return t && t->count ? (int64_t)gl_tensor_get_f64(t, 0) : 0;
}

static double scale_value(const gl_node *n)
{
    return gl_tensor_get_f64(const_of(n->inputs[1]), 0);
}

/* ---- qdq-absorb-activation ------------------------------------------------------------- */

/* A Clip bound: the constant input i, or the default when absent; false when it is
 * given but not a constant scalar. */
static bool clip_bound(const gl_node *n, size_t i, float dflt, float *out)
{
    *out = dflt;
    if (n->n_inputs <= i || !n->inputs[i])
        return true;
    const gl_tensor *t = const_of(n->inputs[i]);
    if (!t || t->count != 1)
        return false;
    *out = (float)gl_tensor_get_f64(t, 0);
    return true;
}

/* Does Q(act(y)) equal Q(y) for every y? For Relu and Clip (opset 11 on: bounds as
 * inputs) only. */
static bool absorbed_by(const gl_node *act, const gl_node *q, int64_t opset, char *why,
                        size_t len)
{
    gl_dtype dt = zero_dtype(q);
    float s = (float)scale_value(q);
    int64_t z = zero_value(q);
    float lo = 0, hi = INFINITY;
    if (is_op(act, "Clip")) {
        if (opset < 11 || !clip_bound(act, 1, -INFINITY, &lo) ||
            !clip_bound(act, 2, INFINITY, &hi)) {
            snprintf(why, len, "Clip '%s': bounds not constant scalars", act->name);
            return false;
        }
    }
    bool low = isinf(lo) && lo < 0 ? true : gl_quantize_value(lo, s, z, dt) == q_min(dt);
    bool high = isinf(hi) && hi > 0 ? true : gl_quantize_value(hi, s, z, dt) == q_max(dt);
    if (!low || !high) {
        snprintf(why, len, "%s '%s' [%g, %g] cuts inside the range QuantizeLinear '%s' "
                 "represents ([%g, %g]: scale %g, zero point %lld)", act->op_type, act->name,
                 (double)lo, (double)hi, q->name, (double)((float)(q_min(dt) - z) * s),
                 (double)((float)(q_max(dt) - z) * s), (double)s, (long long)z);
        return false;
    }
    return true;
}

static gl_status absorb_activations(qdq_run *r)
{
    gl_node *q;
    gl_foreach_node(r->g, i, q) {
        if (!gl_pass_may_rewrite(r->ctx))
            break;
        if (!is_op(q, "QuantizeLinear") || q->n_inputs < 2 || !q->outputs[0])
            continue;
        gl_node *act = sole_producer(q->inputs[0]);
        if (!is_op(act, "Relu") && !is_op(act, "Clip"))
            continue;
        size_t n_scales;
        bool zero_is_zero;
        char why[320];
        if (!scales_ok(q, &n_scales, why, sizeof(why)) || n_scales != 1 ||
            !zero_ok(q, &zero_is_zero, why, sizeof(why)) || !is_q8(zero_dtype(q)))
            continue; /* not a per-tensor int8 quantization: not this rule's */
        if (!absorbed_by(act, q, r->opset, why, sizeof(why))) {
            gl_decision *d = gl_pass_decide(r->ctx, "qdq-absorb-activation", GL_REFUSED,
                                            "%s", why);
            gl_decision_add_node_ref(d, act);
            gl_decision_add_node_ref(d, q);
            continue;
        }
        gl_decision *d = gl_pass_decide(r->ctx, "qdq-absorb-activation", GL_APPLIED,
                                        "%s '%s' goes: QuantizeLinear '%s' saturates every "
                                        "value it would change (scale %g, zero point %lld)",
                                        act->op_type, act->name, q->name, scale_value(q),
                                        (long long)zero_value(q));
        gl_decision_add_node_ref(d, act);
        gl_decision_add_node_ref(d, q);
        if (gl_pass_vetoed(r->ctx, d))
            continue;
        gl_node_inherit_provenance(q, &act, 1, d->id);
        gl_status st = gl_set_input(r->g, q, 0, act->inputs[0]);
        if (st == GL_OK)
            st = gl_remove_node(r->g, act);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* ---- qdq-integer-op ------------------------------------------------------------------------ */

/* Ops that give the same result on the integers as on their dequantized values, when the
 * QuantizeLinear after them has the DequantizeLinear's scale and zero point: they move
 * or pick elements (max pooling picks the largest, and dequantization keeps the order),
 * and Q(DQ(x)) == x exactly for 8-bit x. ONNX Runtime drops these pairs the same way
 * (its DropQDQNodesRules). The opset is the first where the op takes 8-bit integers. */
static const struct integer_op {
    const char *op;
    int since;
} integer_ops[] = {
    {"MaxPool", 12}, {"Reshape", 5}, {"Flatten", 1}, {"Transpose", 1}, {"Squeeze", 1},
    {"Unsqueeze", 1}, {"Identity", 1},
};

static const struct integer_op *integer_op(const gl_node *n)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(integer_ops); i++)
        if (is_op(n, integer_ops[i].op))
            return &integer_ops[i];
    return NULL;
}

/* The same per-tensor 8-bit quantization: scale bits, zero point and dtype. */
static bool same_quantization(const gl_node *dq, const gl_node *q)
{
    const gl_tensor *s1 = const_of(dq->inputs[1]), *s2 = const_of(q->inputs[1]);
    return s1 && s2 && s1->count == 1 && s2->count == 1 &&
           (float)gl_tensor_get_f64(s1, 0) == (float)gl_tensor_get_f64(s2, 0) &&
           zero_dtype(dq) == zero_dtype(q) && zero_value(dq) == zero_value(q) &&
           (dq->n_inputs < 3 || !dq->inputs[2] || const_of(dq->inputs[2])) &&
           (q->n_inputs < 3 || !q->inputs[2] || const_of(q->inputs[2]));
}

/* DequantizeLinear -> op -> QuantizeLinear, the op an integer_op whose other outputs are
 * unread: the op's input 0 and its output 0, or false. */
static bool match_integer_op(const qdq_run *r, gl_node *q, gl_node **op_out, gl_node **dq_out,
                             char *why, size_t len)
{
    gl_node *op = sole_producer(q->inputs[0]);
    const struct integer_op *row = integer_op(op);
    if (!row || !op->inputs[0] || !is_op(op->inputs[0]->producer, "DequantizeLinear"))
        return false;
    gl_node *dq = op->inputs[0]->producer;
    if (dq->n_inputs < 2 || !dq->inputs[1])
        return false;
    *op_out = op;
    *dq_out = dq;
    why[0] = '\0';
    if (!same_quantization(dq, q) || !is_q8(zero_dtype(q)))
        snprintf(why, len, "DequantizeLinear '%s' and QuantizeLinear '%s' quantize "
                 "differently: %s would requantize", dq->name, q->name, op->op_type);
    else if (r->opset < row->since)
        snprintf(why, len, "%s takes 8-bit integers from opset %d, the model has %lld",
                 op->op_type, row->since, (long long)r->opset);
    else if (q->outputs[0]->n_output_refs)
        snprintf(why, len, "'%s' is a graph output: its name would go", q->outputs[0]->name);
    for (size_t o = 1; o < op->n_outputs && !why[0]; o++)
        if (op->outputs[o] && readers(op->outputs[o]))
            snprintf(why, len, "%s '%s': output %zu is read", op->op_type, op->name, o);
    return true;
}

static gl_status integer_ops_pass(qdq_run *r)
{
    gl_node *q;
    gl_foreach_node(r->g, i, q) {
        if (!gl_pass_may_rewrite(r->ctx))
            break;
        gl_node *op, *dq;
        char why[320];
        if (!is_op(q, "QuantizeLinear") || q->n_inputs < 2 || !q->outputs[0] ||
            !match_integer_op(r, q, &op, &dq, why, sizeof(why)))
            continue;
        if (why[0]) {
            gl_decision *d = gl_pass_decide(r->ctx, "qdq-integer-op", GL_REFUSED, "%s", why);
            gl_decision_add_node_ref(d, op);
            continue;
        }
        gl_decision *d = gl_pass_decide(r->ctx, "qdq-integer-op", GL_APPLIED,
                                        "%s '%s' runs on the 8-bit values: DequantizeLinear "
                                        "'%s' and QuantizeLinear '%s' go (one scale %g and "
                                        "zero point %lld)", op->op_type, op->name, dq->name,
                                        q->name, scale_value(q), (long long)zero_value(q));
        gl_decision_add_node_ref(d, dq);
        gl_decision_add_node_ref(d, op);
        gl_decision_add_node_ref(d, q);
        if (gl_pass_vetoed(r->ctx, d))
            continue;
        gl_node *srcs[2] = {dq, q};
        gl_node_inherit_provenance(op, srcs, 2, d->id);
        gl_value *y = op->outputs[0];
        gl_status st = gl_set_input(r->g, op, 0, dq->inputs[0]);
        if (st == GL_OK) {
            y->type.dtype = zero_dtype(q);
            st = gl_replace_all_uses(r->g, q->outputs[0], y);
        }
        if (st == GL_OK)
            st = gl_remove_node(r->g, q);
        if (st == GL_OK && !readers(dq->outputs[0]))
            st = gl_remove_node(r->g, dq);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* ---- qdq-group: the match ---------------------------------------------------------------- */

/* A DequantizeLinear with its x and scale (a hostile file may leave them out). */
static bool is_dq(const gl_node *n)
{
    return is_op(n, "DequantizeLinear") && n->n_inputs >= 2 && n->inputs[0] && n->inputs[1];
}

/* The walk goes through values read by others too: check_links refuses them, so that a
 * unit that would be one but for a second reader gets a record saying so. */
static gl_node *producer_of(const gl_value *v) { return v ? v->producer : NULL; }

/* The walk back from QuantizeLinear q to a head, edit-free. False when q ends no unit
 * (nothing to say); true with u filled (its DQs may be NULL: check_unit says why). */
static bool match_unit(const qdq_run *r, gl_node *q, qunit *u)
{
    memset(u, 0, sizeof(*u));
    if (!is_op(q, "QuantizeLinear") || q->n_inputs < 2 || !q->outputs[0])
        return false;
    u->q = q;
    gl_node *at = producer_of(q->inputs[0]);
    const gl_target *t = gl_target_default();
    gl_node *acts[MAX_ACTS];
    size_t n = 0;
    while (at && n < MAX_ACTS && at->n_inputs >= 1 &&
           t->eltwise_posts(at, gl_model_opset(r->m, at->domain)) > 0) {
        acts[n++] = at;
        at = producer_of(at->inputs[0]);
    }
    for (size_t i = 0; i < n; i++)
        u->acts[i] = acts[n - 1 - i];
    u->n_acts = n;
    if (is_op(at, "Add") && at->n_inputs == 2 && at->inputs[0] && at->inputs[1] &&
        is_dq(at->inputs[0]->producer) &&
        is_dq(at->inputs[1]->producer)) {
        u->kind = Q_ADD;
        u->head = at;
        u->dq_x = at->inputs[0]->producer;
        u->dq_w = at->inputs[1]->producer;
        return true;
    }
    if (is_op(at, "Add") && at->n_inputs == 2) {
        for (int s = 0; s < 2; s++) {
            gl_node *mm = producer_of(at->inputs[s]);
            gl_node *b = at->inputs[1 - s] ? at->inputs[1 - s]->producer : NULL;
            if (is_op(mm, "MatMul") && is_dq(b)) {
                u->bias_add = at;
                u->dq_b = b;
                at = mm;
                break;
            }
        }
    }
    if (!is_op(at, "Conv") && !is_op(at, "MatMul") && !is_op(at, "Gemm"))
        return false;
    u->head = at;
    if (at->n_inputs < 2 || !at->inputs[0] || !at->inputs[1])
        return false;
    gl_node *x = at->inputs[0]->producer, *w = at->inputs[1]->producer;
    if (!is_dq(x))
        return false; /* a float Conv before a Q: no unit */
    u->dq_x = x;
    u->dq_w = is_dq(w) ? w : NULL;
    if (!u->bias_add && at->n_inputs > 2 && at->inputs[2]) {
        u->dq_b = at->inputs[2]->producer;
        u->float_bias = !is_dq(u->dq_b);
    }
    return true;
}

/* The axis a per-channel weight scale must be on: the output channel's. */
static int64_t weight_axis(const gl_node *head, int w_rank)
{
    if (is_op(head, "Conv"))
        return 0;
    if (is_op(head, "Gemm"))
        return gl_node_attr_int(head, "transB", 0) ? 0 : 1;
    return w_rank - 1; /* MatMul's B [K, N] */
}

static const char *rank_problem(const qunit *u)
{
    const gl_value *w = u->dq_w->inputs[0];
    int rank = w->init ? w->init->rank : -1;
    if (is_op(u->head, "MatMul") && rank != 2)
        return "MatMul weights of rank other than 2";
    if (is_op(u->head, "Gemm") && rank != 2)
        return "Gemm weights of rank other than 2";
    if (is_op(u->head, "Conv") && rank < 3)
        return "Conv weights of rank below 3";
    if (is_op(u->head, "Gemm") && (gl_node_attr_int(u->head, "transA", 0) ||
                                    gl_node_attr_float(u->head, "alpha", 1) != 1 ||
                                    gl_node_attr_float(u->head, "beta", 1) != 1))
        return "Gemm with transA, alpha or beta";
    return NULL;
}

/* The per-tensor DQ/Q checks: scale, zero point, dtype. */
static bool check_tensor_q(const gl_node *n, char *why, size_t len)
{
    size_t count;
    bool zero0;
    if (!scales_ok(n, &count, why, len) || !zero_ok(n, &zero0, why, len))
        return false;
    if (count != 1) {
        snprintf(why, len, "%s '%s' quantizes per axis: the int8 kernel takes a per-tensor "
                 "scale here", n->op_type, n->name);
        return false;
    }
    if (!is_q8(zero_dtype(n))) {
        snprintf(why, len, "%s '%s' is not 8-bit", n->op_type, n->name);
        return false;
    }
    return true;
}

static bool check_weights(const qunit *u, char *why, size_t len)
{
    const gl_node *w = u->dq_w;
    if (!w) {
        snprintf(why, len, "%s '%s': its weights '%s' are not a DequantizeLinear's",
                 u->head->op_type, u->head->name, u->head->inputs[1]->name);
        return false;
    }
    const gl_tensor *wq = w->n_inputs ? const_of(w->inputs[0]) : NULL;
    if (!wq || wq->dtype != GL_DT_INT8) {
        snprintf(why, len, "DequantizeLinear '%s': weights '%s' are not an int8 constant",
                 w->name, w->inputs[0]->name);
        return false;
    }
    const char *rank = rank_problem(u);
    if (rank) {
        snprintf(why, len, "%s '%s': %s", u->head->op_type, u->head->name, rank);
        return false;
    }
    size_t count;
    bool zero0;
    if (!scales_ok(w, &count, why, len) || !zero_ok(w, &zero0, why, len))
        return false;
    if (!zero0) {
        snprintf(why, len, "DequantizeLinear '%s': weight zero points are not all 0 (oneDNN "
                 "2.6 takes symmetric int8 weights only)", w->name);
        return false;
    }
    int64_t axis = gl_node_attr_int(w, "axis", 1);
    if (axis < 0)
        axis += wq->rank;
    int64_t want = weight_axis(u->head, wq->rank);
    if (count > 1 && (axis != want || (int64_t)count != wq->dims[want])) {
        snprintf(why, len, "DequantizeLinear '%s': %zu scales on axis %lld; the int8 kernel "
                 "takes one per output channel, on axis %lld", w->name, count,
                 (long long)axis, (long long)want);
        return false;
    }
    return true;
}

static bool check_bias(const qunit *u, char *why, size_t len)
{
    const gl_node *b = u->dq_b;
    if (!b && !u->float_bias)
        return true;
    if (u->float_bias || !is_op(b, "DequantizeLinear") || !const_of(b->inputs[0]) ||
        b->inputs[0]->init->dtype != GL_DT_INT32) {
        snprintf(why, len, "%s '%s': its bias is not a DequantizeLinear of an int32 constant",
                 u->head->op_type, u->head->name);
        return false;
    }
    size_t count;
    bool zero0;
    if (!scales_ok(b, &count, why, len) || !zero_ok(b, &zero0, why, len))
        return false;
    if (!zero0) {
        snprintf(why, len, "DequantizeLinear '%s': bias zero points are not 0", b->name);
        return false;
    }
    if (u->bias_add && b->inputs[0]->init->rank != 1) {
        snprintf(why, len, "Add '%s': the bias '%s' is not one value per column",
                 u->bias_add->name, b->inputs[0]->name);
        return false;
    }
    return true;
}

/* The value between members is read by the next member alone and is no graph output. */
static bool check_links(const qunit *u, char *why, size_t len)
{
    const gl_node *chain[MAX_ACTS + 3];
    size_t n = 0;
    chain[n++] = u->head;
    if (u->bias_add)
        chain[n++] = u->bias_add;
    for (size_t i = 0; i < u->n_acts; i++)
        chain[n++] = u->acts[i];
    for (size_t i = 0; i < n; i++) {
        const gl_value *v = chain[i]->outputs[0];
        if (readers(v) != 1) {
            snprintf(why, len, "'%s' (%s '%s') is read by %zu %s or is a graph output",
                     v->name, chain[i]->op_type, chain[i]->name, readers(v),
                     gl_noun((long long)readers(v), "node", "nodes"));
            return false;
        }
    }
    return true;
}

static bool check_acts(const qdq_run *r, const qunit *u, char *why, size_t len)
{
    const gl_target *t = gl_target_default();
    for (size_t i = 0; i < u->n_acts; i++) {
        const gl_node *a = u->acts[i];
        const gl_tensor *params[GL_FU_MAX_INPUTS] = {NULL};
        for (size_t j = 1; j < a->n_inputs && j < GL_FU_MAX_INPUTS; j++) {
            if (a->inputs[j] && !const_of(a->inputs[j])) {
                snprintf(why, len, "%s '%s': its input '%s' is not a constant", a->op_type,
                         a->name, a->inputs[j]->name);
                return false;
            }
            params[j] = a->inputs[j] ? a->inputs[j]->init : NULL;
        }
        const char *w = "";
        if (!t->eltwise_params(a, r->opset, params, GL_FU_MAX_INPUTS, &w)) {
            snprintf(why, len, "%s '%s': %s", a->op_type, a->name, w);
            return false;
        }
    }
    return true;
}

/* An Add unit: two activations of one shape (a residual connection), each quantized per
 * tensor; oneDNN's binary add takes both as they are, with a scale each. */
static bool check_add(const qunit *u, char *why, size_t len)
{
    const gl_value *a = u->dq_x->inputs[0], *b = u->dq_w->inputs[0];
    if (gl_value_is_constant(a) || gl_value_is_constant(b)) {
        snprintf(why, len, "Add '%s' adds a constant: the unit is for two activations",
                 u->head->name);
        return false;
    }
    if (a->type.kind != GL_TYPE_TENSOR || b->type.kind != GL_TYPE_TENSOR ||
        a->type.shape.rank < 0 || !gl_shape_equal(&a->type.shape, &b->type.shape)) {
        snprintf(why, len, "Add '%s': '%s' and '%s' are not known to have one shape (no "
                 "broadcast in the int8 add)", u->head->name, a->name, b->name);
        return false;
    }
    return check_tensor_q(u->dq_w, why, len);
}

/* Everything the int8 kernel needs; false with why (the constraint's text). */
static bool check_unit(const qdq_run *r, const qunit *u, char *why, size_t len)
{
    if (u->kind == Q_ADD)
        return check_tensor_q(u->dq_x, why, len) && check_tensor_q(u->q, why, len) &&
               check_add(u, why, len) && check_links(u, why, len) && check_acts(r, u, why, len);
    return check_tensor_q(u->dq_x, why, len) && check_tensor_q(u->q, why, len) &&
           check_weights(u, why, len) && check_bias(u, why, len) &&
           check_links(u, why, len) && check_acts(r, u, why, len);
}

/* ---- qdq-group: the rewrite --------------------------------------------------------------- */

static size_t members_of(const qunit *u, gl_node **out)
{
    size_t n = 0;
    out[n++] = u->dq_x;
    if (u->dq_w != u->dq_x) /* Add(x, x) */
        out[n++] = u->dq_w;
    if (u->dq_b)
        out[n++] = u->dq_b;
    out[n++] = u->head;
    if (u->bias_add)
        out[n++] = u->bias_add;
    for (size_t i = 0; i < u->n_acts; i++)
        out[n++] = u->acts[i];
    out[n++] = u->q;
    return n;
}

static const char *base_name(const qunit *u)
{
    if (u->kind == Q_ADD)
        return "QAdd";
    return is_op(u->head, "Conv") ? "QConv" : is_op(u->head, "Gemm") ? "QGemm" : "QMatMul";
}

static char *function_name(qdq_run *r, const qunit *u)
{
    char name[64];
    for (;; r->counter++) {
        snprintf(name, sizeof(name), "%s_%d", base_name(u), r->counter);
        if (!gl_model_function(r->m, GL_FUSED_DOMAIN, name))
            break;
    }
    /* The counter moves on when the group is made: QConv_K is the K-th group. */
    return gl_xstrdup(name);
}

static gl_status make_group(gl_model *m, gl_graph *g, const qunit *u, const char *fname,
                            int64_t decision)
{
    gl_node *members[MAX_ACTS + 6];
    size_t n = members_of(u, members);
    size_t index = 0;
    char doc[200];
    snprintf(doc, sizeof(doc), "graphlab qdq unit (%s '%s' between DequantizeLinear and "
             "QuantizeLinear): one int8 kernel", u->head->op_type, u->head->name);
    gl_node *owner = u->q;
    gl_group_spec spec = {members, n, &owner, &index, 1, fname, doc, decision};
    return gl_group_make(m, g, &spec, NULL);
}

/* The target's answer on the group built alone: true when it runs it as its own kernel
 * (impl says which); false with why. */
static bool probe_unit(qdq_run *r, const qunit *u, const char *fname, char *impl,
                       size_t impl_len, char *why, size_t len)
{
    gl_node *members[MAX_ACTS + 6];
    size_t n = members_of(u, members);
    uint32_t ids[MAX_ACTS + 6];
    size_t index = 0;
    gl_node *owner = u->q;
    gl_model *t = gl_fu_trial_model(r->m, members, n, &owner, &index, 1, ids, why, len);
    if (!t)
        return false;
    qunit copy = *u;
    gl_node **slots[] = {&copy.dq_x, &copy.dq_w, &copy.dq_b, &copy.head, &copy.bias_add,
                         &copy.q};
    for (size_t i = 0; i < GL_ARRAY_LEN(slots); i++)
        for (size_t k = 0; k < n && *slots[i]; k++)
            if (members[k] == *slots[i]) {
                *slots[i] = gl_find_node_by_id(t->graph, ids[k]);
                break;
            }
    for (size_t i = 0; i < u->n_acts; i++)
        for (size_t k = 0; k < n; k++)
            if (members[k] == u->acts[i])
                copy.acts[i] = gl_find_node_by_id(t->graph, ids[k]);
    bool ok = make_group(t, t->graph, &copy, fname, -1) == GL_OK &&
              gl_toposort(t->graph, NULL) == GL_OK;
    const gl_node *call = NULL, *nd;
    gl_foreach_node(t->graph, i, nd) if (!strcmp(nd->domain, GL_FUSED_DOMAIN))
        call = nd;
    if (!ok || !call) {
        snprintf(why, len, "the group alone could not be made: %s", gl_error_message());
        gl_error_clear();
        gl_model_free(t);
        return false;
    }
    char pwhy[256];
    bool fast = gl_target_probe(t, call, impl, impl_len, pwhy, sizeof(pwhy));
    if (!fast)
        snprintf(why, len, "%s runs the group as %s", gl_target_default()->name, pwhy);
    gl_model_free(t);
    return fast;
}

static void describe(gl_decision *d, const qunit *u)
{
    gl_node *members[MAX_ACTS + 6];
    size_t n = members_of(u, members);
    for (size_t i = 0; i < n; i++)
        gl_decision_add_node_ref(d, members[i]);
    gl_decision_add_number(d, "x_scale", scale_value(u->dq_x));
    gl_decision_add_number(d, "x_zero_point", (double)zero_value(u->dq_x));
    gl_decision_add_number(d, "y_scale", scale_value(u->q));
    gl_decision_add_number(d, "y_zero_point", (double)zero_value(u->q));
    const gl_tensor *w = u->kind == Q_PRODUCT ? const_of(u->dq_w->inputs[0]) : NULL;
    if (u->kind == Q_ADD) {
        gl_decision_add_number(d, "b_scale", scale_value(u->dq_w));
        gl_decision_add_number(d, "b_zero_point", (double)zero_value(u->dq_w));
    }
    if (w) {
        gl_decision_add_number(d, "weight_bytes_int8", (double)gl_tensor_nbytes(w));
        gl_decision_add_number(d, "weight_bytes_float", 4.0 * (double)gl_tensor_nbytes(w));
        gl_decision_add_number(d, "weight_scales",
                               (double)const_of(u->dq_w->inputs[1])->count);
    }
    gl_decision_add_number(d, "activations", (double)u->n_acts);
}

static gl_status group_units(qdq_run *r)
{
    gl_node *q;
    gl_foreach_node(r->g, i, q) {
        if (!gl_pass_may_rewrite(r->ctx))
            break;
        qunit u;
        if (!match_unit(r, q, &u))
            continue;
        char why[400];
        if (!check_unit(r, &u, why, sizeof(why))) {
            gl_decision *d = gl_pass_decide(r->ctx, "qdq-group", GL_REFUSED, "%s '%s' stays "
                                            "float: %s", u.head->op_type, u.head->name, why);
            gl_decision_add_node_ref(d, u.head);
            gl_decision_add_node_ref(d, u.q);
            continue;
        }
        char *fname = function_name(r, &u);
        char impl[96] = "";
        gl_decision *d;
        bool go;
        if (r->probe && !probe_unit(r, &u, fname, impl, sizeof(impl), why, sizeof(why))) {
            d = gl_pass_refuse(r->ctx, "qdq-group", true, "%s '%s' stays float: %s",
                               u.head->op_type, u.head->name, why);
            describe(d, &u);
            go = d->verdict == GL_APPLIED; /* forced */
        } else {
            d = gl_pass_decide(r->ctx, "qdq-group", GL_APPLIED, "%s '%s' with its "
                               "DequantizeLinears and QuantizeLinear becomes %s: one int8 "
                               "kernel",
                               u.head->op_type, u.head->name, fname);
            describe(d, &u);
            if (impl[0])
                gl_decision_add_text(d, "implementation", impl);
            go = !gl_pass_vetoed(r->ctx, d);
        }
        gl_status st = go ? make_group(r->m, r->g, &u, fname, d->id) : GL_OK;
        r->counter += go;
        free(fname);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* Each rule starts from a QuantizeLinear (the walks below skip every other node). */
static bool has_quantize(const gl_graph *g)
{
    const gl_node *n;
    gl_foreach_node(g, i, n) if (is_op(n, "QuantizeLinear"))
        return true;
    return false;
}

gl_status gl_pass_qdq(gl_graph *g, gl_pass_ctx *ctx)
{
    if (!has_quantize(g)) /* a float model: one look at each node, not three */
        return GL_OK;
    qdq_run r = {ctx->model, g, ctx, gl_model_opset(ctx->model, ""),
                 gl_pass_option_value(ctx, "probe") != 0, 0};
    int64_t applied = ctx->applied;
    gl_status st = absorb_activations(&r);
    if (st == GL_OK)
        st = integer_ops_pass(&r);
    if (st == GL_OK)
        st = group_units(&r);
    /* Groups are appended after their readers. Every edit follows an applied decision:
     * with none, the graph is the sorted one the pass was given (on the 100k-node ladder,
     * which has no QuantizeLinear, the sort was most of the step). */
    if (st == GL_OK && ctx->applied != applied)
        st = gl_toposort(g, NULL);
    return st;
}

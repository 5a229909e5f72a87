/* dn_qgroup.c — a QDQ group (a graphlab.fused call made by the qdq pass) as one oneDNN int8
 * primitive (dn_qprod.c, dn_qadd.c). The body, read by its structure, never by its name:
 *   DequantizeLinear(x_q, x_scale, x_zero)          the source, u8 or s8 per tensor
 *   DequantizeLinear(w_q, w_scale, w_zero)          int8 constant weights, zero point 0,
 *                                                   per tensor or per output channel
 *   [DequantizeLinear(b_q, b_scale, b_zero)]        int32 constant bias
 *   Conv(x, w[, b]) | MatMul(x, w) [+ Add(., b)] | Gemm(x, w[, b])
 *   activations (eltwise post-ops with constant parameters)
 *   QuantizeLinear(y, y_scale, y_zero)              the call's only output, per tensor
 * or a QAdd group (dn_qadd.c):
 *   DequantizeLinear(a_q, a_scale, a_zero)          u8 or s8 per tensor, a call input
 *   DequantizeLinear(b_q, b_scale, b_zero)          the same (b may broadcast to a)
 *   Add(a, b)                                       (or Add(b, a))
 *   activations, QuantizeLinear(y, y_scale, y_zero) as above
 * the DequantizeLinears in any order before the head, each value read once inside. The
 * scales and zero points must be constants of the call (the pass makes them so; a call
 * that breaks the rule is refused with the reason, and its body runs). The reference runs
 * the body as it is (fake quantization): the int8 primitive may differ from it by one
 * step of y_scale where a rounding tie flips.
 *
 * A claim parses the body and, when the IR knows the source's shape, builds the
 * descriptor: a refusal leaves the call to the executor, which runs the body (the plan
 * says why). A build refused at run time runs the members on the reference kernels.
 */
#include "exec/dnnl/dn_opkit.h"
#include "ir/calls.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX

typedef struct qgroup {
    dn_node node;             /* first: the backend reads the state as a dn_node */
    bool is_add;              /* a QAdd group: qa, else q */
    dn_qprod q;
    dn_qadd qa;
    const gl_node *call;
    char members[120];        /* "Conv 'c', Relu 'r'" for the plan */
} qgroup;

static gl_status qgroup_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const qgroup *u = (const qgroup *)b->s;
    return u->is_add ? dn_qadd_build(b, &u->qa, pd) : dn_qprod_build(b, &u->q, pd);
}

static const dn_op qgroup_op = {"", "(int8 group)", 1, NULL, qgroup_build, NULL};

/* A refused build: the body on the reference kernels (k->backend_ctx is the plan's). */
static gl_status run_members(gl_kernel_ctx *k)
{
    return dn_fused_run_members(k->backend_ctx, k);
}

static const gl_op_def members_def = {"", "(the group's members)", 1, NULL, run_members, 0};

bool dn_qgroup_state(const void *state)
{
    return state && ((const dn_node *)state)->op == &qgroup_op;
}

void dn_qgroup_release(void *state)
{
    qgroup *u = state;
    if (!u)
        return;
    dn_node_clear(&u->node);
    dn_qprod_clear(&u->q);
    free(u);
}

/* ---- the body ------------------------------------------------------------------------- */

bool dn_qgroup_is(const gl_function *fn)
{
    const gl_graph *b = fn ? fn->body : NULL;
    return b && b->n_nodes >= 3 && b->nodes[0] && b->nodes[b->n_nodes - 1] &&
           gl_node_is(b->nodes[0], "DequantizeLinear") &&
           gl_node_is(b->nodes[b->n_nodes - 1], "QuantizeLinear");
}

/* The members by role. */
typedef struct qbody {
    const gl_node *dq[3];     /* the DequantizeLinears, in body order */
    size_t n_dq;
    const gl_node *dq_x, *dq_w, *dq_b, *head, *add, *quant;
    const gl_node *acts[DN_QMAX_ACTS];
    size_t n_acts;
} qbody;

/* v is read once, inside the body, by n. */
static bool read_once_by(const gl_value *v, const gl_node *n)
{
    size_t uses = 0;
    for (size_t i = 0; v && i < n->n_inputs; i++)
        uses += n->inputs[i] == v;
    return v && v->n_uses == 1 && !v->n_output_refs && uses == 1;
}

/* The DequantizeLinear whose output v is, read by n alone (NULL: none). */
static const gl_node *dq_of(const qbody *qb, const gl_value *v, const gl_node *n)
{
    for (size_t i = 0; i < qb->n_dq; i++)
        if (qb->dq[i]->outputs[0] == v && read_once_by(v, n))
            return qb->dq[i];
    return NULL;
}

static bool one_output(const gl_node *n)
{
    return n->n_outputs >= 1 && n->outputs[0] && (n->n_outputs == 1 || !n->outputs[1]);
}

/* The activations from body node i on, reading prev, then the QuantizeLinear that ends the
 * body; false (why) when the body does not end so. */
static bool chain_roles(const gl_graph *g, size_t i, const gl_value *prev, const gl_node *call,
                        qbody *qb, char *why, size_t len)
{
    for (; i + 1 < g->n_nodes && qb->n_acts < DN_QMAX_ACTS; i++) {
        const gl_node *n = g->nodes[i];
        if (!n || !n->n_inputs || n->inputs[0] != prev || !read_once_by(prev, n) ||
            !one_output(n)) {
            snprintf(why, len, "member '%s' does not read the chain once as its first input",
                     n ? n->name : "?");
            return false;
        }
        qb->acts[qb->n_acts++] = n;
        prev = n->outputs[0];
    }
    const gl_node *q = i + 1 == g->n_nodes ? g->nodes[i] : NULL;
    if (!q || !gl_node_is(q, "QuantizeLinear") || !q->n_inputs || q->inputs[0] != prev ||
        !read_once_by(prev, q) || !one_output(q) || g->n_outputs != 1 ||
        g->outputs[0] != q->outputs[0] || call->n_outputs != 1) {
        snprintf(why, len, "the group does not end in one QuantizeLinear of its chain (at "
                 "most %d activations)", DN_QMAX_ACTS);
        return false;
    }
    qb->quant = q;
    return true;
}

/* A QAdd group's roles after its two DequantizeLinears: head the Add of their outputs
 * (dq_x the first operand's, dq_w the second's). */
static bool add_roles(const gl_graph *g, const gl_node *call, qbody *qb, char *why, size_t len)
{
    const gl_node *h = qb->head;
    qb->dq_x = h->n_inputs == 2 ? dq_of(qb, h->inputs[0], h) : NULL;
    qb->dq_w = h->n_inputs == 2 ? dq_of(qb, h->inputs[1], h) : NULL;
    if (qb->n_dq != 2 || !qb->dq_x || !qb->dq_w || qb->dq_x == qb->dq_w || !one_output(h)) {
        snprintf(why, len, "Add '%s' does not add the outputs of the group's two "
                 "DequantizeLinears", h->name);
        return false;
    }
    return chain_roles(g, qb->n_dq + 1, h->outputs[0], call, qb, why, len);
}

/* The roles of fn's body; false (why) when it is no QDQ group of a product or an Add. */
static bool body_roles(const gl_function *fn, const gl_node *call, qbody *qb, char *why,
                       size_t len)
{
    const gl_graph *g = fn->body;
    memset(qb, 0, sizeof(*qb));
    size_t i = 0;
    for (; i < g->n_nodes && g->nodes[i] && gl_node_is(g->nodes[i], "DequantizeLinear") &&
           qb->n_dq < 3; i++)
        qb->dq[qb->n_dq++] = g->nodes[i];
    const gl_node *h = i < g->n_nodes ? g->nodes[i] : NULL;
    if (h && gl_node_is(h, "Add")) {
        qb->head = h;
        return add_roles(g, call, qb, why, len);
    }
    if (!h || !(gl_node_is(h, "Conv") || gl_node_is(h, "MatMul") || gl_node_is(h, "Gemm")) ||
        !one_output(h)) {
        snprintf(why, len, "no Conv, MatMul, Gemm or Add after the DequantizeLinears");
        return false;
    }
    qb->head = h;
    qb->dq_x = h->n_inputs > 0 ? dq_of(qb, h->inputs[0], h) : NULL;
    qb->dq_w = h->n_inputs > 1 ? dq_of(qb, h->inputs[1], h) : NULL;
    bool matmul = gl_node_is(h, "MatMul");
    if (h->n_inputs > 2 && h->inputs[2] && !(qb->dq_b = dq_of(qb, h->inputs[2], h))) {
        snprintf(why, len, "%s '%s': its bias is not a DequantizeLinear of the group",
                 h->op_type, h->name);
        return false;
    }
    if (!qb->dq_x || !qb->dq_w || qb->dq_x == qb->dq_w) {
        snprintf(why, len, "%s '%s' does not read a DequantizeLinear of the source and one "
                 "of the weights", h->op_type, h->name);
        return false;
    }
    const gl_value *prev = h->outputs[0];
    i++;
    /* MatMul's bias: an Add of the third DequantizeLinear */
    if (matmul && qb->n_dq == 3 && i < g->n_nodes && g->nodes[i] &&
        gl_node_is(g->nodes[i], "Add") && g->nodes[i]->n_inputs == 2 &&
        read_once_by(prev, g->nodes[i]) && one_output(g->nodes[i])) {
        const gl_node *add = g->nodes[i];
        qb->dq_b = dq_of(qb, add->inputs[add->inputs[0] == prev ? 1 : 0], add);
        qb->add = qb->dq_b ? add : NULL;
        prev = qb->add ? add->outputs[0] : prev;
        i += qb->add != NULL;
    }
    if (qb->n_dq != 2 + (qb->dq_b != NULL)) {
        snprintf(why, len, "a DequantizeLinear that is not the source, weights or bias of "
                 "%s '%s'", h->op_type, h->name);
        return false;
    }
    return chain_roles(g, i, prev, call, qb, why, len);
}

/* ---- the parameters --------------------------------------------------------------------- */

/* The call's value in the place of body input v (NULL: omitted, or v is no formal). */
static const gl_value *call_value(const gl_function *fn, const gl_node *call, const gl_value *v)
{
    for (size_t i = 0; v && i < fn->body->n_inputs && i < call->n_inputs; i++)
        if (fn->body->inputs[i] == v)
            return call->inputs[i];
    return NULL;
}

static size_t call_index(const gl_function *fn, const gl_node *call, const gl_value *v)
{
    for (size_t i = 0; v && i < fn->body->n_inputs && i < call->n_inputs; i++)
        if (fn->body->inputs[i] == v)
            return call->inputs[i] ? i : NONE;
    return NONE;
}

/* Input `i` of member n as a constant of the call: *t its initializer (NULL when the input
 * is omitted). False (why) when it is given and no constant. */
static bool member_constant(const gl_function *fn, const gl_node *call, const gl_node *n,
                            size_t i, const gl_tensor **t, char *why, size_t len)
{
    *t = NULL;
    const gl_value *v = i < n->n_inputs ? n->inputs[i] : NULL;
    if (!v)
        return true;
    const gl_value *cv = call_value(fn, call, v);
    if (!cv || !cv->init || !gl_value_is_constant(cv)) {
        snprintf(why, len, "%s '%s': input '%s' is not a constant of the call", n->op_type,
                 n->name, v->name);
        return false;
    }
    *t = cv->init;
    return true;
}

/* The output channels axis of the weights: Conv W [M, C/g, k...] 0; MatMul B [K, N] 1;
 * Gemm B [N, K] with transB 0 else 1. */
static int weights_axis(const qbody *qb)
{
    if (gl_node_is(qb->head, "Conv"))
        return 0;
    if (gl_node_is(qb->head, "Gemm") && gl_node_attr_int(qb->head, "transB", 0))
        return 0;
    return 1;
}

static bool weights_params(const gl_function *fn, const gl_node *call, const qbody *qb,
                           dn_qprod *q, char *why, size_t len)
{
    const gl_node *dq = qb->dq_w;
    const gl_tensor *w, *s, *z;
    if (!member_constant(fn, call, dq, 0, &w, why, len) ||
        !member_constant(fn, call, dq, 1, &s, why, len) ||
        !member_constant(fn, call, dq, 2, &z, why, len))
        return false;
    if (!w || w->dtype != GL_DT_INT8 || w->rank < 2) {
        snprintf(why, len, "the weights '%s' are not an int8 tensor of rank >= 2",
                 dq->inputs[0]->name);
        return false;
    }
    if (!dn_qzeros(z)) {
        snprintf(why, len, "the weights' zero points are not all 0 (oneDNN's int8 weights "
                 "are symmetric)");
        return false;
    }
    int want = weights_axis(qb);
    int64_t axis = gl_node_attr_int(dq, "axis", 1);
    axis = axis < 0 ? axis + w->rank : axis;
    if (s && s->count > 1 && axis != want) {
        snprintf(why, len, "the weights' scales are per axis %lld, not the output channels "
                 "(axis %d)", (long long)axis, want);
        return false;
    }
    q->w = call_index(fn, call, dq->inputs[0]);
    return dn_qscales(s, w->dims[want], &q->w_scale, &q->n_w_scale, "the weights' scale", why,
                      len);
}

/* The bias: in accumulator units when its zero point is 0 and its scale x_scale *
 * w_scale[c] (what a quantizer writes), else with its own scales. */
static bool bias_params(const gl_function *fn, const gl_node *call, const qbody *qb,
                        dn_qprod *q, char *why, size_t len)
{
    q->bias = DN_QNONE;
    const gl_node *dq = qb->dq_b;
    if (!dq)
        return true;
    const gl_tensor *b, *s, *z;
    if (!member_constant(fn, call, dq, 0, &b, why, len) ||
        !member_constant(fn, call, dq, 1, &s, why, len) ||
        !member_constant(fn, call, dq, 2, &z, why, len))
        return false;
    if (!b || b->dtype != GL_DT_INT32 || (z && z->count != 1 && !dn_qzeros(z))) {
        snprintf(why, len, "the bias is not int32 with one zero point");
        return false;
    }
    q->bias = call_index(fn, call, dq->inputs[0]);
    q->b_zero = z ? (int32_t)gl_elem_i64(z, 0) : 0;
    if (!dn_qscales(s, b->count, &q->b_scale, &q->n_b_scale, "the bias's scale", why, len))
        return false;
    bool units = q->b_zero == 0;
    for (int64_t c = 0; c < b->count && units; c++) {
        double want = (double)q->x_scale * q->w_scale[q->n_w_scale > 1 ? c : 0];
        units = fabs(q->b_scale[q->n_b_scale > 1 ? c : 0] - want) <= 1e-6 * want;
    }
    if (units) {
        free(q->b_scale);
        q->b_scale = NULL;
        q->n_b_scale = 0;
    }
    return true;
}

/* A scalar scale and zero point of member n (inputs 1, 2). */
static bool tensor_params(const gl_function *fn, const gl_node *call, const gl_node *n,
                          float *scale, int32_t *zero, gl_dtype *dt, char *why, size_t len)
{
    const gl_tensor *s, *z;
    float *vals = NULL;
    int64_t count = 0;
    char what[64];
    snprintf(what, sizeof(what), "the scale of %s '%.32s'", n->op_type, n->name);
    if (!member_constant(fn, call, n, 1, &s, why, len) ||
        !member_constant(fn, call, n, 2, &z, why, len) ||
        !dn_qscales(s, 1, &vals, &count, what, why, len))
        return false;
    *scale = vals[0];
    free(vals);
    snprintf(what, sizeof(what), "the zero point of %s '%.32s'", n->op_type, n->name);
    return dn_qzero(z, dt, zero, what, why, len);
}

static bool act_params(const gl_model *m, const gl_function *fn, const gl_node *call,
                       const qbody *qb, dn_post *acts, size_t *n_acts, char *why, size_t len)
{
    for (size_t j = 0; j < qb->n_acts; j++) {
        const gl_node *n = qb->acts[j];
        const gl_tensor *args[3] = {NULL, NULL, NULL};
        bool fixed[3] = {true, true, true};
        for (size_t i = 1; i < n->n_inputs; i++)
            if (i >= 3 || !member_constant(fn, call, n, i, &args[i], why, len)) {
                if (i >= 3)
                    snprintf(why, len, "member '%s' (%s) has more inputs than an activation",
                             n->name, n->op_type);
                return false;
            }
        dn_post post[2];
        size_t n_post = 0;
        const char *w = NULL;
        if (!dn_eltwise_posts(n, gl_scope_opset(m, fn, n->domain), args, fixed,
                              n->n_inputs ? n->n_inputs : 1, post, &n_post, &w) ||
            *n_acts + n_post > DN_QMAX_ACTS) {
            snprintf(why, len, "member '%s' (%s) is no eltwise post-op%s%s", n->name,
                     n->op_type, w ? ": " : "", w ? w : "");
            return false;
        }
        memcpy(acts + *n_acts, post, n_post * sizeof(*post));
        *n_acts += n_post;
    }
    return true;
}

static void members_text(const qbody *qb, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "DequantizeLinear x%zu, %s '%s'", qb->n_dq,
                                qb->head->op_type, qb->head->name);
    if (qb->add && k < len)
        k += (size_t)snprintf(buf + k, len - k, ", Add '%s'", qb->add->name);
    for (size_t j = 0; j < qb->n_acts && k < len; j++)
        k += (size_t)snprintf(buf + k, len - k, ", %s '%s'", qb->acts[j]->op_type,
                              qb->acts[j]->name);
    if (k < len)
        snprintf(buf + k, len - k, ", QuantizeLinear '%s'", qb->quant->name);
}

/* The call input dq reads as its quantized source, in *index; false (why) when it is no
 * input of the call, or the IR types it otherwise than dq's zero point. */
static bool source_params(const gl_function *fn, const gl_node *call, const gl_node *dq,
                          size_t *index, float *scale, int32_t *zero, gl_dtype *dt, char *why,
                          size_t len)
{
    *index = call_index(fn, call, dq->inputs[0]);
    if (*index == NONE) {
        snprintf(why, len, "the source of '%s' is not an input of the call", dq->name);
        return false;
    }
    if (!tensor_params(fn, call, dq, scale, zero, dt, why, len))
        return false;
    const gl_value *x = call->inputs[*index];
    if (x->type.kind == GL_TYPE_TENSOR && x->type.dtype != GL_DT_UNDEFINED &&
        x->type.dtype != *dt) {
        snprintf(why, len, "the source '%s' is %s, its zero point %s", x->name,
                 gl_dtype_name(x->type.dtype), gl_dtype_name(*dt));
        return false;
    }
    return true;
}

static bool product_params(const gl_model *m, const gl_function *fn, const gl_node *call,
                           const qbody *qb, dn_qprod *q, char *why, size_t len)
{
    q->kind = gl_node_is(qb->head, "Conv") ? DN_QCONV
              : gl_node_is(qb->head, "Gemm") ? DN_QGEMM
                                             : DN_QMATMUL;
    q->head = qb->head;
    q->refused = &members_def;
    return source_params(fn, call, qb->dq_x, &q->x, &q->x_scale, &q->x_zero, &q->x_dtype, why,
                         len) &&
           weights_params(fn, call, qb, q, why, len) && bias_params(fn, call, qb, q, why, len) &&
           act_params(m, fn, call, qb, q->acts, &q->n_acts, why, len) &&
           tensor_params(fn, call, qb->quant, &q->y_scale, &q->y_zero, &q->y_dtype, why, len);
}

/* A QAdd group: a the Add's first operand (dq_x), b its second (dq_w). */
static bool add_params(const gl_model *m, const gl_function *fn, const gl_node *call,
                       const qbody *qb, dn_qadd *q, char *why, size_t len)
{
    q->refused = &members_def;
    return source_params(fn, call, qb->dq_x, &q->a, &q->a_scale, &q->a_zero, &q->a_dtype, why,
                         len) &&
           source_params(fn, call, qb->dq_w, &q->b, &q->b_scale, &q->b_zero, &q->b_dtype, why,
                         len) &&
           act_params(m, fn, call, qb, q->acts, &q->n_acts, why, len) &&
           tensor_params(fn, call, qb->quant, &q->y_scale, &q->y_zero, &q->y_dtype, why, len);
}

/* The unit of a call; NULL (why) when its body is no QDQ group oneDNN can take. */
static qgroup *qgroup_new(const gl_model *m, const gl_node *call, const gl_function *fn,
                          char *why, size_t len)
{
    qbody qb;
    if (!fn || !body_roles(fn, call, &qb, why, len))
        return NULL;
    qgroup *u = gl_xcalloc(1, sizeof(*u));
    dn_node_init(&u->node, &qgroup_op);
    u->call = call;
    u->is_add = gl_node_is(qb.head, "Add");
    bool ok = u->is_add ? add_params(m, fn, call, &qb, &u->qa, why, len)
                        : product_params(m, fn, call, &qb, &u->q, why, len);
    if (!ok) {
        dn_qgroup_release(u);
        return NULL;
    }
    members_text(&qb, u->members, sizeof(u->members));
    return u;
}

/* ---- the backend's entry points ---------------------------------------------------------- */

static void describe(dn_ctx *c, qgroup *u)
{
    dn_node *s = &u->node;
    if (s->fallback) {
        dn_note_runs_members(c, s, NULL);
        return;
    }
    dn_set_impl(c, s, "%s int8", s->impl);
    dn_set_note(c, s, "int8: %.150s", u->members);
}

bool dn_qgroup_claims(dn_ctx *c, const gl_model *m, const gl_node *call, const gl_function *fn,
                      char *why, size_t len)
{
    qgroup *u = qgroup_new(m, call, fn, why, len);
    /* Every shape known: build the descriptor now, so that a group oneDNN cannot run is
     * expanded by the executor (and the plan says why). */
    bool ok = u && dn_claim_build(c, m, call, &u->node, &qgroup_op, why, len);
    dn_qgroup_release(u);
    return ok;
}

gl_status dn_qgroup_run(dn_ctx *c, gl_kernel_ctx *k, void **state)
{
    char why[160] = "";
    qgroup *u = *state ? *state
                       : qgroup_new(k->model, k->node, gl_called_function(k->model, k->node),
                                    why, sizeof(why));
    if (!u)
        return gl_fail(GL_ERR_INTERNAL, "%s: claimed as an int8 group, yet %s", k->where, why);
    *state = u;
    bool rebuilt = false;
    gl_status st = dn_node_ready(c, k, &u->node, &rebuilt);
    if (st == GL_OK && rebuilt)
        describe(c, u);
    return st == GL_OK ? dn_node_exec(c, k, &u->node) : st;
}

/* dn_fused.c — a fused group (a call of a model-local function, ir/calls.h) as ONE oneDNN
 * primitive with post-ops, or as a unit of a few.
 *
 * The group is read from its body, never from its name: a head (Conv, ConvTranspose,
 * MatMul, Gemm; BatchNormalization, whose one member is a Relu), then a chain in which each member reads the previous member's output once
 * and nothing else does: activations (every op dn_eltwise.c maps, graphlab's Gelu,
 * GeluTanh, Silu, HardSwish among them) become eltwise post-ops; Add/Sub/Mul/Div/Max/Min
 * with another operand become binary post-ops (the operand broadcast to the output as oneDNN 2.6 takes
 * it: it decides, and a refusal is the unit's), except an Add of a tensor of the output's
 * shape after a convolution: a sum post-op, its operand written into the destination
 * before each run (reordered when it arrives in another layout), and a first member that
 * adds one value per column after a matmul head: the matmul's own bias (tail_bias).
 *
 * The head runs through its own op's build (dn_conv.c, dn_matmul.c, dn_deconv.c,
 * dn_norm.c) on a stand-in node: the head reading the call's values (so initializers are
 * seen as constants and reordered once), its inputs followed by the chain's operands; the
 * chain's post-ops reach the head's primitive through dn_build.tail. The stand-in's inputs
 * are the unit's "slots"; the shape guard and the weight cache are dn_node.c's, unchanged.
 *
 * A claim parses the body and, when the IR knows every shape, builds the primitive
 * descriptor once: a refusal, or oneDNN's reference implementation, leaves the call to the
 * executor, which runs the body (the plan says why). A build refused at run time (shapes
 * the IR did not know) runs the body on the reference kernels, and the plan says so.
 *
 * A group that is no single kernel (FFN, attention, 1x1 + depthwise, skip + layer norm)
 * runs as a unit of several primitives, one "segment" each, one after the other: a body
 * node oneDNN runs (a head above, or any op of its tables) and, after a head, its chain
 * of post-ops; a member that is no post-op of any kind (Softmax, a second MatMul or Conv)
 * starts the next segment, which reads the earlier segments' outputs. Within the unit
 * activations keep the plan's layout, weights are the call's constants (packed once) and
 * the intermediate outputs live on buffers each segment lends again run after run; the
 * members keep the post-op fusions they would have had as groups of their own. A segment
 * of one op that falls to its reference kernel runs so, as it would in the expanded body.
 */
#include "exec/dnnl/dn_opkit.h"
#include "ir/calls.h"
#include "util/clock.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NONE SIZE_MAX
#define MAX_STEPS 16               /* members after the head */
#define MAX_SLOTS (3 + 3 * MAX_STEPS)
#define MAX_SEGS DN_UNIT_SCRATCH   /* primitives in one unit (dn_ctx.unit_scratch) */

/* Ops that head a unit, and the input slots their builds read. */
static const struct head_row {
    const char *domain, *op;
    size_t slots;
    bool sums;  /* writes a layout-kept activation: a same-shape Add is a sum post-op */
    /* The members it takes, and why no others (the fusion pass reads it through the
     * target: dn_fused_head_refusal). */
    enum { TAKES_ANY, TAKES_ELTWISE, TAKES_RELU, TAKES_ELTWISE_SUM } takes;
    const char *why_not;
} head_rows[] = {
    {"", "Conv", 3, true, TAKES_ANY, NULL},    {"", "ConvTranspose", 3, true, TAKES_ANY, NULL},
    {"", "MatMul", 2, false, TAKES_ANY, NULL}, {"", "Gemm", 3, false, TAKES_ANY, NULL},
    /* fold-transpose's MatMul of transposed operands: its build takes a tail too */
    {"graphlab", "FusedMatMul", 2, false, TAKES_ANY, NULL},
    /* A same-shape Add is a sum post-op here too: the operand is added in the
     * destination's own layout, and a plain [N,H,W,C] tensor is exactly the nhwc bytes
     * the head writes (ResNet's residual in a channels-last region). */
    {"graphlab", "NhwcConv", 3, false, TAKES_ELTWISE_SUM,
     "eltwise members and one same-shape Add only: NhwcConv writes [N,H,W,C], oneDNN "
     "reads any other binary operand against [N,C,H,W]"},
    /* X, scale, B, mean, var; dn_norm.c's build takes its Relu as a relu post-op.
     * Measured on oneDNN 2.6: a second post-op, or another algorithm, is
     * dnnl_unimplemented in nchw, nhwc and blocked layouts. */
    {"", "BatchNormalization", 5, false, TAKES_RELU,
     "one relu post-op only (Relu, LeakyRelu): oneDNN 2.6's batch normalization takes no "
     "other"},
};

typedef struct fused_step {
    const gl_node *node;      /* the member, in the body */
    int64_t opset;            /* of the member's own domain: a Clip reads its bounds as
                                 its ai.onnx opset says, whatever the head's domain */
    dnnl_alg_kind_t bin;      /* a binary member's algorithm; 0: an activation */
    size_t operand;           /* binary: the other operand's slot */
    size_t slot[3];           /* activation: the slots of inputs 1, 2 (Clip's min/max...) */
    /* per build */
    dn_post post[2];
    size_t n_post;
    dnnl_memory_desc_t src1;  /* a binary operand as the primitive reads it */
    bool full, sum;
} fused_step;

typedef struct fused_unit {
    dn_node node;             /* first: the backend reads a unit's state as a dn_node */
    dn_tail tail;
    const gl_model *model;    /* while the body is parsed (member opsets) */
    const gl_function *fn;
    const gl_node *call;
    const gl_node *head;
    const struct head_row *head_row;
    const dn_op *head_op;
    int64_t opset;            /* of the head's domain in the body (its build reads it) */
    gl_node synth;            /* the head reading the call's values (inputs: the slots) */
    gl_value *vals[MAX_SLOTS];
    size_t from[MAX_SLOTS];   /* per slot: the call's input (NONE: omitted) */
    size_t n_slots;
    fused_step steps[MAX_STEPS];
    size_t n_steps;
    /* A post-op turns a NaN or an infinity into a number (dn_special.c): a run whose
     * inputs hold one runs the unit's members instead. */
    bool drops_specials;
    dn_special_check call_specials; /* the first segment: the call's constants */
    char why[160];            /* why the chain does not fit the head's output */
    /* the sum post-op's operand, written into the destination before each run */
    size_t sum_slot;          /* NONE: no sum */
    dnnl_memory_desc_t sum_given, dst;
    dnnl_primitive_t sum_reorder;
    dnnl_memory_t sum_from, sum_to;
    unsigned sum_reorders;
    uint64_t sum_ns;
    /* A unit of several primitives: one segment per primitive, in body order. */
    size_t seg_of[MAX_SLOTS]; /* per slot: the earlier segment whose output it is (NONE) */
    struct fused_unit *first; /* the unit's first segment (itself for the first) */
    struct fused_unit *next;  /* the next segment (owned by this one) */
    size_t n_segs;            /* the first segment: how many the unit has */
    char seg_impl[64];        /* this segment's implementation as last built */
    /* The first segment: how many images the segments run at a time (dn_slice.c), set
     * after the first run at `batch` (0: not yet; `batch`: all at once), and the whole
     * output the parts are written into then. */
    int64_t images, batch;
    /* the whole input's and output's ONNX dims when the parts were chosen: a run of
     * another shape (the same batch, other H and W) chooses again */
    int x_rank, y_rank;
    int64_t x_dims[DNNL_MAX_NDIMS], y_dims[DNNL_MAX_NDIMS];
    dnnl_memory_desc_t whole_md;
    const gl_tensor_layout *whole_layout;
    gl_buffer_slot whole_slot;
} fused_unit;

static gl_status fused_build(dn_build *b, dnnl_primitive_desc_t *pd);
static gl_status fused_prepare(const gl_kernel_ctx *k, dn_node *s);
static const dn_op fused_op = {"", "(fused group)", 1, NULL, fused_build, fused_prepare};

static fused_unit *unit_of(dn_node *s)
{
    return (fused_unit *)((char *)s - offsetof(fused_unit, node));
}

bool dn_fused_state(const void *state)
{
    return state && (((const dn_node *)state)->op == &fused_op || dn_catconv_state(state) ||
                     dn_shuffle_state(state) || dn_qgroup_state(state));
}

/* ---- the body ------------------------------------------------------------------------- */

/* The post-ops of activation member st, its parameter inputs from in[] (per slot). */
static bool act_posts(const fused_unit *u, fused_step *st, const gl_tensor *const *in,
                      const char **why)
{
    const gl_node *n = st->node;
    st->n_post = 1;
    const gl_tensor *args[3] = {NULL, NULL, NULL};
    bool fixed[3] = {false, false, false};
    for (size_t i = 1; i < n->n_inputs && i < 3; i++) {
        size_t s = st->slot[i];
        args[i] = s == NONE ? NULL : in[s];
        fixed[i] = s != NONE && dn_value_fixed(u->vals[s]);
    }
    if (n->n_inputs > 3) {
        *why = "more inputs than an activation has";
        return false;
    }
    return dn_eltwise_posts(n, st->opset, args, fixed, n->n_inputs ? n->n_inputs : 1, st->post,
                            &st->n_post, why);
}

static size_t formal_index(const gl_function *fn, const gl_value *v)
{
    for (size_t i = 0; i < fn->body->n_inputs; i++)
        if (fn->body->inputs[i] == v)
            return i;
    return NONE;
}

static bool refers_to_caller(const gl_node *n)
{
    for (size_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].ref_attr_name)
            return true;
    return false;
}

/* A new slot for body value v that member n reads: the call's value in its place. */
static bool add_slot(fused_unit *u, const gl_node *n, const gl_value *v, size_t *slot,
                     char *why, size_t len)
{
    *slot = NONE;
    if (u->n_slots >= MAX_SLOTS) {
        snprintf(why, len, "more than %d inputs in the group", MAX_SLOTS);
        return false;
    }
    gl_value *cv = NULL;
    u->from[u->n_slots] = u->seg_of[u->n_slots] = NONE;
    if (v) {
        size_t f = formal_index(u->fn, v), seg = 0;
        const fused_unit *p = u->first;
        for (; f == NONE && p && p != u && p->synth.outputs[0] != v; p = p->next)
            seg++;
        if (f == NONE && (!p || p == u)) {
            snprintf(why, len, "member '%s' (%s) reads '%s', which the group makes itself "
                     "inside one of its primitives", n->name, n->op_type, v->name);
            return false;
        }
        if (f == NONE) {
            cv = (gl_value *)v;
            u->seg_of[u->n_slots] = seg;
        } else {
            cv = f < u->call->n_inputs ? u->call->inputs[f] : NULL;
            u->from[u->n_slots] = cv ? f : NONE;
        }
    }
    u->vals[u->n_slots] = cv;
    *slot = u->n_slots++;
    return true;
}

/* The opset member n is read with: its own domain's in the body. The head's domain may
 * be another (graphlab's NhwcConv, at 1): a Clip read at that opset would look for the
 * bounds of opset 1's attributes and drop the inputs of opset 11's. */
static int64_t member_opset(const fused_unit *u, const gl_node *n)
{
    return gl_scope_opset(u->model, u->fn, n->domain);
}

/* Member n of the chain reads `prev` once; the step it makes. */
static bool add_step(fused_unit *u, const gl_node *n, const gl_value *prev, char *why,
                     size_t len)
{
    if (u->n_steps >= MAX_STEPS) {
        snprintf(why, len, "more than %d members after the head", MAX_STEPS);
        return false;
    }
    fused_step *st = &u->steps[u->n_steps++];
    memset(st, 0, sizeof(*st));
    st->node = n;
    st->opset = member_opset(u, n);
    st->operand = NONE;
    for (size_t i = 0; i < 3; i++)
        st->slot[i] = NONE;
    size_t at = NONE, uses = 0;
    for (size_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] == prev) {
            at = i;
            uses++;
        }
    if (uses != 1 || prev->n_uses != 1 || prev->n_output_refs) {
        snprintf(why, len, "'%s' is not read once, by member '%s' alone", prev->name, n->name);
        return false;
    }
    if (refers_to_caller(n) || n->n_outputs < 1 || !n->outputs[0]) {
        snprintf(why, len, "member '%s' (%s) is not a plain one-output op", n->name, n->op_type);
        return false;
    }
    for (size_t i = 1; i < n->n_outputs; i++)
        if (n->outputs[i] && (n->outputs[i]->n_uses || n->outputs[i]->n_output_refs)) {
            snprintf(why, len, "member '%s' (%s) has a second output in use", n->name,
                     n->op_type);
            return false;
        }
    bool commutes = false;
    dnnl_alg_kind_t bin = !*n->domain && n->n_inputs == 2
                              ? dn_binary_alg(n->op_type, &commutes)
                              : (dnnl_alg_kind_t)0;
    const char *refused = dn_fused_head_refusal(u->head, n, st->opset, bin != 0);
    if (refused) {
        snprintf(why, len, "member '%s' (%s): %s", n->name, n->op_type, refused);
        return false;
    }
    if (bin) {
        if (at == 1 && !commutes) {
            snprintf(why, len, "member '%s' (%s) takes the chain as its second operand",
                     n->name, n->op_type);
            return false;
        }
        st->bin = bin;
        return add_slot(u, n, n->inputs[1 - at], &st->operand, why, len);
    }
    if (at != 0) {
        snprintf(why, len, "member '%s' (%s) reads the chain as input %zu", n->name, n->op_type,
                 at);
        return false;
    }
    for (size_t i = 1; i < n->n_inputs && i < 3; i++)
        if (!add_slot(u, n, n->inputs[i], &st->slot[i], why, len))
            return false;
    return true;
}

static void sum_clear(fused_unit *u)
{
    if (u->sum_reorder)
        dnnl_primitive_destroy(u->sum_reorder);
    if (u->sum_from)
        dnnl_memory_destroy(u->sum_from);
    if (u->sum_to)
        dnnl_memory_destroy(u->sum_to);
    u->sum_reorder = NULL;
    u->sum_from = u->sum_to = NULL;
    u->sum_slot = NONE;
}

static void unit_free(fused_unit *u)
{
    if (!u)
        return;
    unit_free(u->next);
    dn_node_clear(&u->node);
    sum_clear(u);
    gl_buffer_slot_clear(&u->whole_slot);
    free(u);
}

static int tail_posts(dn_tail *t, dn_build *b, int rank, const int64_t *dims, dn_post *post,
                      size_t cap);
static size_t tail_bias(dn_tail *t, const dn_build *b, int rank, int64_t n);

static const struct head_row *head_row_of(const gl_node *n)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(head_rows); i++)
        if (gl_node_is_in(n, head_rows[i].domain, head_rows[i].op))
            return &head_rows[i];
    return NULL;
}

/* Activation n becomes one relu post-op (Relu; LeakyRelu, its slope the alpha). */
static bool one_relu(const gl_node *n, int64_t opset)
{
    const gl_tensor *args[3] = {NULL, NULL, NULL};
    bool fixed[3] = {false, false, false};
    dn_post post[2];
    size_t n_post = 0;
    const char *why = NULL;
    return dn_eltwise_posts(n, opset, args, fixed, 1, post, &n_post, &why) && n_post == 1 &&
           post[0].alg == dnnl_eltwise_relu;
}

const char *dn_fused_head_refusal(const gl_node *head, const gl_node *member, int64_t opset,
                                  bool binary)
{
    const struct head_row *hr = head_row_of(head);
    if (!hr || hr->takes == TAKES_ANY)
        return NULL;
    if (binary && hr->takes == TAKES_ELTWISE_SUM && gl_node_is(member, "Add"))
        return NULL; /* a sum when its operand has the output's shape (tail_posts) */
    if (binary || (hr->takes == TAKES_RELU && !one_relu(member, opset)))
        return hr->why_not;
    return NULL;
}

/* Activation member st takes post-ops oneDNN has, its parameters fixed across runs (read
 * here when they are initializers, else at the build). */
static bool step_params_fit(fused_unit *u, fused_step *st, char *why, size_t len)
{
    if (st->bin)
        return true;
    const gl_tensor *init[MAX_SLOTS] = {NULL};
    bool known = true;
    for (size_t i = 1; i < 3; i++) {
        const gl_value *v = st->slot[i] == NONE ? NULL : u->vals[st->slot[i]];
        if (v && !dn_value_fixed(v)) {
            snprintf(why, len, "member '%s' (%s): input '%s' changes from run to run",
                     st->node->name, st->node->op_type, v->name);
            return false;
        }
        if (v && gl_value_is_constant(v))
            init[st->slot[i]] = v->init;
        known = known && (!v || init[st->slot[i]]);
    }
    const char *w = "";
    if (known && !act_posts(u, st, init, &w)) {
        if (w)
            snprintf(why, len, "member '%s' (%s): %s", st->node->name, st->node->op_type, w);
        else
            snprintf(why, len, "member '%s' (%s) is no post-op", st->node->name,
                     st->node->op_type);
        return false;
    }
    return true;
}

/* Might n be a post-op: a binary op, or an activation oneDNN maps (whether its
 * parameters fit is for later) and runs as fast so as apart (dn_eltwise_post_slow: a
 * GPT-2 FFN's gelu_tanh on AVX2 starts a segment of its own, graphlab's kernel)? */
static bool post_kind(const fused_unit *u, const gl_node *n)
{
    bool commutes;
    if (!*n->domain && n->n_inputs == 2 && dn_binary_alg(n->op_type, &commutes))
        return true;
    const gl_tensor *args[3] = {NULL, NULL, NULL};
    bool fixed[3] = {false, false, false};
    dn_post post[2];
    size_t n_post = 0;
    const char *why = NULL;
    if (!dn_eltwise_posts(n, member_opset(u, n), args, fixed, 1, post, &n_post, &why))
        return why != NULL;
    for (size_t i = 0; i < n_post; i++)
        if (dn_eltwise_post_slow(&post[i]))
            return false;
    return true;
}

/* The direct kernel's time for 20 MFLOP is ~0.07 ms here; a pass over its output ~0.01. */
#define WINOGRAD_APART_MIN_FLOPS 20e6

/* Would head, a Conv of the group's body, run on oneDNN's Winograd kernel (dn_conv.c: a
 * blocked plan on AVX-512, dn_winograd_fits) but for member n? oneDNN 2.6's Winograd takes
 * a relu and a sum after it, no other activation: with one, dn_conv.c falls back to the
 * direct kernel. Winograd and then the activation as a primitive of its own is the
 * faster when the convolution is big enough (efficientnet_v2_s's 3x3 48 -> 192 at 56x56,
 * two threads, per-node minimums: direct with its SiLU 1.68 ms, Winograd 0.92-0.95 and
 * the SiLU over its output apart 0.19), so the chain ends before n. */
static bool winograd_ends_chain(const dn_ctx *c, const gl_function *fn, const gl_node *call,
                                const gl_node *head, const gl_node *n)
{
    bool kept = !*n->domain && (strcmp(n->op_type, "Relu") == 0 || n->n_inputs == 2);
    if (!c || c->policy != DN_LAYOUT_BLOCKED || c->no_winograd || c->avx2 || kept ||
        *head->domain || strcmp(head->op_type, "Conv") != 0 || head->n_inputs < 2)
        return false;
    size_t f = formal_index(fn, head->inputs[1]);
    const gl_value *w = f < call->n_inputs ? call->inputs[f] : head->inputs[1];
    const gl_tensor *t = w ? w->init : NULL;
    const gl_attr *st = gl_node_attr_typed(head, "strides", GL_ATTR_INTS);
    const gl_attr *dl = gl_node_attr_typed(head, "dilations", GL_ATTR_INTS);
    if (!t || t->rank != 4 || (st && st->n != 2) || (dl && dl->n != 2))
        return false;
    int64_t strides[2] = {st ? st->ints[0] : 1, st ? st->ints[1] : 1};
    bool dilated = dl && (dl->ints[0] != 1 || dl->ints[1] != 1);
    int64_t group = gl_node_attr_int(head, "group", 1);
    if (!dn_winograd_fits(2, t->dims + 2, strides, dilated, group, t->dims[1] * group,
                          t->dims[0]))
        return false;
    /* Big enough that Winograd's saving outweighs a primitive more and a pass over the
     * output (the chain is elementwise: the call's output has the Conv's shape). */
    const gl_value *out = call->n_outputs ? call->outputs[0] : NULL;
    if (!out || out->type.kind != GL_TYPE_TENSOR || out->type.shape.rank != 4)
        return false;
    double flops = 2.0 * (double)t->count; /* 2 * OC * IC/G * kh * kw, per output pixel */
    for (int i = 0; i < 4; i++) {
        int64_t d = out->type.shape.dims[i].value;
        if (d <= 0)
            return false;
        flops *= i == 1 ? 1.0 : (double)d; /* N and the output's pixels */
    }
    return flops >= WINOGRAD_APART_MIN_FLOPS;
}

/* One primitive of a call's unit, from body node *pos on: a node oneDNN runs (a head of
 * head_rows, or any op of its tables), then, after a head, the longest chain of members
 * that become its post-ops. *pos moves past it. NULL (why set) when no primitive runs
 * the node at *pos. */
static fused_unit *segment_new(const dn_ctx *c, const gl_model *m, const gl_node *call,
                               const gl_function *fn, fused_unit *first, size_t *pos,
                               char *why, size_t len)
{
    const gl_graph *body = fn->body;
    const gl_node *head = body->nodes[*pos];
    if (!head) {
        snprintf(why, len, "a hole in the function body");
        return NULL;
    }
    const struct head_row *hr = head_row_of(head);
    const char *domain = hr ? hr->domain : head->domain;
    int64_t opset = gl_scope_opset(m, fn, domain);
    const dn_op *op = dn_op_find(domain, head->op_type, opset);
    size_t slots = hr ? hr->slots : head->n_inputs;
    if (!op || head->n_inputs > slots || refers_to_caller(head) || head->n_outputs != 1 ||
        !head->outputs[0]) {
        snprintf(why, len, "no oneDNN primitive for member '%s' (%s) as it is; runs its "
                 "members", head->name, head->op_type);
        return NULL;
    }
    fused_unit *u = gl_xcalloc(1, sizeof(*u));
    dn_node_init(&u->node, &fused_op);
    u->tail.posts = tail_posts;
    u->tail.bias = tail_bias;
    u->model = m;
    u->fn = fn;
    u->call = call;
    u->head = head;
    u->head_row = hr;
    u->head_op = op;
    u->opset = opset;
    u->sum_slot = NONE;
    u->first = first ? first : u;
    /* Until the segment is linked, add_slot finds earlier segments through `first` and
     * stops at u: a segment never reads its own output. */
    u->synth.outputs = head->outputs;
    bool ok = true;
    for (size_t i = 0; i < slots && ok; i++) {
        size_t slot;
        ok = add_slot(u, head, i < head->n_inputs ? head->inputs[i] : NULL, &slot, why, len);
    }
    /* The chain ends before a member that is no post-op of any kind: the next primitive
     * starts there. A would-be post-op that does not fit refuses the unit. */
    const gl_node *last = head;
    for (size_t j = *pos + 1; hr && ok && j < body->n_nodes; j++) {
        const gl_node *n = body->nodes[j];
        if (n && (!post_kind(u, n) || winograd_ends_chain(c, fn, call, head, n)))
            break;
        ok = n && add_step(u, n, last->outputs[0], why, len) &&
             step_params_fit(u, &u->steps[u->n_steps - 1], why, len);
        if (!n)
            snprintf(why, len, "a hole in the function body");
        last = n;
    }
    if (!ok) {
        unit_free(u);
        return NULL;
    }
    *pos += 1 + u->n_steps;
    u->synth = *head;
    u->synth.inputs = u->vals;
    u->synth.n_inputs = u->synth.cap_inputs = u->n_slots;
    u->synth.outputs = *pos >= body->n_nodes ? call->outputs : last->outputs;
    u->synth.n_outputs = 1;
    return u;
}

/* The unit of a call, parsed from fn's body: one segment per primitive (one in all when
 * the body is a head and its post-ops); NULL (why set) when it is not one. */
static fused_unit *unit_new(const dn_ctx *c, const gl_model *m, const gl_node *call,
                            const gl_function *fn, char *why, size_t len)
{
    const gl_graph *body = fn ? fn->body : NULL;
    if (!body || body->n_nodes == 0 || !body->nodes[0]) {
        snprintf(why, len, "an empty function body");
        return NULL;
    }
    if (call->n_outputs != 1 || body->n_outputs != 1) {
        snprintf(why, len, "the group has %zu outputs; a unit makes one", body->n_outputs);
        return NULL;
    }
    fused_unit *first = NULL, *tail = NULL;
    size_t pos = 0, n = 0;
    while (pos < body->n_nodes) {
        fused_unit *seg = n < MAX_SEGS ? segment_new(c, m, call, fn, first, &pos, why, len)
                                       : NULL;
        if (n >= MAX_SEGS)
            snprintf(why, len, "more than %d primitives in the group", MAX_SEGS);
        if (!seg) {
            unit_free(first);
            return NULL;
        }
        if (tail)
            tail->next = seg;
        else
            first = seg;
        tail = seg;
        n++;
    }
    first->n_segs = n;
    if (body->outputs[0] != (tail->n_steps ? tail->steps[tail->n_steps - 1].node
                                           : tail->head)->outputs[0]) {
        snprintf(why, len, "the group's output is not its last member's");
        unit_free(first);
        return NULL;
    }
    return first;
}

/* ---- building -------------------------------------------------------------------------- */

static void dims_text(char *buf, size_t len, int rank, const int64_t *dims)
{
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < rank && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? "," : "", (long long)dims[i]);
    if (k < len)
        snprintf(buf + k, len - k, "]");
}

/* Binary operand o of step st (it broadcasts into (rank, dims)) over the destination read
 * as one matrix [rows, dims[rank-1]]: [1 or rows, 1 or the last dim], when its dims before
 * the last are all broadcast or none is. False (the unit says why) otherwise. */
static bool operand_rows(fused_unit *u, fused_step *st, const gl_tensor *o, int rank,
                         const int64_t *dims)
{
    int64_t rows = gl_dims_product(dims, 0, rank - 1), lead = 1;
    int64_t m[2] = {1, o->rank ? o->dims[o->rank - 1] : 1};
    for (int i = 0; i + 1 < o->rank; i++)
        lead *= o->dims[i];
    m[0] = lead;
    if ((lead != 1 && lead != rows) || dn_md_plain(&st->src1, 2, m, NULL) != dnnl_success) {
        snprintf(u->why, sizeof(u->why),
                 "member '%.24s' (%.16s): operand spans some of the output's rows only",
                 st->node->name, st->node->op_type);
        return false;
    }
    return true;
}

/* Binary member st is none the head takes (head_rows' why_not): -1, u->why set. */
static int refuse_member(fused_unit *u, const fused_step *st)
{
    snprintf(u->why, sizeof(u->why), "member '%.24s' (%.16s): %s", st->node->name,
             st->node->op_type, u->head_row->why_not);
    return -1;
}

/* dn_tail_bias: the first member adds an operand of n values along the output's last
 * dim, and no more dims than the output's: the head's bias (its slot); else NONE. A
 * per-row or full operand stays a binary post-op. */
static size_t tail_bias(dn_tail *t, const dn_build *b, int rank, int64_t n)
{
    const fused_unit *u = (const fused_unit *)((const char *)t - offsetof(fused_unit, tail));
    const fused_step *st = u->n_steps ? &u->steps[0] : NULL;
    if (!st || st->bin != dnnl_binary_add)
        return NONE;
    const gl_tensor *o = b->k->in[st->operand];
    if (!o || o->dtype != GL_DT_FLOAT || o->rank < 1 || o->rank > rank || o->count != n ||
        o->dims[o->rank - 1] != n)
        return NONE;
    return st->operand;
}

/* The chain's post-ops for a destination of ONNX dims (rank, dims): dn_build_attr asks the
 * head's build for them (once per layout it tries). */
static int tail_posts(dn_tail *t, dn_build *b, int rank, const int64_t *dims, dn_post *post,
                      size_t cap)
{
    fused_unit *u = (fused_unit *)((char *)t - offsetof(fused_unit, tail));
    size_t n = 0;
    bool summed = false;
    for (size_t j = t->biased ? 1 : 0; j < u->n_steps; j++) {
        fused_step *st = &u->steps[j];
        if (!st->bin) {
            if (n + st->n_post > cap)
                return -1;
            for (size_t i = 0; i < st->n_post; i++)
                post[n++] = st->post[i];
            continue;
        }
        const gl_tensor *o = b->k->in[st->operand];
        bool sum_only = u->head_row && u->head_row->takes == TAKES_ELTWISE_SUM;
        if (sum_only && (st->bin != dnnl_binary_add || o->rank != 4))
            return refuse_member(u, st);
        bool fits = o->rank <= rank;
        /* NhwcConv: dims are its primitive's [N,C,H,W], the operand's are [N,H,W,C] */
        int64_t odims[DNNL_MAX_NDIMS];
        if (sum_only)
            dn_nhwc_dims(o->dims, odims);
        else if (fits)
            memcpy(odims, o->dims, (size_t)o->rank * sizeof(int64_t));
        int spread = 0, along = -1; /* output dims (of size > 1) the operand spans */
        for (int i = 0; i < o->rank && fits; i++) {
            int a = rank - o->rank + i;
            fits = odims[i] == 1 || odims[i] == dims[a];
            if (odims[i] != 1) {
                spread++;
                along = a;
            }
        }
        int big = 0;
        for (int i = 0; i < rank; i++)
            big += dims[i] != 1;
        st->full = fits && spread == big;
        char od[96], dd[96];
        dims_text(od, sizeof(od), o->rank, o->dims);
        dims_text(dd, sizeof(dd), rank, dims);
        if (!fits) {
            snprintf(u->why, sizeof(u->why),
                     "member '%s' (%s): operand %.40s does not broadcast into the output %.40s",
                     st->node->name, st->node->op_type, od, dd);
            return -1;
        }
        /* oneDNN 2.6 documents a scalar, a per-channel and a full operand; others it takes
         * and may compute wrong (a [1,1,H,1] operand on its gemm convolution with an nhwc
         * destination did). Per-channel: dim 1 of a convolution, the last of a matmul. */
        int channel = u->head_row->sums ? 1 : rank - 1;
        if (!st->full && spread > 0 && (spread > 1 || along != channel)) {
            snprintf(u->why, sizeof(u->why),
                     "member '%.24s' (%.16s): operand %.30s is not a scalar, per-channel or "
                     "full operand of the output",
                     st->node->name, st->node->op_type, od);
            return -1;
        }
        /* One sum per primitive; a layout-kept output only (matmul's stays plain, and its
         * binary post-op reads a full operand as well as a copy would). */
        st->sum = st->full && st->bin == dnnl_binary_add &&
                  (u->head_row->sums || sum_only) && !summed && !t->rows;
        summed = summed || st->sum;
        if (sum_only && !st->sum)
            return refuse_member(u, st);
        dnnl_status_t r = dnnl_success;
        dnnl_format_tag_t act = dn_act_tag(b->c, rank);
        if (st->sum)
            post[n] = (dn_post){(dnnl_alg_kind_t)0, 0.0f, 0.0f, 1.0f, NULL};
        else if (t->rows) {
            if (!operand_rows(u, st, o, rank, dims))
                return -1;
        } else if (st->full && u->head_row->sums && act != dnnl_format_tag_undef)
            r = dn_md_tag(&st->src1, rank, dims, act);
        else
            r = dn_md_leading_ones(&st->src1, rank, o);
        if (r != dnnl_success || n >= cap)
            return -1;
        if (!st->sum)
            post[n] = (dn_post){st->bin, 0.0f, 0.0f, 1.0f, &st->src1};
        n++;
    }
    if (dn_posts_repeat_alg(post, n)) {
        snprintf(u->why, sizeof(u->why), "two members make post-ops of one algorithm with "
                 "different parameters (oneDNN 2.6 would run the second with the first's)");
        return -1;
    }
    return (int)n;
}

/* Binary member st divides by a constant without a zero: it makes no NaN out of finite
 * values (a per-channel scale written as a Div). */
static bool divides_by_nonzero_constant(const dn_build *b, const fused_unit *u,
                                        const fused_step *st)
{
    if (st->bin != dnnl_binary_div)
        return false;
    const gl_value *v = u->vals[st->operand];
    const gl_tensor *t = b->k->in[st->operand];
    if (!v || !gl_value_is_constant(v) || !t || !t->buf)
        return false;
    const float *d = gl_tensor_data(t);
    for (int64_t i = 0; i < t->count; i++)
        if (d[i] == 0.0f)
            return false;
    return true;
}

/* What the chain does with a NaN or an infinity (dn_special.c): does a post-op drop one
 * (u->drops_specials: the inputs are looked at before a run), may a member make one out
 * of finite values (the unit then vouches for nothing)? A chain in which a member drops
 * one that an earlier member can make is refused: no look at the inputs would see it. */
static gl_status chain_specials(dn_build *b, fused_unit *u)
{
    const fused_step *maker = NULL;
    u->drops_specials = false;
    for (size_t j = 0; j < u->n_steps; j++) {
        const fused_step *st = &u->steps[j];
        dn_post bin = {st->bin, 0.0f, 0.0f, 1.0f, &st->src1};
        bool drops = st->bin ? dn_post_drops_specials(&bin) : false;
        for (size_t i = 0; !st->bin && i < st->n_post; i++)
            drops = drops || dn_post_drops_specials(&st->post[i]);
        if (drops && maker && maker != st)
            return dn_refuse(b, "member '%s' (%s) would turn into a number a NaN that member "
                             "'%s' (%s) can make out of finite values", st->node->name,
                             st->node->op_type, maker->node->name, maker->node->op_type);
        u->drops_specials = u->drops_specials || drops;
        if (!maker && dn_node_makes_specials(st->node) && !divides_by_nonzero_constant(b, u, st))
            maker = st;
    }
    b->s->makes_specials = b->s->makes_specials || maker;
    return GL_OK;
}

static gl_status fused_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    fused_unit *u = unit_of(b->s);
    const gl_kernel_ctx *k = b->k;
    sum_clear(u);
    u->why[0] = '\0';
    for (size_t i = 0; i < u->n_slots; i++) {
        const gl_tensor *t = k->in[i];
        if (t && t->dtype != GL_DT_FLOAT)
            return dn_refuse(b, "input '%s' is %s, not float32", u->vals[i]->name,
                             gl_dtype_name(t->dtype));
    }
    for (size_t j = 0; j < u->n_steps; j++) {
        const char *why = "";
        fused_step *st = &u->steps[j];
        if (!st->bin && !act_posts(u, st, k->in, &why))
            return dn_refuse(b, "member '%s' (%s): %s", st->node->name, st->node->op_type,
                             why ? why : "no post-op");
    }
    gl_status specials = chain_specials(b, u);
    if (specials != GL_OK || b->s->fallback)
        return specials;
    if (strcmp(u->head->op_type, "MatMul") == 0 && k->in[0] && k->in[1] &&
        (k->in[0]->rank < 2 || k->in[1]->rank < 2))
        return dn_refuse(b, "a 1-D MatMul operand: the output is not the matmul's");
    /* A segment without members is its op's own build. */
    b->tail = u->n_steps ? &u->tail : NULL;
    u->tail.taken = u->tail.biased = false;
    gl_status st = u->head_op->build(b, pd);
    b->tail = NULL;
    if (st != GL_OK)
        return st;
    if (b->s->fallback) {
        if (u->why[0])
            dn_set_note(b->c, b->s, "%s", u->why);
        return GL_OK;
    }
    if (u->n_steps && !u->tail.taken) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        return dn_refuse(b, "the %s build takes no post-ops here", u->head->op_type);
    }
    if (dn_pd_is_ref(*pd) && !b->s->native) /* a native kernel stands in for ref:any */
        return dn_refuse_ref(b, pd, "this group");
    size_t idx = u->tail.first;
    for (size_t j = u->tail.biased ? 1 : 0; j < u->n_steps; j++) {
        fused_step *s = &u->steps[j];
        if (!s->bin) {
            idx += s->n_post;
            continue;
        }
        if (s->sum) {
            u->sum_slot = s->operand;
            u->sum_given = b->md[s->operand];
            u->dst = *dn_pd_md(*pd, dnnl_query_dst_md, 0);
            const gl_tensor *o = b->k->in[s->operand];
            if (u->head_row && u->head_row->takes == TAKES_ELTWISE_SUM) {
                /* a plain [N,H,W,C] operand: the nhwc bytes of [N,C,H,W] */
                if (o->rank != 4 || !dn_md_is_plain(&b->md[s->operand]) ||
                    dn_md_nhwc_of(&u->sum_given, o->dims) != dnnl_success) {
                    dnnl_primitive_desc_destroy(*pd);
                    *pd = NULL;
                    return dn_refuse(b, "the sum's operand '%s' is not a plain [N,H,W,C] "
                                     "tensor", s->node->name);
                }
            }
        } else {
            int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP((int)idx) | DNNL_ARG_SRC_1;
            if (s->full && !dn_md_is_plain(&s->src1))
                dn_bind_input(b, arg, s->operand, &s->src1);
            else
                dn_bind_input_view(b, arg, s->operand, &s->src1);
        }
        idx++;
    }
    /* The sum's operand is copied into the destination before each run (sum_fill): the
     * destination may be the operand's own bytes instead, laid out alike and read by no
     * argument of the primitive (not the convolution's source too). */
    dn_out *o = b->s->n_out == 1 ? &b->s->out[0] : NULL;
    if (o && u->sum_slot != NONE && dnnl_memory_desc_equal(&u->sum_given, &u->dst) &&
        dnnl_memory_desc_equal(&o->md, &u->dst) && dn_node_reads(b->s, u->sum_slot) == 0) {
        o->over_ok = true;
        o->over = u->sum_slot;
    }
    return GL_OK;
}

/* The sum's operand into the destination: a copy, or a reorder when its layout differs. */
static gl_status sum_fill(fused_unit *u, const gl_kernel_ctx *k)
{
    dn_ctx *c = k->backend_ctx;
    const gl_tensor *r = k->in[u->sum_slot];
    void *dst = k->out[0]->buf->data;
    void *src = r->buf ? r->buf->data : NULL;
    if (dnnl_memory_desc_equal(&u->sum_given, &u->dst)) {
        if (dst != src) /* else written over the operand (dn_out.over) */
            memcpy(dst, src, dnnl_memory_desc_get_size(&u->dst));
        return GL_OK;
    }
    uint64_t t0 = gl_now_ns();
    dnnl_status_t e = dnnl_success;
    const char *call = "dnnl_reorder_primitive_desc_create";
    if (!u->sum_reorder) {
        dnnl_primitive_desc_t rpd = NULL;
        e = dnnl_reorder_primitive_desc_create(&rpd, &u->sum_given, c->engine, &u->dst,
                                               c->engine, NULL);
        if (e == dnnl_success && (call = "dnnl_primitive_create"))
            e = dnnl_primitive_create(&u->sum_reorder, rpd);
        dnnl_primitive_desc_destroy(rpd);
        if (e == dnnl_success && (call = "dnnl_memory_create"))
            e = dnnl_memory_create(&u->sum_from, &u->sum_given, c->engine, DNNL_MEMORY_NONE);
        if (e == dnnl_success)
            e = dnnl_memory_create(&u->sum_to, &u->dst, c->engine, DNNL_MEMORY_NONE);
    }
    if (e == dnnl_success && (call = "dnnl_memory_set_data_handle"))
        e = dnnl_memory_set_data_handle(u->sum_from, src);
    if (e == dnnl_success)
        e = dnnl_memory_set_data_handle(u->sum_to, dst);
    if (e == dnnl_success && (call = "reorder of the sum's operand")) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, u->sum_from}, {DNNL_ARG_TO, u->sum_to}};
        e = dnnl_primitive_execute(u->sum_reorder, c->stream, 2, args);
        if (e == dnnl_success)
            e = dnnl_stream_wait(c->stream);
    }
    u->sum_reorders++;
    u->sum_ns += gl_now_ns() - t0;
    return e == dnnl_success ? GL_OK : dn_fail(k->where, call, e);
}

static gl_status fused_prepare(const gl_kernel_ctx *k, dn_node *s)
{
    fused_unit *u = unit_of(s);
    gl_status st = u->head_op->prepare ? u->head_op->prepare(k, s) : GL_OK;
    return st == GL_OK && u->sum_slot != NONE ? sum_fill(u, k) : st;
}

/* What the plan shows of a segment: the head's implementation and the post-ops, the
 * members. */
static void describe_segment(dn_ctx *c, fused_unit *u)
{
    dn_node *s = &u->node;
    char members[160];
    size_t k = (size_t)snprintf(members, sizeof(members), "%s '%s'", u->head->op_type,
                                u->head->name);
    for (size_t j = 0; j < u->n_steps && k < sizeof(members); j++)
        k += (size_t)snprintf(members + k, sizeof(members) - k, ", %s '%s'",
                              u->steps[j].node->op_type, u->steps[j].node->name);
    if (s->fallback) {
        dn_note_runs_members(c, s, NULL);
        snprintf(u->seg_impl, sizeof(u->seg_impl), "ref");
        return;
    }
    char impl[DN_IMPL_LEN];
    k = (size_t)snprintf(impl, sizeof(impl), "%s", s->impl);
    for (size_t j = 0; j < u->n_steps && k < sizeof(impl); j++) {
        const fused_step *st = &u->steps[j];
        bool bias = j == 0 && u->tail.biased; /* the head's bias argument, no post-op */
        for (size_t i = 0; i < (st->bin ? 1 : st->n_post) && k < sizeof(impl); i++)
            k += (size_t)snprintf(impl + k, sizeof(impl) - k, " + %s",
                                  bias      ? "bias"
                                  : st->sum ? "sum"
                                  : st->bin ? dnnl_alg_kind2str(st->bin)
                                            : dnnl_alg_kind2str(st->post[i].alg));
    }
    dn_set_impl(c, s, "%s", impl);
    snprintf(u->seg_impl, sizeof(u->seg_impl), "%s", s->impl);
    const char *head = s->note; /* the head op's build may have said why (interned) */
    dn_set_note(c, s, "fused: %.150s%s%.200s", members, head[0] ? "; " : "", head);
}

/* A unit of several primitives: the plan shows them all on the call's row. */
static void describe_unit(dn_ctx *c, fused_unit *u)
{
    if (u->n_segs < 2)
        return;
    dn_node *s = &u->node;
    char impl[DN_IMPL_LEN] = "";
    size_t k = 0, members = 0;
    for (const fused_unit *p = u; p && k < sizeof(impl); p = p->next) {
        k += (size_t)snprintf(impl + k, sizeof(impl) - k, "%s%s", p == u ? "" : " | ",
                              p->seg_impl);
        members += 1 + p->n_steps;
    }
    dn_set_impl(c, s, "%s", impl);
    if (u->images && u->images < u->batch)
        dn_set_note(c, s, "unit of %zu oneDNN primitives for %zu members, run one after the "
                    "other on %lld of the %lld images at a time", u->n_segs, members,
                    (long long)u->images, (long long)u->batch);
    else
        dn_set_note(c, s, "unit of %zu oneDNN primitives for %zu members, "
                    "run one after the other", u->n_segs, members);
}

/* ---- the backend's entry points ---------------------------------------------------------- */

/* May oneDNN run segment u? When the IR knows every shape of its inputs, its primitive
 * descriptor is built now, so that a group oneDNN cannot run is expanded by the executor
 * (and the plan says why). A segment of one op alone may fall to that op's reference
 * kernel, as the op would when the body is expanded; a head and its post-ops may not. */
static bool segment_claims(dn_ctx *c, const gl_model *m, const gl_node *call, fused_unit *u,
                           char *why, size_t len)
{
    bool ok = u->head_op->claim(m, &u->synth, why, len);
    for (size_t i = 0; i < u->n_slots && ok; i++)
        if (u->vals[i] && !dn_input_fits(&u->synth, i, 0, DNNL_MAX_NDIMS)) {
            snprintf(why, len, "input '%s' is not float32", u->vals[i]->name);
            ok = false;
        }
    const gl_tensor *in[MAX_SLOTS] = {NULL};
    gl_tensor *made[MAX_SLOTS] = {NULL};
    bool known = ok;
    for (size_t i = 0; i < u->n_slots && known; i++)
        known = !u->vals[i] || dn_stand_in(u->vals[i], &in[i], &made[i]);
    if (known) {
        char where[512];
        gl_node_where(m, call, where, sizeof(where));
        dnnl_memory_desc_t md[MAX_SLOTS];
        memset(md, 0, sizeof(md));
        for (size_t i = 0; i < u->n_slots && known; i++)
            if (in[i] && in[i]->dtype == GL_DT_FLOAT && dn_md_of(in[i], &md[i]) != dnnl_success)
                known = false;
        gl_kernel_ctx k = {.node = &u->synth, .model = m, .opset = u->opset, .where = where,
                           .n_inputs = u->n_slots, .in = in, .n_outputs = 1,
                           .backend_ctx = c};
        dn_build b = {.c = c, .k = &k, .s = &u->node, .md = md};
        dnnl_primitive_desc_t pd = NULL;
        gl_status st = known ? fused_build(&b, &pd) : GL_OK;
        if (st != GL_OK) {
            snprintf(why, len, "%s", gl_error_message());
            gl_error_clear();
            ok = false;
        } else if (known && u->node.fallback && (u->n_steps || u->n_segs == 1)) {
            snprintf(why, len, "%s", u->node.note);
            ok = false;
        }
        dnnl_primitive_desc_destroy(pd);
        dn_node_clear(&u->node);
    }
    for (size_t i = 0; i < u->n_slots; i++)
        gl_tensor_free(made[i]);
    return ok;
}

bool dn_fused_claims(dn_ctx *c, const gl_model *m, const gl_node *call, const gl_function *fn,
                     char *why, size_t len)
{
    if (dn_catconv_is(fn))
        return dn_catconv_claims(c, m, call, fn, why, len);
    if (dn_shuffle_is(fn))
        return dn_shuffle_claims(c, m, call, fn, why, len);
    if (dn_qgroup_is(fn))
        return dn_qgroup_claims(c, m, call, fn, why, len);
    fused_unit *u = unit_new(c, m, call, fn, why, len);
    bool ok = u != NULL;
    for (fused_unit *seg = u; seg && ok; seg = seg->next)
        ok = segment_claims(c, m, call, seg, why, len);
    unit_free(u);
    return ok;
}

/* A build refused at run time: the body on the reference kernels, on plain inputs. */
gl_status dn_fused_run_members(dn_ctx *c, gl_kernel_ctx *k)
{
    const gl_tensor *plain[MAX_SLOTS];
    gl_tensor *owned[MAX_SLOTS] = {NULL};
    size_t n = k->n_inputs < MAX_SLOTS ? k->n_inputs : MAX_SLOTS;
    gl_status st = n == k->n_inputs ? GL_OK
                                    : gl_fail(GL_ERR_UNSUPPORTED, "%s: too many inputs", k->where);
    uint64_t t0 = gl_now_ns();
    for (size_t i = 0; i < n && st == GL_OK; i++) {
        plain[i] = k->in[i];
        if (k->in[i] && k->in[i]->layout) {
            plain[i] = owned[i] = dn_to_plain(c, k->in[i], NULL);
            st = owned[i] ? GL_OK : GL_ERR_INTERNAL;
            k->reorders++;
        }
    }
    k->reorder_ns += gl_now_ns() - t0;
    if (st == GL_OK)
        st = gl_eval_node(k->model, k->node, plain, k->out);
    for (size_t i = 0; i < n; i++)
        gl_tensor_free(owned[i]);
    return st;
}

/* Does the segment drop a NaN or an infinity (as its build says): a post-op chain that
 * loses one, or a head whose own reference kernel computes the head alone? */
static bool segment_drops_specials(const fused_unit *seg)
{
    return seg->drops_specials || seg->node.special_ref;
}

/* One segment on this run's inputs: the call's, or the outputs of earlier segments
 * (tmp[]); its output into *out. `finite_in`: its inputs are known free of NaN and
 * infinities; *finite: so is its output. *members: the segment cannot run these inputs as
 * built (a refused build, or post-ops that would drop a NaN or an infinity they hold):
 * the unit's members must run instead. */
static gl_status run_segment(dn_ctx *c, gl_kernel_ctx *k, fused_unit *seg, gl_tensor **tmp,
                             gl_tensor **out, bool finite_in, bool *rebuilt, bool *members,
                             bool *finite)
{
    const gl_tensor *in[MAX_SLOTS];
    for (size_t i = 0; i < seg->n_slots; i++)
        in[i] = seg->from[i] != NONE && seg->from[i] < k->n_inputs ? k->in[seg->from[i]]
                : seg->seg_of[i] != NONE                         ? tmp[seg->seg_of[i]]
                                                                 : NULL;
    gl_kernel_ctx hk = *k;
    hk.node = &seg->synth;
    hk.opset = seg->opset;
    hk.n_inputs = seg->n_slots;
    hk.in = in;
    hk.n_outputs = 1;
    hk.out = out;
    /* The executor lends the call's output buffers: an inner segment's reference
     * kernel takes a buffer of its own. */
    if (out != k->out)
        hk.alloc = NULL, hk.alloc_over = NULL;
    hk.reorder_ns = 0;
    hk.reorders = 0;
    *rebuilt = false;
    gl_status st = dn_node_ready(c, &hk, &seg->node, rebuilt);
    if (st == GL_OK && *rebuilt)
        describe_segment(c, seg);
    /* A part of the call's output (unit_run_parts) is written where it lies. */
    if (st == GL_OK && seg->node.n_out > 0)
        seg->node.out[0].into = out != k->out && *out;
    /* An inner primitive's output (out is tmp[i], freed when the unit is done): the
     * plan's unit scratch i */
    if (st == GL_OK && seg->node.n_out > 0)
        seg->node.out[0].scratch =
            seg->next && !seg->node.out[0].into ? (unsigned)(out - tmp) + 1 : 0;
    /* The head's own reference kernel (special_ref: a Winograd head) computes the head
     * alone: a run with a NaN or an infinity takes the members, whose steps are not lost
     * (a Conv+Add whose sum drops nothing ran the Conv alone). */
    bool drops = segment_drops_specials(seg);
    dn_inputs known = finite_in ? DN_INPUTS_FINITE : DN_INPUTS_UNKNOWN;
    if (st == GL_OK && !finite_in && drops && !seg->node.fallback)
        known = dn_inputs_look(c, &hk, &seg->node.specials, true);
    *members = st == GL_OK && seg->n_steps &&
               (seg->node.fallback || (drops && known == DN_INPUTS_SPECIAL));
    c->special_runs += *members && !seg->node.fallback;
    *finite = false;
    if (st == GL_OK && !*members)
        st = dn_node_exec_known(c, &hk, &seg->node, known, finite);
    k->reorder_ns += hk.reorder_ns + seg->sum_ns;
    k->reorders += hk.reorders + seg->sum_reorders;
    seg->sum_ns = 0;
    seg->sum_reorders = 0;
    return st;
}

/* Does a segment of the unit drop a NaN or an infinity (as its builds so far say)? */
static bool unit_drops_specials(const fused_unit *u)
{
    for (const fused_unit *seg = u; seg; seg = seg->next)
        if (segment_drops_specials(seg))
            return true;
    return false;
}

/* Does every segment that drops a NaN or an infinity get -inf right? */
static bool unit_neg_inf_ok(const fused_unit *u)
{
    for (const fused_unit *seg = u; seg; seg = seg->next)
        if (seg->drops_specials || (seg->node.special_ref && !seg->node.specials.neg_inf_ok))
            return false;
    return true;
}

/* The unit's segments one after the other on k's inputs (the call's, or a part of its
 * batch), the last one's output into *last_out. *members: they cannot run these inputs
 * (run_segment); *finite: the output is free of NaN and infinities. */
static gl_status run_segments(dn_ctx *c, gl_kernel_ctx *k, fused_unit *u, dn_inputs in,
                              gl_tensor **last_out, bool *members, bool *finite)
{
    gl_tensor *tmp[MAX_SEGS] = {NULL};
    unsigned builds = 0, const_reorders = 0;
    bool any_rebuilt = false;
    /* A segment reads the call's inputs and earlier segments' outputs: free of NaN when
     * the call's inputs are and no earlier segment makes one. */
    bool made = false, seg_finite = false;
    gl_status st = GL_OK;
    size_t i = 0;
    *members = false;
    for (fused_unit *seg = u; seg && st == GL_OK && !*members; seg = seg->next, i++) {
        unsigned b0 = seg->node.builds, r0 = seg->node.const_reorders;
        bool rebuilt = false;
        st = run_segment(c, k, seg, tmp, seg->next ? &tmp[i] : last_out,
                         in == DN_INPUTS_FINITE && !made, &rebuilt, members, &seg_finite);
        made = made || seg->node.makes_specials;
        any_rebuilt = any_rebuilt || rebuilt;
        if (seg != u) {
            builds += seg->node.builds - b0;
            const_reorders += seg->node.const_reorders - r0;
        }
    }
    for (size_t j = 0; j < MAX_SEGS; j++)
        gl_tensor_free(tmp[j]);
    /* The plan reads the unit's counters and text from its first segment. */
    u->node.builds += builds;
    u->node.const_reorders += const_reorders;
    if (any_rebuilt) {
        describe_unit(c, u);
        u->node.generation++;
    }
    *finite = seg_finite;
    return st;
}

/* After a run of the whole batch: how many images the unit runs at a time from now on
 * (dn_slice.c). Parts of the batch only for a unit that reads one activation (its
 * input 0; the others constants), whose segments all run on oneDNN, and whose input
 * and output keep their images outermost. */
static void choose_images(const gl_kernel_ctx *k, fused_unit *u)
{
    const gl_tensor *x = k->n_inputs ? k->in[0] : NULL;
    u->batch = x && x->rank >= 3 ? x->dims[0] : 1;
    u->images = u->batch;
    const dn_layout *xl = x ? (const dn_layout *)x->layout : NULL;
    if (u->n_segs < 2 || u->batch <= 1 || k->n_inputs > MAX_SLOTS || !x->buf ||
        (xl && (xl->view || !dn_md_batch_outer(&xl->md))))
        return;
    for (size_t i = 1; i < k->n_inputs; i++)
        if (k->node->inputs[i] && !gl_value_is_constant(k->node->inputs[i]))
            return;
    size_t largest = 0;
    const fused_unit *last = u;
    for (const fused_unit *seg = u; seg; seg = seg->next) {
        const dn_node *s = &seg->node;
        if (!s->built || s->fallback || s->special_ref || s->n_out != 1 || !s->prim)
            return;
        size_t bytes = dnnl_memory_desc_get_size(&s->out[0].md);
        if (seg->next && bytes > largest)
            largest = bytes;
        last = seg;
    }
    const dn_out *o = &last->node.out[0];
    const dnnl_memory_desc_t *y = &o->md;
    if (y->data_type != dnnl_f32 || !dn_md_batch_outer(y) || y->dims[0] != u->batch ||
        x->rank > DNNL_MAX_NDIMS || o->rank < 1 || o->dims[0] != u->batch)
        return;
    u->x_rank = x->rank;
    memcpy(u->x_dims, x->dims, (size_t)x->rank * sizeof(int64_t));
    u->y_rank = o->rank;
    memcpy(u->y_dims, o->dims, (size_t)o->rank * sizeof(int64_t));
    u->whole_md = *y;
    u->whole_layout = last->node.out[0].layout;
    u->images = dn_slice_images(u->batch, largest);
}

/* The unit on u->images of the batch at a time, each part's output written into its
 * images of the whole output. *whole: it ran so (false: the batch changed, or a part
 * could not run as built; the caller runs the whole batch). */
static gl_status unit_run_parts(dn_ctx *c, gl_kernel_ctx *k, fused_unit *u, dn_inputs in,
                                bool *whole, bool *finite)
{
    const gl_tensor *x = k->in[0];
    const dn_layout *xl = (const dn_layout *)x->layout;
    *whole = false;
    if (x->rank != u->x_rank || memcmp(x->dims, u->x_dims, (size_t)x->rank * sizeof(int64_t)) ||
        !x->buf || (xl && (xl->view || !dn_md_batch_outer(&xl->md)))) {
        u->images = 0; /* chosen again after this run */
        return GL_OK;
    }
    size_t bytes = dnnl_memory_desc_get_size(&u->whole_md);
    gl_buffer *buf = gl_buffer_from_slot(&u->whole_slot, bytes, false);
    if (!buf)
        return gl_error_prefix("%s: output 0", k->where), GL_ERR_NOMEM;
    /* the ONNX dims, not the md's: an nhwc head's md is N, C, H, W over N, H, W, C */
    int64_t count = 1;
    for (int d = 0; d < u->y_rank; d++)
        count *= u->y_dims[d];
    gl_tensor *y = gl_tensor_wrap(GL_DT_FLOAT, u->y_rank, u->y_dims, count, buf);
    y->layout = u->whole_layout;
    gl_tensor_free(k->out[0]);
    k->out[0] = y;
    const gl_tensor *in_part[MAX_SLOTS];
    for (size_t i = 1; i < k->n_inputs; i++)
        in_part[i] = k->in[i];
    gl_status st = GL_OK;
    bool members = false, all_finite = true;
    for (int64_t first = 0; first < u->batch && st == GL_OK && !members; first += u->images) {
        gl_tensor *x_part = dn_slice_of(c, x, first, u->images);
        gl_tensor *y_part = dn_slice_of(c, y, first, u->images);
        in_part[0] = x_part;
        gl_kernel_ctx part = *k;
        part.in = in_part;
        bool part_finite = false;
        st = run_segments(c, &part, u, in, &y_part, &members, &part_finite);
        gl_tensor_free(x_part);
        gl_tensor_free(y_part);
        k->reorder_ns = part.reorder_ns;
        k->reorders = part.reorders;
        all_finite = all_finite && part_finite;
        /* a segment built again for the part's shape on a reference kernel writes a
         * tensor of its own, not the part of the whole output: the whole batch then */
        for (const fused_unit *seg = u; seg && !members; seg = seg->next)
            members = seg->node.fallback || seg->node.special_ref;
    }
    if (members)
        u->images = u->batch; /* a part fell to the members or to a reference kernel: the
                               * whole batch from now on */
    *whole = st == GL_OK && !members;
    *finite = all_finite;
    return st;
}

/* The unit of the call: its segments one after the other (on the whole batch or a part
 * at a time), or its members on the reference kernels. *finite: its output is free of
 * NaN and infinities. */
static gl_status unit_run(dn_ctx *c, gl_kernel_ctx *k, void **state, bool *finite)
{
    fused_unit *u = *state;
    if (!u) {
        char why[160] = "";
        u = unit_new(c, k->model, k->node, gl_called_function(k->model, k->node), why,
                     sizeof(why));
        if (!u)
            return gl_fail(GL_ERR_INTERNAL, "%s: claimed as a fused group, yet %s", k->where,
                           why);
        *state = u;
    }
    /* The call's inputs: vouched for, or looked at when a segment would drop a NaN; one
     * that holds one sends the run to the members at once. -inf does not when every
     * segment that drops one gets -inf right (the softmax of FusedSoftmaxMatMul): each
     * looks at its own inputs then. */
    u->call_specials.neg_inf_ok = unit_neg_inf_ok(u);
    dn_inputs in = dn_inputs_look(c, k, &u->call_specials, unit_drops_specials(u));
    bool members = in == DN_INPUTS_SPECIAL && unit_drops_specials(u);
    c->special_runs += members;
    bool parts = false, seg_finite = false;
    gl_status st = GL_OK;
    if (!members && u->images && u->images < u->batch)
        st = unit_run_parts(c, k, u, in, &parts, &seg_finite);
    if (st == GL_OK && !members && !parts) {
        st = run_segments(c, k, u, in, k->out, &members, &seg_finite);
        if (st == GL_OK && !members && !u->images)
            choose_images(k, u);
    }
    if (st == GL_OK && members) {
        gl_tensor_free(k->out[0]);
        k->out[0] = NULL;
        st = dn_fused_run_members(c, k);
        fused_unit *last = u;
        while (last->next)
            last = last->next;
        /* in the last segment's layout, when it was built for the whole batch (not for
         * a part of it: the members' plain output then stays as it is) */
        const gl_tensor *y = k->out[0];
        const dn_out *o = last->node.n_out ? &last->node.out[0] : NULL;
        if (st == GL_OK && last->node.built && !last->node.fallback && o && y &&
            o->rank == y->rank && memcmp(o->dims, y->dims, (size_t)y->rank * sizeof(int64_t)) == 0)
            st = dn_node_adopt(c, k, &last->node);
    }
    *finite = st == GL_OK && !members && seg_finite;
    return st;
}

gl_status dn_fused_run(dn_ctx *c, gl_kernel_ctx *k, void **state)
{
    bool finite = false;
    gl_status st;
    if (*state ? dn_catconv_state(*state)
               : dn_catconv_is(gl_called_function(k->model, k->node))) {
        st = dn_catconv_run(c, k, state, &finite);
    } else if (*state ? dn_shuffle_state(*state)
                      : dn_shuffle_is(gl_called_function(k->model, k->node))) {
        st = dn_shuffle_run(c, k, state);
        /* moves values: its output is as free of NaN as its inputs */
        finite = st == GL_OK && dn_inputs_look(c, k, &((dn_node *)*state)->specials, false) ==
                                    DN_INPUTS_FINITE;
    } else if (*state ? dn_qgroup_state(*state)
                      : dn_qgroup_is(gl_called_function(k->model, k->node))) {
        st = dn_qgroup_run(c, k, state); /* int8 out: nothing to vouch for */
    } else {
        st = unit_run(c, k, state, &finite);
    }
    dn_vouch(c, k, st == GL_OK && finite);
    return st;
}

void dn_fused_scratch(const void *state, gl_scratch_fn fn, void *arg)
{
    if (dn_catconv_state(state) || dn_shuffle_state(state) || dn_qgroup_state(state))
        return;
    gl_scratch_slot(&((const fused_unit *)state)->whole_slot, fn, arg);
    for (const fused_unit *u = state; u; u = u->next) /* a unit is its first segment */
        dn_node_scratch(&u->node, fn, arg);
}

void dn_fused_release(void *state)
{
    if (dn_catconv_state(state))
        dn_catconv_release(state);
    else if (dn_shuffle_state(state))
        dn_shuffle_release(state);
    else if (dn_qgroup_state(state))
        dn_qgroup_release(state);
    else
        unit_free(state);
}

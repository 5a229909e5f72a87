/* fold_transpose.c — the `fold-transpose` pass: a Transpose that swaps only the last two
 * dims of a matrix product's operand goes into the product.
 *
 *   Gemm(Transpose(A), B)           -> Gemm(A, B) with transA toggled (perm [1,0] exactly)
 *   MatMul(Transpose(A), B), both operands of rank 2
 *                                   -> Gemm(A, B, transA=1) (no C: opset 11 on)
 *   MatMul(X, Transpose(W)) of any other rank, or FusedMatMul
 *                                   -> graphlab.FusedMatMul(X, W, transB=1, alpha=1)
 * A Reshape is such a Transpose when its input and output shapes are known, of one rank,
 * with the same batch dims, the last two swapped and one of them 1 (the bytes do not
 * move). Both operands of one product fold in one rewrite, one decision.
 *
 * Refused, each with a decision that says why: perms that move a batch dim (an
 * attention's [0,2,1,3] heads, [1,2,0] for K^T), a rank below 2 or unknown, Reshapes
 * whose shapes are not all known, 8- and 16-bit integer operands (ONNX's MatMul takes
 * none), integer Gemms, and a dtype that is not known at all. MatMul's integer types
 * (int32, int64, uint32, uint64) fold into FusedMatMul, never Gemm (issue 22): its
 * reference kernel multiplies them exactly as MatMul's does; oneDNN takes only float32
 * products and leaves them to that kernel with a note.
 *
 * A Transpose read by others too: the product still reads its input with the flag, and
 * the Transpose stays for the others (its "readers" number says how many). Every product
 * among its readers folds it in turn, so it goes once the last product has; a product
 * does not wait on it any more, and oneDNN reads the strides instead of a copy.
 *
 * FusedMatMul is also saved as a model-local function (patterns_functions.c) so other
 * runtimes run the result; it needs ai.onnx opset 12 (Einsum), and float32 below 15.
 *
 * Quantized products (issue 21, seed 002):
 *   DQ -> Transpose -> MatMul/Gemm  folds as above (the product reads the DQ's output,
 *                                   whose per-axis scale keeps its axis).
 *   Transpose -> DQ -> MatMul/Gemm  the DQ is made again on the Transpose's input, its
 *                                   per-axis scale's axis swapped with the dims, and the
 *                                   swap folds into the product.
 *   MatMulInteger(Transpose(A), B)  -> graphlab.MatMulIntegerT(A, B, ..., transA=1)
 *   QLinearMatMul likewise          -> graphlab.QLinearMatMulT (ONNX has no such flags).
 * A quantized operand's scale and zero point go with it: of rank 0 or 1 they count the
 * rows of A' / columns of B' in any layout and stay; of rank 2 or more (per token
 * [..., M, 1], per channel [..., 1, N]) they must be swapped with the operand by a
 * Transpose or a Reshape-as-Transpose, which folds too (the graphlab op reads them in the
 * operand's stored layout), or be a constant with one of its last two dims 1 (stored
 * again swapped: constant-folding runs first and has folded the branch's Transpose), or
 * have their last two dims 1; any other scale branch is a refusal ("does not match"). Omitted zero points become constants of 0 (the function
 * bodies read every input). The bodies need opset 12 (Einsum, on int32).
 *
 * Why a step of its own, after the second transpose-push and before fusion: the
 * Transposes worth folding are the ones transpose-push could not cancel (it has no
 * handler for MatMul, so a Transpose stops right above one), and fusion's MatMul rules
 * (bias, activation, attention) must meet the products with their Transposes already
 * inside, as FusedMatMul or Gemm, not a Transpose in the middle of a pattern.
 */
#include "passes/patterns.h"

#include "ops/families.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAPHLAB "graphlab"
#define FUSED "FusedMatMul"
/* The ai.onnx opset Gemm's C is optional from. */
#define GEMM_NO_C_OPSET 11

/* A quantized operand's scale or zero point swapped with it: by a Transpose or Reshape
 * that folds too, or a constant the pass stores swapped (constant-folding has often
 * folded the branch's Transpose already). */
typedef struct param_swap {
    size_t slot;       /* the product's input */
    gl_node *src;      /* its Transpose or Reshape; NULL: a constant */
    gl_value *from;    /* the swap's input, or the constant */
} param_swap;

typedef struct operand {
    gl_node *src;      /* the Transpose or Reshape that folds; NULL: the operand stays */
    gl_value *from;    /* what the product reads instead */
    int rank;
    size_t slot;       /* the product's input */
    gl_node *dq;       /* Transpose -> DequantizeLinear -> product: the DQ, made again */
    int dq_axis;       /* the new DQ's axis; -1: per tensor */
    param_swap params[2];
    size_t n_params;
} operand;

typedef struct fold {
    gl_node *product;
    operand op[2];
    bool fused;        /* FusedMatMul (new or existing), else Gemm */
    bool to_gemm;      /* a MatMul that becomes a Gemm */
    const gl_trans_product *quant; /* MatMulInteger/QLinearMatMul or their graphlab ops */
} fold;

static bool is_fused(const gl_node *n)
{
    return n && !strcmp(n->domain, GRAPHLAB) && !strcmp(n->op_type, FUSED) &&
           n->n_outputs && n->outputs[0];
}

static gl_dtype value_dtype(const gl_value *v)
{
    return v && v->type.kind == GL_TYPE_TENSOR ? v->type.dtype : GL_DT_UNDEFINED;
}

static void format_ints(const int64_t *v, size_t n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "," : "", (long long)v[i]);
}

/* The shape of v when every dim is known: its rank, dims in d; -1 otherwise. */
static int static_shape(const gl_value *v, int64_t *d)
{
    int r = gl_value_rank(v);
    if (r == GL_RANK_UNKNOWN || r > GL_MAX_RANK)
        return -1;
    for (int i = 0; i < r; i++)
        if ((d[i] = v->type.shape.dims[i].value) < 0)
            return -1;
    return r;
}

/* Is producer p of operand `v` a swap of its last two dims? true with o filled; false
 * with `why` set (a refusal) or empty (p is not a Transpose or Reshape at all). */
static bool check_swap(gl_node *p, gl_value *v, operand *o, char *why, size_t len,
                       char *perm_text, size_t perm_len)
{
    why[0] = perm_text[0] = '\0';
    if (!p || p->n_inputs < 1 || !p->inputs[0])
        return false;
    gl_value *x = p->inputs[0];
    if (gl_node_is(p, "Transpose")) {
        const gl_attr *a = gl_node_attr_typed(p, "perm", GL_ATTR_INTS);
        int r = a ? (int)a->n : gl_value_rank(x);
        if (r == GL_RANK_UNKNOWN) {
            snprintf(why, len, "Transpose '%s' has no perm and the rank of '%s' is not known",
                     p->name, x->name);
            return false;
        }
        int64_t perm[GL_MAX_RANK];
        for (int i = 0; i < r && i < GL_MAX_RANK; i++)
            perm[i] = a ? a->ints[i] : r - 1 - i;
        format_ints(perm, (size_t)(r < GL_MAX_RANK ? r : GL_MAX_RANK), perm_text, perm_len);
        int rx = gl_value_rank(x);
        if (rx != GL_RANK_UNKNOWN && rx != r) {
            snprintf(why, len, "Transpose '%s' has %d perm entries for '%s' of rank %d",
                     p->name, r, x->name, rx);
            return false;
        }
        if (r < 2 || r > GL_MAX_RANK) {
            snprintf(why, len, "Transpose '%s' has rank %d: no matrix dims to swap", p->name, r);
            return false;
        }
        for (int i = 0; i < r - 2; i++)
            if (perm[i] != i) {
                snprintf(why, len, "Transpose '%s' (perm [%s]) moves batch dim %d: only a swap "
                         "of the last two dims folds", p->name, perm_text, i);
                return false;
            }
        if (perm[r - 2] != r - 1 || perm[r - 1] != r - 2) {
            snprintf(why, len, "Transpose '%s' (perm [%s]) swaps nothing", p->name, perm_text);
            return false;
        }
        *o = (operand){.src = p, .from = x, .rank = r};
        return true;
    }
    if (!gl_node_is(p, "Reshape"))
        return false;
    /* A Reshape that changes the rank (a head merge) is no Transpose: nothing to say. */
    int rx = gl_value_rank(x), rv = gl_value_rank(v);
    if (rx != GL_RANK_UNKNOWN && rv != GL_RANK_UNKNOWN && (rx != rv || rx < 2))
        return false;
    int64_t in[GL_MAX_RANK], out[GL_MAX_RANK];
    int ri = static_shape(x, in), ro = static_shape(v, out);
    if (ri < 0 || ro < 0) {
        snprintf(why, len, "Reshape '%s': the shape of '%s' is not known, so it cannot be "
                 "proven a swap of the last two dims", p->name, ri < 0 ? x->name : v->name);
        return false;
    }
    if (ri != ro || ri < 2)
        return false;
    bool swap = in[ri - 2] == out[ri - 1] && in[ri - 1] == out[ri - 2];
    for (int i = 0; i < ri - 2; i++)
        swap = swap && in[i] == out[i];
    if (!swap)
        return false;
    if (in[ri - 2] != 1 && in[ri - 1] != 1) {
        snprintf(why, len, "Reshape '%s' swaps dims %lld and %lld: a reshape only equals a "
                 "transpose when one of them is 1", p->name, (long long)in[ri - 2],
                 (long long)in[ri - 1]);
        return false;
    }
    snprintf(perm_text, perm_len, "reshape");
    *o = (operand){.src = p, .from = x, .rank = ri};
    return true;
}

/* The integer types of ONNX's MatMul: graphlab's FusedMatMul kernel multiplies them as
 * MatMul's does (the same loops after a dense transposed copy), so the fold is exact
 * where ONNX Runtime has none (issue 22). Not into Gemm, whose reference kernel works
 * in double. */
static bool matmul_int(gl_dtype dt)
{
    return dt == GL_DT_INT32 || dt == GL_DT_INT64 || dt == GL_DT_UINT32 || dt == GL_DT_UINT64;
}

/* The dtype refusal for a product reading `v` (a Gemm: `gemm`), or NULL. */
static const char *dtype_refusal(const gl_value *v, bool gemm, char *why, size_t len)
{
    gl_dtype dt = value_dtype(v);
    if (dt == GL_DT_UNDEFINED)
        snprintf(why, len, "the dtype of '%s' is not known (run shape-inference first)",
                 v->name);
    else if (gemm && !gl_dtype_is_float(dt))
        snprintf(why, len, "'%s' is %s: Gemm's reference kernel computes integers in "
                 "double, so only float Gemms fold", v->name, gl_dtype_name(dt));
    else if (!gl_dtype_is_float(dt) && !matmul_int(dt))
        snprintf(why, len, "'%s' is %s: MatMul takes no 8- or 16-bit integers", v->name,
                 gl_dtype_name(dt));
    else
        return NULL;
    return why;
}

/* Transpose -> DequantizeLinear -> the product: does the swap fold, the DQ made again on
 * the swap's input? The per-axis scale's axis follows its dim. */
static bool check_under_dequantize(gl_value *v, operand *o, char *why, size_t len,
                                   char *perm, size_t perm_len)
{
    gl_node *dq = v->producer;
    if (!gl_node_is(dq, "DequantizeLinear") || dq->n_inputs < 2 || !dq->inputs[0] ||
        !dq->inputs[1] || dq->n_outputs != 1)
        return false;
    gl_value *x = dq->inputs[0];
    if (!check_swap(x->producer, x, o, why, len, perm, perm_len))
        return false;
    o->dq = dq;
    o->dq_axis = -1;
    int scale_rank = gl_value_rank(dq->inputs[1]), r = o->rank;
    int64_t axis = gl_node_attr_int(dq, "axis", 1);
    axis += axis < 0 ? r : 0;
    if (gl_node_attr_int(dq, "block_size", 0))
        snprintf(why, len, "DequantizeLinear '%s' is blocked (block_size): its scale would "
                 "have to move with the data", dq->name);
    else if (scale_rank == GL_RANK_UNKNOWN)
        snprintf(why, len, "the rank of '%s', the scale of DequantizeLinear '%s', is not "
                 "known", dq->inputs[1]->name, dq->name);
    else if (scale_rank >= 1 && (axis < 0 || axis >= r))
        snprintf(why, len, "DequantizeLinear '%s': axis %lld is outside rank %d", dq->name,
                 (long long)gl_node_attr_int(dq, "axis", 1), r);
    else {
        if (scale_rank >= 1)
            o->dq_axis = (int)(axis == r - 2 ? r - 1 : axis == r - 1 ? r - 2 : axis);
        return true;
    }
    return false;
}

/* ---- quantized products: MatMulInteger, QLinearMatMul, their graphlab ops -------------- */

static void refuse(gl_pass_ctx *ctx, const gl_node *product, const gl_node *src,
                   const char *perm, const char *why);

static size_t letter_slot(const gl_trans_product *q, char letter)
{
    return (size_t)(strchr(q->inputs, letter) - q->inputs);
}

static bool last_two_ones(const gl_value *v)
{
    int r = gl_value_rank(v);
    return r >= 2 && v->type.shape.dims[r - 2].value == 1 && v->type.shape.dims[r - 1].value == 1;
}

/* A local constant of rank >= 2 with one of its last two dims 1: swapping them moves no
 * byte. */
static bool vector_constant(const gl_value *v)
{
    const gl_tensor *t = gl_value_is_constant(v) ? v->init : NULL;
    return t && t->rank >= 2 && t->rank == gl_value_rank(v) &&
           (t->dims[t->rank - 2] == 1 || t->dims[t->rank - 1] == 1);
}

/* The same bytes with the last two dims swapped, as a new constant. */
static gl_value *swapped_constant(gl_pt_ctx *c, const gl_value *v)
{
    gl_tensor *t = gl_tensor_share(v->init);
    int64_t d = t->dims[t->rank - 2];
    t->dims[t->rank - 2] = t->dims[t->rank - 1];
    t->dims[t->rank - 1] = d;
    free(t->name);
    t->name = NULL;
    char name[160];
    snprintf(name, sizeof(name), "%s_swapped", v->name);
    return gl_add_initializer(c->g, name, t);
}

/* Side s of quantized product n, whose operand swaps (o): its dtype, the other operand's
 * rank, and each scale and zero point — of rank 0 or 1, or with its last two dims 1, it
 * stays; else it must be swapped too (recorded in o->params). false with `why`. */
static bool check_quantized_side(const gl_node *n, const gl_trans_product *q, int s,
                                 operand *o, char *why, size_t len)
{
    const gl_value *v = n->inputs[o->slot];
    const gl_value *other = n->inputs[letter_slot(q, s ? 'A' : 'B')];
    int ro = gl_value_rank(other);
    for (int k = 0; k < 2; k++) {
        const gl_value *x = k ? other : v;
        gl_dtype dt = value_dtype(x);
        if (dt != GL_DT_UINT8 && dt != GL_DT_INT8) {
            snprintf(why, len, "'%s' is %s: a quantized product's operands are uint8 or int8",
                     x ? x->name : "", dt == GL_DT_UNDEFINED ? "of unknown dtype"
                                                             : gl_dtype_name(dt));
            return false;
        }
    }
    if (ro == GL_RANK_UNKNOWN || ro < 2) {
        snprintf(why, len, "the other operand '%s' has %s: the function body of graphlab.%s "
                 "takes matrices", other ? other->name : "", ro < 0 ? "an unknown rank" :
                 "rank 1", q->op);
        return false;
    }
    o->n_params = 0;
    for (size_t i = 0; q->inputs[i] && i < n->n_inputs; i++) {
        gl_value *p = n->inputs[i];
        if (q->inputs[i] != (s ? 'b' : 'a') || !p)
            continue;
        int r = gl_value_rank(p);
        if (r != GL_RANK_UNKNOWN && (r <= 1 || last_two_ones(p)))
            continue; /* the same in either layout */
        if (vector_constant(p)) {
            o->params[o->n_params++] = (param_swap){i, NULL, p};
            continue;
        }
        operand po;
        char pwhy[200], pperm[96];
        if (r == GL_RANK_UNKNOWN || !check_swap(p->producer, p, &po, pwhy, sizeof(pwhy), pperm,
                                                sizeof(pperm))) {
            snprintf(why, len, "the scale branch does not match: '%s' (input %zu) %s%s%s",
                     p->name, i, r == GL_RANK_UNKNOWN ? "has an unknown rank" :
                     "has rank 2 or more and is not swapped with the operand", pwhy[0] ? ": " : "",
                     r == GL_RANK_UNKNOWN ? "" : pwhy);
            return false;
        }
        o->params[o->n_params++] = (param_swap){i, po.src, po.from};
    }
    return true;
}

/* The check of a quantized product (refusals recorded); false when nothing folds. */
static bool check_quantized(gl_pass_ctx *ctx, gl_node *n, int64_t opset, fold *f)
{
    const gl_trans_product *q = gl_trans_product_of(n);
    *f = (fold){.product = n, .quant = q};
    if (n->n_inputs <= letter_slot(q, 'B') || n->n_outputs != 1)
        return false;
    size_t found = 0;
    char why[400], perm[96];
    for (int s = 0; s < 2; s++) {
        operand *o = &f->op[s];
        size_t slot = letter_slot(q, s ? 'B' : 'A');
        gl_value *v = n->inputs[slot];
        if (!v)
            continue;
        if (!check_swap(v->producer, v, o, why, sizeof(why), perm, sizeof(perm))) {
            if (why[0])
                refuse(ctx, n, v->producer, perm, why);
            continue;
        }
        o->slot = slot;
        if (!check_quantized_side(n, q, s, o, why, sizeof(why))) {
            refuse(ctx, n, o->src, perm, why);
            *o = (operand){0};
            continue;
        }
        found++;
    }
    if (found && !n->domain[0] && opset < gl_pt_function_min_opset(q->op)) {
        snprintf(why, sizeof(why), "opset %lld: the function body of graphlab.%s needs "
                 "opset %lld (Einsum)", (long long)opset, q->op,
                 (long long)gl_pt_function_min_opset(q->op));
        for (int s = 0; s < 2; s++)
            if (f->op[s].src)
                refuse(ctx, n, f->op[s].src, NULL, why);
        return false;
    }
    return found > 0;
}

static void refuse(gl_pass_ctx *ctx, const gl_node *product, const gl_node *src,
                   const char *perm, const char *why)
{
    gl_decision *d = gl_pass_decide(ctx, "fold-transpose", GL_REFUSED, "%s '%s': %s",
                                    product->op_type, product->name, why);
    if (src)
        gl_decision_add_node_ref(d, src);
    gl_decision_add_node_ref(d, product);
    if (perm && *perm)
        gl_decision_add_text(d, "perm", perm);
    if (product->graph->parent_node)
        gl_decision_add_text(d, "inside", product->graph->parent_node->name);
}

/* The check: which operands of product n fold and into what; refusals recorded. false
 * when nothing folds. */
static bool check_product(gl_pass_ctx *ctx, gl_node *n, int64_t opset, fold *f)
{
    if (gl_trans_product_of(n))
        return check_quantized(ctx, n, opset, f);
    bool gemm = gl_node_is(n, "Gemm"), fused = is_fused(n);
    if (!(gemm || fused || gl_node_is(n, "MatMul")) || n->n_inputs < 2)
        return false;
    *f = (fold){.product = n, .fused = fused};
    size_t found = 0;
    char why[320], perm[96];
    for (int s = 0; s < 2; s++) {
        gl_value *v = n->inputs[s];
        if (!v)
            continue;
        if (!check_swap(v->producer, v, &f->op[s], why, sizeof(why), perm, sizeof(perm)) &&
            (why[0] || !check_under_dequantize(v, &f->op[s], why, sizeof(why), perm,
                                               sizeof(perm)))) {
            if (why[0])
                refuse(ctx, n, f->op[s].dq ? f->op[s].dq : v->producer, perm, why);
            f->op[s] = (operand){0};
            continue;
        }
        f->op[s].slot = (size_t)s;
        if (dtype_refusal(v, gemm, why, sizeof(why)) ||
            (gemm && f->op[s].rank != 2 &&
             snprintf(why, sizeof(why), "a Gemm operand of rank %d", f->op[s].rank) > 0)) {
            refuse(ctx, n, v->producer, perm, why);
            f->op[s] = (operand){0};
            continue;
        }
        found++;
    }
    if (!found || gemm || fused)
        return found > 0;
    /* A MatMul: Gemm when both operands are matrices and Gemm can go without C. */
    int r0 = gl_value_rank(n->inputs[0]), r1 = gl_value_rank(n->inputs[1]);
    gl_dtype dt = value_dtype(n->inputs[0]);
    f->to_gemm = r0 == 2 && r1 == 2 && opset >= GEMM_NO_C_OPSET && !matmul_int(dt);
    f->fused = !f->to_gemm;
    const char *no = NULL;
    if (f->fused && opset < gl_pt_function_min_opset(FUSED))
        no = "the function body of graphlab.FusedMatMul needs opset 12 (Einsum)";
    else if (f->fused && opset < 15 && dt != GL_DT_FLOAT)
        no = "below opset 15 the function body of graphlab.FusedMatMul scales by a float32 "
             "alpha, so it takes float32 only";
    if (no) {
        snprintf(why, sizeof(why), "opset %lld, %s: %s", (long long)opset,
                 gl_dtype_name(dt), no);
        for (int s = 0; s < 2; s++)
            if (f->op[s].src)
                refuse(ctx, n, f->op[s].src, NULL, why);
        return false;
    }
    return true;
}

static void toggle(gl_node *n, const char *attr)
{
    gl_node_set_attr_int(n, attr, !gl_node_attr_int(n, attr, 0));
}

static const char *const trans_attrs[2] = {"transA", "transB"};

/* Every node the rewrite replaces or folds, for the provenance; returns the count. */
static size_t folded_nodes(const fold *f, gl_node **srcs)
{
    size_t n = 0;
    srcs[n++] = f->product;
    for (int s = 0; s < 2; s++) {
        const operand *o = &f->op[s];
        if (!o->src)
            continue;
        srcs[n++] = o->src;
        if (o->dq)
            srcs[n++] = o->dq;
        for (size_t i = 0; i < o->n_params; i++)
            if (o->params[i].src)
                srcs[n++] = o->params[i].src;
    }
    return n;
}

#define MAX_FOLDED 9

/* A float MatMul becomes Gemm or FusedMatMul under its name; *p the product after. */
static gl_status float_product(gl_pt_ctx *c, const fold *f, int64_t decision, gl_node **p)
{
    gl_node *n = f->product, *srcs[MAX_FOLDED];
    size_t ns = folded_nodes(f, srcs);
    gl_status st;
    *p = n;
    if (gl_node_is(n, "Gemm") || is_fused(n)) {
        gl_node_inherit_provenance(n, srcs, ns, decision);
        if (is_fused(n) && !gl_node_attr(n, "alpha"))
            gl_node_set_attr_float(n, "alpha", 1.0f);
        return GL_OK;
    }
    *p = gl_add_node(c->g, f->fused ? FUSED : "Gemm", f->fused ? GRAPHLAB : "",
                     n->name_generated ? NULL : n->name, n->inputs, 2, 1);
    if (!*p)
        return GL_ERR_INTERNAL;
    gl_node_set_attr_int(*p, "transA", 0);
    gl_node_set_attr_int(*p, "transB", 0);
    if (f->fused) {
        gl_node_set_attr_float(*p, "alpha", 1.0f);
        if ((st = gl_pt_ensure_function(c->m, FUSED)) != GL_OK)
            return st;
    }
    gl_node_inherit_provenance(*p, srcs, ns, decision);
    if ((st = gl_move_output(c->g, n, 0, *p, 0)) != GL_OK)
        return st;
    return gl_remove_node(c->g, n);
}

/* A scalar 0 of the operand's dtype for an omitted zero point. */
static gl_value *zero_point(gl_pt_ctx *c, const gl_node *n, const gl_trans_product *q, size_t i)
{
    const gl_value *x = n->inputs[letter_slot(q, q->inputs[i] == 'a' ? 'A' : 'B')];
    char name[160];
    snprintf(name, sizeof(name), "%s_zero_point", x->name);
    return gl_add_initializer(c->g, name, gl_tensor_new(value_dtype(x), 0, NULL));
}

/* MatMulInteger / QLinearMatMul become their graphlab op (flags 0, omitted zero points
 * filled); a graphlab one stays. *p the product after. */
static gl_status quantized_product(gl_pt_ctx *c, const fold *f, int64_t decision, gl_node **p)
{
    gl_node *n = f->product, *srcs[MAX_FOLDED];
    const gl_trans_product *q = f->quant;
    size_t ns = folded_nodes(f, srcs), want = strlen(q->inputs);
    gl_status st;
    *p = n;
    if (n->domain[0]) {
        gl_node_inherit_provenance(n, srcs, ns, decision);
        return GL_OK;
    }
    gl_value *ins[GL_MAX_SWAPPED] = {0};
    for (size_t i = 0; i < want && i < GL_MAX_SWAPPED; i++) {
        ins[i] = i < n->n_inputs ? n->inputs[i] : NULL;
        if (!ins[i] && !(ins[i] = zero_point(c, n, q, i)))
            return GL_ERR_INTERNAL;
    }
    *p = gl_add_node(c->g, q->op, GRAPHLAB, n->name_generated ? NULL : n->name, ins, want, 1);
    if (!*p)
        return GL_ERR_INTERNAL;
    gl_node_set_attr_int(*p, "transA", 0);
    gl_node_set_attr_int(*p, "transB", 0);
    if ((st = gl_pt_ensure_function(c->m, q->op)) != GL_OK)
        return st;
    gl_node_inherit_provenance(*p, srcs, ns, decision);
    if ((st = gl_move_output(c->g, n, 0, *p, 0)) != GL_OK)
        return st;
    return gl_remove_node(c->g, n);
}

/* n goes when nothing reads it any more, with the constants only it read. */
static gl_status drop_if_unread(gl_pt_ctx *c, gl_node *n)
{
    for (size_t i = 0; n && i < n->n_outputs; i++)
        if (n->outputs[i] && (n->outputs[i]->n_uses || n->outputs[i]->n_output_refs))
            return GL_OK;
    return n ? gl_pt_remove_nodes(c, &n, 1) : GL_OK;
}

/* The DequantizeLinear of o made again on the swap's input; *out its output. */
static gl_status remake_dequantize(gl_pt_ctx *c, const operand *o, int64_t decision,
                                   gl_value **out)
{
    gl_node *srcs[2] = {o->dq, o->src};
    gl_node *nd = gl_pt_dequantize_again(c->g, o->dq, o->from, o->dq_axis, srcs, 2, decision);
    if (!nd)
        return GL_ERR_INTERNAL;
    *out = nd->outputs[0];
    return GL_OK;
}

/* Side s of product p reads the swap's input with its flag toggled (through a new DQ,
 * and with its scale branch); what nothing reads any more goes. */
static gl_status fold_operand(gl_pt_ctx *c, gl_node *p, const operand *o, int s,
                              int64_t decision)
{
    gl_value *in = o->from;
    gl_status st;
    if (o->dq && (st = remake_dequantize(c, o, decision, &in)) != GL_OK)
        return st;
    toggle(p, trans_attrs[s]);
    if ((st = gl_set_input(c->g, p, o->slot, in)) != GL_OK)
        return st;
    for (size_t i = 0; i < o->n_params; i++) {
        const param_swap *ps = &o->params[i];
        gl_value *from = ps->src ? ps->from : swapped_constant(c, ps->from);
        if (!from)
            return GL_ERR_INTERNAL;
        if ((st = gl_set_input(c->g, p, ps->slot, from)) != GL_OK)
            return st;
    }
    if ((st = drop_if_unread(c, o->dq)) != GL_OK || (st = drop_if_unread(c, o->src)) != GL_OK)
        return st;
    for (size_t i = 0; i < o->n_params; i++) {
        const param_swap *ps = &o->params[i];
        st = ps->src ? drop_if_unread(c, ps->src) : gl_pt_drop_if_unused(c, ps->from);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

/* The rewrite: the product (made anew when its op changes) reads the folded sources'
 * inputs with its flags toggled; the sources go when nothing else reads them. */
static gl_status apply(gl_pt_ctx *c, const fold *f, int64_t decision)
{
    gl_node *p;
    gl_status st = f->quant ? quantized_product(c, f, decision, &p)
                            : float_product(c, f, decision, &p);
    for (int s = 0; s < 2 && st == GL_OK; s++)
        if (f->op[s].src)
            st = fold_operand(c, p, &f->op[s], s, decision);
    return st;
}

/* How many nodes read v (a graph output counts as one). */
static size_t readers(const gl_value *v)
{
    return v->n_uses + (v->n_output_refs ? 1 : 0);
}

static void describe(gl_decision *d, const fold *f)
{
    gl_decision_add_node_ref(d, f->product);
    for (int s = 0; s < 2; s++) {
        const operand *o = &f->op[s];
        if (!o->src)
            continue;
        gl_decision_add_node_ref(d, o->src);
        bool now = gl_node_attr_int(f->product, trans_attrs[s], 0) == 0;
        gl_decision_add_number(d, trans_attrs[s], now);
        gl_decision_add_number(d, s ? "rank_b" : "rank_a", o->rank);
        /* Others reading the Transpose keep it. */
        size_t r = readers(o->src->outputs[0]);
        if (r > 1)
            gl_decision_add_number(d, s ? "readers_b" : "readers_a", (double)r);
        if (o->dq) {
            gl_decision_add_node_ref(d, o->dq);
            gl_decision_add_number(d, s ? "dq_axis_b" : "dq_axis_a", o->dq_axis);
        }
        for (size_t i = 0; i < o->n_params; i++)
            if (o->params[i].src)
                gl_decision_add_node_ref(d, o->params[i].src);
        if (o->n_params)
            gl_decision_add_number(d, s ? "params_b" : "params_a", (double)o->n_params);
    }
    if (f->product->graph->parent_node)
        gl_decision_add_text(d, "inside", f->product->graph->parent_node->name);
}

static gl_status fold_graph(gl_graph *g, gl_pass_ctx *ctx)
{
    gl_pt_ctx c = {g, ctx->model, gl_model_opset(ctx->model, "")};
    bool changed = false;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (!gl_pass_may_rewrite(ctx))
            break;
        fold f;
        if (!check_product(ctx, n, c.opset, &f))
            continue;
        char what[400] = "", into[64];
        size_t at = 0;
        for (int s = 0; s < 2; s++) {
            const operand *o = &f.op[s];
            if (o->src && at < sizeof(what))
                at += (size_t)snprintf(what + at, sizeof(what) - at, "%s%s '%s'%s%s%s%s",
                                       at ? " and " : "", o->src->op_type, o->src->name,
                                       o->dq ? " under DequantizeLinear '" : "",
                                       o->dq ? o->dq->name : "", o->dq ? "'" : "",
                                       o->n_params ? " with its scale branch" : "");
        }
        snprintf(into, sizeof(into), "%s%s", f.quant ? "graphlab." : "",
                 f.quant ? f.quant->op : f.to_gemm ? "Gemm" : f.fused ? "graphlab.FusedMatMul"
                                                                     : "Gemm");
        gl_decision *d = gl_pass_decide(ctx, "fold-transpose", GL_APPLIED,
                                        "%s folded into %s '%s' as %s%s%s", what,
                                        n->op_type, n->name, into,
                                        f.op[0].src ? " transA" : "",
                                        f.op[1].src ? " transB" : "");
        describe(d, &f);
        gl_decision_add_text(d, "product", into);
        if (gl_pass_vetoed(ctx, d))
            continue;
        changed = true;
        gl_status st = apply(&c, &f, d->id);
        if (st != GL_OK)
            return st;
    }
    gl_status st;
    if (changed && (st = gl_toposort(g, NULL)) != GL_OK)
        return st;
    return gl_pass_on_bodies(g, ctx, fold_graph);
}

gl_status gl_pass_fold_transpose(gl_graph *g, gl_pass_ctx *ctx) { return fold_graph(g, ctx); }

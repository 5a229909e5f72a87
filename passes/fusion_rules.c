/* fusion_rules.c — the one table of fusion rules.
 *
 * Four sources, one table:
 *  - seed 004's rows (FusedMatMulAdd, FusedFFN, FusedAttention, FusedSoftmaxMatMul,
 *    FusedLayerNormMatMul), with its maximum op counts;
 *  - ONNX Runtime's extended-level fusions that oneDNN can run: ConvActivationFusion,
 *    ConvAddActivationFusion, MatMulAddFusion (MatMul + Add of rank 2 becomes a Gemm),
 *    GemmActivationFusion, BiasGeluFusion, SkipLayerNormFusion;
 *  - what oneDNN 2.6 runs as one primitive beyond those: a convolution or matmul with a
 *    chain of eltwise and binary post-ops, a 1x1 convolution followed by a depthwise
 *    3x3 one (its depthwise post-op), and a batch normalization with one relu post-op
 *    (the only post-op its kernels take: Relu, or LeakyRelu's slope);
 *  - graphlab's own: a channel Concat read by a 1x1 convolution, which is the sum of 1x1
 *    convolutions of the Concat's inputs (the weights' input-channel columns of each):
 *    oneDNN runs one per input into one destination (sum post-op), and the Concat's copy
 *    goes (squeezenet's Fire modules); and ShuffleNet's channel shuffle, a channel
 *    Concat, Reshape, Transpose, Reshape and the channel Slices that read it, whose bytes
 *    oneDNN moves once, from each Concat input straight to its shuffled places in each
 *    Slice's output (a reorder per piece, strided destination): no Concat copy, no
 *    strided view made dense again.
 * The heads include graphlab's channels-last NhwcConv (layout runs first) and
 * graphlab.FusedMatMul (fold-transpose's Transpose-folded MatMul) when a model has them.
 */
#include "passes/fusion.h"
#include "exec/target.h"

#include <stdint.h>
#include <string.h>

#define CONVS "Conv ConvTranspose graphlab.NhwcConv"
#define MATMULS "MatMul graphlab.FusedMatMul"
#define GELUS "Gelu graphlab.Gelu graphlab.GeluTanh"
#define LAYERNORMS "LayerNormalization graphlab.LayerNormalization"

#define OPS(o, r) {GL_FU_OPS, (o), (r), 0}
#define OPSF(o, r, f) {GL_FU_OPS, (o), (r), (f)}
#define ACT(r) {GL_FU_ELTWISE, NULL, (r), 0}
#define POST(r) {GL_FU_POST, NULL, (r), 0}
#define BIN(o, r, f) {GL_FU_BINARY, (o), (r), (f)}

static const gl_fu_rule rules[] = {
    /* ONNX Runtime MatMulAddFusion: ahead of seed 004's FusedMatMulAdd, which takes
     * the same two nodes when they are not both rank 2. Float32 as ORT, and float64
     * beyond it (issue 22: graphlab's Gemm kernel computes it as MatMul then Add do). */
    {"matmul-add-gemm", "Gemm", "ONNX Runtime MatMulAddFusion",
     {OPSF("MatMul", GL_FU_ONE, GL_FU_RANK2), BIN("Add", GL_FU_ONE, GL_FU_RANK2)}, 2, 2,
     GL_FU_GEMM, "ai.onnx Gemm (oneDNN inner product or matmul with bias)"},
    {"matmul-add", "FusedMatMulAdd", "seed 004",
     {OPS(MATMULS, GL_FU_ONE), BIN("Add", GL_FU_ONE, 0)}, 2, 2, GL_FU_POST_OPS,
     "oneDNN matmul with a bias or a binary add post-op"},
    {"ffn", "FusedFFN", "seed 004",
     {OPS(MATMULS, GL_FU_ONE), BIN("Add", GL_FU_OPT, GL_FU_BIAS), OPS(GELUS, GL_FU_ONE),
      OPS(MATMULS, GL_FU_ONE), BIN("Add", GL_FU_OPT, GL_FU_BIAS)}, 5, 5, GL_FU_UNIT,
     "oneDNN matmul (bias, gelu post-op) then matmul (bias), sharing scratch memory"},
    {"attention", "FusedAttention", "seed 004",
     {BIN("Mul Div", GL_FU_OPT, GL_FU_SCALAR), OPS(MATMULS, GL_FU_ONE),
      BIN("Mul Div", GL_FU_OPT, GL_FU_SCALAR), BIN("Add", GL_FU_OPT, GL_FU_MASK),
      OPS("Softmax", GL_FU_ONE), OPS(MATMULS, GL_FU_ONE)}, 6, 6, GL_FU_UNIT,
     "oneDNN matmul (scale, mask post-ops), softmax, matmul, sharing scratch memory"},
    {"softmax-matmul", "FusedSoftmaxMatMul", "seed 004",
     {OPS("Softmax", GL_FU_ONE), OPS(MATMULS, GL_FU_ONE)}, 2, 2, GL_FU_UNIT,
     "oneDNN softmax then matmul"},
    /* The MatMul's bias Add and Gelu join it (a pre-LN transformer's projections, GPT-2's
     * c_attn and c_fc): the bias is the matmul's own argument, cheaper than an Add of
     * its own or a binary post-op (bench/README, session 37). */
    {"layernorm-matmul", "FusedLayerNormMatMul", "seed 004",
     {OPS(LAYERNORMS, GL_FU_ONE), OPS(MATMULS, GL_FU_ONE), BIN("Add", GL_FU_OPT, GL_FU_BIAS),
      OPS(GELUS, GL_FU_OPT)}, 4, 4, GL_FU_UNIT,
     "oneDNN layer normalization then matmul (bias, gelu post-op)"},
    {"conv-activation", NULL, "ONNX Runtime ConvActivationFusion",
     {OPS(CONVS, GL_FU_ONE), ACT(GL_FU_ONE)}, 2, 2, GL_FU_POST_OPS,
     "oneDNN convolution with an eltwise post-op"},
    {"conv-add-activation", NULL, "ONNX Runtime ConvAddActivationFusion",
     {OPS(CONVS, GL_FU_ONE), BIN("Add", GL_FU_ONE, 0), ACT(GL_FU_OPT)}, 3, 3,
     GL_FU_POST_OPS, "oneDNN convolution with sum (or binary add) and eltwise post-ops"},
    {"gemm-activation", NULL, "ONNX Runtime GemmActivationFusion",
     {OPS("Gemm", GL_FU_ONE), ACT(GL_FU_ONE)}, 2, 2, GL_FU_POST_OPS,
     "oneDNN inner product or matmul with an eltwise post-op"},
    {"bias-gelu", "FusedBiasGelu", "ONNX Runtime BiasGeluFusion",
     {BIN("Add", GL_FU_ONE, GL_FU_BIAS), OPS(GELUS, GL_FU_ONE)}, 2, 2, GL_FU_UNIT,
     "oneDNN binary add with a gelu post-op"},
    {"skip-layernorm", "FusedSkipLayerNorm", "ONNX Runtime SkipLayerNormFusion",
     {BIN("Add", GL_FU_ONE, 0), OPS(LAYERNORMS, GL_FU_ONE)}, 2, 2, GL_FU_UNIT,
     "oneDNN binary add then layer normalization"},
    {"conv-post-ops", NULL, "oneDNN 2.6 convolution post-ops",
     {OPS(CONVS, GL_FU_ONE), POST(GL_FU_PLUS)}, 2, 4, GL_FU_POST_OPS,
     "oneDNN convolution with eltwise and binary/sum post-ops"},
    {"matmul-post-ops", NULL, "oneDNN 2.6 matmul post-ops",
     {OPS(MATMULS " Gemm", GL_FU_ONE), POST(GL_FU_PLUS)}, 2, 4, GL_FU_POST_OPS,
     "oneDNN matmul with eltwise and binary post-ops"},
    {"concat-conv1x1", NULL, "graphlab: a 1x1 convolution of a channel Concat is the sum of "
     "1x1 convolutions of its inputs",
     {OPSF("Concat", GL_FU_ONE, GL_FU_CAT_C), OPSF("Conv", GL_FU_ONE, GL_FU_SPLIT_K),
      ACT(GL_FU_OPT)}, 3, 3, GL_FU_POST_OPS,
     "oneDNN 1x1 convolutions, one per Concat input, into one destination (sum and "
     "eltwise post-ops): no Concat copy"},
    {"channel-shuffle", "FusedChannelShuffle", "graphlab: ShuffleNet's channel shuffle "
     "moved once",
     {OPSF("Concat", GL_FU_ONE, GL_FU_CAT_C), OPSF("Reshape", GL_FU_ONE, GL_FU_SHUFFLE),
      OPSF("Transpose", GL_FU_ONE, GL_FU_SHUFFLE), OPSF("Reshape", GL_FU_ONE, GL_FU_SHUFFLE),
      OPSF("Slice", GL_FU_OPT, GL_FU_SHUFFLE | GL_FU_FANOUT)}, 5, 8, GL_FU_UNIT,
     "oneDNN reorders, one per (Concat input, output) piece, each writing its channels "
     "at their shuffled places: no Concat copy, no dense copy of a view"},
    /* DenseNet's pre-activation BatchNormalization -> Relu -> Conv: the BN cannot fold
     * into the Conv across the Relu, but its Relu can join the BN's own primitive (the
     * target takes a Relu or a LeakyRelu there, and no other activation). */
    {"batchnorm-relu", NULL, "oneDNN 2.6 batch normalization (fuse_norm_relu, inference)",
     {OPSF("BatchNormalization", GL_FU_ONE, GL_FU_INFER), ACT(GL_FU_ONE)},
     2, 2, GL_FU_POST_OPS,
     "oneDNN batch normalization (given statistics) with its one relu post-op"},
    {"conv-depthwise", NULL, "oneDNN 2.6 depthwise post-op (dw_k3s1p1 / dw_k3s2p1)",
     {OPSF("Conv", GL_FU_ONE, GL_FU_1X1), ACT(GL_FU_STAR), OPSF("Conv", GL_FU_ONE, GL_FU_DW),
      POST(GL_FU_STAR)}, 4, 4, GL_FU_UNIT,
     "a 1x1 convolution then a depthwise 3x3 one with their post-ops, one oneDNN "
     "primitive each (oneDNN 2.6's own depthwise post-op runs on its reference kernel)"},
};

const gl_fu_rule *gl_fu_rules(size_t *count)
{
    *count = GL_ARRAY_LEN(rules);
    return rules;
}

/* Which followers become post-ops is the target's knowledge (exec/target.h: the
 * backend's own eltwise and binary tables), not a list of the pass's. The rules ask
 * whether n can be a post-op at all; its parameters and opset are checked with the
 * candidate (fusion.c). */
#define ANY_OPSET INT64_MAX

int gl_fu_eltwise_post_ops(const gl_node *n)
{
    return gl_target_default()->eltwise_posts(n, ANY_OPSET);
}

bool gl_fu_is_binary(const gl_node *n)
{
    return gl_target_default()->binary_post(n, NULL);
}

/* The words of an op list, one at a time: "Op" (ai.onnx) or "domain.Op" (the domain is
 * what comes before the last dot). False at the end of the list. */
typedef struct op_word {
    const char *domain, *op; /* into the list (not terminated) */
    size_t domain_len, op_len;
} op_word;

static bool next_word(const char **p, op_word *w)
{
    const char *s = *p;
    while (s && *s == ' ')
        s++;
    if (!s || !*s)
        return false;
    const char *end = s, *dot = NULL;
    for (; *end && *end != ' '; end++)
        if (*end == '.')
            dot = end;
    size_t len = (size_t)(end - s);
    w->domain = s;
    w->domain_len = dot ? (size_t)(dot - s) : 0;
    /* ai.onnx is the default domain's other name (gl_domain_canonical) */
    if (w->domain_len == 7 && !memcmp(s, "ai.onnx", 7))
        w->domain_len = 0;
    w->op = dot ? dot + 1 : s;
    w->op_len = (size_t)(s + len - w->op);
    *p = s + len;
    return true;
}

static bool word_is(const op_word *w, const char *domain, const char *op)
{
    return w->op_len && op[0] == w->op[0] && !strncmp(op, w->op, w->op_len) &&
           op[w->op_len] == '\0' &&
           !strncmp(domain, w->domain, w->domain_len) && domain[w->domain_len] == '\0';
}

/* `list` holds n's op. Compared in place, word by word: the pass asks it of every node
 * for every step it tries (no copies, no parsing beyond the spaces and the dot). */
static bool in_list(const char *list, const gl_node *n)
{
    op_word w;
    while (next_word(&list, &w))
        if (word_is(&w, n->domain, n->op_type))
            return true;
    return false;
}

bool gl_fu_step_has(const gl_fu_step *s, const gl_node *n)
{
    if (!n || !n->n_outputs || !n->outputs[0])
        return false;
    switch (s->cls) {
    case GL_FU_OPS: return in_list(s->ops, n);
    case GL_FU_ELTWISE: return gl_fu_eltwise_post_ops(n) >= 0;
    case GL_FU_BINARY: return gl_fu_is_binary(n) && (!s->ops || in_list(s->ops, n));
    case GL_FU_POST: return gl_fu_eltwise_post_ops(n) >= 0 || gl_fu_is_binary(n);
    }
    return false;
}

/* The steps that can take a rule's head: the first step that must be there, and the
 * optional ones before it (next_step in fusion.c tries them in that order). */
static size_t head_steps(const gl_fu_rule *r)
{
    size_t q = 0;
    while (q + 1 < r->n_steps && r->steps[q].rep != GL_FU_ONE && r->steps[q].rep != GL_FU_PLUS)
        q++;
    return q + 1;
}

_Static_assert(GL_ARRAY_LEN(rules) <= 64, "gl_fu_heads keeps one bit per rule");

void gl_fu_heads_init(gl_fu_heads *h)
{
    memset(h, 0, sizeof(*h));
    for (size_t r = 0; r < GL_ARRAY_LEN(rules); r++) {
        for (size_t q = 0; q < head_steps(&rules[r]); q++) {
            const gl_fu_step *s = &rules[r].steps[q];
            if (!(s->cls == GL_FU_OPS || (s->cls == GL_FU_BINARY && s->ops))) {
                h->any |= UINT64_C(1) << r; /* a class of the target's: any op may be in it */
                continue;
            }
            const char *p = s->ops;
            op_word w;
            while (next_word(&p, &w)) {
                size_t k = 0;
                while (k < h->n && !(h->keys[k].op_len == w.op_len &&
                                     h->keys[k].domain_len == w.domain_len &&
                                     !memcmp(h->keys[k].op, w.op, w.op_len) &&
                                     !memcmp(h->keys[k].domain, w.domain, w.domain_len)))
                    k++;
                if (k == GL_ARRAY_LEN(h->keys)) { /* full: the rule is offered every node */
                    h->any |= UINT64_C(1) << r;
                    continue;
                }
                if (k == h->n)
                    h->keys[h->n++] = (gl_fu_head_key){w.domain, w.op, w.domain_len, w.op_len, 0};
                h->keys[k].rules |= UINT64_C(1) << r;
            }
        }
    }
}

uint64_t gl_fu_heads_of(const gl_fu_heads *h, const gl_node *n)
{
    uint64_t m = h->any;
    for (size_t k = 0; k < h->n; k++) {
        const gl_fu_head_key *e = &h->keys[k];
        if (n->op_type[0] == e->op[0] &&
            word_is(&(op_word){e->domain, e->op, e->domain_len, e->op_len}, n->domain,
                    n->op_type))
            m |= e->rules;
    }
    return m;
}

/* dn_target.c — the oneDNN backend's answers to the fusion pass (exec/target.h), read
 * from the same tables its kernels run from: the eltwise table (dn_eltwise.c) says which
 * activations become post-ops and how many, the binary table (dn_binary.c) which binary
 * ops do. What the tables cannot say — a head whose post-ops run slowly under a fast
 * name — is written here with the measurement behind it.
 */
#include "exec/dnnl/dn.h"
#include "exec/target.h"

#include <string.h>

_Static_assert(GL_TARGET_NAME_LEN == 32, "dn_eltwise_names writes names of 32 bytes");

#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

static int eltwise_posts(const gl_node *n, int64_t opset)
{
    return dn_eltwise_steps(n, opset);
}

static bool eltwise_params(const gl_node *n, int64_t opset, const gl_tensor *const *params,
                           size_t n_params, const char **why)
{
    bool fixed[3] = {true, true, true};
    const gl_tensor *in[3] = {NULL, NULL, NULL};
    for (size_t i = 1; i < n_params && i < 3; i++)
        in[i] = params[i];
    for (size_t i = 1; i < n->n_inputs; i++)
        if (n->inputs[i] && (i >= 3 || i >= n_params || !params[i])) {
            *why = "a parameter input that is not a constant (oneDNN's post-ops take "
                   "fixed parameters)";
            return false;
        }
    dn_post post[2];
    size_t n_post = 0;
    const char *w = NULL;
    if (dn_eltwise_posts(n, opset, in, fixed, n->n_inputs ? n->n_inputs : 1, post, &n_post,
                         &w))
        return true;
    *why = w ? w : "no eltwise post-op";
    return false;
}

static bool binary_post(const gl_node *n, bool *commutes)
{
    bool c = false;
    bool is = !*n->domain && n->n_inputs == 2 && dn_binary_alg(n->op_type, &c) != 0;
    if (commutes)
        *commutes = c;
    return is;
}

static const char *head_post_ops_refusal(const gl_node *head, const gl_node *member,
                                         int64_t opset, bool binary, bool *slow)
{
    *slow = false;
    /* Measured on oneDNN 2.6.3 (AVX-512): its f32 deconvolution reports
     * jit:avx512_core and runs every post-op in a per-element reference loop; an OCR
     * detector's ConvTranspose + Add took 36.7 ms fused against 0.49 ms as two
     * primitives. */
    *slow = !*head->domain && strcmp(head->op_type, "ConvTranspose") == 0;
    if (*slow)
        return "oneDNN 2.6's f32 deconvolution applies post-ops in a per-element "
               "reference loop under its jit name (36.7 ms fused against 0.49 ms unfused "
               "measured on an OCR head)";
    if (!binary) {
        const gl_tensor *in[3] = {NULL, NULL, NULL};
        bool fixed[3] = {true, true, true};
        dn_post post[2];
        size_t n_post = 0;
        const char *w = NULL, *slow_why = NULL;
        if (dn_eltwise_posts(member, opset, in, fixed, 1, post, &n_post, &w))
            for (size_t i = 0; i < n_post && !slow_why; i++)
                slow_why = dn_eltwise_post_slow(&post[i]);
        if (slow_why) {
            *slow = true;
            return slow_why;
        }
    }
    return dn_fused_head_refusal(head, member, opset, binary);
}

static const gl_target onednn = {
    .name = "oneDNN " TEXT(DNNL_VERSION_MAJOR) "." TEXT(DNNL_VERSION_MINOR),
    .max_post_ops = 32, /* dnnl_post_ops_append_* fails past this many */
    .max_concat_parts = DN_CAT_MAX_PARTS,
    .dw_post = {.kernel = 3, .pad = 1, .min_stride = 1, .max_stride = 2},
    .eltwise_posts = eltwise_posts,
    .eltwise_params = eltwise_params,
    .binary_post = binary_post,
    .eltwise_names = dn_eltwise_names,
    .binary_names = dn_binary_names,
    .head_post_ops_refusal = head_post_ops_refusal,
};

const gl_target *gl_target_default(void) { return &onednn; }

/* backend_ref.c — the reference backend: the registry's plain-C kernels, the ground
 * truth every other backend is compared with. */
#include "exec/exec.h"

static bool ref_claims(void *ctx, const gl_model *m, const gl_node *n, const gl_function *fn,
                       char *why, size_t why_len)
{
    if (fn)
        return false; /* a function call runs as its body */
    const gl_op_def *def = gl_op_for_node(m, n);
    return def && def->kernel;
}

/* The executor passes the opset it resolved (a function body uses the function's
 * imports), so the entry is looked up with k->opset, once per node: the state slot
 * keeps it. */
static gl_status ref_run(gl_kernel_ctx *k, void **state)
{
    const gl_op_def *def = *state;
    if (!def) {
        def = gl_op_lookup(k->node->domain, k->node->op_type, k->opset);
        if (!def || !def->kernel)
            return gl_fail(GL_ERR_UNSUPPORTED, "%s: no reference kernel at opset %lld", k->where,
                           (long long)k->opset);
        *state = (void *)def; /* read-only table entry; the slot is untyped */
    }
    return def->kernel(k);
}


static const gl_backend ref_backend = {
    .name = "ref",
    .claims = ref_claims,
    .run = ref_run,
    .release = NULL,
};

const gl_backend *gl_backend_ref(void)
{
    return &ref_backend;
}

/* backend_dnnl.c — the oneDNN backend: which nodes it claims, how they run, what the
 * plan shows of them. The machinery is in src/exec/dnnl/ (dn.h tells the story); each op
 * family has its file and its table, gathered here.
 *
 * A claim looks at the IR only: the op (a row of one of the tables, at the node's
 * opset: dn_op_find) and operands not known to be anything but float32 of a rank the row handles
 * (unknown types are claimed: `graphlab run` runs no pass by default, so intermediate
 * types are often unknown). Shapes are settled at the first run, when a row may still
 * send the node to the reference kernel (and the plan says why).
 *
 * Threads: oneDNN's CPU runtime here is OpenMP. --threads N calls omp_set_num_threads(N)
 * before the plan builds its primitives; it is process-wide, and oneDNN expects a
 * primitive to run under the thread count it was built with (scratchpads are sized per
 * thread): live plans with different counts are unsupported. A primitive with less work
 * than a fork and join of the threads costs is made and run on one thread (dn_node.c),
 * and the plan's note says so.
 *
 * The op tables are gathered in dnnl/dn_ops.c (dn_op_find), below this file: the dn_*
 * files look ops up there and never call back up into the backend.
 */
#include "exec/dnnl/dn.h"
#include "ir/calls.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>


static bool dn_claims(void *ctx, const gl_model *m, const gl_node *n, const gl_function *fn,
                      char *why, size_t why_len)
{
    if (fn)
        return dn_fused_claims(ctx, m, n, fn, why, why_len);
    if (n->n_outputs < 1)
        return false;
    /* The fallback exists: the plan offers only nodes with a reference kernel (looking
     * it up again here was a fifth of the instructions of planning a 100k-node chain). */
    int64_t opset = gl_model_opset(m, n->domain);
    const dn_op *row = dn_op_find(n->domain, n->op_type, opset ? opset : 1);
    if (!row) {
        snprintf(why, why_len, "no oneDNN primitive for %s", n->op_type);
        return false;
    }
    if (!n->outputs[0] && !dn_op_all_outputs_optional(row))
        return false;
    return row->claim(m, n, why, why_len);
}

/* --set dnnl.fault=NAME: 1.0 added to every element of the node's first output, made
 * plain first (a blocked layout has padding that must stay zero) and private (the bytes
 * may be a lent buffer or shared with an input). */
static gl_status inject_fault(dn_ctx *c, gl_kernel_ctx *k)
{
    gl_tensor *t = k->out[0];
    if (!t || t->dtype != GL_DT_FLOAT)
        return gl_fail(GL_ERR_INPUT, "%s: --set dnnl.fault: its first output is not float",
                       k->where);
    if (t->layout) {
        gl_tensor *plain = dn_to_plain(c, t, NULL);
        if (!plain)
            return GL_ERR_INTERNAL;
        gl_tensor_free(t);
        k->out[0] = t = plain;
    }
    float *x = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < t->count; i++)
        x[i] += 1.0f;
    return GL_OK;
}

/* Whether plan c sleeps after NAME: always, or with dnnl.delay=NAME@N only in the first N
 * plans of the process that reach NAME, a slowdown that does not repeat when timed again,
 * the way a burst of load looks to `bisect --slower` (tests/bisect.sh). */
static bool delays(dn_ctx *c)
{
    static long plans_delayed; /* test-only, and plans run one at a time */
    if (!c->delay_plans)
        return true;
    if (c->delay_state == 0)
        c->delay_state = ++plans_delayed <= c->delay_plans ? 1 : -1;
    return c->delay_state > 0;
}

/* The test-only injections of gl_exec_options (dnnl.fault, dnnl.delay) after a run. */
static gl_status inject(dn_ctx *c, gl_kernel_ctx *k, gl_status st)
{
    const char *name = k->node->name;
    if (st != GL_OK || !name)
        return st;
    if (c->delay && strcmp(c->delay, name) == 0 && delays(c))
        nanosleep(&(struct timespec){0, GL_DNNL_DELAY_MS * 1000000L}, NULL);
    if (c->fault && strcmp(c->fault, name) == 0 && k->n_outputs > 0)
        return inject_fault(c, k);
    return GL_OK;
}

static gl_status dn_run_node(gl_kernel_ctx *k, void **state)
{
    const dn_op *op = *state ? NULL : dn_op_find(k->node->domain, k->node->op_type, k->opset);
    if (*state ? dn_fused_state(*state) : !op && gl_called_function(k->model, k->node))
        return dn_fused_run(k->backend_ctx, k, state);
    dn_node *s = *state;
    if (!s) {
        if (!op)
            return gl_fail(GL_ERR_INTERNAL, "%s: the oneDNN backend does not run %s", k->where,
                           k->node->op_type);
        s = gl_xcalloc(1, sizeof(*s));
        dn_node_init(s, op);
        *state = s;
    }
    return dn_node_run(k->backend_ctx, k, s);
}

static gl_status dn_run(gl_kernel_ctx *k, void **state)
{
    return inject(k->backend_ctx, k, dn_run_node(k, state));
}

static void dn_release(void *state)
{
    if (dn_fused_state(state))
        dn_fused_release(state);
    else if (state) {
        dn_node_clear(state);
        free(state);
    }
}

static void dn_scratch(void *ctx, void *state, gl_scratch_fn fn, void *arg)
{
    if (!state) {
        dn_places_scratch(ctx, fn, arg);
        dn_unit_scratch_scratch(ctx, fn, arg);
    }
    else if (dn_fused_state(state))
        dn_fused_scratch(state, fn, arg);
    else
        dn_node_scratch(state, fn, arg);
}

static void layouts_list(char *buf, size_t len, size_t n, const dn_key *key, const dn_in *ins,
                         size_t n_in)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && k + 1 < len; i++) {
        const char *name = !key[i].present ? "-" : key[i].layout ? key[i].layout->name : "plain";
        char conv[40] = "";
        for (size_t j = 0; j < n_in; j++)
            if (ins[j].input == i && ins[j].convert) {
                char to[24];
                dn_md_name(&ins[j].want, to, sizeof(to));
                snprintf(conv, sizeof(conv), ">%s%s", to, ins[j].constant ? "(once)" : "");
            }
        k += (size_t)snprintf(buf + k, len - k, "%s%s%s", i ? "," : "", name, conv);
    }
}

static void out_layouts_list(char *buf, size_t len, const dn_out *out, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && k + 1 < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "," : "",
                              out[i].layout ? out[i].layout->name : "plain");
}

/* The texts are interned in the plan's context: a chain of 100k nodes that all say
 * "ref" and give the same reason holds each text once. */
static void dn_describe(void *ctx, const void *state, gl_plan_info *info)
{
    dn_ctx *c = ctx;
    const dn_node *s = state;
    if (!s || !s->built || info->generation == s->generation)
        return;
    info->generation = s->generation;
    info->impl = s->impl ? s->impl : ""; /* interned already (dn_set_impl) */
    info->note = s->note ? s->note : "";
    info->builds = s->builds;
    info->const_reorders = s->const_reorders;
    if (s->fallback) {
        info->in_layouts = info->out_layouts = "";
        return;
    }
    char layouts[sizeof((gl_backend_info){0}.in_layouts)];
    layouts_list(layouts, sizeof(layouts), s->n_key, s->key, s->in, s->n_in);
    info->in_layouts = gl_text_intern(&c->texts, layouts);
    out_layouts_list(layouts, sizeof((gl_backend_info){0}.out_layouts), s->out, s->n_out);
    info->out_layouts = gl_text_intern(&c->texts, layouts);
}

static const gl_backend dnnl_backend = {
    .name = "dnnl",
    .ctx_create = dn_ctx_create,
    .ctx_free = dn_ctx_free,
    .claims = dn_claims,
    .run = dn_run,
    .release = dn_release,
    .describe = dn_describe,
    .to_plain = dn_to_plain,
    .summary = dn_ctx_summary,
    .scratch = dn_scratch,
};

const gl_backend *gl_backend_dnnl(void)
{
    return &dnnl_backend;
}

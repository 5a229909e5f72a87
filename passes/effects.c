/* effects.c — what passes may assume about a node: pure, random, or unknown.
 *
 * cse merges only pure nodes, dce drops pure and random ones, constant folding evaluates
 * only pure ones. An op of ai.onnx or ai.onnx.ml is known from the op registry; a call of
 * a model-local function is what its body is; a node holding subgraphs is also what the
 * nodes inside are.
 */
#include "passes/passes.h"

#include "ir/calls.h"
#include "ops/ops.h"

#include <string.h>

/* Domains whose every op is free of side effects. */
static const char *const pure_domains[] = {"", "ai.onnx.ml"};

/* Ops that are random only when an optional input is given: Dropout draws its mask in
 * training mode, which the training_mode input (slot 2) switches on. Ops that are
 * always random carry GL_OP_RANDOM in the op registry. */
static const struct {
    const char *op;
    size_t input;
} random_when_given[] = {
    {"Dropout", 2},
};

/* Calls are followed into their function's body under the shared bound (ir/calls.h):
 * recursion, or a fan-out of calls, counts as unknown. The question is asked of many
 * nodes, so each asking may expand only this many body nodes; a bigger function is
 * unknown too (kept, not merged, not folded: safe). */
#define MAX_EFFECTS_NODES 4096

bool gl_domain_is_pure(const char *domain)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(pure_domains); i++)
        if (strcmp(domain ? domain : "", pure_domains[i]) == 0)
            return true;
    return false;
}

static bool is_random(const gl_node *n)
{
    const gl_model *m = n->graph ? n->graph->model : NULL;
    const gl_op_def *def = m ? gl_op_for_node(m, n) : NULL;
    if (def && (def->flags & GL_OP_RANDOM))
        return true;
    for (size_t i = 0; i < GL_ARRAY_LEN(random_when_given); i++) {
        size_t in = random_when_given[i].input;
        if (gl_node_is(n, random_when_given[i].op))
            return in < n->n_inputs && n->inputs[in];
    }
    return false;
}

static gl_op_effects max_effects(gl_op_effects a, gl_op_effects b) { return a > b ? a : b; }

static gl_op_effects node_effects(const gl_node *n, gl_expansion *calls);

static gl_op_effects graph_effects(const gl_graph *g, gl_expansion *calls)
{
    gl_op_effects e = GL_EFFECT_PURE;
    gl_node *n;
    gl_foreach_node(g, i, n)
        e = max_effects(e, node_effects(n, calls));
    return e;
}

static gl_op_effects node_effects(const gl_node *n, gl_expansion *calls)
{
    gl_op_effects e = GL_EFFECT_UNKNOWN;
    const gl_function *f;
    if (gl_domain_is_pure(n->domain)) {
        e = is_random(n) ? GL_EFFECT_RANDOM : GL_EFFECT_PURE;
    } else if ((f = gl_called_function(n->graph ? n->graph->model : NULL, n)) &&
               gl_expansion_enter(calls, f, NULL) == GL_OK) {
        e = graph_effects(f->body, calls);
        gl_expansion_leave(calls);
    }
    for (size_t a = 0; a < n->n_attrs && e != GL_EFFECT_UNKNOWN; a++) {
        gl_graph *const *subs;
        size_t n_subs = gl_attr_subgraphs(&n->attrs[a], &subs);
        for (size_t s = 0; s < n_subs; s++)
            if (subs[s])
                e = max_effects(e, graph_effects(subs[s], calls));
    }
    return e;
}

gl_op_effects gl_node_effects(const gl_node *n)
{
    gl_expansion calls = {.max_nodes = MAX_EFFECTS_NODES};
    return node_effects(n, &calls);
}

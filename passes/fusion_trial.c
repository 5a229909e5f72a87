/* fusion_trial.c — a candidate group alone, as a model of its own, so that the target can
 * be asked about it before the pass edits anything: how the backend would run it
 * (gl_target_probe) and, under fusion.measure=1, whether it runs faster fused than as its
 * members (gl_target_time).
 *
 * The model holds copies of the members (attributes and all) reading the group's inputs:
 * constants stay initializers (the bytes shared), every other input becomes a graph input
 * of its IR type, each symbolic dim fed as 1 by the random inputs. Its outputs are the
 * group's. A value whose type the IR does not know fully (an unknown dtype or dim) makes
 * no trial: the caller says so and trusts the rule table.
 */
#include "passes/fusion.h"

#include "util/hash.h"

#include <stdio.h>
#include <string.h>

/* The trial graph's value for v, a value the members read: a member's output copied
 * already, else a new initializer or graph input. NULL (why set) when v's type is not
 * known well enough to feed it. */
static gl_value *outside_value(gl_graph *g, const gl_value *v, char *why, size_t len)
{
    gl_value *t = gl_find_value(g, v->name);
    if (t)
        return t;
    if (gl_value_is_constant(v))
        return gl_add_initializer(g, v->name, gl_tensor_share(v->init));
    const gl_shape *s = &v->type.shape;
    bool known = v->type.kind == GL_TYPE_TENSOR && v->type.dtype != GL_DT_UNDEFINED &&
                 s->rank != GL_RANK_UNKNOWN;
    for (int i = 0; known && i < s->rank; i++)
        known = s->dims[i].value >= 0 || s->dims[i].sym;
    if (!known) {
        snprintf(why, len, "the type of '%s' is not known", v->name);
        return NULL;
    }
    t = gl_add_value(g, v->name);
    gl_type_copy(&t->type, &v->type);
    gl_graph_add_input(g, t);
    return t;
}

gl_model *gl_fu_trial_model(const gl_model *m, gl_node *const *nodes, size_t n,
                            gl_node *const *out_owner, const size_t *out_index, size_t n_out,
                            uint32_t *copy_ids, char *why, size_t len)
{
    gl_model *t = gl_model_new();
    t->ir_version = m->ir_version;
    for (size_t i = 0; i < m->n_opsets; i++)
        gl_model_set_opset(t, m->opsets[i].domain, m->opsets[i].version);
    gl_graph *g = t->graph = gl_graph_new(t, NULL, "trial");
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const gl_node *nd = nodes[i];
        gl_value *ins[GL_FU_MAX_INPUTS] = {NULL};
        const char *outs[GL_FU_MAX_OUTPUTS] = {NULL};
        ok = nd->n_inputs <= GL_FU_MAX_INPUTS && nd->n_outputs <= GL_FU_MAX_OUTPUTS;
        for (size_t j = 0; j < nd->n_inputs && ok; j++)
            ok = !nd->inputs[j] || (ins[j] = outside_value(g, nd->inputs[j], why, len));
        for (size_t o = 0; o < nd->n_outputs && ok; o++)
            outs[o] = nd->outputs[o] ? nd->outputs[o]->name : NULL;
        gl_node *copy = ok ? gl_add_node_named(g, nd->op_type, nd->domain, nd->name, ins,
                                               nd->n_inputs, outs, nd->n_outputs)
                           : NULL;
        if (ok && !copy) {
            snprintf(why, len, "a copy of '%s': %s", nd->name, gl_error_message());
            gl_error_clear();
        }
        ok = copy != NULL;
        if (ok) {
            copy_ids[i] = copy->id;
            gl_node_copy_attrs(copy, nd);
            for (size_t o = 0; o < nd->n_outputs; o++)
                if (nd->outputs[o])
                    gl_type_copy(&copy->outputs[o]->type, &nd->outputs[o]->type);
        }
    }
    for (size_t o = 0; o < n_out && ok; o++) {
        gl_value *v = gl_find_value(g, out_owner[o]->outputs[out_index[o]]->name);
        ok = v != NULL;
        if (ok)
            gl_graph_add_output(g, v);
    }
    if (!ok) {
        gl_model_free(t);
        return NULL;
    }
    return t;
}

/* Where value v of trial graph g comes from, by position: graph input i, initializer i, or
 * output o of node j. Names are left out: two layers of a network differ in names only. */
static uint64_t value_place(const gl_graph *g, const gl_value *v)
{
    if (!v)
        return UINT64_MAX;
    if (v->producer)
        return ((uint64_t)v->producer->index << 8 | (uint64_t)v->producer_slot) << 2 | 1;
    for (size_t i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == v)
            return (uint64_t)i << 2 | 2;
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i] == v)
            return (uint64_t)i << 2 | 3;
    return UINT64_MAX - 1;
}

/* A parameter (Clip's bounds, Pow's exponent) changes what the target says; a weight's
 * values do not. */
#define SIGNATURE_BYTES_UP_TO 1

uint64_t gl_fu_trial_signature(const gl_model *t)
{
    const gl_graph *g = t->graph;
    uint64_t h = GL_FNV_OFFSET;
#define MIX(x) (h = gl_fnv1a(h, &(uint64_t){(uint64_t)(x)}, sizeof(uint64_t)))
    for (size_t i = 0; i < t->n_opsets; i++) {
        /* imported once the first group is made: not the trial's business */
        if (strcmp(t->opsets[i].domain, GL_FUSED_DOMAIN) == 0)
            continue;
        h = gl_fnv1a(h, t->opsets[i].domain, strlen(t->opsets[i].domain));
        MIX(t->opsets[i].version);
    }
    MIX(g->n_inputs);
    for (size_t i = 0; i < g->n_inputs; i++)
        MIX(gl_type_fingerprint(&g->inputs[i]->type));
    MIX(g->n_inits);
    for (size_t i = 0; i < g->n_inits; i++) {
        const gl_tensor *x = g->inits[i]->init;
        MIX(x->dtype);
        MIX(x->rank);
        for (int d = 0; d < x->rank; d++)
            MIX(x->dims[d]);
        if (x->count <= SIGNATURE_BYTES_UP_TO)
            MIX(gl_tensor_hash(x));
    }
    const gl_node *n;
    gl_foreach_node(g, j, n) {
        h = gl_fnv1a(h, n->op_type, strlen(n->op_type));
        h = gl_fnv1a(h, n->domain, strlen(n->domain));
        MIX(n->n_inputs);
        for (size_t k = 0; k < n->n_inputs; k++)
            MIX(value_place(g, n->inputs[k]));
        MIX(n->n_outputs);
        for (size_t k = 0; k < n->n_outputs; k++)
            MIX(n->outputs[k] ? gl_type_fingerprint(&n->outputs[k]->type) : 0);
        MIX(gl_node_attrs_fingerprint(n));
    }
    MIX(g->n_outputs);
    for (size_t i = 0; i < g->n_outputs; i++)
        MIX(value_place(g, g->outputs[i]));
#undef MIX
    return gl_mix64(h);
}

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
                            char *why, size_t len)
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

/* group.c — gl_group_make: see group.h. */
#include "passes/group.h"

#include "util/status.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool is_member(const gl_group_spec *s, const gl_node *n)
{
    for (size_t i = 0; i < s->n_members; i++)
        if (s->members[i] == n)
            return true;
    return false;
}

/* The values the members read from outside the group, each once, in first-read order;
 * returns how many (ext has room for every input of every member). */
static size_t external_inputs(const gl_group_spec *s, gl_value **ext)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_members; i++) {
        const gl_node *nd = s->members[i];
        for (size_t j = 0; j < nd->n_inputs; j++) {
            gl_value *v = nd->inputs[j];
            bool seen = !v || (v->producer && is_member(s, v->producer));
            for (size_t e = 0; e < n && !seen; e++)
                seen = ext[e] == v;
            if (!seen)
                ext[n++] = v;
        }
    }
    return n;
}

/* A map from the graph's values to the body's, as the body is built. */
typedef struct value_map {
    gl_value **from, **to;
    size_t n;
} value_map;

static gl_value *mapped(const value_map *vm, const gl_value *v)
{
    for (size_t e = 0; v && e < vm->n; e++)
        if (vm->from[e] == v)
            return vm->to[e];
    return NULL;
}

static gl_status build_body(gl_model *m, const gl_group_spec *s, gl_function *f,
                            gl_value *const *ext, size_t n_ext, value_map *vm)
{
    gl_graph *b = f->body;
    bool uses_graphlab = false;
    for (size_t e = 0; e < n_ext; e++) {
        gl_value *bv = gl_add_value(b, ext[e]->name);
        gl_graph_add_input(b, bv);
        vm->from[vm->n] = ext[e];
        vm->to[vm->n++] = bv;
    }
    for (size_t i = 0; i < s->n_members; i++) {
        const gl_node *nd = s->members[i];
        gl_value **ins = gl_xcalloc(nd->n_inputs + 1, sizeof(*ins));
        const char **outs = gl_xcalloc(nd->n_outputs + 1, sizeof(*outs));
        for (size_t j = 0; j < nd->n_inputs; j++)
            ins[j] = mapped(vm, nd->inputs[j]);
        for (size_t o = 0; o < nd->n_outputs; o++)
            outs[o] = nd->outputs[o] ? nd->outputs[o]->name : NULL;
        gl_node *bn = gl_add_node_named(b, nd->op_type, nd->domain, nd->name, ins,
                                        nd->n_inputs, outs, nd->n_outputs);
        free(ins);
        free(outs);
        if (!bn) {
            gl_error_prefix("group: body of %s", f->name);
            return GL_ERR_INTERNAL;
        }
        gl_node_copy_attrs(bn, nd);
        for (size_t o = 0; o < nd->n_outputs; o++) {
            vm->from[vm->n] = nd->outputs[o];
            vm->to[vm->n++] = bn->outputs[o];
        }
        uses_graphlab |= !strcmp(nd->domain, "graphlab");
    }
    size_t n_imports = 1 + uses_graphlab;
    f->opsets = gl_xcalloc(n_imports, sizeof(gl_opset));
    f->opsets[0] = (gl_opset){gl_xstrdup(""), gl_model_opset(m, "")};
    if (uses_graphlab) {
        int64_t v = gl_model_opset(m, "graphlab");
        f->opsets[1] = (gl_opset){gl_xstrdup("graphlab"), v ? v : 1};
    }
    f->n_opsets = n_imports;
    return GL_OK;
}

static bool outputs_unread(const gl_node *n)
{
    for (size_t o = 0; o < n->n_outputs; o++)
        if (n->outputs[o] && (n->outputs[o]->n_uses || n->outputs[o]->n_output_refs))
            return false;
    return true;
}

/* Remove the members nothing reads any more, readers first. */
static gl_status remove_members(gl_graph *g, const gl_group_spec *s)
{
    for (size_t i = s->n_members; i-- > 0;) {
        if (!outputs_unread(s->members[i]))
            continue;
        gl_status st = gl_remove_node(g, s->members[i]);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

gl_status gl_group_make(gl_model *m, gl_graph *g, const gl_group_spec *s, gl_node **call_out)
{
    size_t cap = 0;
    for (size_t i = 0; i < s->n_members; i++)
        cap += s->members[i]->n_inputs + s->members[i]->n_outputs;
    gl_value **ext = gl_xcalloc(cap + 1, sizeof(*ext));
    value_map vm = {gl_xcalloc(cap + 1, sizeof(gl_value *)), gl_xcalloc(cap + 1, sizeof(gl_value *)), 0};
    size_t n_ext = external_inputs(s, ext);
    gl_status st = GL_OK;
    gl_node *call = NULL;
    if (!gl_model_opset(m, GL_FUSED_DOMAIN))
        gl_model_set_opset(m, GL_FUSED_DOMAIN, 1);
    if (m->ir_version < 8)
        m->ir_version = 8; /* ModelProto.functions */
    gl_function *f = gl_model_add_function(m, GL_FUSED_DOMAIN, s->fname);
    if (!f) {
        st = gl_fail(GL_ERR_INTERNAL, "group: function %s exists", s->fname);
        goto out;
    }
    f->doc_string = gl_xstrdup(s->doc ? s->doc : "");
    char *name = gl_unique_node_name(g, s->fname);
    call = gl_add_node(g, s->fname, GL_FUSED_DOMAIN, name, ext, n_ext, s->n_out);
    free(name);
    if (!call) {
        gl_error_prefix("group: adding the call of %s", s->fname);
        st = GL_ERR_INTERNAL;
        goto out;
    }
    gl_node_inherit_provenance(call, s->members, s->n_members, s->decision);
    /* The body is built before the outputs move: it names its values after them. The
     * function is looked up again: adding the call may not move it, but adding one
     * function may move the array, and this keeps the rule simple. */
    st = build_body(m, s, gl_model_function(m, GL_FUSED_DOMAIN, s->fname), ext, n_ext, &vm);
    if (st == GL_OK) {
        gl_graph *body = gl_model_function(m, GL_FUSED_DOMAIN, s->fname)->body;
        for (size_t i = 0; i < s->n_out; i++)
            gl_graph_add_output(body, mapped(&vm, s->out_owner[i]->outputs[s->out_index[i]]));
    }
    for (size_t i = 0; i < s->n_out && st == GL_OK; i++)
        st = gl_move_output(g, s->out_owner[i], s->out_index[i], call, i);
    if (st == GL_OK)
        st = remove_members(g, s);
out:
    free(ext);
    free(vm.from);
    free(vm.to);
    if (call_out)
        *call_out = st == GL_OK ? call : NULL;
    return st;
}

int gl_group_kind_len(const gl_node *n)
{
    size_t len = strlen(n->op_type), d = len;
    if (strcmp(n->domain, GL_FUSED_DOMAIN) != 0)
        return (int)len;
    while (d > 0 && n->op_type[d - 1] >= '0' && n->op_type[d - 1] <= '9')
        d--;
    return d > 1 && d < len && n->op_type[d - 1] == '_' ? (int)(d - 1) : (int)len;
}

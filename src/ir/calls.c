/* calls.c — finding the function a node calls; the bound on expanding calls. */
#include "ir/calls.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

const gl_function *gl_called_function(const gl_model *m, const gl_node *n)
{
    for (size_t i = 0; m && n->op_type && i < m->n_functions; i++) {
        const gl_function *f = &m->functions[i];
        if (f->body && f->name && strcmp(f->name, n->op_type) == 0 &&
            strcmp(f->domain, n->domain) == 0)
            return f;
    }
    return NULL;
}

void gl_expansion_init(gl_expansion *x, const gl_model *m)
{
    *x = (gl_expansion){0};
    size_t nodes = m && m->graph ? gl_graph_count_nodes(m->graph, true) : 0;
    for (size_t i = 0; m && i < m->n_functions; i++)
        if (m->functions[i].body)
            nodes += gl_graph_count_nodes(m->functions[i].body, true);
    size_t room = (SIZE_MAX - GL_MAX_EXPANDED_NODES) / GL_EXPANSION_PER_NODE;
    x->max_nodes = GL_MAX_EXPANDED_NODES + (nodes < room ? nodes : room) * GL_EXPANSION_PER_NODE;
}

/* "a -> b -> c" from the chain, then `last`; cut with "..." when it does not fit. */
static void format_chain(const gl_expansion *x, const gl_function *last, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i <= x->depth && used + 4 < len; i++) {
        const gl_function *f = i < x->depth ? x->chain[i] : last;
        int n = snprintf(buf + used, len - used, "%s%s", i ? " -> " : "", f->name);
        if (n < 0 || (size_t)n >= len - used) {
            snprintf(buf + len - 4, 4, "...");
            return;
        }
        used += (size_t)n;
    }
}

static gl_status refuse(const gl_expansion *x, const gl_function *f, const char *where,
                        const char *what)
{
    if (!where)
        return GL_ERR_INPUT;
    char chain[320];
    format_chain(x, f, chain, sizeof(chain));
    return gl_fail(GL_ERR_INPUT, "%s: %s (%s)", x->depth ? x->root : where, what, chain);
}

gl_status gl_expansion_enter(gl_expansion *x, const gl_function *f, const char *where)
{
    size_t max = x->max_nodes ? x->max_nodes : GL_MAX_EXPANDED_NODES;
    char what[160];
    for (int i = 0; i < x->depth; i++)
        if (x->chain[i] == f) {
            snprintf(what, sizeof(what), "function '%s' calls itself, which ONNX forbids",
                     f->name);
            return refuse(x, f, where, what);
        }
    if (x->depth >= GL_MAX_CALL_DEPTH) {
        snprintf(what, sizeof(what), "function calls nest deeper than %d levels",
                 GL_MAX_CALL_DEPTH);
        return refuse(x, f, where, what);
    }
    /* Once over, every later call is refused before its body is even counted. */
    size_t body = x->nodes < max ? gl_graph_count_nodes(f->body, true) : max;
    if (body > max - x->nodes) {
        snprintf(what, sizeof(what), "function calls expand to more than %zu nodes "
                 "(functions calling functions many times over?)", max);
        x->nodes = max;
        return refuse(x, f, where, what);
    }
    if (x->depth == 0 && where)
        snprintf(x->root, sizeof(x->root), "%s", where);
    x->nodes += body;
    x->chain[x->depth++] = f;
    return GL_OK;
}

void gl_expansion_leave(gl_expansion *x)
{
    if (x->depth > 0)
        x->depth--;
}

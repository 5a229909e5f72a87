/* model_summary.c — the facts `graphlab info` and the model view share (model_summary.h). */
#include "driver/model_summary.h"

#include "ir/tensor.h"
#include "passes/group.h"
#include "util/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void count_op(gl_model_summary *s, const gl_node *n)
{
    char key[512];
    if (*n->domain)
        snprintf(key, sizeof(key), "%s:%.*s", n->domain, gl_group_kind_len(n), n->op_type);
    else
        snprintf(key, sizeof(key), "%s", n->op_type);
    for (size_t i = 0; i < s->n_ops; i++) {
        if (strcmp(s->ops[i].op, key) == 0) {
            s->ops[i].count++;
            return;
        }
    }
    GL_GROW(s->ops, s->cap_ops, s->n_ops + 1);
    s->ops[s->n_ops++] = (gl_op_tally){gl_xstrdup(key), 1};
}

/* Most frequent first, then by name: the order of info.json's op_histogram. */
static int by_count_then_name(const void *a, const void *b)
{
    const gl_op_tally *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

void gl_model_summarize(const gl_model *m, gl_model_summary *s)
{
    *s = (gl_model_summary){0};
    const gl_graph *g = m->graph;
    gl_node *n;
    gl_foreach_node(g, i, n)
        count_op(s, n);
    if (s->n_ops) /* a graph without nodes has no array: qsort must not see NULL */
        qsort(s->ops, s->n_ops, sizeof(gl_op_tally), by_count_then_name);
    s->node_count = g->live_nodes;
    s->node_count_total = gl_graph_count_nodes(g, true);
    for (size_t i = 0; i < g->n_inits; i++) {
        if (g->inits[i] && g->inits[i]->init) {
            s->initializers++;
            s->initializer_bytes += gl_tensor_nbytes(g->inits[i]->init);
        }
    }
    struct stat st;
    s->file_bytes = m->path && stat(m->path, &st) == 0 ? (long long)st.st_size : -1;
}

void gl_model_summary_free(gl_model_summary *s)
{
    for (size_t i = 0; i < s->n_ops; i++)
        free(s->ops[i].op);
    free(s->ops);
    *s = (gl_model_summary){0};
}

void gl_model_producer(const gl_model *m, char *buf, size_t len)
{
    const char *name = m->producer_name ? m->producer_name : "";
    const char *version = m->producer_version ? m->producer_version : "";
    snprintf(buf, len, "%s%s%s", name, *name && *version ? " " : "", version);
}

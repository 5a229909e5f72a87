/* journal.c — the undo journal of a trial (what and why: journal.h).
 *
 * Records are first-touch snapshots (graphs, nodes, values: restored in any order, each
 * to its state at begin) and two logs (renames, attribute changes: undone newest first).
 * Rollback, in order: note what the trial made, put every touched node and value back,
 * undo the logs, put every touched graph's lists back (which brings back what the trial
 * removed and drops what it added), make the name index again, then free what the trial
 * made.
 */
#include "ir/journal.h"

#include <stdlib.h>
#include <string.h>

/* A graph as it was when the trial first touched it. */
typedef struct graph_rec {
    gl_graph *g;
    uint32_t next_node_id, next_value_id; /* ids from these on: made by the trial */
    size_t live_nodes;
    gl_node **nodes;
    size_t n_nodes;
    gl_value **values, **inputs, **outputs, **inits, **captures;
    size_t n_values, n_inputs, n_outputs, n_inits, n_captures;
    uint8_t *node_seen, *value_seen; /* by id: snapshot taken */
} graph_rec;

typedef struct node_rec {
    gl_node *n;
    gl_value **inputs, **outputs, **implicit;
    size_t n_inputs, n_outputs, n_implicit;
    uint32_t *origins; /* copy when more than one, else NULL (prov.single holds it) */
    gl_provenance prov;
} node_rec;

typedef struct value_rec {
    gl_value *v;
    gl_type type;      /* deep copy */
    gl_use *uses;      /* copy, in order */
    size_t n_uses;
    gl_tensor *init;   /* a header of its own over the same bytes (copy-on-write) */
    gl_node *producer;
    int producer_slot;
    bool is_input;
    int n_output_refs;
    gl_value *outer;
} value_rec;

typedef enum attr_change { ATTR_ADDED, ATTR_REPLACED, ATTR_REMOVED } attr_change;

typedef struct attr_rec {
    gl_node *n;
    attr_change change;
    size_t i;
    gl_attr old; /* REPLACED, REMOVED: the attribute as it was (owned) */
} attr_rec;

typedef struct rename_rec {
    gl_node *n;  /* a node's rename, or */
    gl_value *v; /* a value's */
    char *old;   /* owned */
    bool old_generated;
} rename_rec;

struct gl_journal {
    gl_graph *root;
    graph_rec *graphs;
    size_t n_graphs, cap_graphs, last_graph;
    node_rec *nodes;
    size_t n_nodes, cap_nodes;
    value_rec *values;
    size_t n_values, cap_values;
    attr_rec *attrs;
    size_t n_attrs, cap_attrs;
    rename_rec *renames;
    size_t n_renames, cap_renames;
    gl_node **removed_nodes; /* existed at begin, removed by the trial: not freed yet */
    size_t n_removed_nodes, cap_removed_nodes;
    gl_value **removed_values;
    size_t n_removed_values, cap_removed_values;
    gl_graph **made_graphs; /* attached by the trial to a node that existed */
    size_t n_made_graphs, cap_made_graphs;
};

static void *dup_array(const void *src, size_t n, size_t elem)
{
    if (!n)
        return NULL;
    void *dst = gl_xmalloc(n * elem);
    memcpy(dst, src, n * elem);
    return dst;
}

static bool bit_test_set(uint8_t *bits, uint32_t id)
{
    bool was = (bits[id / 8] >> (id % 8)) & 1u;
    bits[id / 8] |= (uint8_t)(1u << (id % 8));
    return was;
}

gl_journal *gl_graph_journal(const gl_graph *g)
{
    while (g && g->parent)
        g = g->parent;
    return g ? g->journal : NULL;
}

static graph_rec *find_record(gl_journal *j, const gl_graph *g)
{
    if (j->last_graph < j->n_graphs && j->graphs[j->last_graph].g == g)
        return &j->graphs[j->last_graph];
    for (size_t i = 0; i < j->n_graphs; i++)
        if (j->graphs[i].g == g) {
            j->last_graph = i;
            return &j->graphs[i];
        }
    return NULL;
}

/* A subgraph the trial made (of a node it made, or attached to one): rollback frees it
 * with its holder, so nothing in it is recorded. */
static bool graph_made(gl_journal *j, const gl_graph *g)
{
    for (; g && g->parent; g = g->parent) {
        for (size_t i = 0; i < j->n_made_graphs; i++)
            if (j->made_graphs[i] == g)
                return true;
        const graph_rec *pr = find_record(j, g->parent);
        if (pr && g->parent_node && g->parent_node->id >= pr->next_node_id)
            return true;
    }
    return false;
}

/* The record of g, taken now if this is the trial's first touch of g; NULL for a graph
 * the trial made. */
static graph_rec *graph_record(gl_journal *j, gl_graph *g)
{
    graph_rec *found = find_record(j, g);
    if (found)
        return found;
    if (graph_made(j, g))
        return NULL;
    GL_GROW(j->graphs, j->cap_graphs, j->n_graphs + 1);
    graph_rec *r = &j->graphs[j->n_graphs];
    *r = (graph_rec){
        .g = g,
        .next_node_id = g->next_node_id,
        .next_value_id = g->next_value_id,
        .live_nodes = g->live_nodes,
        .nodes = dup_array(g->nodes, g->n_nodes, sizeof(gl_node *)),
        .n_nodes = g->n_nodes,
        .values = dup_array(g->values, g->n_values, sizeof(gl_value *)),
        .n_values = g->n_values,
        .inputs = dup_array(g->inputs, g->n_inputs, sizeof(gl_value *)),
        .n_inputs = g->n_inputs,
        .outputs = dup_array(g->outputs, g->n_outputs, sizeof(gl_value *)),
        .n_outputs = g->n_outputs,
        .inits = dup_array(g->inits, g->n_inits, sizeof(gl_value *)),
        .n_inits = g->n_inits,
        .captures = dup_array(g->captures, g->n_captures, sizeof(gl_value *)),
        .n_captures = g->n_captures,
        .node_seen = gl_xcalloc(g->next_node_id / 8 + 1, 1),
        .value_seen = gl_xcalloc(g->next_value_id / 8 + 1, 1),
    };
    j->last_graph = j->n_graphs++;
    return r;
}

gl_journal *gl_journal_begin(gl_graph *root)
{
    if (!root || root->parent || root->journal)
        return NULL;
    gl_journal *j = gl_xcalloc(1, sizeof(*j));
    j->root = root;
    graph_record(j, root);
    root->journal = j;
    return j;
}

void gl_journal_touch_graph(gl_journal *j, gl_graph *g)
{
    graph_record(j, g);
}

void gl_journal_graph_attached(gl_journal *j, gl_graph *sub)
{
    GL_GROW(j->made_graphs, j->cap_made_graphs, j->n_made_graphs + 1);
    j->made_graphs[j->n_made_graphs++] = sub;
}

/* The node existed when the journal began (else the trial made it). */
static bool node_existed(gl_journal *j, const gl_node *n, graph_rec **r)
{
    *r = graph_record(j, n->graph);
    return *r && n->id < (*r)->next_node_id;
}

bool gl_journal_has_node(gl_journal *j, const gl_node *n)
{
    graph_rec *r;
    return node_existed(j, n, &r);
}

static bool value_existed(gl_journal *j, const gl_value *v, graph_rec **r)
{
    *r = graph_record(j, v->graph);
    return *r && v->id < (*r)->next_value_id;
}

void gl_journal_node(gl_journal *j, gl_node *n)
{
    graph_rec *r;
    if (!n || !node_existed(j, n, &r) || bit_test_set(r->node_seen, n->id))
        return;
    GL_GROW(j->nodes, j->cap_nodes, j->n_nodes + 1);
    node_rec *s = &j->nodes[j->n_nodes++];
    *s = (node_rec){
        .n = n,
        .inputs = dup_array(n->inputs, n->n_inputs, sizeof(gl_value *)),
        .n_inputs = n->n_inputs,
        .outputs = dup_array(n->outputs, n->n_outputs, sizeof(gl_value *)),
        .n_outputs = n->n_outputs,
        .implicit = dup_array(n->implicit, n->n_implicit, sizeof(gl_value *)),
        .n_implicit = n->n_implicit,
        .prov = n->prov,
    };
    if (n->prov.n_origins > 1)
        s->origins = dup_array(n->prov.origins, n->prov.n_origins, sizeof(uint32_t));
}

void gl_journal_value(gl_journal *j, gl_value *v)
{
    graph_rec *r;
    if (!v || !value_existed(j, v, &r) || bit_test_set(r->value_seen, v->id))
        return;
    GL_GROW(j->values, j->cap_values, j->n_values + 1);
    value_rec *s = &j->values[j->n_values++];
    *s = (value_rec){
        .v = v,
        .uses = dup_array(v->uses, v->n_uses, sizeof(gl_use)),
        .n_uses = v->n_uses,
        .init = v->init ? gl_tensor_share(v->init) : NULL,
        .producer = v->producer,
        .producer_slot = v->producer_slot,
        .is_input = v->is_input,
        .n_output_refs = v->n_output_refs,
        .outer = v->outer,
    };
    gl_shape_init_unknown(&s->type.shape);
    gl_type_copy(&s->type, &v->type);
}

void gl_journal_touch_value(const gl_graph *g, gl_value *v)
{
    gl_journal *j = gl_graph_journal(g);
    if (j)
        gl_journal_value(j, v);
}

void gl_journal_touch_node(const gl_graph *g, gl_node *n)
{
    gl_journal *j = gl_graph_journal(g);
    if (j)
        gl_journal_node(j, n);
}

bool gl_journal_keeps_node(gl_journal *j, gl_node *n)
{
    graph_rec *r;
    if (!node_existed(j, n, &r))
        return false;
    GL_GROW(j->removed_nodes, j->cap_removed_nodes, j->n_removed_nodes + 1);
    j->removed_nodes[j->n_removed_nodes++] = n;
    return true;
}

bool gl_journal_keeps_value(gl_journal *j, gl_value *v)
{
    graph_rec *r;
    if (!value_existed(j, v, &r))
        return false;
    GL_GROW(j->removed_values, j->cap_removed_values, j->n_removed_values + 1);
    j->removed_values[j->n_removed_values++] = v;
    return true;
}

static void add_rename(gl_journal *j, gl_node *n, gl_value *v, char *old, bool generated)
{
    GL_GROW(j->renames, j->cap_renames, j->n_renames + 1);
    j->renames[j->n_renames++] = (rename_rec){n, v, old, generated};
}

bool gl_journal_renames_node(gl_journal *j, gl_node *n, char *old, bool old_generated)
{
    graph_rec *r;
    if (!node_existed(j, n, &r))
        return false;
    add_rename(j, n, NULL, old, old_generated);
    return true;
}

bool gl_journal_renames_value(gl_journal *j, gl_value *v, char *old)
{
    graph_rec *r;
    if (!value_existed(j, v, &r))
        return false;
    add_rename(j, NULL, v, old, false);
    return true;
}

static void add_attr_rec(gl_journal *j, gl_node *n, attr_change c, size_t i, const gl_attr *old)
{
    GL_GROW(j->attrs, j->cap_attrs, j->n_attrs + 1);
    j->attrs[j->n_attrs++] = (attr_rec){n, c, i, old ? *old : (gl_attr){0}};
}

void gl_journal_attr_replaced(gl_journal *j, gl_node *n, size_t i, const gl_attr *old)
{
    add_attr_rec(j, n, ATTR_REPLACED, i, old);
}

void gl_journal_attr_removed(gl_journal *j, gl_node *n, size_t i, const gl_attr *old)
{
    add_attr_rec(j, n, ATTR_REMOVED, i, old);
}

void gl_journal_attr_added(gl_journal *j, gl_node *n)
{
    add_attr_rec(j, n, ATTR_ADDED, 0, NULL);
}

/* ---- rollback -------------------------------------------------------------------------- */

static void undo_attr(attr_rec *a)
{
    gl_node *n = a->n;
    switch (a->change) {
    case ATTR_ADDED:
        gl_attr_free(&n->attrs[--n->n_attrs]);
        break;
    case ATTR_REPLACED:
        gl_attr_free(&n->attrs[a->i]);
        n->attrs[a->i] = a->old;
        break;
    case ATTR_REMOVED:
        GL_GROW(n->attrs, n->cap_attrs, n->n_attrs + 1);
        memmove(&n->attrs[a->i + 1], &n->attrs[a->i], (n->n_attrs - a->i) * sizeof(gl_attr));
        n->attrs[a->i] = a->old;
        n->n_attrs++;
        break;
    }
}

static void undo_rename(rename_rec *r)
{
    char **name = r->n ? &r->n->name : &r->v->name;
    free(*name);
    *name = r->old;
    if (r->n)
        r->n->name_generated = r->old_generated;
}

/* The record's copies move into the node. */
static void restore_node(node_rec *s)
{
    gl_node *n = s->n;
    free(n->inputs);
    n->inputs = s->inputs;
    n->n_inputs = n->cap_inputs = s->n_inputs;
    for (size_t i = 0; i < s->n_outputs; i++)
        n->outputs[i] = s->outputs[i]; /* the slots never move: only what fills them */
    free(s->outputs);
    free(n->implicit);
    n->implicit = s->implicit;
    n->n_implicit = n->cap_implicit = s->n_implicit;
    if (n->prov.origins != &n->prov.single)
        free(n->prov.origins);
    n->prov = s->prov;
    n->prov.origins = s->prov.n_origins > 1 ? s->origins
                      : s->prov.n_origins ? &n->prov.single
                                          : NULL;
}

static void restore_value(value_rec *s)
{
    gl_value *v = s->v;
    gl_type_free(&v->type);
    v->type = s->type;
    free(v->uses);
    v->uses = s->uses;
    v->n_uses = v->cap_uses = s->n_uses;
    gl_tensor_free(v->init);
    v->init = s->init;
    v->producer = s->producer;
    v->producer_slot = s->producer_slot;
    v->is_input = s->is_input;
    v->n_output_refs = s->n_output_refs;
    v->outer = s->outer;
}

/* A list of the graph back as recorded: the record's copy becomes the list. */
#define RESTORE_LIST(g, r, list)                                                           \
    do {                                                                                   \
        free((g)->list);                                                                   \
        (g)->list = (r)->list;                                                             \
        (g)->n_##list = (g)->cap_##list = (r)->n_##list;                                   \
        (r)->list = NULL;                                                                  \
    } while (0)

static void restore_graph(graph_rec *r)
{
    gl_graph *g = r->g;
    RESTORE_LIST(g, r, nodes);
    RESTORE_LIST(g, r, values);
    RESTORE_LIST(g, r, inputs);
    RESTORE_LIST(g, r, outputs);
    RESTORE_LIST(g, r, inits);
    RESTORE_LIST(g, r, captures);
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i])
            g->nodes[i]->index = i;
    for (size_t i = 0; i < g->n_values; i++)
        if (g->values[i])
            g->values[i]->index = i;
    g->next_node_id = r->next_node_id;
    g->next_value_id = r->next_value_id;
    g->live_nodes = r->live_nodes;
}

/* What the trial made and still holds in g's lists (it freed the rest itself). */
static void collect_made(const graph_rec *r, gl_node ***nodes, size_t *n_nodes, size_t *cap_nodes,
                         gl_value ***values, size_t *n_values, size_t *cap_values)
{
    const gl_graph *g = r->g;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i] && g->nodes[i]->id >= r->next_node_id) {
            GL_GROW(*nodes, *cap_nodes, *n_nodes + 1);
            (*nodes)[(*n_nodes)++] = g->nodes[i];
        }
    for (size_t i = 0; i < g->n_values; i++)
        if (g->values[i] && g->values[i]->id >= r->next_value_id) {
            GL_GROW(*values, *cap_values, *n_values + 1);
            (*values)[(*n_values)++] = g->values[i];
        }
}

static void journal_free(gl_journal *j)
{
    for (size_t i = 0; i < j->n_graphs; i++) {
        graph_rec *r = &j->graphs[i];
        free(r->nodes);
        free(r->values);
        free(r->inputs);
        free(r->outputs);
        free(r->inits);
        free(r->captures);
        free(r->node_seen);
        free(r->value_seen);
    }
    free(j->graphs);
    free(j->nodes);
    free(j->values);
    free(j->attrs);
    free(j->renames);
    free(j->removed_nodes);
    free(j->removed_values);
    free(j->made_graphs);
    free(j);
}

void gl_journal_rollback(gl_journal *j)
{
    if (!j)
        return;
    gl_node **made_nodes = NULL;
    gl_value **made_values = NULL;
    size_t n_made_nodes = 0, cap_made_nodes = 0, n_made_values = 0, cap_made_values = 0;
    /* A body touched before the trial attached it to a node is the trial's all the same:
     * it goes with its holder, so its record is left alone. */
    bool *made_graph = gl_xcalloc(j->n_graphs + 1, sizeof(bool));
    for (size_t i = 0; i < j->n_graphs; i++)
        made_graph[i] = graph_made(j, j->graphs[i].g);
    for (size_t i = 0; i < j->n_graphs; i++)
        if (!made_graph[i])
            collect_made(&j->graphs[i], &made_nodes, &n_made_nodes, &cap_made_nodes,
                         &made_values, &n_made_values, &cap_made_values);
    /* Objects first, while everything the trial made is still there; then the logs, whose
     * undoing may free a body the trial attached. */
    for (size_t i = 0; i < j->n_nodes; i++)
        restore_node(&j->nodes[i]);
    for (size_t i = 0; i < j->n_values; i++)
        restore_value(&j->values[i]);
    for (size_t i = j->n_renames; i-- > 0;)
        undo_rename(&j->renames[i]);
    for (size_t i = j->n_attrs; i-- > 0;)
        undo_attr(&j->attrs[i]);
    for (size_t i = 0; i < j->n_graphs; i++)
        if (!made_graph[i]) {
            restore_graph(&j->graphs[i]);
            gl_ir_index_rebuild(j->graphs[i].g);
        }
    free(made_graph);
    /* Nodes first: freeing one leaves its output values alone (graph.c's node_free). */
    for (size_t i = 0; i < n_made_nodes; i++)
        gl_ir_node_free(made_nodes[i]);
    for (size_t i = 0; i < n_made_values; i++)
        gl_ir_value_free(made_values[i]);
    free(made_nodes);
    free(made_values);
    j->root->journal = NULL;
    journal_free(j);
}

void gl_journal_commit(gl_journal *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n_nodes; i++) {
        free(j->nodes[i].inputs);
        free(j->nodes[i].outputs);
        free(j->nodes[i].implicit);
        free(j->nodes[i].origins);
    }
    for (size_t i = 0; i < j->n_values; i++) {
        gl_type_free(&j->values[i].type);
        free(j->values[i].uses);
        gl_tensor_free(j->values[i].init);
    }
    for (size_t i = 0; i < j->n_attrs; i++)
        gl_attr_free(&j->attrs[i].old);
    for (size_t i = 0; i < j->n_renames; i++)
        free(j->renames[i].old);
    for (size_t i = 0; i < j->n_removed_nodes; i++)
        gl_ir_node_free(j->removed_nodes[i]);
    for (size_t i = 0; i < j->n_removed_values; i++)
        gl_ir_value_free(j->removed_values[i]);
    j->root->journal = NULL;
    journal_free(j);
}

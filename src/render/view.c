/* view.c — stage 2: a view (boxes with display text, merged edges) built from the graph
 * and what stage 1 chose to draw, before any Graphviz (stages.h).
 *
 * Node views draw every kept node as its own box: graph inputs and producer-less values
 * first, then per node its constants and outer values just before it (so they sit beside
 * it in the drawing), edges in a fixed order, output boxes last, and for neighbourhoods
 * "... N more" stubs where edges are cut. A constant source read by several nodes is
 * drawn once per reader ("shared by N"): one source wired across the whole graph makes
 * dot's layout run for minutes and is unreadable anyway. Group views draw one box per
 * group with its op histogram, every constant folded.
 */
#include "render/stages.h"

#include "util/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OUTPUT_LINES 4    /* output shapes listed in a node box */
#define MAX_FOLDED_LINES 6    /* folded constants listed in a node box */
#define MAX_REPLACED_NAMES 4  /* names on a "replaces:" line */
#define MAX_DETAILS 3         /* details on a "changed:" line */
#define MAX_SMALL_VALUES 4    /* constants this small show their values */
#define HISTOGRAM_OPS 3       /* op counts shown in a group box */
#define SHORT_NAME_MAX 28     /* characters of a one-line box's name */

static const gl_render_mark CHANGE_MARKS[] = {
    [GL_CHANGE_ADDED] = GL_MARK_ADDED,
    [GL_CHANGE_REMOVED] = GL_MARK_NONE,
    [GL_CHANGE_REPLACED] = GL_MARK_REPLACED,
    [GL_CHANGE_MODIFIED] = GL_MARK_MODIFIED,
};

/* How a "changed:" line names each kind of detail. */
static const char *const DETAIL_WORDS[] = {
    [GL_DETAIL_RENAMED] = "renamed",     [GL_DETAIL_OP] = "op",
    [GL_DETAIL_ATTR_ADDED] = "attr +",   [GL_DETAIL_ATTR_REMOVED] = "attr -",
    [GL_DETAIL_ATTR_CHANGED] = "attr",   [GL_DETAIL_INPUT] = "",
    [GL_DETAIL_OUTPUT] = "output",       [GL_DETAIL_OUTPUT_TYPE] = "type of",
};

/* ==== the view: boxes and edges, before any Graphviz ================================== */

/* One-line boxes: every box keeps its first line (node boxes are made one line). */
void gl_rv_view_one_line(view *v)
{
    for (size_t i = 0; i < v->n_boxes; i++) {
        char *nl = strchr(v->boxes[i].text, '\n');
        if (nl)
            *nl = '\0';
    }
}

void gl_rv_view_free(view *v)
{
    for (size_t i = 0; i < v->n_boxes; i++)
        free(v->boxes[i].text);
    free(v->boxes);
    free(v->edges);
    gl_index_map_free(&v->edge_index);
    *v = (view){0};
}

static uint32_t view_add_box(view *v, gl_render_box_kind kind, gl_render_mark mark,
                             uint32_t node_id, gl_strbuf *text)
{
    GL_GROW(v->boxes, v->cap_boxes, v->n_boxes + 1);
    v->boxes[v->n_boxes] = (vbox){kind, mark, node_id, false, gl_sb_take(text)};
    return (uint32_t)v->n_boxes++;
}

typedef struct edge_key {
    const view *v;
    uint32_t from, to, key;
    bool implicit;
} edge_key;

static bool edge_eq(const void *ctx, uint32_t idx)
{
    const edge_key *k = ctx;
    const vedge *e = &k->v->edges[idx];
    return e->from == k->from && e->to == k->to && e->key == k->key && e->implicit == k->implicit;
}

/* Add one (value, consumer slot) connection, merging it into an existing edge with the
 * same ends and key: Mul(x, x) is one edge "x2"; a group pair is one edge "3 values". */
static void view_connect(view *v, uint32_t from, uint32_t to, const gl_value *val,
                         bool per_value, bool implicit)
{
    edge_key k = {v, from, to, per_value && val ? val->id + 1 : 0, implicit};
    uint64_t h =
        gl_mix64(((uint64_t)from << 32 | to) ^ gl_mix64((uint64_t)k.key << 1 | implicit));
    uint32_t i = gl_index_map_intern(&v->edge_index, h, edge_eq, &k, (uint32_t)v->n_edges);
    if (i == v->n_edges) {
        GL_GROW(v->edges, v->cap_edges, v->n_edges + 1);
        v->edges[v->n_edges++] = (vedge){.from = from, .to = to, .key = k.key,
                                         .implicit = implicit, .dashed = implicit,
                                         .first = val, .last_value = UINT32_MAX};
    }
    vedge *e = &v->edges[i];
    if (val && e->last_value != val->id) {
        e->last_value = val->id;
        e->n_values++;
    }
    e->n_slots++;
}

void gl_rv_edge_label(const vedge *e, gl_strbuf *b)
{
    if (!e->first)
        return;
    if (e->n_values > 1) {
        char n[32];
        gl_sb_printf(b, "%s values", gl_rv_count(n, e->n_values));
        return;
    }
    char type[256];
    gl_type_format(&e->first->type, type, sizeof(type));
    gl_rv_put_display(b, type, 80);
    if (e->n_slots > 1)
        gl_sb_printf(b, " x%u", e->n_slots);
    if (e->implicit)
        gl_sb_puts(b, " (subgraph)");
}

/* ==== building a view ================================================================== */

/* One drawing of a shared constant source next to one reader: the copies of a source
 * read by node n are made just before n's box, so they are contiguous in the list. */
typedef struct source_copy {
    const void *source; /* the Constant node or the initializer value it stands for */
    size_t reader;      /* node index */
    uint32_t box;
} source_copy;

typedef struct builder {
    const gl_graph *g;
    const settings *set;
    view *v;
    const bool *keep;          /* by node index; NULL: every node */
    bool fold_all;             /* every constant goes into its consumers' labels */
    bool draw_io;              /* boxes for graph inputs/outputs */
    bool per_value_edges;      /* node views: an edge per value; group views: per pair */
    uint32_t *box_of_node;     /* by node index */
    uint32_t *box_of_value;    /* by value index: input/constant boxes */
    uint32_t *seen;            /* by value index: stamps for "once per node" loops */
    bool *connected;           /* by value index: its edges are made */
    uint32_t stamp;
    const gl_node_change **change_of; /* by node index; NULL entries: unchanged */
    bool copy_sources;         /* node views: a shared constant is drawn once per reader */
    uint32_t *node_sharers;    /* by node index: distinct readers of a constant node */
    uint32_t *value_sharers;   /* by value index: distinct readers of an initializer */
    source_copy *copies;       /* copies in the order they were made */
    size_t n_copies, cap_copies;
    uint32_t *first_copy;      /* by node index: its first entry in copies, or NO_BOX */
    /* The box limit covers every kind of box: node and group boxes keep their room, the
     * others (inputs, constants, copies, outputs, stubs) take what is left and the rest
     * are counted in view.left_out. */
    size_t limit;              /* most boxes in the view */
    size_t pending;            /* node or group boxes still to come */
    bool *left_out;            /* by value index: its box did not fit */
    size_t node_left_out;      /* sources of the node being placed that did not fit */
} builder;

static bool is_kept(const builder *b, const gl_node *n)
{
    return !b->keep || b->keep[n->index];
}

static bool own_value(const builder *b, const gl_value *v) { return gl_rv_value_of(b->g, v); }
static bool own_node(const builder *b, const gl_node *n) { return gl_rv_node_of(b->g, n); }

static bool is_input_like(const gl_value *v)
{
    return v->is_input || v->outer || !v->init;
}

/* Room for one more input, constant, copy or output box: the nodes (or groups) still to
 * come keep theirs, and one box stays free for a "... N more inputs" stub. */
static bool room_for_extra(const builder *b)
{
    return b->v->n_boxes + b->pending + 1 < b->limit;
}

static bool room_for_stub(const builder *b) { return b->v->n_boxes + b->pending < b->limit; }

/* A kept node (or a group) got its box, or will not get one. */
static void core_placed(builder *b)
{
    if (b->pending)
        b->pending--;
}

/* ---- constant sources: drawn once per reader when shared ---- */

/* One shared source wired to readers all over the graph makes dot's network simplex run
 * for many minutes (a cse'd torch export: one Constant feeding 65 Reshapes) and draws
 * edges across the whole picture; a copy next to each reader does neither. */

/* An initializer that is a constant and no graph input or output. */
static bool is_constant_value(const gl_value *v)
{
    return !v->producer && !is_input_like(v) && gl_value_is_constant(v) && v->n_output_refs == 0;
}

/* A Constant node with no inputs whose outputs only feed this graph's nodes directly:
 * copies of it can stand in for it wherever it is read. */
static bool is_constant_node(const gl_node *n)
{
    if (!n->op_type || !gl_node_is(n, "Constant") || n->n_inputs || n->n_implicit)
        return false;
    for (size_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && !gl_value_uses_comprehensive(n->outputs[k]))
            return false;
    return true;
}

/* Distinct nodes of g reading any of `vals`; node_stamp (by node index) holds `stamp`
 * for those seen. */
static uint32_t count_readers(const gl_graph *g, gl_value *const *vals, size_t n_vals,
                              uint32_t *node_stamp, uint32_t stamp)
{
    uint32_t readers = 0;
    for (size_t k = 0; k < n_vals; k++)
        for (size_t i = 0; vals[k] && i < vals[k]->n_uses; i++) {
            const gl_node *r = vals[k]->uses[i].node;
            if (gl_rv_node_of(g, r) && node_stamp[r->index] != stamp) {
                node_stamp[r->index] = stamp;
                readers++;
            }
        }
    return readers;
}

/* By node index: the distinct readers of each constant node (0 for other nodes). */
uint32_t *gl_rv_count_node_sharers(const gl_graph *g)
{
    uint32_t *sharers = gl_xcalloc(g->n_nodes + 1, sizeof(*sharers));
    uint32_t *stamp = gl_xcalloc(g->n_nodes + 1, sizeof(*stamp));
    uint32_t next = 0;
    const gl_node *n;
    gl_foreach_node(g, i, n)
    {
        if (is_constant_node(n))
            sharers[i] = count_readers(g, n->outputs, n->n_outputs, stamp, ++next);
    }
    free(stamp);
    return sharers;
}

/* By value index: the distinct readers of each constant initializer (0 for others). */
static uint32_t *count_value_sharers(const gl_graph *g)
{
    uint32_t *sharers = gl_xcalloc(g->n_values + 1, sizeof(*sharers));
    uint32_t *stamp = gl_xcalloc(g->n_nodes + 1, sizeof(*stamp));
    uint32_t next = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        gl_value *v = g->values[i];
        if (v && v->index == i && is_constant_value(v))
            sharers[i] = count_readers(g, &g->values[i], 1, stamp, ++next);
    }
    free(stamp);
    return sharers;
}

/* Folding: forced in reduced views; by option only for constants read by one node, so a
 * shared constant stays boxes (one beside each reader) and the sharing stays visible.
 * Graph outputs never fold. */
static bool folds(const builder *b, const gl_value *v)
{
    if (!is_constant_value(v))
        return false;
    if (b->fold_all)
        return true;
    if (!b->set->fold_constants || v->n_uses == 0)
        return false;
    for (size_t i = 1; i < v->n_uses; i++)
        if (v->uses[i].node != v->uses[0].node)
            return false;
    return true;
}

static void put_tensor_summary(gl_strbuf *t, const gl_tensor *ten)
{
    gl_sb_printf(t, "%s[", gl_dtype_name(ten->dtype));
    for (int i = 0; i < ten->rank; i++)
        gl_sb_printf(t, "%s%lld", i ? "," : "", (long long)ten->dims[i]);
    gl_sb_putc(t, ']');
    bool numeric = ten->dtype != GL_DT_STRING && ten->dtype != GL_DT_COMPLEX64 &&
                   ten->dtype != GL_DT_COMPLEX128 && gl_dtype_size(ten->dtype) > 0;
    if (!numeric || ten->count < 1 || ten->count > MAX_SMALL_VALUES || !gl_tensor_data(ten))
        return;
    gl_sb_puts(t, ten->count == 1 && ten->rank == 0 ? " = " : " = [");
    for (int64_t i = 0; i < ten->count; i++) {
        if (i)
            gl_sb_puts(t, ", ");
        gl_rv_put_number(t, gl_tensor_get_f64(ten, i));
    }
    if (!(ten->count == 1 && ten->rank == 0))
        gl_sb_putc(t, ']');
}

static void put_constant_line(gl_strbuf *t, const gl_value *v)
{
    gl_rv_put_name(t, v->name);
    gl_sb_putc(t, ' ');
    put_tensor_summary(t, v->init);
}

static uint32_t add_input_like_box(builder *b, const gl_value *v)
{
    gl_strbuf t = {0};
    const char *what = v->is_input ? "input: " : v->outer ? "outer: " : "unresolved: ";
    gl_sb_puts(&t, what);
    gl_rv_put_name(&t, v->name);
    gl_sb_putc(&t, '\n');
    gl_rv_put_type(&t, &v->type);
    if (v->is_input && v->init)
        gl_sb_puts(&t, "\nhas a default");
    return view_add_box(b->v, GL_BOX_INPUT, GL_MARK_NONE, UINT32_MAX, &t);
}

static void put_shared_line(gl_strbuf *t, uint32_t sharers)
{
    char num[32];
    if (sharers > 1)
        gl_sb_printf(t, "\nshared by %s", gl_rv_count(num, sharers));
}

/* `sharers` > 1: one of the copies of a shared constant, and its label says so. */
static uint32_t add_constant_box(builder *b, const gl_value *v, uint32_t sharers)
{
    gl_strbuf t = {0};
    gl_rv_put_name(&t, v->name);
    gl_sb_putc(&t, '\n');
    put_tensor_summary(&t, v->init);
    put_shared_line(&t, sharers);
    return view_add_box(b->v, GL_BOX_CONSTANT, GL_MARK_NONE, UINT32_MAX, &t);
}

/* The box a producer-less value is drawn as, made on first use; NO_BOX when it is
 * folded, io boxes are off, or it does not fit (counted for the node being placed). */
static uint32_t source_box(builder *b, const gl_value *v)
{
    if (!own_value(b, v))
        return NO_BOX;
    uint32_t *slot = &b->box_of_value[v->index];
    if (*slot != NO_BOX || folds(b, v) || (is_input_like(v) && !b->draw_io))
        return *slot;
    if (b->left_out[v->index] || !room_for_extra(b)) {
        if (!b->left_out[v->index])
            b->v->left_out++;
        b->left_out[v->index] = true;
        b->node_left_out++;
        return NO_BOX;
    }
    *slot = is_input_like(v) ? add_input_like_box(b, v) : add_constant_box(b, v, 0);
    return *slot;
}

/* Where the value comes from in the drawing: its producer's box or its own box, if
 * drawn already. */
static uint32_t origin_box(const builder *b, const gl_value *v)
{
    if (v->producer)
        return own_node(b, v->producer) ? b->box_of_node[v->producer->index] : NO_BOX;
    return own_value(b, v) ? b->box_of_value[v->index] : NO_BOX;
}

static bool used_by_kept_node(const builder *b, const gl_value *v)
{
    for (size_t i = 0; i < v->n_uses; i++)
        if (own_node(b, v->uses[i].node) && is_kept(b, v->uses[i].node))
            return true;
    return false;
}

static void place_inputs(builder *b)
{
    for (size_t i = 0; i < b->g->n_inputs; i++) {
        const gl_value *v = b->g->inputs[i];
        if (v && (!b->keep || used_by_kept_node(b, v)))
            source_box(b, v);
    }
}

/* Each input (explicit, then implicit) of n, calling fn once per distinct value. */
typedef void (*value_fn)(builder *b, const gl_node *n, const gl_value *v, void *ctx);

static void for_each_distinct_input(builder *b, const gl_node *n, value_fn fn, void *ctx)
{
    b->stamp++;
    for (size_t pass = 0; pass < 2; pass++) {
        gl_value *const *vals = pass == 0 ? n->inputs : n->implicit;
        size_t count = pass == 0 ? n->n_inputs : n->n_implicit;
        for (size_t i = 0; i < count; i++) {
            const gl_value *v = vals[i];
            if (!own_value(b, v) || b->seen[v->index] == b->stamp)
                continue;
            b->seen[v->index] = b->stamp;
            fn(b, n, v, ctx);
        }
    }
}

typedef struct fold_lines {
    gl_strbuf *text;
    size_t shown, hidden;
} fold_lines;

static void add_fold_line(builder *b, const gl_node *n, const gl_value *v, void *ctx)
{
    (void)n;
    fold_lines *f = ctx;
    if (!folds(b, v))
        return;
    if (f->shown == MAX_FOLDED_LINES) {
        f->hidden++;
        return;
    }
    gl_sb_putc(f->text, '\n');
    put_constant_line(f->text, v);
    f->shown++;
}

static void put_output_lines(gl_strbuf *t, const gl_node *n)
{
    size_t shown = 0, present = 0;
    for (size_t i = 0; i < n->n_outputs; i++) {
        if (!n->outputs[i])
            continue;
        if (present++ < MAX_OUTPUT_LINES) {
            gl_sb_putc(t, '\n');
            gl_rv_put_type(t, &n->outputs[i]->type);
            shown++;
        }
    }
    if (present > shown)
        gl_sb_printf(t, "\n+%zu more outputs", present - shown);
}

static void put_subgraph_line(gl_strbuf *t, const gl_node *n)
{
    bool any = false;
    for (size_t i = 0; i < n->n_attrs; i++) {
        const gl_attr *a = &n->attrs[i];
        if (a->type != GL_ATTR_GRAPH && a->type != GL_ATTR_GRAPHS)
            continue;
        gl_sb_puts(t, any ? ", " : "\nsubgraphs: ");
        gl_rv_put_name(t, a->name);
        any = true;
    }
}

static void put_replaces_line(gl_strbuf *t, const gl_node_change *c)
{
    gl_sb_puts(t, "\nreplaces: ");
    for (size_t i = 0; i < c->n_old && i < MAX_REPLACED_NAMES; i++) {
        gl_sb_puts(t, i ? ", '" : "'");
        gl_rv_put_name(t, c->old_names[i]);
        gl_sb_putc(t, '\'');
    }
    if (c->n_old > MAX_REPLACED_NAMES)
        gl_sb_printf(t, " +%zu more", c->n_old - MAX_REPLACED_NAMES);
}

static void put_changed_line(gl_strbuf *t, const gl_node_change *c)
{
    if (c->n_details == 0)
        return;
    gl_sb_puts(t, "\nchanged: ");
    for (size_t i = 0; i < c->n_details && i < MAX_DETAILS; i++) {
        const gl_change_detail *d = &c->details[i];
        const char *word =
            (size_t)d->kind < GL_ARRAY_LEN(DETAIL_WORDS) ? DETAIL_WORDS[d->kind] : "";
        if (i)
            gl_sb_puts(t, ", ");
        gl_sb_printf(t, "%s%s", word ? word : "", word && *word ? " " : "");
        if (d->kind == GL_DETAIL_RENAMED) {
            gl_sb_puts(t, "from '");
            gl_rv_put_display(t, d->old_text ? d->old_text : "", 24);
            gl_sb_putc(t, '\'');
        } else {
            gl_rv_put_display(t, d->what ? d->what : "", 24);
        }
    }
    if (c->n_details > MAX_DETAILS)
        gl_sb_printf(t, " +%zu more", c->n_details - MAX_DETAILS);
}

static gl_render_mark mark_of(const builder *b, const gl_node *n)
{
    const gl_node_change *c = b->change_of ? b->change_of[n->index] : NULL;
    return c && (size_t)c->kind < GL_ARRAY_LEN(CHANGE_MARKS) ? CHANGE_MARKS[c->kind] : GL_MARK_NONE;
}

static void put_op(gl_strbuf *t, const gl_node *n)
{
    if (*n->domain) {
        gl_rv_put_display(t, n->domain, 30);
        gl_sb_putc(t, '.');
    }
    gl_rv_put_display(t, n->op_type ? n->op_type : "?", 40);
}

/* The end of a node's name: its last two '/' parts ("/layer1/conv/Conv" -> "conv/Conv"),
 * which tell nodes of one block apart; a last part that only repeats the op (torch's
 * "/denselayer2/norm1/BatchNormalization") gives way to the part before it
 * ("denselayer2/norm1"). Cut in the middle past SHORT_NAME_MAX characters. */
static void put_short_name(gl_strbuf *t, const char *name, const char *op)
{
    const char *end = name + strlen(name);
    while (end > name && end[-1] == '/')
        end--;
    const char *last = end;
    while (last > name && last[-1] != '/')
        last--;
    size_t op_len = op ? strlen(op) : 0;
    if (last > name + 1 && op_len && (size_t)(end - last) == op_len &&
        memcmp(last, op, op_len) == 0)
        end = last - 1; /* "…/norm1/BatchNormalization": the op is on the line already */
    const char *start = name;
    int parts = 0;
    for (const char *p = end; p > name; p--)
        if (p[-1] == '/' && p < end && ++parts == 2) {
            start = p;
            break;
        }
    while (start < end && *start == '/')
        start++;
    char *tail = gl_xstrndup(start, (size_t)(end - start));
    gl_rv_put_display(t, tail, SHORT_NAME_MAX);
    free(tail);
}

/* `sharers` > 1: one of the copies of a shared Constant node, and its label says so. */
static uint32_t add_node_box(builder *b, const gl_node *n, uint32_t sharers)
{
    gl_strbuf t = {0};
    gl_render_mark mark = mark_of(b, n);
    gl_sb_puts(&t, gl_rv_mark_prefix(mark));
    put_op(&t, n);
    gl_rv_put_key_attrs(&t, n);
    if (b->set->one_line) {
        gl_sb_puts(&t, " \xC2\xB7 "); /* · */
        put_short_name(&t, n->name, n->op_type);
        return view_add_box(b->v, GL_BOX_NODE, mark, n->id, &t);
    }
    gl_sb_putc(&t, '\n');
    gl_rv_put_name(&t, n->name);
    put_output_lines(&t, n);
    fold_lines f = {&t, 0, 0};
    for_each_distinct_input(b, n, add_fold_line, &f);
    if (f.hidden)
        gl_sb_printf(&t, "\n+%zu more constants", f.hidden);
    put_subgraph_line(&t, n);
    const gl_node_change *c = b->change_of ? b->change_of[n->index] : NULL;
    if (c && c->kind == GL_CHANGE_REPLACED)
        put_replaces_line(&t, c);
    if (c && c->kind == GL_CHANGE_MODIFIED)
        put_changed_line(&t, c);
    put_shared_line(&t, sharers);
    return view_add_box(b->v, GL_BOX_NODE, mark, n->id, &t);
}

/* ---- copies of shared constants ---- */

/* What a copy beside each reader of v stands for: the shared Constant node producing v,
 * or v itself when it is a shared initializer drawn as a box; NULL when v's source is
 * drawn once. `sharers` gets the number of distinct readers. */
static const void *copied_source(const builder *b, const gl_value *v, uint32_t *sharers)
{
    *sharers = 0;
    if (!b->copy_sources)
        return NULL;
    if (v->producer) {
        const gl_node *p = v->producer;
        if (!own_node(b, p) || b->node_sharers[p->index] < 2)
            return NULL;
        *sharers = b->node_sharers[p->index];
        return p;
    }
    if (!own_value(b, v) || b->value_sharers[v->index] < 2 || folds(b, v))
        return NULL;
    *sharers = b->value_sharers[v->index];
    return v;
}

static uint32_t find_copy(const builder *b, size_t reader, const void *source)
{
    if (b->first_copy[reader] == NO_BOX)
        return NO_BOX;
    for (size_t k = b->first_copy[reader]; k < b->n_copies && b->copies[k].reader == reader; k++)
        if (b->copies[k].source == source)
            return b->copies[k].box;
    return NO_BOX;
}

static void add_copy(builder *b, const gl_node *reader, const gl_value *v, const void *source,
                     uint32_t sharers)
{
    if (!room_for_extra(b)) {
        b->v->left_out++;
        b->node_left_out++;
        return;
    }
    const gl_node *p = v->producer;
    uint32_t box = p ? add_node_box(b, p, sharers) : add_constant_box(b, v, sharers);
    if (p && b->box_of_node[p->index] == NO_BOX)
        b->box_of_node[p->index] = box; /* the first copy stands for the node (stubs) */
    if (b->first_copy[reader->index] == NO_BOX)
        b->first_copy[reader->index] = (uint32_t)b->n_copies;
    GL_GROW(b->copies, b->cap_copies, b->n_copies + 1);
    b->copies[b->n_copies++] = (source_copy){source, reader->index, box};
}

/* Edges from n's copy of v's source to n, one per slot reading v (merged as usual). */
static void connect_copy(builder *b, const gl_node *n, const gl_value *v, uint32_t copy)
{
    uint32_t to = b->box_of_node[n->index];
    for (size_t i = 0; copy != NO_BOX && to != NO_BOX && i < v->n_uses; i++)
        if (v->uses[i].node == n)
            view_connect(b->v, copy, to, v, b->per_value_edges,
                         v->uses[i].slot == GL_USE_IMPLICIT);
}

static bool has_kept_reader(const builder *b, const gl_node *n)
{
    for (size_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && used_by_kept_node(b, n->outputs[k]))
            return true;
    return false;
}

static void place_source(builder *b, const gl_node *n, const gl_value *v, void *ctx)
{
    (void)ctx;
    uint32_t sharers;
    const void *source = copied_source(b, v, &sharers);
    if (source && find_copy(b, n->index, source) == NO_BOX)
        add_copy(b, n, v, source, sharers);
    else if (!source && !v->producer)
        source_box(b, v);
}

/* "... N more" (and `what`): a box for what a view leaves out. */
static uint32_t add_stub(builder *b, size_t count, const char *what)
{
    gl_strbuf t = {0};
    char num[32];
    gl_sb_printf(&t, "\xE2\x80\xA6 %s more%s", gl_rv_count(num, count), what);
    return view_add_box(b->v, GL_BOX_STUB, GL_MARK_NONE, UINT32_MAX, &t);
}

/* "... N more inputs" above a node whose input or constant boxes did not all fit. */
static void add_left_out_stub(builder *b, uint32_t node_box, size_t count)
{
    if (!room_for_stub(b))
        return;
    uint32_t stub = add_stub(b, count, count == 1 ? " input" : " inputs");
    view_connect(b->v, stub, node_box, NULL, true, false);
    b->v->edges[b->v->n_edges - 1].dashed = true;
}

/* Node views: constant/outer boxes and copies of shared constants just before their
 * consumer, then the node. A shared Constant node has no box of its own unless none of
 * its readers is drawn (a focus on it whose readers were all cut). */
static void place_nodes(builder *b)
{
    const gl_node *n;
    gl_foreach_node(b->g, i, n)
    {
        if (!is_kept(b, n))
            continue;
        if (b->copy_sources && b->node_sharers[i] > 1 && has_kept_reader(b, n)) {
            core_placed(b);
            continue;
        }
        b->node_left_out = 0;
        for_each_distinct_input(b, n, place_source, NULL);
        b->box_of_node[i] = add_node_box(b, n, b->node_sharers[i]);
        core_placed(b);
        if (b->node_left_out)
            add_left_out_stub(b, b->box_of_node[i], b->node_left_out);
    }
}

static void place_outputs(builder *b)
{
    b->stamp++;
    for (size_t i = 0; i < b->g->n_outputs; i++) {
        const gl_value *v = b->g->outputs[i];
        if (!own_value(b, v) || b->seen[v->index] == b->stamp || !b->draw_io)
            continue;
        b->seen[v->index] = b->stamp;
        uint32_t from = origin_box(b, v);
        if (from == NO_BOX && !v->producer && !b->keep) /* read by no node: boxed here */
            from = source_box(b, v);
        if (from == NO_BOX)
            continue;
        if (!room_for_extra(b)) {
            b->v->left_out++;
            continue;
        }
        gl_strbuf t = {0};
        gl_sb_puts(&t, "output: ");
        gl_rv_put_name(&t, v->name);
        gl_sb_putc(&t, '\n');
        gl_rv_put_type(&t, &v->type);
        uint32_t out = view_add_box(b->v, GL_BOX_OUTPUT, GL_MARK_NONE, UINT32_MAX, &t);
        view_connect(b->v, from, out, NULL, true, false);
    }
}

/* Edges from one drawn source of `v` to every drawn consumer. */
static void connect_value(builder *b, const gl_value *v, uint32_t from)
{
    if (from == NO_BOX)
        return;
    for (size_t i = 0; i < v->n_uses; i++) {
        const gl_node *c = v->uses[i].node;
        uint32_t to = own_node(b, c) ? b->box_of_node[c->index] : NO_BOX;
        if (to == NO_BOX || to == from)
            continue;
        view_connect(b->v, from, to, v, b->per_value_edges, v->uses[i].slot == GL_USE_IMPLICIT);
    }
}

static void connect_source(builder *b, const gl_node *n, const gl_value *v, void *ctx)
{
    (void)ctx;
    uint32_t sharers;
    const void *source = copied_source(b, v, &sharers);
    if (source) {
        connect_copy(b, n, v, find_copy(b, n->index, source));
    } else if (!v->producer && !b->connected[v->index]) {
        b->connected[v->index] = true;
        connect_value(b, v, b->box_of_value[v->index]);
    }
}

/* Edges in a fixed order: graph inputs, then per node its producer-less inputs
 * (constants, outer values) and its outputs. Edges into output boxes come last, from
 * place_outputs. */
static void connect_all(builder *b)
{
    for (size_t i = 0; i < b->g->n_inputs; i++) {
        const gl_value *v = b->g->inputs[i];
        if (own_value(b, v) && !v->producer && !b->connected[v->index]) {
            b->connected[v->index] = true;
            connect_value(b, v, b->box_of_value[v->index]);
        }
    }
    const gl_node *n;
    gl_foreach_node(b->g, i, n)
    {
        if (b->box_of_node[i] == NO_BOX)
            continue;
        for_each_distinct_input(b, n, connect_source, NULL);
        /* A shared Constant node: node views wired its copies above, group views fold
         * it like any other constant. */
        if (b->node_sharers[i] > 1)
            continue;
        for (size_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k])
                connect_value(b, n->outputs[k], b->box_of_node[i]);
    }
}

/* ---- stubs: "... N more" where a neighbourhood view cuts edges ---- */

/* Distinct undrawn nodes feeding n (above) or fed by n (below). */
static size_t count_cut(builder *b, const gl_node *n, bool above, uint32_t *node_stamp,
                        uint32_t stamp)
{
    size_t cut = 0;
    if (above) {
        for (size_t pass = 0; pass < 2; pass++) {
            gl_value *const *vals = pass == 0 ? n->inputs : n->implicit;
            size_t count = pass == 0 ? n->n_inputs : n->n_implicit;
            for (size_t i = 0; i < count; i++) {
                const gl_node *p = vals[i] ? vals[i]->producer : NULL;
                if (own_node(b, p) && !is_kept(b, p) && b->node_sharers[p->index] < 2 &&
                    node_stamp[p->index] != stamp) {
                    node_stamp[p->index] = stamp;
                    cut++;
                }
            }
        }
        return cut;
    }
    for (size_t k = 0; k < n->n_outputs; k++) {
        const gl_value *v = n->outputs[k];
        for (size_t i = 0; v && i < v->n_uses; i++) {
            const gl_node *c = v->uses[i].node;
            if (own_node(b, c) && !is_kept(b, c) && node_stamp[c->index] != stamp) {
                node_stamp[c->index] = stamp;
                cut++;
            }
        }
    }
    return cut;
}

static void add_stubs(builder *b)
{
    uint32_t *node_stamp = gl_xcalloc(b->g->n_nodes + 1, sizeof(*node_stamp));
    uint32_t stamp = 0;
    const gl_node *n;
    gl_foreach_node(b->g, i, n)
    {
        if (!is_kept(b, n))
            continue;
        for (int above = 1; above >= 0; above--) {
            size_t cut = count_cut(b, n, above, node_stamp, ++stamp);
            if (!cut)
                continue;
            if (!room_for_stub(b)) {
                b->v->left_out++;
                continue;
            }
            uint32_t stub = add_stub(b, cut, "");
            uint32_t from = above ? stub : b->box_of_node[i];
            uint32_t to = above ? b->box_of_node[i] : stub;
            view_connect(b->v, from, to, NULL, true, false);
            b->v->edges[b->v->n_edges - 1].dashed = true;
        }
    }
    free(node_stamp);
}

/* ---- builder setup ---- */

static void builder_init(builder *b, const gl_graph *g, const settings *set, view *v,
                         const gl_node_change **change_of, size_t core_boxes)
{
    *b = (builder){.g = g, .set = set, .v = v, .draw_io = true, .per_value_edges = true,
                   .change_of = change_of, .limit = set->max_boxes, .pending = core_boxes};
    v->always_xlabels = set->xlabels;
    b->left_out = gl_xcalloc(g->n_values + 1, sizeof(*b->left_out));
    b->box_of_node = gl_xmalloc((g->n_nodes + 1) * sizeof(*b->box_of_node));
    b->box_of_value = gl_xmalloc((g->n_values + 1) * sizeof(*b->box_of_value));
    b->seen = gl_xcalloc(g->n_values + 1, sizeof(*b->seen));
    b->connected = gl_xcalloc(g->n_values + 1, sizeof(*b->connected));
    b->node_sharers = gl_rv_count_node_sharers(g);
    b->value_sharers = count_value_sharers(g);
    b->first_copy = gl_xmalloc((g->n_nodes + 1) * sizeof(*b->first_copy));
    memset(b->box_of_node, 0xFF, (g->n_nodes + 1) * sizeof(*b->box_of_node));
    memset(b->box_of_value, 0xFF, (g->n_values + 1) * sizeof(*b->box_of_value));
    memset(b->first_copy, 0xFF, (g->n_nodes + 1) * sizeof(*b->first_copy));
}

static void builder_free(builder *b)
{
    free(b->box_of_node);
    free(b->box_of_value);
    free(b->seen);
    free(b->connected);
    free(b->node_sharers);
    free(b->value_sharers);
    free(b->first_copy);
    free(b->copies);
    free(b->left_out);
}

/* Every kept node as its own box. */
void gl_rv_build_node_view(const gl_graph *g, const settings *set,
                           const gl_node_change **change_of, const bool *keep, bool fold_all,
                           bool stubs, view *v)
{
    size_t kept = 0;
    const gl_node *n;
    gl_foreach_node(g, i, n)
    {
        kept += !keep || keep[i];
    }
    builder b;
    builder_init(&b, g, set, v, change_of, kept);
    b.keep = keep;
    b.fold_all = fold_all;
    b.copy_sources = !set->shared_once;
    place_inputs(&b);
    place_nodes(&b);
    connect_all(&b);
    place_outputs(&b);
    if (stubs)
        add_stubs(&b);
    builder_free(&b);
}

/* ---- group boxes ---- */

typedef struct op_count {
    const char *op;
    size_t count;
} op_count;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_op_count(const void *a, const void *b)
{
    const op_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

/* "37 nodes: Conv 12, Relu 12, Add 13, …" — the most frequent ops first. */
static void put_histogram(gl_strbuf *t, const gl_graph *g, const size_t *members, size_t n)
{
    const char **ops = gl_xmalloc((n + 1) * sizeof(*ops));
    for (size_t i = 0; i < n; i++)
        ops[i] = g->nodes[members[i]]->op_type ? g->nodes[members[i]]->op_type : "?";
    qsort(ops, n, sizeof(*ops), cmp_str);
    op_count *runs = gl_xmalloc((n + 1) * sizeof(*runs));
    size_t n_runs = 0;
    for (size_t i = 0; i < n; i++) {
        if (n_runs && strcmp(runs[n_runs - 1].op, ops[i]) == 0)
            runs[n_runs - 1].count++;
        else
            runs[n_runs++] = (op_count){ops[i], 1};
    }
    qsort(runs, n_runs, sizeof(*runs), cmp_op_count);
    char num[32];
    gl_sb_printf(t, "%s nodes:", gl_rv_count(num, n));
    for (size_t i = 0; i < n_runs && i < HISTOGRAM_OPS; i++) {
        gl_sb_puts(t, i ? ", " : " ");
        gl_rv_put_display(t, runs[i].op, 24);
        gl_sb_printf(t, " %zu", runs[i].count);
    }
    if (n_runs > HISTOGRAM_OPS)
        gl_sb_puts(t, ", \xE2\x80\xA6");
    free(ops);
    free(runs);
}

static gl_render_mark put_group_changes(gl_strbuf *t, const builder *b, const size_t *members,
                                        size_t n)
{
    size_t counts[4] = {0};
    for (size_t i = 0; i < n; i++)
        counts[mark_of(b, b->g->nodes[members[i]])]++;
    if (!counts[GL_MARK_ADDED] && !counts[GL_MARK_MODIFIED] && !counts[GL_MARK_REPLACED])
        return GL_MARK_NONE;
    gl_sb_printf(t, "\nchanged: %zu added, %zu modified, %zu replacing", counts[GL_MARK_ADDED],
                 counts[GL_MARK_MODIFIED], counts[GL_MARK_REPLACED]);
    return GL_MARK_MODIFIED;
}

static void put_group_title(gl_strbuf *t, const gl_graph *g, const grouping *gr, uint32_t id,
                            const size_t *members, size_t n)
{
    if (gr->chunk) {
        char a[32], z[32];
        gl_sb_printf(t, "nodes %s-%s\n", gl_rv_count(a, id * gr->chunk + 1),
                     gl_rv_count(z, id * gr->chunk + n));
        gl_rv_put_display(t, g->nodes[members[0]]->name, 28);
        gl_sb_puts(t, " \xE2\x80\xA6 ");
        gl_rv_put_display(t, g->nodes[members[n - 1]]->name, 28);
        return;
    }
    const char *key = gr->key[id];
    size_t len = gr->key_len[id];
    while (len && *key == '/') {
        key++;
        len--;
    }
    if (len == 0) {
        gl_sb_puts(t, "(no prefix)");
        return;
    }
    char *s = gl_xstrndup(key, len);
    gl_rv_put_name(t, s);
    free(s);
}

static uint32_t add_group_box(builder *b, const grouping *gr, uint32_t id, const size_t *members,
                              size_t n)
{
    if (n == 1) /* a group of one is drawn as the node itself */
        return add_node_box(b, b->g->nodes[members[0]], 0);
    gl_strbuf t = {0};
    gl_strbuf tail = {0};
    gl_render_mark mark = put_group_changes(&tail, b, members, n);
    gl_sb_puts(&t, gl_rv_mark_prefix(mark));
    put_group_title(&t, b->g, gr, id, members, n);
    gl_sb_putc(&t, '\n');
    put_histogram(&t, b->g, members, n);
    if (tail.len)
        gl_sb_putn(&t, tail.s, tail.len);
    free(tail.s);
    return view_add_box(b->v, GL_BOX_GROUP, mark, UINT32_MAX, &t);
}

/* Group members as one array (counting sort by group id, node order kept). */
static size_t *group_members(const gl_graph *g, const grouping *gr, size_t *start)
{
    memset(start, 0, (gr->n_groups + 1) * sizeof(*start));
    for (size_t i = 0; i < g->n_nodes; i++)
        if (gr->gid[i] != NO_BOX)
            start[gr->gid[i] + 1]++;
    for (size_t k = 0; k < gr->n_groups; k++)
        start[k + 1] += start[k];
    size_t *fill = gl_xmalloc((gr->n_groups + 1) * sizeof(*fill));
    memcpy(fill, start, (gr->n_groups + 1) * sizeof(*fill));
    size_t *members = gl_xmalloc((start[gr->n_groups] + 1) * sizeof(*members));
    for (size_t i = 0; i < g->n_nodes; i++)
        if (gr->gid[i] != NO_BOX)
            members[fill[gr->gid[i]]++] = i;
    free(fill);
    return members;
}

static void place_groups(builder *b, const grouping *gr)
{
    size_t *start = gl_xmalloc((gr->n_groups + 1) * sizeof(*start));
    size_t *members = group_members(b->g, gr, start);
    uint32_t *group_box = gl_xmalloc((gr->n_groups + 1) * sizeof(*group_box));
    memset(group_box, 0xFF, (gr->n_groups + 1) * sizeof(*group_box));
    for (size_t i = 0; i < b->g->n_nodes; i++) {
        uint32_t id = gr->gid[i];
        if (id == NO_BOX)
            continue;
        for_each_distinct_input(b, b->g->nodes[i], place_source, NULL); /* outer values */
        if (group_box[id] == NO_BOX) {
            group_box[id] =
                add_group_box(b, gr, id, members + start[id], start[id + 1] - start[id]);
            core_placed(b);
        }
        b->box_of_node[i] = group_box[id];
    }
    free(group_box);
    free(members);
    free(start);
}

void gl_rv_build_group_view(const gl_graph *g, const settings *set,
                            const gl_node_change **change_of, const grouping *gr, bool draw_io,
                            view *v)
{
    builder b;
    builder_init(&b, g, set, v, change_of, gr->n_groups);
    b.fold_all = true;
    b.draw_io = draw_io;
    b.per_value_edges = false;
    place_inputs(&b);
    place_groups(&b, gr);
    connect_all(&b);
    place_outputs(&b);
    builder_free(&b);
}

/* profile.c — per-node times on each backend, shapes, FLOPs and the comparison with the
 * reference run (see profile.h). Everything hangs off the executor's observer: timed
 * runs only add numbers into arrays indexed by plan entry; the inspection run, untimed,
 * does the copying and comparing.
 */
#include "exec/profile.h"
#include "util/clock.h"

#include "exec/trace.h"
#include "ir/calls.h"
#include "util/hash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- statistics ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

gl_profile_stat gl_profile_stats(double *samples_ns, size_t n)
{
    if (n == 0)
        return (gl_profile_stat){0};
    qsort(samples_ns, n, sizeof(*samples_ns), cmp_double);
    double mid = n % 2 ? samples_ns[n / 2] : (samples_ns[n / 2 - 1] + samples_ns[n / 2]) / 2;
    return (gl_profile_stat){mid / 1e6, samples_ns[0] / 1e6, samples_ns[n - 1] / 1e6};
}

/* ---- types, FLOPs and bytes ------------------------------------------------------------- */

static void type_clear(gl_profile_type *t)
{
    free(t->dims);
    *t = (gl_profile_type){.rank = -1};
}

/* n types, none present yet. */
static gl_profile_type *types_new(size_t n)
{
    gl_profile_type *t = gl_xcalloc(n ? n : 1, sizeof(*t));
    for (size_t i = 0; i < n; i++)
        t[i].rank = -1;
    return t;
}

static void type_set(gl_profile_type *t, const gl_tensor *x)
{
    if (t->rank != x->rank) {
        free(t->dims);
        t->dims = gl_xmalloc((x->rank ? (size_t)x->rank : 1) * sizeof(*t->dims));
    }
    t->present = true;
    t->dtype = x->dtype;
    t->rank = x->rank;
    memcpy(t->dims, x->dims, (size_t)x->rank * sizeof(*t->dims));
}

static void type_copy(gl_profile_type *dst, const gl_profile_type *src)
{
    if (src->rank < 0) {
        type_clear(dst);
        dst->present = src->present;
        dst->dtype = src->dtype;
        return;
    }
    gl_tensor_frame f;
    gl_tensor *view = gl_tensor_frame_init(&f, NULL);
    view->dtype = src->dtype;
    view->rank = src->rank;
    memcpy(view->dims, src->dims, (size_t)src->rank * sizeof(*src->dims));
    type_set(dst, view);
}

/* a * b into *acc, false on overflow or a negative factor. */
static bool mul_into(int64_t *acc, int64_t b)
{
    return b >= 0 && !__builtin_mul_overflow(*acc, b, acc);
}

/* Elements of t, or -1 when unknown (or absurd). */
static int64_t type_count(const gl_profile_type *t)
{
    int64_t c = 1;
    if (!t || t->rank < 0)
        return -1;
    for (int d = 0; d < t->rank; d++)
        if (!mul_into(&c, t->dims[d]))
            return -1;
    return c;
}

/* Product of dims [from, rank) of t; -1 when unknown. */
static int64_t dims_product(const gl_profile_type *t, int from)
{
    int64_t c = 1;
    if (t->rank < from)
        return -1;
    for (int d = from; d < t->rank; d++)
        if (!mul_into(&c, t->dims[d]))
            return -1;
    return c;
}

int64_t gl_profile_flops(const gl_node *n, const gl_profile_type *in, size_t n_in,
                         const gl_profile_type *out, size_t n_out)
{
    if (*n->domain || n_out < 1 || n_in < 2)
        return -1;
    const char *op = n->op_type;
    int64_t base, per;
    if (strcmp(op, "Conv") == 0) {
        /* every output element: C/group x kernel multiply-adds (W is M x C/group x k...) */
        base = type_count(&out[0]);
        per = in[1].rank >= 3 ? dims_product(&in[1], 1) : -1;
    } else if (strcmp(op, "ConvTranspose") == 0) {
        /* every input element is scattered over M/group x kernel outputs (W: C x M/g x k) */
        base = type_count(&in[0]);
        per = in[1].rank >= 3 ? dims_product(&in[1], 1) : -1;
    } else if (strcmp(op, "MatMul") == 0) {
        base = type_count(&out[0]);
        per = in[0].rank >= 1 ? in[0].dims[in[0].rank - 1] : -1;
    } else if (strcmp(op, "Gemm") == 0) {
        base = type_count(&out[0]);
        bool trans_a = gl_node_attr_int(n, "transA", 0) != 0;
        per = in[0].rank == 2 ? in[0].dims[trans_a ? 0 : 1] : -1;
    } else {
        return -1;
    }
    if (base < 0 || per < 0 || !mul_into(&base, per) || !mul_into(&base, 2))
        return -1;
    return base;
}

int64_t gl_profile_bytes(const gl_profile_type *in, size_t n_in, const gl_profile_type *out,
                         size_t n_out)
{
    int64_t total = 0;
    for (size_t i = 0; i < n_in + n_out; i++) {
        const gl_profile_type *t = i < n_in ? &in[i] : &out[i - n_in];
        if (!t->present)
            continue;
        int64_t c = type_count(t);
        if (c < 0 || !mul_into(&c, (int64_t)gl_dtype_size(t->dtype)) ||
            __builtin_add_overflow(total, c, &total))
            return -1;
    }
    return total;
}

/* ---- the types values had in a run: per graph, by value index ---------------------------- */

typedef struct graph_types {
    const gl_graph *graph;
    gl_profile_type *by_index; /* graph->n_values entries */
} graph_types;

typedef struct type_map {
    graph_types *items;
    size_t n, cap;
} type_map;

static gl_profile_type *type_slot(type_map *tm, const gl_value *v)
{
    const gl_graph *g = v->graph;
    if (!g || v->index >= g->n_values)
        return NULL;
    for (size_t i = 0; i < tm->n; i++)
        if (tm->items[i].graph == g)
            return &tm->items[i].by_index[v->index];
    GL_GROW(tm->items, tm->cap, tm->n + 1);
    graph_types *gt = &tm->items[tm->n++];
    gt->graph = g;
    gt->by_index = types_new(g->n_values);
    return &gt->by_index[v->index];
}

static void type_map_free(type_map *tm)
{
    for (size_t i = 0; i < tm->n; i++) {
        for (size_t k = 0; k < tm->items[i].graph->n_values; k++)
            free(tm->items[i].by_index[k].dims);
        free(tm->items[i].by_index);
    }
    free(tm->items);
    *tm = (type_map){0};
}

/* What value v held: seen in this run, else its initializer (a constant or an input's
 * default), else unknown (rank -1); not present when v is NULL (omitted). */
static void value_type(type_map *tm, const gl_value *v, gl_profile_type *out)
{
    gl_profile_type *seen = v ? type_slot(tm, v) : NULL;
    if (seen && seen->rank >= 0) {
        type_copy(out, seen);
        out->constant = false;
    } else if (v && v->init) {
        type_set(out, v->init);
        out->constant = gl_value_is_constant(v);
    } else {
        type_clear(out);
        out->present = v != NULL;
        out->dtype = v ? v->type.dtype : GL_DT_UNDEFINED;
    }
}

/* ---- rows ------------------------------------------------------------------------------- */

typedef struct row_links {
    size_t first_child, last_child, next_sibling;
} row_links;

/* A name of the profiled model's graph: a node's (its row) or a group member's (the
 * group's row); for runs on another model. */
typedef struct name_entry {
    const char *name; /* not owned: a row's name or a function body node's */
    size_t row;       /* SIZE_MAX: a name only the other model has (no row yet) */
    bool member;      /* row is the group whose member this is */
} name_entry;

typedef struct builder {
    gl_profile *p;
    const gl_model *m;    /* the profiled model */
    size_t cap_rows;
    row_links *links;     /* parallel to p->rows */
    size_t *top_rows;     /* by node index in the model's graph; SIZE_MAX: none yet */
    size_t n_top;
    gl_tensor ***captures; /* by row: the reference run's outputs (plain), NULL: none */
    size_t n_captures;
    gl_tensor **ref_outputs; /* the reference run's graph outputs */
    gl_index_map names;   /* name -> entries[i], made at the first run on another model */
    name_entry *entries;
    size_t n_entries, cap_entries;
    bool names_made;
    bool tracing;         /* options.trace given */
    gl_trace trace;
} builder;

static size_t new_row(builder *b, const gl_node *n, int depth, size_t parent)
{
    gl_profile *p = b->p;
    size_t cap = b->cap_rows;
    GL_GROW(p->rows, b->cap_rows, p->n_rows + 1);
    if (b->cap_rows != cap)
        b->links = gl_xrealloc(b->links, b->cap_rows * sizeof(*b->links));
    size_t r = p->n_rows++;
    p->rows[r] = (gl_profile_row){
        .name = gl_xstrdup(n->name ? n->name : ""), .op = gl_xstrdup(n->op_type),
        .depth = depth, .parent = parent, .flops = -1, .bytes = -1, .decision = -1,
        .cells = gl_xcalloc(p->n_backends, sizeof(gl_profile_cell))};
    b->links[r] = (row_links){SIZE_MAX, SIZE_MAX, SIZE_MAX};
    const gl_function *f = parent == SIZE_MAX && n->graph == b->m->graph &&
                                   strcmp(n->domain, "graphlab.fused") == 0
                               ? gl_called_function(b->m, n) : NULL;
    if (f) {
        const gl_graph *body = f->body;
        gl_profile_row *row = &p->rows[r];
        row->decision = n->prov.decision;
        row->members = gl_xcalloc(body->n_nodes ? body->n_nodes : 1, sizeof(*row->members));
        for (size_t i = 0; i < body->n_nodes; i++)
            if (body->nodes[i])
                row->members[row->n_members++] = gl_xstrdup(body->nodes[i]->name);
    }
    if (parent != SIZE_MAX) {
        row_links *pl = &b->links[parent];
        if (pl->last_child == SIZE_MAX)
            pl->first_child = r;
        else
            b->links[pl->last_child].next_sibling = r;
        pl->last_child = r;
    }
    return r;
}

static bool same_text(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool entry_eq(const void *ctx, uint32_t idx)
{
    const builder *b = ((const void *const *)ctx)[0];
    return strcmp(b->entries[idx].name, ((const void *const *)ctx)[1]) == 0;
}

/* The entry of `name`, added (row SIZE_MAX) when it has none. */
static name_entry *name_find(builder *b, const char *name)
{
    const void *ctx[2] = {b, name};
    uint32_t fresh = (uint32_t)b->n_entries;
    uint32_t i = gl_index_map_intern(&b->names, gl_hash_bytes(name, strlen(name)), entry_eq,
                                     ctx, fresh);
    if (i == fresh) {
        GL_GROW(b->entries, b->cap_entries, b->n_entries + 1);
        b->entries[b->n_entries++] = (name_entry){name, SIZE_MAX, false};
    }
    return &b->entries[i];
}

/* The names of the profiled model's rows and of its groups' members (the first of a
 * repeated name wins). */
static void names_make(builder *b)
{
    gl_profile *p = b->p;
    b->names_made = true;
    for (size_t r = 0; r < p->n_rows; r++) {
        if (p->rows[r].depth != 0)
            continue;
        name_entry *e = name_find(b, p->rows[r].name);
        if (e->row == SIZE_MAX)
            *e = (name_entry){p->rows[r].name, r, false};
        for (size_t k = 0; k < p->rows[r].n_members; k++) {
            e = name_find(b, p->rows[r].members[k]);
            if (e->row == SIZE_MAX)
                *e = (name_entry){p->rows[r].members[k], r, true};
        }
    }
}

/* The child row of `parent` named and typed as node n that backend bi has not taken. */
static size_t child_row(builder *b, unsigned bi, size_t parent, const gl_node *n)
{
    gl_profile *p = b->p;
    for (size_t c = b->links[parent].first_child; c != SIZE_MAX; c = b->links[c].next_sibling)
        if (!p->rows[c].cells[bi].ran && same_text(p->rows[c].name, n->name) &&
            same_text(p->rows[c].op, n->op_type))
            return c;
    return SIZE_MAX;
}

/* A top-level node of another model than the profiled one: the row of the node of the
 * same name and op, else a member's row under its group (made when absent); *parent
 * says which group. SIZE_MAX: a node of its own. */
static size_t foreign_row(builder *b, unsigned bi, const gl_node *n, size_t *parent)
{
    gl_profile *p = b->p;
    if (!b->names_made)
        names_make(b);
    name_entry *e = name_find(b, n->name ? n->name : "");
    if (e->row == SIZE_MAX)
        return SIZE_MAX;
    if (!e->member)
        return !p->rows[e->row].cells[bi].ran && same_text(p->rows[e->row].op, n->op_type)
                   ? e->row : SIZE_MAX;
    *parent = e->row;
    return child_row(b, bi, e->row, n);
}

/* The row of plan entry en on backend bi (entry_rows: rows of the entries before it). */
static size_t row_for(builder *b, unsigned bi, const gl_plan_entry *en, const size_t *entry_rows,
                      bool foreign)
{
    gl_profile *p = b->p;
    size_t parent = en->parent == SIZE_MAX ? SIZE_MAX : entry_rows[en->parent];
    size_t r = SIZE_MAX;
    if (foreign && parent == SIZE_MAX) {
        r = foreign_row(b, bi, en->node, &parent);
    } else if (parent == SIZE_MAX && en->node->index < b->n_top) {
        r = b->top_rows[en->node->index];
        if (r != SIZE_MAX && p->rows[r].cells[bi].ran)
            r = SIZE_MAX; /* not the same node after all */
    } else if (parent != SIZE_MAX) {
        r = child_row(b, bi, parent, en->node);
    }
    if (r == SIZE_MAX) {
        r = new_row(b, en->node, parent == SIZE_MAX ? 0 : p->rows[parent].depth + 1, parent);
        if (parent == SIZE_MAX && !foreign && en->node->index < b->n_top)
            b->top_rows[en->node->index] = r;
    }
    p->rows[r].cells[bi].ran = true;
    p->rows[r].cells[bi].top = en->parent == SIZE_MAX;
    return r;
}

/* ---- one backend ------------------------------------------------------------------------- */

typedef struct session {
    builder *b;
    gl_profile *p;
    unsigned bi;
    bool is_ref;
    gl_exec *e;
    uint64_t t_start;          /* the profile's time origin */
    size_t n_entries;
    size_t *entry_rows;
    uint64_t *acc_ns, *acc_convert; /* this run, by entry */
    size_t *calls;             /* inspection run, by entry */
    uint64_t *begin;           /* trace: node_begin time by entry */
    gl_profile_event *run_calls; /* trace: this run's node calls, written after it */
    size_t n_run_calls, cap_run_calls;
    gl_profile_type *call_types; /* trace: room for one node's input and output types */
    size_t n_call_types;
    uint64_t exec_begin, exec_end;
    uint64_t clock_last;       /* the last time trace_now gave */
    type_map types;
    const gl_profile_options *o;
    /* Samples of the rounds: by entry x round (node, convert), by round (wall, and the
     * model's own nodes summed). */
    double *node_ns, *convert_ns, *wall_ns, *round_ns;
    gl_tensor **outs;          /* a run's graph outputs */
} session;

/* ---- the trace, written as the runs go --------------------------------------------------- */

/* The time for a slice's start or end on this session's track: the monotonic clock, one
 * nanosecond past the last time given when the clock has not moved since (a coarse
 * clock). So a node's slice starts after and ends before the slice that holds it, and
 * lasts more than 0, whatever the clock's resolution. */
static uint64_t trace_now(session *s)
{
    uint64_t t = gl_now_ns();
    if (t <= s->clock_last)
        t = s->clock_last + 1;
    return s->clock_last = t;
}

/* Whether one more event fits under GL_PROFILE_MAX_EVENTS, `pending` events of this run
 * being held for its end; when not, it is counted as dropped. */
static bool trace_room(gl_profile *p, size_t pending)
{
    if (p->n_events + pending < GL_PROFILE_MAX_EVENTS)
        return true;
    p->dropped_events++;
    return false;
}

/* A Session event, `pending` node calls being held for after it. */
static void trace_session(builder *b, gl_profile_event ev, size_t pending)
{
    if (!b->tracing || !trace_room(b->p, pending))
        return;
    gl_trace_event(&b->trace, &ev, NULL);
    b->p->n_events++;
}

/* The trace's start: the process named for the model, a track per run named for it
 * ("fused (dnnl)": the label, then the backend when they differ), and the load's track
 * before them. */
static void trace_open(builder *b, FILE *f)
{
    const gl_profile *p = b->p;
    char name[512];
    snprintf(name, sizeof(name), "graphlab profile %s", p->model);
    gl_trace_begin(&b->trace, f, name);
    gl_trace_track(&b->trace, GL_TRACE_LOAD_TID, "load (and passes)", 0);
    size_t order[GL_PROFILE_MAX_BACKENDS];
    size_t n = gl_profile_run_order(p, order);
    for (size_t i = 0; i < n; i++) {
        const gl_profile_backend *pb = &p->backends[order[i]];
        if (strcmp(pb->name, pb->backend) == 0)
            snprintf(name, sizeof(name), "%s", pb->name);
        else
            snprintf(name, sizeof(name), "%s (%s)", pb->name, pb->backend);
        gl_trace_track(&b->trace, (unsigned)order[i] + 1, name, (int)i + 1);
    }
}

/* GL_ERR_IO when a write to the trace failed (a full disk): the profile stops. */
static gl_status trace_check(const builder *b, const gl_profile_options *o)
{
    if (!b->tracing || !ferror(b->trace.f))
        return GL_OK;
    return gl_fail(GL_ERR_IO, "%s: cannot write: %s", o->trace_name ? o->trace_name : "trace",
                   strerror(errno ? errno : EIO));
}

static void on_run_begin(void *ctx, const gl_exec *e)
{
    (void)e;
    session *s = ctx;
    s->exec_begin = trace_now(s);
}

static void on_run_end(void *ctx, const gl_exec *e, gl_status st)
{
    (void)e;
    (void)st;
    session *s = ctx;
    s->exec_end = trace_now(s);
}

static void on_node_begin(void *ctx, const gl_exec *e, const gl_exec_event *ev)
{
    (void)e;
    session *s = ctx;
    if (ev->entry < s->n_entries)
        s->begin[ev->entry] = trace_now(s);
}

/* The types of a node's outputs in this run, into the session's map. */
static void note_output_types(session *s, const gl_exec_event *ev)
{
    const gl_node *n = ev->node;
    for (size_t k = 0; k < ev->n_outputs; k++) {
        gl_profile_type *slot = n->outputs[k] ? type_slot(&s->types, n->outputs[k]) : NULL;
        if (slot && ev->outputs[k])
            type_set(slot, ev->outputs[k]);
    }
}

/* The types of the graph's inputs (their defaults where none is given), into the map. */
static void note_input_types(session *s, const gl_tensor *const *in, size_t n_in)
{
    const gl_graph *g = gl_exec_model(s->e)->graph;
    for (size_t i = 0; i < g->n_inputs && i < n_in; i++) {
        gl_profile_type *slot = type_slot(&s->types, g->inputs[i]);
        const gl_tensor *t = in[i] ? in[i] : g->inputs[i]->init;
        if (slot && t)
            type_set(slot, t);
    }
}

static void on_timed_end(void *ctx, const gl_exec *e, const gl_exec_event *ev)
{
    (void)e;
    session *s = ctx;
    if (ev->entry >= s->n_entries)
        return;
    /* the slice: from node_begin to here, on the track's clock (ev->ns, the table's time,
     * is the node's own part of it, without the observer's calls) */
    uint64_t end = s->b->tracing ? trace_now(s) : 0;
    s->acc_ns[ev->entry] += ev->ns;
    s->acc_convert[ev->entry] += ev->convert_ns;
    if (!s->b->tracing)
        return;
    note_output_types(s, ev);
    if (!trace_room(s->p, s->n_run_calls))
        return;
    GL_GROW(s->run_calls, s->cap_run_calls, s->n_run_calls + 1);
    s->run_calls[s->n_run_calls++] = (gl_profile_event){
        .kind = GL_PROFILE_EV_NODE, .backend = s->bi, .row = s->entry_rows[ev->entry],
        .entry = ev->entry, .ts_ns = s->begin[ev->entry] - s->t_start,
        .dur_ns = end - s->begin[ev->entry]};
}

/* Position of v among the inputs of its graph; SIZE_MAX when it is none. */
static size_t graph_input_index(const gl_value *v)
{
    const gl_graph *g = v->graph;
    for (size_t k = 0; g && k < g->n_inputs; k++)
        if (g->inputs[k] == v)
            return k;
    return SIZE_MAX;
}

/* What value v, read by plan entry `entry`, held last in this run: value_type's answer,
 * or for an input of a function body run as its body (which no node makes: the call
 * binds it) the call's input in the same place. */
static void entry_value_type(session *s, size_t entry, const gl_value *v, gl_profile_type *out)
{
    value_type(&s->types, v, out);
    const gl_plan_entry *en = gl_exec_plan_at(s->e, entry);
    while (v && out->rank < 0 && en->parent != SIZE_MAX) {
        const gl_plan_entry *call = gl_exec_plan_at(s->e, en->parent);
        size_t k = graph_input_index(v);
        if (strcmp(call->backend, "body") != 0 || k >= call->node->n_inputs)
            return; /* If, Loop and Scan bind their bodies' inputs otherwise */
        v = call->node->inputs[k];
        en = call;
        value_type(&s->types, v, out);
    }
}

/* A node call to the trace, with its row's name and op and the types its values had
 * last in this run. */
static void trace_node(session *s, const gl_profile_event *ev)
{
    const gl_plan_entry *en = gl_exec_plan_at(s->e, ev->entry);
    const gl_node *n = en->node;
    const gl_profile_row *r = &s->p->rows[ev->row];
    gl_profile_type *in = s->call_types, *out = s->call_types + n->n_inputs;
    for (size_t k = 0; k < n->n_inputs; k++)
        entry_value_type(s, ev->entry, n->inputs[k], &in[k]);
    for (size_t k = 0; k < n->n_outputs; k++)
        value_type(&s->types, n->outputs[k], &out[k]);
    gl_trace_node call = {.name = r->name, .op = r->op, .backend = en->backend,
                          .run_backend = s->p->backends[s->bi].backend, .in = in,
                          .n_in = n->n_inputs, .out = out, .n_out = n->n_outputs};
    gl_trace_event(&s->b->trace, ev, &call);
    s->p->n_events++;
}

static int by_start(const void *a, const void *b)
{
    uint64_t x = ((const gl_profile_event *)a)->ts_ns, y = ((const gl_profile_event *)b)->ts_ns;
    return (x > y) - (x < y);
}

/* The observed run that took t0..t1 to the trace, after it: the run and its step loop,
 * then its node calls by start (they were noted as they ended: a group's members before
 * it), so that a parent is written before its children. */
static void trace_run(session *s, uint64_t t0, uint64_t t1)
{
    trace_session(s->b, (gl_profile_event){.kind = GL_PROFILE_EV_RUN, .backend = s->bi,
                                           .ts_ns = t0 - s->t_start, .dur_ns = t1 - t0},
                  s->n_run_calls);
    trace_session(s->b, (gl_profile_event){.kind = GL_PROFILE_EV_EXECUTE, .backend = s->bi,
                                           .ts_ns = s->exec_begin - s->t_start,
                                           .dur_ns = s->exec_end - s->exec_begin},
                  s->n_run_calls);
    qsort(s->run_calls, s->n_run_calls, sizeof(*s->run_calls), by_start);
    for (size_t i = 0; i < s->n_run_calls; i++)
        trace_node(s, &s->run_calls[i]);
    s->n_run_calls = 0;
}

/* The worst of two comparisons (of two outputs of one node). */
static void compare_merge(gl_compare *acc, const gl_compare *c, bool first)
{
    if (first) {
        *acc = *c;
        return;
    }
    acc->same_shape = acc->same_shape && c->same_shape;
    acc->count += c->count;
    acc->max_abs = c->max_abs > acc->max_abs ? c->max_abs : acc->max_abs;
    acc->max_rel = c->max_rel > acc->max_rel ? c->max_rel : acc->max_rel;
    acc->nmse = c->nmse > acc->nmse || c->nmse != c->nmse ? c->nmse : acc->nmse;
    acc->over_tol += c->over_tol;
    acc->nan_mismatch += c->nan_mismatch;
    if (acc->first_bad < 0)
        acc->first_bad = c->first_bad;
    acc->ok = acc->ok && c->ok;
}

static void free_capture(builder *b, size_t row, size_t n_outputs)
{
    if (row >= b->n_captures || !b->captures[row])
        return;
    for (size_t k = 0; k < n_outputs; k++)
        gl_tensor_free(b->captures[row][k]);
    free(b->captures[row]);
    b->captures[row] = NULL;
}

/* Keep the reference outputs of a node that ran once; forget them when it runs again. */
static void capture(session *s, size_t row, const gl_exec_event *ev, size_t calls)
{
    builder *b = s->b;
    if (row >= b->n_captures) {
        size_t n = s->p->n_rows;
        b->captures = gl_xrealloc(b->captures, n * sizeof(*b->captures));
        memset(b->captures + b->n_captures, 0, (n - b->n_captures) * sizeof(*b->captures));
        b->n_captures = n;
    }
    if (calls != 1) {
        free_capture(b, row, ev->n_outputs);
        return;
    }
    gl_tensor **keep = gl_xcalloc(ev->n_outputs ? ev->n_outputs : 1, sizeof(*keep));
    for (size_t k = 0; k < ev->n_outputs; k++)
        if (ev->outputs[k])
            keep[k] = gl_exec_plain_kept(s->e, ev->outputs[k]);
    b->captures[row] = keep;
}

/* Compare a node's outputs with the reference's; the first row over tolerance in
 * execution order is where the runs part ways. */
static gl_tolerance tolerance_of(const gl_profile_options *o)
{
    return (gl_tolerance){.rtol = o->rtol, .atol = o->atol, .steps = o->steps};
}

/* Graph output i of the model session s runs (its quantization decides the rule). */
static const gl_value *output_value(const session *s, size_t i)
{
    const gl_graph *g = gl_exec_model(s->e)->graph;
    return i < g->n_outputs ? g->outputs[i] : NULL;
}

static void compare_node(session *s, size_t row, const gl_exec_event *ev, size_t calls)
{
    gl_profile_cell *cell = &s->p->rows[row].cells[s->bi];
    gl_tensor **ref = row < s->b->n_captures ? s->b->captures[row] : NULL;
    if (calls != 1 || !ref) {
        cell->compared = false;
        return;
    }
    bool any = false;
    for (size_t k = 0; k < ev->n_outputs; k++) {
        if (!ev->outputs[k] || !ref[k])
            continue;
        gl_tensor *got = gl_exec_plain(s->e, ev->outputs[k]);
        if (!got)
            continue;
        gl_compare c;
        gl_tolerance tol = tolerance_of(s->o);
        gl_compare_value(ev->node->outputs[k], got, ref[k], &tol, &c);
        gl_tensor_free(got);
        compare_merge(&cell->cmp, &c, !any);
        any = true;
    }
    cell->compared = any;
    gl_profile_backend *pb = &s->p->backends[s->bi];
    if (any && !cell->cmp.ok && pb->first_divergence == SIZE_MAX)
        pb->first_divergence = row;
}

static void on_inspect_end(void *ctx, const gl_exec *e, const gl_exec_event *ev)
{
    (void)e;
    session *s = ctx;
    if (ev->entry >= s->n_entries || ev->status != GL_OK)
        return;
    size_t calls = ++s->calls[ev->entry];
    size_t row = s->entry_rows[ev->entry];
    gl_profile_row *r = &s->p->rows[row];
    const gl_node *n = ev->node;
    note_output_types(s, ev);
    if (!r->in && !r->out) {
        r->n_in = n->n_inputs;
        r->n_out = n->n_outputs;
        r->in = types_new(r->n_in);
        r->out = types_new(r->n_out);
    }
    for (size_t k = 0; k < r->n_in && k < n->n_inputs; k++)
        value_type(&s->types, n->inputs[k], &r->in[k]);
    for (size_t k = 0; k < r->n_out && k < n->n_outputs; k++)
        value_type(&s->types, n->outputs[k], &r->out[k]);
    r->flops = gl_profile_flops(n, r->in, r->n_in, r->out, r->n_out);
    r->bytes = gl_profile_bytes(r->in, r->n_in, r->out, r->n_out);
    if (s->is_ref)
        capture(s, row, ev, calls);
    else if (s->p->ref != SIZE_MAX)
        compare_node(s, row, ev, calls);
}

static void free_outputs(gl_tensor **outs, size_t n)
{
    for (size_t i = 0; outs && i < n; i++) {
        gl_tensor_free(outs[i]);
        outs[i] = NULL;
    }
}

/* One gl_exec_run; outputs freed unless `keep`. */
static gl_status run_once(session *s, const gl_tensor *const *in, size_t n_in, gl_tensor **outs,
                          bool keep)
{
    size_t n_out = s->p->n_outputs;
    gl_status st = gl_exec_run(s->e, in, n_in, outs, n_out);
    if (!keep)
        free_outputs(outs, n_out);
    return st;
}

static void observe(session *s, void (*node_end)(void *, const gl_exec *, const gl_exec_event *))
{
    gl_exec_observer ob = {.ctx = s, .run_begin = on_run_begin, .run_end = on_run_end,
                           .node_begin = s->b->tracing ? on_node_begin : NULL,
                           .node_end = node_end};
    gl_exec_set_observer(s->e, node_end ? &ob : NULL);
}

/* The model's own nodes (not those inside bodies) summed over this run's entries. */
static double own_nodes_ns(const session *s)
{
    double sum = 0;
    for (size_t i = 0; i < s->n_entries; i++)
        if (gl_exec_plan_at(s->e, i)->parent == SIZE_MAX)
            sum += (double)s->acc_ns[i];
    return sum;
}

/* Round r on this backend: an observed run, then a plain one. */
static gl_status one_round(session *s, const gl_tensor *const *in, size_t n_in, int r)
{
    size_t reps = (size_t)s->o->reps;
    memset(s->acc_ns, 0, s->n_entries * sizeof(*s->acc_ns));
    memset(s->acc_convert, 0, s->n_entries * sizeof(*s->acc_convert));
    observe(s, on_timed_end);
    uint64_t t0 = trace_now(s);
    gl_status st = run_once(s, in, n_in, s->outs, false);
    uint64_t t1 = trace_now(s);
    observe(s, NULL);
    if (st != GL_OK)
        return st;
    for (size_t i = 0; i < s->n_entries; i++) {
        s->node_ns[i * reps + (size_t)r] = (double)s->acc_ns[i];
        s->convert_ns[i * reps + (size_t)r] = (double)s->acc_convert[i];
    }
    s->round_ns[r] = own_nodes_ns(s);
    if (s->b->tracing) {
        trace_run(s, t0, t1);
        if ((st = trace_check(s->b, s->o)) != GL_OK)
            return st;
    }
    t0 = gl_now_ns();
    st = run_once(s, in, n_in, s->outs, false);
    s->wall_ns[r] = (double)(gl_now_ns() - t0);
    return st;
}

/* A backend's turn at the runs begins (GL_SCRATCH_FAULT) or ends (GL_SCRATCH_RELEASE).
 * The plans are held together but run one at a time: only the running one keeps its
 * scratch resident (its intermediates: the decoder's three plans held about 100 MB of
 * them at once, next to 1.15 GB of mapped weights, issue 23). Faulted in before its
 * runs, so that the timed ones find their buffers resident as a plan of its own would
 * and no node's time holds page faults. */
static void turn(session *s, gl_scratch_op op)
{
    if (s->p->n_backends > 1)
        gl_exec_scratch(s->e, op);
}

/* Warm-up runs, then the rounds, every backend in turn within each (profile.h says why). */
static gl_status timed_runs(session *ss, size_t n, const gl_tensor *const *in, size_t n_in,
                            const gl_profile_options *o)
{
    gl_status st = GL_OK;
    for (size_t bi = 0; bi < n && ss[bi].b->tracing; bi++)
        note_input_types(&ss[bi], in, n_in);
    for (int w = 0; w < o->warmup && st == GL_OK; w++)
        for (size_t bi = 0; bi < n && st == GL_OK; bi++) {
            turn(&ss[bi], GL_SCRATCH_FAULT);
            st = run_once(&ss[bi], in, n_in, ss[bi].outs, false);
            turn(&ss[bi], GL_SCRATCH_RELEASE);
        }
    for (int r = 0; r < o->reps && st == GL_OK; r++)
        for (size_t bi = 0; bi < n && st == GL_OK; bi++) {
            turn(&ss[bi], GL_SCRATCH_FAULT);
            st = one_round(&ss[bi], in, n_in, r);
            turn(&ss[bi], GL_SCRATCH_RELEASE);
        }
    return st;
}

/* The graph outputs of this run against the expected ones (a data set's), as `run
 * --data` compares them: gl_compare_value with the same tolerances. */
static void compare_expected(session *s, const gl_tensor *const *expected)
{
    gl_profile *p = s->p;
    gl_profile_backend *pb = &p->backends[s->bi];
    pb->expected_ok = true;
    if (!expected)
        return;
    pb->expected = gl_xcalloc(p->n_outputs ? p->n_outputs : 1, sizeof(*pb->expected));
    gl_tolerance tol = tolerance_of(s->o);
    for (size_t i = 0; i < p->n_outputs; i++) {
        if (!expected[i] || !s->outs[i])
            continue;
        gl_compare_value(output_value(s, i), s->outs[i], expected[i], &tol, &pb->expected[i]);
        pb->expected_ok = pb->expected_ok && pb->expected[i].ok;
    }
}

/* The untimed run: types, FLOPs, the reference's outputs kept or compared; every run's
 * outputs against the expected ones. */
static gl_status inspect_run(session *s, const gl_tensor *const *in, size_t n_in)
{
    gl_profile *p = s->p;
    builder *b = s->b;
    gl_tensor **outs = s->outs;
    note_input_types(s, in, n_in);
    observe(s, on_inspect_end);
    gl_status st = run_once(s, in, n_in, outs, true);
    observe(s, NULL);
    if (st != GL_OK)
        return st;
    compare_expected(s, s->o->expected);
    gl_profile_backend *pb = &p->backends[s->bi];
    if (s->is_ref) {
        b->ref_outputs = gl_xcalloc(p->n_outputs ? p->n_outputs : 1, sizeof(*b->ref_outputs));
        memcpy(b->ref_outputs, outs, p->n_outputs * sizeof(*outs));
        memset(outs, 0, p->n_outputs * sizeof(*outs));
        return GL_OK;
    }
    if (p->ref != SIZE_MAX) {
        pb->compared = true;
        pb->outputs_ok = true;
        pb->outputs = gl_xcalloc(p->n_outputs ? p->n_outputs : 1, sizeof(*pb->outputs));
        gl_tolerance tol = tolerance_of(s->o);
        for (size_t i = 0; i < p->n_outputs; i++) {
            gl_compare_value(output_value(s, i), outs[i], b->ref_outputs[i], &tol,
                             &pb->outputs[i]);
            pb->outputs_ok = pb->outputs_ok && pb->outputs[i].ok;
        }
    }
    free_outputs(outs, p->n_outputs);
    return GL_OK;
}

/* The plan's rows after the runs: what ran each entry, how, and its statistics. */
static void fill_cells(session *s)
{
    size_t reps = (size_t)s->o->reps;
    for (size_t i = 0; i < s->n_entries; i++) {
        const gl_plan_entry *en = gl_exec_plan_at(s->e, i);
        gl_profile_row *r = &s->p->rows[s->entry_rows[i]];
        gl_profile_cell *c = &r->cells[s->bi];
        c->entry = i;
        c->backend = en->backend;
        c->fell_back = en->fell_back;
        gl_plan_info_copy(&en->info, &c->info);
        c->conversions = en->conversions;
        snprintf(c->over, sizeof(c->over), "%s", en->over ? en->over : "");
        c->calls = s->calls[i];
        c->ms = gl_profile_stats(s->node_ns + i * reps, reps);
        c->convert_ms = gl_profile_stats(s->convert_ns + i * reps, reps).median;
    }
}

/* After the rounds: the statistics, the inspection run, the cells. */
static gl_status session_finish(session *s, const gl_tensor *const *in, size_t n_in)
{
    gl_profile_backend *pb = &s->p->backends[s->bi];
    size_t reps = (size_t)s->o->reps;
    gl_exec_get_stats(s->e, &pb->stats);
    gl_status st = inspect_run(s, in, n_in);
    if (st != GL_OK)
        return st;
    fill_cells(s);
    pb->wall = gl_profile_stats(s->wall_ns, reps);
    pb->nodes = gl_profile_stats(s->round_ns, reps);
    gl_exec_summary(s->e, pb->summary, sizeof(pb->summary));
    return GL_OK;
}

static void session_free(session *s)
{
    free(s->entry_rows);
    free(s->acc_ns);
    free(s->acc_convert);
    free(s->calls);
    free(s->begin);
    free(s->run_calls);
    for (size_t k = 0; s->call_types && k < s->n_call_types; k++)
        free(s->call_types[k].dims);
    free(s->call_types);
    free(s->node_ns);
    free(s->convert_ns);
    free(s->wall_ns);
    free(s->round_ns);
    if (s->outs)
        free_outputs(s->outs, s->p->n_outputs);
    free(s->outs);
    type_map_free(&s->types);
    gl_exec_free(s->e);
}

/* Backend bi's plan, its rows, and room for its samples. */
static gl_status session_open(session *s, builder *b, unsigned bi, const gl_model *m,
                              const gl_tensor *const *in, size_t n_in,
                              const gl_profile_options *o, uint64_t t_start)
{
    gl_profile *p = b->p;
    gl_profile_backend *pb = &p->backends[bi];
    *s = (session){.b = b, .p = p, .bi = bi, .is_ref = bi == p->ref, .t_start = t_start, .o = o};
    if (m->graph->n_inputs != b->m->graph->n_inputs ||
        m->graph->n_outputs != b->m->graph->n_outputs)
        return gl_fail(GL_ERR_INPUT, "%s: run '%s': its model has %zu inputs and %zu outputs, "
                       "the profiled one %zu and %zu", p->model, pb->name, m->graph->n_inputs,
                       m->graph->n_outputs, b->m->graph->n_inputs, b->m->graph->n_outputs);
    gl_exec_options eo = {.backend = pb->backend, .threads = o->threads, .layout = o->layout,
                          .max_memory = o->max_memory, .dnnl_fault = o->dnnl_fault,
                          .dnnl_delay = o->dnnl_delay,
                          .dnnl_no_winograd = o->dnnl_no_winograd,
                          /* the backends hold the weights together: one copy, mapped */
                          .dnnl_weights_in_place = p->n_backends > 1,
                          .batch = gl_inputs_batch(m->graph, in, n_in)};
    uint64_t t0 = gl_now_ns();
    gl_status st = gl_exec_create(m, &eo, &s->e);
    uint64_t t1 = gl_now_ns();
    if (st != GL_OK)
        return st;
    pb->create_ms = (double)(t1 - t0) / 1e6;
    trace_session(b, (gl_profile_event){.kind = GL_PROFILE_EV_CREATE, .backend = bi,
                                        .ts_ns = t0 - t_start, .dur_ns = t1 - t0},
                  0);
    size_t n = s->n_entries = gl_exec_plan_count(s->e);
    size_t reps = (size_t)o->reps;
    if (n > GL_PROFILE_MAX_SAMPLES / reps)
        return gl_fail(GL_ERR_INPUT, "%s: %zu plan entries x %zu timed runs are more samples "
                       "than a profile keeps (%u); time fewer runs", p->model, n, reps,
                       GL_PROFILE_MAX_SAMPLES);
    s->entry_rows = gl_xcalloc(n ? n : 1, sizeof(*s->entry_rows));
    for (size_t i = 0; i < n; i++)
        s->entry_rows[i] = row_for(b, bi, gl_exec_plan_at(s->e, i), s->entry_rows,
                                   pb->other_model);
    s->acc_ns = gl_xcalloc(n ? n : 1, sizeof(*s->acc_ns));
    s->acc_convert = gl_xcalloc(n ? n : 1, sizeof(*s->acc_convert));
    s->calls = gl_xcalloc(n ? n : 1, sizeof(*s->calls));
    s->begin = gl_xcalloc(n ? n : 1, sizeof(*s->begin));
    for (size_t i = 0; i < n; i++) {
        const gl_node *node = gl_exec_plan_at(s->e, i)->node;
        size_t arity = node->n_inputs + node->n_outputs;
        s->n_call_types = arity > s->n_call_types ? arity : s->n_call_types;
    }
    s->call_types = types_new(s->n_call_types);
    size_t samples = n * reps > 0 ? n * reps : 1;
    s->node_ns = gl_xcalloc(samples, sizeof(*s->node_ns));
    s->convert_ns = gl_xcalloc(samples, sizeof(*s->convert_ns));
    s->wall_ns = gl_xcalloc(reps, sizeof(*s->wall_ns));
    s->round_ns = gl_xcalloc(reps, sizeof(*s->round_ns));
    s->outs = gl_xcalloc(p->n_outputs ? p->n_outputs : 1, sizeof(*s->outs));
    pb->first_divergence = SIZE_MAX;
    return GL_OK;
}

/* Every backend's plan, the interleaved rounds, then each backend's inspection run in
 * order: the reference's first, which the others compare with. A plan goes as soon as
 * its inspection run is done (what the profile keeps of it, the cells and the
 * reference's outputs, outlives it): its buffers and packed weights are not held
 * through the next backend's. Its scratch is released first: the heap keeps what is
 * freed, the pages would stay resident. */
static gl_status profile_backends(builder *b, const gl_model *const *models,
                                  const gl_tensor *const *in, size_t n_in,
                                  const gl_profile_options *o, uint64_t t_start)
{
    gl_profile *p = b->p;
    size_t n = p->n_backends, opened = 0, done = 0;
    session ss[GL_PROFILE_MAX_BACKENDS];
    gl_status st = GL_OK;
    for (; opened < n && st == GL_OK; opened++)
        st = session_open(&ss[opened], b, (unsigned)opened,
                          models[opened] ? models[opened] : b->m, in, n_in, o, t_start);
    if (st == GL_OK)
        st = timed_runs(ss, n, in, n_in, o);
    for (; done < n && st == GL_OK; done++) {
        st = session_finish(&ss[done], in, n_in);
        turn(&ss[done], GL_SCRATCH_RELEASE);
        session_free(&ss[done]);
    }
    for (size_t bi = done; bi < opened; bi++)
        session_free(&ss[bi]);
    return st;
}

/* ---- the whole profile ------------------------------------------------------------------- */

/* The runs asked for: the reference first (the others compare against its run), runs
 * on other models last (the profiled model's give the rows their order). */
static gl_status choose_backends(gl_profile *p, const gl_profile_options *o,
                                 const gl_model **models)
{
    const char *names[GL_PROFILE_MAX_BACKENDS], *labels[GL_PROFILE_MAX_BACKENDS] = {0};
    const gl_model *given[GL_PROFILE_MAX_BACKENDS] = {0};
    size_t n = o->n_backends;
    if (n > GL_PROFILE_MAX_BACKENDS)
        return gl_fail(GL_ERR_INPUT, "profile: at most %d backends", GL_PROFILE_MAX_BACKENDS);
    if (n == 0) {
        names[n++] = "ref";
        if (gl_backend_dnnl())
            names[n++] = "dnnl";
    } else {
        memcpy(names, o->backends, n * sizeof(*names));
        memcpy(labels, o->labels, n * sizeof(*labels));
        memcpy(given, o->models, n * sizeof(*given));
    }
    p->ref = SIZE_MAX;
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < n; i++) {
            const gl_backend *be = gl_backend_find(names[i]);
            if (!be)
                return gl_fail(GL_ERR_INPUT, "profile: backend '%s' is unknown or not built "
                               "in (ref, dnnl)", names[i]);
            bool is_ref = be == gl_backend_ref() && !given[i] &&
                          (!labels[i] || strcmp(labels[i], be->name) == 0);
            if (pass != (is_ref ? 0 : given[i] ? 2 : 1))
                continue;
            const char *label = labels[i] ? labels[i] : be->name;
            for (size_t k = 0; k < p->n_backends; k++)
                if (strcmp(p->backends[k].name, label) == 0)
                    return gl_fail(GL_ERR_INPUT, "profile: run '%s' is given twice", label);
            if (is_ref)
                p->ref = p->n_backends;
            else if (!given[i])
                p->primary = p->n_backends;
            models[p->n_backends] = given[i];
            p->backends[p->n_backends++] = (gl_profile_backend){
                .name = label, .backend = be->name, .other_model = given[i] != NULL};
        }
    }
    if (p->primary == SIZE_MAX)
        p->primary = p->n_backends - 1;
    return GL_OK;
}

/* Totals of the model's own nodes, and each row's share of them. */
static void totals(gl_profile *p)
{
    for (size_t bi = 0; bi < p->n_backends; bi++) {
        gl_profile_backend *pb = &p->backends[bi];
        for (size_t r = 0; r < p->n_rows; r++) {
            const gl_profile_cell *c = &p->rows[r].cells[bi];
            if (c->ran && c->top) {
                pb->node_ms += c->ms.median;
                pb->convert_ms += c->convert_ms;
            }
        }
        for (size_t r = 0; r < p->n_rows; r++) {
            gl_profile_cell *c = &p->rows[r].cells[bi];
            c->pct = c->ran && pb->node_ms > 0 ? 100.0 * c->ms.median / pb->node_ms : 0;
        }
    }
    for (size_t r = 0; r < p->n_rows; r++) {
        const gl_profile_row *row = &p->rows[r];
        if (row->parent == SIZE_MAX || !p->rows[row->parent].n_members)
            continue;
        for (size_t bi = 0; bi < p->n_backends; bi++) {
            const gl_profile_cell *c = &row->cells[bi];
            gl_profile_cell *g = &p->rows[row->parent].cells[bi];
            if (!c->ran)
                continue;
            g->members_ms += c->ms.median;
            g->members_min_ms += c->ms.min;
            g->members_max_ms += c->ms.max;
        }
    }
}

static void builder_free(builder *b)
{
    for (size_t r = 0; r < b->n_captures; r++)
        free_capture(b, r, b->p->rows[r].n_out);
    free(b->captures);
    free_outputs(b->ref_outputs, b->p->n_outputs);
    free(b->ref_outputs);
    free(b->links);
    free(b->top_rows);
    gl_index_map_free(&b->names);
    free(b->entries);
}

gl_status gl_profile_run(const gl_model *m, const gl_tensor *const *inputs, size_t n_inputs,
                         const gl_profile_options *o, gl_profile **out)
{
    *out = NULL;
    if (!m || !m->graph)
        return gl_fail(GL_ERR_INPUT, "profile: no model");
    if (o->reps < 1 || o->warmup < 0)
        return gl_fail(GL_ERR_INPUT, "profile: needs at least one timed run (reps %d, "
                       "warmup %d)", o->reps, o->warmup);
    uint64_t t_start = gl_now_ns() - o->load_ns;
    const gl_graph *g = m->graph;
    gl_profile *p = gl_xcalloc(1, sizeof(*p));
    p->model = gl_xstrdup(m->path ? m->path : "<model>");
    p->reps = o->reps;
    p->warmup = o->warmup;
    p->threads = o->threads;
    p->rtol = o->rtol;
    p->atol = o->atol;
    p->n_outputs = g->n_outputs;
    p->output_names = gl_xcalloc(g->n_outputs ? g->n_outputs : 1, sizeof(*p->output_names));
    for (size_t i = 0; i < g->n_outputs; i++)
        p->output_names[i] = gl_xstrdup(g->outputs[i]->name);
    if (o->expected) {
        p->has_expected = gl_xcalloc(g->n_outputs ? g->n_outputs : 1, sizeof(bool));
        for (size_t i = 0; i < g->n_outputs; i++)
            p->has_expected[i] = o->expected[i] != NULL;
    }
    const gl_model *models[GL_PROFILE_MAX_BACKENDS] = {0};
    p->primary = SIZE_MAX;
    gl_status st = choose_backends(p, o, models);
    builder b = {.p = p, .m = m, .n_top = g->n_nodes, .tracing = o->trace != NULL};
    b.top_rows = gl_xmalloc((g->n_nodes ? g->n_nodes : 1) * sizeof(*b.top_rows));
    for (size_t i = 0; i < g->n_nodes; i++)
        b.top_rows[i] = SIZE_MAX;
    if (b.tracing)
        trace_open(&b, o->trace);
    if (st == GL_OK && o->load_ns)
        trace_session(&b, (gl_profile_event){.kind = GL_PROFILE_EV_LOAD, .dur_ns = o->load_ns}, 0);
    if (st == GL_OK)
        st = profile_backends(&b, models, inputs, n_inputs, o, t_start);
    if (st == GL_OK && b.tracing) {
        gl_trace_end(&b.trace);
        st = trace_check(&b, o);
    }
    builder_free(&b);
    if (st != GL_OK) {
        gl_profile_free(p);
        return st;
    }
    totals(p);
    *out = p;
    return GL_OK;
}

size_t gl_profile_run_named(const gl_profile *p, const char *label)
{
    for (size_t bi = 0; bi < p->n_backends; bi++)
        if (strcmp(p->backends[bi].name, label) == 0)
            return bi;
    return SIZE_MAX;
}

size_t gl_profile_run_order(const gl_profile *p, size_t order[GL_PROFILE_MAX_BACKENDS])
{
    size_t fused = gl_profile_run_named(p, "fused"), unfused = gl_profile_run_named(p, "unfused");
    size_t n = 0;
    for (size_t bi = 0; bi < p->n_backends; bi++) {
        if (bi == unfused && fused != SIZE_MAX)
            continue;
        if (bi == fused && unfused != SIZE_MAX)
            order[n++] = unfused;
        order[n++] = bi;
    }
    return n;
}

void gl_profile_free(gl_profile *p)
{
    if (!p)
        return;
    for (size_t r = 0; r < p->n_rows; r++) {
        gl_profile_row *row = &p->rows[r];
        for (size_t k = 0; row->in && k < row->n_in; k++)
            free(row->in[k].dims);
        for (size_t k = 0; row->out && k < row->n_out; k++)
            free(row->out[k].dims);
        free(row->in);
        free(row->out);
        free(row->cells);
        for (size_t k = 0; k < row->n_members; k++)
            free(row->members[k]);
        free(row->members);
        free(row->name);
        free(row->op);
    }
    free(p->rows);
    for (size_t bi = 0; bi < p->n_backends; bi++)
    {
        free(p->backends[bi].outputs);
        free(p->backends[bi].expected);
    }
    free(p->has_expected);
    for (size_t i = 0; i < p->n_outputs; i++)
        free(p->output_names[i]);
    free(p->output_names);
    free(p->model);
    free(p);
}

/* ---- reading the times ------------------------------------------------------------------- */

gl_profile_stat gl_profile_row_stat(const gl_profile *p, const gl_profile_row *r, size_t bi,
                                    bool *ran)
{
    *ran = false;
    if (bi >= p->n_backends)
        return (gl_profile_stat){0};
    const gl_profile_cell *c = &r->cells[bi];
    if (c->ran && c->calls) {
        *ran = true;
        return c->ms;
    }
    if (r->n_members && c->members_ms > 0) {
        *ran = true;
        return (gl_profile_stat){c->members_ms, c->members_min_ms, c->members_max_ms};
    }
    return (gl_profile_stat){0};
}

gl_profile_ratio gl_profile_ratio_of(gl_profile_stat before, gl_profile_stat after,
                                     bool same_kernel)
{
    gl_profile_ratio r = {.same_kernel = same_kernel};
    if (before.median <= 0 || after.median <= 0)
        return r;
    r.known = true;
    r.value = before.median / after.median;
    r.approx = before.min <= after.max && after.min <= before.max;
    return r;
}

void gl_profile_ratio_text(gl_profile_ratio r, bool utf8, char *buf, size_t len)
{
    const char *approx = utf8 ? "≈" : "~=";
    if (r.same_kernel)
        snprintf(buf, len, "%s", approx);
    else if (!r.known)
        snprintf(buf, len, "-");
    else if (r.approx)
        snprintf(buf, len, "%s %.2fx", approx, r.value);
    else
        snprintf(buf, len, "%.2fx", r.value);
}

/* Same text, or both absent. */
static bool text_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

bool gl_profile_same_kernel(const gl_profile_row *r, const gl_profile_cell *a,
                            const gl_profile_cell *b)
{
    /* A group and its members are the very thing fusion changed; a node inside a body
     * is its caller's business. */
    if (r->n_members || !a->ran || !b->ran || !a->top || !b->top)
        return false;
    return text_eq(a->backend, b->backend) && text_eq(a->info.impl, b->info.impl) &&
           text_eq(a->info.in_layouts, b->info.in_layouts) &&
           text_eq(a->info.out_layouts, b->info.out_layouts);
}

double gl_profile_row_lost(const gl_profile *p, const gl_profile_row *r, size_t fused,
                           size_t unfused)
{
    bool ran_f, ran_u;
    if (fused == SIZE_MAX || unfused == SIZE_MAX || !r->n_members)
        return 0;
    gl_profile_stat f = gl_profile_row_stat(p, r, fused, &ran_f);
    gl_profile_stat u = gl_profile_row_stat(p, r, unfused, &ran_u);
    return ran_f && ran_u ? gl_profile_fusion_lost(f, u) : 0;
}

double gl_profile_fusion_lost(gl_profile_stat fused, gl_profile_stat members)
{
    if (fused.median <= 0 || members.median <= 0 || fused.min <= members.median)
        return 0;
    return fused.median - members.median;
}

void gl_profile_expected_text(const gl_profile *p, bool stable, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (!p->has_expected)
        return;
    for (size_t bi = 0; bi < p->n_backends && used < len; bi++) {
        const gl_profile_backend *b = &p->backends[bi];
        double worst = 0;
        bool shape = false; /* an output of another dtype or shape: no max_abs to give */
        for (size_t i = 0; b->expected && i < p->n_outputs; i++) {
            if (!p->has_expected[i] || b->expected[i].ok)
                continue;
            shape = shape || !b->expected[i].same_shape;
            worst = b->expected[i].max_abs > worst ? b->expected[i].max_abs : worst;
        }
        int n = snprintf(buf + used, len - used, "%s%s %s", bi ? ", " : "", b->name,
                         b->expected_ok ? "ok" : "MISMATCH");
        used += n > 0 ? (size_t)n : 0;
        if (!b->expected_ok && used < len)
            n = shape    ? snprintf(buf + used, len - used, " (dtype or shape differs)")
                : stable ? snprintf(buf + used, len - used, " max_abs ~")
                         : snprintf(buf + used, len - used, " max_abs %.2g", worst);
        else
            n = 0;
        used += n > 0 ? (size_t)n : 0;
    }
}

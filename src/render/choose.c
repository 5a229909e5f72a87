/* choose.c — stage 1: what to draw so that the drawing needs at most max_nodes boxes
 * (stages.h): the whole graph; the whole graph with constants folded; the neighbourhood
 * of a focus node (breadth first while the box budget lasts); or nodes collapsed into
 * groups by name prefix at the deepest depth that fits, or into chunks in graph order when
 * names carry no usable prefix. The view's note says what was drawn instead of the whole.
 */
#include "render/stages.h"

#include "util/hash.h"
#include "util/plural.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_NODES 1500
#define MIN_MAX_NODES 16
#define DEFAULT_RADIUS 3
/* Past this many boxes edge labels become xlabels: dot turns a `label` into a virtual node
 * in an extra rank and lays out about 3x slower (1,500 boxes: ~1.5 s vs ~0.5 s); xlabels
 * are placed after the layout. */
#define XLABEL_ABOVE 400
/* Layout work (cost.c) past which dot's effort is bounded, and past which a drawing is
 * too slow even so and gets fewer boxes: see bench/README.md (bench_render). */
#define WORK_BOUND 1000000
#define WORK_LIMIT 4000000
/* The drawing made after a layout ran out of time. */
#define EMERGENCY_BOXES 60

/* ==== what the caller asked for ======================================================== */

settings gl_rv_resolve_opts(const gl_render_opts *o)
{
    settings s = {.max_boxes = DEFAULT_MAX_NODES, .radius = DEFAULT_RADIUS, .legend = true};
    if (!o)
        return s;
    s.one_line = o->one_line;
    s.legend = !o->no_legend;
    if (o->max_nodes)
        s.max_boxes = o->max_nodes < MIN_MAX_NODES ? MIN_MAX_NODES : o->max_nodes;
    if (o->radius > 0)
        s.radius = o->radius;
    s.fold_constants = o->fold_constants;
    s.focus = o->focus && *o->focus ? o->focus : NULL;
    s.also = o->also;
    s.n_also = o->also ? o->n_also : 0;
    s.widen = o->widen;
    s.n_widen = o->widen ? o->n_widen : 0;
    s.shared_once = o->shared_once;
    s.xlabels = o->xlabels;
    s.title = o->title;
    s.diff = o->diff;
    return s;
}

/* ==== big graphs: neighbourhood ========================================================= */

/* An upper bound of the boxes a node brings into a neighbourhood view: itself, two
 * stubs, its producer-less inputs (a box, plus an output box if one is also an output),
 * its copies of shared Constant nodes and its graph outputs. Summing bounds keeps the
 * real count under the budget. */
static size_t node_cost(const gl_node *n, const uint32_t *node_sharers)
{
    size_t cost = 3;
    for (size_t pass = 0; pass < 2; pass++) {
        gl_value *const *vals = pass == 0 ? n->inputs : n->implicit;
        size_t count = pass == 0 ? n->n_inputs : n->n_implicit;
        for (size_t i = 0; i < count; i++) {
            const gl_node *p = vals[i] ? vals[i]->producer : NULL;
            if (vals[i] && !p)
                cost += 2;
            else if (p && gl_rv_node_of(n->graph, p) && node_sharers[p->index] > 1)
                cost += 1;
        }
    }
    for (size_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && n->outputs[k]->n_output_refs > 0)
            cost++;
    return cost;
}

typedef struct bfs {
    const gl_graph *g;
    uint32_t *node_sharers; /* by node index (gl_rv_count_node_sharers), owned */
    bool shared_once;       /* a shared Constant node is one box: drawn, never walked
                             * through */
    int radius;
    bool *keep;
    int *dist;
    size_t *queue, head, tail;
    size_t used, budget, kept;
    bool cut_short;
} bfs;

/* Visit a neighbour; false when the budget is spent (the walk stops there). */
static bool bfs_visit(bfs *w, const gl_node *m, int d)
{
    if (!gl_rv_node_of(w->g, m) || w->keep[m->index])
        return true;
    /* A shared Constant node is drawn as copies beside its readers (or once, wired to
     * the readers drawn): no way into every part of the graph that reads it. */
    bool shared = w->node_sharers[m->index] > 1;
    if (shared && !w->shared_once)
        return true;
    size_t cost = node_cost(m, w->node_sharers);
    if (w->used + cost > w->budget) {
        w->cut_short = true;
        return false;
    }
    w->used += cost;
    w->keep[m->index] = true;
    w->dist[m->index] = shared ? w->radius : d;
    w->queue[w->tail++] = m->index;
    w->kept++;
    return true;
}

static bool bfs_expand(bfs *w, const gl_node *n, int d)
{
    for (size_t pass = 0; pass < 2; pass++) {
        gl_value *const *vals = pass == 0 ? n->inputs : n->implicit;
        size_t count = pass == 0 ? n->n_inputs : n->n_implicit;
        for (size_t i = 0; i < count; i++)
            if (vals[i] && !bfs_visit(w, vals[i]->producer, d))
                return false;
    }
    for (size_t k = 0; k < n->n_outputs; k++) {
        const gl_value *v = n->outputs[k];
        for (size_t i = 0; v && i < v->n_uses; i++)
            if (!bfs_visit(w, v->uses[i].node, d))
                return false;
    }
    return true;
}

/* The left-out producers and/or consumers of each widened node drawn, in order (each
 * may widen at a node an earlier one brought in). They are walked no further. */
static void widen_neighbourhood(bfs *w, const settings *set)
{
    for (size_t k = 0; k < set->n_widen; k++) {
        const gl_node *n = set->widen[k].node ? gl_find_node(w->g, set->widen[k].node) : NULL;
        if (!n || !w->keep[n->index])
            continue;
        for (size_t i = 0; set->widen[k].producers && i < n->n_inputs; i++)
            if (n->inputs[i] && !bfs_visit(w, n->inputs[i]->producer, w->radius))
                return;
        for (size_t o = 0; set->widen[k].consumers && o < n->n_outputs; o++) {
            const gl_value *v = n->outputs[o];
            for (size_t i = 0; v && i < v->n_uses; i++)
                if (!bfs_visit(w, v->uses[i].node, w->radius))
                    return;
        }
    }
}

/* A node the neighbourhood is centred on, at distance 0. */
static void bfs_seed(bfs *w, const gl_node *n)
{
    if (w->keep[n->index])
        return;
    w->keep[n->index] = true;
    w->dist[n->index] = 0;
    w->queue[w->tail++] = n->index;
    w->used += node_cost(n, w->node_sharers);
    w->kept++;
}

/* Nodes within `radius` hops of focus (and of set->also), breadth first, while the box
 * budget lasts; then set->widen. */
static size_t select_neighbourhood(const gl_graph *g, const gl_node *focus, const settings *set,
                                   bool *keep, bool *cut_short)
{
    int radius = set->radius;
    bfs w = {.g = g, .node_sharers = gl_rv_count_node_sharers(g),
             .shared_once = set->shared_once, .radius = radius, .keep = keep,
             .dist = gl_xmalloc((g->n_nodes + 1) * sizeof(int)),
             .queue = gl_xmalloc((g->n_nodes + 1) * sizeof(size_t)), .budget = set->max_boxes};
    /* The focus is drawn whatever it costs (max_nodes >= MIN_MAX_NODES keeps that sane);
     * the other centres while the budget lasts. */
    bfs_seed(&w, focus);
    for (size_t k = 0; k < set->n_also; k++) {
        const gl_node *n = set->also[k] ? gl_find_node(g, set->also[k]) : NULL;
        if (n && gl_rv_node_of(g, n) && w.used + node_cost(n, w.node_sharers) <= w.budget)
            bfs_seed(&w, n);
    }
    bool spent = false;
    while (w.head < w.tail) {
        size_t idx = w.queue[w.head++];
        if (w.dist[idx] >= radius)
            continue;
        if (!bfs_expand(&w, g->nodes[idx], w.dist[idx] + 1)) {
            spent = true;
            break;
        }
    }
    if (!spent)
        widen_neighbourhood(&w, set);
    free(w.dist);
    free(w.queue);
    free(w.node_sharers);
    *cut_short = w.cut_short;
    return w.kept;
}

/* ==== big graphs: groups ================================================================ */

static void grouping_free(grouping *gr)
{
    free(gr->gid);
    free(gr->key);
    free(gr->key_len);
    *gr = (grouping){0};
}

/* Non-empty '/'-separated components of a name. */
static size_t component_count(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++)
        n += *p != '/' && (p == s || p[-1] == '/');
    return n;
}

/* Length of the first `depth` components, never the whole name: the last component
 * names the node itself ("/layer1/conv/Conv" at depth 5 is still "/layer1/conv"). */
static size_t prefix_len(const char *s, int depth)
{
    size_t comps = component_count(s);
    size_t want = comps == 0 ? 0 : (size_t)depth < comps - 1 ? (size_t)depth : comps - 1;
    if (want == 0)
        return 0;
    size_t seen = 0;
    const char *p = s;
    for (; *p; p++) {
        if (*p != '/' && (p == s || p[-1] == '/'))
            seen++;
        if (seen == want && *p != '/' && (p[1] == '/' || p[1] == '\0'))
            return (size_t)(p - s) + 1;
    }
    return (size_t)(p - s);
}

typedef struct group_key {
    const grouping *gr;
    const char *s;
    size_t len;
} group_key;

static bool group_eq(const void *ctx, uint32_t idx)
{
    const group_key *k = ctx;
    return k->gr->key_len[idx] == k->len && memcmp(k->gr->key[idx], k->s, k->len) == 0;
}

/* Group ids by name prefix at `depth`, numbered by first appearance. */
static void group_by_prefix(const gl_graph *g, int depth, grouping *gr)
{
    *gr = (grouping){0};
    gr->gid = gl_xmalloc((g->n_nodes + 1) * sizeof(*gr->gid));
    gl_index_map m = {0};
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        gr->gid[i] = NO_BOX;
        if (!n)
            continue;
        const char *name = n->name ? n->name : "";
        group_key k = {gr, name, prefix_len(name, depth)};
        uint32_t id = gl_index_map_intern(&m, gl_hash_bytes(k.s, k.len), group_eq, &k,
                                          (uint32_t)gr->n_groups);
        if (id == gr->n_groups) {
            if (gr->n_groups == gr->cap) {
                GL_GROW(gr->key, gr->cap, gr->n_groups + 1);
                gr->key_len = gl_xrealloc(gr->key_len, gr->cap * sizeof(*gr->key_len));
            }
            gr->key[id] = k.s;
            gr->key_len[id] = k.len;
            gr->n_groups++;
        }
        gr->gid[i] = id;
    }
    gl_index_map_free(&m);
}

static int max_prefix_depth(const gl_graph *g)
{
    size_t deepest = 0;
    const gl_node *n;
    gl_foreach_node(g, i, n)
    {
        size_t c = component_count(n->name ? n->name : "");
        if (c > 1 && c - 1 > deepest)
            deepest = c - 1;
    }
    return deepest > 32 ? 32 : (int)deepest;
}

/* Prefixes are useful when they split the graph at all and most nodes have one. */
static bool prefixes_useful(const gl_graph *g, const grouping *gr)
{
    if (gr->n_groups < 2)
        return false;
    size_t bare = 0;
    const gl_node *n;
    gl_foreach_node(g, i, n)
    {
        bare += gr->key_len[gr->gid[i]] == 0;
    }
    return bare * 2 < g->live_nodes;
}

/* The deepest prefix grouping with at most `room` groups; false when none is useful. */
static bool choose_prefix_grouping(const gl_graph *g, size_t room, grouping *best, int *depth)
{
    *best = (grouping){0};
    int deepest = max_prefix_depth(g);
    for (int d = 1; d <= deepest; d++) {
        grouping gr;
        group_by_prefix(g, d, &gr);
        if (gr.n_groups > room) {
            grouping_free(&gr);
            break;
        }
        grouping_free(best);
        *best = gr;
        *depth = d;
    }
    if (best->gid && prefixes_useful(g, best))
        return true;
    grouping_free(best);
    return false;
}

static void group_by_chunks(const gl_graph *g, size_t room, grouping *gr)
{
    *gr = (grouping){0};
    size_t live = g->live_nodes ? g->live_nodes : 1;
    room = room ? room : 1;
    gr->chunk = (live + room - 1) / room;
    gr->gid = gl_xmalloc((g->n_nodes + 1) * sizeof(*gr->gid));
    size_t pos = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        gr->gid[i] = g->nodes[i] ? (uint32_t)(pos++ / gr->chunk) : NO_BOX;
    gr->n_groups = (pos + gr->chunk - 1) / gr->chunk;
}

/* ==== choosing the view ================================================================= */

/* Boxes that graph inputs, outputs and outer values would need (an upper bound). */
static size_t io_box_count(const gl_graph *g)
{
    return g->n_inputs + g->n_outputs + g->n_captures;
}

const gl_node_change **gl_rv_index_changes(const gl_graph *g, const gl_diff *d)
{
    if (!d || !d->n_nodes)
        return NULL;
    /* Node ids are below next_node_id; map them to positions first. */
    size_t n_ids = g->next_node_id;
    uint32_t *pos_of_id = gl_xmalloc((n_ids + 1) * sizeof(*pos_of_id));
    memset(pos_of_id, 0xFF, (n_ids + 1) * sizeof(*pos_of_id));
    const gl_node *n;
    gl_foreach_node(g, i, n)
    {
        if (n->id < n_ids)
            pos_of_id[n->id] = (uint32_t)i;
    }
    const gl_node_change **change_of = gl_xcalloc(g->n_nodes + 1, sizeof(*change_of));
    for (size_t c = 0; c < d->n_nodes; c++) {
        const gl_node_change *ch = &d->nodes[c];
        if (ch->kind == GL_CHANGE_REMOVED)
            continue;
        for (size_t k = 0; k < ch->n_new; k++) {
            uint32_t id = ch->new_ids[k];
            if (id < n_ids && pos_of_id[id] != NO_BOX && !change_of[pos_of_id[id]])
                change_of[pos_of_id[id]] = ch; /* first wins, as gl_diff_find_new */
        }
    }
    free(pos_of_id);
    return change_of;
}

static void note_set(view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_set(view *v, const char *fmt, ...)
{
    size_t used = strlen(v->note);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->note + used, sizeof(v->note) - used, fmt, ap);
    va_end(ap);
}

uint64_t gl_rv_plan_layout(view *v)
{
    v->xlabels = v->always_xlabels || v->n_boxes > XLABEL_ABOVE;
    layout_cost c = gl_rv_layout_cost(v, !v->xlabels);
    if (!v->xlabels && c.work > WORK_BOUND) {
        v->xlabels = true;
        c = gl_rv_layout_cost(v, false);
    }
    v->bounded_effort = c.work > WORK_BOUND;
    return c.work;
}

/* The whole graph, when it fits the box limit (nothing left out) and lays out in time;
 * *slow when only the time was wrong. */
static bool try_full(const gl_graph *g, const settings *set, const gl_node_change **ch,
                     bool fold_all, view *v, bool *slow)
{
    gl_rv_build_node_view(g, set, ch, NULL, fold_all, false, v);
    bool fits = v->n_boxes <= set->max_boxes && !v->left_out;
    if (fits && gl_rv_plan_layout(v) > WORK_LIMIT) {
        *slow = true;
        fits = false;
    }
    if (!fits)
        gl_rv_view_free(v);
    return fits;
}

/* The focus node gets a thick border wherever it is drawn as itself. */
void gl_rv_mark_focus(view *v, const gl_node *focus)
{
    for (size_t i = 0; focus && i < v->n_boxes; i++)
        v->boxes[i].focus = v->boxes[i].kind == GL_BOX_NODE && v->boxes[i].node_id == focus->id;
}

static bool try_focus(const gl_graph *g, const settings *set, const gl_node_change **ch, view *v)
{
    const gl_node *focus = gl_find_node(g, set->focus);
    if (!focus)
        return false;
    bool *keep = gl_xcalloc(g->n_nodes + 1, sizeof(*keep));
    bool cut_short = false;
    size_t kept = select_neighbourhood(g, focus, set, keep, &cut_short);
    gl_rv_build_node_view(g, set, ch, keep, true, true, v);
    free(keep);
    gl_rv_plan_layout(v);
    char a[32], b[32];
    note_set(v, "showing %s of %s nodes within %d %s of '", gl_rv_count(a, kept),
             gl_rv_count(b, g->live_nodes), set->radius, gl_noun(set->radius, "hop", "hops"));
    gl_strbuf name = {0};
    gl_rv_put_display(&name, focus->name, 40);
    note_set(v, "%s'%s", name.s ? name.s : "", cut_short ? " (cut at the box limit)" : "");
    free(name.s);
    v->reduced = true;
    return true;
}

/* Groups for at most set->max_boxes boxes. */
static void collapse_once(const gl_graph *g, const settings *set, const gl_node_change **ch,
                          view *v)
{
    size_t io = io_box_count(g);
    bool draw_io = io <= set->max_boxes / 2;
    size_t room = set->max_boxes - (draw_io ? io : 0);
    grouping gr;
    int depth = 0;
    bool by_prefix = choose_prefix_grouping(g, room, &gr, &depth);
    if (!by_prefix)
        group_by_chunks(g, room, &gr);
    gl_rv_build_group_view(g, set, ch, &gr, draw_io, v);
    if ((v->n_boxes > set->max_boxes || v->left_out) && draw_io) {
        /* unresolved values of a broken graph */
        gl_rv_view_free(v);
        draw_io = false;
        gl_rv_build_group_view(g, set, ch, &gr, draw_io, v);
    }
    char a[32], b[32];
    if (by_prefix)
        note_set(v, "%s nodes collapsed into %s groups by name prefix (depth %d)",
                 gl_rv_count(a, g->live_nodes), gl_rv_count(b, gr.n_groups), depth);
    else
        note_set(v, "%s nodes collapsed into %s chunks of %zu in graph order (names have no "
                    "usable prefix)",
                 gl_rv_count(a, g->live_nodes), gl_rv_count(b, gr.n_groups), gr.chunk);
    if (!draw_io)
        note_set(v, "; graph inputs/outputs not drawn");
    v->reduced = true;
    grouping_free(&gr);
}

/* Groups within the box limit, and fewer (half the boxes at a time) while the layout
 * would be too slow. `prefix` starts the note; `slow`: a bigger drawing was refused for
 * its layout time already. */
static void collapse(const gl_graph *g, const settings *set, const gl_node_change **ch,
                     size_t max_boxes, const char *prefix, bool slow, view *v)
{
    settings within = *set;
    within.max_boxes = max_boxes;
    bool shrunk = slow;
    for (;;) {
        note_set(v, "%s", prefix);
        collapse_once(g, &within, ch, v);
        if (gl_rv_plan_layout(v) <= WORK_LIMIT || within.max_boxes <= MIN_MAX_NODES)
            break;
        gl_rv_view_free(v);
        within.max_boxes = within.max_boxes / 2 > MIN_MAX_NODES ? within.max_boxes / 2
                                                                  : MIN_MAX_NODES;
        shrunk = true;
    }
    if (shrunk)
        note_set(v, " to keep the layout fast");
}

/* What the note says about dot's effort and about boxes left out. */
static void finish_note(view *v)
{
    char n[32];
    if (v->bounded_effort)
        note_set(v, "%slayout effort bounded to keep it fast (nslimit=1, mclimit=0.1)",
                 v->note[0] ? "; " : "");
    if (v->left_out)
        note_set(v, "%s%s input, constant or output boxes not drawn (box limit)",
                 v->note[0] ? "; " : "", gl_rv_count(n, v->left_out));
}

/* The whole graph if it fits (boxes and layout time), else folded constants, else a
 * neighbourhood, else groups; in an emergency, few groups at once. */
void gl_rv_choose_view(const gl_graph *g, const settings *set, const gl_node_change **ch,
                       view *v)
{
    if (set->emergency) {
        char why[200];
        snprintf(why, sizeof(why), "%s; ", set->emergency);
        collapse(g, set, ch, EMERGENCY_BOXES < set->max_boxes ? EMERGENCY_BOXES : set->max_boxes,
                 why, false, v);
        finish_note(v);
        return;
    }
    bool may_fit = g->live_nodes <= set->max_boxes; /* else no need to build and count */
    bool slow = false;
    if (may_fit && try_full(g, set, ch, false, v, &slow)) {
        finish_note(v);
        return;
    }
    char limit[32];
    gl_rv_count(limit, set->max_boxes);
    if (may_fit && try_full(g, set, ch, true, v, &slow)) {
        if (slow)
            note_set(v, "constants folded into their consumers to keep the layout fast");
        else
            note_set(v, "constants folded into their consumers to stay within %s boxes",
                     limit);
        finish_note(v);
        return;
    }
    if (set->focus && try_focus(g, set, ch, v)) {
        finish_note(v);
        return;
    }
    char prefix[200] = "";
    if (set->focus) {
        gl_strbuf name = {0};
        gl_rv_put_display(&name, set->focus, 40);
        snprintf(prefix, sizeof(prefix), "no node named '%s'; ", name.s ? name.s : "");
        free(name.s);
    }
    collapse(g, set, ch, set->max_boxes, prefix, slow, v);
    finish_note(v);
}

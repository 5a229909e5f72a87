/* transpose_guard.c — the net-transposes guard of transpose-push: what it does and why is
 * in transpose.h. Here: the regions a trial sweep builds from its pushes, the refusals
 * that come out of the regions that grew, and looking them up in the sweeps after.
 *
 * A refusal names its push by the ids of the Transpose and the node (a clone keeps ids,
 * and two sweeps of equal graphs make equal nodes with equal ids until their first
 * different decision) and by the graph it is in (the ids of the nodes holding the body,
 * outermost first), since bodies number their nodes on their own.
 */
#include "passes/transpose.h"

#include "util/plural.h"
#include "util/unionfind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_LEN 96     /* "12/3/40": deeper nesting shares a key, refusing more, not less */
#define NAMES_LEN 160  /* the region's Transposes named in a refusal */
#define NAMES_SHOWN 4

typedef struct veto {
    char graph[KEY_LEN];
    uint32_t t, n;
    int start, end; /* the region's Transposes before and after the trial's sweep */
    char region[NAMES_LEN];
} veto;

struct gl_tp_guard {
    veto *vetoes;
    size_t n, cap;
    size_t added;     /* vetoes the current trial added */
    size_t grew;      /* regions that grew, over all trials */
    size_t refused;   /* refusals made in the real sweep */
    int trials;
    bool trial;
    bool refuse_all;  /* the rounds are spent */
    bool kept_ort;    /* refusals dropped: the trials ended above ORT's pushes */
    size_t guarded, unguarded; /* their Transposes then */
};

/* regions.original[id]: node id was a Transpose when the sweep began; one read by a
 * single node, which then meets it whatever else is pushed. */
enum { ORIGINAL = 1, ORIGINAL_SOLE_READER = 2 };

/* One push of a trial: a Transpose (by id) through a node (by id). */
typedef struct push_rec {
    uint32_t t, n;
} push_rec;

struct gl_tp_regions {
    size_t *parent;       /* by node id: the union-find of Transposes */
    uint8_t *original;    /* by node id: a Transpose when the sweep began (ORIGINAL...) */
    int *merged;          /* by node id: Transposes gone when two original ones met */
    size_t cap;
    uint32_t *adjacent;   /* the Transposes the push under way touches */
    size_t n_adjacent, cap_adjacent;
    uint32_t pending_t, pending_n;
    bool pending_originals; /* the push under way meets two original Transposes */
    size_t nodes_before;  /* g->n_nodes when it started: new nodes come after */
    push_rec *pushes;
    size_t n_pushes, cap_pushes;
    char graph[KEY_LEN];
};

gl_tp_guard *gl_tp_guard_new(void) { return gl_xcalloc(1, sizeof(gl_tp_guard)); }

void gl_tp_guard_free(gl_tp_guard *gd)
{
    if (!gd)
        return;
    free(gd->vetoes);
    free(gd);
}

void gl_tp_guard_set_trial(gl_tp_guard *gd, bool trial)
{
    gd->trial = trial;
    gd->added = 0;
}

bool gl_tp_guard_next_round(gl_tp_guard *gd)
{
    gd->trials++;
    if (gd->added == 0)
        return false;
    if (gd->trials >= GL_TP_GUARD_ROUNDS) {
        gd->refuse_all = true;
        return false;
    }
    gd->added = 0;
    return true;
}

static bool is_transpose(const gl_node *n) { return n && gl_node_is(n, "Transpose"); }

/* "" for the model's graph, else the ids of the nodes holding it, outermost first. */
static void graph_key(const gl_graph *g, char *buf, size_t len)
{
    uint32_t ids[KEY_LEN / 2];
    size_t depth = 0;
    for (; g && g->parent_node && depth < GL_ARRAY_LEN(ids); g = g->parent)
        ids[depth++] = g->parent_node->id;
    size_t at = 0;
    buf[0] = '\0';
    while (depth-- > 0 && at < len) {
        int w = snprintf(buf + at, len - at, "%s%u", at ? "/" : "", ids[depth]);
        at = w < 0 ? len : at + (size_t)w;
    }
}

/* ---- a trial's regions ------------------------------------------------------------------ */

static void regions_fit(gl_tp_regions *rg, size_t need)
{
    if (need <= rg->cap)
        return;
    size_t cap = need + need / 2 + 16;
    rg->parent = gl_xrealloc(rg->parent, cap * sizeof(*rg->parent));
    rg->original = gl_xrealloc(rg->original, cap);
    rg->merged = gl_xrealloc(rg->merged, cap * sizeof(*rg->merged));
    for (size_t i = rg->cap; i < cap; i++) {
        rg->parent[i] = i;
        rg->original[i] = 0;
        rg->merged[i] = 0;
    }
    rg->cap = cap;
}

void gl_tp_guard_begin(gl_tp_run *run)
{
    if (!run->guard || !run->guard->trial)
        return;
    gl_tp_regions *rg = gl_xcalloc(1, sizeof(*rg));
    regions_fit(rg, run->g->next_node_id);
    gl_node *n;
    gl_foreach_node(run->g, i, n)
        rg->original[n->id] = !is_transpose(n)                   ? 0
                              : gl_tp_sole_use(n->outputs[0]) ? ORIGINAL_SOLE_READER
                                                              : ORIGINAL;
    graph_key(run->g, rg->graph, sizeof(rg->graph));
    run->regions = rg;
}

static void add_adjacent(gl_tp_regions *rg, const gl_node *n)
{
    if (!is_transpose(n))
        return;
    GL_GROW(rg->adjacent, rg->cap_adjacent, rg->n_adjacent + 1);
    rg->adjacent[rg->n_adjacent++] = n->id;
}

void gl_tp_guard_before_push(gl_tp_run *run, const gl_tp_args *a)
{
    gl_tp_regions *rg = run->regions;
    if (!rg)
        return;
    rg->pending_t = a->transpose->id;
    rg->pending_n = a->node->id;
    rg->pending_originals = a->transpose->id < rg->cap && a->node->id < rg->cap &&
                            rg->original[a->transpose->id] && rg->original[a->node->id];
    rg->nodes_before = run->g->n_nodes;
    rg->n_adjacent = 0;
    add_adjacent(rg, a->node);
    /* What the rewrite of an input may cancel, compose with (also behind a
     * DequantizeLinear) or reuse. */
    for (size_t i = 0; i < a->node->n_inputs; i++) {
        const gl_value *v = a->node->inputs[i];
        const gl_node *p = v ? v->producer : NULL;
        if (p && strcmp(p->op_type, "DequantizeLinear") == 0 && p->n_inputs && p->inputs[0])
            p = p->inputs[0]->producer;
        add_adjacent(rg, p);
        for (size_t u = 0; v && u < v->n_uses; u++)
            add_adjacent(rg, v->uses[u].node);
    }
}

void gl_tp_guard_after_push(gl_tp_run *run, bool meeting)
{
    gl_tp_regions *rg = run->regions;
    if (!rg)
        return;
    regions_fit(rg, run->g->next_node_id);
    size_t t = rg->pending_t;
    int made = 0;
    for (size_t i = rg->nodes_before; i < run->g->n_nodes; i++)
        if (is_transpose(run->g->nodes[i])) {
            gl_uf_union(rg->parent, t, run->g->nodes[i]->id);
            made++;
        }
    for (size_t k = 0; k < rg->n_adjacent; k++)
        gl_uf_union(rg->parent, t, rg->adjacent[k]);
    /* Two original Transposes that meet merge or cancel whatever the pushes: the
     * Transposes that saves are not the pushes' gain. */
    if (meeting && rg->pending_originals)
        rg->merged[t] += !gl_find_node_by_id(run->g, rg->pending_n) - made +
                         (rg->original[rg->pending_t] == ORIGINAL_SOLE_READER &&
                          !gl_find_node_by_id(run->g, rg->pending_t));
    /* Two Transposes meeting only ever merge or cancel: nothing to refuse there. */
    if (!meeting) {
        GL_GROW(rg->pushes, rg->cap_pushes, rg->n_pushes + 1);
        rg->pushes[rg->n_pushes++] = (push_rec){rg->pending_t, rg->pending_n};
    }
}

/* "'t1', 't2', 't3' and 2 more": the region's Transposes at the end. */
static void region_names(const gl_graph *g, gl_tp_regions *rg, size_t root, size_t total,
                         char *buf, size_t len)
{
    size_t at = 0, shown = 0;
    buf[0] = '\0';
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (!is_transpose(n) || n->id >= rg->cap || gl_uf_find(rg->parent, n->id) != root)
            continue;
        if (shown == NAMES_SHOWN)
            break;
        int w = snprintf(buf + at, len - at, "%s'%s'", shown ? ", " : "", n->name);
        at = w < 0 || (size_t)w >= len - at ? len - 1 : at + (size_t)w;
        shown++;
    }
    if (total > shown && at < len)
        snprintf(buf + at, len - at, " and %zu more", total - shown);
}

static bool has_veto(const gl_tp_guard *gd, const char *graph, uint32_t t, uint32_t n)
{
    for (size_t i = 0; i < gd->n; i++)
        if (gd->vetoes[i].t == t && gd->vetoes[i].n == n &&
            !strcmp(gd->vetoes[i].graph, graph))
            return true;
    return false;
}

void gl_tp_guard_end(gl_tp_run *run)
{
    gl_tp_regions *rg = run->regions;
    if (!rg)
        return;
    gl_tp_guard *gd = run->guard;
    regions_fit(rg, run->g->next_node_id);
    int *start = gl_xcalloc(rg->cap, sizeof(int)), *end = gl_xcalloc(rg->cap, sizeof(int));
    for (size_t id = 0; id < rg->cap; id++) {
        size_t root = gl_uf_find(rg->parent, id);
        start[root] += (rg->original[id] != 0) - rg->merged[id];
    }
    gl_node *n;
    gl_foreach_node(run->g, i, n)
        if (is_transpose(n))
            end[gl_uf_find(rg->parent, n->id)]++;
    uint8_t *counted = gl_xcalloc(rg->cap, 1);
    for (size_t k = 0; k < rg->n_pushes; k++) {
        const push_rec *p = &rg->pushes[k];
        size_t root = gl_uf_find(rg->parent, p->t);
        if (end[root] <= start[root] || has_veto(gd, rg->graph, p->t, p->n))
            continue;
        gd->grew += !counted[root];
        counted[root] = 1;
        GL_GROW(gd->vetoes, gd->cap, gd->n + 1);
        veto *v = &gd->vetoes[gd->n++];
        memcpy(v->graph, rg->graph, sizeof(v->graph));
        v->t = p->t;
        v->n = p->n;
        v->start = start[root];
        v->end = end[root];
        region_names(run->g, rg, root, (size_t)end[root], v->region, sizeof(v->region));
        gd->added++;
    }
    free(counted);
    free(start);
    free(end);
    free(rg->parent);
    free(rg->original);
    free(rg->merged);
    free(rg->adjacent);
    free(rg->pushes);
    free(rg);
    run->regions = NULL;
}

bool gl_tp_guard_refuses_nothing(const gl_tp_guard *gd)
{
    return gd->n == 0 && !gd->refuse_all;
}

void gl_tp_guard_keep_ort(gl_tp_guard *gd, size_t guarded, size_t unguarded)
{
    if (gd->refuse_all)
        return;
    gd->n = 0;
    gd->kept_ort = true;
    gd->guarded = guarded;
    gd->unguarded = unguarded;
}

/* ---- the sweeps after: looking the refusals up ------------------------------------------ */

bool gl_tp_guard_refuses(const gl_tp_run *run, const gl_node *t, const gl_node *n, int *start,
                         int *end, const char **region)
{
    gl_tp_guard *gd = run->guard;
    if (!gd || (!gd->n && !gd->refuse_all))
        return false;
    *start = *end = -1;
    if (region)
        *region = "";
    bool refused = gd->refuse_all;
    char graph[KEY_LEN];
    graph_key(run->g, graph, sizeof(graph));
    for (size_t i = 0; i < gd->n && !refused; i++) {
        const veto *v = &gd->vetoes[i];
        if (v->t != t->id || v->n != n->id || strcmp(v->graph, graph))
            continue;
        *start = v->start;
        *end = v->end;
        if (region)
            *region = v->region;
        refused = true;
    }
    gd->refused += refused && !gd->trial;
    return refused;
}

void gl_tp_guard_report(const gl_tp_guard *gd, gl_pass_ctx *ctx)
{
    if (gd && gd->kept_ort) {
        gl_decision *k = gl_pass_decide(ctx, "net-transposes", GL_NOTE, "the guard's "
                                        "refusals would leave %zu %s, ONNX Runtime's "
                                        "pushes %zu: its pushes are kept", gd->guarded,
                                        gl_noun((long long)gd->guarded, "Transpose",
                                                "Transposes"), gd->unguarded);
        gl_decision_add_number(k, "guarded", (double)gd->guarded);
        gl_decision_add_number(k, "unguarded", (double)gd->unguarded);
        gl_decision_add_number(k, "trials", gd->trials);
    }
    if (!gd || !gd->refused)
        return;
    gl_decision *d;
    if (gd->refuse_all)
        d = gl_pass_decide(ctx, "net-transposes", GL_NOTE, "%d trial sweeps still left "
                           "regions with more Transposes than they started with: every "
                           "push was refused (%zu), only Transposes that meet merged",
                           gd->trials, gd->refused);
    else
        d = gl_pass_decide(ctx, "net-transposes", GL_NOTE, "%zu push(es) refused: in %d "
                           "trial sweep(s), %zu region(s) of Transposes ended with more "
                           "than they started with (ONNX Runtime's cost model pushed them; "
                           "transpose-push.ort-only=1 keeps its pushes)", gd->refused,
                           gd->trials, gd->grew);
    gl_decision_add_number(d, "refused", (double)gd->refused);
    gl_decision_add_number(d, "regions", (double)gd->grew);
    gl_decision_add_number(d, "trials", gd->trials);
}

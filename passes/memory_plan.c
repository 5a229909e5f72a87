/* memory_plan.c — the memory-plan pass: every intermediate tensor's lifetime in the
 * executor's order and its offset in one arena (ir/memplan.h), stored on the model.
 *
 * Two phases, the house's check-then-apply split: first each node's outputs are given
 * their sharing (a view of the input, in place of an input, or their own range), every
 * choice and refusal a decision; then the groups that share are placed best-fit. The
 * graph is never edited: the pass's result is the plan.
 */
#include "exec/exec.h"
#include "ir/memplan.h"
#include "passes/fusion.h"
#include "passes/passes.h"
#include "util/plural.h"

#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX

typedef struct planner {
    gl_pass_ctx *ctx;
    const gl_graph *g;
    const gl_node **order;
    size_t n_steps;
    size_t *step_of;     /* by node index */
    size_t *tensor_of;   /* by value index: index in tensors[], or NONE */
    gl_mem_tensor *tensors;
    size_t n, cap;
    size_t *group_end;   /* by tensor index (meaningful for roots) */
    size_t n_unplanned;
} planner;

static size_t align_up(size_t x)
{
    return (x + GL_MEMPLAN_ALIGN - 1) / GL_MEMPLAN_ALIGN * GL_MEMPLAN_ALIGN;
}

/* The last step reading v (explicit inputs and subgraph captures), or its producer's. */
static size_t last_read(const planner *p, const gl_value *v, size_t first)
{
    size_t last = first;
    for (size_t u = 0; u < v->n_uses; u++) {
        const gl_node *r = v->uses[u].node;
        if (r && r->graph == p->g && p->step_of[r->index] != NONE && p->step_of[r->index] > last)
            last = p->step_of[r->index];
    }
    return last;
}

static bool is_view_op(const gl_node *n)
{
    static const char *const views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                        "Identity"};
    for (size_t i = 0; i < GL_ARRAY_LEN(views); i++)
        if (gl_node_is(n, views[i]))
            return true;
    return false;
}

static bool same_type(const gl_value *a, const gl_value *b)
{
    return a->type.dtype == b->type.dtype && gl_shape_equal(&a->type.shape, &b->type.shape);
}

static gl_mem_tensor *tensor_of_value(const planner *p, const gl_value *v)
{
    if (!v || v->graph != p->g || p->tensor_of[v->index] == NONE)
        return NULL;
    return &p->tensors[p->tensor_of[v->index]];
}

/* Why x cannot give its bytes to o at step k; NULL when it can. */
static const char *in_place_refusal(const planner *p, const gl_value *x, const gl_value *o,
                                    size_t k)
{
    const gl_mem_tensor *t = tensor_of_value(p, x);
    if (!t)
        return "the input is not in the arena (a graph input, initializer or not static)";
    if (!same_type(x, o))
        return "shape or dtype differ";
    if (p->group_end[t->root] > k)
        return t->root == (size_t)(t - p->tensors) && t->last > k
                   ? "the input has another later reader"
                   : "the input's bytes are read later (by it or a view of them)";
    return NULL;
}

/* For a fused group: true when formal input `j` of its body is read once, by an Add of
 * that chain whose result reaches output 0 only through unary elementwise nodes (the
 * sum post-op's residual): the group's output may then take the residual's bytes. */
static bool residual_of_sum(const gl_model *m, const gl_function *fn, size_t j)
{
    const gl_graph *b = fn->body;
    if (!b || j >= b->n_inputs || !b->inputs[j] || b->n_outputs < 1 || !b->outputs[0])
        return false;
    const gl_value *x = b->inputs[j];
    if (x->n_uses != 1 || !x->uses[0].node || x->uses[0].slot < 0)
        return false;
    const gl_node *n = x->uses[0].node;
    if (strcmp(n->op_type, "Add") != 0 || n->n_inputs != 2 || n->inputs[0] == n->inputs[1])
        return false;
    for (size_t hops = 0; hops < b->n_nodes; hops++) {
        const gl_value *out = n->n_outputs ? n->outputs[0] : NULL;
        if (!out)
            return false;
        if (out == b->outputs[0])
            return true;
        if (out->n_uses != 1 || out->n_output_refs || out->uses[0].slot != 0)
            return false;
        n = out->uses[0].node;
        const gl_op_def *def = n ? gl_op_for_node(m, n) : NULL;
        if (!def || !(def->flags & GL_OP_ELEMENTWISE) || n->n_outputs != 1)
            return false;
    }
    return false;
}

/* Join o to x's group (in place or as a view). */
static void join(planner *p, gl_mem_tensor *o, const gl_value *x, gl_mem_share share)
{
    gl_mem_tensor *t = tensor_of_value(p, x);
    o->share = share;
    o->source = (size_t)(t - p->tensors);
    o->root = t->root;
    if (o->last > p->group_end[o->root])
        p->group_end[o->root] = o->last;
}

static void decide_in_place(planner *p, gl_mem_tensor *o, const gl_node *n, const gl_value *x,
                            const char *rule, size_t k)
{
    gl_pass_ctx *ctx = p->ctx;
    if (!gl_pass_may_rewrite(ctx))
        return;
    gl_decision *d = gl_pass_decide(ctx, rule, GL_APPLIED, "%s '%s' writes '%s' over its input "
                                    "'%s' (%zu bytes), whose last reader it is",
                                    n->op_type, n->name, o->name, x->name, o->bytes);
    gl_decision_add_node_ref(d, n);
    gl_decision_add_number(d, "bytes", (double)o->bytes);
    gl_decision_add_number(d, "order", (double)k); /* in the executor's order: not a step */
    if (!gl_pass_vetoed(ctx, d))
        join(p, o, x, GL_MEM_IN_PLACE);
}

static void refuse(planner *p, const gl_node *n, const gl_mem_tensor *o, const char *rule,
                   const gl_value *x, const char *why)
{
    gl_decision *d = gl_pass_decide(p->ctx, rule, GL_REFUSED, "%s '%s': '%s' not over input "
                                    "'%s': %s", n->op_type, n->name, o->name, x->name, why);
    gl_decision_add_node_ref(d, n);
}

/* Sharing for the outputs of the node at step k. */
static void decide_node(planner *p, const gl_node *n, size_t k)
{
    const gl_model *m = p->ctx->model;
    if (n->n_outputs < 1)
        return;
    gl_mem_tensor *o = tensor_of_value(p, n->outputs[0]);
    if (!o)
        return;
    const gl_value *x0 = n->n_inputs ? n->inputs[0] : NULL;
    if (is_view_op(n) && tensor_of_value(p, x0) && tensor_of_value(p, x0)->bytes == o->bytes) {
        gl_decision *d = gl_pass_decide(p->ctx, "view", GL_NOTE, "%s '%s': '%s' is the bytes of "
                                        "'%s' under other dims (no copy)", n->op_type, n->name,
                                        o->name, x0->name);
        gl_decision_add_node_ref(d, n);
        join(p, o, x0, GL_MEM_VIEW);
        return;
    }
    /* An input that dies here, for the refusal of an op that cannot write over it. */
    const gl_value *dying = NULL;
    for (size_t i = 0; i < n->n_inputs && !dying; i++) {
        const gl_mem_tensor *t = tensor_of_value(p, n->inputs[i]);
        if (t && p->group_end[t->root] == k)
            dying = n->inputs[i];
    }
    const gl_function *fn = strcmp(n->domain, GL_FUSED_DOMAIN) == 0
                                ? gl_model_function(m, n->domain, n->op_type)
                                : NULL;
    if (fn) {
        const char *why = NULL;
        const gl_value *cand = NULL;
        for (size_t j = 0; j < n->n_inputs; j++) {
            if (!n->inputs[j] || !residual_of_sum(m, fn, j))
                continue;
            cand = n->inputs[j];
            why = in_place_refusal(p, cand, n->outputs[0], k);
            for (size_t i = 0; i < n->n_inputs && !why; i++)
                if (i != j && n->inputs[i] == cand)
                    why = "the group reads the residual twice";
            if (!why) {
                decide_in_place(p, o, n, cand, "in-place-residual", k);
                return;
            }
        }
        if (cand)
            refuse(p, n, o, "in-place-residual", cand, why);
        else if (dying)
            refuse(p, n, o, "in-place", dying, "the fused group has no sum post-op residual");
        return;
    }
    const gl_op_def *def = gl_op_for_node(m, n);
    unsigned flags = def ? def->flags : 0;
    bool variadic = !strcmp(n->op_type, "Sum") || !strcmp(n->op_type, "Mean") ||
                    !strcmp(n->op_type, "Max") || !strcmp(n->op_type, "Min");
    size_t cands = flags & GL_OP_ELEMENTWISE ? 1
                   : (flags & GL_OP_BROADCAST) && !variadic && n->n_inputs == 2 ? 2
                                                                                  : 0;
    if (n->n_outputs != 1)
        cands = 0;
    const char *first_why = NULL;
    const gl_value *first_x = NULL;
    for (size_t i = 0; i < cands && i < n->n_inputs; i++) {
        const gl_value *x = n->inputs[i];
        if (!x)
            continue;
        const char *why = in_place_refusal(p, x, n->outputs[0], k);
        if (!why) {
            decide_in_place(p, o, n, x, "in-place", k);
            return;
        }
        if (!first_why && tensor_of_value(p, x)) {
            first_why = why;
            first_x = x;
        }
    }
    if (first_why)
        refuse(p, n, o, "in-place", first_x, first_why);
    else if (!cands && dying)
        refuse(p, n, o, "in-place", dying, "the op is not in-place capable");
}

/* ---- placing the groups -------------------------------------------------------------- */

typedef struct range {
    size_t off, size;
} range;

typedef struct free_list {
    range *r; /* sorted by offset, never adjacent */
    size_t n, cap;
    size_t top;
} free_list;

static void fl_release(free_list *f, size_t off, size_t size)
{
    if (!size)
        return;
    size_t i = 0;
    while (i < f->n && f->r[i].off < off)
        i++;
    GL_GROW(f->r, f->cap, f->n + 1);
    memmove(&f->r[i + 1], &f->r[i], (f->n - i) * sizeof(range));
    f->r[i] = (range){off, size};
    f->n++;
    if (i + 1 < f->n && f->r[i].off + f->r[i].size == f->r[i + 1].off) {
        f->r[i].size += f->r[i + 1].size;
        memmove(&f->r[i + 1], &f->r[i + 2], (f->n - i - 2) * sizeof(range));
        f->n--;
    }
    if (i > 0 && f->r[i - 1].off + f->r[i - 1].size == f->r[i].off) {
        f->r[i - 1].size += f->r[i].size;
        memmove(&f->r[i], &f->r[i + 1], (f->n - i - 1) * sizeof(range));
        f->n--;
    }
    /* A free range at the top gives the arena back. */
    if (f->n && f->r[f->n - 1].off + f->r[f->n - 1].size == f->top) {
        f->top = f->r[f->n - 1].off;
        f->n--;
    }
}

/* Best fit: the smallest free range that holds `size`; none: from the top. */
static size_t fl_take(free_list *f, size_t size)
{
    size_t best = NONE;
    for (size_t i = 0; i < f->n; i++)
        if (f->r[i].size >= size && (best == NONE || f->r[i].size < f->r[best].size))
            best = i;
    if (best == NONE) {
        size_t off = f->top;
        f->top += size;
        return off;
    }
    size_t off = f->r[best].off;
    f->r[best].off += size;
    f->r[best].size -= size;
    if (!f->r[best].size) {
        memmove(&f->r[best], &f->r[best + 1], (f->n - best - 1) * sizeof(range));
        f->n--;
    }
    return off;
}

/* The roots starting at one step (one node's outputs: a few), largest first. */
static void sort_by_size(size_t *ids, size_t count, const size_t *sizes)
{
    for (size_t i = 1; i < count; i++)
        for (size_t j = i; j > 0 && sizes[ids[j]] > sizes[ids[j - 1]]; j--) {
            size_t t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
}

static void place(planner *p, gl_memory_plan *mp)
{
    size_t n = p->n, steps = p->n_steps;
    /* Roots by the step that starts them and by the step after which they end. */
    size_t *start_at = gl_xcalloc(steps + 1, sizeof(size_t));
    size_t *end_at = gl_xcalloc(steps + 1, sizeof(size_t));
    size_t *by_start = gl_xcalloc(n ? n : 1, sizeof(size_t));
    size_t *by_end = gl_xcalloc(n ? n : 1, sizeof(size_t));
    size_t *sizes = gl_xcalloc(n ? n : 1, sizeof(size_t));
    long long *delta = gl_xcalloc(steps + 1, sizeof(long long));
    for (size_t i = 0; i < n; i++) {
        const gl_mem_tensor *t = &p->tensors[i];
        if (t->size > sizes[t->root])
            sizes[t->root] = t->size;
    }
    for (size_t i = 0; i < n; i++)
        if (p->tensors[i].root == i) {
            start_at[p->tensors[i].first + 1]++;
            end_at[p->group_end[i] + 1]++;
        }
    for (size_t s = 0; s < steps; s++) {
        start_at[s + 1] += start_at[s];
        end_at[s + 1] += end_at[s];
    }
    size_t *fill_s = gl_xcalloc(steps + 1, sizeof(size_t)), *fill_e = gl_xcalloc(steps + 1, sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        if (p->tensors[i].root == i) {
            size_t s = p->tensors[i].first, e = p->group_end[i];
            by_start[start_at[s] + fill_s[s]++] = i;
            by_end[end_at[e] + fill_e[e]++] = i;
            delta[s] += (long long)sizes[i];
            delta[e + 1] -= (long long)sizes[i];
        }
    free_list f = {0};
    for (size_t s = 0; s < steps; s++) {
        /* Groups that ended before this step give their ranges back first. */
        if (s > 0)
            for (size_t j = end_at[s - 1]; j < end_at[s]; j++) {
                const gl_mem_tensor *t = &p->tensors[by_end[j]];
                fl_release(&f, t->offset, sizes[by_end[j]]);
            }
        size_t *mine = &by_start[start_at[s]];
        size_t count = start_at[s + 1] - start_at[s];
        sort_by_size(mine, count, sizes);
        for (size_t j = 0; j < count; j++) {
            p->tensors[mine[j]].offset = fl_take(&f, sizes[mine[j]]);
            if (f.top > mp->peak_bytes)
                mp->peak_bytes = f.top;
        }
    }
    long long live = 0;
    for (size_t s = 0; s < steps; s++) {
        live += delta[s];
        if ((size_t)live > mp->live_max_bytes) {
            mp->live_max_bytes = (size_t)live;
            mp->live_max_step = s;
        }
    }
    for (size_t i = 0; i < n; i++)
        p->tensors[i].offset = p->tensors[p->tensors[i].root].offset;
    free(f.r);
    free(start_at);
    free(end_at);
    free(by_start);
    free(by_end);
    free(sizes);
    free(delta);
    free(fill_s);
    free(fill_e);
}

/* ---- the pass ------------------------------------------------------------------------------ */

static void collect(planner *p)
{
    for (size_t k = 0; k < p->n_steps; k++) {
        const gl_node *n = p->order[k];
        for (size_t i = 0; i < n->n_outputs; i++) {
            const gl_value *v = n->outputs[i];
            if (!v || v->n_output_refs)
                continue;
            size_t bytes = 0;
            if (!gl_value_static_bytes(v, &bytes)) {
                p->n_unplanned++;
                continue;
            }
            if (!bytes)
                continue; /* empty: no bytes to place */
            /* A view of a graph input or initializer is its bytes, outside the arena. */
            if (i == 0 && is_view_op(n) && n->n_inputs && !tensor_of_value(p, n->inputs[0]))
                continue;
            GL_GROW(p->tensors, p->cap, p->n + 1);
            size_t idx = p->n++;
            p->tensor_of[v->index] = idx;
            p->tensors[idx] = (gl_mem_tensor){
                .name = gl_xstrdup(v->name), .value = v->index, .bytes = bytes,
                .size = align_up(bytes), .first = k, .last = last_read(p, v, k),
                .share = GL_MEM_OWN, .source = NONE, .root = idx};
        }
    }
}

gl_status gl_pass_memory_plan(gl_graph *g, gl_pass_ctx *ctx)
{
    gl_model *m = ctx->model;
    if (g != m->graph)
        return GL_OK;
    planner p = {.ctx = ctx, .g = g};
    gl_status st = gl_exec_order(g, &p.order, &p.n_steps);
    if (st != GL_OK)
        return st;
    p.step_of = gl_xmalloc((g->n_nodes ? g->n_nodes : 1) * sizeof(size_t));
    for (size_t i = 0; i < g->n_nodes; i++)
        p.step_of[i] = NONE;
    for (size_t k = 0; k < p.n_steps; k++)
        p.step_of[p.order[k]->index] = k;
    p.tensor_of = gl_xmalloc((g->n_values ? g->n_values : 1) * sizeof(size_t));
    for (size_t i = 0; i < g->n_values; i++)
        p.tensor_of[i] = NONE;
    collect(&p);
    /* The plan keeps the table: not the doubling's spare room (2.6 MB of 10.5 at the 100k
     * ladder, issue 23). */
    if (p.n && p.n < p.cap) {
        p.tensors = gl_xrealloc(p.tensors, p.n * sizeof(*p.tensors));
        p.cap = p.n;
    }
    p.group_end = gl_xcalloc(p.n ? p.n : 1, sizeof(size_t));
    for (size_t i = 0; i < p.n; i++)
        p.group_end[i] = p.tensors[i].last;
    for (size_t k = 0; k < p.n_steps; k++)
        decide_node(&p, p.order[k], k);
    gl_memory_plan *mp = gl_xcalloc(1, sizeof(*mp));
    mp->n_steps = p.n_steps;
    mp->n_unplanned = p.n_unplanned;
    for (size_t i = 0; i < p.n; i++)
        mp->naive_bytes += p.tensors[i].size;
    place(&p, mp);
    mp->tensors = p.tensors;
    mp->n_tensors = p.n;
    mp->fingerprint = gl_graph_fingerprint(g);
    gl_decision *d = gl_pass_decide(ctx, "arena", GL_NOTE, "%zu %s in an arena of %zu "
                                    "bytes (%zu alive at most, %zu as separate buffers); %zu "
                                    "left to the executor (shape not static); graph inputs, "
                                    "outputs and initializers are not in the arena",
                                    mp->n_tensors,
                                    gl_noun((long long)mp->n_tensors, "intermediate",
                                            "intermediates"),
                                    mp->peak_bytes, mp->live_max_bytes,
                                    mp->naive_bytes, mp->n_unplanned);
    gl_decision_add_number(d, "peak_bytes", (double)mp->peak_bytes);
    gl_decision_add_number(d, "live_max_bytes", (double)mp->live_max_bytes);
    gl_decision_add_number(d, "naive_bytes", (double)mp->naive_bytes);
    gl_memory_plan_free(m->memory_plan);
    m->memory_plan = mp;
    free(p.order);
    free(p.step_of);
    free(p.tensor_of);
    free(p.group_end);
    return GL_OK;
}

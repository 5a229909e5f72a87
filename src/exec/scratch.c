/* scratch.c — the pages of a plan's scratch between runs (gl_exec_scratch in exec.h):
 * the executor walks its plans (shelves, plain copies, the nodes outside a plan, bodies,
 * calls) and the memory plan's block, and asks each node's backend for its own.
 */
#include "exec/arena.h"
#include "exec/plan.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

void gl_scratch_slot(const gl_buffer_slot *slot, gl_scratch_fn fn, void *arg)
{
    if (slot->idle)
        fn(arg, slot->idle->data, slot->idle->size);
}

static void plan_scratch(const plan *p, gl_scratch_fn fn, void *arg)
{
    if (!p)
        return;
    for (size_t k = 0; k < p->n_nodes; k++) {
        const plan_node *pn = &p->nodes[k];
        if (pn->state && pn->backend && pn->backend->scratch)
            pn->backend->scratch(pn->backend_ctx, pn->state, fn, arg);
        for (size_t i = 0; pn->out_slots && i < pn->node->n_outputs; i++)
            gl_scratch_slot(&pn->out_slots[i], fn, arg);
        for (size_t i = 0; i < pn->n_bodies; i++)
            plan_scratch(pn->bodies[i].plan, fn, arg);
        plan_scratch(pn->call, fn, arg);
    }
    for (size_t i = 0; p->plain_slots && i < p->graph->n_values; i++)
        gl_scratch_slot(&p->plain_slots[i], fn, arg);
    for (size_t i = 0; i < p->n_shelves; i++)
        for (size_t j = 0; j < PLAN_SHELF_SLOTS; j++)
            gl_scratch_slot(&p->shelves[i]->slot[j], fn, arg);
}

typedef struct pages {
    gl_scratch_op op;
    uintptr_t page;
    size_t bytes;
} pages;

/* One range's whole pages. Writing them to fault them in is allowed: scratch is written
 * before it is read. */
static void range_pages(void *arg, void *data, size_t bytes)
{
    pages *p = arg;
    uintptr_t lo = ((uintptr_t)data + p->page - 1) & ~(p->page - 1);
    uintptr_t hi = ((uintptr_t)data + bytes) & ~(p->page - 1);
    if (!data || hi <= lo)
        return;
    if (p->op == GL_SCRATCH_RELEASE) {
        if (madvise((void *)lo, hi - lo, MADV_DONTNEED) != 0)
            return;
    } else {
#ifdef MADV_POPULATE_WRITE
        if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) != 0)
#endif
            for (uintptr_t a = lo; a < hi; a += p->page) /* before Linux 5.14 */
                *(volatile char *)a = 0;
    }
    p->bytes += hi - lo;
}

void gl_exec_scratch_each(gl_exec *e, gl_scratch_fn fn, void *arg)
{
    plan_scratch(e->root, fn, arg);
    gl_arena_scratch(e->arena, fn, arg);
    if (e->backend_ctx && e->backend->scratch)
        e->backend->scratch(e->backend_ctx, NULL, fn, arg);
}

size_t gl_exec_scratch(gl_exec *e, gl_scratch_op op)
{
    long page = sysconf(_SC_PAGESIZE);
    pages p = {.op = op, .page = page > 0 ? (uintptr_t)page : 4096};
    gl_exec_scratch_each(e, range_pages, &p);
    return p.bytes;
}

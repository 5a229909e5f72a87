/* arena.c — lending the memory plan's ranges to a run's tensors (see arena.h). */
#include "exec/arena.h"

#include "ir/memplan.h"

#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX

typedef struct arena_value {
    bool planned;        /* a range to lend (not a view: views share their input's) */
    size_t offset, size, bytes;
    size_t source;       /* in place of this value index, or NONE */
    gl_buffer_slot slot; /* idle: the view buffer between uses; lent: out in a tensor */
} arena_value;

struct gl_arena {
    gl_buffer *block;    /* the arena's bytes (one reference; each view holds one) */
    size_t size;
    arena_value *vals;   /* by value index */
    size_t n_vals;
    size_t *out;         /* value indexes lent and maybe not back yet */
    size_t n_out, cap_out;
    size_t lent, refused;
};

gl_arena *gl_arena_create(const gl_model *m, size_t max_bytes)
{
    const gl_memory_plan *p = m ? m->memory_plan : NULL;
    const gl_graph *g = m ? m->graph : NULL;
    if (!p || !g || !p->peak_bytes || p->peak_bytes > max_bytes ||
        p->fingerprint != gl_graph_fingerprint(g))
        return NULL;
    for (size_t i = 0; i < p->n_tensors; i++) {
        const gl_mem_tensor *t = &p->tensors[i];
        if (t->value >= g->n_values || !g->values[t->value] ||
            strcmp(g->values[t->value]->name, t->name) != 0)
            return NULL;
    }
    void *data = aligned_alloc(GL_MEMPLAN_ALIGN, p->peak_bytes);
    if (!data)
        return NULL;
    gl_arena *a = gl_xcalloc(1, sizeof(*a));
    a->block = gl_buffer_new_heap(data, p->peak_bytes);
    a->size = p->peak_bytes;
    a->n_vals = g->n_values;
    a->vals = gl_xcalloc(a->n_vals ? a->n_vals : 1, sizeof(*a->vals));
    for (size_t i = 0; i < p->n_tensors; i++) {
        const gl_mem_tensor *t = &p->tensors[i];
        if (t->share == GL_MEM_VIEW)
            continue;
        arena_value *v = &a->vals[t->value];
        *v = (arena_value){.planned = true, .offset = t->offset, .size = t->size,
                           .bytes = t->bytes, .source = NONE};
        if (t->share == GL_MEM_IN_PLACE) {
            /* Over a view: the bytes lent are those of the tensor it views. */
            size_t s = t->source;
            while (s < p->n_tensors && p->tensors[s].share == GL_MEM_VIEW)
                s = p->tensors[s].source;
            v->source = s < p->n_tensors ? p->tensors[s].value : NONE;
        }
        v->slot.idle = gl_buffer_new_view(a->block, (char *)data + t->offset, t->bytes);
        v->slot.idle->refs = 0;
        v->slot.idle->home = &v->slot;
    }
    return a;
}

void gl_arena_free(gl_arena *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_vals; i++) {
        gl_buffer_slot *s = &a->vals[i].slot;
        if (s->lent && s->lent->home == s)
            s->lent->home = NULL; /* still out: its last holder frees it (and the block) */
        if (s->idle) {
            s->idle->home = NULL;
            s->idle->refs = 1;
            gl_buffer_unref(s->idle);
        }
    }
    gl_buffer_unref(a->block);
    free(a->vals);
    free(a->out);
    free(a);
}

size_t gl_arena_size(const gl_arena *a)
{
    return a ? a->size : 0;
}

void gl_arena_scratch(const gl_arena *a, gl_scratch_fn fn, void *arg)
{
    if (!a)
        return;
    for (size_t j = 0; j < a->n_out; j++)
        if (a->vals[a->out[j]].slot.lent)
            return;
    fn(arg, a->block->data, a->size);
}

void gl_arena_counts(const gl_arena *a, size_t *lent, size_t *refused)
{
    *lent = a ? a->lent : 0;
    *refused = a ? a->refused : 0;
}

/* Whether value `index` may have its range now: every lent range it overlaps is back,
 * but its in-place source, held by no more than `source_refs`. Forgets the ranges that
 * came back. */
static bool range_free(gl_arena *a, size_t index, int source_refs)
{
    const arena_value *v = &a->vals[index];
    size_t keep = 0;
    bool ok = true;
    for (size_t j = 0; j < a->n_out; j++) {
        size_t w = a->out[j];
        const arena_value *o = &a->vals[w];
        if (!o->slot.lent)
            continue;
        a->out[keep++] = w;
        if (w == index || !(o->offset < v->offset + v->size && v->offset < o->offset + o->size))
            continue;
        if (w == v->source && o->offset == v->offset &&
            __atomic_load_n(&o->slot.lent->refs, __ATOMIC_ACQUIRE) <= source_refs)
            continue;
        ok = false;
    }
    a->n_out = keep;
    return ok && !v->slot.lent;
}

gl_buffer *gl_arena_lend(gl_arena *a, size_t index, size_t bytes, bool zero, int source_refs)
{
    if (!a || index >= a->n_vals || !a->vals[index].planned)
        return NULL;
    arena_value *v = &a->vals[index];
    /* Written over its source, it must not be zeroed first. */
    if (v->bytes != bytes || !v->slot.idle || (zero && v->source != NONE) ||
        !range_free(a, index, source_refs)) {
        a->refused++;
        return NULL;
    }
    gl_buffer *b = v->slot.idle;
    v->slot.idle = NULL;
    v->slot.lent = b;
    b->refs = 1;
    b->home = &v->slot;
    b->hash_valid = false;
    if (zero)
        memset(b->data, 0, bytes);
    GL_GROW(a->out, a->cap_out, a->n_out + 1);
    a->out[a->n_out++] = index;
    a->lent++;
    return b;
}

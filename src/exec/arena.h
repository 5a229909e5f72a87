/* arena.h — the executor's side of the memory plan (ir/memplan.h): one block for the
 * intermediates of the model's graph, each lent at its planned offset.
 *
 * The plan decides; the arena only trusts it as far as it can check. A range is lent
 * only when no tensor still alive holds bytes it overlaps (an observer keeping a tensor,
 * a view living longer than planned, a kernel that shares instead of allocating): the
 * caller then allocates as it would without a plan, so a plan can cost memory but never
 * change a result. An output planned in place of an input is lent over that input only
 * when the input is held by no more than the frames that hand it to the kernel.
 */
#ifndef GL_EXEC_ARENA_H
#define GL_EXEC_ARENA_H

#include "exec/exec.h"
#include "ir/graph.h"
#include "ir/tensor.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct gl_arena gl_arena;

/* The arena for m's plan: NULL when m has none, when it does not fit m's graph as it
 * is (a pass changed the graph after planning), or when it is over max_bytes. */
gl_arena *gl_arena_create(const gl_model *m, size_t max_bytes);
void gl_arena_free(gl_arena *a);
size_t gl_arena_size(const gl_arena *a);

/* A buffer of `bytes` for value `index` of the model's graph, the caller holding the one
 * reference: its planned range (zeroed when `zero`), or NULL when it has none, its size
 * differs, or the range is busy. `source_refs`: the references the in-place source may
 * have when it is written over (1: the frame; 2: a function body's frame too). */
gl_buffer *gl_arena_lend(gl_arena *a, size_t index, size_t bytes, bool zero, int source_refs);

/* The block as scratch (gl_exec_scratch) to fn, when no range of it is lent: between
 * runs, its bytes are the next run's to write. */
void gl_arena_scratch(const gl_arena *a, gl_scratch_fn fn, void *arg);

/* Lent and refused ranges so far (statistics). */
void gl_arena_counts(const gl_arena *a, size_t *lent, size_t *refused);

#endif

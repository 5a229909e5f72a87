/* memplan.h — a memory plan as data: where each intermediate tensor of a graph lives in
 * one arena, made by the memory-plan pass (passes/memory_plan.c), carried by the model
 * (gl_model.memory_plan) through snapshots, used by the reference executor (exec.c) and
 * shown by `optimize --explain/--json` and the workbench.
 *
 * Steps are positions in the executor's order of the model's graph (gl_exec_order; a
 * fused group is one step). A tensor occupies [offset, offset + size) of the arena from
 * the step that writes it (first) through the step that reads it last (last). Tensors of
 * one alias group (an output in place of an input, a Reshape-like view of its input)
 * share their root's range; the root's range is held until the group's last reader.
 * Graph inputs, outputs and initializers are not in the arena.
 */
#ifndef GL_MEMPLAN_H
#define GL_MEMPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GL_MEMPLAN_ALIGN 64

typedef enum gl_mem_share {
    GL_MEM_OWN,      /* its own range */
    GL_MEM_IN_PLACE, /* written over its input `source`, whose last reader it is */
    GL_MEM_VIEW,     /* the bytes of its input `source` under other dims (no copy) */
} gl_mem_share;

typedef struct gl_mem_tensor {
    char *name;       /* owned: the value's name */
    size_t value;     /* its index in graph->values when planned */
    size_t bytes;     /* count * element size */
    size_t size;      /* bytes rounded up to GL_MEMPLAN_ALIGN: the range it takes */
    size_t first, last; /* steps: written, read last (first when never read) */
    size_t offset;    /* in the arena; a multiple of GL_MEMPLAN_ALIGN */
    gl_mem_share share;
    size_t source;    /* IN_PLACE/VIEW: index in tensors[] of the input; else SIZE_MAX */
    size_t root;      /* the group's first tensor (itself when OWN) */
} gl_mem_tensor;

typedef struct gl_memory_plan {
    uint64_t fingerprint;   /* gl_graph_fingerprint of the graph planned: stale if not */
    size_t n_steps;
    gl_mem_tensor *tensors; /* owned, in order of first */
    size_t n_tensors;
    size_t peak_bytes;      /* the arena's size */
    size_t naive_bytes;     /* every tensor its own buffer (aligned sizes summed) */
    size_t live_max_bytes;  /* the largest sum of ranges alive at one step (groups once) */
    size_t live_max_step;   /* where that is */
    size_t n_unplanned;     /* intermediates left to the executor (shape not static) */
} gl_memory_plan;

gl_memory_plan *gl_memory_plan_clone(const gl_memory_plan *p);
void gl_memory_plan_free(gl_memory_plan *p);

/* The plan's own consistency: every range aligned and inside the arena, sources and
 * roots valid, and no two tensors of different groups alive at one step with
 * overlapping ranges. False with a message naming the two tensors. */
bool gl_memory_plan_check(const gl_memory_plan *p, char *why, size_t why_len);

/* The lifetime table (tensor, bytes, first, last, offset, shares) and the summary line
 * of `optimize --explain`; names escaped (util/escape.h). */
void gl_memory_plan_print(const gl_memory_plan *p, FILE *f);
/* "memory_plan": {peak_bytes, naive_bytes, live_max_bytes, live_max_step, steps,
 * unplanned, tensors: [{name, bytes, first, last, offset, in_place_of, view_of}]}
 * (in_place_of/view_of: the source's name or null); null when p is NULL. */
struct gl_json;
void gl_memory_plan_json(const gl_memory_plan *p, struct gl_json *j);

#endif

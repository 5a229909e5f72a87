/* memplan.c — the memory plan's data: copy, free, and the check that no two live
 * tensors share bytes. */
#include "ir/memplan.h"

#include "util/status.h"
#include "util/escape.h"
#include "util/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gl_memory_plan *gl_memory_plan_clone(const gl_memory_plan *p)
{
    if (!p)
        return NULL;
    gl_memory_plan *c = gl_xmalloc(sizeof(*c));
    *c = *p;
    c->tensors = gl_xcalloc(p->n_tensors ? p->n_tensors : 1, sizeof(*c->tensors));
    for (size_t i = 0; i < p->n_tensors; i++) {
        c->tensors[i] = p->tensors[i];
        c->tensors[i].name = gl_xstrdup(p->tensors[i].name);
    }
    return c;
}

void gl_memory_plan_free(gl_memory_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_tensors; i++)
        free(p->tensors[i].name);
    free(p->tensors);
    free(p);
}

bool gl_memory_plan_check(const gl_memory_plan *p, char *why, size_t why_len)
{
    size_t n = p->n_tensors;
    /* A group holds its root's range from the root's first step to its members' last. */
    size_t *end = gl_xcalloc(n ? n : 1, sizeof(*end));
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const gl_mem_tensor *t = &p->tensors[i];
        const char *bad = NULL;
        if (t->root >= n || p->tensors[t->root].root != t->root)
            bad = "its root is not a root";
        else if (t->share != GL_MEM_OWN && (t->source >= n || p->tensors[t->source].root != t->root))
            bad = "its source is not in its group";
        else if (t->offset % GL_MEMPLAN_ALIGN || t->size % GL_MEMPLAN_ALIGN || t->size < t->bytes)
            bad = "its range is not aligned or too small";
        else if (t->offset > p->peak_bytes || t->size > p->peak_bytes - t->offset)
            bad = "its range ends past the arena";
        else if (t->first > t->last || t->last >= p->n_steps)
            bad = "its lifetime is not inside the steps";
        else if (t->offset != p->tensors[t->root].offset ||
                 t->size > p->tensors[t->root].size)
            bad = "it is not inside its root's range";
        if (bad) {
            snprintf(why, why_len, "tensor '%s': %s", t->name, bad);
            ok = false;
        } else if (t->last > end[t->root]) {
            end[t->root] = t->last;
        }
    }
    for (size_t i = 0; i < n && ok; i++) {
        const gl_mem_tensor *a = &p->tensors[i];
        if (a->root != i)
            continue;
        for (size_t j = i + 1; j < n && ok; j++) {
            const gl_mem_tensor *b = &p->tensors[j];
            if (b->root != j)
                continue;
            bool in_time = a->first <= end[j] && b->first <= end[i];
            bool in_space = a->offset < b->offset + b->size && b->offset < a->offset + a->size;
            if (in_time && in_space) {
                snprintf(why, why_len,
                         "tensors '%s' (steps %zu..%zu, bytes %zu..%zu) and '%s' (steps "
                         "%zu..%zu, bytes %zu..%zu) overlap",
                         a->name, a->first, end[i], a->offset, a->offset + a->size, b->name,
                         b->first, end[j], b->offset, b->offset + b->size);
                ok = false;
            }
        }
    }
    free(end);
    return ok;
}

void gl_memory_plan_print(const gl_memory_plan *p, FILE *f)
{
    fprintf(f, "memory plan: %zu intermediates over %zu nodes of the executor's order "
            "(graph inputs, outputs and initializers are not in the arena; %zu left to the "
            "executor: shape not static)\n", p->n_tensors, p->n_steps, p->n_unplanned);
    fprintf(f, "  %-32s %10s %6s %6s %10s  %s\n", "tensor", "bytes", "first", "last", "offset",
            "shares");
    for (size_t i = 0; i < p->n_tensors; i++) {
        const gl_mem_tensor *t = &p->tensors[i];
        fprintf(f, "  %-32s %10zu %6zu %6zu %10zu", gl_esc(t->name), t->bytes, t->first, t->last,
                t->offset);
        if (t->share != GL_MEM_OWN)
            fprintf(f, "  %s %s", t->share == GL_MEM_IN_PLACE ? "in place of" : "view of",
                    gl_esc(p->tensors[t->source].name));
        fputc('\n', f);
    }
    fprintf(f, "peak bytes: planned %zu, naive %zu (every tensor its own buffer), live max %zu "
            "(at node %zu of that order): planned/live max %.3f\n", p->peak_bytes, p->naive_bytes,
            p->live_max_bytes, p->live_max_step,
            p->live_max_bytes ? (double)p->peak_bytes / (double)p->live_max_bytes : 1.0);
}

void gl_memory_plan_json(const gl_memory_plan *p, gl_json *j)
{
    if (!p) {
        gl_json_null(j, "memory_plan");
        return;
    }
    gl_json_object_begin(j, "memory_plan");
    gl_json_int(j, "peak_bytes", (int64_t)p->peak_bytes);
    gl_json_int(j, "naive_bytes", (int64_t)p->naive_bytes);
    gl_json_int(j, "live_max_bytes", (int64_t)p->live_max_bytes);
    gl_json_int(j, "live_max_step", (int64_t)p->live_max_step);
    gl_json_int(j, "steps", (int64_t)p->n_steps);
    gl_json_int(j, "unplanned", (int64_t)p->n_unplanned);
    gl_json_array_begin(j, "tensors");
    for (size_t i = 0; i < p->n_tensors; i++) {
        const gl_mem_tensor *t = &p->tensors[i];
        const char *source = t->share != GL_MEM_OWN ? p->tensors[t->source].name : NULL;
        gl_json_object_begin(j, NULL);
        gl_json_string(j, "name", t->name);
        gl_json_int(j, "bytes", (int64_t)t->bytes);
        gl_json_int(j, "first", (int64_t)t->first);
        gl_json_int(j, "last", (int64_t)t->last);
        gl_json_int(j, "offset", (int64_t)t->offset);
        gl_json_string(j, "in_place_of", t->share == GL_MEM_IN_PLACE ? source : NULL);
        gl_json_string(j, "view_of", t->share == GL_MEM_VIEW ? source : NULL);
        gl_json_object_end(j);
    }
    gl_json_array_end(j);
    gl_json_object_end(j);
}

/* sorted.h — searching an array of row pointers sorted by a comparator.
 *
 * The op registries (ops/registry.c, the oneDNN backend's exec/dnnl/dn_ops.c) keep their
 * rows sorted by (op, domain, since) and want the row of the largest `since` at or below
 * an opset: the last row not above the key.
 */
#ifndef GL_SORTED_H
#define GL_SORTED_H

#include <stddef.h>

/* How many rows of rows[0..n) (sorted ascending by cmp) are at or below `key`: the index
 * of the first row above it. cmp(key, row) < 0 when the key sorts before the row. */
static inline size_t gl_sorted_count_at_most(const void *key, const void *const *rows, size_t n,
                                             int (*cmp)(const void *key, const void *row))
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp(key, rows[mid]) >= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif

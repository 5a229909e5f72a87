/* unionfind.h — disjoint sets over the elements 0..n-1 of a caller's `parent` array
 * (parent[x] = x to start). The smaller element roots each set, so a set's name does not
 * depend on the order of the unions. */
#ifndef GL_UNIONFIND_H
#define GL_UNIONFIND_H

#include <stddef.h>

static inline size_t gl_uf_find(size_t *parent, size_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]]; /* path halving */
        x = parent[x];
    }
    return x;
}

static inline void gl_uf_union(size_t *parent, size_t x, size_t y)
{
    x = gl_uf_find(parent, x);
    y = gl_uf_find(parent, y);
    if (x != y)
        parent[x > y ? x : y] = x < y ? x : y;
}

#endif

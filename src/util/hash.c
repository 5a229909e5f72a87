/* hash.c — FNV-1a with a 64-bit finish, and the open-addressing index map. */
#include "util/hash.h"

#include "util/status.h"

#include <stdlib.h>
#include <string.h>

uint64_t gl_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

uint64_t gl_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

uint64_t gl_hash_bytes(const void *p, size_t n) { return gl_mix64(gl_fnv1a(GL_FNV_OFFSET, p, n)); }

static uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

uint64_t gl_hash_bulk(uint64_t h, const void *p, size_t n)
{
    /* Odd multipliers (murmur3's, gl_mix64's): each step is a bijection of its lane. */
    static const uint64_t M1 = 0xff51afd7ed558ccdull, M2 = 0xc4ceb9fe1a85ec53ull;
    const unsigned char *s = p;
    uint64_t lane[4] = {h, h ^ M1, h ^ M2, h ^ (M1 + M2)};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, s + i + 8 * (size_t)k, sizeof(w)); /* any alignment */
            lane[k] = rotl64(lane[k] ^ (w * M1), 29) * M2;
        }
    uint64_t out = gl_mix64(h ^ (uint64_t)n);
    for (int k = 0; k < 4; k++)
        out = gl_mix64(out ^ lane[k]) * M1;
    return gl_fnv1a(out, s + i, n - i); /* the last bytes, fewer than 32 */
}

static void map_insert_slot(gl_index_map *m, uint64_t h, uint32_t slot)
{
    size_t i = h & (m->cap - 1);
    while (m->slots[i])
        i = (i + 1) & (m->cap - 1);
    m->slots[i] = slot;
    m->hashes[i] = h;
}

static void map_grow(gl_index_map *m)
{
    gl_index_map old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->slots = gl_xcalloc(m->cap, sizeof(*m->slots));
    m->hashes = gl_xcalloc(m->cap, sizeof(*m->hashes));
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i])
            map_insert_slot(m, old.hashes[i], old.slots[i]);
    free(old.slots);
    free(old.hashes);
}

uint32_t gl_index_map_intern(gl_index_map *m, uint64_t h, gl_map_eq_fn eq, const void *ctx,
                             uint32_t fresh)
{
    if ((m->count + 1) * 2 > m->cap)
        map_grow(m);
    size_t i = h & (m->cap - 1);
    for (; m->slots[i]; i = (i + 1) & (m->cap - 1))
        if (m->hashes[i] == h && eq(ctx, m->slots[i] - 1))
            return m->slots[i] - 1;
    m->slots[i] = fresh + 1;
    m->hashes[i] = h;
    m->count++;
    return fresh;
}

uint32_t gl_index_map_find(const gl_index_map *m, uint64_t h, gl_map_eq_fn eq, const void *ctx)
{
    if (!m->cap)
        return GL_INDEX_NONE;
    for (size_t i = h & (m->cap - 1); m->slots[i]; i = (i + 1) & (m->cap - 1))
        if (m->hashes[i] == h && eq(ctx, m->slots[i] - 1))
            return m->slots[i] - 1;
    return GL_INDEX_NONE;
}

void gl_index_map_free(gl_index_map *m)
{
    free(m->slots);
    free(m->hashes);
    *m = (gl_index_map){0};
}

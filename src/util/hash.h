/* hash.h — the one string/byte hash of the tree, and an open-addressing index.
 *
 * gl_fnv1a is FNV-1a over bytes, to be chained (start from GL_FNV_OFFSET); fingerprints
 * and content hashes that are compared or printed use it as is. Tables that mask the low
 * bits need more: FNV's low bits barely tell "Add_1017" from "Add_1018", so gl_hash_bytes
 * finishes with a 64-bit avalanche (murmur3's fmix64, gl_mix64) and sequential names
 * spread instead of forming long probe runs.
 *
 * gl_index_map maps a hash to an index into the caller's own array of entries; the caller
 * compares keys through a callback, so one structure serves any key type. Linear
 * probing, power-of-two capacity, at most half full. Allocation aborts (status.h): size
 * it by what is in memory, not by what a file claims. */
#ifndef GL_HASH_H
#define GL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GL_FNV_OFFSET 14695981039346656037ull /* FNV-1a 64-bit offset basis */

uint64_t gl_fnv1a(uint64_t h, const void *p, size_t n);
uint64_t gl_mix64(uint64_t x);
uint64_t gl_hash_bytes(const void *p, size_t n); /* gl_mix64(gl_fnv1a(GL_FNV_OFFSET, ...)) */
/* For long runs of bytes (weights): chained from h like gl_fnv1a, at memory speed. FNV-1a
 * does one multiply per byte (about 0.5 GB/s: 2.4 s for a 1.2 GB model's weights); this
 * mixes 8 bytes per multiply in four independent lanes. Not equal to gl_fnv1a's value. */
uint64_t gl_hash_bulk(uint64_t h, const void *p, size_t n);

typedef struct gl_index_map {
    uint64_t *hashes;
    uint32_t *slots; /* entry index + 1; 0: empty */
    size_t cap, count;
} gl_index_map;

/* Does the caller's entry `idx` equal the key that `ctx` describes? */
typedef bool (*gl_map_eq_fn)(const void *ctx, uint32_t idx);

/* The index of the entry equal to the key (hash h, compared by eq), or `fresh` after
 * recording it as that key's entry. A zeroed map is empty and ready. */
uint32_t gl_index_map_intern(gl_index_map *m, uint64_t h, gl_map_eq_fn eq, const void *ctx,
                             uint32_t fresh);
#define GL_INDEX_NONE UINT32_MAX
/* The index of the entry equal to the key, or GL_INDEX_NONE; records nothing (for maps
 * filled once and then only read, by any number of threads). */
uint32_t gl_index_map_find(const gl_index_map *m, uint64_t h, gl_map_eq_fn eq, const void *ctx);
void gl_index_map_free(gl_index_map *m);

#endif

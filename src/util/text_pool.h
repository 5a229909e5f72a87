/* text_pool.h — interned texts: each distinct text stored once, its address stable for
 * the life of the pool.
 *
 * Made for tables with one row per node whose texts repeat: a plan of a 100k-node
 * chain says "ref" and the same refusal 100k times. A fixed char array per row cost
 * 472 bytes a node (47 MB at 100k nodes, issue 23); a pointer into a pool costs 8, and
 * the pool holds each distinct text once. Texts are packed into blocks (one allocation
 * per block, not per text) and found again by hash (util/hash.h).
 *
 * Not thread-safe: a pool belongs to one plan or one profile, used by one thread. A
 * zeroed pool is empty and ready.
 */
#ifndef GL_TEXT_POOL_H
#define GL_TEXT_POOL_H

#include "util/hash.h"

#include <stdarg.h>
#include <stddef.h>

typedef struct gl_text_block gl_text_block;

typedef struct gl_text_pool {
    gl_index_map index;   /* hash of a text -> its number in `texts` */
    const char **texts;   /* by number: into the blocks */
    size_t n, cap;
    gl_text_block *blocks; /* newest first */
} gl_text_pool;

/* The pool's copy of s: equal texts give the same address. NULL and "" give a static
 * "" (never stored). */
const char *gl_text_intern(gl_text_pool *p, const char *s);
/* The same for the formatted text (cut at 1023 bytes). */
const char *gl_text_internf(gl_text_pool *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Frees every text of the pool; the pool is empty and ready again. */
void gl_text_pool_free(gl_text_pool *p);

#endif

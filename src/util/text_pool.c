/* text_pool.c — interned texts (text_pool.h). */
#include "util/text_pool.h"
#include "util/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Texts are packed into blocks of this many bytes; a longer text gets a block of its
 * own. */
#define BLOCK_BYTES 4096

struct gl_text_block {
    gl_text_block *next;
    size_t used, size;
    char bytes[];
};

typedef struct text_key {
    const gl_text_pool *p;
    const char *s;
} text_key;

static bool text_eq(const void *ctx, uint32_t idx)
{
    const text_key *k = ctx;
    return strcmp(k->p->texts[idx], k->s) == 0;
}

/* Room for n bytes: in the newest block, or a new one. */
static char *store(gl_text_pool *p, const char *s, size_t n)
{
    gl_text_block *b = p->blocks;
    if (!b || b->size - b->used < n) {
        size_t size = n > BLOCK_BYTES ? n : BLOCK_BYTES;
        b = gl_xmalloc(sizeof(*b) + size);
        b->used = 0;
        b->size = size;
        b->next = p->blocks;
        p->blocks = b;
    }
    char *at = b->bytes + b->used;
    memcpy(at, s, n);
    b->used += n;
    return at;
}

const char *gl_text_intern(gl_text_pool *p, const char *s)
{
    if (!s || !*s)
        return "";
    size_t len = strlen(s);
    text_key key = {p, s};
    uint32_t fresh = (uint32_t)p->n;
    uint32_t i = gl_index_map_intern(&p->index, gl_hash_bytes(s, len), text_eq, &key, fresh);
    if (i == fresh) {
        GL_GROW(p->texts, p->cap, p->n + 1);
        p->texts[p->n++] = store(p, s, len + 1);
    }
    return p->texts[i];
}

const char *gl_text_internf(gl_text_pool *p, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return gl_text_intern(p, buf);
}

void gl_text_pool_free(gl_text_pool *p)
{
    for (gl_text_block *b = p->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    gl_index_map_free(&p->index);
    free(p->texts);
    *p = (gl_text_pool){0};
}

/* shared_weights.c — one external-data file for several models (shared_weights.h). */
#include "onnx/shared_weights.h"

#include "util/hash.h"
#include "util/safe_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Each tensor starts at a page boundary, as gl_model_save's own "<OUT>.data" does. */
#define ALIGN 4096u

typedef struct stored {
    uint64_t offset;
    size_t len;
} stored;

struct gl_shared_weights {
    char *path, *name;
    size_t threshold;
    gl_atomic_file file; /* open once the first tensor came */
    bool open;
    uint64_t size;       /* bytes written, padding included */
    stored *items;       /* the distinct tensors in the file */
    size_t n_items, cap_items, reused;
    gl_index_map by_content;
};

gl_shared_weights *gl_shared_weights_new(const char *dir, const char *name, size_t threshold)
{
    gl_shared_weights *w = gl_xcalloc(1, sizeof(*w));
    size_t len = strlen(dir) + strlen(name) + 2;
    w->path = gl_xmalloc(len);
    snprintf(w->path, len, "%s/%s", dir, name);
    w->name = gl_xstrdup(name);
    w->threshold = threshold;
    w->file.fd = -1;
    return w;
}

size_t gl_shared_weights_threshold(const gl_shared_weights *w) { return w->threshold; }

const char *gl_shared_weights_location(const gl_shared_weights *w) { return w->name; }

gl_shared_weights_stats gl_shared_weights_get_stats(const gl_shared_weights *w)
{
    return (gl_shared_weights_stats){w->size, w->n_items, w->reused};
}

/* The bytes a put asks for, compared with a stored tensor by reading it back: a hash
 * alone could merge two different tensors. */
typedef struct candidate {
    const gl_shared_weights *w;
    const uint8_t *data;
    size_t len;
    bool read_failed;
} candidate;

static bool same_bytes(const void *ctx, uint32_t idx)
{
    candidate *c = (candidate *)ctx;
    const stored *s = &c->w->items[idx];
    if (s->len != c->len)
        return false;
    uint8_t buf[64 * 1024];
    for (size_t done = 0; done < c->len;) {
        size_t n = c->len - done < sizeof(buf) ? c->len - done : sizeof(buf);
        ssize_t got = pread(c->w->file.fd, buf, n, (off_t)(s->offset + done));
        if (got != (ssize_t)n) {
            c->read_failed = true;
            return false;
        }
        if (memcmp(buf, c->data + done, n) != 0)
            return false;
        done += n;
    }
    return true;
}

static gl_status append(gl_shared_weights *w, const void *data, size_t len, uint64_t *offset)
{
    static const uint8_t zeros[ALIGN];
    gl_status st = GL_OK;
    if (!w->open && (st = gl_atomic_open(&w->file, w->path)) != GL_OK)
        return st;
    w->open = true;
    size_t pad = (size_t)((ALIGN - w->size % ALIGN) % ALIGN);
    if (pad && (st = gl_atomic_write(&w->file, zeros, pad)) != GL_OK)
        return st;
    *offset = w->size + pad;
    if ((st = gl_atomic_write(&w->file, data, len)) != GL_OK)
        return st;
    w->size = *offset + len;
    return GL_OK;
}

gl_status gl_shared_weights_put(gl_shared_weights *w, const void *data, size_t len,
                                uint64_t *offset)
{
    if (w->n_items >= UINT32_MAX - 1)
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: too many tensors for one file", w->path);
    candidate c = {w, data, len, false};
    uint32_t fresh = (uint32_t)w->n_items;
    uint32_t idx = gl_index_map_intern(&w->by_content, gl_hash_bytes(data, len), same_bytes,
                                       &c, fresh);
    if (c.read_failed)
        return gl_fail(GL_ERR_IO, "%s: cannot read back: %s", w->path, strerror(errno));
    if (idx != fresh) {
        *offset = w->items[idx].offset;
        w->reused++;
        return GL_OK;
    }
    /* Recorded in the index as entry `fresh`: it must exist before anything can fail. */
    GL_GROW(w->items, w->cap_items, w->n_items + 1);
    w->items[w->n_items++] = (stored){0, len};
    gl_status st = append(w, data, len, offset);
    w->items[fresh].offset = *offset;
    if (st != GL_OK)
        w->items[fresh].len = SIZE_MAX; /* matches nothing from now on */
    return st;
}

static void release(gl_shared_weights *w)
{
    free(w->path);
    free(w->name);
    free(w->items);
    gl_index_map_free(&w->by_content);
    free(w);
}

gl_status gl_shared_weights_commit(gl_shared_weights *w)
{
    gl_status st = w->open ? gl_atomic_commit(&w->file) : GL_OK;
    release(w);
    return st;
}

void gl_shared_weights_abort(gl_shared_weights *w)
{
    if (!w)
        return;
    if (w->open)
        gl_atomic_abort(&w->file);
    release(w);
}

/* tensor.c — reference-counted, copy-on-write tensor storage. */
#include "ir/tensor.h"

#include "ir/limits.h"
#include "util/hash.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

bool gl_dims_count(const int64_t *dims, int rank, size_t elem_size, int64_t limit,
                   int64_t *count, const char *what)
{
    if (rank < 0 || rank > GL_MAX_RANK) {
        gl_fail(GL_ERR_INPUT, "%s: rank %d is outside 0..%d", what, rank, GL_MAX_RANK);
        return false;
    }
    int64_t n = 1;
    bool zero = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) {
            gl_fail(GL_ERR_INPUT, "%s: dimension %d is negative (%lld)", what, i,
                    (long long)dims[i]);
            return false;
        }
        if (dims[i] == 0)
            zero = true;
    }
    /* Multiply only the non-zero dims so the overflow check is exact even when a later
     * dim is 0 (a [1e12, 1e12, 0] tensor is empty, not an overflow). */
    for (int i = 0; i < rank && !zero; i++) {
        if (n > limit / dims[i]) {
            gl_fail(GL_ERR_INPUT, "%s: dimensions claim more than %lld elements", what,
                    (long long)limit);
            return false;
        }
        n *= dims[i];
    }
    if (zero)
        n = 0;
    if (elem_size && (uint64_t)n > SIZE_MAX / elem_size) {
        gl_fail(GL_ERR_INPUT, "%s: %lld elements do not fit in memory", what, (long long)n);
        return false;
    }
    *count = n;
    return true;
}

static gl_buffer *buffer_new(gl_buffer_kind kind, void *data, size_t size)
{
    gl_buffer *b = gl_xcalloc(1, sizeof(*b));
    b->refs = 1;
    b->kind = kind;
    b->data = data;
    b->size = size;
    return b;
}

gl_buffer *gl_buffer_new_heap(void *data, size_t size)
{
    return buffer_new(GL_BUF_HEAP, data, size);
}

static gl_buffer *charge(gl_buffer *b, size_t bytes)
{
    b->charged = bytes;
    b->charged_to = gl_limits_charge(bytes);
    return b;
}

gl_buffer *gl_buffer_alloc(size_t size)
{
    void *data = calloc(size ? size : 1, 1);
    if (!data) {
        gl_fail(GL_ERR_NOMEM, "cannot allocate %zu bytes of tensor data", size);
        return NULL;
    }
    return charge(buffer_new(GL_BUF_HEAP, data, size), size);
}

gl_buffer *gl_buffer_new_mmap(void *map_base, size_t map_len, void *data, size_t size)
{
    gl_buffer *b = buffer_new(GL_BUF_MMAP, data, size);
    b->readonly = true;
    b->map_base = map_base;
    b->map_len = map_len;
    return b;
}

/* The pages of a read-only file mapping are clean copies of the file: dropping them loses
 * nothing, a later read faults them in again from the file (from the page cache, which
 * is not the process's memory). */
void gl_buffer_release_pages(gl_buffer *b)
{
    if (b && b->kind == GL_BUF_MMAP && b->readonly)
        madvise(b->map_base, b->map_len, MADV_DONTNEED);
}

gl_buffer *gl_buffer_new_view(gl_buffer *parent, void *data, size_t size)
{
    gl_buffer *b = buffer_new(GL_BUF_VIEW, data, size);
    b->parent = gl_buffer_ref(parent);
    return b;
}

gl_buffer *gl_buffer_new_strings(gl_bytes *items, size_t count)
{
    return buffer_new(GL_BUF_STRINGS, items, count * sizeof(gl_bytes));
}

/* ---- the registry of file mappings ----------------------------------------------------- */

/* Buckets of registered mappings, chained through next_mapping; a lock, since sessions
 * load and free models on several threads (the workbench's workers). A buffer stays in
 * it until its last reference goes. */
#define MAPPING_BUCKETS 4096
static gl_buffer *mapping_buckets[MAPPING_BUCKETS];
static pthread_mutex_t mapping_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t mapping_bucket(const gl_file_extent *at)
{
    uint64_t h = (at->dev * 0x9e3779b97f4a7c15ull) ^ (at->ino * 0xc2b2ae3d27d4eb4full) ^
                 at->offset;
    return (size_t)((h ^ (h >> 29)) % MAPPING_BUCKETS);
}

static bool same_extent(const gl_file_extent *a, const gl_file_extent *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->offset == b->offset;
}

/* A reference to b unless its count already reached 0 (it is being freed). */
static bool ref_if_alive(gl_buffer *b)
{
    int refs = __atomic_load_n(&b->refs, __ATOMIC_ACQUIRE);
    while (refs > 0)
        if (__atomic_compare_exchange_n(&b->refs, &refs, refs + 1, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return true;
    return false;
}

gl_buffer *gl_buffer_find_mapping(const gl_file_extent *at, size_t size)
{
    gl_buffer *found = NULL;
    pthread_mutex_lock(&mapping_lock);
    for (gl_buffer *b = mapping_buckets[mapping_bucket(at)]; b && !found; b = b->next_mapping)
        if (same_extent(b->origin, at) && b->size == size && ref_if_alive(b))
            found = b;
    pthread_mutex_unlock(&mapping_lock);
    return found;
}

void gl_buffer_share_mapping(gl_buffer *b)
{
    b->registered = true;
    size_t i = mapping_bucket(b->origin);
    pthread_mutex_lock(&mapping_lock);
    b->next_mapping = mapping_buckets[i];
    mapping_buckets[i] = b;
    pthread_mutex_unlock(&mapping_lock);
}

static void unregister_mapping(gl_buffer *b)
{
    pthread_mutex_lock(&mapping_lock);
    gl_buffer **at = &mapping_buckets[mapping_bucket(b->origin)];
    while (*at && *at != b)
        at = &(*at)->next_mapping;
    if (*at)
        *at = b->next_mapping;
    pthread_mutex_unlock(&mapping_lock);
}

/* Reference counts are atomic: the workbench clones and frees snapshots sharing these
 * buffers on worker threads while other threads do the same (ui/app.c). */
gl_buffer *gl_buffer_ref(gl_buffer *b)
{
    if (b)
        __atomic_fetch_add(&b->refs, 1, __ATOMIC_RELAXED);
    return b;
}

static void drop_origin(gl_buffer *b)
{
    if (b->origin) {
        free(b->origin->path);
        free(b->origin);
        b->origin = NULL;
    }
}

void gl_buffer_unref(gl_buffer *b)
{
    if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    gl_limits_uncharge(b->charged_to, b->charged);
    b->charged_to = 0;
    b->charged = 0;
    gl_buffer_slot *home = b->home;
    if (home) {
        /* Back to the executor's slot, unless the slot has lent a newer one since. */
        if (home->lent == b)
            home->lent = NULL;
        if (!home->idle) {
            b->refs = 0;
            home->idle = b;
            return;
        }
    }
    switch (b->kind) {
    case GL_BUF_HEAP:
        free(b->data);
        break;
    case GL_BUF_MMAP:
        if (b->registered)
            unregister_mapping(b);
        munmap(b->map_base, b->map_len);
        break;
    case GL_BUF_STRINGS: {
        gl_bytes *items = b->data;
        for (size_t i = 0; i < b->size / sizeof(gl_bytes); i++)
            free(items[i].data);
        free(items);
        break;
    }
    case GL_BUF_VIEW:
        gl_buffer_unref(b->parent);
        break;
    }
    drop_origin(b);
    free(b);
}

gl_buffer *gl_buffer_from_slot(gl_buffer_slot *slot, size_t size, bool zero)
{
    gl_buffer *b = slot->idle;
    if (b && b->size != size) {
        free(b->data);
        free(b);
        b = NULL;
    }
    slot->idle = NULL;
    if (b) {
        if (zero)
            memset(b->data, 0, size);
        b->hash_valid = false;
    } else {
        /* Aligned for vector kernels; the size rounded up as aligned_alloc wants. */
        size_t alloc = (size + 63) & ~(size_t)63;
        void *data = aligned_alloc(64, alloc ? alloc : 64);
        if (!data) {
            gl_fail(GL_ERR_NOMEM, "cannot allocate %zu bytes of tensor data", size);
            return NULL;
        }
        if (zero)
            memset(data, 0, size);
        b = buffer_new(GL_BUF_HEAP, data, size);
    }
    b->refs = 1;
    b->home = slot;
    charge(b, size);
    if (slot->lent && slot->lent->home == slot)
        slot->lent->home = NULL; /* still in use elsewhere: it is freed when done */
    slot->lent = b;
    return b;
}

void gl_buffer_detach(gl_buffer *b)
{
    if (b && b->home) {
        if (b->home->lent == b)
            b->home->lent = NULL;
        b->home = NULL;
    }
}

void gl_buffer_slot_clear(gl_buffer_slot *slot)
{
    if (slot->idle) {
        free(slot->idle->data);
        free(slot->idle);
    }
    if (slot->lent && slot->lent->home == slot)
        slot->lent->home = NULL;
    slot->idle = slot->lent = NULL;
}

/* The dims array for `rank` entries: t's own inline room, else the heap. */
static int64_t *dims_room(gl_tensor *t, int rank)
{
    return rank <= GL_TENSOR_INLINE_RANK ? t->inline_dims
                                         : gl_xmalloc((size_t)rank * sizeof(int64_t));
}

static void free_dims(gl_tensor *t)
{
    if (t->dims != t->inline_dims)
        free(t->dims);
}

static gl_tensor *tensor_header(gl_dtype dt, int rank, const int64_t *dims, int64_t count)
{
    gl_tensor *t = gl_xcalloc(1, sizeof(*t));
    t->dtype = dt;
    t->rank = rank;
    t->dims = dims_room(t, rank);
    if (rank > 0)
        memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t));
    t->count = count;
    return t;
}

void gl_tensor_set_rank(gl_tensor *t, int rank)
{
    int64_t *room = dims_room(t, rank);
    if (room != t->dims) {
        int keep = rank < t->rank ? rank : t->rank;
        memmove(room, t->dims, (size_t)(keep > 0 ? keep : 0) * sizeof(int64_t));
        free_dims(t);
        t->dims = room;
    }
    t->rank = rank;
}

gl_tensor *gl_tensor_frame_init(gl_tensor_frame *f, const gl_tensor *src)
{
    if (src)
        f->t = *src;
    else
        memset(&f->t, 0, sizeof(f->t));
    f->t.dims = f->room;
    if (src && src->rank > 0)
        memcpy(f->room, src->dims, (size_t)src->rank * sizeof(int64_t));
    return &f->t;
}

gl_tensor *gl_tensor_new(gl_dtype dt, int rank, const int64_t *dims)
{
    int64_t count;
    size_t esize = dt == GL_DT_STRING ? sizeof(gl_bytes) : gl_dtype_size(dt);
    if (!gl_dtype_valid(dt)) {
        gl_fail(GL_ERR_INPUT, "tensor of undefined element type");
        return NULL;
    }
    if (!gl_dims_count(dims, rank, esize, INT64_MAX, &count, "tensor") ||
        gl_limits_check_tensor(NULL, NULL, dt, rank, dims) != GL_OK)
        return NULL;
    gl_buffer *buf = NULL;
    if (count > 0) {
        size_t size = (size_t)count * esize;
        if (dt == GL_DT_STRING) {
            gl_bytes *items = calloc((size_t)count, sizeof(gl_bytes));
            if (!items) {
                gl_fail(GL_ERR_NOMEM, "cannot allocate %lld strings", (long long)count);
                return NULL;
            }
            buf = charge(gl_buffer_new_strings(items, (size_t)count), size);
        } else if (!(buf = gl_buffer_alloc(size))) {
            return NULL;
        }
    }
    gl_tensor *t = tensor_header(dt, rank, dims, count);
    t->buf = buf;
    return t;
}

gl_tensor *gl_tensor_wrap(gl_dtype dt, int rank, const int64_t *dims, int64_t count,
                          gl_buffer *buf)
{
    gl_tensor *t = tensor_header(dt, rank, dims, count);
    t->buf = buf;
    return t;
}

gl_tensor *gl_tensor_share(const gl_tensor *src)
{
    gl_tensor *t = tensor_header(src->dtype, src->rank, src->dims, src->count);
    t->buf = gl_buffer_ref(src->buf);
    t->layout = src->layout;
    t->name = gl_xstrdup(src->name);
    t->doc_string = gl_xstrdup(src->doc_string);
    t->external = src->external;
    return t;
}

void gl_tensor_free(gl_tensor *t)
{
    if (!t)
        return;
    gl_buffer_unref(t->buf);
    free_dims(t);
    free(t->name);
    free(t->doc_string);
    free(t);
}

size_t gl_tensor_nbytes(const gl_tensor *t)
{
    if (t->dtype != GL_DT_STRING)
        return (size_t)t->count * gl_dtype_size(t->dtype);
    size_t n = 0;
    const gl_bytes *items = gl_tensor_data(t);
    for (int64_t i = 0; i < t->count; i++)
        n += items[i].len;
    return n;
}

void *gl_tensor_make_writable(gl_tensor *t)
{
    gl_buffer *b = t->buf;
    if (!b)
        return NULL;
    if (__atomic_load_n(&b->refs, __ATOMIC_ACQUIRE) == 1 && !b->readonly) {
        b->hash_valid = false; /* the caller is about to write */
        drop_origin(b);        /* and the file no longer holds these bytes */
        return b->data;
    }
    /* The copy counts under the run limits but is not refused by them: its size is that
     * of a tensor the run already holds, and callers have nothing to do on failure. */
    gl_buffer *copy;
    if (b->kind == GL_BUF_STRINGS) {
        size_t n = b->size / sizeof(gl_bytes);
        gl_bytes *src = b->data, *dst = gl_xcalloc(n, sizeof(gl_bytes));
        for (size_t i = 0; i < n; i++) {
            dst[i].len = src[i].len;
            dst[i].data = gl_xmalloc(src[i].len ? src[i].len : 1);
            memcpy(dst[i].data, src[i].data, src[i].len);
        }
        copy = gl_buffer_new_strings(dst, n);
    } else {
        void *data = gl_xmalloc(b->size);
        memcpy(data, b->data, b->size);
        copy = gl_buffer_new_heap(data, b->size);
    }
    charge(copy, b->size);
    gl_buffer_unref(b);
    t->buf = copy;
    t->external = false;
    return copy->data;
}

bool gl_tensor_equal(const gl_tensor *a, const gl_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->count != b->count)
        return false;
    if (memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(int64_t)) != 0)
        return false;
    if (a->count == 0 || a->buf == b->buf)
        return true;
    if (a->dtype == GL_DT_STRING) {
        const gl_bytes *x = gl_tensor_data(a), *y = gl_tensor_data(b);
        for (int64_t i = 0; i < a->count; i++)
            if (x[i].len != y[i].len || memcmp(x[i].data, y[i].data, x[i].len) != 0)
                return false;
        return true;
    }
    return memcmp(gl_tensor_data(a), gl_tensor_data(b), gl_tensor_nbytes(a)) == 0;
}

/* Bytes hashed at a time; below one chunk FNV-1a as ever. */
#define HASH_CHUNK ((size_t)4 << 20)

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels refuse it and pages fault in */
#endif

/* The whole pages of [p, p + len) inside b's mapping: false when b is not mapped. */
static bool mapped_pages(const gl_buffer *b, const char *p, size_t len, uintptr_t *start,
                         uintptr_t *end)
{
    long page = sysconf(_SC_PAGESIZE);
    if (b->kind != GL_BUF_MMAP || page <= 0)
        return false;
    uintptr_t lo = (uintptr_t)b->map_base, hi = lo + b->map_len, ps = (uintptr_t)page;
    *start = (uintptr_t)p - (uintptr_t)p % ps;
    *end = (uintptr_t)p + len;
    *end = *end >= hi ? hi : *end - *end % ps;
    if (*start < lo)
        *start = lo;
    return *end > *start;
}

/* A chunk of a mapped file about to be read: mapped in one call, not page by page. */
static void populate_mapped(const gl_buffer *b, const char *p, size_t len)
{
    uintptr_t start, end;
    if (mapped_pages(b, p, len, &start, &end))
        (void)madvise((void *)start, end - start, MADV_POPULATE_READ); /* best effort */
}

/* A mapped file's pages hashed: given back (the mapping is read-only and never written,
 * so the file still holds every byte and a later read maps them in again). */
static void release_mapped(const gl_buffer *b, const char *p, size_t len)
{
    uintptr_t start, end;
    if (mapped_pages(b, p, len, &start, &end))
        (void)madvise((void *)start, end - start, MADV_DONTNEED);
}

/* The pipeline hashes every initializer once, to tell whether a pass changed anything
 * (ir/fingerprint.c): with FNV-1a a 1.2 GB decoder took 2.4 s and kept all its weights
 * resident (1.19 GB RSS for `optimize`, which writes none of them: issue 23). Large
 * buffers go chunk by chunk through gl_hash_bulk, a mapped file's pages released after
 * each chunk. */
static uint64_t hash_plain_bytes(const gl_buffer *b, const void *data, size_t n)
{
    if (n < HASH_CHUNK)
        return gl_fnv1a(GL_FNV_OFFSET, data, n);
    const char *p = data;
    uint64_t h = GL_FNV_OFFSET;
    for (size_t done = 0; done < n; done += HASH_CHUNK) {
        size_t len = n - done < HASH_CHUNK ? n - done : HASH_CHUNK;
        populate_mapped(b, p + done, len);
        h = gl_hash_bulk(h, p + done, len);
        release_mapped(b, p + done, len);
    }
    return h;
}

uint64_t gl_tensor_hash(const gl_tensor *t)
{
    uint64_t h = GL_FNV_OFFSET;
    int dt = t->dtype;
    h = gl_fnv1a(h, &dt, sizeof(dt));
    h = gl_fnv1a(h, t->dims, (size_t)t->rank * sizeof(int64_t));
    if (t->count == 0)
        return h;
    gl_buffer *b = t->buf;
    /* Threads that share the buffer may both fill the cache: same value, atomic stores. */
    if (!__atomic_load_n(&b->hash_valid, __ATOMIC_ACQUIRE)) {
        uint64_t bh = GL_FNV_OFFSET;
        if (t->dtype == GL_DT_STRING) {
            const gl_bytes *items = gl_tensor_data(t);
            for (int64_t i = 0; i < t->count; i++) {
                bh = gl_fnv1a(bh, &items[i].len, sizeof(items[i].len));
                bh = gl_fnv1a(bh, items[i].data, items[i].len);
            }
        } else {
            bh = hash_plain_bytes(b, gl_tensor_data(t), gl_tensor_nbytes(t));
        }
        __atomic_store_n(&b->hash, bh, __ATOMIC_RELAXED);
        __atomic_store_n(&b->hash_valid, true, __ATOMIC_RELEASE);
    }
    uint64_t bh = __atomic_load_n(&b->hash, __ATOMIC_RELAXED);
    return gl_fnv1a(h, &bh, sizeof(bh));
}

double gl_tensor_get_f64(const gl_tensor *t, int64_t i)
{
    const void *p = gl_tensor_data(t);
    if (!p || i < 0 || i >= t->count)
        return 0;
    switch (t->dtype) {
    case GL_DT_FLOAT: return ((const float *)p)[i];
    case GL_DT_DOUBLE: return ((const double *)p)[i];
    case GL_DT_FLOAT16: return gl_f16_to_f32(((const uint16_t *)p)[i]);
    case GL_DT_BFLOAT16: return gl_bf16_to_f32(((const uint16_t *)p)[i]);
    case GL_DT_INT8: return ((const int8_t *)p)[i];
    case GL_DT_UINT8: return ((const uint8_t *)p)[i];
    case GL_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    case GL_DT_INT16: return ((const int16_t *)p)[i];
    case GL_DT_UINT16: return ((const uint16_t *)p)[i];
    case GL_DT_INT32: return ((const int32_t *)p)[i];
    case GL_DT_UINT32: return ((const uint32_t *)p)[i];
    case GL_DT_INT64: return (double)((const int64_t *)p)[i];
    case GL_DT_UINT64: return (double)((const uint64_t *)p)[i];
    case GL_DT_COMPLEX64: return ((const float *)p)[2 * i];
    case GL_DT_COMPLEX128: return ((const double *)p)[2 * i];
    default: return 0;
    }
}

void gl_format_type(gl_dtype dt, int rank, const int64_t *dims, char *buf, size_t len)
{
    size_t used = 0;
    for (int d = -1; len && d <= rank; d++) {
        int n = d < 0      ? snprintf(buf, len, "%s[", gl_dtype_name(dt))
                : d < rank ? snprintf(buf + used, len - used, "%s%lld", d ? "," : "",
                                      (long long)dims[d])
                           : snprintf(buf + used, len - used, "]");
        if (n < 0 || (used += (size_t)n) >= len) {
            if (len >= 4)
                memcpy(buf + len - 4, "...", 4);
            return;
        }
    }
}

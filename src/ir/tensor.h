/* tensor.h — tensor storage.
 *
 * A gl_tensor is a small header (dtype, dims) over a gl_buffer of bytes. Buffers are
 * reference counted and copy-on-write: a graph snapshot clones its tensors by taking a
 * reference, and a pass that must change bytes calls gl_tensor_make_writable() first,
 * which copies only when the buffer is shared or read-only (mmap'd external data, or
 * bytes still owned by someone else).
 *
 * Element layout: dense, row-major, native little-endian, gl_dtype_size() bytes per
 * element; BOOL is one byte (0/1); FLOAT16/BFLOAT16 are uint16_t bit patterns. STRING
 * tensors hold `gl_bytes` records whose `data` the buffer owns (freed with it).
 */
#ifndef GL_TENSOR_H
#define GL_TENSOR_H

#include "ir/dtype.h"
#include "util/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits that keep a hostile file from making us allocate without bound. */
#define GL_MAX_RANK 64

typedef struct gl_bytes {
    size_t len;
    uint8_t *data; /* owned by whoever owns the gl_bytes (for tensors: the buffer) */
} gl_bytes;

typedef enum gl_buffer_kind {
    GL_BUF_HEAP,   /* malloc'd, freed with free() */
    GL_BUF_MMAP,   /* a read-only mapping: munmap(map_base, map_len) */
    GL_BUF_STRINGS, /* array of gl_bytes, each data malloc'd */
    GL_BUF_VIEW     /* bytes inside `parent` (an executor's arena): holds one reference */
} gl_buffer_kind;

/* Where a buffer's bytes lie, unchanged, in a file: the external data they were loaded
 * from. A save points at them there instead of writing them again (onnx_io.h); any
 * write drops it (gl_tensor_make_writable). */
typedef struct gl_file_extent {
    char *path;        /* the file as opened (symbolic links resolved); owned */
    uint64_t offset;   /* of the first byte */
    uint64_t dev, ino; /* the file's identity then: a file put at `path` since is not it */
} gl_file_extent;

typedef struct gl_buffer {
    int refs;
    gl_buffer_kind kind;
    bool readonly;   /* mmap'd: never write, copy first */
    void *data;      /* first byte of the tensor data */
    size_t size;     /* bytes (for STRINGS: count * sizeof(gl_bytes)) */
    void *map_base;  /* GL_BUF_MMAP: page-aligned mapping start */
    size_t map_len;
    /* Hash of the bytes, computed once: every write goes through
     * gl_tensor_make_writable, which drops it. */
    bool hash_valid;
    uint64_t hash;
    /* A buffer lent by a gl_buffer_slot: when its last reference goes it returns to the
     * slot for the next run instead of being freed (NULL: an ordinary buffer). */
    struct gl_buffer_slot *home;
    /* Bytes allocated under run limits (limits.h) and counted there until freed (or,
     * lent by a slot, until back in it). */
    unsigned charged_to;
    size_t charged;
    struct gl_buffer *parent; /* GL_BUF_VIEW: the buffer whose bytes these are */
    gl_file_extent *origin;   /* owned; NULL: the bytes are in no file we know */
    /* A GL_BUF_MMAP of `origin`, registered (gl_buffer_share_mapping), and the next of
     * its bucket in the registry (tensor.c). */
    bool registered;
    struct gl_buffer *next_mapping;
} gl_buffer;

/* A place an executor keeps one output buffer between runs, so that a plan run again
 * and again writes into memory it already touched: no allocation, no page faults.
 * The slot holds no reference while the buffer is out: copy-on-write still sees a
 * buffer held once as private (gl_tensor_make_writable does not copy it). */
typedef struct gl_buffer_slot {
    gl_buffer *idle;  /* back from its last use; owned by the slot */
    gl_buffer *lent;  /* out in a tensor (not owned) */
} gl_buffer_slot;

/* A buffer of `size` bytes from the slot: the idle one when it has that size (zeroed
 * again when `zero`), else a new one (64-byte aligned; zeroed when `zero`). The caller
 * holds the one reference. NULL (with a message) when memory runs out. */
gl_buffer *gl_buffer_from_slot(gl_buffer_slot *slot, size_t size, bool zero);
/* The buffer no longer returns to its slot (it leaves the executor with a caller). */
void gl_buffer_detach(gl_buffer *b);
/* Free the idle buffer and detach the lent one (the slot is going away). */
void gl_buffer_slot_clear(gl_buffer_slot *slot);

/* Dims a header holds itself: every tensor of the corpus has at most 6, and a model holds
 * tens of thousands of small initializers (issue 23: 100k-node ladder, 23704 of them), so
 * room for GL_MAX_RANK in each header (568 bytes) was most of its size. A rank above this
 * keeps its dims on the heap. */
#define GL_TENSOR_INLINE_RANK 8

typedef struct gl_tensor {
    gl_dtype dtype;
    int rank;
    /* `rank` entries: inline_dims, or (rank > GL_TENSOR_INLINE_RANK) a heap array the
     * header owns. Write entries in place freely; change the rank of a tensor made by
     * this module only through gl_tensor_set_rank. */
    int64_t *dims;
    int64_t count;   /* product of dims (1 for a scalar) */
    gl_buffer *buf;  /* owned reference; NULL only for an empty (count 0) tensor */
    /* Where the bytes came from, kept for round trips and messages. */
    char *name;              /* owned, may be NULL */
    char *doc_string;        /* owned, may be NULL */
    bool external;           /* loaded from external data: save it that way by default */
    /* NULL: dense row-major, as everywhere in the IR. Inside the executor a backend may
     * keep an intermediate in its own layout (oneDNN's nChw16c): the bytes are then not
     * row-major, and only that backend reads them; the executor converts the tensor
     * (gl_exec_plain) before anything else sees it. Not owned. */
    const struct gl_tensor_layout *layout;
    /* Last, so that a write past it leaves the allocation (and ASan says so). */
    int64_t inline_dims[GL_TENSOR_INLINE_RANK];
} gl_tensor;

/* A header on the stack with room for any rank: a kernel's view of bytes under other dims
 * (a broadcast operand, a batch shape). Never passed to gl_tensor_free or
 * gl_tensor_set_rank; its dims may be written up to GL_MAX_RANK. */
typedef struct gl_tensor_frame {
    gl_tensor t;
    int64_t room[GL_MAX_RANK];
} gl_tensor_frame;

/* f's header: a copy of src's (dims copied into the frame; the buffer not referenced, so
 * it must outlive the frame's use), or an empty one when src is NULL. */
gl_tensor *gl_tensor_frame_init(gl_tensor_frame *f, const gl_tensor *src);

/* Element count of dims, with overflow and sanity checks: returns false (and leaves a
 * message naming `what`) when a dim is negative or the product exceeds `limit` elements
 * or SIZE_MAX bytes at `elem_size` bytes each. */
bool gl_dims_count(const int64_t *dims, int rank, size_t elem_size, int64_t limit,
                   int64_t *count, const char *what);

gl_buffer *gl_buffer_new_heap(void *data, size_t size); /* takes ownership of data */
/* Zeroed; NULL on failure. Counted as alive under the thread's run limits (limits.h). */
gl_buffer *gl_buffer_alloc(size_t size);
gl_buffer *gl_buffer_new_mmap(void *map_base, size_t map_len, void *data, size_t size);
gl_buffer *gl_buffer_new_strings(gl_bytes *items, size_t count); /* takes ownership */
/* `size` bytes at `data` inside `parent` (takes a reference to parent); writable. */
gl_buffer *gl_buffer_new_view(gl_buffer *parent, void *data, size_t size);
/* A read-only mapping (external data) gives its resident pages back to the system: for
 * a backend that has copied the bytes into a layout of its own, so that they are not held
 * twice. The bytes stay readable (paged in again from the file); other buffers: nothing. */
void gl_buffer_release_pages(gl_buffer *b);
/* The one mapping of a file extent in this process: two loads of one model (profile's
 * fused and unfused sessions) would otherwise map its external data twice, and every
 * mapping's pages count in the resident set. The buffer already mapping `size` bytes at
 * `at` (its file's dev, ino and offset), with a new reference, or NULL. */
gl_buffer *gl_buffer_find_mapping(const gl_file_extent *at, size_t size);
/* Record b (a new GL_BUF_MMAP, its origin set to the extent it maps) for
 * gl_buffer_find_mapping until it is freed. */
void gl_buffer_share_mapping(gl_buffer *b);
gl_buffer *gl_buffer_ref(gl_buffer *b);
void gl_buffer_unref(gl_buffer *b);

/* A new tensor with zeroed storage. NULL (with a message) if the size is absurd, over the
 * thread's run limits (limits.h) or memory runs out. */
gl_tensor *gl_tensor_new(gl_dtype dt, int rank, const int64_t *dims);
/* A tensor over an existing buffer (takes the caller's reference). */
gl_tensor *gl_tensor_wrap(gl_dtype dt, int rank, const int64_t *dims, int64_t count,
                          gl_buffer *buf);
/* A new header sharing the same buffer (refcount +1). */
gl_tensor *gl_tensor_share(const gl_tensor *t);
void gl_tensor_free(gl_tensor *t);
/* Give t `rank` dims (0..GL_MAX_RANK), keeping the first min(old, new) of them; the
 * caller writes the rest. Count and bytes are the caller's to keep consistent. */
void gl_tensor_set_rank(gl_tensor *t, int rank);

size_t gl_tensor_nbytes(const gl_tensor *t); /* count * elem size (strings: sum of lens) */
static inline const void *gl_tensor_data(const gl_tensor *t)
{
    return t->buf ? t->buf->data : NULL;
}
/* Make the bytes private and writable (copy if shared or read-only); then return them. */
void *gl_tensor_make_writable(gl_tensor *t);

/* Same dtype, dims and bytes (strings compared by content). */
bool gl_tensor_equal(const gl_tensor *a, const gl_tensor *b);
/* FNV-1a over dtype, dims and bytes: for fingerprints and cse. */
uint64_t gl_tensor_hash(const gl_tensor *t);
/* Element i as double (numeric dtypes only; 0 for strings). */
double gl_tensor_get_f64(const gl_tensor *t, int64_t i);

/* "float[16384,16384]" for messages (cut with "..." when it does not fit in len). */
void gl_format_type(gl_dtype dt, int rank, const int64_t *dims, char *buf, size_t len);

#endif

/* tensor_decode.c — onnx.TensorProto -> gl_tensor, for every dtype and every encoding
 * (raw_data, the typed repeated fields, external data).
 *
 * Sizes claimed by the proto (dims) are checked against the bytes actually present
 * before anything is allocated, so a proto that claims 10^12 elements and carries 16
 * bytes is an error, not an allocation.
 */
#include "onnx/onnx_io.h"

#include "onnx.pb-c.h"
#include "util/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* raw_data and external data are little-endian; we hand the bytes out as they are. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tensor_decode.c assumes a little-endian host"
#endif

/* ---- which typed field carries each dtype (onnx.proto, TensorProto comments) ----- */

typedef enum typed_field {
    FIELD_NONE,
    FIELD_FLOAT,  /* float_data */
    FIELD_INT32,  /* int32_data */
    FIELD_STRING, /* string_data */
    FIELD_INT64,  /* int64_data */
    FIELD_DOUBLE, /* double_data */
    FIELD_UINT64, /* uint64_data */
} typed_field;

typedef struct dtype_encoding {
    typed_field field;
    int per_elem;     /* field values per element: 2 for complex (real, imaginary) */
    bool same_layout; /* the field's array is already our in-memory format */
    int64_t min, max; /* accepted range when narrowing (same_layout false) */
} dtype_encoding;

static const dtype_encoding encodings[GL_DT_COUNT] = {
    [GL_DT_FLOAT] = {FIELD_FLOAT, 1, true, 0, 0},
    [GL_DT_COMPLEX64] = {FIELD_FLOAT, 2, true, 0, 0},
    [GL_DT_INT32] = {FIELD_INT32, 1, true, 0, 0},
    [GL_DT_INT8] = {FIELD_INT32, 1, false, INT8_MIN, INT8_MAX},
    [GL_DT_UINT8] = {FIELD_INT32, 1, false, 0, UINT8_MAX},
    [GL_DT_INT16] = {FIELD_INT32, 1, false, INT16_MIN, INT16_MAX},
    [GL_DT_UINT16] = {FIELD_INT32, 1, false, 0, UINT16_MAX},
    /* Any non-zero value is true; we store one byte, 0 or 1. */
    [GL_DT_BOOL] = {FIELD_INT32, 1, false, INT32_MIN, INT32_MAX},
    /* 16-bit patterns; writers that sign-extend them are accepted too. */
    [GL_DT_FLOAT16] = {FIELD_INT32, 1, false, INT16_MIN, UINT16_MAX},
    [GL_DT_BFLOAT16] = {FIELD_INT32, 1, false, INT16_MIN, UINT16_MAX},
    [GL_DT_STRING] = {FIELD_STRING, 1, false, 0, 0},
    [GL_DT_INT64] = {FIELD_INT64, 1, true, 0, 0},
    [GL_DT_DOUBLE] = {FIELD_DOUBLE, 1, true, 0, 0},
    [GL_DT_COMPLEX128] = {FIELD_DOUBLE, 2, true, 0, 0},
    [GL_DT_UINT64] = {FIELD_UINT64, 1, true, 0, 0},
    [GL_DT_UINT32] = {FIELD_UINT64, 1, false, 0, UINT32_MAX},
};

static const char *const field_names[] = {
    [FIELD_NONE] = "none",           [FIELD_FLOAT] = "float_data",
    [FIELD_INT32] = "int32_data",    [FIELD_STRING] = "string_data",
    [FIELD_INT64] = "int64_data",    [FIELD_DOUBLE] = "double_data",
    [FIELD_UINT64] = "uint64_data",
};

/* A typed field's array and length, seen uniformly. `array` is the address of the
 * proto's pointer so that taking the array over can clear it. */
typedef struct field_view {
    void **array;
    size_t *n;
} field_view;

static field_view view_field(Onnx__TensorProto *tp, typed_field f)
{
    switch (f) {
    case FIELD_FLOAT: return (field_view){(void **)&tp->float_data, &tp->n_float_data};
    case FIELD_INT32: return (field_view){(void **)&tp->int32_data, &tp->n_int32_data};
    case FIELD_STRING: return (field_view){(void **)&tp->string_data, &tp->n_string_data};
    case FIELD_INT64: return (field_view){(void **)&tp->int64_data, &tp->n_int64_data};
    case FIELD_DOUBLE: return (field_view){(void **)&tp->double_data, &tp->n_double_data};
    case FIELD_UINT64: return (field_view){(void **)&tp->uint64_data, &tp->n_uint64_data};
    case FIELD_NONE: break;
    }
    return (field_view){NULL, NULL};
}

/* What is being decoded, passed down instead of six parameters. */
typedef struct decode_job {
    Onnx__TensorProto *tp;
    const char *ctx;  /* "m.onnx: initializer 'w'" */
    gl_dtype dtype;
    int64_t count;    /* elements */
    size_t nbytes;    /* count * element size (0 for strings) */
    bool take;
    bool no_mmap;
    const char *dir;
} decode_job;

/* ---- buffers sized by the file: plain malloc, GL_ERR_NOMEM on failure ------------ */

static gl_status heap_buffer(size_t size, const char *ctx, gl_buffer **out)
{
    void *data = malloc(size ? size : 1);
    if (!data)
        return gl_fail(GL_ERR_NOMEM, "%s: cannot allocate %zu bytes", ctx, size);
    *out = gl_buffer_new_heap(data, size);
    return GL_OK;
}

/* Either take the proto's malloc'd array (protobuf-c's default allocator is malloc) or
 * copy it. */
static gl_status adopt_or_copy(void **array, size_t *n, size_t nbytes, const decode_job *job,
                               gl_buffer **out)
{
    if (job->take) {
        *out = gl_buffer_new_heap(*array, nbytes);
        *array = NULL;
        *n = 0;
        return GL_OK;
    }
    gl_status st = heap_buffer(nbytes, job->ctx, out);
    if (st == GL_OK)
        memcpy((*out)->data, *array, nbytes);
    return st;
}

/* ---- raw_data ---------------------------------------------------------------------- */

static gl_status decode_raw(decode_job *job, gl_buffer **out)
{
    Onnx__TensorProto *tp = job->tp;
    if (job->dtype == GL_DT_STRING)
        return gl_fail(GL_ERR_INPUT, "%s: STRING tensors cannot use raw_data", job->ctx);
    if (tp->raw_data.len != job->nbytes)
        return gl_fail(GL_ERR_INPUT,
                       "%s: raw_data holds %zu bytes, but %lld %s elements need %zu",
                       job->ctx, tp->raw_data.len, (long long)job->count,
                       gl_dtype_onnx_name(job->dtype), job->nbytes);
    if (job->count == 0)
        return GL_OK;
    return adopt_or_copy((void **)&tp->raw_data.data, &tp->raw_data.len, job->nbytes, job,
                         out);
}

/* ---- typed fields ------------------------------------------------------------------ */

static void store_narrow(void *dst, size_t i, gl_dtype dt, int64_t v)
{
    switch (dt) {
    case GL_DT_INT8: ((int8_t *)dst)[i] = (int8_t)v; break;
    case GL_DT_UINT8: ((uint8_t *)dst)[i] = (uint8_t)v; break;
    case GL_DT_BOOL: ((uint8_t *)dst)[i] = v != 0; break;
    case GL_DT_INT16: ((int16_t *)dst)[i] = (int16_t)v; break;
    case GL_DT_UINT16:
    case GL_DT_FLOAT16:
    case GL_DT_BFLOAT16: ((uint16_t *)dst)[i] = (uint16_t)(v & 0xffff); break;
    case GL_DT_UINT32: ((uint32_t *)dst)[i] = (uint32_t)v; break;
    default: break;
    }
}

/* Value i of int32_data or uint64_data (clamped to INT64_MAX, which no narrow type
 * accepts). */
static int64_t field_value(field_view fv, typed_field f, size_t i)
{
    if (f == FIELD_INT32)
        return ((const int32_t *)*fv.array)[i];
    uint64_t u = ((const uint64_t *)*fv.array)[i];
    return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
}

/* int32_data -> 8/16-bit types, uint64_data -> UINT32: convert element by element,
 * refusing values the target type cannot hold. */
static gl_status decode_narrowed(decode_job *job, field_view fv, typed_field f,
                                 gl_buffer **out)
{
    const dtype_encoding *enc = &encodings[job->dtype];
    for (size_t i = 0; i < *fv.n; i++) {
        int64_t v = field_value(fv, f, i);
        if (v < enc->min || v > enc->max)
            return gl_fail(GL_ERR_INPUT, "%s: %s[%zu] = %lld does not fit %s", job->ctx,
                           field_names[f], i, (long long)v, gl_dtype_onnx_name(job->dtype));
    }
    gl_status st = heap_buffer(job->nbytes, job->ctx, out);
    if (st != GL_OK)
        return st;
    for (size_t i = 0; i < *fv.n; i++)
        store_narrow((*out)->data, i, job->dtype, field_value(fv, f, i));
    return GL_OK;
}

static gl_status decode_strings(decode_job *job, field_view fv, gl_buffer **out)
{
    ProtobufCBinaryData *src = *fv.array;
    size_t n = *fv.n;
    gl_bytes *items = calloc(n, sizeof(*items));
    if (!items)
        return gl_fail(GL_ERR_NOMEM, "%s: cannot allocate %zu strings", job->ctx, n);
    *out = gl_buffer_new_strings(items, n); /* frees what is filled in so far on error */
    for (size_t i = 0; i < n; i++) {
        items[i].len = src[i].len;
        if (job->take && src[i].data) {
            items[i].data = src[i].data;
            src[i].data = NULL;
            src[i].len = 0;
            continue;
        }
        /* Empty strings get a real (1-byte) allocation so data is never NULL. */
        items[i].data = malloc(src[i].len ? src[i].len : 1);
        if (!items[i].data) {
            gl_buffer_unref(*out);
            *out = NULL;
            return gl_fail(GL_ERR_NOMEM, "%s: cannot allocate string %zu", job->ctx, i);
        }
        if (src[i].len)
            memcpy(items[i].data, src[i].data, src[i].len);
    }
    return GL_OK;
}

static gl_status decode_typed(decode_job *job, gl_buffer **out)
{
    const dtype_encoding *enc = &encodings[job->dtype];
    field_view fv = view_field(job->tp, enc->field);
    uint64_t want = (uint64_t)job->count * (uint64_t)enc->per_elem;
    if (*fv.n != want)
        return gl_fail(GL_ERR_INPUT, "%s: %s holds %zu values, but %lld %s elements need %llu",
                       job->ctx, field_names[enc->field], *fv.n, (long long)job->count,
                       gl_dtype_onnx_name(job->dtype), (unsigned long long)want);
    if (job->count == 0)
        return GL_OK;
    if (enc->field == FIELD_STRING)
        return decode_strings(job, fv, out);
    if (enc->same_layout)
        return adopt_or_copy(fv.array, fv.n, job->nbytes, job, out);
    return decode_narrowed(job, fv, enc->field, out);
}

/* ---- external data ------------------------------------------------------------------ */

typedef struct external_ref {
    const char *location;
    uint64_t offset;
    bool has_length;
    uint64_t length;
} external_ref;

/* Decimal digits only: no sign, no spaces, no overflow. */
static bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static gl_status parse_external_keys(const decode_job *job, external_ref *ref)
{
    *ref = (external_ref){0};
    Onnx__TensorProto *tp = job->tp;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const char *key = tp->external_data[i]->key, *val = tp->external_data[i]->value;
        if (!key)
            continue;
        if (!strcmp(key, "location")) {
            ref->location = val;
        } else if (!strcmp(key, "offset")) {
            if (!parse_u64(val, &ref->offset))
                return gl_fail(GL_ERR_INPUT, "%s: external data offset '%s' is not a number",
                               job->ctx, val ? val : "");
        } else if (!strcmp(key, "length")) {
            if (!parse_u64(val, &ref->length))
                return gl_fail(GL_ERR_INPUT, "%s: external data length '%s' is not a number",
                               job->ctx, val ? val : "");
            ref->has_length = true;
        } /* "checksum" and unknown keys: nothing to check against */
    }
    if (!ref->location || !*ref->location)
        return gl_fail(GL_ERR_INPUT, "%s: external data without a location", job->ctx);
    return GL_OK;
}

/* The location must name a file inside the model's folder: no absolute path, no "..",
 * and (after resolving symlinks) nothing outside the folder. */
static gl_status check_location_syntax(const decode_job *job, const char *loc)
{
    if (loc[0] == '/')
        return gl_fail(GL_ERR_INPUT, "%s: external data location '%s' is an absolute path",
                       job->ctx, loc);
    for (const char *p = loc; *p;) {
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return gl_fail(GL_ERR_INPUT,
                           "%s: external data location '%s' leaves the model's folder",
                           job->ctx, loc);
        p += len;
        while (*p == '/')
            p++;
    }
    return GL_OK;
}

/* Opens the file; real_file (PATH_MAX bytes) receives its resolved path. */
static gl_status open_external(const decode_job *job, const char *loc, int *fd_out,
                               char *real_file)
{
    gl_status st = check_location_syntax(job, loc);
    if (st != GL_OK)
        return st;
    char joined[PATH_MAX], real_dir[PATH_MAX];
    if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", job->dir, loc) >= sizeof(joined))
        return gl_fail(GL_ERR_INPUT, "%s: external data location '%s' is too long", job->ctx,
                       loc);
    if (!realpath(job->dir, real_dir))
        return gl_fail(GL_ERR_IO, "%s: cannot resolve folder '%s': %s", job->ctx, job->dir,
                       strerror(errno));
    if (!realpath(joined, real_file))
        return gl_fail(GL_ERR_IO, "%s: cannot open external data '%s': %s", job->ctx, loc,
                       strerror(errno));
    size_t dlen = strlen(real_dir);
    bool inside = strncmp(real_file, real_dir, dlen) == 0 &&
                  (real_file[dlen] == '/' || (dlen == 1 && real_dir[0] == '/'));
    if (!inside)
        return gl_fail(GL_ERR_INPUT,
                       "%s: external data location '%s' resolves to '%s', outside the "
                       "model's folder",
                       job->ctx, loc, real_file);
    char label[PATH_MAX + 300];
    snprintf(label, sizeof(label), "%s: external data '%s'", job->ctx, loc);
    size_t size;
    return gl_file_open_regular(real_file, label, fd_out, &size);
}

/* Offset/length against the file and against what the dims need. */
/* The extent fits the file; *at receives where it lies (its path: real_file). */
static gl_status check_extent(const decode_job *job, const external_ref *ref, int fd,
                              const char *real_file, gl_file_extent *at)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return gl_fail(GL_ERR_IO, "%s: cannot stat external data '%s': %s", job->ctx,
                       ref->location, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return gl_fail(GL_ERR_INPUT, "%s: external data '%s' is not a regular file", job->ctx,
                       ref->location);
    if (ref->has_length && ref->length != job->nbytes)
        return gl_fail(GL_ERR_INPUT,
                       "%s: external data length %llu does not match the %zu bytes of %lld "
                       "%s elements",
                       job->ctx, (unsigned long long)ref->length, job->nbytes,
                       (long long)job->count, gl_dtype_onnx_name(job->dtype));
    uint64_t size = (uint64_t)st.st_size;
    if (ref->offset > size || job->nbytes > size - ref->offset)
        return gl_fail(GL_ERR_INPUT,
                       "%s: external data '%s': offset %llu + length %zu is beyond the end "
                       "of the file (%llu bytes)",
                       job->ctx, ref->location, (unsigned long long)ref->offset, job->nbytes,
                       (unsigned long long)size);
    *at = (gl_file_extent){(char *)real_file, ref->offset, (uint64_t)st.st_dev,
                           (uint64_t)st.st_ino};
    return GL_OK;
}

/* A new read-only mapping starting at the page boundary below the offset. Returns NULL
 * (and the caller falls back to reading) when the data would be misaligned for its
 * element type or the mapping fails. */
static gl_buffer *map_extent(const decode_job *job, const external_ref *ref, int fd)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return NULL;
    size_t esize = gl_dtype_size(job->dtype), align = esize > 8 ? 8 : esize;
    uint64_t base_off = ref->offset - ref->offset % (uint64_t)page;
    size_t delta = (size_t)(ref->offset - base_off);
    if (align > 1 && delta % align != 0)
        return NULL;
    if (job->nbytes > SIZE_MAX - delta || base_off > (uint64_t)INT64_MAX)
        return NULL;
    size_t map_len = delta + job->nbytes;
    void *base = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, fd, (off_t)base_off);
    if (base == MAP_FAILED)
        return NULL;
    return gl_buffer_new_mmap(base, map_len, (char *)base + delta, job->nbytes);
}

/* The bytes as they lie in the file (`at`, its path borrowed), for a save to point at
 * instead of writing them again, and for the registry of mappings: a copy in b. */
static void note_origin(gl_buffer *b, const gl_file_extent *at)
{
    b->origin = gl_xmalloc(sizeof(*b->origin));
    *b->origin = *at;
    b->origin->path = gl_xstrdup(at->path);
}

/* The extent `at` mapped read-only: the mapping another load of the same file made when
 * one is alive (gl_buffer_find_mapping, its origin noted then), else a new one,
 * registered for the next. */
static gl_buffer *map_external(const decode_job *job, const external_ref *ref, int fd,
                               const gl_file_extent *at)
{
    gl_buffer *shared = gl_buffer_find_mapping(at, job->nbytes);
    if (shared)
        return shared;
    gl_buffer *b = map_extent(job, ref, fd);
    if (b) {
        note_origin(b, at);
        gl_buffer_share_mapping(b);
    }
    return b;
}

static gl_status read_external(const decode_job *job, const external_ref *ref, int fd,
                               gl_buffer **out)
{
    gl_status st = heap_buffer(job->nbytes, job->ctx, out);
    if (st != GL_OK)
        return st;
    char *dst = (*out)->data;
    size_t done = 0;
    while (done < job->nbytes) {
        ssize_t r = pread(fd, dst + done, job->nbytes - done, (off_t)(ref->offset + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            gl_buffer_unref(*out);
            *out = NULL;
            return gl_fail(GL_ERR_IO, "%s: reading external data '%s' failed: %s", job->ctx,
                           ref->location, r < 0 ? strerror(errno) : "file shrank");
        }
        done += (size_t)r;
    }
    return GL_OK;
}

static gl_status decode_external(decode_job *job, gl_buffer **out)
{
    if (job->dtype == GL_DT_STRING)
        return gl_fail(GL_ERR_INPUT, "%s: STRING tensors cannot use external data", job->ctx);
    if (!job->dir)
        return gl_fail(GL_ERR_INPUT, "%s: external data is not allowed here (no model folder)",
                       job->ctx);
    external_ref ref;
    gl_status st = parse_external_keys(job, &ref);
    int fd = -1;
    char real_file[PATH_MAX];
    gl_file_extent at;
    if (st == GL_OK)
        st = open_external(job, ref.location, &fd, real_file);
    if (st == GL_OK)
        st = check_extent(job, &ref, fd, real_file, &at);
    if (st == GL_OK && job->count > 0) {
        *out = job->no_mmap ? NULL : map_external(job, &ref, fd, &at);
        if (!*out) {
            st = read_external(job, &ref, fd, out);
            if (st == GL_OK)
                note_origin(*out, &at);
        }
    }
    if (fd >= 0)
        close(fd);
    return st;
}

/* ---- the entry point ------------------------------------------------------------------ */

static gl_status check_header(Onnx__TensorProto *tp, const char *ctx, decode_job *job)
{
    int dt = tp->has_data_type ? tp->data_type : 0;
    if (!gl_dtype_valid(dt))
        return gl_fail(GL_ERR_INPUT, "%s: invalid tensor data type %d", ctx, dt);
    if (tp->segment)
        return gl_fail(GL_ERR_UNSUPPORTED, "%s: segmented tensors are not supported", ctx);
    if (tp->n_dims > GL_MAX_RANK)
        return gl_fail(GL_ERR_INPUT, "%s: rank %zu exceeds the maximum of %d", ctx, tp->n_dims,
                       GL_MAX_RANK);
    job->dtype = (gl_dtype)dt;
    size_t esize = dt == GL_DT_STRING ? sizeof(gl_bytes) : gl_dtype_size(job->dtype);
    if (!gl_dims_count(tp->dims, (int)tp->n_dims, esize, INT64_MAX, &job->count, ctx))
        return GL_ERR_INPUT;
    job->nbytes = dt == GL_DT_STRING ? 0 : (size_t)job->count * esize;
    return GL_OK;
}

gl_status gl_tensor_from_proto(struct Onnx__TensorProto *tp, const char *ctx,
                               const char *dir, bool take, bool no_mmap, gl_tensor **out)
{
    *out = NULL;
    decode_job job = {.tp = tp, .ctx = ctx, .take = take, .no_mmap = no_mmap, .dir = dir};
    gl_status st = check_header(tp, ctx, &job);
    if (st != GL_OK)
        return st;
    gl_buffer *buf = NULL;
    bool external = tp->has_data_location &&
                    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (external)
        st = decode_external(&job, &buf);
    else if (tp->has_raw_data)
        st = decode_raw(&job, &buf);
    else
        st = decode_typed(&job, &buf);
    if (st != GL_OK)
        return st;
    gl_tensor *t = gl_tensor_wrap(job.dtype, (int)tp->n_dims, tp->dims, job.count, buf);
    t->name = gl_xstrdup(tp->name);
    t->doc_string = gl_xstrdup(tp->doc_string);
    t->external = external;
    *out = t;
    return GL_OK;
}

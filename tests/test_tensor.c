/* test_tensor.c — dtypes, half-precision conversions, size checks and tensor storage.
 *
 * Expected values come from the IEEE 754 formats and the ONNX TensorProto.DataType
 * table, worked out by hand or from an exact formula, never from the code under test.
 */
#include "testutil.h"

#include "onnx/onnx_io.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- dtype table ---- */

Test(dtype, table_matches_onnx)
{
    static const struct {
        gl_dtype dt;
        size_t size;
        const char *onnx;
        bool is_float, is_int;
    } rows[] = {
        {GL_DT_FLOAT, 4, "FLOAT", true, false},
        {GL_DT_UINT8, 1, "UINT8", false, true},
        {GL_DT_INT8, 1, "INT8", false, true},
        {GL_DT_UINT16, 2, "UINT16", false, true},
        {GL_DT_INT16, 2, "INT16", false, true},
        {GL_DT_INT32, 4, "INT32", false, true},
        {GL_DT_INT64, 8, "INT64", false, true},
        {GL_DT_STRING, 0, "STRING", false, false},
        {GL_DT_BOOL, 1, "BOOL", false, false},
        {GL_DT_FLOAT16, 2, "FLOAT16", true, false},
        {GL_DT_DOUBLE, 8, "DOUBLE", true, false},
        {GL_DT_UINT32, 4, "UINT32", false, true},
        {GL_DT_UINT64, 8, "UINT64", false, true},
        {GL_DT_COMPLEX64, 8, "COMPLEX64", false, false},
        {GL_DT_COMPLEX128, 16, "COMPLEX128", false, false},
        {GL_DT_BFLOAT16, 2, "BFLOAT16", true, false},
    };
    cr_assert_eq(GL_ARRAY_LEN(rows), GL_DT_COUNT - 1, "every defined dtype has a row");
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_dtype dt = rows[i].dt;
        cr_expect(gl_dtype_valid(dt), "%s", rows[i].onnx);
        cr_expect_eq(gl_dtype_size(dt), rows[i].size, "%s", rows[i].onnx);
        cr_expect_str_eq(gl_dtype_onnx_name(dt), rows[i].onnx);
        cr_expect_eq(gl_dtype_is_float(dt), rows[i].is_float, "%s", rows[i].onnx);
        cr_expect_eq(gl_dtype_is_int(dt), rows[i].is_int, "%s", rows[i].onnx);
        cr_expect(gl_dtype_name(dt) && *gl_dtype_name(dt), "%s", rows[i].onnx);
    }
    cr_assert_not(gl_dtype_valid(0));
    cr_assert_not(gl_dtype_valid(17));
    cr_assert_not(gl_dtype_valid(-1));
    cr_assert_eq(gl_dtype_size(GL_DT_UNDEFINED), 0);
    cr_assert_eq(gl_dtype_size((gl_dtype)99), 0);
    cr_assert_str_eq(gl_dtype_name(GL_DT_UNDEFINED), "undefined");
    cr_assert_not_null(gl_dtype_name((gl_dtype)99), "out of range still names something");
}

/* ---- half precision ---- */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The value of a float16 bit pattern from the format's definition. */
static double f16_exact(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = exp == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, exp - 25);
    if (exp == 0x1f)
        v = mant ? NAN : INFINITY;
    return sign ? -v : v;
}

Test(half, f32_to_f16_rounding_table)
{
    static const struct {
        float in;
        uint16_t out;
        const char *why;
    } rows[] = {
        {0.0f, 0x0000, "zero"},
        {-0.0f, 0x8000, "negative zero keeps its sign"},
        {1.0f, 0x3c00, "one"},
        {-2.0f, 0xc000, "minus two"},
        {0.1f, 0x2e66, "0.1 = 1.6 * 2^-4, mantissa 614.4 rounds down"},
        {1.0f / 3.0f, 0x3555, "1/3, mantissa 341.33 rounds down"},
        {65504.0f, 0x7bff, "largest finite"},
        {65519.0f, 0x7bff, "just below the halfway point to infinity"},
        {65520.0f, 0x7c00, "halfway to 65536: ties to even overflow to infinity"},
        {1e10f, 0x7c00, "overflow"},
        {-1e10f, 0xfc00, "negative overflow"},
        {0x1p-14f, 0x0400, "smallest normal"},
        {0x1p-24f, 0x0001, "smallest subnormal"},
        {0x1.ff8p-15f, 0x03ff, "largest subnormal (1023 * 2^-24)"},
        {0x1p-25f, 0x0000, "half the smallest subnormal: tie to even (zero)"},
        {0x1.8p-25f, 0x0001, "three quarters of the smallest subnormal rounds up"},
        {0x1.8p-24f, 0x0002, "1.5 * 2^-24: tie to even (2)"},
        {0x1p-30f, 0x0000, "far below: zero"},
        {-0x1p-24f, 0x8001, "negative subnormal"},
        {1.0f + 0x1p-11f, 0x3c00, "tie between 1 and 1+2^-10: even is 1"},
        {1.0f + 0x3p-11f, 0x3c02, "tie between 0x3c01 and 0x3c02: even is 0x3c02"},
        {1.0f + 0x1.8p-11f, 0x3c01, "above the tie rounds up"},
        {0x1.ffep0f, 0x4000, "2 - 2^-11: tie, even is 2.0 (carries into the exponent)"},
        {INFINITY, 0x7c00, "infinity"},
        {-INFINITY, 0xfc00, "minus infinity"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++)
        cr_expect_eq(gl_f32_to_f16(rows[i].in), rows[i].out, "%s: got 0x%04x, want 0x%04x",
                     rows[i].why, gl_f32_to_f16(rows[i].in), rows[i].out);
}

Test(half, f16_every_pattern_decodes_exactly_and_round_trips)
{
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float f = gl_f16_to_f32((uint16_t)h);
        double want = f16_exact((uint16_t)h);
        if (isnan(want)) {
            cr_assert(isnan(f), "0x%04x must decode to nan", h);
            uint16_t back = gl_f32_to_f16(f);
            cr_assert((back & 0x7c00) == 0x7c00 && (back & 0x3ff), "0x%04x: nan stays nan", h);
            continue;
        }
        cr_assert_eq((double)f, want, "0x%04x decodes to %g, want %g", h, f, want);
        cr_assert_eq(signbit(f) != 0, (h & 0x8000) != 0, "0x%04x sign", h);
        cr_assert_eq(gl_f32_to_f16(f), h, "0x%04x round trip", h);
    }
}

Test(half, nan_inputs_stay_nan)
{
    static const uint32_t nans[] = {0x7fc00000u, 0x7f800001u, 0xffc00000u, 0x7fffffffu};
    for (size_t i = 0; i < GL_ARRAY_LEN(nans); i++) {
        uint16_t h = gl_f32_to_f16(bits_f32(nans[i]));
        cr_expect((h & 0x7c00) == 0x7c00 && (h & 0x3ff), "f16 of 0x%08x is 0x%04x", nans[i], h);
        uint16_t b = gl_f32_to_bf16(bits_f32(nans[i]));
        cr_expect((b & 0x7f80) == 0x7f80 && (b & 0x7f), "bf16 of 0x%08x is 0x%04x", nans[i], b);
    }
}

Test(half, bf16_rounding_table)
{
    static const struct {
        uint32_t in;
        uint16_t out;
        const char *why;
    } rows[] = {
        {0x3f800000u, 0x3f80, "one"},
        {0x3f808000u, 0x3f80, "tie between 0x3f80 and 0x3f81: even"},
        {0x3f818000u, 0x3f82, "tie between 0x3f81 and 0x3f82: even"},
        {0x3f808001u, 0x3f81, "above the tie"},
        {0x3f807fffu, 0x3f80, "below the tie"},
        {0x7f7fffffu, 0x7f80, "largest float rounds to infinity"},
        {0x7f800000u, 0x7f80, "infinity"},
        {0xff800000u, 0xff80, "minus infinity"},
        {0x80000000u, 0x8000, "negative zero"},
        {0x00010000u, 0x0001, "subnormal kept"},
        {0xc0490fdbu, 0xc049, "-pi"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++)
        cr_expect_eq(gl_f32_to_bf16(bits_f32(rows[i].in)), rows[i].out, "%s", rows[i].why);
}

Test(half, bf16_every_pattern_round_trips)
{
    for (uint32_t b = 0; b <= 0xffff; b++) {
        float f = gl_bf16_to_f32((uint16_t)b);
        cr_assert_eq(f32_bits(f), b << 16, "0x%04x is the top half of the float", b);
        if (isnan(f))
            continue;
        cr_assert_eq(gl_f32_to_bf16(f), b, "0x%04x round trip", b);
    }
}

/* ---- element counts ---- */

Test(tensor, dims_count_table)
{
    static const struct {
        int rank;
        int64_t dims[4];
        size_t elem;
        int64_t limit;
        bool ok;
        int64_t count;
        const char *msg;
    } rows[] = {
        {2, {2, 3}, 4, INT64_MAX, true, 6, NULL},
        {0, {0}, 4, INT64_MAX, true, 1, NULL},
        {1, {0}, 4, INT64_MAX, true, 0, NULL},
        {3, {0, 1000000000000, 1000000000000}, 4, 1000, true, 0, NULL},
        {3, {1000000000000, 1000000000000, 0}, 4, 1000, true, 0, NULL},
        {2, {1000000, 1000000}, 1, 1000000000000, true, 1000000000000, NULL},
        {2, {1000000, 1000001}, 1, 1000000000000, false, 0, "more than 1000000000000 elements"},
        {1, {1000000000000}, 4, 1000000000, false, 0, "more than"},
        {1, {-1}, 4, INT64_MAX, false, 0, "dimension 0 is negative"},
        {3, {3, 0, -5}, 4, INT64_MAX, false, 0, "dimension 2 is negative"},
        {2, {INT64_MAX, 2}, 1, INT64_MAX, false, 0, "more than"},
        {2, {(int64_t)1 << 62, 4}, 1, INT64_MAX, false, 0, "more than"},
        {1, {(int64_t)1 << 61}, 16, INT64_MAX, false, 0, "do not fit"},
        {4, {1 << 20, 1 << 20, 1 << 20, 1 << 20}, 1, INT64_MAX, false, 0, "more than"},
        {-1, {0}, 4, INT64_MAX, false, 0, "rank -1"},
        {65, {0}, 4, INT64_MAX, false, 0, "rank 65"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        int64_t count = -7;
        gl_error_clear();
        bool ok = gl_dims_count(rows[i].dims, rows[i].rank, rows[i].elem, rows[i].limit, &count,
                                "t.onnx: initializer 'w'");
        cr_expect_eq(ok, rows[i].ok, "row %zu", i);
        if (rows[i].ok) {
            cr_expect_eq(count, rows[i].count, "row %zu: count %lld", i, (long long)count);
        } else {
            cr_expect(strstr(gl_error_message(), rows[i].msg), "row %zu: '%s'", i, gl_error_message());
            cr_expect(strstr(gl_error_message(), "t.onnx: initializer 'w'"), "row %zu names it", i);
        }
    }
}

Test(tensor, new_refuses_bad_requests)
{
    cr_assert_null(gl_tensor_new(GL_DT_UNDEFINED, 0, NULL));
    cr_assert_null(gl_tensor_new(GL_DT_FLOAT, 1, (const int64_t[]){-3}));
    cr_assert_null(gl_tensor_new(GL_DT_DOUBLE, 2, (const int64_t[]){INT64_MAX / 2, 4}));
    gl_tensor *empty = gl_tensor_new(GL_DT_FLOAT, 2, (const int64_t[]){0, 5});
    cr_assert_not_null(empty);
    cr_assert_eq(empty->count, 0);
    cr_assert_null(empty->buf);
    cr_assert_null(gl_tensor_make_writable(empty));
    cr_assert_eq(gl_tensor_nbytes(empty), 0);
    gl_tensor_free(empty);
    gl_tensor *scalar = gl_tensor_new(GL_DT_INT64, 0, NULL);
    cr_assert_eq(scalar->count, 1);
    cr_assert_eq(gl_tensor_nbytes(scalar), 8);
    cr_assert_eq(*(const int64_t *)gl_tensor_data(scalar), 0, "zeroed");
    gl_tensor_free(scalar);
}

/* ---- headers of every rank: inline dims up to GL_TENSOR_INLINE_RANK, heap beyond ---- */

/* Dims of a case: 2 first, 3 last, 1 between, so that every entry must be carried and the
 * element count stays small at rank 64. */
static void rank_case_dims(int rank, int64_t *dims)
{
    for (int i = 0; i < rank; i++)
        dims[i] = i == rank - 1 ? 3 : i == 0 ? 2 : 1;
}

static void expect_dims(const gl_tensor *t, int rank, const int64_t *dims, const char *what)
{
    cr_assert_eq(t->rank, rank, "%s: rank %d, expected %d", what, t->rank, rank);
    for (int i = 0; i < rank; i++)
        cr_expect_eq(t->dims[i], dims[i], "%s: rank %d dim %d is %lld, expected %lld", what,
                     rank, i, (long long)t->dims[i], (long long)dims[i]);
}

/* The initializer "w" after a write to protobuf and back. */
static gl_tensor *through_onnx(gl_tensor *t)
{
    gl_model *m = tu_model(17);
    gl_value *w = tu_const_tensor(m->graph, "w", t);
    gl_node *n = tu_node(m->graph, "Identity", "id", 1, w);
    tu_output(m->graph, n->outputs[0]);
    gl_model *c = gl_model_clone(m);
    uint8_t *bytes;
    size_t len;
    cr_assert_eq(gl_model_serialize(c, &bytes, &len), GL_OK, "%s", gl_error_message());
    gl_model *back = NULL;
    cr_assert_eq(gl_model_load_buffer(bytes, len, "ranks", NULL, NULL, &back), GL_OK, "%s",
                 gl_error_message());
    gl_tensor *got = gl_tensor_share(gl_find_value(back->graph, "w")->init);
    free(bytes);
    gl_model_free(back);
    gl_model_free(c);
    gl_model_free(m);
    return got;
}

Test(tensor, headers_of_every_rank)
{
    static const int ranks[] = {0, 1, GL_TENSOR_INLINE_RANK, GL_TENSOR_INLINE_RANK + 1,
                                GL_MAX_RANK};
    for (size_t c = 0; c < sizeof(ranks) / sizeof(ranks[0]); c++) {
        int rank = ranks[c];
        int64_t dims[GL_MAX_RANK];
        rank_case_dims(rank, dims);
        int64_t count = rank == 0 ? 1 : rank == 1 ? 3 : 6;
        gl_tensor *t = gl_tensor_new(GL_DT_FLOAT, rank, dims);
        cr_assert(t, "rank %d: %s", rank, gl_error_message());
        expect_dims(t, rank, dims, "new");
        cr_expect_eq(t->count, count, "rank %d: count %lld", rank, (long long)t->count);
        float *p = gl_tensor_make_writable(t);
        for (int64_t i = 0; i < count; i++)
            p[i] = (float)i + 0.5f;

        gl_tensor *s = gl_tensor_share(t);
        expect_dims(s, rank, dims, "share");
        cr_expect(s->dims != t->dims, "rank %d: a shared header has its own dims", rank);
        cr_expect(gl_tensor_equal(s, t) && gl_tensor_hash(s) == gl_tensor_hash(t));

        gl_tensor_frame f;
        gl_tensor *v = gl_tensor_frame_init(&f, t);
        expect_dims(v, rank, dims, "frame");
        cr_expect(gl_tensor_equal(v, t), "rank %d: the frame sees t", rank);

        gl_tensor *back = through_onnx(gl_tensor_share(t));
        expect_dims(back, rank, dims, "saved and loaded");
        cr_expect(gl_tensor_equal(back, t), "rank %d: bytes after the round trip", rank);

        /* To every rank of the table and back, the kept prefix intact each time. */
        for (size_t to = 0; to < sizeof(ranks) / sizeof(ranks[0]); to++) {
            int64_t want[GL_MAX_RANK];
            int keep = ranks[to] < rank ? ranks[to] : rank;
            memcpy(want, dims, (size_t)keep * sizeof(int64_t));
            gl_tensor_set_rank(s, ranks[to]);
            for (int i = keep; i < ranks[to]; i++)
                s->dims[i] = want[i] = 1 + i % 5;
            expect_dims(s, ranks[to], want, "set_rank");
            gl_tensor_set_rank(s, rank);
            memcpy(s->dims, dims, (size_t)rank * sizeof(int64_t));
            expect_dims(s, rank, dims, "set_rank back");
        }
        cr_expect(gl_tensor_equal(s, t), "rank %d: the buffer is untouched", rank);
        gl_tensor_free(back);
        gl_tensor_free(s);
        gl_tensor_free(t);
    }
}

/* ---- copy on write ---- */

static gl_tensor *f32_tensor(const float *vals, int64_t n)
{
    gl_tensor *t = gl_tensor_new(GL_DT_FLOAT, 1, &n);
    memcpy(gl_tensor_make_writable(t), vals, (size_t)n * sizeof(float));
    return t;
}

Test(tensor, make_writable_copies_only_when_shared)
{
    gl_tensor *a = f32_tensor((const float[]){1, 2, 3}, 3);
    gl_buffer *buf = a->buf;
    cr_assert_eq(buf->refs, 1);
    cr_assert_eq(gl_tensor_make_writable(a), buf->data, "sole owner: no copy");
    cr_assert_eq(a->buf, buf);

    gl_tensor *b = gl_tensor_share(a);
    cr_assert_eq(b->buf, buf);
    cr_assert_eq(buf->refs, 2);
    float *bd = gl_tensor_make_writable(b);
    cr_assert_neq(b->buf, buf, "shared: copied");
    cr_assert_eq(buf->refs, 1);
    cr_assert_eq(b->buf->refs, 1);
    cr_assert(gl_tensor_equal(a, b));
    bd[1] = 20;
    cr_assert_float_eq(((const float *)gl_tensor_data(a))[1], 2.0f, 0);
    cr_assert_not(gl_tensor_equal(a, b));
    cr_assert_eq(gl_tensor_make_writable(b), bd, "now private: no second copy");
    gl_tensor_free(a);
    gl_tensor_free(b);
}

Test(tensor, readonly_mapping_is_copied_before_writing)
{
    long page = 4096;
    float *map = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(map, MAP_FAILED);
    map[4] = 7.5f;
    cr_assert_eq(mprotect(map, (size_t)page, PROT_READ), 0);
    gl_buffer *buf = gl_buffer_new_mmap(map, (size_t)page, map + 4, sizeof(float));
    gl_tensor *t = gl_tensor_wrap(GL_DT_FLOAT, 1, (const int64_t[]){1}, 1, buf);
    t->external = true;
    cr_assert(buf->readonly);
    gl_buffer_ref(buf); /* keep the mapping alive to look at it afterwards */
    float *w = gl_tensor_make_writable(t);
    cr_assert_neq((void *)w, (void *)(map + 4), "read-only bytes are never handed out");
    cr_assert_float_eq(*w, 7.5f, 0);
    cr_assert_not(t->external, "the copy no longer mirrors the file");
    *w = 1; /* would fault on the mapping */
    cr_assert_float_eq(map[4], 7.5f, 0);
    cr_assert_eq(buf->refs, 1, "the tensor let go of the mapping");
    gl_buffer_unref(buf); /* unmaps */
    gl_tensor_free(t);
}

/* ---- equality and hashing ---- */

static gl_tensor *typed(gl_dtype dt, int rank, const int64_t *dims, const void *bytes)
{
    gl_tensor *t = gl_tensor_new(dt, rank, dims);
    if (t->count)
        memcpy(gl_tensor_make_writable(t), bytes, gl_tensor_nbytes(t));
    return t;
}

Test(tensor, equal_and_hash_table)
{
    static const float f6[] = {1, 2, 3, 4, 5, 6};
    static const float f6b[] = {1, 2, 3, 4, 5, 7};
    static const int32_t i6[] = {1, 2, 3, 4, 5, 6};
    const int64_t d23[] = {2, 3}, d32[] = {3, 2}, d6[] = {6};
    static const struct {
        const char *why;
        bool equal;
    } rows[] = {
        {"same dtype, dims and bytes", true},
        {"dims differ, same count and bytes", false},
        {"rank differs", false},
        {"one element differs", false},
        {"dtype differs, bytes reinterpreted", false},
        {"shared buffer", true},
    };
    gl_tensor *base = typed(GL_DT_FLOAT, 2, d23, f6);
    gl_tensor *other[] = {
        typed(GL_DT_FLOAT, 2, d23, f6),
        typed(GL_DT_FLOAT, 2, d32, f6),
        typed(GL_DT_FLOAT, 1, d6, f6),
        typed(GL_DT_FLOAT, 2, d23, f6b),
        typed(GL_DT_INT32, 2, d23, i6),
        gl_tensor_share(base),
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        cr_expect_eq(gl_tensor_equal(base, other[i]), rows[i].equal, "%s", rows[i].why);
        cr_expect_eq(gl_tensor_equal(other[i], base), rows[i].equal, "%s (swapped)", rows[i].why);
        if (rows[i].equal)
            cr_expect_eq(gl_tensor_hash(base), gl_tensor_hash(other[i]), "%s: hash", rows[i].why);
        else
            cr_expect_neq(gl_tensor_hash(base), gl_tensor_hash(other[i]), "%s: hash", rows[i].why);
        gl_tensor_free(other[i]);
    }
    gl_tensor_free(base);
}

/* ---- string tensors ---- */

static gl_tensor *strings(const char *const *items, int64_t n)
{
    gl_tensor *t = gl_tensor_new(GL_DT_STRING, 1, &n);
    gl_bytes *b = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < n; i++) {
        b[i].len = strlen(items[i]);
        b[i].data = (uint8_t *)strdup(items[i]);
    }
    return t;
}

Test(tensor, string_tensors_compare_copy_and_free_by_content)
{
    static const char *const abc[] = {"alpha", "", "gamma"};
    static const char *const abd[] = {"alpha", "", "gammb"};
    static const char *const longer[] = {"alpha", "x", "gamma"};
    gl_tensor *a = strings(abc, 3);
    gl_tensor *same = strings(abc, 3);
    gl_tensor *diff = strings(abd, 3);
    gl_tensor *len = strings(longer, 3);
    cr_assert_eq(gl_tensor_nbytes(a), 10, "sum of string lengths");
    cr_assert(gl_tensor_equal(a, same));
    cr_assert_eq(gl_tensor_hash(a), gl_tensor_hash(same));
    cr_assert_not(gl_tensor_equal(a, diff));
    cr_assert_not(gl_tensor_equal(a, len));
    cr_assert_neq(gl_tensor_hash(a), gl_tensor_hash(diff));
    cr_assert_eq(gl_tensor_get_f64(a, 0), 0, "strings have no numeric value");

    gl_tensor *shared = gl_tensor_share(a);
    gl_bytes *w = gl_tensor_make_writable(shared);
    const gl_bytes *orig = gl_tensor_data(a);
    cr_assert_neq(w[0].data, orig[0].data, "a deep copy, not a copy of pointers");
    cr_assert(gl_tensor_equal(a, shared));
    w[2].data[4] = 'b';
    cr_assert(gl_tensor_equal(shared, diff));
    cr_assert_eq(memcmp(orig[2].data, "gamma", 5), 0);
    gl_tensor_free(shared);
    gl_tensor_free(a);
    gl_tensor_free(same);
    gl_tensor_free(diff);
    gl_tensor_free(len);
}

/* ---- element access ---- */

Test(tensor, get_f64_reads_every_numeric_dtype)
{
    static const struct {
        gl_dtype dt;
        uint8_t bytes[16];
        double want;
    } rows[] = {
        {GL_DT_FLOAT, {0x00, 0x00, 0xc0, 0x3f}, 1.5},           /* 0x3fc00000 */
        {GL_DT_DOUBLE, {0, 0, 0, 0, 0, 0, 0x04, 0xc0}, -2.5},   /* 0xc004000000000000 */
        {GL_DT_FLOAT16, {0x00, 0x3e}, 1.5},                     /* 0x3e00 */
        {GL_DT_BFLOAT16, {0xc0, 0x3f}, 1.5},                    /* 0x3fc0 */
        {GL_DT_INT8, {0xfd}, -3},
        {GL_DT_UINT8, {0xfa}, 250},
        {GL_DT_INT16, {0x18, 0xfc}, -1000},
        {GL_DT_UINT16, {0xe8, 0xfd}, 65000},
        {GL_DT_INT32, {0x00, 0x94, 0x35, 0x77}, 2000000000},
        {GL_DT_UINT32, {0x00, 0x28, 0x6b, 0xee}, 4000000000.0},
        {GL_DT_INT64, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, -1},
        {GL_DT_UINT64, {0, 0, 0, 0, 0, 0, 0, 0x80}, 9223372036854775808.0},
        {GL_DT_BOOL, {0x02}, 1},
        {GL_DT_COMPLEX64, {0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0x80, 0x3f}, 4.0}, /* real part */
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_tensor *t = typed(rows[i].dt, 0, NULL, rows[i].bytes);
        cr_expect_eq(gl_tensor_get_f64(t, 0), rows[i].want, "%s: got %g",
                     gl_dtype_onnx_name(rows[i].dt), gl_tensor_get_f64(t, 0));
        cr_expect_eq(gl_tensor_get_f64(t, 1), 0, "%s: out of range", gl_dtype_onnx_name(rows[i].dt));
        cr_expect_eq(gl_tensor_get_f64(t, -1), 0, "%s: negative index", gl_dtype_onnx_name(rows[i].dt));
        gl_tensor_free(t);
    }
}

/* ---- large mapped weights: hashed without staying resident (issue 23) ---- */

/* Kilobytes of `addr`'s mapping resident in this process (/proc/self/smaps), -1 when not
 * found. */
static long resident_kb(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    long kb = -1;
    bool inside = false;
    uintptr_t a = (uintptr_t)addr;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            inside = a >= lo && a < hi;
        else if (inside && sscanf(line, "Rss: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

/* A read-only private mapping of a new file of `size` bytes (pattern by `seed`), each
 * page read once so that all of it is resident. */
static gl_tensor *mapped_tensor(size_t size, unsigned seed)
{
    char path[] = "/tmp/gltensor.XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    unlink(path);
    uint32_t *data = malloc(size);
    for (size_t i = 0; i < size / 4; i++)
        data[i] = (uint32_t)(i * 2654435761u) ^ seed;
    cr_assert_eq(write(fd, data, size), (ssize_t)size);
    free(data);
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    cr_assert(map != MAP_FAILED);
    volatile uint32_t sum = 0;
    for (size_t i = 0; i < size / 4; i += 1024)
        sum += ((const uint32_t *)map)[i];
    int64_t n = (int64_t)(size / 4);
    gl_tensor *t = gl_tensor_wrap(GL_DT_UINT32, 1, &n, n, gl_buffer_new_mmap(map, size, map, size));
    t->buf->readonly = true;
    return t;
}

/* The pipeline hashes every weight once to tell whether a pass changed anything: that
 * kept a 1.2 GB model's weights resident (optimize at 1.19 GB RSS) until the hash gave a
 * mapped file's pages back as it went. The hash itself stays a content hash: equal to a
 * heap copy's, different for other bytes, and the bytes read the same afterwards. */
Test(tensor, hashing_mapped_weights_leaves_them_unresident)
{
    static const struct {
        size_t bytes;
        long most_kb; /* resident after the hash */
    } rows[] = {
        {(size_t)9 << 20, 1024},  /* two chunks and a part */
        {(size_t)32 << 20, 1024}, /* eight chunks */
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(rows); i++) {
        gl_tensor *t = mapped_tensor(rows[i].bytes, 7), *other = mapped_tensor(rows[i].bytes, 8);
        long before = resident_kb(gl_tensor_data(t));
        cr_expect_geq(before, (long)(rows[i].bytes >> 10) / 2, "%zu bytes: mapped in first",
                      rows[i].bytes);
        uint64_t h = gl_tensor_hash(t);
        long after = resident_kb(gl_tensor_data(t));
        cr_expect_leq(after, rows[i].most_kb, "%zu bytes: %ld kB still resident after the hash",
                      rows[i].bytes, after);
        gl_tensor *copy = gl_tensor_share(t);
        gl_tensor_make_writable(copy); /* a heap copy of the same bytes */
        cr_expect_eq(gl_tensor_hash(copy), h, "%zu bytes: a heap copy hashes the same",
                     rows[i].bytes);
        cr_expect(gl_tensor_equal(copy, t), "%zu bytes: read again, the same bytes", rows[i].bytes);
        cr_expect_neq(gl_tensor_hash(other), h, "%zu bytes: other bytes, another hash",
                      rows[i].bytes);
        gl_tensor_free(copy);
        gl_tensor_free(other);
        gl_tensor_free(t);
    }
}

/* tensor_encode.c — gl_tensor -> onnx.TensorProto.
 *
 * The proto borrows from the tensor instead of copying it: dims, name, doc_string and
 * raw_data point into `t`, so encoding a model's weights costs no memory and the packer
 * streams the bytes straight from the tensor (or from the mmap'd external file). Numeric
 * dtypes always go out as raw_data, which is the one encoding that keeps every bit
 * pattern (NaN payloads, -0.0, float16 as stored) and that every reader accepts.
 */
#include "onnx/onnx_io.h"

#include "onnx.pb-c.h"

#include <stdlib.h>
#include <string.h>

/* raw_data is the little-endian byte image of the elements; our buffers are native. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tensor_encode.c writes native bytes as raw_data: big-endian hosts need a byte swap"
#endif

/* Packers memcpy from raw_data.data even when len is 0: give them a valid pointer. */
static uint8_t no_bytes[1];

static gl_status encode_strings(const gl_tensor *t, Onnx__TensorProto *tp)
{
    if (t->count == 0)
        return GL_OK;
    const gl_bytes *items = gl_tensor_data(t);
    if (!items)
        return gl_fail(GL_ERR_INTERNAL, "string tensor '%s' of %lld elements has no storage",
                       t->name ? t->name : "", (long long)t->count);
    ProtobufCBinaryData *out = malloc((size_t)t->count * sizeof(*out));
    if (!out)
        return gl_fail(GL_ERR_NOMEM, "cannot encode %lld strings", (long long)t->count);
    for (int64_t i = 0; i < t->count; i++) {
        out[i].len = items[i].len;
        out[i].data = items[i].data ? items[i].data : no_bytes;
    }
    tp->n_string_data = (size_t)t->count;
    tp->string_data = out;
    return GL_OK;
}

static gl_status encode_raw(const gl_tensor *t, Onnx__TensorProto *tp)
{
    size_t nbytes = gl_tensor_nbytes(t);
    const void *data = gl_tensor_data(t);
    if (nbytes > 0 && (!data || !t->buf || t->buf->size < nbytes))
        return gl_fail(GL_ERR_INTERNAL, "tensor '%s': %zu bytes expected, storage holds %zu",
                       t->name ? t->name : "", nbytes, t->buf ? t->buf->size : 0);
    tp->has_raw_data = true;
    tp->raw_data.len = nbytes;
    /* Aliasing: the proto only reads (pack), never frees, this pointer. */
    tp->raw_data.data = nbytes ? (uint8_t *)data : no_bytes;
    return GL_OK;
}

gl_status gl_tensor_to_proto(const gl_tensor *t, Onnx__TensorProto *tp)
{
    onnx__tensor_proto__init(tp);
    if (!gl_dtype_valid(t->dtype))
        return gl_fail(GL_ERR_INPUT, "tensor '%s' has no valid element type (%d)",
                       t->name ? t->name : "", (int)t->dtype);
    if (t->rank < 0 || t->rank > GL_MAX_RANK)
        return gl_fail(GL_ERR_INTERNAL, "tensor '%s' has rank %d",
                       t->name ? t->name : "", t->rank);
    tp->has_data_type = true;
    tp->data_type = (int32_t)t->dtype;
    tp->n_dims = (size_t)t->rank;
    tp->dims = t->rank ? (int64_t *)t->dims : NULL;
    tp->name = t->name;
    tp->doc_string = t->doc_string;
    gl_status st = t->dtype == GL_DT_STRING ? encode_strings(t, tp) : encode_raw(t, tp);
    if (st != GL_OK)
        gl_tensor_proto_release(tp);
    return st;
}

/* Frees only what gl_tensor_to_proto allocated (the string_data array); the rest is
 * borrowed from the tensor, and fields a caller added (external_data) are the caller's. */
void gl_tensor_proto_release(Onnx__TensorProto *tp)
{
    if (!tp)
        return;
    free(tp->string_data);
    tp->string_data = NULL;
    tp->n_string_data = 0;
}

/* dtype.h — element types. The numbering is ONNX's TensorProto.DataType, so converting
 * between the IR and protobuf is the identity; tables below are indexed by it. */
#ifndef GL_DTYPE_H
#define GL_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum gl_dtype {
    GL_DT_UNDEFINED = 0,
    GL_DT_FLOAT = 1,
    GL_DT_UINT8 = 2,
    GL_DT_INT8 = 3,
    GL_DT_UINT16 = 4,
    GL_DT_INT16 = 5,
    GL_DT_INT32 = 6,
    GL_DT_INT64 = 7,
    GL_DT_STRING = 8,
    GL_DT_BOOL = 9,
    GL_DT_FLOAT16 = 10,
    GL_DT_DOUBLE = 11,
    GL_DT_UINT32 = 12,
    GL_DT_UINT64 = 13,
    GL_DT_COMPLEX64 = 14,
    GL_DT_COMPLEX128 = 15,
    GL_DT_BFLOAT16 = 16,
    GL_DT_COUNT
} gl_dtype;

/* Bytes per element in memory (and in raw_data); 0 for UNDEFINED and for STRING, whose
 * elements are gl_bytes records (see tensor.h). */
size_t gl_dtype_size(gl_dtype dt);
/* ONNX type-string spelling: "float", "int64", "bool", "float16", "double", ...;
 * "undefined" for unknown values. */
const char *gl_dtype_name(gl_dtype dt);
/* ONNX's spelling, "FLOAT", "INT64", ... */
const char *gl_dtype_onnx_name(gl_dtype dt);
bool gl_dtype_valid(int dt); /* 1..16 */
bool gl_dtype_is_float(gl_dtype dt); /* float, double, float16, bfloat16 */
bool gl_dtype_is_int(gl_dtype dt);   /* signed or unsigned integer, not bool */

/* Half-precision conversions (round to nearest even). */
float gl_f16_to_f32(uint16_t h);
uint16_t gl_f32_to_f16(float f);
float gl_bf16_to_f32(uint16_t b);
uint16_t gl_f32_to_bf16(float f);

#endif

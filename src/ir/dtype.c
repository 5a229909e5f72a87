/* dtype.c — the element-type table and half-precision conversions. */
#include "ir/dtype.h"

#include <string.h>

struct dtype_info {
    const char *name;      /* ONNX type-string spelling: tensor(float) */
    const char *onnx_name; /* TensorProto.DataType spelling */
    size_t size;
};

static const struct dtype_info dtype_table[] = {
    [GL_DT_UNDEFINED] = {"undefined", "UNDEFINED", 0},
    [GL_DT_FLOAT] = {"float", "FLOAT", 4},
    [GL_DT_UINT8] = {"uint8", "UINT8", 1},
    [GL_DT_INT8] = {"int8", "INT8", 1},
    [GL_DT_UINT16] = {"uint16", "UINT16", 2},
    [GL_DT_INT16] = {"int16", "INT16", 2},
    [GL_DT_INT32] = {"int32", "INT32", 4},
    [GL_DT_INT64] = {"int64", "INT64", 8},
    [GL_DT_STRING] = {"string", "STRING", 0},
    [GL_DT_BOOL] = {"bool", "BOOL", 1},
    [GL_DT_FLOAT16] = {"float16", "FLOAT16", 2},
    [GL_DT_DOUBLE] = {"double", "DOUBLE", 8},
    [GL_DT_UINT32] = {"uint32", "UINT32", 4},
    [GL_DT_UINT64] = {"uint64", "UINT64", 8},
    [GL_DT_COMPLEX64] = {"complex64", "COMPLEX64", 8},
    [GL_DT_COMPLEX128] = {"complex128", "COMPLEX128", 16},
    [GL_DT_BFLOAT16] = {"bfloat16", "BFLOAT16", 2},
};
_Static_assert((sizeof(dtype_table) / sizeof(dtype_table[0])) == GL_DT_COUNT, "dtype table out of step with gl_dtype");

bool gl_dtype_valid(int dt) { return dt > GL_DT_UNDEFINED && dt < GL_DT_COUNT; }

size_t gl_dtype_size(gl_dtype dt)
{
    return (dt >= 0 && dt < GL_DT_COUNT) ? dtype_table[dt].size : 0;
}

const char *gl_dtype_name(gl_dtype dt)
{
    return (dt >= 0 && dt < GL_DT_COUNT) ? dtype_table[dt].name : "invalid";
}

const char *gl_dtype_onnx_name(gl_dtype dt)
{
    return (dt >= 0 && dt < GL_DT_COUNT) ? dtype_table[dt].onnx_name : "INVALID";
}

bool gl_dtype_is_float(gl_dtype dt)
{
    return dt == GL_DT_FLOAT || dt == GL_DT_DOUBLE || dt == GL_DT_FLOAT16 || dt == GL_DT_BFLOAT16;
}

bool gl_dtype_is_int(gl_dtype dt)
{
    switch (dt) {
    case GL_DT_UINT8: case GL_DT_INT8: case GL_DT_UINT16: case GL_DT_INT16:
    case GL_DT_INT32: case GL_DT_INT64: case GL_DT_UINT32: case GL_DT_UINT64:
        return true;
    default:
        return false;
    }
}

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float gl_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) /* inf / nan */
        return bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        if (mant == 0)
            return bits_f32(sign);
        /* subnormal: value = mant * 2^-24 */
        float v = (float)mant * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t gl_f32_to_f16(float f)
{
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t exp = (u >> 23) & 0xff;
    uint32_t mant = u & 0x7fffff;
    if (exp == 0xff) /* inf / nan (keep nan quiet) */
        return sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0);
    int e = (int)exp - 127 + 15;
    if (e >= 0x1f)
        return sign | 0x7c00;
    if (e <= 0) {
        if (e < -10)
            return sign;
        mant |= 0x800000;
        int shift = 14 - e;
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return sign | (uint16_t)half;
    }
    uint32_t half = ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
        half++; /* may carry into the exponent, which is right */
    return sign | (uint16_t)half;
}

float gl_bf16_to_f32(uint16_t b) { return bits_f32((uint32_t)b << 16); }

uint16_t gl_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* nan: keep it a quiet nan */
        return (uint16_t)((u >> 16) | 0x40);
    uint32_t rounding = 0x7fff + ((u >> 16) & 1);
    return (uint16_t)((u + rounding) >> 16);
}

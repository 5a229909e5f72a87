/* window.c — sliding-window geometry (see window.h). */
#include "ops/window.h"
#include "ops/opkit.h"

#include <string.h>

static gl_status read_auto_pad(const gl_node *n, const char *where, gl_auto_pad *out)
{
    static const struct { const char *name; gl_auto_pad mode; } modes[] = {
        {"NOTSET", GL_PAD_NOTSET}, {"", GL_PAD_NOTSET}, {"SAME_UPPER", GL_PAD_SAME_UPPER},
        {"SAME_LOWER", GL_PAD_SAME_LOWER}, {"VALID", GL_PAD_VALID},
    };
    const char *s = gl_node_attr_string(n, "auto_pad", "NOTSET");
    for (size_t i = 0; i < GL_ARRAY_LEN(modes); i++) {
        if (strcmp(s, modes[i].name) == 0) {
            *out = modes[i].mode;
            return GL_OK;
        }
    }
    return gl_fail(GL_ERR_INPUT, "%s: auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER "
                   "or VALID", where, s);
}


/* An INTS attribute of exactly `want` values each in [min, GL_WINDOW_MAX_ATTR], or absent
 * (defaults kept). */
static gl_status read_ints_attr(const gl_node *n, const char *where, const char *name,
                                size_t want, int64_t min, int64_t *dst)
{
    size_t count;
    const int64_t *v = gl_attr_ints(n, name, &count);
    if (!v)
        return GL_OK;
    if (count != want)
        return gl_fail(GL_ERR_INPUT, "%s: attribute %s has %zu values, expected %zu", where,
                       name, count, want);
    for (size_t i = 0; i < count; i++) {
        if (v[i] < min || v[i] > GL_WINDOW_MAX_ATTR)
            return gl_fail(GL_ERR_INPUT, "%s: attribute %s[%zu] = %lld is outside [%lld, "
                           "%lld]", where, name, i, (long long)v[i], (long long)min,
                           (long long)GL_WINDOW_MAX_ATTR);
        dst[i] = v[i];
    }
    return GL_OK;
}

/* The window attributes of node n for `nsp` spatial dims. `w_kernel` holds the spatial
 * dims of a convolution weight (-1 unknown), or is NULL for pooling, where
 * kernel_shape is required. */
gl_status gl_window_read(const gl_node *n, const char *where, int nsp,
                             const int64_t *w_kernel, gl_window *w)
{
    if (nsp < 1 || nsp > GL_WINDOW_MAX_SP)
        return gl_fail(GL_ERR_INPUT, "%s: %d spatial dimensions (expected 1..%d)", where,
                       nsp, GL_WINDOW_MAX_SP);
    memset(w, 0, sizeof(*w));
    w->n = nsp;
    for (int d = 0; d < nsp; d++) {
        w->kernel[d] = w_kernel ? w_kernel[d] : -1;
        w->stride[d] = w->dil[d] = 1;
    }
    if (!w_kernel && !gl_node_attr_typed(n, "kernel_shape", GL_ATTR_INTS))
        return gl_fail(GL_ERR_INPUT, "%s: attribute kernel_shape is required", where);
    int64_t pads[2 * GL_WINDOW_MAX_SP] = {0};
    int64_t attr_kernel[GL_WINDOW_MAX_SP];
    for (int d = 0; d < nsp; d++)
        attr_kernel[d] = w->kernel[d];
    gl_status st;
    if ((st = read_ints_attr(n, where, "kernel_shape", (size_t)nsp, 1, attr_kernel)) ||
        (st = read_ints_attr(n, where, "strides", (size_t)nsp, 1, w->stride)) ||
        (st = read_ints_attr(n, where, "dilations", (size_t)nsp, 1, w->dil)) ||
        (st = read_ints_attr(n, where, "pads", 2 * (size_t)nsp, 0, pads)) ||
        (st = read_auto_pad(n, where, &w->pad_mode)))
        return st;
    for (int d = 0; d < nsp; d++) {
        if (attr_kernel[d] == 0 || attr_kernel[d] > GL_WINDOW_MAX_ATTR)
            return gl_fail(GL_ERR_INPUT, "%s: kernel dimension %d is %lld", where, d,
                           (long long)attr_kernel[d]);
        if (w->kernel[d] >= 0 && attr_kernel[d] != w->kernel[d])
            return gl_fail(GL_ERR_INPUT, "%s: kernel_shape[%d] = %lld but the weight has "
                           "%lld", where, d, (long long)attr_kernel[d],
                           (long long)w->kernel[d]);
        w->kernel[d] = attr_kernel[d];
        w->pad_begin[d] = pads[d];
        w->pad_end[d] = pads[nsp + d];
    }
    w->ceil_mode = gl_node_attr_int(n, "ceil_mode", 0) != 0;
    return GL_OK;
}

int64_t gl_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t gl_ceil_div(int64_t a, int64_t b)
{
    return -gl_floor_div(-a, b);
}

/* Output length of spatial dim d for input length `in` (known), resolving the pads of
 * SAME/VALID auto_pad into w. Convolution and pooling agree on this (pooling adds
 * ceil_mode: a window that would start in the end padding is dropped, as in PyTorch
 * and the ONNX spec from opset 19 on). */
gl_status gl_window_out_dim(gl_window *w, int d, int64_t in, const char *where,
                                int64_t *out)
{
    int64_t k = w->kernel[d], s = w->stride[d];
    int64_t span = (k - 1) * w->dil[d] + 1;
    switch (w->pad_mode) {
    case GL_PAD_SAME_UPPER:
    case GL_PAD_SAME_LOWER: {
        *out = gl_ceil_div(in, s);
        int64_t total = (*out - 1) * s + span - in;
        if (total < 0)
            total = 0;
        int64_t small = total / 2;
        w->pad_begin[d] = w->pad_mode == GL_PAD_SAME_UPPER ? small : total - small;
        w->pad_end[d] = total - w->pad_begin[d];
        return GL_OK;
    }
    case GL_PAD_VALID:
        w->pad_begin[d] = w->pad_end[d] = 0;
        break;
    case GL_PAD_NOTSET:
        break;
    }
    int64_t room = in + w->pad_begin[d] + w->pad_end[d] - span;
    if (room < 0)
        return gl_fail(GL_ERR_INPUT, "%s: spatial dimension %d: the window (%lld) is larger "
                       "than the padded input (%lld)", where, d, (long long)span,
                       (long long)(in + w->pad_begin[d] + w->pad_end[d]));
    if (w->ceil_mode) {
        *out = gl_ceil_div(room, s) + 1;
        if ((*out - 1) * s >= in + w->pad_begin[d])
            (*out)--;
    } else {
        *out = room / s + 1;
    }
    return GL_OK;
}

/* Resolve every spatial dim for a run: in[] are the input's spatial dims. */
gl_status gl_window_check_spatial(const int64_t *in, int n, const char *where)
{
    for (int d = 0; d < n; d++)
        if (in[d] > GL_WINDOW_MAX_DIM)
            return gl_fail(GL_ERR_INPUT, "%s: spatial dimension %d (%lld) is too large", where,
                           d, (long long)in[d]);
    return GL_OK;
}

gl_status gl_window_resolve(gl_window *w, const int64_t *in, const char *where,
                                int64_t *out)
{
    gl_status st = gl_window_check_spatial(in, w->n, where);
    if (st)
        return st;
    for (int d = 0; d < w->n; d++) {
        st = gl_window_out_dim(w, d, in[d], where, &out[d]);
        if (st)
            return st;
    }
    return GL_OK;
}

/* Output dim d for shape inference: a symbolic input dim survives when the window keeps
 * the length (stride 1 and SAME, or pads that make up for the kernel). */
gl_status gl_window_infer_dim(gl_window *w, int d, const gl_dim *in, const char *where,
                                  gl_dim *out)
{
    if (w->kernel[d] < 0)
        return GL_OK; /* unknown kernel: unknown output */
    if (in->value >= 0) {
        int64_t v;
        gl_status st = gl_window_check_spatial(&in->value, 1, where);
        if (st == GL_OK)
            st = gl_window_out_dim(w, d, in->value, where, &v);
        if (st == GL_OK)
            out->value = v;
        return st;
    }
    int64_t span = (w->kernel[d] - 1) * w->dil[d] + 1;
    bool same = w->pad_mode == GL_PAD_SAME_UPPER || w->pad_mode == GL_PAD_SAME_LOWER;
    bool keeps = w->stride[d] == 1 &&
                 (same || (w->pad_mode == GL_PAD_NOTSET &&
                           w->pad_begin[d] + w->pad_end[d] + 1 == span) ||
                  span == 1);
    if (keeps && in->sym)
        gl_dim_set_sym(out, in->sym);
    return GL_OK;
}


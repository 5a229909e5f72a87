/* window.h — the geometry of a sliding window over the spatial dims of NCHW-style
 * tensors: kernel, strides, dilations, pads and auto_pad, as convolution and pooling
 * share it. The reference kernels (nn.c), shape inference and the oneDNN backend all
 * resolve windows here, so they agree on every output size and pad.
 */
#ifndef GL_WINDOW_H
#define GL_WINDOW_H

#include "ir/graph.h"

#include <stdbool.h>
#include <stdint.h>

/* Convolution and pooling share the geometry of a sliding window over the spatial dims
 * (dims 2.. of NCHW-style tensors). */
#define GL_WINDOW_MAX_SP 8

typedef enum gl_auto_pad {
    GL_PAD_NOTSET,
    GL_PAD_SAME_UPPER,
    GL_PAD_SAME_LOWER,
    GL_PAD_VALID
} gl_auto_pad;

typedef struct gl_window {
    int n; /* spatial rank */
    gl_auto_pad pad_mode;
    bool ceil_mode;
    int64_t kernel[GL_WINDOW_MAX_SP]; /* -1: unknown (shape inference with an unknown W) */
    int64_t stride[GL_WINDOW_MAX_SP];
    int64_t dil[GL_WINDOW_MAX_SP];
    /* from `pads`, then resolved */
    int64_t pad_begin[GL_WINDOW_MAX_SP], pad_end[GL_WINDOW_MAX_SP];
} gl_window;

/* Window attributes and spatial lengths beyond these are refused, so that the window
 * arithmetic (in + pads, stride * (in - 1), ...) cannot overflow int64. */
#define GL_WINDOW_MAX_ATTR ((int64_t)1 << 24)
#define GL_WINDOW_MAX_DIM ((int64_t)1 << 36)

/* The window attributes of node n for `nsp` spatial dims. `w_kernel` holds the spatial
 * dims of a convolution weight (-1 unknown), or is NULL for pooling, where
 * kernel_shape is required. GL_ERR_INPUT naming the attribute when one is invalid. */
gl_status gl_window_read(const gl_node *n, const char *where, int nsp,
                         const int64_t *w_kernel, gl_window *w);
/* Every spatial dim for a run: in[] are the input's spatial dims; out[] receives the
 * output's, and w's pads are resolved (SAME/VALID). */
gl_status gl_window_resolve(gl_window *w, const int64_t *in, const char *where,
                            int64_t *out);
/* One dim; see gl_window_resolve. */
gl_status gl_window_out_dim(gl_window *w, int d, int64_t in, const char *where,
                            int64_t *out);
/* Output dim d for shape inference: a symbolic input dim survives when the window keeps
 * the length (stride 1 and SAME, or pads that make up for the kernel). */
gl_status gl_window_infer_dim(gl_window *w, int d, const gl_dim *in, const char *where,
                              gl_dim *out);
/* GL_ERR_INPUT when a spatial length is beyond GL_WINDOW_MAX_DIM. */
gl_status gl_window_check_spatial(const int64_t *in, int n, const char *where);

int64_t gl_floor_div(int64_t a, int64_t b);
int64_t gl_ceil_div(int64_t a, int64_t b);

#endif

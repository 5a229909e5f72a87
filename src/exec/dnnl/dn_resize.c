/* dn_resize.c — Resize and Upsample as oneDNN resampling, where it computes exactly what
 * the reference kernel does.
 *
 * oneDNN 2.6 resamples the spatial dims only, and maps output position o of a dim of
 * length out back to x = (o + 0.5) * in / out - 0.5 (computed in float): nearest takes
 * roundf(x), linear interpolates between floor(x) and ceil(x) clamped to the input.
 * ONNX has a dozen coordinate transforms and rounding rules, and its scale is the one
 * given, not out/in. Rather than restate them here, the build asks the reference kernel
 * itself: it resizes a ramp 0, 1, ..., in-1 along one dim at a time (every other dim of
 * length 1, and scale or size 1 there), which yields for every output position the source
 * index (nearest) or the clamped source coordinate (linear) the reference uses; oneDNN
 * is taken only when every position agrees — the batch and channel dims must map to
 * themselves. Half-pixel with whole-number scales, asymmetric nearest upsampling by whole
 * numbers, and sizes that divide evenly agree; round_prefer_floor downsampling by 2 (every
 * source a tie) and align_corners do not, and stay on the reference kernel. Cubic,
 * tf_crop_and_resize, antialias and the aspect-ratio policies never reach oneDNN.
 *
 * The scales and sizes are read at build. Sizes computed at run time — torch's
 * F.interpolate(x, size=skip.shape[2:]) with a symbolic batch exports them as
 * Concat(Shape(x)[0:2], Shape(skip)[2:4]), which no constant folding can make a
 * constant — are a few integers the shape guard keys by value (dn.h, DN_KEY_VALS): the
 * first run builds from them and other values build again. Scales are floats, which the
 * guard does not key: they must hold the same values on every run (initializers or
 * Constant nodes; constant-folding makes computed ones so).
 */
#include "exec/dnnl/dn_opkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where Upsample and Resize take their request from. */
typedef struct rs_form {
    size_t scales, sizes; /* input index (SIZE_MAX: none) */
} rs_form;

static rs_form form_of(const gl_node *n, int64_t opset)
{
    if (strcmp(n->op_type, "Upsample") == 0)
        return (rs_form){opset < 9 ? SIZE_MAX : 1, SIZE_MAX}; /* opset 7: an attribute */
    return opset < 11 ? (rs_form){1, SIZE_MAX} : (rs_form){2, 3};
}

/* A copy of scales or sizes `t` asking for nothing but dim d's value: 1 for every other
 * dim. Entry i talks about dim axes[i] (opset 18), else dim i. */
static gl_tensor *only_dim(const gl_kernel_ctx *k, const gl_tensor *t, int d)
{
    size_t n_axes;
    const int64_t *axes = k->opset >= 18 ? gl_attr_ints(k->node, "axes", &n_axes) : NULL;
    gl_tensor *c = gl_tensor_new(t->dtype, t->rank, t->dims);
    for (int64_t i = 0; c && i < t->count; i++) {
        int64_t dim = axes && i < (int64_t)n_axes ? axes[i] : i;
        if (dim < 0)
            dim += k->in[0]->rank;
        if (gl_dtype_is_float(t->dtype))
            gl_elem_set_f64(c, i, dim == d ? gl_elem_f64(t, i) : 1.0);
        else
            gl_elem_set_i64(c, i, dim == d ? gl_elem_i64(t, i) : 1);
    }
    return c;
}

/* The reference kernel on a ramp along dim d (see the top): a tensor whose values along
 * dim d, at index 0 of the others, are the source positions. NULL when it fails. */
static gl_tensor *probe_dim(const gl_kernel_ctx *k, const rs_form *f, int d)
{
    const gl_tensor *x = k->in[0];
    int64_t dims[GL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        dims[i] = i == d ? x->dims[d] : 1;
    gl_tensor *ramp = gl_tensor_new(GL_DT_FLOAT, x->rank, dims), *req[2] = {NULL, NULL};
    const gl_tensor *in[4] = {NULL};
    gl_tensor *out[1] = {NULL};
    const gl_op_def *def = gl_op_lookup("", k->node->op_type, k->opset);
    bool ok = ramp && def && def->kernel && k->n_inputs <= 4;
    float *r = ok ? gl_tensor_make_writable(ramp) : NULL;
    for (int64_t i = 0; r && i < ramp->count; i++)
        r[i] = (float)i;
    for (size_t i = 0; ok && i < k->n_inputs; i++)
        in[i] = k->in[i];
    size_t which[2] = {f->scales, f->sizes};
    for (size_t j = 0; j < 2 && ok; j++) {
        const gl_tensor *t = which[j] < k->n_inputs ? k->in[which[j]] : NULL;
        if (t && t->count > 0)
            ok = (in[which[j]] = req[j] = only_dim(k, t, d)) != NULL;
    }
    if (ok) {
        in[0] = ramp;
        gl_kernel_ctx probe = *k;
        probe.in = in;
        probe.out = out;
        probe.n_outputs = 1;
        probe.alloc = NULL;
        probe.alloc_over = NULL;
        ok = def->kernel(&probe) == GL_OK && out[0] && out[0]->rank == x->rank &&
             out[0]->dtype == GL_DT_FLOAT;
    }
    gl_error_clear();
    gl_tensor_free(ramp);
    gl_tensor_free(req[0]);
    gl_tensor_free(req[1]);
    if (!ok) {
        gl_tensor_free(out[0]);
        return NULL;
    }
    return out[0];
}

/* oneDNN's source coordinate of output position o (resampling_utils: float math). */
static float dnnl_source(int64_t o, int64_t out, int64_t in)
{
    return ((float)o + 0.5f) * (float)in / (float)out - 0.5f;
}

/* Does oneDNN read, for every output position of dim d, what the reference does
 * (`src` along the dim at `stride`)? Batch and channels must map to themselves. */
static bool dim_agrees(const float *src, int64_t stride, int64_t in, int64_t out, int d,
                       bool nearest)
{
    if (d < 2 && out != in)
        return false;
    for (int64_t o = 0; o < out; o++) {
        double want = src[o * stride], got;
        if (d < 2)
            got = (double)o;
        else if (nearest)
            got = (double)roundf(dnnl_source(o, out, in));
        else
            got = fmin(fmax((double)dnnl_source(o, out, in), 0.0), (double)(in - 1));
        if (nearest ? want != got : fabs(want - got) > 1e-6 * (double)(in + 1))
            return false;
    }
    return true;
}

static bool is_nearest(const gl_node *n)
{
    return strcmp(gl_node_attr_string(n, "mode", "nearest"), "nearest") == 0;
}

static gl_status resize_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const gl_tensor *x = dn_f32_input(k, 0);
    if (!x || x->rank < 3 || x->rank > 5 || x->count == 0)
        return dn_refuse(b, "X is not a non-empty float32 tensor of rank 3 to 5");
    rs_form f = form_of(k->node, k->opset);
    if (!dn_input_keyed(k, f.sizes))
        return dn_refuse(b, "sizes computed at run time that are not %d integers or fewer",
                         DN_KEY_VALS);
    bool nearest = is_nearest(k->node);
    int64_t out[5];
    for (int d = 0; d < x->rank; d++) {
        gl_tensor *p = probe_dim(k, &f, d);
        if (!p)
            return dn_refuse(b, "the request does not resolve (the reference kernel says why)");
        out[d] = p->dims[d];
        bool agrees = out[d] > 0 &&
                      dim_agrees(gl_tensor_data(p), gl_dims_product(p->dims, d + 1, p->rank),
                                 x->dims[d], out[d], d, nearest);
        gl_tensor_free(p);
        if (!agrees)
            return dn_refuse(b, "oneDNN's resampling maps dim %d otherwise (it takes "
                                "half-pixel centres at out/in, rounding halves up)", d);
    }
    dnnl_memory_desc_t dst;
    dnnl_resampling_desc_t rd;
    dnnl_status_t r = dn_md_tag(&dst, x->rank, out, dnnl_format_tag_any);
    if (r == dnnl_success)
        r = dnnl_resampling_forward_desc_init(&rd, dnnl_forward_inference,
                                              nearest ? dnnl_resampling_nearest
                                                      : dnnl_resampling_linear,
                                              NULL, &b->md[0], &dst);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &rd, NULL, b->c->engine, NULL);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no resampling for this (%s)", dnnl_status2str(r));
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "resampling in this layout");
    dn_bind_input(b, DNNL_ARG_SRC, 0, NULL);
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), x->rank, out);
    return GL_OK;
}

static bool resize_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    const char *mode = gl_node_attr_string(n, "mode", "nearest");
    const char *coord = gl_node_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    rs_form f = form_of(n, gl_model_opset(m, ""));
    if (!dn_input_fits(n, 0, 3, 5)) {
        snprintf(why, len, "X is not float32 of rank 3 to 5");
    } else if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0 &&
               strcmp(mode, "bilinear") != 0) {
        snprintf(why, len, "mode %s (oneDNN resamples nearest and linear only)", mode);
    } else if (strcmp(coord, "tf_crop_and_resize") == 0) {
        snprintf(why, len, "tf_crop_and_resize (a crop with extrapolation)");
    } else if (gl_node_attr_int(n, "antialias", 0) != 0) {
        snprintf(why, len, "antialias=1");
    } else if (strcmp(gl_node_attr_string(n, "keep_aspect_ratio_policy", "stretch"),
                      "stretch") != 0) {
        snprintf(why, len, "keep_aspect_ratio_policy other than stretch");
    } else if (f.scales < n->n_inputs && !dn_value_fixed(n->inputs[f.scales])) {
        snprintf(why, len, "scales computed at run time (constant-folding makes them "
                           "constants; sizes may be computed)");
    } else {
        return true;
    }
    return false;
}

static const dn_op resize_ops[] = {
    {"", "Upsample", 7, resize_claim, resize_build, NULL},
    {"", "Resize", 10, resize_claim, resize_build, NULL},
};
const dn_op_table dn_resize_ops = {resize_ops, GL_ARRAY_LEN(resize_ops)};

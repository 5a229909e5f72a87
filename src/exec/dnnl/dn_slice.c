/* dn_slice.c — a few images of a batch as a tensor of their own, and how many images a
 * unit of primitives runs at a time.
 *
 * A unit of two primitives (dn_fused.c: a 1x1 convolution, then a depthwise one) writes
 * its whole intermediate before the second reads it. At batch 8 the early MobileNet
 * layers' intermediates do not fit in the last-level cache (mobilenet_v2's features.2,
 * 16 -> 96 channels at 112x112: 38.5 MB against 32 MB of L3), so the second primitive
 * reads the first's output back from memory; image by image it is still in cache. Per
 * unit, `graphlab profile --threads 1` (per-node minimums): that unit took 9.26 ms at
 * batch 8 against 8 x 0.75 at batch 1, features.3 (14.5 MB) 5.61 against 8 x 0.54;
 * the units whose intermediates fit (features.7 on, 2.4-4.8 MB) are as fast or faster
 * batched. Only layouts whose batch is the outermost dimension (nchw, nhwc, nChw8c)
 * slice into dense runs of images.
 */
#include "exec/dnnl/dn.h"

#include <string.h>

/* A unit runs parts of the batch when its intermediate at the whole batch is larger
 * than this (about a third of the 32 MB L3 of the AMD EPYC the numbers above come from:
 * at 14.5 MB the parts won, at 4.8 MB, features.5 to 7, they did not at two threads),
 * each part as many images as keep its intermediate within DN_SLICE_PART_BYTES. */
#define DN_SLICE_MIN_BYTES ((size_t)12 << 20)
#define DN_SLICE_PART_BYTES ((size_t)6 << 20)

int64_t dn_slice_images(int64_t batch, size_t bytes)
{
    if (batch <= 1 || bytes <= DN_SLICE_MIN_BYTES)
        return batch;
    size_t per_image = bytes / (size_t)batch;
    int64_t best = 1;
    for (int64_t n = 2; n < batch; n++)
        if (batch % n == 0 && (size_t)n * per_image <= DN_SLICE_PART_BYTES)
            best = n; /* a divisor: every part the same shape, one build */
    return best;
}

bool dn_md_batch_outer(const dnnl_memory_desc_t *md)
{
    if (md->ndims < 2 || md->format_kind != dnnl_blocked || md->offset0 != 0 ||
        md->padded_dims[0] != md->dims[0] || md->dims[0] < 1)
        return false;
    const dnnl_blocking_desc_t *bd = &md->format_desc.blocking;
    int64_t blocks[DNNL_MAX_NDIMS] = {0};
    for (int d = 0; d < md->ndims; d++)
        blocks[d] = 1;
    for (int i = 0; i < bd->inner_nblks; i++)
        blocks[bd->inner_idxs[i]] *= bd->inner_blks[i];
    if (blocks[0] != 1)
        return false;
    /* every other dimension (its outer blocks) within one image's stride, and the
     * images back to back */
    for (int d = 1; d < md->ndims; d++)
        if (bd->strides[d] * (md->padded_dims[d] / blocks[d]) > bd->strides[0])
            return false;
    size_t esize = dnnl_data_type_size(md->data_type);
    return (size_t)bd->strides[0] * (size_t)md->dims[0] * esize == dnnl_memory_desc_get_size(md);
}

void dn_md_with_batch(const dnnl_memory_desc_t *md, int64_t batch, dnnl_memory_desc_t *out)
{
    *out = *md;
    out->dims[0] = batch;
    out->padded_dims[0] = batch; /* the strides stay: the batch is the outermost dim */
}

gl_tensor *dn_slice_of(dn_ctx *c, const gl_tensor *t, int64_t first, int64_t n)
{
    int64_t batch = t->dims[0];
    const dn_layout *l = (const dn_layout *)t->layout;
    size_t image = l ? dnnl_memory_desc_get_size(&l->md) / (size_t)batch
                     : (size_t)(t->count / batch) * gl_dtype_size(t->dtype);
    gl_buffer *view = gl_buffer_new_view(t->buf, (char *)t->buf->data + (size_t)first * image,
                                         (size_t)n * image);
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, t->dims, (size_t)t->rank * sizeof(*dims));
    dims[0] = n;
    gl_tensor *s = gl_tensor_wrap(t->dtype, t->rank, dims, t->count / batch * n, view);
    if (l) {
        dnnl_memory_desc_t md;
        dn_md_with_batch(&l->md, n, &md);
        s->layout = dn_layout_of(c, &md);
    }
    return s;
}

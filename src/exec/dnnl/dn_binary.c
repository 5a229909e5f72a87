/* dn_binary.c — two-input elementwise ops with numpy broadcasting as oneDNN binary
 * primitives (Add, Sub, Mul, Div, Max, Min; variadic Max/Min/Sum/Mean with exactly two
 * inputs).
 *
 * oneDNN broadcasts only its second source (dims of 1), and its destination has the
 * first source's shape and layout. So the operand with the output's shape is the first
 * source: the other is swapped in first when the op commutes (Add, Mul, Max, Min, Sum);
 * a Sub or Div whose first operand broadcasts stays on the reference kernel. An operand
 * of lower rank is read with leading 1s (plain). A second source of the full shape is
 * read in the first one's layout (a per-channel [1, C, 1, 1] bias stays plain: oneDNN
 * broadcasts it over nChw16c). Mean is a Sum with a 0.5 linear post-op.
 */
#include "exec/dnnl/dn_opkit.h"

#include <string.h>


typedef struct bin_row {
    const char *op;
    dnnl_alg_kind_t alg;
    bool commutes;
    bool halve; /* Mean */
} bin_row;

static const bin_row bin_rows[] = {
    {"Add", dnnl_binary_add, true, false}, {"Sub", dnnl_binary_sub, false, false},
    {"Mul", dnnl_binary_mul, true, false}, {"Div", dnnl_binary_div, false, false},
    {"Max", dnnl_binary_max, true, false}, {"Min", dnnl_binary_min, true, false},
    {"Sum", dnnl_binary_add, true, false}, {"Mean", dnnl_binary_add, true, true},
};

static const bin_row *row_of(const gl_node *n)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(bin_rows); i++)
        if (strcmp(bin_rows[i].op, n->op_type) == 0)
            return &bin_rows[i];
    return NULL;
}

dnnl_alg_kind_t dn_binary_alg(const char *op, bool *commutes)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(bin_rows); i++)
        if (strcmp(bin_rows[i].op, op) == 0 && !bin_rows[i].halve) {
            *commutes = bin_rows[i].commutes;
            return bin_rows[i].alg;
        }
    return (dnnl_alg_kind_t)0;
}

static bool same_dims(const gl_tensor *a, int rank, const int64_t *dims)
{
    return a->rank == rank && memcmp(a->dims, dims, (size_t)rank * sizeof(int64_t)) == 0;
}

/* The binary primitive src0 (op) src1 into src0's descriptor, Mean halved after. */
static dnnl_status_t binary_pd(dn_build *b, const bin_row *row, const dnnl_memory_desc_t *md0,
                               const dnnl_memory_desc_t *md1, dnnl_primitive_desc_t *pd)
{
    dnnl_primitive_attr_t attr = NULL;
    const dn_post halve = {dnnl_eltwise_linear, 0.5f, 0.0f, 1.0f, NULL};
    dnnl_status_t r = dn_attr_post_ops(&halve, row->halve ? 1 : 0, &attr);
    dnnl_binary_desc_t bd;
    if (r == dnnl_success)
        r = dnnl_binary_desc_init(&bd, row->alg, md0, md1, md0);
    if (r == dnnl_success)
        r = dnnl_primitive_desc_create(pd, &bd, attr, b->c->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    return r;
}

/* *md1: the broadcast operand src1, of the output's rank, in the plan's activation
 * layout; false when activations of that rank stay plain. */
static bool src1_in_act_layout(const dn_build *b, int rank, const gl_tensor *src1,
                               dnnl_memory_desc_t *md1)
{
    dnnl_format_tag_t tag = dn_act_tag(b->c, rank);
    return src1->rank == rank && tag != dnnl_format_tag_undef &&
           dn_md_tag(md1, rank, src1->dims, tag) == dnnl_success;
}

static gl_status binary_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    const gl_kernel_ctx *k = b->k;
    const bin_row *row = row_of(k->node);
    if (k->n_inputs != 2 || !k->in[0] || !k->in[1])
        return dn_refuse(b, "%zu inputs", k->n_inputs);
    const gl_tensor *a = dn_f32_input(k, 0), *c = dn_f32_input(k, 1);
    if (!row || !a || !c || a->count == 0 || c->count == 0)
        return dn_refuse(b, "not two non-empty float32 tensors");
    int rank = a->rank > c->rank ? a->rank : c->rank;
    int64_t out[GL_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        int ia = i - (rank - a->rank), ic = i - (rank - c->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, dc = ic >= 0 ? c->dims[ic] : 1;
        if (da != dc && da != 1 && dc != 1)
            return dn_refuse(b, "shapes do not broadcast");
        out[i] = da == 1 ? dc : da;
    }
    if (rank == 0 || rank > DNNL_MAX_NDIMS)
        return dn_refuse(b, "rank %d", rank);
    /* src0: the operand with the output's shape; with both, prefer one in our layout. */
    size_t s0 = 0;
    bool full0 = same_dims(a, rank, out), full1 = same_dims(c, rank, out);
    if ((!full0 && full1) || (full0 && full1 && !a->layout && c->layout))
        s0 = 1;
    if (s0 == 1 && !row->commutes) {
        if (!full0)
            return dn_refuse(b, "the first operand broadcasts");
        s0 = 0; /* the second is read converted into the first's layout */
    }
    if (!full0 && !full1)
        return dn_refuse(b, "both operands broadcast");
    const gl_tensor *src0 = k->in[s0], *src1 = k->in[1 - s0];
    if (!src0->layout && !src1->layout && src0->count < DN_OPS_SMALL)
        return dn_refuse(b, "%lld elements: below the oneDNN threshold (%d)",
                         (long long)src0->count, DN_OPS_SMALL);
    const dnnl_memory_desc_t *md0 = &b->md[s0];
    dnnl_memory_desc_t md1;
    bool full_src1 = same_dims(src1, rank, out);
    int64_t d1[DNNL_MAX_NDIMS];
    if (full_src1) {
        md1 = *md0; /* read in the first source's layout */
    } else {
        for (int i = 0; i < rank; i++) {
            int j = i - (rank - src1->rank);
            d1[i] = j >= 0 ? src1->dims[j] : 1;
        }
        if (dn_md_plain(&md1, rank, d1, NULL) != dnnl_success)
            return dn_refuse(b, "shapes oneDNN does not describe");
    }
    dnnl_status_t r = binary_pd(b, row, md0, &md1, pd);
    if (r != dnnl_success)
        return dn_refuse(b, "oneDNN has no binary for this (%s)", dnnl_status2str(r));
    bool src1_in_layout = false;
    dnnl_memory_desc_t md1_plain = md1;
    if (dn_pd_is_ref(*pd) && !full_src1 && src1_in_act_layout(b, rank, src1, &md1)) {
        /* oneDNN 2.6 broadcasts a plain [N, C, 1, 1] over nChw16c (efficientnet's
         * squeeze-and-excitation scale) in its reference code only: read it in the
         * activations' layout (a few bytes to convert, if any), the jit kernel takes it. */
        dnnl_primitive_desc_t in_layout = NULL;
        if (binary_pd(b, row, md0, &md1, &in_layout) == dnnl_success &&
            !dn_pd_is_ref(in_layout)) {
            dnnl_primitive_desc_destroy(*pd);
            *pd = in_layout;
            src1_in_layout = true;
        } else {
            dnnl_primitive_desc_destroy(in_layout);
            md1 = md1_plain;
        }
    }
    /* a squeeze-and-excitation scale: one value per image and channel, on graphlab's
     * kernel wherever it reads the layout (oneDNN's pd then only describes the bindings:
     * over regnet_y_400mf's nChw8c in a nChw16c plan oneDNN has no jit kernel) */
    bool chscale = row->alg == dnnl_binary_mul && !row->halve && rank == 4 && !full_src1 &&
                   dn_chscale_fits(b, md0, out, &md1, d1);
    if (dn_pd_is_ref(*pd) && !chscale)
        return dn_refuse_ref(b, pd, "this broadcast");
    /* max and min keep the operand that is not NaN (dn_special.c) */
    gl_status st = dn_guard_specials(b, dn_alg_drops_specials(row->alg, 0.0f, 0.0f));
    if (st != GL_OK)
        return st;
    dn_bind_input(b, DNNL_ARG_SRC_0, s0, NULL);
    if (full_src1 || src1_in_layout)
        dn_bind_input(b, DNNL_ARG_SRC_1, 1 - s0, &md1);
    else
        dn_bind_input_view(b, DNNL_ARG_SRC_1, 1 - s0, &md1);
    dn_bind_output(b, DNNL_ARG_DST, 0, dn_pd_md(*pd, dnnl_query_dst_md, 0), rank, out);
    if (chscale)
        dn_chscale_take(b, md0, out, &md1, d1);
    return GL_OK;
}

static bool binary_claim(const gl_model *m, const gl_node *n, char *why, size_t len)
{
    (void)m;
    if (n->n_inputs != 2 || !dn_input_fits(n, 0, 0, DNNL_MAX_NDIMS) ||
        !dn_input_fits(n, 1, 0, DNNL_MAX_NDIMS)) {
        snprintf(why, len, "not two float32 inputs");
        return false;
    }
    return true;
}

#define BIN(op, since) {"", op, since, binary_claim, binary_build, NULL}
static const dn_op binary_ops[] = {
    BIN("Add", 1), BIN("Sub", 1), BIN("Mul", 1), BIN("Div", 1),
    BIN("Max", 1), BIN("Min", 1), BIN("Sum", 1), BIN("Mean", 1),
};
#undef BIN
const dn_op_table dn_binary_ops = {binary_ops, GL_ARRAY_LEN(binary_ops)};

size_t dn_binary_names(char (*names)[32], size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < GL_ARRAY_LEN(bin_rows); i++)
        if (!bin_rows[i].halve && n++ < cap)
            snprintf(names[n - 1], 32, "%s", bin_rows[i].op);
    return n;
}

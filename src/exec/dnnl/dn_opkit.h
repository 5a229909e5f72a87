/* dn_opkit.h — what the oneDNN op files share beyond dn_node.c's binding machinery:
 * choosing among primitive descriptors when oneDNN would fall to its own reference code,
 * inputs whose values a build may read (axes, scales, sizes), and reading them.
 *
 * oneDNN's reference implementations (ref:any, lrn_ref:any, bnorm_ref:any, the
 * ref concat) are parallel loops in float that read and write the plan's layouts, while
 * our reference kernels run on one thread in double on plain copies: for the ops here a
 * ref:any primitive is still the better of the two (measured in the issue note), so it is
 * accepted — after every layout that could give a vectorized kernel has been tried — and
 * the plan says so. Convolutions are the exception (dn_conv.c, dn_deconv.c): there
 * ref:any is refused.
 */
#ifndef GL_DN_OPKIT_H
#define GL_DN_OPKIT_H

#include "exec/dnnl/dn.h"

/* Below this many elements a plain elementwise op is cheaper on the reference kernel:
 * the OpenMP fork and join of a primitive costs more than the loop (as dn_eltwise.c). */
#define DN_OPS_SMALL 4096

/* pd runs oneDNN's reference code rather than a vectorized kernel. */
bool dn_pd_is_ref(const_dnnl_primitive_desc_t pd);

/* One way to make a primitive descriptor (way = 0, 1, ...): dnnl_unimplemented or any
 * error when this way does not apply. */
typedef dnnl_status_t (*dn_pd_way)(dn_build *b, void *arg, int way, dnnl_primitive_desc_t *pd);

/* Try ways 0..n-1 in order and keep, in *pd, the first that oneDNN implements with a
 * kernel of its own, else the first it implements at all. Returns the way kept, -1 when
 * none worked (*pd NULL). */
int dn_pd_pick(dn_build *b, void *arg, int n, dn_pd_way fn, dnnl_primitive_desc_t *pd);

/* Accept pd as it is; when it is oneDNN's reference code, the plan's note says so
 * ("oneDNN's reference implementation: <why>"). */
void dn_note_ref(dn_build *b, const_dnnl_primitive_desc_t pd, const char *why);

/* v holds the same contents on every run (a build may read it): a constant initializer
 * or a Constant node's output. NULL (an omitted input) counts as fixed. */
bool dn_value_fixed(const gl_value *v);

/* The values of integer input i of the kernel (malloc'd, *count of them; NULL input:
 * NULL, 0). False when the input is not an integer tensor. */
bool dn_input_ints(const gl_kernel_ctx *k, size_t i, int64_t **vals, size_t *count);

/* A plain float32 descriptor of `rank` dims for the tensor's bytes read as those dims
 * (a view with the same element count): dims padded with leading 1s up to rank, or the
 * given dims as they are. */
dnnl_status_t dn_md_leading_ones(dnnl_memory_desc_t *md, int rank, const gl_tensor *t);

/* The row of `op` in `table` (NULL when the table has none). */
const dn_op *dn_table_row(const dn_op_table *table, const char *op);

/* Claim helper: every present input may be float32 of a rank in [lo, hi]. */
bool dn_inputs_fit(const gl_node *n, int lo, int hi, char *why, size_t len);

#endif

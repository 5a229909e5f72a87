/* arity.h — how many inputs and outputs each op takes, and which may be omitted (the
 * table is arity.def), and the check of one node against it.
 *
 * The check runs at load with the attribute check (gl_model_check_schema in attrs.h),
 * over every node of the main graph, its subgraphs and the function bodies, at the opset
 * that applies to the node. What it guarantees the kernels: input i exists and is not
 * NULL for every required position i, and for a variadic every input from its position
 * on; optional inputs may be missing (i >= n_inputs) or NULL.
 */
#ifndef GL_OPS_ARITY_H
#define GL_OPS_ARITY_H

#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One row of arity.def: the formal inputs and outputs of `op` from opset `since` on, one
 * character each ('1' required, '?' optional, '*'/'+' variadic of zero/one or more). */
typedef struct gl_op_arity {
    const char *domain; /* "" for ai.onnx */
    const char *op;
    int since;
    const char *in, *out;
} gl_op_arity;

/* The row for `op` of `domain` ("" and "ai.onnx" are the same) at `opset`: the one with
 * the largest since <= opset. NULL when the table does not describe the op there. */
const gl_op_arity *gl_op_arity_lookup(const char *domain, const char *op, int64_t opset);
/* Every row, in the order of arity.def. */
size_t gl_op_arity_count(void);
const gl_op_arity *gl_op_arity_at(size_t i);

/* The fewest and most values a parameter string allows (*max: SIZE_MAX after a
 * variadic). */
void gl_arity_range(const char *params, size_t *min, size_t *max);

/* Whether node n fits row: true, or false with `detail` saying how it does not, without
 * the node's name (e.g. "needs at least 1 input, has 0"). */
bool gl_op_arity_fits(const gl_op_arity *row, const gl_node *n, char *detail, size_t len);

#endif

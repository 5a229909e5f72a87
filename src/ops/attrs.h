/* attrs.h — which attributes each op takes and of which type (the table is attrs.def),
 * and the check of a loaded model against its ops' schemas (attributes and arity.h).
 *
 * The check runs at load (gl_model_load), over the main graph, every subgraph and every
 * function body, each node against the schema of its op at the opset that applies to it
 * (a function body's own opset_import first). A node fails the load (GL_ERR_INPUT, exit
 * 2) when it has fewer or more inputs or outputs than the op takes, or leaves a required
 * one empty (kernels read the inputs the spec guarantees), when an attribute has another
 * type than the spec says, or when the op has no attribute of that name: ONNX's checker
 * and ONNX Runtime refuse those too, and a kernel would silently ignore it and compute
 * something else. Ops the tables do not describe (ops we do not implement, calls of
 * model-local functions) are not checked by name; see gl_model_check_schema for
 * function calls.
 */
#ifndef GL_OPS_ATTRS_H
#define GL_OPS_ATTRS_H

#include "ir/graph.h"

#include <stddef.h>
#include <stdint.h>

typedef struct gl_attr_spec {
    const char *name;
    gl_attr_type type;
} gl_attr_spec;

/* One row of attrs.def: the attributes of `op` from opset `since` on. */
typedef struct gl_op_attrs {
    const char *op;
    int since;
    const gl_attr_spec *attrs;
    size_t n_attrs;
} gl_op_attrs;

/* The row for `op` of `domain` ("" or "ai.onnx") at `opset`: the one with the largest
 * since <= opset. NULL when the table does not describe the op at that opset. */
const gl_op_attrs *gl_op_attrs_lookup(const char *domain, const char *op, int64_t opset);
/* The type `row` gives attribute `name`, or GL_ATTR_UNDEFINED when it has none. */
gl_attr_type gl_op_attr_type(const gl_op_attrs *row, const char *name);
/* Every row, in the order of attrs.def (for tests and listings). */
size_t gl_op_attrs_count(void);
const gl_op_attrs *gl_op_attrs_at(size_t i);

/* GL_OK, or GL_ERR_INPUT with one line naming the file, the node (and the subgraph or
 * function it is in), the op and what is wrong: the count of inputs or outputs against
 * the op's, or the attribute with the type found and the type expected. Besides the
 * rules above:
 *  - an attribute that refers to the caller's (ref_attr_name) is only allowed in a
 *    function body; when it declares a type, that type must be the schema's;
 *  - a call of a model-local function is checked where it passes its attributes: each
 *    attribute the body reads by reference must have the type the reading node's schema
 *    wants (through calls of other functions too). Attributes the body does not read are
 *    left alone, as are calls that pass an attribute on by reference (their own callers
 *    are checked). */
gl_status gl_model_check_schema(const gl_model *m);

#endif

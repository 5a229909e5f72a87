/* group.h — making a group: some nodes of a graph become one node calling a model-local
 * function of domain graphlab.fused whose body is copies of them, names kept. The fusion
 * pass (float chains) and the qdq pass (quantized units) both make groups this way, so a
 * group looks the same to the executor, the renderer and the saved model whichever pass
 * made it.
 */
#ifndef GL_GROUP_H
#define GL_GROUP_H

#include "ir/graph.h"

#include <stddef.h>
#include <stdint.h>

#define GL_FUSED_DOMAIN "graphlab.fused"

typedef struct gl_group_spec {
    gl_node *const *members;   /* in topological order */
    size_t n_members;
    /* The call returns output out_index[i] of member out_owner[i], in this order. */
    gl_node *const *out_owner;
    const size_t *out_index;
    size_t n_out;
    const char *fname;         /* the function's name (free in graphlab.fused) */
    const char *doc;           /* the function's doc string */
    int64_t decision;          /* provenance of the call (-1: none) */
} gl_group_spec;

/* The function's inputs are the values the members read from outside the group, each
 * once, in the order the members first read them; the call reads them and takes over the
 * returned outputs (their names and readers). A member whose outputs are still read
 * outside the group afterwards (a DequantizeLinear another node reads too) stays in the
 * graph, and the body has its own copy; every other member goes. The model imports
 * graphlab.fused and gets IR 8 (model-local functions). *call may be NULL. */
gl_status gl_group_make(gl_model *m, gl_graph *g, const gl_group_spec *s, gl_node **call);

/* The length of n's kind: for a group's call, its op type without the counter that keeps
 * each function's name free ("FusedConvRelu_17" -> 13, "FusedConvRelu"); for any other
 * node its whole op type. Op counts group by it (info, the workbench's node list), so a
 * model with 35 such groups has one row of 35, not 35 rows of 1. */
int gl_group_kind_len(const gl_node *n);

#endif

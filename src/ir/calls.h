/* calls.h — calls of model-local functions, and the one bound on expanding them.
 *
 * A node whose (domain, op type) names a function of the model (ModelProto.functions) is
 * a call. Three walks expand calls into their function's body: the executor's planner (a
 * plan per call site), shape inference (the body typed per call) and the effects analysis
 * that dce and constant folding read. A small hostile file can make any of them explode:
 * a function that calls itself (ONNX forbids it; a file may still try), or functions that
 * each call the one below twice, 26 levels deep (2^26 bodies from 3 KB).
 *
 * Each walk keeps one gl_expansion and enters it at every call: a call of a function
 * already on the chain (recursion), a chain deeper than GL_MAX_CALL_DEPTH, or more than
 * GL_MAX_EXPANDED_NODES body nodes (subgraphs included) expanded by the walk in all is
 * refused, so a walk's work stays proportional to the model whatever the file claims.
 */
#ifndef GL_CALLS_H
#define GL_CALLS_H

#include "ir/graph.h"

#define GL_MAX_CALL_DEPTH 32
/* The bound on expanded nodes is this many plus GL_EXPANSION_PER_NODE per node of the
 * model (its graphs and function bodies): above what real models expand to (a fused group
 * or a transformer layer per call site), while the work of a walk stays proportional to
 * the file. Planning 2^16 nodes takes about 0.3 s and 50 MB. */
#define GL_MAX_EXPANDED_NODES ((size_t)1 << 16)
#define GL_EXPANSION_PER_NODE 8

/* The function node n calls (a function with a body, in n's domain, "" and "ai.onnx"
 * alike), or NULL when n is not a call. */
const gl_function *gl_called_function(const gl_model *m, const gl_node *n);

typedef struct gl_expansion {
    const gl_function *chain[GL_MAX_CALL_DEPTH]; /* the calls being expanded, outermost first */
    int depth;
    size_t nodes;     /* body nodes expanded so far */
    size_t max_nodes; /* 0: GL_MAX_EXPANDED_NODES; see gl_expansion_init */
    char root[512];   /* where the outermost call is: refusals start with it */
} gl_expansion;

/* An empty expansion whose bound follows the size of m. */
void gl_expansion_init(gl_expansion *x, const gl_model *m);

/* Start expanding a call of f (found by gl_called_function) made at `where`
 * ("m.onnx: node 'c' (f)"). GL_OK: expand, then gl_expansion_leave. GL_ERR_INPUT, with a
 * message starting with the outermost call's `where`, when the call is recursive, nests
 * too deep or expands too much; with where == NULL the refusal leaves no message (for
 * walks that fall back to a safe answer). */
gl_status gl_expansion_enter(gl_expansion *x, const gl_function *f, const char *where);
void gl_expansion_leave(gl_expansion *x);

#endif

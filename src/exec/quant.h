/* quant.h — what a QDQ graph says about its tensors (issue 21, points 4 and 5): the
 * scale and zero point of a quantized or dequantized value, the QuantizeLinear ->
 * DequantizeLinear pairs on its activations, and the graph with those pairs removed
 * (the float model it was quantized from).
 *
 * The one place that reads a tensor's quantization off the graph: the comparisons of
 * run, profile and bisect (compare.h's gl_compare_value), the quantization-error report
 * (qerror.h) and the workbench all ask here. */
#ifndef GL_QUANT_H
#define GL_QUANT_H

#include "ir/graph.h"
#include "ir/tensor.h"

#include <stdbool.h>
#include <stddef.h>

/* How a value is quantized. scale and zero are the graph's constants (not owned). */
typedef struct gl_quant {
    const gl_tensor *scale; /* a scalar, or 1-D along `axis` (per axis); NULL: the value
                             * is not quantized */
    const gl_tensor *zero;  /* the zero point, scale's shape, or NULL (0) */
    int axis;               /* per axis: the value's axis as the node says (negative:
                             * from the end) */
    bool integer;           /* the value is the integers (a QuantizeLinear's output), not
                             * the real numbers they stand for (a DequantizeLinear's) */
} gl_quant;

/* Whether v is a QuantizeLinear's output or a DequantizeLinear's, with a constant
 * scale (an initializer or a Constant node) of one element or one per element of v's
 * axis; *q says how. An output of a call of a model-local function (a fused QDQ group)
 * is the body's: quantized when a Q or DQ makes it there, its scale and zero point
 * constants of the body or the call's inputs in the function's formal inputs' places.
 * The output of ops that only average or pick elements (Flatten, Reshape, Squeeze,
 * Unsqueeze, Identity, Average/MaxPool and their global forms) or add a constant to it
 * (Add, Sub: a float bias after the last DequantizeLinear), of a value quantized per
 * tensor, is that value's quantization: a difference of k steps in their input is at
 * most k steps in their output.
 * False (q->scale NULL) for any other value. Only what v's producer says counts: a value
 * merely read by a QuantizeLinear is not quantized. */
bool gl_quant_of(const gl_value *v, gl_quant *q);

/* Element `i` of tensor t's scale, and its real value: (t[i] - zero) * scale when q is
 * integer, t[i] otherwise. t has the value's shape. */
double gl_quant_scale_at(const gl_quant *q, const gl_tensor *t, int64_t i);
double gl_quant_real_at(const gl_quant *q, const gl_tensor *t, int64_t i);

/* t's real values as a new float tensor: dequantized when q is integer, converted
 * otherwise; NULL for strings and complex numbers. */
gl_tensor *gl_quant_dequantize(const gl_quant *q, const gl_tensor *t);

/* ---- the pairs on activations ------------------------------------------------------- */

/* A QuantizeLinear whose output a DequantizeLinear reads, on a value that is not a
 * constant: an activation quantized at run time. Named by the Q's input, the tensor it
 * quantizes. Everything is copied: a pair outlives the graph it was found in. */
typedef struct gl_qdq_pair {
    char *tensor;    /* the Q's input */
    char *node;      /* the Q node's name */
    char *q_output;  /* the Q's output: the integers */
    char *dq_output; /* the first DequantizeLinear reading it: the real values */
    gl_tensor *scale, *zero; /* shared copies of the Q's constants (zero may be NULL) */
    int axis;
    size_t *feeders; /* the pairs (indexes) nearest upstream: reached from `tensor` by
                      * walking back through producers without crossing another pair */
    size_t n_feeders;
} gl_qdq_pair;

typedef struct gl_qdq_pairs {
    gl_qdq_pair *items; /* in g's node order (topological) */
    size_t n;
} gl_qdq_pairs;

/* The pairs on g's activations (g's own nodes; not inside subgraphs or function
 * bodies). A Q with a scale that is not a constant is no pair. */
void gl_qdq_pairs_find(const gl_graph *g, gl_qdq_pairs *out);
void gl_qdq_pairs_free(gl_qdq_pairs *p);
/* p's quantization as gl_quant (integer: for its Q output). */
gl_quant gl_qdq_pair_quant(const gl_qdq_pair *p);

/* ---- the float model ------------------------------------------------------------------ */

/* Remove g's Q -> DQ pairs: every DequantizeLinear that reads a QuantizeLinear's output
 * becomes an Identity of the Q's input (it keeps its name and its output's, so the
 * float run has the same tensors under the same names, graph outputs included), and a
 * Q nobody reads any more is removed. A DequantizeLinear of anything else (an int8
 * weight stored as such) stays: the float model keeps the quantized weights, its
 * original float ones not being in the file. Only g's own nodes. *removed (may be
 * NULL): the pairs bypassed (DequantizeLinear nodes made Identity). */
gl_status gl_qdq_strip(gl_graph *g, size_t *removed);

#endif

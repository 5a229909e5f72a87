/* target.h — what the backend runs well, as the passes ask it.
 *
 * The fusion pass groups nodes the backend runs as one kernel. What "one kernel" can hold
 * is the backend's knowledge, not the pass's: which activations become eltwise post-ops
 * (and how many), which binary ops become binary post-ops, how many post-ops a primitive
 * takes, which heads take post-ops at full speed, and — asked of the library itself, by
 * building the group's primitive for its shapes — whether the group gets a real
 * implementation or a reference one. The backend fills this record from its own op tables
 * (src/exec/dnnl/dn_target.c reads dn_eltwise.c's and dn_binary.c's), so a new row of
 * those is a new post-op for the pass.
 *
 * Besides the record, two questions are asked by running: gl_target_probe builds the plan
 * of a small model (the group alone, as the fusion pass makes it) and reads how the
 * backend would run its call; gl_target_time times two such models against each other.
 */
#ifndef GL_TARGET_H
#define GL_TARGET_H

#include "exec/exec.h"

#include <stdbool.h>
#include <stddef.h>

#define GL_TARGET_NAME_LEN 32

typedef struct gl_target {
    const char *name;  /* "oneDNN 2.6 (cpu)" */
    int max_post_ops;  /* post-ops one primitive takes */
    /* The inputs of a Concat that the split kernels take (concat-conv1x1: one
     * convolution per input; channel-shuffle: the moves of each input). */
    int max_concat_parts;
    /* How many post-ops n becomes as an activation member at `opset` (its domain's):
     * >= 1, or -1 when it is no post-op. Parameters are not read: see eltwise_params. */
    int (*eltwise_posts)(const gl_node *n, int64_t opset);
    /* Whether activation member n with the parameter inputs `params` (params[i] for
     * n->inputs[i], i >= 1; NULL: absent or not a constant) becomes post-ops: Clip's
     * bounds and Pow's exponent must be fixed scalars. False with *why. */
    bool (*eltwise_params)(const gl_node *n, int64_t opset, const gl_tensor *const *params,
                           size_t n_params, const char **why);
    /* Whether n (two inputs) is a binary post-op (Add Sub Mul Div Max Min); *commutes
     * (may be NULL): whether the chain may be its second operand. */
    bool (*binary_post)(const gl_node *n, bool *commutes);
    /* Every op that eltwise_posts takes, "Relu" or "graphlab.Gelu" (at most cap written),
     * and the binary ones: their counts. For listings and the tests, which generate a
     * case for each: an op added to the backend's tables is tested without a new row. */
    size_t (*eltwise_names)(char (*names)[GL_TARGET_NAME_LEN], size_t cap);
    size_t (*binary_names)(char (*names)[GL_TARGET_NAME_LEN], size_t cap);
    /* The depthwise convolution oneDNN takes as a post-op of a 1x1 one (its dw_k3s1p1 /
     * dw_k3s2p1): kernel, padding and the strides it has. */
    struct {
        int kernel, pad, min_stride, max_stride;
    } dw_post;
    /* NULL when `head` takes `member` (binary: a binary post-op, else an eltwise one,
     * read at `opset`, its domain's) at the speed of the head alone; else why not,
     * written in the refusal: a limit of the backend (a batch normalization takes one
     * relu), or (*slow set) a measured fact about the library's speed, which
     * fusion.probe=0 overrides. */
    const char *(*head_post_ops_refusal)(const gl_node *head, const gl_node *member,
                                         int64_t opset, bool binary, bool *slow);
} gl_target;

/* The target of the backend fused nodes run on (oneDNN). */
const gl_target *gl_target_default(void);

/* How the backend runs the call `call` of model m, from its plan (m's shapes must be
 * known for a real answer): true when it runs it as its own kernel(s) (impl gets the
 * implementation, "jit:avx512_core + eltwise_relu"); false when it would run the body
 * or the members on reference kernels (why gets the plan's note, naming the
 * implementation). A failure to make the plan is false with its message. */
/* Whether an implementation as the plan shows it ("A + post-ops | B | ...") is slower than
 * the members would run: a group on a reference kernel, a unit's primitive on one with
 * post-ops, a unit's primitive never built (gl_target_probe's test). */
bool gl_target_impl_is_slow(const char *impl);
bool gl_target_probe(const gl_model *m, const gl_node *call, char *impl, size_t impl_len,
                     char *why, size_t why_len);

/* Medians of whole runs of a and b on the backend (dnnl), on the same seeded random
 * inputs (a and b have the same graph inputs), rounds interleaved (a then b, then b then
 * a, ...) after `warmup` runs of each, so that a change of load touches both alike.
 * GL_OK with the medians in ms and the noise: the larger relative spread of the two
 * (the median of |t - median| / median); an error when a model does not run. */
typedef struct gl_target_timing {
    double a_ms, b_ms; /* medians */
    double noise;      /* relative, the larger of a's and b's: 0.03 is 3% */
    int rounds;
} gl_target_timing;
gl_status gl_target_time(const gl_model *a, const gl_model *b, int warmup, int rounds,
                         gl_target_timing *t);

#endif

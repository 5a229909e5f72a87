/* model_summary.h — what a model holds, gathered once for `graphlab info` and the
 * workbench's model view (ui/view_model.c): the op histogram, node counts, initializers
 * and their bytes, the file's size. The fields the model itself keeps (IR version,
 * opsets, producer, metadata, functions) are read from gl_model directly. */
#ifndef GL_MODEL_SUMMARY_H
#define GL_MODEL_SUMMARY_H

#include "ir/graph.h"

#include <stddef.h>
#include <stdint.h>

typedef struct gl_op_tally {
    char *op;     /* "Conv", "domain:Op" outside ai.onnx; a fused group by its kind
                   * ("graphlab.fused:FusedConvClip", not one row per group) */
    size_t count;
} gl_op_tally;

typedef struct gl_model_summary {
    gl_op_tally *ops;         /* most frequent first, ties by name */
    size_t n_ops, cap_ops;
    size_t node_count;        /* top-level graph */
    size_t node_count_total;  /* including subgraphs */
    size_t initializers;
    uint64_t initializer_bytes;
    long long file_bytes;     /* the size of m->path; -1 when it cannot be read */
} gl_model_summary;

/* Fill *s (zeroed by the caller or not: it is overwritten) from m's main graph. */
void gl_model_summarize(const gl_model *m, gl_model_summary *s);
void gl_model_summary_free(gl_model_summary *s);

/* "pytorch 2.1.0", "pytorch" or "" (never NULL; the producer fields may be absent). */
void gl_model_producer(const gl_model *m, char *buf, size_t len);

#endif

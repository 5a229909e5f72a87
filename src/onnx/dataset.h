/* dataset.h — ONNX test data sets (the test_data_set_N folders): the files of a folder
 * read into the tensors a run takes and the ones it should give. Comparing them is
 * exec/compare.h's; this is the reading, kept below exec so that exec handles tensors in
 * memory only. */
#ifndef GL_DATASET_H
#define GL_DATASET_H

#include "ir/graph.h"
#include "ir/tensor.h"

/* A folder of DIR/input_K.pb and DIR/output_K.pb (serialized TensorProto) for graph g.
 * Each file binds to the graph input (output) its TensorProto names; an unnamed or
 * unknown name binds by position K: among all inputs when there is a file for each,
 * else among the inputs without a default. Data for a bfloat16 value stored as uint16
 * (how onnx 1.12 writes it) is read as bfloat16. */
typedef struct gl_dataset {
    gl_tensor **inputs;   /* g->n_inputs entries; NULL: no file (use the default) */
    size_t n_inputs;
    gl_tensor **expected; /* g->n_outputs entries; NULL: no file for that output */
    size_t n_outputs;
} gl_dataset;

/* GL_ERR_IO when DIR cannot be read, GL_ERR_INPUT for a file that is not a TensorProto
 * or has no graph input/output to go to. On failure *d is empty. */
gl_status gl_dataset_load(const gl_graph *g, const char *dir, gl_dataset *d);
void gl_dataset_free(gl_dataset *d);

#endif

/* testutil.h — helpers shared by the criterion tests. */
#ifndef GL_TESTUTIL_H
#define GL_TESTUTIL_H

#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>

/* Absolute path of a file in the source tree (GL_TEST_SRCDIR); static buffer per call
 * slot (up to 8 live results). */
const char *tu_src(const char *rel);
/* The ../shared folder beside the source tree, or NULL when absent (tests that need it
 * then skip with cr_skip_test). */
const char *tu_shared(void);
/* A fresh temporary folder (mkdtemp under $TMPDIR or /tmp); removed by tu_rmtree. */
char *tu_tmpdir(void);
void tu_rmtree(const char *dir);
/* Write bytes to a file; true on success. */
bool tu_write_file(const char *path, const void *data, size_t len);
/* Read a whole file (malloc'd), NULL on failure. */
void *tu_read_file(const char *path, size_t *len);

/* Build small graphs in C for pass tests:
 *   gl_model *m = tu_model(13);                     // ai.onnx opset 13, IR 8
 *   gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (int64_t[]){2, 3});
 *   gl_node *n = tu_node(m->graph, "Relu", "r", 1, x);  // n_inputs, then the inputs
 *   tu_output(m->graph, n->outputs[0]);
 * Shapes with symbolic dims: pass dims < 0 as -1 (unknown). */
gl_model *tu_model(int64_t opset);
gl_value *tu_input(gl_graph *g, const char *name, gl_dtype dt, int rank, const int64_t *dims);
gl_value *tu_const_f32(gl_graph *g, const char *name, int rank, const int64_t *dims,
                       const float *data);
gl_value *tu_const_i64(gl_graph *g, const char *name, int rank, const int64_t *dims,
                       const int64_t *data);
gl_node *tu_node(gl_graph *g, const char *op, const char *name, size_t n_inputs, ...);
void tu_output(gl_graph *g, gl_value *v);

#endif

/* inter_save.h — the tensors a recorder kept (exec/intermediates.h) written as
 * TensorProto files, and the end of two recorded runs as `graphlab run` does it: the
 * report, then the save. Here, above exec, so that exec handles tensors in memory only
 * and the files go through the saver (onnx/save_set.h). */
#ifndef GL_INTER_SAVE_H
#define GL_INTER_SAVE_H

#include "exec/intermediates.h"

#include <stdbool.h>
#include <stdio.h>

/* Write the kept tensors with these keys (names NULL: every one) into DIR (created when
 * absent) as serialized onnx.TensorProto files, NNNN_SAFE.ID.pb: NNNN their place in the
 * recording, SAFE the key with every byte but [A-Za-z0-9._-] replaced by '_' (so no name
 * reaches outside DIR), ID the save's own; and DIR/index.json mapping keys to files:
 * {"backend", "tensors": [{"name", "file", "node", "op", "output", "dtype", "dims",
 * "graph_output"}]}. The set replaces the last one saved in DIR as a whole
 * (onnx/save_set.h): index.json always names one whole save, and the last save's files
 * are removed. A name that was not kept is GL_ERR_INPUT naming it, before anything is
 * written. */
gl_status gl_inter_save(const gl_inter_rec *r, const char *dir, const char *const *names,
                        size_t n_names);

/* ---- after two runs, as `graphlab run` does it ----------------------------------------- */

typedef struct gl_inter_finish_options {
    gl_tolerance tol;
    bool all;                 /* every row of the table */
    const char *save_dir;     /* NULL: write nothing */
    const char *const *names; /* what gl_inter_save writes (NULL: every kept tensor) */
    size_t n_names;
} gl_inter_finish_options;

/* The recordings' statuses first (either failed: that error); then, when b is given,
 * the report of b against a to `f`; then a's tensors saved when save_dir is set. */
gl_status gl_inter_finish(const gl_inter_rec *a, const gl_inter_rec *b,
                          const gl_inter_finish_options *o, FILE *f);

#endif

/* fuzz.h — what the libFuzzer targets in tests/fuzz share.
 *
 * Each target is one LLVMFuzzerTestOneInput over the bytes of a model file. Besides the
 * sanitizers (ASan, LSan, UBSan) and libFuzzer's own limits (-timeout, -rss_limit_mb,
 * -malloc_limit_mb), the targets check the contracts a caller relies on and abort when
 * one does not hold, so that libFuzzer saves the input:
 *   - every failure leaves a message (the CLI prints it as its one stderr line);
 *   - a load failure's message starts with the file name (onnx_io.h);
 *   - GL_ERR_INTERNAL never comes back: it means one of our invariants broke (a pass
 *     that left the graph broken, a kernel that set no output, a bad save).
 * See tests/fuzz/README.md for the targets, the seeds and `make fuzz-smoke`.
 */
#ifndef GL_FUZZ_H
#define GL_FUZZ_H

#include "ir/graph.h"
#include "passes/pipeline.h"

#include <stddef.h>
#include <stdint.h>

/* The name the bytes are loaded under; messages must start with it. */
#define FUZZ_MODEL_NAME "fuzz.onnx"

/* The bytes as a model, refused as every command refuses it (gl_session_load: cycles too),
 * or NULL. No folder is given, so external data is refused. */
gl_model *fuzz_load(const uint8_t *data, size_t size);

/* The default pipeline (`--passes all`) with a snapshot per step and the diffs between
 * steps, as the workbench's first job runs them; then the result serialized as
 * `optimize` would save it. Takes `m`. NULL when a pass refused the model (with a
 * message). */
gl_pipeline *fuzz_optimize(gl_model *m);

/* Abort, naming `what`, unless `st` is GL_OK or a failure with a message that is not an
 * internal error. Returns st == GL_OK. */
bool fuzz_check(gl_status st, const char *what);

#endif

/* shared_weights.h — one external-data file that several saved models share: the steps
 * of an export (driver/export.h).
 *
 * An export of efficientnet_b0 wrote each of its 17 steps as a whole .onnx: 17 copies
 * of 20 MB of weights that the steps mostly have in common (340 MB for a ViT). Saved
 * with a gl_shared_weights (gl_save_options.shared_weights), every initializer of at
 * least `threshold` bytes goes to one file beside the models, ONNX external data whose
 * location is the file's base name: a tensor with the same bytes as one already there is
 * not written again, its model points at the same offset. Each model stays a valid ONNX
 * model that any reader (graphlab, ONNX Runtime) loads from that folder.
 *
 * Same bytes are found by a hash of the content and confirmed by reading the stored
 * bytes back: two different tensors are never merged. The file is written through the
 * guarded atomic write (util/safe_write.h), opened on the first tensor (a model without
 * large weights leaves no file) and put in place by gl_shared_weights_commit: commit it
 * before the models that point into it are visible, as gl_model_save does with its own
 * "<OUT>.data".
 */
#ifndef GL_SHARED_WEIGHTS_H
#define GL_SHARED_WEIGHTS_H

#include "util/status.h"

#include <stddef.h>
#include <stdint.h>

typedef struct gl_shared_weights gl_shared_weights;

/* The file DIR/NAME (NAME a plain name: it is the models' "location"), for tensors of
 * `threshold` bytes and more. Nothing is created yet. */
gl_shared_weights *gl_shared_weights_new(const char *dir, const char *name, size_t threshold);

/* The least tensor size (bytes) that goes to the file. */
size_t gl_shared_weights_threshold(const gl_shared_weights *w);
/* The "location" a model's external_data names: the file's base name. */
const char *gl_shared_weights_location(const gl_shared_weights *w);

/* `len` bytes stored (or found stored): *offset is where they start in the file. */
gl_status gl_shared_weights_put(gl_shared_weights *w, const void *data, size_t len,
                                uint64_t *offset);

/* What the file holds: bytes (padding included), distinct tensors stored, and tensors
 * that found their bytes already there. */
typedef struct gl_shared_weights_stats {
    uint64_t bytes;
    size_t stored, reused;
} gl_shared_weights_stats;
gl_shared_weights_stats gl_shared_weights_get_stats(const gl_shared_weights *w);

/* Put the file in place (nothing when no tensor came) and free w. */
gl_status gl_shared_weights_commit(gl_shared_weights *w);
/* Remove the temporary file and free w (NULL: nothing). */
void gl_shared_weights_abort(gl_shared_weights *w);

#endif

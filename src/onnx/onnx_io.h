/* onnx_io.h — protobuf-c <-> IR: models and TensorProto files.
 *
 * Loading never writes the input file. Every failure returns GL_ERR_INPUT (or IO/NOMEM)
 * with a one-line message that starts with the file name and names the node and value
 * when there is one: "m.onnx: node 'conv_3' (Conv): input 'w' is not produced by any
 * node, graph input or initializer". Sizes come from the file only after checking them
 * against what the file can hold, so a hostile file cannot make us allocate without
 * bound.
 */
#ifndef GL_ONNX_IO_H
#define GL_ONNX_IO_H

#include "ir/graph.h"
#include "ir/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gl_load_options {
    bool freeze_inputs;   /* inputs with initializers become constants */
    bool no_mmap;         /* read the model file and external data, never map them */
} gl_load_options;

/* Load a model file. `opts` may be NULL. On failure *out is NULL. */
gl_status gl_model_load(const char *path, const gl_load_options *opts, gl_model **out);
/* Load from memory; `dir` is the base of external data (NULL: none allowed). `name` is
 * used in messages. The bytes are not kept. */
gl_status gl_model_load_buffer(const void *data, size_t len, const char *name,
                               const char *dir, const gl_load_options *opts,
                               gl_model **out);

/* What a save did with external data (gl_save_options.report). */
typedef struct gl_save_report {
    size_t kept;          /* tensors pointed at where they lie, not written */
    uint64_t kept_bytes;
    size_t written;       /* tensors written into "<OUT>.data" */
    uint64_t written_bytes;
    size_t links;         /* input data files linked into the output folder */
    char copied[512];     /* not "": why a file's tensors were copied, not pointed at */
} gl_save_report;

typedef struct gl_save_options {
    /* Write initializers of at least this many bytes as external data in
     * "<OUT>.data" beside the model. Initializers that were loaded from external data
     * (gl_tensor.external) go there too whatever the threshold, so a model too big for
     * one protobuf stays loadable; 0 with no such tensor: everything inline. */
    size_t external_threshold;
    /* An initializer whose bytes are still those loaded from an external-data file
     * (gl_buffer.origin) is not written again: the model points at it in that file.
     * ONNX Runtime refuses locations outside the model's folder, so the file must be in
     * OUT's folder: under its own name when it is there already (the input's folder),
     * else as a hard link "<OUT>.<its name>" made now (no bytes on one file system; the
     * link is the input, which no write replaces or enters: util/safe_write.h). Where no
     * link can be made (another file system) the bytes are copied into "<OUT>.data" and
     * the report says why. false: every weight is written, a folder that works alone
     * (--self-contained). Not with shared_weights. */
    bool keep_unchanged;
    gl_save_report *report; /* not NULL: filled in */
    /* Emit value_info for every value with a known type (default on: DESIGN.md). */
    bool no_value_info;
    /* Not NULL: initializers of its threshold and more (and those loaded from external
     * data) go to this file, which other models share (shared_weights.h), in place of
     * "<OUT>.data"; external_threshold is then not used. */
    struct gl_shared_weights *shared_weights;
} gl_save_options;

/* Save through the guarded atomic write of util/safe_write.h (the external data file
 * first, then the model): never onto a symbolic link or a file read as input, such as
 * the one the model was loaded from. `opts` may be NULL. */
gl_status gl_model_save(const gl_model *m, const char *path, const gl_save_options *opts);
/* Serialize to a malloc'd buffer (inline tensors only). */
gl_status gl_model_serialize(const gl_model *m, uint8_t **data, size_t *len);

/* A serialized onnx.TensorProto file (test_data_set_N/input_K.pb). The tensor's name
 * comes from the proto. */
gl_status gl_tensor_read_pb(const char *path, gl_tensor **out);
gl_status gl_tensor_write_pb(const gl_tensor *t, const char *path);

/* ---- internal: shared by load.c/save.c and the tensor files ---------------------- */
struct Onnx__TensorProto;
/* Decode a TensorProto (any encoding, any dtype) into a tensor. `ctx` names the place
 * for messages ("m.onnx: initializer 'w'"). `dir` is the external-data base (NULL:
 * external data refused). When `take` is true, the proto's large buffers (raw_data,
 * float_data, int64_data, ...) are taken over instead of copied, and cleared in the
 * proto, so the weights exist once in memory. */
gl_status gl_tensor_from_proto(struct Onnx__TensorProto *tp, const char *ctx,
                               const char *dir, bool take, bool no_mmap, gl_tensor **out);
/* Encode into a freshly initialized TensorProto whose buffers alias the tensor's bytes
 * where possible (raw_data points at the tensor): valid while `t` lives. Free with
 * gl_tensor_proto_release(). */
gl_status gl_tensor_to_proto(const gl_tensor *t, struct Onnx__TensorProto *tp);
void gl_tensor_proto_release(struct Onnx__TensorProto *tp);

#endif

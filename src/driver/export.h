/* export.h — the steps of a pipeline as files: what `graphlab export` writes and the
 * workbench's e / E keys write, through the same calls.
 *
 * For each step DIR/NN-PASS.{dot,svg,onnx,diff.txt} (00-input first, with an empty diff),
 * then DIR/decisions.json and DIR/index.html (one page, no network references). The
 * steps' .onnx keep their large weights in one shared DIR/weights.data (a tensor that
 * several steps hold is there once) unless self_contained; each still loads alone. Every
 * file goes through the guarded atomic write (util/safe_write.h), into a temporary folder
 * (gl_temp_dir) that becomes DIR at the end, or whose files are moved into DIR when it
 * exists: a failed, cancelled or interrupted export leaves no half folder. DIR's missing
 * parents are created. One export at a time writes into a folder (DIR/.graphlab.lock).
 *
 * DIR/.graphlab-export.json (util/manifest.h) lists the files the exports wrote there.
 * An export of the pipeline replaces that set: the listed files it does not write again
 * (another model's steps, the .onnx files left out by --no-onnx, a step of a longer
 * pipeline) are removed. A single step (the workbench's `e`) adds its files to the set.
 * Files not listed — a user's, an older graphlab's export — are never removed; only
 * those of the same names as the new files are replaced.
 */
#ifndef GL_EXPORT_H
#define GL_EXPORT_H

#include "driver/driver.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The manifest of an export's folder. */
#define GL_EXPORT_MANIFEST ".graphlab-export.json"

/* The weights file the steps' .onnx share (onnx/shared_weights.h): ONNX external data
 * named by its base name, beside them. Initializers of GL_EXPORT_WEIGHTS_MIN bytes and
 * more go there; smaller ones stay in each step's .onnx, where a reader sees them. */
#define GL_EXPORT_WEIGHTS "weights.data"
#define GL_EXPORT_WEIGHTS_MIN 1024 /* 1 KB: export --help says so */

/* What an export wrote, as gl_export_report_line says it. */
typedef struct gl_export_report {
    uint64_t weights_bytes; /* GL_EXPORT_WEIGHTS's size (0: not written) */
    size_t weights_stored;  /* distinct tensors in it */
    size_t weights_reused;  /* step tensors that found their bytes already in it */
    char weights_name[32];  /* GL_EXPORT_WEIGHTS, or another name when that is an input */
} gl_export_report;

typedef struct gl_export_opts {
    bool no_onnx; /* no NN-PASS.onnx files (they are most of an export's bytes) */
    /* Each step's .onnx with its own weights (the pipeline's export shares one file by
     * default: a whole copy per step was 206-340 MB for a ViT or an EfficientNet). A
     * single step (gl_export_snapshot) is always written whole. */
    bool self_contained;
    gl_export_report *report; /* filled when not NULL */
} gl_export_opts;

/* One line for the user: where the steps' weights are ("the steps' .onnx share
 * weights.data (20.3 MB, 262 tensors; 4196 shared)", "no .onnx files", ...). */
void gl_export_report_line(const gl_export_opts *eo, char *buf, size_t len);

/* DIR/LABEL.{diff.txt,dot,svg,onnx} for model `m`, diffed against and marked against
 * `before` (NULL: no step before, an empty diff). `eo` may be NULL (everything). */
gl_status gl_export_snapshot(const gl_model *m, const gl_model *before, const char *dir,
                             const char *label, const gl_export_opts *eo);
/* Every step of a pipeline that kept its snapshots, DIR/decisions.json and
 * DIR/index.html (`model` names the model in them). `progress` (may be NULL) is called
 * before each step; returning false stops the export with an error, nothing written. */
gl_status gl_export_pipeline(const gl_pipeline *p, const char *model, const char *dir,
                             const gl_export_opts *eo,
                             bool (*progress)(void *ctx, size_t step, size_t n_steps),
                             void *ctx);
/* The pipeline's "decisions" array, every record in id order, closing the object it
 * ends and the document (decisions.json, `optimize --json`). */
struct gl_json;
void gl_export_decisions_json(const gl_pipeline *p, struct gl_json *j);
/* `path` loaded and o->passes run (gl_session_open) with each step written as the
 * pipeline makes it, the models of earlier steps dropped once written; the temporary
 * folder is created once the model has loaded. Returns the first failure of loading or writing; a pass
 * that fails still has the steps before it exported: then GL_OK, and *pass_status is
 * the pass's status (s->pipeline->failure its message). gl_session_close(s) after. */
gl_status gl_export_model(const char *path, const gl_session_opts *o, const char *dir,
                          const gl_export_opts *eo, gl_session *s, gl_status *pass_status);

#endif

/* trace.h — a profile in ONNX Runtime's profiling format, so that Perfetto,
 * chrome://tracing and scripts written for ORT's profiles read ours.
 *
 * A JSON array of Chrome-trace "complete" events ("ph": "X", "ts" and "dur" in whole
 * microseconds from the start of the profile), one per line, as ORT writes them:
 * - "cat": "Session": "model_loading_uri" (when the load time is known),
 *   "session_initialization" (building a backend's plan), and per observed run
 *   "model_run" (the whole gl_exec_run) around "SequentialExecutor::Execute";
 * - "cat": "Node": "<node>_kernel_time" per call of a node, with "args" op_name,
 *   provider ("CPUExecutionProvider" for the reference kernels, "DnnlExecutionProvider"
 *   for oneDNN: the names ORT gives the same two), node_index (the plan entry),
 *   input_type_shape and output_type_shape ([{"float":[1,3,64,64]}, ...]: known types of
 *   present tensors), activation_size, parameter_size and output_size (bytes, as strings).
 * "pid" is the process; "tid" is 1 for the first backend, 2 for the second...: each
 * backend's runs on a track of its own. ORT's memory and thread-pool figures have no
 * counterpart here and are left out.
 */
#ifndef GL_TRACE_H
#define GL_TRACE_H

#include "exec/profile.h"

#include <stdio.h>

/* The events of p (profiled with options.trace) to f. */
void gl_profile_trace_write(const gl_profile *p, FILE *f);
/* ... to the file at `path`, replaced atomically. GL_ERR_IO naming the path. */
gl_status gl_profile_trace_save(const gl_profile *p, const char *path);

#endif

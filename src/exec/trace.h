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
 *
 * The trace is written as the profile runs (gl_profile_options.trace), not kept: a long
 * profile's events would take gigabytes. A node call's args are those of its call in
 * the run that timed it (the types of its last call in that run, for a node that runs
 * more than once a run, as in a Loop body); the events of one run go out after that run,
 * outside its timing.
 */
#ifndef GL_TRACE_H
#define GL_TRACE_H

#include "exec/profile.h"

#include <stdio.h>

typedef struct gl_trace {
    FILE *f;
    long pid;
    size_t written; /* events so far */
} gl_trace;

/* A node call's args. */
typedef struct gl_trace_node {
    const char *name, *op;   /* its row's */
    const char *backend;     /* what ran it: "ref", "dnnl", "body" */
    const gl_profile_type *in, *out;
    size_t n_in, n_out;
} gl_trace_node;

/* Opens the array. */
void gl_trace_begin(gl_trace *t, FILE *f);
/* One event: a Session event (node NULL) or a call of a node (ev->kind
 * GL_PROFILE_EV_NODE, with its args). */
void gl_trace_event(gl_trace *t, const gl_profile_event *ev, const gl_trace_node *node);
/* Closes the array. Whether every write succeeded is the stream's error flag. */
void gl_trace_end(gl_trace *t);

#endif

/* trace.h — a profile in ONNX Runtime's profiling format, so that Perfetto,
 * chrome://tracing and scripts written for ORT's profiles read ours.
 *
 * A JSON array of Chrome-trace events, one per line, as ORT writes them:
 * - "cat": "Session" complete events ("ph": "X"): "model_loading_uri" (when the load time
 *   is known), "session_initialization" (building a backend's plan), and per observed run
 *   "model_run" (the whole gl_exec_run) around "SequentialExecutor::Execute";
 * - "cat": "Node" complete events: "<node>_kernel_time" per call of a node, with "args"
 *   op_name, provider (what ran it: "CPUExecutionProvider" for the reference kernels,
 *   "DnnlExecutionProvider" for oneDNN: the names ORT gives the same two), node_index (the
 *   plan entry), input_type_shape and output_type_shape ([{"float":[1,3,64,64]}, ...]:
 *   known types of present tensors), activation_size, parameter_size and output_size
 *   (bytes, as strings).
 * What ORT leaves out and Perfetto wants (issue 24): "ph": "M" metadata events ("cat":
 * "__metadata", as Chrome writes them) name the process and each track. Every run has a
 * track of its own, "tid" 1 for the first backend, 2 for the second..., named for the run
 * ("ref", "fused (dnnl)"); loading the model is on a track of its own, shown first.
 *
 * "ts" and "dur" are microseconds from the start of the profile with nanoseconds as
 * decimals (ORT writes whole microseconds: a 0.4 us node would last 0, and a slice rounded
 * apart from its parent could end after it). The profile takes every time of one track
 * from one clock that never repeats a value, so a node's slice starts after and ends
 * before the slice of the group or run that holds it, and lasts more than 0. ORT's memory
 * and thread-pool figures have no counterpart here and are left out.
 *
 * The trace is written as the profile runs (gl_profile_options.trace), not kept: a long
 * profile's events would take gigabytes. A node call's args are those of its call in
 * the run that timed it (the types of its last call in that run, for a node that runs
 * more than once a run, as in a Loop body); the events of one run go out after that run,
 * outside its timing: the run's slices first, then its node calls by start.
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

/* The track of loading the model: after the runs' (1 + backend index). */
#define GL_TRACE_LOAD_TID (GL_PROFILE_MAX_BACKENDS + 1)

/* A node call's args. */
typedef struct gl_trace_node {
    const char *name, *op;   /* its row's */
    const char *backend;     /* what ran it: "ref", "dnnl", "body" (its members ran) */
    const char *run_backend; /* the run's backend ("ref", "dnnl"): what ran a "body" */
    const gl_profile_type *in, *out;
    size_t n_in, n_out;
} gl_trace_node;

/* Opens the array, with the process named `process` (what is profiled). */
void gl_trace_begin(gl_trace *t, FILE *f, const char *process);
/* Names track `tid` (1 + a run's backend index, or GL_TRACE_LOAD_TID) `name` and puts it
 * at `order` among the tracks (0 first). */
void gl_trace_track(gl_trace *t, unsigned tid, const char *name, int order);
/* One event: a Session event (node NULL) or a call of a node (ev->kind
 * GL_PROFILE_EV_NODE, with its args). */
void gl_trace_event(gl_trace *t, const gl_profile_event *ev, const gl_trace_node *node);
/* Closes the array. Whether every write succeeded is the stream's error flag. */
void gl_trace_end(gl_trace *t);

#endif

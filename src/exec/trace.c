/* trace.c — profiles as ONNX Runtime profiling JSON (see trace.h). */
#include "exec/trace.h"

#include "util/json.h"

#include <string.h>
#include <unistd.h>

static const char *const session_names[] = {
    [GL_PROFILE_EV_LOAD] = "model_loading_uri",
    [GL_PROFILE_EV_CREATE] = "session_initialization",
    [GL_PROFILE_EV_RUN] = "model_run",
    [GL_PROFILE_EV_EXECUTE] = "SequentialExecutor::Execute",
};

/* ORT's name for what ran a node; a call run as its body ran on the run's backend. */
static const char *provider(const gl_trace_node *n)
{
    const char *backend = n->backend && strcmp(n->backend, "body") == 0 ? n->run_backend
                                                                         : n->backend;
    return backend && strcmp(backend, "dnnl") == 0 ? "DnnlExecutionProvider"
                                                   : "CPUExecutionProvider";
}

static void type_shapes(gl_json *j, const char *key, const gl_profile_type *t, size_t n)
{
    gl_json_array_begin(j, key);
    for (size_t i = 0; i < n; i++) {
        if (!t[i].present || t[i].rank < 0)
            continue;
        gl_json_object_begin(j, NULL);
        gl_json_array_begin(j, gl_dtype_name(t[i].dtype));
        for (int d = 0; d < t[i].rank; d++)
            gl_json_int(j, NULL, t[i].dims[d]);
        gl_json_array_end(j);
        gl_json_object_end(j);
    }
    gl_json_array_end(j);
}

/* Bytes of the present, known tensors among t[0..n) whose `constant` is `weights`. */
static int64_t size_of(const gl_profile_type *t, size_t n, bool weights)
{
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i].present && t[i].constant == weights) {
            int64_t b = gl_profile_bytes(&t[i], 1, NULL, 0);
            total += b > 0 ? b : 0;
        }
    return total;
}

static void size_string(gl_json *j, const char *key, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    gl_json_string(j, key, buf);
}

static void node_args(gl_json *j, const gl_profile_event *ev, const gl_trace_node *n)
{
    char index[32];
    snprintf(index, sizeof(index), "%zu", ev->entry);
    gl_json_object_begin(j, "args");
    gl_json_string(j, "op_name", n->op);
    gl_json_string(j, "provider", provider(n));
    gl_json_string(j, "node_index", index);
    type_shapes(j, "input_type_shape", n->in, n->n_in);
    type_shapes(j, "output_type_shape", n->out, n->n_out);
    size_string(j, "activation_size", size_of(n->in, n->n_in, false));
    size_string(j, "parameter_size", size_of(n->in, n->n_in, true));
    size_string(j, "output_size", size_of(n->out, n->n_out, false));
    gl_json_object_end(j);
}

/* The separator before the next event, one a line. */
static void next_event(gl_trace *t)
{
    if (t->written++)
        fputs(",\n", t->f);
}

/* A metadata event naming (`value`) or ordering (`order`) track `tid` or the process. */
static void metadata(gl_trace *t, unsigned tid, const char *name, const char *value, int order)
{
    next_event(t);
    gl_json j;
    gl_json_init(&j, t->f, false);
    gl_json_object_begin(&j, NULL);
    gl_json_string(&j, "cat", "__metadata");
    gl_json_int(&j, "pid", t->pid);
    gl_json_int(&j, "tid", tid);
    gl_json_int(&j, "ts", 0);
    gl_json_string(&j, "ph", "M");
    gl_json_string(&j, "name", name);
    gl_json_object_begin(&j, "args");
    if (value)
        gl_json_string(&j, "name", value);
    else
        gl_json_int(&j, "sort_index", order);
    gl_json_object_end(&j);
    gl_json_object_end(&j);
}

void gl_trace_begin(gl_trace *t, FILE *f, const char *process)
{
    *t = (gl_trace){.f = f, .pid = (long)getpid()};
    fputs("[\n", f);
    metadata(t, 0, "process_name", process, 0);
}

void gl_trace_track(gl_trace *t, unsigned tid, const char *name, int order)
{
    metadata(t, tid, "thread_name", name, 0);
    metadata(t, tid, "thread_sort_index", NULL, order);
}

void gl_trace_event(gl_trace *t, const gl_profile_event *ev, const gl_trace_node *node)
{
    next_event(t);
    gl_json j;
    gl_json_init(&j, t->f, false);
    gl_json_object_begin(&j, NULL);
    gl_json_string(&j, "cat", node ? "Node" : "Session");
    gl_json_int(&j, "pid", t->pid);
    gl_json_int(&j, "tid", ev->kind == GL_PROFILE_EV_LOAD ? GL_TRACE_LOAD_TID
                                                          : (int64_t)ev->backend + 1);
    gl_json_thousandths(&j, "dur", (int64_t)ev->dur_ns);
    gl_json_thousandths(&j, "ts", (int64_t)ev->ts_ns);
    gl_json_string(&j, "ph", "X");
    if (node) {
        char name[1024];
        snprintf(name, sizeof(name), "%s_kernel_time", node->name);
        gl_json_string(&j, "name", name);
        node_args(&j, ev, node);
    } else {
        gl_json_string(&j, "name", session_names[ev->kind]);
        gl_json_object_begin(&j, "args");
        gl_json_object_end(&j);
    }
    gl_json_object_end(&j);
}

void gl_trace_end(gl_trace *t)
{
    fputs(t->written ? "\n]\n" : "]\n", t->f);
}

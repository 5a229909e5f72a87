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

static const char *provider(const char *backend)
{
    return backend && strcmp(backend, "dnnl") == 0 ? "DnnlExecutionProvider"
                                                   : "CPUExecutionProvider";
}

static int64_t us(uint64_t ns)
{
    return (int64_t)((ns + 500) / 1000);
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
    gl_json_string(j, "provider", provider(n->backend));
    gl_json_string(j, "node_index", index);
    type_shapes(j, "input_type_shape", n->in, n->n_in);
    type_shapes(j, "output_type_shape", n->out, n->n_out);
    size_string(j, "activation_size", size_of(n->in, n->n_in, false));
    size_string(j, "parameter_size", size_of(n->in, n->n_in, true));
    size_string(j, "output_size", size_of(n->out, n->n_out, false));
    gl_json_object_end(j);
}

void gl_trace_begin(gl_trace *t, FILE *f)
{
    *t = (gl_trace){.f = f, .pid = (long)getpid()};
    fputs("[\n", f);
}

void gl_trace_event(gl_trace *t, const gl_profile_event *ev, const gl_trace_node *node)
{
    if (t->written++)
        fputs(",\n", t->f);
    gl_json j;
    gl_json_init(&j, t->f, false);
    gl_json_object_begin(&j, NULL);
    gl_json_string(&j, "cat", node ? "Node" : "Session");
    gl_json_int(&j, "pid", t->pid);
    gl_json_int(&j, "tid", (int64_t)ev->backend + 1);
    gl_json_int(&j, "dur", us(ev->dur_ns));
    gl_json_int(&j, "ts", us(ev->ts_ns));
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

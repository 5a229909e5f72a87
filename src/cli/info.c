/* info.c — `graphlab info [--json] MODEL`: what is in a model file, at a glance. */
#include "cli/cli.h"
#include "driver/model_summary.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/plural.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void json_value(gl_json *j, const gl_value *v)
{
    gl_json_object_begin(j, NULL);
    gl_json_string(j, "name", v->name);
    const gl_type *t = &v->type;
    if (t->kind == GL_TYPE_TENSOR) {
        gl_json_string(j, "dtype", gl_dtype_name(t->dtype));
        if (t->shape.rank == GL_RANK_UNKNOWN) {
            gl_json_null(j, "shape");
        } else {
            gl_json_array_begin(j, "shape");
            for (int d = 0; d < t->shape.rank; d++) {
                const gl_dim *dim = &t->shape.dims[d];
                if (dim->value >= 0)
                    gl_json_int(j, NULL, dim->value);
                else if (dim->sym)
                    gl_json_string(j, NULL, dim->sym);
                else
                    gl_json_null(j, NULL);
            }
            gl_json_array_end(j);
        }
    } else {
        gl_json_string(j, "dtype", t->kind == GL_TYPE_OPAQUE ? "non-tensor" : NULL);
        gl_json_null(j, "shape");
    }
    if (v->init)
        gl_json_bool(j, "has_default", true);
    gl_json_object_end(j);
}

static void print_json(const gl_model *m, const gl_model_summary *s)
{
    gl_json j;
    gl_json_init(&j, stdout, true);
    gl_json_object_begin(&j, NULL);
    gl_json_string(&j, "file", m->path);
    if (s->file_bytes >= 0)
        gl_json_int(&j, "file_bytes", s->file_bytes);
    gl_json_int(&j, "ir_version", m->ir_version);
    gl_json_object_begin(&j, "opsets");
    for (size_t i = 0; i < m->n_opsets; i++)
        gl_json_int(&j, gl_domain_display(m->opsets[i].domain), m->opsets[i].version);
    gl_json_object_end(&j);
    char producer[512];
    gl_model_producer(m, producer, sizeof(producer));
    gl_json_string(&j, "producer", producer);
    gl_json_string(&j, "producer_name", m->producer_name);
    gl_json_string(&j, "producer_version", m->producer_version);
    gl_json_string(&j, "graph_name", m->graph->name);
    gl_json_array_begin(&j, "inputs");
    for (size_t i = 0; i < m->graph->n_inputs; i++)
        json_value(&j, m->graph->inputs[i]);
    gl_json_array_end(&j);
    gl_json_array_begin(&j, "outputs");
    for (size_t i = 0; i < m->graph->n_outputs; i++)
        json_value(&j, m->graph->outputs[i]);
    gl_json_array_end(&j);
    gl_json_int(&j, "node_count", (int64_t)s->node_count);
    gl_json_int(&j, "node_count_total", (int64_t)s->node_count_total);
    gl_json_object_begin(&j, "op_histogram");
    for (size_t i = 0; i < s->n_ops; i++)
        gl_json_int(&j, s->ops[i].op, (int64_t)s->ops[i].count);
    gl_json_object_end(&j);
    gl_json_int(&j, "initializers", (int64_t)s->initializers);
    gl_json_int(&j, "initializer_bytes", (int64_t)s->initializer_bytes);
    gl_json_int(&j, "functions", (int64_t)m->n_functions);
    gl_json_object_begin(&j, "metadata");
    for (size_t i = 0; i < m->n_metadata; i++)
        gl_json_string(&j, m->metadata[i].key, m->metadata[i].value);
    gl_json_object_end(&j);
    gl_json_object_end(&j);
    gl_json_finish(&j);
}

static void print_value_line(const gl_value *v, int width)
{
    char type[256];
    gl_type_format(&v->type, type, sizeof(type));
    printf("  %-*s %s%s\n", width, gl_esc(v->name), gl_esc(type),
           v->init ? "  (has a default)" : "");
}

static int name_width(gl_value *const *vals, size_t n)
{
    int w = 8;
    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(gl_esc(vals[i]->name));
        if (len > w)
            w = len < 40 ? len : 40;
    }
    return w;
}

/* The op column as wide as its longest name, so every count lines up ("graphlab.fused:
 * FusedConvBatchNormalizationRelu" is 46 columns; the value names' width is another
 * column's). */
static int op_width(const gl_model_summary *s)
{
    int w = 8;
    for (size_t i = 0; i < s->n_ops; i++) {
        int len = (int)strlen(gl_esc(s->ops[i].op));
        w = len > w ? len : w;
    }
    return w;
}

static void print_text(const gl_model *m, const gl_model_summary *s)
{
    const gl_graph *g = m->graph;
    char size[32], wsize[32];
    gl_bytes_text((uint64_t)s->file_bytes, size, sizeof(size));
    gl_bytes_text((uint64_t)s->initializer_bytes, wsize, sizeof(wsize));
    printf("model      %s", gl_esc(m->path));
    if (s->file_bytes >= 0)
        printf(" (%s)", size);
    printf("\nir         %lld\nopsets    ", (long long)m->ir_version);
    for (size_t i = 0; i < m->n_opsets; i++)
        printf(" %s %lld%s", gl_esc(gl_domain_display(m->opsets[i].domain)),
               (long long)m->opsets[i].version,
               i + 1 < m->n_opsets ? "," : "");
    char producer[512];
    gl_model_producer(m, producer, sizeof(producer));
    printf("\nproducer   %s\n", *producer ? gl_esc(producer) : "-");
    printf("graph      %s: %zu %s", gl_esc(g->name), s->node_count,
           gl_noun((long long)s->node_count, "node", "nodes"));
    if (s->node_count_total != s->node_count)
        printf(" (%zu with subgraphs)", s->node_count_total);
    printf(", %zu %s (%s)", s->initializers,
           gl_noun((long long)s->initializers, "initializer", "initializers"), wsize);
    if (m->n_functions)
        printf(", %zu %s", m->n_functions,
               gl_noun((long long)m->n_functions, "function", "functions"));
    printf("\ninputs\n");
    int w = name_width(g->inputs, g->n_inputs);
    int wo = name_width(g->outputs, g->n_outputs);
    w = wo > w ? wo : w;
    for (size_t i = 0; i < g->n_inputs; i++)
        print_value_line(g->inputs[i], w);
    printf("outputs\n");
    for (size_t i = 0; i < g->n_outputs; i++)
        print_value_line(g->outputs[i], w);
    printf("ops\n");
    for (size_t i = 0; i < s->n_ops; i++)
        printf("  %-*s %zu\n", op_width(s), gl_esc(s->ops[i].op), s->ops[i].count);
}

static const gl_cli_option own_options[] = {
    {"json", 0, false, NULL,
     "print {ir_version, opsets, producer, inputs, outputs, node_count, op_histogram, "
     "initializer_bytes, ...} instead"},
};

const gl_command gl_command_info = {
    "info", "MODEL",
    "IR version, opsets, producer, inputs/outputs, node count, op histogram, weights",
    "What `graphlab MODEL` prints when stdin or stdout is not a terminal.", 0, own_options,
    GL_ARRAY_LEN(own_options), gl_cmd_info};

static int own_option(void *ctx, size_t which, const char *value)
{
    (void)which; /* the only one: --json */
    (void)value;
    *(bool *)ctx = true;
    return GL_EXIT_OK;
}

int gl_cmd_info(int argc, char **argv)
{
    bool json = false;
    const char *path = NULL;
    gl_session_opts o;
    gl_session_opts_init(&o, "none");
    const gl_cli_spec spec = {&gl_command_info, own_option, &json, &path};
    int first, rc = gl_cli_parse(&spec, argc, argv, &o, &first);
    gl_session_opts_free(&o);
    if (rc != GL_EXIT_OK)
        return rc < 0 ? GL_EXIT_OK : rc;

    gl_model *m;
    gl_status st = gl_session_load(path, NULL, &m);
    if (st != GL_OK)
        return gl_cli_fail(st);
    gl_model_summary s;
    gl_model_summarize(m, &s);
    if (json)
        print_json(m, &s);
    else
        print_text(m, &s);
    gl_model_summary_free(&s);
    gl_model_free(m);
    return GL_EXIT_OK;
}

/* dataset.c — ONNX test data set folders read into tensors (dataset.h). */
#include "onnx/dataset.h"

#include "onnx/onnx_io.h"
#include "util/folder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* K of "PREFIX_K.pb", or -1 when the name is not of that form. */
static long file_index(const char *name, const char *prefix)
{
    size_t pl = strlen(prefix);
    if (strncmp(name, prefix, pl) != 0 || name[pl] != '_')
        return -1;
    const char *p = name + pl + 1;
    char *end = NULL;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    long k = strtol(p, &end, 10);
    if (errno || k < 0 || k > 1000000 || strcmp(end, ".pb") != 0)
        return -1;
    return k;
}

static int compare_longs(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The K's of PREFIX_K.pb files in dir, ascending. */
static gl_status list_files(const char *dir, const char *prefix, long **ks, size_t *n)
{
    *ks = NULL;
    *n = 0;
    gl_names names = {0};
    gl_status st = gl_folder_list(dir, &names);
    size_t cap = 0;
    for (size_t i = 0; i < names.n; i++) {
        long k = file_index(names.items[i], prefix);
        if (k < 0)
            continue;
        GL_GROW(*ks, cap, *n + 1);
        (*ks)[(*n)++] = k;
    }
    gl_names_free(&names);
    if (st != GL_OK)
        return st;
    if (*n)
        qsort(*ks, *n, sizeof(**ks), compare_longs);
    return GL_OK;
}

typedef struct slot_set {
    gl_value *const *values; /* graph inputs or outputs */
    size_t n;
    gl_tensor **tensors;     /* what binds to each */
    const char *what;        /* "input", "output" */
    bool inputs;             /* positions may skip inputs that have a default */
} slot_set;

static bool positional_candidate(const slot_set *s, size_t j, bool all)
{
    return all || !s->values[j]->init;
}

/* The slot for a file: by TensorProto name, else by position k among the candidates. */
static long pick_slot(const slot_set *s, const gl_tensor *t, long k, bool all)
{
    for (size_t j = 0; t->name && *t->name && j < s->n; j++)
        if (!s->tensors[j] && strcmp(s->values[j]->name, t->name) == 0)
            return (long)j;
    long seen = 0;
    for (size_t j = 0; j < s->n; j++) {
        if (!positional_candidate(s, j, all))
            continue;
        if (seen++ == k)
            return s->tensors[j] ? -1 : (long)j;
    }
    return -1;
}

static gl_status bind_files(const char *dir, const char *prefix, slot_set *s)
{
    long *ks = NULL;
    size_t n = 0;
    gl_status st = list_files(dir, prefix, &ks, &n);
    bool all = !s->inputs || n == s->n; /* a file per slot: defaults count */
    for (size_t i = 0; i < n && st == GL_OK; i++) {
        char path[4096];
        int len = snprintf(path, sizeof(path), "%s/%s_%ld.pb", dir, prefix, ks[i]);
        if (len < 0 || (size_t)len >= sizeof(path)) {
            st = gl_fail(GL_ERR_INPUT, "%s: path too long", dir);
            break;
        }
        gl_tensor *t = NULL;
        st = gl_tensor_read_pb(path, &t);
        if (st != GL_OK)
            break;
        long j = pick_slot(s, t, ks[i], all);
        if (j < 0) {
            st = gl_fail(GL_ERR_INPUT, "%s: no graph %s to bind it to (the model has %zu)",
                         path, s->what, s->n);
            gl_tensor_free(t);
            break;
        }
        const gl_type *ty = &s->values[j]->type;
        if (ty->kind == GL_TYPE_TENSOR && ty->dtype == GL_DT_BFLOAT16 && t->dtype == GL_DT_UINT16)
            t->dtype = GL_DT_BFLOAT16; /* onnx 1.12 stores bfloat16 test data as uint16 */
        s->tensors[j] = t;
    }
    free(ks);
    return st;
}

gl_status gl_dataset_load(const gl_graph *g, const char *dir, gl_dataset *d)
{
    *d = (gl_dataset){0};
    d->n_inputs = g->n_inputs;
    d->n_outputs = g->n_outputs;
    d->inputs = gl_xcalloc(g->n_inputs ? g->n_inputs : 1, sizeof(*d->inputs));
    d->expected = gl_xcalloc(g->n_outputs ? g->n_outputs : 1, sizeof(*d->expected));
    slot_set ins = {g->inputs, g->n_inputs, d->inputs, "input", true};
    slot_set outs = {g->outputs, g->n_outputs, d->expected, "output", false};
    gl_status st = bind_files(dir, "input", &ins);
    if (st == GL_OK)
        st = bind_files(dir, "output", &outs);
    if (st != GL_OK)
        gl_dataset_free(d);
    return st;
}

void gl_dataset_free(gl_dataset *d)
{
    for (size_t i = 0; d->inputs && i < d->n_inputs; i++)
        gl_tensor_free(d->inputs[i]);
    for (size_t i = 0; d->expected && i < d->n_outputs; i++)
        gl_tensor_free(d->expected[i]);
    free(d->inputs);
    free(d->expected);
    *d = (gl_dataset){0};
}

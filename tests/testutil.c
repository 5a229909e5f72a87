/* testutil.c — helpers shared by the criterion tests. */
#include "testutil.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GL_TEST_SRCDIR
#define GL_TEST_SRCDIR "."
#endif

const char *tu_src(const char *rel)
{
    static char bufs[8][4096];
    static int next;
    char *b = bufs[next++ % 8];
    const char *root = getenv("GL_SRCDIR");
    snprintf(b, sizeof(bufs[0]), "%s/%s", root && *root ? root : GL_TEST_SRCDIR, rel);
    return b;
}

const char *tu_shared(void)
{
    static char buf[4096];
    const char *env = getenv("GL_SHARED");
    if (env && *env)
        snprintf(buf, sizeof(buf), "%s", env);
    else
        snprintf(buf, sizeof(buf), "%s", tu_src("../shared"));
    struct stat st;
    char probe[4200];
    snprintf(probe, sizeof(probe), "%s/models", buf);
    return stat(probe, &st) == 0 && S_ISDIR(st.st_mode) ? buf : NULL;
}

char *tu_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof(tmpl), "%s/gltest.XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

void tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            tu_rmtree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

bool tu_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

void *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf && len)
        *len = (size_t)n;
    return buf;
}

gl_model *tu_model(int64_t opset)
{
    gl_model *m = gl_model_new();
    m->ir_version = 8;
    gl_model_set_opset(m, "", opset);
    m->graph = gl_graph_new(m, NULL, "test");
    return m;
}

static void set_tensor_type(gl_value *v, gl_dtype dt, int rank, const int64_t *dims)
{
    v->type.kind = GL_TYPE_TENSOR;
    v->type.dtype = dt;
    gl_shape_set_rank(&v->type.shape, rank);
    for (int i = 0; i < rank; i++)
        v->type.shape.dims[i].value = dims[i] >= 0 ? dims[i] : GL_DIM_UNKNOWN;
}

gl_value *tu_input(gl_graph *g, const char *name, gl_dtype dt, int rank, const int64_t *dims)
{
    gl_value *v = gl_add_value(g, name);
    set_tensor_type(v, dt, rank, dims);
    gl_graph_add_input(g, v);
    return v;
}

static gl_value *add_const(gl_graph *g, const char *name, gl_dtype dt, int rank,
                           const int64_t *dims, const void *data)
{
    gl_tensor *t = gl_tensor_new(dt, rank, dims);
    if (t->count)
        memcpy(gl_tensor_make_writable(t), data, (size_t)t->count * gl_dtype_size(dt));
    gl_value *v = gl_add_initializer(g, name, t);
    set_tensor_type(v, dt, rank, dims);
    return v;
}

gl_value *tu_const_f32(gl_graph *g, const char *name, int rank, const int64_t *dims,
                       const float *data)
{
    return add_const(g, name, GL_DT_FLOAT, rank, dims, data);
}

gl_value *tu_const_i64(gl_graph *g, const char *name, int rank, const int64_t *dims,
                       const int64_t *data)
{
    return add_const(g, name, GL_DT_INT64, rank, dims, data);
}

gl_node *tu_node(gl_graph *g, const char *op, const char *name, size_t n_inputs, ...)
{
    gl_value *ins[16] = {0};
    va_list ap;
    va_start(ap, n_inputs);
    for (size_t i = 0; i < n_inputs && i < 16; i++)
        ins[i] = va_arg(ap, gl_value *);
    va_end(ap);
    return gl_add_node(g, op, "", name, ins, n_inputs, 1);
}

void tu_output(gl_graph *g, gl_value *v) { gl_graph_add_output(g, v); }

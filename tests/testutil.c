/* testutil.c — helpers shared by the criterion tests. */
#include "testutil.h"

#include "exec/exec.h"
#include "ops/opkit.h"
#include "ops/ops.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef GL_TEST_SRCDIR
#define GL_TEST_SRCDIR "."
#endif
#ifndef GL_TEST_BUILDDIR
#define GL_TEST_BUILDDIR "."
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

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *tu_shared(void)
{
    static char buf[4096];
    const char *env = getenv("GL_SHARED");
    if (env && *env)
        snprintf(buf, sizeof(buf), "%s", env);
    else
        snprintf(buf, sizeof(buf), "%s", tu_src("../shared"));
    char probe[4200];
    snprintf(probe, sizeof(probe), "%s/models", buf);
    return is_dir(probe) ? buf : NULL;
}

size_t tu_model_corpora(const char *dirs[2])
{
    static char tree[4096], shared[4200];
    size_t n = 0;
    snprintf(tree, sizeof(tree), "%s", tu_src("tests/data/models"));
    dirs[n++] = tree;
    if (tu_shared()) {
        snprintf(shared, sizeof(shared), "%s/models", tu_shared());
        dirs[n++] = shared;
    }
    return n;
}

size_t tu_glob_corpora(const char *rel, glob_t *g)
{
    const char *dirs[2];
    size_t n = tu_model_corpora(dirs);
    for (size_t i = 0; i < n; i++) {
        char pattern[8400];
        snprintf(pattern, sizeof(pattern), "%s/%s", dirs[i], rel);
        /* The first call starts the list; no match leaves g as it was. */
        int flags = g->gl_pathv ? GLOB_APPEND : 0;
        glob(pattern, flags, NULL, g);
    }
    return g->gl_pathc;
}

const char *tu_conformance(void)
{
    static char buf[4200];
    if (tu_shared()) {
        snprintf(buf, sizeof(buf), "%s/conformance/node", tu_shared());
        if (is_dir(buf))
            return buf;
    }
    const char *build = getenv("GL_BUILDDIR");
    snprintf(buf, sizeof(buf), "%s/tests/conformance/node",
             build && *build ? build : GL_TEST_BUILDDIR);
    return is_dir(buf) ? buf : NULL;
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

size_t tu_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

const char *tu_python(void)
{
    const char *p = getenv("GL_PYTHON");
    return p && *p && strcmp(p, "none") != 0 ? p : "/usr/bin/python3";
}

void tu_onnx_cross_check(const char *script, void (*write)(FILE *f), const char *what)
{
    if (access(tu_python(), X_OK) != 0)
        cr_skip_test("no %s", tu_python());
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s %s >&2", tu_python(), tu_src(script));
    FILE *p = popen(cmd, "w");
    cr_assert(p);
    write(p);
    int status = pclose(p);
    cr_assert(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        cr_skip_test("no onnx module for %s", tu_python());
    cr_expect_eq(WEXITSTATUS(status), 0, "%s disagrees with onnx's schemas (the differences "
                 "are above)", what);
}

void tu_expect_error(gl_status st, const char *what, const char *error)
{
    if (!error) {
        cr_expect_eq(st, GL_OK, "%s: %s", what, gl_error_message());
        return;
    }
    cr_expect_eq(st, GL_ERR_INPUT, "%s: accepted", what);
    cr_expect(strstr(gl_error_message(), error), "%s: '%s' does not say '%s'", what,
              gl_error_message(), error);
    cr_expect(!strchr(gl_error_message(), '\n'), "%s: one line", what);
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

gl_tensor *tu_tensor_of(gl_dtype dt, int rank, const int64_t *dims, const void *data)
{
    gl_tensor *t = gl_tensor_new(dt, rank, dims);
    if (t && t->count && data)
        memcpy(gl_tensor_make_writable(t), data, (size_t)t->count * gl_dtype_size(dt));
    return t;
}

gl_tensor *tu_tensor_f32(int rank, const int64_t *dims, const float *data)
{
    return tu_tensor_of(GL_DT_FLOAT, rank, dims, data);
}

gl_tensor *tu_tensor_i64(int rank, const int64_t *dims, const int64_t *data)
{
    return tu_tensor_of(GL_DT_INT64, rank, dims, data);
}

float tu_uniform(uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return (float)(*seed >> 8) / (float)(1u << 23) - 1.0f;
}

gl_tensor *tu_random_f32(int rank, const int64_t *dims, uint32_t *seed)
{
    gl_tensor *t = gl_tensor_new(GL_DT_FLOAT, rank, dims);
    float *p = t && t->count ? gl_tensor_make_writable(t) : NULL;
    for (int64_t i = 0; p && i < t->count; i++)
        p[i] = tu_uniform(seed);
    return t;
}

gl_tensor *tu_with_specials(const gl_tensor *t)
{
    gl_tensor *c = gl_tensor_share(t);
    if (t->dtype != GL_DT_FLOAT || t->count < 4)
        return c;
    float *p = gl_tensor_make_writable(c);
    int64_t n = t->count;
    p[0] = -0.0f;
    p[1] = NAN;
    p[n / 3 > 2 ? n / 3 : 2] = INFINITY;
    p[2 * n / 3 > 3 ? 2 * n / 3 : 3] = -INFINITY;
    return c;
}

gl_status tu_run_kernel(const gl_model *m, const gl_node *n, const gl_tensor *const *in,
                        gl_tensor **out)
{
    const gl_op_def *def = gl_op_for_node(m, n);
    if (!def || !def->kernel)
        return gl_fail(GL_ERR_UNSUPPORTED, "no kernel for %s", n->op_type);
    char where[512];
    gl_node_where(m, n, where, sizeof(where));
    for (size_t i = 0; i < n->n_outputs; i++)
        out[i] = NULL;
    gl_kernel_ctx k = {
        .node = n, .model = m, .opset = gl_model_opset(m, n->domain ? n->domain : ""),
        .where = where, .n_inputs = n->n_inputs, .in = in, .n_outputs = n->n_outputs,
        .out = out,
    };
    return def->kernel(&k);
}

gl_status tu_infer(const gl_model *m, const gl_node *n, gl_type *out_types)
{
    const gl_op_def *def = gl_op_for_node(m, n);
    if (!def || !def->infer)
        return gl_fail(GL_ERR_UNSUPPORTED, "no shape function for %s", n->op_type);
    char where[512];
    gl_node_where(m, n, where, sizeof(where));
    const gl_type *types[64] = {0};
    const gl_tensor *values[64] = {0};
    for (size_t i = 0; i < n->n_inputs && i < 64; i++) {
        if (!n->inputs[i])
            continue;
        types[i] = &n->inputs[i]->type;
        if (gl_value_is_constant(n->inputs[i]))
            values[i] = n->inputs[i]->init;
    }
    for (size_t i = 0; i < n->n_outputs; i++)
        memset(&out_types[i], 0, sizeof(gl_type));
    gl_infer_ctx c = {
        .node = n, .model = m, .opset = gl_model_opset(m, n->domain ? n->domain : ""),
        .where = where, .n_inputs = n->n_inputs, .in_types = types, .in_values = values,
        .n_outputs = n->n_outputs, .out_types = out_types,
    };
    for (size_t i = 0; i < n->n_outputs; i++)
        gl_shape_init_unknown(&out_types[i].shape);
    return def->infer(&c);
}

/* ---- op cases as tables ---------------------------------------------------------- */

void tu_apply_attrs(gl_node *n, const tu_attr *a)
{
    for (; a->name; a++) {
        switch (a->kind) {
        case 'i': gl_node_set_attr_int(n, a->name, a->i); break;
        case 'f': gl_node_set_attr_float(n, a->name, a->f); break;
        case 's': gl_node_set_attr_string(n, a->name, a->s); break;
        case 'I': gl_node_set_attr_ints(n, a->name, a->ints, (size_t)a->n); break;
        case 'F': gl_node_set_attr_floats(n, a->name, a->fl, (size_t)a->n); break;
        }
    }
}

static gl_tensor *make_tensor(const tu_tval *t, const char *ctx)
{
    gl_tensor *x = gl_tensor_new(t->dt, t->rank, t->dims);
    cr_assert(x, "%s: tensor", ctx);
    cr_assert_eq(x->count, t->n, "%s: table gives %d values for %lld elements", ctx, t->n,
                 (long long)x->count);
    if (x->count)
        gl_tensor_make_writable(x);
    for (int i = 0; i < t->n; i++) {
        if (gl_dtype_is_int(t->dt))
            gl_elem_set_i64(x, i, (int64_t)t->v[i]);
        else
            gl_elem_set_f64(x, i, t->v[i]);
    }
    return x;
}

static bool close_enough(double got, double want)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= 1e-5 + 1e-5 * fabs(want);
}

static void expect_tensor(const gl_tensor *got, const tu_tval *want, const char *ctx)
{
    cr_assert(got, "%s: output missing", ctx);
    cr_expect_eq(got->dtype, want->dt, "%s: dtype %s, expected %s", ctx,
                 gl_dtype_name(got->dtype), gl_dtype_name(want->dt));
    cr_assert_eq(got->rank, want->rank, "%s: rank %d, expected %d", ctx, got->rank,
                 want->rank);
    for (int d = 0; d < want->rank; d++)
        cr_assert_eq(got->dims[d], want->dims[d], "%s: dim %d is %lld, expected %lld", ctx, d,
                     (long long)got->dims[d], (long long)want->dims[d]);
    cr_assert_eq(got->count, want->n, "%s: %lld elements, table has %d", ctx,
                 (long long)got->count, want->n);
    for (int i = 0; i < want->n; i++) {
        double g = gl_elem_f64(got, i);
        cr_expect(close_enough(g, want->v[i]), "%s: element %d is %.9g, expected %.9g", ctx,
                  i, g, want->v[i]);
    }
}

/* A case's node: op "Op" is ai.onnx's, "domain.Op" another domain's (imported at
 * version 1); the error message names the op without its domain. */
static gl_node *case_node(gl_model *m, const char *op, const char *name, gl_value *const *vals,
                          int n_in, int n_out)
{
    const char *dot = strrchr(op, '.');
    char domain[64] = "";
    if (dot && (size_t)(dot - op) < sizeof(domain)) {
        memcpy(domain, op, (size_t)(dot - op));
        domain[dot - op] = '\0';
        gl_model_set_opset(m, domain, 1);
        op = dot + 1;
    }
    return gl_add_node(m->graph, op, domain, name, vals, (size_t)n_in, (size_t)n_out);
}

void tu_run_kernel_cases(const tu_kcase *cases, size_t n_cases)
{
    for (size_t ci = 0; ci < n_cases; ci++) {
        const tu_kcase *c = &cases[ci];
        gl_model *m = tu_model(c->opset);
        gl_value *vals[9] = {0};
        gl_tensor *ins[9] = {0}, *outs[3] = {0};
        for (int i = 0; i < c->n_in; i++) {
            if (c->in[i].dt == GL_DT_UNDEFINED)
                continue;
            char nm[16];
            snprintf(nm, sizeof(nm), "in%d", i);
            vals[i] = tu_input(m->graph, nm, c->in[i].dt, c->in[i].rank, c->in[i].dims);
            ins[i] = make_tensor(&c->in[i], c->name);
        }
        gl_node *node = case_node(m, c->op, c->name, vals, c->n_in, c->n_out);
        cr_assert(node, "%s: node", c->name);
        tu_apply_attrs(node, c->attrs);
        gl_error_clear();
        gl_status st = tu_run_kernel(m, node, (const gl_tensor *const *)ins, outs);
        cr_expect_eq(st, c->expect, "%s: status %s, expected %s (%s)", c->name,
                     gl_status_name(st), gl_status_name(c->expect), gl_error_message());
        if (st != GL_OK && c->expect != GL_OK) {
            char where[128];
            snprintf(where, sizeof(where), "node '%s' (%s)", c->name, node->op_type);
            cr_expect(strstr(gl_error_message(), where), "%s: message '%s' does not name "
                      "the node", c->name, gl_error_message());
        }
        for (int o = 0; st == GL_OK && c->expect == GL_OK && o < c->n_out; o++) {
            char ctx[160];
            snprintf(ctx, sizeof(ctx), "%s output %d", c->name, o);
            expect_tensor(outs[o], &c->out[o], ctx);
        }
        for (int i = 0; i < 9; i++)
            gl_tensor_free(ins[i]);
        for (int o = 0; o < 3; o++)
            gl_tensor_free(outs[o]);
        gl_model_free(m);
    }
}

static gl_value *shape_input(gl_graph *g, const tu_tshape *t, int i)
{
    char nm[16];
    snprintf(nm, sizeof(nm), "in%d", i);
    if (t->rank == -2) {
        gl_value *v = gl_add_value(g, nm);
        gl_graph_add_input(g, v);
        return v;
    }
    gl_value *v = t->konst ? tu_const_i64(g, nm, t->rank, t->dims, t->cv)
                           : tu_input(g, nm, t->dt, t->rank, t->dims);
    for (int d = 0; d < t->rank; d++)
        if (t->sym[d])
            gl_dim_set_sym(&v->type.shape.dims[d], t->sym[d]);
    return v;
}

static void expect_type(const gl_type *got, const tu_tshape *want, const char *ctx)
{
    if (want->rank == -2) {
        cr_expect_eq(got->kind, GL_TYPE_NONE, "%s: expected no type", ctx);
        return;
    }
    cr_assert_eq(got->kind, GL_TYPE_TENSOR, "%s: no tensor type inferred", ctx);
    cr_expect_eq(got->dtype, want->dt, "%s: dtype %s, expected %s", ctx,
                 gl_dtype_name(got->dtype), gl_dtype_name(want->dt));
    cr_assert_eq(got->shape.rank, want->rank, "%s: rank %d, expected %d", ctx, got->shape.rank,
                 want->rank);
    for (int d = 0; d < want->rank; d++) {
        const gl_dim *gd = &got->shape.dims[d];
        if (want->sym[d]) {
            cr_expect(gd->sym && !strcmp(gd->sym, want->sym[d]), "%s: dim %d is %s, expected "
                      "symbol %s", ctx, d, gd->sym ? gd->sym : "(no symbol)", want->sym[d]);
        } else {
            cr_expect_eq(gd->value, want->dims[d], "%s: dim %d is %lld, expected %lld", ctx, d,
                         (long long)gd->value, (long long)want->dims[d]);
            cr_expect(!gd->sym || want->dims[d] >= 0, "%s: dim %d has an invented symbol", ctx,
                      d);
        }
    }
}

void tu_run_shape_cases(const tu_scase *cases, size_t n_cases)
{
    for (size_t ci = 0; ci < n_cases; ci++) {
        const tu_scase *c = &cases[ci];
        gl_model *m = tu_model(c->opset);
        gl_value *vals[9] = {0};
        for (int i = 0; i < c->n_in; i++)
            if (c->in[i].dt != GL_DT_UNDEFINED || c->in[i].rank == -2)
                vals[i] = shape_input(m->graph, &c->in[i], i);
        gl_node *node = case_node(m, c->op, c->name, vals, c->n_in, c->n_out);
        tu_apply_attrs(node, c->attrs);
        gl_type types[3];
        gl_error_clear();
        gl_status st = tu_infer(m, node, types);
        cr_expect_eq(st, c->expect, "%s: status %s, expected %s (%s)", c->name,
                     gl_status_name(st), gl_status_name(c->expect), gl_error_message());
        if (st != GL_OK && c->expect != GL_OK)
            cr_expect(strstr(gl_error_message(), c->name), "%s: message '%s' does not name "
                      "the node", c->name, gl_error_message());
        for (int o = 0; o < c->n_out; o++) {
            char ctx[160];
            snprintf(ctx, sizeof(ctx), "%s output %d", c->name, o);
            if (st == GL_OK && c->expect == GL_OK)
                expect_type(&types[o], &c->out[o], ctx);
            gl_type_free(&types[o]);
        }
        gl_model_free(m);
    }
}

/* ---- plans ------------------------------------------------------------------------------ */

const char *tu_layout_name(char p)
{
    return p == 'p' ? "plain" : p == 'n' ? "nhwc" : "blocked";
}

gl_exec *tu_exec_run(const gl_model *m, const char *backend, const char *layout,
                     gl_tensor *const *in, size_t n_in, gl_tensor **out, size_t n_out,
                     const char *what)
{
    gl_exec_options o = {.backend = backend, .layout = layout};
    gl_exec *e = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &e), GL_OK, "%s: %s plan: %s", what, backend,
                 gl_error_message());
    gl_status st = gl_exec_run(e, (const gl_tensor *const *)in, n_in, out, n_out);
    cr_assert_eq(st, GL_OK, "%s: %s run: %s", what, backend, gl_error_message());
    return e;
}

void tu_exec_rerun_cached(gl_exec *e, const gl_tensor *const *in, size_t n_in, gl_tensor **out,
                          size_t n_out, const char *what)
{
    cr_assert_eq(gl_exec_run(e, in, n_in, out, n_out), GL_OK, "%s: second run: %s", what,
                 gl_error_message());
    gl_exec_stats st;
    gl_exec_get_stats(e, &st);
    cr_expect(st.builds == 0 && st.const_reorders == 0,
              "%s: the second run built %zu primitives, reordered %zu constants", what,
              st.builds, st.const_reorders);
}

const gl_plan_entry *tu_plan_entry(const gl_exec *e, const char *name, int depth)
{
    for (size_t i = 0; i < gl_exec_plan_count(e); i++) {
        const gl_plan_entry *en = gl_exec_plan_at(e, i);
        if ((depth < 0 || en->depth == depth) && en->node->name &&
            strcmp(en->node->name, name) == 0)
            return en;
    }
    return NULL;
}

void tu_fusion_open(tu_fusion_pair *p, const char *rel)
{
    gl_session_opts_init(&p->so, "all");
    const char *path = tu_src(rel);
    cr_assert_eq(gl_session_open(path, &p->so, &p->fused), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_session_open_unfused(path, &p->so, &p->unfused), GL_OK, "%s",
                 gl_error_message());
    cr_assert(gl_session_fuses(&p->so));
    cr_assert_eq(gl_session_inputs(p->fused.model, &p->so, &p->d), GL_OK, "%s",
                 gl_error_message());
}

void tu_fusion_close(tu_fusion_pair *p)
{
    gl_dataset_free(&p->d);
    gl_session_close(&p->unfused);
    gl_session_close(&p->fused);
    gl_session_opts_free(&p->so);
}

gl_dtype tu_dtype_named(const char *name, size_t len)
{
    for (int dt = 1; dt < GL_DT_COUNT; dt++)
        if (strlen(gl_dtype_name((gl_dtype)dt)) == len &&
            strncmp(gl_dtype_name((gl_dtype)dt), name, len) == 0)
            return (gl_dtype)dt;
    cr_assert_fail("unknown dtype in '%s'", name);
    return GL_DT_UNDEFINED;
}

void tu_parse_type(const char *text, gl_type *t)
{
    memset(t, 0, sizeof(*t));
    gl_shape_init_unknown(&t->shape);
    if (strcmp(text, "?") == 0)
        return;
    t->kind = GL_TYPE_TENSOR;
    const char *br = strchr(text, '[');
    t->dtype = tu_dtype_named(text, br ? (size_t)(br - text) : strlen(text));
    if (!br || strcmp(br, "[?]") == 0)
        return;
    int rank = 0;
    char dims[GL_MAX_RANK][32];
    for (const char *p = br + 1; *p && *p != ']' && rank < GL_MAX_RANK;) {
        size_t n = strcspn(p, ",]");
        snprintf(dims[rank++], sizeof(dims[0]), "%.*s", (int)n, p);
        p += n + (p[n] == ',');
    }
    gl_shape_set_rank(&t->shape, rank);
    for (int d = 0; d < rank; d++) {
        if ((dims[d][0] >= '0' && dims[d][0] <= '9') || dims[d][0] == '-')
            t->shape.dims[d].value = strtoll(dims[d], NULL, 10);
        else if (strcmp(dims[d], "?") != 0)
            gl_dim_set_sym(&t->shape.dims[d], dims[d]);
    }
}

/* testutil.c — helpers shared by the criterion tests. */
#include "testutil.h"

#include "exec/compare.h"
#include "exec/exec.h"
#include "ops/opkit.h"
#include "ops/ops.h"

#include <criterion/criterion.h>
#include <oneapi/dnnl/dnnl.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
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

gl_value *tu_const_tensor(gl_graph *g, const char *name, gl_tensor *t)
{
    gl_value *v = gl_add_initializer(g, name, t);
    set_tensor_type(v, t->dtype, t->rank, t->dims);
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

/* ---- attributes of table rows -------------------------------------------------------- */

/* Hand an attribute built here to the node (which owns it from then on). */
static void take_attr(gl_node *n, gl_attr *a, const char *name)
{
    a->name = strdup(name);
    gl_node_take_attr(n, a);
}

static void set_strings_attr(gl_node *n, const char *name, const char *const *strs, int count)
{
    gl_attr a = {.type = GL_ATTR_STRINGS, .n = (size_t)count};
    a.strings = calloc(count ? (size_t)count : 1, sizeof(gl_bytes));
    cr_assert(a.strings);
    for (int i = 0; i < count; i++) {
        a.strings[i].len = strlen(strs[i]);
        a.strings[i].data = (uint8_t *)strdup(strs[i]);
    }
    take_attr(n, &a, name);
}

void tu_apply_attrs(gl_node *n, const tu_attr *a)
{
    for (; a->name; a++) {
        switch (a->kind) {
        case 'i': gl_node_set_attr_int(n, a->name, a->i); break;
        case 'f': gl_node_set_attr_float(n, a->name, a->f); break;
        case 's': gl_node_set_attr_string(n, a->name, a->s); break;
        case 'I': gl_node_set_attr_ints(n, a->name, a->ints, (size_t)a->n); break;
        case 'F': gl_node_set_attr_floats(n, a->name, a->fl, (size_t)a->n); break;
        case 'S': set_strings_attr(n, a->name, a->strs, a->n); break;
        case 't': take_attr(n, &(gl_attr){.type = GL_ATTR_TENSOR, .t = tu_parse_tensor(a->s)},
                            a->name);
            break;
        case 'p': take_attr(n, &(gl_attr){.type = GL_ATTR_SPARSE_TENSOR}, a->name); break;
        default: cr_assert_fail("attribute '%s': no kind '%c'", a->name, a->kind);
        }
    }
}

/* ---- tensors of table rows ------------------------------------------------------------ */

/* Store text item `item` (len bytes) as element i of t. */
static void set_text_element(gl_tensor *t, int64_t i, const char *item, size_t len,
                             const char *text)
{
    if (t->dtype == GL_DT_STRING) {
        gl_bytes *b = (gl_bytes *)t->buf->data + i;
        b->data = malloc(len + 1);
        cr_assert(b->data);
        memcpy(b->data, item, len);
        b->data[len] = 0;
        b->len = len;
        return;
    }
    char tok[64] = {0}, *end = NULL;
    cr_assert(len < sizeof(tok), "'%s': value %lld is too long", text, (long long)i);
    memcpy(tok, item, len);
    errno = 0;
    bool fits = true;
    if (gl_dtype_is_float(t->dtype)) {
        gl_elem_set_f64(t, i, strtod(tok, &end));
    } else if (t->dtype == GL_DT_UINT64) {
        ((uint64_t *)t->buf->data)[i] = strtoull(tok, &end, 10);
        fits = tok[0] != '-';
    } else {
        int64_t v = strtoll(tok, &end, 10);
        gl_elem_set_i64(t, i, v);
        fits = gl_elem_i64(t, i) == v; /* 300 is no uint8 */
    }
    cr_assert(len && *end == '\0' && errno == 0 && fits, "'%s': value %lld ('%s') is no %s",
              text, (long long)i, tok, gl_dtype_name(t->dtype));
}

gl_tensor *tu_parse_tensor(const char *text)
{
    const char *colon = strchr(text, ':');
    char head[128];
    size_t head_len = colon ? (size_t)(colon - text) : strlen(text);
    cr_assert(head_len < sizeof(head), "tensor '%s': dtype and dims too long", text);
    memcpy(head, text, head_len);
    head[head_len] = '\0';
    gl_type ty;
    tu_parse_type(head, &ty);
    cr_assert(ty.kind == GL_TYPE_TENSOR && ty.shape.rank >= 0, "tensor '%s' has no dims", text);
    int64_t dims[GL_MAX_RANK];
    for (int d = 0; d < ty.shape.rank; d++) {
        dims[d] = ty.shape.dims[d].value;
        cr_assert(dims[d] >= 0 && !ty.shape.dims[d].sym, "tensor '%s': dim %d is not a number",
                  text, d);
    }
    gl_tensor *t = gl_tensor_new(ty.dtype, ty.shape.rank, dims);
    gl_type_free(&ty);
    cr_assert(t, "tensor '%s': %s", text, gl_error_message());
    if (!colon)
        return t;
    int64_t i = 0;
    for (const char *p = colon + 1;; i++) {
        size_t len = strcspn(p, ",");
        cr_assert(i < t->count, "tensor '%s' has more values than its %lld elements", text,
                  (long long)t->count);
        set_text_element(t, i, p, len, text);
        if (!p[len])
            break;
        p += len + 1;
    }
    cr_assert_eq(i + 1, t->count, "tensor '%s' has %lld values for %lld elements", text,
                 (long long)(i + 1), (long long)t->count);
    return t;
}

static bool tval_given(const tu_tval *t) { return t->dt != GL_DT_UNDEFINED || t->text; }

/* The tensor a row spells. A value the dtype cannot hold as written (2.5 or 300 as a
 * uint8, 2 as a bool) is a mistake in the table: it would be checked as something else. */
static gl_tensor *tval_tensor(const tu_tval *t, const char *ctx)
{
    if (t->text)
        return tu_parse_tensor(t->text);
    cr_assert(t->dt != GL_DT_STRING || t->n <= 0, "%s: strings are written as text (TX)", ctx);
    gl_tensor *x = gl_tensor_new(t->dt, t->rank, t->dims);
    cr_assert(x, "%s: tensor: %s", ctx, gl_error_message());
    if (t->n == TU_ZEROS)
        return x;
    cr_assert_eq(x->count, t->n, "%s: the row gives %d values for %lld elements", ctx, t->n,
                 (long long)x->count);
    for (int i = 0; i < t->n; i++) {
        gl_elem_set_f64(x, i, t->v[i]);
        cr_assert(gl_dtype_is_float(t->dt) || gl_elem_f64(x, i) == t->v[i],
                  "%s: value %d (%.17g) is no %s", ctx, i, t->v[i], gl_dtype_name(t->dt));
    }
    return x;
}

/* "float[2,3]:1,2,..." (the first 48 values) into buf, for messages. */
static const char *format_tensor(const gl_tensor *t, char *buf, size_t len)
{
    if (!t) {
        snprintf(buf, len, "(none)");
        return buf;
    }
    gl_format_type(t->dtype, t->rank, t->dims, buf, len);
    size_t pos = strlen(buf);
    pos += (size_t)snprintf(buf + pos, len - pos, ":");
    for (int64_t i = 0; i < t->count && i < 48 && pos < len; i++) {
        const char *sep = i ? "," : "";
        if (t->dtype == GL_DT_STRING) {
            const gl_bytes *b = (const gl_bytes *)t->buf->data + i;
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%.*s", sep, (int)b->len,
                                    b->data ? (const char *)b->data : "");
        } else if (t->dtype == GL_DT_UINT64) {
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%llu", sep,
                                    (unsigned long long)((const uint64_t *)t->buf->data)[i]);
        } else if (gl_dtype_is_float(t->dtype)) {
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%.9g", sep, gl_elem_f64(t, i));
        } else {
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", sep,
                                    (long long)gl_elem_i64(t, i));
        }
    }
    return buf;
}

/* ---- comparing a kernel's outputs with a row ------------------------------------------- */

const tu_tol tu_tol_default = {.abs = 1e-5, .rel = 1e-5, .rel_half = 1e-5, .rel_double = 1e-5};
const tu_tol tu_tol_exact = {.exact = true};

static bool same_element(const gl_tensor *a, const gl_tensor *b, int64_t i)
{
    if (a->dtype == GL_DT_STRING) {
        const gl_bytes *x = (const gl_bytes *)a->buf->data + i;
        const gl_bytes *y = (const gl_bytes *)b->buf->data + i;
        return x->len == y->len && (!x->len || memcmp(x->data, y->data, x->len) == 0);
    }
    size_t size = gl_dtype_size(a->dtype);
    return memcmp((const char *)a->buf->data + (size_t)i * size,
                  (const char *)b->buf->data + (size_t)i * size, size) == 0;
}

static bool within(double got, double want, gl_dtype dt, const tu_tol *tol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    double rel = dt == GL_DT_DOUBLE                                ? tol->rel_double
                 : dt == GL_DT_FLOAT16 || dt == GL_DT_BFLOAT16 ? tol->rel_half
                                                                : tol->rel;
    return fabs(got - want) <= tol->abs + rel * fabs(want);
}

/* Element i of `got` against the row: floats near the value the row wrote (not its
 * rounding to the dtype), anything else, or anything under tu_tol_exact, as stored. */
static bool element_matches(const gl_tensor *got, const gl_tensor *want, const tu_tval *row,
                            int64_t i, const tu_tol *tol)
{
    if (tol->exact || !gl_dtype_is_float(got->dtype))
        return same_element(got, want, i);
    double w = row->v && row->n != TU_ZEROS ? row->v[i] : gl_elem_f64(want, i);
    return within(gl_elem_f64(got, i), w, got->dtype, tol);
}

static bool same_type(const gl_tensor *a, const gl_tensor *b)
{
    return a->dtype == b->dtype && a->rank == b->rank &&
           memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* Output `o` of case `name` against the row; false (and a failed expectation) when it
 * differs. */
static bool output_matches(const char *name, int o, const gl_tensor *got, const tu_tval *row,
                           const tu_tol *tol)
{
    char ctx[200], a[1024], b[1024];
    snprintf(ctx, sizeof(ctx), "%s output %d", name, o);
    cr_assert(tval_given(row), "%s: the row does not say what it must be", ctx);
    gl_tensor *want = tval_tensor(row, ctx);
    bool ok = got && same_type(got, want);
    if (!ok)
        cr_expect_fail("%s is %s, expected %s", ctx, format_tensor(got, a, sizeof(a)),
                       format_tensor(want, b, sizeof(b)));
    int64_t first_bad = -1, bad = 0;
    for (int64_t i = 0; ok && i < want->count; i++)
        if (!element_matches(got, want, row, i, tol) && bad++ == 0)
            first_bad = i;
    if (bad) {
        double w = row->v && row->n != TU_ZEROS ? row->v[first_bad]
                                                 : gl_elem_f64(want, first_bad);
        cr_expect_fail("%s: element %lld is %.9g, expected %.9g (%lld elements differ): %s",
                       ctx, (long long)first_bad, gl_elem_f64(got, first_bad), w,
                       (long long)bad, format_tensor(got, a, sizeof(a)));
    }
    gl_tensor_free(want);
    return ok && !bad;
}

/* The shape function, run on the row's inputs as constants, must infer types that fit
 * what the kernel made (a dim or rank it leaves unknown fits anything). */
static void expect_inferred_types_fit(const char *name, const gl_model *m, const gl_node *n,
                                      gl_tensor *const *out)
{
    gl_type types[TU_MAX_OUT];
    gl_status st = tu_infer(m, n, types);
    cr_expect_eq(st, GL_OK, "%s: the shape function failed: %s", name, gl_error_message());
    for (size_t o = 0; st == GL_OK && o < n->n_outputs; o++) {
        const gl_type *t = &types[o];
        bool ok = t->kind == GL_TYPE_TENSOR && t->dtype == out[o]->dtype;
        if (ok && t->shape.rank != GL_RANK_UNKNOWN) {
            ok = t->shape.rank == out[o]->rank;
            for (int d = 0; ok && d < t->shape.rank; d++)
                ok = t->shape.dims[d].value < 0 || t->shape.dims[d].value == out[o]->dims[d];
        }
        char tb[256], kb[1024];
        gl_type_format(t, tb, sizeof(tb));
        cr_expect(ok, "%s: output %zu inferred %s, the kernel made %s", name, o, tb,
                  format_tensor(out[o], kb, sizeof(kb)));
    }
    for (size_t o = 0; st == GL_OK && o < n->n_outputs; o++)
        gl_type_free(&types[o]);
}

/* ---- running kernel cases -------------------------------------------------------------- */

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

/* A row lists no more tensors than it says it has (a mistake would go unnoticed). */
static void check_row(const tu_kcase *c)
{
    cr_assert(c->n_in >= 0 && c->n_in <= TU_MAX_IN && c->n_out >= 1 && c->n_out <= TU_MAX_OUT,
              "%s: %d inputs, %d outputs", c->name, c->n_in, c->n_out);
    for (int i = c->n_in; i < TU_MAX_IN; i++)
        cr_assert(!tval_given(&c->in[i]), "%s: input %d listed past n_in %d", c->name, i,
                  c->n_in);
    for (int o = c->n_out; o < TU_MAX_OUT; o++)
        cr_assert(!tval_given(&c->out[o]), "%s: output %d listed past n_out %d", c->name, o,
                  c->n_out);
    cr_assert(!c->attrs[GL_ARRAY_LEN(c->attrs) - 1].name, "%s: more attributes than a row "
              "holds (the list ends with an empty entry)", c->name);
}

static void expect_failure(const tu_kcase *c, const gl_node *node, gl_status st)
{
    const char *msg = gl_error_message();
    char where[256];
    snprintf(where, sizeof(where), "<model>: node '%s' (%s)", c->name, node->op_type);
    cr_expect_eq(st, c->expect, "%s: status %s, expected %s (%s)", c->name, gl_status_name(st),
                 gl_status_name(c->expect), msg);
    cr_expect(strncmp(msg, where, strlen(where)) == 0, "%s: message '%s' does not start with "
              "'%s'", c->name, msg, where);
    cr_expect(!c->error || strstr(msg, c->error), "%s: message '%s' does not say '%s'",
              c->name, msg, c->error);
    cr_expect(!strchr(msg, '\n'), "%s: message '%s' is not one line", c->name, msg);
}

static void run_kernel_case(const tu_kcase *c, const tu_tol *tol)
{
    if (getenv("TU_TRACE"))
        fprintf(stderr, "kernel case: %s\n", c->name);
    check_row(c);
    gl_model *m = tu_model(c->opset);
    gl_value *vals[TU_MAX_IN] = {0};
    const gl_tensor *ins[TU_MAX_IN] = {0};
    for (int i = 0; i < c->n_in; i++) {
        if (!tval_given(&c->in[i]))
            continue; /* omitted */
        char nm[16];
        snprintf(nm, sizeof(nm), "in%d", i);
        gl_tensor *t = tval_tensor(&c->in[i], c->name);
        vals[i] = gl_add_initializer(m->graph, nm, t);
        set_tensor_type(vals[i], t->dtype, t->rank, t->dims);
        ins[i] = t;
    }
    gl_node *node = case_node(m, c->op, c->name, vals, c->n_in, c->n_out);
    cr_assert(node, "%s: node", c->name);
    tu_apply_attrs(node, c->attrs);
    gl_tensor *outs[TU_MAX_OUT] = {0};
    gl_error_clear();
    gl_status st = tu_run_kernel(m, node, ins, outs);
    if (c->expect != GL_OK) {
        expect_failure(c, node, st);
    } else if (st != GL_OK) {
        cr_expect_fail("%s: status %s: %s", c->name, gl_status_name(st), gl_error_message());
    } else {
        bool all = true;
        for (int o = 0; o < c->n_out; o++)
            all &= output_matches(c->name, o, outs[o], &c->out[o], tol);
        if (all)
            expect_inferred_types_fit(c->name, m, node, outs);
    }
    for (int o = 0; o < TU_MAX_OUT; o++)
        gl_tensor_free(outs[o]);
    gl_model_free(m);
}

void tu_run_kernel_cases_within(const tu_kcase *cases, size_t n_cases, const tu_tol *tol)
{
    for (size_t i = 0; i < n_cases; i++)
        run_kernel_case(&cases[i], tol);
}

void tu_run_kernel_cases(const tu_kcase *cases, size_t n_cases)
{
    tu_run_kernel_cases_within(cases, n_cases, &tu_tol_default);
}

/* ---- shape cases ------------------------------------------------------------------------ */

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

const char *const tu_layouts[4] = {NULL, "plain", "nhwc", "blocked"};

void tu_layout_what(char *buf, size_t len, const char *name, const char *layout)
{
    snprintf(buf, len, "%s (--layout %s)", name, layout ? layout : "auto");
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

void tu_expect_close(const gl_tensor *got, const gl_tensor *want, double rtol, double atol,
                     const char *what)
{
    gl_compare r;
    char line[256];
    gl_compare_tensors(got, want, rtol, atol, &r);
    gl_compare_format(&r, line, sizeof(line));
    cr_expect(r.ok, "%s: dnnl vs ref: %s", what, line);
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

bool tu_cpu_has_vnni(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx512_core_vnni) == dnnl_cpu_isa_avx512_core_vnni ||
           (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
}

bool tu_cpu_has_avx512(void)
{
    return (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}

void tu_omp_threads(int n)
{
    void (*set_threads)(int) = NULL;
    *(void **)&set_threads = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    cr_assert_not_null(set_threads, "libgomp is not loaded");
    set_threads(n);
}

gl_pipeline *tu_passes(gl_model *m, const char *list, const char *what)
{
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    cr_assert_eq(gl_pass_list_parse(list, &plan, &n_plan), GL_OK, "%s: %s", what, list);
    gl_settings s = {0};
    gl_pipeline *p = NULL;
    gl_status st = gl_pipeline_run(m, plan, n_plan, &s, GL_PIPELINE_KEEP_SNAPSHOTS, &p);
    free(plan);
    cr_assert_eq(st, GL_OK, "%s: %s", what, gl_error_message());
    return p;
}

/* graphnote.c — the one-line graph notation of graphnote.h: parsing, seeded inputs,
 * running and comparing. */
#include "graphnote.h"
#include "util/hash.h"

#include "exec/compare.h"
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing ---------------------------------------------------------------------------- */

#define MAX_DIMS GN_MAX_DIMS
#define MAX_VALUES GN_MAX_VALUES
#define MAX_PARTS 64

static const struct {
    const char *name;
    gl_dtype dt;
    double lo, hi;
} dtype_table[] = {
    {"f32", GL_DT_FLOAT, 0, 1},  {"f32s", GL_DT_FLOAT, -1, 1}, {"i64", GL_DT_INT64, -1, 5},
    {"i32", GL_DT_INT32, -1, 5}, {"i8", GL_DT_INT8, -128, 127}, {"u8", GL_DT_UINT8, 0, 255},
    {"u32", GL_DT_UINT32, 0, 5}, {"bool", GL_DT_BOOL, 0, 1},    {"f32w", GL_DT_FLOAT, -4, 4},
    {"f64", GL_DT_DOUBLE, -1, 1},
};

/* A parsed DT[dims] (= values). */
typedef struct typespec {
    gl_dtype dt;
    double lo, hi;
    bool no_shape;
    int rank;
    int64_t declared[MAX_DIMS]; /* -1: unknown */
    char sym[MAX_DIMS][16];     /* a declared symbol ("N"), else "" */
    int64_t run[MAX_DIMS];
    bool has_values, random;
    double values[MAX_VALUES];
    int n_values;
} typespec;

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

int gn_split(char *s, char sep, char **parts, int max)
{
    int n = 0;
    for (;;) {
        char *next = strchr(s, sep);
        if (next)
            *next = '\0';
        if (n < max)
            parts[n++] = trim(s);
        if (!next)
            return n;
        s = next + 1;
    }
}

static bool fail(gn_graph *b, const char *fmt, const char *what)
{
    snprintf(b->err, sizeof(b->err), fmt, what);
    return false;
}

static bool parse_values(gn_graph *b, char *s, typespec *t)
{
    s = trim(s);
    t->has_values = true;
    if (!strcmp(s, "rand")) {
        t->random = true;
        return true;
    }
    if (!*s)
        return true; /* an empty tensor */
    char *parts[MAX_PARTS];
    int n = gn_split(s, ',', parts, MAX_PARTS);
    if (n > MAX_VALUES)
        return fail(b, "too many values in '%s'", s);
    for (int i = 0; i < n; i++) {
        char *end;
        t->values[i] = strtod(parts[i], &end);
        if (end == parts[i] || *end)
            return fail(b, "bad value '%s'", parts[i]);
    }
    t->n_values = n;
    return true;
}

/* "f32[4,?6,2]", "i64?[4] = 1,2,3,4", "f32[] = 2.3" */
static bool parse_type(gn_graph *b, char *s, typespec *t)
{
    memset(t, 0, sizeof(*t));
    char *dims_end = strchr(s, ']'); /* a dim may hold '=' too (N=2) */
    char *eq = strchr(dims_end ? dims_end : s, '=');
    if (eq) {
        *eq = '\0';
        if (!parse_values(b, eq + 1, t))
            return false;
    }
    s = trim(s);
    size_t len = strcspn(s, "?[");
    size_t k = 0;
    while (k < GL_ARRAY_LEN(dtype_table) &&
           (strlen(dtype_table[k].name) != len || strncmp(dtype_table[k].name, s, len)))
        k++;
    if (k == GL_ARRAY_LEN(dtype_table))
        return fail(b, "unknown dtype in '%s'", s);
    t->dt = dtype_table[k].dt;
    t->lo = dtype_table[k].lo;
    t->hi = dtype_table[k].hi;
    s += len;
    if (*s == '?') {
        t->no_shape = true;
        s++;
    }
    char *close = strchr(s, ']');
    if (*s != '[' || !close)
        return fail(b, "expected [dims] in '%s'", s);
    *close = '\0';
    s = trim(s + 1);
    if (!*s)
        return true; /* a scalar */
    char *parts[MAX_DIMS + 1];
    int n = gn_split(s, ',', parts, MAX_DIMS + 1);
    if (n > MAX_DIMS)
        return fail(b, "too many dims in '%s'", s);
    for (int i = 0; i < n; i++) {
        const char *d = parts[i];
        size_t sym = strspn(d, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_");
        if (sym && (d[sym] != '=' || sym >= sizeof(t->sym[i])))
            return fail(b, "bad dim '%s' (a symbol needs =N: declared N, fed N)", d);
        snprintf(t->sym[i], sizeof(t->sym[i]), "%.*s", (int)sym, d);
        bool unknown = *d == '?' || sym;
        const char *num = sym ? d + sym + 1 : d + unknown;
        char *end;
        long long v = strtoll(num, &end, 10);
        if (end == num || *end || v < 0)
            return fail(b, "bad dim '%s' (inputs need ?N: declared unknown, fed N)", d);
        t->declared[i] = unknown ? -1 : v;
        t->run[i] = v;
    }
    t->rank = n;
    return true;
}

static void set_tensor_type(gl_value *v, const typespec *t)
{
    v->type.kind = GL_TYPE_TENSOR;
    v->type.dtype = t->dt;
    if (t->no_shape)
        return;
    gl_shape_set_rank(&v->type.shape, t->rank);
    for (int i = 0; i < t->rank; i++) {
        v->type.shape.dims[i].value = t->declared[i] >= 0 ? t->declared[i] : GL_DIM_UNKNOWN;
        if (t->sym[i][0])
            gl_dim_set_sym(&v->type.shape.dims[i], t->sym[i]);
    }
}

/* ---- seeded values ------------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ull;
}

static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) / 9007199254740992.0; }

static uint64_t seed_of(const char *name) { return gl_hash_bytes(name, strlen(name)) | 1; }

static void put(void *data, gl_dtype dt, int64_t i, double v)
{
    switch (dt) {
    case GL_DT_FLOAT: ((float *)data)[i] = (float)v; break;
    case GL_DT_DOUBLE: ((double *)data)[i] = v; break;
    case GL_DT_INT64: ((int64_t *)data)[i] = (int64_t)v; break;
    case GL_DT_INT32: ((int32_t *)data)[i] = (int32_t)v; break;
    case GL_DT_INT8: ((int8_t *)data)[i] = (int8_t)v; break;
    case GL_DT_UINT8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case GL_DT_UINT32: ((uint32_t *)data)[i] = (uint32_t)v; break;
    case GL_DT_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    default: break;
    }
}

/* A tensor of the given values, or random ones in [lo, hi] (integers: whole numbers). */
static gl_tensor *make_tensor(gl_dtype dt, int rank, const int64_t *dims, const double *values,
                              int n_values, bool random, double lo, double hi, uint64_t *rng)
{
    gl_tensor *t = gl_tensor_new(dt, rank, dims);
    if (!t || !t->count)
        return t;
    if (!random && n_values != t->count) {
        gl_tensor_free(t);
        return NULL;
    }
    void *data = gl_tensor_make_writable(t);
    for (int64_t i = 0; i < t->count; i++) {
        double v;
        if (!random)
            v = values[i];
        else if (gl_dtype_is_float(dt))
            v = lo + (hi - lo) * rng_unit(rng);
        else
            v = floor(lo + (hi - lo + 1) * rng_unit(rng));
        put(data, dt, i, v);
    }
    return t;
}

/* ---- building a graph from the notation ------------------------------------------------ */

static bool parse_input(gn_graph *b, char *s)
{
    char *name = trim(s);
    char *sp = name + strcspn(name, " ");
    if (!*sp)
        return fail(b, "input '%s' has no type", name);
    *sp = '\0';
    typespec t;
    if (!parse_type(b, sp + 1, &t))
        return false;
    if (b->n_feeds == GN_MAX_FEEDS || strlen(name) >= sizeof(b->feeds[0].name))
        return fail(b, "too many inputs or too long a name at '%s'", name);
    gl_graph *g = b->m->graph;
    gl_value *v = gl_add_value(g, name);
    if (strcmp(v->name, name))
        return fail(b, "input '%s' declared twice", name);
    set_tensor_type(v, &t);
    gl_graph_add_input(g, v);
    gn_feed *f = &b->feeds[b->n_feeds++];
    snprintf(f->name, sizeof(f->name), "%s", name);
    f->dt = t.dt;
    f->lo = t.lo;
    f->hi = t.hi;
    f->rank = t.rank;
    memcpy(f->dims, t.run, sizeof(f->dims));
    f->fixed = t.has_values && !t.random;
    memcpy(f->values, t.values, sizeof(f->values));
    f->n_values = t.n_values;
    return true;
}

static bool parse_const(gn_graph *b, char *s, uint64_t *rng)
{
    char *name = trim(s);
    char *sp = name + strcspn(name, " ");
    if (!*sp)
        return fail(b, "constant '%s' has no type", name);
    *sp = '\0';
    typespec t;
    if (!parse_type(b, sp + 1, &t))
        return false;
    if (!t.has_values || t.no_shape)
        return fail(b, "constant '%s' needs a shape and values", name);
    for (int i = 0; i < t.rank; i++)
        if (t.declared[i] < 0)
            return fail(b, "constant '%s' has an unknown dim", name);
    gl_tensor *x = make_tensor(t.dt, t.rank, t.run, t.values, t.n_values, t.random, t.lo,
                               t.hi, rng);
    if (!x)
        return fail(b, "constant '%s': the values do not fill the shape", name);
    gl_value *v = gl_add_initializer(b->m->graph, name, x);
    if (strcmp(v->name, name))
        return fail(b, "constant '%s' declared twice", name);
    set_tensor_type(v, &t);
    return true;
}

static bool set_attr(gn_graph *b, gl_node *n, char *kv)
{
    char *eq = strchr(kv, '=');
    if (!eq)
        return fail(b, "attribute '%s' needs a value", kv);
    *eq = '\0';
    const char *key = trim(kv);
    char *val = trim(eq + 1);
    if (*val == '"') {
        size_t len = strlen(val);
        if (len < 2 || val[len - 1] != '"')
            return fail(b, "unterminated string '%s'", val);
        val[len - 1] = '\0';
        gl_node_set_attr_string(n, key, val + 1);
        return true;
    }
    if (*val == '[') {
        size_t len = strlen(val);
        if (val[len - 1] != ']')
            return fail(b, "unterminated list '%s'", val);
        val[len - 1] = '\0';
        bool floats = strchr(val, '.') != NULL;
        char *inner = trim(val + 1);
        char *parts[MAX_PARTS];
        int count = *inner ? gn_split(inner, ',', parts, MAX_PARTS) : 0;
        int64_t ints[MAX_PARTS];
        float fl[MAX_PARTS];
        for (int i = 0; i < count; i++) {
            ints[i] = strtoll(parts[i], NULL, 10);
            fl[i] = strtof(parts[i], NULL);
        }
        if (floats)
            gl_node_set_attr_floats(n, key, fl, (size_t)count);
        else
            gl_node_set_attr_ints(n, key, ints, (size_t)count);
        return true;
    }
    char *end;
    if (strpbrk(val, ".eE")) {
        float f = strtof(val, &end);
        if (*end)
            return fail(b, "bad float '%s'", val);
        gl_node_set_attr_float(n, key, f);
    } else {
        long long i = strtoll(val, &end, 10);
        if (end == val || *end)
            return fail(b, "bad int '%s'", val);
        gl_node_set_attr_int(n, key, i);
    }
    return true;
}

/* "A, B = Op(X, , Y) k=v k=v" */
static bool parse_node(gn_graph *b, char *s)
{
    gl_graph *g = b->m->graph;
    char *open = strchr(s, '('), *close = open ? strchr(open, ')') : NULL;
    if (!open || !close)
        return fail(b, "cannot read node '%s'", s);
    *open = '\0';
    *close = '\0';
    char *eq = strrchr(s, '=');
    if (!eq)
        return fail(b, "node '%s' names no outputs", s);
    *eq = '\0';
    const char *op = trim(eq + 1);

    char *outs[MAX_PARTS], *ins[MAX_PARTS];
    int n_out = gn_split(s, ',', outs, MAX_PARTS);
    char *args = trim(open + 1);
    int n_in = *args ? gn_split(args, ',', ins, MAX_PARTS) : 0;
    gl_value *inputs[MAX_PARTS];
    for (int i = 0; i < n_in; i++) {
        inputs[i] = *ins[i] ? gl_find_value(g, ins[i]) : NULL;
        if (*ins[i] && !inputs[i])
            return fail(b, "unknown value '%s'", ins[i]);
    }
    char node_name[64];
    snprintf(node_name, sizeof(node_name), "n_%s", outs[0]);
    gl_node *n = gl_add_node_named(g, op, "", node_name, inputs, (size_t)n_in,
                                   (const char *const *)outs, (size_t)n_out);
    if (!n)
        return fail(b, "%s", gl_error_message());

    char *attrs = trim(close + 1);
    while (*attrs) {
        char *end = attrs + strcspn(attrs, " \t");
        bool last = !*end;
        *end = '\0';
        if (!set_attr(b, n, attrs))
            return false;
        attrs = last ? end : trim(end + 1);
    }
    return true;
}

static bool parse_outputs(gn_graph *b, char *s)
{
    char *names[MAX_PARTS];
    int n = gn_split(s, ',', names, MAX_PARTS);
    for (int i = 0; i < n; i++) {
        gl_value *v = gl_find_value(b->m->graph, names[i]);
        if (!v)
            return fail(b, "unknown output '%s'", names[i]);
        tu_output(b->m->graph, v);
    }
    return true;
}

static bool parse_statement(gn_graph *b, char *st, uint64_t *rng)
{
    if (!strncmp(st, "in ", 3))
        return parse_input(b, st + 3);
    if (!strncmp(st, "const ", 6))
        return parse_const(b, st + 6, rng);
    if (!strncmp(st, "out ", 4))
        return parse_outputs(b, st + 4);
    return parse_node(b, st);
}

bool gn_build(const char *name, int opset, const char *text, gn_graph *b)
{
    memset(b, 0, sizeof(*b));
    b->m = tu_model(opset);
    char *copy = strdup(text);
    char *stmts[MAX_PARTS];
    int n = gn_split(copy, ';', stmts, MAX_PARTS);
    uint64_t rng = seed_of(name);
    bool ok = true;
    for (int i = 0; i < n && ok; i++)
        if (*stmts[i])
            ok = parse_statement(b, stmts[i], &rng);
    free(copy);
    return ok;
}

/* ---- looking at a graph --------------------------------------------------------------------- */

size_t gn_count_op(const gl_graph *g, const char *op)
{
    const char *dot = strrchr(op, '.');
    size_t dl = dot ? (size_t)(dot - op) : 0, k = 0;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        if (!dot)
            k += gl_node_is(n, op);
        else
            k += strcmp(n->op_type, dot + 1) == 0 && n->domain && strlen(n->domain) == dl &&
                 strncmp(n->domain, op, dl) == 0;
    }
    return k;
}

size_t gn_count_domain(const gl_graph *g, const char *domain)
{
    size_t k = 0;
    gl_node *n;
    gl_foreach_node(g, i, n)
        k += n->domain && !strcmp(n->domain, domain);
    return k;
}

void gn_expect_op_counts(const char *name, const char *ops, const gl_graph *g)
{
    if (!ops)
        return;
    char *copy = strdup(ops);
    char *items[16];
    int n = gn_split(copy, ' ', items, 16);
    for (int i = 0; i < n; i++) {
        char *eq = strchr(items[i], '=');
        if (!eq)
            continue;
        *eq = '\0';
        size_t want = (size_t)atoi(eq + 1), got = gn_count_op(g, items[i]);
        cr_expect_eq(got, want, "%s: %zu %s nodes after the pass, expected %zu", name, got,
                     items[i], want);
    }
    free(copy);
}

void gn_print_graph(const gl_graph *g, FILE *f)
{
    gl_node *n;
    gl_foreach_node(g, i, n) {
        char perm[256] = "";
        const gl_attr *a = gl_node_attr(n, "perm");
        for (size_t d = 0, w = 0; a && d < a->n && w < sizeof(perm); d++)
            w += (size_t)snprintf(perm + w, sizeof(perm) - w, "%s%lld", d ? "," : " perm=",
                                  (long long)a->ints[d]);
        fprintf(f, "  %s%s%s '%s'%s:", n->domain ? n->domain : "",
                n->domain && *n->domain ? "." : "", n->op_type, n->name, perm);
        for (size_t k = 0; k < n->n_inputs; k++) {
            char type[128] = "";
            if (n->inputs[k])
                gl_type_format(&n->inputs[k]->type, type, sizeof(type));
            fprintf(f, " %s %s", n->inputs[k] ? n->inputs[k]->name : "-", type);
        }
        fprintf(f, " ->");
        for (size_t k = 0; k < n->n_outputs; k++) {
            char type[128] = "";
            if (n->outputs[k])
                gl_type_format(&n->outputs[k]->type, type, sizeof(type));
            fprintf(f, " %s %s", n->outputs[k] ? n->outputs[k]->name : "-", type);
        }
        fprintf(f, "\n");
    }
}

/* ---- running ------------------------------------------------------------------------------ */

gl_tensor **gn_feeds(const gn_graph *b, const gl_graph *g, const char *name)
{
    gl_tensor **in = calloc(g->n_inputs + 1, sizeof(*in));
    uint64_t rng = seed_of(name) ^ 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const gn_feed *f = NULL;
        for (int k = 0; k < b->n_feeds; k++)
            if (!strcmp(b->feeds[k].name, g->inputs[i]->name))
                f = &b->feeds[k];
        if (f)
            in[i] = make_tensor(f->dt, f->rank, f->dims, f->values, f->n_values, !f->fixed,
                                f->lo, f->hi, &rng);
    }
    return in;
}

void gn_free_tensors(gl_tensor **t, size_t n)
{
    for (size_t i = 0; t && i < n; i++)
        gl_tensor_free(t[i]);
    free(t);
}

/* Run m on the reference backend; NULL (and a message in err) on failure. */
gl_tensor **gn_run(const gl_model *m, gl_tensor **in, char *err, size_t len)
{
    gl_exec_options o = {.backend = "ref"};
    gl_exec *e = NULL;
    gl_tensor **out = calloc(m->graph->n_outputs + 1, sizeof(*out));
    gl_status st = gl_exec_create(m, &o, &e);
    if (st == GL_OK)
        st = gl_exec_run(e, (const gl_tensor *const *)in, m->graph->n_inputs, out,
                         m->graph->n_outputs);
    if (st != GL_OK) {
        snprintf(err, len, "%s", gl_error_message());
        free(out);
        out = NULL;
    }
    gl_exec_free(e);
    return out;
}

void gn_expect_same_outputs(const char *name, const gn_graph *b, const gl_model *before,
                            const gl_model *after, double rtol, double atol, bool no_exec)
{
    const gl_graph *g0 = before->graph, *g1 = after->graph;
    cr_expect_eq(g1->n_inputs, g0->n_inputs, "%s: graph inputs changed", name);
    cr_expect_eq(g1->n_outputs, g0->n_outputs, "%s: graph outputs changed", name);
    if (g1->n_inputs != g0->n_inputs || g1->n_outputs != g0->n_outputs)
        return;
    for (size_t i = 0; i < g0->n_outputs; i++) {
        const gl_value *v0 = g0->outputs[i], *v1 = g1->outputs[i];
        cr_expect_str_eq(v1->name, v0->name, "%s: graph output %zu renamed", name, i);
        cr_expect(v1->type.dtype == v0->type.dtype &&
                      gl_shape_equal(&v1->type.shape, &v0->type.shape),
                  "%s: graph output '%s' lost or changed its type", name, v0->name);
    }
    if (no_exec)
        return;
    char err[512];
    gl_tensor **in = gn_feeds(b, g0, name);
    gl_tensor **want = gn_run(before, in, err, sizeof(err));
    cr_expect(want, "%s: the model before the pass does not run: %s", name, err);
    gl_tensor **got = want ? gn_run(after, in, err, sizeof(err)) : NULL;
    cr_expect(!want || got, "%s: the model after the pass does not run: %s", name, err);
    for (size_t i = 0; want && got && i < g0->n_outputs; i++) {
        gl_compare r;
        gl_compare_tensors(got[i], want[i], rtol, atol, &r);
        char line[256];
        gl_compare_format(&r, line, sizeof(line));
        cr_expect(r.ok, "%s: output '%s' differs after the pass (rtol %g, atol %g): %s",
                  name, g0->outputs[i]->name, rtol, atol, line);
    }
    gn_free_tensors(got, g0->n_outputs);
    gn_free_tensors(want, g0->n_outputs);
    gn_free_tensors(in, g0->n_inputs);
}

gl_model *gn_bodies_only(const gl_model *m)
{
    gl_model *c = gl_model_clone(m);
    for (size_t i = 0; i < c->n_functions; i++) {
        if (strcmp(c->functions[i].domain, "graphlab"))
            continue;
        free(c->functions[i].domain);
        c->functions[i].domain = strdup("test.body");
    }
    gl_node *n;
    gl_foreach_node(c->graph, i, n) {
        if (n->domain && !strcmp(n->domain, "graphlab")) {
            free(n->domain);
            n->domain = strdup("test.body");
        }
    }
    gl_model_set_opset(c, "test.body", 1);
    return c;
}

gl_pipeline *gn_run_passes(const char *name, int opset, const char *text,
                           void (*extra)(gl_model *m), const char *passes, gn_graph *b)
{
    return gn_run_passes_set(name, opset, text, extra, passes, NULL, b);
}

gl_pipeline *gn_run_passes_set(const char *name, int opset, const char *text,
                               void (*extra)(gl_model *m), const char *passes, const char *set,
                               gn_graph *b)
{
    if (!gn_build(name, opset, text, b)) {
        cr_expect(false, "%s: cannot build the case: %s", name, b->err);
        gl_model_free(b->m);
        b->m = NULL;
        return NULL;
    }
    if (extra)
        extra(b->m);
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    cr_assert_eq(gl_pass_list_parse(passes, &plan, &n_plan), GL_OK, "%s", gl_error_message());
    gl_settings settings = {0};
    if (set)
        cr_assert_eq(gl_settings_apply(&settings, set), GL_OK, "%s: %s", name,
                     gl_error_message());
    gl_pipeline *p = NULL;
    gl_status st = gl_pipeline_run(b->m, plan, n_plan, &settings, GL_PIPELINE_KEEP_SNAPSHOTS,
                                   &p);
    free(plan);
    gl_settings_free(&settings);
    cr_expect_eq(st, GL_OK, "%s: the pipeline failed: %s", name,
                 p && p->failure ? p->failure : gl_error_message());
    if (st == GL_OK)
        return p;
    gl_pipeline_free(p);
    return NULL;
}

void gn_expect_onnx_checker(const char *dir)
{
    const char *py = getenv("GL_PYTHON");
    if (!py || !*py)
        return;
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "'%s' -c 'import glob, sys, onnx\n"
             "bad = 0\n"
             "for p in sorted(glob.glob(sys.argv[1] + \"/*.onnx\")):\n"
             "    try: onnx.checker.check_model(onnx.load(p), full_check=True)\n"
             "    except Exception as e: bad += 1; print(p, e)\n"
             "sys.exit(1 if bad else 0)' '%s' >&2",
             py, dir);
    cr_expect_eq(system(cmd), 0, "onnx.checker refused a saved model in %s (see stderr)", dir);
}

void gn_expect_saved_same(const char *name, const gn_graph *b, const gl_model *m,
                          const char *dir)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.onnx", dir, name);
    gl_model *back = NULL;
    gl_status st = gl_model_save(m, path, NULL);
    if (st == GL_OK)
        st = gl_model_load(path, NULL, &back);
    cr_expect_eq(st, GL_OK, "%s: save and load: %s", name, gl_error_message());
    if (back)
        gn_expect_same_outputs(name, b, m, back, 0, 0, false);
    gl_model_free(back);
}

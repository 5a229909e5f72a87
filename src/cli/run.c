/* run.c — `graphlab run MODEL [--data DIR] [--passes LIST] [--backend ref|dnnl]
 * [--compare BACKEND] [--rtol X] [--atol Y] [--dim NAME=V] [--threads N]
 * [--max-memory BYTES] [--max-iterations N] [--save-outputs DIR] [--set PASS.OPT=V]
 * [--plan]`: execute a model once.
 *
 * Inputs come from DIR/input_*.pb, or are drawn from a fixed-seed generator (so two
 * runs, and two backends, see the same numbers) in the declared shapes, a symbolic dim
 * taking its --dim value or 1. With --data the outputs are compared with
 * DIR/output_*.pb, with --compare with a second run on another backend; exit 1 when any
 * comparison fails. --max-memory (K, M, G suffixes) bounds every tensor and all those
 * alive together, random inputs included; --max-iterations all loop iterations (see
 * gl_exec_options). */
#include "cli/cli.h"

#include "passes/pipeline.h"

#include "exec/compare.h"
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "util/escape.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dim_arg {
    char *name;
    int64_t value;
} dim_arg;

typedef struct run_args {
    const char *model, *data, *passes, *backend, *compare, *save_dir;
    double rtol, atol;
    int threads;
    size_t max_memory;       /* 0: the executor's default */
    uint64_t max_iterations; /* 0: the executor's default */
    bool plan;
    dim_arg *dims;
    size_t n_dims, cap_dims;
    gl_settings settings;
} run_args;

enum { OPT_DATA = GL_OPT_OWN, OPT_BACKEND, OPT_COMPARE, OPT_RTOL, OPT_ATOL, OPT_DIM,
       OPT_THREADS, OPT_SAVE, OPT_PLAN, OPT_MAX_MEMORY, OPT_MAX_ITERATIONS };

/* ---- arguments ------------------------------------------------------------------------ */

static bool parse_tolerance(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0)
        return false;
    *out = v;
    return true;
}

static bool parse_int64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* BYTES, or a count of K, M or G (binary: 1K = 1024), at least 1. */
static bool parse_bytes(const char *s, size_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-' || v == 0)
        return false;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end || v > (SIZE_MAX >> shift))
        return false;
    *out = (size_t)v << shift;
    return true;
}

/* NAME=V with V >= 0. */
static bool parse_dim(run_args *a, const char *s)
{
    const char *eq = strchr(s, '=');
    int64_t v;
    if (!eq || eq == s || !parse_int64(eq + 1, 0, INT64_MAX / 2, &v))
        return false;
    GL_GROW(a->dims, a->cap_dims, a->n_dims + 1);
    a->dims[a->n_dims++] = (dim_arg){gl_xstrndup(s, (size_t)(eq - s)), v};
    return true;
}

/* One option; GL_EXIT_OK to go on, -1 after --help, else the exit code. */
static int parse_option(run_args *a, int c, char **argv)
{
    int64_t v;
    switch (c) {
    case OPT_DATA: a->data = optarg; break;
    case OPT_BACKEND: a->backend = optarg; break;
    case OPT_COMPARE: a->compare = optarg; break;
    case OPT_SAVE: a->save_dir = optarg; break;
    case OPT_PLAN: a->plan = true; break;
    case OPT_RTOL:
    case OPT_ATOL:
        if (!parse_tolerance(optarg, c == OPT_RTOL ? &a->rtol : &a->atol))
            return gl_cli_usage_error("run", "--%s '%s' is not a non-negative number",
                                      c == OPT_RTOL ? "rtol" : "atol", optarg);
        break;
    case OPT_THREADS:
        if (!parse_int64(optarg, 0, 4096, &v))
            return gl_cli_usage_error("run", "--threads '%s' is not a count", optarg);
        a->threads = (int)v;
        break;
    case OPT_DIM:
        if (!parse_dim(a, optarg))
            return gl_cli_usage_error("run", "--dim '%s' is not NAME=V with V >= 0", optarg);
        break;
    case OPT_MAX_MEMORY:
        if (!parse_bytes(optarg, &a->max_memory))
            return gl_cli_usage_error("run", "--max-memory '%s' is not a size in bytes "
                                      "(1 or more; K, M, G suffixes)", optarg);
        break;
    case OPT_MAX_ITERATIONS:
        if (!parse_int64(optarg, 1, INT64_MAX, &v))
            return gl_cli_usage_error("run", "--max-iterations '%s' is not a count of 1 or "
                                      "more", optarg);
        a->max_iterations = (uint64_t)v;
        break;
    default: return gl_cli_common_option("run", c, argv, &a->passes, &a->settings);
    }
    return GL_EXIT_OK;
}

/* GL_EXIT_OK to go on, -1 for --help (done), else the exit code. */
static int parse_args(int argc, char **argv, run_args *a)
{
    static const struct option long_opts[] = {
        {"data", required_argument, NULL, OPT_DATA},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"compare", required_argument, NULL, OPT_COMPARE},
        {"rtol", required_argument, NULL, OPT_RTOL},
        {"atol", required_argument, NULL, OPT_ATOL},
        {"dim", required_argument, NULL, OPT_DIM},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"save-outputs", required_argument, NULL, OPT_SAVE},
        {"plan", no_argument, NULL, OPT_PLAN},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"max-iterations", required_argument, NULL, OPT_MAX_ITERATIONS},
        GL_CLI_COMMON_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    a->passes = "none";
    a->backend = "ref";
    a->rtol = 1e-3;
    a->atol = 1e-4;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        int rc = parse_option(a, c, argv);
        if (rc != GL_EXIT_OK)
            return rc;
    }
    if (argc - optind != 1)
        return gl_cli_usage_error("run", "expected one MODEL");
    a->model = argv[optind];
    return GL_EXIT_OK;
}

static void free_args(run_args *a)
{
    for (size_t i = 0; i < a->n_dims; i++)
        free(a->dims[i].name);
    free(a->dims);
    gl_settings_free(&a->settings);
}

/* ---- random inputs ------------------------------------------------------------------------ */

/* splitmix64: small, fast, and the same numbers on every machine. */
typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double rng_uniform(rng *r)
{
    return (double)((rng_next(r) >> 11) + 1) * 0x1.0p-53;
}

/* Standard normal by Box-Muller. */
static double rng_normal(rng *r)
{
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void fill_random(gl_tensor *t, rng *r)
{
    void *p = gl_tensor_make_writable(t);
    int64_t n = t->count * (t->dtype == GL_DT_COMPLEX64 || t->dtype == GL_DT_COMPLEX128 ? 2 : 1);
    size_t esize = gl_dtype_size(t->dtype);
    for (int64_t i = 0; i < n; i++) {
        double x = rng_normal(r);
        /* Integers stay small and non-negative: they are often indices or counts. */
        uint64_t small = rng_next(r) % 4;
        switch (t->dtype) {
        case GL_DT_FLOAT:
        case GL_DT_COMPLEX64: ((float *)p)[i] = (float)x; break;
        case GL_DT_DOUBLE:
        case GL_DT_COMPLEX128: ((double *)p)[i] = x; break;
        case GL_DT_FLOAT16: ((uint16_t *)p)[i] = gl_f32_to_f16((float)x); break;
        case GL_DT_BFLOAT16: ((uint16_t *)p)[i] = gl_f32_to_bf16((float)x); break;
        case GL_DT_BOOL: ((uint8_t *)p)[i] = (uint8_t)(small & 1); break;
        default: /* little-endian integers of esize bytes */
            memset((char *)p + (size_t)i * esize, 0, esize);
            memcpy((char *)p + (size_t)i * esize, &small, 1);
            break;
        }
    }
}

static const dim_arg *find_dim(const run_args *a, const char *sym)
{
    for (size_t i = a->n_dims; sym && i-- > 0;)
        if (strcmp(a->dims[i].name, sym) == 0)
            return &a->dims[i];
    return NULL;
}

static gl_status random_input(const gl_model *m, const run_args *a, const gl_value *v, rng *r,
                              gl_tensor **out)
{
    const gl_type *ty = &v->type;
    if (ty->kind != GL_TYPE_TENSOR || ty->dtype == GL_DT_UNDEFINED || ty->dtype == GL_DT_STRING)
        return gl_fail(GL_ERR_INPUT, "%s: input '%s': cannot make random data for its type; "
                       "give --data DIR", m->path, v->name);
    if (ty->shape.rank == GL_RANK_UNKNOWN)
        return gl_fail(GL_ERR_INPUT, "%s: input '%s' has no declared shape; give --data DIR",
                       m->path, v->name);
    int64_t dims[GL_MAX_RANK];
    for (int d = 0; d < ty->shape.rank && d < GL_MAX_RANK; d++) {
        const gl_dim *dim = &ty->shape.dims[d];
        const dim_arg *given = find_dim(a, dim->sym);
        dims[d] = dim->value >= 0 ? dim->value : given ? given->value : 1;
    }
    /* Refused before a byte of it exists, naming the input (limits pushed by the caller). */
    char what[300];
    snprintf(what, sizeof(what), "input '%s'", v->name);
    if (gl_limits_check_tensor(m->path, what, ty->dtype, ty->shape.rank, dims) != GL_OK)
        return GL_ERR_INPUT;
    gl_tensor *t = gl_tensor_new(ty->dtype, ty->shape.rank, dims);
    if (!t)
        return GL_ERR_INPUT;
    fill_random(t, r);
    *out = t;
    return GL_OK;
}

/* Random data for every input without a default (defaults are used as they are), all
 * of it within the memory limit of the run. */
static gl_status random_inputs(const gl_model *m, const run_args *a, gl_dataset *d)
{
    const gl_graph *g = m->graph;
    *d = (gl_dataset){0};
    d->n_inputs = g->n_inputs;
    d->inputs = gl_xcalloc(g->n_inputs ? g->n_inputs : 1, sizeof(*d->inputs));
    rng r = {0x6772617068ull}; /* fixed: every run sees the same inputs */
    gl_limits lim = {.max_bytes = a->max_memory ? a->max_memory : gl_limits_default_bytes(),
                     .max_bytes_option = "--max-memory"};
    gl_limits_push(&lim);
    gl_status st = GL_OK;
    for (size_t i = 0; i < g->n_inputs && st == GL_OK; i++)
        if (!g->inputs[i]->init)
            st = random_input(m, a, g->inputs[i], &r, &d->inputs[i]);
    gl_limits_pop(&lim);
    if (st != GL_OK)
        gl_dataset_free(d);
    return st;
}

/* ---- running and reporting ------------------------------------------------------------------ */

static void format_type(const gl_tensor *t, char *buf, size_t len)
{
    gl_format_type(t->dtype, t->rank, t->dims, buf, len);
}

/* Run the model once on `backend`; *outs is malloc'd (n_outputs tensors). */
static gl_status run_once(const gl_model *m, const run_args *a, const char *backend,
                          const gl_dataset *d, bool print_plan, gl_tensor ***outs)
{
    gl_exec_options o = {.backend = backend, .threads = a->threads,
                         .max_memory = a->max_memory, .max_iterations = a->max_iterations};
    gl_exec *e = NULL;
    gl_status st = gl_exec_create(m, &o, &e);
    if (st != GL_OK)
        return st;
    size_t n = m->graph->n_outputs;
    *outs = gl_xcalloc(n ? n : 1, sizeof(**outs));
    st = gl_exec_run(e, (const gl_tensor *const *)d->inputs, d->n_inputs, *outs, n);
    /* After the run: backends choose their implementation for the shapes they see. */
    if (print_plan)
        gl_exec_print_plan(e, stdout);
    gl_exec_free(e);
    if (st != GL_OK) {
        free(*outs);
        *outs = NULL;
    }
    return st;
}

static void free_outputs(gl_tensor **outs, size_t n)
{
    for (size_t i = 0; outs && i < n; i++)
        gl_tensor_free(outs[i]);
    free(outs);
}

/* One line per output; false when any differs beyond the tolerance. */
static bool report_comparison(const run_args *a, const gl_graph *g, gl_tensor *const *got,
                              gl_tensor *const *expected, const char *label)
{
    bool all_ok = true;
    for (size_t i = 0; i < g->n_outputs; i++) {
        if (!expected[i])
            continue;
        gl_compare r;
        gl_compare_tensors(got[i], expected[i], a->rtol, a->atol, &r);
        char line[320];
        if (r.same_shape) {
            gl_compare_format(&r, line, sizeof(line));
        } else {
            char tg[128], te[128];
            format_type(got[i], tg, sizeof(tg));
            format_type(expected[i], te, sizeof(te));
            snprintf(line, sizeof(line), "got %s, expected %s", tg, te);
        }
        printf("%s%s: %s: %s\n", gl_esc(g->outputs[i]->name), label, gl_esc(line),
               r.ok ? "ok" : "MISMATCH");
        all_ok = all_ok && r.ok;
    }
    return all_ok;
}

static gl_status save_outputs(const char *dir, gl_tensor *const *outs, size_t n)
{
    gl_status st = gl_cli_make_dir(dir);
    if (st != GL_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        int len = snprintf(path, sizeof(path), "%s/output_%zu.pb", dir, i);
        if (len < 0 || (size_t)len >= sizeof(path))
            return gl_fail(GL_ERR_INPUT, "%s: path too long", dir);
        if ((st = gl_tensor_write_pb(outs[i], path)) != GL_OK)
            return st;
    }
    return GL_OK;
}

/* Everything after loading; returns the exit code. */
static int run_model(const gl_model *m, const run_args *a)
{
    const gl_graph *g = m->graph;
    gl_dataset d;
    gl_tensor **outs = NULL, **other = NULL;
    gl_status st = a->data ? gl_dataset_load(g, a->data, &d) : random_inputs(m, a, &d);
    if (st != GL_OK)
        return gl_cli_fail(st);
    st = run_once(m, a, a->backend, &d, a->plan, &outs);
    if (st == GL_OK && a->compare)
        st = run_once(m, a, a->compare, &d, false, &other);
    if (st == GL_OK && a->save_dir)
        st = save_outputs(a->save_dir, outs, g->n_outputs);
    int rc = GL_EXIT_OK;
    if (st != GL_OK) {
        rc = gl_cli_fail(st);
    } else {
        for (size_t i = 0; i < g->n_outputs; i++) {
            char type[256];
            format_type(outs[i], type, sizeof(type));
            printf("%s: %s\n", gl_esc(g->outputs[i]->name), gl_esc(type));
        }
        bool ok = true;
        if (a->data && d.expected)
            ok = report_comparison(a, g, outs, d.expected, "") && ok;
        if (other) {
            char label[160];
            snprintf(label, sizeof(label), " [%s vs %s]", a->compare, a->backend);
            ok = report_comparison(a, g, other, outs, label) && ok;
        }
        rc = ok ? GL_EXIT_OK : GL_EXIT_MISMATCH;
    }
    free_outputs(outs, g->n_outputs);
    free_outputs(other, g->n_outputs);
    gl_dataset_free(&d);
    return rc;
}

int gl_cmd_run(int argc, char **argv)
{
    run_args a = {0};
    int rc = parse_args(argc, argv, &a);
    gl_pass_step *steps = NULL;
    size_t n_steps = 0;
    gl_pipeline *p = NULL;
    gl_model *m = NULL;
    if (rc != GL_EXIT_OK)
        goto done;
    if ((rc = gl_cli_pass_list("run", a.passes, &steps, &n_steps)) != GL_EXIT_OK)
        goto done;
    gl_status st = gl_cli_load(a.model, &a.settings, &m);
    if (st == GL_OK && n_steps) {
        st = gl_pipeline_run(m, steps, n_steps, &a.settings, 0, &p);
        m = NULL; /* the pipeline owns it now */
    }
    if (st != GL_OK) {
        rc = gl_cli_fail(st);
        goto done;
    }
    rc = run_model(p ? gl_pipeline_result(p) : m, &a);
done:
    gl_pipeline_free(p);
    gl_model_free(m);
    free(steps);
    free_args(&a);
    return rc < 0 ? GL_EXIT_OK : rc;
}

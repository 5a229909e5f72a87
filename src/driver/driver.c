/* driver.c — the shared options, loading, the pipeline, inputs and plans (driver.h). */
#include "driver/driver.h"

#include "onnx/onnx_io.h"
#include "util/escape.h"
#include "util/plural.h"
#include "util/strbuf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- option values -------------------------------------------------------------------- */

bool gl_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* A finite number >= 0. */
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

int64_t gl_threads_max(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > GL_THREADS_MAX ? (int64_t)cpus : GL_THREADS_MAX;
}

/* NAME=V with V >= 0, appended to o->dims. */
static bool parse_dim(const char *s, gl_session_opts *o)
{
    const char *eq = strchr(s, '=');
    int64_t v;
    if (!eq || eq == s || !gl_parse_int(eq + 1, 0, INT64_MAX / 2, &v))
        return false;
    GL_GROW(o->dims, o->cap_dims, o->n_dims + 1);
    o->dims[o->n_dims++] = (gl_dim_value){gl_xstrndup(s, (size_t)(eq - s)), v};
    return true;
}

/* ---- the table -------------------------------------------------------------------------- */

static const gl_session_option option_table[] = {
    {"passes", GL_SOPT_PASSES, true, "LIST",
     "the passes to run: all, all:K (the first K rewrites of all), none, or NAME[:K],..."},
    {"set", GL_SOPT_SET, true, "PASS.OPT=V",
     "a pass option (repeatable; graphlab --help lists them)"},
    {"data", GL_SOPT_DATA, true, "DIR",
     "inputs from DIR/input_*.pb, outputs compared with DIR/output_*.pb (default: seeded "
     "random inputs)"},
    {"rtol", GL_SOPT_RTOL, true, "X", "relative tolerance of comparisons (default 1e-3)"},
    {"atol", GL_SOPT_ATOL, true, "Y", "absolute tolerance of comparisons (default 1e-4)"},
    {"steps", GL_SOPT_STEPS, true, "N",
     "tolerance of a quantized value (a QuantizeLinear's or DequantizeLinear's output), in "
     "steps of its scale (default 1)"},
    {"dim", GL_SOPT_DIM, true, "NAME=V",
     "the size of a symbolic input dim for random inputs (repeatable; default 1; a NAME "
     "no input has is refused)"},
    {"threads", GL_SOPT_THREADS, true, "N",
     "threads of the dnnl backend (0: its default; at most 256, or the number of CPUs when "
     "more)"},
    {"max-memory", GL_SOPT_MAX_MEMORY, true, "BYTES",
     "no tensor, nor all alive together, over BYTES (K, M, G; default half the memory)"},
    {"max-iterations", GL_SOPT_MAX_ITERATIONS, true, "N",
     "loops stop after N iterations in all (default 2^24)"},
    {"backend", GL_SOPT_BACKEND, true, "ref|dnnl|fused|unfused",
     "the backend of the run (default ref); fused and unfused: dnnl on the model as "
     "optimized and on the model the passes make without fusion"},
};

gl_tolerance gl_session_tolerance(const gl_session_opts *o)
{
    return (gl_tolerance){.rtol = o->rtol, .atol = o->atol, .steps = o->steps};
}

static const char *const run_names[] = {"ref", "dnnl", "fused", "unfused"};

const char *gl_session_backend(const char *run, bool *unfused)
{
    *unfused = strcmp(run, "unfused") == 0;
    return *unfused || strcmp(run, "fused") == 0 ? "dnnl" : run;
}

bool gl_session_is_fusion_run(const char *run)
{
    return run && (strcmp(run, "fused") == 0 || strcmp(run, "unfused") == 0);
}

static gl_status set_backend(gl_session_opts *o, const char *v)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(run_names); i++)
        if (strcmp(run_names[i], v) == 0) {
            o->backend = run_names[i];
            return GL_OK;
        }
    return gl_fail(GL_ERR_INPUT, "--backend '%s' is not ref, dnnl, fused or unfused", v);
}

const gl_session_option *gl_session_option_table(size_t *count)
{
    *count = GL_ARRAY_LEN(option_table);
    return option_table;
}

void gl_session_opts_init(gl_session_opts *o, const char *passes)
{
    *o = (gl_session_opts){.passes = passes, .rtol = 1e-3, .atol = 1e-4, .steps = 1,
                           .backend = "ref"};
}

void gl_session_opts_free(gl_session_opts *o)
{
    for (size_t i = 0; i < o->n_dims; i++)
        free(o->dims[i].name);
    free(o->dims);
    gl_settings_free(&o->settings);
    o->dims = NULL;
    o->n_dims = o->cap_dims = 0;
}

static gl_status set_value(gl_session_opts *o, unsigned bit, const char *v)
{
    int64_t n;
    switch (bit) {
    case GL_SOPT_PASSES: {
        gl_pass_step *steps = NULL;
        size_t n_steps = 0;
        gl_status st = gl_pass_list_parse(v, &steps, &n_steps);
        free(steps);
        if (st == GL_OK)
            o->passes = v;
        return st;
    }
    case GL_SOPT_SET: return gl_settings_apply(&o->settings, v);
    case GL_SOPT_DATA: o->data = v; return GL_OK;
    case GL_SOPT_RTOL:
    case GL_SOPT_ATOL:
        if (!parse_tolerance(v, bit == GL_SOPT_RTOL ? &o->rtol : &o->atol))
            return gl_fail(GL_ERR_INPUT, "--%s '%s' is not a non-negative number",
                           bit == GL_SOPT_RTOL ? "rtol" : "atol", v);
        return GL_OK;
    case GL_SOPT_STEPS:
        if (!parse_tolerance(v, &o->steps))
            return gl_fail(GL_ERR_INPUT, "--steps '%s' is not a non-negative number", v);
        return GL_OK;
    case GL_SOPT_DIM:
        if (!parse_dim(v, o))
            return gl_fail(GL_ERR_INPUT, "--dim '%s' is not NAME=V with V >= 0", v);
        return GL_OK;
    case GL_SOPT_THREADS: {
        /* OpenMP that cannot make the threads ends the process with its own message and
         * exit 1 ("a comparison failed"): a number past any use is refused here. */
        int64_t most = gl_threads_max();
        if (!gl_parse_int(v, 0, INT64_MAX, &n))
            return gl_fail(GL_ERR_INPUT, "--threads '%s' is not a whole number from 0 to "
                           "%lld", v, (long long)most);
        if (n > most)
            return gl_fail(GL_ERR_INPUT, "--threads '%s' is over the limit of %lld (the larger of "
                           "256 and the number of CPUs)", v, (long long)most);
        o->threads = (int)n;
        return GL_OK;
    }
    case GL_SOPT_MAX_MEMORY:
        if (!parse_bytes(v, &o->max_memory))
            return gl_fail(GL_ERR_INPUT, "--max-memory '%s' is not a size in bytes (1 or "
                           "more; K, M, G suffixes)", v);
        return GL_OK;
    case GL_SOPT_MAX_ITERATIONS:
        if (!gl_parse_int(v, 1, INT64_MAX, &n))
            return gl_fail(GL_ERR_INPUT, "--max-iterations '%s' is not a count of 1 or "
                           "more", v);
        o->max_iterations = (uint64_t)n;
        return GL_OK;
    case GL_SOPT_BACKEND: return set_backend(o, v);
    default: return gl_fail(GL_ERR_INTERNAL, "option bit %u has no parser", bit);
    }
}

gl_status gl_session_option_set(gl_session_opts *o, const char *name, const char *value)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(option_table); i++) {
        const gl_session_option *row = &option_table[i];
        if (strcmp(row->name, name) != 0)
            continue;
        if (row->has_value && !value)
            return gl_fail(GL_ERR_INPUT, "option '--%s' needs a value", name);
        return set_value(o, row->bit, value);
    }
    return gl_fail(GL_ERR_INPUT, "unknown option '--%s'", name);
}

/* ---- the model -------------------------------------------------------------------------- */

gl_status gl_session_load(const char *path, const gl_settings *settings, gl_model **out)
{
    gl_load_options opts = {
        .freeze_inputs = gl_settings_lookup(settings, "load", "freeze-inputs", 0) != 0};
    gl_status st = gl_model_load(path, &opts, out);
    /* The loader accepts any order so that a bad order can be seen and sorted; a cycle
     * cannot be sorted or run, so everything that loads a model refuses it here. */
    if (st == GL_OK && (st = gl_check_acyclic((*out)->graph)) != GL_OK) {
        gl_model_free(*out);
        *out = NULL;
    }
    return st;
}

/* True when an input of g (not an initializer) has a symbolic dim named `name`. */
static bool has_input_dim(const gl_graph *g, const char *name)
{
    for (size_t i = 0; i < g->n_inputs; i++) {
        const gl_type *ty = &g->inputs[i]->type;
        if (g->inputs[i]->init || ty->kind != GL_TYPE_TENSOR || ty->shape.rank == GL_RANK_UNKNOWN)
            continue;
        for (int d = 0; d < ty->shape.rank && d < GL_MAX_RANK; d++)
            if (ty->shape.dims[d].value < 0 && ty->shape.dims[d].sym &&
                strcmp(ty->shape.dims[d].sym, name) == 0)
                return true;
    }
    return false;
}

/* Every --dim NAME names a symbolic dim of an input of m: a NAME no input has would be
 * ignored without a word, so it is refused with the names the inputs do have. */
static gl_status check_dims(const gl_model *m, const gl_session_opts *o)
{
    const gl_graph *g = m->graph;
    for (size_t k = 0; k < o->n_dims; k++) {
        if (has_input_dim(g, o->dims[k].name))
            continue;
        gl_strbuf names = {0};
        for (size_t i = 0; i < g->n_inputs; i++) {
            const gl_type *ty = &g->inputs[i]->type;
            if (g->inputs[i]->init || ty->kind != GL_TYPE_TENSOR ||
                ty->shape.rank == GL_RANK_UNKNOWN)
                continue;
            for (int d = 0; d < ty->shape.rank && d < GL_MAX_RANK; d++) {
                const gl_dim *dim = &ty->shape.dims[d];
                if (dim->value >= 0 || !dim->sym)
                    continue;
                /* Listed once: only where no earlier input or dim had it. */
                bool seen = false;
                for (size_t j = 0; j <= i && !seen; j++) {
                    const gl_type *tj = &g->inputs[j]->type;
                    if (g->inputs[j]->init || tj->kind != GL_TYPE_TENSOR ||
                        tj->shape.rank == GL_RANK_UNKNOWN)
                        continue;
                    int upto = j == i ? d : tj->shape.rank;
                    for (int e = 0; e < upto && e < GL_MAX_RANK && !seen; e++)
                        seen = tj->shape.dims[e].value < 0 && tj->shape.dims[e].sym &&
                               strcmp(tj->shape.dims[e].sym, dim->sym) == 0;
                }
                if (!seen)
                    gl_sb_printf(&names, "%s'%s'", names.len ? ", " : "", gl_esc(dim->sym));
            }
        }
        char *list = gl_sb_take(&names);
        gl_status st;
        const char *name = gl_esc(o->dims[k].name);
        if (*list)
            st = gl_fail(GL_ERR_INPUT, "%s: --dim '%s': no input has a symbolic dim of that "
                         "name (the inputs' symbolic dims: %s)", m->path, name, list);
        else
            st = gl_fail(GL_ERR_INPUT, "%s: --dim '%s': no input has a symbolic dim of that "
                         "name (the inputs have none)", m->path, name);
        free(list);
        return st;
    }
    return GL_OK;
}

static void say(const gl_session_opts *o, const char *what)
{
    if (o->progress)
        o->progress(o->progress_ctx, what);
}

/* Load `path` and run `steps` on it (see gl_session_open). */
static gl_status open_steps(const char *path, const gl_session_opts *o, const gl_pass_step *steps,
                            size_t n_steps, gl_session *s)
{
    char what[1100];
    snprintf(what, sizeof(what), "loading %s", path);
    say(o, what);
    gl_status st = gl_session_load(path, &o->settings, &s->loaded);
    if (st == GL_OK)
        st = check_dims(s->loaded, o);
    if (st == GL_OK && (n_steps || o->always_pipeline)) {
        snprintf(what, sizeof(what), "running %zu %s", n_steps,
                 gl_noun((long long)n_steps, "pass", "passes"));
        say(o, what);
        st = gl_pipeline_run_each(s->loaded, steps, n_steps, &o->settings, o->pipeline_flags,
                                  o->on_step, o->step_ctx, &s->pipeline);
        s->loaded = NULL; /* the pipeline owns it now */
    }
    if (s->pipeline || s->loaded)
        s->model = s->pipeline ? gl_pipeline_result(s->pipeline) : s->loaded;
    return st;
}

gl_status gl_session_open(const char *path, const gl_session_opts *o, gl_session *s)
{
    *s = (gl_session){0};
    gl_pass_step *steps = NULL;
    size_t n_steps = 0;
    gl_status st = gl_pass_list_parse(o->passes, &steps, &n_steps);
    if (st == GL_OK)
        st = open_steps(path, o, steps, n_steps, s);
    free(steps);
    return st;
}

/* o->passes without its fusion steps, in *steps; how many there were. */
static size_t unfused_steps(const gl_session_opts *o, gl_pass_step **steps, size_t *n_steps,
                            gl_status *st)
{
    *steps = NULL;
    *n_steps = 0;
    if ((*st = gl_pass_list_parse(o->passes, steps, n_steps)) != GL_OK)
        return 0;
    const gl_pass *fusion = gl_pass_find("fusion");
    size_t kept = 0;
    for (size_t i = 0; i < *n_steps; i++)
        if ((*steps)[i].pass != fusion)
            (*steps)[kept++] = (*steps)[i];
    size_t dropped = *n_steps - kept;
    *n_steps = kept;
    return dropped;
}

bool gl_session_fuses(const gl_session_opts *o)
{
    gl_pass_step *steps;
    size_t n;
    gl_status st;
    size_t dropped = unfused_steps(o, &steps, &n, &st);
    free(steps);
    return st == GL_OK && dropped > 0;
}

gl_status gl_session_open_unfused(const char *path, const gl_session_opts *o, gl_session *s)
{
    *s = (gl_session){0};
    gl_pass_step *steps;
    size_t n_steps;
    gl_status st;
    unfused_steps(o, &steps, &n_steps, &st);
    if (st == GL_OK) {
        /* Nobody called back per step: the steps are not the ones o->passes names. */
        gl_session_opts quiet = *o;
        quiet.on_step = NULL;
        st = open_steps(path, &quiet, steps, n_steps, s);
    }
    free(steps);
    return st;
}

void gl_session_close(gl_session *s)
{
    gl_pipeline_free(s->pipeline);
    gl_model_free(s->loaded);
    *s = (gl_session){0};
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GL_FREE_AT_EXIT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define GL_FREE_AT_EXIT 1
#endif

void gl_session_end(gl_session *s)
{
#ifdef GL_FREE_AT_EXIT
    gl_session_close(s);
#else
    *s = (gl_session){0};
#endif
}

gl_status gl_session_open_float(const gl_model *quantized, gl_session *s, gl_qdq_pairs *pairs)
{
    *s = (gl_session){0};
    gl_qdq_pairs_find(quantized->graph, pairs);
    if (!pairs->n)
        return gl_fail(GL_ERR_INPUT, "%s: no QuantizeLinear -> DequantizeLinear pair on an "
                       "activation: the float comparison is for quantized (QDQ) models",
                       quantized->path ? quantized->path : "<model>");
    gl_model *m = gl_model_clone(quantized);
    gl_status st = gl_qdq_strip(m->graph, NULL);
    if (st != GL_OK) {
        gl_model_free(m);
        gl_qdq_pairs_free(pairs);
        return st;
    }
    s->loaded = m;
    s->model = m;
    return GL_OK;
}

/* ---- a run -------------------------------------------------------------------------------- */

gl_status gl_session_inputs(const gl_model *m, const gl_session_opts *o, gl_dataset *d)
{
    if (o->data)
        return gl_dataset_load(m->graph, o->data, d);
    return gl_dataset_random(m, o->dims, o->n_dims, o->max_memory, d);
}

gl_exec_options gl_session_exec_options(const gl_session_opts *o, const char *backend)
{
    return (gl_exec_options){
        .backend = backend, .threads = o->threads, .max_memory = o->max_memory,
        .max_iterations = o->max_iterations,
        .dnnl_fault = gl_settings_lookup_text(&o->settings, "dnnl", "fault"),
        .dnnl_delay = gl_settings_lookup_text(&o->settings, "dnnl", "delay"),
        .dnnl_no_winograd = gl_settings_lookup(&o->settings, "dnnl", "winograd", 1) == 0};
}

gl_exec_options gl_session_run_options(const gl_session_opts *o, const char *backend,
                                       const gl_model *m, const gl_dataset *d)
{
    gl_exec_options eo = gl_session_exec_options(o, backend);
    if (d)
        eo.batch = gl_inputs_batch(m->graph, (const gl_tensor *const *)d->inputs, d->n_inputs);
    return eo;
}

/* The plan runs once (`run`): packing weights mapped from a file into oneDNN's layout
 * (dn_matmul.c) would read and write them all before the one run that reads them, only
 * for later runs that never come. Read in place, the decoder's first result came
 * without 1.2 GB of reorders and freshly zeroed pages (issue 23). */
gl_status gl_session_plan(const gl_session *s, const gl_session_opts *o, const char *backend,
                          const gl_dataset *d, gl_exec **out)
{
    gl_exec_options eo = gl_session_run_options(o, backend, s->model, d);
    eo.dnnl_weights_in_place = true;
    return gl_exec_create(s->model, &eo, out);
}

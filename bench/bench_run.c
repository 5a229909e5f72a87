/* bench_run.c — how long a model takes to run on the reference kernels and on oneDNN.
 *
 *   bench_run [-n RUNS] [-w WARMUP] [-t THREADS] MODEL...
 *
 * Each MODEL runs on the inputs of its test_data_set_0 folder (beside model.onnx). Per
 * backend, one plan is built; its first run is timed on its own ("1st": oneDNN builds
 * its primitives there), then WARMUP more untimed runs (default 3), then RUNS timed runs
 * (default 10) whose median is reported. The dnnl outputs are checked against the data
 * set's expected outputs (rtol 1e-3, atol 1e-4) so a fast wrong answer shows. THREADS
 * (default 0: OpenMP's default, OMP_NUM_THREADS or one per core) goes to the dnnl
 * backend; the reference kernels are single-threaded.
 */
#include "exec/compare.h"
#include "onnx/dataset.h"
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "bench/benchutil.h"

#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RUNS 1000

typedef struct bench_opts {
    int runs, warmup, threads;
} bench_opts;

typedef struct timing {
    bool ok;
    double first_ms, median_ms;
    bool outputs_ok; /* against the data set's expected outputs */
} timing;

static void free_outputs(gl_tensor **outs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gl_tensor_free(outs[i]);
        outs[i] = NULL;
    }
}

static bool outputs_match(const gl_dataset *d, gl_tensor *const *outs)
{
    for (size_t i = 0; i < d->n_outputs; i++) {
        if (!d->expected[i])
            continue;
        gl_compare r;
        gl_compare_tensors(outs[i], d->expected[i], 1e-3, 1e-4, &r);
        if (!r.ok)
            return false;
    }
    return true;
}

/* One timed run; false (message printed) on failure. */
static bool timed_run(gl_exec *e, const gl_dataset *d, gl_tensor **outs, double *ms)
{
    double t0 = bench_now_seconds();
    gl_status st = gl_exec_run(e, (const gl_tensor *const *)d->inputs, d->n_inputs, outs,
                               d->n_outputs);
    *ms = (bench_now_seconds() - t0) * 1e3;
    if (st != GL_OK)
        fprintf(stderr, "bench_run: %s\n", gl_error_message());
    return st == GL_OK;
}

static timing bench_backend(const gl_model *m, const gl_dataset *d, const char *backend,
                            const bench_opts *o)
{
    timing t = {0};
    gl_exec_options eo = {.backend = backend, .threads = o->threads};
    gl_exec *e = NULL;
    if (gl_exec_create(m, &eo, &e) != GL_OK) {
        fprintf(stderr, "bench_run: %s\n", gl_error_message());
        return t;
    }
    gl_tensor **outs = calloc(d->n_outputs ? d->n_outputs : 1, sizeof(*outs));
    double samples[MAX_RUNS];
    bool ok = timed_run(e, d, outs, &t.first_ms);
    t.outputs_ok = ok && outputs_match(d, outs);
    free_outputs(outs, d->n_outputs);
    for (int i = 0; ok && i < o->warmup; i++) {
        double ms;
        ok = timed_run(e, d, outs, &ms);
        free_outputs(outs, d->n_outputs);
    }
    for (int i = 0; ok && i < o->runs; i++) {
        ok = timed_run(e, d, outs, &samples[i]);
        free_outputs(outs, d->n_outputs);
    }
    if (ok)
        t.median_ms = bench_median(samples, o->runs);
    t.ok = ok;
    free(outs);
    gl_exec_free(e);
    return t;
}

static void bench_model(const char *path, const bench_opts *o)
{
    char *copy = strdup(path);
    char data_dir[4096];
    snprintf(data_dir, sizeof(data_dir), "%s/test_data_set_0", dirname(copy));
    char *name_copy = strdup(data_dir);
    const char *name = basename(dirname(name_copy)); /* the model's folder */
    gl_model *m = NULL;
    gl_dataset d = {0};
    if (gl_model_load(path, NULL, &m) != GL_OK ||
        gl_dataset_load(m->graph, data_dir, &d) != GL_OK) {
        printf("%-32s %s\n", name, gl_error_message());
        gl_model_free(m);
        free(copy);
        free(name_copy);
        return;
    }
    size_t builds = gl_backend_dnnl_builds();
    timing ref = bench_backend(m, &d, "ref", o);
    timing dn = bench_backend(m, &d, "dnnl", o);
    builds = gl_backend_dnnl_builds() - builds;
    if (ref.ok && dn.ok)
        printf("%-32s %6zu %10.2f %10.2f %8.1fx %10.2f %6zu  %s\n", name, m->graph->n_nodes,
               ref.median_ms, dn.median_ms, ref.median_ms / dn.median_ms, dn.first_ms, builds,
               dn.outputs_ok ? "ok" : "MISMATCH");
    else
        printf("%-32s run failed\n", name);
    gl_dataset_free(&d);
    gl_model_free(m);
    free(copy);
    free(name_copy);
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_run [-n RUNS] [-w WARMUP] [-t THREADS] MODEL...\n"
                    "  each MODEL runs on the inputs of test_data_set_0 beside it\n");
    return 2;
}

int main(int argc, char **argv)
{
    bench_opts o = {.runs = 10, .warmup = 3, .threads = 0};
    int c;
    while ((c = getopt(argc, argv, "n:w:t:")) != -1) {
        char *end;
        long v = strtol(optarg, &end, 10);
        if (*end || v < 0 || v > MAX_RUNS)
            return usage();
        if (c == 'n')
            o.runs = (int)v;
        else if (c == 'w')
            o.warmup = (int)v;
        else if (c == 't')
            o.threads = (int)v;
        else
            return usage();
    }
    if (optind >= argc || o.runs < 1)
        return usage();
    char threads[32];
    snprintf(threads, sizeof(threads), o.threads ? "%d" : "default", o.threads);
    printf("median of %d runs after %d warm-up runs; dnnl threads: %s\n", o.runs, o.warmup,
           threads);
    printf("%-32s %6s %10s %10s %9s %10s %6s  %s\n", "model", "nodes", "ref ms", "dnnl ms",
           "speedup", "dnnl 1st", "prims", "dnnl outputs");
    for (int i = optind; i < argc; i++)
        bench_model(argv[i], &o);
    return 0;
}

/* bench_pipeline.c — what keeping every step costs.
 *
 *   bench_pipeline [-n RUNS] [-p PASSES] MODEL...
 *
 * For each model, RUNS times (default 5), in a fresh child each so peak RSS is the run's
 * own: load, then run the pipeline (default "all") twice — once keeping a snapshot per
 * step (what the workbench and `export` do), once keeping only the last model (what
 * `optimize` does, the baseline). Reports median times, peak RSS of each, and the
 * difference per snapshot. Tensor bytes are shared between snapshots, so the cost is
 * the graph structure alone.
 */
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "bench/benchutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RUNS 100

typedef struct sample {
    bool ok;
    double load_s, run_s;
    long peak_kb;
    double heap_after_load_mb, heap_after_run_mb; /* malloc'd bytes in use */
    size_t steps, nodes;
} sample;

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static double heap_in_use_mb(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (double)(mi.uordblks + mi.hblkhd) / (1024.0 * 1024.0);
}

static void one_run(const char *path, const char *passes, unsigned flags, sample *s)
{
    memset(s, 0, sizeof(*s));
    gl_pass_step *plan;
    size_t n_plan;
    gl_model *m;
    if (gl_pass_list_parse(passes, &plan, &n_plan) != GL_OK)
        return;
    double t0 = bench_now_seconds();
    if (gl_model_load(path, NULL, &m) != GL_OK) {
        fprintf(stderr, "bench_pipeline: %s\n", gl_error_message());
        free(plan);
        return;
    }
    double t1 = bench_now_seconds();
    s->heap_after_load_mb = heap_in_use_mb();
    gl_pipeline *p;
    gl_status st = gl_pipeline_run(m, plan, n_plan, NULL, flags, &p);
    double t2 = bench_now_seconds();
    s->ok = st == GL_OK;
    s->load_s = t1 - t0;
    s->run_s = t2 - t1;
    s->peak_kb = peak_rss_kb();
    s->heap_after_run_mb = heap_in_use_mb();
    s->steps = p->n_steps;
    s->nodes = p->steps[0].nodes;
    gl_pipeline_free(p);
    free(plan);
}

/* Run in a child so ru_maxrss belongs to this run alone. */
static sample run_in_child(const char *path, const char *passes, unsigned flags)
{
    sample s = {0};
    int fd[2];
    if (pipe(fd) != 0)
        return s;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        one_run(path, passes, flags, &s);
        ssize_t w = write(fd[1], &s, sizeof(s));
        _exit(w == (ssize_t)sizeof(s) ? 0 : 1);
    }
    close(fd[1]);
    if (read(fd[0], &s, sizeof(s)) != (ssize_t)sizeof(s))
        s.ok = false;
    close(fd[0]);
    waitpid(pid, NULL, 0);
    return s;
}

static void bench_model(const char *path, const char *passes, int runs)
{
    double run_keep[MAX_RUNS], run_last[MAX_RUNS], peak_keep[MAX_RUNS], peak_last[MAX_RUNS];
    double heap_load[MAX_RUNS], heap_keep[MAX_RUNS], heap_last[MAX_RUNS];
    size_t steps = 0, nodes = 0;
    for (int r = 0; r < runs; r++) {
        sample a = run_in_child(path, passes, GL_PIPELINE_KEEP_SNAPSHOTS);
        sample b = run_in_child(path, passes, 0);
        if (!a.ok || !b.ok) {
            printf("%s: the pipeline failed\n", path);
            return;
        }
        run_keep[r] = a.run_s * 1e3;
        run_last[r] = b.run_s * 1e3;
        peak_keep[r] = (double)a.peak_kb / 1024;
        peak_last[r] = (double)b.peak_kb / 1024;
        heap_load[r] = a.heap_after_load_mb;
        heap_keep[r] = a.heap_after_run_mb;
        heap_last[r] = b.heap_after_run_mb;
        steps = a.steps;
        nodes = a.nodes;
    }
    double hk = bench_median(heap_keep, runs), hl = bench_median(heap_last, runs);
    printf("%-36.36s %7zu %5zu %9.1f %9.1f %8.1f %8.1f %8.1f %9.1f %9.1f %8.2f\n", path, nodes,
           steps, bench_median(run_keep, runs), bench_median(run_last, runs),
           bench_median(peak_keep, runs), bench_median(peak_last, runs),
           bench_median(heap_load, runs), hk, hl,
           steps > 1 ? (hk - hl) / (double)(steps - 1) : 0.0);
}

int main(int argc, char **argv)
{
    int runs = 5;
    const char *passes = "all";
    int opt;
    while ((opt = getopt(argc, argv, "n:p:")) != -1) {
        if (opt == 'n')
            runs = atoi(optarg);
        else if (opt == 'p')
            passes = optarg;
        else {
            fprintf(stderr, "usage: bench_pipeline [-n RUNS] [-p PASSES] MODEL...\n");
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS || optind >= argc) {
        fprintf(stderr, "usage: bench_pipeline [-n RUNS 1..%d] [-p PASSES] MODEL...\n",
                MAX_RUNS);
        return 2;
    }
    printf("# pipeline '%s', %d runs each, medians; MB = 2^20 bytes; each run in its own "
           "child\n", passes, runs);
    printf("# keep/last: with a snapshot per step / only the result; peak = peak RSS; heap =\n"
           "# malloc'd bytes in use after load and after the pipeline; MB/snap = heap cost of\n"
           "# one snapshot (tensor bytes are shared, so this is the graph structure)\n");
    printf("%-36s %7s %5s %9s %9s %8s %8s %8s %9s %9s %8s\n", "model", "nodes", "steps",
           "keep ms", "last ms", "peak kp", "peak ls", "heap ld", "heap kp", "heap ls",
           "MB/snap");
    for (int i = optind; i < argc; i++)
        bench_model(argv[i], passes, runs);
    return 0;
}

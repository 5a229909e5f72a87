/* bench_dnnl_threads.c — where a oneDNN primitive stops paying for its second thread.
 *
 *   bench/bench_dnnl_threads [-r ROUNDS] [-n RUNS]
 *
 * For binary add, eltwise relu and matmul at a ladder of sizes, the primitive is made and
 * run under 1 and under 2 OpenMP threads (oneDNN 2.6 reads the thread count when a
 * primitive is made and when it runs: both are set), in interleaved rounds. Per case: the
 * minimum and the median of RUNS executions (execute + wait) per thread count, and the
 * ratio of the two minimums (the minimum is what a quiet machine gives; on a loaded one
 * the median of the 2-thread runs also pays for a second thread that is not scheduled).
 * The oneDNN backend's threshold for running a primitive on one thread (DN_ONE_THREAD_NS
 * in src/exec/dnnl/dn_node.c) comes from this table.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */

#include "bench_dnnl.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call) BENCH_DNNL_CHECK("bench_dnnl_threads", call)

static dnnl_engine_t engine;
static dnnl_stream_t stream;

static void set_threads(int n)
{
    void (*set)(int) = NULL;
    *(void **)&set = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (set)
        set(n);
}

typedef struct bcase {
    const char *kind;      /* "add", "relu", "matmul" */
    int64_t m, k, n;       /* add/relu: m elements */
} bcase;

static void md2(dnnl_memory_desc_t *md, int64_t a, int64_t b)
{
    dnnl_dims_t d = {a, b};
    CHECK(dnnl_memory_desc_init_by_tag(md, 2, d, dnnl_f32, dnnl_ab));
}

/* Make the case's primitive under `threads`, run it `runs` times, times into ns[]. */
static void run_case(const bcase *c, int threads, int runs, double *ns)
{
    set_threads(threads);
    dnnl_memory_desc_t a, b, d;
    dnnl_primitive_desc_t pd;
    int nargs = 0;
    dnnl_exec_arg_t args[3];
    if (strcmp(c->kind, "matmul") == 0) {
        md2(&a, c->m, c->k);
        md2(&b, c->k, c->n);
        md2(&d, c->m, c->n);
        dnnl_matmul_desc_t mm;
        CHECK(dnnl_matmul_desc_init(&mm, &a, &b, NULL, &d));
        CHECK(dnnl_primitive_desc_create(&pd, &mm, NULL, engine, NULL));
    } else if (strcmp(c->kind, "add") == 0) {
        md2(&a, 1, c->m);
        b = d = a;
        dnnl_binary_desc_t bd;
        CHECK(dnnl_binary_desc_init(&bd, dnnl_binary_add, &a, &b, &d));
        CHECK(dnnl_primitive_desc_create(&pd, &bd, NULL, engine, NULL));
    } else {
        md2(&a, 1, c->m);
        d = a;
        dnnl_eltwise_desc_t ed;
        CHECK(dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, dnnl_eltwise_relu,
                                             &a, 0.0f, 0.0f));
        CHECK(dnnl_primitive_desc_create(&pd, &ed, NULL, engine, NULL));
    }
    dnnl_primitive_t prim;
    CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_t ma, mb = NULL, md;
    CHECK(dnnl_memory_create(&ma, &a, engine, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_create(&md, &d, engine, DNNL_MEMORY_ALLOCATE));
    if (strcmp(c->kind, "relu") != 0)
        CHECK(dnnl_memory_create(&mb, &b, engine, DNNL_MEMORY_ALLOCATE));
    bool mm = strcmp(c->kind, "matmul") == 0;
    args[nargs++] = (dnnl_exec_arg_t){mm ? DNNL_ARG_SRC : DNNL_ARG_SRC_0, ma};
    if (mb)
        args[nargs++] = (dnnl_exec_arg_t){mm ? DNNL_ARG_WEIGHTS : DNNL_ARG_SRC_1, mb};
    args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, md};
    bench_dnnl_time("bench_dnnl_threads", prim, stream, nargs, args, 5, runs, ns);
    dnnl_memory_destroy(ma);
    dnnl_memory_destroy(md);
    if (mb)
        dnnl_memory_destroy(mb);
    dnnl_primitive_destroy(prim);
}

static double min_of(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

int main(int argc, char **argv)
{
    int rounds = 5, runs = 200, opt;
    while ((opt = getopt(argc, argv, "r:n:")) != -1) {
        if (opt == 'r')
            rounds = atoi(optarg);
        else if (opt == 'n')
            runs = atoi(optarg);
        else
            return fprintf(stderr, "usage: bench_dnnl_threads [-r ROUNDS] [-n RUNS]\n"), 2;
    }
    if (rounds < 1 || runs < 1)
        return fprintf(stderr, "bench_dnnl_threads: -r and -n take positive numbers\n"), 2;
    static const bcase cases[] = {
        {"add", 4096, 0, 0},      {"add", 16384, 0, 0},     {"add", 65536, 0, 0},
        {"add", 262144, 0, 0},    {"add", 1048576, 0, 0},   {"relu", 4096, 0, 0},
        {"relu", 16384, 0, 0},    {"relu", 65536, 0, 0},    {"relu", 262144, 0, 0},
        {"relu", 1048576, 0, 0},  {"matmul", 16, 16, 128},  {"matmul", 16, 128, 128},
        {"matmul", 16, 128, 384}, {"matmul", 16, 128, 512}, {"matmul", 16, 512, 128},
        {"matmul", 32, 256, 1024}, {"matmul", 32, 1024, 512}, {"matmul", 64, 256, 256},
        {"matmul", 128, 512, 512}, {"matmul", 256, 1024, 1024},
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    CHECK(dnnl_engine_create(&engine, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
    double *all = malloc(sizeof(double) * N * 2 * (size_t)rounds * (size_t)runs);
    double *ns = malloc(sizeof(double) * (size_t)runs);
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < N; i++)
            for (int t = 0; t < 2; t++) {
                run_case(&cases[i], t + 1, runs, ns);
                memcpy(all + (((size_t)i * 2 + (size_t)t) * (size_t)rounds + (size_t)r) *
                                 (size_t)runs,
                       ns, sizeof(double) * (size_t)runs);
            }
    printf("load average: ");
    FILE *f = fopen("/proc/loadavg", "r");
    char load[64] = "?";
    if (f && fgets(load, sizeof(load), f))
        printf("%s", load);
    else
        printf("?\n");
    if (f)
        fclose(f);
    printf("%-8s %6s %6s %6s %10s %10s %10s %10s %8s %12s\n", "kind", "m", "k", "n", "1t min",
           "2t min", "1t med", "2t med", "min 2/1", "1t ns/unit");
    for (int i = 0; i < N; i++) {
        const bcase *c = &cases[i];
        size_t per = (size_t)rounds * (size_t)runs;
        double *v1 = all + (size_t)i * 2 * per, *v2 = v1 + per;
        double min1 = min_of(v1, (int)per), min2 = min_of(v2, (int)per);
        double med1 = bench_median(v1, (int)per), med2 = bench_median(v2, (int)per);
        /* ns per element, or per 1000 FLOPs */
        double units = strcmp(c->kind, "matmul") == 0
                           ? 2.0 * (double)c->m * (double)c->k * (double)c->n / 1000.0
                           : (double)c->m;
        printf("%-8s %6lld %6lld %6lld %10.0f %10.0f %10.0f %10.0f %8.2f %12.3f\n", c->kind,
               (long long)c->m, (long long)c->k, (long long)c->n, min1, min2, med1, med2,
               min2 / min1, min1 / units);
    }
    free(all);
    free(ns);
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(engine);
    return 0;
}

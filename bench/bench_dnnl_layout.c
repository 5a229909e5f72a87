/* bench_dnnl_layout.c — what a convolution costs in nhwc and in oneDNN's blocked layout.
 *
 *   bench/bench_dnnl_layout [-r ROUNDS] [-n RUNS] [-t THREADS]
 *
 * For a ladder of f32 convolutions taken from the torchvision corpus (1x1 with few and
 * many channels, 3x3, depthwise 3x3/5x5, strided), the primitive is made with source and
 * destination fixed to nhwc and to nChw16c (nChw8c without AVX-512), weights left to
 * oneDNN, and run in interleaved rounds. Per case: each layout's implementation name and
 * time (the median over rounds of each round's fastest run), and the ratio; the same
 * with a SiLU (eltwise_swish) post-op, as efficientnet's convolutions carry. Then the reorder between the two layouts at a few sizes,
 * as bytes per nanosecond (fastest run): the price of a layout change at a region boundary.
 * The oneDNN backend's layout cost model (src/exec/dnnl/dn_cost.c) comes from this table.
 */
#include "bench_dnnl.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call) BENCH_DNNL_CHECK("bench_dnnl_layout", call)

static dnnl_engine_t engine;
static dnnl_stream_t stream;

typedef struct ccase {
    int64_t ic, oc, hw, k, stride, group;
} ccase;

static double run_prim(dnnl_primitive_t prim, int nargs, dnnl_exec_arg_t *args, int runs,
                       double *ns)
{
    bench_dnnl_time("bench_dnnl_layout", prim, stream, nargs, args, 3, runs, ns);
    /* The minimum: what a quiet machine gives (on a loaded one the median of a
     * 2-thread run mostly measures the second thread waiting to be scheduled). */
    double m = ns[0];
    for (int r = 1; r < runs; r++)
        m = ns[r] < m ? ns[r] : m;
    return m;
}

/* The convolution of c with activations in `tag` (Winograd's algorithm when `winograd`):
 * its median time, its implementation. */
static double time_conv(const ccase *c, dnnl_format_tag_t tag, bool swish, bool winograd,
                        int runs, double *ns, char *impl, size_t len)
{
    int64_t pad = c->k / 2, out = (c->hw + 2 * pad - c->k) / c->stride + 1;
    dnnl_dims_t sd = {1, c->ic, c->hw, c->hw}, dd = {1, c->oc, out, out};
    dnnl_dims_t wd = {c->group, c->oc / c->group, c->ic / c->group, c->k, c->k};
    dnnl_dims_t st = {c->stride, c->stride}, pl = {pad, pad}, bd = {c->oc};
    dnnl_memory_desc_t src, dst, wei, bias;
    CHECK(dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, tag));
    CHECK(dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, tag));
    CHECK(dnnl_memory_desc_init_by_tag(&wei, 5, wd, dnnl_f32, dnnl_format_tag_any));
    CHECK(dnnl_memory_desc_init_by_tag(&bias, 1, bd, dnnl_f32, dnnl_a));
    dnnl_convolution_desc_t cd;
    CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                             winograd ? dnnl_convolution_winograd
                                                      : dnnl_convolution_direct,
                                             &src, &wei, &bias, &dst,
                                             st, pl, pl));
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t post = NULL;
    if (swish) { /* a SiLU fused into the convolution, as efficientnet's are */
        CHECK(dnnl_primitive_attr_create(&attr));
        CHECK(dnnl_post_ops_create(&post));
        CHECK(dnnl_post_ops_append_eltwise(post, 1.0f, dnnl_eltwise_swish, 1.0f, 0.0f));
        CHECK(dnnl_primitive_attr_set_post_ops(attr, post));
        dnnl_post_ops_destroy(post);
    }
    dnnl_primitive_desc_t pd;
    CHECK(dnnl_primitive_desc_create(&pd, &cd, attr, engine, NULL));
    dnnl_primitive_attr_destroy(attr);
    const char *name = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name);
    snprintf(impl, len, "%s", name);
    const dnnl_memory_desc_t *w = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_memory_t ms, md, mw, mb;
    CHECK(dnnl_memory_create(&ms, &src, engine, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_create(&md, &dst, engine, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_create(&mw, w, engine, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_create(&mb, &bias, engine, DNNL_MEMORY_ALLOCATE));
    dnnl_primitive_t prim;
    CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw},
                              {DNNL_ARG_BIAS, mb}, {DNNL_ARG_DST, md}};
    double t = run_prim(prim, 4, args, runs, ns);
    dnnl_primitive_destroy(prim);
    dnnl_memory_destroy(ms);
    dnnl_memory_destroy(md);
    dnnl_memory_destroy(mw);
    dnnl_memory_destroy(mb);
    return t;
}

/* The reorder of a [1,C,H,W] tensor from one layout to the other: median ns. */
static double time_reorder(int64_t ch, int64_t hw, dnnl_format_tag_t from, dnnl_format_tag_t to,
                           int runs, double *ns)
{
    dnnl_dims_t d = {1, ch, hw, hw};
    dnnl_memory_desc_t a, b;
    CHECK(dnnl_memory_desc_init_by_tag(&a, 4, d, dnnl_f32, from));
    CHECK(dnnl_memory_desc_init_by_tag(&b, 4, d, dnnl_f32, to));
    dnnl_primitive_desc_t pd;
    CHECK(dnnl_reorder_primitive_desc_create(&pd, &a, engine, &b, engine, NULL));
    dnnl_primitive_t prim;
    CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_t ma, mb;
    CHECK(dnnl_memory_create(&ma, &a, engine, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_create(&mb, &b, engine, DNNL_MEMORY_ALLOCATE));
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, ma}, {DNNL_ARG_TO, mb}};
    double t = run_prim(prim, 2, args, runs, ns);
    dnnl_primitive_destroy(prim);
    dnnl_memory_destroy(ma);
    dnnl_memory_destroy(mb);
    return t;
}

/* 3x3 stride-1 convolutions on blocked activations, direct against Winograd (which oneDNN
 * 2.6 has on AVX-512 only, and on blocked activations only): the row of dn_cost.c's
 * WINOGRAD_OVER_DIRECT and the channel floor of dn_winograd_fits. */
static void print_winograd(dnnl_format_tag_t blocked, int rounds, int runs, double *ns)
{
    static const ccase cases[] = {
        {16, 16, 56, 3, 1, 1},    {32, 32, 112, 3, 1, 1},   {48, 48, 28, 3, 1, 1},
        {64, 64, 56, 3, 1, 1},    {96, 96, 14, 3, 1, 1},    {128, 128, 28, 3, 1, 1},
        {256, 256, 14, 3, 1, 1},  {512, 512, 7, 3, 1, 1},
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    int nr = rounds < 8 ? rounds : 8;
    printf("\n3x3 stride 1, blocked: direct against Winograd (median of rounds)\n");
    printf("%5s %5s %4s  %-22s %9s  %-22s %9s %6s\n", "ic", "oc", "hw", "direct impl",
           "us", "winograd impl", "us", "w/d");
    for (int i = 0; i < N; i++) {
        double d[8], w[8];
        char di[48], wi[48];
        for (int r = 0; r < nr; r++) {
            d[r] = time_conv(&cases[i], blocked, false, false, runs, ns, di, sizeof(di));
            w[r] = time_conv(&cases[i], blocked, false, true, runs, ns, wi, sizeof(wi));
        }
        double dm = bench_median(d, nr) / 1e3, wm = bench_median(w, nr) / 1e3;
        printf("%5lld %5lld %4lld  %-22.22s %9.1f  %-22.22s %9.1f %6.2f\n",
               (long long)cases[i].ic, (long long)cases[i].oc, (long long)cases[i].hw, di, dm,
               wi, wm, wm / dm);
    }
}

int main(int argc, char **argv)
{
    int rounds = 3, runs = 30, threads = 2, opt;
    while ((opt = getopt(argc, argv, "r:n:t:")) != -1) {
        if (opt == 'r')
            rounds = atoi(optarg);
        else if (opt == 'n')
            runs = atoi(optarg);
        else if (opt == 't')
            threads = atoi(optarg);
        else
            return fprintf(stderr, "usage: bench_dnnl_layout [-r ROUNDS] [-n RUNS] "
                                   "[-t THREADS]\n"), 2;
    }
    if (rounds < 1 || runs < 1 || threads < 1)
        return fprintf(stderr, "bench_dnnl_layout: -r, -n and -t take positive numbers\n"), 2;
    void (*set_threads)(int) = NULL;
    *(void **)&set_threads = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (set_threads)
        set_threads(threads);
    /* {ic, oc, hw, k, stride, group} */
    static const ccase cases[] = {
        {16, 96, 112, 1, 1, 1},    {24, 144, 56, 1, 1, 1},  {144, 24, 56, 1, 1, 1},
        {40, 240, 28, 1, 1, 1},    {240, 40, 28, 1, 1, 1},  {80, 480, 14, 1, 1, 1},
        {480, 80, 14, 1, 1, 1},    {112, 672, 14, 1, 1, 1}, {192, 1152, 7, 1, 1, 1},
        {1152, 192, 7, 1, 1, 1},   {320, 1280, 7, 1, 1, 1}, {32, 16, 112, 1, 1, 1},
        {64, 256, 56, 1, 1, 1},    {256, 64, 56, 1, 1, 1},  {1024, 256, 14, 1, 1, 1},
        {512, 2048, 7, 1, 1, 1},   {96, 4, 1, 1, 1, 1},     {4, 96, 1, 1, 1, 1},
        {3, 32, 224, 3, 2, 1},     {64, 64, 56, 3, 1, 1},   {128, 128, 28, 3, 1, 1},
        {256, 256, 14, 3, 1, 1},   {512, 512, 7, 3, 1, 1},  {32, 32, 112, 3, 1, 32},
        {96, 96, 112, 3, 2, 96},   {144, 144, 56, 5, 2, 144}, {240, 240, 28, 3, 2, 240},
        {480, 480, 14, 5, 1, 480}, {672, 672, 14, 5, 2, 672}, {1152, 1152, 7, 3, 1, 1152},
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    CHECK(dnnl_engine_create(&engine, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    bool b16 = (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
    dnnl_format_tag_t tags[2] = {dnnl_nhwc, b16 ? dnnl_nChw16c : dnnl_nChw8c};
    double *ns = malloc(sizeof(double) * (size_t)runs);
    double med[N][4][8];
    char impl[N][4][48];
    for (int r = 0; r < rounds && r < 8; r++)
        for (int i = 0; i < N; i++)
            for (int t = 0; t < 4; t++)
                med[i][t][r] = time_conv(&cases[i], tags[t % 2], t >= 2, false, runs, ns,
                                         impl[i][t], 48);
    printf("threads %d, blocked = %s\n", threads, b16 ? "nChw16c" : "nChw8c");
    printf("%5s %5s %4s %2s %2s %5s  %-22s %9s  %-22s %9s %6s %9s %9s %6s\n", "ic", "oc", "hw",
           "k", "s", "group", "nhwc impl", "nhwc us", "blocked impl", "blk us", "n/b",
           "+swish n", "+swish b", "n/b");
    int nr = rounds < 8 ? rounds : 8;
    for (int i = 0; i < N; i++) {
        const ccase *c = &cases[i];
        double a = bench_median(med[i][0], nr) / 1e3, b = bench_median(med[i][1], nr) / 1e3;
        double sa = bench_median(med[i][2], nr) / 1e3, sb = bench_median(med[i][3], nr) / 1e3;
        printf("%5lld %5lld %4lld %2lld %2lld %5lld  %-22.22s %9.1f  %-22.22s %9.1f %6.2f %9.1f "
               "%9.1f %6.2f\n",
               (long long)c->ic, (long long)c->oc, (long long)c->hw, (long long)c->k,
               (long long)c->stride, (long long)c->group, impl[i][0], a, impl[i][1], b, a / b,
               sa, sb, sa / sb);
    }
    static const int64_t sizes[][2] = {{96, 112}, {144, 56}, {240, 28}, {480, 14}, {1152, 7}};
    printf("\nreorder nhwc <-> blocked (bytes per ns, fastest run)\n");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        double bytes = 4.0 * (double)(sizes[i][0] * sizes[i][1] * sizes[i][1]);
        double to_b = time_reorder(sizes[i][0], sizes[i][1], tags[0], tags[1], runs, ns);
        double to_n = time_reorder(sizes[i][0], sizes[i][1], tags[1], tags[0], runs, ns);
        printf("C %5lld HW %4lld: %8.0f bytes  to blocked %7.1f us (%5.2f B/ns)  to nhwc %7.1f "
               "us (%5.2f B/ns)\n",
               (long long)sizes[i][0], (long long)sizes[i][1], bytes, to_b / 1e3, bytes / to_b,
               to_n / 1e3, bytes / to_n);
    }
    if (b16)
        print_winograd(dnnl_nChw16c, rounds, runs, ns);
    else
        printf("\nno Winograd table: oneDNN 2.6 has its f32 Winograd on AVX-512 only\n");
    free(ns);
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(engine);
    return 0;
}

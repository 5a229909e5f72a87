/* bench_dnnl.h — what the benches that link libdnnl share: a checked call, and timing
 * one primitive. */
#ifndef GL_BENCH_DNNL_H
#define GL_BENCH_DNNL_H

#include "benchutil.h"

#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>

/* A oneDNN call that must succeed: else the program `prog` says which call failed and
 * exits 1. */
#define BENCH_DNNL_CHECK(prog, call)                                                       \
    do {                                                                                   \
        dnnl_status_t r_ = (call);                                                         \
        if (r_ != dnnl_success) {                                                          \
            fprintf(stderr, "%s: %s failed (%d)\n", prog, #call, (int)r_);                \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* Run prim `warmup` times untimed, then `runs` times (execute + wait), ns[] receiving
 * each run's nanoseconds. */
static inline void bench_dnnl_time(const char *prog, dnnl_primitive_t prim, dnnl_stream_t stream,
                                   int nargs, const dnnl_exec_arg_t *args, int warmup, int runs,
                                   double *ns)
{
    for (int w = 0; w < warmup; w++) {
        BENCH_DNNL_CHECK(prog, dnnl_primitive_execute(prim, stream, nargs, args));
        BENCH_DNNL_CHECK(prog, dnnl_stream_wait(stream));
    }
    for (int r = 0; r < runs; r++) {
        double t0 = bench_now_seconds();
        BENCH_DNNL_CHECK(prog, dnnl_primitive_execute(prim, stream, nargs, args));
        BENCH_DNNL_CHECK(prog, dnnl_stream_wait(stream));
        ns[r] = (bench_now_seconds() - t0) * 1e9;
    }
}

#endif

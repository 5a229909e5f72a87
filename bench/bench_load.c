/* bench_load.c — how fast graphlab loads a model, next to protobuf-c's bare unpack.
 *
 *   bench_load [-n RUNS] MODEL...
 *
 * For each model, RUNS times (default 5) each, after one untimed warm-up that brings the
 * file into the page cache:
 *   load    gl_model_load(path): read, unpack, build the IR, free nothing;
 *   unpack  onnx__model_proto__unpack of the file's bytes already in memory: the floor
 *           the loader is measured against (the number in the issue is load / unpack);
 *   read    reading the file into a malloc'd buffer, reported for scale.
 * Every run happens in a fresh child (fork) so that its peak RSS (ru_maxrss) is its
 * own: the parent never touches the model, so a child starts at the parent's few MB.
 * Medians are printed; MB are 10^6 bytes.
 */
#include "onnx/onnx_io.h"
#include "onnx.pb-c.h"
#include "bench/benchutil.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RUNS 5
#define MAX_RUNS 1000

/* What one child reports back through its pipe. */
typedef struct run_sample {
    bool ok;
    double seconds;      /* the timed step alone */
    double read_seconds; /* unpack runs: reading the file first */
    long peak_rss_kb;    /* ru_maxrss at the end of the run */
    char error[256];
} run_sample;

typedef enum run_kind { RUN_LOAD, RUN_UNPACK } run_kind;

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss; /* kilobytes on Linux */
}

static bool read_whole_file(const char *path, uint8_t **data, size_t *len, char *err,
                            size_t err_len)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return false;
    }
    *len = (size_t)st.st_size;
    *data = malloc(*len ? *len : 1);
    bool ok = *data && fread(*data, 1, *len, f) == *len;
    if (!ok)
        snprintf(err, err_len, "%s: cannot read %zu bytes", path, *len);
    fclose(f);
    return ok;
}

static void run_load(const char *path, run_sample *s)
{
    gl_model *m = NULL;
    double t0 = bench_now_seconds();
    gl_status st = gl_model_load(path, NULL, &m);
    s->seconds = bench_now_seconds() - t0;
    s->ok = st == GL_OK;
    if (!s->ok)
        snprintf(s->error, sizeof(s->error), "%s", gl_error_message());
    s->peak_rss_kb = peak_rss_kb();
    gl_model_free(m);
}

static void run_unpack(const char *path, run_sample *s)
{
    uint8_t *data = NULL;
    size_t len = 0;
    double t0 = bench_now_seconds();
    if (!read_whole_file(path, &data, &len, s->error, sizeof(s->error))) {
        free(data);
        return;
    }
    double t1 = bench_now_seconds();
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
    double t2 = bench_now_seconds();
    s->read_seconds = t1 - t0;
    s->seconds = t2 - t1;
    s->ok = mp != NULL;
    if (!s->ok)
        snprintf(s->error, sizeof(s->error), "%s: protobuf-c cannot unpack it", path);
    s->peak_rss_kb = peak_rss_kb();
    if (mp)
        onnx__model_proto__free_unpacked(mp, NULL);
    free(data);
}

/* One run in a fresh child; false (with s->error set) if anything went wrong. */
static bool run_in_child(run_kind kind, const char *path, run_sample *s)
{
    memset(s, 0, sizeof(*s));
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(s->error, sizeof(s->error), "pipe: %s", strerror(errno));
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(s->error, sizeof(s->error), "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        close(fds[0]);
        run_sample mine = {0};
        if (kind == RUN_LOAD)
            run_load(path, &mine);
        else
            run_unpack(path, &mine);
        ssize_t w = write(fds[1], &mine, sizeof(mine));
        _exit(w == (ssize_t)sizeof(mine) ? 0 : 1);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], s, sizeof(*s));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof(*s)) {
        memset(s, 0, sizeof(*s));
        snprintf(s->error, sizeof(s->error), "%s: child died (status %d)", path, status);
        return false;
    }
    return s->ok;
}

/* Medians over `runs` children of one kind. */
typedef struct run_medians {
    double seconds, read_seconds, peak_rss_mb;
} run_medians;

static bool measure(run_kind kind, const char *path, int runs, run_medians *out)
{
    double secs[MAX_RUNS], reads[MAX_RUNS], rss[MAX_RUNS];
    run_sample s;
    if (!run_in_child(kind, path, &s)) { /* warm-up: page cache, lazy binding */
        fprintf(stderr, "bench_load: %s\n", s.error);
        return false;
    }
    for (int i = 0; i < runs; i++) {
        if (!run_in_child(kind, path, &s)) {
            fprintf(stderr, "bench_load: %s\n", s.error);
            return false;
        }
        secs[i] = s.seconds;
        reads[i] = s.read_seconds;
        rss[i] = (double)s.peak_rss_kb * 1024.0 / 1e6;
    }
    out->seconds = bench_median(secs, runs);
    out->read_seconds = bench_median(reads, runs);
    out->peak_rss_mb = bench_median(rss, runs);
    return true;
}

static void print_header(void)
{
    printf("%-32s %8s | %9s %8s | %9s %8s %8s | %7s | %8s %6s | %8s %6s\n", "model",
           "file MB", "load ms", "MB/s", "unpack ms", "MB/s", "read ms", "ratio",
           "load RSS", "/file", "unp RSS", "/file");
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return path;
    /* "NAME/model.onnx" says more than "model.onnx" */
    if (strcmp(slash + 1, "model.onnx") == 0 && slash > path) {
        const char *p = slash - 1;
        while (p > path && p[-1] != '/')
            p--;
        return p;
    }
    return slash + 1;
}

static bool bench_model(const char *path, int runs)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "bench_load: %s: %s\n", path, strerror(errno));
        return false;
    }
    run_medians load, unpack;
    if (!measure(RUN_LOAD, path, runs, &load) || !measure(RUN_UNPACK, path, runs, &unpack))
        return false;
    double mb = (double)st.st_size / 1e6;
    printf("%-32.32s %8.3f | %9.2f %8.0f | %9.2f %8.0f %8.2f | %7.2f | %8.1f %6.2f | %8.1f "
           "%6.2f\n",
           base_name(path), mb, load.seconds * 1e3, mb / load.seconds, unpack.seconds * 1e3,
           mb / unpack.seconds, unpack.read_seconds * 1e3, load.seconds / unpack.seconds,
           load.peak_rss_mb, load.peak_rss_mb / mb, unpack.peak_rss_mb,
           unpack.peak_rss_mb / mb);
    fflush(stdout);
    return true;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_load [-n RUNS] MODEL...\n"
                    "  median load time of graphlab vs protobuf-c unpack, peak RSS\n");
}

int main(int argc, char **argv)
{
    int runs = DEFAULT_RUNS, opt;
    while ((opt = getopt(argc, argv, "n:h")) != -1) {
        if (opt == 'n') {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > MAX_RUNS) {
                fprintf(stderr, "bench_load: -n wants 1..%d runs, not '%s'\n", MAX_RUNS,
                        optarg);
                return 2;
            }
            runs = (int)v;
        } else {
            usage();
            return opt == 'h' ? 0 : 2;
        }
    }
    if (optind == argc) {
        usage();
        return 2;
    }
    printf("# %d runs per model (medians), each in a fresh child; parent peak RSS %.1f MB\n",
           runs, (double)peak_rss_kb() * 1024.0 / 1e6);
    printf("# ratio = load ms / unpack ms; RSS in MB, /file = peak RSS / file size\n");
    print_header();
    int failed = 0;
    for (int i = optind; i < argc; i++)
        failed += !bench_model(argv[i], runs);
    return failed ? 1 : 0;
}

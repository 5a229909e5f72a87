/* bench_render — what dot's layout of a model's drawing costs, and what each degradation
 * of render.h buys.
 *
 *   bench/bench_render [-t SECONDS] [-v] MODEL...
 *
 * For each model (the graph as loaded): the drawing render.h chooses ("chosen": boxes,
 * edges, the estimated virtual nodes and work of src/render/cost.c, the note) laid out
 * and drawn as SVG the way graphlab does it (in a forked child), with its wall and CPU
 * time. With -v, also the drawings it could have chosen — the whole graph, constants
 * folded, collapsed into at most 200 and 60 boxes — each laid out with dot's default
 * effort and with the bounded effort (nslimit=1, nslimit1=1, mclimit=0.1). Every layout
 * runs in a child killed after SECONDS (default 60): "timeout" in the table.
 */
#include "onnx/onnx_io.h"
#include "render/stages.h"
#include "util/deadline.h"

#include "benchutil.h"

#include <graphviz/gvc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

extern gvplugin_library_t gvplugin_dot_layout_LTX_library;
extern gvplugin_library_t gvplugin_core_LTX_library;

static const lt_symlist_t BUILTINS[] = {
    {"gvplugin_dot_layout_LTX_library", &gvplugin_dot_layout_LTX_library},
    {"gvplugin_core_LTX_library", &gvplugin_core_LTX_library},
    {NULL, NULL},
};

/* In the child: lay out the DOT text and draw it as SVG; the result is the SVG size. */
static gl_status layout_job(void *ctx, gl_strbuf *out)
{
    GVC_t *gvc = gvContextPlugins(BUILTINS, 0);
    Agraph_t *g = agmemread(ctx);
    if (!g)
        return gl_fail(GL_ERR_INTERNAL, "Graphviz could not parse the DOT");
    gvLayout(gvc, g, "dot");
    char *svg = NULL;
    unsigned int len = 0;
    gvRenderData(gvc, g, "svg", &svg, &len);
    gl_sb_printf(out, "%u", len);
    return GL_OK;
}

static double children_cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static void measure(const char *model, const char *variant, view *v, const settings *set,
                    bool bounded, unsigned timeout_s)
{
    uint64_t work = gl_rv_plan_layout(v); /* xlabels as graphlab would choose them */
    layout_cost c = gl_rv_layout_cost(v, !v->xlabels);
    v->bounded_effort = bounded;
    size_t len = 0;
    char *dot = gl_rv_print_dot(v, set, &len);
    gl_deadline_job job = {layout_job, dot, "the layout process", NULL, timeout_s * 1000u};
    char *bytes = NULL;
    size_t n = 0;
    bool timed_out = false;
    double cpu0 = children_cpu_seconds(), t0 = bench_now_seconds();
    gl_status st = gl_run_with_deadline(&job, &bytes, &n, &timed_out);
    double wall = bench_now_seconds() - t0, cpu = children_cpu_seconds() - cpu0;
    const char *result = st == GL_OK ? "ok" : timed_out ? "timeout" : "failed";
    if (st != GL_OK && !timed_out)
        fprintf(stderr, "%s %s: %s\n", model, variant, gl_error_message());
    printf("%-22s %-14s %6zu %6zu %8llu %8.1f %-8s %-8s %8.2f %8.2f\n", model, variant,
           v->n_boxes, v->n_edges, (unsigned long long)c.virtual_nodes, work / 1e6,
           bounded ? "bounded" : "default", result, wall, cpu);
    fflush(stdout);
    free(bytes);
    free(dot);
}

static const char *short_name(const char *path)
{
    const char *end = strrchr(path, '/');
    if (!end || end == path)
        return path;
    if (strcmp(end, "/model.onnx") == 0) { /* a folder of the shared corpus: its name */
        const char *start = end - 1;
        while (start > path && start[-1] != '/')
            start--;
        static char buf[64];
        snprintf(buf, sizeof(buf), "%.*s", (int)(end - start), start);
        return buf;
    }
    return end + 1;
}

int main(int argc, char **argv)
{
    unsigned timeout_s = 60;
    bool variants = false;
    int opt;
    while ((opt = getopt(argc, argv, "t:v")) != -1) {
        if (opt == 't')
            timeout_s = (unsigned)atoi(optarg);
        else if (opt == 'v')
            variants = true;
        else {
            fprintf(stderr, "usage: bench_render [-t SECONDS] [-v] MODEL...\n");
            return 2;
        }
    }
    printf("%-22s %-14s %6s %6s %8s %8s %-8s %-8s %8s %8s\n", "model", "drawing", "boxes",
           "edges", "virtual", "work M", "effort", "result", "wall s", "cpu s");
    for (int i = optind; i < argc; i++) {
        gl_model *m = NULL;
        if (gl_model_load(argv[i], NULL, &m) != GL_OK) {
            fprintf(stderr, "%s\n", gl_error_message());
            return 2;
        }
        const char *name = short_name(argv[i]);
        const gl_graph *g = m->graph;
        settings set = gl_rv_resolve_opts(NULL);
        view v;
        gl_rv_choose_view(g, &set, NULL, &v);
        printf("# %s: %s\n", name, v.note[0] ? v.note : "the whole graph");
        measure(name, "chosen", &v, &set, v.bounded_effort, timeout_s);
        gl_rv_view_free(&v);
        for (int k = 0; variants && k < 4; k++) {
            static const char *const names[] = {"whole", "folded", "collapsed 200",
                                                "collapsed 60"};
            static const size_t collapsed_to[] = {0, 0, 200, 60};
            for (int bounded = 0; bounded < 2; bounded++) {
                settings s = set;
                if (k < 2) {
                    gl_rv_build_node_view(g, &s, NULL, NULL, k == 1, false, &v);
                } else {
                    s.max_boxes = collapsed_to[k];
                    gl_rv_choose_view(g, &s, NULL, &v);
                }
                measure(name, names[k], &v, &s, bounded, timeout_s);
                gl_rv_view_free(&v);
            }
        }
        gl_model_free(m);
    }
    return 0;
}

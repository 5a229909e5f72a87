/* bench_ui_graph.c — what the terminal graph view costs, against graph size.
 *
 *   bench_ui_graph [-n N,N,...] [-r RUNS] [-p FRAMES] [MODEL.onnx ...]
 *
 * Graphs of N nodes (default 100,1000,5000,20000) are generated through the IR edit API:
 * blocks of ten nodes (four branches of two unary ops from the block input, a Sum of
 * them, an Add of the block input), every value float[1,64,56,56], names
 * "/blockK/Op_i". For each, medians of:
 *   layout  gl_render_layout as the view asks for it (GL_GRAPH_VIEW_MAX_BOXES boxes,
 *           constants folded, shared constants once, edge labels as xlabels) around the
 *           node in the middle, radius 2 and 4: Graphviz in a forked child, the job the
 *           view runs on the ui's worker thread. A graph under the box limit is laid out
 *           whole, whatever the radius. The view's automatic radius (the largest that
 *           fits the screen) runs this for radius 2 and then one radius up or down at a
 *           time: usually two or three layouts.
 *   draw    gl_drawing_build of that layout, compact as the view draws it: boxes sized,
 *           scale chosen, edges routed (also on the worker).
 *   paint   one frame: gl_canvas_paint of an 80x24 and a 200x60 viewport into a curses
 *           screen writing to /dev/null, then doupdate; the viewport moves every frame
 *           (panning). This is all a key press costs on the input loop.
 * MODEL files given are measured the same way after the generated graphs (laid out
 * whole when they fit in the box limit, else around their middle node).
 */
#include "bench/benchutil.h"
#include "ir/graph.h"
#include "onnx/onnx_io.h"
#include "render/render.h"
#include "ui/canvas_paint.h"
#include "ui/graph_draw.h"

#include <curses.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_SIZES "100,1000,5000,20000"
#define DEFAULT_RUNS 5
#define DEFAULT_FRAMES 200
#define MAX_RUNS 1000
#define MAX_SIZES 16

/* ---- the generated graph ---- */

static void set_type(gl_value *v)
{
    static const int64_t dims[] = {1, 64, 56, 56};
    v->type.kind = GL_TYPE_TENSOR;
    v->type.dtype = GL_DT_FLOAT;
    gl_shape_set_rank(&v->type.shape, 4);
    for (int i = 0; i < 4; i++)
        v->type.shape.dims[i].value = dims[i];
}

/* One block: four branches of two ops from the block input, summed, plus the input
 * (residual). Inputs are block-local node indices; -1 is the block input. */
static const struct {
    const char *op;
    int in[4];
    size_t n_in;
} block[] = {
    {"Relu", {-1}, 1},    {"Sigmoid", {0}, 1}, {"Tanh", {-1}, 1}, {"Relu", {2}, 1},
    {"Sigmoid", {-1}, 1}, {"Tanh", {4}, 1},    {"Abs", {-1}, 1},  {"Neg", {6}, 1},
    {"Sum", {1, 3, 5, 7}, 4}, {"Add", {8, -1}, 2},
};

static gl_model *branchy_blocks(size_t n_nodes)
{
    gl_model *m = gl_model_new();
    m->ir_version = 8;
    gl_model_set_opset(m, "", 13);
    m->graph = gl_graph_new(m, NULL, "bench_ui_graph");
    gl_graph *g = m->graph;
    gl_value *block_in = gl_add_value(g, "input"), *local[GL_ARRAY_LEN(block)] = {0};
    gl_value *last = block_in;
    set_type(block_in);
    gl_graph_add_input(g, block_in);
    for (size_t i = 0; i < n_nodes; i++) {
        size_t k = i % GL_ARRAY_LEN(block);
        gl_value *ins[4];
        for (size_t a = 0; a < block[k].n_in; a++) {
            int from = block[k].in[a];
            /* a block cut short by n_nodes reads what exists */
            ins[a] = from < 0 || !local[from] ? block_in : local[from];
        }
        char name[64];
        snprintf(name, sizeof(name), "/block%zu/%s_%zu", i / GL_ARRAY_LEN(block), block[k].op, k);
        gl_node *n = gl_add_node(g, block[k].op, "", name, ins, block[k].n_in, 1);
        set_type(n->outputs[0]);
        local[k] = last = n->outputs[0];
        if (k == GL_ARRAY_LEN(block) - 1) {
            block_in = last;
            memset(local, 0, sizeof(local));
        }
    }
    gl_graph_add_output(g, last);
    return m;
}

/* ---- layout and drawing ---- */

typedef struct measured {
    double layout_ms, draw_ms;
    size_t boxes;
    int canvas_w, canvas_h;
    bool reduced;
} measured;

/* Median layout and drawing times; *keep receives the last drawing (for painting). */
static bool measure_layout(const gl_graph *g, const char *focus, int radius, int runs,
                           measured *out, gl_drawing **keep)
{
    double layout[MAX_RUNS], draw[MAX_RUNS];
    *keep = NULL;
    for (int r = 0; r < runs; r++) {
        gl_render_opts o = {.max_nodes = GL_GRAPH_VIEW_MAX_BOXES, .focus = focus,
                            .radius = radius, .fold_constants = true, .shared_once = true,
                            .xlabels = true};
        gl_layout *l = NULL;
        gl_render_info info;
        double t0 = bench_now_seconds();
        if (gl_render_layout(g, &o, &l, &info) != GL_OK) {
            fprintf(stderr, "bench_ui_graph: layout: %s\n", gl_error_message());
            return false;
        }
        double t1 = bench_now_seconds();
        gl_drawing *d = NULL;
        if (gl_drawing_build(l, &(gl_draw_opts){.compact = true}, &d) != GL_OK) {
            fprintf(stderr, "bench_ui_graph: drawing: %s\n", gl_error_message());
            gl_layout_free(l);
            return false;
        }
        layout[r] = (t1 - t0) * 1e3;
        draw[r] = (bench_now_seconds() - t1) * 1e3;
        *out = (measured){0, 0, l->n_nodes, d->canvas->width, d->canvas->height, info.reduced};
        gl_layout_free(l);
        gl_drawing_free(*keep);
        *keep = d;
    }
    out->layout_ms = bench_median(layout, runs);
    out->draw_ms = bench_median(draw, runs);
    return true;
}

/* ---- painting ---- */

static SCREEN *screen;

static bool open_screen(void)
{
    setlocale(LC_ALL, "C.UTF-8");
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    if (!out || !in)
        return false;
    screen = newterm("xterm-256color", out, in);
    return screen != NULL;
}

/* Median time of one frame of a width x height viewport, panned every frame. */
static double measure_paint(const gl_drawing *d, int width, int height, int frames)
{
    resizeterm(height, width);
    gl_paint_style style = {.cursor_box = d->n_order ? (int32_t)d->order[0] : -1, .utf8 = true,
                            .cursor_attr = (int)A_REVERSE};
    style.attr[GL_STYLE_LABEL] = style.attr[GL_STYLE_CONSTANT] = (int)A_DIM;
    int span_x = d->canvas->width > width ? d->canvas->width - width : 1;
    int span_y = d->canvas->height > height ? d->canvas->height - height : 1;
    double *t = malloc((size_t)frames * sizeof(*t));
    for (int f = 0; f < frames; f++) {
        int vx = (f * 7) % span_x, vy = (f * 3) % span_y;
        double t0 = bench_now_seconds();
        gl_canvas_paint(d->canvas, vx, vy, 0, 0, height, width, &style);
        wnoutrefresh(stdscr);
        doupdate();
        t[f] = (bench_now_seconds() - t0) * 1e3;
    }
    double median = bench_median(t, frames);
    free(t);
    return median;
}

/* One table line per radius (2 and 4) for graph g, one when it is drawn whole; false on
 * a failed layout. */
static bool measure_graph(const char *what, const gl_graph *g, int runs, int frames)
{
    const gl_node *mid = NULL, *n;
    size_t seen = 0;
    gl_foreach_node(g, i, n) {
        if (seen++ == g->live_nodes / 2)
            mid = n;
    }
    static const int radii[] = {2, 4};
    for (size_t r = 0; r < GL_ARRAY_LEN(radii); r++) {
        measured me;
        gl_drawing *d = NULL;
        if (!measure_layout(g, mid ? mid->name : NULL, radii[r], runs, &me, &d))
            return false;
        double small = frames ? measure_paint(d, 80, 24, frames) : -1;
        double large = frames ? measure_paint(d, 200, 60, frames) : -1;
        char canvas[32], radius[16];
        snprintf(canvas, sizeof(canvas), "%dx%d", me.canvas_w, me.canvas_h);
        snprintf(radius, sizeof(radius), me.reduced ? "%d" : "whole", radii[r]);
        printf("%-30s %6s %6zu %9s %9.1f %9.2f %8.3f %8.3f\n", what, radius, me.boxes, canvas,
               me.layout_ms, me.draw_ms, small, large);
        gl_drawing_free(d);
        if (!me.reduced) /* drawn whole: the radius changes nothing */
            break;
    }
    return true;
}

/* "mobilenet_v2" for ".../mobilenet_v2/model.onnx", else the file's name. */
static const char *model_name(const char *path, char *buf, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, "model.onnx") == 0 && base > path + 1) {
        const char *dir = base - 1;
        while (dir > path && dir[-1] != '/')
            dir--;
        snprintf(buf, len, "%.*s", (int)(base - 1 - dir), dir);
    } else {
        snprintf(buf, len, "%s", base);
    }
    return buf;
}

/* ---- driver ---- */

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || (*end && *end != ',') || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static int parse_sizes(const char *arg, long *sizes)
{
    int n = 0;
    for (const char *p = arg; *p && n < MAX_SIZES; n++) {
        if (!parse_long(p, 1, 10000000, &sizes[n]))
            return -1;
        p = strchr(p, ',');
        p = p ? p + 1 : "";
    }
    return n;
}

int main(int argc, char **argv)
{
    long sizes[MAX_SIZES], runs = DEFAULT_RUNS, frames = DEFAULT_FRAMES;
    int n_sizes = parse_sizes(DEFAULT_SIZES, sizes), opt;
    while ((opt = getopt(argc, argv, "n:r:p:h")) != -1) {
        bool ok = (opt == 'n' && (n_sizes = parse_sizes(optarg, sizes)) > 0) ||
                  (opt == 'r' && parse_long(optarg, 1, MAX_RUNS, &runs)) ||
                  (opt == 'p' && parse_long(optarg, 1, 100000, &frames));
        if (!ok) {
            fprintf(stderr, "usage: bench_ui_graph [-n N,N,...] [-r RUNS 1..%d] [-p FRAMES]\n",
                    MAX_RUNS);
            return opt == 'h' ? 0 : 2;
        }
    }
    bool paint = open_screen();
    if (!paint)
        fprintf(stderr, "bench_ui_graph: no curses screen (terminfo xterm-256color?): "
                        "painting not measured\n");
    printf("# medians of %ld runs (layout, draw) and %ld frames (paint), in ms; layouts of "
           "at most %d boxes, constants folded\n",
           runs, frames, GL_GRAPH_VIEW_MAX_BOXES);
    printf("%-30s %6s %6s %9s %9s %9s %8s %8s\n", "nodes / model", "radius", "boxes", "canvas",
           "layout", "draw", "80x24", "200x60");
    int failed = 0;
    for (int s = 0; s < n_sizes; s++) {
        gl_model *m = branchy_blocks((size_t)sizes[s]);
        char what[32];
        snprintf(what, sizeof(what), "%ld", sizes[s]);
        failed |= !measure_graph(what, m->graph, (int)runs, paint ? (int)frames : 0);
        gl_model_free(m);
    }
    for (int i = optind; i < argc; i++) {
        gl_model *m = NULL;
        if (gl_model_load(argv[i], NULL, &m) != GL_OK) {
            fprintf(stderr, "bench_ui_graph: %s\n", gl_error_message());
            failed = 1;
            continue;
        }
        char what[64];
        failed |= !measure_graph(model_name(argv[i], what, sizeof(what)), m->graph, (int)runs,
                                 paint ? (int)frames : 0);
        gl_model_free(m);
    }
    if (paint) {
        endwin();
        delscreen(screen);
    }
    return failed;
}

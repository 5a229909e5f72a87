/* bench_ui_keys.c — what one key of the workbench costs on a big model.
 *
 *   bench_ui_keys [-r RUNS] MODEL.onnx ...
 *
 * For each model (bench/run.sh passes many_nodes.onnx, the 20k-node ladder of
 * make_big_models.py): the first screen as the workbench makes it (the model loaded and
 * step 0 drawn, timed), then what its second job does behind that screen (a second load,
 * the default pipeline with snapshots, the step diffs and indexes; timed apart), then a
 * fixed sequence of keys through every view (stepping,
 * paging, search, detail, diff, decisions, +/- replaying a pass inline). Each key is
 * handled and the view and the bar drawn into a curses screen writing to /dev/null, as
 * the driver loop would. Every run starts from a fresh pipeline, so each key meets the
 * same state; medians over RUNS runs. The slowest key is what a person waits for.
 */
#include "bench/benchutil.h"
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "ui/ui.h"

#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_RUNS 3
#define MAX_RUNS 100

static const struct {
    const char *what;
    int key;
} keys[] = {
    {"j", 'j'}, {"PgDn", KEY_NPAGE}, {"G", 'G'}, {"g", 'g'}, {"]", ']'}, {"]", ']'},
    {"]", ']'}, {"]", ']'}, {"]", ']'}, {"]", ']'}, {"[", '['}, {"d", 'd'}, {"j", 'j'},
    {"G", 'G'}, {"c", 'c'}, {"j", 'j'}, {"l", 'l'}, {"/", '/'}, {"s", 's'}, {"i", 'i'},
    {"g", 'g'}, {"Enter", '\n'}, {"n", 'n'}, {"N", 'N'}, {"Enter", '\n'}, {"j", 'j'},
    {"Esc", 27}, {"/", '/'}, {"z", 'z'}, {"q", 'q'}, {"Enter", '\n'}, {"n", 'n'},
    {"2", '2'}, {"d", 'd'}, {"G", 'G'}, {"Enter", '\n'}, {"Esc", 27}, {"c", 'c'},
    {"l", 'l'}, {"6", '6'}, {"Enter", '\n'}, {"Esc", 27}, {"-", '-'}, {"-", '-'},
    {"+", '+'}, {"?", '?'}, {"Esc", 27},
};
#define N_KEYS GL_ARRAY_LEN(keys)

/* Per key: milliseconds of every run, and where the key left the workbench. */
typedef struct key_times {
    double ms[MAX_RUNS];
    double cpu_ms[MAX_RUNS]; /* the main thread's CPU time: what the key cost itself */
    size_t step;
    const char *view;
} key_times;

/* Draw the shown view and the bar as the driver's frame does. */
static void draw_frame(gl_ui *ui)
{
    gl_view *v = gl_ui_view(ui);
    erase();
    v->ops->draw(ui, v, 1, 0, LINES - 2, COLS);
    gl_bar_item *items;
    size_t n = gl_bar_items(ui, &items);
    char buf[4096];
    int col, len;
    gl_bar_format(items, n, COLS, ui->utf8, buf, sizeof(buf), &col, &len);
    free(items);
}

/* One key: handle it, then draw the frame; its wall and CPU milliseconds. */
static void timed_key(gl_ui *ui, int key, double *ms, double *cpu_ms)
{
    double t0 = bench_now_seconds(), c0 = bench_cpu_seconds();
    gl_ui_key(ui, key);
    draw_frame(ui);
    *ms = (bench_now_seconds() - t0) * 1e3;
    *cpu_ms = (bench_cpu_seconds() - c0) * 1e3;
}

/* Milliseconds of each phase of one run, as the workbench goes through them. */
typedef struct phase_times {
    double first[MAX_RUNS];    /* load, step 0 shown and drawn: the first screen */
    double first_cpu[MAX_RUNS];
    double pipeline[MAX_RUNS]; /* behind it: a second load and the passes */
    double steps[MAX_RUNS];    /* behind it: step diffs and step indexes */
} phase_times;

/* The first job of the workbench (ui/app.c): the model as loaded, shown alone. */
static bool show_step0(const char *path, gl_ui *ui)
{
    gl_model *m = NULL;
    gl_pipeline *p0 = NULL;
    if (gl_model_load(path, NULL, &m) != GL_OK)
        return false;
    gl_pipeline_run(m, NULL, 0, NULL, GL_PIPELINE_KEEP_SNAPSHOTS, &p0);
    gl_ui_set_pipeline(ui, p0, NULL);
    draw_frame(ui);
    return true;
}

/* The second job: the passes on a second load, then the step diffs and indexes, handed
 * to the ui as the job's finish does. */
static bool run_passes(const char *path, gl_ui *ui, phase_times *pt, int run)
{
    gl_model *m = NULL;
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    double t0 = bench_now_seconds();
    if (gl_model_load(path, NULL, &m) != GL_OK ||
        gl_pass_list_parse("all", &plan, &n_plan) != GL_OK) {
        gl_model_free(m);
        return false;
    }
    gl_pipeline *p = NULL;
    gl_status st = gl_pipeline_run(m, plan, n_plan, NULL, GL_PIPELINE_KEEP_SNAPSHOTS, &p);
    free(plan);
    pt->pipeline[run] = (bench_now_seconds() - t0) * 1e3;
    if (st != GL_OK) {
        gl_pipeline_free(p);
        return false;
    }
    t0 = bench_now_seconds();
    gl_diff **diffs = gl_ui_job_step_diffs(p, NULL);
    gl_graph_index *indexes = gl_ui_job_step_indexes(p, NULL);
    pt->steps[run] = (bench_now_seconds() - t0) * 1e3;
    gl_ui_adopt_steps(ui, p, diffs, indexes);
    return true;
}

/* One run from a fresh load; false when the model does not load or a pass fails. */
static bool run_once(const char *path, int run, phase_times *pt, size_t *nodes, key_times *kt)
{
    gl_ui ui;
    gl_ui_init(&ui, path);
    ui.sync_jobs = true;
    double t0 = bench_now_seconds(), c0 = bench_cpu_seconds();
    bool ok = show_step0(path, &ui);
    pt->first[run] = (bench_now_seconds() - t0) * 1e3;
    pt->first_cpu[run] = (bench_cpu_seconds() - c0) * 1e3;
    if (!ok || !run_passes(path, &ui, pt, run)) {
        fprintf(stderr, "bench_ui_keys: %s\n", gl_error_message());
        gl_ui_free(&ui);
        return false;
    }
    *nodes = ui.pipeline->steps[0].nodes;
    for (size_t i = 0; i < N_KEYS; i++) {
        timed_key(&ui, keys[i].key, &kt[i].ms[run], &kt[i].cpu_ms[run]);
        kt[i].step = ui.step;
        kt[i].view = ui.views[ui.current].ops->name;
    }
    gl_ui_free(&ui);
    return true;
}

static bool measure(const char *path, int runs)
{
    phase_times pt;
    size_t nodes = 0;
    key_times *kt = calloc(N_KEYS, sizeof(*kt));
    if (!kt)
        return false;
    for (int r = 0; r < runs; r++) {
        if (!run_once(path, r, &pt, &nodes, kt)) {
            free(kt);
            return false;
        }
    }
    printf("== %s: %zu nodes; first screen (load, step 0 drawn) %.0f ms (CPU %.0f ms); behind "
           "it: load and pipeline %.0f ms, step diffs and indexes %.0f ms (medians of %d)\n",
           path, nodes, bench_median(pt.first, runs), bench_median(pt.first_cpu, runs),
           bench_median(pt.pipeline, runs), bench_median(pt.steps, runs), runs);
    printf("%-6s %5s %-10s %10s %10s\n", "key", "step", "view", "median ms", "CPU ms");
    double worst = -1;
    size_t worst_i = 0;
    for (size_t i = 0; i < N_KEYS; i++) {
        double med = bench_median(kt[i].ms, runs);
        printf("%-6s %5zu %-10s %10.2f %10.2f\n", keys[i].what, kt[i].step, kt[i].view, med,
               bench_median(kt[i].cpu_ms, runs));
        if (med > worst) {
            worst = med;
            worst_i = i;
        }
    }
    printf("worst key: '%s' at step %zu (%s view), %.2f ms\n", keys[worst_i].what,
           kt[worst_i].step, kt[worst_i].view, worst);
    free(kt);
    return true;
}

int main(int argc, char **argv)
{
    int runs = DEFAULT_RUNS, opt;
    while ((opt = getopt(argc, argv, "r:h")) != -1) {
        char *end = NULL;
        long v = opt == 'r' ? strtol(optarg, &end, 10) : 0;
        if (opt != 'r' || *end || v < 1 || v > MAX_RUNS) {
            fprintf(stderr, "usage: bench_ui_keys [-r RUNS 1..%d] MODEL.onnx...\n", MAX_RUNS);
            return opt == 'h' ? 0 : 2;
        }
        runs = (int)v;
    }
    if (optind == argc) {
        fprintf(stderr, "usage: bench_ui_keys [-r RUNS 1..%d] MODEL.onnx...\n", MAX_RUNS);
        return 2;
    }
    setlocale(LC_ALL, "C.UTF-8");
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    SCREEN *scr = out && in ? newterm("xterm", out, in) : NULL;
    if (!scr) {
        fprintf(stderr, "bench_ui_keys: no curses screen (terminfo for xterm?)\n");
        return 2;
    }
    set_term(scr);
    resize_term(50, 160);
    int failed = 0;
    for (int i = optind; i < argc; i++)
        failed |= !measure(argv[i], runs);
    endwin();
    delscreen(scr);
    fclose(out);
    fclose(in);
    return failed;
}

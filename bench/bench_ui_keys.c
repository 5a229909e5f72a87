/* bench_ui_keys.c — what one key of the workbench costs on a big model.
 *
 *   bench_ui_keys [-r RUNS] MODEL.onnx ...
 *
 * For each model (bench/run.sh passes many_nodes.onnx, the 20k-node ladder of
 * make_big_models.py): the default pipeline with snapshots and the step diffs, as the
 * workbench's first job does, then a fixed sequence of keys through every view (stepping,
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
    size_t step;
    const char *view;
} key_times;

/* One key: handle it, then draw the view and the bar as the driver would. */
static double timed_key(gl_ui *ui, int key)
{
    double t0 = bench_now_seconds();
    gl_ui_key(ui, key);
    gl_view *v = gl_ui_view(ui);
    erase();
    v->ops->draw(ui, v, 1, 0, LINES - 2, COLS);
    gl_bar_item *items;
    size_t n = gl_bar_items(ui, &items);
    char buf[4096];
    int col, len;
    gl_bar_format(items, n, COLS, ui->utf8, buf, sizeof(buf), &col, &len);
    free(items);
    return (bench_now_seconds() - t0) * 1e3;
}

/* One run on a fresh pipeline; false when the model does not load or a pass fails. */
static bool run_once(const char *path, int run, double *pipeline_ms, double *diffs_ms,
                     size_t *nodes, key_times *kt)
{
    gl_model *m = NULL;
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    if (gl_model_load(path, NULL, &m) != GL_OK ||
        gl_pass_list_parse("all", &plan, &n_plan) != GL_OK) {
        fprintf(stderr, "bench_ui_keys: %s\n", gl_error_message());
        gl_model_free(m);
        return false;
    }
    gl_pipeline *p = NULL;
    double t0 = bench_now_seconds();
    gl_status st = gl_pipeline_run(m, plan, n_plan, NULL, GL_PIPELINE_KEEP_SNAPSHOTS, &p);
    pipeline_ms[run] = (bench_now_seconds() - t0) * 1e3;
    free(plan);
    if (st != GL_OK) {
        fprintf(stderr, "bench_ui_keys: %s\n", gl_error_message());
        gl_pipeline_free(p);
        return false;
    }
    *nodes = p->steps[0].nodes;
    gl_ui ui;
    gl_ui_init(&ui, path);
    ui.sync_jobs = true;
    t0 = bench_now_seconds();
    gl_ui_set_pipeline(&ui, p, NULL);
    diffs_ms[run] = (bench_now_seconds() - t0) * 1e3;
    for (size_t i = 0; i < N_KEYS; i++) {
        kt[i].ms[run] = timed_key(&ui, keys[i].key);
        kt[i].step = ui.step;
        kt[i].view = ui.views[ui.current].ops->name;
    }
    gl_ui_free(&ui);
    return true;
}

static bool measure(const char *path, int runs)
{
    double pipeline_ms[MAX_RUNS], diffs_ms[MAX_RUNS];
    size_t nodes = 0;
    key_times *kt = calloc(N_KEYS, sizeof(*kt));
    if (!kt)
        return false;
    for (int r = 0; r < runs; r++) {
        if (!run_once(path, r, pipeline_ms, diffs_ms, &nodes, kt)) {
            free(kt);
            return false;
        }
    }
    printf("== %s: %zu nodes; pipeline %.0f ms, step diffs %.0f ms (medians of %d)\n", path,
           nodes, bench_median(pipeline_ms, runs), bench_median(diffs_ms, runs), runs);
    printf("%-6s %5s %-10s %10s\n", "key", "step", "view", "median ms");
    double worst = -1;
    size_t worst_i = 0;
    for (size_t i = 0; i < N_KEYS; i++) {
        double med = bench_median(kt[i].ms, runs);
        printf("%-6s %5zu %-10s %10.2f\n", keys[i].what, kt[i].step, kt[i].view, med);
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

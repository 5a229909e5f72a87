/* test_ui_run.c — the run view's pure parts (the table's order, a tensor's statistics,
 * the histogram) and `r` driven headless (jobs run inline): the step run on the
 * reference, unfused and fused, the tensor view, `p`, `w`, the nodes view's backend. */
#include "util/bytes.h"
#include "testutil.h"

#include "driver/driver.h"
#include "exec/inputs.h"
#include "onnx/onnx_io.h"
#include "ui/ui.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONV "examples/conv_nhwc/model.onnx"

/* ---- the order -------------------------------------------------------------------------- */

/* A profile of rows by hand: name, parent (-1: the model's own), median on backend 0. */
typedef struct fake_row {
    const char *name;
    int parent;
    double ms; /* < 0: did not run */
    double members_ms;
} fake_row;

static gl_profile *fake_profile(const fake_row *rows, size_t n)
{
    gl_profile *p = gl_xcalloc(1, sizeof(*p));
    p->n_backends = 1;
    p->rows = gl_xcalloc(n, sizeof(*p->rows));
    p->n_rows = n;
    for (size_t i = 0; i < n; i++) {
        gl_profile_row *r = &p->rows[i];
        r->name = gl_xstrdup(rows[i].name);
        r->op = gl_xstrdup("Op");
        r->parent = rows[i].parent < 0 ? SIZE_MAX : (size_t)rows[i].parent;
        r->depth = rows[i].parent < 0 ? 0 : 1;
        r->cells = gl_xcalloc(1, sizeof(*r->cells));
        r->cells[0].ran = rows[i].ms >= 0;
        r->cells[0].ms.median = rows[i].ms;
        r->cells[0].members_ms = rows[i].members_ms;
        if (rows[i].members_ms > 0) {
            r->members = gl_xcalloc(1, sizeof(char *));
            r->members[0] = gl_xstrdup("m");
            r->n_members = 1;
        }
    }
    return p;
}

Test(run_view, order_by_time_name_and_plan_keeps_members_under_their_group)
{
    /* "g" is a group that did not run on backend 0 (its members did: their sum 0.5) */
    static const fake_row rows[] = {
        {"c", -1, 0.2, 0},  {"a", -1, 0.9, 0}, {"g", -1, -1, 0.5}, {"g1", 2, 0.3, 0},
        {"g2", 2, 0.2, 0},  {"b", -1, 0.2, 0}, {"z", -1, -1, 0},
    };
    static const struct {
        gl_run_sort key;
        size_t order[7];
    } cases[] = {
        /* ties (c, b at 0.2) keep plan order; what did not run goes last */
        {GL_RUN_BY_TIME, {1, 2, 3, 4, 0, 5, 6}},
        {GL_RUN_BY_NAME, {1, 5, 0, 2, 3, 4, 6}},
        {GL_RUN_BY_TOPO, {0, 1, 2, 3, 4, 5, 6}},
    };
    gl_profile *p = fake_profile(rows, GL_ARRAY_LEN(rows));
    cr_assert_float_eq(gl_run_row_ms(p, 2, 0), 0.5, 1e-12, "a group: its members' sum");
    cr_assert_lt(gl_run_row_ms(p, 6, 0), 0);
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        size_t order[7];
        size_t n = gl_run_order(p, 0, cases[c].key, NULL, order);
        cr_assert_eq(n, GL_ARRAY_LEN(rows), "case %zu", c);
        for (size_t i = 0; i < n; i++)
            cr_expect_eq(order[i], cases[c].order[i], "case %zu, place %zu: row %zu", c, i,
                         order[i]);
    }
    gl_profile_free(p);
}

/* ---- statistics and the histogram --------------------------------------------------------- */

Test(run_view, value_stats)
{
    static const struct {
        float v[6];
        size_t n;
        int64_t finite, nan, inf;
        double min, max, mean, std;
        size_t first_bin, last_bin; /* counts in bins 0 and GL_HIST_BINS - 1 */
    } cases[] = {
        {{1, 2, 3, 4}, 4, 4, 0, 0, 1, 4, 2.5, 1.118033988749895, 1, 1},
        {{5, 5, 5}, 3, 3, 0, 0, 5, 5, 5, 0, 3, 0},
        {{NAN, 1, INFINITY, -INFINITY, 3}, 5, 2, 1, 2, 1, 3, 2, 1, 1, 1},
        {{NAN}, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        int64_t dims[1] = {(int64_t)cases[c].n};
        gl_tensor *t = tu_tensor_f32(1, dims, cases[c].v);
        gl_value_stats s;
        gl_value_stats_of(t, &s);
        cr_expect_eq(s.count, (int64_t)cases[c].n, "case %zu", c);
        cr_expect_eq(s.finite, cases[c].finite, "case %zu", c);
        cr_expect_eq(s.nan, cases[c].nan, "case %zu", c);
        cr_expect_eq(s.inf, cases[c].inf, "case %zu", c);
        cr_expect_float_eq(s.min, cases[c].min, 1e-9, "case %zu", c);
        cr_expect_float_eq(s.max, cases[c].max, 1e-9, "case %zu", c);
        cr_expect_float_eq(s.mean, cases[c].mean, 1e-9, "case %zu", c);
        cr_expect_float_eq(s.std, cases[c].std, 1e-9, "case %zu", c);
        cr_expect_eq(s.hist[0], cases[c].first_bin, "case %zu", c);
        cr_expect_eq(s.hist[GL_HIST_BINS - 1], cases[c].last_bin, "case %zu", c);
        size_t in_bins = 0;
        for (size_t b = 0; b < GL_HIST_BINS; b++)
            in_bins += s.hist[b];
        cr_expect_eq(in_bins, (size_t)cases[c].finite, "case %zu: every finite value binned", c);
        gl_tensor_free(t);
    }
}

Test(run_view, histogram_draw)
{
    static const struct {
        size_t bins[8];
        size_t n;
        const char *utf8, *ascii;
    } cases[] = {
        {{0, 1, 2, 3, 4, 5, 6, 8}, 8, " ▁▂▃▄▅▆█", " _.-=+*@"},
        {{8, 0, 1}, 3, "█ ▁", "@ _"},  /* the smallest non-empty bin still shows */
        {{0, 0}, 2, "  ", "  "},       /* nothing at all */
        {{100, 50}, 2, "█▄", "@="},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        char buf[64];
        size_t n = gl_histogram_draw(cases[c].bins, cases[c].n, true, buf, sizeof(buf));
        cr_expect_eq(n, cases[c].n, "case %zu", c);
        cr_expect_str_eq(buf, cases[c].utf8, "case %zu", c);
        n = gl_histogram_draw(cases[c].bins, cases[c].n, false, buf, sizeof(buf));
        cr_expect_str_eq(buf, cases[c].ascii, "case %zu", c);
    }
    /* a buffer too small: cut on a whole character, terminated */
    char small[7];
    size_t bins[4] = {1, 1, 1, 1};
    cr_expect_eq(gl_histogram_draw(bins, 4, true, small, sizeof(small)), 2u);
    cr_expect_str_eq(small, "██");
}

/* ---- columns, units and slices (issue 24) ----------------------------------------------------- */

Test(run_view, columns_widen_to_the_longest_text_where_there_is_room)
{
    static const struct {
        int longest, base, spare, want;
    } cases[] = {
        {10, 22, 50, 22},  /* short names keep the base width (80 columns unchanged) */
        {40, 22, 50, 40},  /* room for the whole name */
        {40, 22, 10, 32},  /* as much as there is */
        {40, 22, 0, 22},   /* none: cut at the base with "…" */
        {40, 22, -30, 22}, /* a narrow terminal never narrows the base */
        {22, 22, 5, 22},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++)
        cr_expect_eq(gl_ui_column_width(cases[c].longest, cases[c].base, cases[c].spare),
                     cases[c].want, "case %zu", c);
}

Test(run_view, h_and_l_step_from_column_to_column_until_the_rows_end_shows)
{
    static const int stops[] = {1, 26, 36, 42, 53};
    static const struct {
        int at, dir, most, want;
    } cases[] = {
        {0, 1, 60, 1},    {1, 1, 60, 26},  {26, 1, 60, 36}, {53, 1, 60, 60},
        {60, 1, 60, 60},  /* the end shows already: L stays */
        {36, 1, 40, 40},  /* the next column would pass the end: stop where it shows */
        {0, 1, 0, 0},     /* the rows fit: L does nothing */
        {60, -1, 60, 53}, {36, -1, 60, 26}, {1, -1, 60, 0}, {0, -1, 60, 0},
        {30, -1, 60, 26}, /* from between two columns, the one before */
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++)
        cr_expect_eq(gl_ui_pan_stop(stops, (int)GL_ARRAY_LEN(stops), cases[c].at, cases[c].dir,
                                    cases[c].most),
                     cases[c].want, "case %zu", c);
}

Test(memory_view, bytes_with_units)
{
    static const struct {
        size_t bytes;
        const char *want;
    } cases[] = {
        {0, "0 B"},           {512, "512 B"},         {1023, "1023 B"},
        {1024, "1 KiB"},      {32768, "32 KiB"},      {1536, "1.5 KiB"},
        {49152, "48 KiB"},    {1048576, "1 MiB"},     {3355443, "3.2 MiB"},
        {(size_t)5 << 30, "5 GiB"},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        char buf[32];
        gl_bytes_text(cases[c].bytes, buf, sizeof(buf));
        cr_expect_str_eq(buf, cases[c].want, "case %zu", c);
    }
}

Test(tensor_view, slices_of_a_tensor_of_rank_above_two)
{
    static const struct {
        int rank;
        int64_t dims[4];
        int64_t lead[2];
        int64_t count, first;
        const char *text;
    } cases[] = {
        {4, {2, 3, 4, 5}, {0, 0}, 6, 0, "[0, 0, :, :]"},
        {4, {2, 3, 4, 5}, {0, 2}, 6, 40, "[0, 2, :, :]"},
        {4, {2, 3, 4, 5}, {1, 1}, 6, 80, "[1, 1, :, :]"},
        {3, {7, 4, 5}, {6}, 7, 120, "[6, :, :]"},
        {2, {4, 5}, {0}, 1, 0, "[:, :]"},
        {1, {9}, {0}, 1, 0, "[:]"},
        {0, {0}, {0}, 1, 0, "[]"},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        char buf[64];
        cr_expect_eq(gl_slice_count(cases[c].dims, cases[c].rank), cases[c].count, "case %zu", c);
        cr_expect_eq(gl_slice_first(cases[c].dims, cases[c].rank, cases[c].lead), cases[c].first,
                     "case %zu", c);
        gl_slice_text(cases[c].dims, cases[c].rank, cases[c].lead, buf, sizeof(buf));
        cr_expect_str_eq(buf, cases[c].text, "case %zu", c);
    }
}

Test(tensor_view, slice_steps_turn_the_last_index_fastest_and_stop_at_the_ends)
{
    static const int64_t dims[] = {2, 3, 4, 5};
    int64_t lead[2] = {0, 0};
    static const int64_t forward[][2] = {{0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}};
    for (size_t i = 0; i < GL_ARRAY_LEN(forward); i++) {
        cr_expect(gl_slice_step(dims, 4, lead, 1), "step %zu", i);
        cr_expect(lead[0] == forward[i][0] && lead[1] == forward[i][1],
                  "step %zu: [%lld, %lld]", i, (long long)lead[0], (long long)lead[1]);
    }
    cr_expect_not(gl_slice_step(dims, 4, lead, 1), "past the last slice");
    cr_expect(lead[0] == 1 && lead[1] == 2, "the last slice stays");
    cr_expect(gl_slice_step(dims, 4, lead, -1));
    cr_expect(lead[0] == 1 && lead[1] == 1);
    lead[0] = lead[1] = 0;
    cr_expect_not(gl_slice_step(dims, 4, lead, -1), "before the first slice");
    cr_expect(lead[0] == 0 && lead[1] == 0);
    cr_expect_not(gl_slice_step(dims, 2, lead, 1), "rank 2: one slice");
}

/* ---- r, headless -------------------------------------------------------------------------------- */

/* The workbench headless on a model of the tree, its pipeline `passes` kept step by step. */
static void open_model(gl_ui *ui, const char *rel, const char *passes)
{
    const char *path = tu_src(rel);
    gl_session_opts o;
    gl_session_opts_init(&o, passes);
    o.pipeline_flags = GL_PIPELINE_KEEP_SNAPSHOTS;
    o.always_pipeline = true;
    gl_session s;
    cr_assert_eq(gl_session_open(path, &o, &s), GL_OK, "%s", gl_error_message());
    gl_session_opts_free(&o);
    gl_ui_init(ui, path);
    ui->sync_jobs = true;
    gl_ui_set_pipeline(ui, s.pipeline, NULL);
}

static void open_conv(gl_ui *ui)
{
    open_model(ui, CONV, "all");
}

static size_t row_of(const gl_profile *p, const char *name)
{
    for (size_t i = 0; i < p->n_rows; i++)
        if (strcmp(p->rows[i].name, name) == 0)
            return i;
    cr_assert_fail("no row '%s'", name);
    return SIZE_MAX;
}

Test(run_view, r_runs_the_step_on_ref_unfused_and_fused_only_when_it_has_groups)
{
    static const struct {
        size_t step;
        size_t backends;
        const char *run; /* the oneDNN run on the step's model */
    } cases[] = {{15, 3, "fused"}, {13, 2, "dnnl"}, {0, 2, "dnnl"}};
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_ui ui;
        open_conv(&ui);
        gl_ui_goto_step(&ui, cases[c].step);
        gl_ui_key(&ui, 'r');
        cr_assert_eq(ui.current, (size_t)GL_VIEW_RUN, "case %zu", c);
        const gl_run *r = gl_ui_run_shown(&ui);
        cr_assert(r, "case %zu: %s", c, ui.status);
        cr_expect(strstr(ui.status, "seeded random inputs"), "case %zu: %s", c, ui.status);
        cr_expect(strstr(ui.status, "agrees with the reference"), "case %zu: %s", c, ui.status);
        cr_assert_eq(r->prof->n_backends, cases[c].backends, "case %zu", c);
        cr_expect_str_eq(r->prof->backends[r->fused].name, cases[c].run, "case %zu", c);
        cr_expect_str_eq(r->prof->backends[r->ref].name, "ref", "case %zu", c);
        cr_expect_eq(r->unfused == SIZE_MAX, cases[c].backends == 2, "case %zu", c);
        cr_expect_eq(r->report.first_bad, SIZE_MAX, "case %zu", c);
        cr_expect_gt(r->report.n_rows, 0u, "case %zu", c);
        /* another step: the run is not shown there */
        gl_ui_goto_step(&ui, cases[c].step ? cases[c].step - 1 : 1);
        cr_expect_null(gl_ui_run_shown(&ui), "case %zu", c);
        gl_ui_free(&ui);
    }
}

/* ---- symbolic dims: random inputs say what they take (issue 24) -------------------------- */

/* A model of Relu nodes, one per input, typed as `types` says ("float[N,3]"); inputs x0,
 * x1, ... */
static gl_model *relu_model(const char *const *types, size_t n)
{
    gl_model *m = tu_model(13);
    for (size_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "x%zu", i);
        gl_value *x = tu_input(m->graph, name, GL_DT_FLOAT, 1, (int64_t[]){1});
        tu_parse_type(types[i], &x->type);
        tu_output(m->graph, tu_node(m->graph, "Relu", name, 1, x)->outputs[0]);
    }
    return m;
}

Test(run_view, random_inputs_name_the_symbolic_dims_they_take_as_1)
{
    static const struct {
        const char *types[3];
        const char *dim; /* --dim NAME=V given, or NULL */
        size_t count;
        const char *text;
    } cases[] = {
        {{"float[2,3]"}, NULL, 0, ""},
        {{"float[N,3]"}, NULL, 1, "N=1"},
        {{"float[N,seq]", "float[N,seq,4]"}, NULL, 2, "N=1, seq=1"},
        {{"float[N,seq]"}, "seq", 1, "N=1"},
        {{"float[?,3]", "float[N]"}, NULL, 2, "'x0'[0]=1, N=1"},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        size_t n = 0;
        while (n < 3 && cases[c].types[n])
            n++;
        gl_model *m = relu_model(cases[c].types, n);
        gl_dim_value given = {(char *)cases[c].dim, 4};
        char buf[128];
        size_t count = gl_dataset_random_defaults(m, cases[c].dim ? &given : NULL,
                                                  cases[c].dim ? 1 : 0, buf, sizeof(buf));
        cr_expect_eq(count, cases[c].count, "case %zu", c);
        cr_expect_str_eq(buf, cases[c].text, "case %zu", c);
        gl_model_free(m);
    }
}

/* r on a model with a batch dim N: the status line and the run's header say N=1. */
Test(run_view, r_says_what_the_symbolic_dims_took)
{
    gl_model *m = relu_model((const char *const[]){"float[N,3]"}, 1);
    char *dir = tu_tmpdir(), path[4200];
    snprintf(path, sizeof(path), "%s/batch.onnx", dir);
    cr_assert_eq(gl_model_save(m, path, NULL), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    o.pipeline_flags = GL_PIPELINE_KEEP_SNAPSHOTS;
    o.always_pipeline = true;
    gl_session s;
    cr_assert_eq(gl_session_open(path, &o, &s), GL_OK, "%s", gl_error_message());
    gl_session_opts_free(&o);
    gl_ui ui;
    gl_ui_init(&ui, path);
    ui.sync_jobs = true;
    gl_ui_set_pipeline(&ui, s.pipeline, NULL);
    gl_ui_key(&ui, 'r');
    const gl_run *r = gl_ui_run_shown(&ui);
    cr_assert(r, "%s", ui.status);
    cr_expect_str_eq(r->inputs, "seeded random inputs; N=1 (symbolic dims: random inputs take 1)");
    gl_ui_free(&ui);
    tu_rmtree(dir);
    free(dir);
}

Test(run_view, the_group_row_has_its_members_and_the_tensor_view_its_outputs)
{
    gl_ui ui;
    open_conv(&ui);
    gl_ui_goto_step(&ui, 15);
    gl_ui_key(&ui, 'r');
    const gl_run *r = gl_ui_run_shown(&ui);
    cr_assert(r);
    /* conv1 + relu1 (#15) and conv2 + relu2 (#16) */
    size_t g1 = row_of(r->prof, "FusedNhwcConvRelu_1");
    cr_assert_eq(r->prof->rows[g1].n_members, 2u);
    size_t conv1_row = row_of(r->prof, "conv1");
    cr_expect_eq(r->prof->rows[conv1_row].parent, g1);
    size_t g = row_of(r->prof, "FusedNhwcConvRelu_2");
    cr_assert_eq(r->prof->rows[g].n_members, 2u);
    size_t conv2 = row_of(r->prof, "conv2");
    cr_expect_eq(r->prof->rows[conv2].parent, g);
    cr_expect_gt(gl_run_row_ms(r->prof, g, r->unfused), 0, "the unfused run: its members' sum");
    cr_expect_gt(gl_run_row_ms(r->prof, g, r->fused), 0);

    /* the nodes view's backend column: channel_scale, the Mul fusion left alone */
    char be[128];
    const gl_node *scale = gl_find_node(gl_ui_graph(&ui), "channel_scale");
    cr_assert(scale);
    cr_expect(gl_ui_run_backend(&ui, scale, be, sizeof(be)));
    cr_expect_eq(strncmp(be, "dnnl ", 5), 0, "%s", be);

    /* topological order, down to the group, Enter */
    gl_ui_key(&ui, 's');
    gl_ui_key(&ui, 's');
    cr_expect_eq(ui.run_sort, GL_RUN_BY_TOPO);
    size_t order[64];
    size_t n = gl_run_order(r->prof, r->fused, ui.run_sort, r->float_nmse, order);
    size_t at = 0;
    while (at < n && order[at] != g)
        at++;
    cr_assert_lt(at, n);
    for (size_t i = 0; i < at; i++)
        gl_ui_key(&ui, 'j');
    gl_ui_key(&ui, '\n');
    cr_assert_eq(ui.current, (size_t)GL_VIEW_TENSOR);
    cr_expect_eq(ui.tensor_row, g);

    /* J: the output float[1,16,16,16] has 16 slices [0, c, :, :]; the 16th J stays */
    for (int c = 1; c < 16; c++)
        cr_expect_eq(gl_ui_key(&ui, 'J'), (unsigned)GL_REDRAW_VIEW, "J to slice %d", c);
    cr_expect_eq(gl_ui_key(&ui, 'J'), (unsigned)GL_REDRAW_NONE, "past the last slice");
    cr_expect_eq(gl_ui_key(&ui, 'K'), (unsigned)GL_REDRAW_VIEW);

    /* w: the group's output as a TensorProto in the export folder */
    char *dir = tu_tmpdir();
    snprintf(ui.export_dir, sizeof(ui.export_dir), "%s/export", dir);
    gl_ui_key(&ui, 'w');
    cr_expect(ui.export_prompt, "w asks where first");
    gl_ui_key(&ui, '\n'); /* the folder shown: the export folder */
    cr_expect(strstr(ui.status, "wrote "), "%s", ui.status);
    cr_assert_eq(tu_dir_entries(ui.export_dir), 1u);
    char path[1400];
    const char *file = strstr(ui.status, "wrote ") + 6;
    snprintf(path, sizeof(path), "%s", file);
    gl_tensor *t = NULL;
    cr_assert_eq(gl_tensor_read_pb(path, &t), GL_OK, "%s", gl_error_message());
    cr_expect_eq(t->rank, 4);
    gl_tensor_free(t);
    tu_rmtree(dir);
    free(dir);
    gl_ui_free(&ui);
}

Test(run_view, p_names_where_the_runs_part_ways_or_the_tolerance)
{
    gl_ui ui;
    open_conv(&ui);
    gl_ui_goto_step(&ui, 15);
    gl_ui_key(&ui, 'r');
    gl_ui_key(&ui, 'p');
    cr_expect(strstr(ui.status, "fused and ref do not part ways: every tensor within rtol 0.001, "
                                "atol 0.0001"), "%s", ui.status);
    /* no tolerance at all: oneDNN's first group (conv1 + relu1) already differs in the last
     * bits */
    gl_run *r = ui.run;
    r->rtol = r->atol = 0;
    gl_inter_report_free(&r->report);
    gl_inter_compare(r->rec_ref, r->rec_run, &(gl_tolerance){0, 0, 0}, &r->report);
    cr_assert_neq(r->report.first_bad, SIZE_MAX);
    gl_ui_key(&ui, 'p');
    cr_expect(strstr(ui.status, "fused and ref part ways at 'FusedNhwcConvRelu_1' "
                                "(FusedNhwcConvRelu_1), tensor 'relu1_out0'"), "%s", ui.status);
    cr_expect_eq(ui.current, (size_t)GL_VIEW_RUN);
    size_t order[64];
    gl_run_order(r->prof, r->fused, ui.run_sort, r->float_nmse, order);
    cr_expect_str_eq(r->prof->rows[order[ui.views[GL_VIEW_RUN].selected]].name,
                     "FusedNhwcConvRelu_1");
    gl_ui_free(&ui);
}

Test(run_view, p_before_any_run_and_r_on_a_replay)
{
    gl_ui ui;
    open_conv(&ui);
    gl_ui_key(&ui, 'p');
    cr_expect(strstr(ui.status, "no run of this step yet: r runs it"), "%s", ui.status);
    gl_ui_goto_step(&ui, 6);
    gl_ui_key(&ui, '-');
    cr_assert(ui.replay.model);
    gl_ui_key(&ui, 'r');
    cr_expect(strstr(ui.status, "r runs whole steps"), "%s", ui.status);
    cr_expect_null(ui.run);
    gl_ui_free(&ui);
}

/* A copy of conv_nhwc's data set in dir, its output's element 3 moved by `delta`. */
static void write_data_set(const char *dir, float delta)
{
    const char *src = tu_src("examples/conv_nhwc/test_data_set_0");
    char path[1200];
    gl_tensor *in = NULL, *out = NULL;
    snprintf(path, sizeof(path), "%s/input_0.pb", src);
    cr_assert_eq(gl_tensor_read_pb(path, &in), GL_OK, "%s", gl_error_message());
    snprintf(path, sizeof(path), "%s/output_0.pb", src);
    cr_assert_eq(gl_tensor_read_pb(path, &out), GL_OK, "%s", gl_error_message());
    ((float *)gl_tensor_make_writable(out))[3] += delta;
    snprintf(path, sizeof(path), "%s/input_0.pb", dir);
    cr_assert_eq(gl_tensor_write_pb(in, path), GL_OK, "%s", gl_error_message());
    snprintf(path, sizeof(path), "%s/output_0.pb", dir);
    cr_assert_eq(gl_tensor_write_pb(out, path), GL_OK, "%s", gl_error_message());
    gl_tensor_free(in);
    gl_tensor_free(out);
}

/* With --data whose folder has output_*.pb, r compares every run with them: ok with the
 * right ones, a MISMATCH of each run (and the status line an error) with a wrong one. */
Test(run_view, r_compares_each_run_with_the_data_sets_outputs)
{
    static const struct {
        float delta;
        bool ok;
        const char *line; /* what the header's expected line reads after "expected (DIR): " */
    } cases[] = {
        {0, true, "ref ok, fused ok, unfused ok"},
        {1000, false, "ref MISMATCH max_abs 1e+03, fused MISMATCH max_abs 1e+03, unfused "
                      "MISMATCH max_abs 1e+03"},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        char *tmp = tu_tmpdir();
        char dir[1100];
        snprintf(dir, sizeof(dir), "%s/test_data_set_9", tmp);
        cr_assert_eq(gl_make_dir(dir), GL_OK);
        write_data_set(dir, cases[c].delta);
        gl_ui ui;
        open_conv(&ui);
        ui.data_dir = dir;
        gl_ui_goto_step(&ui, 15);
        gl_ui_key(&ui, 'r');
        const gl_run *r = gl_ui_run_shown(&ui);
        cr_assert(r, "case %zu: %s", c, ui.status);
        cr_expect_str_eq(r->expected_label, "test_data_set_9", "case %zu", c);
        cr_assert(r->prof->has_expected && r->prof->has_expected[0], "case %zu", c);
        for (size_t b = 0; b < r->prof->n_backends; b++)
            cr_expect_eq(r->prof->backends[b].expected_ok, cases[c].ok, "case %zu, %s", c,
                         r->prof->backends[b].name);
        char line[512];
        gl_profile_expected_text(r->prof, false, line, sizeof(line));
        cr_expect_str_eq(line, cases[c].line, "case %zu", c);
        if (cases[c].ok)
            cr_expect(strstr(ui.status, "fused agrees with the reference"), "%s", ui.status);
        else
            cr_expect(strstr(ui.status, "outputs differ from test_data_set_9's: ref MISMATCH"),
                      "%s", ui.status);
        gl_ui_free(&ui);
        tu_rmtree(tmp);
        free(tmp);
    }
}

/* ---- a quantized model: the float column ------------------------------------------------ */

#define QDQ_MLP "tests/data/qdq_mlp/model.onnx"

/* r on tests/data/qdq_mlp (its pair on h2 calibrated 24x too coarse): the run has the
 * float model's run beside it, the header names h2 as the pair that loses most and the
 * first jump, every row has its error against the float run, and `s` reaches the float
 * order, whose first row is the worst. A float model has none of it, and `s` skips it. */
Test(run_view, a_qdq_model_gets_the_float_column)
{
    gl_ui ui;
    open_model(&ui, QDQ_MLP, "none");
    ui.data_dir = tu_src("tests/data/qdq_mlp/test_data_set_0");
    gl_ui_key(&ui, 'r');
    const gl_run *r = gl_ui_run_shown(&ui);
    cr_assert(r, "%s", ui.status);
    cr_assert(r->has_float, "a QDQ model has the float run");
    cr_expect_eq(r->pairs.n, 4u);
    char line[512];
    gl_run_float_text(r, line, sizeof(line));
    cr_expect(strstr(line, "'h2' loses most, adds nmse ") && strstr(line, "; first jump 'h2'"),
              "%s", line);
    size_t q = row_of(r->prof, "quant_h2");
    cr_expect_float_eq(r->float_nmse[q], r->qerror.rows[2].cmp.nmse, 1e-12,
                       "the Q's row: its pair's error");
    cr_expect_gt(r->float_nmse[row_of(r->prof, "y")], 0, "the MatMul's output differs");
    cr_expect(isnan(r->float_nmse[row_of(r->prof, "dequant_h1_w")]) ||
                  r->float_nmse[row_of(r->prof, "dequant_h1_w")] == 0,
              "the weight's DQ is the same in both");
    /* s: time, name, topological order, float error */
    for (int i = 0; i < 3; i++)
        gl_ui_key(&ui, 's');
    cr_assert_eq(ui.run_sort, GL_RUN_BY_FLOAT, "%s", ui.status);
    cr_expect(strstr(ui.status, "sorted by float error"), "%s", ui.status);
    size_t order[64];
    size_t n = gl_run_order(r->prof, r->fused, ui.run_sort, r->float_nmse, order);
    for (size_t i = 0; i < r->prof->n_rows; i++)
        cr_expect(isnan(r->float_nmse[i]) || r->float_nmse[i] <= r->float_nmse[order[0]],
                  "row %s worse than the first", r->prof->rows[i].name);
    for (size_t i = 1; i < n; i++)
        cr_expect(isnan(r->float_nmse[order[i]]) ||
                      r->float_nmse[order[i]] <= r->float_nmse[order[i - 1]],
                  "place %zu out of order", i);
    gl_ui_key(&ui, 's');
    cr_expect_eq(ui.run_sort, GL_RUN_BY_TIME, "and round again");
    gl_ui_free(&ui);

    /* a float model: no float run, and s goes from topological order back to time */
    open_conv(&ui);
    gl_ui_key(&ui, 'r');
    r = gl_ui_run_shown(&ui);
    cr_assert(r);
    cr_expect_not(r->has_float);
    gl_run_float_text(r, line, sizeof(line));
    cr_expect_str_eq(line, "");
    for (int i = 0; i < 3; i++)
        gl_ui_key(&ui, 's');
    cr_expect_eq(ui.run_sort, GL_RUN_BY_TIME, "no float order on a float model");
    gl_ui_free(&ui);
}

/* profile.c — `graphlab profile MODEL [--data DIR] [--passes LIST] [--backends LIST]
 * [--reps N] [--warmup N] [--threads N] [--layout auto|plain|nhwc|blocked] [--max-memory BYTES]
 * [--trace FILE.json] [--json] [--rtol X] [--atol Y] [--dim NAME=V] [--set PASS.OPT=V]`:
 * per-node times on each backend side by side (src/exec/profile.h), as a table sorted
 * by time, as JSON, or as ONNX Runtime's profile (src/exec/trace.h).
 *
 * --backends names runs: ref, dnnl (on the model as --passes leaves it), and, when
 * --passes has a fusion step, fused (dnnl on that model, fused groups and all) and
 * unfused (dnnl on the model the same passes make without their fusion steps: one
 * primitive per original op). With a fusion step the default is ref,unfused,fused, and
 * a group's row shows its fused time beside the sum of its members' unfused times.
 *
 * Exit 1 when a backend's graph outputs differ from the reference's beyond tolerance
 * (naming the first node where the two runs part ways) or, with --data, from the data
 * set's output_*.pb; 2 on bad usage or input. Ratios follow profile.h's ≈ rule; a fused
 * group's row names its decision and is flagged when the fusion lost. */
#include "cli/cli.h"
#include "util/clock.h"

#include "exec/inputs.h"
#include "exec/profile.h"
#include "exec/omp_wait.h"
#include "exec/trace.h"
#include "passes/pipeline.h"
#include "util/json.h"
#include "util/plural.h"
#include "util/safe_write.h"
#include "util/stale_temps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct profile_args {
    const char *model, *trace;
    char *backend_list; /* owned copy of --backends (the names point into it) */
    bool json;
    size_t fused, unfused; /* their index in o.backends; SIZE_MAX: not asked for */
    gl_profile_options o;
    gl_session_opts so; /* --data, --rtol, --atol, --dim, --threads, --max-memory, --passes */
} profile_args;

/* ---- arguments ------------------------------------------------------------------------ */

enum { OPT_BACKENDS, OPT_REPS, OPT_WARMUP, OPT_LAYOUT, OPT_TRACE, OPT_JSON, N_OPTS };
static const gl_cli_option own_options[N_OPTS] = {
    [OPT_BACKENDS] = {"backends", 0, true, "ref,dnnl,fused,unfused",
                      "the runs side by side (default ref,unfused,fused with a fusion step "
                      "in --passes, else ref,dnnl)"},
    [OPT_REPS] = {"reps", 0, true, "N", "timed rounds, every backend once per round (default 10)"},
    [OPT_WARMUP] = {"warmup", 0, true, "N", "untimed runs first (default 3)"},
    [OPT_LAYOUT] = {"layout", 0, true, "auto|plain|nhwc|blocked",
                    "the dnnl backend's activation layout (default auto)"},
    [OPT_TRACE] = {"trace", 0, true, "FILE.json",
                   "write the runs in ONNX Runtime's profile format (Perfetto, "
                   "chrome://tracing; a named track per run), as they go: FILE appears when "
                   "the profile is over, whole"},
    [OPT_JSON] = {"json", 0, false, NULL, "print the table as JSON"},
};

const gl_command gl_command_profile = {
    "profile", "MODEL",
    "per-node times on each backend side by side, compared with the reference",
    "Per node: median/min/max over --reps rounds, % of the total, layout conversions, "
    "GFLOP/s, sorted by time; the whole-run median measured apart; each node's outputs "
    "against the reference run (max abs, NMSE). The backends take turns round by round "
    "(round 1 of each, then round 2...), so a busy spell of the machine lands on all; each "
    "total has its spread. Exit 1 when an output is over tolerance, naming the node where "
    "the runs part ways; with --data, also when a run's outputs differ from DIR/output_*.pb "
    "(--rtol/--atol, as run --data), one line per output naming it, the run and max_abs. "
    "fused: dnnl on the model --passes makes; unfused: dnnl on the model the same passes "
    "make without fusion (a fused group's row: its members under it, their unfused sum "
    "beside its fused time, the id of the fusion decision that formed it; a group whose "
    "fastest round is slower than its members' medians summed is flagged 'fusion "
    "lost N ms (decision #ID)'). Ratios: '≈' when both runs ran the same kernel (same node, "
    "implementation and layouts), '≈ 1.01x' when their min..max ranges overlap, a bare "
    "ratio only when they do not. --passes defaults to all (the default pipeline), so "
    "`graphlab profile MODEL` shows ref, unfused and fused side by side; --passes none "
    "profiles the model as loaded.",
    GL_SOPT_EXECUTE, own_options, N_OPTS, gl_cmd_profile};

/* The runs --backends may name: a backend on the model as optimized, or dnnl on it
 * fused or unfused. */
static const struct run_kind {
    const char *name, *backend;
} run_kinds[] = {{"ref", "ref"}, {"dnnl", "dnnl"}, {"fused", "dnnl"}, {"unfused", "dnnl"}};

static int parse_backends(profile_args *a, const char *list)
{
    free(a->backend_list);
    a->backend_list = gl_xstrdup(list);
    a->o.n_backends = 0;
    a->fused = a->unfused = SIZE_MAX;
    char *save = NULL;
    for (char *t = strtok_r(a->backend_list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        const struct run_kind *k = NULL;
        for (size_t i = 0; i < GL_ARRAY_LEN(run_kinds) && !k; i++)
            if (strcmp(run_kinds[i].name, t) == 0 && gl_backend_find(run_kinds[i].backend))
                k = &run_kinds[i];
        if (!k)
            return gl_cli_usage_error("profile", "--backends: '%s' is unknown or not built "
                                      "in (ref, dnnl, fused, unfused)", t);
        for (size_t i = 0; i < a->o.n_backends; i++)
            if (strcmp(a->o.labels[i], t) == 0)
                return gl_cli_usage_error("profile", "--backends: '%s' is given twice", t);
        if (a->o.n_backends == GL_PROFILE_MAX_BACKENDS)
            return gl_cli_usage_error("profile", "--backends: at most %d",
                                      GL_PROFILE_MAX_BACKENDS);
        if (strcmp(t, "fused") == 0)
            a->fused = a->o.n_backends;
        if (strcmp(t, "unfused") == 0)
            a->unfused = a->o.n_backends;
        a->o.labels[a->o.n_backends] = t;
        a->o.backends[a->o.n_backends++] = k->backend;
    }
    if (a->o.n_backends == 0)
        return gl_cli_usage_error("profile", "--backends: no backend in '%s'", list);
    return GL_EXIT_OK;
}

/* --backends as given, or the default: ref,unfused,fused when the passes fuse (and dnnl
 * is built in), else ref,dnnl. */
static int check_backends(profile_args *a)
{
    bool fuses = gl_session_fuses(&a->so);
    if (!a->backend_list && fuses && gl_backend_dnnl())
        return parse_backends(a, "ref,unfused,fused");
    if (!a->backend_list)
        return parse_backends(a, gl_backend_dnnl() ? "ref,dnnl" : "ref");
    bool dnnl = false;
    for (size_t i = 0; i < a->o.n_backends; i++)
        dnnl = dnnl || strcmp(a->o.labels[i], "dnnl") == 0;
    if ((a->fused != SIZE_MAX || a->unfused != SIZE_MAX) && !fuses)
        return gl_cli_usage_error("profile", "--backends: fused and unfused differ by the "
                                  "fusion pass, which --passes '%s' does not run (try "
                                  "--passes all)", a->so.passes);
    if (a->fused != SIZE_MAX && dnnl)
        return gl_cli_usage_error("profile", "--backends: 'fused' is dnnl on the fused model; "
                                  "give one of dnnl and fused");
    return GL_EXIT_OK;
}

static int parse_count(const char *opt, const char *s, int64_t lo, int64_t hi, int *out)
{
    int64_t v;
    if (!gl_parse_int(s, lo, hi, &v))
        return gl_cli_usage_error("profile", "--%s '%s' is not a whole number from %lld to "
                                  "%lld", opt, s, (long long)lo, (long long)hi);
    *out = (int)v;
    return GL_EXIT_OK;
}

static int own_option(void *ctx, size_t which, const char *value)
{
    profile_args *a = ctx;
    switch (which) {
    case OPT_BACKENDS: return parse_backends(a, value);
    case OPT_REPS: return parse_count("reps", value, 1, 10000, &a->o.reps);
    case OPT_WARMUP: return parse_count("warmup", value, 0, 10000, &a->o.warmup);
    case OPT_LAYOUT: a->o.layout = value; return GL_EXIT_OK;
    case OPT_TRACE: a->trace = value; return GL_EXIT_OK;
    default: a->json = true; return GL_EXIT_OK;
    }
}

static bool layout_known(const char *s)
{
    static const char *const known[] = {"auto", "plain", "nhwc", "blocked"};
    for (size_t i = 0; i < GL_ARRAY_LEN(known); i++)
        if (strcmp(s, known[i]) == 0)
            return true;
    return false;
}

/* GL_EXIT_OK to go on, -1 for --help (done), else the exit code. */
static int parse_args(int argc, char **argv, profile_args *a)
{
    const gl_cli_spec spec = {&gl_command_profile, own_option, a, &a->model};
    /* The default pipeline: what a newcomer profiles is the model as graphlab would run
     * it, fused against unfused (issue 24), not the model as loaded. */
    gl_session_opts_init(&a->so, "all");
    /* A few seconds on the shared models, reference kernels included. */
    a->o.reps = 10;
    a->o.warmup = 3;
    int first, rc = gl_cli_parse(&spec, argc, argv, &a->so, &first);
    if (rc != GL_EXIT_OK)
        return rc;
    if (a->o.layout && !layout_known(a->o.layout))
        return gl_cli_usage_error("profile", "--layout '%s' is not auto, plain, nhwc or "
                                  "blocked", a->o.layout);
    if ((rc = check_backends(a)) != GL_EXIT_OK)
        return rc;
    a->o.threads = a->so.threads;
    a->o.max_memory = a->so.max_memory;
    a->o.rtol = a->so.rtol;
    a->o.atol = a->so.atol;
    a->o.steps = a->so.steps;
    return GL_EXIT_OK;
}

static void free_args(profile_args *a)
{
    free(a->backend_list);
    gl_session_opts_free(&a->so);
}

/* ---- the table ---------------------------------------------------------------------------- */

/* Model text as the terminal should see it, cut in the middle to fit len - 1 bytes (both
 * ends of a path-like name matter).
 * ESCAPE: the one call site for src/util/escape.h when it lands (issue 9); until then
 * control characters become '?'. */
static const char *shown(const char *raw, char *buf, size_t len)
{
    size_t n = strlen(raw), keep = len - 1, k = 0;
    size_t head = n <= keep ? n : (keep - 1) / 2;
    size_t tail_from = n <= keep ? n : n - (keep - 1 - head);
    for (size_t i = 0; i < n; i++) {
        if (i == head && i < tail_from) {
            buf[k++] = '~';
            i = tail_from;
            if (i >= n)
                break;
        }
        unsigned char ch = (unsigned char)raw[i];
        buf[k++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    buf[k] = '\0';
    return buf;
}

/* The row's cell on backend bi when that backend ran it (a node in the plan may never
 * run: the branch of an If not taken). */
static const gl_profile_cell *cell(const gl_profile *p, const gl_profile_row *r, size_t bi)
{
    return bi < p->n_backends && r->cells[bi].ran && r->cells[bi].calls ? &r->cells[bi] : NULL;
}

/* The cell a row's columns describe: the primary run's, else (a fused group's member, a
 * node only the unfused model has) the first other run's that is not the reference's. */
static const gl_profile_cell *main_cell(const gl_profile *p, const gl_profile_row *r)
{
    const gl_profile_cell *c = cell(p, r, p->primary);
    for (size_t bi = 0; !c && bi < p->n_backends; bi++)
        if (bi != p->ref)
            c = cell(p, r, bi);
    return c;
}

typedef struct sort_item {
    double key; /* the primary backend's median, else the first backend's that ran it */
    size_t row;
} sort_item;

static int by_time(const void *a, const void *b)
{
    const sort_item *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? 1 : -1;
    return (x->row > y->row) - (x->row < y->row);
}

static void format_compare(const gl_profile_cell *c, char *buf, size_t len)
{
    if (!c || !c->compared)
        snprintf(buf, len, "-");
    else if (!c->cmp.same_shape)
        snprintf(buf, len, "SHAPE differs");
    else
        snprintf(buf, len, "%s %.1e/%.1e", c->cmp.ok ? "ok" : "OVER", c->cmp.max_abs,
                 c->cmp.nmse);
}

/* What the table shows and in which order: the runs' columns (gl_profile_run_order), and
 * fused and unfused when both ran. */
typedef struct table {
    const gl_profile *p;
    size_t cols[GL_PROFILE_MAX_BACKENDS], n_cols;
    size_t fused, unfused; /* SIZE_MAX: not run */
} table;

static table table_make(const gl_profile *p)
{
    table t = {.p = p, .fused = gl_profile_run_named(p, "fused"),
               .unfused = gl_profile_run_named(p, "unfused")};
    t.n_cols = gl_profile_run_order(p, t.cols);
    if (t.fused == SIZE_MAX)
        t.unfused = SIZE_MAX;
    else if (t.unfused == SIZE_MAX)
        t.fused = SIZE_MAX;
    return t;
}

/* A row's median on run bi; a group's on the unfused run: its members' sum. < 0: none. */
static double row_ms(const gl_profile *p, const gl_profile_row *r, size_t bi)
{
    bool ran;
    gl_profile_stat st = gl_profile_row_stat(p, r, bi, &ran);
    return ran ? st.median : -1;
}

/* Row r's time on `before` over its time on `after`, by profile.h's rule ("≈" for the
 * same kernel in both, "≈ 1.01x" within noise). */
static gl_profile_ratio row_ratio(const gl_profile *p, const gl_profile_row *r, size_t before,
                                  size_t after)
{
    bool ran_b, ran_a;
    gl_profile_stat b = gl_profile_row_stat(p, r, before, &ran_b);
    gl_profile_stat a = gl_profile_row_stat(p, r, after, &ran_a);
    bool same = ran_b && ran_a && gl_profile_same_kernel(r, &r->cells[before], &r->cells[after]);
    if (!ran_b || !ran_a)
        return (gl_profile_ratio){.known = false};
    return gl_profile_ratio_of(b, a, same);
}

static double row_lost(const table *t, const gl_profile_row *r)
{
    return gl_profile_row_lost(t->p, r, t->fused, t->unfused);
}

/* Text right-aligned in `width` terminal columns ("≈" is three bytes, one column). */
static void print_right(const char *text, int width)
{
    int cols = 0;
    for (const char *c = text; *c; c++)
        cols += ((unsigned char)*c & 0xc0) != 0x80;
    printf(" %*s%s", width > cols ? width - cols : 0, "", text);
}

static void print_ratio(gl_profile_ratio ratio)
{
    char buf[32];
    gl_profile_ratio_text(ratio, true, buf, sizeof(buf));
    print_right(buf, 8);
}

static void decision_text(const gl_profile_row *r, char *buf, size_t len)
{
    if (r->n_members && r->decision >= 0)
        snprintf(buf, len, "#%lld", (long long)r->decision);
    else
        snprintf(buf, len, "-");
}

static void print_row(const table *t, const gl_profile_row *r)
{
    const gl_profile *p = t->p;
    const gl_profile_cell *pc = main_cell(p, r);
    char name[46], indented[64], impl[128], layouts[192], cmp[48];
    snprintf(indented, sizeof(indented), "%*s%s", 2 * r->depth, "",
             shown(r->name, name, sizeof(name)));
    snprintf(impl, sizeof(impl), "%s %s%s", pc ? pc->backend : "-", pc ? pc->info.impl : "",
             pc && pc->fell_back ? "*" : "");
    if (pc && (pc->info.in_layouts[0] || pc->info.out_layouts[0]))
        snprintf(layouts, sizeof(layouts), "%s -> %s", pc->info.in_layouts,
                 pc->info.out_layouts);
    else
        snprintf(layouts, sizeof(layouts), "-");
    printf("%-14.14s %-44.44s %-26.26s %-30.30s", r->op, indented, impl, layouts);
    for (size_t i = 0; i < t->n_cols; i++) {
        double ms = row_ms(p, r, t->cols[i]);
        if (ms >= 0)
            printf(" %9.3f", ms);
        else
            printf(" %9s", "-");
    }
    if (p->ref != SIZE_MAX && p->primary != p->ref)
        print_ratio(row_ratio(p, r, p->ref, p->primary));
    char decision[32];
    if (t->fused != SIZE_MAX) {
        print_ratio(row_ratio(p, r, t->unfused, t->fused));
        decision_text(r, decision, sizeof(decision));
        printf(" %8s", decision);
    }
    printf(" %5.1f", pc ? pc->pct : 0.0);
    printf(" %8.3f", pc ? pc->convert_ms : 0.0);
    if (r->flops >= 0 && pc && pc->ms.median > 0)
        printf(" %8.2f", (double)r->flops / (pc->ms.median * 1e6));
    else
        printf(" %8s", "-");
    format_compare(pc, cmp, sizeof(cmp));
    printf("  %s", cmp);
    double lost = row_lost(t, r);
    if (lost > 0)
        printf("  fusion lost %.1f ms (decision %s)", lost, decision);
    printf("\n");
}

static void print_header(const table *t, bool random_inputs)
{
    const gl_profile *p = t->p;
    char name[120], threads[32] = "default";
    if (p->threads > 0)
        snprintf(threads, sizeof(threads), "%d", p->threads);
    printf("# %s: threads %s, %d timed rounds (backends interleaved) after %d warm-up, %s "
           "inputs\n", shown(p->model, name, sizeof(name)), threads, p->reps, p->warmup,
           random_inputs ? "seeded random" : "data set");
    char omp[160];
    if (gl_omp_wait_note(omp, sizeof(omp)))
        printf("# %s\n", omp);
    for (size_t bi = 0; bi < p->n_backends; bi++)
        if (p->backends[bi].summary[0])
            printf("# %s: %s\n", p->backends[bi].name, p->backends[bi].summary);
    printf("%-14s %-44s %-26s %-30s", "op", "name", "backend/impl", "layouts");
    for (size_t i = 0; i < t->n_cols; i++) {
        char col[32];
        snprintf(col, sizeof(col), "%s ms", p->backends[t->cols[i]].name);
        printf(" %9s", col);
    }
    if (p->ref != SIZE_MAX && p->primary != p->ref)
        printf(" %8s", "speedup");
    if (t->fused != SIZE_MAX)
        printf(" %8s %8s", "fusion", "decision");
    printf(" %5s %8s %8s  %s\n", "%", "conv ms", "GFLOP/s", "compare max_abs/nmse");
}

/* "fusion lost: 2 groups slower fused than their members: NAME 36.2 ms (decision #41),
 * ...; 41.4 ms in all", or nothing when none lost. */
static void print_lost(const table *t)
{
    const gl_profile *p = t->p;
    size_t n = 0;
    double total = 0;
    for (size_t r = 0; r < p->n_rows; r++)
        if (row_lost(t, &p->rows[r]) > 0)
            n++;
    if (!n)
        return;
    printf("fusion lost: %zu group%s slower fused than %s members beyond noise:", n,
           n == 1 ? "" : "s", n == 1 ? "its" : "their");
    for (size_t r = 0, k = 0; r < p->n_rows; r++) {
        double lost = row_lost(t, &p->rows[r]);
        if (lost <= 0)
            continue;
        char name[64], decision[32];
        decision_text(&p->rows[r], decision, sizeof(decision));
        printf("%s %s %.1f ms (decision %s)", k++ ? "," : "",
               shown(p->rows[r].name, name, sizeof(name)), lost, decision);
        total += lost;
    }
    printf("; %.1f ms in all\n", total);
}

static void print_totals(const table *t, const char *data)
{
    const gl_profile *p = t->p;
    for (size_t i = 0; i < t->n_cols; i++) {
        const gl_profile_backend *b = &p->backends[t->cols[i]];
        printf("total %-5s nodes %.3f ms (per round min %.3f, max %.3f; conversions %.3f ms); "
               "whole run median %.3f ms (min %.3f, max %.3f); plan %.1f ms; reorders %zu, "
               "constants reordered %zu, primitives built %zu in the last run\n",
               b->name, b->node_ms, b->nodes.min, b->nodes.max, b->convert_ms, b->wall.median,
               b->wall.min, b->wall.max, b->create_ms, b->stats.reorders,
               b->stats.const_reorders, b->stats.builds);
    }
    char line[512], dir[160];
    gl_profile_expected_text(p, false, line, sizeof(line));
    if (line[0])
        printf("expected (%s): %s\n", shown(data, dir, sizeof(dir)), line);
    if (t->fused == SIZE_MAX)
        return;
    size_t groups = 0, members = 0;
    for (size_t r = 0; r < p->n_rows; r++)
        if (p->rows[r].n_members && cell(p, &p->rows[r], t->fused)) {
            groups++;
            members += p->rows[r].n_members;
        }
    const gl_profile_stat *f = &p->backends[t->fused].wall, *u = &p->backends[t->unfused].wall;
    char ratio[32];
    gl_profile_ratio_text(gl_profile_ratio_of(*u, *f, false), true, ratio, sizeof(ratio));
    printf("fusion: %zu %s of %zu nodes; whole run unfused %.3f ms (%.3f..%.3f), fused "
           "%.3f ms (%.3f..%.3f) (%s)\n", groups, gl_noun((long long)groups, "group", "groups"),
           members, u->median, u->min, u->max,
           f->median, f->min, f->max, ratio);
    print_lost(t);
}

/* A row that is a member of a fused group: shown under its group, not sorted apart. */
static bool is_member(const gl_profile *p, const gl_profile_row *r)
{
    return r->parent != SIZE_MAX && p->rows[r->parent].n_members > 0;
}

static void print_table(const gl_profile *p, const char *data)
{
    bool random_inputs = !data;
    table t = table_make(p);
    print_header(&t, random_inputs);
    size_t n = p->n_rows ? p->n_rows : 1;
    sort_item *order = gl_xmalloc(n * sizeof(*order));
    size_t *first = gl_xmalloc(n * sizeof(*first)), *next = gl_xmalloc(n * sizeof(*next));
    size_t n_order = 0;
    for (size_t r = 0; r < p->n_rows; r++)
        first[r] = next[r] = SIZE_MAX;
    for (size_t r = p->n_rows; r-- > 0;) {
        const gl_profile_row *row = &p->rows[r];
        if (is_member(p, row)) {
            next[r] = first[row->parent];
            first[row->parent] = r;
            continue;
        }
        const gl_profile_cell *c = cell(p, row, p->primary);
        for (size_t bi = 0; !c && bi < p->n_backends; bi++)
            c = cell(p, row, bi);
        order[n_order++] = (sort_item){c ? c->ms.median : 0, r};
    }
    qsort(order, n_order, sizeof(*order), by_time);
    for (size_t i = 0; i < n_order; i++) {
        size_t r = order[i].row;
        print_row(&t, &p->rows[r]);
        for (size_t m = first[r]; m != SIZE_MAX; m = next[m])
            print_row(&t, &p->rows[m]);
    }
    free(order);
    free(first);
    free(next);
    print_totals(&t, data);
    printf("(* the backend asked for did not take the node; indented: inside a subgraph or "
           "function body, counted in its caller's time");
    if (t.fused != SIZE_MAX)
        printf("; under a fused group: its members, which the unfused run ran one by one "
               "(the group's unfused ms is their sum; fusion: unfused / fused; decision: the "
               "fusion decision that formed the group)");
    printf("; ≈: the same kernel in both runs, or min..max ranges that overlap: no speedup "
           "beyond noise)\n");
}

/* ---- JSON ---------------------------------------------------------------------------------- */

/* {"ref": v, "dnnl": v} of one number per backend (null where the row did not run; a
 * group's median, min and max on the run that ran its members: their sums). */
static void json_per_backend(gl_json *j, const char *key, const gl_profile *p,
                             const gl_profile_row *r, int which)
{
    gl_json_object_begin(j, key);
    for (size_t bi = 0; bi < p->n_backends; bi++) {
        const gl_profile_cell *c = cell(p, r, bi);
        bool ran;
        gl_profile_stat st = gl_profile_row_stat(p, r, bi, &ran);
        double v = which == 0 ? st.median : which == 1 ? st.min : which == 2 ? st.max
                   : c ? c->convert_ms : 0;
        if (which == 3 ? c != NULL : ran)
            gl_json_double(j, p->backends[bi].name, v);
        else
            gl_json_null(j, p->backends[bi].name);
    }
    gl_json_object_end(j);
}

/* A ratio as {"value": x or null, "approx": bool, "same_kernel": bool}. */
static void json_ratio(gl_json *j, const char *key, gl_profile_ratio ratio)
{
    gl_json_object_begin(j, key);
    if (ratio.known)
        gl_json_double(j, "value", ratio.value);
    else
        gl_json_null(j, "value");
    gl_json_bool(j, "approx", ratio.approx || ratio.same_kernel);
    gl_json_bool(j, "same_kernel", ratio.same_kernel);
    gl_json_object_end(j);
}

/* With fused and unfused runs: the row's fusion ratio; a group's decision and loss. */
static void json_fusion(gl_json *j, const table *t, const gl_profile_row *r)
{
    if (t->fused == SIZE_MAX)
        return;
    json_ratio(j, "fusion", row_ratio(t->p, r, t->unfused, t->fused));
    if (!r->n_members)
        return;
    if (r->decision >= 0)
        gl_json_int(j, "decision", r->decision);
    else
        gl_json_null(j, "decision");
    gl_json_double(j, "lost_ms", row_lost(t, r));
}

static void json_node(gl_json *j, const table *t, const gl_profile_row *r)
{
    const gl_profile *p = t->p;
    const gl_profile_cell *pc = main_cell(p, r);
    gl_json_object_begin(j, NULL);
    gl_json_string(j, "name", r->name);
    gl_json_string(j, "op", r->op);
    gl_json_int(j, "depth", r->depth);
    if (r->n_members) {
        gl_json_array_begin(j, "members");
        for (size_t k = 0; k < r->n_members; k++)
            gl_json_string(j, NULL, r->members[k]);
        gl_json_array_end(j);
    }
    if (is_member(p, r))
        gl_json_string(j, "group", p->rows[r->parent].name);
    gl_json_string(j, "backend", pc ? pc->backend : NULL);
    gl_json_string(j, "impl", pc ? pc->info.impl : NULL);
    gl_json_string(j, "layouts_in", pc ? pc->info.in_layouts : NULL);
    gl_json_string(j, "layouts_out", pc ? pc->info.out_layouts : NULL);
    gl_json_string(j, "written_over", pc && pc->over[0] ? pc->over : NULL);
    json_per_backend(j, "ms", p, r, 0);
    json_per_backend(j, "min_ms", p, r, 1);
    json_per_backend(j, "max_ms", p, r, 2);
    json_per_backend(j, "convert_ms", p, r, 3);
    if (p->ref != SIZE_MAX && p->primary != p->ref)
        json_ratio(j, "speedup", row_ratio(p, r, p->ref, p->primary));
    json_fusion(j, t, r);
    gl_json_double(j, "pct", pc ? pc->pct : 0);
    if (r->flops >= 0)
        gl_json_int(j, "flops", r->flops);
    else
        gl_json_null(j, "flops");
    if (r->bytes >= 0)
        gl_json_int(j, "bytes", r->bytes);
    else
        gl_json_null(j, "bytes");
    if (pc && pc->compared) {
        gl_json_object_begin(j, "compare");
        gl_json_double(j, "max_abs", pc->cmp.max_abs);
        gl_json_double(j, "max_rel", pc->cmp.max_rel);
        gl_json_double(j, "nmse", pc->cmp.nmse);
        gl_json_bool(j, "ok", pc->cmp.ok);
        gl_json_object_end(j);
    } else {
        gl_json_null(j, "compare");
    }
    gl_json_object_end(j);
}

/* With a data set's outputs: "expected_ok" and per output {name, ok, max_abs}. */
static void json_expected(gl_json *j, const gl_profile *p, const gl_profile_backend *b)
{
    if (!p->has_expected || !b->expected)
        return;
    gl_json_bool(j, "expected_ok", b->expected_ok);
    gl_json_array_begin(j, "expected");
    for (size_t i = 0; i < p->n_outputs; i++) {
        if (!p->has_expected[i])
            continue;
        gl_json_object_begin(j, NULL);
        gl_json_string(j, "output", p->output_names[i]);
        gl_json_bool(j, "ok", b->expected[i].ok);
        gl_json_double(j, "max_abs", b->expected[i].max_abs);
        gl_json_object_end(j);
    }
    gl_json_array_end(j);
}

static void print_json(const gl_profile *p)
{
    gl_json j;
    gl_json_init(&j, stdout, true);
    gl_json_object_begin(&j, NULL);
    gl_json_string(&j, "model", p->model);
    gl_json_int(&j, "threads", p->threads);
    gl_json_int(&j, "reps", p->reps);
    gl_json_int(&j, "warmup", p->warmup);
    gl_json_object_begin(&j, "runs");
    for (size_t bi = 0; bi < p->n_backends; bi++) {
        const gl_profile_backend *b = &p->backends[bi];
        gl_json_object_begin(&j, b->name);
        gl_json_double(&j, "median_ms", b->wall.median);
        gl_json_double(&j, "min_ms", b->wall.min);
        gl_json_double(&j, "max_ms", b->wall.max);
        gl_json_double(&j, "node_ms", b->node_ms);
        gl_json_double(&j, "node_min_ms", b->nodes.min);
        gl_json_double(&j, "node_max_ms", b->nodes.max);
        gl_json_double(&j, "convert_ms", b->convert_ms);
        gl_json_double(&j, "plan_ms", b->create_ms);
        gl_json_string(&j, "plan", b->summary);
        gl_json_int(&j, "conversions", (int64_t)b->stats.conversions);
        gl_json_int(&j, "reorders", (int64_t)b->stats.reorders);
        gl_json_int(&j, "const_reorders", (int64_t)b->stats.const_reorders);
        gl_json_int(&j, "builds", (int64_t)b->stats.builds);
        if (b->compared)
            gl_json_bool(&j, "outputs_ok", b->outputs_ok);
        if (b->compared && b->first_divergence != SIZE_MAX)
            gl_json_string(&j, "first_divergence", p->rows[b->first_divergence].name);
        json_expected(&j, p, b);
        gl_json_object_end(&j);
    }
    gl_json_object_end(&j);
    gl_json_array_begin(&j, "nodes");
    table t = table_make(p);
    for (size_t r = 0; r < p->n_rows; r++)
        json_node(&j, &t, &p->rows[r]);
    gl_json_array_end(&j);
    gl_json_object_end(&j);
    gl_json_finish(&j);
}

/* ---- the verdict ----------------------------------------------------------------------------- */

/* One stderr line per graph output of run b over tolerance in cmp[] (`given`: which
 * outputs were compared, NULL: all), against `what` ("ref", the data set's folder). */
static void report_outputs(const gl_profile *p, const gl_profile_backend *b,
                           const gl_compare *cmp, const bool *given, const char *what)
{
    char name[120], model[120], against[160];
    for (size_t i = 0; cmp && i < p->n_outputs; i++) {
        if ((given && !given[i]) || cmp[i].ok)
            continue;
        char line[320];
        gl_compare_format(&cmp[i], line, sizeof(line));
        fprintf(stderr, "graphlab profile: %s: output '%s' [%s vs %s]: %s: MISMATCH\n",
                shown(p->model, model, sizeof(model)),
                shown(p->output_names[i], name, sizeof(name)), b->name,
                shown(what, against, sizeof(against)), line);
    }
}

/* Per backend compared with the reference: the outputs over tolerance and where the runs
 * part ways, on stderr. False when any output is over. */
static bool report_divergence(const gl_profile *p)
{
    bool ok = true;
    char name[120];
    for (size_t bi = 0; bi < p->n_backends; bi++) {
        const gl_profile_backend *b = &p->backends[bi];
        if (!b->compared || b->outputs_ok)
            continue;
        ok = false;
        report_outputs(p, b, b->outputs, NULL, "ref");
        if (b->first_divergence != SIZE_MAX) {
            const gl_profile_row *r = &p->rows[b->first_divergence];
            char line[320];
            gl_compare_format(&r->cells[bi].cmp, line, sizeof(line));
            fprintf(stderr, "graphlab profile: %s and ref part ways at node '%s' (%s): %s\n",
                    b->name, shown(r->name, name, sizeof(name)), r->op, line);
        }
    }
    return ok;
}

/* Per run, the graph outputs over tolerance of the data set's output_*.pb, on stderr
 * (as `run --data` compares them). False when any is over. */
static bool report_expected(const gl_profile *p, const char *data)
{
    bool ok = true;
    for (size_t bi = 0; bi < p->n_backends && p->has_expected; bi++) {
        const gl_profile_backend *b = &p->backends[bi];
        ok = ok && b->expected_ok;
        report_outputs(p, b, b->expected, p->has_expected, data);
    }
    return ok;
}

/* ---- the command ------------------------------------------------------------------------------ */

/* The profile, with --trace FILE written as it runs into a temporary file beside FILE
 * that takes FILE's place only when the profile succeeds (safe_write.h): a failure, or a
 * Ctrl-C or SIGTERM meanwhile, leaves no part of a trace behind. What a SIGKILL left
 * (the temporary file of a process that is gone) is removed first. */
static gl_status profile_traced(const gl_model *m, const gl_dataset *d, profile_args *a,
                                gl_profile **p)
{
    gl_atomic_file trace = {.fd = -1};
    if (a->trace) {
        gl_stale_file_temps_remove(a->trace); /* what a killed profile left */
        gl_status st = gl_atomic_open_stream(&trace, a->trace, &a->o.trace);
        if (st != GL_OK)
            return st;
        a->o.trace_name = a->trace;
    }
    gl_status st = gl_profile_run(m, (const gl_tensor *const *)d->inputs, d->n_inputs, &a->o, p);
    a->o.trace = NULL;
    if (a->trace && st == GL_OK)
        st = gl_atomic_commit(&trace);
    gl_atomic_abort(&trace); /* nothing left to do after a commit */
    if (st != GL_OK) {
        gl_profile_free(*p);
        *p = NULL;
    }
    return st;
}

/* Everything after loading; returns the exit code. */
static int profile_model(const gl_model *m, profile_args *a)
{
    gl_dataset d;
    gl_status st = gl_session_inputs(m, &a->so, &d);
    if (st != GL_OK)
        return gl_cli_fail(st);
    if (!a->so.data)
        fprintf(stderr, "graphlab profile: no --data: seeded random inputs, the same for "
                        "every backend and run\n");
    gl_profile *p = NULL;
    a->o.expected = d.expected ? (const gl_tensor *const *)d.expected : NULL;
    a->o.dnnl_fault = gl_settings_lookup_text(&a->so.settings, "dnnl", "fault");
    a->o.dnnl_delay = gl_settings_lookup_text(&a->so.settings, "dnnl", "delay");
    a->o.dnnl_no_winograd = gl_settings_lookup(&a->so.settings, "dnnl", "winograd", 1) == 0;
    st = profile_traced(m, &d, a, &p);
    a->o.expected = NULL;
    gl_dataset_free(&d);
    if (st != GL_OK)
        return gl_cli_fail(st);
    if (p->dropped_events)
        fprintf(stderr, "graphlab profile: the trace keeps the first %u node calls; %zu more "
                        "were left out\n", GL_PROFILE_MAX_EVENTS, p->dropped_events);
    if (a->json)
        print_json(p);
    else
        print_table(p, a->so.data);
    bool ok = report_divergence(p);
    ok = report_expected(p, a->so.data) && ok;
    int rc = ok ? GL_EXIT_OK : GL_EXIT_MISMATCH;
    gl_profile_free(p);
    return rc;
}

int gl_cmd_profile(int argc, char **argv)
{
    profile_args a = {0};
    gl_session s = {0}, unfused = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc == GL_EXIT_OK) {
        uint64_t t0 = gl_now_ns();
        gl_status st = gl_session_open(a.model, &a.so, &s);
        a.o.load_ns = gl_now_ns() - t0; /* the trace's model_loading_uri: passes included */
        if (st == GL_OK && a.unfused != SIZE_MAX) {
            st = gl_session_open_unfused(a.model, &a.so, &unfused);
            a.o.models[a.unfused] = unfused.model;
        }
        rc = st == GL_OK ? profile_model(s.model, &a) : gl_cli_fail(st);
    }
    gl_session_end(&unfused);
    gl_session_end(&s);
    free_args(&a);
    return rc < 0 ? GL_EXIT_OK : rc;
}

/* test_memory_plan.c — the memory-plan pass as a table of small graphs, the plan's
 * checker, and the reference executor run with and without the plan on every example
 * and every model of the corpora (the same outputs, bit for bit).
 *
 * A row is a graph in graphnote.h's notation and what the plan must say:
 *   life    — "A 0 1, B 1 2": each named tensor's first and last step (others unchecked);
 *   shares  — "B<A C=B": B written in place over A, C a view of B; every tensor not
 *             named has its own range;
 *   rule, reason — a refusal whose reason contains the text (NULL: no refusal at all);
 *   peak    — the arena's bytes.
 * Every row's plan passes gl_memory_plan_check and runs to the same outputs as the model
 * without its plan, with every planned range lent (none refused).
 */
#include "driver/driver.h"
#include "exec/compare.h"
#include "exec/exec.h"
#include "exec/intermediates.h"
#include "graphnote.h"
#include "ir/memplan.h"
#include "passes/pipeline.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mcase {
    const char *name;
    const char *graph;
    const char *passes;
    const char *life;
    const char *shares;
    const char *rule, *reason;
    size_t peak;        /* the arena, in bytes: every row checks it */
} mcase;

#define PLAN "toposort,shape-inference,memory-plan"
#define FUSE_PLAN "toposort,shape-inference,fusion,memory-plan"
#define X64 "in x f32s[1,64]; "

static const mcase cases[] = {
    {"chain-in-place", X64 "A = Relu(x); B = Sigmoid(A); C = Tanh(B); out C", PLAN,
     "A 0 1, B 1 2", "B<A", NULL, NULL, 256},
    {"later-reader", X64 "A = Relu(x); B = Sigmoid(A); C = Add(A, B); out C", PLAN,
     "A 0 2, B 1 2", "", "in-place", "another later reader", 512},
    {"binary-second-input", X64 "A = Relu(x); B = Sigmoid(x); C = Add(A, B); D = Tanh(C); out D",
     PLAN, "A 0 2, B 1 2, C 2 3", "C<A", NULL, NULL, 512},
    {"shape-differs", "in x f32s[4,1]; in y f32s[1,4]; A = Relu(x); B = Add(A, y); C = Relu(B); "
     "out C", PLAN, "A 0 1, B 1 2", "", "in-place", "shape or dtype differ", 128},
    {"dtype-differs", X64 "A = Relu(x); B = Cast(A) to=11; C = Relu(B); out C", PLAN,
     "A 0 1, B 1 2", "", "in-place", "shape or dtype differ", 768},
    {"not-capable", X64 "A = Relu(x); B = Softmax(A); C = Relu(B); out C", PLAN,
     "A 0 1, B 1 2", "", "in-place", "not in-place capable", 512},
    {"view-then-in-place", "in x f32s[2,8]; const s i64[1] = 16; A = Relu(x); B = Reshape(A, s); "
     "C = Sigmoid(B); D = Tanh(C); out D", PLAN, "A 0 1, B 1 2, C 2 3", "B=A C<B", NULL, NULL, 64},
    {"view-read-later", "in x f32s[2,8]; const s i64[2] = 2,8; A = Relu(x); B = Reshape(A, s); "
     "C = Sigmoid(A); D = Add(C, B); out D", PLAN, "A 0 2, B 1 3, C 2 3", "B=A", "in-place",
     "read later", 128},
    {"view-of-graph-input", "in x f32s[2,8]; const s i64[1] = 16; A = Reshape(x, s); "
     "B = Relu(A); C = Tanh(B); out C", PLAN, "B 1 2", "", NULL, NULL, 64},
    {"reuse-after-death", X64 "A = Softmax(x); B = Softmax(A); C = Softmax(B); D = Softmax(C); "
     "out D", PLAN, "A 0 1, B 1 2, C 2 3", "", "in-place", "not in-place capable", 512},
    {"unread-output", X64 "A, M = Dropout(x); B = Relu(A); out B", PLAN, "A 0 1", "", NULL,
     NULL, 320 /* A, and the unread mask M (64 bools) while A is made */},
    {"residual-sum", "in x f32s[1,4,8,8]; const w f32s[4,4,1,1] = rand; A = Relu(x); "
     "R = Sigmoid(x); B = Conv(A, w); C = Add(B, R); D = Relu(C); E = Softmax(D); out E",
     FUSE_PLAN, "A 0 2, R 1 2, D 2 3", "D<R", NULL, NULL, 2048},
    {"residual-read-again", "in x f32s[1,4,8,8]; const w f32s[4,4,1,1] = rand; A = Relu(x); "
     "R = Sigmoid(x); B = Conv(A, w); C = Add(B, R); D = Relu(C); E = Softmax(D); F = Add(E, R); "
     "out F", FUSE_PLAN, "R 1 4", "", "in-place-residual", "another later reader", 3072},
};

static const gl_mem_tensor *find_tensor(const gl_memory_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n_tensors; i++)
        if (strcmp(p->tensors[i].name, name) == 0)
            return &p->tensors[i];
    return NULL;
}

static void expect_lifetimes(const mcase *c, const gl_memory_plan *p)
{
    char name[32];
    size_t first, last;
    int used = 0;
    const char *s = c->life;
    for (; s && sscanf(s, " %31[^ ,] %zu %zu%n", name, &first, &last, &used) == 3;
         s += used, s += *s == ',') {
        const gl_mem_tensor *t = find_tensor(p, name);
        cr_expect(t, "%s: no tensor '%s' in the plan", c->name, name);
        if (t)
            cr_expect(t->first == first && t->last == last, "%s: '%s' lives %zu..%zu, expected "
                      "%zu..%zu", c->name, name, t->first, t->last, first, last);
    }
    /* a typo in the row would otherwise check nothing from there on */
    while (s && *s == ' ')
        s++;
    cr_expect(!s || !*s, "%s: the lifetimes '%s' do not parse from '%s'", c->name, c->life, s);
}

/* "B<A C=B": the share and source of each named tensor; the others their own. */
static void expect_shares(const mcase *c, const gl_memory_plan *p)
{
    for (size_t i = 0; i < p->n_tensors; i++) {
        const gl_mem_tensor *t = &p->tensors[i];
        char want[64];
        gl_mem_share share = GL_MEM_OWN;
        const char *source = NULL;
        snprintf(want, sizeof(want), " %s<", t->name);
        char padded[256];
        snprintf(padded, sizeof(padded), " %s", c->shares);
        const char *at = strstr(padded, want);
        if (at)
            share = GL_MEM_IN_PLACE;
        else {
            snprintf(want, sizeof(want), " %s=", t->name);
            if ((at = strstr(padded, want)))
                share = GL_MEM_VIEW;
        }
        if (at)
            source = at + strlen(want);
        cr_expect_eq(t->share, share, "%s: '%s' has share %d, expected %d", c->name, t->name,
                     (int)t->share, (int)share);
        if (source && t->share == share) {
            const char *got = p->tensors[t->source].name;
            cr_expect(strncmp(source, got, strlen(got)) == 0 &&
                          (source[strlen(got)] == ' ' || !source[strlen(got)]),
                      "%s: '%s' shares '%s', expected '%.8s'", c->name, t->name, got, source);
        }
    }
}

static void expect_decisions(const mcase *c, const gl_pipeline *pl)
{
    const gl_snapshot *s = &pl->steps[pl->n_steps - 1];
    size_t refusals = 0, found = 0;
    for (size_t i = 0; i < s->n_decisions; i++) {
        const gl_decision *d = &pl->log.items[s->first_decision + i];
        if (d->verdict != GL_REFUSED)
            continue;
        refusals++;
        if (c->rule && strcmp(d->rule, c->rule) == 0 && strstr(d->reason, c->reason))
            found++;
    }
    if (c->rule)
        cr_expect(found, "%s: no refusal '%s' saying '%s'", c->name, c->rule, c->reason);
    else
        cr_expect_eq(refusals, 0u, "%s: %zu refusals, none expected", c->name, refusals);
}

/* Every tensor kept by an observer of the two runs, in the same order with the same
 * bytes: a kept tensor on a planned range must not be one a later node writes again
 * (graphlab run --intermediates once reported resnet18's MaxPool as diverging, its
 * range overwritten by layer1 before the comparison). */
static void expect_same_kept(const char *what, const gl_inter_rec *with,
                             const gl_inter_rec *without, int run)
{
    cr_assert_eq(gl_inter_rec_count(with), gl_inter_rec_count(without),
                 "%s: %zu tensors kept with the plan, %zu without", what,
                 gl_inter_rec_count(with), gl_inter_rec_count(without));
    for (size_t i = 0; i < gl_inter_rec_count(with); i++) {
        const gl_inter_tensor *a = gl_inter_rec_at(with, i), *b = gl_inter_rec_at(without, i);
        cr_expect_str_eq(a->key, b->key, "%s: kept tensor %zu", what, i);
        cr_expect(gl_tensor_equal(a->t, b->t), "%s: kept '%s' differs with the plan (run %d)",
                  what, a->key, run + 1);
    }
}

/* Run m on the reference backend with and without its plan: the same bytes out and the
 * same intermediates kept, every planned range lent. */
static void expect_same_run(const char *what, const gl_model *m, const gl_tensor *const *in,
                            size_t n_in, bool all_lent)
{
    size_t n_out = m->graph->n_outputs;
    gl_tensor **with = gl_xcalloc(n_out, sizeof(*with)), **without = gl_xcalloc(n_out,
                                                                                sizeof(*without));
    gl_exec *a = NULL, *b = NULL;
    gl_exec_options oa = {.backend = "ref"}, ob = {.backend = "ref", .no_memory_plan = true};
    cr_assert_eq(gl_exec_create(m, &oa, &a), GL_OK, "%s: %s", what, gl_error_message());
    cr_assert_eq(gl_exec_create(m, &ob, &b), GL_OK, "%s: %s", what, gl_error_message());
    gl_inter_rec *kept_a = gl_inter_rec_new(NULL), *kept_b = gl_inter_rec_new(NULL);
    gl_inter_rec_attach(kept_a, a);
    gl_inter_rec_attach(kept_b, b);
    for (int run = 0; run < 2; run++) { /* the second run reuses what the first lent */
        cr_assert_eq(gl_exec_run(a, in, n_in, with, n_out), GL_OK, "%s: with the plan: %s", what,
                     gl_error_message());
        cr_assert_eq(gl_exec_run(b, in, n_in, without, n_out), GL_OK, "%s: without: %s", what,
                     gl_error_message());
        for (size_t i = 0; i < n_out; i++) {
            cr_expect(gl_tensor_equal(with[i], without[i]), "%s: output %zu differs with the plan "
                      "(run %d)", what, i, run + 1);
            gl_tensor_free(with[i]);
            gl_tensor_free(without[i]);
        }
        expect_same_kept(what, kept_a, kept_b, run);
    }
    gl_exec_stats st;
    gl_exec_get_stats(a, &st);
    const gl_memory_plan *p = m->memory_plan;
    cr_expect_eq(st.arena_bytes, p->peak_bytes, "%s: arena of %zu bytes, planned %zu", what,
                 st.arena_bytes, p->peak_bytes);
    if (p->n_tensors)
        cr_expect(st.arena_lent > 0, "%s: no range lent", what);
    if (all_lent)
        cr_expect_eq(st.arena_refused, 0u, "%s: %zu ranges refused", what, st.arena_refused);
    fprintf(stderr, "%s: arena %zu bytes, %zu lent, %zu allocated apart\n", what, st.arena_bytes,
            st.arena_lent, st.arena_refused);
    gl_exec_free(a);
    gl_exec_free(b);
    gl_inter_rec_free(kept_a);
    gl_inter_rec_free(kept_b);
    free(with);
    free(without);
}

Test(memory_plan, table)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        const mcase *c = &cases[i];
        gn_graph b;
        gl_pipeline *pl = gn_run_passes(c->name, 17, c->graph, NULL, c->passes, &b);
        if (!pl)
            continue;
        const gl_model *m = gl_pipeline_result(pl);
        if (getenv("GL_MPTEST_SHOW") && strcmp(getenv("GL_MPTEST_SHOW"), c->name) == 0)
            for (size_t k = 0; k < pl->log.n; k++)
                gl_decision_print(&pl->log.items[k], stderr);
        const gl_memory_plan *p = m->memory_plan;
        cr_assert(p, "%s: no plan", c->name);
        char why[512];
        cr_expect(gl_memory_plan_check(p, why, sizeof(why)), "%s: %s", c->name, why);
        expect_lifetimes(c, p);
        expect_shares(c, p);
        expect_decisions(c, pl);
        cr_expect_eq(p->peak_bytes, c->peak, "%s: arena of %zu bytes, expected %zu", c->name,
                         p->peak_bytes, c->peak);
        cr_expect(p->peak_bytes >= p->live_max_bytes, "%s", c->name);
        gl_tensor **in = gn_feeds(&b, m->graph, c->name);
        expect_same_run(c->name, m, (const gl_tensor *const *)in, m->graph->n_inputs, true);
        gn_free_tensors(in, m->graph->n_inputs);
        gl_pipeline_free(pl);
    }
}

/* The checker finds overlaps, so that passing it means something. */
Test(memory_plan, checker_refuses_overlap)
{
    gl_mem_tensor t[2] = {
        {.name = "a", .bytes = 64, .size = 64, .first = 0, .last = 2, .offset = 0, .root = 0,
         .source = SIZE_MAX},
        {.name = "b", .bytes = 64, .size = 64, .first = 1, .last = 3, .offset = 0, .root = 1,
         .source = SIZE_MAX},
    };
    gl_memory_plan p = {.n_steps = 4, .tensors = t, .n_tensors = 2, .peak_bytes = 128};
    char why[256];
    cr_expect(!gl_memory_plan_check(&p, why, sizeof(why)));
    cr_expect(strstr(why, "overlap"), "%s", why);
    t[1].offset = 64;
    cr_expect(gl_memory_plan_check(&p, why, sizeof(why)), "%s", why);
    t[1].first = 3; /* after a's last step, the same range is free again */
    t[1].offset = 0;
    cr_expect(gl_memory_plan_check(&p, why, sizeof(why)), "%s", why);
    t[1].offset = 96; /* not aligned */
    cr_expect(!gl_memory_plan_check(&p, why, sizeof(why)));
}

/* The default pipeline on a model file: its plan checks, and runs as without it. */
static void plan_model(const char *path)
{
    gl_session_opts so;
    gl_session_opts_init(&so, "all");
    gl_session s = {0};
    cr_assert_eq(gl_session_open(path, &so, &s), GL_OK, "%s: %s", path, gl_error_message());
    const gl_memory_plan *p = s.model->memory_plan;
    cr_assert(p, "%s: no memory plan after the default pipeline", path);
    char why[512];
    cr_expect(gl_memory_plan_check(p, why, sizeof(why)), "%s: %s", path, why);
    fprintf(stderr, "%s: peak %zu, live max %zu, naive %zu (%.3f of live max)\n", path,
            p->peak_bytes, p->live_max_bytes, p->naive_bytes,
            p->live_max_bytes ? (double)p->peak_bytes / (double)p->live_max_bytes : 1.0);
    gl_dataset d = {0};
    cr_assert_eq(gl_session_inputs(s.model, &so, &d), GL_OK, "%s", gl_error_message());
    expect_same_run(path, s.model, (const gl_tensor *const *)d.inputs, d.n_inputs, false);
    gl_dataset_free(&d);
    gl_session_close(&s);
    gl_session_opts_free(&so);
}

Test(memory_plan, examples, .timeout = 120)
{
    static const char *const examples[] = {"examples/conv_nhwc/model.onnx",
                                           "examples/mlp_external/model.onnx",
                                           "examples/tiny_if/model.onnx",
                                           "examples/transformer_block/model.onnx"};
    for (size_t i = 0; i < GL_ARRAY_LEN(examples); i++)
        plan_model(tu_src(examples[i]));
}

/* The in-tree models, and the shared ones when present. */
Test(memory_plan, corpora, .timeout = 600)
{
    glob_t gb = {0};
    cr_assert_gt(tu_glob_corpora("*/model.onnx", &gb), 0, "no models in the corpora");
    for (size_t i = 0; i < gb.gl_pathc; i++)
        plan_model(gb.gl_pathv[i]);
    globfree(&gb);
}

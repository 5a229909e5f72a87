/* test_weight_identity.c — weights loaded from external data are known by where they lie,
 * not by reading them (issue 23).
 *
 * The pipeline fingerprints every step (ir/fingerprint.c) and `cse` keys constants
 * (passes/cse.c); on a 1.2 GB decoder both read every weight from its file. Each case
 * here is a model whose constants are saved as external data and loaded again (mapped,
 * as the loader maps them); "unread" cases make the mappings unreadable first
 * (mprotect PROT_NONE), so a read of one weight byte is a crash, not a slowdown. The
 * other cases check that nothing is lost: a changed weight still changes the
 * fingerprint, and `cse` still merges equal weights and keeps different ones. */
#include "onnx/onnx_io.h"
#include "passes/pass_ctx.h"
#include "passes/passes.h"
#include "testutil.h"
#include "util/strbuf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* ---- models with external weights -------------------------------------------------------- */

#define MAX_WEIGHTS 4

/* A weight: random floats from `seed`, element `tweak` (when not 0) plus one. Two weights
 * of the same dims, seed and tweak hold the same bytes. */
typedef struct weight_spec {
    const char *name;
    int64_t rows, cols;
    uint32_t seed;
    int64_t tweak;
} weight_spec;

static gl_tensor *weight_bytes(const weight_spec *w)
{
    uint32_t seed = w->seed;
    gl_tensor *t = tu_random_f32(2, (int64_t[]){w->rows, w->cols}, &seed);
    if (w->tweak)
        ((float *)gl_tensor_make_writable(t))[w->tweak] += 1.0f;
    return t;
}

/* out_i = x_i + w_i for each weight, saved in `dir` with every weight external, loaded
 * again. Each weight has its own input: merging two weights changes no node. */
static gl_model *external_model(const char *dir, const weight_spec *w, size_t n)
{
    gl_model *m = tu_model(13);
    for (size_t i = 0; i < n; i++) {
        char x[32], add[32];
        snprintf(x, sizeof(x), "x_%s", w[i].name);
        snprintf(add, sizeof(add), "add_%s", w[i].name);
        gl_value *in = tu_input(m->graph, x, GL_DT_FLOAT, 2, (int64_t[]){w[i].rows, w[i].cols});
        gl_value *c = tu_const_tensor(m->graph, w[i].name, weight_bytes(&w[i]));
        tu_output(m->graph, tu_node(m->graph, "Add", add, 2, in, c)->outputs[0]);
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/m.onnx", dir);
    gl_save_options so = {.external_threshold = 1};
    cr_assert_eq(gl_model_save(m, path, &so), GL_OK, "%s", gl_error_message());
    gl_model_free(m);
    gl_model *loaded = NULL;
    cr_assert_eq(gl_model_load(path, NULL, &loaded), GL_OK, "%s", gl_error_message());
    for (size_t i = 0; i < loaded->graph->n_inits; i++)
        cr_assert_eq(loaded->graph->inits[i]->init->buf->kind, GL_BUF_MMAP,
                     "'%s' is mapped from the file", loaded->graph->inits[i]->name);
    return loaded;
}

/* Every mapped weight of g unreadable (a read faults) or readable again. */
static void hide_weights(const gl_graph *g, bool hidden)
{
    for (size_t i = 0; i < g->n_inits; i++) {
        const gl_buffer *b = g->inits[i]->init->buf;
        cr_assert_eq(mprotect(b->map_base, b->map_len, hidden ? PROT_NONE : PROT_READ), 0,
                     "mprotect '%s'", g->inits[i]->name);
    }
}

/* ---- the fingerprint ---------------------------------------------------------------------- */

typedef enum fp_edit {
    FP_NONE,          /* a second load of the same files: the same graph */
    FP_WRITE_ONE,     /* w1's first element changed through gl_tensor_make_writable */
    FP_SWAP_TWO,      /* w1 and w2 (one dims, other bytes) trade places */
} fp_edit;

typedef struct fp_case {
    const char *what;
    weight_spec w[MAX_WEIGHTS];
    size_t n;
    fp_edit edit;
    bool same; /* the edited second load has the first load's fingerprint */
} fp_case;

static const fp_case fp_cases[] = {
    {"unchanged", {{"w1", 64, 96, 1, 0}, {"w2", 64, 96, 2, 0}}, 2, FP_NONE, true},
    {"one byte written", {{"w1", 64, 96, 1, 0}, {"w2", 64, 96, 2, 0}}, 2, FP_WRITE_ONE, false},
    {"two weights trade places", {{"w1", 64, 96, 1, 0}, {"w2", 64, 96, 2, 0}}, 2, FP_SWAP_TWO,
     false},
};

static void apply_fp_edit(gl_model *m, fp_edit edit)
{
    gl_value *w1 = gl_find_value(m->graph, "w1"), *w2 = gl_find_value(m->graph, "w2");
    gl_tensor *t;
    switch (edit) {
    case FP_NONE:
        break;
    case FP_WRITE_ONE:
        ((float *)gl_tensor_make_writable(w1->init))[0] += 1.0f;
        break;
    case FP_SWAP_TWO:
        t = w1->init;
        w1->init = w2->init;
        w2->init = t;
        break;
    }
}

/* The fingerprint reads no weight (the mappings are unreadable while it is taken) and
 * still tells each edit apart. Before issue 23's change it hashed every weight's bytes:
 * the unreadable mapping crashed it. */
Test(weight_identity, fingerprint_knows_weights_by_their_place)
{
    for (size_t i = 0; i < sizeof(fp_cases) / sizeof(fp_cases[0]); i++) {
        const fp_case *c = &fp_cases[i];
        char *dir = tu_tmpdir();
        gl_model *first = external_model(dir, c->w, c->n);
        char path[4096];
        snprintf(path, sizeof(path), "%s/m.onnx", dir);
        gl_model *second = NULL;
        cr_assert_eq(gl_model_load(path, NULL, &second), GL_OK, "%s", gl_error_message());

        hide_weights(first->graph, true);
        uint64_t before = gl_graph_fingerprint(first->graph);
        hide_weights(first->graph, false);
        cr_expect_eq(gl_graph_fingerprint(first->graph), before, "%s: readable or not, the "
                     "same fingerprint", c->what);

        apply_fp_edit(second, c->edit);
        uint64_t after = gl_graph_fingerprint(second->graph);
        if (c->same)
            cr_expect_eq(after, before, "%s: the same graph, another fingerprint", c->what);
        else
            cr_expect_neq(after, before, "%s: the edit is not seen", c->what);
        gl_model_free(first);
        gl_model_free(second);
        tu_rmtree(dir);
        free(dir);
    }
}

/* ---- cse's constant keys ------------------------------------------------------------------ */

typedef struct cse_case {
    const char *what;
    weight_spec w[MAX_WEIGHTS];
    size_t n;
    bool unread;            /* the mappings are unreadable while cse runs */
    const char *inits_after; /* the initializers left, in order */
} cse_case;

/* 128 x 256 floats: 128 kB, keyed by samples of the bytes (first, middle and last 64). */
static const cse_case cse_cases[] = {
    {"equal bytes at two places merge", {{"a", 128, 256, 1, 0}, {"b", 128, 256, 1, 0}}, 2,
     false, "a"},
    {"other bytes stay", {{"a", 128, 256, 1, 0}, {"b", 128, 256, 2, 0}}, 2, false, "a b"},
    {"equal where sampled, one element apart stay",
     {{"a", 128, 256, 1, 0}, {"b", 128, 256, 1, 5000}}, 2, false, "a b"},
    {"three of one shape: the equal pair merges",
     {{"a", 128, 256, 1, 0}, {"b", 128, 256, 1, 5000}, {"c", 128, 256, 1, 0}}, 3, false,
     "a b"},
    {"small equal weights merge", {{"a", 8, 8, 3, 0}, {"b", 8, 8, 3, 0}}, 2, false, "a"},
    /* no other constant has its dims: nothing to compare, no byte read */
    {"each dims once, unread",
     {{"a", 128, 256, 1, 0}, {"b", 256, 128, 1, 0}, {"c", 64, 64, 1, 0}}, 3, true, "a b c"},
};

static char *init_names(const gl_graph *g)
{
    gl_strbuf b = {0};
    for (size_t i = 0; i < g->n_inits; i++)
        gl_sb_printf(&b, "%s%s", i ? " " : "", g->inits[i]->name);
    return gl_sb_take(&b);
}

static void run_cse(gl_model *m, const char *set)
{
    gl_settings settings = {0};
    cr_assert_eq(gl_settings_apply(&settings, set), GL_OK, "%s", gl_error_message());
    gl_decision_log log = {0};
    gl_pass_ctx ctx = {.model = m, .pass = gl_pass_find("cse"), .step = 1,
                       .budget = GL_BUDGET_UNLIMITED, .log = &log, .settings = &settings};
    cr_assert_not_null(ctx.pass);
    cr_assert_eq(gl_pass_run(m->graph, &ctx), GL_OK, "%s", gl_error_message());
    gl_decision_clear(&ctx.scratch);
    gl_decision_log_free(&log);
    gl_settings_free(&settings);
}

/* With max-bytes raised over the weights' size. Before issue 23's change cse hashed
 * every byte of each constant: the unread case crashed on its unreadable mappings. */
Test(weight_identity, cse_keys_big_constants_without_reading_them_all)
{
    for (size_t i = 0; i < sizeof(cse_cases) / sizeof(cse_cases[0]); i++) {
        const cse_case *c = &cse_cases[i];
        char *dir = tu_tmpdir();
        gl_model *m = external_model(dir, c->w, c->n);
        if (c->unread)
            hide_weights(m->graph, true);
        run_cse(m, "cse.max-bytes=1000000");
        if (c->unread)
            hide_weights(m->graph, false);
        char *names = init_names(m->graph);
        cr_expect_str_eq(names, c->inits_after, "%s", c->what);
        cr_expect_eq(gl_graph_verify(m->graph, false), GL_OK, "%s: %s", c->what,
                     gl_error_message());
        free(names);
        gl_model_free(m);
        tu_rmtree(dir);
        free(dir);
    }
}

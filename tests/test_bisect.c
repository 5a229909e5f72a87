/* test_bisect.c — vetoes replay with their ids and are checked (what bisect and the
 * workbench's what-if stand on). */
#include "driver/driver.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* Open `model` (examples/...) with the default pipeline, every step kept, and `sets`
 * (--set values, NULL-terminated list, may be NULL). */
static gl_status open_with(const char *model, const char *const *sets, gl_session_opts *o,
                           gl_session *s)
{
    gl_session_opts_init(o, "all");
    o->pipeline_flags = GL_PIPELINE_KEEP_SNAPSHOTS;
    o->always_pipeline = true;
    for (size_t i = 0; sets && sets[i]; i++)
        cr_assert_eq(gl_session_option_set(o, "set", sets[i]), GL_OK, "%s: %s", sets[i],
                     gl_error_message());
    return gl_session_open(tu_src(model), o, s);
}

#define CONV "examples/conv_nhwc/model.onnx"
#define TB "examples/transformer_block/model.onnx"

/* ---- vetoes ----------------------------------------------------------------------------- */

static size_t count_op(const gl_model *m, const char *op)
{
    size_t k = 0;
    gl_node *n;
    gl_foreach_node(m->graph, i, n)
        k += strcmp(n->op_type, op) == 0;
    return k;
}

typedef struct veto_case {
    const char *model;
    const char *set;
    const char *error;      /* NULL: the run succeeds */
    int64_t id;             /* the vetoed record (when no error) */
    const char *op;         /* counted after the vetoed record's step: */
    size_t with, without;   /* with the veto, without */
} veto_case;

static const veto_case veto_cases[] = {
    /* A vetoed push leaves Transposes the unvetoed run cancels. */
    {CONV, "transpose-push.veto=3", NULL, 3, "Transpose", 4, 2},
    {CONV, "layout.veto=6", NULL, 6, "NhwcConv", 0, 2},
    {CONV, "fusion.veto=16", NULL, 16, "FusedNhwcConvRelu_1", 0, 1},
    {TB, "patterns.veto=18", NULL, 18, "Erf", 1, 0},
    {TB, "constant-folding.veto=2", NULL, 2, "Constant", 1, 0},
    {CONV, "cse.veto=3", "decision #3 is transpose-push 'push-through-Add' (applied), not a "
     "rewrite of cse", -1, NULL, 0, 0},
    {CONV, "transpose-push.veto=1", "decision #1 is transpose-push 'push-through-Conv' "
     "(refused)", -1, NULL, 0, 0},
    {CONV, "transpose-push.veto=999", "there is no decision #999", -1, NULL, 0, 0},
};

Test(bisect, vetoes)
{
    for (size_t c = 0; c < GL_ARRAY_LEN(veto_cases); c++) {
        const veto_case *t = &veto_cases[c];
        const char *sets[] = {t->set, NULL};
        gl_session_opts o, o0;
        gl_session s, s0;
        gl_status st = open_with(t->model, sets, &o, &s);
        if (t->error) {
            tu_expect_error(st, t->set, t->error);
        } else {
            cr_assert_eq(st, GL_OK, "%s: %s", t->set, gl_error_message());
            cr_assert_eq(open_with(t->model, NULL, &o0, &s0), GL_OK);
            const gl_decision *d = &s.pipeline->log.items[t->id];
            const gl_decision *d0 = &s0.pipeline->log.items[t->id];
            cr_assert_eq(d->verdict, GL_REFUSED, "%s", t->set);
            cr_assert_eq(d0->verdict, GL_APPLIED, "%s", t->set);
            cr_assert(strstr(d->reason, "vetoed") && strstr(d->reason, d0->reason),
                      "%s: %s", t->set, d->reason);
            cr_assert_str_eq(d->rule, d0->rule);
            /* Everything before the veto is the same run. */
            for (int64_t i = 0; i < t->id; i++)
                cr_assert_str_eq(s.pipeline->log.items[i].reason,
                                 s0.pipeline->log.items[i].reason, "%s: #%lld", t->set,
                                 (long long)i);
            size_t with = count_op(s.pipeline->steps[d->step].model, t->op);
            size_t without = count_op(s0.pipeline->steps[d->step].model, t->op);
            cr_assert(with == t->with && without == t->without,
                      "%s: %s after step %d: %zu with the veto, %zu without", t->set, t->op,
                      d->step, with, without);
            gl_session_close(&s0);
            gl_session_opts_free(&o0);
        }
        gl_session_close(&s);
        gl_session_opts_free(&o);
    }
}

Test(bisect, veto_lists_parse)
{
    static const struct {
        const char *set, *error;
    } cases[] = {
        {"transpose-push.veto=3,10", NULL},
        {"transpose-push.veto=3,", "is not a list of decision ids"},
        {"transpose-push.veto=-1", "is not a list of decision ids"},
        {"transpose-push.veto=", "is not a list of decision ids"},
        {"nosuch.veto=1", "is not an option of any pass"},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_settings s = {0};
        tu_expect_error(gl_settings_apply(&s, cases[c].set), cases[c].set, cases[c].error);
        if (!cases[c].error) {
            cr_assert_eq(s.n, 2);
            cr_assert_eq(s.items[1].value, 10);
        }
        gl_settings_free(&s);
    }
}

/* A rule whose pass applies without asking gl_pass_vetoed: an error naming it, not a
 * record that says refused over a graph that changed. */
Test(bisect, unheeded_veto_is_an_error)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    tu_output(g, tu_node(g, "Relu", "keep", 1, x)->outputs[0]);
    tu_node(g, "Neg", "dead", 1, x);
    gl_pass_step *plan;
    size_t n;
    cr_assert_eq(gl_pass_list_parse("dce", &plan, &n), GL_OK);
    gl_settings s = {0};
    cr_assert_eq(gl_settings_apply(&s, "dce.veto=0"), GL_OK);
    gl_pipeline *p;
    tu_expect_error(gl_pipeline_run(m, plan, n, &s, 0, &p), "dce.veto=0",
                    "#0 (dce 'dead-node') cannot be vetoed");
    cr_assert_not_null(p->failure);
    gl_pipeline_free(p);
    free(plan);
    gl_settings_free(&s);
}

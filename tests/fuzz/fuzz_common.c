/* fuzz_common.c — loading and optimizing as the commands do, with the contracts checked
 * (fuzz.h). */
#include "fuzz.h"

#include "diff/diff.h"
#include "onnx/onnx_io.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void broken(const char *what, const char *fmt, const char *arg)
{
    fprintf(stderr, "fuzz: %s: ", what);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    abort();
}

bool fuzz_check(gl_status st, const char *what)
{
    if (st == GL_OK)
        return true;
    const char *msg = gl_error_message();
    if (!*msg)
        broken(what, "failed with %s and no message", gl_status_name(st));
    if (st == GL_ERR_INTERNAL)
        broken(what, "internal error (a bug of ours): %s", msg);
    return false;
}

gl_model *fuzz_load(const uint8_t *data, size_t size)
{
    gl_model *m = NULL;
    gl_error_clear();
    gl_status st = gl_model_load_buffer(data, size, FUZZ_MODEL_NAME, NULL, NULL, &m);
    if (!fuzz_check(st, "load")) {
        if (strncmp(gl_error_message(), FUZZ_MODEL_NAME, strlen(FUZZ_MODEL_NAME)) != 0)
            broken("load", "the message does not start with the file name: %s",
                   gl_error_message());
        return NULL;
    }
    if (!fuzz_check(gl_check_acyclic(m->graph), "acyclic check")) {
        gl_model_free(m);
        return NULL;
    }
    return m;
}

/* What `optimize` does with the result: serialize it. What it wrote must load again. */
static void save_and_reload(const gl_model *m)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    if (!fuzz_check(gl_model_serialize(m, &bytes, &len), "serialize the result"))
        return;
    gl_model *again = NULL;
    gl_status st = gl_model_load_buffer(bytes, len, FUZZ_MODEL_NAME, NULL, NULL, &again);
    free(bytes);
    if (st != GL_OK)
        broken("reload", "the optimized model does not load back: %s", gl_error_message());
    gl_model_free(again);
}

gl_pipeline *fuzz_optimize(gl_model *m)
{
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    if (!fuzz_check(gl_pass_list_parse("all", &plan, &n_plan), "--passes all")) {
        gl_model_free(m);
        return NULL;
    }
    gl_pipeline *p = NULL;
    gl_status st = gl_pipeline_run(m, plan, n_plan, NULL, GL_PIPELINE_KEEP_SNAPSHOTS, &p);
    free(plan);
    if (!fuzz_check(st, "pipeline")) {
        gl_pipeline_free(p);
        return NULL;
    }
    for (size_t k = 1; k < p->n_steps; k++)
        gl_diff_free(gl_diff_graphs(p->steps[k - 1].model->graph, p->steps[k].model->graph,
                                    GL_DIFF_MATCH_IDS));
    save_and_reload(gl_pipeline_result(p));
    return p;
}

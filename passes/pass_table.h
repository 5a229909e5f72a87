/* pass_table.h — the list of passes (pass_table.c): finding a pass by name, the
 * default pipeline, and `--passes` lists parsed into steps. For the pipeline, the
 * commands and help; a pass does not include it (pass_ctx.h is its interface).
 */
#ifndef GL_PASS_TABLE_H
#define GL_PASS_TABLE_H

#include "passes/pass_ctx.h"

const gl_pass *gl_pass_find(const char *name);
/* Every pass's name, comma-separated (truncated to len): for messages naming them. */
void gl_pass_names(char *buf, size_t len);
/* The table, for help listings. */
const gl_pass *gl_pass_table(size_t *count);
/* The pass names of `--passes all`, in order. */
const char *const *gl_pass_default_pipeline(size_t *count);

typedef struct gl_pass_step {
    const gl_pass *pass;
    int64_t budget; /* GL_BUDGET_UNLIMITED unless PASS:K */
    /* all:K: `budget` is K, the whole pipeline's, counted over the steps that share it:
     * each runs with what the ones before it left, and none runs once it is spent. */
    bool shared;
} gl_pass_step;

/* Parse a --passes value: "all" (the default pipeline), "all:K" (the default pipeline
 * stopped after its first K rewrites, counted over all its steps: bisect's numbering),
 * "none", or a comma list of NAME or NAME:K (K >= 0), repeats allowed. *steps is
 * malloc'd. GL_ERR_INPUT with a message naming the unknown pass (and the passes there
 * are) or the bad budget. */
gl_status gl_pass_list_parse(const char *spec, gl_pass_step **steps, size_t *n_steps);

#endif

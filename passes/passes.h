/* passes.h — the pass interface, the pass table and the passes' entry points.
 *
 * A pass is data (name, one-line summary, run function) in one table (pipeline.c);
 * `--passes` lists pick from that table by name, with repeats and an optional rewrite
 * budget `PASS:K`. The decision records, snapshots and rewrite stepping of DESIGN.md
 * grow out of gl_pass_ctx.
 */
#ifndef GL_PASSES_H
#define GL_PASSES_H

#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GL_BUDGET_UNLIMITED INT64_MAX

typedef struct gl_pass_ctx {
    gl_model *model;
    int64_t budget;   /* rewrites this pass may still apply (PASS:K) */
    int64_t applied;  /* rewrites applied so far */
} gl_pass_ctx;

/* A pass asks before each rewrite; false means the budget is spent: stop. */
bool gl_pass_may_rewrite(gl_pass_ctx *ctx);
/* Count one applied rewrite against the budget. */
void gl_pass_count_rewrite(gl_pass_ctx *ctx);

typedef struct gl_pass {
    const char *name;    /* "toposort" */
    const char *summary; /* one line for --help and the TUI */
    gl_status (*run)(gl_graph *g, gl_pass_ctx *ctx);
} gl_pass;

const gl_pass *gl_pass_find(const char *name);
/* The table, for help listings. */
const gl_pass *gl_pass_table(size_t *count);

typedef struct gl_pass_step {
    const gl_pass *pass;
    int64_t budget; /* GL_BUDGET_UNLIMITED unless PASS:K */
} gl_pass_step;

/* Parse a --passes value: "all" (the default pipeline), "none", or a comma list of
 * NAME or NAME:K (K >= 0), repeats allowed. *steps is malloc'd. GL_ERR_INPUT with a
 * message naming the unknown pass or bad budget. */
gl_status gl_pass_list_parse(const char *spec, gl_pass_step **steps, size_t *n_steps);

typedef struct gl_pass_result {
    int64_t rewrites;    /* applied rewrites */
    size_t nodes_before; /* live top-level nodes */
    size_t nodes_after;
    double ms;           /* wall time of the pass */
} gl_pass_result;

/* Run one step on m->graph and check the graph is still whole afterwards (a pass that
 * breaks an invariant is a bug: GL_ERR_INTERNAL naming the pass). `res` may be NULL. */
gl_status gl_pass_run_step(gl_model *m, const gl_pass_step *step, gl_pass_result *res);
/* Run the steps in order. */
gl_status gl_pass_list_run(gl_model *m, const gl_pass_step *steps, size_t n_steps);

/* ---- passes ---------------------------------------------------------------------- */

/* Topological sort (Kahn's algorithm, min-heap on the current position so a valid order
 * is kept and ties keep the file's order; implicit uses by subgraphs count as edges;
 * subgraphs are sorted too). *moved (may be NULL) receives how many nodes changed
 * position. On a cycle: GL_ERR_INPUT naming the nodes of one cycle in order; the graph
 * that has the cycle is left unchanged. */
gl_status gl_toposort(gl_graph *g, size_t *moved);
gl_status gl_pass_toposort(gl_graph *g, gl_pass_ctx *ctx);
/* The same check without reordering anything: GL_ERR_INPUT naming one cycle. */
gl_status gl_check_acyclic(const gl_graph *g);

#endif

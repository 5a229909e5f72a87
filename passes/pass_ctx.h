/* pass_ctx.h — what a pass sees: its description (struct gl_pass), its context
 * (gl_pass_ctx) and the calls every rewrite goes through (gl_pass_decide, the budget,
 * vetoes, forcing, options). A pass includes this (through passes.h), never the table of
 * passes (pass_table.h) nor the pipeline that runs them: passes sit below the list of
 * passes. Implemented in pass_ctx.c.
 */
#ifndef GL_PASS_CTX_H
#define GL_PASS_CTX_H

#include "ir/graph.h"
#include "passes/decisions.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GL_BUDGET_UNLIMITED INT64_MAX

typedef struct gl_pass gl_pass;
typedef struct gl_settings gl_settings;

typedef struct gl_pass_ctx {
    gl_model *model;
    const gl_pass *pass;
    int step;                   /* pipeline step (1 = first pass) */
    int64_t budget;             /* rewrites this pass may apply (PASS:K) */
    int64_t applied;            /* rewrites applied so far */
    gl_decision_log *log;       /* where decisions go; NULL: kept in `scratch` only */
    const gl_settings *settings; /* --set values; NULL: defaults */
    gl_decision scratch;        /* the last decision when there is no log */
    /* Vetoes (--set PASS.veto=ID): the rewrites refused so far in this step, as
     * "rule\nreason", so that a pass meeting the same rewrite again (a fixed-point loop)
     * refuses it again instead of applying it under a new id. */
    char **vetoed;
    size_t n_vetoed, cap_vetoed;
    int64_t unheeded;           /* vetoes the pass did not ask gl_pass_vetoed about */
    uint64_t fingerprint;       /* the graph's as the step began (the pipeline's); 0: unknown */
    bool sorted;                /* the pipeline's: an earlier step found the graph (and its
                                 * bodies) in topological order and none changed it since, so
                                 * gl_pass_run does not check it again */
    bool typed;                 /* set by the pass: it ended with a whole type inference of
                                 * the graph, so the pipeline records the step's fingerprint
                                 * as m->types_fingerprint */
} gl_pass_ctx;

/* The protocol of a rewrite (DESIGN.md: check everything before the first edit):
 *
 *     if (!gl_pass_may_rewrite(ctx)) break;             // budget spent: stop
 *     ... check; on refusal: gl_pass_decide(ctx, "rule", GL_REFUSED, "why"); continue;
 *     gl_decision *d = gl_pass_decide(ctx, "rule", GL_APPLIED, "what");  // counts it
 *     gl_decision_add_node_ref(d, node); ... then edit, giving new nodes provenance d->id.
 *
 *     if (gl_pass_vetoed(ctx, d)) continue;            // --set PASS.veto=ID
 *
 * So "apply the first K rewrites" works for every pass without pass code. */
bool gl_pass_may_rewrite(const gl_pass_ctx *ctx);
gl_decision *gl_pass_decide(gl_pass_ctx *ctx, const char *rule, gl_verdict v,
                            const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* After gl_pass_decide(ctx, rule, GL_APPLIED, ...): true when that rewrite is vetoed
 * (`--set PASS.veto=ID`, decisions.h): its record says refused ("vetoed ..."), it costs
 * no budget, and the pass must leave the graph as it is and go on with the next
 * candidate. A pass that applies without asking ends in an error naming the rule (its
 * rewrites cannot be vetoed yet), never in a record that says refused over an edit. */
bool gl_pass_vetoed(gl_pass_ctx *ctx, const gl_decision *d);
/* A refusal. When `forceable` (the rule refuses on a cost or a guard: never on a check
 * of correctness) the record carries forceable=1, and --set PASS.force=ID can override
 * it: when ID is the id it gets and the budget allows one more rewrite, it is recorded as
 * applied ("forced (...): reason"), counts against the budget, and the pass must make
 * the rewrite exactly as if it had been accepted:
 *
 *     d = gl_pass_refuse(ctx, "rule", true, "why not");
 *     if (d->verdict != GL_APPLIED) continue;   // refused: as before
 *     ... the rewrite, provenance d->id ... */
gl_decision *gl_pass_refuse(gl_pass_ctx *ctx, const char *rule, bool forceable,
                            const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A forced refusal's record (d->forced) says what the rewrite did, where the refusal's
 * text says what stays as it is ("Transpose 't' stays above Concat 'c': ..."), so
 * nothing reads as refused over an edit: the reason becomes
 * "forced (--set PASS.force=ID): <fmt>". Nothing when d is not forced. */
void gl_pass_forced_reason(gl_pass_ctx *ctx, gl_decision *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* --set lists a veto or a force for the running pass (PASS.veto=ID, PASS.force=ID):
 * its records, not only its rules, decide what it edits. */
bool gl_pass_overridden(const gl_pass_ctx *ctx);
/* Count one applied rewrite without a record (a pass whose rewrite is not a decision,
 * such as a reordering). */
void gl_pass_count_rewrite(gl_pass_ctx *ctx);
/* Run `fn` on each subgraph of g's If, Loop, Scan and SequenceMap nodes: bodies the node
 * runs, whose outputs are all it reads back (fn recurses deeper itself). Stops at the
 * first failure (pipeline.c). */
gl_status gl_pass_on_bodies(gl_graph *g, gl_pass_ctx *ctx,
                            gl_status (*fn)(gl_graph *, gl_pass_ctx *));
/* An integer option of the running pass ("max-bytes"): the --set value, else the
 * default from the pass's option table. */
int64_t gl_pass_option_value(const gl_pass_ctx *ctx, const char *name);

typedef struct gl_pass_option {
    const char *name; /* "max-bytes": set as --set PASS.max-bytes=V */
    int64_t dflt;     /* -1: none shown (id lists, text) */
    const char *help;
    /* The value is text (a node name: dnnl.fault=NAME), kept as given and read with
     * gl_settings_lookup_text; otherwise a whole number. */
    bool text;
} gl_pass_option;

/* What a pass needs from the graph before it runs, checked by gl_pass_run so no pass
 * checks it by hand. SORTED: the graph and the bodies it runs are in topological order
 * (else GL_ERR_INPUT naming the graph). TYPES: values have their dtypes and shapes; when
 * no shape-inference step ran before it and some value has no dtype, the step's first
 * record is a note saying how many (the pass then refuses, value by value, what needs
 * one). */
typedef enum gl_pass_needs {
    GL_PASS_NEEDS_SORTED = 1u << 0,
    GL_PASS_NEEDS_TYPES = 1u << 1,
} gl_pass_needs;

struct gl_pass {
    const char *name;    /* "transpose-push": --passes and --set use it */
    const char *shown;   /* "tpush": the workbench's bar */
    const char *summary; /* one line for --help and the TUI */
    gl_status (*run)(gl_graph *g, gl_pass_ctx *ctx);
    unsigned needs;      /* gl_pass_needs */
    const gl_pass_option *options; /* may be NULL */
    size_t n_options;
    /* A pass that plans over the graph and edits none of it (the memory plan): what one
     * applied decision of it plans, and several ("output in place", "outputs in place"),
     * so that a step reads "graph unchanged; 13 outputs in place", not "unchanged, 13
     * rewrites". NULL: its applied decisions are rewrites of the graph. */
    const char *plans_one, *plans_many;
};

/* Run ctx->pass on g after checking what it needs (gl_pass_needs): the one way to run a
 * pass, for the pipeline and for tests alike. */
gl_status gl_pass_run(gl_graph *g, gl_pass_ctx *ctx);

#endif

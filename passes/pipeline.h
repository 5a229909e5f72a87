/* pipeline.h — running a list of passes and keeping every step.
 *
 * After each pass the pipeline keeps a snapshot: a clone of the model (tensor bytes
 * shared copy-on-write; a step that changed nothing shares its predecessor's model
 * instead), its fingerprint (so a pass that changed nothing is marked),
 * node count, time, and the range of decisions the pass recorded in the pipeline's log.
 * Step 0 is the loaded model. Any step can be replayed with a smaller rewrite budget to
 * see the graph after its first K rewrites (`+`/`-` in the TUI, bisecting a bad
 * rewrite): decisions keep the same ids in the replay.
 */
#ifndef GL_PIPELINE_H
#define GL_PIPELINE_H

#include "passes/decisions.h"
#include "passes/pass_table.h"
#include "passes/passes.h"

/* --set PASS.OPT=V values. The options of no pass ("load.freeze-inputs" for the loader,
 * "dnnl.fault" for the oneDNN backend: gl_settings_groups) are keyed like a pass's; every
 * other key must name a pass and one of its options. */
typedef struct gl_setting {
    char *pass, *option;
    int64_t value; /* a number option's value (0 for a text option) */
    char *text;    /* a text option's value (gl_pass_option.text), else NULL; owned */
} gl_setting;

struct gl_settings {
    gl_setting *items;
    size_t n, cap;
};

gl_status gl_settings_apply(gl_settings *s, const char *assignment);
int64_t gl_settings_lookup(const gl_settings *s, const char *pass, const char *option,
                           int64_t dflt);
/* A text option's value (the last assignment wins), NULL when not set. */
const char *gl_settings_lookup_text(const gl_settings *s, const char *pass,
                                    const char *option);
/* One setting as the PASS.OPT=V text gl_settings_apply takes back (truncated to len). */
void gl_setting_format(const gl_setting *s, char *buf, size_t len);
void gl_settings_free(gl_settings *s);
/* dst (overwritten, not freed first) becomes a copy of src (NULL: none). */
void gl_settings_copy(gl_settings *dst, const gl_settings *src);

/* Options of no pass, keyed by a name that is not a pass's: "load" (the loader), "dnnl"
 * (the oneDNN backend, test-only faults). */
typedef struct gl_settings_group {
    const char *name;  /* "dnnl": set as --set dnnl.OPT=V */
    const char *title; /* "the oneDNN backend": for help */
    const gl_pass_option *options;
    size_t n_options;
} gl_settings_group;
/* The groups of options of no pass, and the options of every pass (veto, fault), for
 * help listings. */
const gl_settings_group *gl_settings_groups(size_t *count);
const gl_pass_option *gl_settings_common_options(size_t *count);

typedef struct gl_snapshot {
    const gl_pass *pass;    /* NULL for step 0, the loaded model */
    int64_t budget;         /* GL_BUDGET_UNLIMITED unless PASS:K */
    gl_model *model;        /* the model after this step: owned, unless shares_model */
    /* With GL_PIPELINE_KEEP_SNAPSHOTS, a step whose pass changed nothing (same
     * fingerprint, no rewrite, no plan) keeps its predecessor's model instead of a copy:
     * model points at the same object, owned by the first step holding it. Read-only
     * to everyone, as every snapshot is. */
    bool shares_model;
    uint64_t fingerprint;   /* gl_graph_fingerprint of model->graph */
    bool changed;           /* fingerprint differs from the step before */
    /* model->graph and its bodies are in topological order: verified so after the
     * step, or the step changed nothing (same fingerprint: same order and reads) and
     * the order was known or checked as it began. false: not known. */
    bool sorted;
    size_t nodes;           /* live top-level nodes */
    int64_t rewrites;       /* applied rewrites */
    double ms;              /* wall time of the pass */
    size_t first_decision;  /* this step's records: log.items[first .. first + n) */
    size_t n_decisions;
} gl_snapshot;

typedef struct gl_pipeline {
    gl_snapshot *steps;     /* steps[0] is the input */
    size_t n_steps;
    gl_decision_log log;
    gl_settings settings;   /* a copy of what it ran with */
    char *failure;          /* a pass failed: its message (steps stop before it) */
} gl_pipeline;

enum {
    /* Keep every step's model (the workbench, export). Without it only the last step
     * keeps its model (optimize): one clone less per pass. */
    GL_PIPELINE_KEEP_SNAPSHOTS = 1u << 0,
    /* Count each step's decisions without keeping them (gl_decision_log.count_only), when
     * nothing is --set (a veto or a fault reads the records): optimize's table. */
    GL_PIPELINE_COUNT_DECISIONS = 1u << 1,
};

/* Run the plan on `input` (taken: it becomes step 0). A pass that fails ends the run:
 * the steps so far are kept, p->failure says what happened, and the status is
 * returned. *out is always set. */
gl_status gl_pipeline_run(gl_model *input, const gl_pass_step *plan, size_t n_plan,
                          const gl_settings *settings, unsigned flags, gl_pipeline **out);
/* Called after step k is recorded (k = 0 for the input, before the first pass). A
 * failure stops the run and is returned (p->failure stays NULL: it is the caller's). */
typedef gl_status (*gl_step_fn)(void *ctx, gl_pipeline *p, size_t k);
/* gl_pipeline_run, calling on_step (may be NULL) after every step: `export` writes each
 * step as it comes and drops the models it no longer needs. */
gl_status gl_pipeline_run_each(gl_model *input, const gl_pass_step *plan, size_t n_plan,
                               const gl_settings *settings, unsigned flags, gl_step_fn on_step,
                               void *ctx, gl_pipeline **out);
/* Frees the model of step k (never the last step's): for callers done with it. A later
 * step sharing it keeps it (shares_model). Replaying step k + 1 is then impossible. */
void gl_pipeline_drop(gl_pipeline *p, size_t k);
/* The model of the last step (always kept). */
gl_model *gl_pipeline_result(const gl_pipeline *p);
void gl_pipeline_free(gl_pipeline *p);
/* Free the decision records, keeping each step's count of them (n_decisions): for a
 * caller that prints only the counts (optimize without --explain or --json), so that
 * the records (one per output the memory plan places, 97k on a 100k-node graph) are not
 * held while the result is saved (issue 23). Ids and first_decision mean nothing after. */
void gl_pipeline_drop_decisions(gl_pipeline *p);

/* The model after the first `budget` rewrites of step k (k >= 1), computed from step
 * k-1 (which must have kept its model). Its decisions go to *log (ids as in the full
 * run). */
gl_status gl_pipeline_replay(const gl_pipeline *p, size_t k, int64_t budget,
                             gl_model **out, gl_decision_log *log);

/* What step k did, in words: "4 rewrites", "unchanged", "graph unchanged; 13 outputs in
 * place" (a pass that plans, gl_pass.plans_many), "the model as loaded" (step 0). */
void gl_snapshot_change_text(const gl_pipeline *p, size_t k, char *buf, size_t len);
/* "00-input", "03-constant-folding" (budget shown as "-K3" when limited). */
void gl_snapshot_label(const gl_pipeline *p, size_t k, char *buf, size_t len);

/* The nodes (ids in step k's graph) that stand for the loaded node `origin`, i.e. whose
 * provenance lists it: "where did node X go". *ids is malloc'd. */
size_t gl_pipeline_trace(const gl_pipeline *p, size_t k, uint32_t origin, uint32_t **ids);

#endif

/* profile.h — where a model's time goes, node by node, on each backend; and how far each
 * backend's numbers are from the reference kernels'. `graphlab profile` prints it, the
 * workbench's run view will show it; the runs go out as ONNX Runtime's profile while
 * they run (trace.h: a profile keeps no event, its memory does not grow with the reps).
 *
 * Every backend gets a plan (the reference first, whatever the order asked), then
 * `warmup` untimed runs each, then `reps` rounds; a round runs every backend in turn,
 * two runs each — one observed (every plan entry's time and layout-conversion time,
 * summed over its calls in that run) and one not (the wall time of the whole
 * gl_exec_run, free of the observer's own cost). Rounds interleave the backends so that
 * a slow spell of a shared machine (another job, a frequency change) lands on all of
 * them alike instead of on whichever backend ran then. The plans are held together,
 * but only the one whose turn it is keeps its intermediates resident (gl_exec_scratch:
 * released after its turn, faulted in again before the next, outside the timed runs).
 * Last, per backend, one inspection run, untimed, records tensor shapes (for FLOPs,
 * bytes and the trace) and compares every node's outputs with the reference run's, and
 * the graph outputs with the expected ones when given (a data set's output_*.pb), after
 * which its plan goes. Comparing copies tensors, so it never happens in a timed run.
 *
 * Rows are plan entries matched across backends: a node of the model's graph by
 * identity, a node inside a subgraph or function body by its parent row, name and op. A
 * row a backend's plan does not have (the body of a function call another backend runs
 * whole) has an empty cell for it. Times of nodes inside bodies are summed over their
 * calls in a run and shown at their depth; totals count the model's own nodes only (a
 * node's time includes its bodies').
 *
 * A node's outputs are compared when it ran exactly once in both runs (not in a Loop
 * body, say): max abs, max rel and NMSE over its outputs (the worst of each), and
 * whether every output is within |a - b| <= atol + rtol * |b|.
 *
 * Fused groups: a node of the profiled model calling a graphlab.fused function is a
 * group; its row lists the members (the body's node names). A run may be given a model
 * of its own (options.models): the model before fusion, whose nodes are the members
 * under the same names. Its top-level nodes join the profiled model's rows by name and
 * op; a group's member becomes (or joins) a row under the group's row, so the group's
 * cell on that run is empty and its members' cells hold the unfused times, summed into
 * the group's members_ms. Runs on other models are made after those on the profiled
 * model, which give the rows their order.
 */
#ifndef GL_PROFILE_H
#define GL_PROFILE_H

#include "exec/compare.h"
#include "exec/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GL_PROFILE_MAX_BACKENDS 4
/* Timing samples kept at most (plan entries x reps): their medians need them all. */
#define GL_PROFILE_MAX_SAMPLES (1u << 24)
/* Trace events written at most (a Loop may run its body without bound: the file would
 * grow without end); the rest are counted in gl_profile.dropped_events. */
#define GL_PROFILE_MAX_EVENTS (1u << 20)

typedef struct gl_profile_options {
    const char *backends[GL_PROFILE_MAX_BACKENDS]; /* names; none: "ref" and, when built
                                                    * in, "dnnl" */
    size_t n_backends;
    /* Per run, parallel to backends: its name in the profile (NULL: the backend's), and
     * the model it runs (NULL: the profiled one; else not owned, the same graph inputs
     * and outputs, its nodes matched to the profiled model's by name). */
    const char *labels[GL_PROFILE_MAX_BACKENDS];
    const gl_model *models[GL_PROFILE_MAX_BACKENDS];
    int reps;           /* timed rounds per backend, >= 1 */
    int warmup;         /* untimed runs before them, >= 0 */
    int threads;        /* gl_exec_options.threads */
    const char *layout; /* gl_exec_options.layout (NULL: auto) */
    size_t max_memory;  /* gl_exec_options.max_memory (0: the default) */
    double rtol, atol;  /* for the comparisons */
    double steps;       /* for those of quantized values, in steps of their scale
                         * (compare.h's gl_compare_value; 0: exact) */
    /* The graph outputs every run should give (a data set's output_*.pb): one entry per
     * graph output, NULL where there is none; the array itself NULL when none at all. */
    const gl_tensor *const *expected;
    /* The trace (trace.h), written as the runs go: each observed node call's start and
     * duration; NULL: none. `trace_name` names it in messages (a write that fails ends
     * the profile, GL_ERR_IO). */
    FILE *trace;
    const char *trace_name;
    /* gl_exec_options' test-only injections (--set dnnl.fault=NAME, dnnl.delay=NAME) for
     * every oneDNN run; NULL: none */
    const char *dnnl_fault, *dnnl_delay;
    bool dnnl_no_winograd; /* gl_exec_options.dnnl_no_winograd */
    uint64_t load_ns;   /* how long loading the model took, for the trace (0: unknown) */
} gl_profile_options;

typedef struct gl_profile_stat {
    double median, min, max; /* milliseconds */
} gl_profile_stat;

/* Median, min and max of n samples (ns; sorted in place), in ms. n = 0 gives zeros. */
gl_profile_stat gl_profile_stats(double *samples_ns, size_t n);

/* A tensor's type as seen in a run. */
typedef struct gl_profile_type {
    bool present;  /* false: an omitted optional input or output */
    bool constant; /* an initializer that is not an overridable input (a weight) */
    gl_dtype dtype;
    int rank;      /* < 0: not known */
    int64_t *dims; /* owned */
} gl_profile_type;

/* One row on one backend. */
typedef struct gl_profile_cell {
    bool ran;              /* the backend's plan has this row */
    bool top;              /* ... as a node of its model's graph (counted in the totals) */
    size_t entry;          /* its plan entry */
    const char *backend;   /* what ran it: "ref", "dnnl", "body" (static strings) */
    bool fell_back;        /* the backend asked for did not take it (info.note says why) */
    gl_backend_info info;  /* implementation and layouts, as of the last run */
    gl_profile_stat ms;    /* time per run: median, min, max over the rounds */
    double convert_ms;     /* of which converting layouts (median) */
    double pct;            /* ms.median as a share of the backend's node total, in % */
    size_t calls;          /* per run */
    size_t conversions;    /* inputs the executor converted to plain (last run) */
    char over[96];         /* the input output 0 was written over (last run), else "" */
    bool compared;         /* against the reference (non-reference backends) */
    gl_compare cmp;        /* worst over the outputs; cmp.ok: all within tolerance */
    double members_ms;     /* a group's row: the sum of its members' medians on this run
                            * (the unfused run's times of the nodes the group replaced) */
    double members_min_ms, members_max_ms; /* ... and of their mins and maxes */
} gl_profile_cell;

typedef struct gl_profile_row {
    char *name, *op;           /* owned copies (plans free their nodes) */
    int depth;                 /* 0: the model's graph */
    size_t parent;             /* row of the node whose body this is in; SIZE_MAX */
    int64_t flops;             /* 2 x multiply-adds (Conv, ConvTranspose, MatMul, Gemm); -1 */
    int64_t bytes;             /* inputs (weights included) + outputs, each once; -1 */
    char **members;            /* owned: a fused group's members, in its body's order */
    size_t n_members;
    int64_t decision;          /* a fused group: the id of the fusion decision that formed
                                * it (its node's provenance); -1 otherwise */
    gl_profile_type *in, *out; /* owned, n_in / n_out entries: the last call's types */
    size_t n_in, n_out;
    gl_profile_cell *cells;    /* owned, one per backend */
} gl_profile_row;

typedef struct gl_profile_backend {
    const char *name;          /* the run's label: options.labels[i], else the backend's
                                * name (not owned) */
    const char *backend;       /* "ref", "dnnl" (static) */
    bool other_model;          /* ran options.models[i], not the profiled model */
    char summary[400];         /* the plan's header (layout policy), may be "" */
    double create_ms;          /* building the plan */
    gl_profile_stat wall;      /* whole runs, unobserved */
    double node_ms;            /* sum of the medians of the model's own nodes */
    gl_profile_stat nodes;     /* the model's own nodes summed per observed round: the
                                * spread of node_ms */
    double convert_ms;         /* ... of their layout conversions */
    gl_exec_stats stats;       /* of the last timed run */
    bool compared;             /* non-reference backend run beside the reference */
    bool outputs_ok;           /* every graph output within tolerance of the reference */
    gl_compare *outputs;       /* owned, one per graph output (when compared) */
    size_t first_divergence;   /* first row, in execution order, whose outputs are over
                                * tolerance; SIZE_MAX when none */
    bool expected_ok;          /* every expected output within tolerance (true: none given) */
    gl_compare *expected;      /* owned, one per graph output, against options.expected
                                * (valid where gl_profile.has_expected[i]); NULL: none */
} gl_profile_backend;

typedef enum gl_profile_event_kind {
    GL_PROFILE_EV_LOAD,    /* loading the model (options.load_ns) */
    GL_PROFILE_EV_CREATE,  /* building a backend's plan */
    GL_PROFILE_EV_RUN,     /* one observed gl_exec_run, whole */
    GL_PROFILE_EV_EXECUTE, /* its step loop, first node begin to last node end */
    GL_PROFILE_EV_NODE,    /* one call of a node */
} gl_profile_event_kind;

typedef struct gl_profile_event {
    gl_profile_event_kind kind;
    unsigned backend;      /* index into backends */
    size_t row;            /* GL_PROFILE_EV_NODE */
    size_t entry;          /* the plan entry (GL_PROFILE_EV_NODE) */
    uint64_t ts_ns, dur_ns; /* from the start of the profile (loading included) */
} gl_profile_event;

typedef struct gl_profile {
    char *model;               /* owned: the model's path */
    int reps, warmup, threads;
    double rtol, atol;
    gl_profile_backend backends[GL_PROFILE_MAX_BACKENDS];
    size_t n_backends;
    size_t ref;                /* index of the reference backend; SIZE_MAX when absent */
    size_t primary;            /* the run the table sorts by: the last on the profiled
                                * model */
    gl_profile_row *rows;      /* in the order plans list them */
    size_t n_rows;
    char **output_names;       /* owned, the graph's outputs */
    size_t n_outputs;
    bool *has_expected;        /* owned, per output: options.expected gave it; NULL: none */
    size_t n_events;           /* trace events written (options.trace) */
    size_t dropped_events;     /* ... and left out, past GL_PROFILE_MAX_EVENTS */
} gl_profile;

/* Profile `m` (not owned) on `inputs` (graph-input order, as gl_exec_run takes them).
 * GL_ERR_INPUT for bad options (no reps, an unknown or repeated backend, more than
 * GL_PROFILE_MAX_SAMPLES plan entries x reps), else what
 * building a plan or running it returns, with its message. On failure *out is NULL. */
gl_status gl_profile_run(const gl_model *m, const gl_tensor *const *inputs, size_t n_inputs,
                         const gl_profile_options *o, gl_profile **out);
void gl_profile_free(gl_profile *p);

/* The run labelled `label` ("fused", "unfused"); SIZE_MAX: none. */
size_t gl_profile_run_named(const gl_profile *p, const char *label);
/* The runs in the order they are shown (the table's columns, the trace's tracks): as they
 * ran, but unfused just before fused when both ran (fused, on the profiled model, runs
 * before). Returns their count. */
size_t gl_profile_run_order(const gl_profile *p, size_t order[GL_PROFILE_MAX_BACKENDS]);

/* Row r on run bi: its cell's statistics, or a group's on a run that ran its members
 * apart (the unfused run): their medians, mins and maxes summed. ran false: neither. */
gl_profile_stat gl_profile_row_stat(const gl_profile *p, const gl_profile_row *r, size_t bi,
                                    bool *ran);

/* ---- reading the times honestly ----------------------------------------------------------
 *
 * A ratio of two times is a speedup only when the two differ beyond the noise the
 * rounds show. The rule, in `graphlab profile`'s table and the run view alike:
 *   - identical kernels (the same node run by the same implementation, on the same
 *     layouts, in both runs: a node outside every fused group in unfused and fused) are
 *     never a speedup, whatever the clock says: "≈";
 *   - two runs whose min..max ranges over the rounds overlap are within noise: "≈ 1.01x";
 *   - only disjoint ranges give a bare ratio: "1.26x". */
typedef struct gl_profile_ratio {
    bool known;       /* both ran, with a time > 0 */
    double value;     /* before.median / after.median */
    bool same_kernel; /* shown "≈" alone */
    bool approx;      /* the ranges overlap: shown "≈ VALUEx" */
} gl_profile_ratio;

gl_profile_ratio gl_profile_ratio_of(gl_profile_stat before, gl_profile_stat after,
                                     bool same_kernel);
/* "1.26x", "≈ 1.01x", "≈", "-" (utf8 false: "~=" for "≈"). */
void gl_profile_ratio_text(gl_profile_ratio r, bool utf8, char *buf, size_t len);
/* Do cells a and b of row r run the very same kernel (see above)? */
bool gl_profile_same_kernel(const gl_profile_row *r, const gl_profile_cell *a,
                            const gl_profile_cell *b);
/* How much a fused group lost against its members run apart, in ms (fused median minus
 * the members' medians summed), when it lost beyond noise; 0 when it did not. Beyond
 * noise: the group's fastest round is slower than its members' medians summed. Load only
 * adds time, so a fastest round above the typical one is no accident of the machine.
 * (Against the members' slowest rounds, as first written, a busy machine hid every loss:
 * ResNet-50's residual groups at 0.76x were not flagged.) */
double gl_profile_fusion_lost(gl_profile_stat fused, gl_profile_stat members);
/* The same for group row r of p, its fused run `fused` against the run of its members
 * apart `unfused` (SIZE_MAX: none; 0 then, and for a row that is no group). */
double gl_profile_row_lost(const gl_profile *p, const gl_profile_row *r, size_t fused,
                           size_t unfused);

/* One line on the graph outputs against the expected ones, per run: "ref ok, unfused ok,
 * fused MISMATCH max_abs 3.1e+05" (the worst output of a run that is over; "~" for the
 * number when `stable`); "" when nothing expected was given. */
void gl_profile_expected_text(const gl_profile *p, bool stable, char *buf, size_t len);

/* 2 x multiply-adds of node n with these input and output types; -1 for an op not
 * counted or a type not known. */
int64_t gl_profile_flops(const gl_node *n, const gl_profile_type *in, size_t n_in,
                         const gl_profile_type *out, size_t n_out);
/* Bytes a node reads and writes, each tensor once (logical size: layout padding not
 * counted); -1 when a present tensor's type is unknown. */
int64_t gl_profile_bytes(const gl_profile_type *in, size_t n_in, const gl_profile_type *out,
                         size_t n_out);

#endif

/* driver.h — what a command or the workbench does before it shows anything: the options
 * the pipeline commands share, parsed from (name, value) pairs; the model loaded; the
 * --passes list run on it; inputs and an execution plan for a run.
 *
 * `optimize`, `export`, `run`, `profile` (src/cli) and the workbench (ui/) all go through
 * here, so a model is loaded, refused and optimized the same way whoever asks. Nothing
 * here prints: a failure is a gl_fail message for the caller to show (one stderr line,
 * the workbench's status line).
 */
#ifndef GL_DRIVER_H
#define GL_DRIVER_H

#include "exec/compare.h"
#include "exec/exec.h"
#include "exec/inputs.h"
#include "exec/quant.h"
#include "passes/pipeline.h"
#include "util/safe_write.h" /* gl_make_dir */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What `graphlab` returns, from any command or the workbench (DESIGN.md): 0 success;
 * 1 a comparison or a test case failed; 2 bad usage or bad input. */
enum { GL_EXIT_OK = 0, GL_EXIT_MISMATCH = 1, GL_EXIT_BAD = 2 };

/* ---- options -------------------------------------------------------------------------- */

/* The shared options, one bit each: a command takes a subset of them. */
enum {
    GL_SOPT_PASSES = 1u << 0,         /* --passes LIST */
    GL_SOPT_SET = 1u << 1,            /* --set PASS.OPT=V (repeatable) */
    GL_SOPT_DATA = 1u << 2,           /* --data DIR */
    GL_SOPT_RTOL = 1u << 3,           /* --rtol X */
    GL_SOPT_ATOL = 1u << 4,           /* --atol Y */
    GL_SOPT_DIM = 1u << 5,            /* --dim NAME=V (repeatable) */
    GL_SOPT_THREADS = 1u << 6,        /* --threads N */
    GL_SOPT_MAX_MEMORY = 1u << 7,     /* --max-memory BYTES (K, M, G) */
    GL_SOPT_MAX_ITERATIONS = 1u << 8, /* --max-iterations N */
    GL_SOPT_BACKEND = 1u << 9,        /* --backend ref|dnnl|unfused|fused */
    GL_SOPT_STEPS = 1u << 10,         /* --steps N (quantized values' tolerance) */
};
/* What a command that only optimizes takes, and what one that also executes takes. */
#define GL_SOPT_PIPELINE (GL_SOPT_PASSES | GL_SOPT_SET)
#define GL_SOPT_EXECUTE                                                                    \
    (GL_SOPT_PIPELINE | GL_SOPT_DATA | GL_SOPT_RTOL | GL_SOPT_ATOL | GL_SOPT_STEPS |      \
     GL_SOPT_DIM | GL_SOPT_THREADS | GL_SOPT_MAX_MEMORY)

/* --threads takes at most this many, or the number of online CPUs when that is more:
 * OpenMP that cannot make the threads asked for exits the process itself. */
#define GL_THREADS_MAX 256
int64_t gl_threads_max(void);

/* One row of the table of shared options. */
typedef struct gl_session_option {
    const char *name; /* long name without the dashes: "max-memory" */
    unsigned bit;     /* GL_SOPT_* */
    bool has_value;
    const char *arg;  /* the value's name in help: "BYTES" */
    const char *help; /* one line for COMMAND --help and the man page */
} gl_session_option;

/* What the shared options say, and how the caller wants the pipeline run. */
typedef struct gl_session_opts {
    const char *passes;      /* "all", "none" or a list (gl_pass_list_parse) */
    gl_settings settings;    /* --set; "load.freeze-inputs" goes to the loader */
    const char *data;        /* NULL: seeded random inputs */
    const char *backend;     /* --backend: "ref" (default), "dnnl", "unfused" or "fused"
                                (gl_session_backend) */
    double rtol, atol;
    double steps;            /* --steps: a quantized value's tolerance in steps of its
                                scale (exec/compare.h's gl_compare_value) */
    int threads;             /* 0: the backend's default */
    size_t max_memory;       /* 0: the executor's default */
    uint64_t max_iterations; /* 0: the executor's default */
    gl_dim_value *dims;      /* --dim, in order (a GL_GROW array; names owned) */
    size_t n_dims, cap_dims;

    /* Set by the caller, not by options. */
    unsigned pipeline_flags; /* GL_PIPELINE_KEEP_SNAPSHOTS, GL_PIPELINE_COUNT_DECISIONS */
    /* A pipeline even for --passes none (its steps are what optimize, export and the
     * workbench show); without, an empty list leaves the loaded model alone. */
    bool always_pipeline;
    gl_step_fn on_step;      /* gl_pipeline_run_each's callback (may be NULL) */
    void *step_ctx;
    /* "loading PATH", "running N passes" (may be NULL): the workbench's progress line. */
    void (*progress)(void *ctx, const char *what);
    void *progress_ctx;
} gl_session_opts;

/* Defaults: `passes` (run and profile: "none"; optimize, export: "all"), rtol 1e-3,
 * atol 1e-4, steps 1, backend "ref", everything else 0. */
void gl_session_opts_init(gl_session_opts *o, const char *passes);
void gl_session_opts_free(gl_session_opts *o);

const gl_session_option *gl_session_option_table(size_t *count);
/* Option `name` (a row of the table; value NULL for one without a value) into *o. A
 * value that does not parse is GL_ERR_INPUT with a message naming the option and the
 * value ("--rtol 'x' is not a non-negative number"); --passes is checked here, so that
 * a bad list is a usage error before anything is loaded. */
gl_status gl_session_option_set(gl_session_opts *o, const char *name, const char *value);
/* The tolerances of o's comparisons: --rtol, --atol, --steps. */
gl_tolerance gl_session_tolerance(const gl_session_opts *o);

/* A whole decimal number in [lo, hi] (also for a command's own counts: --reps). */
bool gl_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* ---- the model ------------------------------------------------------------------------ */

/* A model loaded and optimized. */
typedef struct gl_session {
    gl_pipeline *pipeline; /* when passes ran (it owns the model), else NULL */
    gl_model *loaded;      /* when none ran, else NULL */
    const gl_model *model; /* the one to show or execute */
} gl_session;

/* Load `path` as every command does: `load.freeze-inputs` from settings (may be NULL),
 * and a cyclic graph refused. */
gl_status gl_session_load(const char *path, const gl_settings *settings, gl_model **out);

/* Load `path` and run o->passes on it. A pass (or o->on_step) that fails returns its
 * status with s->pipeline keeping the steps before it (s->pipeline->failure says why
 * when it was a pass); any other failure leaves *s empty. gl_session_close in every
 * case. */
gl_status gl_session_open(const char *path, const gl_session_opts *o, gl_session *s);
void gl_session_close(gl_session *s);
/* A command's last use of its session, as the process is about to exit: the memory is
 * left to the exit, which takes it back at once, where freeing a 100k-node model node
 * by node costs ~0.1 s (issue 23). Sanitizer builds close it, so that their leak check
 * still sees everything else freed. */
void gl_session_end(gl_session *s);

/* What --backend (or run's --compare) names, as the executor's backend: ref and dnnl run
 * the model as it is; fused and unfused are dnnl on the model as optimized and on the
 * model the same passes make without their fusion steps (*unfused says which). */
const char *gl_session_backend(const char *run, bool *unfused);
/* fused or unfused: a run that needs a fusion step in --passes to mean anything. */
bool gl_session_is_fusion_run(const char *run);

/* Does o->passes run the fusion pass (so that fused and unfused runs differ)? */
bool gl_session_fuses(const gl_session_opts *o);
/* gl_session_open with every fusion step of o->passes left out: the model the fused
 * groups were made from, which `profile` and `run --compare unfused` run as "unfused"
 * (vs_ort.sh's unfused run likewise; `bisect --backend unfused` bisects its steps, kept
 * with o->pipeline_flags). o->on_step is not called. Fusion keeps the names of the nodes it groups
 * (the body of a graphlab.fused function is the members, names kept), so a group's
 * members and its outputs are nodes and values of this model by the same names. */
gl_status gl_session_open_unfused(const char *path, const gl_session_opts *o, gl_session *s);

/* The float model of a quantized one (`run --compare float`, the workbench's float
 * column): a copy of `quantized` with its Q -> DQ pairs on activations found (*pairs)
 * and removed (exec/quant.h's gl_qdq_strip), into s; no passes run on it. A model with
 * no such pair is GL_ERR_INPUT naming it: there is nothing to compare. */
gl_status gl_session_open_float(const gl_model *quantized, gl_session *s, gl_qdq_pairs *pairs);

/* ---- a run ---------------------------------------------------------------------------- */

/* Inputs for a run of `m`: o->data's input_*.pb (and output_*.pb, the expected outputs),
 * else seeded random tensors with o->dims, within o->max_memory. */
gl_status gl_session_inputs(const gl_model *m, const gl_session_opts *o, gl_dataset *d);
/* The executor's options the shared ones give, on `backend`. */
gl_exec_options gl_session_exec_options(const gl_session_opts *o, const char *backend);
/* The same for a plan of m that runs d's inputs: its layout weighed at their batch where
 * m's is symbolic (gl_exec_options.batch; d NULL: not known). */
gl_exec_options gl_session_run_options(const gl_session_opts *o, const char *backend,
                                       const gl_model *m, const gl_dataset *d);
/* A plan for the session's model on `backend` (gl_exec_create), to run once: weights
 * mapped from a file are read in place where oneDNN would pack them for many runs; the
 * options are gl_session_run_options' for d's inputs (NULL: not known). */
gl_status gl_session_plan(const gl_session *s, const gl_session_opts *o, const char *backend,
                          const gl_dataset *d, gl_exec **out);

#endif

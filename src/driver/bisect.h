/* bisect.h — the first rewrite of a pipeline after which the model computes something
 * else than the model it was given.
 *
 * The pipeline's rewrites are numbered in the order they were made: step by step, and
 * within a step in the order of its budget (PASS:K applies the first K). The model after
 * the first i rewrites is step s's snapshot when i ends a step, else step s replayed with
 * a budget from step s-1's snapshot (gl_pipeline_replay), so every probe is a model the
 * pipeline really makes. Each is run on o->backend (ref, dnnl; fused: dnnl on the probe,
 * which is the model as optimized up to rewrite i) with the same inputs as the input model
 * and compared with the input model's outputs on the reference (rtol/atol as `run`): on
 * fused, the first rewrite after which the fused run leaves tolerance. A model that fails
 * to run counts as different. Binary search assumes that once a rewrite breaks the
 * outputs they stay broken: it finds a rewrite i whose model differs while i-1's does
 * not — the first one when that holds. Used by `graphlab bisect` and the workbench.
 */
#ifndef GL_BISECT_H
#define GL_BISECT_H

#include "driver/driver.h"

typedef struct gl_bisect_result {
    bool found;          /* a rewrite changes the outputs */
    int64_t rewrites;    /* all rewrites of the pipeline */
    size_t runs;         /* models run, the input's included */
    /* When found: */
    size_t step;         /* its pipeline step (1 = first pass); 0: the input model itself
                            differs on the backend (no rewrite to blame; k 0) */
    int64_t k;           /* it is that step's k-th rewrite: PASS:k is the first bad model */
    int64_t decision;    /* its record's index in the pipeline's log; -1 when the pass
                            counts rewrites without records (toposort, shape-inference) */
    char *why;           /* what differs: "output 'y': max_abs 0.5, ..." or the run's
                            failure (malloc'd) */
    /* gl_bisect_slower: the largest noise of the timings (median absolute deviation
     * relative to the median, %), and whether one was above the threshold (the status is
     * then an error). */
    double noise_pct;
    bool too_noisy;
} gl_bisect_result;

/* One line of progress ("rewrite 9 of 17 (transpose-push 3/6, step 12): differs"). */
typedef void (*gl_bisect_progress_fn)(void *ctx, const char *line);

/* Bisect the rewrites of steps 1..last_step of pipeline p (last_step past the end: all),
 * which must have kept those steps' models (GL_PIPELINE_KEEP_SNAPSHOTS): inputs,
 * tolerances and limits from o. A failure to make inputs for the input model or to run
 * it is the status (nothing to compare with); *r is then empty. */
gl_status gl_bisect_pipeline(const gl_pipeline *p, size_t last_step, const gl_session_opts *o,
                             gl_bisect_progress_fn progress, void *ctx, gl_bisect_result *r);
/* The same search with another question: is the model after rewrite i slower than the
 * input model by more than pct % on o->backend? Both run on that backend (fused:
 * dnnl) in interleaved rounds after a warm-up, each judged by its median; the noise is the
 * median absolute deviation of either's rounds relative to its median. A timing whose
 * noise exceeds pct gives no answer: GL_ERR_INPUT naming the noise (r->too_noisy). */
gl_status gl_bisect_slower(const gl_pipeline *p, size_t last_step, const gl_session_opts *o,
                           double pct, gl_bisect_progress_fn progress, void *ctx,
                           gl_bisect_result *r);
void gl_bisect_result_free(gl_bisect_result *r);

/* The --passes list that makes the first bad model: the steps before r->step, then
 * "PASS:k" (malloc'd). */
char *gl_bisect_passes(const gl_pipeline *p, const gl_bisect_result *r);

#endif

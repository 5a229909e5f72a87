/* qerror.h — where a quantized model's error comes from (issue 21, point 4): each Q -> DQ
 * pair on an activation (quant.h), its tensor in the quantized run against the same
 * tensor in the float run (the model with its pairs removed, gl_qdq_strip), worst
 * first, and the first pair whose error jumps. `graphlab run Q.onnx --compare float
 * --intermediates` prints it; the workbench's run view shows it as its float column.
 *
 * A pair's tensor in the quantized run is its Q's output dequantized with the pair's
 * scale and zero point (the DQ's output when the run kept no Q output: a fused group's
 * body); in the float run it is the DQ's output, which the float model makes an
 * Identity of the Q's input. So a row measures everything quantization did up to and
 * including that pair: its own rounding and what the pairs before it passed on.
 *
 * Errors add up along the graph, so the pairs near the outputs have the largest NMSE:
 * the table is sorted by it, worst first, but the pair that "loses most" is the one
 * that adds most, the largest NMSE over that of the pairs feeding it (nmse - feed).
 *
 * The jump rule: a pair "jumps" when its NMSE is at least GL_QERROR_JUMP_FLOOR (SNR
 * under 30 dB: an error worth a look) and more than GL_QERROR_JUMP_FACTOR times the
 * largest NMSE of the pairs feeding it (those nearest upstream, quant.h); a pair with no
 * pair feeding it (the model's inputs) is held to the floor alone. The first jump in
 * topological order is where the error comes from; the pairs after it inherit it.
 */
#ifndef GL_QERROR_H
#define GL_QERROR_H

#include "exec/intermediates.h"
#include "exec/quant.h"

#include <stdbool.h>
#include <stdio.h>

#define GL_QERROR_JUMP_FLOOR 1e-3
#define GL_QERROR_JUMP_FACTOR 10.0

typedef struct gl_qerror_row {
    const gl_qdq_pair *pair; /* not owned */
    bool compared;           /* both runs kept the pair's tensor, of one type and shape */
    gl_compare cmp;          /* quantized (dequantized) against float: max_abs, nmse;
                              * max_steps in steps of the pair's scale */
    double snr_db;           /* -10 log10(nmse); INFINITY when nmse is 0 */
    double feed_nmse;        /* the largest NMSE of the compared pairs feeding it (0:
                              * none) */
    double added;            /* nmse - feed_nmse: what this pair adds */
    bool jump;               /* the jump rule holds */
} gl_qerror_row;

typedef struct gl_qerror_report {
    const gl_qdq_pairs *pairs;           /* not owned */
    const gl_inter_rec *quantized, *flt; /* not owned; their labels name the runs */
    gl_qerror_row *rows;                 /* parallel to pairs->items: topological */
    size_t n_rows, compared;
    size_t *worst;                       /* the compared rows, worst first (NMSE, then
                                          * max_steps) */
    size_t first_jump;                   /* a row; SIZE_MAX: none */
    size_t most_lost;                    /* the compared row with the largest `added`;
                                          * SIZE_MAX when nothing was compared */
} gl_qerror_report;

/* Each pair's tensor in `quantized` against `flt`. The report points into all three. */
void gl_qerror_compare(const gl_qdq_pairs *pairs, const gl_inter_rec *quantized,
                       const gl_inter_rec *flt, gl_qerror_report *r);
void gl_qerror_report_free(gl_qerror_report *r);
/* The row that loses most (most_lost), or NULL when nothing was compared. */
const gl_qerror_row *gl_qerror_worst(const gl_qerror_report *r);
/* "'h2' loses most: SNR 9.6 dB" for headers; "" when nothing was compared. */
void gl_qerror_headline(const gl_qerror_report *r, char *buf, size_t len);

/* Rows shown when not all are: the worst ones. */
#define GL_QERROR_SHOW 20

/* The report as text: a summary line, the pair that loses most, the first jump, and the
 * rows worst first (all of them when `all`, else GL_QERROR_SHOW). */
void gl_qerror_print(const gl_qerror_report *r, bool all, FILE *f);

#endif

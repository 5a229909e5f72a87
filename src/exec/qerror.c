/* qerror.c — each Q -> DQ pair's tensor in a quantized run against a float run, worst
 * first, and the first pair whose error jumps (issue 21, point 4). */
#include "exec/qerror.h"

#include "util/escape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The kept tensor with this key, or, inside a call run as its body, the first whose key
 * ends in "::key". */
static const gl_inter_tensor *find_kept(const gl_inter_rec *r, const char *key)
{
    const gl_inter_tensor *t = gl_inter_rec_find(r, key);
    size_t klen = strlen(key);
    for (size_t i = 0; !t && i < gl_inter_rec_count(r); i++) {
        const gl_inter_tensor *c = gl_inter_rec_at(r, i);
        size_t len = strlen(c->key);
        if (len > klen + 2 && strcmp(c->key + len - klen, key) == 0 &&
            memcmp(c->key + len - klen - 2, "::", 2) == 0)
            t = c;
    }
    return t;
}

/* The pair's tensor in the quantized run as real numbers (new), or NULL when the run
 * kept neither its Q's output nor its DQ's. */
static gl_tensor *quantized_real(const gl_qdq_pair *p, const gl_inter_rec *quantized)
{
    const gl_inter_tensor *q = find_kept(quantized, p->q_output);
    if (q) {
        gl_quant info = gl_qdq_pair_quant(p);
        return gl_quant_dequantize(&info, q->t);
    }
    const gl_inter_tensor *dq = find_kept(quantized, p->dq_output);
    return dq ? gl_tensor_share(dq->t) : NULL;
}

static void compare_pair(gl_qerror_row *row, const gl_inter_rec *quantized,
                         const gl_inter_rec *flt)
{
    const gl_qdq_pair *p = row->pair;
    const gl_inter_tensor *f = find_kept(flt, p->dq_output);
    gl_tensor *got = f ? quantized_real(p, quantized) : NULL;
    if (got) {
        gl_quant real = gl_qdq_pair_quant(p);
        real.integer = false;
        gl_compare_in_steps(got, f->t, &real, 1, &row->cmp);
        row->compared = row->cmp.same_shape;
        row->snr_db = row->cmp.nmse > 0 ? -10 * log10(row->cmp.nmse) : INFINITY;
    }
    gl_tensor_free(got);
}

/* NaN (a NaN/Inf mismatch) counts as the worst. */
static double nmse_of(const gl_qerror_row *row)
{
    double v = row->cmp.nan_mismatch ? INFINITY : row->cmp.nmse;
    return isnan(v) ? INFINITY : v;
}

static void apply_jump_rule(gl_qerror_report *r)
{
    for (size_t k = 0; k < r->n_rows; k++) {
        gl_qerror_row *row = &r->rows[k];
        const gl_qdq_pair *p = row->pair;
        for (size_t i = 0; i < p->n_feeders; i++) {
            const gl_qerror_row *feed = &r->rows[p->feeders[i]];
            if (feed->compared && nmse_of(feed) > row->feed_nmse)
                row->feed_nmse = nmse_of(feed);
        }
        double e = nmse_of(row);
        row->added = e - row->feed_nmse;
        if (row->compared && (r->most_lost == SIZE_MAX || row->added > r->rows[r->most_lost].added))
            r->most_lost = k;
        row->jump = row->compared && e >= GL_QERROR_JUMP_FLOOR &&
                    e > GL_QERROR_JUMP_FACTOR * row->feed_nmse;
        if (row->jump && r->first_jump == SIZE_MAX)
            r->first_jump = k;
    }
}

/* A compared row with what ranks it. */
typedef struct ranked {
    size_t row;
    double nmse, steps;
} ranked;

static int worse_first(const void *x, const void *y)
{
    const ranked *p = x, *q = y;
    if (p->nmse != q->nmse)
        return p->nmse < q->nmse ? 1 : -1;
    if (p->steps != q->steps)
        return p->steps < q->steps ? 1 : -1;
    return p->row < q->row ? -1 : p->row > q->row;
}

static void rank_rows(gl_qerror_report *r)
{
    ranked *rk = gl_xmalloc((r->compared ? r->compared : 1) * sizeof(*rk));
    for (size_t i = 0; i < r->compared; i++) {
        const gl_qerror_row *row = &r->rows[r->worst[i]];
        rk[i] = (ranked){r->worst[i], nmse_of(row), row->cmp.max_steps};
    }
    qsort(rk, r->compared, sizeof(*rk), worse_first);
    for (size_t i = 0; i < r->compared; i++)
        r->worst[i] = rk[i].row;
    free(rk);
}

void gl_qerror_compare(const gl_qdq_pairs *pairs, const gl_inter_rec *quantized,
                       const gl_inter_rec *flt, gl_qerror_report *r)
{
    *r = (gl_qerror_report){.pairs = pairs, .quantized = quantized, .flt = flt,
                            .n_rows = pairs->n, .first_jump = SIZE_MAX,
                            .most_lost = SIZE_MAX};
    r->rows = gl_xcalloc(pairs->n ? pairs->n : 1, sizeof(*r->rows));
    r->worst = gl_xcalloc(pairs->n ? pairs->n : 1, sizeof(*r->worst));
    for (size_t k = 0; k < pairs->n; k++) {
        r->rows[k].pair = &pairs->items[k];
        compare_pair(&r->rows[k], quantized, flt);
        if (r->rows[k].compared)
            r->worst[r->compared++] = k;
    }
    apply_jump_rule(r);
    rank_rows(r);
}

void gl_qerror_report_free(gl_qerror_report *r)
{
    free(r->rows);
    free(r->worst);
    *r = (gl_qerror_report){.first_jump = SIZE_MAX, .most_lost = SIZE_MAX};
}

const gl_qerror_row *gl_qerror_worst(const gl_qerror_report *r)
{
    return r->most_lost != SIZE_MAX ? &r->rows[r->most_lost] : NULL;
}

void gl_qerror_headline(const gl_qerror_report *r, char *buf, size_t len)
{
    const gl_qerror_row *w = gl_qerror_worst(r);
    if (!len)
        return;
    buf[0] = '\0';
    if (w)
        snprintf(buf, len, "'%s' loses most: SNR %.1f dB", gl_esc(w->pair->tensor), w->snr_db);
}

/* ---- the text ----------------------------------------------------------------------------- */

/* "'h2' (QuantizeLinear 'quant_h2')" */
static void put_pair(FILE *f, const gl_qdq_pair *p)
{
    fprintf(f, "'%s' (QuantizeLinear '%s')", gl_esc(p->tensor), gl_esc(p->node));
}

static void put_worst(FILE *f, const gl_qerror_report *r)
{
    const gl_qerror_row *w = gl_qerror_worst(r);
    if (!w) {
        fputs("loses most: nothing compared\n", f);
        return;
    }
    fputs("loses most: ", f);
    put_pair(f, w->pair);
    fprintf(f, ": adds nmse %.3g to the %.3g of the pairs feeding it; SNR %.1f dB, nmse %.3g, "
            "max_abs %.3g (%.3g steps of %.3g)\n", w->added, w->feed_nmse, w->snr_db,
            w->cmp.nmse, w->cmp.max_abs, w->cmp.max_steps, gl_tensor_get_f64(w->pair->scale, 0));
}

static void put_jump(FILE *f, const gl_qerror_report *r)
{
    if (r->first_jump == SIZE_MAX) {
        fprintf(f, "first jump: none (no pair with nmse %g or more and over %gx the pairs "
                "feeding it)\n", GL_QERROR_JUMP_FLOOR, GL_QERROR_JUMP_FACTOR);
        return;
    }
    const gl_qerror_row *row = &r->rows[r->first_jump];
    const gl_qdq_pair *p = row->pair;
    fputs("first jump: ", f);
    put_pair(f, p);
    fprintf(f, ": nmse %.3g", row->cmp.nmse);
    if (row->feed_nmse > 0)
        fprintf(f, ", %.3gx the %.3g of the pairs feeding it", row->cmp.nmse / row->feed_nmse,
                row->feed_nmse);
    else
        fputs(p->n_feeders ? ", the pairs feeding it exact" : ", no pair feeds it", f);
    for (size_t i = 0; i < p->n_feeders; i++)
        fprintf(f, "%s'%s'", i ? ", " : " (", gl_esc(r->rows[p->feeders[i]].pair->tensor));
    fputs(p->n_feeders ? ")\n" : "\n", f);
}

static void put_row(FILE *f, const gl_qerror_report *r, size_t rank)
{
    const gl_qerror_row *row = &r->rows[r->worst[rank]];
    char ratio[32] = "-";
    if (row->feed_nmse > 0)
        snprintf(ratio, sizeof(ratio), "%.3g", row->cmp.nmse / row->feed_nmse);
    fprintf(f, "%5zu %c %8.1f %10.3g %10.3g %9.3g %10.3g %10.3g %9s  ", rank + 1,
            row->jump ? '!' : ' ', row->snr_db, row->cmp.nmse, row->added, row->cmp.max_abs,
            row->cmp.max_steps, gl_tensor_get_f64(row->pair->scale, 0), ratio);
    put_pair(f, row->pair);
    fputc('\n', f);
}

void gl_qerror_print(const gl_qerror_report *r, bool all, FILE *f)
{
    const char *q = gl_inter_rec_backend(r->quantized), *fl = gl_inter_rec_backend(r->flt);
    fprintf(f, "quantization error: %s vs %s (the model with its Q/DQ pairs removed, weights "
            "as quantized): %zu Q/DQ pairs on activations, %zu compared\n",
            gl_esc(q), gl_esc(fl), r->n_rows, r->compared);
    if (r->compared < r->n_rows)
        fprintf(f, "not compared: %zu pairs whose tensor a run did not keep\n",
                r->n_rows - r->compared);
    put_worst(f, r);
    put_jump(f, r);
    if (!r->compared)
        return;
    fprintf(f, "%5s %c %8s %10s %10s %10s %9s %10s %9s  %s\n", "#", ' ', "snr_db", "nmse",
            "added", "max_abs", "steps", "scale", "x feed", "tensor (its QuantizeLinear)");
    size_t show = all || r->compared <= GL_QERROR_SHOW ? r->compared : GL_QERROR_SHOW;
    for (size_t k = 0; k < show; k++)
        put_row(f, r, k);
    if (show < r->compared)
        fprintf(f, "  ... %zu more (every row: --all-tensors)\n", r->compared - show);
    fprintf(f, "(worst first; added: nmse less the largest of the pairs feeding it; steps: "
            "max_abs in steps of the pair's scale; x feed: nmse over that largest; !: a jump, "
            "nmse >= %g and over %gx)\n",
            GL_QERROR_JUMP_FLOOR, GL_QERROR_JUMP_FACTOR);
}

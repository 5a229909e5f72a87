/* dn_ops.c — the oneDNN op table: every family's rows (one table per dn_*.c file),
 * gathered so that a node's op finds its row. The backend (backend_dnnl.c) claims nodes
 * by it and the fused units (dn_fused.c, dn_catconv.c) build their heads by it; it lives
 * here, below both, so that nothing in dnnl/ calls back up into the backend. A new family
 * is one line in op_tables. */
#include "exec/dnnl/dn.h"
#include "util/sorted.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const dn_op_table *const op_tables[] = {
    &dn_conv_ops, &dn_matmul_ops, &dn_eltwise_ops, &dn_binary_ops, &dn_pool_ops, &dn_norm_ops,
    &dn_reduce_ops, &dn_nary_ops, &dn_prelu_ops, &dn_deconv_ops, &dn_movement_ops, &dn_resize_ops,
    &dn_qlinear_ops,
    &dn_quant_ops,
    &dn_rnn_ops,
};

/* Every row of op_tables sorted by (op, canonical domain, since), made once: a plan asks
 * for the row of every node (claim and first run), and a walk of all the tables cost a
 * 100k-node plan a third of a second of strcmp (issue 23). */
static const dn_op **sorted_rows;
static size_t n_sorted_rows;
static pthread_once_t sorted_once = PTHREAD_ONCE_INIT;

/* Order of rows, and of a key (op, domain, since) against a row. */
static int compare_key(const char *op, const char *domain, int64_t since, const dn_op *row)
{
    int c = strcmp(op, row->op);
    if (c == 0)
        c = strcmp(domain, gl_domain_canonical(row->domain));
    if (c == 0)
        c = since < row->since ? -1 : since > row->since;
    return c;
}

/* A lookup's key against a row, for gl_sorted_count_at_most. */
typedef struct row_key {
    const char *op, *domain;
    int64_t since;
} row_key;

static int compare_lookup(const void *key, const void *row)
{
    const row_key *k = key;
    return compare_key(k->op, k->domain, k->since, row);
}

static int compare_rows(const void *a, const void *b)
{
    const dn_op *x = *(const dn_op *const *)a, *y = *(const dn_op *const *)b;
    return compare_key(x->op, gl_domain_canonical(x->domain), x->since, y);
}

static void sort_rows(void)
{
    size_t n = 0;
    for (size_t t = 0; t < GL_ARRAY_LEN(op_tables); t++)
        n += op_tables[t]->n;
    sorted_rows = gl_xcalloc(n ? n : 1, sizeof(*sorted_rows));
    for (size_t t = 0; t < GL_ARRAY_LEN(op_tables); t++)
        for (size_t i = 0; i < op_tables[t]->n; i++)
            sorted_rows[n_sorted_rows++] = &op_tables[t]->ops[i];
    qsort(sorted_rows, n_sorted_rows, sizeof(*sorted_rows), compare_rows);
}

/* The row for `op` of `domain` ("" and "ai.onnx" alike) with the largest since <= opset,
 * or NULL. */
const dn_op *dn_op_find(const char *domain, const char *op, int64_t opset)
{
    pthread_once(&sorted_once, sort_rows);
    domain = gl_domain_canonical(domain);
    /* The first row above (op, domain, opset); the one before it is the answer if it is
     * of the same op and domain. */
    row_key key = {op, domain, opset};
    size_t lo = gl_sorted_count_at_most(&key, (const void *const *)sorted_rows, n_sorted_rows,
                                        compare_lookup);
    if (lo == 0)
        return NULL;
    const dn_op *row = sorted_rows[lo - 1];
    return strcmp(row->op, op) == 0 && strcmp(gl_domain_canonical(row->domain), domain) == 0
               ? row
               : NULL;
}

bool dn_op_all_outputs_optional(const dn_op *row)
{
    for (size_t i = 0; i < dn_rnn_ops.n; i++)
        if (row == &dn_rnn_ops.ops[i])
            return true;
    return false;
}

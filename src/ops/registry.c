/* registry.c — all op families in one index: lookup by (domain, op, opset). */
#include "ops/families.h"
#include "util/hash.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gl_op_family *const families[] = {
    &gl_ops_elementwise, &gl_ops_movement, &gl_ops_nn,    &gl_ops_linalg,
    &gl_ops_reduce,      &gl_ops_control, &gl_ops_misc,  &gl_ops_graphlab,
    &gl_ops_graphlab_layout,
};

/* Every entry, sorted by (domain, op, since): the rows of one (domain, op) consecutive,
 * the largest since last; built once. */
static const gl_op_def **sorted;
static const gl_op_def **in_order; /* family order, for listings */
static size_t n_entries;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static int compare_key(const char *da, const char *oa, int sa, const gl_op_def *b)
{
    int c = strcmp(gl_domain_canonical(da), gl_domain_canonical(b->domain));
    if (c == 0)
        c = strcmp(oa, b->op);
    if (c == 0)
        c = (sa > b->since) - (sa < b->since);
    return c;
}

/* What gl_op_lookup looks for (domain canonical). */
typedef struct lookup_key {
    const char *domain, *op;
    int since;
} lookup_key;

/* The rows of one (domain, op), consecutive in `sorted` by since. A lookup hashes its
 * key once and scans these few rows: the binary search over every row it replaces made
 * about forty string compares, and passes look up every node (shape inference, layout,
 * transpose-push, memory-plan: 8% of `optimize` on a 100k-node graph, issue 23). */
typedef struct op_rows {
    const char *domain, *op; /* domain canonical */
    size_t first, count;
} op_rows;

static op_rows *rows_of;       /* one per (domain, op) */
static gl_index_map rows_index; /* (domain, op) -> rows_of entry; read-only once built */

static uint64_t key_hash(const char *domain, const char *op)
{
    uint64_t h = gl_fnv1a(GL_FNV_OFFSET, domain, strlen(domain) + 1); /* the NUL separates */
    return gl_mix64(gl_fnv1a(h, op, strlen(op)));
}

static bool rows_match(const void *key, uint32_t idx)
{
    const lookup_key *k = key;
    return strcmp(rows_of[idx].op, k->op) == 0 && strcmp(rows_of[idx].domain, k->domain) == 0;
}

static int compare_defs(const void *x, const void *y)
{
    const gl_op_def *a = *(const gl_op_def *const *)x;
    return compare_key(a->domain, a->op, a->since, *(const gl_op_def *const *)y);
}

static void build_index(void)
{
    for (size_t f = 0; f < GL_ARRAY_LEN(families); f++)
        n_entries += families[f]->n_ops;
    sorted = gl_xcalloc(n_entries, sizeof(*sorted));
    in_order = gl_xcalloc(n_entries, sizeof(*in_order));
    size_t k = 0;
    for (size_t f = 0; f < GL_ARRAY_LEN(families); f++)
        for (size_t i = 0; i < families[f]->n_ops; i++)
            in_order[k] = sorted[k] = &families[f]->ops[i], k++;
    qsort(sorted, n_entries, sizeof(*sorted), compare_defs);
    rows_of = gl_xcalloc(n_entries, sizeof(*rows_of));
    size_t n_rows = 0;
    for (size_t i = 0; i < n_entries; i++) {
        lookup_key key = {gl_domain_canonical(sorted[i]->domain), sorted[i]->op, 0};
        uint32_t r = gl_index_map_intern(&rows_index, key_hash(key.domain, key.op), rows_match,
                                         &key, (uint32_t)n_rows);
        if (r == n_rows)
            rows_of[n_rows++] = (op_rows){key.domain, key.op, i, 0};
        rows_of[r].count++; /* sorted: the rows of one key are consecutive */
    }
}

const gl_op_def *gl_op_lookup(const char *domain, const char *op, int64_t opset)
{
    pthread_once(&index_once, build_index);
    if (!op)
        return NULL;
    lookup_key key = {gl_domain_canonical(domain), op, opset > 100000 ? 100000 : (int)opset};
    uint32_t r = gl_index_map_find(&rows_index, key_hash(key.domain, op), rows_match, &key);
    if (r == GL_INDEX_NONE)
        return NULL;
    /* The row of the largest since at or below the opset. */
    for (size_t i = rows_of[r].count; i-- > 0;) {
        const gl_op_def *d = sorted[rows_of[r].first + i];
        if (d->since <= key.since)
            return d;
    }
    return NULL;
}

const gl_op_def *gl_op_for_node(const gl_model *m, const gl_node *n)
{
    int64_t opset = gl_model_opset(m, n->domain);
    if (opset == 0 && n->domain[0] == '\0')
        opset = 1; /* a default-domain node in a model that imports no opset */
    return gl_op_lookup(n->domain, n->op_type, opset);
}

const gl_op_def *gl_op_at(size_t i)
{
    pthread_once(&index_once, build_index);
    return i < n_entries ? in_order[i] : NULL;
}

size_t gl_op_count(void)
{
    pthread_once(&index_once, build_index);
    return n_entries;
}

/* "%s: node '%s' (%s)" cut as snprintf cuts it, without the formatter: shape inference
 * asks for it once per node it types, and snprintf was a seventh of inferring the
 * 100k ladder (issue 23). */
void gl_node_where(const gl_model *m, const gl_node *n, char *buf, size_t len)
{
    const char *const parts[] = {m && m->path ? m->path : "<model>", ": node '",
                                 n->name ? n->name : "", "' (",
                                 n->op_type ? n->op_type : "?", ")"};
    if (!len)
        return;
    size_t at = 0;
    for (size_t i = 0; i < GL_ARRAY_LEN(parts) && at < len - 1; i++) {
        size_t k = strlen(parts[i]);
        if (k > len - 1 - at)
            k = len - 1 - at;
        memcpy(buf + at, parts[i], k);
        at += k;
    }
    buf[at] = '\0';
}

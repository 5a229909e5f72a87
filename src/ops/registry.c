/* registry.c — all op families in one index: lookup by (domain, op, opset). */
#include "ops/families.h"
#include "util/sorted.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gl_op_family *const families[] = {
    &gl_ops_elementwise, &gl_ops_movement, &gl_ops_nn,    &gl_ops_linalg,
    &gl_ops_reduce,      &gl_ops_control, &gl_ops_misc,  &gl_ops_graphlab,
    &gl_ops_graphlab_layout,
};

/* Every entry, sorted by (domain, op, since) for binary search; built once. */
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

/* A lookup's key against an entry, for gl_sorted_count_at_most. */
typedef struct lookup_key {
    const char *domain, *op;
    int since;
} lookup_key;

static int compare_lookup(const void *key, const void *row)
{
    const lookup_key *k = key;
    return compare_key(k->domain, k->op, k->since, row);
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
}

const gl_op_def *gl_op_lookup(const char *domain, const char *op, int64_t opset)
{
    pthread_once(&index_once, build_index);
    if (!op)
        return NULL;
    lookup_key key = {domain, op, opset > 100000 ? 100000 : (int)opset};
    /* The last entry <= (domain, op, version). */
    size_t lo = gl_sorted_count_at_most(&key, (const void *const *)sorted, n_entries,
                                        compare_lookup);
    if (lo == 0)
        return NULL;
    const gl_op_def *d = sorted[lo - 1];
    bool same_domain = strcmp(gl_domain_canonical(d->domain), gl_domain_canonical(domain)) == 0;
    return same_domain && strcmp(d->op, op) == 0 ? d : NULL;
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

void gl_node_where(const gl_model *m, const gl_node *n, char *buf, size_t len)
{
    snprintf(buf, len, "%s: node '%s' (%s)", m && m->path ? m->path : "<model>",
             n->name ? n->name : "", n->op_type ? n->op_type : "?");
}

/* arity.c — the arity table (arity.def) and the check of one node against it. */
#include "ops/arity.h"

#include <stdio.h>
#include <string.h>

static const gl_op_arity rows[] = {
#define OP(op, since, in, out) {"", #op, since, in, out},
#define OP_IN(domain, op, since, in, out) {#domain, #op, since, in, out},
#include "ops/arity.def"
#undef OP
#undef OP_IN
};

static int compare_key(const char *domain, const char *op, int64_t since, const gl_op_arity *r)
{
    int c = strcmp(domain, r->domain);
    if (c == 0)
        c = strcmp(op, r->op);
    return c ? c : (since > r->since) - (since < r->since);
}

const gl_op_arity *gl_op_arity_lookup(const char *domain, const char *op, int64_t opset)
{
    if (!op)
        return NULL;
    domain = gl_domain_canonical(domain);
    /* The last row <= (domain, op, opset); arity.def is sorted (tests/test_arity.c). */
    size_t lo = 0, hi = GL_ARRAY_LEN(rows);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (compare_key(domain, op, opset, &rows[mid]) >= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const gl_op_arity *r = &rows[lo - 1];
    return strcmp(r->domain, domain) == 0 && strcmp(r->op, op) == 0 ? r : NULL;
}

size_t gl_op_arity_count(void)
{
    return GL_ARRAY_LEN(rows);
}

const gl_op_arity *gl_op_arity_at(size_t i)
{
    return i < GL_ARRAY_LEN(rows) ? &rows[i] : NULL;
}

void gl_arity_range(const char *params, size_t *min, size_t *max)
{
    size_t n = strlen(params);
    *min = 0;
    *max = n;
    for (size_t i = 0; i < n; i++) {
        if (params[i] == '1')
            *min = i + 1;
        else if (params[i] == '*' || params[i] == '+') {
            *min = i + (params[i] == '+');
            *max = SIZE_MAX;
        }
    }
}

/* The parameter value i stands for: the variadic repeats its character. */
static char param_at(const char *params, size_t i)
{
    size_t n = strlen(params);
    return i < n ? params[i] : n > 0 ? params[n - 1] : '\0';
}

/* One side (inputs or outputs) of the node against its parameter string. */
static bool side_fits(const char *params, gl_value *const *values, size_t count, bool inputs,
                      char *detail, size_t len)
{
    const char *what = inputs ? "input" : "output";
    size_t min, max;
    gl_arity_range(params, &min, &max);
    if (count < min) {
        snprintf(detail, len, "needs at least %zu %s%s, has %zu", min, what,
                 min == 1 ? "" : "s", count);
        return false;
    }
    if (count > max) {
        snprintf(detail, len, "takes at most %zu %s%s, has %zu", max, what,
                 max == 1 ? "" : "s", count);
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        char p = param_at(params, i);
        /* onnx lets a variadic output go unnamed (a result nobody reads), not an input */
        bool may_be_empty = p == '?' || (!inputs && (p == '*' || p == '+'));
        if (!values[i] && !may_be_empty) {
            snprintf(detail, len, "%s %zu is required, but its name is empty", what, i);
            return false;
        }
    }
    return true;
}

bool gl_op_arity_fits(const gl_op_arity *row, const gl_node *n, char *detail, size_t len)
{
    return side_fits(row->in, n->inputs, n->n_inputs, true, detail, len) &&
           side_fits(row->out, n->outputs, n->n_outputs, false, detail, len);
}

/* attrs.c — the attribute table (attrs.def) as an index, and the load-time check of
 * every node against its op's schema: its arity (arity.h) and its attributes. */
#include "ops/attrs.h"
#include "ops/arity.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== the table ======================================================================= */

typedef struct def_row {
    const char *op; /* an OP row; NULL: an attribute of the OP row above */
    int since;
    gl_attr_spec spec;
} def_row;

static const def_row def_rows[] = {
#define OP(op, since) {#op, since, {NULL, GL_ATTR_UNDEFINED}},
#define A(name, type) {NULL, 0, {#name, GL_ATTR_##type}},
#include "ops/attrs.def"
#undef OP
#undef A
};

static gl_op_attrs *table;         /* attrs.def order */
static const gl_op_attrs **sorted; /* by (op, since), for lookup */
static gl_attr_spec *specs;        /* every row's attributes, one after another */
static size_t n_table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static int compare_rows(const void *x, const void *y)
{
    const gl_op_attrs *a = *(const gl_op_attrs *const *)x, *b = *(const gl_op_attrs *const *)y;
    int c = strcmp(a->op, b->op);
    return c ? c : (a->since > b->since) - (a->since < b->since);
}

static void build_table(void)
{
    size_t n_specs = 0;
    for (size_t i = 0; i < GL_ARRAY_LEN(def_rows); i++) {
        if (def_rows[i].op)
            n_table++;
        else
            n_specs++;
    }
    table = gl_xcalloc(n_table, sizeof(*table));
    sorted = gl_xcalloc(n_table, sizeof(*sorted));
    specs = gl_xcalloc(n_specs, sizeof(*specs));
    size_t t = 0, s = 0;
    for (size_t i = 0; i < GL_ARRAY_LEN(def_rows); i++) {
        const def_row *r = &def_rows[i];
        if (r->op) {
            table[t] = (gl_op_attrs){r->op, r->since, specs + s, 0};
            sorted[t] = &table[t];
            t++;
        } else if (t > 0) {
            specs[s++] = r->spec;
            table[t - 1].n_attrs++;
        }
    }
    qsort(sorted, n_table, sizeof(*sorted), compare_rows);
}

const gl_op_attrs *gl_op_attrs_lookup(const char *domain, const char *op, int64_t opset)
{
    pthread_once(&table_once, build_table);
    if (!op || *gl_domain_canonical(domain))
        return NULL;
    /* The last row <= (op, opset). */
    size_t lo = 0, hi = n_table;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(op, sorted[mid]->op);
        if (c > 0 || (c == 0 && opset >= sorted[mid]->since))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && strcmp(sorted[lo - 1]->op, op) == 0 ? sorted[lo - 1] : NULL;
}

gl_attr_type gl_op_attr_type(const gl_op_attrs *row, const char *name)
{
    for (size_t i = 0; row && name && i < row->n_attrs; i++)
        if (strcmp(row->attrs[i].name, name) == 0)
            return row->attrs[i].type;
    return GL_ATTR_UNDEFINED;
}

size_t gl_op_attrs_count(void)
{
    pthread_once(&table_once, build_table);
    return n_table;
}

const gl_op_attrs *gl_op_attrs_at(size_t i)
{
    pthread_once(&table_once, build_table);
    return i < n_table ? &table[i] : NULL;
}

/* ==== what function bodies read of their callers' attributes ============================ */

/* Calls nested deeper than the executor plans (exec.c) never run: their attribute types
 * are not followed further. */
#define MAX_CALL_DEPTH 64

/* A body attribute that takes the caller's attribute `ref`. */
typedef struct ref_use {
    const char *ref;
    const gl_node *node;
    const gl_attr *attr;
} ref_use;

enum { NEED_UNSEEN, NEED_VISITING, NEED_DONE };

/* What the body needs of one attribute parameter: the types its readers want (one bit
 * per gl_attr_type) and, for each, one reader to name in messages. */
typedef struct param_need {
    const char *name;
    size_t first, end; /* its uses: refs[first, end) of the function */
    int state;
    unsigned types;
    const gl_node *reader[GL_ATTR_TYPE_PROTOS + 1];
    const char *reader_attr[GL_ATTR_TYPE_PROTOS + 1];
    const gl_function *reader_fn[GL_ATTR_TYPE_PROTOS + 1];
} param_need;

typedef struct fn_needs {
    ref_use *refs; /* sorted by ref */
    size_t n_refs, cap_refs;
    param_need *params; /* sorted by name */
    size_t n_params;
} fn_needs;

typedef struct checker {
    const gl_model *m;
    fn_needs *fns;                /* one per m->functions[i] */
    const gl_function **by_name;  /* those with a body, sorted by (domain, name, index) */
    size_t n_by_name;
} checker;

static int compare_call(const char *domain, const char *name, const gl_function *f)
{
    int c = strcmp(gl_domain_canonical(domain), f->domain);
    return c ? c : strcmp(name, f->name ? f->name : "");
}

static int compare_functions(const void *x, const void *y)
{
    const gl_function *a = *(const gl_function *const *)x, *b = *(const gl_function *const *)y;
    int c = compare_call(a->domain, a->name ? a->name : "", b);
    return c ? c : (a > b) - (a < b);
}

/* The model-local function node `n` calls (the first of that domain and name, as the
 * executor picks it), by binary search: a model may hold many functions and nodes. */
static const gl_function *callee_of(const checker *c, const gl_node *n)
{
    size_t lo = 0, hi = c->n_by_name;
    while (n->op_type && lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (compare_call(n->domain, n->op_type, c->by_name[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return n->op_type && lo < c->n_by_name &&
                   compare_call(n->domain, n->op_type, c->by_name[lo]) == 0
               ? c->by_name[lo]
               : NULL;
}

static void collect_refs(fn_needs *fn, const gl_graph *g)
{
    const gl_node *n;
    gl_foreach_node(g, i, n) {
        for (size_t k = 0; k < n->n_attrs; k++) {
            const gl_attr *a = &n->attrs[k];
            if (a->ref_attr_name) {
                GL_GROW(fn->refs, fn->cap_refs, fn->n_refs + 1);
                fn->refs[fn->n_refs++] = (ref_use){a->ref_attr_name, n, a};
            }
            if (a->type == GL_ATTR_GRAPH && a->g)
                collect_refs(fn, a->g);
            for (size_t s = 0; a->type == GL_ATTR_GRAPHS && a->graphs && s < a->n; s++)
                collect_refs(fn, a->graphs[s]);
        }
    }
}

static int compare_refs(const void *x, const void *y)
{
    return strcmp(((const ref_use *)x)->ref, ((const ref_use *)y)->ref);
}

static void index_function(fn_needs *fn, const gl_function *f)
{
    collect_refs(fn, f->body);
    if (fn->n_refs == 0)
        return;
    qsort(fn->refs, fn->n_refs, sizeof(*fn->refs), compare_refs);
    fn->params = gl_xcalloc(fn->n_refs, sizeof(*fn->params));
    for (size_t i = 0; i < fn->n_refs; i++) {
        if (i == 0 || strcmp(fn->refs[i].ref, fn->refs[i - 1].ref) != 0)
            fn->params[fn->n_params++] = (param_need){.name = fn->refs[i].ref, .first = i};
        fn->params[fn->n_params - 1].end = i + 1;
    }
}

static param_need *find_param(const fn_needs *fn, const char *name)
{
    size_t lo = 0, hi = fn->n_params;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(name, fn->params[mid].name);
        if (c == 0)
            return &fn->params[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static void need_type(param_need *p, gl_attr_type t, const gl_node *reader, const char *attr,
                      const gl_function *f)
{
    if (t == GL_ATTR_UNDEFINED || (p->types & 1u << t))
        return;
    p->types |= 1u << t;
    p->reader[t] = reader;
    p->reader_attr[t] = attr;
    p->reader_fn[t] = f;
}

static fn_needs *needs_of(const checker *c, const gl_function *f)
{
    return &c->fns[f - c->m->functions];
}

/* Fill p (a parameter of f) with what every reader wants: an op's reader its schema's
 * type, a call of another function what that function needs of the attribute. */
static void resolve(const checker *c, const gl_function *f, param_need *p, int depth)
{
    if (p->state != NEED_UNSEEN)
        return; /* done, or a recursive call: the rest of the cycle answers */
    p->state = NEED_VISITING;
    const fn_needs *fn = needs_of(c, f);
    for (size_t i = p->first; i < p->end; i++) {
        const ref_use *u = &fn->refs[i];
        const gl_function *callee = callee_of(c, u->node);
        if (!callee) {
            int64_t opset = gl_scope_opset(c->m, f, u->node->domain);
            const gl_op_attrs *row = gl_op_attrs_lookup(u->node->domain, u->node->op_type, opset);
            need_type(p, gl_op_attr_type(row, u->attr->name), u->node, u->attr->name, f);
            continue;
        }
        param_need *q = depth < MAX_CALL_DEPTH ? find_param(needs_of(c, callee), u->attr->name)
                                               : NULL;
        if (!q)
            continue;
        resolve(c, callee, q, depth + 1);
        for (int t = 0; t <= GL_ATTR_TYPE_PROTOS; t++)
            if (q->types & 1u << t)
                need_type(p, (gl_attr_type)t, q->reader[t], q->reader_attr[t], q->reader_fn[t]);
    }
    p->state = NEED_DONE;
}

/* ==== the check ======================================================================= */

/* Where a graph is, for messages: "" for the main graph, else " in subgraph 'b' of node
 * 'loop'" or " in function 'f'" (nested ones chained). */
typedef struct scope {
    const gl_function *fn; /* the function whose body this is in, or NULL */
    char where[1024];
} scope;

static gl_status node_fail(const checker *c, const scope *sc, const gl_node *n,
                           const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static gl_status node_fail(const checker *c, const scope *sc, const gl_node *n,
                           const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    return gl_fail(GL_ERR_INPUT, "%s: node '%s' (%s)%s: %s",
                   c->m->path ? c->m->path : "<model>", n->name ? n->name : "",
                   n->op_type ? n->op_type : "?", sc->where, detail);
}

static gl_status check_call(const checker *c, const scope *sc, const gl_node *n,
                            const gl_function *f)
{
    const fn_needs *fn = needs_of(c, f);
    for (size_t i = 0; i < n->n_attrs; i++) {
        const gl_attr *a = &n->attrs[i];
        param_need *p = a->ref_attr_name ? NULL : find_param(fn, a->name);
        if (!p)
            continue; /* passed on by reference (its caller is checked), or never read */
        resolve(c, f, p, 0);
        for (int t = 0; t <= GL_ATTR_TYPE_PROTOS; t++) {
            if (!(p->types & 1u << t) || t == (int)a->type)
                continue;
            const gl_node *r = p->reader[t];
            return node_fail(c, sc, n,
                             "attribute '%s' is %s, expected %s: function '%s' passes it to "
                             "attribute '%s' of node '%s' (%s)",
                             a->name, gl_attr_type_name(a->type),
                             gl_attr_type_name((gl_attr_type)t), p->reader_fn[t]->name,
                             p->reader_attr[t], r->name ? r->name : "",
                             r->op_type ? r->op_type : "?");
        }
    }
    return GL_OK;
}

static gl_status check_graph(const checker *c, const gl_graph *g, const scope *sc);

static gl_status check_subgraphs(const checker *c, const gl_node *n, const scope *sc)
{
    for (size_t k = 0; k < n->n_attrs; k++) {
        const gl_attr *a = &n->attrs[k];
        size_t count = a->type == GL_ATTR_GRAPH ? (a->g != NULL)
                       : a->type == GL_ATTR_GRAPHS && a->graphs ? a->n : 0;
        for (size_t s = 0; s < count; s++) {
            const gl_graph *sub = a->type == GL_ATTR_GRAPH ? a->g : a->graphs[s];
            scope inner = {.fn = sc->fn};
            /* deep nesting keeps the innermost places (the message is for people) */
            snprintf(inner.where, sizeof(inner.where),
                     " in subgraph '%.150s' of node '%.150s'%.600s", sub->name ? sub->name : "",
                     n->name ? n->name : "", sc->where);
            gl_status st = check_graph(c, sub, &inner);
            if (st != GL_OK)
                return st;
        }
    }
    return GL_OK;
}

static gl_status check_node(const checker *c, const scope *sc, const gl_node *n)
{
    for (size_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].ref_attr_name && !sc->fn)
            return node_fail(c, sc, n,
                             "attribute '%s' refers to the caller's attribute '%s' outside "
                             "a function body",
                             n->attrs[i].name, n->attrs[i].ref_attr_name);
    /* before the call: the executor runs a registered op's kernel even where a function
     * of the same name exists */
    int64_t opset = gl_scope_opset(c->m, sc->fn, n->domain);
    const gl_op_arity *arity = gl_op_arity_lookup(n->domain, n->op_type, opset);
    char detail[128];
    if (arity && !gl_op_arity_fits(arity, n, detail, sizeof(detail)))
        return node_fail(c, sc, n, "%s", detail);
    const gl_function *callee = callee_of(c, n);
    if (callee)
        return check_call(c, sc, n, callee);
    const gl_op_attrs *row = gl_op_attrs_lookup(n->domain, n->op_type, opset);
    for (size_t i = 0; row && i < n->n_attrs; i++) {
        const gl_attr *a = &n->attrs[i];
        gl_attr_type want = gl_op_attr_type(row, a->name);
        if (want == GL_ATTR_UNDEFINED)
            return node_fail(c, sc, n,
                             "attribute '%s' is not an attribute of %s-%d (the version for "
                             "opset %lld)",
                             a->name, row->op, row->since, (long long)opset);
        if (a->ref_attr_name && a->type == GL_ATTR_UNDEFINED)
            continue; /* the caller's value is checked at the call */
        if (a->type != want)
            return node_fail(c, sc, n, "attribute '%s'%s%s%s is %s, expected %s", a->name,
                             a->ref_attr_name ? " (the caller's '" : "",
                             a->ref_attr_name ? a->ref_attr_name : "",
                             a->ref_attr_name ? "')" : "", gl_attr_type_name(a->type),
                             gl_attr_type_name(want));
    }
    return GL_OK;
}

static gl_status check_graph(const checker *c, const gl_graph *g, const scope *sc)
{
    const gl_node *n;
    gl_foreach_node(g, i, n) {
        gl_status st = check_node(c, sc, n);
        if (st == GL_OK)
            st = check_subgraphs(c, n, sc);
        if (st != GL_OK)
            return st;
    }
    return GL_OK;
}

gl_status gl_model_check_schema(const gl_model *m)
{
    checker c = {.m = m,
                 .fns = gl_xcalloc(m->n_functions, sizeof(fn_needs)),
                 .by_name = gl_xcalloc(m->n_functions, sizeof(gl_function *))};
    for (size_t i = 0; i < m->n_functions; i++) {
        if (!m->functions[i].body)
            continue;
        index_function(&c.fns[i], &m->functions[i]);
        c.by_name[c.n_by_name++] = &m->functions[i];
    }
    qsort(c.by_name, c.n_by_name, sizeof(*c.by_name), compare_functions);
    scope main_scope = {.fn = NULL, .where = ""};
    gl_status st = m->graph ? check_graph(&c, m->graph, &main_scope) : GL_OK;
    for (size_t i = 0; i < m->n_functions && st == GL_OK; i++) {
        const gl_function *f = &m->functions[i];
        scope body = {.fn = f};
        snprintf(body.where, sizeof(body.where), " in function '%s'", f->name ? f->name : "");
        if (f->body)
            st = check_graph(&c, f->body, &body);
    }
    for (size_t i = 0; i < m->n_functions; i++) {
        free(c.fns[i].refs);
        free(c.fns[i].params);
    }
    free(c.fns);
    free(c.by_name);
    return st;
}
